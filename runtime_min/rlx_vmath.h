/* rlx_vmath.h - the f32 transcendentals, written once for scalars and vectors.
 *
 * exp, log, tanh, erf, sigmoid, SiLU, GELU (erf form) and the piecewise
 * activations, as straight-line code over a small set of operations: +, -,
 * *, / of floats, ordered compares and selects, and 32-bit integer adds,
 * logical shifts and masks on a float's bits. No fused multiply-add, no
 * table, no branch on a value. Every operation is exactly rounded IEEE
 * arithmetic (or exact), so any instance that performs the same operations
 * in the same order gives the same bits: the scalar one in rlx_scalar.h
 * (generated code, rlxc's constant folding, the kernels' scalar epilogues),
 * the loops compilers vectorize from it, and the AVX2 and AVX-512 ones of
 * rk_vmath.h. Builds must not contract a*b + c (the library and rlxc
 * --build use -ffp-contract=off) nor reassociate (-ffast-math).
 *
 * This file has no include guard: it is included once per instance, after
 * defining
 *     RV, RVU, RVM          the float vector, its 32-bit unsigned bits, a mask
 *     RV_FN(name)           the instance's name of function `name`
 *     RV_C(c), RVU_C(c)     a constant in every lane
 *     RV_ADD/SUB/MUL/DIV    arithmetic
 *     RV_LT/GT/GE/EQ(a, b)  ordered compares (false where either is NaN)
 *     RV_SEL(m, a, b)       m ? a : b per lane
 *     RV_BITS(a), RV_FROM(u)  reinterpretation both ways
 *     RVU_ADD/SUB/AND/OR, RVU_SHL/SHR(u, n)  on the bits (logical shifts)
 *     RVU_TOF(u)            (float)u per lane (u below 2^24)
 *     RV_ANY(m), RV_ALL(m)  whether any / every lane of m is set: a vector
 *                           instance skips a side of a select that no lane
 *                           takes (the other lanes' results do not change);
 *                           the scalar instance defines them as 1 and 0, so
 *                           it computes both sides and its loops stay
 *                           branch-free and vectorize
 * and, optionally, operations that give the bits of a sequence above in
 * fewer instructions:
 *     RV_MAX(c, x)          x < c ? c : x (x where x is NaN), RV_MIN(c, x)
 *                           x > c ? c : x: the clamps (x86's maxps/minps
 *                           with c first)
 *     RV_SCALE(p, nf)       p * 2^nf rounded once, for an integral nf in
 *                           [-151, 128] and p in [0.7, 1.5] (AVX-512's
 *                           vscalefps): what exp_core_ computes otherwise
 *                           from n's bits, in one or two multiplies, both
 *                           exact but the last
 * and it #undefs all of them at its end.
 *
 * Accuracy against correctly rounded results (tests/unit/test_vmath.c
 * checks these bounds over all floats, one in every 997 by default (every
 * one with RLX_VMATH_STEP=1), plus NaN, +-inf, subnormals and each
 * function's saturation points): exp, log and tanh within 2 ulp, sigmoid
 * 3, erf 2, SiLU 4 (relative: erf(x) = x P(x^2) near 0, so
 * subnormal and tiny inputs keep their relative accuracy). Polynomials are
 * minimax fits (scripts/vmath_fit.py), evaluated by Horner's rule.
 *
 *   exp:  x clamped to [-104, 89] (results 0 and +inf beyond; NaN passes
 *         the clamps), n = round(x log2 e) by the 1.5*2^23 trick, r = x -
 *         n ln2 in two parts (Cody-Waite: n * ln2_hi is exact), e^r = 1 +
 *         (r + r^2 Q(r)), times 2^n, as two factors 2^(n/2) where 2^n is
 *         not a normal float (so that subnormal results round once, at the
 *         last multiply). sigmoid, tanh and erf call it with x <= 0, and
 *         without its NaN step (exp_core_): they have their own.
 *   log:  subnormals scaled by 2^23 first; x = 2^k m, m in [sqrt(1/2),
 *         sqrt(2)), f = m - 1 (exact), s = f/(2+f), log(1+f) = f - (f^2/2 -
 *         s (f^2/2 + R(s^2))); k ln2 in two parts; 0 -> -inf, x < 0 -> NaN,
 *         +inf -> +inf.
 *   tanh: on t = |x|: t < 0.55: t + t^3 P(t^2); else (1 - e)/(1 + e), e =
 *         e^(-2t) (saturating to 1 through e = 0); then x's sign.
 *   erf:  |x| < 0.875: x + x P(x^2); else 1 - e^(-t^2) Q(t - 2), t = min(|x|,
 *         4) (erfc(4) < half an ulp of 1: erf is then 1), with x's sign.
 *   sigmoid: e = e^-|x|, (x >= 0 ? 1 : e) / (1 + e): no cancellation on
 *         either side, subnormal results for x below about -87.
 */

