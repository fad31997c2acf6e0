/* test_conv_pool.c - conv_pool_f32: a stem convolution and the max pooling
 * after it, in bands of pooled rows (rk_conv.c).
 *
 * It must give exactly the bits of the two kernels apart (conv2d_f32 as
 * rlxc lowers a stem, method 2, then pool_nd), whatever the band height (1
 * pooled row: every band recomputes rows of the last; several; one band for
 * the whole plane), the convolution's stride and pads, the pooling's window,
 * stride, pads and ceil mode, a batch, output channels not a multiple of 16
 * and the thread count; and the pair must agree with a double-precision
 * definition. NaN and inf inputs must reach the same outputs. Too little
 * scratch is refused.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rlx_scalar.h"

#define OUT(...) ((void *const[]){__VA_ARGS__})

static uint32_t rng_state = 41u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, c, h, w, oc, k, s, pad;   /* the convolution: k x k, stride s, pads pad */
    int64_t pk, ps, ppad, ceil, rows;    /* the pooling */
    int act, bias;
} Case;

/* ONNX's output size of a window (ceil mode: the last window starts inside
 * the input or its begin pad) */
static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t pad, int64_t ceil_mode) {
    int64_t span = in + 2 * pad - k, out = span / s + 1;
    if (ceil_mode && span % s) {
        out++;
        if ((out - 1) * s >= in + pad) out--;
    }
    return out;
}

