#!/bin/sh
# conv_bench.sh - builds bench/conv_bench.c against the runtime library make
# built (build/librlxrt.a: kernels chosen by CPUID, as rlxc --build links a
# model) and runs it; arguments go to the program (e.g. stem:16x3 grouped:440x7).
set -e
cd "$(dirname "$0")/.."
CC=${CC:-cc}
mkdir -p build/bench
$CC -std=c99 -O2 -Wall -Wextra -Werror -Iruntime_min bench/conv_bench.c -o build/bench/conv_bench build/librlxrt.a -lm -pthread
exec build/bench/conv_bench "$@"
