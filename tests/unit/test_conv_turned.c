/* test_conv_turned.c - the transposed GEMM form of conv2d_f32 (a_packed = 2).
 *
 * rlxc packs a convolution's weights as the GEMM's B (rk_sgemm_pack_b of
 * W^T) where the output plane is small (7x7): the kernel then computes
 * y^T = col^T W^T and turns it into y. It must give exactly the bits of the
 * upright form (a_packed = 1) with its fused epilogue, at any thread count
 * and column-block size, and agree with a double-precision definition.
 * Shapes cover 1x1 (x read in place) and 3x3 stride 2 (im2col), groups, a
 * batch, several column blocks, channel counts that are not multiples of 16
 * (a ragged tile), bias + residual + relu / clip / sigmoid / SiLU, and NaN, inf and
 * -0 in the input. rk_sgemm_cols over a column split must match one call;
 * method 2 (few-channel stems) must give method 1's bits.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rlx_scalar.h"

#define OUT(...) ((void *const[]){__VA_ARGS__})

static uint32_t rng_state = 4242u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, c, h, w, oc, k, s, pad, group, nblk;
    int bias, res, act;
} Case;

/* act(sum + bias + res) in double, the definition loop by loop */
static void reference(const Case *k, const rk_conv2d_f32_params *p, const float *x, const float *w, const float *b,
                      const float *res, double *y) {
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t o = 0; o < p->oc; o++)
            for (int64_t oy = 0; oy < p->oh; oy++)
                for (int64_t ox = 0; ox < p->ow; ox++) {
                    double s = 0;
                    for (int64_t ic = 0; ic < cg; ic++)
                        for (int64_t ky = 0; ky < p->kh; ky++)
                            for (int64_t kx = 0; kx < p->kw; kx++) {
                                int64_t iy = oy * p->sh - p->pt + ky, ix = ox * p->sw - p->pl + kx;
                                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                                int64_t c = (o / ocg) * cg + ic;
                                s += (double)x[((n * p->c + c) * p->h + iy) * p->w + ix] *
                                     w[((o * cg + ic) * p->kh + ky) * p->kw + kx];
                            }
                    int64_t at = ((n * p->oc + o) * p->oh + oy) * p->ow + ox;
                    if (k->bias) s += b[o];
                    if (k->res) s += res[at];
                    if (k->act == RS_ACT_RELU) s = s > 0 || isnan(s) ? s : 0;   /* NaN passes */
                    else if (k->act == RS_ACT_CLIP) s = s < 0 ? 0 : s > 6 ? 6 : s;
                    else if (k->act == RS_ACT_SIGMOID) s = 1 / (1 + exp(-s));
                    else if (k->act == RS_ACT_SILU) s = s / (1 + exp(-s));
                    else if (k->act == RS_ACT_HARDSWISH) s = s * fmin(fmax(s / 6 + 0.5, 0), 1);
                    y[at] = s;
                }
}

/* The weights packed per group, upright (pack_a) or turned (pack_b of W^T). */
static float *pack(const Case *k, const float *w, int turned) {
    int64_t ocg = k->oc / k->group, kdim = k->c / k->group * k->k * k->k;
    size_t per = turned ? rk_sgemm_packed_b_size(ocg, kdim) : rk_sgemm_packed_a_size(ocg, kdim);
    float *packed = malloc(per * (size_t)k->group);
    for (int64_t gi = 0; gi < k->group; gi++) {
        float *dst = packed + gi * (int64_t)(per / sizeof(float));
        if (turned) rk_sgemm_pack_b(ocg, kdim, w + gi * ocg * kdim, kdim, 1, dst);
        else rk_sgemm_pack_a(ocg, kdim, w + gi * ocg * kdim, kdim, 0, dst);
    }
    return packed;
}

