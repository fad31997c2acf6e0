/* test_gemm.c - rk_sgemm (runtime_min/rk_gemm.c) against a naive triple loop.
 *
 * The reference accumulates in double; a result passes if it is within
 * (K + 2) * 2^-22 of the sum of the magnitudes of its terms, a bound any
 * float summation order meets and a wrong element (a missed or doubled term,
 * a stale C) does not. Shapes cover every edge of the blocking: sizes around
 * the register tile (6 x 16), the K block (256), the row block (144) and the
 * column block (2048), M = 1, K = 1. Operands are strided submatrices with
 * sentinel padding, and C's padding must come back untouched.
 *
 * Paths that must agree bit for bit: pre-packed A and/or B against packing at
 * run time, and any thread count (driven by a fake pool that runs the tasks
 * in reverse order, or a real one with a pthread per task) against one thread. Scratch is exactly
 * rk_sgemm_scratch_size bytes at an odd address, followed by a guard.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_gemm.h"

static const float SENTINEL = -12345.0f;

static uint32_t rng_state = 12345u;
static float rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

static float *filled(int64_t n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    cr_assert(p);
    for (int64_t i = 0; i < n; i++) p[i] = rnd();
    return p;
}

typedef struct {
    int64_t m, n, k;
    int ta, tb;
    float alpha, beta;
    int64_t lda, ldb, ldc;   /* >= the dense strides: padding is sentinel */
    float *a, *b, *c0;       /* c0: C on entry */
} problem;

static void problem_make(problem *p, int64_t m, int64_t n, int64_t k, int ta, int tb, float alpha, float beta,
                         int64_t pad) {
    p->m = m, p->n = n, p->k = k, p->ta = ta, p->tb = tb, p->alpha = alpha, p->beta = beta;
    int64_t arows = ta ? k : m, acols = ta ? m : k, brows = tb ? n : k, bcols = tb ? k : n;
    p->lda = acols + pad;
    p->ldb = bcols + pad;
    p->ldc = n + pad;
    p->a = filled(arows * p->lda);
    p->b = filled(brows * p->ldb);
    p->c0 = filled(m * p->ldc);
    for (int64_t i = 0; i < arows; i++)
        for (int64_t j = acols; j < p->lda; j++) p->a[i * p->lda + j] = SENTINEL;
    for (int64_t i = 0; i < brows; i++)
        for (int64_t j = bcols; j < p->ldb; j++) p->b[i * p->ldb + j] = SENTINEL;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = n; j < p->ldc; j++) p->c0[i * p->ldc + j] = SENTINEL;
    if (beta == 0.0f)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) p->c0[i * p->ldc + j] = NAN;
}

static void problem_free(problem *p) {
    free(p->a);
    free(p->b);
    free(p->c0);
}

static float *copy_c(const problem *p) {
    size_t bytes = (size_t)(p->m > 0 ? p->m * p->ldc : 1) * sizeof(float);
    float *c = malloc(bytes);
    cr_assert(c);
    memcpy(c, p->c0, bytes);
    return c;
}

static double a_at(const problem *p, int64_t i, int64_t kk) { return p->ta ? p->a[kk * p->lda + i] : p->a[i * p->lda + kk]; }
static double b_at(const problem *p, int64_t kk, int64_t j) { return p->tb ? p->b[j * p->ldb + kk] : p->b[kk * p->ldb + j]; }

/* Checks c against the double-precision reference; returns the failures. */
static int check_against_reference(const problem *p, const float *c, const char *what) {
    int failures = 0;
    for (int64_t i = 0; i < p->m; i++) {
        for (int64_t j = 0; j < p->ldc; j++) {
            float got = c[i * p->ldc + j];
            if (j >= p->n) {
                if (got != SENTINEL && failures++ < 5)
                    cr_expect(0, "%s: padding C[%lld][%lld] overwritten", what, (long long)i, (long long)j);
                continue;
            }
            double sum = 0, mag = 0;
            for (int64_t kk = 0; kk < p->k; kk++) {
                double t = a_at(p, i, kk) * b_at(p, kk, j);
                sum += t;
                mag += fabs(t);
            }
            double want = p->alpha * sum, bound = fabs(p->alpha) * mag;
            if (p->beta != 0.0f) {
                want += p->beta * (double)p->c0[i * p->ldc + j];
                bound += fabs(p->beta * (double)p->c0[i * p->ldc + j]);
            }
            double tol = (double)(p->k + 2) * 0x1p-22 * bound + 1e-30;
            if (!(fabs(got - want) <= tol) && failures++ < 5)
                cr_expect(0, "%s: %lldx%lldx%lld ta=%d tb=%d alpha=%g beta=%g: C[%lld][%lld] = %.9g, want %.9g", what,
                          (long long)p->m, (long long)p->n, (long long)p->k, p->ta, p->tb, (double)p->alpha,
                          (double)p->beta, (long long)i, (long long)j, (double)got, want);
        }
    }
    return failures;
}

