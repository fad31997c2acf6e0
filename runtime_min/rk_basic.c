/* rk_basic.c - the basic kernels of the C target's library (rk_kernels.def): copies, transpose,
 * slice, gather, pad, batch norm (softmax: rk_softmax.c).
 *
 * Every kernel is a plain reference loop nest over dense row-major tensors,
 * written so that the innermost loop walks memory contiguously and a C
 * compiler can vectorize it (matmul/gemm in i-k-j order, convolution as one
 * "axpy" per filter tap along an output row). The same code runs in generated
 * models and inside rlxc for constant folding, so it uses C99 and libm only,
 * allocates nothing and keeps no state: a kernel reads its params, its inputs,
 * and writes its outputs.
 *
 * Data-movement kernels (transpose, slice, pad, gather) are generic over the
 * element size and walk the output with an odometer over at most RK_MAX_RANK
 * axes, copying one element (or one contiguous run) at a time.
 *
 * Numerics: accumulation is in float in the order of the reduced index, so a
 * result does not depend on which loop variant ran. Softmax subtracts the row
 * maximum, batch norm folds its statistics per channel. Max pooling propagates
 * NaN (rs_max from rlx_scalar.h, shared with the elementwise ops). Reductions,
 * arg-min/max and the other normalizations are in rk_norm.c.
 *
 * Params come from rlxc, which already validated the graph; the checks here
 * only refuse what would make a loop read or write out of bounds (RLX_E_ARG),
 * and data-dependent errors (a Gather index out of range: RLX_E_RANGE).
 */
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rlx_scalar.h"

#include <math.h>
#include <string.h>

/* ---- element-size generic helpers ---- */

static void copy_elem(uint8_t *dst, const uint8_t *src, size_t esize) {
    switch (esize) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, esize); break;
    }
}

/* Copies n elements from src (stride src_stride elements) to dense dst. */
static void copy_strided(uint8_t *dst, const uint8_t *src, int64_t n, int64_t src_stride, size_t esize) {
    if (src_stride == 1) {
        memcpy(dst, src, (size_t)n * esize);
        return;
    }
    ptrdiff_t step = (ptrdiff_t)src_stride * (ptrdiff_t)esize;
    switch (esize) {
    case 1:
        for (int64_t i = 0; i < n; i++, src += step) dst[i] = *src;
        break;
    case 2:
        for (int64_t i = 0; i < n; i++, src += step) memcpy(dst + 2 * i, src, 2);
        break;
    case 4:
        for (int64_t i = 0; i < n; i++, src += step) memcpy(dst + 4 * i, src, 4);
        break;
    case 8:
        for (int64_t i = 0; i < n; i++, src += step) memcpy(dst + 8 * i, src, 8);
        break;
    default:
        for (int64_t i = 0; i < n; i++, src += step) memcpy(dst + (size_t)i * esize, src, esize);
        break;
    }
}

static int bad_rank(int64_t rank) { return rank < 0 || rank > RK_MAX_RANK; }

/* Product of dims[0..rank); -1 if a dim is negative. */
static int64_t count_elems(int64_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int64_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        n *= dims[i];
    }
    return n;
}

/* ---- data movement ---- */

/* Transpose and slice (and rk_strided_copy below, by the same threshold):
 * out row r (of `row` elements, rows in the order of
 * the odometer over dims[0..rank-1)) is the strided run at src element
 * base + sum idx[a] * stride[a], element stride stride[rank-1]. Large
 * copies are split in runs of rows over the model's threads (rk_take); a
 * copy's bytes do not depend on who makes them. */
enum { GATHER_RUNS = 4 };

typedef struct {
    const uint8_t *src;
    uint8_t *dst;
    int64_t rank, base, row, rows;
    const int64_t *dims, *stride;
    size_t esize;
    int nthreads;
    rk_queue *q;
} Gather;

