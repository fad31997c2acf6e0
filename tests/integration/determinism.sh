#!/usr/bin/env bash
# determinism.sh - identical inputs give byte-identical outputs.
#
# Compiles each model twice into two different output directories with the
# same -n name and compares OUT.c, OUT.h and OUT.weights byte for byte: no
# pointer values, hash-table orders, timestamps or output paths may leak into
# what rlxc writes. Models: the bundled examples, every e2e graph that
# compiles (tests/e2e/cases.py; the e2e suite reports those that don't), and
# a small graph written here with its nodes out of order and several
# branches, so that scheduling order matters.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

cat >"$TMP/branches.rlxg" <<'JSON'
{"rlxg": 1, "name": "branches",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [2, 4]}],
 "outputs": [{"name": "y"}, {"name": "z"}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [4, 3], "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]},
             {"name": "b", "dtype": "f32", "shape": [3], "data": [0.5, "-inf", 2]}],
 "nodes": [{"name": "z", "op": "Sigmoid", "inputs": ["h"], "outputs": ["z"]},
           {"name": "y", "op": "Add", "inputs": ["r", "t"], "outputs": ["y"]},
           {"name": "r", "op": "Relu", "inputs": ["h"], "outputs": ["r"]},
           {"name": "t", "op": "Tanh", "inputs": ["h"], "outputs": ["t"]},
           {"name": "h", "op": "Add", "inputs": ["m", "b"], "outputs": ["h"]},
           {"name": "m", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["m"]}]}
JSON

models=("$TMP/branches.rlxg")
shopt -s nullglob
examples=(examples/*.rlxg)
[ ${#examples[@]} -gt 0 ] || fail "example model present" "no examples/*.rlxg"
models+=("${examples[@]}")
e2e_models "$TMP/e2e"
models+=("${E2E_MODELS[@]}")

i=0
for model in "${models[@]}"; do
    i=$((i + 1))
    name=${model#"$TMP/"}
    name=${name#e2e/}
    name=${name%/model.rlxg}
    d1=$TMP/run$i/one d2=$TMP/run$i/two
    mkdir -p "$d1" "$d2"
    if ! out=$("$RLXC" "$model" -o "$d1/model.c" -n detmodel 2>&1); then
        # tests/e2e/run.sh reports an e2e case that doesn't compile.
        case $model in
            "$TMP/e2e/"*) skip "$name" "does not compile: $(head -c 200 <<<"$out")" ;;
            *) fail "$name: compile" "$out" ;;
        esac
        continue
    fi
    if ! out=$("$RLXC" "$model" -o "$d2/model.c" -n detmodel 2>&1); then
        fail "$name: compile again" "$out"; continue
    fi
    for ext in c h weights; do
        if [ ! -f "$d1/model.$ext" ]; then fail "$name: model.$ext" "not written"
        elif cmp "$d1/model.$ext" "$d2/model.$ext" >/dev/null; then pass "$name: model.$ext identical"
        else fail "$name: model.$ext identical" "$(diff "$d1/model.$ext" "$d2/model.$ext" 2>/dev/null | head -5)"; fi
    done
done

# --emit-main output is deterministic too.
d1=$TMP/main/one d2=$TMP/main/two
mkdir -p "$d1" "$d2"
if "$RLXC" "$TMP/branches.rlxg" -o "$d1/model.c" -n detmodel --emit-main >/dev/null 2>&1 &&
    "$RLXC" "$TMP/branches.rlxg" -o "$d2/model.c" -n detmodel --emit-main >/dev/null 2>&1; then
    check "--emit-main: model.c identical" cmp "$d1/model.c" "$d2/model.c"
else
    fail "--emit-main: compile" "rlxc failed"
fi
finish
