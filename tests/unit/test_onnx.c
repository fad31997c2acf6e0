/* test_onnx.c - the ONNX reader (lib/frontend/onnx.c).
 *
 * Each test writes a small model with onnx.helper (/usr/bin/python3 and
 * python3-onnx) into a fresh temporary directory, reads it with
 * rlx_read_onnx and checks the IR against values worked out by hand: weight
 * bytes (f16 bit patterns from the IEEE format), old operator versions
 * rewritten into ops.def's canonical form (attributes become constant
 * inputs), operator versions before opset 7 rewritten into their opset-7
 * form, symbolic dims bound with --dim. Error cases run the reader under
 * rlx_try and check the one-line message. One test checks the importer's
 * tables of old operator versions against ONNX's own schema history.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rlx.h"

static char tmpdir[64];

static void setup(void) {
    strcpy(tmpdir, "/tmp/test_onnx_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
    rlx_diag.jmp = NULL;
    rlx_arena_free_all();
}

TestSuite(onnx, .init = setup, .fini = teardown);

static const char prelude[] =
    "import numpy as np, onnx, sys\n"
    "from onnx import helper as h, TensorProto as T, numpy_helper as nh\n"
    "def vi(n, s, t=T.FLOAT): return h.make_tensor_value_info(n, t, s)\n"
    "def save(nodes, ins, outs, inits=(), opset=13, name='g'):\n"
    "    g = h.make_graph(nodes, name, ins, outs, initializer=list(inits))\n"
    "    m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)])\n"
    "    m.ir_version = 7\n"
    "    onnx.save(m, sys.argv[1])\n";

/* Runs the Python body (with the prelude) to write NAME.onnx; returns its path. */
static const char *make_model(const char *name, const char *body) {
    const char *script = rlx_fmt("%s/%s.py", tmpdir, name), *model = rlx_fmt("%s/%s.onnx", tmpdir, name);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fputs(prelude, f);
    fputs(body, f);
    fclose(f);
    int st = system(rlx_fmt("/usr/bin/python3 '%s' '%s'", script, model));
    cr_assert_eq(st, 0, "the model script %s failed", name);
    return model;
}

static RlxGraph *read_ok(const char *path, int ndims, const char *const *names, const int64_t *values) {
    jmp_buf jb;
    if (rlx_try(jb)) cr_assert_fail("unexpected error: %s", rlx_diag.msg);
    RlxGraph *g = rlx_read_onnx(path, ndims, names, values);
    rlx_diag.jmp = NULL;
    return g;
}

static void read_fails(const char *path, int ndims, const char *const *names, const int64_t *values,
                       const char *expect) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_assert(strstr(rlx_diag.msg, expect), "message '%s' lacks '%s'", rlx_diag.msg, expect);
        cr_assert(!strchr(rlx_diag.msg, '\n'));
        return;
    }
    rlx_read_onnx(path, ndims, names, values);
    rlx_diag.jmp = NULL;
    cr_assert_fail("no error; expected '%s'", expect);
}

static const RlxValue *value(const RlxGraph *g, const char *name) {
    int v = rlx_value_find(g, name);
    cr_assert_geq(v, 0, "no value '%s'", name);
    return &g->v[v];
}

static const RlxNode *node(const RlxGraph *g, const char *name) {
    for (int i = 0; i < g->nn; i++)
        if (!strcmp(g->n[i].name, name)) return &g->n[i];
    cr_assert_fail("no node '%s'", name);
    return NULL;
}

/* Input k of n must be a 1-D i64 weight holding want[0..count). */
static void expect_i64_input(const RlxGraph *g, const RlxNode *n, int k, int count, const int64_t *want) {
    cr_assert_gt(n->nin, k);
    cr_assert_geq(n->in[k], 0);
    const RlxValue *v = &g->v[n->in[k]];
    cr_assert(rlx_is_const(g, n->in[k]), "input %d of '%s' is not a weight", k, n->name);
    cr_assert_eq(v->dtype, RLX_I64);
    cr_assert_eq(v->rank, 1);
    cr_assert_eq(v->dims[0], count, "input %d of '%s' has %lld values, expected %d", k, n->name, (long long)v->dims[0], count);
    for (int i = 0; i < count; i++) cr_assert_eq(rlx_weight_i64(v, i), want[i], "input %d [%d]", k, i);
}

