/* launch_vision.c - the GPU launches of Resize, ConvTranspose, 3-D convolution, GridSample, RoiAlign, the recurrent cells (RNN, GRU, LSTM), Einsum, the quantized kernels and DFT / STFT (gpu.h: RlxGpuBuilder).
 *
 * Each kind's builder reads the thunk's params (runtime_min/rk_kernels.def),
 * picks its template in lib/gpu/kernels/ and fills the launch as launch.c's
 * builders do; its ops go into support.c's column for the GPU targets at
 * the same time. Every builder states the loop iterations one invocation
 * runs (l->trips) as a formula over the params, next to the loops of its
 * template. A kernel that meets a data error the C kernel reports (an
 * index out of range) stores the status in the run's status word, an
 * operand of slot value -2 (select.c).
 */
#include <math.h>
#include <string.h>

#include "gpu.h"
#include "../passes/passes.h"

#define PI(name) rlx_tk_get_i(t, name)
#define PF(name) rlx_tk_get_f(t, name)

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

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
    if (PI("dtype") != RLX_F32) return 0;
    int64_t cell = PI("cell"), seq = PI("seq"), batch = PI("batch"), input = PI("input"), hid = PI("hidden");
    int64_t dirs = PI("direction") == 2 ? 2 : 1, gates = cell == 0 ? 1 : cell == 1 ? 3 : 4;
    int lbr = cell == 1 && PI("linear_before_reset");
    int64_t most = lim->workgroup_size > 0 && lim->workgroup_size < 256 ? lim->workgroup_size : 256;
    int64_t L = (gates * hid + 31) / 32 * 32;
    if (L > most) L = most;
    if (L < 32) L = 32;
    l->tmpl = "rnn";
    op_load(l, "LXS", t->in[0], G_F32);
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
    op_store(l, "SY", t->out[0], G_F32);
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

RlxGpuBuilder rlx_gpu_builder_vision(RlxKernelKind kind) {
    switch ((int)kind) {
    case RLX_K_rnn: return l_rnn;
    default: return NULL;
    }
}
