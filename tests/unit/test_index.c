/* test_index.c - the index family's kernels (runtime_min/rk_index.c) and
 * inference (ext_index.c): Resize, GatherElements, GatherND,
 * ScatterElements, ScatterND.
 *
 * Every expected value is worked out by hand in the comments from the ONNX
 * definitions (the Resize formulas are those of the ONNX reference:
 * x_ori = (x + 0.5) / scale - 0.5 for half_pixel, x / scale for asymmetric,
 * taps at the edge read the edge element, Keys' cubic weights with A).
 * Inference tests build small graphs with the IR API and check shapes and
 * the one-line error messages.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"
#define TG_PASSES (TG_LEGALIZE)
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

static void set_dims(int64_t *dst, int rank, const int64_t *src) {
    for (int i = 0; i < rank; i++) dst[i] = src[i];
}

/* ---- GatherElements ---- */

Test(index_kernel, gather_elements_axes_and_negative) {
    /* data [[1 2] [3 4]], axis 1, idx [[0 0] [1 0]] -> [[1 1] [4 3]] */
    float x[4] = {1, 2, 3, 4}, y[4];
    int64_t idx[4] = {0, 0, 1, 0};
    rk_gather_elements_params p;
    memset(&p, 0, sizeof p);
    p.esize = 4;
    p.rank = 2;
    set_dims(p.data_dims, 2, (int64_t[]){2, 2});
    set_dims(p.idx_dims, 2, (int64_t[]){2, 2});
    p.axis = 1;
    p.idx_dtype = RLX_I64;
    cr_assert_eq(rk_gather_elements(&ctx, &p, IN(x, idx), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 1, 4, 3}, 4, 0);
    /* axis 0, i32 indices, a smaller index shape [1, 2] and -1 = the last row:
     * idx [[-1 0]] -> [[data[1][0] data[0][1]]] = [[3 2]] */
    int32_t idx32[2] = {-1, 0};
    p.axis = 0;
    p.idx_dtype = RLX_I32;
    set_dims(p.idx_dims, 2, (int64_t[]){1, 2});
    cr_assert_eq(rk_gather_elements(&ctx, &p, IN(x, idx32), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){3, 2}, 2, 0);
    idx32[1] = 2;   /* past the axis of 2 */
    cr_assert_eq(rk_gather_elements(&ctx, &p, IN(x, idx32), OUT(y)), RLX_E_RANGE);
    idx32[1] = -3;
    cr_assert_eq(rk_gather_elements(&ctx, &p, IN(x, idx32), OUT(y)), RLX_E_RANGE);
}

Test(index_kernel, gather_elements_any_element_size) {
    /* int64 data moves exactly (values beyond 2^53) */
    int64_t x[3] = {INT64_MAX, -7, (int64_t)1 << 60}, y[3];
    int64_t idx[3] = {2, 0, 0};
    rk_gather_elements_params p;
    memset(&p, 0, sizeof p);
    p.esize = 8;
    p.rank = 1;
    p.data_dims[0] = 3;
    p.idx_dims[0] = 3;
    p.idx_dtype = RLX_I64;
    cr_assert_eq(rk_gather_elements(&ctx, &p, IN(x, idx), OUT(y)), RLX_OK);
    cr_expect(y[0] == ((int64_t)1 << 60) && y[1] == INT64_MAX && y[2] == INT64_MAX);
}

/* ---- GatherND ---- */

