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


# ---- Resize ----

COORDS = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"]
NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]


def resize_out(m, name, x, dims, dtype=None):
    m.out(name, np.zeros(dims, dtype or x.dtype))


# (axis length, f32 scale) pairs per (coordinate mode, nearest mode) where
# x_ori computed in float picks another element than the C kernel's double
# (found by comparing float32 arithmetic with exact fractions)
TRICKY = [[(12, 5 / 6), (10, 0.7)], [(20, 1.35), (10, 1.1)], [(14, 27 / 7), (25, 1 / 3)], [(33, 5 / 3), (37, 1.4)],
          [(10, 7 / 6), (8, 0.125)], [(4, 0.25), (8, 11 / 6)], [(33, 5 / 11), (27, 1 / 3)], [(10, 7 / 3), (36, 7 / 11)],
          [(3, 5 / 3), (10, 1.3)], [(21, 5 / 9), (28, 41 / 28)], [(37, 21 / 37), (10, 2.2)], [(3, 5 / 3), (5, 3.8)],
          [(14, 22 / 7), (13, 30 / 13)], [(20, 6 / 11), (7, 1.2)], [(19, 4 / 11), (16, 1 / 3)], [(11, 9 / 7), (10, 2.8)],
          [(13, 43 / 13), (9, 11 / 7)], [(35, 0.2), (10, 2.2)], [(30, 0.3), (12, 11 / 12)], [(24, 59 / 24), (18, 41 / 18)]]


def resize_nearest_runtime_scales(m, r):
    # every coordinate mode with every nearest mode, each Resize with its own
    # scales read at run time, on axes where float arithmetic would pick wrong
    # elements; the input is a ramp, so every element is told apart
    k = 0
    for coord in COORDS:
        for nm in NEAREST:
            (n0, s0), (n1, s1) = TRICKY[k]
            x = m.inp("x%d" % k, np.arange(n0 * n1, dtype=F32).reshape(n0, n1))
            sc = m.inp("s%d" % k, np.array([s0, s1], F32))
            m.node("Resize", ["x%d" % k, "", "s%d" % k], "y%d" % k, mode="nearest",
                   coordinate_transformation_mode=coord, nearest_mode=nm)
            resize_out(m, "y%d" % k, x, tuple(int(np.floor(np.float64(sc[i]) * (n0, n1)[i])) for i in range(2)))
            k += 1


def resize_nearest_sizes_u8(m, r):
    # tables from sizes (6 -> 5 and 7 -> 3: inexact scales whose coordinates
    # sit on halves), bytes of u8 moved
    x = m.inp("x", r.integers(0, 255, (1, 2, 6, 7)).astype(np.uint8))
    for k, (coord, nm) in enumerate([("half_pixel", "round_prefer_floor"), ("half_pixel", "round_prefer_ceil"),
                                     ("align_corners", "floor"), ("asymmetric", "ceil"),
                                     ("tf_half_pixel_for_nn", "round_prefer_ceil")]):
        m.ints("sz%d" % k, [1, 2, 5, 3])
        m.node("Resize", ["x", "", "", "sz%d" % k], "y%d" % k, mode="nearest", coordinate_transformation_mode=coord,
               nearest_mode=nm)
        resize_out(m, "y%d" % k, x, (1, 2, 5, 3))


def resize_nearest_i64_runtime_sizes(m, r):
    # 8-byte elements; sizes read at run time are checked against the shape;
    # a roi read at run time that half_pixel ignores
    x = m.inp("x", r.integers(-2 ** 40, 2 ** 40, (3, 4)).astype(I64))
    m.inp("roi", np.array([0.1, 0.2, 0.8, 0.9], F32))
    m.inp("sz", np.array([7, 9], I64))
    m.node("Resize", ["x", "roi", "", "sz"], "y", mode="nearest")
    resize_out(m, "y", x, (7, 9))


def resize_nearest_crop_bool(m, r):
    # tf_crop_and_resize with a constant roi partly outside: extrapolation (1 -> true) in bool
    x = m.inp("x", r.integers(0, 2, (5, 6)).astype(bool))
    m.weight("roi", np.array([-0.2, 0.1, 1.3, 0.9], F32))
    m.ints("sz", [7, 4])
    m.node("Resize", ["x", "roi", "", "sz"], "y", mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
           extrapolation_value=1.0)
    resize_out(m, "y", x, (7, 4))


