/* infer.c - verification and static shape/dtype inference.
 *
 * require: g->order (rlx_schedule), Constant nodes turned into weights.
 *
 * First the graph's inputs and weights are checked (known shape, no negative
 * dimension, a byte size that fits 64 bits). Then the nodes are visited in
 * schedule order, so every input's shape is known when its consumer is
 * reached. For each node, infer_node checks the input count, dtypes, ranks
 * and attributes against the op's ONNX opset-17 definition (opset 18 for
 * Reduce* and Split, whose axes/split are inputs) and writes each output's
 * dtype, rank and dims. Nothing in the graph is rewritten: attributes stay as
 * given (negative axes included); the helpers that resolve them
 * (rlx_norm_axis, rlx_conv_geometry, rlx_slice_params, rlx_reduce_axes) are
 * shared with the lowering, so both read an attribute the same way.
 *
 * Inputs that decide a shape (Reshape's shape, axes, pads, starts, split)
 * must be weights; a value computed at run time there is an error, never a
 * guess. Arithmetic on user-given numbers (pads, strides, shapes) is checked
 * for overflow; every output's byte size goes through rlx_value_bytes, which
 * rejects sizes over 64 bits. Finally the graph outputs must have a shape,
 * and the shapes the model file declared for them must match.
 */
#include <string.h>

#include "rlx.h"
#include "passes.h"


/* ---- small helpers ---- */

static const RlxNode *node_of(const RlxGraph *g, int node) { return &g->n[node]; }

int rlx_has_input(const RlxGraph *g, int node, int k) {
    const RlxNode *n = node_of(g, node);
    return k < n->nin && n->in[k] >= 0;
}

const RlxValue *rlx_input(const RlxGraph *g, int node, int k) {
    const RlxNode *n = node_of(g, node);
    RLX_ASSERT(k < n->nin && n->in[k] >= 0);
    return &g->v[n->in[k]];
}

const char *rlx_dims_str(int rank, const int64_t *dims) {
    RlxValue v;
    v.rank = rank;
    memcpy(v.dims, dims, sizeof(int64_t) * (size_t)rank);
    return rlx_shape_str(&v);
}

int64_t rlx_add_checked(const RlxGraph *g, int node, int64_t a, int64_t b) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        rlx_node_error(g, node, "size arithmetic overflows 64 bits");
    return a + b;
}

/* Both factors are >= 0. */
int64_t rlx_mul_checked(const RlxGraph *g, int node, int64_t a, int64_t b) {
    RLX_ASSERT(a >= 0 && b >= 0);
    if (b && a > INT64_MAX / b) rlx_node_error(g, node, "size arithmetic overflows 64 bits");
    return a * b;
}

int64_t rlx_prod_checked(const RlxGraph *g, int node, const int64_t *dims, int from, int to) {
    int64_t p = 1;
    for (int i = from; i < to; i++) p = rlx_mul_checked(g, node, p, dims[i]);
    return p;
}

/* ---- dtype classes ---- */

static int is_numeric(RlxDType dt) { return rlx_dtype_is_float(dt) || rlx_dtype_is_int(dt); }


int rlx_dtype_in_class(RlxDType dt, int cls) {
    switch (cls) {
    case T_NUMERIC: return is_numeric(dt);
    case T_FLOAT: return rlx_dtype_is_float(dt);
    case T_SIGNED: return rlx_dtype_is_signed(dt);
    case T_BOOL: return dt == RLX_BOOL;
    case T_INDEX: return dt == RLX_I32 || dt == RLX_I64;
    default: return 1;
    }
}

static const char *const class_names[] = {"any", "a numeric type", "a float type", "a signed type", "bool",
                                          "i32 or i64"};

void rlx_want_dtype(const RlxGraph *g, int node, int k, int cls) {
    const RlxValue *v = rlx_input(g, node, k);
    if (!rlx_dtype_in_class(v->dtype, cls))
        rlx_node_error(g, node, "input '%s' has dtype %s, but %s needs %s", v->name, rlx_dtype_name(v->dtype),
                       rlx_ops[node_of(g, node)->op].name, class_names[cls]);
}

void rlx_want_same_dtype(const RlxGraph *g, int node, int a, int b) {
    const RlxValue *va = rlx_input(g, node, a), *vb = rlx_input(g, node, b);
    if (va->dtype != vb->dtype)
        rlx_node_error(g, node, "inputs '%s' and '%s' have different dtypes (%s and %s)", va->name, vb->name,
                       rlx_dtype_name(va->dtype), rlx_dtype_name(vb->dtype));
}

void rlx_want_rank(const RlxGraph *g, int node, int k, int min, int max) {
    const RlxValue *v = rlx_input(g, node, k);
    if (v->rank < min || v->rank > max) {
        if (min == max)
            rlx_node_error(g, node, "input '%s' must have rank %d, not %d (shape %s)", v->name, min, v->rank,
                           rlx_shape_str(v));
        rlx_node_error(g, node, "input '%s' must have rank %d to %d, not %d (shape %s)", v->name, min, max, v->rank,
                       rlx_shape_str(v));
    }
}

/* ---- attributes and constant inputs ---- */

int rlx_norm_axis(const RlxGraph *g, int node, int64_t axis, int rank) {
    if (axis < -(int64_t)rank || axis >= rank)
        rlx_node_error(g, node, "axis %lld is out of range for rank %d", (long long)axis, rank);
    return (int)(axis < 0 ? axis + rank : axis);
}

/* An ints attribute of exactly `count` entries, each >= min; absent -> dflt. */
void rlx_ints_attr(const RlxGraph *g, int node, const char *name, int count, int64_t min, int64_t dflt,
                      int64_t *out) {
    const RlxAttr *a = rlx_attr_get(node_of(g, node), name);
    for (int i = 0; i < count; i++) out[i] = dflt;
    if (!a) return;
    if (a->kind != RLX_A_INTS) rlx_node_error(g, node, "attribute '%s' must be a list of ints", name);
    if (a->n != count) rlx_node_error(g, node, "attribute '%s' must have %d entries, not %d", name, count, a->n);
    for (int i = 0; i < count; i++) {
        if (a->ints[i] < min)
            rlx_node_error(g, node, "attribute '%s' has %lld; entries must be >= %lld", name, (long long)a->ints[i],
                           (long long)min);
        out[i] = a->ints[i];
    }
}

/* "; it depends on graph input(s) 'A', 'B'": the graph inputs (not frozen
 * into weights) that a computed value is derived from, in declaration order,
 * so that the user (and the conformance runner's --freeze retry) learns which
 * input to bind when the value itself is an intermediate one. "" if the value
 * is itself a graph input or depends on none. */
static const char *graph_inputs_behind(const RlxGraph *g, int value) {
    if (g->v[value].flags & RLX_V_INPUT) return "";
    char *seen = rlx_alloc((size_t)g->nv + 1);
    int *stack = rlx_alloc(sizeof(int) * ((size_t)g->nv + 1));
    int top = 0;
    seen[value] = 1;
    stack[top++] = value;
    while (top > 0) {
        const RlxValue *v = &g->v[stack[--top]];
        if (v->producer < 0 || rlx_is_const(g, (int)(v - g->v))) continue;
        const RlxNode *p = &g->n[v->producer];
        for (int k = 0; k < p->nin; k++) {
            int in = p->in[k];
            if (in < 0 || seen[in]) continue;
            seen[in] = 1;
            stack[top++] = in;
        }
    }
    RlxBuf b = {0};
    int count = 0;
    for (int i = 0; i < g->ninputs; i++) {
        int in = g->inputs[i];
        if (!seen[in] || rlx_is_const(g, in)) continue;
        if (count < 8) rlx_buf_printf(&b, "%s'%s'", count ? ", " : "", g->v[in].name);
        count++;
    }
    if (!count) return "";
    return rlx_fmt("; it depends on graph input%s %s%s", count > 1 ? "s" : "", b.data, count > 8 ? ", ..." : "");
}

