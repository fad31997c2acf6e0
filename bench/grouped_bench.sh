#!/bin/sh
# grouped_bench.sh - builds bench/grouped_bench.c against the runtime library
# make built (build/librlxrt.a: kernels chosen by CPUID) and runs it;
# arguments go to the program (e.g. 208x14 440x7).
set -e
cd "$(dirname "$0")/.."
CC=${CC:-cc}
mkdir -p build/bench
$CC -std=c99 -O2 -Wall -Wextra -Werror -Iruntime_min bench/grouped_bench.c -o build/bench/grouped_bench build/librlxrt.a -lm -pthread
exec build/bench/grouped_bench "$@"
