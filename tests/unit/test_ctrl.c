/* test_ctrl.c - the ctrl family: static control flow (If, Loop, Scan) and
 * the TfIdfVectorizer kernel.
 *
 * Control flow: each test writes a small ONNX model with onnx.helper
 * (/usr/bin/python3), reads it, and runs the passes up to inference. With
 * constant inputs the unrolled graph folds completely, so the graph outputs
 * become weights whose values are checked against results worked out by
 * hand in the comments (iteration by iteration). Errors are checked by their
 * one-line message.
 *
 * TfIdfVectorizer: rk_tfidf runs on hand-made gram tables; the expected
 * counts are enumerated by hand in the comments (positions and distances).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rlx.h"

static char tmpdir[64];

static void setup(void) {
    strcpy(tmpdir, "/tmp/test_ctrl_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
    rlx_diag.jmp = NULL;
    rlx_arena_free_all();
}

TestSuite(ctrl, .init = setup, .fini = teardown);

static const char prelude[] =
    "import numpy as np, onnx, sys\n"
    "from onnx import helper as h, TensorProto as T, numpy_helper as nh\n"
    "def vi(n, s, t=T.FLOAT): return h.make_tensor_value_info(n, t, s)\n"
    "def c(name, arr): return nh.from_array(np.array(arr), name)\n"
    "def save(nodes, ins, outs, inits=(), opset=13):\n"
    "    g = h.make_graph(nodes, 'g', ins, outs, initializer=list(inits))\n"
    "    m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)])\n"
    "    m.ir_version = 7\n"
    "    onnx.save(m, sys.argv[1])\n";

static const char *make_model(const char *name, const char *body) {
    const char *script = rlx_fmt("%s/%s.py", tmpdir, name), *model = rlx_fmt("%s/%s.onnx", tmpdir, name);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fputs(prelude, f);
    fputs(body, f);
    fclose(f);
    cr_assert_eq(system(rlx_fmt("/usr/bin/python3 '%s' '%s'", script, model)), 0, "model script %s failed", name);
    return model;
}

/* Reads the model and runs the passes up to inference (which expands). */
static RlxGraph *infer_ok(const char *path) {
    jmp_buf jb;
    if (rlx_try(jb)) cr_assert_fail("unexpected error: %s", rlx_diag.msg);
    RlxGraph *g = rlx_read_onnx(path, 0, NULL, NULL);
    rlx_constants_to_weights(g);
    rlx_schedule(g);
    rlx_infer(g);
    rlx_diag.jmp = NULL;
    return g;
}

static void infer_fails(const char *path, const char *expect1, const char *expect2) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_assert(strstr(rlx_diag.msg, expect1), "message '%s' lacks '%s'", rlx_diag.msg, expect1);
        cr_assert(!expect2 || strstr(rlx_diag.msg, expect2), "message '%s' lacks '%s'", rlx_diag.msg, expect2);
        cr_assert(!strchr(rlx_diag.msg, '\n'));
        return;
    }
    RlxGraph *g = rlx_read_onnx(path, 0, NULL, NULL);
    rlx_constants_to_weights(g);
    rlx_schedule(g);
    rlx_infer(g);
    rlx_diag.jmp = NULL;
    cr_assert_fail("no error; expected '%s'", expect1);
}

/* Output k must be a folded weight of the given shape and values. */
static void expect_output(const RlxGraph *g, int k, int rank, const int64_t *dims, const double *want) {
    cr_assert_lt(k, g->noutputs);
    const RlxValue *v = &g->v[g->outputs[k]];
    cr_assert(rlx_is_const(g, g->outputs[k]), "output '%s' did not fold", v->name);
    cr_assert_eq(v->rank, rank, "output '%s' has rank %d", v->name, v->rank);
    for (int i = 0; i < rank; i++) cr_assert_eq(v->dims[i], dims[i], "output '%s' dim %d", v->name, i);
    int64_t n = rlx_value_numel(v);
    for (int64_t i = 0; i < n; i++)
        cr_assert_float_eq(rlx_weight_f64(v, i), want[i], 1e-6, "output '%s' [%lld]: %g, want %g", v->name,
                           (long long)i, rlx_weight_f64(v, i), want[i]);
}

