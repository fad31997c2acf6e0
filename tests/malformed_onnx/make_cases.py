#!/usr/bin/python3
"""make_cases.py OUTDIR - writes the malformed ONNX models of expect.txt.

Each model is valid ONNX except for the one defect its name says, so the
message rlxc gives must be about that defect. Most are built with
onnx.helper (python3-onnx); the ones below the protobuf layer (truncated,
bad wire types, nesting) are raw bytes. The checker is never run: several
defects are ones it would reject first.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

out = sys.argv[1] if len(sys.argv) > 1 else "build/malformed_onnx"
os.makedirs(out, exist_ok=True)


def vi(name, shape, elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def save(name, m):
    data = m if isinstance(m, bytes) else m.SerializeToString()
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


relu = model([h.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2, 3])], [vi("y", [2, 3])])
good = relu.SerializeToString()

# ---- below the protobuf layer ----
save("empty.onnx", b"")
save("truncated.onnx", good[: len(good) // 2])
# field 1 with wire type 7 (no such wire type), then junk
save("bad_wire_type.onnx", b"\x0f\xff\xfe\xfd" + b"\x00" * 8)
# field 7 (graph, a message) sent as a varint
save("graph_as_varint.onnx", b"\x08\x08\x38\x01")
# a length running past the end of the file
save("bad_length.onnx", b"\x3a\xff\xff\x03\x0a")



def varint(n):
    b = bytearray()
    while True:
        x = n & 0x7F
        n >>= 7
        b.append(x | (0x80 if n else 0))
        if not n:
            return bytes(b)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


# ModelProto.graph -> (GraphProto.node -> NodeProto.attribute -> AttributeProto.g) x 150: 451 levels
deep = b""
for _ in range(150):
    # GraphProto.node (1) { NodeProto.attribute (5) { AttributeProto.g (6) { deep } } }
    deep = field(1, field(5, field(6, deep)))
save("deep_nesting.onnx", varint(1 << 3) + varint(8) + field(7, deep))
# valid protobuf, but no graph
save("no_graph.onnx", varint(1 << 3) + varint(8))

# ---- model-level defects ----
m = model([h.make_node("Relu", ["nope"], ["y"], name="r")], [vi("x", [2, 3])], [vi("y", [2, 3])])
save("dangling_input.onnx", m)

def with_dims(t, dims):
    """onnx.helper checks the data against the dims: set the bad dims after."""
    del t.dims[:]
    t.dims.extend(dims)
    return t


w = with_dims(h.make_tensor("w", T.FLOAT, [5], [1, 2, 3, 4, 5]), [2, 3])
save("init_count.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], [w]))

w = with_dims(h.make_tensor("w", T.FLOAT, [5], np.zeros(5, np.float32).tobytes(), raw=True), [2, 3])
save("init_raw_size.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], [w]))

w = with_dims(h.make_tensor("w", T.FLOAT, [0], []), [-2, 3])
save("negative_dim_init.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], [w]))

save("negative_dim_input.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2, -3])], [vi("y", None)]))

s = h.make_tensor("s", T.STRING, [2], [b"a", b"b"])
save("string_tensor.onnx", model([h.make_node("Identity", ["s"], ["y"])], [], [vi("y", None)], [s]))

# opsets start at 1; a model with no default-domain opset is an error from IR version 3 on (IR 1 and 2
# predate opset_import and mean opset 1)
save("opset0.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], opset=0))
m = model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])])
del m.opset_import[:]
m.opset_import.extend([h.make_opsetid("com.example", 1)])
save("no_default_opset.onnx", m)
save("opset18.onnx", model([h.make_node("Relu", ["x"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], opset=18))

w = with_dims(h.make_tensor("w", T.FLOAT, [0], []), [2, 3])
w.data_location = T.EXTERNAL
e = w.external_data.add()
e.key, e.value = "location", "weights.bin"
save("external_data.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2, 3])], [vi("y", [2, 3])], [w]))

save("unbound_dims.onnx", model([h.make_node("Add", ["x", "z"], ["y"])],
                                [vi("x", ["N", "seq"]), vi("z", ["N", 3, "batch"])], [vi("y", None)]))

save("unsupported_ops.onnx", model([h.make_node("Foo", ["x"], ["a"], name="a"),
                                    h.make_node("Relu", ["a"], ["r"], name="ok"),
                                    h.make_node("Bar", ["r"], ["c"], name="c"),
                                    h.make_node("Foo", ["c"], ["y"], name="b")],
                                   [vi("x", [2, 3])], [vi("y", None)]))

seq = h.make_tensor_sequence_value_info("x", T.FLOAT, [2, 3])
save("sequence_input.onnx", model([h.make_node("Identity", ["x"], ["y"])], [seq], [vi("y", None)]))

body = h.make_graph([h.make_node("Relu", ["t"], ["u"])], "body", [vi("t", [1])], [vi("u", [1])])
save("graph_attr.onnx", model([h.make_node("Relu", ["x"], ["y"], name="r", body=body)], [vi("x", [2, 3])],
                              [vi("y", None)]))

# a subgraph is only read for If, Loop and Scan; a Loop must be static
loop_body = h.make_graph([h.make_node("Identity", ["c_in"], ["c_out"]), h.make_node("Neg", ["y_in"], ["y_out"])],
                         "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("y_in", [2])],
                         [vi("c_out", [], T.BOOL), vi("y_out", [2])])
save("loop_runtime_trip.onnx", model([h.make_node("Loop", ["n", "", "x"], ["y"], name="L", body=loop_body)],
                                     [vi("n", [], T.INT64), vi("x", [2])], [vi("y", None)]))

save("produced_twice.onnx", model([h.make_node("Relu", ["x"], ["y"], name="r1"),
                                   h.make_node("Neg", ["x"], ["y"], name="r2")], [vi("x", [2, 3])], [vi("y", None)]))

save("cast_to_string.onnx", model([h.make_node("Cast", ["x"], ["y"], name="c", to=T.STRING)], [vi("x", [2, 3])],
                                  [vi("y", None, T.STRING)]))

save("dropout_mask.onnx", model([h.make_node("Dropout", ["x"], ["y", "mask"], name="d")], [vi("x", [2, 3])],
                                [vi("y", None), vi("mask", None, T.BOOL)]))

w = h.make_tensor("w", T.INT8, [2], [1, 300])
save("int8_range.onnx", model([h.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2], T.INT8)], [vi("y", None, T.INT8)], [w]))

save("unknown_attr.onnx", model([h.make_node("Relu", ["x"], ["y"], name="r", alpha=0.5)], [vi("x", [2, 3])],
                                [vi("y", None)]))

# ---- operator versions before opset 7 ----
# Where came in opset 9
save("op_too_new.onnx", model([h.make_node("Where", ["c", "x", "x"], ["y"], name="w")],
                              [vi("c", [2], T.BOOL), vi("x", [2])], [vi("y", None)], opset=8))
# Add-6 broadcast along axis 0 needs A's rank, which only inference knows (A is a MatMul output)
save("legacy_broadcast_rank.onnx", model([h.make_node("MatMul", ["x", "x"], ["a"], name="mm"),
                                          h.make_node("Add", ["a", "b"], ["y"], name="add", broadcast=1, axis=0)],
                                         [vi("x", [2, 2]), vi("b", [2])], [vi("y", None)], opset=6))
# BatchNormalization-6 in training mode
bn = [nh.from_array(np.ones(3, np.float32), n) for n in ["s", "b", "m", "v"]]
save("is_test_zero.onnx", model([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn", is_test=0)],
                                [vi("x", [1, 3, 2])], [vi("y", None)], bn, opset=6))

# ---- resource limits (docs/robustness.md): each fails fast, within the runner's 10 s and 1 GB ----
# a Loop of 10^9 iterations: unrolling stops at --max-nodes (65536)
body = h.make_graph([h.make_node("Add", ["y_in", "one"], ["y_out"]), h.make_node("Identity", ["c_in"], ["c_out"])],
                    "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("y_in", [])],
                    [vi("c_out", [], T.BOOL), vi("y_out", [])], [nh.from_array(np.float32(1), "one")])
save("loop_unroll_limit.onnx", model([h.make_node("Loop", ["M", "", "y0"], ["y"], name="L", body=body)], [],
                                     [vi("y", None)], [nh.from_array(np.int64(10 ** 9), "M"),
                                                       nh.from_array(np.float32(0), "y0")]))
# every iteration folds a 16 MB ConstantOfShape and a 16 MB Add: the memory limit (512 MiB here) stops it
big = 4 * 1024 * 1024
body = h.make_graph([h.make_node("ConstantOfShape", ["shp"], ["big"], value=nh.from_array(np.array([1], np.float32))),
                     h.make_node("Add", ["big", "y_in"], ["y_out"]), h.make_node("Identity", ["c_in"], ["c_out"])],
                    "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("y_in", [])],
                    [vi("c_out", [], T.BOOL), vi("y_out", [big])], [nh.from_array(np.array([big], np.int64), "shp")])
save("loop_fold_memory.onnx", model([h.make_node("Loop", ["M", "", "y0"], ["y"], name="L", body=body)], [],
                                    [vi("y", None)], [nh.from_array(np.int64(1000), "M"),
                                                      nh.from_array(np.float32(0), "y0")]))
# 70000 nodes in a 2 MB file: more than --max-nodes
n = 70000
save("too_many_nodes.onnx", model([h.make_node("Relu", ["v%d" % i], ["v%d" % (i + 1)], name="r%d" % i) for i in range(n)],
                                  [vi("v0", [4])], [vi("v%d" % n, [4])]))


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


# 8M empty NodeProtos, 2 bytes each on the wire and over 100 unpacked: refused before protobuf-c mallocs
graph = b"\x0a\x00" * (8 * 1024 * 1024)
save("empty_nodes_unpack.onnx", b"\x08\x08" + field(8, b"\x10\x0d") + field(7, graph))
# a Transpose with a perm of 10^7 zeros (10 MB of packed varints, 80 MB unpacked): read, and refused by
# inference in one line
node = field(1, b"x") + field(2, b"y") + field(3, b"t") + field(4, b"Transpose") + \
    field(5, field(1, b"perm") + field(8, b"\x00" * 10 ** 7) + b"\xa0\x01\x07")
tensor_type = field(1, b"\x08\x01" + field(2, field(1, b"\x08\x02") + field(1, b"\x08\x03")))
graph = field(1, node) + field(11, field(1, b"x") + field(2, tensor_type)) + field(12, field(1, b"y"))
save("huge_ints_attr.onnx", b"\x08\x08" + field(8, b"\x10\x0d") + field(7, graph))
