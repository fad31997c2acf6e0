/* test_fuse.c - the optimizing middle end on small graphs: elementwise
 * regions, GEMM epilogues, Conv+BatchNormalization folding, Transpose into
 * MatMul, the decomposed LayerNorm and Softmax, a Pad by nothing, AveragePool
 * moved before a 1x1 Conv, and views.
 *
 * Each test builds a graph with the IR API and runs the driver's pipeline
 * (constants, schedule, infer, legalize, dce, patterns, epilogues, regions;
 * then plan and lower where it says so) under rlx_try. It then looks at the
 * rewritten graph: which nodes are still live, their inputs and attributes,
 * and the region programs, written out by hand in the format region.c
 * documents. Folded weights are compared with values worked out in the
 * comments. Negative cases check that a rewrite leaves the graph alone when
 * its condition does not hold (a second reader, a graph output, a broadcast,
 * another permutation or axis, other constants in an activation's pattern).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "rlx.h"
#include "target.h"
#include "rlx_scalar.h"

#define DIMS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define IDS(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__}

static RlxGraph *g;
static int counter;

static void fresh(void) {
    g = rlx_graph_new("fuse.rlxg");
    counter = 0;
}

static void cleanup(void) { rlx_arena_free_all(); }

static void set_shape(int v, RlxDType dt, int rank, const int64_t *dims) {
    g->v[v].dtype = dt;
    g->v[v].rank = rank;
    if (rank) memcpy(g->v[v].dims, dims, sizeof(int64_t) * (size_t)rank);
}

static int input(const char *name, int rank, const int64_t *dims) {
    int v = rlx_value_add(g, name);
    set_shape(v, RLX_F32, rank, dims);
    g->v[v].flags |= RLX_V_INPUT;
    g->inputs = rlx_realloc(g->inputs, sizeof(int) * (size_t)g->ninputs, sizeof(int) * (size_t)(g->ninputs + 1));
    g->inputs[g->ninputs++] = v;
    return v;
}

/* An f32 weight holding vals (numel of them). */
static int weightf(const char *name, int rank, const int64_t *dims, const float *vals) {
    int v = rlx_value_add(g, name);
    set_shape(v, RLX_F32, rank, dims);
    g->v[v].flags |= RLX_V_WEIGHT;
    int64_t n = rlx_value_numel(&g->v[v]);
    uint8_t *d = rlx_alloc(sizeof(float) * (size_t)n + 1);
    memcpy(d, vals, sizeof(float) * (size_t)n);
    g->v[v].data = d;
    return v;
}

static int scalar(float x) { return weightf(rlx_fmt("k%d", counter++), 0, NULL, &x); }

/* A 1-D i64 weight (axes, shapes). */
static int ints(int n, const int64_t *vals) {
    int v = rlx_value_add(g, rlx_fmt("c%d", counter++));
    set_shape(v, RLX_I64, 1, (int64_t[]){n});
    g->v[v].flags |= RLX_V_WEIGHT;
    uint8_t *d = rlx_alloc(sizeof(int64_t) * (size_t)n + 1);
    memcpy(d, vals, sizeof(int64_t) * (size_t)n);
    g->v[v].data = d;
    return v;
}

/* A one-output node named NAME; returns the node id (its output value is
 * named after it). */
static int node_named(const char *name, const char *op, int nin, const int *in) {
    int out = rlx_value_add(g, rlx_fmt("%s_out", name));
    int o = rlx_op_from_name(op);
    cr_assert(o >= 0, "no op %s", op);
    return rlx_node_add(g, name, (RlxOp)o, nin, in, 1, &out);
}

/* A one-output node; returns its output value. */
static int node(const char *op, int nin, const int *in) {
    int n = node_named(rlx_fmt("n%d", counter++), op, nin, in);
    return g->n[n].out[0];
}

static int last_node(void) { return g->nn - 1; }
static void attr_f(int n, const char *name, double x) { rlx_attr_add(g, n, name, RLX_A_FLOAT)->f = x; }
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

/* The driver's pipeline up to fusion (cmd/rlxc/main.c); fuse = 0 is -O0. */
static void compile(int fuse) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_assert_fail("unexpected error: %s", rlx_diag.msg);
    }
    for (int i = 0; i < g->nn; i++) rlx_attr_check(g, i);
    rlx_constants_to_weights(g);
    rlx_schedule(g);
    rlx_infer(g);
    rlx_legalize(g, "c");
    rlx_dce(g);
    rlx_schedule(g);
    if (fuse) {
        rlx_fuse_patterns(g);
        rlx_schedule(g);
        rlx_fuse_epilogues(g);
        rlx_fuse_elementwise(g);
        rlx_schedule(g);
    }
    rlx_diag.jmp = NULL;
}

