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