static void run_case(const Case *k) {
    int64_t oh = out_size(k->h, k->k, k->s, k->pad, 0), ow = out_size(k->w, k->k, k->s, k->pad, 0);
    int64_t poh = out_size(oh, k->pk, k->ps, k->ppad, k->ceil), pow = out_size(ow, k->pk, k->ps, k->ppad, k->ceil);
    int64_t kdim = k->c * k->k * k->k;
    size_t nx = (size_t)(k->n * k->c * k->h * k->w), nm = (size_t)(k->n * k->oc * oh * ow);
    size_t ny = (size_t)(k->n * k->oc * poh * pow);
    float *x = malloc(nx * 4), *wt = malloc((size_t)(k->oc * kdim) * 4), *b = malloc((size_t)k->oc * 4);
    for (size_t i = 0; i < nx; i++) x[i] = frand() * 2;
    for (int64_t i = 0; i < k->oc * kdim; i++) wt[i] = frand() * 0.5f;
    for (int64_t i = 0; i < k->oc; i++) b[i] = i % 4 ? frand() : 0.0f;
    x[nx / 3] = NAN;
    x[nx - 2] = INFINITY;

    /* the definition in double */
    double *mid = malloc(nm * 8), *want = malloc(ny * 8);
    for (int64_t bi = 0; bi < k->n; bi++)
        for (int64_t o = 0; o < k->oc; o++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double s = k->bias ? b[o] : 0;
                    for (int64_t ci = 0; ci < k->c; ci++)
                        for (int64_t ky = 0; ky < k->k; ky++)
                            for (int64_t kx = 0; kx < k->k; kx++) {
                                int64_t iy = oy * k->s - k->pad + ky, ix = ox * k->s - k->pad + kx;
                                if (iy >= 0 && iy < k->h && ix >= 0 && ix < k->w)
                                    s += (double)wt[((o * k->c + ci) * k->k + ky) * k->k + kx] *
                                         x[((bi * k->c + ci) * k->h + iy) * k->w + ix];
                            }
                    if (k->act == RS_ACT_RELU && !(s > 0) && !isnan(s)) s = 0;
                    mid[((bi * k->oc + o) * oh + oy) * ow + ox] = s;
                }
    for (int64_t q = 0; q < k->n * k->oc; q++)
        for (int64_t py = 0; py < poh; py++)
            for (int64_t px = 0; px < pow; px++) {
                double m = -INFINITY;
                int nan = 0;
                for (int64_t ty = 0; ty < k->pk; ty++)
                    for (int64_t tx = 0; tx < k->pk; tx++) {
                        int64_t iy = py * k->ps - k->ppad + ty, ix = px * k->ps - k->ppad + tx;
                        if (iy < 0 || iy >= oh || ix < 0 || ix >= ow) continue;
                        double v = mid[(q * oh + iy) * ow + ix];
                        nan |= isnan(v);
                        if (v > m) m = v;
                    }
                want[(q * poh + py) * pow + px] = nan ? NAN : m;
            }

    /* the two kernels apart, as rlxc lowers them without the fusion */
    rk_conv2d_f32_params cp = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .oc = k->oc, .oh = oh, .ow = ow,
                               .kh = k->k, .kw = k->k, .sh = k->s, .sw = k->s, .pt = k->pad, .pl = k->pad, .dh = 1,
                               .dw = 1, .group = 1, .has_bias = k->bias, .act = k->act, .method = 2,
                               .nblk = oh * ow};
    rk_pool_nd_params pp;
    memset(&pp, 0, sizeof pp);
    pp.dtype = RLX_F32, pp.op = 0, pp.nc = k->n * k->oc;
    pp.in_dims[0] = 1, pp.in_dims[1] = oh, pp.in_dims[2] = ow;
    pp.out_dims[0] = 1, pp.out_dims[1] = poh, pp.out_dims[2] = pow;
    pp.k[0] = 1, pp.k[1] = k->pk, pp.k[2] = k->pk;
    pp.s[0] = 1, pp.s[1] = k->ps, pp.s[2] = k->ps;
    pp.d[0] = pp.d[1] = pp.d[2] = 1;
    pp.pb[1] = pp.pb[2] = k->ppad;
    pp.pe[1] = (poh - 1) * k->ps + k->pk - oh - k->ppad, pp.pe[2] = (pow - 1) * k->ps + k->pk - ow - k->ppad;
    size_t per = rk_conv2d_scratch(k->oc, kdim, cp.nblk, 0);
    size_t per2 = rk_conv_pool_scratch(k->c, k->w, k->oc, ow, k->k, k->k, k->s, k->pk, k->ps, k->rows);
    if (per2 > per) per = per2;
    uint8_t *scratch = malloc(per * 3);
    rk_ctx one = {1, NULL, scratch, per};
    float *m = malloc(nm * 4), *apart = malloc(ny * 4), *fused = malloc(ny * 4);
    const void *ins[3] = {x, wt, k->bias ? (const void *)b : NULL};
    cr_assert_eq(rk_conv2d_f32(&one, &cp, ins, OUT(m)), 0);
    cr_assert_eq(rk_pool_nd(&one, &pp, (const void *const[]){m}, OUT(apart)), 0);
    double worst = 0;
    size_t special = 0;
    for (size_t i = 0; i < ny; i++) {
        if (!isfinite(want[i])) {
            special += isnan(want[i]) ? !isnan(apart[i]) : (double)apart[i] != want[i];
            continue;
        }
        double err = fabs((double)apart[i] - want[i]) / (1 + fabs(want[i]));
        if (err > worst) worst = err;
    }
    cr_expect_lt(worst, 1e-5, "apart: worst error %g", worst);
    cr_expect_eq(special, 0, "apart: %zu NaN/inf outputs differ from the definition", special);

    rk_conv_pool_f32_params p = {.n = k->n, .c = k->c, .h = k->h, .w = k->w, .oc = k->oc, .oh = oh, .ow = ow,
                                 .kh = k->k, .kw = k->k, .sh = k->s, .sw = k->s, .pt = k->pad, .pl = k->pad,
                                 .has_bias = k->bias, .act = k->act, .pkh = k->pk, .pkw = k->pk, .psh = k->ps,
                                 .psw = k->ps, .ppt = k->ppad, .ppl = k->ppad, .poh = poh, .pow = pow,
                                 .rows = k->rows};
    rk_pool *pool = NULL;
    cr_assert_eq(rk_pool_new(3, &pool), 0);
    for (int nt = 1; nt <= 3; nt++) {
        rk_ctx ctx = {nt, nt > 1 ? pool : NULL, scratch, per};
        for (size_t i = 0; i < ny; i++) fused[i] = 7.0f;
        cr_assert_eq(rk_conv_pool_f32(&ctx, &p, ins, OUT(fused)), 0);
        size_t bad = ny;
        for (size_t i = 0; i < ny && bad == ny; i++)
            if (memcmp(&fused[i], &apart[i], 4)) bad = i;
        cr_expect_eq(bad, ny, "conv %lldx%lld/%lld pad %lld, pool %lld/%lld pad %lld, rows=%lld threads=%d: element %zu is %.9g, apart %.9g",
                     (long long)k->k, (long long)k->k, (long long)k->s, (long long)k->pad, (long long)k->pk,
                     (long long)k->ps, (long long)k->ppad, (long long)k->rows, nt, bad,
                     bad < ny ? (double)fused[bad] : 0.0, bad < ny ? (double)apart[bad] : 0.0);
    }
    rk_ctx small = {1, NULL, scratch, per2 - 1};
    cr_expect_eq(rk_conv_pool_f32(&small, &p, ins, OUT(fused)), RLX_E_ARG);
    rk_conv_pool_f32_params bad = p;
    bad.rows = 0;
    cr_expect_eq(rk_conv_pool_f32(&one, &bad, ins, OUT(fused)), RLX_E_ARG);
    rk_pool_free(pool);
    free(x), free(wt), free(b), free(mid), free(want), free(scratch), free(m), free(apart), free(fused);
}

