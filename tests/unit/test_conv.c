/* test_conv.c - the conv family: the kernels of runtime_min/rk_conv.c
 * (pool_nd, conv_nd_f32, conv_transpose_f32) on small inputs, and the shape
 * inference of ext_conv.c and rlx_conv_geometry on graphs built with the IR
 * API.
 *
 * Expected values are worked out by hand in the comments, or with
 * /usr/bin/python3 numpy where a comment says so. The 3-D convolution and
 * the transposed convolution are also compared with naive references that
 * follow the ONNX definitions directly (the transposed one as a gather over
 * the output, not the kernel's scatter), on geometries that mix stride,
 * padding, dilation and groups.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx.h"
#define TG_PASSES (0)
#include "testgraph.h"

static rk_ctx ctx = {1};

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

static void expect_floats(const float *got, const float *want, int n, float tol) {
    for (int i = 0; i < n; i++) {
        float scale = fabsf(want[i]) > 1 ? fabsf(want[i]) : 1;
        cr_expect(fabsf(got[i] - want[i]) <= tol * scale, "element %d: got %.9g, want %.9g", i, (double)got[i],
                  (double)want[i]);
    }
}

static void expect_i64(const int64_t *got, const int64_t *want, int n) {
    for (int i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "element %d: got %lld, want %lld", i, (long long)got[i], (long long)want[i]);
}

static void iota(float *x, int n, float first) {
    for (int i = 0; i < n; i++) x[i] = first + (float)i;
}

/* A 2-D pool_nd: the leading spatial axis has size 1. */
static rk_pool_nd_params pool2d(int op, int64_t nc, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t k, int64_t s,
                                int64_t pad_begin, int64_t pad_end) {
    rk_pool_nd_params p = {.dtype = RLX_F32, .op = op, .nc = nc, .in_dims = {1, h, w}, .out_dims = {1, oh, ow},
                           .k = {1, k, k}, .s = {1, s, s}, .d = {1, 1, 1}, .pb = {0, pad_begin, pad_begin},
                           .pe = {0, pad_end, pad_end}, .p = 2};
    return p;
}

/* A 1-D pool_nd over n elements. */
static rk_pool_nd_params pool1d(int op, int dtype, int64_t n, int64_t on, int64_t k, int64_t pb, int64_t pe) {
    rk_pool_nd_params p = {.dtype = dtype, .op = op, .nc = 1, .in_dims = {1, 1, n}, .out_dims = {1, 1, on},
                           .k = {1, 1, k}, .s = {1, 1, 1}, .d = {1, 1, 1}, .pb = {0, 0, pb}, .pe = {0, 0, pe}, .p = 2};
    return p;
}

/* ---- max pooling ---- */

Test(conv_kernels, maxpool_pads_ceil_and_indices) {
    /* 2 channels of 4x4: channel 0 = 1..16 (max at the bottom-right tap of each window),
     * channel 1 = -(1..16) (max at the top-left tap). Kernel 3, stride 2, pads 1 on top/left,
     * 3 outputs per axis as with ceil_mode (the last window covers row/col 3 only).
     * Windows: rows {-1..1, 1..3, 3..5} -> in-image rows {0-1, 1-3, 3}. */
    float x[32], y[18];
    int64_t idx[18];
    iota(x, 16, 1);
    for (int i = 0; i < 16; i++) x[16 + i] = -(float)(i + 1);
    rk_pool_nd_params p = pool2d(0, 2, 4, 4, 3, 3, 3, 2, 1, 0);
    p.has_indices = 1;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y, idx)), 0);
    /* channel 0: x[r][c] at r, c in {1, 3, 3}: 6 8 8 / 14 16 16 / 14 16 16, index 4r + c
     * channel 1: x[r][c] at r, c in {0, 1, 3}: -1 -2 -4 / -5 -6 -8 / -13 -14 -16, index 16 + 4r + c */
    expect_floats(y, (float[]){6, 8, 8, 14, 16, 16, 14, 16, 16, -1, -2, -4, -5, -6, -8, -13, -14, -16}, 18, 0);
    expect_i64(idx, (int64_t[]){5, 7, 7, 13, 15, 15, 13, 15, 15, 16, 17, 19, 20, 21, 23, 28, 29, 31}, 18);

    /* column-major indices (storage_order 1): 16q + 4c + r */
    p.storage_order = 1;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y, idx)), 0);
    expect_i64(idx, (int64_t[]){5, 13, 13, 7, 15, 15, 7, 15, 15, 16, 20, 28, 17, 21, 29, 19, 23, 31}, 18);

    /* padding is -inf, not 0: an all-negative window next to the pad keeps its negative max */
    cr_expect_eq(y[9], -1);

    /* NaN in a window propagates */
    x[5] = NAN; /* row 1, col 1: in windows (0,0), (0,1), (1,0), (1,1) */
    p.has_indices = 0;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y, NULL)), 0);
    cr_expect(isnan(y[0]) && isnan(y[1]) && isnan(y[3]) && isnan(y[4]));
    cr_expect_eq(y[2], 8);
}

