/* test_vision.c - the vision family's kernels (runtime_min/rk_vision.c) and
 * inference (ext_vision.c): GridSample, RoiAlign, MaxUnpool, Det.
 *
 * Every expected value is worked out by hand in the comments from the ONNX
 * definitions: GridSample's pixel coordinate x = ((g + 1) * size - 1) / 2
 * (or (g + 1) / 2 * (size - 1) with align_corners), borders -0.5..size-0.5
 * (0..size-1), Keys' cubic weights for A = -0.75; RoiAlign's samples at the
 * centres of sub-bins, interpolated bilinearly. RoiAlign runs on the image
 * X[y][x] = 4y + x, which bilinear interpolation reproduces exactly inside
 * the image, so a sample at (y, x) reads 4y + x. Inference tests build small
 * graphs with the IR API and check shapes and the one-line error messages.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"
#define TG_PASSES (TG_CHECK_ATTRS | TG_LEGALIZE)
#include "testgraph.h"

static rk_ctx ctx = {1};

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

static void expect_floats(const float *got, const float *want, int n, float tol) {
    for (int i = 0; i < n; i++) {
        float scale = fabsf(want[i]) > 1 ? fabsf(want[i]) : 1;
        cr_expect(fabsf(got[i] - want[i]) <= tol * scale, "element %d: got %.9g, want %.9g", i, (double)got[i],
                  (double)want[i]);
    }
}

/* ---- GridSample ---- */

static rk_grid_sample_params gs_params(int64_t h, int64_t w, int64_t ow, int mode, int padding, int align) {
    rk_grid_sample_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.grid_dtype = RLX_F32;
    p.n = 1;
    p.c = 1;
    p.h = h;
    p.w = w;
    p.oh = 1;
    p.ow = ow;
    p.mode = mode;
    p.padding = padding;
    p.align_corners = align;
    return p;
}

Test(vision_kernel, grid_sample_bilinear_paddings) {
    /* X = [[1 2] [3 4]]; grid points (x, y):
     *   (0, 0):   x = y = ((0+1)*2-1)/2 = 0.5: the mean 2.5 (every padding)
     *   (-1, -1): x = y = -0.5, taps -1 and 0 at 1/2 each:
     *             zeros 1/4 * X[0][0] = 0.25; border and reflection fold
     *             tap -1 onto 0 (reflect(-1) in [-0.5, 1.5] = 0): 1
     *   (1, -1):  x = 1.5 (taps 1, 2), y = -0.5 (taps -1, 0):
     *             zeros 1/4 * X[0][1] = 0.5; border/reflection X[0][1] = 2
     *   (2, 0):   x = 2.5 > 1.5: border clamps to 1 -> (2 + 4) / 2 = 3;
     *             reflection folds to 1.5 - 1 = 0.5 -> 2.5; zeros: taps 2
     *             and 3 both outside -> 0
     *   (-3, 0):  x = -2.5, 2 below -0.5: one flip of range 2 (odd) ->
     *             1.5 - 0 = 1.5, taps 1 and 2 -> reflect(2) = 1: (2+4)/2 = 3;
     *             border 0 -> (1 + 3) / 2 = 2; zeros 0 */
    float x[4] = {1, 2, 3, 4}, y[5];
    float grid[10] = {0, 0, -1, -1, 1, -1, 2, 0, -3, 0};
    const float want[3][5] = {{2.5f, 0.25f, 0.5f, 0, 0}, {2.5f, 1, 2, 3, 2}, {2.5f, 1, 2, 2.5f, 3}};
    for (int pad = 0; pad < 3; pad++) {
        rk_grid_sample_params p = gs_params(2, 2, 5, 0, pad, 0);
        cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
        expect_floats(y, want[pad], 5, 1e-6f);
    }
}

Test(vision_kernel, grid_sample_align_corners) {
    /* X (1 x 3) = [10 20 30], align_corners: x = (g + 1) / 2 * 2, y = 0
     * always (a height of 1): (0.5, 0) -> x = 1.5 -> 25; (-1, 1) -> 10;
     * (1, inf) with reflection: y = inf * 0 = NaN, clamped to -1e15 and
     * folded in the zero-width range [0, 0] -> 0: X[0][2] = 30, defined */
    float x[3] = {10, 20, 30}, y[3];
    float grid[6] = {0.5f, 0, -1, 1, 1, INFINITY};
    rk_grid_sample_params p = gs_params(1, 3, 3, 0, 2, 1);
    cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){25, 10, 30}, 3, 1e-6f);
}

