/* pipeline.c - the pass pipeline, from a read model to the thunk list.
 *
 * One straight line (the target's descriptor, constants, schedule, infer,
 * legalize and --keep-f32, dce, fusion, precision, the target's prepare,
 * memory schedule, plan, lower, the target's select) that the driver (cmd/rlxc) and the pipeline
 * fuzz target (tests/fuzz/fuzz_pipeline.c) both run, so the fuzzer sees
 * exactly the passes a user's model goes through. After each stage the
 * caller's hook, if any, is told the stage's name and its dump letter (-d)
 * and gets the graph (and the plan, once there is one): the driver times
 * passes and dumps the IR there. Errors longjmp to the caller's rlx_try
 * like every pass's.
 */
#include <string.h>

#include "rlx.h"
#include "target.h"

static void stage_done(const RlxPipeline *p, const char *stage, char letter, RlxGraph *g, const RlxPlan *plan) {
    if (p->after) p->after(p->hook, stage, letter, g, plan);
}

void rlx_compile_graph(RlxGraph *g, const RlxPipeline *p, RlxCompiled *out) {
    const RlxTarget *tg = rlx_target_find(g->file, p->target);
    rlx_constants_to_weights(g);
    rlx_schedule(g);
    rlx_infer(g);
    stage_done(p, "infer", 'i', g, NULL);
    rlx_legalize_for(g, tg);
    for (int i = 0; i < p->nkeep; i++) rlx_keep_f32(g, p->keep[i]);
    stage_done(p, "legalize", 'l', g, NULL);
    rlx_dce(g);
    rlx_schedule(g);
    stage_done(p, "dce", 'd', g, NULL);
    if (!p->no_opt) {
        rlx_fuse_patterns(g);
        rlx_schedule(g);
        rlx_fuse_epilogues(g);
        rlx_fuse_elementwise(g);
        rlx_schedule(g);
    }
    stage_done(p, "fuse", 'f', g, NULL);
    rlx_assign_precision(g, tg, p->precision, p->weights);
    stage_done(p, "precision", 0, g, NULL);
    RlxOptions popt = {!p->no_winograd, p->blas};
    if (!p->no_opt && tg->prepare) tg->prepare(g, &popt);
    stage_done(p, "prepare", 0, g, NULL);
    rlx_schedule_memory(g);
    stage_done(p, "schedule", 0, g, NULL);
    RlxPlan *plan = rlx_plan_ex(g, (tg->features & RLX_TF_CONCAT_IN_PLACE) != 0);
    stage_done(p, "plan", 0, g, plan);
    if (p->arena_limit >= 0) rlx_check_arena_limit(g, plan, p->arena_limit);
    RlxThunkList *tl = rlx_lower(g, plan, tg);
    out->selected = tg->select ? tg->select(g, plan, tl) : NULL;
    stage_done(p, "lower", 0, g, plan);
    out->target = tg;
    out->plan = plan;
    out->thunks = tl;
}
