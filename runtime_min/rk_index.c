/* rk_index.c - the index family's kernels: Resize, GatherElements, GatherND,
 * ScatterElements, ScatterND (ONNX semantics).
 *
 * Gathers and scatters only move elements, so they are generic over the
 * element size; indices are i32 or i64 data, read at run time: a negative
 * index counts from the end of its axis and anything outside [-n, n) is
 * RLX_E_RANGE (checked before anything is written, for the scatters too,
 * so a failed run never leaves a half-updated output). The scatters copy
 * their data input first (skipped when the planner gave the output the same
 * bytes) and then apply the updates in index order, so with duplicate
 * indices and reduction none the last update wins, as in the ONNX reference;
 * add and mul combine in the element type (floats through double, exact for
 * one f32 operation; integers wrap; bools are or / and).
 *
 * Resize follows the ONNX reference implementation axis by axis: each output
 * coordinate x maps to a source coordinate x_ori by the coordinate
 * transformation mode, computed in double from the scale of that axis (the
 * given f32 scale, or out/in when sizes were given, as the reference does;
 * "output width" in those formulas is scale * in, a real number). The mode
 * turns x_ori into at most 4 taps (index, weight) per axis: nearest one tap,
 * linear two (1 - r, r), cubic four (Keys' kernel with coefficient A), where
 * r in (0, 1] is x_ori's distance from the tap left of it. Taps outside the
 * axis read the edge element (the reference pads by edge); with
 * exclude_outside they get weight 0 and the rest are renormalized. An output
 * element is the sum over the tensor product of its axes' taps, which equals
 * the reference's axis-by-axis interpolation; with tf_crop_and_resize an
 * x_ori outside [0, in - 1] on any axis gives extrapolation instead. Taps of
 * weight 0 are skipped, so an axis that is not resized costs one tap. The
 * taps of an axis are recomputed only when that axis' output coordinate
 * changes. Nearest copies the element's bytes (any dtype, exact); linear
 * and cubic accumulate in double and round once when storing (integers
 * saturate, like a cast). Scales, sizes and roi are read at run time, so
 * the kernel checks that they agree with the planned output shape.
 * pytorch_half_pixel maps an output of length 1 to x_ori = 0, as the ONNX
 * spec and ONNX Runtime do (the reference's -0.5 differs only for cubic).
 */
#include "rlx_rt.h"
#include "rk_typed.h"

#include <math.h>
#include <string.h>

/* ---- element access ---- */

static int64_t load_index(int64_t dtype, const void *base, int64_t i) {
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

/* An index against an axis of n: negative counts from the end; -1 if out
 * of range. */
static int64_t wrap_index(int64_t ix, int64_t n) {
    if (ix < 0) ix += n;
    return ix >= 0 && ix < n ? ix : -1;
}

static int is_float(int64_t dt) { return dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16; }
static int is_unsigned(int64_t dt) { return dt == RLX_U8 || dt == RLX_U16 || dt == RLX_U32 || dt == RLX_U64 || dt == RLX_BOOL; }

/* Integer element i as 64 bits, sign- or zero-extended. */
static uint64_t load_bits(int64_t dt, const uint8_t *p, int64_t i) {
    int sz = rlx_dtype_size((int)dt);
    uint64_t u = 0;
    memcpy(&u, p + (size_t)i * (size_t)sz, (size_t)sz);   /* little-endian: low bytes */
    if (!is_unsigned(dt) && sz < 8 && (u >> (8 * sz - 1) & 1u)) u |= ~(uint64_t)0 << (8 * sz);
    return u;
}

static void store_bits(int64_t dt, uint8_t *p, int64_t i, uint64_t u) {
    int sz = rlx_dtype_size((int)dt);
    memcpy(p + (size_t)i * (size_t)sz, &u, (size_t)sz);
}

static double load_num(int64_t dt, const uint8_t *p, int64_t i) {
    switch (dt) {
    case RLX_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case RLX_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    case RLX_F16: case RLX_BF16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        return dt == RLX_F16 ? rlx_f16_to_f32(h) : rlx_bf16_to_f32(h);
    }
    default: {
        uint64_t u = load_bits(dt, p, i);
        return is_unsigned(dt) ? (double)u : (double)(int64_t)u;
    }
    }
}