#ifdef RV_ATTR
#define RV_DEF_ RV_ATTR
#else
#define RV_DEF_ static inline
#endif

/* |x| and the sign bit of x */
#define RV_ABS_(x) RV_FROM(RVU_AND(RV_BITS(x), RVU_C(0x7fffffffu)))
#define RV_SIGN_(x) RVU_AND(RV_BITS(x), RVU_C(0x80000000u))
#define RV_WITH_SIGN_(y, s) RV_FROM(RVU_OR(RV_BITS(y), s))
/* NaN in, the same NaN out: then x * f(x) (SiLU, GELU) multiplies two
 * equal NaNs, whose product does not depend on the operands' order (a
 * compiler may swap them; x86 returns the first operand's NaN) */
#define RV_NAN_IN_OUT_(x, y) RV_SEL(RV_EQ(x, x), y, x)
#ifndef RV_MAX
#define RV_MAX(c, x) RV_SEL(RV_LT(x, c), c, x)
#define RV_MIN(c, x) RV_SEL(RV_GT(x, c), c, x)
#define RV_CLAMPS_DEFAULT_
#endif
/* Horner steps: q = c + x*q */
#define RV_HORNER_(q, x, c) ((q) = RV_ADD(RV_C(c), RV_MUL(x, q)))

/* e^x for x <= 89 (the callers clamp, or pass x <= 0: then pos is 0, a
 * constant, and the test for 2^n past the normal range looks below it
 * only); a NaN gives some NaN, which the callers replace by x itself. */
RV_DEF_ RV RV_FN(exp_core_)(RV x, int pos) {
    const float shift = 12582912.0f;   /* 1.5 * 2^23: t's last bit is 1 */
    x = RV_MAX(RV_C(-104.0f), x);
    RV t = RV_ADD(RV_MUL(x, RV_C(1.44269502f)), RV_C(shift));
    RV nf = RV_SUB(t, RV_C(shift));   /* round(x log2 e), in [-150, 128] */
    RV r = RV_SUB(RV_SUB(x, RV_MUL(nf, RV_C(0.693359375f))), RV_MUL(nf, RV_C(-2.12194440e-4f)));
    RV q = RV_C(0.00138143194f);
    RV_HORNER_(q, r, 0.00836885069f);
    RV_HORNER_(q, r, 0.0416684002f);
    RV_HORNER_(q, r, 0.166665196f);
    RV_HORNER_(q, r, 0.49999994f);
    RV p = RV_ADD(RV_C(1.0f), RV_ADD(r, RV_MUL(RV_MUL(r, r), q)));
#ifdef RV_SCALE
    (void)pos;
    return RV_SCALE(p, nf);
#else
    RVU n = RVU_SUB(RV_BITS(t), RVU_C(0x4b400000u));
    if (RV_ANY(RV_LT(nf, RV_C(-126.0f))) || (pos && RV_ANY(RV_GT(nf, RV_C(127.0f))))) {
        /* 2^n = 2^n1 * 2^(n - n1), n1 = floor(n/2), both factors normal;
         * where 2^n itself is normal both forms round p * 2^n once, so
         * they agree (the scalar instance always takes this one) */
        RVU n1 = RVU_SUB(RVU_SHR(RVU_ADD(n, RVU_C(256u)), 1), RVU_C(128u));
        RV s1 = RV_FROM(RVU_SHL(RVU_ADD(n1, RVU_C(127u)), 23));
        RV s2 = RV_FROM(RVU_SHL(RVU_ADD(RVU_SUB(n, n1), RVU_C(127u)), 23));
        return RV_MUL(RV_MUL(p, s1), s2);
    }
    return RV_MUL(p, RV_FROM(RVU_SHL(RVU_ADD(n, RVU_C(127u)), 23)));
#endif
}

