/* test_conv_grouped.c - conv2d_f32's method 3 (rk_convgemm.c): grouped
 * convolutions of a few output channels per group, which AVX-512 and AVX2
 * builds compute directly (no im2col) and portable builds by method 1. Either way
 * the output must be method 1's, bit for bit: each geometry runs both (on
 * the same unpacked weights) at 1 and 3 threads, and method 1 is checked
 * against a double-precision sum. Geometries: 1 to 32 output channels per
 * group (each of the kernel's three tile shapes, counts between them, and
 * two 16-channel tiles), 1 to 56 input channels per group (K up to 252 in
 * one of the GEMM's K blocks, 288 to 504 in two, whose sums method 3 must
 * add as the GEMM does), 1x1 to 7x7 and 3x1 kernels,
 * strides 1 and 2, pads 0 to 3 on either side, widths 1 to 70 and heights
 * of several bands, a batch, and the epilogues (bias, residual, ReLU,
 * Clip, SiLU). NaN and inf sit at the ends of rows, where a tap that read
 * its neighbour's place would show. Built for every instruction set
 * (ISA_UNIT); the AVX-512 and AVX2 ones take the direct path.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "refsum.h"
#include "rlx_scalar.h"

static uint32_t rng_state = 4242u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, group, cg, ocg, h, w, kh, kw, s, pt, pb, pl, pr;
    int res, act;
} Geo;

static void run_geo(Geo g) {
    if (!g.n) g.n = 1;
    int64_t c = g.group * g.cg, oc = g.group * g.ocg, kdim = g.cg * g.kh * g.kw;
    int64_t oh = (g.h + g.pt + g.pb - g.kh) / g.s + 1, ow = (g.w + g.pl + g.pr - g.kw) / g.s + 1;
    cr_assert(oh > 0 && ow > 0);
    int64_t ncols = oh * ow;
    size_t nx = (size_t)(g.n * c * g.h * g.w), nw = (size_t)(oc * kdim), ny = (size_t)(g.n * oc * ncols);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)oc * 4), *r = malloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) w[i] = frand() * 0.25f;
    for (int64_t i = 0; i < oc; i++) b[i] = frand();
    for (size_t i = 0; i < ny; i++) r[i] = frand();
    x[0] = NAN;   /* the first column of the first row, and the last of the last */
    x[nx - 1] = INFINITY;

    rk_conv2d_f32_params p = {.n = g.n, .c = c, .h = g.h, .w = g.w, .oc = oc, .oh = oh, .ow = ow, .kh = g.kh,
                              .kw = g.kw, .sh = g.s, .sw = g.s, .pt = g.pt, .pl = g.pl, .dh = 1, .dw = 1,
                              .group = g.group, .has_bias = 1, .has_res = g.res, .act = g.act, .act_a = -0.5,
                              .act_b = 0.75, .method = 1, .nblk = ncols};
    size_t per = rk_conv2d_scratch(g.ocg, kdim, ncols, 0);
    size_t gper = rk_conv2d_grouped_scratch(g.cg, g.kh, g.kw, g.s, oh, ow);
    if (gper > per) per = gper;
    uint8_t *scratch = malloc(per * 3);
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    float *want = malloc(ny * 4), *got = malloc(ny * 4);
    const void *in[3] = {x, w, b}, *in_r[4] = {x, w, b, r};
    rk_ctx one = {1, NULL, scratch, per};
    cr_assert_eq(rk_conv2d_f32(&one, &p, g.res ? in_r : in, (void *const[]){want}), 0);

    /* method 1 against the definition in double (before the activation) */
    if (g.act == RS_ACT_NONE) {
        RefErr err = {0, 0};
        for (int64_t n = 0; n < g.n; n++)
            for (int64_t o = 0; o < oc; o++)
                for (int64_t oy = 0; oy < oh; oy++)
                    for (int64_t ox = 0; ox < ow; ox++) {
                        int64_t gi = o / g.ocg, at = ((n * oc + o) * oh + oy) * ow + ox;
                        double s = 0;
                        for (int64_t ic = 0; ic < g.cg; ic++)
                            for (int64_t ky = 0; ky < g.kh; ky++)
                                for (int64_t kx = 0; kx < g.kw; kx++) {
                                    int64_t iy = oy * g.s - g.pt + ky, ix = ox * g.s - g.pl + kx;
                                    float xv = iy < 0 || iy >= g.h || ix < 0 || ix >= g.w
                                                   ? 0.0f
                                                   : x[((n * c + gi * g.cg + ic) * g.h + iy) * g.w + ix];
                                    s += (double)w[(o * g.cg + ic) * g.kh * g.kw + ky * g.kw + kx] * xv;
                                }
                        s += b[o] + (g.res ? r[at] : 0.0);
                        ref_compare(&err, s, want[at]);
                    }
        cr_expect_lt(err.worst, 1e-5, "method 1 vs double: %g", err.worst);
        cr_expect_eq(err.special_wrong, 0, "NaN and inf where the definition puts them");
    }

    p.method = 3;
    for (int nt = 1; nt <= 3; nt += 2) {
        rk_ctx ctx = {nt, nt > 1 ? pool : NULL, scratch, per};
        memset(scratch, 0xff, per * 3);   /* NaN: nothing may be read before it is written */
        for (size_t i = 0; i < ny; i++) got[i] = 12345.0f;
        cr_assert_eq(rk_conv2d_f32(&ctx, &p, g.res ? in_r : in, (void *const[]){got}), 0);
        size_t bad = ny;
        for (size_t i = 0; i < ny && bad == ny; i++)
            if (memcmp(&got[i], &want[i], 4)) bad = i;
        cr_expect_eq(bad, ny,
                     "group %lld cg %lld ocg %lld %lldx%lld %lldx%lld s%lld pads %lld/%lld/%lld/%lld res %d act %d "
                     "threads %d: element %zu is %.9g, method 1 %.9g",
                     (long long)g.group, (long long)g.cg, (long long)g.ocg, (long long)g.h, (long long)g.w,
                     (long long)g.kh, (long long)g.kw, (long long)g.s, (long long)g.pt,
                     (long long)g.pb, (long long)g.pl, (long long)g.pr, g.res, g.act, nt, bad,
                     bad < ny ? (double)got[bad] : 0.0, bad < ny ? (double)want[bad] : 0.0);
        if (bad != ny) break;
    }
    rk_pool_free(pool);
    free(x), free(w), free(b), free(r), free(scratch), free(want), free(got);
}

