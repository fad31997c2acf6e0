/* rk_rnn.c - the rnn family's kernels: ONNX RNN, GRU and LSTM (one kernel,
 * rk_rnn) and Einsum (rk_einsum).
 *
 * Recurrence without scratch memory. The kernel allocates nothing, so the
 * outputs double as state: step t of direction d writes its hidden state
 * into its own row of Y, and the next step reads the previous state from
 * that row (or from initial_h, or zeros, at the first step). Each hidden
 * unit i is computed on its own: its gate pre-activations are dot products
 * of a row of W with x_t and a row of R with h_{t-1}, so gates live in a
 * few locals, and h_t[i] goes straight into Y. rlxc makes every output a
 * real value even when the model does not ask for it, so all of them exist:
 *   - LSTM's cell state lives in Y_c and is updated in place: c_t[i] needs
 *     only c_{t-1}[i] and unit i's gates;
 *   - GRU without linear_before_reset needs the whole vector r_t * h_{t-1}
 *     before any unit's candidate, so it is stored in Y_h, which is free
 *     until the final state is copied there at the end.
 * Batches are independent, so each (direction, batch) pair runs all its
 * steps before the next. With sequence_lens, a batch runs only its first
 * len steps (a reverse direction starts at step len-1), the rows of Y past
 * len are zero, and Y_h / Y_c hold the state after the last valid step
 * (zeros when len is 0, as in onnxruntime). Clip bounds every activation's
 * input, the cell state's before h() included (onnxruntime does too).
 *
 * Layouts (ONNX 'layout'): 0 is X [seq, batch, input], Y [seq, dirs, batch,
 * hidden], Y_h [dirs, batch, hidden]; 1 is batch first: X [batch, seq,
 * input], Y [batch, seq, dirs, hidden], Y_h [batch, dirs, hidden]. Only the
 * row offsets differ; every row is contiguous.
 *
 * Arithmetic is in double and rounded once per stored element, whatever
 * the float storage dtype. X and Y may be stored in other types than the
 * rest (rlxc --precision: x_dtype, y_dtype); the state read back from Y is
 * then Y's stored value, while Y_c (the cell state) and Y_h keep dtype.
 *
 * Einsum walks every combination of label values with two odometers: the
 * output labels outside, the summed labels inside; an operand's element is
 * at the sum of label value times the operand's stride for that label (a
 * label repeated in one operand has the sum of its axes' strides: the
 * diagonal). Floats accumulate in double, integers in int64 (wrapping).
 */
#include "rk_rnn.h"

#include <math.h>

/* Loads and stores of other types than f32 go through one out-of-line copy
 * of the typed accessors: the dtype is not known here, and inlined at each
 * call site they made this kernel several KB larger (the zoo LSTM's binary
 * is held to 64 KB of code by tests/zoo/run.sh); f32 stays inline. */
#if defined(__GNUC__)
#define RNN_NOINLINE __attribute__((noinline))
#define RNN_SMALL __attribute__((cold))
#else
#define RNN_NOINLINE
#define RNN_SMALL
#endif
static RNN_NOINLINE double rnn_load_any(int64_t dt, const void *base, int64_t i) { return rk_load_f64(dt, base, i); }
static RNN_NOINLINE void rnn_store_any(int64_t dt, void *base, int64_t i, double v) { rk_store_f64(dt, base, i, v); }
static inline double rnn_load(int64_t dt, const void *base, int64_t i) {
    return dt == RLX_F32 ? (double)((const float *)base)[i] : rnn_load_any(dt, base, i);
}
static inline void rnn_store(int64_t dt, void *base, int64_t i, double v) {
    if (dt == RLX_F32) ((float *)base)[i] = (float)v;
    else rnn_store_any(dt, base, i, v);
}

static double activate(int64_t code, double x, double alpha, double beta) {
    switch (code) {
    case RK_ACT_RELU: return x > 0 ? x : 0.0;
    case RK_ACT_TANH: return tanh(x);
    case RK_ACT_SIGMOID: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case RK_ACT_AFFINE: return alpha * x + beta;
    case RK_ACT_LEAKYRELU: return x < 0 ? alpha * x : x;
    case RK_ACT_THRESHOLDEDRELU: return x > alpha ? x : 0.0;
    case RK_ACT_SCALEDTANH: return alpha * tanh(beta * x);
    case RK_ACT_HARDSIGMOID: {
        double y = alpha * x + beta;
        return y < 0 ? 0.0 : y > 1 ? 1.0 : y;
    }
    case RK_ACT_ELU: return x < 0 ? alpha * (exp(x) - 1.0) : x;
    case RK_ACT_SOFTSIGN: return x / (1.0 + fabs(x));
    case RK_ACT_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
    default: return x;
    }
}

/* One (direction, batch) pair's view of the tensors: element offsets. */
typedef struct {
    const rk_rnn_params *p;
    const void *const *in;
    void *const *out;
    int64_t dt, nin, h, gates, dir;
    int64_t xdt, ydt;            /* X's and Y's storage dtypes (dt: every other tensor's) */
    int64_t w, r, b, pp;         /* offsets of this direction's W, R, B, P */
    int64_t acts[3];             /* activation slots of this direction: f, g, h */
    double alpha[3], beta[3];
} Cell;

static double act(const Cell *c, int k, double x) {
    if (c->p->has_clip) x = x < -c->p->clip ? -c->p->clip : x > c->p->clip ? c->p->clip : x;
    return activate(c->acts[k], x, c->alpha[k], c->beta[k]);
}

/* Row (gate g, unit i) of W times x_t, plus row (g, i) of R times h (NULL:
 * zeros), plus both biases: a gate's pre-activation without peepholes. */
static double gate_input(const Cell *c, int64_t g, int64_t i, int64_t x_off) {
    const void *X = c->in[0], *W = c->in[1];
    int64_t row = c->w + (g * c->h + i) * c->nin;
    double s = 0.0;
    for (int64_t j = 0; j < c->nin; j++) s += rnn_load(c->dt, W, row + j) * rnn_load(c->xdt, X, x_off + j);
    if (c->p->has_b) s += rnn_load(c->dt, c->in[3], c->b + g * c->h + i);
    return s;
}

