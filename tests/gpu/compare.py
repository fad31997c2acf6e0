#!/usr/bin/python3
"""compare.py [--exact] REF_DIR GOT_DIR [TOL.JSON] - a GPU target's outputs against the C target's.

out_K.npy of both directories, K = 0, 1, ...: the same dtype and shape;
(TOL.JSON, if it is a file, holds {"rtol", "atol"}; else 1e-3 and 1e-4)
floats within |got - ref| <= atol + rtol * |ref| (NaN where NaN, infinities
equal), integers and bools exactly. --exact: every output the same bytes
(two runs of one target, such as the CUDA shim's two thread orders). Prints
one line (the worst error or the first mismatch); exit status 1 on a
mismatch.
"""
import json
import os
import sys

import numpy as np


def exact(ref_dir, got_dir):
    k = 0
    while os.path.exists(os.path.join(ref_dir, "out_%d.npy" % k)):
        ref = np.load(os.path.join(ref_dir, "out_%d.npy" % k))
        p = os.path.join(got_dir, "out_%d.npy" % k)
        if not os.path.exists(p):
            sys.exit("output %d missing" % k)
        got = np.load(p)
        if got.dtype != ref.dtype or got.shape != ref.shape or got.tobytes() != ref.tobytes():
            diff = (int(np.count_nonzero(np.frombuffer(got.tobytes(), np.uint8) != np.frombuffer(ref.tobytes(), np.uint8)))
                    if got.shape == ref.shape and got.dtype == ref.dtype else -1)
            sys.exit("output %d differs (%s bytes)" % (k, diff if diff >= 0 else "shape or dtype"))
        k += 1
    if k == 0:
        sys.exit("no outputs")
    print("%d outputs, the same bytes" % k)


def main():
    if sys.argv[1] == "--exact":
        exact(sys.argv[2], sys.argv[3])
        return
    ref_dir, got_dir = sys.argv[1:3]
    tol_path = sys.argv[3] if len(sys.argv) > 3 else ""
    tol = {"rtol": 1e-3, "atol": 1e-4}
    if os.path.isfile(tol_path):
        tol = json.load(open(tol_path))
    k, worst = 0, 0.0
    while os.path.exists(os.path.join(ref_dir, "out_%d.npy" % k)):
        ref = np.load(os.path.join(ref_dir, "out_%d.npy" % k))
        p = os.path.join(got_dir, "out_%d.npy" % k)
        if not os.path.exists(p):
            sys.exit("output %d missing" % k)
        got = np.load(p)
        if got.dtype != ref.dtype or got.shape != ref.shape:
            sys.exit("output %d: %s %s, the C target %s %s" % (k, got.dtype, got.shape, ref.dtype, ref.shape))
        if ref.dtype.kind not in "fc":
            bad = int(np.count_nonzero(got != ref))
            if bad:
                sys.exit("output %d: %d of %d elements differ" % (k, bad, ref.size))
        else:
            g, r = got.astype(np.float64), ref.astype(np.float64)
            if (np.isnan(g) != np.isnan(r)).any():
                sys.exit("output %d: NaN mismatch" % k)
            fin = np.isfinite(r)
            if (np.isinf(g) != np.isinf(r)).any() or (g[~fin & ~np.isnan(r)] != r[~fin & ~np.isnan(r)]).any():
                sys.exit("output %d: infinity mismatch" % k)
            err = np.abs(g[fin] - r[fin])
            if err.size:
                worst = max(worst, float(err.max()))
                if (err > tol["atol"] + tol["rtol"] * np.abs(r[fin])).any():
                    sys.exit("output %d: max abs error %.3g over the bound" % (k, float(err.max())))
        k += 1
    if k == 0:
        sys.exit("no outputs")
    print("max abs error vs the C target %.3g" % worst)


if __name__ == "__main__":
    main()
