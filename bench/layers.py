#!/usr/bin/python3
"""layers.py - where a model's time goes, layer by layer, beside ONNX Runtime's.

    /usr/bin/python3 bench/layers.py MODEL_DIR [--threads N] [--runs R] [--top K] [--group block|unit|node]

A program that prints figures, not a test. MODEL_DIR holds model.onnx and
in_0.npy (build/wzoo/NAME from bench/zoo.py, or build/zoo/NAME). It

  - builds the model with `CC=gcc CFLAGS="-O3 -march=native" build/rlxc
    model.onnx --build --threads N` (as bench/models.py does), then compiles a
    copy of the generated model.c with a clock read before each step of the
    schedule (the steps are the lowered thunks, named after the graph node
    each comes from: a fused node carries the first node's name), linked
    with a runtime library built for the same flags (`rlxc runtime`);
  - runs it R times and averages each step's time;
  - runs ONNX Runtime on the same model with its profiler on
    (`enableProfiling`: bench/ort_bench.js --profile) at the same thread
    count and sums each node's kernel time over R runs;
  - prints both by group: `block` (default) keys a node by its name up to
    the last ".../block.N" or the first two path components (torchvision's
    module paths, which both runtimes keep in their node names), `node` by
    the whole name, `unit` by the name up to "/block/" (a whole residual
    unit: the runtimes fuse a unit's layers differently); ORT's fused node
    names (".../Relu_output_0_nchwc") are matched by the same prefix.

ORT's profiler adds its own overhead (its per-node sum is above its wall
time), and ORT spends time in nodes rlxc does not have (its NCHWc layout's
Reorder nodes, printed apart), so compare groups, not totals. Needs
build/ort/node_modules (bench/README.md).
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
RLXC = os.path.join(ROOT, "build", "rlxc")
OUT = os.path.join(ROOT, "build", "bench", "layers")
CFLAGS = "-O3 -march=native"
ORT_WARMUP = 5

STEP = re.compile(r"^    /\* (\d+): (\S+) \((\w+)\)")


def instrument(src):
    """model.c with prof_mark(i) before step i and at the schedule's return."""
    out, names, in_sched = [], {}, False
    for ln in src.split("\n"):
        if ln.startswith("static int model_schedule("):
            in_sched = True
        elif in_sched:
            m = STEP.match(ln)
            if m:
                names[int(m.group(1))] = "%s %s" % (m.group(2), m.group(3))
                out.append("    prof_mark(%s);" % m.group(1))
            if ln == "}":
                in_sched = False
            elif ln.startswith("    return"):
                out.append("    prof_mark(-1);")
        out.append(ln)
    table = "".join('    [%d] = "%s",\n' % (i, n.replace('"', "")) for i, n in sorted(names.items()))
    head = r'''#include <stdio.h>
#include <stdlib.h>
#include <time.h>
enum { PROF_MAX = %d };
static double prof_ns[PROF_MAX];
static long prof_runs;
static int prof_at = -1;
static struct timespec prof_t0;
static const char *const prof_name[PROF_MAX] = {
%s};
static void prof_dump(void) {
    const char *path = getenv("PROF_OUT");
    FILE *f = fopen(path ? path : "layers.txt", "w");
    if (!f) return;
    for (int i = 0; i < PROF_MAX; i++)
        if (prof_name[i]) fprintf(f, "%%d\t%%.1f\t%%s\n", i, prof_runs ? prof_ns[i] / prof_runs : 0.0, prof_name[i]);
    fclose(f);
}
static void prof_mark(int i) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (prof_at >= 0) prof_ns[prof_at] += (t.tv_sec - prof_t0.tv_sec) * 1e9 + (t.tv_nsec - prof_t0.tv_nsec);
    if (prof_at < 0 && !prof_runs && i >= 0) atexit(prof_dump);
    if (i < 0) prof_runs++;
    prof_t0 = t;
    prof_at = i;
}
''' % ((max(names) + 1) if names else 1, table)
    return head + "\n".join(out)