static double gate_recur(const Cell *c, int64_t g, int64_t i, const void *hb, int64_t hdt, int64_t h_off) {
    const void *R = c->in[2];
    int64_t row = c->r + (g * c->h + i) * c->h;
    double s = 0.0;
    if (hb)
        for (int64_t j = 0; j < c->h; j++) s += rnn_load(c->dt, R, row + j) * rnn_load(hdt, hb, h_off + j);
    if (c->p->has_b) s += rnn_load(c->dt, c->in[3], c->b + (c->gates + g) * c->h + i);
    return s;
}

static double load_or_zero(int64_t dt, const void *base, int64_t off) {
    return base ? rnn_load(dt, base, off) : 0.0;
}

/* One step: state h (hb, h_off, stored as hdt; hb NULL = zeros) -> row y_off of Y. */
static void rnn_step(const Cell *c, int64_t x_off, const void *hb, int64_t hdt, int64_t h_off, int64_t y_off,
                     int64_t st_off) {
    void *Y = c->out[0];
    for (int64_t i = 0; i < c->h; i++)
        rnn_store(c->ydt, Y, y_off + i,
                     act(c, 0, gate_input(c, 0, i, x_off) + gate_recur(c, 0, i, hb, hdt, h_off)));
    (void)st_off;
}

/* GRU gates z, r, h (ONNX order); st_off is this pair's row of Y_h. */
static void gru_step(const Cell *c, int64_t x_off, const void *hb, int64_t hdt, int64_t h_off, int64_t y_off,
                     int64_t st_off) {
    void *Y = c->out[0], *scratch = c->out[1];
    if (!c->p->linear_before_reset) {
        /* r * h_{t-1} for every unit, before any candidate needs it */
        for (int64_t i = 0; i < c->h; i++) {
            double r = act(c, 0, gate_input(c, 1, i, x_off) + gate_recur(c, 1, i, hb, hdt, h_off));
            rnn_store(c->dt, scratch, st_off + i, r * load_or_zero(hdt, hb, h_off + i));
        }
    }
    for (int64_t i = 0; i < c->h; i++) {
        double z = act(c, 0, gate_input(c, 0, i, x_off) + gate_recur(c, 0, i, hb, hdt, h_off));
        double cand;
        if (c->p->linear_before_reset) {
            double r = act(c, 0, gate_input(c, 1, i, x_off) + gate_recur(c, 1, i, hb, hdt, h_off));
            cand = gate_input(c, 2, i, x_off) + r * gate_recur(c, 2, i, hb, hdt, h_off);
        } else {
            cand = gate_input(c, 2, i, x_off) + gate_recur(c, 2, i, scratch, c->dt, st_off);
        }
        double hh = act(c, 1, cand);
        rnn_store(c->ydt, Y, y_off + i, (1.0 - z) * hh + z * load_or_zero(hdt, hb, h_off + i));
    }
}

/* LSTM gates i, o, f, c (ONNX order), peepholes i, o, f; the cell state is
 * row st_off of Y_c, updated in place. */
static void lstm_step(const Cell *c, int64_t x_off, const void *hb, int64_t hdt, int64_t h_off, int64_t y_off,
                      int64_t st_off) {
    void *Y = c->out[0], *C = c->out[2];
    const void *P = c->p->has_p ? c->in[7] : NULL;
    for (int64_t i = 0; i < c->h; i++) {
        double c_prev = rnn_load(c->dt, C, st_off + i);
        double pi = 0, po = 0, pf = 0;
        if (P) {
            pi = rnn_load(c->dt, P, c->pp + i);
            po = rnn_load(c->dt, P, c->pp + c->h + i);
            pf = rnn_load(c->dt, P, c->pp + 2 * c->h + i);
        }
        double ig = act(c, 0, gate_input(c, 0, i, x_off) + gate_recur(c, 0, i, hb, hdt, h_off) + pi * c_prev);
        double fg = c->p->input_forget
                        ? 1.0 - ig
                        : act(c, 0, gate_input(c, 2, i, x_off) + gate_recur(c, 2, i, hb, hdt, h_off) + pf * c_prev);
        double cand = act(c, 1, gate_input(c, 3, i, x_off) + gate_recur(c, 3, i, hb, hdt, h_off));
        double c_new = fg * c_prev + ig * cand;
        double og = act(c, 0, gate_input(c, 1, i, x_off) + gate_recur(c, 1, i, hb, hdt, h_off) + po * c_new);
        rnn_store(c->dt, C, st_off + i, c_new);
        rnn_store(c->ydt, Y, y_off + i, og * act(c, 2, c_new));
    }
}

typedef void (*step_fn)(const Cell *, int64_t, const void *, int64_t, int64_t, int64_t, int64_t);

