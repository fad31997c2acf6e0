/* test_rlxg.c - the .rlxg reader and writer (lib/frontend/rlxg.c).
 *
 * Each test writes its input files into a fresh temporary directory, reads
 * them with rlx_read_rlxg and checks the graph against values worked out by
 * hand (f16/bf16 bit patterns from the IEEE formats). Error cases run the
 * reader under rlx_try and check the one-line message.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rlx.h"

static char tmpdir[64];

static void setup(void) {
    strcpy(tmpdir, "/tmp/test_rlxg_XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
    rlx_diag.jmp = NULL;
    rlx_arena_free_all();
}

TestSuite(rlxg, .init = setup, .fini = teardown);

static const char *write_bytes(const char *name, const void *data, size_t len) {
    const char *path = rlx_fmt("%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    if (len) cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    return path;
}

static const char *write_text(const char *name, const char *text) { return write_bytes(name, text, strlen(text)); }

/* A container: 16-byte fixed header, JSON, zero padding to 64, data. */
static const char *write_container(const char *name, uint32_t version, const char *json, const void *data, size_t dlen) {
    RlxBuf b = {0};
    size_t hl = strlen(json);
    uint8_t fixed[16] = {'R', 'L', 'X', 'G'};
    for (int i = 0; i < 4; i++) fixed[4 + i] = (uint8_t)(version >> (8 * i));
    for (int i = 0; i < 8; i++) fixed[8 + i] = (uint8_t)((uint64_t)hl >> (8 * i));
    rlx_buf_put(&b, fixed, 16);
    rlx_buf_put(&b, json, hl);
    while (b.len % 64) rlx_buf_put(&b, "", 1);
    if (dlen) rlx_buf_put(&b, data, dlen);
    return write_bytes(name, b.data, b.len);
}

static int reads_with_error(const char *path, const char *expect) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_expect(strstr(rlx_diag.msg, expect) != NULL, "message '%s' lacks '%s'", rlx_diag.msg, expect);
        cr_expect(strstr(rlx_diag.msg, path) == rlx_diag.msg, "message '%s' does not start with the file", rlx_diag.msg);
        cr_expect(strchr(rlx_diag.msg, '\n') == NULL);
        return 1;
    }
    rlx_read_rlxg(path);
    rlx_diag.jmp = NULL;
    cr_expect_fail("'%s' was accepted; expected an error containing '%s'", path, expect);
    return 0;
}

/* Reads a JSON graph given as text and expects the error. */
static void json_error(const char *json, const char *expect) {
    reads_with_error(write_text("bad.rlxg", json), expect);
}

static RlxGraph *read_ok(const char *path) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_assert_fail("unexpected error: %s", rlx_diag.msg);
    }
    RlxGraph *g = rlx_read_rlxg(path);
    rlx_diag.jmp = NULL;
    return g;
}

static float f32_at(const RlxValue *v, int i) {
    float f;
    memcpy(&f, v->data + 4 * i, 4);
    return f;
}

static const char *MLP =
    "{\"rlxg\": 1, \"name\": \"mlp\",\n"
    " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [1, 2]}],\n"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [1, 2]}],\n"
    " \"weights\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [2, 2], \"data\": [1, 2.5, \"nan\", \"-inf\"]},\n"
    "             {\"name\": \"b\", \"dtype\": \"f32\", \"shape\": [2], \"data\": [0.5, -1]}],\n"
    " \"nodes\": [{\"name\": \"act\", \"op\": \"LeakyRelu\", \"inputs\": [\"h\"], \"outputs\": [\"y\"], \"attrs\": {\"alpha\": 0.2}},\n"
    "           {\"name\": \"fc\", \"op\": \"Gemm\", \"inputs\": [\"x\", \"w\", \"b\"], \"outputs\": [\"h\"],\n"
    "            \"attrs\": {\"transB\": 1}}]}\n";

