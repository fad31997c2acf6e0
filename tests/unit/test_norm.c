/* test_norm.c - the norm family's kernels (runtime_min/rk_norm.c) on small
 * inputs, and the family's ops through the compiler (infer + lower + fold).
 *
 * Expected values are worked out by hand (the arithmetic is in the comments)
 * or computed with /usr/bin/python3 numpy where a comment says so; none is
 * copied from rlxc's output.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"

static rk_ctx ctx = {1};

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

enum { SUM, MEAN, MAX, MIN, PROD, L1, L2, LOGSUM, LOGSUMEXP, SUMSQUARE };

static void expect_floats(const float *got, const float *want, int n, float tol) {
    for (int i = 0; i < n; i++) {
        if (isnan(want[i])) {
            cr_expect(isnan(got[i]), "element %d: got %g, want nan", i, (double)got[i]);
            continue;
        }
        if (isinf(want[i])) {
            cr_expect(got[i] == want[i], "element %d: got %g, want %g", i, (double)got[i], (double)want[i]);
            continue;
        }
        float scale = fabsf(want[i]) > 1 ? fabsf(want[i]) : 1;
        cr_expect(fabsf(got[i] - want[i]) <= tol * scale, "element %d: got %.9g, want %.9g", i, (double)got[i],
                  (double)want[i]);
    }
}

static void expect_i64(const int64_t *got, const int64_t *want, int n) {
    for (int i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "element %d: got %lld, want %lld", i, (long long)got[i], (long long)want[i]);
}

/* ---- reductions ---- */

Test(norm, reduce_float_ops) {
    /* x = arange(24) - 12, shape (2, 3, 4); expectations from numpy (float32) */
    float x[24], y[24];
    for (int i = 0; i < 24; i++) x[i] = (float)(i - 12);
    rk_reduce_params p = {.dtype = RLX_F32, .op = L1, .rank = 3, .dims = {2, 3, 4}, .mask = {0, 1, 0}};
    cr_assert_eq(rk_reduce(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){24, 21, 18, 15, 12, 15, 18, 21}, 8, 0);
    rk_reduce_params l2 = {.dtype = RLX_F32, .op = L2, .rank = 3, .dims = {2, 3, 4}, .mask = {0, 0, 1}};
    cr_assert_eq(rk_reduce(&ctx, &l2, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){21.1187115f, 13.1909056f, 5.47722578f, 3.74165750f, 11.2249718f, 19.1311264f}, 6,
                  1e-6f);
    rk_reduce_params sq = {.dtype = RLX_F32, .op = SUMSQUARE, .rank = 3, .dims = {2, 3, 4}, .mask = {1, 0, 1}};
    cr_assert_eq(rk_reduce(&ctx, &sq, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){460, 300, 396}, 3, 0);

    /* xp = [[1,2,3],[4,5,6]]: prod over axis 0 = [4,10,18]; log(sum) over axis 1 = log 6, log 15;
     * logsumexp over axis 1 = [3.40760589, 6.40760612] (numpy) */
    float xp[6] = {1, 2, 3, 4, 5, 6};
    rk_reduce_params pr = {.dtype = RLX_F32, .op = PROD, .rank = 2, .dims = {2, 3}, .mask = {1, 0}};
    cr_assert_eq(rk_reduce(&ctx, &pr, IN(xp), OUT(y)), 0);
    expect_floats(y, (float[]){4, 10, 18}, 3, 0);
    rk_reduce_params ls = {.dtype = RLX_F32, .op = LOGSUM, .rank = 2, .dims = {2, 3}, .mask = {0, 1}};
    cr_assert_eq(rk_reduce(&ctx, &ls, IN(xp), OUT(y)), 0);
    expect_floats(y, (float[]){1.79175947f, 2.70805020f}, 2, 1e-6f);
    ls.op = LOGSUMEXP;
    cr_assert_eq(rk_reduce(&ctx, &ls, IN(xp), OUT(y)), 0);
    expect_floats(y, (float[]){3.40760589f, 6.40760612f}, 2, 1e-6f);

    /* log-sum-exp subtracts the maximum: exp(1000) would overflow; all -inf stays -inf */
    float big[4] = {1000, 1000, -INFINITY, -INFINITY};
    rk_reduce_params lb = {.dtype = RLX_F32, .op = LOGSUMEXP, .rank = 2, .dims = {2, 2}, .mask = {0, 1}};
    cr_assert_eq(rk_reduce(&ctx, &lb, IN(big), OUT(y)), 0);
    expect_floats(y, (float[]){1000.693147f, -INFINITY}, 2, 1e-6f);

    /* an empty reduced axis: sum 0, product 1, L2 0, log-sum -inf */
    float none[1] = {0};
    rk_reduce_params e = {.dtype = RLX_F32, .op = SUM, .rank = 2, .dims = {2, 0}, .mask = {0, 1}};
    static const int ops[4] = {SUM, PROD, L2, LOGSUM};
    static const float want[4] = {0, 1, 0, -INFINITY};
    for (int k = 0; k < 4; k++) {
        e.op = ops[k];
        cr_assert_eq(rk_reduce(&ctx, &e, IN(none), OUT(y)), 0);
        expect_floats(y, (float[]){want[k], want[k]}, 2, 0);
    }
}

