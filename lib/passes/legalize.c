/* legalize.c - can the target run every node?
 *
 * require: inferred (dtypes known); runs before any fusion, so a diagnostic
 * names the user's node.
 *
 * One table, one row per op and one column per target, says which dtypes the
 * target supports for the op, as a bitmask over RlxDType. A row also says
 * which inputs carry the dtype that matters (ins, a bitmask of input
 * positions; Where's bool condition and Gather's indices are checked by
 * inference, not here) and whether the output dtype is checked too (Cast's
 * 'to'). An op without a row, or with an empty column, is not supported by
 * that target at all. Adding a target is adding a column; teaching a target
 * an op is filling in its cell.
 */
#include <string.h>

#include "rlx.h"

enum { TARGET_C, TARGET_CUDA, TARGET_SPIRV, TARGET_MSL, NTARGETS };
static const char *const target_names[NTARGETS] = {"c", "cuda", "spirv", "msl"};

#define DT(x) (1u << RLX_##x)
#define FLOATS (DT(F32) | DT(F16) | DT(BF16) | DT(F64))
#define SIGNED_INTS (DT(I8) | DT(I16) | DT(I32) | DT(I64))
#define INTS (SIGNED_INTS | DT(U8) | DT(U16) | DT(U32) | DT(U64))
#define NUMERIC (FLOATS | INTS)
#define SIGNED (FLOATS | SIGNED_INTS)
#define BOOLS DT(BOOL)
#define ANY (NUMERIC | BOOLS)
#define F32 DT(F32)

/* input position masks */
#define IN0 1u
#define IN01 3u
#define IN012 7u

typedef struct {
    RlxOp op;
    unsigned ins;            /* inputs whose dtype is checked */
    int check_out;           /* the output dtype is checked as well */
    unsigned dtypes[NTARGETS];
} Support;

