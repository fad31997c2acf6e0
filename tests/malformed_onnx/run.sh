#!/bin/bash
# tests/malformed_onnx/run.sh [RLXC] - every malformed ONNX model must be rejected cleanly.
#
# make_cases.py writes the models into $MALFORMED_ONNX_GEN (default
# build/malformed_onnx). For each line "FILE<TAB>SUBSTRING[<TAB>SUBSTRING...]"
# of expect.txt, runs `RLXC FILE -o TMP/out.c` and requires: exit status 1,
# exactly one line on stderr containing every SUBSTRING, no sanitizer report,
# and nothing left in TMP. A generated file without a line in expect.txt fails
# too, so no case goes unchecked. RLXC defaults to build/rlxc; build/asan/rlxc
# (the AddressSanitizer+UBSan build) is built here if asked for and missing.
# Prints one line per case, then "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
HERE=tests/malformed_onnx
RLXC=${1:-build/rlxc}
GEN=${MALFORMED_ONNX_GEN:-build/malformed_onnx}

if [ ! -x "$RLXC" ]; then
    case "$RLXC" in
    build/asan/rlxc|./build/asan/rlxc)
        make -s B=build/asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
            build/asan/rlxc >&2 || { echo "cannot build $RLXC"; echo "0 passed, 1 failed"; exit 1; } ;;
    build/rlxc|./build/rlxc)
        make -s build/rlxc >&2 || { echo "cannot build $RLXC"; echo "0 passed, 1 failed"; exit 1; } ;;
    *)
        echo "no such compiler: $RLXC"; echo "0 passed, 1 failed"; exit 1 ;;
    esac
fi
rm -rf "$GEN"
/usr/bin/python3 "$HERE/make_cases.py" "$GEN" || { echo "make_cases.py failed"; echo "0 passed, 1 failed"; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:exitcode=87}

SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
pass=0
fail=0
listed=" "
while IFS=$'\t' read -r -a fields; do
    name=${fields[0]:-}
    case "$name" in ''|'#'*) continue ;; esac
    listed="$listed$name "
    file=$GEN/$name
    if [ ! -e "$file" ]; then
        echo "FAIL $name: case file missing"
        fail=$((fail + 1))
        continue
    fi
    out=$(mktemp -d "$SCRATCH/out.XXXXXX")
    err=$SCRATCH/stderr
    timeout 60 "$RLXC" "$file" -o "$out/out.c" >/dev/null 2>"$err"
    status=$?
    why=""
    lines=$(wc -l < "$err")
    if grep -q -e "ERROR: AddressSanitizer" -e "ERROR: LeakSanitizer" -e "runtime error:" "$err"; then
        why="sanitizer report: $(grep -m1 -e ERROR: -e 'runtime error:' "$err")"
    elif [ "$status" -ne 1 ]; then
        why="exit status $status, expected 1: $(head -c 300 "$err")"
    elif [ "$lines" -ne 1 ] || [ "$(wc -c < "$err")" -le 1 ]; then
        why="expected exactly one line on stderr, got $lines: $(head -c 300 "$err" | tr '\n' '|')"
    elif [ -n "$(ls -A "$out")" ]; then
        why="left files behind: $(ls -A "$out" | tr '\n' ' ')"
    else
        for want in "${fields[@]:1}"; do
            grep -qF -- "$want" "$err" || { why="message lacks '$want': $(cat "$err")"; break; }
        done
    fi
    if [ -z "$why" ]; then
        echo "PASS $name"
        pass=$((pass + 1))
    else
        echo "FAIL $name: $why"
        fail=$((fail + 1))
    fi
    rm -rf "$out"
done < "$HERE/expect.txt"
for file in "$GEN"/*; do
    name=$(basename "$file")
    case "$listed" in *" $name "*) ;; *) echo "FAIL $name: no line in expect.txt"; fail=$((fail + 1)) ;; esac
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
