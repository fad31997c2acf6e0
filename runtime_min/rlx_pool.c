/* rlx_pool.c - the thread pool of runtime_min: fork-join, nothing else.
 *
 * rk_pool_run(pool, n, task, arg) runs task(arg, tid) for tid 0..n-1 - tid 0
 * on the calling thread, the others on the pool's workers - and returns when
 * all are done. Kernels split their output into disjoint parts by tid, so
 * results never depend on the thread count. Workers spin briefly, then sleep
 * on a condition variable, between runs; the pool is made once, by rlx_model_set_threads
 * (from NAME_init), never during NAME_run.
 *
 * rk_pool_share(pool, n, task, arg) is for kernels whose tasks take their
 * work from a shared counter (rk_take, rlx_rt.h) until none is left: tid 0
 * always runs, a worker only if it comes while work may remain, and the
 * call returns when the caller's task is done and no worker is inside. A
 * worker that another process keeps off its core then costs nothing: the
 * caller takes its share (with rk_pool_run the caller waited for it - a
 * busy neighbour on one of two cores made a model 3-4x slower, not ~1.5x).
 * Each unit of work is computed the same way whoever takes it, so results
 * still do not depend on the thread count or on the timing.
 *
 * Built with RLX_NO_THREADS (or on a platform without POSIX threads), the
 * pool is absent and every task runs on the calling thread.
 */
#if !defined(_POSIX_C_SOURCE) && !defined(RLX_NO_THREADS)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdlib.h>

#include "rlx_rt.h"

#if !defined(RLX_NO_THREADS) && !(defined(__unix__) || defined(__APPLE__))
#define RLX_NO_THREADS 1
#endif

#ifdef RLX_NO_THREADS

int rk_pool_new(int nthreads, rk_pool **out) {
    (void)nthreads;
    *out = NULL;
    return RLX_OK;
}
void rk_pool_free(rk_pool *pool) { (void)pool; }
void rk_pool_run(void *pool, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    (void)pool;
    for (int t = 0; t < nthreads; t++) task(arg, t);
}
void rk_pool_share(void *pool, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    rk_pool_run(pool, nthreads, task, arg);
}

#else
#include <pthread.h>

/* Waking a sleeping thread costs tens of microseconds, as much as a small
 * layer's whole work, and a model runs dozens of layers back to back. So
 * with GCC-style atomics (gcc, clang) a worker that finished spins a while
 * for the next run before it sleeps, and the caller spins for the workers
 * before it sleeps; the sleeps stay for idle time between inferences. The
 * flags are sequentially consistent: a sleeper announces itself, then
 * re-checks under the mutex, and the other side checks for sleepers after
 * publishing, so no wake-up is lost. Other compilers keep the plain
 * mutex + condition protocol. */
#if defined(__GNUC__) && !defined(RLX_NO_ATOMICS)   /* RLX_NO_ATOMICS: the plain protocol, for tests */
#define RK_SPINS 20000
#define RK_SHARE 1
#define LOAD(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)
#define DEC(p) __atomic_sub_fetch(p, 1, __ATOMIC_SEQ_CST)
#define CAS(p, old, v) __atomic_compare_exchange_n(p, old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#define OR(p, v) __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST)
#if defined(__x86_64__) || defined(__i386__)
#define RELAX() __builtin_ia32_pause()
#else
#define RELAX() ((void)0)
#endif
#else
#define RK_SPINS 0
#define RK_SHARE 0   /* rk_pool_share runs every tid, as rk_pool_run */
#define LOAD(p) (*(p))
#define STORE(p, v) (*(p) = (v))
#define DEC(p) (--*(p))
#define RELAX() ((void)0)
#endif

/* A shared run's state word: the run's tag (gen / 2, 32 bits) << 32, the
 * closed bit (set by the caller when its task returns: no worker may join
 * after), and the count of workers inside. */
#define SH_CLOSED (1ull << 31)
#define SH_INSIDE 0x7fffffffull

struct rk_pool {
    int nworkers;              /* threads besides the caller */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;         /* +2 for every run; odd while the caller writes the run's fields */
    int pending;               /* workers still busy with this run (rk_pool_run) */
    int sleepers;              /* workers asleep on go (or about to be) */
    int caller_asleep;         /* the caller waits on done */
    int quit;
    /* the run: written by the caller while gen is odd; with rk_pool_share a
     * worker may read them late, as the next run writes them, so it reads
     * them between two loads of gen and drops what changed (a seqlock) */
    int ntasks;
    int shared;
    void (*task)(void *arg, int tid);
    void *arg;
    unsigned long long state;  /* rk_pool_share: SH_* above */
};

