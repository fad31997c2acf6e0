#!/usr/bin/env bash
# run.sh - the ONNX node-test conformance suite, as tests/run_all.sh runs it.
#
# Runs tests/conformance/run.py over every node test with the committed pass
# floor (tests/conformance/floor.txt): the suite fails if fewer tests pass
# than the floor says, and regenerates docs/conformance.md. run.py's last
# line, `N passed, N failed, N skipped`, is printed last here too.
set -u
cd "$(dirname "$0")/../.."
# Under tests/sanitize/run.sh (RLX_SANITIZED set): every RLX_CONFORMANCE_SAMPLE-th
# test, built with the sanitized rlxc and runtime, failing only on a
# sanitizer report; no floor and no report then.
if [ -n "${RLX_SANITIZED:-}" ]; then
    exec /usr/bin/python3 tests/conformance/run.py --sanitized --sample "${RLX_CONFORMANCE_SAMPLE:-8}" \
        --rlxc "${RLXC:-build/rlxc}" "$@"
fi
/usr/bin/python3 tests/conformance/run.py --floor tests/conformance/floor.txt "$@"