Test(conv_kernels, maxpool_onnx_precomputed_strides) {
    /* ONNX test_maxpool_with_argmax_2d_precomputed_strides (libonnx-testdata): 5x5 1..25,
     * kernel 2, stride 2, storage_order 1 -> y [[7, 9], [17, 19]], indices [[6, 16], [8, 18]] */
    float x[25], y[4];
    int64_t idx[4];
    iota(x, 25, 1);
    rk_pool_nd_params p = pool2d(0, 1, 5, 5, 2, 2, 2, 2, 0, 0);
    p.has_indices = 1;
    p.storage_order = 1;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y, idx)), 0);
    expect_floats(y, (float[]){7, 9, 17, 19}, 4, 0);
    expect_i64(idx, (int64_t[]){6, 16, 8, 18}, 4);
}

Test(conv_kernels, maxpool_3d_dilated_indices) {
    /* 2x2x3 (z, y, x) input, value 100 at (z 1, y 0, x 2), the rest 0..11 by position.
     * Kernel (2, 2, 2), dilation (1, 1, 2): one window over x in {0, 2}, all z, y; out (1, 1, 1).
     * Row-major index of (1, 0, 2) = (1*2 + 0)*3 + 2 = 8; column-major (x slowest, z fastest):
     * (x*2 + y)*2 + z = (2*2 + 0)*2 + 1 = 9 */
    float x[12], y[1];
    int64_t idx[1];
    iota(x, 12, 0);
    x[8] = 100;
    rk_pool_nd_params p = {.dtype = RLX_F32, .op = 0, .nc = 1, .in_dims = {2, 2, 3}, .out_dims = {1, 1, 1},
                           .k = {2, 2, 2}, .s = {1, 1, 1}, .d = {1, 1, 2}, .has_indices = 1};
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y, idx)), 0);
    cr_expect_eq(y[0], 100);
    cr_expect_eq(idx[0], 8);
    p.storage_order = 1;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y, idx)), 0);
    cr_expect_eq(idx[0], 9);
    /* without the 100: the max of the taps x in {0, 2} is x[11] = 11 (z 1, y 1, x 2) */
    x[8] = 8;
    p.storage_order = 0;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y, idx)), 0);
    cr_expect_eq(y[0], 11);
    cr_expect_eq(idx[0], 11);
}

Test(conv_kernels, maxpool_dilated_with_padding) {
    /* [10, 1, 2, 3] (after a sentinel 100 that must never be read), kernel 2, dilation 2,
     * pad 1 at the begin: windows at -1, 0, 1 tap {-1, 1}, {0, 2}, {1, 3} -> 1, 10, 3 */
    float buf[5] = {100, 10, 1, 2, 3}, y[3];
    rk_pool_nd_params p = pool1d(0, RLX_F32, 4, 3, 2, 1, 0);
    p.d[2] = 2;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(buf + 1), OUT(y)), 0);
    expect_floats(y, (float[]){1, 10, 3}, 3, 0);
}

Test(conv_kernels, maxpool_integer_and_half_dtypes) {
    /* i8 [-5, -3, -4], kernel 3, pads 1+1: every window's max is -3 (padding is never 0) */
    int8_t xi[3] = {-5, -3, -4}, yi[3];
    rk_pool_nd_params p = pool1d(0, RLX_I8, 3, 3, 3, 1, 1);
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(xi), OUT(yi)), 0);
    cr_expect(yi[0] == -3 && yi[1] == -3 && yi[2] == -3);

    /* u8 [200, 7, 255, 0], kernel 2: 200, 255, 255 */
    uint8_t xu[4] = {200, 7, 255, 0}, yu[3];
    p = pool1d(0, RLX_U8, 4, 3, 2, 0, 0);
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(xu), OUT(yu)), 0);
    cr_expect(yu[0] == 200 && yu[1] == 255 && yu[2] == 255);

    /* f16 1, -2, 3 (0x3c00, 0xc000, 0x4200): max over all three is 3 (bits copied) */
    uint16_t xh[3] = {0x3c00, 0xc000, 0x4200}, yh[1];
    p = pool1d(0, RLX_F16, 3, 1, 3, 0, 0);
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(xh), OUT(yh)), 0);
    cr_expect_eq(yh[0], 0x4200);

    /* other integer dtypes are refused */
    p.dtype = RLX_I32;
    cr_expect_eq(rk_pool_nd(&ctx, &p, IN(xh), OUT(yh)), RLX_E_ARG);
}