/* Saturating, NaN -> 0, like a float-to-integer Cast. */
static void store_num(int64_t dt, uint8_t *p, int64_t i, double v) {
    switch (dt) {
    case RLX_F32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); return; }
    case RLX_F64: memcpy(p + 8 * i, &v, 8); return;
    case RLX_F16: case RLX_BF16: {
        uint16_t h = dt == RLX_F16 ? rlx_f32_to_f16((float)v) : rlx_f32_to_bf16((float)v);
        memcpy(p + 2 * i, &h, 2);
        return;
    }
    case RLX_BOOL: store_bits(dt, p, i, v != 0); return;
    default: break;
    }
    int bits = 8 * rlx_dtype_size((int)dt);
    uint64_t u;
    if (v != v) {
        u = 0;
    } else if (is_unsigned(dt)) {
        double hi = ldexp(1.0, bits);   /* first value past the maximum */
        u = v <= 0 ? 0 : v >= hi ? (bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1)) : (uint64_t)v;
    } else {
        double lim = ldexp(1.0, bits - 1);
        int64_t lo = bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        int64_t hi = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
        int64_t s = v <= -lim ? lo : v >= lim ? hi : (int64_t)v;
        u = (uint64_t)s;
    }
    store_bits(dt, p, i, u);
}

/* dst[di] (op)= src[si]: reduction 0 none, 1 add, 2 mul. */
static void combine(int64_t dt, uint8_t *dst, int64_t di, const uint8_t *src, int64_t si, int64_t reduction) {
    int sz = rlx_dtype_size((int)dt);
    if (reduction == 0) {
        memcpy(dst + (size_t)di * (size_t)sz, src + (size_t)si * (size_t)sz, (size_t)sz);
    } else if (is_float(dt)) {
        double a = load_num(dt, dst, di), b = load_num(dt, src, si);
        double r = reduction == 1 ? a + b : a * b;
        /* f32: the exact double result rounded once, as float arithmetic does */
        store_num(dt, dst, di, r);
    } else if (dt == RLX_BOOL) {
        uint64_t a = load_bits(dt, dst, di) != 0, b = load_bits(dt, src, si) != 0;
        store_bits(dt, dst, di, reduction == 1 ? (a | b) : (a & b));
    } else {
        uint64_t a = load_bits(dt, dst, di), b = load_bits(dt, src, si);
        store_bits(dt, dst, di, reduction == 1 ? a + b : a * b);   /* wraps like the integer type */
    }
}

