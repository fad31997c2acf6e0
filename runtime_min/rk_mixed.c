/* rk_mixed.c - convolutions and GEMMs whose operands are stored in other
 * types than f32: half-precision activations (rlxc --precision) and f16,
 * bf16 or int8 weights (--weights).
 *
 * conv2d_f32, matmul_f32 and gemm_f32 come here when any of their dtype
 * params is not f32 (rk_kernels.def). Everything is computed in f32: an
 * operand is converted as it is read, block by block, into the thread's
 * scratch (an int8 weight multiplied there by its channel's scale), the
 * product runs on the f32 GEMM of rk_gemm.c, and the epilogue (bias,
 * residual, activation: the f32 kernels' order) runs on the finished f32
 * tile, which is then stored rounded once to nearest even. No operand is
 * ever converted whole: the largest buffer is a block of BK x BN floats.
 *
 * The output is cut into panels of BN columns and chunks of rows (up to
 * MCH); one thread computes a (chunk, panel) pair, always the same way: for
 * each block of BK of K in order, B's block is converted once and every BM
 * rows of A multiply it into the chunk's f32 sums (A read in place when it
 * is plain f32, as convolution weights are unless --weights says
 * otherwise). The GEMM's sums do not depend on how rows and columns are cut
 * (rk_gemm.h), so the results do not depend on the thread count. A product
 * of a few rows (a classifier's GEMV) runs as plain loops over B's rows
 * instead. Convolutions run their GEMM over im2col blocks of the typed
 * input (the weights are the product's A, output channels its rows),
 * except when they are too thin to reuse anything (depthwise and small
 * groups): then each input plane of a group is converted once and the
 * window is summed directly, in f32. Every conversion is a loop over a run
 * of one dtype (rlx_rt.h's inline conversions), which compilers vectorize.
 */
#include <string.h>

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rlx_scalar.h"
#include "rk_vmath.h"

enum { BM = 128, BN = 128, BK = 256, MCH = 512, FEW = 8, ROWBUF = 4096 };

/* ---- typed elements ---- */

static int dtype_ok(int64_t dt, int weights) {
    return dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16 || (weights && dt == RLX_I8);
}

/* A typed matrix: element (i, j) at base[i * rs + j * cs]; an int8 one is
 * multiplied by scale[i] (rows) or scale[j] (by_col). */
typedef struct {
    const void *base;
    int dt;
    int64_t rs, cs;
    const float *scale;
    int by_col;
} tmat;

/* d[j] = element at + j * cs of a tensor stored as dt, for j < n. */
static void cvt_run(float *d, const void *base, int dt, int64_t at, int64_t n, int64_t cs) {
    if (dt == RLX_F16) {
        const uint16_t *p = (const uint16_t *)base + at;
        if (cs == 1)
            for (int64_t j = 0; j < n; j++) d[j] = rlx_f16_to_f32(p[j]);
        else
            for (int64_t j = 0; j < n; j++) d[j] = rlx_f16_to_f32(p[j * cs]);
    } else if (dt == RLX_BF16) {
        const uint16_t *p = (const uint16_t *)base + at;
        for (int64_t j = 0; j < n; j++) d[j] = rlx_bf16_to_f32(p[j * cs]);
    } else if (dt == RLX_I8) {
        const int8_t *p = (const int8_t *)base + at;
        for (int64_t j = 0; j < n; j++) d[j] = (float)p[j * cs];
    } else {
        const float *p = (const float *)base + at;
        if (cs == 1) memcpy(d, p, sizeof(float) * (size_t)n);
        else
            for (int64_t j = 0; j < n; j++) d[j] = p[j * cs];
    }
}

/* Stores v[j] at element at + j of a tensor stored as dt, rounded once. */
static void store_run(void *base, int dt, int64_t at, const float *v, int64_t n) {
    if (dt == RLX_F16) {
        uint16_t *p = (uint16_t *)base + at;
        for (int64_t j = 0; j < n; j++) p[j] = rlx_f32_to_f16(v[j]);
    } else if (dt == RLX_BF16) {
        uint16_t *p = (uint16_t *)base + at;
        for (int64_t j = 0; j < n; j++) p[j] = rlx_f32_to_bf16(v[j]);
    } else {
        memcpy((float *)base + at, v, sizeof(float) * (size_t)n);
    }
}

