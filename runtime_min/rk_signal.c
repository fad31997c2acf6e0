/* rk_signal.c - the signal kernels: DFT, STFT, window functions and the mel
 * weight matrix (ONNX opset 17 semantics).
 *
 * dft and stft share one transform. A column (the DFT axis of one position
 * of the other axes, or one windowed frame) is gathered into ctx->scratch as
 * n complex doubles, zero-padded past the input's end, and transformed in
 * place: by an iterative radix-2 FFT when n is a power of two, else by the
 * direct O(n^2) sum. Both read a table of the n twiddle factors
 * e^(-2 pi i j / n), computed once per call with cos/sin of an exact
 * fraction of the circle, and the direct sum indexes it with (m*k) mod n, so
 * no angle grows large and no error accumulates along a recurrence. The
 * inverse transform conjugates the twiddles and scales by 1/n. Then the
 * first nout bins go to the output (onesided keeps n/2 + 1 of them). All
 * arithmetic is in double, rounded once when stored, whatever the storage
 * dtype (f32, f64, f16, bf16).
 *
 * The windows are the generalized cosine windows of ONNX, evaluated in
 * double; an integer output_datatype truncates toward zero and saturates
 * (NaN -> 0), as Cast does. mel_weight_matrix follows the ONNX reference
 * step by step (bin edges from mel-spaced frequencies, floored to spectrogram
 * bins, then triangles rising and falling between neighbouring edges); an
 * edge that falls outside the spectrogram bins is refused (RLX_E_ARG) rather
 * than written out of bounds.
 */
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rk_signal.h"

#include <math.h>
#include <string.h>

static const double two_pi = 6.283185307179586476925286766559;

static int64_t load_int(int64_t dtype, const void *base, int64_t i) {
    const uint8_t *p = base;
    if (dtype == RLX_I32) {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p + 8 * i, 8);
    return v;
}

