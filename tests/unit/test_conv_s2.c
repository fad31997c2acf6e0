/* test_conv_s2.c - conv2d_f32's GEMM method at column stride 2, whose
 * im2col splits each input row into its even and odd columns and copies
 * each tap's run from them, zeros of the padding included (rk_convgemm.c,
 * im2col_s2).
 *
 * Each geometry runs through rk_conv2d_f32 and, independently, through a
 * column matrix built here by the definition (input pixel or 0, tap by tap)
 * and the same GEMM call: the two must agree bit for bit, at 1 and 3 threads
 * and with the plane cut into column blocks that start mid-row. Both are
 * also checked against a double-precision sum. Geometries: widths odd and
 * even from 1 to 70 and one wider than the split rows hold (the plain
 * im2col then), kernels 1 to 5 wide, left pads 0 to 3 with other right pads,
 * dilation 2, row strides 1 to 3, groups, a batch. NaN and inf sit in the
 * first and last columns, where a tap that read the row's neighbour or the
 * padding's place would show.
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

#define OUT(...) ((void *const[]){__VA_ARGS__})

static uint32_t rng_state = 777u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, c, h, w, oc, kh, kw, sh, pt, pb, pl, pr, dh, dw, group, nblk;
} Geo;

/* input pixel (iy, ix) of channel plane xc, 0 outside */
static float at(const Geo *g, const float *xc, int64_t iy, int64_t ix) {
    return iy < 0 || iy >= g->h || ix < 0 || ix >= g->w ? 0.0f : xc[iy * g->w + ix];
}

static void run_geo(const Geo *g0) {
    Geo gg = *g0, *g = &gg;
    if (!g->group) g->group = 1;
    if (!g->dh) g->dh = 1;
    if (!g->dw) g->dw = 1;
    if (!g->n) g->n = 1;
    int64_t oh = (g->h + g->pt + g->pb - g->dh * (g->kh - 1) - 1) / g->sh + 1;
    int64_t ow = (g->w + g->pl + g->pr - g->dw * (g->kw - 1) - 1) / 2 + 1;
    cr_assert(oh > 0 && ow > 0);
    int64_t cg = g->c / g->group, ocg = g->oc / g->group, kdim = cg * g->kh * g->kw, ncols = oh * ow;
    int64_t nblk = g->nblk ? g->nblk : ncols;
    size_t nx = (size_t)(g->n * g->c * g->h * g->w), nw = (size_t)(g->oc * kdim), ny = (size_t)(g->n * g->oc * ncols);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)g->oc * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) w[i] = frand() * 0.25f;
    for (int64_t i = 0; i < g->oc; i++) b[i] = frand();
    /* specials at row ends: channel 0 row 0 first column NaN, the last channel's last row last column inf */
    x[0] = NAN;
    x[nx - 1] = INFINITY;

    /* the definition's column matrix and the same GEMM, per image and group */
    float *col = malloc((size_t)(kdim * ncols) * 4), *want = malloc(ny * 4);
    void *gs = malloc(rk_sgemm_scratch_size(ocg, ncols, kdim));
    RefErr err = {0, 0};
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t gi = 0; gi < g->group; gi++) {
            const float *xg = x + (n * g->c + gi * cg) * g->h * g->w;
            for (int64_t ic = 0; ic < cg; ic++)
                for (int64_t ky = 0; ky < g->kh; ky++)
                    for (int64_t kx = 0; kx < g->kw; kx++)
                        for (int64_t oy = 0; oy < oh; oy++)
                            for (int64_t ox = 0; ox < ow; ox++)
                                col[((ic * g->kh + ky) * g->kw + kx) * ncols + oy * ow + ox] =
                                    at(g, xg + ic * g->h * g->w, oy * g->sh - g->pt + ky * g->dh,
                                       ox * 2 - g->pl + kx * g->dw);
            float *y = want + (n * g->oc + gi * ocg) * ncols;
            rk_sgemm_args a = {.m = ocg, .n = ncols, .k = kdim, .alpha = 1.0f, .a = w + gi * ocg * kdim,
                               .lda = kdim, .b = col, .ldb = ncols, .c = y, .ldc = ncols, .bias = b + gi * ocg};
            rk_sgemm_ex(&a, gs, 1, NULL, NULL);
            /* and against the sum in double */
            for (int64_t o = 0; o < ocg; o++)
                for (int64_t j = 0; j < ncols; j++) {
                    double s = b[gi * ocg + o];
                    for (int64_t r = 0; r < kdim; r++) s += (double)w[(gi * ocg + o) * kdim + r] * col[r * ncols + j];
                    ref_compare(&err, s, y[o * ncols + j]);
                }
        }
    cr_expect_lt(err.worst, 1e-5, "reference GEMM vs double: %g", err.worst);
    cr_expect_eq(err.special_wrong, 0);

    rk_conv2d_f32_params p = {.n = g->n, .c = g->c, .h = g->h, .w = g->w, .oc = g->oc, .oh = oh, .ow = ow,
                              .kh = g->kh, .kw = g->kw, .sh = g->sh, .sw = 2, .pt = g->pt, .pl = g->pl,
                              .dh = g->dh, .dw = g->dw, .group = g->group, .has_bias = 1, .method = 1,
                              .nblk = nblk};
    size_t per = rk_conv2d_scratch(ocg, kdim, nblk, 0);
    uint8_t *scratch = malloc(per * 3);
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    float *got = malloc(ny * 4);
    for (int nt = 1; nt <= 3; nt += 2) {
        rk_ctx ctx = {nt, nt > 1 ? pool : NULL, scratch, per};
        for (size_t i = 0; i < ny; i++) got[i] = 12345.0f;
        cr_assert_eq(rk_conv2d_f32(&ctx, &p, (const void *[]){x, w, b}, OUT(got)), 0);
        size_t bad = ny;
        for (size_t i = 0; i < ny && bad == ny; i++)
            if (memcmp(&got[i], &want[i], 4)) bad = i;
        cr_expect_eq(bad, ny,
                     "h=%lld w=%lld k=%lldx%lld sh=%lld pads %lld/%lld dil %lld/%lld nblk=%lld threads=%d: "
                     "element %zu is %.9g, want %.9g",
                     (long long)g->h, (long long)g->w, (long long)g->kh, (long long)g->kw, (long long)g->sh,
                     (long long)g->pt, (long long)g->pl, (long long)g->dh, (long long)g->dw, (long long)nblk, nt, bad,
                     bad < ny ? (double)got[bad] : 0.0, bad < ny ? (double)want[bad] : 0.0);
    }
    rk_pool_free(pool);
    free(x), free(w), free(b), free(col), free(want), free(gs), free(scratch), free(got);
}

