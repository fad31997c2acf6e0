#!/usr/bin/env bash
# run.sh - the small models built for a Cortex-M4F, linked, sized and run.
#
# For the zoo's mlp and cnn (build/zoo, exported by tests/zoo/export.py if
# tests/zoo/run.sh has not) and the bundled digits example
# (examples/digits), examples/baremetal/build.sh builds a bare-metal ELF
# (arm-none-eabi-gcc, newlib-nano, no threads, no files, the weights a
# const array in flash). Each must link; its runtime core (rlx_*.o) must
# be at most 4096 bytes of flash (scripts/map_sizes.py over the linker map)
# and it must not contain fopen (RLX_NO_STDIO); then it runs under
# qemu-system-arm -M mps2-an386 (a Cortex-M4 with its FPU) with
# semihosting: main.c checks that the weights are used in place (no copy in
# RAM), runs the model once and prints the output bytes. Those must match
# the same model built for this machine with --embed-weights --build (rtol
# 1e-4, atol 1e-5) and the model's reference output (PyTorch's: rtol 1e-3,
# atol 1e-4). One line per check, then `N passed, N failed`.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
for tool in arm-none-eabi-gcc qemu-system-arm; do
    command -v $tool >/dev/null || { fail "$tool" "not installed (bash scripts/setup.sh)"; finish; }
done
Z=build/zoo
if [ ! -f $Z/.stamp ] || [ tests/zoo/export.py -nt $Z/.stamp ]; then
    rm -rf $Z && mkdir -p $Z
    if $PY tests/zoo/export.py $Z >/dev/null; then touch $Z/.stamp; else fail "zoo export" "tests/zoo/export.py failed"; fi
fi
W=build/cortexm
rm -rf $W && mkdir -p $W

# compare_hex QEMU_OUTPUT X86_0.npy EXPECTED_0.npy [X86_1.npy EXPECTED_1.npy ...]: each
# outK line against this machine's output K and the reference (a float
# reference within rtol 1e-3 / atol 1e-4, any other exactly; - for none)
compare_hex() {
    $PY - "$@" <<'PY'
import re, sys
import numpy as np
text, pairs = open(sys.argv[1]).read(), sys.argv[2:]
if not re.search(r"^ok$", text, re.M):
    sys.exit("no 'ok' line: " + text.strip()[-200:])
worst = 0.0
for k in range(len(pairs) // 2):
    x86 = np.load(pairs[2 * k])
    want = x86 if pairs[2 * k + 1] == "-" else np.load(pairs[2 * k + 1])
    m = re.search(r"^out%d ([0-9a-f]*)$" % k, text, re.M)
    if not m:
        sys.exit("no out%d line" % k)
    got = np.frombuffer(bytes.fromhex(m.group(1)), dtype=x86.dtype).reshape(x86.shape)
    for ref, rtol, atol, what in ((x86, 1e-4, 1e-5, "x86"), (want.astype(x86.dtype), 1e-3, 1e-4, "the reference")):
        if ref.dtype.kind in "fc":
            err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
            if not (err <= atol + rtol * np.abs(ref.astype(np.float64))).all():
                sys.exit("output %d against %s: max_abs_err %.3g" % (k, what, err.max()))
        elif not (got == ref).all():
            sys.exit("output %d against %s: %s, expected %s" % (k, what, got.tolist(), ref.tolist()))
    worst = max(worst, float(np.abs(got.astype(np.float64) - x86.astype(np.float64)).max()))
print("max_abs_err %.3g against x86" % worst)
PY
}

# check_model NAME ONNX INPUT.npy "RLXC FLAGS" EXPECTED_0.npy [EXPECTED_1.npy ...]
check_model() {
    local name=$1 onnx=$2 input=$3 flags=$4 d=$W/$1
    shift 4
    local expected=("$@")
    if [ ! -f "$onnx" ]; then fail "$name" "$onnx missing"; return; fi
    if ! msg=$(RLXC_FLAGS="$flags" bash examples/baremetal/build.sh "$onnx" "$input" $d $name 2>&1); then
        fail "$name: Cortex-M4F build and link" "$(tail -n 3 <<<"$msg")"; return
    fi
    pass "$name: Cortex-M4F build and link ($(arm-none-eabi-size $d/$name.elf | awk 'NR == 2 {print "text " $1 ", data " $2 ", bss " $3}'))"
    if row=$($PY scripts/map_sizes.py $d/$name.map $d/$name.c --core-max 4096 2>&1); then
        pass "$name: runtime core at most 4096 bytes of flash ($(cut -d'|' -f6 <<<"$row" | tr -d ' ') bytes)"
    else
        fail "$name: runtime core at most 4096 bytes" "$row"
    fi
    if arm-none-eabi-nm $d/$name.elf | grep -qw fopen; then fail "$name: no file I/O" "fopen is linked in"
    else pass "$name: no file I/O linked in"; fi
    # this machine's build of the same C, with the weights embedded too
    mkdir -p $d/x86
    local outs=() pairs=() k
    for k in "${!expected[@]}"; do
        outs+=(-o $d/x86/out_$k.npy)
        pairs+=($d/x86/out_$k.npy "${expected[$k]}")
    done
    # shellcheck disable=SC2086
    if ! msg=$("$RLXC" "$onnx" $flags --embed-weights --build -n $name -o $d/x86/$name 2>&1) ||
        ! msg=$($d/x86/$name -i "$input" "${outs[@]}" 2>&1); then
        fail "$name: x86 --embed-weights build" "$msg"; return
    fi
    timeout 120 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel $d/$name.elf >$d/qemu.txt 2>&1
    local rc=$?
    if [ $rc -ne 0 ]; then fail "$name: runs on the Cortex-M4 (qemu mps2-an386)" "exit $rc: $(tail -c 300 $d/qemu.txt)"; return; fi
    if msg=$(compare_hex $d/qemu.txt "${pairs[@]}" 2>&1); then
        pass "$name: runs on the Cortex-M4 (qemu mps2-an386), weights in place, output matches ($msg)"
    else
        fail "$name: output on the Cortex-M4" "$msg"
    fi
}

check_model mlp $Z/mlp/model.onnx $Z/mlp/in_0.npy "" $Z/mlp/expected_0.npy
check_model cnn $Z/cnn/model.onnx $Z/cnn/in_0.npy "" $Z/cnn/expected_0.npy
# digits: held-out image 0; its probabilities against x86 only, its digit as
# PyTorch read it (torch_digits.npy)
D=examples/digits
mkdir -p $W/digits-in
$PY -c "import numpy as np; np.save('$W/digits-in/image.npy', np.load('$D/heldout_pixels.npy')[:1]);
np.save('$W/digits-in/digit.npy', np.load('$D/torch_digits.npy')[:1].astype(np.int64))"
check_model digits $D/model.onnx $W/digits-in/image.npy "--dim batch=1" - $W/digits-in/digit.npy
finish
