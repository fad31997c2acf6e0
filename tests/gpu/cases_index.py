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
    # 4 x 3 x 23 x 17: 1564 positions, past the reducing workgroup's 1024; i32 targets
    x = m.inp("x", randn(r, 4, 3, 23, 17))
    t = m.inp("t", r.integers(0, 3, (4, 23, 17)).astype(I32))
    m.out("y", nll_ref(x, t, None, "sum"))
    m.node("NegativeLogLikelihoodLoss", ["x", "t"], "y", reduction="sum")


def nll_none_f64_high_ii(m, r):
    # f64 scores, reductions none and mean, an ignore_index past int32 that i64 targets hit
    ii = 3 << 33
    x = m.inp("x", randn(r, 5, 4, 3, dtype=F64))
    t = r.integers(0, 4, (5, 3)).astype(I64)
    t[1, 1] = t[4, 0] = ii
    m.inp("t", t)
    m.out("y", nll_ref(x, t, None, "none", ii))
    m.node("NegativeLogLikelihoodLoss", ["x", "t"], "y", reduction="none", ignore_index=ii)
    m.out("ym", nll_ref(x, t, None, "mean", ii))   # the reduction in double (shared memory of doubles)
    m.node("NegativeLogLikelihoodLoss", ["x", "t"], "ym", reduction="mean", ignore_index=ii)


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


def scatter_elements_dup_none(m, r):
    # duplicates along axis 0 (the last update wins), negative indices, 3 x 6 updates into 4 x 7
    x = m.inp("x", randn(r, 4, 7))
    idx = np.array([[0, 1, -1, 3, 2, 0], [0, -3, 3, 3, 2, 1], [-4, 1, 0, 2, 2, 0]], I64)
    m.inp("i", idx)
    u = m.inp("u", randn(r, 3, 6))
    y = x.copy()
    for a in range(3):
        for b in range(6):
            y[idx[a, b] % 4, b] = u[a, b]
    m.out("y", y)
    m.node("ScatterElements", ["x", "i", "u"], "y", axis=0)


def scatter_elements_add_i64(m, r):
    # reduction add of i64 sums that carry past 32 bits, along axis 1 (i32 indices)
    x = m.inp("x", r.integers(2 ** 32 - 50, 2 ** 32 + 50, (3, 5)).astype(I64))
    idx = m.inp("i", r.integers(-5, 5, (3, 4)).astype(I32))
    u = m.inp("u", r.integers(2 ** 31, 2 ** 33, (3, 4)).astype(I64))
    y = x.copy()
    np.add.at(y, (np.arange(3)[:, None], idx % 5), u)
    m.out("y", y)
    m.node("ScatterElements", ["x", "i", "u"], "y", axis=1, reduction="add")


def scatter_elements_mul_u8(m, r):
    # reduction mul of u8 that wraps, duplicate indices
    x = m.inp("x", r.integers(1, 255, (6,)).astype(U8))
    idx = m.weight("i", np.array([1, 4, 1, -1, 0, 1], I64))
    u = m.inp("u", r.integers(2, 200, (6,)).astype(U8))
    y = x.astype(np.int64)
    for k in range(6):
        y[idx[k] % 6] = (y[idx[k] % 6] * u[k]) & 0xff
    m.out("y", y.astype(U8))
    m.node("ScatterElements", ["x", "i", "u"], "y", axis=0, reduction="mul")
    # and i64 products that wrap past 64 bits (in int64 arithmetic)
    x64 = m.inp("x64", r.integers(-2 ** 40, 2 ** 40, (6,)).astype(I64))
    u64 = m.inp("u64", r.integers(-2 ** 30, 2 ** 30, (6,)).astype(I64))
    y64 = x64.copy()
    with np.errstate(over="ignore"):
        for k in range(6):
            y64[idx[k] % 6] *= u64[k]
    m.out("y64", y64)
    m.node("ScatterElements", ["x64", "i", "u64"], "y64", axis=0, reduction="mul")


