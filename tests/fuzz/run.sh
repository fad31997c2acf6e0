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
# Then every seed and regression input of the model targets (onnx, rlxg,
# pipeline) goes through the real driver, `RLXC FILE -o OUT.c` (RLXC
# default build/rlxc), with the malformed suites' bounds: within
# FUZZ_CLI_SECONDS (10) s and FUZZ_CLI_MB (1024) MB (GNU time; ulimit -v
# unless rlxc is sanitized), exit 0, or exit 1 with one line on stderr that
# names the file and no file left behind; the slowest and largest are
# printed. Two checks per target and one per model target; the closing line
# is "N passed, N failed". Without
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

# The model inputs through the driver: the fuzz targets hold the library to
# 256 MiB under ASan; this holds rlxc itself to the issue's bounds.
RLXC=${RLXC:-build/rlxc}
CLI_S=${FUZZ_CLI_SECONDS:-10}
CLI_MB=${FUZZ_CLI_MB:-1024}
if [ ! -x "$RLXC" ] || [ ! -x /usr/bin/time ]; then
    bad "rlxc on the corpora" "needs $RLXC (make) and GNU time (/usr/bin/time)"
    finish
fi
vmem=$((CLI_MB * 1024))
nm "$RLXC" 2>/dev/null | grep -q __asan_init && vmem=unlimited
cli=$OUT/cli
for t in onnx rlxg pipeline; do
    n=0 worst_s=0 worst_kb=0 why=
    for f in tests/fuzz/corpus/$t/* tests/fuzz/regress/$t/*; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        rm -rf "$cli" && mkdir -p "$cli/out"
        # rlxc tells the formats apart by the suffix; the pipeline target by the first bytes
        ext=onnx
        if [ $t = rlxg ] || { [ $t = pipeline ] && grep -qE '^[[:space:]]*(\{|RLXG)' <(head -c 64 "$f" | tr -d '\0'); }; then ext=rlxg; fi
        cp "$f" "$cli/in.$ext"
        (ulimit -v "$vmem"; exec /usr/bin/time -o "$cli/usage" -f '%e %M' \
            timeout -k 5 "$((CLI_S + 5))" "$RLXC" "$cli/in.$ext" -o "$cli/out/m.c") >/dev/null 2>"$cli/err"
        rc=$?
        read -r secs kb < <(tail -n 1 "$cli/usage" 2>/dev/null)
        secs=${secs:-0} kb=${kb:-0}
        awk -v a="$secs" -v b="$worst_s" 'BEGIN { exit !(a > b) }' && worst_s=$secs
        [ "$kb" -gt "$worst_kb" ] && worst_kb=$kb
        if awk -v a="$secs" -v l="$CLI_S" 'BEGIN { exit !(a > l) }'; then why="took $secs s"
        elif [ "$kb" -gt $((CLI_MB * 1024)) ]; then why="used $((kb / 1024)) MB"
        elif [ $rc -eq 1 ]; then
            if [ "$(wc -l <"$cli/err")" -ne 1 ] || ! grep -q "^$cli/in.$ext: " "$cli/err"; then
                why="not one line naming the file: $(head -c 200 "$cli/err" | tr '\n' '|')"
            elif [ -n "$(ls -A "$cli/out")" ]; then why="left files behind"; fi
        elif [ $rc -ne 0 ]; then why="exit $rc: $(head -c 200 "$cli/err" | tr '\n' '|')"
        fi
        if [ -n "$why" ]; then why="$f: $why"; break; fi
    done
    if [ -n "$why" ]; then bad "$t: rlxc on the inputs" "$why"
    else ok "$t: $n inputs through $RLXC (slowest $worst_s s, largest $((worst_kb / 1024)) MB)"; fi
done
finish
