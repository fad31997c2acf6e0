/* test_conv_pwdw_small.c - conv_pwdw_small_f32: a 1x1 expansion computed
 * transposed and a depthwise convolution on its product, on a small plane
 * (rk_convgemm.c).
 *
 * It must give exactly the bits of the two separate conv2d_f32 calls rlxc
 * would otherwise make (the 1x1 with its weights packed as the GEMM's B,
 * a_packed 2, and its epilogue; then the depthwise), for kernels 3x3, 5x5,
 * 7x7 and 3x1, strides 1 and 2, a dilation, pads 0 to 3, channel counts
 * that are not a multiple of a vector (a ragged last block), a batch,
 * biases or none (one bias 0 and one NaN), activations ReLU, clip, SiLU,
 * HardSwish, sigmoid and none, NaN and inf inputs, and 1 to 3 threads; and
 * the pair must agree with a double-precision definition. Built also for
 * AVX2 and AVX-512 (Makefile ISA_UNIT), whose depthwise reads the product's
 * channels as vectors. Too little scratch, and a plane too large for the
 * whole-plane kernel, are refused.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_gemm.h"
#include "refsum.h"
#include "rlx_rt.h"
#include "rlx_scalar.h"

#define OUT(...) ((void *const[]){__VA_ARGS__})

static uint32_t rng_state = 2024u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, c, h, w, e, kh, kw, s, d, pad;
    int act1, act2, b1, b2;
} Case;

static double act(int a, double v) {
    switch (a) {
    case RS_ACT_RELU: return v > 0 || isnan(v) ? v : 0;
    case RS_ACT_CLIP: return v < 0 ? 0 : v > 6 ? 6 : v;
    case RS_ACT_SIGMOID: return 1 / (1 + exp(-v));
    case RS_ACT_SILU: return v / (1 + exp(-v));
    case RS_ACT_HARDSWISH: return v * fmin(fmax(v / 6 + 0.5, 0), 1);
    default: return v;
    }
}

static void run_case(const Case *k) {
    int64_t oh = (k->h + 2 * k->pad - (k->kh - 1) * k->d - 1) / k->s + 1;
    int64_t ow = (k->w + 2 * k->pad - (k->kw - 1) * k->d - 1) / k->s + 1, taps = k->kh * k->kw, hw = k->h * k->w;
    size_t nx = (size_t)(k->n * k->c * hw), nm = (size_t)(k->n * k->e * hw), ny = (size_t)(k->n * k->e * oh * ow);
    float *x = malloc(nx * 4), *w1 = malloc((size_t)(k->e * k->c) * 4), *b1 = malloc((size_t)k->e * 4);
    float *w2 = malloc((size_t)(k->e * taps) * 4), *b2 = malloc((size_t)k->e * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand() * 2;
    for (int64_t i = 0; i < k->e * k->c; i++) w1[i] = frand() * 0.5f;
    for (int64_t i = 0; i < k->e; i++) b1[i] = frand(), b2[i] = i % 4 ? frand() : 0.0f;
    for (int64_t i = 0; i < k->e * taps; i++) w2[i] = frand() * 0.5f;
    b1[k->e / 2] = 0.0f;
    if (k->e > 5) b2[5] = NAN;
    x[nx / 3] = NAN;
    x[nx - 2] = INFINITY;

    /* the definition in double */
    double *mid = malloc(nm * 8), *want = malloc(ny * 8);
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t o = 0; o < k->e; o++)
            for (int64_t i = 0; i < hw; i++) {
                double s = k->b1 ? b1[o] : 0;
                for (int64_t ci = 0; ci < k->c; ci++) s += (double)w1[o * k->c + ci] * x[(b * k->c + ci) * hw + i];
                mid[(b * k->e + o) * hw + i] = act(k->act1, s);
            }
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t o = 0; o < k->e; o++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double s = 0;
                    for (int64_t t = 0; t < taps; t++) {
                        int64_t iy = oy * k->s - k->pad + t / k->kw * k->d, ix = ox * k->s - k->pad + t % k->kw * k->d;
                        if (iy >= 0 && iy < k->h && ix >= 0 && ix < k->w)
                            s += w2[o * taps + t] * mid[((b * k->e + o) * k->h + iy) * k->w + ix];
                    }
                    if (k->b2) s += b2[o];
                    want[((b * k->e + o) * oh + oy) * ow + ox] = act(k->act2, s);
                }

    /* the two kernels apart, as rlxc lowers them unfused */
    float *packed = malloc(rk_sgemm_packed_b_size(k->e, k->c));
    rk_sgemm_pack_b(k->e, k->c, w1, k->c, 1, packed);
    rk_conv2d_f32_params pw = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .oc = k->e, .oh = k->h, .ow = k->w,
                               .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .has_bias = k->b1,
                               .act = k->act1, .act_b = 6, .method = 1, .a_packed = 2, .nblk = hw};
    rk_conv2d_f32_params dw = {.n = k->n, .c = k->e, .h = k->h, .w = k->w, .oc = k->e, .oh = oh, .ow = ow,
                               .kh = k->kh, .kw = k->kw, .sh = k->s, .sw = k->s, .pt = k->pad, .pl = k->pad,
                               .dh = k->d, .dw = k->d, .group = k->e, .has_bias = k->b2, .act = k->act2, .act_b = 6};
    size_t per = rk_conv2d_scratch(k->e, k->c, hw, 1), per2 = rk_conv_pwdw_small_scratch(k->c, k->e, hw);
    if (per2 > per) per = per2;
    uint8_t *scratch = malloc(per * 3);
    rk_ctx one = {1, NULL, scratch, per};
    float *m = malloc(nm * 4), *apart = malloc(ny * 4), *fused = malloc(ny * 4);
    cr_assert_eq(rk_conv2d_f32(&one, &pw, (const void *const[]){x, packed, b1}, OUT(m)), 0);
    cr_assert_eq(rk_conv2d_f32(&one, &dw, (const void *const[]){m, w2, k->b2 ? (const void *)b2 : NULL}, OUT(apart)), 0);
    RefErr err = {0, 0};
    for (size_t i = 0; i < ny; i++) ref_compare(&err, want[i], apart[i]);
    cr_expect_lt(err.worst, 1e-5, "apart: worst error %g", err.worst);
    cr_expect_eq(err.special_wrong, 0, "apart: %zu NaN/inf outputs differ from the definition", err.special_wrong);

    rk_conv_pwdw_small_f32_params p = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .e = k->e, .has_b1 = k->b1,
                                       .act1 = k->act1, .act1_b = 6, .oh = oh, .ow = ow, .kh = k->kh, .kw = k->kw,
                                       .sh = k->s, .sw = k->s, .pt = k->pad, .pl = k->pad, .dh = k->d, .dw = k->d,
                                       .has_b2 = k->b2, .act2 = k->act2, .act2_b = 6};
    const void *ins[5] = {x, packed};
    int next = 2;
    if (k->b1) ins[next++] = b1;
    ins[next++] = w2;
    if (k->b2) ins[next++] = b2;
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    for (int nt = 1; nt <= 3; nt++) {
        rk_ctx ctx = {nt, nt > 1 ? pool : NULL, scratch, per};
        for (size_t i = 0; i < ny; i++) fused[i] = 7.0f;
        cr_assert_eq(rk_conv_pwdw_small_f32(&ctx, &p, ins, OUT(fused)), 0);
        size_t bad = ny;
        for (size_t i = 0; i < ny && bad == ny; i++)
            if (memcmp(&fused[i], &apart[i], 4) && !(isnan(fused[i]) && isnan(apart[i]))) bad = i;
        cr_expect_eq(bad, ny, "%lldx%lld s=%lld d=%lld pad=%lld e=%lld threads=%d: element %zu is %.9g, apart %.9g",
                     (long long)k->kh, (long long)k->kw, (long long)k->s, (long long)k->d, (long long)k->pad,
                     (long long)k->e, nt, bad, bad < ny ? (double)fused[bad] : 0.0,
                     bad < ny ? (double)apart[bad] : 0.0);
    }
    rk_ctx small = {1, NULL, scratch, per2 - 1};
    cr_expect_eq(rk_conv_pwdw_small_f32(&small, &p, ins, OUT(fused)), RLX_E_ARG);
    rk_pool_free(pool);
    free(x), free(w1), free(b1), free(w2), free(b2), free(mid), free(want), free(packed), free(scratch), free(m);
    free(apart), free(fused);
}

