/* rk_gemm.c - single-precision GEMM (rk_gemm.h), blocked the BLIS way.
 *
 * The loops, outermost first, over global block grids:
 *
 *   jc: columns of C in blocks of NC        (op(B) block, KC x NC, sits in L3)
 *    pc: the sum over K in blocks of kc     (kc = K split evenly in <= KC pieces)
 *     pack op(B)[pc.., jc..] into NR-wide micro-panels  (skipped if pre-packed)
 *     ic: rows of C in blocks of MC        (op(A) block, MC x kc, sits in L2)
 *      pack op(A)[ic.., pc..] into MR-tall micro-panels  (skipped if pre-packed)
 *      jr: NR-wide micro-panel of B         (kc x NR, sits in L1)
 *       ir: MR-tall micro-panel of A: the micro-kernel adds A_panel * B_panel
 *           (an MR x NR tile held in registers over the kc loop) into C.
 *
 * Packed layouts (floats; the run-time packing writes the same into scratch):
 *   op(B), N x K:  block (jc, pc) at jc*K + pc*ncr, ncr = NC or the last block's
 *     width rounded up to NR; in it, micro-panel q (columns jc + q*NR ..) at
 *     q*NR*kc; element (k, j) of the panel at k*NR + j; padding columns are 0.
 *   op(A), M x K:  block (ic, pc) at ic*K + pc*mcr; micro-panel r at r*MR*kc;
 *     element (k, i) at k*MR + i; padding rows are 0.
 * Hence packed sizes K*roundup(N, NR) and K*roundup(M, MR) floats.
 *
 * Every output element is computed the same way wherever its tile lies: the
 * micro-kernel accumulates k in order within a kc block in one register lane,
 * then stores alpha*acc (+ beta*C on the first block, + C on later ones).
 * Edge tiles run the same kernel into a small buffer, so full and partial
 * tiles, pre-packed and packed-here operands, and any thread split (which
 * only cuts along MR/NR-aligned tile boundaries) give identical bits.
 *
 * The micro-kernels, chosen at compile time: AVX2+FMA intrinsics (6 x 16, 12
 * accumulators; with AVX-512F, tiles of up to 12 x 32 or 18 x 16 over
 * several A and B micro-panels) when the compiler targets them; on AArch64,
 * NEON intrinsics (6 x 16, 24 accumulators of 4 floats, with NEON packing
 * transposes and epilogue); else plain C that compilers auto-vectorize. All
 * use the same MR/NR so the packed layout never depends on compiler flags or
 * on the machine (weights packed by rlxc on x86 run as they are on ARM).
 * rk_sgemm_kernel() names the one a build holds. For few rows and untransposed B,
 * B is read in place (packing it would cost as much as the product); only
 * its ragged last columns are packed.
 *
 * The optional epilogue (bias, residual, activation) runs on each tile right
 * after its last K block: in the SIMD kernels' registers between the last sum
 * and the store (relu, clip or none, tiles stored straight into C), else on
 * the tile just stored, still in L1. Either way, the operations of a separate
 * pass over C in its order, so the bits are those of GEMM-then-pass.
 */
#ifdef RLX_BLAS_OPENBLAS
#include <cblas.h>
#undef I   /* <complex.h>, which OpenBLAS's cblas.h includes, defines it; rlx_rt.h's params use the name */
#endif
#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rk_typed.h"

#include <math.h>
#include <string.h>

#include "rlx_scalar.h"
#include "rk_vmath.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define RK_GEMM_AVX2 1
#else
#define RK_GEMM_AVX2 0
#endif

/* AArch64 (Advanced SIMD is part of the base architecture there) */
#if !RK_GEMM_AVX2 && defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define RK_GEMM_NEON 1
#else
#define RK_GEMM_NEON 0
#endif

#if defined(__GNUC__)
#define RK_INLINE static inline __attribute__((always_inline))
#else
#define RK_INLINE static inline
#endif

enum {
    MR = 6,       /* rows of a register tile */
    NR = 16,      /* columns of a register tile (two 8-float vectors) */
    KC = RK_SGEMM_KC,   /* at most this much of K per block (256; rk_gemm.h) */
    MC = 144,     /* rows of an A block (multiple of MR) */
    NC = RK_SGEMM_NC,   /* columns of a B block (2048, a multiple of NR) */
    DIRECT_B_MAX_M = 2 * MR,  /* read B in place up to this many rows, */
    DIRECT_B_MAX_M_ODD_LDB = 8 * MR,  /* or this many if its row stride allows */
    DIRECT_A_MAX_N = 512      /* read A^T in place up to this many columns (full panels) */
};

/* rk_gemm.h's description of the packed layout (rk_sgemm_packed_b_cols) */
typedef char rk_gemm_layout_as_described[NR == RK_SGEMM_COL_STEP ? 1 : -1];

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t roundup(int64_t x, int64_t r) { return (x + r - 1) / r * r; }

static int64_t kc_step(int64_t k) { return rk_sgemm_kc_step(k); }

size_t rk_sgemm_scratch_size(int64_t m, int64_t n, int64_t k) {
    if (m <= 0 || n <= 0 || k <= 0) return 0;
    int64_t kc = kc_step(k);
    int64_t a_floats = roundup(min64(m, MC), MR) * kc;
    int64_t b_floats = roundup(min64(n, NC), NR) * kc;
    return (size_t)(a_floats + b_floats) * sizeof(float) + 2 * 64;
}

size_t rk_sgemm_packed_b_size(int64_t n, int64_t k) {
    if (n <= 0 || k <= 0) return 0;
    return (size_t)roundup(n, NR) * (size_t)k * sizeof(float);
}

size_t rk_sgemm_packed_a_size(int64_t m, int64_t k) {
    if (m <= 0 || k <= 0) return 0;
    return (size_t)roundup(m, MR) * (size_t)k * sizeof(float);
}

/* ---- packing ----
 * Both packings turn rows of the source into columns of the panel: with AVX2
 * they go through 8 x 8 register transposes, else through scalar loops. */

#if RK_GEMM_AVX2
/* r[i] (row i, 8 floats) -> r[p] = column p. */
RK_INLINE void transpose8(__m256 r[8]) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}
#endif

/* kc consecutive floats from each of `rows` source rows (row stride ld)
 * become kc groups of `width` floats at dst (dst[p*width + i] = src_i[p]);
 * rows .. width-1 of each group are zero. */
static void pack_rows_to_columns(int64_t rows, int width, int64_t kc, const float *src, int64_t ld, float *dst) {
    int64_t p0 = 0;
#if RK_GEMM_AVX2
    if (rows == width && width == MR) {
        /* 8 k at a time; each 8-float store spills 2 floats into the next
         * group, which the next store overwrites: stop 8 before the end */
        for (; p0 + 8 < kc; p0 += 8) {
            __m256 r[8];
            for (int i = 0; i < MR; i++) {
                _mm_prefetch((const char *)(src + i * ld + p0 + 64), _MM_HINT_T0);
                r[i] = _mm256_loadu_ps(src + i * ld + p0);
            }
            r[6] = r[7] = _mm256_setzero_ps();
            transpose8(r);
            for (int p = 0; p < 8; p++) _mm256_storeu_ps(dst + (p0 + p) * MR, r[p]);
        }
    } else if (rows == width && width == NR) {
        for (; p0 + 8 <= kc; p0 += 8) {
            __m256 lo[8], hi[8];
            for (int i = 0; i < 8; i++) {
                _mm_prefetch((const char *)(src + i * ld + p0 + 64), _MM_HINT_T0);
                _mm_prefetch((const char *)(src + (i + 8) * ld + p0 + 64), _MM_HINT_T0);
                lo[i] = _mm256_loadu_ps(src + i * ld + p0);
                hi[i] = _mm256_loadu_ps(src + (i + 8) * ld + p0);
            }
            transpose8(lo);
            transpose8(hi);
            for (int p = 0; p < 8; p++) {
                _mm256_storeu_ps(dst + (p0 + p) * NR, lo[p]);
                _mm256_storeu_ps(dst + (p0 + p) * NR + 8, hi[p]);
            }
        }
    }
#elif RK_GEMM_NEON
    if (rows == width && width == MR) {
        /* 4 k at a time: rows 0-3 by a 4 x 4 transpose, rows 4-5 zipped
         * into pairs */
        for (; p0 + 4 <= kc; p0 += 4) {
            const float *s = src + p0;
            float32x4_t r0 = vld1q_f32(s), r1 = vld1q_f32(s + ld), r2 = vld1q_f32(s + 2 * ld);
            float32x4_t r3 = vld1q_f32(s + 3 * ld), r4 = vld1q_f32(s + 4 * ld), r5 = vld1q_f32(s + 5 * ld);
            float32x4_t t0 = vtrn1q_f32(r0, r1), t1 = vtrn2q_f32(r0, r1);
            float32x4_t t2 = vtrn1q_f32(r2, r3), t3 = vtrn2q_f32(r2, r3);
            float32x4_t col[4] = {
                vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2))),
                vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3))),
                vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2))),
                vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)))};
            float32x4_t lo45 = vzip1q_f32(r4, r5), hi45 = vzip2q_f32(r4, r5);
            float32x2_t pair[4] = {vget_low_f32(lo45), vget_high_f32(lo45), vget_low_f32(hi45), vget_high_f32(hi45)};
            for (int p = 0; p < 4; p++) {
                vst1q_f32(dst + (p0 + p) * MR, col[p]);
                vst1_f32(dst + (p0 + p) * MR + 4, pair[p]);
            }
        }
    }
#endif
    for (int64_t i = 0; i < rows; i++) {
        const float *s = src + i * ld;
        for (int64_t p = p0; p < kc; p++) dst[p * width + i] = s[p];
    }
    for (int64_t i = rows; i < width; i++)
        for (int64_t p = p0; p < kc; p++) dst[p * width + i] = 0.0f;
}

/* kc source rows (stride ld) of `cols` consecutive floats become kc groups
 * of `width` floats at dst, zero-padded. */
static void pack_rows_as_rows(int64_t cols, int width, int64_t kc, const float *src, int64_t ld, float *dst) {
    for (int64_t p = 0; p < kc; p++) {
        const float *s = src + p * ld;
        float *d = dst + p * width;
        if (cols == width) {
            memcpy(d, s, (size_t)width * sizeof(float));
        } else {
            for (int64_t j = 0; j < cols; j++) d[j] = s[j];
            for (int64_t j = cols; j < width; j++) d[j] = 0.0f;
        }
    }
}

/* op(A)[i0 .. i0+mc, p0 .. p0+kc] into MR-tall micro-panels at dst. */
static void pack_a_block(int64_t mc, int64_t kc, const float *a, int64_t lda, int trans, int64_t i0, int64_t p0,
                         float *dst) {
    for (int64_t ir = 0; ir < mc; ir += MR) {
        int64_t mr = min64(MR, mc - ir);
        if (!trans) pack_rows_to_columns(mr, MR, kc, a + (i0 + ir) * lda + p0, lda, dst + ir * kc);
        else pack_rows_as_rows(mr, MR, kc, a + p0 * lda + i0 + ir, lda, dst + ir * kc);
    }
}

/* op(B)[p0 .. p0+kc, j0 .. j0+nc] into NR-wide micro-panels at dst.
 * Untransposed, it goes 8 rows of B at a time across all panels: panel by
 * panel down all kc rows touches kc lines one row stride apart, and a power
 * of two stride (N = 1024) makes them fight over a few cache sets (4x slower). */
