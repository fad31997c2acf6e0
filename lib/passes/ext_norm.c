/* ext_norm.c - the norm op family: Hardmax, InstanceNormalization,
 * LpNormalization, MeanVarianceNormalization, LRN.
 *
 * rlx_infer_norm and rlx_lower_norm return 1 for the family's own ops and
 * 0 for any other (see passes.h). The family's reductions (ReduceL1, ...,
 * ArgMin) share the core's Reduce/ArgMax code in infer.c and lower.c, which
 * already handles keepdims, axes inputs and the reduce kernel; the ops here
 * keep their input's shape and each map to one kernel of rk_norm.c.
 */
#include <string.h>

#include "passes.h"

static void same_shape(const RlxValue *x, RlxShape *out) {
    out->dtype = x->dtype;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
}

/* The axis of Hardmax, and the (outer, axis_len, inner) split it works on:
 * legacy_2d (ONNX < 13) coerces the input to 2-D at axis first. */
static void hardmax_split(const RlxGraph *g, int node, int64_t split[3]) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0);
    int legacy = rlx_attr_i(n, "legacy_2d", 0) != 0;
    if (x->rank < 1) rlx_node_error(g, node, "input must have rank >= 1");
    int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", -1), x->rank);
    split[0] = rlx_prod_checked(g, node, x->dims, 0, axis);
    if (legacy) {
        split[1] = rlx_prod_checked(g, node, x->dims, axis, x->rank);
        split[2] = 1;
    } else {
        split[1] = x->dims[axis];
        split[2] = rlx_prod_checked(g, node, x->dims, axis + 1, x->rank);
    }
}

static void infer_hardmax(const RlxGraph *g, int node, RlxShape *out) {
    int64_t split[3];
    rlx_want_dtype(g, node, 0, T_FLOAT);
    hardmax_split(g, node, split);
    same_shape(rlx_input(g, node, 0), out);
}

static void infer_instancenorm(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    if (x->rank < 2) rlx_node_error(g, node, "input must have rank >= 2 (N, C, ...), not %d", x->rank);
    static const char *const roles[3] = {"input", "scale", "B"};
    for (int k = 1; k < 3; k++) {
        const RlxValue *p = rlx_input(g, node, k);
        rlx_want_same_dtype(g, node, 0, k);
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            rlx_node_error(g, node, "%s '%s' must have shape [%lld], not %s", roles[k], p->name, (long long)x->dims[1],
                           rlx_shape_str(p));
    }
    same_shape(x, out);
}

static void infer_lpnorm(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    if (x->rank < 1) rlx_node_error(g, node, "input must have rank >= 1");
    rlx_norm_axis(g, node, rlx_attr_i(n, "axis", -1), x->rank);
    int64_t p = rlx_attr_i(n, "p", 2);
    if (p != 1 && p != 2) rlx_node_error(g, node, "p must be 1 or 2, not %lld", (long long)p);
    same_shape(x, out);
}

/* MeanVarianceNormalization's axes attribute (default [0, 2, 3]) as a mask. */
static void mvn_mask(const RlxGraph *g, int node, int mask[]) {
    const RlxValue *x = rlx_input(g, node, 0);
    const RlxAttr *a = rlx_attr_get(&g->n[node], "axes");
    static const int64_t dflt[3] = {0, 2, 3};
    if (a && a->kind != RLX_A_INTS) rlx_node_error(g, node, "attribute 'axes' must be a list of ints");
    if (!a && x->rank != 4)
        rlx_node_error(g, node, "without 'axes' the input must have rank 4 (axes 0, 2, 3), not %d", x->rank);
    rlx_axes_mask(g, node, a ? a->ints : dflt, a ? a->n : 3, x->rank, mask);
}

static void infer_mvn(const RlxGraph *g, int node, RlxShape *out) {
    int mask[RLX_MAX_RANK];
    rlx_want_dtype(g, node, 0, T_FLOAT);
    mvn_mask(g, node, mask);
    same_shape(rlx_input(g, node, 0), out);
}

static void infer_lrn(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    if (x->rank < 2) rlx_node_error(g, node, "input must have rank >= 2 (N, C, ...), not %d", x->rank);
    int64_t size = rlx_attr_i(&g->n[node], "size", 1);
    if (size < 1) rlx_node_error(g, node, "size must be >= 1, not %lld", (long long)size);
    same_shape(x, out);
}

