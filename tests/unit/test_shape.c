/* test_shape.c - the shape family: its kernels (rk_shape.c) called directly,
 * and inference of Shape/Size (folded to constants) and of the
 * data-dependent ops on constants.
 *
 * Every expected array is derived by hand in the comment beside it (NumPy
 * semantics: np.tile, np.broadcast_to, np.arange, np.eye, np.triu/np.tril,
 * np.cumsum, a stable sort for TopK).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"
#include "passes/passes.h"
#define TG_PASSES (TG_CHECK_ATTRS)
#include "testgraph.h"

static rk_ctx ctx = {1};

#define RUN(kernel, params, ins, outs) rk_##kernel(&ctx, &(params), (const void *const *)(ins), (void *const *)(outs))

Test(shape_kernels, tile_and_expand) {
    /* np.tile([[1, 2]], (2, 2)) = [[1,2,1,2],[1,2,1,2]] */
    int32_t x[2] = {1, 2}, y[8];
    rk_tile_params p = {4, 2, {1, 2}, {2, 4}};
    const void *in[1] = {x};
    void *out[1] = {y};
    cr_assert_eq(RUN(tile, p, in, out), RLX_OK);
    int32_t want[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    cr_assert_arr_eq(y, want, sizeof want);
    /* np.broadcast_to([[1],[2],[3]], (3, 2)) = [[1,1],[2,2],[3,3]] */
    int64_t e[3] = {1, 2, 3}, ey[6];
    rk_tile_params q = {8, 2, {3, 1}, {3, 2}};
    in[0] = e;
    out[0] = ey;
    cr_assert_eq(RUN(tile, q, in, out), RLX_OK);
    int64_t ewant[6] = {1, 1, 2, 2, 3, 3};
    cr_assert_arr_eq(ey, ewant, sizeof ewant);
}

Test(shape_kernels, fill) {
    uint16_t y[3];
    rk_fill_params p = {2, 3, 0xABCD};
    void *out[1] = {y};
    cr_assert_eq(RUN(fill, p, NULL, out), RLX_OK);
    for (int i = 0; i < 3; i++) cr_assert_eq(y[i], 0xABCD);
}

Test(shape_kernels, range) {
    /* np.arange(10, 0, -3, dtype=int32) = [10, 7, 4, 1] */
    int32_t y[4];
    rk_range_params p = {RLX_I32, 4, 0, 0, 10, -3};
    void *out[1] = {y};
    cr_assert_eq(RUN(range, p, NULL, out), RLX_OK);
    int32_t want[4] = {10, 7, 4, 1};
    cr_assert_arr_eq(y, want, sizeof want);
    /* np.arange(1, 2.5, 0.5) = [1, 1.5, 2] */
    float f[3];
    rk_range_params q = {RLX_F32, 3, 1.0, 0.5, 0, 0};
    out[0] = f;
    cr_assert_eq(RUN(range, q, NULL, out), RLX_OK);
    cr_assert(f[0] == 1.0f && f[1] == 1.5f && f[2] == 2.0f);
}

Test(shape_kernels, eye) {
    /* np.eye(3, 4, k=1): ones at (0,1), (1,2), (2,3) */
    float y[12];
    float one = 1.0f;
    int32_t bits;
    memcpy(&bits, &one, 4);
    rk_eye_params p = {4, 3, 4, 1, bits};
    void *out[1] = {y};
    cr_assert_eq(RUN(eye, p, NULL, out), RLX_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) cr_assert_eq(y[i * 4 + j], j - i == 1 ? 1.0f : 0.0f, "at %d,%d", i, j);
    /* k = -2: only (2, 0) */
    p.k = -2;
    cr_assert_eq(RUN(eye, p, NULL, out), RLX_OK);
    for (int i = 0; i < 12; i++) cr_assert_eq(y[i], i == 8 ? 1.0f : 0.0f, "at %d", i);
}

Test(shape_kernels, onehot) {
    /* indices [0, -1, 2], depth 3, axis 0 (output [depth, 3]): -1 means 2;
     * row d is [idx == d]: [1,0,0], [0,0,0], [0,1,1], scaled to off 0 / on 5 */
    int64_t idx[3] = {0, -1, 2};
    float vals[2] = {0, 5}, y[9];
    rk_onehot_params p = {4, 1, 3, 3, RLX_I64};
    const void *in[3] = {idx, NULL, vals};
    void *out[1] = {y};
    cr_assert_eq(RUN(onehot, p, in, out), RLX_OK);
    float want[9] = {5, 0, 0, 0, 0, 0, 0, 5, 5};
    cr_assert_arr_eq(y, want, sizeof want);
}

