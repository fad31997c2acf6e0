/* stem_bench.c - a network's first convolution (3 input channels, stride 2)
 * by conv2d_f32's method 1 (im2col + GEMM) and method 2 (the direct stem
 * kernel where the build has one), alternated in one process, so that load
 * and frequency drifts hit both alike. Prints the fastest run of each and
 * their ratio:
 *
 *     stem 3->16 3x3 s2 224x224: im2col+GEMM 285.1 us, direct 229.8 us, ratio 0.806
 *
 *   stem_bench [OCxK]...    (default 16x3 32x3 64x7; pads K/2, input 224x224)
 *
 * One thread; the two methods give the same bits (test_conv_turned), which
 * this checks too. A program that prints figures, not a test. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "stem_bench: out of memory\n");
        exit(1);
    }
    return p;
}

static int run(int64_t oc, int64_t k) {
    const int64_t c = 3, h = 224, w = 224, s = 2, pad = k / 2;
    const int64_t oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
    size_t nx = (size_t)(c * h * w), nw = (size_t)(oc * c * k * k), ny = (size_t)(oc * oh * ow);
    float *x = xmalloc(nx * 4), *wt = xmalloc(nw * 4), *b = xmalloc((size_t)oc * 4);
    float *y[2] = {xmalloc(ny * 4), xmalloc(ny * 4)};
    for (size_t i = 0; i < nx; i++) x[i] = (float)(i % 17) * 0.1f - 0.8f;
    for (size_t i = 0; i < nw; i++) wt[i] = (float)(i % 7) * 0.05f - 0.15f;
    for (int64_t i = 0; i < oc; i++) b[i] = 0.1f;
    rk_conv2d_f32_params p = {.n = 1, .c = c, .h = h, .w = w, .oc = oc, .oh = oh, .ow = ow, .kh = k, .kw = k,
                              .sh = s, .sw = s, .pt = pad, .pl = pad, .dh = 1, .dw = 1, .group = 1, .has_bias = 1,
                              .act = RS_ACT_RELU, .method = 1, .nblk = oh * ow};
    /* im2col's block and the GEMM's packing, with room to spare (the
     * per-instruction-set scratch helpers are not exported) */
    size_t per = (size_t)(c * k * k * oh * ow) * 4 + ((size_t)16 << 20);
    uint8_t *scratch = xmalloc(per);
    rk_ctx one = {1, NULL, scratch, per};
    const void *ins[3] = {x, wt, b};
    double best[2] = {1e9, 1e9};
    for (int i = 0; i < 600; i++) {
        int m = i % 2;
        p.method = m + 1;
        double t0 = now_s();
        if (rk_conv2d_f32(&one, &p, ins, (void *const[]){y[m]})) {
            fprintf(stderr, "stem_bench: conv2d_f32 refused %lldx%lld\n", (long long)oc, (long long)k);
            return 1;
        }
        double d = now_s() - t0;
        if (d < best[m]) best[m] = d;
    }
    int same = memcmp(y[0], y[1], ny * 4) == 0;
    printf("stem 3->%lld %lldx%lld s2 224x224: im2col+GEMM %.1f us, direct %.1f us, ratio %.3f%s\n", (long long)oc,
           (long long)k, (long long)k, best[0] * 1e6, best[1] * 1e6, best[1] / best[0],
           same ? "" : "  (OUTPUTS DIFFER)");
    free(x), free(wt), free(b), free(y[0]), free(y[1]), free(scratch);
    return !same;
}

int main(int argc, char **argv) {
    static const char *dflt[] = {"16x3", "32x3", "64x7"};
    int n = argc > 1 ? argc - 1 : 3, st = 0;
    for (int i = 0; i < n; i++) {
        const char *a = argc > 1 ? argv[i + 1] : dflt[i];
        long long oc = 0, k = 0;
        if (sscanf(a, "%lldx%lld", &oc, &k) != 2 || oc <= 0 || oc > 4096 || k <= 0 || k > 7) {
            fprintf(stderr, "stem_bench: bad shape '%s' (want OCxK, K at most 7)\n", a);
            return 1;
        }
        st |= run(oc, k);
    }
    return st;
}
