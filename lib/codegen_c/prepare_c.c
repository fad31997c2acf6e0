/* prepare_c.c - the C target's prepare: weights packed for its GEMM at
 * compile time, Winograd, fused pointwise + depthwise bands.
 * require: fused, scheduled
 *
 * These are the C target's own choices (target.h: prepare), made on the
 * graph after fusion and before the memory plan, because they change the
 * weights and the buffers; no other target runs them.
 *
 * The GEMM (rk_gemm.c) copies B into cache-sized panels before it
 * multiplies. When B is a weight, that copy is the same every run, so it is
 * done here, once: the MatMul or Gemm node reads a new weight holding B in
 * the packed layout (rlx_b_packed = 1), and the original B drops out of the
 * weights file unless something else reads it. The packed layout depends only
 * on (N, K), so the result is bit-for-bit the run-time packing's.
 */
#include <string.h>

#include "rlx.h"
#include "../../runtime_min/rk_gemm.h"
#include "../../runtime_min/rlx_rt.h"
#include "../passes/passes.h"
#include "c.h"

/* The weight's floats, copied to aligned memory (weight bytes may sit
 * unaligned in the model file). */
static float *aligned_copy(const RlxValue *w) {
    float *src = rlx_alloc((size_t)rlx_value_bytes(w));
    memcpy(src, w->data, (size_t)rlx_value_bytes(w));
    return src;
}

/* Input k of node (1 for replace_weight) becomes a new 1-D f32 weight
 * holding `bytes` of packed data, named after the original weight, `what`
 * and the node. */
static void replace_input(RlxGraph *g, int node, int k, const char *what, const float *packed, size_t bytes) {
    int wv = g->n[node].in[k];
    int pv = rlx_value_add(g, rlx_fmt("%s.%s_for_%s", g->v[wv].name, what, g->n[node].name));
    RlxValue *p = &g->v[pv];
    p->dtype = RLX_F32;
    p->rank = 1;
    p->dims[0] = (int64_t)(bytes / sizeof(float));
    p->flags = RLX_V_WEIGHT;
    p->producer = -1;
    p->data = (const uint8_t *)packed;
    g->n[node].in[k] = pv;
}

static void replace_weight(RlxGraph *g, int node, const char *what, const float *packed, size_t bytes) {
    replace_input(g, node, 1, what, packed, bytes);
}

/* A conv's kernel shape moves to its attribute before its weights become
 * 1-D (infer.c reads it from there for packed weights). */
static void keep_kernel_shape(RlxGraph *g, int node) {
    if (rlx_attr_get(&g->n[node], "kernel_shape")) return;
    const RlxValue *w = &g->v[g->n[node].in[1]];
    int nk = w->rank - 2;
    int64_t dims[RLX_MAX_RANK];
    for (int i = 0; i < nk; i++) dims[i] = w->dims[i + 2];
    RlxAttr *ks = rlx_attr_add(g, node, "kernel_shape", RLX_A_INTS);
    ks->n = nk;
    ks->ints = rlx_alloc(sizeof(int64_t) * (size_t)(nk + 1));
    for (int i = 0; i < nk; i++) ks->ints[i] = dims[i];
}

/* Multiply-add slots a GEMM row of n columns takes in 16-wide register
 * tiles: a ragged last tile costs a whole one. */
static double tile_cols(int64_t n) { return (double)((n + 15) / 16 * 16); }

/* Whether a convolution's GEMM runs transposed (rk_convgemm.c: y^T = col^T
 * W^T, the weights as the pre-packed B): where the output plane (ncols) is
 * small and ragged against the 16-wide tiles (7x7 = 49 columns fill 49 of
 * 64 lanes) and the output channels are not, by the same multiply-add count
 * plus the transposed form's extra work: packing col^T and turning the
 * product, about 4 multiply-adds' time per float (measured on MobileNetV2's
 * layers: 28x28 planes with 32 channels lose; 14x14 planes with 64-96
 * channels are even at one thread and 15% faster at two, where the
 * channels split evenly; 7x7 planes win by 20-30%). Only for small planes:
 * the product (columns x channels, up to 1 MB) sits in scratch before it
 * is turned. */