Test(shape_kernels, trilu) {
    int32_t x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y[9];
    /* np.triu(x) */
    rk_trilu_params p = {4, 1, 3, 3, 0, 1};
    const void *in[2] = {x, NULL};
    void *out[1] = {y};
    cr_assert_eq(RUN(trilu, p, in, out), RLX_OK);
    int32_t up[9] = {1, 2, 3, 0, 5, 6, 0, 0, 9};
    cr_assert_arr_eq(y, up, sizeof up);
    /* np.tril(x, -1), k from the run-time input */
    int64_t k = -1;
    in[1] = &k;
    p.upper = 0;
    cr_assert_eq(RUN(trilu, p, in, out), RLX_OK);
    int32_t lo[9] = {0, 0, 0, 4, 0, 0, 7, 8, 0};
    cr_assert_arr_eq(y, lo, sizeof lo);
    /* np.triu(x, 5): everything zero; np.tril(x, -5) too */
    k = 5;
    p.upper = 1;
    cr_assert_eq(RUN(trilu, p, in, out), RLX_OK);
    for (int i = 0; i < 9; i++) cr_assert_eq(y[i], 0);
}

Test(shape_kernels, cumsum) {
    int64_t x[6] = {1, 2, 3, 4, 5, 6}, y[6], axis = 1;
    /* np.cumsum([[1,2,3],[4,5,6]], axis=1) = [[1,3,6],[4,9,15]] */
    rk_cumsum_params p = {RLX_I64, 2, {2, 3}, RLX_I64, 0, 0};
    const void *in[2] = {x, &axis};
    void *out[1] = {y};
    cr_assert_eq(RUN(cumsum, p, in, out), RLX_OK);
    int64_t want[6] = {1, 3, 6, 4, 9, 15};
    cr_assert_arr_eq(y, want, sizeof want);
    /* exclusive + reverse on axis 0 (an i32 axis): row 1 is 0, row 0 is row 1 of x */
    int32_t ax0 = 0;
    in[1] = &ax0;
    rk_cumsum_params q = {RLX_I64, 2, {2, 3}, RLX_I32, 1, 1};
    cr_assert_eq(RUN(cumsum, q, in, out), RLX_OK);
    int64_t want2[6] = {4, 5, 6, 0, 0, 0};
    cr_assert_arr_eq(y, want2, sizeof want2);
    /* axis -1 is axis 1; axis 2 is out of range for rank 2 */
    axis = -1;
    in[1] = &axis;
    cr_assert_eq(RUN(cumsum, p, in, out), RLX_OK);
    cr_assert_arr_eq(y, want, sizeof want);
    axis = 2;
    cr_assert_eq(RUN(cumsum, p, in, out), RLX_E_RANGE);
}

Test(shape_kernels, topk_ties_and_nan) {
    /* [2, 5, 5, 1, 0], k 3 largest: 5 (1), 5 (2, the tie after the lower index), 2 (0) */
    float x[5] = {2, 5, 5, 1, 0}, v[3];
    int64_t ix[3];
    rk_topk_params p = {RLX_F32, 1, 5, 1, 3, 1};
    const void *in[1] = {x};
    void *out[2] = {v, ix};
    cr_assert_eq(RUN(topk, p, in, out), RLX_OK);
    cr_assert(v[0] == 5 && v[1] == 5 && v[2] == 2);
    cr_assert(ix[0] == 1 && ix[1] == 2 && ix[2] == 0);
    /* smallest 2: 0 (4), 1 (3) */
    p.k = 2;
    p.largest = 0;
    cr_assert_eq(RUN(topk, p, in, out), RLX_OK);
    cr_assert(v[0] == 0 && v[1] == 1 && ix[0] == 4 && ix[1] == 3);
    /* NaN counts as the largest */
    x[3] = NAN;
    p.largest = 1;
    p.k = 1;
    cr_assert_eq(RUN(topk, p, in, out), RLX_OK);
    cr_assert(isnan(v[0]) && ix[0] == 3);
}

Test(shape_kernels, topk_inner_axis) {
    /* x = [[1,6],[3,4],[2,5]], axis 0, k 2 largest:
     * column 0: 3 (1), 2 (2); column 1: 6 (0), 5 (2) */
    int32_t x[6] = {1, 6, 3, 4, 2, 5}, v[4];
    int64_t ix[4];
    rk_topk_params p = {RLX_I32, 1, 3, 2, 2, 1};
    const void *in[1] = {x};
    void *out[2] = {v, ix};
    cr_assert_eq(RUN(topk, p, in, out), RLX_OK);
    int32_t wv[4] = {3, 6, 2, 5};
    int64_t wi[4] = {1, 0, 2, 2};
    cr_assert_arr_eq(v, wv, sizeof wv);
    cr_assert_arr_eq(ix, wi, sizeof wi);
}

