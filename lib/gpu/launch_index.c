/* launch_index.c - the GPU launches (gpu.h: RlxGpuBuilder) of the losses
 * (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), the index and
 * scatter kernels (GatherElements, GatherND, ScatterElements, ScatterND),
 * Trilu, CumSum, Hardmax, TopK, the small shape kernels (EyeLike, OneHot,
 * Range, ReverseSequence), MaxUnpool, the f32 normalizations LpNorm, MVN
 * and LRN, and TfIdfVectorizer.
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
 *
 * A thunk is one launch (select.c), so nothing here can copy first and
 * scatter after, or sort in passes: the scatters and MaxUnpool run one
 * invocation per output element that starts from the data and applies, in
 * the C kernel's order, every update aimed at it (no write races, the same
 * winner among duplicates), and TopK gives each input element its place in
 * the sorted column. Where that makes an invocation's loop as long as an
 * input (ScatterND's updates, MaxUnpool's indices, the reducing losses'
 * positions / 128), a large enough model is refused on lavapipe by the host
 * (RLX_E_DEV_LOOPS) and runs on GPUs without the cap.
 */
#include <math.h>
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

/* the bits of a float that is not finite, as a float */
static const char *float_special(float f) {
    return isnan(f) ? "RLX_FBITS(0x7fc00000u)" : f > 0 ? "RLX_FBITS(0x7f800000u)" : "RLX_FBITS(0xff800000u)";
}

/* a float literal of v rounded to float (as launch.c's epilogue prints them) */
static const char *float_lit(double v) {
    if (!isfinite((float)v)) return float_special((float)v);
    const char *s = rlx_fmt("%.9g", (double)(float)v);
    if (!strpbrk(s, ".eEn")) s = rlx_fmt("%s.0", s);
    return rlx_fmt("%sf", s);
}

/* a double as the sum of three floats times a power of two (exact), for
 * GLSL, which has no double literal without a suffix; each float printed
 * with 17 digits, since glslang converts a float literal to double from its
 * decimal text (0.333333343f would become 0.333333343) */