Test(conv_grouped, channels_per_group) {
    /* the 4x64, 8x32 and 16x16 tiles, the counts between them; cg to 28 (K 252) and 32 (K 288: two K blocks) */
    const int64_t ocgs[] = {1, 3, 4, 5, 8, 12, 16}, cgs[] = {1, 4, 8, 16, 28, 32};
    for (size_t i = 0; i < sizeof ocgs / sizeof *ocgs; i++)
        for (size_t j = 0; j < sizeof cgs / sizeof *cgs; j++)
            run_geo((Geo){.group = 3, .cg = cgs[j], .ocg = ocgs[i], .h = 9, .w = 11, .kh = 3, .kw = 3, .s = 1 + (j & 1),
                          .pt = 1, .pb = 1, .pl = 1, .pr = 1});
}

Test(conv_grouped, two_k_blocks_and_32_channels) {
    /* ResNeXt-50's last stage (32 channels per group, K 288, 7x7, and its
     * stride-2 entry from 14x14), 17 and 24 channels (a second, part-empty
     * tile), K 504 (two blocks of 252) */
    run_geo((Geo){.group = 4, .cg = 32, .ocg = 32, .h = 7, .w = 7, .kh = 3, .kw = 3, .s = 1, .pt = 1, .pb = 1,
                  .pl = 1, .pr = 1, .act = RS_ACT_RELU});
    run_geo((Geo){.group = 3, .cg = 32, .ocg = 32, .h = 14, .w = 14, .kh = 3, .kw = 3, .s = 2, .pt = 1, .pb = 1,
                  .pl = 1, .pr = 1, .res = 1});
    const int64_t ocgs[] = {17, 24, 32}, cgs[] = {29, 32, 56};
    for (size_t i = 0; i < sizeof ocgs / sizeof *ocgs; i++)
        for (size_t j = 0; j < sizeof cgs / sizeof *cgs; j++)
            run_geo((Geo){.group = 2, .cg = cgs[j], .ocg = ocgs[i], .h = 9, .w = 13, .kh = 3, .kw = 3, .s = 1 + (i & 1),
                          .pt = 1, .pb = 1, .pl = 1, .pr = 1, .act = j == 1 ? RS_ACT_SILU : RS_ACT_NONE});
}

Test(conv_grouped, channel_tiles) {
    /* 9 to 32 channels a group on rows of a multiple of 7 positions: tiles of
     * 14 and 7 positions with the channels in the lanes (AVX-512), the part-
     * used second vector of channels (ocg 12, 24), two K blocks (cg 32 at
     * 3x3), stride-1 tall planes with 1x1, 5x5 and 7x7 kernels and uneven
     * pads, stride 2, many bands, a batch of two with a residual */
    const int64_t ows[] = {7, 14, 21, 28, 35, 56}, ocgs[] = {12, 16, 24, 32};
    for (size_t i = 0; i < sizeof ows / sizeof *ows; i++)
        for (size_t j = 0; j < sizeof ocgs / sizeof *ocgs; j++)
            run_geo((Geo){.group = 2, .cg = j & 1 ? 32 : 5, .ocg = ocgs[j], .h = 9, .w = ows[i], .kh = 3, .kw = 3,
                          .s = 1, .pt = 1, .pb = 1, .pl = 1, .pr = 1, .act = i & 1 ? RS_ACT_RELU : RS_ACT_SILU});
    const int64_t ks[] = {1, 5, 7};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
        run_geo((Geo){.group = 3, .cg = 6, .ocg = 16, .h = 11, .w = 14, .kh = ks[i], .kw = ks[i], .s = 1,
                      .pt = ks[i] / 2, .pb = ks[i] - 1 - ks[i] / 2, .pl = (int64_t)i, .pr = ks[i] - 1 - (int64_t)i});
    run_geo((Geo){.group = 2, .cg = 16, .ocg = 32, .h = 28, .w = 28, .kh = 3, .kw = 3, .s = 2, .pt = 1, .pb = 1,
                  .pl = 1, .pr = 1, .act = RS_ACT_RELU});
    run_geo((Geo){.group = 2, .cg = 8, .ocg = 16, .h = 90, .w = 7, .kh = 3, .kw = 3, .s = 1, .pt = 1, .pb = 1, .pl = 1,
                  .pr = 1});
    run_geo((Geo){.n = 2, .group = 4, .cg = 32, .ocg = 32, .h = 14, .w = 14, .kh = 3, .kw = 3, .s = 1, .pt = 1,
                  .pb = 1, .pl = 1, .pr = 1, .res = 1, .act = RS_ACT_CLIP});
}