/*   op                     ins     out  c        cuda spirv msl */
static const Support support[] = {
    {RLX_OP_ADD,            IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_SUB,            IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_MUL,            IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_DIV,            IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_POW,            IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_MAX,            IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_MIN,            IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_SUM,            IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_EQUAL,          IN01,   0, {ANY,       0, 0, 0}},
    {RLX_OP_LESS,           IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_GREATER,        IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_AND,            IN01,   0, {BOOLS,     0, 0, 0}},
    {RLX_OP_OR,             IN01,   0, {BOOLS,     0, 0, 0}},
    {RLX_OP_NOT,            IN0,    0, {BOOLS,     0, 0, 0}},
    {RLX_OP_WHERE,          6u,     0, {ANY,       0, 0, 0}},
    {RLX_OP_REGION,         0,      0, {ANY,       0, 0, 0}},   /* made of legal steps */
    {RLX_OP_NEG,            IN0,    0, {SIGNED,    0, 0, 0}},
    {RLX_OP_ABS,            IN0,    0, {SIGNED,    0, 0, 0}},
    {RLX_OP_RELU,           IN0,    0, {NUMERIC,    0, 0, 0}},
    {RLX_OP_SQRT,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_RECIPROCAL,     IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_EXP,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_LOG,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ERF,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_TANH,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_SIGMOID,        IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_LEAKYRELU,      IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ELU,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_HARDSIGMOID,    IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_HARDSWISH,      IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_SOFTPLUS,       IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_CLIP,           IN012,  0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_CAST,           IN0,    1, {ANY,       0, 0, 0}},
    {RLX_OP_IDENTITY,       IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_MATMUL,         IN01,   0, {F32,       0, 0, 0}},
    {RLX_OP_GEMM,           IN012,  0, {F32,       0, 0, 0}},
    {RLX_OP_CONV,           IN012,  0, {F32,       0, 0, 0}},
    {RLX_OP_MAXPOOL,        IN0,    0, {FLOATS | DT(I8) | DT(U8), 0, 0, 0}},
    {RLX_OP_AVERAGEPOOL,    IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_GLOBALAVERAGEPOOL, IN0, 0, {FLOATS,    0, 0, 0}},
    {RLX_OP_BATCHNORM,      31u,    0, {F32,       0, 0, 0}},
    {RLX_OP_LAYERNORM,      IN012,  0, {F32,       0, 0, 0}},
    {RLX_OP_SOFTMAX,        IN0,    0, {F32,       0, 0, 0}},
    {RLX_OP_LOGSOFTMAX,     IN0,    0, {F32,       0, 0, 0}},
    {RLX_OP_REDUCEMEAN,     IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCESUM,      IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCEMAX,      IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCEMIN,      IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_ARGMAX,         IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_RESHAPE,        IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_FLATTEN,        IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_SQUEEZE,        IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_UNSQUEEZE,      IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_TRANSPOSE,      IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_CONCAT,         IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_SPLIT,          IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_SLICE,          IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_GATHER,         IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_PAD,            IN0,    0, {ANY,       0, 0, 0}},

    /* ---- family elt ---- */
    {RLX_OP_SIN,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_COS,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_TAN,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ASIN,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ACOS,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ATAN,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_SINH,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_COSH,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ASINH,          IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ACOSH,          IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ATANH,          IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_FLOOR,          IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_CEIL,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ROUND,          IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_SIGN,           IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_MOD,            IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_BITSHIFT,       IN01,   0, {INTS,      0, 0, 0}},   /* unsigned: inference checks */
    {RLX_OP_ISNAN,          IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_ISINF,          IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_MEAN,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_PRELU,          IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_SELU,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_CELU,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_THRESHOLDEDRELU, IN0,   0, {FLOATS,    0, 0, 0}},
    {RLX_OP_SHRINK,         IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_MISH,           IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_SOFTSIGN,       IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_XOR,            IN01,   0, {BOOLS,     0, 0, 0}},
    {RLX_OP_LESSOREQUAL,    IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_GREATEROREQUAL, IN01,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_CASTLIKE,       IN0,    1, {ANY,       0, 0, 0}},

    /* ---- family norm ---- */
    {RLX_OP_REDUCEL1,       IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCEL2,       IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCELOGSUM,   IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCELOGSUMEXP, IN0,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCEPROD,     IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_REDUCESUMSQUARE, IN0,   0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_ARGMIN,         IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_HARDMAX,        IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_INSTANCENORM,   IN012,  0, {F32,       0, 0, 0}},
    {RLX_OP_LPNORM,         IN0,    0, {F32,       0, 0, 0}},
    {RLX_OP_MVN,            IN0,    0, {F32,       0, 0, 0}},
    {RLX_OP_LRN,            IN0,    0, {F32,       0, 0, 0}},

    /* ---- family conv ---- */
    {RLX_OP_CONVTRANSPOSE,  IN012,  0, {F32,       0, 0, 0}},
    {RLX_OP_LPPOOL,         IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_GLOBALMAXPOOL,  IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_GLOBALLPPOOL,   IN0,    0, {FLOATS,    0, 0, 0}},

    /* ---- family shape ---- */
    {RLX_OP_SHAPE,          IN0,    0, {ANY,       0, 0, 0}},   /* folded by inference */
    {RLX_OP_SIZE,           IN0,    0, {ANY,       0, 0, 0}},   /* folded by inference */
    {RLX_OP_CONSTANTOFSHAPE, 0,     1, {ANY,       0, 0, 0}},
    {RLX_OP_EXPAND,         IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_TILE,           IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_RANGE,          IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_EYELIKE,        0,      1, {ANY,       0, 0, 0}},
    {RLX_OP_ONEHOT,         IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_TRILU,          IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_CUMSUM,         IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_TOPK,           IN0,    0, {NUMERIC,   0, 0, 0}},
    {RLX_OP_DEPTHTOSPACE,   IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_SPACETODEPTH,   IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_REVERSESEQUENCE, IN0,   0, {ANY,       0, 0, 0}},
    {RLX_OP_NONZERO,        IN0,    0, {ANY,       0, 0, 0}},   /* constant inputs: folded by inference */
    {RLX_OP_COMPRESS,       IN0,    0, {ANY,       0, 0, 0}},   /* constant inputs: folded by inference */
    {RLX_OP_UNIQUE,         IN0,    0, {ANY,       0, 0, 0}},   /* constant inputs: folded by inference */
    {RLX_OP_NONMAXSUPPRESSION, IN01, 0, {FLOATS,   0, 0, 0}},   /* constant inputs: folded by inference */

    /* ---- family index ---- */
    {RLX_OP_RESIZE,         IN0,    0, {ANY,       0, 0, 0}},   /* bool: nearest only (inference) */
    {RLX_OP_GATHERELEMENTS, IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_GATHERND,       IN0,    0, {ANY,       0, 0, 0}},
    {RLX_OP_SCATTERELEMENTS, 5u,    0, {ANY,       0, 0, 0}},   /* data, updates */
    {RLX_OP_SCATTERND,      5u,     0, {ANY,       0, 0, 0}},

    /* ---- family rnn ---- */
    {RLX_OP_RNN,            0xEFu,  0, {FLOATS,    0, 0, 0}},   /* all but sequence_lens */
    {RLX_OP_GRU,            0xEFu,  0, {FLOATS,    0, 0, 0}},
    {RLX_OP_LSTM,           0xEFu,  0, {FLOATS,    0, 0, 0}},
    {RLX_OP_EINSUM,         IN0,    0, {NUMERIC,   0, 0, 0}},   /* inference: all inputs alike */

    /* ---- family quant ---- */
    {RLX_OP_QUANTIZELINEAR,   IN0,  0, {FLOATS,    0, 0, 0}},   /* x (scale: inference) */
    {RLX_OP_DEQUANTIZELINEAR, IN0,  0, {DT(I8) | DT(U8) | DT(I32), 0, 0, 0}},
    {RLX_OP_DYNQUANTIZELINEAR, IN0, 0, {F32,       0, 0, 0}},
    {RLX_OP_MATMULINTEGER,  IN01,   0, {DT(I8) | DT(U8), 0, 0, 0}},
    {RLX_OP_CONVINTEGER,    IN01,   0, {DT(I8) | DT(U8), 0, 0, 0}},
    {RLX_OP_QLINEARMATMUL,  9u,     0, {DT(I8) | DT(U8), 0, 0, 0}},   /* a, b */
    {RLX_OP_QLINEARCONV,    9u,     0, {DT(I8) | DT(U8), 0, 0, 0}},   /* x, w */

    /* ---- family loss ---- */
    {RLX_OP_NLLLOSS,        5u,     0, {FLOATS,    0, 0, 0}},   /* input, weight */
    {RLX_OP_SCELOSS,        5u,     0, {FLOATS,    0, 0, 0}},

    /* ---- family signal ---- */
    {RLX_OP_DFT,            IN0,    0, {FLOATS,    0, 0, 0}},
    {RLX_OP_STFT,           5u,     0, {FLOATS,    0, 0, 0}},   /* signal, window */
    {RLX_OP_HANNWINDOW,     0,      1, {NUMERIC,   0, 0, 0}},   /* size: inference */
    {RLX_OP_HAMMINGWINDOW,  0,      1, {NUMERIC,   0, 0, 0}},
    {RLX_OP_BLACKMANWINDOW, 0,      1, {NUMERIC,   0, 0, 0}},
    {RLX_OP_MELWEIGHTMATRIX, 0,     1, {NUMERIC,   0, 0, 0}},   /* inputs: inference */

    /* ---- family vision ---- */
    {RLX_OP_GRIDSAMPLE,     IN01,   0, {FLOATS,    0, 0, 0}},   /* X, grid */
    {RLX_OP_ROIALIGN,       IN01,   0, {FLOATS,    0, 0, 0}},   /* X, rois (batch_indices: inference) */
    {RLX_OP_MAXUNPOOL,      IN0,    0, {ANY,       0, 0, 0}},   /* moves bytes; zero bytes are every dtype's zero */
    {RLX_OP_DET,            IN0,    0, {FLOATS,    0, 0, 0}},

    /* ---- family ctrl ---- */
    {RLX_OP_TFIDF,          IN0,    0, {DT(I32) | DT(I64), 0, 0, 0}},
};

