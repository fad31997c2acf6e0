/* ext_shape.c - the shape op family: Shape, Size, ConstantOfShape, Expand,
 * Tile, Range, EyeLike, OneHot, Trilu, CumSum, TopK, DepthToSpace,
 * SpaceToDepth, ReverseSequence, and the ops whose output shape depends on
 * data: NonZero, Compress, Unique, NonMaxSuppression.
 *
 * rlx_infer_shape and rlx_lower_shape return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 *
 * Three kinds of op live here:
 *
 *   - Shape and Size: their value is known as soon as their input's shape
 *     is, whatever the input's data. Inference writes the answer as the
 *     output's weight bytes and marks the node dead, so the
 *     Shape->Gather->Unsqueeze->Concat->Reshape chains of exporters fold away
 *     node by node (infer.c folds each consumer once all its inputs are
 *     constants).
 *   - Ops with a static output shape (the rest but four): inputs that decide
 *     a shape (ConstantOfShape's shape, Expand's shape, Tile's repeats,
 *     Range's start/limit/delta, OneHot's depth, TopK's k) must be constants;
 *     inputs that only decide values (Trilu's k, CumSum's axis,
 *     ReverseSequence's lengths, OneHot's values) are read at run time by
 *     the kernels (rk_shape.c). DepthToSpace and SpaceToDepth are a 6-D
 *     transpose and need no kernel of their own.
 *   - NonZero, Compress, Unique, NonMaxSuppression: their output shape is a
 *     function of their input data. An ahead-of-time compiler with static
 *     shapes can only run them when all their inputs are constants; then
 *     inference evaluates them here, in C, and they become weights. Any other
 *     case is an error naming the node (docs/ops.md, "Data-dependent shapes").
 */
#include <math.h>
#include <string.h>

#include "passes.h"

static const RlxNode *node_of(const RlxGraph *g, int node) { return &g->n[node]; }

static void copy_dims(RlxShape *out, RlxDType dt, int rank, const int64_t *dims) {
    out->dtype = dt;
    out->rank = rank;
    memset(out->dims, 0, sizeof out->dims);
    if (rank > 0) memcpy(out->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* Output k of the node becomes a constant holding `data` (in the arena, with
 * the byte size its shape gives); the node is finished. */
static void set_const_output(RlxGraph *g, int node, int k, const void *data) {
    int v = node_of(g, node)->out[k];
    if (v < 0) return;
    g->v[v].data = data;
    g->v[v].flags |= RLX_V_WEIGHT;
    g->v[v].producer = -1;
}

static int all_inputs_const(const RlxGraph *g, int node) {
    const RlxNode *n = node_of(g, node);
    for (int k = 0; k < n->nin; k++)
        if (n->in[k] >= 0 && !rlx_is_const(g, n->in[k])) return 0;
    return 1;
}

/* A constant one-element input (a scalar or a 1-element tensor). */
static const RlxValue *const_scalar(const RlxGraph *g, int node, int k, const char *role) {
    rlx_want_const(g, node, k, role);
    const RlxValue *v = rlx_input(g, node, k);
    if (v->rank > 1 || rlx_value_numel(v) != 1)
        rlx_node_error(g, node, "input '%s' (value '%s') must be a scalar, not %s", role, v->name, rlx_shape_str(v));
    return v;
}

static void want_scalar_shape(const RlxGraph *g, int node, int k, const char *role) {
    const RlxValue *v = rlx_input(g, node, k);
    if (v->rank > 1 || rlx_value_numel(v) != 1)
        rlx_node_error(g, node, "input '%s' (value '%s') must be a scalar, not %s", role, v->name, rlx_shape_str(v));
}

static int64_t *new_i64(int64_t n) { return rlx_alloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1)); }

/* The bytes of one element of dtype dt holding x (floats) or i (integers),
 * as the low bytes of an int64 (the kernels' value_bits). */
static int64_t element_bits(RlxDType dt, double x, int64_t i) {
    union { float f; double d; int64_t i; uint16_t h; } u;
    memset(&u, 0, sizeof u);
    switch (dt) {
    case RLX_F32: u.f = (float)x; break;
    case RLX_F64: u.d = x; break;
    case RLX_F16: u.h = rlx_f32_to_f16((float)x); break;
    case RLX_BF16: u.h = rlx_f32_to_bf16((float)x); break;
    case RLX_BOOL: u.i = i != 0; break;
    default: u.i = i; break;   /* little-endian: the low bytes are the value */
    }
    int64_t bits;
    memcpy(&bits, &u, sizeof bits);
    int sz = rlx_dtype_size(dt);
    if (sz < 8) bits = (int64_t)((uint64_t)bits & ((1ull << (8 * sz)) - 1));
    return bits;
}

/* ---- Shape, Size: known statically ---- */

