/* precision.c - storage dtypes: --precision and --weights.  require: fused; before the target's prepare and the plan
 *
 * The graph's dtypes say what a tensor means; this pass picks, per tensor,
 * what it is stored as. A float32 tensor the policy puts in half storage
 * gets the dtype f16 or bf16 (and the flag RLX_V_STORAGE, for --report):
 * from here on its width is the plan's, its bytes the arena's, and every
 * kernel that touches it converts in its loads and stores and computes in
 * f32, rounding to nearest even once per store.
 *
 * Which tensors can change is a matter of the target's kernels, asked
 * operand by operand (target.h, RlxTarget.half_operand):
 *
 *   FREE   the kernel converts this operand on its own (an elementwise
 *          region's loads and stores; a convolution's or a GEMM's
 *          activation input, residual and output on the C target);
 *   TIED   the operand must be stored like the node's other tied ones (data
 *          movement, pooling, softmax: the kernel runs in one storage type),
 *          and the target's legalize column must support the op in it;
 *   FIXED  the operand stays as declared (a bias, a norm's statistics).
 *
 * Tied operands are joined into groups (union-find); a group changes as a
 * whole or not at all. It stays f32 if it holds a graph input or output (their
 * dtypes are the API's: the kernels that read an input or write an output
 * convert, and each f32 input gets a Cast after it whose result the policy
 * may store in half, so that the f32 copy dies after the first step), a weight, a value
 * of a node named by --keep-f32, a FIXED operand, or, under `auto`, a value
 * that loses accuracy in half: a reduction's or LogSoftmax's result, a
 * region that computes Exp, Log, Pow or Softplus (f16 overflows past 65504),
 * LayerNorm's statistics outputs.
 *
 * --weights f16|bf16|int8 stores GEMM and convolution weights (the operand
 * the target names, RlxTarget.weights_operand) in that type; int8 is
 * symmetric per output channel: scale = max|w| / 127 per channel, q =
 * round-half-even(w / scale), and the scales (f32) become the node's input
 * 4, which the kernel applies as it converts. Biases stay f32.
 */
#include <math.h>
#include <string.h>

#include "rlx.h"
#include "passes.h"
#include "target.h"
#include "../../runtime_min/rlx_rt.h"

void rlx_keep_f32(RlxGraph *g, const char *name) {
    int found = 0;
    for (int i = 0; i < g->nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead || !n->name || strcmp(n->name, name)) continue;
        found = 1;
        for (int o = 0; o < n->nout; o++)
            if (n->out[o] >= 0) g->v[n->out[o]].flags |= RLX_V_KEEP32;
        /* and whatever the node's outputs are after fusion (a Conv's become its fused Relu's) */
        rlx_attr_add(g, i, "rlx_keep_f32", RLX_A_INT)->i = 1;
    }
    if (!found) rlx_error("%s: --keep-f32: no node named '%s'", g->file, name);
}

/* ---- groups ---- */

static int find(int *up, int v) {
    while (up[v] != v) v = up[v] = up[up[v]];
    return v;
}

static void join(int *up, int a, int b) {
    a = find(up, a);
    b = find(up, b);
    if (a != b) up[a < b ? b : a] = a < b ? a : b;
}

/* The steps of a region that auto keeps out of half. */
static int region_overflows(const RlxGraph *g, int node) {
    RlxEltStep *steps;
    int ns = rlx_region_from_node(g, node, &steps);
    for (int k = 0; k < ns; k++)
        switch (steps[k].op) {
        case RLX_OP_EXP: case RLX_OP_LOG: case RLX_OP_POW: case RLX_OP_SOFTPLUS: return 1;
        default: break;
        }
    return 0;
}

