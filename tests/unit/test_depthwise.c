/* test_depthwise.c - conv2d_f32's depthwise convolutions (method 0, one
 * input channel per group; rk_convgemm.c).
 *
 * Built with AVX-512, a 3x3 plane goes through one of three kernels: strips
 * of 16 output columns (dw_plane_avx512), one flat run for small stride-1
 * planes with a residual (dw_flat_avx512), or, for planes of up to 256
 * positions without a residual, 16 channels at once in the vector lanes
 * (dw_lanes_block, which transposes the planes); built with AVX2, the same
 * lanes kernel (8 channels) takes those small planes and depthwise3x3 (rows
 * of fma chains) the others; other kernels (5x5, 7x7,
 * 1x3, dilated, stride 3, depth multipliers) go through the lanes kernel
 * (AVX-512 with 16 channels per vector, AVX2 with 8)
 * (whole padded planes, or bands of output rows whose padded input rows
 * fit its buffers), else through rows of taps (dw_rows, any instruction
 * set). All promise the same sums: per
 * kernel row from +0, the taps inside the image in order by fma, the rows
 * added in order, then the bias where it is not 0 (always with a residual)
 * and the activation. Here every output is checked bit for bit against
 * that order written with fmaf (in builds with FMA: AVX-512 and AVX2, every
 * kernel), and against a double sum; the portable build (no fma) against
 * the double sum only. Also the same
 * bits at 1 and 3 threads. Geometries: 3x3 planes 1x1 to 16x16 (the lanes
 * kernel) and wider ones (the strips), strides 1 to 3 on either axis, pads
 * 0 to 3, channel counts around 16 (a block's tail), a batch, biases with
 * zeros and one NaN, relu, clip, SiLU, HardSwish, sigmoid and none, a
 * residual; NaN and inf inputs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

#define OUT(...) ((void *const[]){__VA_ARGS__})

static uint32_t rng_state = 4242u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, c, h, w, sh, sw, pt, pl, pb, pr;
    int act, bias, res;
    int64_t kh, kw, dh, dw, mult;   /* 0: 3, 3, 1, 1, 1 (a depth multiplier: mult output channels per input) */
} Dw;

static float act_f(int act, float v) { return rs_act(v, act, 0.0f, 6.0f); }

static int same(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static void run_dw(const Dw *d0) {
    Dw dd = *d0, *d = &dd;
    if (!d->kh) d->kh = 3;
    if (!d->kw) d->kw = 3;
    if (!d->dh) d->dh = 1;
    if (!d->dw) d->dw = 1;
    if (!d->mult) d->mult = 1;
    int64_t kh = d->kh, kw = d->kw, taps = kh * kw, oc = d->c * d->mult;
    int64_t oh = (d->h + d->pt + d->pb - (kh - 1) * d->dh - 1) / d->sh + 1;
    int64_t ow = (d->w + d->pl + d->pr - (kw - 1) * d->dw - 1) / d->sw + 1;
    cr_assert(oh > 0 && ow > 0);
    size_t nx = (size_t)(d->n * d->c * d->h * d->w), ny = (size_t)(d->n * oc * oh * ow);
    float *x = malloc(nx * 4), *w = malloc((size_t)(oc * taps) * 4), *b = malloc((size_t)oc * 4);
    float *r = malloc(ny * 4), *y1 = malloc(ny * 4), *y3 = malloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand() * 3;
    for (int64_t i = 0; i < oc * taps; i++) w[i] = frand();
    for (int64_t i = 0; i < oc; i++) b[i] = i % 5 == 1 ? 0.0f : frand();
    if (oc > 6) b[6] = NAN;
    for (size_t i = 0; i < ny; i++) r[i] = frand();
    x[nx / 2] = NAN;
    x[nx - 1] = INFINITY;
    x[0] = -INFINITY;

    rk_conv2d_f32_params p = {.n = d->n, .c = d->c, .h = d->h, .w = d->w, .oc = oc, .oh = oh, .ow = ow, .kh = kh,
                              .kw = kw, .sh = d->sh, .sw = d->sw, .pt = d->pt, .pl = d->pl, .dh = d->dh, .dw = d->dw,
                              .group = d->c, .has_bias = d->bias, .has_res = d->res, .act = d->act, .act_a = 0.0,
                              .act_b = 6.0};
    const void *in[4] = {x, w, NULL, NULL};
    int next = 2;
    if (d->bias) in[next++] = b;
    if (d->res) in[next++] = r;
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    rk_ctx c1 = {1, NULL, NULL, 0}, c3 = {3, pool, NULL, 0};
    cr_assert_eq(rk_conv2d_f32(&c1, &p, in, OUT(y1)), RLX_OK);
    cr_assert_eq(rk_conv2d_f32(&c3, &p, in, OUT(y3)), RLX_OK);
    rk_pool_free(pool);
    /* the order of the sums is promised bit for bit by every kernel
     * wherever there is FMA */
#if defined(__FMA__)
    int exact = 1;
#else
    int exact = 0;
#endif

    for (int64_t bi = 0; bi < d->n; bi++)
        for (int64_t o = 0; o < oc; o++) {
            const float *xc = x + (bi * d->c + o / d->mult) * d->h * d->w, *wo = w + o * taps;
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    size_t at = (size_t)(((bi * oc + o) * oh + oy) * ow + ox);
                    float acc = 0.0f;
                    double want = 0;
                    int bad = 0, rows = 0;
                    for (int64_t ky = 0; ky < kh; ky++) {
                        float s = 0.0f;
                        int64_t iy = oy * d->sh - d->pt + ky * d->dh;
                        if (iy < 0 || iy >= d->h) continue;
                        for (int64_t kx = 0; kx < kw; kx++) {
                            int64_t ix = ox * d->sw - d->pl + kx * d->dw;
                            if (ix < 0 || ix >= d->w) continue;
                            float v = xc[iy * d->w + ix];
                            s = fmaf(wo[ky * kw + kx], v, s);
                            want += (double)wo[ky * kw + kx] * v;
                            bad |= !isfinite(v);
                        }
                        acc = rows++ ? acc + s : s;
                    }
                    float bias = d->bias ? b[o] : 0.0f;
                    if (d->res) acc = (acc + bias) + r[at];
                    else if (bias != 0.0f) acc += bias;
                    acc = act_f(d->act, acc);
                    want += (double)bias + (d->res ? r[at] : 0.0);
                    want = act_f(d->act, (float)want);
                    cr_assert(same(y1[at], y3[at]), "threads differ at %zu: %a vs %a", at, (double)y1[at],
                              (double)y3[at]);
                    if (exact)
                        cr_assert(same(y1[at], acc), "k %lldx%lld h %lld w %lld s %lld,%lld c %lld: at %zu got %a want %a",
                                  (long long)kh, (long long)kw, (long long)d->h, (long long)d->w, (long long)d->sh,
                                  (long long)d->sw, (long long)d->c, at, (double)y1[at], (double)acc);
                    if (bad || isnan(want) || (d->bias && oc > 6 && o == 6))
                        cr_assert(isnan(y1[at]) == isnan(acc) && (isnan(acc) || y1[at] == acc || isinf(acc)),
                                  "special at %zu", at);
                    else
                        cr_assert(fabs(y1[at] - want) <= 1e-4 * (1 + fabs(want)), "at %zu: %g vs %g", at,
                                  (double)y1[at], want);
                }
        }
    free(x), free(w), free(b), free(r), free(y1), free(y3);
}

