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

/* One batch row of an LSTM step in one pass, where the node has the
 * default activations (sigmoid, tanh, tanh), no peepholes, no clip and no
 * coupled input and forget gates: pre (the gates i, o, f, c of the
 * recurrent product, h each) += x, then c = f * c + i * g, h = o * tanh(c),
 * y = h. rf_lstm_step's passes over the gates, one operation at a time,
 * were 16% of a hidden-256 LSTM's time; these are the same operations per
 * element (the activations rk_vmath.h's, products and sums unfused), so
 * the same bits. pre is only read: nothing reads the gates after the step. */
#if defined(__AVX512F__)
#define LG_W 16
#define LG_V __m512
#define LG_M __mmask16
#define LG_MASK(n) rk_v16_lanes(n)
#define LG_LOAD(m, p) _mm512_maskz_loadu_ps(m, p)
#define LG_STORE(m, p, v) _mm512_mask_storeu_ps(p, m, v)
#define LG_ADD(a, b) _mm512_add_ps(a, b)
#define LG_MUL(a, b) _mm512_mul_ps(a, b)
#define LG_SIG(v) rk_v16_sigmoid(v)
#define LG_TANH(v) rk_v16_tanh(v)
#elif defined(__AVX2__)
#define LG_W 8
#define LG_V __m256
#define LG_M __m256i
#define LG_MASK(n) rk_v8_lanes(n)
#define LG_LOAD(m, p) _mm256_maskload_ps(p, m)
#define LG_STORE(m, p, v) _mm256_maskstore_ps(p, m, v)
#define LG_ADD(a, b) _mm256_add_ps(a, b)
#define LG_MUL(a, b) _mm256_mul_ps(a, b)
#define LG_SIG(v) rk_v8_sigmoid(v)
#define LG_TANH(v) rk_v8_tanh(v)
#endif

void rk_rnn_lstm_gates_f32(const float *pre, const float *x, float *c, float *hb, float *y, int64_t h, int64_t n) {
    const float *gi = pre, *go = pre + h, *gf = pre + 2 * h, *gc = pre + 3 * h;
    const float *xi = x, *xo = x + h, *xf = x + 2 * h, *xc = x + 3 * h;
#ifdef LG_W
    for (int64_t j = 0; j < n; j += LG_W) {
        LG_M m = LG_MASK(n - j);   /* one loop for the tail too */
        LG_V pi = LG_ADD(LG_LOAD(m, gi + j), LG_LOAD(m, xi + j)), po = LG_ADD(LG_LOAD(m, go + j), LG_LOAD(m, xo + j));
        LG_V pf = LG_ADD(LG_LOAD(m, gf + j), LG_LOAD(m, xf + j)), pc = LG_ADD(LG_LOAD(m, gc + j), LG_LOAD(m, xc + j));
        LG_V cn = LG_ADD(LG_MUL(LG_SIG(pf), LG_LOAD(m, c + j)), LG_MUL(LG_SIG(pi), LG_TANH(pc)));
        LG_V hn = LG_MUL(LG_SIG(po), LG_TANH(cn));
        LG_STORE(m, c + j, cn), LG_STORE(m, hb + j, hn), LG_STORE(m, y + j, hn);
    }
#else
    for (int64_t j = 0; j < n; j++) {
        float pi = gi[j] + xi[j], po = go[j] + xo[j], pf = gf[j] + xf[j], pc = gc[j] + xc[j];
        float cn = rs_sigmoid(pf) * c[j] + rs_sigmoid(pi) * rs_tanh(pc);
        c[j] = cn;
        hb[j] = y[j] = rs_sigmoid(po) * rs_tanh(cn);
    }
#endif
}