Test(rlxg, reads_pure_json) {
    RlxGraph *g = read_ok(write_text("mlp.rlxg", MLP));
    cr_assert_str_eq(g->name, "mlp");
    cr_assert_eq(g->ninputs, 1);
    cr_assert_eq(g->noutputs, 1);
    const RlxValue *x = &g->v[g->inputs[0]];
    cr_assert_str_eq(x->name, "x");
    cr_assert(x->flags & RLX_V_INPUT);
    cr_assert_eq(x->rank, 2);
    cr_assert_eq(x->dims[0], 1);
    cr_assert_eq(x->dims[1], 2);
    int w = rlx_value_find(g, "w");
    cr_assert(w >= 0 && (g->v[w].flags & RLX_V_WEIGHT) && rlx_is_const(g, w));
    cr_assert_eq(f32_at(&g->v[w], 0), 1.0f);
    cr_assert_eq(f32_at(&g->v[w], 1), 2.5f);
    cr_assert(isnan(f32_at(&g->v[w], 2)));
    cr_assert(isinf(f32_at(&g->v[w], 3)) && f32_at(&g->v[w], 3) < 0);
    /* nodes in any order: act consumes h, produced by fc listed later */
    cr_assert_eq(g->nn, 2);
    const RlxNode *act = &g->n[0], *fc = &g->n[1];
    cr_assert_eq(act->op, RLX_OP_LEAKYRELU);
    cr_assert_eq(fc->op, RLX_OP_GEMM);
    cr_assert_eq(act->in[0], fc->out[0]);
    cr_assert_eq(g->v[fc->out[0]].producer, 1);
    cr_assert_eq(g->outputs[0], act->out[0]);
    cr_assert(g->v[g->outputs[0]].flags & RLX_V_OUTPUT);
    cr_assert_eq(fc->in[0], g->inputs[0]);
    cr_assert_eq(fc->in[1], w);
    cr_assert_float_eq(rlx_attr_f(act, "alpha", 0), 0.2, 1e-12);
    cr_assert_eq(rlx_attr_i(fc, "transB", -1), 1);
    cr_assert_eq(rlx_attr_i(fc, "transA", -1), 0);               /* default filled */
    cr_assert_float_eq(rlx_attr_f(fc, "beta", 0), 1.0, 1e-12);
    cr_assert_not_null(g->output_decl);
    cr_assert_eq(g->output_decl[0].dtype, RLX_F32);
    cr_assert_eq(g->output_decl[0].rank, 2);
    cr_assert_eq(g->output_decl[0].dims[1], 2);
}