static const Support *find_support(RlxOp op) {
    for (size_t i = 0; i < sizeof support / sizeof support[0]; i++)
        if (support[i].op == op) return &support[i];
    return NULL;
}

static int target_supports_nothing(int t) {
    for (size_t i = 0; i < sizeof support / sizeof support[0]; i++)
        if (support[i].dtypes[t]) return 0;
    return 1;
}

static int target_index(const char *target) {
    for (int i = 0; i < NTARGETS; i++)
        if (!strcmp(target, target_names[i])) return i;
    return -1;
}

/* NULL if the target can run the node, else why not ("" or " for dtype x"). */
const char *rlx_node_unsupported(const RlxGraph *g, int node, const char *target) {
    int t = target_index(target);
    RLX_ASSERT(t >= 0);
    const RlxNode *n = &g->n[node];
    const Support *s = find_support(n->op);
    unsigned ok = s ? s->dtypes[t] : 0;
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
    return NULL;
}

/* One node: `FILE: node 'NAME' (OP): not supported by target 't'`. Several:
 * one line listing every unsupported op type with the names of its nodes. */
void rlx_legalize(RlxGraph *g, const char *target) {
    int t = target_index(target);
    if (t < 0) rlx_error("%s: unknown target '%s' (targets: c, cuda, spirv, msl)", g->file, target);
    const char *why = target_supports_nothing(t) ? " (this target supports no ops yet)" : "";
    int nbad = 0, first = -1;
    const char **reason = rlx_alloc(sizeof(char *) * (size_t)(g->nn + 1));
    for (int node = 0; node < g->nn; node++) {
        if (g->n[node].dead) continue;
        reason[node] = rlx_node_unsupported(g, node, target);
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
