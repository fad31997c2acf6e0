/* rk_vmath.h - rlx_vmath.h's transcendentals and activations on vectors.
 *
 * The AVX-512 instance (rk_v16_exp, rk_v16_sigmoid, ..., 16 floats) where
 * the file is compiled for AVX-512F, and the AVX2 instance (rk_v8_*, 8
 * floats) where it is compiled for AVX2. Both perform rlx_vmath.h's
 * operations in its order with exactly rounded vector instructions (no
 * FMA; AVX-512's exp scales by vscalefps, which rounds p 2^n once as the
 * integer form does), so every lane equals the scalar rs_f* of rlx_scalar.h
 * bit for bit: a kernel may apply an activation in registers, in a
 * compiler-vectorized loop or one element at a time and gets the same result
 * (tests/unit/test_vmath.c compares them on every instance the CPU runs).
 *
 * rk_v16_act / rk_v8_act apply an RS_ACT_* activation to a vector: the
 * kernels' vector epilogues for every activation, with rs_act's semantics;
 * rk_act_run applies one to a run of floats in place with the widest of
 * them.
 */
#ifndef RK_VMATH_H
#define RK_VMATH_H

#include <math.h>
#include <stdint.h>

#include "rlx_scalar.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#if defined(__GNUC__)
#define RV_ATTR static inline __attribute__((always_inline))
#else
#define RV_ATTR static inline
#endif

#if defined(__AVX512F__)
#define RV __m512
#define RVU __m512i
#define RVM __mmask16
#define RV_FN(name) rk_v16_##name
#define RV_C(c) _mm512_set1_ps(c)
#define RVU_C(c) _mm512_set1_epi32((int)(c))
#define RV_ADD(a, b) _mm512_add_ps(a, b)
#define RV_SUB(a, b) _mm512_sub_ps(a, b)
#define RV_MUL(a, b) _mm512_mul_ps(a, b)
#define RV_DIV(a, b) _mm512_div_ps(a, b)
#define RV_LT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ)
#define RV_GT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define RV_GE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ)
#define RV_EQ(a, b) _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)
#define RV_SEL(m, a, b) _mm512_mask_blend_ps(m, b, a)
#define RV_BITS(a) _mm512_castps_si512(a)
#define RV_FROM(u) _mm512_castsi512_ps(u)
#define RVU_ADD(a, b) _mm512_add_epi32(a, b)
#define RVU_SUB(a, b) _mm512_sub_epi32(a, b)
#define RVU_AND(a, b) _mm512_and_si512(a, b)
#define RVU_OR(a, b) _mm512_or_si512(a, b)
#define RVU_SHL(a, n) _mm512_slli_epi32(a, n)
#define RVU_SHR(a, n) _mm512_srli_epi32(a, n)
#define RVU_TOF(u) _mm512_cvtepi32_ps(u)
#define RV_ANY(m) ((m) != 0)
#define RV_ALL(m) ((m) == (__mmask16)0xffff)
#define RV_MAX(c, x) _mm512_max_ps(c, x)
#define RV_MIN(c, x) _mm512_min_ps(c, x)
#define RV_SCALE(p, nf) _mm512_scalef_ps(p, nf)
#include "rlx_vmath.h"

/* lanes [0, n) of a 16-lane mask (none for n <= 0, all for n >= 16) */
RV_ATTR __mmask16 rk_v16_lanes(int64_t n) {
    return (__mmask16)(n >= 16 ? 0xffffu : n <= 0 ? 0u : (1u << n) - 1);
}

/* lanes [lo, hi) of a 16-lane mask, the range clipped to the vector */
RV_ATTR __mmask16 rk_v16_range(int64_t lo, int64_t hi) {
    if (lo < 0) lo = 0;
    if (hi > 16) hi = 16;
    return hi > lo ? (__mmask16)((0xffffu >> (16 - (hi - lo))) << lo) : (__mmask16)0;
}

/* p[0], p[2], ..., p[2 (m - 1)] in lanes [0, m) (m <= 16), 0 in the rest:
 * two masked loads of the 2m - 1 floats (none past the last) and an
 * even-lane permute. Stride-2 rows: average pools, grouped planes. */