Test(conv_pwdw_small, efficientnet_5x5_silu) {
    /* EfficientNet's 14x14 block: 5x5, SiLU after both; 72 = 4 x 16 + 8 channels */
    Case k = {.n = 1, .c = 24, .h = 14, .w = 14, .e = 72, .kh = 5, .kw = 5, .s = 1, .d = 1, .pad = 2,
              .act1 = RS_ACT_SILU, .act2 = RS_ACT_SILU, .b1 = 1, .b2 = 1};
    run_case(&k);
}

Test(conv_pwdw_small, mobilenet_3x3_stride2_hardswish_batch) {
    Case k = {.n = 2, .c = 16, .h = 13, .w = 11, .e = 40, .kh = 3, .kw = 3, .s = 2, .d = 1, .pad = 1,
              .act1 = RS_ACT_HARDSWISH, .act2 = RS_ACT_HARDSWISH, .b1 = 1, .b2 = 1};
    run_case(&k);
}

Test(conv_pwdw_small, seven_by_seven_plane_clip_relu_no_bias) {
    Case k = {.n = 1, .c = 40, .h = 7, .w = 7, .e = 100, .kh = 7, .kw = 7, .s = 1, .d = 1, .pad = 3,
              .act1 = RS_ACT_CLIP, .act2 = RS_ACT_RELU, .b1 = 0, .b2 = 0};
    run_case(&k);
    Case r = {.n = 1, .c = 8, .h = 9, .w = 12, .e = 33, .kh = 5, .kw = 5, .s = 2, .d = 1, .pad = 2,
              .act1 = RS_ACT_NONE, .act2 = RS_ACT_SIGMOID, .b1 = 1, .b2 = 0};
    run_case(&r);
}

