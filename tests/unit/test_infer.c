/* test_infer.c - schedule, Constant folding to weights, shape inference and
 * legalization on small graphs built with the IR API.
 *
 * Each test builds a graph, runs constants -> schedule -> infer (and
 * legalize where it says so) under rlx_try, and compares the inferred
 * shapes with values derived by hand in the comments (NumPy/PyTorch rules;
 * the MaxPool ceil_mode and Slice cases were checked against torch and
 * numpy). Error cases check the one-line message.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"

#define DIMS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define VALS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define IDS(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__}

static RlxGraph *g;
static int counter;

static void fresh(void) {
    g = rlx_graph_new("t.rlxg");
    counter = 0;
}

static void set_shape(int v, RlxDType dt, int rank, const int64_t *dims) {
    g->v[v].dtype = dt;
    g->v[v].rank = rank;
    if (rank) memcpy(g->v[v].dims, dims, sizeof(int64_t) * (size_t)rank);
}

static int input(const char *name, RlxDType dt, int rank, const int64_t *dims) {
    int v = rlx_value_add(g, name);
    set_shape(v, dt, rank, dims);
    g->v[v].flags |= RLX_V_INPUT;
    g->inputs = rlx_realloc(g->inputs, sizeof(int) * (size_t)g->ninputs, sizeof(int) * (size_t)(g->ninputs + 1));
    g->inputs[g->ninputs++] = v;
    return v;
}

/* A weight of zeros. */
static int weight(const char *name, RlxDType dt, int rank, const int64_t *dims) {
    int v = rlx_value_add(g, name);
    set_shape(v, dt, rank, dims);
    g->v[v].flags |= RLX_V_WEIGHT;
    g->v[v].data = rlx_alloc((size_t)rlx_value_bytes(&g->v[v]) + 1);
    return v;
}

/* A 1-D i64 weight holding vals. */
static int ints(int n, const int64_t *vals) {
    int v = rlx_value_add(g, rlx_fmt("c%d", counter++));
    set_shape(v, RLX_I64, 1, (int64_t[]){n});
    g->v[v].flags |= RLX_V_WEIGHT;
    uint8_t *d = rlx_alloc(sizeof(int64_t) * (size_t)n + 1);
    memcpy(d, vals, sizeof(int64_t) * (size_t)n);
    g->v[v].data = d;
    return v;
}

/* A node with nout fresh output values; returns the node id. */
static int node_n(const char *op, int nin, const int *in, int nout) {
    int outs[16];
    for (int k = 0; k < nout; k++) outs[k] = rlx_value_add(g, rlx_fmt("v%d", counter++));
    int o = rlx_op_from_name(op);
    cr_assert(o >= 0, "no op %s", op);
    return rlx_node_add(g, rlx_fmt("n%d", counter++), (RlxOp)o, nin, in, nout, outs);
}

/* A one-output node; returns the output value id. */
static int node(const char *op, int nin, const int *in) {
    int n = node_n(op, nin, in, 1);
    return g->n[n].out[0];
}

static int last_node(void) { return g->nn - 1; }

static void attr_i(int n, const char *name, int64_t x) { rlx_attr_add(g, n, name, RLX_A_INT)->i = x; }
static void attr_s(int n, const char *name, const char *s) { rlx_attr_add(g, n, name, RLX_A_STRING)->s = s; }
static void attr_ints(int n, const char *name, int count, const int64_t *xs) {
    RlxAttr *a = rlx_attr_add(g, n, name, RLX_A_INTS);
    a->n = count;
    a->ints = rlx_alloc(sizeof(int64_t) * (size_t)(count + 1));
    memcpy(a->ints, xs, sizeof(int64_t) * (size_t)count);
}

static void output(int v) {
    g->outputs = rlx_realloc(g->outputs, sizeof(int) * (size_t)g->noutputs, sizeof(int) * (size_t)(g->noutputs + 1));
    g->outputs[g->noutputs++] = v;
    g->v[v].flags |= RLX_V_OUTPUT;
}

/* constants -> schedule -> infer; 0 on success, 1 with rlx_diag.msg set. */
static int run(void) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        return 1;
    }
    rlx_constants_to_weights(g);
    rlx_schedule(g);
    rlx_infer(g);
    rlx_diag.jmp = NULL;
    return 0;
}

static int legalize(const char *target) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        return 1;
    }
    rlx_legalize(g, target);
    rlx_diag.jmp = NULL;
    return 0;
}

static void ok(void) { cr_assert_eq(run(), 0, "unexpected error: %s", rlx_diag.msg); }

static void fails_with(const char *text) {
    cr_assert_eq(run(), 1, "expected an error containing \"%s\"", text);
    cr_assert(strstr(rlx_diag.msg, text), "message \"%s\" lacks \"%s\"", rlx_diag.msg, text);
    cr_assert(!strchr(rlx_diag.msg, '\n'));
}

