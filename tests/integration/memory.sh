#!/usr/bin/env bash
# memory.sh - the memory plan on real models: arena against its lower bound,
# --arena-limit and --report.
#
# Models: every zoo model (build/zoo/*/model.onnx, written by
# tests/zoo/run.sh, which run_all.sh runs first; a missing zoo is one
# skip) and a small graph written here whose branches make the schedule
# matter. For each one:
#   - `rlxc -v` prints "plan: arena A bytes, lower bound L, naive N"; the
#     arena must be within 2% of the bound (A * 100 <= L * 102) and no
#     larger than the naive sum;
#   - `--arena-limit A-1` must fail with exit status 1, one line on stderr
#     that says "over the limit" and names what is live at the peak (the
#     first value it names must be one that --report lists at the peak), and
#     leave no output behind; `--arena-limit A` and `A+1` must succeed;
#   - `--report P` must write P.txt, whose arena and bound agree with -v,
#     and P.svg, which python's xml.etree parses into an <svg> root with
#     one <rect> per buffer listed in P.txt (plus background, peak, frame).
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

cat >"$TMP/branches.rlxg" <<'JSON'
{"rlxg": 1, "name": "branches",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [4, 16]}],
 "outputs": [{"name": "y"}],
 "weights": [{"name": "w1", "dtype": "f32", "shape": [16, 256], "data": []},
             {"name": "w2", "dtype": "f32", "shape": [16, 256], "data": []},
             {"name": "w3", "dtype": "f32", "shape": [256, 8], "data": []},
             {"name": "w4", "dtype": "f32", "shape": [256, 8], "data": []}],
 "nodes": [{"name": "a", "op": "MatMul", "inputs": ["x", "w1"], "outputs": ["a"]},
           {"name": "b", "op": "MatMul", "inputs": ["x", "w2"], "outputs": ["b"]},
           {"name": "ra", "op": "Tanh", "inputs": ["a"], "outputs": ["ra"]},
           {"name": "rb", "op": "Sigmoid", "inputs": ["b"], "outputs": ["rb"]},
           {"name": "pa", "op": "MatMul", "inputs": ["ra", "w3"], "outputs": ["pa"]},
           {"name": "pb", "op": "MatMul", "inputs": ["rb", "w4"], "outputs": ["pb"]},
           {"name": "y", "op": "Add", "inputs": ["pa", "pb"], "outputs": ["y"]}]}
JSON
# fill the weights with numbers (the JSON above leaves them empty for brevity)
$PY - "$TMP/branches.rlxg" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
for k, w in enumerate(g["weights"]):
    n = w["shape"][0] * w["shape"][1]
    w["data"] = [((i * 7 + k) % 13 - 6) / 16.0 for i in range(n)]
json.dump(g, open(sys.argv[1], "w"))
EOF

models=("$TMP/branches.rlxg")
shopt -s nullglob
zoo=(build/zoo/*/model.onnx)
if [ ${#zoo[@]} -eq 0 ]; then skip "zoo models" "none in build/zoo (tests/zoo/run.sh writes them)"; fi
models+=("${zoo[@]}")

# plan_numbers FILE: "ARENA LOWER NAIVE" from rlxc -v's plan line
plan_numbers() {
    sed -nE 's/^plan: arena ([0-9]+) bytes, lower bound ([0-9]+), naive ([0-9]+) .*/\1 \2 \3/p' "$1"
}

