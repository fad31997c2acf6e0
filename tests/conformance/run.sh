#!/usr/bin/env bash
# run.sh - the ONNX node-test conformance suite, as tests/run_all.sh runs it.
#
# Runs tests/conformance/run.py over every node test with the committed pass
# floor (tests/conformance/floor.txt): the suite fails if fewer tests pass
# than the floor says, and regenerates docs/conformance.md. run.py's last
# line, `N passed, N failed, N skipped`, is printed last here too.
set -u
cd "$(dirname "$0")/../.."
/usr/bin/python3 tests/conformance/run.py --floor tests/conformance/floor.txt "$@"