Test(conv_pwdw_small, dilation_and_odd_kernels) {
    /* a dilated 3x3 and a 3x1 (not the row-reuse kernel's shapes), no pad */
    Case k = {.n = 1, .c = 12, .h = 10, .w = 10, .e = 17, .kh = 3, .kw = 3, .s = 1, .d = 2, .pad = 2,
              .act1 = RS_ACT_RELU, .act2 = RS_ACT_NONE, .b1 = 1, .b2 = 1};
    run_case(&k);
    Case r = {.n = 1, .c = 20, .h = 6, .w = 15, .e = 48, .kh = 3, .kw = 1, .s = 1, .d = 1, .pad = 0,
              .act1 = RS_ACT_SILU, .act2 = RS_ACT_CLIP, .b1 = 0, .b2 = 1};
    run_case(&r);
}

Test(conv_pwdw_small, refuses_a_plane_too_large) {
    /* 40x40: more than RK_DWL_OUT positions */
    cr_expect(!rk_conv_pwdw_small_ok(40, 40, 40, 40, 3, 3, 1, 1, 1, 1, 1, 1));
    cr_expect(rk_conv_pwdw_small_ok(14, 14, 14, 14, 5, 5, 1, 1, 1, 1, 2, 2));
    rk_conv_pwdw_small_f32_params p = {.n = 1, .c = 4, .h = 40, .w = 40, .e = 16, .oh = 40, .ow = 40, .kh = 3,
                                       .kw = 3, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .dh = 1, .dw = 1};
    size_t per = rk_conv_pwdw_small_scratch(4, 16, 1600);
    uint8_t *scratch = malloc(per);
    float dummy[4] = {0};
    rk_ctx one = {1, NULL, scratch, per};
    cr_expect_eq(rk_conv_pwdw_small_f32(&one, &p, (const void *const[]){dummy, dummy, dummy}, OUT(dummy)), RLX_E_ARG);
    free(scratch);
}