static void pack_b_block(int64_t nc, int64_t kc, const float *b, int64_t ldb, int trans, int64_t p0, int64_t j0,
                         float *dst) {
    if (!trans) {
        for (int64_t pp = 0; pp < kc; pp += 8) {
            int64_t rows = min64(8, kc - pp);
            for (int64_t jr = 0; jr < nc; jr += NR)
                pack_rows_as_rows(min64(NR, nc - jr), NR, rows, b + (p0 + pp) * ldb + j0 + jr, ldb,
                                  dst + jr * kc + pp * NR);
        }
        return;
    }
    for (int64_t jr = 0; jr < nc; jr += NR)
        pack_rows_to_columns(min64(NR, nc - jr), NR, kc, b + (j0 + jr) * ldb + p0, ldb, dst + jr * kc);
}

void rk_sgemm_pack_b(int64_t n, int64_t k, const float *b, int64_t ldb, int trans_b, float *packed_b) {
    if (n <= 0 || k <= 0) return;
    int64_t kcs = kc_step(k);
    for (int64_t jc = 0; jc < n; jc += NC) {
        int64_t nc = min64(NC, n - jc), ncr = roundup(nc, NR);
        for (int64_t pc = 0; pc < k; pc += kcs) {
            int64_t kc = min64(kcs, k - pc);
            pack_b_block(nc, kc, b, ldb, trans_b, pc, jc, packed_b + jc * k + pc * ncr);
        }
    }
}

void rk_sgemm_pack_b_panels(int64_t n, int64_t k, const float *b, int64_t ldb, int64_t kb, int64_t p0, int64_t p1,
                            float *packed_b) {
    int64_t kcs = kc_step(k), pc = kb * kcs, j0 = p0 * NR, j1 = min64(p1 * NR, n);
    if (n <= 0 || n > NC || k <= 0 || kb < 0 || pc >= k || p0 < 0 || j0 >= j1) return;
    int64_t kc = min64(kcs, k - pc);
    pack_b_block(j1 - j0, kc, b, ldb, 0, pc, j0, packed_b + pc * roundup(n, NR) + j0 * kc);
}

void rk_sgemm_packed_b_row(int64_t n, int64_t k, int64_t kk, int64_t *row_off, int64_t *panel_stride) {
    int64_t kcs = kc_step(k), pc = kk / kcs * kcs, kc = min64(kcs, k - pc);
    *row_off = pc * roundup(min64(n, NC), NR) + (kk - pc) * NR;
    *panel_stride = NR * kc;
}

void rk_sgemm_pack_a(int64_t m, int64_t k, const float *a, int64_t lda, int trans_a, float *packed_a) {
    if (m <= 0 || k <= 0) return;
    int64_t kcs = kc_step(k);
    for (int64_t ic = 0; ic < m; ic += MC) {
        int64_t mc = min64(MC, m - ic), mcr = roundup(mc, MR);
        for (int64_t pc = 0; pc < k; pc += kcs) {
            int64_t kc = min64(kcs, k - pc);
            pack_a_block(mc, kc, a, lda, trans_a, ic, pc, packed_a + ic * k + pc * mcr);
        }
    }
}

/* ---- the epilogue ----
 * Runs on a tile the kernel has just stored (still in L1), once its last K
 * block is in: the same operations, in the same order, as a separate pass
 * over C would do, so fusing it changes no bit. Vector forms of relu and clip
 * keep the scalar ones' NaN and signed-zero results: relu keeps x where
 * x > 0 or x is NaN and gives +0 elsewhere; clip's compares are ordered, so
 * a NaN passes through both. */

/* rk_gemm.h's rk_sgemm_few_rows_act names these codes by number */
typedef char rk_few_rows_act_codes[RS_ACT_NONE == 0 && RS_ACT_RELU == 1 && RS_ACT_CLIP == 2 && RS_ACT_LEAKYRELU == 3 &&
                                           RS_ACT_HARDSIGMOID == 5 && RS_ACT_HARDSWISH == 6
                                       ? 1
                                       : -1];

/* rs_act for the few-rows path's activations (rk_sgemm_few_rows_act) */
RK_INLINE float act_cheap(float y, int act, float a, float b) {
    switch (act) {
    case RS_ACT_RELU: return rs_relu(y);
    case RS_ACT_CLIP: return rs_clip(y, a, b);
    case RS_ACT_LEAKYRELU: return rs_leakyrelu(y, a);
    case RS_ACT_HARDSIGMOID: return rs_hardsigmoid(y, a, b);
    case RS_ACT_HARDSWISH: return rs_hardswish(y);
    default: return y;
    }
}

/* Elements [j, j + cols) of row i (global row gi) by scalar code; cheap:
 * only act_cheap's activations (a constant after inlining). */
RK_INLINE void epilogue_scalar_for(const rk_sgemm_args *g, float *ci, int64_t gi, int64_t j0, int64_t j,
                                   int64_t cols, int cheap) {
    const float *ri = g->res ? g->res + gi * g->ldres + j0 : NULL;
    float act_a = g->act_a, act_b = g->act_b;
    for (; j < cols; j++) {
        float y = ci[j];
        if (g->bias_per_col) {
            if (g->bias) y += g->bias[j0 + j];
            if (ri) y += ri[j];
        } else {
            float bias = g->bias ? g->bias[gi] : 0.0f;
            if (ri) y = y + bias + ri[j];
            else if (bias != 0.0f) y += bias;
        }
        ci[j] = cheap ? act_cheap(y, g->act, act_a, act_b) : rs_act(y, g->act, act_a, act_b);
    }
}

static void epilogue_scalar(const rk_sgemm_args *g, float *ci, int64_t gi, int64_t j0, int64_t j, int64_t cols) {
    epilogue_scalar_for(g, ci, gi, j0, j, cols, 0);
}

static void epilogue_scalar_cheap(const rk_sgemm_args *g, float *ci, int64_t gi, int64_t j0, int64_t j,
                                  int64_t cols) {
    epilogue_scalar_for(g, ci, gi, j0, j, cols, 1);
}

#if RK_GEMM_AVX2 && defined(__AVX512F__)
#define EP_VEC 16
typedef __m512 ep_vec;
typedef __mmask16 ep_mask;
static ep_mask ep_mask_for(int64_t n) { return n >= 16 ? (ep_mask)0xFFFF : (ep_mask)((1u << n) - 1); }
/* full vectors unmasked (loads by rk_load16): a masked load cannot take its
 * data from the kernel's store still in flight (store forwarding), a plain
 * one can */
static void ep_store(ep_mask m, float *p, __m512 v) {
    if (m == 0xFFFF) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, m, v);
}
#define EP_LOAD(m, p) rk_load16(m, p)
#define EP_STORE(m, p, v) ep_store(m, p, v)
#define EP_ADD(x, y) _mm512_add_ps(x, y)
#define EP_SET1(x) _mm512_set1_ps(x)
#define EP_RELU(x) _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x)
#define EP_CLIP(x, lo, hi)                                                                  \
    _mm512_mask_mov_ps(_mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), hi),    \
                       _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), lo)
#elif RK_GEMM_AVX2
/* whole 8-float vectors plain (store forwarding, as above), the last
 * part of a row by maskload/maskstore: the mask is the count of lanes */
#define EP_VEC 8
typedef __m256 ep_vec;
typedef int ep_mask;
static ep_mask ep_mask_for(int64_t n) { return n >= 8 ? 8 : (int)n; }
#define EP_LOAD(m, p) ((m) == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, rk_v8_lanes(m)))
#define EP_STORE(m, p, v) ((m) == 8 ? _mm256_storeu_ps(p, v) : _mm256_maskstore_ps(p, rk_v8_lanes(m), v))
#define EP_ADD(x, y) _mm256_add_ps(x, y)
#define EP_SET1(x) _mm256_set1_ps(x)
#define EP_RELU(x) _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ), x)
#define EP_CLIP(x, lo, hi)                                                                  \
    _mm256_blendv_ps(_mm256_blendv_ps(x, hi, _mm256_cmp_ps(x, hi, _CMP_GT_OQ)), lo,         \
                     _mm256_cmp_ps(x, lo, _CMP_LT_OQ))
#elif RK_GEMM_NEON
/* whole 4-float vectors, scalar tail; relu clears the lanes where x <= 0
 * (false for NaN, which stays; -0 becomes +0), clip selects on ordered
 * compares like the scalar form */
#define EP_VEC 4
typedef float32x4_t ep_vec;
typedef int ep_mask;
static ep_mask ep_mask_for(int64_t n) { return n >= 4; }
#define EP_LOAD(m, p) ((void)(m), vld1q_f32(p))
#define EP_STORE(m, p, v) ((void)(m), vst1q_f32(p, v))
#define EP_ADD(x, y) vaddq_f32(x, y)
#define EP_SET1(x) vdupq_n_f32(x)
#define EP_RELU(x) vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(x), vcleq_f32(x, vdupq_n_f32(0.0f))))
#define EP_CLIP(x, lo, hi) vbslq_f32(vcltq_f32(x, lo), lo, vbslq_f32(vcgtq_f32(x, hi), hi, x))
#endif

#ifdef EP_VEC
/* rs_act on a vector: relu and clip as above, the others rk_vmath.h's */
RK_INLINE ep_vec ep_act(ep_vec y, int act, float a, float b, ep_vec lo, ep_vec hi) {
    if (act == RS_ACT_RELU) return EP_RELU(y);
    if (act == RS_ACT_CLIP) return EP_CLIP(y, lo, hi);
    if (act == RS_ACT_NONE) return y;
#if EP_VEC == 16
    return rk_v16_act(y, act, a, b);
#elif EP_VEC == 8
    return rk_v8_act(y, act, a, b);
#else
    /* NEON: rk_vmath.h has no 4-float instance; rs_act lane by lane gives its bits */
    float t[EP_VEC];
    vst1q_f32(t, y);
    for (int k = 0; k < EP_VEC; k++) t[k] = rs_act(t[k], act, a, b);
    return vld1q_f32(t);
#endif
}

/* C's vector at ci + j (mask m) with its bias and residual added: the
 * columns' bias (per_col) or the row's (bias_i, vbias_i: added where it
 * is not 0 or there is a residual), ri the row's residual or NULL */
RK_INLINE ep_vec ep_sum(const rk_sgemm_args *g, const float *ci, const float *ri, float bias_i, ep_vec vbias_i,
                        int64_t j0, int64_t j, ep_mask m) {
    ep_vec y = EP_LOAD(m, ci + j);
    if (g->bias_per_col) {
        if (g->bias) y = EP_ADD(y, EP_LOAD(m, g->bias + j0 + j));
        if (ri) y = EP_ADD(y, EP_LOAD(m, ri + j));
    } else if (ri) {
        y = EP_ADD(EP_ADD(y, vbias_i), EP_LOAD(m, ri + j));
    } else if (bias_i != 0.0f) {
        y = EP_ADD(y, vbias_i);
    }
    return y;
}

/* epilogue_tile with the activation a constant (after inlining) */
RK_INLINE void epilogue_tile_k(const rk_sgemm_args *g, float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                               int64_t cols, int act, int cheap) {
    float a = g->act_a, b = g->act_b;
    ep_vec lo = EP_SET1(a), hi = EP_SET1(b);
    int64_t vec_cols = EP_VEC >= 8 ? cols : cols / EP_VEC * EP_VEC;   /* masked tails from 8 lanes */
    int64_t i = 0;
#if EP_VEC == 16
    /* an activation with exp or erf in it on a 32-column tile: two rows at
     * a time, their four vectors through rk_v16x4_act (interleaved, the
     * four chains of a SiLU keep both vector ports busy where one leaves
     * them waiting: 0.49 -> 0.39 ns a float), the same bits as ep_act */
    if (rk_act_exp(act) && cols == 32)
        for (; i + 2 <= rows; i += 2) {
            float *ci = c + i * ldc;
            rk_v16x4 x;
            for (int q = 0; q < 4; q++) {
                int64_t r = i0 + i + q / 2;
                float bias_r = g->bias && !g->bias_per_col ? g->bias[r] : 0.0f;
                x.v[q] = ep_sum(g, ci + q / 2 * ldc, g->res ? g->res + r * g->ldres + j0 : NULL, bias_r,
                                EP_SET1(bias_r), j0, q % 2 * 16, 0xFFFF);
            }
            x = rk_v16x4_act(x, act);
            for (int q = 0; q < 4; q++) _mm512_storeu_ps(ci + q / 2 * ldc + q % 2 * 16, x.v[q]);
        }
#endif
    for (; i < rows; i++) {
        float *ci = c + i * ldc;
        const float *ri = g->res ? g->res + (i0 + i) * g->ldres + j0 : NULL;
        float bias_i = g->bias && !g->bias_per_col ? g->bias[i0 + i] : 0.0f;
        ep_vec vbias_i = EP_SET1(bias_i);
        for (int64_t j = 0; j < vec_cols; j += EP_VEC) {
            ep_mask m = ep_mask_for(vec_cols - j);
            EP_STORE(m, ci + j, ep_act(ep_sum(g, ci, ri, bias_i, vbias_i, j0, j, m), act, a, b, lo, hi));
        }
        if (vec_cols < cols) {
            if (cheap) epilogue_scalar_cheap(g, ci, i0 + i, j0, vec_cols, cols);
            else epilogue_scalar(g, ci, i0 + i, j0, vec_cols, cols);
        }
    }
}
#endif