static const char *double_lit(double v) {
    if (!isfinite(v)) return rlx_fmt("rlx_f64(%s)", float_special((float)v));
    int e = 0;
    double m = v == 0 ? 0 : frexp(v, &e);   /* |m| in [0.5, 1): its three parts are normal floats */
    float f[3];
    f[0] = (float)m;
    f[1] = (float)(m - (double)f[0]);
    f[2] = (float)(m - (double)f[0] - (double)f[1]);
    const char *p[3];
    for (int i = 0; i < 3; i++) {
        p[i] = rlx_fmt("%.17g", (double)f[i]);
        if (!strpbrk(p[i], ".eEn")) p[i] = rlx_fmt("%s.0", p[i]);
    }
    RlxBuf b = {0};
    rlx_buf_printf(&b, "((rlx_f64(%sf) + rlx_f64(%sf) + rlx_f64(%sf))", p[0], p[1], p[2]);
    while (e != 0) {   /* 2^e in steps a float holds exactly */
        int k = e > 100 ? 100 : e < -100 ? -100 : e;
        rlx_buf_printf(&b, " * rlx_f64(RLX_FBITS(%uu))", (unsigned)(127 + k) << 23);
        e -= k;
    }
    rlx_buf_printf(&b, ")");
    return b.data;
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

/* v (an int or uint expression) wrapped to a narrow integer dtype's width */
static const char *wrap_int(int64_t dt, const char *v) {
    switch (dt) {
    case RLX_I8: return rlx_fmt("RLX_SEXT(%s, 8)", v);
    case RLX_I16: return rlx_fmt("RLX_SEXT(%s, 16)", v);
    case RLX_U8: return rlx_fmt("((%s) & 0xffu)", v);
    case RLX_U16: return rlx_fmt("((%s) & 0xffffu)", v);
    default: return v;
    }
}

static int is_float_dt(int64_t dt) { return dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16; }
static int is_unsigned_dt(int64_t dt) {
    return dt == RLX_U8 || dt == RLX_U16 || dt == RLX_U32 || dt == RLX_U64 || dt == RLX_BOOL;
}
static int is_wide_dt(int64_t dt) { return dt == RLX_I64 || dt == RLX_U64; }

/* ---- losses ---- */

/* loss.kl. Trips: per position P = 2C for the softmax (max, then the sum of
 * exponentials) + C more with the log-probabilities, 0 for NLL; reduction
 * none runs one position (P), sum and mean ceil(NPOS / WG) positions (each
 * 1 + P) and the log2(WG) steps of the tree. The reduction is one
 * workgroup, so it is as wide as the target allows (up to 1024: 8 times
 * fewer trips than 128), its two arrays inside the shared memory limit. */
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
        ignored = rlx_fmt("(X%d(j).x == %lluu && X%d(j).y == %lluu)", ti,
                          (unsigned long long)((uint64_t)ii & 0xffffffffu), ti, (unsigned long long)((uint64_t)ii >> 32));
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
        uint32_t wg = 1024, esize = dt == RLX_F64 ? 8 : 4, steps = 10;
        while (wg > 32 && ((lim->workgroup_size > 0 && wg > (uint64_t)lim->workgroup_size) ||
                           (lim->shared_bytes > 0 && 2 * wg * esize > (uint64_t)lim->shared_bytes))) {
            wg /= 2;
            steps--;
        }
        rlx_gpu_const(l, "WG", wg);
        rlx_gpu_grid_1d(l, wg, wg, lim);   /* one workgroup */
        l->shared_bytes = 2 * wg * esize;
        l->trips = cdiv((uint64_t)npos, wg) * (1 + per) + steps;
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

/* The scatters' element type and combine (scatter_elements.kl): data
 * (LVAL), updates (LUPD) and output (SOUT) seen as VAL, COMBINE(a, u) for
 * reduction 0 none (moved by size), 1 add, 2 mul, in the element's type as
 * rk_index.c's combine: floats in their compute type (one rounding, as
 * there), integers wrapping (64-bit sums as pairs, products in int64),
 * bools or / and. */
static void scatter_ops(RlxGpuLaunch *l, const RlxThunk *t, int64_t dt, int64_t red) {
    RlxGType gt = rlx_gtype_of((RlxDType)dt);
    const char *val, *comb;
    if (red == 0) {
        gt = rlx_gtype_bytes(rlx_dtype_size((RlxDType)dt));
        val = gt == G_X64 ? "rlx_x64" : "uint";
        comb = "(u)";
    } else if (is_float_dt(dt)) {
        val = dt == RLX_F64 ? "rlx_f64" : "float";
        comb = red == 1 ? "((a) + (u))" : "((a) * (u))";
    } else if (dt == RLX_BOOL) {
        val = "uint";
        comb = red == 1 ? "uint((a) != 0u || (u) != 0u)" : "uint((a) != 0u && (u) != 0u)";
    } else if (is_wide_dt(dt) && red == 1) {
        gt = G_X64;
        val = "rlx_x64";
        comb = "rs_add64(a, u)";
    } else if (is_wide_dt(dt)) {
        val = dt == RLX_I64 ? "rlx_i64" : "rlx_u64";
        comb = dt == RLX_I64 ? "rlx_i64(rlx_u64(a) * rlx_u64(u))" : "((a) * (u))";
    } else if (is_unsigned_dt(dt)) {
        val = "uint";
        comb = wrap_int(dt, red == 1 ? "(a) + (u)" : "(a) * (u)");
    } else {
        val = "int";
        comb = wrap_int(dt, red == 1 ? "int(uint(a) + uint(u))" : "int(uint(a) * uint(u))");
    }
    rlx_gpu_define(l, "VAL", val);
    rlx_gpu_define(l, "COMBINE(a, u)", comb);
    named(l, "VAL", t->in[0], gt, N_L);
    named(l, "UPD", t->in[2], gt, N_L);
    named(l, "OUT", t->out[0], gt, N_S);
}

/* scatter_elements.kl. Trips: RANK (the coordinates) + IDIMS[AXIS] (the
 * updates along the axis). */
static int l_scatter_elements(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank"), axis = (int)PI("axis");
    int64_t dd[RLX_MAX_RANK], id[RLX_MAX_RANK], is[RLX_MAX_RANK];
    rlx_tk_get_a(t, "data_dims", dd);
    rlx_tk_get_a(t, "idx_dims", id);
    strides_of(id, rank, is);
    l->tmpl = "scatter_elements";
    scatter_ops(l, t, PI("dtype"), PI("reduction"));
    index_op(l, "IDX", t->in[1], PI("idx_dtype"));
    status_op(l);
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "AXIS", axis);
    rlx_gpu_const(l, "AXLEN", dd[axis]);
    rlx_gpu_array(l, "DDIMS", dd, rank);
    rlx_gpu_array(l, "IDIMS", id, rank);
    rlx_gpu_array(l, "ISTR", is, rank);
    rlx_gpu_grid_1d(l, numel_of(dd, rank), 128, lim);
    l->trips = (uint64_t)rank + (uint64_t)id[axis];
    return 1;
}

