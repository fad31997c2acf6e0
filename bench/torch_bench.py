#!/usr/bin/python3
"""torch_bench.py - times one zoo model under PyTorch (CPU, eval, inference_mode).

    /usr/bin/python3 bench/torch_bench.py NAME IN.npy [--threads N] [--warmup W] [--runs R] [--serve]

The model is built by tests/zoo/export.py's own constructors (imported, not
copied), seeded the same way, so it is the network that was exported to
build/zoo/NAME/model.onnx (the weights' values don't matter for speed).
torch.set_num_threads(N) and one inter-op thread, like ORT's and rlxc's
settings in bench/models.py. Prints the same lines as bench/ort_bench.js:

    warmup_ms=a,b,...
    times_ms=a,b,...          (R timed calls of model(x), perf_counter around each)

With --serve it prints `ready` after the warm-ups, then answers each stdin line
holding a count R with one `times_ms=...` line, until EOF.
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "zoo"))
import export as zoo  # noqa: E402  (tests/zoo/export.py)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo as wzoo  # noqa: E402  (bench/zoo.py, the wider zoo)

MODELS = dict(zoo.MODELS, **wzoo.MODELS)


def time_runs(model, x, n):
    times = []
    with torch.inference_mode():
        for _ in range(n):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def fmt(times):
    return ",".join("%.4f" % t for t in times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name", choices=sorted(MODELS))
    ap.add_argument("input")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--serve", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)
    make, shape = MODELS[a.name]
    torch.manual_seed(zoo.SEED)
    model = make()
    zoo.randomise_batchnorm(model)
    model.eval()
    x = torch.from_numpy(np.load(a.input))
    if tuple(x.shape) != tuple(shape):
        sys.exit("torch_bench: %s: input shape %s, the model wants %s" % (a.input, tuple(x.shape), shape))
    print("warmup_ms=" + fmt(time_runs(model, x, a.warmup)), flush=True)
    if not a.serve:
        print("times_ms=" + fmt(time_runs(model, x, a.runs)), flush=True)
        return
    print("ready", flush=True)
    for line in sys.stdin:
        try:
            n = int(line)
        except ValueError:
            n = 0
        if n < 1:
            sys.exit("torch_bench: serve: want a run count, not %r" % line)
        print("times_ms=" + fmt(time_runs(model, x, n)), flush=True)


if __name__ == "__main__":
    main()