static void infer_shape_op(RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    int r = x->rank;
    int64_t start = rlx_attr_i(n, "start", 0), end = rlx_attr_i(n, "end", r);
    /* opset 15: negative counts from the end; both are clamped to [0, rank] */
    if (start < 0) start = start < -(int64_t)r ? 0 : start + r;
    if (end < 0) end = end < -(int64_t)r ? 0 : end + r;
    if (start > r) start = r;
    if (end > r) end = r;
    int64_t len = end > start ? end - start : 0;
    int64_t *data = new_i64(len);
    for (int64_t i = 0; i < len; i++) data[i] = x->dims[start + i];
    int64_t dims[1] = {len};
    copy_dims(out, RLX_I64, 1, dims);
    set_const_output(g, node, 0, data);
    g->n[node].dead = 1;
}

static void infer_size(RlxGraph *g, int node, RlxShape *out) {
    int64_t *data = new_i64(1);
    data[0] = rlx_value_numel(rlx_input(g, node, 0));
    copy_dims(out, RLX_I64, 0, NULL);
    set_const_output(g, node, 0, data);
    g->n[node].dead = 1;
}

/* ---- static output shapes ---- */

static const RlxValue *constantofshape_value(const RlxGraph *g, int node) {
    const RlxAttr *a = rlx_attr_get(node_of(g, node), "value");
    if (!a) return NULL;
    if (a->kind != RLX_A_TENSOR || !rlx_is_const(g, a->tensor))
        rlx_node_error(g, node, "attribute 'value' must be a tensor");
    const RlxValue *t = &g->v[a->tensor];
    if (rlx_value_numel(t) != 1)
        rlx_node_error(g, node, "attribute 'value' must hold one element, not %s", rlx_shape_str(t));
    return t;
}

static void infer_constantofshape(const RlxGraph *g, int node, RlxShape *out) {
    int ns;
    int64_t *shape = rlx_const_ints(g, node, 0, "input", &ns);
    if (ns > RLX_MAX_RANK) rlx_node_error(g, node, "output rank %d exceeds the maximum %d", ns, RLX_MAX_RANK);
    for (int i = 0; i < ns; i++)
        if (shape[i] < 0) rlx_node_error(g, node, "shape has a negative dimension %lld", (long long)shape[i]);
    rlx_prod_checked(g, node, shape, 0, ns);
    const RlxValue *t = constantofshape_value(g, node);
    copy_dims(out, t ? t->dtype : RLX_F32, ns, shape);
}

static void infer_expand(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int ns;
    int64_t *shape = rlx_const_ints(g, node, 1, "shape", &ns);
    int r = ns > x->rank ? ns : x->rank;
    if (r > RLX_MAX_RANK) rlx_node_error(g, node, "output rank %d exceeds the maximum %d", r, RLX_MAX_RANK);
    for (int i = 0; i < r; i++) {
        int ix = i - (r - x->rank), is = i - (r - ns);
        int64_t a = ix >= 0 ? x->dims[ix] : 1, b = is >= 0 ? shape[is] : 1;
        if (b < 0) rlx_node_error(g, node, "shape has a negative dimension %lld", (long long)b);
        if (a != b && a != 1 && b != 1)
            rlx_node_error(g, node, "cannot expand %s to %s", rlx_shape_str(x), rlx_dims_str(ns, shape));
        out->dims[i] = a == 1 ? b : a;
    }
    out->rank = r;
    out->dtype = x->dtype;
}

static void infer_tile(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int nr;
    int64_t *rep = rlx_const_ints(g, node, 1, "repeats", &nr);
    if (nr != x->rank) rlx_node_error(g, node, "repeats has %d entries for an input of rank %d", nr, x->rank);
    copy_dims(out, x->dtype, x->rank, x->dims);
    for (int i = 0; i < nr; i++) {
        if (rep[i] < 0) rlx_node_error(g, node, "repeats has a negative entry %lld", (long long)rep[i]);
        out->dims[i] = rlx_mul_checked(g, node, x->dims[i], rep[i]);
    }
}

/* Range's element count: max(ceil((limit - start) / delta), 0). */
static int64_t range_count(const RlxGraph *g, int node) {
    const RlxValue *s = rlx_input(g, node, 0), *l = rlx_input(g, node, 1), *d = rlx_input(g, node, 2);
    RlxDType dt = s->dtype;
    if (rlx_dtype_is_float(dt)) {
        double a = rlx_weight_f64(s, 0), b = rlx_weight_f64(l, 0), c = rlx_weight_f64(d, 0);
        if (c == 0) rlx_node_error(g, node, "delta is 0");
        double n = ceil((b - a) / c);
        if (n != n || n > (double)(INT64_MAX / 16)) rlx_node_error(g, node, "the range has no finite size");
        return n > 0 ? (int64_t)n : 0;
    }
    if (!rlx_dtype_is_signed(dt)) {
        uint64_t a = (uint64_t)rlx_weight_i64(s, 0), b = (uint64_t)rlx_weight_i64(l, 0), c = (uint64_t)rlx_weight_i64(d, 0);
        if (c == 0) rlx_node_error(g, node, "delta is 0");
        uint64_t n = b > a ? (b - a - 1) / c + 1 : 0;
        if (n > (uint64_t)(INT64_MAX / 16)) rlx_node_error(g, node, "the range is too large");
        return (int64_t)n;
    }
    int64_t a = rlx_weight_i64(s, 0), b = rlx_weight_i64(l, 0), c = rlx_weight_i64(d, 0);
    if (c == 0) rlx_node_error(g, node, "delta is 0");
    /* the distance as unsigned: exact even when limit - start overflows int64 */
    uint64_t n = 0;
    if (c > 0 && b > a) n = ((uint64_t)b - (uint64_t)a - 1) / (uint64_t)c + 1;
    if (c < 0 && b < a) n = ((uint64_t)a - (uint64_t)b - 1) / ((uint64_t)(-(c + 1)) + 1) + 1;
    if (n > (uint64_t)(INT64_MAX / 16)) rlx_node_error(g, node, "the range is too large");
    return (int64_t)n;
}