/* gather_nd.kl. Trips: K (the tuple's entries). */
static int l_gather_nd(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int k = (int)PI("k");
    int64_t e = PI("esize"), dims[RLX_MAX_RANK], slice = PI("slice"), nper = PI("nper");
    rlx_tk_get_a(t, "dims", dims);
    l->tmpl = "gather_nd";
    named(l, "DAT", t->in[0], rlx_gtype_bytes(e), N_X);
    index_op(l, "IDX", t->in[1], PI("idx_dtype"));
    moved_out(l, "OUT", t->out[0], e);
    status_op(l);
    rlx_gpu_const(l, "K", k);
    rlx_gpu_const(l, "SLICE", slice ? slice : 1);
    rlx_gpu_const(l, "NPER", nper ? nper : 1);
    rlx_gpu_const(l, "PER_BATCH", numel_of(dims, k) * slice);
    rlx_gpu_array(l, "DIMS", dims, k);
    rlx_gpu_grid_1d(l, PI("batch") * nper * slice, 128, lim);
    l->trips = (uint64_t)k;
    return 1;
}

/* scatter_nd.kl. Trips: NUPD * (1 + K) (each update's tuple). */
static int l_scatter_nd(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int k = (int)PI("k");
    int64_t dims[RLX_MAX_RANK], slice = PI("slice"), nupd = PI("nupd");
    rlx_tk_get_a(t, "dims", dims);
    l->tmpl = "scatter_nd";
    scatter_ops(l, t, PI("dtype"), PI("reduction"));
    index_op(l, "IDX", t->in[1], PI("idx_dtype"));
    status_op(l);
    rlx_gpu_const(l, "K", k);
    rlx_gpu_const(l, "SLICE", slice ? slice : 1);
    rlx_gpu_const(l, "NUPD", nupd);
    rlx_gpu_array(l, "DIMS", dims, k);
    rlx_gpu_grid_1d(l, PI("numel"), 128, lim);
    l->trips = (uint64_t)nupd * (1 + (uint64_t)k);
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

/* cumsum.kl. Trips: RANK (the axis' inner size) + the longest dim (the
 * axis is read at run time). */
static int l_cumsum(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank");
    int64_t dt = PI("dtype"), dims[RLX_MAX_RANK], longest = 0;
    rlx_tk_get_a(t, "dims", dims);
    for (int a = 0; a < rank; a++) longest = dims[a] > longest ? dims[a] : longest;
    RlxGType gt = rlx_gtype_of((RlxDType)dt);
    l->tmpl = "cumsum";
    int x = l->nops, y = x + 1;
    if (is_float_dt(dt)) {
        rlx_gpu_define(l, "ACC", dt == RLX_F64 ? "rlx_f64" : "float");
        rlx_gpu_define(l, "ZERO", dt == RLX_F64 ? "rlx_f64(0)" : "0.0f");
        rlx_gpu_define(l, "ADD(a, b)", "((a) + (b))");
        rlx_gpu_define(l, "LV(k)", rlx_fmt("L%d(k)", x));
        rlx_gpu_define(l, "SV(k, v)", rlx_fmt("S%d(k, v)", y));
    } else if (is_wide_dt(dt)) {
        gt = G_X64;
        rlx_gpu_define(l, "ACC", "rlx_x64");
        rlx_gpu_define(l, "ZERO", "RLX_X64(0u, 0u)");
        rlx_gpu_define(l, "ADD(a, b)", "rs_add64(a, b)");
        rlx_gpu_define(l, "LV(k)", rlx_fmt("X%d(k)", x));
        rlx_gpu_define(l, "SV(k, v)", rlx_fmt("X%d(k) = (v)", y));
    } else {
        /* a wrapping 32-bit sum, its low bits those of the C kernel's 64-bit one */
        rlx_gpu_define(l, "ACC", "uint");
        rlx_gpu_define(l, "ZERO", "0u");
        rlx_gpu_define(l, "ADD(a, b)", "((a) + (b))");
        rlx_gpu_define(l, "LV(k)", rlx_fmt("uint(L%d(k))", x));
        const char *v = is_unsigned_dt(dt) ? "(v)" : "int(v)";
        rlx_gpu_define(l, "SV(k, v)", rlx_fmt("S%d(k, %s)", y, wrap_int(dt, v)));
    }
    rlx_gpu_op(l, t->in[0], gt, 0);
    rlx_gpu_op(l, t->out[0], gt, 1);
    index_op(l, "AXV0", t->in[1], PI("axis_dtype"));
    rlx_gpu_define(l, "AXV", "AXV0(0u)");
    status_op(l);
    int64_t n = numel_of(dims, rank);
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "NUMEL", n);
    rlx_gpu_const(l, "EXCLUSIVE", PI("exclusive") != 0);
    rlx_gpu_const(l, "REVERSE", PI("reverse") != 0);
    rlx_gpu_array(l, "DIMS", dims, rank);
    rlx_gpu_grid_1d(l, n, 128, lim);
    l->trips = (uint64_t)rank + (uint64_t)longest;
    return 1;
}

