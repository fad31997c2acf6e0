/* test_pool.c - 2-D max pooling of f32 planes (rk_conv.c maxpool2d_f32).
 *
 * Built once per instruction set (Makefile ISA_UNIT): portably (the scalar
 * loops), and for AVX2 and AVX-512, where the interior columns of stride 1
 * and 2 run as vectors of 8 or 16. Either way every output must carry exactly the bits of the
 * definition folded in the window's order (rows, then columns) with
 * rs_max: the first NaN of the window wins (payloads differ here), a later
 * equal value wins a tie (+0 and -0 both occur), -inf and inf are values.
 * Widths from 1 to 70 put the vectors' ends and the edges everywhere.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

#define OUT(...) ((void *const[]){__VA_ARGS__})

static uint32_t rng_state = 7u;
static uint32_t next(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 8;
}

static float nan_with(uint32_t payload) {
    uint32_t bits = 0x7fc00000u | (payload & 0x3fffffu);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* mostly small integers (ties), some zeros of both signs, a few specials */
static float sample(int specials) {
    uint32_t r = next() % 64;
    if (specials && r == 0) return nan_with(next());
    if (specials && r == 1) return INFINITY;
    if (specials && r == 2) return -INFINITY;
    if (r < 10) return r % 2 ? -0.0f : 0.0f;
    return (float)((int)(next() % 9) - 4);
}

static void check(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pt, int64_t pl,
                  int specials) {
    int64_t pb = pt, pe = pl, nc = 3;
    int64_t oh = (h + pt + pb - kh) / sh + 1, ow = (w + pl + pe - kw) / sw + 1;
    if (oh < 1 || ow < 1) return;
    float *x = malloc((size_t)(nc * h * w) * sizeof(float)), *y = malloc((size_t)(nc * oh * ow) * sizeof(float));
    for (int64_t i = 0; i < nc * h * w; i++) x[i] = sample(specials);
    rk_pool_nd_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.op = 0;
    p.nc = nc;
    p.in_dims[0] = 1, p.in_dims[1] = h, p.in_dims[2] = w;
    p.out_dims[0] = 1, p.out_dims[1] = oh, p.out_dims[2] = ow;
    p.k[0] = 1, p.k[1] = kh, p.k[2] = kw;
    p.s[0] = 1, p.s[1] = sh, p.s[2] = sw;
    p.d[0] = p.d[1] = p.d[2] = 1;
    p.pb[1] = pt, p.pb[2] = pl, p.pe[1] = pb, p.pe[2] = pe;
    cr_assert_eq(rk_pool_nd(NULL, &p, (const void *const[]){x}, OUT(y)), RLX_OK);
    for (int64_t c = 0; c < nc; c++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                float acc = -INFINITY;
                for (int64_t iy = oy * sh - pt; iy < oy * sh - pt + kh; iy++)
                    for (int64_t ix = ox * sw - pl; ix < ox * sw - pl + kw; ix++)
                        if (iy >= 0 && iy < h && ix >= 0 && ix < w) acc = rs_max(acc, x[(c * h + iy) * w + ix]);
                float got = y[(c * oh + oy) * ow + ox];
                cr_assert(bits(acc) == bits(got),
                          "h %ld w %ld k %ldx%ld s %ldx%ld pads %ld,%ld: (%ld,%ld,%ld) got %g (%08x) want %g (%08x)",
                          (long)h, (long)w, (long)kh, (long)kw, (long)sh, (long)sw, (long)pt, (long)pl, (long)c,
                          (long)oy, (long)ox, got, bits(got), acc, bits(acc));
            }
    free(x);
    free(y);
}

Test(maxpool, every_width_stride_and_pad) {
    for (int64_t w = 1; w <= 70; w++)
        for (int64_t sw = 1; sw <= 3; sw++)
            for (int64_t kw = 1; kw <= 4; kw++)
                for (int64_t pl = 0; pl < kw && pl <= 2; pl++) check(5, w, 3, kw, 2, sw, 1, pl, 1);
}