def resize_linear_runtime_scales(m, r):
    x = m.inp("x", randn(r, 2, 3, 9, 13))
    m.inp("s", np.array([1, 1, 0.7, 1.9], F32))
    m.node("Resize", ["x", "", "s"], "y", mode="linear")
    resize_out(m, "y", x, (2, 3, 6, 24))


def resize_cubic_constant_scales_exclude(m, r):
    x = m.inp("x", randn(r, 1, 2, 8, 5))
    m.weight("s", np.array([1, 1, 1.6, 0.8], F32))
    for k, coord in enumerate(["half_pixel", "align_corners", "asymmetric"]):
        m.node("Resize", ["x", "", "s"], "y%d" % k, mode="cubic", coordinate_transformation_mode=coord,
               cubic_coeff_a=-0.5, exclude_outside=k != 1)
        resize_out(m, "y%d" % k, x, (1, 2, 12, 4))


# (axis length, size) pairs per (coordinate mode, nearest mode) where the C
# kernel's double arithmetic (its scale out / in rounded) picks other
# elements than exact arithmetic would (found by comparing the kernel's
# formulas in Python floats with fractions)
DOUBLE_SIZES = [[[(60, 65), (56, 68)], [(60, 66), (72, 44)], [(54, 66), (40, 88)], [(77, 21), (66, 18)]],
                [[(60, 65), (56, 68)], [(60, 66), (72, 44)], [(54, 66), (40, 88)], [(77, 21), (66, 18)]],
                [[(70, 47), (46, 61)], [(11, 61), (19, 61)], [(29, 15), (25, 109)], [(77, 39), (55, 28)]],
                [[(77, 42), (66, 36)], [(75, 42), (36, 88)], [(70, 45), (49, 63)], [(35, 85), (78, 45)]],
                [[(77, 21), (66, 18)], [(54, 66), (40, 88)], [(60, 66), (72, 44)], [(60, 65), (56, 68)]]]


def resize_nearest_sizes_double(m, r):
    # nearest from sizes on axes where only the C kernel's own double
    # rounding gives its elements, every coordinate x nearest mode; a ramp
    for c, coord in enumerate(COORDS):
        for k, nm in enumerate(NEAREST):
            (n0, o0), (n1, o1) = DOUBLE_SIZES[c][k]
            name = "%d%d" % (c, k)
            x = m.inp("x" + name, np.arange(n0 * n1, dtype=F32).reshape(n0, n1))
            m.ints("sz" + name, [o0, o1])
            m.node("Resize", ["x" + name, "", "", "sz" + name], "y" + name, mode="nearest",
                   coordinate_transformation_mode=coord, nearest_mode=nm)
            resize_out(m, "y" + name, x, (o0, o1))


def resize_cubic_runtime_scales_pytorch(m, r):
    # pytorch_half_pixel with an axis whose output has one element (x_ori = 0)
    x = m.inp("x", randn(r, 3, 5, 6))
    m.inp("s", np.array([1, 0.2, 1.5], F32))
    m.node("Resize", ["x", "", "s"], "y", mode="cubic", coordinate_transformation_mode="pytorch_half_pixel",
           exclude_outside=1)
    resize_out(m, "y", x, (3, 1, 9))


def resize_crop_runtime_roi(m, r):
    # linear tf_crop_and_resize with the roi read at run time, partly outside
    x = m.inp("x", randn(r, 1, 1, 6, 7))
    m.inp("roi", np.array([0, 0, -0.25, 0.1, 1, 1, 0.9, 1.4], F32))
    m.ints("sz", [1, 1, 5, 6])
    m.node("Resize", ["x", "roi", "", "sz"], "y", mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
           extrapolation_value=7.5)
    resize_out(m, "y", x, (1, 1, 5, 6))


def resize_linear_f16_sizes(m, r):
    x = m.inp("x", randn(r, 4, 10).astype(np.float16))
    m.ints("sz", [7, 15])
    m.node("Resize", ["x", "", "", "sz"], "y", mode="linear", coordinate_transformation_mode="asymmetric")
    resize_out(m, "y", x, (7, 15))


# ---- 3-D and transposed convolutions ----

def conv_out(i, k, s, d, pb, pe):
    return (i + pb + pe - d * (k - 1) - 1) // s + 1


def convt_out(i, k, s, d, pb, pe, op=0):
    return s * (i - 1) + op + (k - 1) * d + 1 - pb - pe


