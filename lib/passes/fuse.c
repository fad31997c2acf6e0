/* fuse.c - epilogue and elementwise fusion.  require: inferred, legalized, scheduled
 *
 * Epilogues first (targeted patterns before generic regions): a MatMul,
 * Gemm or Conv whose single reader is an Add of a bias (MatMul: a constant
 * [n]), an Add of a tensor of its own shape (a residual), or an activation
 * (a BatchNormalization: only an activation) that the
 * kernels apply with rlx_scalar.h's rs_act, takes that op into its own
 * epilogue (extra inputs 2 and 3, attributes rlx_act*): the kernel computes
 * act(x*w + bias + residual) in one pass over its output. Two activations
 * come as patterns of several nodes reading the output twice, as PyTorch
 * exports them at opset 17: SiLU, Mul(y, Sigmoid(y)), and GELU,
 * Mul(Mul(y, Add(Erf(Div(y, sqrt 2)), 1)), 0.5); rs_act's RS_ACT_SILU and
 * RS_ACT_GELU compute exactly those ops in that order, so fusing them
 * changes no bit.
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
#include <math.h>
#include <string.h>

#include "rlx.h"
#include "../../runtime_min/rlx_scalar.h"

#define MAX_REGION_INPUTS 16
#define MAX_REGION_STEPS 64

typedef struct {
    int nin;
    int in[MAX_REGION_INPUTS];
    int nsteps;
    RlxEltStep steps[MAX_REGION_STEPS];
} Region;

/* Each node's steps (rlx_region_from_node), made once: building regions
 * visits a node many times, and a fresh copy each time cost kilobytes per
 * node of a long chain. */
typedef struct {
    RlxEltStep **steps;
    int *nsteps;               /* -1 until made */
} StepCache;

static int steps_of(const RlxGraph *g, StepCache *c, int node, RlxEltStep **steps) {
    if (c->nsteps[node] < 0) c->nsteps[node] = rlx_region_from_node(g, node, &c->steps[node]);
    *steps = c->steps[node];
    return c->nsteps[node];
}

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
static int append_node(const RlxGraph *g, StepCache *c, Region *r, int node, const int *override_v,
                       const int *override_arg, int noverride, int *result) {
    Region save = *r;
    RlxEltStep *steps;
    int ns = steps_of(g, c, node, &steps);
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

/* The producers a region absorbs; each brings at least one step, so a
 * region has fewer than MAX_REGION_STEPS of them. */
typedef struct {
    int n;
    int node[MAX_REGION_STEPS];
} Absorbed;

/* Builds the region ending at `node`: its producers' steps first (each
 * producer fused recursively), then its own. On failure (0) r and *ab are
 * as before the call, so a producer chain too long for one region is cut
 * where it stops fitting (and nothing it would have absorbed is lost).
 * `depth` bounds the recursion by the region's size, not the chain's: a
 * chain of 20000 elementwise ops must not take 20000 stack frames. */
static int build(RlxGraph *g, StepCache *c, int node, const int *nuse, Region *r, int *result, Absorbed *ab,
                 int depth) {
    if (depth >= MAX_REGION_STEPS) return 0;
    const RlxNode *n = &g->n[node];
    int ov[8], oa[8], no = 0;
    int64_t numel = rlx_value_numel(&g->v[n->out[0]]);
    /* an input no step reads (CastLike's target_type) absorbs nothing */
    RlxEltStep *own;
    int nown = steps_of(g, c, node, &own);
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
        int res, nab = ab->n;
        if (ab->n + 1 >= MAX_REGION_STEPS || !build(g, c, p, nuse, r, &res, ab, depth + 1)) {
            *r = save;
            ab->n = nab;
            continue;
        }
        ov[no] = v;
        oa[no] = res;
        no++;
        ab->node[ab->n++] = p;
    }
    return append_node(g, c, r, node, ov, oa, no, result);
}

/* ---- epilogues ---- */

static int const_scalar(const RlxGraph *g, int v, double *out) {
    if (v < 0 || !rlx_is_const(g, v) || rlx_value_numel(&g->v[v]) != 1) return 0;
    *out = rlx_weight_f64(&g->v[v], 0);
    return 1;
}

