// kernels.metal - hand-written MSL kernels for the shim's own tests
// (test_shim.cc): what the shim must get right beyond rlxc's kernels.
#include <metal_stdlib>
using namespace metal;

// the sum of each threadgroup's 256 values, a tree through threadgroup memory
kernel void tg_sum(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                   uint3 lid [[thread_position_in_threadgroup]], uint3 wg [[threadgroup_position_in_grid]]) {
    threadgroup float red[256];
    red[lid.x] = x[wg.x * 256u + lid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = 128u; s > 0u; s >>= 1u) {
        if (lid.x < s) red[lid.x] = red[lid.x] + red[lid.x + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid.x == 0u) y[wg.x] = red[0];
}

// reads a neighbour's threadgroup value without a barrier: racy
kernel void racy_shift(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                       uint3 lid [[thread_position_in_threadgroup]]) {
    threadgroup float t[64];
    t[lid.x] = x[lid.x];
    y[lid.x] = t[(lid.x + 1u) % 64u];
}

// half storage: float -> half -> float
kernel void half_round(device const float *x [[buffer(0)]], device half *h [[buffer(1)]], device float *y [[buffer(2)]],
                       uint3 lid [[thread_position_in_threadgroup]]) {
    h[lid.x] = half(x[lid.x]);
    y[lid.x] = float(h[lid.x]);
}

// some threads return before the barrier the others wait at: divergent
kernel void divergent(device float *y [[buffer(0)]], uint3 lid [[thread_position_in_threadgroup]]) {
    if (lid.x >= 16u) return;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[lid.x] = 1.0f;
}
