/* ext_quant.c - the quant op family: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
 * QLinearConv (ONNX opset 10-17).
 *
 * Scales and zero points may be graph inputs: only their shapes matter at
 * compile time, and they choose a mode per operand (rk_kernels.def): absent,
 * one value (per tensor: a scalar or a 1-element tensor), or one per row /
 * column / output channel (a 1-D tensor of that length). The quantized
 * output's dtype is the output zero point's (u8 when QuantizeLinear has
 * none). MatMul batch dims broadcast as numpy.matmul; convolutions are 2-D
 * (NCHW) with Conv's geometry (infer.c), kernel_shape taken from the weights
 * when absent.
 *
 * rlx_infer_quant and rlx_lower_quant return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include <string.h>

#include "passes.h"

static int is_quant_dtype(RlxDType dt) { return dt == RLX_U8 || dt == RLX_I8; }

static void want_quant(const RlxGraph *g, int node, int k, int allow_i32) {
    const RlxValue *v = rlx_input(g, node, k);
    if (!is_quant_dtype(v->dtype) && !(allow_i32 && v->dtype == RLX_I32))
        rlx_node_error(g, node, "input '%s' has dtype %s; %s needs u8 or i8%s", v->name, rlx_dtype_name(v->dtype),
                       rlx_ops[g->n[node].op].name, allow_i32 ? " (or i32)" : "");
}

/* Mode of a scale or zero point input k: 0 absent, 1 one value, 2 one per
 * entry of an axis of length len (len < 0: per-entry not allowed). */
static int param_mode(const RlxGraph *g, int node, int k, int64_t len, const char *what) {
    if (!rlx_has_input(g, node, k)) return 0;
    const RlxValue *v = rlx_input(g, node, k);
    int64_t numel = rlx_value_numel(v);
    if (v->rank <= 1 && numel == 1) return 1;
    if (len >= 0 && v->rank == 1 && v->dims[0] == len) return 2;
    rlx_node_error(g, node, "%s '%s' has shape %s; want a scalar%s", what, v->name, rlx_shape_str(v),
                   len >= 0 ? rlx_fmt(" or [%lld]", (long long)len) : "");
    return -1;
}

/* ---- QuantizeLinear, DequantizeLinear ---- */

typedef struct {
    int64_t outer, axis_len, inner;
    int per_axis, has_zp;
} AxisSplit;

static AxisSplit quant_split(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0), *s = rlx_input(g, node, 1);
    AxisSplit a = {rlx_value_numel(x), 1, 1, 0, rlx_has_input(g, node, 2)};
    if (s->rank > 1) rlx_node_error(g, node, "scale '%s' must be a scalar or 1-D, not %s", s->name, rlx_shape_str(s));
    if (s->rank == 1) {
        /* 1-D: per axis (a 1-element tensor is per axis only on an axis of 1) */
        int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", 1), x->rank);
        if (s->dims[0] != x->dims[axis]) {
            if (s->dims[0] != 1)
                rlx_node_error(g, node, "scale '%s' has %lld entries for axis %d of length %lld", s->name,
                               (long long)s->dims[0], axis, (long long)x->dims[axis]);
        } else {
            a.per_axis = 1;
            a.outer = rlx_prod(x->dims, 0, axis);
            a.axis_len = x->dims[axis];
            a.inner = rlx_prod(x->dims, axis + 1, x->rank);
        }
    }
    if (a.has_zp) {
        const RlxValue *z = rlx_input(g, node, 2);
        if (z->rank != s->rank || (z->rank == 1 && z->dims[0] != s->dims[0]))
            rlx_node_error(g, node, "zero point '%s' %s must have the shape of scale '%s' %s", z->name,
                           rlx_shape_str(z), s->name, rlx_shape_str(s));
    }
    return a;
}

static void infer_quantize(RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0), *s = rlx_input(g, node, 1);
    int deq = n->op == RLX_OP_DEQUANTIZELINEAR;
    rlx_want_dtype(g, node, 1, T_FLOAT);
    if (deq) {
        want_quant(g, node, 0, 1);
        if (rlx_has_input(g, node, 2)) rlx_want_same_dtype(g, node, 0, 2);
    } else {
        rlx_want_dtype(g, node, 0, T_FLOAT);
        rlx_want_same_dtype(g, node, 0, 1);
        if (rlx_has_input(g, node, 2)) want_quant(g, node, 2, 0);
    }
    quant_split(g, node);
    outs[0].rank = x->rank;
    memcpy(outs[0].dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    outs[0].dtype = deq ? s->dtype : rlx_has_input(g, node, 2) ? rlx_input(g, node, 2)->dtype : RLX_U8;
}