static void shape_is(int v, RlxDType dt, int rank, const int64_t *dims) {
    const RlxValue *x = &g->v[v];
    cr_assert_eq(x->dtype, dt, "%s: dtype %s, expected %s", x->name, rlx_dtype_name(x->dtype), rlx_dtype_name(dt));
    cr_assert_eq(x->rank, rank, "%s: rank %d (%s), expected %d", x->name, x->rank, rlx_shape_str(x), rank);
    for (int i = 0; i < rank; i++)
        cr_assert_eq(x->dims[i], dims[i], "%s: shape %s, dim %d expected %lld", x->name, rlx_shape_str(x), i,
                     (long long)dims[i]);
}

#define F32 RLX_F32

/* ---- elementwise and broadcasting ---- */

Test(infer, broadcast_every_axis) {
    fresh();
    int a = input("a", F32, DIMS(2, 1, 4)), b = input("b", F32, DIMS(3, 1));
    int y = node("Add", IDS(a, b));
    /* [5,1,1,3] with [4,1]: -> [5,1,4,3] */
    int c = input("c", F32, DIMS(5, 1, 1, 3)), d = input("d", F32, DIMS(4, 1));
    int z = node("Mul", IDS(c, d));
    /* Sum of [1,3], [2,1], [] -> [2,3] */
    int e = input("e", F32, DIMS(1, 3)), f = input("f", F32, DIMS(2, 1));
    int s = input("s", F32, 0, NULL);
    int w = node("Sum", IDS(e, f, s));
    output(y), output(z), output(w);
    ok();
    shape_is(y, F32, DIMS(2, 3, 4));
    shape_is(z, F32, DIMS(5, 1, 4, 3));
    shape_is(w, F32, DIMS(2, 3));
}

Test(infer, broadcast_zero_dim) {
    fresh();
    int a = input("a", F32, DIMS(0, 3)), b = input("b", F32, DIMS(1, 3));
    int y = node("Sub", IDS(a, b));
    output(y);
    ok();
    shape_is(y, F32, DIMS(0, 3));
}

Test(infer, broadcast_mismatch) {
    fresh();
    int a = input("a", F32, DIMS(2, 3)), b = input("b", F32, DIMS(4));
    output(node("Add", IDS(a, b)));
    fails_with("t.rlxg: node 'n1' (Add): cannot broadcast [2,3] with [4]");
}

Test(infer, broadcast_mismatch_middle_axis) {
    fresh();
    int a = input("a", F32, DIMS(2, 3, 4)), b = input("b", F32, DIMS(2, 2, 4));
    output(node("Add", IDS(a, b)));
    fails_with("cannot broadcast [2,3,4] with [2,2,4]");
}

Test(infer, dtype_rules) {
    fresh();
    int a = input("a", F32, DIMS(2, 3)), b = input("b", F32, DIMS(3));
    int lt = node("Less", IDS(a, b));
    int nt = node("Not", IDS(lt));
    int i = input("i", RLX_I32, DIMS(2, 1));
    int wh = node("Where", IDS(nt, a, b));
    int ca = node("Cast", IDS(i));
    rlx_attr_add(g, last_node(), "to", RLX_A_DTYPE)->i = RLX_F16;
    int eq = node("Equal", IDS(i, i));
    output(wh), output(ca), output(eq);
    ok();
    shape_is(lt, RLX_BOOL, DIMS(2, 3));
    shape_is(wh, F32, DIMS(2, 3));
    shape_is(ca, RLX_F16, DIMS(2, 1));
    shape_is(eq, RLX_BOOL, DIMS(2, 1));
}

Test(infer, add_dtype_mismatch) {
    fresh();
    int a = input("a", F32, DIMS(2)), b = input("b", RLX_I64, DIMS(2));
    output(node("Add", IDS(a, b)));
    fails_with("have different dtypes (f32 and i64)");
}

Test(infer, where_needs_bool) {
    fresh();
    int a = input("a", F32, DIMS(2));
    output(node("Where", IDS(a, a, a)));
    fails_with("needs bool");
}

Test(infer, sqrt_needs_float) {
    fresh();
    int a = input("a", RLX_I32, DIMS(2));
    output(node("Sqrt", IDS(a)));
    fails_with("input 'a' has dtype i32, but Sqrt needs a float type");
}

Test(infer, clip_bounds) {
    fresh();
    int x = input("x", F32, DIMS(2, 3)), lo = weight("lo", F32, 0, NULL), hi = weight("hi", F32, DIMS(2));
    int y = node("Clip", IDS(x, lo, -1));
    output(y);
    output(node("Clip", IDS(x, lo, hi)));
    fails_with("max bound 'hi' must be a scalar");
}

/* ---- linear algebra ---- */

Test(infer, matmul_batch_broadcast_and_promotion) {
    fresh();
    int a = input("a", F32, DIMS(2, 1, 3, 4)), b = input("b", F32, DIMS(5, 4, 6));
    int y = node("MatMul", IDS(a, b)); /* batch [2,1] x [5] -> [2,5]; [3,4]x[4,6] -> [3,6] */
    int v = input("v", F32, DIMS(4)), m = input("m", F32, DIMS(2, 4, 6));
    int y2 = node("MatMul", IDS(v, m)); /* [1,4] x [2,4,6] -> [2,1,6] -> drop -> [2,6] */
    int m2 = input("m2", F32, DIMS(3, 4));
    int y3 = node("MatMul", IDS(m2, v)); /* [3,4] x [4,1] -> [3,1] -> [3] */
    int y4 = node("MatMul", IDS(v, v));  /* dot product -> [] */
    output(y), output(y2), output(y3), output(y4);
    ok();
    shape_is(y, F32, DIMS(2, 5, 3, 6));
    shape_is(y2, F32, DIMS(2, 6));
    shape_is(y3, F32, DIMS(3));
    shape_is(y4, F32, 0, NULL);
}

