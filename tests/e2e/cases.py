#!/usr/bin/python3
"""cases.py - rlxc's end-to-end test cases and their independent expected values.

Each case is a function that builds a small graph in the .rlxg pure-JSON form
(weights inline), draws its inputs from a generator seeded by the case's name,
and computes the expected outputs with numpy alone: naive reference loops for
convolution and pooling, math.erf for Erf, explicit saturation for casts.  rlxc
is never run here; the references follow ONNX (opset 17, 18 for Reduce*/Split)
with the attribute defaults of lib/ops.def.

    cases.py OUTDIR [NAME...]   writes OUTDIR/NAME/{model.rlxg, in_K.npy,
                                expected_K.npy, tol.json} for every case (or the
                                named ones) and OUTDIR/cases.txt, one name a line
    cases.py --list             prints the case names
    cases.py --selfcheck        checks the reference conv/pool code against hand
                                computed values and a second implementation, and
                                that every op of lib/ops.def has a case

tol.json holds {"rtol", "atol"} for float outputs (|got - want| <= atol +
rtol*|want|); integer and bool outputs must match exactly.
"""
import json
import math
import os
import sys
import zlib

import numpy as np

F32, F64, F16 = np.float32, np.float64, np.float16
I32, I64 = np.int32, np.int64
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1

DTYPE_NAMES = {
    "float32": "f32", "float16": "f16", "float64": "f64", "int8": "i8", "uint8": "u8",
    "int16": "i16", "uint16": "u16", "int32": "i32", "uint32": "u32", "int64": "i64",
    "uint64": "u64", "bool": "bool",
}


def dtype_name(dt):
    return DTYPE_NAMES[np.dtype(dt).name]


def encode_data(arr):
    """Flat JSON list of a tensor's values: exact for every dtype (64-bit
    integers beyond 2^53 as decimal strings, NaN/inf as strings)."""
    out = []
    kind = arr.dtype.kind
    for v in arr.reshape(-1).tolist():
        if kind == "b":
            out.append(1 if v else 0)
        elif kind in "iu":
            out.append(v if abs(v) < 2 ** 53 else str(v))
        elif math.isnan(v):
            out.append("nan")
        elif math.isinf(v):
            out.append("inf" if v > 0 else "-inf")
        else:
            out.append(v)   # a double holding the exact value; repr round-trips
    return out


def tensor_json(arr):
    arr = np.asarray(arr)
    return {"dtype": dtype_name(arr.dtype), "shape": list(arr.shape), "data": encode_data(arr)}


class Model:
    """One test case: the graph being built, its inputs and expected outputs."""

    def __init__(self, name):
        self.name = name
        self.inputs, self.outputs, self.weights, self.nodes = [], [], [], []
        self.in_arrays, self.expected = [], []
        self.tol = {"rtol": 1e-4, "atol": 1e-5}
        self.reverse_nodes = False

    def inp(self, name, arr):
        arr = np.array(arr, order="C")   # ascontiguousarray would make a 0-d array 1-d
        self.inputs.append({"name": name, "dtype": dtype_name(arr.dtype), "shape": list(arr.shape)})
        self.in_arrays.append(arr)
        return arr

    def weight(self, name, arr, dtype=None):
        arr = np.asarray(arr, dtype=dtype)
        w = {"name": name}
        w.update(tensor_json(arr))
        self.weights.append(w)
        return arr

    def ints(self, name, values):
        """A constant i64 input (axes, pads, shape, starts, ...)."""
        return self.weight(name, np.array(values, dtype=I64).reshape(-1))

    def node(self, op, ins, outs, **attrs):
        if isinstance(outs, str):
            outs = [outs]
        a = {}
        for k, v in attrs.items():
            if isinstance(v, np.ndarray):
                v = tensor_json(v)
            elif isinstance(v, tuple):
                v = list(v)
            a[k] = v
        n = {"name": "%s_%d" % (op.lower(), len(self.nodes)), "op": op, "inputs": list(ins), "outputs": outs}
        if a:
            n["attrs"] = a
        self.nodes.append(n)
        return outs[0]

    def out(self, name, want, declare=True):
        want = np.array(want, order="C")
        assert want.dtype.name in DTYPE_NAMES, (self.name, name, want.dtype)
        entry = {"name": name}
        if declare:
            entry.update({"dtype": dtype_name(want.dtype), "shape": list(want.shape)})
        self.outputs.append(entry)
        self.expected.append(want)

    def graph(self):
        nodes = list(reversed(self.nodes)) if self.reverse_nodes else self.nodes
        return {"rlxg": 1, "name": self.name, "inputs": self.inputs, "outputs": self.outputs,
                "weights": self.weights, "nodes": nodes}


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def randn(rng, *shape):
    return rng.standard_normal(shape).astype(F32)


def uniform(rng, lo, hi, *shape):
    return rng.uniform(lo, hi, shape).astype(F32)


def small_ints(rng, values, shape, dtype=F32):
    """Values drawn from a small set, so comparisons and argmax see ties."""
    return np.array(values)[rng.integers(0, len(values), shape)].astype(dtype)


def f64(a):
    return np.asarray(a, dtype=F64)


# ----------------------------------------------------------------------------
# Reference implementations (ONNX semantics, float64 arithmetic)
# ----------------------------------------------------------------------------

