/* rk_quant.c - the quant family's kernels: QuantizeLinear and
 * DequantizeLinear (rk_quantize), DynamicQuantizeLinear, MatMulInteger and
 * QLinearMatMul (rk_matmul_integer), ConvInteger and QLinearConv
 * (rk_conv_integer).
 *
 * Scales and zero points are run-time data (a model may feed them as
 * inputs), read per element through the dtype params. Per-axis parameters
 * are indexed by the position along the axis: the tensor is seen as (outer,
 * axis_len, inner).
 *
 * Rounding is half to even (nearbyint in the default rounding mode), then
 * saturation to the output type. Float math follows the references: a
 * quantization of f32 divides in f32 (numpy's x / scale), and a requantized
 * integer product is acc * (s_a * s_b / s_y) in f32, then rounded, then the
 * zero point added, as onnxruntime's requantization does.
 *
 * Integer products accumulate in int32 arithmetic done in int64 and wrapped
 * to 32 bits on store, so an overflow wraps as the int32 reference would.
 * Convolution walks each output element's window; taps in the padding count
 * as x equal to its zero point, i.e. contribute nothing.
 */
#include "rk_rnn.h"

#include <math.h>

static int is_quant_dtype(int64_t dt) {
    return dt == RLX_U8 || dt == RLX_I8 || dt == RLX_U16 || dt == RLX_I16 || dt == RLX_I32;
}

static int64_t saturate(int64_t dt, double v) {
    double lo, hi;
    switch (dt) {
    case RLX_U8: lo = 0, hi = 255; break;
    case RLX_I8: lo = -128, hi = 127; break;
    case RLX_U16: lo = 0, hi = 65535; break;
    case RLX_I16: lo = -32768, hi = 32767; break;
    default: lo = -2147483648.0, hi = 2147483647.0; break;
    }
    if (v != v) return 0;
    return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

static int64_t wrap_i32(int64_t v) { return (int64_t)(int32_t)(uint32_t)(uint64_t)v; }

int rk_quantize(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_quantize_params *p = params;
    (void)ctx;
    int64_t fdt = p->dequantize ? p->y_dtype : p->x_dtype, qdt = p->dequantize ? p->x_dtype : p->y_dtype;
    if (!rk_dtype_is_float(fdt) || !is_quant_dtype(qdt) || p->outer < 0 || p->axis_len < 0 || p->inner < 0)
        return RLX_E_ARG;
    int f32 = fdt == RLX_F32;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t a = 0; a < p->axis_len; a++) {
            int64_t q = p->per_axis ? a : 0;
            double scale = rk_load_f64(fdt, in[1], q);
            int64_t zp = p->has_zp ? rk_load_i64(qdt, in[2], q) : 0;
            for (int64_t i = 0; i < p->inner; i++) {
                int64_t e = (o * p->axis_len + a) * p->inner + i;
                if (p->dequantize) {
                    double x = (double)(rk_load_i64(qdt, in[0], e) - zp);
                    rk_store_f64(fdt, out[0], e, f32 ? (double)((float)x * (float)scale) : x * scale);
                } else {
                    double x = rk_load_f64(fdt, in[0], e);
                    double r = f32 ? (double)nearbyintf((float)x / (float)scale) : nearbyint(x / scale);
                    rk_store_i64(qdt, out[0], e, saturate(qdt, r + (double)zp));
                }
            }
        }
    return RLX_OK;
}