void rlx_want_const(const RlxGraph *g, int node, int k, const char *role) {
    int value = node_of(g, node)->in[k];
    if (!rlx_is_const(g, value))
        rlx_node_error(g, node, "input '%s' (value '%s') must be a constant (weight)%s", role,
                       rlx_input(g, node, k)->name, graph_inputs_behind(g, value));
}

/* A constant 1-D integer input, read into an arena array of *count entries. */
int64_t *rlx_const_ints(const RlxGraph *g, int node, int k, const char *role, int *count) {
    rlx_want_const(g, node, k, role);
    const RlxValue *v = rlx_input(g, node, k);
    if (!rlx_dtype_is_int(v->dtype) || v->rank != 1)
        rlx_node_error(g, node, "input '%s' (value '%s') must be a 1-D integer tensor, not %s %s", role, v->name,
                       rlx_dtype_name(v->dtype), rlx_shape_str(v));
    if (v->dims[0] > 1 << 20) rlx_node_error(g, node, "input '%s' has too many entries", role);
    int n = (int)v->dims[0];
    int64_t *out = rlx_alloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) out[i] = rlx_weight_i64(v, i);
    *count = n;
    return out;
}

/* Constant axes, normalized, with duplicates rejected; mask[axis] = 1. */
void rlx_axes_mask(const RlxGraph *g, int node, const int64_t *axes, int n, int rank, int *mask) {
    for (int i = 0; i < rank; i++) mask[i] = 0;
    for (int i = 0; i < n; i++) {
        int a = rlx_norm_axis(g, node, axes[i], rank);
        if (mask[a]) rlx_node_error(g, node, "axis %lld is given twice", (long long)axes[i]);
        mask[a] = 1;
    }
}

/* ---- public shape helpers, shared with the lowering ---- */

/* Conv, MaxPool, AveragePool, LpPool over the spatial axes of (N, C, D1..Dn),
 * n = 1 to 3. With auto_pad the given pads are ignored (as ONNX Runtime does)
 * and the effective ones returned; SAME_UPPER puts the odd pad at the end.
 * ceil_mode follows PyTorch (and ONNX from opset 19): a last window that
 * would start in the right padding is dropped. The ONNX node tests
 * (test_maxpool_2d_ceil, test_averagepool_2d_ceil) agree with both this and
 * the older rule without the drop; PyTorch-exported models need this one. */
void rlx_conv_geometry(const RlxGraph *g, int node, RlxWindow *w) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    int is_conv = n->op == RLX_OP_CONV;
    if (x->rank < 3 || x->rank > 2 + RLX_MAX_WINDOW_AXES)
        rlx_node_error(g, node, "input must have rank 3 to %d (N, C, 1 to %d spatial axes), not %d (shape %s)",
                       2 + RLX_MAX_WINDOW_AXES, RLX_MAX_WINDOW_AXES, x->rank, rlx_shape_str(x));
    int ns = x->rank - 2;
    memset(w, 0, sizeof *w);
    w->nsp = ns;
    if (is_conv && (rlx_attr_i(n, "rlx_a_packed", 0) || rlx_attr_i(n, "rlx_wino", 0))) {
        /* weights packed for the GEMM or Winograd (prepack.c) are 1-D: the kernel shape
         * was moved to the attribute, checked when the weights were 4-D */
        rlx_ints_attr(g, node, "kernel_shape", ns, 1, 1, w->k);
    } else if (is_conv) {
        const RlxValue *wt = rlx_input(g, node, 1);
        if (wt->rank != x->rank)
            rlx_node_error(g, node, "weights '%s' must have rank %d (O, I, kernel...) like the input, not %d (shape %s)",
                           wt->name, x->rank, wt->rank, rlx_shape_str(wt));
        if (rlx_attr_get(n, "kernel_shape")) {
            rlx_ints_attr(g, node, "kernel_shape", ns, 1, 1, w->k);
            for (int a = 0; a < ns; a++)
                if (wt->dims[2 + a] != w->k[a])
                    rlx_node_error(g, node, "kernel_shape %s disagrees with the weights' %s", rlx_dims_str(ns, w->k),
                                   rlx_dims_str(ns, wt->dims + 2));
        }
        for (int a = 0; a < ns; a++) w->k[a] = wt->dims[2 + a];
        for (int a = 0; a < ns; a++)
            if (w->k[a] < 1) rlx_node_error(g, node, "empty kernel %s", rlx_dims_str(ns, w->k));
    } else {
        if (!rlx_attr_get(n, "kernel_shape")) rlx_node_error(g, node, "missing required attribute 'kernel_shape'");
        rlx_ints_attr(g, node, "kernel_shape", ns, 1, 1, w->k);
    }
    int64_t pads[2 * RLX_MAX_WINDOW_AXES];
    rlx_ints_attr(g, node, "strides", ns, 1, 1, w->s);
    rlx_ints_attr(g, node, "dilations", ns, 1, 1, w->d);
    rlx_ints_attr(g, node, "pads", 2 * ns, 0, 0, pads);
    const char *auto_pad = rlx_attr_s(n, "auto_pad", "NOTSET");
    int mode = !strcmp(auto_pad, "NOTSET") || !*auto_pad ? 0
               : !strcmp(auto_pad, "VALID")               ? 1
               : !strcmp(auto_pad, "SAME_UPPER")          ? 2
               : !strcmp(auto_pad, "SAME_LOWER")          ? 3
                                                          : -1;
    if (mode < 0) rlx_node_error(g, node, "unknown auto_pad '%s'", auto_pad);
    int64_t ceil_mode = is_conv ? 0 : rlx_attr_i(n, "ceil_mode", 0);
    for (int a = 0; a < ns; a++) {
        int64_t in = x->dims[2 + a], s = w->s[a];
        int64_t dk = rlx_add_checked(g, node, rlx_mul_checked(g, node, w->k[a] - 1, w->d[a]), 1);
        int64_t out, pb = pads[a], pe = pads[a + ns];
        if (mode == 0) {
            int64_t total = rlx_add_checked(g, node, rlx_add_checked(g, node, in, pb), pe);
            if (total < dk) {
                out = 0;
            } else {
                int64_t span = total - dk;
                out = span / s + (ceil_mode && span % s ? 1 : 0) + 1;
                if (ceil_mode && rlx_mul_checked(g, node, out - 1, s) >= in + pb) out--;
            }
        } else if (mode == 1) {
            pb = pe = 0;
            out = in >= dk ? (in - dk) / s + 1 : 0;
        } else {
            out = in / s + (in % s ? 1 : 0);
            int64_t need = out ? rlx_add_checked(g, node, rlx_mul_checked(g, node, out - 1, s), dk) - in : 0;
            if (need < 0) need = 0;
            int64_t small = need / 2, large = need - small;
            pb = mode == 2 ? small : large;
            pe = mode == 2 ? large : small;
        }
        if (out < 1)
            rlx_node_error(g, node,
                           "output axis %d would be %lld: input %lld, kernel %lld (dilated %lld), stride %lld, "
                           "pads %lld+%lld",
                           2 + a, (long long)out, (long long)in, (long long)w->k[a], (long long)dk, (long long)s,
                           (long long)pb, (long long)pe);
        w->pad_begin[a] = pb;
        w->pad_end[a] = pe;
        w->out[a] = out;
    }
}

