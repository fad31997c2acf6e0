#!/usr/bin/env bash
# run.sh - the msl target's checks that need no C-target reference: the MSL
# shim itself, the stub-header check of the Objective-C host, and what rlxc
# does for --target msl around the kernels. The kernels' results against the
# C target are tests/gpu/run.sh msl; the node tests tests/conformance/run_gpu.sh msl.
#
#   1. the shim's own tests (checks/test_shim.cc over checks/kernels.metal):
#      threadgroup memory and barriers, a race two orders tell apart, half
#      rounding, barrier divergence; built with g++ and run;
#   2. the type check refuses what MSL lacks: double, erf and expm1 (libm
#      functions MSL does not have), an unsuffixed literal in a float
#      expression, a long double promotion, an attribute MSL does not have;
#      and accepts checks/kernels.metal;
#   3. the host lib/codegen_msl/metal_host.m passes the stub-header check,
#      and a misspelt selector or a missing argument label fails it;
#   4. rlxc: an f64 model is refused naming the node, --build is refused,
#      both with one line, exit 1 and no files; two compiles give the same
#      bytes in every file;
#   5. the bundled example through the stand-in host: a source embedded in
#      OUT.c that is not the compiled OUT.metal is refused (RLX_E_MODEL);
#      with rlxc's barrier flags the two dispatch orders agree, with the
#      flags cleared they differ (the shim runs the dispatches between two
#      barriers in reverse in the second order, as Metal may run them in
#      any order);
#   6. the runtime files docs/targets.md lists for a macOS build
#      (rlx_rt.c rlx_pool.c rlx_isa.c rlx_gpu.c, rlx_main.c rlx_npy.c for
#      --emit-main) link with a model and its host, without librlxrt.a;
#   7. simdgroups: the zoo's transformer (softmax and LayerNorm rows) has a
#      threadgroup-memory variant NAME_tg of each kernel that shuffles, runs
#      against PyTorch with simdgroups of 32 (the shuffles) and of 64 and 16
#      (RLX_MSL_SIMD_WIDTH: the variants, as the Metal host picks them on a
#      GPU whose SIMD width is not 32); with the variants taken out of the
#      library, width 64 fails at init and width 32 still runs.
source "$(dirname "$0")/../../tools/testlib.sh"
need_rlxc
S=tests/shim/msl
CXX=${CXX:-g++}

# 1. the shim's own tests
if out=$("$CXX" -std=c++14 -O1 -fsigned-char -Wall -Wextra -Werror -Wno-unused-parameter -Wno-attributes -I$S \
    -I$S/checks $S/checks/test_shim.cc tests/shim/gpu_fiber.cc -o "$TMP/test_shim" 2>&1); then
    out=$("$TMP/test_shim" 2>&1)
    rc=$?
    while read -r line; do
        case $line in
            "ok   "*) pass "shim: ${line#ok   }" ;;
            "FAIL "*) fail "shim: ${line#FAIL }" "$(grep '^     ' <<<"$out" | head -n 3)" ;;
        esac
    done <<<"$out"
    grep -Eq '^[0-9]+ passed, 0 failed$' <<<"$out" && [ $rc -eq 0 ] || fail "shim tests" "exit $rc: $(tail -n 1 <<<"$out")"
else
    fail "build the shim's tests" "$(head -n 3 <<<"$out")"
fi

# 2. the type check
check "the type check accepts checks/kernels.metal" bash $S/build.sh --check $S/checks/kernels.metal
# refused NAME ATTR BODY: a kernel whose body (or thread id attribute) MSL refuses
refused() {
    local name=$1 attr=$2 body=$3
    cat >"$TMP/$name.metal" <<EOF
#include <metal_stdlib>
using namespace metal;
kernel void k(device float *y [[buffer(0)]], uint3 lid [[$attr]]) {
    float x = y[lid.x];
    $body
}
EOF
    if out=$(bash $S/build.sh --check "$TMP/$name.metal" 2>&1); then fail "the type check refuses $name" "accepted"
    else pass "the type check refuses $name ($(sed 's/.*error: //' <<<"$out" | cut -c1-80))"; fi
}
T=thread_position_in_threadgroup
refused double $T "double d = x; y[lid.x] = (float)d;"
refused erf $T "y[lid.x] = erf(x);"
refused expm1 $T "y[lid.x] = expm1(x);"
refused "an unsuffixed literal" $T "y[lid.x] = x * 0.5;"
refused "a long double" $T "y[lid.x] = (float)(1.0L * x);"
refused "a misspelt attribute" thread_position_in_threadgrop "y[lid.x] = x;"

