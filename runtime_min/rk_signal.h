/* rk_signal.h - what the signal kernels (rk_signal.c) need from their caller.
 *
 * dft and stft transform one column at a time in ctx->scratch: the column
 * (n complex doubles), a second buffer of n for the direct DFT, and the n
 * twiddle factors. rlxc reserves this many bytes per thread for the thunk.
 */
#ifndef RK_SIGNAL_H
#define RK_SIGNAL_H

#include <stdint.h>

#include "rk_isa.h"

/* Bytes of scratch for an n-point transform; n is at most RK_DFT_MAX_N. */
#define RK_DFT_MAX_N ((int64_t)1 << 28)
static inline int64_t rk_dft_scratch(int64_t n) { return n * 6 * (int64_t)sizeof(double); }

#endif