void rlx_slice_params(const RlxGraph *g, int node, int64_t starts[], int64_t steps[], int64_t out_dims[]) {
    const RlxValue *x = rlx_input(g, node, 0);
    int r = x->rank, ns, ne, na, nst;
    if (r < 1) rlx_node_error(g, node, "cannot slice a scalar");
    int64_t *st = rlx_const_ints(g, node, 1, "starts", &ns);
    int64_t *en = rlx_const_ints(g, node, 2, "ends", &ne);
    if (ns != ne) rlx_node_error(g, node, "starts has %d entries but ends has %d", ns, ne);
    int64_t *axes = NULL, *sp = NULL;
    if (rlx_has_input(g, node, 3)) {
        axes = rlx_const_ints(g, node, 3, "axes", &na);
        if (na != ns) rlx_node_error(g, node, "axes has %d entries but starts has %d", na, ns);
    }
    if (rlx_has_input(g, node, 4)) {
        sp = rlx_const_ints(g, node, 4, "steps", &nst);
        if (nst != ns) rlx_node_error(g, node, "steps has %d entries but starts has %d", nst, ns);
    }
    if (ns > r) rlx_node_error(g, node, "%d slice axes for an input of rank %d", ns, r);
    int seen[RLX_MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        starts[i] = 0;
        steps[i] = 1;
        out_dims[i] = x->dims[i];
    }
    for (int i = 0; i < ns; i++) {
        int a = axes ? rlx_norm_axis(g, node, axes[i], r) : i;
        if (seen[a]) rlx_node_error(g, node, "axis %d is sliced twice", a);
        seen[a] = 1;
        int64_t dim = x->dims[a], step = sp ? sp[i] : 1, b = st[i], e = en[i];
        if (step == 0) rlx_node_error(g, node, "slice step is 0 on axis %d", a);
        if (b < 0) b += dim; /* no overflow: dim >= 0 */
        if (e < 0) e += dim;
        int64_t len;
        if (step > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            e = e < 0 ? 0 : e > dim ? dim : e;
            len = e > b ? (e - b - 1) / step + 1 : 0;
        } else {
            b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
            /* -step would overflow for INT64_MIN: divide by the magnitude as unsigned */
            uint64_t mag = (uint64_t)(-(step + 1)) + 1u;
            len = b > e ? (int64_t)((uint64_t)(b - e - 1) / mag) + 1 : 0;
        }
        if (len == 0) b = 0; /* nothing is read: keep the start inside the input */
        starts[a] = b;
        steps[a] = step;
        out_dims[a] = len;
    }
}

int rlx_reduce_axes(const RlxGraph *g, int node, int rank, int mask[]) {
    const RlxNode *n = node_of(g, node);
    int na = 0;
    int64_t *axes = NULL;
    /* an axes input of static shape [0] is known to be empty, constant or not */
    if (rlx_has_input(g, node, 1)) {
        const RlxValue *av = rlx_input(g, node, 1);
        if (!(av->rank == 1 && av->dims[0] == 0 && rlx_dtype_is_int(av->dtype)))
            axes = rlx_const_ints(g, node, 1, "axes", &na);
    }
    if (na == 0) {
        int noop = rlx_attr_i(n, "noop_with_empty_axes", 0) != 0;
        for (int i = 0; i < rank; i++) mask[i] = !noop;
        return !noop;
    }
    rlx_axes_mask(g, node, axes, na, rank, mask);
    return 1;
}

/* ---- per-op inference ---- */

void rlx_broadcast(const RlxGraph *g, int node, int first, int count, RlxShape *out) {
    out->rank = 0;
    for (int k = first; k < first + count; k++) {
        const RlxValue *v = rlx_input(g, node, k);
        int r = v->rank > out->rank ? v->rank : out->rank;
        int64_t dims[RLX_MAX_RANK];
        for (int i = 0; i < r; i++) {
            int ia = i - (r - out->rank), ib = i - (r - v->rank);
            int64_t a = ia >= 0 ? out->dims[ia] : 1, b = ib >= 0 ? v->dims[ib] : 1;
            if (a != b && a != 1 && b != 1)
                rlx_node_error(g, node, "cannot broadcast %s with %s",
                               k > first ? rlx_dims_str(out->rank, out->dims) : "[]", rlx_shape_str(v));
            dims[i] = a == 1 ? b : a;
        }
        out->rank = r;
        memcpy(out->dims, dims, sizeof(int64_t) * (size_t)r);
    }
}

/* Elementwise ops: all inputs in `cls`, those listed as same-typed equal. */
static void infer_elementwise(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    int cls = T_NUMERIC, same = 1, result = -1;
    switch (n->op) {
    case RLX_OP_POW: same = 0; break;
    case RLX_OP_EQUAL: cls = T_ANY; result = RLX_BOOL; break;
    case RLX_OP_LESS: case RLX_OP_GREATER: result = RLX_BOOL; break;
    case RLX_OP_AND: case RLX_OP_OR: case RLX_OP_NOT: cls = T_BOOL; break;
    case RLX_OP_NEG: cls = T_SIGNED; break;
    case RLX_OP_SQRT: case RLX_OP_RECIPROCAL: case RLX_OP_EXP: case RLX_OP_LOG: case RLX_OP_TANH:
    case RLX_OP_SIGMOID: case RLX_OP_LEAKYRELU: case RLX_OP_ELU: case RLX_OP_HARDSIGMOID: case RLX_OP_HARDSWISH:
    case RLX_OP_SOFTPLUS: cls = T_FLOAT; break;
    case RLX_OP_IDENTITY: cls = T_ANY; break;
    case RLX_OP_LESSOREQUAL: case RLX_OP_GREATEROREQUAL: result = RLX_BOOL; break;
    case RLX_OP_XOR: cls = T_BOOL; break;
    case RLX_OP_ISNAN: case RLX_OP_ISINF: cls = T_FLOAT; result = RLX_BOOL; break;
    case RLX_OP_SIN: case RLX_OP_COS: case RLX_OP_TAN: case RLX_OP_ASIN: case RLX_OP_ACOS: case RLX_OP_ATAN:
    case RLX_OP_SINH: case RLX_OP_COSH: case RLX_OP_ASINH: case RLX_OP_ACOSH: case RLX_OP_ATANH: case RLX_OP_FLOOR:
    case RLX_OP_CEIL: case RLX_OP_ROUND: case RLX_OP_SELU: case RLX_OP_CELU: case RLX_OP_THRESHOLDEDRELU:
    case RLX_OP_SHRINK: case RLX_OP_MISH: case RLX_OP_SOFTSIGN: case RLX_OP_MEAN:
        cls = T_FLOAT;
        break;
    case RLX_OP_BITSHIFT: {
        const char *dir = rlx_attr_s(n, "direction", "");
        if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
            rlx_node_error(g, node, "direction must be \"LEFT\" or \"RIGHT\", not \"%s\"", dir);
        for (int k = 0; k < n->nin; k++) {
            RlxDType dt = rlx_input(g, node, k)->dtype;
            if (!rlx_dtype_is_int(dt) || rlx_dtype_is_signed(dt))
                rlx_node_error(g, node, "input %d is %s; BitShift takes unsigned integers", k, rlx_dtype_name(dt));
        }
        break;
    }
    default: break;
    }
    for (int k = 0; k < n->nin; k++) {
        rlx_want_dtype(g, node, k, cls);
        if (same && k > 0) rlx_want_same_dtype(g, node, 0, k);
    }
    rlx_broadcast(g, node, 0, n->nin, out);
    out->dtype = result >= 0 ? (RlxDType)result : rlx_input(g, node, 0)->dtype;
    /* PRelu's slope broadcasts to X, never X to the slope */
    if (n->op == RLX_OP_PRELU) {
        const RlxValue *x = rlx_input(g, node, 0);
        if (out->rank != x->rank || memcmp(out->dims, x->dims, sizeof(int64_t) * (size_t)x->rank))
            rlx_node_error(g, node, "slope %s does not broadcast to X %s", rlx_shape_str(rlx_input(g, node, 1)),
                           rlx_shape_str(x));
    }
}

