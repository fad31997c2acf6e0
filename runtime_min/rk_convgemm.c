/* rk_convgemm.c - 2-D convolution (conv2d_f32): GEMM or direct, with epilogue.
 *
 * method 1 (GEMM): for each image and group, y_g (ocg x N, N = oh*ow) =
 * W_g (ocg x K, K = cg*kh*kw) * col (K x N). A 1x1 convolution with stride 1
 * and no padding reads x itself as col; otherwise col is built (im2col) one
 * block of nblk output columns at a time, in the calling thread's scratch,
 * so scratch stays a few hundred KB whatever the layer. The weights may come
 * pre-packed for the GEMM (a_packed: one rk_sgemm_pack_a block per group,
 * made by rlxc at compile time).
 *
 * method 0 (direct): a loop nest with the innermost loop along an output
 * row; used for depthwise and other thin group convolutions, where a GEMM
 * has nothing to reuse.
 *
 * Both split the work over threads by disjoint output blocks (column blocks,
 * and when those are too few, slices of output channels for GEMM; output
 * channels for direct), so results do not depend on the thread count, and
 * apply the fused epilogue to the part each computed: bias (per output
 * channel), residual (in3, the output's shape), activation. The GEMM does it
 * inside, on each register tile as it completes, while it is still in L1.
 */
#include <string.h>

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rlx_scalar.h"

typedef struct {
    const rk_conv2d_f32_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    rk_ctx *ctx;
    int64_t cg, ocg, kdim, ncols, nblocks, ntasks;
    /* GEMM: block b covers NR-wide column tiles [ntiles*b/nblocks,
     * ntiles*(b+1)/nblocks) (when tiled; else nblk columns each), and each
     * block's rows are cut into msplit slices of mstep output channels */
    int tiled;
    int64_t ntiles, msplit, mstep;
} Conv;

enum { COL_TILE = 16 };   /* the GEMM's register tile width (NR in rk_gemm.c) */

