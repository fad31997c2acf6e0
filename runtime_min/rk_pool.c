/* rk_pool.c - the thread pool of runtime_min: fork-join, nothing else.
 *
 * rk_pool_run(pool, n, task, arg) runs task(arg, tid) for tid 0..n-1 - tid 0
 * on the calling thread, the others on the pool's workers - and returns when
 * all are done. Kernels split their output into disjoint parts by tid, so
 * results never depend on the thread count. Workers sleep on a condition
 * variable between runs; the pool is made once, by rlx_model_set_threads
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

struct rk_pool {
    int nworkers;              /* threads besides the caller */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;         /* bumped for every run */
    int pending;               /* workers still busy with this run */
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
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (pool->gen == seen && !pool->quit) pthread_cond_wait(&pool->go, &pool->mu);
        if (pool->quit) break;
        seen = pool->gen;
        void (*task)(void *, int) = pool->task;
        void *arg = pool->arg;
        int ntasks = pool->ntasks;
        pthread_mutex_unlock(&pool->mu);
        if (tid < ntasks) task(arg, tid);
        pthread_mutex_lock(&pool->mu);
        if (--pool->pending == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->mu);
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
    pool->quit = 1;
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
    pthread_mutex_lock(&pool->mu);
    pool->task = task;
    pool->arg = arg;
    pool->ntasks = on_workers;
    pool->pending = pool->nworkers;
    pool->gen++;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->mu);
    task(arg, 0);
    for (int t = on_workers; t < nthreads; t++) task(arg, t);
    pthread_mutex_lock(&pool->mu);
    while (pool->pending) pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}
#endif
