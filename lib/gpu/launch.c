/* launch.c - the launches of each neutral thunk kind on a GPU.
 *
 * One builder per kind reads the thunk's params (rk_kernels.def), picks the
 * template (lib/gpu/kernels/), the storage type each operand is seen as,
 * the constants that specialize the template, the workgroup and the grid,
 * and counts the loop iterations one invocation runs (GPU.md: lavapipe
 * stops loops after 65535, silently; the host refuses such a kernel
 * there). Data movement sees elements by their size only (gpu.h:
 * rlx_gtype_bytes); arithmetic sees the operand's dtype.
 */
#include <string.h>

#include "gpu.h"
#include "../passes/passes.h"

#define PI(name) rlx_tk_get_i(t, name)
#define PF(name) rlx_tk_get_f(t, name)

/* ---- launch helpers ---- */

void rlx_gpu_op(RlxGpuLaunch *l, RlxSlot s, RlxGType type, int write) {
    RLX_ASSERT(l->nops < RLX_GPU_MAX_OPS);
    RlxGpuOperand *o = &l->ops[l->nops++];
    o->slot = s;
    o->type = type;
    o->write = write;
}

void rlx_gpu_const(RlxGpuLaunch *l, const char *name, int64_t v) {
    RLX_ASSERT(l->nconst < RLX_GPU_MAX_CONSTS);
    l->consts[l->nconst].name = name;
    l->consts[l->nconst++].v = v;
}

void rlx_gpu_array(RlxGpuLaunch *l, const char *name, const int64_t *v, int n) {
    RLX_ASSERT(l->narr < RLX_GPU_MAX_ARRAYS && n <= RLX_MAX_RANK * 2);
    RlxGpuArray *a = &l->arrays[l->narr++];
    a->name = name;
    a->n = n;
    for (int i = 0; i < n; i++) a->v[i] = v[i];
}

void rlx_gpu_define(RlxGpuLaunch *l, const char *name, const char *text) {
    RLX_ASSERT(l->ndefs < (int)(sizeof l->defs / sizeof l->defs[0]));
    l->defs[l->ndefs].name = name;
    l->defs[l->ndefs++].text = text;
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* groups over x (at most the limit) and y */
static void grid_of(RlxGpuLaunch *l, uint64_t groups, const RlxTargetLimits *lim) {
    uint64_t most = (uint64_t)(lim->groups_per_dim > 0 ? lim->groups_per_dim : 65535);
    uint64_t gx = groups < most ? groups : most, gy = gx ? ceil_div(groups, gx) : 0;
    if (!gx) gx = gy = 1;
    RLX_ASSERT(gy <= most);
    l->groups[0] = (uint32_t)gx;
    l->groups[1] = (uint32_t)gy;
    l->groups[2] = 1;
    rlx_gpu_const(l, "GX", (int64_t)gx);
}

void rlx_gpu_grid_1d(RlxGpuLaunch *l, int64_t n, uint32_t local, const RlxTargetLimits *lim) {
    l->local[0] = local;
    l->local[1] = l->local[2] = 1;
    rlx_gpu_const(l, "N", n);
    grid_of(l, ceil_div((uint64_t)n, local), lim);
}

/* one workgroup (of 128) per row */
static void grid_rows(RlxGpuLaunch *l, int64_t rows, const RlxTargetLimits *lim) {
    l->local[0] = 128;
    l->local[1] = l->local[2] = 1;
    grid_of(l, (uint64_t)rows, lim);
}

static RlxGType dtype_gt(const RlxGraph *g, RlxSlot s) { return rlx_gtype_of(g->v[s.value].dtype); }

/* The largest element size (8, 4, 2, 1) that divides every one of vals. */
static int64_t common_esize(const int64_t *vals, int n) {
    for (int64_t e = 8; e > 1; e /= 2) {
        int ok = 1;
        for (int i = 0; i < n && ok; i++) ok = vals[i] % e == 0;
        if (ok) return e;
    }
    return 1;
}

static int64_t elems(const RlxGraph *g, RlxSlot s) { return rlx_value_numel(&g->v[s.value]); }

/* an element's bytes as a value of the plain type of its size */
static const char *bits_value(int64_t bits, int64_t esize) {
    uint64_t u = (uint64_t)bits;
    switch (esize) {
    case 1: return rlx_fmt("rlx_u8(%lluu)", (unsigned long long)(u & 0xff));
    case 2: return rlx_fmt("rlx_u16(%lluu)", (unsigned long long)(u & 0xffff));
    case 4: return rlx_fmt("%lluu", (unsigned long long)(u & 0xffffffffu));
    default: return rlx_fmt("RLX_X64(%lluu, %lluu)", (unsigned long long)(u & 0xffffffffu), (unsigned long long)(u >> 32));
    }
}

/* ---- data movement ---- */

static int l_copy(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t nbytes = PI("nbytes");
    int64_t e = common_esize((int64_t[]){nbytes, t->in[0].off, t->out[0].off}, 3);
    l->tmpl = "copy";
    rlx_gpu_op(l, t->in[0], rlx_gtype_bytes(e), 0);
    rlx_gpu_op(l, t->out[0], rlx_gtype_bytes(e), 1);
    rlx_gpu_grid_1d(l, nbytes / e, 128, lim);
    return 1;
}

static int l_strided_copy(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t v[] = {PI("row_bytes"), PI("src_stride"), PI("dst_stride"), PI("src_off"), PI("dst_off"),
                   t->in[0].off, t->out[0].off};
    int64_t e = common_esize(v, 7);
    l->tmpl = "strided_copy";
    rlx_gpu_op(l, t->in[0], rlx_gtype_bytes(e), 0);
    rlx_gpu_op(l, t->out[0], rlx_gtype_bytes(e), 1);
    rlx_gpu_const(l, "RB", v[0] / e);
    rlx_gpu_const(l, "SS", v[1] / e);
    rlx_gpu_const(l, "DS", v[2] / e);
    rlx_gpu_const(l, "SOFF", v[3] / e);
    rlx_gpu_const(l, "DOFF", v[4] / e);
    rlx_gpu_grid_1d(l, PI("rows") * (v[0] / e), 128, lim);
    return 1;
}

/* gather_axes.kl: out[o] = in[BASE + sum(c_a mod IMOD_a) * ISTR_a] */
static void axes_launch(RlxGpuLaunch *l, const RlxThunk *t, int64_t esize, int rank, const int64_t *odims,
                        const int64_t *istr, const int64_t *imod, int64_t base, const RlxTargetLimits *lim) {
    l->tmpl = "gather_axes";
    rlx_gpu_op(l, t->in[0], rlx_gtype_bytes(esize), 0);
    rlx_gpu_op(l, t->out[0], rlx_gtype_bytes(esize), 1);
    int64_t n = 1;
    for (int a = 0; a < rank; a++) n *= odims[a];
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "BASE", base);
    rlx_gpu_array(l, "ODIMS", odims, rank);
    rlx_gpu_array(l, "ISTR", istr, rank);
    rlx_gpu_array(l, "IMOD", imod, rank);
    rlx_gpu_grid_1d(l, n, 128, lim);
    l->trips = (uint64_t)rank;
}