/* Scratch of exactly the advertised size at an odd address, then a guard. */
typedef struct {
    unsigned char *base;
    size_t size;
    void *ptr;
} scratch_buf;

enum { GUARD = 256 };

static void scratch_make(scratch_buf *s, size_t size) {
    s->size = size;
    s->base = malloc(size + 4 + GUARD);
    cr_assert(s->base);
    memset(s->base, 0x5a, size + 4 + GUARD);
    s->ptr = s->base + 4;
}

static void scratch_check_free(scratch_buf *s) {
    for (size_t i = 0; i < GUARD; i++)
        if (s->base[4 + s->size + i] != 0x5a) {
            cr_expect(0, "scratch overrun at byte %zu past the advertised size", i);
            break;
        }
    free(s->base);
}

static float *run_plain(const problem *p) {
    float *c = copy_c(p);
    scratch_buf s;
    scratch_make(&s, rk_sgemm_scratch_size(p->m, p->n, p->k));
    rk_sgemm(p->m, p->n, p->k, p->alpha, p->a, p->lda, p->ta, p->b, p->ldb, p->tb, p->beta, c, p->ldc, s.ptr);
    scratch_check_free(&s);
    return c;
}

/* A fake pool: runs the tasks one after the other, last tid first. */
static int pool_calls;
static void serial_pool(void *ctx, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    (void)ctx;
    pool_calls++;
    for (int t = nthreads - 1; t >= 0; t--) task(arg, t);
}

/* A real pool: one pthread per task, joined before returning. */
typedef struct {
    void (*task)(void *arg, int tid);
    void *arg;
    int tid;
} thread_job;

static void *thread_main(void *p) {
    thread_job *job = p;
    job->task(job->arg, job->tid);
    return NULL;
}

static void pthread_pool(void *ctx, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    (void)ctx;
    pool_calls++;
    pthread_t th[8];
    thread_job jobs[8];
    cr_assert(nthreads <= 8);
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = (thread_job){task, arg, t};
        cr_assert(pthread_create(&th[t], NULL, thread_main, &jobs[t]) == 0);
    }
    for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
}

static rk_parallel_fn pool = serial_pool;

/* The general entry with optional pre-packing and threads. */
static float *run_ex(const problem *p, int prepack_a, int prepack_b, int nthreads) {
    float *c = copy_c(p);
    float *pa = NULL, *pb = NULL;
    if (prepack_a) {
        pa = malloc(rk_sgemm_packed_a_size(p->m, p->k) + 1);
        cr_assert(pa);
        rk_sgemm_pack_a(p->m, p->k, p->a, p->lda, p->ta, pa);
    }
    if (prepack_b) {
        pb = malloc(rk_sgemm_packed_b_size(p->n, p->k) + 1);
        cr_assert(pb);
        rk_sgemm_pack_b(p->n, p->k, p->b, p->ldb, p->tb, pb);
    }
    rk_sgemm_args g = {p->m, p->n, p->k, p->alpha, p->beta, prepack_a ? NULL : p->a, p->lda, p->ta, pa,
                       prepack_b ? NULL : p->b, p->ldb, p->tb, pb, c, p->ldc};
    scratch_buf s;
    scratch_make(&s, (size_t)nthreads * rk_sgemm_scratch_size(p->m, p->n, p->k));
    rk_sgemm_ex(&g, s.ptr, nthreads, pool, NULL);
    scratch_check_free(&s);
    free(pa);
    free(pb);
    return c;
}

