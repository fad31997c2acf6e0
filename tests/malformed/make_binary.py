#!/usr/bin/python3
"""make_binary.py OUTDIR - writes the binary malformed .rlxg cases.

The container layout (docs/rlxg.md): b"RLXG", u32 version, u64 header
length, the JSON header, zero padding to a 64-byte boundary, data section.
Each case breaks exactly one rule; tests/malformed/expect.txt holds the
error substring expected for each file name.
"""
import json
import os
import struct
import sys


def container(header, data=b"", version=1, hlen=None, pad=None, magic=b"RLXG"):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    fixed = magic + struct.pack("<IQ", version, len(text) if hlen is None else hlen)
    body = fixed + text
    if pad is None:
        pad = b"\0" * (-len(body) % 64)
    return body + pad + data


def graph(weights, outputs):
    return {"rlxg": 1, "name": "m", "outputs": [{"name": o} for o in outputs], "weights": weights}


def f32w(name, n, off, length=None):
    return {"name": name, "dtype": "f32", "shape": [n], "offset": off,
            "length": 4 * n if length is None else length}


def cases():
    ok = container(graph([f32w("a", 2, 0)], ["a"]), struct.pack("<2f", 1, 2))
    yield "empty.rlxg", b""
    yield "truncated_header.rlxg", b"RLXG\x01\x00\x00\x00\x20"
    yield "bad_magic.rlxg", b"RLXQ" + ok[4:]
    yield "bad_version.rlxg", container(graph([f32w("a", 2, 0)], ["a"]), b"\0" * 8, version=2)
    yield "header_past_eof.rlxg", container(b'{"outputs": []}', hlen=1000, pad=b"")
    yield "header_len_huge.rlxg", container(b'{"outputs": []}', hlen=2**64 - 1, pad=b"")
    yield "padding_truncated.rlxg", container(graph([], ["x"]), pad=b"\0\0")
    text = json.dumps(graph([f32w("a", 2, 0)], ["a"])).encode()
    if (16 + len(text)) % 64 == 0:
        text += b" "   # so that there is padding to spoil
    yield "padding_nonzero.rlxg", container(text, b"\0" * 8, pad=b"\0" * (-(16 + len(text)) % 64 - 1) + b"\x01")
    yield "weight_past_end.rlxg", container(graph([f32w("a", 4, 8)], ["a"]), b"\0" * 16)
    yield "weight_offset_huge.rlxg", container(graph([f32w("a", 1, 2**62)], ["a"]), b"\0" * 16)
    yield "overlapping_weights.rlxg", container(graph([f32w("a", 4, 0), f32w("b", 4, 8)], ["a", "b"]), b"\0" * 32)
    yield "length_mismatch.rlxg", container(graph([f32w("a", 4, 0, length=12)], ["a"]), b"\0" * 16)
    yield "header_nul.rlxg", container(b'{"outputs": [{"name"\0: "a"}]}')
    yield "container_bad_json.rlxg", container(b'{"outputs": [}', b"")
    yield "negative_length.rlxg", container(graph([f32w("a", 1, 0, length=-4)], ["a"]), b"\0" * 16)


def big_cases():
    """Resource limits (docs/robustness.md): tiny or simple files that would
    make rlxc use too much memory or time; each must fail fast."""
    n = 70000
    nodes = [{"name": "r%d" % i, "op": "Relu", "inputs": ["v%d" % i], "outputs": ["v%d" % (i + 1)]} for i in range(n)]
    yield "too_many_nodes.rlxg", json.dumps({"rlxg": 1, "inputs": [{"name": "v0", "dtype": "f32", "shape": [4]}],
                                            "outputs": [{"name": "v%d" % n}], "nodes": nodes}).encode()
    # 40 folded 16 MB constants (a ConstantOfShape, then Adds of it): more than the 512 MiB memory limit
    big = 4 * 1024 * 1024
    nodes = [{"name": "c", "op": "ConstantOfShape", "inputs": ["shape"], "outputs": ["a0"]}]
    nodes += [{"name": "add%d" % i, "op": "Add", "inputs": ["a%d" % i, "a0"], "outputs": ["a%d" % (i + 1)]}
              for i in range(40)]
    yield "fold_memory.rlxg", json.dumps({"rlxg": 1, "outputs": [{"name": "a40"}], "nodes": nodes,
                                          "weights": [{"name": "shape", "dtype": "i64", "shape": [1],
                                                       "data": [big]}]}).encode()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, data in list(cases()) + list(big_cases()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
