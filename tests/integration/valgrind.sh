#!/usr/bin/env bash
# valgrind.sh - no memory errors or definite leaks, in rlxc and in a built model.
#
# Runs rlxc under valgrind (--error-exitcode=99, definite leaks are errors)
# compiling a small graph, the bundled examples, and a bad model (the error
# path longjmps out of the passes and must still free its arena and temp
# files). Then builds the small graph with --build and runs the executable
# under valgrind on an input .npy, and checks its output .npy against numpy;
# and does the same (compile under valgrind, run under valgrind) for a set of
# e2e cases chosen to cover many kernels and dtypes. First, a leaking and an
# overreading program prove that this valgrind setup does report errors.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
command -v valgrind >/dev/null || { fail "valgrind" "not installed (scripts/setup.sh)"; finish; }
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)

# vg NAME WANT_RC CMD...: passes if CMD exits WANT_RC (a number, or "nonzero"
# for a clean failure) under valgrind with no errors (exit 99).
vg() {
    local name=$1 want=$2; shift 2
    local out rc
    out=$("${VG[@]}" "$@" 2>&1)
    rc=$?
    if [ $rc -eq 99 ]; then fail "$name" "valgrind found errors:
$(grep '^==' <<<"$out" | head -40)"
    elif [ "$want" = nonzero ] && [ $rc -ne 0 ] && [ $rc -lt 128 ]; then pass "$name"
    elif [ $rc -eq "${want/nonzero/-1}" ]; then pass "$name"
    else fail "$name" "exit $rc, want $want: $(tail -5 <<<"$out")"; fi
}

cat >"$TMP/mlp.rlxg" <<'JSON'
{"rlxg": 1, "name": "mlp",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [2, 4]}],
 "outputs": [{"name": "y"}, {"name": "z"}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [4, 3], "data": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2]},
             {"name": "b", "dtype": "f32", "shape": [3], "data": [0.5, "-inf", -2]}],
 "nodes": [{"name": "h", "op": "Add", "inputs": ["m", "b"], "outputs": ["h"]},
           {"name": "m", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["m"]},
           {"name": "r", "op": "Relu", "inputs": ["h"], "outputs": ["r"]},
           {"name": "t", "op": "Tanh", "inputs": ["h"], "outputs": ["t"]},
           {"name": "y", "op": "Add", "inputs": ["r", "t"], "outputs": ["y"]},
           {"name": "z", "op": "Sigmoid", "inputs": ["h"], "outputs": ["z"]}]}
