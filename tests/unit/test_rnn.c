/* test_rnn.c - the rnn and quant families: kernels (runtime_min/rk_rnn.c,
 * rk_quant.c) and inference (ext_rnn.c, ext_quant.c).
 *
 * Kernel expectations are worked out by hand in the comments from the ONNX
 * equations, on cells of one or two hidden units where every gate can be
 * followed: weights of 0 make sigmoid gates exactly 1/2, so only a few terms
 * remain. The inference tests build small graphs with the IR API and check
 * the shapes, the outputs created for state, and the one-line errors.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"
#include "rk_rnn.h"
#define TG_PASSES (TG_CHECK_ATTRS | TG_LEGALIZE)
#include "testgraph.h"

static rk_ctx ctx = {1};

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

static void expect_floats(const float *got, const float *want, int n, float tol) {
    for (int i = 0; i < n; i++)
        cr_expect(fabsf(got[i] - want[i]) <= tol, "element %d: got %.9g, want %.9g", i, (double)got[i],
                  (double)want[i]);
}

static rk_rnn_params cell(int64_t kind, int64_t seq, int64_t batch, int64_t input, int64_t hidden) {
    rk_rnn_params p;
    memset(&p, 0, sizeof p);
    p.cell = kind;
    p.dtype = RLX_F32;
    p.seq = seq;
    p.batch = batch;
    p.input = input;
    p.hidden = hidden;
    /* ONNX defaults: RNN tanh; GRU sigmoid, tanh; LSTM sigmoid, tanh, tanh */
    int64_t defaults[3][3] = {{RK_ACT_TANH}, {RK_ACT_SIGMOID, RK_ACT_TANH}, {RK_ACT_SIGMOID, RK_ACT_TANH, RK_ACT_TANH}};
    for (int k = 0; k < 6; k++) p.acts[k] = defaults[kind][k % (kind + 1)];
    return p;
}

/* ---- RNN ---- */

Test(rnn_kernel, relu_forward_and_reverse) {
    /* h_t = relu(2 x_t + 0.5 h_{t-1} + 1), x = [1, -3]:
     * forward: h0 = relu(3) = 3, h1 = relu(-6 + 1.5 + 1) = 0; Y_h = 0.
     * reverse: t=1 first: relu(-6 + 0 + 1) = 0, then t=0: relu(2 + 0 + 1) = 3; Y_h = 3 */
    float x[2] = {1, -3}, w[1] = {2}, r[1] = {0.5f}, b[2] = {1, 0};
    float y[2], yh[1];
    rk_rnn_params p = cell(0, 2, 1, 1, 1);
    p.acts[0] = RK_ACT_RELU;
    p.has_b = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, NULL, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
    expect_floats(y, (float[]){3, 0}, 2, 0);
    expect_floats(yh, (float[]){0}, 1, 0);
    p.direction = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, NULL, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
    expect_floats(y, (float[]){3, 0}, 2, 0);
    expect_floats(yh, (float[]){3}, 1, 0);
}

