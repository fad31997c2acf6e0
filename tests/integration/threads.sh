#!/usr/bin/env bash
# threads.sh - results are identical whatever the thread count.
#
# Kernels split their work into disjoint output blocks and never split a
# reduction, so a model run with 1, 2 or 3 threads must give the same bytes.
# Models: the zoo's CNNs and transformer (tests/zoo/run.sh exports them into
# build/zoo; skipped with a note if absent), built once each, run with
# --threads 1, 2 and 3, outputs compared with cmp.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

shopt -s nullglob
found=0
for dir in build/zoo/cnn build/zoo/resnet18 build/zoo/mobilenetv2 build/zoo/transformer; do
    [ -f "$dir/model.onnx" ] && [ -f "$dir/in_0.npy" ] || continue
    found=1
    name=$(basename "$dir")
    exe="$TMP/$name"
    # -march=native: the AVX2 / AVX-512 kernels split work their own way
    if ! CFLAGS="-O2 -march=native" "$RLXC" "$dir/model.onnx" --build -o "$exe" >"$TMP/$name.log" 2>&1; then
        fail "$name: build" "$(head -n 1 "$TMP/$name.log")"
        continue
    fi
    ok=1
    for t in 1 2 3; do
        if ! "$exe" -i "$dir/in_0.npy" -o "$TMP/$name.t$t.npy" --threads "$t" >/dev/null 2>"$TMP/$name.err"; then
            fail "$name: run --threads $t" "$(head -n 1 "$TMP/$name.err")"
            ok=0
        fi
    done
    [ $ok = 1 ] || continue
    if cmp -s "$TMP/$name.t1.npy" "$TMP/$name.t2.npy" && cmp -s "$TMP/$name.t1.npy" "$TMP/$name.t3.npy"; then
        pass "$name: --threads 1, 2 and 3 give identical bytes"
    else
        fail "$name: thread counts agree" "outputs differ between --threads 1, 2 and 3"
    fi
done
[ $found = 1 ] || skip "zoo models" "no zoo models in build/zoo (tests/zoo/run.sh makes them): nothing to compare"
finish