typedef struct {
    rk_pool *pool;
    int tid;
} worker_arg;

/* A shared run's tag in the state word. */
static unsigned long long run_tag(unsigned long gen) { return (unsigned long long)(gen / 2 & 0xffffffffu) << 32; }

#if RK_SHARE   /* without atomics every run is a plain one */
/* Joins shared run gen if it is still open: the caller has not closed it
 * (its task returned: the work is all taken) nor moved on to another run. */
static int share_join(rk_pool *pool, unsigned long gen) {
    unsigned long long s = LOAD(&pool->state);
    while ((s & ~(SH_CLOSED | SH_INSIDE)) == run_tag(gen) && !(s & SH_CLOSED))
        if (CAS(&pool->state, &s, s + 1)) return 1;
    return 0;
}

static void share_leave(rk_pool *pool) {
    unsigned long long s = __atomic_sub_fetch(&pool->state, 1, __ATOMIC_SEQ_CST);
    if (!(s & SH_INSIDE) && (s & SH_CLOSED) && LOAD(&pool->caller_asleep)) {
        pthread_mutex_lock(&pool->mu);
        pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->mu);
    }
}
#endif

static void *worker(void *p) {
    worker_arg *w = p;
    rk_pool *pool = w->pool;
    int tid = w->tid;
    free(w);
    unsigned long seen = 0;
    for (;;) {
        unsigned long gen = seen;
        /* a run: gen even and new */
#define NO_RUN(g) ((g) == seen || ((g) & 1))
        for (int i = 0; i < RK_SPINS && NO_RUN(gen = LOAD(&pool->gen)) && !LOAD(&pool->quit); i++) RELAX();
        if (NO_RUN(gen)) {
            pthread_mutex_lock(&pool->mu);
            STORE(&pool->sleepers, pool->sleepers + 1);
            while (NO_RUN(gen = LOAD(&pool->gen)) && !LOAD(&pool->quit)) pthread_cond_wait(&pool->go, &pool->mu);
            STORE(&pool->sleepers, pool->sleepers - 1);
            pthread_mutex_unlock(&pool->mu);
        }
#undef NO_RUN
        if (LOAD(&pool->quit)) break;
        seen = gen;
        void (*task)(void *, int) = LOAD(&pool->task);
        void *arg = LOAD(&pool->arg);
        int ntasks = LOAD(&pool->ntasks), shared = LOAD(&pool->shared);
        if (LOAD(&pool->gen) != gen) continue;   /* a later (shared) run began: these may be torn */
#if RK_SHARE
        if (shared) {
            if (share_join(pool, gen)) {
                if (tid < ntasks) task(arg, tid);
                share_leave(pool);
            }
            continue;
        }
#else
        (void)shared;
#endif
        if (tid < ntasks) task(arg, tid);
        if (RK_SPINS) {
            if (DEC(&pool->pending) == 0 && LOAD(&pool->caller_asleep)) {
                pthread_mutex_lock(&pool->mu);
                pthread_cond_signal(&pool->done);
                pthread_mutex_unlock(&pool->mu);
            }
        } else {
            pthread_mutex_lock(&pool->mu);
            if (--pool->pending == 0) pthread_cond_signal(&pool->done);
            pthread_mutex_unlock(&pool->mu);
        }
    }
    return NULL;
}

int rk_pool_new(int nthreads, rk_pool **out) {
    *out = NULL;
    if (nthreads <= 1) return RLX_OK;
    rk_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return RLX_E_NOMEM;
    pool->threads = calloc((size_t)nthreads, sizeof(pthread_t));
    if (!pool->threads) {
        free(pool);
        return RLX_E_NOMEM;
    }
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->go, NULL);
    pthread_cond_init(&pool->done, NULL);
    for (int t = 1; t < nthreads; t++) {
        worker_arg *w = malloc(sizeof *w);
        if (!w) {
            rk_pool_free(pool);
            return RLX_E_NOMEM;
        }
        w->pool = pool;
        w->tid = t;
        if (pthread_create(&pool->threads[t - 1], NULL, worker, w) != 0) {
            free(w);
            rk_pool_free(pool);
            return RLX_E_NOMEM;
        }
        pool->nworkers++;
    }
    *out = pool;
    return RLX_OK;
}

void rk_pool_free(rk_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->mu);
    STORE(&pool->quit, 1);
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    for (int t = 0; t < pool->nworkers; t++) pthread_join(pool->threads[t], NULL);
    pthread_mutex_destroy(&pool->mu);
    pthread_cond_destroy(&pool->go);
    pthread_cond_destroy(&pool->done);
    free(pool->threads);
    free(pool);
}