static void lower_quantize(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    AxisSplit a = quant_split(L->g, node);
    if (!rlx_value_numel(&L->g->v[n->in[0]])) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_quantize, node);
    for (int k = 0; k < 3; k++) rlx_tk_in(L, t, rlx_has_input(L->g, node, k) ? n->in[k] : -1);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dequantize", n->op == RLX_OP_DEQUANTIZELINEAR);
    rlx_tk_i(t, "x_dtype", L->g->v[n->in[0]].dtype);
    rlx_tk_i(t, "y_dtype", L->g->v[n->out[0]].dtype);
    rlx_tk_i(t, "outer", a.outer);
    rlx_tk_i(t, "axis_len", a.axis_len);
    rlx_tk_i(t, "inner", a.inner);
    rlx_tk_i(t, "per_axis", a.per_axis);
    rlx_tk_i(t, "has_zp", a.has_zp);
}

/* ---- DynamicQuantizeLinear ---- */

static void infer_dynamic(RlxGraph *g, int node, RlxShape *outs) {
    const RlxValue *x = rlx_input(g, node, 0);
    if (x->dtype != RLX_F32)
        rlx_node_error(g, node, "input '%s' has dtype %s; DynamicQuantizeLinear needs f32", x->name,
                       rlx_dtype_name(x->dtype));
    outs[0].dtype = RLX_U8;
    outs[0].rank = x->rank;
    memcpy(outs[0].dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    outs[1].dtype = RLX_F32;
    outs[1].rank = 0;
    outs[2].dtype = RLX_U8;
    outs[2].rank = 0;
}

static void lower_dynamic(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    for (int k = 1; k < 3; k++)
        if (k >= n->nout || n->out[k] < 0)
            rlx_node_error(L->g, node, "outputs y_scale and y_zero_point are required");
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_dynamic_quantize, node);
    rlx_tk_in(L, t, n->in[0]);
    for (int k = 0; k < 3; k++) rlx_tk_out(L, t, n->out[k]);
    rlx_tk_i(t, "n", rlx_value_numel(&L->g->v[n->in[0]]));
}

/* ---- MatMulInteger, QLinearMatMul ---- */

/* Operand positions: a, b, a_zp, b_zp, a_scale, b_scale, y_scale, y_zp. */
static void matmul_inputs(const RlxGraph *g, int node, int pos[8]) {
    static const int integer[8] = {0, 1, 2, 3, -1, -1, -1, -1}, qlinear[8] = {0, 3, 2, 5, 1, 4, 6, 7};
    memcpy(pos, g->n[node].op == RLX_OP_QLINEARMATMUL ? qlinear : integer, sizeof integer);
}

typedef struct {
    int64_t m, n, k;
    int brank;
    int64_t bdims[RLX_MAX_RANK], astride[RLX_MAX_RANK], bstride[RLX_MAX_RANK];
    int modes[4];                 /* a_zp, b_zp, a_scale, b_scale */
    RlxShape out;
} MatMulPlan;

