/* test_vmath.c - rlx_vmath.h's f32 transcendentals: accuracy against libm,
 * and the same bits in every instance.
 *
 * Accuracy: each function against libm's double-precision result (exp,
 * log, tanh, erf, 1/(1+exp(-x))), in ulps of the float result, over all
 * floats of both signs one in every RLX_VMATH_STEP bit patterns (default
 * 997; RLX_VMATH_STEP=1 checks all 2^32), plus each function's special
 * inputs: NaN (its sign and payload), +-0, +-inf, subnormals, FLT_MIN and
 * FLT_MAX, and the points where the result saturates or the method changes
 * (exp's overflow at 88.72, its subnormal results below -87.34 and 0 below
 * -103.97; tanh's 0.55 and its saturation near 9; erf's 0.875, 4 and
 * saturation near 3.9; log's sqrt(2) and FLT_MIN), with the floats around
 * each. NaN in gives NaN out; infinities give the limits.
 *
 * Bits: the scalar instance (rs_f*, what generated code and rlxc's
 * constant folding compute) against the AVX2 and AVX-512 ones (rk_v8_*,
 * rk_v16_*) where this build has them (build/unit_avx2, build/unit_avx512
 * compile this file for those sets): every lane must equal the scalar
 * result bit for bit, NaNs included, on vectors that mix the two sides of
 * each function's branch (so that skipping a side no lane takes, which the
 * vector instances do, is checked too). And rs_act's vector forms (rk_v*_act)
 * against rs_act for every activation code.
 *
 * The bounds below: exp 1, log 1, tanh 2, erf 2, sigmoid 3, SiLU 4 ulp
 * (rlx_vmath.h states them); the default sampled run measures 0.94, 0.79,
 * 1.49, 1.07, 2.18 and 2.82 (`build/unit/test_vmath --verbose` prints each
 * maximum; RLX_VMATH_STEP=1 checks every float).
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_vmath.h"
#include "rlx_scalar.h"

static uint32_t bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static float from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* |got - want| in ulps of the float nearest want (2^-149 in the subnormal
 * range); an infinite got counts as 2^128, so a result that overflows one
 * step early is off by the distance from FLT_MAX. */
static double ulp_error(float got, double want) {
    if (isnan(want)) return isnan(got) ? 0.0 : INFINITY;
    if (isnan(got)) return INFINITY;
    if (fabs(want) >= 0x1.ffffffp127) want = copysign(INFINITY, want);   /* rounds to inf */
    if (isinf(want)) return got == want ? 0.0 : fabs(got) == FLT_MAX ? 1.0 : INFINITY;
    double g = isinf(got) ? copysign(ldexp(1.0, 128), got) : got;
    int e;
    frexp(want, &e);   /* want = m 2^e, 0.5 <= |m| < 1 */
    if (e - 1 < -126) e = -125;
    double ulp = ldexp(1.0, e - 1 - 23);
    return fabs(g - want) / ulp;
}

typedef struct {
    const char *name;
    float (*f)(float);
    double (*ref)(double);
    double bound;   /* ulps */
    float lo;       /* measured for x >= lo only (-INFINITY: all) */
} Fn;

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_silu(double x) { return x / (1.0 + exp(-x)); }

static uint32_t step_from_env(void) {
    const char *s = getenv("RLX_VMATH_STEP");
    long v = s ? strtol(s, NULL, 10) : 997;
    return v >= 1 ? (uint32_t)v : 997u;
}

/* the special inputs, with the 8 floats on each side of each */
static const float specials[] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 88.7228394f, 88.7228317f, -87.3365479f,
                                 -103.972076f, -103.278931f, 104.0f, -104.0f, 89.0f, 0.55f, -0.55f, 9.01f,
                                 -9.01f, 0.875f, -0.875f, 3.8325f, -3.8325f, 3.92f, 4.0f, -4.0f, 1.41421354f,
                                 0.707106769f, 1.17549435e-38f, 3.40282347e38f, 1e-30f, 1e-10f, 1e-4f, 20.0f,
                                 -20.0f, 15.0f};

static double max_error(const Fn *fn, uint32_t step, float *worst) {
    double m = 0;
    for (uint64_t u = 0; u <= 0xffffffffu; u += step) {
        float x = from_bits((uint32_t)u);
        if (!(x >= fn->lo) && !isnan(x)) continue;
        double e = ulp_error(fn->f(x), fn->ref((double)x));
        if (e > m) {
            m = e;
            *worst = x;
        }
    }
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        for (int s = -8; s <= 8; s++)
            for (int sign = 0; sign < 2; sign++) {
                float x = from_bits(bits(specials[i]) + (uint32_t)s);
                if (sign) x = -x;
                if (!(x >= fn->lo) && !isnan(x)) continue;
                double e = ulp_error(fn->f(x), fn->ref((double)x));
                if (e > m) {
                    m = e;
                    *worst = x;
                }
            }
    return m;
}