Test(infer, matmul_inner_mismatch) {
    fresh();
    int a = input("a", F32, DIMS(3, 4)), b = input("b", F32, DIMS(5, 6));
    output(node("MatMul", IDS(a, b)));
    fails_with("inner dimensions differ");
}

Test(infer, gemm_transposes_and_c) {
    fresh();
    int a = input("a", F32, DIMS(4, 3)), b = input("b", F32, DIMS(5, 4)), c = weight("c", F32, DIMS(5));
    int y = node("Gemm", IDS(a, b, c)); /* op(A) = A^T [3,4], op(B) = B^T [4,5] -> [3,5] */
    attr_i(last_node(), "transA", 1);
    attr_i(last_node(), "transB", 1);
    output(y);
    ok();
    shape_is(y, F32, DIMS(3, 5));
}

Test(infer, gemm_bad_c) {
    fresh();
    int a = input("a", F32, DIMS(3, 4)), b = input("b", F32, DIMS(4, 5)), c = weight("c", F32, DIMS(3));
    output(node("Gemm", IDS(a, b, c)));
    fails_with("cannot be broadcast to [3,5]");
}

/* ---- convolution and pooling ---- */

Test(infer, conv_pads_strides_dilations_groups) {
    fresh();
    int x = input("x", F32, DIMS(1, 4, 10, 12)), w = weight("w", F32, DIMS(6, 2, 3, 3)), b = weight("b", F32, DIMS(6));
    int y = node("Conv", IDS(x, w, b));
    int n = last_node();
    attr_i(n, "group", 2);
    attr_ints(n, "pads", VALS(1, 2, 1, 2));
    attr_ints(n, "strides", VALS(2, 3));
    attr_ints(n, "dilations", VALS(2, 1));
    output(y);
    ok();
    /* H: (10+1+1 - ((3-1)*2+1)) / 2 + 1 = 4;  W: (12+2+2 - 3) / 3 + 1 = 5 */
    shape_is(y, F32, DIMS(1, 6, 4, 5));
}

Test(infer, conv_same_upper_and_lower) {
    fresh();
    int x = input("x", F32, DIMS(1, 3, 7, 8)), w = weight("w", F32, DIMS(8, 3, 3, 3));
    int y = node("Conv", IDS(x, w));
    int up = last_node();
    attr_s(up, "auto_pad", "SAME_UPPER");
    attr_ints(up, "strides", VALS(2, 2));
    int y2 = node("Conv", IDS(x, w));
    int lo = last_node();
    attr_s(lo, "auto_pad", "SAME_LOWER");
    attr_ints(lo, "strides", VALS(2, 2));
    output(y), output(y2);
    ok();
    /* out = ceil(7/2) = 4, ceil(8/2) = 4; total pad H = 3*2+3-7 = 2, W = 3*2+3-8 = 1 */
    shape_is(y, F32, DIMS(1, 8, 4, 4));
    shape_is(y2, F32, DIMS(1, 8, 4, 4));
    RlxWindow win;
    rlx_conv_geometry(g, up, &win);
    cr_assert(win.nsp == 2 && win.pad_begin[0] == 1 && win.pad_begin[1] == 0 && win.pad_end[0] == 1 && win.pad_end[1] == 1,
              "upper pads %lld %lld %lld %lld", (long long)win.pad_begin[0], (long long)win.pad_begin[1],
              (long long)win.pad_end[0], (long long)win.pad_end[1]);
    cr_assert(win.k[0] == 3 && win.k[1] == 3 && win.s[0] == 2 && win.d[0] == 1 && win.out[0] == 4 && win.out[1] == 4);
    rlx_conv_geometry(g, lo, &win);
    cr_assert(win.pad_begin[0] == 1 && win.pad_begin[1] == 1 && win.pad_end[0] == 1 && win.pad_end[1] == 0,
              "lower pads %lld %lld %lld %lld", (long long)win.pad_begin[0], (long long)win.pad_begin[1],
              (long long)win.pad_end[0], (long long)win.pad_end[1]);
}

Test(infer, conv_group_mismatch) {
    fresh();
    int x = input("x", F32, DIMS(1, 4, 5, 5)), w = weight("w", F32, DIMS(6, 3, 3, 3));
    output(node("Conv", IDS(x, w)));
    attr_i(last_node(), "group", 2);
    fails_with("input channels per group");
}

Test(infer, conv_kernel_shape_disagrees) {
    fresh();
    int x = input("x", F32, DIMS(1, 3, 5, 5)), w = weight("w", F32, DIMS(2, 3, 3, 3));
    output(node("Conv", IDS(x, w)));
    attr_ints(last_node(), "kernel_shape", VALS(5, 5));
    fails_with("kernel_shape [5,5] disagrees with the weights' [3,3]");
}