static int live_count(RlxOp op) {
    int k = 0;
    for (int i = 0; i < g->nn; i++) k += !g->n[i].dead && g->n[i].op == op;
    return k;
}

static int live_total(void) {
    int k = 0;
    for (int i = 0; i < g->nn; i++) k += !g->n[i].dead;
    return k;
}

/* The live node that produces value v (the schedule pass set producer). */
static const RlxNode *producer(int v) {
    int p = g->v[v].producer;
    cr_assert(p >= 0, "value '%s' has no producer", g->v[v].name);
    cr_assert_not(g->n[p].dead, "the producer of '%s' is dead", g->v[v].name);
    return &g->n[p];
}

static void inputs_are(const RlxNode *n, int count, const int *want) {
    cr_assert_eq(n->nin, count, "node '%s': %d inputs, expected %d", n->name, n->nin, count);
    for (int i = 0; i < count; i++)
        cr_assert_eq(n->in[i], want[i], "node '%s' input %d is '%s', expected '%s'", n->name, i,
                     n->in[i] >= 0 ? g->v[n->in[i]].name : "(absent)", want[i] >= 0 ? g->v[want[i]].name : "(absent)");
}

static void program_is(const RlxNode *n, const char *want) {
    cr_assert_eq(n->op, RLX_OP_REGION, "node '%s' is %s, not a region", n->name, rlx_ops[n->op].name);
    const char *prog = rlx_attr_s(n, "program", NULL);
    cr_assert(prog);
    cr_assert_str_eq(prog, want);
}

/* ---- (a) elementwise regions ---- */

Test(fuse_elementwise, mul_add_relu_is_one_region, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3)), y = input("y", DIMS(2, 3)), z = input("z", DIMS(3));
    int m = node("Mul", IDS(x, y));
    int a = node("Add", IDS(m, z));    /* z [3] broadcasts over the rows */
    int r = node("Relu", IDS(a));
    output(r);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(r);
    /* inputs in the order the steps first read them; the region keeps the
     * last node's output value */
    inputs_are(n, IDS(x, y, z));
    cr_assert_eq(n->out[0], r);
    program_is(n, "s0:f32 = Mul(x0, x1); s1:f32 = Add(s0, x2); s2:f32 = Relu(s1)");
    cr_assert_str_eq(n->name, g->n[g->v[r].producer].name);
}

Test(fuse_elementwise, O0_leaves_the_chain, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3)), y = input("y", DIMS(2, 3));
    int r = node("Relu", IDS(node("Add", IDS(node("Mul", IDS(x, y)), y))));
    output(r);
    compile(0);
    cr_assert_eq(live_total(), 3);
    cr_assert_eq(live_count(RLX_OP_REGION), 0);
}

Test(fuse_elementwise, not_across_a_value_with_two_readers, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3)), y = input("y", DIMS(2, 3)), z = input("z", DIMS(2, 3));
    int m = node("Mul", IDS(x, y));        /* read by Add and by Neg */
    int a = node("Add", IDS(m, z));
    int r = node("Relu", IDS(a));
    int q = node("Neg", IDS(m));
    output(r);
    output(q);
    compile(1);
    /* Mul stays (m is computed once); Add+Relu fuse; Neg alone stays Neg */
    cr_assert_eq(live_total(), 3);
    cr_assert_eq(producer(m)->op, RLX_OP_MUL);
    cr_assert_eq(producer(q)->op, RLX_OP_NEG);
    const RlxNode *n = producer(r);
    inputs_are(n, IDS(m, z));
    program_is(n, "s0:f32 = Add(x0, x1); s1:f32 = Relu(s0)");
}

Test(fuse_elementwise, not_across_a_graph_output, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(4)), y = input("y", DIMS(4));
    int m = node("Mul", IDS(x, y));
    int e = node("Exp", IDS(m));
    int r = node("Sqrt", IDS(e));
    output(m);   /* the intermediate m is also an output */
    output(r);
    compile(1);
    cr_assert_eq(live_total(), 2);
    cr_assert_eq(producer(m)->op, RLX_OP_MUL);
    const RlxNode *n = producer(r);
    inputs_are(n, IDS(m));
    program_is(n, "s0:f32 = Exp(x0); s1:f32 = Sqrt(s0)");
}

Test(fuse_elementwise, broadcast_inputs_and_a_smaller_producer, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 1, 3)), col = input("col", DIMS(4, 1)), b = input("b", DIMS(3));
    int c = scalar(0.5f);
    /* s = b * 0.5 has 3 elements; fused into the [2,4,3] Add it would be
     * computed 8 times, so it stays a node of its own */
    int s = node("Mul", IDS(b, c));
    int a = node("Add", IDS(x, col));   /* [2,1,3] + [4,1] -> [2,4,3] */
    int t = node("Sub", IDS(a, s));
    int y = node("Tanh", IDS(t));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 2);
    cr_assert_eq(producer(s)->op, RLX_OP_MUL);
    const RlxNode *n = producer(y);
    inputs_are(n, IDS(x, col, s));
    program_is(n, "s0:f32 = Add(x0, x1); s1:f32 = Sub(s0, x2); s2:f32 = Tanh(s1)");
    cr_assert_eq(g->v[y].rank, 3);
    cr_assert_eq(g->v[y].dims[1], 4);
}