static int64_t dims_numel(const int64_t *dims, int64_t rank) {
    int64_t n = 1;
    for (int64_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}

/* Row-major element strides of dims. */
static void dims_strides(const int64_t *dims, int64_t rank, int64_t *strides) {
    int64_t s = 1;
    for (int64_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

static int bad_dims(const int64_t *dims, int64_t rank) {
    if (rank < 0 || rank > RK_MAX_RANK) return 1;
    for (int64_t i = 0; i < rank; i++)
        if (dims[i] < 0) return 1;
    return 0;
}

/* ---- GatherElements / ScatterElements ---- */

/* The data offset (elements) of every index element, in order, checked;
 * calls visit(ctx, k, offset) for each, or returns RLX_E_RANGE first. */
typedef struct {
    int64_t rank, axis, idx_dtype;
    const int64_t *data_dims, *idx_dims;
    const void *idx;
} ElementsWalk;

static int elements_walk(const ElementsWalk *w, int check_only, void (*visit)(void *, int64_t, int64_t), void *ctx) {
    int64_t dstr[RK_MAX_RANK], o[RK_MAX_RANK] = {0};
    int64_t n = dims_numel(w->idx_dims, w->rank);
    dims_strides(w->data_dims, w->rank, dstr);
    for (int64_t k = 0; k < n; k++) {
        int64_t ix = wrap_index(load_index(w->idx_dtype, w->idx, k), w->data_dims[w->axis]);
        if (ix < 0) return RLX_E_RANGE;
        if (!check_only) {
            int64_t off = 0;
            for (int64_t a = 0; a < w->rank; a++) off += (a == w->axis ? ix : o[a]) * dstr[a];
            visit(ctx, k, off);
        }
        rk_odometer_next(o, w->idx_dims, w->rank);
    }
    return RLX_OK;
}

static int elements_args(int64_t esize, int64_t rank, const int64_t *data_dims, const int64_t *idx_dims, int64_t axis,
                         int64_t idx_dtype) {
    if (esize <= 0 || rank < 1 || bad_dims(data_dims, rank) || bad_dims(idx_dims, rank)) return 0;
    if (axis < 0 || axis >= rank || (idx_dtype != RLX_I32 && idx_dtype != RLX_I64)) return 0;
    for (int64_t a = 0; a < rank; a++)
        if (a != axis && idx_dims[a] > data_dims[a]) return 0;
    return 1;
}

typedef struct {
    int64_t esize, dtype, reduction;
    const uint8_t *src;
    uint8_t *dst;
} Mover;

static void gather_visit(void *ctx, int64_t k, int64_t off) {
    Mover *m = ctx;
    memcpy(m->dst + (size_t)k * (size_t)m->esize, m->src + (size_t)off * (size_t)m->esize, (size_t)m->esize);
}

int rk_gather_elements(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_gather_elements_params *p = params;
    (void)ctx;
    if (!elements_args(p->esize, p->rank, p->data_dims, p->idx_dims, p->axis, p->idx_dtype)) return RLX_E_ARG;
    ElementsWalk w = {p->rank, p->axis, p->idx_dtype, p->data_dims, p->idx_dims, in[1]};
    Mover m = {p->esize, 0, 0, in[0], out[0]};
    if (!dims_numel(p->idx_dims, p->rank)) return RLX_OK;
    if (!dims_numel(p->data_dims, p->rank)) return RLX_E_RANGE;   /* an index into an empty axis */
    return elements_walk(&w, 0, gather_visit, &m);
}

static void scatter_visit(void *ctx, int64_t k, int64_t off) {
    Mover *m = ctx;
    combine(m->dtype, m->dst, off, m->src, k, m->reduction);
}

int rk_scatter_elements(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_scatter_elements_params *p = params;
    (void)ctx;
    int64_t es = rlx_dtype_size((int)p->dtype);
    if (!elements_args(es, p->rank, p->data_dims, p->idx_dims, p->axis, p->idx_dtype)) return RLX_E_ARG;
    if (p->reduction < 0 || p->reduction > 2) return RLX_E_ARG;
    ElementsWalk w = {p->rank, p->axis, p->idx_dtype, p->data_dims, p->idx_dims, in[1]};
    if (dims_numel(p->idx_dims, p->rank) && !dims_numel(p->data_dims, p->rank)) return RLX_E_RANGE;
    int st = elements_walk(&w, 1, NULL, NULL);
    if (st) return st;
    if (out[0] != in[0]) memcpy(out[0], in[0], (size_t)(dims_numel(p->data_dims, p->rank) * es));
    Mover m = {es, p->dtype, p->reduction, in[2], out[0]};
    return elements_walk(&w, 0, scatter_visit, &m);
}

/* ---- GatherND / ScatterND ---- */

/* The element offset (within its batch) of index tuple t, or -1. */
static int64_t nd_offset(int64_t idx_dtype, const void *idx, int64_t t, int64_t k, const int64_t *dims, int64_t slice) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; j++) {
        int64_t ix = wrap_index(load_index(idx_dtype, idx, t * k + j), dims[j]);
        if (ix < 0) return -1;
        off = off * dims[j] + ix;
    }
    return off * slice;
}

int rk_gather_nd(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_gather_nd_params *p = params;
    (void)ctx;
    if (p->esize <= 0 || p->batch < 0 || p->nper < 0 || p->k < 0 || bad_dims(p->dims, p->k) || p->slice < 0)
        return RLX_E_ARG;
    if (p->idx_dtype != RLX_I32 && p->idx_dtype != RLX_I64) return RLX_E_ARG;
    int64_t per_batch = dims_numel(p->dims, p->k) * p->slice;   /* data elements per batch */
    size_t row = (size_t)p->slice * (size_t)p->esize;
    const uint8_t *src = in[0];
    uint8_t *dst = out[0];
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t j = 0; j < p->nper; j++) {
            int64_t t = b * p->nper + j;
            int64_t off = nd_offset(p->idx_dtype, in[1], t, p->k, p->dims, p->slice);
            if (off < 0) return RLX_E_RANGE;
            memcpy(dst + (size_t)t * row, src + (size_t)(b * per_batch + off) * (size_t)p->esize, row);
        }
    return RLX_OK;
}

