/* ext_index.c - the index op family: Resize (Upsample and Resize-10 arrive
 * here rewritten by the ONNX importer), GatherElements, GatherND,
 * ScatterElements, ScatterND.
 *
 * Inference checks every shape relation ONNX states (indices of the data's
 * rank, index dims inside the data's outside the axis, the GatherND/ScatterND
 * tuple length and batch dims, updates shaped like what they update) and
 * the attribute strings. Indices are data: they are range-checked here when
 * they are constants (so a bad index is a compile-time error naming the
 * node) and by the kernels at run time otherwise (RLX_E_RANGE).
 *
 * Resize's output shape comes from its constant 'sizes', or floor(dims *
 * scales) from its constant 'scales' (an empty roi/scales/sizes counts as
 * absent, as ONNX allows). When scales or sizes are computed at run time but
 * the node's output is a graph output whose shape the model declares, that
 * declared shape is the planned one: the kernel reads scales/sizes/roi at
 * run time (as it always does) and fails with RLX_E_ARG if they disagree
 * with it, so a shape is never guessed. All kernels are in
 * runtime_min/rk_index.c.
 *
 * rlx_infer_index and rlx_lower_index return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include <math.h>
#include <string.h>

#include "passes.h"

/* ---- attribute strings, in the kernels' encodings ---- */

static int pick(const RlxGraph *g, int node, const char *attr, const char *dflt, const char *const *names, int n) {
    const char *s = rlx_attr_s(&g->n[node], attr, dflt);
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    RlxBuf b = {0};
    for (int i = 0; i < n; i++) rlx_buf_printf(&b, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "", names[i]);
    rlx_node_error(g, node, "%s '%s' is not one of %s", attr, s, b.data);
    return -1;
}

static const char *const resize_modes[] = {"nearest", "linear", "cubic"};
static const char *const coord_modes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                          "tf_half_pixel_for_nn", "tf_crop_and_resize"};
static const char *const nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
static const char *const reductions[] = {"none", "add", "mul"};
enum { COORD_TF_CROP_AND_RESIZE = 5 };

static int resize_mode(const RlxGraph *g, int node) { return pick(g, node, "mode", "nearest", resize_modes, 3); }
static int coord_mode(const RlxGraph *g, int node) {
    return pick(g, node, "coordinate_transformation_mode", "half_pixel", coord_modes, 6);
}
static int nearest_mode(const RlxGraph *g, int node) {
    return pick(g, node, "nearest_mode", "round_prefer_floor", nearest_modes, 4);
}
static int reduction(const RlxGraph *g, int node) { return pick(g, node, "reduction", "none", reductions, 3); }

/* ---- shared checks ---- */