RV_ATTR __m512 rk_v16_load_even(const float *p, int64_t m) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    int64_t need = 2 * m - 1;
    return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(rk_v16_lanes(need), p), even,
                                  _mm512_maskz_loadu_ps(rk_v16_lanes(need - 16), p + 16));
}

/* rs_act on 16 lanes: relu keeps NaN (x > 0 or unordered), clip's ordered
 * compares pass NaN through, as rs_relu and rs_clip */
RV_ATTR __m512 rk_v16_act(__m512 x, int kind, float a, float b) {
    switch (kind) {
    case RS_ACT_RELU: return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
    case RS_ACT_CLIP:
        x = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, _mm512_set1_ps(b), _CMP_GT_OQ), _mm512_set1_ps(b));
        return _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, _mm512_set1_ps(a), _CMP_LT_OQ), _mm512_set1_ps(a));
    case RS_ACT_LEAKYRELU: return rk_v16_leakyrelu(x, a);
    case RS_ACT_SIGMOID: return rk_v16_sigmoid(x);
    case RS_ACT_HARDSIGMOID: return rk_v16_hardsigmoid(x, a, b);
    case RS_ACT_HARDSWISH: return rk_v16_hardswish(x);
    case RS_ACT_TANH: return rk_v16_tanh(x);
    case RS_ACT_SILU: return rk_v16_silu(x);
    case RS_ACT_GELU: return rk_v16_gelu(x);
    default: return x;
    }
}

/* The same instance on four vectors at once (rk_v16x4_*, 64 floats): each
 * operation of rlx_vmath.h done on the four in turn, so the four chains
 * of dependent operations (a SiLU is about 30 long) are interleaved in
 * the code. One vector at a time, the scheduler's window holds too few
 * independent operations to keep both vector ports busy: SiLU 0.35 ns a
 * float in L1 one at a time, 0.30 four at a time. Same operations per
 * lane, so the same bits. */
typedef struct { __m512 v[4]; } rk_v16x4;
typedef struct { __m512i v[4]; } rk_v16x4u;
typedef struct { __mmask16 v[4]; } rk_v16x4m;
RV_ATTR rk_v16x4 rk_x4_c(float c) {
    __m512 v = _mm512_set1_ps(c);
    rk_v16x4 r_ = {{v, v, v, v}};
    return r_;
}
RV_ATTR rk_v16x4u rk_x4u_c(uint32_t c) {
    __m512i v = _mm512_set1_epi32((int)c);
    rk_v16x4u r_ = {{v, v, v, v}};
    return r_;
}
/* name(a, b) = intr(a.v[i], b.v[i]) for the four i; b an int for the shifts */
#define X4_BIN_(name, T, TA, TB, intr, bi) \
    RV_ATTR T name(TA a, TB b) { \
        T r_; \
        r_.v[0] = intr(a.v[0], bi(0)); \
        r_.v[1] = intr(a.v[1], bi(1)); \
        r_.v[2] = intr(a.v[2], bi(2)); \
        r_.v[3] = intr(a.v[3], bi(3)); \
        return r_; \
    }