/* hardmax.kl. Trips: 2 LEN (the search, then the writes). */
static int l_hardmax(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t dt = PI("dtype"), len = PI("axis_len");
    RlxGType gt = rlx_gtype_of((RlxDType)dt);
    l->tmpl = "hardmax";
    rlx_gpu_define(l, "ACC", dt == RLX_F64 ? "rlx_f64" : "float");
    named(l, "DAT", t->in[0], gt, N_L);
    named(l, "OUT", t->out[0], gt, N_S);
    rlx_gpu_const(l, "LEN", len);
    rlx_gpu_const(l, "INNER", PI("inner"));
    rlx_gpu_grid_1d(l, PI("outer") * PI("inner"), 128, lim);
    l->trips = 2 * (uint64_t)len;
    return 1;
}

/* topk.kl. Trips: LEN (the elements one compares with). */
static int l_topk(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t dt = PI("dtype"), len = PI("axis_len"), inner = PI("inner");
    RlxGType gt = rlx_gtype_of((RlxDType)dt);
    l->tmpl = "topk";
    if (is_wide_dt(dt)) {
        gt = G_X64;
        rlx_gpu_define(l, "CTYPE", "rlx_x64");
        rlx_gpu_define(l, "CMPV(a, b)", dt == RLX_I64 ? "rs_cmp64(a, b, true)" : "rs_cmp64(a, b, false)");
    } else {
        rlx_gpu_define(l, "CTYPE", is_float_dt(dt) ? (dt == RLX_F64 ? "rlx_f64" : "float")
                                                   : is_unsigned_dt(dt) ? "uint" : "int");
        /* NaN above every number (only floats have one: a != a) */
        rlx_gpu_define(l, "CMPV(a, b)", "((a) != (a) || (b) != (b) ? int((a) != (a)) - int((b) != (b)) "
                                        ": int((a) > (b)) - int((a) < (b)))");
    }
    int64_t e = rlx_dtype_size((RlxDType)dt);
    named(l, "CMP", t->in[0], gt, N_L);
    named(l, "BYTES", t->in[0], rlx_gtype_bytes(e), N_X);
    moved_out(l, "VAL", t->out[0], e);
    moved_out(l, "IDX", t->out[1], 8);
    rlx_gpu_const(l, "LEN", len);
    rlx_gpu_const(l, "INNER", inner);
    rlx_gpu_const(l, "K", PI("k"));
    rlx_gpu_const(l, "LARGEST", PI("largest") != 0);
    rlx_gpu_grid_1d(l, PI("outer") * len * inner, 128, lim);
    l->trips = (uint64_t)len;
    return 1;
}

