#!/usr/bin/env bash
# digits.sh - `make demo`'s trained digits model: rlxc's held-out accuracy
# must match PyTorch's to within one image.
#
# Runs examples/demo.sh into TMP (it compiles examples/digits/model.onnx for
# one image and for the 450 held-out images) and reads its closing line.
# PyTorch's side is the committed examples/digits/torch_digits.npy, whose
# count against the labels is checked here against torch_accuracy.txt; rlxc's
# side is recounted here from the compiled model's own output
# (all_digits.npy) against heldout_labels.npy, not taken from the demo's
# text. Also: at most one image where the two predictions differ, and the
# drawn images' verdicts agree with their labels.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc
D=examples/digits
if ! out=$(DEMO_DIR="$TMP/demo" bash examples/demo.sh "$RLXC" 2>&1); then
    fail "make demo runs" "$(tail -n 3 <<<"$out")"
    finish
fi
pass "make demo runs ($(grep -c '^held-out image' <<<"$out") images drawn)"
line=$(grep '^held-out accuracy:' <<<"$out")
[ -n "$line" ] && pass "demo prints the held-out accuracy: ${line#held-out accuracy: }" || fail "demo prints the accuracy" "$out"
read -r rlxc_ok torch_ok total ndiff <<<"$($PY - "$TMP/demo/all_digits.npy" $D/heldout_labels.npy $D/torch_digits.npy <<'PY'
import sys
import numpy as np
d, y, t = (np.load(p).reshape(-1) for p in sys.argv[1:4])
print(int((d == y).sum()), int((t == y).sum()), len(y), int((d != t).sum()))
PY
)"
read -r file_ok file_total <$D/torch_accuracy.txt
if [ "$torch_ok $total" = "$file_ok $file_total" ]; then pass "torch_accuracy.txt agrees with torch_digits.npy ($torch_ok of $total)"
else fail "torch_accuracy.txt agrees with torch_digits.npy" "file: $file_ok of $file_total, recounted: $torch_ok of $total"; fi
diff=$((rlxc_ok - torch_ok))
if [ "$total" -eq 450 ] && [ "${diff#-}" -le 1 ]; then pass "rlxc $rlxc_ok of $total, PyTorch $torch_ok: within one image"
else fail "accuracy within one image of PyTorch's" "rlxc $rlxc_ok, PyTorch $torch_ok of $total"; fi
if [ "$ndiff" -le 1 ]; then pass "predictions differ from PyTorch's in $ndiff images"
else fail "predictions differ from PyTorch's in at most one image" "$ndiff differ"; fi
if grep -q "rlxc says" <<<"$out" && ! grep "rlxc says" <<<"$out" | grep -qv ": right$\|: wrong$"; then
    pass "each drawn image names a digit and its label"
else
    fail "each drawn image names a digit and its label" "$out"
fi
finish