static void run_case(const Case *kc) {
    Case kk = *kc, *k = &kk;
    if (!k->group) k->group = 1;
    int64_t oh = (k->h + 2 * k->pad - k->k) / k->s + 1, ow = (k->w + 2 * k->pad - k->k) / k->s + 1;
    int64_t ocg = k->oc / k->group, kdim = k->c / k->group * k->k * k->k, ncols = oh * ow;
    size_t nx = (size_t)(k->n * k->c * k->h * k->w), nw = (size_t)(k->oc * kdim), ny = (size_t)(k->n * k->oc * ncols);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)k->oc * 4), *res = malloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) w[i] = frand() * 0.2f;
    for (int64_t i = 0; i < k->oc; i++) b[i] = i % 3 ? frand() : 0.0f;   /* zero biases: never added alone */
    for (size_t i = 0; i < ny; i++) res[i] = i % 7 ? frand() : -0.0f;
    x[0] = NAN;
    x[nx / 2] = INFINITY;
    x[nx - 1] = -0.0f;
    double *want = malloc(ny * 8);
    reference(k, &(rk_conv2d_f32_params){.n = k->n, .c = k->c, .h = k->h, .w = k->w, .oc = k->oc, .oh = oh, .ow = ow,
                                         .kh = k->k, .kw = k->k, .sh = k->s, .sw = k->s, .pt = k->pad, .pl = k->pad,
                                         .group = k->group},
              x, w, b, res, want);

    float *pa = pack(k, w, 0), *pb = pack(k, w, 1);
    rk_conv2d_f32_params p = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .oc = k->oc, .oh = oh, .ow = ow,
                              .kh = k->k, .kw = k->k, .sh = k->s, .sw = k->s, .pt = k->pad, .pl = k->pad, .dh = 1,
                              .dw = 1, .group = k->group, .has_bias = k->bias, .has_res = k->res, .act = k->act,
                              .act_a = 0, .act_b = 6, .method = 1, .nblk = k->nblk ? k->nblk : ncols};
    size_t per_t = rk_conv2d_scratch(ocg, kdim, p.nblk, 1), per = rk_conv2d_scratch(ocg, kdim, p.nblk, 0);
    if (per < per_t) per = per_t;   /* one buffer for both forms */
    uint8_t *scratch = malloc(per * 3);
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    const void *ins[4] = {x, NULL, NULL, NULL};
    int next = 2;
    if (k->bias) ins[next++] = b;
    if (k->res) ins[next++] = res;
    float *upright = malloc(ny * 4), *turned = malloc(ny * 4);
    p.a_packed = 1;
    ins[1] = pa;
    rk_ctx one = {1, NULL, scratch, per};
    cr_assert_eq(rk_conv2d_f32(&one, &p, ins, OUT(upright)), 0);
    /* the upright form against the definition: the same NaN and infinities */
    double worst = 0;
    size_t wrong_special = 0;
    for (size_t i = 0; i < ny; i++) {
        if (!isfinite(want[i]) || !isfinite(upright[i])) {
            int same_kind = isnan(want[i]) ? isnan(upright[i]) : (double)upright[i] == want[i];
            wrong_special += !same_kind;
            continue;
        }
        double err = fabs((double)upright[i] - want[i]) / (1.0 + fabs(want[i]));
        if (err > worst) worst = err;
    }
    cr_expect_lt(worst, 1e-5, "upright: worst error %g", worst);
    cr_expect_eq(wrong_special, 0, "upright: %zu NaN/inf outputs differ from the definition", wrong_special);
    int nonfinite = 0;
    for (size_t i = 0; i < ny; i++) nonfinite += !isfinite(upright[i]);
    cr_expect_gt(nonfinite, 0, "the NaN/inf inputs reached no output");

    p.a_packed = 2;
    ins[1] = pb;
    for (int nt = 1; nt <= 3; nt++) {
        rk_ctx ctx = {nt, nt > 1 ? pool : NULL, scratch, per};
        for (size_t i = 0; i < ny; i++) turned[i] = 12345.0f;
        memset(scratch, 0xff, per * 3);   /* NaNs: nothing is read that this run did not write */
        cr_assert_eq(rk_conv2d_f32(&ctx, &p, ins, OUT(turned)), 0);
        size_t bad = ny;
        for (size_t i = 0; i < ny && bad == ny; i++)
            if (memcmp(&turned[i], &upright[i], 4)) bad = i;
        cr_expect_eq(bad, ny, "c=%lld oc=%lld k=%lld group=%lld threads=%d: element %zu is %.9g, upright %.9g",
                     (long long)k->c, (long long)k->oc, (long long)k->k, (long long)k->group, nt, bad,
                     bad < ny ? (double)turned[bad] : 0.0, bad < ny ? (double)upright[bad] : 0.0);
    }
    /* too little scratch for the transposed product: refused, not overrun */
    rk_ctx small = {1, NULL, scratch, rk_conv2d_scratch(ocg, kdim, p.nblk, 0) - 1};
    if (small.scratch_per_thread < per_t) cr_expect_eq(rk_conv2d_f32(&small, &p, ins, OUT(turned)), RLX_E_ARG);
    rk_pool_free(pool);
    free(x), free(w), free(b), free(res), free(want), free(pa), free(pb), free(scratch), free(upright), free(turned);
}

