/* rk_norm.c - kernels of the norm family: reductions, arg-min/max, Hardmax,
 * and the normalizations (layer, instance, Lp, mean-variance, LRN).
 *
 * Reductions and mean-variance normalization split the input's axes into
 * kept and reduced ones (split_axes). An odometer walks the kept axes in
 * row-major order, so output element o is the o-th step; for each, a second
 * odometer walks the reduced axes, the innermost one as a plain strided loop.
 * Every output element is thus one accumulator in a register, in the order
 * of the reduced index, whichever axes are reduced.
 *
 * Dtypes: reduce and argminmax take any numeric dtype and are written once
 * as macros instantiated per element type. Floats accumulate in their compute
 * type (f32 for f16/bf16, as the elementwise ops do); integers accumulate in
 * uint64 (wrapping like the element type, no undefined overflow), compared
 * as signed or unsigned as the type is. NaN propagates through max/min
 * (rs_max/rs_min from rlx_scalar.h) and wins arg-min/max and Hardmax, as in
 * numpy. The remaining kernels are f32 (legalize says so).
 *
 * Params come from rlxc; the checks here only refuse what would make a loop
 * read or write out of bounds (RLX_E_ARG).
 */
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rlx_scalar.h"

#include <math.h>
#include <string.h>

enum { RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_PROD, RED_L1, RED_L2, RED_LOGSUM, RED_LOGSUMEXP, RED_SUMSQUARE, RED_N };

/* Kept axes (with their input strides) and reduced axes of a reduction. At
 * least one reduced axis is listed (a size-1 one if none), so the inner loop
 * always exists. */
typedef struct {
    int64_t nk, kdims[RK_MAX_RANK], kstr[RK_MAX_RANK];
    int64_t nr, rdims[RK_MAX_RANK], rstr[RK_MAX_RANK];
    int64_t nout, nred;
} AxisSplit;

static int split_axes(int64_t rank, const int64_t *dims, const int64_t *mask, AxisSplit *s) {
    if (rank < 0 || rank > RK_MAX_RANK) return RLX_E_ARG;
    int64_t stride = 1;
    int64_t strides[RK_MAX_RANK];
    for (int64_t a = rank - 1; a >= 0; a--) {
        if (dims[a] < 0) return RLX_E_ARG;
        strides[a] = stride;
        stride *= dims[a];
    }
    s->nk = s->nr = 0;
    s->nout = s->nred = 1;
    for (int64_t a = 0; a < rank; a++) {
        if (mask[a]) {
            s->rdims[s->nr] = dims[a];
            s->rstr[s->nr++] = strides[a];
            s->nred *= dims[a];
        } else {
            s->kdims[s->nk] = dims[a];
            s->kstr[s->nk++] = strides[a];
            s->nout *= dims[a];
        }
    }
    if (s->nr == 0) {
        s->rdims[0] = 1;
        s->rstr[0] = 0;
        s->nr = 1;
    }
    return RLX_OK;
}

/* Offset of the kept-axes odometer position. */
static int64_t kept_offset(const AxisSplit *s, const int64_t *kidx) {
    int64_t off = 0;
    for (int64_t a = 0; a < s->nk; a++) off += kidx[a] * s->kstr[a];
    return off;
}

/* Runs STMT with `v` = each reduced element (loaded with LOAD) of the output
 * element whose input offset is `base`. */
#define FOR_REDUCED(s, x, base, V, LOAD, STMT)                                                   \
    do {                                                                                         \
        int64_t ridx_[RK_MAX_RANK] = {0}, last_ = (s)->nr - 1;                                   \
        int64_t len_ = (s)->rdims[last_], st_ = (s)->rstr[last_];                                \
        if ((s)->nred == 0) break;                                                               \
        do {                                                                                     \
            int64_t off_ = (base);                                                               \
            for (int64_t a_ = 0; a_ < last_; a_++) off_ += ridx_[a_] * (s)->rstr[a_];            \
            for (int64_t j_ = 0; j_ < len_; j_++) {                                              \
                V v = LOAD((x)[off_ + j_ * st_]);                                                \
                STMT;                                                                            \
            }                                                                                    \
        } while (rk_odometer_next(ridx_, (s)->rdims, last_));                                       \
    } while (0)

