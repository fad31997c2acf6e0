#!/usr/bin/env bash
# precision.sh - --precision, --keep-f32 and --weights end to end.
#
# - Boundary dtypes: a graph whose input and output are bf16 (and one with
#   f16) is fed [1, 2, 3, 4] as halves through the generated API, adds zero
#   and must give back exactly those halves (an earlier compiler read f32
#   bytes as pairs of bf16 and returned [2.0038757, 4.007843, 0, 0]); and an
#   f32 graph under --precision f16 keeps its f32 input and output.
# - --keep-f32 NODE: the node's output is listed as stored f16 in --report
#   without it and is absent from that list with it.
# - The zoo's MLP, CNN and transformer under --precision auto, and the MLP
#   with --weights int8, against PyTorch's outputs (tests/zoo): cosine and
#   the largest error within the bounds docs/precision.md states, the arena
#   at most 0.6x the f32 one, the int8 weights file at most 0.3x; the CNN on
#   spirv (lavapipe, validation layer on, any message fails) likewise, and
#   the LSTM on spirv under f16 and bf16 against the C target's same build;
#   on cuda (the CPU shim, both thread orders, ptxas) and on msl (the MSL
#   shim, tests/shim/msl/build.sh, both thread orders) the CNN and the
#   transformer under bf16 likewise.
# - Determinism (the same bytes twice), warning-free C from gcc and clang.
# - Bad values and targets that cannot: one line, exit 1, no files.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

# ---- boundary dtypes, through the C API ----
half_model() {   # half_model DTYPE
    cat <<JSON
{"rlxg": 1, "name": "h",
 "inputs":  [{"name": "x", "dtype": "$1", "shape": [4]}],
 "outputs": [{"name": "y", "dtype": "$1", "shape": [4]}],
 "weights": [{"name": "z", "dtype": "$1", "shape": [1], "data": [0]}],
 "nodes": [{"name": "add", "op": "Add", "inputs": ["x", "z"], "outputs": ["y"]}]}
JSON
}
cat >"$TMP/feed.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "h.h"
/* [1, 2, 3, 4] as bf16 (0x3f80 0x4000 0x4040 0x4080) or f16 (0x3c00 ...) */
int main(int argc, char **argv) {
    int bf = argc > 2 && !strcmp(argv[2], "bf16");
    uint16_t x[4] = {0x3c00, 0x4000, 0x4200, 0x4400}, y[4] = {0};
    if (bf) { x[0] = 0x3f80; x[1] = 0x4000; x[2] = 0x4040; x[3] = 0x4080; }
    rlx_model *m;
    if (h_init(&m) || h_load_weights(m, argv[1])) return 2;
    const void *in[] = {x};
    void *out[] = {y};
    if (h_run(m, in, out)) return 3;
    h_free(m);
    for (int i = 0; i < 4; i++) printf("%04x%s", y[i], i < 3 ? " " : "\n");
    return memcmp(x, y, sizeof x) != 0;
}
C
for dt in bf16 f16; do
    half_model $dt >"$TMP/$dt.rlxg"
    mkdir -p "$TMP/$dt"
    if "$RLXC" "$TMP/$dt.rlxg" -n h -o "$TMP/$dt/h.c" 2>"$TMP/err" &&
        $CC -std=c99 -O2 -Iruntime_min -I"$TMP/$dt" "$TMP/feed.c" "$TMP/$dt/h.c" "$RT_LIB" -lm -pthread -o "$TMP/$dt/feed" 2>>"$TMP/err" &&
        got=$("$TMP/$dt/feed" "$TMP/$dt/h.weights" $dt); then
        pass "a $dt input and output read back exactly ($got)"
    else
        fail "a $dt input and output read back exactly" "$(cat "$TMP/err") ${got:-}"
    fi
done

# ---- the zoo under auto, and int8 weights ----
ZOO=build/zoo
if [ ! -f $ZOO/mlp/model.onnx ]; then
    $PY tests/zoo/export.py $ZOO >/dev/null 2>&1 || { fail "zoo models" "tests/zoo/export.py failed"; finish; }