Test(index_kernel, gather_nd_batch_dims) {
    /* data [[[0 1] [2 3]] [[4 5] [6 7]]], batch_dims 1, idx [[1] [0]]:
     * batch 0 takes row 1 = [2 3], batch 1 takes row 0 = [4 5] */
    int32_t x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[4];
    int64_t idx[2] = {1, 0};
    rk_gather_nd_params p;
    memset(&p, 0, sizeof p);
    p.esize = 4;
    p.batch = 2;
    p.nper = 1;
    p.k = 1;
    p.dims[0] = 2;
    p.slice = 2;
    p.idx_dtype = RLX_I64;
    cr_assert_eq(rk_gather_nd(&ctx, &p, IN(x, idx), OUT(y)), RLX_OK);
    cr_expect(y[0] == 2 && y[1] == 3 && y[2] == 4 && y[3] == 5);
    /* no batch, full tuples [[0 1 1] [1 0 -1]] -> elements 3 and 5 */
    int64_t full[6] = {0, 1, 1, 1, 0, -1};
    p.batch = 1;
    p.nper = 2;
    p.k = 3;
    set_dims(p.dims, 3, (int64_t[]){2, 2, 2});
    p.slice = 1;
    cr_assert_eq(rk_gather_nd(&ctx, &p, IN(x, full), OUT(y)), RLX_OK);
    cr_expect(y[0] == 3 && y[1] == 5, "got %d %d", y[0], y[1]);
    full[4] = 2;
    cr_assert_eq(rk_gather_nd(&ctx, &p, IN(x, full), OUT(y)), RLX_E_RANGE);
}

/* ---- ScatterElements ---- */

static rk_scatter_elements_params scatter_row(int64_t reduction) {
    /* data [1, 5], indices and updates [1, 2], axis 1 */
    rk_scatter_elements_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.rank = 2;
    set_dims(p.data_dims, 2, (int64_t[]){1, 5});
    set_dims(p.idx_dims, 2, (int64_t[]){1, 2});
    p.axis = 1;
    p.idx_dtype = RLX_I64;
    p.reduction = reduction;
    return p;
}

Test(index_kernel, scatter_elements_reductions) {
    float x[5] = {1, 2, 3, 4, 5}, y[5], upd[2] = {1.5f, 2.5f};
    int64_t idx[2] = {1, -2};   /* -2 is index 3 */
    rk_scatter_elements_params p = scatter_row(0);
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 1.5f, 3, 2.5f, 5}, 5, 0);
    /* duplicates: none keeps the last, add sums both into 2, mul multiplies */
    int64_t dup[2] = {1, 1};
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, dup, upd), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 2.5f, 3, 4, 5}, 5, 0);
    p.reduction = 1;   /* 2 + 1.5 + 2.5 */
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, dup, upd), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 6, 3, 4, 5}, 5, 0);
    p.reduction = 2;   /* 2 * 1.5 * 2.5 */
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, dup, upd), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 7.5f, 3, 4, 5}, 5, 0);
    /* in place (the planner may give the output the data's bytes) */
    p.reduction = 1;
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, idx, upd), OUT(x)), RLX_OK);
    expect_floats(x, (float[]){1, 3.5f, 3, 6.5f, 5}, 5, 0);
}

Test(index_kernel, scatter_elements_range_writes_nothing) {
    float x[5] = {1, 2, 3, 4, 5}, y[5] = {9, 9, 9, 9, 9}, upd[2] = {0, 0};
    int64_t idx[2] = {0, 5};
    rk_scatter_elements_params p = scatter_row(0);
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_E_RANGE);
    expect_floats(y, (float[]){9, 9, 9, 9, 9}, 5, 0);
}

Test(index_kernel, scatter_elements_integer_wrap_and_bool) {
    /* i8: 100 + 100 wraps to -56; 100 * 100 = 39*256 + 16 wraps to 16; 3 * -2 = -6 */
    int8_t x[2] = {100, 3}, y[2], upd[2] = {100, -2};
    int64_t idx[2] = {0, 1};
    rk_scatter_elements_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_I8;
    p.rank = 1;
    p.data_dims[0] = 2;
    p.idx_dims[0] = 2;
    p.idx_dtype = RLX_I64;
    p.reduction = 1;
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_OK);
    cr_expect(y[0] == -56 && y[1] == 1, "got %d %d", y[0], y[1]);
    p.reduction = 2;
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_OK);
    cr_expect(y[0] == 16 && y[1] == -6, "got %d %d", y[0], y[1]);
    /* bool: add is or, mul is and */
    uint8_t b[2] = {0, 1}, bu[2] = {1, 0}, by[2];
    p.dtype = RLX_BOOL;
    p.reduction = 1;
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(b, idx, bu), OUT(by)), RLX_OK);
    cr_expect(by[0] == 1 && by[1] == 1);
    p.reduction = 2;
    cr_assert_eq(rk_scatter_elements(&ctx, &p, IN(b, idx, bu), OUT(by)), RLX_OK);
    cr_expect(by[0] == 0 && by[1] == 0);
}

