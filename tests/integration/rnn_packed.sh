#!/usr/bin/env bash
# rnn_packed.sh - the f32 recurrent kernel (rk_rnn_f32) through the compiler,
# against ONNX's own expected outputs.
#
# The ONNX node tests of RNN, GRU and LSTM pass W, R and B as graph inputs,
# so the conformance suite runs the generic kernel. Here each is compiled
# again with W, R, B and P bound at compile time (rlxc --freeze, from the
# test's own input data), as a model exported with its weights has them;
# rlxc's C target then packs W and R (lib/codegen_c/prepare_c.c) and calls
# rk_rnn_f32's cell entry. The generated code must call it (the tests with
# sequence_lens must not: that input keeps the generic kernel), and the
# outputs must match the test's expected ones within the conformance
# suite's tolerance (rtol 1e-3, atol 1e-5), at --threads 1 and 2 with the
# same bytes.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
PY=${PYTHON:-/usr/bin/python3}
DATA=${ONNX_NODE_DATA:-/usr/share/libonnx-testdata/data/node}
if [ ! -d "$DATA" ] || ! "$PY" -c 'import onnx, numpy' 2>/dev/null; then
    fail "setup" "needs $DATA and python3-onnx (scripts/setup.sh installs them)"
    finish
fi
make -s build/librlxrt.a >/dev/null 2>&1 || { fail "setup" "make build/librlxrt.a failed"; finish; }

shopt -s nullglob
for tdir in "$DATA"/test_lstm_* "$DATA"/test_gru_* "$DATA"/test_rnn_* "$DATA"/test_simple_rnn_*; do
    name=$(basename "$tdir")
    w="$TMP/$name"
    mkdir -p "$w"
    # the weights as .npy, the other inputs in order, and the expected outputs
    if ! plan=$("$PY" - "$tdir" "$w" <<'PYEOF' 2>&1
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper
tdir, w = sys.argv[1], sys.argv[2]
m = onnx.load(os.path.join(tdir, "model.onnx"))
node = m.graph.node[0]
ds = os.path.join(tdir, "test_data_set_0")
def pbs(prefix):
    out, i = [], 0
    while os.path.exists(os.path.join(ds, "%s_%d.pb" % (prefix, i))):
        t = onnx.TensorProto()
        t.ParseFromString(open(os.path.join(ds, "%s_%d.pb" % (prefix, i)), "rb").read())
        out.append(numpy_helper.to_array(t))
        i += 1
    return out
inputs = dict(zip([i.name for i in m.graph.input], pbs("input")))
weights = {node.input[k] for k in (1, 2, 3, 7) if k < len(node.input) and node.input[k]}
frozen, runtime = [], []
for i, name in enumerate(inputs):
    p = os.path.join(w, "in_%d.npy" % i)
    np.save(p, inputs[name])
    (frozen if name in weights else runtime).append("%s=%s" % (name, p) if name in weights else p)
for i, a in enumerate(pbs("output")):
    np.save(os.path.join(w, "want_%d.npy" % i), a)
packed = not (len(node.input) > 4 and node.input[4])
print("FREEZE " + " ".join(frozen))
print("INPUTS " + " ".join(runtime))
print("OUTPUTS %d" % len(pbs("output")))
print("PACKED %d" % packed)
PYEOF
    ); then
        fail "$name: reading the test" "$(tail -n 1 <<<"$plan")"
        continue
    fi
    args=()
    for f in $(sed -n 's/^FREEZE //p' <<<"$plan"); do args+=(--freeze "$f"); done
    ins=()
    for f in $(sed -n 's/^INPUTS //p' <<<"$plan"); do ins+=(-i "$f"); done
    nout=$(sed -n 's/^OUTPUTS //p' <<<"$plan")
    packed=$(sed -n 's/^PACKED //p' <<<"$plan")
    if ! "$RLXC" "$tdir/model.onnx" "${args[@]}" --build -o "$w/model" >"$w/log" 2>&1; then
        fail "$name: rlxc" "$(head -n 1 "$w/log")"
        continue
    fi
    if [ "$packed" = 1 ] && ! grep -q 'rk_rnn_f32_\(rnn\|gru\|lstm\)(' "$w/model.c"; then
        fail "$name: kernel" "the weights are constant but model.c does not call rk_rnn_f32's cell entry"
        continue
    fi
    if [ "$packed" = 0 ] && grep -q 'rk_rnn_f32' "$w/model.c"; then
        fail "$name: kernel" "sequence_lens is given but model.c calls rk_rnn_f32"
        continue
    fi
    ok=1
    for t in 1 2; do
        outs=()
        for ((i = 0; i < nout; i++)); do outs+=(-o "$w/got${t}_$i.npy"); done
        if ! "$w/model" "${ins[@]}" "${outs[@]}" --threads $t >/dev/null 2>"$w/err"; then
            fail "$name: run --threads $t" "$(head -n 1 "$w/err")"
            ok=0
        fi
    done
    [ $ok = 1 ] || continue
    for ((i = 0; i < nout; i++)); do
        cmp -s "$w/got1_$i.npy" "$w/got2_$i.npy" || { fail "$name: threads" "output $i differs between --threads 1 and 2"; ok=0; }
    done
    [ $ok = 1 ] || continue
    if msg=$("$PY" - "$w" "$nout" <<'PYEOF' 2>&1
import sys
import numpy as np
w, n = sys.argv[1], int(sys.argv[2])
worst = 0.0
for i in range(n):
    got, want = np.load("%s/got1_%d.npy" % (w, i)), np.load("%s/want_%d.npy" % (w, i))
    if got.shape != want.shape:
        sys.exit("output %d: shape %s, want %s" % (i, got.shape, want.shape))
    if not np.allclose(got, want, rtol=1e-3, atol=1e-5):
        sys.exit("output %d: max abs error %.3g" % (i, float(np.max(np.abs(got - want)))))
    worst = max(worst, float(np.max(np.abs(got - want))) if got.size else 0.0)
print("max abs error %.3g" % worst)
PYEOF
    ); then
        pass "$name: $( [ "$packed" = 1 ] && echo "rk_rnn_f32" || echo "generic kernel (sequence_lens)"), $msg, --threads 1 and 2 alike"
    else
        fail "$name: outputs" "$(tail -n 1 <<<"$msg")"
    fi
done
finish