/* C[i0.., j0..] (rows x cols at c), global row i0 and column j0: in
 * vectors, one loop per common activation (rk_vmath.h's forms, rs_act's
 * bits), the scalar code for the rest of a row. */
static void epilogue_tile(const rk_sgemm_args *g, float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                          int64_t cols) {
#ifdef EP_VEC
    switch (g->act) {
#define EP_CASE(A) case A: epilogue_tile_k(g, c, ldc, i0, j0, rows, cols, A, 0); return;
    EP_CASE(RS_ACT_NONE) EP_CASE(RS_ACT_RELU) EP_CASE(RS_ACT_CLIP) EP_CASE(RS_ACT_SILU) EP_CASE(RS_ACT_GELU)
    EP_CASE(RS_ACT_HARDSWISH) EP_CASE(RS_ACT_SIGMOID) EP_CASE(RS_ACT_TANH)
#undef EP_CASE
    default: epilogue_tile_k(g, c, ldc, i0, j0, rows, cols, g->act, 0); return;
    }
#else
    for (int64_t i = 0; i < rows; i++) epilogue_scalar(g, c + i * ldc, i0 + i, j0, 0, cols);
#endif
}

/* The few-rows path's: act_cheap's activations only, none of the exp and
 * erf code (rk_sgemm_few_rows_act). */
static void epilogue_tile_cheap(const rk_sgemm_args *g, float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                                int64_t cols) {
#ifdef EP_VEC
    switch (g->act) {
#define EP_CASE(A) case A: epilogue_tile_k(g, c, ldc, i0, j0, rows, cols, A, 1); return;
    EP_CASE(RS_ACT_RELU) EP_CASE(RS_ACT_CLIP) EP_CASE(RS_ACT_LEAKYRELU) EP_CASE(RS_ACT_HARDSIGMOID)
    EP_CASE(RS_ACT_HARDSWISH)
#undef EP_CASE
    default: epilogue_tile_k(g, c, ldc, i0, j0, rows, cols, RS_ACT_NONE, 1); return;
    }
#else
    for (int64_t i = 0; i < rows; i++) epilogue_scalar_cheap(g, c + i * ldc, i0 + i, j0, 0, cols);
#endif
}


/* The epilogue of one tile, for the micro-kernels to apply in registers
 * between their last sum and the store (same operations as epilogue_tile;
 * only relu, clip or no activation). Pointers are at the tile's first row
 * and column; per_col as rk_sgemm_args.bias_per_col. */
typedef struct {
    const float *row_bias, *col_bias, *res;
    int64_t ldres;
    int per_col, act;
    float lo, hi;
} tile_ep;

#if RK_GEMM_AVX2
/* The activations the AVX2 kernels apply in registers: epilogue_tile's
 * operations (HardSwish: rk_vmath.h's, as ep_act) */
RK_INLINE __m256 ep_act256(__m256 y, int act, __m256 lo, __m256 hi) {
    if (act == RS_ACT_RELU) return _mm256_and_ps(_mm256_cmp_ps(y, _mm256_setzero_ps(), _CMP_NLE_UQ), y);
    if (act == RS_ACT_CLIP)
        return _mm256_blendv_ps(_mm256_blendv_ps(y, hi, _mm256_cmp_ps(y, hi, _CMP_GT_OQ)), lo,
                                _mm256_cmp_ps(y, lo, _CMP_LT_OQ));
    if (act == RS_ACT_HARDSWISH) return rk_v8_hardswish(y);
    return y;
}

RK_INLINE __m256 ep_apply256(const tile_ep *e, int i, int j, __m256 y) {
    if (e->per_col) {
        if (e->col_bias) y = _mm256_add_ps(y, _mm256_loadu_ps(e->col_bias + j));
        if (e->res) y = _mm256_add_ps(y, _mm256_loadu_ps(e->res + i * e->ldres + j));
    } else {
        float bias = e->row_bias ? e->row_bias[i] : 0.0f;
        if (e->res) y = _mm256_add_ps(_mm256_add_ps(y, _mm256_set1_ps(bias)), _mm256_loadu_ps(e->res + i * e->ldres + j));
        else if (bias != 0.0f) y = _mm256_add_ps(y, _mm256_set1_ps(bias));
    }
    return ep_act256(y, e->act, _mm256_set1_ps(e->lo), _mm256_set1_ps(e->hi));
}

/* A row-bias epilogue without residual or C read back, alpha 1 (the
 * convolutions'), for the AVX2 kernels: the tile's biases and the
 * epilogue's fields read into locals before the first store. Read from ep
 * per vector (ep_apply256), they are loaded and tested again after every
 * store, which might have changed them; with K = 16 that and the alpha
 * multiply were a third of the kernel's operations. Same bits as
 * ep_apply256 after the multiply by alpha = 1 (x * 1 is x): a sum begun at
 * +0 is never -0, so adding a bias of +-0 (every row's, where there is no
 * bias) gives it back unchanged. */
RK_INLINE int ep_rows_fast(const tile_ep *ep, int read_c, float alpha) {
    return ep && !ep->per_col && !ep->res && !read_c && alpha == 1.0f;
}

/* No epilogue, alpha 1, C not read: the sums are the result (x * 1 is x) */
RK_INLINE int store_plain(const tile_ep *ep, int read_c, float alpha) { return !ep && !read_c && alpha == 1.0f; }
#endif

#if RK_GEMM_AVX2 && defined(__AVX512F__)
/* The epilogue on one vector of row i, columns j.. (kernel_avx512's own
 * row-bias path does the same operations). */
RK_INLINE __m512 ep_apply512(const tile_ep *e, int i, int j, __m512 y) {
    if (e->per_col) {
        if (e->col_bias) y = _mm512_add_ps(y, _mm512_loadu_ps(e->col_bias + j));
        if (e->res) y = _mm512_add_ps(y, _mm512_loadu_ps(e->res + i * e->ldres + j));
    } else {
        float bias = e->row_bias ? e->row_bias[i] : 0.0f;
        if (e->res) y = _mm512_add_ps(_mm512_add_ps(y, _mm512_set1_ps(bias)), _mm512_loadu_ps(e->res + i * e->ldres + j));
        else if (bias != 0.0f) y = _mm512_add_ps(y, _mm512_set1_ps(bias));
    }
    if (e->act == RS_ACT_RELU) y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_NLE_UQ), y);
    else if (e->act == RS_ACT_CLIP) {
        __m512 lo = _mm512_set1_ps(e->lo), hi = _mm512_set1_ps(e->hi);
        y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(y, hi, _CMP_GT_OQ), hi);
        y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(y, lo, _CMP_LT_OQ), lo);
    }
    return y;
}
#endif

/* ---- micro-kernels ----
 * tile(mr x nr of C at c, row stride ldc) = alpha * sum_k a[k*MR + i] * b[k*brs + j]
 *                                           + (read_c ? beta * tile : 0)
 * The kernels may compute (and the AVX2 one stores) more rows/columns than
 * mr/nr only where the caller passes a full-size buffer. */

#if RK_GEMM_AVX2

/* The AVX2 tiles' rows with their sums, for each store sequence: S(row,
 * low 8 columns, high 8) of the 6 x 16 tile, S(row, sums) of the tall one. */
#define RK_TILE_ROWS(S) S(0, c00, c01) S(1, c10, c11) S(2, c20, c21) S(3, c30, c31) S(4, c40, c41) S(5, c50, c51)
#define RK_TALL_ROWS(S) \
    S(0, x0) S(1, x1) S(2, x2) S(3, x3) S(4, x4) S(5, x5) S(6, y0) S(7, y1) S(8, y2) S(9, y3) S(10, y4) S(11, y5)

/* rows: 1..MR, nv: 1 or 2 vectors of 8 columns; constants after inlining. */
RK_INLINE void kernel_avx2(int rows, int nv, int64_t kc, const float *a, const float *b, int64_t brs, float *c,
                           int64_t ldc, float alpha, float beta, int read_c, const tile_ep *ep) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int i = 0; i < rows; i++) _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    for (int64_t p = 0; p < kc; p++) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = nv > 1 ? _mm256_loadu_ps(b + 8) : b0, av;
        _mm_prefetch((const char *)(a + 8 * MR), _MM_HINT_T0);
#define RK_ROW(i, lo, hi)                                   \
        if (rows > i) {                                     \
            av = _mm256_broadcast_ss(a + i);                \
            lo = _mm256_fmadd_ps(av, b0, lo);               \
            if (nv > 1) hi = _mm256_fmadd_ps(av, b1, hi);   \
        }
        RK_ROW(0, c00, c01)
        RK_ROW(1, c10, c11)
        RK_ROW(2, c20, c21)
        RK_ROW(3, c30, c31)
        RK_ROW(4, c40, c41)
        RK_ROW(5, c50, c51)
#undef RK_ROW
        a += MR;
        b += brs;
    }
    if (store_plain(ep, read_c, alpha)) {
#define RK_STORE(i, lo, hi)                                 \
        if (rows > i) {                                     \
            _mm256_storeu_ps(c + i * ldc, lo);              \
            if (nv > 1) _mm256_storeu_ps(c + i * ldc + 8, hi); \
        }
        RK_TILE_ROWS(RK_STORE)
#undef RK_STORE
        return;
    }
    if (ep_rows_fast(ep, read_c, alpha)) {
        const int act = ep->act;
        const __m256 vlo = _mm256_set1_ps(ep->lo), vhi = _mm256_set1_ps(ep->hi);
        float bl[MR];
        for (int i = 0; i < MR; i++) bl[i] = ep->row_bias && i < rows ? ep->row_bias[i] : 0.0f;
#define RK_STORE(i, lo, hi)                                                                      \
        if (rows > i) {                                                                          \
            float *ci = c + i * ldc;                                                             \
            __m256 bi = _mm256_set1_ps(bl[i]);                                                   \
            _mm256_storeu_ps(ci, ep_act256(_mm256_add_ps(lo, bi), act, vlo, vhi));               \
            if (nv > 1) _mm256_storeu_ps(ci + 8, ep_act256(_mm256_add_ps(hi, bi), act, vlo, vhi)); \
        }
        RK_TILE_ROWS(RK_STORE)
#undef RK_STORE
        return;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(read_c ? beta : 0.0f);
#define RK_STORE(i, lo, hi)                                                              \
    if (rows > i) {                                                                      \
        float *ci = c + i * ldc;                                                         \
        __m256 r0 = _mm256_mul_ps(va, lo);                                               \
        if (read_c) r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r0);                   \
        if (ep) r0 = ep_apply256(ep, i, 0, r0);                                          \
        _mm256_storeu_ps(ci, r0);                                                        \
        if (nv > 1) {                                                                    \
            __m256 r1 = _mm256_mul_ps(va, hi);                                           \
            if (read_c) r1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), r1);           \
            if (ep) r1 = ep_apply256(ep, i, 8, r1);                                      \
            _mm256_storeu_ps(ci + 8, r1);                                                \
        }                                                                                \
    }
    RK_TILE_ROWS(RK_STORE)