int rk_rnn(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_rnn_params *p = params;
    (void)ctx;
    if (p->cell < 0 || p->cell > 2 || !rk_dtype_is_float(p->dtype) || !rk_dtype_is_float(p->x_dtype) ||
        !rk_dtype_is_float(p->y_dtype))
        return RLX_E_ARG;
    if (p->seq < 0 || p->batch < 0 || p->input < 0 || p->hidden < 0 || p->direction < 0 || p->direction > 2)
        return RLX_E_ARG;
    if (p->has_seq_lens && p->seq_lens_dtype != RLX_I32 && p->seq_lens_dtype != RLX_I64) return RLX_E_ARG;
    int nacts = (int)p->cell + 1;   /* f; f g; f g h */
    int64_t dirs = p->direction == 2 ? 2 : 1, seq = p->seq, batch = p->batch, hid = p->hidden;
    int64_t gates = p->cell == 0 ? 1 : p->cell == 1 ? 3 : 4;
    const double alphas[6] = {p->alpha0, p->alpha1, p->alpha2, p->alpha3, p->alpha4, p->alpha5};
    const double betas[6] = {p->beta0, p->beta1, p->beta2, p->beta3, p->beta4, p->beta5};
    for (int k = 0; k < nacts * dirs; k++)
        if (p->acts[k] < 0 || p->acts[k] >= RK_NACTS) return RLX_E_ARG;
    step_fn step = p->cell == 0 ? rnn_step : p->cell == 1 ? gru_step : lstm_step;
    const void *h0 = p->has_h0 ? in[5] : NULL, *c0 = p->cell == 2 && p->has_c0 ? in[6] : NULL;
    int64_t dt = p->dtype;
    for (int64_t d = 0; d < dirs; d++) {
        Cell c = {p, in, out, dt, p->input, hid, gates, d, p->x_dtype, p->y_dtype, d * gates * hid * p->input,
                  d * gates * hid * hid, d * 2 * gates * hid, d * 3 * hid, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
        for (int k = 0; k < nacts; k++) {
            c.acts[k] = p->acts[d * nacts + k];
            c.alpha[k] = alphas[d * nacts + k];
            c.beta[k] = betas[d * nacts + k];
        }
        int reverse = p->direction == 1 || d == 1;
        for (int64_t b = 0; b < batch; b++) {
            int64_t len = seq;
            if (p->has_seq_lens) {
                len = rk_load_i64(p->seq_lens_dtype, in[4], b);
                if (len < 0 || len > seq) return RLX_E_RANGE;
            }
            /* offsets of this pair's rows */
            int64_t st = (p->layout ? b * dirs + d : d * batch + b) * hid;
#define X_ROW(t) ((p->layout ? b * seq + (t) : (t) * batch + b) * p->input)
#define Y_ROW(t) ((p->layout ? ((b * seq + (t)) * dirs + d) : (((t) * dirs + d) * batch + b)) * hid)
            for (int64_t t = len; t < seq; t++)
                for (int64_t i = 0; i < hid; i++) rnn_store(p->y_dtype, out[0], Y_ROW(t) + i, 0.0);
            if (p->cell == 2)
                for (int64_t i = 0; i < hid; i++) rnn_store(dt, out[2], st + i, load_or_zero(dt, c0, st + i));
            const void *hb = h0;
            int64_t h_off = st, hdt = dt;
            for (int64_t k = 0; k < len; k++) {
                int64_t t = reverse ? len - 1 - k : k;
                step(&c, X_ROW(t), hb, hdt, h_off, Y_ROW(t), st);
                hb = out[0];
                hdt = p->y_dtype;
                h_off = Y_ROW(t);
            }
            /* the final state: Y's last valid row; zeros for an empty
             * sequence (as onnxruntime: Y_h and Y_c like the rows of Y) */
            if (len == 0) hb = NULL;
            for (int64_t i = 0; i < hid; i++) {
                rnn_store(dt, out[1], st + i, load_or_zero(hdt, hb, h_off + i));
                if (len == 0 && p->cell == 2) rnn_store(dt, out[2], st + i, 0.0);
            }
#undef X_ROW
#undef Y_ROW
        }
    }
    return RLX_OK;
}

/* ---- the f32 recurrent kernel ----
 *
 * rk_rnn_f32 computes what rk_rnn does, in f32, where rlxc's C target has
 * packed W and R for the GEMM (lib/codegen_c/prepare_c.c): every tensor
 * f32, no sequence_lens, activations Sigmoid, Tanh or Relu. Per direction:
 *   - the input projections of a block of steps, X_t W^T for every t and
 *     batch at once (rows of X are contiguous in both layouts), plus the
 *     biases that do not depend on the state (Wb + Rb; GRU's h gate keeps
 *     its Rb apart, since the reset gate scales or follows it);
 *   - per step, the recurrent product h_{t-1} R^T for the whole batch (one
 *     product; GRU two: z and r, then the h gate, whose input is r * h_{t-1}
 *     unless linear_before_reset), by the GEMM's few-rows entry, which is
 *     compiled per instruction set and already in any model with a small
 *     Gemm;
 *   - the gates' arithmetic in plain loops and their activations over runs of
 *     floats in vectors (rk_rnn_act_f32, rk_rnn_f32.c).
 * The state h (and LSTM's c) lives in scratch, contiguous per batch, and
 * each step's h is also written to its row of Y. With threads, the products
 * that pay for them (rk_sgemm_threads_pay) are split: a block's projections
 * by rows, a step's recurrent product, of a few rows, by columns where the
 * packed layout allows (rk_sgemm_packed_b_cols: K up to 256); the gates stay
 * on the calling thread, except in the default LSTM and a GRU with
 * linear_before_reset, whose steps run per run of hidden units, product and
 * gates on each thread (rf_par_step). Every element is computed the same
 * way whichever thread takes it, so outputs do not depend on the thread
 * count. */

#include "rk_gemm.h"
#include "rlx_scalar.h"

/* The input projections one block of steps holds: about 1 MB. */
#define RNN_GX_FLOATS ((int64_t)1 << 18)

static int64_t rf_gates(int64_t cell) { return cell == 0 ? 1 : cell == 1 ? 3 : 4; }

static int64_t rf_block(int64_t seq, int64_t batch, int64_t g) {
    int64_t per = batch * g > 0 ? batch * g : 1, tb = RNN_GX_FLOATS / per;
    if (tb > seq) tb = seq;
    return tb < 1 ? 1 : tb;
}

/* A product split by columns runs units of at most RF_COLS columns, each
 * into its thread's RF_TMP floats first (the GEMM's few-rows entry writes
 * rows n floats apart), then copied into place. */
#define RF_COLS 256
#define RF_TMP (RK_SGEMM_FEW_ROWS * RF_COLS)

/* Whether any product of the node could be split over threads: then every
 * thread's share of the scratch holds an RF_TMP (threads_pay grows with
 * each of m, n and k, so its largest product decides). */
static int rf_may_split(int64_t seq, int64_t batch, int64_t input, int64_t hidden, int64_t g) {
    return rk_sgemm_threads_pay(seq * batch > batch ? seq * batch : batch, g, input > hidden ? input : hidden);
}

int rk_rnn_f32_may_split(int64_t cell, int64_t seq, int64_t batch, int64_t input, int64_t hidden) {
    return rf_may_split(seq, batch, input, hidden, rf_gates(cell) * hidden);
}

size_t rk_rnn_f32_scratch(int64_t cell, int64_t seq, int64_t batch, int64_t input, int64_t hidden) {
    int64_t g = rf_gates(cell) * hidden, tb = rf_block(seq, batch, g);
    int64_t tmp = rf_may_split(seq, batch, input, hidden, g) ? RF_TMP + 16 : 0;
    /* projections (tb x batch x g), recurrent products (batch x g), h, c and
     * a temporary (batch x hidden each), biases (g + hidden), the split
     * products' temporary; 64 to align */
    return (size_t)(tb * batch * g + batch * g + 3 * batch * hidden + g + hidden + tmp) * sizeof(float) + 64;
}

/* c (rows x n) = a (rows x k, contiguous) times the packed b, by the GEMM's
 * few-rows entry: for any number of rows it reads each panel of b once
 * and runs every block of 4 rows over it while it is in L1 (in calls of 8
 * rows, a block of steps' projections read W 16 times). */
static RNN_SMALL int rf_rows(const float *a, int64_t rows, int64_t k, const float *pb, int64_t n, float *c) {
    rk_gemm_f32_params gp;
    memset(&gp, 0, sizeof gp);
    gp.m = rows;
    gp.n = n;
    gp.k = k;
    gp.alpha = 1.0;
    gp.b_packed = 1;
    const void *in[2] = {a, pb};
    void *out[1] = {c};
    return rk_gemm_f32_rows(NULL, &gp, in, out);
}

/* One product's units: row groups of rows_per rows, each cut into
 * col_units runs of ncols columns (one run of all n when not split). */
typedef struct {
    const rk_ctx *ctx;
    const float *a, *pb;
    float *c, *tmp0;            /* tmp0: thread 0's RF_TMP */
    int64_t m, k, n, rows_per, ncols, col_units;
    rk_queue *q;
    int64_t ntasks;
    int st[RK_QUEUE_MAX];
} RfProd;

static RNN_SMALL int rf_unit(const RfProd *P, int64_t u, int tid) {
    int64_t r0 = u / P->col_units * P->rows_per, j0 = u % P->col_units * P->ncols;
    int64_t rows = P->m - r0 < P->rows_per ? P->m - r0 : P->rows_per;
    const float *a = P->a + r0 * P->k;
    if (P->col_units == 1) return rf_rows(a, rows, P->k, P->pb, P->n, P->c + r0 * P->n);
    int64_t j1 = j0 + P->ncols < P->n ? j0 + P->ncols : P->n, off = rk_sgemm_packed_b_cols(P->n, P->k, j0, j1);
    float *tmp = tid ? rk_align64f(P->ctx->scratch + (size_t)tid * P->ctx->scratch_per_thread) : P->tmp0;
    if (off < 0) return RLX_E_ARG;   /* rf_product checked the layout */
    int st = rf_rows(a, rows, P->k, P->pb + off, j1 - j0, tmp);
    for (int64_t i = 0; i < rows && !st; i++)
        memcpy(P->c + (r0 + i) * P->n + j0, tmp + i * (j1 - j0), sizeof(float) * (size_t)(j1 - j0));
    return st;
}

static RNN_SMALL void rf_task(void *arg, int tid) {
    RfProd *P = arg;
    int64_t units = (P->m + P->rows_per - 1) / P->rows_per * P->col_units;
    for (int64_t cursor = 0, u; rk_next_task(P->q, (int)P->ntasks, tid, units, &cursor, &u);) {
        int st = rf_unit(P, u, tid);
        if (st) P->st[tid] = st;
    }
}

/* c (m x n) = a (m x k, contiguous rows) times the packed b: on the calling
 * thread in one call, or split over the context's threads where the product
 * pays for them: by rows (about two runs of 4k rows per thread) when it has
 * more than RK_SGEMM_FEW_ROWS, else by columns if the layout allows.
 * tmp0: RF_TMP floats when a split may be. */
static RNN_SMALL int rf_product(const rk_ctx *ctx, float *tmp0, const float *a, int64_t m, int64_t k, const float *pb,
                      int64_t n, float *c) {
    int64_t nt = tmp0 && ctx->pool && ctx->nthreads > 1 && rk_sgemm_threads_pay(m, n, k) ? ctx->nthreads : 1;
    RfProd P = {ctx, a, pb, c, tmp0, m, k, n, m > 0 ? m : 1, n, 1, NULL, 1, {0}};
    if (nt > 1 && m > RK_SGEMM_FEW_ROWS) {
        int64_t per = (m + 2 * nt - 1) / (2 * nt);
        P.rows_per = (per + 3) / 4 * 4;
    } else if (nt > 1) {
        /* units of at least 64 columns, about two per thread */
        int64_t w = (n + 2 * nt - 1) / (2 * nt);
        w = (w + RK_SGEMM_COL_STEP - 1) / RK_SGEMM_COL_STEP * RK_SGEMM_COL_STEP;
        w = w < 64 ? 64 : w > RF_COLS ? RF_COLS : w;
        if (w < n && rk_sgemm_packed_b_cols(n, k, 0, w) >= 0) {
            P.ncols = w;
            P.col_units = (n + w - 1) / w;
        }
    }
    int64_t units = (m + P.rows_per - 1) / P.rows_per * P.col_units;
    rk_queue q;
    P.ntasks = rk_queue_init(&q, nt < units ? nt : units);
    P.q = &q;
    if (P.ntasks > 1) {
        rk_pool_share(ctx->pool, (int)P.ntasks, rf_task, &P);
        for (int64_t t = 0; t < P.ntasks; t++)
            if (P.st[t]) return P.st[t];
        return RLX_OK;
    }
    for (int64_t u = 0; u < units; u++) {
        int st = rf_unit(&P, u, 0);
        if (st) return st;
    }
    return RLX_OK;
}

/* The same product on the calling thread only, in one call: what the cell
 * entries use, so that a small model links no splitting code. */
static int rf_product_one(const rk_ctx *ctx, float *tmp0, const float *a, int64_t m, int64_t k, const float *pb,
                          int64_t n, float *c) {
    (void)ctx, (void)tmp0;
    return rf_rows(a, m, k, pb, n, c);
}

typedef int (*rf_product_fn)(const rk_ctx *, float *, const float *, int64_t, int64_t, const float *, int64_t,
                             float *);

/* y[0, n) += x[0, n): one copy of the loop for every gate's sums, eight
 * at a time so that compilers vectorize it at -O2 too (as straight-line
 * code), however wide the vectors the flags allow. */
static RNN_NOINLINE void rf_add(float *restrict y, const float *restrict x, int64_t n) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        float *yj = y + j;
        const float *xj = x + j;
        yj[0] += xj[0], yj[1] += xj[1], yj[2] += xj[2], yj[3] += xj[3];
        yj[4] += xj[4], yj[5] += xj[5], yj[6] += xj[6], yj[7] += xj[7];
    }
    for (; j < n; j++) y[j] += x[j];
}