static void gather_rows(const Gather *G, int64_t r0, int64_t r1) {
    int64_t idx[RK_MAX_RANK] = {0}, rest = r0;
    for (int64_t a = G->rank - 2; a >= 0; a--) {
        idx[a] = rest % G->dims[a];
        rest /= G->dims[a];
    }
    uint8_t *dst = G->dst + (size_t)(r0 * G->row) * G->esize;
    for (int64_t r = r0; r < r1; r++) {
        int64_t off = G->base;
        for (int64_t a = 0; a < G->rank - 1; a++) off += idx[a] * G->stride[a];
        copy_strided(dst, G->src + (ptrdiff_t)off * (ptrdiff_t)G->esize, G->row, G->stride[G->rank - 1], G->esize);
        dst += (size_t)G->row * G->esize;
        rk_odometer_next(idx, G->dims, G->rank - 1);
    }
}

static void gather_task(void *arg, int tid) {
    const Gather *G = arg;
    int64_t cursor = 0, k, lo, hi;
    for (int v; (v = rk_take(G->q, G->nthreads, tid, GATHER_RUNS, &cursor, &k)) >= 0;) {
        rk_run_range(G->rows, G->nthreads, GATHER_RUNS, v, k, &lo, &hi);
        if (lo < hi) gather_rows(G, lo, hi);
    }
}

/* n output elements (n > 0, rank >= 1) */
static void gather(rk_ctx *ctx, Gather *G, int64_t n) {
    int64_t nt = ctx && ctx->pool && ctx->nthreads > 1 && n * (int64_t)G->esize >= RK_COPY_THREAD_MIN ? ctx->nthreads : 1;
    if (nt > G->rows) nt = G->rows;
    if (nt <= 1) {
        gather_rows(G, 0, G->rows);
        return;
    }
    rk_queue q;
    G->nthreads = (int)rk_queue_init(&q, nt);
    G->q = &q;
    rk_pool_share(ctx->pool, G->nthreads, gather_task, G);
}

int rk_copy(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_copy_params *p = params;
    (void)ctx;
    if (p->nbytes < 0) return RLX_E_ARG;
    if (p->nbytes && out[0] != in[0]) memmove(out[0], in[0], (size_t)p->nbytes);
    return RLX_OK;
}

/* A strided copy (Concat's inputs into their slots) in units of up to
 * COPY_CHUNK bytes of a row, large copies in runs of units over threads. */
enum { COPY_CHUNK = 1 << 16 };

typedef struct {
    const rk_strided_copy_params *p;
    const uint8_t *src;
    uint8_t *dst;
    int64_t per_row, units;
    int nthreads;
    rk_queue *q;
} StridedCopy;

static void strided_copy_units(const StridedCopy *S, int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; u++) {
        int64_t r = u / S->per_row, at = u % S->per_row * COPY_CHUNK;
        int64_t len = S->p->row_bytes - at < COPY_CHUNK ? S->p->row_bytes - at : COPY_CHUNK;
        memcpy(S->dst + r * S->p->dst_stride + at, S->src + r * S->p->src_stride + at, (size_t)len);
    }
}

static void strided_copy_task(void *arg, int tid) {
    const StridedCopy *S = arg;
    int64_t cursor = 0, k, lo, hi;
    for (int v; (v = rk_take(S->q, S->nthreads, tid, GATHER_RUNS, &cursor, &k)) >= 0;) {
        rk_run_range(S->units, S->nthreads, GATHER_RUNS, v, k, &lo, &hi);
        strided_copy_units(S, lo, hi);
    }
}

/* -1: S is set up, RLX_OK: nothing to copy, else the error */
static int strided_copy_init(const rk_strided_copy_params *p, const void *const *in, void *const *out, StridedCopy *S) {
    if (p->rows < 0 || p->row_bytes < 0 || p->src_off < 0 || p->dst_off < 0) return RLX_E_ARG;
    if (!p->rows || !p->row_bytes) return RLX_OK;
    StridedCopy s = {p, (const uint8_t *)in[0] + p->src_off, (uint8_t *)out[0] + p->dst_off,
                     (p->row_bytes + COPY_CHUNK - 1) / COPY_CHUNK, 0, 1, NULL};
    s.units = p->rows * s.per_row;
    *S = s;
    return -1;
}

