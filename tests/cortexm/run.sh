#!/usr/bin/env bash
# run.sh - the small models built for a Cortex-M4F, linked, sized and run.
#
# For the zoo's mlp and cnn (build/zoo, exported by tests/zoo/export.py if
# tests/zoo/run.sh has not) and the bundled digits example
# (examples/digits), examples/baremetal/build.sh builds a bare-metal ELF
# (arm-none-eabi-gcc, newlib-nano, no threads, no files, the weights a
# const array in flash). Each must link; its runtime core (rlx_rt.o) must
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

# compare_hex NAME QEMU_OUTPUT X86.npy EXPECTED.npy
compare_hex() {
    $PY - "$@" <<'PY'
import re, sys
import numpy as np
name, text, x86, want = sys.argv[1], open(sys.argv[2]).read(), np.load(sys.argv[3]), np.load(sys.argv[4])
m = re.search(r"^out0 ([0-9a-f]*)$", text, re.M)
if not m or "\nok" not in "\n" + text:
    sys.exit("no output line: " + text.strip()[-200:])
got = np.frombuffer(bytes.fromhex(m.group(1)), dtype=x86.dtype).reshape(x86.shape)
for ref, rtol, atol, what in ((x86, 1e-4, 1e-5, "x86"), (want, 1e-3, 1e-4, "the reference")):
    if ref.dtype.kind in "fc":
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
        if not (err <= atol + rtol * np.abs(ref.astype(np.float64))).all():
            sys.exit("against %s: max_abs_err %.3g" % (what, err.max()))
    elif not (got == ref).all():
        sys.exit("against %s: values differ" % what)
print("max_abs_err %.3g against x86" % np.abs(got.astype(np.float64) - x86.astype(np.float64)).max())
PY
}

# model NAME ONNX INPUT.npy EXPECTED.npy
check_model() {
    local name=$1 onnx=$2 input=$3 expected=$4 d=$W/$1
    if [ ! -f "$onnx" ]; then fail "$name" "$onnx missing"; return; fi
    if ! msg=$(bash examples/baremetal/build.sh "$onnx" "$input" $d $name 2>&1); then
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
    if ! msg=$("$RLXC" "$onnx" --embed-weights --build -n $name -o $d/x86/$name 2>&1) ||
        ! msg=$($d/x86/$name -i "$input" -o $d/x86/out.npy 2>&1); then
        fail "$name: x86 --embed-weights build" "$msg"; return
    fi
    timeout 120 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel $d/$name.elf >$d/qemu.txt 2>&1
    local rc=$?
    if [ $rc -ne 0 ]; then fail "$name: runs on the Cortex-M4 (qemu mps2-an386)" "exit $rc: $(tail -c 300 $d/qemu.txt)"; return; fi
    if msg=$(compare_hex $name $d/qemu.txt $d/x86/out.npy "$expected" 2>&1); then
        pass "$name: runs on the Cortex-M4 (qemu mps2-an386), weights in place, output matches ($msg)"
    else
        fail "$name: output on the Cortex-M4" "$msg"
    fi
}

check_model mlp $Z/mlp/model.onnx $Z/mlp/in_0.npy $Z/mlp/expected_0.npy
check_model cnn $Z/cnn/model.onnx $Z/cnn/in_0.npy $Z/cnn/expected_0.npy
finish