/* ---- average and Lp pooling ---- */

Test(conv_kernels, avgpool_count_include_pad) {
    /* 4x4 1..16, kernel 3, stride 2, pads 1 all round, 2x2 outputs; window sums 14, 30, 57, 99
     * (rows 0-1 x cols 0-1: 1+2+5+6; rows 0-1 x cols 1-3: 2+3+4+6+7+8; rows 1-3 x cols 0-1;
     * rows 1-3 x cols 1-3) over 4, 6, 6, 9 in-image taps, 9 taps with padding */
    float x[16], y[9];
    iota(x, 16, 1);
    rk_pool_nd_params p = pool2d(1, 1, 4, 4, 2, 2, 3, 2, 1, 1);
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){14.0f / 4, 30.0f / 6, 57.0f / 6, 99.0f / 9}, 4, 1e-6f);
    p.count_include_pad = 1;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){14.0f / 9, 30.0f / 9, 57.0f / 9, 99.0f / 9}, 4, 1e-6f);

    /* ceil-mode geometry: 3x3 outputs; the last windows (rows/cols 3..5) pass the padded extent 5
     * and count only rows/cols 3..4 with padding: (2,2) sums 16 over 4 (with pad) or 1 (without);
     * (0,2): rows -1..1 x cols 3..4, sum 4 + 8 = 12, over 3*2 = 6 or 2 taps;
     * (2,1): rows 3..4 x cols 1..3, sum 14 + 15 + 16 = 45, over 2*3 = 6 or 3 taps */
    p.out_dims[1] = p.out_dims[2] = 3;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    cr_expect_float_eq(y[8], 4.0f, 1e-6);
    cr_expect_float_eq(y[2], 2.0f, 1e-6);
    cr_expect_float_eq(y[7], 7.5f, 1e-6);
    p.count_include_pad = 0;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    cr_expect_float_eq(y[8], 16.0f, 1e-6);
    cr_expect_float_eq(y[2], 6.0f, 1e-6);
    cr_expect_float_eq(y[7], 15.0f, 1e-6);
}

Test(conv_kernels, pool_1d_avg_lp_and_dtypes) {
    /* [1, 3, 2, 5, 4], kernel 2: max 3 3 5 5; mean 2 2.5 3.5 4.5;
     * L2 sqrt(1+9), sqrt(9+4), sqrt(4+25), sqrt(25+16); L1 4 5 7 9 */
    float x[5] = {1, 3, 2, 5, 4}, y[4];
    rk_pool_nd_params p = pool1d(0, RLX_F32, 5, 4, 2, 0, 0);
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){3, 3, 5, 5}, 4, 0);
    p.op = 1;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){2, 2.5f, 3.5f, 4.5f}, 4, 0);
    p.op = 2;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){sqrtf(10), sqrtf(13), sqrtf(29), sqrtf(41)}, 4, 1e-6f);
    p.p = 1;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){4, 5, 7, 9}, 4, 0);

    /* L3 of [-1, 2, 3] with pads 1+1 and kernel 3, padding adding 0: cbrt(1 + 8), cbrt(1 + 8 + 27),
     * cbrt(8 + 27) = 2.0800838, 3.3019273, 3.2710664 (numpy) */
    float x3[3] = {-1, 2, 3}, y3[3];
    p = pool1d(2, RLX_F32, 3, 3, 3, 1, 1);
    p.p = 3;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x3), OUT(y3)), 0);
    expect_floats(y3, (float[]){2.0800838f, 3.3019273f, 3.2710664f}, 3, 1e-6f);

    /* f64 mean of [1, 2, 4] is 7/3 in double */
    double xd[3] = {1, 2, 4}, yd[1];
    p = pool1d(1, RLX_F64, 3, 1, 3, 0, 0);
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(xd), OUT(yd)), 0);
    cr_expect_eq(yd[0], 7.0 / 3.0);

    /* f16 mean of 1, -2, 3: 2/3 rounds to 0x3955 (numpy float16) */
    uint16_t xh[3] = {0x3c00, 0xc000, 0x4200}, yh[1];
    p.dtype = RLX_F16;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(xh), OUT(yh)), 0);
    cr_expect_eq(yh[0], 0x3955);

    /* average of an integer dtype is refused */
    p.dtype = RLX_U8;
    cr_expect_eq(rk_pool_nd(&ctx, &p, IN(xh), OUT(yh)), RLX_E_ARG);
}

