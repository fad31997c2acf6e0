/* launch_index.c - the GPU launches of losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), the index and scatter kernels, Trilu, CumSum, Hardmax, TopK and the small shape kernels (gpu.h: RlxGpuBuilder).
 *
 * Each kind's builder reads the thunk's params (runtime_min/rk_kernels.def),
 * picks its template in lib/gpu/kernels/ and fills the launch as launch.c's
 * builders do; its ops go into support.c's column for the GPU targets at
 * the same time.
 *
 * The templates name their operands through macros (XDAT(k), LSC(k),
 * SOUT(k, v), ...: named() below), so that an optional operand shifts no
 * numbers. Indices are i32 data or i64 pairs read as an int (rs_idx64,
 * which maps a value past int32 to one every range check refuses), so no
 * index kernel needs 64-bit arithmetic; an index out of range stores
 * RLX_E_RANGE in the run's status word (SETERR), as the C kernel returns
 * it. Data movement sees elements by their size (rlx_gtype_bytes);
 * arithmetic sees the dtype. Each builder counts the loop iterations one
 * invocation runs (l->trips, GPU.md: lavapipe stops loops after 65535),
 * with the formula beside it. The C kernels (runtime_min/rk_*.c) define
 * what is computed: the same order of accumulation where it decides the
 * bits (CumSum), the same NaN and tie rules (Hardmax, TopK).
 */
#include <string.h>

#include "gpu.h"
#include "../passes/passes.h"
#include "../../runtime_min/rlx_rt.h"

#define PI(name) rlx_tk_get_i(t, name)
#define PF(name) rlx_tk_get_f(t, name)

/* ---- helpers ---- */

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

static int64_t numel_of(const int64_t *dims, int rank) {
    int64_t n = 1;
    for (int a = 0; a < rank; a++) n *= dims[a];
    return n;
}

static void strides_of(const int64_t *dims, int rank, int64_t *st) {
    int64_t s = 1;
    for (int a = rank - 1; a >= 0; a--) {
        st[a] = s;
        s *= dims[a];
    }
}

enum { N_X = 1, N_L = 2, N_S = 4 };

/* Operand s with the accessors X<name>(k), L<name>(k) and S<name>(k, v)
 * that `which` asks for (S makes it written). */
static void named(RlxGpuLaunch *l, const char *name, RlxSlot s, RlxGType type, int which) {
    int i = l->nops;
    if (which & N_X) rlx_gpu_define(l, rlx_fmt("X%s(k)", name), rlx_fmt("X%d(k)", i));
    if (which & N_L) rlx_gpu_define(l, rlx_fmt("L%s(k)", name), rlx_fmt("L%d(k)", i));
    if (which & N_S) rlx_gpu_define(l, rlx_fmt("S%s(k, v)", name), rlx_fmt("S%d(k, v)", i));
    rlx_gpu_op(l, s, type, (which & N_S) != 0);
}

/* The moved output: X<name>(k) written (by size). */
static void moved_out(RlxGpuLaunch *l, const char *name, RlxSlot s, int64_t esize) {
    rlx_gpu_define(l, rlx_fmt("X%s(k)", name), rlx_fmt("X%d(k)", l->nops));
    rlx_gpu_op(l, s, rlx_gtype_bytes(esize), 1);
}

/* An index operand (RLX_I32 or RLX_I64) read as an int by macro(j). */
static void index_op(RlxGpuLaunch *l, const char *macro, RlxSlot s, int64_t dtype) {
    int i64 = dtype == RLX_I64;
    rlx_gpu_define(l, rlx_fmt("%s(j)", macro), rlx_fmt(i64 ? "rs_idx64(X%d(j))" : "L%d(j)", l->nops));
    rlx_gpu_op(l, s, i64 ? G_X64 : G_I32, 0);
}

/* The run's status word (select.c): SETERR(v) stores v there. */
static void status_op(RlxGpuLaunch *l) {
    rlx_gpu_define(l, "SETERR(v)", rlx_fmt("S%d(0u, v)", l->nops));
    rlx_gpu_op(l, (RlxSlot){-2, RLX_SPACE_ARENA, -1}, G_U32, 1);
    rlx_gpu_const(l, "STATUS_RANGE", RLX_E_RANGE);
}