static RNN_NOINLINE void rf_clip(float *x, int64_t n, int on, float c) {
    if (on)
        for (int64_t j = 0; j < n; j++) x[j] = x[j] < -c ? -c : x[j] > c ? c : x[j];
}

/* One direction's view: the buffers and where step t's rows are. */
typedef struct {
    const rk_rnn_f32_params *p;
    const rk_ctx *ctx;
    rf_product_fn prod;               /* rf_product or rf_product_one */
    float *ptmp;                      /* thread 0's RF_TMP (NULL: never split) */
    int64_t d, dirs, g, h, batch, t0, nt;
    int64_t af, ag, ah;               /* activations f, g, h */
    const float *R, *P;               /* this direction's packed R; peepholes (LSTM) */
    float *gx, *gh, *hs, *cs, *tmp, *rbh, *Y;
    int have_h;                       /* hs holds a state (else zeros: no product) */
} Rf;

static const float *rf_gx(const Rf *f, int64_t t, int64_t b) {
    return f->gx + (f->p->layout ? b * f->nt + (t - f->t0) : (t - f->t0) * f->batch + b) * f->g;
}

static float *rf_y(const Rf *f, int64_t t, int64_t b) {
    const rk_rnn_f32_params *p = f->p;
    return f->Y + (p->layout ? (b * p->seq + t) * f->dirs + f->d : (t * f->dirs + f->d) * f->batch + b) * f->h;
}

