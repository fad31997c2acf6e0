#!/usr/bin/env bash
# cuda_device.sh - the cuda target on a real NVIDIA GPU: the one short,
# prepared run that issue 18 asks for when a device is available.
#
#   bash bench/cuda_device.sh [--shim] [--models a,b,...] [--batches 1,32] [--runs R]
#
# Needs build/rlxc and build/librlxrt.a (make), the zoo at batch 1
# (build/zoo, bash tests/zoo/run.sh), NVRTC for rlxc, and a driver
# (libcuda.so.1, or $RLX_LIBCUDA) with a device. For each model (default
# mlp,cnn,resnet18,mobilenetv2,transformer,lstm) and batch (default 1,32; the
# batch-32 models are exported from tests/zoo/export.py's constructors into
# build/zoo_b32 where /usr/bin/python3 has torch, else skipped with a line;
# "batch 1" is build/zoo as exported, whose LSTM takes 2 sequences):
#
#   1. builds it for c and for cuda (--build), runs both on the same input,
#      and compares the outputs (tests/gpu/compare.py: rtol 1e-3, atol 1e-4);
#      at batch 1 also the cuda output against PyTorch's (tests/zoo/compare.py);
#   2. times the cuda program (--bench R: the median of R replays of the CUDA
#      graph, inputs and outputs copied each run) beside the C target's on all
#      CPUs, and PyTorch on the GPU (eval, inference_mode, synchronized) where
#      torch.cuda is available.
#
# Then the bundled digits classifier on its 450 held-out images (c against
# cuda, and the count right against PyTorch's). One line per check
# (ok / FAIL / skip) and a table of milliseconds; exit 1 if a check failed.
# Nothing here is a test suite: it is not in tests/run_all.sh.
#
# --shim runs the same steps on the CPU shim (tests/shim/: the stand-in
# libcuda.so.1 and each model's OUT.cu compiled for it), which checks this
# script's plumbing on a machine without a GPU; its milliseconds mean nothing.
set -u
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
RLXC=build/rlxc
OUT=build/bench/cuda
MODELS=mlp,cnn,resnet18,mobilenetv2,transformer,lstm
BATCHES=1,32
RUNS=20
SHIM=0
while [ $# -gt 0 ]; do
    case $1 in
    --shim) SHIM=1 ;;
    --models) MODELS=$2; shift ;;
    --batches) BATCHES=$2; shift ;;
    --runs) RUNS=$2; shift ;;
    *) echo "usage: bash bench/cuda_device.sh [--shim] [--models a,b] [--batches 1,32] [--runs R]" >&2; exit 2 ;;
    esac
    shift
done
nfail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; nfail=$((nfail + 1)); }
skip() { echo "skip $*"; }
[ -x $RLXC ] || { echo "cuda_device: $RLXC is missing (make)" >&2; exit 1; }
if [ $SHIM = 1 ]; then
    bash tests/shim/build.sh >/dev/null || exit 1
    export RLX_LIBCUDA=$PWD/build/shim/libcuda.so.1
fi
mkdir -p $OUT
echo "cuda_device: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs$([ $SHIM = 1 ] && echo ', on the CPU shim')"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# run_cuda DIR ARGS...: DIR/m (built for cuda) with ARGS, on the shim if --shim
run_cuda() {
    local w=$1; shift
    if [ $SHIM = 1 ]; then
        RLX_SHIM_KERNELS=$w/kernels.so RLX_SHIM_EXPECT_PTX=$w/m.ptx "$w/m" "$@"
    else
        "$w/m" "$@"
    fi
}

# build TARGET MODEL DIR DIMS...: DIR/m for TARGET; 1 with the reason on stdout
build() {
    local t=$1 m=$2 w=$3 out
    shift 3
    rm -rf "$w" && mkdir -p "$w/out"
    if ! out=$($RLXC "$m" --target "$t" "$@" --build -o "$w/m" 2>&1); then
        echo "rlxc --target $t: $(head -n 1 <<<"$out")"
        return 1
    fi
    if [ "$t" = cuda ] && [ $SHIM = 1 ]; then
        if ! out=$(bash tests/shim/kernels.sh "$w/m.cu" "$w/kernels.so" 2>&1 && $PY tests/shim/ptx_of.py "$w/m.c" "$w/m.ptx" 2>&1); then
            echo "shim kernels: $(head -n 1 <<<"$out")"
            return 1
        fi
    fi
}

# median_ms TEXT: the median_ms of a --bench line, and the device or isa after it
bench_field() { sed -n "s/^bench: .*median_ms=\([0-9.]*\).*/\1/p" <<<"$1" | head -n 1; }

# the batch-32 models, exported where torch can
IFS=, read -r -a models <<<"$MODELS"
IFS=, read -r -a batches <<<"$BATCHES"
for b in "${batches[@]}"; do
    [ "$b" = 1 ] && continue
    for n in "${models[@]}"; do
        [ -f build/zoo_b$b/$n/model.onnx ] && continue
        $PY - "$n" "$b" build/zoo_b$b >/dev/null 2>&1 <<'PY' || skip "export $n at batch $b" "needs /usr/bin/python3 with torch"
