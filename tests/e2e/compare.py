#!/usr/bin/python3
"""compare.py - checks a model binary's outputs against cases.py's expected ones.

    compare.py CASEDIR OUTDIR

reads CASEDIR/expected_K.npy and CASEDIR/tol.json, and OUTDIR/out_K.npy for
every K. dtype and shape must match exactly; floats must satisfy |got - want|
<= atol + rtol*|want| with NaN exactly where NaN is expected and infinities of
the same sign; integers and bools must be equal. Prints one line: on success
`max_abs_err=X max_rel_err=Y` (exit 0), else the first problem found, naming
the output and the worst element (exit 1).
"""
import json
import os
import sys

import numpy as np


def check_one(name, got, want, rtol, atol):
    """Returns (error message or None, max abs err, max rel err)."""
    if got.dtype != want.dtype:
        return "output %s: dtype %s, expected %s" % (name, got.dtype, want.dtype), 0, 0
    if got.shape != want.shape:
        return "output %s: shape %s, expected %s" % (name, list(got.shape), list(want.shape)), 0, 0
    if want.size == 0:
        return None, 0.0, 0.0
    if want.dtype.kind not in "fc":
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        if bad.size:
            i = bad[0]
            idx = np.unravel_index(i, want.shape)
            return ("output %s: %d of %d elements differ, first at %s: got %s, expected %s"
                    % (name, bad.size, want.size, list(map(int, idx)), got.reshape(-1)[i], want.reshape(-1)[i])), 0, 0
        return None, 0.0, 0.0
    g = got.astype(np.float64).reshape(-1)
    w = want.astype(np.float64).reshape(-1)
    gnan, wnan = np.isnan(g), np.isnan(w)
    if (gnan != wnan).any():
        i = np.flatnonzero(gnan != wnan)[0]
        idx = list(map(int, np.unravel_index(i, want.shape)))
        return "output %s: NaN mismatch at %s: got %r, expected %r" % (name, idx, g[i], w[i]), 0, 0
    winf = np.isinf(w)
    inf_bad = (np.isinf(g) | winf) & ~gnan & (g != w)
    if inf_bad.any():
        i = np.flatnonzero(inf_bad)[0]
        idx = list(map(int, np.unravel_index(i, want.shape)))
        return "output %s: infinity mismatch at %s: got %r, expected %r" % (name, idx, g[i], w[i]), 0, 0
    fin = ~wnan & ~winf
    g, w = g[fin], w[fin]
    if g.size == 0:
        return None, 0.0, 0.0
    err = np.abs(g - w)
    rel = err / np.maximum(np.abs(w), np.finfo(np.float64).tiny)
    excess = err - (atol + rtol * np.abs(w))
    worst = int(np.argmax(excess))
    if excess[worst] > 0:
        flat = np.flatnonzero(fin)[worst]
        idx = list(map(int, np.unravel_index(flat, want.shape)))
        nbad = int((excess > 0).sum())
        return ("output %s: %d of %d elements out of tolerance (rtol=%g atol=%g); worst at %s: got %.9g, "
                "expected %.9g (abs err %.3g)" % (name, nbad, want.size, rtol, atol, idx, g[worst], w[worst],
                                                 err[worst])), 0, 0
    return None, float(err.max()), float(rel[np.abs(w) > 0].max()) if (np.abs(w) > 0).any() else 0.0


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: compare.py CASEDIR OUTDIR\n")
        return 2
    casedir, outdir = argv[1], argv[2]
    with open(os.path.join(casedir, "tol.json")) as f:
        tol = json.load(f)
    names = tol.get("outputs", [])
    max_abs = max_rel = 0.0
    k = 0
    while os.path.exists(os.path.join(casedir, "expected_%d.npy" % k)):
        want = np.load(os.path.join(casedir, "expected_%d.npy" % k), allow_pickle=False)
        name = names[k] if k < len(names) else str(k)
        path = os.path.join(outdir, "out_%d.npy" % k)
        if not os.path.exists(path):
            print("output %s: out_%d.npy was not written" % (name, k))
            return 1
        try:
            got = np.load(path, allow_pickle=False)
        except Exception as e:   # a malformed .npy from the model binary is a test failure
            print("output %s: unreadable out_%d.npy (%s)" % (name, k, str(e).splitlines()[0] if str(e) else type(e).__name__))
            return 1
        msg, a, r = check_one(name, got, want, tol["rtol"], tol["atol"])
        if msg:
            print(msg)
            return 1
        max_abs, max_rel = max(max_abs, a), max(max_rel, r)
        k += 1
    if k == 0:
        print("no expected outputs in %s" % casedir)
        return 1
    print("max_abs_err=%.2g max_rel_err=%.2g" % (max_abs, max_rel))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
