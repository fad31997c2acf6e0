/* rk_conv.c - kernels of the conv family: pooling over 1 to 3 spatial axes
 * (max, average, Lp; global pooling is a window over the whole plane), 3-D
 * convolution and transposed convolution (rk_kernels.def).
 *
 * Spatial geometry always comes as 3 axes (z, y, x): the lowering pads a 1-D
 * or 2-D window with leading axes of size 1 (kernel 1, stride 1, no pads),
 * so one fixed loop nest serves every rank and the innermost loop walks the
 * contiguous x axis. 1-D and 2-D convolution use conv2d_f32 (rk_convgemm.c),
 * the fast path; conv_nd_f32 is its 3-D twin, written the same way: one
 * "axpy" per filter tap along an output row.
 *
 * Pooling visits each output position once and reduces the kernel taps that
 * fall inside the input (tap_range clips them per axis), so padding never
 * contributes: max pooling pads with -inf, Lp pooling with 0, and average
 * pooling counts the padding (within the pads) only if count_include_pad.
 * Max pooling copies the winning element, so it is exact for every dtype
 * (f32, f64, f16, bf16, i8, u8); NaN propagates, the first maximum wins.
 * Average and Lp pooling accumulate in float (double for f64) in tap order
 * and round once to the output dtype.
 */
#include "rlx_rt.h"
#include "rk_gemm.h"
#include "rk_typed.h"
#include "rlx_scalar.h"
#include "rk_vmath.h"
#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include <math.h>
#include <string.h>

/* ---- shared geometry ---- */

/* Taps t in [*lo, *hi) of a kernel of k taps, dilation d, whose coordinate
 * start + t*d lies in [0, size). */
