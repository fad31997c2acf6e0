/* rlx_scalar.h - scalar definitions of the elementwise ops.
 *
 * One definition per op, used by generated code (fused loops call these) and
 * by rlxc itself when it evaluates an elementwise op at compile time. Each
 * float op has an f32 form (rs_NAME) and an f64 form (rs_NAME_d); f16 and
 * bf16 tensors compute in f32.
 *
 * The f32 exp, log, tanh, erf and sigmoid are rlx_vmath.h's (rs_fexp, ...),
 * not libm's: branch-free code that compilers vectorize in the fused loops
 * and that the kernels' AVX2 and AVX-512 epilogues compute with the same
 * bits (rk_vmath.h), within 2-3 ulp of the correctly rounded result. The
 * f64 forms are libm's.
 */
#ifndef RLX_SCALAR_H
#define RLX_SCALAR_H

#include <math.h>
#include <stdint.h>

/* ---- rlx_vmath.h's scalar instance: rs_fexp, rs_flog, rs_ftanh, rs_ferf,
 * rs_fsigmoid, rs_fsilu, rs_fgelu, rs_fhardsigmoid, rs_fhardswish,
 * rs_fleakyrelu ---- */
typedef union {
    float f;
    uint32_t u;
} rs_f32_bits;
static inline uint32_t rs_bits_of(float x) { rs_f32_bits b; b.f = x; return b.u; }
static inline float rs_float_of(uint32_t u) { rs_f32_bits b; b.u = u; return b.f; }
#define RV float
#define RVU uint32_t
#define RVM int
#define RV_FN(name) rs_f##name
#define RV_C(c) (c)
#define RVU_C(c) ((uint32_t)(c))
#define RV_ADD(a, b) ((a) + (b))
#define RV_SUB(a, b) ((a) - (b))
#define RV_MUL(a, b) ((a) * (b))
#define RV_DIV(a, b) ((a) / (b))
#define RV_LT(a, b) ((a) < (b))
#define RV_GT(a, b) ((a) > (b))
#define RV_GE(a, b) ((a) >= (b))
#define RV_EQ(a, b) ((a) == (b))
#define RV_SEL(m, a, b) ((m) ? (a) : (b))
#define RV_BITS(a) rs_bits_of(a)
#define RV_FROM(u) rs_float_of(u)
#define RVU_ADD(a, b) ((a) + (b))
#define RVU_SUB(a, b) ((a) - (b))
#define RVU_AND(a, b) ((a) & (b))
#define RVU_OR(a, b) ((a) | (b))
#define RVU_SHL(a, n) ((a) << (n))
#define RVU_SHR(a, n) ((a) >> (n))
#define RVU_TOF(u) ((float)(u))
#define RV_ANY(m) 1
#define RV_ALL(m) 0
#include "rlx_vmath.h"

static inline double rs_dsigmoid(double x) {
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

#define RS_FLOAT_OPS(T, S, EXP, LOG, ERF, TANH, SIGMOID, SQRT, FABS, LOG1P) \
    static inline T rs_relu##S(T x) { return x > 0 ? x : (x == x ? (T)0 : x); } \
    static inline T rs_sigmoid##S(T x) { return SIGMOID(x); } \
    static inline T rs_leakyrelu##S(T x, T alpha) { return x < 0 ? alpha * x : x; } \
    static inline T rs_elu##S(T x, T alpha) { return x < 0 ? alpha * (EXP(x) - (T)1) : x; } \
    static inline T rs_hardsigmoid##S(T x, T alpha, T beta) { \
        T y = alpha * x + beta; return y < 0 ? (T)0 : (y > 1 ? (T)1 : y); } \
    static inline T rs_hardswish##S(T x) { return x * rs_hardsigmoid##S(x, (T)1 / (T)6, (T)0.5); } \
    static inline T rs_softplus##S(T x) { return x > 0 ? x + LOG1P(EXP(-x)) : LOG1P(EXP(x)); } \
    static inline T rs_reciprocal##S(T x) { return (T)1 / x; } \
    static inline T rs_max##S(T a, T b) { return (a != a || a > b) ? a : b; } \
    static inline T rs_min##S(T a, T b) { return (a != a || a < b) ? a : b; } \
    static inline T rs_clip##S(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); } \
    static inline T rs_neg##S(T x) { return -x; } \
    static inline T rs_abs##S(T x) { return FABS(x); } \
    static inline T rs_sqrt##S(T x) { return SQRT(x); } \
    static inline T rs_exp##S(T x) { return EXP(x); } \
    static inline T rs_log##S(T x) { return LOG(x); } \
    static inline T rs_erf##S(T x) { return ERF(x); } \
    static inline T rs_tanh##S(T x) { return TANH(x); }

