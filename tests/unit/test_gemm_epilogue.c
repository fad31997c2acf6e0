/* test_gemm_epilogue.c - the epilogue fused into rk_sgemm_ex (rk_gemm.h).
 *
 * The fused epilogue (bias per row or per column, residual, activation) must
 * give exactly the bits of a plain GEMM followed by a separate pass written
 * here the way the kernels used to do it (rk_convgemm.c's per-row pass,
 * rk_linalg.c's per-column pass), over shapes that hit full, ragged and
 * 8-wide tiles, several K blocks, the 12-row and 6-row kernels and pre-packed
 * operands. Values include NaN, +-inf, -0 (relu must give +0 for -0 and keep
 * NaN; clip keeps NaN) and zero biases (a per-row bias of 0 is not added
 * without a residual, so -0 stays -0). rk_sgemm_rows over a row split, and
 * several threads, must match one whole call bit for bit, and so must
 * rk_sgemm_few_rows on a few rows against a pre-packed B.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_gemm.h"
#include "rlx_scalar.h"

static uint32_t rng_state = 777u;
static float rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

static float *filled(int64_t n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    cr_assert(p);
    for (int64_t i = 0; i < n; i++) p[i] = rnd();
    return p;
}

static void serial_pool(void *ctx, int nthreads, void (*task)(void *arg, int tid), void *arg) {
    (void)ctx;
    for (int t = nthreads - 1; t >= 0; t--) task(arg, t);
}

/* The separate pass, as rk_convgemm.c (per row) and rk_linalg.c (per column) ran it. */
static void reference_pass(const rk_sgemm_args *g, float *c) {
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            float *y = &c[i * g->ldc + j];
            const float *r = g->res ? &g->res[i * g->ldres + j] : NULL;
            if (g->bias_per_col) {
                if (g->bias) *y += g->bias[j];
                if (r) *y += *r;
            } else {
                float b = g->bias ? g->bias[i] : 0.0f;
                if (r) *y = *y + b + *r;
                else if (b != 0.0f) *y += b;
            }
            *y = rs_act(*y, g->act, g->act_a, g->act_b);
        }
}

typedef struct {
    rk_sgemm_args g;
    float *a, *b, *bias, *res, *packed_a, *packed_b;
} case_data;

static void case_make(case_data *d, int64_t m, int64_t n, int64_t k, int bias_mode, int with_res, int act,
                      int prepack) {
    memset(d, 0, sizeof *d);
    rk_sgemm_args *g = &d->g;
    g->m = m, g->n = n, g->k = k, g->alpha = 1.0f, g->beta = 0.0f;
    d->a = filled(m * k);
    d->b = filled(k * n);
    /* special values: a NaN and an inf row of A make NaN/inf outputs; a zero
     * row of A makes +0 sums, which alpha = -1 turns into -0 */
    if (m > 2 && k > 0) {
        d->a[0 * k] = NAN;
        d->a[1 * k] = INFINITY;
        for (int64_t p = 0; p < k; p++) d->a[2 * k + p] = 0.0f;
    }
    /* and row 6's -0 sums meet a per-row bias of +0 (below), not added */
    if (m > 6)
        for (int64_t p = 0; p < k; p++) d->a[6 * k + p] = 0.0f;
    g->alpha = -1.0f;
    g->a = d->a, g->lda = k;
    g->b = d->b, g->ldb = n;
    if (prepack & 1) {
        d->packed_a = malloc(rk_sgemm_packed_a_size(m, k) + 4);
        rk_sgemm_pack_a(m, k, d->a, k, 0, d->packed_a);
        g->packed_a = d->packed_a;
    }
    if (prepack & 2) {
        d->packed_b = malloc(rk_sgemm_packed_b_size(n, k) + 4);
        rk_sgemm_pack_b(n, k, d->b, n, 0, d->packed_b);
        g->packed_b = d->packed_b;
    }
    g->ldc = n + 3;
    if (bias_mode) {
        int64_t nb = bias_mode == 1 ? m : n;
        d->bias = filled(nb);
        for (int64_t i = 0; i < nb; i += 3) d->bias[i] = i % 2 ? -0.0f : 0.0f;
        g->bias = d->bias;
        g->bias_per_col = bias_mode == 2;
    }
    if (with_res) {
        g->ldres = n + 1;
        d->res = filled(m * g->ldres);
        for (int64_t i = 0; i < m * g->ldres; i += 5) d->res[i] = -0.0f;
        g->res = d->res;
    }
    g->act = act;
    g->act_a = act == RS_ACT_CLIP ? -0.25f : 0.1f;
    g->act_b = act == RS_ACT_CLIP ? 0.5f : 0.6f;
}

