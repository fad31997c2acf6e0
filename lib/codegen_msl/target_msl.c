/* target_msl.c - the msl target's descriptor (target.h): named, with no ops yet.
 *
 * Legalize refuses every model for it with one line naming the nodes
 * ("this target supports no ops yet"); emit is never reached then, and
 * refuses too for a model with no nodes left to run.
 */
#include "../target.h"

static void msl_emit(const RlxEmitJob *job) {
    rlx_error("%s: target 'msl' has no code generator yet", job->g->file);
}

const RlxTarget rlx_target_msl = {
    .name = "msl",
    .doc = "Metal Shading Language kernels, an Objective-C host (not yet)",
    .align = 256,
    .support = NULL,
    .nsupport = 0,
    .emit = msl_emit,
};