Test(conv_kernels, global_pool_as_one_window) {
    /* 2 planes of 4: means 2.5 and 6.5, maxima 4 and 8, L2 sqrt(30) and sqrt(174) */
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[2];
    rk_pool_nd_params p = {.dtype = RLX_F32, .op = 1, .nc = 2, .in_dims = {1, 1, 4}, .out_dims = {1, 1, 1},
                           .k = {1, 1, 4}, .s = {1, 1, 1}, .d = {1, 1, 1}, .p = 2};
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){2.5f, 6.5f}, 2, 0);
    p.op = 0;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){4, 8}, 2, 0);
    p.op = 2;
    cr_assert_eq(rk_pool_nd(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){sqrtf(30), sqrtf(174)}, 2, 1e-6f);
}

/* ---- 3-D convolution ---- */

static void conv3d_reference(const rk_conv_nd_f32_params *p, const float *x, const float *w, const float *b, float *y) {
    const int64_t *id = p->in_dims, *od = p->out_dims, *k = p->k;
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t o = 0; o < p->oc; o++)
            for (int64_t oz = 0; oz < od[0]; oz++)
                for (int64_t oy = 0; oy < od[1]; oy++)
                    for (int64_t ox = 0; ox < od[2]; ox++) {
                        double s = b ? b[o] : 0;
                        for (int64_t ic = 0; ic < cg; ic++)
                            for (int64_t kz = 0; kz < k[0]; kz++)
                                for (int64_t ky = 0; ky < k[1]; ky++)
                                    for (int64_t kx = 0; kx < k[2]; kx++) {
                                        int64_t iz = oz * p->s[0] - p->pb[0] + kz * p->d[0];
                                        int64_t iy = oy * p->s[1] - p->pb[1] + ky * p->d[1];
                                        int64_t ix = ox * p->s[2] - p->pb[2] + kx * p->d[2];
                                        if (iz < 0 || iz >= id[0] || iy < 0 || iy >= id[1] || ix < 0 || ix >= id[2])
                                            continue;
                                        int64_t c = (o / ocg) * cg + ic;
                                        s += (double)x[(((n * p->c + c) * id[0] + iz) * id[1] + iy) * id[2] + ix] *
                                             w[(((o * cg + ic) * k[0] + kz) * k[1] + ky) * k[2] + kx];
                                    }
                        y[(((n * p->oc + o) * od[0] + oz) * od[1] + oy) * od[2] + ox] = (float)s;
                    }
}

Test(conv_kernels, conv3d_box_and_reference) {
    /* 2x2x2 of ones over 1..8, no pads: one output, 36; pads 1 on every side with stride 2:
     * 2x2x2 outputs, each window sees one corner of the cube: 1, 2, 3, ..., 8 */
    float x[8], ones[8], y[8];
    iota(x, 8, 1);
    for (int i = 0; i < 8; i++) ones[i] = 1;
    rk_conv_nd_f32_params p = {.n = 1, .c = 1, .oc = 1, .group = 1, .in_dims = {2, 2, 2}, .out_dims = {1, 1, 1},
                               .k = {2, 2, 2}, .s = {1, 1, 1}, .d = {1, 1, 1}};
    cr_assert_eq(rk_conv_nd_f32(&ctx, &p, IN(x, ones), OUT(y)), 0);
    cr_expect_eq(y[0], 36);
    p.out_dims[0] = p.out_dims[1] = p.out_dims[2] = 2;
    p.s[0] = p.s[1] = p.s[2] = 2;
    p.pb[0] = p.pb[1] = p.pb[2] = 1;
    cr_assert_eq(rk_conv_nd_f32(&ctx, &p, IN(x, ones), OUT(y)), 0);
    expect_floats(y, (float[]){1, 2, 3, 4, 5, 6, 7, 8}, 8, 0);

    /* n 2, c 4 in 2 groups, 6 outputs, 5x6x7 input, kernel 2x3x2, strides (1, 2, 2),
     * dilations (2, 1, 1), pads begin (1, 1, 0) end (0, 1, 1):
     * oz = (5 + 1 - 3) / 1 + 1 = 4, oy = (6 + 2 - 3) / 2 + 1 = 3, ox = (7 + 1 - 2) / 2 + 1 = 4 */
    rk_conv_nd_f32_params q = {.n = 2, .c = 4, .oc = 6, .group = 2, .has_bias = 1, .in_dims = {5, 6, 7},
                               .out_dims = {4, 3, 4}, .k = {2, 3, 2}, .s = {1, 2, 2}, .d = {2, 1, 1}, .pb = {1, 1, 0}};
    enum { NX = 2 * 4 * 5 * 6 * 7, NW = 6 * 2 * 2 * 3 * 2, NY = 2 * 6 * 4 * 3 * 4 };
    static float xb[NX], wb[NW], yb[NY], want[NY];
    float b[6];
    for (int i = 0; i < NX; i++) xb[i] = (float)((i * 37) % 23) - 11;
    for (int i = 0; i < NW; i++) wb[i] = (float)((i * 13) % 7) * 0.25f - 0.75f;
    for (int i = 0; i < 6; i++) b[i] = (float)i - 2.5f;
    cr_assert_eq(rk_conv_nd_f32(&ctx, &q, IN(xb, wb, b), OUT(yb)), 0);
    conv3d_reference(&q, xb, wb, b, want);
    expect_floats(yb, want, NY, 1e-5f);

    q.group = 3; /* does not divide c */
    cr_expect_eq(rk_conv_nd_f32(&ctx, &q, IN(xb, wb, b), OUT(yb)), RLX_E_ARG);
}