def scatter_elements_add_f16_bool_mul(m, r):
    # f16 sums (one rounding each, as the C kernel's double then f16), and bools' mul (and)
    x = m.inp("x", randn(r, 5, 3, dtype=F16))
    idx = m.inp("i", r.integers(0, 5, (4, 3)).astype(I64))
    u = m.inp("u", randn(r, 4, 3, dtype=F16))
    y = x.copy()
    for a in range(4):
        for b in range(3):
            y[idx[a, b], b] = F16(F32(y[idx[a, b], b]) + F32(u[a, b]))
    m.out("y", y)
    m.node("ScatterElements", ["x", "i", "u"], "y", axis=0, reduction="add")
    bx = m.inp("bx", r.integers(0, 2, (4, 4)).astype(bool))
    bu = m.inp("bu", r.integers(0, 2, (4, 2)).astype(bool))
    bi = m.weight("bi", np.array([[3, 3], [0, 1], [2, 2], [1, -1]], I64))
    by = bx.copy()
    for a in range(4):
        for b in range(2):
            by[a, bi[a, b] % 4] &= bu[a, b]
    m.out("by", by)
    m.node("ScatterElements", ["bx", "bi", "bu"], "by", axis=1, reduction="mul")


def scatter_nd_slices_dup(m, r):
    # tuples of 1 entry addressing (4 x 3) slices, a duplicate (the last wins), a negative entry
    x = m.inp("x", randn(r, 5, 4, 3))
    idx = np.array([[2], [-1], [0], [2]], I64)
    m.inp("i", idx)
    u = m.inp("u", randn(r, 4, 4, 3))
    y = x.copy()
    for k in range(4):
        y[idx[k, 0]] = u[k]
    m.out("y", y)
    m.node("ScatterND", ["x", "i", "u"], "y")


def scatter_nd_add_mul(m, r):
    # tuples of 2 entries (slices of 3), reductions add (i32) and mul (f32), duplicates
    xi = m.inp("xi", r.integers(-100, 100, (4, 5, 3)).astype(I32))
    idx = m.weight("i", np.array([[1, 2], [3, -1], [1, 2], [0, 0], [-4, 2]], I64))
    ui = m.inp("ui", r.integers(-100, 100, (5, 3)).astype(I32))
    yi = xi.copy()
    for k in range(5):
        yi[idx[k, 0], idx[k, 1]] += ui[k]
    m.out("yi", yi)
    m.node("ScatterND", ["xi", "i", "ui"], "yi", reduction="add")
    xf = m.inp("xf", randn(r, 4, 5, 3))
    uf = m.inp("uf", randn(r, 5, 3))
    yf = xf.copy()
    for k in range(5):
        yf[idx[k, 0], idx[k, 1]] *= uf[k]
    m.out("yf", yf)
    m.node("ScatterND", ["xf", "i", "uf"], "yf", reduction="mul")


def gather_nd_batch_negative(m, r):
    # batch_dims 1: 2 batches of 6 tuples of 2 entries into (5, 3) of slices of 4
    x = m.inp("x", randn(r, 2, 5, 3, 4))
    idx = np.stack([r.integers(-5, 5, (2, 6)), r.integers(-3, 3, (2, 6))], axis=-1).astype(I64)
    m.inp("i", idx)
    y = np.stack([x[b][idx[b, :, 0], idx[b, :, 1]] for b in range(2)])
    m.out("y", y)
    m.node("GatherND", ["x", "i"], "y", batch_dims=1)


def gather_nd_i32_whole(m, r):
    # i32 tuples addressing single i64 elements
    x = m.inp("x", r.integers(-2 ** 40, 2 ** 40, (3, 4)).astype(I64))
    idx = m.weight("i", np.array([[[0, -1], [2, 3]], [[1, 1], [-3, 0]]], I32))
    m.out("y", x[idx[..., 0], idx[..., 1]])
    m.node("GatherND", ["x", "i"], "y")


