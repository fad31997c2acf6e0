/* msl_run.h - what the MSL shim's two halves share: the kernels of one
 * .metal file compiled over the shim (msl_kernels.h makes the table) and the
 * stand-in host (host.cc) that runs an rlx_gpu_schedule with them. C and
 * C++. A test tool. */
#ifndef RLX_MSL_RUN_H
#define RLX_MSL_RUN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel's arguments, as the Metal host binds them: buffer 0 the
 * arena, buffer 1 the weights, buffer 2 the dispatch's 32 words of operand
 * offsets. */
typedef struct {
    unsigned char *arena;
    const unsigned char *weights;
    const uint32_t *push;
} msl_shim_args;

/* A kernel of the library: its name and the executor body that runs one
 * thread of it (gpu_fiber::Body, with an msl_shim_args * as the argument).
 * The fingerprint kernel takes no arguments; its body does nothing. */
typedef struct {
    const char *name;
    void (*body)(void *args);
} msl_shim_kernel;

extern const msl_shim_kernel msl_shim_kernels[];   /* ends with {NULL, NULL} */

#ifdef __cplusplus
}
#endif
#endif
