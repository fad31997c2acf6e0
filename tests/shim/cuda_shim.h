/* cuda_shim.h - a subset of CUDA C++ over the gpu_fiber.h executor, so that
 * a .cu file compiles as C++ (g++ -x c++ -include cuda_shim.h) and its
 * kernels run on the CPU. A test tool.
 *
 * The subset is what rlxc's kernels and ordinary hand-written kernels use:
 *
 *   - __global__ / __device__ / __host__ functions (kernels are plain
 *     functions with default visibility, so a library of them can be
 *     dlopen'd and its kernels found by name), __launch_bounds__, __restrict__;
 *   - threadIdx, blockIdx, blockDim, gridDim, warpSize (32);
 *   - __shared__: a function-local static, shared by the fibers of a block
 *     (blocks run one at a time; the next block sees the last one's values,
 *     where a GPU's are undefined);
 *   - __syncthreads(), __syncwarp(), and the warp functions __shfl_sync,
 *     __shfl_xor_sync, __shfl_up_sync, __shfl_down_sync (with a width),
 *     __ballot_sync, __any_sync, __all_sync, __activemask, for a full mask
 *     only (the lanes of the warp that exist: a warp function under a
 *     partial mask, or one that names a lane beyond the block, is an
 *     error);
 *   - the C math library, and the CUDA names around it (__int_as_float,
 *     __float_as_uint, rsqrtf, min/max, __fmaf_rn, __float2int_rn, ...);
 *   - atomics (fibers of a block never run at once: plain read-modify-write);
 *   - the vector types uint2/int2/float2/uint3/uint4/int4/float4 and make_*;
 *   - __half and __nv_bfloat16 as storage types with their conversions
 *     (cuda_fp16.h and cuda_bf16.h beside this file, rounding to nearest
 *     even in software like the hardware's cvt.rn).
 *
 * The C library's INFINITY, NAN and HUGE_VALF are undefined again, because
 * NVRTC has none: a kernel that uses them compiles here but not there.
 *
 * Each barrier and warp function passes its source line to the executor as
 * its site, so threads of a block waiting at two different __syncthreads
 * (or lanes at two different shuffles) are reported as divergent.
 *
 * Running kernels from C++: cuda_shim::launch(kernel, grid, block, args...)
 * returns 0 or -1 (gpu_fiber::last_error() says why). A stand-in driver
 * runs them through gpu_fiber_launch (gpu_fiber.cc).
 */
#ifndef CUDA_SHIM_H
#define CUDA_SHIM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu_fiber.h"
#include "cuda_fp16.h"
#include "cuda_bf16.h"

#undef INFINITY
#undef NAN
#undef HUGE_VALF

#define RLX_CUDA_SHIM 1

/* ---- qualifiers ---- */
#define __global__ __attribute__((visibility("default")))
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __restrict__ __restrict
#define __shared__ static
#define __constant__ static
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

/* ---- vector types ---- */
struct uint2 { unsigned x, y; };
struct int2 { int x, y; };
struct float2 { float x, y; };
struct uint4 { unsigned x, y, z, w; };
struct int4 { int x, y, z, w; };
struct float4 { float x, y, z, w; };
typedef gpu_fiber::Dim uint3;
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

/* ---- ids ---- */
#define threadIdx (::gpu_fiber::thread_id())
#define blockIdx (::gpu_fiber::block_id())
#define blockDim (::gpu_fiber::block_dim())
#define gridDim (::gpu_fiber::grid_dim())
#define warpSize 32