static void strides_of(const int64_t *dims, int rank, int64_t *st) {
    int64_t s = 1;
    for (int a = rank - 1; a >= 0; a--) {
        st[a] = s;
        s *= dims[a];
    }
}

static int l_transpose(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank");
    int64_t dims[RLX_MAX_RANK], perm[RLX_MAX_RANK], st[RLX_MAX_RANK], od[RLX_MAX_RANK], is[RLX_MAX_RANK];
    int64_t mod[RLX_MAX_RANK] = {0};
    rlx_tk_get_a(t, "dims", dims);
    rlx_tk_get_a(t, "perm", perm);
    strides_of(dims, rank, st);
    for (int a = 0; a < rank; a++) {
        od[a] = dims[perm[a]];
        is[a] = st[perm[a]];
    }
    axes_launch(l, t, PI("esize"), rank, od, is, mod, 0, lim);
    return 1;
}

static int l_slice(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank");
    int64_t in[RLX_MAX_RANK], out[RLX_MAX_RANK], starts[RLX_MAX_RANK], steps[RLX_MAX_RANK], st[RLX_MAX_RANK];
    int64_t is[RLX_MAX_RANK], mod[RLX_MAX_RANK] = {0}, base = 0;
    rlx_tk_get_a(t, "in_dims", in);
    rlx_tk_get_a(t, "out_dims", out);
    rlx_tk_get_a(t, "starts", starts);
    rlx_tk_get_a(t, "steps", steps);
    strides_of(in, rank, st);
    for (int a = 0; a < rank; a++) {
        /* an axis that takes one element never applies its step, which
         * ONNX lets be anything (2^62: the product would overflow); as in
         * rk_slice it counts as 1 */
        is[a] = st[a] * (out[a] > 1 ? steps[a] : 1);
        base += starts[a] * st[a];
    }
    axes_launch(l, t, PI("esize"), rank, out, is, mod, base, lim);
    return 1;
}

static int l_tile(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank");
    int64_t in[RLX_MAX_RANK], out[RLX_MAX_RANK], st[RLX_MAX_RANK];
    rlx_tk_get_a(t, "in_dims", in);
    rlx_tk_get_a(t, "out_dims", out);
    strides_of(in, rank, st);
    axes_launch(l, t, PI("esize"), rank, out, st, in, 0, lim);
    return 1;
}

static int l_gather(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t e = PI("esize");
    l->tmpl = "gather";
    rlx_gpu_op(l, t->in[0], rlx_gtype_bytes(e), 0);
    int i64 = PI("idx_dtype") == RLX_I64;
    rlx_gpu_op(l, t->in[1], i64 ? G_X64 : G_I32, 0);
    rlx_gpu_op(l, t->out[0], rlx_gtype_bytes(e), 1);
    rlx_gpu_op(l, (RlxSlot){-2, RLX_SPACE_ARENA, -1}, G_U32, 1);   /* the status word (select.c) */
    rlx_gpu_define(l, "IDX(j)", i64 ? "rs_idx64(X1(j))" : "L1(j)");
    rlx_gpu_const(l, "INNER", PI("inner"));
    rlx_gpu_const(l, "NIDX", PI("nidx"));
    rlx_gpu_const(l, "AXIS", PI("axis_len"));
    rlx_gpu_grid_1d(l, PI("outer") * PI("nidx") * PI("inner"), 128, lim);
    return 1;
}

