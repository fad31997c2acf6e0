#!/usr/bin/python3
"""run.py - runs rlxc over the ONNX backend node tests and writes docs/conformance.md.

    /usr/bin/python3 tests/conformance/run.py [--only REGEX] [--sample N] [--floor FILE]
        [--rlxc PATH] [--target T] [--jobs N] [--report PATH] [--data DIR] [--keep] [-v]
        [--sample N] [--sanitized]

--sample N runs every N-th test only; --sanitized (tests/sanitize/run.sh,
with RLX_BUILD and RLX_MODEL_CFLAGS set) fails a test only for a sanitizer
report and counts those in its closing line. Neither writes the report.

How it works. Every directory under DATA (default
/usr/share/libonnx-testdata/data/node) holds model.onnx and
test_data_set_0/{input,output}_N.pb. Each test gets exactly one class:

  not applicable  decided up front from the model alone: a graph input or
                  output that is a sequence, optional, map, sparse tensor,
                  string or bfloat16 tensor (the harness speaks .npy, which has
                  no string or bfloat16 form), or a training-only op/domain;
  unsupported op  rlxc said "unsupported op", "unknown op" or
                  "not supported by target";
  build failure   any other rlxc error (its first line), or the C compiler
                  rejecting the generated model.c;
  runtime error   the model binary exited non-zero, crashed or timed out;
  wrong result    an output differs in count, dtype, shape or value;
  pass            every output matches: floats within rtol 1e-3 / atol 1e-5
                  (NaN exactly where NaN is expected, infinities equal),
                  integers and bools exactly.

Shape-deciding inputs. Some tests give an input that decides an output
shape (Reshape's shape, Slice's starts, Tile's repeats, ...) as a graph
input. rlxc has static shapes and says `input 'R' (value 'NAME') must be a
constant`; then, and only for the inputs such a message names, the test is
compiled again with `--freeze NAME=FILE.npy` (the value from the test's input
.pb), repeated while rlxc names further inputs (Slice names starts, then
ends, ...). Those inputs are no longer passed at run time, and a pass says
`pass (shape inputs frozen: NAME, ...)`. See docs/ops.md.

Each test compiles its own model.c and links the runtime library that
`make` built, build/librlxrt.a (with --gc-sections, as rlxc --build does).

--target T compiles every test for that target (default c): a GPU
target's program also links -ldl and runs with the Vulkan validation layer
on and RLX_VK_DEBUG=1 (spirv), where any `rlx_vk: validation:` line the
host prints makes the test a runtime error; or (cuda) through the CPU shim:
the test's model.cu compiled against tests/shim/cuda_shim.h, the real host
over the stand-in driver (tests/shim/, built once here), run twice, with
threads and blocks in forward and in reverse order, whose outputs must be
the same bytes; a `cuda_driver:` line is a runtime error too. Without NVRTC
the cuda run prints one "skipped" line and passes. msl has no device here:
its tests are built through the MSL shim (tests/shim/msl/build.sh: the
kernels type-checked as MSL and the Objective-C host against stub headers,
then run on the CPU), and each program runs in the executor's forward and
reverse orders, which must write the same bytes, as on cuda. --sample N
runs every Nth test only (in name order), for a quicker run. Its report
defaults to docs/conformance_T.md. Inputs are the model's graph inputs that
have no initializer, in declaration order; a .pb file whose tensor name
matches a
graph input goes to that input, otherwise files go in numeric order. Tests
run on --jobs worker processes; results are reported in sorted test order,
so the report is byte-identical when results don't change.

stdout: a few progress lines, a count per class, the most common failure
reasons, then the closing line `N passed, N failed, N skipped` (skipped = not
applicable). Exit status 1 if --floor FILE names more passes than were
measured, or if the runtime library can't be built; else 0.
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"
WORK = os.path.join(ROOT, "build", "conformance")
TIMEOUT_S = 60
RTOL, ATOL = 1e-3, 1e-5
TRAINING_DOMAINS = {"ai.onnx.preview.training"}
# rlxc's words for an op it has no lowering for ("unknown op" is what the
# .rlxg reader says for a name missing from ops.def)
UNSUPPORTED_MARKS = ("unsupported op", "not supported by target", "unknown op")

CLASSES = ["pass", "wrong result", "runtime error", "build failure", "unsupported op", "not applicable"]

CC = os.environ.get("CC", "cc").split()
# RLX_MODEL_CFLAGS: more flags for each model's build (tests/sanitize/run.sh
# gives the sanitizers); RLX_BUILD: the build directory whose librlxrt.a the
# models link (default build)
CFLAGS = ["-O1", "-std=c99"] + os.environ.get("RLX_MODEL_CFLAGS", "").split()
# what runs a built model binary (tests/cross/run.py sets an emulator here,
# and CC, WORK to its own)
EXEC = []
# what ASan, LSan and UBSan print: with --sanitized any of it is a failure
SANITIZER_MARKS = re.compile(r"ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error: ")


def op_under_test(name, model, data):
    """The op a node test exercises: its single (or last) node; an
    `_expanded` test is filed under its unexpanded twin's op."""
    if name.endswith("_expanded"):
        twin = os.path.join(data, name[: -len("_expanded")], "model.onnx")
        if os.path.exists(twin):
            nodes = onnx.load(twin).graph.node
            if nodes:
                return nodes[-1].op_type + " (expanded)"
    nodes = model.graph.node
    return nodes[-1].op_type if nodes else "(none)"