/* ---- reductions ---- */

#define LOAD_ID(e) (e)
#define LOAD_F16(e) rlx_f16_to_f32(e)
#define LOAD_BF16(e) rlx_bf16_to_f32(e)
#define STORE_ID(v) (v)
#define STORE_F16(v) rlx_f32_to_f16(v)
#define STORE_BF16(v) rlx_f32_to_bf16(v)

/* Float element types: T storage, V compute type, SFX the rlx_scalar.h
 * suffix of V's functions, EXP/LOG/SQRT/FABS V's libm functions. */
#define DEFINE_REDUCE_FLOAT(NAME, T, V, SFX, LOAD, STORE, EXP, LOG, SQRT, FABS)                  \
    static void NAME(const AxisSplit *s, int64_t op, const T *x, T *y) {                         \
        int64_t kidx[RK_MAX_RANK] = {0};                                                         \
        for (int64_t o = 0; o < s->nout; o++, rk_odometer_next(kidx, s->kdims, s->nk)) {            \
            int64_t base = kept_offset(s, kidx);                                                 \
            V acc = 0, mx = -INFINITY;                                                           \
            switch (op) {                                                                        \
            case RED_MAX: acc = -INFINITY; FOR_REDUCED(s, x, base, V, LOAD, acc = rs_max##SFX(v, acc)); break; \
            case RED_MIN: acc = INFINITY; FOR_REDUCED(s, x, base, V, LOAD, acc = rs_min##SFX(v, acc)); break; \
            case RED_PROD: acc = 1; FOR_REDUCED(s, x, base, V, LOAD, acc *= v); break;           \
            case RED_L1: FOR_REDUCED(s, x, base, V, LOAD, acc += FABS(v)); break;                \
            case RED_L2: case RED_SUMSQUARE: FOR_REDUCED(s, x, base, V, LOAD, acc += v * v); break; \
            case RED_LOGSUMEXP:                                                                  \
                FOR_REDUCED(s, x, base, V, LOAD, mx = rs_max##SFX(v, mx));                       \
                if (mx != mx || mx == INFINITY || mx == -INFINITY) { acc = mx; break; }          \
                FOR_REDUCED(s, x, base, V, LOAD, acc += EXP(v - mx));                            \
                acc = mx + LOG(acc);                                                             \
                break;                                                                           \
            default: FOR_REDUCED(s, x, base, V, LOAD, acc += v); break;                          \
            }                                                                                    \
            if (op == RED_MEAN) acc /= (V)s->nred;                                               \
            else if (op == RED_L2) acc = SQRT(acc);                                              \
            else if (op == RED_LOGSUM) acc = LOG(acc);                                           \
            y[o] = STORE(acc);                                                                   \
        }                                                                                        \
    }

DEFINE_REDUCE_FLOAT(reduce_f32, float, float, , LOAD_ID, STORE_ID, expf, logf, sqrtf, fabsf)
DEFINE_REDUCE_FLOAT(reduce_f64, double, double, _d, LOAD_ID, STORE_ID, exp, log, sqrt, fabs)
DEFINE_REDUCE_FLOAT(reduce_f16, uint16_t, float, , LOAD_F16, STORE_F16, expf, logf, sqrtf, fabsf)
DEFINE_REDUCE_FLOAT(reduce_bf16, uint16_t, float, , LOAD_BF16, STORE_BF16, expf, logf, sqrtf, fabsf)

/* A double result of an integer reduction (L2, log), truncated toward zero
 * and saturated (NaN -> 0), as the float->int Cast does. */
static uint64_t int_result(double d, int is_signed) {
    if (!is_signed) return rs_f2u64(d);
    return (uint64_t)rs_f2i(d, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX);
}

/* Integer element types: accumulate in uint64 (wrapping), compare and
 * divide as signed (S = int64_t) or unsigned (S = uint64_t). */
#define DEFINE_REDUCE_INT(NAME, T, S, IS_SIGNED)                                                 \
    static void NAME(const AxisSplit *s, int64_t op, const T *x, T *y) {                         \
        int64_t kidx[RK_MAX_RANK] = {0};                                                         \
        for (int64_t o = 0; o < s->nout; o++, rk_odometer_next(kidx, s->kdims, s->nk)) {            \
            int64_t base = kept_offset(s, kidx);                                                 \
            uint64_t acc = 0;                                                                    \
            double d = 0, mx = -INFINITY;                                                        \
            int first = 1;                                                                       \
            switch (op) {                                                                        \
            case RED_MAX:                                                                        \
                FOR_REDUCED(s, x, base, S, LOAD_ID, if (first || v > (S)acc) acc = (uint64_t)v; first = 0); \
                break;                                                                           \
            case RED_MIN:                                                                        \
                FOR_REDUCED(s, x, base, S, LOAD_ID, if (first || v < (S)acc) acc = (uint64_t)v; first = 0); \
                break;                                                                           \
            case RED_PROD: acc = 1; FOR_REDUCED(s, x, base, S, LOAD_ID, acc *= (uint64_t)v); break; \
            case RED_L1:                                                                         \
                FOR_REDUCED(s, x, base, S, LOAD_ID, acc += IS_SIGNED && (int64_t)v < 0 ? 0 - (uint64_t)v : (uint64_t)v); \
                break;                                                                           \
            case RED_L2: case RED_SUMSQUARE:                                                     \
                FOR_REDUCED(s, x, base, S, LOAD_ID, acc += (uint64_t)v * (uint64_t)v);           \
                break;                                                                           \
            case RED_LOGSUMEXP:                                                                  \
                FOR_REDUCED(s, x, base, S, LOAD_ID, if ((double)v > mx) mx = (double)v);         \
                FOR_REDUCED(s, x, base, S, LOAD_ID, d += exp((double)v - mx));                   \
                break;                                                                           \
            default: FOR_REDUCED(s, x, base, S, LOAD_ID, acc += (uint64_t)v); break;             \
            }                                                                                    \
            switch (op) {                                                                        \
            case RED_MEAN: acc = s->nred ? (uint64_t)((S)acc / (S)s->nred) : 0; break;           \
            case RED_L2: acc = int_result(sqrt((double)(S)acc), IS_SIGNED); break;               \
            case RED_LOGSUM: acc = int_result(log((double)(S)acc), IS_SIGNED); break;            \
            case RED_LOGSUMEXP: acc = int_result(s->nred ? mx + log(d) : -INFINITY, IS_SIGNED); break; \
            default: break;                                                                      \
            }                                                                                    \
            y[o] = (T)acc;                                                                       \
        }                                                                                        \
    }

DEFINE_REDUCE_INT(reduce_i8, int8_t, int64_t, 1)
DEFINE_REDUCE_INT(reduce_i16, int16_t, int64_t, 1)
DEFINE_REDUCE_INT(reduce_i32, int32_t, int64_t, 1)
DEFINE_REDUCE_INT(reduce_i64, int64_t, int64_t, 1)
DEFINE_REDUCE_INT(reduce_u8, uint8_t, uint64_t, 0)
DEFINE_REDUCE_INT(reduce_u16, uint16_t, uint64_t, 0)
DEFINE_REDUCE_INT(reduce_u32, uint32_t, uint64_t, 0)
DEFINE_REDUCE_INT(reduce_u64, uint64_t, uint64_t, 0)

int rk_reduce(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_reduce_params *p = params;
    AxisSplit s;
    (void)ctx;
    if (p->op < 0 || p->op >= RED_N || split_axes(p->rank, p->dims, p->mask, &s)) return RLX_E_ARG;
    const void *x = in[0];
    void *y = out[0];
    switch (p->dtype) {
    case RLX_F32: reduce_f32(&s, p->op, x, y); break;
    case RLX_F64: reduce_f64(&s, p->op, x, y); break;
    case RLX_F16: reduce_f16(&s, p->op, x, y); break;
    case RLX_BF16: reduce_bf16(&s, p->op, x, y); break;
    case RLX_I8: reduce_i8(&s, p->op, x, y); break;
    case RLX_I16: reduce_i16(&s, p->op, x, y); break;
    case RLX_I32: reduce_i32(&s, p->op, x, y); break;
    case RLX_I64: reduce_i64(&s, p->op, x, y); break;
    case RLX_U8: reduce_u8(&s, p->op, x, y); break;
    case RLX_U16: reduce_u16(&s, p->op, x, y); break;
    case RLX_U32: reduce_u32(&s, p->op, x, y); break;
    case RLX_U64: reduce_u64(&s, p->op, x, y); break;
    default: return RLX_E_ARG;
    }
    return RLX_OK;
}

/* ---- arg-min/max and Hardmax ---- */

/* Index of the maximum (minimum if is_min) of n elements at stride st. NaN
 * (only floats have it: v != v) beats every number; among equals the first
 * wins, or the last if select_last. */
#define DEFINE_ARG_SEARCH(NAME, T, V, LOAD)                                                      \
    static int64_t NAME(const T *x, int64_t n, int64_t st, int64_t select_last, int64_t is_min) { \
        int64_t best_i = 0;                                                                      \
        V best = n > 0 ? LOAD(x[0]) : (V)0;                                                      \
        for (int64_t a = 1; a < n; a++) {                                                        \
            V v = LOAD(x[a * st]);                                                               \
            if (best != best) {                                                                  \
                if (select_last && v != v) best_i = a;                                           \
                continue;                                                                        \
            }                                                                                    \
            if (v != v || (is_min ? v < best : v > best) || (select_last && v == best)) {        \
                best = v;                                                                        \
                best_i = a;                                                                      \
            }                                                                                    \
        }                                                                                        \
        return best_i;                                                                           \
    }

DEFINE_ARG_SEARCH(arg_f32, float, float, LOAD_ID)
DEFINE_ARG_SEARCH(arg_f64, double, double, LOAD_ID)
DEFINE_ARG_SEARCH(arg_f16, uint16_t, float, LOAD_F16)
DEFINE_ARG_SEARCH(arg_bf16, uint16_t, float, LOAD_BF16)
DEFINE_ARG_SEARCH(arg_i8, int8_t, int8_t, LOAD_ID)
DEFINE_ARG_SEARCH(arg_i16, int16_t, int16_t, LOAD_ID)
DEFINE_ARG_SEARCH(arg_i32, int32_t, int32_t, LOAD_ID)
DEFINE_ARG_SEARCH(arg_i64, int64_t, int64_t, LOAD_ID)
DEFINE_ARG_SEARCH(arg_u8, uint8_t, uint8_t, LOAD_ID)
DEFINE_ARG_SEARCH(arg_u16, uint16_t, uint16_t, LOAD_ID)
DEFINE_ARG_SEARCH(arg_u32, uint32_t, uint32_t, LOAD_ID)
DEFINE_ARG_SEARCH(arg_u64, uint64_t, uint64_t, LOAD_ID)

/* One search along the axis, dispatched on dtype; -1 if the dtype is unknown. */
static int64_t arg_search(int64_t dtype, const void *base, int64_t off, int64_t n, int64_t st, int64_t last,
                          int64_t is_min) {
    switch (dtype) {
    case RLX_F32: return arg_f32((const float *)base + off, n, st, last, is_min);
    case RLX_F64: return arg_f64((const double *)base + off, n, st, last, is_min);
    case RLX_F16: return arg_f16((const uint16_t *)base + off, n, st, last, is_min);
    case RLX_BF16: return arg_bf16((const uint16_t *)base + off, n, st, last, is_min);
    case RLX_I8: return arg_i8((const int8_t *)base + off, n, st, last, is_min);
    case RLX_I16: return arg_i16((const int16_t *)base + off, n, st, last, is_min);
    case RLX_I32: return arg_i32((const int32_t *)base + off, n, st, last, is_min);
    case RLX_I64: return arg_i64((const int64_t *)base + off, n, st, last, is_min);
    case RLX_U8: return arg_u8((const uint8_t *)base + off, n, st, last, is_min);
    case RLX_U16: return arg_u16((const uint16_t *)base + off, n, st, last, is_min);
    case RLX_U32: return arg_u32((const uint32_t *)base + off, n, st, last, is_min);
    case RLX_U64: return arg_u64((const uint64_t *)base + off, n, st, last, is_min);
    default: return -1;
    }
}

int rk_argminmax(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_argminmax_params *p = params;
    (void)ctx;
    if (p->outer < 0 || p->axis_len < 0 || p->inner < 0) return RLX_E_ARG;
    int64_t *y = out[0], len = p->axis_len, st = p->inner;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t i = 0; i < st; i++) {
            int64_t k = arg_search(p->dtype, in[0], o * len * st + i, len, st, p->select_last, p->is_min);
            if (k < 0) return RLX_E_ARG;
            y[o * st + i] = k;
        }
    return RLX_OK;
}

int rk_hardmax(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_hardmax_params *p = params;
    (void)ctx;
    if (p->outer < 0 || p->axis_len < 0 || p->inner < 0) return RLX_E_ARG;
    if (p->dtype != RLX_F32 && p->dtype != RLX_F64 && p->dtype != RLX_F16 && p->dtype != RLX_BF16) return RLX_E_ARG;
    int64_t len = p->axis_len, st = p->inner, es = rlx_dtype_size((int)p->dtype);
    uint8_t *y = out[0];
    /* the bytes of 1 in this dtype; 0 is all zero bytes in every float type */
    float one32 = 1.0f;
    double one64 = 1.0;
    uint16_t one16 = p->dtype == RLX_F16 ? rlx_f32_to_f16(1.0f) : rlx_f32_to_bf16(1.0f);
    const void *one = p->dtype == RLX_F32 ? (const void *)&one32 : p->dtype == RLX_F64 ? (const void *)&one64 : &one16;
    int64_t total = p->outer * len * st;
    if (total > 0) memset(y, 0, (size_t)(total * es));
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t i = 0; i < st; i++) {
            if (len == 0) continue;
            int64_t off = o * len * st + i;
            int64_t k = arg_search(p->dtype, in[0], off, len, st, 0, 0);
            memcpy(y + (size_t)((off + k * st) * es), one, (size_t)es);
        }
    return RLX_OK;
}

/* ---- normalizations ---- */

/* LayerNorm over f16 or bf16 storage (scale and bias in w_dtype): the f32
 * kernel's operations, reading each row three times, rounding once. */
static void layernorm_typed(const rk_layernorm_f32_params *p, const void *const *in, void *const *out) {
    const void *x = in[0], *scale = in[1], *bias = p->has_bias ? in[2] : NULL;
    void *y = out[0];
    float *mean_out = p->has_mean ? out[1] : NULL, *inv_out = p->has_inv_std ? out[1 + (p->has_mean != 0)] : NULL;
    int64_t dt = p->dtype, wt = p->w_dtype;
    for (int64_t r = 0; r < p->outer; r++) {
        int64_t at = r * p->inner;
        float sum = 0.0f, sq = 0.0f;
        for (int64_t i = 0; i < p->inner; i++) sum += rk_load_f32(dt, x, at + i);
        float mean = sum / (float)p->inner;
        for (int64_t i = 0; i < p->inner; i++) {
            float d = rk_load_f32(dt, x, at + i) - mean;
            sq += d * d;
        }
        float inv = 1.0f / sqrtf(sq / (float)p->inner + (float)p->eps);
        if (mean_out) mean_out[r] = mean;
        if (inv_out) inv_out[r] = inv;
        int64_t idx[RK_MAX_RANK] = {0}, so = 0, bo = 0;
        for (int64_t i = 0; i < p->inner; i++) {
            float v = (rk_load_f32(dt, x, at + i) - mean) * inv * rk_load_f32(wt, scale, so);
            rk_store_f32(dt, y, at + i, bias ? v + rk_load_f32(wt, bias, bo) : v);
            for (int64_t a = p->nrank - 1; a >= 0; a--) {
                so += p->scale_strides[a];
                bo += p->bias_strides[a];
                if (++idx[a] < p->ndims[a]) break;
                so -= p->scale_strides[a] * idx[a];
                bo -= p->bias_strides[a] * idx[a];
                idx[a] = 0;
            }
        }
    }
}

/* Sums of a row in eight partial sums (i mod 8), added in a fixed order at
 * the end: eight independent chains instead of one, as straight-line code
 * that compilers vectorize at -O2; the same order whatever the thread count
 * or instruction set. row_sq sums (x - mean)^2. */
static float sum8(const float *s) { return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])); }

