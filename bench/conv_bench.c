/* conv_bench.c - single convolution layers through conv2d_f32, one thread,
 * on the instruction set the CPU picks (RLX_ISA overrides). A program that
 * prints figures, not a test.
 *
 *   conv_bench [stem:OCxK | grouped:CHxHW[xS][/CG] | dw:CHxHW[xS]]...
 *
 * stem:OCxK  a network's first layer, 3 -> OC channels, KxK, stride 2, pads
 *            K/2, 224x224 input, by method 1 (im2col + GEMM) and method 2
 *            (the direct stem where the build has one) alternated, so that
 *            load and frequency drifts hit both alike; the fastest run of
 *            each, their ratio, and whether the outputs are the same bytes
 *            (they must be):
 *                stem 3->16 3x3 s2 224x224: im2col+GEMM 285.1 us, direct 229.8 us, ratio 0.806
 * grouped:CHxHW[xS][/CG]  a grouped 3x3 of CG (default 8: RegNetY's)
 *            channels per group (ResNeXt-50's: /4 to /32),
 *            padding 1, stride S (1 or 2), by method 3; dw: the depthwise
 *            3x3 of the same shape (method 0). The fastest of 300 runs:
 *                grouped 208 ch 14x14 stride 1: 144.2 us, 40.7 GFLOP/s
 *
 * Default: stem:16x3 stem:32x3 stem:64x7 and RegNetY-400MF's grouped
 * layers (grouped:48x56 grouped:104x28 grouped:208x14 grouped:440x7
 * grouped:104x56x2). */
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
        fprintf(stderr, "conv_bench: out of memory\n");
        exit(1);
    }
    return p;
}

static float *filled(size_t n, int mod, float scale, float shift) {
    float *p = xmalloc(n * 4);
    for (size_t i = 0; i < n; i++) p[i] = (float)(i % (size_t)mod) * scale + shift;
    return p;
}

/* one call; 1 if conv2d_f32 refused it */
static int conv(const rk_conv2d_f32_params *p, rk_ctx *ctx, const void *const *ins, float *y, double *secs) {
    double t0 = now_s();
    int st = rk_conv2d_f32(ctx, p, ins, (void *const[]){y});
    *secs = now_s() - t0;
    if (st) fprintf(stderr, "conv_bench: conv2d_f32 refused a %lld -> %lld layer\n", (long long)p->c, (long long)p->oc);
    return st != 0;
}

static int stem(int64_t oc, int64_t k) {
    const int64_t c = 3, h = 224, w = 224, s = 2, pad = k / 2;
    const int64_t oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
    size_t ny = (size_t)(oc * oh * ow);
    float *x = filled((size_t)(c * h * w), 17, 0.1f, -0.8f), *wt = filled((size_t)(oc * c * k * k), 7, 0.05f, -0.15f);
    float *b = filled((size_t)oc, 1, 0.0f, 0.1f), *y[2] = {xmalloc(ny * 4), xmalloc(ny * 4)};
    rk_conv2d_f32_params p = {.n = 1, .c = c, .h = h, .w = w, .oc = oc, .oh = oh, .ow = ow, .kh = k, .kw = k,
                              .sh = s, .sw = s, .pt = pad, .pl = pad, .dh = 1, .dw = 1, .group = 1, .has_bias = 1,
                              .act = RS_ACT_RELU, .method = 1, .nblk = oh * ow};
    /* im2col's block and the GEMM's packing, with room to spare (the
     * per-instruction-set scratch helpers are not exported) */
    size_t per = (size_t)(c * k * k * oh * ow) * 4 + ((size_t)16 << 20);
    void *scratch = xmalloc(per);
    rk_ctx one = {1, NULL, scratch, per};
    const void *ins[3] = {x, wt, b};
    double best[2] = {1e9, 1e9}, d;
    int st = 0;
    for (int i = 0; i < 600 && !st; i++) {
        p.method = i % 2 + 1;
        st = conv(&p, &one, ins, y[i % 2], &d);
        if (d < best[i % 2]) best[i % 2] = d;
    }
    int same = memcmp(y[0], y[1], ny * 4) == 0;
    if (!st)
        printf("stem 3->%lld %lldx%lld s2 224x224: im2col+GEMM %.1f us, direct %.1f us, ratio %.3f%s\n",
               (long long)oc, (long long)k, (long long)k, best[0] * 1e6, best[1] * 1e6, best[1] / best[0],
               same ? "" : "  (OUTPUTS DIFFER)");
    free(x), free(wt), free(b), free(y[0]), free(y[1]), free(scratch);
    return st || !same;
}

