/* gemm_bench.c - rk_sgemm (runtime_min/rk_gemm.c) against OpenBLAS cblas_sgemm.
 *
 * For each shape, runs rlx and OpenBLAS alternately (so that frequency and
 * cache drifts hit both alike), repeats until about `budget` seconds are
 * spent, and prints the median GFLOP/s of each and their ratio:
 *
 *     gemm 1024x1024x1024: rlx 70.1 GFLOP/s, openblas 73.4 GFLOP/s, ratio 0.955
 *
 * Shapes are M x K x N (C is M x N). OpenBLAS runs on one thread; rlx on one
 * thread too. The best run of each is printed as well: on a loaded machine the
 * median measures the load, the best run and the median over thread CPU time
 * (which leaves out time spent preempted) measure the code. A program that prints figures, not a test: it checks only that
 * the two results agree to a loose tolerance, and says so if not.
 *
 *   gemm_bench [--budget SECONDS] [MxKxN[:tb|:pb|:pa|:pab][:cold]]...
 *       (:tb transposed B, :pb pre-packed B, :pa pre-packed A: convolution weights,
 *        :pab both pre-packed: a Winograd product; :cold with :pa or :pab runs
 *        each product on another copy of the packed A, with :pb on another
 *        copy of the packed B (a convolution in its transposed form), cycling
 *        through 256 MB of them, so that the weights stream from DRAM as a
 *        model's do)
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk_gemm.h"

void openblas_set_num_threads(int);

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of this thread: on a loaded machine, time spent preempted is not
 * counted, so it measures the code rather than the load. */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *xmalloc(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64)) {
        fprintf(stderr, "gemm_bench: out of memory\n");
        exit(1);
    }
    return p;
}

enum { MAX_RUNS = 2001 };
#define COLD_BYTES ((size_t)256 << 20)

/* prepacked: 0 none, 1 B (weights of MatMul), 2 A (weights of a convolution),
 * 3 both (a Winograd product); cold: cycle through copies of the packed
 * weights (A where A is pre-packed, else B) */
static void bench_shape(int64_t m, int64_t k, int64_t n, int trans_b, int prepacked, int cold, double budget) {
    float *a = xmalloc((size_t)(m * k) * sizeof(float));
    float *b = xmalloc((size_t)(k * n) * sizeof(float));
    float *c_rlx = xmalloc((size_t)(m * n) * sizeof(float));
    float *c_ob = xmalloc((size_t)(m * n) * sizeof(float));
    void *scratch = xmalloc(rk_sgemm_scratch_size(m, n, k));
    size_t pb_floats = rk_sgemm_packed_b_size(n, k) / sizeof(float);
    size_t pb_copies = prepacked == 1 || prepacked == 3 ? (cold && prepacked == 1 ? COLD_BYTES / (pb_floats * sizeof(float)) + 1 : 1) : 0;
    float *packed = pb_copies ? xmalloc(pb_copies * pb_floats * sizeof(float)) : NULL;
    size_t pa_floats = rk_sgemm_packed_a_size(m, k) / sizeof(float);
    size_t copies = prepacked >= 2 ? (cold ? COLD_BYTES / (pa_floats * sizeof(float)) + 1 : 1) : 0;
    float *packed_a = copies ? xmalloc(copies * pa_floats * sizeof(float)) : NULL;
    int64_t ldb = trans_b ? k : n;
    srand(1);
    for (int64_t i = 0; i < m * k; i++) a[i] = (float)((double)rand() / RAND_MAX - 0.5);
    for (int64_t i = 0; i < k * n; i++) b[i] = (float)((double)rand() / RAND_MAX - 0.5);
    for (size_t i = 0; i < pb_copies; i++) rk_sgemm_pack_b(n, k, b, ldb, trans_b, packed + i * pb_floats);
    for (size_t i = 0; i < copies; i++) rk_sgemm_pack_a(m, k, a, k, 0, packed_a + i * pa_floats);
    rk_sgemm_args args = {.m = m, .n = n, .k = k, .alpha = 1.0f, .a = a, .lda = k, .b = b, .ldb = ldb, .trans_b = trans_b,
                          .c = c_rlx, .ldc = n};
    if (packed) args.b = NULL, args.packed_b = packed;
    if (packed_a) args.a = NULL, args.packed_a = packed_a;

    double flops = 2.0 * (double)m * (double)n * (double)k;
    static double t_rlx[MAX_RUNS], t_ob[MAX_RUNS], u_rlx[MAX_RUNS], u_ob[MAX_RUNS];
    int runs = 0;
    double start = now_s();
    while (runs < MAX_RUNS && (runs < 5 || now_s() - start < budget)) {
        if (copies > 1) args.packed_a = packed_a + (size_t)runs % copies * pa_floats;
        if (pb_copies > 1) args.packed_b = packed + (size_t)runs % pb_copies * pb_floats;
        double u0 = cpu_s(), t0 = now_s();
        if (prepacked)
            rk_sgemm_ex(&args, scratch, 1, NULL, NULL);
        else
            rk_sgemm(m, n, k, 1.0f, a, k, 0, b, ldb, trans_b, 0.0f, c_rlx, n, scratch);
        double t1 = now_s(), u1 = cpu_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, 1.0f,
                    a, (int)k, b, (int)ldb, 0.0f, c_ob, (int)n);
        double t2 = now_s(), u2 = cpu_s();
        t_rlx[runs] = flops / (t1 - t0) * 1e-9;
        t_ob[runs] = flops / (t2 - t1) * 1e-9;
        u_rlx[runs] = flops / (u1 - u0) * 1e-9;
        u_ob[runs] = flops / (u2 - u1) * 1e-9;
        runs++;
    }
    double worst = 0;
    for (int64_t i = 0; i < m * n; i++) {
        double d = fabs((double)c_rlx[i] - (double)c_ob[i]) / (1.0 + fabs((double)c_ob[i]));
        if (!(d <= worst)) worst = d;
    }
    double g_rlx = median(t_rlx, runs), g_ob = median(t_ob, runs);
    double best_rlx = t_rlx[runs - 1], best_ob = t_ob[runs - 1];   /* sorted by median() */
    double cpu_rlx = median(u_rlx, runs), cpu_ob = median(u_ob, runs);
    static const char *kinds[] = {"", " (B pre-packed)", " (A pre-packed)", " (A, B pre-packed)"};
    printf("gemm %lldx%lldx%lld%s%s: rlx %.1f GFLOP/s, openblas %.1f GFLOP/s, ratio %.3f"
           "  [best of %d: %.1f, %.1f, ratio %.3f; cpu-time median: %.1f, %.1f, ratio %.3f]%s\n",
           (long long)m, (long long)k, (long long)n, trans_b ? " (B^T)" : kinds[prepacked], cold ? " cold" : "", g_rlx,
           g_ob, g_rlx / g_ob, runs, best_rlx, best_ob, best_rlx / best_ob, cpu_rlx, cpu_ob, cpu_rlx / cpu_ob, worst > 1e-3 ? "  RESULTS DIFFER" : "");
    fflush(stdout);
    free(a);
    free(b);
    free(c_rlx);
    free(c_ob);
    free(scratch);
    free(packed);
    free(packed_a);
}

