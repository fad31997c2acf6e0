/* cuda_fp16.h (shim) - CUDA's __half as a storage type, for kernels run on
 * the CPU through cuda_shim.h: a 16-bit IEEE half held as its bits, and the
 * conversions to and from float. Rounding is to nearest even as the
 * hardware's cvt.rn.f16.f32 does, in software, so that results do not
 * depend on the host compiler's _Float16 support. No half arithmetic (rlxc
 * computes in float). A test tool.
 */
#ifndef CUDA_SHIM_FP16_H
#define CUDA_SHIM_FP16_H

#include <stdint.h>
#include <string.h>

namespace cuda_shim {

inline uint16_t f32_to_f16_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u | ((ax >> 13) & 0x3ffu) : 0x7c00u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* 65520 and up round to infinity */
    if (ax < 0x38800000u) {                                       /* below 2^-14: a subnormal half or zero */
        uint32_t e = ax >> 23;
        if (e < 102) return (uint16_t)sign;                       /* below 2^-25 */
        uint32_t m = (ax & 0x7fffffu) | 0x800000u, shift = 126 - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ax - 0x38000000u;   /* exponent rebiased from 127 to 15 */
    uint32_t h = r >> 13, rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

inline float f16_bits_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0x1f) x = sign | 0x7f800000u | (m << 13);
    else if (e) x = sign | ((e + 112) << 23) | (m << 13);
    else if (!m) x = sign;
    else {
        e = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        x = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

}  // namespace cuda_shim

struct __half {
    uint16_t __x;
    __half() = default;
    __half(float f) : __x(cuda_shim::f32_to_f16_bits(f)) {}
    operator float() const { return cuda_shim::f16_bits_to_f32(__x); }
};

inline float __half2float(__half h) { return cuda_shim::f16_bits_to_f32(h.__x); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __float2half(float f) { return __half(f); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __ushort_as_half(unsigned short u) {
    __half h;
    h.__x = u;
    return h;
}

#endif
