/* rlx.h - the compiler's core: arena, diagnostics, the IR, the thunk list.
 *
 * Everything a compilation allocates comes from one arena (rlx_alloc) and is
 * freed at once at the end, so passes never free. A user error (bad model,
 * unsupported op) is reported with rlx_error/rlx_node_error, which format one
 * line and longjmp back to the driver's rlx_try; the driver then deletes its
 * temporary files, frees the arena and exits 1. Internal bugs use RLX_ASSERT,
 * which aborts with file and line.
 *
 * The IR: values and nodes live in arrays of the graph and refer to each
 * other by integer id (-1 = none). A value has a dtype and a static shape; a
 * weight also has its bytes. Node order in the array is arbitrary; the
 * schedule pass fills g->order.
 */
#ifndef RLX_H
#define RLX_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../runtime_min/rlx_rt.h"

#define RLX_VERSION "0.1.0"
#define RLX_MAX_RANK RK_MAX_RANK

/* ---- arena and strings ---- */
void *rlx_alloc(size_t n);                 /* zeroed; never NULL */
void *rlx_realloc(void *p, size_t old, size_t n);
char *rlx_strdup(const char *s);
char *rlx_strndup(const char *s, size_t n);
char *rlx_fmt(const char *fmt, ...);       /* arena-allocated sprintf */
void rlx_arena_free_all(void);

/* Resource limits (docs/robustness.md): a model file is untrusted, and a
 * few bytes of it can ask for a huge constant, a long unrolled loop or a
 * graph of millions of nodes. The arena stops at `memory` bytes (counting
 * what rlx_memory_reserve adds for malloc'd memory, such as an unpacked
 * ONNX message) with a one-line error naming `file`; readers and unrolling
 * stop at `max_nodes` nodes. The driver sets them from its flags. */
typedef struct {
    int64_t memory;              /* bytes; 0 = no limit (the library's default) */
    int64_t max_nodes;           /* nodes in one graph, read or unrolled */
    const char *file;            /* the model, for the memory error */
} RlxLimits;
extern RlxLimits rlx_limits;
#define RLX_DEFAULT_MAX_NODES 65536
/* Counts `bytes` (negative: gives them back) against the memory limit. */
void rlx_memory_reserve(int64_t bytes);
int64_t rlx_memory_held(void);   /* what counts against it now (-v prints it) */
/* The one-line error for a graph of more than rlx_limits.max_nodes nodes. */
void rlx_check_node_count(const char *file, int64_t nodes, const char *what);

/* A growable byte buffer (arena-backed) and the one printf-style emitter. */
typedef struct {
    char *data;
    size_t len, cap;
    int indent;
} RlxBuf;
void rlx_buf_put(RlxBuf *b, const void *p, size_t n);
void rlx_buf_printf(RlxBuf *b, const char *fmt, ...);
/* Writes one line: indentation, the text, a newline. */
void rlx_emit(RlxBuf *b, const char *fmt, ...);

/* A name -> id map in the arena (open addressing over FNV-1a): value names
 * of a graph, node names in the readers. Model files are untrusted, and a
 * linear search per name made a graph of n names cost n^2 string compares. */
typedef struct {
    const char **names;
    int *ids;
    size_t cap, n;
} RlxNames;
int rlx_names_get(const RlxNames *m, const char *name);          /* -1 if absent */
void rlx_names_put(RlxNames *m, const char *name, int id);        /* name must be absent; kept, not copied */

/* ---- diagnostics ---- */
typedef struct {
    jmp_buf *jmp;        /* where rlx_error returns to; NULL = abort */
    char msg[2048];      /* the one-line message */
} RlxDiag;
extern RlxDiag rlx_diag;
#define rlx_try(jb) (rlx_diag.jmp = &(jb), setjmp(jb))
void rlx_error(const char *fmt, ...);
void rlx_fatal_internal(const char *file, int line, const char *msg);
#define RLX_ASSERT(c) ((c) ? (void)0 : rlx_fatal_internal(__FILE__, __LINE__, #c))