static int64_t align16f(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* Bytes of scratch one thread needs: the col block and the GEMM's packing. */
size_t rk_conv2d_scratch(int64_t ocg, int64_t kdim, int64_t nblk) {
    return (size_t)(align16f(kdim * nblk) * (int64_t)sizeof(float)) + rk_sgemm_scratch_size(ocg, nblk, kdim) + 64;
}

/* y[0..n) = act(y + bias + res): the activation's switch is outside the
 * loops, so each loop is a straight run a compiler vectorizes. */
static void epilogue_run(float *y, int64_t n, float bias, const float *res, int64_t act, float a, float b) {
    if (res) {
        for (int64_t j = 0; j < n; j++) y[j] = y[j] + bias + res[j];
    } else if (bias != 0.0f) {
        for (int64_t j = 0; j < n; j++) y[j] += bias;
    }
    switch (act) {
    case RS_ACT_NONE: break;
    case RS_ACT_RELU:
        for (int64_t j = 0; j < n; j++) y[j] = rs_relu(y[j]);
        break;
    case RS_ACT_CLIP:
        for (int64_t j = 0; j < n; j++) y[j] = rs_clip(y[j], a, b);
        break;
    default:
        for (int64_t j = 0; j < n; j++) y[j] = rs_act(y[j], (int)act, a, b);
        break;
    }
}

/* im2col of output columns [col0, col0+cols) of one image and group into
 * col (K x cols): row (ic, ky, kx) holds, for each output pixel, the input
 * pixel that tap reads (0 in the padding). Walked an output row segment at
 * a time: the valid part of a segment is one contiguous (or strided) copy. */
static void im2col(const Conv *C, const float *xg, float *col, int64_t col0, int64_t cols) {
    const rk_conv2d_f32_params *p = C->p;
    int64_t plane = p->h * p->w;
    for (int64_t ic = 0; ic < C->cg; ic++) {
        const float *xc = xg + ic * plane;
        for (int64_t ky = 0; ky < p->kh; ky++)
            for (int64_t kx = 0; kx < p->kw; kx++) {
                float *dst = col + ((ic * p->kh + ky) * p->kw + kx) * cols;
                int64_t off = kx * p->dw - p->pl, lo, hi;
                rk_out_range(p->ow, p->sw, off, p->w, &lo, &hi);
                int64_t j = 0;
                while (j < cols) {
                    int64_t c = col0 + j, oy = c / p->ow, ox0 = c % p->ow;
                    int64_t ox1 = p->ow - ox0 < cols - j ? p->ow : ox0 + (cols - j);
                    float *d = dst + j - ox0;   /* d[ox] is this row's column ox */
                    int64_t iy = oy * p->sh - p->pt + ky * p->dh;
                    if (iy < 0 || iy >= p->h) {
                        for (int64_t ox = ox0; ox < ox1; ox++) d[ox] = 0.0f;
                    } else {
                        const float *xrow = xc + iy * p->w;
                        int64_t a = lo > ox0 ? lo : ox0, b = hi < ox1 ? hi : ox1;
                        if (a > b) a = b;
                        for (int64_t ox = ox0; ox < a; ox++) d[ox] = 0.0f;
                        if (p->sw == 1) {
                            if (b > a) memcpy(d + a, xrow + a + off, sizeof(float) * (size_t)(b - a));
                        } else {
                            for (int64_t ox = a; ox < b; ox++) d[ox] = xrow[ox * p->sw + off];
                        }
                        for (int64_t ox = b; ox < ox1; ox++) d[ox] = 0.0f;
                    }
                    j += ox1 - ox0;
                }
            }
    }
}

/* Columns [*col0, *col0 + *cols) of column block blk. */
static void block_cols(const Conv *C, int64_t blk, int64_t *col0, int64_t *cols) {
    if (C->tiled) {
        int64_t t0 = C->ntiles * blk / C->nblocks, t1 = C->ntiles * (blk + 1) / C->nblocks;
        int64_t c1 = t1 * COL_TILE < C->ncols ? t1 * COL_TILE : C->ncols;
        *col0 = t0 * COL_TILE;
        *cols = c1 - *col0;
    } else {
        *col0 = blk * C->p->nblk;
        *cols = C->ncols - *col0 < C->p->nblk ? C->ncols - *col0 : C->p->nblk;
    }
}

/* Task t: row slice t % msplit of block t / msplit over (image, group, column
 * block); the epilogue runs inside the GEMM, on each tile as it completes. */
static void gemm_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    uint8_t *scratch = C->ctx->scratch + (size_t)tid * C->ctx->scratch_per_thread;
    float *col = (float *)(void *)scratch;
    void *gscratch = scratch + align16f(C->kdim * p->nblk) * (int64_t)sizeof(float);
    int direct_b = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 &&
                   p->oh == p->h && p->ow == p->w;
    size_t packed_group = rk_sgemm_packed_a_size(C->ocg, C->kdim) / sizeof(float);
    int64_t total = p->n * p->group * C->nblocks * C->msplit;
    for (int64_t t = tid; t < total; t += C->ntasks) {
        int64_t ms = t % C->msplit, bt = t / C->msplit;
        int64_t blk = bt % C->nblocks, bg = bt / C->nblocks, gi = bg % p->group, b = bg / p->group;
        int64_t col0, cols;
        block_cols(C, blk, &col0, &cols);
        const float *xg = C->x + (b * p->c + gi * C->cg) * p->h * p->w;
        int64_t yoff = (b * p->oc + gi * C->ocg) * C->ncols;
        rk_sgemm_args g;
        memset(&g, 0, sizeof g);
        g.m = C->ocg;
        g.n = cols;
        g.k = C->kdim;
        g.alpha = 1.0f;
        g.beta = 0.0f;
        if (p->a_packed) {
            g.packed_a = C->w + (size_t)gi * packed_group;
        } else {
            g.a = C->w + gi * C->ocg * C->kdim;
            g.lda = C->kdim;
        }
        if (direct_b) {
            g.b = xg + col0;
            g.ldb = C->ncols;
        } else {
            im2col(C, xg, col, col0, cols);
            g.b = col;
            g.ldb = cols;
        }
        g.c = C->y + yoff + col0;
        g.ldc = C->ncols;
        g.bias = C->bias ? C->bias + gi * C->ocg : NULL;
        g.res = C->res ? C->res + yoff + col0 : NULL;
        g.ldres = C->ncols;
        g.act = (int)p->act;
        g.act_a = (float)p->act_a;
        g.act_b = (float)p->act_b;
        if (C->msplit == 1) rk_sgemm_ex(&g, gscratch, 1, NULL, NULL);
        else rk_sgemm_rows(&g, ms * C->mstep, (ms + 1) * C->mstep, gscratch);
    }
}

/* The busiest thread's work, in register tiles (6 rows x 16 columns), when
 * ntasks threads take the tasks round-robin. */
static int64_t busiest_load(const Conv *C) {
    int64_t total = C->p->n * C->p->group * C->nblocks * C->msplit, worst = 0;
    for (int64_t tid = 0; tid < C->ntasks; tid++) {
        int64_t load = 0;
        for (int64_t t = tid; t < total; t += C->ntasks) {
            int64_t ms = t % C->msplit, blk = t / C->msplit % C->nblocks, col0, cols;
            block_cols(C, blk, &col0, &cols);
            int64_t m1 = (ms + 1) * C->mstep < C->ocg ? (ms + 1) * C->mstep : C->ocg;
            load += (cols + COL_TILE - 1) / COL_TILE * ((m1 - ms * C->mstep + 5) / 6);
        }
        if (load > worst) worst = load;
    }
    return worst;
}