static int conv_transposed(int64_t ocg, int64_t kdim, int64_t ncols) {
    /* A plane of a few positions (a squeeze-excitation block's 1x1 layers on
     * a pooled 1x1 plane): upright, its one column fills 1 of a tile's 16;
     * turned, it is a few rows against the packed weights, streamed once
     * (RK_SGEMM_FEW_ROWS: what the GEMM calls a few rows). */
    if (ncols <= RK_SGEMM_FEW_ROWS) return 1;
    if (ncols > 1024 || ncols * ocg > 256 * 1024 || ocg < 32) return 0;
    /* Long products into many channels on a 14x14 plane (ResNeXt's third
     * stage: 1024 -> 512 and 512 -> 1024) are 6-8% faster upright, where the
     * count below calls them even: the transposed kernel reads its K = 512
     * to 1024 rows of the plane in place, and the turn moves 100-200 K
     * floats (a Sapphire Rapids Xeon, single layers at 1 and 2 threads). */
    if (ncols >= 128 && kdim >= 512 && ocg >= 256) return 0;
    double upright = (double)((ocg + 5) / 6 * 6) * tile_cols(ncols) * (double)kdim;
    double turned = (double)ncols * tile_cols(ocg) * (double)kdim +
                    4.0 * (double)ncols * (double)(kdim + ocg);
    return turned < upright;
}

/* A first layer over a few input channels (rk_convgemm.c method 2: direct
 * with AVX-512, else the GEMM on these weights unpacked): its weights stay
 * as they are. MobileNetV2's stem (3x3 s2, 3 -> 32) and ResNet-18's (7x7
 * s2, 3 -> 64). */
static int conv_stem(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = &g->v[n->in[0]], *y = &g->v[n->out[0]];
    if (x->rank != 4 || x->dims[1] > 4 || rlx_attr_i(n, "group", 1) != 1 || y->dims[1] % 16 || y->dims[3] < 16)
        return 0;
    RlxWindow w;
    rlx_conv_geometry(g, node, &w);
    return w.nsp == 2 && w.k[0] <= 7 && w.k[1] <= 7 && w.d[0] == 1 && w.d[1] == 1 && w.s[1] >= 1 && w.s[1] <= 2 &&
           w.pad_begin[0] >= 0 && w.pad_begin[1] >= 0;
}

/* A grouped convolution of a few output channels per group (rk_convgemm.c
 * method 3: direct with AVX-512 or AVX2, else the GEMM on these weights
 * unpacked):
 * its weights stay as they are too. ResNeXt's and RegNet's 3x3. */
static int conv_grouped(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = &g->v[n->in[0]], *y = &g->v[n->out[0]];
    int64_t group = rlx_attr_i(n, "group", 1);
    if (x->rank != 4 || group < 2) return 0;
    RlxWindow w;
    rlx_conv_geometry(g, node, &w);
    return w.nsp == 2 && rk_conv2d_grouped_ok(group, x->dims[1] / group, y->dims[1] / group, w.k[0], w.k[1], w.s[0],
                                              w.s[1], w.d[0], w.d[1], w.pad_begin[0], w.pad_begin[1]);
}

/* Conv weights (O, I/group, kh, kw) are the GEMM's A, one block per group
 * (rlx_a_packed = 1), or, transposed, its B (rlx_a_packed = 2); the kernel
 * shape moves to the attribute, as the packed weight is 1-D. Stems keep
 * theirs (rlx_stem), and so do grouped convolutions of few channels per
 * group (rlx_grouped). */
static void prepack_conv(RlxGraph *g, int node) {
    RlxNode *n = &g->n[node];
    int wv = n->in[1];
    if (!rlx_is_const(g, wv) || !rlx_c_all_f32(g, node) || !rlx_c_conv_uses_gemm(g, node)) return;
    if (conv_stem(g, node)) {
        rlx_attr_add(g, node, "rlx_stem", RLX_A_INT)->i = 1;
        return;
    }
    if (conv_grouped(g, node)) {
        rlx_attr_add(g, node, "rlx_grouped", RLX_A_INT)->i = 1;
        return;
    }
    const RlxValue *w = &g->v[wv], *y = &g->v[n->out[0]];
    int64_t group = rlx_attr_i(n, "group", 1), oc = w->dims[0], ocg = oc / group, kdim = 1, ncols = 1;
    for (int i = 1; i < w->rank; i++) kdim *= w->dims[i];
    for (int i = 2; i < y->rank; i++) ncols *= y->dims[i];
    if (!ocg || !kdim) return;
    int turned = conv_transposed(ocg, kdim, ncols);
    size_t per = turned ? rk_sgemm_packed_b_size(ocg, kdim) : rk_sgemm_packed_a_size(ocg, kdim);
    float *src = aligned_copy(w);
    float *packed = rlx_alloc(per * (size_t)group);
    for (int64_t gi = 0; gi < group; gi++) {
        float *dst = packed + gi * (int64_t)(per / sizeof(float));
        if (turned) rk_sgemm_pack_b(ocg, kdim, src + gi * ocg * kdim, kdim, 1, dst);
        else rk_sgemm_pack_a(ocg, kdim, src + gi * ocg * kdim, kdim, 0, dst);
    }
    keep_kernel_shape(g, node);
    replace_weight(g, node, "packed", packed, per * (size_t)group);
    rlx_attr_add(g, node, "rlx_a_packed", RLX_A_INT)->i = turned ? 2 : 1;
}

