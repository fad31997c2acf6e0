"""cases_vision.py - the GPU differential cases of lib/gpu/launch_vision.c's kernels.

Imported by tests/gpu/cases.py (CASES: functions taking tests/e2e/cases.py's
Model and a numpy generator). The C target is the reference, so an output's
value here only declares its shape and dtype. The shapes reach each kernel's
edges: recurrent cells with more rows than a workgroup has invocations,
both directions, sequence lengths (an empty one included), every optional
input and the activations' parameters.
"""
import numpy as np

F32, I32, I64 = np.float32, np.int32, np.int64


def randn(r, *shape, scale=1.0):
    return (r.standard_normal(shape) * scale).astype(F32)


# ---- recurrent cells ----

def recurrent(m, r, op, seq, batch, inp, hid, dirs=1, layout=0, b=True, lens=None, h0=False, c0=False, p=False,
              **attrs):
    """An RNN / GRU / LSTM node over X (a graph input) with random weights;
    all of its outputs are the graph's."""
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    xs = (batch, seq, inp) if layout else (seq, batch, inp)
    m.inp("x", randn(r, *xs))
    m.weight("w", randn(r, dirs, gates * hid, inp, scale=0.4))
    m.weight("r", randn(r, dirs, gates * hid, hid, scale=0.4))
    ins = ["x", "w", "r"]
    sdims = (batch, dirs, hid) if layout else (dirs, batch, hid)
    for name, want, value in (("b", b, lambda: randn(r, dirs, 2 * gates * hid, scale=0.3)),
                              ("lens", lens is not None, lambda: lens),
                              ("h0", h0, lambda: randn(r, *sdims)),
                              ("c0", c0, lambda: randn(r, *sdims)),
                              ("p", p, lambda: randn(r, dirs, 3 * hid, scale=0.5))):
        if want:
            if name == "lens":
                m.inp(name, value())
            else:
                m.weight(name, value())
        ins.append(name if want else "")
    while ins[-1] == "":
        ins.pop()
    outs = ["y", "yh"] + (["yc"] if op == "LSTM" else [])
    if dirs == 2:
        attrs["direction"] = "bidirectional"
    m.node(op, ins, outs, hidden_size=hid, layout=layout, **attrs)
    ys = (batch, seq, dirs, hid) if layout else (seq, dirs, batch, hid)
    m.out("y", np.zeros(ys, F32))
    for o in outs[1:]:
        m.out(o, np.zeros(sdims, F32))


def lstm_bidir_lens_peepholes(m, r):
    recurrent(m, r, "LSTM", 7, 3, 5, 6, dirs=2, lens=np.array([7, 0, 4], I32), h0=True, c0=True, p=True)


def lstm_batch_first_forget_clip(m, r):
    # 280 rows: two per invocation of a 256 workgroup
    recurrent(m, r, "LSTM", 4, 2, 3, 70, layout=1, input_forget=1, clip=0.7,
              activations="HardSigmoid,Elu,Softsign", activation_alpha=[0.3, 0.8], activation_beta=[0.4])


def gru_reverse_wide(m, r):
    # 300 units: 900 rows, and two units per invocation
    recurrent(m, r, "GRU", 5, 2, 9, 300, lens=np.array([3, 5], I64), h0=True, direction="reverse")


def gru_bidir_linear_before_reset(m, r):
    recurrent(m, r, "GRU", 6, 3, 4, 8, dirs=2, h0=True, linear_before_reset=1,
              activations="Sigmoid,Tanh,HardSigmoid,Softplus", activation_alpha=[0.25], activation_beta=[0.6])


def gru_no_bias_no_state(m, r):
    recurrent(m, r, "GRU", 3, 1, 2, 5, b=False)


def rnn_batch_first_bidir(m, r):
    recurrent(m, r, "RNN", 5, 2, 4, 7, dirs=2, layout=1, b=False, activations="LeakyRelu,ThresholdedRelu",
              activation_alpha=[0.1, 0.2])


def rnn_affine_scaledtanh_clip(m, r):
    recurrent(m, r, "RNN", 4, 3, 3, 5, dirs=2, h0=True, clip=1.5, activations="Affine,ScaledTanh",
              activation_alpha=[0.7, 1.3], activation_beta=[0.2, 0.9])


CASES = [lstm_bidir_lens_peepholes, lstm_batch_first_forget_clip, gru_reverse_wide, gru_bidir_linear_before_reset,
         gru_no_bias_no_state, rnn_batch_first_bidir, rnn_affine_scaledtanh_clip]
