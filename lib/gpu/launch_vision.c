/* launch_vision.c - the GPU launches of Resize, ConvTranspose, 3-D
 * convolution, GridSample, RoiAlign, the recurrent cells (RNN, GRU, LSTM),
 * Einsum, the quantized kernels, DFT / STFT, the windows and Det (gpu.h:
 * RlxGpuBuilder).
 *
 * Each kind's builder reads the thunk's params (runtime_min/rk_kernels.def),
 * picks its template in lib/gpu/kernels/ and fills the launch as launch.c's
 * builders do (DynamicQuantizeLinear fills two); its ops go into
 * support.c's column for the GPU targets at the same time, and the
 * conditions a dtype can't say into rlx_gpu_node_check_vision at the end.
 * Every builder states the loop iterations one invocation runs (l->trips)
 * as a formula over the params, next to the loops of its template. A
 * kernel that meets a data error the C kernel reports (an index out of
 * range) stores the status in the run's status word, an operand of slot
 * value -2 (select.c).
 *
 * Semantics are the C kernels'; where those take a decision in double that
 * makes the result jump (Resize's and GridSample's nearest element,
 * quantization's rounding), the kernels take it exactly (docs/targets.md;
 * nearest tf_crop_and_resize takes rk_resize's own indices, run here).
 * MelWeightMatrix is not here: its band edges are floors of log10 and pow
 * in double, which Vulkan's float transcendentals can move by a bin, and
 * its inputs are constants (folded) in the models that use it.
 */
#include <math.h>
#include <string.h>

#include "gpu.h"
#include "../passes/passes.h"

#define PI(name) rlx_tk_get_i(t, name)
#define PF(name) rlx_tk_get_f(t, name)

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
static int is_f32_like(RlxGType t) { return t == G_F32 || t == G_F16 || t == G_BF16; }

/* a float constant as source text (NaN and infinities by their bits) */
static const char *flit(double v) {
    float f = (float)v;
    if (isnan(f)) return "RLX_FBITS(0x7fc00000u)";
    if (isinf(f)) return f > 0 ? "RLX_FBITS(0x7f800000u)" : "RLX_FBITS(0xff800000u)";
    const char *s = rlx_fmt("%.9g", (double)f);
    if (!strpbrk(s, ".eE")) s = rlx_fmt("%s.0", s);
    return rlx_fmt("(%sf)", s);
}

/* operand `in` as macro NAME(k) (its L accessor) */
static void op_load(RlxGpuLaunch *l, const char *name, RlxSlot s, RlxGType type) {
    rlx_gpu_define(l, rlx_fmt("%s(k)", name), rlx_fmt("L%d(k)", l->nops));
    rlx_gpu_op(l, s, type, 0);
}

/* operand `out` as macro NAME(k, v) (its S accessor) */
static void op_store(RlxGpuLaunch *l, const char *name, RlxSlot s, RlxGType type) {
    rlx_gpu_define(l, rlx_fmt("%s(k, v)", name), rlx_fmt("S%d(k, v)", l->nops));
    rlx_gpu_op(l, s, type, 1);
}

/* the run's status word as SSTATUS(k, v) */
static void op_status(RlxGpuLaunch *l) { op_store(l, "SSTATUS", (RlxSlot){-2, RLX_SPACE_ARENA, -1}, G_U32); }

/* a table of float constants as the macro NAME(s): s-th entry */
static void float_table(RlxGpuLaunch *l, const char *name, const double *v, int n) {
    RlxBuf b = {0};
    for (int i = 0; i < n - 1; i++) rlx_buf_printf(&b, "(s) == %d ? %s : ", i, flit(v[i]));
    rlx_buf_printf(&b, "%s", n > 0 ? flit(v[n - 1]) : "0.0f");
    rlx_gpu_define(l, rlx_fmt("%s(s)", name), rlx_fmt("(%s)", b.data));
}

/* ---- recurrent cells ---- */

/* rnn.kl: one workgroup per (direction, batch) pair, L invocations over the
 * GATES * HID rows of a step. Loop trips of one invocation, with
 * RA = ceil(GATES*HID / L) rows and RB = ceil(HID / L) units each:
 *   ceil(SEQ*HID / L)           the zero rows past a length
 * + RB                          the initial state
 * + SEQ * (1                    the step loop
 *          + RA * (1 + INPUT + HID)   the rows and their two dot products
 *          + RB * (2 + HID)     [GRU without linear_before_reset: r * h,
 *                                 then the candidate's R (r * h)]
 *          + RB)                the cells
 * + RB                          the final state. */
