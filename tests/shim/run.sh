#!/usr/bin/env bash
# run.sh - the CPU shim's own tests (tests/shim/test_shim.cc over
# test_kernels.cu), built three ways:
#
#   1. g++ -O2 with the assembly fiber switch (x86-64), run in the order
#      RLX_SHIM_ORDER gives (forward, reverse and shuffle are each checked
#      to be picked up from the environment);
#   2. -DGPU_FIBER_UCONTEXT: the portable ucontext switch;
#   3. -fsanitize=address,undefined (ucontext, which ASan follows across
#      stacks): no report may appear.
#
# Where CUDA is installed ($CUDA_HOME, default /usr/local/cuda), the same
# test_kernels.cu must also compile with nvcc to PTX and pass ptxas for
# sm_80 and sm_90 (so the shim runs real CUDA, not a dialect of its own);
# elsewhere that check prints a "skip" line. Closing line: N passed, N failed.
source "$(dirname "$0")/../tools/testlib.sh"
CXX=${CXX:-g++}
S=tests/shim
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
FLAGS=(-std=c++17 -g -Wall -Wextra -Werror -I"$S")

# build NAME EXTRA_FLAGS...: builds $TMP/NAME; fails the check if it does not compile
build() {
    local name=$1; shift
    local out
    if out=$("$CXX" "${FLAGS[@]}" "$@" "$S/test_shim.cc" "$S/gpu_fiber.cc" -o "$TMP/$name" 2>&1); then return 0; fi
    fail "build $name" "$out"
    return 1
}

# run_tests NAME ARGS...: one check per build, its failing lines shown
run_tests() {
    local name=$1; shift
    local out
    out=$("$@" 2>&1)
    local rc=$? line
    line=$(tail -n 1 <<<"$out")
    if [ $rc -eq 0 ] && grep -Eq '^[0-9]+ passed, 0 failed$' <<<"$line" && ! grep -q "ERROR: AddressSanitizer\|runtime error:" <<<"$out"; then
        pass "$name: $line"
    else
        fail "$name" "exit $rc: $(grep -E 'FAIL|ERROR|runtime error' <<<"$out" | head -n 5) $line"
    fi
}

if build shim -O2; then
    run_tests "shim (assembly switch)" "$TMP/shim"
    for o in forward reverse shuffle; do
        got=$(RLX_SHIM_ORDER=$o "$TMP/shim" --order 2>&1)
        if [ "$got" = "$o" ]; then pass "RLX_SHIM_ORDER=$o selects the $o order"
        else fail "RLX_SHIM_ORDER=$o" "got '$got'"; fi
    done
    if out=$(RLX_SHIM_ORDER=backwards "$TMP/shim" --order 2>&1); then fail "RLX_SHIM_ORDER=backwards is refused" "$out"
    else pass "RLX_SHIM_ORDER=backwards is refused ($(head -n 1 <<<"$out"))"; fi
fi
if build shim_ucontext -O2 -DGPU_FIBER_UCONTEXT; then
    run_tests "shim (ucontext switch)" "$TMP/shim_ucontext" --no-sweep
fi
if build shim_asan -O1 -fsanitize=address,undefined -fno-omit-frame-pointer; then
    run_tests "shim under ASan and UBSan" env ASAN_OPTIONS=detect_leaks=1 "$TMP/shim_asan" --no-sweep
fi

NVCC=$CUDA_HOME/bin/nvcc
PTXAS=$CUDA_HOME/bin/ptxas
if [ -x "$NVCC" ] && [ -x "$PTXAS" ]; then
    for arch in sm_80 sm_90; do
        if out=$("$NVCC" -arch="$arch" -ptx "$S/test_kernels.cu" -o "$TMP/k_$arch.ptx" 2>&1) &&
            out=$("$PTXAS" -arch="$arch" "$TMP/k_$arch.ptx" -o "$TMP/k_$arch.cubin" 2>&1); then
            pass "test_kernels.cu compiles with nvcc and passes ptxas for $arch"
        else
            fail "test_kernels.cu with nvcc/ptxas for $arch" "$out"
        fi
    done
else
    skip "test_kernels.cu with nvcc and ptxas" "no CUDA toolkit at $CUDA_HOME"
fi
finish