Test(conv_turned, pointwise_7x7_epilogue) {
    Case k = {.n = 1, .c = 160, .h = 7, .w = 7, .oc = 96, .k = 1, .s = 1, .bias = 1, .res = 1, .act = RS_ACT_CLIP};
    run_case(&k);
}

Test(conv_turned, pointwise_ragged_channels_batch_relu) {
    /* 72 = 4 x 16 + 8 output channels: a ragged 8-wide tile */
    Case k = {.n = 2, .c = 40, .h = 5, .w = 9, .oc = 72, .k = 1, .s = 1, .bias = 1, .act = RS_ACT_RELU};
    run_case(&k);
    /* 44 = 5 x 8 + 4: the AVX2 8 x 8 turn's last rows go one at a time */
    Case r = {.n = 1, .c = 24, .h = 7, .w = 7, .oc = 44, .k = 1, .s = 1, .bias = 1, .res = 1, .act = RS_ACT_SILU};
    run_case(&r);
}

Test(conv_turned, pointwise_14x14_hardswish) {
    /* MobileNetV3's 1x1 layers: HardSwish in the turned rows' epilogue, the
     * upright GEMM's in registers */
    Case k = {.n = 1, .c = 40, .h = 14, .w = 14, .oc = 120, .k = 1, .s = 1, .bias = 1, .act = RS_ACT_HARDSWISH};
    run_case(&k);
}

Test(conv_turned, im2col_3x3_stride2_sigmoid) {
    Case k = {.n = 1, .c = 24, .h = 13, .w = 13, .oc = 48, .k = 3, .s = 2, .pad = 1, .bias = 1,
              .act = RS_ACT_SIGMOID};
    run_case(&k);
}

Test(conv_turned, one_block_split_by_channels_shares_its_im2col) {
    /* one column block over 160 output channels: with threads, split by
     * output channels, the im2col built by all threads together (col_task);
     * 3x3 stride 2 (split rows) and 1x1 stride 2 (a downsampling) */
    Case k = {.n = 1, .c = 40, .h = 14, .w = 14, .oc = 160, .k = 3, .s = 2, .pad = 1, .bias = 1, .act = RS_ACT_RELU};
    run_case(&k);
    Case d = {.n = 1, .c = 72, .h = 14, .w = 14, .oc = 160, .k = 1, .s = 2, .bias = 1, .res = 1};
    run_case(&d);
}

Test(conv_turned, groups_and_column_blocks) {
    /* two groups of 32 output channels; the 11x11 plane in blocks of 32 columns */
    Case k = {.n = 2, .c = 48, .h = 11, .w = 11, .oc = 64, .k = 1, .s = 1, .group = 2, .nblk = 32, .res = 1};
    run_case(&k);
}

Test(conv_turned, squeeze_excitation_rows_of_one) {
    /* an SE block's second FC: a 1x1 plane, 1152 = 72 x 16 output channels
     * and 200 (a ragged last tile), the sigmoid over all of them as one run;
     * a batch of 2 (the output's rows are one image's channels); and a plane
     * in column blocks (rows not contiguous: the activation row by row) */
    Case k = {.n = 1, .c = 48, .h = 1, .w = 1, .oc = 1152, .k = 1, .s = 1, .bias = 1, .act = RS_ACT_SIGMOID};
    run_case(&k);
    Case r = {.n = 2, .c = 24, .h = 1, .w = 1, .oc = 200, .k = 1, .s = 1, .bias = 1, .res = 1, .act = RS_ACT_SILU};
    run_case(&r);
    Case b = {.n = 1, .c = 40, .h = 9, .w = 9, .oc = 72, .k = 1, .s = 1, .nblk = 32, .bias = 1, .act = RS_ACT_SILU};
    run_case(&b);
}

Test(conv_turned, squeeze_excitation_first_fc_and_streamed_weights) {
    /* the first FC: few output channels (28: one 16-wide tile and a ragged
     * one), which rlxc now turns too (a plane of one position); and a second
     * FC whose weights (1152 x 96) make it worth two threads though its
     * multiply-adds alone are not: split by output channels, each thread's
     * packed columns, the same bits at 1, 2 and 3 threads */
    Case f = {.n = 1, .c = 672, .h = 1, .w = 1, .oc = 28, .k = 1, .s = 1, .bias = 1, .act = RS_ACT_SILU};
    run_case(&f);
    Case s = {.n = 1, .c = 96, .h = 1, .w = 1, .oc = 1152, .k = 1, .s = 1, .bias = 1, .act = RS_ACT_SIGMOID};
    run_case(&s);
}

