#!/usr/bin/env bash
# run.sh - the GPU target suite: everything a GPU target runs, on this
# machine's GPU stand-in, against the C target.
#
#   tests/gpu/run.sh [TARGET]     (default spirv: lavapipe, Mesa's Vulkan on the CPU;
#                                  cuda: the CPU shim, tests/shim/;
#                                  msl: the MSL shim, tests/shim/msl/build.sh)
#
# spirv: every program runs with the Vulkan validation layer on
# (VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation) and RLX_VK_DEBUG=1, and a
# `rlx_vk: validation:` line anywhere in its output fails its check.
# cuda: the real host (rlx_cuda.c) runs through the stand-in driver
# (tests/shim/cuda_driver.cc, built by tests/shim/build.sh) with the model's
# OUT.cu compiled against the CUDA shim (tests/shim/kernels.sh); the driver
# checks that the PTX the host loads is the one in OUT.c, and a
# `cuda_driver:` line anywhere fails the check. Every program runs twice, its
# threads and blocks in forward and in reverse order (RLX_SHIM_ORDER), and
# the two runs must agree bit for bit (a missing barrier shows there). Where
# NVRTC is missing (no CUDA toolkit), the suite is one "skip" line. Checks:
#   1. the per-kernel differential cases (tests/gpu/cases.py): each built for
#      c and for TARGET, run on the same inputs, the outputs compared under the
#      case's bound (compare.py);
#   2. the same cases again with GPU-assisted validation (out-of-bounds
#      accesses inside kernels, which plain validation misses), the first few;
#      cuda: with the kernels and the driver under ASan and UBSan;
#   3. the zoo (build/zoo, exported by tests/zoo/run.sh) and the bundled
#      examples (shapes.rlxg; make demo's digits classifier on its 450
#      held-out images): TARGET against the C target's default build, and
#      the zoo against PyTorch, the digits as many right as PyTorch;
#   4. spirv: a model whose kernel would run past lavapipe's loop limit is
#      refused by the host (RLX_E_DEV_LOOPS) rather than run with its loops
#      cut short;
#   5. rlxc refuses, in one line naming the file (and the node) with exit
#      status 1 and no output file, an op the C target has and TARGET lacks
#      (GridSample of f64) and a malformed model.
# msl: every program is built through the MSL shim (which type-checks the
# kernels and the Objective-C host first) and runs twice, in the executor's
# forward and reverse orders (threads, blocks, and the dispatches between two
# barriers), which must give the same bits; checks 2 and 4 are Vulkan's, and
# instead
#   6. the spirv target's kernels translated by spirv-cross --msl run on the
#      same shim with spirv's schedule (tests/shim/msl/spvx.py) for a subset
#      of the cases and the zoo, against the msl kernels' outputs.
# One line per check, then `N passed, N failed`; exit 1 if anything failed.
# The ONNX node tests for TARGET are tests/conformance/run_gpu.sh TARGET.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
T=${1:-spirv}
export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation RLX_VK_DEBUG=1
VAL="rlx_vk: validation:"
GPU_AV_CASES=${GPU_AV_CASES:-6}
if [ "$T" = cuda ]; then
    VAL="cuda_driver:"
    if ! out=$("$RLXC" examples/shapes.rlxg --target cuda -o "$TMP/nvrtc_probe" 2>&1); then
        if grep -q "needs NVRTC" <<<"$out"; then
            skip "cuda suite" "skipped: no NVRTC on this machine ($(head -n 1 <<<"$out" | cut -c1-160))"
            finish
        fi
    fi
    if ! out=$(bash tests/shim/build.sh 2>&1 && bash tests/shim/build.sh --asan 2>&1); then
        fail "build the stand-in CUDA driver" "$out"
        finish
    fi
    export RLX_LIBCUDA=$ROOT/build/shim/libcuda.so.1
    ASAN_LIB=$(${CXX:-g++} -print-file-name=libasan.so)
fi

