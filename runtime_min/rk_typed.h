/* rk_typed.h - helpers shared by the kernel files: typed element access for
 * kernels that work on any dtype, an odometer over dims, window clipping.
 *
 * Kernels that compute in double (or int64) whatever the tensor's storage
 * type read and write one element at a time through these: the width comes
 * from the dtype the plan gave the tensor, and stores round once
 * (LESSONS.md: storage width from the plan, convert at boundaries).
 */
#ifndef RK_TYPED_H
#define RK_TYPED_H

#include <string.h>

#include "rlx_rt.h"

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

/* Element i of a tensor stored as f32, f16, bf16 or i8, as float (exact),
 * and a float stored into an f32, f16 or bf16 tensor (rounded to nearest
 * even): the kernels that compute in f32 over other storage (rk_mixed.c,
 * softmax, LayerNorm) read and write through these. */
static inline float rk_load_f32(int64_t dtype, const void *base, int64_t i) {
    const uint8_t *p = (const uint8_t *)base;
    switch (dtype) {
    case RLX_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return rlx_f16_to_f32(h); }
    case RLX_BF16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return rlx_bf16_to_f32(h); }
    case RLX_I8: return (float)(int8_t)p[i];
    default: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    }
}

static inline void rk_store_f32(int64_t dtype, void *base, int64_t i, float v) {
    uint8_t *p = (uint8_t *)base;
    switch (dtype) {
    case RLX_F16: { uint16_t h = rlx_f32_to_f16(v); memcpy(p + 2 * i, &h, 2); break; }
    case RLX_BF16: { uint16_t h = rlx_f32_to_bf16(v); memcpy(p + 2 * i, &h, 2); break; }
    default: memcpy(p + 4 * i, &v, 4); break;
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

/* Advances the odometer idx over dims[0..rank); 0 when it wraps around. */
static inline int rk_odometer_next(int64_t *idx, const int64_t *dims, int64_t rank) {
    for (int64_t a = rank - 1; a >= 0; a--) {
        if (++idx[a] < dims[a]) return 1;
        idx[a] = 0;
    }
    return 0;
}

/* Output indices o in [*lo, *hi) (of n) whose input coordinate
 * o*stride + offset lies in [0, size): a window clipped to the image. */
static inline void rk_out_range(int64_t n, int64_t stride, int64_t offset, int64_t size, int64_t *lo, int64_t *hi) {
    int64_t a = -offset <= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t b = size - offset <= 0 ? 0 : (size - offset + stride - 1) / stride;
    if (b > n) b = n;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

#if defined(__AVX512F__)
#include <immintrin.h>

/* 16 floats at p, the lanes outside m 0 (and not read): a plain load where
 * m takes every lane, since masked loads cost far more on the AMD cores
 * these run on even with every lane on (a stride-2 depthwise layer 16%). */
static inline __m512 rk_load16(__mmask16 m, const float *p) {
    return m == 0xFFFF ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
}

/* p[0] in lane 0 where on (the other lanes undefined: for a caller that
 * uses lane 0 only), else 0: one float without a masked load. */
static inline __m512 rk_load_first(int on, const float *p) {
    return on ? _mm512_castps128_ps512(_mm_load_ss(p)) : _mm512_setzero_ps();
}
#endif

#endif
