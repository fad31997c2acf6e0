/* test_kernels.c - every kernel of runtime_min/rk_basic.c on small inputs.
 *
 * Expected values are worked out by hand from each kernel's definition (the
 * arithmetic is in the comments), or computed with /usr/bin/python3 numpy
 * where a comment says so. Convolution is also compared with a naive
 * seven-loop reference on a geometry that mixes stride, padding, dilation
 * and groups.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

/* the GEMM kernels pack into the context's scratch */
static uint8_t scratch_buf[4 << 20];
static rk_ctx ctx = {1, NULL, scratch_buf, sizeof scratch_buf};

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

static void expect_i64(const int64_t *got, const int64_t *want, int n) {
    for (int i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "element %d: got %lld, want %lld", i, (long long)got[i], (long long)want[i]);
}

/* ---- data movement ---- */

Test(kernels, copy_and_strided_copy) {
    uint8_t src[16], dst[32];
    for (int i = 0; i < 16; i++) src[i] = (uint8_t)(i + 1);
    memset(dst, 0, sizeof dst);
    rk_copy_params cp = {.nbytes = 16};
    cr_assert_eq(rk_copy(&ctx, &cp, IN(src), OUT(dst)), 0);
    cr_assert(!memcmp(dst, src, 16));

    /* two rows of 6 bytes from src+2 (stride 8) to dst+4 (stride 10) */
    memset(dst, 0, sizeof dst);
    rk_strided_copy_params sp = {.rows = 2, .row_bytes = 6, .src_stride = 8, .dst_stride = 10, .src_off = 2, .dst_off = 4};
    cr_assert_eq(rk_strided_copy(&ctx, &sp, IN(src), OUT(dst)), 0);
    uint8_t want[32] = {0, 0, 0, 0, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 11, 12, 13, 14, 15, 16};
    cr_assert(!memcmp(dst, want, 32));
}

Test(kernels, transpose_2x3x4) {
    /* in[a][b][c] = a*12 + b*4 + c; perm (2, 0, 1): out dims (4, 2, 3), out[i][j][k] = in[j][k][i] */
    float x[24], y[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i;
    rk_transpose_params p = {.esize = 4, .rank = 3, .dims = {2, 3, 4}, .perm = {2, 0, 1}};
    cr_assert_eq(rk_transpose(&ctx, &p, IN(x), OUT(y)), 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 3; k++) cr_expect_eq(y[(i * 2 + j) * 3 + k], (float)(j * 12 + k * 4 + i));
    /* the first row by hand: out[0][0][:] = in[0][0..2][0] = 0, 4, 8 */
    cr_expect(y[0] == 0 && y[1] == 4 && y[2] == 8);

    /* the same permutation on 2-byte, 8-byte and odd 3-byte elements */
    int16_t x2[24], y2[24];
    int64_t x8[24], y8[24];
    uint8_t x3[72], y3[72];
    for (int i = 0; i < 24; i++) {
        x2[i] = (int16_t)(i - 100);
        x8[i] = (int64_t)i << 40;
        x3[3 * i] = (uint8_t)i, x3[3 * i + 1] = (uint8_t)(i + 100), x3[3 * i + 2] = (uint8_t)(200 - i);
    }
    p.esize = 2;
    cr_assert_eq(rk_transpose(&ctx, &p, IN(x2), OUT(y2)), 0);
    p.esize = 8;
    cr_assert_eq(rk_transpose(&ctx, &p, IN(x8), OUT(y8)), 0);
    p.esize = 3;
    cr_assert_eq(rk_transpose(&ctx, &p, IN(x3), OUT(y3)), 0);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 3; k++) {
                int o = (i * 2 + j) * 3 + k, s = j * 12 + k * 4 + i;
                cr_expect_eq(y2[o], s - 100);
                cr_expect_eq(y8[o], (int64_t)s << 40);
                cr_expect(!memcmp(y3 + 3 * o, x3 + 3 * s, 3));
            }

    rk_transpose_params bad = {.esize = 4, .rank = 2, .dims = {2, 2}, .perm = {0, 0}};
    cr_expect_eq(rk_transpose(&ctx, &bad, IN(x), OUT(y)), RLX_E_ARG);
}

Test(kernels, slice_negative_step) {
    /* 1-D x = 0..9, start 8 step -3, 3 elements: 8, 5, 2 */
    float x[12], y[4];
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    rk_slice_params p = {.esize = 4, .rank = 1, .in_dims = {10}, .out_dims = {3}, .starts = {8}, .steps = {-3}};
    cr_assert_eq(rk_slice(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){8, 5, 2}, 3, 0);

    /* 3x4, x[r][c] = 4r + c: rows 2, 1 (step -1), columns 1, 3 (step 2) -> [[9, 11], [5, 7]] */
    rk_slice_params q = {.esize = 4, .rank = 2, .in_dims = {3, 4}, .out_dims = {2, 2}, .starts = {2, 1}, .steps = {-1, 2}};
    cr_assert_eq(rk_slice(&ctx, &q, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){9, 11, 5, 7}, 4, 0);

    /* the last taken element would be index -1 */
    rk_slice_params bad = {.esize = 4, .rank = 1, .in_dims = {10}, .out_dims = {4}, .starts = {8}, .steps = {-3}};
    cr_expect_eq(rk_slice(&ctx, &bad, IN(x), OUT(y)), RLX_E_ARG);
}

/* Steps whose products overflow 64 bits (found by the pipeline fuzz target:
 * tests/fuzz/regress/pipeline/slice_step_overflow.onnx). */