fi
# report_field FILE NAME: the number after "NAME:" in a --report text
report_field() { sed -n "s/^$2: *\([0-9]*\).*/\1/p" "$1"; }
compare() {   # compare OUT.npy EXPECTED.npy MIN_COSINE MAX_REL: prints cosine and error, exit 1 out of bounds
    $PY - "$@" <<'PY'
import sys
import numpy as np
a, b = (np.load(p).astype(np.float64).ravel() for p in sys.argv[1:3])
cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
rel = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
print(f"cosine {cos:.6f}, largest error {rel:.2e} of the largest output")
sys.exit(0 if cos >= float(sys.argv[3]) and rel <= float(sys.argv[4]) else 1)
PY
}
for m in mlp cnn transformer; do
    d=$TMP/z_$m
    mkdir -p "$d"
    ok=1
    for p in f32 auto; do
        "$RLXC" $ZOO/$m/model.onnx --precision $p --build -o "$d/$p" --report "$d/$p" >/dev/null 2>"$d/err" &&
            "$d/$p" -i $ZOO/$m/in_0.npy -o "$d/$p.npy" >/dev/null 2>>"$d/err" || ok=0
    done
    if [ $ok = 0 ]; then fail "$m under --precision auto builds and runs" "$(cat "$d/err")"; continue; fi
    if r=$(compare "$d/auto.npy" $ZOO/$m/expected_0.npy 0.999 0.01); then pass "$m auto against PyTorch: $r"
    else fail "$m auto against PyTorch (cosine >= 0.999, error <= 1%)" "$r"; fi
    a32=$(report_field "$d/f32.txt" "arena bytes") a16=$(report_field "$d/auto.txt" "arena bytes")
    if [ -n "$a32" ] && [ -n "$a16" ] && [ $((a16 * 10)) -le $((a32 * 6)) ]; then pass "$m arena $a16 <= 0.6 x $a32"
    else fail "$m arena at most 0.6x" "auto $a16, f32 $a32"; fi
done
d=$TMP/z_int8
mkdir -p "$d"
if "$RLXC" $ZOO/mlp/model.onnx --weights int8 --build -o "$d/m" >/dev/null 2>"$d/err" &&
    "$d/m" -i $ZOO/mlp/in_0.npy -o "$d/m.npy" >/dev/null 2>>"$d/err"; then
    if r=$(compare "$d/m.npy" $ZOO/mlp/expected_0.npy 0.9999 0.02); then pass "mlp int8 weights against PyTorch: $r"
    else fail "mlp int8 weights against PyTorch" "$r"; fi
    w8=$(stat -c %s "$d/m.weights") w32=$(stat -c %s "$TMP/z_mlp/f32.weights")
    if [ $((w8 * 10)) -le $((w32 * 3)) ]; then pass "mlp int8 weights file $w8 <= 0.3 x $w32"
    else fail "int8 weights file at most 0.3x" "$w8 vs $w32"; fi
else
    fail "mlp --weights int8 builds and runs" "$(cat "$d/err")"
fi