/* SqueezeNet 1.1's stem and pool (3x3/2 both, no pads, ceil mode), smaller */
Test(conv_pool, squeezenet_stem_bands_of_two) {
    Case k = {.n = 1, .c = 3, .h = 37, .w = 41, .oc = 32, .k = 3, .s = 2, .pad = 0, .pk = 3, .ps = 2, .ppad = 0,
              .ceil = 1, .rows = 2, .act = RS_ACT_RELU, .bias = 1};
    run_case(&k);
}

Test(conv_pool, one_row_bands_pads_batch) {
    Case k = {.n = 2, .c = 3, .h = 30, .w = 35, .oc = 16, .k = 3, .s = 2, .pad = 1, .pk = 3, .ps = 2, .ppad = 1,
              .ceil = 0, .rows = 1, .act = RS_ACT_NONE, .bias = 0};
    run_case(&k);
}

Test(conv_pool, stride1_stem_2x2_pool_uneven_bands) {
    Case k = {.n = 1, .c = 1, .h = 21, .w = 26, .oc = 16, .k = 3, .s = 1, .pad = 1, .pk = 2, .ps = 2, .ppad = 0,
              .ceil = 0, .rows = 3, .act = RS_ACT_RELU, .bias = 1};
    run_case(&k);
}

/* ResNet's 7x7/2 stem (pads 3) and 3x3/2 pool (pads 1); one band whole */
Test(conv_pool, resnet_stem_one_band) {
    Case k = {.n = 1, .c = 4, .h = 24, .w = 29, .oc = 16, .k = 7, .s = 2, .pad = 3, .pk = 3, .ps = 2, .ppad = 1,
              .ceil = 0, .rows = 64, .act = RS_ACT_RELU, .bias = 1};
    run_case(&k);
}

/* output channels not a multiple of 16: the convolution's GEMM path */
Test(conv_pool, twenty_channels_overlapping_pool) {
    Case k = {.n = 1, .c = 3, .h = 19, .w = 23, .oc = 20, .k = 3, .s = 2, .pad = 1, .pk = 3, .ps = 1, .ppad = 1,
              .ceil = 0, .rows = 4, .act = RS_ACT_RELU, .bias = 1};
    run_case(&k);
}