Test(conv_s2, widths_kernels_pads) {
    /* every width 1..70 at 3x3 pad 1 (ResNet's downsampling shape) */
    for (int64_t w = 1; w <= 70; w++) {
        Geo g = {.c = 3, .h = 5, .w = w, .oc = 5, .kh = 3, .kw = 3, .sh = 2, .pt = 1, .pb = 1, .pl = 1, .pr = 1};
        run_geo(&g);
    }
    /* kernels 1..5 wide, left pads 0..3, right pads that differ */
    for (int64_t kw = 1; kw <= 5; kw++)
        for (int64_t pl = 0; pl <= 3; pl++)
            for (int64_t w = 9; w <= 12; w++) {
                if (w + pl + (pl + 1) % 3 < kw) continue;
                Geo g = {.c = 2, .h = 6, .w = w, .oc = 3, .kh = 2, .kw = kw, .sh = 1, .pt = 1, .pb = 0,
                         .pl = pl, .pr = (pl + 1) % 3};
                run_geo(&g);
            }
}

Test(conv_s2, dilation_row_strides_groups_batch) {
    Geo a = {.c = 4, .h = 11, .w = 13, .oc = 6, .kh = 3, .kw = 3, .sh = 3, .pt = 2, .pb = 2, .pl = 2, .pr = 2,
             .dh = 2, .dw = 2};
    run_geo(&a);
    Geo b = {.n = 2, .c = 8, .h = 9, .w = 14, .oc = 12, .kh = 3, .kw = 3, .sh = 2, .pt = 1, .pb = 1, .pl = 1,
             .pr = 1, .group = 4};
    run_geo(&b);
    Geo c = {.c = 16, .h = 14, .w = 14, .oc = 20, .kh = 1, .kw = 1, .sh = 2};   /* 1x1 stride 2 (downsample) */
    run_geo(&c);
}

Test(conv_s2, column_blocks_mid_row) {
    /* 28x28 outputs in blocks of 48 and 100 columns: blocks start and end inside rows */
    Geo g = {.c = 8, .h = 56, .w = 56, .oc = 16, .kh = 3, .kw = 3, .sh = 2, .pt = 1, .pb = 1, .pl = 1, .pr = 1,
             .nblk = 48};
    run_geo(&g);
    g.nblk = 100;
    run_geo(&g);
}

Test(conv_s2, wider_than_split_rows) {
    /* 2100 columns: more than the split rows hold, the plain im2col */
    Geo g = {.c = 2, .h = 3, .w = 2100, .oc = 4, .kh = 3, .kw = 3, .sh = 2, .pt = 1, .pb = 1, .pl = 1, .pr = 1};
    run_geo(&g);
}