#define X4_B_(i) b.v[i]
#define X4_N_(i) b
X4_BIN_(rk_x4_add, rk_v16x4, rk_v16x4, rk_v16x4, _mm512_add_ps, X4_B_)
X4_BIN_(rk_x4_sub, rk_v16x4, rk_v16x4, rk_v16x4, _mm512_sub_ps, X4_B_)
X4_BIN_(rk_x4_mul, rk_v16x4, rk_v16x4, rk_v16x4, _mm512_mul_ps, X4_B_)
X4_BIN_(rk_x4_div, rk_v16x4, rk_v16x4, rk_v16x4, _mm512_div_ps, X4_B_)
X4_BIN_(rk_x4_max, rk_v16x4, rk_v16x4, rk_v16x4, _mm512_max_ps, X4_B_)
X4_BIN_(rk_x4_min, rk_v16x4, rk_v16x4, rk_v16x4, _mm512_min_ps, X4_B_)
X4_BIN_(rk_x4_scale, rk_v16x4, rk_v16x4, rk_v16x4, _mm512_scalef_ps, X4_B_)
X4_BIN_(rk_x4u_add, rk_v16x4u, rk_v16x4u, rk_v16x4u, _mm512_add_epi32, X4_B_)
X4_BIN_(rk_x4u_sub, rk_v16x4u, rk_v16x4u, rk_v16x4u, _mm512_sub_epi32, X4_B_)
X4_BIN_(rk_x4u_and, rk_v16x4u, rk_v16x4u, rk_v16x4u, _mm512_and_si512, X4_B_)
X4_BIN_(rk_x4u_or, rk_v16x4u, rk_v16x4u, rk_v16x4u, _mm512_or_si512, X4_B_)
X4_BIN_(rk_x4u_shl, rk_v16x4u, rk_v16x4u, unsigned, _mm512_slli_epi32, X4_N_)
X4_BIN_(rk_x4u_shr, rk_v16x4u, rk_v16x4u, unsigned, _mm512_srli_epi32, X4_N_)
#define X4_CMP_(name, pred) \
    RV_ATTR rk_v16x4m name(rk_v16x4 a, rk_v16x4 b) { \
        rk_v16x4m r_; \
        for (int i = 0; i < 4; i++) r_.v[i] = _mm512_cmp_ps_mask(a.v[i], b.v[i], pred); \
        return r_; \
    }
X4_CMP_(rk_x4_lt, _CMP_LT_OQ)
X4_CMP_(rk_x4_gt, _CMP_GT_OQ)
X4_CMP_(rk_x4_ge, _CMP_GE_OQ)
X4_CMP_(rk_x4_eq, _CMP_EQ_OQ)
RV_ATTR rk_v16x4 rk_x4_sel(rk_v16x4m m, rk_v16x4 a, rk_v16x4 b) {
    rk_v16x4 r_;
    for (int i = 0; i < 4; i++) r_.v[i] = _mm512_mask_blend_ps(m.v[i], b.v[i], a.v[i]);
    return r_;
}
/* name(a) = intr(a.v[i]) for the four i */
#define X4_UN_(name, T, TA, intr) \
    RV_ATTR T name(TA a) { \
        T r_; \
        for (int i = 0; i < 4; i++) r_.v[i] = intr(a.v[i]); \
        return r_; \
    }
X4_UN_(rk_x4_bits, rk_v16x4u, rk_v16x4, _mm512_castps_si512)
X4_UN_(rk_x4_from, rk_v16x4, rk_v16x4u, _mm512_castsi512_ps)
X4_UN_(rk_x4u_tof, rk_v16x4, rk_v16x4u, _mm512_cvtepi32_ps)
RV_ATTR int rk_x4_any(rk_v16x4m m) { return (m.v[0] | m.v[1] | m.v[2] | m.v[3]) != 0; }
RV_ATTR int rk_x4_all(rk_v16x4m m) { return (m.v[0] & m.v[1] & m.v[2] & m.v[3]) == 0xffff; }
#undef X4_BIN_
#undef X4_UN_
#undef X4_B_
#undef X4_N_
#undef X4_CMP_
#define RV rk_v16x4
#define RVU rk_v16x4u
#define RVM rk_v16x4m
#define RV_FN(name) rk_v16x4_##name
#define RV_C(c) rk_x4_c(c)
#define RVU_C(c) rk_x4u_c(c)
#define RV_ADD(a, b) rk_x4_add(a, b)
#define RV_SUB(a, b) rk_x4_sub(a, b)
#define RV_MUL(a, b) rk_x4_mul(a, b)
#define RV_DIV(a, b) rk_x4_div(a, b)
#define RV_LT(a, b) rk_x4_lt(a, b)
#define RV_GT(a, b) rk_x4_gt(a, b)
#define RV_GE(a, b) rk_x4_ge(a, b)
#define RV_EQ(a, b) rk_x4_eq(a, b)
#define RV_SEL(m, a, b) rk_x4_sel(m, a, b)
#define RV_BITS(a) rk_x4_bits(a)
#define RV_FROM(u) rk_x4_from(u)
#define RVU_ADD(a, b) rk_x4u_add(a, b)
#define RVU_SUB(a, b) rk_x4u_sub(a, b)
#define RVU_AND(a, b) rk_x4u_and(a, b)
#define RVU_OR(a, b) rk_x4u_or(a, b)
#define RVU_SHL(a, n) rk_x4u_shl(a, n)
#define RVU_SHR(a, n) rk_x4u_shr(a, n)
#define RVU_TOF(u) rk_x4u_tof(u)
#define RV_ANY(m) rk_x4_any(m)
#define RV_ALL(m) rk_x4_all(m)
#define RV_MAX(c, x) rk_x4_max(c, x)
#define RV_MIN(c, x) rk_x4_min(c, x)
#define RV_SCALE(p, nf) rk_x4_scale(p, nf)
#include "rlx_vmath.h"