/* dst[i * ld + j] = M(r0 + i, c0 + j) for an nr x nc block. */
static void load_block(float *dst, int64_t ld, const tmat *m, int64_t r0, int64_t c0, int64_t nr, int64_t nc) {
    for (int64_t i = 0; i < nr; i++) {
        float *d = dst + i * ld;
        cvt_run(d, m->base, m->dt, (r0 + i) * m->rs + c0 * m->cs, nc, m->cs);
        if (m->scale) {
            if (m->by_col)
                for (int64_t j = 0; j < nc; j++) d[j] *= m->scale[c0 + j];
            else
                for (int64_t j = 0; j < nc; j++) d[j] *= m->scale[r0 + i];
        }
    }
}

/* ---- the tiled product ---- */

typedef struct Prod Prod;
/* Fills the kb x nb block of op(B) at (p0, j0) into dst (row stride BN);
 * rowbuf: ROWBUF floats of the thread's scratch. */
typedef void (*load_b_fn)(const Prod *P, float *dst, int64_t p0, int64_t j0, int64_t kb, int64_t nb, float *rowbuf);

struct Prod {
    int64_t m, n, k;
    tmat a, b;
    const float *a_f32;              /* A as plain f32 rows of stride a.rs, read in place; NULL: converted */
    load_b_fn load_b;                /* NULL: from b */
    const rk_conv2d_f32_params *conv;   /* for the im2col loader */
    const void *x;                   /* its input image (one image, one group) */
    int x_dt;
    float alpha, beta;
    const float *cin;                /* beta * cin[i * c_rs + j * c_cs] (gemm's C) */
    int64_t c_rs, c_cs;
    const float *bias;               /* bias[j] (bias_per_col) or bias[i] */
    int bias_per_col;
    const void *res;                 /* m x n, row stride ldy, res_dt */
    int res_dt;
    void *y;
    int y_dt;
    int64_t ldy;
    int act;
    float act_a, act_b;
    int64_t chunk;                   /* rows per task (a multiple of BM, at most MCH) */
};

size_t rk_mixed_scratch(void) {
    return sizeof(float) * (size_t)(BM * BK + BK * BN + MCH * BN + 2 * BN + ROWBUF) + rk_sgemm_scratch_size(BM, BN, BK) +
           7 * 64;
}

/* y + bias + res in the f32 kernels' order (rk_gemm.h): per column, + bias
 * then + res; per row (convolutions), y + b + r, or y + b only where b is
 * not 0 (so a -0 stays -0 without a residual). */
static float epilogue_sum(float y, float b, int has_b, int per_col, float r, int has_r) {
    if (per_col) {
        if (has_b) y += b;
        return has_r ? y + r : y;
    }
    if (has_r) return y + b + r;
    return has_b && b != 0.0f ? y + b : y;
}


/* The epilogue of output row gi, columns [j0, j0 + nb), from its sums, in
 * epilogue_sum's order, one operation at a time over the run. */
static void finish_row(const Prod *P, int64_t gi, int64_t j0, int64_t nb, const float *sums, float *tmp) {
    float *v = tmp, *rv = tmp + BN;
    if (P->alpha == 1.0f) memcpy(v, sums, sizeof(float) * (size_t)nb);
    else
        for (int64_t j = 0; j < nb; j++) v[j] = P->alpha * sums[j];
    if (P->cin)
        for (int64_t j = 0; j < nb; j++) v[j] += P->beta * P->cin[gi * P->c_rs + (j0 + j) * P->c_cs];
    if (P->res) cvt_run(rv, P->res, P->res_dt, gi * P->ldy + j0, nb, 1);
    if (P->bias_per_col) {
        if (P->bias)
            for (int64_t j = 0; j < nb; j++) v[j] += P->bias[j0 + j];
        if (P->res)
            for (int64_t j = 0; j < nb; j++) v[j] += rv[j];
    } else {
        float b = P->bias ? P->bias[gi] : 0.0f;
        if (P->res)
            for (int64_t j = 0; j < nb; j++) v[j] = v[j] + b + rv[j];
        else if (b != 0.0f)
            for (int64_t j = 0; j < nb; j++) v[j] += b;
    }
    rk_act_run(v, nb, P->act, P->act_a, P->act_b);
    store_run(P->y, P->y_dt, gi * P->ldy + j0, v, nb);
}

