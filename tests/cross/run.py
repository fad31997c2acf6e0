#!/usr/bin/python3
"""run.py - rlxc's output cross-built for AArch64 and run under qemu-user.

    /usr/bin/python3 tests/cross/run.py [--only REGEX] [--jobs N]

What it checks, one line each, then the closing line `N passed, N failed`:

  gemm kernel   tests/cross/gemm_check.c built with the AArch64 runtime and
                run under qemu: it must report the NEON micro-kernel
                (rk_sgemm_kernel() == "neon 6x16", so the NEON path is the
                one that runs) and pass its GEMM cases against a double sum.
  zoo           each model of build/zoo (the six of tests/zoo/export.py: mlp,
                cnn, resnet18, mobilenetv2, transformer, lstm; exported here
                if tests/zoo/run.sh has not done it) compiled once by rlxc
                (weights packed on this x86 host), its model.c built twice
                -- with this machine's cc, and with aarch64-linux-gnu-gcc --
                against a runtime library built the same way; both run on
                in_0.npy. The AArch64 output must match PyTorch's
                (expected_0.npy, rtol 1e-3 / atol 1e-4, as tests/zoo) and the
                x86 build's output (rtol 1e-4 / atol 1e-5: the two differ only
                in rounding, FMA contraction and kernel blocking). MobileNetV2
                runs again on 2 threads under qemu, bit-equal to 1 thread.
  node tests    a fixed sample of the ONNX node tests, every 8th of those
                that pass on x86 (docs/conformance.md's per-test table, in
                name order), through tests/conformance/run.py's own
                compile-and-check code, once for x86 and once for AArch64 under
                qemu: each must pass against the ONNX reference outputs, and
                the AArch64 outputs must match the x86 ones (rtol 1e-3 /
                atol 1e-5, run.py's tolerance).
  rlxc check    on the CNN built for AArch64 (CC=aarch64-linux-gnu-gcc,
                --exec qemu): all clear, and with the NEON kernel broken in a
                copy of the runtime it names the first divergent node.

The AArch64 binaries are dynamically linked against Debian's AArch64 libc
(qemu-aarch64 -L /usr/aarch64-linux-gnu). Speed under qemu means nothing and
is not measured. Work files go under build/cross/. Exit status 1 if anything
failed (a missing cross compiler or qemu is a failure: scripts/setup.sh
installs them).
"""
import argparse
import concurrent.futures
import importlib.util
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
WORK = os.path.join(ROOT, "build", "cross")
RLXC = os.path.join(ROOT, "build", "rlxc")
RT_DIR = os.path.join(ROOT, "runtime_min")
ZOO = os.path.join(ROOT, "build", "zoo")
ZOO_MODELS = ["mlp", "cnn", "resnet18", "mobilenetv2", "transformer", "lstm"]
CROSS_CC = "aarch64-linux-gnu-gcc"
QEMU = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
CFLAGS = ["-O2"]   # rlxc --build's default
NODE_STEP = 8
TIMEOUT_S = 600
# rlxc --build's runtime libraries for other compilers (the cross compiler
# for rlxc check) stay in the build tree, as in the other suites
os.environ.setdefault("RLXC_CACHE_DIR", os.path.join(ROOT, "build", "cache"))

spec = importlib.util.spec_from_file_location("conformance", os.path.join(ROOT, "tests", "conformance", "run.py"))
conf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conf)

npass = nfail = 0


def ok(name, msg=""):
    global npass
    npass += 1
    print("ok   %s%s" % (name, ": " + msg if msg else ""), flush=True)


def bad(name, msg):
    global nfail
    nfail += 1
    print("FAIL %s: %s" % (name, msg), flush=True)


def sh(argv, timeout=TIMEOUT_S):
    """(returncode or 'timeout', output)."""
    return conf.run(argv, timeout=timeout)