/* ---- dtypes (rlx_dtypes.def) ---- */
typedef rlx_dtype RlxDType;
int rlx_dtype_from_name(const char *name);     /* -1 if unknown */
int rlx_dtype_from_onnx(int code);             /* -1 if unsupported */
int rlx_dtype_to_onnx(int dt);
int rlx_dtype_is_float(int dt);                /* f32 f16 bf16 f64 */
int rlx_dtype_is_int(int dt);                  /* signed or unsigned ints */
int rlx_dtype_is_signed(int dt);

/* ---- ops (ops.def) ---- */
enum { RLX_OPF_ELT = 1, RLX_OPF_VIEW = 2 };
typedef enum {
#define X(id, name, mi, xi, mo, xo, fl, attrs, doc) RLX_OP_##id,
#include "ops.def"
#undef X
    RLX_NOPS
} RlxOp;
typedef struct {
    const char *name;
    int min_in, max_in, min_out, max_out, flags;
    const char *attrs;
    const char *doc;
} RlxOpInfo;
extern const RlxOpInfo rlx_ops[RLX_NOPS];
int rlx_op_from_name(const char *name);        /* -1 if unknown */

/* ---- IR ---- */
typedef enum { RLX_A_INT, RLX_A_FLOAT, RLX_A_STRING, RLX_A_INTS, RLX_A_FLOATS, RLX_A_TENSOR, RLX_A_DTYPE,
               RLX_A_GRAPH } RlxAttrKind;
struct RlxGraph;
typedef struct {
    const char *name;
    RlxAttrKind kind;
    int64_t i;           /* INT, DTYPE */
    double f;            /* FLOAT */
    const char *s;       /* STRING */
    int n;               /* INTS, FLOATS */
    int64_t *ints;
    double *floats;
    int tensor;          /* TENSOR: a weight value id (not a graph input) */
    struct RlxGraph *graph;  /* GRAPH: a subgraph (If/Loop/Scan bodies, ONNX only; ext_ctrl.c) */
} RlxAttr;

/* RLX_V_KEEP32: an output of a node named by --keep-f32; RLX_V_STORAGE: the
 * precision pass changed the dtype from f32 to a storage type (precision.c). */
enum { RLX_V_INPUT = 1, RLX_V_WEIGHT = 2, RLX_V_OUTPUT = 4, RLX_V_KEEP32 = 8, RLX_V_STORAGE = 16 };
typedef struct {
    const char *name;
    RlxDType dtype;
    int rank;                     /* -1 until known */
    int64_t dims[RLX_MAX_RANK];
    int flags;                    /* RLX_V_* */
    int producer;                 /* node id, -1 for inputs and weights */
    const uint8_t *data;          /* weights: rlx_value_bytes(v) bytes */
} RlxValue;

typedef struct {
    const char *name;
    RlxOp op;
    int nin, nout;
    int *in, *out;                /* value ids; an absent optional input is -1 */
    int nattr;
    RlxAttr *attr;
    int dead;                     /* removed by a pass */
} RlxNode;

/* A graph output's dtype and shape as the model file declares them, to be
 * checked after inference; dtype -1 / rank -1 = not declared. */
typedef struct {
    int dtype;
    int rank;
    int64_t dims[RLX_MAX_RANK];
} RlxDecl;

typedef struct RlxGraph {
    const char *name;             /* model name */
    const char *file;             /* for diagnostics */
    RlxValue *v;
    int nv, capv;
    RlxNode *n;
    int nn, capn;
    int *inputs, ninputs;
    int *outputs, noutputs;
    int *order, norder;           /* schedule: node ids (schedule pass) */
    RlxDecl *output_decl;         /* per g->outputs[i], or NULL (set by the .rlxg reader) */
    RlxNames value_ids;           /* name -> value id (rlx_value_add keeps it) */
    int64_t fold_work;            /* constant folding's work so far (fold.c's budget) */
    struct RlxFoldScratch *fold_scratch;   /* fold.c's per-value arrays, reused */
} RlxGraph;
typedef struct RlxFoldScratch {
    int64_t *off, *woff;          /* all -1 between folds */
    int cap;
} RlxFoldScratch;

