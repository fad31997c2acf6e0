/* test_threads.c - runtime_min's thread pool (rlx_pool.c) and work sharing
 * (rk_take, rlx_rt.h).
 *
 * rk_pool_share may skip a worker that comes late and return as soon as the
 * caller's task is done and no worker is inside; rk_pool_run must run every
 * tid. Both are driven here with more threads than this machine has cores
 * (so workers come late all the time), interleaved, thousands of times:
 * every unit of a shared run must be done exactly once by the time the call
 * returns, and nothing may touch it after (a late worker that ran a run's
 * task after the run was closed would count a unit twice by the next
 * check); every tid of a plain run must run exactly once. rk_take must hand
 * a thread its own units first, in rising order (others may take some of
 * them when done with theirs), and every unit once whoever asks.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "rlx_rt.h"

enum { NT = 4, PER = 7, UNITS = NT * PER };

typedef struct {
    rk_queue *q;
    int nthreads;
    int hits[UNITS];
    int order_ok;     /* tid 0 took its own units first, in rising order */
    int tid_runs[8];  /* plain runs: calls per tid */
} Work;

static void shared_task(void *arg, int tid) {
    Work *w = arg;
    int64_t cursor = 0, k, last = -1;
    int left_own = 0;
    for (int v; (v = rk_take(w->q, w->nthreads, tid, PER, &cursor, &k)) >= 0;) {
        /* the caller's own units in rising order (others may take some of them), then others' */
        if (tid == 0) {
            if (v != 0) left_own = 1;
            else if (left_own || k <= last) w->order_ok = 0;
            else last = k;
        }
        __atomic_fetch_add(&w->hits[v * PER + k], 1, __ATOMIC_RELAXED);
        for (volatile int spin = 0; spin < 200; spin++) {}   /* a little work per unit */
    }
}

static void plain_task(void *arg, int tid) {
    Work *w = arg;
    __atomic_fetch_add(&w->tid_runs[tid], 1, __ATOMIC_RELAXED);
}

Test(threads, shared_and_plain_runs_interleaved) {
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(NT, &pool), 0);
    Work w;
    memset(&w, 0, sizeof w);
    rk_queue q;
    w.q = &q;
    w.nthreads = NT;
    w.order_ok = 1;
    int plain = 0, bad_units = 0, bad_tids = 0;
    for (int it = 1; it <= 4000; it++) {
        rk_queue_init(&q, NT);
        rk_pool_share(pool, NT, shared_task, &w);
        for (int u = 0; u < UNITS; u++) bad_units += w.hits[u] != it;
        if (it % 3 == 0) {   /* a plain run now and then: every tid, once */
            rk_pool_run(pool, NT, plain_task, &w);
            plain++;
            for (int t = 0; t < NT; t++) bad_tids += w.tid_runs[t] != plain;
        }
        if (bad_units || bad_tids) break;
    }
    cr_expect_eq(bad_units, 0, "a unit done more or less than once per shared run");
    cr_expect_eq(bad_tids, 0, "a tid of a plain run ran more or less than once");
    cr_expect(w.order_ok, "the caller did not take its own units first, in order");
    /* more tids than the pool has threads: the rest run on the caller */
    memset(w.tid_runs, 0, sizeof w.tid_runs);
    rk_pool_run(pool, 6, plain_task, &w);
    for (int t = 0; t < 6; t++) cr_expect_eq(w.tid_runs[t], 1, "tid %d", t);
    rk_pool_free(pool);
}

Test(threads, take_without_pool) {
    /* no pool: rk_pool_share runs the tids one after another; every unit once */
    Work w;
    memset(&w, 0, sizeof w);
    rk_queue q;
    rk_queue_init(&q, NT);
    w.q = &q;
    w.nthreads = NT;
    w.order_ok = 1;
    rk_pool_share(NULL, NT, shared_task, &w);
    for (int u = 0; u < UNITS; u++) cr_expect_eq(w.hits[u], 1, "unit %d", u);
    cr_expect(w.order_ok);
}

Test(threads, run_ranges_cover_the_even_split) {
    /* owner v's runs together are [total * v / n, total * (v + 1) / n), in order, without gaps */
    for (int64_t total = 0; total < 60; total++)
        for (int n = 1; n <= 5; n++)
            for (int64_t per = 1; per <= 4; per++) {
                int64_t at = 0;
                for (int v = 0; v < n; v++) {
                    cr_assert_eq(at, total * v / n);
                    for (int64_t k = 0; k < per; k++) {
                        int64_t lo, hi;
                        rk_run_range(total, n, per, v, k, &lo, &hi);
                        cr_assert_eq(lo, at);
                        cr_assert_geq(hi, lo);
                        at = hi;
                    }
                }
                cr_assert_eq(at, total);
            }
}

/* A classifier's batch-1 product against pre-packed weights (matmul_f32 at
 * 4 threads on this machine's cores, where workers come late): its columns
 * are shared through the queue (rk_linalg.c), so a late worker's groups are
 * done by the others. It must give the 1-thread bytes on every call: when
 * each thread owned a fixed part, a skipped worker's columns were left as
 * they were (ResNet-18 at 3 threads on 2 cores). */
#include <stdlib.h>
#include "rk_gemm.h"
#include "rlx_scalar.h"

Test(threads, few_rows_product_shared_over_late_workers) {
    enum { M = 1, N = 1000, K = 300, CALLS = 300 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N), *bias = malloc(sizeof(float) * N);
    float *want = malloc(sizeof(float) * M * N), *got = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) a[i] = (float)(i % 13) * 0.25f - 1.5f;
    for (int i = 0; i < K * N; i++) b[i] = (float)(i % 11) * 0.125f - 0.625f;
    for (int i = 0; i < N; i++) bias[i] = (float)(i % 5) - 2.0f;
    float *packed = malloc(rk_sgemm_packed_b_size(N, K));
    rk_sgemm_pack_b(N, K, b, N, 0, packed);
    rk_matmul_f32_params p;
    memset(&p, 0, sizeof p);
    p.m = M, p.n = N, p.k = K, p.b_packed = 1, p.has_bias = 1, p.act = RS_ACT_RELU;
    size_t per = rk_sgemm_scratch_size(M, N, K);
    uint8_t *scratch = malloc(per * NT);
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(NT, &pool), 0);
    rk_ctx one = {1, NULL, scratch, per}, many = {NT, pool, scratch, per};
    const void *in[3] = {a, packed, bias};
    cr_assert_eq(rk_matmul_f32(&one, &p, in, (void *const[]){want}), RLX_OK);
    int bad = 0;
    for (int call = 0; call < CALLS && !bad; call++) {
        for (int i = 0; i < M * N; i++) got[i] = 7.0f;
        cr_assert_eq(rk_matmul_f32(&many, &p, in, (void *const[]){got}), RLX_OK);
        bad = memcmp(want, got, sizeof(float) * M * N) != 0;
    }
    cr_expect(!bad, "a %d-thread call differs from the 1-thread bytes", NT);
    rk_pool_free(pool);
    free(a), free(b), free(bias), free(want), free(got), free(packed), free(scratch);
}