Test(kernels, slice_huge_steps) {
    float x[12], y[4] = {0};
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    /* one element taken on the axis: any step is fine and never multiplied
     * (3x4, row 1 with step 2^62, columns 0..3) */
    rk_slice_params one = {.esize = 4, .rank = 2, .in_dims = {3, 4}, .out_dims = {1, 4}, .starts = {1, 0},
                           .steps = {(int64_t)1 << 62, 1}};
    cr_assert_eq(rk_slice(&ctx, &one, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){4, 5, 6, 7}, 4, 0);
    /* 5 elements with step 2^62: 4 * 2^62 wraps to 0, which would put the
     * last element at the first and pass the bounds check */
    rk_slice_params wrap = {.esize = 4, .rank = 1, .in_dims = {5}, .out_dims = {5}, .starts = {0}, .steps = {(int64_t)1 << 62}};
    cr_expect_eq(rk_slice(&ctx, &wrap, IN(x), OUT(y)), RLX_E_ARG);
    rk_slice_params neg = {.esize = 4, .rank = 1, .in_dims = {5}, .out_dims = {2}, .starts = {4}, .steps = {INT64_MIN}};
    cr_expect_eq(rk_slice(&ctx, &neg, IN(x), OUT(y)), RLX_E_ARG);
}

/* Copies large enough to go over threads: a 4-d transpose (ShuffleNet's
 * channel shuffle, and a strided inner axis) and a slice with a negative
 * step, each element against its index by hand, at 1, 2 and 3 threads. */
Test(kernels, transpose_and_slice_over_threads) {
    enum { A0 = 2, A1 = 58, A2 = 28, A3 = 28, N = A0 * A1 * A2 * A3 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) x[i] = (float)i;
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    for (int nt = 1; nt <= 3; nt++) {
        rk_ctx c = {nt, nt > 1 ? pool : NULL, scratch_buf, sizeof scratch_buf};
        /* [2,58,28,28] -> [58,2,28,28] */
        rk_transpose_params t = {.esize = 4, .rank = 4, .dims = {A0, A1, A2, A3}, .perm = {1, 0, 2, 3}};
        memset(y, 0xff, sizeof(float) * N);
        cr_assert_eq(rk_transpose(&c, &t, IN(x), OUT(y)), 0);
        int bad = 0;
        for (int b = 0; b < A1; b++)
            for (int a = 0; a < A0; a++)
                for (int r = 0; r < A2 * A3; r++)
                    bad += y[(b * A0 + a) * A2 * A3 + r] != (float)((a * A1 + b) * A2 * A3 + r);
        cr_expect_eq(bad, 0, "%d threads: shuffle transpose: %d wrong", nt, bad);
        /* [2,58,28,28] -> [2,58,28,28] with the last two axes swapped (strided rows) */
        rk_transpose_params u = {.esize = 4, .rank = 4, .dims = {A0, A1, A2, A3}, .perm = {0, 1, 3, 2}};
        memset(y, 0xff, sizeof(float) * N);
        cr_assert_eq(rk_transpose(&c, &u, IN(x), OUT(y)), 0);
        bad = 0;
        for (int p = 0; p < A0 * A1; p++)
            for (int i = 0; i < A3; i++)
                for (int j = 0; j < A2; j++) bad += y[(p * A3 + i) * A2 + j] != (float)((p * A2 + j) * A3 + i);
        cr_expect_eq(bad, 0, "%d threads: strided transpose: %d wrong", nt, bad);
        /* channels 57, 55, .., 1 of each image: [2,58,28,28] -> [2,29,28,28] */
        rk_slice_params s = {.esize = 4, .rank = 4, .in_dims = {A0, A1, A2, A3}, .out_dims = {A0, 29, A2, A3},
                             .starts = {0, 57, 0, 0}, .steps = {1, -2, 1, 1}};
        memset(y, 0xff, sizeof(float) * N);
        cr_assert_eq(rk_slice(&c, &s, IN(x), OUT(y)), 0);
        bad = 0;
        for (int a = 0; a < A0; a++)
            for (int ch = 0; ch < 29; ch++)
                for (int r = 0; r < A2 * A3; r++)
                    bad += y[(a * 29 + ch) * A2 * A3 + r] != (float)((a * A1 + 57 - 2 * ch) * A2 * A3 + r);
        cr_expect_eq(bad, 0, "%d threads: slice: %d wrong", nt, bad);
        /* Concat's copy of each image's 58 channels into a 116-channel slot */
        rk_strided_copy_params sc = {.rows = A0, .row_bytes = (int64_t)sizeof(float) * A1 * A2 * A3,
                                     .src_stride = (int64_t)sizeof(float) * A1 * A2 * A3,
                                     .dst_stride = (int64_t)sizeof(float) * 2 * A1 * A2 * A3,
                                     .dst_off = (int64_t)sizeof(float) * A1 * A2 * A3};
        float *z = malloc(sizeof(float) * 2 * N);
        memset(z, 0xff, sizeof(float) * 2 * N);
        cr_assert_eq(rk_strided_copy(&c, &sc, IN(x), OUT(z)), 0);
        bad = 0;
        for (int a = 0; a < A0; a++)
            for (int i = 0; i < 2 * A1 * A2 * A3; i++) {
                float *at = z + a * 2 * A1 * A2 * A3 + i;
                if (i < A1 * A2 * A3) bad += memcmp(at, &(uint32_t){0xffffffffu}, 4) != 0;
                else bad += *at != (float)(a * A1 * A2 * A3 + i - A1 * A2 * A3);
            }
        cr_expect_eq(bad, 0, "%d threads: strided copy: %d wrong", nt, bad);
        free(z);
    }
    rk_pool_free(pool);
    free(x), free(y);
}