/* an element's bytes as a value of the plain type of its size */
static const char *elem_value(int64_t bits, int64_t esize) {
    uint64_t u = (uint64_t)bits;
    unsigned long long lo = u & 0xffffffffu, hi = u >> 32;
    switch (esize) {
    case 1: return rlx_fmt("rlx_u8(%lluu)", lo & 0xff);
    case 2: return rlx_fmt("rlx_u16(%lluu)", lo & 0xffff);
    case 4: return rlx_fmt("%lluu", lo);
    default: return rlx_fmt("RLX_X64(%lluu, %lluu)", lo, hi);
    }
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The float accumulator of a float dtype (double for f64) and its math. */
static void float_acc(RlxGpuLaunch *l, int64_t dt) {
    int d = dt == RLX_F64;
    rlx_gpu_define(l, "ACC", d ? "rlx_f64" : "float");
    rlx_gpu_define(l, "MAXF(a, b)", d ? "rs_max_d(a, b)" : "rs_max(a, b)");
    rlx_gpu_define(l, "EXPF(x)", d ? "rs_exp_d(x)" : "RLX_EXPF(x)");
    rlx_gpu_define(l, "LOGF(x)", d ? "rs_log_d(x)" : "RLX_LOGF(x)");
}

/* ---- losses ---- */

/* loss.kl. Trips: per position P = 2C for the softmax (max, then the sum of
 * exponentials) + C more with the log-probabilities, 0 for NLL; reduction
 * none runs one position (P), sum and mean ceil(NPOS / 128) positions
 * (each 1 + P) and the 7 steps of the tree. */
static int l_loss(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t dt = PI("dtype"), c = PI("c"), inner = PI("inner"), npos = PI("n") * inner, red = PI("reduction");
    int softmax = t->kind == RLX_K_softmax_ce_loss, logp = softmax && PI("has_log_prob");
    int has_w = PI("has_weight") != 0;
    RlxGType gt = rlx_gtype_of((RlxDType)dt);
    l->tmpl = "loss";
    named(l, "SC", t->in[0], gt, N_L);
    int ti = l->nops;
    index_op(l, "TGT", t->in[1], PI("tgt_dtype"));
    /* a target equal to ignore_index, compared as the target's type: an
     * i32 target never equals one past int32 */
    int64_t ii = PI("ignore_index");
    const char *ignored = "false";
    if (PI("has_ignore") && PI("tgt_dtype") == RLX_I64)
        ignored = rlx_fmt("(X%d(j).x == %lluu && X%d(j).y == %lluu)", ti, (unsigned long long)((uint64_t)ii & 0xffffffffu),
                          ti, (unsigned long long)((uint64_t)ii >> 32));
    else if (PI("has_ignore") && ii >= INT32_MIN && ii <= INT32_MAX)
        ignored = rlx_fmt("(L%d(j) == (%lld))", ti, (long long)ii);
    rlx_gpu_define(l, "IGNORED(j)", ignored);
    if (has_w) named(l, "WT", t->in[2], gt, N_L);
    named(l, "LOSS", t->out[0], gt, N_S);
    if (logp) named(l, "LOGP", t->out[1], gt, N_S);
    status_op(l);
    float_acc(l, dt);
    rlx_gpu_const(l, "C", c);
    rlx_gpu_const(l, "INNER", inner ? inner : 1);
    rlx_gpu_const(l, "NPOS", npos);
    rlx_gpu_const(l, "SOFTMAX", softmax);
    rlx_gpu_const(l, "LOGP", logp);
    rlx_gpu_const(l, "HAS_WEIGHT", has_w);
    rlx_gpu_const(l, "REDUCE", red);
    uint64_t per = softmax ? (uint64_t)(2 + logp) * (uint64_t)c : 0;
    if (red == 0) {
        rlx_gpu_grid_1d(l, npos, 128, lim);
        l->trips = per;
    } else {
        rlx_gpu_grid_1d(l, 128, 128, lim);   /* one workgroup */
        l->shared_bytes = 2 * 128 * (dt == RLX_F64 ? 8 : 4);
        l->trips = cdiv((uint64_t)npos, 128) * (1 + per) + 7;
    }
    return 1;
}

/* ---- index kernels ---- */

/* gather_elements.kl. Trips: RANK (the output coordinates). */
static int l_gather_elements(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank"), axis = (int)PI("axis");
    int64_t e = PI("esize"), dd[RLX_MAX_RANK], id[RLX_MAX_RANK], ds[RLX_MAX_RANK];
    rlx_tk_get_a(t, "data_dims", dd);
    rlx_tk_get_a(t, "idx_dims", id);
    strides_of(dd, rank, ds);
    l->tmpl = "gather_elements";
    named(l, "DAT", t->in[0], rlx_gtype_bytes(e), N_X);
    index_op(l, "IDX", t->in[1], PI("idx_dtype"));
    moved_out(l, "OUT", t->out[0], e);
    status_op(l);
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "AXIS", axis);
    rlx_gpu_const(l, "AXLEN", dd[axis]);
    rlx_gpu_array(l, "IDIMS", id, rank);
    rlx_gpu_array(l, "DSTR", ds, rank);
    rlx_gpu_grid_1d(l, numel_of(id, rank), 128, lim);
    l->trips = (uint64_t)rank;
    return 1;
}

/* ---- shape kernels ---- */

/* trilu.kl. Trips: 0. */
static int l_trilu(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t e = PI("esize"), rows = PI("rows"), cols = PI("cols"), n = PI("batch") * rows * cols;
    l->tmpl = "trilu";
    named(l, "DAT", t->in[0], rlx_gtype_bytes(e), N_X);
    moved_out(l, "OUT", t->out[0], e);
    /* k past [-rows - 1, cols] keeps every row's all or nothing, as there */
    if (t->in[1].value >= 0) {
        rlx_gpu_define(l, "KV", rlx_fmt("rs_clamp64(X%d(0u), %lld, %lld)", l->nops, (long long)(-rows - 1),
                                        (long long)cols));
        rlx_gpu_op(l, t->in[1], G_X64, 0);
    } else {
        rlx_gpu_define(l, "KV", rlx_fmt("(%lld)", (long long)clamp64(PI("k"), -rows - 1, cols)));
    }
    rlx_gpu_define(l, "ZERO", elem_value(0, e));
    rlx_gpu_const(l, "ROWS", rows ? rows : 1);
    rlx_gpu_const(l, "COLS", cols ? cols : 1);
    rlx_gpu_const(l, "UPPER", PI("upper") != 0);
    rlx_gpu_grid_1d(l, n, 128, lim);
    return 1;
}

RlxGpuBuilder rlx_gpu_builder_index(RlxKernelKind kind) {
    switch ((int)kind) {
    case RLX_K_nll_loss: case RLX_K_softmax_ce_loss: return l_loss;
    case RLX_K_gather_elements: return l_gather_elements;
    case RLX_K_trilu: return l_trilu;
    default: return NULL;
    }
}
