/* rk_pool.c - the thread pool of runtime_min: fork-join, nothing else.
 *
 * rk_pool_run(pool, n, task, arg) runs task(arg, tid) for tid 0..n-1 - tid 0
 * on the calling thread, the others on the pool's workers - and returns when
 * all are done. Kernels split their output into disjoint parts by tid, so
 * results never depend on the thread count. Workers spin briefly, then sleep
 * on a condition variable, between runs; the pool is made once, by rlx_model_set_threads
 * (from NAME_init), never during NAME_run.
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
#if defined(__GNUC__)
#define RK_SPINS 20000
#define LOAD(p) __atomic_load_n(p, __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n(p, v, __ATOMIC_SEQ_CST)
#define DEC(p) __atomic_sub_fetch(p, 1, __ATOMIC_SEQ_CST)
#if defined(__x86_64__) || defined(__i386__)
#define RELAX() __builtin_ia32_pause()
#else
#define RELAX() ((void)0)
#endif
#else
#define RK_SPINS 0
#define LOAD(p) (*(p))
#define STORE(p, v) (*(p) = (v))
#define DEC(p) (--*(p))
#define RELAX() ((void)0)
#endif

struct rk_pool {
    int nworkers;              /* threads besides the caller */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;         /* bumped for every run */
    int pending;               /* workers still busy with this run */
    int sleepers;              /* workers asleep on go (or about to be) */
    int caller_asleep;         /* the caller waits on done */
    int quit;
    int ntasks;
    void (*task)(void *arg, int tid);
    void *arg;
};

typedef struct {
    rk_pool *pool;
    int tid;
} worker_arg;

static void *worker(void *p) {
    worker_arg *w = p;
    rk_pool *pool = w->pool;
    int tid = w->tid;
    free(w);
    unsigned long seen = 0;
    for (;;) {
        unsigned long gen = seen;
        for (int i = 0; i < RK_SPINS && (gen = LOAD(&pool->gen)) == seen && !LOAD(&pool->quit); i++) RELAX();
        if (gen == seen) {
            pthread_mutex_lock(&pool->mu);
            STORE(&pool->sleepers, pool->sleepers + 1);
            while ((gen = LOAD(&pool->gen)) == seen && !LOAD(&pool->quit)) pthread_cond_wait(&pool->go, &pool->mu);
            STORE(&pool->sleepers, pool->sleepers - 1);
            pthread_mutex_unlock(&pool->mu);
        }
        if (LOAD(&pool->quit)) break;
        seen = gen;
        /* task, arg, ntasks were written before gen was bumped */
        if (tid < pool->ntasks) pool->task(pool->arg, tid);
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

void rk_pool_run(void *p, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    rk_pool *pool = p;
    if (!pool || nthreads <= 1) {
        for (int t = 0; t < nthreads; t++) task(arg, t);
        return;
    }
    /* tids beyond the pool's size run on the caller, after its own */
    int on_workers = nthreads > pool->nworkers + 1 ? pool->nworkers + 1 : nthreads;
    pthread_mutex_lock(&pool->mu);   /* no worker reads these while it is held */
    pool->task = task;
    pool->arg = arg;
    pool->ntasks = on_workers;
    STORE(&pool->pending, pool->nworkers);
    STORE(&pool->gen, pool->gen + 1);
    if (!RK_SPINS || LOAD(&pool->sleepers)) pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    task(arg, 0);
    for (int t = on_workers; t < nthreads; t++) task(arg, t);
    for (int i = 0; i < RK_SPINS && LOAD(&pool->pending); i++) RELAX();
    if (LOAD(&pool->pending)) {
        pthread_mutex_lock(&pool->mu);
        STORE(&pool->caller_asleep, 1);
        while (LOAD(&pool->pending)) pthread_cond_wait(&pool->done, &pool->mu);
        STORE(&pool->caller_asleep, 0);
        pthread_mutex_unlock(&pool->mu);
    }
}
#endif