namespace cuda_shim {

/* the full mask of this thread's warp: its lanes that exist */
inline unsigned full_mask() {
    unsigned n = gpu_fiber::subgroup_lanes();
    return n >= 32 ? 0xffffffffu : (1u << n) - 1u;
}

inline void check_mask(unsigned mask, const char *fn) {
    if (mask != 0xffffffffu && mask != full_mask())
        gpu_fiber::fail("%s with mask 0x%08x: the shim runs full warps only (this warp's lanes: 0x%08x)", fn, mask,
                        full_mask());
}

inline void check_width(int width, const char *fn) {
    if (width < 1 || width > 32 || (width & (width - 1))) gpu_fiber::fail("%s with width %d", fn, width);
}

/* lane `src` of the exchange; a lane beyond the warp's lanes is an error */
template <class T> inline T lane_value(const uint64_t *v, unsigned src, const char *fn) {
    if (src >= gpu_fiber::subgroup_lanes()) gpu_fiber::fail("%s reads lane %u of a warp of %u", fn, src,
                                                            gpu_fiber::subgroup_lanes());
    return gpu_fiber::from_bits<T>(v[src]);
}

template <class T> inline T shfl(int site, unsigned mask, T v, int src, int width = 32) {
    check_mask(mask, "__shfl_sync");
    check_width(width, "__shfl_sync");
    const uint64_t *all = gpu_fiber::exchange(gpu_fiber::to_bits(v), site);
    unsigned lane = gpu_fiber::lane(), base = lane / (unsigned)width * (unsigned)width;
    return lane_value<T>(all, base + (unsigned)src % (unsigned)width, "__shfl_sync");
}

template <class T> inline T shfl_xor(int site, unsigned mask, T v, int m, int width = 32) {
    check_mask(mask, "__shfl_xor_sync");
    check_width(width, "__shfl_xor_sync");
    const uint64_t *all = gpu_fiber::exchange(gpu_fiber::to_bits(v), site);
    unsigned lane = gpu_fiber::lane(), src = lane ^ (unsigned)m;
    /* CUDA: a source lane outside this lane's segment of `width` keeps the value */
    if (src / (unsigned)width != lane / (unsigned)width) return v;
    return lane_value<T>(all, src, "__shfl_xor_sync");
}

template <class T> inline T shfl_down(int site, unsigned mask, T v, unsigned d, int width = 32) {
    check_mask(mask, "__shfl_down_sync");
    check_width(width, "__shfl_down_sync");
    const uint64_t *all = gpu_fiber::exchange(gpu_fiber::to_bits(v), site);
    unsigned lane = gpu_fiber::lane(), seg = lane % (unsigned)width;
    if (seg + d >= (unsigned)width) return v;
    return lane_value<T>(all, lane + d, "__shfl_down_sync");
}

template <class T> inline T shfl_up(int site, unsigned mask, T v, unsigned d, int width = 32) {
    check_mask(mask, "__shfl_up_sync");
    check_width(width, "__shfl_up_sync");
    const uint64_t *all = gpu_fiber::exchange(gpu_fiber::to_bits(v), site);
    unsigned lane = gpu_fiber::lane(), seg = lane % (unsigned)width;
    if (seg < d) return v;
    return lane_value<T>(all, lane - d, "__shfl_up_sync");
}

inline unsigned ballot(int site, unsigned mask, int p) {
    check_mask(mask, "__ballot_sync");
    const uint64_t *all = gpu_fiber::exchange(p != 0, site);
    unsigned r = 0, n = gpu_fiber::subgroup_lanes();
    for (unsigned i = 0; i < n; i++) r |= (unsigned)(all[i] != 0) << i;
    return r;
}

inline void syncwarp(int site, unsigned mask = 0xffffffffu) {
    check_mask(mask, "__syncwarp");
    (void)gpu_fiber::exchange(0, site);
}

template <class F> void call(void *f) { (*(F *)f)(); }

/* kernel<<<grid, block>>>(args...) */
template <class... P, class... A> int launch(void (*kernel)(P...), dim3 grid, dim3 block, A... args) {
    auto body = [=]() { kernel(args...); };
    return gpu_fiber::launch({grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, 32, call<decltype(body)>, &body);
}

}  // namespace cuda_shim

#define __syncthreads() ::gpu_fiber::barrier(__LINE__)
#define __syncwarp(...) ::cuda_shim::syncwarp(__LINE__, ##__VA_ARGS__)
#define __shfl_sync(...) ::cuda_shim::shfl(__LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::cuda_shim::shfl_xor(__LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::cuda_shim::shfl_down(__LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::cuda_shim::shfl_up(__LINE__, __VA_ARGS__)
#define __ballot_sync(mask, p) ::cuda_shim::ballot(__LINE__, mask, p)
#define __any_sync(mask, p) (::cuda_shim::ballot(__LINE__, mask, p) != 0u)
#define __all_sync(mask, p) (::cuda_shim::ballot(__LINE__, mask, p) == ::cuda_shim::full_mask())
#define __activemask() ::cuda_shim::full_mask()

/* ---- memory ---- */
inline void __threadfence() {}
inline void __threadfence_block() {}
template <class T> inline T __ldg(const T *p) { return *p; }

/* fibers of a block never run at once and blocks run in sequence */
#define CUDA_SHIM_ATOMIC(name, expr)                                       \
    template <class T> inline T name(T *p, T v) {                         \
        T old = *p;                                                       \
        *p = (expr);                                                      \
        return old;                                                       \
    }
CUDA_SHIM_ATOMIC(atomicAdd, old + v)
CUDA_SHIM_ATOMIC(atomicSub, old - v)
CUDA_SHIM_ATOMIC(atomicExch, v)
CUDA_SHIM_ATOMIC(atomicMax, old > v ? old : v)
CUDA_SHIM_ATOMIC(atomicMin, old < v ? old : v)
CUDA_SHIM_ATOMIC(atomicAnd, old & v)
CUDA_SHIM_ATOMIC(atomicOr, old | v)
CUDA_SHIM_ATOMIC(atomicXor, old ^ v)
#undef CUDA_SHIM_ATOMIC
template <class T> inline T atomicCAS(T *p, T cmp, T v) {
    T old = *p;
    if (old == cmp) *p = v;
    return old;
}

/* ---- bits and numbers ---- */
inline float __int_as_float(int i) { return gpu_fiber::from_bits<float>((uint32_t)i); }
inline float __uint_as_float(unsigned u) { return gpu_fiber::from_bits<float>(u); }
inline int __float_as_int(float f) { return (int)(uint32_t)gpu_fiber::to_bits(f); }
inline unsigned __float_as_uint(float f) { return (uint32_t)gpu_fiber::to_bits(f); }
inline double __longlong_as_double(long long i) { return gpu_fiber::from_bits<double>((uint64_t)i); }
inline long long __double_as_longlong(double d) { return (long long)gpu_fiber::to_bits(d); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= (x >> i & 1u) << (31 - i);
    return r;
}
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }   /* NaN -> 0 */
/* the hardware's float -> int conversions saturate and give 0 for NaN */
inline int cuda_shim_f2i(float r) {
    return r != r ? 0 : r >= 2147483648.0f ? 2147483647 : r < -2147483648.0f ? (-2147483647 - 1) : (int)r;
}
inline int __float2int_rn(float x) { return cuda_shim_f2i(nearbyintf(x)); }
inline int __float2int_rz(float x) { return cuda_shim_f2i(truncf(x)); }
inline int __float2int_rd(float x) { return cuda_shim_f2i(floorf(x)); }
inline int __float2int_ru(float x) { return cuda_shim_f2i(ceilf(x)); }
inline float __int2float_rn(int i) { return (float)i; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

#endif
