/* select_c.c - the C target's choices on the neutral thunk list.
 *
 * The neutral lowering (lib/passes/lower.c) says what each thunk computes;
 * here the C target decides how its kernel library runs it:
 *   - conv2d_f32: the method (0 direct; 1 im2col + GEMM over blocks of nblk
 *     output columns; 2 the same for a stem, direct with AVX-512), the
 *     block, and whether its weights are pre-packed (prepare_c.c decided);
 *   - matmul_f32 / gemm_f32: a pre-packed B (prepare_c.c), and the GEMM's
 *     few-rows entry (rk_kernels.def KI) where a few rows meet pre-packed
 *     weights in a product too small to thread: the same bits, no scratch,
 *     and the general GEMM is not linked unless another thunk needs it;
 *   - conv_transpose_f32: scratch for its product path (col = W^T X);
 *   - rnn_f32 (RNN/GRU/LSTM on weights prepare_c.c packed): its projections
 *     and state, and its cell's own entry unless a product may take threads;
 *   - every kernel's per-thread scratch (GEMM packing, im2col, Winograd,
 *     the fused bands, DFT, determinants; rk_mixed.c's blocks where a
 *     convolution's or GEMM's operands are stored in other types than f32).
 * And it lowers the nodes its prepare made for itself, which the neutral
 * lowering doesn't know: Winograd convolutions and fused 1x1 + depthwise
 * bands. The reference evaluator (fold.c) uses the same choices for plain
 * operands, so folding and generated code agree.
 */
#include <string.h>

#include "rlx.h"
#include "../passes/passes.h"
#include "../target.h"
#include "../../runtime_min/rk_gemm.h"
#include "../../runtime_min/rk_rnn.h"
#include "../../runtime_min/rk_signal.h"
#include "c.h"

static const RlxValue *val(const RlxLower *L, int v) { return &L->g->v[v]; }

int rlx_c_all_f32(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    if (n->nin > 4 && n->in[4] >= 0) return 0;   /* int8 weights' scales */
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] >= 0 && g->v[n->in[i]].dtype != RLX_F32) return 0;
    return g->v[n->out[0]].dtype == RLX_F32;
}

/* A 2-D (or 1-D) f32 convolution runs as a GEMM unless it is too thin to
 * reuse anything (depthwise and the like): then the direct loop wins. */
int rlx_c_conv_uses_gemm(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = &g->v[n->in[0]], *w = &g->v[n->in[1]], *y = &g->v[n->out[0]];
    if (rlx_attr_i(n, "rlx_a_packed", 0)) return 1;   /* prepare_c.c decided, with the 4-D weights */
    if (x->rank > 4 || !rlx_c_all_f32(g, node)) return 0;
    int64_t group = rlx_attr_i(n, "group", 1);
    int64_t ocg = y->dims[1] / (group ? group : 1), kdim = (x->dims[1] / (group ? group : 1));
    for (int i = 2; i < w->rank; i++) kdim *= w->dims[i];
    return ocg >= 4 && kdim >= 8;
}

/* Output columns per GEMM block: the im2col block (K x nblk floats) fits in
 * about 1 MB (the L2 of one core), or 256 KB where the weights are small
 * (under 64 KB: the stem's 3x3 or 7x7 on 3 channels), whose blocks cost
 * nothing to stream again (ResNet-18's 7x7 stem 2% faster, MobileNetV2's
 * 9%; with 300 KB of weights, 4% slower), a multiple of 16 columns, at
 * least 16; the blocks split the columns evenly (a last block of a few
 * columns would stream all the weights again for almost no work), and a
 * plane up to half again as big as a block stays whole. */
static int64_t conv_block(int64_t ocg, int64_t kdim, int64_t ncols) {
    int64_t target = ocg * kdim * 4 <= 64 * 1024 ? 256 * 1024 : 1024 * 1024;
    int64_t most = (target / 4) / (kdim ? kdim : 1);
    most = most / 16 * 16;
    if (most < 16) most = 16;
    if (ncols <= most + most / 2) return ncols > 0 ? ncols : 1;
    int64_t nblocks = (ncols + most - 1) / most, nblk = (ncols + nblocks - 1) / nblocks;
    nblk = (nblk + 15) / 16 * 16;
    return nblk < ncols ? nblk : ncols;
}

