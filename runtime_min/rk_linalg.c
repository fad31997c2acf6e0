/* rk_linalg.c - MatMul and Gemm kernels over the packed GEMM of rk_gemm.c.
 *
 * Both run rk_sgemm_ex (threads from the context's pool, scratch from the
 * context) with the fused epilogue, which the GEMM applies to each tile as
 * it completes: bias, residual, activation, in the order the fusion pass
 * proved equivalent to the graph (act(x*w + b + r)).
 * A weight operand B may come pre-packed from the weights file (b_packed),
 * so nothing is repacked per run.
 *
 * The _rows implementations (rk_kernels.def, KI) take the same params and
 * run rk_sgemm_few_rows instead, which the lowering picks for a few rows
 * against pre-packed weights: then the general GEMM is not linked at all.
 * Each entry passes its GEMM as a function, so neither references the other.
 * Operands stored in other types than f32 go to rk_mixed.c.
 */
#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rlx_scalar.h"

/* Small products are not worth waking threads for (rk_sgemm_threads_pay). */
static int threads_for(const rk_ctx *ctx, int64_t m, int64_t n, int64_t k) {
    if (!ctx || ctx->nthreads <= 1) return 1;
    return rk_sgemm_threads_pay(m, n, k) ? ctx->nthreads : 1;
}

/* A few-rows product's columns in groups of FEW_COLS (four of the packed
 * panels: the AVX-512 few-rows tile's width), taken from the queue in
 * contiguous runs (rk_next_item): rk_pool_share may leave a late thread's
 * share to the others, so no part may belong to one tid only. */
enum { FEW_COLS = 4 * RK_SGEMM_COL_STEP };
typedef struct {
    const rk_sgemm_args *g;
    rk_queue *q;
    int nt;
    int64_t groups;
} FewCols;

static void few_cols_task(void *arg, int tid) {
    const FewCols *f = arg;
    for (int64_t cursor = 0, t = -1, t1 = 0; rk_next_item(f->q, f->nt, tid, RK_RUNS, f->groups, &cursor, &t, &t1);)
        rk_sgemm_few_rows_cols(f->g, t * FEW_COLS, (t + 1) * FEW_COLS);
}

static int sgemm(rk_ctx *ctx, rk_sgemm_args *args) {
    if (!ctx || !ctx->scratch || ctx->scratch_per_thread < rk_sgemm_scratch_size(args->m, args->n, args->k))
        return RLX_E_ARG;   /* the plan reserves this; a mismatch is a bug, not a crash */
    int nt = threads_for(ctx, args->m, args->n, args->k);
    if (args->packed_b && args->m <= RK_SGEMM_FEW_ROWS && rk_sgemm_few_rows_act(args->act)) {
        /* a few rows against pre-packed weights large enough to thread (a
         * classifier at batch 1: the lowering keeps the blocked GEMM for
         * them): streaming the weights is the work, which the few-rows
         * loops do faster than the blocked path's tiles (1 x 1000 x 1280,
         * 5 MB of weights: 172 against 198 us), the same bits; threads
         * take parts of the columns */
        if (nt > 1) {
            rk_queue q;
            int64_t groups = (args->n + FEW_COLS - 1) / FEW_COLS;
            FewCols f = {args, &q, (int)rk_queue_init(&q, nt < groups ? nt : groups), groups};
            rk_pool_share(ctx->pool, f.nt, few_cols_task, &f);
        } else {
            rk_sgemm_few_rows(args);
        }
        return RLX_OK;
    }
    rk_sgemm_ex(args, ctx->scratch, nt, nt > 1 ? rk_pool_share : NULL, ctx->pool);
    return RLX_OK;
}

/* The _rows implementations' GEMM: only where it applies (any number of
 * rows: the lowering takes it for at most RK_SGEMM_FEW_ROWS, the recurrent
 * kernel for a block of steps' projections too). */
static int few_rows(rk_ctx *ctx, rk_sgemm_args *args) {
    (void)ctx;
    if (!args->packed_b || !rk_sgemm_few_rows_act(args->act)) return RLX_E_ARG;
    rk_sgemm_few_rows(args);
    return RLX_OK;
}

typedef int (*gemm_fn)(rk_ctx *ctx, rk_sgemm_args *args);

