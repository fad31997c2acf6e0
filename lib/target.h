/* target.h - the seam between the graph pipeline and each code generator.
 *
 * One pipeline, one neutral thunk list, one descriptor per target (like
 * QBE's struct Target, ggml's backend interface), defined in
 * lib/codegen_<t>/ and listed in target.c. What differs per target lives
 * here and nowhere else:
 *
 *   - name, arena alignment, and the (op, dtype) pairs it supports: its
 *     column of the legalize table, checked before fusion so that a
 *     diagnostic names the user's nodes, all of them at once;
 *   - the dtypes it stores and computes natively, its features and limits;
 *   - prepare: the target's choices that change the graph, made after
 *     fusion and before the memory plan because they change weights and
 *     buffers (the C target packs GEMM weights, transforms Winograd weights
 *     and fuses a 1x1 expansion into the depthwise convolution after it);
 *   - lower: the target's own lowering of the nodes its prepare made, where
 *     the neutral lowering does not apply;
 *   - select: the target's choices on the neutral thunk list (the C
 *     target: convolution methods and blocking, few-rows GEMMs, per-thread
 *     scratch, in the list itself; a GPU target: templates, tiles, grids
 *     and barriers, as a program of kernels and dispatches for its emit);
 *   - emit: the printer, into named output files.
 *
 * The neutral thunk list (rlx_lower) says what to compute: kernel kind,
 * dtypes, shapes and strides, epilogue and slots; the params that are the C
 * target's choices (conv2d_f32's method, a_packed and nblk, matmul's and
 * gemm's b_packed, the second implementations, scratch) are 0 in it until
 * the C target's select fills them. Constant folding never goes through a
 * target: it uses the reference evaluator (fold.c, rlx_ref_eval_node), the
 * runtime's kernels with their plain-operand choices, whatever --target is.
 */
#ifndef RLX_TARGET_H
#define RLX_TARGET_H

#include "rlx.h"

/* dtype bitmasks for the legalize columns */
#define RLX_DT(x) (1u << RLX_##x)
#define RLX_DT_FLOATS (RLX_DT(F32) | RLX_DT(F16) | RLX_DT(BF16) | RLX_DT(F64))
#define RLX_DT_SIGNED_INTS (RLX_DT(I8) | RLX_DT(I16) | RLX_DT(I32) | RLX_DT(I64))
#define RLX_DT_INTS (RLX_DT_SIGNED_INTS | RLX_DT(U8) | RLX_DT(U16) | RLX_DT(U32) | RLX_DT(U64))
#define RLX_DT_NUMERIC (RLX_DT_FLOATS | RLX_DT_INTS)
#define RLX_DT_SIGNED (RLX_DT_FLOATS | RLX_DT_SIGNED_INTS)
#define RLX_DT_BOOLS RLX_DT(BOOL)
#define RLX_DT_ANY (RLX_DT_NUMERIC | RLX_DT_BOOLS)
#define RLX_DT_F32 RLX_DT(F32)

/* Features a target may have (RlxTarget.features). */
enum {
    RLX_TF_F64 = 1u << 0,        /* double precision */
    RLX_TF_INT64 = 1u << 1,      /* 64-bit integers */
    RLX_TF_F16_ARITH = 1u << 2,  /* half-precision arithmetic */
    RLX_TF_SUBGROUPS = 1u << 3,  /* subgroup / warp / simdgroup operations */
    RLX_TF_THREADS = 1u << 4,    /* a thread pool over CPU cores */
    RLX_TF_CONCAT_IN_PLACE = 1u << 5   /* the plan may put a Concat's inputs in its output (plan.c) */
};

typedef struct {
    int64_t shared_bytes;        /* workgroup memory a kernel may declare (0: none) */
    int64_t workgroup_size;      /* invocations per workgroup */
    int64_t groups_per_dim;      /* workgroups per grid dimension */
    int64_t push_bytes;          /* push constants / kernel parameter bytes */
    int64_t buffer_bytes;        /* one storage buffer (0: no limit) */
} RlxTargetLimits;

/* How a target's kernel for a node takes one operand stored in half
 * (RlxTarget.half_operand; precision.c explains the three). */
enum { RLX_HALF_FIXED, RLX_HALF_TIED, RLX_HALF_FREE };
/* The defaults (precision.c), what runtime_min's and lib/gpu's kernels do. */
int rlx_half_operand_default(const RlxGraph *g, int node, int operand);
int rlx_weights_operand_default(const RlxGraph *g, int node, int64_t *rows, int64_t *cols, int *by_col);

