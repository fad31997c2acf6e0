/* schedule.c - the topological order of the live nodes.
 *
 * require: nothing (runs before inference; re-run after any pass that edits
 * the graph).
 *
 * First the producer of every value is found from the live nodes' outputs:
 * a value has at most one producer, and a graph input or a weight has none.
 * RlxValue.producer is rewritten from scratch, so producers left by dead or
 * rewritten nodes never survive. Every input a live node reads must then be
 * defined: a graph input, a weight, or a live node's output.
 *
 * The order is Kahn's algorithm with a binary min-heap of ready node ids, so
 * that among the nodes that could run next the one with the smallest id goes
 * first: the schedule depends only on the graph, never on a traversal
 * accident. Each input edge counts once per occurrence (a node reading the
 * same value twice waits for one producer, but counts it twice).
 *
 * Nodes left over when the heap runs dry lie on or behind a cycle. Every one
 * of them has an unscheduled producer, so walking from any of them to an
 * unscheduled producer must revisit a node; that node is on the cycle, and
 * the error names it and the value through which the cycle passes.
 */
#include "rlx.h"

static void heap_push(int *heap, int *n, int x) {
    int i = (*n)++;
    heap[i] = x;
    while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
        int p = (i - 1) / 2, t = heap[p];
        heap[p] = heap[i];
        heap[i] = t;
        i = p;
    }
}

static int heap_pop(int *heap, int *n) {
    int top = heap[0];
    heap[0] = heap[--*n];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && heap[l] < heap[m]) m = l;
        if (r < *n && heap[r] < heap[m]) m = r;
        if (m == i) break;
        int t = heap[m];
        heap[m] = heap[i];
        heap[i] = t;
        i = m;
    }
    return top;
}

/* An unscheduled producer of one of node i's inputs, and through which input. */
static int pending_producer(const RlxGraph *g, int i, const int *producer, const char *done, int *via) {
    const RlxNode *n = &g->n[i];
    for (int k = 0; k < n->nin; k++) {
        int v = n->in[k];
        if (v >= 0 && producer[v] >= 0 && !done[producer[v]]) {
            *via = v;
            return producer[v];
        }
    }
    return -1;
}

static void report_cycle(const RlxGraph *g, const int *producer, const char *done) {
    int start = -1;
    for (int i = 0; i < g->nn && start < 0; i++)
        if (!g->n[i].dead && !done[i]) start = i;
    RLX_ASSERT(start >= 0);
    char *seen = rlx_alloc((size_t)g->nn + 1);
    int i = start, via = -1;
    while (!seen[i]) {
        seen[i] = 1;
        int p = pending_producer(g, i, producer, done, &via);
        RLX_ASSERT(p >= 0);
        i = p;
    }
    /* i is on the cycle; name the value through which it feeds the cycle */
    pending_producer(g, i, producer, done, &via);
    rlx_node_error(g, i, "cycle in the graph (through value '%s')", g->v[via].name);
}

void rlx_schedule(RlxGraph *g) {
    int nv = g->nv, nn = g->nn;
    int *producer = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    char *external = rlx_alloc((size_t)nv + 1); /* graph input or weight */
    for (int v = 0; v < nv; v++) {
        producer[v] = -1;
        external[v] = (g->v[v].flags & (RLX_V_INPUT | RLX_V_WEIGHT)) != 0;
    }
    for (int k = 0; k < g->ninputs; k++) {
        RLX_ASSERT(g->inputs[k] >= 0 && g->inputs[k] < nv);
        external[g->inputs[k]] = 1;
    }

    int live = 0;
    for (int i = 0; i < nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        live++;
        for (int k = 0; k < n->nout; k++) {
            int v = n->out[k];
            if (v < 0) continue; /* an absent optional output */
            RLX_ASSERT(v < nv);
            if (external[v])
                rlx_node_error(g, i, "output '%s' is also a graph %s", g->v[v].name,
                               g->v[v].flags & RLX_V_WEIGHT ? "weight" : "input");
            if (producer[v] >= 0) {
                if (producer[v] == i) rlx_node_error(g, i, "output '%s' is listed twice", g->v[v].name);
                rlx_node_error(g, i, "value '%s' is also produced by node '%s'", g->v[v].name,
                               g->n[producer[v]].name);
            }
            producer[v] = i;
        }
    }
    for (int v = 0; v < nv; v++) g->v[v].producer = producer[v];

    /* consumers as a CSR array of edges producer -> consumer */
    int *indeg = rlx_alloc(sizeof(int) * (size_t)(nn + 1));
    int *start = rlx_alloc(sizeof(int) * (size_t)(nn + 2));
    for (int i = 0; i < nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++) {
            int v = n->in[k];
            if (v < 0) continue; /* an absent optional input */
            RLX_ASSERT(v < nv);
            if (producer[v] < 0) {
                if (!external[v])
                    rlx_node_error(g, i, "input '%s' is not defined (not a graph input, a weight, or a node's output)",
                                   g->v[v].name);
                continue;
            }
            indeg[i]++;
            start[producer[v] + 1]++;
        }
    }
    for (int i = 0; i < nn; i++) start[i + 1] += start[i];
    int *edge = rlx_alloc(sizeof(int) * (size_t)(start[nn] + 1));
    int *fill = rlx_alloc(sizeof(int) * (size_t)(nn + 1));
    for (int i = 0; i < nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++) {
            int v = n->in[k];
            if (v < 0 || producer[v] < 0) continue;
            int p = producer[v];
            edge[start[p] + fill[p]++] = i;
        }
    }

    for (int k = 0; k < g->noutputs; k++) {
        int v = g->outputs[k];
        RLX_ASSERT(v >= 0 && v < nv);
        if (producer[v] < 0 && !external[v])
            rlx_error("%s: graph output '%s' is not defined (not a graph input, a weight, or a node's output)",
                      g->file, g->v[v].name);
    }

    int *heap = rlx_alloc(sizeof(int) * (size_t)(nn + 1));
    int nheap = 0;
    for (int i = 0; i < nn; i++)
        if (!g->n[i].dead && indeg[i] == 0) heap_push(heap, &nheap, i);
    int *order = rlx_alloc(sizeof(int) * (size_t)(live + 1));
    char *done = rlx_alloc((size_t)nn + 1);
    int norder = 0;
    while (nheap > 0) {
        int i = heap_pop(heap, &nheap);
        order[norder++] = i;
        done[i] = 1;
        for (int e = start[i]; e < start[i + 1]; e++)
            if (--indeg[edge[e]] == 0) heap_push(heap, &nheap, edge[e]);
    }
    if (norder < live) report_cycle(g, producer, done);
    g->order = order;
    g->norder = norder;
}