def conv_ref(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    """Direct formula: y[n,m,i,j] = b[m] + sum_{c,p,q} x[n, g*C/G + c, i*sh + p*dh - pt,
    j*sw + q*dw - pl] * w[m,c,p,q] with out-of-image terms zero. pads are ONNX's
    [top, left, bottom, right]."""
    x, w = f64(x), f64(w)
    n_, c_, h, wd = x.shape
    m_, cg, kh, kw = w.shape
    sh, sw = strides
    dh, dw = dilations
    pt, pl, pb, pr = pads
    oh = (h + pt + pb - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + pl + pr - ((kw - 1) * dw + 1)) // sw + 1
    mg = m_ // group
    y = np.zeros((n_, m_, oh, ow))
    for n in range(n_):
        for m in range(m_):
            g = m // mg
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for p in range(kh):
                        r = i * sh + p * dh - pt
                        if r < 0 or r >= h:
                            continue
                        for q in range(kw):
                            s = j * sw + q * dw - pl
                            if s < 0 or s >= wd:
                                continue
                            acc += float(np.dot(x[n, g * cg:(g + 1) * cg, r, s], w[m, :, p, q]))
                    y[n, m, i, j] = acc + (float(b[m]) if b is not None else 0.0)
    return y


def same_pads(in_sizes, kernel, strides, dilations, upper=True):
    """auto_pad SAME_*: output = ceil(in / stride); the odd pad goes to the end
    for SAME_UPPER, to the beginning for SAME_LOWER."""
    begins, ends = [], []
    for n, k, s, d in zip(in_sizes, kernel, strides, dilations):
        out = -(-n // s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - n)
        small = total // 2
        begins.append(small if upper else total - small)
        ends.append(total - small if upper else small)
    return tuple(begins + ends)


def pool_out_size(n, k, s, d, pb, pe, ceil_mode):
    span = (k - 1) * d + 1
    if ceil_mode:
        out = -(-(n + pb + pe - span) // s) + 1
        if (out - 1) * s >= n + pb:   # a last window starting in the end padding is dropped
            out -= 1
    else:
        out = (n + pb + pe - span) // s + 1
    return out


def pool_ref(x, kind, kernel, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1),
             ceil_mode=0, count_include_pad=0):
    """Max or average pooling by the direct formula. Max ignores positions
    outside the image (padding is -inf); average divides by the in-image count,
    or with count_include_pad by the count inside the explicitly padded image."""
    x = f64(x)
    n_, c_, h, wd = x.shape
    kh, kw = kernel
    sh, sw = strides
    dh, dw = dilations
    pt, pl, pb, pr = pads
    oh = pool_out_size(h, kh, sh, dh, pt, pb, ceil_mode)
    ow = pool_out_size(wd, kw, sw, dw, pl, pr, ceil_mode)
    y = np.zeros((n_, c_, oh, ow))
    for n in range(n_):
        for c in range(c_):
            for i in range(oh):
                for j in range(ow):
                    vals, padded = [], 0
                    for p in range(kh):
                        r = i * sh + p * dh - pt
                        for q in range(kw):
                            s = j * sw + q * dw - pl
                            if 0 <= r < h and 0 <= s < wd:
                                vals.append(x[n, c, r, s])
                            if -pt <= r < h + pb and -pl <= s < wd + pr:
                                padded += 1
                    if kind == "max":
                        y[n, c, i, j] = max(vals)
                    else:
                        y[n, c, i, j] = sum(vals) / (padded if count_include_pad else len(vals))
    return y


def softmax_ref(x, axis):
    x = f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x, axis):
    x = f64(x)
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def layernorm_ref(x, scale, bias, axis, eps):
    x = f64(x)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * f64(scale)
    return y + f64(bias) if bias is not None else y


def batchnorm_ref(x, scale, bias, mean, var, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    r = lambda a: f64(a).reshape(shape)
    return (f64(x) - r(mean)) / np.sqrt(r(var) + eps) * r(scale) + r(bias)


def slice_ref(x, starts, ends, axes=None, steps=None):
    """ONNX Slice: clamp start/end per axis (differently for negative steps),
    then take the index range explicitly (no Python slice magic)."""
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    idx = [np.arange(d) for d in x.shape]
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        ax %= x.ndim
        d = x.shape[ax]
        st = st + d if st < 0 else st
        en = en + d if en < 0 else en
        if sp > 0:
            st, en = min(max(st, 0), d), min(max(en, 0), d)
        else:
            st, en = min(max(st, 0), d - 1), min(max(en, -1), d - 1)
        idx[ax] = np.array(list(range(st, en, sp)), dtype=np.int64)
    y = x
    for ax, ii in enumerate(idx):
        y = np.take(y, ii, axis=ax)
    return y


def gather_ref(x, indices, axis):
    idx = np.asarray(indices, dtype=np.int64)
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    return np.take(x, idx, axis=axis)


def onnx_pads_to_numpy(pads):
    r = len(pads) // 2
    return [(pads[i], pads[i + r]) for i in range(r)]


def trunc_div(a, b):
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def saturate_cast(x, dtype):
    """float -> integer: NaN -> 0, out of range -> the limit, else truncate."""
    info = np.iinfo(dtype)
    out = []
    for v in f64(x).reshape(-1).tolist():
        if math.isnan(v):
            out.append(0)
        elif v <= info.min:
            out.append(int(info.min))
        elif v >= info.max:
            out.append(int(info.max))
        else:
            out.append(int(v))   # int() truncates toward zero
    return np.array(out, dtype=dtype).reshape(np.shape(x))


def argmax_ref(x, axis, keepdims, select_last):
    if select_last:
        flipped = np.flip(x, axis=axis)
        r = x.shape[axis] - 1 - np.argmax(flipped, axis=axis)
    else:
        r = np.argmax(x, axis=axis)
    r = r.astype(I64)
    return np.expand_dims(r, axis) if keepdims else r


def erf_ref(x):
    return np.vectorize(math.erf, otypes=[F64])(f64(x))


# ----------------------------------------------------------------------------
# Elementwise
# ----------------------------------------------------------------------------

@case
def add_broadcast(m, rng):
    a, b = m.inp("a", randn(rng, 2, 1, 4)), m.inp("b", randn(rng, 3, 1))
    m.node("Add", ["a", "b"], "c")
    m.out("c", (f64(a) + b).astype(F32))


@case
def broadcast_every_axis(m, rng):
    a, b = m.inp("a", randn(rng, 1, 3, 1, 5)), m.inp("b", randn(rng, 4, 1, 2, 1))
    c, d = m.inp("c", randn(rng, 3, 1)), m.inp("d", randn(rng, 1, 3))
    s = m.weight("s", F32(1.75))
    m.node("Mul", ["a", "b"], "ab")
    m.node("Sub", ["c", "d"], "cd")
    m.node("Add", ["s", "ab"], "sab")
    m.out("ab", (f64(a) * b).astype(F32))
    m.out("cd", (f64(c) - d).astype(F32))
    m.out("sab", (f64(a) * b + 1.75).astype(F32))


@case
def sub_mul_div(m, rng):
    a = m.inp("a", randn(rng, 2, 1, 3))
    b = m.inp("b", (uniform(rng, 0.5, 2.0, 1, 4, 1) * rng.choice([-1, 1], (1, 4, 1))).astype(F32))
    c = m.weight("c", randn(rng, 3))
    m.node("Sub", ["a", "b"], "sub")
    m.node("Mul", ["a", "c"], "mul")
    m.node("Div", ["a", "b"], "div")
    m.node("Div", ["c", "b"], "div2")
    m.out("sub", (f64(a) - b).astype(F32))
    m.out("mul", (f64(a) * c).astype(F32))
    m.out("div", (f64(a) / b).astype(F32))
    m.out("div2", (f64(c) / b).astype(F32), declare=False)


@case
def pow_f32(m, rng):
    x = m.inp("x", uniform(rng, 0.2, 3.0, 3, 4))
    y = m.inp("y", uniform(rng, -2.0, 2.5, 4))
    neg = m.inp("neg", uniform(rng, -3.0, -0.5, 2, 3))
    e = m.weight("e", np.array([2.0, 3.0, 0.0], dtype=F32))
    ei = m.weight("ei", np.array([[2], [3]], dtype=I64))
    m.node("Pow", ["x", "y"], "z")
    m.node("Pow", ["neg", "e"], "zn")
    m.node("Pow", ["neg", "ei"], "zi")
    m.out("z", np.power(f64(x), f64(y)).astype(F32))
    m.out("zn", np.power(f64(neg), f64(e)).astype(F32))
    m.out("zi", np.power(f64(neg), f64(ei)).astype(F32))


@case
def max_min_sum_variadic(m, rng):
    a = randn(rng, 2, 3, 1)
    a[1, 2, 0] = np.nan
    a = m.inp("a", a)
    b, c = m.inp("b", randn(rng, 1, 3, 4)), m.inp("c", randn(rng, 4))
    m.node("Max", ["a", "b", "c"], "mx")
    m.node("Min", ["a", "b", "c"], "mn")
    m.node("Sum", ["a", "b", "c"], "sm")
    m.node("Max", ["b"], "mx1")
    m.node("Min", ["b", "c"], "mn2")
    A, B, C = f64(a), f64(b), f64(c)
    m.out("mx", np.maximum(np.maximum(A, B), C).astype(F32))
    m.out("mn", np.minimum(np.minimum(A, B), C).astype(F32))
    m.out("sm", (A + B + C).astype(F32))
    m.out("mx1", b.copy())
    m.out("mn2", np.minimum(B, C).astype(F32))


@case
def compare_f32(m, rng):
    a = small_ints(rng, [-1, 0, 1, 2], (3, 1))
    a[2, 0] = np.nan
    a = m.inp("a", a)
    b = m.inp("b", small_ints(rng, [-1, 0, 1, 2, np.nan], (4,)))
    m.node("Equal", ["a", "b"], "eq")
    m.node("Less", ["a", "b"], "lt")
    m.node("Greater", ["a", "b"], "gt")
    m.out("eq", a == b)
    m.out("lt", a < b)
    m.out("gt", a > b)


@case
def compare_i64(m, rng):
    a = m.inp("a", small_ints(rng, [-3, 0, 5, 2 ** 40], (2, 1, 3), I64))
    b = m.weight("b", small_ints(rng, [-3, 0, 5, 2 ** 40], (4, 1), I64))
    m.node("Equal", ["a", "b"], "eq")
    m.node("Less", ["a", "b"], "lt")
    m.node("Greater", ["b", "a"], "gt")
    m.out("eq", a == b)
    m.out("lt", a < b)
    m.out("gt", b > a)


@case
def logic_bool(m, rng):
    a, b = m.inp("a", rng.random((2, 3)) < 0.5), m.inp("b", rng.random((3,)) < 0.5)
    m.node("And", ["a", "b"], "and")
    m.node("Or", ["a", "b"], "or")
    m.node("Not", ["a"], "not")
    m.node("Equal", ["a", "b"], "eq")
    m.node("Less", ["x", "y"], "lt")
    x, y = m.inp("x", randn(rng, 2, 3)), m.inp("y", randn(rng, 2, 3))
    m.node("Not", ["lt"], "ge")
    m.node("And", ["ge", "a"], "ge_and_a")
    m.out("and", a & b)
    m.out("or", a | b)
    m.out("not", ~a)
    m.out("eq", a == b)
    m.out("ge_and_a", ~(x < y) & a)


@case
def where_broadcast(m, rng):
    cond = m.inp("cond", rng.random((2, 1, 4)) < 0.5)
    x = m.inp("x", randn(rng, 3, 1))
    y = m.weight("y", F32(-0.25))
    xi = m.inp("xi", rng.integers(-100, 100, (4,)).astype(I64))
    yi = m.weight("yi", rng.integers(-100, 100, (3, 1)).astype(I64))
    m.node("Where", ["cond", "x", "y"], "z")
    m.node("Where", ["cond", "xi", "yi"], "zi")
    m.out("z", np.where(cond, x, y).astype(F32))
    m.out("zi", np.where(cond, xi, yi).astype(I64))


@case
def unary_math(m, rng):
    x = m.inp("x", randn(rng, 3, 5) * 2)
    p = m.inp("p", uniform(rng, 0.05, 9.0, 4, 4))
    r = m.inp("r", (uniform(rng, 0.2, 4.0, 7) * rng.choice([-1, 1], 7)).astype(F32))
    m.node("Neg", ["x"], "neg")
    m.node("Abs", ["x"], "abs")
    m.node("Sqrt", ["p"], "sqrt")
    m.node("Reciprocal", ["r"], "recip")
    m.node("Exp", ["x"], "exp")
    m.node("Log", ["p"], "log")
    m.out("neg", -x)
    m.out("abs", np.abs(x))
    m.out("sqrt", np.sqrt(f64(p)).astype(F32))
    m.out("recip", (1.0 / f64(r)).astype(F32))
    m.out("exp", np.exp(f64(x)).astype(F32))
    m.out("log", np.log(f64(p)).astype(F32))


@case
def erf_tanh_sigmoid(m, rng):
    x = randn(rng, 4, 6) * 2
    x[0, :6] = [-30, -12, -0.0, 0.0, 12, 30]
    x = m.inp("x", x)
    m.node("Erf", ["x"], "erf")
    m.node("Tanh", ["x"], "tanh")
    m.node("Sigmoid", ["x"], "sig")
    m.out("erf", erf_ref(x).astype(F32))
    m.out("tanh", np.tanh(f64(x)).astype(F32))
    m.out("sig", (1.0 / (1.0 + np.exp(-f64(x)))).astype(F32))


@case
def activations(m, rng):
    x = randn(rng, 5, 8) * 4
    x[0, :5] = [-40.0, 40.0, 0.0, -3.0, np.nan]
    x = m.inp("x", x)
    X = f64(x)
    m.node("Relu", ["x"], "relu")
    m.node("LeakyRelu", ["x"], "leaky_default")
    m.node("LeakyRelu", ["x"], "leaky", alpha=0.3)
    m.node("Elu", ["x"], "elu_default")
    m.node("Elu", ["x"], "elu", alpha=0.5)
    m.node("HardSigmoid", ["x"], "hsig_default")
    m.node("HardSigmoid", ["x"], "hsig", alpha=0.3, beta=0.4)
    m.node("HardSwish", ["x"], "hswish")
    m.node("Softplus", ["x"], "softplus")
    m.out("relu", np.maximum(X, 0).astype(F32))
    m.out("leaky_default", np.where(X < 0, 0.01 * X, X).astype(F32))
    m.out("leaky", np.where(X < 0, 0.3 * X, X).astype(F32))
    m.out("elu_default", np.where(X < 0, np.exp(X) - 1, X).astype(F32))
    m.out("elu", np.where(X < 0, 0.5 * (np.exp(X) - 1), X).astype(F32))
    m.out("hsig_default", np.clip(0.2 * X + 0.5, 0, 1).astype(F32))
    m.out("hsig", np.clip(0.3 * X + 0.4, 0, 1).astype(F32))
    m.out("hswish", (X * np.clip(X / 6 + 0.5, 0, 1)).astype(F32))
    m.out("softplus", np.log1p(np.exp(X)).astype(F32))


@case
def clip(m, rng):
    x = randn(rng, 3, 7) * 3
    x[1, 1] = np.nan
    x = m.inp("x", x)
    xi = m.inp("xi", rng.integers(-50, 50, (10,)).astype(I32))
    m.weight("lo", F32(-1.5))
    m.weight("hi", F32(2.25))
    m.weight("ilo", I32(-7))
    m.weight("ihi", I32(20))
    m.node("Clip", ["x", "lo", "hi"], "both")
    m.node("Clip", ["x", "", "hi"], "only_max")
    m.node("Clip", ["x", "lo"], "only_min")
    m.node("Clip", ["x"], "none")
    m.node("Clip", ["xi", "ilo", "ihi"], "ints")
    m.out("both", np.clip(x, F32(-1.5), F32(2.25)))
    m.out("only_max", np.minimum(x, F32(2.25)))
    m.out("only_min", np.maximum(x, F32(-1.5)))
    m.out("none", x.copy())
    m.out("ints", np.clip(xi, -7, 20).astype(I32))


@case
def elementwise_f64(m, rng):
    a = m.inp("a", rng.standard_normal((3, 1, 4)))
    b = m.inp("b", rng.uniform(0.5, 3.0, (2, 4)))
    m.node("Add", ["a", "b"], "add")
    m.node("Mul", ["a", "b"], "mul")
    m.node("Div", ["a", "b"], "div")
    m.node("Exp", ["a"], "exp")
    m.node("Tanh", ["a"], "tanh")
    m.node("Sqrt", ["b"], "sqrt")
    m.node("Erf", ["a"], "erf")
    m.node("Sigmoid", ["a"], "sig")
    m.out("add", a + b)
    m.out("mul", a * b)
    m.out("div", a / b)
    m.out("exp", np.exp(a))
    m.out("tanh", np.tanh(a))
    m.out("sqrt", np.sqrt(b))
    m.out("erf", erf_ref(a))
    m.out("sig", 1.0 / (1.0 + np.exp(-a)))
    m.tol = {"rtol": 1e-12, "atol": 1e-14}


def integer_case(m, rng, dt):
    a = rng.integers(-1000, 1000, (2, 1, 6)).astype(dt)
    a[0, 0, :4] = [7, -7, 7, -7]
    b = rng.integers(1, 30, (3, 6)) * rng.choice([-1, 1], (3, 6))
    b[0, :4] = [2, 2, -2, -2]
    a, b = m.inp("a", a), m.inp("b", b.astype(dt))
    for op in ("Add", "Sub", "Mul", "Div", "Max", "Min"):
        m.node(op, ["a", "b"], op.lower())
    m.node("Neg", ["a"], "neg")
    m.node("Abs", ["a"], "abs")
    A, B = a.astype(I64), b.astype(I64)
    m.out("add", (A + B).astype(dt))
    m.out("sub", (A - B).astype(dt))
    m.out("mul", (A * B).astype(dt))
    m.out("div", trunc_div(A, B).astype(dt))
    m.out("max", np.maximum(A, B).astype(dt))
    m.out("min", np.minimum(A, B).astype(dt))
    m.out("neg", (-A).astype(dt))
    m.out("abs", np.abs(A).astype(dt))
    return A, B


@case
def elementwise_i32(m, rng):
    integer_case(m, rng, I32)


@case
def elementwise_i64(m, rng):
    integer_case(m, rng, I64)
    big = m.inp("big", np.array([2 ** 40 + 1, -(2 ** 50) - 3, 2 ** 62, -5], dtype=I64))
    e = m.weight("e", np.array([1, 1, 0, 3], dtype=I64))
    m.weight("three", np.array(3, dtype=I64))
    m.node("Pow", ["big", "e"], "pow")
    m.node("Div", ["big", "three"], "div3")
    m.node("Add", ["big", "three"], "add3")
    m.out("pow", np.array([int(x) ** int(y) for x, y in zip(big, e)], dtype=I64))
    m.out("div3", trunc_div(big, 3).astype(I64))
    m.out("add3", np.array([int(x) + 3 for x in big], dtype=I64))


@case
def cast_float_to_int(m, rng):
    vals = [np.nan, np.inf, -np.inf, 3e9, -3e9, 2.7, -2.7, 0.5, -0.5, 2147483520.0,
            2147483648.0, -2147483648.0, 1e20, -1e20, 255.9, 256.0, -129.0, 127.99, 0.0, -0.0]
    x = m.inp("x", np.array(vals, dtype=F32))
    for to, dt in (("i32", I32), ("i64", I64), ("u8", np.uint8), ("i8", np.int8), ("i16", np.int16)):
        m.node("Cast", ["x"], "to_" + to, to=to)
        m.out("to_" + to, saturate_cast(x, dt))
    d = m.inp("d", np.array([1e300, -1e300, np.nan, 4294967295.5, -1.5], dtype=F64))
    m.node("Cast", ["d"], "d_to_i32", to="i32")
    m.out("d_to_i32", saturate_cast(d, I32))


@case
def cast_misc(m, rng):
    i = m.inp("i", np.array([0, 1, -7, 2 ** 24 + 1, 2 ** 40 + 3, -(2 ** 53) - 1], dtype=I64))
    x = randn(rng, 2, 5) * 100
    x[0, :3] = [0.0, -0.0, 65519.0]
    x = m.inp("x", x)
    d = m.inp("d", rng.standard_normal(6) * 1e3)
    bl = m.inp("bl", np.array([True, False, True]))
    i32 = m.inp("i32", np.array([-2 ** 31, 2 ** 31 - 1, 0, 12345], dtype=I32))
    small = m.inp("small", np.array([-2 ** 31, 2 ** 31 - 1, -3, 0], dtype=I64))
    m.node("Cast", ["i"], "i_f32", to="f32")
    m.node("Cast", ["x"], "x_f64", to="f64")
    m.node("Cast", ["d"], "d_f32", to="f32")
    m.node("Cast", ["bl"], "bl_f32", to="f32")
    m.node("Cast", ["x"], "x_bool", to="bool")
    m.node("Cast", ["i32"], "i32_i64", to="i64")
    m.node("Cast", ["small"], "small_i32", to="i32")
    m.node("Cast", ["x"], "x_f16", to="f16")
    m.node("Cast", ["x"], "x_f32", to="f32")
    m.out("i_f32", i.astype(F32))
    m.out("x_f64", x.astype(F64))
    m.out("d_f32", d.astype(F32))
    m.out("bl_f32", bl.astype(F32))
    m.out("x_bool", x != 0)
    m.out("i32_i64", i32.astype(I64))
    m.out("small_i32", small.astype(I32))
    m.out("x_f16", x.astype(F16))
    m.out("x_f32", x.copy())
    m.tol = {"rtol": 0.0, "atol": 0.0}   # conversions are exact or correctly rounded


@case
def f16_via_cast(m, rng):
    x = m.inp("x", randn(rng, 3, 8))
    w = m.weight("w", randn(rng, 8).astype(F16))
    y = m.inp("y", randn(rng, 3, 1).astype(F16))
    m.node("Cast", ["x"], "xh", to="f16")
    m.node("Add", ["xh", "w"], "s")
    m.node("Mul", ["s", "y"], "p")
    m.node("Relu", ["p"], "r")
    m.node("Cast", ["r"], "out", to="f32")
    s = (x.astype(F16).astype(F32) + w.astype(F32)).astype(F16)
    p = (s.astype(F32) * y.astype(F32)).astype(F16)
    m.out("out", np.maximum(p, 0).astype(F32))
    m.tol = {"rtol": 2e-3, "atol": 2e-3}


@case
def f16_io(m, rng):
    a = m.inp("a", randn(rng, 2, 5).astype(F16))
    b = m.inp("b", randn(rng, 5).astype(F16))
    m.node("Add", ["a", "b"], "s")
    m.node("Sigmoid", ["s"], "sig")
    s = (a.astype(F64) + b.astype(F64)).astype(F16)
    m.out("s", s)
    m.out("sig", (1.0 / (1.0 + np.exp(-s.astype(F64)))).astype(F16))
    m.tol = {"rtol": 1e-3, "atol": 1e-3}


@case
def identity(m, rng):
    x = m.inp("x", randn(rng, 2, 3))
    xi = m.inp("xi", rng.integers(-9, 9, (4,)).astype(I64))
    m.node("Identity", ["x"], "y1")
    m.node("Identity", ["y1"], "y2")
    m.node("Identity", ["xi"], "yi")
    m.node("Relu", ["y2"], "r")
    m.out("y2", x.copy())
    m.out("yi", xi.copy())
    m.out("r", np.maximum(x, 0))


@case
def float_specials(m, rng):
    x = m.inp("x", np.array([1.0, -1.0, 0.0, -0.0, 2.5, np.inf, -np.inf, np.nan], dtype=F32))
    z = m.weight("z", np.array([0.0, 0.0, 0.0, -0.0, np.inf, np.inf, 2.0, 1.0], dtype=F32))
    big = m.inp("big", np.array([100.0, -200.0, 88.0, 89.0], dtype=F32))
    m.node("Div", ["x", "z"], "div")
    m.node("Log", ["x"], "log")
    m.node("Sqrt", ["x"], "sqrt")
    m.node("Reciprocal", ["x"], "recip")
    m.node("Exp", ["big"], "exp")
    m.node("Sigmoid", ["x"], "sig")
    m.node("Tanh", ["x"], "tanh")
    m.node("Relu", ["x"], "relu")
    X, Z = f64(x), f64(z)
    with np.errstate(all="ignore"):
        m.out("div", (X / Z).astype(F32))
        m.out("log", np.log(X).astype(F32))
        m.out("sqrt", np.sqrt(X).astype(F32))
        m.out("recip", (1.0 / X).astype(F32))
        m.out("exp", np.exp(f64(big)).astype(F32))
        m.out("sig", (1.0 / (1.0 + np.exp(-X))).astype(F32))
    m.out("tanh", np.tanh(X).astype(F32))
    m.out("relu", np.maximum(X, 0).astype(F32))


@case
def clip_min_above_max(m, rng):
    x = m.inp("x", np.array([-3.0, 0.0, 1.5, 2.0, 5.0], dtype=F32))
    m.weight("lo", F32(2.0))
    m.weight("hi", F32(1.0))
    m.node("Clip", ["x", "lo", "hi"], "y")
    m.out("y", np.minimum(np.maximum(x, F32(2.0)), F32(1.0)))   # ONNX: min(max(x, lo), hi)


@case
def cast_f16_rounding(m, rng):
    e = 2.0 ** -11
    vals = [1.0 + e, 1.0 + 3 * e, 1.0 + e + e / 4, 65504.0, 65519.0, 65520.0, 1e5, -1e5, 1e-6, 6e-8,
            2e-8, -3e-8, 5.960464477539063e-08, np.inf, -np.inf, np.nan, -0.0, 0.1, 1 / 3, 2048.5]
    x = m.inp("x", np.array(vals, dtype=F32))
    h = m.inp("h", np.array([1e-7, 6.1e-5, 3e-5, 65504, -2.5, np.inf, np.nan, 0.1], dtype=F16))
    m.node("Cast", ["x"], "to_f16", to="f16")
    m.node("Cast", ["h"], "to_f32", to="f32")
    m.node("Cast", ["h"], "to_f64", to="f64")
    with np.errstate(over="ignore"):
        m.out("to_f16", x.astype(F16))      # numpy rounds to nearest even; 65520 and up -> inf
    m.out("to_f32", h.astype(F32))
    m.out("to_f64", h.astype(F64))
    m.tol = {"rtol": 0.0, "atol": 0.0}


@case
def storage_widths(m, rng):
    """Data movement on every element width (LESSONS: storage width is never
    guessed from a 4-byte default)."""
    b = m.inp("b", rng.random((2, 3, 4)) < 0.5)
    h = m.inp("h", randn(rng, 2, 3).astype(F16))
    d = m.inp("d", rng.standard_normal((5, 3)))
    u = m.inp("u", rng.integers(0, 256, (4, 6)).astype(np.uint8))
    i8 = m.inp("i8", rng.integers(-128, 128, (3, 4)).astype(np.int8))
    i64 = m.inp("i64", (rng.integers(-2 ** 62, 2 ** 62, (6, 2))).astype(I64))
    m.ints("idx", [4, -1, 0])
    m.ints("st", [1, 5])
    m.ints("en", [4, 0])
    m.ints("ax", [0, 1])
    m.ints("sp", [1, -2])
    m.ints("pads", [1, 0, 0, 2])
    m.ints("shape", [4, 6])
    m.ints("sizes", [4, 2])
    m.node("Transpose", ["b"], "b_t", perm=[2, 0, 1])
    m.node("Concat", ["h", "h"], "h_cat", axis=0)
    m.node("Gather", ["d", "idx"], "d_gather")
    m.node("Slice", ["u", "st", "en", "ax", "sp"], "u_slice")
    m.node("Pad", ["i8", "pads"], "i8_pad", mode="edge")
    m.node("Split", ["i64", "sizes"], ["i64_a", "i64_b"])
    m.node("Reshape", ["b", "shape"], "b_reshape")
    m.node("Where", ["b_t", "b_t", "b_t"], "b_where")
    m.node("Transpose", ["i64"], "i64_t")
    m.out("b_t", b.transpose(2, 0, 1).copy())
    m.out("h_cat", np.concatenate([h, h], axis=0))
    m.out("d_gather", gather_ref(d, [4, -1, 0], 0))
    m.out("u_slice", slice_ref(u, [1, 5], [4, 0], [0, 1], [1, -2]))
    m.out("i8_pad", np.pad(i8, [(1, 0), (0, 2)], mode="edge"))
    m.out("i64_a", i64[:4].copy())
    m.out("i64_b", i64[4:].copy())
    m.out("b_reshape", b.reshape(4, 6))
    m.out("b_where", b.transpose(2, 0, 1).copy())
    m.out("i64_t", i64.T.copy())
    m.tol = {"rtol": 0.0, "atol": 0.0}


# ----------------------------------------------------------------------------
# Linear algebra
# ----------------------------------------------------------------------------

@case
def matmul_2d(m, rng):
    a = m.inp("a", randn(rng, 3, 5))
    w = m.weight("w", randn(rng, 5, 4))
    m.node("MatMul", ["a", "w"], "y")
    m.out("y", (f64(a) @ f64(w)).astype(F32))


@case
def matmul_batched_broadcast(m, rng):
    a = m.inp("a", randn(rng, 2, 1, 3, 4))
    b = m.inp("b", randn(rng, 5, 4, 2))
    c = m.inp("c", randn(rng, 3, 2, 6))
    w = m.weight("w", randn(rng, 6, 3))
    m.node("MatMul", ["a", "b"], "ab")
    m.node("MatMul", ["c", "w"], "cw")
    m.out("ab", np.matmul(f64(a), f64(b)).astype(F32))
    m.out("cw", np.matmul(f64(c), f64(w)).astype(F32))


@case
def matmul_1d(m, rng):
    v = m.inp("v", randn(rng, 4))
    b = m.inp("b", randn(rng, 2, 4, 3))
    a = m.inp("a", randn(rng, 2, 3, 4))
    u = m.weight("u", randn(rng, 4))
    m.node("MatMul", ["v", "b"], "vb")
    m.node("MatMul", ["a", "v"], "av")
    m.node("MatMul", ["v", "u"], "vu")
    m.out("vb", np.matmul(f64(v), f64(b)).astype(F32))
    m.out("av", np.matmul(f64(a), f64(v)).astype(F32))
    m.out("vu", np.array(np.matmul(f64(v), f64(u)), dtype=F32))


@case
def gemm_trans(m, rng):
    a = m.inp("a", randn(rng, 5, 3))       # transA: op(A) is [3, 5]
    b = m.weight("b", randn(rng, 4, 5))    # transB: op(B) is [5, 4]
    c = m.weight("c", randn(rng, 4))
    m.node("Gemm", ["a", "b", "c"], "y", transA=1, transB=1, alpha=0.5, beta=2.0)
    m.node("Gemm", ["b", "a"], "y2", alpha=-1.25)
    m.out("y", (0.5 * f64(a).T @ f64(b).T + 2.0 * f64(c)).astype(F32))
    m.out("y2", (-1.25 * f64(b) @ f64(a)).astype(F32))


@case
def gemm_c_broadcast(m, rng):
    a = m.inp("a", randn(rng, 3, 6))
    b = m.inp("b", randn(rng, 6, 4))
    c_col = m.weight("c_col", randn(rng, 3, 1))
    c_row = m.weight("c_row", randn(rng, 1, 4))
    c_full = m.inp("c_full", randn(rng, 3, 4))
    c_scalar = m.weight("c_scalar", F32(0.75))
    m.node("Gemm", ["a", "b", "c_col"], "col", beta=0.5)
    m.node("Gemm", ["a", "b", "c_row"], "row")
    m.node("Gemm", ["a", "b", "c_full"], "full", alpha=2.0, beta=-1.0)
    m.node("Gemm", ["a", "b", "c_scalar"], "scalar")
    m.node("Gemm", ["a", "b", ""], "noc", transA=0)
    ab = f64(a) @ f64(b)
    m.out("col", (ab + 0.5 * f64(c_col)).astype(F32))
    m.out("row", (ab + f64(c_row)).astype(F32))
    m.out("full", (2.0 * ab - f64(c_full)).astype(F32))
    m.out("scalar", (ab + 0.75).astype(F32))
    m.out("noc", ab.astype(F32))


@case
def matmul_odd_sizes(m, rng):
    a = m.inp("a", randn(rng, 2, 37, 53))
    w = m.weight("w", randn(rng, 53, 29))
    bt = m.inp("bt", randn(rng, 29, 53))
    m.node("MatMul", ["a", "w"], "y")
    m.node("Transpose", ["bt"], "b")
    m.node("MatMul", ["a", "b"], "y_t")      # a transpose that can fold into the GEMM
    m.node("Gemm", ["a2", "bt"], "g", transB=1, alpha=0.125)
    a2 = m.inp("a2", randn(rng, 65, 53))
    m.out("y", (f64(a) @ f64(w)).astype(F32))
    m.out("y_t", (f64(a) @ f64(bt).T).astype(F32))
    m.out("g", (0.125 * f64(a2) @ f64(bt).T).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


# ----------------------------------------------------------------------------
# Convolution and pooling
# ----------------------------------------------------------------------------

@case
def conv_bias_pads(m, rng):
    x = m.inp("x", randn(rng, 1, 3, 7, 7))
    w = m.weight("w", randn(rng, 4, 3, 3, 3))
    b = m.weight("b", randn(rng, 4))
    m.node("Conv", ["x", "w", "b"], "y", pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    m.node("Conv", ["x", "w"], "y_nopad")
    m.out("y", conv_ref(x, w, b, pads=(1, 1, 1, 1)).astype(F32))
    m.out("y_nopad", conv_ref(x, w).astype(F32))


@case
def conv_strides_dilations(m, rng):
    x = m.inp("x", randn(rng, 2, 2, 8, 9))
    w = m.weight("w", randn(rng, 3, 2, 3, 2))
    m.node("Conv", ["x", "w"], "y", strides=[2, 1], dilations=[1, 2], pads=[1, 0, 2, 1])
    m.out("y", conv_ref(x, w, strides=(2, 1), dilations=(1, 2), pads=(1, 0, 2, 1)).astype(F32))


@case
def conv_groups(m, rng):
    x = m.inp("x", randn(rng, 2, 4, 6, 6))
    w = m.weight("w", randn(rng, 6, 2, 3, 3))
    b = m.weight("b", randn(rng, 6))
    wd = m.weight("wd", randn(rng, 4, 1, 3, 3))
    m.node("Conv", ["x", "w", "b"], "grouped", group=2, pads=[1, 1, 1, 1])
    m.node("Conv", ["x", "wd"], "depthwise", group=4, strides=[2, 2])
    m.out("grouped", conv_ref(x, w, b, pads=(1, 1, 1, 1), group=2).astype(F32))
    m.out("depthwise", conv_ref(x, wd, strides=(2, 2), group=4).astype(F32))


@case
def conv_same_upper(m, rng):
    x = m.inp("x", randn(rng, 1, 2, 7, 6))
    w = m.weight("w", randn(rng, 3, 2, 4, 3))
    b = m.weight("b", randn(rng, 3))
    m.node("Conv", ["x", "w", "b"], "same", auto_pad="SAME_UPPER", strides=[2, 2])
    m.node("Conv", ["x", "w"], "same1", auto_pad="SAME_UPPER")
    m.node("Conv", ["x", "w"], "valid", auto_pad="VALID", strides=[1, 2])
    p2 = same_pads((7, 6), (4, 3), (2, 2), (1, 1))
    p1 = same_pads((7, 6), (4, 3), (1, 1), (1, 1))
    m.out("same", conv_ref(x, w, b, strides=(2, 2), pads=p2).astype(F32))
    m.out("same1", conv_ref(x, w, pads=p1).astype(F32))
    m.out("valid", conv_ref(x, w, strides=(1, 2)).astype(F32))


@case
def conv_same_lower(m, rng):
    x = m.inp("x", randn(rng, 1, 1, 5, 6))
    w = m.weight("w", randn(rng, 2, 1, 2, 4))
    m.node("Conv", ["x", "w"], "y", auto_pad="SAME_LOWER")
    m.out("y", conv_ref(x, w, pads=same_pads((5, 6), (2, 4), (1, 1), (1, 1), upper=False)).astype(F32))


@case
def conv_1x1(m, rng):
    x = m.inp("x", randn(rng, 2, 5, 4, 5))
    w = m.weight("w", randn(rng, 7, 5, 1, 1))
    b = m.weight("b", randn(rng, 7))
    m.node("Conv", ["x", "w", "b"], "y")
    m.node("Conv", ["x", "w"], "y_s2", strides=[2, 2])
    m.out("y", conv_ref(x, w, b).astype(F32))
    m.out("y_s2", conv_ref(x, w, strides=(2, 2)).astype(F32))


@case
def maxpool_basic(m, rng):
    x = m.inp("x", randn(rng, 1, 2, 6, 6))
    m.node("MaxPool", ["x"], "y", kernel_shape=[2, 2], strides=[2, 2])
    m.node("MaxPool", ["x"], "y_s1", kernel_shape=[3, 2])
    m.out("y", pool_ref(x, "max", (2, 2), strides=(2, 2)).astype(F32))
    m.out("y_s1", pool_ref(x, "max", (3, 2)).astype(F32))


@case
def maxpool_pads_strides(m, rng):
    x = m.inp("x", -uniform(rng, 0.5, 5.0, 2, 3, 7, 6))   # all negative: padding must act as -inf
    m.node("MaxPool", ["x"], "y", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    m.node("MaxPool", ["x"], "y_asym", kernel_shape=[2, 3], strides=[1, 2], pads=[0, 2, 1, 0])
    m.out("y", pool_ref(x, "max", (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)).astype(F32))
    m.out("y_asym", pool_ref(x, "max", (2, 3), strides=(1, 2), pads=(0, 2, 1, 0)).astype(F32))


@case
def maxpool_ceil_dilations(m, rng):
    x = m.inp("x", randn(rng, 1, 2, 6, 7))
    m.node("MaxPool", ["x"], "ceil", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    m.node("MaxPool", ["x"], "floor", kernel_shape=[3, 3], strides=[2, 2])
    m.node("MaxPool", ["x"], "dil", kernel_shape=[2, 2], dilations=[2, 2])
    m.out("ceil", pool_ref(x, "max", (3, 3), strides=(2, 2), ceil_mode=1).astype(F32))
    m.out("floor", pool_ref(x, "max", (3, 3), strides=(2, 2)).astype(F32))
    m.out("dil", pool_ref(x, "max", (2, 2), dilations=(2, 2)).astype(F32))


@case
def maxpool_indices(m, rng):
    """The optional second output: ONNX counts indices over the whole input
    tensor, [0, N*C*H*W), row-major, ignoring padding."""
    n_, c_, h, w = 2, 2, 5, 6
    x = m.inp("x", randn(rng, n_, c_, h, w))
    m.node("MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 3], strides=[2, 2], pads=[1, 1, 0, 1])
    y = pool_ref(x, "max", (2, 3), strides=(2, 2), pads=(1, 1, 0, 1))
    idx = np.zeros(y.shape, dtype=I64)
    for n in range(n_):
        for c in range(c_):
            for i in range(y.shape[2]):
                for j in range(y.shape[3]):
                    best = None
                    for p in range(2):
                        for q in range(3):
                            r, s = i * 2 + p - 1, j * 2 + q - 1
                            if 0 <= r < h and 0 <= s < w and (best is None or x[n, c, r, s] > x[n, c, best[0], best[1]]):
                                best = (r, s)
                    idx[n, c, i, j] = ((n * c_ + c) * h + best[0]) * w + best[1]
    m.out("y", y.astype(F32))
    m.out("idx", idx)


@case
def avgpool_count_include_pad(m, rng):
    x = m.inp("x", randn(rng, 1, 2, 5, 5))
    m.node("AveragePool", ["x"], "excl", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    m.node("AveragePool", ["x"], "incl", kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1)
    m.node("AveragePool", ["x"], "incl_asym", kernel_shape=[2, 3], strides=[2, 1], pads=[0, 2, 1, 1],
           count_include_pad=1)
    m.out("excl", pool_ref(x, "avg", (3, 3), pads=(1, 1, 1, 1)).astype(F32))
    m.out("incl", pool_ref(x, "avg", (3, 3), pads=(1, 1, 1, 1), count_include_pad=1).astype(F32))
    m.out("incl_asym", pool_ref(x, "avg", (2, 3), strides=(2, 1), pads=(0, 2, 1, 1),
                                count_include_pad=1).astype(F32))


@case
def avgpool_strides_ceil(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 7, 8))
    m.node("AveragePool", ["x"], "ceil", kernel_shape=[2, 3], strides=[2, 2], ceil_mode=1)
    m.node("AveragePool", ["x"], "pads", kernel_shape=[3, 2], strides=[2, 3], pads=[0, 1, 1, 0])
    m.out("ceil", pool_ref(x, "avg", (2, 3), strides=(2, 2), ceil_mode=1).astype(F32))
    m.out("pads", pool_ref(x, "avg", (3, 2), strides=(2, 3), pads=(0, 1, 1, 0)).astype(F32))


@case
def global_avgpool(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 5, 4))
    m.node("GlobalAveragePool", ["x"], "y")
    m.out("y", f64(x).mean(axis=(2, 3), keepdims=True).astype(F32))


@case
def conv_larger(m, rng):
    x = m.inp("x", randn(rng, 1, 16, 19, 17))
    w = m.weight("w", randn(rng, 24, 16, 3, 3) * 0.2)
    b = m.weight("b", randn(rng, 24))
    m.node("Conv", ["x", "w", "b"], "c", pads=[1, 1, 1, 1])
    m.node("Relu", ["c"], "y")
    m.out("y", np.maximum(conv_ref(x, w, b, pads=(1, 1, 1, 1)), 0).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


@case
def conv_winograd(m, rng):
    """3x3 stride-1 convolutions wide enough that rlxc picks Winograd
    (rk_wino.c): a fused bias + residual + ReLU, asymmetric pads, a batch."""
    x = m.inp("x", randn(rng, 2, 16, 13, 11))
    r = m.inp("r", randn(rng, 2, 24, 13, 11))
    w = m.weight("w", randn(rng, 24, 16, 3, 3) * 0.2)
    b = m.weight("b", randn(rng, 24))
    m.node("Conv", ["x", "w", "b"], "c", pads=[1, 1, 1, 1])
    m.node("Add", ["c", "r"], "s")
    m.node("Relu", ["s"], "y")
    m.node("Conv", ["x", "w"], "asym", pads=[0, 2, 1, 0])
    m.out("y", np.maximum(conv_ref(x, w, b, pads=(1, 1, 1, 1)) + f64(r), 0).astype(F32))
    m.out("asym", conv_ref(x, w, pads=(0, 2, 1, 0)).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


@case
def conv_stem_few_channels(m, rng):
    """First layers over 3 input channels, which run direct with AVX-512
    (rk_convgemm.c method 2) and as a GEMM elsewhere: 7x7 stride 2 pads 3 with
    bias + Relu, 3x3 stride 2 pads 1 with Clip, widths that leave a ragged
    last strip, a batch of 2."""
    x = m.inp("x", randn(rng, 2, 3, 30, 37))
    w7 = m.weight("w7", randn(rng, 16, 3, 7, 7) * 0.1)
    b7 = m.weight("b7", randn(rng, 16))
    m.node("Conv", ["x", "w7", "b7"], "c7", strides=[2, 2], pads=[3, 3, 3, 3])
    m.node("Relu", ["c7"], "y7")
    w3 = m.weight("w3", randn(rng, 32, 3, 3, 3) * 0.3)
    b3 = m.weight("b3", randn(rng, 32))
    m.weight("lo", F32(0.0))
    m.weight("hi", F32(6.0))
    m.node("Conv", ["x", "w3", "b3"], "c3", strides=[2, 2], pads=[1, 1, 1, 1])
    m.node("Clip", ["c3", "lo", "hi"], "y3")
    m.out("y7", np.maximum(conv_ref(x, w7, b7, strides=(2, 2), pads=(3, 3, 3, 3)), 0).astype(F32))
    m.out("y3", np.clip(conv_ref(x, w3, b3, strides=(2, 2), pads=(1, 1, 1, 1)), 0, 6).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


@case
def conv_stem_maxpool(m, rng):
    """A 3x3 stride-2 first layer over 3 channels + Relu and the max pooling
    that reads it (SqueezeNet's), which the C target runs as one kernel in
    bands of pooled rows (prepare_c.c, rk_conv.c conv_pool_f32): ceil mode,
    a batch of 2, a plane of 18 x 20; beside it the same pair with pads whose
    plane is also a graph output, which stays two kernels."""
    x = m.inp("x", randn(rng, 2, 3, 37, 41))
    w = m.weight("w", randn(rng, 32, 3, 3, 3) * 0.3)
    b = m.weight("b", randn(rng, 32))
    m.node("Conv", ["x", "w", "b"], "c", strides=[2, 2])
    m.node("Relu", ["c"], "r")
    m.node("MaxPool", ["r"], "y", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    w2 = m.weight("w2", randn(rng, 16, 3, 3, 3) * 0.3)
    m.node("Conv", ["x", "w2"], "plane", strides=[2, 2], pads=[1, 1, 1, 1])
    m.node("MaxPool", ["plane"], "y2", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    r = np.maximum(conv_ref(x, w, b, strides=(2, 2)), 0)
    plane = conv_ref(x, w2, strides=(2, 2), pads=(1, 1, 1, 1))
    m.out("y", pool_ref(r, "max", (3, 3), strides=(2, 2), ceil_mode=1).astype(F32))
    m.out("plane", plane.astype(F32))
    m.out("y2", pool_ref(plane, "max", (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


@case
def conv_small_plane_transposed(m, rng):
    """Convolutions on 7x7 output planes with many channels, where rlxc runs
    the GEMM transposed (rk_convgemm.c, a_packed = 2): a 1x1 with bias,
    residual and Clip(0, 6), a 3x3 stride 2 (im2col), and two groups."""
    x = m.inp("x", randn(rng, 2, 320, 7, 7))
    r = m.inp("r", randn(rng, 2, 128, 7, 7))
    w = m.weight("w", randn(rng, 128, 320, 1, 1) * 0.05)
    b = m.weight("b", randn(rng, 128))
    m.node("Conv", ["x", "w", "b"], "c")
    m.node("Add", ["c", "r"], "s")
    m.node("Clip", ["s", "lo", "hi"], "y")
    m.weight("lo", np.array(0.0, dtype=F32))
    m.weight("hi", np.array(6.0, dtype=F32))
    x2 = m.inp("x2", randn(rng, 1, 64, 13, 13))
    w2 = m.weight("w2", randn(rng, 96, 64, 3, 3) * 0.05)
    m.node("Conv", ["x2", "w2"], "s2", strides=[2, 2], pads=[1, 1, 1, 1])
    wg = m.weight("wg", randn(rng, 256, 160, 1, 1) * 0.05)
    m.node("Conv", ["x", "wg"], "g2", group=2)
    m.out("y", np.clip(conv_ref(x, w, b) + f64(r), 0, 6).astype(F32))
    m.out("s2", conv_ref(x2, w2, strides=(2, 2), pads=(1, 1, 1, 1)).astype(F32))
    m.out("g2", conv_ref(x, wg, group=2).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


# ----------------------------------------------------------------------------
# Normalization
# ----------------------------------------------------------------------------

@case
def batchnorm(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4, 5))
    s, b = m.weight("s", randn(rng, 3)), m.weight("b", randn(rng, 3))
    mu, var = m.weight("mu", randn(rng, 3)), m.weight("var", uniform(rng, 0.1, 2.0, 3))
    x2 = m.inp("x2", randn(rng, 5, 3))
    m.node("BatchNormalization", ["x", "s", "b", "mu", "var"], "y", epsilon=1e-3)
    m.node("BatchNormalization", ["x2", "s", "b", "mu", "var"], "y2")
    m.out("y", batchnorm_ref(x, s, b, mu, var, 1e-3).astype(F32))
    m.out("y2", batchnorm_ref(x2, s, b, mu, var, 1e-5).astype(F32))


@case
def layernorm_last_axis(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 8) * 3 + 1)
    s, b = m.weight("s", randn(rng, 8)), m.weight("b", randn(rng, 8))
    m.node("LayerNormalization", ["x", "s", "b"], "y")
    m.node("LayerNormalization", ["x", "s"], "y_nobias", epsilon=0.1)
    m.out("y", layernorm_ref(x, s, b, -1, 1e-5).astype(F32))
    m.out("y_nobias", layernorm_ref(x, s, None, -1, 0.1).astype(F32))


@case
def layernorm_multi_axis(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4, 5))
    s = m.weight("s", randn(rng, 3, 4, 5))
    b = m.weight("b", randn(rng, 4, 5))
    m.node("LayerNormalization", ["x", "s"], "y", axis=1, epsilon=1e-3)
    m.node("LayerNormalization", ["x", "s2", "b"], "y2", axis=-2)
    m.weight("s2", s[0])
    m.out("y", layernorm_ref(x, s, None, 1, 1e-3).astype(F32))
    m.out("y2", layernorm_ref(x, s[0], b, -2, 1e-5).astype(F32))


@case
def softmax_axes(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 5) * 3 + np.array([0, 1000, -1000], dtype=F32).reshape(1, 3, 1))
    m.node("Softmax", ["x"], "last")
    m.node("Softmax", ["x"], "mid", axis=1)
    m.node("LogSoftmax", ["x"], "log_last", axis=-1)
    m.node("LogSoftmax", ["x"], "log_first", axis=0)
    m.out("last", softmax_ref(x, -1).astype(F32))
    m.out("mid", softmax_ref(x, 1).astype(F32))
    m.out("log_last", log_softmax_ref(x, -1).astype(F32))
    m.out("log_first", log_softmax_ref(x, 0).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}   # log-softmax of inputs near +-1000 loses digits in f32


@case
def layernorm_large_offset(m, rng):
    """A small variance on a large mean: a one-pass E[x^2] - E[x]^2 variance in
    f32 would be off by about 10%."""
    x = m.inp("x", (100 + randn(rng, 4, 8) * 0.1).astype(F32))
    s, b = m.weight("s", np.ones(8, dtype=F32)), m.weight("b", np.zeros(8, dtype=F32))
    m.node("LayerNormalization", ["x", "s", "b"], "y")
    m.out("y", layernorm_ref(x, s, b, -1, 1e-5).astype(F32))
    m.tol = {"rtol": 2e-3, "atol": 2e-3}


@case
def layernorm_stats(m, rng):
    """The optional Mean and InvStdDev outputs, shaped dims[:axis] + [1]*(rank-axis)."""
    x = m.inp("x", randn(rng, 2, 3, 4) * 2 + 0.5)
    s, b = m.weight("s", randn(rng, 3, 4)), m.weight("b", randn(rng, 3, 4))
    m.node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv_std"], axis=1, epsilon=1e-3)
    X = f64(x)
    mean = X.mean(axis=(1, 2), keepdims=True)
    var = ((X - mean) ** 2).mean(axis=(1, 2), keepdims=True)
    m.out("y", layernorm_ref(x, s, b, 1, 1e-3).astype(F32))
    m.out("mean", mean.astype(F32))
    m.out("inv_std", (1 / np.sqrt(var + 1e-3)).astype(F32))


@case
def softmax_legacy_2d(m, rng):
    """legacy_2d=1 (what the importer sets for ONNX < 13): softmax over the
    flattened dims[axis:]."""
    x = m.inp("x", randn(rng, 2, 3, 4) * 2)
    m.node("Softmax", ["x"], "sm", axis=1, legacy_2d=1)
    m.node("LogSoftmax", ["x"], "lsm", axis=1, legacy_2d=1)
    m.node("Softmax", ["x"], "sm0", axis=0, legacy_2d=1)
    m.out("sm", softmax_ref(x.reshape(2, 12), -1).reshape(2, 3, 4).astype(F32))
    m.out("lsm", log_softmax_ref(x.reshape(2, 12), -1).reshape(2, 3, 4).astype(F32))
    m.out("sm0", softmax_ref(x.reshape(1, 24), -1).reshape(2, 3, 4).astype(F32))


# ----------------------------------------------------------------------------
# Shape and data movement
# ----------------------------------------------------------------------------

@case
def reshape(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4))
    m.ints("s1", [0, -1])
    m.ints("s2", [4, -1, 3])
    m.ints("s3", [-1])
    m.ints("s4", [0, 0, 2, 2])
    m.node("Reshape", ["x", "s1"], "r1")
    m.node("Reshape", ["x", "s2"], "r2")
    m.node("Reshape", ["x", "s3"], "r3")
    m.node("Reshape", ["x", "s4"], "r4")
    m.node("Relu", ["r2"], "r2relu")
    m.out("r1", x.reshape(2, 12))
    m.out("r2relu", np.maximum(x.reshape(4, 2, 3), 0))
    m.out("r3", x.reshape(-1))
    m.out("r4", x.reshape(2, 3, 2, 2))


@case
def transpose(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4, 5))
    y = m.inp("y", rng.integers(-99, 99, (2, 3, 4)).astype(I64))
    m.node("Transpose", ["x"], "nhwc", perm=[0, 2, 3, 1])
    m.node("Transpose", ["y"], "rev")
    m.node("Transpose", ["x"], "mix", perm=[3, 1, 0, 2])
    m.out("nhwc", x.transpose(0, 2, 3, 1).copy())
    m.out("rev", y.transpose().copy())
    m.out("mix", x.transpose(3, 1, 0, 2).copy())


@case
def flatten(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4, 5))
    m.node("Flatten", ["x"], "d")
    m.node("Flatten", ["x"], "a0", axis=0)
    m.node("Flatten", ["x"], "a2", axis=2)
    m.node("Flatten", ["x"], "am1", axis=-1)
    m.node("Flatten", ["x"], "a4", axis=4)
    m.out("d", x.reshape(2, 60))
    m.out("a0", x.reshape(1, 120))
    m.out("a2", x.reshape(6, 20))
    m.out("am1", x.reshape(24, 5))
    m.out("a4", x.reshape(120, 1))


@case
def squeeze_unsqueeze(m, rng):
    x = m.inp("x", randn(rng, 1, 3, 1, 4, 1))
    z = m.inp("z", randn(rng, 3, 4))
    m.ints("ax_sq", [0, -1])
    m.ints("ax_un", [0, 3])
    m.ints("ax_neg", [-1])
    m.node("Squeeze", ["x", "ax_sq"], "sq")
    m.node("Squeeze", ["x"], "sq_all")
    m.node("Unsqueeze", ["z", "ax_un"], "un")
    m.node("Unsqueeze", ["z", "ax_neg"], "un_neg")
    m.out("sq", x.reshape(3, 1, 4))
    m.out("sq_all", x.reshape(3, 4))
    m.out("un", z.reshape(1, 3, 4, 1))
    m.out("un_neg", z.reshape(3, 4, 1))


@case
def concat(m, rng):
    a, b = m.inp("a", randn(rng, 2, 1, 4)), m.inp("b", randn(rng, 2, 3, 4))
    c = m.weight("c", randn(rng, 2, 2, 4))
    i1 = m.inp("i1", rng.integers(-5, 5, (3, 2)).astype(I64))
    i2 = m.inp("i2", rng.integers(-5, 5, (3, 1)).astype(I64))
    m.node("Concat", ["a", "b", "c"], "ax1", axis=1)
    m.node("Concat", ["b", "b"], "last", axis=-1)
    m.node("Concat", ["a", "b"], "dead", axis=1)   # not an output: removed as dead code
    m.node("Concat", ["i1", "i2"], "ints", axis=1)
    m.node("Concat", ["b", "a"], "first", axis=1)
    m.out("ax1", np.concatenate([a, b, c], axis=1))
    m.out("last", np.concatenate([b, b], axis=-1))
    m.out("ints", np.concatenate([i1, i2], axis=1))
    m.out("first", np.concatenate([b, a], axis=1))


@case
def concat_in_place(m, rng):
    # The C target's plan puts a Concat's inputs in their parts of its output
    # (plan.c): a chain of Concats each beginning with the one before
    # (DenseNet's blocks), one's output also read by an elementwise op (which
    # must not write over the chain's buffer), a value twice in one Concat, and
    # parts at an unaligned offset (48 bytes), which keep their copies.
    x = m.inp("x", randn(rng, 1, 16, 2, 2))
    h = m.inp("h", randn(rng, 1, 3, 2, 2))
    m.node("Relu", ["x"], "f0")
    m.node("Neg", ["f0"], "f1")
    m.node("Concat", ["f0", "f1"], "c1", axis=1)
    m.node("Add", ["c1", "c1"], "y1")
    m.node("Tanh", ["f1"], "f2")
    m.node("Concat", ["f0", "f1", "f2"], "c2", axis=1)
    m.node("Sigmoid", ["c2"], "y2")
    m.node("Exp", ["x"], "g")
    m.node("Concat", ["g", "g"], "twice", axis=1)
    m.node("Relu", ["h"], "h0")
    m.node("Neg", ["h0"], "h1")
    m.node("Concat", ["h0", "h1"], "odd", axis=1)
    f0 = np.maximum(x, 0)
    f1 = -f0
    c1 = np.concatenate([f0, f1], axis=1)
    c2 = np.concatenate([f0, f1, np.tanh(f1)], axis=1)
    h0 = np.maximum(h, 0)
    m.out("y1", (c1 + c1).astype(F32))
    m.out("y2", (1 / (1 + np.exp(-c2.astype(np.float64)))).astype(F32))
    m.out("twice", np.concatenate([np.exp(x), np.exp(x)], axis=1).astype(F32))
    m.out("odd", np.concatenate([h0, -h0], axis=1).astype(F32))


@case
def split(m, rng):
    x = m.inp("x", randn(rng, 2, 6, 4))
    y = m.inp("y", randn(rng, 7, 2))
    m.ints("sizes", [2, 3, 1])
    m.node("Split", ["x", "sizes"], ["p0", "p1", "p2"], axis=1)
    m.node("Split", ["x"], ["h0", "h1"], axis=-1, num_outputs=2)
    m.node("Split", ["y"], ["u0", "u1", "u2"], num_outputs=3)
    m.out("p0", x[:, 0:2].copy())
    m.out("p1", x[:, 2:5].copy())
    m.out("p2", x[:, 5:6].copy())
    m.out("h0", x[:, :, :2].copy())
    m.out("h1", x[:, :, 2:].copy())
    m.out("u0", y[0:3].copy())
    m.out("u1", y[3:6].copy())
    m.out("u2", y[6:7].copy())


@case
def slice_axes_steps(m, rng):
    x = m.inp("x", randn(rng, 4, 6, 5))
    m.ints("st", [1, 0])
    m.ints("en", [3, 100])
    m.ints("ax", [0, 2])
    m.ints("st2", [0, 1, -4])
    m.ints("en2", [4, 6, 5])
    m.ints("ax2", [0, 1, 2])
    m.ints("sp2", [2, 3, 1])
    m.node("Slice", ["x", "st", "en", "ax"], "a")
    m.node("Slice", ["x", "st2", "en2", "ax2", "sp2"], "b")
    m.out("a", slice_ref(x, [1, 0], [3, 100], [0, 2]))
    m.out("b", slice_ref(x, [0, 1, -4], [4, 6, 5], [0, 1, 2], [2, 3, 1]))


@case
def slice_negative_steps(m, rng):
    x = m.inp("x", randn(rng, 3, 5, 6))
    m.ints("st", [-1, 10])
    m.ints("en", [INT64_MIN, -100])
    m.ints("ax", [2, -2])
    m.ints("sp", [-1, -2])
    m.ints("st2", [4])
    m.ints("en2", [1])
    m.ints("ax2", [1])
    m.ints("sp2", [-1])
    m.node("Slice", ["x", "st", "en", "ax", "sp"], "rev")
    m.node("Slice", ["x", "st2", "en2", "ax2", "sp2"], "part")
    m.out("rev", slice_ref(x, [-1, 10], [INT64_MIN, -100], [2, -2], [-1, -2]))
    m.out("part", slice_ref(x, [4], [1], [1], [-1]))


@case
def slice_starts_ends_only(m, rng):
    x = m.inp("x", rng.integers(-50, 50, (5, 4)).astype(I64))
    m.ints("st", [-3, 1])
    m.ints("en", [INT64_MAX, -1])
    m.node("Slice", ["x", "st", "en"], "y")
    m.out("y", slice_ref(x, [-3, 1], [INT64_MAX, -1]))


@case
def gather_negative_i64(m, rng):
    x = m.inp("x", randn(rng, 5, 3))
    idx = m.inp("idx", np.array([0, -1, 3, -5, 2], dtype=I64))
    m.node("Gather", ["x", "idx"], "y")
    m.out("y", gather_ref(x, idx, 0))


@case
def gather_axis1_i32(m, rng):
    x = m.inp("x", randn(rng, 3, 5, 2))
    idx = m.weight("idx", np.array([[4, -2], [0, -5]], dtype=I32))
    xi = m.inp("xi", rng.integers(-1000, 1000, (2, 4)).astype(I64))
    idx2 = m.inp("idx2", np.array([3, -1, 0], dtype=I32))
    m.node("Gather", ["x", "idx"], "y", axis=1)
    m.node("Gather", ["xi", "idx2"], "yi", axis=1)
    m.out("y", gather_ref(x, idx, 1))
    m.out("yi", gather_ref(xi, idx2, 1))


@case
def gather_scalar_index(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4))
    m.weight("k", np.array(-2, dtype=I64))
    m.weight("k0", np.array(1, dtype=I64))
    m.node("Gather", ["x", "k"], "last_axis", axis=-1)
    m.node("Gather", ["x", "k0"], "first_axis")
    m.out("last_axis", gather_ref(x, np.array(-2), 2))
    m.out("first_axis", gather_ref(x, np.array(1), 0))


@case
def pad_constant(m, rng):
    x = m.inp("x", randn(rng, 1, 2, 3, 4))
    pads = [0, 1, 2, 0, 0, 2, 1, 3]
    m.ints("pads", pads)
    m.weight("v", F32(1.5))
    xi = m.inp("xi", rng.integers(-9, 9, (2, 3)).astype(I64))
    m.ints("pads_i", [1, 0, 0, 2])
    m.weight("vi", np.array(-7, dtype=I64))
    m.node("Pad", ["x", "pads", "v"], "y")
    m.node("Pad", ["x", "pads"], "y0")
    m.node("Pad", ["xi", "pads_i", "vi"], "yi", mode="constant")
    m.out("y", np.pad(x, onnx_pads_to_numpy(pads), mode="constant", constant_values=1.5))
    m.out("y0", np.pad(x, onnx_pads_to_numpy(pads), mode="constant"))
    m.out("yi", np.pad(xi, onnx_pads_to_numpy([1, 0, 0, 2]), mode="constant", constant_values=-7))


@case
def pad_reflect(m, rng):
    x = m.inp("x", randn(rng, 1, 2, 4, 5))
    pads = [0, 0, 2, 1, 0, 0, 1, 4]
    m.ints("pads", pads)
    m.node("Pad", ["x", "pads"], "y", mode="reflect")
    m.out("y", np.pad(x, onnx_pads_to_numpy(pads), mode="reflect"))


@case
def pad_edge_axes(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4))
    pads = [1, 0, 2, 1, 0, 3]
    m.ints("pads", pads)
    m.ints("pads_ax", [2, 1, 0, 3])     # for axes [-1, 1]: begins then ends
    m.ints("axes", [-1, 1])
    m.node("Pad", ["x", "pads"], "edge", mode="edge")
    m.node("Pad", ["x", "pads_ax", "", "axes"], "edge_axes", mode="edge")
    m.out("edge", np.pad(x, onnx_pads_to_numpy(pads), mode="edge"))
    m.out("edge_axes", np.pad(x, [(0, 0), (1, 3), (2, 0)], mode="edge"))


# ----------------------------------------------------------------------------
# Reductions
# ----------------------------------------------------------------------------

@case
def reduce_mean_sum(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4, 5))
    m.ints("a12", [1, 2])
    m.ints("am1", [-1])
    m.ints("a02", [0, 2])
    m.node("ReduceMean", ["x", "a12"], "mean_keep")
    m.node("ReduceSum", ["x", "am1"], "sum_last", keepdims=0)
    m.node("ReduceMean", ["x"], "mean_all", keepdims=0)
    m.node("ReduceSum", ["x", "a02"], "sum_02", keepdims=0)
    m.node("ReduceSum", ["x"], "sum_all_keep")
    X = f64(x)
    m.out("mean_keep", X.mean(axis=(1, 2), keepdims=True).astype(F32))
    m.out("sum_last", X.sum(axis=-1).astype(F32))
    m.out("mean_all", np.array(X.mean(), dtype=F32))
    m.out("sum_02", X.sum(axis=(0, 2)).astype(F32))
    m.out("sum_all_keep", X.sum(axis=(0, 1, 2, 3), keepdims=True).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


@case
def reduce_max_min(m, rng):
    x = m.inp("x", randn(rng, 3, 4, 5))
    m.ints("a1", [1])
    m.ints("a0m1", [0, -1])
    m.node("ReduceMax", ["x", "a1"], "max1", keepdims=0)
    m.node("ReduceMin", ["x", "a0m1"], "min0m1", keepdims=1)
    m.node("ReduceMax", ["x"], "max_all")
    m.node("ReduceMin", ["x", "a1"], "min1")
    m.out("max1", x.max(axis=1))
    m.out("min0m1", x.min(axis=(0, 2), keepdims=True))
    m.out("max_all", x.max(keepdims=True).reshape(1, 1, 1))
    m.out("min1", x.min(axis=1, keepdims=True))


@case
def reduce_empty_axes(m, rng):
    x = m.inp("x", randn(rng, 3, 4))
    m.weight("none", np.zeros((0,), dtype=I64))
    m.node("ReduceSum", ["x", "none"], "noop", noop_with_empty_axes=1)
    m.node("ReduceSum", ["x", "none"], "all", keepdims=0)
    m.node("ReduceMean", ["x", "none"], "all_keep")
    m.out("noop", x.copy())
    m.out("all", np.array(f64(x).sum(), dtype=F32))
    m.out("all_keep", f64(x).mean(keepdims=True).astype(F32))


@case
def argmax(m, rng):
    x = m.inp("x", small_ints(rng, [0, 1, 2, 3], (3, 4, 5)))
    m.node("ArgMax", ["x"], "ax0")
    m.node("ArgMax", ["x"], "ax1_first", axis=1)
    m.node("ArgMax", ["x"], "ax1_last", axis=1, select_last_index=1)
    m.node("ArgMax", ["x"], "axm1_last_flat", axis=-1, keepdims=0, select_last_index=1)
    m.node("ArgMax", ["x"], "axm1_flat", axis=-1, keepdims=0)
    m.out("ax0", argmax_ref(x, 0, True, False))
    m.out("ax1_first", argmax_ref(x, 1, True, False))
    m.out("ax1_last", argmax_ref(x, 1, True, True))
    m.out("axm1_last_flat", argmax_ref(x, 2, False, True))
    m.out("axm1_flat", argmax_ref(x, 2, False, False))


# ----------------------------------------------------------------------------
# Constants
# ----------------------------------------------------------------------------

@case
def constant_attrs(m, rng):
    x = m.inp("x", randn(rng, 2, 3))
    t = randn(rng, 3)
    m.node("Constant", [], "ct", value=t)
    m.node("Constant", [], "cf", value_float=-2.5)
    m.node("Constant", [], "cis", value_ints=[3, 2])
    m.node("Constant", [], "ci", value_int=-1)
    m.node("Constant", [], "cfs", value_floats=[0.5, 1.5, -3.0])
    m.node("Add", ["x", "ct"], "add")
    m.node("Mul", ["x", "cf"], "mul")
    m.node("Reshape", ["x", "cis"], "reshaped")
    m.node("Gather", ["x", "ci"], "row", axis=0)
    m.node("Sub", ["x", "cfs"], "sub")
    m.out("add", (f64(x) + t).astype(F32))
    m.out("mul", (f64(x) * -2.5).astype(F32))
    m.out("reshaped", x.reshape(3, 2))
    m.out("row", x[-1].copy())
    m.out("sub", (f64(x) - np.array([0.5, 1.5, -3.0])).astype(F32))


@case
def constant_output(m, rng):
    x = m.inp("x", randn(rng, 4))
    t = np.array([[1, -2], [3, 2 ** 60]], dtype=I64)
    m.node("Constant", [], "c", value=t)
    m.node("Relu", ["x"], "y")
    m.out("y", np.maximum(x, 0))
    m.out("c", t)


@case
def fold_weights(m, rng):
    x = m.inp("x", randn(rng, 3, 6))
    wt = m.weight("wt", randn(rng, 4, 6))
    bias = m.weight("bias", randn(rng, 2, 2))
    m.ints("shape4", [4])
    m.node("Transpose", ["wt"], "w", perm=[1, 0])
    m.node("Reshape", ["bias", "shape4"], "b_flat")
    m.node("Mul", ["b_flat", "two"], "b2")
    m.weight("two", F32(2.0))
    m.node("Exp", ["b2"], "b_exp")
    m.node("MatMul", ["x", "w"], "xw")
    m.node("Add", ["xw", "b_exp"], "y")
    m.out("y", (f64(x) @ f64(wt).T + np.exp(f64(bias).reshape(4) * 2)).astype(F32))


# ----------------------------------------------------------------------------
# Multi-node graphs
# ----------------------------------------------------------------------------

@case
def mlp(m, rng):
    x = m.inp("x", randn(rng, 4, 16))
    w1, b1 = m.weight("w1", randn(rng, 16, 32) * 0.3), m.weight("b1", randn(rng, 32) * 0.1)
    w2, b2 = m.weight("w2", randn(rng, 32, 10) * 0.3), m.weight("b2", randn(rng, 10) * 0.1)
    m.node("MatMul", ["x", "w1"], "h0")
    m.node("Add", ["h0", "b1"], "h1")
    m.node("Relu", ["h1"], "h")
    m.node("MatMul", ["h", "w2"], "l0")
    m.node("Add", ["l0", "b2"], "logits")
    m.node("Softmax", ["logits"], "probs")
    h = np.maximum(f64(x) @ w1 + b1, 0)
    logits = h @ w2 + b2
    m.out("probs", softmax_ref(logits, -1).astype(F32))
    m.out("logits", logits.astype(F32))


@case
def cnn(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 12, 12))
    w1, b1 = m.weight("w1", randn(rng, 8, 3, 3, 3) * 0.3), m.weight("b1", randn(rng, 8) * 0.1)
    bn = [m.weight("bn_s", uniform(rng, 0.5, 1.5, 8)), m.weight("bn_b", randn(rng, 8) * 0.1),
          m.weight("bn_m", randn(rng, 8) * 0.1), m.weight("bn_v", uniform(rng, 0.5, 2.0, 8))]
    w2 = m.weight("w2", randn(rng, 16, 8, 3, 3) * 0.2)
    fc, fcb = m.weight("fc", randn(rng, 5, 16) * 0.3), m.weight("fcb", randn(rng, 5) * 0.1)
    m.node("Conv", ["x", "w1", "b1"], "c1", pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    m.node("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], "bn")
    m.node("Relu", ["bn"], "r1")
    m.node("MaxPool", ["r1"], "p1", kernel_shape=[2, 2], strides=[2, 2])
    m.node("Conv", ["p1", "w2"], "c2", strides=[2, 2])
    m.node("Relu", ["c2"], "r2")
    m.node("GlobalAveragePool", ["r2"], "gap")
    m.node("Flatten", ["gap"], "flat")
    m.node("Gemm", ["flat", "fc", "fcb"], "logits", transB=1)
    m.node("LogSoftmax", ["logits"], "logp")
    c1 = conv_ref(x, w1, b1, pads=(1, 1, 1, 1))
    r1 = np.maximum(batchnorm_ref(c1, *bn, 1e-5), 0)
    p1 = pool_ref(r1, "max", (2, 2), strides=(2, 2))
    r2 = np.maximum(conv_ref(p1, w2, strides=(2, 2)), 0)
    flat = r2.mean(axis=(2, 3))
    logits = flat @ f64(fc).T + fcb
    m.out("logp", log_softmax_ref(logits, -1).astype(F32))


@case
def gelu_block(m, rng):
    x = m.inp("x", randn(rng, 2, 5, 16))
    s, b = m.weight("ln_s", uniform(rng, 0.5, 1.5, 16)), m.weight("ln_b", randn(rng, 16) * 0.1)
    w1, b1 = m.weight("w1", randn(rng, 16, 32) * 0.25), m.weight("b1", randn(rng, 32) * 0.1)
    w2, b2 = m.weight("w2", randn(rng, 32, 16) * 0.25), m.weight("b2", randn(rng, 16) * 0.1)
    m.weight("sqrt2", F32(math.sqrt(2.0)))
    m.weight("one", F32(1.0))
    m.weight("half", F32(0.5))
    m.node("LayerNormalization", ["x", "ln_s", "ln_b"], "ln")
    m.node("MatMul", ["ln", "w1"], "h0")
    m.node("Add", ["h0", "b1"], "h")
    m.node("Div", ["h", "sqrt2"], "hs")
    m.node("Erf", ["hs"], "e")
    m.node("Add", ["e", "one"], "e1")
    m.node("Mul", ["h", "e1"], "he")
    m.node("Mul", ["he", "half"], "g")
    m.node("MatMul", ["g", "w2"], "o0")
    m.node("Add", ["o0", "b2"], "o")
    m.node("Add", ["o", "x"], "y")
    ln = layernorm_ref(x, s, b, -1, 1e-5)
    h = ln @ f64(w1) + b1
    g = h * 0.5 * (1 + erf_ref(h / math.sqrt(2.0)))
    m.out("y", (g @ f64(w2) + b2 + x).astype(F32))


@case
def attention(m, rng):
    x = m.inp("x", randn(rng, 1, 4, 8))
    wq, wk, wv = (m.weight(n, randn(rng, 8, 8) * 0.4) for n in ("wq", "wk", "wv"))
    m.weight("scale", F32(1 / math.sqrt(8)))
    m.node("MatMul", ["x", "wq"], "q")
    m.node("MatMul", ["x", "wk"], "k")
    m.node("MatMul", ["x", "wv"], "v")
    m.node("Transpose", ["k"], "kt", perm=[0, 2, 1])
    m.node("MatMul", ["q", "kt"], "qk")
    m.node("Mul", ["qk", "scale"], "qks")
    m.node("Softmax", ["qks"], "att")
    m.node("MatMul", ["att", "v"], "y")
    X = f64(x)
    q, k, v = X @ wq, X @ wk, X @ wv
    att = softmax_ref(q @ k.transpose(0, 2, 1) * float(F32(1 / math.sqrt(8))), -1)
    m.out("y", (att @ v).astype(F32))
    m.out("att", att.astype(F32))


@case
def shared_and_intermediate_outputs(m, rng):
    x = m.inp("x", randn(rng, 3, 4))
    m.node("Relu", ["x"], "h")
    m.node("Exp", ["h"], "e")
    m.node("Add", ["h", "e"], "s")
    m.node("Mul", ["h", "h"], "sq")
    H = np.maximum(f64(x), 0)
    m.out("h", H.astype(F32))
    m.out("s", (H + np.exp(H)).astype(F32))
    m.out("sq", (H * H).astype(F32))


@case
def nodes_out_of_order(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 4))
    m.ints("perm_shape", [2, 12])
    w = m.weight("w", randn(rng, 12, 5))
    m.node("Transpose", ["x"], "t", perm=[0, 2, 1])
    m.node("Reshape", ["t", "perm_shape"], "r")
    m.node("MatMul", ["r", "w"], "mm")
    m.node("Tanh", ["mm"], "y")
    m.reverse_nodes = True
    m.out("y", np.tanh(f64(x).transpose(0, 2, 1).reshape(2, 12) @ w).astype(F32))


@case
def residual_block(m, rng):
    x = m.inp("x", randn(rng, 1, 8, 10, 10))
    for i in (1, 2):
        m.weight("w%d" % i, randn(rng, 8, 8, 3, 3) * 0.15)
        m.weight("s%d" % i, uniform(rng, 0.5, 1.5, 8))
        m.weight("b%d" % i, randn(rng, 8) * 0.1)
        m.weight("m%d" % i, randn(rng, 8) * 0.1)
        m.weight("v%d" % i, uniform(rng, 0.5, 2.0, 8))
    W = {w["name"]: np.array(w["data"], dtype=F64).reshape(w["shape"]) for w in m.weights}
    m.node("Conv", ["x", "w1"], "c1", pads=[1, 1, 1, 1])
    m.node("BatchNormalization", ["c1", "s1", "b1", "m1", "v1"], "n1")
    m.node("Relu", ["n1"], "r1")
    m.node("Conv", ["r1", "w2"], "c2", pads=[1, 1, 1, 1])
    m.node("BatchNormalization", ["c2", "s2", "b2", "m2", "v2"], "n2")
    m.node("Add", ["n2", "x"], "sum")
    m.node("Relu", ["sum"], "y")
    r1 = np.maximum(batchnorm_ref(conv_ref(x, W["w1"], pads=(1, 1, 1, 1)), W["s1"], W["b1"], W["m1"], W["v1"], 1e-5), 0)
    n2 = batchnorm_ref(conv_ref(r1, W["w2"], pads=(1, 1, 1, 1)), W["s2"], W["b2"], W["m2"], W["v2"], 1e-5)
    m.out("y", np.maximum(n2 + x, 0).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


@case
def unet_skip(m, rng):
    """Feature maps live across a long stretch (down, up, concat with the
    skip): the arena planner must not reuse their slots too early."""
    x = m.inp("x", randn(rng, 1, 2, 8, 8))
    w1 = m.weight("w1", randn(rng, 4, 2, 3, 3) * 0.3)
    w2 = m.weight("w2", randn(rng, 4, 4, 3, 3) * 0.3)
    w3 = m.weight("w3", randn(rng, 3, 8, 1, 1) * 0.3)
    m.ints("up_shape", [1, 4, 4, 1, 4, 1])
    m.ints("back_shape", [1, 4, 8, 8])
    m.weight("ones", np.ones((1, 1, 1, 2, 1, 2), dtype=F32))
    m.node("Conv", ["x", "w1"], "e1", pads=[1, 1, 1, 1])
    m.node("Relu", ["e1"], "s1")
    m.node("MaxPool", ["s1"], "d1", kernel_shape=[2, 2], strides=[2, 2])
    m.node("Conv", ["d1", "w2"], "e2", pads=[1, 1, 1, 1])
    m.node("Tanh", ["e2"], "s2")
    m.node("Reshape", ["s2", "up_shape"], "s2r")
    m.node("Mul", ["s2r", "ones"], "up6")        # nearest-neighbour 2x upsampling by broadcasting
    m.node("Reshape", ["up6", "back_shape"], "up")
    m.node("Concat", ["s1", "up"], "cat", axis=1)
    m.node("Conv", ["cat", "w3"], "y")
    s1 = np.maximum(conv_ref(x, w1, pads=(1, 1, 1, 1)), 0)
    d1 = pool_ref(s1, "max", (2, 2), strides=(2, 2))
    s2 = np.tanh(conv_ref(d1, w2, pads=(1, 1, 1, 1)))
    up = s2.repeat(2, axis=2).repeat(2, axis=3)
    m.out("y", conv_ref(np.concatenate([s1, up], axis=1), w3).astype(F32))
    m.out("s1", s1.astype(F32))


@case
def attention_masked(m, rng):
    q = m.inp("q", randn(rng, 2, 5, 4))
    k = m.inp("k", randn(rng, 2, 5, 4))
    mask = np.triu(np.full((5, 5), -np.inf, dtype=F32), 1)
    m.weight("mask", mask)
    m.node("Transpose", ["k"], "kt", perm=[0, 2, 1])
    m.node("MatMul", ["q", "kt"], "s")
    m.node("Add", ["s", "mask"], "sm")
    m.node("Softmax", ["sm"], "p")
    m.out("p", softmax_ref(f64(q) @ f64(k).transpose(0, 2, 1) + mask, -1).astype(F32))


@case
def output_is_input(m, rng):
    x = m.inp("x", randn(rng, 2, 3))
    m.node("Neg", ["x"], "y")
    m.out("x", x.copy())
    m.out("y", -x)


@case
def unused_input(m, rng):
    x = m.inp("x", randn(rng, 2, 3))
    m.inp("unused", randn(rng, 4))
    m.node("Abs", ["x"], "y")
    m.out("y", np.abs(x))


# ----------------------------------------------------------------------------
# Middle-end patterns (lib/passes/patterns.c, fuse.c): graphs as exporters
# write them, which rlxc rewrites; the references are the unfused formulas.
# ----------------------------------------------------------------------------

@case
def layernorm_decomposed(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 8) * 2 + 1)
    gamma = m.weight("gamma", uniform(rng, 0.5, 1.5, 8))
    beta = m.weight("beta", randn(rng, 8))
    m.ints("ax", [-1])
    m.weight("two", np.array(2.0, dtype=F32))
    eps = m.weight("eps", np.array(1e-5, dtype=F32))
    m.node("ReduceMean", ["x", "ax"], "mean")
    m.node("Sub", ["x", "mean"], "d")
    m.node("Pow", ["d", "two"], "d2")
    m.node("ReduceMean", ["d2", "ax"], "var")
    m.node("Add", ["var", "eps"], "ve")
    m.node("Sqrt", ["ve"], "sd")
    m.node("Div", ["d", "sd"], "n")
    m.node("Mul", ["n", "gamma"], "ng")
    m.node("Add", ["ng", "beta"], "y")
    m.out("y", layernorm_ref(x, gamma, beta, -1, float(eps)).astype(F32))


@case
def softmax_decomposed(m, rng):
    x = m.inp("x", randn(rng, 3, 4, 7) * 3)
    m.ints("last", [-1])
    m.ints("mid", [1])
    m.node("ReduceMax", ["x", "last"], "mx")
    m.node("Sub", ["x", "mx"], "d")
    m.node("Exp", ["d"], "e")
    m.node("ReduceSum", ["e", "last"], "s")
    m.node("Div", ["e", "s"], "y")
    # over a middle axis: not the Softmax pattern, computed as written
    m.node("ReduceMax", ["x", "mid"], "mx1")
    m.node("Sub", ["x", "mx1"], "d1")
    m.node("Exp", ["d1"], "e1")
    m.node("ReduceSum", ["e1", "mid"], "s1")
    m.node("Div", ["e1", "s1"], "y1")
    m.out("y", softmax_ref(x, -1).astype(F32))
    m.out("y1", softmax_ref(x, 1).astype(F32))


@case
def conv_batchnorm_relu(m, rng):
    x = m.inp("x", randn(rng, 2, 3, 6, 6))
    w = m.weight("w", randn(rng, 4, 3, 3, 3) * 0.5)
    b = m.weight("b", randn(rng, 4))
    sc = m.weight("scale", uniform(rng, 0.5, 2.0, 4))
    bb = m.weight("bias", randn(rng, 4))
    mu = m.weight("mean", randn(rng, 4))
    var = m.weight("var", uniform(rng, 0.2, 3.0, 4))
    m.node("Conv", ["x", "w", "b"], "c", pads=[1, 1, 1, 1])
    m.node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], "bn", epsilon=1e-3)
    m.node("Relu", ["bn"], "y")
    c = conv_ref(x, w, b, pads=(1, 1, 1, 1))
    m.out("y", np.maximum(batchnorm_ref(c, sc, bb, mu, var, 1e-3), 0).astype(F32))


@case
def conv1x1_pad0_avgpool(m, rng):
    # DenseNet's transition as PyTorch exports it: 1x1 Conv, a Pad by zeros,
    # AveragePool 2x2 stride 2 (the pool runs first after patterns.c, on an
    # odd plane whose last row and column no window reads); beside it the
    # same conv into a padded pool that counts the pads, which must stay
    # after the conv
    x = m.inp("x", randn(rng, 2, 6, 7, 7))
    w = m.weight("w", randn(rng, 5, 6, 1, 1) * 0.5)
    b = m.weight("b", randn(rng, 5))
    m.ints("pads", [0, 0, 0, 0, 0, 0, 0, 0])
    m.node("Conv", ["x", "w", "b"], "c")
    m.node("Pad", ["c", "pads"], "cp")
    m.node("AveragePool", ["cp"], "y", kernel_shape=[2, 2], strides=[2, 2])
    m.node("Conv", ["x", "w", "b"], "c2")
    m.node("AveragePool", ["c2"], "y2", kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0],
           count_include_pad=1)
    c = conv_ref(x, w, b)
    m.out("y", pool_ref(c, "avg", (2, 2), (2, 2)).astype(F32))
    m.out("y2", pool_ref(c, "avg", (2, 2), (2, 2), pads=(1, 1, 0, 0), count_include_pad=1).astype(F32))


@case
def matmul_transposed_operands(m, rng):
    a = m.inp("a", randn(rng, 2, 5, 3))
    w = m.inp("w", randn(rng, 2, 4, 3))
    at = m.inp("at", randn(rng, 3, 5))
    b = m.inp("b", randn(rng, 3, 4))
    m.node("Transpose", ["w"], "wt", perm=[0, 2, 1])
    m.node("MatMul", ["a", "wt"], "y")
    m.node("Transpose", ["at"], "a2")
    m.node("MatMul", ["a2", "b"], "y2")
    # a permutation that is not a swap of the last two axes
    m.node("Transpose", ["a"], "ap", perm=[1, 0, 2])
    m.node("MatMul", ["ap", "b"], "y4")
    m.out("y", (f64(a) @ f64(w).transpose(0, 2, 1)).astype(F32))
    m.out("y2", (f64(at).T @ f64(b)).astype(F32))
    m.out("y4", (f64(a).transpose(1, 0, 2) @ f64(b)).astype(F32))


@case
def matmul_linear_batched(m, rng):
    """A linear layer on a batch ([2, 3, 5, 7] x [7, 6]): one GEMM of 30
    rows, with the bias, residual and ReLU fused into it; and an A that
    broadcasts over the batch, which must stay batched."""
    x = m.inp("x", randn(rng, 2, 3, 5, 7))
    res = m.inp("res", randn(rng, 2, 3, 5, 6))
    w = m.weight("w", randn(rng, 7, 6))
    b = m.weight("b", randn(rng, 6))
    a1 = m.inp("a1", randn(rng, 5, 7))
    wb = m.weight("wb", randn(rng, 2, 7, 6))
    m.node("MatMul", ["x", "w"], "mm")
    m.node("Add", ["mm", "b"], "mb")
    m.node("Add", ["mb", "res"], "s")
    m.node("Relu", ["s"], "y")
    m.node("MatMul", ["a1", "wb"], "bc")
    m.out("y", np.maximum(f64(x) @ f64(w) + f64(b) + f64(res), 0).astype(F32))
    m.out("bc", (f64(a1) @ f64(wb)).astype(F32))


@case
def gemm_relu_residual(m, rng):
    x = m.inp("x", randn(rng, 4, 6))
    res = m.inp("res", randn(rng, 4, 5))
    w = m.weight("w", randn(rng, 5, 6))
    c = m.weight("c", randn(rng, 5))
    m.node("Gemm", ["x", "w", "c"], "g", transB=1, alpha=0.5)
    m.node("Add", ["g", "res"], "s")
    m.node("Relu", ["s"], "y")
    # the residual after the activation (as a post-activation block writes it)
    m.node("Gemm", ["x", "w", "c"], "g2", transB=1)
    m.node("Relu", ["g2"], "r2")
    m.node("Add", ["res", "r2"], "z")
    g = 0.5 * (f64(x) @ f64(w).T) + f64(c)
    m.out("y", np.maximum(g + f64(res), 0).astype(F32))
    m.out("z", (np.maximum(f64(x) @ f64(w).T + f64(c), 0) + f64(res)).astype(F32))


@case
def gelu_chain(m, rng):
    x = m.inp("x", randn(rng, 3, 10) * 2)
    m.weight("sqrt2", np.array(1.4142135, dtype=F32))
    m.weight("one", np.array(1.0, dtype=F32))
    m.weight("half", np.array(0.5, dtype=F32))
    m.node("Div", ["x", "sqrt2"], "xs")
    m.node("Erf", ["xs"], "e")
    m.node("Add", ["e", "one"], "e1")
    m.node("Mul", ["x", "e1"], "xe")
    m.node("Mul", ["xe", "half"], "y")
    xx = f64(x)
    m.out("y", (xx * 0.5 * (1 + erf_ref(xx / float(F32(1.4142135))))).astype(F32))


@case
def elementwise_chain_150(m, rng):
    """150 elementwise ops in a row: more than one fused region holds (64
    steps), so fusion must cut the chain into regions, not drop the ops
    between them (it once left 'v64' without a producer)."""
    x = m.inp("x", randn(rng, 4, 6))
    m.weight("k", np.array(0.75, dtype=F32))
    ref = x.copy()
    prev = "x"
    for i in range(150):
        op = ("Neg", "Abs", "Mul")[i % 3]
        out = "v%d" % i
        m.node(op, [prev, "k"] if op == "Mul" else [prev], out)
        ref = (-ref if op == "Neg" else np.abs(ref) if op == "Abs" else ref * F32(0.75)).astype(F32)
        prev = out
    m.node("Identity", [prev], "y")
    m.out("y", ref)


@case
def variadic_many_inputs(m, rng):
    """Sum, Max and Mean of more inputs than one thunk or region takes (16),
    with broadcasting: rlxc splits them into chains (it once wrote past the
    thunk's 16 input slots and crashed)."""
    xs = [m.inp("x%d" % i, randn(rng, *((3, 4) if i % 5 else (4,)))) for i in range(20)]
    m.node("Sum", ["x%d" % i for i in range(20)], "s")
    m.node("Max", ["x%d" % i for i in range(18)], "mx")
    m.node("Mean", ["x%d" % i for i in range(17)], "mean")
    acc = xs[0]
    for x in xs[1:]:
        acc = (acc + x).astype(F32)
    m.out("s", acc)
    mx = xs[0]
    for x in xs[1:18]:
        mx = np.maximum(mx, x)
    m.out("mx", np.broadcast_to(mx, (3, 4)).astype(F32))
    acc = xs[0]
    for x in xs[1:17]:
        acc = (acc + x).astype(F32)
    m.out("mean", (acc / F32(17)).astype(F32))


@case
def conv_residual_relu(m, rng):
    x = m.inp("x", randn(rng, 1, 4, 5, 5))
    w = m.weight("w", randn(rng, 4, 4, 3, 3) * 0.3)
    b = m.weight("b", randn(rng, 4))
    m.node("Conv", ["x", "w", "b"], "c", pads=[1, 1, 1, 1])
    m.node("Add", ["c", "x"], "s")
    m.node("Relu", ["s"], "y")
    m.out("y", np.maximum(conv_ref(x, w, b, pads=(1, 1, 1, 1)) + f64(x), 0).astype(F32))


@case
def depthwise_small_planes(m, rng):
    """Depthwise 3x3 stride 1 on planes under 16 wide with ow == w, which the
    AVX-512 build sums as one flat run of 16-lane vectors (rk_convgemm.c
    dw_flat_avx512): 7x7 with NaN/inf and Clip, 5x3 with one-sided pads and
    a residual + Sigmoid, 8x8 (four whole vectors) with pads only before,
    and a 1x1 plane."""
    x1 = randn(rng, 1, 4, 7, 7) * 2
    x1[0, 0, 3, 3] = np.nan
    x1[0, 1, 0, 6] = np.inf
    x1[0, 3, 6, 0] = -np.inf
    x1 = m.inp("x1", x1)
    w1 = m.weight("w1", randn(rng, 4, 1, 3, 3))
    b1 = m.weight("b1", randn(rng, 4))
    m.weight("lo", F32(0.0))
    m.weight("hi", F32(6.0))
    m.node("Conv", ["x1", "w1", "b1"], "c1", group=4, pads=[1, 1, 1, 1])
    m.node("Clip", ["c1", "lo", "hi"], "y1")
    x2 = m.inp("x2", randn(rng, 2, 3, 5, 3))
    r2 = m.inp("r2", randn(rng, 2, 3, 5, 3))
    w2 = m.weight("w2", randn(rng, 3, 1, 3, 3))
    m.node("Conv", ["x2", "w2"], "c2", group=3, pads=[1, 0, 1, 2])
    m.node("Add", ["c2", "r2"], "s2")
    m.node("Sigmoid", ["s2"], "y2")
    x3 = m.inp("x3", randn(rng, 1, 2, 8, 8))
    w3 = m.weight("w3", randn(rng, 2, 1, 3, 3))
    m.node("Conv", ["x3", "w3"], "y3", group=2, pads=[2, 2, 0, 0])
    x4 = m.inp("x4", randn(rng, 1, 2, 1, 1))
    m.node("Conv", ["x4", "w3"], "y4", group=2, pads=[1, 1, 1, 1])
    with np.errstate(invalid="ignore"):
        m.out("y1", np.clip(conv_ref(x1, w1, b1, pads=(1, 1, 1, 1), group=4), 0.0, 6.0).astype(F32))
    s2 = conv_ref(x2, w2, pads=(1, 0, 1, 2), group=3) + f64(r2)
    m.out("y2", (1.0 / (1.0 + np.exp(-s2))).astype(F32))
    m.out("y3", conv_ref(x3, w3, pads=(2, 2, 0, 0), group=2).astype(F32))
    m.out("y4", conv_ref(x4, w3, pads=(1, 1, 1, 1), group=2).astype(F32))
    m.tol = {"rtol": 1e-5, "atol": 1e-5}


def dw3x3_ref(x, w, b, stride, pad):
    """Depthwise 3x3 (one channel per group) in numpy: a sum of shifted slices."""
    x = np.pad(f64(x), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n_, c_, h, wd = x.shape
    oh, ow = (h - 3) // stride + 1, (wd - 3) // stride + 1
    y = np.zeros((n_, c_, oh, ow))
    for p in range(3):
        for q in range(3):
            y += x[:, :, p:p + stride * (oh - 1) + 1:stride, q:q + stride * (ow - 1) + 1:stride] * \
                f64(w[:, 0, p, q])[None, :, None, None]
    return y + f64(b)[None, :, None, None]


@case
def inverted_residual_fused(m, rng):
    """MobileNetV2's block front: a 1x1 expansion (+ bias, Clip 0..6) whose
    output (over 1 MB) only a depthwise 3x3 reads; rlxc runs the pair in bands
    (rk_convgemm.c conv_pwdw_f32). Stride 2 with a batch, and stride 1 with
    the projection and residual after it."""
    x = m.inp("x", randn(rng, 2, 16, 64, 64))
    w1 = m.weight("w1", randn(rng, 96, 16, 1, 1) * 0.3)
    b1 = m.weight("b1", randn(rng, 96))
    w2 = m.weight("w2", randn(rng, 96, 1, 3, 3))
    b2 = m.weight("b2", randn(rng, 96))
    m.weight("lo", F32(0.0))
    m.weight("hi", F32(6.0))
    m.node("Conv", ["x", "w1", "b1"], "e1")
    m.node("Clip", ["e1", "lo", "hi"], "r1")
    m.node("Conv", ["r1", "w2", "b2"], "d1", group=96, strides=[2, 2], pads=[1, 1, 1, 1])
    m.node("Clip", ["d1", "lo", "hi"], "y1")
    x2 = m.inp("x2", randn(rng, 1, 24, 48, 48))
    w3 = m.weight("w3", randn(rng, 144, 24, 1, 1) * 0.3)
    w4 = m.weight("w4", randn(rng, 144, 1, 3, 3))
    b4 = m.weight("b4", randn(rng, 144))
    w5 = m.weight("w5", randn(rng, 24, 144, 1, 1) * 0.1)
    m.node("Conv", ["x2", "w3"], "e2")
    m.node("Relu", ["e2"], "r2")
    m.node("Conv", ["r2", "w4", "b4"], "d2", group=144, pads=[1, 1, 1, 1])
    m.node("Conv", ["d2", "w5"], "p2")
    m.node("Add", ["p2", "x2"], "y2")
    e1 = np.clip(np.einsum("oc,nchw->nohw", f64(w1[:, :, 0, 0]), f64(x)) + f64(b1)[None, :, None, None], 0, 6)
    m.out("y1", np.clip(dw3x3_ref(e1, w2, b2, 2, 1), 0, 6).astype(F32))
    e2 = np.maximum(np.einsum("oc,nchw->nohw", f64(w3[:, :, 0, 0]), f64(x2)), 0)
    d2 = dw3x3_ref(e2, w4, b4, 1, 1)
    m.out("y2", (np.einsum("oc,nchw->nohw", f64(w5[:, :, 0, 0]), d2) + f64(x2)).astype(F32))
    m.tol = {"rtol": 1e-4, "atol": 1e-4}


@case
def depthwise_pool_nan(m, rng):
    """Depthwise 3x3 with pads 1, strides 1 and 2, fused bias + Clip / Relu,
    rows wider than one 16-lane strip; NaN and infinities in the input (a
    padding tap must never turn an inf into NaN); MaxPool 3x3 stride 2 pad 1
    propagates NaN."""
    x = randn(rng, 1, 3, 9, 21) * 2
    x[0, 0, 2, 5] = np.nan
    x[0, 1, 0, 0] = np.inf
    x[0, 2, 8, 20] = -np.inf
    x[0, 2, 4, 0] = np.inf
    x = m.inp("x", x)
    wd = m.weight("wd", randn(rng, 3, 1, 3, 3))
    b = m.weight("b", randn(rng, 3))
    m.weight("lo", F32(0.0))
    m.weight("hi", F32(6.0))
    m.node("Conv", ["x", "wd", "b"], "c1", group=3, pads=[1, 1, 1, 1])
    m.node("Clip", ["c1", "lo", "hi"], "dw_s1")
    m.node("Conv", ["x", "wd", "b"], "c2", group=3, pads=[1, 1, 1, 1], strides=[2, 2])
    m.node("Relu", ["c2"], "dw_s2")
    m.node("MaxPool", ["x"], "pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    with np.errstate(invalid="ignore"):
        m.out("dw_s1", np.clip(conv_ref(x, wd, b, pads=(1, 1, 1, 1), group=3), 0.0, 6.0).astype(F32))
        m.out("dw_s2", np.maximum(conv_ref(x, wd, b, strides=(2, 2), pads=(1, 1, 1, 1), group=3), 0).astype(F32))
    pool = pool_ref(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf), "max", (3, 3), strides=(2, 2),
                    pads=(1, 1, 1, 1))
    has_nan = pool_ref(np.isnan(x).astype(F32), "max", (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)) > 0
    pool[has_nan] = np.nan
    m.out("pool", pool.astype(F32))


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

def build(fn):
    m = Model(fn.__name__)
    rng = np.random.default_rng(zlib.crc32(fn.__name__.encode()))
    fn(m, rng)
    return m


def write_case(m, outdir):
    d = os.path.join(outdir, m.name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.rlxg"), "w") as f:
        json.dump(m.graph(), f, allow_nan=False)
        f.write("\n")
    for k, a in enumerate(m.in_arrays):
        np.save(os.path.join(d, "in_%d.npy" % k), a)
    for k, a in enumerate(m.expected):
        np.save(os.path.join(d, "expected_%d.npy" % k), a)
    with open(os.path.join(d, "tol.json"), "w") as f:
        json.dump({"rtol": m.tol["rtol"], "atol": m.tol["atol"],
                   "outputs": [o["name"] for o in m.outputs]}, f)
        f.write("\n")


def selfcheck():
    """The references checked against hand-derived numbers and a second,
    vectorized formulation; returns the number of failures."""
    bad = 0

    def check(what, got, want):
        nonlocal bad
        if np.shape(got) != np.shape(want) or not np.allclose(got, want, rtol=1e-12, atol=1e-12):
            print("selfcheck FAIL %s:\n got %s\nwant %s" % (what, got, want))
            bad += 1

    x = np.arange(16, dtype=F64).reshape(1, 1, 4, 4)
    # all-ones 2x2 kernel, stride 2: sums of 2x2 blocks
    check("conv blocks", conv_ref(x, np.ones((1, 1, 2, 2)), strides=(2, 2)),
          np.array([[[[0 + 1 + 4 + 5, 2 + 3 + 6 + 7], [8 + 9 + 12 + 13, 10 + 11 + 14 + 15]]]]))
    # 3x3 ones, pad 1: the corner sees x[0:2, 0:2]
    y = conv_ref(x, np.ones((1, 1, 3, 3)), pads=(1, 1, 1, 1))
    check("conv pad corner", y[0, 0, 0, 0], 0 + 1 + 4 + 5)
    check("conv pad centre", y[0, 0, 1, 1], sum([0, 1, 2, 4, 5, 6, 8, 9, 10]))
    # dilation 2, 2x2 kernel picks x[i, j], x[i, j+2], x[i+2, j], x[i+2, j+2]
    check("conv dilation", conv_ref(x, np.ones((1, 1, 2, 2)), dilations=(2, 2))[0, 0],
          np.array([[0 + 2 + 8 + 10, 1 + 3 + 9 + 11], [4 + 6 + 12 + 14, 5 + 7 + 13 + 15]]))
    # bias and groups: group g only sees its own input channels
    xx = np.stack([x[0, 0], 100 * x[0, 0]])[None]
    w = np.ones((2, 1, 1, 1))
    check("conv groups", conv_ref(xx, w, b=np.array([1.0, -1.0]), group=2)[0],
          np.stack([x[0, 0] + 1, 100 * x[0, 0] - 1]))
    # against a vectorized formulation on random data
    rng = np.random.default_rng(7)
    for (c, mo, g, k, s, d, p) in [(4, 6, 2, (3, 2), (2, 1), (1, 2), (1, 0, 2, 1)),
                                   (3, 3, 3, (2, 2), (1, 1), (2, 1), (0, 1, 0, 1))]:
        xr = rng.standard_normal((2, c, 7, 8))
        wr = rng.standard_normal((mo, c // g, *k))
        xp = np.pad(xr, [(0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])])
        oh = (xp.shape[2] - (k[0] - 1) * d[0] - 1) // s[0] + 1
        ow = (xp.shape[3] - (k[1] - 1) * d[1] - 1) // s[1] + 1
        want = np.zeros((2, mo, oh, ow))
        for mm in range(mo):
            gi = mm // (mo // g)
            for pi in range(k[0]):
                for qi in range(k[1]):
                    patch = xp[:, gi * (c // g):(gi + 1) * (c // g),
                               pi * d[0]:pi * d[0] + (oh - 1) * s[0] + 1:s[0],
                               qi * d[1]:qi * d[1] + (ow - 1) * s[1] + 1:s[1]]
                    want[:, mm] += np.einsum("nchw,c->nhw", patch, wr[mm, :, pi, qi])
        check("conv vs vectorized %s" % (k,), conv_ref(xr, wr, strides=s, pads=p, dilations=d, group=g), want)
    # pooling by hand
    check("maxpool 2x2", pool_ref(x, "max", (2, 2), strides=(2, 2))[0, 0], np.array([[5, 7], [13, 15]]))
    check("maxpool -inf pad", pool_ref(-x - 1, "max", (2, 2), strides=(2, 2), pads=(1, 1, 1, 1))[0, 0],
          np.array([[-1, -2, -4], [-5, -6, -8], [-13, -14, -16]]))
    check("maxpool ceil", pool_ref(x, "max", (3, 3), strides=(2, 2), ceil_mode=1)[0, 0],
          np.array([[10, 11], [14, 15]]))
    check("avgpool excl", pool_ref(x, "avg", (2, 2), strides=(2, 2), pads=(1, 1, 1, 1))[0, 0, 0],
          np.array([0, (1 + 2) / 2, 3]))
    check("avgpool incl", pool_ref(x, "avg", (2, 2), strides=(2, 2), pads=(1, 1, 1, 1),
                                   count_include_pad=1)[0, 0, 0], np.array([0, (1 + 2) / 4, 3 / 4]))
    check("same pads", np.array(same_pads((7, 6), (4, 3), (2, 2), (1, 1))), np.array([1, 0, 2, 1]))
    check("same lower", np.array(same_pads((5, 6), (2, 4), (1, 1), (1, 1), False)), np.array([1, 2, 0, 1]))
    check("slice rev", slice_ref(np.arange(5), [-1], [INT64_MIN], [0], [-1]), np.arange(5)[::-1])
    check("slice clamp", slice_ref(np.arange(5), [-100], [100], [0], [2]), np.array([0, 2, 4]))
    check("trunc div", trunc_div([7, -7, 7, -7], [2, 2, -2, -2]), np.array([3, -3, -3, 3]))
    check("saturate", saturate_cast(np.array([np.nan, 1e10, -1e10, -2.5], dtype=F32), I32),
          np.array([0, 2 ** 31 - 1, -2 ** 31, -2]))
    check("argmax last", argmax_ref(np.array([1, 3, 3, 0]), 0, False, True), np.array(2))
    # every op of lib/ops.def is exercised by some case (internal ops, named
    # "rlx.*", are not user-visible and do not match)
    import re
    ops_def = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "ops.def")
    with open(ops_def) as f:
        known = set(re.findall(r'^X\(\w+,\s*"(\w+)"', f.read(), re.M))
    used = set(n["op"] for fn in CASES for n in build(fn).nodes)
    if known - used:
        print("selfcheck FAIL: ops without a case: %s" % " ".join(sorted(known - used)))
        bad += 1
    if used - known:
        print("selfcheck FAIL: cases use ops that ops.def lacks: %s" % " ".join(sorted(used - known)))
        bad += 1
    return bad


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        for fn in CASES:
            print(fn.__name__)
        return 0
    if len(argv) == 2 and argv[1] == "--selfcheck":
        bad = selfcheck()
        print("selfcheck: %s" % ("ok" if not bad else "%d failed" % bad))
        return 1 if bad else 0
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.stderr.write("usage: cases.py OUTDIR [NAME...] | --list | --selfcheck\n")
        return 2
    outdir, wanted = argv[1], argv[2:]
    names = [fn.__name__ for fn in CASES]
    assert len(set(names)) == len(names)
    unknown = [w for w in wanted if w not in names]
    if unknown:
        sys.stderr.write("cases.py: unknown case(s): %s\n" % " ".join(unknown))
        return 2
    os.makedirs(outdir, exist_ok=True)
    written = []
    for fn in CASES:
        if wanted and fn.__name__ not in wanted:
            continue
        write_case(build(fn), outdir)
        written.append(fn.__name__)
    with open(os.path.join(outdir, "cases.txt"), "w") as f:
        f.write("".join(n + "\n" for n in written))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
