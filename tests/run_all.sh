#!/usr/bin/env bash
# run_all.sh - runs every test suite in order and sums their results.
#
# Suites: the Criterion unit binaries (build/unit/test_*, one per
# tests/unit/test_*.c, and build/unit_avx2/test_* and build/unit_avx512/test_*,
# the kernel tests against those instruction-set variants of librlxrt.a, on
# CPUs that have them),
# tests/malformed/run.sh, tests/e2e/run.sh,
# tests/conformance/run.sh, tests/zoo/run.sh, tests/gpu/run.sh (the spirv
# target against the C target: per-kernel cases and the zoo, which
# tests/zoo/run.sh exported), tests/conformance/run_gpu.sh (the node tests
# on the spirv target), tests/cross/run.sh (AArch64 under qemu),
# tests/cortexm/run.sh (Cortex-M4F builds, run under qemu),
# tests/fuzz/run.sh (the fuzz targets' replay and a short fuzz run),
# tests/sanitize/run.sh (a sample of the suites under ASan and UBSan), then
# each tests/integration/*.sh, then the cuda target through the CPU shim:
# tests/shim/run.sh, tests/gpu/run.sh cuda and tests/conformance/run_gpu.sh
# cuda (each one "skip" line where the CUDA toolkit's NVRTC is missing), then
# the msl target through the MSL shim: tests/shim/msl/run.sh, tests/gpu/run.sh
# msl and tests/conformance/run_gpu.sh msl.
# Each is printed under a header, its output streamed and kept, and its
# closing line read: Criterion's "[====] Synthesis: Tested: N | Passing: N |
# Failing: N | Crashing: N" on stderr, or a plain "N passed, N failed" for the
# scripts. The conformance suites are judged against their committed floors: their
# closing line counts every ONNX node test that rlxc doesn't support yet as
# failed, so only its exit status (1 = fewer passes than the floor) decides,
# and its passes are added. A suite that is missing, prints no closing line,
# times out, or exits non-zero while claiming no failure counts as one more
# failure, so a broken suite can never look green. The last line is the total,
# "N passed, N failed", and the exit status is 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
SUITE_TIMEOUT=${RLX_SUITE_TIMEOUT:-2400}   # seconds per suite: the slowest (the sanitized sample, the GPU node tests) take 5-15 min on 2 loaded cores
LOG=$(mktemp "${TMPDIR:-/tmp}/rlxc-suite.XXXXXX")
trap 'rm -f "$LOG"' EXIT

total_pass=0
total_fail=0
summary=()

# record NAME PASSED FAILED NOTE
record() {
    total_pass=$((total_pass + $2))
    total_fail=$((total_fail + $3))
    summary+=("$(printf '%-40s %4d passed, %4d failed%s' "$1" "$2" "$3" "${4:+  ($4)}")")
}