# run_cuda W ORDER OUTDIR ARGS...: runs W/model through the shim in ORDER,
# its outputs into OUTDIR (the -o names of ARGS are relative to it)
run_cuda() {
    local w=$1 order=$2 od=$3; shift 3
    local args=() a
    for a in "$@"; do
        case $a in out_*.npy) args+=("$od/$a") ;; *) args+=("$a") ;; esac
    done
    RLX_SHIM_ORDER=$order RLX_SHIM_KERNELS=$w/kernels.so RLX_SHIM_EXPECT_PTX=$w/model.ptx \
        timeout 600 "$w/model" "${args[@]}" 2>&1
}

# build_target MODEL TARGET BASE: the executable BASE (msl: through the shim)
build_target() {
    case $2 in
        msl) "$RLXC" "$1" --target msl ${XARGS:-} --emit-main -o "$3" && bash tests/shim/msl/build.sh "$3" ;;
        *) "$RLXC" "$1" --target "$2" ${XARGS:-} --build -o "$3" ;;
    esac
}

# build_run DIR TARGET: builds DIR/model.rlxg (or DIR/model.onnx) for TARGET
# (with rlxc's options $XARGS) into DIR/TARGET/model, runs it on DIR/in_K.npy, writes DIR/TARGET/out_K.npy
# (cuda and msl: again in the reverse order, which must give the same bytes);
# sets why on failure
build_run() {
    local d=$1 t=$2 w=$1/$2 m args=() rargs=() k=0 out
    m=$d/model.rlxg
    [ -f "$m" ] || m=$d/model.onnx
    rm -rf "$w" && mkdir -p "$w"
    if ! out=$(build_target "$m" "$t" "$w/model" 2>&1); then
        why="rlxc --target $t: $(head -n 1 <<<"$out")"
        return 1
    fi
    while [ -e "$d/in_$k.npy" ]; do args+=(-i "$d/in_$k.npy"); k=$((k + 1)); done
    if [ "$t" = cuda ]; then
        if ! out=$(bash tests/shim/kernels.sh "$w/model.cu" "$w/kernels.so" 2>&1) ||
            ! out=$($PY tests/shim/ptx_of.py "$w/model.c" "$w/model.ptx" 2>&1); then
            why="cuda shim build: $(head -n 3 <<<"$out")"
            return 1
        fi
        for ((k = 0; k < ${NOUT:-1}; k++)); do args+=(-o "out_$k.npy"); done
        mkdir -p "$w/reverse"
        local order
        for order in forward reverse; do
            local od=$w
            [ $order = reverse ] && od=$w/reverse
            if ! out=$(run_cuda "$w" $order "$od" "${args[@]}"); then
                why="$t run ($order order): $(grep -v "^$VAL" <<<"$out" | head -n 1) $(grep -m1 "^$VAL" <<<"$out")"
                return 1
            fi
            if grep -q "^$VAL" <<<"$out"; then
                why="$t ($order order): $(grep -m1 "^$VAL" <<<"$out" | cut -c1-300)"
                return 1
            fi
        done
        if ! out=$($PY tests/gpu/compare.py --exact "$w" "$w/reverse" 2>&1); then
            why="$t: the forward and reverse thread orders disagree: $out"
            return 1
        fi
        return 0
    fi
    rargs=("${args[@]}")
    for ((k = 0; k < ${NOUT:-1}; k++)); do args+=(-o "$w/out_$k.npy"); rargs+=(-o "$w/rev/out_$k.npy"); done
    if ! out=$(timeout 600 "$w/model" "${args[@]}" 2>&1); then
        why="$t run: $(grep -v "^$VAL" <<<"$out" | head -n 1)"
        return 1
    fi
    if [ "$t" = msl ]; then
        mkdir -p "$w/rev"
        if ! out=$(RLX_SHIM_ORDER=reverse timeout 600 "$w/model" "${rargs[@]}" 2>&1); then
            why="$t run (reverse order): $(head -n 1 <<<"$out")"
            return 1
        fi
        for ((k = 0; k < ${NOUT:-1}; k++)); do
            if ! cmp -s "$w/out_$k.npy" "$w/rev/out_$k.npy"; then
                why="$t: output $k differs between the forward and the reverse order"
                return 1
            fi
        done
    fi
    if grep -q "^$VAL" <<<"$out"; then
        why="$t: $(grep -c "^$VAL" <<<"$out") validation messages: $(grep -m1 "^$VAL" <<<"$out" | cut -c1-200)"
        return 1
    fi
    return 0
}

