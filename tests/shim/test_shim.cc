/* test_shim.cc - tests of the CPU shim (gpu_fiber.cc, cuda_shim.h) on the
 * kernels of test_kernels.cu, against references computed here in double
 * precision or derived by hand:
 *
 *   - correct kernels (tiled GEMM, a tree sum, shared memory, atomics, every
 *     warp function) give the reference, bit for bit the same in the
 *     forward, reverse and shuffled orders;
 *   - a kernel with a barrier missing (either of the GEMM's two, the tree
 *     sum's) gives another result than the correct one in some order, and
 *     differs between orders; a kernel that reads another block's output
 *     differs between the forward and the reverse block order;
 *   - barrier divergence, barriers at two sites, a deadlock between a
 *     barrier and a shuffle, a shuffle with lanes that returned, a partial
 *     mask: each is an error naming it, and the next launch works;
 *   - __half and __nv_bfloat16 round to nearest even: hand-derived values at
 *     the edges, and a sweep against the compiler's _Float16 conversion.
 *
 *   test_shim [--no-sweep]  runs everything (--no-sweep: not the 44 million
 *                           conversions); ends with "N passed, N failed"
 *   test_shim --order       prints the order RLX_SHIM_ORDER selects
 */
#include "cuda_shim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "test_kernels.cu"

static int passed, failed;

static void check(bool ok, const char *name, const char *fmt = "", ...) {
    if (ok) {
        passed++;
        printf("ok - %s\n", name);
        return;
    }
    failed++;
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    printf("FAIL - %s: %s\n", name, why);
}

static unsigned rng_state = 1;
static float frand() {   /* uniform in [-1, 1) */
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 8388608.0f - 1.0f;
}

static const gpu_fiber::Order ORDERS[] = {gpu_fiber::ORDER_FORWARD, gpu_fiber::ORDER_REVERSE, gpu_fiber::ORDER_SHUFFLE};
static const char *const ORDER_NAMES[] = {"forward", "reverse", "shuffle"};

typedef void (*MmKernel)(const float *, const float *, float *, int, int, int);

static std::vector<float> run_mm(MmKernel k, const std::vector<float> &A, const std::vector<float> &B, int M, int N,
                                 int K, gpu_fiber::Order o) {
    std::vector<float> C((size_t)M * N, -7.0f);
    gpu_fiber::set_order(o, 3);
    int rc = cuda_shim::launch(k, dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), A.data(), B.data(), C.data(), M, N,
                               K);
    if (rc) printf("# launch failed: %s\n", gpu_fiber::last_error());
    return C;
}

static double max_diff(const std::vector<float> &a, const std::vector<float> &b) {
    double d = 0;
    for (size_t i = 0; i < a.size(); i++) d = fmax(d, fabs((double)a[i] - b[i]));
    return d;
}

static void test_gemm() {
    const int M = 67, N = 45, K = 83;   /* not multiples of 16: the edges of the tiles */
    std::vector<float> A((size_t)M * K), B((size_t)K * N);
    for (auto &v : A) v = frand();
    for (auto &v : B) v = frand();
    double err = 0;
    std::vector<float> ref_bits = run_mm(mm_tiled, A, B, M, N, K, gpu_fiber::ORDER_FORWARD);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double r = 0;
            for (int k = 0; k < K; k++) r += (double)A[(size_t)i * K + k] * B[(size_t)k * N + j];
            err = fmax(err, fabs(r - ref_bits[(size_t)i * N + j]));
        }
    check(err < 1e-5, "tiled GEMM 67x45x83 matches the f64 reference", "max error %g", err);
    for (int o = 1; o < 3; o++) {
        std::vector<float> c = run_mm(mm_tiled, A, B, M, N, K, ORDERS[o]);
        char name[96];
        snprintf(name, sizeof name, "tiled GEMM: %s order gives the same bits as forward", ORDER_NAMES[o]);
        check(!memcmp(c.data(), ref_bits.data(), c.size() * 4), name, "max diff %g", max_diff(c, ref_bits));
    }
    struct { MmKernel k; const char *name; } racy[] = {{mm_no_second_barrier, "GEMM without its second barrier"},
                                                      {mm_no_first_barrier, "GEMM without its first barrier"}};
    for (auto &r : racy) {
        std::vector<float> f = run_mm(r.k, A, B, M, N, K, gpu_fiber::ORDER_FORWARD);
        std::vector<float> v = run_mm(r.k, A, B, M, N, K, gpu_fiber::ORDER_REVERSE);
        std::vector<float> s = run_mm(r.k, A, B, M, N, K, gpu_fiber::ORDER_SHUFFLE);
        double dfr = max_diff(f, v), dfs = max_diff(f, s);
        double wrong = fmax(max_diff(f, ref_bits), fmax(max_diff(v, ref_bits), max_diff(s, ref_bits)));
        char name[128];
        snprintf(name, sizeof name, "%s: the orders disagree (forward vs reverse %.3g, vs shuffle %.3g)", r.name, dfr,
                 dfs);
        check(dfr > 1e-3 && dfs > 1e-3, name, "a missing barrier went unnoticed");
        snprintf(name, sizeof name, "%s: differs from the correct kernel (max %.3g)", r.name, wrong);
        check(wrong > 1e-3, name, "same as the correct kernel");
    }
}

