#!/usr/bin/python3
"""cases.py - the GPU targets' per-kernel differential cases.

Every thunk kind a GPU target has a kernel for, on shapes chosen to reach the
kernels' edges: odd sizes against the workgroups and tiles, broadcasting,
grids past 65535 workgroups in x (two grid dimensions), reductions longer
than a workgroup, batched and transposed products, strided, padded, dilated
and grouped convolutions. The reference is the C target itself (the test
builds each case for c and for the GPU target and compares their outputs
under the case's bound: rtol/atol for floats, exact for integers and bools),
so a case only needs a graph and its inputs; the models use the .rlxg
pure-JSON form of tests/e2e/cases.py (its Model class).

    cases.py OUTDIR [NAME...]   writes OUTDIR/NAME/{model.rlxg, in_K.npy,
                                tol.json} and OUTDIR/cases.txt
    cases.py --list             prints the case names

Families of kernels add theirs in cases_<family>.py (a CASES list of
functions taking a Model), imported below.
"""
import importlib
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import cases as e2e  # noqa: E402  (tests/e2e/cases.py: Model, dtype names)

F32, I32, I64 = np.float32, np.int32, np.int64


def rng(name):
    """A generator seeded by the case's name (the same inputs every run)."""
    return np.random.default_rng(sum(map(ord, name)) * 7919 + len(name))


def randn(r, *shape):
    return r.standard_normal(shape).astype(F32)


# ---- data movement ----

def transpose_odd(m, r):
    x = m.inp("x", randn(r, 3, 5, 7, 2))
    m.out("y", np.transpose(x, (2, 0, 3, 1)))
    m.node("Transpose", ["x"], "y", perm=[2, 0, 3, 1])


def slice_negative_steps(m, r):
    x = m.inp("x", randn(r, 9, 11))
    m.ints("starts", [7, -2])
    m.ints("ends", [1, -12])
    m.ints("axes", [0, 1])
    m.ints("steps", [-2, -3])
    m.out("y", x[7:1:-2, -2:-12:-3])
    m.node("Slice", ["x", "starts", "ends", "axes", "steps"], "y")


def expand_broadcast(m, r):
    x = m.inp("x", randn(r, 3, 1, 5))
    m.ints("shape", [2, 3, 4, 5])
    m.out("y", np.broadcast_to(x, (2, 3, 4, 5)))
    m.node("Expand", ["x", "shape"], "y")


def concat_split_i64(m, r):
    a = m.inp("a", r.integers(-2 ** 40, 2 ** 40, (3, 2)).astype(I64))
    b = m.inp("b", r.integers(-5, 5, (3, 5)).astype(I64))
    y = np.concatenate([a, b], axis=1)
    m.node("Concat", ["a", "b"], "c", axis=1)
    m.ints("split", [4, 3])
    m.node("Split", ["c", "split"], ["y0", "y1"], axis=1)
    m.out("y0", y[:, :4])
    m.out("y1", y[:, 4:])


def gather_negative(m, r):
    x = m.inp("x", randn(r, 6, 3))
    m.weight("idx", np.array([[0, -1], [5, 2]], dtype=I64))
    m.out("y", x[[[0, 5], [5, 2]]])
    m.node("Gather", ["x", "idx"], "y", axis=0)


def pad_reflect(m, r):
    x = m.inp("x", randn(r, 2, 3, 4))
    m.ints("pads", [0, 1, 2, 0, 2, 1])
    m.out("y", np.pad(x, ((0, 0), (1, 2), (2, 1)), mode="reflect"))
    m.node("Pad", ["x", "pads"], "y", mode="reflect")


def big_grid_add(m, r):
    # 2^24 + 3 elements: 131073 workgroups of 128, past 65535 in x
    n = (1 << 24) + 3
    x = m.inp("x", randn(r, n))
    m.weight("b", np.array([0.5], dtype=F32))
    m.out("y", x + F32(0.5))
    m.node("Add", ["x", "b"], "y")


def region_mixed_types(m, r):
    x = m.inp("x", (randn(r, 4, 33) * 300).astype(F32))
    m.node("Cast", ["x"], "i", to="i8")
    m.node("Cast", ["i"], "f", to="f32")
    m.node("Mul", ["f", "x"], "y")
    m.out("y", x * np.clip(np.trunc(np.nan_to_num(x)), -128, 127).astype(F32))


# ---- products and convolutions ----

def matmul_batched_broadcast(m, r):
    a = m.inp("a", randn(r, 3, 1, 17, 33))
    b = m.inp("b", randn(r, 4, 33, 19))
    m.out("y", np.matmul(a, b))
    m.node("MatMul", ["a", "b"], "y")