static int is_reduction(RlxOp op) {
    switch (op) {
    case RLX_OP_REDUCEMEAN: case RLX_OP_REDUCESUM: case RLX_OP_REDUCEMAX: case RLX_OP_REDUCEMIN:
    case RLX_OP_REDUCEL1: case RLX_OP_REDUCEL2: case RLX_OP_REDUCELOGSUM: case RLX_OP_REDUCELOGSUMEXP:
    case RLX_OP_REDUCEPROD: case RLX_OP_REDUCESUMSQUARE: case RLX_OP_LOGSOFTMAX:
        return 1;
    default: return 0;
    }
}

/* Whether auto keeps output o of node in f32. */
static int auto_keeps(const RlxGraph *g, int node, int o) {
    const RlxNode *n = &g->n[node];
    if (is_reduction(n->op)) return 1;
    if (n->op == RLX_OP_LAYERNORM && o > 0) return 1;
    if ((n->op == RLX_OP_REGION || (rlx_ops[n->op].flags & RLX_OPF_ELT)) && region_overflows(g, node)) return 1;
    return 0;
}

static int conv2d(const RlxGraph *g, const RlxNode *n) {
    return n->op == RLX_OP_CONV && g->v[n->in[0]].rank <= 4;
}

/* What the kernels of lib/gpu and runtime_min share: elementwise regions
 * convert every operand; a 1-D/2-D convolution, MatMul and Gemm convert
 * their activation inputs, residual and output (a bias, Gemm's C: FIXED);
 * LayerNorm's input and output are tied, its statistics FIXED; the rest
 * runs in one storage type (TIED). */
int rlx_half_operand_default(const RlxGraph *g, int node, int o) {
    const RlxNode *n = &g->n[node];
    int out = o >= n->nin;
    if (n->op == RLX_OP_REGION || (rlx_ops[n->op].flags & RLX_OPF_ELT)) return RLX_HALF_FREE;
    switch (n->op) {
    case RLX_OP_CONV:
        if (!conv2d(g, n)) return RLX_HALF_TIED;
        return out || o == 0 || o == 3 ? RLX_HALF_FREE : RLX_HALF_FIXED;
    case RLX_OP_MATMUL:
    case RLX_OP_GEMM:
        return out || o == 0 || o == 1 || o == 3 ? RLX_HALF_FREE : RLX_HALF_FIXED;
    case RLX_OP_LAYERNORM:
        return o == 0 || o == n->nin ? RLX_HALF_TIED : RLX_HALF_FIXED;
    case RLX_OP_RNN:
    case RLX_OP_GRU:
    case RLX_OP_LSTM:
        return o == 0 || o == n->nin ? RLX_HALF_FREE : RLX_HALF_FIXED;   /* X and Y; the state stays */
    default:
        return RLX_HALF_TIED;
    }
}

/* A convolution's (O, I/group, kh, kw) weights are O rows (depthwise ones,
 * a few per channel, stay f32); a 2-D MatMul or Gemm weight is [k, n]
 * (channels along the columns) or, transposed, [n, k]. */
int rlx_weights_operand_default(const RlxGraph *g, int node, int64_t *rows, int64_t *cols, int *by_col) {
    const RlxNode *n = &g->n[node];
    if (n->nin < 2 || n->in[1] < 0) return -1;
    const RlxValue *w = &g->v[n->in[1]];
    if (n->op == RLX_OP_CONV && conv2d(g, n)) {
        int64_t group = rlx_attr_i(n, "group", 1);
        if (w->rank >= 2 && w->dims[1] == 1 && w->dims[0] == group) return -1;
        *rows = w->dims[0];
        *cols = rlx_value_numel(w) / (w->dims[0] ? w->dims[0] : 1);
        *by_col = 0;
        return 1;
    }
    if ((n->op != RLX_OP_MATMUL && n->op != RLX_OP_GEMM) || w->rank != 2) return -1;
    int tb = rlx_attr_i(n, n->op == RLX_OP_MATMUL ? "rlx_trans_b" : "transB", 0) != 0;
    *rows = w->dims[0];
    *cols = w->dims[1];
    *by_col = !tb;
    return 1;
}