/* Output channels split over threads (few columns, many channels: 7x7
 * planes of 96 channels) with pre-packed weights: where thread 0's scratch
 * has room, the threads pack B once together (rk_convgemm.c, pack_task)
 * and every GEMM reads it. A 1x1 stride-1 layer reads its input as B; a
 * 3x3 stride-2 padded one builds a shared im2col first. K = 600 and 1152
 * are 3 and 5 K blocks, 49 columns end in a 1-column panel. At 1, 2 and 3
 * threads, with the room and without it, the output must be the reference
 * GEMM's bit for bit (the definition's column matrix, weights unpacked). */
static void shared_b_case(int64_t c, int64_t h, int64_t k, int64_t s, int64_t pad) {
    int64_t oc = 96, oh = (h + 2 * pad - k) / s + 1, ow = oh, ncols = oh * ow, kdim = c * k * k;
    size_t nx = (size_t)(c * h * h), nw = (size_t)(oc * kdim), ny = (size_t)(oc * ncols);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)oc * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) w[i] = frand() * 0.25f;
    for (int64_t i = 0; i < oc; i++) b[i] = frand();
    float *col = malloc((size_t)(kdim * ncols) * 4), *want = malloc(ny * 4), *got = malloc(ny * 4);
    for (int64_t ic = 0; ic < c; ic++)
        for (int64_t ky = 0; ky < k; ky++)
            for (int64_t kx = 0; kx < k; kx++)
                for (int64_t oy = 0; oy < oh; oy++)
                    for (int64_t ox = 0; ox < ow; ox++) {
                        int64_t iy = oy * s - pad + ky, ix = ox * s - pad + kx;
                        col[((ic * k + ky) * k + kx) * ncols + oy * ow + ox] =
                            iy < 0 || iy >= h || ix < 0 || ix >= h ? 0.0f : x[(ic * h + iy) * h + ix];
                    }
    void *gs = malloc(rk_sgemm_scratch_size(oc, ncols, kdim));
    rk_sgemm_args a = {.m = oc, .n = ncols, .k = kdim, .alpha = 1.0f, .a = w, .lda = kdim, .b = col,
                       .ldb = ncols, .c = want, .ldc = ncols, .bias = b, .act = RS_ACT_RELU};
    rk_sgemm_ex(&a, gs, 1, NULL, NULL);
    float *wp = malloc(rk_sgemm_packed_a_size(oc, kdim));
    rk_sgemm_pack_a(oc, kdim, w, kdim, 0, wp);
    rk_conv2d_f32_params p = {.n = 1, .c = c, .h = h, .w = h, .oc = oc, .oh = oh, .ow = ow, .kh = k, .kw = k,
                              .sh = s, .sw = s, .pt = pad, .pl = pad, .dh = 1, .dw = 1, .group = 1, .has_bias = 1,
                              .act = RS_ACT_RELU, .method = 1, .a_packed = 1, .nblk = ncols};
    size_t base = rk_conv2d_scratch(oc, kdim, ncols, 0), room = base + rk_sgemm_packed_b_size(ncols, kdim) + 128;
    uint8_t *scratch = malloc(room * 3);
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    for (int nt = 1; nt <= 3; nt++)
        for (int roomy = 0; roomy <= 1; roomy++) {
            rk_ctx ctx = {nt, nt > 1 ? pool : NULL, scratch, roomy ? room : base};
            for (size_t i = 0; i < ny; i++) got[i] = 12345.0f;
            cr_assert_eq(rk_conv2d_f32(&ctx, &p, (const void *[]){x, wp, b}, OUT(got)), 0);
            size_t bad = ny;
            for (size_t i = 0; i < ny && bad == ny; i++)
                if (memcmp(&got[i], &want[i], 4)) bad = i;
            cr_expect_eq(bad, ny, "c=%lld %lldx%lld s%lld threads=%d room=%d: element %zu is %.9g, want %.9g",
                         (long long)c, (long long)k, (long long)k, (long long)s, nt, roomy, bad,
                         bad < ny ? (double)got[bad] : 0.0, bad < ny ? (double)want[bad] : 0.0);
        }
    rk_pool_free(pool);
    free(x), free(w), free(b), free(col), free(want), free(got), free(gs), free(wp), free(scratch);
}

Test(conv_s2, threads_share_packed_b) {
    shared_b_case(600, 7, 1, 1, 0);    /* 1x1: B is the input */
    shared_b_case(128, 14, 3, 2, 1);   /* 3x3 stride 2: B is the shared im2col */
}

/* Small weights on a large plane (a SqueezeNet expansion: 16 input channels,
 * 55x55 = 3025 columns; a 3x3 over 4 channels on 40x40): the plan cuts the
 * columns into RK_RUNS blocks per thread (rk_convgemm.c, plan_gemm), which
 * threads take and give up in runs. The same harness: at 1, 2 and 3
 * threads the output must be the reference GEMM's bit for bit. */
Test(conv_s2, small_weights_many_column_blocks) {
    shared_b_case(16, 55, 1, 1, 0);
    shared_b_case(4, 40, 3, 1, 1);
}