static int l_pad(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int rank = (int)PI("rank");
    int64_t e = PI("esize"), in[RLX_MAX_RANK], out[RLX_MAX_RANK], pb[RLX_MAX_RANK], n = 1;
    rlx_tk_get_a(t, "in_dims", in);
    rlx_tk_get_a(t, "out_dims", out);
    rlx_tk_get_a(t, "pads_begin", pb);
    for (int a = 0; a < rank; a++) n *= out[a];
    l->tmpl = "pad";
    rlx_gpu_op(l, t->in[0], rlx_gtype_bytes(e), 0);
    rlx_gpu_op(l, t->out[0], rlx_gtype_bytes(e), 1);
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "MODE", PI("mode"));
    rlx_gpu_define(l, "VALUE", bits_value(PI("value_bits"), e));
    rlx_gpu_array(l, "ODIMS", out, rank);
    rlx_gpu_array(l, "IDIMS", in, rank);
    rlx_gpu_array(l, "PB", pb, rank);
    rlx_gpu_grid_1d(l, n, 128, lim);
    l->trips = (uint64_t)rank;
    return 1;
}

static int l_fill(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t e = PI("esize");
    l->tmpl = "fill";
    rlx_gpu_op(l, t->out[0], rlx_gtype_bytes(e), 1);
    rlx_gpu_define(l, "VALUE", bits_value(PI("value_bits"), e));
    rlx_gpu_grid_1d(l, PI("count"), 128, lim);
    return 1;
}

/* ---- products ---- */

static const char *float_lit(double v) {
    const char *s = rlx_fmt("%.9g", (double)(float)v);
    if (!strpbrk(s, ".eEn")) s = rlx_fmt("%s.0", s);
    return rlx_fmt("%sf", s);
}

/* the epilogue's operands and macros (matmul.kl) */
/* The residual and the output in their storage types (--precision: f16 or
 * bf16 converted in the loads and stores), the bias f32. */
static void epilogue(const RlxGraph *g, RlxGpuLaunch *l, const RlxThunk *t, int bias_in, int res_in, RlxSlot y) {
    int epi = 0;
    if (bias_in >= 0) {
        rlx_gpu_define(l, "LBIAS(k)", rlx_fmt("L%d(k)", l->nops));
        rlx_gpu_op(l, t->in[bias_in], G_F32, 0);
        epi |= 1;
    }
    if (res_in >= 0) {
        rlx_gpu_define(l, "LRES(k)", rlx_fmt("L%d(k)", l->nops));
        rlx_gpu_op(l, t->in[res_in], dtype_gt(g, t->in[res_in]), 0);
        epi |= 2;
    }
    rlx_gpu_define(l, "SY(k, v)", rlx_fmt("S%d(k, v)", l->nops));
    rlx_gpu_op(l, y, dtype_gt(g, y), 1);
    rlx_gpu_const(l, "EPI", epi);
    rlx_gpu_const(l, "ACT", PI("act"));
    rlx_gpu_define(l, "ACT_A", float_lit(PF("act_a")));
    rlx_gpu_define(l, "ACT_B", float_lit(PF("act_b")));
}

/* gemm_tiled.kl for an rows x cols product over kdim in z batches, where
 * the target asks for register tiles and both sides fill a good part of a
 * 64 x 64 tile (smaller products keep the 16 x 16 kernels: a tile of
 * mostly idle invocations costs more than it saves); 0 if not. */
static int reg_tiled(RlxGpuLaunch *l, int64_t rows, int64_t cols, int64_t kdim, int64_t z) {
    if (!l->opt.reg_tiles || rows < 32 || cols < 32) return 0;
    l->tmpl = "gemm_tiled";
    l->local[0] = l->local[1] = 16;
    l->local[2] = 1;
    l->groups[0] = (uint32_t)ceil_div((uint64_t)cols, 64);
    l->groups[1] = (uint32_t)ceil_div((uint64_t)rows, 64);
    l->groups[2] = (uint32_t)z;
    rlx_gpu_const(l, "GX", l->groups[0]);
    rlx_gpu_const(l, "RM", rows);
    rlx_gpu_const(l, "RN", cols);
    rlx_gpu_const(l, "RK", kdim);
    l->shared_bytes = 2 * 1088 * 4;
    /* per step of 16: 4 loads, then 16 x (4 + 4 + 4 + 16); the 16 zeroed
     * accumulators; the epilogue's 4 + 16 */
    l->trips = ceil_div((uint64_t)kdim, 16) * (4 + 16 * 28) + 16 + 20;
    return 1;
}