static void infer_range(const RlxGraph *g, int node, RlxShape *out) {
    static const char *const roles[3] = {"start", "limit", "delta"};
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    for (int k = 0; k < 3; k++) {
        const_scalar(g, node, k, roles[k]);
        rlx_want_same_dtype(g, node, 0, k);
    }
    int64_t dims[1] = {range_count(g, node)};
    copy_dims(out, rlx_input(g, node, 0)->dtype, 1, dims);
}

static void infer_eyelike(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_rank(g, node, 0, 2, 2);
    const RlxAttr *a = rlx_attr_get(node_of(g, node), "dtype");
    RlxDType dt = x->dtype;
    if (a) {
        if (a->kind != RLX_A_DTYPE || a->i < 0 || a->i >= RLX_NDTYPES)
            rlx_node_error(g, node, "attribute 'dtype' must be a dtype");
        dt = (RlxDType)a->i;
    }
    copy_dims(out, dt, 2, x->dims);
}

static int64_t onehot_depth(const RlxGraph *g, int node) {
    const RlxValue *d = const_scalar(g, node, 1, "depth");
    if (!rlx_dtype_is_float(d->dtype) && !rlx_dtype_is_int(d->dtype))
        rlx_node_error(g, node, "depth must be numeric, not %s", rlx_dtype_name(d->dtype));
    double x = rlx_dtype_is_float(d->dtype) ? rlx_weight_f64(d, 0) : (double)rlx_weight_i64(d, 0);
    if (!(x >= 1) || x > (double)(1 << 30)) rlx_node_error(g, node, "depth must be in [1, 2^30], not %g", x);
    return (int64_t)x;
}

static void infer_onehot(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *idx = rlx_input(g, node, 0), *vals = rlx_input(g, node, 2);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    int64_t depth = onehot_depth(g, node);
    if (vals->rank != 1 || vals->dims[0] != 2)
        rlx_node_error(g, node, "values '%s' must have shape [2] (off, on), not %s", vals->name, rlx_shape_str(vals));
    int r = idx->rank + 1;
    if (r > RLX_MAX_RANK) rlx_node_error(g, node, "output rank %d exceeds the maximum %d", r, RLX_MAX_RANK);
    int axis = rlx_norm_axis(g, node, rlx_attr_i(node_of(g, node), "axis", -1), r);
    out->rank = 0;
    for (int i = 0; i < r; i++) out->dims[i] = i < axis ? idx->dims[i] : i == axis ? depth : idx->dims[i - 1];
    out->rank = r;
    out->dtype = vals->dtype;
    rlx_prod_checked(g, node, out->dims, 0, r);
}

static void infer_trilu(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    if (x->rank < 2) rlx_node_error(g, node, "input must have rank >= 2, not %d", x->rank);
    if (rlx_has_input(g, node, 1)) {
        const RlxValue *k = rlx_input(g, node, 1);
        if (k->dtype != RLX_I64) rlx_node_error(g, node, "k must be an i64 scalar, not %s", rlx_dtype_name(k->dtype));
        want_scalar_shape(g, node, 1, "k");
    }
    copy_dims(out, x->dtype, x->rank, x->dims);
}

static void infer_cumsum(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0), *ax = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    rlx_want_dtype(g, node, 1, T_INDEX);
    want_scalar_shape(g, node, 1, "axis");
    if (x->rank < 1) rlx_node_error(g, node, "input must have rank >= 1");
    if (rlx_is_const(g, node_of(g, node)->in[1])) rlx_norm_axis(g, node, rlx_weight_i64(ax, 0), x->rank);
    copy_dims(out, x->dtype, x->rank, x->dims);
}

static void infer_topk(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    if (x->rank < 1) rlx_node_error(g, node, "input must have rank >= 1");
    int axis = rlx_norm_axis(g, node, rlx_attr_i(node_of(g, node), "axis", -1), x->rank);
    const RlxValue *kv = const_scalar(g, node, 1, "K");
    if (!rlx_dtype_is_int(kv->dtype)) rlx_node_error(g, node, "K must be an integer, not %s", rlx_dtype_name(kv->dtype));
    int64_t k = rlx_weight_i64(kv, 0);
    if (k < 0 || k > x->dims[axis])
        rlx_node_error(g, node, "K = %lld is out of range for axis %d of size %lld", (long long)k, axis,
                       (long long)x->dims[axis]);
    copy_dims(&out[0], x->dtype, x->rank, x->dims);
    out[0].dims[axis] = k;
    out[1] = out[0];
    out[1].dtype = RLX_I64;
}