int rlx_infer_norm(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_HARDMAX: infer_hardmax(g, node, outs); return 1;
    case RLX_OP_INSTANCENORM: infer_instancenorm(g, node, outs); return 1;
    case RLX_OP_LPNORM: infer_lpnorm(g, node, outs); return 1;
    case RLX_OP_MVN: infer_mvn(g, node, outs); return 1;
    case RLX_OP_LRN: infer_lrn(g, node, outs); return 1;
    default: return 0;
    }
}

/* ---- lowering ---- */

static RlxThunk *unary_thunk(RlxLower *L, int node, RlxKernelKind kind) {
    const RlxNode *n = &L->g->n[node];
    RlxThunk *t = rlx_thunk_new(L->tl, kind, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    return t;
}

int rlx_lower_norm(RlxLower *L, int node) {
    RlxGraph *g = L->g;
    const RlxNode *n = &g->n[node];
    switch (n->op) {
    case RLX_OP_HARDMAX:
    case RLX_OP_INSTANCENORM:
    case RLX_OP_LPNORM:
    case RLX_OP_MVN:
    case RLX_OP_LRN: break;
    default: return 0;
    }
    const RlxValue *x = rlx_input(g, node, 0);
    if (!rlx_value_numel(x)) return 1;   /* nothing to compute for an empty tensor */
    RlxThunk *t;
    switch (n->op) {
    case RLX_OP_HARDMAX: {
        int64_t split[3];
        hardmax_split(g, node, split);
        t = unary_thunk(L, node, RLX_K_hardmax);
        rlx_tk_i(t, "dtype", x->dtype);
        rlx_tk_i(t, "outer", split[0]);
        rlx_tk_i(t, "axis_len", split[1]);
        rlx_tk_i(t, "inner", split[2]);
        break;
    }
    case RLX_OP_INSTANCENORM:
        t = rlx_thunk_new(L->tl, RLX_K_instancenorm_f32, node);
        for (int k = 0; k < 3; k++) rlx_tk_in(L, t, n->in[k]);
        rlx_tk_out(L, t, n->out[0]);
        rlx_tk_i(t, "n", x->dims[0]);
        rlx_tk_i(t, "c", x->dims[1]);
        rlx_tk_i(t, "hw", rlx_prod(x->dims, 2, x->rank));
        rlx_tk_f(t, "eps", rlx_attr_f(n, "epsilon", 1e-5));
        break;
    case RLX_OP_LPNORM: {
        int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", -1), x->rank);
        t = unary_thunk(L, node, RLX_K_lpnorm_f32);
        rlx_tk_i(t, "outer", rlx_prod(x->dims, 0, axis));
        rlx_tk_i(t, "axis_len", x->dims[axis]);
        rlx_tk_i(t, "inner", rlx_prod(x->dims, axis + 1, x->rank));
        rlx_tk_i(t, "p", rlx_attr_i(n, "p", 2));
        break;
    }
    case RLX_OP_MVN: {
        int mask[RLX_MAX_RANK];
        int64_t m64[RLX_MAX_RANK];
        mvn_mask(g, node, mask);
        for (int i = 0; i < x->rank; i++) m64[i] = mask[i];
        t = unary_thunk(L, node, RLX_K_mvn_f32);
        rlx_tk_i(t, "rank", x->rank);
        rlx_tk_a(t, "dims", x->dims, x->rank);
        rlx_tk_a(t, "mask", m64, x->rank);
        break;
    }
    default: /* RLX_OP_LRN */
        t = unary_thunk(L, node, RLX_K_lrn_f32);
        rlx_tk_i(t, "n", x->dims[0]);
        rlx_tk_i(t, "c", x->dims[1]);
        rlx_tk_i(t, "hw", rlx_prod(x->dims, 2, x->rank));
        rlx_tk_i(t, "size", rlx_attr_i(n, "size", 1));
        rlx_tk_f(t, "alpha", rlx_attr_f(n, "alpha", 1e-4));
        rlx_tk_f(t, "beta", rlx_attr_f(n, "beta", 0.75));
        rlx_tk_f(t, "bias", rlx_attr_f(n, "bias", 1.0));
        break;
    }
    return 1;
}