/* pre (batch x n) = hs R_part^T, or zeros before any state. */
static int rf_recur(const Rf *f, const float *hin, const float *rpart, int64_t n, float *pre) {
    if (f->have_h) return f->prod(f->ctx, f->ptmp, hin, f->batch, f->h, rpart, n, pre);
    memset(pre, 0, sizeof(float) * (size_t)(f->batch * n));
    return RLX_OK;
}

static int rf_rnn_step(Rf *f, int64_t t) {
    int64_t h = f->h;
    int st = rf_recur(f, f->hs, f->R, h, f->gh);
    if (st) return st;
    for (int64_t b = 0; b < f->batch; b++) {
        float *pre = f->gh + b * h, *hb = f->hs + b * h, *y = rf_y(f, t, b);
        const float *x = rf_gx(f, t, b);
        rf_add(pre, x, h);
        rf_clip(pre, h, (int)f->p->has_clip, (float)f->p->clip);
        rk_rnn_act_f32(pre, h, f->af);
        memcpy(hb, pre, sizeof(float) * (size_t)h);
        memcpy(y, pre, sizeof(float) * (size_t)h);
    }
    return RLX_OK;
}

/* GRU gates z, r, h: the products of z and r first (R's rows up to
 * r_split), then the h gate's. */
/* Batch row b of a GRU step, units [u0, u0 + n): z and r, from the row's
 * products zr (2h: z's, then r's) plus the projections, clipped and
 * activated in place. */
static void rf_gru_zr(const Rf *f, int64_t t, int64_t b, float *zr, int64_t u0, int64_t n) {
    const rk_rnn_f32_params *p = f->p;
    const float *x = rf_gx(f, t, b);
    for (int64_t g = 0; g < 2; g++) {
        float *v = zr + g * f->h + u0;
        rf_add(v, x + g * f->h + u0, n);
        rf_clip(v, n, (int)p->has_clip, (float)p->clip);
        rk_rnn_act_f32(v, n, f->af);
    }
}

/* Then the same units' candidate, from the row's h-gate product c, and the
 * new state from h_{t-1} (hp) into hb and y; hb may be hp. */
static void rf_gru_out(const Rf *f, int64_t t, int64_t b, const float *zr, float *c, const float *hp, float *hb,
                       int64_t u0, int64_t n) {
    const rk_rnn_f32_params *p = f->p;
    const float *z = zr + u0, *r = zr + f->h + u0, *x = rf_gx(f, t, b) + 2 * f->h + u0, *rb = f->rbh + u0;
    float *y = rf_y(f, t, b) + u0;
    c += u0, hp += u0, hb += u0;
    if (p->linear_before_reset)
        for (int64_t i = 0; i < n; i++) c[i] = x[i] + r[i] * (c[i] + rb[i]);
    else
        for (int64_t i = 0; i < n; i++) c[i] = x[i] + (c[i] + rb[i]);
    rf_clip(c, n, (int)p->has_clip, (float)p->clip);
    rk_rnn_act_f32(c, n, f->ag);
    for (int64_t i = 0; i < n; i++) {
        hb[i] = (1.0f - z[i]) * c[i] + z[i] * hp[i];
        y[i] = hb[i];
    }
}

static int rf_gru_step(Rf *f, int64_t t) {
    const rk_rnn_f32_params *p = f->p;
    int64_t h = f->h, batch = f->batch;
    float *zr = f->gh, *cand = f->gh + batch * 2 * h;
    int st = rf_recur(f, f->hs, f->R, 2 * h, zr);
    if (st) return st;
    for (int64_t b = 0; b < batch; b++) rf_gru_zr(f, t, b, zr + b * 2 * h, 0, h);
    const float *rh = f->R + p->r_split;
    if (!p->linear_before_reset) {
        for (int64_t b = 0; b < batch; b++)
            for (int64_t i = 0; i < h; i++) f->tmp[b * h + i] = zr[b * 2 * h + h + i] * f->hs[b * h + i];
        st = rf_recur(f, f->tmp, rh, h, cand);
    } else {
        st = rf_recur(f, f->hs, rh, h, cand);
    }
    if (st) return st;
    for (int64_t b = 0; b < batch; b++)
        rf_gru_out(f, t, b, zr + b * 2 * h, cand + b * h, f->hs + b * h, f->hs + b * h, 0, h);
    return RLX_OK;
}