static MatMulPlan matmul_plan(const RlxGraph *g, int node) {
    int pos[8];
    matmul_inputs(g, node, pos);
    int q = g->n[node].op == RLX_OP_QLINEARMATMUL;
    MatMulPlan p;
    memset(&p, 0, sizeof p);
    const RlxValue *a = rlx_input(g, node, pos[0]), *b = rlx_input(g, node, pos[1]);
    if (a->rank < 1 || b->rank < 1) rlx_node_error(g, node, "operands must have rank >= 1");
    p.m = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    p.k = a->dims[a->rank - 1];
    p.n = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    int64_t kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
    if (kb != p.k)
        rlx_node_error(g, node, "inner dimensions differ: %s times %s", rlx_shape_str(a), rlx_shape_str(b));
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    p.brank = ra > rb ? ra : rb;
    int64_t sa = p.m * p.k, sb = p.k * p.n;
    for (int i = p.brank - 1; i >= 0; i--) {
        int ia = i - (p.brank - ra), ib = i - (p.brank - rb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            rlx_node_error(g, node, "cannot broadcast the batch dimensions of %s and %s", rlx_shape_str(a),
                           rlx_shape_str(b));
        p.bdims[i] = da == 1 ? db : da;
        p.astride[i] = da == 1 ? 0 : sa;
        p.bstride[i] = db == 1 ? 0 : sb;
        sa = rlx_mul_checked(g, node, sa, da);
        sb = rlx_mul_checked(g, node, sb, db);
    }
    p.out.rank = p.brank;
    memcpy(p.out.dims, p.bdims, sizeof(int64_t) * (size_t)p.brank);
    if (a->rank >= 2) p.out.dims[p.out.rank++] = p.m;
    if (b->rank >= 2) p.out.dims[p.out.rank++] = p.n;
    p.modes[0] = param_mode(g, node, pos[2], p.m, "a_zero_point");
    p.modes[1] = param_mode(g, node, pos[3], p.n, "b_zero_point");
    if (q) {
        p.modes[2] = param_mode(g, node, pos[4], p.m, "a_scale");
        p.modes[3] = param_mode(g, node, pos[5], p.n, "b_scale");
        param_mode(g, node, pos[6], -1, "y_scale");
        param_mode(g, node, pos[7], -1, "y_zero_point");
    }
    return p;
}

static void infer_matmul_integer(RlxGraph *g, int node, RlxShape *outs) {
    int pos[8];
    matmul_inputs(g, node, pos);
    int q = g->n[node].op == RLX_OP_QLINEARMATMUL;
    want_quant(g, node, pos[0], 0);
    want_quant(g, node, pos[1], 0);
    if (rlx_has_input(g, node, pos[2])) rlx_want_same_dtype(g, node, pos[0], pos[2]);
    if (rlx_has_input(g, node, pos[3])) rlx_want_same_dtype(g, node, pos[1], pos[3]);
    if (q) {
        for (int k = 4; k < 7; k++)
            if (rlx_input(g, node, pos[k])->dtype != RLX_F32)
                rlx_node_error(g, node, "scale '%s' must be f32", rlx_input(g, node, pos[k])->name);
        want_quant(g, node, pos[7], 0);
    }
    MatMulPlan p = matmul_plan(g, node);
    outs[0] = p.out;
    outs[0].dtype = q ? rlx_input(g, node, pos[7])->dtype : RLX_I32;
}

static void lower_matmul_integer(RlxLower *L, int node) {
    const RlxGraph *g = L->g;
    const RlxNode *n = &g->n[node];
    int pos[8];
    matmul_inputs(g, node, pos);
    int q = n->op == RLX_OP_QLINEARMATMUL;
    MatMulPlan p = matmul_plan(g, node);
    if (!rlx_value_numel(&g->v[n->out[0]])) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_matmul_integer, node);
    for (int k = 0; k < 8; k++) rlx_tk_in(L, t, pos[k] >= 0 && rlx_has_input(g, node, pos[k]) ? n->in[pos[k]] : -1);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "qlinear", q);
    rlx_tk_i(t, "a_dtype", rlx_input(g, node, pos[0])->dtype);
    rlx_tk_i(t, "b_dtype", rlx_input(g, node, pos[1])->dtype);
    rlx_tk_i(t, "y_dtype", g->v[n->out[0]].dtype);
    rlx_tk_i(t, "m", p.m);
    rlx_tk_i(t, "n", p.n);
    rlx_tk_i(t, "k", p.k);
    rlx_tk_i(t, "brank", p.brank);
    rlx_tk_a(t, "bdims", p.bdims, p.brank);
    rlx_tk_a(t, "astride", p.astride, p.brank);
    rlx_tk_a(t, "bstride", p.bstride, p.brank);
    rlx_tk_i(t, "a_zp_mode", p.modes[0]);
    rlx_tk_i(t, "b_zp_mode", p.modes[1]);
    rlx_tk_i(t, "a_scale_mode", p.modes[2]);
    rlx_tk_i(t, "b_scale_mode", p.modes[3]);
}

/* ---- ConvInteger, QLinearConv ---- */