RlxGraph *rlx_graph_new(const char *file);
int rlx_value_find(const RlxGraph *g, const char *name);           /* -1 if none */
int rlx_value_add(RlxGraph *g, const char *name);                  /* error if duplicate */
int rlx_node_add(RlxGraph *g, const char *name, RlxOp op, int nin, const int *in, int nout, const int *out);
RlxAttr *rlx_attr_add(RlxGraph *g, int node, const char *name, RlxAttrKind kind);
const RlxAttr *rlx_attr_get(const RlxNode *n, const char *name);   /* NULL if absent */
int64_t rlx_attr_i(const RlxNode *n, const char *name, int64_t dflt);
double rlx_attr_f(const RlxNode *n, const char *name, double dflt);
const char *rlx_attr_s(const RlxNode *n, const char *name, const char *dflt);
/* Fills the attribute defaults of ops.def into the node (missing ones only),
 * and rejects unknown names or wrong kinds. */
void rlx_attr_check(RlxGraph *g, int node);

static inline int64_t rlx_align64(int64_t n) { return (n + 63) & ~(int64_t)63; }   /* n >= 0 */
int64_t rlx_value_numel(const RlxValue *v);     /* errors on overflow */
int64_t rlx_value_bytes(const RlxValue *v);     /* numel * dtype size; errors on overflow */
/* 1 (and *bytes) if v's dims are known, non-negative and its byte size fits
 * in 64 bits, else 0: for checks whose message names the file and node. */
int rlx_value_size_ok(const RlxValue *v, int64_t *bytes);
/* Reads element i of a weight as int64 / double (any dtype). */
int64_t rlx_weight_i64(const RlxValue *v, int64_t i);
double rlx_weight_f64(const RlxValue *v, int64_t i);
int rlx_is_const(const RlxGraph *g, int value);   /* a weight (has data) */

/* "node 'NAME' (OP)" error prefix helpers: FILE: node 'NAME' (OP): message */
void rlx_node_error(const RlxGraph *g, int node, const char *fmt, ...);
const char *rlx_shape_str(const RlxValue *v);   /* "[1,3,224,224]" (arena) */

/* Debug dump in the pure-JSON .rlxg form (readable back). */
void rlx_graph_dump(const RlxGraph *g, FILE *f);

/* ---- frontend ---- */
RlxGraph *rlx_read_rlxg(const char *path);               /* container or pure JSON */
void rlx_write_rlxg(const RlxGraph *g, RlxBuf *out);     /* container form */
/* ONNX (opset 1-17); dim_names[i] = dim_values[i] bind symbolic input dims. */
RlxGraph *rlx_read_onnx(const char *path, int ndims, const char *const *dim_names, const int64_t *dim_values);
/* The same over a file's bytes already in memory (len bytes, no NUL needed;
 * `path` names it in messages). The graph may point into buf (a container's
 * weights), so buf must outlive it. The fuzz targets (tests/fuzz/) use these. */
RlxGraph *rlx_read_rlxg_buffer(const char *path, const uint8_t *buf, size_t len);
RlxGraph *rlx_read_onnx_buffer(const char *path, const uint8_t *buf, size_t len, int ndims,
                               const char *const *dim_names, const int64_t *dim_values);
/* Reads a whole file into the arena; errors name the file. */
uint8_t *rlx_read_file(const char *path, size_t *len);

/* ---- passes (lib/passes/, one per file) ---- */
/* What a target's prepare is told (target.h). */
typedef struct {
    int winograd;                /* 3x3 convolutions may run by Winograd (--no-winograd: 0) */
    int blas;                    /* --blas openblas: GEMMs take plain operands */
} RlxOptions;

/* --precision: how the precision pass (precision.c) stores float tensors. */
typedef enum { RLX_PRECISION_F32, RLX_PRECISION_F16, RLX_PRECISION_BF16, RLX_PRECISION_AUTO } RlxPrecision;
struct RlxTarget;
/* --keep-f32 NODE, before fusion: the node's outputs stay f32 (error if no such node). */
void rlx_keep_f32(RlxGraph *g, const char *name);
/* After fusion, before the target's prepare: storage dtypes of activations
 * (precision) and of GEMM/convolution weights (weights: f32, f16, bf16 or i8). */