/* matmul.kl, gemm_tiled.kl or gemv.kl over one product (plus batch dims) */
static void product(RlxGpuLaunch *l, int64_t m, int64_t n, int64_t k, int ta, int tb, int brank, const int64_t *bdims,
                    const int64_t *as, const int64_t *bs, const RlxTargetLimits *lim) {
    int64_t nb = 1;
    for (int d = 0; d < brank; d++) nb *= bdims[d];
    rlx_gpu_const(l, "M", m);
    rlx_gpu_const(l, "N", n);
    rlx_gpu_const(l, "K", k);
    rlx_gpu_const(l, "BRANK", brank);
    rlx_gpu_const(l, "NB", nb);
    rlx_gpu_array(l, "BDIMS", bdims, brank);
    rlx_gpu_array(l, "ASTR", as, brank);
    rlx_gpu_array(l, "BSTR", bs, brank);
    rlx_gpu_define(l, "AIDX(i, p)", ta ? "((p) * uint(M) + (i))" : "((i) * uint(K) + (p))");
    rlx_gpu_define(l, "BIDX(p, j)", tb ? "((j) * uint(K) + (p))" : "((p) * uint(N) + (j))");
    if (m == 1) {
        l->tmpl = "gemv";
        l->local[0] = 128;
        l->local[1] = l->local[2] = 1;
        grid_of(l, ceil_div((uint64_t)(n * nb), 128), lim);
        l->trips = (uint64_t)k + (uint64_t)brank;
        return;
    }
    if (reg_tiled(l, m, n, k, nb)) {
        l->trips += (uint64_t)brank;
        return;
    }
    l->tmpl = "matmul";
    l->local[0] = l->local[1] = 16;
    l->local[2] = 1;
    l->groups[0] = (uint32_t)ceil_div((uint64_t)n, 16);
    l->groups[1] = (uint32_t)ceil_div((uint64_t)m, 16);
    l->groups[2] = (uint32_t)nb;
    rlx_gpu_const(l, "GX", l->groups[0]);
    l->shared_bytes = (256 + 272) * 4;
    l->trips = ceil_div((uint64_t)k, 16) * 17 + (uint64_t)brank;
}

static int l_matmul(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    int brank = (int)PI("brank");
    int64_t bd[RLX_MAX_RANK], as[RLX_MAX_RANK], bs[RLX_MAX_RANK];
    rlx_tk_get_a(t, "bdims", bd);
    rlx_tk_get_a(t, "astride", as);
    rlx_tk_get_a(t, "bstride", bs);
    rlx_gpu_op(l, t->in[0], dtype_gt(g, t->in[0]), 0);
    rlx_gpu_op(l, t->in[1], dtype_gt(g, t->in[1]), 0);
    int next = 2, bias = PI("has_bias") ? next++ : -1, res = PI("has_res") ? next++ : -1;
    epilogue(g, l, t, bias, res, t->out[0]);
    product(l, PI("m"), PI("n"), PI("k"), (int)PI("trans_a"), (int)PI("trans_b"), brank, bd, as, bs, lim);
    return 1;
}

static int l_gemm(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    rlx_gpu_op(l, t->in[0], dtype_gt(g, t->in[0]), 0);
    rlx_gpu_op(l, t->in[1], dtype_gt(g, t->in[1]), 0);
    int next = 2, has_c = PI("has_c") && PF("beta") != 0.0, res = -1;
    if (PI("has_c")) {
        if (has_c) {
            rlx_gpu_define(l, "LC(k)", rlx_fmt("L%d(k)", l->nops));
            rlx_gpu_op(l, t->in[next], G_F32, 0);
        }
        next++;
    }
    if (PI("has_res")) res = next++;
    epilogue(g, l, t, -1, res, t->out[0]);
    rlx_gpu_const(l, "GEMM", 1);
    rlx_gpu_const(l, "HAS_C", has_c);
    rlx_gpu_const(l, "CRS", has_c ? PI("c_rs") : 0);
    rlx_gpu_const(l, "CCS", has_c ? PI("c_cs") : 0);
    rlx_gpu_define(l, "ALPHA", float_lit(PF("alpha")));
    rlx_gpu_define(l, "BETA", float_lit(PF("beta")));
    product(l, PI("m"), PI("n"), PI("k"), (int)PI("trans_a"), (int)PI("trans_b"), 0, NULL, NULL, NULL, lim);
    return 1;
}

