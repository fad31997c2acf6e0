/* test_wino.c - the Winograd convolution kernel (runtime_min/rk_wino.c)
 * against a direct convolution summed in double here.
 *
 * Every plan shape the compiler can pick is run: m = 2 and 4, one chunk of
 * output channels or several (the last one short), tile blocks smaller than
 * the image, padding on every side or none, output sizes that are not a
 * multiple of m, a batch of two, bias + residual + an activation; and the
 * same call on one and on two threads must give identical bits.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

typedef struct rk_pool rk_pool;
int rk_pool_new(int nthreads, rk_pool **out);
void rk_pool_free(rk_pool *pool);

static uint32_t rng_state = 12345;
static float frand(void) {   /* uniform in [-1, 1) */
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffffff) / (float)(1 << 23) - 1.0f;
}

typedef struct {
    int64_t n, c, h, w, oc, pt, pl, pb, pr, m, tb, ocb;
    int bias, res, act;
} Case;

/* y = act(conv3x3(x, w) + bias + res), stride 1, in double */
static void direct(const Case *k, int64_t oh, int64_t ow, const float *x, const float *w, const float *b,
                   const float *res, double *y) {
    for (int64_t n = 0; n < k->n; n++)
        for (int64_t o = 0; o < k->oc; o++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double acc = 0;
                    for (int64_t c = 0; c < k->c; c++)
                        for (int r = 0; r < 3; r++)
                            for (int s = 0; s < 3; s++) {
                                int64_t iy = i - k->pt + r, ix = j - k->pl + s;
                                if (iy < 0 || iy >= k->h || ix < 0 || ix >= k->w) continue;
                                acc += (double)x[((n * k->c + c) * k->h + iy) * k->w + ix] *
                                       (double)w[((o * k->c + c) * 3 + r) * 3 + s];
                            }
                    int64_t at = ((n * k->oc + o) * oh + i) * ow + j;
                    if (b) acc += b[o];
                    if (res) acc += res[at];
                    if (k->act == RS_ACT_RELU && acc < 0) acc = 0;
                    if (k->act == RS_ACT_CLIP) acc = acc < -0.5 ? -0.5 : (acc > 0.5 ? 0.5 : acc);
                    y[at] = acc;
                }
}

static void run_case(const Case *k) {
    int64_t oh = k->h + k->pt + k->pb - 2, ow = k->w + k->pl + k->pr - 2;
    size_t nx = (size_t)(k->n * k->c * k->h * k->w), nw = (size_t)(k->oc * k->c * 9), ny = (size_t)(k->n * k->oc * oh * ow);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc((size_t)k->oc * 4), *res = malloc(ny * 4);
    float *y1 = malloc(ny * 4), *y2 = malloc(ny * 4);
    double *want = malloc(ny * 8);
    for (size_t i = 0; i < nx; i++) x[i] = frand();
    for (size_t i = 0; i < nw; i++) w[i] = frand() * 0.3f;
    for (int64_t i = 0; i < k->oc; i++) b[i] = frand();
    for (size_t i = 0; i < ny; i++) res[i] = frand();
    int64_t a2 = (k->m + 2) * (k->m + 2);
    float *tmp = malloc((size_t)(a2 * k->oc * k->c) * 4);
    float *u = malloc(rk_wino_weights_size(k->m, k->oc, k->c, k->ocb));
    rk_wino_pack_weights(k->m, k->oc, k->c, k->ocb, w, tmp, u);
    direct(k, oh, ow, x, w, k->bias ? b : NULL, k->res ? res : NULL, want);

    rk_conv_wino_f32_params p = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .oc = k->oc, .oh = oh, .ow = ow,
                                 .pt = k->pt, .pl = k->pl, .m = k->m, .tb = k->tb, .ocb = k->ocb,
                                 .has_bias = k->bias, .has_res = k->res, .act = k->act, .act_a = -0.5, .act_b = 0.5};
    size_t per = rk_wino_scratch(k->m, k->c, k->ocb, k->tb);
    uint8_t *scratch = malloc(per * 2);
    const void *ins[4] = {x, u, NULL, NULL};
    int next = 2;
    if (k->bias) ins[next++] = b;
    if (k->res) ins[next++] = res;
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(2, &pool), 0);
    rk_ctx one = {1, NULL, scratch, per}, two = {2, pool, scratch, per};
    cr_assert_eq(rk_conv_wino_f32(&one, &p, ins, OUT(y1)), 0);
    cr_assert_eq(rk_conv_wino_f32(&two, &p, ins, OUT(y2)), 0);
    double worst = 0;
    for (size_t i = 0; i < ny; i++) {
        double err = fabs((double)y1[i] - want[i]) / (1.0 + fabs(want[i]));
        if (err > worst) worst = err;
    }
    cr_expect_lt(worst, k->m == 4 ? 2e-5 : 1e-5, "m=%lld c=%lld oc=%lld ocb=%lld tb=%lld: worst error %g",
                 (long long)k->m, (long long)k->c, (long long)k->oc, (long long)k->ocb, (long long)k->tb, worst);
    cr_expect_eq(memcmp(y1, y2, ny * 4), 0, "two threads changed the bits");
    rk_pool_free(pool);
    free(x), free(w), free(b), free(res), free(y1), free(y2), free(want), free(tmp), free(u), free(scratch);
}