static int64_t blocksize(const RlxGraph *g, int node) {
    int64_t b = rlx_attr_i(node_of(g, node), "blocksize", 0);
    if (b < 1 || b > (1 << 20)) rlx_node_error(g, node, "blocksize must be in [1, 2^20], not %lld", (long long)b);
    return b;
}

static int depthtospace_crd(const RlxGraph *g, int node) {
    const char *mode = rlx_attr_s(node_of(g, node), "mode", "DCR");
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        rlx_node_error(g, node, "mode must be DCR or CRD, not '%s'", mode);
    return !strcmp(mode, "CRD");
}

static void infer_space_depth(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_rank(g, node, 0, 4, 4);
    int64_t b = blocksize(g, node), bb = b * b;
    copy_dims(out, x->dtype, 4, x->dims);
    if (node_of(g, node)->op == RLX_OP_DEPTHTOSPACE) {
        depthtospace_crd(g, node);
        if (x->dims[1] % bb)
            rlx_node_error(g, node, "channels (%lld) are not a multiple of blocksize^2 (%lld)", (long long)x->dims[1],
                           (long long)bb);
        out->dims[1] = x->dims[1] / bb;
        out->dims[2] = rlx_mul_checked(g, node, x->dims[2], b);
        out->dims[3] = rlx_mul_checked(g, node, x->dims[3], b);
    } else {
        if (x->dims[2] % b || x->dims[3] % b)
            rlx_node_error(g, node, "spatial dims %s are not multiples of blocksize %lld", rlx_shape_str(x),
                           (long long)b);
        out->dims[1] = rlx_mul_checked(g, node, x->dims[1], bb);
        out->dims[2] = x->dims[2] / b;
        out->dims[3] = x->dims[3] / b;
    }
}

static void infer_reverse_sequence(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0), *lens = rlx_input(g, node, 1);
    if (x->rank < 2) rlx_node_error(g, node, "input must have rank >= 2, not %d", x->rank);
    rlx_want_dtype(g, node, 1, T_INDEX);
    int64_t ba = rlx_attr_i(n, "batch_axis", 1), ta = rlx_attr_i(n, "time_axis", 0);
    if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        rlx_node_error(g, node, "batch_axis and time_axis must be 0 and 1 in some order, not %lld and %lld",
                       (long long)ba, (long long)ta);
    if (lens->rank != 1 || lens->dims[0] != x->dims[ba])
        rlx_node_error(g, node, "sequence_lens must have shape [%lld], not %s", (long long)x->dims[ba],
                       rlx_shape_str(lens));
    if (rlx_is_const(g, n->in[1]))
        for (int64_t b = 0; b < lens->dims[0]; b++) {
            int64_t len = rlx_weight_i64(lens, b);
            if (len < 0 || len > x->dims[ta])
                rlx_node_error(g, node, "sequence length %lld is out of range [0, %lld]", (long long)len,
                               (long long)x->dims[ta]);
        }
    copy_dims(out, x->dtype, x->rank, x->dims);
}

/* ---- data-dependent shapes: evaluated here when the inputs are constants ---- */

static void want_static(const RlxGraph *g, int node) {
    if (!all_inputs_const(g, node))
        rlx_node_error(g, node, "output shape depends on run-time data; rlxc needs static shapes "
                                "(supported only when all inputs are constants)");
}

/* Compares elements i of a and j of b (same dtype) by value: -1, 0, 1. */
static int cmp_elem(const RlxValue *a, int64_t i, const RlxValue *b, int64_t j) {
    if (rlx_dtype_is_float(a->dtype)) {
        double x = rlx_weight_f64(a, i), y = rlx_weight_f64(b, j);
        int nx = x != x, ny = y != y;
        if (nx || ny) return nx - ny;
        return (x > y) - (x < y);
    }
    if (rlx_dtype_is_signed(a->dtype)) {
        int64_t x = rlx_weight_i64(a, i), y = rlx_weight_i64(b, j);
        return (x > y) - (x < y);
    }
    uint64_t x = (uint64_t)rlx_weight_i64(a, i), y = (uint64_t)rlx_weight_i64(b, j);
    return (x > y) - (x < y);
}

static int is_nonzero(const RlxValue *x, int64_t i) {
    if (rlx_dtype_is_float(x->dtype)) return rlx_weight_f64(x, i) != 0;
    return rlx_weight_i64(x, i) != 0;
}

static void infer_nonzero(RlxGraph *g, int node, RlxShape *out) {
    want_static(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    int64_t n = rlx_value_numel(x), count = 0;
    for (int64_t i = 0; i < n; i++) count += is_nonzero(x, i);
    int r = x->rank > 0 ? x->rank : 1;   /* numpy treats a scalar as 1-D */
    int64_t *data = new_i64(rlx_mul_checked(g, node, r, count)), j = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!is_nonzero(x, i)) continue;
        int64_t rem = i;
        for (int a = x->rank - 1; a >= 0; a--) {
            data[a * count + j] = rem % x->dims[a];
            rem /= x->dims[a];
        }
        if (x->rank == 0) data[j] = 0;
        j++;
    }
    int64_t dims[2] = {r, count};
    copy_dims(out, RLX_I64, 2, dims);
    set_const_output(g, node, 0, data);
    g->n[node].dead = 1;
}