Test(fuse_elementwise, attributes_and_a_shared_input, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(5));
    int l = node("LeakyRelu", IDS(x));
    attr_f(last_node(), "alpha", 0.25);
    int y = node("Mul", IDS(l, x));   /* x read twice: one region input */
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    inputs_are(n, IDS(x));
    program_is(n, "s0:f32 = LeakyRelu[0.25](x0); s1:f32 = Mul(s0, x0)");
}

/* ---- (b) GEMM epilogues ---- */

static const float w43[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const float b3[3] = {0.5f, -1, 2};

Test(fuse_epilogue, matmul_bias_relu, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int b = weightf("b", DIMS(3), b3);
    int h = node("MatMul", IDS(x, w));
    int a = node("Add", IDS(h, b));
    int r = node("Relu", IDS(a));
    output(r);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(r);
    cr_assert_eq(n->op, RLX_OP_MATMUL);
    inputs_are(n, IDS(x, w, b, -1));
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_RELU);
}

Test(fuse_epilogue, bias_first_operand_and_residual, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4)), res = input("res", DIMS(2, 3));
    int w = weightf("w", DIMS(4, 3), w43);
    int b = weightf("b", DIMS(1, 3), b3);   /* [1, n] is a bias too (a 1-D view of it) */
    int h = node("MatMul", IDS(x, w));
    int a = node("Add", IDS(b, h));
    int s = node("Add", IDS(a, res));        /* a residual of the output's shape */
    int y = node("Sigmoid", IDS(s));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_MATMUL);
    cr_assert_eq(n->nin, 4);
    cr_assert_eq(n->in[0], x);
    cr_assert_eq(n->in[1], w);
    cr_assert_eq(n->in[3], res);
    const RlxValue *bv = &g->v[n->in[2]];
    cr_assert_eq(bv->rank, 1);
    cr_assert_eq(bv->dims[0], 3);
    cr_assert(bv->flags & RLX_V_WEIGHT);
    cr_assert_eq(((const float *)bv->data)[1], -1.0f);
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_SIGMOID);
}

Test(fuse_epilogue, residual_without_bias_goes_to_input_3, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4)), res = input("res", DIMS(2, 3));
    int w = weightf("w", DIMS(4, 3), w43);
    int h = node("MatMul", IDS(x, w));
    int y = node("Add", IDS(res, h));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_MATMUL);
    inputs_are(n, IDS(x, w, -1, res));
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), 0);
}

Test(fuse_epilogue, add_that_broadcasts_the_output_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(1, 4)), big = input("big", DIMS(5, 3));
    int w = weightf("w", DIMS(4, 3), w43);
    int h = node("MatMul", IDS(x, w));   /* [1,3] */
    int a = node("Add", IDS(h, big));    /* [5,3]: h is broadcast, not a residual */
    int r = node("Relu", IDS(a));
    output(r);
    compile(1);
    const RlxNode *mm = producer(h);
    cr_assert_eq(mm->op, RLX_OP_MATMUL);
    cr_assert_eq(mm->nin, 2);
    cr_assert_eq(rlx_attr_i(mm, "rlx_act", 0), 0);
    /* the Add and the Relu make an elementwise region instead */
    const RlxNode *n = producer(r);
    inputs_are(n, IDS(h, big));
    program_is(n, "s0:f32 = Add(x0, x1); s1:f32 = Relu(s0)");
}

Test(fuse_epilogue, nothing_after_the_activation, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int b = weightf("b", DIMS(3), b3);
    int h = node("MatMul", IDS(x, w));
    int r = node("Relu", IDS(h));
    int y = node("Add", IDS(r, b));   /* after the activation: not a bias */
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 2);
    const RlxNode *n = producer(r);
    cr_assert_eq(n->op, RLX_OP_MATMUL);
    cr_assert_eq(n->nin, 2);
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_RELU);
    cr_assert_eq(producer(y)->op, RLX_OP_ADD);
}

Test(fuse_epilogue, matmul_with_a_second_reader_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int b = weightf("b", DIMS(3), b3);
    int h = node("MatMul", IDS(x, w));
    int a = node("Add", IDS(h, b));
    output(h);
    output(a);
    compile(1);
    cr_assert_eq(live_total(), 2);
    cr_assert_eq(producer(h)->nin, 2);
    cr_assert_eq(producer(a)->op, RLX_OP_ADD);
}

