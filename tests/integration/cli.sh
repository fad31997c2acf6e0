#!/usr/bin/env bash
# cli.sh - rlxc's command line: help, version, usage errors, clean failure.
#
# Each error case must exit 1 with exactly one line on stderr (nothing on
# stdout), and a failed compile must leave no output files (OUT.c, OUT.h,
# OUT.weights, the --build executable) and no temporary files behind: each
# case writes into its own empty directory, which must still be empty after.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

# run CMD...: sets rc, out (stdout), err (stderr).
run() {
    "$@" >"$TMP/stdout" 2>"$TMP/stderr" </dev/null
    rc=$?
    out=$(cat "$TMP/stdout")
    err=$(cat "$TMP/stderr")
}
nlines() { if [ -z "$1" ]; then echo 0; else printf '%s\n' "$1" | wc -l; fi; }

# expect_error NAME PATTERN CMD...: exit 1, one stderr line matching the
# extended regex PATTERN, empty stdout.
expect_error() {
    local name=$1 pattern=$2; shift 2
    run "$@"
    if [ $rc -ne 1 ]; then fail "$name" "exit $rc, want 1; stderr: $err"
    elif [ "$(nlines "$err")" -ne 1 ]; then fail "$name" "want one stderr line, got $(nlines "$err"):
$err"
    elif ! grep -Eq -- "$pattern" <<<"$err"; then fail "$name" "stderr '$err' does not match /$pattern/"
    elif [ -n "$out" ]; then fail "$name" "unexpected stdout: $out"
    else pass "$name"; fi
}
# expect_empty NAME DIR: a failed run left nothing in DIR.
expect_empty() {
    local left
    left=$(ls -A "$2")
    if [ -z "$left" ]; then pass "$1"; else fail "$1" "left behind: $left"; fi
}