Test(norm, reduce_f64_and_half) {
    /* f64 accumulates in double: 1e15 + 1 + 1 - 1e15 = 2 exactly (float would lose the ones) */
    double xd[4] = {1e15, 1, 1, -1e15}, yd[1];
    rk_reduce_params p = {.dtype = RLX_F64, .op = SUM, .rank = 1, .dims = {4}, .mask = {1}};
    cr_assert_eq(rk_reduce(&ctx, &p, IN(xd), OUT(yd)), 0);
    cr_expect_eq(yd[0], 2.0);
    double xl[2] = {1000, 1000};
    p.op = LOGSUMEXP;
    p.dims[0] = 2;
    cr_assert_eq(rk_reduce(&ctx, &p, IN(xl), OUT(yd)), 0);
    cr_expect(fabs(yd[0] - (1000 + log(2.0))) < 1e-12);

    /* f16: mean of [1, 2, 3, 6] = 3, stored as half */
    uint16_t xh[4], yh[1];
    for (int i = 0; i < 4; i++) xh[i] = rlx_f32_to_f16((float)(i == 3 ? 6 : i + 1));
    rk_reduce_params h = {.dtype = RLX_F16, .op = MEAN, .rank = 1, .dims = {4}, .mask = {1}};
    cr_assert_eq(rk_reduce(&ctx, &h, IN(xh), OUT(yh)), 0);
    cr_expect_eq(rlx_f16_to_f32(yh[0]), 3.0f);
}

