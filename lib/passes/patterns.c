/* patterns.c - targeted rewrites of what exporters emit.
 *
 * require: inferred, legalized (diagnostics already named the user's nodes),
 * dead code removed; run before the generic fusions. Each rewrite keeps the
 * graph's meaning exactly and only fires when every intermediate value has
 * no other reader and is not a graph output:
 *
 *   Conv -> BatchNormalization (constants)     Conv with W' = W*s, B' = (B-mean)*s + beta,
 *                                              s = scale / sqrt(var + eps)
 *   MatMul(Transpose(a), Transpose(b))         MatMul with rlx_trans_a / rlx_trans_b,
 *     (perm swapping the last two axes)         so the GEMM reads the operand transposed
 *   ReduceMean, Sub, Pow 2, ReduceMean, Add    LayerNormalization(x, gamma, beta), when the
 *     eps, Sqrt, Div [, Mul gamma][, Add beta]  reductions are over the last axis
 *   ReduceMax, Sub, Exp, ReduceSum, Div        Softmax (and without the ReduceMax/Sub)
 *   Pad with every pad 0                       nothing: its readers read its input
 *                                              (PyTorch's AvgPool2d export puts one
 *                                              before the pool, a whole copy)
 *   AveragePool(Conv 1x1(x))                   Conv 1x1(AveragePool(x)), when the pool
 *     (no padding, every window whole)          makes the plane smaller: both are linear
 *                                              and per position, so an average of
 *                                              W x + b is W (average of x) + b, and the
 *                                              product runs on the smaller plane
 *                                              (DenseNet's transitions: a quarter of
 *                                              their multiply-adds)
 *
 * GELU's decomposed form (Div, Erf, Add, Mul, Mul) needs no pattern: the
 * elementwise fusion makes it one loop.
 */
#include <math.h>
#include <string.h>

#include "rlx.h"
#include "passes.h"

typedef struct {
    RlxGraph *g;
    int *nuse;       /* live readers of each value */
    int *reader;     /* one reader (the only one when nuse == 1) */
    int cap;         /* entries of both: rewrites add values, so it grows */
} Pat;

static void count_uses(Pat *P) {
    RlxGraph *g = P->g;
    if (g->nv > P->cap) {
        /* the arrays once kept their first size, and counting the values a
         * Conv + BatchNormalization fold added wrote past them, over the
         * folded weights allocated next */
        P->cap = 2 * g->nv;
        P->nuse = rlx_alloc(sizeof(int) * (size_t)P->cap);
        P->reader = rlx_alloc(sizeof(int) * (size_t)P->cap);
    }
    memset(P->nuse, 0, sizeof(int) * (size_t)g->nv);
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++) {
            int v = g->n[i].in[j];
            if (v < 0) continue;
            int dup = 0;
            for (int k = 0; k < j; k++) dup |= g->n[i].in[k] == v;
            if (dup) continue;
            P->nuse[v]++;
            P->reader[v] = i;
        }
    }
}

/* The only reader of v, if v is an intermediate with exactly one. */
static int sole_reader(const Pat *P, int v) {
    if (v < 0 || P->nuse[v] != 1 || (P->g->v[v].flags & RLX_V_OUTPUT)) return -1;
    return P->reader[v];
}

static int producer_op(const RlxGraph *g, int v, RlxOp op) {
    if (v < 0) return -1;
    int p = g->v[v].producer;
    return p >= 0 && !g->n[p].dead && g->n[p].op == op ? p : -1;
}

static int is_scalar_const(const RlxGraph *g, int v, double *x) {
    if (v < 0 || !rlx_is_const(g, v) || rlx_value_numel(&g->v[v]) != 1) return 0;
    *x = rlx_weight_f64(&g->v[v], 0);
    return 1;
}

/* The other input of a binary node, given one. */
static int other_input(const RlxNode *n, int v) {
    if (n->nin != 2) return -1;
    return n->in[0] == v ? n->in[1] : n->in[1] == v ? n->in[0] : -1;
}

