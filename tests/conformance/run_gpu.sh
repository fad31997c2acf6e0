#!/usr/bin/env bash
# run_gpu.sh - the ONNX node tests on a GPU target, as tests/run_all.sh runs them.
#
#   tests/conformance/run_gpu.sh [TARGET]   (default spirv, on lavapipe; cuda: the CPU shim;
#                                            msl: the MSL shim)
#
# tests/conformance/run.py --target TARGET with that target's committed floor
# (tests/conformance/floor_TARGET.txt), every program run with the Vulkan
# validation layer on (a validation message fails the test), or for cuda
# through the CPU shim in two thread orders (run.py says how; without NVRTC
# one "skipped" line), or for msl through the MSL shim (each model's kernels
# type-checked as MSL and its host against stub Metal headers, then run in
# two thread orders); it regenerates docs/conformance_TARGET.md. The
# closing line is run.py's.
set -u
cd "$(dirname "$0")/../.."
T=${1:-spirv}
/usr/bin/python3 tests/conformance/run.py --target "$T" --floor "tests/conformance/floor_$T.txt"