static void test_tree_sum() {
    const int rows = 7, n = 1000;
    std::vector<float> x((size_t)rows * n);
    for (auto &v : x) v = frand();
    std::vector<double> ref(rows, 0.0);
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < n; i++) ref[r] += x[(size_t)r * n + i];
    std::vector<float> first;
    bool same = true;
    double err = 0;
    for (int o = 0; o < 3; o++) {
        std::vector<float> y(rows, -1.0f);
        gpu_fiber::set_order(ORDERS[o], 5);
        int rc = cuda_shim::launch(row_sum_tree, dim3(rows), dim3(256), x.data(), y.data(), n);
        if (rc) printf("# %s\n", gpu_fiber::last_error());
        for (int r = 0; r < rows; r++) err = fmax(err, fabs(ref[r] - y[r]));
        if (o == 0) first = y;
        else same = same && !memcmp(first.data(), y.data(), rows * 4);
    }
    check(err < 1e-4, "tree sum in shared memory matches the f64 reference", "max error %g", err);
    check(same, "tree sum: the same bits in every order");
    std::vector<float> yf(rows), yr(rows);
    gpu_fiber::set_order(gpu_fiber::ORDER_FORWARD, 1);
    cuda_shim::launch(row_sum_tree_racy, dim3(rows), dim3(256), x.data(), yf.data(), n);
    gpu_fiber::set_order(gpu_fiber::ORDER_REVERSE, 1);
    cuda_shim::launch(row_sum_tree_racy, dim3(rows), dim3(256), x.data(), yr.data(), n);
    double d = 0, w = 0;
    for (int r = 0; r < rows; r++) {
        d = fmax(d, fabs(yf[r] - yr[r]));
        w = fmax(w, fmax(fabs(ref[r] - yf[r]), fabs(ref[r] - yr[r])));
    }
    check(d > 1e-3 && w > 1e-3, "tree sum without its inner barrier: the orders disagree and are wrong",
          "forward vs reverse %g, worst error %g", d, w);
}

static void test_warp_ops() {
    const int nthreads = 96, blocks = 2, n = nthreads * blocks;   /* three warps per block */
    std::vector<float> x(n), out((size_t)8 * n);
    for (auto &v : x) v = (float)((int)(frand() * 8.0f));   /* small integers: every sum exact */
    x[5] = 3.0f;                                               /* warp 0 has one value above 2 */
    for (int i = 32; i < 64; i++) x[i] = fminf(x[i], 1.0f);     /* warp 1 has none */
    bool ok_all = true;
    std::vector<float> first;
    for (int o = 0; o < 3; o++) {
        gpu_fiber::set_order(ORDERS[o], 9);
        int rc = cuda_shim::launch(warp_ops, dim3(blocks), dim3(nthreads), x.data(), out.data());
        if (rc) {
            check(false, "warp functions run", "%s", gpu_fiber::last_error());
            return;
        }
        if (o == 0) first = out;
        else ok_all = ok_all && !memcmp(first.data(), out.data(), out.size() * 4);
    }
    const char *what[8] = {"xor-butterfly sum", "shfl_down sum (lane 0)", "shfl broadcast of lane 0",
                           "shfl_up inclusive scan", "ballot popcount", "any", "all", "xor sum in segments of 8"};
    int bad[8] = {0};
    for (int w = 0; w < n / 32; w++) {
        const float *v = &x[w * 32];
        double sum = 0, scan = 0;
        int pos = 0, any = 0;
        for (int l = 0; l < 32; l++) {
            sum += v[l];
            pos += v[l] > 0.0f;
            any |= v[l] > 2.0f;
        }
        for (int l = 0; l < 32; l++) {
            const float *o = &first[(size_t)8 * (w * 32 + l)];
            scan += v[l];
            double seg = 0;
            for (int j = l / 8 * 8; j < l / 8 * 8 + 8; j++) seg += v[j];
            bad[0] += o[0] != sum;
            bad[1] += l == 0 && o[1] != sum;
            bad[2] += o[2] != v[0];
            bad[3] += o[3] != scan;
            bad[4] += o[4] != pos;
            bad[5] += o[5] != any;
            bad[6] += o[6] != 1.0f;
            bad[7] += o[7] != seg;
        }
    }
    for (int k = 0; k < 8; k++) {
        char name[96];
        snprintf(name, sizeof name, "warp function: %s", what[k]);
        check(!bad[k], name, "%d lanes wrong", bad[k]);
    }
    check(ok_all, "warp functions: the same bits in every order");
}