/* ---- Winograd 3x3 convolutions (rk_wino.c) ----
 * A 3x3, stride-1, ungrouped f32 convolution with constant weights may run
 * as F(m x m, 3 x 3): the weights are transformed and packed here, and the
 * choice among direct (im2col + GEMM), m = 2 and m = 4 is made by a cost in
 * multiply-adds: the GEMM work with its register-tile padding (12 rows, 16
 * columns), plus the transformed weights' bytes (they grow from 9 to (m+2)^2
 * floats per kernel and are streamed once per run) and the transforms'
 * traffic. Many tiles favour m = 4; a 7x7 plane with wide channels favours
 * m = 2 or the direct method. */
typedef struct {
    int64_t m, tb, ocb;
    double cost;
} WinoPlan;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t up(int64_t a, int64_t r) { return ceil_div(a, r) * r; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

enum { WINO_L2_BYTES = 1 << 20 };   /* V and M of one task should sit in about this much */

/* Task i's cost in wino_plan's balance (tasks block-major, chunks inside):
 * its block's tiles in whole 16-column register tiles, + 8 for the block. */
static int64_t wino_task_cost(int64_t tiles, int64_t tb, int64_t chunks, int64_t i) {
    return up(min64(tb, tiles - i / chunks * tb), 16) + 8;
}

static WinoPlan wino_plan(int64_t m, int64_t c, int64_t oc, int64_t oh, int64_t ow) {
    int64_t a2 = (m + 2) * (m + 2), tiles = ceil_div(oh, m) * ceil_div(ow, m);
    /* the fewest chunks of output channels that, with the tile blocks, give
     * a few tasks to share among threads */
    WinoPlan best = {m, 16, oc, 0};
    for (int64_t nchunks = 1;; nchunks++) {
        int64_t ocb = up(ceil_div(oc, nchunks), 12);
        if (ocb > oc) ocb = oc;
        int64_t tbmax = WINO_L2_BYTES / (a2 * (c + ocb) * 4) / 16 * 16;
        if (tbmax < 16) tbmax = 16;
        if (tbmax > up(tiles, 16)) tbmax = up(tiles, 16);
        if (tbmax > 2048) tbmax = 2048;
        /* the block size that balances two threads best, then the larger:
         * the tasks (block-major, chunks inside) cut in two contiguous
         * halves at the best point, each task its tiles + 8 (a block's
         * fixed cost), the last block as short as it is (counted whole, 196
         * tiles in blocks of 64 split 128 / 68: SqueezeNet's 55x55 layers
         * ran 1.1x faster on two threads than on one) but its tiles
         * rounded up to the GEMM's 16-column register tiles, which cost as
         * much ragged as full (49 tiles: blocks of 48 left one thread three
         * tasks of 48 tiles and the other three of 1; blocks of 32 and 17
         * make six tasks of two register tiles' columns each, SqueezeNet's
         * 27x27 layers 209 -> 166 and 199 -> 174 us at two threads) */
        int64_t tb = 16, span = -1, chunks = ceil_div(oc, ocb);
        for (int64_t cand = 16; cand <= tbmax; cand += 16) {
            int64_t ntask = ceil_div(tiles, cand) * chunks, total = 0, acc = 0, s = -1;
            for (int64_t i = 0; i < ntask; i++) total += wino_task_cost(tiles, cand, chunks, i);
            for (int64_t i = 0; i < ntask; i++) {
                acc += wino_task_cost(tiles, cand, chunks, i);
                int64_t half = acc > total - acc ? acc : total - acc;
                if (s < 0 || half < s) s = half;
            }
            if (span < 0 || s <= span) {
                span = s;
                tb = cand;
            }
        }
        best = (WinoPlan){m, tb, ocb, 0};
        if (ceil_div(tiles, tb) * chunks >= 4 || ocb <= 48 || nchunks >= 8) break;
    }
    int64_t nb = ceil_div(tiles, best.tb), padded = (nb - 1) * best.tb + up(tiles - (nb - 1) * best.tb, 16), rows = 0;
    int64_t chunks = ceil_div(oc, best.ocb);
    for (int64_t q = 0; q < chunks; q++) rows += up(oc - q * best.ocb < best.ocb ? oc - q * best.ocb : best.ocb, 12);
    best.cost = (double)a2 * (double)rows * (double)c * (double)padded + (double)a2 * (double)oc * (double)c * 4.0 +
                (double)a2 * (double)(c * chunks + oc) * (double)padded * 2.0;
    return best;
}

/* m (2 or 4) and the plan if Winograd pays for this node, else 0. */
static int64_t wino_choose(const RlxGraph *g, int node, WinoPlan *plan) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = &g->v[n->in[0]], *w = &g->v[n->in[1]], *y = &g->v[n->out[0]];
    if (x->rank != 4 || !rlx_c_all_f32(g, node) || w->rank != 4 || rlx_attr_i(n, "group", 1) != 1) return 0;
    RlxWindow win;
    rlx_conv_geometry(g, node, &win);
    if (win.nsp != 2 || win.k[0] != 3 || win.k[1] != 3 || win.s[0] != 1 || win.s[1] != 1 || win.d[0] != 1 ||
        win.d[1] != 1 || win.pad_begin[0] < 0 || win.pad_begin[1] < 0)
        return 0;
    int64_t c = x->dims[1], oc = y->dims[1], oh = y->dims[2], ow = y->dims[3];
    if (c < 8 || oc < 8 || oh < 2 || ow < 2 || c > (1 << 20) || oc > (1 << 20)) return 0;
    double direct = (double)up(oc, 12) * 9.0 * (double)c * (double)up(oh * ow, 16) + 9.0 * (double)oc * (double)c * 4.0 +
                    9.0 * (double)c * (double)(oh * ow);
    WinoPlan p2 = wino_plan(2, c, oc, oh, ow), p4 = wino_plan(4, c, oc, oh, ow);
    *plan = p4.cost <= p2.cost ? p4 : p2;
    return plan->cost < 0.8 * direct ? plan->m : 0;
}

