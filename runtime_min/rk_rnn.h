/* rk_rnn.h - what the rnn family's compiler side (lib/passes/ext_rnn.c) and
 * its kernels (rk_rnn.c) must agree on: the codes of the recurrent
 * activations, and element loads/stores of any dtype as double or int64.
 *
 * RK_RNN_ACTS(X) lists the activations of ONNX's RNN/GRU/LSTM in code order:
 * X(code name, "ONNX name", how many of alpha/beta it takes, default alpha,
 * default beta). The compiler turns the names into these codes and resolves
 * alpha and beta once, so the kernel only switches on the code.
 */
#ifndef RK_RNN_H
#define RK_RNN_H

#include <stdint.h>
#include <string.h>

#include "rlx_rt.h"
#include "rk_typed.h"

#define RK_RNN_ACTS(X) \
    X(RK_ACT_RELU,            "Relu",            0, 0.0, 0.0) \
    X(RK_ACT_TANH,            "Tanh",            0, 0.0, 0.0) \
    X(RK_ACT_SIGMOID,         "Sigmoid",         0, 0.0, 0.0) \
    X(RK_ACT_AFFINE,          "Affine",          2, 1.0, 0.0) \
    X(RK_ACT_LEAKYRELU,       "LeakyRelu",       1, 0.01, 0.0) \
    X(RK_ACT_THRESHOLDEDRELU, "ThresholdedRelu", 1, 1.0, 0.0) \
    X(RK_ACT_SCALEDTANH,      "ScaledTanh",      2, 1.0, 1.0) \
    X(RK_ACT_HARDSIGMOID,     "HardSigmoid",     2, 0.2, 0.5) \
    X(RK_ACT_ELU,             "Elu",             1, 1.0, 0.0) \
    X(RK_ACT_SOFTSIGN,        "Softsign",        0, 0.0, 0.0) \
    X(RK_ACT_SOFTPLUS,        "Softplus",        0, 0.0, 0.0)

enum {
#define X(code, name, nargs, alpha, beta) code,
    RK_RNN_ACTS(X)
#undef X
    RK_NACTS
};

/* The f32 recurrent kernel (rk_rnn_f32, rk_kernels.def): scratch bytes each
 * thread needs (the calling thread's holds the buffers), and its activations over a run of floats (one of
 * RS_ACT_SIGMOID, RS_ACT_TANH, RS_ACT_RELU; rk_rnn_f32.c, per instruction
 * set). */
size_t rk_rnn_f32_scratch(int64_t cell, int64_t seq, int64_t batch, int64_t input, int64_t hidden);
/* Whether any of the node's products may be split over threads: then the
 * C target runs the general entry (rk_rnn_f32), else its cell's. */
int rk_rnn_f32_may_split(int64_t cell, int64_t seq, int64_t batch, int64_t input, int64_t hidden);
void rk_rnn_act_f32(float *y, int64_t n, int64_t act);
/* One batch row of an LSTM step with the default activations and no
 * peepholes, clip or coupled gates, in one pass (rk_rnn_f32.c): the gates
 * are pre (the recurrent product's i, o, f, c, h apart) + x (the same),
 * then the cell c and the output h, written to hb and y, for n units from
 * the pointers given (a thread's units: all offset by its first).
 * rf_lstm_step's bits. */
void rk_rnn_lstm_gates_f32(const float *pre, const float *x, float *c, float *hb, float *y, int64_t h, int64_t n);

#endif