static void check_accuracy(const Fn *fn) {
    float worst = 0;
    double m = max_error(fn, step_from_env(), &worst);
    cr_log_info("%s: max error %.3f ulp at %a", fn->name, m, (double)worst);
    cr_expect(m <= fn->bound, "%s: %.3f ulp at %a (%.9g): got %.9g, libm %.9g", fn->name, m, (double)worst,
              (double)worst, (double)fn->f(worst), fn->ref((double)worst));
}

Test(vmath, exp_accuracy) {
    Fn fn = {"exp", rs_fexp, exp, 1.0, -INFINITY};
    check_accuracy(&fn);
}
Test(vmath, log_accuracy) {
    Fn fn = {"log", rs_flog, log, 1.0, -INFINITY};
    check_accuracy(&fn);
}
Test(vmath, tanh_accuracy) {
    Fn fn = {"tanh", rs_ftanh, tanh, 2.0, -INFINITY};
    check_accuracy(&fn);
}
Test(vmath, erf_accuracy) {
    Fn fn = {"erf", rs_ferf, erf, 2.0, -INFINITY};
    check_accuracy(&fn);
}
Test(vmath, sigmoid_accuracy) {
    Fn fn = {"sigmoid", rs_fsigmoid, ref_sigmoid, 3.0, -INFINITY};
    check_accuracy(&fn);
}
Test(vmath, silu_accuracy) {
    /* x * sigmoid(x): one more rounding; below -87 sigmoid(x) is
     * subnormal, and so less precise than x, as in the graph's own ops */
    Fn fn = {"silu", rs_fsilu, ref_silu, 4.0, -87.0f};
    check_accuracy(&fn);
}

/* The values libm and IEEE fix exactly. */
Test(vmath, special_values) {
    float nan = from_bits(0x7fc00000u), nnan = from_bits(0xffc00123u);
    float (*fs[])(float) = {rs_fexp, rs_flog, rs_ftanh, rs_ferf, rs_fsigmoid, rs_fsilu, rs_fgelu, rs_fhardswish};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) {
        cr_expect(isnan(fs[i](nan)), "function %zu of NaN", i);
        cr_expect(isnan(fs[i](nnan)), "function %zu of -NaN", i);
    }
    cr_expect(rs_fexp(0.0f) == 1.0f && rs_fexp(-0.0f) == 1.0f);
    cr_expect(rs_fexp(INFINITY) == INFINITY && rs_fexp(-INFINITY) == 0.0f && bits(rs_fexp(-INFINITY)) == 0);
    cr_expect(rs_fexp(88.7228394f) == INFINITY && isfinite(rs_fexp(88.7228317f)));
    cr_expect(rs_fexp(-104.0f) == 0.0f && rs_fexp(-103.0f) > 0.0f && rs_fexp(-103.0f) < FLT_MIN);
    cr_expect(rs_flog(1.0f) == 0.0f && bits(rs_flog(1.0f)) == 0);
    cr_expect(rs_flog(0.0f) == -INFINITY && rs_flog(-0.0f) == -INFINITY);
    cr_expect(isnan(rs_flog(-1.0f)) && isnan(rs_flog(-INFINITY)) && isnan(rs_flog(-1e-45f)));
    cr_expect(rs_flog(INFINITY) == INFINITY);
    cr_expect(rs_flog(1e-45f) < -103.0f && rs_flog(1e-45f) > -104.0f);
    cr_expect(rs_ftanh(INFINITY) == 1.0f && rs_ftanh(-INFINITY) == -1.0f && rs_ftanh(20.0f) == 1.0f);
    cr_expect(bits(rs_ftanh(-0.0f)) == 0x80000000u && bits(rs_ftanh(0.0f)) == 0);
    cr_expect(rs_ftanh(1e-45f) == 1e-45f && rs_ftanh(-1e-40f) == -1e-40f);
    cr_expect(rs_ferf(INFINITY) == 1.0f && rs_ferf(-INFINITY) == -1.0f && rs_ferf(3.95f) == 1.0f);
    cr_expect(bits(rs_ferf(-0.0f)) == 0x80000000u && bits(rs_ferf(0.0f)) == 0);
    cr_expect(rs_ferf(1e-40f) > 0.0f && rs_ferf(-1e-40f) < 0.0f);
    cr_expect(rs_fsigmoid(INFINITY) == 1.0f && rs_fsigmoid(-INFINITY) == 0.0f && rs_fsigmoid(0.0f) == 0.5f);
    cr_expect(rs_fsigmoid(-100.0f) > 0.0f && rs_fsigmoid(-100.0f) < FLT_MIN);   /* subnormal, not 0 */
    cr_expect(rs_fsilu(INFINITY) == INFINITY && isnan(rs_fsilu(-INFINITY)));   /* -inf * 0, as the graph's Mul */
    cr_expect(rs_fgelu(INFINITY) == INFINITY && rs_fgelu(0.0f) == 0.0f);
    cr_expect(rs_fhardswish(3.0f) == 3.0f && rs_fhardswish(-3.0f) == 0.0f);
}