RV_DEF_ RV RV_FN(exp)(RV x) {
    return RV_NAN_IN_OUT_(x, RV_FN(exp_core_)(RV_MIN(RV_C(89.0f), x), 1));
}

RV_DEF_ RV RV_FN(log)(RV x) {
    RVM sub = RV_LT(x, RV_C(1.17549435e-38f));   /* subnormal, zero or negative */
    RV xs = RV_SEL(sub, RV_MUL(x, RV_C(8388608.0f)), x);
    RV ksub = RV_SEL(sub, RV_C(-23.0f), RV_C(0.0f));
    /* moving m's range to [sqrt(1/2), sqrt(2)) moves the exponent with it */
    RVU ix = RVU_ADD(RV_BITS(xs), RVU_C(0x3f800000u - 0x3f3504f3u));
    RV kf = RV_ADD(RV_SUB(RVU_TOF(RVU_SHR(ix, 23)), RV_C(127.0f)), ksub);
    RV m = RV_FROM(RVU_ADD(RVU_AND(ix, RVU_C(0x007fffffu)), RVU_C(0x3f3504f3u)));
    RV f = RV_SUB(m, RV_C(1.0f));
    RV s = RV_DIV(f, RV_ADD(RV_C(2.0f), f));
    RV z = RV_MUL(s, s);
    RV q = RV_C(0.298730731f);
    RV_HORNER_(q, z, 0.399774969f);
    RV_HORNER_(q, z, 0.666667759f);
    RV rz = RV_MUL(z, q);
    RV hfsq = RV_MUL(RV_MUL(RV_C(0.5f), f), f);
    RV lo = RV_ADD(RV_MUL(s, RV_ADD(hfsq, rz)), RV_MUL(kf, RV_C(3.19461833e-5f)));
    RV y = RV_ADD(RV_ADD(RV_SUB(lo, hfsq), f), RV_MUL(kf, RV_C(0.693115234375f)));
    y = RV_SEL(RV_EQ(x, RV_C(0.0f)), RV_C(-INFINITY), y);
    y = RV_SEL(RV_LT(x, RV_C(0.0f)), RV_C(NAN), y);
    y = RV_SEL(RV_EQ(x, RV_C(INFINITY)), x, y);
    return RV_NAN_IN_OUT_(x, y);
}

/* both sides on |x|, then x's sign: tanh(-0) is -0 */
RV_DEF_ RV RV_FN(tanh)(RV x) {
    RV ax = RV_ABS_(x);
    RVM small = RV_LT(ax, RV_C(0.55f));
    RV ys = ax, yb = ax;
    if (RV_ANY(small)) {
        RV u = RV_MUL(ax, ax);
        RV q = RV_C(-0.00627423963f);
        RV_HORNER_(q, u, 0.0210716799f);
        RV_HORNER_(q, u, -0.0538523085f);
        RV_HORNER_(q, u, 0.13332586f);
        RV_HORNER_(q, u, -0.333333164f);
        ys = RV_ADD(ax, RV_MUL(ax, RV_MUL(u, q)));
    }
    if (!RV_ALL(small)) {
        RV e = RV_FN(exp_core_)(RV_MUL(ax, RV_C(-2.0f)), 0);
        yb = RV_DIV(RV_SUB(RV_C(1.0f), e), RV_ADD(RV_C(1.0f), e));
    }
    return RV_NAN_IN_OUT_(x, RV_WITH_SIGN_(RV_SEL(small, ys, yb), RV_SIGN_(x)));
}