/* Rows [i0, i1) (i1 - i0 <= MCH) and columns [j0, j0 + BN) of the product. */
static void panel(const Prod *P, int64_t i0, int64_t i1, int64_t j0, uint8_t *scratch) {
    float *ab = rk_align64f(scratch), *bb = rk_align64f(ab + BM * BK), *acc = rk_align64f(bb + BK * BN);
    float *tmp = rk_align64f(acc + MCH * BN), *rowbuf = rk_align64f(tmp + 2 * BN);
    void *gs = rk_align64f(rowbuf + ROWBUF);
    int64_t nb = P->n - j0 < BN ? P->n - j0 : BN, rows = i1 - i0;
    if (!P->k) memset(acc, 0, sizeof(float) * (size_t)(rows * BN));
    for (int64_t p0 = 0; p0 < P->k; p0 += BK) {
        int64_t kb = P->k - p0 < BK ? P->k - p0 : BK;
        if (P->load_b) P->load_b(P, bb, p0, j0, kb, nb, rowbuf);
        else load_block(bb, BN, &P->b, p0, j0, kb, nb);
        for (int64_t i = i0; i < i1; i += BM) {
            int64_t mb = i1 - i < BM ? i1 - i : BM;
            const float *ap = ab;
            int64_t lda = BK;
            if (P->a_f32) {
                ap = P->a_f32 + i * P->a.rs + p0;
                lda = P->a.rs;
            } else {
                load_block(ab, BK, &P->a, i, p0, mb, kb);
            }
            rk_sgemm(mb, nb, kb, 1.0f, ap, lda, 0, bb, BN, 0, p0 ? 1.0f : 0.0f, acc + (i - i0) * BN, BN, gs);
        }
    }
    for (int64_t i = 0; i < rows; i++) finish_row(P, i0 + i, j0, nb, acc + i * BN, tmp);
}

/* A few rows: acc[i][j] += A(i, q) * B(q, j) over q in order, B's rows
 * converted one at a time (a GEMV streams B once). */
static void few_rows(const Prod *P, int64_t j0, uint8_t *scratch) {
    float *brow = rk_align64f(scratch), *acc = rk_align64f(brow + BN), *tmp = rk_align64f(acc + FEW * BN);
    float *rowbuf = rk_align64f(tmp + 2 * BN);
    int64_t nb = P->n - j0 < BN ? P->n - j0 : BN;
    float a[FEW];
    memset(acc, 0, sizeof(float) * (size_t)(FEW * BN));
    for (int64_t q = 0; q < P->k; q++) {
        if (P->load_b) P->load_b(P, brow, q, j0, 1, nb, rowbuf);
        else load_block(brow, BN, &P->b, q, j0, 1, nb);
        for (int64_t i = 0; i < P->m; i++) {
            a[i] = rk_load_f32(P->a.dt, P->a.base, i * P->a.rs + q * P->a.cs);
            if (P->a.scale) a[i] *= P->a.scale[i];
            float *ai = acc + i * BN;
            for (int64_t j = 0; j < nb; j++) ai[j] += a[i] * brow[j];
        }
    }
    for (int64_t i = 0; i < P->m; i++) finish_row(P, i, j0, nb, acc + i * BN, tmp);
}

typedef struct {
    const Prod *P;
    int64_t ntasks, panels;
    const rk_ctx *ctx;
} PanelRun;

static void panel_task(void *arg, int tid) {
    const PanelRun *R = arg;
    const Prod *P = R->P;
    int nt = R->ctx->nthreads > 1 ? R->ctx->nthreads : 1;
    uint8_t *scratch = R->ctx->scratch + (size_t)tid * R->ctx->scratch_per_thread;
    for (int64_t t = tid; t < R->ntasks; t += nt) {
        int64_t j0 = t % R->panels * BN, i0 = t / R->panels * P->chunk;
        if (P->m <= FEW) few_rows(P, j0, scratch);
        else panel(P, i0, i0 + P->chunk < P->m ? i0 + P->chunk : P->m, j0, scratch);
    }
}

/* Cuts P into tasks for nthreads (rows in chunks of at most MCH, smaller
 * when there are too few column panels to go round) and runs them. */
static void run_tasks(const rk_ctx *ctx, Prod *P, int nthreads) {
    int64_t panels = (P->n + BN - 1) / BN, chunk = MCH;
    if (P->m > FEW) {
        int64_t want = (2 * nthreads + panels - 1) / panels;   /* row chunks per panel for 2 tasks a thread */
        int64_t c = (P->m + want - 1) / want;
        c = (c + BM - 1) / BM * BM;
        chunk = c < MCH ? c : MCH;
    }
    P->chunk = chunk;
    int64_t chunks = P->m > FEW ? (P->m + chunk - 1) / chunk : 1;
    PanelRun R = {P, chunks * panels, panels, ctx};
    if (nthreads > 1 && R.ntasks > 1) rk_pool_run(ctx->pool, nthreads, panel_task, &R);
    else {
        rk_ctx one = *ctx;
        one.nthreads = 1;
        R.ctx = &one;
        panel_task(&R, 0);
    }
}