void rlx_assign_precision(RlxGraph *g, const struct RlxTarget *t, RlxPrecision precision, RlxDType weights);

void rlx_infer(RlxGraph *g);                             /* verify + shapes/dtypes */
void rlx_legalize(RlxGraph *g, const char *target);      /* require: inferred */
const char *rlx_node_unsupported(const RlxGraph *g, int node, const char *target);
void rlx_constants_to_weights(RlxGraph *g);              /* Constant nodes -> weights */
void rlx_dce(RlxGraph *g);                               /* drop unused nodes */
void rlx_schedule(RlxGraph *g);                          /* fills g->order */
void rlx_schedule_memory(RlxGraph *g);                   /* memsched.c; require: scheduled */

/* shape helpers (infer.c), shared with lowering */
int rlx_norm_axis(const RlxGraph *g, int node, int64_t axis, int rank);
/* The window of Conv, MaxPool, AveragePool, LpPool over the spatial axes
 * (input rank - 2 of them, 1 to RLX_MAX_WINDOW_AXES): kernel, strides,
 * dilations, the effective pads (auto_pad resolved) and the output size. */
#define RLX_MAX_WINDOW_AXES 3
typedef struct {
    int nsp;
    int64_t k[RLX_MAX_WINDOW_AXES], s[RLX_MAX_WINDOW_AXES], d[RLX_MAX_WINDOW_AXES];
    int64_t pad_begin[RLX_MAX_WINDOW_AXES], pad_end[RLX_MAX_WINDOW_AXES];
    int64_t out[RLX_MAX_WINDOW_AXES];
} RlxWindow;
void rlx_conv_geometry(const RlxGraph *g, int node, RlxWindow *w);
void rlx_slice_params(const RlxGraph *g, int node, int64_t starts[], int64_t steps[], int64_t out_dims[]);
int rlx_reduce_axes(const RlxGraph *g, int node, int rank, int mask[]);

/* Arena plan: an offset for every non-weight value. */
typedef struct {
    int64_t *off;                /* per value id: arena offset, -1 if none */
    int64_t *size;               /* per value id: bytes (unaligned) */
    int *first, *last;           /* per value id: schedule step interval */
    int64_t arena_bytes;         /* aligned total */
    int64_t lower_bound;         /* max over steps of live bytes (aligned sizes) */
    int64_t naive_bytes;         /* sum of aligned sizes of all planned values */
    int64_t weights_bytes;       /* data section of the weights file */
    int64_t *woff;               /* per value id: offset in weights data, -1 if none */
    /* buffers: values that share bytes (views, in-place) share an owner */
    int *buf;                    /* per value id: the owner value, -1 if none */
    int *bfirst, *blast;         /* per owner: the buffer's interval */
    int64_t *bufsize;            /* per owner: the buffer's bytes (unaligned) */
    int64_t *suboff;             /* per value id: its bytes' offset inside its owner's (a Concat's part) */
} RlxPlan;

/* Generic planner over intervals: sizes[i] bytes live in steps [first[i],
 * last[i]] (inclusive); writes 64-byte aligned offsets; returns the arena
 * size. Values with size 0 get offset 0 and occupy nothing. */
int64_t rlx_plan_intervals(int n, const int64_t *sizes, const int *first, const int *last, int64_t *off_out);
RlxPlan *rlx_plan(RlxGraph *g);                          /* require: scheduled */
/* concat_in_place: a Concat's inputs may be made in their place in its
 * output (plan.c), whose lowering then copies nothing for them */
RlxPlan *rlx_plan_ex(RlxGraph *g, int concat_in_place);
/* report.c: --report and --arena-limit */
void rlx_report_text(const RlxGraph *g, const RlxPlan *p, RlxBuf *out);
void rlx_report_svg(const RlxGraph *g, const RlxPlan *p, RlxBuf *out);
void rlx_check_arena_limit(const RlxGraph *g, const RlxPlan *p, int64_t limit);
/* Asserts the plan's invariants: alignment, every slot inside the arena, no
 * two values with overlapping intervals sharing bytes, weights disjoint. */