def gemm_trans_bias(m, r):
    a = m.inp("a", randn(r, 37, 21))
    b = m.weight("w", randn(r, 29, 37))
    c = m.weight("c", randn(r, 29))
    m.out("y", F32(0.5) * (a.T @ b.T) + F32(2.0) * c)
    m.node("Gemm", ["a", "w", "c"], "y", transA=1, transB=1, alpha=0.5, beta=2.0)


def gemv_row(m, r):
    a = m.inp("a", randn(r, 1, 300))
    b = m.weight("w", randn(r, 300, 70))
    m.out("y", a @ b)
    m.node("MatMul", ["a", "w"], "y")


def conv_strided_dilated_grouped(m, r):
    x = m.inp("x", randn(r, 2, 8, 13, 11))
    w = m.weight("w", randn(r, 12, 4, 3, 3))
    b = m.weight("b", randn(r, 12))
    m.out("y", np.zeros((2, 12, 6, 5), F32))   # the shape only: the C target is the reference
    m.node("Conv", ["x", "w", "b"], "y", strides=[2, 2], dilations=[2, 1], pads=[1, 0, 2, 1], group=2)


def conv_depthwise_relu(m, r):
    x = m.inp("x", randn(r, 1, 16, 9, 9))
    m.weight("w", randn(r, 16, 1, 3, 3))
    m.node("Conv", ["x", "w"], "c", pads=[1, 1, 1, 1], group=16)
    m.node("Relu", ["c"], "y")
    m.out("y", np.zeros((1, 16, 9, 9), F32))


# ---- normalizations, reductions, pooling ----

def batchnorm_concat_relu(m, r):
    # DenseNet's pre-activation: a BatchNormalization no convolution takes
    # (its input is a Concat), with its Relu fused into it (fuse.c)
    m.inp("x", randn(r, 1, 6, 7, 9))
    m.inp("x2", randn(r, 1, 4, 7, 9))
    m.weight("s", randn(r, 10))
    m.weight("b", randn(r, 10))
    m.weight("mu", randn(r, 10))
    m.weight("var", np.abs(randn(r, 10)) + 0.1)
    m.node("Concat", ["x", "x2"], "c", axis=1)
    m.node("BatchNormalization", ["c", "s", "b", "mu", "var"], "n")
    m.node("Relu", ["n"], "y")
    m.out("y", np.zeros((1, 10, 7, 9), F32))


def softmax_long_rows(m, r):
    x = m.inp("x", randn(r, 3, 1000) * 5)
    m.out("y", np.zeros((3, 1000), F32))
    m.node("Softmax", ["x"], "y", axis=-1)


def logsoftmax_middle(m, r):
    x = m.inp("x", randn(r, 2, 7, 5))
    m.out("y", np.zeros((2, 7, 5), F32))
    m.node("LogSoftmax", ["x"], "y", axis=1)


def layernorm_wide(m, r):
    x = m.inp("x", randn(r, 5, 300))
    m.weight("s", randn(r, 300))
    m.weight("b", randn(r, 300))
    m.out("y", np.zeros((5, 300), F32))
    m.node("LayerNormalization", ["x", "s", "b"], "y", axis=-1, epsilon=1e-5)


def reduce_mean_axes(m, r):
    x = m.inp("x", randn(r, 3, 4, 5, 6))
    m.ints("axes", [1, 3])
    m.out("y", x.mean(axis=(1, 3), keepdims=True))
    m.node("ReduceMean", ["x", "axes"], "y")


def reduce_sum_int(m, r):
    x = m.inp("x", r.integers(-100, 100, (4, 9)).astype(I32))
    m.ints("axes", [1])
    m.out("y", x.sum(axis=1, keepdims=False).astype(I32))
    m.node("ReduceSum", ["x", "axes"], "y", keepdims=0)


# Long reductions (reduce.kl's workgroup form, from 1024 reduced elements):
# each would run past lavapipe's 65535 loop trips in one invocation per
# output element, which the host refuses.

def reduce_sum_long_all(m, r):
    # 6480 elements over six axes, as ONNX's test_nllloss_NCd1d2d3d4d5_mean_weight_expanded
    x = m.inp("x", randn(r, 2, 3, 4, 5, 6, 9))
    m.out("y", np.array(x.sum(), F32))
    m.node("ReduceSum", ["x"], "y", keepdims=0)


def reduce_logsumexp_long_strided(m, r):
    # a reduced middle axis (stride 2) of 20000, six outputs; one NaN row, one -inf row
    x = randn(r, 3, 20000, 2) * 4
    x[1, 777, 0] = np.nan
    x[2, :, 1] = -np.inf
    x = m.inp("x", x)
    m.ints("axes", [1])
    m.out("y", np.zeros((3, 1, 2), F32))
    m.node("ReduceLogSumExp", ["x", "axes"], "y")