/* Operand positions: x, w, x_zp, w_zp, x_scale, w_scale, y_scale, y_zp, B. */
static void conv_inputs(const RlxGraph *g, int node, int pos[9]) {
    static const int integer[9] = {0, 1, 2, 3, -1, -1, -1, -1, -1}, qlinear[9] = {0, 3, 2, 5, 1, 4, 6, 7, 8};
    memcpy(pos, g->n[node].op == RLX_OP_QLINEARCONV ? qlinear : integer, sizeof integer);
}

typedef struct {
    int64_t k[2], s[2], d[2], pads[4], out_hw[2];
    int modes[3];                 /* x_zp, w_zp, w_scale */
} ConvPlan;

static ConvPlan conv_plan(const RlxGraph *g, int node) {
    int pos[9];
    conv_inputs(g, node, pos);
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, pos[0]), *w = rlx_input(g, node, pos[1]);
    ConvPlan p;
    memset(&p, 0, sizeof p);
    if (x->rank != 4 || w->rank != 4)
        rlx_node_error(g, node, "only 2-D convolutions (x and w of rank 4) are supported, not %s and %s",
                       rlx_shape_str(x), rlx_shape_str(w));
    int64_t group = rlx_attr_i(n, "group", 1);
    if (group < 1 || x->dims[1] % group || w->dims[0] % group || w->dims[1] != x->dims[1] / group)
        rlx_node_error(g, node, "weights %s do not fit input %s with group %lld", rlx_shape_str(w), rlx_shape_str(x),
                       (long long)group);
    RlxWindow win;
    rlx_conv_geometry(g, node, &win);
    for (int i = 0; i < 2; i++) {
        p.k[i] = win.k[i];
        p.s[i] = win.s[i];
        p.d[i] = win.d[i];
        p.pads[i] = win.pad_begin[i];
        p.pads[2 + i] = win.pad_end[i];
        p.out_hw[i] = win.out[i];
    }
    if (p.k[0] != w->dims[2] || p.k[1] != w->dims[3])
        rlx_node_error(g, node, "kernel_shape %s disagrees with the weights' %s", rlx_dims_str(2, p.k),
                       rlx_dims_str(2, w->dims + 2));
    p.modes[0] = param_mode(g, node, pos[2], -1, "x_zero_point");
    p.modes[1] = param_mode(g, node, pos[3], w->dims[0], "w_zero_point");
    if (n->op == RLX_OP_QLINEARCONV) {
        p.modes[2] = param_mode(g, node, pos[5], w->dims[0], "w_scale");
        param_mode(g, node, pos[4], -1, "x_scale");
        param_mode(g, node, pos[6], -1, "y_scale");
        param_mode(g, node, pos[7], -1, "y_zero_point");
        if (rlx_has_input(g, node, pos[8])) {
            const RlxValue *b = rlx_input(g, node, pos[8]);
            if (b->dtype != RLX_I32 || b->rank != 1 || b->dims[0] != w->dims[0])
                rlx_node_error(g, node, "bias '%s' must be i32 [%lld], not %s %s", b->name, (long long)w->dims[0],
                               rlx_dtype_name(b->dtype), rlx_shape_str(b));
        }
    }
    return p;
}

static void infer_conv_integer(RlxGraph *g, int node, RlxShape *outs) {
    int pos[9];
    conv_inputs(g, node, pos);
    int q = g->n[node].op == RLX_OP_QLINEARCONV;
    want_quant(g, node, pos[0], 0);
    want_quant(g, node, pos[1], 0);
    if (rlx_has_input(g, node, pos[2])) rlx_want_same_dtype(g, node, pos[0], pos[2]);
    if (rlx_has_input(g, node, pos[3])) rlx_want_same_dtype(g, node, pos[1], pos[3]);
    /* Conv's geometry wants kernel_shape when input 1 is not the weights */
    const RlxValue *w = rlx_input(g, node, pos[1]);
    if (!rlx_attr_get(&g->n[node], "kernel_shape") && w->rank == 4) {
        RlxAttr *a = rlx_attr_add(g, node, "kernel_shape", RLX_A_INTS);
        a->n = 2;
        a->ints = rlx_alloc(2 * sizeof(int64_t));
        a->ints[0] = w->dims[2];
        a->ints[1] = w->dims[3];
        a->tensor = -1;
    }
    if (q) {
        for (int k = 4; k < 7; k++)
            if (rlx_input(g, node, pos[k])->dtype != RLX_F32)
                rlx_node_error(g, node, "scale '%s' must be f32", rlx_input(g, node, pos[k])->name);
        want_quant(g, node, pos[7], 0);
    }
    ConvPlan p = conv_plan(g, node);
    const RlxValue *x = rlx_input(g, node, pos[0]);
    w = rlx_input(g, node, pos[1]);
    outs[0].dtype = q ? rlx_input(g, node, pos[7])->dtype : RLX_I32;
    outs[0].rank = 4;
    outs[0].dims[0] = x->dims[0];
    outs[0].dims[1] = w->dims[0];
    outs[0].dims[2] = p.out_hw[0];
    outs[0].dims[3] = p.out_hw[1];
}