Test(fuse_epilogue, gemm_clip_takes_its_bounds, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int c = weightf("c", DIMS(3), b3);
    int h = node("Gemm", IDS(x, w, c));
    int y = node("Clip", IDS(h, scalar(-1.5f), scalar(6.0f)));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_GEMM);
    cr_assert_eq(n->in[2], c);
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_CLIP);
    cr_assert_eq(rlx_attr_f(n, "rlx_act_a", 0), -1.5);
    cr_assert_eq(rlx_attr_f(n, "rlx_act_b", 0), 6.0);
}

/* SiLU as exported: Mul(y, Sigmoid(y)), either operand order */
Test(fuse_epilogue, silu_pattern, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int b = weightf("b", DIMS(3), b3);
    int h = node("MatMul", IDS(x, w));
    int a = node("Add", IDS(h, b));
    int s = node("Sigmoid", IDS(a));
    int y = node("Mul", IDS(s, a));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_MATMUL);
    inputs_are(n, IDS(x, w, b, -1));
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_SILU);
}

/* GELU as PyTorch exports it at opset 17 */
static int gelu_of(int y, float div, float one, float half) {
    int d = node("Div", IDS(y, scalar(div)));
    int e = node("Erf", IDS(d));
    int p = node("Add", IDS(scalar(one), e));
    int m = node("Mul", IDS(y, p));
    return node("Mul", IDS(m, scalar(half)));
}

Test(fuse_epilogue, gelu_pattern, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int c = weightf("c", DIMS(3), b3);
    int h = node("Gemm", IDS(x, w, c));
    int y = gelu_of(h, 1.41421354f, 1.0f, 0.5f);
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_GEMM);
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_GELU);
}

/* other constants are other functions (the fused GELU divides by sqrt 2,
 * adds 1 and halves), and an intermediate with a second reader must stay:
 * each leaves the MatMul without an activation */
Test(fuse_epilogue, gelu_and_silu_lookalikes_stay, .fini = cleanup) {
    static const float k[3][3] = {{1.5f, 1.0f, 0.5f}, {1.41421354f, 2.0f, 0.5f}, {1.41421354f, 1.0f, 0.25f}};
    for (int i = 0; i < 3; i++) {
        fresh();
        int x = input("x", DIMS(2, 4));
        int w = weightf("w", DIMS(4, 3), w43);
        int h = node("MatMul", IDS(x, w));
        output(gelu_of(h, k[i][0], k[i][1], k[i][2]));
        compile(1);
        cr_assert_eq(rlx_attr_i(producer(h), "rlx_act", 0), 0, "constants %d", i);
        cleanup();
    }
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int h = node("MatMul", IDS(x, w));
    int s = node("Sigmoid", IDS(h));
    output(node("Mul", IDS(h, s)));
    output(s);   /* the sigmoid is an output too */
    compile(1);
    cr_assert_eq(rlx_attr_i(producer(h), "rlx_act", 0), 0);
    cr_assert_eq(producer(s)->op, RLX_OP_SIGMOID);
}

Test(fuse_epilogue, clip_with_min_over_max_stays, .fini = cleanup) {
    /* the kernels' vector clips agree with the Clip kernel only for min <= max */
    fresh();
    int x = input("x", DIMS(2, 4));
    int w = weightf("w", DIMS(4, 3), w43);
    int h = node("Gemm", IDS(x, w));
    int y = node("Clip", IDS(h, scalar(6.0f), scalar(-1.5f)));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 2);
    cr_assert_eq(producer(y)->op, RLX_OP_CLIP);
    cr_assert_eq(rlx_attr_i(producer(h), "rlx_act", 0), 0);
}

/* ---- (c) Conv + BatchNormalization ---- */

/* A 1x1 conv with 2 in and 2 out channels, then BN with
 *   var + eps = 3.75 + 0.25 = 4, sqrt = 2, scale = [3, -1] -> s = [1.5, -0.5]
 *   W  = [[1, 2], [3, 4]]              -> W' = W * s[o] = [[1.5, 3], [-1.5, -2]]
 *   B  = [1, 2], mean = [0.5, 4], beta = [0.25, 1]
 *   B' = (B - mean) * s + beta = [0.5*1.5 + 0.25, -2*-0.5 + 1] = [1, 2]
 * (every number exact in f32). */
static int conv_bn(int mean_is_input, int *conv_w, int *y_out) {
    int x = input("x", DIMS(1, 2, 3, 3));
    int w = weightf("w", DIMS(2, 2, 1, 1), (const float[]){1, 2, 3, 4});
    int b = weightf("b", DIMS(2), (const float[]){1, 2});
    int sc = weightf("scale", DIMS(2), (const float[]){3, -1});
    int be = weightf("beta", DIMS(2), (const float[]){0.25f, 1});
    int mu = mean_is_input ? input("mean", DIMS(2)) : weightf("mean", DIMS(2), (const float[]){0.5f, 4});
    int var = weightf("var", DIMS(2), (const float[]){3.75f, 3.75f});
    int c = node("Conv", IDS(x, w, b));
    int y = node("BatchNormalization", IDS(c, sc, be, mu, var));
    attr_f(last_node(), "epsilon", 0.25);
    output(y);
    *conv_w = w;
    *y_out = y;
    return x;
}