/* A reduction over exactly the last axis, keepdims. */
static int reduces_last_axis(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = &g->v[n->in[0]];
    if (rlx_attr_i(n, "keepdims", 1) != 1 || x->rank < 1) return 0;
    if (n->nin < 2 || n->in[1] < 0 || !rlx_is_const(g, n->in[1])) return 0;
    int mask[RLX_MAX_RANK];
    if (!rlx_reduce_axes(g, node, x->rank, mask)) return 0;
    for (int i = 0; i < x->rank; i++)
        if (mask[i] != (i == x->rank - 1)) return 0;
    return 1;
}

static int f32_weight_of_len(const RlxGraph *g, int v, int64_t len) {
    return v >= 0 && rlx_is_const(g, v) && g->v[v].dtype == RLX_F32 && rlx_value_numel(&g->v[v]) == len &&
           g->v[v].rank >= 1 && g->v[v].dims[g->v[v].rank - 1] == len;
}

static int new_weight(RlxGraph *g, const char *name, int like, float *data) {
    int v = rlx_value_add(g, name);
    RlxValue *w = &g->v[v];
    const RlxValue *o = &g->v[like];
    w->dtype = RLX_F32;
    w->rank = o->rank;
    memcpy(w->dims, o->dims, sizeof w->dims);
    w->flags = RLX_V_WEIGHT;
    w->producer = -1;
    w->data = (const uint8_t *)data;
    return v;
}

/* A 1-D f32 weight of `n` entries, for a value the rewrite made up. */
static int new_vector(RlxGraph *g, const char *name, const float *data, int64_t n) {
    int v = rlx_value_add(g, name);
    RlxValue *w = &g->v[v];
    w->dtype = RLX_F32;
    w->rank = 1;
    w->dims[0] = n;
    w->flags = RLX_V_WEIGHT;
    w->producer = -1;
    float *copy = rlx_alloc(sizeof(float) * (size_t)(n + 1));
    memcpy(copy, data, sizeof(float) * (size_t)n);
    w->data = (const uint8_t *)copy;
    return v;
}

static float wf(const RlxValue *v, int64_t i) { return (float)rlx_weight_f64(v, i); }

/* ---- Conv + BatchNormalization ---- */
static int fold_batchnorm(Pat *P, int bn) {
    RlxGraph *g = P->g;
    RlxNode *b = &g->n[bn];
    if (b->op != RLX_OP_BATCHNORM || b->nout != 1) return 0;
    int conv = producer_op(g, b->in[0], RLX_OP_CONV);
    if (conv < 0 || sole_reader(P, b->in[0]) != bn) return 0;
    RlxNode *c = &g->n[conv];
    int w = c->in[1];
    if (!rlx_is_const(g, w) || g->v[w].dtype != RLX_F32) return 0;
    for (int i = 1; i < 5; i++)
        if (!rlx_is_const(g, b->in[i]) || g->v[b->in[i]].dtype != RLX_F32) return 0;
    int has_bias = c->nin > 2 && c->in[2] >= 0;
    if (has_bias && !rlx_is_const(g, c->in[2])) return 0;
    const RlxValue *W = &g->v[w];
    int64_t oc = W->dims[0], per = rlx_value_numel(W) / (oc ? oc : 1);
    const RlxValue *sc = &g->v[b->in[1]], *bb = &g->v[b->in[2]], *mean = &g->v[b->in[3]], *var = &g->v[b->in[4]];
    if (rlx_value_numel(sc) != oc || rlx_value_numel(bb) != oc || rlx_value_numel(mean) != oc ||
        rlx_value_numel(var) != oc)
        return 0;
    double eps = rlx_attr_f(b, "epsilon", 1e-5);
    float *nw = rlx_alloc(sizeof(float) * (size_t)(oc * per + 1));
    float *nb = rlx_alloc(sizeof(float) * (size_t)(oc + 1));
    for (int64_t o = 0; o < oc; o++) {
        /* in f32, as the BatchNormalization kernel computes it */
        float s = wf(sc, o) / sqrtf(wf(var, o) + (float)eps);
        for (int64_t i = 0; i < per; i++) nw[o * per + i] = wf(W, o * per + i) * s;
        float b0 = has_bias ? wf(&g->v[c->in[2]], o) : 0.0f;
        nb[o] = (b0 - wf(mean, o)) * s + wf(bb, o);
    }
    int nwv = new_weight(g, rlx_fmt("%s.bn_folded", g->v[w].name), w, nw);
    int nbv = new_vector(g, rlx_fmt("%s.bn_bias", g->n[bn].name), nb, oc);
    c = &g->n[conv];
    b = &g->n[bn];
    int *in = rlx_alloc(sizeof(int) * 4);
    in[0] = c->in[0];
    in[1] = nwv;
    in[2] = nbv;
    c->in = in;
    c->nin = 3;
    c->out[0] = b->out[0];
    b->dead = 1;
    return 1;
}