Test(conv_grouped, widths_heights_strides_pads) {
    for (int64_t w = 1; w <= 70; w += (w < 20 ? 1 : 7))
        for (int64_t s = 1; s <= 2; s++)
            run_geo((Geo){.group = 2, .cg = 4, .ocg = 8, .h = 5, .w = w, .kh = 3, .kw = 3, .s = s, .pt = 1, .pb = 1,
                          .pl = 1, .pr = 1});
    /* many bands of few rows; one row per band; pads 0 to 3, uneven */
    run_geo((Geo){.group = 2, .cg = 8, .ocg = 8, .h = 60, .w = 7, .kh = 3, .kw = 3, .s = 1, .pt = 1, .pb = 1, .pl = 1,
                  .pr = 1});
    run_geo((Geo){.group = 2, .cg = 2, .ocg = 4, .h = 9, .w = 300, .kh = 3, .kw = 3, .s = 2, .pt = 1, .pb = 1,
                  .pl = 1, .pr = 1});
    for (int64_t pad = 0; pad <= 3; pad++)
        run_geo((Geo){.group = 4, .cg = 3, .ocg = 6, .h = 12, .w = 13, .kh = 3, .kw = 3, .s = 1 + pad % 2, .pt = pad,
                      .pb = 3 - pad, .pl = 3 - pad, .pr = pad});
}

Test(conv_grouped, kernels_batch_epilogues) {
    const int64_t ks[][2] = {{1, 1}, {3, 1}, {1, 3}, {5, 5}, {7, 7}};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++)
        for (int64_t s = 1; s <= 2; s++)
            run_geo((Geo){.group = 2, .cg = 4, .ocg = 4, .h = 14, .w = 15, .kh = ks[i][0], .kw = ks[i][1], .s = s,
                          .pt = ks[i][0] / 2, .pb = ks[i][0] / 2, .pl = ks[i][1] / 2, .pr = ks[i][1] / 2});
    const int acts[] = {RS_ACT_RELU, RS_ACT_CLIP, RS_ACT_SILU};
    for (int a = 0; a < 3; a++)
        for (int res = 0; res <= 1; res++)
            run_geo((Geo){.n = 2, .group = 4, .cg = 8, .ocg = 8, .h = 10, .w = 10, .kh = 3, .kw = 3, .s = 1 + res,
                          .pt = 1, .pb = 1, .pl = 1, .pr = 1, .res = res, .act = acts[a]});
    run_geo((Geo){.n = 2, .group = 32, .cg = 4, .ocg = 4, .h = 8, .w = 8, .kh = 3, .kw = 3, .s = 1, .pt = 1, .pb = 1,
                  .pl = 1, .pr = 1, .res = 1});
}

Test(conv_grouped, refuses_bad_params) {
    /* a method past 3, and method 3 on packed weights (rlxc never packs them), are RLX_E_ARG;
     * scratch too small for the direct form falls back to method 1, which then refuses it */
    float x[2 * 4 * 4] = {0}, w[2 * 9] = {0}, b[2] = {0}, y[2 * 4 * 4];
    uint8_t scratch[256];
    rk_ctx ctx = {1, NULL, scratch, sizeof scratch};
    rk_conv2d_f32_params p = {.n = 1, .c = 2, .h = 4, .w = 4, .oc = 2, .oh = 4, .ow = 4, .kh = 3, .kw = 3, .sh = 1,
                              .sw = 1, .pt = 1, .pl = 1, .dh = 1, .dw = 1, .group = 2, .has_bias = 1, .method = 4,
                              .nblk = 16};
    const void *in[3] = {x, w, b};
    cr_expect_eq(rk_conv2d_f32(&ctx, &p, in, (void *const[]){y}), RLX_E_ARG);
    p.method = 3;
    p.a_packed = 1;
    cr_expect_eq(rk_conv2d_f32(&ctx, &p, in, (void *const[]){y}), RLX_E_ARG);
    p.a_packed = 0;
    cr_assert_lt(sizeof scratch, rk_conv2d_scratch(1, 9, 16, 0));
    cr_expect_eq(rk_conv2d_f32(&ctx, &p, in, (void *const[]){y}), RLX_E_ARG);
}