/* Loop with M = 4 and a condition computed by the body (iter < 2), so it
 * runs 3 times; 'two' is an outer initializer read by the body.
 *   y = [1, 2]
 *   iter 0: y = y*2 + 0 = [2, 4],   cond = 0 < 2
 *   iter 1: y = y*2 + 1 = [5, 9],   cond = 1 < 2
 *   iter 2: y = y*2 + 2 = [12, 20], cond = 2 < 2 = false: stop
 * final y = [12, 20]; scan output = the three y's stacked. */
Test(ctrl, loop_condition_from_body_and_outer_value) {
    const char *m = make_model("loop",
        "body = h.make_graph([\n"
        "    h.make_node('Cast', ['i'], ['fi'], to=T.FLOAT),\n"
        "    h.make_node('Mul', ['y_in', 'two'], ['y2']),\n"
        "    h.make_node('Add', ['y2', 'fi'], ['y_out']),\n"
        "    h.make_node('Less', ['i', 'lim'], ['c_out']),\n"
        "    h.make_node('Identity', ['y_out'], ['s'])],\n"
        "  'body', [vi('i', [], T.INT64), vi('c_in', [], T.BOOL), vi('y_in', [2])],\n"
        "  [vi('c_out', [], T.BOOL), vi('y_out', [2]), vi('s', [2])], [c('lim', np.int64(2))])\n"
        "save([h.make_node('Loop', ['M', 'cond', 'y0'], ['y', 'scan'], body=body)], [], [vi('y', None), vi('scan', None)],\n"
        "     [c('M', np.int64(4)), c('cond', np.bool_(True)), c('y0', np.float32([1, 2])), c('two', np.float32(2))])\n");
    RlxGraph *g = infer_ok(m);
    int64_t d1[1] = {2}, d2[2] = {3, 2};
    double y[2] = {12, 20}, scan[6] = {2, 4, 5, 9, 12, 20};
    expect_output(g, 0, 1, d1, y);
    expect_output(g, 1, 2, d2, scan);
}

/* An If inside a Loop body: the branch reads the body's y_in and the top
 * graph's 'ten' (a capture through two levels). M = 3, no cond input:
 *   iter 0: 0 < 1, then: y = 0 + 10 = 10
 *   iter 1: else: y = 10 - 1 = 9
 *   iter 2: else: y = 9 - 1 = 8 */
Test(ctrl, if_in_loop_captures_two_levels) {
    const char *m = make_model("nested",
        "then_g = h.make_graph([h.make_node('Add', ['y_in', 'ten'], ['t'])], 'then', [], [vi('t', [])])\n"
        "else_g = h.make_graph([h.make_node('Sub', ['y_in', 'one_f'], ['e'])], 'else', [], [vi('e', [])],\n"
        "                      [c('one_f', np.float32(1))])\n"
        "body = h.make_graph([\n"
        "    h.make_node('Less', ['i', 'one'], ['first']),\n"
        "    h.make_node('If', ['first'], ['y_out'], then_branch=then_g, else_branch=else_g),\n"
        "    h.make_node('Identity', ['c_in'], ['c_out'])],\n"
        "  'body', [vi('i', [], T.INT64), vi('c_in', [], T.BOOL), vi('y_in', [])],\n"
        "  [vi('c_out', [], T.BOOL), vi('y_out', [])])\n"
        "save([h.make_node('Loop', ['M', '', 'y0'], ['y'], body=body)], [], [vi('y', None)],\n"
        "     [c('M', np.int64(3)), c('y0', np.float32(0)), c('ten', np.float32(10)), c('one', np.int64(1))])\n");
    RlxGraph *g = infer_ok(m);
    double y[1] = {8};
    expect_output(g, 0, 0, NULL, y);
}

/* Scan-9 over axis 1 of x = [[1,2,3],[4,5,6]], reversed, state s = s + x_t:
 *   t 0: column 2 [3, 6] -> s = [3, 6]
 *   t 1: column 1 [2, 5] -> s = [5, 11]
 *   t 2: column 0 [1, 4] -> s = [6, 15]
 * out1 stacks the states forward on axis 1: [[3, 5, 6], [6, 11, 15]];
 * out2 stacks them reversed on axis 0: [[6, 15], [5, 11], [3, 6]]. */