static void lower_conv_wino(RlxLower *L, int node, const RlxWindow *w) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_conv_wino_f32, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    int has_bias = n->nin > 2 && n->in[2] >= 0, has_res = n->nin > 3 && n->in[3] >= 0;
    if (has_bias) rlx_tk_in(L, t, n->in[2]);
    if (has_res) rlx_tk_in(L, t, n->in[3]);
    rlx_tk_out(L, t, n->out[0]);
    int64_t m = rlx_attr_i(n, "rlx_wino", 0), tb = rlx_attr_i(n, "rlx_wino_tb", 16);
    int64_t ocb = rlx_attr_i(n, "rlx_wino_ocb", y->dims[1]);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "h", x->dims[2]);
    rlx_tk_i(t, "w", x->dims[3]);
    rlx_tk_i(t, "oc", y->dims[1]);
    rlx_tk_i(t, "oh", y->dims[2]);
    rlx_tk_i(t, "ow", y->dims[3]);
    rlx_tk_i(t, "pt", w->pad_begin[0]);
    rlx_tk_i(t, "pl", w->pad_begin[1]);
    rlx_tk_i(t, "m", m);
    rlx_tk_i(t, "tb", tb);
    rlx_tk_i(t, "ocb", ocb);
    rlx_tk_i(t, "has_bias", has_bias);
    rlx_tk_i(t, "has_res", has_res);
    rlx_tk_i(t, "act", rlx_attr_i(n, "rlx_act", 0));
    rlx_tk_f(t, "act_a", rlx_attr_f(n, "rlx_act_a", 0));
    rlx_tk_f(t, "act_b", rlx_attr_f(n, "rlx_act_b", 0));
    t->scratch = (int64_t)rk_wino_scratch(m, x->dims[1], ocb, tb);
}

/* The fields and operands the two fused 1x1 + depthwise kernels share: a
 * depthwise convolution that took over the 1x1 before it (prepare_c.c),
 * inputs x, w2, b2, -, w1, b1 (and w1's int8 scales), passed as x, w1,
 * [b1], w2, [b2]. */
static RlxThunk *lower_pwdw_common(RlxLower *L, int node, RlxKernelKind kernel, const RlxWindow *w) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, kernel, node);
    int has_b1 = n->in[5] >= 0, has_b2 = n->in[2] >= 0;
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[4]);
    if (has_b1) rlx_tk_in(L, t, n->in[5]);
    rlx_tk_in(L, t, n->in[1]);
    if (has_b2) rlx_tk_in(L, t, n->in[2]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "h", x->dims[2]);
    rlx_tk_i(t, "w", x->dims[3]);
    rlx_tk_i(t, "e", y->dims[1]);
    rlx_tk_i(t, "has_b1", has_b1);
    rlx_tk_i(t, "act1", rlx_attr_i(n, "rlx_pw_act", 0));
    rlx_tk_f(t, "act1_a", rlx_attr_f(n, "rlx_pw_act_a", 0));
    rlx_tk_f(t, "act1_b", rlx_attr_f(n, "rlx_pw_act_b", 0));
    rlx_tk_i(t, "oh", y->dims[2]);
    rlx_tk_i(t, "ow", y->dims[3]);
    rlx_tk_i(t, "sh", w->s[0]);
    rlx_tk_i(t, "sw", w->s[1]);
    rlx_tk_i(t, "pt", w->pad_begin[0]);
    rlx_tk_i(t, "pl", w->pad_begin[1]);
    rlx_tk_i(t, "has_b2", has_b2);
    rlx_tk_i(t, "act2", rlx_attr_i(n, "rlx_act", 0));
    rlx_tk_f(t, "act2_a", rlx_attr_f(n, "rlx_act_a", 0));
    rlx_tk_f(t, "act2_b", rlx_attr_f(n, "rlx_act_b", 0));
    return t;
}

/* conv_pwdw_f32 (rlx_pw 1): a 1x1 (packed as A, or plain where an operand
 * is not f32) and a depthwise 3x3 in bands of rows. */
