/* grouped_bench.c - one grouped 3x3 convolution of 8 channels per group
 * (RegNetY's), padding 1, by conv2d_f32's method 3 (the direct grouped
 * kernel where the build has one, else im2col + GEMM), or with a "dw"
 * prefix a depthwise one (method 0), one thread. Prints the fastest of 300
 * runs and the rate it makes:
 *
 *     grouped 208 ch 14x14 stride 1: 144.2 us, 40.7 GFLOP/s
 *
 *   grouped_bench [[dw]CHxHW[xS]]...   (default RegNetY-400MF's four stages
 *                                       and a stride-2 first block)
 *
 * A program that prints figures, not a test. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
        fprintf(stderr, "grouped_bench: out of memory\n");
        exit(1);
    }
    return p;
}

static int run(int64_t ch, int64_t hw, int64_t s, int64_t cg) {
    const int64_t h = hw, w = hw, oh = (h + 2 - 3) / s + 1, ow = (w + 2 - 3) / s + 1;
    size_t nx = (size_t)(ch * h * w), nw = (size_t)(ch * cg * 9), ny = (size_t)(ch * oh * ow);
    float *x = xmalloc(nx * 4), *wt = xmalloc(nw * 4), *b = xmalloc((size_t)ch * 4), *y = xmalloc(ny * 4);
    for (size_t i = 0; i < nx; i++) x[i] = (float)(i % 13) * 0.1f - 0.6f;
    for (size_t i = 0; i < nw; i++) wt[i] = (float)(i % 5) * 0.1f - 0.2f;
    for (int64_t i = 0; i < ch; i++) b[i] = 0.1f;
    rk_conv2d_f32_params p = {.n = 1, .c = ch, .h = h, .w = w, .oc = ch, .oh = oh, .ow = ow, .kh = 3, .kw = 3,
                              .sh = s, .sw = s, .pt = 1, .pl = 1, .dh = 1, .dw = 1, .group = ch / cg, .has_bias = 1,
                              .act = RS_ACT_RELU, .method = cg == 1 ? 0 : 3, .nblk = oh * ow};
    /* the direct kernel's scratch, and im2col's block with the GEMM's packing */
    size_t per = rk_conv2d_grouped_scratch(cg, 3, 3, s, oh, ow) + (size_t)(cg * 9 * oh * ow) * 4 + ((size_t)16 << 20);
    void *scratch = xmalloc(per);
    rk_ctx one = {1, NULL, scratch, per};
    const void *ins[3] = {x, wt, b};
    double best = 1e9;
    for (int i = 0; i < 300; i++) {
        double t0 = now_s();
        if (rk_conv2d_f32(&one, &p, ins, (void *const[]){y})) {
            fprintf(stderr, "grouped_bench: conv2d_f32 refused %lldx%lld\n", (long long)ch, (long long)hw);
            return 1;
        }
        double d = now_s() - t0;
        if (d < best) best = d;
    }
    double flops = 2.0 * (double)ch * (double)(oh * ow) * (double)(cg * 9);
    printf("%s %lld ch %lldx%lld stride %lld: %.1f us, %.1f GFLOP/s\n", cg == 1 ? "depthwise" : "grouped",
           (long long)ch, (long long)hw,
           (long long)hw, (long long)s, best * 1e6, flops / best / 1e9);
    free(x), free(wt), free(b), free(y), free(scratch);
    return 0;
}

int main(int argc, char **argv) {
    static const char *dflt[] = {"48x56", "104x28", "208x14", "440x7", "104x56x2"};
    int n = argc > 1 ? argc - 1 : 5, st = 0;
    for (int i = 0; i < n; i++) {
        const char *a = argc > 1 ? argv[i + 1] : dflt[i];
        long long ch = 0, hw = 0, s = 1;
        int dw = a[0] == 'd' && a[1] == 'w';
        int got = sscanf(a + 2 * dw, "%lldx%lldx%lld", &ch, &hw, &s);
        if (got < 2 || ch <= 0 || ch % 8 || ch > 4096 || hw < 3 || hw > 512 || s < 1 || s > 2) {
            fprintf(stderr, "grouped_bench: bad shape '%s' (want [dw]CHxHW[xS], CH a multiple of 8, S 1 or 2)\n", a);
            return 1;
        }
        st |= run(ch, hw, s, dw ? 1 : 8);
    }
    return st;
}
