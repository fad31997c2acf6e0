/* rk_shape.c - kernels of the shape family (rk_kernels.def, "family shape").
 *
 * Data movement (fill, tile, eye, trilu, onehot, reverse_sequence) is generic
 * over the element size: elements are copied as bytes, and a constant such as
 * a fill value or EyeLike's 1 arrives as the element's bytes, packed by rlxc
 * in value_bits / one_bits. Arithmetic kernels (range, cumsum, topk) take the
 * dtype and read and write every element through the converters below, so one
 * loop serves every dtype: floats compute in double (f32 cumulative sums in
 * float, to match what a float loop would give), integers in 64 bits with
 * wrap-around, unsigned ones compared as unsigned.
 *
 * Kernels allocate nothing. TopK keeps its running top-k list in its own
 * outputs (an insertion sort of at most k entries per row), which makes it
 * O(n*k) per row; that is the price of no scratch memory.
 *
 * Data-dependent errors (a CumSum axis or a sequence length out of range)
 * return RLX_E_RANGE; params that would make a loop go out of bounds return
 * RLX_E_ARG.
 */
#include "rlx_rt.h"

#include <string.h>

/* ---- element conversion by dtype ---- */

static int is_float_dtype(int64_t dt) { return dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16; }
static int is_unsigned_dtype(int64_t dt) {
    return dt == RLX_U8 || dt == RLX_U16 || dt == RLX_U32 || dt == RLX_U64 || dt == RLX_BOOL;
}

static double load_f64(int64_t dt, const void *base, int64_t i) {
    const uint8_t *p = (const uint8_t *)base + i * rlx_dtype_size((int)dt);
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64;
            float f; double d; } u;
    memcpy(&u, p, (size_t)rlx_dtype_size((int)dt));
    switch (dt) {
    case RLX_F32: return u.f;
    case RLX_F64: return u.d;
    case RLX_F16: return rlx_f16_to_f32(u.u16);
    case RLX_BF16: return rlx_bf16_to_f32(u.u16);
    case RLX_I8: return u.i8;
    case RLX_U8: case RLX_BOOL: return u.u8;
    case RLX_I16: return u.i16;
    case RLX_U16: return u.u16;
    case RLX_I32: return u.i32;
    case RLX_U32: return u.u32;
    case RLX_I64: return (double)u.i64;
    case RLX_U64: return (double)u.u64;
    default: return 0;
    }
}

/* Integers as their 64-bit two's complement bits (u64 keeps its bits). */
static int64_t load_i64(int64_t dt, const void *base, int64_t i) {
    if (is_float_dtype(dt)) {
        double x = load_f64(dt, base, i);
        if (x != x) return 0;
        if (x <= -9223372036854775808.0) return INT64_MIN;
        if (x >= 9223372036854775808.0) return INT64_MAX;
        return (int64_t)x;
    }
    const uint8_t *p = (const uint8_t *)base + i * rlx_dtype_size((int)dt);
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64; } u;
    memcpy(&u, p, (size_t)rlx_dtype_size((int)dt));
    switch (dt) {
    case RLX_I8: return u.i8;
    case RLX_U8: case RLX_BOOL: return u.u8;
    case RLX_I16: return u.i16;
    case RLX_U16: return u.u16;
    case RLX_I32: return u.i32;
    case RLX_U32: return u.u32;
    default: return u.i64;
    }
}

static void store_f64(int64_t dt, void *base, int64_t i, double x) {
    uint8_t *p = (uint8_t *)base + i * rlx_dtype_size((int)dt);
    if (dt == RLX_F32) {
        float f = (float)x;
        memcpy(p, &f, 4);
    } else if (dt == RLX_F64) {
        memcpy(p, &x, 8);
    } else {
        uint16_t h = dt == RLX_F16 ? rlx_f32_to_f16((float)x) : rlx_f32_to_bf16((float)x);
        memcpy(p, &h, 2);
    }
}

/* Stores the low bytes (little-endian) of v: integers wrap to their width. */
static void store_i64(int64_t dt, void *base, int64_t i, int64_t v) {
    int sz = rlx_dtype_size((int)dt);
    uint8_t *p = (uint8_t *)base + i * sz;
    if (dt == RLX_BOOL) v = v != 0;
    for (int b = 0; b < sz; b++) p[b] = (uint8_t)((uint64_t)v >> (8 * b));
}

