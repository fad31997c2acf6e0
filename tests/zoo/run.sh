#!/usr/bin/env bash
# run.sh - compiles the PyTorch model zoo with rlxc and checks it against PyTorch.
#
# tests/zoo/export.py writes build/zoo/NAME/{model.onnx,in_0.npy,expected_0.npy,
# ops.txt}; it is re-run only when export.py is newer than the last export
# (build/zoo/.stamp). Each model is then built with
# `build/rlxc model.onnx --build -o build/zoo/NAME/model` (and again with
# CFLAGS="-O2 -march=native" as model-native), run on in_0.npy,
# and its output compared with compare.py (rtol 1e-3, atol 1e-4). One line per
# model (result, max error or the first error line, the ONNX ops it uses),
# then `N passed, N failed`. Exit status 1 if anything failed.
set -u
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
RLXC=${RLXC:-build/rlxc}
Z=build/zoo
MODELS="mlp cnn resnet18 mobilenetv2 transformer"
pass=0 fail=0

if [ ! -f $Z/.stamp ] || [ tests/zoo/export.py -nt $Z/.stamp ]; then
    rm -rf $Z && mkdir -p $Z
    if $PY tests/zoo/export.py $Z; then touch $Z/.stamp
    else echo "zoo: export.py failed"; fi
fi

# Each model twice: with rlxc's default flags (the portable C kernels) and
# with -march=native (the AVX2 / AVX-512 kernels the benchmark runs).
for name in $MODELS; do
  for variant in portable native; do
    d=$Z/$name
    ops=$(cat $d/ops.txt 2>/dev/null || echo '?')
    if [ ! -f $d/model.onnx ]; then
        [ $variant = portable ] && { echo "FAIL $name: not exported"; fail=$((fail + 1)); }
        continue
    fi
    exe=$d/model flags=${CFLAGS:-}
    if [ $variant = native ]; then exe=$d/model-native flags="-O2 -march=native"; fi
    rm -f $exe $exe.c $d/out_0.npy
    if ! msg=$(CFLAGS=$flags timeout 600 "$RLXC" $d/model.onnx --build -o $exe 2>&1); then
        echo "FAIL $name ($variant): rlxc: $(head -n 1 <<<"$msg")   [ops: $ops]"
        fail=$((fail + 1)); continue
    fi
    if ! msg=$(timeout 120 $exe -i $d/in_0.npy -o $d/out_0.npy 2>&1); then
        echo "FAIL $name ($variant): run: $(head -n 1 <<<"$msg")   [ops: $ops]"
        fail=$((fail + 1)); continue
    fi
    if msg=$($PY tests/zoo/compare.py $d/expected_0.npy $d/out_0.npy); then
        echo "ok   $name ($variant): $msg   [ops: $ops]"; pass=$((pass + 1))
    else
        echo "FAIL $name ($variant): $msg   [ops: $ops]"; fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
