/* ext_conv.c - the conv op family: pooling (MaxPool, AveragePool, LpPool and
 * the global pools) and ConvTranspose, over 1 to 3 spatial axes. Conv
 * itself is in infer.c/lower.c; all of them share rlx_conv_geometry's
 * reading of kernel_shape, strides, dilations, pads, auto_pad and ceil_mode.
 *
 * Every pool lowers to the one pool_nd kernel (rk_conv.c), whose spatial
 * geometry has 3 axes: a 1-D or 2-D window gets leading axes of size 1, and
 * a global pool is a single window over the flattened spatial axes.
 * ConvTranspose lowers to conv_transpose_f32 the same way.
 *
 * ConvTranspose's geometry (ONNX): the full output of an axis is
 * s*(in-1) + output_padding + (k-1)*d + 1; pads cut it from both ends. With
 * output_shape (or auto_pad SAME_*, where output_shape = in*s) the pads are
 * derived from the difference instead, total = full - output_shape, split
 * total//2 at the begin for SAME_UPPER and total - total//2 otherwise
 * (Python's floor division, as the ONNX reference; a negative total leaves
 * output positions that only the bias reaches).
 *
 * rlx_infer_conv and rlx_lower_conv return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include <string.h>

#include "passes.h"

/* Writes the last ns of v into out[3], after leading `fill`s. */
static void pad3(const int64_t *v, int ns, int64_t fill, int64_t out[3]) {
    for (int a = 0; a < 3; a++) out[a] = a < 3 - ns ? fill : v[a - (3 - ns)];
}

static int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

/* ---- ConvTranspose geometry ---- */

static int auto_pad_mode(const RlxGraph *g, int node) {
    const char *ap = rlx_attr_s(&g->n[node], "auto_pad", "NOTSET");
    if (!strcmp(ap, "NOTSET") || !*ap) return 0;
    if (!strcmp(ap, "VALID")) return 1;
    if (!strcmp(ap, "SAME_UPPER")) return 2;
    if (!strcmp(ap, "SAME_LOWER")) return 3;
    rlx_node_error(g, node, "unknown auto_pad '%s'", ap);
    return -1;
}

static void convtranspose_geometry(const RlxGraph *g, int node, RlxWindow *w) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0), *wt = rlx_input(g, node, 1);
    if (x->rank < 3 || x->rank > 2 + RLX_MAX_WINDOW_AXES)
        rlx_node_error(g, node, "input must have rank 3 to %d (N, C, 1 to %d spatial axes), not %d (shape %s)",
                       2 + RLX_MAX_WINDOW_AXES, RLX_MAX_WINDOW_AXES, x->rank, rlx_shape_str(x));
    int ns = x->rank - 2;
    if (wt->rank != x->rank)
        rlx_node_error(g, node, "weights '%s' must have rank %d (C, O/group, kernel...) like the input, not %d (shape %s)",
                       wt->name, x->rank, wt->rank, rlx_shape_str(wt));
    memset(w, 0, sizeof *w);
    w->nsp = ns;
    for (int a = 0; a < ns; a++) w->k[a] = wt->dims[2 + a];
    if (rlx_attr_get(n, "kernel_shape")) {
        int64_t k[RLX_MAX_WINDOW_AXES];
        rlx_ints_attr(g, node, "kernel_shape", ns, 1, 1, k);
        for (int a = 0; a < ns; a++)
            if (k[a] != w->k[a])
                rlx_node_error(g, node, "kernel_shape %s disagrees with the weights' %s", rlx_dims_str(ns, k),
                               rlx_dims_str(ns, w->k));
    }
    for (int a = 0; a < ns; a++)
        if (w->k[a] < 1) rlx_node_error(g, node, "empty kernel %s", rlx_dims_str(ns, w->k));
    int64_t pads[2 * RLX_MAX_WINDOW_AXES], opad[RLX_MAX_WINDOW_AXES], oshape[RLX_MAX_WINDOW_AXES + 2];
    rlx_ints_attr(g, node, "strides", ns, 1, 1, w->s);
    rlx_ints_attr(g, node, "dilations", ns, 1, 1, w->d);
    rlx_ints_attr(g, node, "pads", 2 * ns, 0, 0, pads);
    rlx_ints_attr(g, node, "output_padding", ns, 0, 0, opad);
    const RlxAttr *os = rlx_attr_get(n, "output_shape");
    int have_os = os != NULL;
    if (os) {
        /* spatial dims only, or (as ONNX Runtime accepts) with N and C in front */
        int m = os->kind == RLX_A_INTS && os->n == ns + 2 ? ns + 2 : ns;
        rlx_ints_attr(g, node, "output_shape", m, 1, 1, oshape);
        if (m == ns + 2) memmove(oshape, oshape + 2, sizeof(int64_t) * (size_t)ns);
    }
    int mode = auto_pad_mode(g, node);
    for (int a = 0; a < ns; a++) {
        int64_t in = x->dims[2 + a], s = w->s[a];
        if (in < 1) rlx_node_error(g, node, "spatial axis %d of the input is empty", 2 + a);
        if (opad[a] >= s && opad[a] >= w->d[a])
            rlx_node_error(g, node, "output_padding %lld must be smaller than the stride (%lld) or the dilation (%lld)",
                           (long long)opad[a], (long long)s, (long long)w->d[a]);
        int64_t dk = rlx_add_checked(g, node, rlx_mul_checked(g, node, w->k[a] - 1, w->d[a]), 1);
        int64_t full = rlx_add_checked(g, node, rlx_add_checked(g, node, rlx_mul_checked(g, node, s, in - 1), opad[a]), dk);
        int64_t out, pb, pe;
        if (have_os || mode >= 2) {
            out = have_os ? oshape[a] : rlx_mul_checked(g, node, in, s);
            int64_t total = full - out;
            pb = mode == 2 ? floor_half(total) : total - floor_half(total);
            pe = total - pb;
        } else {
            pb = mode == 1 ? 0 : pads[a];
            pe = mode == 1 ? 0 : pads[a + ns];
            out = full - pb - pe;   /* pads are >= 0, full > 0: no overflow */
            if (out < 1)
                rlx_node_error(g, node, "output axis %d would be %lld: input %lld, kernel %lld (dilated %lld), stride %lld, "
                               "pads %lld+%lld",
                               2 + a, (long long)out, (long long)in, (long long)w->k[a], (long long)dk, (long long)s,
                               (long long)pb, (long long)pe);
        }
        w->pad_begin[a] = pb;
        w->pad_end[a] = pe;
        w->out[a] = out;
    }
}

