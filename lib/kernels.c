/* kernels.c - the kernel table: names, parameter layouts and entry points of
 * the kernel library (runtime_min/rk_kernels.def), for lowering (which fills
 * parameters by name), the C printer (which prints them as designated
 * initializers) and constant folding (which calls the kernels directly).
 *
 * The fields string lists every 8-byte slot of rk_<name>_params in order:
 * "i:n " for an int64_t, "f:eps " for a double, "a:dims " for an array of
 * RK_MAX_RANK int64_t.
 */
#include "rlx.h"

#define I(x) "i:" #x " "
#define F(x) "f:" #x " "
#define A(x) "a:" #x " "
const RlxKernelInfo rlx_kernels[RLX_NKERNELS] = {
#define K(name, fields, doc) {#name, fields, doc, rk_##name},
#include "../runtime_min/rk_kernels.def"
#undef K
};
#undef I
#undef F
#undef A

const RlxKernelImplInfo rlx_kernel_impls[RLX_NKIMPLS] = {
    {RLX_NKERNELS, NULL, NULL, NULL},
#define K(name, fields, doc)
#define KI(name, impl, doc) {RLX_K_##name, #impl, doc, rk_##name##_##impl},
#include "../runtime_min/rk_kernels.def"
#undef KI
#undef K
};