Test(fuse_patterns, conv_batchnorm_folds_by_hand, .fini = cleanup) {
    fresh();
    int w, y;
    int x = conv_bn(0, &w, &y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    cr_assert_eq(live_count(RLX_OP_BATCHNORM), 0);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_CONV);
    cr_assert_eq(n->in[0], x);
    cr_assert_neq(n->in[1], w, "the folded weights are a new value");
    const RlxValue *wv = &g->v[n->in[1]], *bv = &g->v[n->in[2]];
    cr_assert_eq(wv->rank, 4);
    cr_assert_eq(rlx_value_numel(wv), 4);
    const float want_w[] = {1.5f, 3, -1.5f, -2}, want_b[] = {1, 2};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(rlx_weight_f64(wv, i), want_w[i], "W'[%d] = %g, expected %g", i, rlx_weight_f64(wv, i),
                     (double)want_w[i]);
    cr_assert_eq(rlx_value_numel(bv), 2);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(rlx_weight_f64(bv, i), want_b[i], "B'[%d] = %g, expected %g", i, rlx_weight_f64(bv, i),
                     (double)want_b[i]);
    /* the original weights are untouched */
    cr_assert_eq(rlx_weight_f64(&g->v[w], 3), 4.0);
}

Test(fuse_patterns, conv_batchnorm_relu_is_one_conv, .fini = cleanup) {
    fresh();
    int w, y;
    conv_bn(0, &w, &y);
    /* move the output behind a Relu */
    g->v[y].flags &= ~RLX_V_OUTPUT;
    g->noutputs = 0;
    int r = node("Relu", IDS(y));
    output(r);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(r);
    cr_assert_eq(n->op, RLX_OP_CONV);
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_RELU);
}

Test(fuse_patterns, batchnorm_with_a_runtime_mean_stays, .fini = cleanup) {
    fresh();
    int w, y;
    conv_bn(1, &w, &y);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_BATCHNORM), 1);
    cr_assert_eq(producer(y)->op, RLX_OP_BATCHNORM);
}

/* A BatchNormalization on a value no convolution made (DenseNet's, on a
 * Concat) takes a Relu after it into its kernel, but not an Add. */
static int bn_of_input(int *y_out) {
    int x = input("x", DIMS(1, 2, 3, 3));
    int sc = weightf("scale", DIMS(2), (const float[]){3, -1});
    int be = weightf("beta", DIMS(2), (const float[]){0.25f, 1});
    int mu = weightf("mean", DIMS(2), (const float[]){0.5f, 4});
    int var = weightf("var", DIMS(2), (const float[]){3.75f, 3.75f});
    *y_out = node("BatchNormalization", IDS(x, sc, be, mu, var));
    return x;
}

Test(fuse_epilogue, batchnorm_takes_its_relu, .fini = cleanup) {
    fresh();
    int y;
    bn_of_input(&y);
    int r = node("Relu", IDS(y));
    output(r);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(r);
    cr_assert_eq(n->op, RLX_OP_BATCHNORM);
    cr_assert_eq(rlx_attr_i(n, "rlx_act", 0), RS_ACT_RELU);
}

Test(fuse_epilogue, batchnorm_leaves_an_add, .fini = cleanup) {
    fresh();
    int y;
    int x = bn_of_input(&y);
    int a = node("Add", IDS(y, x));
    output(a);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_BATCHNORM), 1);
    cr_assert_eq(rlx_attr_i(producer(y), "rlx_act", 0), 0);
    cr_assert_neq(producer(a)->op, RLX_OP_BATCHNORM, "the Add is not taken");
}

/* ---- (d) Transpose into MatMul ---- */

Test(fuse_patterns, transpose_of_b_folds, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 5, 3)), w = input("w", DIMS(2, 4, 3));
    int t = node("Transpose", IDS(w));
    attr_ints(last_node(), "perm", 3, (int64_t[]){0, 2, 1});
    int y = node("MatMul", IDS(x, t));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_MATMUL);
    inputs_are(n, IDS(x, w));
    cr_assert_eq(rlx_attr_i(n, "rlx_trans_b", 0), 1);
    cr_assert_eq(rlx_attr_i(n, "rlx_trans_a", 0), 0);
}

