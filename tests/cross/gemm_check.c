/* gemm_check.c - the runtime's GEMM against a plain double-precision sum, in
 * a program with no test framework, so that it builds for any target
 * (tests/cross/run.sh cross-builds it for AArch64 and runs it under qemu).
 *
 *   gemm_check [KERNEL]
 *
 * Prints `gemm kernel: NAME` (rk_sgemm_kernel(): which micro-kernel this
 * build holds; with KERNEL given, any other name is a failure, so the suite
 * proves that the NEON kernel is what runs), then checks rk_sgemm_ex over
 * shapes that reach every path of the blocked driver: ragged rows (M not a
 * multiple of 6) and columns (N not a multiple of 16, 8 columns alone), K
 * over one block (256), A and B transposed or not, pre-packed A or B
 * (rk_sgemm_pack_a/_b, as rlxc packs weights), alpha and beta, and the
 * epilogues (row or column bias, residual, relu and clip). Each element must
 * be within 1e-5 of the sum of |a*b| terms (plus 1e-6) of the reference, and
 * the padding around C untouched. One line per failing case, then
 * `N passed, N failed`; exit status 1 if any failed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rlx_scalar.h"

static unsigned rng_state = 12345;
static float rnd(void) {
    rng_state = rng_state * 1103515245u + 12345u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static int npass, nfail;

typedef struct {
    int64_t m, n, k;
    int ta, tb, pa, pb;          /* transposed, pre-packed */
    float alpha, beta;
    int bias, per_col, res, act; /* epilogue */
} gemm_case;

static double act_ref(double y, int act) {
    if (act == RS_ACT_RELU) return y > 0 ? y : 0;
    if (act == RS_ACT_CLIP) return y < -0.5 ? -0.5 : y > 0.75 ? 0.75 : y;
    return y;
}