Test(rlxg, attribute_kinds_and_defaults) {
    const char *json =
        "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2, 3]}],\n"
        " \"outputs\": [{\"name\": \"t\"}, {\"name\": \"c\"}, {\"name\": \"e\"}, {\"name\": \"k\"}, {\"name\": \"p\"}, {\"name\": \"f\"}, {\"name\": \"lr\"}],\n"
        " \"weights\": [{\"name\": \"pads\", \"dtype\": \"i64\", \"shape\": [4], \"data\": [0, 1, 0, 1]}],\n"
        " \"nodes\": [\n"
        "  {\"name\": \"tr\", \"op\": \"Transpose\", \"inputs\": [\"x\"], \"outputs\": [\"t\"], \"attrs\": {\"perm\": [1, 0]}},\n"
        "  {\"name\": \"cast\", \"op\": \"Cast\", \"inputs\": [\"x\"], \"outputs\": [\"c\"], \"attrs\": {\"to\": \"f16\"}},\n"
        "  {\"name\": \"elu\", \"op\": \"Elu\", \"inputs\": [\"x\"], \"outputs\": [\"e\"]},\n"
        "  {\"name\": \"k0\", \"op\": \"Constant\", \"inputs\": [], \"outputs\": [\"k\"],\n"
        "   \"attrs\": {\"value\": {\"dtype\": \"i32\", \"shape\": [3], \"data\": [7, -8, 9]}}},\n"
        "  {\"name\": \"pad\", \"op\": \"Pad\", \"inputs\": [\"x\", \"pads\", \"\"], \"outputs\": [\"p\"]},\n"
        "  {\"name\": \"cf\", \"op\": \"Constant\", \"inputs\": [], \"outputs\": [\"f\"], \"attrs\": {\"value_floats\": [1, 2.5]}},\n"
        "  {\"name\": \"lr\", \"op\": \"LeakyRelu\", \"inputs\": [\"x\"], \"outputs\": [\"lr\"], \"attrs\": {\"alpha\": 1}}]}\n";
    RlxGraph *g = read_ok(write_text("attrs.rlxg", json));
    cr_assert_str_eq(g->name, "model");
    const RlxAttr *a = rlx_attr_get(&g->n[0], "perm");
    cr_assert(a && a->kind == RLX_A_INTS && a->n == 2 && a->ints[0] == 1 && a->ints[1] == 0);
    a = rlx_attr_get(&g->n[1], "to");
    cr_assert(a && a->kind == RLX_A_DTYPE && a->i == RLX_F16);
    a = rlx_attr_get(&g->n[2], "alpha");
    cr_assert(a && a->kind == RLX_A_FLOAT && a->f == 1.0);
    a = rlx_attr_get(&g->n[3], "value");
    cr_assert(a && a->kind == RLX_A_TENSOR && a->tensor >= 0);
    const RlxValue *t = &g->v[a->tensor];
    cr_assert(t->flags & RLX_V_WEIGHT);
    cr_assert_eq(t->dtype, RLX_I32);
    cr_assert_eq(t->rank, 1);
    cr_assert_eq(rlx_weight_i64(t, 0), 7);
    cr_assert_eq(rlx_weight_i64(t, 1), -8);
    cr_assert_eq(rlx_weight_i64(t, 2), 9);
    cr_assert_str_eq(rlx_attr_s(&g->n[4], "mode", NULL), "constant");
    cr_assert_eq(g->n[4].nin, 3);
    cr_assert_eq(g->n[4].in[2], -1);           /* absent optional input */
    a = rlx_attr_get(&g->n[5], "value_floats");  /* [1, 2.5]: FLOATS */
    cr_assert(a && a->kind == RLX_A_FLOATS && a->n == 2 && a->floats[0] == 1.0 && a->floats[1] == 2.5);
    a = rlx_attr_get(&g->n[6], "alpha");       /* an integer where a float is expected */
    cr_assert(a && a->kind == RLX_A_FLOAT && a->f == 1.0);
    cr_assert_eq(g->output_decl[0].dtype, -1);
    cr_assert_eq(g->output_decl[0].rank, -1);
}

