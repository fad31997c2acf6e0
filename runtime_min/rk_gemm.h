/* rk_gemm.h - single-precision GEMM of runtime_min (rk_gemm.c).
 *
 *     C = alpha * op(A) * op(B) + beta * C      all row-major, op(X) = X or X^T
 *
 * op(A) is M x K, op(B) is K x N, C is M x N with row stride ldc. A stored
 * untransposed is M x K with row stride lda, transposed it is K x M (same for
 * B: K x N, or N x K when trans_b). beta == 0 never reads C, so C may hold
 * garbage (NaN) on entry. K == 0 gives C = beta * C (C = 0 if beta == 0).
 *
 * Nothing here allocates: the pack buffers come from `scratch`, which must hold
 * rk_sgemm_scratch_size(M, N, K) bytes (per thread for the threaded entry; any
 * alignment, the code aligns inside it). The size is bounded by a fixed cache
 * block (under 2.3 MB) whatever the problem size.
 *
 * Either operand can be packed ahead of time (at compile time, for weights):
 * rk_sgemm_pack_b writes op(B) into a caller buffer of rk_sgemm_packed_b_size
 * bytes, in exactly the layout the run-time packing produces, so a run with a
 * pre-packed operand is bit-for-bit equal to one without. The layout depends
 * only on (N, K) (resp. (M, K)) and on constants that do not change with the
 * compiler flags, so rlxc (built without -mavx2) and a generated model (built
 * with -march=native) agree on it. Packed data is plain floats, little-endian
 * like the rest of the weights file.
 *
 * Results never depend on the thread count: threads split the output into
 * disjoint tiles and every output element sees the same sequence of operations.
 * An epilogue (bias, residual, activation; see rk_sgemm_args) can be fused:
 * it runs on each tile as it completes, with the bits of a separate pass.
 */
#ifndef RK_GEMM_H
#define RK_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "rk_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

/* p rounded up to a 64-byte boundary: where the scratch users (the GEMM's
 * pack buffers, Winograd's V and M) start their arrays. */
static inline float *rk_align64f(void *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

/* Fork-join callback of the caller's thread pool: runs task(arg, tid) for
 * tid = 0 .. nthreads-1 (concurrently or not) and returns when all are done;
 * or, like rk_pool_share, for tid 0 and those others that come while work is
 * left (the GEMM's tasks take their share with rk_take: either is right). */
typedef void (*rk_parallel_fn)(void *ctx, int nthreads, void (*task)(void *arg, int tid), void *arg);

/* Everything a GEMM call needs. packed_a / packed_b, when not NULL, replace
 * a/lda/trans_a (resp. b/ldb/trans_b) and come from rk_sgemm_pack_a/_b with the
 * same M/N and K. */
typedef struct {
    int64_t m, n, k;
    float alpha, beta;
    const float *a;
    int64_t lda;
    int trans_a;
    const float *packed_a;
    const float *b;
    int64_t ldb;
    int trans_b;
    const float *packed_b;
    float *c;
    int64_t ldc;
    /* Optional epilogue, applied to each C tile once its last K block is in
     * (all zero: none). With bias_per_col == 0 (convolution: one bias per
     * output channel = row) it is y = y + bias[i] + res where there is a
     * residual, else y + bias[i] where bias[i] != 0; with bias_per_col it is
     * y + bias[j], then + res. Then y = act(y) (an RS_ACT_* of rlx_scalar.h,
     * parameters act_a, act_b). res is M x N with row stride ldres. */
    const float *bias;
    int bias_per_col;
    const float *res;
    int64_t ldres;
    int act;
    float act_a, act_b;
} rk_sgemm_args;

/* The micro-kernel this build of rk_gemm.c holds: "avx512 12x32",
 * "avx2 6x16", "neon 6x16" or "portable 6x16" (tests check it is the one
 * they mean to run). In x86's dispatching library each variant has its own
 * (rk_isa.h); rlx_isa_name() tells which variant runs. */
const char *rk_sgemm_kernel(void);

/* Bytes of scratch one thread needs for an M x N x K product. */
size_t rk_sgemm_scratch_size(int64_t m, int64_t n, int64_t k);

/* C = alpha * op(A) * op(B) + beta * C, one thread. */
void rk_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, int trans_a,
              const float *b, int64_t ldb, int trans_b, float beta, float *c, int64_t ldc, void *scratch);

/* Pre-packed B: bytes of the packed form of a K x N op(B); packing it; using it. */
size_t rk_sgemm_packed_b_size(int64_t n, int64_t k);
void rk_sgemm_pack_b(int64_t n, int64_t k, const float *b, int64_t ldb, int trans_b, float *packed_b);
void rk_sgemm_prepacked(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, int trans_a,
                        const float *packed_b, float beta, float *c, int64_t ldc, void *scratch);

/* Part of rk_sgemm_pack_b's output for an untransposed B (N <= 2048):
 * column panels [p0, p1) (RK_SGEMM_COL_STEP columns each) of K block kb
 * (rows [kb * rk_sgemm_kc_step(k), ..)), so that threads can pack one
 * shared B together, each its own parts. */
void rk_sgemm_pack_b_panels(int64_t n, int64_t k, const float *b, int64_t ldb, int64_t kb, int64_t p0, int64_t p1,
                            float *packed_b);

/* Writing a packed op(B) (K x N, N <= 2048) directly: row kk's first NR
 * columns start at *row_off, and each next NR columns *panel_stride floats
 * further; element (kk, j) is at row_off + (j / 16) * panel_stride + j % 16. */