Test(infer, conv_rank_6_rejected) {
    fresh();
    int x = input("x", F32, DIMS(1, 3, 5, 5, 5, 5)), w = weight("w", F32, DIMS(2, 3, 3, 3, 3, 3));
    output(node("Conv", IDS(x, w)));
    fails_with("input must have rank 3 to 5 (N, C, 1 to 3 spatial axes), not 6");
}

Test(infer, maxpool_ceil_mode) {
    fresh();
    int x = input("x", F32, DIMS(1, 1, 5, 5));
    int floor_n = node_n("MaxPool", IDS(x), 2);
    attr_ints(floor_n, "kernel_shape", VALS(2, 2));
    attr_ints(floor_n, "strides", VALS(2, 2));
    int ceil_y = node("MaxPool", IDS(x));
    attr_ints(last_node(), "kernel_shape", VALS(2, 2));
    attr_ints(last_node(), "strides", VALS(2, 2));
    attr_i(last_node(), "ceil_mode", 1);
    /* pads 1: ceil((5+2-2)/2)+1 = 4, but the 4th window starts at 6 >= 5+1: dropped (torch: 3) */
    int drop_y = node("MaxPool", IDS(x));
    attr_ints(last_node(), "kernel_shape", VALS(2, 2));
    attr_ints(last_node(), "strides", VALS(2, 2));
    attr_ints(last_node(), "pads", VALS(1, 1, 1, 1));
    attr_i(last_node(), "ceil_mode", 1);
    output(g->n[floor_n].out[0]), output(g->n[floor_n].out[1]), output(ceil_y), output(drop_y);
    ok();
    shape_is(g->n[floor_n].out[0], F32, DIMS(1, 1, 2, 2)); /* (5-2)/2+1 = 2 */
    shape_is(g->n[floor_n].out[1], RLX_I64, DIMS(1, 1, 2, 2));
    shape_is(ceil_y, F32, DIMS(1, 1, 3, 3)); /* ceil(3/2)+1 = 3 */
    shape_is(drop_y, F32, DIMS(1, 1, 3, 3));
}

Test(infer, avgpool_and_global) {
    fresh();
    int x = input("x", F32, DIMS(1, 2, 7, 7));
    int y = node("AveragePool", IDS(x));
    attr_ints(last_node(), "kernel_shape", VALS(3, 3));
    attr_ints(last_node(), "strides", VALS(2, 2));
    attr_ints(last_node(), "pads", VALS(1, 1, 1, 1));
    int z = node("GlobalAveragePool", IDS(x));
    output(y), output(z);
    ok();
    shape_is(y, F32, DIMS(1, 2, 4, 4)); /* (7+2-3)/2+1 = 4 */
    shape_is(z, F32, DIMS(1, 2, 1, 1));
}

Test(infer, pool_output_empty) {
    fresh();
    int x = input("x", F32, DIMS(1, 1, 2, 2));
    output(node("MaxPool", IDS(x)));
    attr_ints(last_node(), "kernel_shape", VALS(3, 3));
    fails_with("output axis 2 would be 0");
}

Test(infer, pool_missing_kernel_shape) {
    fresh();
    int x = input("x", F32, DIMS(1, 1, 4, 4));
    output(node("AveragePool", IDS(x)));
    fails_with("missing required attribute 'kernel_shape'");
}

/* ---- normalization ---- */

Test(infer, norms_and_softmax) {
    fresh();
    int x = input("x", F32, DIMS(2, 5, 6));
    int sc = weight("sc", F32, DIMS(5, 6)), bb = weight("bb", F32, DIMS(6));
    int ln = node_n("LayerNormalization", IDS(x, sc, bb), 3);
    attr_i(ln, "axis", -2);
    int img = input("img", F32, DIMS(2, 3, 4, 4)), c3 = weight("c3", F32, DIMS(3));
    int bn = node("BatchNormalization", IDS(img, c3, c3, c3, c3));
    int sm = node("LogSoftmax", IDS(x));
    attr_i(last_node(), "axis", -3);
    for (int k = 0; k < 3; k++) output(g->n[ln].out[k]);
    output(bn), output(sm);
    ok();
    shape_is(g->n[ln].out[0], F32, DIMS(2, 5, 6));
    shape_is(g->n[ln].out[1], F32, DIMS(2, 1, 1));
    shape_is(g->n[ln].out[2], F32, DIMS(2, 1, 1));
    shape_is(bn, F32, DIMS(2, 3, 4, 4));
    shape_is(sm, F32, DIMS(2, 5, 6));
}

Test(infer, softmax_axis_out_of_range) {
    fresh();
    int x = input("x", F32, DIMS(2, 5));
    output(node("Softmax", IDS(x)));
    attr_i(last_node(), "axis", -3);
    fails_with("axis -3 is out of range for rank 2");
}

