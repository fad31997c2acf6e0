#!/usr/bin/env bash
# tests/sanitize/run.sh [BUILD FLAGS] - the suites under AddressSanitizer and UBSan.
#
# With BUILD and FLAGS (what `make test SANITIZE=address,undefined` passes:
# build/san-address-undefined, with rlxc, the unit tests and librlxrt.a
# built with FLAGS), runs tests/run_all.sh again over that build: every unit
# test, both malformed suites, the e2e suite (gcc and clang), the zoo (with
# its -march=native builds) and every 8th ONNX node test, each generated
# model compiled with FLAGS too (RLX_MODEL_CFLAGS, and a runtime library
# built with them: rlxc --build builds one for those flags into BUILD/cache).
#
# Without arguments (as run_all.sh runs it in `make test`, so CI runs it),
# builds build/san-address-undefined itself and runs a sample that adds a few
# minutes: every unit test but the AVX2/AVX-512 variants (SAMPLE_UNIT),
# both malformed suites, every e2e case with gcc only (SAMPLE_E2E names a
# subset), the zoo's six models without their -march=native builds
# (SAMPLE_ZOO) and every 8th node test (SAMPLE_NODE).
#
# Any sanitizer report fails: rlxc and the models abort on the first one
# (-fno-sanitize-recover=all, ASan/LSan exit 86, UBSan 87), which each suite
# counts as a failure, and run_all.sh looks for the reports' text in every
# suite's log (a Criterion test is judged by its assertions: a leak reported
# as its process exits would not fail it otherwise). lsan.supp holds the one
# suppression, the Vulkan validation layer's own leaks in test_vk. The malformed cases get 60 s and 4 GB each here
# (ASan's shadow memory and slower folds); their 10 s / 1 GB bound holds
# for the normal build. The closing line is run_all.sh's "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
SAMPLE_UNIT=${SAMPLE_UNIT:-$(cd tests/unit && ls test_*.c | sed 's/\.c$//' | tr '\n' ' ')}
SAMPLE_E2E=${SAMPLE_E2E:-}
SAMPLE_ZOO=${SAMPLE_ZOO:-mlp cnn lstm transformer resnet18 mobilenetv2}
SAMPLE_NODE=${SAMPLE_NODE:-8}

if [ $# -ge 2 ]; then
    B=$1 FLAGS=$2
    export E2E_COMPILERS=${E2E_COMPILERS:-gcc clang} RLX_CONFORMANCE_SAMPLE=8
else
    B=build/san-address-undefined
    FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    targets="$B/rlxc $B/librlxrt.a"
    for t in $SAMPLE_UNIT; do targets="$targets $B/unit/$t"; done
    echo "sanitize: building $B (rlxc, librlxrt.a, $(wc -w <<<"$SAMPLE_UNIT") unit tests)"
    if ! out=$(make -s -j2 SANITIZE=address,undefined $targets 2>&1); then
        echo "sanitize: make SANITIZE=address,undefined failed: $(tail -n 5 <<<"$out")"
        echo "0 passed, 1 failed"
        exit 1
    fi
    export RLX_UNIT=$SAMPLE_UNIT E2E_COMPILERS=gcc E2E_CASES=$SAMPLE_E2E ZOO_MODELS=$SAMPLE_ZOO ZOO_NATIVE=0 \
        RLX_CONFORMANCE_SAMPLE=$SAMPLE_NODE
fi
export RLX_SANITIZED=1 RLX_BUILD=$B RLXC=$PWD/$B/rlxc RLX_MODEL_CFLAGS=$FLAGS RLXC_CACHE_DIR=$PWD/$B/cache \
    RLXC_RUNTIME_DIR=$PWD/runtime_min
export ASAN_OPTIONS=detect_leaks=1:exitcode=86 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=87
export LSAN_OPTIONS=suppressions=$PWD/tests/sanitize/lsan.supp:print_suppressions=0
# test_vk's Vulkan layers stay mapped to exit, so lsan.supp can name them
mkdir -p "$B"
if ! cc -shared -fPIC -o "$B/keep_loaded.so" tests/sanitize/keep_loaded.c; then
    echo "sanitize: cannot build $B/keep_loaded.so"
    echo "0 passed, 1 failed"
    exit 1
fi
export RLX_SAN_KEEP_LOADED=$PWD/$B/keep_loaded.so
export MALFORMED_SECONDS=60 MALFORMED_MB=4096 MALFORMED_GEN=$B/malformed MALFORMED_ONNX_GEN=$B/malformed_onnx
export RLX_SUITES="tests/malformed/run.sh tests/malformed_onnx/run.sh tests/e2e/run.sh tests/zoo/run.sh tests/conformance/run.sh"
exec bash tests/run_all.sh
