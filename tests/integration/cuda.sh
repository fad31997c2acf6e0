#!/usr/bin/env bash
# cuda.sh - the cuda target's own checks (its differential suite is
# tests/gpu/run.sh cuda, its node tests tests/conformance/run.py --target cuda):
#
#   1. without NVRTC (RLXC_NVRTC naming no library), --target cuda is one
#      line naming what is missing, exit 1, and no output file;
#   2. a kernel NVRTC rejects (a stand-in NVRTC that rejects a chosen line of
#      OUT.cu, tests/shim/nvrtc_stub.c) is an internal error naming the
#      kernel whose part holds that line;
#   3. every module rlxc generates (the bundled examples, the GPU differential
#      cases, the zoo where tests/zoo/run.sh exported it) passes ptxas for
#      sm_80 and sm_90, the default sm_80 PTX for both, --cuda-arch sm_90 for
#      sm_90; and OUT.c compiles with gcc and clang -Wall -Wextra -Werror;
#   4. the same model compiles to the same bytes twice;
#   5. the host's statuses and results through the stand-in driver
#      (cuda_status.c): no driver or the toolkit's stub library, no device,
#      a device older than the PTX, a driver older than the PTX, out of
#      device memory, a run before the weights, runs on the host's and on the
#      caller's stream, a Gather index out of range through the status word;
#   6. --cuda-cubin: the cubin is what an sm_90 device loads (and is ELF for
#      sm_90), an sm_100 device the PTX, and both give the C target's bits;
#   7. --emit-main --bench through the stand-in names the device.
# Where NVRTC is missing (no CUDA toolkit), 2-7 are one "skip" line; where
# ptxas is missing, 3's ptxas checks are. Closing line: N passed, N failed.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
PTXAS=$CUDA_HOME/bin/ptxas
EX=examples/shapes.rlxg
SAMPLE=examples/samples/plus.npy