Test(rnn_kernel, bidirectional_sequence_lens_and_layout) {
    /* Affine(alpha 1, beta 0) = identity, h_t = x_t + h_{t-1} (W = R = 1):
     * a running sum. Batch 0 has x = [1, 2, 4] (len 3), batch 1 x = [8, 16, 32]
     * with len 2. Forward sums: b0 1, 3, 7; b1 8, 24, then 0 (past len).
     * Reverse sums over the valid part: b0 t2 = 4, t1 = 6, t0 = 7; b1 t1 = 16,
     * t0 = 24, t2 = 0. Y_h: forward = last valid (7, 24), reverse = step 0 (7, 24).
     * Layout 0: X [seq, batch, 1], Y [seq, dirs, batch, 1], Y_h [dirs, batch, 1]. */
    float x[6] = {1, 8, 2, 16, 4, 32}, w[2] = {1, 1}, r[2] = {1, 1};
    int32_t lens[2] = {3, 2};
    float y[12], yh[4];
    rk_rnn_params p = cell(0, 3, 2, 1, 1);
    p.direction = 2;
    p.has_seq_lens = 1;
    p.seq_lens_dtype = RLX_I32;
    p.acts[0] = p.acts[1] = RK_ACT_AFFINE;
    p.alpha0 = p.alpha1 = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, NULL, lens, NULL, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
    /* [t][dir][batch] */
    expect_floats(y, (float[]){1, 8, 7, 24, 3, 24, 6, 16, 7, 0, 4, 0}, 12, 0);
    expect_floats(yh, (float[]){7, 24, 7, 24}, 4, 0);
    /* layout 1: X [batch, seq, 1], Y [batch, seq, dirs, 1], Y_h [batch, dirs, 1] */
    float xb[6] = {1, 2, 4, 8, 16, 32};
    p.layout = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(xb, w, r, NULL, lens, NULL, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
    expect_floats(y, (float[]){1, 7, 3, 6, 7, 4, 8, 24, 24, 16, 0, 0}, 12, 0);
    expect_floats(yh, (float[]){7, 7, 24, 24}, 4, 0);
    /* a length above seq is a run-time error */
    lens[1] = 4;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(xb, w, r, NULL, lens, NULL, NULL, NULL), OUT(y, yh, NULL)), RLX_E_RANGE);
}

Test(rnn_kernel, empty_sequence_gives_zero_state) {
    /* len 0: Y is all zero and so is Y_h, even with an initial state */
    float x[1] = {5}, w[1] = {1}, r[1] = {1}, h0[1] = {9};
    int64_t lens[1] = {0};
    float y[1] = {-1}, yh[1] = {-1};
    rk_rnn_params p = cell(0, 1, 1, 1, 1);
    p.has_seq_lens = 1;
    p.seq_lens_dtype = RLX_I64;
    p.has_h0 = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, NULL, lens, h0, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
    expect_floats(y, (float[]){0}, 1, 0);
    expect_floats(yh, (float[]){0}, 1, 0);
}

/* ---- GRU ---- */

Test(rnn_kernel, gru_linear_before_reset) {
    /* W = 0, Rz = Rr = 0, Rh = 2, Rbh = 1, h0 = 1: z = r = sigmoid(0) = 1/2.
     * lbr 0: h~ = tanh(Rh (r h) + Rbh) = tanh(2); lbr 1: h~ = tanh(r (Rh h + Rbh)) = tanh(1.5).
     * H = (1 - z) h~ + z h0 = h~ / 2 + 1/2. */
    float x[1] = {7}, w[3] = {0, 0, 0}, r[3] = {0, 0, 2}, b[6] = {0, 0, 0, 0, 0, 1}, h0[1] = {1};
    float y[1], yh[1];
    rk_rnn_params p = cell(1, 1, 1, 1, 1);
    p.has_b = 1;
    p.has_h0 = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, h0, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
    float want0 = tanhf(2.0f) / 2 + 0.5f;
    expect_floats(y, &want0, 1, 1e-6f);
    expect_floats(yh, &want0, 1, 1e-6f);
    p.linear_before_reset = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, h0, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
    float want1 = tanhf(1.5f) / 2 + 0.5f;
    expect_floats(y, &want1, 1, 1e-6f);
    expect_floats(yh, &want1, 1, 1e-6f);
}

/* ---- LSTM ---- */