Test(rlxg, inline_data_of_every_dtype) {
    const char *json =
        "{\"outputs\": [{\"name\": \"h\"}],\n"
        " \"weights\": [\n"
        "  {\"name\": \"h\", \"dtype\": \"f16\", \"shape\": [4], \"data\": [1.5, 65504, \"inf\", -2]},\n"
        "  {\"name\": \"bf\", \"dtype\": \"bf16\", \"shape\": [2], \"data\": [1, -2]},\n"
        "  {\"name\": \"d\", \"dtype\": \"f64\", \"shape\": [], \"data\": [0.1]},\n"
        "  {\"name\": \"i\", \"dtype\": \"i64\", \"shape\": [3], \"data\": [\"9223372036854775807\", -5, \"-9223372036854775808\"]},\n"
        "  {\"name\": \"u\", \"dtype\": \"u64\", \"shape\": [1], \"data\": [\"18446744073709551615\"]},\n"
        "  {\"name\": \"b\", \"dtype\": \"bool\", \"shape\": [4], \"data\": [true, 0, 1, false]},\n"
        "  {\"name\": \"u8\", \"dtype\": \"u8\", \"shape\": [2], \"data\": [255, 0]},\n"
        "  {\"name\": \"i8\", \"dtype\": \"i8\", \"shape\": [1], \"data\": [-128]},\n"
        "  {\"name\": \"e\", \"dtype\": \"f32\", \"shape\": [0, 3], \"data\": []}]}\n";
    RlxGraph *g = read_ok(write_text("dt.rlxg", json));
    uint16_t h[4], bf[2];
    memcpy(h, g->v[rlx_value_find(g, "h")].data, 8);
    cr_assert_eq(h[0], 0x3E00);
    cr_assert_eq(h[1], 0x7BFF);
    cr_assert_eq(h[2], 0x7C00);
    cr_assert_eq(h[3], 0xC000);
    memcpy(bf, g->v[rlx_value_find(g, "bf")].data, 4);
    cr_assert_eq(bf[0], 0x3F80);
    cr_assert_eq(bf[1], 0xC000);
    const RlxValue *d = &g->v[rlx_value_find(g, "d")];
    cr_assert_eq(d->rank, 0);
    cr_assert_eq(rlx_weight_f64(d, 0), 0.1);
    const RlxValue *i = &g->v[rlx_value_find(g, "i")];
    cr_assert_eq(rlx_weight_i64(i, 0), INT64_MAX);
    cr_assert_eq(rlx_weight_i64(i, 1), -5);
    cr_assert_eq(rlx_weight_i64(i, 2), INT64_MIN);
    uint64_t u;
    memcpy(&u, g->v[rlx_value_find(g, "u")].data, 8);
    cr_assert_eq(u, UINT64_MAX);
    const uint8_t *b = g->v[rlx_value_find(g, "b")].data;
    cr_assert(b[0] == 1 && b[1] == 0 && b[2] == 1 && b[3] == 0);
    cr_assert_eq(rlx_weight_i64(&g->v[rlx_value_find(g, "u8")], 0), 255);
    cr_assert_eq(rlx_weight_i64(&g->v[rlx_value_find(g, "i8")], 0), -128);
    cr_assert(rlx_is_const(g, rlx_value_find(g, "e")));   /* empty, but still has data */
}

Test(rlxg, reads_container) {
    const char *json =
        "{\"rlxg\": 1, \"name\": \"c\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2]}],"
        " \"outputs\": [{\"name\": \"y\"}],"
        " \"weights\": [{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [2], \"offset\": 64, \"length\": 8},"
        "  {\"name\": \"k\", \"dtype\": \"i16\", \"shape\": [2], \"offset\": 0, \"length\": 4}],"
        " \"nodes\": [{\"name\": \"add\", \"op\": \"Add\", \"inputs\": [\"x\", \"a\"], \"outputs\": [\"y\"]}]}";
    uint8_t data[72] = {0};
    float a[2] = {3.0f, -0.25f};
    int16_t k[2] = {-3, 300};
    memcpy(data + 64, a, 8);
    memcpy(data, k, 4);
    RlxGraph *g = read_ok(write_container("c.rlxg", 1, json, data, sizeof data));
    cr_assert_str_eq(g->name, "c");
    const RlxValue *va = &g->v[rlx_value_find(g, "a")];
    cr_assert_eq(f32_at(va, 0), 3.0f);
    cr_assert_eq(f32_at(va, 1), -0.25f);
    const RlxValue *vk = &g->v[rlx_value_find(g, "k")];
    cr_assert_eq(rlx_weight_i64(vk, 0), -3);
    cr_assert_eq(rlx_weight_i64(vk, 1), 300);
    cr_assert_eq(va->data - vk->data, 64);    /* offsets are relative to the data section */
}

