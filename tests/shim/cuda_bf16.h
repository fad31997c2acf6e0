/* cuda_bf16.h (shim) - CUDA's __nv_bfloat16 as a storage type, for kernels
 * run on the CPU through cuda_shim.h: the upper 16 bits of a float, rounded
 * to nearest even (NaN stays NaN), as cvt.rn.bf16.f32 does. A test tool.
 */
#ifndef CUDA_SHIM_BF16_H
#define CUDA_SHIM_BF16_H

#include <stdint.h>
#include <string.h>

namespace cuda_shim {

inline uint16_t f32_to_bf16_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bf16_bits_to_f32(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

}  // namespace cuda_shim

struct __nv_bfloat16 {
    uint16_t __x;
    __nv_bfloat16() = default;
    __nv_bfloat16(float f) : __x(cuda_shim::f32_to_bf16_bits(f)) {}
    operator float() const { return cuda_shim::bf16_bits_to_f32(__x); }
};

inline float __bfloat162float(__nv_bfloat16 b) { return cuda_shim::bf16_bits_to_f32(b.__x); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }

#endif