RS_FLOAT_OPS(float, , rs_fexp, rs_flog, rs_ferf, rs_ftanh, rs_fsigmoid, sqrtf, fabsf, log1pf)
RS_FLOAT_OPS(double, _d, exp, log, erf, tanh, rs_dsigmoid, sqrt, fabs, log1p)
#undef RS_FLOAT_OPS

/* More float ops; F is the libm suffix of T ("f" for float, none for
 * double), so rs_sin is sinf and rs_sin_d is sin. rs_fmod is Mod with
 * fmod=1 (C's fmod), rs_mod Mod with fmod=0 (numpy.mod: the divisor's
 * sign, which ONNX only defines for integers). Round is written out
 * rather than left to rint's rounding mode, so it is half-to-even whatever
 * mode the caller runs in; the sign of a zero result follows X, as numpy. */
#define RS_FLOAT_MATH(T, S, F) \
    static inline T rs_sin##S(T x) { return sin##F(x); } \
    static inline T rs_cos##S(T x) { return cos##F(x); } \
    static inline T rs_tan##S(T x) { return tan##F(x); } \
    static inline T rs_asin##S(T x) { return asin##F(x); } \
    static inline T rs_acos##S(T x) { return acos##F(x); } \
    static inline T rs_atan##S(T x) { return atan##F(x); } \
    static inline T rs_sinh##S(T x) { return sinh##F(x); } \
    static inline T rs_cosh##S(T x) { return cosh##F(x); } \
    static inline T rs_asinh##S(T x) { return asinh##F(x); } \
    static inline T rs_acosh##S(T x) { return acosh##F(x); } \
    static inline T rs_atanh##S(T x) { return atanh##F(x); } \
    static inline T rs_floor##S(T x) { return floor##F(x); } \
    static inline T rs_ceil##S(T x) { return ceil##F(x); } \
    static inline T rs_round##S(T x) { \
        T r = floor##F(x), d = x - r; \
        if (d > (T)0.5 || (d == (T)0.5 && fmod##F(r, (T)2) != 0)) r += 1; \
        return copysign##F(r, x); } \
    static inline T rs_sign##S(T x) { return x > 0 ? (T)1 : (x < 0 ? (T)-1 : (x == 0 ? (T)0 : x)); } \
    static inline T rs_fmod##S(T a, T b) { return fmod##F(a, b); } \
    static inline T rs_mod##S(T a, T b) { \
        T r = fmod##F(a, b); return (r != 0 && (r < 0) != (b < 0)) ? r + b : r; } \
    static inline int rs_isnan##S(T x) { return x != x; } \
    static inline int rs_isinf##S(T x, int neg, int pos) { \
        return isinf(x) ? (x < 0 ? neg : pos) : 0; } \
    static inline T rs_mean##S(T sum, T n) { return sum / n; } \
    static inline T rs_prelu##S(T x, T slope) { return x < 0 ? slope * x : x; } \
    static inline T rs_selu##S(T x, T alpha, T gamma) { \
        return x > 0 ? gamma * x : gamma * (alpha * exp##F(x) - alpha); } \
    static inline T rs_celu##S(T x, T alpha) { return x > 0 ? x : alpha * (exp##F(x / alpha) - (T)1); } \
    static inline T rs_thresholdedrelu##S(T x, T alpha) { return x > alpha ? x : (x == x ? (T)0 : x); } \
    static inline T rs_shrink##S(T x, T bias, T lambd) { \
        return x < -lambd ? x + bias : (x > lambd ? x - bias : (T)0); } \
    static inline T rs_mish##S(T x) { return x * tanh##F(rs_softplus##S(x)); } \
    static inline T rs_softsign##S(T x) { return x / ((T)1 + fabs##F(x)); }

RS_FLOAT_MATH(float, , f)
RS_FLOAT_MATH(double, _d, )
#undef RS_FLOAT_MATH

/* Activations that kernels apply in their epilogue (fused Conv/Gemm/MatMul
 * + activation). Each is the same function as the standalone op above (or,
 * for SiLU and GELU, the ops of the pattern fuse.c recognizes, in their
 * order), so a fused result equals the unfused one bit for bit. The GPU
 * targets' rs_act (lib/gpu/scalar.kl) knows the same codes. */
enum {
    RS_ACT_NONE, RS_ACT_RELU, RS_ACT_CLIP, RS_ACT_LEAKYRELU, RS_ACT_SIGMOID, RS_ACT_HARDSIGMOID,
    RS_ACT_HARDSWISH, RS_ACT_TANH, RS_ACT_SILU, RS_ACT_GELU
};
static inline float rs_act(float x, int kind, float a, float b) {
    switch (kind) {
    case RS_ACT_RELU: return rs_relu(x);
    case RS_ACT_CLIP: return rs_clip(x, a, b);
    case RS_ACT_LEAKYRELU: return rs_leakyrelu(x, a);
    case RS_ACT_SIGMOID: return rs_sigmoid(x);
    case RS_ACT_HARDSIGMOID: return rs_hardsigmoid(x, a, b);
    case RS_ACT_HARDSWISH: return rs_hardswish(x);
    case RS_ACT_TANH: return rs_tanh(x);
    case RS_ACT_SILU: return rs_fsilu(x);
    case RS_ACT_GELU: return rs_fgelu(x);
    default: return x;
    }
}

/* Float to integer conversion saturates and maps NaN to 0 (ONNX/torch): an
 * out-of-range conversion is undefined behaviour in C. lo and hi are the
 * target's limits; hi_excl is the first double past hi (2^63 for i64). */
static inline int64_t rs_f2i(double x, double lo, double hi_excl, int64_t ilo, int64_t ihi) {
    if (x != x) return 0;
    if (x <= lo) return ilo;
    if (x >= hi_excl) return ihi;
    return (int64_t)x;
}
static inline uint64_t rs_f2u64(double x) {
    if (x != x || x <= 0) return 0;
    if (x >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)x;
}

/* Integer ops whose C form is undefined for some inputs. */
static inline int64_t rs_idiv(int64_t a, int64_t b) {
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a);
    return a / b;
}
/* Mod, fmod=0: the result takes the divisor's sign (Python's %); fmod=1:
 * the dividend's (C's %). x mod 0 is 0, and so is INT64_MIN mod -1 (C's %
 * is undefined for both). */
static inline int64_t rs_imod(int64_t a, int64_t b) {
    if (b == 0 || b == -1) return 0;
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
static inline int64_t rs_ifmod(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
static inline uint64_t rs_umod(uint64_t a, uint64_t b) { return b ? a % b : 0; }
static inline int64_t rs_isign(int64_t x) { return (x > 0) - (x < 0); }
/* BitShift on unsigned integers held in 64 bits (the store truncates to the
 * element width); C leaves shifts by 64 or more undefined: they give 0. */
static inline uint64_t rs_shl(uint64_t a, uint64_t b) { return b >= 64 ? 0 : a << b; }
static inline uint64_t rs_shr(uint64_t a, uint64_t b) { return b >= 64 ? 0 : a >> b; }
static inline int64_t rs_ipow(int64_t a, int64_t b) {
    int64_t r = 1;
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    while (b) { if (b & 1) r = (int64_t)((uint64_t)r * (uint64_t)a); a = (int64_t)((uint64_t)a * (uint64_t)a); b >>= 1; }
    return r;
}

#endif
