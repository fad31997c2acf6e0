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
 * Both split the work over threads by disjoint output blocks (column blocks
 * for GEMM, output channels for direct), so results do not depend on the
 * thread count, then apply the fused epilogue to the part each computed:
 * bias (per output channel), residual (in3, the output's shape), activation.
 */
#include <string.h>

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rlx_scalar.h"

typedef struct {
    const rk_conv2d_f32_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    rk_ctx *ctx;
    int64_t cg, ocg, kdim, ncols, nblocks, ntasks;
} Conv;

static int64_t align16f(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* Bytes of scratch one thread needs: the col block and the GEMM's packing. */
size_t rk_conv2d_scratch(int64_t ocg, int64_t kdim, int64_t nblk) {
    return (size_t)(align16f(kdim * nblk) * (int64_t)sizeof(float)) + rk_sgemm_scratch_size(ocg, nblk, kdim) + 64;
}

static void epilogue_rows(const Conv *C, float *y, const float *res, int64_t o0, int64_t rows, int64_t col0,
                          int64_t cols) {
    const rk_conv2d_f32_params *p = C->p;
    if (!C->bias && !res && p->act == RS_ACT_NONE) return;
    int64_t n = C->ncols;
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * n + col0;
        const float *rr = res ? res + r * n + col0 : NULL;
        float b = C->bias ? C->bias[o0 + r] : 0.0f;
        for (int64_t j = 0; j < cols; j++) {
            float v = yr[j] + b;
            if (rr) v += rr[j];
            yr[j] = rs_act(v, (int)p->act, (float)p->act_a, (float)p->act_b);
        }
    }
}

/* im2col of columns [col0, col0+cols) of image b, group gi into col (K x cols). */
static void im2col(const Conv *C, const float *xg, float *col, int64_t col0, int64_t cols) {
    const rk_conv2d_f32_params *p = C->p;
    int64_t plane = p->h * p->w;
    for (int64_t ic = 0; ic < C->cg; ic++) {
        const float *xc = xg + ic * plane;
        for (int64_t ky = 0; ky < p->kh; ky++)
            for (int64_t kx = 0; kx < p->kw; kx++) {
                float *dst = col + ((ic * p->kh + ky) * p->kw + kx) * cols;
                int64_t oy = col0 / p->ow, ox = col0 % p->ow;
                for (int64_t j = 0; j < cols; j++) {
                    int64_t iy = oy * p->sh - p->pt + ky * p->dh, ix = ox * p->sw - p->pl + kx * p->dw;
                    dst[j] = (iy >= 0 && iy < p->h && ix >= 0 && ix < p->w) ? xc[iy * p->w + ix] : 0.0f;
                    if (++ox == p->ow) {
                        ox = 0;
                        oy++;
                    }
                }
            }
    }
}

static void gemm_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    uint8_t *scratch = C->ctx->scratch + (size_t)tid * C->ctx->scratch_per_thread;
    float *col = (float *)(void *)scratch;
    void *gscratch = scratch + align16f(C->kdim * p->nblk) * (int64_t)sizeof(float);
    int direct_b = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 &&
                   p->oh == p->h && p->ow == p->w;
    size_t packed_group = rk_sgemm_packed_a_size(C->ocg, C->kdim) / sizeof(float);
    /* task t: blocks t, t + ntasks, ... over (image, group, column block) */
    int64_t total = p->n * p->group * C->nblocks;
    for (int64_t t = tid; t < total; t += C->ntasks) {
        int64_t blk = t % C->nblocks, bg = t / C->nblocks, gi = bg % p->group, b = bg / p->group;
        int64_t col0 = blk * p->nblk, cols = C->ncols - col0 < p->nblk ? C->ncols - col0 : p->nblk;
        const float *xg = C->x + (b * p->c + gi * C->cg) * p->h * p->w;
        float *yg = C->y + (b * p->oc + gi * C->ocg) * C->ncols;
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
        g.c = yg + col0;
        g.ldc = C->ncols;
        rk_sgemm_ex(&g, gscratch, 1, NULL, NULL);
        epilogue_rows(C, yg, C->res ? C->res + (b * p->oc + gi * C->ocg) * C->ncols : NULL, gi * C->ocg, C->ocg,
                      col0, cols);
    }
}

/* First and one-past-last output index o whose input coordinate
 * o*stride + offset lies in [0, size). */
static void clip_range(int64_t nout, int64_t stride, int64_t offset, int64_t size, int64_t *lo, int64_t *hi) {
    int64_t l = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
    int64_t h = size - offset <= 0 ? 0 : (size - offset + stride - 1) / stride;
    if (h > nout) h = nout;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
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
                        clip_range(p->ow, p->sw, off, p->w, &lo, &hi);
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
        if (C->bias || res || p->act != RS_ACT_NONE) {
            float bv = C->bias ? C->bias[o] : 0.0f;
            for (int64_t j = 0; j < oplane; j++) {
                float v = yo[j] + bv;
                if (res) v += res[j];
                yo[j] = rs_act(v, (int)p->act, (float)p->act_a, (float)p->act_b);
            }
        }
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
        C.nblocks = (C.ncols + p->nblk - 1) / p->nblk;
        int64_t total = p->n * p->group * C.nblocks;
        C.ntasks = nt < total ? nt : (total > 0 ? total : 1);
        rk_pool_run(ctx->pool, (int)C.ntasks, gemm_task, &C);
    } else {
        int64_t total = p->n * p->oc;
        C.ntasks = nt < total ? nt : (total > 0 ? total : 1);
        rk_pool_run(ctx ? ctx->pool : NULL, (int)C.ntasks, direct_task, &C);
    }
    return RLX_OK;
}