Test(infer, batchnorm_bad_channels) {
    fresh();
    int img = input("img", F32, DIMS(2, 3, 4, 4)), c4 = weight("c4", F32, DIMS(4));
    output(node("BatchNormalization", IDS(img, c4, c4, c4, c4)));
    fails_with("must have shape [3]");
}

/* ---- shape ops ---- */

Test(infer, reshape_zero_and_minus_one) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4));
    int a = node("Reshape", IDS(x, ints(VALS(0, -1))));     /* [2, 24/2] */
    int b = node("Reshape", IDS(x, ints(VALS(-1, 0, 2))));  /* [24/(3*2), 3, 2] */
    int e = input("e", F32, DIMS(0, 5));
    int c = node("Reshape", IDS(e, ints(VALS(5, 0))));
    attr_i(last_node(), "allowzero", 1);                   /* 0 is a real 0 */
    output(a), output(b), output(c);
    ok();
    shape_is(a, F32, DIMS(2, 12));
    shape_is(b, F32, DIMS(4, 3, 2));
    shape_is(c, F32, DIMS(5, 0));
}

Test(infer, reshape_count_mismatch) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4));
    output(node("Reshape", IDS(x, ints(VALS(5, -1)))));
    fails_with("cannot reshape [2,3,4] (24 elements) to [5,-1]");
}

Test(infer, reshape_shape_not_constant) {
    fresh();
    int x = input("x", F32, DIMS(2, 3)), s = input("s", RLX_I64, DIMS(2));
    output(node("Reshape", IDS(x, s)));
    fails_with("input 'shape' (value 's') must be a constant (weight)");
}

Test(infer, flatten) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4, 5));
    int a = node("Flatten", IDS(x));
    attr_i(last_node(), "axis", 2);
    int b = node("Flatten", IDS(x));
    attr_i(last_node(), "axis", -1);
    int c = node("Flatten", IDS(x));
    attr_i(last_node(), "axis", 0);
    output(a), output(b), output(c);
    ok();
    shape_is(a, F32, DIMS(6, 20));
    shape_is(b, F32, DIMS(24, 5));
    shape_is(c, F32, DIMS(1, 120));
}

Test(infer, squeeze_unsqueeze) {
    fresh();
    int x = input("x", F32, DIMS(1, 3, 1, 5));
    int a = node("Squeeze", IDS(x, ints(VALS(-2))));
    int b = node("Squeeze", IDS(x));
    int y = input("y", F32, DIMS(3, 4));
    int c = node("Unsqueeze", IDS(y, ints(VALS(0, -1)))); /* output rank 4: axes 0 and 3 */
    int d = node("Unsqueeze", IDS(y, ints(VALS(2, 1))));
    output(a), output(b), output(c), output(d);
    ok();
    shape_is(a, F32, DIMS(1, 3, 5));
    shape_is(b, F32, DIMS(3, 5));
    shape_is(c, F32, DIMS(1, 3, 4, 1));
    shape_is(d, F32, DIMS(3, 1, 1, 4));
}

Test(infer, squeeze_non_one) {
    fresh();
    int x = input("x", F32, DIMS(1, 3));
    output(node("Squeeze", IDS(x, ints(VALS(1)))));
    fails_with("cannot squeeze axis 1 of size 3");
}

Test(infer, transpose) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4));
    int a = node("Transpose", IDS(x));
    attr_ints(last_node(), "perm", VALS(1, 2, 0));
    int b = node("Transpose", IDS(x));
    output(a), output(b);
    ok();
    shape_is(a, F32, DIMS(3, 4, 2));
    shape_is(b, F32, DIMS(4, 3, 2));
}

Test(infer, transpose_bad_perm) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4));
    output(node("Transpose", IDS(x)));
    attr_ints(last_node(), "perm", VALS(0, 0, 1));
    fails_with("perm [0,0,1] is not a permutation of 0..2");
}

Test(infer, transpose_short_perm) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4));
    output(node("Transpose", IDS(x)));
    attr_ints(last_node(), "perm", VALS(1, 0));
    fails_with("is not a permutation");
}

Test(infer, concat) {
    fresh();
    int a = input("a", F32, DIMS(2, 3)), b = input("b", F32, DIMS(2, 5));
    int y = node("Concat", IDS(a, b, a));
    attr_i(last_node(), "axis", -1);
    output(y);
    ok();
    shape_is(y, F32, DIMS(2, 11));
}

Test(infer, concat_mismatch) {
    fresh();
    int a = input("a", F32, DIMS(2, 3)), b = input("b", F32, DIMS(3, 3));
    output(node("Concat", IDS(a, b)));
    attr_i(last_node(), "axis", 1);
    fails_with("cannot concatenate [2,3] and [3,3] along axis 1");
}