# 3. the host against the stub headers
objc() { clang -fsyntax-only -x objective-c -fobjc-arc -fobjc-runtime=macosx-11.0 -Wall -Wextra -Werror -I$S/stubs \
    -Iruntime_min "$@"; }
check "metal_host.m passes the stub-header check" objc lib/codegen_msl/metal_host.m
sed 's/\[enc endEncoding\]/[enc endEncodin]/' lib/codegen_msl/metal_host.m >"$TMP/misspelt.m"
sed 's/\[enc setBuffer:h.arena offset:0 atIndex:0\]/[enc setBuffer:h.arena atIndex:0]/' lib/codegen_msl/metal_host.m \
    >"$TMP/label.m"
for bad in misspelt label; do
    if cmp -s lib/codegen_msl/metal_host.m "$TMP/$bad.m"; then fail "the stub check refuses a $bad host" "sed changed nothing"
    elif out=$(objc -iquote lib/codegen_msl "$TMP/$bad.m" 2>&1); then fail "the stub check refuses a $bad host" "accepted"
    else pass "the stub check refuses a $bad host ($(grep -m1 -o 'error: .*' <<<"$out" | cut -c8-80))"; fi
done

# 4. rlxc
cat >"$TMP/f64.rlxg" <<'JSON'
{"rlxg": 1, "name": "f64",
 "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
 "outputs": [{"name": "y"}],
 "nodes": [{"name": "to_double", "op": "Cast", "inputs": ["x"], "outputs": ["d"], "attrs": {"to": "f64"}},
           {"name": "twice", "op": "Add", "inputs": ["d", "d"], "outputs": ["y"]}]}
JSON
# refuses NAME PATTERN ARGS...: one stderr line matching PATTERN, exit 1, nothing written
refuses() {
    local name=$1 pattern=$2
    shift 2
    rm -rf "$TMP/out" && mkdir -p "$TMP/out"
    local err rc
    err=$("$RLXC" "$@" 2>&1 >/dev/null)
    rc=$?
    if [ $rc -ne 1 ]; then fail "$name" "exit $rc: $err"
    elif [ "$(wc -l <<<"$err")" -ne 1 ] || ! grep -Eq -- "$pattern" <<<"$err"; then fail "$name" "stderr: $err"
    elif [ -n "$(ls -A "$TMP/out")" ]; then fail "$name" "left $(ls "$TMP/out" | tr '\n' ' ')"
    else pass "$name ($err)"; fi
}
refuses "f64 is refused naming the nodes" \
    "f64\.rlxg: 2 nodes not supported by target 'msl'.*Cast for dtype f64 \(node 'to_double'\).*Add for dtype f64 \(node 'twice'\)" \
    "$TMP/f64.rlxg" --target msl -o "$TMP/out/m"
refuses "--build is refused for msl" "^rlxc: --build: target 'msl' is built on macOS" \
    examples/shapes.rlxg --target msl --build -o "$TMP/out/m"
mkdir -p "$TMP/d1" "$TMP/d2"
if "$RLXC" build/zoo/mobilenetv2/model.onnx --target msl -o "$TMP/d1/model" 2>/dev/null &&
    "$RLXC" build/zoo/mobilenetv2/model.onnx --target msl -o "$TMP/d2/model" 2>/dev/null; then
    if diff -r "$TMP/d1" "$TMP/d2" >/dev/null; then pass "two compiles of MobileNetV2 give the same bytes ($(ls "$TMP/d1" | tr '\n' ' '))"
    else fail "two compiles give the same bytes" "$(diff -rq "$TMP/d1" "$TMP/d2" | head -n 2)"; fi