static int candidate(const RlxValue *v) {
    return v->dtype == RLX_F32 && !(v->flags & (RLX_V_INPUT | RLX_V_OUTPUT | RLX_V_WEIGHT | RLX_V_KEEP32));
}

/* A value name not yet taken: base, else base.1, base.2, ... */
static const char *fresh_name(const RlxGraph *g, const char *base) {
    const char *s = base;
    for (int k = 1; rlx_value_find(g, s) >= 0; k++) s = rlx_fmt("%s.%d", base, k);
    return s;
}

/* An f32 graph input keeps its dtype (the API's); a Cast to f32 after it
 * gives the policy a copy to store in half, converted once at the boundary,
 * so that the f32 input is dead after the first step. Returns the Cast's
 * node, or -1. */
static int boundary_copy(RlxGraph *g, int x) {
    int uses = 0;
    for (int i = 0; i < g->nn; i++)
        if (!g->n[i].dead)
            for (int j = 0; j < g->n[i].nin; j++) uses += g->n[i].in[j] == x;
    if (!uses || rlx_value_numel(&g->v[x]) == 0) return -1;
    int h = rlx_value_add(g, fresh_name(g, rlx_fmt("%s.stored", g->v[x].name)));
    RlxValue *hv = &g->v[h], *xv = &g->v[x];
    hv->dtype = RLX_F32;
    hv->rank = xv->rank;
    memcpy(hv->dims, xv->dims, sizeof hv->dims);
    int node = rlx_node_add(g, rlx_fmt("%s.to_storage", g->v[x].name), RLX_OP_CAST, 1, &x, 1, &h);
    rlx_attr_add(g, node, "to", RLX_A_DTYPE)->i = RLX_F32;
    g->v[h].producer = node;
    for (int i = 0; i < g->nn; i++)
        if (i != node && !g->n[i].dead)
            for (int j = 0; j < g->n[i].nin; j++)
                if (g->n[i].in[j] == x) g->n[i].in[j] = h;
    return node;
}

/* Undoes boundary_copy where its copy stayed f32. */
static void boundary_undo(RlxGraph *g, int node) {
    int x = g->n[node].in[0], h = g->n[node].out[0];
    if (g->v[h].dtype != RLX_F32) return;
    for (int i = 0; i < g->nn; i++)
        if (i != node && !g->n[i].dead)
            for (int j = 0; j < g->n[i].nin; j++)
                if (g->n[i].in[j] == h) g->n[i].in[j] = x;
    g->n[node].dead = 1;
}

