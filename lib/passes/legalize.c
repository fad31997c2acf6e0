/* legalize.c - can the target run every node?
 *
 * require: inferred (dtypes known); runs before any fusion, so a diagnostic
 * names the user's node.
 *
 * Two tables decide. Here, one row per op says which inputs carry the dtype
 * that matters (ins, a bitmask of input positions; Where's bool condition and
 * Gather's indices are checked by inference, not here) and whether the output
 * dtype is checked too (Cast's 'to'). Each target's descriptor (target.h)
 * holds its column: the dtypes it supports per op, as a bitmask over
 * RlxDType. An op without a row, or without a cell in the target's column,
 * is not supported by that target. Adding a target is writing its column;
 * teaching a target an op is filling in its cell. Every unsupported node of
 * the model is named at once, grouped by op.
 */
#include <string.h>

#include "rlx.h"
#include "target.h"

/* input position masks */
#define IN0 1u
#define IN01 3u
#define IN012 7u

typedef struct {
    RlxOp op;
    unsigned ins;            /* inputs whose dtype is checked */
    int check_out;           /* the output dtype is checked as well */
} OpInputs;

/*   op                        ins    out */
static const OpInputs op_inputs[] = {
    {RLX_OP_ADD,              IN01,  0},
    {RLX_OP_SUB,              IN01,  0},
    {RLX_OP_MUL,              IN01,  0},
    {RLX_OP_DIV,              IN01,  0},
    {RLX_OP_POW,              IN01,  0},
    {RLX_OP_MAX,              IN0,   0},
    {RLX_OP_MIN,              IN0,   0},
    {RLX_OP_SUM,              IN0,   0},
    {RLX_OP_EQUAL,            IN01,  0},
    {RLX_OP_LESS,             IN01,  0},
    {RLX_OP_GREATER,          IN01,  0},
    {RLX_OP_AND,              IN01,  0},
    {RLX_OP_OR,               IN01,  0},
    {RLX_OP_NOT,              IN0,   0},
    {RLX_OP_WHERE,            6u,    0},
    {RLX_OP_REGION,           0,     0},   /* made of legal steps */
    {RLX_OP_NEG,              IN0,   0},
    {RLX_OP_ABS,              IN0,   0},
    {RLX_OP_RELU,             IN0,   0},
    {RLX_OP_SQRT,             IN0,   0},
    {RLX_OP_RECIPROCAL,       IN0,   0},
    {RLX_OP_EXP,              IN0,   0},
    {RLX_OP_LOG,              IN0,   0},
    {RLX_OP_ERF,              IN0,   0},
    {RLX_OP_TANH,             IN0,   0},
    {RLX_OP_SIGMOID,          IN0,   0},
    {RLX_OP_LEAKYRELU,        IN0,   0},
    {RLX_OP_ELU,              IN0,   0},
    {RLX_OP_HARDSIGMOID,      IN0,   0},
    {RLX_OP_HARDSWISH,        IN0,   0},
    {RLX_OP_SOFTPLUS,         IN0,   0},
    {RLX_OP_CLIP,             IN012, 0},
    {RLX_OP_CAST,             IN0,   1},
    {RLX_OP_IDENTITY,         IN0,   0},
    {RLX_OP_MATMUL,           IN01,  0},
    {RLX_OP_GEMM,             IN012, 0},
    {RLX_OP_CONV,             IN012, 0},
    {RLX_OP_MAXPOOL,          IN0,   0},
    {RLX_OP_AVERAGEPOOL,      IN0,   0},
    {RLX_OP_GLOBALAVERAGEPOOL, IN0,   0},
    {RLX_OP_BATCHNORM,        31u,   0},
    {RLX_OP_LAYERNORM,        IN012, 0},
    {RLX_OP_SOFTMAX,          IN0,   0},
    {RLX_OP_LOGSOFTMAX,       IN0,   0},
    {RLX_OP_REDUCEMEAN,       IN0,   0},
    {RLX_OP_REDUCESUM,        IN0,   0},
    {RLX_OP_REDUCEMAX,        IN0,   0},
    {RLX_OP_REDUCEMIN,        IN0,   0},
    {RLX_OP_ARGMAX,           IN0,   0},
    {RLX_OP_RESHAPE,          IN0,   0},
    {RLX_OP_FLATTEN,          IN0,   0},
    {RLX_OP_SQUEEZE,          IN0,   0},
    {RLX_OP_UNSQUEEZE,        IN0,   0},
    {RLX_OP_TRANSPOSE,        IN0,   0},
    {RLX_OP_CONCAT,           IN0,   0},
    {RLX_OP_SPLIT,            IN0,   0},
    {RLX_OP_SLICE,            IN0,   0},
    {RLX_OP_GATHER,           IN0,   0},
    {RLX_OP_PAD,              IN0,   0},

    /* ---- family elt ---- */
    {RLX_OP_SIN,              IN0,   0},
    {RLX_OP_COS,              IN0,   0},
    {RLX_OP_TAN,              IN0,   0},
    {RLX_OP_ASIN,             IN0,   0},
    {RLX_OP_ACOS,             IN0,   0},
    {RLX_OP_ATAN,             IN0,   0},
    {RLX_OP_SINH,             IN0,   0},
    {RLX_OP_COSH,             IN0,   0},
    {RLX_OP_ASINH,            IN0,   0},
    {RLX_OP_ACOSH,            IN0,   0},
    {RLX_OP_ATANH,            IN0,   0},
    {RLX_OP_FLOOR,            IN0,   0},
    {RLX_OP_CEIL,             IN0,   0},
    {RLX_OP_ROUND,            IN0,   0},
    {RLX_OP_SIGN,             IN0,   0},
    {RLX_OP_MOD,              IN01,  0},
    {RLX_OP_BITSHIFT,         IN01,  0},   /* unsigned: inference checks */
    {RLX_OP_ISNAN,            IN0,   0},
    {RLX_OP_ISINF,            IN0,   0},
    {RLX_OP_MEAN,             IN0,   0},
    {RLX_OP_PRELU,            IN01,  0},
    {RLX_OP_SELU,             IN0,   0},
    {RLX_OP_CELU,             IN0,   0},
    {RLX_OP_THRESHOLDEDRELU,  IN0,   0},
    {RLX_OP_SHRINK,           IN0,   0},
    {RLX_OP_MISH,             IN0,   0},
    {RLX_OP_SOFTSIGN,         IN0,   0},
    {RLX_OP_XOR,              IN01,  0},
    {RLX_OP_LESSOREQUAL,      IN01,  0},
    {RLX_OP_GREATEROREQUAL,   IN01,  0},
    {RLX_OP_CASTLIKE,         IN0,   1},

    /* ---- family norm ---- */
    {RLX_OP_REDUCEL1,         IN0,   0},
    {RLX_OP_REDUCEL2,         IN0,   0},
    {RLX_OP_REDUCELOGSUM,     IN0,   0},
    {RLX_OP_REDUCELOGSUMEXP,  IN0,   0},
    {RLX_OP_REDUCEPROD,       IN0,   0},
    {RLX_OP_REDUCESUMSQUARE,  IN0,   0},
    {RLX_OP_ARGMIN,           IN0,   0},
    {RLX_OP_HARDMAX,          IN0,   0},
    {RLX_OP_INSTANCENORM,     IN012, 0},
    {RLX_OP_LPNORM,           IN0,   0},
    {RLX_OP_MVN,              IN0,   0},
    {RLX_OP_LRN,              IN0,   0},

    /* ---- family conv ---- */
    {RLX_OP_CONVTRANSPOSE,    IN012, 0},
    {RLX_OP_LPPOOL,           IN0,   0},
    {RLX_OP_GLOBALMAXPOOL,    IN0,   0},
    {RLX_OP_GLOBALLPPOOL,     IN0,   0},

    /* ---- family shape ---- */
    {RLX_OP_SHAPE,            IN0,   0},   /* folded by inference */
    {RLX_OP_SIZE,             IN0,   0},   /* folded by inference */
    {RLX_OP_CONSTANTOFSHAPE,  0,     1},
    {RLX_OP_EXPAND,           IN0,   0},
    {RLX_OP_TILE,             IN0,   0},
    {RLX_OP_RANGE,            IN0,   0},
    {RLX_OP_EYELIKE,          0,     1},
    {RLX_OP_ONEHOT,           IN0,   0},
    {RLX_OP_TRILU,            IN0,   0},
    {RLX_OP_CUMSUM,           IN0,   0},
    {RLX_OP_TOPK,             IN0,   0},
    {RLX_OP_DEPTHTOSPACE,     IN0,   0},
    {RLX_OP_SPACETODEPTH,     IN0,   0},
    {RLX_OP_REVERSESEQUENCE,  IN0,   0},
    {RLX_OP_NONZERO,          IN0,   0},   /* constant inputs: folded by inference */
    {RLX_OP_COMPRESS,         IN0,   0},   /* constant inputs: folded by inference */
    {RLX_OP_UNIQUE,           IN0,   0},   /* constant inputs: folded by inference */
    {RLX_OP_NONMAXSUPPRESSION, IN01,  0},   /* constant inputs: folded by inference */

    /* ---- family index ---- */
    {RLX_OP_RESIZE,           IN0,   0},   /* bool: nearest only (inference) */
    {RLX_OP_GATHERELEMENTS,   IN0,   0},
    {RLX_OP_GATHERND,         IN0,   0},
    {RLX_OP_SCATTERELEMENTS,  5u,    0},   /* data, updates */
    {RLX_OP_SCATTERND,        5u,    0},

    /* ---- family rnn ---- */
    {RLX_OP_RNN,              0xEFu, 0},   /* all but sequence_lens */
    {RLX_OP_GRU,              0xEFu, 0},
    {RLX_OP_LSTM,             0xEFu, 0},
    {RLX_OP_EINSUM,           IN0,   0},   /* inference: all inputs alike */

    /* ---- family quant ---- */
    {RLX_OP_QUANTIZELINEAR,   IN0,   0},   /* x (scale: inference) */
    {RLX_OP_DEQUANTIZELINEAR, IN0,   0},
    {RLX_OP_DYNQUANTIZELINEAR, IN0,   0},
    {RLX_OP_MATMULINTEGER,    IN01,  0},
    {RLX_OP_CONVINTEGER,      IN01,  0},
    {RLX_OP_QLINEARMATMUL,    9u,    0},   /* a, b */
    {RLX_OP_QLINEARCONV,      9u,    0},   /* x, w */

    /* ---- family loss ---- */
    {RLX_OP_NLLLOSS,          5u,    0},   /* input, weight */
    {RLX_OP_SCELOSS,          5u,    0},

    /* ---- family signal ---- */
    {RLX_OP_DFT,              IN0,   0},
    {RLX_OP_STFT,             5u,    0},   /* signal, window */
    {RLX_OP_HANNWINDOW,       0,     1},   /* size: inference */
    {RLX_OP_HAMMINGWINDOW,    0,     1},
    {RLX_OP_BLACKMANWINDOW,   0,     1},
    {RLX_OP_MELWEIGHTMATRIX,  0,     1},   /* inputs: inference */

    /* ---- family vision ---- */
    {RLX_OP_GRIDSAMPLE,       IN01,  0},   /* X, grid */
    {RLX_OP_ROIALIGN,         IN01,  0},   /* X, rois (batch_indices: inference) */
    {RLX_OP_MAXUNPOOL,        IN0,   0},   /* moves bytes; zero bytes are every dtype's zero */
    {RLX_OP_DET,              IN0,   0},

    /* ---- family ctrl ---- */
    {RLX_OP_TFIDF,            IN0,   0},

};