static int l_rnn(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    RlxGType xg = rlx_gtype_of((RlxDType)PI("x_dtype")), yg = rlx_gtype_of((RlxDType)PI("y_dtype"));
    if (PI("dtype") != RLX_F32 || !is_f32_like(xg) || !is_f32_like(yg)) return 0;
    int64_t cell = PI("cell"), seq = PI("seq"), batch = PI("batch"), input = PI("input"), hid = PI("hidden");
    int64_t dirs = PI("direction") == 2 ? 2 : 1, gates = cell == 0 ? 1 : cell == 1 ? 3 : 4;
    int lbr = cell == 1 && PI("linear_before_reset");
    int64_t most = lim->workgroup_size > 0 && lim->workgroup_size < 256 ? lim->workgroup_size : 256;
    int64_t L = (gates * hid + 31) / 32 * 32;
    if (L > most) L = most;
    if (L < 32) L = 32;
    l->tmpl = "rnn";
    op_load(l, "LXS", t->in[0], xg);
    op_load(l, "LW", t->in[1], G_F32);
    op_load(l, "LR", t->in[2], G_F32);
    if (PI("has_b")) op_load(l, "LB", t->in[3], G_F32);
    if (PI("has_seq_lens")) {
        int i64 = PI("seq_lens_dtype") == RLX_I64;
        rlx_gpu_define(l, "SEQ_LEN(k)", i64 ? rlx_fmt("rs_idx64(X%d(k))", l->nops) : rlx_fmt("L%d(k)", l->nops));
        rlx_gpu_op(l, t->in[4], i64 ? G_X64 : G_I32, 0);
    }
    if (PI("has_h0")) op_load(l, "LH0", t->in[5], G_F32);
    if (cell == 2 && PI("has_c0")) op_load(l, "LC0", t->in[6], G_F32);
    if (cell == 2 && PI("has_p")) op_load(l, "LP", t->in[7], G_F32);
    /* Y stored in half (--precision): the state is Y's stored value, read back (LYROW) */
    rlx_gpu_define(l, "LYROW(k)", rlx_fmt("L%d(k)", l->nops));
    rlx_gpu_const(l, "Y_HALF", yg != G_F32);
    op_store(l, "SY", t->out[0], yg);
    op_store(l, "SYH", t->out[1], G_F32);
    if (cell == 2) op_store(l, "SYC", t->out[2], G_F32);
    if (PI("has_seq_lens")) op_status(l);
    static const char *const flags[][2] = {{"HAS_B", "has_b"}, {"HAS_SEQ_LENS", "has_seq_lens"},
                                           {"HAS_H0", "has_h0"}, {"LAYOUT", "layout"}, {"HAS_CLIP", "has_clip"}};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) rlx_gpu_const(l, flags[i][0], PI(flags[i][1]) != 0);
    rlx_gpu_const(l, "DIRECTION", PI("direction"));
    rlx_gpu_const(l, "HAS_C0", cell == 2 && PI("has_c0"));
    rlx_gpu_const(l, "HAS_P", cell == 2 && PI("has_p"));
    rlx_gpu_const(l, "INPUT_FORGET", cell == 2 && PI("input_forget"));
    rlx_gpu_const(l, "LBR", lbr);
    rlx_gpu_const(l, "CELL", cell);
    rlx_gpu_const(l, "GATES", gates);
    rlx_gpu_const(l, "SEQ", seq);
    rlx_gpu_const(l, "BATCH", batch);
    rlx_gpu_const(l, "INPUT", input);
    rlx_gpu_const(l, "HID", hid);
    rlx_gpu_const(l, "DIRS", dirs);
    rlx_gpu_const(l, "NACTS", cell + 1);
    rlx_gpu_define(l, "CLIP", flit(PF("clip")));
    int nact = (int)((cell + 1) * dirs);
    int64_t acts[RLX_MAX_RANK];
    rlx_tk_get_a(t, "acts", acts);
    rlx_gpu_array(l, "ACTS", acts, nact);
    static const char *const an[6] = {"alpha0", "alpha1", "alpha2", "alpha3", "alpha4", "alpha5"};
    static const char *const bn[6] = {"beta0", "beta1", "beta2", "beta3", "beta4", "beta5"};
    double alpha[6], beta[6];
    for (int k = 0; k < nact; k++) {
        alpha[k] = PF(an[k]);
        beta[k] = PF(bn[k]);
    }
    float_table(l, "ALPHA", alpha, nact);
    float_table(l, "BETA", beta, nact);
    /* workgroup memory: both halves of the state, the cell state, the rows, GRU's aux */
    rlx_gpu_const(l, "HS_N", 2 * hid);
    rlx_gpu_const(l, "CS_N", cell == 2 ? hid : 1);
    rlx_gpu_const(l, "PRE_N", gates * hid);
    rlx_gpu_const(l, "AUX_N", cell == 1 ? hid : 1);
    l->shared_bytes = (uint32_t)(4 * (2 * hid + (cell == 2 ? hid : 1) + gates * hid + (cell == 1 ? hid : 1)));
    rlx_gpu_grid_1d(l, dirs * batch * L, (uint32_t)L, lim);
    uint64_t ra = cdiv((uint64_t)(gates * hid), (uint64_t)L), rb = cdiv((uint64_t)hid, (uint64_t)L);
    uint64_t step = 1 + ra * (uint64_t)(1 + input + hid) + rb + (cell == 1 && !lbr ? rb * (uint64_t)(2 + hid) : 0);
    l->trips = cdiv((uint64_t)(seq * hid), (uint64_t)L) + 2 * rb + (uint64_t)seq * step;
    return 1;
}

/* ---- Resize ---- */

/* A value of an element's bytes as the plain type of its size (gpu.h) */
static const char *bits_lit(uint64_t u, int64_t esize) {
    switch (esize) {
    case 1: return rlx_fmt("rlx_u8(%lluu)", (unsigned long long)(u & 0xff));
    case 2: return rlx_fmt("rlx_u16(%lluu)", (unsigned long long)(u & 0xffff));
    case 4: return rlx_fmt("%lluu", (unsigned long long)(u & 0xffffffffu));
    default: return rlx_fmt("RLX_X64(%lluu, %lluu)", (unsigned long long)(u & 0xffffffffu), (unsigned long long)(u >> 32));
    }
}

enum { RZ_MAX_TABLE = 64 };

/* Whether a Resize node's nearest indices come from a table made by rlxc
 * (resize.kl's TABLE): nearest tf_crop_and_resize, whose x_ori is a chain
 * of double operations on the roi, with the scales (or sizes) and roi
 * constant and at most RZ_MAX_TABLE output coordinates in all (lavapipe
 * compiles a constant table indexed at run time slowly: 64 entries cost a
 * second, 256 ten). */
static int rz_table(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    if (strcmp(rlx_attr_s(n, "mode", "nearest"), "nearest") ||
        strcmp(rlx_attr_s(n, "coordinate_transformation_mode", "half_pixel"), "tf_crop_and_resize"))
        return 0;
    if (rlx_has_input(g, node, 2) && !rlx_is_const(g, n->in[2])) return 0;
    if (rlx_has_input(g, node, 1) && !rlx_is_const(g, n->in[1])) return 0;
    const RlxValue *y = &g->v[n->out[0]];
    int64_t entries = 0;
    for (int a = 0; a < y->rank; a++) entries += y->dims[a];
    return entries <= RZ_MAX_TABLE;
}

/* rk_resize on a 1-D problem: the thunk's mode and attributes with the
 * given dtype, dims, roi (an f64 pair or NULL), scale or size; 0 on success. */
