#!/usr/bin/python3
"""make_seeds.py OUTDIR [WEIGHTS] - raw seed inputs for the fuzz targets.

Writes OUTDIR/TARGET/* for the targets of tests/fuzz/ from the project's own
test models only: the malformed suites (tests/malformed/*.rlxg, the binary
cases of make_binary.py, the ONNX cases of tests/malformed_onnx/make_cases.py),
the e2e cases (tests/e2e/cases.py, one graph per op of lib/ops.def at least),
examples/, and a few hand-made models below for what those lack (control
flow, old opset forms, .npy header variants). The e2e graphs go in as pure
JSON, as containers (weights moved to the data section) and as ONNX (the same
nodes through onnx.helper; e2e's dtype names become ONNX type codes), so all
three readers start from every op. WEIGHTS, the weights file of the weights
target's model, gives that target its seeds (it and cut-off copies).

The committed corpora (tests/fuzz/corpus/TARGET) are these seeds minimized
by coverage: `libFuzzer -merge=1 tests/fuzz/corpus/TARGET OUTDIR/TARGET`
keeps the smallest set of inputs that reaches the same edges (see
tests/fuzz/README.md). Everything here is deterministic.
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MAX_SEED = 64 * 1024          # larger seeds slow every mutation down

NP_OF = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "u8": np.uint8,
         "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
         "u64": np.uint64, "bool": np.bool_}
ONNX_OF = {"f32": T.FLOAT, "f64": T.DOUBLE, "f16": T.FLOAT16, "bf16": T.BFLOAT16, "i8": T.INT8,
           "u8": T.UINT8, "i16": T.INT16, "u16": T.UINT16, "i32": T.INT32, "u32": T.UINT32,
           "i64": T.INT64, "u64": T.UINT64, "bool": T.BOOL}
DTYPE_ATTRS = {"to", "dtype", "output_dtype"}


def write(dirname, name, data):
    if len(data) > MAX_SEED:
        return
    os.makedirs(dirname, exist_ok=True)
    with open(os.path.join(dirname, name), "wb") as f:
        f.write(data)


# ---- .rlxg forms ----

def decode(values, dtype):
    """An e2e weight's JSON data list as a numpy array of its dtype."""
    special = {"nan": float("nan"), "inf": float("inf"), "+inf": float("inf"), "-inf": float("-inf")}
    if dtype in ("f32", "f64", "f16", "bf16"):
        return np.array([special[v] if isinstance(v, str) else v for v in values], dtype=np.float64)
    return np.array([int(v) if isinstance(v, str) else v for v in values], dtype=object)


def array_of(t):
    dt = t["dtype"]
    a = decode(t.get("data", []), dt)
    if dt == "bf16":
        f = a.astype(np.float32).reshape(t["shape"])
        return (f.view(np.uint32) >> 16).astype(np.uint16), dt
    return a.astype(NP_OF[dt]).reshape(t["shape"]), dt


def container(graph):
    """The container form: every inline weight moved to the data section."""
    g = json.loads(json.dumps(graph))
    data = bytearray()
    for w in g.get("weights", []):
        if "data" not in w:
            continue
        arr, _ = array_of(w)
        raw = arr.tobytes()
        data += b"\0" * (-len(data) % 64)
        w["offset"], w["length"] = len(data), len(raw)
        del w["data"]
        data += raw
    text = json.dumps(g).encode()
    head = b"RLXG" + struct.pack("<IQ", 1, len(text)) + text
    return head + b"\0" * (-len(head) % 64) + bytes(data)


# ---- ONNX from the same graphs ----

def onnx_attr(name, value):
    if isinstance(value, str) and name in DTYPE_ATTRS and value in ONNX_OF:
        return ONNX_OF[value]
    if isinstance(value, dict):
        arr, dt = array_of(value)
        t = nh.from_array(arr, name)
        if dt == "bf16":
            t.data_type = T.BFLOAT16
        return t
    if isinstance(value, list) and any(isinstance(v, str) for v in value):
        return [float(v) for v in value]
    return value