Test(norm, reduce_integers) {
    /* i32 rows [-3, -4] and [7, 2]: sum -7, 9; mean -3.5 -> -3 (toward zero), 4.5 -> 4;
     * max -3, 7; min -4, 2; prod 12, 14; L1 7, 9; L2 5, sqrt(53) = 7.28 -> 7; sum of squares 25, 53 */
    int32_t x[4] = {-3, -4, 7, 2}, y[2];
    rk_reduce_params p = {.dtype = RLX_I32, .rank = 2, .dims = {2, 2}, .mask = {0, 1}};
    static const int ops[8] = {SUM, MEAN, MAX, MIN, PROD, L1, L2, SUMSQUARE};
    static const int32_t want[8][2] = {{-7, 9}, {-3, 4}, {-3, 7}, {-4, 2}, {12, 14}, {7, 9}, {5, 7}, {25, 53}};
    for (int k = 0; k < 8; k++) {
        p.op = ops[k];
        cr_assert_eq(rk_reduce(&ctx, &p, IN(x), OUT(y)), 0);
        cr_expect(y[0] == want[k][0] && y[1] == want[k][1], "op %d: got %d %d, want %d %d", ops[k], y[0], y[1],
                  want[k][0], want[k][1]);
    }
    /* u8 wraps like numpy's uint8 sum cast back: 200 + 100 = 300 -> 44; max compares unsigned */
    uint8_t xu[2] = {200, 100}, yu[1];
    rk_reduce_params u = {.dtype = RLX_U8, .op = SUM, .rank = 1, .dims = {2}, .mask = {1}};
    cr_assert_eq(rk_reduce(&ctx, &u, IN(xu), OUT(yu)), 0);
    cr_expect_eq(yu[0], 44);
    u.op = MAX;
    cr_assert_eq(rk_reduce(&ctx, &u, IN(xu), OUT(yu)), 0);
    cr_expect_eq(yu[0], 200);
    /* u64 above 2^63 is still the maximum; i64 keeps all 64 bits */
    uint64_t x64[2] = {1, (1ull << 63) + 5}, y64[1];
    rk_reduce_params w = {.dtype = RLX_U64, .op = MAX, .rank = 1, .dims = {2}, .mask = {1}};
    cr_assert_eq(rk_reduce(&ctx, &w, IN(x64), OUT(y64)), 0);
    cr_expect_eq(y64[0], (1ull << 63) + 5);
    int64_t xi[2] = {(1ll << 62) + 1, (1ll << 62)}, yi[1];
    rk_reduce_params s = {.dtype = RLX_I64, .op = SUM, .rank = 1, .dims = {2}, .mask = {1}};
    cr_assert_eq(rk_reduce(&ctx, &s, IN(xi), OUT(yi)), 0);
    cr_expect_eq((uint64_t)yi[0], (1ull << 63) + 1);
    cr_expect_eq(rk_reduce(&ctx, &(rk_reduce_params){.dtype = RLX_BOOL, .rank = 1, .dims = {2}, .mask = {1}}, IN(xu),
                           OUT(yu)),
                 RLX_E_ARG);
}

/* ---- arg-min/max, Hardmax ---- */

Test(norm, argminmax_dtypes) {
    /* i32 rows [5, 1, 1, 9] and [-2, -2, 0, -7]: argmin first 1, 3; last 2, 3; argmax 3, 2 */
    int32_t x[8] = {5, 1, 1, 9, -2, -2, 0, -7};
    int64_t y[2];
    rk_argminmax_params p = {.dtype = RLX_I32, .outer = 2, .axis_len = 4, .inner = 1, .is_min = 1};
    cr_assert_eq(rk_argminmax(&ctx, &p, IN(x), OUT(y)), 0);
    expect_i64(y, (int64_t[]){1, 3}, 2);
    p.select_last = 1;
    cr_assert_eq(rk_argminmax(&ctx, &p, IN(x), OUT(y)), 0);
    expect_i64(y, (int64_t[]){2, 3}, 2);
    p.is_min = 0;
    cr_assert_eq(rk_argminmax(&ctx, &p, IN(x), OUT(y)), 0);
    expect_i64(y, (int64_t[]){3, 2}, 2);
    /* u8 compares unsigned: [3, 250, 7] -> max at 1, min at 0 */
    uint8_t xu[3] = {3, 250, 7};
    rk_argminmax_params u = {.dtype = RLX_U8, .outer = 1, .axis_len = 3, .inner = 1};
    cr_assert_eq(rk_argminmax(&ctx, &u, IN(xu), OUT(y)), 0);
    cr_expect_eq(y[0], 1);
    u.is_min = 1;
    cr_assert_eq(rk_argminmax(&ctx, &u, IN(xu), OUT(y)), 0);
    cr_expect_eq(y[0], 0);
    /* f64 argmin along the middle axis of (1, 3, 2): columns [4, NaN, -1] -> NaN at 1 (numpy), [2, 0, 0] -> 1 */
    double xd[6] = {4, 2, NAN, 0, -1, 0};
    rk_argminmax_params d = {.dtype = RLX_F64, .outer = 1, .axis_len = 3, .inner = 2, .is_min = 1};
    cr_assert_eq(rk_argminmax(&ctx, &d, IN(xd), OUT(y)), 0);
    expect_i64(y, (int64_t[]){1, 1}, 2);
    cr_expect_eq(rk_argminmax(&ctx, &(rk_argminmax_params){.dtype = 99, .outer = 1, .axis_len = 1, .inner = 1},
                              IN(xd), OUT(y)),
                 RLX_E_ARG);
}