static int rz_run(const RlxThunk *t, int64_t dtype, int64_t nin, int64_t nout, const double *roi, const float *scale,
                  const int64_t *size, double extrapolation, const void *x, void *y) {
    RlxThunk q = *t;
    rlx_tk_i(&q, "dtype", dtype);
    rlx_tk_i(&q, "rank", 1);
    rlx_tk_a(&q, "in_dims", &nin, 1);
    rlx_tk_a(&q, "out_dims", &nout, 1);
    rlx_tk_f(&q, "extrapolation", extrapolation);
    rlx_tk_i(&q, "roi_dtype", RLX_F64);
    rk_ctx ctx = {1, NULL, NULL, 0};
    const void *in[4] = {x, roi, scale, size};
    void *out[1] = {y};
    return rlx_kernels[RLX_K_resize].fn(&ctx, q.p, in, out);
}

/* The nearest indices of axis a as the C kernel computes them: rk_resize
 * itself, run on that axis alone (its mode, scale or size and roi) over
 * the ramp 0, 1, ..., with a NaN extrapolation for the coordinates outside
 * the crop (-1 in idx). 0 if the kernel refuses the parameters. */
static int rz_axis(const RlxGraph *g, const RlxThunk *t, int a, int64_t *idx) {
    int64_t rank = PI("rank"), ind[RLX_MAX_RANK], outd[RLX_MAX_RANK];
    rlx_tk_get_a(t, "in_dims", ind);
    rlx_tk_get_a(t, "out_dims", outd);
    int64_t nin = ind[a], nout = outd[a], size = nout;
    double roi[2] = {0, 1};
    float scale = 0;
    if (t->in[1].value >= 0) {
        roi[0] = rlx_weight_f64(&g->v[t->in[1].value], a);
        roi[1] = rlx_weight_f64(&g->v[t->in[1].value], rank + a);
    }
    if (t->in[2].value >= 0) scale = (float)rlx_weight_f64(&g->v[t->in[2].value], a);
    double *x = rlx_alloc(sizeof(double) * (size_t)(nin ? nin : 1)), *y = rlx_alloc(sizeof(double) * (size_t)nout);
    for (int64_t i = 0; i < nin; i++) x[i] = (double)i;
    if (rz_run(t, RLX_F64, nin, nout, t->in[1].value >= 0 ? roi : NULL, t->in[2].value >= 0 ? &scale : NULL,
               t->in[2].value >= 0 ? NULL : &size, NAN, x, y))
        return 0;
    for (int64_t o = 0; o < nout; o++) idx[o] = y[o] != y[o] ? -1 : (int64_t)y[o];
    return 1;
}

/* resize.kl's TABLE: per axis that is not the identity its offset in RZ_I
 * (TOFF; -1 elsewhere); 0 if the C kernel refuses the parameters. */
static int rz_tables(const RlxGraph *g, const RlxThunk *t, RlxGpuLaunch *l) {
    int rank = (int)PI("rank");
    int64_t ind[RLX_MAX_RANK], outd[RLX_MAX_RANK], toff[RLX_MAX_RANK], idx[RZ_MAX_TABLE], nidx = 0;
    rlx_tk_get_a(t, "in_dims", ind);
    rlx_tk_get_a(t, "out_dims", outd);
    RlxBuf b = {0};
    for (int a = 0; a < rank; a++) {
        RLX_ASSERT(outd[a] <= RZ_MAX_TABLE);
        if (!rz_axis(g, t, a, idx)) return 0;
        int ident = ind[a] == outd[a];
        for (int64_t o = 0; o < outd[a]; o++) ident = ident && idx[o] == o;
        toff[a] = ident ? -1 : nidx;
        for (int64_t o = 0; o < outd[a] && !ident; o++)
            rlx_buf_printf(&b, "%s%lld", nidx++ ? ", " : "", (long long)idx[o]);
    }
    rlx_gpu_array(l, "TOFF", toff, rank);
    rlx_gpu_const(l, "RZ_I_N", nidx ? nidx : 1);
    rlx_gpu_define(l, "RZ_I_V", nidx ? rlx_fmt("{%s}", b.data) : "{0}");
    return 1;
}

/* resize.kl. Loop trips of one invocation, R = rank, C the most tap
 * combinations of an element (2^R linear, 4^R cubic):
 *   TABLE:            2R (the axes, the offsets)
 *   nearest:          R * (1 + 68) + R (per axis rz_rn's 6 corrections and
 *                     two 31-step logarithms; the offsets)
 *   linear and cubic: R * (1 + 12) + C * (1 + 2R) (per axis three loops
 *                     over at most 4 taps; the combinations, two loops each). */