void rlx_plan_verify(const RlxGraph *g, const RlxPlan *p);
/* The -v summary line. */
void rlx_plan_print(const RlxGraph *g, const RlxPlan *p, FILE *f);

/* ---- thunk list ---- */
enum { RLX_SPACE_ARENA, RLX_SPACE_WEIGHTS };
typedef struct {
    int value;                   /* value id, -1 if none (absent optional input) */
    int space;                   /* RLX_SPACE_* */
    int64_t off;                 /* byte offset in its space */
} RlxSlot;

typedef enum {
#define K(name, fields, doc) RLX_K_##name,
#include "../runtime_min/rk_kernels.def"
#undef K
    RLX_NKERNELS,
    RLX_K_ELTWISE = RLX_NKERNELS   /* an elementwise region, printed inline */
} RlxKernelKind;

typedef struct {
    const char *name;
    const char *fields;          /* "i:n i:c f:eps a:dims " */
    const char *doc;
    rk_kernel_fn fn;
} RlxKernelInfo;
extern const RlxKernelInfo rlx_kernels[RLX_NKERNELS];

/* Second implementations of a kernel (rk_kernels.def, KI): the same params
 * and bits, their own entry rk_<kernel>_<name>. 0 is the kernel itself. */
typedef enum {
    RLX_KI_NONE,
#define K(name, fields, doc)
#define KI(name, impl, doc) RLX_KI_##name##_##impl,
#include "../runtime_min/rk_kernels.def"
#undef KI
#undef K
    RLX_NKIMPLS
} RlxKernelImpl;
typedef struct {
    RlxKernelKind kind;
    const char *name;            /* "rows": the entry is rk_<kernel>_rows */
    const char *doc;
    rk_kernel_fn fn;
} RlxKernelImplInfo;
extern const RlxKernelImplInfo rlx_kernel_impls[RLX_NKIMPLS];

typedef union { int64_t i; double f; } RlxParam;

/* An elementwise region: a straight-line program over its inputs,
 * evaluated per output element. Step k computes op over args; an arg
 * a >= 0 is the region input a, a < 0 is step -(a+1), RLX_ARG_ABSENT an
 * absent optional input. The last step's result is the output. */
#define RLX_ARG_ABSENT (1 << 20)
typedef struct {
    RlxOp op;
    int nargs;
    int args[4];
    RlxDType dtype;              /* dtype of the step's result */
    double alpha, beta;          /* op attributes, where the op has them */
} RlxEltStep;

typedef struct {
    RlxKernelKind kind;
    int node;                    /* the source node (first of a fused group) */
    int nin, nout;
    RlxSlot in[16], out[8];
    RlxParam p[64];              /* kernel params, in rk_<name>_params order */
    int np;
    int64_t scratch;             /* bytes of ctx->scratch the kernel uses per thread */
    RlxKernelImpl impl;          /* which implementation the C target calls (0: the kernel itself) */
    /* RLX_K_ELTWISE: */
    RlxEltStep *steps;
    int nsteps;
} RlxThunk;

typedef struct {
    RlxThunk *t;
    int n, cap;
} RlxThunkList;
int64_t rlx_thunks_scratch(const RlxThunkList *tl);       /* the largest per-thread need */

struct RlxTarget;
/* The neutral thunk list (lower.c; require: planned); the target's own
 * lowering hook is asked first for each node. */
RlxThunkList *rlx_lower(RlxGraph *g, const RlxPlan *plan, const struct RlxTarget *target);
void rlx_lower_node(RlxGraph *g, const RlxPlan *plan, RlxThunkList *tl, int node);

/* Elementwise regions (region.c): the steps of an elementwise or rlx.Region
 * node, and the readable program string of an rlx.Region node. */
int rlx_region_from_node(const RlxGraph *g, int node, RlxEltStep **steps);
int rlx_region_parse(const RlxGraph *g, int node, RlxEltStep **steps);
const char *rlx_region_format(const RlxEltStep *steps, int nsteps);
/* A region's loop structure: the output's dims with each operand's element
 * strides (0 where it broadcasts); size-1 dims dropped and mergeable dims
 * merged. The printers of every target walk regions this way. */