int rk_strided_copy_serial(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    StridedCopy S;
    memset(&S, 0, sizeof S);
    int st = strided_copy_init(params, in, out, &S);
    (void)ctx;
    if (st < 0) strided_copy_units(&S, 0, S.units);
    return st < 0 ? RLX_OK : st;
}

int rk_strided_copy(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_strided_copy_params *p = params;
    StridedCopy S;
    memset(&S, 0, sizeof S);
    int st = strided_copy_init(p, in, out, &S);
    if (st >= 0) return st;
    int64_t nt = ctx && ctx->pool && ctx->nthreads > 1 && p->rows * p->row_bytes >= RK_COPY_THREAD_MIN ? ctx->nthreads : 1;
    if (nt > S.units) nt = S.units;
    if (nt <= 1) {
        strided_copy_units(&S, 0, S.units);
        return RLX_OK;
    }
    rk_queue q;
    S.nthreads = (int)rk_queue_init(&q, nt);
    S.q = &q;
    rk_pool_share(ctx->pool, S.nthreads, strided_copy_task, &S);
    return RLX_OK;
}

/* -1: G is set up (n elements), RLX_OK: done (nothing or one element),
 * else the error. out_dims and stride: G's arrays, the caller's. */
static int transpose_init(const rk_transpose_params *p, const void *const *in, void *const *out, Gather *G,
                          int64_t *out_dims, int64_t *src_stride, int64_t *count) {
    if (p->esize <= 0 || bad_rank(p->rank)) return RLX_E_ARG;
    int64_t rank = p->rank, n = count_elems(rank, p->dims);
    if (n < 0) return RLX_E_ARG;
    size_t esize = (size_t)p->esize;
    if (rank == 0) {
        copy_elem(out[0], in[0], esize);
        return RLX_OK;
    }
    int seen = 0;
    int64_t in_stride[RK_MAX_RANK];
    in_stride[rank - 1] = 1;
    for (int64_t a = rank - 2; a >= 0; a--) in_stride[a] = in_stride[a + 1] * p->dims[a + 1];
    for (int64_t a = 0; a < rank; a++) {
        int64_t q = p->perm[a];
        if (q < 0 || q >= rank || (seen >> q & 1)) return RLX_E_ARG;
        seen |= 1 << q;
        out_dims[a] = p->dims[q];
        src_stride[a] = in_stride[q];
    }
    if (n == 0) return RLX_OK;
    Gather g = {in[0], out[0], rank, 0, out_dims[rank - 1], n / out_dims[rank - 1], out_dims, src_stride, esize, 1, NULL};
    *G = g;
    *count = n;
    return -1;
}

int rk_transpose_serial(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    Gather G;
    memset(&G, 0, sizeof G);
    int64_t out_dims[RK_MAX_RANK], src_stride[RK_MAX_RANK], n;
    int st = transpose_init(params, in, out, &G, out_dims, src_stride, &n);
    (void)ctx;
    if (st < 0) gather_rows(&G, 0, G.rows);
    return st < 0 ? RLX_OK : st;
}

int rk_transpose(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    Gather G;
    memset(&G, 0, sizeof G);
    int64_t out_dims[RK_MAX_RANK], src_stride[RK_MAX_RANK], n;
    int st = transpose_init(params, in, out, &G, out_dims, src_stride, &n);
    if (st < 0) gather(ctx, &G, n);
    return st < 0 ? RLX_OK : st;
}