static int l_resize(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    int64_t dtype = PI("dtype"), rank = PI("rank"), mode = PI("mode"), esize = rlx_dtype_size((int)dtype);
    int64_t ind[RLX_MAX_RANK], outd[RLX_MAX_RANK], istr[RLX_MAX_RANK], total = 1, coord = PI("coord_mode");
    rlx_tk_get_a(t, "in_dims", ind);
    rlx_tk_get_a(t, "out_dims", outd);
    for (int64_t a = rank - 1, s = 1; a >= 0; a--) {
        istr[a] = s;
        s *= ind[a];
        total *= outd[a];
    }
    int interp = mode != 0, table = rz_table(g, t->node);
    RlxGType gt = interp ? rlx_gtype_of((RlxDType)dtype) : rlx_gtype_bytes(esize);
    if ((interp && gt != G_F32 && gt != G_F16 && gt != G_BF16) || (!interp && coord == 5 && !table)) return 0;
    /* the extrapolation value in the output's dtype, as the C kernel stores
     * it: its own output for a 1-D crop far outside the input */
    uint64_t bits = 0;
    RlxThunk q = *t;
    rlx_tk_i(&q, "mode", 0);
    rlx_tk_i(&q, "coord_mode", 5);
    int64_t two = 2, one = 1;
    double roi[2] = {10, 10}, x[2] = {0, 0};
    if (rz_run(&q, dtype, two, one, roi, NULL, &one, PF("extrapolation"), x, &bits)) return 0;
    l->tmpl = "resize";
    rlx_gpu_op(l, t->in[0], gt, 0);
    /* what the kernel reads at run time: scales (the scale, checked) or
     * sizes (checked), the roi; nothing with a table, which holds them */
    int scales = !table && t->in[2].value >= 0;
    int sizes = !table && t->in[3].value >= 0 && !rlx_is_const(g, t->in[3].value);
    int roi_in = !table && t->in[1].value >= 0 && coord == 5;
    if (roi_in) op_load(l, "LROI", t->in[1], rlx_gtype_of((RlxDType)PI("roi_dtype")));
    if (scales) op_load(l, "LSCALE", t->in[2], G_F32);
    if (sizes) {
        rlx_gpu_define(l, "SIZE(k)", rlx_fmt("rs_idx64(X%d(k))", l->nops));
        rlx_gpu_op(l, t->in[3], G_X64, 0);
    }
    if (table && !rz_tables(g, t, l)) return 0;
    int yop = l->nops;
    if (interp) {
        op_store(l, "SY", t->out[0], gt);
        float f;
        if (gt == G_F32) memcpy(&f, &bits, 4);
        else f = gt == G_F16 ? rlx_f16_to_f32((uint16_t)bits) : rlx_bf16_to_f32((uint16_t)bits);
        rlx_gpu_define(l, "SEXTRAP(k)", rlx_fmt("S%d(k, %s)", yop, flit(f)));
    } else {
        rlx_gpu_op(l, t->out[0], gt, 1);
        rlx_gpu_define(l, "SEXTRAP(k)", rlx_fmt("X%d(k) = %s", yop, bits_lit(bits, esize)));
        rlx_gpu_define(l, "MOVE(k, j)", rlx_fmt("X%d(k) = X0(j)", yop));
    }
    if (scales || sizes) op_status(l);
    if (scales || (!interp && !table)) rlx_gpu_const(l, "RLX_NEED_INT64", 1);   /* rz_cmp, rz_rn */
    /* sizes: the double scale out / in as the C kernel has it, whether
     * ow = scale * in is past or at 1, and the divisor of nearest's x_ori
     * (the scale; align_corners: ow - 1) as a 53-bit mantissa, in two
     * parts, and the shift that makes 2 x_ori = num 2^MDSH / mantissa */
    int64_t gt1[RLX_MAX_RANK], eq1[RLX_MAX_RANK], mdhi[RLX_MAX_RANK], mdlo[RLX_MAX_RANK], mdsh[RLX_MAX_RANK];
    for (int a = 0; a < rank; a++) {
        double sd = ind[a] ? (double)outd[a] / (double)ind[a] : 1.0, ow = sd * (double)ind[a];
        double d = coord == 2 ? ow - 1 : sd;
        gt1[a] = ow > 1;
        eq1[a] = ow == 1;
        int e = 0;
        double f = d > 0 ? frexp(d, &e) : 0.5;
        uint64_t m = (uint64_t)ldexp(f, 53);
        mdhi[a] = (int64_t)(m >> 31);
        mdlo[a] = (int64_t)(m & 0x7fffffffu);
        mdsh[a] = 53 - e;
    }
    rlx_gpu_array(l, "OWGT1", gt1, (int)rank);
    rlx_gpu_array(l, "OWEQ1", eq1, (int)rank);
    rlx_gpu_array(l, "MDHI", mdhi, (int)rank);
    rlx_gpu_array(l, "MDLO", mdlo, (int)rank);
    rlx_gpu_array(l, "MDSH", mdsh, (int)rank);
    rlx_gpu_const(l, "HAS_ROI", roi_in);
    rlx_gpu_const(l, "HAS_SCALES", scales);
    rlx_gpu_const(l, "HAS_SIZES", sizes);
    rlx_gpu_const(l, "RANK", rank);
    rlx_gpu_const(l, "NEAREST", !interp);
    rlx_gpu_const(l, "TABLE", table);
    rlx_gpu_const(l, "MODE", mode);
    rlx_gpu_const(l, "COORD", coord);
    rlx_gpu_const(l, "NMODE", PI("nearest_mode"));
    rlx_gpu_const(l, "EXCLUDE", PI("exclude_outside") != 0);
    rlx_gpu_define(l, "CUBIC_A", flit(PF("cubic_a")));
    rlx_gpu_array(l, "IDIMS", ind, (int)rank);
    rlx_gpu_array(l, "ODIMS", outd, (int)rank);
    rlx_gpu_array(l, "ISTR", istr, (int)rank);
    rlx_gpu_grid_1d(l, total, 128, lim);
    uint64_t combos = 1, r = (uint64_t)rank;
    for (int a = 0; a < rank; a++) combos *= mode == 2 ? 4 : 2;
    l->trips = table ? 2 * r : !interp ? r * 69 + r : r * 13 + combos * (1 + 2 * r);
    return 1;
}

/* ---- 3-D and transposed convolutions ---- */

/* conv_nd.kl, for conv_nd_f32 and conv_transpose_f32 (the same params). Loop
 * trips of one invocation: CG * (1 + K0 * (1 + K1 * (1 + K2))), the input
 * channels and the three tap loops inside each other. */
static int l_conv_nd(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t c = PI("c"), oc = PI("oc"), group = PI("group"), cg = c / group, total = PI("n") * oc;
    int64_t v[6][RLX_MAX_RANK];
    static const char *const fields[6] = {"in_dims", "out_dims", "k", "s", "d", "pb"};
    static const char *const names[6][3] = {{"ID0", "ID1", "ID2"}, {"OD0", "OD1", "OD2"}, {"K0", "K1", "K2"},
                                            {"ST0", "ST1", "ST2"},   {"D0", "D1", "D2"},   {"PB0", "PB1", "PB2"}};
    for (int f = 0; f < 6; f++) {
        rlx_tk_get_a(t, fields[f], v[f]);
        for (int a = 0; a < 3; a++) rlx_gpu_const(l, names[f][a], v[f][a]);
    }
    for (int a = 0; a < 3; a++) total *= v[1][a];
    l->tmpl = "conv_nd";
    rlx_gpu_op(l, t->in[0], G_F32, 0);
    rlx_gpu_op(l, t->in[1], G_F32, 0);
    if (PI("has_bias")) op_load(l, "LBIAS", t->in[2], G_F32);
    op_store(l, "SY", t->out[0], G_F32);
    rlx_gpu_const(l, "TRANSPOSE", t->kind == RLX_K_conv_transpose_f32);
    rlx_gpu_const(l, "HAS_BIAS", PI("has_bias") != 0);
    rlx_gpu_const(l, "C", c);
    rlx_gpu_const(l, "OC", oc);
    rlx_gpu_const(l, "CG", cg);
    rlx_gpu_const(l, "OCG", oc / group);
    rlx_gpu_grid_1d(l, total, 128, lim);
    uint64_t k0 = (uint64_t)v[2][0], k1 = (uint64_t)v[2][1], k2 = (uint64_t)v[2][2];
    l->trips = (uint64_t)cg * (1 + k0 * (1 + k1 * (1 + k2)));
    return 1;
}