static const OpInputs *find_inputs(RlxOp op) {
    for (size_t i = 0; i < sizeof op_inputs / sizeof op_inputs[0]; i++)
        if (op_inputs[i].op == op) return &op_inputs[i];
    return NULL;
}

unsigned rlx_target_op_dtypes(const RlxTarget *t, RlxOp op) {
    for (int i = 0; t->nsupport < 0 ? t->support[i].op != RLX_NOPS : i < t->nsupport; i++)
        if (t->support[i].op == op) return t->support[i].dtypes & t->storage_dtypes;
    return 0;
}

const char *rlx_target_unsupported(const RlxTarget *t, const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    const OpInputs *s = find_inputs(n->op);
    unsigned ok = s ? rlx_target_op_dtypes(t, n->op) : 0;
    if (!ok) return "";
    for (int k = 0; k < n->nin; k++) {
        if (n->in[k] < 0 || k >= 32 || !(s->ins >> k & 1u)) continue;
        RlxDType dt = g->v[n->in[k]].dtype;
        if (!(ok >> dt & 1u)) return rlx_fmt(" for dtype %s", rlx_dtype_name(dt));
    }
    if (s->check_out && n->out[0] >= 0) {
        RlxDType dt = g->v[n->out[0]].dtype;
        if (!(ok >> dt & 1u)) return rlx_fmt(" for dtype %s", rlx_dtype_name(dt));
    }
    return t->node_check ? t->node_check(g, node) : NULL;
}