/* onehot.kl. Trips: 0. */
static int l_onehot(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t e = PI("esize"), idt = PI("idx_dtype"), depth = PI("depth"), inner = PI("inner");
    l->tmpl = "onehot";
    int x = l->nops;
    RlxGType it = is_wide_dt(idt) ? G_X64 : rlx_gtype_of((RlxDType)idt);
    const char *ix;
    if (is_wide_dt(idt)) ix = rlx_fmt("rs_idx64(X%d(k))", x);   /* u64 as its i64 bits, as there */
    else if (idt == RLX_F64) ix = rlx_fmt("rs_f2i32_d(L%d(k))", x);
    else if (is_float_dt(idt))
        ix = rlx_fmt("rs_f2i32(L%d(k), -2147483648.0f, 2147483648.0f, int(0x80000000u), 2147483647)", x);
    else if (idt == RLX_U32) ix = rlx_fmt("(L%d(k) > 0x7fffffffu ? 2147483647 : int(L%d(k)))", x, x);
    else ix = rlx_fmt("int(L%d(k))", x);
    rlx_gpu_define(l, "IDXV(k)", ix);
    rlx_gpu_op(l, t->in[0], it, 0);
    named(l, "VALS", t->in[2], rlx_gtype_bytes(e), N_X);
    moved_out(l, "OUT", t->out[0], e);
    rlx_gpu_const(l, "DEPTH", depth ? depth : 1);
    rlx_gpu_const(l, "INNER", inner ? inner : 1);
    rlx_gpu_grid_1d(l, PI("outer") * depth * inner, 128, lim);
    return 1;
}

/* eye.kl. Trips: 0. */
static int l_eye(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t e = PI("esize"), rows = PI("rows"), cols = PI("cols"), k = PI("k");
    l->tmpl = "eye";
    moved_out(l, "OUT", t->out[0], e);
    rlx_gpu_define(l, "ONE", elem_value(PI("one_bits"), e));
    rlx_gpu_define(l, "ZERO", elem_value(0, e));
    rlx_gpu_const(l, "COLS", cols ? cols : 1);
    rlx_gpu_const(l, "K", k <= -rows || k >= cols ? cols : k);   /* cols: no diagonal (col - row < cols) */
    rlx_gpu_grid_1d(l, rows * cols, 128, lim);
    return 1;
}

