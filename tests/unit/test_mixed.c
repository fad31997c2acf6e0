/* test_mixed.c - storage conversions and the kernels over f16, bf16 and
 * int8 operands (rk_mixed.c, softmax and LayerNorm's typed paths).
 *
 * Conversions: f32 -> f16 and f32 -> bf16 round to nearest even at the
 * ties, overflow to inf at the right point, keep NaN a NaN (a NaN whose
 * payload is only in the low bits must not become inf), keep the sign of
 * zero and of inf, and produce subnormals; every one of the 65536 f16 and
 * bf16 values survives the round trip through f32.
 *
 * Kernels: MatMul, Gemm, 2-D convolutions (the GEMM path and the direct one
 * for depthwise), the fused 1x1 + depthwise bands, softmax and LayerNorm, each
 * with operands stored in f16, bf16 or int8 with per-channel scales, against
 * a double-precision reference computed here from the same stored values
 * (decoded: the reference sees exactly what the kernel reads). The bound is
 * one rounding of the stored output (2^-11 relative for f16, 2^-8 for bf16)
 * plus the f32 sums' error. The results must not change with the thread
 * count, bit for bit.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

static uint32_t rng_state = 12345u;
static float rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

static float f32_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- conversions ---- */

Test(mixed, f16_rounding) {
    cr_assert_eq(rlx_f32_to_f16(1.0f), 0x3c00);
    cr_assert_eq(rlx_f32_to_f16(1.0f + 0x1p-11f), 0x3c00, "a tie rounds to the even 1.0");
    cr_assert_eq(rlx_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02, "a tie rounds up to the even mantissa");
    cr_assert_eq(rlx_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01, "above the tie rounds up");
    cr_assert_eq(rlx_f32_to_f16(65504.0f), 0x7bff);
    cr_assert_eq(rlx_f32_to_f16(65519.0f), 0x7bff, "below the overflow tie");
    cr_assert_eq(rlx_f32_to_f16(65520.0f), 0x7c00, "the overflow tie goes to inf (65504 is odd)");
    cr_assert_eq(rlx_f32_to_f16(-INFINITY), 0xfc00);
    cr_assert_eq(rlx_f32_to_f16(-0.0f), 0x8000);
    cr_assert_eq(rlx_f32_to_f16(0x1p-24f), 0x0001, "the smallest subnormal");
    cr_assert_eq(rlx_f32_to_f16(0x1p-25f), 0x0000, "half of it ties to even 0");
    cr_assert_eq(rlx_f32_to_f16(0x1p-25f + 0x1p-40f), 0x0001);
    cr_assert_eq(rlx_f32_to_f16(3 * 0x1p-25f), 0x0002, "1.5 subnormal ulps tie to 2");
    uint16_t n = rlx_f32_to_f16(f32_of(0x7f800001u));
    cr_assert((n & 0x7c00) == 0x7c00 && (n & 0x3ff), "a low-payload NaN stays NaN: %04x", n);
    cr_assert(rlx_f32_to_f16(f32_of(0xffc00000u)) & 0x8000, "a negative NaN keeps its sign");
}

Test(mixed, bf16_rounding) {
    cr_assert_eq(rlx_f32_to_bf16(1.0f), 0x3f80);
    cr_assert_eq(rlx_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80, "tie to even");
    cr_assert_eq(rlx_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82, "tie to even, up");
    cr_assert_eq(rlx_f32_to_bf16(f32_of(0x7f7fffffu)), 0x7f80, "the largest float rounds to inf");
    cr_assert_eq(rlx_f32_to_bf16(-0.0f), 0x8000);
    cr_assert_eq(rlx_f32_to_bf16(INFINITY), 0x7f80);
    uint16_t n = rlx_f32_to_bf16(f32_of(0x7f800001u));
    cr_assert((n & 0x7f80) == 0x7f80 && (n & 0x7f), "a low-payload NaN stays NaN: %04x", n);
    cr_assert_eq(rlx_f32_to_bf16(f32_of(0x00000001u)), 0x0000, "the smallest f32 subnormal rounds to 0");
    cr_assert_eq(rlx_f32_to_bf16(f32_of(0x00018000u)), 0x0002, "a subnormal tie to even");
}