/* ---- inference ---- */

static void infer_pool(const RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, n->op == RLX_OP_MAXPOOL ? T_NUMERIC : T_FLOAT);
    RlxWindow w;
    rlx_conv_geometry(g, node, &w);
    if (n->op == RLX_OP_MAXPOOL) {
        int64_t so = rlx_attr_i(n, "storage_order", 0);
        if (so != 0 && so != 1) rlx_node_error(g, node, "storage_order must be 0 or 1, not %lld", (long long)so);
    }
    if (n->op == RLX_OP_LPPOOL && rlx_attr_i(n, "p", 2) < 1)
        rlx_node_error(g, node, "p must be >= 1, not %lld", (long long)rlx_attr_i(n, "p", 2));
    outs[0] = (RlxShape){x->dtype, x->rank, {0}};
    memcpy(outs[0].dims, x->dims, sizeof outs[0].dims);
    for (int a = 0; a < w.nsp; a++) outs[0].dims[2 + a] = w.out[a];
    if (n->nout > 1) {
        /* MaxPool's indices of the maxima */
        outs[1] = outs[0];
        outs[1].dtype = RLX_I64;
    }
}

static void infer_global_pool(const RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    if (x->rank < 3) rlx_node_error(g, node, "input must have rank >= 3 (N, C, spatial...), not %d", x->rank);
    if (n->op == RLX_OP_GLOBALLPPOOL && rlx_attr_i(n, "p", 2) < 1)
        rlx_node_error(g, node, "p must be >= 1, not %lld", (long long)rlx_attr_i(n, "p", 2));
    outs[0] = (RlxShape){x->dtype, x->rank, {0}};
    memcpy(outs[0].dims, x->dims, sizeof outs[0].dims);
    for (int i = 2; i < x->rank; i++) outs[0].dims[i] = 1;
}

static void infer_convtranspose(const RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0), *wt = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    rlx_want_same_dtype(g, node, 0, 1);
    RlxWindow w;
    convtranspose_geometry(g, node, &w);
    int64_t group = rlx_attr_i(n, "group", 1);
    if (group < 1) rlx_node_error(g, node, "group must be >= 1, not %lld", (long long)group);
    if (wt->dims[0] != x->dims[1])
        rlx_node_error(g, node, "weights %s must have the input's %lld channels first", rlx_shape_str(wt),
                       (long long)x->dims[1]);
    if (x->dims[1] % group)
        rlx_node_error(g, node, "group %lld does not divide the input channels (%lld)", (long long)group,
                       (long long)x->dims[1]);
    int64_t channels = rlx_mul_checked(g, node, wt->dims[1], group);
    if (rlx_has_input(g, node, 2)) {
        const RlxValue *bias = rlx_input(g, node, 2);
        rlx_want_same_dtype(g, node, 0, 2);
        if (bias->rank != 1 || bias->dims[0] != channels)
            rlx_node_error(g, node, "bias %s must have shape [%lld]", rlx_shape_str(bias), (long long)channels);
    }
    outs[0] = (RlxShape){x->dtype, x->rank, {0}};
    outs[0].dims[0] = x->dims[0];
    outs[0].dims[1] = channels;
    for (int a = 0; a < w.nsp; a++) outs[0].dims[2 + a] = w.out[a];
}

int rlx_infer_conv(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_MAXPOOL: case RLX_OP_AVERAGEPOOL: case RLX_OP_LPPOOL: infer_pool(g, node, outs); return 1;
    case RLX_OP_GLOBALAVERAGEPOOL: case RLX_OP_GLOBALMAXPOOL: case RLX_OP_GLOBALLPPOOL:
        infer_global_pool(g, node, outs);
        return 1;
    case RLX_OP_CONVTRANSPOSE: infer_convtranspose(g, node, outs); return 1;
    default: return 0;
    }
}