/* range.kl. Trips: 0. */
static int l_range(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t dt = PI("dtype");
    RlxGType gt = rlx_gtype_of((RlxDType)dt);
    l->tmpl = "range";
    named(l, "OUT", t->out[0], gt, N_S);
    int kind = dt == RLX_F64 ? 1 : is_float_dt(dt) ? 0 : is_wide_dt(dt) ? 3 : 2;
    rlx_gpu_const(l, "KIND", kind);
    uint64_t is = (uint64_t)PI("istart"), id = (uint64_t)PI("idelta");
    if (kind == 0) {
        rlx_gpu_define(l, "START", float_lit(PF("fstart")));
        rlx_gpu_define(l, "DELTA", float_lit(PF("fdelta")));
    } else if (kind == 1) {
        rlx_gpu_define(l, "START", double_lit(PF("fstart")));
        rlx_gpu_define(l, "DELTA", double_lit(PF("fdelta")));
    } else if (kind == 2) {
        rlx_gpu_define(l, "START", rlx_fmt("%lluu", (unsigned long long)(is & 0xffffffffu)));
        rlx_gpu_define(l, "DELTA", rlx_fmt("%lluu", (unsigned long long)(id & 0xffffffffu)));
        rlx_gpu_define(l, "WRAPV(v)", wrap_int(dt, is_unsigned_dt(dt) ? "(v)" : "int(v)"));
    } else {
        rlx_gpu_define(l, "START", rlx_fmt("((rlx_u64(%lluu) << 32) | rlx_u64(%lluu))", (unsigned long long)(is >> 32),
                                           (unsigned long long)(is & 0xffffffffu)));
        rlx_gpu_define(l, "DELTA", rlx_fmt("((rlx_u64(%lluu) << 32) | rlx_u64(%lluu))", (unsigned long long)(id >> 32),
                                           (unsigned long long)(id & 0xffffffffu)));
        rlx_gpu_define(l, "VAL64(v)", dt == RLX_I64 ? "rlx_i64(v)" : "(v)");
    }
    rlx_gpu_grid_1d(l, PI("n"), 128, lim);
    return 1;
}

/* reverse_sequence.kl. Trips: RANK. */
static int l_reverse_sequence(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank"), ta = (int)PI("time_axis"), ba = (int)PI("batch_axis");
    int64_t e = PI("esize"), dims[RLX_MAX_RANK], st[RLX_MAX_RANK];
    rlx_tk_get_a(t, "dims", dims);
    strides_of(dims, rank, st);
    l->tmpl = "reverse_sequence";
    named(l, "DAT", t->in[0], rlx_gtype_bytes(e), N_X);
    index_op(l, "LENV", t->in[1], PI("len_dtype"));
    moved_out(l, "OUT", t->out[0], e);
    status_op(l);
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "TIME_AXIS", ta);
    rlx_gpu_const(l, "BATCH_AXIS", ba);
    rlx_gpu_const(l, "TLEN", dims[ta]);
    rlx_gpu_const(l, "TSTRIDE", st[ta]);
    rlx_gpu_array(l, "DIMS", dims, rank);
    rlx_gpu_grid_1d(l, numel_of(dims, rank), 128, lim);
    l->trips = (uint64_t)rank;
    return 1;
}

/* ---- vision: MaxUnpool ---- */

/* max_unpool.kl. Trips: RANK + NIN (every input index, for each output
 * element: the C kernel's writes in order, without a scatter's races). */
static int l_max_unpool(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank");
    int64_t e = PI("esize"), ud[RLX_MAX_RANK], od[RLX_MAX_RANK], nin = PI("in_numel");
    rlx_tk_get_a(t, "unpooled_dims", ud);
    rlx_tk_get_a(t, "out_dims", od);
    for (int a = 0; a < rank; a++)
        if (ud[a] > od[a]) return 0;
    l->tmpl = "max_unpool";
    named(l, "DAT", t->in[0], rlx_gtype_bytes(e), N_X);
    named(l, "IDX", t->in[1], G_X64, N_X);
    moved_out(l, "OUT", t->out[0], e);
    status_op(l);
    rlx_gpu_define(l, "ZERO", elem_value(0, e));
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "NIN", nin);
    rlx_gpu_const(l, "UNPOOLED", numel_of(ud, rank));
    rlx_gpu_array(l, "UDIMS", ud, rank);
    rlx_gpu_array(l, "ODIMS", od, rank);
    rlx_gpu_grid_1d(l, numel_of(od, rank), 128, lim);
    l->trips = (uint64_t)rank + (uint64_t)nin;
    return 1;
}

