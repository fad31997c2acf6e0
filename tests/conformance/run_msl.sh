#!/usr/bin/env bash
# run_msl.sh - the ONNX node tests on the msl target, as tests/run_all.sh runs
# them: through the MSL shim (tests/shim/msl/build.sh type-checks each
# model's kernels as MSL and its Objective-C host against stub headers, then
# runs it on the CPU in two orders that must agree), on a sample of every
# RLX_MSL_NODE_EVERY-th test (default 2) to keep the suite within its time,
# against the floor in tests/conformance/floor_msl.txt for that sample (the
# lead sets it; without the file no floor is checked, and the line below
# says so). The whole set: tests/conformance/run.py --target msl, which
# writes docs/conformance_msl.md. The closing line is run.py's.
set -u
cd "$(dirname "$0")/../.."
every=${RLX_MSL_NODE_EVERY:-2}
floor=tests/conformance/floor_msl.txt
args=(--target msl --sample "$every")
if [ -f "$floor" ]; then args+=(--floor "$floor")
else echo "run_msl.sh: no $floor: the sample's passes are not checked against a floor"; fi
/usr/bin/python3 tests/conformance/run.py "${args[@]}"