# run_suite NAME KIND CMD...: KIND is "criterion", "plain" or "floor".
run_suite() {
    local name=$1 kind=$2; shift 2
    echo
    echo "======== suite: $name ========"
    local start=$SECONDS
    timeout --kill-after=10 "$SUITE_TIMEOUT" "$@" </dev/null 2>&1 | tee "$LOG"
    local rc=${PIPESTATUS[0]}
    local p='' f='' note=''
    # Strip colour codes before matching; the last closing line wins.
    local clean
    clean=$(sed 's/\x1b\[[0-9;]*m//g' "$LOG")
    if [ "$kind" = criterion ]; then
        local line
        line=$(grep -E 'Synthesis: Tested: [0-9]+ \| Passing: [0-9]+ \| Failing: [0-9]+ \| Crashing: [0-9]+' <<<"$clean" | tail -n 1)
        if [ -n "$line" ]; then
            local tested passing failing crashing
            tested=$(sed -E 's/.*Tested: ([0-9]+).*/\1/' <<<"$line")
            passing=$(sed -E 's/.*Passing: ([0-9]+).*/\1/' <<<"$line")
            failing=$(sed -E 's/.*Failing: ([0-9]+).*/\1/' <<<"$line")
            crashing=$(sed -E 's/.*Crashing: ([0-9]+).*/\1/' <<<"$line")
            p=$passing
            # Criterion counts a crash as a failure too; count each test once.
            f=$failing
            [ "$crashing" -gt "$f" ] && f=$crashing
            [ $((p + f)) -lt "$tested" ] && note="$((tested - p - f)) skipped"
        fi
    else
        local line
        line=$(grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' <<<"$clean" | tail -n 1)
        if [ -n "$line" ]; then
            p=$(sed -E 's/^([A-Za-z]+: )?([0-9]+) passed.*/\2/' <<<"$line")
            f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
            grep -q skipped <<<"$line" && note="$(sed -E 's/.* ([0-9]+) skipped$/\1/' <<<"$line") skipped"
        fi
    fi
    # Sanitized, a report anywhere in the log fails the suite, whatever it
    # counted: Criterion judges a test by its assertions, and a leak that
    # LeakSanitizer reports as a passing test's process exits is not one.
    if [ -n "${RLX_SANITIZED:-}" ] && grep -qE 'ERROR: (Address|Leak)Sanitizer|: runtime error: ' <<<"$clean"; then
        [ -n "$p" ] && [ "${f:-0}" -eq 0 ] && f=1
        note="a sanitizer report in its log${note:+; $note}"
        echo "run_all: $name: a sanitizer report in its log; counted as a failure"
    fi
    if [ "$kind" = floor ] && [ -n "$p" ]; then
        note="$f not passing, within the floor${note:+; $note}"
        f=0
    fi
    if [ -z "$p" ]; then
        p=0 f=1
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then note="timed out after ${SUITE_TIMEOUT}s"
        else note="no closing line (exit $rc)"; fi
        echo "run_all: $name: $note; counted as 1 failure"
    elif [ "$rc" -ne 0 ] && [ "$kind" = floor ]; then
        f=1 note="exit $rc: below its floor, or the run broke"
        echo "run_all: $name: $note; counted as 1 failure"
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1 note="exit $rc with no failure reported"
        echo "run_all: $name: $note; counted as 1 failure"
    fi
    record "$name" "$p" "$f" "$((SECONDS - start))s${note:+; $note}"
}

# missing NAME WHY: a suite that should exist but doesn't is a failure.
missing() {
    echo
    echo "======== suite: $1 ========"
    echo "run_all: $1: $2; counted as 1 failure"
    record "$1" 0 1 "$2"
}

# tests/sanitize/run.sh runs this script again over its sanitized build:
# RLX_BUILD (default build) holds the unit binaries, RLX_UNIT names the unit
# tests to run (default: all), RLX_SUITES lists the scripted suites (default:
# every one below), and with RLX_SANITIZED set the conformance suite is
# judged like the others (by sanitizer reports, not by its floor).
BUILD=${RLX_BUILD:-build}

# 1. Criterion unit tests.
shopt -s nullglob
for src in tests/unit/test_*.c; do
    t=$(basename "$src" .c)
    [ -n "${RLX_UNIT:-}" ] && [[ " $RLX_UNIT " != *" $t "* ]] && continue
    bin=$BUILD/unit/$t
    if [ ! -x "$bin" ]; then missing "unit/$t" "$bin not built (make unit)"
    elif [ "$t" = test_vk ] && [ -n "${RLX_SAN_KEEP_LOADED:-}" ]; then
        # sanitized: its Vulkan layers kept mapped for LeakSanitizer (tests/sanitize/keep_loaded.c)
        run_suite "unit/$t" criterion env LD_PRELOAD="$RLX_SAN_KEEP_LOADED" \
            ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" "$bin"
    else run_suite "unit/$t" criterion "$bin"; fi
done
# The kernel tests against the AVX2 and AVX-512 variants (Makefile ISA_BINS),
# on CPUs that have them: none built where the CPU has AVX2 is a failure.
isa_bins=()
if [ -z "${RLX_UNIT:-}" ]; then
    isa_bins=($BUILD/unit_avx2/test_* $BUILD/unit_avx512/test_*)
    if [ "$(uname -m)" = x86_64 ] && grep -m1 '^flags' /proc/cpuinfo | grep -qw avx2 && [ ${#isa_bins[@]} -eq 0 ]; then
        missing unit_isa "no $BUILD/unit_avx2/test_* on an AVX2 CPU (make unit)"
    fi
fi
for bin in "${isa_bins[@]}"; do
    run_suite "${bin#$BUILD/}" criterion "$bin"
done

# 2. Scripted suites; each must exist.
suites=(tests/malformed/run.sh tests/malformed_onnx/run.sh tests/e2e/run.sh tests/conformance/run.sh tests/zoo/run.sh
        tests/gpu/run.sh tests/conformance/run_gpu.sh tests/cross/run.sh tests/cortexm/run.sh tests/fuzz/run.sh
        tests/sanitize/run.sh tests/integration/*.sh)
[ -n "${RLX_SUITES:-}" ] && read -r -a suites <<<"$RLX_SUITES"
for script in "${suites[@]}"; do
    kind=plain
    case $script in tests/conformance/run*.sh) [ -z "${RLX_SANITIZED:-}" ] && kind=floor ;; esac
    if [ -f "$script" ]; then run_suite "${script#tests/}" $kind bash "$script"
    else missing "${script#tests/}" "$script is missing"; fi
done

# 3. The cuda target on the CPU shim (tests/shim/), after the zoo's export;
# not in a run that names its suites (RLX_SUITES: tests/sanitize/run.sh).
cuda_suites=(tests/shim/run.sh tests/gpu/run.sh tests/conformance/run_gpu.sh)
[ -n "${RLX_SUITES:-}" ] && cuda_suites=()
for script in "${cuda_suites[@]}"; do
    kind=plain
    case $script in tests/conformance/run*.sh) kind=floor ;; esac
    args=()
    [ "$script" = tests/shim/run.sh ] || args=(cuda)
    if [ -f "$script" ]; then run_suite "${script#tests/}${args:+ cuda}" $kind bash "$script" "${args[@]}"
    else missing "${script#tests/}" "$script is missing"; fi
done

# 4. The msl target through the MSL shim (tests/shim/msl/), after the zoo's
# export; not in a run that names its suites either.
msl_suites=(tests/shim/msl/run.sh tests/gpu/run.sh tests/conformance/run_gpu.sh)
[ -n "${RLX_SUITES:-}" ] && msl_suites=()
for script in "${msl_suites[@]}"; do
    kind=plain
    case $script in tests/conformance/run*.sh) kind=floor ;; esac
    args=()
    [ "$script" = tests/shim/msl/run.sh ] || args=(msl)
    if [ -f "$script" ]; then run_suite "${script#tests/}${args:+ msl}" $kind bash "$script" "${args[@]}"
    else missing "${script#tests/}" "$script is missing"; fi
done

echo
echo "======== summary ========"
printf '%s\n' "${summary[@]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