/* One cell of a target's legalize column: the dtypes it supports for op. */
typedef struct {
    RlxOp op;
    unsigned dtypes;             /* bitmask over RlxDType */
} RlxOpSupport;

/* An output file: OUT + suffix ("" for OUT.c's base name is not used: the
 * suffixes are ".c", ".h", ".weights", ".comp", ...). */
typedef struct {
    const char *suffix;
    RlxBuf data;
} RlxOutFile;

enum { RLX_MAX_OUT_FILES = 8 };

/* The options of one target's own flags (rlxc --help). */
typedef struct {
    int cuda_arch;               /* --cuda-arch sm_XX: XX (0: the target's default) */
    int cuda_cubin;              /* --cuda-cubin: also embed a cubin for that architecture */
} RlxTargetOptions;

/* What the printer gets; it fills files[] and *nfiles. */
typedef struct {
    const RlxGraph *g;
    const RlxPlan *plan;
    const RlxThunkList *tl;
    const char *name;            /* the API prefix */
    const char *header_name;     /* "model.h", as the sources include it */
    int emit_main;
    int nthreads;
    int blas;
    RlxOutFile *files;
    int *nfiles;
    void *selected;              /* what the target's select returned */
    int embed_weights;           /* --embed-weights: the weights as a source file the program links */
    int dump_values;             /* --dump-values (rlxc check): every value passed to rlx_dump_value */
    const RlxTargetOptions *topt;   /* may be NULL */
} RlxEmitJob;

typedef struct RlxTarget {
    const char *name;            /* --target NAME */
    const char *doc;             /* one line for rlxc --help and docs/targets.md */
    int64_t align;               /* arena and weights alignment, bytes */
    const RlxOpSupport *support; /* the legalize column: nsupport cells (-1: up to an RLX_NOPS cell) */
    int nsupport;
    unsigned storage_dtypes;     /* dtypes it stores natively (bitmask) */
    unsigned compute_dtypes;     /* dtypes it computes in natively */
    unsigned features;           /* RLX_TF_* */
    RlxTargetLimits limits;
    const char *build_libs;      /* extra libraries --build links ("-ldl") */
    /* Precision (precision.c). half_storage: the half types (RLX_DT(F16),
     * RLX_DT(BF16)) --precision may store tensors in; half_operand: how the
     * kernel of node takes operand o (inputs, then outputs) stored in one
     * (NULL: rlx_half_operand_default). reduced_weights: the types
     * (RLX_DT(F16), RLX_DT(BF16), RLX_DT(I8)) --weights may store GEMM and
     * convolution weights in; weights_operand: which input of node is such a
     * weight (-1: none), seen as a rows x cols matrix whose output channels
     * run along the rows (*by_col 0) or the columns (1) (NULL:
     * rlx_weights_operand_default). */
    unsigned half_storage;
    int (*half_operand)(const RlxGraph *g, int node, int operand);
    unsigned reduced_weights;
    int (*weights_operand)(const RlxGraph *g, int node, int64_t *rows, int64_t *cols, int *by_col);
    const char *no_build;        /* why --build can't build this target's output here (NULL: it can) */
    void (*prepare)(RlxGraph *g, const RlxOptions *opt);                 /* may be NULL */
    int (*lower)(void *L, int node);                                     /* RlxLower *; may be NULL */
    /* may be NULL; what it returns reaches emit as job->selected */
    void *(*select)(RlxGraph *g, const RlxPlan *plan, RlxThunkList *tl);
    void (*emit)(const RlxEmitJob *job);
    /* a node's support beyond its dtypes (NULL: fine; else " for ..."); may be NULL */
    const char *(*node_check)(const RlxGraph *g, int node);
} RlxTarget;

extern const RlxTarget rlx_target_c, rlx_target_spirv, rlx_target_cuda, rlx_target_msl;

/* The target named `name`; a user error listing the targets if none is. */
const RlxTarget *rlx_target_find(const char *file, const char *name);
/* Every target, in the order of --help and docs/targets.md. */
extern const RlxTarget *const rlx_targets[];
extern const int rlx_ntargets;

/* legalize.c: the target's support for one node (NULL: supported; else
 * "" or " for dtype x"), and the pass that checks every node. */
const char *rlx_target_unsupported(const RlxTarget *t, const RlxGraph *g, int node);
void rlx_legalize_for(RlxGraph *g, const RlxTarget *t);
/* The dtypes target t supports for op (0: the op not at all). */
unsigned rlx_target_op_dtypes(const RlxTarget *t, RlxOp op);

#endif