static int prepack_wino(RlxGraph *g, int node) {
    RlxNode *n = &g->n[node];
    int wv = n->in[1];
    if (!rlx_is_const(g, wv) || g->v[wv].dtype != RLX_F32) return 0;
    WinoPlan plan;
    int64_t m = wino_choose(g, node, &plan);
    if (!m) return 0;
    const RlxValue *w = &g->v[wv];
    int64_t oc = w->dims[0], c = w->dims[1], a2 = (m + 2) * (m + 2);
    float *src = aligned_copy(w);
    float *tmp = rlx_alloc(sizeof(float) * (size_t)(a2 * oc * c));
    size_t bytes = rk_wino_weights_size(m, oc, c, plan.ocb);
    float *packed = rlx_alloc(bytes);
    rk_wino_pack_weights(m, oc, c, plan.ocb, src, tmp, packed);
    keep_kernel_shape(g, node);
    replace_weight(g, node, "winograd", packed, bytes);
    rlx_attr_add(g, node, "rlx_wino", RLX_A_INT)->i = m;
    rlx_attr_add(g, node, "rlx_wino_tb", RLX_A_INT)->i = plan.tb;
    rlx_attr_add(g, node, "rlx_wino_ocb", RLX_A_INT)->i = plan.ocb;
    return 1;
}

/* ---- a 1x1 expansion and the depthwise 3x3 that reads it (rk_convgemm.c
 * conv_pwdw_f32) ----
 * Where the expanded tensor is over the L2 of a core (MobileNetV2's first
 * blocks: 96 x 112 x 112 floats, 4.8 MB), the pair runs in bands and that
 * tensor is never written whole. The depthwise node takes over: its input
 * 0 becomes the 1x1's input, inputs 4 and 5 the packed 1x1 weights and
 * bias, attributes rlx_pw* the 1x1's activation; the 1x1 node dies and the
 * expanded value, with no producer or reader left, is not planned
 * (MobileNetV2's arena 6.0 -> 3.2 MB). Bands of 512 KB of expanded rows:
 * for 16 -> 96 at 112x112 (the two kernels apart: 449 us at one thread),
 * 256 KB, 512 KB, 1 MB, 2 MB bands gave 482, 434, 428, 462 us at one
 * thread, and 512 KB 239 us against 1 MB's 275 at two. */