# ---- shape and norm kernels ----

def cumsum_exclusive_reverse(m, r):
    # the axis an input read at run time (negative), exclusive and reverse
    x = m.inp("x", randn(r, 3, 7, 5))
    m.inp("axis", np.array(-2, I32))
    y = np.flip(np.cumsum(np.flip(x, 1), axis=1, dtype=F32), 1) - x
    m.out("y", y)
    m.node("CumSum", ["x", "axis"], "y", exclusive=1, reverse=1)


def cumsum_ints(m, r):
    # i64 sums that carry past 32 bits (axis 0, an i64 axis), and u8 sums that wrap (axis 1)
    x = m.inp("x", r.integers(2 ** 31, 2 ** 33, (6, 3)).astype(I64))
    m.inp("a0", np.array(0, I64))
    m.out("y", np.cumsum(x, axis=0))
    m.node("CumSum", ["x", "a0"], "y")
    b = m.inp("b", r.integers(0, 255, (2, 9)).astype(U8))
    m.weight("a1", np.array(1, I32))
    m.out("yb", (np.cumsum(b.astype(np.int64), axis=1) & 0xff).astype(U8))
    m.node("CumSum", ["b", "a1"], "yb")


def hardmax_ties_nan(m, r):
    # ties (the first wins) and NaN (the first NaN wins) along the middle axis
    x = np.array([0.0, 2.0, 1.0])[r.integers(0, 3, (3, 6, 4))].astype(F32)
    x[1, 3, 2] = x[1, 5, 2] = np.nan
    m.inp("x", x)
    f = np.where(np.isnan(x), np.inf, x)
    y = (np.arange(6)[None, :, None] == np.argmax(f, axis=1)[:, None, :]).astype(F32)
    m.out("y", y)
    m.node("Hardmax", ["x"], "y", axis=1)


def topk_ties_nan(m, r):
    # the 4 largest of 11 along axis 1: tied values (the lower index first) and NaN (largest)
    x = np.array([0.0, 1.0, -1.0, 2.0])[r.integers(0, 4, (3, 11, 2))].astype(F32)
    x[0, 7, 1] = x[2, 2, 0] = x[2, 9, 0] = np.nan
    m.inp("x", x)
    m.ints("k", [4])
    order = np.argsort(-np.where(np.isnan(x), np.inf, x), axis=1, kind="stable")[:, :4]
    m.out("v", np.take_along_axis(x, order, axis=1))
    m.out("i", order.astype(I64))
    m.node("TopK", ["x", "k"], ["v", "i"], axis=1)


def topk_smallest_i64(m, r):
    # the 3 smallest i64 (values past 32 bits, signed) along the last axis, ties
    x = m.inp("x", np.array([-2 ** 40, 5, 2 ** 33, -1, 0])[r.integers(0, 5, (4, 9))].astype(I64))
    m.ints("k", [3])
    order = np.argsort(x, axis=1, kind="stable")[:, :3]
    m.out("v", np.take_along_axis(x, order, axis=1))
    m.out("i", order.astype(I64))
    m.node("TopK", ["x", "k"], ["v", "i"], axis=-1, largest=0)


def onehot_float_indices(m, r):
    # f32 indices, truncated; negative ones count from the depth; out of range: all off
    idx = m.inp("i", np.array([[0.0, 2.7, -1.0], [-5.5, 7.0, 4.0]], F32))
    m.ints("depth", [5])
    m.weight("vals", np.array([-2.0, 3.5], F32))
    t = np.trunc(idx).astype(np.int64)
    t = np.where((t < 0) & (t >= -5), t + 5, t)
    m.out("y", np.where(np.arange(5)[None, :, None] == t[:, None, :], F32(3.5), F32(-2.0)))
    m.node("OneHot", ["i", "depth", "vals"], "y", axis=1)


