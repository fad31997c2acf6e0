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
 * The output is cut into tiles of BM x BN; a tile is computed by one thread,
 * always the same way (K in blocks of BK, in order), so the results do not
 * depend on the thread count. Convolutions run their GEMM over im2col
 * blocks of the typed input (the weights are the product's A, output
 * channels its rows), except when they are too thin to reuse anything
 * (depthwise and small groups): then each input plane of a group is
 * converted once and the window is summed directly, in f32.
 */
#include <string.h>

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rlx_scalar.h"

enum { BM = 128, BN = 128, BK = 256 };

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

/* dst[i * ld + j] = M(r0 + i, c0 + j) for an nr x nc block. */
static void load_block(float *dst, int64_t ld, const tmat *m, int64_t r0, int64_t c0, int64_t nr, int64_t nc) {
    for (int64_t i = 0; i < nr; i++) {
        float *d = dst + i * ld;
        int64_t at = (r0 + i) * m->rs + c0 * m->cs;
        if (m->dt == RLX_F32 && m->cs == 1) {
            memcpy(d, (const float *)m->base + at, sizeof(float) * (size_t)nc);
            continue;
        }
        for (int64_t j = 0; j < nc; j++) d[j] = rk_load_f32(m->dt, m->base, at + j * m->cs);
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
/* Fills the kb x nb block of op(B) at (p0, j0) into dst (row stride BN). */
typedef void (*load_b_fn)(const Prod *P, float *dst, int64_t p0, int64_t j0, int64_t kb, int64_t nb);

struct Prod {
    int64_t m, n, k;
    tmat a, b;
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
};

size_t rk_mixed_scratch(void) {
    return sizeof(float) * (size_t)(BM * BK + BK * BN + BM * BN) + rk_sgemm_scratch_size(BM, BN, BK) + 4 * 64;
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

static void tile(const Prod *P, int64_t i0, int64_t j0, uint8_t *scratch) {
    float *ab = rk_align64f(scratch), *bb = rk_align64f(ab + BM * BK), *acc = rk_align64f(bb + BK * BN);
    void *gs = rk_align64f(acc + BM * BN);
    int64_t mb = P->m - i0 < BM ? P->m - i0 : BM, nb = P->n - j0 < BN ? P->n - j0 : BN;
    if (!P->k) memset(acc, 0, sizeof(float) * (size_t)(BM * BN));
    for (int64_t p0 = 0; p0 < P->k; p0 += BK) {
        int64_t kb = P->k - p0 < BK ? P->k - p0 : BK;
        load_block(ab, BK, &P->a, i0, p0, mb, kb);
        if (P->load_b) P->load_b(P, bb, p0, j0, kb, nb);
        else load_block(bb, BN, &P->b, p0, j0, kb, nb);
        rk_sgemm(mb, nb, kb, 1.0f, ab, BK, 0, bb, BN, 0, p0 ? 1.0f : 0.0f, acc, BN, gs);
    }
    for (int64_t i = 0; i < mb; i++)
        for (int64_t j = 0; j < nb; j++) {
            int64_t gi = i0 + i, gj = j0 + j;
            float v = P->alpha * acc[i * BN + j];
            if (P->cin) v += P->beta * P->cin[gi * P->c_rs + gj * P->c_cs];
            v = epilogue_sum(v, P->bias ? P->bias[P->bias_per_col ? gj : gi] : 0.0f, P->bias != NULL,
                             P->bias_per_col, P->res ? rk_load_f32(P->res_dt, P->res, gi * P->ldy + gj) : 0.0f,
                             P->res != NULL);
            rk_store_f32(P->y_dt, P->y, gi * P->ldy + gj, rs_act(v, P->act, P->act_a, P->act_b));
        }
}

/* Every tile of P on the calling thread. */
static void run_tiles_here(const Prod *P, uint8_t *scratch) {
    for (int64_t i0 = 0; i0 < P->m; i0 += BM)
        for (int64_t j0 = 0; j0 < P->n; j0 += BN) tile(P, i0, j0, scratch);
}

typedef struct {
    const Prod *P;
    int64_t ntiles, tiles_n;
    const rk_ctx *ctx;
} TileRun;

static void tile_task(void *arg, int tid) {
    const TileRun *R = arg;
    int nt = R->ctx && R->ctx->nthreads > 1 ? R->ctx->nthreads : 1;
    uint8_t *scratch = R->ctx->scratch + (size_t)tid * R->ctx->scratch_per_thread;
    for (int64_t t = tid; t < R->ntiles; t += nt) tile(R->P, t / R->tiles_n * BM, t % R->tiles_n * BN, scratch);
}

static int run_product(const rk_ctx *ctx, const Prod *P) {
    if (!ctx || !ctx->scratch || ctx->scratch_per_thread < rk_mixed_scratch()) return RLX_E_ARG;
    TileRun R = {P, 0, (P->n + BN - 1) / BN, ctx};
    R.ntiles = (P->m + BM - 1) / BM * R.tiles_n;
    int nt = ctx->nthreads > 1 && rk_sgemm_threads_pay(P->m, P->n, P->k) ? ctx->nthreads : 1;
    if (nt > 1) rk_pool_run(ctx->pool, nt, tile_task, &R);
    else {
        rk_ctx one = *ctx;
        one.nthreads = 1;
        R.ctx = &one;
        tile_task(&R, 0);
    }
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

/* op(B) of a convolution: rows are (c, ki, kj) of one group, columns output
 * positions; padding reads 0. */
static void load_im2col(const Prod *P, float *dst, int64_t p0, int64_t j0, int64_t kb, int64_t nb) {
    const rk_conv2d_f32_params *c = P->conv;
    for (int64_t r = 0; r < kb; r++) {
        int64_t kk = p0 + r, ch = kk / (c->kh * c->kw), ki = kk / c->kw % c->kh, kj = kk % c->kw;
        float *d = dst + r * BN;
        for (int64_t q = 0; q < nb; q++) {
            int64_t pos = j0 + q, oy = pos / c->ow, ox = pos % c->ow;
            int64_t iy = oy * c->sh - c->pt + ki * c->dh, ix = ox * c->sw - c->pl + kj * c->dw;
            d[q] = iy >= 0 && iy < c->h && ix >= 0 && ix < c->w ? rk_load_f32(P->x_dt, P->x, (ch * c->h + iy) * c->w + ix)
                                                                 : 0.0f;
        }
    }
}

/* Whether a convolution runs directly: few output channels per group and
 * few inputs per output (depthwise), with its planes in scratch. */
static int conv_direct(const rk_conv2d_f32_params *p) {
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    return ocg <= 4 && cg <= 4 && (p->h * p->w + ocg * p->oh * p->ow) * 4 + 128 <= (int64_t)rk_mixed_scratch();
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
    memset(acc, 0, sizeof(float) * (size_t)(ocg * np));
    for (int64_t ci = 0; ci < cg; ci++) {
        int64_t ch = g * cg + ci, base = (n * p->c + ch) * p->h * p->w;
        for (int64_t i = 0; i < p->h * p->w; i++) plane[i] = rk_load_f32((int)p->x_dtype, D->in[0], base + i);
        for (int64_t o = 0; o < ocg; o++) {
            int64_t oc = g * ocg + o;
            float *a = acc + o * np;
            for (int64_t ki = 0; ki < p->kh; ki++)
                for (int64_t kj = 0; kj < p->kw; kj++) {
                    float wv = rk_load_f32((int)p->w_dtype, D->in[1], ((oc * cg + ci) * p->kh + ki) * p->kw + kj);
                    if (D->scale) wv *= D->scale[oc];
                    for (int64_t oy = 0; oy < p->oh; oy++) {
                        int64_t iy = oy * p->sh - p->pt + ki * p->dh;
                        if (iy < 0 || iy >= p->h) continue;
                        const float *row = plane + iy * p->w;
                        for (int64_t ox = 0; ox < p->ow; ox++) {
                            int64_t ix = ox * p->sw - p->pl + kj * p->dw;
                            if (ix >= 0 && ix < p->w) a[oy * p->ow + ox] += wv * row[ix];
                        }
                    }
                }
        }
    }
    for (int64_t o = 0; o < ocg; o++) {
        int64_t oc = g * ocg + o, at = (n * p->oc + oc) * np;
        for (int64_t q = 0; q < np; q++) {
            float v = epilogue_sum(acc[o * np + q], D->bias ? D->bias[oc] : 0.0f, D->bias != NULL, 0,
                                   D->res ? rk_load_f32((int)p->r_dtype, D->res, at + q) : 0.0f, D->res != NULL);
            rk_store_f32((int)p->y_dtype, D->y, at + q, rs_act(v, (int)p->act, (float)p->act_a, (float)p->act_b));
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

size_t rk_conv_pwdw_mixed_scratch(int64_t e, int64_t w, int64_t sh, int64_t rows) {
    return rk_mixed_scratch() + sizeof(float) * (size_t)(e * pwdw_rows_in(sh, rows) * w) + 64;
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
    if (np) run_tiles_here(&P, scratch);
    for (int64_t ch = 0; ch < p->e; ch++) {
        const float *plane = e + ch * np, *wk = D->w2 + ch * 9;
        for (int64_t oy = oy0; oy < oy1; oy++)
            for (int64_t ox = 0; ox < p->ow; ox++) {
                float v = 0.0f;
                for (int64_t ki = 0; ki < 3; ki++) {
                    int64_t iy = oy * p->sh - p->pt + ki;
                    if (iy < r0 || iy >= r1) continue;
                    for (int64_t kj = 0; kj < 3; kj++) {
                        int64_t ix = ox * p->sw - p->pl + kj;
                        if (ix >= 0 && ix < p->w) v += wk[ki * 3 + kj] * plane[(iy - r0) * p->w + ix];
                    }
                }
                if (D->b2) v += D->b2[ch];
                rk_store_f32((int)p->y_dtype, D->y, ((img * p->e + ch) * p->oh + oy) * p->ow + ox,
                       rs_act(v, (int)p->act2, (float)p->act2_a, (float)p->act2_b));
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
        ctx->scratch_per_thread < rk_conv_pwdw_mixed_scratch(p->e, p->w, p->sh, p->rows))
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