static int grouped(int64_t ch, int64_t hw, int64_t s, int64_t cg) {
    const int64_t h = hw, w = hw, oh = (h + 2 - 3) / s + 1, ow = (w + 2 - 3) / s + 1;
    float *x = filled((size_t)(ch * h * w), 13, 0.1f, -0.6f), *wt = filled((size_t)(ch * cg * 9), 5, 0.1f, -0.2f);
    float *b = filled((size_t)ch, 1, 0.0f, 0.1f), *y = xmalloc((size_t)(ch * oh * ow) * 4);
    rk_conv2d_f32_params p = {.n = 1, .c = ch, .h = h, .w = w, .oc = ch, .oh = oh, .ow = ow, .kh = 3, .kw = 3,
                              .sh = s, .sw = s, .pt = 1, .pl = 1, .dh = 1, .dw = 1, .group = ch / cg, .has_bias = 1,
                              .act = RS_ACT_RELU, .method = cg == 1 ? 0 : 3, .nblk = oh * ow};
    /* the direct kernel's scratch, and im2col's block with the GEMM's packing */
    size_t per = rk_conv2d_grouped_scratch(cg, 3, 3, s, oh, ow) + (size_t)(cg * 9 * oh * ow) * 4 + ((size_t)16 << 20);
    void *scratch = xmalloc(per);
    rk_ctx one = {1, NULL, scratch, per};
    const void *ins[3] = {x, wt, b};
    double best = 1e9, d;
    int st = 0;
    for (int i = 0; i < 300 && !st; i++) {
        st = conv(&p, &one, ins, y, &d);
        if (d < best) best = d;
    }
    double flops = 2.0 * (double)ch * (double)(oh * ow) * (double)(cg * 9);
    if (!st)
        printf("%s %lld ch %lldx%lld stride %lld: %.1f us, %.1f GFLOP/s\n", cg == 1 ? "depthwise" : "grouped",
               (long long)ch, (long long)hw, (long long)hw, (long long)s, best * 1e6, flops / best / 1e9);
    free(x), free(wt), free(b), free(y), free(scratch);
    return st;
}

int main(int argc, char **argv) {
    static const char *dflt[] = {"stem:16x3",     "stem:32x3",      "stem:64x7",     "grouped:48x56",
                                 "grouped:104x28", "grouped:208x14", "grouped:440x7", "grouped:104x56x2"};
    int n = argc > 1 ? argc - 1 : (int)(sizeof dflt / sizeof dflt[0]), st = 0;
    for (int i = 0; i < n; i++) {
        const char *a = argc > 1 ? argv[i + 1] : dflt[i];
        long long u = 0, v = 0, s = 1;
        if (!strncmp(a, "stem:", 5) && sscanf(a + 5, "%lldx%lld", &u, &v) == 2 && u > 0 && u <= 4096 && v > 0 &&
            v <= 7) {
            st |= stem(u, v);
        } else if ((!strncmp(a, "grouped:", 8) || !strncmp(a, "dw:", 3)) &&
                   sscanf(strchr(a, ':') + 1, "%lldx%lldx%lld", &u, &v, &s) >= 2 && u > 0 && u % 8 == 0 &&
                   u <= 4096 && v >= 3 && v <= 512 && s >= 1 && s <= 2) {
            const char *per = strchr(a, '/');   /* grouped:CHxHW[xS]/CG: CG channels a group */
            long long cg = a[0] == 'd' ? 1 : per ? atoll(per + 1) : 8;
            if (cg < 1 || u % cg || (a[0] == 'd' && per)) {
                fprintf(stderr, "conv_bench: bad channels a group in '%s'\n", a);
                return 1;
            }
            st |= grouped(u, v, s, cg);
        } else {
            fprintf(stderr, "conv_bench: bad layer '%s' (want stem:OCxK with K <= 7, or grouped: / dw:CHxHW[xS] with CH a "
                            "multiple of 8 and S 1 or 2)\n", a);
            return 1;
        }
    }
    return st;
}