/* Windows 3 wide at stride 2 run a whole plane at a time with AVX-512
 * (rk_conv.c mp3_s2_plane) unless it holds a NaN or an infinity: without
 * specials every plane takes it; the zeros of both signs still test the
 * order of the fold. Every width to 70 (vectors' ends, the 4-vector groups),
 * left pads 0 to 2, window heights and row strides around 3 and 2. */
Test(maxpool, three_wide_stride_two_planes) {
    for (int64_t w = 1; w <= 70; w++)
        for (int64_t pl = 0; pl <= 2; pl++)
            for (int64_t kh = 1; kh <= 4; kh++) check(7, w, kh, 3, kh > 1 ? 2 : 1, 2, kh > 1 ? 1 : 0, pl, 0);
    check(27, 27, 3, 3, 2, 2, 0, 0, 0);   /* SqueezeNet's */
    check(55, 55, 3, 3, 2, 2, 0, 0, 1);
    check(3, 1100, 3, 3, 2, 2, 1, 1, 0);   /* over MP3_NV vectors: the generic rows */
}

Test(maxpool, resnet_stem_pool) {
    check(112, 112, 3, 3, 2, 2, 1, 1, 0);   /* values only: the fast fold */
    check(112, 112, 3, 3, 2, 2, 1, 1, 1);   /* with NaN and inf: the compare-and-blend fold */
    check(9, 130, 2, 2, 2, 2, 0, 0, 1);
    check(7, 65, 3, 3, 1, 1, 1, 1, 1);
}

/* The generic pooling (here DenseNet's transition: average 2x2, stride 2)
 * over threads: every output the mean of its window, computed by hand
 * (the inputs are small integers, so the float mean is exact), at 1, 2
 * and 3 threads; and max pooling with indices (the generic path too). */
Test(pool_nd, average_and_indices_over_threads) {
    int64_t nc = 128, h = 28, w = 28, oh = 14, ow = 14;
    float *x = malloc((size_t)(nc * h * w) * sizeof(float)), *y = malloc((size_t)(nc * oh * ow) * sizeof(float));
    int64_t *yi = malloc((size_t)(nc * oh * ow) * sizeof(int64_t));
    for (int64_t i = 0; i < nc * h * w; i++) x[i] = (float)(int)(next() % 17) - 8.0f;
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    for (int op = 0; op < 2; op++)
        for (int nt = 1; nt <= 3; nt++) {
            rk_ctx c = {nt, nt > 1 ? pool : NULL, NULL, 0};
            rk_pool_nd_params p;
            memset(&p, 0, sizeof p);
            p.dtype = RLX_F32, p.op = op, p.nc = nc, p.has_indices = op == 0;
            p.in_dims[0] = 1, p.in_dims[1] = h, p.in_dims[2] = w;
            p.out_dims[0] = 1, p.out_dims[1] = oh, p.out_dims[2] = ow;
            p.k[0] = 1, p.k[1] = 2, p.k[2] = 2;
            p.s[0] = 1, p.s[1] = 2, p.s[2] = 2;
            p.d[0] = p.d[1] = p.d[2] = 1;
            memset(y, 0xff, (size_t)(nc * oh * ow) * sizeof(float));
            cr_assert_eq(rk_pool_nd(&c, &p, (const void *const[]){x}, (void *const[]){y, yi}), RLX_OK);
            int64_t bad = 0;
            for (int64_t q = 0; q < nc; q++)
                for (int64_t oy = 0; oy < oh; oy++)
                    for (int64_t ox = 0; ox < ow; ox++) {
                        const float *t = x + (q * h + 2 * oy) * w + 2 * ox;
                        int64_t o = (q * oh + oy) * ow + ox;
                        if (op == 1) {
                            bad += y[o] != (t[0] + t[1] + t[w] + t[w + 1]) / 4.0f;
                        } else {
                            /* the first of the window's maxima, rows then columns */
                            int64_t at = 0;
                            const int64_t off[4] = {0, 1, w, w + 1};
                            for (int k = 1; k < 4; k++)
                                if (t[off[k]] > t[off[at]]) at = k;
                            int64_t flat = q * h * w + (2 * oy + (at >= 2)) * w + 2 * ox + at % 2;
                            bad += y[o] != t[off[at]] || yi[o] != flat;
                        }
                    }
            cr_expect_eq(bad, 0, "op %d, %d threads: %lld outputs wrong", op, nt, (long long)bad);
        }
    rk_pool_free(pool);
    free(x), free(y), free(yi);
}