static void test_blocks() {
    const int nb = 37;
    std::vector<float> yf(nb, 0.0f), yr(nb, 0.0f);
    gpu_fiber::set_order(gpu_fiber::ORDER_FORWARD, 1);
    cuda_shim::launch(reads_other_block, dim3(nb), dim3(32), yf.data());
    gpu_fiber::set_order(gpu_fiber::ORDER_REVERSE, 1);
    cuda_shim::launch(reads_other_block, dim3(nb), dim3(32), yr.data());
    check(yf[nb - 1] == (float)nb && yr[nb - 1] != yf[nb - 1],
          "a kernel reading another block's output: forward and reverse block orders disagree",
          "forward %g, reverse %g", yf[nb - 1], yr[nb - 1]);
    bool ok = true;
    for (int o = 0; o < 3; o++) {
        std::vector<float> y(5 * 128, -1.0f);
        gpu_fiber::set_order(ORDERS[o], 2);
        cuda_shim::launch(shared_neighbour, dim3(5), dim3(128), y.data());
        for (int b = 0; b < 5; b++)
            for (int t = 0; t < 128; t++) ok = ok && y[b * 128 + t] == (float)(b * 1000 + (t + 1) % 128);
    }
    check(ok, "shared memory is the block's: neighbours' values after a barrier, every order");
    std::vector<float> x(4 * 64);
    for (auto &v : x) v = frand();
    std::vector<int> count(4, -1);
    gpu_fiber::set_order(gpu_fiber::ORDER_SHUFFLE, 4);
    cuda_shim::launch(count_positive, dim3(4), dim3(64), x.data(), count.data());
    bool cok = true;
    for (int b = 0; b < 4; b++) {
        int c = 0;
        for (int t = 0; t < 64; t++) c += x[b * 64 + t] > 0.0f;
        cok = cok && count[b] == c;
    }
    check(cok, "atomicAdd on shared memory counts every thread");
    /* a large grid in three dimensions: every thread runs exactly once */
    std::vector<float> y(3 * 70000, 0.0f);
    gpu_fiber::set_order(gpu_fiber::ORDER_SHUFFLE, 6);
    int rc = cuda_shim::launch(shared_neighbour, dim3(70000 / 128 + 1), dim3(128), y.data());
    check(rc == 0 && y[70000] == (float)(546 * 1000 + 113), "a grid of 547 blocks in shuffled order",
          "rc %d, y[70000] %g", rc, y[70000]);
}

static void test_errors() {
    std::vector<float> y(256, 0.0f);
    struct {
        void (*k)(float *);
        unsigned threads;
        const char *name, *expect;
    } cases[] = {
        {barrier_after_return, 64, "a barrier after some threads returned", "barrier divergence: 1 of 64 threads returned"},
        {barrier_two_sites, 64, "threads at two different barriers", "barrier divergence: thread 1 waits at barrier site"},
        {barrier_vs_shuffle, 64, "a barrier against a shuffle", "deadlock: 48 threads wait at a block barrier, 16"},
        {shuffle_after_return, 64, "a shuffle after lanes returned", "subgroup divergence: 16 of 32 lanes"},
        {shuffle_partial_mask, 32, "a shuffle with a partial mask", "__shfl_xor_sync with mask 0x0000ffff"},
    };
    for (auto &c : cases) {
        for (int o = 0; o < 2; o++) {
            gpu_fiber::set_order(ORDERS[o], 1);
            int rc = cuda_shim::launch(c.k, dim3(3), dim3(c.threads), y.data());
            char name[128];
            snprintf(name, sizeof name, "%s is an error (%s order)", c.name, ORDER_NAMES[o]);
            check(rc != 0 && strstr(gpu_fiber::last_error(), c.expect), name, "rc %d, message '%s'", rc,
                  gpu_fiber::last_error());
        }
    }
    printf("# e.g. %s\n", gpu_fiber::last_error());
    std::vector<float> z(128, -1.0f);
    int rc = cuda_shim::launch(shared_neighbour, dim3(1), dim3(128), z.data());
    check(rc == 0 && z[5] == 6.0f, "a launch after an error works");
    rc = cuda_shim::launch(shared_neighbour, dim3(1), dim3(2048), z.data());
    check(rc != 0 && strstr(gpu_fiber::last_error(), "bad launch"), "a block of 2048 threads is refused");
}