#undef RK_STORE
}

/* Ragged last columns (nr <= 8): one vector of B feeds two A micro-panels
 * (6 + rows2 rows), so that 12 independent sums hide the FMA latency that
 * 6 cannot. Each element still sees exactly kernel_avx2's operations. */
RK_INLINE void kernel_avx2_tall(int rows2, int64_t kc, const float *a0, const float *a1, const float *b, int64_t brs,
                                float *c, int64_t ldc, float alpha, float beta, int read_c, const tile_ep *ep) {
    __m256 x0 = _mm256_setzero_ps(), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0;
    __m256 y0 = x0, y1 = x0, y2 = x0, y3 = x0, y4 = x0, y5 = x0;
    for (int64_t p = 0; p < kc; p++) {
        __m256 b0 = _mm256_loadu_ps(b);
        x0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + 0), b0, x0);
        x1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + 1), b0, x1);
        x2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + 2), b0, x2);
        x3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + 3), b0, x3);
        x4 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + 4), b0, x4);
        x5 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + 5), b0, x5);
        if (rows2 > 0) y0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + 0), b0, y0);
        if (rows2 > 1) y1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + 1), b0, y1);
        if (rows2 > 2) y2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + 2), b0, y2);
        if (rows2 > 3) y3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + 3), b0, y3);
        if (rows2 > 4) y4 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + 4), b0, y4);
        if (rows2 > 5) y5 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + 5), b0, y5);
        a0 += MR;
        a1 += MR;
        b += brs;
    }
    if (store_plain(ep, read_c, alpha)) {
#define RK_STORE1(i, acc) \
        if (i < MR + rows2) _mm256_storeu_ps(c + i * ldc, acc);
        RK_TALL_ROWS(RK_STORE1)
#undef RK_STORE1
        return;
    }
    if (ep_rows_fast(ep, read_c, alpha)) {
        const int act = ep->act;
        const __m256 vlo = _mm256_set1_ps(ep->lo), vhi = _mm256_set1_ps(ep->hi);
        float bl[2 * MR];
        for (int i = 0; i < 2 * MR; i++) bl[i] = ep->row_bias && i < MR + rows2 ? ep->row_bias[i] : 0.0f;
#define RK_STORE1(i, acc)                                                                        \
        if (i < MR + rows2)                                                                      \
            _mm256_storeu_ps(c + i * ldc, ep_act256(_mm256_add_ps(acc, _mm256_set1_ps(bl[i])), act, vlo, vhi));
        RK_TALL_ROWS(RK_STORE1)
#undef RK_STORE1
        return;
    }
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(read_c ? beta : 0.0f);
#define RK_STORE1(i, acc)                                                                \
    if (i < MR + rows2) {                                                                \
        float *ci = c + i * ldc;                                                         \
        __m256 r0 = _mm256_mul_ps(va, acc);                                              \
        if (read_c) r0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), r0);                   \
        if (ep) r0 = ep_apply256(ep, i, 0, r0);                                          \
        _mm256_storeu_ps(ci, r0);                                                        \
    }
    RK_TALL_ROWS(RK_STORE1)
#undef RK_STORE1
}

/* Two A micro-panels (a0 full, a1 with rows2 rows) against 8 columns. */
static void micro_kernel_tall(int rows2, int64_t kc, const float *a0, const float *a1, const float *b, int64_t brs,
                              float *c, int64_t ldc, float alpha, float beta, int read_c, const tile_ep *ep) {
    switch (rows2) {
    case 1: kernel_avx2_tall(1, kc, a0, a1, b, brs, c, ldc, alpha, beta, read_c, ep); break;
    case 2: kernel_avx2_tall(2, kc, a0, a1, b, brs, c, ldc, alpha, beta, read_c, ep); break;
    case 3: kernel_avx2_tall(3, kc, a0, a1, b, brs, c, ldc, alpha, beta, read_c, ep); break;
    case 4: kernel_avx2_tall(4, kc, a0, a1, b, brs, c, ldc, alpha, beta, read_c, ep); break;
    case 5: kernel_avx2_tall(5, kc, a0, a1, b, brs, c, ldc, alpha, beta, read_c, ep); break;
    default: kernel_avx2_tall(MR, kc, a0, a1, b, brs, c, ldc, alpha, beta, read_c, ep); break;
    }
}
#define RK_HAVE_TALL 1

#if defined(__AVX512F__)
/* With AVX-512: one zmm per row and B micro-panel, up to 18 rows (three A
 * micro-panels) against one 16-wide B micro-panel, or up to 12 rows against
 * two adjacent ones (32 columns, 24 sums: two B loads and 12 broadcasts feed
 * 24 FMAs, half the loads per FMA of the one-panel tile). The row counts in
 * between keep enough independent sums to hide the FMA latency on ragged M
 * (64 rows = 4 x 12 + 6 + 10, 16 rows = one tile). The packed layout is the
 * AVX2 one (MR = 6, NR = 16), so weights packed by an rlxc built without
 * AVX-512 still fit. Each element sees exactly kernel_avx2's operations (fma
 * in k order, alpha*, beta fma), so results match the 6 x 16 path bit for bit.
 *
 * A streams through the kernel once per B panel (pair) and, for weights,
 * from DRAM (a model's weights are far over L3): the packed A block is one
 * sequence of micro-panels, which the calls of one B panel read in order,
 * so the kernel prefetches that sequence at the rate it consumes it, far
 * enough ahead to cover DRAM latency (M x N x K = 132 x 16 x 512 with A from
 * DRAM: 190 GFLOP/s, where prefetching 8, 64 or 128 k steps ahead in each
 * micro-panel gave 82, 150, 155; in cache 225). */
#ifndef RK_PF_A
#define RK_PF_A (128 * MR)
#endif
#ifndef RK_PF_HINT
#define RK_PF_HINT _MM_HINT_T0
#endif

/* rows: 1..18 with np == 1, 1..12 with np == 2 (constants after inlining);
 * A micro-panel q at a + q*MR*kc; B panel 2 at b + panel_stride. With ars
 * (a constant 0 or not) A is read in place instead: an A^T stored K x M
 * with row stride ars, the tile's rows at a[p*ars + i] (a transposed
 * convolution's im2col block, whose rows are contiguous in each k row):
 * the same operations in the same order, so the same bits as packed. */
RK_INLINE void kernel_avx512(int rows, int np, int64_t kc, const float *a, int64_t ars, const float *b,
                             int64_t panel_stride, int64_t brs, float *c, int64_t ldc, float alpha, float beta,
                             int read_c, const tile_ep *ep, const char *pfb, int pfn) {
    const int64_t as = ars ? ars : MR, ap = ars ? MR : MR * kc;   /* per k step, per micro-panel */
    const float *a0 = a, *a1 = rows > MR ? a + ap : a, *a2 = rows > 2 * MR ? a + 2 * ap : a;
    int64_t bs = np > 1 ? panel_stride : 0;
    __m512 x0 = _mm512_setzero_ps(), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0, x7 = x0, x8 = x0;
    __m512 x9 = x0, x10 = x0, x11 = x0, x12 = x0, x13 = x0, x14 = x0, x15 = x0, x16 = x0, x17 = x0;
    __m512 z0 = x0, z1 = x0, z2 = x0, z3 = x0, z4 = x0, z5 = x0, z6 = x0, z7 = x0, z8 = x0, z9 = x0, z10 = x0;
    __m512 z11 = x0;
    for (int i = 0; i < rows; i++) {
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        if (np > 1) _mm_prefetch((const char *)(c + i * ldc + NR), _MM_HINT_T0);
    }
    /* row i (A micro-panel ap, offset o) at step u of the unrolled loop */
#define RK_ROW2(i, ap, o, u)                                            \
    if (rows > i) {                                                     \
        __m512 av = _mm512_set1_ps(ap[(u) * as + o]);                   \
        x##i = _mm512_fmadd_ps(av, b0, x##i);                           \
        if (np > 1) z##i = _mm512_fmadd_ps(av, b1, z##i);               \
    }
#define RK_ROW1(i, ap, o, u) \
    if (rows > i) x##i = _mm512_fmadd_ps(_mm512_set1_ps(ap[(u) * as + o]), b0, x##i);
#define RK_STEP(u)                                                                                   \
    {                                                                                                \
        __m512 b0 = _mm512_loadu_ps(b + (u) * brs), b1 = np > 1 ? _mm512_loadu_ps(b + bs + (u) * brs) : b0; \
        RK_ROW2(0, a0, 0, u) RK_ROW2(1, a0, 1, u) RK_ROW2(2, a0, 2, u)                               \
        RK_ROW2(3, a0, 3, u) RK_ROW2(4, a0, 4, u) RK_ROW2(5, a0, 5, u)                               \
        RK_ROW2(6, a1, 0, u) RK_ROW2(7, a1, 1, u) RK_ROW2(8, a1, 2, u)                               \
        RK_ROW2(9, a1, 3, u) RK_ROW2(10, a1, 4, u) RK_ROW2(11, a1, 5, u)                             \
        RK_ROW1(12, a2, 0, u) RK_ROW1(13, a2, 1, u) RK_ROW1(14, a2, 2, u)                            \
        RK_ROW1(15, a2, 3, u) RK_ROW1(16, a2, 4, u) RK_ROW1(17, a2, 5, u)                            \
    }
#define RK_PF_LINES(p)                                                  \
    _mm_prefetch((const char *)(p), RK_PF_HINT);                        \
    _mm_prefetch((const char *)(p + 64), RK_PF_HINT);                   \
    _mm_prefetch((const char *)(p + 128), RK_PF_HINT);
    /* the next lines of the A panels' sequence, once per line (8 k steps are
     * 48 floats of each panel: 3 lines), RK_PF_A floats ahead of the last
     * panel: the one that runs out first. The sequence goes on into the next
     * call's panels, so after the first call their heads are in flight.
     * An address, not a pointer: it may run past the end of A. */
    int npanels = (rows + MR - 1) / MR;
    uintptr_t pf = (uintptr_t)a + (uintptr_t)(((npanels - 1) * MR * kc + RK_PF_A) * (int64_t)sizeof(float));
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
        if (!ars) {
            RK_PF_LINES(pf)
            if (npanels > 1) { RK_PF_LINES(pf + 192) }
            if (npanels > 2) { RK_PF_LINES(pf + 384) }
            pf += (uintptr_t)npanels * 192;
        }
        if (pfb) {   /* the next B panel(s), pfn lines (macro_kernel) */
            for (int q = 0; q < pfn; q++) _mm_prefetch(pfb + q * 64, _MM_HINT_T1);
            pfb += pfn * 64;
        }
        RK_STEP(0) RK_STEP(1) RK_STEP(2) RK_STEP(3) RK_STEP(4) RK_STEP(5) RK_STEP(6) RK_STEP(7)
        a0 += 8 * as;
        a1 += 8 * as;
        a2 += 8 * as;
        b += 8 * brs;
    }
    for (; p < kc; p++) {
        RK_STEP(0)
        a0 += as;
        a1 += as;
        a2 += as;
        b += brs;
    }