/* the lanes kernel: every plane size up to 16x16, both strides, pads */
Test(depthwise, small_planes_all_sizes) {
    for (int64_t hw = 1; hw <= 16; hw++)
        for (int64_t s = 1; s <= 2; s++) {
            Dw d = {.n = 1, .c = 17, .h = hw, .w = hw, .sh = s, .sw = s, .pt = 1, .pl = 1, .pb = 1, .pr = 1,
                    .act = RS_ACT_CLIP, .bias = 1};
            run_dw(&d);
        }
}

Test(depthwise, small_planes_uneven) {
    static const Dw cases[] = {
        {.n = 2, .c = 16, .h = 7, .w = 9, .sh = 1, .sw = 2, .pt = 0, .pl = 2, .pb = 2, .pr = 0, .act = RS_ACT_RELU, .bias = 1},
        {.n = 1, .c = 1, .h = 14, .w = 14, .sh = 2, .sw = 1, .pt = 2, .pl = 0, .pb = 1, .pr = 2, .act = RS_ACT_NONE},
        {.n = 1, .c = 33, .h = 5, .w = 16, .sh = 2, .sw = 2, .pt = 0, .pl = 0, .pb = 0, .pr = 0, .act = RS_ACT_NONE, .bias = 1},
        {.n = 3, .c = 40, .h = 16, .w = 3, .sh = 1, .sw = 1, .pt = 1, .pl = 2, .pb = 0, .pr = 1, .act = RS_ACT_RELU},
        {.n = 1, .c = 48, .h = 14, .w = 14, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_CLIP, .bias = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_dw(&cases[i]);
}

/* a residual (flat and strip kernels) and planes over 256 positions (strips) */
Test(depthwise, residual_and_wide_planes) {
    static const Dw cases[] = {
        {.n = 1, .c = 20, .h = 7, .w = 7, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_RELU, .bias = 1, .res = 1},
        {.n = 1, .c = 18, .h = 10, .w = 10, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_NONE, .res = 1},
        {.n = 1, .c = 17, .h = 17, .w = 16, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_CLIP, .bias = 1},
        {.n = 2, .c = 9, .h = 28, .w = 28, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_CLIP, .bias = 1},
        {.n = 1, .c = 5, .h = 20, .w = 37, .sh = 1, .sw = 2, .pt = 2, .pl = 0, .pb = 0, .pr = 2, .act = RS_ACT_RELU},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_dw(&cases[i]);
}

/* 3x3 with the activations that have exp or erf in them, applied over
 * the plane after its sums (AVX-512: four vectors at a time): the strips
 * (large planes, both strides, with and without a residual), the flat run
 * (small stride-1 planes with a residual) and the lanes kernel */
Test(depthwise, exp_activations_3x3) {
    static const Dw cases[] = {
        {.n = 1, .c = 6, .h = 30, .w = 33, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_SILU, .bias = 1},
        {.n = 1, .c = 5, .h = 31, .w = 29, .sh = 2, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_SILU, .bias = 1},
        {.n = 2, .c = 4, .h = 24, .w = 40, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_SILU, .bias = 1, .res = 1},
        {.n = 1, .c = 7, .h = 7, .w = 7, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_SILU, .res = 1},
        {.n = 1, .c = 20, .h = 9, .w = 9, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_SILU, .bias = 1},
        {.n = 1, .c = 3, .h = 26, .w = 27, .sh = 1, .sw = 2, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_GELU, .bias = 1},
        {.n = 1, .c = 3, .h = 27, .w = 26, .sh = 2, .sw = 1, .pt = 1, .pl = 0, .pb = 1, .pr = 0, .act = RS_ACT_SIGMOID},
        {.n = 1, .c = 4, .h = 8, .w = 8, .sh = 1, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_TANH, .bias = 1, .res = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_dw(&cases[i]);
}

/* kernels other than 3x3, strides, dilations, depth multipliers: the lanes
 * kernel (padded planes up to 1024 positions) and the rows kernel (larger
 * planes, residuals, multipliers, other instruction sets) */
Test(depthwise, any_kernel) {
    static const Dw cases[] = {
        {.n = 1, .c = 19, .h = 7, .w = 7, .sh = 1, .sw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .act = RS_ACT_SILU, .bias = 1, .kh = 5, .kw = 5},
        {.n = 1, .c = 17, .h = 14, .w = 14, .sh = 2, .sw = 2, .pt = 2, .pl = 2, .pb = 1, .pr = 1, .act = RS_ACT_HARDSWISH, .bias = 1, .kh = 5, .kw = 5},
        {.n = 2, .c = 16, .h = 28, .w = 28, .sh = 1, .sw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .act = RS_ACT_RELU, .kh = 5, .kw = 5},
        {.n = 1, .c = 5, .h = 56, .w = 56, .sh = 2, .sw = 2, .pt = 2, .pl = 2, .pb = 1, .pr = 1, .act = RS_ACT_SILU, .bias = 1, .kh = 5, .kw = 5},
        {.n = 1, .c = 3, .h = 57, .w = 50, .sh = 1, .sw = 1, .pt = 3, .pl = 3, .pb = 3, .pr = 3, .act = RS_ACT_NONE, .kh = 7, .kw = 7},
        {.n = 1, .c = 18, .h = 12, .w = 13, .sh = 1, .sw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .act = RS_ACT_CLIP, .bias = 1, .dh = 2, .dw = 2},
        {.n = 1, .c = 4, .h = 40, .w = 40, .sh = 1, .sw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .act = RS_ACT_NONE, .dh = 2, .dw = 2},
        {.n = 1, .c = 20, .h = 16, .w = 17, .sh = 3, .sw = 3, .pt = 1, .pl = 0, .pb = 1, .pr = 2, .act = RS_ACT_RELU, .kh = 3, .kw = 3},
        {.n = 1, .c = 16, .h = 9, .w = 11, .sh = 1, .sw = 2, .pt = 0, .pl = 1, .pb = 0, .pr = 1, .act = RS_ACT_NONE, .bias = 1, .kh = 1, .kw = 3},
        {.n = 1, .c = 7, .h = 10, .w = 10, .sh = 1, .sw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .act = RS_ACT_RELU, .bias = 1, .res = 1, .kh = 5, .kw = 5},
        {.n = 1, .c = 6, .h = 9, .w = 8, .sh = 2, .sw = 1, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .act = RS_ACT_NONE, .bias = 1, .mult = 3},
        {.n = 1, .c = 6, .h = 9, .w = 8, .sh = 1, .sw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .act = RS_ACT_SIGMOID, .kh = 5, .kw = 5, .mult = 2},
        {.n = 1, .c = 17, .h = 1, .w = 1, .sh = 1, .sw = 1, .pt = 2, .pl = 2, .pb = 2, .pr = 2, .act = RS_ACT_NONE, .bias = 1, .kh = 5, .kw = 5},
        {.n = 1, .c = 18, .h = 9, .w = 600, .sh = 1, .sw = 2, .pt = 3, .pl = 3, .pb = 3, .pr = 3, .act = RS_ACT_SILU, .bias = 1, .kh = 7, .kw = 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_dw(&cases[i]);
}
