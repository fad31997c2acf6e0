#!/usr/bin/env bash
# run.sh - compiles the PyTorch model zoo with rlxc and checks it against PyTorch.
#
# tests/zoo/export.py writes build/zoo/NAME/{model.onnx,in_0.npy,expected_0.npy,
# ops.txt}; it is re-run only when export.py is newer than the last export
# (build/zoo/.stamp). Each model is then built twice:
#   - with rlxc's default flags (`build/rlxc model.onnx --build -o
#     build/zoo/NAME/model`), whose runtime picks its kernels' instruction set
#     from CPUID; it runs once as it is and once forced onto each instruction
#     set this CPU has (RLX_ISA=portable, avx2, avx512), and the default run
#     must give the widest one's bits;
#   - with CFLAGS="-O2 -march=native" (model-native), which must give exactly
#     the bits of the default build on the widest instruction set.
# Every run's output is compared with PyTorch's (compare.py: rtol 1e-3, atol
# 1e-4). The MLP and LSTM binaries must hold at most 64 KB of code (the
# `size` text column: code, read-only data and unwind tables), with only the
# kernels their schedules call linked in. One line per check (result, max
# error or the first error line, the ONNX ops), then `N passed, N failed`.
# Exit status 1 if anything failed. ZOO_MODELS picks models, ZOO_NATIVE=0
# skips the -march=native builds, RLX_MODEL_CFLAGS adds flags to every build
# (tests/sanitize/run.sh gives the sanitizers), RLXC names the compiler.
set -u
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
RLXC=${RLXC:-build/rlxc}
Z=build/zoo
MODELS=${ZOO_MODELS:-mlp cnn resnet18 mobilenetv2 transformer lstm}
CODE_LIMIT=65536
export RLXC_CACHE_DIR=${RLXC_CACHE_DIR:-$PWD/build/cache}
pass=0 fail=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# the instruction sets this CPU runs (what rlx_isa.c should find), widest last
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { for f in "$@"; do grep -qw "$f" <<<"$flags" || return 1; done; }
ISAS=portable
if [ "$(uname -m)" = x86_64 ] && has avx avx2 fma f16c; then
    ISAS="$ISAS avx2"
    has avx512f avx512cd avx512vl avx512bw avx512dq && ISAS="$ISAS avx512"
fi
WIDEST=${ISAS##* }

if [ ! -f $Z/.stamp ] || [ tests/zoo/export.py -nt $Z/.stamp ]; then
    rm -rf $Z && mkdir -p $Z
    if $PY tests/zoo/export.py $Z; then touch $Z/.stamp
    else echo "zoo: export.py failed"; fi
fi

# run NAME LABEL EXE OUT [ENV...]: runs EXE on the model's input, compares with PyTorch
run() {
    local name=$1 label=$2 exe=$3 out=$4; shift 4
    local d=$Z/$name msg
    rm -f "$out"
    if ! msg=$(env "$@" timeout 120 "$exe" -i $d/in_0.npy -o "$out" 2>&1); then
        bad "$name ($label): run: $(head -n 1 <<<"$msg")   [ops: $ops]"; return 1
    fi
    if msg=$($PY tests/zoo/compare.py $d/expected_0.npy "$out"); then
        ok "$name ($label): $msg   [ops: $ops]"
    else
        bad "$name ($label): $msg   [ops: $ops]"; return 1
    fi
}

for name in $MODELS; do
    d=$Z/$name
    ops=$(cat $d/ops.txt 2>/dev/null || echo '?')
    if [ ! -f $d/model.onnx ]; then bad "$name: not exported"; continue; fi
    rm -f $d/model $d/model-native
    cfl=()
    [ -n "${RLX_MODEL_CFLAGS:-}" ] && cfl=("CFLAGS=$RLX_MODEL_CFLAGS")
    if ! msg=$(env -u CFLAGS "${cfl[@]}" timeout 600 "$RLXC" $d/model.onnx --build \
            -o $d/model --report $d/report 2>&1); then
        bad "$name: rlxc: $(head -n 1 <<<"$msg")   [ops: $ops]"; continue
    fi
    for isa in $ISAS; do run $name "$isa" $d/model $d/out_$isa.npy RLX_ISA=$isa; done
    if run $name "default: $WIDEST" $d/model $d/out_0.npy; then
        if cmp -s $d/out_0.npy $d/out_$WIDEST.npy; then ok "$name: the default run is RLX_ISA=$WIDEST's, bit for bit"
        else bad "$name: the default run differs from RLX_ISA=$WIDEST"; fi
    fi
    # (not under sanitizers, whose instrumentation is most of the code)
    [ -n "${RLX_SANITIZED:-}" ] || case $name in mlp | lstm)
        text=$(size $d/model | awk 'NR == 2 { print $1 }')
        if [ -n "$text" ] && [ "$text" -le $CODE_LIMIT ]; then ok "$name: $text bytes of code (at most $CODE_LIMIT)"
        else bad "$name: ${text:-?} bytes of code, more than $CODE_LIMIT ($(grep -A8 'code size' $d/report.txt | tr -s ' ' | tr '\n' ';'))"; fi ;;
    esac
    [ "${ZOO_NATIVE:-1}" = 1 ] || continue
    if ! msg=$(CFLAGS="-O2 -march=native ${RLX_MODEL_CFLAGS:-}" timeout 600 "$RLXC" $d/model.onnx --build \
            -o $d/model-native 2>&1); then
        bad "$name (native): rlxc: $(head -n 1 <<<"$msg")   [ops: $ops]"; continue
    fi
    if run $name native $d/model-native $d/out_native.npy; then
        if cmp -s $d/out_native.npy $d/out_$WIDEST.npy; then ok "$name: -march=native gives RLX_ISA=$WIDEST's bits"
        else bad "$name: -march=native differs from the default build's RLX_ISA=$WIDEST"; fi
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