Test(norm, hardmax) {
    /* rows [1, 3, 3] -> [0, 1, 0] (first maximum), [-1, -5, -2] -> [1, 0, 0] */
    float x[6] = {1, 3, 3, -1, -5, -2}, y[6];
    rk_hardmax_params p = {.dtype = RLX_F32, .outer = 2, .axis_len = 3, .inner = 1};
    cr_assert_eq(rk_hardmax(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){0, 1, 0, 1, 0, 0}, 6, 0);
    /* along the middle axis of (1, 3, 2): columns [1, 3, -5] and [3, -1, -2] */
    rk_hardmax_params q = {.dtype = RLX_F32, .outer = 1, .axis_len = 3, .inner = 2};
    cr_assert_eq(rk_hardmax(&ctx, &q, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){0, 1, 1, 0, 0, 0}, 6, 0);
    /* f64 and f16 write their own 1 */
    double xd[3] = {0, 2, 1}, yd[3];
    rk_hardmax_params d = {.dtype = RLX_F64, .outer = 1, .axis_len = 3, .inner = 1};
    cr_assert_eq(rk_hardmax(&ctx, &d, IN(xd), OUT(yd)), 0);
    cr_expect(yd[0] == 0 && yd[1] == 1 && yd[2] == 0);
    uint16_t xh[2] = {rlx_f32_to_f16(2), rlx_f32_to_f16(1)}, yh[2];
    rk_hardmax_params h = {.dtype = RLX_F16, .outer = 1, .axis_len = 2, .inner = 1};
    cr_assert_eq(rk_hardmax(&ctx, &h, IN(xh), OUT(yh)), 0);
    cr_expect(rlx_f16_to_f32(yh[0]) == 1 && yh[1] == 0);
    cr_expect_eq(rk_hardmax(&ctx, &(rk_hardmax_params){.dtype = RLX_I32, .outer = 1, .axis_len = 2, .inner = 1},
                            IN(xh), OUT(yh)),
                 RLX_E_ARG);
}

/* ---- normalizations ---- */

Test(norm, layernorm_stats_and_broadcast) {
    /* X (2, 2, 3) normalized over its last two axes; scale (2, 1) and bias (3,) broadcast to (2, 3);
     * expectations from numpy (float32, eps 1e-5) */
    float x[12] = {1, 2, 3, 4, 5, 6, 6, 5, 4, 3, 2, 1.5f}, scale[2] = {2, 0.5f}, bias[3] = {1, 2, 3}, y[12], mean[2],
          inv[2];
    rk_layernorm_f32_params p = {.outer = 2, .inner = 6, .eps = 1e-5, .has_bias = 1, .has_mean = 1,
                                 .has_inv_std = 1, .nrank = 2, .ndims = {2, 3}, .scale_strides = {1, 0},
                                 .bias_strides = {0, 1}};
    cr_assert_eq(rk_layernorm_f32(&ctx, &p, IN(x, scale, bias), OUT(y, mean, inv)), 0);
    expect_floats(y,
                  (float[]){-1.92769527f, 0.243382931f, 2.41446090f, 1.14638472f, 2.43915415f, 3.73192382f,
                            4.03585291f, 3.77963781f, 3.52342296f, 0.816802025f, 1.50274825f, 2.34572124f},
                  12, 1e-5f);
    expect_floats(mean, (float[]){3.5f, 3.58333325f}, 2, 1e-6f);
    expect_floats(inv, (float[]){0.585539043f, 0.628107488f}, 2, 1e-5f);
    /* only InvStdDev requested: it is the second output */
    p.has_mean = 0;
    inv[0] = inv[1] = 0;
    cr_assert_eq(rk_layernorm_f32(&ctx, &p, IN(x, scale, bias), OUT(y, inv)), 0);
    expect_floats(inv, (float[]){0.585539043f, 0.628107488f}, 2, 1e-5f);
}