Test(ctrl, scan_axes_and_directions) {
    const char *m = make_model("scan",
        "body = h.make_graph([h.make_node('Add', ['s_in', 'xt'], ['s_out']),\n"
        "                     h.make_node('Identity', ['s_out'], ['o1']), h.make_node('Identity', ['s_out'], ['o2'])],\n"
        "  'body', [vi('s_in', [2]), vi('xt', [2])], [vi('s_out', [2]), vi('o1', [2]), vi('o2', [2])])\n"
        "save([h.make_node('Scan', ['s0', 'x'], ['s', 'out1', 'out2'], body=body, num_scan_inputs=1,\n"
        "                  scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1, 0],\n"
        "                  scan_output_directions=[0, 1])], [], [vi('s', None), vi('out1', None), vi('out2', None)],\n"
        "     [c('s0', np.float32([0, 0])), c('x', np.float32([[1, 2, 3], [4, 5, 6]]))], opset=11)\n");
    RlxGraph *g = infer_ok(m);
    int64_t ds[1] = {2}, d1[2] = {2, 3}, d2[2] = {3, 2};
    double s[2] = {6, 15}, o1[6] = {3, 5, 6, 6, 11, 15}, o2[6] = {6, 15, 5, 11, 3, 6};
    expect_output(g, 0, 1, ds, s);
    expect_output(g, 1, 2, d1, o1);
    expect_output(g, 2, 2, d2, o2);
}

/* Scan-8: batch axis 0, time axis 1; two batch entries scanned apart:
 *   b 0: s = 0, x = [1, 2] -> s = 1, 3;  b 1: s = 10, x = [3, 4] -> 13, 17 */
Test(ctrl, scan8_batches) {
    const char *m = make_model("scan8",
        "body = h.make_graph([h.make_node('Add', ['s_in', 'xt'], ['s_out']), h.make_node('Identity', ['s_out'], ['o'])],\n"
        "  'body', [vi('s_in', [1]), vi('xt', [1])], [vi('s_out', [1]), vi('o', [1])])\n"
        "save([h.make_node('Scan', ['', 's0', 'x'], ['s', 'o'], body=body, num_scan_inputs=1)], [],\n"
        "     [vi('s', None), vi('o', None)],\n"
        "     [c('s0', np.float32([[0], [10]])), c('x', np.float32([[[1], [2]], [[3], [4]]]))], opset=8)\n");
    RlxGraph *g = infer_ok(m);
    int64_t ds[2] = {2, 1}, dout[3] = {2, 2, 1};
    double s[2] = {3, 17}, o[4] = {1, 3, 13, 17};
    expect_output(g, 0, 2, ds, s);
    expect_output(g, 1, 3, dout, o);
}

/* If with a constant false condition takes the else branch, whose constant
 * comes from the branch's own Constant node. */
Test(ctrl, if_takes_else_branch) {
    const char *m = make_model("if",
        "then_g = h.make_graph([h.make_node('Constant', [], ['t'], value=c('tv', np.float32([1, 2])))], 'then', [], [vi('t', [2])])\n"
        "else_g = h.make_graph([h.make_node('Constant', [], ['e'], value=c('ev', np.float32([7, 8, 9])))], 'else', [], [vi('e', [3])])\n"
        "save([h.make_node('If', ['cond'], ['y'], then_branch=then_g, else_branch=else_g)], [], [vi('y', None)],\n"
        "     [c('cond', np.bool_(False))], opset=11)\n");
    RlxGraph *g = infer_ok(m);
    int64_t d[1] = {3};
    double y[3] = {7, 8, 9};
    expect_output(g, 0, 1, d, y);
}

/* M = 0: no iteration; the scan output takes its element shape [2] from the
 * body's declaration, so it is [0, 2]; the carried value stays y0. */
