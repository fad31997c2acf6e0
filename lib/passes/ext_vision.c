/* ext_vision.c - the vision op family: GridSample, RoiAlign, MaxUnpool, Det.
 *
 * Inference checks the shapes ONNX states (GridSample-16: 4-D X and grid
 * (N, H_out, W_out, 2); RoiAlign: 4-D X, rois (num_rois, 4) of X's dtype,
 * i64 batch_indices (num_rois); MaxUnpool: indices shaped like X, a window
 * per spatial axis; Det: square matrices in the last two axes) and the
 * attribute strings, and computes the output shape. MaxUnpool's indices
 * address the unpooled shape, (in - 1) * stride + kernel - pads per spatial
 * axis; that is the output's shape, unless a constant output_shape input
 * asks for a larger one, which holds it at its origin (the reference's
 * rule). Indices that are constants (MaxUnpool's flat indices, RoiAlign's
 * image indices) are range-checked here, so a bad one is
 * a compile-time error naming the node; the kernels check them again at run
 * time (RLX_E_RANGE). Sampling kernels need a non-empty image whenever they
 * produce anything, so an empty spatial axis is refused then.
 *
 * Each op lowers to one kernel of runtime_min/rk_vision.c; Det's kernel
 * factors each matrix in turn in scratch for one n x n matrix of doubles
 * (which the C target's select reserves).
 *
 * rlx_infer_vision and rlx_lower_vision return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
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

static const char *const gs_modes[] = {"bilinear", "nearest", "bicubic"};
static const char *const gs_paddings[] = {"zeros", "border", "reflection"};
static const char *const roi_modes[] = {"avg", "max"};
static const char *const roi_coords[] = {"output_half_pixel", "half_pixel"};

static int gs_mode(const RlxGraph *g, int node) { return pick(g, node, "mode", "bilinear", gs_modes, 3); }
static int gs_padding(const RlxGraph *g, int node) { return pick(g, node, "padding_mode", "zeros", gs_paddings, 3); }
static int roi_mode(const RlxGraph *g, int node) { return pick(g, node, "mode", "avg", roi_modes, 2); }
static int roi_half_pixel(const RlxGraph *g, int node) {
    return pick(g, node, "coordinate_transformation_mode", "half_pixel", roi_coords, 2);
}

static void set_out(RlxShape *out, RlxDType dt, int rank, const int64_t *dims) {
    out->dtype = dt;
    out->rank = rank;
    if (rank) memcpy(out->dims, dims, sizeof(int64_t) * (size_t)rank);
}

static void want_rank_exact(const RlxGraph *g, int node, int k, int rank, const char *what) {
    const RlxValue *v = rlx_input(g, node, k);
    if (v->rank != rank)
        rlx_node_error(g, node, "input '%s' must have rank %d (%s), not %d (shape %s)", v->name, rank, what, v->rank,
                       rlx_shape_str(v));
}

static void want_i64(const RlxGraph *g, int node, int k, const char *role) {
    const RlxValue *v = rlx_input(g, node, k);
    if (v->dtype != RLX_I64)
        rlx_node_error(g, node, "%s '%s' must be i64, not %s", role, v->name, rlx_dtype_name(v->dtype));
}

/* Constant i64 input k: every entry in [0, n). */
static void check_const_range(const RlxGraph *g, int node, int k, int64_t n, const char *role) {
    if (!rlx_is_const(g, g->n[node].in[k])) return;
    const RlxValue *v = rlx_input(g, node, k);
    int64_t count = rlx_value_numel(v);
    for (int64_t i = 0; i < count; i++) {
        int64_t j = rlx_weight_i64(v, i);
        if (j < 0 || j >= n)
            rlx_node_error(g, node, "%s %lld (element %lld of '%s') is outside [0, %lld)", role, (long long)j,
                           (long long)i, v->name, (long long)n);
    }
}

/* ---- inference ---- */

static void infer_grid_sample(RlxGraph *g, int node, RlxShape *outs) {
    const RlxValue *x = rlx_input(g, node, 0), *grid = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    rlx_want_dtype(g, node, 1, T_FLOAT);
    gs_mode(g, node);
    gs_padding(g, node);
    want_rank_exact(g, node, 0, 4, "N, C, H, W");
    want_rank_exact(g, node, 1, 4, "N, H_out, W_out, 2");
    if (grid->dims[0] != x->dims[0] || grid->dims[3] != 2)
        rlx_node_error(g, node, "grid '%s' %s must have shape [%lld, H_out, W_out, 2] for input '%s' %s", grid->name,
                       rlx_shape_str(grid), (long long)x->dims[0], x->name, rlx_shape_str(x));
    int64_t dims[4] = {x->dims[0], x->dims[1], grid->dims[1], grid->dims[2]};
    if (rlx_prod_checked(g, node, dims, 0, 4) > 0 && (x->dims[2] == 0 || x->dims[3] == 0))
        rlx_node_error(g, node, "input '%s' %s has no pixels to sample", x->name, rlx_shape_str(x));
    set_out(&outs[0], x->dtype, 4, dims);
}