def build_runtime(cc, dest, jobs):
    """Every runtime_min/*.c compiled with cc into dest/librlxrt.a (as
    rlxc --build compiles them); returns its path or raises RuntimeError."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    srcs = sorted(f for f in os.listdir(RT_DIR) if f.endswith(".c"))

    def one(src):
        obj = os.path.join(dest, src[:-2] + ".o")
        rc, out = sh([cc] + CFLAGS + ["-I", RT_DIR, "-c", os.path.join(RT_DIR, src), "-o", obj])
        if rc != 0:
            raise RuntimeError("%s: cannot compile runtime_min/%s: %s" % (cc, src, conf.first_line(out)))
        return obj

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        objs = list(pool.map(one, srcs))
    lib = os.path.join(dest, "librlxrt.a")
    rc, out = sh(["ar", "rcs", lib] + objs)
    if rc != 0:
        raise RuntimeError("ar: " + conf.first_line(out))
    return lib


def close(got, want, rtol, atol):
    """None if got matches want within |g - w| <= atol + rtol |w| (NaN where
    NaN), else what is wrong."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return "got %s %s, expected %s %s" % (got.dtype, list(got.shape), want.dtype, list(want.shape))
    if want.dtype.kind not in "fc":
        n = int(np.count_nonzero(got != want))
        return "%d elements differ" % n if n else None
    g, w = got.astype(np.float64), want.astype(np.float64)
    if (np.isnan(g) != np.isnan(w)).any():
        return "NaN mismatch"
    fin = ~np.isnan(w)
    err = np.abs(g[fin] - w[fin])
    nbad = int(np.count_nonzero(err > atol + rtol * np.abs(w[fin])))
    if nbad:
        return "max_abs_err=%.3g, %d of %d elements out of tolerance (rtol %g, atol %g)" % (
            float(err.max()), nbad, want.size, rtol, atol)
    return None


def max_err(a, b):
    d = np.abs(a.astype(np.float64) - b.astype(np.float64))
    return float(np.nanmax(d)) if d.size else 0.0


def check_gemm(lib_dir):
    exe = os.path.join(WORK, "gemm_check")
    srcs = [os.path.join(RT_DIR, f) for f in sorted(os.listdir(RT_DIR)) if f.endswith(".c") and f != "rlx_main.c"]
    rc, out = sh([CROSS_CC, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", RT_DIR,
                  os.path.join(ROOT, "tests", "cross", "gemm_check.c")] + srcs + ["-o", exe, "-lm", "-lpthread"])
    if rc != 0:
        return bad("gemm kernel", "%s failed: %s" % (CROSS_CC, conf.first_line(out)))
    rc, out = sh(QEMU + [exe, "neon 6x16"])
    last = out.strip().splitlines()[-1] if out.strip() else "(no output)"
    kernel = re.search(r"gemm kernel: (.*)", out)
    if rc == 0:
        ok("gemm kernel", "%s; %s" % (kernel.group(1) if kernel else "?", last))
    else:
        bad("gemm kernel", "exit %s: %s" % (rc, "; ".join(l for l in out.splitlines() if l.startswith(("FAIL", "gemm")))[:400] or last))


def export_zoo():
    stamp = os.path.join(ZOO, ".stamp")
    export = os.path.join(ROOT, "tests", "zoo", "export.py")
    if os.path.exists(stamp) and os.path.getmtime(stamp) >= os.path.getmtime(export):
        return
    shutil.rmtree(ZOO, ignore_errors=True)
    os.makedirs(ZOO)
    rc, out = sh(["/usr/bin/python3", export, ZOO], timeout=1200)
    if rc == 0:
        open(stamp, "w").close()
    else:
        print("cross: tests/zoo/export.py failed: %s" % conf.first_line(out))