static int bad_dims(int64_t rank, const int64_t *dims) {
    if (rank < 0 || rank > RK_MAX_RANK) return 1;
    for (int64_t i = 0; i < rank; i++)
        if (dims[i] < 0) return 1;
    return 0;
}

static int64_t numel(int64_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int64_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}

/* ---- data movement ---- */

int rk_fill(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_fill_params *p = params;
    (void)ctx;
    (void)in;
    if (p->esize <= 0 || p->esize > 8 || p->count < 0) return RLX_E_ARG;
    uint8_t elem[8], *dst = out[0];
    for (int b = 0; b < 8; b++) elem[b] = (uint8_t)((uint64_t)p->value_bits >> (8 * b));
    size_t es = (size_t)p->esize;
    for (int64_t i = 0; i < p->count; i++) memcpy(dst + (size_t)i * es, elem, es);
    return RLX_OK;
}

int rk_tile(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_tile_params *p = params;
    (void)ctx;
    if (p->esize <= 0 || bad_dims(p->rank, p->in_dims) || bad_dims(p->rank, p->out_dims)) return RLX_E_ARG;
    int64_t rank = p->rank, n = numel(rank, p->out_dims);
    if (n == 0) return RLX_OK;
    for (int64_t a = 0; a < rank; a++)
        if (p->in_dims[a] == 0) return RLX_E_ARG;
    size_t es = (size_t)p->esize;
    int64_t stride[RK_MAX_RANK], idx[RK_MAX_RANK] = {0};
    int64_t s = 1;
    for (int64_t a = rank - 1; a >= 0; a--) {
        stride[a] = s;
        s *= p->in_dims[a];
    }
    const uint8_t *src = in[0];
    uint8_t *dst = out[0];
    for (int64_t o = 0; o < n; o++) {
        int64_t off = 0;
        for (int64_t a = 0; a < rank; a++) off += (idx[a] % p->in_dims[a]) * stride[a];
        memcpy(dst + (size_t)o * es, src + (size_t)off * es, es);
        for (int64_t a = rank - 1; a >= 0; a--) {
            if (++idx[a] < p->out_dims[a]) break;
            idx[a] = 0;
        }
    }
    return RLX_OK;
}

int rk_eye(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_eye_params *p = params;
    (void)ctx;
    (void)in;
    if (p->esize <= 0 || p->esize > 8 || p->rows < 0 || p->cols < 0) return RLX_E_ARG;
    size_t es = (size_t)p->esize;
    uint8_t one[8], *dst = out[0];
    for (int b = 0; b < 8; b++) one[b] = (uint8_t)((uint64_t)p->one_bits >> (8 * b));
    memset(dst, 0, (size_t)(p->rows * p->cols) * es);
    for (int64_t i = 0; i < p->rows; i++) {
        /* j = i + k, computed without overflow for any k */
        if (p->k < -p->rows || p->k >= p->cols) break;
        int64_t j = i + p->k;
        if (j >= 0 && j < p->cols) memcpy(dst + (size_t)(i * p->cols + j) * es, one, es);
    }
    return RLX_OK;
}

int rk_onehot(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_onehot_params *p = params;
    (void)ctx;
    if (p->esize <= 0 || p->outer < 0 || p->depth < 0 || p->inner < 0 || rlx_dtype_size((int)p->idx_dtype) == 0)
        return RLX_E_ARG;
    size_t es = (size_t)p->esize;
    const uint8_t *off_v = in[2], *on_v = (const uint8_t *)in[2] + es;
    uint8_t *dst = out[0];
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t d = 0; d < p->depth; d++)
            for (int64_t i = 0; i < p->inner; i++) {
                int64_t ix = load_i64(p->idx_dtype, in[0], o * p->inner + i);
                if (ix < 0 && ix >= -p->depth) ix += p->depth;
                memcpy(dst, ix == d ? on_v : off_v, es);
                dst += es;
            }
    return RLX_OK;
}