Test(mixed, round_trips) {
    for (uint32_t h = 0; h < 65536; h++) {
        float f = rlx_f16_to_f32((uint16_t)h);
        if (isnan(f)) {
            cr_assert(isnan(rlx_f16_to_f32(rlx_f32_to_f16(f))));
            continue;
        }
        cr_assert_eq(rlx_f32_to_f16(f), h, "f16 %04x", h);
        float b = rlx_bf16_to_f32((uint16_t)h);
        if (!isnan(b)) cr_assert_eq(rlx_f32_to_bf16(b), h, "bf16 %04x", h);
    }
}

/* ---- typed tensors ---- */

typedef struct {
    int dt;
    int64_t n;
    void *data;
    float *scale;   /* int8: per channel */
} Tensor;

static size_t esize(int dt) { return (size_t)rlx_dtype_size(dt); }

/* n random values stored as dt (int8: q in [-127, 127] and nch scales). */
static Tensor make(int dt, int64_t n, int64_t nch) {
    Tensor t = {dt, n, calloc((size_t)(n > 0 ? n : 1), 8), NULL};
    cr_assert(t.data);
    for (int64_t i = 0; i < n; i++) {
        float v = rnd();
        uint8_t *p = t.data;
        switch (dt) {
        case RLX_F16: { uint16_t h = rlx_f32_to_f16(v); memcpy(p + 2 * i, &h, 2); break; }
        case RLX_BF16: { uint16_t h = rlx_f32_to_bf16(v); memcpy(p + 2 * i, &h, 2); break; }
        case RLX_I8: p[i] = (uint8_t)(int8_t)lrintf(v * 127.0f); break;
        default: memcpy(p + 4 * i, &v, 4);
        }
    }
    if (dt == RLX_I8) {
        t.scale = malloc(sizeof(float) * (size_t)nch);
        for (int64_t c = 0; c < nch; c++) t.scale[c] = (1.5f + rnd()) / 127.0f;
    }
    return t;
}

/* element i as the kernel reads it, scaled by channel ch (int8) */
static double at(const Tensor *t, int64_t i, int64_t ch) {
    const uint8_t *p = t->data;
    switch (t->dt) {
    case RLX_F16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return rlx_f16_to_f32(h); }
    case RLX_BF16: { uint16_t h; memcpy(&h, p + 2 * i, 2); return rlx_bf16_to_f32(h); }
    case RLX_I8: return (double)(float)((float)(int8_t)p[i] * t->scale[ch]);
    default: { float f; memcpy(&f, p + 4 * i, 4); return f; }
    }
}

/* |got - want| within one rounding into dt plus the f32 sums' error (mag: sum of |terms|) */
static void near(const Tensor *y, int64_t i, double want, double mag, const char *what) {
    double got = at(y, i, 0);
    double ulp = y->dt == RLX_F16 ? 0x1p-11 : y->dt == RLX_BF16 ? 0x1p-8 : 0x1p-24;
    double tol = fabs(want) * ulp + mag * 64 * 0x1p-24 + (y->dt == RLX_F16 ? 0x1p-24 : 0.0);
    cr_assert(fabs(got - want) <= tol, "%s[%lld]: %.9g, want %.9g (tolerance %.3g)", what, (long long)i, got, want,
              tol);
}

static void *pool_ctx(rk_ctx *ctx, int nt, size_t per) {
    static rk_pool *pool;
    if (!pool) cr_assert_eq(rk_pool_new(4, &pool), 0);
    void *scratch = malloc(per * (size_t)nt);
    cr_assert(scratch);
    *ctx = (rk_ctx){nt, nt > 1 ? pool : NULL, scratch, per};
    return scratch;
}

static int same_bits(const Tensor *a, const Tensor *b) {
    return !memcmp(a->data, b->data, (size_t)a->n * esize(a->dt));
}

/* ---- MatMul ---- */