/* ---- steps per run of hidden units ----
 * With threads, a step whose recurrent products all read h_{t-1} (the
 * default LSTM; a GRU with linear_before_reset, as PyTorch exports it) and
 * pay for threads runs as one task per run of hidden units: each thread
 * computes its units' columns of every gate (column ranges of the packed R,
 * each with the whole product's bits there) and then those units' gates,
 * with the same operations per element as the step on one thread. The
 * gates then neither wait on the calling thread nor cross to it. The new
 * state goes to the other of two buffers (hs and tmp, swapped after the
 * step): a thread done with its gates must not overwrite h_{t-1} while
 * another's product still reads it. */
typedef struct {
    Rf *f;
    int64_t t, units;
    const float *hin;
    float *hout;
    rk_queue *q;
    int64_t ntasks;
    int st[RK_QUEUE_MAX];
} RfPar;

/* Columns [j0, j0 + n) of hin R_part^T (R_part packed with n_all columns)
 * into pre (rows ld floats apart) at j0, through the thread's tmp. */
static int rf_par_cols(const Rf *f, const float *hin, const float *rpart, int64_t n_all, int64_t j0, int64_t n,
                       float *tmp, float *pre, int64_t ld) {
    int64_t off = rk_sgemm_packed_b_cols(n_all, f->h, j0, j0 + n);
    int st = off < 0 ? RLX_E_ARG : rf_rows(hin, f->batch, f->h, rpart + off, n, tmp);
    for (int64_t b = 0; b < f->batch && !st; b++) memcpy(pre + b * ld + j0, tmp + b * n, sizeof(float) * (size_t)n);
    return st;
}

static float *rf_par_tmp(const Rf *f, int tid) {
    return tid ? rk_align64f(f->ctx->scratch + (size_t)tid * f->ctx->scratch_per_thread) : f->ptmp;
}

/* Hidden units per run: about two runs per thread, whole 16-column panels. */
static int64_t rf_par_units(const Rf *f) {
    int64_t nt = f->ctx->nthreads > 1 ? f->ctx->nthreads : 1, u = (f->h + 2 * nt - 1) / (2 * nt);
    return (u + RK_SGEMM_COL_STEP - 1) / RK_SGEMM_COL_STEP * RK_SGEMM_COL_STEP;
}

/* Whether a step runs per run of units: a state to multiply, threads, a
 * product (g gate columns) that pays for them, R's packed columns cut where
 * runs begin (K = hidden up to 256, whole panels) and a run's rows within a
 * thread's RF_TMP. */
static int rf_par_ok(const Rf *f, int64_t g) {
    const rk_ctx *ctx = f->ctx;
    int64_t h = f->h, units = rf_par_units(f);
    return f->have_h && f->ptmp && ctx->pool && ctx->nthreads > 1 && rk_sgemm_threads_pay(f->batch, g, h) &&
           h >= 32 && h % RK_SGEMM_COL_STEP == 0 && f->batch * units <= RF_TMP &&
           rk_sgemm_packed_b_cols(g, h, 0, units) >= 0;
}

static int rf_par_step(Rf *f, int64_t t, void (*task)(void *, int)) {
    rk_queue q;
    int64_t units = rf_par_units(f), runs = (f->h + units - 1) / units, nt = f->ctx->nthreads;
    RfPar L = {f, t, units, f->hs, f->tmp, &q, 0, {0}};
    L.ntasks = rk_queue_init(&q, nt < runs ? nt : runs);
    rk_pool_share(f->ctx->pool, (int)L.ntasks, task, &L);
    for (int64_t i = 0; i < L.ntasks; i++)
        if (L.st[i]) return L.st[i];
    float *old = f->hs;
    f->hs = f->tmp, f->tmp = old;
    return RLX_OK;
}

static void rf_gru_par_task(void *arg, int tid) {
    RfPar *L = arg;
    Rf *f = L->f;
    int64_t h = f->h, runs = (h + L->units - 1) / L->units;
    float *tmp = rf_par_tmp(f, tid), *zr = f->gh, *cand = f->gh + f->batch * 2 * h;
    for (int64_t cursor = 0, r = -1, r1 = 0;
         rk_next_item(L->q, (int)L->ntasks, tid, RK_RUNS, runs, &cursor, &r, &r1);) {
        int64_t u0 = r * L->units, n = h - u0 < L->units ? h - u0 : L->units;
        int st = rf_par_cols(f, L->hin, f->R, 2 * h, u0, n, tmp, zr, 2 * h);
        if (!st) st = rf_par_cols(f, L->hin, f->R, 2 * h, h + u0, n, tmp, zr, 2 * h);
        if (!st) st = rf_par_cols(f, L->hin, f->R + f->p->r_split, h, u0, n, tmp, cand, h);
        if (st) {
            L->st[tid] = st;
            return;
        }
        for (int64_t b = 0; b < f->batch; b++) {
            rf_gru_zr(f, L->t, b, zr + b * 2 * h, u0, n);
            rf_gru_out(f, L->t, b, zr + b * 2 * h, cand + b * h, L->hin + b * h, L->hout + b * h, u0, n);
        }
    }
}

/* LSTM gates i, o, f, c (ONNX order), peepholes i, o, f. */
static int rf_lstm_step(Rf *f, int64_t t) {
    const rk_rnn_f32_params *p = f->p;
    int64_t h = f->h;
    int clip = (int)p->has_clip;
    float cl = (float)p->clip;
    int st = rf_recur(f, f->hs, f->R, 4 * h, f->gh);
    if (st) return st;
    for (int64_t b = 0; b < f->batch; b++) {
        float *pre = f->gh + b * 4 * h, *gi = pre, *go = pre + h, *gf = pre + 2 * h, *gc = pre + 3 * h;
        float *c = f->cs + b * h, *hb = f->hs + b * h, *y = rf_y(f, t, b), *tmp = f->tmp;
        const float *x = rf_gx(f, t, b), *P = f->P;
        rf_add(pre, x, 4 * h);
        if (P)
            for (int64_t i = 0; i < h; i++) {
                gi[i] += P[i] * c[i];
                gf[i] += P[2 * h + i] * c[i];
            }
        rf_clip(gi, h, clip, cl);
        rf_clip(gf, 2 * h, clip, cl);   /* f and c */
        rk_rnn_act_f32(gi, h, f->af);
        if (p->input_forget)
            for (int64_t i = 0; i < h; i++) gf[i] = 1.0f - gi[i];
        else
            rk_rnn_act_f32(gf, h, f->af);
        rk_rnn_act_f32(gc, h, f->ag);
        for (int64_t i = 0; i < h; i++) c[i] = gf[i] * c[i] + gi[i] * gc[i];
        if (P)
            for (int64_t i = 0; i < h; i++) go[i] += P[h + i] * c[i];
        rf_clip(go, h, clip, cl);
        rk_rnn_act_f32(go, h, f->af);
        memcpy(tmp, c, sizeof(float) * (size_t)h);
        rf_clip(tmp, h, clip, cl);
        rk_rnn_act_f32(tmp, h, f->ah);
        for (int64_t i = 0; i < h; i++) {
            hb[i] = go[i] * tmp[i];
            y[i] = hb[i];
        }
    }
    return RLX_OK;
}