void rk_sgemm_packed_b_row(int64_t n, int64_t k, int64_t kk, int64_t *row_off, int64_t *panel_stride);

/* Pre-packed A (convolution weights, M = output channels): the same for an M x K op(A). */
size_t rk_sgemm_packed_a_size(int64_t m, int64_t k);
void rk_sgemm_pack_a(int64_t m, int64_t k, const float *a, int64_t lda, int trans_a, float *packed_a);

/* The general entry: any mix of pre-packed operands, on up to nthreads threads
 * driven by `parallel` (NULL or nthreads <= 1: the calling thread only).
 * scratch holds nthreads * rk_sgemm_scratch_size(m, n, k) bytes. */
void rk_sgemm_ex(const rk_sgemm_args *args, void *scratch, int nthreads, rk_parallel_fn parallel,
                 void *parallel_ctx);

/* A product of a few rows (the lowering takes it for at most
 * RK_SGEMM_FEW_ROWS) against a pre-packed B, on the calling thread, by plain
 * loops over B's panels, each panel read once for all rows: no scratch and a
 * few hundred bytes of code (the general entry's kernels are several hundred
 * KB). Any m is right; past a few rows the general entry is faster unless
 * reading B is what costs. Each element sees rk_sgemm_ex's operations in the
 * same order: the same bits.
 * Its epilogue knows only the activations without exp or erf
 * (rk_sgemm_few_rows_act), whose code small models would carry for
 * nothing; others leave C as the product plus bias and residual. */
#define RK_SGEMM_FEW_ROWS 8
void rk_sgemm_few_rows(const rk_sgemm_args *args);
/* The same for columns [n0, n1) of C only (n0 a multiple of
 * RK_SGEMM_COL_STEP): threads may take the columns in parts, with the same
 * bits. */
void rk_sgemm_few_rows_cols(const rk_sgemm_args *args, int64_t n0, int64_t n1);
static inline int rk_sgemm_few_rows_act(int act) {
    return act == 0 || act == 1 || act == 2 || act == 3 || act == 5 || act == 6;   /* none, relu, clip, leakyrelu, hardsigmoid, hardswish */
}

/* Whether a product is worth waking threads for: B's bytes count as work
 * too (2 flops each), since a classifier's 1 x 512 x 1000 product streams
 * 2 MB of weights for 1 M flops, and a second thread streams them faster. */
static inline int rk_sgemm_threads_pay(int64_t m, int64_t n, int64_t k) {
    return 2.0 * (double)m * (double)n * (double)k + 8.0 * (double)n * (double)k >= (double)(1 << 21);
}

/* Rows [m0, m1) of C only, on the calling thread (m0 a multiple of 6, the
 * register tile's height; scratch as for rk_sgemm): a caller with its own
 * threads splits the rows of one product this way, with the same bits as
 * one whole-product call. */
void rk_sgemm_rows(const rk_sgemm_args *args, int64_t m0, int64_t m1, void *scratch);

/* Rows of C that rk_sgemm_rows splits should be a multiple of. */
#define RK_SGEMM_ROW_STEP 12

/* Columns [n0, n1) of C only (n0 a multiple of RK_SGEMM_COL_STEP), the same
 * way: the same bits as one whole-product call. */
void rk_sgemm_cols(const rk_sgemm_args *args, int64_t n0, int64_t n1, void *scratch);
#define RK_SGEMM_COL_STEP 16

/* The packed layout's cache block: K is packed in blocks of at most
 * RK_SGEMM_KC rows, N in blocks of RK_SGEMM_NC columns (rk_gemm.c's KC and
 * NC are these). A packed op(B) of one block each way (k <= RK_SGEMM_KC,
 * n <= RK_SGEMM_NC) is its column panels one after the other, k x
 * RK_SGEMM_COL_STEP floats each; so its columns [n0, n1) (n0 a multiple of
 * RK_SGEMM_COL_STEP, and n1 too unless it is n) are the packed form of
 * that k x (n1 - n0) op(B), from this many floats in. -1 where the layout is
 * not that (a caller then splits the product by rows only). A product of
 * those columns has the whole product's bits there: each element sees the
 * same operations whatever panels are beside it. */
#define RK_SGEMM_KC 256
#define RK_SGEMM_NC 2048
/* How K is cut: into the fewest blocks of at most RK_SGEMM_KC, all of
 * (nearly) equal size, this many rows each but the last. Each block's sums
 * begin at +0 and are added to C after the first: a kernel that promises
 * the GEMM's bits over K > RK_SGEMM_KC sums in these blocks too. */
static inline int64_t rk_sgemm_kc_step(int64_t k) {
    if (k <= 0) return 1;
    int64_t nblocks = (k + RK_SGEMM_KC - 1) / RK_SGEMM_KC;
    return (k + nblocks - 1) / nblocks;
}
static inline int64_t rk_sgemm_packed_b_cols(int64_t n, int64_t k, int64_t n0, int64_t n1) {
    if (k < 1 || k > RK_SGEMM_KC || n > RK_SGEMM_NC || n0 < 0 || n0 >= n1 || n1 > n) return -1;
    if (n0 % RK_SGEMM_COL_STEP || (n1 != n && n1 % RK_SGEMM_COL_STEP)) return -1;
    return n0 * k;
}

#ifdef __cplusplus
}
#endif
#endif