static void check_same_graph(const RlxGraph *a, const RlxGraph *b) {
    cr_assert_str_eq(a->name, b->name);
    cr_assert_eq(a->ninputs, b->ninputs);
    cr_assert_eq(a->noutputs, b->noutputs);
    cr_assert_eq(a->nn, b->nn);
    for (int i = 0; i < a->nv; i++) {
        const RlxValue *va = &a->v[i];
        int j = rlx_value_find(b, va->name);
        cr_assert(j >= 0, "value '%s' lost", va->name);
        const RlxValue *vb = &b->v[j];
        cr_assert_eq(va->flags, vb->flags, "flags of '%s'", va->name);
        if (va->rank < 0) continue;
        cr_assert_eq(va->dtype, vb->dtype);
        cr_assert_eq(va->rank, vb->rank);
        for (int k = 0; k < va->rank; k++) cr_assert_eq(va->dims[k], vb->dims[k]);
        if (va->data) cr_assert_eq(memcmp(va->data, vb->data, (size_t)rlx_value_bytes(va)), 0, "data of '%s'", va->name);
    }
    for (int i = 0; i < a->nn; i++) {
        const RlxNode *na = &a->n[i], *nb = &b->n[i];
        cr_assert_str_eq(na->name, nb->name);
        cr_assert_eq(na->op, nb->op);
        cr_assert_eq(na->nin, nb->nin);
        for (int k = 0; k < na->nin; k++)
            cr_assert_str_eq(na->in[k] < 0 ? "" : a->v[na->in[k]].name, nb->in[k] < 0 ? "" : b->v[nb->in[k]].name);
        cr_assert_eq(na->nattr, nb->nattr);
        for (int k = 0; k < na->nattr; k++) {
            const RlxAttr *x = &na->attr[k], *y = rlx_attr_get(nb, x->name);
            cr_assert_not_null(y);
            cr_assert_eq(x->kind, y->kind, "kind of %s", x->name);
            cr_assert_eq(x->i, y->i);
            cr_assert(x->f == y->f || (x->f != x->f && y->f != y->f));
            cr_assert_eq(x->n, y->n);
            for (int m = 0; m < x->n; m++) {
                if (x->kind == RLX_A_INTS) cr_assert_eq(x->ints[m], y->ints[m]);
                else cr_assert_eq(x->floats[m], y->floats[m]);
            }
        }
    }
}

static const char *ROUND =
    "{\"name\": \"rt\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2, 3]}],\n"
    " \"outputs\": [{\"name\": \"y\", \"dtype\": \"f16\"}, {\"name\": \"k\"}],\n"
    " \"weights\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [3], \"data\": [0.1, \"nan\", 1e-40]},\n"
    "             {\"name\": \"big\", \"dtype\": \"i64\", \"shape\": [2], \"data\": [\"-9007199254740993\", 3]},\n"
    "             {\"name\": \"unused\", \"dtype\": \"f32\", \"shape\": [1], \"data\": [1]}],\n"
    " \"nodes\": [{\"name\": \"m\", \"op\": \"Mul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"p\"]},\n"
    "  {\"name\": \"s\", \"op\": \"HardSigmoid\", \"inputs\": [\"p\"], \"outputs\": [\"q\"], \"attrs\": {\"alpha\": 0.3333333333333333}},\n"
    "  {\"name\": \"c\", \"op\": \"Cast\", \"inputs\": [\"q\"], \"outputs\": [\"y\"], \"attrs\": {\"to\": \"f16\"}},\n"
    "  {\"name\": \"k0\", \"op\": \"Constant\", \"inputs\": [], \"outputs\": [\"k\"],\n"
    "   \"attrs\": {\"value\": {\"dtype\": \"bf16\", \"shape\": [2], \"data\": [1.5, \"-inf\"]}}},\n"
    "  {\"name\": \"g\", \"op\": \"Gather\", \"inputs\": [\"x\", \"big\"], \"outputs\": [\"gg\"], \"attrs\": {\"axis\": 1}},\n"
    "  {\"name\": \"cl\", \"op\": \"Clip\", \"inputs\": [\"x\", \"\", \"w\"], \"outputs\": [\"cc\"]}]}\n";