/* ---- GridSample, RoiAlign ---- */

/* gridsample.kl. Loop trips of one invocation, T taps per axis (2 bilinear,
 * 1 nearest, 4 bicubic): 2 * (1 + T) for the two axes' taps, T * (1 + T)
 * for the sum over rows and columns. */
static int l_grid_sample(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    RlxGType xt = rlx_gtype_of((RlxDType)PI("dtype")), gt = rlx_gtype_of((RlxDType)PI("grid_dtype"));
    if (!is_f32_like(xt) || !is_f32_like(gt)) return 0;
    int64_t mode = PI("mode"), taps = mode == 0 ? 2 : mode == 1 ? 1 : 4;
    l->tmpl = "gridsample";
    op_load(l, "LIMG", t->in[0], xt);
    op_load(l, "LGRID", t->in[1], gt);
    op_store(l, "SY", t->out[0], xt);
    static const char *const names[] = {"C", "H", "W", "OH", "OW"}, *const fields[] = {"c", "h", "w", "oh", "ow"};
    for (int i = 0; i < 5; i++) rlx_gpu_const(l, names[i], PI(fields[i]));
    rlx_gpu_const(l, "MODE", mode);
    rlx_gpu_const(l, "PADDING", PI("padding"));
    rlx_gpu_const(l, "ALIGN", PI("align_corners") != 0);
    if (mode == 1) rlx_gpu_const(l, "RLX_NEED_INT64", 1);   /* gs_rint */
    rlx_gpu_grid_1d(l, PI("n") * PI("c") * PI("oh") * PI("ow"), 128, lim);
    l->trips = (uint64_t)(2 * (1 + taps) + taps * (1 + taps));
    return 1;
}

/* roialign.kl. Loop trips of one invocation: GH * (1 + GW) with GH, GW
 * the sampling ratio, or for adaptive grids the caps CAPH, CAPW: the
 * feature map's extent per bin, ceil((h + 1) / oh) and ceil((w + 1) / ow),
 * both multiplied by the largest f that keeps the product under 60000
 * (bigger grids are a run-time RLX_E_ARG). */
static int l_roi_align(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    RlxGType gt = rlx_gtype_of((RlxDType)PI("dtype"));
    if (!is_f32_like(gt)) return 0;
    int64_t h = PI("h"), w = PI("w"), oh = PI("oh"), ow = PI("ow"), sr = PI("sampling_ratio");
    int64_t ch = (h + 1 + oh - 1) / oh, cw = (w + 1 + ow - 1) / ow, f = 1;
    while ((ch * (f + 1)) * (cw * (f + 1)) <= 60000) f++;
    ch *= f;
    cw *= f;
    l->tmpl = "roialign";
    op_load(l, "LIMG", t->in[0], gt);
    op_load(l, "LROI", t->in[1], gt);
    rlx_gpu_define(l, "BIDX(k)", rlx_fmt("rs_idx64(X%d(k))", l->nops));
    rlx_gpu_op(l, t->in[2], G_X64, 0);
    op_store(l, "SY", t->out[0], gt);
    op_status(l);
    static const char *const names[] = {"NB", "C", "H", "W", "OH", "OW", "SR"};
    static const char *const fields[] = {"n", "c", "h", "w", "oh", "ow", "sampling_ratio"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) rlx_gpu_const(l, names[i], PI(fields[i]));
    rlx_gpu_const(l, "CAPH", ch);
    rlx_gpu_const(l, "CAPW", cw);
    rlx_gpu_const(l, "HALF_PIXEL", PI("half_pixel") != 0);
    rlx_gpu_const(l, "MAX_MODE", PI("max_mode") != 0);
    rlx_gpu_define(l, "SCALE", flit(PF("spatial_scale")));
    rlx_gpu_grid_1d(l, PI("nrois") * PI("c") * oh * ow, 128, lim);
    uint64_t gh = (uint64_t)(sr > 0 ? sr : ch), gw = (uint64_t)(sr > 0 ? sr : cw);
    l->trips = gh * (1 + gw);
    return 1;
}

/* ---- Einsum ---- */

/* einsum.kl. Loop trips of one invocation: NO (the output labels) + NSUM
 * (the summed combinations) * (1 + (NL - NO) + NL), each combination
 * decomposed over the summed labels, then every label's offset. */
