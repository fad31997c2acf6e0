#!/bin/sh
# xcore.sh - builds bench/xcore.c (a thread reading or overwriting what the
# other thread wrote, against what it wrote itself) with -O3 -march=native (vectorized loops)
# and runs it; arguments go to the program (buffer sizes in KB).
set -e
cd "$(dirname "$0")/.."
CC=${CC:-cc}
mkdir -p build/bench
$CC -std=c99 -O3 -march=native -Wall -Wextra -Werror bench/xcore.c -o build/bench/xcore -pthread
exec build/bench/xcore "$@"