static void infer_compress(RlxGraph *g, int node, RlxShape *out) {
    want_static(g, node);
    const RlxValue *x = rlx_input(g, node, 0), *c = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 1, T_BOOL);
    if (c->rank != 1) rlx_node_error(g, node, "condition must be 1-D, not %s", rlx_shape_str(c));
    const RlxAttr *ax = rlx_attr_get(node_of(g, node), "axis");
    int64_t outer = 1, len = rlx_value_numel(x), inner = 1;
    int axis = -1;
    if (ax) {
        if (x->rank < 1) rlx_node_error(g, node, "cannot compress a scalar along an axis");
        axis = rlx_norm_axis(g, node, ax->i, x->rank);
        outer = rlx_prod(x->dims, 0, axis);
        len = x->dims[axis];
        inner = rlx_prod(x->dims, axis + 1, x->rank);
    }
    if (c->dims[0] > len)
        rlx_node_error(g, node, "condition has %lld entries for %lld slices", (long long)c->dims[0], (long long)len);
    int64_t kept = 0;
    for (int64_t i = 0; i < c->dims[0]; i++) kept += rlx_weight_i64(c, i) != 0;
    size_t es = (size_t)rlx_dtype_size(x->dtype), row = (size_t)inner * es;
    uint8_t *data = rlx_alloc((size_t)(outer * kept) * row + 1), *dst = data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < c->dims[0]; i++)
            if (rlx_weight_i64(c, i)) {
                memcpy(dst, x->data + (size_t)(o * len + i) * row, row);
                dst += row;
            }
    if (axis >= 0) {
        copy_dims(out, x->dtype, x->rank, x->dims);
        out->dims[axis] = kept;
    } else {
        copy_dims(out, x->dtype, 1, &kept);
    }
    set_const_output(g, node, 0, data);
    g->n[node].dead = 1;
}

/* Unique's slices: slice s is outer x inner elements, (o, s, i) in x. */
typedef struct {
    const RlxValue *x;
    int64_t outer, len, inner;
} Slices;

static int cmp_slice(const Slices *s, int64_t a, int64_t b) {
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t i = 0; i < s->inner; i++) {
            int c = cmp_elem(s->x, (o * s->len + a) * s->inner + i, s->x, (o * s->len + b) * s->inner + i);
            if (c) return c;
        }
    return 0;
}

static void infer_unique(RlxGraph *g, int node, RlxShape *out) {
    want_static(g, node);
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    const RlxAttr *ax = rlx_attr_get(n, "axis");
    int sorted = rlx_attr_i(n, "sorted", 1) != 0;
    Slices s = {x, 1, rlx_value_numel(x), 1};
    int axis = -1;
    if (ax) {
        if (x->rank < 1) rlx_node_error(g, node, "cannot take unique slices of a scalar");
        axis = rlx_norm_axis(g, node, ax->i, x->rank);
        s.outer = rlx_prod(x->dims, 0, axis);
        s.len = x->dims[axis];
        s.inner = rlx_prod(x->dims, axis + 1, x->rank);
    }
    if (s.len > (1 << 16)) rlx_node_error(g, node, "too many slices (%lld) to evaluate at compile time", (long long)s.len);
    /* first occurrences in order, then (sorted) ordered by value */
    int64_t *first = new_i64(s.len), *inverse = new_i64(s.len), nu = 0;
    for (int64_t i = 0; i < s.len; i++) {
        int64_t u = 0;
        while (u < nu && cmp_slice(&s, first[u], i)) u++;
        if (u == nu) first[nu++] = i;
        inverse[i] = u;
    }
    int64_t *order = new_i64(nu), *rank_of = new_i64(nu), *counts = new_i64(nu), *indices = new_i64(nu);
    for (int64_t u = 0; u < nu; u++) order[u] = u;
    if (sorted)   /* insertion sort: stable, n is small */
        for (int64_t u = 1; u < nu; u++) {
            int64_t v = order[u], m = u;
            for (; m > 0 && cmp_slice(&s, first[order[m - 1]], first[v]) > 0; m--) order[m] = order[m - 1];
            order[m] = v;
        }
    for (int64_t u = 0; u < nu; u++) rank_of[order[u]] = u;
    for (int64_t i = 0; i < s.len; i++) {
        inverse[i] = rank_of[inverse[i]];
        counts[inverse[i]]++;
    }
    for (int64_t u = 0; u < nu; u++) indices[u] = first[order[u]];
    size_t es = (size_t)rlx_dtype_size(x->dtype), row = (size_t)s.inner * es;
    uint8_t *y = rlx_alloc((size_t)(s.outer * nu) * row + 1), *dst = y;
    for (int64_t o = 0; o < s.outer; o++)
        for (int64_t u = 0; u < nu; u++) {
            memcpy(dst, x->data + (size_t)(o * s.len + indices[u]) * row, row);
            dst += row;
        }
    if (axis >= 0) {
        copy_dims(&out[0], x->dtype, x->rank, x->dims);
        out[0].dims[axis] = nu;
    } else {
        copy_dims(&out[0], x->dtype, 1, &nu);
    }
    /* outs has room for the node's outputs only */
    const int64_t *len1[4] = {NULL, &nu, &s.len, &nu};
    for (int k = 1; k < n->nout; k++) copy_dims(&out[k], RLX_I64, 1, len1[k]);
    const void *data[4] = {y, indices, inverse, counts};
    for (int k = 0; k < n->nout; k++) set_const_output(g, node, k, data[k]);
    g->n[node].dead = 1;
}

