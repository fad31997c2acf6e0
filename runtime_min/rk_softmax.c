/* rk_softmax.c - Softmax and LogSoftmax (softmax_f32, rk_kernels.def),
 * compiled per instruction set (rk_isa.h RK_ISA_FILES) for its rows.
 *
 * A row along a contiguous axis (inner 1, not log: attention's scores)
 * runs softmax_row: the maximum (row_max: in vectors, the value rs_max
 * folded in order gives; in a row with a NaN every output is NaN), then
 * e = exp(x - max) by rlx_vmath.h's exp (rk_v16_exp / rk_v8_exp / rs_fexp:
 * the same bits in every build), kept in y, summed in 16 running sums
 * (element j into sum j % 16, added pairwise at the end: one vector of
 * them with AVX-512, two with AVX2, an array in the portable build, so
 * the same sum everywhere), then y *= 1/sum (in vectors). The transformer encoders of
 * the wider zoo spent about 30% of their time in the scalar version of
 * this loop and libm's expf (perf, bench/zoo.py's transformer_medium).
 * Other axes and LogSoftmax keep the scalar loops (libm expf and logf, a
 * sum in order); f16 and bf16 storage is loaded and stored per element and
 * computed in f32, each result rounded once.
 */
#include <math.h>
#include <string.h>

#include "rlx_rt.h"
#include "rk_typed.h"
#include "rk_vmath.h"
#include "rlx_scalar.h"

/* The maximum of x[0, n), in vectors: rs_max folded in order gives the
 * same value (of +0 and -0 either may come out here, and x - max is the
 * same for both), except in a row with a NaN, whose sum is then NaN and so
 * every output, whatever the maximum. The fold's chain of n dependent
 * compares was most of a 128-wide row's time (attention's softmax 4.5x
 * ONNX Runtime's). */
static float row_max(const float *x, int64_t n) {
    int64_t j = 0;
    float mx = -INFINITY;
#if defined(__AVX512F__)
    if (n >= 16) {
        __m512 m = _mm512_loadu_ps(x);
        for (j = 16; j + 16 <= n; j += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(x + j));
        mx = _mm512_reduce_max_ps(m);
    }
#elif defined(__AVX2__)
    if (n >= 8) {
        __m256 m = _mm256_loadu_ps(x);
        for (j = 8; j + 8 <= n; j += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + j));
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        mx = _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
    }
#endif
    for (; j < n; j++) mx = rs_max(x[j], mx);
    return mx;
}

/* y[0, n) = softmax(x[0, n)); y may be x */
static void softmax_row(const float *x, float *y, int64_t n) {
    float mx = row_max(x, n);
    float s[16];
    int64_t j = 0;
#if defined(__AVX512F__)
    __m512 acc = _mm512_setzero_ps(), vmx = _mm512_set1_ps(mx);
    for (; j + 16 <= n; j += 16) {
        __m512 e = rk_v16_exp(_mm512_sub_ps(_mm512_loadu_ps(x + j), vmx));
        _mm512_storeu_ps(y + j, e);
        acc = _mm512_add_ps(acc, e);
    }
    if (j < n) {
        __mmask16 m = (__mmask16)((1u << (n - j)) - 1);
        __m512 e = rk_v16_exp(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), vmx));
        _mm512_mask_storeu_ps(y + j, m, e);
        acc = _mm512_mask_add_ps(acc, m, acc, e);
        j = n;
    }
    _mm512_storeu_ps(s, acc);
#elif defined(__AVX2__)
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps(), vmx = _mm256_set1_ps(mx);
    for (; j + 16 <= n; j += 16) {
        __m256 e0 = rk_v8_exp(_mm256_sub_ps(_mm256_loadu_ps(x + j), vmx));
        __m256 e1 = rk_v8_exp(_mm256_sub_ps(_mm256_loadu_ps(x + j + 8), vmx));
        _mm256_storeu_ps(y + j, e0);
        _mm256_storeu_ps(y + j + 8, e1);
        acc0 = _mm256_add_ps(acc0, e0);
        acc1 = _mm256_add_ps(acc1, e1);
    }
    _mm256_storeu_ps(s, acc0);
    _mm256_storeu_ps(s + 8, acc1);
#else
    for (int k = 0; k < 16; k++) s[k] = 0.0f;
    for (; j + 16 <= n; j += 16)
        for (int k = 0; k < 16; k++) {
            float e = rs_fexp(x[j + k] - mx);
            y[j + k] = e;
            s[k] += e;
        }
#endif
    for (; j < n; j++) {   /* the rest, into sums 0.. (j is a multiple of 16 here) */
        float e = rs_fexp(x[j] - mx);
        y[j] = e;
        s[j % 16] += e;
    }
    for (int w = 8; w >= 1; w /= 2)
        for (int k = 0; k < w; k++) s[k] += s[k + w];
    float inv = 1.0f / s[0];
    int64_t a = 0;