Test(fuse_patterns, transpose_of_a_with_default_perm_folds, .fini = cleanup) {
    fresh();
    int a = input("a", DIMS(3, 2)), w = input("w", DIMS(3, 4));
    int t = node("Transpose", IDS(a));   /* rank 2, no perm: reversed = swap */
    int y = node("MatMul", IDS(t, w));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    inputs_are(n, IDS(a, w));
    cr_assert_eq(rlx_attr_i(n, "rlx_trans_a", 0), 1);
    cr_assert_eq(rlx_attr_i(n, "rlx_trans_b", 0), 0);
}

Test(fuse_patterns, transpose_with_another_perm_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 5, 3)), w = input("w", DIMS(3, 2, 4));
    int t = node("Transpose", IDS(w));   /* [3,2,4] -> [2,3,4]: not the last two axes */
    attr_ints(last_node(), "perm", 3, (int64_t[]){1, 0, 2});
    int y = node("MatMul", IDS(x, t));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 2);
    const RlxNode *n = producer(y);
    inputs_are(n, IDS(x, t));
    cr_assert_eq(rlx_attr_i(n, "rlx_trans_b", 0), 0);
    cr_assert_eq(producer(t)->op, RLX_OP_TRANSPOSE);
}

Test(fuse_patterns, transpose_read_twice_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3)), w = input("w", DIMS(4, 3));
    int t = node("Transpose", IDS(w));
    int y = node("MatMul", IDS(x, t));
    output(y);
    output(t);
    compile(1);
    cr_assert_eq(producer(t)->op, RLX_OP_TRANSPOSE);
    cr_assert_eq(rlx_attr_i(producer(y), "rlx_trans_b", 0), 0);
}

/* ---- (e) LayerNorm and Softmax ---- */

/* The exporters' LayerNorm over `axis` of x: ReduceMean, Sub, Pow 2,
 * ReduceMean, Add eps, Sqrt, Div [, Mul gamma, Add beta]. */
static int decomposed_layernorm(int x, int64_t axis, float eps, int gamma, int beta) {
    int mean = node("ReduceMean", IDS(x, ints(1, (int64_t[]){axis})));
    int d = node("Sub", IDS(x, mean));
    int p = node("Pow", IDS(d, scalar(2.0f)));
    int var = node("ReduceMean", IDS(p, ints(1, (int64_t[]){axis})));
    int ve = node("Add", IDS(var, scalar(eps)));
    int sd = node("Sqrt", IDS(ve));
    int y = node("Div", IDS(d, sd));
    if (gamma >= 0) y = node("Mul", IDS(y, gamma));
    if (beta >= 0) y = node("Add", IDS(y, beta));
    return y;
}

Test(fuse_patterns, layernorm_with_scale_and_shift, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3, 4));
    int gamma = weightf("gamma", DIMS(4), (const float[]){1, 2, 3, 4});
    int beta = weightf("beta", DIMS(4), (const float[]){0, 0.5f, 0, -1});
    int y = decomposed_layernorm(x, -1, 1e-5f, gamma, beta);
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_LAYERNORM);
    inputs_are(n, IDS(x, gamma, beta));
    cr_assert_eq(rlx_attr_i(n, "axis", 0), -1);
    /* the epsilon is the f32 constant's value */
    cr_assert_eq(rlx_attr_f(n, "epsilon", 0), (double)1e-5f);
}

Test(fuse_patterns, layernorm_positive_axis_without_affine, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(3, 5));
    int y = decomposed_layernorm(x, 1, 0.125f, -1, -1);   /* axis 1 is the last */
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_LAYERNORM);
    cr_assert_eq(n->nin, 2);
    cr_assert_eq(n->in[0], x);
    /* a made-up scale of ones */
    const RlxValue *s = &g->v[n->in[1]];
    cr_assert_eq(rlx_value_numel(s), 5);
    for (int i = 0; i < 5; i++) cr_assert_eq(rlx_weight_f64(s, i), 1.0);
    cr_assert_eq(rlx_attr_f(n, "epsilon", 0), 0.125);
}

Test(fuse_patterns, layernorm_over_another_axis_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(3, 4));
    int gamma = weightf("gamma", DIMS(4), (const float[]){1, 2, 3, 4});
    int y = decomposed_layernorm(x, 0, 1e-5f, gamma, -1);
    output(y);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_LAYERNORM), 0);
    cr_assert_eq(live_count(RLX_OP_REDUCEMEAN), 2);
}

Test(fuse_patterns, layernorm_with_pow_3_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(3, 4));
    int mean = node("ReduceMean", IDS(x, ints(1, (int64_t[]){-1})));
    int d = node("Sub", IDS(x, mean));
    int p = node("Pow", IDS(d, scalar(3.0f)));
    int var = node("ReduceMean", IDS(p, ints(1, (int64_t[]){-1})));
    int y = node("Div", IDS(d, node("Sqrt", IDS(node("Add", IDS(var, scalar(1e-5f)))))));
    output(y);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_LAYERNORM), 0);
}

