# testlib.sh - sourced by the integration suites (tests/integration/*.sh).
#
# Each suite counts its checks with `pass NAME` / `fail NAME WHY` (and
# `skip NAME WHY`) and ends with `finish`, which prints the closing line
# `N passed, N failed` (`, N skipped` when some were) that
# tests/run_all.sh and CI read, and exits 1 if any check failed. Paths are
# relative to the repository root, where the suite cds to. TMP is a private
# scratch directory, removed on exit.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$PWD
RLXC=${RLXC:-$ROOT/build/rlxc}
CC=${CC:-cc}
PY=/usr/bin/python3
NPASS=0
NFAIL=0
NSKIP=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rlxc-it.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

pass() { NPASS=$((NPASS + 1)); echo "ok   $1"; }
fail() { NFAIL=$((NFAIL + 1)); echo "FAIL $1: ${2:-}"; }
skip() { NSKIP=$((NSKIP + 1)); echo "skip $1: ${2:-}"; }
# check NAME CMD...: passes if CMD succeeds; on failure shows its output.
check() {
    local name=$1; shift
    local out
    if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "exit $? from: $* ${out:+
$out}"; fi
}
finish() {
    if [ "$NSKIP" -gt 0 ]; then echo "$NPASS passed, $NFAIL failed, $NSKIP skipped"
    else echo "$NPASS passed, $NFAIL failed"; fi
    [ "$NFAIL" -eq 0 ]
    exit $?
}
# need_rlxc: ends the suite with one failure if the compiler isn't built.
need_rlxc() {
    if [ ! -x "$RLXC" ]; then
        fail "rlxc" "$RLXC not built (run make)"
        finish
    fi
}
# e2e_models DIR [CASE...]: writes the e2e cases (tests/e2e/cases.py) into
# DIR and fills the array E2E_MODELS with their model.rlxg paths, in case
# order. A missing or failing generator is one failure and an empty list.
E2E_MODELS=()
e2e_models() {
    local dir=$1; shift
    local out
    if ! out=$($PY tests/e2e/cases.py "$dir" "$@" 2>&1 >/dev/null); then
        fail "generate e2e cases" "tests/e2e/cases.py: $out"
        return
    fi
    local name
    while IFS= read -r name; do
        [ -f "$dir/$name/model.rlxg" ] && E2E_MODELS+=("$dir/$name/model.rlxg")
    done <"$dir/cases.txt"
    [ ${#E2E_MODELS[@]} -gt 0 ] || fail "generate e2e cases" "no cases written"
}
# The runtime: RT_LIB, the library `make` builds and generated models link
# (rlxc --build links it, or one from the cache for other compilers and
# flags: RLXC_CACHE_DIR keeps that cache inside the build tree); RT_RUN_SRCS,
# its sources without the --emit-main driver and its .npy I/O, which
# NAME_run never calls (the no-allocation checker reads them).
RT_LIB=$ROOT/build/librlxrt.a
export RLXC_CACHE_DIR=${RLXC_CACHE_DIR:-$ROOT/build/cache}
RT_RUN_SRCS=()
for f in runtime_min/*.c; do
    case $f in runtime_min/rlx_main.c | runtime_min/rlx_npy.c) ;; *) RT_RUN_SRCS+=("$f") ;; esac
done