/* The RS_ACT_* of an activation node, with its parameters; 0 if none. */
static int activation_of(const RlxGraph *g, const RlxNode *c, double *a, double *b) {
    *a = *b = 0;
    switch (c->op) {
    case RLX_OP_RELU: return RS_ACT_RELU;
    case RLX_OP_SIGMOID: return RS_ACT_SIGMOID;
    case RLX_OP_HARDSWISH: return RS_ACT_HARDSWISH;
    case RLX_OP_TANH: return RS_ACT_TANH;
    case RLX_OP_LEAKYRELU: *a = rlx_attr_f(c, "alpha", 0.01); return RS_ACT_LEAKYRELU;
    case RLX_OP_HARDSIGMOID:
        *a = rlx_attr_f(c, "alpha", 0.2);
        *b = rlx_attr_f(c, "beta", 0.5);
        return RS_ACT_HARDSIGMOID;
    case RLX_OP_CLIP:
        *a = -INFINITY;
        *b = INFINITY;
        if (c->nin > 1 && c->in[1] >= 0 && !const_scalar(g, c->in[1], a)) return 0;
        if (c->nin > 2 && c->in[2] >= 0 && !const_scalar(g, c->in[2], b)) return 0;
        /* min > max stays a Clip node: the kernels' vector clips
         * (rk_gemm.c's min(max, max(min, x))) agree with rs_clip only for
         * min <= max */
        if (*a > *b) return 0;
        return RS_ACT_CLIP;
    default: return 0;
    }
}

/* The live nodes reading value v, up to max of them; their count. */
static int readers_of(const RlxGraph *g, int v, int *out, int max) {
    int n = 0;
    for (int i = 0; i < g->nn; i++) {
        const RlxNode *r = &g->n[i];
        if (r->dead) continue;
        for (int j = 0; j < r->nin; j++)
            if (r->in[j] == v) {
                if (n < max) out[n] = i;
                n++;
                break;
            }
    }
    return n;
}

/* Whether node c is binary op `op` of x and a constant scalar equal to
 * (float)k, in either order (Div: x first). */
static int op_with_const(const RlxGraph *g, const RlxNode *c, RlxOp op, int x, float k) {
    if (c->dead || c->op != op || c->nin != 2 || c->nout != 1) return 0;
    int other = c->in[0] == x ? c->in[1] : (op != RLX_OP_DIV && c->in[1] == x ? c->in[0] : -1);
    double v;
    return other >= 0 && other != x && g->v[other].dtype == RLX_F32 && const_scalar(g, other, &v) && (float)v == k;
}

/* The single reader of value v that nothing else reads, or -1. */
static int only_reader(const RlxGraph *g, int v) {
    int r;
    if (v < 0 || (g->v[v].flags & RLX_V_OUTPUT) || readers_of(g, v, &r, 1) != 1) return -1;
    return r;
}

/* y read twice, by the nodes of SiLU (Sigmoid(y), Mul(y, that)) or GELU
 * (Div(y, sqrt 2), Erf, Add 1, Mul(y, that), Mul 0.5): the RS_ACT_* code,
 * the pattern's nodes (the last one's output becomes the fused node's) in
 * kill[], their count in *nkill; 0 if neither. */
