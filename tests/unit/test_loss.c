/* test_loss.c - the loss kernels (runtime_min/rk_loss.c) and the inference
 * of NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss (ext_loss.c).
 *
 * Kernel expectations are worked out by hand in the comments from the ONNX
 * definition: loss = -x[n, t, d] * w[t], ignored targets count 0 with
 * weight 0, mean = sum / sum of the weights used; the softmax cross entropy
 * applies log_softmax(x) = x - max - ln(sum(exp(x - max))) first. The
 * inference tests build small graphs with the IR API and check shapes and the
 * one-line error messages.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"
#define TG_PASSES (TG_LEGALIZE)
#include "testgraph.h"

static rk_ctx ctx = {1};

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

static void expect_floats(const float *got, const float *want, int n, float tol) {
    for (int i = 0; i < n; i++) {
        if (isnan(want[i])) {
            cr_expect(isnan(got[i]), "element %d: got %g, want nan", i, (double)got[i]);
            continue;
        }
        float scale = fabsf(want[i]) > 1 ? fabsf(want[i]) : 1;
        cr_expect(fabsf(got[i] - want[i]) <= tol * scale, "element %d: got %.9g, want %.9g", i, (double)got[i],
                  (double)want[i]);
    }
}

static rk_nll_loss_params nll(int64_t n, int64_t c, int64_t inner, int64_t reduction) {
    rk_nll_loss_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.n = n;
    p.c = c;
    p.inner = inner;
    p.tgt_dtype = RLX_I64;
    p.reduction = reduction;
    return p;
}

/* ---- NegativeLogLikelihoodLoss ---- */

Test(loss_kernel, nll_2x3_by_hand) {
    /* row 0 picks class 2 -> 3.0; row 1 picks class 0 -> 0.5; sum 3.5, mean 3.5 / 2 */
    float x[6] = {-1.0f, -2.0f, -3.0f, -0.5f, -1.5f, -2.5f};
    int64_t t[2] = {2, 0};
    float y[2] = {0}, s = 0;
    rk_nll_loss_params p = nll(2, 3, 1, 0);
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){3.0f, 0.5f}, 2, 0);
    p.reduction = 1;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){3.5f}, 1, 0);
    p.reduction = 2;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){1.75f}, 1, 0);
}

Test(loss_kernel, nll_weighted_mean_with_ignored_index) {
    /* targets 0, 2, 1 with weights 1, 2, 3 and ignore_index 1:
     * row 0: -(-1) * w[0] = 1; row 1: -(-6) * w[2] = 18; row 2 ignored: 0, weight 0.
     * sum 19; mean = 19 / (1 + 3) = 4.75 (the ignored row's weight is left out) */
    float x[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
    int64_t t[3] = {0, 2, 1};
    float w[3] = {1, 2, 3};
    float y[3] = {0}, s = 0;
    rk_nll_loss_params p = nll(3, 3, 1, 0);
    p.has_weight = 1;
    p.has_ignore = 1;
    p.ignore_index = 1;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, w), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 18, 0}, 3, 0);
    p.reduction = 1;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, w), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){19}, 1, 0);
    p.reduction = 2;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, w), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){4.75f}, 1, 0);
}

Test(loss_kernel, nll_extra_dims_i32_targets) {
    /* input [2, 2, 3] (N, C, d1), target [2, 3] (i32).
     * n=0: class 0 row (-1 -2 -3), class 1 row (-10 -20 -30); targets 1 0 1 -> 10 2 30
     * n=1: class 0 row (-4 -5 -6), class 1 row (-40 -50 -60); targets 0 0 1 -> 4 5 60 */
    float x[12] = {-1, -2, -3, -10, -20, -30, -4, -5, -6, -40, -50, -60};
    int32_t t[6] = {1, 0, 1, 0, 0, 1};
    float y[6] = {0}, s = 0;
    rk_nll_loss_params p = nll(2, 2, 3, 0);
    p.tgt_dtype = RLX_I32;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){10, 2, 30, 4, 5, 60}, 6, 0);
    /* mean without weights: 111 / 6 */
    p.reduction = 2;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){18.5f}, 1, 1e-7f);
}

