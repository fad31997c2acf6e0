/* target_cuda.c - the cuda target's descriptor (target.h): named, with no ops yet.
 *
 * Legalize refuses every model for it with one line naming the nodes
 * ("this target supports no ops yet"); emit is never reached then, and
 * refuses too for a model with no nodes left to run.
 */
#include "../target.h"

static void cuda_emit(const RlxEmitJob *job) {
    rlx_error("%s: target 'cuda' has no code generator yet", job->g->file);
}

const RlxTarget rlx_target_cuda = {
    .name = "cuda",
    .doc = "CUDA kernels compiled by NVRTC, a driver-API host (not yet)",
    .align = 256,
    .support = NULL,
    .nsupport = 0,
    .emit = cuda_emit,
};