# the number of outputs a model declares (its .rlxg outputs, or 1 for ONNX zoo models)
nouts() {
    if [ -f "$1/model.rlxg" ]; then $PY -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["outputs"]))' "$1/model.rlxg"
    else echo 1; fi
}

# 1 + 2: the differential cases
C=$TMP/cases
if ! out=$($PY tests/gpu/cases.py "$C" 2>&1); then
    fail "cases.py" "$out"
else
    n=0
    while read -r name; do
        d=$C/$name
        NOUT=$(nouts "$d")
        why=
        if build_run "$d" c && build_run "$d" "$T"; then
            if msg=$($PY tests/gpu/compare.py "$d/c" "$d/$T" "$d/tol.json" 2>&1); then pass "$T $name: $msg"
            else fail "$T $name" "$msg"; fi
        elif [ "$T" = msl ] && grep -q "not supported by target 'msl'" <<<"$why" &&
            [ "$(grep -oE " for [a-z0-9-]+ [a-z0-9-]+" <<<"$why" | sort -u)" = " for dtype f64" ]; then
            # every refused node is refused for f64 alone
            skip "$T $name" "MSL has no double: ${why##*: }"
        else
            fail "$T $name" "$why"
        fi
        n=$((n + 1))
        if [ $n -le "$GPU_AV_CASES" ] && [ -x "$d/$T/model" ] && [ "$T" = cuda ]; then
            args=()
            k=0
            while [ -e "$d/in_$k.npy" ]; do args+=(-i "$d/in_$k.npy"); k=$((k + 1)); done
            if ! out=$(bash tests/shim/kernels.sh "$d/$T/model.cu" "$d/$T/kernels_asan.so" --asan 2>&1); then
                fail "$T $name (ASan)" "kernels: $(head -n 2 <<<"$out")"
            else
                mkdir -p "$d/$T/asan"
                for ((k = 0; k < NOUT; k++)); do args+=(-o "$d/$T/asan/out_$k.npy"); done
                out=$(LD_PRELOAD=$ASAN_LIB ASAN_OPTIONS=detect_leaks=0 RLX_SHIM_ORDER=reverse \
                    RLX_LIBCUDA=$ROOT/build/shim/asan/libcuda.so.1 RLX_SHIM_KERNELS=$d/$T/kernels_asan.so \
                    timeout 600 "$d/$T/model" "${args[@]}" 2>&1)
                rc=$?
                if [ $rc -ne 0 ] || grep -q "ERROR: AddressSanitizer\|runtime error:\|^$VAL" <<<"$out"; then
                    fail "$T $name (ASan, UBSan)" "exit $rc: $(grep -m1 "ERROR\|runtime error\|^$VAL" <<<"$out" || head -n 1 <<<"$out")"
                elif ! msg=$($PY tests/gpu/compare.py --exact "$d/$T" "$d/$T/asan" 2>&1); then
                    fail "$T $name (ASan, UBSan)" "outputs differ from the plain run: $msg"
                else pass "$T $name (ASan, UBSan): clean, same bits"; fi
            fi
        elif [ "$T" = spirv ] && [ $n -le "$GPU_AV_CASES" ] && [ -x "$d/$T/model" ]; then
            args=()
            k=0
            while [ -e "$d/in_$k.npy" ]; do args+=(-i "$d/in_$k.npy"); k=$((k + 1)); done
            out=$(VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT timeout 600 "$d/$T/model" "${args[@]}" 2>&1)
            rc=$?
            if [ $rc -ne 0 ]; then fail "$T $name (GPU-assisted validation)" "exit $rc: $(head -n 1 <<<"$out")"
            elif grep -q "^$VAL" <<<"$out"; then fail "$T $name (GPU-assisted validation)" "$(grep -m1 "^$VAL" <<<"$out")"
            else pass "$T $name (GPU-assisted validation)"; fi
        fi
    done <"$C/cases.txt"