def type_problem(vi):
    """Why a graph input/output can't go through the .npy harness, or None."""
    kind = vi.type.WhichOneof("value")
    if kind != "tensor_type":
        return "%s %s" % ((kind or "untyped").replace("_type", ""), vi.name)
    et = vi.type.tensor_type.elem_type
    if et == onnx.TensorProto.STRING:
        return "string tensor %s" % vi.name
    if et == onnx.TensorProto.BFLOAT16:
        return "bfloat16 tensor %s (no .npy form)" % vi.name
    if et in (onnx.TensorProto.COMPLEX64, onnx.TensorProto.COMPLEX128):
        return "complex tensor %s" % vi.name
    return None


def not_applicable(model):
    """The reason a test is out of scope, or None."""
    for imp in model.opset_import:
        if imp.domain in TRAINING_DOMAINS:
            return "training-only domain %s" % imp.domain
    for node in model.graph.node:
        if node.domain in TRAINING_DOMAINS:
            return "training-only op %s" % node.op_type
    for vi in list(model.graph.input) + list(model.graph.output):
        why = type_problem(vi)
        if why:
            return "graph I/O: " + why
    return None


def run(argv, timeout=TIMEOUT_S, env=None):
    """(returncode or 'timeout', combined stderr+stdout text). A sanitizer
    report's first line goes first, as "sanitizer report: ...", so that it
    is the reason a failure is filed under."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    text = p.stdout.decode("utf-8", "replace")
    rc = p.returncode
    for line in text.splitlines():
        if SANITIZER_MARKS.search(line):
            return rc or 1, "sanitizer report: %s\n%s" % (line.strip(), text)
    return rc, text


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no message)"


def strip_path(msg):
    """Drops the model path rlxc puts in front of its messages."""
    return re.sub(r"^\S+\.(onnx|rlxg): ", "", msg)


def unsupported_ops(msg, model):
    """The op types an 'unsupported op' message names: `unsupported op(s):
    A (node 'x'); B (node 'y')`, `node 'x' (A): ...`, or `op 'A'`; failing
    those, every op type in the model."""
    ops = re.findall(r"([A-Za-z][A-Za-z0-9_.]*) \(node '", msg)
    ops += re.findall(r"node '[^']*' \(([A-Za-z0-9_.]+)\)", msg)
    ops += re.findall(r"\bop(?: type)? '([A-Za-z0-9_.]+)'", msg)
    if not ops:
        ops = [n.op_type for n in model.graph.node]
    return sorted(set(ops))


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def numbered(dirpath, prefix):
    """prefix_N.pb files in N order."""
    found = []
    for f in os.listdir(dirpath):
        m = re.fullmatch(prefix + r"_(\d+)\.pb", f)
        if m:
            found.append((int(m.group(1)), os.path.join(dirpath, f)))
    return [p for _, p in sorted(found)]


def order_inputs(model, pbs):
    """Matches .pb tensors to the runtime inputs (graph inputs without an
    initializer). Returns (list of arrays, problem or None)."""
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    tensors = [read_pb(p) for p in pbs]
    by_name = {n: a for n, a in tensors if n}
    if len(by_name) == len(tensors) and set(by_name) <= set(names) and len(by_name) == len(names):
        return [by_name[n] for n in names], None
    if len(tensors) != len(names):
        return None, "%d input files for %d graph inputs" % (len(tensors), len(names))
    return [a for _, a in tensors], None


def compare(got, want):
    """(ok, message, max abs error) for one output."""
    if got.dtype != want.dtype:
        return False, "dtype %s, expected %s" % (got.dtype, want.dtype), None
    if got.shape != want.shape:
        return False, "shape %s, expected %s" % (list(got.shape), list(want.shape)), None
    if want.size == 0:
        return True, "", 0.0
    if want.dtype.kind not in "fc":
        bad = int(np.count_nonzero(got != want))
        if bad:
            return False, "%d of %d elements differ" % (bad, want.size), None
        return True, "", 0.0
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    gnan, wnan = np.isnan(g), np.isnan(w)
    if (gnan != wnan).any():
        return False, "%d NaN mismatches" % int(np.count_nonzero(gnan != wnan)), None
    ginf, winf = np.isinf(g), np.isinf(w)
    if (ginf != winf).any() or (g[winf] != w[winf]).any():
        return False, "infinity mismatch", None
    fin = ~(wnan | winf)
    err = np.abs(g[fin] - w[fin])
    max_err = float(err.max()) if err.size else 0.0
    if (err > ATOL + RTOL * np.abs(w[fin])).any():
        return False, "max abs error %.3g" % max_err, max_err
    return True, "", max_err


TARGET = "c"
# what the programs of a GPU target need: their libraries, and the
# environment that turns Vulkan's validation on (rlx_vk.c prints its
# messages as `rlx_vk: validation: ...` with RLX_VK_DEBUG=1)
TARGET_LIBS = {"spirv": ["-ldl"], "cuda": ["-ldl"]}
TARGET_ENV = {"spirv": {"VK_INSTANCE_LAYERS": "VK_LAYER_KHRONOS_validation", "RLX_VK_DEBUG": "1"},
              "cuda": {"RLX_LIBCUDA": os.path.join(ROOT, "build", "shim", "libcuda.so.1")}}
VALIDATION_MARK = "rlx_vk: validation:"
SHIM_MARK = "cuda_driver:"   # the stand-in CUDA driver's reports (tests/shim/cuda_driver.cc)
# targets built by a script instead of the C compiler: BASE -> the executable BASE
TARGET_BUILD = {"msl": ["bash", os.path.join(ROOT, "tests", "shim", "msl", "build.sh")]}
# targets whose kernels run on the CPU shim: each program runs again with
# the threads in reverse order, which must write the same bytes
SHIM_TARGETS = ("cuda", "msl")


def run_test(job):
    """Runs one test; returns (name, op, class, reason). Never raises."""
    global TARGET
    name, data, rlxc, rtlib, keep, TARGET = job
    tdir = os.path.join(data, name)
    mpath = os.path.join(tdir, "model.onnx")
    try:
        model = onnx.load(mpath)
    except Exception as e:  # a model the onnx package can't read
        return name, "(unreadable)", "build failure", "onnx can't load model: %s" % first_line(str(e))
    op = op_under_test(name, model, data)
    why = not_applicable(model)
    if why:
        return name, op, "not applicable", why

    w = os.path.join(WORK, "work", name)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    result = _build_and_check(name, tdir, mpath, model, w, rlxc, rtlib)
    if result[0] == "pass" and not keep:
        shutil.rmtree(w, ignore_errors=True)
    return (name, op) + result


FROZEN_RE = re.compile(r"\(value '([^']+)'\) must be a constant")
# an intermediate value that must be constant names the graph inputs behind it
DEPENDS_RE = re.compile(r"depends on graph inputs? ('[^']*'(?:, '[^']*')*)")


def frozen_candidates(msg):
    """The graph inputs a "must be a constant" message asks to bind."""
    names = FROZEN_RE.findall(msg)
    for group in DEPENDS_RE.findall(msg):
        names += re.findall(r"'([^']+)'", group)
    return names


def _build_and_check(name, tdir, mpath, model, w, rlxc, rtlib):
    ds = os.path.join(tdir, "test_data_set_0")
    inits = {i.name for i in model.graph.initializer}
    input_names = [i.name for i in model.graph.input if i.name not in inits]
    frozen = []  # graph inputs bound at compile time, in the order rlxc named them
    while True:
        argv = [rlxc, mpath, "-o", os.path.join(w, "model.c"), "--emit-main", "--target", TARGET]
        for n in frozen:
            argv += ["--freeze", "%s=%s" % (n, os.path.join(w, "frozen_%d.npy" % input_names.index(n)))]
        rc, out = run(argv)
        named = [n for n in frozen_candidates(first_line(out)) if n in input_names and n not in frozen]
        if rc == 0 or not named:
            break
        arrays, problem = order_inputs(model, numbered(ds, "input"))
        if problem:
            break
        for n in named:
            np.save(os.path.join(w, "frozen_%d.npy" % input_names.index(n)), arrays[input_names.index(n)])
        frozen += named
    result = _check_built(rc, out, tdir, model, w, rtlib, input_names, frozen)
    if result[0] == "pass" and frozen:
        note = "shape inputs frozen: " + ", ".join(frozen)
        return "pass", "pass (%s)%s" % (note, "; " + result[1] if result[1] else "")
    return result


def _check_built(rc, out, tdir, model, w, rtlib, input_names, frozen):
    if rc == "timeout":
        return "build failure", "rlxc timed out after %d s" % TIMEOUT_S
    if rc != 0:
        msg = strip_path(first_line(out))
        if any(s in out for s in UNSUPPORTED_MARKS):
            ops = ", ".join(unsupported_ops(msg, model))
            detail = re.sub(r"^node '[^']*' \([^)]*\): ", "", msg)
            return "unsupported op", ops if detail.startswith("unsupported op") else "%s: %s" % (ops, detail)
        if rc < 0:
            return "build failure", "rlxc killed by %s" % signal.Signals(-rc).name
        return "build failure", msg
    exe = os.path.join(w, "model")
    if TARGET in TARGET_BUILD:
        rc, out = run(TARGET_BUILD[TARGET] + [exe])
        if rc != 0:
            return "build failure", first_line(out).replace(w + "/", "")
    else:
        rc, out = run(CC + CFLAGS + ["-I", os.path.join(ROOT, "runtime_min"), os.path.join(w, "model.c"),
                                     rtlib, "-Wl,--gc-sections"] + TARGET_LIBS.get(TARGET, []) + ["-lm", "-lpthread", "-o", exe])
        if rc != 0:
            line = next((l for l in out.splitlines() if "error" in l), first_line(out))
            return "build failure", "C compiler: " + line.replace(w + "/", "").strip()

    ds = os.path.join(tdir, "test_data_set_0")
    inputs, problem = order_inputs(model, numbered(ds, "input"))
    if problem:
        return "build failure", problem
    inputs = [a for n, a in zip(input_names, inputs) if n not in frozen]
    want = [read_pb(p)[1] for p in numbered(ds, "output")]
    argv = [exe, "--weights", os.path.join(w, "model.weights")]
    for i, a in enumerate(inputs):
        p = os.path.join(w, "in_%d.npy" % i)
        np.save(p, a)  # (ascontiguousarray would make a 0-d array 1-d)
        argv += ["-i", p]
    outs = [os.path.join(w, "out_%d.npy" % i) for i in range(len(want))]
    for p in outs:
        argv += ["-o", p]
    env = dict(os.environ, **TARGET_ENV.get(TARGET, {}))
    if TARGET == "cuda":
        problem = _cuda_shim_kernels(w, env)
        if problem:
            return "build failure", problem
    if TARGET in SHIM_TARGETS:
        env["RLX_SHIM_ORDER"] = "forward"
    rc, out = run(EXEC + argv, env=env)
    problem = _run_problem(rc, out, w)
    if problem:
        return "runtime error", problem
    if TARGET in SHIM_TARGETS:
        rev = [os.path.join(w, "rev_%d.npy" % i) for i in range(len(want))]
        env["RLX_SHIM_ORDER"] = "reverse"
        rc, out = run(EXEC + argv[: len(argv) - 2 * len(outs)] + [a for p in rev for a in ("-o", p)], env=env)
        problem = _run_problem(rc, out, w)
        if problem:
            return "runtime error", "reverse thread order: " + problem
        for i, (p, q) in enumerate(zip(outs, rev)):
            if open(p, "rb").read() != open(q, "rb").read():
                return "runtime error", "output %d: the forward and reverse thread orders disagree" % i
    worst = 0.0
    for i, (p, wa) in enumerate(zip(outs, want)):
        try:
            ga = np.load(p)
        except Exception as e:
            return "wrong result", "output %d unreadable: %s" % (i, first_line(str(e)))
        ok, msg, err = compare(ga, wa)
        if not ok:
            return "wrong result", "output %d: %s" % (i, msg)
        worst = max(worst, err)
    return "pass", "max abs error %.3g" % worst if worst else ""


def _run_problem(rc, out, w):
    """Why a model run failed (a message), or None."""
    for mark, what in ((VALIDATION_MARK, "validation messages"), (SHIM_MARK, "stand-in driver reports")):
        if mark in out:
            msgs = [l for l in out.splitlines() if mark in l]
            return "%d %s: %s" % (len(msgs), what, msgs[0][:200])
    if rc == "timeout":
        return "timed out after %d s" % TIMEOUT_S
    if rc < 0:
        return "killed by %s" % signal.Signals(-rc).name
    if rc != 0:
        return "exit %d: %s" % (rc, first_line(out).replace(w + "/", ""))
    return None


def _cuda_shim_kernels(w, env):
    """Builds w/model.cu into the shim's kernel library and extracts the
    PTX the stand-in driver checks; sets their paths in env. A problem
    (message) or None."""
    so, ptx = os.path.join(w, "kernels.so"), os.path.join(w, "model.ptx")
    rc, out = run(["bash", os.path.join(ROOT, "tests", "shim", "kernels.sh"), os.path.join(w, "model.cu"), so])
    if rc != 0:
        line = next((l for l in out.splitlines() if "error" in l), first_line(out))
        return "CUDA shim: " + line.replace(w + "/", "").strip()
    rc, out = run([sys.executable, os.path.join(ROOT, "tests", "shim", "ptx_of.py"), os.path.join(w, "model.c"), ptx])
    if rc != 0:
        return "ptx_of.py: " + first_line(out)
    env["RLX_SHIM_KERNELS"] = so
    env["RLX_SHIM_EXPECT_PTX"] = ptx
    return None


def cuda_ready(rlxc):
    """None if --target cuda can run here (NVRTC opens, the shim builds),
    else why not; a missing NVRTC is ("skip", message)."""
    probe = os.path.join(WORK, "nvrtc_probe")
    os.makedirs(WORK, exist_ok=True)
    rc, out = run([rlxc, os.path.join(ROOT, "examples", "shapes.rlxg"), "--target", "cuda", "-o", probe])
    if rc != 0 and "needs NVRTC" in out:
        return "skip", first_line(out)
    rc, out = run(["bash", os.path.join(ROOT, "tests", "shim", "build.sh")], timeout=600)
    if rc != 0:
        return "fail", "tests/shim/build.sh: " + first_line(out)
    return None


def runtime_library():
    """build/librlxrt.a (or $RLX_BUILD's), which `make` builds; exits if it is missing."""
    lib = os.path.join(ROOT, os.environ.get("RLX_BUILD", "build"), "librlxrt.a")
    if not os.path.exists(lib):
        sys.exit("run.py: %s is missing (run make)" % lib)
    return lib


def reason_key(cls, reason):
    """Groups similar reasons: node names and numbers don't matter, and an
    unsupported op counts under its op alone."""
    if cls == "unsupported op":
        return "unsupported op: " + reason.split(": ")[0]
    r = re.sub(r"node '[^']*' ", "", reason)
    r = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", r)
    return "%s: %s" % (cls, r)


def md_cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


def write_report(path, command, results, counts):
    by_op = collections.OrderedDict()
    for name, op, cls, _ in results:
        t = by_op.setdefault(op, [0, 0, 0])
        t[0] += 1
        t[1] += cls == "pass"
        t[2] += cls == "not applicable"
    reasons = collections.Counter(reason_key(c, r) for _, _, c, r in results if c not in ("pass", "not applicable"))
    lines = ["# ONNX node-test conformance", "",
             "Generated by `%s`; do not edit by hand." % command, "",
             "Each test under the ONNX backend node tests gets one class; see the top of",
             "tests/conformance/run.py for what each class means.", "",
             "| class | tests |", "|---|---|"]
    for c in CLASSES:
        lines.append("| %s | %d |" % (c, counts[c]))
    lines += ["| **total** | %d |" % len(results), "",
              "## Most common failure reasons", "", "| count | reason |", "|---|---|"]
    for key, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:25]:
        lines.append("| %d | %s |" % (n, md_cell(key)))
    blocking = collections.Counter(op for _, _, c, r in results if c == "unsupported op"
                                   for op in r.split(": ")[0].split(", "))
    lines += ["", "## Unsupported ops", "", "How many tests each op that rlxc rejects keeps from running.", "",
              "| op | tests |", "|---|---|"]
    for op, n in sorted(blocking.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append("| %s | %d |" % (op, n))
    lines += ["", "## Per op", "", "| op | tests | passed | not applicable |", "|---|---|---|---|"]
    for op in sorted(by_op):
        t = by_op[op]
        lines.append("| %s | %d | %d | %d |" % (op, t[0], t[1], t[2]))
    lines += ["", "## Per test", "", "| test | class | reason |", "|---|---|---|"]
    for name, _, cls, reason in results:
        lines.append("| %s | %s | %s |" % (name, cls, md_cell(reason)))
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", metavar="REGEX", help="run the tests whose name matches REGEX (re.search)")
    ap.add_argument("--floor", metavar="FILE", help="exit 1 if fewer tests pass than the number in FILE")
    ap.add_argument("--rlxc", default=os.path.join(ROOT, "build", "rlxc"))
    ap.add_argument("--target", default="c", help="rlxc --target (default c)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--sample", type=int, default=1, metavar="N", help="run every Nth test only (name order)")
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--report", help="report path (default docs/conformance.md; none with --only)")
    ap.add_argument("--keep", action="store_true", help="keep the work dirs of passing tests too")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per non-passing test")
    ap.add_argument("--sanitized", action="store_true",
                    help="rlxc and the models are built with sanitizers: a test fails only on a sanitizer report, "
                         "and the closing line counts those")
    args = ap.parse_args()

    rlxc = os.path.abspath(args.rlxc)
    if not os.access(rlxc, os.X_OK):
        sys.exit("run.py: %s is not an executable (make first)" % rlxc)
    names = sorted(d for d in os.listdir(args.data) if os.path.isfile(os.path.join(args.data, d, "model.onnx")))
    if args.only:
        names = [n for n in names if re.search(args.only, n)]
    if args.sample > 1:
        names = names[:: args.sample]
    partial = args.only or args.sample > 1 or args.sanitized
    default_report = "conformance.md" if args.target == "c" else "conformance_%s.md" % args.target
    report = args.report or (None if partial else os.path.join(ROOT, "docs", default_report))

    rtlib = runtime_library()
    if args.target == "cuda":
        why = cuda_ready(rlxc)
        if why and why[0] == "skip":
            print("run.py: skipped: --target cuda needs NVRTC here: %s" % why[1])
            print("0 passed, 0 failed, %d skipped" % len(names))
            return 0
        if why:
            sys.exit("run.py: %s" % why[1])
    jobs = [(n, args.data, rlxc, rtlib, args.keep, args.target) for n in names]
    results = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for i, r in enumerate(pool.map(run_test, jobs, chunksize=4), 1):
            results.append(r)
            if i % 100 == 0:
                print("conformance: %d/%d done" % (i, len(jobs)), flush=True)

    counts = collections.Counter(c for _, _, c, _ in results)
    if args.verbose:
        for name, _, cls, reason in results:
            if cls not in ("pass", "not applicable"):
                print("%s: %s: %s" % (name, cls, reason))
    for c in CLASSES:
        print("  %-15s %4d" % (c, counts[c]))
    reasons = collections.Counter(reason_key(c, r) for _, _, c, r in results if c not in ("pass", "not applicable"))
    if reasons:
        print("most common failure reasons:")
        for key, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:10]:
            print("  %4d  %s" % (n, key[:150]))
    if report:
        cmd = " ".join(["tests/conformance/run.py"] + [a for a in sys.argv[1:]])
        write_report(report, cmd, results, counts)
        print("report: %s" % os.path.relpath(report, ROOT))

    status = 0
    passed = counts["pass"]
    if args.floor:
        with open(args.floor) as f:
            m = re.search(r"\d+", f.read())
        if not m:
            sys.exit("run.py: %s holds no number" % args.floor)
        if passed < int(m.group()):
            print("run.py: %d passed, below the floor of %s in %s" % (passed, m.group(), args.floor))
            status = 1
    skipped = counts["not applicable"]
    if args.sanitized:
        reports = [(n, r) for n, _, _, r in results if r.startswith("sanitizer report:")]
        for name, reason in reports:
            print("FAIL %s: %s" % (name, reason[:300]))
        print("%d passed, %d failed" % (len(results) - len(reports), len(reports)))
        return 1 if reports else status
    print("%d passed, %d failed, %d skipped" % (passed, len(results) - passed - skipped, skipped))
    return status


if __name__ == "__main__":
    sys.exit(main())