/* ---- ScatterND ---- */

Test(index_kernel, scatter_nd_slices) {
    /* data [2, 2] = [[1 2] [3 4]], indices [[1] [-2]] (rows), updates [[10 20] [30 40]]:
     * none -> [[30 40] [10 20]]; add -> [[31 42] [13 24]]; mul -> [[30 80] [30 80]] */
    double x[4] = {1, 2, 3, 4}, y[4], upd[4] = {10, 20, 30, 40};
    int64_t idx[2] = {1, -2};
    rk_scatter_nd_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F64;
    p.numel = 4;
    p.nupd = 2;
    p.k = 1;
    p.dims[0] = 2;
    p.slice = 2;
    p.idx_dtype = RLX_I64;
    cr_assert_eq(rk_scatter_nd(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_OK);
    cr_expect(y[0] == 30 && y[1] == 40 && y[2] == 10 && y[3] == 20);
    p.reduction = 1;
    cr_assert_eq(rk_scatter_nd(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_OK);
    cr_expect(y[0] == 31 && y[1] == 42 && y[2] == 13 && y[3] == 24);
    p.reduction = 2;
    cr_assert_eq(rk_scatter_nd(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_OK);
    cr_expect(y[0] == 30 && y[1] == 80 && y[2] == 30 && y[3] == 80);
    idx[0] = -3;
    cr_assert_eq(rk_scatter_nd(&ctx, &p, IN(x, idx, upd), OUT(y)), RLX_E_RANGE);
}

/* ---- Resize ---- */

static rk_resize_params resize1d(int64_t in, int64_t out, int64_t mode, int64_t coord) {
    rk_resize_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.rank = 1;
    p.in_dims[0] = in;
    p.out_dims[0] = out;
    p.mode = mode;
    p.coord_mode = coord;
    p.cubic_a = -0.75;
    p.roi_dtype = RLX_F32;
    return p;
}

Test(index_kernel, resize_nearest_modes) {
    /* [1 2] x2, asymmetric: x_ori = 0, .5, 1, 1.5. floor -> 1 1 2 2;
     * round_prefer_floor -> 1 1 2 2 (.5 goes down); round_prefer_ceil and
     * ceil -> 1 2 2 2 (1.5 rounds up to 2, clamped to the last element) */
    float x[2] = {1, 2}, y[4], scale = 2;
    rk_resize_params p = resize1d(2, 4, 0, 3);
    p.nearest_mode = 2;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 1, 2, 2}, 4, 0);
    p.nearest_mode = 0;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 1, 2, 2}, 4, 0);
    p.nearest_mode = 1;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 2, 2, 2}, 4, 0);
    p.nearest_mode = 3;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 2, 2, 2}, 4, 0);
    /* u8 moves bytes: the same picks */
    uint8_t xb[2] = {7, 200}, yb[4];
    p.dtype = RLX_U8;
    cr_assert_eq(rk_resize(&ctx, &p, IN(xb, NULL, &scale, NULL), OUT(yb)), RLX_OK);
    cr_expect(yb[0] == 7 && yb[1] == 200 && yb[2] == 200 && yb[3] == 200);
}

Test(index_kernel, resize_linear_half_pixel_and_align_corners) {
    /* [1 5] to 4, half_pixel: x_ori = -.25 .25 .75 1.25 -> 1, .75*1 + .25*5 = 2,
     * .25*1 + .75*5 = 4, 5 (the edges clamp) */
    float x[2] = {1, 5}, y[4], scale = 2;
    rk_resize_params p = resize1d(2, 4, 1, 0);
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 2, 4, 5}, 4, 1e-6f);
    /* align_corners by sizes: x_ori = x * (2-1)/(4-1) = 0, 1/3, 2/3, 1 -> 1, 7/3, 11/3, 5 */
    int64_t sizes = 4;
    p.coord_mode = 2;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, NULL, &sizes), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 7.0f / 3, 11.0f / 3, 5}, 4, 1e-6f);
}