# int8 weights too small for a scale of max / 127 (subnormal: 1..8 times
# 2^-149; the scale underflowed to 0, 0 / 0 gave NaN and the outputs were 0):
# the smallest subnormal is their scale, and x @ w = [50, 60] x 2^-149 exactly
d=$TMP/sub_int8
mkdir -p "$d"
cat >"$d/m.rlxg" <<'JSON'
{"rlxg": 1, "name": "sub",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [1, 4]}],
 "outputs": [{"name": "y", "dtype": "f32", "shape": [1, 2]}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [4, 2],
              "data": [1.4e-45, 2.8e-45, 4.2e-45, 5.6e-45, 7.0e-45, 8.4e-45, 9.8e-45, 1.12e-44]}],
 "nodes": [{"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]}]}
JSON
if /usr/bin/python3 -c "import numpy as np; np.save('$d/in.npy', np.array([[1, 2, 3, 4]], np.float32))" &&
    "$RLXC" "$d/m.rlxg" --weights int8 --build -o "$d/m" >/dev/null 2>"$d/err" &&
    "$d/m" -i "$d/in.npy" -o "$d/out.npy" >/dev/null 2>>"$d/err" &&
    got=$(/usr/bin/python3 -c "
import numpy as np, sys
y = np.load('$d/out.npy').astype(np.float64) / 2.0**-149
print(y.ravel().tolist()); sys.exit(0 if y.ravel().tolist() == [50.0, 60.0] else 1)" 2>>"$d/err"); then
    pass "int8 weights of subnormal size: x @ w exact ($got x 2^-149)"
else
    fail "int8 weights of subnormal size: x @ w = [50, 60] x 2^-149" "${got:-} $(cat "$d/err")"
fi

# ---- the spirv target follows the plan (lavapipe, validation layer on) ----
if [ -e /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
    d=$TMP/vk
    mkdir -p "$d"
    if "$RLXC" $ZOO/cnn/model.onnx --target spirv --precision auto --weights f16 --build -o "$d/m" --report "$d/m" \
            >/dev/null 2>"$d/err" &&
        VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation RLX_VK_DEBUG=1 "$d/m" -i $ZOO/cnn/in_0.npy -o "$d/m.npy" \
            >/dev/null 2>"$d/run.err" && [ ! -s "$d/run.err" ]; then
        if r=$(compare "$d/m.npy" $ZOO/cnn/expected_0.npy 0.999 0.01); then pass "spirv cnn auto + f16 weights on lavapipe: $r"
        else fail "spirv cnn auto + f16 weights against PyTorch" "$r"; fi
        a=$(report_field "$d/m.txt" "arena bytes") a32=$(report_field "$TMP/z_cnn/f32.txt" "arena bytes")
        if [ $((a * 10)) -le $((a32 * 6)) ]; then pass "spirv cnn arena $a <= 0.6 x $a32"
        else fail "spirv cnn arena at most 0.6x" "$a vs $a32"; fi
    else
        fail "spirv cnn under --precision auto builds and runs clean" "$(cat "$d/err" "$d/run.err" 2>/dev/null | head -3)"
    fi
    # the LSTM's X and Y in half storage: rnn.kl converts them, and its state
    # is Y's row as stored, as rk_rnn's; against the C target's build of the
    # same precision (the same storage: the halves agree within 1e-3)
    for p in f16 bf16; do
        ok=1
        for t in c spirv; do
            "$RLXC" $ZOO/lstm/model.onnx --target $t --precision $p --build -o "$d/lstm_${t}_$p" >/dev/null 2>"$d/err" &&
                VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation RLX_VK_DEBUG=1 "$d/lstm_${t}_$p" -i $ZOO/lstm/in_0.npy \
                    -o "$d/lstm_${t}_$p.npy" >/dev/null 2>"$d/run.err" && [ ! -s "$d/run.err" ] || ok=0
        done
        if [ $ok = 0 ]; then
            fail "spirv lstm under --precision $p builds and runs clean" "$(cat "$d/err" "$d/run.err" 2>/dev/null | head -3)"
        elif r=$(compare "$d/lstm_spirv_$p.npy" "$d/lstm_c_$p.npy" 0.99999 0.001); then
            pass "spirv lstm under --precision $p against the C target's: $r"
        else
            fail "spirv lstm under --precision $p against the C target's" "$r"
        fi
    done
else
    skip "spirv under --precision auto" "no lavapipe"
fi

# ---- the cuda target follows the plan (the CPU shim, tests/shim/) ----
# The CNN under auto with f16 weights and the transformer under bf16 (its
# LayerNorm and softmax rows in halves, reduced by warp shuffles): each
# module passes ptxas for sm_80, runs through the real host over the
# stand-in driver in forward and in reverse thread order (the same bytes,
# no `cuda_driver:` report), and meets the bounds above against PyTorch.
PTXAS=${CUDA_HOME:-/usr/local/cuda}/bin/ptxas
if ! out=$("$RLXC" examples/shapes.rlxg --target cuda -o "$TMP/nvrtc_probe" 2>&1) && grep -q "needs NVRTC" <<<"$out"; then
    skip "cuda under --precision" "no NVRTC on this machine"
elif ! out=$(bash tests/shim/build.sh 2>&1); then
    fail "build the stand-in CUDA driver" "$out"
else
    for run in "cnn --precision auto --weights f16" "transformer --precision bf16"; do
        set -- $run
        m=$1; shift
        d=$TMP/cu_$m
        mkdir -p "$d"
        if ! "$RLXC" $ZOO/$m/model.onnx --target cuda "$@" --build -o "$d/m" --report "$d/m" >/dev/null 2>"$d/err" ||
            ! bash tests/shim/kernels.sh "$d/m.cu" "$d/kernels.so" 2>>"$d/err" ||
            ! $PY tests/shim/ptx_of.py "$d/m.c" "$d/m.ptx" 2>>"$d/err"; then
            fail "cuda $run builds" "$(head -n 3 "$d/err")"
            continue
        fi
        if [ -x "$PTXAS" ]; then check "cuda $run: ptxas sm_80 accepts the module" "$PTXAS" -arch=sm_80 "$d/m.ptx" -o "$d/m.cubin"
        else skip "cuda $run: ptxas" "no ptxas at $PTXAS"; fi
        ok=1
        for o in forward reverse; do
            RLX_LIBCUDA=$ROOT/build/shim/libcuda.so.1 RLX_SHIM_ORDER=$o RLX_SHIM_KERNELS=$d/kernels.so \
                RLX_SHIM_EXPECT_PTX=$d/m.ptx "$d/m" -i $ZOO/$m/in_0.npy -o "$d/$o.npy" >"$d/$o.out" 2>&1 &&
                ! grep -q "cuda_driver:" "$d/$o.out" || { ok=0; fail "cuda $run runs ($o order)" "$(head -n 3 "$d/$o.out")"; }
        done
        [ $ok = 1 ] || continue
        if ! cmp -s "$d/forward.npy" "$d/reverse.npy"; then fail "cuda $run: two thread orders agree" "outputs differ"
        elif r=$(compare "$d/forward.npy" $ZOO/$m/expected_0.npy 0.999 0.01); then pass "cuda $run against PyTorch: $r"
        else fail "cuda $run against PyTorch (cosine >= 0.999, error <= 1%)" "$r"; fi
        a=$(report_field "$d/m.txt" "arena bytes") a32=$(report_field "$TMP/z_$m/f32.txt" "arena bytes")
        if [ -n "$a" ] && [ -n "$a32" ] && [ $((a * 10)) -le $((a32 * 6)) ]; then pass "cuda $m arena $a <= 0.6 x $a32"
        else fail "cuda $m arena at most 0.6x" "$a vs $a32"; fi
    done
fi

# ---- the msl target follows the plan (the MSL shim: type-checked, run on the CPU) ----
# The same two models, each built through tests/shim/msl/build.sh (the
# kernels type-checked as MSL, the host against the stub headers) and run in
# forward and in reverse thread order, which must give the same bytes.
for run in "cnn --precision auto --weights f16" "transformer --precision bf16"; do
    set -- $run
    m=$1; shift
    d=$TMP/mtl_$m
    mkdir -p "$d"
    if ! "$RLXC" $ZOO/$m/model.onnx --target msl "$@" --emit-main -o "$d/m" --report "$d/m" >/dev/null 2>"$d/err" ||
        ! bash tests/shim/msl/build.sh "$d/m" 2>>"$d/err"; then
        fail "msl $run builds" "$(head -n 3 "$d/err")"
        continue
    fi
    if ! "$d/m" -i $ZOO/$m/in_0.npy -o "$d/forward.npy" >"$d/run.out" 2>&1 ||
        ! RLX_SHIM_ORDER=reverse "$d/m" -i $ZOO/$m/in_0.npy -o "$d/reverse.npy" >>"$d/run.out" 2>&1; then
        fail "msl $run runs" "$(head -n 3 "$d/run.out")"
    elif ! cmp -s "$d/forward.npy" "$d/reverse.npy"; then fail "msl $run: two thread orders agree" "outputs differ"
    elif r=$(compare "$d/forward.npy" $ZOO/$m/expected_0.npy 0.999 0.01); then pass "msl $run against PyTorch: $r"
    else fail "msl $run against PyTorch (cosine >= 0.999, error <= 1%)" "$r"; fi
    a=$(report_field "$d/m.txt" "arena bytes") a32=$(report_field "$TMP/z_$m/f32.txt" "arena bytes")
    if [ -n "$a" ] && [ -n "$a32" ] && [ $((a * 10)) -le $((a32 * 6)) ]; then pass "msl $m arena $a <= 0.6 x $a32"
    else fail "msl $m arena at most 0.6x" "$a vs $a32"; fi
done

# ---- --keep-f32 ----
conv=$($PY -c "
import onnx
m = onnx.load('$ZOO/cnn/model.onnx')
print([n.name for n in m.graph.node if n.op_type == 'Conv'][0])")
out=$($PY -c "
import onnx
m = onnx.load('$ZOO/cnn/model.onnx')
print([n.output[0] for n in m.graph.node if n.op_type == 'Relu'][0])")
"$RLXC" $ZOO/cnn/model.onnx --precision f16 -o "$TMP/k1" --report "$TMP/k1" 2>/dev/null
"$RLXC" $ZOO/cnn/model.onnx --precision f16 --keep-f32 "$conv" -o "$TMP/k2" --report "$TMP/k2" 2>/dev/null
# the conv's output is its fused Relu's (the epilogue takes over the value)
if grep -q "f16 .* $out\$" "$TMP/k1.txt" && ! grep -q "f16 .* $out\$" "$TMP/k2.txt" &&
    [ "$(report_field "$TMP/k2.txt" "arena bytes")" -gt "$(report_field "$TMP/k1.txt" "arena bytes")" ]; then
    pass "--keep-f32 $conv keeps $out in f32"
else
    fail "--keep-f32 keeps the node's output in f32" "$(grep -c "$out" "$TMP/k1.txt" "$TMP/k2.txt")"
fi

# ---- determinism and warnings ----
mkdir -p "$TMP/d1" "$TMP/d2"
"$RLXC" $ZOO/cnn/model.onnx --precision auto --weights int8 -o "$TMP/d1/m" 2>/dev/null
"$RLXC" $ZOO/cnn/model.onnx --precision auto --weights int8 -o "$TMP/d2/m" 2>/dev/null
if cmp -s "$TMP/d1/m.c" "$TMP/d2/m.c" && cmp -s "$TMP/d1/m.weights" "$TMP/d2/m.weights"; then pass "the same bytes twice"
else fail "the same bytes twice" "d1 and d2 differ"; fi
for cc in gcc clang; do
    command -v $cc >/dev/null || { skip "$cc -Werror" "no $cc"; continue; }
    check "$cc -Wall -Wextra -Werror on auto + int8" $cc -std=c99 -Wall -Wextra -Werror -c -Iruntime_min "$TMP/d1/m.c" -o "$TMP/d1/m.$cc.o"
done

# ---- refusals ----
mkdir -p "$TMP/e"
for args in "--precision f8" "--weights int4" "--keep-f32 no_such_node --precision f16" "--target spirv --weights int8" \
    "--target msl --weights int8"; do
    set -- $args
    if out=$("$RLXC" $ZOO/mlp/model.onnx "$@" -o "$TMP/e/out" 2>&1); then fail "rlxc $args refused" "it compiled"
    elif [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then fail "rlxc $args: one line" "$out"
    elif [ -n "$(ls -A "$TMP/e")" ]; then fail "rlxc $args leaves nothing" "$(ls "$TMP/e")"
    else pass "rlxc $args: $out"; fi
done
finish
