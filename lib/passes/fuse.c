/* fuse.c - elementwise fusion.  require: inferred, legalized, scheduled
 *
 * A chain of elementwise ops becomes one rlx.Region node, printed as one
 * loop: no intermediate tensor is written or planned. Walking the schedule,
 * each elementwise node absorbs the elementwise producers of its inputs
 * when the intermediate value has no other reader, is not a graph output,
 * and has as many elements as the consumer's output (so nothing is computed
 * twice). The producer's inputs broadcast to the consumer's shape directly:
 * broadcasting composes. Runs after legalization, so diagnostics name the
 * user's nodes; the region is named after its last node.
 */
#include <string.h>

#include "rlx.h"

#define MAX_REGION_INPUTS 16
#define MAX_REGION_STEPS 64

typedef struct {
    int nin;
    int in[MAX_REGION_INPUTS];
    int nsteps;
    RlxEltStep steps[MAX_REGION_STEPS];
} Region;

static int input_slot(Region *r, int v) {
    for (int i = 0; i < r->nin; i++)
        if (r->in[i] == v) return i;
    if (r->nin == MAX_REGION_INPUTS) return -1;
    r->in[r->nin] = v;
    return r->nin++;
}

/* Appends the steps of elementwise node `node`, whose input values map to
 * region arguments through `argof` (filled here for plain inputs). Returns
 * the argument (step reference) of its result, or 0 with r unchanged when
 * the region would grow too large. */
static int append_node(const RlxGraph *g, Region *r, int node, const int *override_v, const int *override_arg,
                       int noverride, int *result) {
    Region save = *r;
    RlxEltStep *steps;
    int ns = rlx_region_from_node(g, node, &steps);
    if (r->nsteps + ns > MAX_REGION_STEPS) return 0;
    const RlxNode *n = &g->n[node];
    int base = r->nsteps;
    for (int k = 0; k < ns; k++) {
        RlxEltStep s = steps[k];
        for (int j = 0; j < s.nargs; j++) {
            int a = s.args[j];
            if (a == RLX_ARG_ABSENT) continue;
            if (a < 0) {
                s.args[j] = -(base + (-a - 1)) - 1;   /* renumber the node's own steps */
                continue;
            }
            int v = n->in[a];
            int mapped = 0;
            for (int o = 0; o < noverride; o++)
                if (override_v[o] == v) {
                    s.args[j] = override_arg[o];
                    mapped = 1;
                }
            if (mapped) continue;
            int slot = input_slot(r, v);
            if (slot < 0) {
                *r = save;
                return 0;
            }
            s.args[j] = slot;
        }
        r->steps[r->nsteps++] = s;
    }
    *result = -(r->nsteps - 1) - 1;
    return 1;
}

static int fusable(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    return !n->dead && (rlx_ops[n->op].flags & RLX_OPF_ELT) && n->nout == 1 && n->out[0] >= 0;
}

/* Builds the region ending at `node`: its producers' steps first (each
 * producer fused recursively), then its own. */
static int build(RlxGraph *g, int node, const int *nuse, Region *r, int *result, char *absorbed) {
    const RlxNode *n = &g->n[node];
    int ov[8], oa[8], no = 0;
    int64_t numel = rlx_value_numel(&g->v[n->out[0]]);
    /* an input no step reads (CastLike's target_type) absorbs nothing */
    RlxEltStep *own;
    int nown = rlx_region_from_node(g, node, &own);
    for (int i = 0; i < n->nin && no < 8; i++) {
        int v = n->in[i], read = 0;
        for (int k = 0; k < nown; k++)
            for (int j = 0; j < own[k].nargs; j++) read |= own[k].args[j] == i;
        if (v < 0 || !read) continue;
        const RlxValue *x = &g->v[v];
        int p = x->producer;
        if (p < 0 || !fusable(g, p) || nuse[v] != 1 || (x->flags & RLX_V_OUTPUT) || rlx_value_numel(x) != numel)
            continue;
        int already = 0;
        for (int o = 0; o < no; o++) already |= ov[o] == v;
        if (already) continue;
        Region save = *r;
        int res;
        if (!build(g, p, nuse, r, &res, absorbed)) {
            *r = save;
            continue;
        }
        ov[no] = v;
        oa[no] = res;
        no++;
        absorbed[p] = 1;
    }
    return append_node(g, r, node, ov, oa, no, result);
}

void rlx_fuse_elementwise(RlxGraph *g) {
    int *nuse = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] >= 0) nuse[g->n[i].in[j]]++;
    }
    char *absorbed = rlx_alloc((size_t)g->nn + 1);
    /* last nodes of chains first: walk the schedule backwards */
    for (int s = g->norder - 1; s >= 0; s--) {
        int node = g->order[s];
        if (absorbed[node] || !fusable(g, node)) continue;
        Region r;
        memset(&r, 0, sizeof r);
        char *mine = rlx_alloc((size_t)g->nn + 1);
        int res;
        if (!build(g, node, nuse, &r, &res, mine)) continue;
        int n_absorbed = 0;
        for (int i = 0; i < g->nn; i++) n_absorbed += mine[i];
        if (!n_absorbed) continue;   /* a lone op stays itself */
        for (int i = 0; i < g->nn; i++)
            if (mine[i]) {
                absorbed[i] = 1;
                g->n[i].dead = 1;
            }
        int out = g->n[node].out[0];
        const char *name = g->n[node].name;
        int id = rlx_node_add(g, name, RLX_OP_REGION, r.nin, r.in, 1, &out);
        RlxAttr *a = rlx_attr_add(g, id, "program", RLX_A_STRING);
        a->s = rlx_region_format(r.steps, r.nsteps);
        g->n[node].dead = 1;
        g->v[out].producer = id;
    }
}