Test(kernels, gather) {
    /* data [[1,2],[3,4],[5,6]], axis 0, indices [2, -3, -1] -> rows 2, 0, 2 */
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
    int64_t idx64[3] = {2, -3, -1};
    rk_gather_params p = {.esize = 4, .outer = 1, .axis_len = 3, .inner = 2, .nidx = 3, .idx_dtype = RLX_I64};
    cr_assert_eq(rk_gather(&ctx, &p, IN(x, idx64), OUT(y)), 0);
    expect_floats(y, (float[]){5, 6, 1, 2, 5, 6}, 6, 0);

    /* axis 1 with i32 indices [-1, 0]: each row reversed */
    int32_t idx32[2] = {-1, 0};
    rk_gather_params q = {.esize = 4, .outer = 3, .axis_len = 2, .inner = 1, .nidx = 2, .idx_dtype = RLX_I32};
    cr_assert_eq(rk_gather(&ctx, &q, IN(x, idx32), OUT(y)), 0);
    expect_floats(y, (float[]){2, 1, 4, 3, 6, 5}, 6, 0);

    int64_t too_big[1] = {3}, too_small[1] = {-4};
    p.nidx = 1;
    cr_expect_eq(rk_gather(&ctx, &p, IN(x, too_big), OUT(y)), RLX_E_RANGE);
    cr_expect_eq(rk_gather(&ctx, &p, IN(x, too_small), OUT(y)), RLX_E_RANGE);
    int32_t big32[1] = {2};
    cr_expect_eq(rk_gather(&ctx, &q, IN(x, big32), OUT(y)), RLX_E_RANGE);
}

static int64_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (int64_t)u;
}

Test(kernels, pad_modes) {
    float x[3] = {1, 2, 3}, y[16];
    rk_pad_params p = {.esize = 4, .rank = 1, .mode = 0, .in_dims = {3}, .out_dims = {7}, .pads_begin = {2},
                       .value_bits = f32_bits(9.5f)};
    cr_assert_eq(rk_pad(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){9.5f, 9.5f, 1, 2, 3, 9.5f, 9.5f}, 7, 0);

    /* numpy.pad([1,2,3], (2,2), 'reflect') = [3 2 1 2 3 2 1] (/usr/bin/python3 numpy) */
    p.mode = 1;
    cr_assert_eq(rk_pad(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){3, 2, 1, 2, 3, 2, 1}, 7, 0);
    p.mode = 2;
    cr_assert_eq(rk_pad(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){1, 1, 1, 2, 3, 3, 3}, 7, 0);

    /* pads wider than the axis: numpy.pad([1,2,3], (2,5), 'reflect') = [3 2 1 2 3 2 1 2 3 2] (numpy) */
    rk_pad_params wide = {.esize = 4, .rank = 1, .mode = 1, .in_dims = {3}, .out_dims = {10}, .pads_begin = {2}};
    cr_assert_eq(rk_pad(&ctx, &wide, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){3, 2, 1, 2, 3, 2, 1, 2, 3, 2}, 10, 0);

    /* negative pads crop: begin -1, end +2 -> [2, 3, v, v] */
    rk_pad_params neg = {.esize = 4, .rank = 1, .mode = 0, .in_dims = {3}, .out_dims = {4}, .pads_begin = {-1},
                         .value_bits = f32_bits(9.5f)};
    cr_assert_eq(rk_pad(&ctx, &neg, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){2, 3, 9.5f, 9.5f}, 4, 0);

    /* reflect of a length-1 axis falls back to edge: [7] padded (2, 1) */
    float one[1] = {7};
    rk_pad_params len1 = {.esize = 4, .rank = 1, .mode = 1, .in_dims = {1}, .out_dims = {4}, .pads_begin = {2}};
    cr_assert_eq(rk_pad(&ctx, &len1, IN(one), OUT(y)), 0);
    expect_floats(y, (float[]){7, 7, 7, 7}, 4, 0);

    /* 2-D: numpy.pad([[1,2],[3,4]], ((1,0),(0,1)), 'reflect') = [[3,4,3],[1,2,1],[3,4,3]] (numpy) */
    float x2[4] = {1, 2, 3, 4};
    rk_pad_params two = {.esize = 4, .rank = 2, .mode = 1, .in_dims = {2, 2}, .out_dims = {3, 3}, .pads_begin = {1, 0}};
    cr_assert_eq(rk_pad(&ctx, &two, IN(x2), OUT(y)), 0);
    expect_floats(y, (float[]){3, 4, 3, 1, 2, 1, 3, 4, 3}, 9, 0);

    /* constant in 2-D: whole padded rows take the value; int16 elements, value -2 */
    int16_t xi[4] = {1, 2, 3, 4}, yi[12];
    rk_pad_params ci = {.esize = 2, .rank = 2, .mode = 0, .in_dims = {2, 2}, .out_dims = {3, 4}, .pads_begin = {0, 1},
                        .value_bits = 0xfffe};
    cr_assert_eq(rk_pad(&ctx, &ci, IN(xi), OUT(yi)), 0);
    int16_t want_i[12] = {-2, 1, 2, -2, -2, 3, 4, -2, -2, -2, -2, -2};
    for (int i = 0; i < 12; i++) cr_expect_eq(yi[i], want_i[i], "element %d: %d", i, yi[i]);

    /* negative pads on both sides of the last axis and a begin crop of the first: x2 rows 1, cols 1 -> [[4]] */
    rk_pad_params crop = {.esize = 4, .rank = 2, .mode = 2, .in_dims = {2, 2}, .out_dims = {1, 1}, .pads_begin = {-1, -1}};
    cr_assert_eq(rk_pad(&ctx, &crop, IN(x2), OUT(y)), 0);
    cr_expect_eq(y[0], 4);
}

/* ---- linear algebra ---- */