#undef RK_PF_LINES
#undef RK_STEP
#undef RK_ROW1
#undef RK_ROW2
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(read_c ? beta : 0.0f);
#define RK_STORE2(i) \
    if (rows > i) { RK_STORE_VEC(i, 0, x##i) if (np > 1) RK_STORE_VEC(i, NR, z##i) }
#define RK_STORE1(i) \
    if (rows > i) RK_STORE_VEC(i, 0, x##i)
#define RK_STORE_ALL                                                                      \
    RK_STORE2(0) RK_STORE2(1) RK_STORE2(2) RK_STORE2(3) RK_STORE2(4) RK_STORE2(5)         \
    RK_STORE2(6) RK_STORE2(7) RK_STORE2(8) RK_STORE2(9) RK_STORE2(10) RK_STORE2(11)       \
    RK_STORE1(12) RK_STORE1(13) RK_STORE1(14) RK_STORE1(15) RK_STORE1(16) RK_STORE1(17)
    if (ep && !ep->per_col && rows <= 16 && !read_c && alpha == 1.0f) {
        /* A row-bias epilogue (convolutions): its fields in locals and the
         * tile's biases in one vector, read before the stores. Read from ep
         * per vector, the compiler reloads and re-tests them after every
         * store (which may alias them): a K = 16 expansion spent a third of
         * its time in the epilogue. C read back stays on the path below. A
         * residual is added here since a Zen 5 measured it (a Xeon had
         * measured this path 5-10% slower with it): 256 x 128 x 3136 + bias,
         * residual, relu 1235 -> 1060 us, 512 x 256 x 784 986 -> 927; the
         * bias is then added before it, 0 or not, as ep_apply512 does. Same
         * bits as ep_apply512: alpha is 1 (x * 1 is x);
         * a sum begun at +0 is never -0, so adding a bias of 0 (every bias,
         * 0 where there is none) gives it back unchanged; and the clip as
         * min(hi, max(lo, x)) keeps x where it equals a bound (of either
         * zero's sign) or is NaN, and is the compares' result for lo <= hi,
         * the only clips fused (fuse.c). The K = 16 expansion 30.2 -> 22 us. */
        const int act = ep->act;
        const __m512 lo = _mm512_set1_ps(ep->lo), hi = _mm512_set1_ps(ep->hi);
        const __m512 bvec = ep->row_bias ? _mm512_maskz_loadu_ps((__mmask16)(0xffffu >> (16 - rows)), ep->row_bias)
                                         : _mm512_setzero_ps();
        const float *res = ep->res;
        const int64_t ldres = ep->ldres;
#define RK_STORE_VEC(i, j, acc)                                                                   \
        {                                                                                         \
            float *ci = c + i * ldc + j;                                                          \
            __m512 r0 = _mm512_add_ps(acc, _mm512_permutexvar_ps(_mm512_set1_epi32(i), bvec));   \
            if (res) r0 = _mm512_add_ps(r0, _mm512_loadu_ps(res + i * ldres + j));                \
            if (act == RS_ACT_RELU)                                                               \
                r0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(r0, _mm512_setzero_ps(), _CMP_NLE_UQ), r0); \
            else if (act == RS_ACT_CLIP) {                                                        \
                r0 = _mm512_min_ps(hi, _mm512_max_ps(lo, r0));                                    \
            }                                                                                     \
            _mm512_storeu_ps(ci, r0);                                                             \
        }
        RK_STORE_ALL
#undef RK_STORE_VEC
        return;
    }
#define RK_STORE_VEC(i, j, acc)                                                                   \
    {                                                                                             \
        float *ci = c + i * ldc + j;                                                              \
        __m512 r0 = _mm512_mul_ps(va, acc);                                                       \
        if (read_c) r0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(ci), r0);                            \
        if (ep) r0 = ep_apply512(ep, i, j, r0);                                                   \
        _mm512_storeu_ps(ci, r0);                                                                 \
    }
    RK_STORE_ALL
#undef RK_STORE_ALL
#undef RK_STORE1
#undef RK_STORE2
#undef RK_STORE_VEC
}

/* rows (1 .. 18 for one B panel, 1 .. 12 for two) against np 16-wide B panels;
 * A packed (ars 0) or in place (row stride ars). */
static void micro_kernel_512(int rows, int np, int64_t kc, const float *a, int64_t ars, const float *b,
                             int64_t panel_stride, int64_t brs, float *c, int64_t ldc, float alpha, float beta,
                             int read_c, const tile_ep *ep, const char *pfb, int pfn) {
/* in place with two panels, or with one for up to 12 rows (rows_512 keeps
 * in-place tiles to those): two thirds of the instances, the file compiles
 * in 75% more time instead of twice the time */
#define RK_K512(r, n)                                                                                        \
    if (ars && (n == 2 || r <= 12)) kernel_avx512(r, n, kc, a, ars, b, panel_stride, brs, c, ldc, alpha, beta, read_c, ep, pfb, pfn); \
    else kernel_avx512(r, n, kc, a, 0, b, panel_stride, brs, c, ldc, alpha, beta, read_c, ep, pfb, pfn);    \
    break;
    if (np == 2) {
        switch (rows) {
        case 1: RK_K512(1, 2) case 2: RK_K512(2, 2) case 3: RK_K512(3, 2) case 4: RK_K512(4, 2)
        case 5: RK_K512(5, 2) case 6: RK_K512(6, 2) case 7: RK_K512(7, 2) case 8: RK_K512(8, 2)
        case 9: RK_K512(9, 2) case 10: RK_K512(10, 2) case 11: RK_K512(11, 2) default: RK_K512(12, 2)
        }
        return;
    }
    switch (rows) {
    case 1: RK_K512(1, 1) case 2: RK_K512(2, 1) case 3: RK_K512(3, 1) case 4: RK_K512(4, 1)
    case 5: RK_K512(5, 1) case 6: RK_K512(6, 1) case 7: RK_K512(7, 1) case 8: RK_K512(8, 1)
    case 9: RK_K512(9, 1) case 10: RK_K512(10, 1) case 11: RK_K512(11, 1) case 12: RK_K512(12, 1)
    case 13: RK_K512(13, 1) case 14: RK_K512(14, 1) case 15: RK_K512(15, 1) case 16: RK_K512(16, 1)
    case 17: RK_K512(17, 1) default: RK_K512(18, 1)
    }
#undef RK_K512
}

/* Rows the next kernel call takes of the `left` rows of a block: tiles of
 * 12 (18 for the last one with one packed panel), and no last tile of a few
 * rows against two panels or one read in place (16 = 6 + 10, not 12 + 4). */
static int rows_512(int64_t left, int np, int64_t ars) {
    if (np == 1 && !ars) return (int)(left <= 3 * MR ? left : 2 * MR);
    if (left <= 2 * MR) return (int)left;
    return left < 3 * MR ? MR : 2 * MR;
}
#define RK_HAVE_WIDE 1
#endif

#define RK_KERNEL_CASE(r)                                                                        \
    case r:                                                                                      \
        if (nv == 2) kernel_avx2(r, 2, kc, a, b, brs, c, ldc, alpha, beta, read_c, ep);          \
        else kernel_avx2(r, 1, kc, a, b, brs, c, ldc, alpha, beta, read_c, ep);                  \
        break;

/* Runs the kernel specialised for `rows` rows and nv vectors. */
static void micro_kernel(int rows, int nv, int64_t kc, const float *a, const float *b, int64_t brs, float *c,
                         int64_t ldc, float alpha, float beta, int read_c, const tile_ep *ep) {
    switch (rows) {
    RK_KERNEL_CASE(1)
    RK_KERNEL_CASE(2)
    RK_KERNEL_CASE(3)
    RK_KERNEL_CASE(4)
    RK_KERNEL_CASE(5)
    default:
        if (nv == 2) kernel_avx2(MR, 2, kc, a, b, brs, c, ldc, alpha, beta, read_c, ep);
        else kernel_avx2(MR, 1, kc, a, b, brs, c, ldc, alpha, beta, read_c, ep);
        break;
    }
}
#undef RK_KERNEL_CASE

#elif RK_GEMM_NEON

#define RK_HAVE_TALL 0

/* A 6 x 16 tile in 24 accumulators (of AArch64's 32 vector registers), the
 * k step's four B vectors and its six A values in two more (used by lane):
 * 24 fmas per 4 + 2 loads. Every row is computed (the A panel's padding
 * rows are 0) and `rows` of them stored; nv (1 or 2 halves of 8 columns,
 * a constant after inlining) limits the B loads to the panel's columns.
 * Like the other kernels: fma in k order in one lane, then alpha *, then
 * + beta * C as one fma. The epilogue runs on the stored tile. */