Test(index_kernel, resize_cubic_and_exclude_outside) {
    /* A = -0.75 at r = .5: weights (-0.09375, 0.59375, 0.59375, -0.09375).
     * [1 2 4 8] x2 asymmetric: x=1 -> x_ori .5, taps -1..2 (-1 reads element 0):
     *   -0.09375*1 + 0.59375*1 + 0.59375*2 - 0.09375*4 = 1.3125
     * x=3 -> 1.5, taps 0..3: -0.09375 + 1.1875 + 2.375 - 0.75 = 2.71875
     * x=0 and x=2 hit elements 0 and 1 exactly. */
    float x[4] = {1, 2, 4, 8}, y[8], scale = 2;
    rk_resize_params p = resize1d(4, 8, 2, 3);
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 1.3125f, 2, 2.71875f, 4}, 5, 1e-6f);
    /* exclude_outside drops tap -1 and renormalizes the others (sum 1.09375):
     *   (0.59375*1 + 0.59375*2 - 0.09375*4) / 1.09375 = 1.40625 / 1.09375 = 1.2857143 */
    p.exclude_outside = 1;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){1, 1.2857143f, 2, 2.71875f}, 4, 1e-6f);
}

Test(index_kernel, resize_crop_and_extrapolate_2d) {
    /* [2, 3] data [[1 2 3] [4 5 6]], sizes [1, 3], roi: axis 0 [0, 1], axis 1 [.5, 1.5],
     * linear tf_crop_and_resize.
     * axis 0 (out 1): x_ori = .5 * (0 + 1) * (2-1) = .5
     * axis 1 (out 3): x_ori = .5*2 + x * 1 * 2/2 = 1, 2, 3 (3 > 2: extrapolate)
     * -> [mean(2, 5) = 3.5, mean(3, 6) = 4.5, 7] */
    float x[6] = {1, 2, 3, 4, 5, 6}, y[3], roi[4] = {0, 0.5f, 1, 1.5f};
    int64_t sizes[2] = {1, 3};
    rk_resize_params p;
    memset(&p, 0, sizeof p);
    p.dtype = RLX_F32;
    p.rank = 2;
    set_dims(p.in_dims, 2, (int64_t[]){2, 3});
    set_dims(p.out_dims, 2, (int64_t[]){1, 3});
    p.mode = 1;
    p.coord_mode = 5;
    p.extrapolation = 7;
    p.roi_dtype = RLX_F32;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, roi, NULL, sizes), OUT(y)), RLX_OK);
    expect_floats(y, (float[]){3.5f, 4.5f, 7}, 3, 1e-6f);
}

Test(index_kernel, resize_checks_runtime_scales) {
    /* floor(2 * 1.4) = 2, not the planned 4; sizes must equal the plan */
    float x[2] = {1, 2}, y[4], scale = 1.4f, zero = 0;
    int64_t sizes = 3;
    rk_resize_params p = resize1d(2, 4, 0, 0);
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, NULL), OUT(y)), RLX_E_ARG);
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &zero, NULL), OUT(y)), RLX_E_ARG);
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, NULL, &sizes), OUT(y)), RLX_E_ARG);
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, &scale, &sizes), OUT(y)), RLX_E_ARG);
}

