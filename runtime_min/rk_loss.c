/* rk_loss.c - the loss kernels: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (ONNX semantics).
 *
 * Both see their input as (n, c, inner): the class axis is axis 1 and every
 * axis after it is flattened into `inner`, so one loop nest serves [N,C] and
 * [N,C,d1..dk] alike; the target is then (n, inner). For each position the
 * kernel picks the target's class t, and the loss there is
 *     -x[n, t, i] * w[t]                  (NLL; w = 1 without weights)
 *     -log_softmax(x[n, :, i])[t] * w[t]  (softmax cross entropy)
 * A target equal to ignore_index contributes 0 with weight 0, whatever its
 * value (ONNX allows any ignore_index, even outside [0, C)); any other target
 * outside [0, C) is RLX_E_RANGE. Reduction 0 (none) writes the per-position
 * losses, 1 (sum) their sum, 2 (mean) their sum divided by the sum of the
 * weights of the non-ignored positions (ONNX's weighted mean; 0/0 gives NaN,
 * as the reference does when every target is ignored).
 *
 * The softmax cross entropy subtracts the maximum of each class column
 * before exponentiating and needs no scratch: the log-sum-exp of a column is
 * computed first, then the picked log-probability (and, with the optional
 * second output, the whole column of log-probabilities) follows from it.
 *
 * Float tensors may be f32, f64, f16 or bf16 (a dtype param); all arithmetic
 * is in double and rounded once when stored, so the result does not depend
 * on the storage width beyond that final rounding.
 */
#include "rlx_rt.h"
#include "rk_typed.h"

#include <math.h>
#include <string.h>

static int64_t load_index(int64_t dtype, const void *base, int64_t i) {
    const uint8_t *p = base;
    if (dtype == RLX_I32) {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, p + 8 * i, 8);
    return v;
}

/* Both kernels have the same params (rk_kernels.def); softmax selects the
 * cross entropy. */
static int loss_kernel(const rk_nll_loss_params *p, const void *const *in, void *const *out, int softmax) {
    int64_t dt = p->dtype;
    if (dt != RLX_F32 && dt != RLX_F64 && dt != RLX_F16 && dt != RLX_BF16) return RLX_E_ARG;
    if (p->tgt_dtype != RLX_I32 && p->tgt_dtype != RLX_I64) return RLX_E_ARG;
    if (p->n < 0 || p->c < 0 || p->inner < 0 || p->reduction < 0 || p->reduction > 2) return RLX_E_ARG;
    if (p->has_weight && !in[2]) return RLX_E_ARG;
    int log_prob = softmax && p->has_log_prob;
    const void *x = in[0], *target = in[1], *weight = p->has_weight ? in[2] : NULL;
    int64_t c = p->c, inner = p->inner;
    double loss_sum = 0.0, weight_sum = 0.0;
    for (int64_t b = 0; b < p->n; b++) {
        for (int64_t i = 0; i < inner; i++) {
            int64_t pos = b * inner + i;          /* in the target and in a 'none' loss */
            int64_t col = b * c * inner + i;      /* x[b, 0, i]; class k is at col + k*inner */
            double lse = 0.0;
            if (softmax) {
                double mx = -INFINITY;
                for (int64_t k = 0; k < c; k++) {
                    double v = rk_load_f64(dt, x, col + k * inner);
                    if (v > mx || v != v) mx = v;
                }
                double sum = 0.0;
                for (int64_t k = 0; k < c; k++) sum += exp(rk_load_f64(dt, x, col + k * inner) - mx);
                lse = mx + log(sum);
                if (log_prob)
                    for (int64_t k = 0; k < c; k++)
                        rk_store_f64(dt, out[1], col + k * inner, rk_load_f64(dt, x, col + k * inner) - lse);
            }
            int64_t t = load_index(p->tgt_dtype, target, pos);
            double loss = 0.0, w = 0.0;
            if (!(p->has_ignore && t == p->ignore_index)) {
                if (t < 0 || t >= c) return RLX_E_RANGE;
                w = weight ? rk_load_f64(dt, weight, t) : 1.0;
                double picked = rk_load_f64(dt, x, col + t * inner) - lse;
                loss = -picked * w;
            }
            if (p->reduction == 0) rk_store_f64(dt, out[0], pos, loss);
            loss_sum += loss;
            weight_sum += w;
        }
    }
    if (p->reduction == 1) rk_store_f64(dt, out[0], 0, loss_sum);
    if (p->reduction == 2) rk_store_f64(dt, out[0], 0, loss_sum / weight_sum);
    return RLX_OK;
}

int rk_nll_loss(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    (void)ctx;
    return loss_kernel(params, in, out, 0);
}

int rk_softmax_ce_loss(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    /* same fields, another struct type: copied rather than type-punned */
    rk_nll_loss_params p;
    (void)ctx;
    typedef char same_layout[sizeof p == sizeof(rk_softmax_ce_loss_params) ? 1 : -1];
    (void)sizeof(same_layout);
    memcpy(&p, params, sizeof p);
    return loss_kernel(&p, in, out, 1);
}
