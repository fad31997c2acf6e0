/* ext_loss.c - the loss op family: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (ONNX opset 12/13).
 *
 * Inference checks the shapes ONNX requires: input [N, C, d1..dk] (k >= 0)
 * of a float type, target [N, d1..dk] of i32/i64, an optional weight [C] of
 * the input's dtype, a reduction of none/sum/mean. The loss is the target's
 * shape for 'none', a scalar otherwise; SoftmaxCrossEntropyLoss's optional
 * log_prob has the scores' shape. Both lower to one kernel (rk_loss.c) that
 * sees the input as (N, C, d1*..*dk); target values are data, so a target
 * outside [0, C) is found at run time (RLX_E_RANGE), or at compile time when
 * the node is constant-folded.
 *
 * rlx_infer_loss and rlx_lower_loss return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include <string.h>

#include "passes.h"

/* 0 none, 1 sum, 2 mean: the kernel's encoding. */
static int loss_reduction(const RlxGraph *g, int node) {
    const char *r = rlx_attr_s(&g->n[node], "reduction", "mean");
    if (!strcmp(r, "none")) return 0;
    if (!strcmp(r, "sum")) return 1;
    if (!strcmp(r, "mean")) return 2;
    rlx_node_error(g, node, "reduction '%s' is not one of none, sum, mean", r);
    return -1;
}

static void infer_loss(RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    const RlxValue *x = rlx_input(g, node, 0), *t = rlx_input(g, node, 1);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    rlx_want_dtype(g, node, 1, T_INDEX);
    if (x->rank < 2) rlx_node_error(g, node, "input '%s' must have rank >= 2 (N, C, ...), not %d", x->name, x->rank);
    int ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int i = 1; ok && i < t->rank; i++) ok = t->dims[i] == x->dims[i + 1];
    if (!ok)
        rlx_node_error(g, node, "target '%s' %s does not match input '%s' %s (want [N, d1..dk] for [N, C, d1..dk])",
                       t->name, rlx_shape_str(t), x->name, rlx_shape_str(x));
    if (rlx_has_input(g, node, 2)) {
        const RlxValue *w = rlx_input(g, node, 2);
        rlx_want_same_dtype(g, node, 0, 2);
        if (w->rank != 1 || w->dims[0] != x->dims[1])
            rlx_node_error(g, node, "weight '%s' must have shape [%lld], not %s", w->name, (long long)x->dims[1],
                           rlx_shape_str(w));
    }
    int reduction = loss_reduction(g, node);
    outs[0].dtype = x->dtype;
    outs[0].rank = reduction == 0 ? t->rank : 0;
    if (reduction == 0) memcpy(outs[0].dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
    if (n->nout > 1) {
        outs[1].dtype = x->dtype;
        outs[1].rank = x->rank;
        memcpy(outs[1].dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    }
}

int rlx_infer_loss(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_NLLLOSS: case RLX_OP_SCELOSS: infer_loss(g, node, outs); return 1;
    default: return 0;
    }
}

static void lower_loss(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]], *t = &L->g->v[n->in[1]];
    int sce = n->op == RLX_OP_SCELOSS;
    int has_weight = rlx_has_input(L->g, node, 2);
    int has_log_prob = sce && n->nout > 1 && n->out[1] >= 0;
    const RlxAttr *ii = rlx_attr_get(n, "ignore_index");
    RlxThunk *k = rlx_thunk_new(L->tl, sce ? RLX_K_softmax_ce_loss : RLX_K_nll_loss, node);
    rlx_tk_in(L, k, n->in[0]);
    rlx_tk_in(L, k, n->in[1]);
    rlx_tk_in(L, k, has_weight ? n->in[2] : -1);
    rlx_tk_out(L, k, n->out[0]);
    if (has_log_prob) rlx_tk_out(L, k, n->out[1]);
    rlx_tk_i(k, "dtype", x->dtype);
    rlx_tk_i(k, "n", x->dims[0]);
    rlx_tk_i(k, "c", x->dims[1]);
    rlx_tk_i(k, "inner", rlx_prod(x->dims, 2, x->rank));
    rlx_tk_i(k, "tgt_dtype", t->dtype);
    rlx_tk_i(k, "has_weight", has_weight);
    rlx_tk_i(k, "reduction", loss_reduction(L->g, node));
    rlx_tk_i(k, "has_ignore", ii != NULL);
    rlx_tk_i(k, "ignore_index", ii ? ii->i : 0);
    rlx_tk_i(k, "has_log_prob", has_log_prob);
}

int rlx_lower_loss(RlxLower *L, int node) {
    switch (L->g->n[node].op) {
    case RLX_OP_NLLLOSS: case RLX_OP_SCELOSS: lower_loss(L, node); return 1;
    default: return 0;
    }
}