static void assign_storage(RlxGraph *g, const RlxTarget *t, RlxDType half, int is_auto) {
    for (int i = 0; i < g->nn; i++)
        if (!g->n[i].dead && rlx_attr_i(&g->n[i], "rlx_keep_f32", 0))
            for (int o = 0; o < g->n[i].nout; o++)
                if (g->n[i].out[o] >= 0) g->v[g->n[i].out[o]].flags |= RLX_V_KEEP32;
    int ninputs = g->ninputs, *copies = rlx_alloc(sizeof(int) * (size_t)(ninputs + 1));
    for (int i = 0; i < ninputs; i++) {
        int x = g->inputs[i];
        copies[i] = g->v[x].dtype == RLX_F32 && !(g->v[x].flags & RLX_V_KEEP32) ? boundary_copy(g, x) : -1;
    }
    int *up = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    uint8_t *bad = rlx_alloc((size_t)g->nv + 1);
    for (int v = 0; v < g->nv; v++) up[v] = v;
    int (*kind)(const RlxGraph *, int, int) = t->half_operand ? t->half_operand : rlx_half_operand_default;
    /* join each node's tied float operands; mark what cannot change */
    for (int i = 0; i < g->nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        int first = -1, pinned = 0;
        for (int o = 0; o < n->nin + n->nout; o++) {
            int v = o < n->nin ? n->in[o] : n->out[o - n->nin];
            if (v < 0 || g->v[v].dtype != RLX_F32) continue;
            int k = kind(g, i, o);
            int cand = candidate(&g->v[v]);
            if (o >= n->nin && is_auto && auto_keeps(g, i, o - n->nin)) cand = 0, bad[v] = 1;
            if (k == RLX_HALF_FIXED || !cand) {
                bad[v] = 1;
                if (k == RLX_HALF_TIED) pinned = 1;
                continue;
            }
            if (k == RLX_HALF_TIED) {
                if (first < 0) first = v;
                else join(up, first, v);
            }
        }
        if (pinned && first >= 0) bad[first] = 1;
    }
    for (int v = 0; v < g->nv; v++)
        if (bad[v]) bad[find(up, v)] = 1;
    /* retype each group that may change, then ask the target's column about
     * every node with a tied operand in it; undo the groups it refuses */
    RlxDType *was = rlx_alloc(sizeof(RlxDType) * (size_t)(g->nv + 1));
    for (int v = 0; v < g->nv; v++) {
        was[v] = g->v[v].dtype;
        if (candidate(&g->v[v]) && !bad[find(up, v)]) g->v[v].dtype = half;
    }
    for (int i = 0; i < g->nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        int group = -1;
        for (int o = 0; o < n->nin + n->nout && group < 0; o++) {
            int v = o < n->nin ? n->in[o] : n->out[o - n->nin];
            if (v >= 0 && g->v[v].dtype == half && was[v] == RLX_F32 && kind(g, i, o) == RLX_HALF_TIED) group = find(up, v);
        }
        if (group >= 0 && rlx_target_unsupported(t, g, i)) bad[group] = 1;
    }
    for (int v = 0; v < g->nv; v++) {
        if (g->v[v].dtype != half || was[v] != RLX_F32) continue;
        if (bad[find(up, v)]) g->v[v].dtype = RLX_F32;
        else g->v[v].flags |= RLX_V_STORAGE;
    }
    for (int i = 0; i < ninputs; i++)
        if (copies[i] >= 0) boundary_undo(g, copies[i]);
    rlx_dce(g);
    rlx_schedule(g);
}

/* ---- weights ---- */

static int round_half_even(double x) {
    double r = nearbyint(x);   /* the default rounding mode: to nearest, ties to even */
    return (int)r;
}

/* Replaces weight w (f32, viewed as [rows x cols], output channels along
 * the rows or, by_col, the columns) by its reduced form. Returns the int8
 * scales' value, -1 for f16/bf16, -2 when it stays f32 (int8 of inf/NaN). */
