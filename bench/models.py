#!/usr/bin/python3
"""models.py - rlxc-built zoo models against ONNX Runtime and PyTorch, side by side.

    /usr/bin/python3 bench/models.py [--quick] [--models a,b] [--threads 1,2]
                                     [--rounds K] [--budget S] [--out PATH]

A program that prints figures, not a test. For each zoo model
(build/zoo/NAME/model.onnx + in_0.npy, written by `bash tests/zoo/run.sh`):

1. builds it with `CC=gcc CFLAGS="-O3 -march=native" build/rlxc model.onnx
   --build -o build/bench/NAME/tN/model --threads N` for each thread count N
   (the build time is reported as a one-time cost), runs it once on in_0.npy and
   checks the output against expected_0.npy (a wrong model isn't worth timing;
   it is flagged, not hidden);
2. for each N starts two long-lived workers that keep a warm session:
   bench/ort_bench.js (onnxruntime-node from build/ort; intraOpNumThreads N,
   interOpNumThreads 1, optimisation 'all', sequential; session creation is
   the other one-time cost) and bench/torch_bench.py (eval, inference_mode,
   torch.set_num_threads(N));
3. times them in alternating rounds - rlxc (`model --bench R --threads N`, a
   fresh process each round), then ORT, then PyTorch - so that the load of a
   shared machine and frequency drift hit all three alike. R is chosen per
   runtime from a warm-up time so that each batch lasts about --budget
   seconds (at least 3 runs). After a warm worker's batch the harness waits
   (at most 1 s) until its threads stop using CPU: PyTorch's BLAS threads
   spin ~100 ms after each run, and the runtime timed next lost a core to
   them.

Each runtime's figure is the median over rounds of its per-round median
(rlxc's binary only reports the median and the best of a batch, so the same
statistic is used for all three), and "best" is the fastest single run. The
noise column is the spread of the per-round medians, (max - min) / median,
worst of the three runtimes: a large one says the machine was busy.

FLOPs come from the ONNX graph after onnx.shape_inference: 2*M*N*K for
MatMul/Gemm, 2*Cout*Hout*Wout*(Cin/group)*kh*kw*N for Conv, elementwise ops
ignored. The peak is OpenBLAS's single-threaded sgemm on 1024^3, measured in
the same invocation with bench/gemm_bench.sh (its cpu-time median, which
leaves out time spent preempted), times N for N threads.

The table goes to stdout and, with the command line, the machine and the GEMM
line, to docs/performance.md (--out). Needs /usr/bin/python3 with numpy, onnx
and torch/torchvision, node, `ONNXRUNTIME_NODE_INSTALL=skip npm install
onnxruntime-node` in build/ort, gcc and libopenblas-dev.
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ZOO = os.path.join(ROOT, "build", "zoo")     # tests/zoo/export.py's models (bash tests/zoo/run.sh)
WZOO = os.path.join(ROOT, "build", "wzoo")   # bench/zoo.py's wider zoo
OUT_DIR = os.path.join(ROOT, "build", "bench")
ORT_MODULES = os.path.join(ROOT, "build", "ort", "node_modules")
RLXC = os.path.join(ROOT, "build", "rlxc")
PY = "/usr/bin/python3"
ALL_MODELS = ["mlp", "cnn", "resnet18", "mobilenetv2", "transformer"]
WIDE_MODELS = ["efficientnet_b0", "efficientnet_v2_s", "mobilenetv3_large", "mobilenetv3_small", "shufflenet_v2",
               "squeezenet", "densenet121", "resnext50", "regnet_y_400mf", "lstm_small", "lstm_medium", "gru_small",
               "gru_medium", "transformer_small", "transformer_medium", "audio1d", "unet_small"]


def model_file(name, f):
    """build/zoo/NAME/f for the test zoo's models, build/wzoo/NAME/f for the wider zoo's."""
    return os.path.join(WZOO if name in WIDE_MODELS else ZOO, name, f)


RUNTIMES = ["rlxc", "ORT", "PyTorch"]
PAUSE_S = 0.05  # between batches, so one runtime's spinning threads settle before the next
SETTLE_MAX_S = 1.0  # at most this long waiting for a warm worker to go idle after its batch (Worker.settle)


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def child_env(**extra):
    env = dict(os.environ)
    # Thread counts are set explicitly per runtime; stray settings would skew one of them.
    for k in ("RLX_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env.pop(k, None)
    env.update(extra)
    return env


# ---------------------------------------------------------------- FLOPs

def count_flops(path):
    """GFLOP of one inference from MatMul/Gemm/Conv; None if a shape is unknown."""
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    g = model.graph
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[vi.name] = [d.dim_value for d in dims]
    for t in g.initializer:
        shapes[t.name] = list(t.dims)
    for n in g.node:  # Constant nodes feeding MatMul carry weights too
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    shapes[n.output[0]] = list(a.t.dims)
    total = 0
    for n in g.node:
        if n.op_type not in ("MatMul", "Gemm", "Conv"):
            continue
        ins = [shapes.get(x) for x in n.input[:2]]
        out = shapes.get(n.output[0])
        if out is None or None in ins:
            return None
        if n.op_type == "MatMul":
            k = ins[0][-1]
        elif n.op_type == "Gemm":
            trans_a = next((a.i for a in n.attribute if a.name == "transA"), 0)
            k = ins[0][0] if trans_a else ins[0][1]
        else:  # Conv: weight is [Cout, Cin/group, kh, kw]
            k = int(np.prod(ins[1][1:]))
        total += 2 * int(np.prod(out)) * k
    return total / 1e9


# ---------------------------------------------------------------- rlxc

def build_rlxc(name, threads):
    d = os.path.join(OUT_DIR, name, "t%d" % threads)
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "model")
    for suffix in ("", ".c", ".h", ".weights"):
        if os.path.exists(exe + suffix):
            os.remove(exe + suffix)
    cmd = [RLXC, model_file(name, "model.onnx"), "--build", "-o", exe, "--threads", str(threads)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=child_env(CC="gcc", CFLAGS="-O3 -march=native"), timeout=900)
    dt = time.perf_counter() - t0
    if p.returncode:
        raise BenchError("rlxc: " + (p.stderr or p.stdout).strip().splitlines()[0])
    return exe, dt


BENCH_LINE = re.compile(r"^bench: runs=(\d+) median_ms=([0-9.]+) min_ms=([0-9.]+)", re.M)


def rlxc_batch(exe, name, threads, runs, out_npy=None):
    cmd = [exe, "-i", model_file(name, "in_0.npy"), "--bench", str(runs), "--threads", str(threads)]
    # -o keeps the binary from printing the outputs.
    cmd += ["-o", out_npy or os.path.join(os.path.dirname(exe), "out_0.npy")]
    p = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), timeout=900)
    m = BENCH_LINE.search(p.stdout)
    if p.returncode or not m:
        raise BenchError("run: " + ((p.stderr or p.stdout).strip().splitlines() or ["no bench line"])[0])
    return float(m.group(2)), float(m.group(3))


def check_output(name, out_npy):
    want = np.load(model_file(name, "expected_0.npy")).astype(np.float64)
    got = np.load(out_npy).astype(np.float64)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (list(got.shape), list(want.shape))
    err = np.abs(got - want)
    if not (err <= 1e-4 + 1e-3 * np.abs(want)).all():
        return "max abs error %.3g" % float(np.nanmax(err))
    return None


# ---------------------------------------------------------------- ORT / PyTorch workers

class Worker:
    """A bench/*_bench.* process in --serve mode: a warm session answering `R` with R times."""

    def __init__(self, label, cmd, env):
        self.label = label
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1, env=env, cwd=ROOT)
        self.session_ms = None
        self.warmup = []
        while True:
            line = self._line()
            if line == "ready":
                break
            if line.startswith("session_ms="):
                self.session_ms = float(line.split("=", 1)[1])
            elif line.startswith("warmup_ms="):
                self.warmup = [float(x) for x in line.split("=", 1)[1].split(",") if x]

    def _line(self):
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read().strip().splitlines()
            self.proc.wait()
            raise BenchError("%s: %s" % (self.label, err[-1] if err else "worker exited"))
        return line.strip()

    def batch(self, runs):
        self.proc.stdin.write("%d\n" % runs)
        self.proc.stdin.flush()
        line = self._line()
        if not line.startswith("times_ms="):
            raise BenchError("%s: unexpected output %r" % (self.label, line))
        return [float(x) for x in line.split("=", 1)[1].split(",")]

    def cpu_ticks(self):
        """CPU time (clock ticks) the worker's threads have used, or None where /proc cannot say."""
        total = 0
        try:
            for t in os.listdir("/proc/%d/task" % self.proc.pid):
                with open("/proc/%d/task/%s/stat" % (self.proc.pid, t)) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            return None
        return total

    def settle(self):
        """Waits until the worker's threads stop using CPU after a batch (at most SETTLE_MAX_S):
        PyTorch's BLAS threads spin for ~100 ms after each run (measured at 1 and 2 threads
        on a Zen 5 VM), longer than PAUSE_S, and took a core from whichever runtime came next."""
        end = time.time() + SETTLE_MAX_S
        last = self.cpu_ticks()
        while last is not None and time.time() < end:
            time.sleep(0.02)
            now = self.cpu_ticks()
            if now == last:
                return
            last = now

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def ort_worker(name, threads):
    cmd = ["node", os.path.join(ROOT, "bench", "ort_bench.js"), model_file(name, "model.onnx"),
           model_file(name, "in_0.npy"), "--threads", str(threads), "--warmup", "3", "--serve"]
    return Worker("ORT", cmd, child_env(NODE_PATH=ORT_MODULES))


def torch_worker(name, threads):
    cmd = [PY, os.path.join(ROOT, "bench", "torch_bench.py"), name, model_file(name, "in_0.npy"),
           "--threads", str(threads), "--warmup", "3", "--serve"]
    return Worker("PyTorch", cmd, child_env())


# ---------------------------------------------------------------- one model

def runs_for(est_ms, budget_s):
    return max(3, min(2000, int(round(budget_s * 1e3 / max(est_ms, 1e-3)))))


def bench_config(name, threads, exe, args, res):
    """Times the three runtimes on one model and thread count; fills res (dict by runtime)."""
    rounds = {rt: [] for rt in RUNTIMES}   # per-round medians
    best = {rt: float("inf") for rt in RUNTIMES}
    live = {}
    runs = {}
    if exe:
        t_med, _ = rlxc_batch(exe, name, threads, 1)
        runs["rlxc"] = runs_for(t_med, args.budget)
    for rt, start in (("ORT", ort_worker), ("PyTorch", torch_worker)):
        try:
            w = start(name, threads)
        except BenchError as e:
            res[rt + "_error"] = str(e)
            log("  %s: %s" % (rt, e))
            continue
        live[rt] = w
        res[rt + "_session_ms"] = w.session_ms
        runs[rt] = runs_for(min(w.warmup[1:] or w.warmup or [1.0]), args.budget)
    try:
        for r in range(args.rounds):
            for rt in RUNTIMES:
                if rt not in runs:
                    continue
                try:
                    if rt == "rlxc":
                        med, mn = rlxc_batch(exe, name, threads, runs[rt])
                    else:
                        ts = live[rt].batch(runs[rt])
                        med, mn = statistics.median(ts), min(ts)
                        live[rt].settle()
                except BenchError as e:
                    res[rt + "_error"] = str(e)
                    log("  %s: %s" % (rt, e))
                    del runs[rt]
                    continue
                rounds[rt].append(med)
                best[rt] = min(best[rt], mn)
                time.sleep(PAUSE_S)
            log("  %s t%d round %d/%d: %s" % (name, threads, r + 1, args.rounds, "  ".join(
                "%s %.3f ms x%d" % (rt, rounds[rt][-1], runs[rt]) for rt in RUNTIMES if rt in runs)))
    finally:
        for w in live.values():
            w.close()
    for rt in RUNTIMES:
        if rounds[rt]:
            m = statistics.median(rounds[rt])
            res[rt] = m
            res[rt + "_best"] = best[rt]
            res[rt + "_runs"] = runs.get(rt, 0)
            res[rt + "_spread"] = (max(rounds[rt]) - min(rounds[rt])) / m if m > 0 else 0.0


# ---------------------------------------------------------------- GEMM peak, machine

GEMM_LINE = re.compile(r"^gemm 1024x1024x1024: rlx ([0-9.]+) GFLOP/s, openblas ([0-9.]+) GFLOP/s", re.M)
GEMM_BEST = re.compile(r"best of \d+: ([0-9.]+), ([0-9.]+)")
GEMM_CPU = re.compile(r"cpu-time median: ([0-9.]+), ([0-9.]+)")


def gemm_peak(budget):
    p = subprocess.run(["bash", os.path.join(ROOT, "bench", "gemm_bench.sh"), "--budget", str(budget),
                        "1024x1024x1024"], capture_output=True, text=True, cwd=ROOT,
                       env=child_env(CC="gcc"), timeout=600)
    line = next((l for l in p.stdout.splitlines() if l.startswith("gemm 1024x1024x1024")), None)
    m = GEMM_LINE.search(line or "")
    if p.returncode or not m:
        raise BenchError("gemm_bench.sh failed: " + (p.stderr or p.stdout).strip()[-300:])
    # The cpu-time median leaves out time spent preempted: the machine's speed, not the load's.
    for pattern, kind in ((GEMM_CPU, "cpu-time median"), (GEMM_BEST, "best run"), (GEMM_LINE, "median")):
        found = pattern.search(line)
        if found:
            return line.strip(), float(found.group(2)), kind


def machine():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    field = lambda k: next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith(k + ":")), "?")
    return "%s, %s CPUs (%s cores per socket, %s threads per core)" % (
        field("Model name"), field("CPU(s)"), field("Core(s) per socket"), field("Thread(s) per core"))


def versions():
    v = []
    try:
        import json
        with open(os.path.join(ORT_MODULES, "onnxruntime-node", "package.json")) as f:
            v.append("onnxruntime-node %s" % json.load(f)["version"])
    except (OSError, ValueError, KeyError):
        v.append("onnxruntime-node ?")
    t = subprocess.run([PY, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    v.append("PyTorch %s" % (t.stdout.strip() or "?"))
    g = subprocess.run(["gcc", "--version"], capture_output=True, text=True)
    v.append((g.stdout.splitlines() or ["gcc ?"])[0])
    n = subprocess.run(["node", "--version"], capture_output=True, text=True)
    v.append("node %s" % n.stdout.strip())
    return ", ".join(v)


def load_average():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


# ---------------------------------------------------------------- report

def fmt_ms(x):
    if x is None:
        return "n/a"
    return "%.3f" % x if x < 1 else "%.2f" % x if x < 100 else "%.0f" % x


def fmt_ratio(a, b):
    return "%.2f" % (a / b) if a is not None and b else "n/a"


def table(results, names, threads, peak):
    head = ["model", "MFLOP", "rlxc ms", "ORT ms", "PyTorch ms", "rlxc/ORT", "rlxc/PyTorch",
            "best rlxc/ORT", "best rlxc/PyTorch", "rlxc GFLOP/s", "% of peak", "noise"]
    coarse = False
    rows = []
    for name in names:
        r = results[name]
        c = r["configs"].get(threads, {})
        gf = r.get("gflop")
        rl, ort, pt = c.get("rlxc"), c.get("ORT"), c.get("PyTorch")
        rl_best = c.get("rlxc_best")
        gfs = gf / (rl_best / 1e3) if gf is not None and rl_best else None
        # The binary prints milliseconds with 3 decimals: a few microseconds are only roughly known.
        rough = rl is not None and rl < 0.02
        coarse = coarse or rough
        spread = max([c[k] for k in c if k.endswith("_spread")], default=None)
        model = name + (" (WRONG OUTPUT)" if r.get("wrong") else "")
        rows.append([model, ("%.2f" if gf < 0.01 else "%.1f") % (gf * 1e3) if gf is not None else "?", fmt_ms(rl) + (" (*)" if rough else ""), fmt_ms(ort), fmt_ms(pt),
                     fmt_ratio(rl, ort), fmt_ratio(rl, pt),
                     fmt_ratio(c.get("rlxc_best"), c.get("ORT_best")),
                     fmt_ratio(c.get("rlxc_best"), c.get("PyTorch_best")),
                     "%.2f" % gfs if gfs is not None else "n/a",
                     "%.1f%%" % (100 * gfs / (peak * threads)) if gfs is not None and peak else "n/a",
                     "%.0f%%" % (100 * spread) if spread is not None else "n/a"])
    text = markdown(head, rows)
    if coarse:
        text += ("\n\n(*) rlxc's binary prints its times in ms with 3 decimals, so a run of a few "
                 "microseconds is only known to about +-0.0005 ms: its ratios are rough.")
    return text


def markdown(head, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), sep] + [line(r) for r in rows])


def costs_table(results, names, thread_counts):
    head = ["model", "rlxc build s (rlxc + gcc -O3)"] + ["ORT session ms (%dt)" % t for t in thread_counts]
    rows = []
    for name in names:
        r = results[name]
        row = [name, "%.2f" % r["build_s"] if r.get("build_s") is not None else "n/a"]
        for t in thread_counts:
            s = r["configs"].get(t, {}).get("ORT_session_ms")
            row.append("%.1f" % s if s is not None else "n/a")
        rows.append(row)
    return markdown(head, rows)


def problems(results, names):
    out = []
    for name in names:
        r = results[name]
        if r.get("error"):
            out.append("- %s: %s" % (name, r["error"]))
        if r.get("wrong"):
            out.append("- %s: rlxc's output differs from PyTorch's: %s" % (name, r["wrong"]))
        for t, c in sorted(r["configs"].items()):
            for rt in RUNTIMES:
                if c.get(rt + "_error"):
                    out.append("- %s, %d thread(s), %s: %s" % (name, t, rt, c[rt + "_error"]))
    return out


def report(args, results, names, gemm, mach, vers, loads):
    line, peak, kind = gemm
    parts = ["# Performance: rlxc against ONNX Runtime and PyTorch", "",
             "Generated by `%s`; do not edit by hand (bench/README.md says how to read it)." % args.command, "",
             "- Machine: %s" % mach,
             "- Software: %s" % vers,
             "- rlxc binaries: `CC=gcc CFLAGS=\"-O3 -march=native\" build/rlxc model.onnx --build --threads N`",
             "- %d rounds per model and thread count, each round about %.1f s per runtime (at least 3 runs); "
             "load average %s before, %s after" % (args.rounds, args.budget, loads[0], loads[1]), "",
             "## GEMM", "", "`bench/gemm_bench.sh 1024x1024x1024` (rlx vs OpenBLAS, one thread):", "",
             "    " + line, "",
             "Peak used below: OpenBLAS %.1f GFLOP/s (%s) per thread." % (peak, kind), ""]
    for t in args.thread_counts:
        parts += ["## %d thread%s" % (t, "" if t == 1 else "s"), "", table(results, names, t, peak), ""]
    parts += ["ms: median over rounds of each round's median run time. Ratios > 1: rlxc is slower. "
              "\"best\": ratio of the fastest single runs. rlxc GFLOP/s: the ONNX graph's MatMul/Gemm/Conv "
              "FLOPs (convolutions counted as direct, 2 FLOPs per multiply-add) over rlxc's fastest run (the "
              "least disturbed by other load), so an effective rate: Winograd convolutions (docs/kernels.md) "
              "do fewer multiplies than counted, and the rate can pass the GEMM peak; % of peak against the "
              "OpenBLAS figure above x threads. noise: (max - min) / median of the per-round medians, "
              "worst of the three runtimes; on a busy machine all wall times, and so % of peak, suffer.", "",
              "## One-time costs (not in the ratios)", "", costs_table(results, names, args.thread_counts), ""]
    probs = problems(results, names)
    if probs:
        parts += ["## Problems", ""] + probs + [""]
    return "\n".join(parts)


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description="rlxc vs ONNX Runtime vs PyTorch on the zoo models")
    ap.add_argument("--quick", action="store_true", help="2 rounds of about 0.3 s per runtime")
    ap.add_argument("--models", default=",".join(ALL_MODELS), help="comma-separated zoo model names; "
                    "'wide' stands for the wider zoo's (bench/zoo.py), 'all' for both")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--rounds", type=int, help="rounds per model and thread count (default 5, quick 2)")
    ap.add_argument("--budget", type=float, help="seconds per runtime per round (default 1.0, quick 0.3)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"),
                    help="markdown report ('-' for none)")
    args = ap.parse_args()
    args.command = " ".join(["/usr/bin/python3 bench/models.py"] + [shlex.quote(a) for a in sys.argv[1:]])
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.budget = args.budget or (0.3 if args.quick else 1.0)
    names = []
    for n in args.models.split(","):
        names += {"wide": WIDE_MODELS, "all": ALL_MODELS + WIDE_MODELS}.get(n, [n] if n else [])
    try:
        args.thread_counts = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        sys.exit("models.py: --threads wants comma-separated counts")
    if args.rounds < 1 or args.budget <= 0 or not args.thread_counts or min(args.thread_counts) < 1:
        sys.exit("models.py: --rounds, --budget and --threads must be positive")
    for n in names:
        if n not in ALL_MODELS + WIDE_MODELS:
            sys.exit("models.py: unknown model '%s' (models: %s)" % (n, ",".join(ALL_MODELS + WIDE_MODELS)))
        for f in ("model.onnx", "in_0.npy", "expected_0.npy"):
            if not os.path.exists(model_file(n, f)):
                sys.exit("models.py: no %s; run `%s` first" % (model_file(n, f), "/usr/bin/python3 bench/zoo.py"
                         if n in WIDE_MODELS else "bash tests/zoo/run.sh"))
    if not os.access(RLXC, os.X_OK):
        sys.exit("models.py: no build/rlxc; run `make` first")
    if not os.path.isdir(os.path.join(ORT_MODULES, "onnxruntime-node")):
        sys.exit("models.py: no onnxruntime-node in build/ort; run `mkdir -p build/ort && cd build/ort && "
                 "ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node`")

    t_start = time.perf_counter()
    loads = [load_average()]
    mach, vers = machine(), versions()
    log("gemm: bench/gemm_bench.sh 1024x1024x1024 ...")
    gemm = gemm_peak(1.0 if args.quick else 3.0)
    log(gemm[0])

    results = {}
    for name in names:
        r = results[name] = {"configs": {}}
        r["gflop"] = count_flops(model_file(name, "model.onnx"))
        for t in args.thread_counts:
            c = r["configs"][t] = {}
            exe = None
            try:
                exe, build_s = build_rlxc(name, t)
                if "build_s" not in r:
                    r["build_s"] = build_s
                out_npy = os.path.join(os.path.dirname(exe), "check_0.npy")
                rlxc_batch(exe, name, t, 1, out_npy)
                wrong = check_output(name, out_npy)
                if wrong:
                    r["wrong"] = wrong
            except (BenchError, subprocess.TimeoutExpired) as e:
                r["error"] = "rlxc, %d thread(s): %s" % (t, e)
                log("  %s" % r["error"])
                exe = None
            log("%s, %d thread(s):" % (name, t))
            bench_config(name, t, exe, args, c)
    loads.append(load_average())

    text = report(args, results, names, gemm, mach, vers, loads)
    print(text)
    if args.out != "-":
        with open(args.out, "w") as f:
            f.write(text)
        log("wrote %s (%.0f s)" % (os.path.relpath(args.out, ROOT), time.perf_counter() - t_start))


if __name__ == "__main__":
    main()