Test(infer, split_forms) {
    fresh();
    int x = input("x", F32, DIMS(6, 4));
    int s1 = node_n("Split", IDS(x, ints(VALS(1, 2, 3))), 3);
    int s2 = node_n("Split", IDS(x), 3);
    int y = input("y", F32, DIMS(2, 10));
    int s3 = node_n("Split", IDS(y), 4);
    attr_i(s3, "axis", -1);
    attr_i(s3, "num_outputs", 4);
    for (int k = 0; k < 3; k++) output(g->n[s1].out[k]), output(g->n[s2].out[k]);
    for (int k = 0; k < 4; k++) output(g->n[s3].out[k]);
    ok();
    shape_is(g->n[s1].out[0], F32, DIMS(1, 4));
    shape_is(g->n[s1].out[1], F32, DIMS(2, 4));
    shape_is(g->n[s1].out[2], F32, DIMS(3, 4));
    for (int k = 0; k < 3; k++) shape_is(g->n[s2].out[k], F32, DIMS(2, 4));
    /* ceil(10/4) = 3: 3,3,3,1 */
    shape_is(g->n[s3].out[0], F32, DIMS(2, 3));
    shape_is(g->n[s3].out[2], F32, DIMS(2, 3));
    shape_is(g->n[s3].out[3], F32, DIMS(2, 1));
}

Test(infer, split_uneven) {
    fresh();
    int x = input("x", F32, DIMS(7));
    int s = node_n("Split", IDS(x), 2);
    output(g->n[s].out[0]);
    fails_with("cannot be split into 2 equal parts");
}

Test(infer, split_sizes_wrong_sum) {
    fresh();
    int x = input("x", F32, DIMS(7));
    int s = node_n("Split", IDS(x, ints(VALS(3, 3))), 2);
    output(g->n[s].out[0]);
    fails_with("split sizes add up to 6, but axis 0 has size 7");
}

Test(infer, slice_negative_steps) {
    fresh();
    int x = input("x", F32, DIMS(10, 8));
    /* numpy: x[8:1:-3, 1:100:2] -> (3, 4) */
    int a = node("Slice", IDS(x, ints(VALS(8, 1)), ints(VALS(1, 100)), ints(VALS(0, -1)), ints(VALS(-3, 2))));
    int na = last_node();
    /* x[-1::-1] over axis 0 (end INT64_MIN) -> (10, 8) */
    int b = node("Slice", IDS(x, ints(VALS(-1)), ints(VALS(INT64_MIN)), ints(VALS(0)), ints(VALS(-1))));
    /* x[9:-91:-2^62] -> (1, 8); x[:, 5:2] -> (10, 0) */
    int c = node("Slice", IDS(x, ints(VALS(9)), ints(VALS(-100)), -1, ints(VALS(-(INT64_C(1) << 62)))));
    int d = node("Slice", IDS(x, ints(VALS(5)), ints(VALS(2)), ints(VALS(1))));
    output(a), output(b), output(c), output(d);
    ok();
    shape_is(a, F32, DIMS(3, 4));
    shape_is(b, F32, DIMS(10, 8));
    shape_is(c, F32, DIMS(1, 8));
    shape_is(d, F32, DIMS(10, 0));
    int64_t st[RLX_MAX_RANK], sp[RLX_MAX_RANK], od[RLX_MAX_RANK];
    rlx_slice_params(g, na, st, sp, od);
    cr_assert(st[0] == 8 && sp[0] == -3 && st[1] == 1 && sp[1] == 2 && od[0] == 3 && od[1] == 4);
}

Test(infer, slice_step_zero) {
    fresh();
    int x = input("x", F32, DIMS(10));
    output(node("Slice", IDS(x, ints(VALS(0)), ints(VALS(5)), ints(VALS(0)), ints(VALS(0)))));
    fails_with("slice step is 0");
}

Test(infer, gather) {
    fresh();
    int x = input("x", F32, DIMS(5, 4, 3)), idx = input("idx", RLX_I64, DIMS(2, 6));
    int a = node("Gather", IDS(x, idx));
    attr_i(last_node(), "axis", 1);
    int k = ints(VALS(0, -4, 3));
    int b = node("Gather", IDS(x, k));
    attr_i(last_node(), "axis", -2);
    output(a), output(b);
    ok();
    shape_is(a, F32, DIMS(5, 2, 6, 3));
    shape_is(b, F32, DIMS(5, 3, 3));
}

Test(infer, gather_const_out_of_range) {
    fresh();
    int x = input("x", F32, DIMS(5, 4));
    output(node("Gather", IDS(x, ints(VALS(1, 4)))));
    attr_i(last_node(), "axis", 1);
    fails_with("index 4 is out of range for axis 1 of size 4");
}

Test(infer, gather_float_indices) {
    fresh();
    int x = input("x", F32, DIMS(5, 4)), i = input("i", F32, DIMS(2));
    output(node("Gather", IDS(x, i)));
    fails_with("needs i32 or i64");
}

Test(infer, pad) {
    fresh();
    int x = input("x", F32, DIMS(2, 3));
    int a = node("Pad", IDS(x, ints(VALS(1, 0, 2, 3))));
    int b = node("Pad", IDS(x, ints(VALS(1, 2)), -1, ints(VALS(-1))));
    int c = node("Pad", IDS(x, ints(VALS(0, -1, 0, -1))));
    output(a), output(b), output(c);
    ok();
    shape_is(a, F32, DIMS(5, 6));
    shape_is(b, F32, DIMS(2, 6));
    shape_is(c, F32, DIMS(2, 1));
}