/* Column blocks cut at tile boundaries, as even as the scratch (nblk columns
 * of im2col) allows. If that leaves threads idle or uneven, two ways out:
 * more, smaller column blocks (each thread then reads all the weights), or
 * each block's output channels split over the threads (each then builds the
 * same im2col block and packs the same B): the first when the output plane
 * outweighs the weights, the second otherwise, kept only for a clear gain. */
static void plan_gemm(Conv *C, int nt) {
    const rk_conv2d_f32_params *p = C->p;
    C->nblocks = (C->ncols + p->nblk - 1) / p->nblk;
    C->ntiles = (C->ncols + COL_TILE - 1) / COL_TILE;
    C->tiled = p->nblk >= C->ncols || p->nblk % COL_TILE == 0;
    C->msplit = 1;
    C->mstep = C->ocg;
    int64_t total = p->n * p->group * C->nblocks;
    C->ntasks = nt < total ? nt : (total > 0 ? total : 1);
    if (nt <= 1 || total <= 0 || !C->tiled) return;
    int64_t load = busiest_load(C);
    Conv cols = *C, rows = *C;
    int64_t cols_load = -1, rows_load = -1;
    /* a multiple of nt column blocks, none wider than nblk */
    cols.nblocks = (C->nblocks + nt - 1) / nt * nt;
    if (cols.nblocks <= C->ntiles && (C->ntiles + cols.nblocks - 1) / cols.nblocks * COL_TILE <= p->nblk) {
        int64_t ctotal = p->n * p->group * cols.nblocks;
        cols.ntasks = nt < ctotal ? nt : ctotal;
        cols_load = busiest_load(&cols);
    }
    if (C->ocg >= 2 * RK_SGEMM_ROW_STEP) {
        rows.mstep = (C->ocg + nt - 1) / nt;
        rows.mstep = (rows.mstep + RK_SGEMM_ROW_STEP - 1) / RK_SGEMM_ROW_STEP * RK_SGEMM_ROW_STEP;
        rows.msplit = (C->ocg + rows.mstep - 1) / rows.mstep;
        rows.ntasks = nt < total * rows.msplit ? nt : total * rows.msplit;
        rows_load = busiest_load(&rows);
    }
    const Conv *best = NULL;
    int64_t best_load = 0;
    int prefer_cols = C->ncols >= C->ocg;
    if (cols_load >= 0 && (rows_load < 0 || (prefer_cols ? cols_load * 8 <= rows_load * 9 : cols_load * 9 < rows_load * 8)))
        best = &cols, best_load = cols_load;
    else if (rows_load >= 0)
        best = &rows, best_load = rows_load;
    if (best && best_load * 8 < load * 7) *C = *best;
}

/* One input channel, 3x3 taps, no dilation (depthwise layers): each output
 * row sums its nine taps in one pass; columns whose window leaves the image
 * take the clipped path, the interior runs without a bounds check. */
static void depthwise3x3(const rk_conv2d_f32_params *p, const float *x, const float *w, float *y) {
    int64_t h = p->h, wd = p->w, oh = p->oh, ow = p->ow, sh = p->sh, sw = p->sw;
    /* interior columns: ox*sw - pl >= 0 and ox*sw - pl + 2 < wd */
    int64_t lo = (p->pl + sw - 1) / sw, hi = wd - 3 + p->pl >= 0 ? (wd - 3 + p->pl) / sw + 1 : 0;
    if (hi > ow) hi = ow;
    if (lo > hi) lo = hi;
    for (int64_t oy = 0; oy < oh; oy++) {
        float *yrow = y + oy * ow;
        int64_t iy0 = oy * sh - p->pt;
        const float *r[3] = {NULL, NULL, NULL};
        const float *wk = w;
        for (int k = 0; k < 3; k++)
            if (iy0 + k >= 0 && iy0 + k < h) r[k] = x + (iy0 + k) * wd;
        /* the interior: rows outside the image are skipped, never read with
         * weight 0 (an inf there would make NaN) */
        for (int64_t j = lo; j < hi; j++) yrow[j] = 0.0f;
        for (int k = 0; k < 3; k++) {
            const float *rk = r[k], *wr = wk + 3 * k;
            if (!rk) continue;
            for (int64_t j = lo; j < hi; j++) {
                int64_t ix = j * sw - p->pl;
                yrow[j] += wr[0] * rk[ix] + wr[1] * rk[ix + 1] + wr[2] * rk[ix + 2];
            }
        }
        for (int64_t ox = 0; ox < ow; ox++) {
            if (ox == lo) ox = hi;
            if (ox >= ow) break;
            float acc = 0.0f;
            int64_t ix0 = ox * sw - p->pl;
            for (int k = 0; k < 3; k++)
                for (int t = 0; t < 3; t++) {
                    int64_t ix = ix0 + t;
                    if (r[k] && ix >= 0 && ix < wd) acc += wk[k * 3 + t] * r[k][ix];
                }
            yrow[ox] = acc;
        }
    }
}

