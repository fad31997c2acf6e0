/* test_signal.c - the signal kernels (runtime_min/rk_signal.c) and the
 * inference of DFT, STFT, the windows and MelWeightMatrix (ext_signal.c).
 *
 * Kernel expectations are worked out by hand in the comments from the
 * definitions: X[m] = sum_k x[k] e^(-2 pi i m k / n) (the inverse with e^+
 * and 1/n), w[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N). Power-of-two
 * lengths exercise the FFT, others the direct sum. The mel matrix is checked
 * on a degenerate band worked out by hand and on the ONNX node test's case,
 * whose values come from the numpy reference in onnx/backend/test/case/node/
 * melweightmatrix.py. The inference tests build small graphs with the IR API
 * and check shapes and the one-line error messages, including the graph
 * input a non-constant shape input depends on.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"
#include "rk_signal.h"
#define TG_PASSES (TG_CHECK_ATTRS | TG_LEGALIZE)
#include "testgraph.h"

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

static double scratch_mem[6 * 64];
static rk_ctx ctx = {1, NULL, (uint8_t *)scratch_mem, sizeof scratch_mem};

static void expect_floats(const float *got, const float *want, int n, float tol) {
    for (int i = 0; i < n; i++) {
        float scale = fabsf(want[i]) > 1 ? fabsf(want[i]) : 1;
        cr_expect(fabsf(got[i] - want[i]) <= tol * scale, "element %d: got %.9g, want %.9g", i, (double)got[i],
                  (double)want[i]);
    }
}

static rk_dft_params dft(int64_t outer, int64_t len, int64_t inner, int64_t complex_in, int64_t n, int64_t nout,
                         int64_t inverse) {
    rk_dft_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.outer = outer;
    p.len = len;
    p.inner = inner;
    p.complex_in = complex_in;
    p.n = n;
    p.nout = nout;
    p.inverse = inverse;
    return p;
}

/* ---- DFT ---- */

Test(signal_kernel, dft_4_point_by_hand) {
    /* x = 1 2 3 4, w = e^(-i pi/2) = -i:
     * X0 = 10; X1 = 1 - 2i - 3 + 4i = -2 + 2i; X2 = 1 - 2 + 3 - 4 = -2; X3 = -2 - 2i */
    float x[4] = {1, 2, 3, 4}, y[8];
    rk_dft_params p = dft(1, 4, 1, 0, 4, 4, 0);
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){10, 0, -2, 2, -2, 0, -2, -2}, 8, 1e-6f);
    /* onesided: bins 0..n/2 */
    float h[6];
    p.nout = 3;
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(h)), RLX_OK);
    expect_floats(h, (float[]){10, 0, -2, 2, -2, 0}, 6, 1e-6f);
    /* the inverse of X (complex input) is x again: 1/4 sum X[m] e^(+i pi m k / 2) */
    float back[8];
    p = dft(1, 4, 1, 1, 4, 4, 1);
    cr_assert_eq(rk_dft(&ctx, &p, IN(y), OUT(back)), RLX_OK);
    expect_floats(back, (float[]){1, 0, 2, 0, 3, 0, 4, 0}, 8, 1e-6f);
}

Test(signal_kernel, dft_3_point_direct_sum) {
    /* w = e^(-2 pi i / 3) = -1/2 - i sqrt(3)/2, w^2 = -1/2 + i sqrt(3)/2:
     * X0 = 6; X1 = 1 + 2w + 3w^2 = -1.5 + i sqrt(3)/2; X2 = conj(X1) (real input) */
    float x[3] = {1, 2, 3}, y[6], back[6];
    rk_dft_params p = dft(1, 3, 1, 0, 3, 3, 0);
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){6, 0, -1.5f, 0.866025404f, -1.5f, -0.866025404f}, 6, 1e-6f);
    p = dft(1, 3, 1, 1, 3, 3, 1);
    cr_assert_eq(rk_dft(&ctx, &p, IN(y), OUT(back)), RLX_OK);
    expect_floats(back, (float[]){1, 0, 2, 0, 3, 0}, 6, 1e-6f);
}

Test(signal_kernel, dft_8_point_impulse) {
    /* x = delta at k = 1: X[m] = e^(-2 pi i m / 8) = cos(pi m / 4) - i sin(pi m / 4) */
    float x[8] = {0, 1, 0, 0, 0, 0, 0, 0}, y[16], want[16];
    for (int m = 0; m < 8; m++) {
        want[2 * m] = (float)cos(M_PI * m / 4);
        want[2 * m + 1] = (float)-sin(M_PI * m / 4);
    }
    rk_dft_params p = dft(1, 8, 1, 0, 8, 8, 0);
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    expect_floats(y, want, 16, 1e-6f);
}

