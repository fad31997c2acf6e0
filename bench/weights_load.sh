#!/bin/sh
# weights_load.sh [MODEL.onnx] [RLXC flags...] - builds bench/weights_load.c
# against the code rlxc generates for MODEL (default: ResNet-18 of the zoo,
# build/zoo/resnet18/model.onnx from `bash tests/zoo/run.sh`, compiled with
# --no-winograd: its 47 MB of plain weights) and prints the load times with
# and without the weights checksum. CC and CFLAGS (default -O2, what
# `rlxc --build` uses) build the program as a user's would.
# COLD=1 drops the file from the page cache before each load (from storage).
set -e
cd "$(dirname "$0")/.."
MODEL=${1:-build/zoo/resnet18/model.onnx}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- --no-winograd
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2}
D=build/bench/weights_load
mkdir -p $D
build/rlxc "$MODEL" -o $D/wl.c -n wl "$@"
# linked with the runtime library make built (build/librlxrt.a), as rlxc --build
# links a model: on x86-64 its kernels and checksum follow the CPU (rlx_isa.c);
# RUNTIME=sources compiles runtime_min/*.c with CC and CFLAGS instead (one variant)
if [ "${RUNTIME:-lib}" = sources ]; then
    $CC $CFLAGS -Iruntime_min -I$D bench/weights_load.c $D/wl.c runtime_min/*.c -o $D/weights_load -lm -lpthread
else
    make -s build/librlxrt.a
    $CC $CFLAGS -Iruntime_min -I$D bench/weights_load.c $D/wl.c build/librlxrt.a -Wl,--gc-sections -o $D/weights_load -lm -lpthread
fi
exec $D/weights_load $D/wl.weights "${ROUNDS:-21}" ${COLD:+cold}
