#!/usr/bin/env bash
# check.sh - `rlxc check` (cmd/rlxc/check.c): all clear on every zoo model,
# and the first diverging node named when a kernel is deliberately wrong.
#
# All clear: each model of build/zoo (the six of tests/zoo/export.py, exported here
# if tests/zoo/run.sh has not) is checked against its reference with
# PyTorch's output as --expect; exit 0 and "all clear" are wanted.
# A wrong kernel: a copy of runtime_min in TMP (RLXC_RUNTIME_DIR) whose GEMM
# epilogue scales a fused Relu's result by 1.01. Only the optimized build
# fuses Relu into the convolution (the -O0 reference runs it alone, in
# generated code), so check must exit 1 and name the first Relu of the zoo's
# CNN -- read from the ONNX file here, not from check's output -- as the
# first divergence. On the spirv target, whose printer writes no values,
# the outputs alone are compared (and agree). Usage errors are one line and
# exit 1.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
Z=build/zoo
if [ ! -f $Z/.stamp ] || [ tests/zoo/export.py -nt $Z/.stamp ]; then
    rm -rf $Z && mkdir -p $Z
    if $PY tests/zoo/export.py $Z >/dev/null; then touch $Z/.stamp; else fail "zoo export" "tests/zoo/export.py failed"; fi
fi
# the build under test: the portable kernels (the variant of the
# dispatching library whose scalar epilogue is patched below)
export CFLAGS=-O2 RLX_ISA=portable

for name in mlp cnn resnet18 mobilenetv2 transformer lstm; do
    d=$Z/$name
    out=$("$RLXC" check $d/model.onnx -i $d/in_0.npy --expect $d/expected_0.npy 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^all clear' <<<"$out" && grep -q '^output 0 against .*: ok$' <<<"$out"; then
        pass "check $name: all clear ($(grep -c ' ok$' <<<"$out") values and the output agree)"
    else
        fail "check $name: all clear" "exit $rc: $(tail -n 3 <<<"$out")"
    fi
done

# the injected fault
cp -r runtime_min "$TMP/rt"
sed -i 's/ci\[j\] = cheap ? act_cheap(y, g->act, act_a, act_b) : rs_act(y, g->act, act_a, act_b);/ci[j] = (cheap ? act_cheap(y, g->act, act_a, act_b) : rs_act(y, g->act, act_a, act_b)) * (g->act == RS_ACT_RELU ? 1.01f : 1.0f);/' \
    "$TMP/rt/rk_gemm.c"
if cmp -s runtime_min/rk_gemm.c "$TMP/rt/rk_gemm.c"; then
    fail "inject a wrong kernel" "the sed found nothing to patch in rk_gemm.c"
else
    first_relu=$($PY -c "import onnx,sys; print(next(n.name for n in onnx.load(sys.argv[1]).graph.node if n.op_type == 'Relu'))" $Z/cnn/model.onnx)
    out=$(RLXC_RUNTIME_DIR="$TMP/rt" "$RLXC" check $Z/cnn/model.onnx -i $Z/cnn/in_0.npy 2>&1)
    rc=$?
    if [ $rc -eq 1 ] && grep -qF "first divergence: node '$first_relu' (Relu)" <<<"$out"; then
        pass "a wrong fused Relu epilogue: exit 1, first divergence at $first_relu"
    else
        fail "a wrong fused Relu epilogue is named" "exit $rc, want 1 naming $first_relu: $(tail -n 2 <<<"$out")"
    fi
fi

# the spirv target (Vulkan on lavapipe, scripts/setup.sh installs it): its
# printer writes no values, so check compares the outputs only, and says so
out=$("$RLXC" check $Z/cnn/model.onnx -i $Z/cnn/in_0.npy --target spirv --expect $Z/cnn/expected_0.npy 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q '^output 0 against the reference: .*: ok$' <<<"$out" &&
    grep -Eq '^(all clear|the build under test wrote no values .*only the outputs were compared, and they agree)' <<<"$out"; then
    pass "check --target spirv: outputs agree ($(tail -n 1 <<<"$out" | cut -c1-60)...)"
else
    fail "check --target spirv" "exit $rc: $(tail -n 3 <<<"$out")"
fi

# usage errors: one line, exit 1
for args in "" "$Z/cnn/model.onnx" "$Z/cnn/model.onnx -i $TMP/missing.npy" "$Z/cnn/model.onnx -i $Z/cnn/in_0.npy --rtol x" \
    "$Z/cnn/model.onnx -i $Z/cnn/in_0.npy --bogus" \
    "$Z/cnn/model.onnx -i $Z/cnn/in_0.npy --expect $Z/cnn/expected_0.npy --expect $Z/cnn/expected_0.npy"; do
    err=$("$RLXC" check $args 2>&1 >/dev/null)
    rc=$?
    if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && grep -q '^rlxc: check: ' <<<"$err"; then
        pass "check ${args:-(no arguments)}: one error line"
    else
        fail "check ${args:-(no arguments)}: one error line" "exit $rc: $err"
    fi
done
finish