const char *rlx_node_unsupported(const RlxGraph *g, int node, const char *target) {
    return rlx_target_unsupported(rlx_target_find(g->file, target), g, node);
}

/* One node: `FILE: node 'NAME' (OP): not supported by target 't'`. Several:
 * one line listing every unsupported op type with the names of its nodes. */
void rlx_legalize_for(RlxGraph *g, const RlxTarget *tg) {
    const char *target = tg->name;
    const char *why = tg->nsupport == 0 ? " (this target supports no ops yet)" : "";
    int nbad = 0, first = -1;
    const char **reason = rlx_alloc(sizeof(char *) * (size_t)(g->nn + 1));
    for (int node = 0; node < g->nn; node++) {
        if (g->n[node].dead) continue;
        reason[node] = rlx_target_unsupported(tg, g, node);
        if (reason[node]) {
            if (first < 0) first = node;
            nbad++;
        }
    }
    if (!nbad) return;
    if (nbad == 1) rlx_node_error(g, first, "not supported by target '%s'%s%s", target, reason[first], why);
    /* group by op type and reason, in order of first appearance */
    RlxBuf b = {0};
    int *done = rlx_alloc(sizeof(int) * (size_t)(g->nn + 1));
    for (int i = 0; i < g->nn; i++) {
        if (!reason[i] || done[i]) continue;
        int count = 0;
        for (int j = i; j < g->nn; j++)
            if (reason[j] && !done[j] && g->n[j].op == g->n[i].op && !strcmp(reason[j], reason[i])) count++;
        rlx_buf_printf(&b, "%s%s%s (node%s ", b.len ? "; " : "", rlx_ops[g->n[i].op].name, reason[i], count > 1 ? "s" : "");
        int k = 0;
        for (int j = i; j < g->nn; j++) {
            if (!reason[j] || done[j] || g->n[j].op != g->n[i].op || strcmp(reason[j], reason[i])) continue;
            rlx_buf_printf(&b, "%s'%s'", k++ ? ", " : "", g->n[j].name);
            done[j] = 1;
        }
        rlx_buf_printf(&b, ")");
    }
    rlx_error("%s: %d nodes not supported by target '%s'%s: %s", g->file, nbad, target, why, b.data);
}

void rlx_legalize(RlxGraph *g, const char *target) { rlx_legalize_for(g, rlx_target_find(g->file, target)); }