static int l_conv2d(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    int64_t n = PI("n"), c = PI("c"), oc = PI("oc"), group = PI("group"), kh = PI("kh"), kw = PI("kw");
    int64_t oh = PI("oh"), ow = PI("ow"), cg = c / group, ocg = oc / group, kdim = cg * kh * kw;
    rlx_gpu_op(l, t->in[0], dtype_gt(g, t->in[0]), 0);
    rlx_gpu_op(l, t->in[1], dtype_gt(g, t->in[1]), 0);
    int next = 2, bias = PI("has_bias") ? next++ : -1, res = PI("has_res") ? next++ : -1;
    epilogue(g, l, t, bias, res, t->out[0]);
    static const char *const names[] = {"C", "H", "W", "OC", "OH", "OW", "KH", "KW", "SH", "SW", "PT", "PL", "DH",
                                        "DW"};
    static const char *const fields[] = {"c", "h", "w", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "pt", "pl", "dh",
                                         "dw"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) rlx_gpu_const(l, names[i], PI(fields[i]));
    rlx_gpu_const(l, "GROUPS", group);
    rlx_gpu_const(l, "CG", cg);
    rlx_gpu_const(l, "OCG", ocg);
    if (ocg >= 4 && kdim >= 8 && reg_tiled(l, ocg, oh * ow, kdim, n * group)) {
        rlx_gpu_const(l, "CONV", 1);
    } else if (ocg >= 4 && kdim >= 8) {   /* the C target's own test for when a GEMM pays (select_c.c) */
        l->tmpl = "conv2d";
        l->local[0] = l->local[1] = 16;
        l->local[2] = 1;
        l->groups[0] = (uint32_t)ceil_div((uint64_t)(oh * ow), 16);
        l->groups[1] = (uint32_t)ceil_div((uint64_t)ocg, 16);
        l->groups[2] = (uint32_t)(n * group);
        rlx_gpu_const(l, "GX", l->groups[0]);
        l->shared_bytes = (256 + 272) * 4;
        l->trips = ceil_div((uint64_t)kdim, 16) * 17;
    } else {
        l->tmpl = "conv_direct";
        rlx_gpu_grid_1d(l, n * oc * oh * ow, 128, lim);
        l->trips = (uint64_t)(cg * kh * kw + cg * kh + cg);
    }
    return 1;
}

/* ---- normalizations and reductions ---- */

/* A row reduction by a workgroup of 128 reduces within subgroups of 32
 * by shuffles where the target has them (softmax_rows.kl, layernorm.kl). */
static void subgroup_reduce(RlxGpuLaunch *l) {
    if (l->opt.features & RLX_TF_SUBGROUPS) rlx_gpu_const(l, "SG_REDUCE", 1);   /* render.c: NEED_SUBGROUP */
}

static int l_softmax(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    int64_t outer = PI("outer"), len = PI("axis_len"), inner = PI("inner");
    rlx_gpu_op(l, t->in[0], dtype_gt(g, t->in[0]), 0);
    rlx_gpu_op(l, t->out[0], dtype_gt(g, t->out[0]), 1);
    rlx_gpu_const(l, "LOG", PI("log"));
    rlx_gpu_const(l, "LEN", len);
    if (inner == 1) {
        l->tmpl = "softmax_rows";
        rlx_gpu_const(l, "ROWS", outer);
        grid_rows(l, outer, lim);
        l->shared_bytes = 128 * 4;
        l->trips = 3 * ceil_div((uint64_t)len, 128) + 14;
        subgroup_reduce(l);
    } else {
        l->tmpl = "softmax_cols";
        rlx_gpu_const(l, "INNER", inner);
        rlx_gpu_grid_1d(l, outer * inner, 128, lim);
        l->trips = 3 * (uint64_t)len;
    }
    return 1;
}

static int l_layernorm(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    int64_t outer = PI("outer"), inner = PI("inner");
    int nrank = (int)PI("nrank");
    int64_t nd[RLX_MAX_RANK], ss[RLX_MAX_RANK], bs[RLX_MAX_RANK];
    rlx_tk_get_a(t, "ndims", nd);
    rlx_tk_get_a(t, "scale_strides", ss);
    rlx_tk_get_a(t, "bias_strides", bs);
    l->tmpl = "layernorm";
    subgroup_reduce(l);
    rlx_gpu_op(l, t->in[0], dtype_gt(g, t->in[0]), 0);
    rlx_gpu_op(l, t->in[1], dtype_gt(g, t->in[1]), 0);
    int has_bias = PI("has_bias") != 0;
    if (has_bias) {
        rlx_gpu_define(l, "LB(k)", rlx_fmt("L%d(k)", l->nops));
        rlx_gpu_op(l, t->in[2], dtype_gt(g, t->in[2]), 0);
    }
    rlx_gpu_define(l, "SY(k, v)", rlx_fmt("S%d(k, v)", l->nops));
    rlx_gpu_op(l, t->out[0], dtype_gt(g, t->out[0]), 1);
    int k = 1;
    if (PI("has_mean")) {
        rlx_gpu_define(l, "SMEAN(k, v)", rlx_fmt("S%d(k, v)", l->nops));
        rlx_gpu_op(l, t->out[k++], G_F32, 1);
    }
    if (PI("has_inv_std")) {
        rlx_gpu_define(l, "SINV(k, v)", rlx_fmt("S%d(k, v)", l->nops));
        rlx_gpu_op(l, t->out[k++], G_F32, 1);
    }
    rlx_gpu_const(l, "HAS_BIAS", has_bias);
    rlx_gpu_const(l, "HAS_MEAN", PI("has_mean") != 0);
    rlx_gpu_const(l, "HAS_INV", PI("has_inv_std") != 0);
    rlx_gpu_const(l, "ROWS", outer);
    rlx_gpu_const(l, "INNER", inner);
    rlx_gpu_const(l, "NRANK", nrank);
    rlx_gpu_define(l, "EPS", float_lit(PF("eps")));
    rlx_gpu_array(l, "NDIMS", nd, nrank);
    rlx_gpu_array(l, "SSTR", ss, nrank);
    rlx_gpu_array(l, "BSTR", bs, nrank);
    grid_rows(l, outer, lim);
    l->shared_bytes = 128 * 4;
    l->trips = ceil_div((uint64_t)inner, 128) * (3 + (uint64_t)nrank) + 14;
    return 1;
}