/* ---- transposed convolution ---- */

/* y[o] = bias + sum over (i, t) with i*s - pb + t*d == o of x[i] * w[t], per axis: a gather
 * over the output, the definition read the other way round from the kernel's scatter. */
static void convt_reference(const rk_conv_transpose_f32_params *p, const float *x, const float *w, const float *b,
                            float *y) {
    const int64_t *id = p->in_dims, *od = p->out_dims, *k = p->k;
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t o = 0; o < p->oc; o++)
            for (int64_t oz = 0; oz < od[0]; oz++)
                for (int64_t oy = 0; oy < od[1]; oy++)
                    for (int64_t ox = 0; ox < od[2]; ox++) {
                        double s = b ? b[o] : 0;
                        int64_t g = o / ocg;
                        for (int64_t ic = 0; ic < cg; ic++)
                            for (int64_t kz = 0; kz < k[0]; kz++)
                                for (int64_t ky = 0; ky < k[1]; ky++)
                                    for (int64_t kx = 0; kx < k[2]; kx++) {
                                        int64_t nz = oz + p->pb[0] - kz * p->d[0];
                                        int64_t ny = oy + p->pb[1] - ky * p->d[1];
                                        int64_t nx = ox + p->pb[2] - kx * p->d[2];
                                        if (nz < 0 || ny < 0 || nx < 0 || nz % p->s[0] || ny % p->s[1] ||
                                            nx % p->s[2])
                                            continue;
                                        int64_t iz = nz / p->s[0], iy = ny / p->s[1], ix = nx / p->s[2];
                                        if (iz >= id[0] || iy >= id[1] || ix >= id[2]) continue;
                                        int64_t c = g * cg + ic;
                                        s += (double)x[(((n * p->c + c) * id[0] + iz) * id[1] + iy) * id[2] + ix] *
                                             w[(((c * ocg + o % ocg) * k[0] + kz) * k[1] + ky) * k[2] + kx];
                                    }
                        y[(((n * p->oc + o) * od[0] + oz) * od[1] + oy) * od[2] + ox] = (float)s;
                    }
}

Test(conv_kernels, conv_transpose_1d_by_hand) {
    /* x [1, 2, 3], w [1, 1, 1]: stride 1 -> [1, 3, 6, 5, 3];
     * stride 2 -> taps at 2i + t: [1, 1, 1+2, 2, 2+3, 3, 3] = [1, 1, 3, 2, 5, 3, 3];
     * stride 2 with pads 1+1 -> the middle five [1, 3, 2, 5, 3]; bias 0.5 everywhere */
    float x[3] = {1, 2, 3}, w[3] = {1, 1, 1}, bias[1] = {0.5f}, y[7];
    rk_conv_transpose_f32_params p = {.n = 1, .c = 1, .oc = 1, .group = 1, .in_dims = {1, 1, 3},
                                      .out_dims = {1, 1, 5}, .k = {1, 1, 3}, .s = {1, 1, 1}, .d = {1, 1, 1}};
    cr_assert_eq(rk_conv_transpose_f32(&ctx, &p, IN(x, w), OUT(y)), 0);
    expect_floats(y, (float[]){1, 3, 6, 5, 3}, 5, 0);
    p.s[2] = 2;
    p.out_dims[2] = 7;
    cr_assert_eq(rk_conv_transpose_f32(&ctx, &p, IN(x, w), OUT(y)), 0);
    expect_floats(y, (float[]){1, 1, 3, 2, 5, 3, 3}, 7, 0);
    p.out_dims[2] = 5;
    p.pb[2] = 1;
    p.has_bias = 1;
    cr_assert_eq(rk_conv_transpose_f32(&ctx, &p, IN(x, w, bias), OUT(y)), 0);
    expect_floats(y, (float[]){1.5f, 3.5f, 2.5f, 5.5f, 3.5f}, 5, 0);
}