static float row_sum(const float *restrict x, int64_t n) {
    float s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += x[i + k];
    for (int k = 0; i < n; i++, k++) s[k] += x[i];
    return sum8(s);
}

static float row_sq(const float *restrict x, int64_t n, float mean) {
    float s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += (x[i + k] - mean) * (x[i + k] - mean);
    for (int k = 0; i < n; i++, k++) s[k] += (x[i] - mean) * (x[i] - mean);
    return sum8(s);
}

/* y = (x - mean) * inv * scale (+ bias), eight at a time, then the rest. */
static void norm_row(float *restrict y, const float *restrict x, int64_t n, float mean, float inv,
                     const float *restrict scale, const float *restrict bias) {
    int64_t i = 0;
    if (bias)
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) y[i + k] = (x[i + k] - mean) * inv * scale[i + k] + bias[i + k];
    else
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++) y[i + k] = (x[i + k] - mean) * inv * scale[i + k];
    for (; i < n; i++) {
        float v = (x[i] - mean) * inv * scale[i];
        y[i] = bias ? v + bias[i] : v;
    }
}

int rk_layernorm_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_layernorm_f32_params *p = params;
    (void)ctx;
    if (p->outer < 0 || p->inner < 0 || p->nrank < 0 || p->nrank > RK_MAX_RANK) return RLX_E_ARG;
    int64_t n = 1;
    for (int64_t a = 0; a < p->nrank; a++) {
        if (p->ndims[a] < 0) return RLX_E_ARG;
        n *= p->ndims[a];
    }
    if (n != p->inner) return RLX_E_ARG;
    if (p->dtype != RLX_F32 || p->w_dtype != RLX_F32) {
        int ok = (p->dtype == RLX_F32 || p->dtype == RLX_F16 || p->dtype == RLX_BF16) &&
                 (p->w_dtype == RLX_F32 || p->w_dtype == RLX_F16 || p->w_dtype == RLX_BF16);
        if (!ok) return RLX_E_ARG;
        layernorm_typed(p, in, out);
        return RLX_OK;
    }
    const float *x = in[0], *scale = in[1], *bias = p->has_bias ? in[2] : NULL;
    float *y = out[0];
    float *mean_out = p->has_mean ? out[1] : NULL, *inv_out = p->has_inv_std ? out[1 + (p->has_mean != 0)] : NULL;
    /* scale and bias at full size (dense strides) are indexed directly */
    int dense = 1;
    for (int64_t a = p->nrank - 1, st = 1; a >= 0; st *= p->ndims[a], a--)
        if (p->ndims[a] > 1 && (p->scale_strides[a] != st || (bias && p->bias_strides[a] != st))) dense = 0;
    for (int64_t r = 0; r < p->outer; r++) {
        const float *xr = x + r * p->inner;
        float *yr = y + r * p->inner;
        float mean = row_sum(xr, p->inner) / (float)p->inner;
        float inv = 1.0f / sqrtf(row_sq(xr, p->inner, mean) / (float)p->inner + (float)p->eps);
        if (mean_out) mean_out[r] = mean;
        if (inv_out) inv_out[r] = inv;
        if (dense) {
            norm_row(yr, xr, p->inner, mean, inv, scale, bias);
            continue;
        }
        int64_t idx[RK_MAX_RANK] = {0}, so = 0, bo = 0;
        for (int64_t i = 0; i < p->inner; i++) {
            float v = (xr[i] - mean) * inv * scale[so];
            yr[i] = bias ? v + bias[bo] : v;
            for (int64_t a = p->nrank - 1; a >= 0; a--) {
                so += p->scale_strides[a];
                bo += p->bias_strides[a];
                if (++idx[a] < p->ndims[a]) break;
                so -= p->scale_strides[a] * idx[a];
                bo -= p->bias_strides[a] * idx[a];
                idx[a] = 0;
            }
        }
    }
    return RLX_OK;
}