/* GELU and SiLU are their patterns' ops in order (fused = unfused), and
 * rs_act's codes are those functions. */
Test(vmath, compositions) {
    for (uint64_t u = 0; u <= 0xffffffffu; u += 7919) {
        float x = from_bits((uint32_t)u);
        float gelu = (x * (rs_ferf(x / 1.41421354f) + 1.0f)) * 0.5f;
        float silu = x * rs_fsigmoid(x);
        cr_assert(bits(rs_fgelu(x)) == bits(gelu) || (isnan(gelu) && isnan(rs_fgelu(x))), "gelu %a", (double)x);
        cr_assert(bits(rs_fsilu(x)) == bits(silu) || (isnan(silu) && isnan(rs_fsilu(x))), "silu %a", (double)x);
        cr_assert(bits(rs_act(x, RS_ACT_GELU, 0, 0)) == bits(rs_fgelu(x)) || isnan(x));
        cr_assert(bits(rs_act(x, RS_ACT_SILU, 0, 0)) == bits(rs_fsilu(x)) || isnan(x));
        cr_assert(bits(rs_act(x, RS_ACT_SIGMOID, 0, 0)) == bits(rs_sigmoid(x)) || isnan(x));
        cr_assert(bits(rs_act(x, RS_ACT_TANH, 0, 0)) == bits(rs_tanh(x)) || isnan(x));
    }
}

/* ---- the vector instances ---- */

static int same_bits(float a, float b) { return bits(a) == bits(b); }

/* Inputs for the vector checks: the strided sweep, then the specials
 * (and their neighbours) shuffled among ordinary values, so that vectors
 * hold both sides of each branch. */
static float *vector_inputs(size_t *n) {
    uint32_t step = step_from_env() * 13;
    size_t cap = (size_t)(0x100000000ull / step) + 4096;
    float *x = malloc(cap * sizeof(float));
    size_t k = 0;
    for (uint64_t u = 0; u <= 0xffffffffu && k < cap; u += step) x[k++] = from_bits((uint32_t)u);
    uint32_t r = 12345u;
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        for (int s = -8; s <= 8 && k + 2 < cap; s++) {
            r = r * 1664525u + 1013904223u;
            x[k++] = from_bits(bits(specials[i]) + (uint32_t)s);
            x[k++] = -from_bits(bits(specials[i]) + (uint32_t)s) * (float)(r >> 31);
        }
    x[k++] = from_bits(0x7fc00000u);
    x[k++] = from_bits(0xffc00123u);
    x[k++] = INFINITY;
    x[k++] = -INFINITY;
    /* shuffle (fixed seed) so that each vector mixes them */
    for (size_t i = k - 1; i > 0; i--) {
        r = r * 1664525u + 1013904223u;
        size_t j = r % (i + 1);
        float t = x[i];
        x[i] = x[j];
        x[j] = t;
    }
    *n = k;
    return x;
}

#if defined(__AVX2__) || defined(__AVX512F__)
/* out[l] against ref(x[l]) bit for bit, for the n lanes of a vector check */
static void lanes_same_bits(const char *name, const float *x, const float *out, int n, float (*ref)(float)) {
    for (int l = 0; l < n; l++)
        cr_assert(same_bits(out[l], ref(x[l])), "%s at %a: %a vs %a", name, (double)x[l], (double)out[l],
                  (double)ref(x[l]));
}
#endif

#define VEC_FUNCS(X) X(exp) X(log) X(tanh) X(erf) X(sigmoid) X(silu) X(gelu) X(hardswish)
#define VEC_FUNCS_X4(X) X(exp) X(log) X(tanh) X(erf) X(sigmoid) X(silu) X(gelu)