/* ---- normalizations (f32) ---- */

/* lpnorm.kl. Trips: 2 LEN. */
static int l_lpnorm(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t len = PI("axis_len"), p = PI("p");
    if (p != 1 && p != 2) return 0;
    l->tmpl = "lpnorm";
    named(l, "DAT", t->in[0], G_F32, N_L);
    named(l, "OUT", t->out[0], G_F32, N_S);
    rlx_gpu_const(l, "LEN", len);
    rlx_gpu_const(l, "INNER", PI("inner"));
    rlx_gpu_const(l, "P", p);
    rlx_gpu_grid_1d(l, PI("outer") * PI("inner"), 128, lim);
    l->trips = 2 * (uint64_t)len;
    return 1;
}

/* mvn.kl. Trips: 3 passes of ceil(NRED / 128) elements, each RANK
 * coordinates and itself, + 14 (two trees). */
static int l_mvn(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank");
    int64_t dims[RLX_MAX_RANK], mask[RLX_MAX_RANK], st[RLX_MAX_RANK], rows = 1, nred = 1;
    rlx_tk_get_a(t, "dims", dims);
    rlx_tk_get_a(t, "mask", mask);
    strides_of(dims, rank, st);
    for (int a = 0; a < rank; a++) {
        if (mask[a]) nred *= dims[a];
        else rows *= dims[a];
    }
    l->tmpl = "mvn";
    named(l, "DAT", t->in[0], G_F32, N_L);
    named(l, "OUT", t->out[0], G_F32, N_S);
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "ROWS", rows);
    rlx_gpu_const(l, "NRED", nred);
    rlx_gpu_array(l, "DIMS", dims, rank);
    rlx_gpu_array(l, "MASK", mask, rank);
    rlx_gpu_array(l, "STR", st, rank);
    rlx_gpu_grid_1d(l, rows * 128, 128, lim);   /* a workgroup per kept coordinate */
    l->shared_bytes = 128 * 4;
    l->trips = 3 * cdiv((uint64_t)nred, 128) * (1 + (uint64_t)rank) + 14;
    return 1;
}

/* lrn.kl. Trips: size (the channels summed). */
static int l_lrn(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t size = PI("size"), c = PI("c"), hw = PI("hw");
    if (size < 1) return 0;
    l->tmpl = "lrn";
    named(l, "DAT", t->in[0], G_F32, N_L);
    named(l, "OUT", t->out[0], G_F32, N_S);
    rlx_gpu_const(l, "C", c);
    rlx_gpu_const(l, "HW", hw ? hw : 1);
    rlx_gpu_const(l, "BEFORE", (size - 1) / 2);
    rlx_gpu_const(l, "AFTER", size / 2);
    rlx_gpu_define(l, "ALPHA_N", float_lit(PF("alpha") / (double)size));
    rlx_gpu_define(l, "BETA", float_lit(PF("beta")));
    rlx_gpu_define(l, "BIAS", float_lit(PF("bias")));
    rlx_gpu_grid_1d(l, PI("n") * c * hw, 128, lim);
    l->trips = (uint64_t)size;
    return 1;
}

/* ---- TfIdfVectorizer ---- */

/* tfidf.kl, its table read here too (a weight the compiler made, rk_ctrl.c):
 * the kernel walks it at run time, the builder checks it and counts the
 * trips. Trips: NGRAMS (the walk) + the most any column's grams run: per
 * gram of n in [MIN_N, MAX_N], per distance d, P(d) = ROW_LEN - (n - 1) d
 * starts (if positive), each comparing up to n tokens. */