def reduce_max_prod_int_long(m, r):
    x = m.inp("x", r.integers(-2 ** 31, 2 ** 31 - 1, (2, 40000)).astype(I32) | 1)   # odd: the product stays nonzero
    m.ints("axes", [1])
    m.out("mx", np.zeros((2,), I32))
    m.out("mn", np.zeros((2,), I32))
    m.out("pr", np.zeros((2,), I32))
    m.node("ReduceMax", ["x", "axes"], "mx", keepdims=0)
    m.node("ReduceMin", ["x", "axes"], "mn", keepdims=0)
    m.node("ReduceProd", ["x", "axes"], "pr", keepdims=0)


def reduce_l2_f64_long(m, r):
    x = m.inp("x", r.standard_normal((2, 40000)))
    m.ints("axes", [1])
    m.out("y", np.zeros((2, 1), np.float64))
    m.node("ReduceL2", ["x", "axes"], "y")


def argmax_ties(m, r):
    x = m.inp("x", r.integers(0, 3, (5, 8)).astype(F32))
    m.out("y", np.argmax(x, axis=1).reshape(5, 1).astype(I64))
    m.node("ArgMax", ["x"], "y", axis=1, select_last_index=1)


def maxpool_pads_indices(m, r):
    x = m.inp("x", randn(r, 1, 2, 7, 9))
    m.out("y", np.zeros((1, 2, 4, 5), F32))
    m.out("i", np.zeros((1, 2, 4, 5), I64))
    m.node("MaxPool", ["x"], ["y", "i"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])


def maxpool_i8_u8(m, r):
    # 8-bit max pooling compares in float; ties (few values) take the first
    a = m.inp("a", r.integers(-128, 128, (1, 2, 7, 9)).astype(np.int8))
    b = m.inp("b", r.integers(0, 4, (2, 1, 6, 5)).astype(np.uint8))
    m.out("ya", np.zeros((1, 2, 4, 5), np.int8))
    m.out("ia", np.zeros((1, 2, 4, 5), I64))
    m.out("yb", np.zeros((2, 1, 3, 3), np.uint8))
    m.node("MaxPool", ["a"], ["ya", "ia"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    m.node("MaxPool", ["b"], "yb", kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], dilations=[1, 1])


def avgpool_count_pad(m, r):
    x = m.inp("x", randn(r, 1, 3, 6, 6))
    m.out("y", np.zeros((1, 3, 3, 3), F32))
    m.node("AveragePool", ["x"], "y", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1)


CASES = [transpose_odd, slice_negative_steps, expand_broadcast, concat_split_i64, gather_negative, pad_reflect,
         big_grid_add, region_mixed_types, matmul_batched_broadcast, gemm_trans_bias, gemv_row,
         conv_strided_dilated_grouped, conv_depthwise_relu, batchnorm_concat_relu, softmax_long_rows,
         logsoftmax_middle, layernorm_wide,
         reduce_mean_axes, reduce_sum_int, reduce_sum_long_all, reduce_logsumexp_long_strided,
         reduce_max_prod_int_long, reduce_l2_f64_long, argmax_ties, maxpool_pads_indices, maxpool_i8_u8,
         avgpool_count_pad]

for fam in ("index", "vision", "tiles"):
    try:
        CASES += importlib.import_module("cases_" + fam).CASES
    except ModuleNotFoundError:
        pass


def write(outdir, names):
    os.makedirs(outdir, exist_ok=True)
    chosen = [c for c in CASES if not names or c.__name__ in names]
    for case in chosen:
        m = e2e.Model(case.__name__)
        m.tol = {"rtol": 1e-3, "atol": 1e-4}
        case(m, rng(case.__name__))
        d = os.path.join(outdir, case.__name__)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.rlxg"), "w") as f:
            json.dump(m.graph(), f, allow_nan=False)
        for k, a in enumerate(m.in_arrays):
            np.save(os.path.join(d, "in_%d.npy" % k), a)
        with open(os.path.join(d, "tol.json"), "w") as f:
            json.dump(m.tol, f)
    with open(os.path.join(outdir, "cases.txt"), "w") as f:
        for c in chosen:
            f.write(c.__name__ + "\n")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--list":
        for c in CASES:
            print(c.__name__)
        return
    if len(sys.argv) < 2:
        sys.exit("usage: cases.py OUTDIR [NAME...] | --list")
    write(sys.argv[1], set(sys.argv[2:]))


if __name__ == "__main__":
    main()