/* ---- Transpose into MatMul ---- */
static int swaps_last_two(const RlxGraph *g, int tnode) {
    const RlxNode *t = &g->n[tnode];
    const RlxValue *x = &g->v[t->in[0]];
    int r = x->rank;
    if (r < 2) return 0;
    const RlxAttr *perm = rlx_attr_get(t, "perm");
    for (int i = 0; i < r; i++) {
        int64_t p = perm ? perm->ints[i] : r - 1 - i;
        int64_t want = i < r - 2 ? i : (i == r - 2 ? r - 1 : r - 2);
        if (p != want) return 0;
    }
    return 1;
}

static int fold_transposes(Pat *P, int mm) {
    RlxGraph *g = P->g;
    RlxNode *n = &g->n[mm];
    if (n->op != RLX_OP_MATMUL || g->v[n->out[0]].dtype != RLX_F32) return 0;
    int changed = 0;
    for (int k = 0; k < 2; k++) {
        const char *attr = k ? "rlx_trans_b" : "rlx_trans_a";
        if (rlx_attr_i(n, attr, 0)) continue;
        int v = n->in[k];
        int t = producer_op(g, v, RLX_OP_TRANSPOSE);
        if (t < 0 || sole_reader(P, v) != mm || !swaps_last_two(g, t)) continue;
        if (k == 0 && g->v[g->n[t].in[0]].rank < 2) continue;
        n->in[k] = g->n[t].in[0];
        g->n[t].dead = 1;
        rlx_attr_add(g, mm, attr, RLX_A_INT)->i = 1;
        n = &g->n[mm];
        changed = 1;
    }
    return changed;
}

/* ---- LayerNormalization ---- */
static int match_layernorm(Pat *P, int rm1) {
    RlxGraph *g = P->g;
    const RlxNode *r1 = &g->n[rm1];
    if (r1->op != RLX_OP_REDUCEMEAN || !reduces_last_axis(g, rm1)) return 0;
    int x = r1->in[0];
    const RlxValue *xv = &g->v[x];
    if (xv->dtype != RLX_F32) return 0;
    int64_t len = xv->dims[xv->rank - 1];
    int sub = sole_reader(P, r1->out[0]);
    if (sub < 0 || g->n[sub].op != RLX_OP_SUB || g->n[sub].in[0] != x || g->n[sub].in[1] != r1->out[0]) return 0;
    int d = g->n[sub].out[0];
    /* d is read twice: by Pow and by Div */
    if (P->nuse[d] != 2 || (g->v[d].flags & RLX_V_OUTPUT)) return 0;
    int pw = -1, dv = -1;
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] == d) {
                if (g->n[i].op == RLX_OP_POW && j == 0) pw = i;
                else if (g->n[i].op == RLX_OP_DIV && j == 0) dv = i;
            }
    }
    double two, eps;
    if (pw < 0 || dv < 0 || !is_scalar_const(g, g->n[pw].in[1], &two) || two != 2.0) return 0;
    int rm2 = sole_reader(P, g->n[pw].out[0]);
    if (rm2 < 0 || g->n[rm2].op != RLX_OP_REDUCEMEAN || !reduces_last_axis(g, rm2)) return 0;
    int add = sole_reader(P, g->n[rm2].out[0]);
    if (add < 0 || g->n[add].op != RLX_OP_ADD || !is_scalar_const(g, other_input(&g->n[add], g->n[rm2].out[0]), &eps))
        return 0;
    int sq = sole_reader(P, g->n[add].out[0]);
    if (sq < 0 || g->n[sq].op != RLX_OP_SQRT || sole_reader(P, g->n[sq].out[0]) != dv ||
        g->n[dv].in[1] != g->n[sq].out[0])
        return 0;
    /* optional scale and shift */
    int last = dv, gamma = -1, beta = -1;
    int mul = sole_reader(P, g->n[dv].out[0]);
    if (mul >= 0 && g->n[mul].op == RLX_OP_MUL && f32_weight_of_len(g, other_input(&g->n[mul], g->n[dv].out[0]), len)) {
        gamma = other_input(&g->n[mul], g->n[dv].out[0]);
        last = mul;
        int ad = sole_reader(P, g->n[mul].out[0]);
        if (ad >= 0 && g->n[ad].op == RLX_OP_ADD &&
            f32_weight_of_len(g, other_input(&g->n[ad], g->n[mul].out[0]), len)) {
            beta = other_input(&g->n[ad], g->n[mul].out[0]);
            last = ad;
        }
    }
    float *ones = NULL;
    if (gamma < 0) {
        ones = rlx_alloc(sizeof(float) * (size_t)(len + 1));
        for (int64_t i = 0; i < len; i++) ones[i] = 1.0f;
        gamma = new_vector(g, rlx_fmt("%s.ones", g->n[rm1].name), ones, len);
    }
    /* the output must be x's shape (no broadcast from gamma/beta) */
    const RlxValue *ov = &g->v[g->n[last].out[0]];
    xv = &g->v[x];
    if (ov->rank != xv->rank) return 0;
    for (int i = 0; i < ov->rank; i++)
        if (ov->dims[i] != xv->dims[i]) return 0;
    int ins[3] = {x, gamma, beta};
    int out = g->n[last].out[0];
    int nodes[] = {rm1, sub, pw, rm2, add, sq, dv, mul, last};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        if (nodes[i] >= 0 && (nodes[i] != mul || last != dv)) g->n[nodes[i]].dead = 1;
    int ln = rlx_node_add(g, g->n[last].name, RLX_OP_LAYERNORM, beta >= 0 ? 3 : 2, ins, 1, &out);
    rlx_attr_add(g, ln, "axis", RLX_A_INT)->i = -1;
    rlx_attr_add(g, ln, "epsilon", RLX_A_FLOAT)->f = eps;
    g->v[out].producer = ln;
    return 1;
}