static void matmul_case(int64_t m, int64_t n, int64_t k, int adt, int bdt, int ydt, int with_res, int act) {
    Tensor a = make(adt, m * k, 0), b = make(bdt, k * n, n), res = make(ydt, m * n, 0);
    float *bias = malloc(sizeof(float) * (size_t)n);
    for (int64_t j = 0; j < n; j++) bias[j] = rnd();
    Tensor y1 = make(ydt, m * n, 0), y3 = make(ydt, m * n, 0);
    rk_matmul_f32_params p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.has_bias = 1, p.has_res = with_res, p.act = act;
    p.a_dtype = adt, p.b_dtype = bdt, p.y_dtype = ydt, p.r_dtype = with_res ? ydt : RLX_F32;
    const void *in[5];
    int ni = 0;
    in[ni++] = a.data;
    in[ni++] = b.data;
    in[ni++] = bias;
    if (with_res) in[ni++] = res.data;
    if (bdt == RLX_I8) in[ni++] = b.scale;
    size_t per = rk_mixed_scratch();
    rk_ctx c1, c3;
    void *s1 = pool_ctx(&c1, 1, per), *s3 = pool_ctx(&c3, 3, per);
    cr_assert_eq(rk_matmul_f32(&c1, &p, in, (void *const[]){y1.data}), 0);
    cr_assert_eq(rk_matmul_f32(&c3, &p, in, (void *const[]){y3.data}), 0);
    cr_assert(same_bits(&y1, &y3), "1 and 3 threads differ (%lldx%lldx%lld)", (long long)m, (long long)n,
              (long long)k);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, mag = 0;
            for (int64_t q = 0; q < k; q++) {
                double t = at(&a, i * k + q, 0) * at(&b, q * n + j, j);
                s += t;
                mag += fabs(t);
            }
            s += bias[j];
            if (with_res) s += at(&res, i * n + j, 0);
            if (act == RS_ACT_RELU) s = s > 0 ? s : 0;
            near(&y1, i * n + j, s, mag + fabs(bias[j]) + 1, "matmul");
        }
    free(a.data), free(b.data), free(b.scale), free(res.data), free(bias), free(y1.data), free(y3.data);
    free(s1), free(s3);
}

Test(mixed, matmul) {
    matmul_case(7, 9, 5, RLX_F16, RLX_F32, RLX_F16, 1, RS_ACT_RELU);
    matmul_case(130, 140, 300, RLX_F16, RLX_I8, RLX_F16, 1, RS_ACT_NONE);   /* several tiles and K blocks */
    matmul_case(33, 257, 64, RLX_BF16, RLX_BF16, RLX_BF16, 0, RS_ACT_RELU);
    matmul_case(1, 1000, 512, RLX_F32, RLX_I8, RLX_F32, 0, RS_ACT_NONE);    /* --weights int8 alone */
    matmul_case(16, 16, 16, RLX_F32, RLX_F32, RLX_F16, 1, RS_ACT_NONE);     /* only the output in half */
    matmul_case(600, 40, 70, RLX_F16, RLX_F16, RLX_F16, 1, RS_ACT_NONE);    /* row chunks */
}

/* ---- Gemm: transposed B, alpha and beta * C ---- */

Test(mixed, gemm) {
    int64_t m = 20, n = 37, k = 50;
    Tensor a = make(RLX_F16, m * k, 0), b = make(RLX_I8, n * k, n), y = make(RLX_F16, m * n, 0);
    float *c = malloc(sizeof(float) * (size_t)n);
    for (int64_t j = 0; j < n; j++) c[j] = rnd();
    rk_gemm_f32_params p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.trans_b = 1, p.alpha = 0.5, p.beta = 2.0, p.has_c = 1, p.c_rs = 0, p.c_cs = 1;
    p.a_dtype = RLX_F16, p.b_dtype = RLX_I8, p.y_dtype = RLX_F16;
    rk_ctx ctx;
    void *s = pool_ctx(&ctx, 1, rk_mixed_scratch());
    cr_assert_eq(rk_gemm_f32(&ctx, &p, (const void *const[]){a.data, b.data, c, b.scale}, (void *const[]){y.data}), 0);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double sum = 0, mag = 0;
            for (int64_t q = 0; q < k; q++) {
                double t = at(&a, i * k + q, 0) * at(&b, j * k + q, j);
                sum += t;
                mag += fabs(t);
            }
            near(&y, i * n + j, 0.5 * sum + 2.0 * c[j], mag + 2 * fabs(c[j]), "gemm");
        }
    free(a.data), free(b.data), free(b.scale), free(y.data), free(c), free(s);
}