RV_DEF_ RV RV_FN(erf)(RV x) {
    RV ax = RV_ABS_(x);
    RVM small = RV_LT(ax, RV_C(0.875f));
    RV ys = x, yb = x;
    if (RV_ANY(small)) {
        RV u = RV_MUL(x, x);
        RV q = RV_C(8.67539202e-05f);
        RV_HORNER_(q, u, -0.000821110385f);
        RV_HORNER_(q, u, 0.00520674745f);
        RV_HORNER_(q, u, -0.0268615838f);
        RV_HORNER_(q, u, 0.11283733f);
        RV_HORNER_(q, u, -0.376126349f);
        RV_HORNER_(q, u, 0.128379166f);
        ys = RV_ADD(x, RV_MUL(x, q));
    }
    if (!RV_ALL(small)) {
        RV t = RV_MIN(RV_C(4.0f), ax);
        RV e = RV_FN(exp_core_)(RV_MUL(RV_MUL(t, t), RV_C(-1.0f)), 0);
        RV s = RV_SUB(t, RV_C(2.0f));
        RV q = RV_C(0.000142779521f);
        RV_HORNER_(q, s, -0.000149034793f);
        RV_HORNER_(q, s, 0.00046574173f);
        RV_HORNER_(q, s, -0.00194405171f);
        RV_HORNER_(q, s, 0.00545933237f);
        RV_HORNER_(q, s, -0.0154183377f);
        RV_HORNER_(q, s, 0.0418107212f);
        RV_HORNER_(q, s, -0.106798209f);
        RV_HORNER_(q, s, 0.255395353f);
        yb = RV_WITH_SIGN_(RV_SUB(RV_C(1.0f), RV_MUL(e, q)), RV_SIGN_(x));
    }
    return RV_NAN_IN_OUT_(x, RV_SEL(small, ys, yb));
}

RV_DEF_ RV RV_FN(sigmoid)(RV x) {
    RV e = RV_FN(exp_core_)(RV_FROM(RVU_OR(RV_BITS(x), RVU_C(0x80000000u))), 0);   /* e^-|x| */
    return RV_NAN_IN_OUT_(x, RV_DIV(RV_SEL(RV_GE(x, RV_C(0.0f)), RV_C(1.0f), e), RV_ADD(RV_C(1.0f), e)));
}

/* x * sigmoid(x): ONNX exports of SiLU are Mul(x, Sigmoid(x)) */
RV_DEF_ RV RV_FN(silu)(RV x) { return RV_MUL(x, RV_FN(sigmoid)(x)); }

/* GELU as PyTorch exports it at opset 17: (x * (erf(x / sqrt 2) + 1)) * 0.5 */
RV_DEF_ RV RV_FN(gelu)(RV x) {
    RV e = RV_FN(erf)(RV_DIV(x, RV_C(1.41421354f)));
    return RV_MUL(RV_MUL(x, RV_ADD(e, RV_C(1.0f))), RV_C(0.5f));
}

/* HardSigmoid: alpha*x + beta clamped to [0, 1] (NaN passes) */
RV_DEF_ RV RV_FN(hardsigmoid)(RV x, float alpha, float beta) {
    RV y = RV_ADD(RV_MUL(RV_C(alpha), x), RV_C(beta));
    return RV_MIN(RV_C(1.0f), RV_MAX(RV_C(0.0f), y));
}

/* HardSwish: x * HardSigmoid(x) with alpha 1/6, beta 1/2 */
RV_DEF_ RV RV_FN(hardswish)(RV x) { return RV_MUL(x, RV_FN(hardsigmoid)(x, 1.0f / 6.0f, 0.5f)); }

RV_DEF_ RV RV_FN(leakyrelu)(RV x, float alpha) {
    return RV_SEL(RV_LT(x, RV_C(0.0f)), RV_MUL(RV_C(alpha), x), x);
}

#undef RV_DEF_
#undef RV_ABS_
#undef RV_SIGN_
#undef RV_WITH_SIGN_
#undef RV_HORNER_
#undef RV_NAN_IN_OUT_

/* the instance's macros, so that the next instance defines its own */
#undef RV
#undef RVU
#undef RVM
#undef RV_FN
#undef RV_C
#undef RVU_C
#undef RV_ADD
#undef RV_SUB
#undef RV_MUL
#undef RV_DIV
#undef RV_LT
#undef RV_GT
#undef RV_GE
#undef RV_EQ
#undef RV_SEL
#undef RV_BITS
#undef RV_FROM
#undef RVU_ADD
#undef RVU_SUB
#undef RVU_AND
#undef RVU_OR
#undef RVU_SHL
#undef RVU_SHR
#undef RVU_TOF
#undef RV_ANY
#undef RV_ALL
#undef RV_MAX
#undef RV_MIN
#undef RV_SCALE
#undef RV_CLAMPS_DEFAULT_