enum { PWDW_MIN_BYTES = 1 << 20, PWDW_BAND_BYTES = 512 * 1024 };

/* The depthwise node takes over the 1x1 node an: its inputs become x, w2,
 * b2, -, w1, b1 and w1's int8 scales (-1 where absent), and rlx_pw (1 or
 * 2), the bands' rows (kind 1) and the 1x1's activation go in its
 * attributes. */
static void pwdw_take(RlxGraph *g, int node, int an, int kind, int64_t rows) {
    RlxNode *b = &g->n[node], *a = &g->n[an];
    int *in = rlx_alloc(sizeof(int) * 7);
    in[0] = a->in[0];
    in[1] = b->in[1];
    in[2] = b->nin > 2 ? b->in[2] : -1;
    in[3] = -1;
    in[4] = a->in[1];
    in[5] = a->nin > 2 ? a->in[2] : -1;
    in[6] = a->nin > 4 ? a->in[4] : -1;   /* int8 weights' scales */
    b->in = in;
    b->nin = 7;
    rlx_attr_add(g, node, "rlx_pw", RLX_A_INT)->i = kind;
    if (kind == 1) rlx_attr_add(g, node, "rlx_pw_rows", RLX_A_INT)->i = rows;
    rlx_attr_add(g, node, "rlx_pw_act", RLX_A_INT)->i = rlx_attr_i(a, "rlx_act", 0);
    rlx_attr_add(g, node, "rlx_pw_act_a", RLX_A_FLOAT)->f = rlx_attr_f(a, "rlx_act_a", 0);
    rlx_attr_add(g, node, "rlx_pw_act_b", RLX_A_FLOAT)->f = rlx_attr_f(a, "rlx_act_b", 0);
    a->dead = 1;
}

static int pwdw_try(RlxGraph *g, int node, const int *nuse) {
    RlxNode *b = &g->n[node];
    if (b->op != RLX_OP_CONV || b->nin < 2 || (b->nin > 3 && b->in[3] >= 0) || rlx_attr_get(b, "rlx_a_packed") ||
        rlx_attr_get(b, "rlx_wino"))
        return 0;
    int ev = b->in[0];
    const RlxValue *e = &g->v[ev], *y = &g->v[b->out[0]], *w2 = &g->v[b->in[1]];
    /* mixed: some operand stored in another type than f32 (rk_mixed.c): the
     * 1x1's weights then stay plain, and the depthwise's must be f32 */
    int an0 = e->producer, mixed = !rlx_c_all_f32(g, node) || (an0 >= 0 && !rlx_c_all_f32(g, an0));
    if (e->rank != 4 || (!mixed && (e->dtype != RLX_F32 || y->dtype != RLX_F32)) || !rlx_is_const(g, b->in[1]) ||
        w2->rank != 4 ||
        w2->dtype != RLX_F32 || rlx_attr_i(b, "group", 1) != e->dims[1] || y->dims[1] != e->dims[1] ||
        w2->dims[0] != e->dims[1] || w2->dims[1] != 1 || nuse[ev] != 1 || (e->flags & RLX_V_OUTPUT) ||
        rlx_value_numel(e) * 4 / (e->dims[0] ? e->dims[0] : 1) < PWDW_MIN_BYTES)
        return 0;
    RlxWindow win;
    rlx_conv_geometry(g, node, &win);
    if (win.nsp != 2 || win.k[0] != 3 || win.k[1] != 3 || win.d[0] != 1 || win.d[1] != 1 || win.s[0] < 1 ||
        win.s[0] > 2 || win.s[1] < 1 || win.s[1] > 2 || win.pad_begin[0] < 0 || win.pad_begin[1] < 0)
        return 0;
    int an = e->producer;
    if (an < 0) return 0;
    RlxNode *a = &g->n[an];
    if (a->dead || a->op != RLX_OP_CONV || rlx_attr_i(a, "rlx_a_packed", 0) != (mixed ? 0 : 1) ||
        (a->nin > 3 && a->in[3] >= 0) || rlx_attr_i(a, "group", 1) != 1)
        return 0;
    const RlxValue *x = &g->v[a->in[0]];
    RlxWindow aw;
    rlx_conv_geometry(g, an, &aw);
    if (x->rank != 4 || (!mixed && x->dtype != RLX_F32) || aw.nsp != 2 || aw.k[0] != 1 || aw.k[1] != 1 || aw.s[0] != 1 ||
        aw.s[1] != 1 || aw.pad_begin[0] || aw.pad_begin[1] || x->dims[2] != e->dims[2] || x->dims[3] != e->dims[3])
        return 0;
    int64_t ch = e->dims[1], wd = e->dims[3], sh = win.s[0];
    int64_t erows = PWDW_BAND_BYTES / 4 / (ch * wd);
    if (erows < 3) erows = 3;
    pwdw_take(g, node, an, 1, (erows - 3) / sh + 1);
    return 1;
}