Test(rlxg, container_round_trip) {
    RlxGraph *g = read_ok(write_text("rt.rlxg", ROUND));
    RlxBuf out = {0};
    rlx_write_rlxg(g, &out);
    cr_assert(out.len >= 16);
    cr_assert_eq(memcmp(out.data, "RLXG", 4), 0);
    cr_assert_eq(out.data[4], 1);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = hl << 8 | (uint8_t)out.data[8 + i];
    size_t data_off = (size_t)((16 + hl + 63) / 64 * 64);
    cr_assert(data_off <= out.len);
    RlxGraph *h = read_ok(write_bytes("rt2.rlxg", out.data, out.len));
    /* the unused weight is dropped; everything else survives */
    cr_assert_eq(rlx_value_find(h, "unused"), -1);
    check_same_graph(h, g);   /* every value of h, looked up in g */
    const RlxValue *w = &h->v[rlx_value_find(h, "w")];
    const RlxValue *big = &h->v[rlx_value_find(h, "big")];
    cr_assert_eq((w->data - big->data) % 64, 0);   /* both in the data section, 64-aligned */
    cr_assert_eq(rlx_weight_i64(big, 0), -9007199254740993LL);
    cr_assert_eq(h->output_decl[0].dtype, RLX_F16);
    cr_assert_eq(h->output_decl[0].rank, -1);
}

Test(rlxg, dump_round_trip) {
    RlxGraph *g = read_ok(write_text("rt.rlxg", ROUND));
    const char *path = rlx_fmt("%s/dump.rlxg", tmpdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    rlx_graph_dump(g, f);
    fclose(f);
    RlxGraph *h = read_ok(path);
    cr_assert_eq(h->nn, g->nn);
    check_same_graph(h, g);
    float third = (float)rlx_weight_f64(&h->v[rlx_value_find(h, "w")], 2);
    cr_assert_eq(third, 1e-40f);   /* a subnormal survives the shortest printing */
}

Test(rlxg, writer_skips_dead_nodes) {
    RlxGraph *g = read_ok(write_text("mlp.rlxg", MLP));
    /* make act dead and the graph output h */
    g->n[0].dead = 1;
    int h = rlx_value_find(g, "h");
    g->v[g->outputs[0]].flags &= ~RLX_V_OUTPUT;
    g->outputs[0] = h;
    g->v[h].flags |= RLX_V_OUTPUT;
    g->output_decl = NULL;
    RlxBuf out = {0};
    rlx_write_rlxg(g, &out);
    RlxGraph *r = read_ok(write_bytes("dead.rlxg", out.data, out.len));
    cr_assert_eq(r->nn, 1);
    cr_assert_str_eq(r->n[0].name, "fc");
    cr_assert_eq(rlx_value_find(r, "y"), -1);
}

/* ---- errors ---- */

Test(rlxg, file_errors) {
    reads_with_error(rlx_fmt("%s/missing.rlxg", tmpdir), "cannot open: No such file or directory");
    reads_with_error(tmpdir, "is a directory");
    reads_with_error(write_bytes("empty.rlxg", "", 0), "empty file");
    reads_with_error(write_bytes("short.rlxg", "RLXG\1\0\0", 7), "truncated header");
    reads_with_error(write_bytes("rl.rlxg", "RL", 2), "truncated header");
    reads_with_error(write_bytes("magic.rlxg", "RLXQ\1\0\0\0\0\0\0\0\0\0\0\0", 16), "bad magic");
    reads_with_error(write_container("v2.rlxg", 2, "{}", NULL, 0), "unsupported .rlxg version 2");
    uint8_t hdr[20] = {'R', 'L', 'X', 'G', 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}'};
    reads_with_error(write_bytes("hlen.rlxg", hdr, sizeof hdr), "header length 18446744073709551615 runs past the end");
    hdr[8] = 2;
    for (int i = 9; i < 16; i++) hdr[i] = 0;
    reads_with_error(write_bytes("pad.rlxg", hdr, sizeof hdr), "padding runs past the end");
}

Test(rlxg, json_errors) {
    json_error("{\"outputs\": [\n  {\"name\" 1}]}", "invalid JSON at line 2, column 11");
    json_error("{\"outputs\": []} x", "unexpected text after");
    json_error("  [1, 2]", "bad magic");
    json_error("{\"outputs\": [{\"name\": \"x\"}], \"nodes\": 3}", "field 'nodes' must be an array, not a number");
    json_error("{\"inputs\": []}", "missing field 'outputs'");
    json_error("{\"outputs\": []}", "the graph has no outputs");
    json_error("{\"rlxg\": 2, \"outputs\": []}", "unsupported rlxg version 2");
    json_error("{\"outputs\": [], \"nodez\": []}", "unknown field 'nodez'");
    json_error("{\"outputs\": [], \"outputs\": []}", "duplicate field 'outputs'");
    json_error("{\"name\": \"my-model\", \"outputs\": []}", "model name 'my-model' is not a valid C identifier");
    json_error("{\"name\": 7, \"outputs\": []}", "field 'name' must be a string");
}

#define X1 "\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2]}]"

Test(rlxg, value_errors) {
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"w\", \"dtype\": \"f33\", \"shape\": [], \"data\": [1]}]}",
               "weight 'w': unknown dtype 'f33'");
    json_error("{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2, -3]}], \"outputs\": [{\"name\": \"x\"}]}",
               "input 'x': negative dimension -3");
    json_error("{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4294967296, 4294967296]}], \"outputs\": [{\"name\": \"x\"}]}",
               "byte size overflows 64 bits");
    json_error("{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [1,1,1,1,1,1,1,1,1]}], \"outputs\": [{\"name\": \"x\"}]}",
               "rank 9 exceeds the maximum of 8");
    json_error("{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2.5]}], \"outputs\": [{\"name\": \"x\"}]}",
               "shape[0] must be an integer");
    json_error("{\"inputs\": [{\"name\": 3, \"dtype\": \"f32\", \"shape\": [2]}], \"outputs\": [{\"name\": \"x\"}]}",
               "inputs[0]: field 'name' must be a string, not a number");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [], \"data\": [1]}]}",
               "duplicate value name 'x'");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [2], \"data\": [1, 2, 3]}]}",
               "weight 'w': data has 3 values, shape [2] needs 2");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"w\", \"dtype\": \"u8\", \"shape\": [1], \"data\": [256]}]}",
               "data[0]: 256 is out of range for u8");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"w\", \"dtype\": \"i32\", \"shape\": [1], \"data\": [1.5]}]}",
               "data[0] must be an integer");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"w\", \"dtype\": \"bool\", \"shape\": [1], \"data\": [2]}]}",
               "must be 0, 1, true or false");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [1], \"data\": [\"one\"]}]}",
               "data[0] must be a number");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}], \"weights\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [1], \"offset\": 0, \"length\": 4}]}",
               "need the container form");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"z\"}]}", "graph output 'z' is not defined");
    json_error("{" X1 ", \"outputs\": [{\"name\": \"x\"}, {\"name\": \"x\"}]}", "graph output 'x' is listed twice");
}