/* rk_v16_act of the activations with exp or erf in them, on four vectors
 * (any other kind: the vectors unchanged) */
RV_ATTR rk_v16x4 rk_v16x4_act(rk_v16x4 x, int kind) {
    switch (kind) {
    case RS_ACT_SIGMOID: return rk_v16x4_sigmoid(x);
    case RS_ACT_TANH: return rk_v16x4_tanh(x);
    case RS_ACT_SILU: return rk_v16x4_silu(x);
    case RS_ACT_GELU: return rk_v16x4_gelu(x);
    default: return x;
    }
}
#endif

#if defined(__AVX2__)
#define RV __m256
#define RVU __m256i
#define RVM __m256
#define RV_FN(name) rk_v8_##name
#define RV_C(c) _mm256_set1_ps(c)
#define RVU_C(c) _mm256_set1_epi32((int)(c))
#define RV_ADD(a, b) _mm256_add_ps(a, b)
#define RV_SUB(a, b) _mm256_sub_ps(a, b)
#define RV_MUL(a, b) _mm256_mul_ps(a, b)
#define RV_DIV(a, b) _mm256_div_ps(a, b)
#define RV_LT(a, b) _mm256_cmp_ps(a, b, _CMP_LT_OQ)
#define RV_GT(a, b) _mm256_cmp_ps(a, b, _CMP_GT_OQ)
#define RV_GE(a, b) _mm256_cmp_ps(a, b, _CMP_GE_OQ)
#define RV_EQ(a, b) _mm256_cmp_ps(a, b, _CMP_EQ_OQ)
#define RV_SEL(m, a, b) _mm256_blendv_ps(b, a, m)
#define RV_BITS(a) _mm256_castps_si256(a)
#define RV_FROM(u) _mm256_castsi256_ps(u)
#define RVU_ADD(a, b) _mm256_add_epi32(a, b)
#define RVU_SUB(a, b) _mm256_sub_epi32(a, b)
#define RVU_AND(a, b) _mm256_and_si256(a, b)
#define RVU_OR(a, b) _mm256_or_si256(a, b)
#define RVU_SHL(a, n) _mm256_slli_epi32(a, n)
#define RVU_SHR(a, n) _mm256_srli_epi32(a, n)
#define RVU_TOF(u) _mm256_cvtepi32_ps(u)
#define RV_ANY(m) (_mm256_movemask_ps(m) != 0)
#define RV_ALL(m) (_mm256_movemask_ps(m) == 0xff)
#define RV_MAX(c, x) _mm256_max_ps(c, x)
#define RV_MIN(c, x) _mm256_min_ps(c, x)
#include "rlx_vmath.h"

/* lanes [0, n) of an 8-lane mask for maskload/maskstore (n in 0..8) */
RV_ATTR __m256i rk_v8_lanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