/* rlx.Region (fuse.c, or read back from a dump): inputs broadcast; the
 * dtype is the last step's. */
static void infer_region(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    RlxEltStep *steps;
    int ns = rlx_region_parse(g, node, &steps);
    for (int k = 0; k < n->nin; k++)
        if (!rlx_has_input(g, node, k)) rlx_node_error(g, node, "region inputs cannot be absent");
    rlx_broadcast(g, node, 0, n->nin, out);
    out->dtype = steps[ns - 1].dtype;
}

static void infer_where(const RlxGraph *g, int node, RlxShape *out) {
    rlx_want_dtype(g, node, 0, T_BOOL);
    rlx_want_same_dtype(g, node, 1, 2);
    rlx_broadcast(g, node, 0, 3, out);
    out->dtype = rlx_input(g, node, 1)->dtype;
}

static void infer_clip(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    for (int k = 1; k < 3; k++) {
        if (!rlx_has_input(g, node, k)) continue;
        const RlxValue *b = rlx_input(g, node, k);
        rlx_want_same_dtype(g, node, 0, k);
        if (b->rank > 1 || (b->rank == 1 && b->dims[0] != 1))
            rlx_node_error(g, node, "%s bound '%s' must be a scalar, not %s", k == 1 ? "min" : "max", b->name,
                           rlx_shape_str(b));
    }
    out->dtype = x->dtype;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
}

static void infer_cast(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    const RlxAttr *to = rlx_attr_get(node_of(g, node), "to");
    if (!to) rlx_node_error(g, node, "missing required attribute 'to'");
    if (to->kind != RLX_A_DTYPE || to->i < 0 || to->i >= RLX_NDTYPES)
        rlx_node_error(g, node, "attribute 'to' must be a dtype");
    out->dtype = (RlxDType)to->i;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
}

/* Inputs a fusion added (fuse.c): MatMul's bias (input 2, [n]) and the
 * residual (input 3, the output's shape) of MatMul and Gemm. */
static void check_epilogue_inputs(const RlxGraph *g, int node, const RlxShape *out, int bias_at) {
    const RlxNode *n = node_of(g, node);
    if (bias_at >= 0 && rlx_has_input(g, node, bias_at)) {
        const RlxValue *b = rlx_input(g, node, bias_at);
        rlx_want_same_dtype(g, node, 0, bias_at);
        if (b->rank != 1 || out->rank < 1 || b->dims[0] != out->dims[out->rank - 1])
            rlx_node_error(g, node, "fused bias %s must be [%lld]", rlx_shape_str(b),
                           (long long)(out->rank ? out->dims[out->rank - 1] : 0));
    }
    if (rlx_has_input(g, node, 3)) {
        const RlxValue *r = rlx_input(g, node, 3);
        rlx_want_same_dtype(g, node, 0, 3);
        int same = r->rank == out->rank;
        for (int i = 0; same && i < r->rank; i++) same = r->dims[i] == out->dims[i];
        if (!same) rlx_node_error(g, node, "fused residual %s must have the output's shape %s", rlx_shape_str(r),
                                  rlx_dims_str(out->rank, out->dims));
    }
    (void)n;
}

/* CastLike: Cast to target_type's dtype; target_type's shape is free (its
 * values are never read). */
static void infer_castlike(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    out->dtype = rlx_input(g, node, 1)->dtype;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
}

/* An operand with its last two axes swapped (a Transpose the pattern pass
 * folded into the MatMul: rlx_trans_a / rlx_trans_b). */
static RlxValue swapped_view(const RlxValue *v, int swap) {
    RlxValue x = *v;
    if (swap && x.rank >= 2) {
        x.dims[x.rank - 2] = v->dims[v->rank - 1];
        x.dims[x.rank - 1] = v->dims[v->rank - 2];
    }
    return x;
}

static void infer_matmul(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *mn = node_of(g, node);
    RlxValue av = swapped_view(rlx_input(g, node, 0), rlx_attr_i(mn, "rlx_trans_a", 0) != 0);
    RlxValue bv = swapped_view(rlx_input(g, node, 1), rlx_attr_i(mn, "rlx_trans_b", 0) != 0);
    const RlxValue *a = &av, *b = &bv;
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    rlx_want_same_dtype(g, node, 0, 1);
    if (a->rank < 1 || b->rank < 1) rlx_node_error(g, node, "MatMul operands must have rank >= 1");
    /* 1-D operands are promoted ([k] -> [1,k] and [k] -> [k,1]), the added axis dropped afterwards */
    int64_t ka = a->dims[a->rank - 1], kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
    if (ka != kb)
        rlx_node_error(g, node, "inner dimensions differ: %s times %s (%lld vs %lld)", rlx_shape_str(a),
                       rlx_shape_str(b), (long long)ka, (long long)kb);
    int ra = a->rank >= 2 ? a->rank - 2 : 0, rb = b->rank >= 2 ? b->rank - 2 : 0;
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            rlx_node_error(g, node, "cannot broadcast the batch dimensions of %s and %s", rlx_shape_str(a),
                           rlx_shape_str(b));
        out->dims[i] = da == 1 ? db : da;
    }
    out->rank = r;
    if (a->rank >= 2) out->dims[out->rank++] = a->dims[a->rank - 2];
    if (b->rank >= 2) out->dims[out->rank++] = b->dims[b->rank - 1];
    out->dtype = a->dtype;
    check_epilogue_inputs(g, node, out, 2);
}

static void infer_gemm(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *a = rlx_input(g, node, 0), *b = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    rlx_want_same_dtype(g, node, 0, 1);
    rlx_want_rank(g, node, 0, 2, 2);
    rlx_want_rank(g, node, 1, 2, 2);
    int ta = rlx_attr_i(n, "transA", 0) != 0, tb = rlx_attr_i(n, "transB", 0) != 0;
    int64_t m = a->dims[ta], ka = a->dims[1 - ta], kb = b->dims[tb], nn = b->dims[1 - tb];
    if (ka != kb)
        rlx_node_error(g, node, "inner dimensions differ: op(A) is [%lld,%lld], op(B) is [%lld,%lld]", (long long)m,
                       (long long)ka, (long long)kb, (long long)nn);
    out->dtype = a->dtype;
    out->rank = 2;
    out->dims[0] = m;
    out->dims[1] = nn;
    if (rlx_has_input(g, node, 2)) {
        const RlxValue *c = rlx_input(g, node, 2);
        rlx_want_same_dtype(g, node, 0, 2);
        if (c->rank > 2) rlx_node_error(g, node, "C must have rank <= 2, not %d", c->rank);
        for (int i = 0; i < c->rank; i++) {
            int64_t want = out->dims[2 - c->rank + i];
            if (c->dims[i] != want && c->dims[i] != 1)
                rlx_node_error(g, node, "C %s cannot be broadcast to [%lld,%lld]", rlx_shape_str(c), (long long)m,
                               (long long)nn);
        }
    }
    check_epilogue_inputs(g, node, out, -1);
}