/* Global average pooling of f32 planes: each plane's sum in 64 running
 * sums (element i into sum i mod 64), the sums added pairwise by halves,
 * divided by the plane's size (rk_conv.c plane_sum). Every instruction set
 * must give exactly those bits: planes of 1 to 200 elements (all tail, one
 * block and a tail, several blocks) and 3136 (56x56), starting anywhere,
 * with random values, and with NaN and infinities, which must come out as
 * the definition's. The mean is also within a few ulp of a sum in double
 * (an independent check of the definition itself). */
static float gap_definition(const float *x, int64_t n) {
    float acc[64] = {0};
    for (int64_t i = 0; i < n; i++) acc[i % 64] += x[i];
    for (int half = 32; half > 0; half /= 2)
        for (int l = 0; l < half; l++) acc[l] += acc[l + half];
    return acc[0] / (float)n;
}

Test(pool_nd, global_average_bits) {
    int64_t sizes[202];
    for (int i = 0; i < 200; i++) sizes[i] = i + 1;
    sizes[200] = 3136, sizes[201] = 49 * 7;
    for (int s = 0; s < 202; s++)
        for (int specials = 0; specials < 2; specials++) {
            int64_t n = sizes[s], nc = 5, off = s % 3;
            float *buf = malloc((size_t)(nc * n + off) * sizeof(float)), *x = buf + off, y[5];
            for (int64_t i = 0; i < nc * n; i++)
                x[i] = specials && next() % 97 == 0 ? (next() % 3 == 0 ? nan_with(next()) : next() % 2 ? INFINITY : -INFINITY)
                                                    : ((float)(next() % 20001) - 10000.0f) / 7.0f;
            rk_pool_nd_params p;
            memset(&p, 0, sizeof p);
            p.dtype = RLX_F32, p.op = 1, p.nc = nc;
            p.in_dims[0] = 1, p.in_dims[1] = 1, p.in_dims[2] = n;
            p.out_dims[0] = p.out_dims[1] = p.out_dims[2] = 1;
            p.k[0] = 1, p.k[1] = 1, p.k[2] = n;
            p.s[0] = p.s[1] = p.s[2] = 1;
            p.d[0] = p.d[1] = p.d[2] = 1;
            cr_assert_eq(rk_pool_nd(NULL, &p, (const void *const[]){x}, OUT(y)), RLX_OK);
            for (int64_t c = 0; c < nc; c++) {
                float want = gap_definition(x + c * n, n);
                cr_assert(bits(want) == bits(y[c]) || (isnan(want) && isnan(y[c])),
                          "plane of %ld, channel %ld: got %a want %a", (long)n, (long)c, y[c], want);
                if (!specials) {
                    double sum = 0.0, mag = 0.0;
                    for (int64_t i = 0; i < n; i++) sum += x[c * n + i], mag += fabs(x[c * n + i]);
                    cr_assert(fabs(y[c] - sum / (double)n) <= 1e-6 * mag / (double)n + 1e-30,
                              "plane of %ld: %g against %g in double", (long)n, y[c], sum / (double)n);
                }
            }
            free(buf);
        }
}