RV_ATTR __m256 rk_v8_act(__m256 x, int kind, float a, float b) {
    switch (kind) {
    case RS_ACT_RELU: return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_NLE_UQ), x);
    case RS_ACT_CLIP:
        x = _mm256_blendv_ps(x, _mm256_set1_ps(b), _mm256_cmp_ps(x, _mm256_set1_ps(b), _CMP_GT_OQ));
        return _mm256_blendv_ps(x, _mm256_set1_ps(a), _mm256_cmp_ps(x, _mm256_set1_ps(a), _CMP_LT_OQ));
    case RS_ACT_LEAKYRELU: return rk_v8_leakyrelu(x, a);
    case RS_ACT_SIGMOID: return rk_v8_sigmoid(x);
    case RS_ACT_HARDSIGMOID: return rk_v8_hardsigmoid(x, a, b);
    case RS_ACT_HARDSWISH: return rk_v8_hardswish(x);
    case RS_ACT_TANH: return rk_v8_tanh(x);
    case RS_ACT_SILU: return rk_v8_silu(x);
    case RS_ACT_GELU: return rk_v8_gelu(x);
    default: return x;
    }
}
#endif

/* whether an RS_ACT_* activation has exp or erf in it (rk_v16x4_act's) */
RV_ATTR int rk_act_exp(int kind) {
    return kind == RS_ACT_SIGMOID || kind == RS_ACT_TANH || kind == RS_ACT_SILU || kind == RS_ACT_GELU;
}

/* y[0, n) = rs_act(y[j]) in place, in the widest vectors the file is
 * compiled for (the last part masked, one element at a time in portable
 * builds): the same bits everywhere. The switch
 * is outside the loops, each loop a constant activation. */
RV_ATTR void rk_act_run_k(float *y, int64_t n, int act, float a, float b) {
    int64_t j = 0;
#if defined(__AVX512F__)
    if (rk_act_exp(act))
        for (; j + 64 <= n; j += 64) {
            rk_v16x4 x;
            for (int i = 0; i < 4; i++) x.v[i] = _mm512_loadu_ps(y + j + 16 * i);
            x = rk_v16x4_act(x, act);
            for (int i = 0; i < 4; i++) _mm512_storeu_ps(y + j + 16 * i, x.v[i]);
        }
    for (; j + 16 <= n; j += 16) _mm512_storeu_ps(y + j, rk_v16_act(_mm512_loadu_ps(y + j), act, a, b));
    if (j < n) {
        __mmask16 m = (__mmask16)((1u << (n - j)) - 1);
        _mm512_mask_storeu_ps(y + j, m, rk_v16_act(_mm512_maskz_loadu_ps(m, y + j), act, a, b));
        return;
    }
#elif defined(__AVX2__)
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(y + j, rk_v8_act(_mm256_loadu_ps(y + j), act, a, b));
    if (j < n) {   /* masked: a depthwise layer's 7-wide rows are all tail */
        __m256i m = rk_v8_lanes(n - j);
        _mm256_maskstore_ps(y + j, m, rk_v8_act(_mm256_maskload_ps(y + j, m), act, a, b));
        return;
    }
#endif
    for (; j < n; j++) y[j] = rs_act(y[j], act, a, b);
}

static inline void rk_act_run(float *y, int64_t n, int act, float a, float b) {
    switch (act) {
    case RS_ACT_NONE: break;
    case RS_ACT_RELU: rk_act_run_k(y, n, RS_ACT_RELU, a, b); break;
    case RS_ACT_CLIP: rk_act_run_k(y, n, RS_ACT_CLIP, a, b); break;
    case RS_ACT_LEAKYRELU: rk_act_run_k(y, n, RS_ACT_LEAKYRELU, a, b); break;
    case RS_ACT_SIGMOID: rk_act_run_k(y, n, RS_ACT_SIGMOID, a, b); break;
    case RS_ACT_HARDSIGMOID: rk_act_run_k(y, n, RS_ACT_HARDSIGMOID, a, b); break;
    case RS_ACT_HARDSWISH: rk_act_run_k(y, n, RS_ACT_HARDSWISH, a, b); break;
    case RS_ACT_TANH: rk_act_run_k(y, n, RS_ACT_TANH, a, b); break;
    case RS_ACT_SILU: rk_act_run_k(y, n, RS_ACT_SILU, a, b); break;
    case RS_ACT_GELU: rk_act_run_k(y, n, RS_ACT_GELU, a, b); break;
    default: rk_act_run_k(y, n, act, a, b); break;
    }
}

#undef RV_ATTR
#endif