static void lower_conv_integer(RlxLower *L, int node) {
    const RlxGraph *g = L->g;
    const RlxNode *n = &g->n[node];
    int pos[9];
    conv_inputs(g, node, pos);
    ConvPlan p = conv_plan(g, node);
    if (!rlx_value_numel(&g->v[n->out[0]])) return;
    const RlxValue *x = rlx_input(g, node, pos[0]), *w = rlx_input(g, node, pos[1]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_conv_integer, node);
    for (int k = 0; k < 9; k++) rlx_tk_in(L, t, pos[k] >= 0 && rlx_has_input(g, node, pos[k]) ? n->in[pos[k]] : -1);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "qlinear", n->op == RLX_OP_QLINEARCONV);
    rlx_tk_i(t, "x_dtype", x->dtype);
    rlx_tk_i(t, "w_dtype", w->dtype);
    rlx_tk_i(t, "y_dtype", g->v[n->out[0]].dtype);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "h", x->dims[2]);
    rlx_tk_i(t, "w", x->dims[3]);
    rlx_tk_i(t, "oc", w->dims[0]);
    rlx_tk_i(t, "oh", p.out_hw[0]);
    rlx_tk_i(t, "ow", p.out_hw[1]);
    rlx_tk_i(t, "kh", p.k[0]);
    rlx_tk_i(t, "kw", p.k[1]);
    rlx_tk_i(t, "sh", p.s[0]);
    rlx_tk_i(t, "sw", p.s[1]);
    rlx_tk_i(t, "pt", p.pads[0]);
    rlx_tk_i(t, "pl", p.pads[1]);
    rlx_tk_i(t, "dh", p.d[0]);
    rlx_tk_i(t, "dw", p.d[1]);
    rlx_tk_i(t, "group", rlx_attr_i(n, "group", 1));
    rlx_tk_i(t, "x_zp_mode", p.modes[0]);
    rlx_tk_i(t, "w_zp_mode", p.modes[1]);
    rlx_tk_i(t, "w_scale_mode", p.modes[2]);
    rlx_tk_i(t, "has_bias", pos[8] >= 0 && rlx_has_input(g, node, pos[8]));
}

int rlx_infer_quant(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_QUANTIZELINEAR: case RLX_OP_DEQUANTIZELINEAR: infer_quantize(g, node, outs); return 1;
    case RLX_OP_DYNQUANTIZELINEAR: infer_dynamic(g, node, outs); return 1;
    case RLX_OP_MATMULINTEGER: case RLX_OP_QLINEARMATMUL: infer_matmul_integer(g, node, outs); return 1;
    case RLX_OP_CONVINTEGER: case RLX_OP_QLINEARCONV: infer_conv_integer(g, node, outs); return 1;
    default: return 0;
    }
}

int rlx_lower_quant(RlxLower *L, int node) {
    switch (L->g->n[node].op) {
    case RLX_OP_QUANTIZELINEAR: case RLX_OP_DEQUANTIZELINEAR: lower_quantize(L, node); return 1;
    case RLX_OP_DYNQUANTIZELINEAR: lower_dynamic(L, node); return 1;
    case RLX_OP_MATMULINTEGER: case RLX_OP_QLINEARMATMUL: lower_matmul_integer(L, node); return 1;
    case RLX_OP_CONVINTEGER: case RLX_OP_QLINEARCONV: lower_conv_integer(L, node); return 1;
    default: return 0;
    }
}