else
    fail "two compiles give the same bytes" "MobileNetV2 does not compile for msl (run tests/zoo/run.sh first?)"
fi
rm -rf "$TMP/d1" "$TMP/d2"

# 5. the example through the stand-in host
E=$TMP/ex
mkdir -p "$E"
run_example() {   # run_example BASE ORDER OUT_PREFIX: runs BASE on plus.npy; prints its stderr
    RLX_SHIM_ORDER=$2 "$1" --weights "$E/model.weights" -i examples/samples/plus.npy -o "$3_0.npy" -o "$3_1.npy" 2>&1
}
if "$RLXC" examples/shapes.rlxg --target msl --emit-main -o "$E/model" && bash $S/build.sh "$E/model"; then
    run_example "$E/model" forward "$E/f" >/dev/null && run_example "$E/model" reverse "$E/r" >/dev/null
    if cmp -s "$E/f_0.npy" "$E/r_0.npy" && cmp -s "$E/f_1.npy" "$E/r_1.npy"; then pass "the example gives the same bits in both orders"
    else fail "the example gives the same bits in both orders" "outputs differ"; fi
    # the embedded source changed by one character (in a comment): not the compiled library
    sed 's|^    "// model.metal - generated by rlxc|    "// model.metal - generated by rlxC|' "$E/model.c" >"$E/other.c"
    cp "$E/model.metal" "$E/other.metal"
    cp "$E/model_metal.m" "$E/other_metal.m"
    sed -i 's/model_mtl_/other_mtl_/g' "$E/other.c"
    if cmp -s "$E/model.c" "$E/other.c"; then fail "a library that is not the embedded source is refused" "sed changed nothing"
    elif ! bash $S/build.sh "$E/other" 2>"$TMP/err"; then fail "a library that is not the embedded source is refused" "$(cat "$TMP/err")"
    else
        out=$(run_example "$E/other" forward "$E/o")
        if [ $? -ne 0 ] && grep -q "another model" <<<"$out"; then pass "a library that is not the embedded source is refused ($out)"
        else fail "a library that is not the embedded source is refused" "$out"; fi
    fi
    # the dispatches' barrier flags cleared: the second order runs them backwards
    sed -E 's/^(    \{[0-9]+, \{[0-9]+, [0-9]+, [0-9]+\}, [0-9]+, \{[0-9, ]+\}), 1\},$/\1, 0},/' "$E/model.c" >"$E/nob.c"
    sed -i 's/model_mtl_/nob_mtl_/g' "$E/nob.c"
    cp "$E/model.metal" "$E/nob.metal"
    cp "$E/model_metal.m" "$E/nob_metal.m"
    if [ "$(grep -cE '^    \{[0-9]+, \{.*\}, 0\},$' "$E/nob.c")" -le "$(grep -cE '^    \{[0-9]+, \{.*\}, 0\},$' "$E/model.c")" ]; then
        fail "clearing the barrier flags shows" "sed cleared no flag"
    elif bash $S/build.sh "$E/nob" 2>"$TMP/err"; then
        run_example "$E/nob" forward "$E/nf" >/dev/null
        run_example "$E/nob" reverse "$E/nr" >/dev/null
        if cmp -s "$E/nf_1.npy" "$E/f_1.npy" && ! cmp -s "$E/nr_1.npy" "$E/f_1.npy"; then
            pass "without the barrier flags the reversed dispatch order gives another result"
        else fail "without the barrier flags the reversed dispatch order gives another result" "it does not"; fi
    else fail "clearing the barrier flags shows" "$(cat "$TMP/err")"; fi
else
    fail "the example builds for the shim" "see above"
fi

