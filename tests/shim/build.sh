#!/usr/bin/env bash
# build.sh - builds the CUDA stand-in driver and the executor object that
# kernel libraries link, where they are missing or older than their sources:
#
#   tests/shim/build.sh [--asan] [DIR]      (DIR: build/shim, or build/shim/asan)
#
#   DIR/libcuda.so.1   cuda_driver.cc: point RLX_LIBCUDA at it
#   DIR/gpu_fiber.o    gpu_fiber.cc, position-independent
#
# --asan builds both with -fsanitize=address,undefined (run the host with
# LD_PRELOAD of the compiler's libasan, since the model itself is not
# instrumented). Prints DIR. Then tests/shim/kernels.sh builds a model's
# kernels. Exit 1 (with the compiler's message) if a build fails.
set -eu
cd "$(dirname "$0")/../.."
S=tests/shim
CXX=${CXX:-g++}
FLAGS=(-std=c++17 -O2 -g -fPIC -Wall -Wextra -Werror)
DIR=build/shim
if [ "${1:-}" = --asan ]; then
    shift
    FLAGS=(-std=c++17 -O1 -g -fPIC -Wall -Wextra -Werror -fsanitize=address,undefined -fno-omit-frame-pointer)
    DIR=build/shim/asan
fi
DIR=${1:-$DIR}
mkdir -p "$DIR"
newer() { [ ! -e "$1" ] || [ "$2" -nt "$1" ] || [ "$S/build.sh" -nt "$1" ]; }
if newer "$DIR/libcuda.so.1" "$S/cuda_driver.cc"; then
    "$CXX" "${FLAGS[@]}" -shared "$S/cuda_driver.cc" -o "$DIR/libcuda.so.1.tmp" -ldl
    mv "$DIR/libcuda.so.1.tmp" "$DIR/libcuda.so.1"
fi
if newer "$DIR/gpu_fiber.o" "$S/gpu_fiber.cc" || [ "$S/gpu_fiber.h" -nt "$DIR/gpu_fiber.o" ]; then
    "$CXX" "${FLAGS[@]}" -c "$S/gpu_fiber.cc" -o "$DIR/gpu_fiber.o.tmp"
    mv "$DIR/gpu_fiber.o.tmp" "$DIR/gpu_fiber.o"
fi
echo "$DIR"
