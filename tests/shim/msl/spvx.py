#!/usr/bin/python3
"""spvx.py BASE - the spirv target's kernels, translated to MSL by spirv-cross,
built to run on the CPU through the MSL shim: the differential partner of the
msl target's own kernels.

BASE.c is what `rlxc --target spirv --emit-main -o BASE` wrote: the schedule
table with each kernel's SPIR-V words (static const uint32_t NAME_kN_T[]).
For each kernel: the words go to BASE.spvx/kN_T.spv, `spirv-cross --msl
--msl-version 20300` translates them (the entry point renamed kN_T), and a
wrapper compiles the translation over the shim inside a namespace of its own
and calls it as one executor body. spirv-cross numbers the buffers itself, so
each kernel parameter is bound by what it is: `constant` the push constants,
`const device` the weights (the GLSL declares them readonly), `device` the
arena, and the thread and threadgroup positions by their attributes. The
program links BASE.c, the stand-in host built with -DRLX_SHIM_VK (host.cc:
the rlx_vk_* functions over the same executor) and librlxrt.a; it writes the
executable BASE. Exits 1 with one line on stderr when a step fails.
"""
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CXX = os.environ.get("CXX", "g++")
CC = os.environ.get("CC", "cc")
OBJ = os.path.join(ROOT, "build", "shim")

BIND = {
    "thread_position_in_threadgroup": "msl_shim::ids(gpu_fiber::thread_id())",
    "threadgroup_position_in_grid": "msl_shim::ids(gpu_fiber::block_id())",
    "threads_per_threadgroup": "msl_shim::ids(gpu_fiber::block_dim())",
    "threadgroups_per_grid": "msl_shim::ids(gpu_fiber::grid_dim())",
    "thread_position_in_grid": "msl_shim::global_id()",
}


def die(msg):
    sys.stderr.write("spvx: %s\n" % msg)
    sys.exit(1)


def run(argv, what):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode:
        out = p.stdout.decode("utf-8", "replace").splitlines()
        lines = [l for l in out if re.search(r"error|undefined|multiple def", l, re.I)]
        die("%s: %s" % (what, (lines or ["exit %d" % p.returncode])[0][:300]))


# spirv-cross's array helper has an operator[] per address space; the shim
# has none (they are all one memory), so those overloads would collide:
# the same helper with one pair of them
UNSAFE_ARRAY = """template<typename T, size_t Num>
struct spvUnsafeArray
{
    T elements[Num ? Num : 1];
    T& operator [] (size_t pos) { return elements[pos]; }
    constexpr const T& operator [] (size_t pos) const { return elements[pos]; }
};"""


def argument(param, kname):
    """The C++ expression that binds one kernel parameter."""
    m = re.fullmatch(r"(.*?)\s*([&*]?)\s*(\w+) \[\[(\w+)(?:\((\d+)\))?\]\]", param.strip())
    if not m:
        die("%s: a parameter spirv-cross wrote that this harness does not know: %s" % (kname, param))
    ty, ref, _, attr, _ = m.groups()
    if attr == "buffer":
        base = re.sub(r"\b(const|device|constant)\b", "", ty).strip()
        if base not in ("void", "float", "uint", "int", "uchar", "ushort"):
            base = "spvx_%s::%s" % (kname, base)   # a block struct of the translation
        deref = "" if ref == "*" else "*"   # aliased bindings come as a void pointer
        if ty.startswith("constant"):
            return "%s(const %s *)(const void *)a->push" % (deref, base)
        if "const" in ty.split():
            return "%s(const %s *)(const void *)a->weights" % (deref, base)
        return "%s(%s *)(void *)a->arena" % (deref, base)
    if attr in BIND:
        return BIND[attr]
    die("%s: an attribute this harness does not bind: %s" % (kname, attr))