static int activation_pattern(const RlxGraph *g, int y, int *kill, int *nkill) {
    int r[2];
    if (readers_of(g, y, r, 2) != 2) return 0;
    for (int k = 0; k < 2; k++) {
        const RlxNode *a = &g->n[r[k]], *b = &g->n[r[1 - k]];
        if (a->op == RLX_OP_SIGMOID && a->nout == 1 && !a->dead && only_reader(g, a->out[0]) == r[1 - k] &&
            b->op == RLX_OP_MUL && b->nin == 2 && b->nout == 1 &&
            ((b->in[0] == y && b->in[1] == a->out[0]) || (b->in[1] == y && b->in[0] == a->out[0]))) {
            kill[0] = r[k];
            kill[1] = r[1 - k];
            *nkill = 2;
            return RS_ACT_SILU;
        }
        if (op_with_const(g, a, RLX_OP_DIV, y, 1.41421354f)) {
            int erf = only_reader(g, a->out[0]);
            if (erf < 0 || g->n[erf].op != RLX_OP_ERF || g->n[erf].nout != 1) continue;
            int add = only_reader(g, g->n[erf].out[0]);
            if (add < 0 || !op_with_const(g, &g->n[add], RLX_OP_ADD, g->n[erf].out[0], 1.0f)) continue;
            int one = g->n[add].out[0];
            if (only_reader(g, one) != r[1 - k] || b->op != RLX_OP_MUL || b->nin != 2 || b->nout != 1 ||
                !((b->in[0] == y && b->in[1] == one) || (b->in[1] == y && b->in[0] == one)))
                continue;
            int half = only_reader(g, b->out[0]);
            if (half < 0 || !op_with_const(g, &g->n[half], RLX_OP_MUL, b->out[0], 0.5f)) continue;
            kill[0] = r[k];
            kill[1] = erf;
            kill[2] = add;
            kill[3] = r[1 - k];
            kill[4] = half;
            *nkill = 5;
            return RS_ACT_GELU;
        }
    }
    return 0;
}