Test(index_kernel, resize_linear_integer_saturates) {
    /* i8 [-100 100] to 3 with align_corners: -100, 0, 100; cubic overshoot on
     * u8 [0 255 255 0] ... clamps into [0, 255] */
    int8_t x[2] = {-100, 100}, y[3];
    rk_resize_params p = resize1d(2, 3, 1, 2);
    int64_t sizes = 3;
    p.dtype = RLX_I8;
    cr_assert_eq(rk_resize(&ctx, &p, IN(x, NULL, NULL, &sizes), OUT(y)), RLX_OK);
    cr_expect(y[0] == -100 && y[1] == 0 && y[2] == 100, "got %d %d %d", y[0], y[1], y[2]);
    /* u8 [0 255] x2 cubic asymmetric: x=1 -> x_ori .5, taps -1..2 read 0 0 255 255:
     * 0.59375*255 - 0.09375*255 = 127.5 -> 127 (a cast truncates); x=3 -> 1.5, taps
     * 0..3 read 0 255 255 255: (0.59375 + 0.59375 - 0.09375) * 255 = 278.9 -> 255 */
    uint8_t xb[2] = {0, 255}, yb[4];
    float scale = 2;
    p = resize1d(2, 4, 2, 3);
    p.dtype = RLX_U8;
    cr_assert_eq(rk_resize(&ctx, &p, IN(xb, NULL, &scale, NULL), OUT(yb)), RLX_OK);
    cr_expect(yb[0] == 0 && yb[1] == 127 && yb[2] == 255 && yb[3] == 255, "got %d %d %d %d", yb[0], yb[1], yb[2],
              yb[3]);
}

/* ---- inference ---- */

static int node(const char *op, int nin, const int *in, const char *sattr, const char *sval, const char *iattr,
                int64_t ival) {
    int out = rlx_value_add(g, rlx_fmt("out%d", g->nv));
    graph_output(out);
    int n = rlx_node_add(g, "n", (RlxOp)rlx_op_from_name(op), nin, in, 1, &out);
    if (sattr) rlx_attr_add(g, n, sattr, RLX_A_STRING)->s = sval;
    if (iattr) rlx_attr_add(g, n, iattr, RLX_A_INT)->i = ival;
    rlx_attr_check(g, n);
    return out;
}

Test(index_infer, resize_shapes) {
    /* [1, 3, 5, 7] by scales (1, 1, 0.6, 2.5): floor(3) = 3, floor(17.5) = 17;
     * by sizes (1, 3, 2, 9) */
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 4, (int64_t[]){1, 3, 5, 7});
    int sc = weight("scales", RLX_F32, 4, (float[]){1, 1, 0.6f, 2.5f});
    int sz = weight("sizes", RLX_I64, 4, (int64_t[]){1, 3, 2, 9});
    int y1 = node("Resize", 3, (int[]){x, -1, sc}, "mode", "linear", NULL, 0);
    int y2 = node("Resize", 4, (int[]){x, -1, -1, sz}, "mode", "cubic", NULL, 0);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(y1, RLX_F32, 4, (int64_t[]){1, 3, 3, 17});
    shape_is(y2, RLX_F32, 4, (int64_t[]){1, 3, 2, 9});
}

Test(index_infer, resize_errors) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 2, (int64_t[]){2, 2});
    int sc = input("s", RLX_F32, 1, (int64_t[]){2});
    node("Resize", 3, (int[]){x, -1, sc}, NULL, NULL, NULL, 0);
    g->output_decl = NULL;
    fails_with("input 'scales' (value 's') must be a constant (weight)");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){2, 2});
    sc = weight("scales", RLX_F32, 2, (float[]){1, 2});
    int sz = weight("sizes", RLX_I64, 2, (int64_t[]){2, 2});
    node("Resize", 4, (int[]){x, -1, sc, sz}, NULL, NULL, NULL, 0);
    fails_with("exactly one of 'scales' and 'sizes'");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){2, 2});
    sc = weight("scales", RLX_F32, 2, (float[]){1, 2});
    node("Resize", 3, (int[]){x, -1, sc}, "mode", "bilinear", NULL, 0);
    fails_with("mode 'bilinear' is not one of nearest, linear or cubic");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_BOOL, 2, (int64_t[]){2, 2});
    sc = weight("scales", RLX_F32, 2, (float[]){1, 2});
    node("Resize", 3, (int[]){x, -1, sc}, "mode", "linear", NULL, 0);
    fails_with("mode 'linear' interpolates numbers");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){2, 2});
    sc = weight("scales", RLX_F32, 2, (float[]){1, -2});
    node("Resize", 3, (int[]){x, -1, sc}, NULL, NULL, NULL, 0);
    fails_with("must be positive and finite");
}

