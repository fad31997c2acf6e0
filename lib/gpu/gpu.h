/* gpu.h - what the GPU targets share: kernels written once, launched from
 * the neutral thunk list.
 *
 * A GPU target's select (rlx_gpu_select) turns each neutral thunk into
 * launches: a template (lib/gpu/kernels/NAME.kl, written once in a small
 * common subset of C), the constants that specialize it (shapes, strides,
 * attributes, as #defines and constant arrays), its operands (a slot, the
 * storage type the kernel sees it as, read or written), the workgroup size,
 * the grid, and the loop iterations one invocation runs. The renderer
 * (render.c) prints a launch as kernel source in one language: the
 * language's prelude (kernel signature, ids, shared memory, barriers, the
 * names of types and math functions), the scalar prelude (scalar.kl: the
 * semantics of runtime_min/rlx_scalar.h), the operand accessors, the
 * constants, then the template. Elementwise regions have no template: their
 * body is printed from the step list through per-language tables.
 * Launches whose source text is the same share one kernel; what differs
 * between them is only the operand offsets, the push constants.
 *
 * Operand accessors in the source (i is operand i of the launch):
 *   X<i>(k)     the element k of operand i, as stored (an lvalue): moves
 *   L<i>(k)     element k converted to its compute type (float for f32,
 *               f16 and bf16; double for f64; int for i8..i32; uint for
 *               u8..u32 and bool; int64 / uint64 for i64 / u64)
 *   S<i>(k, v)  stores v, converted from the compute type to the storage
 * with k a uint element index relative to the operand's offset.
 */
#ifndef RLX_GPU_SHARED_H
#define RLX_GPU_SHARED_H

#include "rlx.h"
#include "../target.h"

typedef enum { RLX_LANG_GLSL, RLX_LANG_CUDA, RLX_LANG_MSL, RLX_NLANGS } RlxLang;

/* The storage types kernels see operands as. Data movement picks one of
 * the plain ones by element size: 1 U8, 2 U16, 4 U32, 8 X64 (a pair of
 * 32-bit words, so that moving 8-byte elements needs no 64-bit integers). */
typedef enum {
    G_F32, G_F64, G_F16, G_BF16, G_I8, G_U8, G_I16, G_U16, G_I32, G_U32, G_I64, G_U64, G_BOOL, G_X64, G_NTYPES
} RlxGType;

RlxGType rlx_gtype_of(RlxDType dt);       /* the storage type of a dtype */
RlxGType rlx_gtype_bytes(int64_t esize);  /* the plain type of an element size (1, 2, 4, 8) */
int rlx_gtype_size(RlxGType t);

enum { RLX_GPU_MAX_OPS = 12, RLX_GPU_MAX_CONSTS = 64, RLX_GPU_MAX_ARRAYS = 12, RLX_GPU_MAX_LAUNCHES = 4 };

typedef struct {
    RlxSlot slot;
    RlxGType type;
    int write;
} RlxGpuOperand;

typedef struct {
    const char *name;
    int64_t v;
} RlxGpuConst;

typedef struct {
    const char *name;
    int n;
    int64_t v[RLX_MAX_RANK * 2];
} RlxGpuArray;

/* A macro of the launch, language-neutral text over the accessors and
 * rlx_* names ("LBIAS(k)" -> "L2(k)"). */
typedef struct {
    const char *name, *text;
} RlxGpuDefine;

/* What a target's select asks of the shared GPU select beyond its limits:
 * the kernels that need a feature, or that suit only some targets. The
 * defaults (all 0, rlx_gpu_select) are the kernels every GPU target runs. */
typedef struct {
    unsigned features;     /* RLX_TF_*: with RLX_TF_SUBGROUPS the row reductions (softmax,
                              LayerNorm) reduce within subgroups of 32 by shuffles
                              (the prelude's RLX_SHUFFLE_XOR), then across them */
    int reg_tiles;         /* GEMMs and convolutions in 64 x 64 tiles, 4 x 4 outputs per
                              invocation (gemm_tiled.kl) where the product is large enough;
                              its loops run long, so not for lavapipe's loop cap */
} RlxGpuOptions;

typedef struct {
    const char *tmpl;                    /* template name; NULL: an elementwise region */
    const RlxThunk *thunk;               /* its thunk (the region's steps, comments) */
    int nops;
    RlxGpuOperand ops[RLX_GPU_MAX_OPS];
    int nconst;
    RlxGpuConst consts[RLX_GPU_MAX_CONSTS];
    int narr;
    RlxGpuArray arrays[RLX_GPU_MAX_ARRAYS];
    int ndefs;
    RlxGpuDefine defs[24];
    uint32_t local[3];
    uint32_t groups[3];
    uint32_t shared_bytes;
    uint64_t trips;                      /* loop iterations of one invocation, all loops */
    RlxGpuOptions opt;                   /* the target's (an input to the builders) */
} RlxGpuLaunch;

/* A distinct kernel and a dispatch of it. */
typedef struct {
    const char *name;                    /* k<N>_<template> */
    const char *source;                  /* the kernel in the program's language */
    const char *body;                    /* its own part (after the preamble: rlx_gpu_render_split) */
    uint32_t local[3];
    uint32_t shared_bytes;
    uint64_t trips;
    uint32_t needs;                      /* RLX_GPU_NEED_* (rlx_gpu.h) */
} RlxGpuKernel;

typedef struct {
    int kernel;
    uint32_t groups[3];
    int npush;
    uint32_t push[32];
    int barrier;
    int thunk;                           /* index in the thunk list */
} RlxGpuDispatch;