static int matmul(rk_ctx *ctx, const void *params, const void *const *in, void *const *out, gemm_fn run) {
    const rk_matmul_f32_params *p = params;
    if (p->m < 0 || p->n < 0 || p->k < 0 || p->brank < 0 || p->brank > RK_MAX_RANK) return RLX_E_ARG;
    int64_t nbatch = 1;
    for (int64_t d = 0; d < p->brank; d++) {
        if (p->bdims[d] < 0) return RLX_E_ARG;
        nbatch *= p->bdims[d];
    }
    const float *a = in[0], *b = in[1];
    int next = 2;
    const float *bias = p->has_bias ? in[next++] : NULL;
    const float *res = p->has_res ? in[next++] : NULL;
    float *c = out[0];
    int64_t idx[RK_MAX_RANK] = {0}, cstep = p->m * p->n;
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t aoff = 0, boff = 0;
        for (int64_t d = 0; d < p->brank; d++) {
            aoff += idx[d] * p->astride[d];
            boff += idx[d] * p->bstride[d];
        }
        rk_sgemm_args g = {0};
        g.m = p->m;
        g.n = p->n;
        g.k = p->k;
        g.alpha = 1.0f;
        g.beta = 0.0f;
        g.a = a + aoff;
        g.lda = p->trans_a ? p->m : p->k;
        g.trans_a = (int)p->trans_a;
        if (p->b_packed) {
            g.packed_b = b;   /* one packed matrix: weights have no batch dims */
        } else {
            g.b = b + boff;
            g.ldb = p->trans_b ? p->k : p->n;
            g.trans_b = (int)p->trans_b;
        }
        g.c = c + bi * cstep;
        g.ldc = p->n;
        g.bias = bias;
        g.bias_per_col = 1;
        g.res = res ? res + bi * cstep : NULL;
        g.ldres = p->n;
        g.act = (int)p->act;
        g.act_a = (float)p->act_a;
        g.act_b = (float)p->act_b;
        int st = run(ctx, &g);
        if (st) return st;
        rk_odometer_next(idx, p->bdims, p->brank);
    }
    return RLX_OK;
}

/* Only the general entries know rk_mixed.c: the few-rows ones, which the C
 * target never picks for other dtypes, stay small. */
int rk_matmul_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_matmul_f32_params *p = params;
    if (p->a_dtype || p->b_dtype || p->y_dtype || p->r_dtype) return rk_matmul_mixed(ctx, params, in, out);
    return matmul(ctx, params, in, out, sgemm);
}

int rk_matmul_f32_rows(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_matmul_f32_params *p = params;
    if (p->a_dtype || p->b_dtype || p->y_dtype || p->r_dtype) return RLX_E_ARG;
    return matmul(ctx, params, in, out, few_rows);
}

static int gemm(rk_ctx *ctx, const void *params, const void *const *in, void *const *out, gemm_fn run) {
    const rk_gemm_f32_params *p = params;
    int64_t m = p->m, n = p->n, k = p->k;
    if (m < 0 || n < 0 || k < 0) return RLX_E_ARG;
    int next = 2;
    const float *cin = p->has_c ? in[next++] : NULL;
    const float *res = p->has_res ? in[next++] : NULL;
    float *y = out[0];
    float beta = (float)p->beta;
    if (cin && beta != 0.0f) {
        /* y = C, broadcast; the GEMM then accumulates alpha*AB + beta*y */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) y[i * n + j] = cin[i * p->c_rs + j * p->c_cs];
    } else {
        beta = 0.0f;
    }
    rk_sgemm_args g = {0};
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = (float)p->alpha;
    g.beta = beta;
    g.a = in[0];
    g.lda = p->trans_a ? m : k;
    g.trans_a = (int)p->trans_a;
    if (p->b_packed) {
        g.packed_b = in[1];
    } else {
        g.b = in[1];
        g.ldb = p->trans_b ? k : n;
        g.trans_b = (int)p->trans_b;
    }
    g.c = y;
    g.ldc = n;
    g.res = res;
    g.ldres = n;
    g.act = (int)p->act;
    g.act_a = (float)p->act_a;
    g.act_b = (float)p->act_b;
    return run(ctx, &g);
}

int rk_gemm_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_gemm_f32_params *p = params;
    if (p->a_dtype || p->b_dtype || p->y_dtype || p->r_dtype) return rk_gemm_mixed(ctx, params, in, out);
    return gemm(ctx, params, in, out, sgemm);
}

int rk_gemm_f32_rows(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_gemm_f32_params *p = params;
    if (p->a_dtype || p->b_dtype || p->y_dtype || p->r_dtype) return RLX_E_ARG;
    return gemm(ctx, params, in, out, few_rows);
}
