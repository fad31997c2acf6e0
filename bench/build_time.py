#!/usr/bin/python3
"""build_time.py - wall time of `rlxc MODEL --build`, the everyday path.

    /usr/bin/python3 bench/build_time.py [--models a,b] [--repeat N]

A program that prints figures, not a test. For each zoo model
(build/zoo/NAME/model.onnx, written by `bash tests/zoo/run.sh`) it runs
`build/rlxc model.onnx --build -o build/bench/build/NAME/model` N times with
the runtime library built (`make` built build/librlxrt.a, which matches the
default CC and CFLAGS) and prints the median and the fastest wall time, and
rlxc's own share of it (-v's pass times: reading, passes, codegen; the rest
is the C compiler on the model's file and the link). Then once more with an
empty cache and CFLAGS that need a library of their own (-march=native), to
show the one-time cost of building a matching library.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ZOO = os.path.join(ROOT, "build", "zoo")
OUT = os.path.join(ROOT, "build", "bench", "build")
RLXC = os.path.join(ROOT, "build", "rlxc")
PASS = re.compile(r"^pass (\S+)\s+([0-9.]+) ms$", re.M)


def build(name, env):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    t0 = time.perf_counter()
    p = subprocess.run([RLXC, os.path.join(ZOO, name, "model.onnx"), "--build", "-v", "-o", os.path.join(d, "model")],
                       capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - t0
    if p.returncode:
        sys.exit("build_time.py: %s: %s" % (name, p.stderr.strip().splitlines()[-1]))
    passes = {k: float(v) / 1e3 for k, v in PASS.findall(p.stderr)}
    return wall, sum(v for k, v in passes.items() if k != "build"), passes.get("build", 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,cnn,resnet18,mobilenetv2,transformer,lstm")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    env = dict(os.environ)
    for k in ("CC", "CFLAGS", "RLXC_RUNTIME_DIR"):
        env.pop(k, None)
    print("| model | wall s, median | fastest | rlxc passes s | C compiler + link s |")
    print("|---|---|---|---|---|")
    for name in a.models.split(","):
        runs = [build(name, env) for _ in range(a.repeat)]
        walls = [r[0] for r in runs]
        print("| %s | **%.2f** | %.2f | %.2f | %.2f |" % (name, statistics.median(walls), min(walls),
                                                         statistics.median(r[1] for r in runs),
                                                         statistics.median(r[2] for r in runs)), flush=True)
    cache = tempfile.mkdtemp(prefix="rlxc-cache-")
    try:
        env2 = dict(env, RLXC_CACHE_DIR=cache, CFLAGS="-O2 -march=native")
        name = a.models.split(",")[0]
        first = build(name, env2)[0]
        again = build(name, env2)[0]
        print("\nA library of its own (CFLAGS=\"-O2 -march=native\", empty cache), %s: first build %.1f s "
              "(the library, once), then %.2f s" % (name, first, again))
    finally:
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
