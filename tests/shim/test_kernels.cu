// test_kernels.cu - CUDA kernels that test the CPU shim (test_shim.cc): the
// same text compiles with nvcc/NVRTC (tests/shim/run.sh checks that where
// CUDA is installed) and, as C++, against cuda_shim.h. Some are correct,
// some are deliberately wrong in the ways the shim must expose: a missing
// barrier, a read of another block's output, a barrier or shuffle that not
// every thread reaches.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define TILE 16

// C (M x N) = A (M x K) * B (K x N), row-major; block 16 x 16
extern "C" __global__ void mm_tiled(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
                                    int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// the same without the second barrier: a thread may overwrite the tiles
// while another still reads them
extern "C" __global__ void mm_no_second_barrier(const float *__restrict__ A, const float *__restrict__ B,
                                                float *__restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// ... and without the first: a thread may read tiles others have not written yet
extern "C" __global__ void mm_no_first_barrier(const float *__restrict__ A, const float *__restrict__ B,
                                               float *__restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        for (int kk = 0; kk < TILE; kk++) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// one block per row of n: a tree sum in shared memory (blockDim.x a power of two)
extern "C" __global__ void row_sum_tree(const float *x, float *y, int n) {
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    float v = 0.0f;
    for (int i = t; i < n; i += blockDim.x) v += x[blockIdx.x * n + i];
    s[t] = v;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
        if (t < h) s[t] += s[t + h];
        __syncthreads();
    }
    if (t == 0) y[blockIdx.x] = s[0];
}

// the same with the barrier inside the tree missing
extern "C" __global__ void row_sum_tree_racy(const float *x, float *y, int n) {
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    float v = 0.0f;
    for (int i = t; i < n; i += blockDim.x) v += x[blockIdx.x * n + i];
    s[t] = v;
    __syncthreads();
    for (unsigned h = blockDim.x / 2; h > 0; h >>= 1)
        if (t < h) s[t] += s[t + h];
    if (t == 0) y[blockIdx.x] = s[0];
}

// warp functions: per thread, out[8 * i + k] for k =
//   0 xor-butterfly sum, 1 shfl_down sum (lane 0 has the total), 2 lane 0's
//   value broadcast, 3 inclusive prefix sum (shfl_up), 4 ballot of v > 0,
//   5 any(v > 2), 6 all(v > -100), 7 xor sum within segments of 8
extern "C" __global__ void warp_ops(const float *x, float *out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31u;
    const float v = x[i];
    float s = v;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    float d = v;
    for (int o = 16; o > 0; o >>= 1) d += __shfl_down_sync(0xffffffffu, d, o);
    const float b = __shfl_sync(0xffffffffu, v, 0);
    float p = v;
    for (int o = 1; o < 32; o <<= 1) {
        const float q = __shfl_up_sync(0xffffffffu, p, o);
        if (lane >= (unsigned)o) p += q;
    }
    const unsigned bal = __ballot_sync(0xffffffffu, v > 0.0f);
    const int any = __any_sync(0xffffffffu, v > 2.0f), all = __all_sync(0xffffffffu, v > -100.0f);
    float s8 = v;
    for (int o = 4; o > 0; o >>= 1) s8 += __shfl_xor_sync(0xffffffffu, s8, o, 8);
    out[8 * i + 0] = s;
    out[8 * i + 1] = d;
    out[8 * i + 2] = b;
    out[8 * i + 3] = p;
    out[8 * i + 4] = (float)__popc(bal);
    out[8 * i + 5] = (float)any;
    out[8 * i + 6] = (float)all;
    out[8 * i + 7] = s8;
}

// each block adds the previous block's output to its own: correct only if
// blocks ran in order, which nothing promises
extern "C" __global__ void reads_other_block(float *y) {
    if (threadIdx.x == 0) y[blockIdx.x] = 1.0f + (blockIdx.x ? y[blockIdx.x - 1] : 0.0f);
}

// shared memory belongs to the block: each thread reads its neighbour's
// slot after a barrier, in every order the same
extern "C" __global__ void shared_neighbour(float *y) {
    __shared__ float s[128];
    const unsigned t = threadIdx.x;
    s[t] = (float)(blockIdx.x * 1000u + t);
    __syncthreads();
    y[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x];
}

// atomics on shared memory: the block counts its positive inputs
extern "C" __global__ void count_positive(const float *x, int *count) {
    __shared__ int c;
    if (threadIdx.x == 0) c = 0;
    __syncthreads();
    if (x[blockIdx.x * blockDim.x + threadIdx.x] > 0.0f) atomicAdd(&c, 1);
    __syncthreads();
    if (threadIdx.x == 0) count[blockIdx.x] = c;
}

// errors the shim must report
extern "C" __global__ void barrier_after_return(float *y) {
    if (threadIdx.x == 0) return;
    __syncthreads();
    y[threadIdx.x] = 1.0f;
}

extern "C" __global__ void barrier_two_sites(float *y) {
    if (threadIdx.x & 1u) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    y[threadIdx.x] = 1.0f;
}

// with 64 threads: 0..47 at the barrier, 48..63 at a shuffle, whose warp
// (32..63) never all arrive
extern "C" __global__ void barrier_vs_shuffle(float *y) {
    float v = (float)threadIdx.x;
    if (threadIdx.x < 48) __syncthreads();
    else v = __shfl_xor_sync(0xffffffffu, v, 1);
    y[threadIdx.x] = v;
}

extern "C" __global__ void shuffle_after_return(float *y) {
    if ((threadIdx.x & 31u) >= 16) return;
    y[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (float)threadIdx.x, 1);
}

extern "C" __global__ void shuffle_partial_mask(float *y) {
    y[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, (float)threadIdx.x, 1);
}

// conversions to and from the 16-bit storage types
extern "C" __global__ void to_half(const float *x, __half *h, __nv_bfloat16 *b, float *back, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    h[i] = __float2half_rn(x[i]);
    b[i] = __float2bfloat16_rn(x[i]);
    back[2 * i] = __half2float(h[i]);
    back[2 * i + 1] = __bfloat162float(b[i]);
}