/* ---- convolutions ---- */

typedef struct {
    int64_t n, c, h, w, oc, kh, kw, sh, sw, pt, pl, dh, dw, group;
} ConvShape;

static void conv_case(ConvShape s, int xdt, int wdt, int ydt) {
    int64_t cg = s.c / s.group, ocg = s.oc / s.group;
    int64_t oh = (s.h + 2 * s.pt - s.dh * (s.kh - 1) - 1) / s.sh + 1, ow = (s.w + 2 * s.pl - s.dw * (s.kw - 1) - 1) / s.sw + 1;
    Tensor x = make(xdt, s.n * s.c * s.h * s.w, 0), w = make(wdt, s.oc * cg * s.kh * s.kw, s.oc);
    Tensor res = make(ydt, s.n * s.oc * oh * ow, 0), y1 = make(ydt, s.n * s.oc * oh * ow, 0), y2 = y1;
    y2.data = calloc((size_t)y1.n, esize(ydt));
    float *bias = malloc(sizeof(float) * (size_t)s.oc);
    for (int64_t o = 0; o < s.oc; o++) bias[o] = rnd();
    rk_conv2d_f32_params p;
    memset(&p, 0, sizeof p);
    p.n = s.n, p.c = s.c, p.h = s.h, p.w = s.w, p.oc = s.oc, p.oh = oh, p.ow = ow, p.kh = s.kh, p.kw = s.kw;
    p.sh = s.sh, p.sw = s.sw, p.pt = s.pt, p.pl = s.pl, p.dh = s.dh, p.dw = s.dw, p.group = s.group;
    p.has_bias = 1, p.has_res = 1, p.act = RS_ACT_RELU;
    p.x_dtype = xdt, p.w_dtype = wdt, p.y_dtype = ydt, p.r_dtype = ydt;
    const void *in[5] = {x.data, w.data, bias, res.data, w.scale};
    rk_ctx c1, c2;
    void *s1 = pool_ctx(&c1, 1, rk_mixed_scratch()), *s2 = pool_ctx(&c2, 2, rk_mixed_scratch());
    cr_assert_eq(rk_conv2d_f32(&c1, &p, in, (void *const[]){y1.data}), 0);
    cr_assert_eq(rk_conv2d_f32(&c2, &p, in, (void *const[]){y2.data}), 0);
    cr_assert(same_bits(&y1, &y2), "1 and 2 threads differ");
    for (int64_t b = 0; b < s.n; b++)
        for (int64_t o = 0; o < s.oc; o++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    int64_t g = o / ocg;
                    double sum = 0, mag = 0;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ki = 0; ki < s.kh; ki++)
                            for (int64_t kj = 0; kj < s.kw; kj++) {
                                int64_t iy = oy * s.sh - s.pt + ki * s.dh, ix = ox * s.sw - s.pl + kj * s.dw;
                                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                                double t = at(&x, ((b * s.c + g * cg + ci) * s.h + iy) * s.w + ix, 0) *
                                           at(&w, ((o * cg + ci) * s.kh + ki) * s.kw + kj, o);
                                sum += t;
                                mag += fabs(t);
                            }
                    int64_t i = ((b * s.oc + o) * oh + oy) * ow + ox;
                    sum += bias[o] + at(&res, i, 0);
                    near(&y1, i, sum > 0 ? sum : 0, mag + 2, "conv");
                }
    free(x.data), free(w.data), free(w.scale), free(res.data), free(y1.data), free(y2.data), free(bias);
    free(s1), free(s2);
}

