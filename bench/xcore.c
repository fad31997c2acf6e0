/* xcore.c - what it costs one thread to read or overwrite data that the
 * other thread wrote last, against data it wrote itself. A program that
 * prints figures, not a test.
 *
 *   xcore [KB]...       (default 256 1024 4096)
 *
 * Two threads, pinned to CPUs 0 and 1 where the system allows. For each
 * buffer size and each of four cases it repeats: a writer thread fills the
 * buffer, then the timed thread reads it (a sum) or overwrites it; the
 * writer is the timed thread itself ("own") or the other one ("other"). It
 * prints the median time of a pass and the bandwidth:
 *
 *     1024 KB  read own   9.3 us 112.4 GB/s | read other  28.4 us  36.9 GB/s | ...
 *
 * A model run on N threads has each layer's threads read what the previous
 * layer's threads wrote, and write over the arena that earlier layers'
 * threads wrote: where "other" is far slower than "own", work that moves
 * between threads from one layer to the next costs that difference
 * (docs/performance.md, the Zen 5 VM's 2-thread scaling). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { PASSES = 301 };

typedef struct {
    float *buf;
    size_t n;
    int writer;                  /* 0: the timed thread writes, 1: the helper does */
    int op;                      /* 0 read, 1 write */
    volatile int stage;          /* pass p: 2p+1 the helper may write, 2p+2 it has */
    double t[PASSES];
    volatile float sink;
} Case;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pin(int cpu) {
#ifdef __linux__
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);   /* unpinned where it fails */
#else
    (void)cpu;
#endif
}

static void fill(float *b, size_t n, float v) {
    for (size_t i = 0; i < n; i++) b[i] = v;
}

static float sum(const float *b, size_t n) {
    float s[16] = {0};
    for (size_t i = 0; i < n; i += 16)
        for (int j = 0; j < 16; j++) s[j] += b[i + j];
    float t = 0;
    for (int j = 0; j < 16; j++) t += s[j];
    return t;
}

static void *helper(void *arg) {
    Case *c = arg;
    pin(1);
    for (int p = 0; p < PASSES; p++) {
        while (__atomic_load_n(&c->stage, __ATOMIC_ACQUIRE) != 2 * p + 1) {
        }
        fill(c->buf, c->n, (float)p);
        __atomic_store_n(&c->stage, 2 * p + 2, __ATOMIC_RELEASE);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds of a timed pass. */
static double run_case(Case *c) {
    pthread_t th;
    c->stage = 0;
    if (c->writer && pthread_create(&th, NULL, helper, c)) {
        fprintf(stderr, "xcore: cannot start a thread\n");
        exit(1);
    }
    for (int p = 0; p < PASSES; p++) {
        if (c->writer) {
            __atomic_store_n(&c->stage, 2 * p + 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(&c->stage, __ATOMIC_ACQUIRE) != 2 * p + 2) {
            }
        } else {
            fill(c->buf, c->n, (float)p);
        }
        double t0 = now_s();
        if (c->op == 0) c->sink = sum(c->buf, c->n);
        else fill(c->buf, c->n, (float)p + 0.5f);
        c->t[p] = now_s() - t0;
    }
    if (c->writer) pthread_join(th, NULL);
    qsort(c->t, PASSES, sizeof c->t[0], cmp_double);
    return c->t[PASSES / 2];
}

int main(int argc, char **argv) {
    static const int dflt[] = {256, 1024, 4096};
    int nsizes = argc > 1 ? argc - 1 : 3;
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {   /* the two threads spin for each other */
        fprintf(stderr, "xcore: needs 2 CPUs\n");
        return 1;
    }
    pin(0);
    for (int s = 0; s < nsizes; s++) {
        long kb = argc > 1 ? strtol(argv[s + 1], NULL, 10) : dflt[s];
        if (kb < 1 || kb > 1 << 20) {
            fprintf(stderr, "xcore: %s: a size in KB from 1 to 1048576\n", argv[s + 1]);
            return 1;
        }
        Case *c = calloc(1, sizeof *c);
        size_t n = (size_t)kb * 1024 / sizeof(float) / 16 * 16;
        float *buf = aligned_alloc(64, n * sizeof(float));
        if (!c || !buf) {
            fprintf(stderr, "xcore: out of memory\n");
            return 1;
        }
        c->buf = buf;
        c->n = n;
        printf("%6ld KB", kb);
        for (int op = 0; op < 2; op++)
            for (int writer = 0; writer < 2; writer++) {
                c->op = op;
                c->writer = writer;
                double t = run_case(c);
                printf(" %s %s %7.1f us %6.1f GB/s%s", op ? "write" : "read", writer ? "other" : "own  ", t * 1e6,
                       (double)n * sizeof(float) / t / 1e9, op == 1 && writer == 1 ? "\n" : " |");
            }
        free(buf);
        free(c);
    }
    return 0;
}