int rk_instancenorm_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_instancenorm_f32_params *p = params;
    (void)ctx;
    if (p->n < 0 || p->c < 0 || p->hw < 0) return RLX_E_ARG;
    const float *x = in[0], *scale = in[1], *bias = in[2];
    float *y = out[0];
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t ch = 0; ch < p->c; ch++) {
            const float *xr = x + (b * p->c + ch) * p->hw;
            float *yr = y + (b * p->c + ch) * p->hw;
            float sum = 0.0f, sq = 0.0f;
            for (int64_t i = 0; i < p->hw; i++) sum += xr[i];
            float mean = sum / (float)p->hw;
            for (int64_t i = 0; i < p->hw; i++) {
                float d = xr[i] - mean;
                sq += d * d;
            }
            float g = scale[ch] / sqrtf(sq / (float)p->hw + (float)p->eps), beta = bias[ch];
            for (int64_t i = 0; i < p->hw; i++) yr[i] = (xr[i] - mean) * g + beta;
        }
    return RLX_OK;
}

int rk_lpnorm_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_lpnorm_f32_params *p = params;
    (void)ctx;
    if (p->outer < 0 || p->axis_len < 0 || p->inner < 0 || (p->p != 1 && p->p != 2)) return RLX_E_ARG;
    const float *x = in[0];
    float *y = out[0];
    int64_t len = p->axis_len, st = p->inner;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t i = 0; i < st; i++) {
            const float *xr = x + o * len * st + i;
            float *yr = y + o * len * st + i;
            float norm = 0.0f;
            for (int64_t a = 0; a < len; a++) norm += p->p == 1 ? fabsf(xr[a * st]) : xr[a * st] * xr[a * st];
            if (p->p == 2) norm = sqrtf(norm);
            for (int64_t a = 0; a < len; a++) yr[a * st] = norm != 0.0f ? xr[a * st] / norm : 0.0f;
        }
    return RLX_OK;
}