int rk_scatter_nd(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_scatter_nd_params *p = params;
    (void)ctx;
    int64_t es = rlx_dtype_size((int)p->dtype);
    if (es <= 0 || p->numel < 0 || p->nupd < 0 || p->k < 0 || bad_dims(p->dims, p->k) || p->slice < 0) return RLX_E_ARG;
    if (p->idx_dtype != RLX_I32 && p->idx_dtype != RLX_I64) return RLX_E_ARG;
    if (p->reduction < 0 || p->reduction > 2) return RLX_E_ARG;
    if (dims_numel(p->dims, p->k) * p->slice != p->numel) return RLX_E_ARG;
    for (int64_t t = 0; t < p->nupd; t++)
        if (nd_offset(p->idx_dtype, in[1], t, p->k, p->dims, p->slice) < 0) return RLX_E_RANGE;
    if (out[0] != in[0]) memcpy(out[0], in[0], (size_t)(p->numel * es));
    for (int64_t t = 0; t < p->nupd; t++) {
        int64_t off = nd_offset(p->idx_dtype, in[1], t, p->k, p->dims, p->slice);
        for (int64_t e = 0; e < p->slice; e++) combine(p->dtype, out[0], off + e, in[2], t * p->slice + e, p->reduction);
    }
    return RLX_OK;
}

/* ---- Resize ---- */

enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC };
enum { CT_HALF_PIXEL, CT_PYTORCH_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC, CT_TF_HALF_PIXEL_FOR_NN, CT_TF_CROP_AND_RESIZE };
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL };

typedef struct {
    int64_t idx[4];
    double w[4];
    int n;
    int outside;        /* tf_crop_and_resize: extrapolate */
} Taps;

typedef struct {
    const rk_resize_params *p;
    double scale[RK_MAX_RANK];
    double roi_start[RK_MAX_RANK], roi_end[RK_MAX_RANK];
} ResizeAxes;

/* Keys' cubic convolution weights of the taps at distance 1 + r, r, 1 - r,
 * 2 - r from x_ori (r in (0, 1]). */