Test(vision_kernel, grid_sample_nearest) {
    /* X = [[1 2] [3 4]]: (0, 0) -> x = y = 0.5, rounded half to even: 0 -> 1;
     * (0.5, 0.5) -> 1, 1 -> 4; (-0.5, 0.5) -> x = 0, y = 1 -> 3;
     * (1, 0) -> x = 1.5 -> 2 (even), y = 0: zeros 0, border clamps 2 to 1: 2 */
    float x[4] = {1, 2, 3, 4}, y[4];
    float grid[8] = {0, 0, 0.5f, 0.5f, -0.5f, 0.5f, 1, 0};
    rk_grid_sample_params p = gs_params(2, 2, 4, 1, 0, 0);
    cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 4, 3, 0}, 4, 0);
    p.padding = 1;
    cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 4, 3, 2}, 4, 0);
}

Test(vision_kernel, grid_sample_bicubic) {
    /* Keys' weights at t = 0.5 (A = -0.75): taps -1 and 2 get
     * ((A*1.5 - 5A)*1.5 + 8A)*1.5 - 4A = -0.09375, taps 0 and 1 get
     * ((A+2)*0.5 - (A+3))*0.25 + 1 = 0.59375. A height of 1 with y = 0
     * (t = 0) weighs row 0 by 1.
     * X (1 x 4) = [2 1 4 9]:
     *   g = 0: x = (4 - 1) / 2 = 1.5, taps 0..3:
     *          -0.09375*2 + 0.59375*(1+4) - 0.09375*9 = 1.9375
     *   g = -0.5: x = 0.5, taps -1..2: zeros (X[-1] = 0):
     *          0.59375*(2+1) - 0.09375*4 = 1.40625;
     *          border/reflection (tap -1 -> 0): 1.40625 - 0.09375*2 = 1.21875 */
    float x[4] = {2, 1, 4, 9}, y[2];
    float grid[4] = {0, 0, -0.5f, 0};
    rk_grid_sample_params p = gs_params(1, 4, 2, 2, 0, 0);
    cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1.9375f, 1.40625f}, 2, 1e-6f);
    p.padding = 2;
    cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1.9375f, 1.21875f}, 2, 1e-6f);
    /* align_corners: x = (g + 1) / 2 * 3 = 0.5 at g = -2/3; reflection in
     * [0, 3] folds tap -1 onto 1: -0.09375*1 + 0.59375*3 - 0.09375*4 = 1.3125 */
    p.align_corners = 1;
    grid[2] = -2.0f / 3.0f;
    cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
    expect_floats(y + 1, (float[]){1.3125f}, 1, 1e-5f);
}

Test(vision_kernel, grid_sample_f64_and_channels) {
    /* two channels share one grid point: x = y = 0.5 -> the means 2.5, 25 */
    double x[8] = {1, 2, 3, 4, 10, 20, 30, 40}, y[2], grid[2] = {0, 0};
    rk_grid_sample_params p = gs_params(2, 2, 1, 0, 0, 0);
    p.dtype = p.grid_dtype = RLX_F64;
    p.c = 2;
    cr_assert_eq(rk_grid_sample(&ctx, &p, IN(x, grid), OUT(y)), RLX_OK);
    cr_expect(y[0] == 2.5 && y[1] == 25, "got %g %g", y[0], y[1]);
}

/* ---- RoiAlign ---- */

static float ramp[32];   /* two 4 x 4 images: 4y + x, then 100 + 4y + x */

static rk_roi_align_params roi_params(int64_t sr, int half_pixel, int max_mode) {
    for (int i = 0; i < 32; i++) ramp[i] = (float)(i % 16 + (i >= 16 ? 100 : 0));
    rk_roi_align_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.n = 2;
    p.c = 1;
    p.h = 4;
    p.w = 4;
    p.nrois = 1;
    p.oh = 1;
    p.ow = 1;
    p.sampling_ratio = sr;
    p.spatial_scale = 1.0;
    p.half_pixel = half_pixel;
    p.max_mode = max_mode;
    return p;
}