Test(conv_turned, sgemm_cols_equals_whole) {
    int64_t m = 49, n = 200, k = 300;
    float *a = malloc((size_t)(m * k) * 4), *b = malloc((size_t)(k * n) * 4), *c1 = malloc((size_t)(m * n) * 4),
          *c2 = malloc((size_t)(m * n) * 4);
    for (int64_t i = 0; i < m * k; i++) a[i] = frand();
    for (int64_t i = 0; i < k * n; i++) b[i] = frand();
    float *packed = malloc(rk_sgemm_packed_b_size(n, k));
    rk_sgemm_pack_b(n, k, b, n, 0, packed);
    void *scratch = malloc(rk_sgemm_scratch_size(m, n, k));
    rk_sgemm_args g = {.m = m, .n = n, .k = k, .alpha = 1.0f, .a = a, .lda = k, .packed_b = packed, .c = c1, .ldc = n};
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
    g.c = c2;
    for (int64_t i = 0; i < m * n; i++) c2[i] = NAN;
    rk_sgemm_cols(&g, 0, 80, scratch);
    rk_sgemm_cols(&g, 80, 192, scratch);
    rk_sgemm_cols(&g, 192, 400, scratch);   /* clipped to n */
    rk_sgemm_cols(&g, 5, 20, scratch);      /* not a tile start: nothing */
    cr_expect_eq(memcmp(c1, c2, (size_t)(m * n) * 4), 0);
    free(a), free(b), free(c1), free(c2), free(packed), free(scratch);
}

/* Method 2 (few input channels: direct with AVX-512, else the GEMM on
 * unpacked weights) must give method 1's bits on the same unpacked weights:
 * strides 1 and 2, 3x3 and 7x7, pads, a ragged last strip, bias + relu,
 * residual + sigmoid, NaN and inf inputs, a batch; with scratch (stride 2
 * reads split rows there) and without; and be near the definition. */
static void stem_case(int64_t c, int64_t h, int64_t w, int64_t oc, int64_t k, int64_t s, int64_t pad, int act,
                      int with_res, int64_t nb) {
    int64_t oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
    size_t nx = (size_t)(nb * c * h * w), nw = (size_t)(oc * c * k * k), ny = (size_t)(nb * oc * oh * ow);
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), *b = malloc((size_t)oc * 4), *res = malloc(ny * 4);
    float *y1 = malloc(ny * 4), *y2 = malloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) wt[i] = frand() * 0.3f;
    for (int64_t i = 0; i < oc; i++) b[i] = frand();
    for (size_t i = 0; i < ny; i++) res[i] = frand();
    x[nx / 2] = NAN;
    x[nx / 3] = INFINITY;
    rk_conv2d_f32_params p = {.n = nb, .c = c, .h = h, .w = w, .oc = oc, .oh = oh, .ow = ow, .kh = k, .kw = k,
                              .sh = s, .sw = s, .pt = pad, .pl = pad, .dh = 1, .dw = 1, .group = 1, .has_bias = 1,
                              .has_res = with_res, .act = act, .method = 1, .nblk = oh * ow};
    size_t per = rk_conv2d_scratch(oc, c * k * k, p.nblk, 0);
    uint8_t *scratch = malloc(per * 2);
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(2, &pool), 0);
    const void *ins[4] = {x, wt, b, res};
    /* bare: no scratch, so stride 2 loads its taps from the input rows (masked, permuted), not split rows */
    rk_ctx one = {1, NULL, scratch, per}, two = {2, pool, scratch, per}, bare = {1, NULL, NULL, 0};
    cr_assert_eq(rk_conv2d_f32(&one, &p, ins, OUT(y1)), 0);
    p.method = 2;
#if defined(__AVX512F__)
    int from = 0;   /* bare: the direct kernel needs no scratch */
#else
    int from = 1;   /* method 1 does */