static int l_einsum(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t dt = PI("dtype"), nops = PI("nops"), nl = PI("nlabels"), no = PI("nout_labels");
    int64_t dims[RLX_MAX_RANK], ost[RLX_MAX_RANK], st[RLX_MAX_RANK], zero[RLX_MAX_RANK] = {0}, nout = 1, nsum = 1;
    rlx_tk_get_a(t, "dims", dims);
    rlx_tk_get_a(t, "ostride", ost);
    for (int a = 0; a < nl; a++) *(a < no ? &nout : &nsum) *= dims[a];
    RlxGType gt = rlx_gtype_of((RlxDType)dt);
    if (gt == G_BOOL) return 0;
    l->tmpl = "einsum";
    const char *acc, *wrap;
    switch (gt) {
    case G_F32: case G_F16: case G_BF16: acc = "float", wrap = "v"; break;
    case G_F64: acc = "rlx_f64", wrap = "v"; break;
    case G_I64: acc = "rlx_u64", wrap = "rlx_i64(v)"; break;
    case G_U64: acc = "rlx_u64", wrap = "v"; break;
    case G_I8: acc = "uint", wrap = "RLX_SEXT(v, 8)"; break;
    case G_I16: acc = "uint", wrap = "RLX_SEXT(v, 16)"; break;
    case G_I32: acc = "uint", wrap = "int(v)"; break;
    case G_U8: acc = "uint", wrap = "((v) & 0xffu)"; break;
    case G_U16: acc = "uint", wrap = "((v) & 0xffffu)"; break;
    default: acc = "uint", wrap = "v"; break;
    }
    rlx_gpu_define(l, "ACC", acc);
    static const char *const sn[5] = {"s0", "s1", "s2", "s3", "s4"}, *const an[5] = {"S0A", "S1A", "S2A", "S3A", "S4A"};
    for (int k = 0; k < 5; k++) {
        if (k < nops) {
            rlx_tk_get_a(t, sn[k], st);
            rlx_gpu_define(l, rlx_fmt("V%d(k)", k), rlx_fmt("%s(L%d(k))", acc, k));
            rlx_gpu_op(l, t->in[k], gt, 0);
        }
        rlx_gpu_array(l, an[k], k < nops ? st : zero, (int)nl);
    }
    rlx_gpu_define(l, "SOUT(k, v)", rlx_fmt("S%d(k, %s)", l->nops, wrap));
    rlx_gpu_op(l, t->out[0], gt, 1);
    rlx_gpu_const(l, "NOPS", nops);
    rlx_gpu_const(l, "NL", nl);
    rlx_gpu_const(l, "NO", no);
    rlx_gpu_const(l, "NSUM", nsum);
    rlx_gpu_array(l, "DIMS", dims, (int)nl);
    rlx_gpu_array(l, "OSTR", ost, (int)nl);
    rlx_gpu_grid_1d(l, nout, 128, lim);
    l->trips = (uint64_t)no + (uint64_t)nsum * (uint64_t)(1 + (nl - no) + nl);
    return 1;
}

/* ---- quantization ---- */

/* the range of a quantized dtype (u8 i8 u16 i16 i32) */
static void quant_range(RlxGpuLaunch *l, int64_t dt) {
    int64_t lo = dt == RLX_U8 || dt == RLX_U16 ? 0 : dt == RLX_I8 ? -128 : dt == RLX_I16 ? -32768 : -2147483647 - 1;
    int64_t hi = dt == RLX_U8 ? 255 : dt == RLX_I8 ? 127 : dt == RLX_U16 ? 65535 : dt == RLX_I16 ? 32767 : 2147483647;
    rlx_gpu_const(l, "QLO", lo);
    rlx_gpu_const(l, "QHI", hi);
}

static int is_quant(int64_t dt) { return dt == RLX_U8 || dt == RLX_I8 || dt == RLX_U16 || dt == RLX_I16 || dt == RLX_I32; }

/* quantize.kl. Loop trips: rs_fdiv_rn's 75 (quantize), none (dequantize). */
static int l_quantize(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int deq = PI("dequantize") != 0;
    int64_t fdt = deq ? PI("y_dtype") : PI("x_dtype"), qdt = deq ? PI("x_dtype") : PI("y_dtype");
    if (fdt != RLX_F32 || !is_quant(qdt)) return 0;
    RlxGType qt = rlx_gtype_of((RlxDType)qdt);
    l->tmpl = "quantize";
    op_load(l, deq ? "LQ" : "LXF", t->in[0], deq ? qt : G_F32);
    op_load(l, "LSCALE", t->in[1], G_F32);
    if (PI("has_zp")) op_load(l, "LZP", t->in[2], qt);
    op_store(l, "SY", t->out[0], deq ? G_F32 : qt);
    rlx_gpu_const(l, "DEQUANTIZE", deq);
    rlx_gpu_const(l, "HAS_ZP", PI("has_zp") != 0);
    rlx_gpu_const(l, "PER_AXIS", PI("per_axis") != 0);
    rlx_gpu_const(l, "AXIS_LEN", PI("axis_len"));
    rlx_gpu_const(l, "INNER", PI("inner"));
    int q64 = deq && qdt == RLX_I32;
    rlx_gpu_const(l, "Q64", q64);
    if (q64) rlx_gpu_const(l, "RLX_NEED_INT64", 1);
    quant_range(l, qdt);
    rlx_gpu_grid_1d(l, PI("outer") * PI("axis_len") * PI("inner"), 128, lim);
    l->trips = deq ? 0 : 75;
    return 1;
}

/* dynquant.kl, two launches: the range (one workgroup of 256; loop trips
 * ceil(N / 256) + 8 reduction steps + 2 * 75 for the two divisions), then
 * the elements (75, one division). */
static int l_dynamic_quantize(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int64_t n = PI("n");
    RlxGpuLaunch *r = &l[0], *e = &l[1];
    r->tmpl = e->tmpl = "dynquant";
    op_load(r, "LXF", t->in[0], G_F32);
    op_store(r, "SSCALE", t->out[1], G_F32);
    op_store(r, "SZP", t->out[2], G_U8);
    rlx_gpu_const(r, "RANGE", 1);
    rlx_gpu_const(r, "N", n);
    r->local[0] = 256;
    r->groups[0] = r->groups[1] = r->groups[2] = 1;
    r->shared_bytes = 2 * 256 * 4;
    r->trips = cdiv((uint64_t)n, 256) + 8 + 2 * 75;
    op_load(e, "LXF", t->in[0], G_F32);
    op_load(e, "LSCALE", t->out[1], G_F32);
    op_load(e, "LZP", t->out[2], G_U8);
    op_store(e, "SY", t->out[0], G_U8);
    rlx_gpu_const(e, "RANGE", 0);
    rlx_gpu_grid_1d(e, n, 128, lim);
    e->trips = 75;
    return 2;
}

/* The requantization operands of matmul_int.kl / conv_int.kl (QLINEAR):
 * the two scales (their macros named), y_scale, y_zp, the output range. */
static void requant_ops(RlxGpuLaunch *l, const RlxThunk *t, const char *s0, const char *s1, int64_t ydt) {
    op_load(l, s0, t->in[4], G_F32);
    op_load(l, s1, t->in[5], G_F32);
    op_load(l, "LYS", t->in[6], G_F32);
    if (t->in[7].value >= 0) op_load(l, "LYZP", t->in[7], rlx_gtype_of((RlxDType)ydt));
    rlx_gpu_const(l, "HAS_YZP", t->in[7].value >= 0);
    quant_range(l, ydt);
}