cat >"$TMP/good.rlxg" <<'JSON'
{"rlxg": 1, "name": "good",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [1, 4]}],
 "outputs": [{"name": "y"}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [4, 2], "data": [1, 2, 3, 4, 5, 6, 7, 8]}],
 "nodes": [{"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]}]}
JSON
# Inner dimensions disagree (4 vs 5): a user error at node mm.
sed 's/"shape": \[4, 2\], "data": \[1, 2, 3, 4, 5, 6, 7, 8\]/"shape": [5, 2], "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]/' \
    "$TMP/good.rlxg" >"$TMP/shape.rlxg"
printf '{"rlxg": 1, "name": "trunc", "inputs": [' >"$TMP/syntax.rlxg"

# Help and version.
run "$RLXC" --help
if [ $rc -eq 0 ] && grep -qi usage <<<"$out$err" && grep -q -- '-o' <<<"$out$err"; then pass "--help exits 0 with usage"
else fail "--help exits 0 with usage" "exit $rc: $out$err"; fi
run "$RLXC" --version
if [ $rc -eq 0 ] && grep -Eq '[0-9]+\.[0-9]+' <<<"$out"; then pass "--version exits 0 with a version"
else fail "--version exits 0 with a version" "exit $rc: $out$err"; fi
# rlxc targets: the table docs/targets.md carries, from the descriptors.
run "$RLXC" targets
if [ $rc -eq 0 ] && grep -q '^| `spirv` |' <<<"$out" && grep -q '^| Conv |' <<<"$out"; then pass "rlxc targets prints the targets and ops"
else fail "rlxc targets prints the targets and ops" "exit $rc: $err"; fi
if bash "$(dirname "$0")/../../scripts/targets_doc.sh" --check "$RLXC" 2>"$TMP/stderr"; then pass "docs/targets.md matches rlxc targets"
else fail "docs/targets.md matches rlxc targets" "$(cat "$TMP/stderr")"; fi
run "$RLXC"
if [ $rc -eq 1 ] && grep -qi usage <<<"$err"; then pass "no arguments: exit 1 with usage on stderr"
else fail "no arguments: exit 1 with usage on stderr" "exit $rc; stderr: $err"; fi

# Usage errors.
mkdir -p "$TMP/e1" "$TMP/e2" "$TMP/e3" "$TMP/e4" "$TMP/e5" "$TMP/e6" "$TMP/e7"
expect_error "missing model file" "nonexistent\.rlxg" "$RLXC" "$TMP/nonexistent.rlxg" -o "$TMP/e1/out.c"
expect_empty "missing model file leaves nothing" "$TMP/e1"
expect_error "bad flag" "frobnicate" "$RLXC" "$TMP/good.rlxg" --frobnicate -o "$TMP/e2/out.c"
expect_empty "bad flag leaves nothing" "$TMP/e2"
expect_error "unknown target" "vax" "$RLXC" "$TMP/good.rlxg" --target vax -o "$TMP/e3/out.c"
expect_empty "unknown target leaves nothing" "$TMP/e3"
expect_error "missing -o" "." "$RLXC" "$TMP/good.rlxg"
expect_error "-o without a value" "." "$RLXC" "$TMP/good.rlxg" -o
expect_error "output directory missing" "." "$RLXC" "$TMP/good.rlxg" -o "$TMP/no/such/dir/out.c"

# Model errors: the message names the file (and the node, for a graph error).
expect_error "shape mismatch names file and node" "shape\.rlxg: node 'mm' \(MatMul\): " \
    "$RLXC" "$TMP/shape.rlxg" -o "$TMP/e4/out.c"
expect_empty "failed compile leaves no OUT.c/OUT.h/OUT.weights" "$TMP/e4"
expect_error "truncated JSON names file" "syntax\.rlxg" "$RLXC" "$TMP/syntax.rlxg" -o "$TMP/e5/out.c"
expect_empty "JSON error leaves nothing" "$TMP/e5"
expect_error "failed --build" "shape\.rlxg" "$RLXC" "$TMP/shape.rlxg" --build -o "$TMP/e6/out"
expect_empty "failed --build leaves no executable" "$TMP/e6"
expect_error "directory as model" "." "$RLXC" "$TMP/e7" -o "$TMP/e7/out.c"
expect_empty "directory as model leaves nothing" "$TMP/e7"

# Success: three files, API prefix from the output name, or from -n.
mkdir -p "$TMP/ok1" "$TMP/ok2" "$TMP/ok3"
run "$RLXC" "$TMP/good.rlxg" -o "$TMP/ok1/net.c"
if [ $rc -eq 0 ] && [ -z "$err" ]; then pass "compile succeeds quietly"; else fail "compile succeeds quietly" "exit $rc: $err"; fi
if [ "$(cd "$TMP/ok1" && ls | tr '\n' ' ')" = "net.c net.h net.weights " ]; then pass "writes exactly OUT.c OUT.h OUT.weights"
else fail "writes exactly OUT.c OUT.h OUT.weights" "$(ls -A "$TMP/ok1" | tr '\n' ' ')"; fi
if grep -q 'net_run' "$TMP/ok1/net.h" 2>/dev/null && grep -q '#include "net.h"' "$TMP/ok1/net.c" 2>/dev/null; then
    pass "default API name from the output file"
else
    fail "default API name from the output file" "no net_run in net.h or no #include \"net.h\" in net.c"
fi
run "$RLXC" "$TMP/good.rlxg" -o "$TMP/ok2/net.c" -n other_name --target c -v
if [ $rc -eq 0 ] && grep -q 'other_name_run' "$TMP/ok2/net.h" 2>/dev/null && ! grep -q 'net_run' "$TMP/ok2/net.h"; then
    pass "-n sets the API name (with --target c -v)"
else
    fail "-n sets the API name (with --target c -v)" "exit $rc: $err"
fi
run "$RLXC" "$TMP/good.rlxg" --build -o "$TMP/ok3/net"
if [ $rc -eq 0 ] && [ -x "$TMP/ok3/net" ] && [ -f "$TMP/ok3/net.weights" ]; then pass "--build writes the executable and its weights"
else fail "--build writes the executable and its weights" "exit $rc: $err"; fi

# Winograd: a 3x3 convolution wide enough for it runs conv_wino_f32 by
# default; --no-winograd (and -O0) keep im2col + GEMM.
mkdir -p "$TMP/w1" "$TMP/w2" "$TMP/w3"
/usr/bin/python3 - "$TMP/wino.rlxg" <<'PY'
import json, sys
import numpy as np
rng = np.random.default_rng(1)
w = (rng.standard_normal((24, 16, 3, 3)) * 0.2).astype(np.float32)
json.dump({"rlxg": 1, "name": "wino",
           "inputs": [{"name": "x", "dtype": "f32", "shape": [1, 16, 20, 20]}], "outputs": [{"name": "y"}],
           "weights": [{"name": "w", "dtype": "f32", "shape": [24, 16, 3, 3], "data": w.reshape(-1).tolist()}],
           "nodes": [{"name": "c", "op": "Conv", "inputs": ["x", "w"], "outputs": ["y"],
                      "attrs": {"pads": [1, 1, 1, 1]}}]}, open(sys.argv[1], "w"))
PY
run "$RLXC" "$TMP/wino.rlxg" -o "$TMP/w1/net.c"
if [ $rc -eq 0 ] && grep -q 'rk_conv_wino_f32(' "$TMP/w1/net.c"; then pass "a wide 3x3 convolution runs Winograd"
else fail "a wide 3x3 convolution runs Winograd" "exit $rc: $err"; fi
run "$RLXC" "$TMP/wino.rlxg" --no-winograd -o "$TMP/w2/net.c"
if [ $rc -eq 0 ] && ! grep -q 'rk_conv_wino_f32(' "$TMP/w2/net.c" && grep -q 'rk_conv2d_f32(' "$TMP/w2/net.c"; then
    pass "--no-winograd keeps im2col + GEMM"
else fail "--no-winograd keeps im2col + GEMM" "exit $rc: $err"; fi
run "$RLXC" "$TMP/wino.rlxg" -O0 -o "$TMP/w3/net.c"
if [ $rc -eq 0 ] && ! grep -q 'rk_conv_wino_f32(' "$TMP/w3/net.c"; then pass "-O0 never runs Winograd"
else fail "-O0 never runs Winograd" "exit $rc: $err"; fi
finish