static int same_shape(const RlxValue *a, const RlxValue *b) {
    if (a->rank != b->rank || a->dtype != b->dtype) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

/* Grows the node's extra inputs to 4 (bias at 2, residual at 3). */
static void widen_inputs(RlxGraph *g, int node) {
    RlxNode *n = &g->n[node];
    if (n->nin >= 4) return;
    int *in = rlx_alloc(sizeof(int) * 5);
    for (int i = 0; i < 4; i++) in[i] = i < n->nin ? n->in[i] : -1;
    n->in = in;
    n->nin = 4;
}

void rlx_fuse_epilogues(RlxGraph *g) {
    int *nuse = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    int *reader = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] >= 0) {
                nuse[g->n[i].in[j]]++;
                reader[g->n[i].in[j]] = i;
            }
    }
    for (int s = 0; s < g->norder; s++) {
        int node = g->order[s];
        RlxNode *n = &g->n[node];
        int is_conv = n->op == RLX_OP_CONV && g->v[n->in[0]].rank <= 4;   /* conv2d_f32 has the epilogue */
        /* a BatchNormalization that no convolution took (DenseNet's, on a
         * Concat) takes its activation, not an Add */
        int is_bn = n->op == RLX_OP_BATCHNORM && n->nout == 1;
        if (n->dead || (n->op != RLX_OP_MATMUL && n->op != RLX_OP_GEMM && !is_conv && !is_bn) ||
            g->v[n->out[0]].dtype != RLX_F32)
            continue;
        for (;;) {
            n = &g->n[node];
            int y = n->out[0];
            int kill[5], nkill = 0, pattern = 0;
            if (nuse[y] == 2 && !(g->v[y].flags & RLX_V_OUTPUT) && !rlx_attr_i(n, "rlx_act", 0))
                pattern = activation_pattern(g, y, kill, &nkill);
            if (pattern) {
                /* the pattern's last node's output becomes the node's; its
                 * constants lose their readers */
                int last = kill[nkill - 1];
                rlx_attr_add(g, node, "rlx_act", RLX_A_INT)->i = pattern;
                n = &g->n[node];
                n->out[0] = g->n[last].out[0];
                g->v[n->out[0]].producer = node;
                for (int k = 0; k < nkill; k++) {
                    RlxNode *c = &g->n[kill[k]];
                    c->dead = 1;
                    for (int j = 0; j < c->nin; j++)
                        if (c->in[j] >= 0 && rlx_is_const(g, c->in[j])) nuse[c->in[j]]--;
                }
                nuse[y] = 0;
                break;   /* nothing fuses after the activation */
            }
            if (nuse[y] != 1 || (g->v[y].flags & RLX_V_OUTPUT)) break;
            int ci = reader[y];
            RlxNode *c = &g->n[ci];
            if (c->dead || c->nout != 1 || c->out[0] < 0) break;
            int has_bias = n->nin > 2 && n->in[2] >= 0 && n->op == RLX_OP_MATMUL;
            int has_res = n->nin > 3 && n->in[3] >= 0;
            int act = (int)rlx_attr_i(n, "rlx_act", 0);
            if (act) break;   /* nothing fuses after the activation */
            const RlxValue *yv = &g->v[y], *out = &g->v[c->out[0]];
            if (is_bn && c->op == RLX_OP_ADD) break;
            if (c->op == RLX_OP_ADD && c->nin == 2 && !has_res) {
                int other = c->in[0] == y ? c->in[1] : c->in[0];
                if (other == y || other < 0) break;
                const RlxValue *o = &g->v[other];
                if (!same_shape(yv, out)) break;   /* the Add must not broadcast y */
                if (n->op == RLX_OP_MATMUL && !has_bias && rlx_is_const(g, other) && o->dtype == RLX_F32 &&
                    o->rank >= 1 && yv->rank >= 1 && o->dims[o->rank - 1] == yv->dims[yv->rank - 1] &&
                    rlx_value_numel(o) == o->dims[o->rank - 1]) {
                    /* a bias: [n] (or [1,...,1,n]) added to every row */
                    int bias = other;
                    if (o->rank != 1) {
                        /* a 1-D view of the same constant bytes */
                        bias = rlx_value_add(g, rlx_fmt("%s.bias", o->name));
                        RlxValue *bv = &g->v[bias];
                        o = &g->v[other];
                        bv->dtype = RLX_F32;
                        bv->rank = 1;
                        bv->dims[0] = o->dims[o->rank - 1];
                        bv->flags = RLX_V_WEIGHT;
                        bv->data = o->data;
                        bv->producer = -1;
                    }
                    widen_inputs(g, node);
                    g->n[node].in[2] = bias;
                } else if (same_shape(o, yv)) {
                    widen_inputs(g, node);
                    g->n[node].in[3] = other;
                } else {
                    break;
                }
            } else {
                double a, b;
                int k = activation_of(g, c, &a, &b);
                if (!k) break;
                RlxAttr *at = rlx_attr_add(g, node, "rlx_act", RLX_A_INT);
                at->i = k;
                if (a != 0) rlx_attr_add(g, node, "rlx_act_a", RLX_A_FLOAT)->f = a;
                if (b != 0) rlx_attr_add(g, node, "rlx_act_b", RLX_A_FLOAT)->f = b;
            }
            /* the fused op's output becomes the node's */
            n = &g->n[node];
            n->out[0] = c->out[0];
            g->v[c->out[0]].producer = node;
            c->dead = 1;
            /* c's other inputs: now read by the node (a bias or residual it
             * took over), or by nobody (Clip's bounds, folded into rlx_act) */
            for (int j = 0; j < c->nin; j++) {
                int v = c->in[j];
                if (v < 0 || v == y) continue;
                int taken = 0;
                for (int k = 0; k < n->nin; k++) taken |= n->in[k] == v;
                if (taken) reader[v] = node;
                else nuse[v]--;
            }
            nuse[y] = 0;
        }
    }
}

void rlx_fuse_elementwise(RlxGraph *g) {
    int *nuse = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] >= 0) nuse[g->n[i].in[j]]++;
    }
    char *absorbed = rlx_alloc((size_t)g->nn + 1);
    StepCache cache;
    cache.steps = rlx_alloc(sizeof(RlxEltStep *) * (size_t)(g->nn + 1));
    cache.nsteps = rlx_alloc(sizeof(int) * (size_t)(g->nn + 1));
    for (int i = 0; i < g->nn; i++) cache.nsteps[i] = -1;
    /* last nodes of chains first: walk the schedule backwards */
    for (int s = g->norder - 1; s >= 0; s--) {
        int node = g->order[s];
        if (absorbed[node] || !fusable(g, node)) continue;
        Region r;
        memset(&r, 0, sizeof r);
        Absorbed mine;
        mine.n = 0;
        int res;
        if (!build(g, &cache, node, nuse, &r, &res, &mine, 0)) continue;
        if (!mine.n) continue;   /* a lone op stays itself */
        for (int i = 0; i < mine.n; i++) {
            absorbed[mine.node[i]] = 1;
            g->n[mine.node[i]].dead = 1;
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