Test(ctrl, loop_zero_iterations) {
    const char *m = make_model("zero",
        "body = h.make_graph([h.make_node('Identity', ['c_in'], ['c_out']), h.make_node('Neg', ['y_in'], ['y_out']),\n"
        "                     h.make_node('Identity', ['y_out'], ['s'])],\n"
        "  'body', [vi('i', [], T.INT64), vi('c_in', [], T.BOOL), vi('y_in', [2])],\n"
        "  [vi('c_out', [], T.BOOL), vi('y_out', [2]), vi('s', [2])])\n"
        "save([h.make_node('Loop', ['M', '', 'y0'], ['y', 'scan'], body=body)], [], [vi('y', None), vi('scan', None)],\n"
        "     [c('M', np.int64(0)), c('y0', np.float32([3, 4]))])\n");
    RlxGraph *g = infer_ok(m);
    int64_t d1[1] = {2}, d2[2] = {0, 2};
    double y[2] = {3, 4};
    expect_output(g, 0, 1, d1, y);
    expect_output(g, 1, 2, d2, NULL);
}

/* A trip count computed from a graph input: the message names the input. */
Test(ctrl, runtime_trip_count_is_an_error) {
    const char *m = make_model("dyn",
        "body = h.make_graph([h.make_node('Identity', ['c_in'], ['c_out']), h.make_node('Neg', ['y_in'], ['y_out'])],\n"
        "  'body', [vi('i', [], T.INT64), vi('c_in', [], T.BOOL), vi('y_in', [2])],\n"
        "  [vi('c_out', [], T.BOOL), vi('y_out', [2])])\n"
        "save([h.make_node('Add', ['n', 'one'], ['M']), h.make_node('Loop', ['M', '', 'y0'], ['y'], body=body, name='L')],\n"
        "     [vi('n', [], T.INT64), vi('y0', [2])], [vi('y', None)], [c('one', np.int64(1))])\n");
    infer_fails(m, "node 'L' (Loop): the trip count is not known at compile time; rlxc needs static control flow",
                "graph input (value 'n') must be a constant");
}

/* A body that reads a name no enclosing graph defines. */
Test(ctrl, undefined_outer_name) {
    const char *m = make_model("undef",
        "then_g = h.make_graph([h.make_node('Neg', ['nowhere'], ['t'])], 'then', [], [vi('t', [])])\n"
        "save([h.make_node('If', ['cond'], ['y'], then_branch=then_g, else_branch=then_g)], [], [vi('y', None)],\n"
        "     [c('cond', np.bool_(True))], opset=11)\n");
    infer_fails(m, "input 'nowhere' is not defined", NULL);
}

/* ---- TfIdfVectorizer kernel ---- */

/* grams: unigram 1 -> col 0, unigram 3 -> col 1, bigram (1,2) -> col 2,
 * bigram (2,1) -> col 3; optional weights after them */
static int64_t table[3 + 3 + 3 + 4 + 4 + 4];
static int table_len(int with_weights) {
    int64_t grams[] = {1, 0, 1, 1, 1, 3, 2, 2, 1, 2, 2, 3, 2, 1};
    double w[4] = {0.5, 2, 3, 4};
    table[0] = 4;
    table[1] = with_weights;
    table[2] = 4;
    memcpy(table + 3, grams, sizeof grams);
    if (!with_weights) return 3 + 14;
    memcpy(table + 17, w, sizeof w);
    return 3 + 14 + 4;
}

static void run_tfidf(const void *x, int64_t dtype, int64_t rows, int64_t len, int64_t lo, int64_t hi, int64_t skip,
                      int64_t mode, int weights, float *y) {
    rk_tfidf_params p = {rows, len, dtype, table_len(weights), lo, hi, skip, mode};
    const void *in[2] = {x, table};
    void *out[1] = {y};
    cr_assert_eq(rk_tfidf(NULL, &p, in, out), 0);
}

/* tokens 1 2 1 2 3:
 *   unigram 1 at 0, 2 -> 2; unigram 3 at 4 -> 1
 *   (1,2): distance 1 at starts 0, 2; distance 2: (0,2)=1,1 (1,3)=2,2 (2,4)=1,3 none;
 *          distance 3: (0,3)=1,2 yes, (1,4)=2,3 no
 *   (2,1): distance 1 at start 1; distances 2, 3: none
 * max_skip 0 -> [2, 1, 2, 1]; max_skip 2 -> [2, 1, 3, 1] */