int rk_mvn_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_mvn_f32_params *p = params;
    AxisSplit s;
    (void)ctx;
    if (split_axes(p->rank, p->dims, p->mask, &s)) return RLX_E_ARG;
    const float *x = in[0];
    float *y = out[0];
    int64_t kidx[RK_MAX_RANK] = {0};
    for (int64_t o = 0; o < s.nout; o++, rk_odometer_next(kidx, s.kdims, s.nk)) {
        int64_t base = kept_offset(&s, kidx);
        float sum = 0.0f, sq = 0.0f;
        FOR_REDUCED(&s, x, base, float, LOAD_ID, sum += v);
        float mean = sum / (float)s.nred;
        FOR_REDUCED(&s, x, base, float, LOAD_ID, sq += (v - mean) * (v - mean));
        float inv = 1.0f / (sqrtf(sq / (float)s.nred) + 1e-9f);
        /* the same walk again, writing at the positions it reads */
        int64_t ridx[RK_MAX_RANK] = {0}, last = s.nr - 1, len = s.rdims[last], st = s.rstr[last];
        if (s.nred == 0) continue;
        do {
            int64_t off = base;
            for (int64_t a = 0; a < last; a++) off += ridx[a] * s.rstr[a];
            for (int64_t j = 0; j < len; j++) y[off + j * st] = (x[off + j * st] - mean) * inv;
        } while (rk_odometer_next(ridx, s.rdims, last));
    }
    return RLX_OK;
}

int rk_lrn_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_lrn_f32_params *p = params;
    (void)ctx;
    if (p->n < 0 || p->c < 0 || p->hw < 0 || p->size < 1) return RLX_E_ARG;
    const float *x = in[0];
    float *y = out[0];
    int64_t before = (p->size - 1) / 2, after = p->size / 2;
    double k = p->alpha / (double)p->size;
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t ch = 0; ch < p->c; ch++) {
            int64_t lo = ch - before < 0 ? 0 : ch - before, hi = ch + after > p->c - 1 ? p->c - 1 : ch + after;
            const float *xb = x + b * p->c * p->hw;
            float *yr = y + (b * p->c + ch) * p->hw;
            for (int64_t i = 0; i < p->hw; i++) {
                double sq = 0.0;
                for (int64_t c2 = lo; c2 <= hi; c2++) {
                    double v = xb[c2 * p->hw + i];
                    sq += v * v;
                }
                yr[i] = (float)(xb[ch * p->hw + i] / pow(p->bias + k * sq, p->beta));
            }
        }
    return RLX_OK;
}
