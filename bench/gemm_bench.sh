#!/bin/sh
# gemm_bench.sh - builds bench/gemm_bench (rk_sgemm vs single-threaded OpenBLAS)
# with -O2 -march=native and runs it; arguments go to the program
# (e.g. --budget 0.5 1024x1024x1024 64x576x3136). Needs libopenblas-dev.
set -e
cd "$(dirname "$0")/.."
CC=${CC:-cc}
OB_CFLAGS=$(pkg-config --cflags openblas 2>/dev/null || echo "-I/usr/include/x86_64-linux-gnu/openblas-pthread")
OB_LIBS=$(pkg-config --libs openblas 2>/dev/null || echo "-lopenblas")
mkdir -p build/bench
$CC -std=c99 -O2 -march=native -Wall -Wextra -Werror -Iruntime_min $OB_CFLAGS \
    bench/gemm_bench.c runtime_min/rk_gemm.c -o build/bench/gemm_bench $OB_LIBS -lm
OPENBLAS_NUM_THREADS=1 exec build/bench/gemm_bench "$@"
