/* target_c.c - the C target's descriptor (target.h).
 *
 * Plain C99 for CPUs: model.c (the baked schedule), model.h (the API),
 * model.weights, linked with runtime_min's kernel library. Its legalize
 * column below says which dtypes each op supports; prepare_c.c, select_c.c
 * and emit_c.c are its choices and its printer.
 */
#include "c.h"

/*   op                        dtypes */
static const RlxOpSupport c_support[] = {
    {RLX_OP_ADD,              RLX_DT_NUMERIC},
    {RLX_OP_SUB,              RLX_DT_NUMERIC},
    {RLX_OP_MUL,              RLX_DT_NUMERIC},
    {RLX_OP_DIV,              RLX_DT_NUMERIC},
    {RLX_OP_POW,              RLX_DT_NUMERIC},
    {RLX_OP_MAX,              RLX_DT_NUMERIC},
    {RLX_OP_MIN,              RLX_DT_NUMERIC},
    {RLX_OP_SUM,              RLX_DT_NUMERIC},
    {RLX_OP_EQUAL,            RLX_DT_ANY},
    {RLX_OP_LESS,             RLX_DT_NUMERIC},
    {RLX_OP_GREATER,          RLX_DT_NUMERIC},
    {RLX_OP_AND,              RLX_DT_BOOLS},
    {RLX_OP_OR,               RLX_DT_BOOLS},
    {RLX_OP_NOT,              RLX_DT_BOOLS},
    {RLX_OP_WHERE,            RLX_DT_ANY},
    {RLX_OP_REGION,           RLX_DT_ANY},   /* made of legal steps */
    {RLX_OP_NEG,              RLX_DT_SIGNED},
    {RLX_OP_ABS,              RLX_DT_SIGNED},
    {RLX_OP_RELU,             RLX_DT_NUMERIC},
    {RLX_OP_SQRT,             RLX_DT_FLOATS},
    {RLX_OP_RECIPROCAL,       RLX_DT_FLOATS},
    {RLX_OP_EXP,              RLX_DT_FLOATS},
    {RLX_OP_LOG,              RLX_DT_FLOATS},
    {RLX_OP_ERF,              RLX_DT_FLOATS},
    {RLX_OP_TANH,             RLX_DT_FLOATS},
    {RLX_OP_SIGMOID,          RLX_DT_FLOATS},
    {RLX_OP_LEAKYRELU,        RLX_DT_FLOATS},
    {RLX_OP_ELU,              RLX_DT_FLOATS},
    {RLX_OP_HARDSIGMOID,      RLX_DT_FLOATS},
    {RLX_OP_HARDSWISH,        RLX_DT_FLOATS},
    {RLX_OP_SOFTPLUS,         RLX_DT_FLOATS},
    {RLX_OP_CLIP,             RLX_DT_NUMERIC},
    {RLX_OP_CAST,             RLX_DT_ANY},
    {RLX_OP_IDENTITY,         RLX_DT_ANY},
    {RLX_OP_MATMUL,           RLX_DT_F32},
    {RLX_OP_GEMM,             RLX_DT_F32},
    {RLX_OP_CONV,             RLX_DT_F32},
    {RLX_OP_MAXPOOL,          RLX_DT_FLOATS | RLX_DT(I8) | RLX_DT(U8)},
    {RLX_OP_AVERAGEPOOL,      RLX_DT_FLOATS},
    {RLX_OP_GLOBALAVERAGEPOOL, RLX_DT_FLOATS},
    {RLX_OP_BATCHNORM,        RLX_DT_F32},
    {RLX_OP_LAYERNORM,        RLX_DT_F32 | RLX_DT(F16) | RLX_DT(BF16)},   /* computed in f32 */
    {RLX_OP_SOFTMAX,          RLX_DT_F32 | RLX_DT(F16) | RLX_DT(BF16)},   /* computed in f32 */
    {RLX_OP_LOGSOFTMAX,       RLX_DT_F32 | RLX_DT(F16) | RLX_DT(BF16)},   /* computed in f32 */
    {RLX_OP_REDUCEMEAN,       RLX_DT_NUMERIC},
    {RLX_OP_REDUCESUM,        RLX_DT_NUMERIC},
    {RLX_OP_REDUCEMAX,        RLX_DT_NUMERIC},
    {RLX_OP_REDUCEMIN,        RLX_DT_NUMERIC},
    {RLX_OP_ARGMAX,           RLX_DT_NUMERIC},
    {RLX_OP_RESHAPE,          RLX_DT_ANY},
    {RLX_OP_FLATTEN,          RLX_DT_ANY},
    {RLX_OP_SQUEEZE,          RLX_DT_ANY},
    {RLX_OP_UNSQUEEZE,        RLX_DT_ANY},
    {RLX_OP_TRANSPOSE,        RLX_DT_ANY},
    {RLX_OP_CONCAT,           RLX_DT_ANY},
    {RLX_OP_SPLIT,            RLX_DT_ANY},
    {RLX_OP_SLICE,            RLX_DT_ANY},
    {RLX_OP_GATHER,           RLX_DT_ANY},
    {RLX_OP_PAD,              RLX_DT_ANY},

    /* ---- family elt ---- */
    {RLX_OP_SIN,              RLX_DT_FLOATS},
    {RLX_OP_COS,              RLX_DT_FLOATS},
    {RLX_OP_TAN,              RLX_DT_FLOATS},
    {RLX_OP_ASIN,             RLX_DT_FLOATS},
    {RLX_OP_ACOS,             RLX_DT_FLOATS},
    {RLX_OP_ATAN,             RLX_DT_FLOATS},
    {RLX_OP_SINH,             RLX_DT_FLOATS},
    {RLX_OP_COSH,             RLX_DT_FLOATS},
    {RLX_OP_ASINH,            RLX_DT_FLOATS},
    {RLX_OP_ACOSH,            RLX_DT_FLOATS},
    {RLX_OP_ATANH,            RLX_DT_FLOATS},
    {RLX_OP_FLOOR,            RLX_DT_FLOATS},
    {RLX_OP_CEIL,             RLX_DT_FLOATS},
    {RLX_OP_ROUND,            RLX_DT_FLOATS},
    {RLX_OP_SIGN,             RLX_DT_NUMERIC},
    {RLX_OP_MOD,              RLX_DT_NUMERIC},
    {RLX_OP_BITSHIFT,         RLX_DT_INTS},   /* unsigned: inference checks */
    {RLX_OP_ISNAN,            RLX_DT_FLOATS},
    {RLX_OP_ISINF,            RLX_DT_FLOATS},
    {RLX_OP_MEAN,             RLX_DT_FLOATS},
    {RLX_OP_PRELU,            RLX_DT_NUMERIC},
    {RLX_OP_SELU,             RLX_DT_FLOATS},
    {RLX_OP_CELU,             RLX_DT_FLOATS},
    {RLX_OP_THRESHOLDEDRELU,  RLX_DT_FLOATS},
    {RLX_OP_SHRINK,           RLX_DT_FLOATS},
    {RLX_OP_MISH,             RLX_DT_FLOATS},
    {RLX_OP_SOFTSIGN,         RLX_DT_FLOATS},
    {RLX_OP_XOR,              RLX_DT_BOOLS},
    {RLX_OP_LESSOREQUAL,      RLX_DT_NUMERIC},
    {RLX_OP_GREATEROREQUAL,   RLX_DT_NUMERIC},
    {RLX_OP_CASTLIKE,         RLX_DT_ANY},

    /* ---- family norm ---- */
    {RLX_OP_REDUCEL1,         RLX_DT_NUMERIC},
    {RLX_OP_REDUCEL2,         RLX_DT_NUMERIC},
    {RLX_OP_REDUCELOGSUM,     RLX_DT_NUMERIC},
    {RLX_OP_REDUCELOGSUMEXP,  RLX_DT_NUMERIC},
    {RLX_OP_REDUCEPROD,       RLX_DT_NUMERIC},
    {RLX_OP_REDUCESUMSQUARE,  RLX_DT_NUMERIC},
    {RLX_OP_ARGMIN,           RLX_DT_NUMERIC},
    {RLX_OP_HARDMAX,          RLX_DT_FLOATS},
    {RLX_OP_INSTANCENORM,     RLX_DT_F32},
    {RLX_OP_LPNORM,           RLX_DT_F32},
    {RLX_OP_MVN,              RLX_DT_F32},
    {RLX_OP_LRN,              RLX_DT_F32},

    /* ---- family conv ---- */
    {RLX_OP_CONVTRANSPOSE,    RLX_DT_F32},
    {RLX_OP_LPPOOL,           RLX_DT_FLOATS},
    {RLX_OP_GLOBALMAXPOOL,    RLX_DT_FLOATS},
    {RLX_OP_GLOBALLPPOOL,     RLX_DT_FLOATS},

    /* ---- family shape ---- */
    {RLX_OP_SHAPE,            RLX_DT_ANY},   /* folded by inference */
    {RLX_OP_SIZE,             RLX_DT_ANY},   /* folded by inference */
    {RLX_OP_CONSTANTOFSHAPE,  RLX_DT_ANY},
    {RLX_OP_EXPAND,           RLX_DT_ANY},
    {RLX_OP_TILE,             RLX_DT_ANY},
    {RLX_OP_RANGE,            RLX_DT_NUMERIC},
    {RLX_OP_EYELIKE,          RLX_DT_ANY},
    {RLX_OP_ONEHOT,           RLX_DT_NUMERIC},
    {RLX_OP_TRILU,            RLX_DT_ANY},
    {RLX_OP_CUMSUM,           RLX_DT_NUMERIC},
    {RLX_OP_TOPK,             RLX_DT_NUMERIC},
    {RLX_OP_DEPTHTOSPACE,     RLX_DT_ANY},
    {RLX_OP_SPACETODEPTH,     RLX_DT_ANY},
    {RLX_OP_REVERSESEQUENCE,  RLX_DT_ANY},
    {RLX_OP_NONZERO,          RLX_DT_ANY},   /* constant inputs: folded by inference */
    {RLX_OP_COMPRESS,         RLX_DT_ANY},   /* constant inputs: folded by inference */
    {RLX_OP_UNIQUE,           RLX_DT_ANY},   /* constant inputs: folded by inference */
    {RLX_OP_NONMAXSUPPRESSION, RLX_DT_FLOATS},   /* constant inputs: folded by inference */

    /* ---- family index ---- */
    {RLX_OP_RESIZE,           RLX_DT_ANY},   /* bool: nearest only (inference) */
    {RLX_OP_GATHERELEMENTS,   RLX_DT_ANY},
    {RLX_OP_GATHERND,         RLX_DT_ANY},
    {RLX_OP_SCATTERELEMENTS,  RLX_DT_ANY},   /* data, updates */
    {RLX_OP_SCATTERND,        RLX_DT_ANY},

    /* ---- family rnn ---- */
    {RLX_OP_RNN,              RLX_DT_FLOATS},   /* all but sequence_lens */
    {RLX_OP_GRU,              RLX_DT_FLOATS},
    {RLX_OP_LSTM,             RLX_DT_FLOATS},
    {RLX_OP_EINSUM,           RLX_DT_NUMERIC},   /* inference: all inputs alike */

    /* ---- family quant ---- */
    {RLX_OP_QUANTIZELINEAR,   RLX_DT_FLOATS},   /* x (scale: inference) */
    {RLX_OP_DEQUANTIZELINEAR, RLX_DT(I8) | RLX_DT(U8) | RLX_DT(I32)},
    {RLX_OP_DYNQUANTIZELINEAR, RLX_DT_F32},
    {RLX_OP_MATMULINTEGER,    RLX_DT(I8) | RLX_DT(U8)},
    {RLX_OP_CONVINTEGER,      RLX_DT(I8) | RLX_DT(U8)},
    {RLX_OP_QLINEARMATMUL,    RLX_DT(I8) | RLX_DT(U8)},   /* a, b */
    {RLX_OP_QLINEARCONV,      RLX_DT(I8) | RLX_DT(U8)},   /* x, w */

    /* ---- family loss ---- */
    {RLX_OP_NLLLOSS,          RLX_DT_FLOATS},   /* input, weight */
    {RLX_OP_SCELOSS,          RLX_DT_FLOATS},

    /* ---- family signal ---- */
    {RLX_OP_DFT,              RLX_DT_FLOATS},
    {RLX_OP_STFT,             RLX_DT_FLOATS},   /* signal, window */
    {RLX_OP_HANNWINDOW,       RLX_DT_NUMERIC},   /* size: inference */
    {RLX_OP_HAMMINGWINDOW,    RLX_DT_NUMERIC},
    {RLX_OP_BLACKMANWINDOW,   RLX_DT_NUMERIC},
    {RLX_OP_MELWEIGHTMATRIX,  RLX_DT_NUMERIC},   /* inputs: inference */

    /* ---- family vision ---- */
    {RLX_OP_GRIDSAMPLE,       RLX_DT_FLOATS},   /* X, grid */
    {RLX_OP_ROIALIGN,         RLX_DT_FLOATS},   /* X, rois (batch_indices: inference) */
    {RLX_OP_MAXUNPOOL,        RLX_DT_ANY},   /* moves bytes; zero bytes are every dtype's zero */
    {RLX_OP_DET,              RLX_DT_FLOATS},

    /* ---- family ctrl ---- */
    {RLX_OP_TFIDF,            RLX_DT(I32) | RLX_DT(I64)},
};

const RlxTarget rlx_target_c = {
    .name = "c",
    .doc = "C99 for CPUs, with runtime_min's kernel library (portable, AVX2, AVX-512)",
    .align = 64,
    .support = c_support,
    .nsupport = (int)(sizeof c_support / sizeof c_support[0]),
    .storage_dtypes = RLX_DT_ANY,
    .compute_dtypes = RLX_DT(F32) | RLX_DT(F64) | RLX_DT_INTS | RLX_DT_BOOLS,   /* f16 and bf16 in f32 */
    .features = RLX_TF_F64 | RLX_TF_INT64 | RLX_TF_THREADS | RLX_TF_CONCAT_IN_PLACE,
    .limits = {0, 0, 0, 0, 0},
    .build_libs = "",
    .half_storage = RLX_DT(F16) | RLX_DT(BF16),      /* rk_mixed.c, rk_typed.h */
    .reduced_weights = RLX_DT(F16) | RLX_DT(BF16) | RLX_DT(I8),
    .prepare = rlx_c_prepare,
    .lower = rlx_c_lower,
    .select = rlx_c_select,
    .emit = rlx_c_emit,
};