/* As transpose_init; step_stride: G's, the caller's. */
static int slice_init(const rk_slice_params *p, const void *const *in, void *const *out, Gather *G,
                      int64_t *step_stride, int64_t *count) {
    if (p->esize <= 0 || bad_rank(p->rank)) return RLX_E_ARG;
    int64_t rank = p->rank, n = count_elems(rank, p->out_dims);
    if (n < 0 || count_elems(rank, p->in_dims) < 0) return RLX_E_ARG;
    size_t esize = (size_t)p->esize;
    if (n == 0) return RLX_OK;
    if (rank == 0) {
        copy_elem(out[0], in[0], esize);
        return RLX_OK;
    }
    int64_t in_stride[RK_MAX_RANK], base = 0;
    in_stride[rank - 1] = 1;
    for (int64_t a = rank - 2; a >= 0; a--) in_stride[a] = in_stride[a + 1] * p->in_dims[a + 1];
    for (int64_t a = 0; a < rank; a++) {
        /* first and last element taken on this axis must both lie inside it.
         * The step is bounded first (|step| * (out - 1) <= in - 1), so
         * neither the last index nor the step's stride can overflow; an axis
         * that takes one element never uses its step (ONNX gives such an
         * axis any step, 2^62 say, whose stride would overflow). */
        int64_t first = p->starts[a], n = p->out_dims[a], step = n > 1 ? p->steps[a] : 1;
        if (p->steps[a] == 0 || first < 0 || first >= p->in_dims[a]) return RLX_E_ARG;
        if (n > 1) {
            int64_t most = (p->in_dims[a] - 1) / (n - 1);
            if (step > most || step < -most) return RLX_E_ARG;
        }
        int64_t last = first + (n - 1) * step;
        if (last < 0 || last >= p->in_dims[a]) return RLX_E_ARG;
        base += first * in_stride[a];
        step_stride[a] = step * in_stride[a];
    }
    Gather g = {in[0], out[0], rank, base, p->out_dims[rank - 1], n / p->out_dims[rank - 1], p->out_dims, step_stride,
                esize, 1, NULL};
    *G = g;
    *count = n;
    return -1;
}

int rk_slice_serial(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    Gather G;
    memset(&G, 0, sizeof G);
    int64_t step_stride[RK_MAX_RANK], n;
    int st = slice_init(params, in, out, &G, step_stride, &n);
    (void)ctx;
    if (st < 0) gather_rows(&G, 0, G.rows);
    return st < 0 ? RLX_OK : st;
}

int rk_slice(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    Gather G;
    memset(&G, 0, sizeof G);
    int64_t step_stride[RK_MAX_RANK], n;
    int st = slice_init(params, in, out, &G, step_stride, &n);
    if (st < 0) gather(ctx, &G, n);
    return st < 0 ? RLX_OK : st;
}

int rk_gather(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_gather_params *p = params;
    (void)ctx;
    if (p->esize <= 0 || p->outer < 0 || p->axis_len < 0 || p->inner < 0 || p->nidx < 0) return RLX_E_ARG;
    if (p->idx_dtype != RLX_I32 && p->idx_dtype != RLX_I64) return RLX_E_ARG;
    size_t block = (size_t)p->inner * (size_t)p->esize;
    const uint8_t *src = in[0];
    uint8_t *dst = out[0];
    for (int64_t o = 0; o < p->outer; o++) {
        for (int64_t j = 0; j < p->nidx; j++) {
            int64_t ix;
            if (p->idx_dtype == RLX_I32) {
                int32_t v;
                memcpy(&v, (const uint8_t *)in[1] + 4 * j, 4);
                ix = v;
            } else {
                memcpy(&ix, (const uint8_t *)in[1] + 8 * j, 8);
            }
            if (ix < 0) ix += p->axis_len;
            if (ix < 0 || ix >= p->axis_len) return RLX_E_RANGE;
            memcpy(dst, src + ((size_t)o * (size_t)p->axis_len + (size_t)ix) * block, block);
            dst += block;
        }
    }
    return RLX_OK;
}