static void lower_conv_pwdw(RlxLower *L, int node, const RlxWindow *w) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    RlxThunk *t = lower_pwdw_common(L, node, RLX_K_conv_pwdw_f32, w);
    int64_t rows = rlx_attr_i(n, "rlx_pw_rows", 1);
    rlx_tk_i(t, "rows", rows);
    RlxDType xd = x->dtype, w1d = val(L, n->in[4])->dtype, yd = y->dtype;
    rlx_tk_i(t, "x_dtype", xd);
    rlx_tk_i(t, "w1_dtype", w1d);
    rlx_tk_i(t, "y_dtype", yd);
    if (n->nin > 6 && n->in[6] >= 0) rlx_tk_in(L, t, n->in[6]);
    if (xd || w1d || yd) t->scratch = (int64_t)rk_conv_pwdw_mixed_scratch(y->dims[1], x->dims[3], y->dims[3], w->s[0], rows);
    else t->scratch = (int64_t)rk_conv_pwdw_scratch(x->dims[1], y->dims[1], x->dims[3], w->s[0], rows);
}

/* conv_pwdw_small_f32 (rlx_pw 2): a transposed 1x1 (packed as B) and any
 * depthwise whose plane the lanes kernel holds whole. */
static void lower_conv_pwdw_small(RlxLower *L, int node, const RlxWindow *w) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    RlxThunk *t = lower_pwdw_common(L, node, RLX_K_conv_pwdw_small_f32, w);
    rlx_tk_i(t, "kh", w->k[0]);
    rlx_tk_i(t, "kw", w->k[1]);
    rlx_tk_i(t, "dh", w->d[0]);
    rlx_tk_i(t, "dw", w->d[1]);
    t->scratch = (int64_t)rk_conv_pwdw_small_scratch(x->dims[1], y->dims[1], x->dims[2] * x->dims[3]);
}

/* conv_pool_f32 (rlx_cp): a stem that took over the max pooling after it
 * (prepare_c.c); its output is the pooling's, its own rows come from its
 * window. */
static void lower_conv_pool(RlxLower *L, int node, const RlxWindow *w) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_conv_pool_f32, node);
    int has_bias = n->nin > 2 && n->in[2] >= 0;
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    if (has_bias) rlx_tk_in(L, t, n->in[2]);
    rlx_tk_out(L, t, n->out[0]);
    int64_t pkh = rlx_attr_i(n, "rlx_cp_kh", 1), psh = rlx_attr_i(n, "rlx_cp_sh", 1);
    int64_t rows = rlx_attr_i(n, "rlx_cp_rows", 1);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "h", x->dims[2]);
    rlx_tk_i(t, "w", x->dims[3]);
    rlx_tk_i(t, "oc", y->dims[1]);
    rlx_tk_i(t, "oh", w->out[0]);
    rlx_tk_i(t, "ow", w->out[1]);
    rlx_tk_i(t, "kh", w->k[0]);
    rlx_tk_i(t, "kw", w->k[1]);
    rlx_tk_i(t, "sh", w->s[0]);
    rlx_tk_i(t, "sw", w->s[1]);
    rlx_tk_i(t, "pt", w->pad_begin[0]);
    rlx_tk_i(t, "pl", w->pad_begin[1]);
    rlx_tk_i(t, "has_bias", has_bias);
    rlx_tk_i(t, "act", rlx_attr_i(n, "rlx_act", 0));
    rlx_tk_f(t, "act_a", rlx_attr_f(n, "rlx_act_a", 0));
    rlx_tk_f(t, "act_b", rlx_attr_f(n, "rlx_act_b", 0));
    rlx_tk_i(t, "pkh", pkh);
    rlx_tk_i(t, "pkw", rlx_attr_i(n, "rlx_cp_kw", 1));
    rlx_tk_i(t, "psh", psh);
    rlx_tk_i(t, "psw", rlx_attr_i(n, "rlx_cp_sw", 1));
    rlx_tk_i(t, "ppt", rlx_attr_i(n, "rlx_cp_pt", 0));
    rlx_tk_i(t, "ppl", rlx_attr_i(n, "rlx_cp_pl", 0));
    rlx_tk_i(t, "poh", y->dims[2]);
    rlx_tk_i(t, "pow", y->dims[3]);
    rlx_tk_i(t, "rows", rows);
    t->scratch = (int64_t)rk_conv_pool_scratch(x->dims[1], x->dims[3], y->dims[1], w->out[1], w->k[0], w->k[1], w->s[0],
                                               pkh, psh, rows);
}