Test(vision_kernel, roi_align_avg) {
    float y;
    int64_t b0 = 0, b1 = 1;
    /* roi (0,0)-(2,2), 2 x 2 samples, output_half_pixel: samples at 0.5 and
     * 1.5 per axis, their mean at (1, 1): 5 */
    rk_roi_align_params p = roi_params(2, 0, 0);
    float roi[4] = {0, 0, 2, 2};
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, roi, &b0), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){5}, 1, 1e-6f);
    /* the second image: 105 */
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, roi, &b1), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){105}, 1, 1e-6f);
    /* half_pixel: the roi moves to (-0.5)-(1.5), samples at 0 and 1: 2.5 */
    p.half_pixel = 1;
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, roi, &b0), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){2.5f}, 1, 1e-6f);
    /* spatial_scale 0.5 of (0,0)-(4,4) is the first roi again: 5 */
    p = roi_params(2, 0, 0);
    p.spatial_scale = 0.5;
    float big[4] = {0, 0, 4, 4};
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, big, &b0), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){5}, 1, 1e-6f);
    /* adaptive (sampling_ratio 0): roi (0,0)-(3,1) samples ceil(3) x ceil(1)
     * points, x = 0.5, 1.5, 2.5 at y = 0.5: mean 4*0.5 + 1.5 = 3.5 */
    p = roi_params(0, 0, 0);
    float wide[4] = {0, 0, 3, 1};
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, wide, &b0), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){3.5f}, 1, 1e-6f);
}

Test(vision_kernel, roi_align_edges_and_max) {
    float y;
    int64_t b = 0;
    /* one sample at the roi centre: (5,0)-(7,2) samples x = 6 > width 4 -> 0;
     * (3,0)-(5,2) samples x = 4 (not beyond 4): clamped to column 3, y = 1: 7 */
    rk_roi_align_params p = roi_params(1, 0, 0);
    float out_roi[4] = {5, 0, 7, 2}, edge_roi[4] = {3, 0, 5, 2};
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, out_roi, &b), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){0}, 1, 0);
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, edge_roi, &b), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){7}, 1, 1e-6f);
    /* max over the 4 samples of roi (0,0)-(2,2) of the largest weighted
     * corner (each weight 1/4): samples (0.5,0.5) corners 0 1 4 5 -> 1.25,
     * (0.5,1.5) -> 6/4, (1.5,0.5) -> 9/4, (1.5,1.5) corners 5 6 9 10 -> 2.5 */
    p = roi_params(2, 0, 1);
    float roi[4] = {0, 0, 2, 2};
    cr_assert_eq(rk_roi_align(&ctx, &p, IN(ramp, roi, &b), OUT(&y)), RLX_OK);
    expect_floats(&y, (float[]){2.5f}, 1, 1e-6f);
    /* an image index outside [0, 2) */
    int64_t bad = 2;
    cr_expect_eq(rk_roi_align(&ctx, &p, IN(ramp, roi, &bad), OUT(&y)), RLX_E_RANGE);
    bad = -1;
    cr_expect_eq(rk_roi_align(&ctx, &p, IN(ramp, roi, &bad), OUT(&y)), RLX_E_RANGE);
    /* an adaptive grid of ceil(1e9) points per bin is refused */
    p = roi_params(0, 0, 0);
    float huge[4] = {0, 0, 1e9f, 1};
    cr_expect_eq(rk_roi_align(&ctx, &p, IN(ramp, huge, &b), OUT(&y)), RLX_E_ARG);
}

/* ---- MaxUnpool ---- */

Test(vision_kernel, max_unpool) {
    /* x [1 2 3 4] at flat indices 5 7 13 15 of a 4 x 4 unpooled plane, held
     * at the origin of a 5 x 5 output: (1,1) (1,3) (3,1) (3,3) = 6 8 16 18 */
    float x[4] = {1, 2, 3, 4}, y[25];
    int64_t idx[4] = {5, 7, 13, 15};
    rk_max_unpool_params p;
    memset(&p, 0, sizeof p);
    p.esize = 4;
    p.in_numel = 4;
    p.rank = 4;
    memcpy(p.unpooled_dims, (int64_t[]){1, 1, 4, 4}, 4 * sizeof(int64_t));
    memcpy(p.out_dims, (int64_t[]){1, 1, 5, 5}, 4 * sizeof(int64_t));
    cr_assert_eq(rk_max_unpool(&ctx, &p, IN(x, idx), OUT(y)), RLX_OK);
    for (int i = 0; i < 25; i++) {
        float want = i == 6 ? 1 : i == 8 ? 2 : i == 16 ? 3 : i == 18 ? 4 : 0;
        cr_expect(y[i] == want, "element %d: got %g, want %g", i, (double)y[i], (double)want);
    }
    /* same shapes: the indices are the output's; a repeated index keeps the
     * later element */
    memcpy(p.out_dims, p.unpooled_dims, sizeof p.out_dims);
    idx[2] = 5;
    cr_assert_eq(rk_max_unpool(&ctx, &p, IN(x, idx), OUT(y)), RLX_OK);
    cr_expect(y[5] == 3 && y[7] == 2 && y[15] == 4 && y[13] == 0);
    /* 16 is past the unpooled plane: refused before writing anything */
    idx[3] = 16;
    y[0] = 99;
    cr_expect_eq(rk_max_unpool(&ctx, &p, IN(x, idx), OUT(y)), RLX_E_RANGE);
    cr_expect(y[0] == 99);
}