int rk_trilu(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_trilu_params *p = params;
    (void)ctx;
    if (p->esize <= 0 || p->batch < 0 || p->rows < 0 || p->cols < 0) return RLX_E_ARG;
    int64_t k = p->k;
    if (in[1]) memcpy(&k, in[1], 8);
    size_t es = (size_t)p->esize, row = (size_t)p->cols * es;
    const uint8_t *src = in[0];
    uint8_t *dst = out[0];
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t i = 0; i < p->rows; i++, src += row, dst += row) {
            /* keep columns [lo, hi) of this row: j >= i + k (upper) or j <= i + k (lower) */
            int64_t lim = k > p->cols ? p->cols : k < -p->rows - 1 ? -p->rows - 1 : k;
            int64_t edge = i + lim;   /* |edge| <= rows + cols: no overflow */
            int64_t lo = 0, hi = p->cols;
            if (p->upper) lo = edge < 0 ? 0 : edge > p->cols ? p->cols : edge;
            else hi = edge + 1 < 0 ? 0 : edge + 1 > p->cols ? p->cols : edge + 1;
            memset(dst, 0, row);
            if (hi > lo) memmove(dst + (size_t)lo * es, src + (size_t)lo * es, (size_t)(hi - lo) * es);
        }
    return RLX_OK;
}

int rk_reverse_sequence(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_reverse_sequence_params *p = params;
    (void)ctx;
    if (p->esize <= 0 || bad_dims(p->rank, p->dims) || p->rank < 2) return RLX_E_ARG;
    if (p->batch_axis < 0 || p->batch_axis >= p->rank || p->time_axis < 0 || p->time_axis >= p->rank ||
        p->batch_axis == p->time_axis || (p->len_dtype != RLX_I32 && p->len_dtype != RLX_I64))
        return RLX_E_ARG;
    int64_t rank = p->rank, n = numel(rank, p->dims), T = p->dims[p->time_axis];
    for (int64_t b = 0; b < p->dims[p->batch_axis]; b++) {
        int64_t len = load_i64(p->len_dtype, in[1], b);
        if (len < 0 || len > T) return RLX_E_RANGE;
    }
    int64_t stride[RK_MAX_RANK], idx[RK_MAX_RANK] = {0}, s = 1;
    for (int64_t a = rank - 1; a >= 0; a--) {
        stride[a] = s;
        s *= p->dims[a];
    }
    size_t es = (size_t)p->esize;
    const uint8_t *src = in[0];
    uint8_t *dst = out[0];
    for (int64_t o = 0; o < n; o++) {
        int64_t t = idx[p->time_axis], len = load_i64(p->len_dtype, in[1], idx[p->batch_axis]);
        int64_t from = o + (t < len ? (len - 1 - t) - t : 0) * stride[p->time_axis];
        memcpy(dst + (size_t)o * es, src + (size_t)from * es, es);
        for (int64_t a = rank - 1; a >= 0; a--) {
            if (++idx[a] < p->dims[a]) break;
            idx[a] = 0;
        }
    }
    return RLX_OK;
}

/* ---- arithmetic ---- */

int rk_range(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_range_params *p = params;
    (void)ctx;
    (void)in;
    if (p->n < 0 || rlx_dtype_size((int)p->dtype) == 0 || p->dtype == RLX_BOOL) return RLX_E_ARG;
    for (int64_t i = 0; i < p->n; i++) {
        if (is_float_dtype(p->dtype))
            store_f64(p->dtype, out[0], i, p->fstart + (double)i * p->fdelta);
        else
            store_i64(p->dtype, out[0], i, (int64_t)((uint64_t)p->istart + (uint64_t)i * (uint64_t)p->idelta));
    }
    return RLX_OK;
}