#endif
    for (int nt = from; nt <= 2; nt++) {
        for (size_t i = 0; i < ny; i++) y2[i] = 5.0f;
        cr_assert_eq(rk_conv2d_f32(nt == 0 ? &bare : nt == 1 ? &one : &two, &p, ins, OUT(y2)), 0);
        size_t bad = ny;
        for (size_t i = 0; i < ny && bad == ny; i++)
            if (memcmp(&y1[i], &y2[i], 4)) bad = i;
        cr_expect_eq(bad, ny, "k=%lld s=%lld threads=%d: element %zu is %.9g, method 1 %.9g", (long long)k,
                     (long long)s, nt, bad, bad < ny ? (double)y2[bad] : 0.0, bad < ny ? (double)y1[bad] : 0.0);
    }
    /* a spot check of the definition at an output away from the NaN/inf */
    int64_t o = oc - 1, oy = oh - 1, ox = 0;
    double sum = b[o];
    for (int64_t ic = 0; ic < c; ic++)
        for (int64_t ky = 0; ky < k; ky++)
            for (int64_t kx = 0; kx < k; kx++) {
                int64_t iy = oy * s - pad + ky, ix = ox * s - pad + kx;
                if (iy >= 0 && iy < h && ix >= 0 && ix < w) sum += (double)wt[((o * c + ic) * k + ky) * k + kx] * x[(ic * h + iy) * w + ix];
            }
    int64_t at = (o * oh + oy) * ow + ox;
    if (with_res) sum += res[at];
    double want = act == RS_ACT_RELU ? (sum > 0 ? sum : 0) : act == RS_ACT_SIGMOID ? 1 / (1 + exp(-sum)) : sum;
    if (isfinite(y2[at])) cr_expect_lt(fabs(y2[at] - want), 1e-4 * (1 + fabs(want)), "got %g want %g", (double)y2[at], want);
    /* every scratch size from too little for the split rows up: each picks
     * a path (taps from the input rows; split rows with each block's
     * weights gathered per block; split rows with every block's weights at
     * once, row by row) and each gives method 1's bits */
    for (size_t tight = 256; tight < per; tight += tight / 4 + 64) {
        rk_ctx t1 = {1, NULL, scratch, tight}, t2 = {2, pool, scratch, tight};
        for (int nt = 1; nt <= 2; nt++) {
            for (size_t i = 0; i < ny; i++) y2[i] = 5.0f;
            int st = rk_conv2d_f32(nt == 1 ? &t1 : &t2, &p, ins, OUT(y2));
#if !defined(__AVX512F__)
            /* without room for the split rows it is method 1, which needs all of per */
            if (st == RLX_E_ARG) continue;
#endif
            cr_assert_eq(st, 0, "scratch %zu", tight);
            size_t bad = ny;
            for (size_t i = 0; i < ny && bad == ny; i++)
                if (memcmp(&y1[i], &y2[i], 4)) bad = i;
            cr_expect_eq(bad, ny, "k=%lld s=%lld threads=%d scratch %zu: element %zu differs", (long long)k,
                         (long long)s, nt, tight, bad);
        }
    }
    p.a_packed = 1;   /* method 2 takes unpacked weights only */
    cr_expect_eq(rk_conv2d_f32(&one, &p, ins, OUT(y2)), RLX_E_ARG);
    rk_pool_free(pool);
    free(x), free(wt), free(b), free(res), free(y1), free(y2), free(scratch);
}

Test(conv_turned, stem_direct_equals_gemm) {
    stem_case(3, 23, 37, 32, 3, 2, 1, RS_ACT_RELU, 0, 1);
    stem_case(3, 30, 41, 16, 7, 2, 3, RS_ACT_SIGMOID, 1, 1);
    stem_case(2, 9, 21, 16, 3, 1, 1, RS_ACT_NONE, 1, 1);
    stem_case(4, 12, 50, 48, 5, 2, 0, RS_ACT_RELU, 0, 1);
    stem_case(3, 21, 64, 32, 7, 2, 3, RS_ACT_RELU, 0, 3);
    stem_case(3, 8, 40, 16, 7, 2, 3, RS_ACT_RELU, 0, 2);   /* every row of an image in the slots at once */
    /* split rows in groups of strips: 8 strips (3 + 3 + 2, the last one
     * column wide), 3 (one group of 3), 5 (3 + 2) */
    stem_case(3, 9, 225, 32, 7, 2, 3, RS_ACT_RELU, 0, 1);
    stem_case(3, 7, 96, 16, 3, 2, 1, RS_ACT_NONE, 1, 1);
    stem_case(3, 6, 130, 16, 3, 2, 1, RS_ACT_SIGMOID, 1, 2);
}
