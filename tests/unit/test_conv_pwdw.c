/* test_conv_pwdw.c - conv_pwdw_f32: a 1x1 expansion and a depthwise 3x3 in
 * bands (rk_convgemm.c).
 *
 * It must give exactly the bits of the two separate conv2d_f32 calls (the
 * 1x1 by GEMM with its epilogue, then the depthwise), whatever the band
 * height (1 row: every band shares rows with the last; several; one band
 * for the whole plane), the stride (1, 2), the pads (1; 0 on top and left;
 * 2), a batch and the thread count; and the pair must agree with a
 * double-precision definition. NaN and inf inputs must reach the same
 * outputs. Too little scratch is refused.
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

static uint32_t rng_state = 99u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, c, h, w, e, s, pad, rows;
    int act1, act2, b1, b2;
} Case;

static double act(int a, double v) {
    if (a == RS_ACT_RELU) return v > 0 || isnan(v) ? v : 0;
    if (a == RS_ACT_CLIP) return v < 0 ? 0 : v > 6 ? 6 : v;
    if (a == RS_ACT_SILU) return v / (1 + exp(-v));
    return v;
}

static void run_case(const Case *k) {
    int64_t oh = (k->h + 2 * k->pad - 3) / k->s + 1, ow = (k->w + 2 * k->pad - 3) / k->s + 1;
    size_t nx = (size_t)(k->n * k->c * k->h * k->w), nm = (size_t)(k->n * k->e * k->h * k->w);
    size_t ny = (size_t)(k->n * k->e * oh * ow);
    float *x = malloc(nx * 4), *w1 = malloc((size_t)(k->e * k->c) * 4), *b1 = malloc((size_t)k->e * 4);
    float *w2 = malloc((size_t)(k->e * 9) * 4), *b2 = malloc((size_t)k->e * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand() * 2;
    for (int64_t i = 0; i < k->e * k->c; i++) w1[i] = frand() * 0.5f;
    for (int64_t i = 0; i < k->e; i++) b1[i] = frand(), b2[i] = i % 4 ? frand() : 0.0f;
    for (int64_t i = 0; i < k->e * 9; i++) w2[i] = frand();
    x[nx / 3] = NAN;
    x[nx - 2] = INFINITY;

    /* the definition in double */
    double *mid = malloc(nm * 8), *want = malloc(ny * 8);
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t o = 0; o < k->e; o++)
            for (int64_t i = 0; i < k->h * k->w; i++) {
                double s = k->b1 ? b1[o] : 0;
                for (int64_t ci = 0; ci < k->c; ci++) s += (double)w1[o * k->c + ci] * x[(b * k->c + ci) * k->h * k->w + i];
                mid[(b * k->e + o) * k->h * k->w + i] = act(k->act1, s);
            }
    for (int64_t b = 0; b < k->n; b++)
        for (int64_t o = 0; o < k->e; o++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double s = 0;
                    for (int t = 0; t < 9; t++) {
                        int64_t iy = oy * k->s - k->pad + t / 3, ix = ox * k->s - k->pad + t % 3;
                        if (iy >= 0 && iy < k->h && ix >= 0 && ix < k->w)
                            s += w2[o * 9 + t] * mid[((b * k->e + o) * k->h + iy) * k->w + ix];
                    }
                    if (k->b2) s += b2[o];
                    want[((b * k->e + o) * oh + oy) * ow + ox] = act(k->act2, s);
                }

    /* the two kernels apart */
    float *packed = malloc(rk_sgemm_packed_a_size(k->e, k->c));
    rk_sgemm_pack_a(k->e, k->c, w1, k->c, 0, packed);
    rk_conv2d_f32_params pw = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .oc = k->e, .oh = k->h, .ow = k->w,
                               .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .group = 1, .has_bias = k->b1,
                               .act = k->act1, .act_b = 6, .method = 1, .a_packed = 1, .nblk = k->h * k->w};
    rk_conv2d_f32_params dw = {.n = k->n, .c = k->e, .h = k->h, .w = k->w, .oc = k->e, .oh = oh, .ow = ow, .kh = 3,
                               .kw = 3, .sh = k->s, .sw = k->s, .pt = k->pad, .pl = k->pad, .dh = 1, .dw = 1,
                               .group = k->e, .has_bias = k->b2, .act = k->act2, .act_b = 6};
    size_t per = rk_conv2d_scratch(k->e, k->c, pw.nblk, 0);
    size_t per2 = rk_conv_pwdw_scratch(k->c, k->e, k->w, k->s, k->rows);
    if (per2 > per) per = per2;
    uint8_t *scratch = malloc(per * 3);
    rk_ctx one = {1, NULL, scratch, per};
    float *m = malloc(nm * 4), *apart = malloc(ny * 4), *fused = malloc(ny * 4);
    cr_assert_eq(rk_conv2d_f32(&one, &pw, (const void *const[]){x, packed, b1}, OUT(m)), 0);
    cr_assert_eq(rk_conv2d_f32(&one, &dw, (const void *const[]){m, w2, k->b2 ? (const void *)b2 : NULL}, OUT(apart)), 0);
    double worst = 0;
    size_t special = 0;
    for (size_t i = 0; i < ny; i++) {
        if (!isfinite(want[i])) {
            special += isnan(want[i]) ? !isnan(apart[i]) : (double)apart[i] != want[i];
            continue;
        }
        double err = fabs((double)apart[i] - want[i]) / (1 + fabs(want[i]));
        if (err > worst) worst = err;
    }
    cr_expect_lt(worst, 1e-5, "apart: worst error %g", worst);
    cr_expect_eq(special, 0, "apart: %zu NaN/inf outputs differ from the definition", special);

    rk_conv_pwdw_f32_params p = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .e = k->e, .has_b1 = k->b1,
                                 .act1 = k->act1, .act1_b = 6, .oh = oh, .ow = ow, .sh = k->s, .sw = k->s,
                                 .pt = k->pad, .pl = k->pad, .has_b2 = k->b2, .act2 = k->act2, .act2_b = 6,
                                 .rows = k->rows};
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
        cr_assert_eq(rk_conv_pwdw_f32(&ctx, &p, ins, OUT(fused)), 0);
        size_t bad = ny;
        for (size_t i = 0; i < ny && bad == ny; i++)
            if (memcmp(&fused[i], &apart[i], 4)) bad = i;
        cr_expect_eq(bad, ny, "s=%lld pad=%lld rows=%lld threads=%d: element %zu is %.9g, apart %.9g",
                     (long long)k->s, (long long)k->pad, (long long)k->rows, nt, bad,
                     bad < ny ? (double)fused[bad] : 0.0, bad < ny ? (double)apart[bad] : 0.0);
    }
    rk_ctx small = {1, NULL, scratch, per2 - 1};
    cr_expect_eq(rk_conv_pwdw_f32(&small, &p, ins, OUT(fused)), RLX_E_ARG);
    rk_pool_free(pool);
    free(x), free(w1), free(b1), free(w2), free(b2), free(mid), free(want), free(packed), free(scratch), free(m);
    free(apart), free(fused);
}

