#!/usr/bin/python3
"""map_sizes.py - what a bare-metal build's bytes are, from its GNU ld map.

    map_sizes.py NAME.map NAME.c [--core-max BYTES] [--header]

Reads the linker map of an ELF that examples/baremetal/build.sh linked
(after --gc-sections: only what is kept) and prints one markdown table row
for docs/edge.md: text (code and const data in flash), data (initialized
RAM, its initial values also in flash) and bss, in bytes (as
arm-none-eabi-size counts them), then the flash
bytes split by where they come from:

  runtime core   rlx_*.o (rlx_rt.o: status codes, the model and its arena,
                 weights loading and checking, half-float conversion;
                 rlx_isa.o and rlx_pool.o: the instruction-set name and the
                 thread pool's single-thread stubs), as rlxc --report counts it
  kernels        rk_*.o, the kernels this model calls
  model          the generated NAME.o: the schedule and the info tables
  libc/libm      newlib-nano, libm and libgcc members (memcpy, malloc, expf, ...)
  weights        NAME_weights.o, the const weights image
  (and the rest: main.o, startup.o and input.o, the example's own code)

and the RAM the model takes at run time from the heap (NAME_init's one
malloc of the arena, plus the kernels' scratch), from NAME.c's info table.
--header prints the table's header instead; --core-max exits 1 when the
runtime core's flash bytes exceed BYTES.
"""
import re
import sys

HEADER = ("| model | text | data | bss | runtime core | kernels | model code | libc/libm | weights | arena | scratch |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def category(path, name):
    obj = path.split("/")[-1]
    if "(" in path or obj.endswith(".a"):
        return "libc"
    if obj.startswith("rlx_"):
        return "core"
    if obj.startswith("rk_"):
        return "kernels"
    if obj == name + "_weights.o":
        return "weights"
    if obj == name + ".o":
        return "model"
    return "app"


def parse_map(path, name):
    """{(region, category): bytes}; region text, data or bss."""
    sizes = {}
    with open(path) as f:
        lines = f.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("Linker script and memory map"))
    region = None
    pending = None
    for line in lines[start + 1:]:
        m = re.match(r"^(\.\S+)\s", line + " ")
        if m:   # an output section: its whole size (with alignment fill) is the region's total
            sec = m.group(1)
            region = "data" if sec == ".data" else "bss" if sec == ".bss" else \
                "text" if sec in (".text", ".ARM.exidx") else None
            pending = None
            t = re.match(r"^\S+\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
            if region and t:
                sizes[(region, "total")] = sizes.get((region, "total"), 0) + int(t.group(1), 16)
            continue
        if region is None:
            continue
        m = re.match(r"^ (\.\S+|COMMON)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m:
            size, obj = int(m.group(3), 16), m.group(4)
        elif pending is not None:
            m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
            pending = None
            if not m:
                continue
            size, obj = int(m.group(2), 16), m.group(3)
        else:
            if re.match(r"^ (\.\S+|COMMON)\s*$", line):
                pending = line
            continue
        key = (region, category(obj, name))
        sizes[key] = sizes.get(key, 0) + size
    return sizes


def info_field(csrc, field):
    with open(csrc) as f:
        m = re.search(r"\.%s = (\d+)," % field, f.read())
    return int(m.group(1)) if m else 0


def main(argv):
    if "--header" in argv:
        print(HEADER)
        return 0
    if len(argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    mapfile, csrc = argv[1], argv[2]
    name = csrc.split("/")[-1][:-2]
    core_max = int(argv[argv.index("--core-max") + 1]) if "--core-max" in argv else None
    s = parse_map(mapfile, name)
    region = lambda r: s.get((r, "total"), 0)
    flash = lambda c: s.get(("text", c), 0)
    row = [name, region("text"), region("data"), region("bss"), flash("core"), flash("kernels"), flash("model"),
           flash("libc"), flash("weights"), info_field(csrc, "arena_bytes"), info_field(csrc, "scratch_per_thread")]
    print("| " + " | ".join(str(x) for x in row) + " |")
    if core_max is not None and flash("core") > core_max:
        print("map_sizes: the runtime core is %d bytes of flash, over %d" % (flash("core"), core_max), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