def check_zoo(name, libs):
    src = os.path.join(ZOO, name)
    if not os.path.exists(os.path.join(src, "model.onnx")):
        return bad("zoo %s" % name, "not exported")
    w = os.path.join(WORK, "zoo", name)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    rc, out = sh([RLXC, os.path.join(src, "model.onnx"), "-o", os.path.join(w, "model.c"), "--emit-main"])
    if rc != 0:
        return bad("zoo %s" % name, "rlxc: " + conf.first_line(out))
    outs = {}
    for arch, (cc, lib, prefix) in libs.items():
        exe = os.path.join(w, "model-" + arch)
        rc, out = sh([cc] + CFLAGS + ["-I", RT_DIR, os.path.join(w, "model.c"), lib, "-o", exe, "-lm", "-lpthread"])
        if rc != 0:
            return bad("zoo %s" % name, "%s: %s" % (cc, conf.first_line(out)))
        o = os.path.join(w, "out-%s.npy" % arch)
        rc, out = sh(prefix + [exe, "--weights", os.path.join(w, "model.weights"), "-i",
                               os.path.join(src, "in_0.npy"), "-o", o])
        if rc != 0:
            return bad("zoo %s" % name, "%s run: exit %s: %s" % (arch, rc, conf.first_line(out)))
        outs[arch] = np.load(o)
    want = np.load(os.path.join(src, "expected_0.npy"))
    why = close(outs["aarch64"], want, 1e-3, 1e-4)
    if why:
        return bad("zoo %s" % name, "aarch64 against PyTorch: " + why)
    why = close(outs["aarch64"], outs["x86"], 1e-4, 1e-5)
    if why:
        return bad("zoo %s" % name, "aarch64 against x86: " + why)
    msg = "max_abs_err %.3g against PyTorch, %.3g against x86" % (max_err(outs["aarch64"], want),
                                                                   max_err(outs["aarch64"], outs["x86"]))
    if name == "mobilenetv2":
        exe, o = os.path.join(w, "model-aarch64"), os.path.join(w, "out-aarch64-t2.npy")
        rc, out = sh(QEMU + [exe, "--weights", os.path.join(w, "model.weights"), "--threads", "2", "-i",
                             os.path.join(src, "in_0.npy"), "-o", o])
        if rc != 0:
            return bad("zoo %s" % name, "aarch64 --threads 2: exit %s: %s" % (rc, conf.first_line(out)))
        if np.load(o).tobytes() != outs["aarch64"].tobytes():
            return bad("zoo %s" % name, "aarch64 at 2 threads differs from 1 thread")
        msg += "; 2 threads bit-equal to 1"
    ok("zoo %s" % name, msg)


def check_tool(lib_dir):
    """rlxc check on an AArch64 build under qemu: all clear on the zoo's CNN,
    and, against a copy of the runtime whose NEON kernel reads row 5's A
    value from the wrong lane, exit 1 naming the CNN's first Relu (its first
    convolution's value, fused; read from the ONNX file) as the first
    divergence. The reference is the x86 portable build, which never runs
    the NEON kernel."""
    model = os.path.join(ZOO, "cnn", "model.onnx")
    if not os.path.exists(model):
        return bad("rlxc check (aarch64)", "the zoo's cnn is not exported")
    import onnx
    first_relu = next(n.name for n in onnx.load(model).graph.node if n.op_type == "Relu")
    argv = [RLXC, "check", model, "-i", os.path.join(ZOO, "cnn", "in_0.npy"), "--exec", " ".join(QEMU)]
    env = dict(os.environ, CC=CROSS_CC, CFLAGS="-O2")
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0 or "all clear" not in out:
        return bad("rlxc check (aarch64)", "exit %d, not all clear: %s" % (p.returncode, out.strip()[-300:]))
    rt = os.path.join(lib_dir, "rt-wrong-lane")
    shutil.rmtree(rt, ignore_errors=True)
    shutil.copytree(RT_DIR, rt)
    gemm = os.path.join(rt, "rk_gemm.c")
    src = open(gemm).read()
    wrong = src.replace("RK_NROW(5, vfmaq_lane_f32, a1, 1)", "RK_NROW(5, vfmaq_lane_f32, a1, 0)")
    if wrong == src:
        return bad("rlxc check (aarch64)", "the NEON kernel's row 5 was not found to break")
    open(gemm, "w").write(wrong)
    env["RLXC_RUNTIME_DIR"] = rt
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
    out = p.stdout.decode("utf-8", "replace")
    want = "first divergence: node '%s' (Relu)" % first_relu
    if p.returncode == 1 and want in out:
        ok("rlxc check (aarch64)", "all clear; with a wrong NEON lane it names %s" % first_relu)
    else:
        bad("rlxc check (aarch64)", "with a wrong NEON lane: exit %d, want 1 and \"%s\": %s"
            % (p.returncode, want, out.strip()[-300:]))