/* ---- Softmax ---- */
static int match_softmax(Pat *P, int ex) {
    RlxGraph *g = P->g;
    const RlxNode *e = &g->n[ex];
    if (e->op != RLX_OP_EXP || g->v[e->out[0]].dtype != RLX_F32) return 0;
    int d = e->in[0], x = d, mx = -1, sub = producer_op(g, d, RLX_OP_SUB);
    /* with the max subtracted: Exp(Sub(x, ReduceMax(x))) */
    if (sub >= 0 && sole_reader(P, d) == ex) {
        int rmx = producer_op(g, g->n[sub].in[1], RLX_OP_REDUCEMAX);
        if (rmx >= 0 && g->n[rmx].in[0] == g->n[sub].in[0] && sole_reader(P, g->n[sub].in[1]) == sub &&
            reduces_last_axis(g, rmx)) {
            x = g->n[sub].in[0];
            mx = rmx;
        } else {
            sub = -1;
        }
    } else {
        sub = -1;
    }
    int ev = e->out[0];
    /* Exp's output is read by ReduceSum and by Div */
    if (P->nuse[ev] != 2 || (g->v[ev].flags & RLX_V_OUTPUT)) return 0;
    int rs = -1, dv = -1;
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        if (g->n[i].op == RLX_OP_REDUCESUM && g->n[i].in[0] == ev) rs = i;
        if (g->n[i].op == RLX_OP_DIV && g->n[i].in[0] == ev) dv = i;
    }
    if (rs < 0 || dv < 0 || !reduces_last_axis(g, rs) || sole_reader(P, g->n[rs].out[0]) != dv ||
        g->n[dv].in[1] != g->n[rs].out[0])
        return 0;
    const RlxValue *xv = &g->v[x], *yv = &g->v[g->n[dv].out[0]];
    if (xv->rank != yv->rank) return 0;
    for (int i = 0; i < xv->rank; i++)
        if (xv->dims[i] != yv->dims[i]) return 0;
    int out = g->n[dv].out[0];
    int nodes[] = {mx, sub, ex, rs, dv};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        if (nodes[i] >= 0) g->n[nodes[i]].dead = 1;
    int sm = rlx_node_add(g, g->n[dv].name, RLX_OP_SOFTMAX, 1, &x, 1, &out);
    rlx_attr_add(g, sm, "axis", RLX_A_INT)->i = -1;
    g->v[out].producer = sm;
    return 1;
}