i=0
for model in "${models[@]}"; do
    i=$((i + 1))
    name=${model#"$TMP/"}
    name=${name#build/zoo/}
    name=${name%/model.onnx}
    d=$TMP/m$i
    mkdir -p "$d/ok" "$d/over" "$d/at" "$d/above"
    if ! "$RLXC" "$model" -o "$d/ok/model.c" -v >"$d/v.log" 2>&1; then
        fail "$name: compile -v" "$(head -n 3 "$d/v.log")"; continue
    fi
    read -r arena lower naive <<<"$(plan_numbers "$d/v.log")"
    if [ -z "${arena:-}" ]; then fail "$name: plan line" "no 'plan:' line in rlxc -v output"; continue; fi
    if [ "$arena" -gt 0 ] && [ $((arena * 100)) -le $((lower * 102)) ] && [ "$arena" -ge "$lower" ] &&
        [ "$arena" -le "$naive" ]; then
        pass "$name: arena $arena <= 1.02 x lower bound $lower (naive $naive)"
    else
        fail "$name: arena within 1.02 x lower bound" "arena $arena, lower bound $lower, naive $naive"
    fi

    # --arena-limit one byte below the arena: exit 1, one line, nothing written
    "$RLXC" "$model" -o "$d/over/model.c" --arena-limit $((arena - 1)) >"$d/over.out" 2>"$d/over.err"
    rc=$?
    msg=$(cat "$d/over.err")
    lines=$(wc -l <"$d/over.err")
    if [ $rc -eq 1 ] && [ "$lines" -eq 1 ] && [ ! -s "$d/over.out" ] &&
        grep -q "needs $arena bytes, over the limit of $((arena - 1)); live at the peak (step [0-9]*, " "$d/over.err"; then
        pass "$name: --arena-limit $((arena - 1)) fails with one line"
    else
        fail "$name: --arena-limit $((arena - 1)) fails with one line" "exit $rc, $lines lines: $msg"
    fi
    left=$(ls -A "$d/over")
    if [ -z "$left" ]; then pass "$name: a failed limit writes nothing"
    else fail "$name: a failed limit writes nothing" "left: $left"; fi
    for lim in "$arena" "$((arena + 1))"; do
        if out=$("$RLXC" "$model" -o "$d/at/model.c" --arena-limit "$lim" 2>&1) && [ -s "$d/at/model.c" ]; then
            pass "$name: --arena-limit $lim succeeds"
        else
            fail "$name: --arena-limit $lim succeeds" "$out"
        fi
    done

    # --report: text and SVG, consistent with -v and with the limit message
    if ! out=$("$RLXC" "$model" -o "$d/above/model.c" --report "$d/rep" 2>&1); then
        fail "$name: --report" "$out"; continue
    fi
    if [ -s "$d/rep.txt" ] && grep -qx "arena bytes: *$arena" "$d/rep.txt" &&
        grep -q "^lower bound: *$lower " "$d/rep.txt"; then
        pass "$name: --report text agrees with -v"
    else
        fail "$name: --report text agrees with -v" "$(head -n 6 "$d/rep.txt" 2>/dev/null)"
    fi
    first=$(sed -nE "s/.*live at the peak \(step [0-9]+, .*\): '([^']+)' \([0-9]+ B\).*/\1/p" "$d/over.err")
    if [ -n "$first" ] && grep "^peak: " "$d/rep.txt" | grep -qF "'$first' ("; then
        pass "$name: the limit message names a buffer live at the peak ('$first')"
    else
        fail "$name: the limit message names a buffer live at the peak" "'$first' not in: $(grep '^peak: ' "$d/rep.txt")"
    fi
    if out=$($PY - "$d/rep.svg" "$d/rep.txt" <<'EOF' 2>&1
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", "root is %s" % root.tag
rects = root.findall(ns + "rect")
lines = open(sys.argv[2]).read().split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("offset "))
buffers = [l for l in lines[start + 1:] if l.strip() and int(l.split()[1]) > 0]
# background, the peak step's band and the frame, then one per buffer
assert len(rects) == len(buffers) + 3, "%d rects for %d buffers" % (len(rects), len(buffers))
for r in rects:
    for a in ("x", "y", "width", "height"):
        if a in r.attrib and not r.attrib[a].endswith("%"):
            assert float(r.attrib[a]) >= 0, "negative %s" % a
EOF
    ); then
        pass "$name: --report SVG is well-formed"
    else
        fail "$name: --report SVG is well-formed" "$out"
    fi
done
finish
