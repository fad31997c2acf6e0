/* passes.h - helpers shared by the passes and by the op-family files
 * (ext_*.c), which add ops without touching the core passes.
 *
 * An op family file defines
 *     int rlx_infer_FAMILY(RlxGraph *g, int node, RlxShape *outs);
 *     int rlx_lower_FAMILY(RlxLower *L, int node);
 * each returning 1 if the node's op is one of its own (0 otherwise), and is
 * listed once in ext.c. infer.c and lower.c ask the families for any op
 * they don't handle themselves.
 */
#ifndef RLX_PASSES_H
#define RLX_PASSES_H

#include "rlx.h"

/* ---- inference (infer.c) ---- */
typedef struct {
    RlxDType dtype;
    int rank;
    int64_t dims[RLX_MAX_RANK];
} RlxShape;

/* dtype classes for rlx_want_dtype */
enum { T_ANY, T_NUMERIC, T_FLOAT, T_SIGNED, T_BOOL, T_INDEX };

int rlx_has_input(const RlxGraph *g, int node, int k);            /* present (not -1) */
const RlxValue *rlx_input(const RlxGraph *g, int node, int k);     /* asserts present */
const char *rlx_dims_str(int rank, const int64_t *dims);
int64_t rlx_add_checked(const RlxGraph *g, int node, int64_t a, int64_t b);
int64_t rlx_mul_checked(const RlxGraph *g, int node, int64_t a, int64_t b);   /* a, b >= 0 */
int64_t rlx_prod_checked(const RlxGraph *g, int node, const int64_t *dims, int from, int to);
int rlx_dtype_in_class(RlxDType dt, int cls);
void rlx_want_dtype(const RlxGraph *g, int node, int k, int cls);
void rlx_want_same_dtype(const RlxGraph *g, int node, int a, int b);
void rlx_want_rank(const RlxGraph *g, int node, int k, int min, int max);
/* An ints attribute of exactly `count` entries, each >= min; absent -> dflt. */
void rlx_ints_attr(const RlxGraph *g, int node, const char *name, int count, int64_t min, int64_t dflt, int64_t *out);
/* Infers one node whose inputs are inferred, and folds it if it can
 * (rlx_infer does this for every node in schedule order). */
void rlx_infer_node(RlxGraph *g, int node);
void rlx_want_const(const RlxGraph *g, int node, int k, const char *role);
/* A constant 1-D integer input, read into an arena array of *count entries. */
int64_t *rlx_const_ints(const RlxGraph *g, int node, int k, const char *role, int *count);
/* Constant axes, normalized, duplicates rejected; mask[axis] = 1. */
void rlx_axes_mask(const RlxGraph *g, int node, const int64_t *axes, int n, int rank, int *mask);
/* NumPy broadcasting of inputs [first, first+count) into out (dims, rank). */
void rlx_broadcast(const RlxGraph *g, int node, int first, int count, RlxShape *out);

/* ---- lowering (lower.c) ---- */
typedef struct {
    RlxGraph *g;
    const RlxPlan *plan;
    RlxThunkList *tl;
} RlxLower;

RlxThunk *rlx_thunk_new(RlxThunkList *tl, RlxKernelKind kind, int node);
void rlx_tk_i(RlxThunk *t, const char *field, int64_t v);
int64_t rlx_tk_get_i(const RlxThunk *t, const char *field);
double rlx_tk_get_f(const RlxThunk *t, const char *field);
void rlx_tk_get_a(const RlxThunk *t, const char *field, int64_t *out);   /* RLX_MAX_RANK entries */
void rlx_tk_f(RlxThunk *t, const char *field, double v);
void rlx_tk_a(RlxThunk *t, const char *field, const int64_t *v, int n);
RlxSlot rlx_slot_of(const RlxLower *L, int value);
void rlx_tk_in(const RlxLower *L, RlxThunk *t, int value);    /* value may be -1 (absent) */
void rlx_tk_out(const RlxLower *L, RlxThunk *t, int value);
int64_t rlx_prod(const int64_t *dims, int from, int to);
int rlx_value_used(const RlxGraph *g, int value);            /* read by a live node, or an output */

/* ---- op families (ext_*.c), dispatched by ext.c ---- */
int rlx_infer_ext(RlxGraph *g, int node, RlxShape *outs);
int rlx_lower_ext(RlxLower *L, int node);
#define RLX_FAMILIES(F) F(norm) F(loss) F(conv) F(shape) F(index) F(rnn) F(quant) F(signal) F(vision) F(ctrl)
#define F(fam) int rlx_infer_##fam(RlxGraph *g, int node, RlxShape *outs); int rlx_lower_##fam(RlxLower *L, int node);
RLX_FAMILIES(F)
#undef F

/* Whether the C target may pack an RNN/GRU/LSTM's W and R for its f32
 * kernel (rk_rnn_f32, ext_rnn.c): every tensor f32, W and R constant, no
 * sequence_lens, activations Sigmoid, Tanh or Relu. */
int rlx_rnn_packable(const RlxGraph *g, int node);

#endif
