#!/usr/bin/env bash
# limits.sh - compile-time resource limits on models that are valid but
# hostile, and the flags that move the limits (docs/robustness.md).
#
# The malformed suites hold the models a limit refuses; these are models
# that must compile, quickly, because the compiler leaves the expensive
# part to run time: a MaxPool of a constant with 4e12 steps (folding it
# would take hours; fold.c's work budget leaves it to the generated code),
# and a ConstantOfShape of 2^40 elements (4 TiB: never folded, the
# arena says so and --arena-limit refuses it). Each compile must finish in
# 10 s and 1 GB (GNU time). Then --max-nodes and --memory-limit: a graph
# over the node limit compiles with it raised, a small limit refuses an
# ordinary model in one line, 0 lifts it, and bad values are flag errors.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

# within NAME CMD...: CMD succeeds in 10 s and 1 GB
within() {
    local name=$1; shift
    local out status
    out=$(/usr/bin/time -o "$TMP/usage" -f '%e %M' timeout 60 "$@" 2>&1)
    status=$?
    if [ "$status" -ne 0 ]; then
        fail "$name" "exit $status: $(head -c 300 <<<"$out")"
        return
    fi
    local secs kb
    read -r secs kb < <(tail -n 1 "$TMP/usage")
    if awk -v s="$secs" 'BEGIN { exit !(s > 10) }'; then fail "$name" "took $secs s"
    elif [ "$kb" -gt $((1024 * 1024)) ]; then fail "$name" "used $((kb / 1024)) MB"
    else pass "$name ($secs s, $((kb / 1024)) MB)"; fi
}

# one_line NAME WANT CMD...: CMD exits 1 with one stderr line containing WANT
one_line() {
    local name=$1 want=$2; shift 2
    local err=$TMP/err status
    "$@" >/dev/null 2>"$err"
    status=$?
    if [ "$status" -ne 1 ]; then fail "$name" "exit $status, want 1: $(head -c 300 "$err")"
    elif [ "$(wc -l <"$err")" -ne 1 ]; then fail "$name" "not one line: $(head -c 300 "$err" | tr '\n' '|')"
    elif ! grep -qF -- "$want" "$err"; then fail "$name" "message lacks '$want': $(cat "$err")"
    else pass "$name"; fi
}

[ -x /usr/bin/time ] || { fail "GNU time" "/usr/bin/time missing (package time)"; finish; }

# A MaxPool of a constant with a 1000 x 1000 window over a plane padded by
# 999: 1999^2 outputs of 10^6 window elements each, 4e12 steps (main's rlxc
# was still folding it after 20 s); fold.c's work budget leaves it to the
# generated code.
cat >"$TMP/heavy_fold.rlxg" <<'JSON'
{"rlxg": 1, "name": "heavy",
 "weights": [{"name": "xs", "dtype": "i64", "shape": [4], "data": [1, 1, 1000, 1000]}],
 "nodes": [{"name": "x", "op": "ConstantOfShape", "inputs": ["xs"], "outputs": ["x"]},
           {"name": "pool", "op": "MaxPool", "inputs": ["x"], "outputs": ["y"],
            "attrs": {"kernel_shape": [1000, 1000], "pads": [999, 999, 999, 999]}}],
 "outputs": [{"name": "y", "dtype": "f32", "shape": [1, 1, 1999, 1999]}]}
JSON
within "a MaxPool of a constant too costly to fold compiles" "$RLXC" "$TMP/heavy_fold.rlxg" -o "$TMP/heavy.c"
grep -q "rk_pool_nd(" "$TMP/heavy.c" && pass "the costly MaxPool runs at run time" ||
    fail "the costly MaxPool runs at run time" "no rk_pool_nd call in heavy.c"

# 2^40 f32 zeros reshaped to [2^20, 2^20]: a 4 TiB value, never folded
cat >"$TMP/huge_value.rlxg" <<'JSON'
{"rlxg": 1, "name": "huge",
 "weights": [{"name": "n", "dtype": "i64", "shape": [1], "data": [1099511627776]},
             {"name": "s", "dtype": "i64", "shape": [2], "data": [1048576, 1048576]}],
 "nodes": [{"name": "zeros", "op": "ConstantOfShape", "inputs": ["n"], "outputs": ["z"]},
           {"name": "r", "op": "Reshape", "inputs": ["z", "s"], "outputs": ["y"]}],
 "outputs": [{"name": "y"}]}
JSON
within "a 2^40-element Reshape compiles without folding" "$RLXC" "$TMP/huge_value.rlxg" -o "$TMP/huge.c"
one_line "--arena-limit refuses the 4 TiB arena" "the arena needs 4398046511104 bytes, over the limit of 1073741824" \
    "$RLXC" "$TMP/huge_value.rlxg" -o "$TMP/huge2.c" --arena-limit 1G

# 70000 nodes: refused by default (tests/malformed), compiled with --max-nodes raised
$PY - "$TMP/chain.rlxg" <<'EOF'
import json, sys
n = 70000
nodes = [{"name": "r%d" % i, "op": "Relu", "inputs": ["v%d" % i], "outputs": ["v%d" % (i + 1)]} for i in range(n)]
json.dump({"rlxg": 1, "inputs": [{"name": "v0", "dtype": "f32", "shape": [4]}], "outputs": [{"name": "v%d" % n}],
           "nodes": nodes}, open(sys.argv[1], "w"))
EOF
one_line "70000 nodes: over the default limit" "the graph has more than 65536 nodes, rlxc's limit (--max-nodes raises it)" \
    "$RLXC" "$TMP/chain.rlxg" -o "$TMP/chain.c"
within "70000 nodes with --max-nodes 100000" "$RLXC" "$TMP/chain.rlxg" -o "$TMP/chain.c" --max-nodes 100000

one_line "--memory-limit 1M refuses an ordinary model" "compiling this model needs more than 1 MiB of memory" \
    "$RLXC" examples/shapes.rlxg -o "$TMP/s1.c" --memory-limit 1M
check "--memory-limit 0 lifts the limit" "$RLXC" examples/shapes.rlxg -o "$TMP/s2.c" --memory-limit 0
one_line "--memory-limit x" "rlxc: --memory-limit wants a byte count like 65536 or 64K, not 'x'" \
    "$RLXC" examples/shapes.rlxg -o "$TMP/s3.c" --memory-limit x
one_line "--max-nodes 0" "rlxc: --max-nodes wants a count from 1 to 2147483647, not '0'" \
    "$RLXC" examples/shapes.rlxg -o "$TMP/s4.c" --max-nodes 0
finish