static void infer_roi_align(RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0), *rois = rlx_input(g, node, 1), *bi = rlx_input(g, node, 2);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    rlx_want_same_dtype(g, node, 0, 1);
    want_i64(g, node, 2, "batch_indices");
    roi_mode(g, node);
    roi_half_pixel(g, node);
    want_rank_exact(g, node, 0, 4, "N, C, H, W");
    want_rank_exact(g, node, 1, 2, "num_rois, 4");
    want_rank_exact(g, node, 2, 1, "num_rois");
    if (rois->dims[1] != 4 || bi->dims[0] != rois->dims[0])
        rlx_node_error(g, node, "rois '%s' %s and batch_indices '%s' %s must have shapes [num_rois, 4] and [num_rois]",
                       rois->name, rlx_shape_str(rois), bi->name, rlx_shape_str(bi));
    int64_t oh = rlx_attr_i(n, "output_height", 1), ow = rlx_attr_i(n, "output_width", 1);
    int64_t sr = rlx_attr_i(n, "sampling_ratio", 0);
    if (oh < 1 || ow < 1)
        rlx_node_error(g, node, "output_height %lld and output_width %lld must be >= 1", (long long)oh, (long long)ow);
    if (sr < 0) rlx_node_error(g, node, "sampling_ratio %lld must be >= 0", (long long)sr);
    int64_t dims[4] = {rois->dims[0], x->dims[1], oh, ow};
    if (rlx_prod_checked(g, node, dims, 0, 4) > 0 && (x->dims[2] == 0 || x->dims[3] == 0))
        rlx_node_error(g, node, "input '%s' %s has no pixels to sample", x->name, rlx_shape_str(x));
    check_const_range(g, node, 2, x->dims[0], "batch index");
    set_out(&outs[0], x->dtype, 4, dims);
}

/* MaxUnpool's unpooled shape: N, C, then (in - 1) * stride - pads + kernel
 * per spatial axis (the indices address a tensor of this shape). */
static void unpooled_dims(const RlxGraph *g, int node, int64_t *dims) {
    const RlxValue *x = rlx_input(g, node, 0);
    int ns = x->rank - 2;
    int64_t k[RLX_MAX_RANK], s[RLX_MAX_RANK], pads[2 * RLX_MAX_RANK];
    rlx_ints_attr(g, node, "kernel_shape", ns, 1, 1, k);
    rlx_ints_attr(g, node, "strides", ns, 1, 1, s);
    rlx_ints_attr(g, node, "pads", 2 * ns, 0, 0, pads);
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int a = 0; a < ns; a++) {
        int64_t in = x->dims[2 + a], d = 0;   /* an empty axis unpools to nothing */
        if (in > 0) d = rlx_add_checked(g, node, rlx_mul_checked(g, node, in - 1, s[a]), k[a]) - pads[a] - pads[ns + a];
        if (d < 0)
            rlx_node_error(g, node, "pads %s leave axis %d of the output with size %lld", rlx_dims_str(2 * ns, pads),
                           2 + a, (long long)d);
        dims[2 + a] = d;
    }
}

static void infer_max_unpool(RlxGraph *g, int node, RlxShape *outs) {
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    want_i64(g, node, 1, "indices");
    if (x->rank < 3)
        rlx_node_error(g, node, "input '%s' must have rank >= 3 (N, C, spatial...), not %d (shape %s)", x->name,
                       x->rank, rlx_shape_str(x));
    int same = idx->rank == x->rank;
    for (int a = 0; same && a < x->rank; a++) same = idx->dims[a] == x->dims[a];
    if (!same)
        rlx_node_error(g, node, "indices '%s' %s must have the shape of input '%s' %s", idx->name, rlx_shape_str(idx),
                       x->name, rlx_shape_str(x));
    int64_t dims[RLX_MAX_RANK];
    unpooled_dims(g, node, dims);
    if (rlx_has_input(g, node, 2)) {
        int count;
        int64_t *shape = rlx_const_ints(g, node, 2, "output_shape", &count);
        if (count != x->rank)
            rlx_node_error(g, node, "output_shape has %d entries; the input has rank %d", count, x->rank);
        for (int a = 0; a < x->rank; a++)
            if (shape[a] < dims[a] || (a < 2 && shape[a] != dims[a]))
                rlx_node_error(g, node, "output_shape %s must keep N and C and be at least the unpooled shape %s",
                               rlx_dims_str(count, shape), rlx_dims_str(x->rank, dims));
    }
    check_const_range(g, node, 1, rlx_prod_checked(g, node, dims, 0, x->rank), "index");
    if (rlx_has_input(g, node, 2)) {
        memcpy(dims, rlx_const_ints(g, node, 2, "output_shape", &(int){0}), sizeof(int64_t) * (size_t)x->rank);
        rlx_prod_checked(g, node, dims, 0, x->rank);
    }
    set_out(&outs[0], x->dtype, x->rank, dims);
}