static int l_batchnorm(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    l->tmpl = "batchnorm";
    for (int i = 0; i < 5; i++) rlx_gpu_op(l, t->in[i], G_F32, 0);
    rlx_gpu_op(l, t->out[0], G_F32, 1);
    rlx_gpu_const(l, "C", PI("c"));
    rlx_gpu_const(l, "HW", PI("hw"));
    rlx_gpu_define(l, "EPS", float_lit(PF("eps")));
    rlx_gpu_const(l, "ACT", PI("act"));
    rlx_gpu_define(l, "ACT_A", float_lit(PF("act_a")));
    rlx_gpu_define(l, "ACT_B", float_lit(PF("act_b")));
    rlx_gpu_grid_1d(l, PI("n") * PI("c") * PI("hw"), 128, lim);
    return 1;
}

static int l_instancenorm(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    l->tmpl = "instancenorm";
    for (int i = 0; i < 3; i++) rlx_gpu_op(l, t->in[i], G_F32, 0);
    rlx_gpu_op(l, t->out[0], G_F32, 1);
    int64_t planes = PI("n") * PI("c"), hw = PI("hw");
    rlx_gpu_const(l, "C", PI("c"));
    rlx_gpu_const(l, "HW", hw);
    rlx_gpu_const(l, "PLANES", planes);
    rlx_gpu_define(l, "EPS", float_lit(PF("eps")));
    grid_rows(l, planes, lim);
    l->shared_bytes = 128 * 4;
    l->trips = 3 * ceil_div((uint64_t)hw, 128) + 14;
    return 1;
}

static int is_float_gt(RlxGType t) { return t == G_F32 || t == G_F16 || t == G_BF16 || t == G_F64; }

/* the accumulator type and its operations (reduce.kl, argminmax.kl) */
static void acc_type(RlxGpuLaunch *l, RlxGType gt) {
    switch (gt) {
    case G_F64:
        rlx_gpu_define(l, "ACC", "rlx_f64");
        rlx_gpu_define(l, "MAXF(a, b)", "rs_max_d(a, b)");
        rlx_gpu_define(l, "MINF(a, b)", "rs_min_d(a, b)");
        rlx_gpu_define(l, "EXPF(x)", "rs_exp_d(x)");
        rlx_gpu_define(l, "LOGF(x)", "rs_log_d(x)");
        rlx_gpu_define(l, "SQRTF(x)", "rs_sqrt_d(x)");
        break;
    case G_F32: case G_F16: case G_BF16:
        rlx_gpu_define(l, "ACC", "float");
        rlx_gpu_define(l, "MAXF(a, b)", "rs_max(a, b)");
        rlx_gpu_define(l, "MINF(a, b)", "rs_min(a, b)");
        rlx_gpu_define(l, "EXPF(x)", "RLX_EXPF(x)");
        rlx_gpu_define(l, "LOGF(x)", "RLX_LOGF(x)");
        rlx_gpu_define(l, "SQRTF(x)", "RLX_SQRTF(x)");
        break;
    case G_I64:
        rlx_gpu_define(l, "ACC", "rlx_i64");
        rlx_gpu_define(l, "ADDI(a, b)", "rlx_i64(rlx_u64(a) + rlx_u64(b))");
        rlx_gpu_define(l, "MULI(a, b)", "rlx_i64(rlx_u64(a) * rlx_u64(b))");
        rlx_gpu_define(l, "NEGI(a)", "rlx_i64(rlx_u64(0) - rlx_u64(a))");
        rlx_gpu_define(l, "F2I(x)", "rs_f2i64(x)");
        break;
    case G_U64:
        rlx_gpu_define(l, "ACC", "rlx_u64");
        rlx_gpu_define(l, "ADDI(a, b)", "((a) + (b))");
        rlx_gpu_define(l, "MULI(a, b)", "((a) * (b))");
        rlx_gpu_define(l, "NEGI(a)", "(a)");
        rlx_gpu_define(l, "F2I(x)", "rs_f2u64(x)");
        break;
    case G_U8: case G_U16: case G_U32: case G_BOOL:
        rlx_gpu_define(l, "ACC", "uint");
        rlx_gpu_define(l, "ADDI(a, b)", "((a) + (b))");
        rlx_gpu_define(l, "MULI(a, b)", "((a) * (b))");
        rlx_gpu_define(l, "NEGI(a)", "(a)");
        rlx_gpu_define(l, "F2I(x)", "rs_f2u32(x, 4294967296.0f, 4294967295u)");
        break;
    default:
        rlx_gpu_define(l, "ACC", "int");
        rlx_gpu_define(l, "ADDI(a, b)", "int(uint(a) + uint(b))");
        rlx_gpu_define(l, "MULI(a, b)", "int(uint(a) * uint(b))");
        rlx_gpu_define(l, "NEGI(a)", "int(0u - uint(a))");
        rlx_gpu_define(l, "F2I(x)", "rs_f2i32(x, -2147483648.0f, 2147483648.0f, int(0x80000000u), 2147483647)");
        break;
    }
}