/* ---- Pad by nothing ---- */
static int drop_zero_pad(Pat *P, int pn) {
    RlxGraph *g = P->g;
    const RlxNode *pd = &g->n[pn];
    if (pd->op != RLX_OP_PAD || pd->nin < 2 || pd->nout != 1 || pd->in[1] < 0 || !rlx_is_const(g, pd->in[1])) return 0;
    int x = pd->in[0], y = pd->out[0];
    if ((g->v[y].flags & RLX_V_OUTPUT) || g->v[x].dtype != g->v[y].dtype) return 0;
    const RlxValue *pads = &g->v[pd->in[1]];
    for (int64_t i = 0, n = rlx_value_numel(pads); i < n; i++)
        if (rlx_weight_f64(pads, i) != 0) return 0;
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] == y) g->n[i].in[j] = x;
    }
    g->n[pn].dead = 1;
    return 1;
}

/* ---- AveragePool after a 1x1 Conv ---- */
/* The pool and the convolution trade places: the pool reads x and writes the
 * convolution's old output value, resized to x's channels on the pooled
 * plane; the convolution reads that and writes the pool's output. Only
 * where every window lies inside the plane (no padding, no ceil_mode
 * overhang), so each average is over the same positions either way, and
 * where the pool shrinks the plane (else nothing is gained). */
static int pool_before_conv(Pat *P, int pn) {
    RlxGraph *g = P->g;
    const RlxNode *pl = &g->n[pn];
    if (pl->op != RLX_OP_AVERAGEPOOL || pl->nin != 1 || pl->nout != 1) return 0;
    int t = pl->in[0], y = pl->out[0];
    int cn = producer_op(g, t, RLX_OP_CONV);
    if (cn < 0 || sole_reader(P, t) != pn) return 0;
    const RlxNode *cv = &g->n[cn];
    int x = cv->in[0];
    const RlxValue *xv = &g->v[x], *tv = &g->v[t], *yv = &g->v[y];
    if (xv->rank < 3 || tv->rank != xv->rank || yv->rank != xv->rank || xv->dtype != tv->dtype) return 0;
    RlxWindow cw, pw;
    rlx_conv_geometry(g, cn, &cw);
    rlx_conv_geometry(g, pn, &pw);
    if (cw.nsp != xv->rank - 2 || pw.nsp != cw.nsp) return 0;
    int64_t plane_t = 1, plane_y = 1;
    for (int i = 0; i < cw.nsp; i++) {
        int64_t in = tv->dims[2 + i];
        if (cw.k[i] != 1 || cw.s[i] != 1 || cw.pad_begin[i] || cw.pad_end[i]) return 0;
        if (pw.pad_begin[i] || pw.pad_end[i] || pw.out[i] != yv->dims[2 + i]) return 0;
        if ((pw.out[i] - 1) * pw.s[i] + (pw.k[i] - 1) * pw.d[i] + 1 > in) return 0;
        plane_t *= in;
        plane_y *= pw.out[i];
    }
    if (plane_y >= plane_t) return 0;
    RlxValue *nt = &g->v[t];
    nt->dims[1] = xv->dims[1];
    for (int i = 2; i < nt->rank; i++) nt->dims[i] = yv->dims[i];
    g->n[pn].in[0] = x;
    g->n[pn].out[0] = t;
    g->n[cn].in[0] = t;
    g->n[cn].out[0] = y;
    g->v[t].producer = pn;
    g->v[y].producer = cn;
    return 1;
}

void rlx_fuse_patterns(RlxGraph *g) {
    Pat P = {g, NULL, NULL, 0};
    int changed = 1;
    while (changed) {
        changed = 0;
        count_uses(&P);
        int nn = g->nn;   /* nodes a rewrite adds are already in final form */
        for (int i = 0; i < nn && !changed; i++) {
            if (g->n[i].dead) continue;
            changed = fold_batchnorm(&P, i) || fold_transposes(&P, i) || match_layernorm(&P, i) ||
                      match_softmax(&P, i) || drop_zero_pad(&P, i) ||
                      pool_before_conv(&P, i);
        }
    }
}
