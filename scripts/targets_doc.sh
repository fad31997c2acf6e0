#!/usr/bin/env bash
# targets_doc.sh - the generated part of docs/targets.md: what each target
# supports, printed by `rlxc targets` from the target descriptors, between
# the markers below. With --check it changes nothing and exits 1 when the
# document says something other than the descriptors (tests/integration/
# cli.sh runs it that way, so the table cannot drift).
#
#   bash scripts/targets_doc.sh [--check] [RLXC]   (RLXC: build/rlxc)
set -euo pipefail
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
rlxc=${1:-build/rlxc}
doc=$(dirname "$0")/../docs/targets.md
begin='<!-- begin: rlxc targets -->'
end='<!-- end: rlxc targets -->'
grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc" || { echo "targets_doc.sh: $doc lacks the markers" >&2; exit 1; }
table=$("$rlxc" targets)
new=$(awk -v b="$begin" -v e="$end" -v t="$table" '
    $0 == b { print; print t; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$doc")
if [ $check = 1 ]; then
    if [ "$new" != "$(cat "$doc")" ]; then
        echo "targets_doc.sh: docs/targets.md differs from 'rlxc targets'; run bash scripts/targets_doc.sh" >&2
        exit 1
    fi
    exit 0
fi
printf '%s\n' "$new" >"$doc.tmp" && mv "$doc.tmp" "$doc"