int rk_dynamic_quantize(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_dynamic_quantize_params *p = params;
    (void)ctx;
    if (p->n < 0) return RLX_E_ARG;
    const float *x = in[0];
    float lo = 0.0f, hi = 0.0f;   /* the range always includes 0 */
    for (int64_t i = 0; i < p->n; i++) {
        float v;
        memcpy(&v, x + i, 4);
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    float scale = (hi - lo) / 255.0f;
    int64_t zp = scale != 0.0f ? saturate(RLX_U8, nearbyintf(0.0f - lo / scale)) : 0;
    memcpy(out[1], &scale, 4);
    rk_store_i64(RLX_U8, out[2], 0, zp);
    for (int64_t i = 0; i < p->n; i++) {
        float v;
        memcpy(&v, x + i, 4);
        double q = scale != 0.0f ? (double)nearbyintf(v / scale) : 0.0;
        rk_store_i64(RLX_U8, out[0], i, saturate(RLX_U8, q + (double)zp));
    }
    return RLX_OK;
}

/* One value of a zero point or scale in the given mode (see the .def). */
static int64_t zp_at(int64_t mode, int64_t dt, const void *base, int64_t i) {
    return mode == 0 ? 0 : rk_load_i64(dt, base, mode == 2 ? i : 0);
}
static float scale_at(int64_t mode, const void *base, int64_t i) {
    float s;
    memcpy(&s, (const float *)base + (mode == 2 ? i : 0), 4);
    return s;
}

/* The output element: i32 accumulator, or requantized to y_dtype. */
static void store_result(int64_t qlinear, int64_t y_dtype, void *y, int64_t e, int64_t acc, float multiplier,
                         int64_t y_zp) {
    if (!qlinear) {
        rk_store_i64(RLX_I32, y, e, wrap_i32(acc));
        return;
    }
    float r = nearbyintf((float)wrap_i32(acc) * multiplier);
    rk_store_i64(y_dtype, y, e, saturate(y_dtype, (double)r + (double)y_zp));
}

int rk_matmul_integer(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_matmul_integer_params *p = params;
    (void)ctx;
    if (!is_quant_dtype(p->a_dtype) || !is_quant_dtype(p->b_dtype) || (p->qlinear && !is_quant_dtype(p->y_dtype)))
        return RLX_E_ARG;
    if (p->m < 0 || p->n < 0 || p->k < 0 || p->brank < 0 || p->brank > RK_MAX_RANK) return RLX_E_ARG;
    if (p->qlinear && (!p->a_scale_mode || !p->b_scale_mode)) return RLX_E_ARG;
    int64_t nbatch = 1;
    for (int64_t d = 0; d < p->brank; d++) {
        if (p->bdims[d] < 0) return RLX_E_ARG;
        nbatch *= p->bdims[d];
    }
    float y_scale = 1.0f;
    int64_t y_zp = 0;
    if (p->qlinear) {
        memcpy(&y_scale, in[6], 4);
        y_zp = in[7] ? rk_load_i64(p->y_dtype, in[7], 0) : 0;
    }
    int64_t idx[RK_MAX_RANK] = {0};
    for (int64_t bt = 0; bt < nbatch; bt++) {
        int64_t aoff = 0, boff = 0;
        for (int64_t d = 0; d < p->brank; d++) {
            aoff += idx[d] * p->astride[d];
            boff += idx[d] * p->bstride[d];
        }
        for (int64_t i = 0; i < p->m; i++) {
            int64_t azp = zp_at(p->a_zp_mode, p->a_dtype, in[2], i);
            for (int64_t j = 0; j < p->n; j++) {
                int64_t bzp = zp_at(p->b_zp_mode, p->b_dtype, in[3], j);
                int64_t acc = 0;
                for (int64_t t = 0; t < p->k; t++)
                    acc += (rk_load_i64(p->a_dtype, in[0], aoff + i * p->k + t) - azp) *
                           (rk_load_i64(p->b_dtype, in[1], boff + t * p->n + j) - bzp);
                float mult = 0.0f;
                if (p->qlinear) mult = scale_at(p->a_scale_mode, in[4], i) * scale_at(p->b_scale_mode, in[5], j) / y_scale;
                store_result(p->qlinear, p->y_dtype, out[0], (bt * p->m + i) * p->n + j, acc, mult, y_zp);
            }
        }
        for (int64_t d = p->brank - 1; d >= 0; d--) {
            if (++idx[d] < p->bdims[d]) break;
            idx[d] = 0;
        }
    }
    return RLX_OK;
}

int rk_conv_integer(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_integer_params *p = params;
    (void)ctx;
    if (!is_quant_dtype(p->x_dtype) || !is_quant_dtype(p->w_dtype) || (p->qlinear && !is_quant_dtype(p->y_dtype)))
        return RLX_E_ARG;
    if (p->group < 1 || p->c % p->group || p->oc % p->group || p->n < 0 || p->h < 0 || p->w < 0 || p->oh < 0 ||
        p->ow < 0 || p->kh < 0 || p->kw < 0)
        return RLX_E_ARG;
    if (p->qlinear && !p->w_scale_mode) return RLX_E_ARG;
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    int64_t x_zp = zp_at(p->x_zp_mode, p->x_dtype, in[2], 0);
    float x_scale = 1.0f, y_scale = 1.0f;
    int64_t y_zp = 0;
    if (p->qlinear) {
        memcpy(&x_scale, in[4], 4);
        memcpy(&y_scale, in[6], 4);
        y_zp = in[7] ? rk_load_i64(p->y_dtype, in[7], 0) : 0;
    }
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t o = 0; o < p->oc; o++) {
            int64_t grp = o / ocg;
            int64_t w_zp = zp_at(p->w_zp_mode, p->w_dtype, in[3], o);
            int64_t bias = p->has_bias ? rk_load_i64(RLX_I32, in[8], o) : 0;
            float mult = p->qlinear ? x_scale * scale_at(p->w_scale_mode, in[5], o) / y_scale : 0.0f;
            for (int64_t oy = 0; oy < p->oh; oy++)
                for (int64_t ox = 0; ox < p->ow; ox++) {
                    int64_t acc = bias;
                    for (int64_t ci = 0; ci < cg; ci++) {
                        int64_t xc = grp * cg + ci;
                        for (int64_t ky = 0; ky < p->kh; ky++) {
                            int64_t y = oy * p->sh - p->pt + ky * p->dh;
                            if (y < 0 || y >= p->h) continue;
                            for (int64_t kx = 0; kx < p->kw; kx++) {
                                int64_t x = ox * p->sw - p->pl + kx * p->dw;
                                if (x < 0 || x >= p->w) continue;
                                int64_t xv = rk_load_i64(p->x_dtype, in[0], ((b * p->c + xc) * p->h + y) * p->w + x);
                                int64_t wv = rk_load_i64(p->w_dtype, in[1], ((o * cg + ci) * p->kh + ky) * p->kw + kx);
                                acc += (xv - x_zp) * (wv - w_zp);
                            }
                        }
                    }
                    store_result(p->qlinear, p->y_dtype, out[0], ((b * p->oc + o) * p->oh + oy) * p->ow + ox, acc,
                                 mult, y_zp);
                }
        }
    return RLX_OK;
}
