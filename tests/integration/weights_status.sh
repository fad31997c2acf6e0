#!/usr/bin/env bash
# weights_status.sh - the generated API's status codes for good and bad weights.
#
# Compiles a tiny pure-JSON model (y = x * w + b) with rlxc, makes damaged
# copies of its weights file (data cut, header cut, version changed to the
# previous format's 1, magic changed, one bit of tensor data flipped) plus
# the weights of a second model that differs only in its weight values,
# then builds weights_status.c against the generated code and the runtime
# library (build/librlxrt.a) with gcc and with clang; that program checks
# each status (NOFILE, TRUNCATED, VERSION, MODEL, MAGIC, CHECKSUM, STATE, OK)
# and the hand-computed result.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

model() {   # model W0 W1 W2 B
    cat <<JSON
{"rlxg": 1, "name": "tiny",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
 "outputs": [{"name": "y", "dtype": "f32", "shape": [2, 3]}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [3], "data": [$1, $2, $3]},
             {"name": "b", "dtype": "f32", "shape": [1], "data": [$4]}],
 "nodes": [{"name": "add", "op": "Add", "inputs": ["xw", "b"], "outputs": ["y"]},
           {"name": "mul", "op": "Mul", "inputs": ["x", "w"], "outputs": ["xw"]}]}
JSON
}
mkdir -p "$TMP/a" "$TMP/b"
model 0.5 -2 4 0.25 >"$TMP/m.rlxg"
model 1 1 1 0.25 >"$TMP/other.rlxg"

check "compile tiny" "$RLXC" "$TMP/m.rlxg" -o "$TMP/a/m.c" -n tiny
check "compile other model" "$RLXC" "$TMP/other.rlxg" -o "$TMP/b/m.c" -n tiny
for f in "$TMP/a/m.c" "$TMP/a/m.h" "$TMP/a/m.weights" "$TMP/b/m.weights"; do
    [ -s "$f" ] || { fail "outputs written" "$f missing or empty"; finish; }
done
pass "outputs written"

W=$TMP/a/m.weights
size=$(stat -c %s "$W")
head -c $((size - 4)) "$W" >"$TMP/truncated.weights"
head -c 10 "$W" >"$TMP/header_cut.weights"
cp "$W" "$TMP/badver.weights"
printf '\x01' | dd of="$TMP/badver.weights" bs=1 seek=4 conv=notrunc status=none
# bit 3 of the second byte of w[1] (-2.0f): data offset 64, w at 0, element 1 at 4
$PY -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[64 + 5] ^= 0x08; open(sys.argv[2], 'wb').write(b)" \
    "$W" "$TMP/flipped.weights"
if cmp -s "$W" "$TMP/flipped.weights"; then fail "bit flipped" "the copy is unchanged"; else pass "bit flipped"; fi
cp "$W" "$TMP/badmagic.weights"
printf 'X' | dd of="$TMP/badmagic.weights" bs=1 seek=0 conv=notrunc status=none
if cmp -s "$W" "$TMP/b/m.weights"; then
    fail "other model's weights differ" "identical weights files for different weight values"
else
    pass "other model's weights differ"
fi

for cc in gcc clang; do
    command -v $cc >/dev/null || { fail "build with $cc" "$cc not installed"; continue; }
    exe=$TMP/ws_$cc
    if out=$($cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O1 \
            -I"$TMP/a" -Iruntime_min tests/integration/weights_status.c "$TMP/a/m.c" \
            "$RT_LIB" -o "$exe" -lm -lpthread 2>&1); then
        pass "build with $cc"
    else
        fail "build with $cc" "$out"
        continue
    fi
    out=$("$exe" "$W" "$TMP/truncated.weights" "$TMP/header_cut.weights" "$TMP/badver.weights" \
        "$TMP/b/m.weights" "$TMP/badmagic.weights" "$TMP/flipped.weights" 2>&1)
    rc=$?
    while IFS= read -r line; do
        case $line in
            "ok   "*) pass "$cc: ${line#ok   }" ;;
            "FAIL "*) rest=${line#FAIL }; fail "$cc: ${rest%%: *}" "${rest#*: }" ;;
            *) echo "$line" ;;
        esac
    done <<<"$out"
    if [ $rc -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; then
        fail "$cc: test program exit" "exit $rc without a failed check (crash?)"
    fi
done
finish