def conv3d_grouped_strided(m, r):
    x = m.inp("x", randn(r, 2, 4, 7, 9, 6))
    m.weight("w", randn(r, 6, 2, 3, 2, 3))
    m.weight("b", randn(r, 6))
    dims = [conv_out(7, 3, 2, 1, 1, 0), conv_out(9, 2, 1, 3, 0, 2), conv_out(6, 3, 1, 2, 2, 1)]
    m.node("Conv", ["x", "w", "b"], "y", group=2, strides=[2, 1, 1], dilations=[1, 3, 2], pads=[1, 0, 2, 0, 2, 1])
    m.out("y", np.zeros([2, 6] + dims, F32))


def convtranspose_2d_grouped(m, r):
    x = m.inp("x", randn(r, 2, 6, 5, 7))
    m.weight("w", randn(r, 6, 2, 3, 4))
    m.weight("b", randn(r, 6))
    dims = [convt_out(5, 3, 2, 2, 1, 2, 1), convt_out(7, 4, 3, 1, 0, 1, 2)]
    m.node("ConvTranspose", ["x", "w", "b"], "y", group=3, strides=[2, 3], dilations=[2, 1], pads=[1, 0, 2, 1],
           output_padding=[1, 2])
    m.out("y", np.zeros([2, 6] + dims, F32))


def convtranspose_1d_and_3d(m, r):
    x = m.inp("x", randn(r, 1, 3, 11))
    m.weight("w", randn(r, 3, 4, 5))
    m.node("ConvTranspose", ["x", "w"], "y", strides=[3], pads=[2, 1])
    m.out("y", np.zeros((1, 4, convt_out(11, 5, 3, 1, 2, 1)), F32))
    v = m.inp("v", randn(r, 1, 2, 3, 4, 5))
    m.weight("u", randn(r, 2, 3, 2, 3, 2))
    m.node("ConvTranspose", ["v", "u"], "z", strides=[2, 1, 2], dilations=[1, 2, 1])
    m.out("z", np.zeros((1, 3, convt_out(3, 2, 2, 1, 0, 0), convt_out(4, 3, 1, 2, 0, 0), convt_out(5, 2, 2, 1, 0, 0)),
                        F32))


# ---- GridSample ----

def gs_near_ties(size, align):
    """f32 grid values whose pixel coordinate lies on, or a few ulps from, a
    rounding tie: float arithmetic rounds some of them the other way."""
    f = np.float32
    vals = []
    for k in range(-3, size + 3):
        t = (2 * k + 2) / size - 1 if not align else (2 * k + 1) / (size - 1) - 1
        g = f(t)
        lo = hi = g
        vals.append(g)
        for _ in range(3):
            lo, hi = np.nextafter(lo, f(-np.inf)), np.nextafter(hi, f(np.inf))
            vals += [lo, hi]
    return np.array(vals, F32)


def gridsample_modes(m, r):
    # every mode x padding x align_corners on random grids reaching past the borders
    x = m.inp("x", randn(r, 2, 3, 5, 7))
    m.inp("grid", r.uniform(-1.6, 1.6, (2, 4, 6, 2)).astype(F32))
    k = 0
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for align in (0, 1):
                m.node("GridSample", ["x", "grid"], "y%d" % k, mode=mode, padding_mode=pad, align_corners=align)
                m.out("y%d" % k, np.zeros((2, 3, 4, 6), F32))
                k += 1


def gridsample_nearest_ties(m, r):
    # nearest on coordinates at and around ties, read from a ramp image
    h, w = 3, 5
    m.inp("x", np.arange(h * w, dtype=F32).reshape(1, 1, h, w))
    for align in (0, 1):
        gx, gy = gs_near_ties(w, align), gs_near_ties(h, align)
        n = max(len(gx), len(gy))
        grid = np.stack([np.resize(gx, n), np.resize(gy[::-1], n)], axis=-1).reshape(1, 1, n, 2)
        m.inp("g%d" % align, grid.astype(F32))
        for pad in ("zeros", "border", "reflection"):
            m.node("GridSample", ["x", "g%d" % align], "y%d%s" % (align, pad), mode="nearest", padding_mode=pad,
                   align_corners=align)
            m.out("y%d%s" % (align, pad), np.zeros((1, 1, 1, n), F32))


def gridsample_f16(m, r):
    x = m.inp("x", randn(r, 1, 2, 6, 4).astype(np.float16))
    m.inp("grid", r.uniform(-1.2, 1.2, (1, 3, 5, 2)).astype(np.float16))
    m.node("GridSample", ["x", "grid"], "y", mode="bicubic", padding_mode="reflection")
    m.out("y", np.zeros((1, 2, 3, 5), np.float16))


