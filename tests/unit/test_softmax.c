/* test_softmax.c - softmax_f32 along contiguous rows (runtime_min/rk_softmax.c).
 *
 * Rows of 1 to 40, 100 and 1000 floats (every tail length of a 16-float
 * vector), a batch of rows, in place and not: each result is checked
 * bit for bit against the order rk_softmax.c promises, written here with
 * scalars (the maximum, e = rs_fexp(x - max), 16 running sums added
 * pairwise, y = e * (1 / sum)), and against a double reference within
 * 4e-7 relative plus what rounding x - max to float costs (|x - max|
 * 2^-24). Built also for AVX2 and
 * AVX-512 (Makefile ISA_UNIT), where the row runs in vectors: the same
 * bits. Then the special values: -inf entries give 0, a row of -inf gives
 * NaN (as the scalar path: -inf - -inf), a NaN gives NaN everywhere, and
 * inner > 1 or LogSoftmax still take the scalar loops. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

static rk_ctx ctx = {1, NULL, NULL, 0};

static void promised(const float *x, float *y, int64_t n) {
    float mx = -INFINITY, s[16] = {0};
    for (int64_t a = 0; a < n; a++) mx = rs_max(x[a], mx);
    for (int64_t j = 0; j < n; j++) {
        y[j] = rs_fexp(x[j] - mx);
        s[j % 16] += y[j];
    }
    for (int w = 8; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) s[k] += s[k + w];
    float inv = 1.0f / s[0];
    for (int64_t a = 0; a < n; a++) y[a] *= inv;
}

static rk_softmax_f32_params rows(int64_t outer, int64_t len) {
    rk_softmax_f32_params p;
    memset(&p, 0, sizeof p);
    p.outer = outer, p.axis_len = len, p.inner = 1, p.dtype = RLX_F32;
    return p;
}

Test(softmax, rows_same_bits_and_accurate) {
    static const int64_t extra[] = {100, 1000};
    for (int64_t t = 0; t < 42; t++) {
        int64_t n = t < 40 ? t + 1 : extra[t - 40], outer = 3;
        float *x = malloc(sizeof(float) * (size_t)(n * outer)), *y = malloc(sizeof(float) * (size_t)(n * outer));
        float *want = malloc(sizeof(float) * (size_t)n);
        for (int64_t i = 0; i < n * outer; i++) x[i] = (float)((i * 7919) % 2001) / 100.0f - 10.0f;
        rk_softmax_f32_params p = rows(outer, n);
        cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), RLX_OK);
        for (int64_t o = 0; o < outer; o++) {
            promised(x + o * n, want, n);
            double mx = -INFINITY, sum = 0;
            for (int64_t a = 0; a < n; a++) mx = fmax(mx, x[o * n + a]);
            for (int64_t a = 0; a < n; a++) sum += exp((double)x[o * n + a] - mx);
            for (int64_t a = 0; a < n; a++) {
                float got = y[o * n + a];
                cr_expect(memcmp(&got, &want[a], 4) == 0, "n %lld row %lld [%lld]: %a, promised %a", (long long)n,
                          (long long)o, (long long)a, (double)got, (double)want[a]);
                /* x - max rounds to float first: |x - max| 2^-24 more, relative */
                double d = (double)x[o * n + a] - mx, ref = exp(d) / sum;
                cr_expect(fabs(got - ref) <= (4e-7 + fabs(d) * 0x1p-24) * ref + 1e-30, "n %lld [%lld]: %.9g, double %.9g", (long long)n,
                          (long long)a, (double)got, ref);
            }
        }
        /* in place: the same bits */
        cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(x)), RLX_OK);
        cr_expect(memcmp(x, y, sizeof(float) * (size_t)(n * outer)) == 0, "n %lld: in place differs", (long long)n);
        free(x), free(y), free(want);
    }
}

Test(softmax, special_values) {
    float x[20], y[20];
    rk_softmax_f32_params p = rows(1, 20);
    for (int i = 0; i < 20; i++) x[i] = i == 3 || i == 17 ? 1.0f : -INFINITY;
    cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    for (int i = 0; i < 20; i++) cr_expect(y[i] == (i == 3 || i == 17 ? 0.5f : 0.0f), "[%d] %g", i, (double)y[i]);
    for (int i = 0; i < 20; i++) x[i] = -INFINITY;
    cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    for (int i = 0; i < 20; i++) cr_expect(isnan(y[i]), "all -inf [%d]: %g", i, (double)y[i]);
    for (int i = 0; i < 20; i++) x[i] = (float)i;
    x[18] = NAN;
    cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    for (int i = 0; i < 20; i++) cr_expect(isnan(y[i]), "NaN row [%d]: %g", i, (double)y[i]);
}

