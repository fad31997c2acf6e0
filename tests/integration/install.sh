#!/usr/bin/env bash
# install.sh - `make install` into a temporary prefix, used as a user would.
#
# Installs with PREFIX=$TMP/prefix, then: the installed rlxc builds a model
# with --build against the installed runtime library (found from its own
# location, not rebuilt into a cache: the cache directory must stay empty),
# and the binary runs; a user's own program is compiled against the
# installed headers and library with nothing but `pkg-config --cflags --libs
# rlxrt` and computes the hand-derived result; the man page renders without
# warnings. A staged install (PREFIX=/usr/local DESTDIR=...) puts every
# file under DESTDIR while the pkg-config file names the final prefix.
source "$(dirname "$0")/../tools/testlib.sh"
need_rlxc

P=$TMP/prefix
if out=$(make -s install PREFIX="$P" 2>&1); then pass "make install PREFIX=..."
else
    fail "make install PREFIX=..." "$out"
    finish
fi
for f in bin/rlxc lib/librlxrt.a lib/pkgconfig/rlxrt.pc include/rlxrt/rlx_rt.h include/rlxrt/rlx_scalar.h \
    share/man/man1/rlxc.1 share/rlxc/runtime_min/rlx_rt.c share/rlxc/librlxrt.stamp; do
    if [ -f "$P/$f" ]; then pass "installed $f"; else fail "installed $f" "missing"; fi
done

# y = x * w + b, x = [1, 2, 3]: y = [1*0.5 + 0.25, 2*-2 + 0.25, 3*4 + 0.25]
cat >"$TMP/tiny.rlxg" <<'JSON'
{"rlxg": 1, "name": "tiny",
 "inputs":  [{"name": "x", "dtype": "f32", "shape": [3]}],
 "outputs": [{"name": "y"}],
 "weights": [{"name": "w", "dtype": "f32", "shape": [3], "data": [0.5, -2, 4]},
             {"name": "b", "dtype": "f32", "shape": [1], "data": [0.25]}],
 "nodes": [{"name": "mul", "op": "Mul", "inputs": ["x", "w"], "outputs": ["xw"]},
           {"name": "add", "op": "Add", "inputs": ["xw", "b"], "outputs": ["y"]}]}
JSON

# the installed rlxc, away from the source tree, with an empty cache
mkdir -p "$TMP/use" "$TMP/cache"
cd "$TMP/use"
export RLXC_CACHE_DIR=$TMP/cache
if out=$(env -u RLXC_RUNTIME_DIR "$P/bin/rlxc" "$TMP/tiny.rlxg" --build -o tiny 2>&1) && [ -x tiny ]; then
    pass "installed rlxc --build"
else
    fail "installed rlxc --build" "$out"
fi
if [ -z "$(ls -A "$TMP/cache")" ]; then pass "installed rlxc links the installed library (no cache build)"
else fail "installed rlxc links the installed library (no cache build)" "cache: $(ls "$TMP/cache")"; fi
$PY -c 'import numpy; numpy.save("x.npy", numpy.array([1, 2, 3], numpy.float32))'
if out=$(./tiny -i x.npy 2>&1) && grep -q '0.75, -3.75, 12.25' <<<"$out"; then pass "the installed build runs: $out"
else fail "the installed build runs" "$out"; fi

# a user's program, with pkg-config only
"$P/bin/rlxc" "$TMP/tiny.rlxg" -o tiny_src.c -n tiny >/dev/null 2>&1
cat >app.c <<'C'
#include <stdio.h>
#include "tiny_src.h"
int main(void) {
    rlx_model *m;
    float x[3] = {1, 2, 3}, y[3];
    const void *in[] = {x};
    void *out[] = {y};
    if (tiny_init(&m) || tiny_load_weights(m, "tiny_src.weights") || tiny_run(m, in, out)) return 2;
    tiny_free(m);
    /* 1*0.5+0.25, 2*-2+0.25, 3*4+0.25 */
    return y[0] == 0.75f && y[1] == -3.75f && y[2] == 12.25f ? 0 : 1;
}
C
if ! flags=$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs rlxrt 2>&1); then
    fail "pkg-config --cflags --libs rlxrt" "$flags"
elif out=$(${CC:-cc} -std=c99 -Wall -Wextra -Werror app.c tiny_src.c $flags -Wl,--gc-sections -o app 2>&1); then
    pass "a user program builds with pkg-config only ($flags)"
    if ./app; then pass "the user program computes y = x*w + b"; else fail "the user program computes y = x*w + b" "exit $?"; fi
else
    fail "a user program builds with pkg-config only" "$out"
fi

# the man page
if out=$(LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat man -l "$P/share/man/man1/rlxc.1" 2>&1) && grep -q -- '--build' <<<"$out" &&
    grep -q 'RLX_ISA' <<<"$out"; then
    pass "man -l rlxc.1 renders"
else
    fail "man -l rlxc.1 renders" "$(head -n 3 <<<"$out")"
fi
if warn=$(groff -man -Tutf8 -ww -z "$P/share/man/man1/rlxc.1" 2>&1) && [ -z "$warn" ]; then pass "groff: no warnings"
else fail "groff: no warnings" "$warn"; fi

# a staged install
cd "$ROOT"
if out=$(make -s install PREFIX=/usr/local DESTDIR="$TMP/stage" 2>&1) && [ -x "$TMP/stage/usr/local/bin/rlxc" ] &&
    grep -qx 'prefix=/usr/local' "$TMP/stage/usr/local/lib/pkgconfig/rlxrt.pc"; then
    pass "make install DESTDIR=... stages under DESTDIR"
else
    fail "make install DESTDIR=... stages under DESTDIR" "$out"
fi
finish