def node_sample():
    """Every NODE_STEP-th test that docs/conformance.md lists as passing."""
    names = []
    with open(os.path.join(ROOT, "docs", "conformance.md")) as f:
        for line in f:
            m = re.match(r"\| (test_\S+) \| pass \|", line)
            if m:
                names.append(m.group(1))
    return sorted(names)[::NODE_STEP]


def run_nodes(names, arch, cc, prefix, rtlib, jobs):
    """Runs the node tests through run.py's code for one target, linking
    rtlib; returns {name: (class, reason, work dir)}."""
    conf.CC, conf.EXEC, conf.WORK = [cc], prefix, os.path.join(WORK, "nodes", arch)
    tests = [(n, conf.DEFAULT_DATA, RLXC, rtlib, True, "c") for n in names]
    # threads, not processes: the work is in the compilers and the binaries
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(conf.run_test, tests))
    return {name: (cls, reason, os.path.join(conf.WORK, "work", name)) for name, _, cls, reason in results}


def check_nodes(libs, jobs, only):
    names = node_sample()
    if not names:
        return bad("node tests", "no passing tests found in docs/conformance.md")
    if only:
        names = [n for n in names if re.search(only, n)]
        if not names:
            return
    # x86: the library make built (as tests/conformance/run.sh links it)
    x86 = run_nodes(names, "x86", "cc", [], conf.runtime_library(), jobs)
    arm = run_nodes(names, "aarch64", CROSS_CC, QEMU, libs["aarch64"][1], jobs)
    nok = 0
    for name in names:
        (xc, xr, xw), (ac, ar, aw) = x86[name], arm[name]
        if ac != "pass":
            bad("node %s" % name, "aarch64: %s: %s" % (ac, ar))
            continue
        if xc != "pass":
            bad("node %s" % name, "x86: %s: %s" % (xc, xr))
            continue
        outs = sorted(f for f in os.listdir(aw) if re.fullmatch(r"out_\d+\.npy", f))
        why = None
        for f in outs:
            why = conf.compare(np.load(os.path.join(aw, f)), np.load(os.path.join(xw, f)))
            why = None if why[0] else "%s: %s" % (f, why[1])
            if why:
                break
        if not outs:
            why = "no outputs kept"
        if why:
            bad("node %s" % name, "aarch64 against x86: " + why)
            continue
        nok += 1
    # each sampled test counts as one check; the passes on one line
    global npass
    npass += nok
    print("ok   node tests: %d of %d sampled tests (every %dth passing one) agree on aarch64"
          % (nok, len(names), NODE_STEP), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", metavar="REGEX", help="only the zoo models and node tests matching REGEX")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if not os.access(RLXC, os.X_OK):
        bad("rlxc", "%s not built (make)" % RLXC)
        print("%d passed, %d failed" % (npass, nfail))
        return 1
    for tool in (CROSS_CC, QEMU[0]):
        if not shutil.which(tool):
            bad(tool, "not installed (bash scripts/setup.sh)")
    if nfail:
        print("%d passed, %d failed" % (npass, nfail))
        return 1
    os.makedirs(WORK, exist_ok=True)
    try:
        libs = {"x86": ("cc", build_runtime("cc", os.path.join(WORK, "rt-x86"), args.jobs), []),
                "aarch64": (CROSS_CC, build_runtime(CROSS_CC, os.path.join(WORK, "rt-aarch64"), args.jobs), QEMU)}
    except RuntimeError as e:
        bad("runtime library", str(e))
        print("%d passed, %d failed" % (npass, nfail))
        return 1
    check_gemm(WORK)
    export_zoo()
    for name in ZOO_MODELS:
        if not args.only or re.search(args.only, name):
            check_zoo(name, libs)
    if not args.only or re.search(args.only, "cnn"):
        check_tool(WORK)
    check_nodes(libs, args.jobs, args.only)
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