static void run_case(const gemm_case *t) {
    int64_t m = t->m, n = t->n, k = t->k, pad = 3;
    int64_t lda = (t->ta ? m : k) + 1, ldb = (t->tb ? k : n) + 2, ldc = n + pad;
    float *a = malloc(sizeof(float) * (size_t)((t->ta ? k : m) * lda));
    float *b = malloc(sizeof(float) * (size_t)((t->tb ? n : k) * ldb));
    float *c = malloc(sizeof(float) * (size_t)(m * ldc));
    float *c0 = malloc(sizeof(float) * (size_t)(m * ldc));
    float *bias = malloc(sizeof(float) * (size_t)(m > n ? m : n));
    float *res = malloc(sizeof(float) * (size_t)(m * n));
    for (int64_t i = 0; i < (t->ta ? k : m) * lda; i++) a[i] = rnd();
    for (int64_t i = 0; i < (t->tb ? n : k) * ldb; i++) b[i] = rnd();
    for (int64_t i = 0; i < m * ldc; i++) c[i] = c0[i] = rnd();
    for (int64_t i = 0; i < (m > n ? m : n); i++) bias[i] = rnd();
    for (int64_t i = 0; i < m * n; i++) res[i] = rnd();

    rk_sgemm_args g;
    memset(&g, 0, sizeof g);
    g.m = m, g.n = n, g.k = k, g.alpha = t->alpha, g.beta = t->beta;
    g.a = a, g.lda = lda, g.trans_a = t->ta, g.b = b, g.ldb = ldb, g.trans_b = t->tb, g.c = c, g.ldc = ldc;
    float *packed_a = NULL, *packed_b = NULL;
    if (t->pa) {
        packed_a = malloc(rk_sgemm_packed_a_size(m, k));
        rk_sgemm_pack_a(m, k, a, lda, t->ta, packed_a);
        g.packed_a = packed_a;
    }
    if (t->pb) {
        packed_b = malloc(rk_sgemm_packed_b_size(n, k));
        rk_sgemm_pack_b(n, k, b, ldb, t->tb, packed_b);
        g.packed_b = packed_b;
    }
    if (t->bias) g.bias = bias, g.bias_per_col = t->per_col;
    if (t->res) g.res = res, g.ldres = n;
    g.act = t->act;
    g.act_a = -0.5f, g.act_b = 0.75f;
    void *scratch = malloc(rk_sgemm_scratch_size(m, n, k));
    rk_sgemm_ex(&g, scratch, 1, NULL, NULL);

    int bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < m && !bad; i++) {
        for (int64_t j = 0; j < ldc; j++) {
            float got = c[i * ldc + j];
            if (j >= n) {   /* padding: never written */
                if (memcmp(&got, &c0[i * ldc + j], sizeof got)) bad = 1;
                continue;
            }
            double sum = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double x = t->ta ? a[p * lda + i] : a[i * lda + p];
                double y = t->tb ? b[j * ldb + p] : b[p * ldb + j];
                sum += x * y;
                mag += fabs(x * y);
            }
            double want = t->alpha * sum + (t->beta != 0.0f ? t->beta * c0[i * ldc + j] : 0.0);
            mag = fabs(t->alpha) * mag + fabs(t->beta * c0[i * ldc + j]);
            if (t->bias) want += t->per_col ? bias[j] : bias[i], mag += 1;
            if (t->res) want += res[i * n + j], mag += 1;
            want = act_ref(want, t->act);
            double err = fabs(got - want);
            if (err > worst) worst = err;
            if (!(err <= 1e-5 * mag + 1e-6)) bad = 1;
        }
    }
    if (bad) {
        nfail++;
        printf("FAIL m=%lld n=%lld k=%lld ta=%d tb=%d pa=%d pb=%d alpha=%g beta=%g bias=%d/%d res=%d act=%d "
               "(max err %.3g)\n", (long long)m, (long long)n, (long long)k, t->ta, t->tb, t->pa, t->pb, t->alpha,
               t->beta, t->bias, t->per_col, t->res, t->act, worst);
    } else {
        npass++;
    }
    free(a), free(b), free(c), free(c0), free(bias), free(res), free(packed_a), free(packed_b), free(scratch);
}

int main(int argc, char **argv) {
    const char *kernel = rk_sgemm_kernel();
    printf("gemm kernel: %s\n", kernel);
    if (argc > 1 && strcmp(argv[1], kernel)) {
        printf("FAIL kernel: this build runs '%s', not '%s'\n", kernel, argv[1]);
        nfail++;
    }
    static const int64_t ms[] = {1, 5, 6, 7, 13, 37}, ns[] = {1, 7, 8, 9, 16, 17, 40}, ks[] = {1, 3, 4, 7, 64, 300};
    int variant = 0;
    for (size_t im = 0; im < sizeof ms / sizeof ms[0]; im++)
        for (size_t in = 0; in < sizeof ns / sizeof ns[0]; in++)
            for (size_t ik = 0; ik < sizeof ks / sizeof ks[0]; ik++, variant++) {
                gemm_case t = {ms[im], ns[in], ks[ik], 0, 0, 0, 0, 1.0f, 0.0f, 0, 0, 0, RS_ACT_NONE};
                run_case(&t);
                /* the same shape with the options that variant picks */
                t.ta = variant & 1, t.tb = (variant >> 1) & 1;
                t.pa = (variant % 5) == 1, t.pb = (variant % 3) == 2;
                t.alpha = variant % 4 == 3 ? 0.5f : 1.0f;
                t.beta = variant % 7 == 4 ? 1.5f : 0.0f;
                t.bias = variant % 2, t.per_col = (variant / 2) % 2, t.res = (variant / 3) % 2 == 1;
                t.act = variant % 3 == 0 ? RS_ACT_NONE : variant % 3 == 1 ? RS_ACT_RELU : RS_ACT_CLIP;
                run_case(&t);
            }
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail != 0;
}