Test(conv_kernels, conv_transpose_matches_reference) {
    /* n 2, c 4 in 2 groups, 6 outputs (3 per group), 3x4x3 input, kernel 2x3x2, strides (2, 1, 3),
     * dilations (1, 2, 1), pads begin (1, 0, 2): full size s*(in-1) + (k-1)*d + 1 = 6, 9, 8;
     * outputs (5, 9, 7), i.e. end pads 0, 0, -1 (a last column only the bias reaches) */
    rk_conv_transpose_f32_params p = {.n = 2, .c = 4, .oc = 6, .group = 2, .has_bias = 1, .in_dims = {3, 4, 3},
                                      .out_dims = {5, 9, 7}, .k = {2, 3, 2}, .s = {2, 1, 3}, .d = {1, 2, 1},
                                      .pb = {1, 0, 2}};
    enum { NX = 2 * 4 * 3 * 4 * 3, NW = 4 * 3 * 2 * 3 * 2, NY = 2 * 6 * 5 * 9 * 7 };
    static float x[NX], w[NW], y[NY], want[NY];
    float b[6];
    for (int i = 0; i < NX; i++) x[i] = (float)((i * 29) % 17) - 8;
    for (int i = 0; i < NW; i++) w[i] = (float)((i * 11) % 9) * 0.25f - 1;
    for (int i = 0; i < 6; i++) b[i] = 0.5f * (float)i - 1;
    cr_assert_eq(rk_conv_transpose_f32(&ctx, &p, IN(x, w, b), OUT(y)), 0);
    convt_reference(&p, x, w, b, want);
    expect_floats(y, want, NY, 1e-5f);
}

/* The product path (col = W^T X, then col2im; rk_conv_transpose_scratch):
 * the same cases with scratch, against the double reference. Also a U-Net's
 * 2x2 stride-2 up-sampling, and a product whose col needs several chunks of
 * input rows (64 outputs x 16 taps x 160 columns = 163840 floats a row:
 * one row per chunk, plus a last one). */
static void convt_with_scratch(const rk_conv_transpose_f32_params *p, const float *x, const float *w, const float *b,
                               float *y) {
    size_t need = rk_conv_transpose_scratch(p->c, p->oc, p->group, p->k, p->in_dims);
    cr_assert(need > 0);
    uint8_t *scratch = malloc(need);
    rk_ctx sc = {1, NULL, scratch, need};
    cr_assert_eq(rk_conv_transpose_f32(&sc, p, b ? IN(x, w, b) : IN(x, w), OUT(y)), 0);
    free(scratch);
}

static void convt_case(rk_conv_transpose_f32_params p, float tol);

Test(conv_kernels, conv_transpose_product_path) {
    /* conv_transpose_matches_reference's geometry: groups, strides, dilations, pads, a negative end pad */
    convt_case((rk_conv_transpose_f32_params){.n = 2, .c = 4, .oc = 6, .group = 2, .has_bias = 1,
                                              .in_dims = {3, 4, 3}, .out_dims = {5, 9, 7}, .k = {2, 3, 2},
                                              .s = {2, 1, 3}, .d = {1, 2, 1}, .pb = {1, 0, 2}},
               1e-5f);

    /* 1-D by hand, stride 2 with pads 1 + 1: [1, 3, 2, 5, 3] + 0.5 */
    float x1[3] = {1, 2, 3}, w1[3] = {1, 1, 1}, bias1[1] = {0.5f}, y1[5];
    rk_conv_transpose_f32_params q = {.n = 1, .c = 1, .oc = 1, .group = 1, .has_bias = 1, .in_dims = {1, 1, 3},
                                      .out_dims = {1, 1, 5}, .k = {1, 1, 3}, .s = {1, 1, 2}, .d = {1, 1, 1},
                                      .pb = {0, 0, 1}};
    convt_with_scratch(&q, x1, w1, bias1, y1);
    expect_floats(y1, (float[]){1.5f, 3.5f, 2.5f, 5.5f, 3.5f}, 5, 0);
}

static void convt_case(rk_conv_transpose_f32_params p, float tol) {
    int64_t ocg = p.oc / p.group;
    int64_t nx = p.n * p.c * p.in_dims[0] * p.in_dims[1] * p.in_dims[2];
    int64_t nw = p.c * ocg * p.k[0] * p.k[1] * p.k[2], ny = p.n * p.oc * p.out_dims[0] * p.out_dims[1] * p.out_dims[2];
    float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
    float *y = malloc(sizeof(float) * (size_t)ny), *want = malloc(sizeof(float) * (size_t)ny), b[64];
    for (int64_t i = 0; i < nx; i++) x[i] = (float)((i * 37) % 23) / 11.0f - 1;
    for (int64_t i = 0; i < nw; i++) w[i] = (float)((i * 13) % 19) / 9.0f - 1;
    for (int i = 0; i < 64; i++) b[i] = 0.125f * (float)i - 2;
    convt_with_scratch(&p, x, w, p.has_bias ? b : NULL, y);
    convt_reference(&p, x, w, p.has_bias ? b : NULL, want);
    expect_floats(y, want, (int)ny, tol);
    free(x), free(w), free(y), free(want);
}