Test(conv_pwdw, stride2_bands_of_two_rows) {
    Case k = {.n = 1, .c = 16, .h = 23, .w = 21, .e = 40, .s = 2, .pad = 1, .rows = 2, .b1 = 1, .b2 = 1,
              .act1 = RS_ACT_CLIP, .act2 = RS_ACT_CLIP};
    run_case(&k);
}

Test(conv_pwdw, stride1_one_row_bands_batch) {
    Case k = {.n = 2, .c = 8, .h = 12, .w = 19, .e = 24, .s = 1, .pad = 1, .rows = 1, .b1 = 1, .b2 = 0,
              .act1 = RS_ACT_RELU, .act2 = RS_ACT_NONE};
    run_case(&k);
}

Test(conv_pwdw, stride1_uneven_bands_no_pad) {
    Case k = {.n = 1, .c = 24, .h = 17, .w = 33, .e = 48, .s = 1, .pad = 0, .rows = 4, .b1 = 0, .b2 = 1,
              .act1 = RS_ACT_NONE, .act2 = RS_ACT_RELU};
    run_case(&k);
}

Test(conv_pwdw, stride2_pad2_one_band) {
    Case k = {.n = 2, .c = 12, .h = 9, .w = 10, .e = 20, .s = 2, .pad = 2, .rows = 64, .b1 = 1, .b2 = 1,
              .act1 = RS_ACT_CLIP, .act2 = RS_ACT_CLIP};
    run_case(&k);
}

/* EfficientNet's blocks: SiLU after both (the depthwise's over each band
 * after its sums, four vectors at a time) */
Test(conv_pwdw, silu_both) {
    Case k = {.n = 1, .c = 16, .h = 29, .w = 30, .e = 36, .s = 1, .pad = 1, .rows = 5, .b1 = 1, .b2 = 1,
              .act1 = RS_ACT_SILU, .act2 = RS_ACT_SILU};
    run_case(&k);
    Case k2 = {.n = 1, .c = 8, .h = 15, .w = 17, .e = 20, .s = 2, .pad = 1, .rows = 3, .b1 = 0, .b2 = 1,
               .act1 = RS_ACT_NONE, .act2 = RS_ACT_SILU};
    run_case(&k2);
}
