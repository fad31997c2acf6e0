#!/usr/bin/python3
"""precision.py - what --precision and --weights cost in accuracy, and save.

    /usr/bin/python3 bench/precision.py [--models a,b] [--out PATH] [--runs N]

A program that prints figures, not a test. For each zoo model
(build/zoo/NAME: model.onnx, in_0.npy, written by `bash tests/zoo/run.sh`)
it builds the model at every storage setting (`rlxc --build` with the
default flags, one thread) and runs it on the zoo's input:

    --precision f32 (the reference), f16, bf16, auto;  --weights f16, bf16, int8;
    --precision auto --weights int8

and prints, against the f32 build's output: the largest absolute error over
the largest |output| ("max rel"), the cosine similarity, and whether the
arg-max (top-1) agrees, row by row for a batch; the arena and weights bytes
(from --report) against f32's; and the median milliseconds of a run
(`--bench N`) against f32's on this CPU. Then the digits classifier
(examples/digits, a CNN trained on python3-sklearn's 8x8 handwritten digits)
on its 450 held-out labelled images: top-1 accuracy at f32, f16, bf16, auto
and with int8 weights. Writes the tables, with the command, to --out
(default docs/precision.md; `-` for none).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ZOO = os.path.join(ROOT, "build", "zoo")
OUT = os.path.join(ROOT, "build", "bench", "precision")
RLXC = os.path.join(ROOT, "build", "rlxc")
DIGITS = os.path.join(ROOT, "examples", "digits")
SETTINGS = [("f32", "f32"), ("f16", "f32"), ("bf16", "f32"), ("auto", "f32"), ("f32", "f16"), ("f32", "bf16"),
            ("f32", "int8"), ("auto", "int8")]


def label(p, w):
    parts = []
    if p != "f32" or w == "f32":
        parts.append("--precision " + p)
    if w != "f32":
        parts.append("--weights " + w)
    return " ".join(parts)


def build(model, tag, p, w, extra=()):
    d = os.path.join(OUT, tag)
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "%s_%s" % (p, w))
    env = {k: v for k, v in os.environ.items() if k not in ("CC", "CFLAGS")}
    r = subprocess.run([RLXC, model, "--precision", p, "--weights", w, "--build", "-o", exe, "--report", exe] +
                       list(extra), capture_output=True, text=True, env=env, timeout=900)
    if r.returncode:
        sys.exit("precision.py: %s %s: %s" % (tag, label(p, w), r.stderr.strip()))
    rep = open(exe + ".txt").read()
    arena = int(re.search(r"^arena bytes: *(\d+)", rep, re.M).group(1))
    return exe, arena, os.path.getsize(exe + ".weights")


def run(exe, inputs, nout):
    outs = [exe + ".out%d.npy" % i for i in range(nout)]
    cmd = [exe, "--threads", "1"]
    for x in inputs:
        cmd += ["-i", x]
    for o in outs:
        cmd += ["-o", o]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    return [np.load(o) for o in outs]


def bench_ms(exe, inputs, runs):
    cmd = [exe, "--threads", "1", "--bench", str(runs)]
    for x in inputs:
        cmd += ["-i", x]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=900)
    return float(re.search(r"median_ms=([0-9.]+)", r.stdout + r.stderr).group(1))


def compare(y, ref):
    y, ref = y.astype(np.float64), ref.astype(np.float64)
    err = float(np.max(np.abs(y - ref)) / max(np.max(np.abs(ref)), 1e-30))
    a, b = y.ravel(), ref.ravel()
    cos = float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-300))
    rows = ref.reshape(ref.shape[0], -1) if ref.ndim > 1 else ref.reshape(1, -1)
    top1 = float(np.mean(np.argmax(y.reshape(rows.shape), 1) == np.argmax(rows, 1)))
    return err, cos, top1


def zoo_tables(models, runs):
    lines = ["| model | setting | max rel | cosine | top-1 agrees | arena bytes (x f32) | weights bytes (x f32) "
             "| ms per run (x f32) |", "|---|---|---|---|---|---|---|---|"]
    for name in models:
        model = os.path.join(ZOO, name, "model.onnx")
        x = os.path.join(ZOO, name, "in_0.npy")
        base = None
        for p, w in SETTINGS:
            exe, arena, wbytes = build(model, name, p, w)
            y = run(exe, [x], 1)[0]
            ms = bench_ms(exe, [x], runs)
            if base is None:
                base = (y, arena, wbytes, ms)
                lines.append("| %s | `--precision f32` | - | - | - | %d | %d | %.3f |" % (name, arena, wbytes, ms))
                continue
            err, cos, top1 = compare(y, base[0])
            lines.append("| %s | `%s` | %.2e | %.6f | %.0f%% | %d (%.2f) | %d (%.2f) | %.3f (%.2f) |" % (
                name, label(p, w), err, cos, 100 * top1, arena, arena / base[1], wbytes, wbytes / base[2], ms,
                ms / base[3]))
            print(lines[-1], file=sys.stderr)
    return lines


def digits_table():
    pixels = os.path.join(DIGITS, "heldout_pixels.npy")
    labels = np.load(os.path.join(DIGITS, "heldout_labels.npy")).ravel()
    torch_ok, total = map(int, open(os.path.join(DIGITS, "torch_accuracy.txt")).read().split())
    lines = ["| setting | top-1 correct of %d | accuracy | weights bytes (x f32) |" % total, "|---|---|---|---|",
             "| PyTorch (f32) | %d | %.2f%% | - |" % (torch_ok, 100 * torch_ok / total)]
    base = None
    for p, w in [("f32", "f32"), ("f16", "f32"), ("bf16", "f32"), ("auto", "f32"), ("f32", "int8"),
                 ("auto", "int8")]:
        exe, arena, wbytes = build(os.path.join(DIGITS, "model.onnx"), "digits", p, w, ["--dim", "batch=%d" % total])
        outs = run(exe, [pixels], 2)
        digit = [o for o in outs if o.ndim == 1][0].ravel()
        ok = int((digit == labels).sum())
        base = base or wbytes
        lines.append("| `%s` | %d | %.2f%% | %d (%.2f) |" % (label(p, w), ok, 100 * ok / total, wbytes, wbytes / base))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,cnn,resnet18,mobilenetv2,transformer,lstm")
    ap.add_argument("--runs", type=int, default=20, help="runs per --bench median")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "precision.md"))
    a = ap.parse_args()
    zoo = zoo_tables(a.models.split(","), a.runs)
    digits = digits_table()
    text = "\n".join(["## The zoo, against the f32 build", ""] + zoo + ["", "## The digits classifier, on labelled data", ""] +
                     digits) + "\n"
    print(text)
    if a.out != "-":
        doc = open(a.out).read() if os.path.exists(a.out) else ""
        marker = "<!-- bench/precision.py writes below this line -->"
        head = doc.split(marker)[0] if marker in doc else "# Precision\n\n"
        with open(a.out, "w") as f:
            f.write(head + marker + "\n\nWritten by `/usr/bin/python3 bench/precision.py` (%s).\n\n" % (
                "models: " + a.models) + text)


if __name__ == "__main__":
    main()
