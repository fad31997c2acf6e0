/* test_elt.c - the elementwise ops of the elt family: their scalar
 * definitions, and the C printer and the compile-time interpreter agreeing
 * with each other and with values derived by hand.
 *
 * The scalar tests call rlx_scalar.h directly. Each end-to-end case is one
 * small model built three ways and compiled with build/rlxc --build (run
 * from the repository root, after `make`):
 *   run     the operands are graph inputs: the ops run in generated code,
 *           fused into one loop by the fuse pass;
 *   fold    the operands are weights: every node is evaluated at compile
 *           time, one at a time, by fold.c's interpreter;
 *   region  the operands are weights and the nodes are replaced by one
 *           hand-written rlx.Region program: the interpreter runs the
 *           fused chain.
 * All three outputs must equal the expected bytes exactly. Expected values
 * are worked out in the comments (numpy semantics, as the ONNX reference).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlx.h"
#include "rlx_npy.h"
#include "rlx_scalar.h"

/* ---- scalar definitions ---- */

Test(scalar, round_half_to_even) {
    cr_assert_eq(rs_round(0.5f), 0.0f);
    cr_assert_eq(rs_round(1.5f), 2.0f);
    cr_assert_eq(rs_round(2.5f), 2.0f);
    cr_assert_eq(rs_round(-2.5f), -2.0f);
    cr_assert_eq(rs_round(-3.5f), -4.0f);
    cr_assert_eq(rs_round(2.6f), 3.0f);
    cr_assert_eq(rs_round_d(-1.4999), -1.0);
    cr_assert(signbit(rs_round(-0.4f)), "-0.4 rounds to -0 (numpy)");
    cr_assert_eq(rs_round(16777216.0f), 16777216.0f);
    cr_assert(isnan(rs_round(NAN)));
    cr_assert_eq(rs_round_d(-INFINITY), -INFINITY);
}

Test(scalar, mod_signs) {
    /* fmod=0: the divisor's sign; fmod=1: the dividend's */
    cr_assert_eq(rs_imod(-7, 3), 2);
    cr_assert_eq(rs_imod(7, -3), -2);
    cr_assert_eq(rs_imod(-7, -3), -1);
    cr_assert_eq(rs_imod(6, -3), 0);
    cr_assert_eq(rs_ifmod(-7, 3), -1);
    cr_assert_eq(rs_ifmod(7, -3), 1);
    cr_assert_eq(rs_imod(5, 0), 0);
    cr_assert_eq(rs_imod(INT64_MIN, -1), 0);
    cr_assert_eq(rs_ifmod(INT64_MIN, -1), 0);
    cr_assert_eq(rs_umod(7, 0), 0u);
    cr_assert_eq(rs_umod(17, 5), 2u);
    cr_assert_eq(rs_fmod(-7.5f, 2.0f), -1.5f);
    cr_assert_eq(rs_mod(-7.5f, 2.0f), 0.5f);
    cr_assert_eq(rs_mod_d(7.5, -2.0), -0.5);
}

Test(scalar, shifts_sign_isinf) {
    cr_assert_eq(rs_shl(1, 63), (uint64_t)1 << 63);
    cr_assert_eq(rs_shl(1, 64), 0u);
    cr_assert_eq(rs_shr(UINT64_MAX, 64), 0u);
    cr_assert_eq(rs_shr(256, 4), 16u);
    cr_assert_eq(rs_isign(-5), -1);
    cr_assert_eq(rs_isign(0), 0);
    cr_assert_eq(rs_isign(INT64_MAX), 1);
    cr_assert_eq(rs_sign(-0.25f), -1.0f);
    cr_assert_eq(rs_sign_d(3e300), 1.0);
    cr_assert(isnan(rs_sign(NAN)));
    cr_assert_eq(rs_isinf(-INFINITY, 1, 0), 1);
    cr_assert_eq(rs_isinf(-INFINITY, 0, 1), 0);
    cr_assert_eq(rs_isinf_d(INFINITY, 0, 1), 1);
    cr_assert_eq(rs_isinf(NAN, 1, 1), 0);
    cr_assert_eq(rs_isnan_d(NAN), 1);
    cr_assert_eq(rs_isnan(1.0f), 0);
}