/* matmul_int.kl. Loop trips: BRANK + K (+ 75: the requantization's division). */
static int l_matmul_integer(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int q = PI("qlinear") != 0;
    int64_t adt = PI("a_dtype"), bdt = PI("b_dtype"), ydt = q ? PI("y_dtype") : RLX_I32, brank = PI("brank");
    if (!is_quant(adt) || !is_quant(bdt) || !is_quant(ydt)) return 0;
    int64_t bd[RLX_MAX_RANK], as[RLX_MAX_RANK], bs[RLX_MAX_RANK], nb = 1;
    rlx_tk_get_a(t, "bdims", bd);
    rlx_tk_get_a(t, "astride", as);
    rlx_tk_get_a(t, "bstride", bs);
    for (int d = 0; d < brank; d++) nb *= bd[d];
    l->tmpl = "matmul_int";
    op_load(l, "LA", t->in[0], rlx_gtype_of((RlxDType)adt));
    op_load(l, "LB", t->in[1], rlx_gtype_of((RlxDType)bdt));
    if (PI("a_zp_mode")) op_load(l, "LAZP", t->in[2], rlx_gtype_of((RlxDType)adt));
    if (PI("b_zp_mode")) op_load(l, "LBZP", t->in[3], rlx_gtype_of((RlxDType)bdt));
    if (q) requant_ops(l, t, "LAS", "LBS", ydt);
    op_store(l, "SY", t->out[0], rlx_gtype_of((RlxDType)ydt));
    rlx_gpu_const(l, "QLINEAR", q);
    rlx_gpu_const(l, "AZP_MODE", PI("a_zp_mode"));
    rlx_gpu_const(l, "BZP_MODE", PI("b_zp_mode"));
    rlx_gpu_const(l, "AS_MODE", PI("a_scale_mode"));
    rlx_gpu_const(l, "BS_MODE", PI("b_scale_mode"));
    rlx_gpu_const(l, "M", PI("m"));
    rlx_gpu_const(l, "NCOL", PI("n"));
    rlx_gpu_const(l, "K", PI("k"));
    rlx_gpu_const(l, "BRANK", brank);
    rlx_gpu_array(l, "BDIMS", bd, (int)brank);
    rlx_gpu_array(l, "ASTR", as, (int)brank);
    rlx_gpu_array(l, "BSTR", bs, (int)brank);
    rlx_gpu_grid_1d(l, nb * PI("m") * PI("n"), 128, lim);
    l->trips = (uint64_t)brank + (uint64_t)PI("k") + (q ? 75 : 0);
    return 1;
}

/* conv_int.kl. Loop trips: CG * (1 + KH * (1 + KW)) (+ 75: the
 * requantization's division). */
static int l_conv_integer(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    int q = PI("qlinear") != 0;
    int64_t xdt = PI("x_dtype"), wdt = PI("w_dtype"), ydt = q ? PI("y_dtype") : RLX_I32;
    if (!is_quant(xdt) || !is_quant(wdt) || !is_quant(ydt)) return 0;
    int64_t c = PI("c"), oc = PI("oc"), group = PI("group"), cg = c / group;
    l->tmpl = "conv_int";
    op_load(l, "LX0", t->in[0], rlx_gtype_of((RlxDType)xdt));
    op_load(l, "LW", t->in[1], rlx_gtype_of((RlxDType)wdt));
    if (PI("x_zp_mode")) op_load(l, "LXZP", t->in[2], rlx_gtype_of((RlxDType)xdt));
    if (PI("w_zp_mode")) op_load(l, "LWZP", t->in[3], rlx_gtype_of((RlxDType)wdt));
    if (q) requant_ops(l, t, "LXS", "LWS", ydt);
    if (PI("has_bias")) op_load(l, "LBIAS", t->in[8], G_I32);
    op_store(l, "SY", t->out[0], rlx_gtype_of((RlxDType)ydt));
    static const char *const names[] = {"H", "W", "OH", "OW", "KH", "KW", "SH", "SW", "PT", "PL", "DH", "DW"};
    static const char *const fields[] = {"h", "w", "oh", "ow", "kh", "kw", "sh", "sw", "pt", "pl", "dh", "dw"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) rlx_gpu_const(l, names[i], PI(fields[i]));
    rlx_gpu_const(l, "QLINEAR", q);
    rlx_gpu_const(l, "X_ZP_MODE", PI("x_zp_mode"));
    rlx_gpu_const(l, "W_ZP_MODE", PI("w_zp_mode"));
    rlx_gpu_const(l, "W_SCALE_MODE", PI("w_scale_mode"));
    rlx_gpu_const(l, "HAS_BIAS", PI("has_bias") != 0);
    rlx_gpu_const(l, "C", c);
    rlx_gpu_const(l, "OC", oc);
    rlx_gpu_const(l, "CG", cg);
    rlx_gpu_const(l, "OCG", oc / group);
    rlx_gpu_grid_1d(l, PI("n") * oc * PI("oh") * PI("ow"), 128, lim);
    l->trips = (uint64_t)cg * (1 + (uint64_t)PI("kh") * (1 + (uint64_t)PI("kw"))) + (q ? 75 : 0);
    return 1;
}

/* ---- signal ---- */

/* dft.kl, for dft and stft. Loop trips: the used samples of a column (at
 * most n, or the frame length). */
static int l_dft(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    RlxGType gt = rlx_gtype_of((RlxDType)PI("dtype"));
    if (!is_f32_like(gt)) return 0;
    int stft = t->kind == RLX_K_stft;
    int64_t npt = stft ? PI("flen") : PI("n"), used = stft ? npt : (PI("len") < npt ? PI("len") : npt), bins;
    if (npt < 1 || npt >= ((int64_t)1 << 27)) return 0;   /* the node check refuses these */
    l->tmpl = "dft";
    op_load(l, "LXS", t->in[0], gt);
    int win = stft && PI("has_window");
    if (win) op_load(l, "LWIN", t->in[1], gt);
    op_store(l, "SY", t->out[0], gt);
    rlx_gpu_const(l, "STFT", stft);
    rlx_gpu_const(l, "HAS_WINDOW", win);
    rlx_gpu_const(l, "CIN", PI("complex_in") ? 2 : 1);
    rlx_gpu_const(l, "LEN", PI("len"));
    rlx_gpu_const(l, "NPT", npt);
    rlx_gpu_const(l, "USED", used);
    rlx_gpu_const(l, "INVERSE", !stft && PI("inverse"));
    rlx_gpu_define(l, "SIGN", !stft && PI("inverse") ? "1.0f" : "(-1.0f)");
    if (stft) {
        rlx_gpu_const(l, "NBINS", PI("nbins"));
        rlx_gpu_const(l, "FRAMES", PI("frames"));
        rlx_gpu_const(l, "STEP", PI("step"));
        bins = PI("batch") * PI("frames") * PI("nbins");
    } else {
        rlx_gpu_const(l, "INNER", PI("inner"));
        rlx_gpu_const(l, "NOUT", PI("nout"));
        bins = PI("outer") * PI("nout") * PI("inner");
    }
    rlx_gpu_grid_1d(l, bins, 128, lim);
    l->trips = (uint64_t)used;
    return 1;
}