import os, sys
sys.path.insert(0, os.path.join("tests", "zoo"))
import export as zoo
name, batch, outdir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
make, shape = zoo.MODELS[name]
zoo.MODELS[name] = (make, (batch,) + tuple(shape[1:]))
zoo.export(name, outdir)
PY
    done
done

rows=()
for b in "${batches[@]}"; do
    for n in "${models[@]}"; do
        z=build/zoo/$n
        [ "$b" = 1 ] || z=build/zoo_b$b/$n
        if [ ! -f $z/model.onnx ]; then skip "$n batch $b" "$z/model.onnx not exported"; continue; fi
        w=$OUT/$n/b$b
        if ! why=$(build c $z/model.onnx $w/c) || ! why=$(build cuda $z/model.onnx $w/cuda); then
            bad "$n batch $b builds: $why"
            continue
        fi
        if ! out=$(run_cuda $w/cuda -i $z/in_0.npy -o $w/cuda/out/out_0.npy 2>&1) ||
            ! "$w/c/m" -i $z/in_0.npy -o $w/c/out/out_0.npy >/dev/null 2>&1; then
            bad "$n batch $b runs: $(head -n 1 <<<"$out")"
            continue
        fi
        if msg=$($PY tests/gpu/compare.py $w/c/out $w/cuda/out /dev/null 2>&1); then ok "$n batch $b: cuda against c: $msg"
        else bad "$n batch $b: cuda against c: $msg"; fi
        if ref=$($PY tests/zoo/compare.py $z/expected_0.npy $w/cuda/out/out_0.npy 2>&1); then ok "$n batch $b: cuda against PyTorch: $ref"
        else bad "$n batch $b: cuda against PyTorch: $ref"; fi
        gpu=$(run_cuda $w/cuda -i $z/in_0.npy --bench "$RUNS" 2>&1)
        cpu=$("$w/c/m" -i $z/in_0.npy --bench "$RUNS" --threads "$(nproc)" 2>&1)
        dev=$(sed -n 's/^bench: .*device=\(.*\)$/\1/p' <<<"$gpu" | head -n 1)
        tms=-
        if [ $SHIM = 0 ]; then
            tms=$($PY - "$n" "$z/in_0.npy" "$RUNS" 2>/dev/null <<'PY'
import os, statistics, sys, time
import numpy as np
import torch
sys.path.insert(0, os.path.join("tests", "zoo"))
import export as zoo
if not torch.cuda.is_available():
    sys.exit(1)
name, inp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
make, _ = zoo.MODELS[name]
torch.manual_seed(zoo.SEED)
model = make().eval().cuda()
x = torch.from_numpy(np.load(inp)).cuda()
times = []
with torch.inference_mode():
    for i in range(runs + 3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model(x)
        torch.cuda.synchronize()
        if i >= 3:
            times.append((time.perf_counter() - t0) * 1e3)
print("%.3f" % statistics.median(times))
PY
            ) || tms=-
        fi
        rows+=("| $n | $b | $(bench_field "$gpu") | $(bench_field "$cpu") | $tms | ${dev:-?} |")
    done
done

# the digits classifier on its held-out images
w=$OUT/digits
if ! why=$(build c examples/digits/model.onnx $w/c --dim batch=450) ||
    ! why=$(build cuda examples/digits/model.onnx $w/cuda --dim batch=450); then
    bad "digits builds: $why"
elif ! out=$(run_cuda $w/cuda -i examples/digits/heldout_pixels.npy -o $w/cuda/out/out_0.npy -o $w/cuda/out/out_1.npy 2>&1) ||
    ! out=$("$w/c/m" -i examples/digits/heldout_pixels.npy -o $w/c/out/out_0.npy -o $w/c/out/out_1.npy 2>&1); then
    bad "digits runs: $(head -n 1 <<<"$out")"
else
    msg=$($PY tests/gpu/compare.py $w/c/out $w/cuda/out /dev/null 2>&1) || bad "digits: cuda against c: $msg"
    right=$($PY -c "import numpy as n, sys; print((n.load(sys.argv[1]).ravel() == n.load(sys.argv[2]).ravel()).sum())" \
        $w/cuda/out/out_1.npy examples/digits/heldout_labels.npy)
    want=$(cut -d' ' -f1 examples/digits/torch_accuracy.txt)
    if [ "$right" = "$want" ]; then ok "digits: $msg; $right of 450 right (PyTorch: $want)"
    else bad "digits: $right of 450 right, PyTorch $want"; fi
fi

echo
echo "| model | batch | cuda ms | c ms ($(nproc) threads) | PyTorch on the GPU ms | device |"
echo "|---|---|---|---|---|---|"
[ ${#rows[@]} -eq 0 ] || printf '%s\n' "${rows[@]}"
echo
echo "cuda_device: $nfail failed"
[ $nfail -eq 0 ]