static int run_product(const rk_ctx *ctx, Prod *P) {
    if (!ctx || !ctx->scratch || ctx->scratch_per_thread < rk_mixed_scratch()) return RLX_E_ARG;
    int nt = ctx->nthreads > 1 && rk_sgemm_threads_pay(P->m, P->n, P->k) ? ctx->nthreads : 1;
    run_tasks(ctx, P, nt);
    return RLX_OK;
}

/* ---- MatMul and Gemm ---- */

int rk_matmul_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_matmul_f32_params *p = params;
    if (p->m < 0 || p->n < 0 || p->k < 0 || p->brank < 0 || p->brank > RK_MAX_RANK || p->b_packed ||
        !dtype_ok(p->a_dtype, 0) || !dtype_ok(p->b_dtype, 1) || !dtype_ok(p->y_dtype, 0) || !dtype_ok(p->r_dtype, 0))
        return RLX_E_ARG;
    int64_t nbatch = 1;
    for (int64_t d = 0; d < p->brank; d++) {
        if (p->bdims[d] < 0) return RLX_E_ARG;
        nbatch *= p->bdims[d];
    }
    int next = 2;
    const float *bias = p->has_bias ? in[next++] : NULL;
    const void *res = p->has_res ? in[next++] : NULL;
    const float *scale = p->b_dtype == RLX_I8 ? in[next++] : NULL;
    int64_t idx[RK_MAX_RANK] = {0}, cstep = p->m * p->n;
    int64_t ay = (int64_t)rlx_dtype_size((int)p->a_dtype), by = (int64_t)rlx_dtype_size((int)p->b_dtype);
    int64_t yy = (int64_t)rlx_dtype_size((int)p->y_dtype), ry = (int64_t)rlx_dtype_size((int)p->r_dtype);
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t aoff = 0, boff = 0;
        for (int64_t d = 0; d < p->brank; d++) {
            aoff += idx[d] * p->astride[d];
            boff += idx[d] * p->bstride[d];
        }
        Prod P;
        memset(&P, 0, sizeof P);
        P.m = p->m;
        P.n = p->n;
        P.k = p->k;
        P.a = (tmat){(const uint8_t *)in[0] + aoff * ay, (int)p->a_dtype, p->trans_a ? 1 : p->k, p->trans_a ? p->m : 1,
                     NULL, 0};
        P.b = (tmat){(const uint8_t *)in[1] + boff * by, (int)p->b_dtype, p->trans_b ? 1 : p->n, p->trans_b ? p->k : 1,
                     scale, 1};
        P.alpha = 1.0f;
        P.bias = bias;
        P.bias_per_col = 1;
        P.res = res ? (const uint8_t *)res + bi * cstep * ry : NULL;
        P.res_dt = (int)p->r_dtype;
        P.y = (uint8_t *)out[0] + bi * cstep * yy;
        P.y_dt = (int)p->y_dtype;
        P.ldy = p->n;
        P.act = (int)p->act;
        P.act_a = (float)p->act_a;
        P.act_b = (float)p->act_b;
        int st = run_product(ctx, &P);
        if (st) return st;
        rk_odometer_next(idx, p->bdims, p->brank);
    }
    return RLX_OK;
}

int rk_gemm_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_gemm_f32_params *p = params;
    if (p->m < 0 || p->n < 0 || p->k < 0 || p->b_packed || !dtype_ok(p->a_dtype, 0) || !dtype_ok(p->b_dtype, 1) ||
        !dtype_ok(p->y_dtype, 0) || !dtype_ok(p->r_dtype, 0))
        return RLX_E_ARG;
    int next = 2;
    const float *cin = p->has_c ? in[next++] : NULL;
    const void *res = p->has_res ? in[next++] : NULL;
    const float *scale = p->b_dtype == RLX_I8 ? in[next++] : NULL;
    Prod P;
    memset(&P, 0, sizeof P);
    P.m = p->m;
    P.n = p->n;
    P.k = p->k;
    P.a = (tmat){in[0], (int)p->a_dtype, p->trans_a ? 1 : p->k, p->trans_a ? p->m : 1, NULL, 0};
    P.b = (tmat){in[1], (int)p->b_dtype, p->trans_b ? 1 : p->n, p->trans_b ? p->k : 1, scale, 1};
    P.alpha = (float)p->alpha;
    P.beta = (float)p->beta;
    if (cin && P.beta != 0.0f) {
        P.cin = cin;
        P.c_rs = p->c_rs;
        P.c_cs = p->c_cs;
    }
    P.res = res;
    P.res_dt = (int)p->r_dtype;
    P.y = out[0];
    P.y_dt = (int)p->y_dtype;
    P.ldy = p->n;
    P.act = (int)p->act;
    P.act_a = (float)p->act_a;
    P.act_b = (float)p->act_b;
    return run_product(ctx, &P);
}