static const char *default_shapes[] = {
    "1024x1024x1024", "1024x1024x1024:pb",
    "1x512x512", "1x2304x1000", "8x768x768", "16x512x2048", "32x1024x1024", "64x2304x1000", "64x768x3072:tb",
    "64x576x3136", "128x1152x784", "256x2304x196", "512x4608x49", "64x576x3136:pa", "512x4608x49:pa",
};

int main(int argc, char **argv) {
    double budget = 1.0;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--budget") == 0) {
        budget = atof(argv[2]);
        first = 3;
    }
    openblas_set_num_threads(1);
    int nshapes = argc > first ? argc - first : (int)(sizeof default_shapes / sizeof *default_shapes);
    for (int s = 0; s < nshapes; s++) {
        const char *spec = argc > first ? argv[first + s] : default_shapes[s];
        long long m, k, n;
        char flags[32] = "";
        if (sscanf(spec, "%lldx%lldx%lld%31s", &m, &k, &n, flags) < 3 || m < 1 || k < 1 || n < 1) {
            fprintf(stderr, "gemm_bench: bad shape '%s' (want MxKxN[:tb|:pb|:pa|:pab][:cold])\n", spec);
            return 1;
        }
        int trans_b = 0, prepacked = 0, cold = 0;
        for (char *f = strtok(flags, ":"); f; f = strtok(NULL, ":")) {
            if (strcmp(f, "tb") == 0) trans_b = 1;
            else if (strcmp(f, "pb") == 0) prepacked = 1;
            else if (strcmp(f, "pa") == 0) prepacked = 2;
            else if (strcmp(f, "pab") == 0) prepacked = 3;
            else if (strcmp(f, "cold") == 0) cold = 1;
            else {
                fprintf(stderr, "gemm_bench: bad flag '%s' in '%s'\n", f, spec);
                return 1;
            }
        }
        if (cold && prepacked == 0) {
            fprintf(stderr, "gemm_bench: ':cold' needs ':pb', ':pa' or ':pab' in '%s'\n", spec);
            return 1;
        }
        bench_shape(m, k, n, trans_b, prepacked, cold, budget);
    }
    return 0;
}
