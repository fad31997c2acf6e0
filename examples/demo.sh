#!/bin/bash
# demo.sh - compiles the bundled digits model and classifies held-out images.
#
# examples/digits/model.onnx is a small CNN trained on the 8x8 handwritten
# digits of python3-sklearn (examples/digits/train.py; its outputs are
# committed, so nothing is trained here). This script builds it twice with
# `rlxc --build` into build/demo/: for one image (--dim batch=1) and for the
# whole held-out split (--dim batch=450, examples/digits/heldout_pixels.npy,
# uint8 pixels fed as they are). It draws a few held-out images (the first
# five and the first that PyTorch misreads) with the digit the compiled
# model reads in each (examples/digits/show.py), then
# prints the accuracy on the whole held-out split next to PyTorch's
# (torch_accuracy.txt, from the same images). Needs /usr/bin/python3 with
# numpy (scripts/setup.sh installs it) to cut images and count.
#
#   examples/demo.sh [RLXC]      (default build/rlxc; `make demo` runs this)
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
rlxc=${1:-$root/build/rlxc}
out=${DEMO_DIR:-$root/build/demo}
d=$here/digits
py=/usr/bin/python3
show="$py $d/show.py"

if ! $py -c 'import numpy' 2>/dev/null; then
    echo "demo: needs /usr/bin/python3 with numpy (bash scripts/setup.sh)" >&2
    exit 1
fi
mkdir -p "$out"
n=$($py -c 'import numpy, sys; print(len(numpy.load(sys.argv[1])))' "$d/heldout_pixels.npy")
"$rlxc" "$d/model.onnx" --dim batch=1 --build -o "$out/digits"
"$rlxc" "$d/model.onnx" --dim batch="$n" --build -o "$out/digits_all"
echo "compiled examples/digits/model.onnx -> $out/digits (one image) and $out/digits_all ($n images)"

# a few held-out images: the first five, and one PyTorch misreads
$show samples "$d/heldout_labels.npy" "$d/torch_digits.npy" | while read -r k label; do
    echo "held-out image $k:"
    $show pick "$d/heldout_pixels.npy" "$k" "$out/image.npy"
    "$out/digits" -i "$out/image.npy" -o "$out/probs.npy" -o "$out/digit.npy"
    $show draw "$out/image.npy" "$out/probs.npy" "$out/digit.npy" "$label"
done

"$out/digits_all" -i "$d/heldout_pixels.npy" -o "$out/all_probs.npy" -o "$out/all_digits.npy"
$show accuracy "$out/all_digits.npy" "$d/heldout_labels.npy" "$d/torch_digits.npy" "$d/torch_accuracy.txt"