static void tap_range(int64_t start, int64_t k, int64_t d, int64_t size, int64_t *lo, int64_t *hi) {
    int64_t a, b;
    if (d == 1) {   /* no divisions: this runs once per output position */
        a = start >= 0 ? 0 : -start;
        b = size - start <= 0 ? 0 : size - start;
    } else {
        a = start >= 0 ? 0 : (-start + d - 1) / d;
        b = size - start <= 0 ? 0 : (size - start + d - 1) / d;
    }
    if (b > k) b = k;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* 3 spatial dims, each > 0 where it must be; -1 if a window param is invalid. */
static int bad_geometry(const int64_t *in, const int64_t *out, const int64_t *k, const int64_t *s, const int64_t *d) {
    for (int a = 0; a < 3; a++)
        if (in[a] < 0 || out[a] < 0 || k[a] < 0 || s[a] <= 0 || d[a] <= 0) return 1;
    return 0;
}

static int64_t vol3(const int64_t *dims) { return dims[0] * dims[1] * dims[2]; }

/* ---- pooling ---- */

/* One output position: per axis the first input coordinate of the window
 * and the taps [lo, hi) inside the input. */
typedef struct {
    int64_t start[3], lo[3], hi[3];
} Window;

static int64_t window_taps(const Window *w) {
    return (w->hi[0] - w->lo[0]) * (w->hi[1] - w->lo[1]) * (w->hi[2] - w->lo[2]);
}

static float f16_value(uint16_t h) { return rlx_f16_to_f32(h); }
static float bf16_value(uint16_t h) { return rlx_bf16_to_f32(h); }
#define AS_IS(v) (v)

/* Max over the window, one function per dtype: the offset of the winner in
 * the plane, -1 if the window holds padding only. KT is the type the
 * elements compare in (exactly). */
#define DEFINE_WINDOW_MAX(NAME, T, KT, KEY)                                                   \
    static int64_t NAME(const rk_pool_nd_params *p, const Window *w, const T *x) {            \
        const int64_t *in = p->in_dims, *d = p->d;                                            \
        int64_t best_at = -1;                                                                 \
        KT best = 0;                                                                          \
        for (int64_t tz = w->lo[0]; tz < w->hi[0]; tz++) {                                    \
            int64_t iz = w->start[0] + tz * d[0];                                             \
            for (int64_t ty = w->lo[1]; ty < w->hi[1]; ty++) {                                \
                const T *row = x + (iz * in[1] + w->start[1] + ty * d[1]) * in[2] + w->start[2]; \
                for (int64_t tx = w->lo[2]; tx < w->hi[2]; tx++) {                            \
                    KT v = KEY(row[tx * d[2]]);                                               \
                    /* strictly greater: the first maximum wins; the first NaN sticks */      \
                    if (best_at < 0 || v > best || (v != v && best == best)) {                \
                        best = v;                                                             \
                        best_at = (row - x) + tx * d[2];                                      \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        return best_at;                                                                       \
    }
DEFINE_WINDOW_MAX(window_max_f32, float, float, AS_IS)
DEFINE_WINDOW_MAX(window_max_f64, double, double, AS_IS)
DEFINE_WINDOW_MAX(window_max_f16, uint16_t, float, f16_value)
DEFINE_WINDOW_MAX(window_max_bf16, uint16_t, float, bf16_value)
DEFINE_WINDOW_MAX(window_max_i8, int8_t, int, AS_IS)
DEFINE_WINDOW_MAX(window_max_u8, uint8_t, int, AS_IS)

static int64_t window_max(const rk_pool_nd_params *p, const Window *w, const void *x) {
    switch (p->dtype) {
    case RLX_F32: return window_max_f32(p, w, x);
    case RLX_F64: return window_max_f64(p, w, x);
    case RLX_F16: return window_max_f16(p, w, x);
    case RLX_BF16: return window_max_bf16(p, w, x);
    case RLX_I8: return window_max_i8(p, w, x);
    default: return window_max_u8(p, w, x);
    }
}

/* Sum over the window of XFORM(x), accumulated in ACC: x for average
 * pooling, |x|^p for Lp pooling (e = p). */
#define DEFINE_WINDOW_SUM(NAME, T, ACC, LOAD, XFORM)                                          \
    static double NAME(const rk_pool_nd_params *p, const Window *w, const T *x) {             \
        const int64_t *in = p->in_dims, *d = p->d;                                            \
        ACC sum = 0, e = (ACC)p->p;                                                           \
        (void)e;                                                                              \
        for (int64_t tz = w->lo[0]; tz < w->hi[0]; tz++) {                                    \
            int64_t iz = w->start[0] + tz * d[0];                                             \
            for (int64_t ty = w->lo[1]; ty < w->hi[1]; ty++) {                                \
                const T *row = x + (iz * in[1] + w->start[1] + ty * d[1]) * in[2] + w->start[2]; \
                for (int64_t tx = w->lo[2]; tx < w->hi[2]; tx++) {                            \
                    ACC v = LOAD(row[tx * d[2]]);                                             \
                    sum += XFORM(v);                                                          \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        return (double)sum;                                                                   \
    }
#define LP_F(v) (e == 1 ? fabsf(v) : e == 2 ? (v) * (v) : powf(fabsf(v), e))
#define LP_D(v) (e == 1 ? fabs(v) : e == 2 ? (v) * (v) : pow(fabs(v), e))
DEFINE_WINDOW_SUM(window_sum_f32, float, float, AS_IS, AS_IS)
DEFINE_WINDOW_SUM(window_sum_f64, double, double, AS_IS, AS_IS)
DEFINE_WINDOW_SUM(window_sum_f16, uint16_t, float, f16_value, AS_IS)
DEFINE_WINDOW_SUM(window_sum_bf16, uint16_t, float, bf16_value, AS_IS)
DEFINE_WINDOW_SUM(window_lp_f32, float, float, AS_IS, LP_F)
DEFINE_WINDOW_SUM(window_lp_f64, double, double, AS_IS, LP_D)
DEFINE_WINDOW_SUM(window_lp_f16, uint16_t, float, f16_value, LP_F)
DEFINE_WINDOW_SUM(window_lp_bf16, uint16_t, float, bf16_value, LP_F)

static double window_sum(const rk_pool_nd_params *p, const Window *w, const void *x) {
    int lp = p->op == 2;
    switch (p->dtype) {
    case RLX_F32: return lp ? window_lp_f32(p, w, x) : window_sum_f32(p, w, x);
    case RLX_F64: return lp ? window_lp_f64(p, w, x) : window_sum_f64(p, w, x);
    case RLX_F16: return lp ? window_lp_f16(p, w, x) : window_sum_f16(p, w, x);
    default: return lp ? window_lp_bf16(p, w, x) : window_sum_bf16(p, w, x);
    }
}

static void store_float(void *y, int64_t o, int dtype, double v) {
    switch (dtype) {
    case RLX_F64: ((double *)y)[o] = v; break;
    case RLX_F32: ((float *)y)[o] = (float)v; break;
    case RLX_F16: ((uint16_t *)y)[o] = rlx_f32_to_f16((float)v); break;
    default: ((uint16_t *)y)[o] = rlx_f32_to_bf16((float)v); break;
    }
}

/* The output of a max window with no input tap: the dtype's lowest value. */
static void store_lowest(void *y, int64_t o, int dtype) {
    switch (dtype) {
    case RLX_F64: ((double *)y)[o] = -INFINITY; break;
    case RLX_F32: ((float *)y)[o] = -INFINITY; break;
    case RLX_F16: ((uint16_t *)y)[o] = 0xfc00u; break;
    case RLX_BF16: ((uint16_t *)y)[o] = 0xff80u; break;
    case RLX_I8: ((int8_t *)y)[o] = INT8_MIN; break;
    default: ((uint8_t *)y)[o] = 0; break;
    }
}

/* The common case, 2-D f32 max pooling without indices or dilation. Each
 * output row folds its window's valid taps with rs_max in row-major order
 * (rs_max keeps the first NaN and, among equal values, the last; it is
 * associative, so folding input row by input row over a whole output row
 * gives the same bits as folding each window alone). Columns whose window
 * leaves the image are clipped one by one; the interior is one loop per tap
 * over the output row, which a compiler vectorizes. Channels are split over
 * threads, each computed whole, so results do not depend on the count. */
typedef struct {
    const rk_pool_nd_params *p;
    const float *x;
    float *y;
    int64_t ntasks;
    rk_queue *q;   /* channels in runs, POOL_RUNS per thread (rk_take) */
    void (*plane)(const rk_pool_nd_params *p, const float *x, float *y);   /* 2-D paths: one channel */
} PoolF32;

enum { POOL_RUNS = 4 };

/* acc[j] = rs_max(acc[j], src[j*S]) for j in [0, n); S is a constant in the
 * calls below, so the loads are contiguous or a fixed stride. */
static inline void max_fold(float *restrict acc, const float *restrict src, int64_t n, int64_t s) {
    for (int64_t j = 0; j < n; j++) acc[j] = rs_max(acc[j], src[j * s]);
}

/* One output row's window rows [y0, y1) over an input plane, for the
 * vector interiors below. */
typedef struct {
    const float *x;
    int64_t w, y0, y1, kw, sw, pl;
} MaxRow;

#if defined(__AVX512F__)
/* The interior columns [lo, hi) of one output row, stride 1 or 2, 16 at a
 * time, up to four vectors at once (independent chains). Each vector folds
 * the window's rows and taps in the scalar loop's order. maxps(acc, x) is
 * rs_max(acc, x) (acc > x ? acc : x, x where x is NaN) except where acc is
 * already NaN, which rs_max keeps: a window with a NaN (x - x is NaN for
 * NaN and inf, else +0) goes through rs_max's rule again (compare and
 * blend), so the same element wins either way. A stride-2 vector reads its
 * 31 elements as [0, 16) and [15, 31): none past the window. */

static inline __m512 mp_tap(const MaxRow *r, const float *src, __mmask16 ma, __mmask16 mb) {
    const __m512i pick = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
    __m512 v = rk_load16(ma, src);
    return r->sw == 2 ? _mm512_permutex2var_ps(v, pick, rk_load16(mb, src + 15)) : v;
}

/* nv vectors from output column ox (n lanes in the last one) */
static inline void mp_vectors(const MaxRow *r, int64_t ox, int nv, int64_t n, float *yrow) {
    __m512 acc[4];
    __m512i odd = _mm512_setzero_si512();
    int64_t span = r->sw == 1 ? n : 2 * n - 1;   /* elements the last vector reads: [0, 16) and [15, 31) */
    __mmask16 la = (__mmask16)(span >= 16 ? 0xffffu : 0xffffu >> (16 - span));
    __mmask16 lb = (__mmask16)(span <= 15 ? 0u : 0xffffu >> (31 - span));
    for (int j = 0; j < nv; j++) acc[j] = _mm512_set1_ps(-INFINITY);
    /* every tap v of every vector j, rows then taps */
#define MP_TAPS(STEP)                                                                                       \
    for (int64_t iy = r->y0; iy < r->y1; iy++)                                                              \
        for (int64_t t = 0; t < r->kw; t++)                                                                 \
            for (int j = 0; j < nv; j++) {                                                                  \
                const float *src = r->x + iy * r->w + (ox + 16 * j) * r->sw - r->pl + t;                   \
                __m512 v = j == nv - 1 ? mp_tap(r, src, la, lb) : mp_tap(r, src, 0xffff, 0xffff);          \
                STEP;                                                                                       \
            }
#define MP_FOLD(v)                                                               \
    {                                                                            \
        __m512 v_ = (v);                                                         \
        acc[j] = _mm512_max_ps(acc[j], v_);                                      \
        odd = _mm512_or_si512(odd, _mm512_castps_si512(_mm512_sub_ps(v_, v_)));  \
    }
    if (r->sw == 2 && r->kw == 3) {
        /* 3 taps at stride 2 (ResNet's pool): 33 elements per vector, loaded
         * once as [0, 16), [16, 32), [32]: evens, odds, and evens shifted
         * by one (valignd), folded in tap order */
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const __m512i oddi = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        int64_t e = 2 * n + 1;   /* elements the last vector reads */
        __mmask16 l0 = (__mmask16)(e >= 16 ? 0xffffu : 0xffffu >> (16 - e)), l1 = (__mmask16)(e <= 16 ? 0u : e >= 32 ? 0xffffu : 0xffffu >> (32 - e));
        __mmask16 l2 = (__mmask16)(e > 32 ? 1u : 0u);
        for (int64_t iy = r->y0; iy < r->y1; iy++)
            for (int j = 0; j < nv; j++) {
                const float *src = r->x + iy * r->w + (ox + 16 * j) * 2 - r->pl;
                int last = j == nv - 1;
                /* of c only lane 0 is used */
                __m512 a = rk_load16(last ? l0 : 0xffff, src), b = rk_load16(last ? l1 : 0xffff, src + 16);
                __m512 c = rk_load_first(!last || l2, src + 32);
                __m512 ev = _mm512_permutex2var_ps(a, even, b);
                MP_FOLD(ev)
                MP_FOLD(_mm512_permutex2var_ps(a, oddi, b))
                MP_FOLD(_mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(c), _mm512_castps_si512(ev), 1)))
            }
    } else {
        MP_TAPS(MP_FOLD(v))
    }
#undef MP_FOLD
    if (_mm512_test_epi32_mask(odd, odd)) {
        for (int j = 0; j < nv; j++) acc[j] = _mm512_set1_ps(-INFINITY);
        MP_TAPS(acc[j] = _mm512_mask_blend_ps(
                    _mm512_cmp_ps_mask(acc[j], v, _CMP_GT_OQ) | _mm512_cmp_ps_mask(acc[j], acc[j], _CMP_UNORD_Q), v, acc[j]))
    }
#undef MP_TAPS
    for (int j = 0; j < nv; j++)
        _mm512_mask_storeu_ps(yrow + ox + 16 * j, j == nv - 1 ? (__mmask16)(0xffffu >> (16 - n)) : (__mmask16)0xffff, acc[j]);
}

#define MP_W 16   /* lanes of mp_vectors' vectors */

/* Windows 3 wide at column stride 2 (SqueezeNet's 3x3/2 pools, ResNet's and
 * ShuffleNet's after their stems), a whole plane: the rows above spent more
 * on their set-up than on the maxima where planes are small (256 planes of
 * 27x27 -> 13x13: 51 us, ONNX Runtime 15). Each vector of 16 output
 * columns gets its load masks once per plane; columns outside the row load
 * as -inf, which the fold passes over as over an absent tap (max(acc, -inf)
 * is acc, or the same -inf); the left pad (pl < 16) by an expanding load,
 * so nothing before the row is addressed. maxps(x, y) is y unless x is
 * greater, so a fold in the window's order (rows, then taps) returns the
 * last of its largest elements however it is bracketed: each input row's
 * taps 0, 1, 2 (the even, odd and next even of 33 elements) fold once, for
 * every output row that reads the row, and the rows' folds then fold in
 * order: the generic path's bits where no element is a NaN or an infinity.
 * A plane with one returns 0, and the generic path does it again with
 * rs_max's rule. Up to MP3_NV vectors a row, windows up to 8 rows tall.
 * 27x27 -> 13x13 (256 planes) 51 -> 27 us, 55x55 -> 27x27 (128) 71 -> 49,
 * 112x112 -> 56x56 (64, pad 1) 150 -> 130 (in L2, one thread). */
enum { MP3_NV = 64 };

typedef struct {
    const float *x;
    float *y;
    int64_t h, w, oh, ow, kh, sh, pt, pl;
    __mmask16 ma[MP3_NV], mb[MP3_NV], mo[MP3_NV];
    int mc[MP3_NV];
} Mp3;

/* Input row iy's three-tap folds for vectors j0 .. j0+NJ-1 into hr; the
 * NaN/infinity watch into odd. */
static inline __attribute__((always_inline)) void mp3_row(const Mp3 *m, int NJ, int64_t j0, int64_t iy, __m512 *hr,
                                                          __m512i *odd) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i oddi = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    const float *row = m->x + iy * m->w;
    for (int jj = 0; jj < NJ; jj++) {
        int64_t j = j0 + jj, base = 32 * j - m->pl;
        __mmask16 ma = m->ma[j], mb = m->mb[j];
        int whole = ma == 0xffff && mb == 0xffff && m->mc[j];
        __m512 a, b, c;
        if (whole) {
            a = _mm512_loadu_ps(row + base);
            b = _mm512_loadu_ps(row + base + 16);
            c = _mm512_zextps128_ps512(_mm_load_ss(row + base + 32));
        } else {
            /* the left pad: the row's first elements into lanes pl .. */
            a = base < 0 ? _mm512_maskz_expandloadu_ps(ma, row) : _mm512_maskz_loadu_ps(ma, row + base);
            b = _mm512_maskz_loadu_ps(mb, row + base + 16);
            c = m->mc[j] ? _mm512_zextps128_ps512(_mm_load_ss(row + base + 32)) : _mm512_setzero_ps();
        }
        /* x - x: NaN for a NaN or an infinity, else 0 */
        __m512i d = _mm512_or_si512(_mm512_castps_si512(_mm512_sub_ps(a, a)), _mm512_castps_si512(_mm512_sub_ps(b, b)));
        *odd = _mm512_or_si512(*odd, _mm512_or_si512(d, _mm512_castps_si512(_mm512_sub_ps(c, c))));
        if (!whole) {
            a = _mm512_mask_mov_ps(ninf, ma, a);
            b = _mm512_mask_mov_ps(ninf, mb, b);
            c = _mm512_mask_mov_ps(ninf, (__mmask16)m->mc[j], c);
        }
        /* max(x, y) is y unless x is greater: a fold in order may be
         * bracketed any way (the last of the largest wins) */
        __m512 ev = _mm512_permutex2var_ps(a, even, b);
        __m512 t = _mm512_max_ps(ev, _mm512_permutex2var_ps(a, oddi, b));
        hr[jj] = _mm512_max_ps(t, _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(c),
                                                                            _mm512_castps_si512(ev), 1)));
    }
}

/* Output columns of vectors j0 .. j0+NJ-1, every output row: each input
 * row's folds made once for the output rows that read it (3-tall windows at
 * row stride 2 share one row, kept in registers; other windows keep them in
 * hrow[iy % 8]). */
static inline __attribute__((always_inline)) void mp3_cols(const Mp3 *m, int NJ, int64_t j0, __m512i *odd) {
    if (m->kh == 3 && m->sh == 2) {
        /* 3 rows at stride 2 (every such pooling here): a window's last
         * row is the next one's first, and its folds stay in registers
         * (in hrow below, indexed by row, they went through the stack and
         * cost their loads a store-forwarding wait each: 105 us for
         * SqueezeNet's first pool, 64 x 111 x 111 -> 55 x 55) */
        __m512 last[4], hr[4], acc[4];
        int64_t have = -1;   /* the input row whose folds are in last */
        for (int64_t oy = 0; oy < m->oh; oy++) {
            int64_t y0 = oy * 2 - m->pt, y1 = y0 + 3;
            if (y0 < 0) y0 = 0;
            if (y1 > m->h) y1 = m->h;
            int64_t iy = y0;
            for (int jj = 0; jj < NJ; jj++) acc[jj] = _mm512_set1_ps(-INFINITY);
            if (iy < y1 && iy == have) {
                for (int jj = 0; jj < NJ; jj++) acc[jj] = last[jj];
                iy++;
            }
            for (; iy < y1; iy++) {
                mp3_row(m, NJ, j0, iy, hr, odd);
                for (int jj = 0; jj < NJ; jj++) acc[jj] = _mm512_max_ps(acc[jj], hr[jj]);
                if (iy == y1 - 1) {
                    for (int jj = 0; jj < NJ; jj++) last[jj] = hr[jj];
                    have = iy;
                }
            }
            for (int jj = 0; jj < NJ; jj++) _mm512_mask_storeu_ps(m->y + oy * m->ow + 16 * (j0 + jj), m->mo[j0 + jj], acc[jj]);
        }
        return;
    }
    __m512 hrow[8][4];
    int64_t key[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    for (int64_t oy = 0; oy < m->oh; oy++) {
        int64_t y0 = oy * m->sh - m->pt, y1 = y0 + m->kh;
        if (y0 < 0) y0 = 0;
        if (y1 > m->h) y1 = m->h;
        __m512 acc[4];
        for (int jj = 0; jj < NJ; jj++) acc[jj] = _mm512_set1_ps(-INFINITY);
        for (int64_t iy = y0; iy < y1; iy++) {
            if (key[iy % 8] != iy) mp3_row(m, NJ, j0, iy, hrow[iy % 8], odd);
            key[iy % 8] = iy;
            for (int jj = 0; jj < NJ; jj++) acc[jj] = _mm512_max_ps(acc[jj], hrow[iy % 8][jj]);
        }
        for (int jj = 0; jj < NJ; jj++) _mm512_mask_storeu_ps(m->y + oy * m->ow + 16 * (j0 + jj), m->mo[j0 + jj], acc[jj]);
    }
}

static int mp3_s2_plane(const rk_pool_nd_params *p, const float *xq, float *yq) {
    Mp3 m;
    m.x = xq, m.y = yq, m.h = p->in_dims[1], m.w = p->in_dims[2], m.oh = p->out_dims[1], m.ow = p->out_dims[2];
    m.kh = p->k[1], m.sh = p->s[1], m.pt = p->pb[1], m.pl = p->pb[2];
    int64_t nv = (m.ow + 15) / 16;
    if (nv > MP3_NV || m.pl >= 16 || m.kh > 8) return 0;
    for (int64_t j = 0; j < nv; j++) {
        /* element e of vector j is input column 32 j - pl + e; outputs
         * 16 j .. 16 j + n - 1 read elements 0 .. 2 n */
        int64_t base = 32 * j - m.pl, n = m.ow - 16 * j < 16 ? m.ow - 16 * j : 16, need = 2 * n + 1;
        int64_t lo = -base, hi = m.w - base;   /* elements inside the row */
        if (hi > need) hi = need;
        m.ma[j] = rk_v16_range(lo, hi);
        m.mb[j] = rk_v16_range(lo - 16, hi - 16);
        m.mc[j] = lo <= 32 && 32 < hi;
        m.mo[j] = rk_v16_range(0, n);
    }
    __m512i odd = _mm512_setzero_si512();
    for (int64_t j0 = 0; j0 < nv; j0 += 4) {
        switch (nv - j0 < 4 ? nv - j0 : 4) {
        case 1: mp3_cols(&m, 1, j0, &odd); break;
        case 2: mp3_cols(&m, 2, j0, &odd); break;
        case 3: mp3_cols(&m, 3, j0, &odd); break;
        default: mp3_cols(&m, 4, j0, &odd); break;
        }
    }
    return !_mm512_test_epi32_mask(odd, odd);
}
#elif defined(__AVX2__)
/* The same interior with AVX2, 8 columns a vector, up to four at once, in
 * the same order and with the same fold (maxps, then the compare-and-blend
 * rule again where a window holds a NaN or an infinity). A stride-2
 * vector of n lanes reads elements [0, 2n - 1) as [0, 8) and [8, 2n - 1),
 * masked: none past the window. */
/* src[j * sw] for lanes j < n (0 in the others) */
static inline __m256 mp_tap8(int64_t sw, const float *src, int64_t n) {
    if (sw == 1) return n >= 8 ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, rk_v8_lanes(n));
    int64_t span = 2 * n - 1;
    __m256 a = span >= 8 ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, rk_v8_lanes(span));
    __m256 b = _mm256_maskload_ps(src + 8, rk_v8_lanes(span - 8));
    /* per 128-bit half a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit pairs in order */
    __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* nv vectors from output column ox (n lanes in the last one) */
static inline void mp_vectors(const MaxRow *r, int64_t ox, int nv, int64_t n, float *yrow) {
    __m256 acc[4];
    __m256i odd = _mm256_setzero_si256();
    for (int j = 0; j < nv; j++) acc[j] = _mm256_set1_ps(-INFINITY);
#define MP_TAPS(STEP)                                                                        \
    for (int64_t iy = r->y0; iy < r->y1; iy++)                                               \
        for (int64_t t = 0; t < r->kw; t++)                                                  \
            for (int j = 0; j < nv; j++) {                                                   \
                const float *src = r->x + iy * r->w + (ox + 8 * j) * r->sw - r->pl + t;     \
                __m256 v = mp_tap8(r->sw, src, j == nv - 1 ? n : 8);                         \
                STEP;                                                                        \
            }
    MP_TAPS(acc[j] = _mm256_max_ps(acc[j], v);
            odd = _mm256_or_si256(odd, _mm256_castps_si256(_mm256_sub_ps(v, v))))
    if (!_mm256_testz_si256(odd, odd)) {
        for (int j = 0; j < nv; j++) acc[j] = _mm256_set1_ps(-INFINITY);
        MP_TAPS(acc[j] = _mm256_blendv_ps(v, acc[j], _mm256_or_ps(_mm256_cmp_ps(acc[j], v, _CMP_GT_OQ),
                                                                  _mm256_cmp_ps(acc[j], acc[j], _CMP_UNORD_Q))))
    }
#undef MP_TAPS
    for (int j = 0; j < nv; j++) {
        if (j < nv - 1 || n == 8) _mm256_storeu_ps(yrow + ox + 8 * j, acc[j]);
        else _mm256_maskstore_ps(yrow + ox + 8 * j, rk_v8_lanes(n), acc[j]);
    }
}

#define MP_W 8
#endif

#ifdef MP_W
/* The interior [lo, hi) of one output row, four vectors at a time. */
static void maxpool_row_simd(const MaxRow *r, int64_t lo, int64_t hi, float *yrow) {
    int64_t ox = lo;
    for (; ox + 4 * MP_W <= hi; ox += 4 * MP_W) mp_vectors(r, ox, 4, MP_W, yrow);
    int64_t left = hi - ox, nv = (left + MP_W - 1) / MP_W;
    if (nv == 4) mp_vectors(r, ox, 4, left - 3 * MP_W, yrow);
    else if (nv == 3) mp_vectors(r, ox, 3, left - 2 * MP_W, yrow);
    else if (nv == 2) mp_vectors(r, ox, 2, left - MP_W, yrow);
    else if (nv == 1) mp_vectors(r, ox, 1, left, yrow);
}
#endif

static void maxpool2d_plane(const rk_pool_nd_params *p, const float *xq, float *yq) {
#if defined(__AVX512F__)
    if (p->k[2] == 3 && p->s[2] == 2 && mp3_s2_plane(p, xq, yq)) return;
#endif
    int64_t h = p->in_dims[1], w = p->in_dims[2], oh = p->out_dims[1], ow = p->out_dims[2];
    int64_t kh = p->k[1], kw = p->k[2], sh = p->s[1], sw = p->s[2], pt = p->pb[1], pl = p->pb[2];
    /* interior columns: the whole window inside, ox*sw - pl >= 0 and ox*sw - pl + kw <= w */
    int64_t lo = (pl + sw - 1) / sw, hi = w - kw + pl >= 0 ? (w - kw + pl) / sw + 1 : 0;
    if (hi > ow) hi = ow;
    if (lo > hi) lo = hi;
    int vec = 0;
#ifdef MP_W
    vec = sw <= 2;
#endif
    for (int64_t oy = 0; oy < oh; oy++) {
        float *yrow = yq + oy * ow;
        int64_t y0 = oy * sh - pt, y1 = y0 + kh;
        if (y0 < 0) y0 = 0;
        if (y1 > h) y1 = h;
        for (int64_t ox = 0; ox < ow; ox++) yrow[ox] = -INFINITY;
#ifdef MP_W
        /* the interior whole (each element sees the same rows and taps in
         * the same order as below), then the edges */
        if (vec) {
            MaxRow r = {xq, w, y0, y1, kw, sw, pl};
            maxpool_row_simd(&r, lo, hi, yrow);
        }
#endif
        for (int64_t iy = y0; iy < y1; iy++) {
            const float *xrow = xq + iy * w;
            for (int64_t ox = 0; ox < lo; ox++) {
                int64_t x0 = ox * sw - pl, x1 = x0 + kw;
                if (x0 < 0) x0 = 0;
                if (x1 > w) x1 = w;
                for (int64_t ix = x0; ix < x1; ix++) yrow[ox] = rs_max(yrow[ox], xrow[ix]);
            }
            for (int64_t t = 0; t < kw && hi > lo && !vec; t++) {
                const float *src = xrow + lo * sw - pl + t;
                if (sw == 1)
                    max_fold(yrow + lo, src, hi - lo, 1);
                else if (sw == 2)
                    max_fold(yrow + lo, src, hi - lo, 2);
                else
                    max_fold(yrow + lo, src, hi - lo, sw);
            }
            for (int64_t ox = hi; ox < ow; ox++) {
                int64_t x0 = ox * sw - pl, x1 = x0 + kw;
                if (x0 < 0) x0 = 0;
                if (x1 > w) x1 = w;
                for (int64_t ix = x0; ix < x1; ix++) yrow[ox] = rs_max(yrow[ox], xrow[ix]);
            }
        }
    }
}

/* The 2-D paths' task: M->plane on each of its channels */
static void pool2d_task(void *arg, int tid) {
    const PoolF32 *M = arg;
    const rk_pool_nd_params *p = M->p;
    int64_t plane = p->in_dims[1] * p->in_dims[2], oplane = p->out_dims[1] * p->out_dims[2];
    for (int64_t cursor = 0, q = -1, q1 = 0; rk_next_item(M->q, (int)M->ntasks, tid, POOL_RUNS, p->nc, &cursor, &q, &q1);)
        M->plane(p, M->x + q * plane, M->y + q * oplane);
}

/* Below this many window taps a pooling runs on one thread. */
#define POOL_THREAD_MIN_TAPS (1 << 16)

/* An f32 pooling fast path: task over runs of contiguous channels, on the
 * context's threads when there are at least min_taps window taps. */
static int pool_f32_run(rk_ctx *ctx, const rk_pool_nd_params *p, const float *x, float *y, double taps,
                        double min_taps, void (*task)(void *, int),
                        void (*plane)(const rk_pool_nd_params *, const float *, float *)) {
    PoolF32 M;
    M.p = p;
    M.x = x;
    M.y = y;
    M.plane = plane;
    int64_t nt = ctx && ctx->pool && ctx->nthreads > 1 && taps >= min_taps ? ctx->nthreads : 1;
    rk_queue q;
    M.ntasks = rk_queue_init(&q, nt < p->nc ? nt : (p->nc > 0 ? p->nc : 1));
    M.q = &q;
    rk_pool_share(ctx ? ctx->pool : NULL, (int)M.ntasks, task, &M);
    return RLX_OK;
}

/* 2-D f32 pooling of one image's planes (the window's first axis 1, no
 * dilation): what the max and average fast paths take */
static int pool2d_f32_ok(const rk_pool_nd_params *p) {
    return p->dtype == RLX_F32 && !p->has_indices && p->in_dims[0] == 1 && p->out_dims[0] == 1 && p->k[0] == 1 &&
           p->d[1] == 1 && p->d[2] == 1 && p->nc >= 0 && p->s[1] > 0 && p->s[2] > 0 && p->pb[0] == 0 &&
           p->pb[1] >= 0 && p->pb[2] >= 0 && !bad_geometry(p->in_dims, p->out_dims, p->k, p->s, p->d);
}

static int pool2d_f32(rk_ctx *ctx, const rk_pool_nd_params *p, const float *x, float *y,
                      void (*plane)(const rk_pool_nd_params *, const float *, float *)) {
    double taps = (double)p->nc * (double)p->out_dims[1] * (double)p->out_dims[2] * (double)p->k[1] * (double)p->k[2];
    return pool_f32_run(ctx, p, x, y, taps, POOL_THREAD_MIN_TAPS, pool2d_task, plane);
}

/* Global average pooling of f32 planes (the window is the whole plane, no
 * pads): each plane's sum (plane_sum) divided by its size, contiguous
 * channel ranges per thread. The sum of x[0, n) in GAP_LANES running sums (element i goes to sum i
 * mod GAP_LANES), then those added pairwise, halves at a time: the loops
 * vectorize in any instruction set with the same operations (so the same
 * bits), the sums are independent chains, not one chain of n adds (a
 * 56x56 plane's 3136 dependent adds were most of an SE block's pool). */
enum { GAP_LANES = 64 };
#if defined(__AVX2__)
/* The same sums in vectors: the 64 lanes as 4 (AVX-512) or 8 (AVX2)
 * vectors, the tail by masked loads, then the halves. A lane past the tail
 * adds +0, which leaves its sum unchanged (a sum that begins at +0 is never
 * -0), so the bits are the plain loops'. Those left a small plane (7x7:
 * all tail) to scalar code: an SE block's pool of 960 such planes took
 * 26 us, 5x ONNX Runtime's. */
#if defined(__AVX512F__)
#define GAP_W 16
#define GAP_V __m512
#define GAP_ZERO() _mm512_setzero_ps()
#define GAP_ADD(a, b) _mm512_add_ps(a, b)
#define GAP_LOAD(p) _mm512_loadu_ps(p)
#define GAP_LOADN(p, t) _mm512_maskz_loadu_ps(rk_v16_lanes(t), p)
#else
#define GAP_W 8
#define GAP_V __m256
#define GAP_ZERO() _mm256_setzero_ps()
#define GAP_ADD(a, b) _mm256_add_ps(a, b)
#define GAP_LOAD(p) _mm256_loadu_ps(p)
#define GAP_LOADN(p, t) _mm256_maskload_ps(p, rk_v8_lanes(t))
#endif
static float plane_sum(const float *x, int64_t n) {
    enum { NV = GAP_LANES / GAP_W };
    GAP_V acc[NV];
    for (int v = 0; v < NV; v++) acc[v] = GAP_ZERO();
    int64_t i = 0;
    for (; i + GAP_LANES <= n; i += GAP_LANES)
        for (int v = 0; v < NV; v++) acc[v] = GAP_ADD(acc[v], GAP_LOAD(x + i + v * GAP_W));
    if (i < n)
        for (int v = 0; v < NV && i + v * GAP_W < n; v++)
            acc[v] = GAP_ADD(acc[v], GAP_LOADN(x + i + v * GAP_W, n - i - v * GAP_W));
    for (int half = NV / 2; half > 0; half /= 2)
        for (int v = 0; v < half; v++) acc[v] = GAP_ADD(acc[v], acc[v + half]);
#if defined(__AVX512F__)
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(acc[0]), _mm512_extractf32x8_ps(acc[0], 1));
#else
    __m256 h = acc[0];
#endif
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
    return _mm_cvtss_f32(q);
}
#undef GAP_W
#undef GAP_V
#undef GAP_ZERO
#undef GAP_ADD
#undef GAP_LOAD
#undef GAP_LOADN
#else
static float plane_sum(const float *x, int64_t n) {
    float acc[GAP_LANES];
    for (int l = 0; l < GAP_LANES; l++) acc[l] = 0.0f;
    int64_t i = 0;
    for (; i + GAP_LANES <= n; i += GAP_LANES)
        for (int l = 0; l < GAP_LANES; l++) acc[l] += x[i + l];
    for (int l = 0; i + l < n; l++) acc[l] += x[i + l];
    for (int half = GAP_LANES / 2; half > 0; half /= 2)
        for (int l = 0; l < half; l++) acc[l] += acc[l + half];
    return acc[0];
}
#endif

static void global_avg_task(void *arg, int tid) {
    const PoolF32 *M = arg;
    int64_t plane = vol3(M->p->in_dims);
    for (int64_t cursor = 0, q = -1, q1 = 0; rk_next_item(M->q, (int)M->ntasks, tid, POOL_RUNS, M->p->nc, &cursor, &q, &q1);)
        M->y[q] = plane_sum(M->x + q * plane, plane) / (float)plane;
}

static int is_global_avg_f32(const rk_pool_nd_params *p) {
    if (p->op != 1 || p->dtype != RLX_F32 || p->nc < 0 || p->has_indices) return 0;
    for (int a = 0; a < 3; a++)
        if (p->out_dims[a] != 1 || p->k[a] != p->in_dims[a] || p->pb[a] != 0 || p->pe[a] != 0 || p->d[a] != 1 ||
            p->in_dims[a] < 1)
            return 0;
    return 1;
}

/* The divisor of an average window: its taps inside the input, or with
 * count_include_pad those inside the padded extent [-pb, size + pe). */
static int64_t average_count(const rk_pool_nd_params *p, const Window *w) {
    if (!p->count_include_pad) return window_taps(w);
    int64_t count = 1;
    for (int a = 0; a < 3; a++) {
        int64_t lo, hi;
        tap_range(w->start[a] + p->pb[a], p->k[a], p->d[a], p->in_dims[a] + p->pb[a] + p->pe[a], &lo, &hi);
        count *= hi - lo;
    }
    return count;
}

/* 2-D f32 average pooling (DenseNet's transitions: 2x2 at stride 2): the
 * columns whose window lies inside the row in vectors of 16 outputs with
 * AVX-512 (a plain loop per output in other builds), each tap a whole
 * vector of inputs (at column stride 2 the even lanes of two), the sums in
 * the generic path's order (the window's
 * rows, then its columns, from +0) and divided in float: the generic path's
 * bits (test_pool); the other columns by the generic path's own sum. It
 * walked each window with an index computation per tap: DenseNet-121's
 * three transition pools took 1.7 ms a run against ONNX Runtime's 0.12. */
/* y[j] = sum over the kernel rows [tlo, thi) of rows (iy0 + ty) and
 * columns tx of x[row][(c0 + j) sw + tx - pl], j in [0, n), / count */
static void avg_cols(const rk_pool_nd_params *p, const float *x, int64_t iy0, int64_t tlo, int64_t thi, int64_t c0,
                     int64_t n, float count, float *y) {
    const int64_t w = p->in_dims[2], kw = p->k[2], sw = p->s[2], pl = p->pb[2];
    int64_t j = 0;
#if defined(__AVX512F__)
    for (; j < n; j += 16) {
        int64_t m = n - j < 16 ? n - j : 16;
        __mmask16 k1 = rk_v16_lanes(m);
        __m512 acc = _mm512_setzero_ps();
        for (int64_t ty = tlo; ty < thi; ty++) {
            const float *row = x + (iy0 + ty) * w + (c0 + j) * sw - pl;
            for (int64_t tx = 0; tx < kw; tx++) {
                __m512 v;
                if (sw == 1) {
                    v = _mm512_maskz_loadu_ps(k1, row + tx);
                } else if (sw == 2) {
                    v = rk_v16_load_even(row + tx, m);
                } else {
                    float t[16] = {0};
                    for (int64_t i = 0; i < m; i++) t[i] = row[tx + i * sw];
                    v = _mm512_loadu_ps(t);
                }
                acc = _mm512_add_ps(acc, v);
            }
        }
        _mm512_mask_storeu_ps(y + j, k1, _mm512_div_ps(acc, _mm512_set1_ps(count)));
    }
#else
    for (; j < n; j++) {
        float sum = 0;
        for (int64_t ty = tlo; ty < thi; ty++) {
            const float *row = x + (iy0 + ty) * w + (c0 + j) * sw - pl;
            for (int64_t tx = 0; tx < kw; tx++) sum += row[tx];
        }
        y[j] = sum / count;
    }
#endif
}

static void avgpool2d_plane(const rk_pool_nd_params *p, const float *x, float *y) {
    const int64_t h = p->in_dims[1], w = p->in_dims[2], oh = p->out_dims[1], ow = p->out_dims[2];
    const int64_t kh = p->k[1], kw = p->k[2], sh = p->s[1], sw = p->s[2], pt = p->pb[1], pl = p->pb[2];
    /* interior columns: the whole window inside the row */
    int64_t lo = (pl + sw - 1) / sw, hi = w - kw + pl >= 0 ? (w - kw + pl) / sw + 1 : 0;
    if (hi > ow) hi = ow;
    if (lo > hi) lo = hi;
    Window wd;
    wd.start[0] = 0, wd.lo[0] = 0, wd.hi[0] = 1;
    for (int64_t oy = 0; oy < oh; oy++) {
        wd.start[1] = oy * sh - pt;
        tap_range(wd.start[1], kh, 1, h, &wd.lo[1], &wd.hi[1]);
        float *yr = y + oy * ow;
        for (int64_t ox = 0; ox < ow; ox++) {
            if (ox == lo && hi > lo) {
                wd.start[2] = lo * sw - pl, wd.lo[2] = 0, wd.hi[2] = kw;
                int64_t count = average_count(p, &wd);
                if (count > 0) {
                    avg_cols(p, x, wd.start[1], wd.lo[1], wd.hi[1], lo, hi - lo, (float)count, yr + lo);
                    ox = hi - 1;
                    continue;
                }
            }
            wd.start[2] = ox * sw - pl;
            tap_range(wd.start[2], kw, 1, w, &wd.lo[2], &wd.hi[2]);
            int64_t count = average_count(p, &wd);
            yr[ox] = count <= 0 ? 0.0f : (float)window_sum_f32(p, &wd, x) / (float)count;
        }
    }
}

/* The generic pooling of plane q (channel q of an image): max (with
 * ONNX's flattened indices), average or Lp over each output's window. */
static void pool_nd_plane(const rk_pool_nd_params *p, const uint8_t *x, uint8_t *y, int64_t *yi, int64_t q) {
    int dt = (int)p->dtype;
    size_t es = (size_t)rlx_dtype_size(dt);
    const int64_t *id = p->in_dims, *od = p->out_dims;
    int64_t plane = vol3(id), oplane = vol3(od);
    const uint8_t *xq = x + (size_t)(q * plane) * es;
    int64_t o = q * oplane;
    Window w;
    for (int64_t oz = 0; oz < od[0]; oz++) {
        w.start[0] = oz * p->s[0] - p->pb[0];
        tap_range(w.start[0], p->k[0], p->d[0], id[0], &w.lo[0], &w.hi[0]);
        for (int64_t oy = 0; oy < od[1]; oy++) {
            w.start[1] = oy * p->s[1] - p->pb[1];
            tap_range(w.start[1], p->k[1], p->d[1], id[1], &w.lo[1], &w.hi[1]);
            for (int64_t ox = 0; ox < od[2]; ox++, o++) {
                w.start[2] = ox * p->s[2] - p->pb[2];
                tap_range(w.start[2], p->k[2], p->d[2], id[2], &w.lo[2], &w.hi[2]);
                if (p->op == 0) {
                    int64_t at = window_max(p, &w, xq);
                    if (at < 0) {
                        store_lowest(y, o, dt);
                    } else {
                        const uint8_t *src = xq + (size_t)at * es;
                        uint8_t *dst = y + (size_t)o * es;
                        for (size_t b = 0; b < es; b++) dst[b] = src[b];
                    }
                    if (yi && at < 0) {
                        yi[o] = -1;
                    } else if (yi) {
                        /* ONNX: the index flattened over the whole input; storage_order 1
                         * numbers each plane column-major (x slowest, z fastest) */
                        int64_t ix = at % id[2], iy = at / id[2] % id[1], iz = at / id[2] / id[1];
                        yi[o] = q * plane + (p->storage_order ? (ix * id[1] + iy) * id[0] + iz : at);
                    }
                    continue;
                }
                double sum = window_sum(p, &w, xq), v;
                if (p->op == 2) {
                    v = p->p == 1 ? sum : p->p == 2 ? sqrt(sum) : pow(sum, 1.0 / p->p);
                } else {
                    int64_t count = average_count(p, &w);
                    /* f64 divides in double, the others in float */
                    v = count <= 0 ? 0.0 : dt == RLX_F64 ? sum / (double)count : (double)((float)sum / (float)count);
                }
                store_float(y, o, dt, v);
            }
        }
    }
}

/* Planes in runs over threads (rk_take): each output is computed the same
 * way whoever takes its plane. */
typedef struct {
    const rk_pool_nd_params *p;
    const uint8_t *x;
    uint8_t *y;
    int64_t *yi;
    int64_t ntasks;
    rk_queue *q;
} PoolNd;

static void pool_nd_task(void *arg, int tid) {
    const PoolNd *M = arg;
    for (int64_t cursor = 0, q = -1, q1 = 0; rk_next_item(M->q, (int)M->ntasks, tid, POOL_RUNS, M->p->nc, &cursor, &q, &q1);)
        pool_nd_plane(M->p, M->x, M->y, M->yi, q);
}

int rk_pool_nd(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_pool_nd_params *p = params;
    if (is_global_avg_f32(p))   /* one add per tap: worth a second thread from 16 K taps on */
        return pool_f32_run(ctx, p, in[0], out[0], (double)p->nc * (double)vol3(p->in_dims),
                            POOL_THREAD_MIN_TAPS / 4, global_avg_task, NULL);
    if (p->op == 0 && pool2d_f32_ok(p)) return pool2d_f32(ctx, p, in[0], out[0], maxpool2d_plane);
    /* average: the divisor counts taps in the end pads too */
    if (p->op == 1 && pool2d_f32_ok(p) && p->pe[1] >= 0 && p->pe[2] >= 0)
        return pool2d_f32(ctx, p, in[0], out[0], avgpool2d_plane);
    int dt = (int)p->dtype;
    int is_float = dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16;
    if (p->nc < 0 || p->op < 0 || p->op > 2 || bad_geometry(p->in_dims, p->out_dims, p->k, p->s, p->d) ||
        !(is_float || (p->op == 0 && (dt == RLX_U8 || dt == RLX_I8))) || (p->op == 2 && !(p->p > 0)))
        return RLX_E_ARG;
    for (int a = 0; a < 3; a++)
        if (p->pb[a] < 0 || p->pe[a] < 0) return RLX_E_ARG;
    PoolNd M = {p, in[0], out[0], p->op == 0 && p->has_indices ? out[1] : NULL, 1, NULL};
    double taps = (double)p->nc * (double)vol3(p->out_dims) * (double)vol3(p->k);
    int64_t nt = ctx && ctx->pool && ctx->nthreads > 1 && taps >= POOL_THREAD_MIN_TAPS ? ctx->nthreads : 1;
    if (nt > p->nc) nt = p->nc;
    if (nt > 1) {
        rk_queue q;
        M.ntasks = rk_queue_init(&q, nt);
        M.q = &q;
        rk_pool_share(ctx->pool, (int)M.ntasks, pool_nd_task, &M);
        return RLX_OK;
    }
    for (int64_t q = 0; q < p->nc; q++) pool_nd_plane(p, M.x, M.y, M.yi, q);
    return RLX_OK;
}

/* ---- convolution ---- */

int rk_conv_nd_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_nd_f32_params *p = params;
    (void)ctx;
    if (p->n < 0 || p->c < 0 || p->oc < 0 || p->group <= 0 || p->c % p->group || p->oc % p->group ||
        bad_geometry(p->in_dims, p->out_dims, p->k, p->s, p->d))
        return RLX_E_ARG;
    const float *x = in[0], *wt = in[1], *bias = p->has_bias ? in[2] : NULL;
    float *y = out[0];
    const int64_t *id = p->in_dims, *od = p->out_dims, *k = p->k, *s = p->s, *d = p->d, *pb = p->pb;
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    int64_t vol = vol3(id), ovol = vol3(od), kvol = vol3(k);
    for (int64_t b = 0; b < p->n; b++) {
        for (int64_t o = 0; o < p->oc; o++) {
            const float *xg = x + (b * p->c + (o / ocg) * cg) * vol;
            const float *wo = wt + o * cg * kvol;
            float *yo = y + (b * p->oc + o) * ovol;
            float b0 = bias ? bias[o] : 0.0f;
            for (int64_t oz = 0; oz < od[0]; oz++) {
                for (int64_t oy = 0; oy < od[1]; oy++) {
                    float *yrow = yo + (oz * od[1] + oy) * od[2];
                    for (int64_t ox = 0; ox < od[2]; ox++) yrow[ox] = b0;
                    for (int64_t ic = 0; ic < cg; ic++) {
                        const float *xc = xg + ic * vol, *wc = wo + ic * kvol;
                        for (int64_t kz = 0; kz < k[0]; kz++) {
                            int64_t iz = oz * s[0] - pb[0] + kz * d[0];
                            if (iz < 0 || iz >= id[0]) continue;
                            for (int64_t ky = 0; ky < k[1]; ky++) {
                                int64_t iy = oy * s[1] - pb[1] + ky * d[1];
                                if (iy < 0 || iy >= id[1]) continue;
                                const float *xrow = xc + (iz * id[1] + iy) * id[2];
                                const float *wrow = wc + (kz * k[1] + ky) * k[2];
                                for (int64_t kx = 0; kx < k[2]; kx++) {
                                    float wv = wrow[kx];
                                    int64_t off = kx * d[2] - pb[2], lo, hi;
                                    rk_out_range(od[2], s[2], off, id[2], &lo, &hi);
                                    if (s[2] == 1) {
                                        const float *xs = xrow + (lo + off);
                                        float *ys = yrow + lo;
                                        for (int64_t t = 0; t < hi - lo; t++) ys[t] += wv * xs[t];
                                    } else {
                                        for (int64_t ox = lo; ox < hi; ox++) yrow[ox] += wv * xrow[ox * s[2] + off];
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return RLX_OK;
}

/* Transposed convolution, two ways. Both start from the bias (positions
 * no input reaches keep it) and add every input element's weighted kernel
 * into the output at o = i*stride - pad + t*dilation.
 *
 * With scratch (rk_conv_transpose_scratch, which select_c.c reserves), per
 * batch and group a product first: col = W_g^T X_g, [ocg*kvol, positions]
 * by rk_sgemm (W is (C, OC/group, kernel...), so W_g is already
 * [cg][ocg*kvol]), over chunks of whole input rows whose col stays within
 * CT_COL_FLOATS; then each col row (an output channel and a tap) is added
 * into the output along input rows (col2im). Without scratch, as a scatter
 * of one multiply-add per input element, output channel and tap, which
 * a U-Net's 2x2 stride-2 up-sampling ran at about 3 GFLOP/s: 74% of that
 * model's time. The two differ in the last bits (the product sums the
 * input channels in the GEMM's order); one thread either way. */
enum { CT_COL_FLOATS = 1 << 18 };   /* 1 MB of col per chunk */

static int64_t ct_chunk_rows(int64_t m, const int64_t *id) {
    int64_t rows = id[0] * id[1], per_row = m * id[2], r = per_row > 0 ? CT_COL_FLOATS / per_row : rows;
    return r < 1 ? 1 : r > rows ? rows : r;
}

size_t rk_conv_transpose_scratch(int64_t c, int64_t oc, int64_t group, const int64_t *k, const int64_t *in_dims) {
    if (group <= 0 || c <= 0 || oc <= 0 || c % group || oc % group) return 0;
    int64_t m = oc / group * vol3(k), n = ct_chunk_rows(m, in_dims) * in_dims[2];
    if (m <= 0 || n <= 0) return 0;
    return (size_t)((m * n + 16) * (int64_t)sizeof(float)) + rk_sgemm_scratch_size(m, n, c / group) + 2 * 64;
}

/* y[o] (batch b, group g's channel o) += col's rows of o, chunk rows
 * [r0, r0 + nr) of the input */
static void ct_col2im(const rk_conv_transpose_f32_params *p, const float *col, int64_t ncols, int64_t r0, int64_t nr,
                      float *yg, int64_t ocg) {
    const int64_t *id = p->in_dims, *od = p->out_dims, *k = p->k, *s = p->s, *d = p->d, *pb = p->pb;
    int64_t ovol = vol3(od), kvol = vol3(k);
    for (int64_t o = 0; o < ocg; o++) {
        float *yo = yg + o * ovol;
        for (int64_t kz = 0; kz < k[0]; kz++)
            for (int64_t ky = 0; ky < k[1]; ky++)
                for (int64_t kx = 0; kx < k[2]; kx++) {
                    const float *crow = col + (o * kvol + (kz * k[1] + ky) * k[2] + kx) * ncols;
                    int64_t off = kx * d[2] - pb[2], lo, hi;
                    rk_out_range(id[2], s[2], off, od[2], &lo, &hi);
                    for (int64_t rr = 0; rr < nr; rr++) {
                        int64_t iz = (r0 + rr) / id[1], iy = (r0 + rr) % id[1];
                        int64_t oz = iz * s[0] - pb[0] + kz * d[0], oy = iy * s[1] - pb[1] + ky * d[1];
                        if (oz < 0 || oz >= od[0] || oy < 0 || oy >= od[1]) continue;
                        const float *c = crow + rr * id[2];
                        float *yrow = yo + (oz * od[1] + oy) * od[2];
                        if (s[2] == 1)
                            for (int64_t ix = lo; ix < hi; ix++) yrow[ix + off] += c[ix];
                        else
                            for (int64_t ix = lo; ix < hi; ix++) yrow[ix * s[2] + off] += c[ix];
                    }
                }
    }
}

int rk_conv_transpose_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_transpose_f32_params *p = params;
    if (p->n < 0 || p->c < 0 || p->oc < 0 || p->group <= 0 || p->c % p->group || p->oc % p->group ||
        bad_geometry(p->in_dims, p->out_dims, p->k, p->s, p->d))
        return RLX_E_ARG;
    const float *x = in[0], *wt = in[1], *bias = p->has_bias ? in[2] : NULL;
    float *y = out[0];
    const int64_t *id = p->in_dims, *od = p->out_dims, *k = p->k, *s = p->s, *d = p->d, *pb = p->pb;
    int64_t cg = p->c / p->group, ocg = p->oc / p->group;
    int64_t vol = vol3(id), ovol = vol3(od), kvol = vol3(k);
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t o = 0; o < p->oc; o++) {
            float *yo = y + (b * p->oc + o) * ovol, b0 = bias ? bias[o] : 0.0f;
            for (int64_t i = 0; i < ovol; i++) yo[i] = b0;
        }
    size_t need = rk_conv_transpose_scratch(p->c, p->oc, p->group, k, id);
    if (need && ctx && ctx->scratch && ctx->scratch_per_thread >= need) {
        int64_t m = ocg * kvol, crows = ct_chunk_rows(m, id), rows = id[0] * id[1];
        float *col = rk_align64f(ctx->scratch);
        void *gemm_scratch = rk_align64f(col + m * crows * id[2] + 16);
        for (int64_t b = 0; b < p->n; b++)
            for (int64_t g = 0; g < p->group; g++)
                for (int64_t r0 = 0; r0 < rows; r0 += crows) {
                    int64_t nr = rows - r0 < crows ? rows - r0 : crows, ncols = nr * id[2];
                    rk_sgemm(m, ncols, cg, 1.0f, wt + g * cg * m, m, 1, x + (b * p->c + g * cg) * vol + r0 * id[2],
                             vol, 0, 0.0f, col, ncols, gemm_scratch);
                    ct_col2im(p, col, ncols, r0, nr, y + (b * p->oc + g * ocg) * ovol, ocg);
                }
        return RLX_OK;
    }
    for (int64_t b = 0; b < p->n; b++) {
        for (int64_t o = 0; o < p->oc; o++) {
            int64_t g = o / ocg;
            float *yo = y + (b * p->oc + o) * ovol;
            for (int64_t ic = 0; ic < cg; ic++) {
                const float *xc = x + (b * p->c + g * cg + ic) * vol;
                /* weights are (C, OC/group, kernel...) */
                const float *wc = wt + ((g * cg + ic) * ocg + o % ocg) * kvol;
                for (int64_t kz = 0; kz < k[0]; kz++) {
                    for (int64_t ky = 0; ky < k[1]; ky++) {
                        for (int64_t kx = 0; kx < k[2]; kx++) {
                            float wv = wc[(kz * k[1] + ky) * k[2] + kx];
                            int64_t off = kx * d[2] - pb[2], lo, hi;
                            rk_out_range(id[2], s[2], off, od[2], &lo, &hi);
                            for (int64_t iz = 0; iz < id[0]; iz++) {
                                int64_t oz = iz * s[0] - pb[0] + kz * d[0];
                                if (oz < 0 || oz >= od[0]) continue;
                                for (int64_t iy = 0; iy < id[1]; iy++) {
                                    int64_t oy = iy * s[1] - pb[1] + ky * d[1];
                                    if (oy < 0 || oy >= od[1]) continue;
                                    const float *xrow = xc + (iz * id[1] + iy) * id[2];
                                    float *yrow = yo + (oz * od[1] + oy) * od[2];
                                    for (int64_t ix = lo; ix < hi; ix++) yrow[ix * s[2] + off] += wv * xrow[ix];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return RLX_OK;
}

/* ---- conv_pool_f32: a stem convolution and the max pooling after it ----
 * A first layer over a 3-channel image writes a large plane (SqueezeNet's
 * 64 x 111 x 111 floats, 3.2 MB; ResNet's 64 x 112 x 112) that a max
 * pooling reads once and shrinks 4x: the plane went out to L3 and came
 * back, and at two threads half of it from the other core. Here the
 * output is made in bands of pooled rows: the convolution rows a band reads
 * are computed by rk_conv2d_f32 (on one thread, on a copy of the input rows
 * they read, as a small image whose top pad is what is left of pt) into
 * scratch, then pooled from there by the pooling's own plane function.
 * Every element is computed as by the two kernels apart (a convolution's
 * sums depend on the taps only, a pooling's maximum on the window's
 * elements in order), so the bits are theirs at any thread count; the rows
 * two bands share are computed twice. Each thread takes a contiguous run of
 * bands, an even share where it can (bands a multiple of the threads). */

/* Convolution rows a band of `rows` pooled rows reads, and the input rows
 * those read. */
static int64_t cp_crows(int64_t rows, int64_t pkh, int64_t psh) { return (rows - 1) * psh + pkh; }
static int64_t cp_irows(int64_t crows, int64_t kh, int64_t sh) { return (crows - 1) * sh + kh; }

size_t rk_conv_pool_scratch(int64_t c, int64_t w, int64_t oc, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                            int64_t pkh, int64_t psh, int64_t rows) {
    int64_t crows = cp_crows(rows, pkh, psh), irows = cp_irows(crows, kh, sh);
    size_t band = (size_t)(oc * crows * ow) * sizeof(float), slice = (size_t)(c * irows * w) * sizeof(float);
    return band + slice + rk_conv2d_scratch(oc, c * kh * kw, crows * ow, 0) + 3 * 64;
}

typedef struct {
    const rk_conv_pool_f32_params *p;
    const float *x, *w, *b;
    float *y;
    rk_ctx *ctx;
    int64_t rows, nb;        /* pooled rows a band, bands an image */
    int64_t crows, irows;    /* the most convolution and input rows a band reads (its scratch) */
    rk_queue *q;
    int ntasks;
} ConvPool;

/* Band t (image t / nb, pooled rows from t % nb * rows) on thread tid */
static void conv_pool_band(const ConvPool *P, int tid, int64_t t) {
    const rk_conv_pool_f32_params *p = P->p;
    int64_t b = t / P->nb, p0 = t % P->nb * P->rows, p1 = p0 + P->rows < p->poh ? p0 + P->rows : p->poh;
    /* convolution rows [r0, r1) and the input rows [i0, i1) they read */
    int64_t r0 = p0 * p->psh - p->ppt, r1 = (p1 - 1) * p->psh - p->ppt + p->pkh;
    if (r0 < 0) r0 = 0;
    if (r1 > p->oh) r1 = p->oh;
    if (r1 < r0) r1 = r0;
    int64_t i0 = r0 * p->sh - p->pt, i1 = r1 > r0 ? (r1 - 1) * p->sh - p->pt + p->kh : i0;
    if (i0 < 0) i0 = 0;
    if (i1 > p->h) i1 = p->h;
    if (i1 < i0) i1 = i0;
    int64_t crows = r1 - r0, irows = i1 - i0;
    uint8_t *s = P->ctx->scratch + (size_t)tid * P->ctx->scratch_per_thread, *end = s + P->ctx->scratch_per_thread;
    float *band = rk_align64f(s);
    float *slice = rk_align64f(band + p->oc * P->crows * p->ow);
    uint8_t *rest = (uint8_t *)rk_align64f(slice + p->c * P->irows * p->w);
    if (crows > 0) {
        for (int64_t ic = 0; ic < p->c; ic++)
            memcpy(slice + ic * irows * p->w, P->x + ((b * p->c + ic) * p->h + i0) * p->w,
                   sizeof(float) * (size_t)(irows * p->w));
        rk_conv2d_f32_params cq;
        memset(&cq, 0, sizeof cq);
        cq.n = 1, cq.c = p->c, cq.h = irows, cq.w = p->w, cq.oc = p->oc, cq.oh = crows, cq.ow = p->ow;
        cq.kh = p->kh, cq.kw = p->kw, cq.sh = p->sh, cq.sw = p->sw, cq.pt = p->pt - r0 * p->sh + i0, cq.pl = p->pl;
        cq.dh = 1, cq.dw = 1, cq.group = 1, cq.has_bias = p->has_bias, cq.act = p->act, cq.act_a = p->act_a;
        cq.act_b = p->act_b, cq.method = 2, cq.nblk = crows * p->ow;
        rk_ctx one = {1, NULL, rest, (size_t)(end - rest)};
        const void *cin[3] = {slice, P->w, P->b};
        void *cout[1] = {band};
        (void)rk_conv2d_f32(&one, &cq, cin, cout);   /* valid by construction, scratch as planned */
    }
    /* the band as a small image: its top pad what is left of ppt */
    rk_pool_nd_params pq;
    memset(&pq, 0, sizeof pq);
    pq.dtype = RLX_F32, pq.op = 0, pq.nc = 1;
    pq.in_dims[0] = 1, pq.in_dims[1] = crows, pq.in_dims[2] = p->ow;
    pq.out_dims[0] = 1, pq.out_dims[1] = p1 - p0, pq.out_dims[2] = p->pow;
    pq.k[0] = 1, pq.k[1] = p->pkh, pq.k[2] = p->pkw;
    pq.s[0] = 1, pq.s[1] = p->psh, pq.s[2] = p->psw;
    pq.d[0] = pq.d[1] = pq.d[2] = 1;
    pq.pb[1] = p->ppt - p0 * p->psh + r0, pq.pb[2] = p->ppl;
    for (int64_t o = 0; o < p->oc; o++)
        maxpool2d_plane(&pq, band + o * crows * p->ow, P->y + ((b * p->oc + o) * p->poh + p0) * p->pow);
}

static void conv_pool_task(void *arg, int tid) {
    const ConvPool *P = arg;
    for (int64_t cursor = 0, t = -1, t1 = 0;
         rk_next_item(P->q, P->ntasks, tid, RK_RUNS, P->p->n * P->nb, &cursor, &t, &t1);)
        conv_pool_band(P, tid, t);
}

int rk_conv_pool_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_pool_f32_params *p = params;
    if (p->n < 0 || p->c < 1 || p->h < 1 || p->w < 1 || p->oc < 1 || p->oh < 1 || p->ow < 1 || p->kh < 1 ||
        p->kw < 1 || p->sh < 1 || p->sw < 1 || p->pt < 0 || p->pl < 0 || p->poh < 0 || p->pow < 0 || p->pkh < 1 ||
        p->pkw < 1 || p->psh < 1 || p->psw < 1 || p->ppt < 0 || p->ppl < 0 || p->rows < 1 || !ctx || !ctx->scratch ||
        ctx->scratch_per_thread < rk_conv_pool_scratch(p->c, p->w, p->oc, p->ow, p->kh, p->kw, p->sh, p->pkh, p->psh,
                                                       p->rows))
        return RLX_E_ARG;   /* the plan reserves the scratch; a mismatch is a bug, not a crash */
    ConvPool P;
    P.p = p;
    P.x = in[0], P.w = in[1], P.b = p->has_bias ? in[2] : NULL;
    P.y = out[0];
    P.ctx = ctx;
    /* the fewest bands of at most p->rows rows, a multiple of the threads */
    int64_t nt = ctx->pool && ctx->nthreads > 1 ? ctx->nthreads : 1;
    int64_t per = (p->poh + nt * p->rows - 1) / (nt * p->rows);
    if (per < 1) per = 1;
    P.rows = (p->poh + nt * per - 1) / (nt * per);
    if (P.rows < 1) P.rows = 1;
    P.nb = (p->poh + P.rows - 1) / P.rows;
    P.crows = cp_crows(P.rows, p->pkh, p->psh);
    P.irows = cp_irows(P.crows, p->kh, p->sh);
    int64_t total = p->n * P.nb;
    rk_queue q;
    P.q = &q;
    P.ntasks = (int)rk_queue_init(&q, nt < total ? nt : (total > 0 ? total : 1));
    rk_pool_share(ctx->pool, P.ntasks, conv_pool_task, &P);
    return RLX_OK;
}