/* Truncation toward zero into [lo, hi]; NaN -> 0. */
static double trunc_clamp(double v, double lo, double hi) {
    if (v != v) return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

/* Stores v as any numeric dtype (floats round, integers truncate and saturate). */
static void store_any(int64_t dtype, void *base, int64_t i, double v) {
    uint8_t *p = base;
    switch (dtype) {
    case RLX_F64: memcpy(p + 8 * i, &v, 8); break;
    case RLX_F32: {
        float f = (float)v;
        memcpy(p + 4 * i, &f, 4);
        break;
    }
    case RLX_F16: case RLX_BF16: {
        uint16_t h = dtype == RLX_F16 ? rlx_f32_to_f16((float)v) : rlx_f32_to_bf16((float)v);
        memcpy(p + 2 * i, &h, 2);
        break;
    }
    case RLX_I8: { int8_t x = (int8_t)trunc_clamp(v, INT8_MIN, INT8_MAX); memcpy(p + i, &x, 1); break; }
    case RLX_U8: { uint8_t x = (uint8_t)trunc_clamp(v, 0, UINT8_MAX); memcpy(p + i, &x, 1); break; }
    case RLX_I16: { int16_t x = (int16_t)trunc_clamp(v, INT16_MIN, INT16_MAX); memcpy(p + 2 * i, &x, 2); break; }
    case RLX_U16: { uint16_t x = (uint16_t)trunc_clamp(v, 0, UINT16_MAX); memcpy(p + 2 * i, &x, 2); break; }
    case RLX_I32: { int32_t x = (int32_t)trunc_clamp(v, INT32_MIN, INT32_MAX); memcpy(p + 4 * i, &x, 4); break; }
    case RLX_U32: { uint32_t x = (uint32_t)trunc_clamp(v, 0, UINT32_MAX); memcpy(p + 4 * i, &x, 4); break; }
    case RLX_I64: {
        /* 2^63 itself is out of range: clamp below it */
        double t = trunc_clamp(v, -9223372036854775808.0, 9223372036854774784.0);
        int64_t x = (int64_t)t;
        memcpy(p + 8 * i, &x, 8);
        break;
    }
    case RLX_U64: {
        double t = trunc_clamp(v, 0, 18446744073709549568.0);
        uint64_t x = (uint64_t)t;
        memcpy(p + 8 * i, &x, 8);
        break;
    }
    default: break;
    }
}

/* ---- the transform ---- */

typedef struct {
    int64_t n;
    int inverse;
    double *col;   /* 2n: the column, transformed in place */
    double *tmp;   /* 2n: the direct sum's output */
    double *tw;    /* 2n: e^(-+2 pi i j / n) */
} Transform;

static int transform_init(Transform *t, rk_ctx *ctx, int64_t n, int inverse) {
    if (n < 1 || n > RK_DFT_MAX_N || !ctx || !ctx->scratch || (uint64_t)ctx->scratch_per_thread < (uint64_t)rk_dft_scratch(n))
        return RLX_E_ARG;
    t->n = n;
    t->inverse = inverse;
    t->col = (double *)(void *)ctx->scratch;
    t->tmp = t->col + 2 * n;
    t->tw = t->tmp + 2 * n;
    double sign = inverse ? 1.0 : -1.0;
    for (int64_t j = 0; j < n; j++) {
        double a = two_pi * (double)j / (double)n;
        t->tw[2 * j] = cos(a);
        t->tw[2 * j + 1] = sign * sin(a);
    }
    return 0;
}

static void fft_radix2(const Transform *t) {
    int64_t n = t->n;
    double *x = t->col;
    /* bit-reversal permutation */
    for (int64_t i = 1, j = 0; i < n; i++) {
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) {
            double re = x[2 * i], im = x[2 * i + 1];
            x[2 * i] = x[2 * j];
            x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = re;
            x[2 * j + 1] = im;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len >> 1, stride = n / len;
        for (int64_t s = 0; s < n; s += len) {
            for (int64_t k = 0; k < half; k++) {
                double wr = t->tw[2 * k * stride], wi = t->tw[2 * k * stride + 1];
                double *a = x + 2 * (s + k), *b = x + 2 * (s + k + half);
                double br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br;
                b[1] = a[1] - bi;
                a[0] += br;
                a[1] += bi;
            }
        }
    }
}

static void dft_direct(const Transform *t) {
    int64_t n = t->n;
    for (int64_t m = 0; m < n; m++) {
        double re = 0, im = 0;
        int64_t j = 0;   /* (m * k) mod n, stepped by m */
        for (int64_t k = 0; k < n; k++) {
            double xr = t->col[2 * k], xi = t->col[2 * k + 1];
            double wr = t->tw[2 * j], wi = t->tw[2 * j + 1];
            re += xr * wr - xi * wi;
            im += xr * wi + xi * wr;
            j += m;
            if (j >= n) j -= n;
        }
        t->tmp[2 * m] = re;
        t->tmp[2 * m + 1] = im;
    }
    memcpy(t->col, t->tmp, sizeof(double) * 2 * (size_t)n);
}

static void transform_run(const Transform *t) {
    if ((t->n & (t->n - 1)) == 0)
        fft_radix2(t);
    else
        dft_direct(t);
    if (t->inverse) {
        double s = 1.0 / (double)t->n;
        for (int64_t i = 0; i < 2 * t->n; i++) t->col[i] *= s;
    }
}

static int is_float_dtype(int64_t dt) { return dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16; }

int rk_dft(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_dft_params *p = params;
    if (!is_float_dtype(p->dtype) || p->outer < 0 || p->len < 0 || p->inner < 0 || p->nout < 0 || p->nout > p->n)
        return RLX_E_ARG;
    Transform t;
    int st = transform_init(&t, ctx, p->n, p->inverse != 0);
    if (st) return st;
    int64_t cin = p->complex_in ? 2 : 1, used = p->len < p->n ? p->len : p->n;
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t i = 0; i < p->inner; i++) {
            for (int64_t k = 0; k < p->n; k++) {
                int64_t at = ((o * p->len + k) * p->inner + i) * cin;
                t.col[2 * k] = k < used ? rk_load_f64(p->dtype, in[0], at) : 0;
                t.col[2 * k + 1] = k < used && cin == 2 ? rk_load_f64(p->dtype, in[0], at + 1) : 0;
            }
            transform_run(&t);
            for (int64_t m = 0; m < p->nout; m++) {
                int64_t at = ((o * p->nout + m) * p->inner + i) * 2;
                store_any(p->dtype, out[0], at, t.col[2 * m]);
                store_any(p->dtype, out[0], at + 1, t.col[2 * m + 1]);
            }
        }
    }
    return 0;
}

