#!/usr/bin/env bash
# noalloc.sh - NAME_run of generated models reaches no allocation or file call.
#
# Builds tests/tools/noalloc (a libclang call-graph checker) and runs it on
# generated models together with the runtime sources they link with, rooted
# at NAME_run. To prove that the check can fail, it must also reject: a copy
# of a generated model with a malloc injected into NAME_run, and a small
# fixture whose only paths to malloc/free are calls through function pointers.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
LLVM=/usr/lib/llvm-14
NOALLOC=$TMP/noalloc
if out=$($CC -std=c99 -Wall -Wextra -Werror -O1 -I$LLVM/include tests/tools/noalloc.c \
        -L$LLVM/lib -lclang -Wl,-rpath,$LLVM/lib -o "$NOALLOC" 2>&1); then
    pass "build noalloc"
else
    fail "build noalloc" "$out"
    finish
fi
RT=("${RT_RUN_SRCS[@]}")

# noalloc_ok NAME FILE.c ROOT
noalloc_ok() {
    local out
    if out=$("$NOALLOC" "$3" "$2" "${RT[@]}" -- -Iruntime_min -I"$(dirname "$2")" 2>&1); then
        pass "$1: $3 allocates nothing"
    else
        fail "$1: $3 allocates nothing" "$out"
    fi
}

cat >"$TMP/mlp.rlxg" <<'JSON'
{"rlxg": 1, "name": "mlp",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [2, 4]}],
 "outputs": [{"name": "y"}, {"name": "z"}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [4, 3], "data": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]},
             {"name": "b", "dtype": "f32", "shape": [3], "data": [0.5, -1, 2]}],
 "nodes": [{"name": "m", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["m"]},
           {"name": "h", "op": "Add", "inputs": ["m", "b"], "outputs": ["h"]},
           {"name": "y", "op": "Softmax", "inputs": ["h"], "outputs": ["y"]},
           {"name": "z", "op": "Tanh", "inputs": ["h"], "outputs": ["z"]}]}
JSON
mkdir -p "$TMP/mlp"
if out=$("$RLXC" "$TMP/mlp.rlxg" -o "$TMP/mlp/mlp.c" -n mlp 2>&1); then
    pass "compile mlp"
    noalloc_ok mlp "$TMP/mlp/mlp.c" mlp_run

    # The same file with a malloc injected at the top of mlp_run's body.
    bad=$TMP/mlp/bad.c
    awk '
        /^[A-Za-z_].*[ *]mlp_run *\(/ && !/;[[:space:]]*$/ { infn = 1 }
        infn && !done && index($0, "{") {
            i = index($0, "{")
            $0 = substr($0, 1, i) " { void *rlx_injected = malloc(16); free(rlx_injected); } " substr($0, i + 1)
            done = 1
        }
        { print }
    ' "$TMP/mlp/mlp.c" | sed '1i #include <stdlib.h>' >"$bad"
    if ! grep -q rlx_injected "$bad"; then
        fail "inject malloc into mlp_run" "no definition of mlp_run found"
    else
        out=$("$NOALLOC" mlp_run "$bad" "${RT[@]}" -- -Iruntime_min -I"$TMP/mlp" 2>&1)
        rc=$?
        if [ $rc -eq 1 ] && grep -q 'forbidden call malloc' <<<"$out" && grep -q 'mlp_run calls malloc' <<<"$out"; then
            pass "injected malloc in mlp_run is caught"
        else
            fail "injected malloc in mlp_run is caught" "exit $rc: $out"
        fi
    fi
else
    fail "compile mlp" "$out"
fi

# The Vulkan host's NAME_run (rlx_vk.c's rlx_vk_run): its Vulkan calls go
# through the loader's function pointers, outside this check; the host's
# own code must allocate nothing.
noalloc_ok "vulkan host" runtime_min/rlx_vk.c rlx_vk_run

# A fixture: allocations reachable only through function pointers. An
# indirect call reaches every address-taken function of its type, and only
# those (calling through a pointer of another type is undefined in C).
cat >"$TMP/fixture.c" <<'EOF_C'
#include <stdlib.h>
typedef int (*step_fn)(int);
typedef long (*lstep_fn)(long);
static int plain(int x) { return x + 1; }
static int grabs(int x) { void *p = malloc(8); free(p); return x; }
static long widen(long x) { return x * 2; }
static void *spawned(void *p) { free(p); return NULL; }
static const step_fn steps[] = {plain, grabs};
static const lstep_fn lsteps[] = {widen};
void *(*const thread_entry)(void *) = spawned;
int fixture_run(int i) { return steps[i](i) + plain(i); }
int fixture_clean(int i) { return plain(i); }
long fixture_typed(long i) { return lsteps[i](i); }
int fixture_thread(void *p) { return thread_entry(p) != NULL; }
EOF_C
out=$("$NOALLOC" fixture_run "$TMP/fixture.c" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q 'indirect call' <<<"$out" && grep -q 'may call grabs' <<<"$out"; then
    pass "call through a pointer is followed conservatively"
else
    fail "call through a pointer is followed conservatively" "exit $rc: $out"
fi
out=$("$NOALLOC" fixture_thread "$TMP/fixture.c" 2>&1); rc=$?
if [ $rc -eq 1 ] && grep -q 'may call spawned' <<<"$out" && ! grep -q 'grabs' <<<"$out"; then
    pass "call through a pointer reaches functions of its type only"
else
    fail "call through a pointer reaches functions of its type only" "exit $rc: $out"
fi
check "fixture without pointers passes" "$NOALLOC" fixture_clean "$TMP/fixture.c"
check "pointer of a clean type passes" "$NOALLOC" fixture_typed "$TMP/fixture.c"
out=$("$NOALLOC" no_such_run "$TMP/fixture.c" 2>&1); rc=$?
[ $rc -eq 2 ] && pass "unknown root is an error" || fail "unknown root is an error" "exit $rc: $out"

# The bundled examples and every e2e graph (tests/e2e/cases.py) that
# compiles; the e2e suite itself reports those that don't.
shopt -s nullglob
models=(examples/*.rlxg)
e2e_models "$TMP/e2e"
models+=("${E2E_MODELS[@]}")
i=0
for model in "${models[@]}"; do
    i=$((i + 1))
    name=${model#"$TMP/e2e/"}
    name=${name%/model.rlxg}
    mkdir -p "$TMP/m$i"
    if out=$("$RLXC" "$model" -o "$TMP/m$i/model.c" -n nam 2>&1); then
        noalloc_ok "$name" "$TMP/m$i/model.c" nam_run
    elif [ "$model" != "${model#"$TMP/e2e/"}" ]; then
        # tests/e2e/run.sh reports a case that doesn't compile.
        skip "$name" "does not compile: $(head -c 200 <<<"$out")"
    else
        fail "$name: compile" "$out"
    fi
done
finish