typedef struct {
    int rank;
    int64_t dims[RLX_MAX_RANK];
    int64_t stride[17][RLX_MAX_RANK];   /* operands: inputs, then the output */
} RlxLoopNest;
void rlx_region_loops(const RlxGraph *g, const RlxThunk *t, RlxLoopNest *L);
/* The value of region operand o (inputs, then the output), or -1 when it is
 * absent or no step reads it. */
int rlx_region_operand(const RlxThunk *t, int o);
void rlx_fuse_patterns(RlxGraph *g);                      /* patterns.c; before fuse.c */
void rlx_fuse_epilogues(RlxGraph *g);                     /* fuse.c; before regions */
/* Whether a step's arguments are converted to its result's type before the
 * op (arithmetic), or used in their own types (comparisons, Cast, Pow,
 * Where's condition, IsNaN, ...); the C printer and the interpreter agree
 * through this one answer. */
int rlx_step_args_in_result_type(RlxOp op);
void rlx_fuse_elementwise(RlxGraph *g);                   /* fuse.c */


/* Constant folding (fold.c): evaluates a node whose inputs are all
 * constants with the runtime's own kernels and scalar definitions, turns its
 * outputs into weights and marks it dead. Returns 1 if it folded. */
int rlx_fold_node(RlxGraph *g, int node);
/* The reference evaluator (fold.c): one node lowered (neutral), with the
 * runtime kernels' choices for plain operands (the C target's select), run
 * on runtime_min's kernels over explicit base pointers (A, W). Constant
 * folding uses it whatever the target, so every target folds to the same
 * bits. rlx_exec_thunks runs a selected thunk list the same way. */
int rlx_exec_thunks(const RlxGraph *g, const RlxThunkList *tl, uint8_t *arena, const uint8_t *weights);

/* ---- the pipeline (pipeline.c) ---- */
/* What the driver's flags choose, and a hook told after each stage (its
 * name, its -d dump letter or 0, the graph, the plan once there is one). */
typedef struct {
    const char *target;          /* "c", ... */
    int no_opt;                  /* -O0: no fusion, no prepacking */
    int blas;                    /* --blas openblas: no prepacking either */
    int no_winograd;             /* --no-winograd */
    int64_t arena_limit;         /* --arena-limit, -1 if none */
    void (*after)(void *hook, const char *stage, char dump_letter, RlxGraph *g, const RlxPlan *plan);
    void *hook;
    RlxPrecision precision;      /* --precision (zero: f32) */
    RlxDType weights;            /* --weights (zero: f32) */
    int nkeep;                   /* --keep-f32 NODE names */
    const char *const *keep;
} RlxPipeline;
typedef struct {
    const struct RlxTarget *target;  /* --target's descriptor (target.h) */
    RlxPlan *plan;
    RlxThunkList *thunks;
    void *selected;              /* what the target's select returned (its emit gets it) */
} RlxCompiled;
/* Every pass from a read model to the thunk list, in order. */
void rlx_compile_graph(RlxGraph *g, const RlxPipeline *p, RlxCompiled *out);

/* ---- codegen ---- */
typedef struct {
    const char *name;            /* model name, the API prefix */
    int emit_main;
    const char *header_name;     /* "model.h", as #included by model.c */
    uint64_t hash;               /* the model hash (rlx_weights_image) */
    int nthreads;                /* default thread count of the model */
    int blas;                    /* --blas openblas: the runtime must be built with RLX_BLAS_OPENBLAS */
    int embed_weights;           /* --embed-weights: NAME.h declares NAME_weights (NAME_weights.c) */
    int dump_values;             /* debug (rlxc check): every value passed to rlx_dump_value after its thunk */
} RlxCOptions;
void rlx_codegen_c(const RlxGraph *g, const RlxPlan *plan, const RlxThunkList *tl,
                   const RlxCOptions *opt, RlxBuf *c_out, RlxBuf *h_out);
/* The weights file image; also fills *hash. */
void rlx_weights_image(const RlxGraph *g, const RlxPlan *plan, RlxBuf *out, uint64_t *hash);

#endif