Test(rnn_kernel, lstm_peepholes_input_forget_clip) {
    /* W = R = 0, Wb_c = 1, c0 = 2: pre-activations i = o = f = 0 -> 1/2,
     * c~ = tanh(1); C = f c0 + i c~ = 1 + tanh(1)/2; H = o tanh(C). */
    float x[1] = {3}, w[4] = {0}, r[4] = {0}, b[8] = {0, 0, 0, 1, 0, 0, 0, 0}, c0[1] = {2};
    float y[1], yh[1], yc[1];
    rk_rnn_params p = cell(2, 1, 1, 1, 1);
    p.has_b = 1;
    p.has_c0 = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, NULL, c0, NULL), OUT(y, yh, yc)), RLX_OK);
    float c = 1 + tanhf(1) / 2;
    expect_floats(yc, &c, 1, 1e-6f);
    float h = tanhf(c) / 2;
    expect_floats(y, &h, 1, 1e-6f);
    expect_floats(yh, &h, 1, 1e-6f);
    /* peepholes P = [i 0, o 1, f -1]: f = sigmoid(-c0) = sigmoid(-2), C = f 2 + tanh(1)/2,
     * then o = sigmoid(C) sees the new cell state */
    float pp[3] = {0, 1, -1};
    p.has_p = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, NULL, c0, pp), OUT(y, yh, yc)), RLX_OK);
    float f = 1 / (1 + expf(2)), cp = f * 2 + tanhf(1) / 2, hp = tanhf(cp) / (1 + expf(-cp));
    expect_floats(yc, &cp, 1, 1e-6f);
    expect_floats(y, &hp, 1, 1e-6f);
    /* input_forget: f = 1 - i = 1/2 whatever the peephole on f */
    p.input_forget = 1;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, NULL, c0, pp), OUT(y, yh, yc)), RLX_OK);
    expect_floats(yc, &c, 1, 1e-6f);
    /* clip 0.5 bounds every activation input: c~ = tanh(0.5), C = 1 + tanh(0.5)/2,
     * H = 1/2 tanh(clip(C)) = tanh(0.5)/2 */
    p.has_p = 0;
    p.input_forget = 0;
    p.has_clip = 1;
    p.clip = 0.5;
    cr_assert_eq(rk_rnn(&ctx, &p, IN(x, w, r, b, NULL, NULL, c0, NULL), OUT(y, yh, yc)), RLX_OK);
    float cc = 1 + tanhf(0.5f) / 2, hc = tanhf(0.5f) / 2;
    expect_floats(yc, &cc, 1, 1e-6f);
    expect_floats(y, &hc, 1, 1e-6f);
}

Test(rnn_kernel, activations_by_hand) {
    /* RNN with W = 1, R = 0, one step: Y = f(x) for each activation */
    struct { int64_t code; double alpha, beta; float x, want; } cases[] = {
        {RK_ACT_LEAKYRELU, 0.1, 0, -2, -0.2f},
        {RK_ACT_THRESHOLDEDRELU, 1.5, 0, 1.2f, 0},
        {RK_ACT_THRESHOLDEDRELU, 1.5, 0, 2, 2},
        {RK_ACT_HARDSIGMOID, 0.2, 0.5, 1, 0.7f},
        {RK_ACT_HARDSIGMOID, 0.2, 0.5, 5, 1},
        {RK_ACT_SCALEDTANH, 2, 0, 1, 0},          /* 2 tanh(0 * 1) */
        {RK_ACT_AFFINE, 3, -1, 2, 5},
        {RK_ACT_SOFTSIGN, 0, 0, -3, -0.75f},
        {RK_ACT_ELU, 2, 0, 3, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float w[1] = {1}, r[1] = {0}, y[1], yh[1];
        rk_rnn_params p = cell(0, 1, 1, 1, 1);
        p.acts[0] = cases[i].code;
        p.alpha0 = cases[i].alpha;
        p.beta0 = cases[i].beta;
        cr_assert_eq(rk_rnn(&ctx, &p, IN(&cases[i].x, w, r, NULL, NULL, NULL, NULL, NULL), OUT(y, yh, NULL)), RLX_OK);
        expect_floats(y, &cases[i].want, 1, 1e-6f);
    }
}

/* ---- Einsum ---- */

static rk_einsum_params einsum(int64_t nops, int64_t nlabels, int64_t nout) {
    rk_einsum_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.nops = nops;
    p.nlabels = nlabels;
    p.nout_labels = nout;
    return p;
}

Test(einsum_kernel, matmul_trace_and_ints) {
    /* ik = ij,jk with labels i k (output) j (summed): [[1,2],[3,4]] [[5,6],[7,8]] = [[19,22],[43,50]] */
    float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4];
    rk_einsum_params p = einsum(2, 3, 2);
    int64_t dims[3] = {2, 2, 2}, os[3] = {2, 1, 0}, sa[3] = {2, 0, 1}, sb[3] = {0, 1, 2};
    memcpy(p.dims, dims, sizeof dims);
    memcpy(p.ostride, os, sizeof os);
    memcpy(p.s0, sa, sizeof sa);
    memcpy(p.s1, sb, sizeof sb);
    cr_assert_eq(rk_einsum(&ctx, &p, IN(a, b), OUT(c)), RLX_OK);
    expect_floats(c, (float[]){19, 22, 43, 50}, 4, 0);
    /* 'ii' (trace): one summed label with stride 2 + 1 = 3: 1 + 4 */
    float t;
    p = einsum(1, 1, 0);
    p.dims[0] = 2;
    p.s0[0] = 3;
    cr_assert_eq(rk_einsum(&ctx, &p, IN(a), OUT(&t)), RLX_OK);
    expect_floats(&t, (float[]){5}, 1, 0);
    /* i64 'i,i' = 3*-2 + 4*5 = 14 */
    int64_t u[2] = {3, 4}, v[2] = {-2, 5}, s = 0;
    p = einsum(2, 1, 0);
    p.dtype = RLX_I64;
    p.dims[0] = 2;
    p.s0[0] = p.s1[0] = 1;
    cr_assert_eq(rk_einsum(&ctx, &p, IN(u, v), OUT(&s)), RLX_OK);
    cr_expect_eq(s, 14);
}