Test(kernels, matmul_by_hand) {
    /* [[1,2,3],[4,5,6]] * [[7,8],[9,10],[11,12]]:
     *   58 = 1*7 + 2*9 + 3*11, 64 = 1*8 + 2*10 + 3*12, 139 = 4*7 + 5*9 + 6*11, 154 = 4*8 + 5*10 + 6*12 */
    float a[12] = {1, 2, 3, 4, 5, 6, -1, 0, 0, 0, 1, 0}, b[6] = {7, 8, 9, 10, 11, 12}, c[8];
    rk_matmul_f32_params p = {.m = 2, .n = 2, .k = 3};
    cr_assert_eq(rk_matmul_f32(&ctx, &p, IN(a, b), OUT(c)), 0);
    expect_floats(c, (float[]){58, 64, 139, 154}, 4, 0);

    /* batch of 2 over A, B broadcast (stride 0); batch 1 is [[-1,0,0],[0,1,0]] * B = [[-7,-8],[9,10]] */
    rk_matmul_f32_params q = {.m = 2, .n = 2, .k = 3, .brank = 1, .bdims = {2}, .astride = {6}, .bstride = {0}};
    cr_assert_eq(rk_matmul_f32(&ctx, &q, IN(a, b), OUT(c)), 0);
    expect_floats(c, (float[]){58, 64, 139, 154, -7, -8, 9, 10}, 8, 0);

    /* two batch dims (2, 2): A varies along the first, B along the second */
    float b2[12] = {7, 8, 9, 10, 11, 12, 1, 0, 0, 1, 0, 0}, c4[16];
    rk_matmul_f32_params r = {.m = 2, .n = 2, .k = 3, .brank = 2, .bdims = {2, 2}, .astride = {6, 0}, .bstride = {0, 6}};
    cr_assert_eq(rk_matmul_f32(&ctx, &r, IN(a, b2), OUT(c4)), 0);
    /* A1 * B1 with B1 = [[1,0],[0,1],[0,0]]: the first two columns of A */
    expect_floats(c4, (float[]){58, 64, 139, 154, 1, 2, 4, 5, -7, -8, 9, 10, -1, 0, 0, 1}, 16, 0);
}

Test(kernels, gemm_transposes_alpha_beta) {
    /* A^T stored (3x2), B^T stored (2x3); op(A)*op(B) is the matmul above.
     * alpha 2, beta 0.5, C = [10, 20] broadcast over rows (c_rs 0):
     * [[2*58+5, 2*64+10], [2*139+5, 2*154+10]] = [[121, 138], [283, 318]] */
    float at[6] = {1, 4, 2, 5, 3, 6}, bt[6] = {7, 9, 11, 8, 10, 12}, cv[2] = {10, 20}, y[4];
    rk_gemm_f32_params p = {.m = 2, .n = 2, .k = 3, .trans_a = 1, .trans_b = 1, .alpha = 2, .beta = 0.5,
                            .has_c = 1, .c_rs = 0, .c_cs = 1};
    cr_assert_eq(rk_gemm_f32(&ctx, &p, IN(at, bt, cv), OUT(y)), 0);
    expect_floats(y, (float[]){121, 138, 283, 318}, 4, 0);

    /* no transposes, C a column (c_rs 1, c_cs 0), beta 1 */
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, col[2] = {1, -1};
    rk_gemm_f32_params q = {.m = 2, .n = 2, .k = 3, .alpha = 1, .beta = 1, .has_c = 1, .c_rs = 1, .c_cs = 0};
    cr_assert_eq(rk_gemm_f32(&ctx, &q, IN(a, b, col), OUT(y)), 0);
    expect_floats(y, (float[]){59, 65, 138, 153}, 4, 0);

    /* only A transposed, no C, alpha -1 */
    rk_gemm_f32_params r = {.m = 2, .n = 2, .k = 3, .trans_a = 1, .alpha = -1, .beta = 1};
    cr_assert_eq(rk_gemm_f32(&ctx, &r, IN(at, b, NULL), OUT(y)), 0);
    expect_floats(y, (float[]){-58, -64, -139, -154}, 4, 0);

    /* only B transposed */
    rk_gemm_f32_params s = {.m = 2, .n = 2, .k = 3, .trans_b = 1, .alpha = 1};
    cr_assert_eq(rk_gemm_f32(&ctx, &s, IN(a, bt, NULL), OUT(y)), 0);
    expect_floats(y, (float[]){58, 64, 139, 154}, 4, 0);
}

/* ---- convolution ---- */

static void iota(float *x, int n, float first) {
    for (int i = 0; i < n; i++) x[i] = first + (float)i;
}

Test(kernels, conv_laplacian_3x3) {
    /* 4x4 input 1..16, kernel [[0,1,0],[1,-4,1],[0,1,0]], pads 1, bias 0.5.
     * The Laplacian of a linear ramp is 0 inside; at the border the zero padding shows:
     * (0,0): 0 + 0 + 2 + 5 - 4*1 = 3, (0,1): 1 + 3 + 6 - 8 = 2, (0,2): 2 + 4 + 7 - 12 = 1,
     * (0,3): 3 + 8 - 16 = -5, (1,0): 1 + 6 + 9 - 20 = -4, (1,3): 4 + 7 + 12 - 32 = -9,
     * (2,0): 5 + 10 + 13 - 36 = -8, (2,3): 8 + 11 + 16 - 48 = -13, (3,0): 9 + 14 - 52 = -29,
     * (3,1): 10 + 13 + 15 - 56 = -18, (3,2): 11 + 14 + 16 - 60 = -19, (3,3): 12 + 15 - 64 = -37 */
    float x[16], w[9] = {0, 1, 0, 1, -4, 1, 0, 1, 0}, bias[1] = {0.5f}, y[16];
    iota(x, 16, 1);
    rk_conv2d_f32_params p = {.n = 1, .c = 1, .h = 4, .w = 4, .oc = 1, .oh = 4, .ow = 4, .kh = 3, .kw = 3, .sh = 1,
                              .sw = 1, .pt = 1, .pl = 1, .dh = 1, .dw = 1, .group = 1, .has_bias = 1};
    cr_assert_eq(rk_conv2d_f32(&ctx, &p, IN(x, w, bias), OUT(y)), 0);
    float want[16] = {3, 2, 1, -5, -4, 0, 0, -9, -8, 0, 0, -13, -29, -18, -19, -37};
    for (int i = 0; i < 16; i++) want[i] += 0.5f;
    expect_floats(y, want, 16, 0);
}

