#!/usr/bin/python3
"""compare.py - checks one zoo model's output against PyTorch's.

    compare.py EXPECTED.npy GOT.npy [RTOL ATOL]

dtype and shape must match; then every element must satisfy
|got - want| <= atol + rtol * |want| (defaults rtol 1e-3, atol 1e-4), with NaN
exactly where NaN is expected. Prints one line, `max_abs_err=X` on success
(exit 0), else what is wrong (exit 1).
"""
import sys

import numpy as np


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit("usage: compare.py EXPECTED.npy GOT.npy [RTOL ATOL]")
    rtol, atol = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) == 5 else (1e-3, 1e-4)
    want = np.load(sys.argv[1])
    try:
        got = np.load(sys.argv[2])
    except Exception as e:
        print("cannot read %s: %s" % (sys.argv[2], e))
        return 1
    if got.dtype != want.dtype or got.shape != want.shape:
        print("got %s %s, expected %s %s" % (got.dtype, list(got.shape), want.dtype, list(want.shape)))
        return 1
    g, w = got.astype(np.float64), want.astype(np.float64)
    if (np.isnan(g) != np.isnan(w)).any():
        print("NaN mismatch in %d elements" % int(np.count_nonzero(np.isnan(g) != np.isnan(w))))
        return 1
    fin = ~np.isnan(w)
    err = np.abs(g[fin] - w[fin])
    max_err = float(err.max()) if err.size else 0.0
    bad = err > atol + rtol * np.abs(w[fin])
    if bad.any():
        print("max_abs_err=%.3g: %d of %d elements out of tolerance (rtol %g, atol %g)"
              % (max_err, int(bad.sum()), want.size, rtol, atol))
        return 1
    print("max_abs_err=%.3g" % max_err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