static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_half(bool sweep) {
    /* hand-derived: half has 10 fraction bits, exponent bias 15, subnormals
     * step 2^-24, largest finite 65504; bf16 is the float's upper half */
    struct { float x; uint16_t h, b; } t[] = {
        {1.0f, 0x3c00, 0x3f80},
        {1.0f / 3.0f, 0x3555, 0x3eab},             /* 0x3eaaaaab: bf16 rounds up */
        {65504.0f, 0x7bff, 0x4780},                /* 0x477fe000: bf16 rounds up to 65536 */
        {65519.99f, 0x7bff, 0x4780},               /* below the midpoint to 65536 */
        {65520.0f, 0x7c00, 0x4780},                /* the midpoint: ties to even -> infinity */
        {5.9604645e-08f, 0x0001, 0x3380},          /* 2^-24, the least subnormal */
        {2.9802322e-08f, 0x0000, 0x3300},          /* 2^-25: a tie, to even (0) */
        {4.4703484e-08f, 0x0001, 0x3340},          /* 1.5 * 2^-25 */
        {6.1035156e-05f, 0x0400, 0x3880},          /* 2^-14, the least normal */
        {-0.0f, 0x8000, 0x8000},
        {1.0009765625f, 0x3c01, 0x3f80},           /* 1 + 2^-10 */
        {1.00048828125f, 0x3c00, 0x3f80},          /* 1 + 2^-11: a tie, to even */
        {1.00146484375f, 0x3c02, 0x3f80},          /* 1 + 3 * 2^-11: a tie, to even (up) */
        {float_of(0x3f808000u), 0x3c04, 0x3f80},   /* bf16 tie 0x3f80|8000: to even (down) */
        {float_of(0x3f818000u), 0x3c0c, 0x3f82},   /* bf16 tie, odd: up */
        {float_of(0x7f800000u), 0x7c00, 0x7f80},
        {float_of(0xff800000u), 0xfc00, 0xff80},
    };
    const int n = (int)(sizeof t / sizeof t[0]);
    std::vector<float> x(n), back(2 * n);
    std::vector<__half> h(n);
    std::vector<__nv_bfloat16> b(n);
    for (int i = 0; i < n; i++) x[i] = t[i].x;
    cuda_shim::launch(to_half, dim3(1), dim3(32), x.data(), h.data(), b.data(), back.data(), n);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (h[i].__x != t[i].h || b[i].__x != t[i].b) {
            if (bad < 3) printf("# %a: half 0x%04x (want 0x%04x), bf16 0x%04x (want 0x%04x)\n", (double)t[i].x,
                                h[i].__x, t[i].h, b[i].__x, t[i].b);
            bad++;
        }
        if (back[2 * i] != (float)cuda_shim::f16_bits_to_f32(t[i].h)) bad++;
    }
    check(!bad, "__half and __nv_bfloat16: round to nearest even at the edges", "%d wrong", bad);
    float nan = float_of(0x7fc00001u);
    check(__half2float(__float2half_rn(nan)) != __half2float(__float2half_rn(nan)) &&
              __bfloat162float(__float2bfloat16_rn(nan)) != __bfloat162float(__float2bfloat16_rn(nan)),
          "NaN stays NaN in both");
    /* every 97th float bit pattern against the compiler's conversion */
    long wrong = 0, tested = 0;
#if defined(__FLT16_MAX__)
    if (sweep) {
    for (uint64_t u = 0; u < 0x100000000ull; u += 97) {
        float f = float_of((uint32_t)u);
        if (f != f) continue;
        _Float16 r = (_Float16)f;
        uint16_t rb;
        memcpy(&rb, &r, 2);
        tested++;
        wrong += __float2half_rn(f).__x != rb;
        float fb = (float)r;
        wrong += __half2float(__float2half_rn(f)) != fb;
    }
    check(tested > 40000000 && !wrong, "__float2half_rn and __half2float agree with _Float16 on 44 million floats",
          "%ld of %ld differ", wrong, tested);
    }
#else
    printf("# skipped: this compiler has no _Float16 to compare with\n");
#endif
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--order")) {
        printf("%s\n", ORDER_NAMES[gpu_fiber::order()]);
        return 0;
    }
    test_gemm();
    test_tree_sum();
    test_warp_ops();
    test_blocks();
    test_errors();
    test_half(!(argc > 1 && !strcmp(argv[1], "--no-sweep")));
    printf("# %llu fiber switches\n", gpu_fiber::switches());
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