/* Source coordinate of output coordinate o on an axis of length n padded by
 * `before` (may be negative), or -1 where the constant fills in. */
static int64_t pad_source(int64_t o, int64_t before, int64_t n, int64_t mode) {
    int64_t i = o - before;
    if (i >= 0 && i < n) return i;
    if (mode == 0 || n == 0) return -1;
    if (mode == 2 || n == 1) return i < 0 ? 0 : n - 1;
    /* reflect (numpy 'reflect'): period 2(n-1), mirrored without repeating the edge */
    int64_t period = 2 * (n - 1);
    i %= period;
    if (i < 0) i += period;
    return i < n ? i : period - i;
}

int rk_pad(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_pad_params *p = params;
    (void)ctx;
    if (p->esize <= 0 || bad_rank(p->rank) || p->mode < 0 || p->mode > 2) return RLX_E_ARG;
    int64_t rank = p->rank, n = count_elems(rank, p->out_dims);
    if (n < 0 || count_elems(rank, p->in_dims) < 0) return RLX_E_ARG;
    size_t esize = (size_t)p->esize;
    uint8_t *dst = out[0];
    const uint8_t *src = in[0];
    /* the pad value as a native element of esize bytes */
    uint8_t value[8] = {0};
    uint8_t *value_buf = value;
    switch (esize) {
    case 1: { uint8_t v = (uint8_t)p->value_bits; memcpy(value, &v, 1); break; }
    case 2: { uint16_t v = (uint16_t)p->value_bits; memcpy(value, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)p->value_bits; memcpy(value, &v, 4); break; }
    case 8: { uint64_t v = (uint64_t)p->value_bits; memcpy(value, &v, 8); break; }
    default: value_buf = NULL; break;   /* odd sizes: zero bytes, written below */
    }
    if (n == 0) return RLX_OK;
    if (rank == 0) {
        copy_elem(dst, src, esize);
        return RLX_OK;
    }
    int64_t in_stride[RK_MAX_RANK];
    in_stride[rank - 1] = 1;
    for (int64_t a = rank - 2; a >= 0; a--) in_stride[a] = in_stride[a + 1] * p->in_dims[a + 1];
    /* an axis whose input is empty can only be filled with the constant */
    for (int64_t a = 0; a < rank; a++)
        if (p->in_dims[a] == 0 && p->mode != 0) return RLX_E_ARG;

    int64_t last = rank - 1, row = p->out_dims[last], in_row = p->in_dims[last], before = p->pads_begin[last];
    /* the run of the output row that copies the input row as is */
    int64_t lo = before > 0 ? before : 0, hi = before + in_row < row ? before + in_row : row;
    if (hi < lo) hi = lo;
    int64_t idx[RK_MAX_RANK] = {0};
    do {
        int64_t off = 0, constant_row = 0;
        for (int64_t a = 0; a < last; a++) {
            int64_t s = pad_source(idx[a], p->pads_begin[a], p->in_dims[a], p->mode);
            if (s < 0) constant_row = 1;
            off += s * in_stride[a];
        }
        if (constant_row || in_row == 0) {
            for (int64_t o = 0; o < row; o++)
                if (value_buf) copy_elem(dst + (size_t)o * esize, value_buf, esize);
                else memset(dst + (size_t)o * esize, 0, esize);
        } else {
            const uint8_t *srow = src + (size_t)off * esize;
            for (int64_t o = 0; o < row; o++) {
                if (o == lo && hi > lo) {
                    memcpy(dst + (size_t)o * esize, srow + (size_t)(o - before) * esize, (size_t)(hi - lo) * esize);
                    o = hi - 1;
                    continue;
                }
                int64_t s = pad_source(o, before, in_row, p->mode);
                if (s >= 0) copy_elem(dst + (size_t)o * esize, srow + (size_t)s * esize, esize);
                else if (value_buf) copy_elem(dst + (size_t)o * esize, value_buf, esize);
                else memset(dst + (size_t)o * esize, 0, esize);
            }
        }
        dst += (size_t)row * esize;
    } while (rk_odometer_next(idx, p->out_dims, last));
    return RLX_OK;
}

