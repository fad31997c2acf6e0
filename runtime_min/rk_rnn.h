/* rk_rnn.h - what the rnn family's compiler side (lib/passes/ext_rnn.c) and
 * its kernels (rk_rnn.c) must agree on: the codes of the recurrent
 * activations, and element loads/stores of any dtype as double or int64.
 *
 * RK_RNN_ACTS(X) lists the activations of ONNX's RNN/GRU/LSTM in code order:
 * X(code name, "ONNX name", how many of alpha/beta it takes, default alpha,
 * default beta). The compiler turns the names into these codes and resolves
 * alpha and beta once, so the kernel only switches on the code.
 */
#ifndef RK_RNN_H
#define RK_RNN_H

#include <stdint.h>
#include <string.h>

#include "rlx_rt.h"

#define RK_RNN_ACTS(X) \
    X(RK_ACT_RELU,            "Relu",            0, 0.0, 0.0) \
    X(RK_ACT_TANH,            "Tanh",            0, 0.0, 0.0) \
    X(RK_ACT_SIGMOID,         "Sigmoid",         0, 0.0, 0.0) \
    X(RK_ACT_AFFINE,          "Affine",          2, 1.0, 0.0) \
    X(RK_ACT_LEAKYRELU,       "LeakyRelu",       1, 0.01, 0.0) \
    X(RK_ACT_THRESHOLDEDRELU, "ThresholdedRelu", 1, 1.0, 0.0) \
    X(RK_ACT_SCALEDTANH,      "ScaledTanh",      2, 1.0, 1.0) \
    X(RK_ACT_HARDSIGMOID,     "HardSigmoid",     2, 0.2, 0.5) \
    X(RK_ACT_ELU,             "Elu",             1, 1.0, 0.0) \
    X(RK_ACT_SOFTSIGN,        "Softsign",        0, 0.0, 0.0) \
    X(RK_ACT_SOFTPLUS,        "Softplus",        0, 0.0, 0.0)

enum {
#define X(code, name, nargs, alpha, beta) code,
    RK_RNN_ACTS(X)
#undef X
    RK_NACTS
};

/* Element i of a tensor of the given dtype, as double (any numeric dtype). */
static inline double rk_load_f64(int64_t dtype, const void *base, int64_t i) {
    const uint8_t *p = (const uint8_t *)base;
    switch (dtype) {
    case RLX_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case RLX_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    case RLX_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return rlx_f16_to_f32(h); }
    case RLX_BF16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return rlx_bf16_to_f32(h); }
    case RLX_I8: return (int8_t)p[i];
    case RLX_U8: case RLX_BOOL: return p[i];
    case RLX_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case RLX_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case RLX_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case RLX_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case RLX_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    case RLX_U64: { uint64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    default: return 0.0;
    }
}

/* Stores v (rounded once) into a float tensor (f32, f64, f16, bf16). */
static inline void rk_store_f64(int64_t dtype, void *base, int64_t i, double v) {
    uint8_t *p = (uint8_t *)base;
    switch (dtype) {
    case RLX_F64: memcpy(p + 8 * i, &v, 8); break;
    case RLX_F16: { uint16_t h = rlx_f32_to_f16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    case RLX_BF16: { uint16_t h = rlx_f32_to_bf16((float)v); memcpy(p + 2 * i, &h, 2); break; }
    default: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
    }
}

/* Element i of an integer tensor as int64 (u64 wraps, as in C). */
static inline int64_t rk_load_i64(int64_t dtype, const void *base, int64_t i) {
    const uint8_t *p = (const uint8_t *)base;
    switch (dtype) {
    case RLX_I8: return (int8_t)p[i];
    case RLX_U8: case RLX_BOOL: return p[i];
    case RLX_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case RLX_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case RLX_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case RLX_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case RLX_I64: case RLX_U64: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    default: return 0;
    }
}

/* Stores the low bytes of v into an integer tensor (wraps, as numpy does). */
static inline void rk_store_i64(int64_t dtype, void *base, int64_t i, int64_t v) {
    uint8_t *p = (uint8_t *)base;
    int size = rlx_dtype_size((int)dtype);
    uint64_t u = (uint64_t)v;
    if (dtype == RLX_BOOL) u = v != 0;
    for (int b = 0; b < size; b++) p[(int64_t)size * i + b] = (uint8_t)(u >> (8 * b));
}

static inline int rk_dtype_is_float(int64_t dtype) {
    return dtype == RLX_F32 || dtype == RLX_F64 || dtype == RLX_F16 || dtype == RLX_BF16;
}

#endif