RK_INLINE void kernel_neon(int nv, int rows, int64_t kc, const float *a, const float *b, int64_t brs, float *c,
                           int64_t ldc, float alpha, float beta, int read_c) {
    float32x4_t z = vdupq_n_f32(0.0f);
    float32x4_t c00 = z, c01 = z, c02 = z, c03 = z, c10 = z, c11 = z, c12 = z, c13 = z;
    float32x4_t c20 = z, c21 = z, c22 = z, c23 = z, c30 = z, c31 = z, c32 = z, c33 = z;
    float32x4_t c40 = z, c41 = z, c42 = z, c43 = z, c50 = z, c51 = z, c52 = z, c53 = z;
    for (int64_t p = 0; p < kc; p++) {
        float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
        float32x4_t b2 = nv > 1 ? vld1q_f32(b + 8) : z, b3 = nv > 1 ? vld1q_f32(b + 12) : z;
        float32x4_t a0 = vld1q_f32(a);
        float32x2_t a1 = vld1_f32(a + 4);
#define RK_NROW(i, fma, av, lane)                          \
        c##i##0 = fma(c##i##0, b0, av, lane);              \
        c##i##1 = fma(c##i##1, b1, av, lane);              \
        if (nv > 1) {                                      \
            c##i##2 = fma(c##i##2, b2, av, lane);          \
            c##i##3 = fma(c##i##3, b3, av, lane);          \
        }
        RK_NROW(0, vfmaq_laneq_f32, a0, 0)
        RK_NROW(1, vfmaq_laneq_f32, a0, 1)
        RK_NROW(2, vfmaq_laneq_f32, a0, 2)
        RK_NROW(3, vfmaq_laneq_f32, a0, 3)
        RK_NROW(4, vfmaq_lane_f32, a1, 0)
        RK_NROW(5, vfmaq_lane_f32, a1, 1)
#undef RK_NROW
        a += MR;
        b += brs;
    }
    float32x4_t va = vdupq_n_f32(alpha), vb = vdupq_n_f32(read_c ? beta : 0.0f);
#define RK_NSTORE1(ci, acc)                                    \
    {                                                          \
        float32x4_t r = vmulq_f32(va, acc);                    \
        if (read_c) r = vfmaq_f32(r, vb, vld1q_f32(ci));       \
        vst1q_f32(ci, r);                                      \
    }
#define RK_NSTORE(i)                                           \
    if (rows > i) {                                            \
        float *ci = c + i * ldc;                               \
        RK_NSTORE1(ci, c##i##0)                                \
        RK_NSTORE1(ci + 4, c##i##1)                            \
        if (nv > 1) {                                          \
            RK_NSTORE1(ci + 8, c##i##2)                        \
            RK_NSTORE1(ci + 12, c##i##3)                       \
        }                                                      \
    }
    RK_NSTORE(0)
    RK_NSTORE(1)
    RK_NSTORE(2)
    RK_NSTORE(3)
    RK_NSTORE(4)
    RK_NSTORE(5)
#undef RK_NSTORE
#undef RK_NSTORE1
}

static void micro_kernel(int rows, int nv, int64_t kc, const float *a, const float *b, int64_t brs, float *c,
                         int64_t ldc, float alpha, float beta, int read_c, const tile_ep *ep) {
    (void)ep;   /* never given here: the caller applies the epilogue on the stored tile */
    if (nv > 1) kernel_neon(2, rows, kc, a, b, brs, c, ldc, alpha, beta, read_c);
    else kernel_neon(1, rows, kc, a, b, brs, c, ldc, alpha, beta, read_c);
}

#else /* portable C */

#define RK_HAVE_TALL 0

#if defined(__GNUC__)
/* GCC/Clang vector extension: 4-float vectors map to SSE2 on any x86-64 and
 * NEON on ARM, and keep the 6 x 8 block of sums in 12 registers, which plain
 * loops leave to the whims of the vectorizer (gcc -O3 ran them 4x slower). */
typedef float rk_v4 __attribute__((vector_size(16)));

static rk_v4 v4_load(const float *p) {
    rk_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void micro_kernel(int rows, int nv, int64_t kc, const float *a, const float *b, int64_t brs, float *c,
                         int64_t ldc, float alpha, float beta, int read_c, const tile_ep *ep) {
    (void)ep;   /* never given here: the caller applies the epilogue in memory */
    for (int half = 0; half < nv; half++) {
        rk_v4 acc[MR][2];
        const float *bh = b + 8 * half;
        for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = (rk_v4){0, 0, 0, 0};
        for (int64_t p = 0; p < kc; p++) {
            const float *ap = a + p * MR;
            rk_v4 b0 = v4_load(bh + p * brs), b1 = v4_load(bh + p * brs + 4), av;
            /* unrolled by hand: gcc -O2 does not, and then keeps acc in memory */
#define RK_ROW4(i)                                  \
            av = (rk_v4){ap[i], ap[i], ap[i], ap[i]}; \
            acc[i][0] += av * b0;                     \
            acc[i][1] += av * b1;
            RK_ROW4(0)
            RK_ROW4(1)
            RK_ROW4(2)
            RK_ROW4(3)
            RK_ROW4(4)
            RK_ROW4(5)
#undef RK_ROW4
        }
        for (int i = 0; i < rows; i++) {
            float *ci = c + i * ldc + 8 * half, sums[8];
            memcpy(sums, acc[i], sizeof sums);
            for (int j = 0; j < 8; j++) {
                float r = alpha * sums[j];
                ci[j] = read_c ? r + beta * ci[j] : r;
            }
        }
    }
}
#else
/* Eight columns at a time: a 6 x 8 block of sums fits in 12 SSE registers,
 * where 6 x 16 would spill, and the j loops vectorize at -O2. */
static void micro_kernel(int rows, int nv, int64_t kc, const float *a, const float *b, int64_t brs, float *c,
                         int64_t ldc, float alpha, float beta, int read_c, const tile_ep *ep) {
    (void)ep;   /* never given here: the caller applies the epilogue in memory */
    for (int half = 0; half < nv; half++) {
        float acc[MR][8];
        const float *bh = b + 8 * half;
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
        for (int64_t p = 0; p < kc; p++) {
            const float *bp = bh + p * brs, *ap = a + p * MR;
            for (int i = 0; i < MR; i++)
                for (int j = 0; j < 8; j++) acc[i][j] += ap[i] * bp[j];
        }
        for (int i = 0; i < rows; i++) {
            float *ci = c + i * ldc + 8 * half;
            for (int j = 0; j < 8; j++) {
                float r = alpha * acc[i][j];
                ci[j] = read_c ? r + beta * ci[j] : r;
            }
        }
    }
}
#endif

#endif

#ifndef RK_HAVE_WIDE
#define RK_HAVE_WIDE 0
#endif

const char *rk_sgemm_kernel(void) {
#if RK_HAVE_WIDE
    return "avx512 12x32";
#elif RK_GEMM_AVX2
    return "avx2 6x16";
#elif RK_GEMM_NEON
    return "neon 6x16";
#else
    return "portable 6x16";
#endif
}

/* HardSwish in registers: the AVX2 kernels (ep_act256); the AVX-512 ones
 * apply it after the store (epilogue_tile) */
#if RK_GEMM_AVX2 && !defined(__AVX512F__)
#define EP_REGS_HARDSWISH 1
#else
#define EP_REGS_HARDSWISH 0
#endif

static int has_epilogue(const rk_sgemm_args *g) { return g->bias || g->res || g->act != RS_ACT_NONE; }

/* ---- the blocked driver ---- */

typedef struct {
    const rk_sgemm_args *g;
    int64_t m0, m1, n0, n1;   /* this call's share of C: MR/NR-aligned starts */
    float *pack_a, *pack_b;   /* scratch, 64-byte aligned */
} gemm_part;

/* rows x nr floats (nr < NR) from src (row stride lds) to dst (row stride
 * ldd): a ragged tile's columns into and out of the kernels' full-width copy.
 * A memcpy per row of a few floats became `rep movs`, some 30 cycles to
 * start, and a Winograd layer's products have a ragged tile in each of their
 * 16 or 36 GEMMs: the copies were ~4% of SqueezeNet's time at 1 thread
 * (perf, a Zen 5). */
static void copy_ragged(float *dst, int64_t ldd, const float *src, int64_t lds, int64_t rows, int64_t nr) {
#if RK_GEMM_AVX2   /* the epilogue's masked vectors (EP_LOAD, EP_STORE) */
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < nr; j += EP_VEC) {
            ep_mask m = ep_mask_for(nr - j);
            EP_STORE(m, dst + i * ldd + j, EP_LOAD(m, src + i * lds + j));
        }
#else
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < nr; j++) dst[i * ldd + j] = src[i * lds + j];
#endif
}

/* One macro tile: C[mc x nc] (+)= A block * B block. Full B micro-panels are
 * at pb + q*panel_stride with row stride brs; a ragged last one (if any) at
 * pb_tail with row stride NR. A is packed (ars 0) or read in place as A^T
 * with row stride ars, which only the AVX-512 kernel does, and only against
 * full panels (nc a multiple of 16: the caller checks). */
static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float *pa, int64_t ars, const float *pb,
                         int64_t panel_stride, int64_t brs, const float *pb_tail, float *c, int64_t ldc, float alpha,
                         float beta, int read_c, const rk_sgemm_args *ep, int64_t ep_i0, int64_t ep_j0, int pf_b) {
    int ep_in_regs = RK_GEMM_AVX2 && ep && (ep->act == RS_ACT_NONE || ep->act == RS_ACT_RELU || ep->act == RS_ACT_CLIP ||
                                            (EP_REGS_HARDSWISH && ep->act == RS_ACT_HARDSWISH));
    tile_ep ep_base;
    memset(&ep_base, 0, sizeof ep_base);
    if (ep_in_regs) {
        ep_base.per_col = ep->bias_per_col;
        if (ep->bias && ep->bias_per_col) ep_base.col_bias = ep->bias + ep_j0;
        if (ep->bias && !ep->bias_per_col) ep_base.row_bias = ep->bias + ep_i0;
        if (ep->res) ep_base.res = ep->res + ep_i0 * ep->ldres + ep_j0;
        ep_base.ldres = ep->ldres;
        ep_base.act = ep->act;
        ep_base.lo = ep->act_a;
        ep_base.hi = ep->act_b;
    }
    for (int64_t jr = 0; jr < nc;) {
        int64_t nr = min64(NR, nc - jr);
        const float *bp = nr == NR ? pb + (jr / NR) * panel_stride : pb_tail;
        int64_t bstride = nr == NR ? brs : NR;
        int nv = nr > 8 ? 2 : 1;
        /* with AVX-512, two full B panels at once where there are two */
        int np = RK_HAVE_WIDE && jr + 2 * NR <= nc ? 2 : 1;
        int64_t cols = np == 2 ? 2 * NR : nr;
        /* The next full panel(s) of B, fetched while this one is worked on:
         * pre-packed (weights, from DRAM or L3), their lines a share per row
         * tile (AVX-512: within the first tile's k loop, below), into L2
         * only: into L1 they pushed out the panel that the
         * remaining row tiles read (a Zen 4's L1 is 32 KB, two panels of
         * kc 256 are 32 KB; ResNeXt-50's 7x7 1x1 layers with weights from
         * DRAM 2262 -> 2138 us, EfficientNet-B0's 320 -> 1280 485 -> 435;
         * two panels ahead gave nothing more); read in place (kc rows far
         * apart, each its own stream, which the hardware prefetchers do not
         * follow), their two lines per row now. */
#if RK_GEMM_AVX2
        const char *next = jr + cols + NR <= nc ? (const char *)(pb + (jr + cols) / NR * panel_stride) : NULL;
        int64_t pf_lines = pf_b && next ? (np == 2 ? 2 : 1) * panel_stride * (int64_t)sizeof(float) / 64 : 0;
        int64_t pf_done = 0;
        /* AVX-512: the whole next panel (pair) fetched during the first row
         * tile, pfn lines every 8 k steps of its loop, rather than a burst
         * after each tile: prefetches in bursts of ~100 lines waited on the
         * core's few miss buffers (a Zen 5, M x K x N = 49 x 1024 x 2048
         * with B from DRAM: 139 GFLOP/s in bursts, 158 spread over all the
         * row tiles, 175-180 within the first; 205-215 in cache) */
        int pfn = pf_lines && kc >= 8 ? (int)min64(32, (pf_lines + kc / 8 - 1) / (kc / 8)) : 0;
        if (next && brs != NR)
            for (int64_t p = 0; p < kc; p++) {
                _mm_prefetch(next + p * brs * (int64_t)sizeof(float), _MM_HINT_T0);
                _mm_prefetch(next + p * brs * (int64_t)sizeof(float) + 64, _MM_HINT_T0);
            }
#else
        (void)pf_b;
#endif
        for (int64_t ir = 0; ir < mc;) {
            int rows = (int)min64(MR, mc - ir);
            const float *ap = ars ? pa + ir : pa + ir * kc;
            float *ct = c + ir * ldc + jr;
            int tall = 0, wide = 0;
#if RK_HAVE_TALL
            /* two row tiles at once for 8 or fewer columns */
            if (nv == 1 && rows == MR && ir + MR < mc) tall = 1;
#endif
#if RK_HAVE_WIDE
            /* and, with AVX-512, any row count for 9 to 32 columns */
            if (nv == 2) wide = rows_512(mc - ir, np, ars);
#endif
            int all_rows = wide ? wide : tall ? (int)min64(2 * MR, mc - ir) : rows;
            float tile[3 * MR * NR];
            float *dst = ct;
            int64_t ldd = ldc;
            if (nr != NR && nr != 8) {
                /* ragged columns: the same kernel on a full-width copy */
                dst = tile;
                ldd = NR;
                if (read_c) copy_ragged(tile, NR, ct, ldc, all_rows, nr);
            }
            /* the epilogue in registers where the kernel stores into C */
            tile_ep te, *tep = NULL;
            if (ep && ep_in_regs && dst == ct) {
                te = ep_base;
                if (te.row_bias) te.row_bias += ir;
                if (te.col_bias) te.col_bias += jr;
                if (te.res) te.res += ir * te.ldres + jr;
                tep = &te;
            }
#if RK_GEMM_AVX2
            /* the tile's residual, which the epilogue reads: without, a cold
             * one (ResNet's units write it a layer or two earlier) stalled
             * the stores (a Zen 5, 256 x 128 x 3136 + bias, residual, relu,
             * C and residual out of cache: 1861 -> 1097 us; 922 with no
             * residual). Here, not in the kernels: there it made gcc's AVX2
             * kernel twice as slow. */
            if (tep && tep->res)
                for (int i = 0; i < all_rows; i++) {
                    _mm_prefetch((const char *)(tep->res + i * tep->ldres), _MM_HINT_T0);
                    if (cols > NR) _mm_prefetch((const char *)(tep->res + i * tep->ldres + NR), _MM_HINT_T0);
                }
#endif
#if RK_HAVE_TALL
            if (tall)
                micro_kernel_tall(all_rows - MR, kc, ap, ap + MR * kc, bp, bstride, dst, ldd, alpha, beta, read_c, tep);
            else
#endif
#if RK_HAVE_WIDE
            if (wide) {
                const char *pfb = pfn && pf_done < pf_lines ? next + pf_done * 64 : NULL;
                micro_kernel_512(all_rows, np, kc, ap, ars, bp, panel_stride, bstride, dst, ldd, alpha, beta, read_c, tep,
                                 pfb, pfn);
                if (pfb) pf_done += kc / 8 * pfn;
            } else
#endif
                micro_kernel(rows, nv, kc, ap, bp, bstride, dst, ldd, alpha, beta, read_c, tep);
            if (dst == tile) copy_ragged(ct, ldc, tile, NR, all_rows, nr);
            if (ep && !tep) epilogue_tile(ep, ct, ldc, ep_i0 + ir, ep_j0 + jr, all_rows, cols);
            ir += all_rows;
#if RK_GEMM_AVX2
            for (int64_t want = pf_lines * ir / mc; pf_done < want; pf_done++)
                _mm_prefetch(next + pf_done * 64, _MM_HINT_T1);
#endif
        }
        jr += cols;
    }
}

static void gemm_part_run(const gemm_part *part) {
    const rk_sgemm_args *g = part->g;
    int64_t m = g->m, n = g->n, k = g->k, kcs = kc_step(k);
    /* In place, a B panel is kc lines one row stride apart: fine unless the
     * stride is a multiple of 2 KB, whose lines crowd into a few cache sets. */
    int64_t rows = part->m1 - part->m0;
    int direct_b = !g->packed_b && !g->trans_b &&
                   (rows <= DIRECT_B_MAX_M || ((rows <= DIRECT_B_MAX_M_ODD_LDB || k <= 32) && g->ldb % 512 != 0));
    /* A^T read in place by the AVX-512 kernel: no packing (a transposed
     * convolution's A is its im2col block, up to 12% of the product's time
     * to pack where N is small). The kernel runs 2-5% slower on it than on
     * packed panels, which pays for the packing only up to DIRECT_A_MAX_N
     * columns, and only where every panel is full (the kernel is
     * instantiated in place for those alone). A single panel in place (a
     * thread's share of 160 output channels on a 7x7 plane is 5 panels)
     * spares each thread the packing: such a 2-thread product 19% faster. */
    int direct_a = RK_HAVE_WIDE && !g->packed_a && g->trans_a && n <= DIRECT_A_MAX_N &&
                   (part->n1 - part->n0) % NR == 0;
    for (int64_t jc = part->n0 / NC * NC; jc < part->n1; jc += NC) {
        int64_t j_lo = jc > part->n0 ? jc : part->n0, j_hi = min64(jc + NC, part->n1);
        int64_t nc = j_hi - j_lo, ncr = roundup(min64(NC, n - jc), NR);
        for (int64_t pc = 0; pc < k; pc += kcs) {
            int64_t kc = min64(kcs, k - pc);
            const float *pb, *pb_tail;
            int64_t panel_stride, brs;
            if (g->packed_b) {
                pb = g->packed_b + jc * k + pc * ncr + (j_lo - jc) * kc;
                panel_stride = NR * kc;
                brs = NR;
                pb_tail = pb + nc / NR * panel_stride;
            } else if (direct_b) {
                pb = g->b + pc * g->ldb + j_lo;
                panel_stride = NR;
                brs = g->ldb;
                pb_tail = part->pack_b;
                if (nc % NR) pack_b_block(nc % NR, kc, g->b, g->ldb, 0, pc, j_lo + nc / NR * NR, part->pack_b);
            } else {
                pack_b_block(nc, kc, g->b, g->ldb, g->trans_b, pc, j_lo, part->pack_b);
                pb = part->pack_b;
                panel_stride = NR * kc;
                brs = NR;
                pb_tail = pb + nc / NR * panel_stride;
            }
            int read_c = pc > 0 || g->beta != 0.0f;
            float beta = pc > 0 ? 1.0f : g->beta;
            for (int64_t ic = part->m0 / MC * MC; ic < part->m1; ic += MC) {
                int64_t i_lo = ic > part->m0 ? ic : part->m0, i_hi = min64(ic + MC, part->m1);
                int64_t mc = i_hi - i_lo;
                const float *pa;
                if (g->packed_a) {
                    int64_t mcr = roundup(min64(MC, m - ic), MR);
                    pa = g->packed_a + ic * k + pc * mcr + (i_lo - ic) * kc;
                } else if (direct_a) {
                    pa = g->a + pc * g->lda + i_lo;
                } else {
                    pack_a_block(mc, kc, g->a, g->lda, g->trans_a, i_lo, pc, part->pack_a);
                    pa = part->pack_a;
                }
                macro_kernel(mc, nc, kc, pa, direct_a ? g->lda : 0, pb, panel_stride, brs, pb_tail, g->c + i_lo * g->ldc + j_lo, g->ldc,
                             g->alpha, beta, read_c, pc + kc >= k && has_epilogue(g) ? g : NULL, i_lo, j_lo,
                             g->packed_b != NULL);
            }
        }
    }
}

static void part_init(gemm_part *part, const rk_sgemm_args *g, void *scratch) {
    size_t a_bytes = (size_t)roundup(min64(g->m, MC), MR) * (size_t)kc_step(g->k) * sizeof(float);
    part->g = g;
    part->pack_a = rk_align64f(scratch);
    part->pack_b = rk_align64f((char *)part->pack_a + a_bytes);
}

/* C = beta * C for K == 0, where no kernel runs (the caller then applies
 * the epilogue). */
static void scale_c(const rk_sgemm_args *g) {
    for (int64_t i = 0; i < g->m; i++) {
        float *ci = g->c + i * g->ldc;
        for (int64_t j = 0; j < g->n; j++) ci[j] = g->beta == 0.0f ? 0.0f : g->beta * ci[j];
    }
}

typedef struct {
    const rk_sgemm_args *g;
    char *scratch;
    size_t scratch_per_thread;
    int split_n;             /* split columns (else rows) */
    int64_t tiles, nthreads; /* tiles of the split dimension (NR or MR each) */
    rk_queue *q;             /* the tiles in runs, per for each thread (rk_take) */
    int64_t per;             /* 2 with threads (each run packs the operand runs share again), else 1 */
} gemm_team;

static void gemm_task(void *arg, int tid) {
    const gemm_team *team = arg;
    const rk_sgemm_args *g = team->g;
    int64_t cursor = 0, k, t0, t1;
    for (int v; (v = rk_take(team->q, (int)team->nthreads, tid, team->per, &cursor, &k)) >= 0;) {
        rk_run_range(team->tiles, (int)team->nthreads, team->per, v, k, &t0, &t1);
        if (t0 >= t1) continue;
        gemm_part part;
        part_init(&part, g, team->scratch + (size_t)tid * team->scratch_per_thread);
        part.m0 = 0;
        part.m1 = g->m;
        part.n0 = 0;
        part.n1 = g->n;
        if (team->split_n) {
            part.n0 = t0 * NR;
            part.n1 = min64(t1 * NR, g->n);
        } else {
            part.m0 = t0 * MR;
            part.m1 = min64(t1 * MR, g->m);
        }
        gemm_part_run(&part);
    }
}

void rk_sgemm_ex(const rk_sgemm_args *g, void *scratch, int nthreads, rk_parallel_fn parallel, void *parallel_ctx) {
    if (g->m <= 0 || g->n <= 0) return;
#ifdef RLX_BLAS_OPENBLAS
    /* rlxc --blas openblas: plain (never pre-packed) operands go to OpenBLAS,
     * which threads by itself */
    if (!g->packed_a && !g->packed_b && g->k > 0) {
        cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans,
                    (int)g->m, (int)g->n, (int)g->k, g->alpha, g->a, (int)g->lda, g->b, (int)g->ldb, g->beta, g->c,
                    (int)g->ldc);
        if (has_epilogue(g)) epilogue_tile(g, g->c, g->ldc, 0, 0, g->m, g->n);
        return;
    }
#endif
    if (g->k <= 0) {
        scale_c(g);
        if (has_epilogue(g)) epilogue_tile(g, g->c, g->ldc, 0, 0, g->m, g->n);
        return;
    }
    gemm_team team;
    team.g = g;
    team.scratch = scratch;
    team.scratch_per_thread = rk_sgemm_scratch_size(g->m, g->n, g->k);
    int64_t n_tiles = (g->n + NR - 1) / NR, m_tiles = (g->m + MR - 1) / MR;
    /* Splitting columns repacks A in every thread, splitting rows repacks B:
     * split the dimension with more tiles, columns when both are plenty. */
    team.split_n = n_tiles >= m_tiles || n_tiles >= 8 * (int64_t)nthreads;
    team.tiles = team.split_n ? n_tiles : m_tiles;
    team.nthreads = nthreads < 1 ? 1 : nthreads;
    if (team.nthreads > team.tiles) team.nthreads = team.tiles;
    if (!parallel) team.nthreads = 1;
    rk_queue q;
    team.q = &q;
    team.nthreads = rk_queue_init(&q, team.nthreads);
    team.per = team.nthreads > 1 ? 2 : 1;
    if (team.nthreads == 1) gemm_task(&team, 0);
    else parallel(parallel_ctx, (int)team.nthreads, gemm_task, &team);
}

/* C[m0..m1, n0..n1) on the calling thread: m0 a multiple of MR, n0 of NR. */
static void sgemm_part(const rk_sgemm_args *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1, void *scratch) {
    if (m1 > g->m) m1 = g->m;
    if (n1 > g->n) n1 = g->n;
    if (m0 < 0 || n0 < 0 || m0 % MR || n0 % NR || m0 >= m1 || n0 >= n1) return;
    if (g->k <= 0) {
        rk_sgemm_args sub = *g;
        sub.m = m1 - m0;
        sub.n = n1 - n0;
        sub.c = g->c + m0 * g->ldc + n0;
        sub.bias = !g->bias ? NULL : g->bias_per_col ? g->bias + n0 : g->bias + m0;
        sub.res = g->res ? g->res + m0 * g->ldres + n0 : NULL;
        scale_c(&sub);
        if (has_epilogue(&sub)) epilogue_tile(&sub, sub.c, sub.ldc, 0, 0, sub.m, sub.n);
        return;
    }
    gemm_part part;
    part_init(&part, g, scratch);
    part.m0 = m0;
    part.m1 = m1;
    part.n0 = n0;
    part.n1 = n1;
    gemm_part_run(&part);
}

void rk_sgemm_rows(const rk_sgemm_args *g, int64_t m0, int64_t m1, void *scratch) {
    sgemm_part(g, m0, m1, 0, g->n, scratch);
}

void rk_sgemm_cols(const rk_sgemm_args *g, int64_t n0, int64_t n1, void *scratch) {
    sgemm_part(g, 0, g->m, n0, n1, scratch);
}

/* ---- few rows against a pre-packed B ----
 * Plain loops over B's panels, four rows of sums at a time, for products too
 * small to thread or to pay for packing A: a classifier's head, an MLP at a
 * small batch. Each element sees exactly the operations of the blocked path
 * above (its kc blocks, k in order within one, alpha*, then beta*C on the
 * first block and + C on later ones, and the epilogue once the last block
 * is in), so the bits are the same, and the code is a few hundred bytes
 * where the blocked path's kernels are several hundred KB. */
#if RK_GEMM_AVX2
#define FEW_MADD(x, y, acc) fmaf(x, y, acc)   /* the SIMD kernels fuse the multiply-add */
#else
#define FEW_MADD(x, y, acc) ((acc) + (x) * (y))   /* the portable kernels multiply, then add */
#endif

/* The sums of rows i0 .. i0+rows-1 (at most 4; rows past m repeat row i0,
 * unstored) against np panels of B (np x NR columns; np panels each kc
 * deep, kc * NR floats apart), into acc[r][q * NR + j]. The SIMD variants
 * keep four named rows of sums (AVX2: one panel, eight registers; AVX-512:
 * four panels, sixteen) so that they stay in registers; the portable one
 * keeps the short loop. Either way every sum sees the same operations in
 * the same order. */
#if RK_GEMM_AVX2 && !defined(__AVX512F__)
#define FEW_NP 1
/* AVX2: the four rows' sums of 16 columns in eight registers. B's two
 * vectors are loaded once per k; the empty asm keeps them in registers,
 * since gcc's tuning for AMD cores (-march=native on Zen) otherwise folds
 * each load into its four multiply-adds: 12 loads a step where 6 do, and
 * the loop waits on loads instead of on the multiply-adds. */
static inline __attribute__((always_inline)) void few_tile(const rk_sgemm_args *g, const float *panel, int64_t kc,
                                                           int64_t pc, int64_t i0, int64_t rows, int np,
                                                           float acc[4][FEW_NP * NR]) {
    (void)np;
    int64_t as = g->trans_a ? g->lda : 1, rs = g->trans_a ? 1 : g->lda;
    const float *a0 = g->a + (g->trans_a ? pc * g->lda : pc) + i0 * rs;
    const float *a1 = rows > 1 ? a0 + rs : a0, *a2 = rows > 2 ? a0 + 2 * rs : a0, *a3 = rows > 3 ? a0 + 3 * rs : a0;
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    for (int64_t p = 0; p < kc; p++) {
        const float *bp = panel + p * NR;
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        __asm__("" : "+x"(b0), "+x"(b1));
        __m256 v0 = _mm256_broadcast_ss(a0 + p * as), v1 = _mm256_broadcast_ss(a1 + p * as);
        __m256 v2 = _mm256_broadcast_ss(a2 + p * as), v3 = _mm256_broadcast_ss(a3 + p * as);
        c00 = _mm256_fmadd_ps(v0, b0, c00);
        c01 = _mm256_fmadd_ps(v0, b1, c01);
        c10 = _mm256_fmadd_ps(v1, b0, c10);
        c11 = _mm256_fmadd_ps(v1, b1, c11);
        c20 = _mm256_fmadd_ps(v2, b0, c20);
        c21 = _mm256_fmadd_ps(v2, b1, c21);
        c30 = _mm256_fmadd_ps(v3, b0, c30);
        c31 = _mm256_fmadd_ps(v3, b1, c31);
    }
    _mm256_storeu_ps(acc[0], c00);
    _mm256_storeu_ps(acc[0] + 8, c01);
    _mm256_storeu_ps(acc[1], c10);
    _mm256_storeu_ps(acc[1] + 8, c11);
    _mm256_storeu_ps(acc[2], c20);
    _mm256_storeu_ps(acc[2] + 8, c21);
    _mm256_storeu_ps(acc[3], c30);
    _mm256_storeu_ps(acc[3] + 8, c31);
}
#elif RK_GEMM_AVX2
/* AVX-512: the four rows' sums of four panels (64 columns) in sixteen
 * registers, B's four vectors loaded once per k and each used by four
 * multiply-adds. Sixteen independent sums keep both FMA pipes busy through
 * their latency, where eight (two panels, as the compiler vectorized the
 * plain loops) left them waiting: a 4 x 1024 x 256 recurrent step 121 ->
 * 195 GFLOP/s, a block's 128 x 1024 x 128 projection 119 -> 212 (faster
 * than the blocked path's 198). Fewer than four panels left (np) read the
 * first again in place of the missing ones, sums that are never stored, as
 * rows past m repeat row i0: one instance of the loop, since the small
 * models that link this entry have a code budget. */
#define FEW_NP 4
static void few_tile(const rk_sgemm_args *g, const float *panel, int64_t kc, int64_t pc, int64_t i0, int64_t rows,
                     int np, float acc[4][FEW_NP * NR]) {
    int64_t as = g->trans_a ? g->lda : 1, rs = g->trans_a ? 1 : g->lda;
    const float *a0 = g->a + (g->trans_a ? pc * g->lda : pc) + i0 * rs;
    const float *a1 = rows > 1 ? a0 + rs : a0, *a2 = rows > 2 ? a0 + 2 * rs : a0, *a3 = rows > 3 ? a0 + 3 * rs : a0;
    const float *b0p = panel, *b1p = panel + (np > 1 ? kc * NR : 0), *b2p = panel + (np > 2 ? 2 * kc * NR : 0);
    const float *b3p = panel + (np > 3 ? 3 * kc * NR : 0);
    __m512 z = _mm512_setzero_ps();
    if (rows == 1) {
        /* one row (a squeeze-excitation block's 1x1 layers, a classifier
         * at batch 1): its four sums alone, where the loop below spends
         * three quarters of its multiply-adds on copies of the row
         * (1 x 960 x 240 with B in cache: 17.1 -> 9.6 us on a Zen 4) */
        __m512 s0 = z, s1 = z, s2 = z, s3 = z;
        for (int64_t p = 0; p < kc; p++) {
            __m512 v = _mm512_set1_ps(a0[p * as]);
            s0 = _mm512_fmadd_ps(v, _mm512_loadu_ps(b0p + p * NR), s0);
            s1 = _mm512_fmadd_ps(v, _mm512_loadu_ps(b1p + p * NR), s1);
            s2 = _mm512_fmadd_ps(v, _mm512_loadu_ps(b2p + p * NR), s2);
            s3 = _mm512_fmadd_ps(v, _mm512_loadu_ps(b3p + p * NR), s3);
        }
        _mm512_storeu_ps(acc[0], s0);
        _mm512_storeu_ps(acc[0] + NR, s1);
        _mm512_storeu_ps(acc[0] + 2 * NR, s2);
        _mm512_storeu_ps(acc[0] + 3 * NR, s3);
        return;
    }
    __m512 s00 = z, s01 = z, s02 = z, s03 = z, s10 = z, s11 = z, s12 = z, s13 = z;
    __m512 s20 = z, s21 = z, s22 = z, s23 = z, s30 = z, s31 = z, s32 = z, s33 = z;
    for (int64_t p = 0; p < kc; p++) {
        __m512 b0 = _mm512_loadu_ps(b0p + p * NR);
        __m512 b1 = _mm512_loadu_ps(b1p + p * NR), b2 = _mm512_loadu_ps(b2p + p * NR);
        __m512 b3 = _mm512_loadu_ps(b3p + p * NR);
        __asm__("" : "+v"(b0), "+v"(b1), "+v"(b2), "+v"(b3));
#define FEW_ROW(r)                                                 \
        {                                                          \
            __m512 v = _mm512_set1_ps(a##r[p * as]);               \
            s##r##0 = _mm512_fmadd_ps(v, b0, s##r##0);             \
            s##r##1 = _mm512_fmadd_ps(v, b1, s##r##1);             \
            s##r##2 = _mm512_fmadd_ps(v, b2, s##r##2);             \
            s##r##3 = _mm512_fmadd_ps(v, b3, s##r##3);             \
        }
        FEW_ROW(0) FEW_ROW(1) FEW_ROW(2) FEW_ROW(3)
#undef FEW_ROW
    }
#define FEW_OUT(r)                                              \
    _mm512_storeu_ps(acc[r], s##r##0);                          \
    _mm512_storeu_ps(acc[r] + NR, s##r##1);                     \
    _mm512_storeu_ps(acc[r] + 2 * NR, s##r##2);                 \
    _mm512_storeu_ps(acc[r] + 3 * NR, s##r##3);
    FEW_OUT(0) FEW_OUT(1) FEW_OUT(2) FEW_OUT(3)
#undef FEW_OUT
}
#else
#define FEW_NP 1
static void few_tile(const rk_sgemm_args *g, const float *panel, int64_t kc, int64_t pc, int64_t i0, int64_t rows,
                     int np, float acc[4][FEW_NP * NR]) {
    (void)np;
    memset(acc, 0, sizeof(float) * 4 * FEW_NP * NR);
    for (int64_t p = 0; p < kc; p++) {
        const float *bp = panel + p * NR;
        for (int64_t r = 0; r < 4; r++) {
            int64_t i = i0 + (r < rows ? r : 0);
            float av = g->trans_a ? g->a[(pc + p) * g->lda + i] : g->a[i * g->lda + pc + p];
            for (int j = 0; j < NR; j++) acc[r][j] = FEW_MADD(av, bp[j], acc[r][j]);
        }
    }
}
#endif

/* Columns [n0, n1) of the few-rows product; inlined into both entries, so
 * that rk_sgemm_few_rows (n0 = 0, n1 = n: the recurrent kernel's, in models
 * with a code budget) stays the plain loop and does not link the other. */
RK_INLINE void few_rows_run(const rk_sgemm_args *g, int64_t n0, int64_t n1) {
    int64_t m = g->m, n = g->n, k = g->k;
    if (n1 > n) n1 = n;
    if (m <= 0 || n <= 0 || !g->packed_b || n0 < 0 || n0 % NR || n0 >= n1) return;
    if (k <= 0) {   /* no product: the part with column 0 does all of C */
        if (n0 > 0) return;
        scale_c(g);
        if (has_epilogue(g)) epilogue_tile_cheap(g, g->c, g->ldc, 0, 0, g->m, g->n);
        return;
    }
    int64_t kcs = kc_step(k);
    for (int64_t jc = n0 / NC * NC; jc < n1; jc += NC) {
        int64_t nc = min64(NC, n - jc), ncr = roundup(nc, NR);
        int64_t lo = n0 > jc ? n0 - jc : 0, hi = min64(nc, n1 - jc);   /* this call's columns of the block */
        for (int64_t pc = 0; pc < k; pc += kcs) {
            int64_t kc = min64(kcs, k - pc);
            int read_c = pc > 0 || g->beta != 0.0f;
            float beta = pc > 0 ? 1.0f : g->beta;
            for (int64_t jr = lo; jr < hi;) {
                const float *panel = g->packed_b + jc * k + pc * ncr + jr * kc;
                int np = (int)min64(FEW_NP, (hi - jr + NR - 1) / NR);
                int64_t cols = min64(np * NR, hi - jr);
                for (int64_t i0 = 0; i0 < m; i0 += 4) {
                    int64_t rows = min64(4, m - i0);
                    float acc[4][FEW_NP * NR];
#if FEW_NP > 2
                    few_tile(g, panel, kc, pc, i0, rows, np, acc);
#else
                    if (np == 2) few_tile(g, panel, kc, pc, i0, rows, 2, acc);
                    else few_tile(g, panel, kc, pc, i0, rows, 1, acc);
#endif
                    for (int64_t r = 0; r < rows; r++) {
                        float *ci = g->c + (i0 + r) * g->ldc + jc + jr;
                        for (int64_t j = 0; j < cols; j++) {
                            float x = g->alpha * acc[r][j];
                            ci[j] = read_c ? FEW_MADD(beta, ci[j], x) : x;
                        }
                    }
                }
                jr += np * NR;
            }
        }
        if (has_epilogue(g)) epilogue_tile_cheap(g, g->c + jc + lo, g->ldc, 0, jc + lo, m, hi - lo);
    }
}

void rk_sgemm_few_rows(const rk_sgemm_args *g) { few_rows_run(g, 0, g->n); }

void rk_sgemm_few_rows_cols(const rk_sgemm_args *g, int64_t n0, int64_t n1) { few_rows_run(g, n0, n1); }
#undef FEW_MADD

void rk_sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, int trans_a,
              const float *b, int64_t ldb, int trans_b, float beta, float *c, int64_t ldc, void *scratch) {
    rk_sgemm_args g = {.m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, .a = a, .lda = lda, .trans_a = trans_a,
                       .b = b, .ldb = ldb, .trans_b = trans_b, .c = c, .ldc = ldc};
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
}

void rk_sgemm_prepacked(int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, int trans_a,
                        const float *packed_b, float beta, float *c, int64_t ldc, void *scratch) {
    rk_sgemm_args g = {.m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, .a = a, .lda = lda, .trans_a = trans_a,
                       .packed_b = packed_b, .c = c, .ldc = ldc};
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
}