Test(ctrl, tfidf_counts_with_skips) {
    int64_t x[5] = {1, 2, 1, 2, 3};
    float y[4];
    run_tfidf(x, RLX_I64, 1, 5, 1, 2, 0, 0, 0, y);
    cr_assert(y[0] == 2 && y[1] == 1 && y[2] == 2 && y[3] == 1, "skip 0: %g %g %g %g", y[0], y[1], y[2], y[3]);
    run_tfidf(x, RLX_I64, 1, 5, 1, 2, 2, 0, 0, y);
    cr_assert(y[0] == 2 && y[1] == 1 && y[2] == 3 && y[3] == 1, "skip 2: %g %g %g %g", y[0], y[1], y[2], y[3]);
    /* min length 2: no unigrams */
    run_tfidf(x, RLX_I64, 1, 5, 2, 2, 0, 0, 0, y);
    cr_assert(y[0] == 0 && y[1] == 0 && y[2] == 2 && y[3] == 1);
}

/* rows [1 2 1 2 3] and [3 3 3 3 3], i32, max_skip 0:
 *   TF    [2, 1, 2, 1], [0, 5, 0, 0]
 *   IDF   weights where the count > 0: [0.5, 2, 3, 4], [0, 2, 0, 0]
 *   TFIDF count * weight: [1, 2, 6, 4], [0, 10, 0, 0] */
Test(ctrl, tfidf_modes_and_weights) {
    int32_t x[10] = {1, 2, 1, 2, 3, 3, 3, 3, 3, 3};
    float y[8];
    float idf[8] = {0.5f, 2, 3, 4, 0, 2, 0, 0}, tfidf[8] = {1, 2, 6, 4, 0, 10, 0, 0}, idf1[8] = {1, 1, 1, 1, 0, 1, 0, 0};
    run_tfidf(x, RLX_I32, 2, 5, 1, 2, 0, 1, 1, y);
    for (int i = 0; i < 8; i++) cr_assert_float_eq(y[i], idf[i], 1e-6, "IDF [%d] = %g", i, y[i]);
    run_tfidf(x, RLX_I32, 2, 5, 1, 2, 0, 2, 1, y);
    for (int i = 0; i < 8; i++) cr_assert_float_eq(y[i], tfidf[i], 1e-6, "TFIDF [%d] = %g", i, y[i]);
    run_tfidf(x, RLX_I32, 2, 5, 1, 2, 0, 1, 0, y);
    for (int i = 0; i < 8; i++) cr_assert_float_eq(y[i], idf1[i], 1e-6, "IDF without weights [%d] = %g", i, y[i]);
}

Test(ctrl, tfidf_rejects_a_bad_table) {
    int64_t x[2] = {1, 2};
    float y[4];
    table_len(0);
    table[3] = 99;   /* a gram longer than the table */
    rk_tfidf_params p = {1, 2, RLX_I64, 17, 1, 2, 0, 0};
    const void *in[2] = {x, table};
    void *out[1] = {y};
    cr_assert_eq(rk_tfidf(NULL, &p, in, out), RLX_E_ARG);
}

/* The node names fewer outputs than the body gives (its scan output is not
 * used): y = 0 + 1 + 1 after M = 2 iterations. */
Test(ctrl, loop_with_unused_scan_output) {
    const char *m = make_model("unused",
        "body = h.make_graph([h.make_node('Identity', ['c_in'], ['c_out']), h.make_node('Add', ['y_in', 'one'], ['y_out']),\n"
        "                     h.make_node('Identity', ['y_out'], ['s'])],\n"
        "  'body', [vi('i', [], T.INT64), vi('c_in', [], T.BOOL), vi('y_in', [])],\n"
        "  [vi('c_out', [], T.BOOL), vi('y_out', []), vi('s', [])])\n"
        "save([h.make_node('Loop', ['M', '', 'y0'], ['y', ''], body=body)], [], [vi('y', None)],\n"
        "     [c('M', np.int64(2)), c('y0', np.float32(0)), c('one', np.float32(1))])\n");
    RlxGraph *g = infer_ok(m);
    double y[1] = {2};
    expect_output(g, 0, 0, NULL, y);
}