/* A depthwise convolution after a transposed 1x1 (rlx_a_packed 2: a small
 * plane) whose plane the lanes kernel holds whole (rk_conv_pwdw_small_ok):
 * conv_pwdw_small_f32, which keeps the 1x1's positions x channels product
 * for the depthwise instead of turning it into planes and back (EfficientNet's
 * and MobileNetV3's 14x14 and 7x7 blocks). All f32; the depthwise's weights
 * constant; any kernel, stride, dilation and activations; no residual on
 * either; the 1x1's output read by the depthwise only. The same rewiring as
 * pwdw_try, with rlx_pw 2. */
static int pwdw_small_try(RlxGraph *g, int node, const int *nuse) {
    RlxNode *b = &g->n[node];
    if (b->op != RLX_OP_CONV || b->nin < 2 || (b->nin > 3 && b->in[3] >= 0) || rlx_attr_get(b, "rlx_a_packed") ||
        rlx_attr_get(b, "rlx_wino") || rlx_attr_get(b, "rlx_pw") || !rlx_c_all_f32(g, node))
        return 0;
    int ev = b->in[0], an = g->v[ev].producer;
    const RlxValue *e = &g->v[ev], *y = &g->v[b->out[0]], *w2 = &g->v[b->in[1]];
    if (an < 0 || e->rank != 4 || !rlx_is_const(g, b->in[1]) || w2->rank != 4 ||
        rlx_attr_i(b, "group", 1) != e->dims[1] || y->dims[1] != e->dims[1] || w2->dims[0] != e->dims[1] ||
        w2->dims[1] != 1 || nuse[ev] != 1 || (e->flags & RLX_V_OUTPUT))
        return 0;
    RlxWindow win;
    rlx_conv_geometry(g, node, &win);
    if (win.nsp != 2 || !rk_conv_pwdw_small_ok(e->dims[2], e->dims[3], y->dims[2], y->dims[3], win.k[0], win.k[1],
                                               win.s[0], win.s[1], win.d[0], win.d[1], win.pad_begin[0],
                                               win.pad_begin[1]))
        return 0;
    RlxNode *a = &g->n[an];
    if (a->dead || a->op != RLX_OP_CONV || rlx_attr_i(a, "rlx_a_packed", 0) != 2 || (a->nin > 3 && a->in[3] >= 0) ||
        rlx_attr_i(a, "group", 1) != 1 || !rlx_c_all_f32(g, an))
        return 0;
    const RlxValue *x = &g->v[a->in[0]];
    RlxWindow aw;
    rlx_conv_geometry(g, an, &aw);
    if (x->rank != 4 || aw.nsp != 2 || aw.k[0] != 1 || aw.k[1] != 1 || aw.s[0] != 1 || aw.s[1] != 1 ||
        aw.pad_begin[0] || aw.pad_begin[1] || x->dims[2] != e->dims[2] || x->dims[3] != e->dims[3])
        return 0;
    pwdw_take(g, node, an, 2, 0);
    return 1;
}

/* Per value: how many inputs of live nodes read it. */
static int *input_uses(const RlxGraph *g) {
    int *nuse = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] >= 0) nuse[g->n[i].in[j]]++;
    }
    return nuse;
}

static void fuse_pw_dw(RlxGraph *g) {
    int *nuse = input_uses(g);
    int fused = 0;
    for (int s = 0; s < g->norder; s++) fused += pwdw_try(g, g->order[s], nuse) || pwdw_small_try(g, g->order[s], nuse);
    if (fused) rlx_schedule(g);
}