Test(kernels, conv_stride_dilation_groups) {
    /* 3x3 of ones, stride 2, pads 1 on 4x4 1..16: window sums
     * (0,0) rows 0-1 cols 0-1: 1+2+5+6 = 14; (0,1) rows 0-1 cols 1-3: 2+3+4+6+7+8 = 30;
     * (1,0) rows 1-3 cols 0-1: 5+6+9+10+13+14 = 57; (1,1) rows 1-3 cols 1-3: 99 */
    float x[32], ones[9], y[16];
    iota(x, 16, 1);
    for (int i = 0; i < 9; i++) ones[i] = 1;
    rk_conv2d_f32_params p = {.n = 1, .c = 1, .h = 4, .w = 4, .oc = 1, .oh = 2, .ow = 2, .kh = 3, .kw = 3, .sh = 2,
                              .sw = 2, .pt = 1, .pl = 1, .dh = 1, .dw = 1, .group = 1};
    cr_assert_eq(rk_conv2d_f32(&ctx, &p, IN(x, ones, NULL), OUT(y)), 0);
    expect_floats(y, (float[]){14, 30, 57, 99}, 4, 0);

    /* 2x2 kernel [[1,0],[0,1]] with dilation 2, no pads: y[r][c] = x[r][c] + x[r+2][c+2]
     * = 1+11, 2+12, 5+15, 6+16 */
    float diag[4] = {1, 0, 0, 1};
    rk_conv2d_f32_params d = {.n = 1, .c = 1, .h = 4, .w = 4, .oc = 1, .oh = 2, .ow = 2, .kh = 2, .kw = 2, .sh = 1,
                              .sw = 1, .dh = 2, .dw = 2, .group = 1};
    cr_assert_eq(rk_conv2d_f32(&ctx, &d, IN(x, diag, NULL), OUT(y)), 0);
    expect_floats(y, (float[]){12, 14, 20, 22}, 4, 0);

    /* two groups of one channel, 1x1 weights 2 and 3: each channel scaled alone */
    iota(x + 16, 16, 100);
    float wg[2] = {2, 3}, yg[32];
    rk_conv2d_f32_params g = {.n = 1, .c = 2, .h = 4, .w = 4, .oc = 2, .oh = 4, .ow = 4, .kh = 1, .kw = 1, .sh = 1,
                              .sw = 1, .dh = 1, .dw = 1, .group = 2};
    cr_assert_eq(rk_conv2d_f32(&ctx, &g, IN(x, wg, NULL), OUT(yg)), 0);
    for (int i = 0; i < 16; i++) {
        cr_expect_eq(yg[i], 2 * x[i]);
        cr_expect_eq(yg[16 + i], 3 * x[16 + i]);
    }

    rk_conv2d_f32_params bad = g;
    bad.group = 3;
    cr_expect_eq(rk_conv2d_f32(&ctx, &bad, IN(x, wg, NULL), OUT(yg)), RLX_E_ARG);
}

/* The definition, loop by loop, for comparison on a mixed geometry. */
static void conv_reference(const rk_conv2d_f32_params *p, const float *x, const float *w, const float *b, float *y) {
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t o = 0; o < p->oc; o++)
            for (int64_t oy = 0; oy < p->oh; oy++)
                for (int64_t ox = 0; ox < p->ow; ox++) {
                    double s = b ? b[o] : 0;
                    for (int64_t ic = 0; ic < cg; ic++)
                        for (int64_t ky = 0; ky < p->kh; ky++)
                            for (int64_t kx = 0; kx < p->kw; kx++) {
                                int64_t iy = oy * p->sh - p->pt + ky * p->dh, ix = ox * p->sw - p->pl + kx * p->dw;
                                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w) continue;
                                int64_t c = (o / ocg) * cg + ic;
                                s += (double)x[((n * p->c + c) * p->h + iy) * p->w + ix] *
                                     w[((o * cg + ic) * p->kh + ky) * p->kw + kx];
                            }
                    y[((n * p->oc + o) * p->oh + oy) * p->ow + ox] = (float)s;
                }
}