/* 2-D f32 average pooling (rk_conv.c avgpool2d_plane, vectors of outputs
 * on the interior columns with AVX-512): every output must carry the bits
 * of the definition the generic path computes, the window's taps inside
 * the input summed in float from +0 (rows, then columns) and divided in
 * float by their count (with count_include_pad, the taps inside the padded
 * extent). Kernels 1 to 4 by 1 to 3, strides 1 to 3, pads 0 to 2 at either
 * end (outputs past the input as ceil_mode makes them), widths 1 to 37,
 * random values with some infinities and a NaN. */
Test(pool_nd, average_2d_bits) {
    for (int64_t w = 1; w <= 37; w += 3)
        for (int64_t k = 1; k <= 4; k++)
            for (int64_t s = 1; s <= 3; s++)
                for (int64_t pad = 0; pad <= 2 && pad < k; pad++)
                    for (int cip = 0; cip < 2; cip++) {
                        int64_t h = 5 + w % 4, kh = k > 2 ? k - 1 : k, nc = 3;
                        int64_t oh = (h + 2 * pad - kh + s - 1) / s + 1, ow = (w + 2 * pad - k + s - 1) / s + 1;
                        if ((oh - 1) * s >= h + pad) oh--;   /* ceil_mode: no window starting in the end pad */
                        if ((ow - 1) * s >= w + pad) ow--;
                        if (oh < 1 || ow < 1) continue;
                        float *x = malloc((size_t)(nc * h * w) * sizeof(float)), *y = malloc((size_t)(nc * oh * ow) * sizeof(float));
                        for (int64_t i = 0; i < nc * h * w; i++) {
                            uint32_t r = next();
                            x[i] = r % 211 == 0 ? (r % 2 ? INFINITY : -INFINITY) : ((float)(r % 20001) - 10000.0f) / 77.0f;
                        }
                        if (w > 10) x[7] = nan_with(5);
                        rk_pool_nd_params p;
                        memset(&p, 0, sizeof p);
                        p.dtype = RLX_F32, p.op = 1, p.nc = nc, p.count_include_pad = cip;
                        p.in_dims[0] = 1, p.in_dims[1] = h, p.in_dims[2] = w;
                        p.out_dims[0] = 1, p.out_dims[1] = oh, p.out_dims[2] = ow;
                        p.k[0] = 1, p.k[1] = kh, p.k[2] = k;
                        p.s[0] = 1, p.s[1] = s, p.s[2] = s;
                        p.d[0] = p.d[1] = p.d[2] = 1;
                        p.pb[1] = p.pb[2] = pad, p.pe[1] = p.pe[2] = pad;
                        cr_assert_eq(rk_pool_nd(NULL, &p, (const void *const[]){x}, OUT(y)), RLX_OK);
                        for (int64_t c = 0; c < nc; c++)
                            for (int64_t oy = 0; oy < oh; oy++)
                                for (int64_t ox = 0; ox < ow; ox++) {
                                    float sum = 0.0f;
                                    int64_t taps = 0, padded = 0;
                                    for (int64_t iy = oy * s - pad; iy < oy * s - pad + kh; iy++)
                                        for (int64_t ix = ox * s - pad; ix < ox * s - pad + k; ix++) {
                                            padded += iy < h + pad && ix < w + pad;
                                            if (iy >= 0 && iy < h && ix >= 0 && ix < w) sum += x[(c * h + iy) * w + ix], taps++;
                                        }
                                    int64_t count = cip ? padded : taps;
                                    float want = count ? sum / (float)count : 0.0f, got = y[(c * oh + oy) * ow + ox];
                                    cr_assert(bits(want) == bits(got) || (isnan(want) && isnan(got)),
                                              "w %ld k %ldx%ld s %ld pad %ld cip %d (%ld,%ld,%ld): got %a want %a", (long)w,
                                              (long)kh, (long)k, (long)s, (long)pad, cip, (long)c, (long)oy, (long)ox, got,
                                              want);
                                }
                        free(x), free(y);
                    }
}