# ---- Einsum ----

def einsum_float_three_operands(m, r):
    # a diagonal, a broadcast batch ('...'), three operands, a long sum
    a = m.inp("a", randn(r, 2, 1, 5, 5))
    b = m.inp("b", randn(r, 3, 5, 300))
    c = m.inp("c", randn(r, 300, 4))
    m.node("Einsum", ["a", "b", "c"], "y", equation="...ii,...ik,kj->...ij")
    m.out("y", np.einsum("...ii,...ik,kj->...ij", a, b, c))


def einsum_ints(m, r):
    # i8 products wrap; i64 beyond 32 bits; u16 transpose-and-sum
    a = m.inp("a", r.integers(-128, 128, (6, 7)).astype(np.int8))
    b = m.inp("b", r.integers(-128, 128, (7, 5)).astype(np.int8))
    m.node("Einsum", ["a", "b"], "y", equation="ij,jk->ik")
    m.out("y", np.einsum("ij,jk->ik", a, b))
    c = m.inp("c", r.integers(-2 ** 33, 2 ** 33, (4, 9)).astype(I64))
    m.node("Einsum", ["c", "c"], "z", equation="ij,ij->i")
    m.out("z", np.einsum("ij,ij->i", c, c))
    d = m.inp("d", r.integers(0, 2 ** 16, (3, 4, 5)).astype(np.uint16))
    m.node("Einsum", ["d"], "w", equation="abc->ca")
    m.out("w", np.einsum("abc->ca", d))


# ---- quantization ----

def quant_ties(r, count):
    """(x, scale) f32 pairs whose IEEE quotient is exactly a tie k + 0.5 though
    x / scale is not: a division off by an ulp rounds them the other way."""
    f = np.float32
    pairs = []
    while len(pairs) < count:
        k, s = int(r.integers(-120, 120)), f(r.uniform(0.01, 3))
        x = f((k + 0.5) * float(s))
        for d in (-2, -1, 0, 1, 2):
            xx = x
            for _ in range(abs(d)):
                xx = np.nextafter(xx, f(np.inf) if d > 0 else f(-np.inf))
            if float(xx / s) == k + 0.5 and float(xx) / float(s) != k + 0.5:
                pairs.append((xx, s))
    return pairs