Test(kernels, conv_matches_reference) {
    /* n 2, c 4, 9x7 image, 6 outputs in 2 groups, 3x2 kernel, strides (2, 3), pads (2, 1),
     * dilations (2, 1): oh = (9 + 2 + 1 - 5) / 2 + 1 = 4, ow = (7 + 1 + 1 - 2) / 3 + 1 = 3
     * (bottom pad 1, right pad 1) */
    rk_conv2d_f32_params p = {.n = 2, .c = 4, .h = 9, .w = 7, .oc = 6, .oh = 4, .ow = 3, .kh = 3, .kw = 2, .sh = 2,
                              .sw = 3, .pt = 2, .pl = 1, .dh = 2, .dw = 1, .group = 2, .has_bias = 1};
    /* stride 1 and pads on both sides: the vectorized path */
    rk_conv2d_f32_params q = {.n = 1, .c = 4, .h = 9, .w = 7, .oc = 3, .oh = 9, .ow = 7, .kh = 3, .kw = 3, .sh = 1,
                              .sw = 1, .pt = 1, .pl = 1, .dh = 1, .dw = 1, .group = 1};
    enum { NX = 2 * 4 * 9 * 7, NW = 3 * 4 * 3 * 3, NY = 2 * 6 * 4 * 3, NYQ = 3 * 9 * 7 };
    float x[NX], w[NW], b[6], y[NYQ], want[NYQ];
    for (int i = 0; i < NX; i++) x[i] = (float)((i * 37) % 23) - 11;
    for (int i = 0; i < NW; i++) w[i] = (float)((i * 13) % 7) * 0.25f - 0.75f;
    for (int i = 0; i < 6; i++) b[i] = (float)i - 2.5f;
    cr_assert_eq(rk_conv2d_f32(&ctx, &p, IN(x, w, b), OUT(y)), 0);
    conv_reference(&p, x, w, b, want);
    expect_floats(y, want, NY, 1e-5f);

    cr_assert_eq(rk_conv2d_f32(&ctx, &q, IN(x, w, NULL), OUT(y)), 0);
    conv_reference(&q, x, w, NULL, want);
    expect_floats(y, want, NYQ, 1e-5f);
}

/* pooling: tests/unit/test_conv.c (rk_conv.c) */

/* ---- normalization ---- */

Test(kernels, batchnorm) {
    /* channel 0: (x - 1) / sqrt(4) * 2 + 0.5 -> x=1: 0.5, x=2: 1.5
     * channel 1: (x - 3) / sqrt(0.25) * 1 - 1 -> x=3: -1, x=4: 1; batch 2 repeats with x + 1 */
    float x[8] = {1, 2, 3, 4, 2, 3, 4, 5}, scale[2] = {2, 1}, shift[2] = {0.5f, -1}, mean[2] = {1, 3},
          var[2] = {4, 0.25f}, y[8];
    rk_batchnorm_f32_params p = {.n = 2, .c = 2, .hw = 2, .eps = 0};
    cr_assert_eq(rk_batchnorm_f32(&ctx, &p, IN(x, scale, shift, mean, var), OUT(y)), 0);
    expect_floats(y, (float[]){0.5f, 1.5f, -1, 1, 1.5f, 2.5f, 1, 3}, 8, 1e-6f);
    /* eps is added to the variance: var 3.75 + eps 0.25 = 4 */
    var[0] = 3.75f;
    p.eps = 0.25;
    cr_assert_eq(rk_batchnorm_f32(&ctx, &p, IN(x, scale, shift, mean, var), OUT(y)), 0);
    cr_expect_float_eq(y[1], 1.5f, 1e-6);
}

Test(kernels, batchnorm_with_activation) {
    /* one channel, (x - 1) / sqrt(1) * 2 + 0.5, then ReLU (fuse.c's BatchNorm
     * + Relu): 11 elements, so the eight-wide part and the rest both run;
     * ReLU keeps NaN and gives +0 for -0 (rs_relu) */
    float x[11] = {-2, 1, 3, 0.75f, 0.5f, 2, NAN, 4, -1, 1.25f, 10}, scale[1] = {2}, shift[1] = {0.5f},
          mean[1] = {1}, var[1] = {1}, y[11];
    const float want[11] = {0, 0.5f, 4.5f, 0, 0, 2.5f, NAN, 6.5f, 0, 1, 18.5f};
    rk_batchnorm_f32_params p = {.n = 1, .c = 1, .hw = 11, .eps = 0, .act = RS_ACT_RELU};
    cr_assert_eq(rk_batchnorm_f32(&ctx, &p, IN(x, scale, shift, mean, var), OUT(y)), 0);
    for (int i = 0; i < 11; i++) {
        if (isnan(want[i])) cr_expect(isnan(y[i]), "element %d: NaN expected", i);
        else cr_expect(y[i] == want[i] && !signbit(y[i]), "element %d: got %g, want %g", i, (double)y[i], (double)want[i]);
    }
    /* another activation goes through rs_act: HardSigmoid 0.2 x + 0.5, clamped */
    p.act = RS_ACT_HARDSIGMOID;
    p.act_a = 0.2;
    p.act_b = 0.5;
    cr_assert_eq(rk_batchnorm_f32(&ctx, &p, IN(x, scale, shift, mean, var), OUT(y)), 0);
    cr_expect_float_eq(y[0], 0.0f, 1e-7);    /* -5.5 -> 0 */
    cr_expect_float_eq(y[1], 0.6f, 1e-7);    /* 0.5 -> 0.6 */
    cr_expect_float_eq(y[10], 1.0f, 1e-7);   /* 18.5 -> 1 */
}

Test(kernels, batchnorm_threads_same_bits) {
    /* 3 x 37 rows of 999: above the threading threshold, rows split over
     * 2 and 3 threads give the one-thread bytes */
    int64_t n = 3, c = 37, hw = 999, total = n * c * hw;
    float *x = malloc(sizeof(float) * (size_t)total), *y1 = malloc(sizeof(float) * (size_t)total),
          *y2 = malloc(sizeof(float) * (size_t)total);
    float scale[37], shift[37], mean[37], var[37];
    for (int64_t i = 0; i < total; i++) x[i] = (float)((i * 7919) % 2003) / 1001.0f - 1.0f;
    for (int k = 0; k < 37; k++) scale[k] = 0.5f + k / 37.0f, shift[k] = -0.25f, mean[k] = k / 74.0f, var[k] = 1 + k;
    rk_batchnorm_f32_params p = {.n = n, .c = c, .hw = hw, .eps = 1e-5, .act = RS_ACT_RELU};
    cr_assert_eq(rk_batchnorm_f32(&ctx, &p, IN(x, scale, shift, mean, var), OUT(y1)), 0);
    for (int t = 2; t <= 3; t++) {
        rk_pool *pool;
        cr_assert_eq(rk_pool_new(t, &pool), 0);
        rk_ctx tctx = {t, pool, NULL, 0};
        memset(y2, 0, sizeof(float) * (size_t)total);
        cr_assert_eq(rk_batchnorm_f32(&tctx, &p, IN(x, scale, shift, mean, var), OUT(y2)), 0);
        cr_expect(!memcmp(y1, y2, sizeof(float) * (size_t)total), "%d threads differ from one", t);
        rk_pool_free(pool);
    }
    free(x), free(y1), free(y2);
}