/* ---- quant ---- */

Test(quant_kernel, quantize_round_half_even_and_saturate) {
    /* x / 1 = 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0, -2.5 -> -2; + zp 3; 300 -> 255; -9 + 3 -> 0 */
    float x[7] = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 300, -9}, scale = 1;
    uint8_t zp = 3, y[7];
    rk_quantize_params p = {0, RLX_F32, RLX_U8, 1, 1, 7, 0, 1};
    cr_assert_eq(rk_quantize(&ctx, &p, IN(x, &scale, &zp), OUT(y)), RLX_OK);
    uint8_t want[7] = {3, 5, 5, 3, 1, 255, 0};
    for (int i = 0; i < 7; i++) cr_expect_eq(y[i], want[i], "element %d: got %d, want %d", i, y[i], want[i]);
}

Test(quant_kernel, dequantize_per_axis) {
    /* x (2, 2) int8 along axis 1: scale [0.5, 2], zp [1, -1]:
     * [[3, 3], [-1, 0]] -> [[(3-1)*0.5, (3+1)*2], [(-1-1)*0.5, (0+1)*2]] = [[1, 8], [-1, 2]] */
    int8_t x[4] = {3, 3, -1, 0}, zp[2] = {1, -1};
    float scale[2] = {0.5f, 2}, y[4];
    rk_quantize_params p = {1, RLX_I8, RLX_F32, 2, 2, 1, 1, 1};
    cr_assert_eq(rk_quantize(&ctx, &p, IN(x, scale, zp), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 8, -1, 2}, 4, 0);
}

Test(quant_kernel, dynamic_quantize) {
    /* x = [-1, 0, 1.55]: range [-1, 1.55], scale = 2.55 / 255 = 0.01, zp = round(1 / 0.01) = 100,
     * y = round(x / 0.01) + 100 = [0, 100, 255] */
    float x[3] = {-1, 0, 1.55f}, scale;
    uint8_t y[3], zp;
    rk_dynamic_quantize_params p = {3};
    cr_assert_eq(rk_dynamic_quantize(&ctx, &p, IN(x), OUT(y, &scale, &zp)), RLX_OK);
    expect_floats(&scale, (float[]){0.01f}, 1, 1e-8f);
    cr_expect_eq(zp, 100);
    cr_expect_eq(y[0], 0);
    cr_expect_eq(y[1], 100);
    cr_expect_eq(y[2], 255);
}