Test(signal_kernel, dft_length_pads_and_truncates) {
    /* x = 1 2 zero-padded to 4: X = 3, 1 - 2i, -1, 1 + 2i */
    float x[4] = {1, 2, 30, 40}, y[8];
    rk_dft_params p = dft(1, 2, 1, 0, 4, 4, 0);
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){3, 0, 1, -2, -1, 0, 1, 2}, 8, 1e-6f);
    /* x = 1 2 30 40 truncated to 2: X = 3, -1 */
    p = dft(1, 4, 1, 0, 2, 2, 0);
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){3, 0, -1, 0}, 4, 1e-6f);
}

Test(signal_kernel, dft_axis_with_inner_and_complex) {
    /* input (1, 2, 2, 1) = [[1, 2], [3, 4]], DFT along axis 1: column 0 is (1, 3) -> (4, -2),
     * column 1 is (2, 4) -> (6, -2); output (1, 2, 2, 2) */
    float x[4] = {1, 2, 3, 4}, y[8];
    rk_dft_params p = dft(1, 2, 2, 0, 2, 2, 0);
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){4, 0, 6, 0, -2, 0, -2, 0}, 8, 1e-6f);
    /* complex x = (i, 1): X0 = 1 + i, X1 = i - 1 */
    float c[4] = {0, 1, 1, 0}, z[4];
    p = dft(1, 2, 1, 1, 2, 2, 0);
    cr_assert_eq(rk_dft(&ctx, &p, IN(c), OUT(z)), RLX_OK);
    expect_floats(z, (float[]){1, 1, -1, 1}, 4, 1e-6f);
}

Test(signal_kernel, dft_f64_and_scratch_check) {
    double x[4] = {1, 2, 3, 4}, y[8];
    rk_dft_params p = dft(1, 4, 1, 0, 4, 4, 0);
    p.dtype = RLX_F64;
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_OK);
    double want[8] = {10, 0, -2, 2, -2, 0, -2, -2};
    for (int i = 0; i < 8; i++) cr_expect(fabs(y[i] - want[i]) < 1e-12, "element %d: %g", i, y[i]);
    /* 65 points need more scratch than the context has */
    rk_ctx small = ctx;
    small.scratch_per_thread = (size_t)rk_dft_scratch(64);
    p = dft(1, 65, 1, 0, 65, 65, 0);
    cr_assert_eq(rk_dft(&small, &p, IN(x), OUT(y)), RLX_E_ARG);
    p = dft(1, 4, 1, 0, 4, 4, 0);
    p.dtype = RLX_I32;
    cr_assert_eq(rk_dft(&ctx, &p, IN(x), OUT(y)), RLX_E_ARG);
}

/* ---- STFT ---- */