/* The C target's lowering hook: its own nodes (prepare_c.c); 0 for the rest. */
int rlx_c_lower(void *vl, int node) {
    RlxLower *L = vl;
    const RlxNode *n = &L->g->n[node];
    if (n->op != RLX_OP_CONV ||
        (!rlx_attr_i(n, "rlx_wino", 0) && !rlx_attr_i(n, "rlx_pw", 0) && !rlx_attr_i(n, "rlx_cp", 0)))
        return 0;
    RlxWindow w;
    rlx_conv_geometry(L->g, node, &w);
    if (!rlx_value_numel(&L->g->v[n->out[0]])) return 1;
    if (rlx_attr_i(n, "rlx_cp", 0)) lower_conv_pool(L, node, &w);
    else if (rlx_attr_i(n, "rlx_wino", 0)) lower_conv_wino(L, node, &w);
    else if (rlx_attr_i(n, "rlx_pw", 0) == 2) lower_conv_pwdw_small(L, node, &w);
    else lower_conv_pwdw(L, node, &w);
    return 1;
}

/* conv2d_f32: im2col + GEMM where it reuses enough, in blocks of nblk columns. */
static int mixed(const RlxThunk *t, const char *a, const char *b) {
    return rlx_tk_get_i(t, a) || rlx_tk_get_i(t, b) || rlx_tk_get_i(t, "y_dtype") || rlx_tk_get_i(t, "r_dtype");
}

static void select_conv2d(const RlxGraph *g, RlxThunk *t) {
    const RlxNode *n = &g->n[t->node];
    if (mixed(t, "x_dtype", "w_dtype")) {
        t->scratch = (int64_t)rk_mixed_scratch();   /* rk_mixed.c; no method of its own */
        return;
    }
    if (!rlx_c_conv_uses_gemm(g, t->node)) return;
    int64_t group = rlx_tk_get_i(t, "group");
    int64_t ocg = rlx_tk_get_i(t, "oc") / group;
    int64_t kdim = rlx_tk_get_i(t, "c") / group * rlx_tk_get_i(t, "kh") * rlx_tk_get_i(t, "kw");
    int64_t ncols = rlx_tk_get_i(t, "oh") * rlx_tk_get_i(t, "ow"), nblk = conv_block(ocg, kdim, ncols);
    int64_t packed = rlx_attr_i(n, "rlx_a_packed", 0);
    int grouped = rlx_attr_i(n, "rlx_grouped", 0) != 0;
    rlx_tk_i(t, "method", rlx_attr_i(n, "rlx_stem", 0) ? 2 : grouped ? 3 : 1);
    rlx_tk_i(t, "nblk", nblk);
    rlx_tk_i(t, "a_packed", packed);
    t->scratch = (int64_t)rk_conv2d_scratch(ocg, kdim, nblk, packed == 2);
    if (grouped) {   /* method 3's direct form, or method 1 where the runtime has no AVX2 */
        int64_t gs = (int64_t)rk_conv2d_grouped_scratch(rlx_tk_get_i(t, "c") / group, rlx_tk_get_i(t, "kh"),
                                                        rlx_tk_get_i(t, "kw"), rlx_tk_get_i(t, "sw"),
                                                        rlx_tk_get_i(t, "oh"), rlx_tk_get_i(t, "ow"));
        if (gs > t->scratch) t->scratch = gs;
    }
}