static void case_free(case_data *d) {
    free(d->a), free(d->b), free(d->bias), free(d->res), free(d->packed_a), free(d->packed_b);
}

static float *run(const rk_sgemm_args *g, int nthreads, int fused) {
    float *c = malloc((size_t)(g->m * g->ldc) * sizeof(float));
    for (int64_t i = 0; i < g->m * g->ldc; i++) c[i] = NAN;   /* beta 0: never read */
    rk_sgemm_args h = *g;
    h.c = c;
    if (!fused) h.bias = NULL, h.res = NULL, h.act = RS_ACT_NONE;
    size_t per = rk_sgemm_scratch_size(g->m, g->n, g->k);
    void *scratch = malloc((size_t)nthreads * per + 64);
    rk_sgemm_ex(&h, scratch, nthreads, nthreads > 1 ? serial_pool : NULL, NULL);
    free(scratch);
    if (!fused) reference_pass(g, c);
    return c;
}

/* Every element (not the row padding) bit for bit. */
static int same(const rk_sgemm_args *g, const float *x, const float *y) {
    for (int64_t i = 0; i < g->m; i++)
        if (memcmp(x + i * g->ldc, y + i * g->ldc, (size_t)g->n * sizeof(float))) return 0;
    return 1;
}

static const int64_t shapes[][3] = {{1, 1, 1},   {5, 7, 3},     {12, 16, 8},  {13, 49, 40}, {64, 196, 300},
                                    {66, 8, 17}, {25, 33, 600}, {150, 20, 9}, {7, 24, 1},   {30, 100, 2}};
static const int acts[] = {RS_ACT_NONE, RS_ACT_RELU, RS_ACT_CLIP, RS_ACT_SIGMOID, RS_ACT_HARDSWISH, RS_ACT_SILU};

Test(gemm_epilogue, fused_equals_separate_pass) {
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int bias_mode = 0; bias_mode < 3; bias_mode++)
            for (int with_res = 0; with_res < 2; with_res++)
                for (size_t ai = 0; ai < 2 * sizeof acts / sizeof acts[0]; ai++) {
                    case_data d;
                    int prepack = (int)((s + (size_t)bias_mode + ai) % 4);
                    int act = acts[ai / 2];
                    case_make(&d, shapes[s][0], shapes[s][1], shapes[s][2], bias_mode, with_res, act, prepack);
                    /* alpha -1 (-0 sums) and 1 (the AVX-512 kernel's own row-bias path) */
                    if (ai % 2) d.g.alpha = 1.0f;
                    float *want = run(&d.g, 1, 0), *got = run(&d.g, 1, 1), *got3 = run(&d.g, 3, 1);
                    cr_expect(same(&d.g, want, got), "%lldx%lldx%lld bias %d res %d act %d alpha %g: fused differs",
                              (long long)d.g.m, (long long)d.g.n, (long long)d.g.k, bias_mode, with_res, act,
                              (double)d.g.alpha);
                    cr_expect(same(&d.g, want, got3), "%lldx%lldx%lld bias %d res %d act %d alpha %g: 3 threads differ",
                              (long long)d.g.m, (long long)d.g.n, (long long)d.g.k, bias_mode, with_res, act,
                              (double)d.g.alpha);
                    free(want), free(got), free(got3);
                    case_free(&d);
                }
}