# 6. the runtime files a macOS build needs, alone
objs=()
for f in rlx_rt rlx_pool rlx_isa rlx_gpu rlx_main rlx_npy; do
    "$CC" -std=c99 -O1 -Iruntime_min -c runtime_min/$f.c -o "$TMP/rt_$f.o" && objs+=("$TMP/rt_$f.o")
done
if [ -x "$E/model" ] && "$CXX" "$E/model.shim_c.o" "$E/model.shim_kernels.o" build/shim/msl/host_model.o \
    build/shim/gpu_fiber.o "${objs[@]}" -lm -lpthread -o "$TMP/minimal" 2>"$TMP/err" &&
    "$TMP/minimal" --weights "$E/model.weights" -i examples/samples/plus.npy -o "$TMP/m_0.npy" -o "$TMP/m_1.npy" &&
    cmp -s "$TMP/m_1.npy" "$E/f_1.npy"; then
    pass "a model and its host link with rlx_rt.c rlx_pool.c rlx_isa.c rlx_gpu.c rlx_main.c rlx_npy.c alone"
else
    fail "a model and its host link with the runtime files docs/targets.md lists" "$(head -n 2 "$TMP/err")"
fi

# 7. simdgroups and their threadgroup-memory variants
Z=build/zoo/transformer
W=$TMP/sg
mkdir -p "$W"
if "$RLXC" $Z/model.onnx --target msl --emit-main -o "$W/model" 2>"$TMP/err" && bash $S/build.sh "$W/model" 2>"$TMP/err"; then
    nsg=$(grep -c 'simd_shuffle_xor(v, ushort(m))$' "$W/model.metal")
    nshuf=$(grep -c '^#define SG_REDUCE 1$' "$W/model.metal")
    ntg=$(grep -cE '^#define KNAME k[0-9]+_[a-z_]+_tg$' "$W/model.metal")
    if [ "$nsg" -eq 1 ] && [ "$nshuf" -ge 2 ] && [ "$ntg" -eq "$nshuf" ]; then
        pass "the transformer's $nshuf kernels that shuffle each have a _tg variant"
    else fail "each kernel that shuffles has a _tg variant" "prelude $nsg, SG_REDUCE $nshuf, _tg $ntg"; fi
    for w in 32 64 16; do
        if out=$(RLX_MSL_SIMD_WIDTH=$w "$W/model" -i $Z/in_0.npy -o "$W/out_$w.npy" 2>&1) &&
            msg=$($PY tests/zoo/compare.py $Z/expected_0.npy "$W/out_$w.npy" 2>&1); then
            pass "simdgroups of $w: against PyTorch $msg"
        else fail "simdgroups of $w against PyTorch" "$out ${msg:-}"; fi
    done
    # the library without the variants (the embedded source, and so the fingerprint, unchanged)
    sed -E 's/^#define KNAME (k[0-9]+_[a-z_]+)_tg$/#define KNAME \1_gone/' "$W/model.metal" >"$W/no_tg.metal"
    mv "$W/no_tg.metal" "$W/model.metal"
    if bash $S/build.sh "$W/model" 2>"$TMP/err"; then
        RLX_MSL_SIMD_WIDTH=64 "$W/model" -i $Z/in_0.npy -o "$W/gone_64.npy" >"$TMP/out64" 2>&1
        rc64=$?
        RLX_MSL_SIMD_WIDTH=32 "$W/model" -i $Z/in_0.npy -o "$W/gone_32.npy" >/dev/null 2>&1
        rc32=$?
        if [ $rc64 -ne 0 ] && [ $rc32 -eq 0 ] && cmp -s "$W/gone_32.npy" "$W/out_32.npy"; then
            pass "without the variants width 64 fails ($(head -c 100 "$TMP/out64")) and width 32 runs the shuffles"
        else fail "without the variants width 64 fails and width 32 runs" "exit $rc64 / $rc32"; fi
    else fail "the library without the variants builds" "$(head -n 2 "$TMP/err")"; fi
else
    fail "the transformer builds for the shim" "$(head -n 2 "$TMP/err")"
fi
finish
