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
#else
#define RNN_NOINLINE
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