def quantize_ties_and_edges(m, r):
    # one scale per element (axis 0): tied quotients, then zero, subnormal and
    # huge scales, NaN and infinite x, negative zero
    pairs = quant_ties(r, 48)
    tiny, big = np.float32(1e-40), np.float32(3e38)
    pairs += [(np.float32(3), np.float32(0)), (np.float32(-3), np.float32(0)), (np.float32(1e-39), tiny),
              (np.float32(2.5), tiny), (np.float32(1e30), big), (np.float32("nan"), np.float32(1)),
              (np.float32("inf"), np.float32(2)), (np.float32(-0.0), np.float32(1)), (np.float32(7e-45), tiny),
              (np.float32(254.5), np.float32(1)), (np.float32(-128.5), np.float32(1))]
    x = np.array([p[0] for p in pairs], F32)
    sc = np.array([p[1] for p in pairs], F32)
    m.inp("x", x)
    m.inp("s", sc)
    m.inp("zu", np.full(len(x), 128, np.uint8))
    m.node("QuantizeLinear", ["x", "s", "zu"], "yu", axis=0)
    m.out("yu", np.zeros(len(x), np.uint8))
    m.node("QuantizeLinear", ["x", "s"], "yi", axis=0)   # no zero point: u8
    m.out("yi", np.zeros(len(x), np.uint8))
    m.inp("zi", np.array([0, -3] * (len(x) // 2) + [0] * (len(x) % 2), np.int8))
    m.node("QuantizeLinear", ["x", "s", "zi"], "y8", axis=0)
    m.out("y8", np.zeros(len(x), np.int8))


def dequantize_per_axis(m, r):
    # i32 values and zero points whose differences need 33 bits; u8 per axis
    q = m.inp("q", r.integers(-2 ** 31, 2 ** 31, (3, 5)).astype(I32))
    m.inp("zp", np.array([-2 ** 31, 2 ** 31 - 1, 7], I32))
    m.inp("s", np.array([1.5e-9, 0.25, 3.0], F32))
    m.node("DequantizeLinear", ["q", "s", "zp"], "y", axis=0)
    m.out("y", np.zeros(q.shape, F32))
    u = m.inp("u", r.integers(0, 256, (2, 4, 3)).astype(np.uint8))
    m.inp("us", np.array([0.1, 2.0, 0.003, 17.0], F32))
    m.inp("uz", np.array([0, 128, 255, 3], np.uint8))
    m.node("DequantizeLinear", ["u", "us", "uz"], "z", axis=1)
    m.out("z", np.zeros(u.shape, F32))


def dynamic_quantize_ranges(m, r):
    # a long tensor with a NaN (ignored by the range), only positives (the
    # range still holds 0), all zeros (scale 0)
    a = randn(r, 100003) * 3
    a[77] = np.nan
    m.inp("a", a)
    m.inp("b", np.abs(randn(r, 7, 9)) + 0.5)
    m.inp("c", np.zeros(300, F32))
    for k, x in enumerate("abc"):
        m.node("DynamicQuantizeLinear", [x], ["y%d" % k, "s%d" % k, "z%d" % k])
        m.out("y%d" % k, np.zeros(m.in_arrays[k].shape, np.uint8))
        m.out("s%d" % k, np.zeros((), F32))
        m.out("z%d" % k, np.zeros((), np.uint8))


def matmul_integer_batched(m, r):
    # u8 x i8, batch dims broadcast, zero points per row of A and per column of B
    a = m.inp("a", r.integers(0, 256, (3, 1, 5, 37)).astype(np.uint8))
    b = m.inp("b", r.integers(-128, 128, (2, 37, 6)).astype(np.int8))
    az = m.inp("az", r.integers(0, 256, 5).astype(np.uint8))
    bz = m.inp("bz", r.integers(-128, 128, 6).astype(np.int8))
    m.node("MatMulInteger", ["a", "b", "az", "bz"], "y")
    m.out("y", np.matmul(a.astype(I32) - az.astype(I32)[:, None], b.astype(I32) - bz.astype(I32)))


def qlinear_matmul_per_axis(m, r):
    # per-row a_scale, per-column b_scale, an i8 output with a zero point
    a = m.inp("a", r.integers(-128, 128, (4, 9)).astype(np.int8))
    b = m.inp("b", r.integers(0, 256, (9, 7)).astype(np.uint8))
    for name, v in (("as", r.uniform(0.001, 0.05, 4)), ("az", r.integers(-10, 10, 4).astype(np.int8)),
                    ("bs", r.uniform(0.001, 0.05, 7)), ("bz", r.integers(100, 150, 7).astype(np.uint8)),
                    ("ys", np.array(1.5, F32)), ("yz", np.array(-5, np.int8))):
        m.inp(name, np.asarray(v, F32 if name.endswith("s") else None))
    m.node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], "y")
    m.out("y", np.zeros((4, 7), np.int8))


def conv_integer_grouped(m, r):
    x = m.inp("x", r.integers(0, 256, (2, 4, 9, 8)).astype(np.uint8))
    w = m.weight("w", r.integers(-128, 128, (6, 2, 3, 2)).astype(np.int8))
    m.inp("xz", np.array(131, np.uint8))
    m.weight("wz", r.integers(-5, 5, 6).astype(np.int8))
    m.node("ConvInteger", ["x", "w", "xz", "wz"], "y", group=2, strides=[2, 1], dilations=[1, 3], pads=[1, 2, 0, 1])
    m.out("y", np.zeros((2, 6, 4, 8), I32))


def qlinear_conv_bias(m, r):
    x = m.inp("x", r.integers(0, 256, (1, 3, 7, 7)).astype(np.uint8))
    m.weight("w", r.integers(-128, 128, (5, 3, 3, 3)).astype(np.int8))
    m.weight("b", r.integers(-3000, 3000, 5).astype(I32))
    for name, v in (("xs", np.array(0.03, F32)), ("xz", np.array(120, np.uint8)),
                    ("ws", r.uniform(0.001, 0.01, 5).astype(F32)), ("wz", np.zeros(5, np.int8)),
                    ("ys", np.array(1.0, F32)), ("yz", np.array(100, np.uint8))):
        m.weight(name, v)
    m.node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], "y", pads=[1, 1, 1, 1])
    m.out("y", np.zeros((1, 5, 7, 7), np.uint8))


# ---- signal ----