/* reduce.kl: the reduced length from which a workgroup takes each output
 * element (at least 8 elements per invocation) */
enum { RED_WG_MIN = 1024 };

static int l_reduce(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    int rank = (int)PI("rank");
    int64_t dims[RLX_MAX_RANK], mask[RLX_MAX_RANK], st[RLX_MAX_RANK];
    rlx_tk_get_a(t, "dims", dims);
    rlx_tk_get_a(t, "mask", mask);
    strides_of(dims, rank, st);
    int64_t kd[RLX_MAX_RANK], ks[RLX_MAX_RANK], rd[RLX_MAX_RANK], rs[RLX_MAX_RANK], nout = 1, nred = 1;
    int nk = 0, nr = 0;
    for (int a = 0; a < rank; a++) {
        if (mask[a]) {
            rd[nr] = dims[a];
            rs[nr++] = st[a];
            nred *= dims[a];
        } else {
            kd[nk] = dims[a];
            ks[nk++] = st[a];
            nout *= dims[a];
        }
    }
    RlxGType gt = dtype_gt(g, t->in[0]);
    l->tmpl = "reduce";
    rlx_gpu_op(l, t->in[0], gt, 0);
    rlx_gpu_op(l, t->out[0], gt, 1);
    acc_type(l, gt);
    rlx_gpu_const(l, "IS_FLOAT", is_float_gt(gt));
    rlx_gpu_const(l, "OP", PI("op"));
    rlx_gpu_const(l, "NK", nk);
    rlx_gpu_const(l, "NR", nr);
    rlx_gpu_const(l, "NRED", nred);
    rlx_gpu_array(l, "KDIMS", kd, nk);
    rlx_gpu_array(l, "KSTR", ks, nk);
    rlx_gpu_array(l, "RDIMS", rd, nr);
    rlx_gpu_array(l, "RSTR", rs, nr);
    /* long reductions: a workgroup per output element (reduce.kl's WG);
     * below RED_WG_MIN the serial loop stays under 2 * RED_WG_MIN * (1 +
     * RLX_MAX_RANK) trips, well inside lavapipe's 65535 */
    int wg = nred >= RED_WG_MIN;
    rlx_gpu_const(l, "WG", wg);
    if (wg) {
        grid_rows(l, nout, lim);
        rlx_gpu_const(l, "N", nout);
        /* red_base, then up to three strided passes (each element's red_off) and their trees */
        l->shared_bytes = 128 * (rlx_gtype_size(gt) > 4 ? 8 : 4) + 128 * 4;
        l->trips = (uint64_t)nk + 3 * (ceil_div((uint64_t)nred, 128) * (uint64_t)(nr + 1) + 7);
    } else {
        rlx_gpu_grid_1d(l, nout, 128, lim);
        l->trips = 2 * (uint64_t)nred * (uint64_t)(nr + 1) + (uint64_t)nk;
    }
    return 1;
}

static int l_argminmax(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    RlxGType gt = dtype_gt(g, t->in[0]);
    l->tmpl = "argminmax";
    rlx_gpu_op(l, t->in[0], gt, 0);
    rlx_gpu_op(l, t->out[0], G_X64, 1);
    acc_type(l, gt);
    rlx_gpu_define(l, "SIDX(k, i)", "X1(k) = RLX_X64(i, 0u)");
    rlx_gpu_const(l, "LEN", PI("axis_len"));
    rlx_gpu_const(l, "INNER", PI("inner"));
    rlx_gpu_const(l, "SELECT_LAST", PI("select_last") != 0);
    rlx_gpu_const(l, "IS_MIN", PI("is_min") != 0);
    rlx_gpu_grid_1d(l, PI("outer") * PI("inner"), 128, lim);
    l->trips = (uint64_t)PI("axis_len");
    return 1;
}