def onehot_f64_i64(m, r):
    # f64 indices just below an integer (truncated in double), and i64 indices past int32
    di = m.inp("di", np.array([2.9999999999, -0.9999999999, 3.0], F64))
    m.ints("depth", [4])
    m.weight("vals", np.array([0, 1], np.int8))
    t = np.trunc(di).astype(np.int64)
    t = np.where((t < 0) & (t >= -4), t + 4, t)
    m.out("y", (np.arange(4)[None, :] == t[:, None]).astype(np.int8))
    m.node("OneHot", ["di", "depth", "vals"], "y", axis=-1)
    ii = m.inp("ii", np.array([1, -2, 2 ** 33 + 1, -(2 ** 33) + 3], I64))
    t = np.where((ii < 0) & (ii >= -4), ii + 4, ii)
    m.out("yi", (np.arange(4)[:, None] == t[None, :]).astype(np.int8))
    m.node("OneHot", ["ii", "depth", "vals"], "yi", axis=0)


def tfidf_ref(tokens, pool, counts, indexes, weights, lo, hi, skip, mode):
    """TfIdfVectorizer by its definition: each gram of n in [lo, hi] counted at every start and item
    distance 1 .. skip + 1 (unigrams once per start), into its column; TF, IDF or TFIDF."""
    rows = np.atleast_2d(tokens)
    grams, starts = [], list(counts) + [len(pool)]
    for n in range(1, len(counts) + 1):
        for j in range(starts[n - 1], starts[n], n):
            grams.append(tuple(pool[j:j + n]))
    y = np.zeros((rows.shape[0], max(indexes) + 1), F32)
    for r, row in enumerate(rows):
        for g, col in zip(grams, indexes):
            n = len(g)
            if not lo <= n <= hi:
                continue
            for d in range(1, 2 if n == 1 else skip + 2):
                for s in range(len(row) - (n - 1) * d):
                    y[r, col] += all(row[s + k * d] == g[k] for k in range(n))
    w = np.array(weights, F64)
    if mode == "IDF":
        y = np.where(y > 0, w, 0)
    elif mode == "TFIDF":
        y = y * w
    return y.astype(F32).reshape(np.shape(tokens)[:-1] + (y.shape[1],))


def tfidf_uni_bigrams(m, r):
    # unigrams and bigrams with skips, TFIDF with weights, rows of i32 tokens; a second node on
    # i64 tokens past int32 in IDF mode
    toks = m.inp("t", np.array([[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 6], [5, 6, 6, 7, 7, 8, 2, 2, 3, 9, 5, 5]], I32))
    pool, w = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7], [0.5, 1.0, 1.5, 2.0, 0.25, 3.0, 0.1]
    m.out("y", tfidf_ref(toks, pool, [0, 4], range(7), w, 1, 2, 2, "TFIDF"))
    m.node("TfIdfVectorizer", ["t"], "y", mode="TFIDF", min_gram_length=1, max_gram_length=2, max_skip_count=2,
           ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_int64s=pool, weights=w)
    big = 1 << 40
    b = m.inp("b", np.array([big + 1, big, big + 1, 7, big, big + 1], I64))
    pool, w = [big, big + 1, big + 1, big, 7, 7], [1.25, 0.5, 2.0]
    m.out("yb", tfidf_ref(b, pool, [0, 0], range(3), w, 2, 2, 1, "IDF"))
    m.node("TfIdfVectorizer", ["b"], "yb", mode="IDF", min_gram_length=2, max_gram_length=2, max_skip_count=1,
           ngram_counts=[0, 0], ngram_indexes=[0, 1, 2], pool_int64s=pool, weights=w)