Test(scalar, activations) {
    /* Selu, x <= 0: gamma*(alpha*e^x - alpha); x = ln 0.5, alpha 2, gamma 3: 3*(1 - 2) = -3 */
    cr_assert_float_eq(rs_selu_d(log(0.5), 2.0, 3.0), -3.0, 1e-15);
    cr_assert_eq(rs_selu(1.5f, 2.0f, 3.0f), 4.5f);
    cr_assert_eq(rs_selu(0.0f, 2.0f, 3.0f), 0.0f);
    /* Celu: alpha*(e^(x/alpha) - 1); x = 2 ln 0.5, alpha 2: 2*(0.5 - 1) = -1 */
    cr_assert_float_eq(rs_celu_d(2.0 * log(0.5), 2.0), -1.0, 1e-15);
    cr_assert_eq(rs_celu(3.0f, 2.0f), 3.0f);
    cr_assert_eq(rs_thresholdedrelu(1.0f, 1.0f), 0.0f);
    cr_assert_eq(rs_thresholdedrelu(1.5f, 1.0f), 1.5f);
    cr_assert_eq(rs_thresholdedrelu(-3.0f, -4.0f), -3.0f);
    /* Shrink bias 1, lambd 1.5 */
    cr_assert_eq(rs_shrink(-2.0f, 1.0f, 1.5f), -1.0f);
    cr_assert_eq(rs_shrink(1.5f, 1.0f, 1.5f), 0.0f);
    cr_assert_eq(rs_shrink(4.0f, 1.0f, 1.5f), 3.0f);
    cr_assert_eq(rs_softsign(3.0f), 0.75f);
    cr_assert_eq(rs_softsign(-1.0f), -0.5f);
    /* Mish(1) = tanh(ln u), u = 1 + e: (u^2 - 1) / (u^2 + 1) */
    double u = 1.0 + exp(1.0);
    cr_assert_float_eq(rs_mish_d(1.0), (u * u - 1) / (u * u + 1), 1e-15);
    cr_assert_eq(rs_prelu(-2.0f, 0.25f), -0.5f);
    cr_assert_eq(rs_prelu(2.0f, 0.25f), 2.0f);
    cr_assert_eq(rs_mean(9.0f, 3.0f), 3.0f);
    cr_assert_float_eq(rs_acosh_d(cosh(2.0)), 2.0, 1e-12);
    cr_assert_float_eq(rs_atanh(0.5f), 0.549306144f, 1e-6);
}

/* ---- end to end: printer, per-node interpreter, fused interpreter ---- */

typedef struct {
    const char *name;
    RlxDType dtype;
    int rank;
    int64_t dims[4];
    const void *data;
} Tensor;

