#!/usr/bin/env bash
# tests/fuzz/run.sh - the fuzz targets in CI: build, replay, fuzz briefly.
#
# Builds the libFuzzer targets (make fuzz-build: clang, ASan + UBSan,
# build/fuzz/), then for each target of tests/fuzz/fuzz_*.c
#   - replays its seed corpus and regression inputs (tests/fuzz/corpus/T,
#     tests/fuzz/regress/T) once: every input that ever found a bug must
#     still run clean;
#   - fuzzes it for $FUZZ_SECONDS seconds (default 20) from a scratch copy
#     of those inputs, with its dictionary, -timeout=10 and -rss_limit_mb=1024,
#     so a crash, hang, leak or sanitizer report that a change brings into a
#     parser is caught on that change. A finding's input is kept in
#     build/fuzz/ci/T/ and named in the failure line.
# Two checks per target; the closing line is "N passed, N failed". Without
# clang or libFuzzer (scripts/setup.sh installs both) the suite fails at
# once, saying which is missing.
set -u
cd "$(dirname "$0")/../.."
FUZZ_CC=${FUZZ_CC:-clang-14}
SECONDS_EACH=${FUZZ_SECONDS:-20}
OUT=build/fuzz/ci
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit $?
}

if ! command -v "$FUZZ_CC" >/dev/null; then
    bad "toolchain" "$FUZZ_CC not found (scripts/setup.sh installs clang-14 and libclang-rt-14-dev)"
    finish
fi
probe=$(mktemp -d "${TMPDIR:-/tmp}/rlxc-fuzz.XXXXXX")
trap 'rm -rf "$probe"' EXIT
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
    >"$probe/t.c"
if ! "$FUZZ_CC" -fsanitize=fuzzer,address,undefined "$probe/t.c" -o "$probe/t" 2>"$probe/err"; then
    bad "toolchain" "$FUZZ_CC cannot link -fsanitize=fuzzer,address,undefined (libclang-rt-14-dev missing?): $(head -n 1 "$probe/err")"
    finish
fi
if ! out=$(make -s fuzz-build FUZZ_CC="$FUZZ_CC" 2>&1); then
    bad "build" "make fuzz-build failed: $(tail -n 5 <<<"$out")"
    finish
fi

rm -rf "$OUT"
for src in tests/fuzz/fuzz_*.c; do
    t=$(basename "$src" .c)
    t=${t#fuzz_}
    bin=build/fuzz/fuzz_$t
    dirs=()
    for d in tests/fuzz/corpus/$t tests/fuzz/regress/$t; do [ -d "$d" ] && dirs+=("$d"); done
    dict=()
    [ -f tests/fuzz/$t.dict ] && dict=(-dict=tests/fuzz/$t.dict)
    mkdir -p "$OUT/$t/corpus" "$OUT/$t/artifacts"
    log=$OUT/$t/replay.log
    n=0
    for d in "${dirs[@]}"; do n=$((n + $(ls "$d" | wc -l))); done
    if [ "$n" -eq 0 ]; then
        bad "$t: replay" "no seed or regression inputs"
    elif "$bin" -runs=0 -timeout=10 -rss_limit_mb=1024 "${dirs[@]}" >"$log" 2>&1; then
        ok "$t: replay of $n inputs"
    else
        bad "$t: replay" "$(grep -m1 -E 'ERROR|runtime error|fuzz:' "$log") (log: $log)"
    fi
    for d in "${dirs[@]}"; do cp "$d"/* "$OUT/$t/corpus/" 2>/dev/null; done
    log=$OUT/$t/fuzz.log
    if "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="$OUT/$t/artifacts/" "$OUT/$t/corpus" >"$log" 2>&1; then
        runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
        ok "$t: fuzzed ${SECONDS_EACH} s (${runs:-?} runs)"
    else
        bad "$t: fuzz" "$(grep -m1 -E 'ERROR|runtime error|fuzz:' "$log"); input: $(ls "$OUT/$t/artifacts/" | head -n 1) (log: $log)"
    fi
done
finish