Test(mixed, conv2d) {
    /* the GEMM path: 3x3, stride 2, padding, several output tiles */
    conv_case((ConvShape){2, 16, 11, 13, 140, 3, 3, 2, 2, 1, 1, 1, 1, 1}, RLX_F16, RLX_I8, RLX_F16);
    conv_case((ConvShape){1, 8, 9, 9, 24, 3, 3, 1, 1, 2, 2, 2, 2, 2}, RLX_BF16, RLX_BF16, RLX_BF16);   /* dilated, grouped */
    conv_case((ConvShape){1, 3, 16, 16, 8, 7, 7, 2, 2, 3, 3, 1, 1, 1}, RLX_F32, RLX_F16, RLX_F16);     /* a stem */
    conv_case((ConvShape){1, 16, 12, 12, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1}, RLX_F16, RLX_F32, RLX_F16);   /* f32 weights in place */
    conv_case((ConvShape){1, 12, 7, 9, 6, 1, 3, 1, 2, 0, 1, 1, 1, 1}, RLX_F16, RLX_I8, RLX_BF16);     /* 6 rows: few-rows loops */
    /* the direct path: depthwise 3x3 and 5x5, a small grouped one */
    conv_case((ConvShape){1, 12, 10, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 12}, RLX_F16, RLX_F32, RLX_F16);
    conv_case((ConvShape){2, 6, 9, 9, 6, 5, 5, 2, 2, 2, 2, 1, 1, 6}, RLX_F16, RLX_F16, RLX_F32);
    conv_case((ConvShape){1, 8, 6, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4}, RLX_BF16, RLX_I8, RLX_F16);
}

/* ---- the fused 1x1 + depthwise 3x3 bands ---- */

Test(mixed, pwdw) {
    int64_t n = 1, c = 5, h = 9, w = 11, e = 7, sh = 2, sw = 1, pt = 1, pl = 1, rows = 2;
    int64_t oh = (h + 2 * pt - 3) / sh + 1, ow = (w + 2 * pl - 3) / sw + 1;
    Tensor x = make(RLX_F16, n * c * h * w, 0), w1 = make(RLX_I8, e * c, e), y1 = make(RLX_F16, n * e * oh * ow, 0);
    Tensor y2 = y1;
    y2.data = calloc((size_t)y1.n, 2);
    float *b1 = malloc(sizeof(float) * (size_t)e), *w2 = malloc(sizeof(float) * (size_t)e * 9),
          *b2 = malloc(sizeof(float) * (size_t)e);
    for (int64_t i = 0; i < e; i++) b1[i] = rnd(), b2[i] = rnd();
    for (int64_t i = 0; i < e * 9; i++) w2[i] = rnd();
    rk_conv_pwdw_f32_params p;
    memset(&p, 0, sizeof p);
    p.n = n, p.c = c, p.h = h, p.w = w, p.e = e, p.has_b1 = 1, p.act1 = RS_ACT_RELU, p.oh = oh, p.ow = ow;
    p.sh = sh, p.sw = sw, p.pt = pt, p.pl = pl, p.has_b2 = 1, p.act2 = RS_ACT_CLIP, p.act2_a = 0, p.act2_b = 6, p.rows = rows;
    p.x_dtype = RLX_F16, p.w1_dtype = RLX_I8, p.y_dtype = RLX_F16;
    size_t per = rk_conv_pwdw_mixed_scratch(e, w, ow, sh, rows);
    rk_ctx c1, c2;
    void *s1 = pool_ctx(&c1, 1, per), *s2 = pool_ctx(&c2, 2, per);
    const void *in[] = {x.data, w1.data, b1, w2, b2, w1.scale};
    cr_assert_eq(rk_conv_pwdw_f32(&c1, &p, in, (void *const[]){y1.data}), 0);
    cr_assert_eq(rk_conv_pwdw_f32(&c2, &p, in, (void *const[]){y2.data}), 0);
    cr_assert(same_bits(&y1, &y2), "1 and 2 threads differ");
    rk_ctx small = c1;
    small.scratch_per_thread = per - 1;
    cr_assert_eq(rk_conv_pwdw_f32(&small, &p, in, (void *const[]){y1.data}), RLX_E_ARG, "too little scratch");
    double *mid = malloc(sizeof(double) * (size_t)(e * h * w));
    for (int64_t ch = 0; ch < e; ch++)
        for (int64_t i = 0; i < h * w; i++) {
            double s = b1[ch];
            for (int64_t q = 0; q < c; q++) s += at(&w1, ch * c + q, ch) * at(&x, q * h * w + i, 0);
            mid[ch * h * w + i] = s > 0 ? s : 0;
        }
    cr_assert_eq(rk_conv_pwdw_f32(&c1, &p, in, (void *const[]){y1.data}), 0);
    for (int64_t ch = 0; ch < e; ch++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                double s = b2[ch], mag = fabs(b2[ch]);
                for (int64_t ki = 0; ki < 3; ki++)
                    for (int64_t kj = 0; kj < 3; kj++) {
                        int64_t iy = oy * sh - pt + ki, ix = ox * sw - pl + kj;
                        if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                        s += w2[ch * 9 + ki * 3 + kj] * mid[(ch * h + iy) * w + ix];
                        mag += fabs(w2[ch * 9 + ki * 3 + kj] * mid[(ch * h + iy) * w + ix]);
                    }
                s = s < 0 ? 0 : s > 6 ? 6 : s;
                near(&y1, (ch * oh + oy) * ow + ox, s, mag + (double)c * 4, "pwdw");
            }
    free(x.data), free(w1.data), free(w1.scale), free(y1.data), free(y2.data), free(b1), free(w2), free(b2), free(mid);
    free(s1), free(s2);
}