/* Publishes a run to the workers (the caller holds mu). */
static void publish(rk_pool *pool, int on_workers, int shared, void (*task)(void *arg, int tid), void *arg) {
    unsigned long gen = pool->gen + 2;
    STORE(&pool->gen, pool->gen + 1);   /* odd: the fields below are being written */
    STORE(&pool->task, task);
    STORE(&pool->arg, arg);
    STORE(&pool->ntasks, on_workers);
    STORE(&pool->shared, shared);
    if (shared) STORE(&pool->state, run_tag(gen));
    else STORE(&pool->pending, pool->nworkers);
    STORE(&pool->gen, gen);
    if (!RK_SPINS || LOAD(&pool->sleepers)) pthread_cond_broadcast(&pool->go);
}

static void run(rk_pool *pool, int nthreads, int shared, void (*task)(void *arg, int tid), void *arg) {
    if (!pool || nthreads <= 1) {
        for (int t = 0; t < nthreads; t++) task(arg, t);
        return;
    }
    /* tids beyond the pool's size run on the caller, after its own */
    int on_workers = nthreads > pool->nworkers + 1 ? pool->nworkers + 1 : nthreads;
    pthread_mutex_lock(&pool->mu);   /* no worker sleeps or wakes while the run is published */
    publish(pool, on_workers, shared, task, arg);
    pthread_mutex_unlock(&pool->mu);
    task(arg, 0);
    for (int t = on_workers; t < nthreads; t++) task(arg, t);
#if RK_SHARE
    if (shared) {   /* close the run, then wait for the workers inside only */
        OR(&pool->state, SH_CLOSED);
        for (int i = 0; i < RK_SPINS && (LOAD(&pool->state) & SH_INSIDE); i++) RELAX();
        if (LOAD(&pool->state) & SH_INSIDE) {
            pthread_mutex_lock(&pool->mu);
            STORE(&pool->caller_asleep, 1);
            while (LOAD(&pool->state) & SH_INSIDE) pthread_cond_wait(&pool->done, &pool->mu);
            STORE(&pool->caller_asleep, 0);
            pthread_mutex_unlock(&pool->mu);
        }
        return;
    }
#endif
    for (int i = 0; i < RK_SPINS && LOAD(&pool->pending); i++) RELAX();
    if (LOAD(&pool->pending)) {
        pthread_mutex_lock(&pool->mu);
        STORE(&pool->caller_asleep, 1);
        while (LOAD(&pool->pending)) pthread_cond_wait(&pool->done, &pool->mu);
        STORE(&pool->caller_asleep, 0);
        pthread_mutex_unlock(&pool->mu);
    }
}

void rk_pool_run(void *p, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    run(p, nthreads, 0, task, arg);
}

void rk_pool_share(void *p, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    run(p, nthreads, RK_SHARE, task, arg);
}
#endif

/* ---- elementwise regions (rk_region_run, rlx_rt.h) ---- */

enum { REGION_RUNS = 4 };                         /* runs per thread (rk_take) */
#define REGION_THREAD_MIN ((int64_t)1 << 15)      /* elements below which one thread does it all */

typedef struct {
    rk_region_fn fn;
    uint8_t *A;
    const uint8_t *W;
    int64_t n;
    int nthreads;
    rk_queue *q;
} Region;

static void region_task(void *arg, int tid) {
    const Region *R = arg;
    int64_t cursor = 0, k, lo, hi;
    for (int v; (v = rk_take(R->q, R->nthreads, tid, REGION_RUNS, &cursor, &k)) >= 0;) {
        rk_run_range(R->n, R->nthreads, REGION_RUNS, v, k, &lo, &hi);
        if (lo < hi) R->fn(R->A, R->W, lo, hi);
    }
}

void rk_region_run(rk_ctx *ctx, rk_region_fn fn, uint8_t *A, const uint8_t *W, int64_t n, int64_t elems) {
    int64_t nt = ctx && ctx->pool && ctx->nthreads > 1 && elems >= REGION_THREAD_MIN ? ctx->nthreads : 1;
    if (nt > n) nt = n;
    if (nt <= 1) {
        fn(A, W, 0, n);
        return;
    }
    rk_queue q;
    Region R = {fn, A, W, n, (int)rk_queue_init(&q, nt), &q};
    rk_pool_share(ctx->pool, R.nthreads, region_task, &R);
}
