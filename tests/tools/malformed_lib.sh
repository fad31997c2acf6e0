# malformed_lib.sh - sourced by tests/malformed/run.sh and
# tests/malformed_onnx/run.sh, which feed rlxc bad models and require a clean
# rejection.
#
# The sourcing script sets RLXC (and cds to the repository root) first.
# malformed_setup builds RLXC when it is one of the known build paths and
# missing, and makes the scratch directory; malformed_case NAME FILE WANT...
# runs `RLXC FILE -o TMP/out.c` and counts NAME as passed when rlxc exits 1
# with exactly one line on stderr that contains every WANT, no sanitizer
# report and nothing left in TMP, within MALFORMED_SECONDS (default 10) s and
# MALFORMED_MB (1024) MB: GNU time measures both; without a sanitizer
# (whose shadow memory needs terabytes of address space) `ulimit -v` holds
# rlxc to that much memory too, so a runaway case fails instead of
# swapping. malformed_fail NAME WHY counts a failure
# found by the suite itself; malformed_finish prints "N passed, N failed" and
# sets the exit status. When several checks fail, the reason printed is the
# first in this order: sanitizer, time or memory, exit status, stderr line
# count, then the message before leftover files, or the other way round when
# MALFORMED_LEFTOVERS_FIRST=1 (the ONNX suite's order).

# Prints the closing line of a suite that could not start, and exits 1.
malformed_abort() {
    echo "$1"
    echo "0 passed, 1 failed"
    exit 1
}

malformed_setup() {
    if [ ! -x "$RLXC" ]; then
        case "$RLXC" in
        build/asan/rlxc|./build/asan/rlxc)
            make -s B=build/asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
                build/asan/rlxc >&2 || malformed_abort "cannot build $RLXC" ;;
        build/rlxc|./build/rlxc)
            make -s build/rlxc >&2 || malformed_abort "cannot build $RLXC" ;;
        *)
            malformed_abort "no such compiler: $RLXC" ;;
        esac
    fi
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=86}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=87}
    [ -x /usr/bin/time ] || malformed_abort "GNU time (/usr/bin/time, package time) is needed to check time and memory"
    LIMIT_S=${MALFORMED_SECONDS:-10}
    LIMIT_MB=${MALFORMED_MB:-1024}
    VMEM_KB=unlimited
    if ! nm -D "$RLXC" 2>/dev/null | grep -q __asan_init && ! nm "$RLXC" 2>/dev/null | grep -q __asan_init; then
        VMEM_KB=$((LIMIT_MB * 1024))
    fi
    SCRATCH=$(mktemp -d)
    trap 'rm -rf "$SCRATCH"' EXIT
    pass=0
    fail=0
}

malformed_fail() {
    echo "FAIL $1: $2"
    fail=$((fail + 1))
}

malformed_case() {
    local name=$1 file=$2 want
    shift 2
    local out err status why="" lines message="" leftovers=""
    out=$(mktemp -d "$SCRATCH/out.XXXXXX")
    err=$SCRATCH/stderr
    # GNU time writes "SECONDS KB" as the last line of its own file
    (ulimit -v "$VMEM_KB"; exec /usr/bin/time -o "$SCRATCH/usage" -f '%e %M' \
        timeout -k 5 "$((LIMIT_S + 5))" "$RLXC" "$file" -o "$out/out.c") >/dev/null 2>"$err"
    status=$?
    local secs kb
    read -r secs kb < <(tail -n 1 "$SCRATCH/usage" 2>/dev/null)
    secs=${secs:-0} kb=${kb:-0}
    # a command GNU time ran that exited non-zero adds a line to its output file, not to err
    lines=$(wc -l < "$err")
    for want in "$@"; do
        grep -qF -- "$want" "$err" || { message="message lacks '$want': $(cat "$err")"; break; }
    done
    [ -n "$(ls -A "$out")" ] && leftovers="left files behind: $(ls -A "$out" | tr '\n' ' ')"
    if grep -q -e "ERROR: AddressSanitizer" -e "ERROR: LeakSanitizer" -e "runtime error:" "$err"; then
        why="sanitizer report: $(grep -m1 -e ERROR: -e 'runtime error:' "$err")"
    elif awk -v s="$secs" -v l="$LIMIT_S" 'BEGIN { exit !(s > l) }'; then
        why="took $secs s, more than $LIMIT_S s"
    elif [ "$kb" -gt $((LIMIT_MB * 1024)) ]; then
        why="used $((kb / 1024)) MB, more than $LIMIT_MB MB"
    elif [ "$status" -ne 1 ]; then
        why="exit status $status, expected 1: $(head -c 300 "$err")"
    elif [ "$lines" -ne 1 ] || [ "$(wc -c < "$err")" -le 1 ]; then
        why="expected exactly one line on stderr, got $lines: $(head -c 300 "$err" | tr '\n' '|')"
    elif [ "${MALFORMED_LEFTOVERS_FIRST:-0}" = 1 ]; then
        why=${leftovers:-$message}
    else
        why=${message:-$leftovers}
    fi
    if [ -z "$why" ]; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        malformed_fail "$name" "$why"
    fi
    rm -rf "$out"
}

malformed_finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