# 1: no NVRTC
out=$(RLXC_NVRTC=/nonexistent/libnvrtc.so.13 "$RLXC" $EX --target cuda -o "$TMP/nonv/m" 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "needs NVRTC.*/nonexistent/libnvrtc.so.13" <<<"$out" &&
    ! ls "$TMP"/nonv* >/dev/null 2>&1; then
    pass "without NVRTC: one line, exit 1, nothing written ($(cut -c1-100 <<<"$out")...)"
else
    fail "without NVRTC: one line, exit 1, nothing written" "exit $rc: $out"
fi

if ! out=$("$RLXC" $EX --target cuda -o "$TMP/probe" 2>&1); then
    if grep -q "needs NVRTC" <<<"$out"; then
        skip "the cuda target's checks" "skipped: no NVRTC on this machine: $(head -n 1 <<<"$out" | cut -c1-200)"
    else
        fail "compile the example for cuda" "$out"
    fi
    finish
fi

# 2: a kernel NVRTC rejects
stub=$TMP/libnvrtc_stub.so
if out=$(${CC:-cc} -shared -fPIC -O1 -Wall -Wextra -Werror tests/shim/nvrtc_stub.c -o "$stub" 2>&1); then
    line=$(grep -n '^namespace k1_pool_ {' "$TMP/probe.cu" | cut -d: -f1)
    out=$(RLXC_NVRTC=$stub RLX_NVRTC_STUB_LINE=$((line + 3)) "$RLXC" $EX --target cuda -o "$TMP/rej/m" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && grep -q "internal error.*cuda: kernel 'k1_pool' does not compile with NVRTC: m.cu($((line + 3))): error" <<<"$out" &&
        ! ls "$TMP"/rej/* >/dev/null 2>&1; then
        pass "a kernel NVRTC rejects is an internal error naming it ($(grep -o "kernel 'k1_pool'.*" <<<"$out" | cut -c1-80))"
    else
        fail "a kernel NVRTC rejects names the kernel" "exit $rc: $out"
    fi
else
    fail "build the NVRTC stub" "$out"
fi

# 3 + 4: every module through ptxas; OUT.c with gcc and clang; the same bytes twice
models=("$EX" examples/digits/model.onnx)
if out=$($PY tests/gpu/cases.py "$TMP/cases" 2>&1); then
    while read -r n; do models+=("$TMP/cases/$n/model.rlxg"); done <"$TMP/cases/cases.txt"
else
    fail "tests/gpu/cases.py" "$out"
fi
for z in mlp cnn resnet18 mobilenetv2 transformer lstm; do
    if [ -f build/zoo/$z/model.onnx ]; then models+=(build/zoo/$z/model.onnx)
    else skip "zoo $z through ptxas" "build/zoo/$z not exported (tests/zoo/run.sh)"; fi
done
nmod=0 bad=()
for m in "${models[@]}"; do
    o=$TMP/mods/$nmod
    mkdir -p "$o/again"
    nmod=$((nmod + 1))
    dims=()
    case $m in */digits/model.onnx) dims=(--dim batch=32) ;; esac   # its batch is symbolic
    if ! out=$("$RLXC" "$m" "${dims[@]}" --target cuda -o "$o/m" 2>&1) ||
        ! out=$("$RLXC" "$m" "${dims[@]}" --target cuda -o "$o/again/m" 2>&1) ||
        ! out=$($PY tests/shim/ptx_of.py "$o/m.c" "$o/m.ptx" 2>&1) ||
        ! out=$("$RLXC" "$m" "${dims[@]}" --target cuda --cuda-arch sm_90 -o "$o/m90" 2>&1) ||
        ! out=$($PY tests/shim/ptx_of.py "$o/m90.c" "$o/m90.ptx" 2>&1); then
        bad+=("$m: $(head -n 1 <<<"$out")")
        continue
    fi
    for f in c cu h weights; do cmp -s "$o/m.$f" "$o/again/m.$f" || bad+=("$m: m.$f differs between two runs"); done
    if [ -x "$PTXAS" ]; then
        for arch in sm_80 sm_90; do
            out=$("$PTXAS" -arch=$arch "$o/m.ptx" -o "$o/m_$arch.cubin" 2>&1) || bad+=("$m: ptxas $arch: $(head -n 1 <<<"$out")")
        done
        out=$("$PTXAS" -arch=sm_90 "$o/m90.ptx" -o "$o/m90.cubin" 2>&1) || bad+=("$m: sm_90 PTX, ptxas: $(head -n 1 <<<"$out")")
    fi
done
if [ -x "$PTXAS" ]; then
    if [ ${#bad[@]} -eq 0 ]; then pass "$nmod modules: the same bytes twice, ptxas for sm_80 and sm_90 accepts each"
    else fail "$nmod modules through ptxas, twice the same bytes" "${#bad[@]} problems: ${bad[0]}"; fi
else
    skip "ptxas for sm_80 and sm_90" "skipped: no ptxas at $PTXAS"
    if [ ${#bad[@]} -eq 0 ]; then pass "$nmod modules: the same bytes twice"
    else fail "$nmod modules compile, twice the same bytes" "${#bad[@]} problems: ${bad[0]}"; fi
fi
for cc in gcc clang; do
    command -v $cc >/dev/null || { skip "OUT.c with $cc" "$cc not installed"; continue; }
    n=0 cbad=
    for ((i = 0; i < nmod; i++)); do
        [ -f "$TMP/mods/$i/m.c" ] || continue
        n=$((n + 1))
        out=$($cc -std=c99 -Wall -Wextra -Werror -Iruntime_min -c "$TMP/mods/$i/m.c" -o "$TMP/mods/$i/m_$cc.o" 2>&1) ||
            { cbad="$TMP/mods/$i: $(head -n 2 <<<"$out")"; break; }
    done
    if [ -z "$cbad" ]; then pass "$n generated OUT.c compile with $cc -std=c99 -Wall -Wextra -Werror"
    else fail "OUT.c with $cc" "$cbad"; fi
done

# the stand-in driver
if ! out=$(bash tests/shim/build.sh 2>&1); then
    fail "build the stand-in driver" "$out"
    finish
fi
DRIVER=$ROOT/build/shim/libcuda.so.1

# 5: statuses, through cuda_status.c
cat >"$TMP/tiny.rlxg" <<'JSON'
{"rlxg": 1, "name": "tiny",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [2, 3]}],
 "outputs": [{"name": "y", "dtype": "f32", "shape": [2, 3]}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [3], "data": [0.5, -2, 4]},
             {"name": "b", "dtype": "f32", "shape": [1], "data": [0.25]}],
 "nodes": [{"name": "add", "op": "Add", "inputs": ["xw", "b"], "outputs": ["y"]},
           {"name": "mul", "op": "Mul", "inputs": ["x", "w"], "outputs": ["xw"]}]}
JSON
cat >"$TMP/gath.rlxg" <<'JSON'
{"rlxg": 1, "name": "gath",
 "inputs":  [{"name": "idx", "dtype": "i64", "shape": [2]}],
 "outputs": [{"name": "y", "dtype": "f32", "shape": [2]}],
 "weights": [{"name": "t", "dtype": "f32", "shape": [4], "data": [10, 20, 30, 40]}],
 "nodes": [{"name": "g", "op": "Gather", "inputs": ["t", "idx"], "outputs": ["y"], "attrs": {"axis": 0}}]}
JSON
stub_lib=-
[ -f "$CUDA_HOME/lib64/stubs/libcuda.so" ] && stub_lib=$CUDA_HOME/lib64/stubs/libcuda.so
mkdir -p "$TMP/st"
if out=$("$RLXC" "$TMP/tiny.rlxg" --target cuda -o "$TMP/st/tiny" 2>&1) &&
    out=$("$RLXC" "$TMP/gath.rlxg" --target cuda -o "$TMP/st/gath" 2>&1) &&
    out=$(bash tests/shim/kernels.sh "$TMP/st/tiny.cu" "$TMP/st/tiny.so" 2>&1) &&
    out=$(bash tests/shim/kernels.sh "$TMP/st/gath.cu" "$TMP/st/gath.so" 2>&1); then
    for cc in gcc clang; do
        command -v $cc >/dev/null || continue
        exe=$TMP/st/status_$cc
        if ! out=$($cc -std=c99 -Wall -Wextra -Werror -O1 -I"$TMP/st" -Iruntime_min tests/integration/cuda_status.c \
                "$TMP/st/tiny.c" "$TMP/st/gath.c" "$RT_LIB" -o "$exe" -ldl -lm -lpthread 2>&1); then
            fail "build cuda_status.c with $cc" "$out"
            continue
        fi
        pass "build cuda_status.c with $cc"
        out=$(RLX_SHIM_TRACE=1 "$exe" "$DRIVER" "$TMP/st/tiny.weights" "$TMP/st/tiny.so" "$TMP/st/gath.weights" \
            "$TMP/st/gath.so" "$stub_lib" 2>&1)
        rc=$?
        while IFS= read -r l; do
            case $l in
                "ok   "*) pass "$cc: ${l#ok   }" ;;
                "FAIL "*) r=${l#FAIL }; fail "$cc: ${r%%: *}" "${r#*: }" ;;
            esac
        done <<<"$out"
        if grep -q "^cuda_driver:" <<<"$out"; then fail "$cc: the stand-in driver saw no problem" "$(grep -m1 "^cuda_driver:" <<<"$out")"
        else pass "$cc: the stand-in driver saw no problem (leaks included)"; fi
        if grep -q "launched on stream 1" <<<"$out"; then pass "$cc: after rlx_cuda_set_stream the graph runs on the caller's stream"
        else fail "$cc: the caller's stream is used" "no launch on stream 1 in the driver's trace"; fi
        [ $rc -ne 0 ] && ! grep -q '^FAIL ' <<<"$out" && fail "$cc: cuda_status exit" "exit $rc without a failed check"
    done
else
    fail "compile the status models" "$out"
fi

# 6: --cuda-cubin
d=$TMP/cubin
mkdir -p "$d"
if out=$("$RLXC" $EX --target cuda --cuda-arch sm_90 --cuda-cubin --build -o "$d/m" 2>&1) &&
    out=$("$RLXC" $EX --build -o "$d/c" 2>&1) &&
    out=$(bash tests/shim/kernels.sh "$d/m.cu" "$d/k.so" 2>&1) &&
    out=$($PY tests/shim/ptx_of.py "$d/m.c" "$d/m.ptx" "$d/m.cubin" 2>&1); then
    arch=$($PY -c 'import struct,sys; d=open(sys.argv[1],"rb").read(); print(d[:4] == b"\x7fELF" and struct.unpack("<H", d[18:20])[0] == 190 and struct.unpack("<I", d[48:52])[0] >> 8 & 0xff)' "$d/m.cubin")
    [ "$arch" = 90 ] && pass "--cuda-cubin embeds an ELF cubin for sm_90" || fail "--cuda-cubin embeds a cubin for sm_90" "arch $arch"
    "$d/c" -i $SAMPLE -o "$d/c0.npy" -o "$d/c1.npy" >/dev/null 2>&1
    for cc in 90 100; do
        out=$(RLX_LIBCUDA=$DRIVER RLX_SHIM_KERNELS=$d/k.so RLX_SHIM_CC=$cc RLX_SHIM_TRACE=1 "$d/m" -i $SAMPLE \
            -o "$d/g0.npy" -o "$d/g1.npy" 2>&1)
        want="module: a cubin for sm_90"
        [ $cc = 100 ] && want="module: PTX with"
        if grep -q "$want" <<<"$out" && ! grep -q "^cuda_driver:" <<<"$out" && cmp -s "$d/c0.npy" "$d/g0.npy" &&
            cmp -s "$d/c1.npy" "$d/g1.npy"; then
            pass "--cuda-cubin on an sm_$cc device: ${want%% with}, the C target's bits"
        else
            fail "--cuda-cubin on an sm_$cc device" "$(grep -m1 "trace: module\|^cuda_driver:" <<<"$out") $(head -n 1 <<<"$out")"
        fi
    done
else
    fail "--cuda-cubin builds" "$out"
fi

# 7: --bench
d=$TMP/bench
mkdir -p "$d"
if out=$("$RLXC" $EX --target cuda --build -o "$d/m" 2>&1) && out=$(bash tests/shim/kernels.sh "$d/m.cu" "$d/k.so" 2>&1); then
    out=$(RLX_LIBCUDA=$DRIVER RLX_SHIM_KERNELS=$d/k.so "$d/m" -i $SAMPLE --bench 3 2>&1)
    if grep -q "^bench: runs=3 median_ms=" <<<"$out" && grep -q "device=rlx CPU shim (sm_90)$" <<<"$out"; then
        pass "--emit-main --bench 3 through the stand-in ($(grep "^bench:" <<<"$out"))"
    else
        fail "--bench through the stand-in" "$out"
    fi
else
    fail "build the example for --bench" "$out"
fi
finish
