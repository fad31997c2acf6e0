#!/usr/bin/python3
"""isa.py - a default rlxc build against a -march=native one, side by side.

    /usr/bin/python3 bench/isa.py [--models resnet18,mobilenetv2] [--threads 1,2]
                                  [--rounds K] [--budget S] [--zoo DIR]

A program that prints figures, not a test. For each zoo model
(build/zoo/NAME/model.onnx + in_0.npy, written by `bash tests/zoo/run.sh`, or
--zoo build/wzoo for bench/zoo.py's wider zoo) it
builds

    default:  build/rlxc model.onnx --build -o ...           (CFLAGS unset: -O2)
    native:   CFLAGS="-O2 -march=native" build/rlxc ... --build -o ...

checks that both give the same output bytes on in_0.npy (the default build
picks its kernels' instruction set from CPUID at start; the native one has
the instruction set compiled in), then times them in alternating rounds
(`model --bench R --threads N`, a fresh process each round, R chosen so a
batch lasts about --budget seconds), and also the default build forced onto
each narrower instruction set (RLX_ISA=avx2, portable) for reference. Each
figure is the median over rounds of the per-round median; the ratio is
default / native (1.0 = as fast as the native build).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ZOO = os.path.join(ROOT, "build", "zoo")
OUT = os.path.join(ROOT, "build", "bench", "isa")
RLXC = os.path.join(ROOT, "build", "rlxc")
BENCH = re.compile(r"^bench: runs=(\d+) median_ms=([0-9.]+) min_ms=([0-9.]+) isa=(\w+)", re.M)


def env_with(**kv):
    env = dict(os.environ)
    for k in ("RLX_THREADS", "RLX_ISA", "CFLAGS", "CC"):
        env.pop(k, None)
    env.update({k: v for k, v in kv.items() if v is not None})
    return env


def build(name, variant):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, variant)
    cflags = {"default": None, "native": "-O2 -march=native"}[variant]
    t0 = time.perf_counter()
    p = subprocess.run([RLXC, os.path.join(ZOO, name, "model.onnx"), "--build", "-o", exe],
                       capture_output=True, text=True, env=env_with(CFLAGS=cflags), timeout=900)
    if p.returncode:
        sys.exit("isa.py: %s %s: %s" % (name, variant, (p.stderr or p.stdout).strip()))
    return exe, time.perf_counter() - t0


def run_bench(exe, name, runs, threads, isa=None):
    p = subprocess.run([exe, "-i", os.path.join(ZOO, name, "in_0.npy"), "--bench", str(runs), "--threads", str(threads)],
                       capture_output=True, text=True, env=env_with(RLX_ISA=isa), timeout=600)
    m = BENCH.search(p.stdout)
    if p.returncode or not m:
        sys.exit("isa.py: %s: %s" % (exe, (p.stderr or p.stdout).strip()))
    return float(m.group(2)), m.group(4)


def main():
    global ZOO
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet18,mobilenetv2")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--zoo", default=ZOO,
                    help="directory of NAME/model.onnx + in_0.npy (build/wzoo: bench/zoo.py's wider zoo)")
    a = ap.parse_args()
    ZOO = os.path.abspath(a.zoo)
    names = a.models.split(",")
    threads = [int(t) for t in a.threads.split(",")]
    print("| model | threads | default build (isa) ms | -march=native ms | default / native | "
          "RLX_ISA=avx2 ms | RLX_ISA=portable ms | outputs |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        exes = {v: build(name, v)[0] for v in ("default", "native")}
        outs = {}
        for v, exe in exes.items():
            o = os.path.join(OUT, name, v + ".npy")
            subprocess.run([exe, "-i", os.path.join(ZOO, name, "in_0.npy"), "-o", o], check=True,
                           env=env_with(), capture_output=True)
            with open(o, "rb") as f:
                outs[v] = f.read()
        same = "identical bytes" if outs["default"] == outs["native"] else "DIFFER"
        for nt in threads:
            cases = [("default", None), ("native", None), ("default", "avx2"), ("default", "portable")]
            runs = {}
            for c in cases:
                t, _ = run_bench(exes[c[0]], name, 3, nt, c[1])
                runs[c] = max(3, int(a.budget * 1000 / max(t, 1e-3)))
            times = {c: [] for c in cases}
            isa = "?"
            for _ in range(a.rounds):
                for c in cases:
                    t, got = run_bench(exes[c[0]], name, runs[c], nt, c[1])
                    times[c].append(t)
                    if c == ("default", None):
                        isa = got
            med = {c: statistics.median(v) for c, v in times.items()}
            print("| %s | %d | %.2f (%s) | %.2f | **%.3f** | %.2f | %.2f | %s |" % (
                name, nt, med[cases[0]], isa, med[cases[1]], med[cases[0]] / med[cases[1]], med[cases[2]],
                med[cases[3]], same), flush=True)


if __name__ == "__main__":
    main()