static const char *shape_json(const Tensor *t) {
    RlxBuf b = {0};
    rlx_buf_printf(&b, "[");
    for (int i = 0; i < t->rank; i++) rlx_buf_printf(&b, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    rlx_buf_printf(&b, "]");
    return b.data;
}

static int64_t numel(const Tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

static const char *data_json(const Tensor *t) {
    RlxBuf b = {0};
    rlx_buf_printf(&b, "[");
    for (int64_t i = 0; i < numel(t); i++) {
        const char *sep = i ? ", " : "";
        const uint8_t *p = (const uint8_t *)t->data;
        double d = 0;
        int64_t k = 0;
        int isf = 1;
        switch (t->dtype) {
        case RLX_F32: d = ((const float *)p)[i]; break;
        case RLX_F64: d = ((const double *)p)[i]; break;
        case RLX_I8: k = ((const int8_t *)p)[i]; isf = 0; break;
        case RLX_U8: case RLX_BOOL: k = p[i]; isf = 0; break;
        case RLX_I32: k = ((const int32_t *)p)[i]; isf = 0; break;
        case RLX_I64: k = ((const int64_t *)p)[i]; isf = 0; break;
        default: cr_assert_fail("dtype %s not in this harness", rlx_dtype_name(t->dtype));
        }
        if (!isf) rlx_buf_printf(&b, "%s%lld", sep, (long long)k);
        else if (isnan(d)) rlx_buf_printf(&b, "%s\"nan\"", sep);
        else if (isinf(d)) rlx_buf_printf(&b, "%s\"%sinf\"", sep, d < 0 ? "-" : "");
        else rlx_buf_printf(&b, "%s%.17g", sep, d);
    }
    rlx_buf_printf(&b, "]");
    return b.data;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void sh(const char *cmd) {
    int st = system(cmd);
    cr_assert_eq(st, 0, "command failed (%d): %s", st, cmd);
}

/* Builds one variant and checks its output bytes. nodes_json: the "nodes"
 * array's contents; the graph output is "y". */
static void check_variant(const char *dir, const char *variant, int as_inputs, const Tensor *ops, int nops,
                          const char *nodes_json, const Tensor *want) {
    RlxBuf m = {0};
    rlx_buf_printf(&m, "{\"rlxg\": 1, \"name\": \"m\", \"inputs\": [");
    for (int i = 0; as_inputs && i < nops; i++)
        rlx_buf_printf(&m, "%s{\"name\": \"%s\", \"dtype\": \"%s\", \"shape\": %s}", i ? ", " : "", ops[i].name,
                       rlx_dtype_name(ops[i].dtype), shape_json(&ops[i]));
    rlx_buf_printf(&m, "], \"outputs\": [{\"name\": \"y\", \"dtype\": \"%s\", \"shape\": %s}], \"weights\": [",
                   rlx_dtype_name(want->dtype), shape_json(want));
    for (int i = 0; !as_inputs && i < nops; i++)
        rlx_buf_printf(&m, "%s{\"name\": \"%s\", \"dtype\": \"%s\", \"shape\": %s, \"data\": %s}", i ? ", " : "",
                       ops[i].name, rlx_dtype_name(ops[i].dtype), shape_json(&ops[i]), data_json(&ops[i]));
    rlx_buf_printf(&m, "], \"nodes\": [%s]}", nodes_json);
    const char *model = rlx_fmt("%s/%s.rlxg", dir, variant), *exe = rlx_fmt("%s/%s", dir, variant);
    write_file(model, m.data);
    sh(rlx_fmt("build/rlxc %s --build -o %s", model, exe));
    /* the generated C is warning-free (as the conformance runner needs) */
    sh(rlx_fmt("cc -std=c99 -Wall -Wextra -Werror -Iruntime_min -I%s -c %s.c -o %s.o", dir, exe, exe));
    RlxBuf cmd = {0};
    rlx_buf_printf(&cmd, "%s", exe);
    for (int i = 0; as_inputs && i < nops; i++) {
        const char *p = rlx_fmt("%s/%s.npy", dir, ops[i].name);
        cr_assert_eq(rlx_npy_write(p, ops[i].dtype, ops[i].rank, ops[i].dims, ops[i].data), 0);
        rlx_buf_printf(&cmd, " -i %s", p);
    }
    const char *out = rlx_fmt("%s/%s_y.npy", dir, variant);
    rlx_buf_printf(&cmd, " -o %s", out);
    sh(cmd.data);
    int dt, rank;
    int64_t dims[RK_MAX_RANK];
    void *data;
    size_t nbytes;
    cr_assert_eq(rlx_npy_read(out, &dt, &rank, dims, &data, &nbytes), 0);
    cr_assert_eq(dt, (int)want->dtype, "%s: dtype %s", variant, rlx_dtype_name(dt));
    cr_assert_eq(rank, want->rank);
    cr_assert_eq(nbytes, (size_t)(numel(want) * rlx_dtype_size(want->dtype)));
    const uint8_t *got = data, *exp = want->data;
    for (size_t i = 0; i < nbytes; i++)
        cr_assert_eq(got[i], exp[i], "%s: byte %zu is 0x%02x, expected 0x%02x", variant, i, got[i], exp[i]);
    free(data);
}

static void check_case(const char *name, const Tensor *ops, int nops, const char *nodes_json, const char *program,
                       const Tensor *want) {
    const char *dir = rlx_fmt("build/unit/elt_%s", name);
    sh(rlx_fmt("mkdir -p %s", dir));
    check_variant(dir, "run", 1, ops, nops, nodes_json, want);
    check_variant(dir, "fold", 0, ops, nops, nodes_json, want);
    RlxBuf region = {0};
    rlx_buf_printf(&region, "{\"name\": \"r\", \"op\": \"rlx.Region\", \"inputs\": [");
    for (int i = 0; i < nops; i++) rlx_buf_printf(&region, "%s\"%s\"", i ? ", " : "", ops[i].name);
    rlx_buf_printf(&region, "], \"outputs\": [\"y\"], \"attrs\": {\"program\": \"%s\"}}", program);
    check_variant(dir, "region", 0, ops, nops, region.data, want);
}

Test(e2e, float_chain_round_shrink_sign) {
    /* Round (halves to even): [-2, -0, 0, 2, 2, 4]; Shrink bias 1 lambd 1.5:
     * [-1, 0, 0, 1, 1, 3]; Sign: [-1, 0, 0, 1, 1, 1] */
    static const float x[] = {-2.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.7f};
    static const float y[] = {-1, 0, 0, 1, 1, 1};
    Tensor ops[] = {{"x", RLX_F32, 1, {6}, x}};
    Tensor want = {"y", RLX_F32, 1, {6}, y};
    check_case("float_chain", ops, 1,
               "{\"name\": \"a\", \"op\": \"Round\", \"inputs\": [\"x\"], \"outputs\": [\"r\"]},"
               "{\"name\": \"b\", \"op\": \"Shrink\", \"inputs\": [\"r\"], \"outputs\": [\"s\"],"
               " \"attrs\": {\"bias\": 1.0, \"lambd\": 1.5}},"
               "{\"name\": \"c\", \"op\": \"Sign\", \"inputs\": [\"s\"], \"outputs\": [\"y\"]}",
               "s0:f32 = Round(x0); s1:f32 = Shrink[1, 1.5](s0); s2:f32 = Sign(s1)", &want);
}

Test(e2e, u8_chain_wraps_between_steps) {
    /* Add wraps at 8 bits: [300, 10, 256, 10] -> [44, 10, 0, 10]; Mod
     * (fmod 0) by [5, 4, 3, 7]: [4, 2, 0, 3]; BitShift LEFT by [1, 7, 9, 6]:
     * [8, 256, 0, 192] -> [8, 0, 0, 192]. Without the wrap after Add the
     * first element would be 300 mod 5 = 0. */
    static const uint8_t a[] = {200, 7, 255, 1}, b[] = {100, 3, 1, 9}, m[] = {5, 4, 3, 7}, s[] = {1, 7, 9, 6};
    static const uint8_t y[] = {8, 0, 0, 192};
    Tensor ops[] = {{"a", RLX_U8, 1, {4}, a}, {"b", RLX_U8, 1, {4}, b}, {"m", RLX_U8, 1, {4}, m},
                    {"s", RLX_U8, 1, {4}, s}};
    Tensor want = {"y", RLX_U8, 1, {4}, y};
    check_case("u8_chain", ops, 4,
               "{\"name\": \"add\", \"op\": \"Add\", \"inputs\": [\"a\", \"b\"], \"outputs\": [\"c\"]},"
               "{\"name\": \"mod\", \"op\": \"Mod\", \"inputs\": [\"c\", \"m\"], \"outputs\": [\"d\"]},"
               "{\"name\": \"shl\", \"op\": \"BitShift\", \"inputs\": [\"d\", \"s\"], \"outputs\": [\"y\"],"
               " \"attrs\": {\"direction\": \"LEFT\"}}",
               "s0:u8 = Add(x0, x1); s1:u8 = Mod[0](s0, x2); s2:u8 = BitShift[1](s1, x3)", &want);
}

Test(e2e, i32_mod_both_modes) {
    /* fmod 0 of [-7, 7, -7, 7, 5] by [3, -3, -3, 3, 0]: [2, -2, -1, 1, 0];
     * fmod 1: [-1, 1, -1, 1, 0]; their difference: [3, -3, 0, 0, 0] */
    static const int32_t a[] = {-7, 7, -7, 7, 5}, b[] = {3, -3, -3, 3, 0};
    static const int32_t y[] = {3, -3, 0, 0, 0};
    Tensor ops[] = {{"a", RLX_I32, 1, {5}, a}, {"b", RLX_I32, 1, {5}, b}};
    Tensor want = {"y", RLX_I32, 1, {5}, y};
    check_case("i32_mod", ops, 2,
               "{\"name\": \"p\", \"op\": \"Mod\", \"inputs\": [\"a\", \"b\"], \"outputs\": [\"p\"]},"
               "{\"name\": \"c\", \"op\": \"Mod\", \"inputs\": [\"a\", \"b\"], \"outputs\": [\"c\"],"
               " \"attrs\": {\"fmod\": 1}},"
               "{\"name\": \"d\", \"op\": \"Sub\", \"inputs\": [\"p\", \"c\"], \"outputs\": [\"y\"]}",
               "s0:i32 = Mod[0](x0, x1); s1:i32 = Mod[1](x0, x1); s2:i32 = Sub(s0, s1)", &want);
}

Test(e2e, f64_isinf_isnan_xor) {
    /* IsInf (positive only): [0, 1, 0, 0]; IsNaN: [0, 0, 1, 0]; Xor: [0, 1, 1, 0] */
    static const double x[] = {-INFINITY, INFINITY, NAN, 1.0};
    static const uint8_t y[] = {0, 1, 1, 0};
    Tensor ops[] = {{"x", RLX_F64, 1, {4}, x}};
    Tensor want = {"y", RLX_BOOL, 1, {4}, y};
    check_case("isinf", ops, 1,
               "{\"name\": \"i\", \"op\": \"IsInf\", \"inputs\": [\"x\"], \"outputs\": [\"i\"],"
               " \"attrs\": {\"detect_negative\": 0}},"
               "{\"name\": \"n\", \"op\": \"IsNaN\", \"inputs\": [\"x\"], \"outputs\": [\"n\"]},"
               "{\"name\": \"x\", \"op\": \"Xor\", \"inputs\": [\"i\", \"n\"], \"outputs\": [\"y\"]}",
               "s0:bool = IsInf[0, 1](x0); s1:bool = IsNaN(x0); s2:bool = Xor(s0, s1)", &want);
}

Test(e2e, mean_then_castlike_f16) {
    /* Mean of [1, 2], [3, 4], [5, 9]: [3, 5]; as f16: 3 = 0x4200, 5 = 0x4500.
     * The CastLike target has another shape: only its dtype matters. */
    static const float a[] = {1, 2}, b[] = {3, 4}, c[] = {5, 9};
    static const uint8_t y[] = {0x00, 0x42, 0x00, 0x45};
    /* the f16 target is a Constant node (this harness writes no f16 data) */
    Tensor ops2[] = {{"a", RLX_F32, 1, {2}, a}, {"b", RLX_F32, 1, {2}, b}, {"c", RLX_F32, 1, {2}, c}};
    Tensor want = {"y", RLX_F16, 1, {2}, y};
    RlxBuf nodes = {0};
    rlx_buf_printf(&nodes,
                   "{\"name\": \"t\", \"op\": \"Constant\", \"inputs\": [], \"outputs\": [\"like\"],"
                   " \"attrs\": {\"value\": {\"dtype\": \"f16\", \"shape\": [3], \"data\": [0, 0, 0]}}},"
                   "{\"name\": \"m\", \"op\": \"Mean\", \"inputs\": [\"a\", \"b\", \"c\"], \"outputs\": [\"m\"]},"
                   "{\"name\": \"y\", \"op\": \"CastLike\", \"inputs\": [\"m\", \"like\"], \"outputs\": [\"y\"]}");
    const char *dir = "build/unit/elt_mean";
    sh(rlx_fmt("mkdir -p %s", dir));
    check_variant(dir, "run", 1, ops2, 3, nodes.data, &want);
    check_variant(dir, "fold", 0, ops2, 3, nodes.data, &want);
    check_variant(dir, "region", 0, ops2, 3,
                  "{\"name\": \"r\", \"op\": \"rlx.Region\", \"inputs\": [\"a\", \"b\", \"c\"], \"outputs\": [\"y\"],"
                  " \"attrs\": {\"program\": \"s0:f32 = Add(x0, x1); s1:f32 = Add(s0, x2); s2:f32 = Mean[3](s1);"
                  " s3:f16 = Cast(s2)\"}}",
                  &want);
}

Test(e2e, prelu_slope_broadcast_then_selu) {
    /* PRelu with slope [0.5, 1, 2] over rows: [[-0.5, 2, -6], [4, -5, 6]];
     * then ThresholdedRelu alpha 1.5: [[0, 2, 0], [4, 0, 6]] */
    static const float x[] = {-1, 2, -3, 4, -5, 6}, s[] = {0.5f, 1, 2};
    static const float y[] = {0, 2, 0, 4, 0, 6};
    Tensor ops[] = {{"x", RLX_F32, 2, {2, 3}, x}, {"s", RLX_F32, 1, {3}, s}};
    Tensor want = {"y", RLX_F32, 2, {2, 3}, y};
    check_case("prelu", ops, 2,
               "{\"name\": \"p\", \"op\": \"PRelu\", \"inputs\": [\"x\", \"s\"], \"outputs\": [\"p\"]},"
               "{\"name\": \"t\", \"op\": \"ThresholdedRelu\", \"inputs\": [\"p\"], \"outputs\": [\"y\"],"
               " \"attrs\": {\"alpha\": 1.5}}",
               "s0:f32 = PRelu(x0, x1); s1:f32 = ThresholdedRelu[1.5](s0)", &want);
}

Test(e2e, castlike_target_is_never_read) {
    /* CastLike(x, Relu(z)): only z's dtype (f64) matters, so the fused loop
     * neither loads z nor computes the Relu: [1.5, -2, 7] as f64 */
    static const float x[] = {1.5f, -2, 7};
    static const double z[] = {-1, 2, -3}, y[] = {1.5, -2, 7};
    Tensor ops[] = {{"x", RLX_F32, 1, {3}, x}, {"z", RLX_F64, 1, {3}, z}};
    Tensor want = {"y", RLX_F64, 1, {3}, y};
    check_case("castlike", ops, 2,
               "{\"name\": \"r\", \"op\": \"Relu\", \"inputs\": [\"z\"], \"outputs\": [\"like\"]},"
               "{\"name\": \"c\", \"op\": \"CastLike\", \"inputs\": [\"x\", \"like\"], \"outputs\": [\"y\"]}",
               "s0:f64 = Cast(x0)", &want);
}

/* ---- inference errors ---- */

static const char *compile_error(const char *name, const char *json) {
    const char *dir = "build/unit/elt_errors";
    sh(rlx_fmt("mkdir -p %s", dir));
    const char *model = rlx_fmt("%s/%s.rlxg", dir, name), *log = rlx_fmt("%s/%s.log", dir, name);
    write_file(model, json);
    int st = system(rlx_fmt("build/rlxc %s -o %s/%s.c 2>%s", model, dir, name, log));
    cr_assert_neq(st, 0, "%s compiled", name);
    size_t len;
    return (const char *)rlx_read_file(log, &len);
}

Test(errors, bitshift_signed_and_direction) {
    const char *m = compile_error("shift_i32",
        "{\"rlxg\": 1, \"name\": \"m\", \"inputs\": [{\"name\": \"a\", \"dtype\": \"i32\", \"shape\": [2]}],"
        " \"outputs\": [{\"name\": \"y\"}], \"nodes\": [{\"name\": \"s\", \"op\": \"BitShift\","
        " \"inputs\": [\"a\", \"a\"], \"outputs\": [\"y\"], \"attrs\": {\"direction\": \"LEFT\"}}]}");
    cr_assert(strstr(m, "node 's' (BitShift): input 0 is i32; BitShift takes unsigned integers"), "%s", m);
    m = compile_error("shift_dir",
        "{\"rlxg\": 1, \"name\": \"m\", \"inputs\": [{\"name\": \"a\", \"dtype\": \"u8\", \"shape\": [2]}],"
        " \"outputs\": [{\"name\": \"y\"}], \"nodes\": [{\"name\": \"s\", \"op\": \"BitShift\","
        " \"inputs\": [\"a\", \"a\"], \"outputs\": [\"y\"], \"attrs\": {\"direction\": \"UP\"}}]}");
    cr_assert(strstr(m, "direction must be \"LEFT\" or \"RIGHT\""), "%s", m);
}

Test(errors, prelu_slope_must_broadcast_to_x) {
    const char *m = compile_error("prelu",
        "{\"rlxg\": 1, \"name\": \"m\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [3]},"
        " {\"name\": \"s\", \"dtype\": \"f32\", \"shape\": [2, 3]}], \"outputs\": [{\"name\": \"y\"}],"
        " \"nodes\": [{\"name\": \"p\", \"op\": \"PRelu\", \"inputs\": [\"x\", \"s\"], \"outputs\": [\"y\"]}]}");
    cr_assert(strstr(m, "node 'p' (PRelu): slope [2,3] does not broadcast to X [3]"), "%s", m);
}

Test(errors, round_needs_float) {
    const char *m = compile_error("round_int",
        "{\"rlxg\": 1, \"name\": \"m\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"i64\", \"shape\": [3]}],"
        " \"outputs\": [{\"name\": \"y\"}],"
        " \"nodes\": [{\"name\": \"r\", \"op\": \"Round\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}]}");
    cr_assert(strstr(m, "node 'r' (Round)"), "%s", m);
}