Test(signal_kernel, stft_frames_by_hand) {
    /* signal 1..8, frames of 4 every 2: (1 2 3 4), (3 4 5 6), (5 6 7 8). For a frame
     * (a b c d): X0 = a+b+c+d, X1 = (a-c) + i(d-b), X2 = a-b+c-d; onesided keeps 3 bins */
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[18];
    rk_stft_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.batch = 1;
    p.len = 8;
    p.frames = 3;
    p.step = 2;
    p.flen = 4;
    p.nbins = 3;
    cr_assert_eq(rk_stft(&ctx, &p, IN(x, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){10, 0, -2, 2, -2, 0, 18, 0, -2, 2, -2, 0, 26, 0, -2, 2, -2, 0}, 18, 1e-6f);
    /* window (0 1 1 0): frame 0 becomes (0 2 3 0): X0 = 5, X1 = -3 - 2i, X2 = 1 */
    float w[4] = {0, 1, 1, 0};
    p.has_window = 1;
    cr_assert_eq(rk_stft(&ctx, &p, IN(x, w), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){5, 0, -3, -2, 1, 0}, 6, 1e-6f);
    /* a fourth frame would end past the signal */
    p.frames = 4;
    cr_assert_eq(rk_stft(&ctx, &p, IN(x, w), OUT(y)), RLX_E_ARG);
}

/* ---- windows ---- */

static void window(int64_t kind, int64_t size, int64_t periodic, int64_t dtype, void *out) {
    rk_window_params p = {kind, size, periodic, dtype};
    cr_assert_eq(rk_window(&ctx, &p, IN(NULL), OUT(out)), RLX_OK);
}

Test(signal_kernel, windows_by_hand) {
    float y[4];
    /* Hann, periodic, N = 4: 0.5 - 0.5 cos(pi i / 2) = 0, 0.5, 1, 0.5 */
    window(0, 4, 1, RLX_F32, y);
    expect_floats(y, (float[]){0, 0.5f, 1, 0.5f}, 4, 1e-7f);
    /* Hann, symmetric, N = 3: cos(2 pi / 3) = -1/2 -> 0, 0.75, 0.75, 0 */
    window(0, 4, 0, RLX_F32, y);
    expect_floats(y, (float[]){0, 0.75f, 0.75f, 0}, 4, 1e-7f);
    /* Hamming, periodic: 25/46 - 21/46 cos(pi i / 2) = 4/46, 25/46, 1, 25/46 */
    window(1, 4, 1, RLX_F32, y);
    expect_floats(y, (float[]){4.0f / 46, 25.0f / 46, 1, 25.0f / 46}, 4, 1e-7f);
    /* Blackman, periodic: 0.42 - 0.5 cos(pi i / 2) + 0.08 cos(pi i) = 0, 0.34, 1, 0.34 */
    window(2, 4, 1, RLX_F32, y);
    expect_floats(y, (float[]){0, 0.34f, 1, 0.34f}, 4, 1e-7f);
    /* one symmetric point is the peak, not 0/0 */
    window(0, 1, 0, RLX_F32, y);
    expect_floats(y, (float[]){1}, 1, 0);
}

Test(signal_kernel, window_output_dtypes) {
    /* integers truncate: Hann periodic 4 -> 0, 0, 1, 0 */
    int32_t yi[4];
    window(0, 4, 1, RLX_I32, yi);
    cr_expect(yi[0] == 0 && yi[1] == 0 && yi[2] == 1 && yi[3] == 0, "%d %d %d %d", yi[0], yi[1], yi[2], yi[3]);
    double yd[4];
    window(1, 4, 1, RLX_F64, yd);
    cr_expect(fabs(yd[0] - 4.0 / 46) < 1e-15 && fabs(yd[1] - 25.0 / 46) < 1e-15, "%.17g %.17g", yd[0], yd[1]);
    uint16_t yh[4];
    window(0, 4, 1, RLX_F16, yh);
    cr_expect(rlx_f16_to_f32(yh[1]) == 0.5f && rlx_f16_to_f32(yh[2]) == 1.0f);
}

/* ---- MelWeightMatrix ---- */

static rk_mel_weight_matrix_params mel(int64_t mels, int64_t dft_length) {
    rk_mel_weight_matrix_params p = {mels, dft_length, RLX_I32, RLX_F32, RLX_F32};
    return p;
}

Test(signal_kernel, mel_degenerate_band) {
    /* lower = upper = 0: every edge is bin 0, so left = center = 0 -> out[0][0] = 1, no falling side */
    int32_t rate = 8000;
    float lo = 0, hi = 0, y[5];
    rk_mel_weight_matrix_params p = mel(1, 8);
    cr_assert_eq(rk_mel_weight_matrix(&ctx, &p, IN(&rate, &lo, &hi), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 0, 0, 0, 0}, 5, 0);
    /* an upper edge far above Nyquist puts the bands outside the 5 bins */
    hi = 1e6f;
    cr_assert_eq(rk_mel_weight_matrix(&ctx, &p, IN(&rate, &lo, &hi), OUT(y)), RLX_E_ARG);
    rate = 0;
    cr_assert_eq(rk_mel_weight_matrix(&ctx, &p, IN(&rate, &lo, &hi), OUT(y)), RLX_E_ARG);
}

Test(signal_kernel, mel_onnx_reference_case) {
    /* num_mel_bins 8, dft_length 16, rate 8192, edges 0 and 4096: the numpy reference gives
     * the bin edges 0 0 0 1 1 2 3 4 5 6 (band b spans edges b, b+1, b+2). Bands 0 and 1
     * have left = center = 0 -> out[0][b] = 1; band 2 (0 1 1) rises to out[1][2] = 1
     * (out[0][2] = 0); band 3 (1 1 2) -> out[1][3] = 1; bands 4..7 rise and fall by one
     * bin around centers 2..5 -> out[c][b] = 1. */
    int32_t rate = 8192;
    float lo = 0, hi = 4096, y[9 * 8];
    rk_mel_weight_matrix_params p = mel(8, 16);
    cr_assert_eq(rk_mel_weight_matrix(&ctx, &p, IN(&rate, &lo, &hi), OUT(y)), RLX_OK);
    float want[9 * 8] = {
        1, 1, 0, 0, 0, 0, 0, 0,
        0, 0, 1, 1, 0, 0, 0, 0,
        0, 0, 0, 0, 1, 0, 0, 0,
        0, 0, 0, 0, 0, 1, 0, 0,
        0, 0, 0, 0, 0, 0, 1, 0,
        0, 0, 0, 0, 0, 0, 0, 1,
    };
    expect_floats(y, want, 9 * 8, 0);
}

/* ---- inference ---- */

static int nvalues;

static int scalar_weight(const char *name, int64_t value) {
    int v = rlx_value_add(g, name);
    g->v[v].dtype = RLX_I64;
    g->v[v].rank = 0;
    g->v[v].flags |= RLX_V_WEIGHT;
    int64_t *data = rlx_alloc(sizeof(int64_t));
    *data = value;
    g->v[v].data = (const uint8_t *)data;
    return v;
}

/* A node over the given inputs (its attributes are added next, then checked
 * by run); returns its output. */
static int node(const char *op, int nin, const int *in, int is_output) {
    int out = rlx_value_add(g, rlx_fmt("out%d", nvalues++));
    if (is_output) {
        graph_output(out);
    }
    rlx_node_add(g, rlx_fmt("n%d", nvalues), (RlxOp)rlx_op_from_name(op), nin, in, 1, &out);
    return out;
}

/* An int attribute of the node added last. */
static void set_attr(const char *name, int64_t v) { rlx_attr_add(g, g->nn - 1, name, RLX_A_INT)->i = v; }

Test(signal_infer, shapes) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 4, (int64_t[]){2, 6, 5, 1});
    int full = node("DFT", 1, &x, 1);
    int len = scalar_weight("len", 9);
    int half = node("DFT", 2, (int[]){x, len}, 1);
    set_attr("onesided", 1);
    set_attr("axis", -2);   /* axis 2 */
    int sig = input("sig", RLX_F64, 3, (int64_t[]){1, 100, 1});
    int stft = node("STFT", 4, (int[]){sig, scalar_weight("step", 10), -1, scalar_weight("fl", 16)}, 1);
    int win = node("HammingWindow", 1, (int[]){scalar_weight("size", 7)}, 1);
    rlx_attr_add(g, g->nn - 1, "output_datatype", RLX_A_DTYPE)->i = RLX_F64;
    int mel = node("MelWeightMatrix", 5,
                   (int[]){scalar_weight("mels", 4), scalar_weight("dftl", 10), input("sr", RLX_I32, 0, NULL),
                           input("lo", RLX_F32, 0, NULL), input("hi", RLX_F32, 0, NULL)},
                   1);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(full, RLX_F32, 4, (int64_t[]){2, 6, 5, 2});
    shape_is(half, RLX_F32, 4, (int64_t[]){2, 6, 5, 2});   /* 9 / 2 + 1 = 5 */
    shape_is(stft, RLX_F64, 4, (int64_t[]){1, 9, 9, 2});   /* (100 - 16) / 10 + 1 = 9 frames */
    shape_is(win, RLX_F64, 1, (int64_t[]){7});
    shape_is(mel, RLX_F32, 2, (int64_t[]){6, 4});
}