/* ---- convolutions ---- */

/* The output columns ox whose tap at column offset off (= kj * dw - pl)
 * lands inside [0, w): [*lo, *hi). */
static void tap_range(int64_t off, int64_t sw, int64_t w, int64_t ow, int64_t *lo, int64_t *hi) {
    int64_t a = off < 0 ? (-off + sw - 1) / sw : 0;              /* first ox with ox * sw + off >= 0 */
    int64_t b = w - off > 0 ? (w - off - 1) / sw + 1 : 0;        /* first ox with ox * sw + off >= w */
    *lo = a < ow ? a : ow;
    *hi = b < ow ? b : ow;
    if (*hi < *lo) *hi = *lo;
}

/* op(B) of a convolution: rows are (c, ki, kj) of one group, columns output
 * positions; padding reads 0. The rows of one (c, ki) differ only in kj:
 * for each output row of the block, the input row they read is converted
 * once into rowbuf, and each kj copies its columns (stride sw) from there. */
static void load_im2col(const Prod *P, float *dst, int64_t p0, int64_t j0, int64_t kb, int64_t nb, float *rowbuf) {
    const rk_conv2d_f32_params *c = P->conv;
    int64_t khw = c->kh * c->kw;
    for (int64_t r = 0; r < kb;) {
        int64_t kk = p0 + r, ch = kk / khw, ki = kk / c->kw % c->kh, kj0 = kk % c->kw;
        int64_t nkj = c->kw - kj0 < kb - r ? c->kw - kj0 : kb - r;   /* rows r .. r + nkj: taps kj0 .. */
        for (int64_t q = 0; q < nb;) {
            int64_t pos = j0 + q, oy = pos / c->ow, ox0 = pos % c->ow;
            int64_t run = c->ow - ox0 < nb - q ? c->ow - ox0 : nb - q;   /* this output row's part of the block */
            int64_t iy = oy * c->sh - c->pt + ki * c->dh;
            int inside = iy >= 0 && iy < c->h, buffered = inside && c->w <= ROWBUF;
            if (buffered) cvt_run(rowbuf, P->x, P->x_dt, (ch * c->h + iy) * c->w, c->w, 1);
            for (int64_t t = 0; t < nkj; t++) {
                float *d = dst + (r + t) * BN + q;
                if (!inside) {
                    memset(d, 0, sizeof(float) * (size_t)run);
                    continue;
                }
                int64_t off = (kj0 + t) * c->dw - c->pl, lo, hi;
                tap_range(off, c->sw, c->w, c->ow, &lo, &hi);
                int64_t a = lo > ox0 ? lo : ox0, b = hi < ox0 + run ? hi : ox0 + run;
                if (b < a) b = a;
                for (int64_t ox = ox0; ox < a; ox++) d[ox - ox0] = 0.0f;
                if (b > a) {
                    float *to = d + a - ox0;
                    if (!buffered) cvt_run(to, P->x, P->x_dt, (ch * c->h + iy) * c->w + a * c->sw + off, b - a, c->sw);
                    else if (c->sw == 1) memcpy(to, rowbuf + a + off, sizeof(float) * (size_t)(b - a));
                    else
                        for (int64_t ox = a; ox < b; ox++) to[ox - a] = rowbuf[ox * c->sw + off];
                }
                for (int64_t ox = b; ox < ox0 + run; ox++) d[ox - ox0] = 0.0f;
            }
            q += run;
        }
        r += nkj;
    }
}

/* Whether a convolution runs directly: few output channels per group and
 * few inputs per output (depthwise), with its planes in scratch. */
static int conv_direct(const rk_conv2d_f32_params *p) {
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    return ocg <= 4 && cg <= 4 &&
           (p->h * p->w + ocg * p->oh * p->ow + p->kh * p->kw + 2 * BN) * 4 + 4 * 64 <= (int64_t)rk_mixed_scratch();
}

/* acc[(oy - oy0) * ow + ox] += w[ki][kj] * plane[iy - r0][ix] over the
 * kh x kw taps that land inside rows [r0, r1) and columns [0, w), for
 * output rows [oy0, oy1): the window of one channel, summed tap by tap. */
typedef struct {
    int64_t kh, kw, sh, sw, pt, pl, dh, dw, w, ow;
} Window;