/* ---- Det ---- */

static uint8_t det_scratch[512];

Test(vision_kernel, det) {
    rk_ctx c = {1, NULL, det_scratch, sizeof det_scratch};
    rk_det_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    /* [[1 2] [3 4]] -> -2; singular [[1 2] [2 4]] -> 0 */
    float a[8] = {1, 2, 3, 4, 1, 2, 2, 4}, y[2];
    p.batch = 2;
    p.n = 2;
    cr_assert_eq(rk_det(&c, &p, IN(a), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){-2, 0}, 2, 1e-6f);
    /* [[0 1 2] [1 0 3] [4 -3 8]] needs a pivot (zero in the corner):
     * 0*(0*8 - 3*-3) - 1*(1*8 - 3*4) + 2*(1*-3 - 0*4) = 4 - 6 = -2 */
    double b[9] = {0, 1, 2, 1, 0, 3, 4, -3, 8}, yd;
    p.dtype = RLX_F64;
    p.batch = 1;
    p.n = 3;
    cr_assert_eq(rk_det(&c, &p, IN(b), OUT(&yd)), RLX_OK);
    cr_expect(fabs(yd + 2) < 1e-12, "got %.17g", yd);
    /* a NaN entry makes the determinant NaN */
    b[4] = NAN;
    cr_assert_eq(rk_det(&c, &p, IN(b), OUT(&yd)), RLX_OK);
    cr_expect(isnan(yd), "got %g", yd);
    /* 0 x 0: the empty product 1, no scratch needed */
    p.n = 0;
    cr_assert_eq(rk_det(&ctx, &p, IN(b), OUT(&yd)), RLX_OK);
    cr_expect(yd == 1);
    /* a 3 x 3 matrix without its scratch is refused, not overrun */
    p.n = 3;
    rk_ctx small = {1, NULL, det_scratch, 9 * sizeof(double)};
    cr_expect_eq(rk_det(&small, &p, IN(b), OUT(&yd)), RLX_E_ARG);
}

/* ---- inference ---- */

static int node(const char *op, int nin, const int *in) {
    int out = rlx_value_add(g, rlx_fmt("out%d", g->nv));
    graph_output(out);
    rlx_node_add(g, "n", (RlxOp)rlx_op_from_name(op), nin, in, 1, &out);
    return out;
}

static void attr_s(const char *name, const char *s) { rlx_attr_add(g, g->nn - 1, name, RLX_A_STRING)->s = s; }
static void attr_ints(const char *name, int n, const int64_t *v) {
    RlxAttr *a = rlx_attr_add(g, g->nn - 1, name, RLX_A_INTS);
    a->n = n;
    a->ints = rlx_alloc(sizeof(int64_t) * (size_t)n);
    memcpy(a->ints, v, sizeof(int64_t) * (size_t)n);
}