def onnx_model(graph, opset):
    inits = []
    for w in graph.get("weights", []):
        arr, dt = array_of(w)
        t = nh.from_array(arr, w["name"])
        if dt == "bf16":
            t.data_type = T.BFLOAT16
        inits.append(t)
    weights = {w["name"]: w for w in graph.get("weights", [])}
    nodes = []
    for n in graph.get("nodes", []):
        attrs = {k: onnx_attr(k, v) for k, v in n.get("attrs", {}).items()}
        ins = n["inputs"]
        # e2e writes ReduceMean/Max/Min's axes as an input (opset 18); opset 17 has the attribute
        if n["op"] in ("ReduceMean", "ReduceMax", "ReduceMin") and len(ins) > 1:
            if ins[1] in weights:
                attrs["axes"] = [int(a) for a in weights[ins[1]]["data"]]
            ins = ins[:1]
        nodes.append(h.make_node(n["op"], ins, n["outputs"], name=n["name"], **attrs))
    ins = [h.make_tensor_value_info(i["name"], ONNX_OF[i["dtype"]], i["shape"]) for i in graph.get("inputs", [])]
    outs = [h.make_tensor_value_info(o["name"], ONNX_OF.get(o.get("dtype"), 0), o.get("shape"))
            for o in graph["outputs"]]
    g = h.make_graph(nodes, graph.get("name", "g"), ins, outs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def vi(name, shape, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def c(name, arr):
    return nh.from_array(np.array(arr), name)


def hand_made_onnx():
    """What the e2e cases lack: control flow, old opset forms, odd attributes."""
    def model(nodes, ins, outs, inits=(), opset=13):
        m = h.make_model(h.make_graph(nodes, "g", ins, outs, initializer=list(inits)),
                         opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8 if opset >= 7 else 3
        return m.SerializeToString()

    body = h.make_graph([
        h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
        h.make_node("Mul", ["y_in", "two"], ["y2"]),
        h.make_node("Add", ["y2", "fi"], ["y_out"]),
        h.make_node("Less", ["i", "lim"], ["c_out"]),
        h.make_node("Identity", ["y_out"], ["s"])],
        "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("y_in", [2])],
        [vi("c_out", [], T.BOOL), vi("y_out", [2]), vi("s", [2])], [c("lim", np.int64(2))])
    yield "loop.onnx", model([h.make_node("Loop", ["M", "cond", "y0"], ["y", "scan"], body=body)], [],
                             [vi("y", None), vi("scan", None)],
                             [c("M", np.int64(4)), c("cond", np.bool_(True)), c("y0", np.float32([1, 2])),
                              c("two", np.float32(2))])
    then_g = h.make_graph([h.make_node("Add", ["y_in", "ten"], ["t"])], "then", [], [vi("t", [])])
    else_g = h.make_graph([h.make_node("Sub", ["y_in", "one_f"], ["e"])], "else", [], [vi("e", [])],
                          [c("one_f", np.float32(1))])
    body = h.make_graph([
        h.make_node("Less", ["i", "one"], ["first"]),
        h.make_node("If", ["first"], ["y_out"], then_branch=then_g, else_branch=else_g),
        h.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("y_in", [])],
        [vi("c_out", [], T.BOOL), vi("y_out", [])])
    yield "if_in_loop.onnx", model([h.make_node("Loop", ["M", "", "y0"], ["y"], body=body)], [], [vi("y", None)],
                                   [c("M", np.int64(3)), c("y0", np.float32(0)), c("ten", np.float32(10)),
                                    c("one", np.int64(1))])
    body = h.make_graph([h.make_node("Add", ["s_in", "xt"], ["s_out"]),
                         h.make_node("Identity", ["s_out"], ["o1"]), h.make_node("Identity", ["s_out"], ["o2"])],
                        "body", [vi("s_in", [2]), vi("xt", [2])], [vi("s_out", [2]), vi("o1", [2]), vi("o2", [2])])
    yield "scan9.onnx", model([h.make_node("Scan", ["s0", "x"], ["s", "out1", "out2"], body=body, num_scan_inputs=1,
                                           scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1, 0],
                                           scan_output_directions=[0, 1])], [],
                              [vi("s", None), vi("out1", None), vi("out2", None)],
                              [c("s0", np.float32([0, 0])), c("x", np.float32([[1, 2, 3], [4, 5, 6]]))], opset=11)
    body = h.make_graph([h.make_node("Add", ["s_in", "xt"], ["s_out"]), h.make_node("Identity", ["s_out"], ["o"])],
                        "body", [vi("s_in", [1]), vi("xt", [1])], [vi("s_out", [1]), vi("o", [1])])
    yield "scan8.onnx", model([h.make_node("Scan", ["", "s0", "x"], ["s", "o"], body=body, num_scan_inputs=1)], [],
                              [vi("s", None), vi("o", None)],
                              [c("s0", np.float32([[0], [10]])), c("x", np.float32([[[1], [2]], [[3], [4]]]))],
                              opset=8)
    # opset 6 and older forms (rewrite_old_version): attributes that later became inputs
    x = [vi("x", [2, 3, 4])]
    yield "old_forms.onnx", model([
        h.make_node("Clip", ["x"], ["a"], min=-1.0, max=1.0),
        h.make_node("Slice", ["a"], ["b"], starts=[0, 1], ends=[2, 3], axes=[0, 1]),
        h.make_node("Pad", ["b"], ["p"], pads=[0, 0, 1, 0, 0, 1], value=0.5),
        h.make_node("Squeeze", ["p"], ["q"], axes=[]),
        h.make_node("Unsqueeze", ["q"], ["u"], axes=[0]),
        h.make_node("ReduceMean", ["u"], ["r"], axes=[1], keepdims=1),
        h.make_node("Softmax", ["r"], ["y"], axis=1),
        h.make_node("Add", ["x", "w"], ["z"], broadcast=1, axis=1),
        h.make_node("Dropout", ["z"], ["d"], is_test=1),
        h.make_node("Reshape", ["d"], ["y2"], shape=[6, 4])],
        x, [vi("y", None), vi("y2", None)], [c("w", np.float32([1, 2, 3]))], opset=4)
    yield "upsample.onnx", model([h.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 2.0], mode="nearest")],
                                 [vi("x", [1, 1, 2, 2])], [vi("y", None)], opset=7)
    yield "topk1.onnx", model([h.make_node("TopK", ["x"], ["v", "i"], k=2)], [vi("x", [3, 4])],
                              [vi("v", None), vi("i", None, T.INT64)], opset=9)
    yield "dims.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", ["N", 3])], [vi("y", ["N", 3])])