/* Conv over 1 to 3 spatial axes; the pools are in ext_conv.c. */
static void infer_conv(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0), *wt = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    rlx_want_same_dtype(g, node, 0, 1);
    RlxWindow w;
    rlx_conv_geometry(g, node, &w); /* checks the ranks */
    int64_t group = rlx_attr_i(n, "group", 1);
    if (group < 1) rlx_node_error(g, node, "group must be >= 1, not %lld", (long long)group);
    if (x->dims[1] % group || wt->dims[0] % group)
        rlx_node_error(g, node, "group %lld does not divide the input channels (%lld) and output channels (%lld)",
                       (long long)group, (long long)x->dims[1], (long long)wt->dims[0]);
    if (wt->dims[1] != x->dims[1] / group)
        rlx_node_error(g, node, "weights %s expect %lld input channels per group, the input has %lld / %lld",
                       rlx_shape_str(wt), (long long)wt->dims[1], (long long)x->dims[1], (long long)group);
    int64_t channels = wt->dims[0];
    if (rlx_has_input(g, node, 2)) {
        const RlxValue *bias = rlx_input(g, node, 2);
        rlx_want_same_dtype(g, node, 0, 2);
        if (bias->rank != 1 || bias->dims[0] != channels)
            rlx_node_error(g, node, "bias %s must have shape [%lld]", rlx_shape_str(bias), (long long)channels);
    }
    out->dtype = x->dtype;
    out->rank = x->rank;
    out->dims[0] = x->dims[0];
    out->dims[1] = channels;
    for (int a = 0; a < w.nsp; a++) out->dims[2 + a] = w.out[a];
}

static void infer_batchnorm(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    if (rlx_attr_i(n, "training_mode", 0) != 0)
        rlx_node_error(g, node, "training_mode=1 is not supported (inference only: running statistics are inputs)");
    /* opset < 14 lists the training outputs (running and saved statistics) as optional */
    for (int k = 1; k < n->nout; k++)
        if (n->out[k] >= 0 && rlx_value_used(g, n->out[k]))
            rlx_node_error(g, node, "output %d (training statistics) is not supported (inference only)", k);
    if (x->rank < 2) rlx_node_error(g, node, "input must have rank >= 2 (N, C, ...), not %d", x->rank);
    static const char *const roles[5] = {"X", "scale", "B", "input_mean", "input_var"};
    for (int k = 0; k < 5; k++) {
        rlx_want_dtype(g, node, k, T_FLOAT);
        if (k == 0) continue;
        const RlxValue *p = rlx_input(g, node, k);
        if (p->rank != 1 || p->dims[0] != x->dims[1])
            rlx_node_error(g, node, "%s '%s' must have shape [%lld], not %s", roles[k], p->name, (long long)x->dims[1],
                           rlx_shape_str(p));
    }
    out->dtype = x->dtype;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
    for (int k = 1; k < n->nout; k++) out[k] = (RlxShape){x->dtype, 1, {x->dims[1]}};
}

/* LayerNormalization: Y, and optionally Mean and InvStdDev (X's leading axes, 1 for the normalized ones). */
static void infer_layernorm(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    if (x->rank < 1) rlx_node_error(g, node, "input must have rank >= 1");
    int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", -1), x->rank);
    for (int k = 1; k < 3; k++) {
        if (!rlx_has_input(g, node, k)) continue;
        rlx_want_same_dtype(g, node, 0, k);
        const RlxValue *p = rlx_input(g, node, k);
        int tail = x->rank - axis;
        int ok = p->rank <= tail;
        for (int i = 0; ok && i < p->rank; i++) {
            int64_t want = x->dims[x->rank - p->rank + i];
            ok = p->dims[i] == want || p->dims[i] == 1;
        }
        if (!ok)
            rlx_node_error(g, node, "%s '%s' %s cannot be broadcast to the normalized shape %s",
                           k == 1 ? "Scale" : "B", p->name, rlx_shape_str(p), rlx_dims_str(tail, x->dims + axis));
    }
    int stash = rlx_dtype_from_onnx((int)rlx_attr_i(n, "stash_type", 1));
    if (stash < 0 || !rlx_dtype_is_float(stash))
        rlx_node_error(g, node, "stash_type %lld is not a float type", (long long)rlx_attr_i(n, "stash_type", 1));
    for (int o = 0; o < 3; o++) {
        out[o].rank = x->rank;
        memcpy(out[o].dims, x->dims, sizeof out[o].dims);
        out[o].dtype = o == 0 ? x->dtype : (RlxDType)stash;
        if (o > 0)
            for (int i = axis; i < x->rank; i++) out[o].dims[i] = 1;
    }
}

static void infer_softmax(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    rlx_norm_axis(g, node, rlx_attr_i(node_of(g, node), "axis", -1), x->rank);
    out->dtype = x->dtype;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof out->dims);
}

static void infer_reshape(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int ns;
    int64_t *shape = rlx_const_ints(g, node, 1, "shape", &ns);
    if (ns > RLX_MAX_RANK) rlx_node_error(g, node, "target rank %d exceeds the maximum %d", ns, RLX_MAX_RANK);
    int allowzero = rlx_attr_i(node_of(g, node), "allowzero", 0) != 0;
    int infer_at = -1, has_zero = 0;
    int64_t known = 1;
    for (int i = 0; i < ns; i++) {
        int64_t d = shape[i];
        if (d == -1) {
            if (infer_at >= 0) rlx_node_error(g, node, "shape %s has more than one -1", rlx_dims_str(ns, shape));
            infer_at = i;
            continue;
        }
        if (d < -1) rlx_node_error(g, node, "shape %s has a negative dimension", rlx_dims_str(ns, shape));
        if (d == 0) {
            has_zero = 1;
            if (!allowzero) {
                if (i >= x->rank)
                    rlx_node_error(g, node, "shape %s copies dimension %d, but the input %s has rank %d",
                                   rlx_dims_str(ns, shape), i, rlx_shape_str(x), x->rank);
                d = x->dims[i];
            }
        }
        out->dims[i] = d;
        known = rlx_mul_checked(g, node, known, d);
    }
    if (allowzero && has_zero && infer_at >= 0)
        rlx_node_error(g, node, "shape %s has both 0 and -1 with allowzero", rlx_dims_str(ns, shape));
    int64_t numel = rlx_prod_checked(g, node, x->dims, 0, x->rank);
    if (infer_at >= 0) {
        if (known == 0 || numel % known)
            rlx_node_error(g, node, "cannot reshape %s (%lld elements) to %s", rlx_shape_str(x), (long long)numel,
                           rlx_dims_str(ns, shape));
        out->dims[infer_at] = numel / known;
    } else if (known != numel) {
        rlx_node_error(g, node, "cannot reshape %s (%lld elements) to %s (%lld elements)", rlx_shape_str(x),
                       (long long)numel, rlx_dims_str(ns, shape), (long long)known);
    }
    out->rank = ns;
    out->dtype = x->dtype;
}

