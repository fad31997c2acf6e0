#!/bin/bash
# tests/malformed_onnx/run.sh [RLXC] - every malformed ONNX model must be rejected cleanly.
#
# make_cases.py writes the models into $MALFORMED_ONNX_GEN (default
# build/malformed_onnx). For each line "FILE<TAB>SUBSTRING[<TAB>SUBSTRING...]"
# of expect.txt, runs `RLXC FILE -o TMP/out.c` and requires: exit status 1,
# exactly one line on stderr containing every SUBSTRING, no sanitizer report,
# and nothing left in TMP. A generated file without a line in expect.txt fails
# too, so no case goes unchecked. RLXC (the argument, else $RLXC) defaults to build/rlxc; build/asan/rlxc
# (the AddressSanitizer+UBSan build) is built here if asked for and missing.
# Prints one line per case, then "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
HERE=tests/malformed_onnx
RLXC=${1:-${RLXC:-build/rlxc}}
GEN=${MALFORMED_ONNX_GEN:-build/malformed_onnx}

MALFORMED_LEFTOVERS_FIRST=1
. tests/tools/malformed_lib.sh
malformed_setup
rm -rf "$GEN"
/usr/bin/python3 "$HERE/make_cases.py" "$GEN" || malformed_abort "make_cases.py failed"

listed=" "
while IFS=$'\t' read -r -a fields; do
    name=${fields[0]:-}
    case "$name" in ''|'#'*) continue ;; esac
    listed="$listed$name "
    file=$GEN/$name
    if [ ! -e "$file" ]; then
        malformed_fail "$name" "case file missing"
        continue
    fi
    malformed_case "$name" "$file" "${fields[@]:1}"
done < "$HERE/expect.txt"
for file in "$GEN"/*; do
    name=$(basename "$file")
    case "$listed" in *" $name "*) ;; *) malformed_fail "$name" "no line in expect.txt" ;; esac
done
malformed_finish