/* Box b of batch (boxes [B, N, 4]) as min/max corners. */
static void nms_box(const RlxValue *boxes, int64_t at, int center, double c[4]) {
    double v[4];
    for (int i = 0; i < 4; i++) v[i] = rlx_weight_f64(boxes, at + i);
    if (center) {   /* [x_center, y_center, width, height] */
        c[0] = v[1] - v[3] / 2, c[2] = v[1] + v[3] / 2;
        c[1] = v[0] - v[2] / 2, c[3] = v[0] + v[2] / 2;
    } else {        /* [y1, x1, y2, x2], any diagonal pair of corners */
        c[0] = v[0] < v[2] ? v[0] : v[2], c[2] = v[0] < v[2] ? v[2] : v[0];
        c[1] = v[1] < v[3] ? v[1] : v[3], c[3] = v[1] < v[3] ? v[3] : v[1];
    }
}

static int nms_overlaps(const double a[4], const double b[4], double threshold) {
    double ih = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]);
    double iw = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]);
    if (ih <= 0 || iw <= 0) return 0;
    double inter = ih * iw, area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    double uni = area_a + area_b - inter;
    if (area_a <= 0 || area_b <= 0 || uni <= 0) return 0;
    return inter / uni > threshold;
}

static void infer_nms(RlxGraph *g, int node, RlxShape *out) {
    want_static(g, node);
    const RlxValue *boxes = rlx_input(g, node, 0), *scores = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    rlx_want_dtype(g, node, 1, T_FLOAT);
    if (boxes->rank != 3 || boxes->dims[2] != 4)
        rlx_node_error(g, node, "boxes must have shape [batches, boxes, 4], not %s", rlx_shape_str(boxes));
    int64_t B = boxes->dims[0], N = boxes->dims[1];
    if (scores->rank != 3 || scores->dims[0] != B || scores->dims[2] != N)
        rlx_node_error(g, node, "scores must have shape [%lld, classes, %lld], not %s", (long long)B, (long long)N,
                       rlx_shape_str(scores));
    int64_t C = scores->dims[1], max_out = 0;
    double iou = 0, score_min = 0;
    int has_score_min = 0;
    if (rlx_has_input(g, node, 2)) max_out = rlx_weight_i64(const_scalar(g, node, 2, "max_output_boxes_per_class"), 0);
    if (rlx_has_input(g, node, 3)) iou = rlx_weight_f64(const_scalar(g, node, 3, "iou_threshold"), 0);
    if (rlx_has_input(g, node, 4)) {
        score_min = rlx_weight_f64(const_scalar(g, node, 4, "score_threshold"), 0);
        has_score_min = 1;
    }
    if (N > (1 << 16)) rlx_node_error(g, node, "too many boxes (%lld) to evaluate at compile time", (long long)N);
    int center = rlx_attr_i(node_of(g, node), "center_point_box", 0) != 0;
    int64_t cap = rlx_mul_checked(g, node, rlx_mul_checked(g, node, B, C), max_out < N ? (max_out > 0 ? max_out : 0) : N);
    int64_t *sel = new_i64(rlx_mul_checked(g, node, cap, 3)), nsel = 0;
    int64_t *cand = new_i64(N), *picked = new_i64(N);
    for (int64_t b = 0; b < B; b++)
        for (int64_t c = 0; c < C; c++) {
            const int64_t base = (b * C + c) * N;
            int64_t nc = 0, np = 0;
            for (int64_t i = 0; i < N; i++)
                if (!has_score_min || rlx_weight_f64(scores, base + i) > score_min) cand[nc++] = i;
            /* by score, highest first; equal scores keep the lower index first */
            for (int64_t i = 1; i < nc; i++) {
                int64_t v = cand[i], m = i;
                for (; m > 0 && rlx_weight_f64(scores, base + cand[m - 1]) < rlx_weight_f64(scores, base + v); m--)
                    cand[m] = cand[m - 1];
                cand[m] = v;
            }
            for (int64_t i = 0; i < nc && np < max_out; i++) {
                double bi[4], bj[4];
                nms_box(boxes, (b * N + cand[i]) * 4, center, bi);
                int keep = 1;
                for (int64_t j = 0; keep && j < np; j++) {
                    nms_box(boxes, (b * N + picked[j]) * 4, center, bj);
                    keep = !nms_overlaps(bi, bj, iou);
                }
                if (!keep) continue;
                picked[np++] = cand[i];
                sel[nsel * 3] = b, sel[nsel * 3 + 1] = c, sel[nsel * 3 + 2] = cand[i];
                nsel++;
            }
        }
    int64_t dims[2] = {nsel, 3};
    copy_dims(out, RLX_I64, 2, dims);
    set_const_output(g, node, 0, sel);
    g->n[node].dead = 1;
}