/* ---- a stem convolution and the max pooling that reads it (rk_conv.c
 * conv_pool_f32) ----
 * SqueezeNet's and ResNet's first layers write a plane of 64 channels at
 * half the image's size (SqueezeNet: 3.2 MB) that a max pooling reads once.
 * The stem (rlx_stem) takes over the pooling: its output becomes the
 * pooling's, the pooling's window goes in rlx_cp_* attributes, the pooling
 * node dies, and the plane, with no producer or reader left, is not planned
 * (SqueezeNet's arena 3.9 -> 1.9 MB). The pair
 * runs in bands of pooled rows whose convolution rows, at most
 * CP_BAND_BYTES, stay in scratch. The rows two bands share are computed
 * twice (~7% more convolution), which pays where the convolution is cheap
 * against the plane's trip through L3: taps (channels x kernel) at most
 * CP_MAX_TAPS. SqueezeNet's 3x3 over 3 channels (27): the whole model 0.91x
 * at two threads, 0.99x at one; ResNet's 7x7 (147) ran slower fused (ResNeXt-50,
 * per step: 1555 against 1242 + 171 us at one thread, 972 against 729 +
 * 134 at two). f32, no residual, the plane read by the pooling only; the
 * pooling 2-D without indices or dilation. */
enum { CP_BAND_BYTES = 512 * 1024, CP_MAX_TAPS = 32 };

static int conv_pool_try(RlxGraph *g, int node, const int *nuse) {
    RlxNode *a = &g->n[node];
    if (a->dead || a->op != RLX_OP_CONV || !rlx_attr_i(a, "rlx_stem", 0) || (a->nin > 3 && a->in[3] >= 0) ||
        !rlx_c_all_f32(g, node))
        return 0;
    int cv = a->out[0];
    const RlxValue *cy = &g->v[cv];
    if (nuse[cv] != 1 || (cy->flags & RLX_V_OUTPUT) || cy->rank != 4 || cy->dtype != RLX_F32) return 0;
    int pn = -1;
    for (int i = 0; i < g->nn && pn < 0; i++)
        if (!g->n[i].dead && g->n[i].nin >= 1 && g->n[i].in[0] == cv) pn = i;
    if (pn < 0) return 0;
    RlxNode *p = &g->n[pn];
    if (p->op != RLX_OP_MAXPOOL || p->nin != 1 || (p->nout > 1 && p->out[1] >= 0)) return 0;
    const RlxValue *py = &g->v[p->out[0]];
    if (py->rank != 4 || py->dtype != RLX_F32 || !rlx_value_numel(py)) return 0;
    RlxWindow cw, pw;
    rlx_conv_geometry(g, node, &cw);
    rlx_conv_geometry(g, pn, &pw);
    if (cw.nsp != 2 || g->v[a->in[0]].dims[1] * cw.k[0] * cw.k[1] > CP_MAX_TAPS || cw.out[0] != cy->dims[2] ||
        cw.out[1] != cy->dims[3] || pw.nsp != 2 || pw.d[0] != 1 || pw.d[1] != 1 || pw.pad_begin[0] < 0 ||
        pw.pad_begin[1] < 0)
        return 0;
    int64_t crows = CP_BAND_BYTES / 4 / (cy->dims[1] * cy->dims[3]);
    int64_t rows = crows > pw.k[0] ? (crows - pw.k[0]) / pw.s[0] + 1 : 1;
    rlx_attr_add(g, node, "rlx_cp", RLX_A_INT)->i = 1;
    rlx_attr_add(g, node, "rlx_cp_kh", RLX_A_INT)->i = pw.k[0];
    rlx_attr_add(g, node, "rlx_cp_kw", RLX_A_INT)->i = pw.k[1];
    rlx_attr_add(g, node, "rlx_cp_sh", RLX_A_INT)->i = pw.s[0];
    rlx_attr_add(g, node, "rlx_cp_sw", RLX_A_INT)->i = pw.s[1];
    rlx_attr_add(g, node, "rlx_cp_pt", RLX_A_INT)->i = pw.pad_begin[0];
    rlx_attr_add(g, node, "rlx_cp_pl", RLX_A_INT)->i = pw.pad_begin[1];
    rlx_attr_add(g, node, "rlx_cp_rows", RLX_A_INT)->i = rows;
    a = &g->n[node];
    a->out[0] = p->out[0];
    g->v[p->out[0]].producer = node;
    p->dead = 1;
    return 1;
}

static void fuse_conv_pool(RlxGraph *g) {
    int *nuse = input_uses(g);
    int fused = 0;
    for (int s = 0; s < g->norder; s++) fused += conv_pool_try(g, g->order[s], nuse);
    if (fused) rlx_schedule(g);
}

/* An RNN/GRU/LSTM's W and R packed for the GEMM's few-rows entry, per
 * direction, for the f32 recurrent kernel (rk_rnn.c, rk_rnn_f32): W_d^T
 * (K = input, N = gates x hidden), R_d^T (K = hidden); GRU's R in two
 * parts, its z and r rows and its h rows, which it multiplies apart. The
 * node keeps its hidden size and the parts' offsets in attributes, since
 * W and R become 1-D (ext_rnn.c lowers it to rk_rnn_f32). */