/* window.kl. No loops. */
static int l_window(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    RlxGType gt = rlx_gtype_of((RlxDType)PI("dtype"));
    int64_t size = PI("size"), denom = PI("periodic") ? size : size - 1;
    if (!is_f32_like(gt) || size >= ((int64_t)1 << 28)) return 0;
    l->tmpl = "window";
    op_store(l, "SY", t->out[0], gt);
    rlx_gpu_const(l, "KIND", PI("kind"));
    rlx_gpu_const(l, "DENOM", denom);
    rlx_gpu_grid_1d(l, size, 128, lim);
    return 1;
}

/* ---- Det ---- */

enum { DET_MAX_N = 60 };   /* the matrix in 16 KB of workgroup memory */

/* det.kl: a workgroup of 64 per matrix. Loop trips of one invocation:
 * ceil(n^2 / 64) (the load) + n * (n + ceil(n / 64) + ceil(n^2 / 64)) (per
 * column: the pivot search, the swap, the elimination). */
static int l_det(const RlxGraph *g, const RlxThunk *t, const RlxTargetLimits *lim, RlxGpuLaunch *l) {
    (void)g;
    RlxGType gt = rlx_gtype_of((RlxDType)PI("dtype"));
    int64_t n = PI("n"), batch = PI("batch");
    if (!is_f32_like(gt) || n > DET_MAX_N) return 0;
    l->tmpl = "det";
    op_load(l, "LA", t->in[0], gt);
    op_store(l, "SY", t->out[0], gt);
    rlx_gpu_const(l, "NM", n);
    rlx_gpu_const(l, "NN", n * n > 0 ? n * n : 1);
    rlx_gpu_const(l, "BATCH", batch);
    rlx_gpu_grid_1d(l, batch * 64, 64, lim);
    l->shared_bytes = (uint32_t)(4 * (n * n > 0 ? n * n : 1) + 4);
    uint64_t un = (uint64_t)n;
    l->trips = cdiv(un * un, 64) + un * (un + cdiv(un, 64) + cdiv(un * un, 64));
    return 1;
}

/* ---- what the dtype column can't say ---- */

const char *rlx_gpu_node_check_vision(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    switch (n->op) {
    case RLX_OP_RESIZE: {
        RlxDType dt = g->v[n->in[0]].dtype;
        const char *mode = rlx_attr_s(n, "mode", "nearest");
        if (strcmp(mode, "nearest"))
            return dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16
                       ? NULL
                       : rlx_fmt(" for %s mode on dtype %s (float types only)", mode, rlx_dtype_name(dt));
        if (!strcmp(rlx_attr_s(n, "coordinate_transformation_mode", "half_pixel"), "tf_crop_and_resize") &&
            !rz_table(g, node))
            return rlx_fmt(" for nearest tf_crop_and_resize unless its roi and scales are constants and its output "
                           "has at most %d coordinates in all", RZ_MAX_TABLE);
        return NULL;
    }
    case RLX_OP_DFT: case RLX_OP_STFT: {
        /* rs_cos2pi's integers: n < 2^27 points; an output axis holds at least n / 2 of its bins */
        const RlxValue *y = &g->v[n->out[0]];
        for (int a = 0; a < y->rank; a++)
            if (y->dims[a] >= ((int64_t)1 << 25)) return " for transforms of 2^26 points or more";
        return NULL;
    }
    case RLX_OP_HANNWINDOW: case RLX_OP_HAMMINGWINDOW: case RLX_OP_BLACKMANWINDOW: {
        RlxDType dt = g->v[n->out[0]].dtype;
        if (dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16)
            return rlx_fmt(" for an output of dtype %s (f32, f16, bf16)", rlx_dtype_name(dt));
        return g->v[n->out[0]].dims[0] >= ((int64_t)1 << 28) ? " for windows of 2^28 points or more" : NULL;
    }
    case RLX_OP_DET: {
        const RlxValue *x = &g->v[n->in[0]];
        return x->rank >= 2 && x->dims[x->rank - 1] > DET_MAX_N ? rlx_fmt(" for matrices over %d x %d", DET_MAX_N, DET_MAX_N)
                                                                 : NULL;
    }
    case RLX_OP_DEQUANTIZELINEAR: {
        RlxDType dt = g->v[n->out[0]].dtype;
        return dt == RLX_F32 ? NULL : rlx_fmt(" for an output of dtype %s (f32 only)", rlx_dtype_name(dt));
    }
    default: return NULL;
    }
}

RlxGpuBuilder rlx_gpu_builder_vision(RlxKernelKind kind) {
    switch ((int)kind) {
    case RLX_K_rnn: return l_rnn;
    case RLX_K_resize: return l_resize;
    case RLX_K_conv_nd_f32: case RLX_K_conv_transpose_f32: return l_conv_nd;
    case RLX_K_grid_sample: return l_grid_sample;
    case RLX_K_roi_align: return l_roi_align;
    case RLX_K_einsum: return l_einsum;
    case RLX_K_quantize: return l_quantize;
    case RLX_K_dynamic_quantize: return l_dynamic_quantize;
    case RLX_K_matmul_integer: return l_matmul_integer;
    case RLX_K_conv_integer: return l_conv_integer;
    case RLX_K_dft: case RLX_K_stft: return l_dft;
    case RLX_K_window: return l_window;
    case RLX_K_det: return l_det;
    default: return NULL;
    }
}