fi

# 3: the zoo and the example
for name in mlp cnn resnet18 mobilenetv2 transformer lstm; do
    d=$TMP/zoo/$name
    z=build/zoo/$name
    if [ ! -f $z/model.onnx ]; then
        fail "$T zoo $name" "not exported (run tests/zoo/run.sh first)"
        continue
    fi
    mkdir -p "$d"
    cp $z/model.onnx $z/in_0.npy "$d/"
    NOUT=1 why= msg= ref=
    if build_run "$d" c && build_run "$d" "$T"; then
        if msg=$($PY tests/gpu/compare.py "$d/c" "$d/$T" /dev/null 2>&1) &&
            ref=$($PY tests/zoo/compare.py $z/expected_0.npy "$d/$T/out_0.npy" 2>&1); then
            pass "$T zoo $name: $msg; against PyTorch $ref"
        else
            fail "$T zoo $name" "$msg $ref"
        fi
    else
        fail "$T zoo $name" "$why"
    fi
done
d=$TMP/example
mkdir -p "$d"
cp examples/shapes.rlxg "$d/model.rlxg"
cp examples/samples/plus.npy "$d/in_0.npy"
NOUT=2 why=
if build_run "$d" c && build_run "$d" "$T"; then
    if msg=$($PY tests/gpu/compare.py "$d/c" "$d/$T" /dev/null 2>&1); then pass "$T example shapes: $msg"
    else fail "$T example shapes" "$msg"; fi
else
    fail "$T example shapes" "$why"
fi
# the digits classifier of make demo on its 450 held-out images: the C
# target's probabilities and digits, and as many right as PyTorch
d=$TMP/digits
mkdir -p "$d"
cp examples/digits/model.onnx "$d/"
cp examples/digits/heldout_pixels.npy "$d/in_0.npy"
NOUT=2 XARGS="--dim batch=450" why= msg= right=
if build_run "$d" c && build_run "$d" "$T"; then
    if msg=$($PY tests/gpu/compare.py "$d/c" "$d/$T" /dev/null 2>&1) &&
        right=$($PY -c "import numpy as n, sys; print((n.load(sys.argv[1]).ravel() == n.load(sys.argv[2]).ravel()).sum())" \
            "$d/$T/out_1.npy" examples/digits/heldout_labels.npy 2>&1) &&
        [ "$right" = "$(cut -d' ' -f1 examples/digits/torch_accuracy.txt)" ]; then
        pass "$T example digits: $msg; $right of 450 right (PyTorch: $(cut -d' ' -f1 examples/digits/torch_accuracy.txt))"
    else fail "$T example digits" "$msg; right: $right"; fi
else
    fail "$T example digits" "$why"
fi
XARGS=

