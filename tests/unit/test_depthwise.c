/* test_depthwise.c - conv2d_f32's depthwise 3x3 (method 0, one input
 * channel per output channel; rk_convgemm.c).
 *
 * Built with AVX-512, a plane goes through one of three kernels: strips of
 * 16 output columns (dw_plane_avx512), one flat run for small stride-1
 * planes with a residual (dw_flat_avx512), or, for planes of up to 256
 * positions without a residual, 16 channels at once in the vector lanes
 * (dw_lanes_block, which transposes the planes). All three promise the same
 * sums: per kernel row from +0, the taps inside the image in order by fma,
 * the three rows added in order, then the bias where it is not 0 (always
 * with a residual) and the activation. Here every output is checked bit for
 * bit against that order written with fmaf, and against a double sum; the
 * portable build (a different order) against the double sum only. Also the
 * same bits at 1 and 3 threads. Geometries: planes 1x1 to 16x16 (the lanes
 * kernel) and wider ones (the strips), strides 1 and 2 on either axis, pads
 * 0 to 2, channel counts around 16 (a block's tail), a batch, biases with
 * zeros and one NaN, relu, clip and none, a residual; NaN and inf inputs.
 */
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
} Dw;

static float act_f(int act, float v) {
    if (act == RS_ACT_RELU) return rs_relu(v);
    if (act == RS_ACT_CLIP) return rs_clip(v, 0.0f, 6.0f);
    return v;
}

static int same(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

static void run_dw(const Dw *d) {
    int64_t oh = (d->h + d->pt + d->pb - 3) / d->sh + 1, ow = (d->w + d->pl + d->pr - 3) / d->sw + 1;
    cr_assert(oh > 0 && ow > 0);
    size_t nx = (size_t)(d->n * d->c * d->h * d->w), ny = (size_t)(d->n * d->c * oh * ow);
    float *x = malloc(nx * 4), *w = malloc((size_t)d->c * 9 * 4), *b = malloc((size_t)d->c * 4);
    float *r = malloc(ny * 4), *y1 = malloc(ny * 4), *y3 = malloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand() * 3;
    for (int64_t i = 0; i < d->c * 9; i++) w[i] = frand();
    for (int64_t i = 0; i < d->c; i++) b[i] = i % 5 == 1 ? 0.0f : frand();
    if (d->c > 6) b[6] = NAN;
    for (size_t i = 0; i < ny; i++) r[i] = frand();
    x[nx / 2] = NAN;
    x[nx - 1] = INFINITY;
    x[0] = -INFINITY;

    rk_conv2d_f32_params p = {.n = d->n, .c = d->c, .h = d->h, .w = d->w, .oc = d->c, .oh = oh, .ow = ow, .kh = 3,
                              .kw = 3, .sh = d->sh, .sw = d->sw, .pt = d->pt, .pl = d->pl, .dh = 1, .dw = 1,
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

    for (int64_t bi = 0; bi < d->n; bi++)
        for (int64_t o = 0; o < d->c; o++) {
            const float *xc = x + (bi * d->c + o) * d->h * d->w, *wo = w + o * 9;
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    size_t at = (size_t)(((bi * d->c + o) * oh + oy) * ow + ox);
                    float s[3];
                    double want = 0;
                    int bad = 0;
                    for (int ky = 0; ky < 3; ky++) {
                        s[ky] = 0.0f;
                        int64_t iy = oy * d->sh - d->pt + ky;
                        if (iy < 0 || iy >= d->h) continue;
                        for (int kx = 0; kx < 3; kx++) {
                            int64_t ix = ox * d->sw - d->pl + kx;
                            if (ix < 0 || ix >= d->w) continue;
                            float v = xc[iy * d->w + ix];
                            s[ky] = fmaf(wo[ky * 3 + kx], v, s[ky]);
                            want += (double)wo[ky * 3 + kx] * v;
                            bad |= !isfinite(v);
                        }
                    }
                    float acc = (s[0] + s[1]) + s[2], bias = d->bias ? b[o] : 0.0f;
                    if (d->res) acc = (acc + bias) + r[at];
                    else if (bias != 0.0f) acc += bias;
                    acc = act_f(d->act, acc);
                    want += (double)bias + (d->res ? r[at] : 0.0);
                    want = act_f(d->act, (float)want);
                    cr_assert(same(y1[at], y3[at]), "threads differ at %zu: %a vs %a", at, (double)y1[at],
                              (double)y3[at]);
#if defined(__AVX512F__)
                    cr_assert(same(y1[at], acc), "h %lld w %lld s %lld,%lld c %lld: at %zu got %a want %a",
                              (long long)d->h, (long long)d->w, (long long)d->sh, (long long)d->sw, (long long)d->c,
                              at, (double)y1[at], (double)acc);
#endif
                    if (bad || isnan(want) || (d->bias && d->c > 6 && o == 6))
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