/* ---- softmax and LayerNorm over half storage ---- */

Test(mixed, softmax_layernorm) {
    int64_t outer = 3, len = 37, inner = 2;
    Tensor x = make(RLX_F16, outer * len * inner, 0), y = make(RLX_F16, outer * len * inner, 0);
    for (int lg = 0; lg < 2; lg++) {
        rk_softmax_f32_params p = {outer, len, inner, lg, RLX_F16};
        cr_assert_eq(rk_softmax_f32(NULL, &p, (const void *const[]){x.data}, (void *const[]){y.data}), 0);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                double mx = -INFINITY, sum = 0;
                for (int64_t a = 0; a < len; a++) mx = fmax(mx, at(&x, (o * len + a) * inner + i, 0));
                for (int64_t a = 0; a < len; a++) sum += exp(at(&x, (o * len + a) * inner + i, 0) - mx);
                for (int64_t a = 0; a < len; a++) {
                    double d = at(&x, (o * len + a) * inner + i, 0) - mx;
                    near(&y, (o * len + a) * inner + i, lg ? d - log(sum) : exp(d) / sum, 4, "softmax");
                }
            }
    }
    int64_t rows = 4, n = 50;
    Tensor lx = make(RLX_BF16, rows * n, 0), ly = make(RLX_BF16, rows * n, 0), sc = make(RLX_F32, n, 0);
    rk_layernorm_f32_params q;
    memset(&q, 0, sizeof q);
    q.outer = rows, q.inner = n, q.eps = 1e-5, q.nrank = 1, q.ndims[0] = n, q.scale_strides[0] = 1;
    q.dtype = RLX_BF16, q.w_dtype = RLX_F32;
    cr_assert_eq(rk_layernorm_f32(NULL, &q, (const void *const[]){lx.data, sc.data}, (void *const[]){ly.data}), 0);
    for (int64_t r = 0; r < rows; r++) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < n; i++) mean += at(&lx, r * n + i, 0);
        mean /= (double)n;
        for (int64_t i = 0; i < n; i++) var += pow(at(&lx, r * n + i, 0) - mean, 2);
        var /= (double)n;
        for (int64_t i = 0; i < n; i++)
            near(&ly, r * n + i, (at(&lx, r * n + i, 0) - mean) / sqrt(var + 1e-5) * at(&sc, i, 0), 64, "layernorm");
    }
    free(x.data), free(y.data), free(lx.data), free(ly.data), free(sc.data);
}

/* ---- refusals ---- */

Test(mixed, bad_params) {
    rk_matmul_f32_params p;
    memset(&p, 0, sizeof p);
    p.m = p.n = p.k = 1;
    p.a_dtype = RLX_I8;   /* activations are never int8 */
    float a = 1, b = 1, y = 0;
    rk_ctx ctx;
    void *s = pool_ctx(&ctx, 1, rk_mixed_scratch());
    cr_assert_eq(rk_matmul_f32(&ctx, &p, (const void *const[]){&a, &b}, (void *const[]){&y}), RLX_E_ARG);
    p.a_dtype = RLX_F16;
    ctx.scratch_per_thread = rk_mixed_scratch() - 1;
    cr_assert_eq(rk_matmul_f32(&ctx, &p, (const void *const[]){&a, &b}, (void *const[]){&y}), RLX_E_ARG,
                 "too little scratch");
    free(s);
}