/* ---- lowering ---- */

/* pool_nd op codes */
enum { POOL_MAX, POOL_AVG, POOL_LP };

static RlxThunk *pool_thunk(RlxLower *L, int node, int op) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]];
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_pool_nd, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "op", op);
    rlx_tk_i(t, "nc", x->dims[0] * x->dims[1]);
    if (op == POOL_LP) rlx_tk_f(t, "p", (double)rlx_attr_i(n, "p", 2));
    return t;
}

static void lower_pool(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]], *y = &L->g->v[n->out[0]];
    RlxWindow w;
    rlx_conv_geometry(L->g, node, &w);
    if (!rlx_value_numel(y)) return;
    int op = n->op == RLX_OP_MAXPOOL ? POOL_MAX : n->op == RLX_OP_AVERAGEPOOL ? POOL_AVG : POOL_LP;
    RlxThunk *t = pool_thunk(L, node, op);
    int64_t v[3];
    int ns = w.nsp;
    pad3(x->dims + 2, ns, 1, v), rlx_tk_a(t, "in_dims", v, 3);
    pad3(y->dims + 2, ns, 1, v), rlx_tk_a(t, "out_dims", v, 3);
    pad3(w.k, ns, 1, v), rlx_tk_a(t, "k", v, 3);
    pad3(w.s, ns, 1, v), rlx_tk_a(t, "s", v, 3);
    pad3(w.d, ns, 1, v), rlx_tk_a(t, "d", v, 3);
    pad3(w.pad_begin, ns, 0, v), rlx_tk_a(t, "pb", v, 3);
    pad3(w.pad_end, ns, 0, v), rlx_tk_a(t, "pe", v, 3);
    if (op == POOL_AVG) rlx_tk_i(t, "count_include_pad", rlx_attr_i(n, "count_include_pad", 0) != 0);
    if (op == POOL_MAX && n->nout > 1 && n->out[1] >= 0) {
        rlx_tk_out(L, t, n->out[1]);
        rlx_tk_i(t, "has_indices", 1);
        rlx_tk_i(t, "storage_order", rlx_attr_i(n, "storage_order", 0));
    }
}

/* One window over all spatial axes, flattened. */
static void lower_global_pool(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]];
    if (!rlx_value_numel(&L->g->v[n->out[0]])) return;
    int op = n->op == RLX_OP_GLOBALMAXPOOL ? POOL_MAX : n->op == RLX_OP_GLOBALAVERAGEPOOL ? POOL_AVG : POOL_LP;
    RlxThunk *t = pool_thunk(L, node, op);
    int64_t plane[3] = {1, 1, rlx_prod(x->dims, 2, x->rank)}, ones[3] = {1, 1, 1};
    rlx_tk_a(t, "in_dims", plane, 3);
    rlx_tk_a(t, "out_dims", ones, 3);
    rlx_tk_a(t, "k", plane, 3);
    rlx_tk_a(t, "s", ones, 3);
    rlx_tk_a(t, "d", ones, 3);
}

static void lower_convtranspose(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]], *y = &L->g->v[n->out[0]];
    RlxWindow w;
    convtranspose_geometry(L->g, node, &w);
    if (!rlx_value_numel(y)) return;
    int has_bias = rlx_has_input(L->g, node, 2);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_conv_transpose_f32, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    if (has_bias) rlx_tk_in(L, t, n->in[2]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "oc", y->dims[1]);
    rlx_tk_i(t, "group", rlx_attr_i(n, "group", 1));
    rlx_tk_i(t, "has_bias", has_bias);
    int64_t v[3];
    int ns = w.nsp;
    pad3(x->dims + 2, ns, 1, v), rlx_tk_a(t, "in_dims", v, 3);
    pad3(y->dims + 2, ns, 1, v), rlx_tk_a(t, "out_dims", v, 3);
    pad3(w.k, ns, 1, v), rlx_tk_a(t, "k", v, 3);
    pad3(w.s, ns, 1, v), rlx_tk_a(t, "s", v, 3);
    pad3(w.d, ns, 1, v), rlx_tk_a(t, "d", v, 3);
    pad3(w.pad_begin, ns, 0, v), rlx_tk_a(t, "pb", v, 3);
}

int rlx_lower_conv(RlxLower *L, int node) {
    switch (L->g->n[node].op) {
    case RLX_OP_MAXPOOL: case RLX_OP_AVERAGEPOOL: case RLX_OP_LPPOOL: lower_pool(L, node); return 1;
    case RLX_OP_GLOBALAVERAGEPOOL: case RLX_OP_GLOBALMAXPOOL: case RLX_OP_GLOBALLPPOOL:
        lower_global_pool(L, node);
        return 1;
    case RLX_OP_CONVTRANSPOSE: lower_convtranspose(L, node); return 1;
    default: return 0;
    }
}