Test(wino, f4_one_chunk_padded) {
    Case k = {.n = 1, .c = 16, .h = 13, .w = 11, .oc = 24, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .m = 4, .tb = 16,
              .ocb = 24, .bias = 1, .act = RS_ACT_RELU};
    run_case(&k);
}

Test(wino, f4_chunks_blocks_asymmetric_pads_batch) {
    /* 40 output channels in chunks of 12 (the last 4), blocks of 16 tiles */
    Case k = {.n = 2, .c = 9, .h = 18, .w = 21, .oc = 40, .pt = 0, .pl = 2, .pb = 1, .pr = 0, .m = 4, .tb = 16,
              .ocb = 12, .bias = 1, .res = 1, .act = RS_ACT_RELU};
    run_case(&k);
}

Test(wino, f4_no_padding_many_tiles) {
    /* a tile row longer than the transforms' run of 64 tiles */
    Case k = {.n = 1, .c = 8, .h = 6, .w = 290, .oc = 8, .m = 4, .tb = 48, .ocb = 8};
    run_case(&k);
}

Test(wino, f2_chunks) {
    Case k = {.n = 1, .c = 32, .h = 7, .w = 7, .oc = 30, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .m = 2, .tb = 16,
              .ocb = 12, .res = 1};
    run_case(&k);
}

Test(wino, f2_odd_sizes_big_block) {
    Case k = {.n = 2, .c = 5, .h = 9, .w = 4, .oc = 7, .pt = 2, .pl = 0, .pb = 0, .pr = 2, .m = 2, .tb = 64,
              .ocb = 7, .bias = 1};
    run_case(&k);
}

/* The vector transforms (AVX-512: 16 tiles a vector, AVX2: 8) take their
 * tiles from several tile rows (here 3 or 1 tiles a row, blocks of 20 tiles:
 * 16 + 4 or 8 + 8 + 4), and fall back to the generic ones where a block's
 * padded rows exceed their staging buffer. */
Test(wino, f4_panels_across_tile_rows_clip) {
    Case k = {.n = 1, .c = 7, .h = 14, .w = 10, .oc = 19, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .m = 4, .tb = 20,
              .ocb = 12, .bias = 1, .res = 1, .act = RS_ACT_CLIP};
    run_case(&k);
}

Test(wino, f2_one_tile_a_row) {
    Case k = {.n = 1, .c = 6, .h = 41, .w = 3, .oc = 5, .pt = 1, .pl = 0, .pb = 1, .pr = 1, .m = 2, .tb = 20,
              .ocb = 5, .act = RS_ACT_CLIP};
    run_case(&k);
}

Test(wino, f4_rows_wider_than_the_staging) {
    Case k = {.n = 1, .c = 3, .h = 5, .w = 2101, .oc = 6, .pt = 1, .pl = 1, .pb = 1, .pr = 1, .m = 4, .tb = 40,
              .ocb = 6, .bias = 1, .act = RS_ACT_RELU};
    run_case(&k);
}

Test(wino, bad_params) {
    static uint8_t scratch[1 << 16];
    rk_ctx ctx = {1, NULL, scratch, sizeof scratch};
    rk_conv_wino_f32_params p = {.n = 1, .c = 4, .h = 4, .w = 4, .oc = 4, .oh = 4, .ow = 4, .pt = 1, .pl = 1,
                                 .m = 3, .tb = 16, .ocb = 4};
    float buf[64] = {0};
    cr_expect_eq(rk_conv_wino_f32(&ctx, &p, IN(buf, buf), OUT(buf)), RLX_E_ARG, "m must be 2 or 4");
    p.m = 4;
    p.tb = 1 << 20;
    cr_expect_eq(rk_conv_wino_f32(&ctx, &p, IN(buf, buf), OUT(buf)), RLX_E_ARG, "a block is at most 2048 tiles");
    p.tb = 16;
    ctx.scratch_per_thread = 16;
    cr_expect_eq(rk_conv_wino_f32(&ctx, &p, IN(buf, buf), OUT(buf)), RLX_E_ARG, "too little scratch");
}