Test(conv_kernels, conv_transpose_product_unet_and_chunks) {
    /* a U-Net's up-sampling: 32 -> 16 channels, 2x2 stride 2, 12x10 -> 24x20 */
    convt_case((rk_conv_transpose_f32_params){.n = 1, .c = 32, .oc = 16, .group = 1, .has_bias = 1,
                                              .in_dims = {1, 12, 10}, .out_dims = {1, 24, 20}, .k = {1, 2, 2},
                                              .s = {1, 2, 2}, .d = {1, 1, 1}},
               1e-4f);
    /* 3x3 stride 2 pad 1 with an output padding of 1, two batches */
    convt_case((rk_conv_transpose_f32_params){.n = 2, .c = 8, .oc = 6, .group = 1, .in_dims = {1, 7, 9},
                                              .out_dims = {1, 14, 18}, .k = {1, 3, 3}, .s = {1, 2, 2},
                                              .d = {1, 1, 1}, .pb = {0, 1, 1}},
               1e-4f);
    /* several chunks: a col row of 64 x 16 x 160 floats is more than half of CT_COL_FLOATS */
    convt_case((rk_conv_transpose_f32_params){.n = 1, .c = 3, .oc = 64, .group = 1, .has_bias = 1,
                                              .in_dims = {1, 3, 160}, .out_dims = {1, 9, 320}, .k = {1, 4, 4},
                                              .s = {1, 2, 2}, .d = {1, 1, 1}, .pb = {0, 1, 1}},
               1e-4f);
}

/* ---- shape inference ---- */

#define DIMS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define IDS(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__}

static int value(const char *name, int rank, const int64_t *dims, int flags) {
    int v = rlx_value_add(g, name);
    g->v[v].dtype = RLX_F32;
    g->v[v].rank = rank;
    memcpy(g->v[v].dims, dims, sizeof(int64_t) * (size_t)rank);
    g->v[v].flags = flags;
    if (flags & RLX_V_WEIGHT) {
        g->v[v].data = rlx_alloc((size_t)rlx_value_bytes(&g->v[v]) + 1);
    } else {
        g->inputs = rlx_realloc(g->inputs, sizeof(int) * (size_t)g->ninputs, sizeof(int) * (size_t)(g->ninputs + 1));
        g->inputs[g->ninputs++] = v;
    }
    return v;
}

/* A graph x -> op -> y; returns the node. x is an input, the others weights. */
static int one_node(const char *op, int nin, const int *in) {
    int y = rlx_value_add(g, "y");
    int n = rlx_node_add(g, "n", (RlxOp)rlx_op_from_name(op), nin, in, 1, &y);
    g->outputs = rlx_alloc(sizeof(int));
    g->outputs[0] = y;
    g->noutputs = 1;
    g->v[y].flags |= RLX_V_OUTPUT;
    return n;
}

static void attr_ints(int n, const char *name, int count, const int64_t *xs) {
    RlxAttr *a = rlx_attr_add(g, n, name, RLX_A_INTS);
    a->n = count;
    a->ints = rlx_alloc(sizeof(int64_t) * (size_t)(count + 1));
    memcpy(a->ints, xs, sizeof(int64_t) * (size_t)count);
}

static void out_is(int rank, const int64_t *dims) {
    cr_assert_eq(run(), 0, "unexpected error: %s", rlx_diag.msg);
    const RlxValue *y = &g->v[g->outputs[0]];
    cr_assert_eq(y->rank, rank);
    for (int i = 0; i < rank; i++)
        cr_expect_eq(y->dims[i], dims[i], "dim %d: %lld, want %lld", i, (long long)y->dims[i], (long long)dims[i]);
}

