/* precision_c.c - what the C target's kernels take in half storage and in
 * reduced weights (target.h; the policy is lib/passes/precision.c).
 *
 * conv2d_f32, matmul_f32 and gemm_f32 convert their activation operands,
 * residual and output on their own (rk_mixed.c: FREE); a bias, Gemm's C and
 * a norm's statistics stay f32 (FIXED); every other kernel runs in one
 * storage type for its data operands (TIED), where the legalize column
 * allows the half type: data movement, pooling, softmax, LayerNorm. Weights
 * may be f16, bf16 or int8 for those three kernels: a convolution's
 * (O, I/group, kh, kw) weights are O rows, a 2-D MatMul or Gemm weight is
 * [k, n] (channels along the columns) or, transposed, [n, k]. Depthwise
 * weights (a few per channel) stay f32.
 */
#include "rlx.h"
#include "../target.h"
#include "c.h"

static int conv2d(const RlxGraph *g, const RlxNode *n) {
    return n->op == RLX_OP_CONV && g->v[n->in[0]].rank <= 4;
}

int rlx_c_half_operand(const RlxGraph *g, int node, int o) {
    const RlxNode *n = &g->n[node];
    int out = o >= n->nin;
    switch (n->op) {
    case RLX_OP_CONV:
        if (!conv2d(g, n)) return RLX_HALF_TIED;
        return out || o == 0 || o == 3 ? RLX_HALF_FREE : RLX_HALF_FIXED;
    case RLX_OP_MATMUL:
        return out || o == 0 || o == 1 || o == 3 ? RLX_HALF_FREE : RLX_HALF_FIXED;
    case RLX_OP_GEMM:
        return out || o == 0 || o == 1 || o == 3 ? RLX_HALF_FREE : RLX_HALF_FIXED;
    case RLX_OP_LAYERNORM:
        return o == 0 || o == n->nin ? RLX_HALF_TIED : RLX_HALF_FIXED;
    default:
        return rlx_half_operand_default(g, node, o);
    }
}

int rlx_c_weights_operand(const RlxGraph *g, int node, int64_t *rows, int64_t *cols, int *by_col) {
    const RlxNode *n = &g->n[node];
    if (n->nin < 2 || n->in[1] < 0) return -1;
    const RlxValue *w = &g->v[n->in[1]];
    if (n->op == RLX_OP_CONV && conv2d(g, n)) {
        int64_t group = rlx_attr_i(n, "group", 1);
        if (w->rank >= 2 && w->dims[1] == 1 && w->dims[0] == group) return -1;   /* depthwise: 9 or so per channel */
        *rows = w->dims[0];
        *cols = rlx_value_numel(w) / (w->dims[0] ? w->dims[0] : 1);
        *by_col = 0;
        return 1;
    }
    if ((n->op != RLX_OP_MATMUL && n->op != RLX_OP_GEMM) || w->rank != 2) return -1;
    int tb = rlx_attr_i(n, n->op == RLX_OP_MATMUL ? "rlx_trans_b" : "transB", 0) != 0;
    *rows = w->dims[0];
    *cols = w->dims[1];
    *by_col = !tb;
    return 1;
}