static void window_sum(const Window *k, float *acc, const float *plane, int64_t r0, int64_t r1, const float *wk,
                       int64_t oy0, int64_t oy1) {
    for (int64_t ki = 0; ki < k->kh; ki++)
        for (int64_t kj = 0; kj < k->kw; kj++) {
            float wv = wk[ki * k->kw + kj];
            int64_t off = kj * k->dw - k->pl, lo, hi;
            tap_range(off, k->sw, k->w, k->ow, &lo, &hi);
            for (int64_t oy = oy0; oy < oy1; oy++) {
                int64_t iy = oy * k->sh - k->pt + ki * k->dh;
                if (iy < r0 || iy >= r1) continue;
                const float *row = plane + (iy - r0) * k->w + off;
                float *a = acc + (oy - oy0) * k->ow;
                if (k->sw == 1)
                    for (int64_t ox = lo; ox < hi; ox++) a[ox] += wv * row[ox];
                else
                    for (int64_t ox = lo; ox < hi; ox++) a[ox] += wv * row[ox * k->sw];
            }
        }
}

typedef struct {
    const rk_conv2d_f32_params *p;
    const void *const *in;
    void *y;
    const float *bias, *scale;
    const void *res;
    const rk_ctx *ctx;
} Direct;

/* One (image, group) of a direct convolution. */
static void direct_one(const Direct *D, int64_t ng, uint8_t *scratch) {
    const rk_conv2d_f32_params *p = D->p;
    int64_t n = ng / p->group, g = ng % p->group, cg = p->c / p->group, ocg = p->oc / p->group, np = p->oh * p->ow;
    float *plane = rk_align64f(scratch), *acc = rk_align64f(plane + p->h * p->w);
    float *wk = rk_align64f(acc + ocg * np), *tmp = rk_align64f(wk + p->kh * p->kw);
    Window k = {p->kh, p->kw, p->sh, p->sw, p->pt, p->pl, p->dh, p->dw, p->w, p->ow};
    memset(acc, 0, sizeof(float) * (size_t)(ocg * np));
    for (int64_t ci = 0; ci < cg; ci++) {
        int64_t ch = g * cg + ci;
        cvt_run(plane, D->in[0], (int)p->x_dtype, (n * p->c + ch) * p->h * p->w, p->h * p->w, 1);
        for (int64_t o = 0; o < ocg; o++) {
            int64_t oc = g * ocg + o;
            cvt_run(wk, D->in[1], (int)p->w_dtype, (oc * cg + ci) * p->kh * p->kw, p->kh * p->kw, 1);
            if (D->scale)
                for (int64_t t = 0; t < p->kh * p->kw; t++) wk[t] *= D->scale[oc];
            window_sum(&k, acc + o * np, plane, 0, p->h, wk, 0, p->oh);
        }
    }
    for (int64_t o = 0; o < ocg; o++) {
        int64_t oc = g * ocg + o, at = (n * p->oc + oc) * np;
        for (int64_t q0 = 0; q0 < np; q0 += BN) {
            int64_t nq = np - q0 < BN ? np - q0 : BN;
            float *rv = tmp + BN;
            if (D->res) cvt_run(rv, D->res, (int)p->r_dtype, at + q0, nq, 1);
            for (int64_t q = 0; q < nq; q++)
                tmp[q] = epilogue_sum(acc[o * np + q0 + q], D->bias ? D->bias[oc] : 0.0f, D->bias != NULL, 0,
                                      D->res ? rv[q] : 0.0f, D->res != NULL);
            rk_act_run(tmp, nq, (int)p->act, (float)p->act_a, (float)p->act_b);
            store_run(D->y, (int)p->y_dtype, at + q0, tmp, nq);
        }
    }
}

static void direct_task(void *arg, int tid) {
    const Direct *D = arg;
    int nt = D->ctx->nthreads > 1 ? D->ctx->nthreads : 1;
    uint8_t *scratch = D->ctx->scratch + (size_t)tid * D->ctx->scratch_per_thread;
    for (int64_t t = tid; t < D->p->n * D->p->group; t += nt) direct_one(D, t, scratch);
}