Test(norm, instancenorm) {
    /* x (2, 2, 4), scale [1, 2], bias [0, 1], eps 0.01; numpy */
    float x[16] = {1, 2, 3, 4, 2, 2, 2, 6, 0, 1, 0, 1, 5, 1, 1, 1}, s[2] = {1, 2}, b[2] = {0, 1}, y[16];
    rk_instancenorm_f32_params p = {.n = 2, .c = 2, .hw = 4, .eps = 0.01};
    cr_assert_eq(rk_instancenorm_f32(&ctx, &p, IN(x, s, b), OUT(y)), 0);
    expect_floats(y,
                  (float[]){-1.33630621f, -0.445435405f, 0.445435405f, 1.33630621f, -0.152780771f, -0.152780771f,
                            -0.152780771f, 4.45834255f, -0.980580688f, 0.980580688f, -0.980580688f, 0.980580688f,
                            4.45834255f, -0.152780771f, -0.152780771f, -0.152780771f},
                  16, 1e-5f);
}

Test(norm, lpnorm) {
    /* x (3, 2) = [[3,4],[0,0],[-1,2]]: p=2 along axis 1 -> [.6,.8], [0,0] (zero norm), [-1,2]/sqrt(5);
     * p=1 along axis 0 -> columns divided by 4 and 6 */
    float x[6] = {3, 4, 0, 0, -1, 2}, y[6];
    rk_lpnorm_f32_params p = {.outer = 3, .axis_len = 2, .inner = 1, .p = 2};
    cr_assert_eq(rk_lpnorm_f32(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){0.6f, 0.8f, 0, 0, -0.447213595f, 0.894427191f}, 6, 1e-6f);
    rk_lpnorm_f32_params q = {.outer = 1, .axis_len = 3, .inner = 2, .p = 1};
    cr_assert_eq(rk_lpnorm_f32(&ctx, &q, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){0.75f, 4.0f / 6, 0, 0, -0.25f, 2.0f / 6}, 6, 1e-6f);
    q.p = 3;
    cr_expect_eq(rk_lpnorm_f32(&ctx, &q, IN(x), OUT(y)), RLX_E_ARG);
}

