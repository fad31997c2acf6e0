#!/bin/bash
# run.sh - rlxc's end-to-end suite: compile, build, run, compare with numpy.
#
#   tests/e2e/run.sh [RLXC] [CASE...]
#
# cases.py writes every case (model.rlxg, in_K.npy, expected_K.npy, tol.json)
# into a fresh build/e2e/run.XXXXXX ($E2E_DIR instead of build/e2e if set;
# $TMPDIR/rlxc-e2e if build/ is not writable), kept only if something failed.
# Then, for each case and each compiler in $E2E_COMPILERS (default "gcc clang
# gcc-native", the last gcc with -march=native, which builds its own runtime
# library once into the cache, before the cases), a worker (this script with --one) runs
#     CC=cc CFLAGS="-std=c99 -O1 -Wall -Wextra -Werror" rlxc model.rlxg --build -o DIR/cc/model
#     DIR/cc/model -i in_0.npy ... -o out_0.npy ...
#     compare.py DIR DIR/cc
# and leaves one result line in DIR/cc/result. Workers run two at a time;
# the lines are printed afterwards in case order, so the output is the same
# from run to run. The last line is "N passed, N failed" (case x compiler);
# the exit status is 1 if anything failed. RLXC in the environment stands
# for the RLXC argument, E2E_CASES for the CASE arguments, RLX_MODEL_CFLAGS
# adds flags to every model's build (tests/sanitize/run.sh gives the
# sanitizers).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
PY=/usr/bin/python3
# runtime libraries for the other compilers and flags are built once, into
# the build tree's cache (rlxc --build; concurrent workers wait for one)
export RLXC_CACHE_DIR=${RLXC_CACHE_DIR:-$root/build/cache}

# --- worker: one case with one compiler -------------------------------------
if [ "${1:-}" = "--one" ]; then
    out=$2 rlxc=$3 name=$4 cc=$5
    d=$out/$name w=$out/$name/$cc
    rm -rf "$w" && mkdir -p "$w/tmp"
    # the compilers' temporary files stay private to this job: a shared /tmp
    # once lost an object file between compiling and linking
    export TMPDIR=$w/tmp
    spec=$cc
    result() { printf '%-4s %s (%s) %s\n' "$1" "$name" "$spec" "$2" > "$w/result"; exit 0; }
    firstline() { grep -m1 -v '^[[:space:]]*$' "$1" | cut -c1-300; }
    # NAME-native: compiler NAME targeting this machine (-march=native), so
    # the runtime's AVX2 / AVX-512 paths run too, not only the portable C
    native=
    case $cc in *-native) cc=${cc%-native} native=-march=native ;; esac
    command -v "$cc" > /dev/null || result FAIL "compiler $cc not found"
    CC=$cc CFLAGS="-std=c99 -O1 $native -Wall -Wextra -Werror ${RLX_MODEL_CFLAGS:-}" timeout 300 \
        "$rlxc" "$d/model.rlxg" --build -o "$w/model" > "$w/rlxc.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && result FAIL "rlxc --build timed out"
    [ $rc -ne 0 ] && result FAIL "rlxc --build exit $rc: $(firstline "$w/rlxc.log")"
    [ -x "$w/model" ] || result FAIL "rlxc --build exit 0 but wrote no executable $w/model"
    args=()
    k=0
    while [ -e "$d/in_$k.npy" ]; do args+=(-i "$d/in_$k.npy"); k=$((k + 1)); done
    k=0
    while [ -e "$d/expected_$k.npy" ]; do args+=(-o "$w/out_$k.npy"); k=$((k + 1)); done
    timeout 60 "$w/model" "${args[@]}" > "$w/run.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && result FAIL "model timed out"
    [ $rc -gt 128 ] && result FAIL "model killed by signal $((rc - 128)): $(firstline "$w/run.log")"
    [ $rc -ne 0 ] && result FAIL "model exit $rc: $(firstline "$w/run.log")"
    msg=$($PY "$here/compare.py" "$d" "$w" 2>&1)
    rc=$?
    msg=$(printf '%s' "$msg" | tail -n 1)
    [ $rc -eq 0 ] && result ok "$msg"
    result FAIL "$msg"
fi

# --- driver ------------------------------------------------------------------
rlxc=${1:-${RLXC:-$root/build/rlxc}}
[ $# -gt 0 ] && shift
case $rlxc in
    /*) ;;
    */*) rlxc=$PWD/$rlxc ;;
    *) rlxc=$(command -v "$rlxc" || echo "$rlxc") ;;
esac
if [ ! -x "$rlxc" ]; then
    echo "FAIL e2e: no rlxc executable at $rlxc (run make first)"
    echo "0 passed, 1 failed"
    exit 1
fi

# Each run works in its own directory, so that two runs at once (a person and
# `make test`, say) never delete each other's files. It is removed when
# everything passed and kept for inspection otherwise; leftovers older than an
# hour are removed at the start.
base=${E2E_DIR:-$root/build/e2e}
if ! mkdir -p "$base" 2> /dev/null || [ ! -w "$base" ]; then
    base=${TMPDIR:-/tmp}/rlxc-e2e
    mkdir -p "$base"
fi
find "$base" -mindepth 1 -maxdepth 1 -name 'run.*' -type d -mmin +60 -exec rm -rf {} + 2> /dev/null
out=$(mktemp -d "$base/run.XXXXXX")
[ $# -eq 0 ] && [ -n "${E2E_CASES:-}" ] && set -- $E2E_CASES   # a sample (tests/sanitize/run.sh)
if ! $PY "$here/cases.py" "$out" "$@" > "$out/cases.log" 2>&1 || [ ! -s "$out/cases.txt" ]; then
    echo "FAIL e2e: cases.py failed: $(tail -n 1 "$out/cases.log")"
    echo "0 passed, 1 failed"
    exit 1
fi

compilers=${E2E_COMPILERS:-gcc clang gcc-native}
# The runtime library for each compiler's flags is built into the cache once,
# here, before the cases: a case's 300 s would include waiting for that build,
# and the sanitized clang build of it (tests/sanitize/run.sh) takes minutes.
# Each compiler builds the first case with the workers' flags; a failure
# shows again in the cases themselves.
first=$(head -n 1 "$out/cases.txt")
for cc in $compilers; do
    c=$cc native=
    case $cc in *-native) c=${cc%-native} native=-march=native ;; esac
    command -v "$c" > /dev/null || continue
    mkdir -p "$out/warm/$cc/tmp"
    TMPDIR=$out/warm/$cc/tmp CC=$c CFLAGS="-std=c99 -O1 $native -Wall -Wextra -Werror ${RLX_MODEL_CFLAGS:-}" \
        timeout 1800 "$rlxc" "$out/$first/model.rlxg" --build -o "$out/warm/$cc/model" > "$out/warm/$cc/rlxc.log" 2>&1 &
done
wait
while read -r name; do
    for cc in $compilers; do echo "$name $cc"; done
done < "$out/cases.txt" | xargs -P 2 -L 1 bash "$here/run.sh" --one "$out" "$rlxc"

passed=0 failed=0
while read -r name; do
    for cc in $compilers; do
        r=$out/$name/$cc/result
        if [ -s "$r" ]; then line=$(cat "$r"); else line="FAIL $name ($cc) worker left no result"; fi
        echo "$line"
        case $line in ok*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
    done
done < "$out/cases.txt"
if [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; then
    rm -rf "$out"
else
    echo "e2e: case files and build logs kept in $out"
    [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ] && failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