def main():
    if len(sys.argv) != 2:
        die("usage: spvx.py BASE")
    base = sys.argv[1]
    name = os.path.basename(base)
    src = open(base + ".c").read()
    work = base + ".spvx"
    os.makedirs(work, exist_ok=True)
    kernels = []
    for m in re.finditer(r"static const uint32_t %s_(k\d+_\w+)\[(\d+)\] = \{(.*?)\};" % re.escape(name), src, re.S):
        kname, n = m.group(1), int(m.group(2))
        words = [int(w, 16) for w in re.findall(r"0x[0-9a-f]{8}", m.group(3))]
        if len(words) != n:
            die("%s: %d words, the array says %d" % (kname, len(words), n))
        spv = os.path.join(work, kname + ".spv")
        with open(spv, "wb") as f:
            f.write(struct.pack("<%dI" % n, *words))
        msl = os.path.join(work, kname + ".msl")
        run(["spirv-cross", "--msl", "--msl-version", "20300", "--rename-entry-point", "main", kname, "comp", spv,
             "--output", msl], "spirv-cross " + kname)
        text = open(msl).read()
        text = re.sub(r"template<typename T, size_t Num>\nstruct spvUnsafeArray\n\{.*?\n\};", UNSAFE_ARRAY, text,
                      flags=re.S)
        with open(msl, "w") as f:
            f.write(text)
        sig = re.search(r"kernel void %s\((.*?)\)\n" % kname, text)
        if not sig:
            die("%s: no kernel signature in spirv-cross's output" % kname)
        args = ", ".join(argument(p, kname) for p in sig.group(1).split(", "))
        cc = os.path.join(work, kname + ".cc")
        with open(cc, "w") as f:
            f.write("// %s.cc - written by tests/shim/msl/spvx.py: spirv-cross's MSL of %s over the shim.\n" % (kname, kname))
            f.write("#include <metal_stdlib>\n#include \"msl_run.h\"\n")
            f.write("namespace spvx_%s {\n#include \"%s.msl\"\n}  // namespace spvx_%s\n" % (kname, kname, kname))
            f.write("extern \"C\" void spvx_body_%s(void *arg) {\n" % kname)
            f.write("    const msl_shim_args *a = (const msl_shim_args *)arg;\n")
            f.write("    spvx_%s::%s(%s);\n}\n" % (kname, kname, args))
        obj = os.path.join(work, kname + ".o")
        run([CXX, "-std=c++14", "-O1", "-ffp-contract=off", "-fsigned-char", "-w", "-I" + HERE, "-I" + work, "-c", cc,
             "-o", obj], "compiling " + kname)
        kernels.append((kname, obj))
    if not kernels and "static const rlx_gpu_kernel" not in src:
        die("%s.c is not the spirv target's" % name)
    table = os.path.join(work, "table.cc")
    with open(table, "w") as f:
        f.write("// table.cc - written by tests/shim/msl/spvx.py: the kernels of %s.c.\n#include <stddef.h>\n#include \"msl_run.h\"\n" % name)
        for k, _ in kernels:
            f.write("extern \"C\" void spvx_body_%s(void *);\n" % k)
        f.write("extern \"C\" const msl_shim_kernel msl_shim_kernels[] = {\n")
        for k, _ in kernels:
            f.write("    {\"%s\", spvx_body_%s},\n" % (k, k))
        f.write("    {NULL, NULL},\n};\n")
    objs = [o for _, o in kernels]
    run([CXX, "-std=c++14", "-I" + HERE, "-c", table, "-o", table + ".o"], "compiling the table")
    run([CC, "-std=c99", "-O1", "-I" + os.path.join(ROOT, "runtime_min"), "-c", base + ".c", "-o", base + ".spvx.o"],
        "compiling %s.c" % name)
    host = os.path.join(OBJ, "msl", "host_vk.o")
    tmp = "%s.tmp%d" % (host, os.getpid())
    os.makedirs(os.path.dirname(host), exist_ok=True)
    if not os.path.exists(host) or os.path.getmtime(host) < os.path.getmtime(os.path.join(HERE, "host.cc")):
        run([CXX, "-std=c++14", "-O1", "-DRLX_SHIM_VK", "-I" + os.path.join(ROOT, "runtime_min"), "-c",
             os.path.join(HERE, "host.cc"), "-o", tmp], "compiling the stand-in host")
        os.replace(tmp, host)
    fiber = os.path.join(OBJ, "gpu_fiber.o")
    if not os.path.exists(fiber):
        tmp = "%s.tmp%d" % (fiber, os.getpid())
        run([CXX, "-std=c++14", "-O2", "-c", os.path.join(ROOT, "tests", "shim", "gpu_fiber.cc"), "-o", tmp],
            "compiling the executor")
        os.replace(tmp, fiber)
    run([CXX, base + ".spvx.o", table + ".o"] + objs + [host, fiber, os.path.join(ROOT, "build", "librlxrt.a"),
         "-Wl,--gc-sections", "-lm", "-lpthread", "-o", base], "linking")


if __name__ == "__main__":
    main()