JSON
cat >"$TMP/bad.rlxg" <<'JSON'
{"rlxg": 1, "name": "bad",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [2, 4]}],
 "outputs": [{"name": "y"}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [5, 3], "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]}],
 "nodes": [{"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]}]}
JSON

cat >"$TMP/leak.c" <<'EOF_C'
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    char *p = malloc(16);
    (void)argv;
    if (argc > 1) return p[16];   /* read past the block */
    memset(p, 1, 16);
    p = NULL;                     /* definitely lost */
    return 0;
}
EOF_C
if $CC -O0 -g "$TMP/leak.c" -o "$TMP/leak" 2>/dev/null; then
    "${VG[@]}" "$TMP/leak" >/dev/null 2>&1
    rc=$?; [ $rc -eq 99 ] && pass "valgrind reports a definite leak" || fail "valgrind reports a definite leak" "exit $rc"
    "${VG[@]}" "$TMP/leak" overread >/dev/null 2>&1
    rc=$?; [ $rc -eq 99 ] && pass "valgrind reports an overread" || fail "valgrind reports an overread" "exit $rc"
else
    fail "build the leaking program" "$CC failed"
fi

mkdir -p "$TMP/c" "$TMP/bad" "$TMP/bin"
vg "rlxc compiles mlp" 0 "$RLXC" "$TMP/mlp.rlxg" -o "$TMP/c/mlp.c" -n mlp
vg "rlxc compiles mlp --emit-main -v" 0 "$RLXC" "$TMP/mlp.rlxg" -o "$TMP/c/mlp2.c" -n mlp2 --emit-main -v
vg "rlxc rejects a shape mismatch" 1 "$RLXC" "$TMP/bad.rlxg" -o "$TMP/bad/bad.c"
vg "rlxc rejects a missing file" 1 "$RLXC" "$TMP/nonexistent.rlxg" -o "$TMP/bad/none.c"
shopt -s nullglob
for ex in examples/*.rlxg; do
    vg "rlxc compiles $ex" 0 "$RLXC" "$ex" -o "$TMP/c/ex.c" -n ex
done

if out=$("$RLXC" "$TMP/mlp.rlxg" --build -o "$TMP/bin/mlp" -n mlp 2>&1) && [ -x "$TMP/bin/mlp" ]; then
    pass "rlxc --build"
    $PY - "$TMP" <<'PY'
import sys, numpy as np
d = sys.argv[1]
x = np.array([[1, -2, 3, 0.5], [-1, 0.25, 2, -3]], dtype=np.float32)
w = np.arange(1, 13, dtype=np.float32).reshape(4, 3) / np.float32(10)
b = np.array([0.5, -np.inf, -2], dtype=np.float32)
h = x @ w + b
np.save(d + "/x.npy", x)
np.save(d + "/y_want.npy", np.maximum(h, 0) + np.tanh(h))
np.save(d + "/z_want.npy", 1 / (1 + np.exp(-h)))
PY
    vg "model binary runs (-i/-o)" 0 "$TMP/bin/mlp" -i "$TMP/x.npy" -o "$TMP/y.npy" -o "$TMP/z.npy"
    check "model outputs match numpy" $PY -c '
import sys, numpy as np
d = sys.argv[1]
for n in "yz":
    got, want = np.load(d + "/" + n + ".npy"), np.load(d + "/" + n + "_want.npy")
    assert got.dtype == np.float32 and got.shape == want.shape, (n, got.dtype, got.shape)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (n, got, want)
' "$TMP"
    vg "model binary prints outputs" 0 "$TMP/bin/mlp" -i "$TMP/x.npy"
    vg "model binary --bench 3" 0 "$TMP/bin/mlp" -i "$TMP/x.npy" --bench 3
    vg "model binary --threads 2" 0 "$TMP/bin/mlp" -i "$TMP/x.npy" --threads 2
    vg "model binary with missing weights fails cleanly" nonzero "$TMP/bin/mlp" --weights "$TMP/none.weights" -i "$TMP/x.npy"
    vg "model binary with a missing input file fails cleanly" nonzero "$TMP/bin/mlp" -i "$TMP/none.npy"
else
    fail "rlxc --build" "$out"
fi

# e2e cases: rlxc under valgrind, then the built model under valgrind.
e2e_models "$TMP/e2e" cnn attention_masked conv_groups maxpool_ceil_dilations f16_io storage_widths \
    gather_negative_i64 pad_reflect slice_negative_steps split residual_block reduce_max_min cast_misc
for model in "${E2E_MODELS[@]}"; do
    d=$(dirname "$model")
    name=$(basename "$d")
    vg "$name: rlxc" 0 "$RLXC" "$model" -o "$d/gen.c" -n "$name"
    if ! out=$("$RLXC" "$model" --build -o "$d/model" 2>&1); then
        fail "$name: --build" "$out"
        continue
    fi
    args=()
    k=0
    while [ -e "$d/in_$k.npy" ]; do args+=(-i "$d/in_$k.npy"); k=$((k + 1)); done
    k=0
    while [ -e "$d/expected_$k.npy" ]; do args+=(-o "$d/out_$k.npy"); k=$((k + 1)); done
    vg "$name: model run" 0 "$d/model" "${args[@]}"
    [ "$name" = cnn ] && vg "$name: model run --threads 2" 0 "$d/model" "${args[@]}" --threads 2
done
finish