Test(rlxg, container_weight_errors) {
    uint8_t data[16] = {0};
    const char *pre = "{\"outputs\": [{\"name\": \"a\"}], \"weights\": [";
    reads_with_error(write_container("past.rlxg", 1, rlx_fmt("%s{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [4], \"offset\": 4, \"length\": 16}]}", pre), data, 16),
                     "weight 'a': bytes [4, 20) run past the end of the data section (16 bytes)");
    reads_with_error(write_container("huge.rlxg", 1, rlx_fmt("%s{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [1], \"offset\": 9e18, \"length\": 4}]}", pre), data, 16),
                     "run past the end of the data section");
    reads_with_error(write_container("len.rlxg", 1, rlx_fmt("%s{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [2], \"offset\": 0, \"length\": 4}]}", pre), data, 16),
                     "length 4 does not match f32 [2] (8 bytes)");
    reads_with_error(write_container("ovl.rlxg", 1, rlx_fmt("%s{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [2], \"offset\": 0, \"length\": 8},"
                                                         "{\"name\": \"b\", \"dtype\": \"f32\", \"shape\": [2], \"offset\": 4, \"length\": 8}]}", pre), data, 16),
                     "weights 'a' and 'b' overlap");
    reads_with_error(write_container("neg.rlxg", 1, rlx_fmt("%s{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [1], \"offset\": -4, \"length\": 4}]}", pre), data, 16),
                     "negative offset -4");
}