def npy(arr, version=(1, 0), header=None, order=False):
    descr = np.lib.format.dtype_to_descr(arr.dtype)
    text = header if header is not None else "{'descr': %r, 'fortran_order': %s, 'shape': %r, }" % (
        descr, order, arr.shape)
    text = text.encode("latin1")
    hl = 2 if version[0] == 1 else 4
    text += b" " * (-(6 + 2 + hl + len(text) + 1) % 64) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack("<H" if hl == 2 else "<I", len(text)) + text + arr.tobytes()


def hand_made_npy():
    r = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    yield "f32.npy", npy(r)
    yield "v2.npy", npy(r, version=(2, 0))
    yield "v3.npy", npy(r, version=(3, 0))
    yield "scalar_f64.npy", npy(np.float64(2.5).reshape(()))
    yield "bool.npy", npy(np.array([True, False]))
    yield "f16.npy", npy(np.arange(5, dtype=np.float16))
    yield "u64.npy", npy(np.array([2 ** 63], dtype=np.uint64))
    yield "empty.npy", npy(np.zeros((0, 3), dtype=np.int8))
    yield "one_tuple.npy", npy(np.arange(3, dtype=np.int64), header="{'descr': '<i8', 'fortran_order': False, 'shape': (3), }")
    yield "fortran.npy", npy(r, order=True)
    yield "long_dims.npy", npy(r, header="{'shape': (2L, 3L, 4L), 'descr': '<f4', 'fortran_order': False}")
    yield "big_endian.npy", npy(r.astype(">f4"))


def main():
    out = sys.argv[1]
    weights = sys.argv[2] if len(sys.argv) > 2 else None
    tmp = os.path.join(out, ".gen")
    shutil.rmtree(out, ignore_errors=True)
    py = sys.executable
    subprocess.run([py, os.path.join(ROOT, "tests/malformed/make_binary.py"), os.path.join(tmp, "mal")], check=True)
    subprocess.run([py, os.path.join(ROOT, "tests/malformed_onnx/make_cases.py"), os.path.join(tmp, "malonnx")],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([py, os.path.join(ROOT, "tests/e2e/cases.py"), os.path.join(tmp, "e2e")], check=True,
                   stdout=subprocess.DEVNULL)
    d_rlxg, d_onnx, d_pipe, d_npy = (os.path.join(out, t) for t in ("rlxg", "onnx", "pipeline", "npy"))

    def both(dirs, name, data):
        for d in dirs:
            write(d, name, data)

    mal = os.path.join(ROOT, "tests/malformed")
    for f in sorted(os.listdir(mal)):
        if f.endswith(".rlxg"):
            both([d_rlxg, d_pipe], "malformed_" + f, open(os.path.join(mal, f), "rb").read())
    for sub, dirs in (("mal", [d_rlxg]), ("malonnx", [d_onnx, d_pipe])):
        for f in sorted(os.listdir(os.path.join(tmp, sub))):
            both(dirs, "malformed_" + f, open(os.path.join(tmp, sub, f), "rb").read())
    ex = open(os.path.join(ROOT, "examples/shapes.rlxg"), "rb").read()
    both([d_rlxg, d_pipe], "shapes.rlxg", ex)
    both([d_rlxg, d_pipe], "shapes_container.rlxg", container(json.loads(ex)))
    both([d_onnx, d_pipe], "shapes.onnx", onnx_model(json.loads(ex), 13))
    e2e = os.path.join(tmp, "e2e")
    for case in open(os.path.join(e2e, "cases.txt")).read().split():
        text = open(os.path.join(e2e, case, "model.rlxg"), "rb").read()
        graph = json.loads(text)
        both([d_rlxg, d_pipe], case + ".rlxg", text)
        both([d_rlxg, d_pipe], case + "_container.rlxg", container(graph))
        both([d_onnx, d_pipe], case + ".onnx", onnx_model(graph, 17))
        for f in sorted(os.listdir(os.path.join(e2e, case))):
            if f.endswith(".npy"):
                write(d_npy, case + "_" + f, open(os.path.join(e2e, case, f), "rb").read())
    for name, data in hand_made_onnx():
        both([d_onnx, d_pipe], name, data)
    samples = os.path.join(ROOT, "examples/samples")
    for f in sorted(os.listdir(samples)):
        write(d_npy, "sample_" + f, open(os.path.join(samples, f), "rb").read())
    for name, data in hand_made_npy():
        write(d_npy, name, data)
    if weights:
        w = open(weights, "rb").read()
        d_w = os.path.join(out, "weights")
        write(d_w, "model.weights", w)
        for cut in (0, 8, 40, 63, 64, len(w) - 1):
            write(d_w, "cut_%d.weights" % cut, w[:cut])
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