static void infer_flatten(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int64_t axis = rlx_attr_i(node_of(g, node), "axis", 1);
    if (axis < -(int64_t)x->rank || axis > x->rank)
        rlx_node_error(g, node, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
    int a = (int)(axis < 0 ? axis + x->rank : axis);
    out->dtype = x->dtype;
    out->rank = 2;
    out->dims[0] = rlx_prod_checked(g, node, x->dims, 0, a);
    out->dims[1] = rlx_prod_checked(g, node, x->dims, a, x->rank);
}

static void infer_squeeze(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int mask[RLX_MAX_RANK];
    if (rlx_has_input(g, node, 1)) {
        int na;
        int64_t *axes = rlx_const_ints(g, node, 1, "axes", &na);
        rlx_axes_mask(g, node, axes, na, x->rank, mask);
        for (int i = 0; i < x->rank; i++)
            if (mask[i] && x->dims[i] != 1)
                rlx_node_error(g, node, "cannot squeeze axis %d of size %lld (input %s)", i, (long long)x->dims[i],
                               rlx_shape_str(x));
    } else {
        for (int i = 0; i < x->rank; i++) mask[i] = x->dims[i] == 1;
    }
    out->dtype = x->dtype;
    out->rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (!mask[i]) out->dims[out->rank++] = x->dims[i];
}

static void infer_unsqueeze(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int na;
    int64_t *axes = rlx_const_ints(g, node, 1, "axes", &na);
    if (x->rank + na > RLX_MAX_RANK)
        rlx_node_error(g, node, "output rank %d exceeds the maximum %d", x->rank + na, RLX_MAX_RANK);
    int r = x->rank + na, mask[RLX_MAX_RANK];
    rlx_axes_mask(g, node, axes, na, r, mask);
    for (int i = 0, j = 0; i < r; i++) out->dims[i] = mask[i] ? 1 : x->dims[j++];
    out->rank = r;
    out->dtype = x->dtype;
}

static void infer_transpose(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    const RlxAttr *pa = rlx_attr_get(node_of(g, node), "perm");
    int r = x->rank;
    int64_t perm[RLX_MAX_RANK];
    if (pa) {
        if (pa->kind != RLX_A_INTS) rlx_node_error(g, node, "attribute 'perm' must be a list of ints");
        int seen[RLX_MAX_RANK] = {0}, ok = pa->n == r;
        for (int i = 0; ok && i < r; i++) {
            ok = pa->ints[i] >= 0 && pa->ints[i] < r && !seen[pa->ints[i]];
            if (ok) seen[pa->ints[i]] = 1;
        }
        if (!ok) {
            RlxBuf b = {0};
            for (int i = 0; i < pa->n && i < 16; i++) rlx_buf_printf(&b, i ? ",%lld" : "%lld", (long long)pa->ints[i]);
            rlx_node_error(g, node, "perm [%s%s] is not a permutation of 0..%d", b.data ? b.data : "",
                           pa->n > 16 ? ",..." : "", r - 1);
        }
        memcpy(perm, pa->ints, sizeof(int64_t) * (size_t)r);
    } else {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
    }
    for (int i = 0; i < r; i++) out->dims[i] = x->dims[perm[i]];
    out->rank = r;
    out->dtype = x->dtype;
}

static void infer_concat(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x0 = rlx_input(g, node, 0);
    if (x0->rank < 1) rlx_node_error(g, node, "cannot concatenate scalars");
    int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", 0), x0->rank);
    *out = (RlxShape){x0->dtype, x0->rank, {0}};
    memcpy(out->dims, x0->dims, sizeof out->dims);
    out->dims[axis] = 0;
    for (int k = 0; k < n->nin; k++) {
        const RlxValue *x = rlx_input(g, node, k);
        rlx_want_same_dtype(g, node, 0, k);
        int ok = x->rank == x0->rank;
        for (int i = 0; ok && i < x->rank; i++) ok = i == axis || x->dims[i] == x0->dims[i];
        if (!ok)
            rlx_node_error(g, node, "cannot concatenate %s and %s along axis %d", rlx_shape_str(x0), rlx_shape_str(x),
                           axis);
        out->dims[axis] = rlx_add_checked(g, node, out->dims[axis], x->dims[axis]);
    }
}

static void infer_split(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    if (x->rank < 1) rlx_node_error(g, node, "cannot split a scalar");
    int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", 0), x->rank);
    int64_t dim = x->dims[axis];
    int nout = n->nout;
    int64_t *sizes = rlx_alloc(sizeof(int64_t) * (size_t)(nout + 1));
    const RlxAttr *num = rlx_attr_get(n, "num_outputs");
    if (rlx_has_input(g, node, 1)) {
        if (num) rlx_node_error(g, node, "give either the split input or num_outputs, not both");
        int ns;
        int64_t *split = rlx_const_ints(g, node, 1, "split", &ns);
        if (ns != nout) rlx_node_error(g, node, "split has %d entries for %d outputs", ns, nout);
        int64_t total = 0;
        for (int i = 0; i < ns; i++) {
            if (split[i] < 0) rlx_node_error(g, node, "split has a negative size %lld", (long long)split[i]);
            sizes[i] = split[i];
            total = rlx_add_checked(g, node, total, split[i]);
        }
        if (total != dim)
            rlx_node_error(g, node, "split sizes add up to %lld, but axis %d has size %lld", (long long)total, axis,
                           (long long)dim);
    } else if (num) {
        if (num->kind != RLX_A_INT || num->i != nout)
            rlx_node_error(g, node, "num_outputs must equal the number of outputs (%d)", nout);
        /* opset 18: chunks of ceil(dim / n), the last one smaller */
        int64_t chunk = dim / nout + (dim % nout ? 1 : 0);
        for (int i = 0; i < nout; i++) {
            int64_t left = dim - chunk * i; /* chunk * i <= dim + nout: no overflow */
            sizes[i] = left < chunk ? left : chunk;
            if (sizes[i] < 0 || (sizes[i] == 0 && dim > 0))
                rlx_node_error(g, node, "axis %d of size %lld cannot be split into %d parts", axis, (long long)dim,
                               nout);
        }
    } else {
        if (dim % nout)
            rlx_node_error(g, node, "axis %d of size %lld cannot be split into %d equal parts", axis, (long long)dim,
                           nout);
        for (int i = 0; i < nout; i++) sizes[i] = dim / nout;
    }
    for (int i = 0; i < nout; i++) {
        out[i] = (RlxShape){x->dtype, x->rank, {0}};
        memcpy(out[i].dims, x->dims, sizeof out[i].dims);
        out[i].dims[axis] = sizes[i];
    }
}

static void infer_slice(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int64_t starts[RLX_MAX_RANK], steps[RLX_MAX_RANK];
    rlx_slice_params(g, node, starts, steps, out->dims);
    out->rank = x->rank;
    out->dtype = x->dtype;
}

static void infer_gather(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0), *idx = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 1, T_INDEX);
    if (x->rank < 1) rlx_node_error(g, node, "cannot gather from a scalar");
    int axis = rlx_norm_axis(g, node, rlx_attr_i(node_of(g, node), "axis", 0), x->rank);
    int r = x->rank - 1 + idx->rank;
    if (r > RLX_MAX_RANK) rlx_node_error(g, node, "output rank %d exceeds the maximum %d", r, RLX_MAX_RANK);
    int64_t dim = x->dims[axis];
    if (rlx_is_const(g, node_of(g, node)->in[1])) {
        int64_t count = rlx_value_numel(idx);
        for (int64_t i = 0; i < count; i++) {
            int64_t j = rlx_weight_i64(idx, i);
            if (j < -dim || j >= dim)
                rlx_node_error(g, node, "index %lld is out of range for axis %d of size %lld", (long long)j, axis,
                               (long long)dim);
        }
    }
    out->rank = 0;
    for (int i = 0; i < axis; i++) out->dims[out->rank++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) out->dims[out->rank++] = idx->dims[i];
    for (int i = axis + 1; i < x->rank; i++) out->dims[out->rank++] = x->dims[i];
    out->dtype = x->dtype;
}