/* rf_gru_step, per run of hidden units where that applies (the general
 * entry's GRU step); where rf_par_ok cuts z's and r's 2h columns of R, it
 * cuts the h gate's h too (runs of at most h units, the same K). */
static int rf_gru_step_par(Rf *f, int64_t t) {
    if (f->p->linear_before_reset && rf_par_ok(f, 2 * f->h)) return rf_par_step(f, t, rf_gru_par_task);
    return rf_gru_step(f, t);
}

/* The default LSTM step per run of hidden units (RfPar above): its four
 * gates' columns of R for the run, then the run's gates. */
static void rf_lstm_par_task(void *arg, int tid) {
    RfPar *L = arg;
    Rf *f = L->f;
    int64_t h = f->h, batch = f->batch, runs = (h + L->units - 1) / L->units;
    float *tmp = rf_par_tmp(f, tid);
    for (int64_t cursor = 0, r = -1, r1 = 0;
         rk_next_item(L->q, (int)L->ntasks, tid, RK_RUNS, runs, &cursor, &r, &r1);) {
        int64_t u0 = r * L->units, n = h - u0 < L->units ? h - u0 : L->units;
        for (int64_t gate = 0; gate < 4; gate++) {
            int st = rf_par_cols(f, L->hin, f->R, 4 * h, gate * h + u0, n, tmp, f->gh, 4 * h);
            if (st) {
                L->st[tid] = st;
                return;
            }
        }
        for (int64_t b = 0; b < batch; b++)
            rk_rnn_lstm_gates_f32(f->gh + b * 4 * h + u0, rf_gx(f, L->t, b) + u0, f->cs + b * h + u0,
                                  L->hout + b * h + u0, rf_y(f, L->t, b) + u0, h, n);
    }
}

/* rf_lstm_step with the gates in one pass (rk_rnn_lstm_gates_f32, the same
 * bits), per run of hidden units where rf_par_ok, where the node has the
 * default activations and no peepholes, clip or coupled gates. Only the
 * general entry runs it, so the cells' entries (small models) link neither
 * it nor the vector code it calls. */
static int rf_lstm_step_fused(Rf *f, int64_t t) {
    const rk_rnn_f32_params *p = f->p;
    if (f->P || p->has_clip || p->input_forget || f->af != RS_ACT_SIGMOID || f->ag != RS_ACT_TANH ||
        f->ah != RS_ACT_TANH)
        return rf_lstm_step(f, t);
    int64_t h = f->h;
    if (rf_par_ok(f, 4 * h)) return rf_par_step(f, t, rf_lstm_par_task);
    int st = rf_recur(f, f->hs, f->R, 4 * h, f->gh);
    if (st) return st;
    for (int64_t b = 0; b < f->batch; b++)
        rk_rnn_lstm_gates_f32(f->gh + b * 4 * h, rf_gx(f, t, b), f->cs + b * h, f->hs + b * h, rf_y(f, t, b), h, h);
    return RLX_OK;
}

typedef int (*rf_step_fn)(Rf *, int64_t);

/* RNN_SMALL: compiled for size, as its own loops run once per call (the
 * steps and products it calls are where the time goes); so are the
 * products' set-up and split above, once per product. */