int rk_stft(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_stft_params *p = params;
    if (!is_float_dtype(p->dtype) || p->batch < 0 || p->frames < 0 || p->step < 1 || p->nbins < 0 || p->nbins > p->flen)
        return RLX_E_ARG;
    /* the last frame must end inside the signal */
    if (p->frames > 0 && ((p->len - p->flen) < 0 || (p->frames - 1) > (p->len - p->flen) / p->step)) return RLX_E_ARG;
    Transform t;
    int st = transform_init(&t, ctx, p->flen, 0);
    if (st) return st;
    int64_t cin = p->complex_in ? 2 : 1;
    for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t f = 0; f < p->frames; f++) {
            for (int64_t k = 0; k < p->flen; k++) {
                double w = p->has_window ? rk_load_f64(p->dtype, in[1], k) : 1.0;
                int64_t at = (b * p->len + f * p->step + k) * cin;
                t.col[2 * k] = rk_load_f64(p->dtype, in[0], at) * w;
                t.col[2 * k + 1] = cin == 2 ? rk_load_f64(p->dtype, in[0], at + 1) * w : 0;
            }
            transform_run(&t);
            for (int64_t m = 0; m < p->nbins; m++) {
                int64_t at = ((b * p->frames + f) * p->nbins + m) * 2;
                store_any(p->dtype, out[0], at, t.col[2 * m]);
                store_any(p->dtype, out[0], at + 1, t.col[2 * m + 1]);
            }
        }
    }
    return 0;
}

/* ---- windows ---- */

int rk_window(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    (void)ctx;
    (void)in;
    const rk_window_params *p = params;
    static const double coef[3][3] = {
        {0.5, 0.5, 0.0},                    /* Hann */
        {25.0 / 46.0, 21.0 / 46.0, 0.0},    /* Hamming (ONNX: alpha 25/46) */
        {0.42, 0.5, 0.08},                  /* Blackman */
    };
    if (p->kind < 0 || p->kind > 2 || p->size < 0) return RLX_E_ARG;
    const double *a = coef[p->kind];
    int64_t denom = p->periodic ? p->size : p->size - 1;
    for (int64_t i = 0; i < p->size; i++) {
        double v;
        if (denom <= 0) {
            v = 1.0;   /* a symmetric window of one point: its peak */
        } else {
            double x = two_pi * (double)i / (double)denom;
            v = a[0] - a[1] * cos(x) + a[2] * cos(2 * x);
        }
        store_any(p->dtype, out[0], i, v);
    }
    return 0;
}

/* ---- mel weight matrix ---- */

static double hz_to_mel(double f) { return 2595.0 * log10(1.0 + f / 700.0); }
static double mel_to_hz(double m) { return 700.0 * (pow(10.0, m / 2595.0) - 1.0); }

int rk_mel_weight_matrix(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    (void)ctx;
    const rk_mel_weight_matrix_params *p = params;
    int64_t mels = p->num_mel_bins, nspec = p->dft_length / 2 + 1;
    if (mels < 0 || p->dft_length < 1 || !is_float_dtype(p->edge_dtype)) return RLX_E_ARG;
    double rate = (double)load_int(p->sr_dtype, in[0], 0);
    double lo = hz_to_mel(rk_load_f64(p->edge_dtype, in[1], 0));
    double hi = hz_to_mel(rk_load_f64(p->edge_dtype, in[2], 0));
    if (!(rate > 0)) return RLX_E_ARG;
    for (int64_t i = 0; i < nspec * mels; i++) store_any(p->dtype, out[0], i, 0.0);
    /* the reference divides the mel range by mels + 2 (its count of edges) */
    double step = (hi - lo) / (double)(mels + 2);
    int64_t edge[3];
    for (int64_t band = 0; band < mels; band++) {
        for (int e = 0; e < 3; e++) {
            double hz = mel_to_hz((double)(band + e) * step + lo);
            double bin = floor((double)(p->dft_length + 1) * hz / rate);
            if (!(bin >= 0 && bin < (double)nspec)) return RLX_E_ARG;
            edge[e] = (int64_t)bin;
        }
        int64_t left = edge[0], center = edge[1], right = edge[2];
        if (center == left) {
            store_any(p->dtype, out[0], center * mels + band, 1.0);
        } else {
            for (int64_t j = left; j <= center; j++)
                store_any(p->dtype, out[0], j * mels + band, (double)(j - left) / (double)(center - left));
        }
        for (int64_t j = center; j < right; j++)
            store_any(p->dtype, out[0], j * mels + band, (double)(right - j) / (double)(right - center));
    }
    return 0;
}
