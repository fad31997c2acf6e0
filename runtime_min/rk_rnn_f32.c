/* rk_rnn_f32.c - the activations of the f32 recurrent kernel (rk_rnn.c,
 * rk_rnn_f32) over runs of floats, compiled per instruction set (rk_isa.h
 * RK_ISA_FILES): the only part of that kernel that needs wide vectors, since
 * its products are the GEMM's few-rows entry, which is already compiled per
 * instruction set. Keeping the rest of the kernel (projections, state,
 * gates' arithmetic) in rk_rnn.c, compiled once, keeps three copies of it
 * out of every model with a recurrent layer.
 *
 * Only the activations a packed recurrent node can have (ext_rnn.c,
 * rlx_rnn_packable): Sigmoid, Tanh and Relu, in rk_vmath.h's vectors, with
 * rs_act's bits on every instruction set.
 */
#include "rk_rnn.h"
#include "rk_vmath.h"

/* One activation over y[0, n), one vector at a time; the last few lanes
 * go through the same code (AVX-512: masked loads and stores; AVX2, which
 * has no masked arithmetic: a vector-sized copy), so each activation's
 * vector code is here once. */
static inline void act_run(float *y, int64_t n, int act) {
#if defined(__AVX512F__)
    for (int64_t j = 0; j < n; j += 16) {
        __mmask16 m = n - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - j)) - 1);
        _mm512_mask_storeu_ps(y + j, m, rk_v16_act(_mm512_maskz_loadu_ps(m, y + j), act, 0.0f, 0.0f));
    }
#elif defined(__AVX2__)
    for (int64_t j = 0; j < n; j += 8) {
        float t[8] = {0}, *v = n - j >= 8 ? y + j : t;
        if (v == t) memcpy(t, y + j, sizeof(float) * (size_t)(n - j));
        _mm256_storeu_ps(v, rk_v8_act(_mm256_loadu_ps(v), act, 0.0f, 0.0f));
        if (v == t) memcpy(y + j, t, sizeof(float) * (size_t)(n - j));
    }
#else
    for (int64_t j = 0; j < n; j++) y[j] = rs_act(y[j], act, 0.0f, 0.0f);
#endif
}

void rk_rnn_act_f32(float *y, int64_t n, int64_t act) {
    switch (act) {
    case RS_ACT_SIGMOID: act_run(y, n, RS_ACT_SIGMOID); break;
    case RS_ACT_TANH: act_run(y, n, RS_ACT_TANH); break;
    case RS_ACT_RELU: act_run(y, n, RS_ACT_RELU); break;
    default: break;
    }
}