static void direct_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    int64_t plane = p->h * p->w, oplane = p->oh * p->ow;
    int64_t total = p->n * p->oc;
    for (int64_t t = tid; t < total; t += C->ntasks) {
        int64_t b = t / p->oc, o = t % p->oc;
        const float *xg = C->x + (b * p->c + (o / C->ocg) * C->cg) * plane;
        const float *wo = C->w + o * C->cg * p->kh * p->kw;
        float *yo = C->y + (b * p->oc + o) * oplane;
        if (C->cg == 1 && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1) {
            depthwise3x3(p, xg, wo, yo);
        } else
        for (int64_t oy = 0; oy < p->oh; oy++) {
            float *yrow = yo + oy * p->ow;
            for (int64_t ox = 0; ox < p->ow; ox++) yrow[ox] = 0.0f;
            for (int64_t ic = 0; ic < C->cg; ic++) {
                const float *xc = xg + ic * plane, *wc = wo + ic * p->kh * p->kw;
                for (int64_t ky = 0; ky < p->kh; ky++) {
                    int64_t iy = oy * p->sh - p->pt + ky * p->dh;
                    if (iy < 0 || iy >= p->h) continue;
                    const float *xrow = xc + iy * p->w;
                    for (int64_t kx = 0; kx < p->kw; kx++) {
                        float wv = wc[ky * p->kw + kx];
                        int64_t off = kx * p->dw - p->pl, lo, hi;
                        rk_out_range(p->ow, p->sw, off, p->w, &lo, &hi);
                        if (p->sw == 1) {
                            const float *xs = xrow + (lo + off);
                            float *ys = yrow + lo;
                            for (int64_t j = 0; j < hi - lo; j++) ys[j] += wv * xs[j];
                        } else {
                            for (int64_t ox = lo; ox < hi; ox++) yrow[ox] += wv * xrow[ox * p->sw + off];
                        }
                    }
                }
            }
        }
        /* this output channel's plane: bias, residual, activation */
        const float *res = C->res ? C->res + (b * p->oc + o) * oplane : NULL;
        if (C->bias || res || p->act != RS_ACT_NONE)
            epilogue_run(yo, oplane, C->bias ? C->bias[o] : 0.0f, res, p->act, (float)p->act_a, (float)p->act_b);
    }
}

/* Below this many multiply-adds a layer runs on one thread. */
#define THREAD_MIN_MACS (1 << 18)

int rk_conv2d_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv2d_f32_params *p = params;
    if (p->n < 0 || p->c < 0 || p->h < 0 || p->w < 0 || p->oc < 0 || p->oh < 0 || p->ow < 0 || p->kh < 0 ||
        p->kw < 0 || p->sh <= 0 || p->sw <= 0 || p->dh <= 0 || p->dw <= 0 || p->group <= 0 ||
        p->c % p->group || p->oc % p->group || (p->method == 1 && p->nblk <= 0))
        return RLX_E_ARG;
    Conv C;
    memset(&C, 0, sizeof C);
    C.p = p;
    C.ctx = ctx;
    C.x = in[0];
    C.w = in[1];
    int next = 2;
    C.bias = p->has_bias ? in[next++] : NULL;
    C.res = p->has_res ? in[next++] : NULL;
    C.y = out[0];
    C.cg = p->c / p->group;
    C.ocg = p->oc / p->group;
    C.kdim = C.cg * p->kh * p->kw;
    C.ncols = p->oh * p->ow;
    double macs = (double)p->n * (double)p->oc * (double)C.ncols * (double)C.kdim;
    int nt = ctx && ctx->nthreads > 1 && macs >= THREAD_MIN_MACS ? ctx->nthreads : 1;
    if (p->method == 1) {
        if (!ctx || !ctx->scratch || ctx->scratch_per_thread < rk_conv2d_scratch(C.ocg, C.kdim, p->nblk))
            return RLX_E_ARG;   /* the plan reserves this; a mismatch is a bug, not a crash */
        plan_gemm(&C, nt);
        rk_pool_run(ctx->pool, (int)C.ntasks, gemm_task, &C);
    } else {
        int64_t total = p->n * p->oc;
        C.ntasks = nt < total ? nt : (total > 0 ? total : 1);
        rk_pool_run(ctx ? ctx->pool : NULL, (int)C.ntasks, direct_task, &C);
    }
    return RLX_OK;
}