def eyelike_offsets(m, r):
    # k above the diagonal on i64 (8-byte ones), k below on u8, k past the columns (all zeros) on f32
    a = m.inp("a", np.zeros((5, 7), I64))
    m.out("ya", np.eye(5, 7, 2, dtype=I64))
    m.node("EyeLike", ["a"], "ya", k=2)
    b = m.inp("b", np.zeros((6, 4), F32))
    m.out("yb", np.eye(6, 4, -3, dtype=U8))
    m.node("EyeLike", ["b"], "yb", k=-3, dtype="u8")
    m.out("yc", np.zeros((6, 4), F32))
    m.node("EyeLike", ["b"], "yc", k=9)


def range_large(m, r):
    # outputs past the constant folder's 16 MB, so the kernel runs: f32 and i64 (a negative delta)
    n = (1 << 22) + 3
    s, d = F32(0.3), F32(0.1)   # not dyadic: the rounding of start + i * delta matters
    m.weight("s", np.array(s, F32))
    m.weight("l", np.array(float(s) + float(d) * (n - 0.5), F32))
    m.weight("d", np.array(d, F32))
    m.out("y", (np.float64(s) + np.arange(n) * np.float64(d)).astype(F32))
    m.node("Range", ["s", "l", "d"], "y")
    k = (1 << 21) + 5
    m.weight("si", np.array(3 << 32, I64))
    m.weight("li", np.array((3 << 32) - 7 * k, I64))
    m.weight("di", np.array(-7, I64))
    m.out("yi", (3 << 32) - 7 * np.arange(k, dtype=I64))
    m.node("Range", ["si", "li", "di"], "yi")
    # i32 from the top of its range down
    n32 = (1 << 22) + 9
    m.weight("s32", np.array(2 ** 31 - 1, I32))
    m.weight("l32", np.array(2 ** 31 - 1 - 3 * n32, I32))
    m.weight("d32", np.array(-3, I32))
    m.out("y32", (2 ** 31 - 1 - 3 * np.arange(n32, dtype=I64)).astype(I32))
    m.node("Range", ["s32", "l32", "d32"], "y32")


def range_large_f64(m, r):
    # f64, start and delta not floats: the same bits as the C kernel (each constant exact)
    m.tol = {"rtol": 1e-15, "atol": 0.0}
    k = (1 << 21) + 5
    m.weight("sd", np.array(1.0 / 3.0, F64))
    m.weight("ld", np.array(1.0 / 3.0 + 0.7 * (k - 0.5), F64))
    m.weight("dd", np.array(0.7, F64))
    m.out("yd", 1.0 / 3.0 + np.arange(k) * 0.7)
    m.node("Range", ["sd", "ld", "dd"], "yd")
    # magnitudes past float's range (the constants scaled by powers of two)
    s, d = -1.5e300 / 7, 3.25e293 / 3
    m.weight("sb", np.array(s, F64))
    m.weight("lb", np.array(s + d * (k - 0.5), F64))
    m.weight("db", np.array(d, F64))
    m.out("yb", s + np.arange(k) * d)
    m.node("Range", ["sb", "lb", "db"], "yb")


def reverse_sequence_axes(m, r):
    # time axis 0 / batch axis 1 with i64 lengths (0 and the full length among them), and the
    # transposed layout with i32 lengths on 8-byte elements
    x = m.inp("x", randn(r, 6, 4, 3))
    lens = m.inp("l", np.array([6, 0, 3, 1], I64))
    y = x.copy()
    for b in range(4):
        y[:lens[b], b] = x[:lens[b], b][::-1]
    m.out("y", y)
    m.node("ReverseSequence", ["x", "l"], "y", time_axis=0, batch_axis=1)
    xb = m.inp("xb", r.integers(-2 ** 40, 2 ** 40, (3, 5, 2)).astype(I64))
    lb = m.weight("lb", np.array([2, 5, 4], I32))
    yb = xb.copy()
    for b in range(3):
        yb[b, :lb[b]] = xb[b, :lb[b]][::-1]
    m.out("yb", yb)
    m.node("ReverseSequence", ["xb", "lb"], "yb", time_axis=1, batch_axis=0)