/* matmul_f32 / gemm_f32: pre-packed B, few rows, scratch. */
static void select_gemm(const RlxGraph *g, RlxThunk *t, RlxKernelImpl few) {
    if (mixed(t, "a_dtype", "b_dtype")) {
        t->scratch = (int64_t)rk_mixed_scratch();
        return;
    }
    int packed = rlx_attr_i(&g->n[t->node], "rlx_b_packed", 0) != 0;
    int64_t m = rlx_tk_get_i(t, "m"), n = rlx_tk_get_i(t, "n"), k = rlx_tk_get_i(t, "k");
    rlx_tk_i(t, "b_packed", packed);
    int batched = t->kind == RLX_K_matmul_f32 && rlx_tk_get_i(t, "brank") > 0;
    if (packed && !batched && m <= RK_SGEMM_FEW_ROWS && !rk_sgemm_threads_pay(m, n, k) &&
        rk_sgemm_few_rows_act((int)rlx_tk_get_i(t, "act"))) {
        t->impl = few;
        t->scratch = 0;
        return;
    }
    t->scratch = (int64_t)rk_sgemm_scratch_size(m, n, k);
}

void *rlx_c_select(RlxGraph *g, const RlxPlan *plan, RlxThunkList *tl) {
    (void)plan;
    for (int i = 0; i < tl->n; i++) {
        RlxThunk *t = &tl->t[i];
        switch (t->kind) {
        case RLX_K_conv2d_f32: select_conv2d(g, t); break;
        case RLX_K_matmul_f32: select_gemm(g, t, RLX_KI_matmul_f32_rows); break;
        case RLX_K_gemm_f32: select_gemm(g, t, RLX_KI_gemm_f32_rows); break;
        case RLX_K_conv_transpose_f32: {   /* its product path (rk_conv.c) */
            int64_t k[RLX_MAX_RANK], in_dims[RLX_MAX_RANK];
            rlx_tk_get_a(t, "k", k);
            rlx_tk_get_a(t, "in_dims", in_dims);
            t->scratch = (int64_t)rk_conv_transpose_scratch(rlx_tk_get_i(t, "c"), rlx_tk_get_i(t, "oc"),
                                                            rlx_tk_get_i(t, "group"), k, in_dims);
            break;
        }
        case RLX_K_rnn_f32: {   /* the entry of its cell only, unless its products may take threads */
            static const RlxKernelImpl cells[3] = {RLX_KI_rnn_f32_rnn, RLX_KI_rnn_f32_gru, RLX_KI_rnn_f32_lstm};
            int64_t cell = rlx_tk_get_i(t, "cell"), seq = rlx_tk_get_i(t, "seq"), batch = rlx_tk_get_i(t, "batch");
            int64_t input = rlx_tk_get_i(t, "input"), hidden = rlx_tk_get_i(t, "hidden");
            if (cell >= 0 && cell <= 2 && !rk_rnn_f32_may_split(cell, seq, batch, input, hidden)) t->impl = cells[cell];
            t->scratch = (int64_t)rk_rnn_f32_scratch(cell, seq, batch, input, hidden);
            break;
        }
        case RLX_K_transpose: case RLX_K_slice: case RLX_K_strided_copy: {
            /* copies too small to split over threads: the entry without the pool */
            int64_t bytes;
            if (t->kind == RLX_K_strided_copy) {
                bytes = rlx_tk_get_i(t, "rows") * rlx_tk_get_i(t, "row_bytes");
            } else {
                int64_t dims[RLX_MAX_RANK];
                rlx_tk_get_a(t, t->kind == RLX_K_transpose ? "dims" : "out_dims", dims);
                bytes = rlx_tk_get_i(t, "esize");
                for (int64_t a = 0; a < rlx_tk_get_i(t, "rank"); a++) bytes *= dims[a];
            }
            if (bytes < RK_COPY_THREAD_MIN)
                t->impl = t->kind == RLX_K_transpose ? RLX_KI_transpose_serial
                        : t->kind == RLX_K_slice     ? RLX_KI_slice_serial
                                                     : RLX_KI_strided_copy_serial;
            break;
        }
        case RLX_K_dft: t->scratch = (int64_t)rk_dft_scratch(rlx_tk_get_i(t, "n")); break;
        case RLX_K_stft: t->scratch = (int64_t)rk_dft_scratch(rlx_tk_get_i(t, "flen")); break;
        case RLX_K_det: {
            int64_t m = rlx_tk_get_i(t, "n");
            t->scratch = m ? (m * m + 1) * 8 : 0;   /* one matrix of doubles, plus room to align it */
            break;
        }
        default: break;
        }
    }
    return NULL;
}