typedef struct {
    RlxLang lang;
    RlxGpuKernel *k;
    int nk, capk;
    RlxGpuDispatch *d;
    int nd, capd;
} RlxGpuProgram;

/* The GPU select: every thunk of tl as launches, rendered in `lang` and
 * deduplicated, with the barriers the schedule needs. A thunk kind
 * without a template is an internal error (legalize's column for the
 * target must not allow it). */
RlxGpuProgram *rlx_gpu_select(const RlxGraph *g, const RlxPlan *plan, const RlxThunkList *tl, RlxLang lang,
                              const RlxTargetLimits *lim);
/* The same with the target's options (NULL: the defaults). */
RlxGpuProgram *rlx_gpu_select_with(const RlxGraph *g, const RlxPlan *plan, const RlxThunkList *tl, RlxLang lang,
                                   const RlxTargetLimits *lim, const RlxGpuOptions *opt);

/* schedule.c: a host file's kernel table, dispatches and NAME_schedule
 * (rlx_gpu.h) for the program in job->selected; code[k] and code_bytes[k]
 * are the C expressions of kernel k's code pointer and size. */
void rlx_gpu_emit_schedule(RlxBuf *c, const RlxEmitJob *job, const char *const *code, const char *const *code_bytes);
/* schedule.c: the NAME_* API of the host file over a host's functions
 * (host "rlx_vk": rlx_vk_model_new(init_arg, m), rlx_vk_run, ...), and with
 * --emit-main its main(). */
void rlx_gpu_emit_api(RlxBuf *c, const RlxEmitJob *job, const char *host, const char *init_arg);
/* schedule.c: "DECL = {" then n elements of elem_bytes (1 or 4) each from
 * data as hex literals, per_line to a line, then "};" (a cubin, a SPIR-V
 * module). */
void rlx_gpu_emit_hex(RlxBuf *c, const char *decl, const void *data, size_t n, int elem_bytes, int per_line);
/* "RLX_GPU_NEED_16BIT | RLX_GPU_NEED_INT64", or "0" */
const char *rlx_gpu_needs_str(uint32_t needs);

/* The legalize column of the GPU targets (support.c), and their check of
 * what a dtype can't say (NULL: fine; else " for ..."). */
extern const RlxOpSupport rlx_gpu_support[];   /* ends with {RLX_NOPS, 0} */
const char *rlx_gpu_node_check(const RlxGraph *g, int node);

/* Whether the shared kernels handle a thunk kind (for the descriptors'
 * columns and the documentation). */
int rlx_gpu_has_kind(RlxKernelKind kind);

/* render.c: the kernel source of one launch; *needs gets its features. */
const char *rlx_gpu_render(const RlxGraph *g, const RlxGpuLaunch *l, RlxLang lang, const char *name, uint32_t *needs);
/* The same, and (body_at, if not NULL) where the kernel's own part starts:
 * the text before it is the preamble (the language's header, prelude and
 * scalar functions), which a module of many kernels in one translation
 * unit (CUDA) prints once, as rlx_gpu_preamble gives it for the union of
 * the kernels' needs. */
const char *rlx_gpu_render_split(const RlxGraph *g, const RlxGpuLaunch *l, RlxLang lang, const char *name,
                                 uint32_t *needs, size_t *body_at);
const char *rlx_gpu_preamble(RlxLang lang, uint32_t needs);

/* select.c helpers for the per-kind launch builders (launch.c) */
void rlx_gpu_op(RlxGpuLaunch *l, RlxSlot s, RlxGType t, int write);
void rlx_gpu_const(RlxGpuLaunch *l, const char *name, int64_t v);
void rlx_gpu_array(RlxGpuLaunch *l, const char *name, const int64_t *v, int n);
void rlx_gpu_define(RlxGpuLaunch *l, const char *name, const char *text);
/* One invocation per item of n, in workgroups of `local`: groups over up to
 * two grid dimensions, and the constant GX (groups in x) that the
 * prelude's RLX_GID uses to flatten them. */
void rlx_gpu_grid_1d(RlxGpuLaunch *l, int64_t n, uint32_t local, const RlxTargetLimits *lim);

/* A launch builder: fills the launches of a thunk of its kind, l[0] up to
 * l[RLX_GPU_MAX_LAUNCHES - 1] (all zeroed, with the thunk and a 1x1x1
 * workgroup), and returns how many (dispatched in order; select.c puts a
 * barrier between those that depend on each other like any others); 0 if
 * this thunk's params are beyond its kernels (then the target lacks it). Each
 * family of kinds has its file: launch.c (data movement, products,
 * convolutions, normalizations, reductions, pooling), launch_index.c
 * (losses, index and scatter kernels, Trilu, CumSum, TopK, ...),
 * launch_vision.c (Resize, ConvTranspose, GridSample, recurrent cells,
 * quantized and signal kernels, ...). */
typedef int (*RlxGpuBuilder)(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l);
RlxGpuBuilder rlx_gpu_builder_index(RlxKernelKind kind);    /* launch_index.c; NULL: not its kind */
RlxGpuBuilder rlx_gpu_builder_vision(RlxKernelKind kind);   /* launch_vision.c */
/* launch_vision.c's part of rlx_gpu_node_check: its ops' conditions that
 * are not a dtype (NULL: fine) */
const char *rlx_gpu_node_check_vision(const RlxGraph *g, int node);

/* The launches of one thunk (launch.c) into out[0..RLX_GPU_MAX_LAUNCHES);
 * returns how many it wrote, 0 if the kind has no template. */
int rlx_gpu_launches(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *out);
/* The same with the target's options (NULL: the defaults; out->opt). */
int rlx_gpu_launches_with(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, const RlxGpuOptions *opt,
                          RlxGpuLaunch *out);

#endif