Test(conv_infer, conv_1d_and_pool_3d) {
    /* Conv 1-D: (10 + 1 + 1 - 3) / 2 + 1 = 5 */
    g = rlx_graph_new("t.rlxg");
    int x = value("x", DIMS(1, 2, 10), 0), w = value("w", DIMS(4, 2, 3), RLX_V_WEIGHT);
    int n = one_node("Conv", IDS(x, w));
    attr_ints(n, "strides", DIMS(2));
    attr_ints(n, "pads", DIMS(1, 1));
    out_is(DIMS(1, 4, 5));

    /* MaxPool 3-D, kernel 2, stride 2 over (4, 5, 6): floor (2, 2, 3); ceil_mode (2, 3, 3) */
    for (int ceil_mode = 0; ceil_mode < 2; ceil_mode++) {
        g = rlx_graph_new("t.rlxg");
        x = value("x", DIMS(1, 1, 4, 5, 6), 0);
        n = one_node("MaxPool", IDS(x));
        attr_ints(n, "kernel_shape", DIMS(2, 2, 2));
        attr_ints(n, "strides", DIMS(2, 2, 2));
        rlx_attr_add(g, n, "ceil_mode", RLX_A_INT)->i = ceil_mode;
        if (ceil_mode) out_is(DIMS(1, 1, 2, 3, 3));
        else out_is(DIMS(1, 1, 2, 2, 3));
    }

    /* LpPool 2-D SAME_UPPER, stride 2 over 7x8: ceil(7/2), ceil(8/2) = 4, 4 */
    g = rlx_graph_new("t.rlxg");
    x = value("x", DIMS(1, 3, 7, 8), 0);
    n = one_node("LpPool", IDS(x));
    attr_ints(n, "kernel_shape", DIMS(3, 3));
    attr_ints(n, "strides", DIMS(2, 2));
    rlx_attr_add(g, n, "auto_pad", RLX_A_STRING)->s = "SAME_UPPER";
    out_is(DIMS(1, 3, 4, 4));

    /* GlobalMaxPool over 3 spatial axes */
    g = rlx_graph_new("t.rlxg");
    x = value("x", DIMS(2, 3, 4, 5, 6), 0);
    one_node("GlobalMaxPool", IDS(x));
    out_is(DIMS(2, 3, 1, 1, 1));
}

Test(conv_infer, conv_transpose_shapes) {
    /* stride 2, output_padding 1, kernel 3 over 3x3: 2*(3-1) + 1 + 3 = 8; 2 groups of
     * weights (4, 3, 3, 3): 6 output channels */
    g = rlx_graph_new("t.rlxg");
    int x = value("x", DIMS(1, 4, 3, 3), 0), w = value("w", DIMS(4, 3, 3, 3), RLX_V_WEIGHT);
    int b = value("b", DIMS(6), RLX_V_WEIGHT);
    int n = one_node("ConvTranspose", IDS(x, w, b));
    attr_ints(n, "strides", DIMS(2, 2));
    attr_ints(n, "output_padding", DIMS(1, 1));
    rlx_attr_add(g, n, "group", RLX_A_INT)->i = 2;
    out_is(DIMS(1, 6, 8, 8));

    /* output_shape wins over pads; SAME_UPPER: in * stride */
    g = rlx_graph_new("t.rlxg");
    x = value("x", DIMS(1, 1, 3, 3), 0);
    w = value("w", DIMS(1, 2, 3, 3), RLX_V_WEIGHT);
    n = one_node("ConvTranspose", IDS(x, w));
    attr_ints(n, "strides", DIMS(3, 2));
    attr_ints(n, "pads", DIMS(1, 1, 1, 1));
    attr_ints(n, "output_shape", DIMS(10, 8));
    out_is(DIMS(1, 2, 10, 8));

    g = rlx_graph_new("t.rlxg");
    x = value("x", DIMS(1, 1, 3, 3), 0);
    w = value("w", DIMS(1, 2, 3, 3), RLX_V_WEIGHT);
    n = one_node("ConvTranspose", IDS(x, w));
    attr_ints(n, "strides", DIMS(2, 2));
    rlx_attr_add(g, n, "auto_pad", RLX_A_STRING)->s = "SAME_UPPER";
    out_is(DIMS(1, 2, 6, 6));

    /* pads larger than the full size */
    g = rlx_graph_new("t.rlxg");
    x = value("x", DIMS(1, 1, 3), 0);
    w = value("w", DIMS(1, 1, 2), RLX_V_WEIGHT);
    n = one_node("ConvTranspose", IDS(x, w));
    attr_ints(n, "pads", DIMS(2, 2));
    fails_with("output axis 2 would be 0");

    /* output_padding must stay below the stride or the dilation */
    g = rlx_graph_new("t.rlxg");
    x = value("x", DIMS(1, 1, 3), 0);
    w = value("w", DIMS(1, 1, 2), RLX_V_WEIGHT);
    n = one_node("ConvTranspose", IDS(x, w));
    attr_ints(n, "output_padding", DIMS(1));
    fails_with("output_padding 1 must be smaller than the stride (1) or the dilation (1)");

    /* weights must start with the input channels */
    g = rlx_graph_new("t.rlxg");
    x = value("x", DIMS(1, 2, 3), 0);
    w = value("w", DIMS(3, 1, 2), RLX_V_WEIGHT);
    one_node("ConvTranspose", IDS(x, w));
    fails_with("must have the input's 2 channels first");
}
