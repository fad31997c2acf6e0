#!/usr/bin/env bash
# check_isa_names.sh LIB - every external symbol that an instruction-set
# variant of the kernels defines in LIB (librlxrt.a) ends in that variant's
# suffix (runtime_min/rk_isa.h renames them), so two variants never define
# the same name. A kernel or helper added to a kernel file without its line
# in rk_isa.h fails here, at build time, instead of in a model's link.
# Without nm (or for a library without variants) there is nothing to check.
set -u
lib=$1
command -v nm > /dev/null || exit 0
bad=$(nm -g --defined-only "$lib" 2> /dev/null | awk '
    /^[^ ].*:$/ { v = ""; if (match($0, /\.(portable|avx2|avx512)\.[0-9a-f]+\.o:$/)) { v = substr($0, RSTART + 1); sub(/\..*/, "", v) } next }
    v != "" && NF == 3 && $3 !~ ("_" v "$") { print $3 " (" v ")" }')
if [ -n "$bad" ]; then
    echo "check_isa_names: $lib: symbols of an instruction-set variant without its suffix (add them to runtime_min/rk_isa.h):" >&2
    echo "$bad" | sed 's/^/    /' >&2
    exit 1
fi