Test(index_infer, resize_runtime_scales_with_declared_output) {
    /* scales computed at run time: the declared output shape is the plan */
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 2, (int64_t[]){2, 2});
    int sc = input("s", RLX_F32, 1, (int64_t[]){2});
    int y = node("Resize", 3, (int[]){x, -1, sc}, NULL, NULL, NULL, 0);
    g->output_decl = rlx_alloc(sizeof(RlxDecl));
    g->output_decl[0].dtype = RLX_F32;
    g->output_decl[0].rank = 2;
    g->output_decl[0].dims[0] = 4;
    g->output_decl[0].dims[1] = 6;
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(y, RLX_F32, 2, (int64_t[]){4, 6});
}

Test(index_infer, gather_scatter_shapes) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 3, (int64_t[]){2, 3, 4});
    int ie = input("ie", RLX_I64, 3, (int64_t[]){2, 5, 4});
    int ind = input("ind", RLX_I32, 3, (int64_t[]){2, 6, 1});   /* batch 2, tuples of 1 */
    int isd = input("isd", RLX_I64, 2, (int64_t[]){7, 2});
    int upd = input("upd", RLX_F32, 2, (int64_t[]){7, 4});
    int ge = node("GatherElements", 2, (int[]){x, ie}, NULL, NULL, "axis", -2);
    int gn = node("GatherND", 2, (int[]){x, ind}, NULL, NULL, "batch_dims", 1);
    int sn = node("ScatterND", 3, (int[]){x, isd, upd}, "reduction", "add", NULL, 0);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    shape_is(ge, RLX_F32, 3, (int64_t[]){2, 5, 4});
    /* idx dims [:-1] = (2, 6), then data dims after batch + k = 2: (4) */
    shape_is(gn, RLX_F32, 3, (int64_t[]){2, 6, 4});
    shape_is(sn, RLX_F32, 3, (int64_t[]){2, 3, 4});
}

Test(index_infer, gather_scatter_errors) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 2, (int64_t[]){2, 3});
    int idx = input("idx", RLX_I64, 2, (int64_t[]){2, 4});
    node("GatherElements", 2, (int[]){x, idx}, NULL, NULL, "axis", 0);
    fails_with("exceed data 'x' [2,3] on axis 1");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){2, 3});
    int ci = weight("ci", RLX_I64, 2, (int64_t[]){1, 3});
    g->v[ci].rank = 2;
    g->v[ci].dims[0] = 1;
    g->v[ci].dims[1] = 2;
    node("GatherElements", 2, (int[]){x, ci}, NULL, NULL, "axis", 1);
    fails_with("index 3 (element 1 of 'ci') is out of range for an axis of size 3");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){2, 3});
    idx = input("idx", RLX_I64, 2, (int64_t[]){2, 1});
    int upd = input("upd", RLX_F32, 1, (int64_t[]){2});
    node("ScatterND", 3, (int[]){x, idx, upd}, NULL, NULL, NULL, 0);
    fails_with("updates 'upd' [2] must have shape [2,3]");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){2, 3});
    idx = input("idx", RLX_I64, 2, (int64_t[]){2, 3});
    upd = input("upd", RLX_F32, 2, (int64_t[]){2, 3});
    node("ScatterElements", 3, (int[]){x, idx, upd}, "reduction", "max", NULL, 0);
    fails_with("reduction 'max' is not one of none, add or mul");

    g = rlx_graph_new("t.rlxg");
    x = input("x", RLX_F32, 2, (int64_t[]){2, 3});
    idx = input("idx", RLX_I64, 2, (int64_t[]){3, 1});
    node("GatherND", 2, (int[]){x, idx}, NULL, NULL, "batch_dims", 1);
    fails_with("batch axis 0 differs");
}