static void infer_pad(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int r = x->rank, np, mask[RLX_MAX_RANK];
    const char *mode = rlx_attr_s(node_of(g, node), "mode", "constant");
    int reflect = !strcmp(mode, "reflect"), edge = !strcmp(mode, "edge");
    if (!reflect && !edge && strcmp(mode, "constant"))
        rlx_node_error(g, node, "pad mode '%s' is not supported (constant, reflect, edge)", mode);
    int64_t *pads = rlx_const_ints(g, node, 1, "pads", &np);
    int64_t axes[RLX_MAX_RANK], *given = NULL;
    int na = r;
    if (rlx_has_input(g, node, 3)) {
        given = rlx_const_ints(g, node, 3, "axes", &na);
        if (na > r) rlx_node_error(g, node, "%d axes for an input of rank %d", na, r);
        rlx_axes_mask(g, node, given, na, r, mask);
        for (int i = 0; i < na; i++) axes[i] = rlx_norm_axis(g, node, given[i], r);
    } else {
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    if (np != 2 * na) rlx_node_error(g, node, "pads has %d entries; %d axes need %d", np, na, 2 * na);
    if (rlx_has_input(g, node, 2)) {
        const RlxValue *cv = rlx_input(g, node, 2);
        rlx_want_const(g, node, 2, "constant_value");
        rlx_want_same_dtype(g, node, 0, 2);
        if (rlx_value_numel(cv) != 1)
            rlx_node_error(g, node, "constant_value '%s' must be a scalar, not %s", cv->name, rlx_shape_str(cv));
    }
    *out = (RlxShape){x->dtype, r, {0}};
    memcpy(out->dims, x->dims, sizeof out->dims);
    for (int i = 0; i < na; i++) {
        int a = (int)axes[i];
        int64_t b = pads[i], e = pads[i + na], dim = x->dims[a];
        int64_t d = rlx_add_checked(g, node, rlx_add_checked(g, node, dim, b), e);
        if (d < 0)
            rlx_node_error(g, node, "pads %lld+%lld make axis %d of size %lld negative", (long long)b, (long long)e, a,
                           (long long)dim);
        if ((reflect && (b > dim - 1 || e > dim - 1) && (b > 0 || e > 0)) || (edge && dim == 0 && (b > 0 || e > 0)))
            rlx_node_error(g, node, "%s padding of %lld+%lld does not fit axis %d of size %lld", mode, (long long)b,
                           (long long)e, a, (long long)dim);
        out->dims[a] = d;
    }
}

static void infer_reduce(const RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    int mask[RLX_MAX_RANK];
    int keep = rlx_attr_i(node_of(g, node), "keepdims", 1) != 0;
    rlx_reduce_axes(g, node, x->rank, mask);
    out->dtype = x->dtype;
    out->rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (!mask[i]) out->dims[out->rank++] = x->dims[i];
        else if (keep) out->dims[out->rank++] = 1;
}

static void infer_argmax(const RlxGraph *g, int node, RlxShape *out) {
    const RlxNode *n = node_of(g, node);
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_NUMERIC);
    if (x->rank < 1) rlx_node_error(g, node, "input must have rank >= 1");
    int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", 0), x->rank);
    if (x->dims[axis] == 0)
        rlx_node_error(g, node, "axis %d is empty: no %s", axis, n->op == RLX_OP_ARGMIN ? "minimum" : "maximum");
    int keep = rlx_attr_i(n, "keepdims", 1) != 0;
    out->dtype = RLX_I64;
    out->rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (i != axis) out->dims[out->rank++] = x->dims[i];
        else if (keep) out->dims[out->rank++] = 1;
}

static void check_arity(const RlxGraph *g, int node) {
    const RlxNode *n = node_of(g, node);
    const RlxOpInfo *op = &rlx_ops[n->op];
    if (n->nin < op->min_in || (op->max_in >= 0 && n->nin > op->max_in)) {
        if (op->max_in == op->min_in) rlx_node_error(g, node, "takes %d inputs, not %d", op->min_in, n->nin);
        if (op->max_in < 0) rlx_node_error(g, node, "takes at least %d inputs, not %d", op->min_in, n->nin);
        rlx_node_error(g, node, "takes %d to %d inputs, not %d", op->min_in, op->max_in, n->nin);
    }
    if (n->nout < op->min_out || (op->max_out >= 0 && n->nout > op->max_out)) {
        if (op->max_out == op->min_out) rlx_node_error(g, node, "has %d outputs, not %d", op->min_out, n->nout);
        if (op->max_out < 0) rlx_node_error(g, node, "has at least %d outputs, not %d", op->min_out, n->nout);
        rlx_node_error(g, node, "has %d to %d outputs, not %d", op->min_out, op->max_out, n->nout);
    }
    /* inputs past min_in are optional, except for variadic ops */
    for (int k = 0; k < n->nin; k++) {
        int v = n->in[k];
        if (v < 0) {
            if (k < op->min_in || op->max_in < 0) rlx_node_error(g, node, "input %d is required", k);
            continue;
        }
        if (g->v[v].rank < 0) rlx_node_error(g, node, "input '%s' has no known shape", g->v[v].name);
    }
    if (n->out[0] < 0) rlx_node_error(g, node, "the first output is required");
}

static void infer_node(RlxGraph *g, int node) {
    const RlxNode *n = node_of(g, node);
    RlxShape out[3];
    RlxShape *outs = out;
    memset(out, 0, sizeof out);
    check_arity(g, node);
    if (n->nout > 3) outs = rlx_alloc(sizeof(RlxShape) * (size_t)n->nout);
    const RlxOpInfo *op = &rlx_ops[n->op];
    switch (n->op) {
    case RLX_OP_WHERE: infer_where(g, node, outs); break;
    case RLX_OP_REGION: infer_region(g, node, outs); break;
    case RLX_OP_CLIP: infer_clip(g, node, outs); break;
    case RLX_OP_CAST: infer_cast(g, node, outs); break;
    case RLX_OP_CASTLIKE: infer_castlike(g, node, outs); break;
    case RLX_OP_MATMUL: infer_matmul(g, node, outs); break;
    case RLX_OP_GEMM: infer_gemm(g, node, outs); break;
    case RLX_OP_CONV: infer_conv(g, node, outs); break;
    case RLX_OP_BATCHNORM: infer_batchnorm(g, node, outs); break;
    case RLX_OP_LAYERNORM: infer_layernorm(g, node, outs); break;
    case RLX_OP_SOFTMAX: case RLX_OP_LOGSOFTMAX: infer_softmax(g, node, outs); break;
    case RLX_OP_RESHAPE: infer_reshape(g, node, outs); break;
    case RLX_OP_FLATTEN: infer_flatten(g, node, outs); break;
    case RLX_OP_SQUEEZE: infer_squeeze(g, node, outs); break;
    case RLX_OP_UNSQUEEZE: infer_unsqueeze(g, node, outs); break;
    case RLX_OP_TRANSPOSE: infer_transpose(g, node, outs); break;
    case RLX_OP_CONCAT: infer_concat(g, node, outs); break;
    case RLX_OP_SPLIT: infer_split(g, node, outs); break;
    case RLX_OP_SLICE: infer_slice(g, node, outs); break;
    case RLX_OP_GATHER: infer_gather(g, node, outs); break;
    case RLX_OP_PAD: infer_pad(g, node, outs); break;
    case RLX_OP_REDUCEMEAN: case RLX_OP_REDUCESUM: case RLX_OP_REDUCEMAX: case RLX_OP_REDUCEMIN:
    case RLX_OP_REDUCEL1: case RLX_OP_REDUCEL2: case RLX_OP_REDUCELOGSUM: case RLX_OP_REDUCELOGSUMEXP:
    case RLX_OP_REDUCEPROD: case RLX_OP_REDUCESUMSQUARE:
        infer_reduce(g, node, outs);
        break;
    case RLX_OP_ARGMAX: case RLX_OP_ARGMIN: infer_argmax(g, node, outs); break;
    case RLX_OP_CONSTANT:
        rlx_node_error(g, node, "Constant nodes must be turned into weights before inference");
        break;
    default:
        /* an op family may add nodes (control flow): n is fetched again */
        if (rlx_infer_ext(g, node, outs)) {
            n = node_of(g, node);
            break;
        }
        RLX_ASSERT(op->flags & (RLX_OPF_ELT | RLX_OPF_VIEW));
        infer_elementwise(g, node, outs);
        break;
    }
    for (int k = 0; k < n->nout; k++) {
        int vid = n->out[k];
        if (vid < 0) continue;
        const RlxShape *s = &outs[k];
        RLX_ASSERT(s->rank >= 0 && s->rank <= RLX_MAX_RANK && s->dtype >= 0 && s->dtype < RLX_NDTYPES);
        for (int i = 0; i < s->rank; i++) RLX_ASSERT(s->dims[i] >= 0);
        RlxValue *v = &g->v[vid];
        v->dtype = s->dtype;
        v->rank = s->rank;
        memset(v->dims, 0, sizeof v->dims);
        memcpy(v->dims, s->dims, sizeof(int64_t) * (size_t)s->rank);
        if (!rlx_value_size_ok(v, NULL))
            rlx_node_error(g, node, "output '%s' %s %s: its byte size overflows 64 bits", v->name,
                           rlx_dtype_name(v->dtype), rlx_shape_str(v));
    }
}