# 6 (msl): spirv-cross's translation of the spirv kernels on the same shim
if [ "$T" = msl ]; then
    for d in $C/gemm_trans_bias $C/conv_strided_dilated_grouped $C/softmax_long_rows $C/layernorm_wide \
        $C/reduce_mean_axes $C/pad_reflect $C/region_mixed_types $C/maxpool_pads_indices $TMP/zoo/cnn $TMP/zoo/mlp \
        $TMP/zoo/transformer $TMP/example; do
        label=${d#$TMP/}
        label=${label#cases/}
        [ -d "$d/msl" ] || { fail "spirv-cross $label" "no msl build to compare with"; continue; }
        m=$d/model.rlxg
        [ -f "$m" ] || m=$d/model.onnx
        args=()
        k=0
        while [ -e "$d/in_$k.npy" ]; do args+=(-i "$d/in_$k.npy"); k=$((k + 1)); done
        nout=$(ls "$d"/msl/out_*.npy | wc -l)
        for ((k = 0; k < nout; k++)); do args+=(-o "$d/spvx/out_$k.npy"); done
        rm -rf "$d/spvx" && mkdir -p "$d/spvx"
        if ! out=$("$RLXC" "$m" --target spirv --emit-main -o "$d/spvx/model" 2>&1 &&
            $PY tests/shim/msl/spvx.py "$d/spvx/model" 2>&1); then
            fail "spirv-cross $label" "$(head -n 1 <<<"$out")"
        elif ! out=$(timeout 600 "$d/spvx/model" "${args[@]}" 2>&1); then
            fail "spirv-cross $label" "run: $(head -n 1 <<<"$out")"
        elif msg=$($PY tests/gpu/compare.py "$d/msl" "$d/spvx" "$d/tol.json" 2>&1); then
            pass "spirv-cross $label: against the msl kernels, ${msg#max abs error vs the C target }"
        else
            fail "spirv-cross $label" "$msg"
        fi
    done
fi

# 4: the loop limit. A softmax over one column of 40000 elements runs three
# passes of 40000 iterations in one invocation (120000 > 65535).
if [ "$T" = spirv ]; then
    d=$TMP/loops
    mkdir -p "$d"
    cat >"$d/model.rlxg" <<'JSON'
{"rlxg": 1, "name": "loops",
 "inputs": [{"name": "x", "dtype": "f32", "shape": [40000, 2]}],
 "outputs": [{"name": "y"}],
 "nodes": [{"name": "sm", "op": "Softmax", "inputs": ["x"], "outputs": ["y"], "attrs": {"axis": 0}}]}
JSON
    $PY -c 'import numpy, sys; numpy.save(sys.argv[1], numpy.ones((40000, 2), numpy.float32))' "$d/in_0.npy"
    if out=$("$RLXC" "$d/model.rlxg" --target "$T" --build -o "$d/model" 2>&1); then
        out=$("$d/model" -i "$d/in_0.npy" 2>&1)
        rc=$?
        if [ $rc -ne 0 ] && grep -q "loop iterations" <<<"$out"; then pass "$T: a kernel past lavapipe's loop limit is refused ($(head -n 1 <<<"$out"))"
        else fail "$T: a kernel past lavapipe's loop limit is refused" "exit $rc: $(head -n 1 <<<"$out")"; fi
    else
        fail "$T: the loop-limit model builds" "$(head -n 1 <<<"$out")"
    fi
fi

# 5: refusals by rlxc. refused NAME MODEL PATTERN: exit 1, one line on stderr
# matching PATTERN, nothing written in the output's (existing, empty) directory.
# (msl: --emit-main, what its builds use, since it refuses --build off macOS)
refused() {
    local out rc how=--build
    [ "$T" = msl ] && how=--emit-main
    mkdir -p "$d/$1"
    out=$("$RLXC" "$2" --target "$T" $how -o "$d/$1/model" 2>&1 >/dev/null)
    rc=$?
    if [ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -qE -- "$3" <<<"$out" && [ -z "$(ls -A "$d/$1")" ]; then
        pass "$T: $1 is refused in one line ($out)"
    else
        fail "$T: $1 is refused in one line, exit 1, no output" "exit $rc: $out"
    fi
}
d=$TMP/refused
mkdir -p "$d"
cat >"$d/gs64.rlxg" <<'JSON'
{"rlxg": 1, "name": "gs64",
 "inputs": [{"name": "x", "dtype": "f64", "shape": [1, 1, 2, 2]}, {"name": "grid", "dtype": "f64", "shape": [1, 2, 2, 2]}],
 "outputs": [{"name": "y"}],
 "nodes": [{"name": "gs", "op": "GridSample", "inputs": ["x", "grid"], "outputs": ["y"]}]}
JSON
if "$RLXC" "$d/gs64.rlxg" -o "$d/gs64_c.c" >/dev/null 2>&1; then pass "c: GridSample of f64 compiles (the control)"
else fail "c: GridSample of f64 compiles (the control)" "$("$RLXC" "$d/gs64.rlxg" -o "$d/gs64_c.c" 2>&1)"; fi
refused gs64 "$d/gs64.rlxg" "^$d/gs64.rlxg: node 'gs' \(GridSample\): not supported by target '$T'"
head -c 150 "$d/gs64.rlxg" >"$d/truncated.rlxg"
refused truncated "$d/truncated.rlxg" "^$d/truncated.rlxg: "
finish