static void infer_det(RlxGraph *g, int node, RlxShape *outs) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
        rlx_node_error(g, node, "input '%s' %s must hold square matrices in its last two axes", x->name,
                       rlx_shape_str(x));
    int64_t n = x->dims[x->rank - 1];
    rlx_mul_checked(g, node, rlx_mul_checked(g, node, n, n), 8);   /* the scratch of one matrix */
    set_out(&outs[0], x->dtype, x->rank - 2, x->dims);
}

int rlx_infer_vision(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_GRIDSAMPLE: infer_grid_sample(g, node, outs); return 1;
    case RLX_OP_ROIALIGN: infer_roi_align(g, node, outs); return 1;
    case RLX_OP_MAXUNPOOL: infer_max_unpool(g, node, outs); return 1;
    case RLX_OP_DET: infer_det(g, node, outs); return 1;
    default: return 0;
    }
}

/* ---- lowering ---- */

static const RlxValue *val(const RlxLower *L, int v) { return &L->g->v[v]; }

static void lower_grid_sample(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *grid = val(L, n->in[1]), *y = val(L, n->out[0]);
    if (!rlx_value_numel(y)) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_grid_sample, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "grid_dtype", grid->dtype);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "h", x->dims[2]);
    rlx_tk_i(t, "w", x->dims[3]);
    rlx_tk_i(t, "oh", y->dims[2]);
    rlx_tk_i(t, "ow", y->dims[3]);
    rlx_tk_i(t, "mode", gs_mode(L->g, node));
    rlx_tk_i(t, "padding", gs_padding(L->g, node));
    rlx_tk_i(t, "align_corners", rlx_attr_i(n, "align_corners", 0) != 0);
}

static void lower_roi_align(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    if (!rlx_value_numel(y)) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_roi_align, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    rlx_tk_in(L, t, n->in[2]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "h", x->dims[2]);
    rlx_tk_i(t, "w", x->dims[3]);
    rlx_tk_i(t, "nrois", y->dims[0]);
    rlx_tk_i(t, "oh", y->dims[2]);
    rlx_tk_i(t, "ow", y->dims[3]);
    rlx_tk_i(t, "sampling_ratio", rlx_attr_i(n, "sampling_ratio", 0));
    rlx_tk_f(t, "spatial_scale", rlx_attr_f(n, "spatial_scale", 1.0));
    rlx_tk_i(t, "half_pixel", roi_half_pixel(L->g, node));
    rlx_tk_i(t, "max_mode", roi_mode(L->g, node));
}

static void lower_max_unpool(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    if (!rlx_value_numel(y)) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_max_unpool, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    rlx_tk_out(L, t, n->out[0]);
    int64_t dims[RLX_MAX_RANK];
    unpooled_dims(L->g, node, dims);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "in_numel", rlx_value_numel(x));
    rlx_tk_i(t, "rank", y->rank);
    rlx_tk_a(t, "unpooled_dims", dims, y->rank);
    rlx_tk_a(t, "out_dims", y->dims, y->rank);
}

static void lower_det(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    int64_t m = x->dims[x->rank - 1];
    if (!rlx_value_numel(y)) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_det, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "batch", rlx_value_numel(y));
    rlx_tk_i(t, "n", m);
}

int rlx_lower_vision(RlxLower *L, int node) {
    switch (L->g->n[node].op) {
    case RLX_OP_GRIDSAMPLE: lower_grid_sample(L, node); return 1;
    case RLX_OP_ROIALIGN: lower_roi_align(L, node); return 1;
    case RLX_OP_MAXUNPOOL: lower_max_unpool(L, node); return 1;
    case RLX_OP_DET: lower_det(L, node); return 1;
    default: return 0;
    }
}