def max_unpool_shape_dups(m, r):
    # indices from the data (a duplicate: the later input wins), into an output_shape larger than
    # the default unpooled shape
    x = m.inp("x", randn(r, 1, 2, 2, 3))
    idx = np.array([[[[0, 3, 5], [13, 13, 20]], [[26, 24, 30], [33, 35, 40]]]], I64)
    m.inp("i", idx)
    m.ints("shape", [1, 2, 5, 7])
    y = np.zeros((1, 2, 5, 7), F32)
    flat = y.reshape(2, 5, 7)
    for c in range(2):
        for a in range(2):
            for b in range(3):
                q = idx[0, c, a, b]   # over the unpooled (1, 2, 4, 6) tensor
                flat[q // 24, (q % 24) // 6, q % 6] = x[0, c, a, b]
    m.out("y", y)
    m.node("MaxUnpool", ["x", "i", "shape"], "y", kernel_shape=[2, 2], strides=[2, 2])


def lpnorm_p1_p2(m, r):
    x = m.inp("x", randn(r, 3, 5, 4))
    n1 = np.abs(x).sum(axis=1, keepdims=True)
    m.out("y1", x / n1)
    m.node("LpNormalization", ["x"], "y1", axis=1, p=1)
    z = randn(r, 4, 7)
    z[2] = 0.0   # a zero norm: 0
    m.inp("z", z)
    n2 = np.sqrt((z * z).sum(axis=-1, keepdims=True))
    m.out("y2", np.where(n2 != 0, z / np.where(n2 != 0, n2, 1), 0).astype(F32))
    m.node("LpNormalization", ["z"], "y2", axis=-1, p=2)


def mvn_wide(m, r):
    # the default axes [0, 2, 3]: 3 * 7 * 9 = 189 elements per channel, past a workgroup's 128
    x = m.inp("x", randn(r, 3, 5, 7, 9) * 2 + 1)
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    sd = np.sqrt(((x - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True))
    m.out("y", ((x - mean) / (sd + 1e-9)).astype(F32))
    m.node("MeanVarianceNormalization", ["x"], "y")


def lrn_odd_even(m, r):
    x = m.inp("x", randn(r, 2, 7, 5, 3))
    for size, name in ((3, "y3"), (4, "y4")):
        sq = np.zeros_like(x, dtype=F64)
        for c in range(7):
            lo, hi = max(0, c - (size - 1) // 2), min(6, c + size // 2)
            sq[:, c] = (x[:, lo:hi + 1].astype(F64) ** 2).sum(axis=1)
        m.out(name, (x / (2.0 + 0.5 / size * sq) ** 0.6).astype(F32))
        m.node("LRN", ["x"], name, size=size, alpha=0.5, beta=0.6, bias=2.0)


CASES = [nll_weight_ii_mean, nll_many_positions_sum, nll_none_f64_high_ii, nll_all_ignored_mean,
         sce_log_prob_none_nan, sce_weight_mean_many, sce_f16_sum,
         gather_elements_negative, gather_elements_i32_bytes,
         scatter_elements_dup_none, scatter_elements_add_i64, scatter_elements_mul_u8,
         scatter_elements_add_f16_bool_mul, scatter_nd_slices_dup, scatter_nd_add_mul, gather_nd_batch_negative,
         gather_nd_i32_whole,
         trilu_upper_k_input, trilu_lower_i64_far_k, trilu_lower_bytes, cumsum_exclusive_reverse, cumsum_ints,
         hardmax_ties_nan, topk_ties_nan, topk_smallest_i64, onehot_float_indices, onehot_f64_i64,
         tfidf_uni_bigrams, eyelike_offsets, range_large, range_large_f64,
         reverse_sequence_axes, max_unpool_shape_dups,
         lpnorm_p1_p2, mvn_wide, lrn_odd_even]