static void set_out(RlxShape *out, RlxDType dt, int rank, const int64_t *dims) {
    out->dtype = dt;
    out->rank = rank;
    if (rank) memcpy(out->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* Constant indices (input k) must lie in [-n, n) for the axis each one
 * indexes: dims[i % period] (period 1 = one axis). */
static void check_const_indices(const RlxGraph *g, int node, int k, const int64_t *dims, int64_t period) {
    if (!rlx_is_const(g, g->n[node].in[k])) return;
    const RlxValue *idx = rlx_input(g, node, k);
    int64_t count = rlx_value_numel(idx);
    for (int64_t i = 0; i < count; i++) {
        int64_t j = rlx_weight_i64(idx, i), n = dims[period > 1 ? i % period : 0];
        if (j < -n || j >= n)
            rlx_node_error(g, node, "index %lld (element %lld of '%s') is out of range for an axis of size %lld",
                           (long long)j, (long long)i, idx->name, (long long)n);
    }
}

/* GatherElements / ScatterElements: indices of the data's rank, inside the
 * data on every axis but `axis`; returns the normalized axis. */
static int elements_shapes(const RlxGraph *g, int node) {
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 1, T_INDEX);
    if (x->rank < 1) rlx_node_error(g, node, "input '%s' must have rank >= 1, not a scalar", x->name);
    if (idx->rank != x->rank)
        rlx_node_error(g, node, "indices '%s' %s must have the rank of data '%s' %s", idx->name, rlx_shape_str(idx),
                       x->name, rlx_shape_str(x));
    int axis = rlx_norm_axis(g, node, rlx_attr_i(&g->n[node], "axis", 0), x->rank);
    for (int d = 0; d < x->rank; d++)
        if (d != axis && idx->dims[d] > x->dims[d])
            rlx_node_error(g, node, "indices '%s' %s exceed data '%s' %s on axis %d", idx->name, rlx_shape_str(idx),
                           x->name, rlx_shape_str(x), d);
    check_const_indices(g, node, 1, &x->dims[axis], 1);
    return axis;
}

static void infer_gather_elements(RlxGraph *g, int node, RlxShape *outs) {
    elements_shapes(g, node);
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    set_out(&outs[0], x->dtype, idx->rank, idx->dims);
}

static void want_updates(const RlxGraph *g, int node, int rank, const int64_t *dims) {
    const RlxValue *u = rlx_input(g, node, 2);
    rlx_want_same_dtype(g, node, 0, 2);
    int ok = u->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = u->dims[i] == dims[i];
    if (!ok)
        rlx_node_error(g, node, "updates '%s' %s must have shape %s", u->name, rlx_shape_str(u),
                       rlx_dims_str(rank, dims));
}

static void infer_scatter_elements(RlxGraph *g, int node, RlxShape *outs) {
    elements_shapes(g, node);
    reduction(g, node);
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    want_updates(g, node, idx->rank, idx->dims);
    set_out(&outs[0], x->dtype, x->rank, x->dims);
}

/* GatherND / ScatterND: the tuple length k = last dim of the indices. */
static int64_t nd_tuple(const RlxGraph *g, int node, int batch_dims) {
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 1, T_INDEX);
    if (x->rank < 1 || idx->rank < 1)
        rlx_node_error(g, node, "data '%s' and indices '%s' must have rank >= 1", x->name, idx->name);
    int64_t k = idx->dims[idx->rank - 1];
    if (k > x->rank - batch_dims)
        rlx_node_error(g, node, "index tuples of %lld entries (last dim of '%s' %s) exceed the %d indexable axes of '%s' %s",
                       (long long)k, idx->name, rlx_shape_str(idx), x->rank - batch_dims, x->name, rlx_shape_str(x));
    check_const_indices(g, node, 1, x->dims + batch_dims, k);
    return k;
}

static void infer_gather_nd(RlxGraph *g, int node, RlxShape *outs) {
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    int64_t b = rlx_attr_i(&g->n[node], "batch_dims", 0);
    int q = idx->rank, r = x->rank;
    if (b < 0 || b >= (q < r ? q : r))
        rlx_node_error(g, node, "batch_dims %lld must be in [0, %d) for data %s and indices %s", (long long)b,
                       q < r ? q : r, rlx_shape_str(x), rlx_shape_str(idx));
    for (int i = 0; i < b; i++)
        if (x->dims[i] != idx->dims[i])
            rlx_node_error(g, node, "batch axis %d differs: data %s, indices %s", i, rlx_shape_str(x),
                           rlx_shape_str(idx));
    int64_t k = nd_tuple(g, node, (int)b);
    if (k < 1) rlx_node_error(g, node, "index tuples must have at least 1 entry (last dim of indices %s)", rlx_shape_str(idx));
    int64_t dims[2 * RLX_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < q - 1; i++) dims[rank++] = idx->dims[i];
    for (int i = (int)(b + k); i < r; i++) dims[rank++] = x->dims[i];
    if (rank > RLX_MAX_RANK) rlx_node_error(g, node, "output rank %d exceeds the maximum %d", rank, RLX_MAX_RANK);
    set_out(&outs[0], x->dtype, rank, dims);
}

static void infer_scatter_nd(RlxGraph *g, int node, RlxShape *outs) {
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    reduction(g, node);
    int64_t k = nd_tuple(g, node, 0);
    int64_t dims[2 * RLX_MAX_RANK];
    int rank = 0;
    for (int i = 0; i < idx->rank - 1; i++) dims[rank++] = idx->dims[i];
    for (int i = (int)k; i < x->rank; i++) dims[rank++] = x->dims[i];
    if (rank > RLX_MAX_RANK) rlx_node_error(g, node, "updates rank %d exceeds the maximum %d", rank, RLX_MAX_RANK);
    want_updates(g, node, rank, dims);
    set_out(&outs[0], x->dtype, x->rank, x->dims);
}

/* ---- Resize ---- */

/* A present, non-empty optional input (ONNX passes "don't use" as empty). */
static int given(const RlxGraph *g, int node, int k) {
    return rlx_has_input(g, node, k) && rlx_value_numel(rlx_input(g, node, k)) > 0;
}