/* linear algebra: rk_linalg.c */

/* convolution: conv2d_f32 in rk_convgemm.c, the rest of the conv family in rk_conv.c */

/* ---- normalization ---- */

/* One channel's row, y = (x - mu) * g + beta, then ReLU if relu: eight at a
 * time, which compilers vectorize as straight-line code even at -O2 (the
 * loop alone they did not), then the rest. */
static void bn_row(float *restrict y, const float *restrict x, int64_t n, float mu, float g, float beta, int relu) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        float t[8];
        for (int k = 0; k < 8; k++) t[k] = (x[i + k] - mu) * g + beta;
        if (relu)
            for (int k = 0; k < 8; k++) y[i + k] = rs_relu(t[k]);
        else
            for (int k = 0; k < 8; k++) y[i + k] = t[k];
    }
    for (; i < n; i++) y[i] = relu ? rs_relu((x[i] - mu) * g + beta) : (x[i] - mu) * g + beta;
}

/* The (batch, channel) rows of one BatchNormalization, split over threads
 * in contiguous runs (as the poolings split their planes); a row is computed
 * the same way whichever thread takes it. */
typedef struct {
    const rk_batchnorm_f32_params *p;
    const void *const *in;
    float *y;
    rk_queue *q;
    int64_t ntasks;
} BnRun;

#define BN_RUNS 4
#define BN_THREAD_MIN (1 << 16)   /* elements below which one thread does it all */

static void bn_one(const BnRun *B, int64_t row) {
    const rk_batchnorm_f32_params *p = B->p;
    const float *x = B->in[0], *scale = B->in[1], *shift = B->in[2], *mean = B->in[3], *var = B->in[4];
    int64_t ch = row % p->c;
    float mu = mean[ch], g = scale[ch] / sqrtf(var[ch] + (float)p->eps), beta = shift[ch];
    const float *xr = x + row * p->hw;
    float *yr = B->y + row * p->hw;
    if (p->act == RS_ACT_NONE || p->act == RS_ACT_RELU)   /* DenseNet's BatchNorm + ReLU: one pass */
        bn_row(yr, xr, p->hw, mu, g, beta, p->act == RS_ACT_RELU);
    else
        for (int64_t i = 0; i < p->hw; i++)
            yr[i] = rs_act((xr[i] - mu) * g + beta, (int)p->act, (float)p->act_a, (float)p->act_b);
}

static void bn_task(void *arg, int tid) {
    const BnRun *B = arg;
    int64_t rows = B->p->n * B->p->c;
    for (int64_t cursor = 0, r = -1, r1 = 0; rk_next_item(B->q, (int)B->ntasks, tid, BN_RUNS, rows, &cursor, &r, &r1);)
        bn_one(B, r);
}

int rk_batchnorm_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_batchnorm_f32_params *p = params;
    if (p->n < 0 || p->c < 0 || p->hw < 0) return RLX_E_ARG;
    int64_t rows = p->n * p->c;
    if (!rows || !p->hw) return RLX_OK;
    BnRun B = {p, in, out[0], NULL, 1};
    int64_t nt = ctx && ctx->pool && ctx->nthreads > 1 && rows * p->hw >= BN_THREAD_MIN ? ctx->nthreads : 1;
    rk_queue q;
    B.ntasks = rk_queue_init(&q, nt < rows ? nt : rows);
    B.q = &q;
    if (B.ntasks > 1) rk_pool_share(ctx->pool, (int)B.ntasks, bn_task, &B);
    else
        for (int64_t r = 0; r < rows; r++) bn_one(&B, r);
    return RLX_OK;
}

/* softmax: rk_softmax.c (compiled per instruction set) */