Test(vision_infer, shapes) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 4, (int64_t[]){2, 3, 4, 4});
    int grid = input("grid", RLX_F32, 4, (int64_t[]){2, 5, 7, 2});
    int rois = input("rois", RLX_F32, 2, (int64_t[]){6, 4});
    int bi = input("bi", RLX_I64, 1, (int64_t[]){6});
    int idx = input("idx", RLX_I64, 4, (int64_t[]){2, 3, 4, 4});
    int m = input("m", RLX_F64, 3, (int64_t[]){3, 5, 5});
    int os = weight("os", RLX_I64, 4, (int64_t[]){2, 3, 9, 10});
    int gs = node("GridSample", 2, (int[]){x, grid});
    attr_s("mode", "bicubic");
    int ra = node("RoiAlign", 3, (int[]){x, rois, bi});
    RlxAttr *a = rlx_attr_add(g, g->nn - 1, "output_height", RLX_A_INT);
    a->i = 2;
    /* unpooled: (4 - 1) * 2 + 3 - (1 + 0) = 8 and (4 - 1) * 2 + 2 - (0 + 1) = 7 */
    int mu = node("MaxUnpool", 2, (int[]){x, idx});
    attr_ints("kernel_shape", 2, (int64_t[]){3, 2});
    attr_ints("strides", 2, (int64_t[]){2, 2});
    attr_ints("pads", 4, (int64_t[]){1, 0, 0, 1});
    int mu2 = node("MaxUnpool", 3, (int[]){x, idx, os});
    attr_ints("kernel_shape", 2, (int64_t[]){3, 2});
    attr_ints("strides", 2, (int64_t[]){2, 2});
    attr_ints("pads", 4, (int64_t[]){1, 0, 0, 1});
    int det = node("Det", 1, (int[]){m});
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(gs, RLX_F32, 4, (int64_t[]){2, 3, 5, 7});
    shape_is(ra, RLX_F32, 4, (int64_t[]){6, 3, 2, 1});
    shape_is(mu, RLX_F32, 4, (int64_t[]){2, 3, 8, 7});
    shape_is(mu2, RLX_F32, 4, (int64_t[]){2, 3, 9, 10});
    shape_is(det, RLX_F64, 1, (int64_t[]){3});
}

Test(vision_infer, errors) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 4, (int64_t[]){1, 1, 4, 4});
    int grid = input("grid", RLX_F32, 4, (int64_t[]){1, 2, 2, 3});
    node("GridSample", 2, (int[]){x, grid});
    fails_with("must have shape [1, H_out, W_out, 2]");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 4, (int64_t[]){1, 1, 4, 4});
    grid = input("grid", RLX_F32, 4, (int64_t[]){1, 2, 2, 2});
    node("GridSample", 2, (int[]){x, grid});
    attr_s("mode", "linear");   /* opset 20's name, not 16's */
    fails_with("mode 'linear' is not one of bilinear, nearest or bicubic");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 4, (int64_t[]){2, 1, 4, 4});
    int rois = input("rois", RLX_F32, 2, (int64_t[]){2, 4});
    int bi = weight("bi", RLX_I64, 2, (int64_t[]){1, 2});
    node("RoiAlign", 3, (int[]){x, rois, bi});
    fails_with("batch index 2 (element 1 of 'bi') is outside [0, 2)");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 4, (int64_t[]){2, 1, 4, 4});
    rois = input("rois", RLX_F32, 2, (int64_t[]){2, 4});
    bi = input("bi", RLX_I32, 1, (int64_t[]){2});
    node("RoiAlign", 3, (int[]){x, rois, bi});
    fails_with("batch_indices 'bi' must be i64, not i32");

    /* indices address the unpooled 1 x 1 x 2 x 2 = 4 elements */
    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 4, (int64_t[]){1, 1, 1, 1});
    int idx = typed_value("idx", RLX_I64, 4, (int64_t[]){1, 1, 1, 1}, RLX_V_WEIGHT);
    g->v[idx].data = (const uint8_t *)&(int64_t){4};
    int os = weight("os", RLX_I64, 4, (int64_t[]){1, 1, 3, 3});
    node("MaxUnpool", 3, (int[]){x, idx, os});
    attr_ints("kernel_shape", 2, (int64_t[]){2, 2});
    fails_with("index 4 (element 0 of 'idx') is outside [0, 4)");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 4, (int64_t[]){1, 1, 2, 2});
    idx = input("idx", RLX_I64, 4, (int64_t[]){1, 1, 2, 2});
    os = weight("os", RLX_I64, 4, (int64_t[]){1, 1, 3, 5});
    node("MaxUnpool", 3, (int[]){x, idx, os});
    attr_ints("kernel_shape", 2, (int64_t[]){2, 2});
    attr_ints("strides", 2, (int64_t[]){2, 2});
    fails_with("be at least the unpooled shape [1,1,4,4]");

    g = rlx_graph_new("t.rlxg");
    int m = input("m", RLX_F32, 3, (int64_t[]){2, 3, 4});
    node("Det", 1, (int[]){m});
    fails_with("must hold square matrices in its last two axes");

    g = rlx_graph_new("t.rlxg");
    m = input("m", RLX_I32, 2, (int64_t[]){2, 2});
    node("Det", 1, (int[]){m});
    fails_with("input 'm' has dtype i32, but Det needs a float type");
}