Test(infer, pad_reflect_too_wide) {
    fresh();
    int x = input("x", F32, DIMS(2, 3));
    output(node("Pad", IDS(x, ints(VALS(0, 3, 0, 0)))));
    attr_s(last_node(), "mode", "reflect");
    fails_with("reflect padding of 3+0 does not fit axis 1 of size 3");
}

Test(infer, reduce_keepdims) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4));
    int a = node("ReduceSum", IDS(x, ints(VALS(1))));
    int b = node("ReduceMean", IDS(x, ints(VALS(-1, 0))));
    attr_i(last_node(), "keepdims", 0);
    int c = node("ReduceMax", IDS(x));
    int d = node("ReduceMin", IDS(x));
    int nd = last_node();
    attr_i(nd, "noop_with_empty_axes", 1);
    int e = node("ArgMax", IDS(x));
    attr_i(last_node(), "axis", -2);
    attr_i(last_node(), "keepdims", 0);
    output(a), output(b), output(c), output(d), output(e);
    ok();
    shape_is(a, F32, DIMS(2, 1, 4));
    shape_is(b, F32, DIMS(3));
    shape_is(c, F32, DIMS(1, 1, 1));
    shape_is(d, F32, DIMS(2, 3, 4));
    shape_is(e, RLX_I64, DIMS(2, 4));
    int mask[RLX_MAX_RANK];
    cr_assert_eq(rlx_reduce_axes(g, nd, 3, mask), 0);
    cr_assert_eq(rlx_reduce_axes(g, g->v[b].producer, 3, mask), 1);
    cr_assert(mask[0] == 1 && mask[1] == 0 && mask[2] == 1);
}

Test(infer, reduce_duplicate_axes) {
    fresh();
    int x = input("x", F32, DIMS(2, 3));
    output(node("ReduceSum", IDS(x, ints(VALS(1, -1)))));
    fails_with("is given twice");
}

/* ---- constants, schedule, graph checks ---- */

Test(infer, constants_become_weights) {
    fresh();
    int x = input("x", F32, DIMS(2, 3, 4));
    int shape = node("Constant", 0, NULL);
    int cn = last_node();
    attr_ints(cn, "value_ints", VALS(4, -1));
    int y = node("Reshape", IDS(x, shape));
    int f = node("Constant", 0, NULL);
    rlx_attr_add(g, last_node(), "value_float", RLX_A_FLOAT)->f = 2.5;
    int z = node("Mul", IDS(y, f));
    output(z);
    ok();
    cr_assert(g->n[cn].dead);
    cr_assert(rlx_is_const(g, shape));
    shape_is(shape, RLX_I64, DIMS(2));
    cr_assert_eq(rlx_weight_i64(&g->v[shape], 1), -1);
    shape_is(f, F32, 0, NULL);
    cr_assert_eq(rlx_weight_f64(&g->v[f], 0), 2.5);
    shape_is(z, F32, DIMS(4, 6));
}

Test(infer, constant_tensor_attr) {
    fresh();
    int t = weight("t", RLX_I32, DIMS(2, 2));
    int c = node("Constant", 0, NULL);
    rlx_attr_add(g, last_node(), "value", RLX_A_TENSOR)->tensor = t;
    output(c);
    ok();
    shape_is(c, RLX_I32, DIMS(2, 2));
    cr_assert(rlx_is_const(g, c));
}

Test(infer, constant_two_values) {
    fresh();
    int c = node("Constant", 0, NULL);
    rlx_attr_add(g, last_node(), "value_int", RLX_A_INT)->i = 1;
    rlx_attr_add(g, last_node(), "value_float", RLX_A_FLOAT)->f = 1;
    output(c);
    fails_with("exactly one of value");
}

Test(infer, schedule_ties_by_index) {
    fresh();
    int x = input("x", F32, DIMS(2));
    int y1 = rlx_value_add(g, "y1"), y2 = rlx_value_add(g, "y2"), y3 = rlx_value_add(g, "y3");
    rlx_node_add(g, "late", RLX_OP_RELU, IDS(y1), IDS(y2));  /* node 0 reads node 1's output */
    rlx_node_add(g, "first", RLX_OP_RELU, IDS(x), IDS(y1)); /* node 1 */
    rlx_node_add(g, "other", RLX_OP_NEG, IDS(x), IDS(y3));  /* node 2 */
    output(y2), output(y3);
    ok();
    cr_assert_eq(g->norder, 3);
    cr_assert(g->order[0] == 1 && g->order[1] == 0 && g->order[2] == 2, "order %d %d %d", g->order[0], g->order[1],
              g->order[2]);
    cr_assert_eq(g->v[y1].producer, 1);
    cr_assert_eq(g->v[x].producer, -1);
}

Test(infer, cycle) {
    fresh();
    int x = input("x", F32, DIMS(2));
    int a = rlx_value_add(g, "a"), b = rlx_value_add(g, "b"), c = rlx_value_add(g, "c");
    rlx_node_add(g, "head", RLX_OP_RELU, IDS(x), IDS(c));
    rlx_node_add(g, "add", RLX_OP_ADD, IDS(b, c), IDS(a));
    rlx_node_add(g, "relu", RLX_OP_RELU, IDS(a), IDS(b));
    output(b);
    fails_with("cycle in the graph (through value");
}