Test(gemm_epilogue, hand_worked_relu_clip_signed_zero) {
    /* C (1 x 4) = A (1 x 1, one) * B (1 x 4) */
    float a[1] = {1.0f}, b[4] = {-0.0f, -2.0f, NAN, 3.0f}, c[4];
    rk_sgemm_args g;
    memset(&g, 0, sizeof g);
    g.m = 1, g.n = 4, g.k = 1, g.alpha = 1.0f, g.a = a, g.lda = 1, g.b = b, g.ldb = 4, g.c = c, g.ldc = 4;
    g.act = RS_ACT_RELU;
    char scratch[4096];
    cr_assert(rk_sgemm_scratch_size(1, 4, 1) <= sizeof scratch);
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
    /* relu: -0 -> +0, -2 -> +0, NaN stays NaN, 3 stays */
    cr_expect(c[0] == 0.0f && !signbit(c[0]));
    cr_expect(c[1] == 0.0f && !signbit(c[1]));
    cr_expect(isnan(c[2]));
    cr_expect(c[3] == 3.0f);
    /* clip to [-1, 1] plus a column bias of 0.5: -0+0.5, -1.5 -> -1, NaN, 3.5 -> 1 */
    float bias[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    g.bias = bias, g.bias_per_col = 1, g.act = RS_ACT_CLIP, g.act_a = -1.0f, g.act_b = 1.0f;
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
    cr_expect(c[0] == 0.5f);
    cr_expect(c[1] == -1.0f);
    cr_expect(isnan(c[2]));
    cr_expect(c[3] == 1.0f);
    /* per-row bias 0, no residual, no activation: -0 (alpha = -1 times a
     * +0 sum) stays -0 */
    float zero = 0.0f;
    b[0] = 0.0f;
    g.alpha = -1.0f, g.bias = &zero, g.bias_per_col = 0, g.act = RS_ACT_NONE;
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
    cr_expect(c[0] == 0.0f && signbit(c[0]));
    /* clip to [-0, 6] with a per-row bias of +0 (not added), alpha 1, 16
     * columns (the AVX-512 kernel's row-bias path): a +0 sum (1 * -0 + 0)
     * stays +0 (it equals the bound -0), -2 -> -0, NaN stays NaN, 7 -> 6,
     * 6 and 3 stay */
    float b16[16] = {-0.0f, -2.0f, NAN, 7.0f, 6.0f, 3.0f}, c16[16];
    g.alpha = 1.0f, g.n = 16, g.b = b16, g.ldb = 16, g.c = c16, g.ldc = 16;
    g.act = RS_ACT_CLIP, g.act_a = -0.0f, g.act_b = 6.0f;
    cr_assert(rk_sgemm_scratch_size(1, 16, 1) <= sizeof scratch);
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
    cr_expect(c16[0] == 0.0f && !signbit(c16[0]));
    cr_expect(c16[1] == 0.0f && signbit(c16[1]));
    cr_expect(isnan(c16[2]));
    cr_expect(c16[3] == 6.0f && c16[4] == 6.0f && c16[5] == 3.0f);
    cr_expect(c16[6] == 0.0f && !signbit(c16[6]));
}

Test(gemm_epilogue, row_split_equals_whole) {
    case_data d;
    case_make(&d, 100, 70, 300, 1, 1, RS_ACT_CLIP, 1);
    float *want = run(&d.g, 1, 1);
    float *c = malloc((size_t)(d.g.m * d.g.ldc) * sizeof(float));
    void *scratch = malloc(rk_sgemm_scratch_size(d.g.m, d.g.n, d.g.k));
    rk_sgemm_args g = d.g;
    g.c = c;
    static const int64_t cuts[] = {0, 12, 36, 42, 96, 100};
    for (size_t i = 0; i + 1 < sizeof cuts / sizeof cuts[0]; i++) rk_sgemm_rows(&g, cuts[i], cuts[i + 1], scratch);
    cr_expect(same(&d.g, want, c), "rows split differs from one call");
    /* K = 0: C = epilogue(0) on the rows asked for */
    g.k = 0;
    rk_sgemm_rows(&g, 0, 100, scratch);
    cr_expect(c[0] == rs_clip(0.0f + d.bias[0] + d.res[0], -0.25f, 0.5f));
    cr_expect(c[5 * d.g.ldc + 7] == rs_clip(0.0f + d.bias[5] + d.res[5 * d.g.ldres + 7], -0.25f, 0.5f));
    free(c), free(scratch), free(want);
    case_free(&d);
}

/* rk_sgemm_few_rows: a few rows against a pre-packed B, the same bits as the
 * blocked path, with every epilogue, beta (C read back), several K blocks
 * (k 600: three of 200) and more than one NC block of columns (n 2100).
 * Activations with exp or erf (not rk_sgemm_few_rows_act's: sigmoid here)
 * it leaves out, as rk_gemm.h says: C is the product plus bias and
 * residual, the blocked path's bits without the activation. */
Test(gemm_epilogue, few_rows_equals_blocked) {
    /* ragged panels and row blocks, several K blocks, and a B past L2; one
     * row alone and as the last of a few (the AVX-512 tile's own path) */
    static const int64_t few[][3] = {{1, 1, 1},     {3, 7, 5},    {4, 16, 33},    {5, 40, 64},  {8, 100, 600},
                                     {2, 2100, 9},  {13, 48, 7},  {6, 50, 256},   {4, 1024, 300},
                                     {1, 200, 600}, {1, 2100, 30}, {9, 70, 260}};
    for (size_t s = 0; s < sizeof few / sizeof few[0]; s++)
        for (int bias_mode = 0; bias_mode < 3; bias_mode++)
            for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++)
                for (int beta = 0; beta < 2; beta++) {
                    case_data d;
                    case_make(&d, few[s][0], few[s][1], few[s][2], bias_mode, (int)(ai % 2), acts[ai], 2);
                    if (beta) d.g.beta = 0.5f;
                    size_t bytes = (size_t)(d.g.m * d.g.ldc) * sizeof(float);
                    float *want = malloc(bytes), *got = malloc(bytes);
                    for (int64_t i = 0; i < d.g.m * d.g.ldc; i++) want[i] = got[i] = (float)(i % 7) - 3.0f;
                    rk_sgemm_args g = d.g;
                    g.c = want;
                    if (!rk_sgemm_few_rows_act(g.act)) g.act = RS_ACT_NONE;
                    void *scratch = malloc(rk_sgemm_scratch_size(g.m, g.n, g.k) + 64);
                    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);
                    g.c = got;
                    g.act = d.g.act;
                    rk_sgemm_few_rows(&g);
                    cr_expect(same(&d.g, want, got), "%lldx%lldx%lld bias %d res %d act %d beta %d: few rows differ",
                              (long long)g.m, (long long)g.n, (long long)g.k, bias_mode, (int)(ai % 2), acts[ai], beta);
                    /* the same in parts of columns (as threads take them),
                     * cut inside and at the edge of an NC block */
                    for (int64_t i = 0; i < d.g.m * d.g.ldc; i++) got[i] = (float)(i % 7) - 3.0f;
                    static const int64_t cuts[] = {0, 16, 64, 2048, 2096};
                    for (size_t ci = 0; ci + 1 < sizeof cuts / sizeof cuts[0]; ci++)
                        rk_sgemm_few_rows_cols(&g, cuts[ci], cuts[ci + 1]);
                    rk_sgemm_few_rows_cols(&g, 2096, g.n);
                    cr_expect(same(&d.g, want, got), "%lldx%lldx%lld bias %d res %d act %d beta %d: in parts differ",
                              (long long)g.m, (long long)g.n, (long long)g.k, bias_mode, (int)(ai % 2), acts[ai], beta);
                    free(scratch), free(want), free(got);
                    case_free(&d);
                }
}
