/* support.c - the legalize column the GPU targets share (target.h): the ops
 * whose neutral lowering produces only computations that lib/gpu has
 * kernels for, with the dtypes they handle. Each GPU target points its
 * descriptor at this table; legalize masks it with the target's storage
 * dtypes, so Metal, which has no double, refuses f64 with its own column.
 * Extra conditions that are not a dtype (a Resize's modes) are the
 * targets' node check (rlx_gpu_node_check). A change here must come with
 * the kernels: lib/gpu/launch.c asserts every thunk has one.
 */
#include "gpu.h"

const RlxOpSupport rlx_gpu_support[] = {
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
    {RLX_OP_INSTANCENORM,     RLX_DT_F32},

    /* ---- family conv ---- */
    {RLX_OP_LPPOOL,           RLX_DT_FLOATS},
    {RLX_OP_GLOBALMAXPOOL,    RLX_DT_FLOATS},
    {RLX_OP_GLOBALLPPOOL,     RLX_DT_FLOATS},

    /* ---- family shape ---- */
    {RLX_OP_SHAPE,            RLX_DT_ANY},   /* folded by inference */
    {RLX_OP_SIZE,             RLX_DT_ANY},   /* folded by inference */
    {RLX_OP_CONSTANTOFSHAPE,  RLX_DT_ANY},
    {RLX_OP_EXPAND,           RLX_DT_ANY},
    {RLX_OP_TILE,             RLX_DT_ANY},
    {RLX_OP_DEPTHTOSPACE,     RLX_DT_ANY},
    {RLX_OP_SPACETODEPTH,     RLX_DT_ANY},
    {RLX_OP_NONZERO,          RLX_DT_ANY},   /* constant inputs: folded by inference */
    {RLX_OP_COMPRESS,         RLX_DT_ANY},   /* constant inputs: folded by inference */
    {RLX_OP_UNIQUE,           RLX_DT_ANY},   /* constant inputs: folded by inference */
    {RLX_OP_NONMAXSUPPRESSION, RLX_DT_FLOATS},   /* constant inputs: folded by inference */

    /* ---- launch_index.c: losses, index and scatter kernels, Trilu, CumSum, ... ---- */
    {RLX_OP_NLLLOSS,          RLX_DT_FLOATS},   /* input, weight */
    {RLX_OP_SCELOSS,          RLX_DT_FLOATS},
    {RLX_OP_GATHERELEMENTS,   RLX_DT_ANY},
    {RLX_OP_TRILU,            RLX_DT_ANY},
    {RLX_OP_CUMSUM,           RLX_DT_NUMERIC},
    {RLX_OP_HARDMAX,          RLX_DT_FLOATS},
    {RLX_OP_TFIDF,            RLX_DT(I32) | RLX_DT(I64)},
    {RLX_OP_SCATTERELEMENTS,  RLX_DT_ANY},   /* data, updates */
    {RLX_OP_ONEHOT,           RLX_DT_NUMERIC},   /* the indices; values moved by size */
    {RLX_OP_GATHERND,         RLX_DT_ANY},
    {RLX_OP_SCATTERND,        RLX_DT_ANY},
    {RLX_OP_TOPK,             RLX_DT_NUMERIC},
    {RLX_OP_EYELIKE,          RLX_DT_ANY},
    {RLX_OP_RANGE,            RLX_DT_NUMERIC},
    {RLX_OP_REVERSESEQUENCE,  RLX_DT_ANY},
    {RLX_OP_MAXUNPOOL,        RLX_DT_ANY},   /* moves bytes */
    {RLX_OP_LPNORM,           RLX_DT_F32},
    {RLX_OP_MVN,              RLX_DT_F32},
    {RLX_OP_LRN,              RLX_DT_F32},

    /* ---- launch_vision.c: Resize, ConvTranspose, GridSample, recurrent, quantized, signal ---- */
    {RLX_OP_RNN,              RLX_DT_F32},
    {RLX_OP_GRU,              RLX_DT_F32},
    {RLX_OP_LSTM,             RLX_DT_F32},
    {RLX_OP_EINSUM,           RLX_DT_NUMERIC},
    {RLX_OP_QUANTIZELINEAR,   RLX_DT_F32},   /* x */
    {RLX_OP_DEQUANTIZELINEAR, RLX_DT(I8) | RLX_DT(U8) | RLX_DT(I32)},   /* x; y f32 (rlx_gpu_node_check_vision) */
    {RLX_OP_DYNQUANTIZELINEAR, RLX_DT_F32},
    {RLX_OP_MATMULINTEGER,    RLX_DT(I8) | RLX_DT(U8)},
    {RLX_OP_CONVINTEGER,      RLX_DT(I8) | RLX_DT(U8)},
    {RLX_OP_QLINEARMATMUL,    RLX_DT(I8) | RLX_DT(U8)},   /* a, b */
    {RLX_OP_QLINEARCONV,      RLX_DT(I8) | RLX_DT(U8)},   /* x, w */
    {RLX_OP_DFT,              RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},
    {RLX_OP_STFT,             RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},   /* signal, window */
    {RLX_OP_HANNWINDOW,       RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},   /* size: inference */
    {RLX_OP_HAMMINGWINDOW,    RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},
    {RLX_OP_BLACKMANWINDOW,   RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},
    {RLX_OP_DET,              RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},
    {RLX_OP_ROIALIGN,         RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},   /* X, rois */
    {RLX_OP_CONVTRANSPOSE,    RLX_DT_F32},
    {RLX_OP_GRIDSAMPLE,       RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16)},
    {RLX_OP_RESIZE,           RLX_DT_ANY},   /* linear and cubic: f32 f16 bf16 (rlx_gpu_node_check_vision) */

    {RLX_NOPS,                0},   /* the end (RlxTarget.nsupport -1) */
};

const char *rlx_gpu_node_check(const RlxGraph *g, int node) { return rlx_gpu_node_check_vision(g, node); }