static int decomposed_softmax(int x, int64_t axis) {
    int mx = node("ReduceMax", IDS(x, ints(1, (int64_t[]){axis})));
    int e = node("Exp", IDS(node("Sub", IDS(x, mx))));
    int s = node("ReduceSum", IDS(e, ints(1, (int64_t[]){axis})));
    return node("Div", IDS(e, s));
}

Test(fuse_patterns, softmax, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3, 5));
    int y = decomposed_softmax(x, -1);
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_SOFTMAX);
    inputs_are(n, IDS(x));
    cr_assert_eq(rlx_attr_i(n, "axis", 0), -1);
}

Test(fuse_patterns, softmax_without_the_max, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(4, 6));
    int e = node("Exp", IDS(x));
    int y = node("Div", IDS(e, node("ReduceSum", IDS(e, ints(1, (int64_t[]){1})))));
    output(y);
    compile(1);
    cr_assert_eq(live_total(), 1);
    const RlxNode *n = producer(y);
    cr_assert_eq(n->op, RLX_OP_SOFTMAX);
    inputs_are(n, IDS(x));
}

Test(fuse_patterns, softmax_over_another_axis_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3, 5));
    int y = decomposed_softmax(x, 1);
    output(y);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_SOFTMAX), 0);
    cr_assert_eq(live_count(RLX_OP_REDUCESUM), 1);
    cr_assert_eq(live_count(RLX_OP_REDUCEMAX), 1);
}

/* ---- (e2) a Pad by nothing, and AveragePool after a 1x1 Conv ---- */

/* A fresh graph: x (1, 4, 6, 6) -> Conv 1x1 (4 -> 3, bias) -> [Pad by `pad`]
 * -> AveragePool kernel k x k, stride s, pads `pp` (all four; -pp: at the
 * start only), ceil_mode `ceil`, the pool's output a graph output: DenseNet's
 * transition is k = s = 2 after a Pad by zeros. ck: the conv's kernel. */
typedef struct {
    int conv, x, y;   /* the conv's node, the input and output values */
} ConvPool;

static ConvPool conv_pool(int64_t ck, int64_t pad, int64_t k, int64_t s, int64_t pp, int ceil) {
    fresh();
    ConvPool r;
    r.x = input("x", DIMS(1, 4, 6, 6));
    float wv[3 * 4 * 9], bv[3] = {1, 2, 3};
    for (int i = 0; i < 3 * 4 * 9; i++) wv[i] = (float)(i % 7) - 3.0f;
    int w = weightf("w", DIMS(3, 4, ck, ck), wv);
    int c = node("Conv", IDS(r.x, w, weightf("b", DIMS(3), bv)));
    r.conv = last_node();
    if (pad >= 0) c = node("Pad", IDS(c, ints(8, (int64_t[]){0, 0, 0, pad, 0, 0, 0, pad})));
    r.y = node("AveragePool", IDS(c));
    int pn = last_node();
    attr_ints(pn, "kernel_shape", 2, (int64_t[]){k, k});
    attr_ints(pn, "strides", 2, (int64_t[]){s, s});
    if (pp > 0) attr_ints(pn, "pads", 4, (int64_t[]){pp, pp, pp, pp});
    if (pp < 0) attr_ints(pn, "pads", 4, (int64_t[]){-pp, -pp, 0, 0});
    if (ceil) rlx_attr_add(g, pn, "ceil_mode", RLX_A_INT)->i = 1;
    output(r.y);
    return r;
}

/* The pool still reads the conv's output, through a Pad where there is one. */
static void pool_after_conv(const ConvPool *cp, RlxOp between, const char *what) {
    const RlxNode *p = producer(cp->y);
    cr_assert_eq(p->op, RLX_OP_AVERAGEPOOL, "%s: the pool moved", what);
    const RlxNode *q = producer(p->in[0]);
    cr_assert_eq(q->op, between, "%s", what);
}

Test(fuse_patterns, zero_pad_goes_and_the_pool_moves_before_the_conv, .fini = cleanup) {
    ConvPool cp = conv_pool(1, 0, 2, 2, 0, 0);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_PAD), 0);
    cr_assert_eq(live_total(), 2);
    const RlxNode *c = producer(cp.y);
    cr_assert_eq(c->op, RLX_OP_CONV);
    const RlxNode *p = producer(c->in[0]);
    cr_assert_eq(p->op, RLX_OP_AVERAGEPOOL);
    inputs_are(p, IDS(cp.x));
    /* the pooled value: x's 4 channels on the 3 x 3 plane */
    const RlxValue *t = &g->v[c->in[0]];
    cr_assert_eq(t->rank, 4);
    cr_assert(t->dims[0] == 1 && t->dims[1] == 4 && t->dims[2] == 3 && t->dims[3] == 3, "pooled value %s: %lldx%lldx%lldx%lld",
              t->name, (long long)t->dims[0], (long long)t->dims[1], (long long)t->dims[2], (long long)t->dims[3]);
    const RlxValue *yv = &g->v[cp.y];
    cr_assert(yv->dims[1] == 3 && yv->dims[2] == 3 && yv->dims[3] == 3);
}