int rlx_infer_shape(RlxGraph *g, int node, RlxShape *outs) {
    switch (node_of(g, node)->op) {
    case RLX_OP_SHAPE: infer_shape_op(g, node, outs); return 1;
    case RLX_OP_SIZE: infer_size(g, node, outs); return 1;
    case RLX_OP_CONSTANTOFSHAPE: infer_constantofshape(g, node, outs); return 1;
    case RLX_OP_EXPAND: infer_expand(g, node, outs); return 1;
    case RLX_OP_TILE: infer_tile(g, node, outs); return 1;
    case RLX_OP_RANGE: infer_range(g, node, outs); return 1;
    case RLX_OP_EYELIKE: infer_eyelike(g, node, outs); return 1;
    case RLX_OP_ONEHOT: infer_onehot(g, node, outs); return 1;
    case RLX_OP_TRILU: infer_trilu(g, node, outs); return 1;
    case RLX_OP_CUMSUM: infer_cumsum(g, node, outs); return 1;
    case RLX_OP_TOPK: infer_topk(g, node, outs); return 1;
    case RLX_OP_DEPTHTOSPACE:
    case RLX_OP_SPACETODEPTH: infer_space_depth(g, node, outs); return 1;
    case RLX_OP_REVERSESEQUENCE: infer_reverse_sequence(g, node, outs); return 1;
    case RLX_OP_NONZERO: infer_nonzero(g, node, outs); return 1;
    case RLX_OP_COMPRESS: infer_compress(g, node, outs); return 1;
    case RLX_OP_UNIQUE: infer_unique(g, node, outs); return 1;
    case RLX_OP_NONMAXSUPPRESSION: infer_nms(g, node, outs); return 1;
    default: return 0;
    }
}

/* ---- lowering ---- */

static const RlxValue *val(const RlxLower *L, int v) { return &L->g->v[v]; }

static RlxThunk *thunk_1_1(RlxLower *L, RlxKernelKind kind, int node) {
    const RlxNode *n = &L->g->n[node];
    RlxThunk *t = rlx_thunk_new(L->tl, kind, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    return t;
}

/* Expand and Tile: out[o] = in[o mod in_dims], in dims right-aligned. */
static void lower_tile(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    int64_t in_dims[RLX_MAX_RANK];
    int pad = y->rank - x->rank;
    for (int i = 0; i < y->rank; i++) in_dims[i] = i < pad ? 1 : x->dims[i - pad];
    RlxThunk *t = thunk_1_1(L, RLX_K_tile, node);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "rank", y->rank);
    rlx_tk_a(t, "in_dims", in_dims, y->rank);
    rlx_tk_a(t, "out_dims", y->dims, y->rank);
}

static void lower_constantofshape(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *y = val(L, n->out[0]), *value = constantofshape_value(L->g, node);
    int64_t bits = 0;
    if (value) memcpy(&bits, value->data, (size_t)rlx_dtype_size(value->dtype));   /* little-endian */
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_fill, node);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(y->dtype));
    rlx_tk_i(t, "count", rlx_value_numel(y));
    rlx_tk_i(t, "value_bits", bits);
}

static void lower_range(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *s = val(L, n->in[0]), *d = val(L, n->in[2]), *y = val(L, n->out[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_range, node);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", y->dtype);
    rlx_tk_i(t, "n", y->dims[0]);
    if (rlx_dtype_is_float(y->dtype)) {
        rlx_tk_f(t, "fstart", rlx_weight_f64(s, 0));
        rlx_tk_f(t, "fdelta", rlx_weight_f64(d, 0));
    } else {
        rlx_tk_i(t, "istart", rlx_weight_i64(s, 0));
        rlx_tk_i(t, "idelta", rlx_weight_i64(d, 0));
    }
}

static void lower_eyelike(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *y = val(L, n->out[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_eye, node);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(y->dtype));
    rlx_tk_i(t, "rows", y->dims[0]);
    rlx_tk_i(t, "cols", y->dims[1]);
    rlx_tk_i(t, "k", rlx_attr_i(n, "k", 0));
    rlx_tk_i(t, "one_bits", element_bits(y->dtype, 1.0, 1));
}

static void lower_onehot(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *idx = val(L, n->in[0]), *y = val(L, n->out[0]);
    int axis = rlx_norm_axis(L->g, node, rlx_attr_i(n, "axis", -1), y->rank);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_onehot, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    rlx_tk_in(L, t, n->in[2]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(y->dtype));
    rlx_tk_i(t, "outer", rlx_prod(idx->dims, 0, axis));
    rlx_tk_i(t, "depth", y->dims[axis]);
    rlx_tk_i(t, "inner", rlx_prod(idx->dims, axis, idx->rank));
    rlx_tk_i(t, "idx_dtype", idx->dtype);
}

static void lower_trilu(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_trilu, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, rlx_has_input(L->g, node, 1) ? n->in[1] : -1);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "batch", rlx_prod(x->dims, 0, x->rank - 2));
    rlx_tk_i(t, "rows", x->dims[x->rank - 2]);
    rlx_tk_i(t, "cols", x->dims[x->rank - 1]);
    rlx_tk_i(t, "k", 0);
    rlx_tk_i(t, "upper", rlx_attr_i(n, "upper", 1) != 0);
}

