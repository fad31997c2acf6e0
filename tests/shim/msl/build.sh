#!/usr/bin/env bash
# build.sh - checks what `rlxc --target msl -o BASE` wrote and builds BASE,
# an executable that runs it on the CPU through the MSL shim.
#
#   tests/shim/msl/build.sh BASE     (BASE.c, BASE.metal, BASE_metal.m from rlxc;
#                                     BASE.c with main, from --emit-main)
#   tests/shim/msl/build.sh --check FILE.metal   (steps 1 and 2 only)
#
# In order, each a failure of its own (one line on stderr, exit 1):
#   1. attributes: every [[...]] of BASE.metal is one MSL has (the C++
#      compiler ignores attributes, so a misspelt one would pass step 2);
#   2. type check: clang++ -std=c++14 (MSL 2.3 is C++14) -fsyntax-only
#      against the shim's metal_stdlib, -Werror, with promotions to double
#      and implicit double-to-float conversions errors (MSL has no double:
#      an unsuffixed literal must not reach a float expression);
#   3. the host: BASE_metal.m with clang -fsyntax-only as Objective-C with
#      ARC against the stub Foundation and Metal headers (stubs/);
#   4. BASE.c with $CC -std=c99 -Wall -Wextra -Werror;
#   5. the executable: BASE.metal over the shim with the list of its
#      kernels (msl_kernels.h), the stand-in host (host.cc, as
#      build/shim/msl/host_NAME.o, NAME the API prefix), the executor
#      (build/shim/gpu_fiber.o) and build/librlxrt.a.
# The shared objects are rebuilt when their sources are newer, through a
# temporary file and a rename, so concurrent builds never see half of one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
check_only=0
if [ "${1:-}" = --check ]; then check_only=1; shift; fi
base=${1:?usage: build.sh [--check FILE.metal | BASE]}
[ $check_only = 1 ] && base=${base%.metal}
name=$(basename "$base")
CC=${CC:-cc}
CXX=${CXX:-g++}
CHECK_CXX=${CHECK_CXX:-clang++}
OPT=${MSL_SHIM_OPT:--O1}
obj=$root/build/shim
# MSL's attributes that rlxc's kernels (and spirv-cross's) may carry
ATTRS='buffer\([0-9]+\)|thread_position_in_threadgroup|threadgroup_position_in_grid|thread_position_in_grid'
ATTRS+='|threads_per_threadgroup|threadgroups_per_grid|thread_index_in_threadgroup|thread_index_in_simdgroup'
ATTRS+='|simdgroup_index_in_threadgroup|threads_per_simdgroup|max_total_threads_per_threadgroup\([0-9]+\)'

die() {
    echo "msl shim: $name: $*" >&2
    exit 1
}
first_error() { grep -m1 -E 'error|Error' <<<"$1" | cut -c1-300; }

if [ $check_only = 1 ]; then [ -f "$base.metal" ] || die "$base.metal is missing"
else for f in "$base.c" "$base.metal" "${base}_metal.m"; do [ -f "$f" ] || die "$f is missing"; done; fi

# 1. attributes
bad=$(grep -oE '\[\[[^]]*\]\]' "$base.metal" | sed -E 's/^\[\[ *//; s/ *\]\]$//' | grep -vxE "$ATTRS" | sort -u | head -n 3)
[ -z "$bad" ] || die "attribute MSL lacks: $(tr '\n' ' ' <<<"$bad")"

# 2. the kernels type-check as MSL (C++14 over the shim)
if ! out=$("$CHECK_CXX" -std=c++14 -fsyntax-only -x c++ -I"$here" -fsigned-char -Wall -Wextra -Werror \
    -Wno-unused-parameter -Wno-unused-function -Wno-unused-variable -Wno-unused-const-variable \
    -Wno-unknown-attributes -Wdouble-promotion \
    -Wimplicit-float-conversion "$base.metal" 2>&1); then
    die "type check: $(first_error "$out")"
fi
[ $check_only = 1 ] && exit 0

# 3. the Objective-C host against the stub headers
if ! out=$(clang -fsyntax-only -x objective-c -fobjc-arc -fobjc-runtime=macosx-11.0 -Wall -Wextra -Werror \
    -I"$here/stubs" -I"$root/runtime_min" "${base}_metal.m" 2>&1); then
    die "Objective-C host: $(first_error "$out")"
fi

# 4. the C host table
if ! out=$("$CC" -std=c99 -Wall -Wextra -Werror -O1 -I"$root/runtime_min" -c "$base.c" -o "$base.shim_c.o" 2>&1); then
    die "$name.c: $(first_error "$out")"
fi

# 5. the executable
# fresh OUT SRC... CMD...: runs CMD (which writes $tmp) when OUT is older than a SRC
fresh() {
    local out=$1 src
    shift
    local srcs=()
    while [ "$1" != -- ]; do srcs+=("$1"); shift; done
    shift
    if [ -f "$out" ]; then
        local stale=0
        for src in "${srcs[@]}"; do [ "$src" -nt "$out" ] && stale=1; done
        [ $stale = 0 ] && return 0
    fi
    mkdir -p "$(dirname "$out")"
    tmp=$out.tmp$$
    if ! msg=$("$@" 2>&1); then
        rm -f "$tmp"
        die "building $(basename "$out"): $(first_error "$msg")"
    fi
    mv -f "$tmp" "$out"
}
fresh "$obj/gpu_fiber.o" "$root/tests/shim/gpu_fiber.cc" "$root/tests/shim/gpu_fiber.h" -- \
    "$CXX" -std=c++14 -O2 -c "$root/tests/shim/gpu_fiber.cc" -o "$obj/gpu_fiber.o.tmp$$"
fresh "$obj/msl/host_$name.o" "$here/host.cc" "$here/msl_run.h" "$root/tests/shim/gpu_fiber.h" \
    "$root/runtime_min/rlx_gpu.h" "$root/runtime_min/rlx_rt.h" -- \
    "$CXX" -std=c++14 -O1 -Wall -Wextra -Werror -DRLX_MTL_PREFIX="$name" -I"$root/runtime_min" -c "$here/host.cc" \
    -o "$obj/msl/host_$name.o.tmp$$"

# the kernels: the .metal file, then its table
tu=$base.shim_kernels.cc
{
    echo "// $name.shim_kernels.cc - written by tests/shim/msl/build.sh: $name.metal over the MSL shim."
    echo "#include \"$(basename "$base").metal\""
    echo "#include \"msl_kernels.h\""
    echo "extern \"C\" const msl_shim_kernel msl_shim_kernels[] = {"
    sed -nE 's/^#define KNAME ([A-Za-z_][A-Za-z0-9_]*)$/    RLX_MSL_KERNEL(\1)/p' "$base.metal"
    sed -nE 's/^kernel void (rlx_msl_[0-9a-f]+)\(\) \{\}$/    RLX_MSL_FINGERPRINT(\1)/p' "$base.metal"
    echo "    {NULL, NULL},"
    echo "};"
} >"$tu"
if ! out=$("$CXX" -std=c++14 "$OPT" -ffp-contract=off -fsigned-char -w -I"$here" -I"$(dirname "$base")" -c "$tu" \
    -o "$base.shim_kernels.o" 2>&1); then
    die "compiling the kernels: $(first_error "$out")"
fi
if ! out=$("$CXX" "$base.shim_c.o" "$base.shim_kernels.o" "$obj/msl/host_$name.o" "$obj/gpu_fiber.o" \
    "$root/build/librlxrt.a" -Wl,--gc-sections -lm -lpthread -o "$base" 2>&1); then
    die "linking: $(first_error "$out")"
fi