Test(infer, undefined_input) {
    fresh();
    int x = input("x", F32, DIMS(2)), u = rlx_value_add(g, "ghost");
    output(node("Add", IDS(x, u)));
    fails_with("input 'ghost' is not defined");
}

Test(infer, two_producers) {
    fresh();
    int x = input("x", F32, DIMS(2)), y = rlx_value_add(g, "y");
    rlx_node_add(g, "p1", RLX_OP_RELU, IDS(x), IDS(y));
    rlx_node_add(g, "p2", RLX_OP_NEG, IDS(x), IDS(y));
    output(y);
    fails_with("value 'y' is also produced by node 'p1'");
}

Test(infer, declared_output_mismatch) {
    fresh();
    int x = input("x", F32, DIMS(2, 3));
    output(node("Relu", IDS(x)));
    g->output_decl = rlx_alloc(sizeof(RlxDecl));
    g->output_decl[0] = (RlxDecl){RLX_F32, 2, {3, 2}};
    fails_with("is declared as f32 [3,2] but inferred as f32 [2,3]");
}

Test(infer, arity) {
    fresh();
    int x = input("x", F32, DIMS(2));
    output(node("Add", IDS(x)));
    fails_with("takes 2 inputs, not 1");
}

Test(infer, size_overflow) {
    fresh();
    int x = input("x", F32, DIMS(INT64_C(1) << 40));
    output(node("Reshape", IDS(x, ints(VALS(-1, 1)))));
    int y = input("y", F32, DIMS(INT64_C(1) << 30, 1));
    output(node("Pad", IDS(y, ints(VALS(0, 0, 0, INT64_C(1) << 40)))));
    fails_with("overflows 64 bits");
}

/* ---- legalize ---- */

Test(legalize, c_target) {
    fresh();
    int a = input("a", RLX_F64, DIMS(2, 3)), b = input("b", RLX_F64, DIMS(3, 2));
    int i = input("i", RLX_I32, DIMS(2));
    output(node("Add", IDS(a, a)));
    output(node("Neg", IDS(i)));
    output(node("Transpose", IDS(a)));
    output(node("MatMul", IDS(a, b)));
    ok();
    cr_assert_eq(legalize("c"), 1);
    cr_assert(strstr(rlx_diag.msg, "node 'n") && strstr(rlx_diag.msg, "(MatMul): not supported by target 'c' for dtype f64"),
              "%s", rlx_diag.msg);
}

Test(legalize, float_only_and_bool) {
    fresh();
    int u = input("u", RLX_U8, DIMS(2));
    output(node("Abs", IDS(u)));
    ok();
    cr_assert_eq(legalize("c"), 1);
    cr_assert(strstr(rlx_diag.msg, "(Abs): not supported by target 'c' for dtype u8"), "%s", rlx_diag.msg);

    fresh();
    int f = input("f", RLX_F32, DIMS(2));
    int h = node("Cast", IDS(f));
    rlx_attr_add(g, last_node(), "to", RLX_A_DTYPE)->i = RLX_BF16;
    output(node("Exp", IDS(h)));
    output(node("Where", IDS(node("Less", IDS(f, f)), f, f)));
    ok();
    cr_assert_eq(legalize("c"), 0, "%s", rlx_diag.msg);
}

/* msl: the GPU targets' column without f64, which MSL lacks */
Test(legalize, msl_refuses_f64) {
    fresh();
    int f = input("f", RLX_F32, DIMS(2));
    int i = input("i", RLX_I64, DIMS(2));
    output(node("Relu", IDS(f)));
    output(node("Add", IDS(i, i)));
    ok();
    cr_assert_eq(legalize("msl"), 0, "%s", rlx_diag.msg);

    fresh();
    int x = input("x", RLX_F32, DIMS(2));
    int d = node("Cast", IDS(x));
    rlx_attr_add(g, last_node(), "to", RLX_A_DTYPE)->i = RLX_F64;
    output(node("Exp", IDS(d)));
    ok();
    cr_assert_eq(legalize("msl"), 1);
    cr_assert(strstr(rlx_diag.msg, "2 nodes not supported by target 'msl'") &&
                  strstr(rlx_diag.msg, "Cast for dtype f64") && strstr(rlx_diag.msg, "Exp for dtype f64"),
              "%s", rlx_diag.msg);
    cr_assert_eq(legalize("spirv"), 0, "%s", rlx_diag.msg);   /* Vulkan has doubles */
}

Test(legalize, other_targets) {
    fresh();
    int f = input("f", RLX_F32, DIMS(2));
    output(node("Relu", IDS(f)));
    ok();
    cr_assert_eq(legalize("vulkan"), 1);
    cr_assert_str_eq(rlx_diag.msg, "t.rlxg: unknown target 'vulkan' (targets: c, spirv, cuda, msl)");
    cr_assert_eq(legalize("cuda"), 0, "%s", rlx_diag.msg);   /* the GPU targets' column */
    cr_assert_eq(legalize("c"), 0);
}
