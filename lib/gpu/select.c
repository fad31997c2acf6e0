/* select.c - the GPU targets' select: the neutral thunk list as kernels
 * and dispatches.
 *
 * Each thunk becomes its launches (launch.c: one, or a few dispatched in
 * order, such as a reduction and the pass that reads its result), each
 * rendered in the program's language (render.c) with the placeholder name
 * KNAME, so that launches that differ only in their operands' offsets
 * render to the same text and share one kernel (named k<index>_<template>
 * once it is new). A dispatch records the kernel, the grid and the push
 * constants: each operand's offset in elements of the type the kernel sees
 * it as.
 *
 * Barriers: a dispatch gets one before it where it reads bytes that a
 * dispatch since the last barrier wrote, or writes bytes that one of them
 * read or wrote (operands cover their values' whole byte ranges, so this
 * is conservative for pieces of one tensor). The run's status word (a
 * u32 after the arena: a Gather index out of range sets it to RLX_E_RANGE)
 * is left out: every writer stores the same value.
 */
#include <string.h>

#include "gpu.h"
#include "../../runtime_min/rlx_gpu.h"

typedef struct {
    int space;
    int64_t lo, hi;
    int write;
} Range;

static int overlaps(const Range *a, const Range *b) { return a->space == b->space && a->lo < b->hi && b->lo < a->hi; }

static int64_t slot_bytes(const RlxGraph *g, RlxSlot s) { return rlx_value_bytes(&g->v[s.value]); }

/* the offset of the run's status word in the arena (rlx_gpu.h) */
static int64_t status_offset(const RlxPlan *plan) { return rlx_align64(plan->arena_bytes); }

static int add_kernel(RlxGpuProgram *p, const RlxGraph *g, const RlxGpuLaunch *l, const char *text) {
    for (int k = 0; k < p->nk; k++)
        if (!strcmp(p->k[k].source, text)) return k;
    if (p->nk == p->capk) {
        int cap = p->capk ? 2 * p->capk : 16;
        p->k = rlx_realloc(p->k, sizeof(RlxGpuKernel) * (size_t)p->capk, sizeof(RlxGpuKernel) * (size_t)cap);
        p->capk = cap;
    }
    RlxGpuKernel *k = &p->k[p->nk];
    k->name = rlx_fmt("k%d_%s", p->nk, l->tmpl ? l->tmpl : "eltwise");
    k->source = text;   /* the key; the named source replaces it below */
    memcpy(k->local, l->local, sizeof k->local);
    k->shared_bytes = l->shared_bytes;
    k->trips = l->trips;
    (void)g;
    return p->nk++;
}

RlxGpuProgram *rlx_gpu_select(const RlxGraph *g, const RlxPlan *plan, const RlxThunkList *tl, RlxLang lang,
                              const RlxTargetLimits *lim) {
    return rlx_gpu_select_with(g, plan, tl, lang, lim, NULL);
}