Test(shape_kernels, reverse_sequence) {
    /* x[t][b] = 10t + b, T 4, B 2, lens [3, 1]: batch 0 reverses t 0..2
     * (20, 10, 0, 30), batch 1 keeps its order (1, 11, 21, 31) */
    int32_t x[8] = {0, 1, 10, 11, 20, 21, 30, 31}, y[8];
    int64_t lens[2] = {3, 1};
    rk_reverse_sequence_params p = {4, 2, {4, 2}, 1, 0, RLX_I64};
    const void *in[2] = {x, lens};
    void *out[1] = {y};
    cr_assert_eq(RUN(reverse_sequence, p, in, out), RLX_OK);
    int32_t want[8] = {20, 1, 10, 11, 0, 21, 30, 31};
    cr_assert_arr_eq(y, want, sizeof want);
    lens[1] = 5;
    cr_assert_eq(RUN(reverse_sequence, p, in, out), RLX_E_RANGE);
}

/* ---- inference: Shape/Size fold, data-dependent ops on constants ---- */

static int add_node(const char *op, int nin, const int *in, const char *out) {
    int o = rlx_value_add(g, out);
    int n = rlx_node_add(g, out, (RlxOp)rlx_op_from_name(op), nin, in, 1, &o);
    return n;
}

Test(shape_infer, shape_and_size_fold) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 3, (int64_t[]){2, 3, 4});
    int s = add_node("Shape", 1, &x, "s");
    rlx_attr_add(g, s, "start", RLX_A_INT)->i = -2;   /* dims [1:] = [3, 4] */
    int z = add_node("Size", 1, &x, "z");
    graph_output(g->n[s].out[0]);
    graph_output(g->n[z].out[0]);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    const RlxValue *sv = &g->v[g->n[s].out[0]], *zv = &g->v[g->n[z].out[0]];
    cr_assert(g->n[s].dead && g->n[z].dead);
    cr_assert(rlx_is_const(g, g->n[s].out[0]) && rlx_is_const(g, g->n[z].out[0]));
    cr_assert(sv->dtype == RLX_I64 && sv->rank == 1 && sv->dims[0] == 2);
    cr_assert(rlx_weight_i64(sv, 0) == 3 && rlx_weight_i64(sv, 1) == 4);
    cr_assert(zv->rank == 0 && rlx_weight_i64(zv, 0) == 24);
}

Test(shape_infer, shape_feeds_reshape) {
    /* Reshape(y, Shape(x)): the shape input is constant once Shape folds */
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 2, (int64_t[]){2, 3});
    int y = input("y", RLX_F32, 1, (int64_t[]){6});
    int s = add_node("Shape", 1, &x, "s");
    int r = add_node("Reshape", 2, (int[]){y, g->n[s].out[0]}, "r");
    graph_output(g->n[r].out[0]);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    const RlxValue *rv = &g->v[g->n[r].out[0]];
    cr_assert(rv->rank == 2 && rv->dims[0] == 2 && rv->dims[1] == 3);
}

Test(shape_infer, nonzero_needs_constant) {
    g = rlx_graph_new("t.rlxg");
    int x = input("x", RLX_F32, 1, (int64_t[]){4});
    int n = add_node("NonZero", 1, &x, "nz");
    graph_output(g->n[n].out[0]);
    cr_assert_eq(run(), 1);
    cr_assert(strstr(rlx_diag.msg, "output shape depends on run-time data; rlxc needs static shapes"), "%s",
              rlx_diag.msg);
    cr_assert(strstr(rlx_diag.msg, "node 'nz' (NonZero)"), "%s", rlx_diag.msg);
}

Test(shape_infer, nonzero_on_constant) {
    /* np.nonzero([[0, 3], [2, 0]]) = rows [0, 1], cols [1, 0] */
    g = rlx_graph_new("t.rlxg");
    int x = rlx_value_add(g, "x");
    g->v[x].dtype = RLX_I32;
    g->v[x].rank = 2;
    g->v[x].dims[0] = g->v[x].dims[1] = 2;
    g->v[x].flags |= RLX_V_WEIGHT;
    int32_t *d = rlx_alloc(16);
    d[1] = 3;
    d[2] = 2;
    g->v[x].data = (const uint8_t *)d;
    int n = add_node("NonZero", 1, &x, "nz");
    graph_output(g->n[n].out[0]);
    cr_assert_eq(run(), 0, "%s", rlx_diag.msg);
    const RlxValue *v = &g->v[g->n[n].out[0]];
    cr_assert(v->rank == 2 && v->dims[0] == 2 && v->dims[1] == 2);
    cr_assert(rlx_weight_i64(v, 0) == 0 && rlx_weight_i64(v, 1) == 1);
    cr_assert(rlx_weight_i64(v, 2) == 1 && rlx_weight_i64(v, 3) == 0);
}