static int l_pool(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    RlxGType gt = dtype_gt(g, t->in[0]);
    /* i8 and u8 max pooling compares in float (exact for them); a window of
     * padding only gives the dtype's lowest value, as rk_conv's store_lowest */
    int small_int = (gt == G_I8 || gt == G_U8) && PI("op") == 0;
    if (!is_float_gt(gt) && !small_int) return 0;
    int64_t in[RLX_MAX_RANK], out[RLX_MAX_RANK], k[RLX_MAX_RANK], s[RLX_MAX_RANK], d[RLX_MAX_RANK], pb[RLX_MAX_RANK],
        pe[RLX_MAX_RANK];
    rlx_tk_get_a(t, "in_dims", in);
    rlx_tk_get_a(t, "out_dims", out);
    rlx_tk_get_a(t, "k", k);
    rlx_tk_get_a(t, "s", s);
    rlx_tk_get_a(t, "d", d);
    rlx_tk_get_a(t, "pb", pb);
    rlx_tk_get_a(t, "pe", pe);
    l->tmpl = "pool";
    rlx_gpu_op(l, t->in[0], gt, 0);
    rlx_gpu_op(l, t->out[0], gt, 1);
    int has_idx = PI("op") == 0 && PI("has_indices");
    if (has_idx) {
        rlx_gpu_op(l, t->out[1], G_X64, 1);
        rlx_gpu_define(l, "SIDX(k, lo, hi)", "X2(k) = RLX_X64(lo, hi)");
    }
    rlx_gpu_define(l, "VAL(k)", small_int ? "float(L0(k))" : "L0(k)");
    rlx_gpu_define(l, "OUTV(v)", gt == G_I8 ? "int(v)" : gt == G_U8 ? "uint(v)" : "(v)");
    rlx_gpu_define(l, "LOWEST", gt == G_I8 ? "(-128.0f)" : gt == G_U8 ? "0.0f" : "RLX_FBITS(0xff800000u)");
    rlx_gpu_const(l, "OP", PI("op"));
    rlx_gpu_const(l, "HAS_IDX", has_idx);
    rlx_gpu_const(l, "STORAGE_ORDER", PI("storage_order") != 0);
    rlx_gpu_const(l, "COUNT_PAD", PI("count_include_pad") != 0);
    rlx_gpu_define(l, "P", float_lit(PF("p")));
    static const char *const dn[3][7] = {{"IN0", "OUT0", "K0", "ST0", "D0", "PB0", "PE0"},
                                         {"IN1", "OUT1", "K1", "ST1", "D1", "PB1", "PE1"},
                                         {"IN2", "OUT2", "K2", "ST2", "D2", "PB2", "PE2"}};
    int64_t nout = PI("nc");
    for (int a = 0; a < 3; a++) {
        const int64_t v[7] = {in[a], out[a], k[a], s[a], d[a], pb[a], pe[a]};
        for (int j = 0; j < 7; j++) rlx_gpu_const(l, dn[a][j], v[j]);
        nout *= out[a];
    }
    rlx_gpu_grid_1d(l, nout, 128, lim);
    l->trips = (uint64_t)(k[0] * k[1] * k[2] + k[0] * k[1] + k[0]);
    return 1;
}

/* ---- elementwise regions ---- */

static int l_eltwise(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    l->tmpl = NULL;
    l->thunk = t;
    for (int i = 0; i < t->nin; i++) {
        if (rlx_region_operand(t, i) < 0) {
            /* an input no step reads: a placeholder of the output's type */
            rlx_gpu_op(l, t->out[0], dtype_gt(g, t->out[0]), 0);
            continue;
        }
        rlx_gpu_op(l, t->in[i], dtype_gt(g, t->in[i]), 0);
    }
    rlx_gpu_op(l, t->out[0], dtype_gt(g, t->out[0]), 1);
    rlx_gpu_grid_1d(l, elems(g, t->out[0]), 128, lim);
    return 1;
}

typedef RlxGpuBuilder Builder;

static Builder builder_of(RlxKernelKind k) {
    switch ((int)k) {
    case RLX_K_ELTWISE: return l_eltwise;
    case RLX_K_copy: return l_copy;
    case RLX_K_strided_copy: return l_strided_copy;
    case RLX_K_transpose: return l_transpose;
    case RLX_K_slice: return l_slice;
    case RLX_K_tile: return l_tile;
    case RLX_K_gather: return l_gather;
    case RLX_K_pad: return l_pad;
    case RLX_K_fill: return l_fill;
    case RLX_K_matmul_f32: return l_matmul;
    case RLX_K_gemm_f32: return l_gemm;
    case RLX_K_conv2d_f32: return l_conv2d;
    case RLX_K_softmax_f32: return l_softmax;
    case RLX_K_layernorm_f32: return l_layernorm;
    case RLX_K_batchnorm_f32: return l_batchnorm;
    case RLX_K_instancenorm_f32: return l_instancenorm;
    case RLX_K_reduce: return l_reduce;
    case RLX_K_argminmax: return l_argminmax;
    case RLX_K_pool_nd: return l_pool;
    default: break;
    }
    /* the families of their own files */
    RlxGpuBuilder b = rlx_gpu_builder_index(k);
    return b ? b : rlx_gpu_builder_vision(k);
}

int rlx_gpu_has_kind(RlxKernelKind kind) { return builder_of(kind) != NULL; }

int rlx_gpu_launches(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *out) {
    return rlx_gpu_launches_with(g, t, lim, NULL, out);
}

int rlx_gpu_launches_with(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, const RlxGpuOptions *opt,
                          RlxGpuLaunch *out) {
    Builder b = builder_of(t->kind);
    if (!b) return 0;
    memset(out, 0, sizeof *out * RLX_GPU_MAX_LAUNCHES);
    for (int k = 0; k < RLX_GPU_MAX_LAUNCHES; k++) {
        if (opt) out[k].opt = *opt;
        out[k].thunk = t;
        out[k].local[0] = out[k].local[1] = out[k].local[2] = 1;
    }
    int n = b(g, t, lim, out);
    RLX_ASSERT(n >= 0 && n <= RLX_GPU_MAX_LAUNCHES);
    return n;
}