static void lower_cumsum(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_cumsum, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "rank", x->rank);
    rlx_tk_a(t, "dims", x->dims, x->rank);
    rlx_tk_i(t, "axis_dtype", val(L, n->in[1])->dtype);
    rlx_tk_i(t, "exclusive", rlx_attr_i(n, "exclusive", 0) != 0);
    rlx_tk_i(t, "reverse", rlx_attr_i(n, "reverse", 0) != 0);
}

static void lower_topk(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    int axis = rlx_norm_axis(L->g, node, rlx_attr_i(n, "axis", -1), x->rank);
    if (!rlx_value_numel(y)) return;
    /* the indices are needed as the kernel's running list even when unused */
    if (n->out[1] < 0) rlx_node_error(L->g, node, "the Indices output is required");
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_topk, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_out(L, t, n->out[1]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "outer", rlx_prod(x->dims, 0, axis));
    rlx_tk_i(t, "axis_len", x->dims[axis]);
    rlx_tk_i(t, "inner", rlx_prod(x->dims, axis + 1, x->rank));
    rlx_tk_i(t, "k", y->dims[axis]);
    rlx_tk_i(t, "largest", rlx_attr_i(n, "largest", 1) != 0);
}

/* DepthToSpace / SpaceToDepth as one 6-D transpose of a reshaped input. */
static void lower_space_depth(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]);
    int64_t b = blocksize(L->g, node), N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
    int64_t dims[6], perm[6];
    static const int64_t dcr[6] = {0, 3, 4, 1, 5, 2}, crd[6] = {0, 1, 4, 2, 5, 3}, s2d[6] = {0, 3, 5, 1, 2, 4};
    const int64_t *p;
    if (n->op == RLX_OP_DEPTHTOSPACE) {
        int64_t c = C / (b * b);
        if (depthtospace_crd(L->g, node)) {
            int64_t d[6] = {N, c, b, b, H, W};
            memcpy(dims, d, sizeof dims);
            p = crd;
        } else {
            int64_t d[6] = {N, b, b, c, H, W};
            memcpy(dims, d, sizeof dims);
            p = dcr;
        }
    } else {
        int64_t d[6] = {N, C, H / b, b, W / b, b};
        memcpy(dims, d, sizeof dims);
        p = s2d;
    }
    memcpy(perm, p, sizeof perm);
    RlxThunk *t = thunk_1_1(L, RLX_K_transpose, node);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "rank", 6);
    rlx_tk_a(t, "dims", dims, 6);
    rlx_tk_a(t, "perm", perm, 6);
}

static void lower_reverse_sequence(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_reverse_sequence, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "rank", x->rank);
    rlx_tk_a(t, "dims", x->dims, x->rank);
    rlx_tk_i(t, "batch_axis", rlx_attr_i(n, "batch_axis", 1));
    rlx_tk_i(t, "time_axis", rlx_attr_i(n, "time_axis", 0));
    rlx_tk_i(t, "len_dtype", val(L, n->in[1])->dtype);
}

int rlx_lower_shape(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    switch (n->op) {
    case RLX_OP_SHAPE: case RLX_OP_SIZE: case RLX_OP_NONZERO: case RLX_OP_COMPRESS: case RLX_OP_UNIQUE:
    case RLX_OP_NONMAXSUPPRESSION:
        /* evaluated by inference; a live one here is a bug */
        RLX_ASSERT(!"shape-family node should have been folded by inference");
        return 1;
    case RLX_OP_CONSTANTOFSHAPE: case RLX_OP_EXPAND: case RLX_OP_TILE: case RLX_OP_RANGE: case RLX_OP_EYELIKE:
    case RLX_OP_ONEHOT: case RLX_OP_TRILU: case RLX_OP_CUMSUM: case RLX_OP_TOPK: case RLX_OP_DEPTHTOSPACE:
    case RLX_OP_SPACETODEPTH: case RLX_OP_REVERSESEQUENCE:
        break;
    default: return 0;
    }
    if (!rlx_value_numel(val(L, n->out[0]))) return 1;   /* nothing to compute */
    switch (n->op) {
    case RLX_OP_CONSTANTOFSHAPE: lower_constantofshape(L, node); break;
    case RLX_OP_EXPAND: case RLX_OP_TILE: lower_tile(L, node); break;
    case RLX_OP_RANGE: lower_range(L, node); break;
    case RLX_OP_EYELIKE: lower_eyelike(L, node); break;
    case RLX_OP_ONEHOT: lower_onehot(L, node); break;
    case RLX_OP_TRILU: lower_trilu(L, node); break;
    case RLX_OP_CUMSUM: lower_cumsum(L, node); break;
    case RLX_OP_TOPK: lower_topk(L, node); break;
    case RLX_OP_DEPTHTOSPACE: case RLX_OP_SPACETODEPTH: lower_space_depth(L, node); break;
    case RLX_OP_REVERSESEQUENCE: lower_reverse_sequence(L, node); break;
    default: break;
    }
    return 1;
}