static void cubic_weights(double r, double A, double w[4]) {
    double s = r + 1, t = 1 - r, u = 2 - r;
    w[0] = ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
    w[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    w[2] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[3] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
}

/* The source coordinate of output coordinate x on axis a. */
static double source_coord(const ResizeAxes *R, int a, int64_t x, int *outside) {
    const rk_resize_params *p = R->p;
    double in = (double)p->in_dims[a], scale = R->scale[a], ow = scale * in, xd = (double)x;
    *outside = 0;
    switch (p->coord_mode) {
    case CT_PYTORCH_HALF_PIXEL: return ow > 1 ? (xd + 0.5) / scale - 0.5 : 0.0;
    case CT_ALIGN_CORNERS: return ow == 1 ? 0.0 : xd * (in - 1) / (ow - 1);
    case CT_ASYMMETRIC: return xd / scale;
    case CT_TF_HALF_PIXEL_FOR_NN: return (xd + 0.5) / scale;
    case CT_TF_CROP_AND_RESIZE: {
        double s = R->roi_start[a], e = R->roi_end[a];
        double xo = ow > 1 ? s * (in - 1) + xd * (e - s) * (in - 1) / (ow - 1) : 0.5 * (s + e) * (in - 1);
        if (!(xo >= 0 && xo <= in - 1)) *outside = 1;
        return xo;
    }
    default: return (xd + 0.5) / scale - 0.5;
    }
}

static void axis_taps(const ResizeAxes *R, int a, int64_t x, Taps *t) {
    const rk_resize_params *p = R->p;
    int64_t n = p->in_dims[a];
    double xo = source_coord(R, a, x, &t->outside);
    /* far outside, every tap reads the edge anyway; bounding x_ori keeps the
     * conversions to integers defined */
    if (xo != xo) xo = 0;
    if (xo < -8) xo = -8;
    if (xo > (double)n + 8) xo = (double)n + 8;
    if (p->mode == MODE_NEAREST) {
        double fl = floor(xo), frac = xo - fl;
        int up;
        if (frac == 0) up = 0;
        else if (p->nearest_mode == NM_ROUND_PREFER_CEIL) up = frac >= 0.5;
        else if (p->nearest_mode == NM_FLOOR) up = 0;
        else if (p->nearest_mode == NM_CEIL) up = 1;
        else up = frac > 0.5;
        t->idx[0] = (int64_t)fl + up;
        t->w[0] = 1;
        t->n = 1;
    } else {
        /* x0 is the tap left of x_ori, r in (0, 1] (an integer x_ori is r = 1
         * from the tap before it, as in the reference) */
        double x0 = ceil(xo) - 1, r = xo - x0;
        int64_t i0 = (int64_t)x0;
        if (p->mode == MODE_LINEAR) {
            t->idx[0] = i0;
            t->idx[1] = i0 + 1;
            t->w[0] = 1 - r;
            t->w[1] = r;
            t->n = 2;
        } else {
            for (int k = 0; k < 4; k++) t->idx[k] = i0 - 1 + k;
            cubic_weights(r, p->cubic_a, t->w);
            t->n = 4;
        }
        if (p->exclude_outside) {
            double sum = 0;
            for (int k = 0; k < t->n; k++) {
                if (t->idx[k] < 0 || t->idx[k] >= n) t->w[k] = 0;
                sum += t->w[k];
            }
            if (sum != 0)
                for (int k = 0; k < t->n; k++) t->w[k] /= sum;
        }
    }
    int kept = 0;
    for (int k = 0; k < t->n; k++) {
        if (t->w[k] == 0 && t->n > 1) continue;
        t->idx[kept] = t->idx[k] < 0 ? 0 : t->idx[k] >= n ? n - 1 : t->idx[k];
        t->w[kept++] = t->w[k];
    }
    if (!kept) {   /* every weight 0 (exclude_outside far outside): a zero sum */
        t->idx[0] = 0;
        t->w[0] = 0;
        kept = 1;
    }
    t->n = kept;
}

/* Reads scales/sizes/roi and checks them against the planned shape. */
static int resize_axes(const rk_resize_params *p, const void *const *in, ResizeAxes *R) {
    R->p = p;
    for (int a = 0; a < p->rank; a++) {
        double in_d = (double)p->in_dims[a];
        if (in[3]) {
            if (load_index(RLX_I64, in[3], a) != p->out_dims[a]) return RLX_E_ARG;
            R->scale[a] = p->in_dims[a] ? (double)p->out_dims[a] / in_d : 1.0;
        } else {
            float s;
            memcpy(&s, (const uint8_t *)in[2] + 4 * a, 4);
            if (!(s > 0) || isinf(s)) return RLX_E_ARG;
            double want = floor((double)s * in_d);
            if (!(want < 9.0e18) || (int64_t)want != p->out_dims[a]) return RLX_E_ARG;
            R->scale[a] = s;
        }
        R->roi_start[a] = 0;
        R->roi_end[a] = 1;
        if (in[1]) {
            R->roi_start[a] = load_num(p->roi_dtype, in[1], a);
            R->roi_end[a] = load_num(p->roi_dtype, in[1], p->rank + a);
        }
    }
    return RLX_OK;
}

int rk_resize(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_resize_params *p = params;
    (void)ctx;
    int64_t es = rlx_dtype_size((int)p->dtype);
    if (es <= 0 || p->rank < 1 || bad_dims(p->in_dims, p->rank) || bad_dims(p->out_dims, p->rank)) return RLX_E_ARG;
    if (p->mode < 0 || p->mode > 2 || p->coord_mode < 0 || p->coord_mode > 5 || p->nearest_mode < 0 || p->nearest_mode > 3)
        return RLX_E_ARG;
    if ((in[2] != NULL) == (in[3] != NULL)) return RLX_E_ARG;   /* exactly one of scales and sizes */
    if (in[1] && p->roi_dtype != RLX_F32 && p->roi_dtype != RLX_F64 && p->roi_dtype != RLX_F16) return RLX_E_ARG;
    if (p->mode != MODE_NEAREST && p->dtype == RLX_BOOL) return RLX_E_ARG;
    ResizeAxes R;
    int st = resize_axes(p, in, &R);
    if (st) return st;
    int64_t total = dims_numel(p->out_dims, p->rank);
    if (!total) return RLX_OK;
    for (int a = 0; a < p->rank; a++)
        if (!p->in_dims[a]) return RLX_E_ARG;   /* nothing to interpolate from */
    int64_t istr[RK_MAX_RANK], o[RK_MAX_RANK] = {0};
    dims_strides(p->in_dims, p->rank, istr);
    Taps taps[RK_MAX_RANK];
    for (int a = 0; a < p->rank; a++) axis_taps(&R, a, 0, &taps[a]);
    const uint8_t *src = in[0];
    uint8_t *dst = out[0];
    for (int64_t e = 0; e < total; e++) {
        int outside = 0;
        for (int a = 0; a < p->rank; a++) outside |= taps[a].outside;
        if (outside) {
            store_num(p->dtype, dst, e, p->extrapolation);
        } else if (p->mode == MODE_NEAREST) {
            int64_t off = 0;
            for (int a = 0; a < p->rank; a++) off += taps[a].idx[0] * istr[a];
            memcpy(dst + (size_t)e * (size_t)es, src + (size_t)off * (size_t)es, (size_t)es);
        } else {
            /* the tensor product of the axes' taps, as an odometer c */
            int64_t c[RK_MAX_RANK] = {0}, cn[RK_MAX_RANK];
            for (int a = 0; a < p->rank; a++) cn[a] = taps[a].n;
            double acc = 0;
            do {
                int64_t off = 0;
                double w = 1;
                for (int a = 0; a < p->rank; a++) {
                    off += taps[a].idx[c[a]] * istr[a];
                    w *= taps[a].w[c[a]];
                }
                acc += w * load_num(p->dtype, src, off);
            } while (rk_odometer_next(c, cn, p->rank));
            store_num(p->dtype, dst, e, acc);
        }
        /* next output index; the taps of every axis that moved */
        for (int a = (int)p->rank - 1; a >= 0; a--) {
            int wrapped = ++o[a] == p->out_dims[a];
            if (wrapped) o[a] = 0;
            axis_taps(&R, a, o[a], &taps[a]);
            if (!wrapped) break;
        }
    }
    return RLX_OK;
}
