#!/usr/bin/env bash
# edge_sizes.sh - regenerates the Cortex-M4F size table of docs/edge.md.
#
#   bash scripts/edge_sizes.sh        (after make; exports the zoo if needed)
#
# Builds the zoo's mlp and cnn and the digits example (batch 1) with
# examples/baremetal/build.sh into build/edge_sizes/, reads each linker map
# with scripts/map_sizes.py, and replaces the lines between the markers
# "<!-- sizes begin -->" and "<!-- sizes end -->" in docs/edge.md with the
# table (and the compiler that built it). Exit status 1 if a build fails or
# a runtime core is over 4096 bytes of flash.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=/usr/bin/python3
Z=build/zoo W=build/edge_sizes
if [ ! -f $Z/.stamp ] || [ tests/zoo/export.py -nt $Z/.stamp ]; then
    rm -rf $Z && mkdir -p $Z && $PY tests/zoo/export.py $Z >/dev/null && touch $Z/.stamp
fi
rm -rf $W && mkdir -p $W
$PY -c "import numpy as np; np.save('$W/digit.npy', np.load('examples/digits/heldout_pixels.npy')[:1])"
bash examples/baremetal/build.sh $Z/mlp/model.onnx $Z/mlp/in_0.npy $W/mlp mlp
bash examples/baremetal/build.sh $Z/cnn/model.onnx $Z/cnn/in_0.npy $W/cnn cnn
RLXC_FLAGS="--dim batch=1" bash examples/baremetal/build.sh examples/digits/model.onnx $W/digit.npy $W/digits digits
{
    echo "<!-- sizes begin -->"
    $PY scripts/map_sizes.py --header
    for m in mlp cnn digits; do $PY scripts/map_sizes.py $W/$m/$m.map $W/$m/$m.c --core-max 4096; done
    echo
    echo "Bytes; built by \`bash scripts/edge_sizes.sh\` with $(arm-none-eabi-gcc --version | head -n 1), -Os."
    echo "<!-- sizes end -->"
} >$W/table.md
$PY - docs/edge.md $W/table.md <<'PY'
import sys
doc, table = open(sys.argv[1]).read(), open(sys.argv[2]).read()
a, b = doc.index("<!-- sizes begin -->"), doc.index("<!-- sizes end -->") + len("<!-- sizes end -->\n")
open(sys.argv[1], "w").write(doc[:a] + table + doc[b:])
PY
cat $W/table.md
