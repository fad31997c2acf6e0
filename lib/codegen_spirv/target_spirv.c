/* target_spirv.c - the spirv target's descriptor (target.h): named, with no ops yet.
 *
 * Legalize refuses every model for it with one line naming the nodes
 * ("this target supports no ops yet"); emit is never reached then, and
 * refuses too for a model with no nodes left to run.
 */
#include "../target.h"

static void spirv_emit(const RlxEmitJob *job) {
    rlx_error("%s: target 'spirv' has no code generator yet", job->g->file);
}

const RlxTarget rlx_target_spirv = {
    .name = "spirv",
    .doc = "GLSL compute kernels compiled to SPIR-V, a Vulkan host (not yet)",
    .align = 256,
    .support = NULL,
    .nsupport = 0,
    .emit = spirv_emit,
};
