#!/usr/bin/env bash
# kernels.sh - builds the kernels of a model compiled for --target cuda into
# a library the stand-in driver (cuda_driver.cc) runs:
#
#   tests/shim/kernels.sh OUT.cu LIB.so [--asan]
#
# OUT.cu is compiled as C++ against cuda_shim.h (-include; its
# #include <cuda_fp16.h> finds the shim's) and linked with the executor
# built by tests/shim/build.sh (build/shim/gpu_fiber.o, or the --asan one).
# Then run the model with RLX_LIBCUDA=build/shim/libcuda.so.1
# RLX_SHIM_KERNELS=LIB.so. Exit 1 with the compiler's message on failure.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: tests/shim/kernels.sh OUT.cu LIB.so [--asan]" >&2; exit 2; }
cu=$1 so=$2
FLAGS=(-std=c++17 -O2 -fPIC -shared -w)
DIR=build/shim
if [ "${3:-}" = --asan ]; then
    FLAGS=(-std=c++17 -O1 -g -fPIC -shared -w -fsanitize=address,undefined -fno-omit-frame-pointer)
    DIR=build/shim/asan
fi
[ -f "$DIR/gpu_fiber.o" ] || { echo "kernels.sh: $DIR/gpu_fiber.o missing (run tests/shim/build.sh)" >&2; exit 1; }
${CXX:-g++} "${FLAGS[@]}" -Itests/shim -include tests/shim/cuda_shim.h -x c++ "$cu" -x none "$DIR/gpu_fiber.o" -o "$so"