Test(kernels, layernorm) {
    /* row [1,2,3,4]: mean 2.5, var (2.25+0.25+0.25+2.25)/4 = 1.25, scale [1,1,2,2], bias [0,0,0,1]:
     * numpy gives [-1.34164071, -0.44721359, 0.89442718, 3.68328142] (/usr/bin/python3).
     * A constant row normalizes to 0 (needs eps), leaving the bias. */
    float x[8] = {1, 2, 3, 4, 5, 5, 5, 5}, scale[4] = {1, 1, 2, 2}, bias[4] = {0, 0, 0, 1}, y[8];
    rk_layernorm_f32_params p = {.outer = 2, .inner = 4, .eps = 1e-5, .has_bias = 1, .nrank = 1, .ndims = {4},
                                 .scale_strides = {1}, .bias_strides = {1}};
    cr_assert_eq(rk_layernorm_f32(&ctx, &p, IN(x, scale, bias), OUT(y)), 0);
    expect_floats(y, (float[]){-1.34164071f, -0.44721359f, 0.89442718f, 3.68328142f, 0, 0, 0, 1}, 8, 1e-5f);

    /* variance in two passes: a large offset does not cancel catastrophically */
    float big[4] = {10001, 10002, 10003, 10004};
    p.outer = 1;
    p.has_bias = 0;
    cr_assert_eq(rk_layernorm_f32(&ctx, &p, IN(big, scale, NULL), OUT(y)), 0);
    expect_floats(y, (float[]){-1.34164071f, -0.44721359f, 0.89442718f, 2.68328142f}, 4, 1e-4f);
}

Test(kernels, softmax_and_log_softmax) {
    /* softmax([1,2,3]) = [0.09003057, 0.24472846, 0.66524094],
     * log_softmax = [-2.407606, -1.407606, -0.40760598] (/usr/bin/python3 numpy, float32) */
    float x[3] = {1, 2, 3}, y[6];
    rk_softmax_f32_params p = {.outer = 1, .axis_len = 3, .inner = 1};
    cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){0.09003057f, 0.24472846f, 0.66524094f}, 3, 1e-6f);
    p.log = 1;
    cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){-2.407606f, -1.407606f, -0.40760598f}, 3, 1e-6f);

    /* along the middle axis of (1, 3, 2): column 0 is [1,2,3] shifted by 1000 (no overflow
     * because the max is subtracted), column 1 is constant -> 1/3 each */
    float xs[6] = {1001, 7, 1002, 7, 1003, 7};
    rk_softmax_f32_params q = {.outer = 1, .axis_len = 3, .inner = 2};
    cr_assert_eq(rk_softmax_f32(&ctx, &q, IN(xs), OUT(y)), 0);
    expect_floats(y, (float[]){0.09003057f, 1.0f / 3, 0.24472846f, 1.0f / 3, 0.66524094f, 1.0f / 3}, 6, 1e-6f);
}

/* ---- reductions ---- */

Test(kernels, reduce_ops) {
    /* x[a][b][c] = 12a + 4b + c, dims (2, 3, 4) */
    float x[24], y[24];
    iota(x, 24, 0);
    /* sum over b: 3*12a + (0+4+8) + 3c = 36a + 12 + 3c */
    rk_reduce_params p = {.dtype = RLX_F32, .op = 0, .rank = 3, .dims = {2, 3, 4}, .mask = {0, 1, 0}};
    cr_assert_eq(rk_reduce(&ctx, &p, IN(x), OUT(y)), 0);
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 4; c++) cr_expect_eq(y[a * 4 + c], 36 * a + 12 + 3 * c);
    /* mean over a and c: 6 + 4b + 1.5 */
    rk_reduce_params m = {.dtype = RLX_F32, .op = 1, .rank = 3, .dims = {2, 3, 4}, .mask = {1, 0, 1}};
    cr_assert_eq(rk_reduce(&ctx, &m, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){7.5f, 11.5f, 15.5f}, 3, 0);
    /* max over c: 12a + 4b + 3 */
    rk_reduce_params mx = {.dtype = RLX_F32, .op = 2, .rank = 3, .dims = {2, 3, 4}, .mask = {0, 0, 1}};
    cr_assert_eq(rk_reduce(&ctx, &mx, IN(x), OUT(y)), 0);
    expect_floats(y, (float[]){3, 7, 11, 15, 19, 23}, 6, 0);
    /* min over everything */
    rk_reduce_params mn = {.dtype = RLX_F32, .op = 3, .rank = 3, .dims = {2, 3, 4}, .mask = {1, 1, 1}};
    cr_assert_eq(rk_reduce(&ctx, &mn, IN(x), OUT(y)), 0);
    cr_expect_eq(y[0], 0);
    /* no axis reduced: a copy */
    rk_reduce_params none = {.dtype = RLX_F32, .op = 0, .rank = 3, .dims = {2, 3, 4}};
    cr_assert_eq(rk_reduce(&ctx, &none, IN(x), OUT(y)), 0);
    expect_floats(y, x, 24, 0);

    /* NaN propagates through max and min, wherever it sits */
    float n1[6] = {1, NAN, 3, NAN, 5, 6};
    rk_reduce_params rows = {.dtype = RLX_F32, .op = 2, .rank = 2, .dims = {2, 3}, .mask = {0, 1}};
    cr_assert_eq(rk_reduce(&ctx, &rows, IN(n1), OUT(y)), 0);
    cr_expect(isnan(y[0]) && isnan(y[1]));
    rows.op = 3;
    cr_assert_eq(rk_reduce(&ctx, &rows, IN(n1), OUT(y)), 0);
    cr_expect(isnan(y[0]) && isnan(y[1]));
    /* over the first axis (elementwise combine): columns [1,NaN], [NaN,5], [3,6] */
    rk_reduce_params cols = {.dtype = RLX_F32, .op = 2, .rank = 2, .dims = {2, 3}, .mask = {1, 0}};
    cr_assert_eq(rk_reduce(&ctx, &cols, IN(n1), OUT(y)), 0);
    cr_expect(isnan(y[0]) && isnan(y[1]) && y[2] == 6);
}