Test(norm, mvn) {
    /* x (2, 2, 2), statistics over axes 0 and 2 (numpy) */
    float x[8] = {1, 2, 3, 5, 4, 0, 7, 7}, y[8];
    rk_mvn_f32_params p = {.rank = 3, .dims = {2, 2, 2}, .mask = {1, 0, 1}};
    cr_assert_eq(rk_mvn_f32(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y,
                  (float[]){-0.507092535f, 0.169030845f, -1.50755668f, -0.301511347f, 1.52127755f, -1.18321586f,
                            0.904533982f, 0.904533982f},
                  8, 1e-5f);
}

Test(norm, lrn) {
    /* x = [1, 2, 3, 4] over 4 channels, size 3, alpha 0.1, beta 0.75, bias 2:
     * y[c] = x[c] / (2 + 0.1/3 * sum of x^2 over c-1..c+1 clipped)^0.75 (numpy) */
    float x[4] = {1, 2, 3, 4}, y[4];
    rk_lrn_f32_params p = {.n = 1, .c = 4, .hw = 1, .size = 3, .alpha = 0.1, .beta = 0.75, .bias = 2};
    cr_assert_eq(rk_lrn_f32(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){0.559958606f, 1.01612502f, 1.32714902f, 1.83162574f}, 4, 1e-6f);
}

/* ---- through the compiler ---- */

static RlxGraph *graph_with_input(const char *dtype_name, int rank, const int64_t *dims) {
    RlxGraph *g = rlx_graph_new("t.rlxg");
    int x = rlx_value_add(g, "x");
    g->v[x].dtype = (RlxDType)rlx_dtype_from_name(dtype_name);
    g->v[x].rank = rank;
    memcpy(g->v[x].dims, dims, sizeof(int64_t) * (size_t)rank);
    g->v[x].flags = RLX_V_INPUT;
    g->inputs = rlx_alloc(sizeof(int));
    g->inputs[0] = x;
    g->ninputs = 1;
    return g;
}

static void finish(RlxGraph *g, int out) {
    g->v[out].flags |= RLX_V_OUTPUT;
    g->outputs = rlx_alloc(sizeof(int));
    g->outputs[0] = out;
    g->noutputs = 1;
    rlx_schedule(g);
    rlx_infer(g);
}

Test(norm, infer_reduce_with_empty_axes_input) {
    /* ReduceL2 over all axes, keepdims: an axes graph input of shape [0] is known to be empty */
    jmp_buf jb;
    cr_assert_eq(rlx_try(jb), 0, "%s", rlx_diag.msg);
    RlxGraph *g = graph_with_input("i32", 2, (int64_t[]){2, 3});
    int axes = rlx_value_add(g, "axes");
    g->v[axes].dtype = RLX_I64;
    g->v[axes].rank = 1;
    g->v[axes].dims[0] = 0;
    g->v[axes].flags = RLX_V_INPUT;
    int y = rlx_value_add(g, "y");
    int n = rlx_node_add(g, "r", RLX_OP_REDUCEL2, 2, (int[]){0, axes}, 1, (int[]){y});
    rlx_attr_check(g, n);
    finish(g, y);
    cr_expect_eq(g->v[y].dtype, RLX_I32);
    cr_expect(g->v[y].rank == 2 && g->v[y].dims[0] == 1 && g->v[y].dims[1] == 1);
}

Test(norm, infer_argmin_and_hardmax) {
    jmp_buf jb;
    cr_assert_eq(rlx_try(jb), 0, "%s", rlx_diag.msg);
    RlxGraph *g = graph_with_input("u8", 3, (int64_t[]){2, 3, 4});
    int y = rlx_value_add(g, "y");
    int n = rlx_node_add(g, "a", RLX_OP_ARGMIN, 1, (int[]){0}, 1, (int[]){y});
    RlxAttr *a = rlx_attr_add(g, n, "axis", RLX_A_INT);
    a->i = -2;
    RlxAttr *k = rlx_attr_add(g, n, "keepdims", RLX_A_INT);
    k->i = 0;
    rlx_attr_check(g, n);
    finish(g, y);
    cr_expect_eq(g->v[y].dtype, RLX_I64);
    cr_expect(g->v[y].rank == 2 && g->v[y].dims[0] == 2 && g->v[y].dims[1] == 4);
    cr_expect_null(rlx_node_unsupported(g, n, "c"));
}

Test(norm, hardmax_rejects_integers) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        cr_expect(strstr(rlx_diag.msg, "node 'h' (Hardmax)") && strstr(rlx_diag.msg, "a float type"), "%s",
                  rlx_diag.msg);
        return;
    }
    RlxGraph *g = graph_with_input("i32", 2, (int64_t[]){2, 3});
    int y = rlx_value_add(g, "y");
    int n = rlx_node_add(g, "h", RLX_OP_HARDMAX, 1, (int[]){0}, 1, (int[]){y});
    rlx_attr_check(g, n);
    finish(g, y);
    cr_assert_fail("an i32 Hardmax was accepted");
}