static void check_external(const RlxGraph *g, int vid, const char *what) {
    const RlxValue *v = &g->v[vid];
    if (v->rank < 0) rlx_error("%s: %s '%s' has no shape", g->file, what, v->name);
    if (v->rank > RLX_MAX_RANK || v->dtype < 0 || v->dtype >= RLX_NDTYPES)
        rlx_error("%s: %s '%s' has an invalid rank or dtype", g->file, what, v->name);
    for (int i = 0; i < v->rank; i++)
        if (v->dims[i] < 0)
            rlx_error("%s: %s '%s' has a negative or unbound dimension %s", g->file, what, v->name, rlx_shape_str(v));
    if (!rlx_value_size_ok(v, NULL))
        rlx_error("%s: %s '%s' %s %s: its byte size overflows 64 bits", g->file, what, v->name,
                  rlx_dtype_name(v->dtype), rlx_shape_str(v));
}

static void check_outputs(const RlxGraph *g) {
    for (int k = 0; k < g->noutputs; k++) {
        const RlxValue *v = &g->v[g->outputs[k]];
        if (v->rank < 0) rlx_error("%s: graph output '%s' has no known shape", g->file, v->name);
        if (!g->output_decl) continue;
        const RlxDecl *d = &g->output_decl[k];
        int bad = d->dtype >= 0 && d->dtype != (int)v->dtype;
        if (d->rank >= 0) {
            bad |= d->rank != v->rank;
            for (int i = 0; !bad && i < d->rank; i++) bad = d->dims[i] != v->dims[i];
        }
        if (bad)
            rlx_error("%s: graph output '%s' is declared as %s%s%s but inferred as %s %s", g->file, v->name,
                      d->dtype >= 0 ? rlx_dtype_name(d->dtype) : "", d->dtype >= 0 && d->rank >= 0 ? " " : "",
                      d->rank >= 0 ? rlx_dims_str(d->rank, d->dims) : "", rlx_dtype_name(v->dtype), rlx_shape_str(v));
    }
}

void rlx_infer(RlxGraph *g) {
    int live = 0;
    for (int i = 0; i < g->nn; i++) live += !g->n[i].dead;
    RLX_ASSERT(g->norder == live && (live == 0 || g->order));
    for (int k = 0; k < g->ninputs; k++) check_external(g, g->inputs[k], "graph input");
    for (int v = 0; v < g->nv; v++)
        if (g->v[v].flags & RLX_V_WEIGHT) check_external(g, v, "weight");
    for (int s = 0; s < g->norder; s++) {
        RLX_ASSERT(!g->n[g->order[s]].dead);
        rlx_infer_node(g, g->order[s]);
    }
    check_outputs(g);
}

/* A thunk, like a fused region, takes at most 16 operands (RlxThunk.in), so
 * a Sum, Max, Min or Mean of more inputs is cut into a chain first: its
 * first 16 inputs go to a new node of the same op (Sum for a Mean), whose
 * result replaces them, until 16 are left. The additions (comparisons)
 * happen in the same order as in one node. A Mean becomes that Sum chain
 * divided by its input count, rs_mean's own sum / n. The new nodes are
 * inferred (and folded) here, as ext_ctrl.c's are; the next schedule pass
 * places them. */
#define MAX_VARIADIC 16

static void split_variadic(RlxGraph *g, int node) {
    RlxOp op = g->n[node].op;
    if ((op != RLX_OP_SUM && op != RLX_OP_MAX && op != RLX_OP_MIN && op != RLX_OP_MEAN) ||
        g->n[node].nin <= MAX_VARIADIC)
        return;
    int total = g->n[node].nin, pos = 0, prev = -1, part = 0;
    RlxOp part_op = op == RLX_OP_MEAN ? RLX_OP_SUM : op;
    const int *orig = g->n[node].in;   /* the node gets a new array at the end */
    for (int i = 0; i < total; i++)
        if (orig[i] < 0) rlx_node_error(g, node, "input %d must not be empty", i);
    if (op == RLX_OP_MEAN) rlx_want_dtype(g, node, 0, T_FLOAT);
    /* parts while more than one node's worth is left (a Mean: all of it) */
    while (total - pos + (prev >= 0) > MAX_VARIADIC || (op == RLX_OP_MEAN && pos < total)) {
        int in[MAX_VARIADIC], k = 0;
        if (prev >= 0) in[k++] = prev;
        while (k < MAX_VARIADIC && pos < total) in[k++] = orig[pos++];
        const char *name = rlx_fmt("%s/part%d", g->n[node].name, part++);
        int out = rlx_value_add(g, name);
        int id = rlx_node_add(g, name, part_op, k, in, 1, &out);
        g->v[out].producer = id;
        rlx_attr_check(g, id);
        rlx_infer_node(g, id);
        prev = out;
    }
    RlxNode *n = &g->n[node];
    int *in = rlx_alloc(sizeof(int) * (size_t)(total - pos + 2));
    in[0] = prev;
    memcpy(in + 1, orig + pos, sizeof(int) * (size_t)(total - pos));
    n->in = in;
    n->nin = 1 + total - pos;
    if (op == RLX_OP_MEAN) {
        /* the node becomes the division of the whole sum by the count */
        double count = (double)total;
        int c = rlx_value_add(g, rlx_fmt("%s/count", n->name));
        RlxValue *cv = &g->v[c];
        cv->dtype = g->v[prev].dtype;
        cv->rank = 0;
        cv->flags = RLX_V_WEIGHT;
        uint8_t *bytes = rlx_alloc(8);
        if (cv->dtype == RLX_F64) memcpy(bytes, &count, 8);
        else if (cv->dtype == RLX_F32) { float f = (float)count; memcpy(bytes, &f, 4); }
        else if (cv->dtype == RLX_F16) { uint16_t h = rlx_f32_to_f16((float)count); memcpy(bytes, &h, 2); }
        else { uint16_t h = rlx_f32_to_bf16((float)count); memcpy(bytes, &h, 2); }
        cv->data = bytes;
        n = &g->n[node];
        n->op = RLX_OP_DIV;
        n->in[1] = c;
        n->nin = 2;
    }
}

/* Also called by ext_ctrl.c for the nodes it adds while expanding control
 * flow, whose inputs are inferred already. */
void rlx_infer_node(RlxGraph *g, int node) {
    split_variadic(g, node);
    infer_node(g, node);
    /* Weight-only work happens once, here: a node whose inputs are all
     * constants is evaluated now (so later shapes can depend on it, as
     * in the RlxShape->Gather->Concat->Reshape chains of exporters). */
    if (!g->n[node].dead && !rlx_node_unsupported(g, node, "c")) rlx_fold_node(g, node);
}