Test(kernels, argmax) {
    /* rows [1,3,3,2] and [5,NaN,NaN,0]: first max 1 / NaN at 1; last max 2 / last NaN 2 */
    float x[8] = {1, 3, 3, 2, 5, NAN, NAN, 0};
    int64_t y[4];
    rk_argminmax_params p = {.dtype = RLX_F32, .outer = 2, .axis_len = 4, .inner = 1};
    cr_assert_eq(rk_argminmax(&ctx, &p, IN(x), OUT(y)), 0);
    expect_i64(y, (int64_t[]){1, 1}, 2);
    p.select_last = 1;
    cr_assert_eq(rk_argminmax(&ctx, &p, IN(x), OUT(y)), 0);
    expect_i64(y, (int64_t[]){2, 2}, 2);

    /* along the middle axis of (1, 4, 2): x as rows (1,3) (3,2) (5,NaN) (NaN,0);
     * column 0 = [1,3,5,NaN] -> 3, column 1 = [3,2,NaN,0] -> 2 */
    rk_argminmax_params q = {.dtype = RLX_F32, .outer = 1, .axis_len = 4, .inner = 2};
    cr_assert_eq(rk_argminmax(&ctx, &q, IN(x), OUT(y)), 0);
    expect_i64(y, (int64_t[]){3, 2}, 2);
    /* without NaN: column 0 of [[4,1],[9,1],[9,0]] -> first 1, last 2; column 1 -> first 0, last 1 */
    float z[6] = {4, 1, 9, 1, 9, 0};
    rk_argminmax_params r = {.dtype = RLX_F32, .outer = 1, .axis_len = 3, .inner = 2};
    cr_assert_eq(rk_argminmax(&ctx, &r, IN(z), OUT(y)), 0);
    expect_i64(y, (int64_t[]){1, 0}, 2);
    r.select_last = 1;
    cr_assert_eq(rk_argminmax(&ctx, &r, IN(z), OUT(y)), 0);
    expect_i64(y, (int64_t[]){2, 1}, 2);
}

/* The _serial entries (what rlxc calls for copies below
 * RK_COPY_THREAD_MIN) give the general ones' bytes and refuse the same
 * bad params. */
Test(kernels, serial_copy_entries_match) {
    float x[2 * 3 * 4], a[2 * 3 * 4], b[2 * 3 * 4];
    for (int i = 0; i < 24; i++) x[i] = (float)i * 0.5f;
    rk_transpose_params t = {.esize = 4, .rank = 3, .dims = {2, 3, 4}, .perm = {2, 0, 1}};
    cr_assert_eq(rk_transpose(&ctx, &t, IN(x), OUT(a)), 0);
    cr_assert_eq(rk_transpose_serial(&ctx, &t, IN(x), OUT(b)), 0);
    cr_expect(memcmp(a, b, sizeof a) == 0, "transpose_serial differs");
    rk_slice_params s = {.esize = 4, .rank = 2, .in_dims = {6, 4}, .out_dims = {3, 2}, .starts = {5, 1}, .steps = {-2, 2}};
    cr_assert_eq(rk_slice(&ctx, &s, IN(x), OUT(a)), 0);
    cr_assert_eq(rk_slice_serial(&ctx, &s, IN(x), OUT(b)), 0);
    cr_expect(memcmp(a, b, 6 * sizeof(float)) == 0, "slice_serial differs");
    rk_strided_copy_params c = {.rows = 3, .row_bytes = 8, .src_stride = 16, .dst_stride = 12, .src_off = 4};
    memset(a, 0, sizeof a), memset(b, 0, sizeof b);
    cr_assert_eq(rk_strided_copy(&ctx, &c, IN(x), OUT(a)), 0);
    cr_assert_eq(rk_strided_copy_serial(&ctx, &c, IN(x), OUT(b)), 0);
    cr_expect(memcmp(a, b, sizeof a) == 0, "strided_copy_serial differs");
    cr_expect(a[0] == x[1] && a[1] == x[2] && a[3] == x[5] && a[6] == x[9], "strided copy by hand");
    rk_transpose_params bad = {.esize = 4, .rank = 2, .dims = {2, 2}, .perm = {0, 0}};
    cr_expect_eq(rk_transpose_serial(&ctx, &bad, IN(x), OUT(a)), RLX_E_ARG);
    rk_slice_params bads = {.esize = 4, .rank = 1, .in_dims = {10}, .out_dims = {4}, .starts = {8}, .steps = {-3}};
    cr_expect_eq(rk_slice_serial(&ctx, &bads, IN(x), OUT(a)), RLX_E_ARG);
    rk_strided_copy_params badc = {.rows = -1, .row_bytes = 8};
    cr_expect_eq(rk_strided_copy_serial(&ctx, &badc, IN(x), OUT(a)), RLX_E_ARG);
}