Test(quant_kernel, matmul_integer_and_qlinear) {
    /* A (1x2) u8 [10, 20] - zp 10 = [0, 10]; B (2x2) i8 [[1, 2], [3, 4]] - per-column zp [1, 0]
     * = [[0, 2], [2, 4]]; A B = [20, 40] */
    uint8_t a[2] = {10, 20}, azp = 10;
    int8_t b[4] = {1, 2, 3, 4}, bzp[2] = {1, 0};
    int32_t y[2];
    rk_matmul_integer_params p;
    memset(&p, 0, sizeof p);
    p.a_dtype = RLX_U8;
    p.b_dtype = RLX_I8;
    p.m = 1, p.n = 2, p.k = 2;
    p.a_zp_mode = 1;
    p.b_zp_mode = 2;
    cr_assert_eq(rk_matmul_integer(&ctx, &p, IN(a, b, &azp, bzp, NULL, NULL, NULL, NULL), OUT(y)), RLX_OK);
    cr_expect_eq(y[0], 20);
    cr_expect_eq(y[1], 40);
    /* requantized: 20 * (0.5 * 0.25 / 1) = 2.5 -> 2 (half to even) + 3 = 5; 40 * 0.125 = 5 + 3 = 8 */
    float sa = 0.5f, sb = 0.25f, sy = 1;
    uint8_t yzp = 3, q[2];
    p.qlinear = 1;
    p.y_dtype = RLX_U8;
    p.a_scale_mode = p.b_scale_mode = 1;
    cr_assert_eq(rk_matmul_integer(&ctx, &p, IN(a, b, &azp, bzp, &sa, &sb, &sy, &yzp), OUT(q)), RLX_OK);
    cr_expect_eq(q[0], 5);
    cr_expect_eq(q[1], 8);
}

Test(quant_kernel, conv_integer_padding_counts_zero) {
    /* x 1x1x2x2 u8 [[5, 6], [7, 8]], zp 5 -> [[0, 1], [2, 3]]; w 1x1x2x2 all 1, pads 1:
     * a 3x3 output of 2x2 window sums over the padded [[0,0,0,0],[0,0,1,0],[0,2,3,0],[0,0,0,0]]:
     * [[0, 1, 1], [2, 6, 4], [2, 5, 3]] */
    uint8_t x[4] = {5, 6, 7, 8}, xzp = 5, w[4] = {1, 1, 1, 1};
    int32_t y[9];
    rk_conv_integer_params p;
    memset(&p, 0, sizeof p);
    p.x_dtype = p.w_dtype = RLX_U8;
    p.n = p.c = p.oc = p.group = 1;
    p.h = p.w = 2;
    p.oh = p.ow = 3;
    p.kh = p.kw = 2;
    p.sh = p.sw = p.dh = p.dw = 1;
    p.pt = p.pl = 1;
    p.x_zp_mode = 1;
    cr_assert_eq(rk_conv_integer(&ctx, &p, IN(x, w, &xzp, NULL, NULL, NULL, NULL, NULL, NULL), OUT(y)), RLX_OK);
    int32_t want[9] = {0, 1, 1, 2, 6, 4, 2, 5, 3};
    for (int i = 0; i < 9; i++) cr_expect_eq(y[i], want[i], "element %d: got %d, want %d", i, y[i], want[i]);
}

/* ---- inference ---- */

static int node(const char *op, int nin, const int *in, int nout) {
    int outs[3];
    for (int k = 0; k < nout; k++) {
        outs[k] = rlx_value_add(g, rlx_fmt("%s.o%d", op, k));
        graph_output(outs[k]);
    }
    return rlx_node_add(g, "n", (RlxOp)rlx_op_from_name(op), nin, in, nout, outs);
}

Test(rnn_infer, lstm_gets_its_state_outputs) {
    /* bidirectional, layout 1: X [batch 2, seq 5, input 3], hidden 4 */
    g = rlx_graph_new("t.rlxg");
    int in[3] = {input("X", RLX_F32, 3, (int64_t[]){2, 5, 3}), input("W", RLX_F32, 3, (int64_t[]){2, 16, 3}),
                 input("R", RLX_F32, 3, (int64_t[]){2, 16, 4})};
    int n = node("LSTM", 3, in, 1);
    rlx_attr_add(g, n, "direction", RLX_A_STRING)->s = "bidirectional";
    rlx_attr_add(g, n, "layout", RLX_A_INT)->i = 1;
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    cr_assert_eq(g->n[n].nout, 3);
    shape_is(g->n[n].out[0], RLX_F32, 4, (int64_t[]){2, 5, 2, 4});
    shape_is(g->n[n].out[1], RLX_F32, 3, (int64_t[]){2, 2, 4});
    shape_is(g->n[n].out[2], RLX_F32, 3, (int64_t[]){2, 2, 4});
    cr_expect_str_eq(g->v[g->n[n].out[2]].name, "n.Y_c");
}