Test(loss_kernel, nll_target_range) {
    float x[4] = {-1, -2, -3, -4}, y[2];
    int64_t t[2] = {0, 2};   /* C = 2: target 2 is out of range */
    rk_nll_loss_params p = nll(2, 2, 1, 0);
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(y)), RLX_E_RANGE);
    t[1] = -1;               /* negative targets do not count from the end */
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(y)), RLX_E_RANGE);
    /* ... unless they are the ignore_index, which may lie outside [0, C) */
    p.has_ignore = 1;
    p.ignore_index = -1;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 0}, 2, 0);
    /* every target ignored: mean is 0 / 0 */
    int64_t all[2] = {-1, -1};
    float s = 0;
    p.reduction = 2;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, all, NULL), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){NAN}, 1, 0);
    p.dtype = RLX_I32;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(x, t, NULL), OUT(y)), RLX_E_ARG);
}

Test(loss_kernel, nll_f64_and_f16) {
    /* the 2x3 case again in f64 and f16 (the values are exact in both) */
    double xd[6] = {-1.0, -2.0, -3.0, -0.5, -1.5, -2.5}, yd[2] = {0};
    int64_t t[2] = {2, 0};
    rk_nll_loss_params p = nll(2, 3, 1, 0);
    p.dtype = RLX_F64;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(xd, t, NULL), OUT(yd)), RLX_OK);
    cr_expect(yd[0] == 3.0 && yd[1] == 0.5, "got %g %g", yd[0], yd[1]);
    uint16_t xh[6], yh[2] = {0};
    for (int i = 0; i < 6; i++) xh[i] = rlx_f32_to_f16((float)xd[i]);
    p.dtype = RLX_F16;
    cr_assert_eq(rk_nll_loss(&ctx, &p, IN(xh, t, NULL), OUT(yh)), RLX_OK);
    cr_expect(rlx_f16_to_f32(yh[0]) == 3.0f && rlx_f16_to_f32(yh[1]) == 0.5f);
}

/* ---- SoftmaxCrossEntropyLoss ---- */