static int l_tfidf(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    const RlxValue *tv = &g->v[t->in[1].value];
    int64_t len = PI("table_len"), row_len = PI("row_len"), min_n = PI("min_n"), max_n = PI("max_n");
    int64_t skip = PI("max_skip");
    if (!tv->data || len < 3) return 0;
    int64_t ngrams = rlx_weight_i64(tv, 0), has_w = rlx_weight_i64(tv, 1), ncols = rlx_weight_i64(tv, 2);
    if (ngrams < 0 || ncols < 1) return 0;
    uint64_t *per_col = rlx_alloc(sizeof(uint64_t) * (size_t)ncols), most = 0;
    int64_t at = 3;
    for (int64_t gi = 0; gi < ngrams; gi++) {
        if (at + 2 > len) return 0;
        int64_t n = rlx_weight_i64(tv, at), col = rlx_weight_i64(tv, at + 1);
        if (n < 1 || n > len || col < 0 || col >= ncols || at + 2 + n > len) return 0;
        at += 2 + n;
        if (n < min_n || n > max_n) continue;
        int64_t maxd = n == 1 ? 1 : skip + 1;
        for (int64_t d = 1; d <= maxd; d++) {
            int64_t starts = row_len - (n - 1) * d;
            per_col[col] += 1 + (starts > 0 ? (uint64_t)starts * (uint64_t)(1 + n) : 0);
        }
        most = per_col[col] > most ? per_col[col] : most;
    }
    if (at + (has_w ? ncols : 0) != len) return 0;
    l->tmpl = "tfidf";
    int x = l->nops;
    rlx_gpu_define(l, "TOK(k)", PI("idx_dtype") == RLX_I64 ? rlx_fmt("X%d(k)", x)
                                : rlx_fmt("RLX_X64(uint(L%d(k)), L%d(k) < 0 ? 0xffffffffu : 0u)", x, x));
    rlx_gpu_op(l, t->in[0], PI("idx_dtype") == RLX_I64 ? G_X64 : G_I32, 0);
    named(l, "TBL", t->in[1], G_X64, N_X);
    named(l, "OUT", t->out[0], G_F32, N_S);
    rlx_gpu_define(l, "SAMEP(a, b)", "((a).x == (b).x && (a).y == (b).y)");
    rlx_gpu_const(l, "NGRAMS", ngrams);
    rlx_gpu_const(l, "NCOLS", ncols);
    rlx_gpu_const(l, "HAS_WEIGHTS", has_w != 0);
    rlx_gpu_const(l, "WOFF", at);
    rlx_gpu_const(l, "ROW_LEN", row_len);
    rlx_gpu_const(l, "MIN_N", min_n);
    rlx_gpu_const(l, "MAX_N", max_n);
    rlx_gpu_const(l, "MAX_SKIP", skip);
    rlx_gpu_const(l, "MODE", PI("mode"));
    rlx_gpu_grid_1d(l, PI("rows") * ncols, 128, lim);
    l->trips = (uint64_t)ngrams + most;
    return 1;
}

RlxGpuBuilder rlx_gpu_builder_index(RlxKernelKind kind) {
    switch ((int)kind) {
    case RLX_K_nll_loss: case RLX_K_softmax_ce_loss: return l_loss;
    case RLX_K_gather_elements: return l_gather_elements;
    case RLX_K_scatter_elements: return l_scatter_elements;
    case RLX_K_gather_nd: return l_gather_nd;
    case RLX_K_scatter_nd: return l_scatter_nd;
    case RLX_K_trilu: return l_trilu;
    case RLX_K_cumsum: return l_cumsum;
    case RLX_K_hardmax: return l_hardmax;
    case RLX_K_topk: return l_topk;
    case RLX_K_onehot: return l_onehot;
    case RLX_K_tfidf: return l_tfidf;
    case RLX_K_eye: return l_eye;
    case RLX_K_range: return l_range;
    case RLX_K_reverse_sequence: return l_reverse_sequence;
    case RLX_K_max_unpool: return l_max_unpool;
    case RLX_K_lpnorm_f32: return l_lpnorm;
    case RLX_K_mvn_f32: return l_mvn;
    case RLX_K_lrn_f32: return l_lrn;
    default: return NULL;
    }
}
