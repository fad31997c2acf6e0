/* dce.c - dead-code removal.
 *
 * require: nothing (runs before or after inference, before scheduling).
 *
 * A node is live if one of its outputs is a graph output or is read by a live
 * node. We find the producer of every value from the node outputs (the
 * RlxValue.producer field may not be filled in yet), mark the producers of the
 * graph outputs, and walk backwards over inputs with an explicit worklist. A
 * node with several outputs stays live when any one of them is used: the
 * kernel writes all of them, and the planner gives an unused one a slot of its
 * own. Nodes already dead are ignored (their outputs have no producer here).
 * Weights that only dead nodes read are left in the graph; the planner simply
 * does not give them a place in the weights file. The result depends only on
 * the graph, not on any traversal order, so it is deterministic.
 */
#include "rlx.h"

void rlx_dce(RlxGraph *g) {
    int *producer = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    for (int v = 0; v < g->nv; v++) producer[v] = -1;
    for (int i = 0; i < g->nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nout; k++)
            if (n->out[k] >= 0 && n->out[k] < g->nv) producer[n->out[k]] = i;
    }

    char *live = rlx_alloc((size_t)g->nn + 1);
    int *work = rlx_alloc(sizeof(int) * (size_t)(g->nn + 1));
    int nwork = 0;
    for (int k = 0; k < g->noutputs; k++) {
        int v = g->outputs[k];
        if (v < 0 || v >= g->nv) continue;
        int p = producer[v];
        if (p >= 0 && !live[p]) {
            live[p] = 1;
            work[nwork++] = p;
        }
    }
    /* each node enters the worklist at most once, so nn slots suffice */
    while (nwork > 0) {
        const RlxNode *n = &g->n[work[--nwork]];
        for (int k = 0; k < n->nin; k++) {
            int v = n->in[k];
            if (v < 0 || v >= g->nv) continue;
            int p = producer[v];
            if (p >= 0 && !live[p]) {
                live[p] = 1;
                work[nwork++] = p;
            }
        }
    }

    for (int i = 0; i < g->nn; i++)
        if (!live[i]) g->n[i].dead = 1;
}
