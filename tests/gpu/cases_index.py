#!/usr/bin/python3
"""cases_index.py - the differential cases of the index family's GPU kernels
(lib/gpu/launch_index.c): losses, the index and scatter kernels, Trilu,
CumSum, Hardmax, TopK and the small shape kernels.

Imported by cases.py (CASES below); each case is built for the C target and
the GPU target and the outputs compared. Shapes are odd against the
workgroups (positions past 128 for the reducing losses), indices negative,
values tied and NaN where the kernel's semantics says something about them.
The expected arrays given to m.out are numpy's where that is short (they
declare the outputs; the reference the suite compares with is the C
target, whose kernels the ONNX node tests check).
"""
import numpy as np

F16, F32, F64, I32, I64, U8 = np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8


def randn(r, *shape, dtype=F32):
    return r.standard_normal(shape).astype(dtype)


# ---- losses ----

def nll_ref(x, tgt, w=None, reduction="mean", ignore=None):
    """NegativeLogLikelihoodLoss of (N, C, d...) scores at (N, d...) targets."""
    c = x.shape[1]
    t = tgt.astype(np.int64)
    keep = np.ones(t.shape, bool) if ignore is None else t != ignore
    tc = np.where(keep, t, 0)
    picked = np.take_along_axis(x.astype(F64), tc[:, None], axis=1)[:, 0]
    wt = (np.ones(c) if w is None else w.astype(F64))[tc] * keep
    loss = -picked * wt
    if reduction == "none":
        return loss.astype(x.dtype)
    s = loss.sum()
    return np.array(s if reduction == "sum" else s / wt.sum(), x.dtype)


def log_softmax(x):
    x = x.astype(F64)
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def nll_weight_ii_mean(m, r):
    # 3 x 5 x 7: 21 positions, i64 targets, weights, a negative ignore_index
    x = m.inp("x", randn(r, 3, 5, 7))
    t = r.integers(0, 5, (3, 7)).astype(I64)
    t[0, 2] = t[2, 6] = -3
    m.inp("t", t)
    w = m.weight("w", r.uniform(0.2, 1.5, 5).astype(F32))
    m.out("y", nll_ref(x, t, w, "mean", -3))
    m.node("NegativeLogLikelihoodLoss", ["x", "t", "w"], "y", reduction="mean", ignore_index=-3)


def nll_many_positions_sum(m, r):
    # 4 x 3 x 7 x 11: 308 positions, past one workgroup's 128; i32 targets
    x = m.inp("x", randn(r, 4, 3, 7, 11))
    t = m.inp("t", r.integers(0, 3, (4, 7, 11)).astype(I32))
    m.out("y", nll_ref(x, t, None, "sum"))
    m.node("NegativeLogLikelihoodLoss", ["x", "t"], "y", reduction="sum")


def nll_none_f64_high_ii(m, r):
    # f64 scores, reduction none, an ignore_index past int32 that i64 targets hit
    ii = 3 << 33
    x = m.inp("x", randn(r, 5, 4, 3, dtype=F64))
    t = r.integers(0, 4, (5, 3)).astype(I64)
    t[1, 1] = t[4, 0] = ii
    m.inp("t", t)
    m.out("y", nll_ref(x, t, None, "none", ii))
    m.node("NegativeLogLikelihoodLoss", ["x", "t"], "y", reduction="none", ignore_index=ii)


def nll_all_ignored_mean(m, r):
    # every target ignored: the weighted mean is 0 / 0, NaN in both
    x = m.inp("x", randn(r, 2, 3))
    m.inp("t", np.array([1, 1], I64))
    m.out("y", np.array(np.nan, F32))
    m.node("NegativeLogLikelihoodLoss", ["x", "t"], "y", reduction="mean", ignore_index=1)


def sce_log_prob_none_nan(m, r):
    # softmax cross entropy with its log-probabilities, reduction none; one
    # position's scores hold a NaN, which makes that position's results NaN
    x = randn(r, 3, 6, 5) * 4
    x[1, 2, 3] = np.nan
    m.inp("x", x)
    t = m.inp("t", r.integers(0, 6, (3, 5)).astype(I64))
    lp = log_softmax(x)
    m.out("y", nll_ref(lp, t, None, "none").astype(F32))
    m.out("lp", lp.astype(F32))
    m.node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"], reduction="none")


def sce_weight_mean_many(m, r):
    # 2 x 9 x 131 (262 positions), weights, ignore_index 0, mean, and the log-probabilities
    x = m.inp("x", randn(r, 2, 9, 131) * 3)
    t = m.inp("t", r.integers(0, 9, (2, 131)).astype(I32))
    w = m.weight("w", r.uniform(0.1, 2.0, 9).astype(F32))
    lp = log_softmax(x)
    m.out("y", nll_ref(lp, t, w, "mean", 0).astype(F32))
    m.out("lp", lp.astype(F32))
    m.node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y", "lp"], reduction="mean", ignore_index=0)


def sce_f16_sum(m, r):
    x = m.inp("x", randn(r, 7, 4, dtype=F16))
    t = m.inp("t", r.integers(0, 4, (7,)).astype(I64))
    m.out("y", nll_ref(log_softmax(x), t, None, "sum").astype(F16))
    m.node("SoftmaxCrossEntropyLoss", ["x", "t"], "y", reduction="sum")


# ---- index kernels ----

def gather_elements_negative(m, r):
    # axis 1 of 4 x 9 x 5, indices 3 x 6 x 4 (smaller than the data off the axis), negative ones
    x = m.inp("x", randn(r, 4, 9, 5))
    idx = r.integers(-9, 9, (3, 6, 4)).astype(I64)
    m.inp("i", idx)
    m.out("y", np.take_along_axis(x[:3, :, :4], np.where(idx < 0, idx + 9, idx), axis=1))
    m.node("GatherElements", ["x", "i"], "y", axis=1)


def gather_elements_i32_bytes(m, r):
    # one-byte elements, i32 indices, the last axis
    x = m.inp("x", r.integers(0, 255, (5, 7)).astype(U8))
    idx = m.weight("i", r.integers(-7, 7, (5, 11)).astype(I32))
    m.out("y", np.take_along_axis(x, np.where(idx < 0, idx + 7, idx), axis=1))
    m.node("GatherElements", ["x", "i"], "y", axis=-1)


# ---- shape kernels ----

def trilu_upper_k_input(m, r):
    x = m.inp("x", randn(r, 3, 5, 7))
    m.inp("k", np.array(-2, I64))
    m.out("y", np.triu(x, -2))
    m.node("Trilu", ["x", "k"], "y", upper=1)


def trilu_lower_i64_far_k(m, r):
    # 8-byte elements; k far past the columns (2^40) keeps every row whole
    x = m.inp("x", r.integers(-2 ** 40, 2 ** 40, (2, 4, 3)).astype(I64))
    m.weight("k", np.array(1 << 40, I64))
    m.out("y", np.tril(x, 1 << 40))
    m.node("Trilu", ["x", "k"], "y", upper=0)


def trilu_lower_bytes(m, r):
    x = m.inp("x", r.integers(1, 255, (6, 9)).astype(U8))
    m.out("y", np.tril(x))
    m.node("Trilu", ["x"], "y", upper=0)


CASES = [nll_weight_ii_mean, nll_many_positions_sum, nll_none_f64_high_ii, nll_all_ignored_mean,
         sce_log_prob_none_nan, sce_weight_mean_many, sce_f16_sum,
         gather_elements_negative, gather_elements_i32_bytes,
         trilu_upper_k_input, trilu_lower_i64_far_k, trilu_lower_bytes]