def group_key(name, how):
    name = name.lstrip("/")
    if how == "node":
        return re.sub(r"(_output_0)?(_nchwc)?$", "", name)
    if how == "unit":   # a whole residual unit: its fused layers land in one group on both sides
        m = re.match(r"(.*?)/block/", name) or re.match(r"([^/]+/[^/]+)", name)
        return m.group(1) if m else name
    m = re.match(r"(.*?/block/block\.\d+)", name) or re.match(r"([^/]+/[^/]+)", name)
    return m.group(1) if m else name


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        sys.exit("layers.py: %s: %s" % (" ".join(cmd), (p.stderr or p.stdout).strip()[-2000:]))
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--group", choices=("block", "unit", "node"), default="block")
    a = ap.parse_args()
    name = os.path.basename(os.path.normpath(a.model_dir))
    onnx, inp = os.path.join(a.model_dir, "model.onnx"), os.path.join(a.model_dir, "in_0.npy")
    d = os.path.join(OUT, name, "t%d" % a.threads)
    os.makedirs(d, exist_ok=True)
    env = dict(os.environ, CC="gcc", CFLAGS=CFLAGS)
    env.pop("RLX_ISA", None)
    run([RLXC, onnx, "--build", "-o", os.path.join(d, "model"), "--threads", str(a.threads)], env=env)
    run([RLXC, "runtime", "-o", os.path.join(d, "lib")], env=env)
    with open(os.path.join(d, "model.c")) as f:
        src = instrument(f.read())
    with open(os.path.join(d, "model_prof.c"), "w") as f:
        f.write(src)
    exe = os.path.join(d, "model_prof")
    run(["gcc"] + CFLAGS.split() + ["-ffp-contract=off", "-fno-trapping-math", "-I" + os.path.join(ROOT, "runtime_min"),
         "-I" + d, os.path.join(d, "model_prof.c"), os.path.join(d, "lib", "librlxrt.a"), "-Wl,--gc-sections", "-lm",
         "-lpthread", "-o", exe])
    layers = os.path.join(d, "layers.txt")
    run([exe, "--weights", os.path.join(d, "model.weights"), "-i", inp, "--bench", str(a.runs), "--threads",
         str(a.threads)], env=dict(os.environ, PROF_OUT=layers))
    mine = collections.OrderedDict()
    with open(layers) as f:
        for ln in f:
            _, ns, label = ln.rstrip("\n").split("\t")
            node = label.rsplit(" ", 1)[0]
            k = group_key(node, a.group)
            mine[k] = mine.get(k, 0.0) + float(ns) / 1000.0

    prefix = os.path.join(d, "ort")
    for old in glob.glob(prefix + "*.json"):
        os.remove(old)
    run(["node", os.path.join(ROOT, "bench", "ort_bench.js"), onnx, inp, "--threads", str(a.threads), "--warmup",
         str(ORT_WARMUP), "--runs", str(a.runs), "--profile", prefix],
        env=dict(os.environ, NODE_PATH=os.path.join(ROOT, "build", "ort", "node_modules")))
    files = glob.glob(prefix + "*.json")
    if not files:
        sys.exit("layers.py: ONNX Runtime wrote no profile")
    with open(files[0]) as f:
        events = json.load(f)
    ort, ort_runs = collections.defaultdict(float), a.runs + ORT_WARMUP   # the profile holds the warm-ups too
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            ort[group_key(e["name"][: -len("_kernel_time")], a.group)] += e["dur"] / ort_runs

    print("%s, %d thread(s), %d runs: microseconds per run by %s" % (name, a.threads, a.runs, a.group))
    print("%-56s %10s %10s %8s" % ("group", "rlxc us", "ORT us", "ratio"))
    rows = sorted(mine.items(), key=lambda kv: -(kv[1] - ort.get(kv[0], 0.0)))
    for k, v in rows[: a.top]:
        o = ort.get(k, 0.0)
        print("%-56s %10.1f %10.1f %8s" % (k[-56:], v, o, "%.2f" % (v / o) if o else "-"))
    other = {k: v for k, v in ort.items() if k not in mine}
    print("rlxc total %.1f us; ORT's matched groups %.1f us, its other nodes %.1f us (%s)" % (
        sum(mine.values()), sum(ort.get(k, 0.0) for k in mine), sum(other.values()),
        ", ".join("%s %.0f" % kv for kv in sorted(other.items(), key=lambda kv: -kv[1])[:4])))


if __name__ == "__main__":
    main()
