#!/usr/bin/python3
"""make_dicts.py - writes the libFuzzer dictionaries tests/fuzz/TARGET.dict.

The words a mutator cannot guess byte by byte: op and attribute names (from
lib/ops.def), dtype names and npy descrs (runtime_min/rlx_dtypes.def), the
.rlxg JSON keys and magic, the ONNX protobuf field keys (tag bytes of the
onnx.proto fields rlxc reads, with their wire types), the .npy header words
and the weights magic. Run it again when ops.def or the formats change; the
output is deterministic.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def ops_and_attrs():
    text = open(os.path.join(ROOT, "lib/ops.def")).read()
    ops, attrs = [], set()
    for m in re.finditer(r'^X\(\s*\w+,\s*"([^"]+)",[^"]*"([^"]*)"', text, re.M):
        ops.append(m.group(1))
        for spec in m.group(2).split():
            attrs.add(spec.lstrip("!").split(":")[0])
    return ops, sorted(attrs)


def dtypes():
    text = open(os.path.join(ROOT, "runtime_min/rlx_dtypes.def")).read()
    return re.findall(r'^X\(\s*\w+,\s*"([^"]+)",\s*\d+,\s*\w+,\s*"([^"]*)"', text, re.M)


def key(field, wire):
    """The protobuf key of field number `field` with wire type `wire`, as a dict escape."""
    v = field << 3 | wire
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return "".join("\\x%02x" % b for b in out)


# (message, field, number, wire type) of the onnx.proto fields the reader uses
ONNX_FIELDS = [
    ("model", "ir_version", 1, 0), ("model", "opset_import", 8, 2), ("model", "graph", 7, 2),
    ("opset", "domain", 1, 2), ("opset", "version", 2, 0),
    ("graph", "node", 1, 2), ("graph", "name", 2, 2), ("graph", "initializer", 5, 2),
    ("graph", "sparse_initializer", 15, 2), ("graph", "input", 11, 2), ("graph", "output", 12, 2),
    ("graph", "value_info", 13, 2),
    ("node", "input", 1, 2), ("node", "output", 2, 2), ("node", "name", 3, 2), ("node", "op_type", 4, 2),
    ("node", "attribute", 5, 2), ("node", "domain", 7, 2),
    ("attr", "name", 1, 2), ("attr", "f", 2, 5), ("attr", "i", 3, 0), ("attr", "s", 4, 2), ("attr", "t", 5, 2),
    ("attr", "g", 6, 2), ("attr", "floats", 7, 2), ("attr", "ints", 8, 2), ("attr", "strings", 9, 2),
    ("attr", "type", 20, 0),
    ("tensor", "dims", 1, 2), ("tensor", "data_type", 2, 0), ("tensor", "segment", 3, 2),
    ("tensor", "float_data", 4, 2), ("tensor", "int32_data", 5, 2), ("tensor", "int64_data", 7, 2),
    ("tensor", "name", 8, 2), ("tensor", "raw_data", 9, 2), ("tensor", "double_data", 10, 2),
    ("tensor", "uint64_data", 11, 2), ("tensor", "external_data", 13, 2), ("tensor", "data_location", 14, 0),
    ("value_info", "name", 1, 2), ("value_info", "type", 2, 2),
    ("type", "tensor_type", 1, 2), ("type", "sequence_type", 4, 2),
    ("tensor_type", "elem_type", 1, 0), ("tensor_type", "shape", 2, 2),
    ("shape", "dim", 1, 2), ("dim", "dim_value", 1, 0), ("dim", "dim_param", 2, 2),
]

RLXG_KEYS = ["rlxg", "name", "inputs", "outputs", "weights", "nodes", "op", "attrs", "dtype", "shape", "data",
             "offset", "length"]


def esc(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def write(name, lines):
    with open(os.path.join(HERE, name), "w") as f:
        f.write("# %s - written by tests/fuzz/make_dicts.py; do not edit.\n" % name)
        for line in lines:
            f.write(line + "\n")


def main():
    ops, attrs = ops_and_attrs()
    dts = dtypes()
    words = ['op_%s="%s"' % (re.sub(r"\W", "_", o), esc(o)) for o in ops]
    words += ['attr_%s="%s"' % (a, esc(a)) for a in attrs]
    json = ['key_%s="\\"%s\\":"' % (k, k) for k in RLXG_KEYS]
    json += ['dtype_%s="\\"%s\\""' % (d, d) for d, _ in dts]
    json += ['special_%s="\\"%s\\""' % (n, v) for n, v in (("nan", "nan"), ("inf", "inf"), ("minf", "-inf"))]
    json += ['magic="RLXG"', 'big="9223372036854775807"', 'neg="-1"', 'zero_dims="[0]"', 'huge_dim="1099511627776"']
    onnx = ['pb_%s_%s="%s"' % (m, f, key(n, w)) for m, f, n, w in ONNX_FIELDS]
    onnx += ['domain_default="ai.onnx"', 'varint_max="\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\x01"']
    write("rlxg.dict", json + words)
    write("onnx.dict", onnx + words)
    write("pipeline.dict", json + onnx + words)
    npy = ['magic="\\x93NUMPY"', 'v1="\\x01\\x00"', 'v2="\\x02\\x00"', 'v3="\\x03\\x00"', 'descr="\'descr\'"',
           'order="\'fortran_order\'"', 'shape="\'shape\'"', 'false="False"', 'true="True"', 'long="L"']
    npy += ['descr_%s="\'%s\'"' % (d, esc(n)) for d, n in dts if n]
    write("npy.dict", npy)
    write("weights.dict", ['magic="RLXW"', 'version="\\x02\\x00\\x00\\x00"', 'old_version="\\x01\\x00\\x00\\x00"',
                           'offset64="\\x40\\x00\\x00\\x00\\x00\\x00\\x00\\x00"'])


if __name__ == "__main__":
    main()