int rk_cumsum(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_cumsum_params *p = params;
    (void)ctx;
    if (bad_dims(p->rank, p->dims) || p->rank < 1 || rlx_dtype_size((int)p->dtype) == 0 ||
        (p->axis_dtype != RLX_I32 && p->axis_dtype != RLX_I64))
        return RLX_E_ARG;
    int64_t axis = load_i64(p->axis_dtype, in[1], 0);
    if (axis < -p->rank || axis >= p->rank) return RLX_E_RANGE;
    if (axis < 0) axis += p->rank;
    int64_t outer = numel(axis, p->dims), len = p->dims[axis], inner = numel(p->rank - axis - 1, p->dims + axis + 1);
    int64_t dt = p->dtype;
    int fl = is_float_dtype(dt), f32 = dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double acc_d = 0;
            float acc_f = 0;
            uint64_t acc_i = 0;
            for (int64_t s = 0; s < len; s++) {
                int64_t j = p->reverse ? len - 1 - s : s;
                int64_t e = (o * len + j) * inner + i;
                if (p->exclusive) {
                    if (fl) store_f64(dt, out[0], e, f32 ? (double)acc_f : acc_d);
                    else store_i64(dt, out[0], e, (int64_t)acc_i);
                }
                if (f32) acc_f += (float)load_f64(dt, in[0], e);
                else if (fl) acc_d += load_f64(dt, in[0], e);
                else acc_i += (uint64_t)load_i64(dt, in[0], e);
                if (!p->exclusive) {
                    if (fl) store_f64(dt, out[0], e, f32 ? (double)acc_f : acc_d);
                    else store_i64(dt, out[0], e, (int64_t)acc_i);
                }
            }
        }
    return RLX_OK;
}

/* Does element a (at index ia) come before b (at ib) in TopK's order? NaN
 * counts as the largest value; equal values keep the lower index first. */
static int topk_before(int64_t dt, const void *base, int64_t ea, int64_t ia, int64_t eb, int64_t ib, int largest) {
    int c;   /* -1 a < b, 0 equal, 1 a > b */
    if (is_float_dtype(dt)) {
        double a = load_f64(dt, base, ea), b = load_f64(dt, base, eb);
        int na = a != a, nb = b != b;
        c = na || nb ? na - nb : (a > b) - (a < b);
    } else if (is_unsigned_dtype(dt)) {
        uint64_t a = (uint64_t)load_i64(dt, base, ea), b = (uint64_t)load_i64(dt, base, eb);
        c = (a > b) - (a < b);
    } else {
        int64_t a = load_i64(dt, base, ea), b = load_i64(dt, base, eb);
        c = (a > b) - (a < b);
    }
    if (c == 0) return ia < ib;
    return largest ? c > 0 : c < 0;
}

int rk_topk(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_topk_params *p = params;
    (void)ctx;
    int64_t dt = p->dtype;
    int es = rlx_dtype_size((int)dt);
    if (es == 0 || p->outer < 0 || p->axis_len < 0 || p->inner < 0 || p->k < 0 || p->k > p->axis_len)
        return RLX_E_ARG;
    const uint8_t *src = in[0];
    uint8_t *vals = out[0];
    int64_t *idx = out[1];
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t i = 0; i < p->inner; i++) {
            int64_t *row_idx = idx + o * p->k * p->inner + i;   /* stride inner */
            int64_t have = 0;
            for (int64_t j = 0; j < p->axis_len; j++) {
                int64_t ej = (o * p->axis_len + j) * p->inner + i;
                /* insertion position among the kept ones (indices of in0 along the axis) */
                int64_t pos = have;
                while (pos > 0) {
                    int64_t q = row_idx[(pos - 1) * p->inner];
                    if (!topk_before(dt, src, ej, j, (o * p->axis_len + q) * p->inner + i, q, (int)p->largest)) break;
                    pos--;
                }
                if (pos >= p->k) continue;
                int64_t last = have < p->k ? have : p->k - 1;
                for (int64_t m = last; m > pos; m--) row_idx[m * p->inner] = row_idx[(m - 1) * p->inner];
                row_idx[pos * p->inner] = j;
                if (have < p->k) have++;
            }
            for (int64_t m = 0; m < p->k; m++) {
                int64_t from = (o * p->axis_len + row_idx[m * p->inner]) * p->inner + i;
                memcpy(vals + (size_t)((o * p->k + m) * p->inner + i) * (size_t)es, src + (size_t)from * (size_t)es,
                       (size_t)es);
            }
        }
    return RLX_OK;
}
