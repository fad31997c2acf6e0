/* memsched.c - a memory-aware topological order.  require: scheduled
 *
 * Reorders g->order (a valid topological order from rlx_schedule) greedily:
 * among the nodes whose inputs are all computed, run the one that grows the
 * live set least - the bytes of its outputs minus the bytes of the inputs
 * it reads for the last time. Ties go to the node that came first in the
 * plain order, so a graph that is already a chain keeps its order. Weights
 * and graph outputs are not counted as freed (they never are). The planner
 * then packs this order's lifetimes; the lower bound it reports is the peak
 * of this schedule.
 */
#include "rlx.h"

static int64_t value_bytes(const RlxGraph *g, int v) {
    const RlxValue *x = &g->v[v];
    if (x->flags & RLX_V_WEIGHT) return 0;
    return rlx_align64(rlx_value_bytes(x));
}

void rlx_schedule_memory(RlxGraph *g) {
    int n = g->norder, nv = g->nv;
    if (n < 3) return;
    int *pos = rlx_alloc(sizeof(int) * (size_t)(g->nn + 1));
    for (int i = 0; i < n; i++) pos[g->order[i]] = i;
    /* remaining reads of each value, one per reading node */
    int *reads = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    int *missing = rlx_alloc(sizeof(int) * (size_t)(g->nn + 1));   /* unscheduled producers */
    for (int i = 0; i < n; i++) {
        const RlxNode *nd = &g->n[g->order[i]];
        for (int k = 0; k < nd->nin; k++) {
            int v = nd->in[k];
            if (v < 0) continue;
            int dup = 0;
            for (int j = 0; j < k; j++) dup |= nd->in[j] == v;
            if (dup) continue;
            reads[v]++;
            if (g->v[v].producer >= 0) missing[g->order[i]]++;
        }
    }
    char *done = rlx_alloc((size_t)g->nn + 1);
    int *order = rlx_alloc(sizeof(int) * (size_t)(n + 1));
    for (int step = 0; step < n; step++) {
        int best = -1;
        int64_t best_delta = 0;
        for (int i = 0; i < n; i++) {
            int id = g->order[i];
            if (done[id] || missing[id]) continue;
            const RlxNode *nd = &g->n[id];
            int64_t delta = 0;
            for (int k = 0; k < nd->nout; k++)
                if (nd->out[k] >= 0) delta += value_bytes(g, nd->out[k]);
            for (int k = 0; k < nd->nin; k++) {
                int v = nd->in[k];
                if (v < 0 || (g->v[v].flags & RLX_V_OUTPUT) || reads[v] != 1) continue;
                int dup = 0;
                for (int j = 0; j < k; j++) dup |= nd->in[j] == v;
                if (!dup) delta -= value_bytes(g, v);
            }
            if (best < 0 || delta < best_delta) {
                best = id;
                best_delta = delta;
            }
        }
        RLX_ASSERT(best >= 0);
        done[best] = 1;
        order[step] = best;
        const RlxNode *nd = &g->n[best];
        for (int k = 0; k < nd->nin; k++) {
            int v = nd->in[k];
            if (v < 0) continue;
            int dup = 0;
            for (int j = 0; j < k; j++) dup |= nd->in[j] == v;
            if (!dup) reads[v]--;
        }
        /* consumers of its outputs may become ready */
        for (int i = 0; i < n; i++) {
            int id = g->order[i];
            if (done[id]) continue;
            const RlxNode *c = &g->n[id];
            for (int k = 0; k < c->nin; k++) {
                int v = c->in[k];
                if (v < 0 || g->v[v].producer != best) continue;
                int dup = 0;
                for (int j = 0; j < k; j++) dup |= c->in[j] == v;
                if (!dup) missing[id]--;
            }
        }
    }
    for (int i = 0; i < n; i++) g->order[i] = order[i];
}
