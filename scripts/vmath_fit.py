#!/usr/bin/python3
"""vmath_fit.py - derives the polynomial coefficients of runtime_min/rlx_vmath.h.

    /usr/bin/python3 scripts/vmath_fit.py

Prints, for each approximation rlx_vmath.h uses, its minimax coefficients
(Remez exchange in 40-digit mpmath arithmetic, on a grid of 4000 Chebyshev
points), rounded to the nearest float, and the approximation's own error
bound (before float rounding of the evaluation, which adds about one ulp;
tests/unit/test_vmath.c measures the whole function against libm). The
header's constants are this output; rerun it when an interval or a degree
changes.

    exp    e^r = 1 + r + r^2 Q(r),  |r| <= ln2/2 (+0.2%),  Q of degree 4,
           relative error
    tanh   tanh x = x + x^3 P(x^2),  0 < x < 0.55,  P of degree 4, relative
    erf    erf x = x + x P(x^2),  0 < x < 0.875,  P of degree 6, relative;
           erfc t = e^(-t^2) Q(t - 2),  0.875 <= t <= 4,  Q of degree 8,
           absolute error in erf (weight e^(-t^2))
    log    log(1+f) = 2 atanh s = 2s + s R(s^2),  s = f/(2+f),
           f in [sqrt(1/2) - 1, sqrt(2) - 1],  R(z) = z (c1 + c2 z + c3 z^2),
           error relative to 2s
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def remez(f, w, basis, a, b, iters=40, grid=4000):
    """Coefficients c minimising max |w(x) (sum c_k basis_k(x) - f(x))| on [a, b], and that maximum."""
    n = len(basis)
    xs = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / n) for i in range(n + 1)]
    grid_x = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / grid) for i in range(grid + 1)]
    best = None
    for _ in range(iters):
        m = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for i, x in enumerate(xs):
            for k in range(n):
                m[i, k] = basis[k](x)
            m[i, n] = (-1) ** i / w(x)
            rhs[i] = f(x)
        sol = mp.lu_solve(m, rhs)
        c = [sol[k] for k in range(n)]
        level = abs(sol[n])
        err = [w(x) * (sum(c[k] * basis[k](x) for k in range(n)) - f(x)) for x in grid_x]
        worst = max(abs(e) for e in err)
        if best is None or worst < best[1]:
            best = (c, worst)
        if worst - level < level * mp.mpf("1e-4"):
            break
        # the new reference: the largest error of each run of one sign
        runs, cur = [], [0]
        for i in range(1, len(grid_x)):
            if mp.sign(err[i]) == mp.sign(err[cur[-1]]) or err[i] == 0:
                cur.append(i)
            else:
                runs.append(cur)
                cur = [i]
        runs.append(cur)
        pts = [max(r, key=lambda i: abs(err[i])) for r in runs]
        while len(pts) > n + 1:
            pts.pop(0 if abs(err[pts[0]]) < abs(err[pts[-1]]) else -1)
        if len(pts) < n + 1:
            break
        xs = [grid_x[i] for i in pts]
    return best


def power(k, centre=0):
    return lambda x: (x - centre) ** k


def show(name, c, err):
    coefs = ", ".join("%.9gf" % float(np.float32(float(x))) for x in c)
    print("%-5s error %.3g (%.4f ulp of 2^-24)  {%s}" % (name, float(err), float(err) * 2 ** 24, coefs))


def main():
    r = mp.log(2) / 2 * mp.mpf("1.002")
    c, e = remez(lambda x: mp.exp(x) - 1 - x, lambda x: 1 / mp.exp(x), [power(k + 2) for k in range(5)], -r, r)
    show("exp", c, e)

    c, e = remez(lambda x: mp.tanh(x) - x, lambda x: 1 / mp.tanh(x), [power(2 * k + 3) for k in range(5)],
                 mp.mpf("1e-6"), mp.mpf("0.55"))
    show("tanh", c, e)

    c, e = remez(lambda x: mp.erf(x) - x, lambda x: 1 / mp.erf(x), [power(2 * k + 1) for k in range(7)],
                 mp.mpf("1e-6"), mp.mpf("0.875"))
    show("erf", c, e)
    c, e = remez(lambda t: mp.erfc(t) * mp.exp(t * t), lambda t: mp.exp(-t * t), [power(k, 2) for k in range(9)],
                 mp.mpf("0.875"), mp.mpf("4"))
    show("erfc", c, e)

    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
    c, e = remez(lambda z: 2 * mp.atanh(mp.sqrt(z)) / mp.sqrt(z) - 2, lambda z: mp.mpf(1) / 2,
                 [power(k + 1) for k in range(3)], mp.mpf("1e-12"), smax ** 2 * mp.mpf("1.001"))
    show("log", c, e)


if __name__ == "__main__":
    main()