Test(signal_infer, errors) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 3, (int64_t[]){1, 8, 2});
    node("DFT", 1, &x, 1);
    set_attr("onesided", 1);
    fails_with("onesided needs a real input");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 3, (int64_t[]){1, 8, 3});
    node("DFT", 1, &x, 1);
    fails_with("must end in a dimension of 1 (real) or 2 (complex), not 3");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 3, (int64_t[]){1, 8, 1});
    node("DFT", 1, &x, 1);
    set_attr("axis", 2);
    fails_with("axis 2 is outside [-3, 1]");

    /* a window size computed from a graph input names that input */
    g = rlx_graph_new("t.rlxg");
    int size = input("size", RLX_I64, 0, NULL);
    int one = scalar_weight("one", 1);
    int sum = node("Add", 2, (int[]){size, one}, 0);
    node("HannWindow", 1, &sum, 1);
    fails_with("must be a constant (weight); it depends on graph input 'size'");

    g = rlx_graph_new("t.rlxg");
    int sig = input("sig", RLX_F32, 3, (int64_t[]){1, 10, 1});
    node("STFT", 4, (int[]){sig, scalar_weight("step", 1), -1, scalar_weight("fl", 11)}, 1);
    fails_with("frame_length 11 is longer than the signal (10 samples)");

    g = rlx_graph_new("t.rlxg");
    sig = input("sig", RLX_F32, 3, (int64_t[]){1, 10, 1});
    int w = input("w", RLX_F32, 1, (int64_t[]){4});
    node("STFT", 4, (int[]){sig, scalar_weight("step", 1), w, scalar_weight("fl", 5)}, 1);
    fails_with("frame_length 5 differs from the window's length 4");
}
