/* rlx_scalar.h - scalar definitions of the elementwise ops.
 *
 * One definition per op, used by generated code (fused loops call these) and
 * by rlxc itself when it evaluates an elementwise op at compile time. Each
 * float op has an f32 form (rs_NAME) and an f64 form (rs_NAME_d); f16 and
 * bf16 tensors compute in f32.
 */
#ifndef RLX_SCALAR_H
#define RLX_SCALAR_H

#include <math.h>
#include <stdint.h>

#define RS_FLOAT_OPS(T, S, EXP, LOG, ERF, TANH, SQRT, FABS, LOG1P) \
    static inline T rs_relu##S(T x) { return x > 0 ? x : (x == x ? (T)0 : x); } \
    static inline T rs_sigmoid##S(T x) { \
        if (x >= 0) return (T)1 / ((T)1 + EXP(-x)); \
        T e = EXP(x); return e / ((T)1 + e); } \
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

RS_FLOAT_OPS(float, , expf, logf, erff, tanhf, sqrtf, fabsf, log1pf)
RS_FLOAT_OPS(double, _d, exp, log, erf, tanh, sqrt, fabs, log1p)
#undef RS_FLOAT_OPS

/* Activations that kernels apply in their epilogue (fused Conv/Gemm/MatMul
 * + activation). Each is the same function as the standalone op above, so
 * a fused result equals the unfused one bit for bit. */
enum {
    RS_ACT_NONE, RS_ACT_RELU, RS_ACT_CLIP, RS_ACT_LEAKYRELU, RS_ACT_SIGMOID, RS_ACT_HARDSIGMOID,
    RS_ACT_HARDSWISH, RS_ACT_TANH, RS_ACT_SILU
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
    case RS_ACT_SILU: return x * rs_sigmoid(x);
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
static inline int64_t rs_ipow(int64_t a, int64_t b) {
    int64_t r = 1;
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
    while (b) { if (b & 1) r = (int64_t)((uint64_t)r * (uint64_t)a); a = (int64_t)((uint64_t)a * (uint64_t)a); b >>= 1; }
    return r;
}

#endif