/* The row's maximum in vectors must leave every output bit as the fold
 * rs_max makes in order: zeros of both signs as the maximum, infinities,
 * at every length from 1 to 70; and a row with NaNs (two, of different
 * payloads) NaN everywhere. Which payload comes out is not promised: the
 * last scaling multiplies two NaNs, whose operands a compiler may swap. */
static float nan_payload(uint32_t p) {
    uint32_t b = 0x7fc00000u | (p & 0x3fffffu);
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

Test(softmax, maximum_bits) {
    uint32_t r = 99u;
    for (int64_t n = 1; n <= 70; n++)
        for (int kind = 0; kind < 4; kind++) {
            float x[70], y[70], want[70];
            for (int64_t i = 0; i < n; i++) {
                r = r * 1664525u + 1013904223u;
                x[i] = kind == 1 ? ((r >> 9) % 2 ? 0.0f : -0.0f) - (float)((r >> 12) % 3) : (float)((r >> 8) % 400) / 37.0f - 6.0f;
            }
            if (kind == 0) x[(r >> 5) % n] = nan_payload(r >> 3), x[(r >> 11) % n] = nan_payload(r >> 7);
            if (kind == 2) x[(r >> 5) % n] = INFINITY;
            if (kind == 3) x[(r >> 5) % n] = -INFINITY;
            rk_softmax_f32_params p = rows(1, n);
            cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), RLX_OK);
            promised(x, want, n);
            for (int64_t i = 0; i < n && kind == 0; i++) cr_assert(isnan(y[i]), "n %lld [%lld]: %g", (long long)n, (long long)i, (double)y[i]);
            for (int64_t i = 0; i < n && kind != 0; i++) {
                uint32_t a, b;
                memcpy(&a, &y[i], 4), memcpy(&b, &want[i], 4);
                cr_assert(a == b, "n %lld kind %d [%lld]: %08x, want %08x", (long long)n, kind, (long long)i, a, b);
            }
        }
}

Test(softmax, other_axes_and_log) {
    /* softmax([1, 2, 3]) = [0.09003057, 0.24472847, 0.66524096] along an axis of stride 2 */
    float x[6] = {1, 5, 2, 5, 3, 5}, y[6];
    rk_softmax_f32_params p = {.outer = 1, .axis_len = 3, .inner = 2, .dtype = RLX_F32};
    cr_assert_eq(rk_softmax_f32(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    cr_expect(fabsf(y[0] - 0.09003057f) < 1e-7f && fabsf(y[2] - 0.24472847f) < 1e-7f &&
              fabsf(y[4] - 0.66524096f) < 1e-7f);
    cr_expect(fabsf(y[1] - 1.0f / 3) < 1e-7f && fabsf(y[3] - 1.0f / 3) < 1e-7f);
    rk_softmax_f32_params q = rows(1, 3);
    q.log = 1;
    cr_assert_eq(rk_softmax_f32(&ctx, &q, IN(((float[]){1, 2, 3})), OUT(y)), RLX_OK);
    cr_expect(fabsf(y[0] - logf(0.09003057f)) < 1e-6f && fabsf(y[2] - logf(0.66524096f)) < 1e-6f);
}

/* Rows split over threads (attention's 4 heads x 128 x 128 is above the
 * fork threshold): every row the promised bits, at 1, 2 and 3 threads. */
Test(softmax, rows_over_threads_same_bits) {
    int64_t outer = 4 * 128 + 5, n = 128;
    float *x = malloc(sizeof(float) * (size_t)(n * outer)), *want = malloc(sizeof(float) * (size_t)(n * outer));
    float *y = malloc(sizeof(float) * (size_t)(n * outer));
    for (int64_t i = 0; i < n * outer; i++) x[i] = (float)((i * 7919) % 2001) / 100.0f - 10.0f;
    for (int64_t o = 0; o < outer; o++) promised(x + o * n, want + o * n, n);
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    size_t per = 64;
    uint8_t *scratch = malloc(per * 3);
    rk_softmax_f32_params p = rows(outer, n);
    for (int nt = 1; nt <= 3; nt++) {
        rk_ctx c = {nt, nt > 1 ? pool : NULL, scratch, per};
        memset(y, 0xff, sizeof(float) * (size_t)(n * outer));
        cr_assert_eq(rk_softmax_f32(&c, &p, IN(x), OUT(y)), RLX_OK);
        cr_expect(memcmp(y, want, sizeof(float) * (size_t)(n * outer)) == 0, "%d threads: differs", nt);
    }
    rk_pool_free(pool);
    free(x), free(y), free(want), free(scratch);
}