Test(onnx, initializers_become_weights) {
    const char *m = make_model("w",
        "f32raw = nh.from_array(np.array([[1.5, -2], [0.25, 3]], np.float32), 'f32raw')\n"
        "f32typed = h.make_tensor('f32typed', T.FLOAT, [3], [1.0, 2.5, -4.0])\n"
        "i64 = h.make_tensor('i64', T.INT64, [2], [-5, 2**40])\n"
        "f16 = h.make_tensor('f16', T.FLOAT16, [2], [1.5, -2.0])\n"
        "b = h.make_tensor('b', T.BOOL, [3], [True, False, True])\n"
        "u8 = h.make_tensor('u8', T.UINT8, [2], [7, 255])\n"
        "f64 = h.make_tensor('f64', T.DOUBLE, [1], [0.1])\n"
        "u64 = h.make_tensor('u64', T.UINT64, [1], [2**63 + 5])\n"
        "i8raw = nh.from_array(np.array([-128, 127], np.int8), 'i8raw')\n"
        "ins = [vi('x', [2, 2]), vi('f32raw', [2, 2])]\n"   /* an input with an initializer: a weight */
        "save([h.make_node('Add', ['x', 'f32raw'], ['y'])], ins, [vi('y', [2, 2])],\n"
        "     [f32raw, f32typed, i64, f16, b, u8, f64, u64, i8raw])\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    cr_assert_eq(g->ninputs, 1);
    cr_assert_str_eq(g->v[g->inputs[0]].name, "x");

    const RlxValue *v = value(g, "f32raw");
    cr_assert_eq(v->flags & (RLX_V_WEIGHT | RLX_V_INPUT), RLX_V_WEIGHT);
    cr_assert_eq(v->dtype, RLX_F32);
    cr_assert_eq(v->rank, 2);
    cr_assert_eq(v->dims[0], 2);
    cr_assert_eq(v->dims[1], 2);
    const double f32raw[] = {1.5, -2, 0.25, 3};
    for (int i = 0; i < 4; i++) cr_assert_eq(rlx_weight_f64(v, i), f32raw[i]);

    v = value(g, "f32typed");
    const double f32typed[] = {1.0, 2.5, -4.0};
    for (int i = 0; i < 3; i++) cr_assert_eq(rlx_weight_f64(v, i), f32typed[i]);

    v = value(g, "i64");
    cr_assert_eq(v->dtype, RLX_I64);
    cr_assert_eq(rlx_weight_i64(v, 0), -5);
    cr_assert_eq(rlx_weight_i64(v, 1), (int64_t)1 << 40);

    /* f16: 1.5 = 0 01111 1000000000 = 0x3e00, -2 = 1 10000 0000000000 = 0xc000 */
    v = value(g, "f16");
    cr_assert_eq(v->dtype, RLX_F16);
    uint16_t h[2];
    memcpy(h, v->data, 4);
    cr_assert_eq(h[0], 0x3e00);
    cr_assert_eq(h[1], 0xc000);

    v = value(g, "b");
    cr_assert_eq(v->dtype, RLX_BOOL);
    cr_assert_eq(v->data[0], 1);
    cr_assert_eq(v->data[1], 0);
    cr_assert_eq(v->data[2], 1);

    v = value(g, "u8");
    cr_assert_eq(v->dtype, RLX_U8);
    cr_assert_eq(v->data[0], 7);
    cr_assert_eq(v->data[1], 255);

    v = value(g, "f64");
    cr_assert_eq(v->dtype, RLX_F64);
    cr_assert_eq(rlx_weight_f64(v, 0), 0.1);

    v = value(g, "u64");
    cr_assert_eq(v->dtype, RLX_U64);
    uint64_t u;
    memcpy(&u, v->data, 8);
    cr_assert_eq(u, ((uint64_t)1 << 63) + 5);

    v = value(g, "i8raw");
    cr_assert_eq(v->dtype, RLX_I8);
    cr_assert_eq(rlx_weight_i64(v, 0), -128);
    cr_assert_eq(rlx_weight_i64(v, 1), 127);
}

Test(onnx, slice1_attrs_become_inputs) {
    const char *m = make_model("s",
        "save([h.make_node('Slice', ['x'], ['y'], name='s', starts=[0, 1], ends=[2, 3], axes=[0, 2])],\n"
        "     [vi('x', [4, 5, 6])], [vi('y', None)], opset=9)\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    const RlxNode *n = node(g, "s");
    cr_assert_eq(n->op, RLX_OP_SLICE);
    cr_assert_eq(n->nin, 4);
    cr_assert_eq(n->nattr, 0);
    const int64_t starts[] = {0, 1}, ends[] = {2, 3}, axes[] = {0, 2};
    expect_i64_input(g, n, 1, 2, starts);
    expect_i64_input(g, n, 2, 2, ends);
    expect_i64_input(g, n, 3, 2, axes);
}

Test(onnx, squeeze_unsqueeze_reduce_attrs_become_inputs) {
    const char *m = make_model("sq",
        "save([h.make_node('Unsqueeze', ['x'], ['u'], name='u', axes=[0, 3]),\n"
        "      h.make_node('Squeeze', ['u'], ['s'], name='s', axes=[0]),\n"
        "      h.make_node('Squeeze', ['s'], ['s2'], name='s_all'),\n"
        "      h.make_node('ReduceSum', ['s2'], ['r'], name='rs', axes=[-1], keepdims=0),\n"
        "      h.make_node('ReduceMean', ['r'], ['y'], name='rm', axes=[1])],\n"
        "     [vi('x', [2, 3, 1])], [vi('y', None)], opset=11)\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    const int64_t a03[] = {0, 3}, a0[] = {0}, am1[] = {-1}, a1[] = {1};
    const RlxNode *n = node(g, "u");
    cr_assert_eq(n->op, RLX_OP_UNSQUEEZE);
    cr_assert_eq(n->nattr, 0);
    expect_i64_input(g, n, 1, 2, a03);
    expect_i64_input(g, node(g, "s"), 1, 1, a0);
    cr_assert_eq(node(g, "s_all")->nin, 1);   /* no axes: every size-1 axis */
    n = node(g, "rs");
    cr_assert_eq(n->op, RLX_OP_REDUCESUM);
    expect_i64_input(g, n, 1, 1, am1);
    cr_assert_eq(rlx_attr_i(n, "keepdims", 1), 0);
    cr_assert_null(rlx_attr_get(n, "axes"));
    expect_i64_input(g, node(g, "rm"), 1, 1, a1);
}

Test(onnx, reduce_forms_by_opset) {
    /* opset 13: ReduceSum already takes axes as an input, ReduceMax not yet */
    const char *m = make_model("r13",
        "ax = nh.from_array(np.array([1], np.int64), 'ax')\n"
        "save([h.make_node('ReduceSum', ['x', 'ax'], ['a'], name='rs'),\n"
        "      h.make_node('ReduceMax', ['a'], ['y'], name='rx', axes=[0], keepdims=0)],\n"
        "     [vi('x', [2, 3])], [vi('y', None)], [ax], opset=13)\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    const RlxNode *n = node(g, "rs");
    cr_assert_eq(n->nin, 2);
    cr_assert_str_eq(g->v[n->in[1]].name, "ax");
    const int64_t a0[] = {0};
    expect_i64_input(g, node(g, "rx"), 1, 1, a0);
    /* ReduceSum-13 with an axes attribute is not ONNX */
    m = make_model("bad13",
        "save([h.make_node('ReduceSum', ['x'], ['y'], name='rs', axes=[0])], [vi('x', [2, 3])], [vi('y', None)])\n");
    read_fails(m, 0, NULL, NULL, "node 'rs' (ReduceSum): unknown attribute 'axes'");
}

Test(onnx, clip_pad_split_old_forms) {
    const char *m = make_model("c",
        "save([h.make_node('Clip', ['x'], ['c'], name='c', min=-1.5, max=2.0),\n"
        "      h.make_node('Clip', ['h'], ['c16'], name='c16', max=0.5),\n"
        "      h.make_node('Pad', ['c'], ['p'], name='p', pads=[1, 0, 0, 2], value=0.25),\n"
        "      h.make_node('Split', ['p'], ['y', 'z'], name='sp', axis=1, split=[1, 4])],\n"
        "     [vi('x', [2, 3]), vi('h', [2], T.FLOAT16)], [vi('y', None), vi('z', None), vi('c16', None)],\n"
        "     opset=10)\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    const RlxNode *n = node(g, "c");
    cr_assert_eq(n->nin, 3);
    cr_assert_eq(n->nattr, 0);
    const RlxValue *lo = &g->v[n->in[1]], *hi = &g->v[n->in[2]];
    cr_assert_eq(lo->dtype, RLX_F32);
    cr_assert_eq(lo->rank, 0);
    cr_assert_eq(rlx_weight_f64(lo, 0), -1.5);
    cr_assert_eq(rlx_weight_f64(hi, 0), 2.0);
    /* only max: min is absent (-1); the bound has the f16 input's dtype, 0.5 = 0x3800 */
    n = node(g, "c16");
    cr_assert_eq(n->nin, 3);
    cr_assert_eq(n->in[1], -1);
    const RlxValue *b = &g->v[n->in[2]];
    cr_assert_eq(b->dtype, RLX_F16);
    uint16_t bits;
    memcpy(&bits, b->data, 2);
    cr_assert_eq(bits, 0x3800);

    n = node(g, "p");
    cr_assert_eq(n->nin, 3);
    const int64_t pads[] = {1, 0, 0, 2};
    expect_i64_input(g, n, 1, 4, pads);
    cr_assert_eq(g->v[n->in[2]].dtype, RLX_F32);   /* through Clip back to the f32 input */
    cr_assert_eq(rlx_weight_f64(&g->v[n->in[2]], 0), 0.25);
    cr_assert_str_eq(rlx_attr_s(n, "mode", "?"), "constant");

    n = node(g, "sp");
    cr_assert_eq(n->nout, 2);
    const int64_t split[] = {1, 4};
    expect_i64_input(g, n, 1, 2, split);
}

Test(onnx, softmax_legacy_and_dropout_and_batchnorm) {
    const char *m = make_model("sm",
        "bn = [nh.from_array(np.ones(3, np.float32), n) for n in ['s', 'b', 'm', 'v']]\n"
        "save([h.make_node('Dropout', ['x'], ['d', ''], name='d', ratio=0.3),\n"
        "      h.make_node('BatchNormalization', ['d', 's', 'b', 'm', 'v'], ['n'], name='bn', spatial=1,\n"
        "                  momentum=0.5),\n"
        "      h.make_node('Softmax', ['n'], ['y'], name='sm'),\n"
        "      h.make_node('LogSoftmax', ['n'], ['z'], name='lsm', axis=2)],\n"
        "     [vi('x', [1, 3, 4, 4])], [vi('y', None), vi('z', None)], bn, opset=8)\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    const RlxNode *n = node(g, "d");
    cr_assert_eq(n->op, RLX_OP_IDENTITY);
    cr_assert_eq(n->nin, 1);
    cr_assert_eq(n->nout, 1);
    cr_assert_eq(n->nattr, 0);
    n = node(g, "bn");
    cr_assert_null(rlx_attr_get(n, "spatial"));
    cr_assert_float_eq(rlx_attr_f(n, "momentum", 0), 0.5, 1e-7);
    n = node(g, "sm");
    cr_assert_eq(rlx_attr_i(n, "axis", -99), 1);   /* the old default */
    cr_assert_eq(rlx_attr_i(n, "legacy_2d", 0), 1);
    n = node(g, "lsm");
    cr_assert_eq(rlx_attr_i(n, "axis", -99), 2);
    cr_assert_eq(rlx_attr_i(n, "legacy_2d", 0), 1);

    m = make_model("sm13", "save([h.make_node('Softmax', ['x'], ['y'], name='sm')], [vi('x', [2, 3])], [vi('y', None)])\n");
    g = read_ok(m, 0, NULL, NULL);
    n = node(g, "sm");
    cr_assert_eq(rlx_attr_i(n, "axis", 99), -1);
    cr_assert_eq(rlx_attr_i(n, "legacy_2d", 99), 0);
}

Test(onnx, cast_to_and_tensor_attribute) {
    const char *m = make_model("ca",
        "t = h.make_tensor('t', T.INT32, [2], [3, -4])\n"
        "save([h.make_node('Cast', ['x'], ['y'], name='c', to=T.FLOAT16),\n"
        "      h.make_node('Constant', [], ['k'], name='k', value=t)],\n"
        "     [vi('x', [2])], [vi('y', None), vi('k', None, T.INT32)])\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    const RlxAttr *a = rlx_attr_get(node(g, "c"), "to");
    cr_assert_not_null(a);
    cr_assert_eq(a->kind, RLX_A_DTYPE);
    cr_assert_eq(a->i, RLX_F16);
    a = rlx_attr_get(node(g, "k"), "value");
    cr_assert_eq(a->kind, RLX_A_TENSOR);
    const RlxValue *t = &g->v[a->tensor];
    cr_assert_eq(t->dtype, RLX_I32);
    cr_assert_eq(rlx_weight_i64(t, 0), 3);
    cr_assert_eq(rlx_weight_i64(t, 1), -4);
}

Test(onnx, dim_binding) {
    const char *m = make_model("d",
        "save([h.make_node('Add', ['x', 'z'], ['y'])], [vi('x', ['N', 3]), vi('z', ['N', 'M'])],\n"
        "     [vi('y', ['N', 3])])\n");
    const char *names[] = {"M", "N"};
    const int64_t values[] = {3, 5};
    RlxGraph *g = read_ok(m, 2, names, values);
    const RlxValue *x = value(g, "x"), *z = value(g, "z");
    cr_assert_eq(x->dims[0], 5);
    cr_assert_eq(x->dims[1], 3);
    cr_assert_eq(z->dims[0], 5);
    cr_assert_eq(z->dims[1], 3);
    cr_assert_eq(g->output_decl[0].rank, 2);
    cr_assert_eq(g->output_decl[0].dims[0], 5);

    read_fails(m, 0, NULL, NULL, "symbolic dimensions without a value: 'N', 'M' (bind each with --dim NAME=VALUE)");
    read_fails(m, 1, names + 1, values + 1, "symbolic dimensions without a value: 'M' (");
    const char *extra[] = {"M", "N", "Q"};
    const int64_t ev[] = {1, 2, 3};
    read_fails(m, 3, extra, ev, "--dim Q: the model has no symbolic dimension of that name");
}

Test(onnx, node_names_and_model_name) {
    const char *m = make_model("n",
        "save([h.make_node('Relu', ['x'], ['a']), h.make_node('Relu', ['a'], ['b']),\n"
        "      h.make_node('Neg', ['b'], ['c'], name='dup'), h.make_node('Neg', ['c'], ['y'], name='dup')],\n"
        "     [vi('x', [2])], [vi('y', None)], name='my-net 1')\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    cr_assert_str_eq(g->n[0].name, "Relu_0");
    cr_assert_str_eq(g->n[1].name, "Relu_1");
    cr_assert_str_eq(g->n[2].name, "dup");
    cr_assert_str_eq(g->n[3].name, "dup_1");
    cr_assert_str_eq(g->name, "my_net_1");
    m = make_model("n2", "save([h.make_node('Relu', ['x'], ['y'])], [vi('x', [2])], [vi('y', None)], name='3d')\n");
    cr_assert_str_eq(read_ok(m, 0, NULL, NULL)->name, "m_3d");
}

Test(onnx, error_texts) {
    const char *m = make_model("u",
        "save([h.make_node('Foo', ['x'], ['a'], name='a'), h.make_node('Bar', ['a'], ['b'], name='c'),\n"
        "      h.make_node('Foo', ['b'], ['d']), h.make_node('Conv', ['d'], ['y'], name='ms', domain='com.ms')],\n"
        "     [vi('x', [2])], [vi('y', None)])\n");
    read_fails(m, 0, NULL, NULL,
               "u.onnx: unsupported ops: Foo (nodes 'a', 'Foo_2'); Bar (node 'c'); com.ms.Conv (node 'ms')");
    m = make_model("o18", "save([h.make_node('Relu', ['x'], ['y'])], [vi('x', [2])], [vi('y', None)], opset=18)\n");
    read_fails(m, 0, NULL, NULL, "opset 18 of the default domain (ai.onnx) is not supported; rlxc reads opsets 1 to 17");
    m = make_model("cnt",
        "w = h.make_tensor('w', T.FLOAT, [3], [1, 2, 3]); del w.dims[:]; w.dims.extend([2, 2])\n"
        "save([h.make_node('Add', ['x', 'w'], ['y'])], [vi('x', [2, 2])], [vi('y', None)], [w])\n");
    read_fails(m, 0, NULL, NULL, "tensor 'w' has 3 values, but shape [2,2] needs 4");
    m = make_model("mask",
        "save([h.make_node('Dropout', ['x'], ['d', 'k'], name='dr'), h.make_node('Not', ['k'], ['y'], name='nt')],\n"
        "     [vi('x', [2])], [vi('y', None, T.BOOL)], opset=12)\n");
    read_fails(m, 0, NULL, NULL, "node 'nt' (Not) uses 'k', the mask output of Dropout node 'dr', which is not supported");
    m = make_model("bn0",
        "bn = [nh.from_array(np.ones(3, np.float32), n) for n in ['s', 'b', 'm', 'v']]\n"
        "save([h.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], name='bn', spatial=0)],\n"
        "     [vi('x', [1, 3, 2, 2])], [vi('y', None)], bn, opset=7)\n");
    read_fails(m, 0, NULL, NULL, "node 'bn' (BatchNormalization): spatial=0");
    const char *path = rlx_fmt("%s/garbage.onnx", tmpdir);
    FILE *f = fopen(path, "wb");
    fputs("\x0f\xff garbage", f);
    fclose(f);
    read_fails(path, 0, NULL, NULL, "garbage.onnx: not a valid ONNX model (protobuf parse failed)");
}

/* ---- operator versions before opset 7 ---- */

Test(onnx, old_opsets_read) {
    /* opset 1: consumed_inputs dropped; Add-1 legacy broadcast with axis=1
     * of B [3,4] into A [2,3,4,5] -> B unsqueezed to [3,4,1]; without
     * axis B matches A's last dims, as in NumPy; Cast-1's type name */
    const char *m = make_model("o1",
        "b = nh.from_array(np.ones((3, 4), np.float32), 'b')\n"
        "c = nh.from_array(np.ones((4, 5), np.float32), 'c')\n"
        "save([h.make_node('Relu', ['x'], ['r'], name='relu', consumed_inputs=[0]),\n"
        "      h.make_node('Add', ['r', 'b'], ['a'], name='add', broadcast=1, axis=1, consumed_inputs=[0, 0]),\n"
        "      h.make_node('Mul', ['a', 'c'], ['u'], name='mul', broadcast=1),\n"
        "      h.make_node('Cast', ['u'], ['y'], name='cast', to='FLOAT16'),\n"
        "      h.make_node('Concat', ['y', 'y'], ['z'], name='cat')],\n"
        "     [vi('x', [2, 3, 4, 5])], [vi('z', None, T.FLOAT16)], [b, c], opset=1)\n");
    RlxGraph *g = read_ok(m, 0, NULL, NULL);
    cr_assert_eq(node(g, "relu")->nattr, 0);
    const RlxNode *add = node(g, "add");
    cr_assert_eq(add->nattr, 0);
    cr_assert_str_eq(g->v[add->in[0]].name, "r");
    const RlxNode *uq = node(g, "add.unsqueeze_B");
    cr_assert_eq(uq->op, RLX_OP_UNSQUEEZE);
    cr_assert_str_eq(g->v[uq->in[0]].name, "b");
    const int64_t axes[] = {2};   /* after B's 2 axes, rank(A) - axis - rank(B) = 4 - 1 - 2 = 1 more */
    expect_i64_input(g, uq, 1, 1, axes);
    cr_assert_eq(add->in[1], uq->out[0]);
    cr_assert_eq(g->v[uq->out[0]].producer, (int)(uq - g->n));
    const RlxNode *mul = node(g, "mul");
    cr_assert_str_eq(g->v[mul->in[1]].name, "c");
    cr_assert_eq(mul->nattr, 0);
    const RlxAttr *to = rlx_attr_get(node(g, "cast"), "to");
    cr_assert_eq(to->kind, RLX_A_DTYPE);
    cr_assert_eq(to->i, RLX_F16);
    cr_assert_eq(rlx_attr_i(node(g, "cat"), "axis", -99), 1);   /* Concat-1's default */

    /* opset 4: Concat-4 needs its axis; Reshape-1's shape attribute */
    m = make_model("o4",
        "save([h.make_node('Reshape', ['x'], ['y'], name='rs', shape=[3, -1], consumed_inputs=[0])],\n"
        "     [vi('x', [2, 3])], [vi('y', None)], opset=4)\n");
    g = read_ok(m, 0, NULL, NULL);
    const int64_t shape[] = {3, -1};
    expect_i64_input(g, node(g, "rs"), 1, 2, shape);
    cr_assert_eq(node(g, "rs")->nattr, 1);   /* allowzero's default */

    /* opset 5: Pad-2 (pads), Tile-1 (tiles 3 along axis 1 of a rank-3 input),
     * Selu-1's defaults, BatchNormalization-1 and Dropout-1 in test mode,
     * Upsample-1 -> Resize with scales [1, 1, h, w] */
    m = make_model("o5",
        "t = nh.from_array(np.array(3, np.float32), 't')\n"
        "ax = nh.from_array(np.array(1, np.float32), 'ax')\n"
        "bn = [nh.from_array(np.ones(3, np.float32), n) for n in ['s', 'b', 'm', 'v']]\n"
        "save([h.make_node('Pad', ['x'], ['p'], name='pad', paddings=[0, 1, 0, 0, 2, 0])],\n"
        "     [vi('x', [2, 3, 4])], [vi('p', None)], opset=1)\n"
        "onnx.save(onnx.load(sys.argv[1]), sys.argv[1] + '.pad')\n"
        "save([h.make_node('Tile', ['x', 't', 'ax'], ['ti'], name='tile'),\n"
        "      h.make_node('Selu', ['ti'], ['se'], name='selu', gamma=2.0),\n"
        "      h.make_node('BatchNormalization', ['q', 's', 'b', 'm', 'v'], ['n'], name='bn', is_test=1,\n"
        "                  consumed_inputs=[0, 0, 0, 1, 1]),\n"
        "      h.make_node('Dropout', ['n'], ['d'], name='drop', is_test=1),\n"
        "      h.make_node('Upsample', ['d'], ['up'], name='up', height_scale=2.0, width_scale=3.0, mode='bilinear')],\n"
        "     [vi('x', [2, 3, 4]), vi('q', [1, 3, 2, 2])], [vi('se', None), vi('up', None)], [t, ax] + bn, opset=5)\n");
    g = read_ok(rlx_fmt("%s.pad", m), 0, NULL, NULL);
    const RlxNode *pad = node(g, "pad");
    const int64_t pads[] = {0, 1, 0, 0, 2, 0};
    expect_i64_input(g, pad, 1, 6, pads);
    g = read_ok(m, 0, NULL, NULL);
    const int64_t repeats[] = {1, 3, 1};
    const RlxNode *tile = node(g, "tile");
    cr_assert_eq(tile->nin, 2);
    expect_i64_input(g, tile, 1, 3, repeats);
    const RlxNode *selu = node(g, "selu");
    cr_assert_float_eq(rlx_attr_f(selu, "alpha", 0), 1.6732, 1e-6);   /* not Selu-6's 1.67326 */
    cr_assert_float_eq(rlx_attr_f(selu, "gamma", 0), 2.0, 1e-7);
    cr_assert_null(rlx_attr_get(node(g, "bn"), "is_test"));
    cr_assert_null(rlx_attr_get(node(g, "bn"), "consumed_inputs"));
    cr_assert_eq(node(g, "drop")->op, RLX_OP_IDENTITY);
    const RlxNode *up = node(g, "up");
    cr_assert_eq(up->op, RLX_OP_RESIZE);
    cr_assert_str_eq(rlx_attr_s(up, "mode", "?"), "linear");
    const RlxValue *sc = &g->v[up->in[2]];
    cr_assert_eq(sc->dims[0], 4);
    const double scales[] = {1, 1, 2, 3};
    for (int k = 0; k < 4; k++) cr_assert_eq(rlx_weight_f64(sc, k), scales[k]);

    /* IR version 2 had no opset_import: opset 1 (Relu-1 takes consumed_inputs) */
    m = make_model("ir2",
        "save([h.make_node('Relu', ['x'], ['y'], name='r', consumed_inputs=[0])], [vi('x', [2])], [vi('y', None)])\n"
        "mo = onnx.load(sys.argv[1]); mo.ir_version = 2; del mo.opset_import[:]; onnx.save(mo, sys.argv[1])\n");
    cr_assert_eq(node(read_ok(m, 0, NULL, NULL), "r")->nattr, 0);
    m = make_model("ir3",
        "save([h.make_node('Relu', ['x'], ['y'])], [vi('x', [2])], [vi('y', None)])\n"
        "mo = onnx.load(sys.argv[1]); mo.ir_version = 3; del mo.opset_import[:]; onnx.save(mo, sys.argv[1])\n");
    read_fails(m, 0, NULL, NULL, "the model imports no opset of the default domain (ai.onnx); rlxc reads opsets 1 to 17");
}

Test(onnx, old_opset_errors) {
    static const struct {
        const char *body, *expect;
    } cases[] = {
        {"save([h.make_node('Relu', ['x'], ['y'])], [vi('x', [2])], [vi('y', None)], opset=0)\n",
         "opset 0 of the default domain (ai.onnx) is not supported; rlxc reads opsets 1 to 17"},
        {"save([h.make_node('Where', ['c', 'x', 'x'], ['y'], name='w')], [vi('c', [2], T.BOOL), vi('x', [2])],\n"
         "     [vi('y', None)], opset=8)\n",
         "node 'w' (Where): Where does not exist in opset 8 (ONNX added it in opset 9)"},
        /* A's rank is unknown at import (the output of Neg-6 only after inference) */
        {"save([h.make_node('MatMul', ['x', 'x'], ['a']),\n"
         "      h.make_node('Add', ['a', 'x'], ['y'], name='add', broadcast=1, axis=0)],\n"
         "     [vi('x', [2, 2])], [vi('y', None)], opset=6)\n",
         "node 'add' (Add): Add-6: broadcast=1 with axis=0 needs the ranks of A ('a') and B ('x') at import"},
        {"save([h.make_node('Sub', ['x', 'z'], ['y'], name='s', broadcast=1, axis=2)], [vi('x', [2, 3]), vi('z', [3])],\n"
         "     [vi('y', None)], opset=6)\n",
         "node 's' (Sub): Sub-6: broadcast axis=2 is out of range for A of rank 2 and B of rank 1"},
        {"save([h.make_node('Div', ['x', 'z'], ['y'], name='d')], [vi('x', [2, 3]), vi('z', [3])], [vi('y', None)],\n"
         "     opset=1)\n",
         "node 'd' (Div): Div-1 without broadcast=1 needs inputs of equal shapes, got [2,3] and [3]"},
        {"bn = [nh.from_array(np.ones(3, np.float32), n) for n in ['s', 'b', 'm', 'v']]\n"
         "save([h.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y'], name='bn', is_test=0)],\n"
         "     [vi('x', [1, 3, 2])], [vi('y', None)], bn, opset=6)\n",
         "node 'bn' (BatchNormalization): BatchNormalization-6: is_test=0 (training mode) is not supported"},
        {"save([h.make_node('Split', ['x'], ['a', 'b'], name='sp')], [vi('x', [4])], [vi('a', None), vi('b', None)],\n"
         "     opset=1)\n",
         "node 'sp' (Split): Split-1 needs the attribute 'axis'"},
        {"sl = nh.from_array(np.ones(3, np.float32), 'sl')\n"
         "save([h.make_node('PRelu', ['x', 'sl'], ['y'], name='pr')], [vi('x', [1, 3, 2, 3])], [vi('y', None)], [sl],\n"
         "     opset=6)\n",
         "node 'pr' (PRelu): PRelu-6: a 1-D slope on an input of rank 4 is ambiguous before PRelu-7"},
        {"save([h.make_node('GlobalLpPool', ['x'], ['y'], name='lp', p=2.5)], [vi('x', [1, 3, 2])], [vi('y', None)],\n"
         "     opset=1)\n",
         "node 'lp' (GlobalLpPool): GlobalLpPool-1: p=2.5 is not supported"},
        {"save([h.make_node('AveragePool', ['x'], ['y'], name='ap', kernel_shape=[2], count_include_pad=1)],\n"
         "     [vi('x', [1, 3, 4])], [vi('y', None)], opset=6)\n",
         "node 'ap' (AveragePool): AveragePool-1 has no attribute 'count_include_pad'"},
        {"save([h.make_node('Cast', ['x'], ['y'], name='c', to='COMPLEX64')], [vi('x', [2])], [vi('y', None)], opset=5)\n",
         "node 'c' (Cast): Cast-1: attribute 'to': type 'COMPLEX64' is not supported"},
        {"t = nh.from_array(np.array(2, np.float32), 't')\n"
         "save([h.make_node('Tile', ['x', 't', 'a'], ['y'], name='ti')], [vi('x', [2, 3]), vi('a', [])], [vi('y', None)],\n"
         "     [t], opset=5)\n",
         "node 'ti' (Tile): Tile-1: input 'axis' must be a constant (weight) holding one value"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *m = make_model(rlx_fmt("e%d", (int)k), cases[k].body);
        read_fails(m, 0, NULL, NULL, cases[k].expect);
    }
}

/* The importer's op_introduced and old_versions tables (lib/frontend/onnx.c)
 * against ONNX's schema history: every op rlxc reads (ops.def, plus Dropout,
 * Upsample, Scatter) that ONNX added after opset 1 is listed with its first
 * since_version; every version in force before opset 7 that is not the
 * op's version at opset 7 has a row spanning exactly to the next version;
 * and the flags that name an attribute match the version's attributes. */
Test(onnx, version_tables_match_onnx) {
    const char *root = rlx_strndup(__FILE__, strlen(__FILE__) - strlen("tests/unit/test_onnx.c"));
    const char *script = rlx_fmt("%s/check_tables.py", tmpdir);
    FILE *f = fopen(script, "w");
    cr_assert_not_null(f);
    fputs(
        "import re, sys\n"
        "from collections import defaultdict\n"
        "import onnx.defs as d\n"
        "src = open(sys.argv[1]).read()\n"
        "names = set(re.findall(r'^X\\(\\w+,\\s*\"(\\w+)\"', open(sys.argv[2]).read(), re.M)) | {'Dropout', 'Upsample', 'Scatter'}\n"
        "intro = dict((o, int(v)) for o, v in re.findall(r'\\{\"(\\w+)\", (\\d+)\\}', src.split('op_introduced[] = {')[1].split('};')[0]))\n"
        "rows = re.findall(r'\\{\"(\\w+)\", (\\d+), (\\d+), ([A-Z_0-9 |]+)\\}', src.split('old_versions[] = {')[1].split('};')[0])\n"
        "hist = defaultdict(dict)\n"
        "for s in d.get_all_schemas_with_history():\n"
        "    if s.domain in ('', 'ai.onnx'): hist[s.name][s.since_version] = s\n"
        "bad = []\n"
        "want = {o: min(hist[o]) for o in names if o in hist and min(hist[o]) > 1}\n"
        "for o in names - set(hist): want[o] = intro[o] if intro.get(o, 0) > 17 else -1  # newer than python3-onnx\n"
        "if want != intro: bad.append('op_introduced differs: %s' % sorted(set(want.items()) ^ set(intro.items())))\n"
        "expect = set()\n"
        "for o in names & set(hist):\n"
        "    vs = sorted(hist[o])\n"
        "    if vs[0] >= 7: continue\n"
        "    at7 = max(v for v in vs if v <= 7)\n"
        "    expect |= {(o, v, vs[k + 1]) for k, v in enumerate(vs) if v < at7}\n"
        "got = set((o, int(v), int(n)) for o, v, n, _ in rows)\n"
        "if got != expect: bad.append('old_versions: missing %s, extra %s' % (sorted(expect - got), sorted(got - expect)))\n"
        "named = {'OV_CONSUMED_INPUTS': 'consumed_inputs', 'OV_IS_TEST': 'is_test', 'OV_OUTPUT_SEQUENCE': 'output_sequence',\n"
        "         'OV_PAD_PADDINGS': 'paddings', 'OV_RESHAPE_ATTR': 'shape', 'OV_UPSAMPLE_1': 'height_scale'}\n"
        "for o, v, n, fl in rows:\n"
        "    s = hist[o].get(int(v))\n"
        "    if s is None: continue\n"
        "    flags, attrs = set(f.strip() for f in fl.split('|')), s.attributes\n"
        "    for f, a in named.items():\n"
        "        if (f in flags) != (a in attrs): bad.append('%s-%s: %s, attribute %s' % (o, v, f, a))\n"
        "    if ('OV_BROADCAST' in flags) != ('broadcast' in attrs and 'axis' in attrs): bad.append('%s-%s: OV_BROADCAST' % (o, v))\n"
        "    if ('OV_GEMM_BROADCAST' in flags) != ('broadcast' in attrs and 'axis' not in attrs): bad.append('%s-%s: OV_GEMM_BROADCAST' % (o, v))\n"
        "    pf = 'p' in attrs and attrs['p'].type == d.OpSchema.AttrType.FLOAT\n"
        "    if ('OV_P_FLOAT' in flags) != pf: bad.append('%s-%s: OV_P_FLOAT' % (o, v))\n"
        "print('; '.join(bad))\n"
        "sys.exit(1 if bad else 0)\n",
        f);
    fclose(f);
    const char *out = rlx_fmt("%s/check.out", tmpdir);
    int st = system(rlx_fmt("/usr/bin/python3 '%s' '%slib/frontend/onnx.c' '%slib/ops.def' > '%s' 2>&1", script, root, root, out));
    size_t len = 0;
    const char *text = st ? (const char *)rlx_read_file(out, &len) : "";
    cr_assert_eq(st, 0, "the version tables differ from ONNX's schemas: %.*s", (int)len, text);
}
