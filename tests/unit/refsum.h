/* refsum.h - a float result against its double-precision sum, for the
 * convolution tests that check their reference that way (test_conv_s2,
 * test_conv_grouped): finite pairs give the worst relative error,
 * |v - s| / (1 + |s|); where either is not finite, v must be what the
 * sum is (NaN for NaN, the same infinity). */
#ifndef REFSUM_H
#define REFSUM_H

#include <math.h>
#include <stddef.h>

typedef struct {
    double worst;          /* largest relative error over finite pairs */
    size_t special_wrong;  /* non-finite pairs that disagree */
} RefErr;

static inline void ref_compare(RefErr *e, double s, float v) {
    if (!isfinite(s) || !isfinite(v)) {
        e->special_wrong += isnan(s) ? !isnan(v) : (double)v != s;
        return;
    }
    double d = fabs((double)v - s) / (1.0 + fabs(s));
    if (d > e->worst) e->worst = d;
}

#endif
