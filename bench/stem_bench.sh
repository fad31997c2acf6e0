#!/bin/sh
# stem_bench.sh - builds bench/stem_bench.c against the runtime library make
# built (build/librlxrt.a: kernels chosen by CPUID, as rlxc --build links a
# model) and runs it; arguments go to the program (e.g. 16x3 64x7).
set -e
cd "$(dirname "$0")/.."
CC=${CC:-cc}
mkdir -p build/bench
$CC -std=c99 -O2 -Wall -Wextra -Werror -Iruntime_min bench/stem_bench.c -o build/bench/stem_bench build/librlxrt.a -lm -pthread
exec build/bench/stem_bench "$@"
