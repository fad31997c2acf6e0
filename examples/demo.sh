#!/bin/bash
# demo.sh - compiles the bundled example model and runs it on the bundled images.
#
# examples/shapes.rlxg is a tiny CNN (made by make_example.py) that tells six
# stroke patterns in 8x8 images apart. This script builds it with
# `rlxc --build` into build/demo/shapes (plus shapes.weights) and runs the
# binary on each examples/samples/*.npy. With /usr/bin/python3 and numpy it
# writes the outputs as .npy and show.py draws the image and names the class;
# without them the binary prints its outputs itself and the class number is
# looked up here.
#
#   examples/demo.sh [RLXC]      (default build/rlxc; `make demo` runs this)
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
rlxc=${1:-$root/build/rlxc}
out=${DEMO_DIR:-$root/build/demo}
classes=("horizontal bar" "vertical bar" "diagonal \\" "diagonal /" "box" "plus")

mkdir -p "$out"
"$rlxc" "$here/shapes.rlxg" --build -o "$out/shapes"
echo "compiled examples/shapes.rlxg -> $out/shapes (weights in $out/shapes.weights)"

have_numpy=0
if [ -z "${DEMO_NO_PYTHON:-}" ] && /usr/bin/python3 -c 'import numpy' 2> /dev/null; then have_numpy=1; fi

for img in "$here"/samples/*.npy; do
    echo "input: samples/$(basename "$img") (8x8 image)"
    if [ $have_numpy = 1 ]; then
        "$out/shapes" -i "$img" -o "$out/class.npy" -o "$out/probs.npy"
        /usr/bin/python3 "$here/show.py" "$img" "$out/class.npy" "$out/probs.npy"
    else
        printed=$("$out/shapes" -i "$img")
        printf '%s\n' "$printed" | sed 's/^/    /'
        # the binary prints e.g. "class: i64 [1] = [5]"
        k=$(printf '%s\n' "$printed" | sed -n 's/^class:.*= *\[\([0-9][0-9]*\).*/\1/p')
        if [ -n "$k" ] && [ "$k" -lt ${#classes[@]} ]; then
            echo "    predicted class $k: ${classes[$k]}"
        fi
    fi
done