#define NODE(json) "{" X1 ", \"outputs\": [{\"name\": \"y\"}], \"nodes\": [" json "]}"

Test(rlxg, node_errors) {
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Foo\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}"),
               "node 'n1' (Foo): unknown op 'Foo'");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Add\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}"),
               "node 'n1' (Add): takes 2 inputs, got 1");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\", \"z\"]}"),
               "node 'n1' (Relu): takes 1 output, got 2");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Add\", \"inputs\": [\"x\", \"nope\"], \"outputs\": [\"y\"]}"),
               "node 'n1' (Add): input 'nope' is not defined");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]},"
                    "{\"name\": \"n2\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}"),
               "node 'n2' (Relu): value 'y' is produced twice (also by node 'n1')");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]},"
                    "{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"z\"]}"),
               "duplicate node name 'n1'");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"x\"]}"),
               "output 'x' is already a graph input");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"\"], \"outputs\": [\"y\"]}"),
               "input 0 is required");
    json_error(NODE("{\"name\": 5, \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}"),
               "nodes[0]: field 'name' must be a string, not a number");
    json_error(NODE("{\"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}"), "nodes[0]: missing field 'name'");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], \"attrs\": {\"alpha\": 1}}"),
               "node 'n1' (Relu): unknown attribute 'alpha'");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"LeakyRelu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], \"attrs\": {\"alpha\": \"big\"}}"),
               "attribute 'alpha' must be of type float, not string");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Cast\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}"),
               "missing required attribute 'to'");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Cast\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], \"attrs\": {\"to\": \"f8\"}}"),
               "attribute 'to': unknown dtype 'f8'");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Transpose\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], \"attrs\": {\"perm\": [0, \"a\"]}}"),
               "attribute 'perm': element 1 must be a number, not a string");
    json_error(NODE("{\"name\": \"n1\", \"op\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], \"extra\": 1}"),
               "node 'n1' (Relu): unknown field 'extra'");
    json_error(NODE("{\"name\": \"c\", \"op\": \"Constant\", \"inputs\": [], \"outputs\": [\"y\"],"
                    " \"attrs\": {\"value\": {\"dtype\": \"f32\", \"shape\": [2], \"data\": [1]}}}"),
               "node 'c' (Constant): attribute 'value': data has 1 values");
}

/* A dimension beyond 2^53 (an empty weight's, as an ONNX file may declare
 * it) is written as a decimal string and reads back exactly; the byte-size
 * rule is the ONNX reader's (the element count), so what rlxc import takes
 * from ONNX, it reads back (the onnx fuzz target's finding). */
Test(rlxg, shape_beyond_2p53_round_trip) {
    RlxGraph *g = read_ok(write_text("big.rlxg",
        "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [2]}], \"outputs\": [{\"name\": \"y\"}],"
        " \"weights\": [{\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [\"9223372036854775806\", 0], \"data\": []}],"
        " \"nodes\": [{\"name\": \"a\", \"op\": \"Identity\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]},"
        " {\"name\": \"b\", \"op\": \"Identity\", \"inputs\": [\"w\"], \"outputs\": [\"z\"]}]}"));
    int w = rlx_value_find(g, "w");
    cr_assert_geq(w, 0);
    cr_assert_eq(g->v[w].dims[0], INT64_C(9223372036854775806));
    RlxBuf out = {0};
    rlx_write_rlxg(g, &out);
    RlxGraph *h = read_ok(write_bytes("big2.rlxg", out.data, out.len));
    int w2 = rlx_value_find(h, "w");
    if (w2 >= 0) cr_assert_eq(h->v[w2].dims[0], INT64_C(9223372036854775806));
    json_error("{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"2x\"]}], \"outputs\": [{\"name\": \"x\"}]}",
               "shape[0] must be an integer, not '2x'");
}