Test(fuse_patterns, pool_stays_after_a_conv_it_cannot_pass, .fini = cleanup) {
    /* conv 3x3; pool padded; padded at the start only (its last window ends
     * at the plane's edge, its first reads the pad); a window over the edge
     * (5 of 6 with ceil_mode); a pool that keeps the plane (kernel 1) */
    struct { int64_t ck, k, s, pp; int ceil; } no[] = {
        {3, 2, 2, 0, 0}, {1, 3, 2, 1, 0}, {1, 2, 2, -1, 0}, {1, 3, 2, 0, 1}, {1, 1, 1, 0, 0}};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        ConvPool cp = conv_pool(no[i].ck, -1, no[i].k, no[i].s, no[i].pp, no[i].ceil);
        compile(1);
        pool_after_conv(&cp, RLX_OP_CONV, rlx_fmt("case %zu", i));
    }
}

Test(fuse_patterns, pool_stays_when_the_conv_output_has_another_reader, .fini = cleanup) {
    ConvPool cp = conv_pool(1, -1, 2, 2, 0, 0);
    output(g->n[cp.conv].out[0]);
    compile(1);
    pool_after_conv(&cp, RLX_OP_CONV, "a second reader");
}

Test(fuse_patterns, pad_by_something_stays, .fini = cleanup) {
    ConvPool cp = conv_pool(1, 1, 2, 2, 0, 0);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_PAD), 1);
    pool_after_conv(&cp, RLX_OP_PAD, "a Pad by 1");
}

Test(fuse_patterns, zero_pad_that_is_an_output_stays, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3));
    int y = node("Pad", IDS(x, ints(4, (int64_t[]){0, 0, 0, 0})));
    output(y);
    compile(1);
    cr_assert_eq(live_count(RLX_OP_PAD), 1);
}

/* ---- (f) views ---- */

Test(views, no_thunk_and_the_same_offset, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(2, 3));
    int r = node("Relu", IDS(x));
    int v1 = node("Reshape", IDS(r, ints(2, (int64_t[]){3, 2})));    /* [3,2] */
    int rs = last_node();
    int v2 = node("Unsqueeze", IDS(v1, ints(1, (int64_t[]){0})));    /* [1,3,2] */
    int us = last_node();
    int v3 = node("Flatten", IDS(v2));                                /* axis 1: [1,6] */
    int fl = last_node();
    int v4 = node("Squeeze", IDS(v3, ints(1, (int64_t[]){0})));      /* [6] */
    int sq = last_node();
    int y = node("Neg", IDS(v4));
    output(y);
    compile(1);
    cr_assert_eq(g->v[v4].rank, 1);
    cr_assert_eq(g->v[v4].dims[0], 6);
    rlx_schedule_memory(g);
    RlxPlan *p = rlx_plan(g);
    RlxThunkList *tl = rlx_lower(g, p, &rlx_target_c);
    int views[] = {rs, us, fl, sq};
    for (int i = 0; i < tl->n; i++)
        for (int k = 0; k < 4; k++)
            cr_assert_neq(tl->t[i].node, views[k], "view node '%s' has a thunk", g->n[views[k]].name);
    cr_assert_eq(tl->n, 2, "%d thunks, expected Relu and Neg", tl->n);
    int vals[] = {v1, v2, v3, v4};
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(p->off[vals[k]], p->off[r], "'%s' at %lld, its input's buffer at %lld", g->v[vals[k]].name,
                     (long long)p->off[vals[k]], (long long)p->off[r]);
        cr_assert_eq(p->buf[vals[k]], p->buf[r]);
    }
}

Test(views, of_a_graph_input_and_kept_alive, .fini = cleanup) {
    fresh();
    /* a view of the input while the input is still read later: the view
     * shares its bytes anyway (nothing writes either) */
    int x = input("x", DIMS(2, 3));
    int v = node("Reshape", IDS(x, ints(1, (int64_t[]){6})));
    int e = node("Exp", IDS(v));
    int back = node("Reshape", IDS(e, ints(2, (int64_t[]){2, 3})));
    int y = node("Add", IDS(back, x));
    output(y);
    compile(1);
    rlx_schedule_memory(g);
    RlxPlan *p = rlx_plan(g);
    RlxThunkList *tl = rlx_lower(g, p, &rlx_target_c);
    cr_assert_eq(p->off[v], p->off[x]);
    cr_assert_eq(tl->n, 2, "%d thunks, expected Exp and Add", tl->n);
}