def dft_axes_lengths(m, r):
    # a real input along a middle axis (padded to 64 points, onesided), a
    # complex one truncated to 45 points (not a power of two), and an inverse
    x = m.inp("x", randn(r, 2, 50, 3, 1))
    m.ints("n64", [64])
    m.node("DFT", ["x", "n64"], "y", axis=1, onesided=1)
    m.out("y", np.zeros((2, 33, 3, 2), F32))
    z = m.inp("z", randn(r, 3, 50, 2))
    m.ints("n45", [45])
    m.node("DFT", ["z", "n45"], "w", axis=1)
    m.out("w", np.zeros((3, 45, 2), F32))
    m.node("DFT", ["z"], "v", axis=1, inverse=1)
    m.out("v", np.zeros((3, 50, 2), F32))


def stft_window_complex(m, r):
    x = m.inp("x", randn(r, 2, 300, 1))
    m.ints("step", [24])
    w = m.weight("win", (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(40) / 40)).astype(F32))
    m.node("STFT", ["x", "step", "win"], "y")
    m.out("y", np.zeros((2, 11, 21, 2), F32))
    z = m.inp("z", randn(r, 1, 100, 2))
    m.ints("step2", [7])
    m.ints("flen", [30])
    m.node("STFT", ["z", "step2", "", "flen"], "u", onesided=0)
    m.out("u", np.zeros((1, 11, 30, 2), F32))


def windows_unfolded(m, r):
    # past the 16 MB rlxc folds constants up to, so the kernel computes them
    n = (1 << 22) + 5
    for k, op in enumerate(("HannWindow", "HammingWindow", "BlackmanWindow")):
        m.ints("n%d" % k, [n])
        m.node(op, ["n%d" % k], "w%d" % k, periodic=k != 1)
        m.out("w%d" % k, np.zeros(n, F32))


# ---- RoiAlign ----

def roialign_modes(m, r):
    # rois across two images, partly outside the feature map, tiny and
    # inverted ones; avg and max, both coordinate modes, fixed and adaptive grids
    x = m.inp("x", randn(r, 2, 3, 12, 10))
    rois = np.array([[0, 0, 36, 44], [-8, 4, 20, 60], [10, 10, 11, 12], [30, 30, 6, 2], [2.5, 7.25, 39, 33]], F32)
    m.inp("rois", rois)
    m.inp("bi", np.array([0, 1, 1, 0, 1], I64))
    k = 0
    for mode in ("avg", "max"):
        for ctm in ("half_pixel", "output_half_pixel"):
            for sr in (2, 0):
                m.node("RoiAlign", ["x", "rois", "bi"], "y%d" % k, mode=mode, coordinate_transformation_mode=ctm,
                       output_height=3, output_width=4, sampling_ratio=sr, spatial_scale=0.25)
                m.out("y%d" % k, np.zeros((5, 3, 3, 4), F32))
                k += 1


# ---- Det ----

def det_batched(m, r):
    # a batch of 37 x 37 matrices (near 1 in magnitude), one singular (a repeated
    # row), one that needs pivoting from its first column (a zero corner)
    x = randn(r, 2, 3, 37, 37) * 0.3 + np.eye(37, dtype=F32)
    x[0, 1, 5] = x[0, 1, 9]
    x[1, 2, 0, 0] = 0
    m.inp("x", x)
    m.node("Det", ["x"], "y")
    m.out("y", np.linalg.det(x.astype(np.float64)).astype(F32))
    s = m.inp("s", randn(r, 4, 3, 3))
    m.node("Det", ["s"], "z")
    m.out("z", np.linalg.det(s.astype(np.float64)).astype(F32))


CASES = [lstm_bidir_lens_peepholes, lstm_batch_first_forget_clip, gru_reverse_wide, gru_bidir_linear_before_reset,
         gru_no_bias_no_state, rnn_batch_first_bidir, rnn_affine_scaledtanh_clip, resize_nearest_runtime_scales,
         resize_nearest_sizes_u8, resize_nearest_i64_runtime_sizes, resize_nearest_crop_bool,
         resize_linear_runtime_scales, resize_cubic_constant_scales_exclude, resize_cubic_runtime_scales_pytorch,
         resize_nearest_sizes_double,
         resize_crop_runtime_roi, resize_linear_f16_sizes, conv3d_grouped_strided, convtranspose_2d_grouped,
         convtranspose_1d_and_3d, gridsample_modes, gridsample_nearest_ties, gridsample_f16,
         einsum_float_three_operands, einsum_ints, quantize_ties_and_edges, dequantize_per_axis,
         dynamic_quantize_ranges, matmul_integer_batched, qlinear_matmul_per_axis, conv_integer_grouped,
         qlinear_conv_bias, dft_axes_lengths, stft_window_complex,
         windows_unfolded, det_batched, roialign_modes]