static int reduce_weight(RlxGraph *g, int w, RlxDType to, int64_t rows, int64_t cols, int by_col) {
    RlxValue *v = &g->v[w];
    int64_t numel = rows * cols;
    const float *src = (const float *)v->data;
    if (to == RLX_F16 || to == RLX_BF16) {
        uint16_t *h = rlx_alloc(sizeof(uint16_t) * (size_t)(numel + 1));
        for (int64_t i = 0; i < numel; i++) {
            float f;
            memcpy(&f, (const uint8_t *)src + 4 * i, 4);
            h[i] = to == RLX_F16 ? rlx_f32_to_f16(f) : rlx_f32_to_bf16(f);
        }
        v->data = (const uint8_t *)h;
        v->dtype = to;
        v->flags |= RLX_V_STORAGE;
        return -1;
    }
    int64_t nch = by_col ? cols : rows;
    float *scale = rlx_alloc(sizeof(float) * (size_t)(nch + 1));
    for (int64_t i = 0; i < numel; i++) {
        float f;
        memcpy(&f, (const uint8_t *)src + 4 * i, 4);
        if (!isfinite(f)) return -2;   /* int8 has no inf or NaN: the weight stays f32 */
        int64_t ch = by_col ? i % cols : i / cols;
        if (fabsf(f) > scale[ch]) scale[ch] = fabsf(f);
    }
    /* a channel whose largest value is below 127 times the smallest
     * subnormal would get a scale of 0 (and 0 / 0 = NaN below): the
     * smallest subnormal serves, its int8 values are then at most 64 */
    for (int64_t c = 0; c < nch; c++) {
        float s = scale[c] / 127.0f;
        scale[c] = scale[c] > 0 ? (s > 0 ? s : 0x1p-149f) : 1.0f;
    }
    int8_t *q = rlx_alloc((size_t)numel + 1);
    for (int64_t i = 0; i < numel; i++) {
        float f;
        memcpy(&f, (const uint8_t *)src + 4 * i, 4);
        double r = (double)f / (double)scale[by_col ? i % cols : i / cols];
        q[i] = (int8_t)round_half_even(r < -127.0 ? -127.0 : r > 127.0 ? 127.0 : r);
    }
    v->data = (const uint8_t *)q;
    v->dtype = RLX_I8;
    v->flags |= RLX_V_STORAGE;
    int s = rlx_value_add(g, fresh_name(g, rlx_fmt("%s.scale", v->name)));
    RlxValue *sv = &g->v[s];
    sv->dtype = RLX_F32;
    sv->rank = 1;
    sv->dims[0] = nch;
    sv->flags = RLX_V_WEIGHT;
    sv->producer = -1;
    sv->data = (const uint8_t *)scale;
    return s;
}

static int uses_of(const RlxGraph *g, int v) {
    int k = 0;
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++) k += g->n[i].in[j] == v;
    }
    return k + ((g->v[v].flags & RLX_V_OUTPUT) != 0);
}

static void assign_weights(RlxGraph *g, const RlxTarget *t, RlxDType to) {
    int (*which)(const RlxGraph *, int, int64_t *, int64_t *, int *) =
        t->weights_operand ? t->weights_operand : rlx_weights_operand_default;
    int nn = g->nn;
    for (int i = 0; i < nn; i++) {
        if (g->n[i].dead) continue;
        int axis;   /* the output channels' axis of the [rows, cols] view: 0 rows, 1 columns */
        int64_t rows, cols;
        int k = which(g, i, &rows, &cols, &axis);
        if (k < 0) continue;
        int w = g->n[i].in[k];
        if (w < 0 || !(g->v[w].flags & RLX_V_WEIGHT) || g->v[w].dtype != RLX_F32 || uses_of(g, w) != 1) continue;
        int s = reduce_weight(g, w, to, rows, cols, axis);
        if (s < 0) continue;   /* f16/bf16: nothing to add; or kept f32 */
        RlxNode *n = &g->n[i];
        int *in = rlx_alloc(sizeof(int) * 5);
        for (int j = 0; j < 5; j++) in[j] = j < n->nin ? n->in[j] : -1;
        in[4] = s;
        n->in = in;
        n->nin = 5;
    }
}

void rlx_assign_precision(RlxGraph *g, const RlxTarget *t, RlxPrecision precision, RlxDType weights) {
    if (precision != RLX_PRECISION_F32) {
        RlxDType half = precision == RLX_PRECISION_BF16 ? RLX_BF16 : RLX_F16;
        if (!(t->half_storage >> half & 1u))
            rlx_error("%s: target '%s' does not store tensors in %s (--precision)", g->file, t->name,
                      rlx_dtype_name(half));
        assign_storage(g, t, half, precision == RLX_PRECISION_AUTO);
    }
    if (weights != RLX_F32) {
        if (!(t->reduced_weights >> weights & 1u))
            rlx_error("%s: target '%s' does not store weights in %s (--weights)", g->file, t->name,
                      weights == RLX_I8 ? "int8" : rlx_dtype_name(weights));
        assign_weights(g, t, weights);
    }
}