static void want_vector(const RlxGraph *g, int node, int k, const char *role, int64_t len) {
    const RlxValue *v = rlx_input(g, node, k);
    if (v->rank != 1 || v->dims[0] != len)
        rlx_node_error(g, node, "input '%s' (value '%s') must have shape [%lld], not %s", role, v->name, (long long)len,
                       rlx_shape_str(v));
}

/* The shape the model declares for graph output `value`, or NULL. */
static const RlxDecl *declared_shape(const RlxGraph *g, int value) {
    if (!g->output_decl) return NULL;
    for (int k = 0; k < g->noutputs; k++)
        if (g->outputs[k] == value && g->output_decl[k].rank >= 0) return &g->output_decl[k];
    return NULL;
}

static void infer_resize(RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0);
    int r = x->rank, mode = resize_mode(g, node), coord = coord_mode(g, node);
    nearest_mode(g, node);
    if (r < 1) rlx_node_error(g, node, "input '%s' must have rank >= 1, not a scalar", x->name);
    if (mode != 0 && x->dtype == RLX_BOOL)
        rlx_node_error(g, node, "mode '%s' interpolates numbers; input '%s' is bool", resize_modes[mode], x->name);
    int has_scales = given(g, node, 2), has_sizes = given(g, node, 3);
    if (has_scales == has_sizes)
        rlx_node_error(g, node, "exactly one of 'scales' and 'sizes' must be given (and non-empty)");
    if (given(g, node, 1)) {
        const RlxValue *roi = rlx_input(g, node, 1);
        if (roi->dtype != RLX_F32 && roi->dtype != RLX_F64 && roi->dtype != RLX_F16)
            rlx_node_error(g, node, "roi '%s' must be f16, f32 or f64, not %s", roi->name, rlx_dtype_name(roi->dtype));
        want_vector(g, node, 1, "roi", 2 * (int64_t)r);
    } else if (coord == COORD_TF_CROP_AND_RESIZE) {
        rlx_node_error(g, node, "coordinate_transformation_mode tf_crop_and_resize needs the 'roi' input");
    }
    int k = has_scales ? 2 : 3;
    const char *role = has_scales ? "scales" : "sizes";
    const RlxValue *sv = rlx_input(g, node, k);
    if (sv->dtype != (has_scales ? RLX_F32 : RLX_I64))
        rlx_node_error(g, node, "input '%s' (value '%s') must be %s, not %s", role, sv->name, has_scales ? "f32" : "i64",
                       rlx_dtype_name(sv->dtype));
    want_vector(g, node, k, role, r);
    int64_t dims[RLX_MAX_RANK];
    const RlxDecl *decl = NULL;
    if (!rlx_is_const(g, n->in[k]) && (decl = declared_shape(g, n->out[0])) != NULL) {
        if (decl->rank != r)
            rlx_node_error(g, node, "output '%s' is declared with rank %d, but the input has rank %d",
                           g->v[n->out[0]].name, decl->rank, r);
        memcpy(dims, decl->dims, sizeof(int64_t) * (size_t)r);
    } else {
        rlx_want_const(g, node, k, role);
        for (int a = 0; a < r; a++) {
            if (has_sizes) {
                dims[a] = rlx_weight_i64(sv, a);
                if (dims[a] < 0) rlx_node_error(g, node, "sizes has the negative size %lld", (long long)dims[a]);
                continue;
            }
            /* the kernel's rule: an f32 scale, times the dim in double, floored */
            float s = (float)rlx_weight_f64(sv, a);
            double d = floor((double)s * (double)x->dims[a]);
            if (!(s > 0) || isinf(s)) rlx_node_error(g, node, "scale %g of axis %d must be positive and finite", (double)s, a);
            if (!(d < 4.0e18)) rlx_node_error(g, node, "scale %g makes axis %d too large", (double)s, a);
            dims[a] = (int64_t)d;
        }
    }
    for (int a = 0; a < r; a++)
        if (x->dims[a] == 0 && dims[a] > 0)
            rlx_node_error(g, node, "axis %d of input '%s' %s is empty: nothing to resize to %lld", a, x->name,
                           rlx_shape_str(x), (long long)dims[a]);
    set_out(&outs[0], x->dtype, r, dims);
}

int rlx_infer_index(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_RESIZE: infer_resize(g, node, outs); return 1;
    case RLX_OP_GATHERELEMENTS: infer_gather_elements(g, node, outs); return 1;
    case RLX_OP_GATHERND: infer_gather_nd(g, node, outs); return 1;
    case RLX_OP_SCATTERELEMENTS: infer_scatter_elements(g, node, outs); return 1;
    case RLX_OP_SCATTERND: infer_scatter_nd(g, node, outs); return 1;
    default: return 0;
    }
}