int rk_conv2d_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv2d_f32_params *p = params;
    if (p->n < 0 || p->c < 0 || p->h < 0 || p->w < 0 || p->oc < 0 || p->oh < 0 || p->ow < 0 || p->kh < 0 ||
        p->kw < 0 || p->sh <= 0 || p->sw <= 0 || p->dh <= 0 || p->dw <= 0 || p->group <= 0 || p->c % p->group ||
        p->oc % p->group || p->a_packed || !dtype_ok(p->x_dtype, 0) || !dtype_ok(p->w_dtype, 1) ||
        !dtype_ok(p->y_dtype, 0) || !dtype_ok(p->r_dtype, 0))
        return RLX_E_ARG;
    if (!ctx || !ctx->scratch || ctx->scratch_per_thread < rk_mixed_scratch()) return RLX_E_ARG;
    int next = 2;
    const float *bias = p->has_bias ? in[next++] : NULL;
    const void *res = p->has_res ? in[next++] : NULL;
    const float *scale = p->w_dtype == RLX_I8 ? in[next++] : NULL;
    if (conv_direct(p)) {
        Direct D = {p, in, out[0], bias, scale, res, ctx};
        double work = (double)p->n * (double)p->oc * (double)(p->oh * p->ow) * (double)(p->c / p->group * p->kh * p->kw);
        if (ctx->nthreads > 1 && work >= (double)(1 << 20)) rk_pool_run(ctx->pool, ctx->nthreads, direct_task, &D);
        else {
            rk_ctx one = *ctx;
            one.nthreads = 1;
            D.ctx = &one;
            direct_task(&D, 0);
        }
        return RLX_OK;
    }
    int64_t cg = p->c / p->group, ocg = p->oc / p->group, np = p->oh * p->ow, kdim = cg * p->kh * p->kw;
    int64_t xy = (int64_t)rlx_dtype_size((int)p->x_dtype), wy = (int64_t)rlx_dtype_size((int)p->w_dtype);
    int64_t yy = (int64_t)rlx_dtype_size((int)p->y_dtype), ry = (int64_t)rlx_dtype_size((int)p->r_dtype);
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t g = 0; g < p->group; g++) {
            Prod P;
            memset(&P, 0, sizeof P);
            P.m = ocg;
            P.n = np;
            P.k = kdim;
            P.a = (tmat){(const uint8_t *)in[1] + g * ocg * kdim * wy, (int)p->w_dtype, kdim, 1,
                         scale ? scale + g * ocg : NULL, 0};
            if (p->w_dtype == RLX_F32) P.a_f32 = (const float *)in[1] + g * ocg * kdim;
            P.load_b = load_im2col;
            P.conv = p;
            P.x = (const uint8_t *)in[0] + (n * p->c + g * cg) * p->h * p->w * xy;
            P.x_dt = (int)p->x_dtype;
            P.alpha = 1.0f;
            P.bias = bias ? bias + g * ocg : NULL;
            int64_t yoff = (n * p->oc + g * ocg) * np;
            P.res = res ? (const uint8_t *)res + yoff * ry : NULL;
            P.res_dt = (int)p->r_dtype;
            P.y = (uint8_t *)out[0] + yoff * yy;
            P.y_dt = (int)p->y_dtype;
            P.ldy = np;
            P.act = (int)p->act;
            P.act_a = (float)p->act_a;
            P.act_b = (float)p->act_b;
            int st = run_product(ctx, &P);
            if (st) return st;
        }
    return RLX_OK;
}

/* ---- conv_pwdw_f32: the 1x1 expansion and the depthwise 3x3 after it ----
 * In bands of `rows` output rows, as rk_convgemm.c's: the 1x1 rows a band
 * needs are computed into scratch (f32, with b1 and act1), then the
 * depthwise runs over them (w2 and b2 f32, act2) and stores rounded. Each
 * band is one task and computes its rows itself, so a band's results do not
 * depend on which thread ran the one before it. */

static int64_t pwdw_rows_in(int64_t sh, int64_t rows) { return (rows - 1) * sh + 3; }

size_t rk_conv_pwdw_mixed_scratch(int64_t e, int64_t w, int64_t ow, int64_t sh, int64_t rows) {
    return rk_mixed_scratch() + sizeof(float) * (size_t)(e * pwdw_rows_in(sh, rows) * w + rows * ow + BN) + 3 * 64;
}

typedef struct {
    const rk_conv_pwdw_f32_params *p;
    const void *x, *w1;
    const float *b1, *w2, *b2, *scale;
    void *y;
    const rk_ctx *ctx;
    int64_t nbands;
} PwDwMixed;