static int same_bits(const problem *p, const float *x, const float *y) {
    return memcmp(x, y, (size_t)(p->m * p->ldc) * sizeof(float)) == 0;
}

static const int64_t shapes[][3] = {   /* m, n, k */
    {1, 1, 1},    {1, 16, 1},   {6, 16, 1},    {1, 1, 300},  {1, 37, 513},   {2, 8, 7},     {5, 9, 17},
    {6, 16, 256}, {7, 17, 257}, {12, 32, 64},  {13, 33, 129}, {3, 100, 40},  {64, 64, 576}, {145, 20, 30},
    {150, 49, 520}, {17, 2050, 33}, {290, 31, 9}, {40, 24, 1000},
};

Test(gemm, shapes_against_naive) {
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        problem p;
        problem_make(&p, shapes[s][0], shapes[s][1], shapes[s][2], 0, 0, 1.0f, 0.0f, s % 3);
        float *c = run_plain(&p);
        check_against_reference(&p, c, "plain");
        free(c);
        problem_free(&p);
    }
}

Test(gemm, transposes_alpha_beta) {
    static const float ab[][2] = {{1, 0}, {1, 1}, {0.5f, -2}, {-3, 0}, {2, 0.25f}};
    static const int64_t some[][3] = {{7, 17, 257}, {1, 33, 65}, {13, 9, 5}, {150, 40, 300}};
    for (int t = 0; t < 4; t++)
        for (size_t x = 0; x < sizeof ab / sizeof *ab; x++)
            for (size_t s = 0; s < sizeof some / sizeof *some; s++) {
                problem p;
                problem_make(&p, some[s][0], some[s][1], some[s][2], t & 1, t >> 1, ab[x][0], ab[x][1], 2);
                float *c = run_plain(&p);
                check_against_reference(&p, c, "transposes");
                free(c);
                problem_free(&p);
            }
}

Test(gemm, beta_zero_ignores_nan_in_c) {
    problem p;
    problem_make(&p, 9, 21, 300, 0, 0, 1.0f, 0.0f, 1);   /* C is all NaN on entry */
    float *c = run_plain(&p);
    for (int64_t i = 0; i < p.m; i++)
        for (int64_t j = 0; j < p.n; j++) cr_expect(!isnan(c[i * p.ldc + j]), "C[%lld][%lld] is NaN", (long long)i, (long long)j);
    check_against_reference(&p, c, "nan");
    free(c);
    problem_free(&p);
}

Test(gemm, k_zero_and_empty) {
    /* K = 0: C = beta * C; with beta = 0, zeros even over NaN */
    float c[6] = {1, 2, 3, NAN, NAN, NAN}, a[1] = {0}, b[1] = {0};
    rk_sgemm(1, 3, 0, 1.0f, a, 1, 0, b, 3, 0, 2.0f, c, 3, NULL);
    cr_expect(c[0] == 2 && c[1] == 4 && c[2] == 6);
    rk_sgemm(1, 3, 0, 1.0f, a, 1, 0, b, 3, 0, 0.0f, c + 3, 3, NULL);
    cr_expect(c[3] == 0 && c[4] == 0 && c[5] == 0);
    /* M = 0 or N = 0: nothing written */
    float untouched[4] = {7, 7, 7, 7};
    rk_sgemm(0, 4, 5, 1.0f, a, 5, 0, b, 4, 0, 0.0f, untouched, 4, NULL);
    rk_sgemm(1, 0, 5, 1.0f, a, 5, 0, b, 0, 0, 0.0f, untouched, 4, NULL);
    for (int i = 0; i < 4; i++) cr_expect(untouched[i] == 7);
    cr_expect(rk_sgemm_scratch_size(0, 5, 5) == 0);
    cr_expect(rk_sgemm_packed_b_size(17, 3) == 32 * 3 * sizeof(float));
    cr_expect(rk_sgemm_packed_a_size(7, 3) == 12 * 3 * sizeof(float));
}