static RNN_SMALL int rf_run(rk_ctx *ctx, const void *params, const void *const *in, void *const *out, rf_step_fn step,
                            rf_product_fn prod) {
    const rk_rnn_f32_params *p = params;
    if (p->cell < 0 || p->cell > 2 || p->seq < 0 || p->batch < 0 || p->input < 0 || p->hidden < 0 ||
        p->direction < 0 || p->direction > 2 || p->w_step < 0 || p->r_step < 0 || p->r_split < 0)
        return RLX_E_ARG;
    int64_t cell = p->cell, seq = p->seq, batch = p->batch, hid = p->hidden, nin = p->input;
    int64_t dirs = p->direction == 2 ? 2 : 1, nacts = cell + 1, g = rf_gates(cell) * hid;
    for (int64_t k = 0; k < nacts * dirs; k++)
        if (p->acts[k] != RS_ACT_SIGMOID && p->acts[k] != RS_ACT_TANH && p->acts[k] != RS_ACT_RELU) return RLX_E_ARG;
    if (!ctx || !ctx->scratch || ctx->scratch_per_thread < rk_rnn_f32_scratch(cell, seq, batch, nin, hid))
        return RLX_E_ARG;   /* the plan reserves it */
    int64_t tb = rf_block(seq, batch, g);
    float *gx = rk_align64f(ctx->scratch), *gh = gx + tb * batch * g, *hs = gh + batch * g, *cs = hs + batch * hid;
    float *tmp = cs + batch * hid, *bx = tmp + batch * hid, *rbh = bx + g;
    float *ptmp = rf_may_split(seq, batch, nin, hid, g) ? rk_align64f(rbh + hid) : NULL;
    const float *X = in[0], *B = p->has_b ? in[3] : NULL, *H0 = p->has_h0 ? in[5] : NULL;
    const float *C0 = cell == 2 && p->has_c0 ? in[6] : NULL;
    for (int64_t d = 0; d < dirs; d++) {
        Rf f = {p, ctx, prod, ptmp, d, dirs, g, hid, batch, 0, 0, p->acts[d * nacts], nacts > 1 ? p->acts[d * nacts + 1] : 0,
                nacts > 2 ? p->acts[d * nacts + 2] : 0, (const float *)in[2] + d * p->r_step,
                cell == 2 && p->has_p ? (const float *)in[7] + d * 3 * hid : NULL, gx, gh, hs, cs, tmp, rbh,
                out[0], H0 != NULL};
        const float *Wd = (const float *)in[1] + d * p->w_step, *Bd = B ? B + d * 2 * g : NULL;
        for (int64_t j = 0; j < g; j++) bx[j] = Bd ? Bd[j] + (cell == 1 && j >= 2 * hid ? 0.0f : Bd[g + j]) : 0.0f;
        for (int64_t j = 0; j < hid; j++) rbh[j] = cell == 1 && Bd ? Bd[g + 2 * hid + j] : 0.0f;
        for (int64_t b = 0; b < batch; b++) {
            int64_t st = (p->layout ? b * dirs + d : d * batch + b) * hid;
            for (int64_t i = 0; i < hid; i++) {
                hs[b * hid + i] = H0 ? H0[st + i] : 0.0f;
                cs[b * hid + i] = C0 ? C0[st + i] : 0.0f;
            }
        }
        int reverse = p->direction == 1 || d == 1;
        for (int64_t k0 = 0; k0 < seq; k0 += tb) {
            f.nt = seq - k0 < tb ? seq - k0 : tb;
            f.t0 = reverse ? seq - k0 - f.nt : k0;
            int st = RLX_OK;
            if (p->layout)
                for (int64_t b = 0; b < batch && !st; b++)
                    st = prod(ctx, ptmp, X + (b * seq + f.t0) * nin, f.nt, nin, Wd, g, gx + b * f.nt * g);
            else
                st = prod(ctx, ptmp, X + f.t0 * batch * nin, f.nt * batch, nin, Wd, g, gx);
            if (st) return st;
            for (int64_t r = 0; r < f.nt * batch; r++) rf_add(gx + r * g, bx, g);
            for (int64_t k = 0; k < f.nt; k++) {
                st = step(&f, reverse ? f.t0 + f.nt - 1 - k : f.t0 + k);
                if (st) return st;
                f.have_h = 1;
            }
        }
        /* the final state (zeros for an empty sequence, as rk_rnn) */
        for (int64_t b = 0; b < batch; b++) {
            int64_t st = (p->layout ? b * dirs + d : d * batch + b) * hid;
            for (int64_t i = 0; i < hid; i++) {
                ((float *)out[1])[st + i] = seq ? f.hs[b * hid + i] : 0.0f;
                if (cell == 2) ((float *)out[2])[st + i] = seq ? cs[b * hid + i] : 0.0f;
            }
        }
    }
    return RLX_OK;
}

int rk_rnn_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    int64_t cell = ((const rk_rnn_f32_params *)params)->cell;
    return rf_run(ctx, params, in, out, cell == 0 ? rf_rnn_step : cell == 1 ? rf_gru_step_par : rf_lstm_step_fused,
                  rf_product);
}

/* One cell's entries (rk_kernels.def KI), on the calling thread: a model
 * whose products never pay for threads (rk_rnn_f32_may_split) links only its
 * cells' steps, and nothing of the split. */
int rk_rnn_f32_rnn(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    if (((const rk_rnn_f32_params *)params)->cell != 0) return RLX_E_ARG;
    return rf_run(ctx, params, in, out, rf_rnn_step, rf_product_one);
}

int rk_rnn_f32_gru(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    if (((const rk_rnn_f32_params *)params)->cell != 1) return RLX_E_ARG;
    return rf_run(ctx, params, in, out, rf_gru_step, rf_product_one);
}

int rk_rnn_f32_lstm(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    if (((const rk_rnn_f32_params *)params)->cell != 2) return RLX_E_ARG;
    return rf_run(ctx, params, in, out, rf_lstm_step, rf_product_one);
}

/* ---- Einsum ---- */

int rk_einsum(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_einsum_params *p = params;
    (void)ctx;
    if (p->nops < 1 || p->nops > 5 || p->nlabels < 0 || p->nlabels > RK_MAX_RANK || p->nout_labels < 0 ||
        p->nout_labels > p->nlabels || rlx_dtype_size((int)p->dtype) == 0)
        return RLX_E_ARG;
    const int64_t *strides[5] = {p->s0, p->s1, p->s2, p->s3, p->s4};
    int64_t nl = p->nlabels, no = p->nout_labels, dt = p->dtype;
    int is_float = rk_dtype_is_float(dt);
    for (int64_t l = 0; l < nl; l++)
        if (p->dims[l] < 0) return RLX_E_ARG;
    for (int64_t l = 0; l < nl; l++)
        if (p->dims[l] == 0) {
            /* no combinations: outputs are empty, or all sums are empty (0) */
            if (l < no) return RLX_OK;
            int64_t n = 1;
            for (int64_t k = 0; k < no; k++) n *= p->dims[k];
            for (int64_t o = 0; o < n; o++) {
                if (is_float) rnn_store(dt, out[0], o, 0.0);
                else rk_store_i64(dt, out[0], o, 0);
            }
            return RLX_OK;
        }
    int64_t idx[RK_MAX_RANK] = {0};
    for (;;) {
        int64_t o = 0;
        for (int64_t l = 0; l < no; l++) o += idx[l] * p->ostride[l];
        double fsum = 0.0;
        uint64_t isum = 0;
        for (int64_t l = no; l < nl; l++) idx[l] = 0;
        for (;;) {
            double fprod = 1.0;
            uint64_t iprod = 1;
            for (int64_t k = 0; k < p->nops; k++) {
                int64_t off = 0;
                for (int64_t l = 0; l < nl; l++) off += idx[l] * strides[k][l];
                if (is_float) fprod *= rnn_load(dt, in[k], off);
                else iprod *= (uint64_t)rk_load_i64(dt, in[k], off);
            }
            fsum += fprod;
            isum += iprod;
            int64_t l = nl - 1;
            for (; l >= no; l--) {
                if (++idx[l] < p->dims[l]) break;
                idx[l] = 0;
            }
            if (l < no) break;
        }
        if (is_float) rnn_store(dt, out[0], o, fsum);
        else rk_store_i64(dt, out[0], o, (int64_t)isum);
        int64_t l = no - 1;
        for (; l >= 0; l--) {
            if (++idx[l] < p->dims[l]) break;
            idx[l] = 0;
        }
        if (l < 0) break;
    }
    return RLX_OK;
}