static size_t pack_rows(const float *src, int64_t rows, int64_t k, float *dst) {
    size_t bytes = rk_sgemm_packed_b_size(rows, k);
    if (dst) rk_sgemm_pack_b(rows, k, src, k, 1, dst);
    return bytes / sizeof(float);
}

static void prepack_rnn(RlxGraph *g, int node) {
    if (!rlx_rnn_packable(g, node)) return;
    RlxNode *n = &g->n[node];
    const RlxValue *w = &g->v[n->in[1]], *r = &g->v[n->in[2]];
    int64_t dirs = w->dims[0], gh = w->dims[1], input = w->dims[2], hid = r->dims[2];
    int gru = n->op == RLX_OP_GRU;
    if (!input || !gh) return;
    int64_t split = gru ? pack_rows(NULL, 2 * hid, hid, NULL) : 0;
    int64_t wstep = pack_rows(NULL, gh, input, NULL);
    int64_t rstep = gru ? split + pack_rows(NULL, hid, hid, NULL) : pack_rows(NULL, gh, hid, NULL);
    float *ws = aligned_copy(w), *rs = aligned_copy(r);
    float *wp = rlx_alloc(sizeof(float) * (size_t)(dirs * wstep)), *rp = rlx_alloc(sizeof(float) * (size_t)(dirs * rstep));
    for (int64_t d = 0; d < dirs; d++) {
        pack_rows(ws + d * gh * input, gh, input, wp + d * wstep);
        const float *rd = rs + d * gh * hid;
        if (gru) {
            pack_rows(rd, 2 * hid, hid, rp + d * rstep);
            pack_rows(rd + 2 * hid * hid, hid, hid, rp + d * rstep + split);
        } else {
            pack_rows(rd, gh, hid, rp + d * rstep);
        }
    }
    replace_input(g, node, 1, "packed", wp, sizeof(float) * (size_t)(dirs * wstep));
    replace_input(g, node, 2, "packed", rp, sizeof(float) * (size_t)(dirs * rstep));
    rlx_attr_add(g, node, "rlx_rnn_packed", RLX_A_INT)->i = 1;
    rlx_attr_add(g, node, "rlx_rnn_hidden", RLX_A_INT)->i = hid;
    rlx_attr_add(g, node, "rlx_rnn_w_step", RLX_A_INT)->i = wstep;
    rlx_attr_add(g, node, "rlx_rnn_r_step", RLX_A_INT)->i = rstep;
    rlx_attr_add(g, node, "rlx_rnn_r_split", RLX_A_INT)->i = split;
}

void rlx_c_prepare(RlxGraph *g, const RlxOptions *opt) {
    if (opt->blas) return;   /* OpenBLAS takes plain operands */
    int winograd = opt->winograd;
    for (int s = 0; s < g->norder; s++) {
        int node = g->order[s];
        RlxNode *n = &g->n[node];
        if (n->op == RLX_OP_CONV) {
            if (!winograd || !prepack_wino(g, node)) prepack_conv(g, node);
            continue;
        }
        if (n->op == RLX_OP_RNN || n->op == RLX_OP_GRU || n->op == RLX_OP_LSTM) {
            prepack_rnn(g, node);
            continue;
        }
        if (n->op != RLX_OP_MATMUL && n->op != RLX_OP_GEMM) continue;
        int bv = n->in[1];
        if (!rlx_is_const(g, bv) || !rlx_c_all_f32(g, node)) continue;
        const RlxValue *b = &g->v[bv];
        if (b->rank != 2) continue;   /* batched or 1-D MatMul weights stay as they are */
        int tb = rlx_attr_i(n, n->op == RLX_OP_MATMUL ? "rlx_trans_b" : "transB", 0) != 0;
        int64_t k = b->dims[tb], nn = b->dims[1 - tb], ldb = b->dims[1];
        if (!k || !nn) continue;
        size_t bytes = rk_sgemm_packed_b_size(nn, k);
        float *src = aligned_copy(b);
        float *packed = rlx_alloc(bytes);
        rk_sgemm_pack_b(nn, k, src, ldb, tb, packed);
        replace_weight(g, node, "packed", packed, bytes);
        rlx_attr_add(g, node, "rlx_b_packed", RLX_A_INT)->i = 1;
    }
    fuse_pw_dw(g);
    fuse_conv_pool(g);
}