static void pwdw_band(const PwDwMixed *D, int64_t t, uint8_t *scratch) {
    const rk_conv_pwdw_f32_params *p = D->p;
    int64_t img = t / D->nbands, oy0 = t % D->nbands * p->rows;
    int64_t oy1 = oy0 + p->rows < p->oh ? oy0 + p->rows : p->oh;
    int64_t r0 = oy0 * p->sh - p->pt, r1 = (oy1 - 1) * p->sh - p->pt + 3;
    if (r0 < 0) r0 = 0;
    if (r1 > p->h) r1 = p->h;
    if (r1 < r0) r1 = r0;
    int64_t np = (r1 - r0) * p->w;
    float *e = rk_align64f(scratch + rk_mixed_scratch());
    int64_t xy = (int64_t)rlx_dtype_size((int)p->x_dtype);
    Prod P;
    memset(&P, 0, sizeof P);
    P.m = p->e;
    P.n = np;
    P.k = p->c;
    P.a = (tmat){D->w1, (int)p->w1_dtype, p->c, 1, D->scale, 0};
    P.b = (tmat){(const uint8_t *)D->x + (img * p->c * p->h * p->w + r0 * p->w) * xy, (int)p->x_dtype, p->h * p->w,
                 1, NULL, 0};
    P.alpha = 1.0f;
    P.bias = D->b1;
    P.y = e;
    P.y_dt = RLX_F32;
    P.ldy = np;
    P.act = (int)p->act1;
    P.act_a = (float)p->act1_a;
    P.act_b = (float)p->act1_b;
    if (p->w1_dtype == RLX_F32) P.a_f32 = D->w1;
    if (np) {
        rk_ctx here = {1, NULL, scratch, rk_mixed_scratch()};
        run_tasks(&here, &P, 1);
    }
    int64_t nrows = oy1 - oy0;
    float *acc = rk_align64f(e + p->e * np), *tmp = rk_align64f(acc + nrows * p->ow);
    Window k = {3, 3, p->sh, p->sw, p->pt, p->pl, 1, 1, p->w, p->ow};
    for (int64_t ch = 0; ch < p->e; ch++) {
        memset(acc, 0, sizeof(float) * (size_t)(nrows * p->ow));
        window_sum(&k, acc, e + ch * np, r0, r1, D->w2 + ch * 9, oy0, oy1);
        for (int64_t oy = oy0; oy < oy1; oy++) {
            const float *a = acc + (oy - oy0) * p->ow;
            for (int64_t q0 = 0; q0 < p->ow; q0 += BN) {
                int64_t nq = p->ow - q0 < BN ? p->ow - q0 : BN;
                float b2 = D->b2 ? D->b2[ch] : 0.0f;
                for (int64_t q = 0; q < nq; q++) tmp[q] = D->b2 ? a[q0 + q] + b2 : a[q0 + q];
                rk_act_run(tmp, nq, (int)p->act2, (float)p->act2_a, (float)p->act2_b);
                store_run(D->y, (int)p->y_dtype, ((img * p->e + ch) * p->oh + oy) * p->ow + q0, tmp, nq);
            }
        }
    }
}

static void pwdw_mixed_task(void *arg, int tid) {
    const PwDwMixed *D = arg;
    int nt = D->ctx->nthreads > 1 ? D->ctx->nthreads : 1;
    uint8_t *scratch = D->ctx->scratch + (size_t)tid * D->ctx->scratch_per_thread;
    for (int64_t t = tid; t < D->p->n * D->nbands; t += nt) pwdw_band(D, t, scratch);
}

int rk_conv_pwdw_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_pwdw_f32_params *p = params;
    if (p->n < 0 || p->c <= 0 || p->h <= 0 || p->w <= 0 || p->e <= 0 || p->oh < 0 || p->ow < 0 || p->sh <= 0 ||
        p->sw <= 0 || p->pt < 0 || p->pl < 0 || p->rows <= 0 || !dtype_ok(p->x_dtype, 0) ||
        !dtype_ok(p->w1_dtype, 1) || !dtype_ok(p->y_dtype, 0) || !ctx || !ctx->scratch ||
        ctx->scratch_per_thread < rk_conv_pwdw_mixed_scratch(p->e, p->w, p->ow, p->sh, p->rows))
        return RLX_E_ARG;
    PwDwMixed D;
    memset(&D, 0, sizeof D);
    D.p = p;
    D.ctx = ctx;
    D.x = in[0];
    D.w1 = in[1];
    int next = 2;
    D.b1 = p->has_b1 ? in[next++] : NULL;
    D.w2 = in[next++];
    D.b2 = p->has_b2 ? in[next++] : NULL;
    D.scale = p->w1_dtype == RLX_I8 ? in[next++] : NULL;
    D.y = out[0];
    D.nbands = (p->oh + p->rows - 1) / p->rows;
    double macs = (double)p->n * (double)p->e * (double)p->h * (double)p->w * (double)p->c;
    if (ctx->nthreads > 1 && macs >= (double)(1 << 20)) rk_pool_run(ctx->pool, ctx->nthreads, pwdw_mixed_task, &D);
    else {
        rk_ctx one = *ctx;
        one.nthreads = 1;
        D.ctx = &one;
        pwdw_mixed_task(&D, 0);
    }
    return RLX_OK;
}