Test(loss_kernel, sce_log_prob_and_mean) {
    /* row (1 2 3): lse = 3 + ln(e^-2 + e^-1 + 1) = 3 + ln(1.50321472) = 3.40760596,
     *   log_softmax = (-2.40760596, -1.40760596, -0.40760596); target 0 -> 2.40760596
     * row (1 1 1): log_softmax = -ln 3 = -1.09861229 each; target 2 -> 1.09861229
     * mean = (2.40760596 + 1.09861229) / 2 = 1.75310912 */
    float x[6] = {1, 2, 3, 1, 1, 1}, lp[6], s = 0, y[2];
    int64_t t[2] = {0, 2};
    rk_softmax_ce_loss_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.n = 2;
    p.c = 3;
    p.inner = 1;
    p.tgt_dtype = RLX_I64;
    p.reduction = 2;
    p.has_log_prob = 1;
    cr_assert_eq(rk_softmax_ce_loss(&ctx, &p, IN(x, t, NULL), OUT(&s, lp)), RLX_OK);
    expect_floats(&s, (float[]){1.75310912f}, 1, 1e-6f);
    expect_floats(lp, (float[]){-2.40760596f, -1.40760596f, -0.40760596f, -1.09861229f, -1.09861229f, -1.09861229f},
                  6, 1e-6f);
    /* without the log_prob output, per row */
    p.has_log_prob = 0;
    p.reduction = 0;
    cr_assert_eq(rk_softmax_ce_loss(&ctx, &p, IN(x, t, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){2.40760596f, 1.09861229f}, 2, 1e-6f);
}

Test(loss_kernel, sce_class_axis_is_strided_and_stable) {
    /* input [1, 2, 2] (N, C, d1): column d=0 is (1000, 1000) -> log_softmax -ln 2 each
     * (no overflow: the maximum is subtracted); column d=1 is (0, ln 3) ->
     * softmax (1/4, 3/4). Targets (1, 0): losses ln 2 = 0.69314718, ln 4 = 1.38629436;
     * weights (2, 1): sum = w[1]*ln 2 + w[0]*ln 4 = 0.69314718 + 2.77258872 = 3.4657359 */
    float x[4] = {1000, 0, 1000, 1.09861229f}, s = 0;
    int64_t t[2] = {1, 0};
    float w[2] = {2, 1};
    rk_softmax_ce_loss_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.n = 1;
    p.c = 2;
    p.inner = 2;
    p.tgt_dtype = RLX_I64;
    p.has_weight = 1;
    p.reduction = 1;
    cr_assert_eq(rk_softmax_ce_loss(&ctx, &p, IN(x, t, w), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){3.4657359f}, 1, 1e-6f);
    /* mean divides by w[1] + w[0] = 3 */
    p.reduction = 2;
    cr_assert_eq(rk_softmax_ce_loss(&ctx, &p, IN(x, t, w), OUT(&s)), RLX_OK);
    expect_floats(&s, (float[]){1.15524530f}, 1, 1e-6f);
}

/* ---- inference ---- */

static int nvalues;

/* A loss node over (x, t[, w]) with nout outputs, all graph outputs; returns the node. */
static int loss_node(const char *op, int x, int t, int w, int nout, const char *reduction) {
    int outs[2];
    for (int k = 0; k < nout; k++) {
        outs[k] = rlx_value_add(g, rlx_fmt("out%d", nvalues++));
        graph_output(outs[k]);
    }
    int in[3] = {x, t, w};
    int n = rlx_node_add(g, "loss", (RlxOp)rlx_op_from_name(op), w >= 0 ? 3 : 2, in, nout, outs);
    if (reduction) rlx_attr_add(g, n, "reduction", RLX_A_STRING)->s = reduction;
    rlx_attr_check(g, n);
    return n;
}

Test(loss_infer, shapes) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 4, (int64_t[]){3, 5, 2, 7}), t = input("t", RLX_I64, 3, (int64_t[]){3, 2, 7});
    int w = input("w", RLX_F32, 1, (int64_t[]){5});
    int none = loss_node("NegativeLogLikelihoodLoss", x, t, w, 1, "none");
    int mean = loss_node("SoftmaxCrossEntropyLoss", x, t, -1, 2, NULL);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(g->n[none].out[0], RLX_F32, 3, (int64_t[]){3, 2, 7});
    shape_is(g->n[mean].out[0], RLX_F32, 0, NULL);
    shape_is(g->n[mean].out[1], RLX_F32, 4, (int64_t[]){3, 5, 2, 7});
}

Test(loss_infer, errors) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 3, (int64_t[]){3, 5, 2}), t = input("t", RLX_I64, 2, (int64_t[]){3, 4});
    loss_node("NegativeLogLikelihoodLoss", x, t, -1, 1, NULL);
    fails_with("target 't' [3,4] does not match input 'x' [3,5,2]");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){3, 5}), t = input("t", RLX_I64, 1, (int64_t[]){3});
    int w = input("w", RLX_F32, 1, (int64_t[]){4});
    loss_node("NegativeLogLikelihoodLoss", x, t, w, 1, NULL);
    fails_with("weight 'w' must have shape [5], not [4]");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){3, 5}), t = input("t", RLX_I64, 1, (int64_t[]){3});
    loss_node("SoftmaxCrossEntropyLoss", x, t, -1, 1, "avg");
    fails_with("reduction 'avg' is not one of none, sum, mean");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){3, 5}), t = input("t", RLX_F32, 1, (int64_t[]){3});
    loss_node("SoftmaxCrossEntropyLoss", x, t, -1, 1, NULL);
    fails_with("needs i32 or i64");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_I32, 2, (int64_t[]){3, 5}), t = input("t", RLX_I64, 1, (int64_t[]){3});
    loss_node("NegativeLogLikelihoodLoss", x, t, -1, 1, NULL);
    fails_with("needs a float type");
}