#if defined(__AVX512F__)
Test(vmath, avx512_same_bits) {
    size_t n;
    float *x = vector_inputs(&n);
    float out[16];
    for (size_t i = 0; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
#define CHECK16(name)                                                                             \
        _mm512_storeu_ps(out, rk_v16_##name(v));                                                  \
        lanes_same_bits(#name, x + i, out, 16, rs_f##name);
        VEC_FUNCS(CHECK16)
        for (int act = RS_ACT_NONE; act <= RS_ACT_GELU; act++) {
            _mm512_storeu_ps(out, rk_v16_act(v, act, -0.5f, 6.0f));
            for (int l = 0; l < 16; l++)
                cr_assert(same_bits(out[l], rs_act(x[i + l], act, -0.5f, 6.0f)), "act %d at %a", act,
                          (double)x[i + l]);
        }
    }
    free(x);
}
#endif

#if defined(__AVX512F__)
/* The four-vector instance (rk_v16x4_*, its operations interleaved) and
 * rk_v16x4_act, lane for lane the scalar bits too; the vectors of a call
 * hold different inputs, so a lane taken from the wrong vector fails. */
Test(vmath, avx512x4_same_bits) {
    size_t n;
    float *x = vector_inputs(&n);
    float out[64];
    for (size_t i = 0; i + 64 <= n; i += 64) {
        rk_v16x4 v;
        for (int q = 0; q < 4; q++) v.v[q] = _mm512_loadu_ps(x + i + 16 * q);
#define CHECK64(name)                                                                             \
        {                                                                                         \
            rk_v16x4 r = rk_v16x4_##name(v);                                                      \
            for (int q = 0; q < 4; q++) _mm512_storeu_ps(out + 16 * q, r.v[q]);                   \
            lanes_same_bits(#name " x4", x + i, out, 64, rs_f##name);                             \
        }
        VEC_FUNCS_X4(CHECK64)
        for (int act = RS_ACT_NONE; act <= RS_ACT_GELU; act++) {
            rk_v16x4 r = rk_v16x4_act(v, act);
            for (int q = 0; q < 4; q++) _mm512_storeu_ps(out + 16 * q, r.v[q]);
            for (int l = 0; l < 64; l++) {
                float want = rk_act_exp(act) ? rs_act(x[i + l], act, 0.0f, 0.0f) : x[i + l];
                cr_assert(same_bits(out[l], want), "act %d x4 at %a", act, (double)x[i + l]);
            }
        }
    }
    free(x);
}
#endif

#if defined(__AVX2__)
Test(vmath, avx2_same_bits) {
    size_t n;
    float *x = vector_inputs(&n);
    float out[8];
    for (size_t i = 0; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
#define CHECK8(name)                                                                              \
        _mm256_storeu_ps(out, rk_v8_##name(v));                                                   \
        lanes_same_bits(#name, x + i, out, 8, rs_f##name);
        VEC_FUNCS(CHECK8)
        for (int act = RS_ACT_NONE; act <= RS_ACT_GELU; act++) {
            _mm256_storeu_ps(out, rk_v8_act(v, act, -0.5f, 6.0f));
            for (int l = 0; l < 8; l++)
                cr_assert(same_bits(out[l], rs_act(x[i + l], act, -0.5f, 6.0f)), "act %d at %a", act,
                          (double)x[i + l]);
        }
    }
    free(x);
}
#endif

/* A loop a compiler vectorizes from the scalar instance (this file's flags
 * decide how wide) gives the scalar bits too. */
Test(vmath, loop_same_bits) {
    size_t n;
    float *x = vector_inputs(&n);
    float *y = malloc(n * sizeof(float));
#define CHECK_LOOP(name)                                                                      \
    for (size_t i = 0; i < n; i++) y[i] = rs_f##name(x[i]);                                   \
    for (size_t i = 0; i < n; i++) {                                                          \
        volatile float xi = x[i];                                                             \
        cr_assert(same_bits(y[i], rs_f##name(xi)), #name " at %a", (double)x[i]);             \
    }
    VEC_FUNCS(CHECK_LOOP)
    free(y);
    free(x);
}

/* rk_act_run over runs of every length up to 150 at every offset in a
 * vector (AVX-512: four vectors at a time, then whole vectors, then the
 * last few lanes: masked with AVX2 and AVX-512, one at a time in portable
 * builds) gives rs_act's bits, and writes nothing past the run. */
Test(vmath, act_run_tails_same_bits) {
    size_t n;
    float *x = vector_inputs(&n);
    float y[160];
    const int acts[] = {RS_ACT_RELU, RS_ACT_SIGMOID, RS_ACT_TANH, RS_ACT_SILU, RS_ACT_GELU, RS_ACT_HARDSWISH};
    for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
        for (int64_t len = 0; len <= 150; len++)
            for (int64_t off = 0; off < 8; off++) {
                size_t base = (size_t)(len * 8 + off) * 13 % (n - 160);
                for (int k = 0; k < 160; k++) y[k] = 12345.0f;
                memcpy(y + off, x + base, sizeof(float) * (size_t)len);
                rk_act_run(y + off, len, acts[ai], 0.0f, 6.0f);
                for (int64_t k = 0; k < 160; k++) {
                    float want = k >= off && k < off + len ? rs_act(x[base + k - off], acts[ai], 0.0f, 6.0f) : 12345.0f;
                    cr_assert(same_bits(y[k], want), "act %d len %lld off %lld at %lld: %a vs %a", acts[ai],
                              (long long)len, (long long)off, (long long)k, (double)y[k], (double)want);
                }
            }
    free(x);
}