Test(rnn_infer, errors) {
    g = rlx_graph_new("t.rlxg");
    int in[3] = {input("X", RLX_F32, 3, (int64_t[]){5, 2, 3}), input("W", RLX_F32, 3, (int64_t[]){1, 9, 3}),
                 input("R", RLX_F32, 3, (int64_t[]){1, 12, 4})};
    node("GRU", 3, in, 2);
    fails_with("input W 'W' must have shape [1,12,3], not [1,9,3]");   /* R says hidden 4: 3 gates * 4 rows */
}

Test(rnn_infer, bad_attributes) {
    g = rlx_graph_new("t.rlxg");
    int in[3] = {input("X", RLX_F32, 3, (int64_t[]){5, 2, 3}), input("W", RLX_F32, 3, (int64_t[]){1, 4, 3}),
                 input("R", RLX_F32, 3, (int64_t[]){1, 4, 4})};
    int n = node("RNN", 3, in, 1);
    rlx_attr_add(g, n, "activations", RLX_A_STRING)->s = "Tanh,Swish";
    fails_with("unknown activation 'Swish'");

    g = rlx_graph_new("t.rlxg");
    in[0] = input("X", RLX_F32, 3, (int64_t[]){5, 2, 3});
    in[1] = input("W", RLX_F32, 3, (int64_t[]){1, 4, 3});
    in[2] = input("R", RLX_F32, 3, (int64_t[]){1, 4, 4});
    n = node("RNN", 3, in, 1);
    rlx_attr_add(g, n, "direction", RLX_A_STRING)->s = "sideways";
    fails_with("direction 'sideways' is not one of forward, reverse, bidirectional");
}

Test(rnn_infer, einsum_shapes_and_errors) {
    g = rlx_graph_new("t.rlxg");
    int in[2] = {input("a", RLX_F64, 3, (int64_t[]){7, 2, 3}), input("b", RLX_F64, 2, (int64_t[]){3, 4})};
    int n = node("Einsum", 2, in, 1);
    rlx_attr_add(g, n, "equation", RLX_A_STRING)->s = "...ij,jk";   /* implicit: ...ik */
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(g->n[n].out[0], RLX_F64, 3, (int64_t[]){7, 2, 4});

    g = rlx_graph_new("t.rlxg");
    in[0] = input("a", RLX_F64, 2, (int64_t[]){2, 3});
    n = node("Einsum", 1, in, 1);
    rlx_attr_add(g, n, "equation", RLX_A_STRING)->s = "ij->jz";
    fails_with("output label 'z' is not in any input");

    g = rlx_graph_new("t.rlxg");
    in[0] = input("a", RLX_F64, 2, (int64_t[]){2, 3});
    n = node("Einsum", 1, in, 1);
    rlx_attr_add(g, n, "equation", RLX_A_STRING)->s = "ii->i";
    fails_with("label sizes disagree (3 and 2, input 'a')");
}

Test(quant_infer, output_dtypes_and_modes) {
    g = rlx_graph_new("t.rlxg");
    int q[3] = {input("x", RLX_F32, 2, (int64_t[]){2, 3}), input("s", RLX_F32, 1, (int64_t[]){3}),
                input("z", RLX_I8, 1, (int64_t[]){3})};
    int n = node("QuantizeLinear", 3, q, 1);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(g->n[n].out[0], RLX_I8, 2, (int64_t[]){2, 3});

    g = rlx_graph_new("t.rlxg");
    int m[4] = {input("a", RLX_U8, 2, (int64_t[]){2, 3}), input("b", RLX_U8, 2, (int64_t[]){3, 4}),
                input("az", RLX_U8, 1, (int64_t[]){5}), -1};
    node("MatMulInteger", 3, m, 1);
    fails_with("a_zero_point 'az' has shape [5]; want a scalar or [2]");
}