#if defined(__AVX512F__)
    for (__m512 vi = _mm512_set1_ps(inv); a + 16 <= n; a += 16) _mm512_storeu_ps(y + a, _mm512_mul_ps(_mm512_loadu_ps(y + a), vi));
#elif defined(__AVX2__)
    for (__m256 vi = _mm256_set1_ps(inv); a + 8 <= n; a += 8) _mm256_storeu_ps(y + a, _mm256_mul_ps(_mm256_loadu_ps(y + a), vi));
#endif
    for (; a < n; a++) y[a] *= inv;
}

/* Softmax over f16 or bf16 storage: in f32, each row read twice (y may be
 * x), each result rounded once. */
static void softmax_typed(const rk_softmax_f32_params *p, const void *x, void *y) {
    int64_t len = p->axis_len, st = p->inner, dt = p->dtype;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t i = 0; i < p->inner; i++) {
            int64_t at = o * len * st + i;
            float mx = -INFINITY, sum = 0.0f;
            for (int64_t a = 0; a < len; a++) mx = rs_max(rk_load_f32(dt, x, at + a * st), mx);
            for (int64_t a = 0; a < len; a++) sum += expf(rk_load_f32(dt, x, at + a * st) - mx);
            float ls = logf(sum), inv = 1.0f / sum;
            for (int64_t a = 0; a < len; a++) {
                float d = rk_load_f32(dt, x, at + a * st) - mx;
                rk_store_f32(dt, y, at + a * st, p->log ? d - ls : expf(d) * inv);
            }
        }
}

/* Contiguous rows over threads: each thread takes runs of rows (rk_take);
 * a row is computed the same way whoever takes it. */
enum { SOFTMAX_RUNS = 4 };
#define SOFTMAX_THREAD_MIN ((int64_t)1 << 15)   /* elements below which one thread does it all */

typedef struct {
    const float *x;
    float *y;
    int64_t rows, len;
    int nthreads;
    rk_queue *q;
} SoftmaxRows;

static void softmax_rows_task(void *arg, int tid) {
    const SoftmaxRows *S = arg;
    int64_t cursor = 0, k, lo, hi;
    for (int v; (v = rk_take(S->q, S->nthreads, tid, SOFTMAX_RUNS, &cursor, &k)) >= 0;) {
        rk_run_range(S->rows, S->nthreads, SOFTMAX_RUNS, v, k, &lo, &hi);
        for (int64_t o = lo; o < hi; o++) softmax_row(S->x + o * S->len, S->y + o * S->len, S->len);
    }
}

int rk_softmax_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_softmax_f32_params *p = params;
    if (p->outer < 0 || p->axis_len < 0 || p->inner < 0) return RLX_E_ARG;
    if (p->dtype != RLX_F32) {
        if (p->dtype != RLX_F16 && p->dtype != RLX_BF16) return RLX_E_ARG;
        softmax_typed(p, in[0], out[0]);
        return RLX_OK;
    }
    const float *x = in[0];
    float *y = out[0];
    int64_t len = p->axis_len, st = p->inner;
    if (st == 1 && !p->log) {   /* along contiguous rows (attention's last axis) */
        int64_t nt = ctx && ctx->pool && ctx->nthreads > 1 && p->outer * len >= SOFTMAX_THREAD_MIN ? ctx->nthreads : 1;
        if (nt > p->outer) nt = p->outer;
        if (nt > 1) {
            rk_queue q;
            SoftmaxRows S = {x, y, p->outer, len, (int)rk_queue_init(&q, nt), &q};
            rk_pool_share(ctx->pool, S.nthreads, softmax_rows_task, &S);
            return RLX_OK;
        }
        for (int64_t o = 0; o < p->outer; o++) softmax_row(x + o * len, y + o * len, len);
        return RLX_OK;
    }
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t i = 0; i < p->inner; i++) {
            const float *xr = x + o * len * st + i;
            float *yr = y + o * len * st + i;
            float mx = -INFINITY;
            for (int64_t a = 0; a < len; a++) mx = rs_max(xr[a * st], mx);
            float sum = 0.0f;
            if (p->log) {
                for (int64_t a = 0; a < len; a++) sum += expf(xr[a * st] - mx);
                float ls = logf(sum);
                for (int64_t a = 0; a < len; a++) yr[a * st] = xr[a * st] - mx - ls;
            } else {
                /* each exp once: kept in y, then scaled (y may be x: read first) */
                for (int64_t a = 0; a < len; a++) {
                    float e = expf(xr[a * st] - mx);
                    yr[a * st] = e;
                    sum += e;
                }
                float inv = 1.0f / sum;
                for (int64_t a = 0; a < len; a++) yr[a * st] *= inv;
            }
        }
    }
    return RLX_OK;
}
