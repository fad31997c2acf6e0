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

/* The ready nodes in a binary heap keyed (delta, pos): the smallest growth,
 * ties to the earlier node of the plain order, as a scan over all nodes
 * would choose. A node's delta only falls (when one of its inputs gets down
 * to its last read), so a changed node is pushed again and the stale entry
 * skipped when it surfaces (lazy deletion). */
typedef struct {
    int64_t delta;
    int pos, id;
} Entry;

static int entry_less(const Entry *a, const Entry *b) {
    return a->delta != b->delta ? a->delta < b->delta : a->pos < b->pos;
}

static void heap_push(Entry *h, int *n, Entry e) {
    int i = (*n)++;
    for (; i > 0 && entry_less(&e, &h[(i - 1) / 2]); i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = e;
}

static Entry heap_pop(Entry *h, int *n) {
    Entry top = h[0], last = h[--*n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && entry_less(&h[c + 1], &h[c])) c++;
        if (!entry_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return top;
}

/* O((nodes + edges) log nodes): the distinct inputs and the readers of
 * every value are listed once, so a node reading one value many times, or
 * a value read by thousands of nodes, costs no quadratic scan. */
void rlx_schedule_memory(RlxGraph *g) {
    int n = g->norder, nv = g->nv;
    if (n < 3) return;
    int *pos = rlx_alloc(sizeof(int) * (size_t)(g->nn + 1));
    for (int i = 0; i < n; i++) pos[g->order[i]] = i;
    /* each scheduled node's distinct inputs, and the readers of each value (CSR) */
    int *in_start = rlx_alloc(sizeof(int) * (size_t)(n + 1)), nedges = 0;
    int *stamp = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    for (int v = 0; v < nv; v++) stamp[v] = -1;
    for (int i = 0; i < n; i++) {
        const RlxNode *nd = &g->n[g->order[i]];
        in_start[i] = nedges;
        for (int k = 0; k < nd->nin; k++)
            if (nd->in[k] >= 0 && stamp[nd->in[k]] != i) stamp[nd->in[k]] = i, nedges++;
    }
    in_start[n] = nedges;
    int *ins = rlx_alloc(sizeof(int) * (size_t)(nedges + 1));
    int *reads = rlx_alloc(sizeof(int) * (size_t)(nv + 1));     /* remaining reads of each value */
    int *rd_start = rlx_alloc(sizeof(int) * (size_t)(nv + 2));
    for (int v = 0; v < nv; v++) stamp[v] = -1;
    for (int i = 0, e = 0; i < n; i++) {
        const RlxNode *nd = &g->n[g->order[i]];
        for (int k = 0; k < nd->nin; k++) {
            int v = nd->in[k];
            if (v < 0 || stamp[v] == i) continue;
            stamp[v] = i;
            ins[e++] = v;
            reads[v]++;
        }
    }
    for (int v = 0; v < nv; v++) rd_start[v + 1] = rd_start[v] + reads[v];
    int *readers = rlx_alloc(sizeof(int) * (size_t)(nedges + 1)), *fill = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    int *missing = rlx_alloc(sizeof(int) * (size_t)(n + 1));   /* unscheduled producers, per position */
    int64_t *delta = rlx_alloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        const RlxNode *nd = &g->n[g->order[i]];
        for (int e = in_start[i]; e < in_start[i + 1]; e++) {
            int v = ins[e];
            readers[rd_start[v] + fill[v]++] = i;
            if (g->v[v].producer >= 0) missing[i]++;
        }
        for (int k = 0; k < nd->nout; k++)
            if (nd->out[k] >= 0) delta[i] += value_bytes(g, nd->out[k]);
    }
    /* an input read for the last time is freed (not an output: never freed) */
    for (int i = 0; i < n; i++)
        for (int e = in_start[i]; e < in_start[i + 1]; e++)
            if (reads[ins[e]] == 1 && !(g->v[ins[e]].flags & RLX_V_OUTPUT)) delta[i] -= value_bytes(g, ins[e]);
    char *done = rlx_alloc((size_t)n + 1);
    Entry *heap = rlx_alloc(sizeof(Entry) * (size_t)(n + nedges + 1));
    int nheap = 0;
    for (int i = 0; i < n; i++)
        if (!missing[i]) heap_push(heap, &nheap, (Entry){delta[i], i, g->order[i]});
    int *order = rlx_alloc(sizeof(int) * (size_t)(n + 1));
    for (int step = 0; step < n; step++) {
        Entry e;
        do {
            RLX_ASSERT(nheap > 0);
            e = heap_pop(heap, &nheap);
        } while (done[e.pos] || e.delta != delta[e.pos]);
        int i = e.pos;
        done[i] = 1;
        order[step] = e.id;
        for (int k = in_start[i]; k < in_start[i + 1]; k++) {
            int v = ins[k];
            if (--reads[v] != 1 || (g->v[v].flags & RLX_V_OUTPUT)) continue;
            /* v's one remaining reader frees it when it runs */
            for (int r = rd_start[v]; r < rd_start[v + 1]; r++) {
                int j = readers[r];
                if (done[j]) continue;
                delta[j] -= value_bytes(g, v);
                if (!missing[j]) heap_push(heap, &nheap, (Entry){delta[j], j, g->order[j]});
            }
        }
        /* consumers of its outputs may become ready */
        const RlxNode *nd = &g->n[e.id];
        for (int k = 0; k < nd->nout; k++) {
            int v = nd->out[k];
            if (v < 0) continue;
            for (int r = rd_start[v]; r < rd_start[v + 1]; r++) {
                int j = readers[r];
                if (!done[j] && --missing[j] == 0) heap_push(heap, &nheap, (Entry){delta[j], j, g->order[j]});
            }
        }
    }
    for (int i = 0; i < n; i++) g->order[i] = order[i];
}