RlxGpuProgram *rlx_gpu_select_with(const RlxGraph *g, const RlxPlan *plan, const RlxThunkList *tl, RlxLang lang,
                                   const RlxTargetLimits *lim, const RlxGpuOptions *opt) {
    RlxGpuProgram *p = rlx_alloc(sizeof *p);
    p->lang = lang;
    const char **named = NULL;   /* per kernel: its source with its own name */
    int capnamed = 0;
    Range *live = rlx_alloc(sizeof(Range) * 64);
    int nlive = 0, caplive = 64;
    for (int i = 0; i < tl->n; i++) {
        const RlxThunk *t = &tl->t[i];
        RlxGpuLaunch ls[RLX_GPU_MAX_LAUNCHES];
        int nl = rlx_gpu_launches_with(g, t, lim, opt, ls);
        if (!nl)
            rlx_node_error(g, t->node, "no GPU kernel for the '%s' computation (internal: the target's legalize column "
                           "allows it)", t->kind == RLX_K_ELTWISE ? "elementwise" : rlx_kernels[t->kind].name);
        for (int li = 0; li < nl; li++) {
            const RlxGpuLaunch l = ls[li];
            uint32_t needs;
            const char *key = rlx_gpu_render(g, &l, lang, "KNAME_", &needs);
            int before = p->nk;
            int k = add_kernel(p, g, &l, key);
            if (p->nk > before) {
                if (p->nk > capnamed) {
                    int cap = capnamed ? 2 * capnamed : 16;
                    named = rlx_realloc(named, sizeof(char *) * (size_t)capnamed, sizeof(char *) * (size_t)cap);
                    capnamed = cap;
                }
                size_t at;
                named[k] = rlx_gpu_render_split(g, &l, lang, p->k[k].name, &needs, &at);
                p->k[k].needs = needs;
                p->k[k].body = named[k] + at;
            }
            /* limits */
            uint64_t inv = (uint64_t)l.local[0] * l.local[1] * l.local[2];
            if (lim->workgroup_size > 0 && inv > (uint64_t)lim->workgroup_size)
                rlx_node_error(g, t->node, "needs a workgroup of %llu invocations, more than the target's %lld",
                               (unsigned long long)inv, (long long)lim->workgroup_size);
            for (int d = 0; d < 3; d++)
                if (lim->groups_per_dim > 0 && l.groups[d] > (uint64_t)lim->groups_per_dim)
                    rlx_node_error(g, t->node, "needs %u workgroups along one grid dimension, more than the target's %lld",
                                   l.groups[d], (long long)lim->groups_per_dim);
            if (lim->shared_bytes > 0 && l.shared_bytes > (uint64_t)lim->shared_bytes)
                rlx_node_error(g, t->node, "needs %u bytes of workgroup memory, more than the target's %lld", l.shared_bytes,
                               (long long)lim->shared_bytes);
            /* the dispatch */
            if (p->nd == p->capd) {
                int cap = p->capd ? 2 * p->capd : 64;
                p->d = rlx_realloc(p->d, sizeof(RlxGpuDispatch) * (size_t)p->capd, sizeof(RlxGpuDispatch) * (size_t)cap);
                p->capd = cap;
            }
            RlxGpuDispatch *d = &p->d[p->nd++];
            memset(d, 0, sizeof *d);
            d->kernel = k;
            d->thunk = i;
            memcpy(d->groups, l.groups, sizeof d->groups);
            d->npush = l.nops;
            RLX_ASSERT(l.nops <= RLX_GPU_MAX_PUSH);
            int need_barrier = 0;
            Range mine[RLX_GPU_MAX_OPS];
            int nmine = 0;
            for (int o = 0; o < l.nops; o++) {
                RlxSlot s = l.ops[o].slot;
                int64_t esize = rlx_gtype_size(l.ops[o].type);
                if (s.value == -2) {   /* the status word */
                    d->push[o] = (uint32_t)(status_offset(plan) / esize);
                    continue;
                }
                RLX_ASSERT(s.off % esize == 0 && s.off / esize <= UINT32_MAX);
                d->push[o] = (uint32_t)(s.off / esize);
                Range r = {s.space, s.off, s.off + slot_bytes(g, s), l.ops[o].write};
                mine[nmine++] = r;
                for (int j = 0; j < nlive; j++)
                    if (overlaps(&r, &live[j]) && (r.write || live[j].write)) need_barrier = 1;
            }
            if (need_barrier) {
                d->barrier = 1;
                nlive = 0;
            }
            for (int j = 0; j < nmine; j++) {
                if (nlive == caplive) {
                    live = rlx_realloc(live, sizeof(Range) * (size_t)caplive, sizeof(Range) * (size_t)(2 * caplive));
                    caplive *= 2;
                }
                live[nlive++] = mine[j];
            }
        }
    }
    for (int k = 0; k < p->nk; k++) p->k[k].source = named[k];
    return p;
}