Test(gemm, hand_worked_2x2) {
    /* [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]; alpha 2, beta 1 over C = [1 1; 1 1] */
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {1, 1, 1, 1};
    unsigned char scratch[4096];
    cr_assert(rk_sgemm_scratch_size(2, 2, 2) <= sizeof scratch);
    rk_sgemm(2, 2, 2, 2.0f, a, 2, 0, b, 2, 0, 1.0f, c, 2, scratch);
    cr_expect(c[0] == 39 && c[1] == 45 && c[2] == 87 && c[3] == 101, "got %g %g %g %g", (double)c[0],
              (double)c[1], (double)c[2], (double)c[3]);
    /* A^T * B^T: A^T = [1 3; 2 4], B^T = [5 7; 6 8] -> [23 31; 34 46] */
    rk_sgemm(2, 2, 2, 1.0f, a, 2, 1, b, 2, 1, 0.0f, c, 2, scratch);
    cr_expect(c[0] == 23 && c[1] == 31 && c[2] == 34 && c[3] == 46, "got %g %g %g %g", (double)c[0],
              (double)c[1], (double)c[2], (double)c[3]);
}

Test(gemm, prepacked_equals_unpacked_bitwise) {
    /* with A^T (ta) and N a multiple of 16 up to 512, the AVX-512 kernel
     * reads A in place (an odd panel count ends in a single panel, whose
     * in-place tiles are at most 12 rows): the same bits as A pre-packed */
    static const int64_t some[][3] = {{1, 1000, 300}, {7, 17, 257}, {64, 49, 576}, {150, 2070, 40}, {5, 9, 3},
                                      {20, 20, 513}, {49, 160, 960}, {13, 32, 300}, {196, 64, 384}, {30, 25, 70},
                                      {19, 64, 257}, {7, 512, 40}, {200, 2064, 20}, {49, 80, 960}, {25, 16, 100},
                                      {18, 48, 37}, {13, 16, 9}};
    for (int t = 0; t < 4; t++)
        for (size_t s = 0; s < sizeof some / sizeof *some; s++) {
            problem p;
            problem_make(&p, some[s][0], some[s][1], some[s][2], t & 1, t >> 1, 1.5f, t == 3 ? 0.5f : 0.0f, 1);
            float *ref = run_plain(&p);
            check_against_reference(&p, ref, "plain");
            for (int mode = 1; mode < 4; mode++) {
                float *c = run_ex(&p, mode & 1, mode >> 1, 1);
                cr_expect(same_bits(&p, ref, c), "%lldx%lldx%lld ta=%d tb=%d: pre-packed %s differs from packing at run time",
                          (long long)p.m, (long long)p.n, (long long)p.k, p.ta, p.tb,
                          mode == 1 ? "A" : mode == 2 ? "B" : "A and B");
                free(c);
            }
            free(ref);
            problem_free(&p);
        }
}

/* One problem at 1 thread, then 2..5 threads on `pool`: same bits. */
static void check_thread_counts(int64_t m, int64_t n, int64_t k, int trans_b, int prepacked) {
    problem p;
    problem_make(&p, m, n, k, 0, trans_b, 1.0f, prepacked ? 1.0f : 0.0f, 0);
    float *ref = run_ex(&p, prepacked, prepacked, 1);
    check_against_reference(&p, ref, "threads=1");
    for (int nt = 2; nt <= 5; nt++) {
        pool_calls = 0;
        float *c = run_ex(&p, prepacked, prepacked, nt);
        cr_expect(same_bits(&p, ref, c), "%lldx%lldx%lld: %d threads differ from one", (long long)m, (long long)n,
                  (long long)k, nt);
        if (n >= 64)
            cr_expect(pool_calls == 1, "%lldx%lldx%lld: the pool was not used", (long long)m, (long long)n,
                      (long long)k);
        free(c);
    }
    free(ref);
    problem_free(&p);
}

Test(gemm, thread_count_does_not_change_bits) {
    /* wide (split columns), tall (split rows), and too small to split */
    static const int64_t some[][3] = {{64, 3136, 70}, {300, 49, 300}, {1, 1000, 64}, {5, 7, 9}, {150, 2070, 30}};
    for (int real = 0; real < 2; real++) {
        pool = real ? pthread_pool : serial_pool;
        for (size_t s = 0; s < sizeof some / sizeof *some; s++)
            for (int prepacked = 0; prepacked < 2; prepacked++)
                check_thread_counts(some[s][0], some[s][1], some[s][2], s == 1, prepacked);
    }
}