/* ---- lowering ---- */

static const RlxValue *val(const RlxLower *L, int v) { return &L->g->v[v]; }

static void lower_resize(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    if (!rlx_value_numel(y)) return;
    int has_roi = given(L->g, node, 1), has_scales = given(L->g, node, 2);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_resize, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, has_roi ? n->in[1] : -1);
    rlx_tk_in(L, t, has_scales ? n->in[2] : -1);
    rlx_tk_in(L, t, has_scales ? -1 : n->in[3]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "rank", x->rank);
    rlx_tk_a(t, "in_dims", x->dims, x->rank);
    rlx_tk_a(t, "out_dims", y->dims, y->rank);
    rlx_tk_i(t, "mode", resize_mode(L->g, node));
    rlx_tk_i(t, "coord_mode", coord_mode(L->g, node));
    rlx_tk_i(t, "nearest_mode", nearest_mode(L->g, node));
    rlx_tk_i(t, "exclude_outside", rlx_attr_i(n, "exclude_outside", 0) != 0);
    rlx_tk_f(t, "cubic_a", rlx_attr_f(n, "cubic_coeff_a", -0.75));
    rlx_tk_f(t, "extrapolation", rlx_attr_f(n, "extrapolation_value", 0.0));
    rlx_tk_i(t, "roi_dtype", has_roi ? val(L, n->in[1])->dtype : RLX_F32);
}

static void lower_elements(RlxLower *L, int node, int scatter) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *idx = val(L, n->in[1]);
    int axis = rlx_norm_axis(L->g, node, rlx_attr_i(n, "axis", 0), x->rank);
    if (!rlx_value_numel(val(L, n->out[0]))) return;
    RlxThunk *t = rlx_thunk_new(L->tl, scatter ? RLX_K_scatter_elements : RLX_K_gather_elements, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    if (scatter) rlx_tk_in(L, t, n->in[2]);
    rlx_tk_out(L, t, n->out[0]);
    if (scatter) {
        rlx_tk_i(t, "dtype", x->dtype);
        rlx_tk_i(t, "reduction", reduction(L->g, node));
    } else {
        rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    }
    rlx_tk_i(t, "rank", x->rank);
    rlx_tk_a(t, "data_dims", x->dims, x->rank);
    rlx_tk_a(t, "idx_dims", idx->dims, idx->rank);
    rlx_tk_i(t, "axis", axis);
    rlx_tk_i(t, "idx_dtype", idx->dtype);
}

static void lower_nd(RlxLower *L, int node, int scatter) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *idx = val(L, n->in[1]);
    if (!rlx_value_numel(val(L, n->out[0]))) return;
    int b = scatter ? 0 : (int)rlx_attr_i(n, "batch_dims", 0), q = idx->rank;
    int k = (int)idx->dims[q - 1];
    RlxThunk *t = rlx_thunk_new(L->tl, scatter ? RLX_K_scatter_nd : RLX_K_gather_nd, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    if (scatter) rlx_tk_in(L, t, n->in[2]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "k", k);
    rlx_tk_a(t, "dims", x->dims + b, k);
    rlx_tk_i(t, "slice", rlx_prod(x->dims, b + k, x->rank));
    rlx_tk_i(t, "idx_dtype", idx->dtype);
    if (scatter) {
        rlx_tk_i(t, "dtype", x->dtype);
        rlx_tk_i(t, "numel", rlx_value_numel(x));
        rlx_tk_i(t, "nupd", rlx_prod(idx->dims, 0, q - 1));
        rlx_tk_i(t, "reduction", reduction(L->g, node));
    } else {
        rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
        rlx_tk_i(t, "batch", rlx_prod(x->dims, 0, b));
        rlx_tk_i(t, "nper", rlx_prod(idx->dims, b, q - 1));
    }
}

int rlx_lower_index(RlxLower *L, int node) {
    switch (L->g->n[node].op) {
    case RLX_OP_RESIZE: lower_resize(L, node); return 1;
    case RLX_OP_GATHERELEMENTS: lower_elements(L, node, 0); return 1;
    case RLX_OP_SCATTERELEMENTS: lower_elements(L, node, 1); return 1;
    case RLX_OP_GATHERND: lower_nd(L, node, 0); return 1;
    case RLX_OP_SCATTERND: lower_nd(L, node, 1); return 1;
    default: return 0;
    }
}
