#!/usr/bin/env bash
# run.sh - the AArch64 cross suite, as tests/run_all.sh runs it: rlxc's output
# and the runtime cross-built with aarch64-linux-gnu-gcc and run under
# qemu-aarch64 against the x86 build and PyTorch (tests/cross/run.py says
# what is checked). Its closing line is `N passed, N failed`.
set -u
cd "$(dirname "$0")/../.."
exec /usr/bin/python3 tests/cross/run.py "$@"
