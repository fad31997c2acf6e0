/* rk_wino.c - 3x3 stride-1 convolution by Winograd's minimal filtering,
 * F(m x m, 3 x 3) with m = 2 or 4 (conv_wino_f32).
 *
 * A tile of m x m outputs needs an a x a patch (a = m + 2) of each input
 * channel. With V = B^T d B (the patch d transformed) and U = G g G^T (the
 * 3x3 kernel g transformed, by rlxc at compile time, rk_wino_pack_weights),
 * the tile is Y = A^T (sum over input channels of U .* V) A. For each of the
 * a*a positions the sum over input channels is one GEMM,
 *     M_pos (output channels x tiles) = U_pos (oc x c) * V_pos (c x tiles),
 * which rk_gemm runs at full speed: the multiplies per output and input
 * channel fall from 9 to a*a / (m*m) (2.25 for m = 4, 4 for m = 2).
 *
 * Work goes in tasks: a block of tb tiles (raster order over one image)
 * times a chunk of ocb output channels. A task transforms its block's
 * patches into V, written straight into the GEMM's packed-B layout (no
 * packing pass), runs the a*a GEMMs into M with U pre-packed, and transforms
 * M back into outputs, with the fused epilogue (bias, residual, activation)
 * applied as each output is stored. Blocks and chunks are fixed at compile
 * time and threads take whole tasks (thread t tasks t, t + n, ..., and
 * those of a slowed thread: rk_take), so every output is computed the same
 * way whatever the thread count. A thread that takes several chunks of one
 * block in a row transforms the block once.
 *
 * With AVX-512 or AVX2 the transforms take 16 or 8 tiles at once, one per
 * lane, from any tile rows (input_transform_vec, output_transform_vec);
 * otherwise, and for blocks too wide to stage, a run of tiles of one tile
 * row at once, in loops a compiler vectorizes.
 *
 * Numerics: the transforms add and subtract inputs scaled by up to 8
 * (m = 4), so the rounding error is a few times the direct method's; and an
 * inf in a patch makes NaN across its tile where the direct sum might give
 * inf. rlxc --no-winograd (or -O0) keeps im2col + GEMM.
 */
#include <string.h>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rlx_scalar.h"
#include "rk_vmath.h"

/* Tiles of one tile row transformed together (bounds the stack buffers). */
enum { CH = 64 };

#if defined(__GNUC__)
#define RK_WINO_INLINE static inline __attribute__((always_inline))
#else
#define RK_WINO_INLINE static inline
#endif

typedef struct {
    const rk_conv_wino_f32_params *p;
    const float *x, *u, *bias, *res;
    float *y;
    rk_ctx *ctx;
    int a, a2;
    int64_t tiles_w, tiles, nblocks, nchunks, ntasks;
    rk_queue *q;     /* thread t owns an even share of the tasks in contiguous runs (rk_next_item):
                      * its tiles are one part of the plane, a run of chunks shares its input transform */
} Wino;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t round16(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* ---- the 1-D transforms ----
 * Each maps a lines (element e of line i at s[i*si + e*sl]) of cnt lanes to
 * the transformed lines (d[o*di + e*dl]). They are inlined with constant
 * strides, so each specialisation is a plain vector loop. */

/* B^T for m = 4 (interpolation points 0, 1, -1, 2, -2, inf) */
RK_WINO_INLINE void in_line4(const float *s, int64_t si, int64_t sl, float *d, int64_t di, int64_t dl,
                             int64_t cnt) {
    for (int64_t e = 0; e < cnt; e++) {
        const float *q = s + e * sl;
        float x0 = q[0], x1 = q[si], x2 = q[2 * si], x3 = q[3 * si], x4 = q[4 * si], x5 = q[5 * si];
        float *o = d + e * dl;
        o[0] = 4.0f * x0 - 5.0f * x2 + x4;
        o[di] = (x3 + x4) - 4.0f * (x1 + x2);
        o[2 * di] = 4.0f * (x1 - x2) + (x4 - x3);
        o[3 * di] = 2.0f * (x3 - x1) + (x4 - x2);
        o[4 * di] = 2.0f * (x1 - x3) + (x4 - x2);
        o[5 * di] = 4.0f * x1 - 5.0f * x3 + x5;
    }
}

/* A^T for m = 4: 6 lines in, 4 out */
RK_WINO_INLINE void out_line4(const float *s, int64_t si, int64_t sl, float *d, int64_t di, int64_t dl,
                              int64_t cnt) {
    for (int64_t e = 0; e < cnt; e++) {
        const float *q = s + e * sl;
        float m0 = q[0], m1 = q[si], m2 = q[2 * si], m3 = q[3 * si], m4 = q[4 * si], m5 = q[5 * si];
        float p12 = m1 + m2, d12 = m1 - m2, p34 = m3 + m4, d34 = m3 - m4;
        float *o = d + e * dl;
        o[0] = m0 + p12 + p34;
        o[di] = d12 + 2.0f * d34;
        o[2 * di] = p12 + 4.0f * p34;
        o[3 * di] = d12 + 8.0f * d34 + m5;
    }
}

/* B^T for m = 2 (points 0, 1, -1, inf) */
RK_WINO_INLINE void in_line2(const float *s, int64_t si, int64_t sl, float *d, int64_t di, int64_t dl,
                             int64_t cnt) {
    for (int64_t e = 0; e < cnt; e++) {
        const float *q = s + e * sl;
        float x0 = q[0], x1 = q[si], x2 = q[2 * si], x3 = q[3 * si];
        float *o = d + e * dl;
        o[0] = x0 - x2;
        o[di] = x1 + x2;
        o[2 * di] = x2 - x1;
        o[3 * di] = x1 - x3;
    }
}

/* A^T for m = 2: 4 lines in, 2 out */
RK_WINO_INLINE void out_line2(const float *s, int64_t si, int64_t sl, float *d, int64_t di, int64_t dl,
                              int64_t cnt) {
    for (int64_t e = 0; e < cnt; e++) {
        const float *q = s + e * sl;
        float m0 = q[0], m1 = q[si], m2 = q[2 * si], m3 = q[3 * si];
        float *o = d + e * dl;
        o[0] = m0 + m1 + m2;
        o[di] = m1 - m2 - m3;
    }
}

/* ---- sizes and the compile-time weight transform ---- */

static int64_t chunk_rows(int64_t oc, int64_t ocb, int64_t q) { return min64(ocb, oc - q * ocb); }

size_t rk_wino_scratch(int64_t m, int64_t c, int64_t ocb, int64_t tb) {
    int64_t a2 = (m + 2) * (m + 2);
    return (size_t)(a2 * round16(tb) * c + a2 * ocb * tb) * sizeof(float) + rk_sgemm_scratch_size(ocb, tb, c) +
           3 * 64;
}

size_t rk_wino_weights_size(int64_t m, int64_t oc, int64_t c, int64_t ocb) {
    int64_t a2 = (m + 2) * (m + 2), nfull = oc / ocb, rest = oc % ocb;
    size_t per = rk_sgemm_packed_a_size(ocb, c) * (size_t)nfull + (rest ? rk_sgemm_packed_a_size(rest, c) : 0);
    return per * (size_t)a2;
}

/* G (a x 3), in double so the transformed weights round once */
static void g_line(int64_t m, const double g[3], double *u) {
    if (m == 4) {
        u[0] = g[0] / 4;
        u[1] = -(g[0] + g[1] + g[2]) / 6;
        u[2] = -(g[0] - g[1] + g[2]) / 6;
        u[3] = g[0] / 24 + g[1] / 12 + g[2] / 6;
        u[4] = g[0] / 24 - g[1] / 12 + g[2] / 6;
        u[5] = g[2];
    } else {
        u[0] = g[0];
        u[1] = (g[0] + g[1] + g[2]) / 2;
        u[2] = (g[0] - g[1] + g[2]) / 2;
        u[3] = g[2];
    }
}

/* w (oc, c, 3, 3) -> tmp (a*a, oc, c) = G g G^T -> u: for each chunk of ocb
 * output channels, for each position, rk_sgemm_pack_a of (rows, c). tmp holds
 * a*a*oc*c floats. */
void rk_wino_pack_weights(int64_t m, int64_t oc, int64_t c, int64_t ocb, const float *w, float *tmp, float *u) {
    int a = (int)m + 2, a2 = a * a;
    for (int64_t o = 0; o < oc; o++)
        for (int64_t ic = 0; ic < c; ic++) {
            const float *g = w + (o * c + ic) * 9;
            double rows[3][6], cols[6][6];
            for (int r = 0; r < 3; r++) {
                double gr[3] = {g[r * 3], g[r * 3 + 1], g[r * 3 + 2]};
                g_line(m, gr, rows[r]);   /* rows[r][s] = (g G^T)[r][s] */
            }
            for (int s = 0; s < a; s++) {
                double gc[3] = {rows[0][s], rows[1][s], rows[2][s]};
                g_line(m, gc, cols[s]);   /* cols[s][k] = (G g G^T)[k][s] */
            }
            for (int k = 0; k < a; k++)
                for (int s = 0; s < a; s++) tmp[((int64_t)(k * a + s) * oc + o) * c + ic] = (float)cols[s][k];
        }
    size_t full = rk_sgemm_packed_a_size(ocb, c) / sizeof(float);
    for (int64_t q = 0; q * ocb < oc; q++) {
        int64_t rows = chunk_rows(oc, ocb, q);
        size_t per = rk_sgemm_packed_a_size(rows, c) / sizeof(float);
        for (int pos = 0; pos < a2; pos++)
            rk_sgemm_pack_a(rows, c, tmp + ((int64_t)pos * oc + q * ocb) * c, c, 0,
                            u + (size_t)q * full * (size_t)a2 + (size_t)pos * per);
    }
}

/* ---- the run ---- */

/* Patches of tiles t0 .. t0+n of image x into V: a*a packed-B matrices
 * (c x n), one per position, each round16(n)*c floats. A run of tiles in
 * one tile row at a time: its a input rows are copied, zero-padded, into P;
 * the row pass transforms along x for every tile of the run at once
 * (T[r][s][tile]), the column pass along y (R[k][s][tile] = V at position
 * k*a + s), and each position's run is copied into its packed panels. */
RK_WINO_INLINE void input_transform_m(const Wino *W, const float *x, int64_t t0, int64_t n, float *V, int m) {
    const rk_conv_wino_f32_params *p = W->p;
    enum { PW = CH * 4 + 4 };
    const int a = m + 2, a2 = a * a;
    int64_t h = p->h, wd = p->w, plane = h * wd, vsz = round16(n) * p->c;
    float P[6 * PW], T[36 * CH], R[36 * CH];
    for (int64_t ic = 0; ic < p->c; ic++) {
        const float *xc = x + ic * plane;
        int64_t row_off, panel_stride;
        rk_sgemm_packed_b_row(n, p->c, ic, &row_off, &panel_stride);
        for (int64_t j = 0; j < n;) {
            int64_t t = t0 + j, ty = t / W->tiles_w, tx0 = t % W->tiles_w;
            int64_t cnt = min64(min64(W->tiles_w - tx0, n - j), CH), width = cnt * m + 2;
            int64_t ix_lo = tx0 * m - p->pl;
            for (int r = 0; r < a; r++) {
                float *pr = P + r * PW;
                int64_t iy = ty * m - p->pt + r;
                if (iy < 0 || iy >= h) {
                    for (int64_t q = 0; q < width; q++) pr[q] = 0.0f;
                    continue;
                }
                const float *xr = xc + iy * wd;
                int64_t lo = ix_lo < 0 ? -ix_lo : 0, hi = wd - ix_lo < width ? wd - ix_lo : width;
                if (hi < lo) hi = lo;
                /* a loop, not memcpy: a call per short row costs as much as the copy */
                const float *src = xr + ix_lo;
                for (int64_t q = 0; q < lo; q++) pr[q] = 0.0f;
                for (int64_t q = lo; q < hi; q++) pr[q] = src[q];
                for (int64_t q = hi; q < width; q++) pr[q] = 0.0f;
            }
            /* T[r][s][e] = sum_i BT[s][i] P[r][e*m + i]; R[k][s][e] = sum_r BT[k][r] T[r][s][e] */
            if (m == 4) {
                for (int r = 0; r < a; r++) in_line4(P + r * PW, 1, 4, T + r * a * CH, CH, 1, cnt);
                for (int s = 0; s < a; s++) in_line4(T + s * CH, (int64_t)a * CH, 1, R + s * CH, (int64_t)a * CH, 1, cnt);
            } else {
                for (int r = 0; r < a; r++) in_line2(P + r * PW, 1, 2, T + r * a * CH, CH, 1, cnt);
                for (int s = 0; s < a; s++) in_line2(T + s * CH, (int64_t)a * CH, 1, R + s * CH, (int64_t)a * CH, 1, cnt);
            }
            /* tiles j .. j+cnt of the block: panel j/16, column j%16, split at panel ends */
            for (int64_t e = 0; e < cnt;) {
                int64_t col = j + e, run = min64(16 - col % 16, cnt - e);
                float *dst = V + row_off + (col / 16) * panel_stride + col % 16;
                if (run == 16) {
                    for (int pos = 0; pos < a2; pos++)
                        for (int q = 0; q < 16; q++) dst[pos * vsz + q] = R[pos * CH + e + q];
                } else {
                    for (int pos = 0; pos < a2; pos++)
                        for (int64_t q = 0; q < run; q++) dst[pos * vsz + q] = R[pos * CH + e + q];
                }
                e += run;
            }
            j += cnt;
        }
        if (n % 16) {   /* the last panel's padding columns */
            float *dst = V + row_off + (n / 16) * panel_stride + n % 16;
            for (int pos = 0; pos < a2; pos++) memset(dst + pos * vsz, 0, sizeof(float) * (size_t)(16 - n % 16));
        }
    }
}

#if defined(__AVX512F__) || defined(__AVX2__)
#define RK_WINO_VEC 1
/* ---- the transforms in vectors (AVX-512 or AVX2): lanes are tiles ----
 * The generic transforms above vectorize over a run of one tile row, so a
 * 14x14 plane (4 tiles a row for m = 4) fills a quarter of a vector, and the
 * row pass reads its inputs at a stride of m. Here the lanes are WN tiles of
 * one packed panel (16 with AVX-512, the whole panel; 8 with AVX2, half of
 * it), wherever their tile rows: each tile's patch rows are loaded as 8
 * floats and transposed in registers, so both passes are plain vector
 * arithmetic and each position's tiles are stored as one vector. The same
 * adds and multiplies as the generic code, in the same order, on every lane.
 * Only the loads, the transpose, the interleave back into rows and the
 * masked tails differ between the two instruction sets. */

/* Floats of one channel's zero-padded input rows that a block may stage. */
enum { QCAP = 8192 };

#if defined(__AVX512F__)
enum { WN = 16 };
typedef __m512 wv;
#define wv_set1 _mm512_set1_ps
#define wv_zero _mm512_setzero_ps
#define wv_add _mm512_add_ps
#define wv_sub _mm512_sub_ps
#define wv_mul _mm512_mul_ps
#define wv_loadu _mm512_loadu_ps
#define wv_storeu _mm512_storeu_ps
#define wv_unpacklo _mm512_unpacklo_ps
#define wv_unpackhi _mm512_unpackhi_ps
#define wv_shuffle _mm512_shuffle_ps
#else
enum { WN = 8 };
typedef __m256 wv;
#define wv_set1 _mm256_set1_ps
#define wv_zero _mm256_setzero_ps
#define wv_add _mm256_add_ps
#define wv_sub _mm256_sub_ps
#define wv_mul _mm256_mul_ps
#define wv_loadu _mm256_loadu_ps
#define wv_storeu _mm256_storeu_ps
#define wv_unpacklo _mm256_unpacklo_ps
#define wv_unpackhi _mm256_unpackhi_ps
#define wv_shuffle _mm256_shuffle_ps
#endif

/* Within each 128-bit lane, u[c] (c < 4) = element c of rows r[0..3] and
 * u[c + 4] the same of rows r[4..7]: the first two steps of an 8 x 8
 * transpose, the same for both instruction sets. */
RK_WINO_INLINE void w_lanes4x4(const wv *r, wv *u) {
    wv t0 = wv_unpacklo(r[0], r[1]), t1 = wv_unpackhi(r[0], r[1]);
    wv t2 = wv_unpacklo(r[2], r[3]), t3 = wv_unpackhi(r[2], r[3]);
    wv t4 = wv_unpacklo(r[4], r[5]), t5 = wv_unpackhi(r[4], r[5]);
    wv t6 = wv_unpacklo(r[6], r[7]), t7 = wv_unpackhi(r[6], r[7]);
    u[0] = wv_shuffle(t0, t2, 0x44), u[1] = wv_shuffle(t0, t2, 0xEE);
    u[2] = wv_shuffle(t1, t3, 0x44), u[3] = wv_shuffle(t1, t3, 0xEE);
    u[4] = wv_shuffle(t4, t6, 0x44), u[5] = wv_shuffle(t4, t6, 0xEE);
    u[6] = wv_shuffle(t5, t7, 0x44), u[7] = wv_shuffle(t5, t7, 0xEE);
}

#if defined(__AVX512F__)
static inline __mmask16 wv_mask(int64_t cnt) { return (__mmask16)(cnt >= 16 ? 0xffffu : (1u << cnt) - 1u); }
/* lanes from cnt on set to 0 */
static inline wv wv_keep(wv v, int64_t cnt) { return _mm512_maskz_mov_ps(wv_mask(cnt), v); }
/* masked loads cost far more than plain ones here: only for short tails */
static inline wv wv_load_n(const float *p, int64_t cnt) {
    return cnt >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(wv_mask(cnt), p);
}
static inline void wv_store_n(float *p, wv v, int64_t cnt) {
    if (cnt >= 16) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, wv_mask(cnt), v);
}
/* act_of: relu and clip here, the others rk_vmath.h's (rs_act's bits) */
RK_WINO_INLINE wv wv_act(wv v, int64_t act, wv lo, wv hi, float aa, float ab) {
    if (act == RS_ACT_RELU) return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, wv_zero(), _CMP_NLE_UQ), v);
    if (act == RS_ACT_CLIP) {   /* rs_clip: x < lo ? lo : (x > hi ? hi : x) */
        __mmask16 below = _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ);
        v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
        return _mm512_mask_mov_ps(v, below, lo);
    }
    if (act != RS_ACT_NONE) return rk_v16_act(v, (int)act, aa, ab);
    return v;
}
/* a zmm of two tiles' 8 floats (insertf64x4: AVX-512F, no DQ needed) */
#define W_LOAD2(lo, hi)                                                                             \
    _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm256_loadu_ps(lo))), \
                                        _mm256_castps_pd(_mm256_loadu_ps(hi)), 1))
/* x[c] (c < nc) = column c of the 8 floats at base[e] + off, lane e: two
 * tiles a zmm (tiles k | k+4 for k < 4, k+4 | k+8 after, so the lanes come
 * out in order), an 8 x 8 transpose within each 256-bit half */
RK_WINO_INLINE void w_columns(const float *const *base, int64_t off, wv *x, int nc) {
    __m512 r[8];
    for (int k = 0; k < 4; k++) {
        r[k] = W_LOAD2(base[k] + off, base[k + 4] + off);
        r[k + 4] = W_LOAD2(base[k + 8] + off, base[k + 12] + off);
    }
    __m512 u[8];
    w_lanes4x4(r, u);   /* u[c] (c < 4): 128-bit lane 0 is column c of rows 0-3's
                         * low halves, lane 1 column c + 4, lanes 2 and 3 the same
                         * of the high halves; u[c + 4] rows 4-7 */
    for (int c = 0; c < nc; c++)
        x[c] = c < 4 ? _mm512_shuffle_f32x4(u[c], u[c + 4], 0x88) : _mm512_shuffle_f32x4(u[c - 4], u[c], 0xDD);
}
/* z[e*m + jj] = y[jj] lane e: m vectors interleaved into m*16 floats */
RK_WINO_INLINE void w_interleave(const wv *y, int m, float *z) {
    const __m512i p0 = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i p1 = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
    __m512 ab0 = _mm512_permutex2var_ps(y[0], p0, y[1]), ab1 = _mm512_permutex2var_ps(y[0], p1, y[1]);
    if (m == 2) {
        _mm512_storeu_ps(z, ab0);
        _mm512_storeu_ps(z + 16, ab1);
        return;
    }
    const __m512i q0 = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), q1 = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    __m512d a0 = _mm512_castps_pd(ab0), a1 = _mm512_castps_pd(ab1);
    __m512d c0 = _mm512_castps_pd(_mm512_permutex2var_ps(y[2], p0, y[3]));
    __m512d c1 = _mm512_castps_pd(_mm512_permutex2var_ps(y[2], p1, y[3]));
    _mm512_storeu_ps(z, _mm512_castpd_ps(_mm512_permutex2var_pd(a0, q0, c0)));
    _mm512_storeu_ps(z + 16, _mm512_castpd_ps(_mm512_permutex2var_pd(a0, q1, c0)));
    _mm512_storeu_ps(z + 32, _mm512_castpd_ps(_mm512_permutex2var_pd(a1, q0, c1)));
    _mm512_storeu_ps(z + 48, _mm512_castpd_ps(_mm512_permutex2var_pd(a1, q1, c1)));
}
#else
static inline __m256i wv_mask(int64_t cnt) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cnt < 8 ? cnt : 8)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline wv wv_keep(wv v, int64_t cnt) { return _mm256_and_ps(v, _mm256_castsi256_ps(wv_mask(cnt))); }
static inline wv wv_load_n(const float *p, int64_t cnt) {
    return cnt >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, wv_mask(cnt));
}
static inline void wv_store_n(float *p, wv v, int64_t cnt) {
    if (cnt >= 8) _mm256_storeu_ps(p, v);
    else _mm256_maskstore_ps(p, wv_mask(cnt), v);
}
RK_WINO_INLINE wv wv_act(wv v, int64_t act, wv lo, wv hi, float aa, float ab) {   /* as above */
    if (act == RS_ACT_RELU) return _mm256_and_ps(_mm256_cmp_ps(v, wv_zero(), _CMP_NLE_UQ), v);
    if (act == RS_ACT_CLIP) {   /* rs_clip: x < lo ? lo : (x > hi ? hi : x) */
        __m256 below = _mm256_cmp_ps(v, lo, _CMP_LT_OQ);
        v = _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
        return _mm256_blendv_ps(v, lo, below);
    }
    if (act != RS_ACT_NONE) return rk_v8_act(v, (int)act, aa, ab);
    return v;
}
/* x[c] (c < nc) = column c of the 8 floats at base[e] + off, lane e: an
 * 8 x 8 transpose */
RK_WINO_INLINE void w_columns(const float *const *base, int64_t off, wv *x, int nc) {
    __m256 r[8];
    for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps(base[k] + off);
    __m256 u[8];
    w_lanes4x4(r, u);   /* u[c] (c < 4): column c of rows 0-3 in the low 128 bits,
                         * column c + 4 in the high; u[c + 4] the same of rows 4-7 */
    for (int c = 0; c < nc; c++)
        x[c] = c < 4 ? _mm256_permute2f128_ps(u[c], u[c + 4], 0x20) : _mm256_permute2f128_ps(u[c - 4], u[c], 0x31);
}
/* z[e*m + jj] = y[jj] lane e: m vectors interleaved into m*8 floats */
RK_WINO_INLINE void w_interleave(const wv *y, int m, float *z) {
    __m256 t0 = _mm256_unpacklo_ps(y[0], y[1]), t1 = _mm256_unpackhi_ps(y[0], y[1]);
    if (m == 2) {   /* t0: tiles 0, 1 | 4, 5; t1: tiles 2, 3 | 6, 7 */
        _mm256_storeu_ps(z, _mm256_permute2f128_ps(t0, t1, 0x20));
        _mm256_storeu_ps(z + 8, _mm256_permute2f128_ps(t0, t1, 0x31));
        return;
    }
    __m256 t2 = _mm256_unpacklo_ps(y[2], y[3]), t3 = _mm256_unpackhi_ps(y[2], y[3]);
    /* u0: tile 0 | tile 4, u1: 1 | 5, u2: 2 | 6, u3: 3 | 7 */
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    _mm256_storeu_ps(z, _mm256_permute2f128_ps(u0, u1, 0x20));
    _mm256_storeu_ps(z + 8, _mm256_permute2f128_ps(u2, u3, 0x20));
    _mm256_storeu_ps(z + 16, _mm256_permute2f128_ps(u0, u1, 0x31));
    _mm256_storeu_ps(z + 24, _mm256_permute2f128_ps(u2, u3, 0x31));
}
#endif

/* in_line4 and in_line2 on vectors: o[k] from x[0..a) */
RK_WINO_INLINE void w_in4(const wv *x, wv *o) {
    o[0] = wv_add(wv_sub(wv_mul(wv_set1(4.0f), x[0]), wv_mul(wv_set1(5.0f), x[2])), x[4]);
    o[1] = wv_sub(wv_add(x[3], x[4]), wv_mul(wv_set1(4.0f), wv_add(x[1], x[2])));
    o[2] = wv_add(wv_mul(wv_set1(4.0f), wv_sub(x[1], x[2])), wv_sub(x[4], x[3]));
    o[3] = wv_add(wv_mul(wv_set1(2.0f), wv_sub(x[3], x[1])), wv_sub(x[4], x[2]));
    o[4] = wv_add(wv_mul(wv_set1(2.0f), wv_sub(x[1], x[3])), wv_sub(x[4], x[2]));
    o[5] = wv_add(wv_sub(wv_mul(wv_set1(4.0f), x[1]), wv_mul(wv_set1(5.0f), x[3])), x[5]);
}
RK_WINO_INLINE void w_in2(const wv *x, wv *o) {
    o[0] = wv_sub(x[0], x[2]);
    o[1] = wv_add(x[1], x[2]);
    o[2] = wv_sub(x[2], x[1]);
    o[3] = wv_sub(x[1], x[3]);
}
/* out_line4 and out_line2 on vectors: o[i] from q[0..a) */
RK_WINO_INLINE void w_out4(const wv *q, wv *o) {
    wv p12 = wv_add(q[1], q[2]), d12 = wv_sub(q[1], q[2]);
    wv p34 = wv_add(q[3], q[4]), d34 = wv_sub(q[3], q[4]);
    o[0] = wv_add(wv_add(q[0], p12), p34);
    o[1] = wv_add(d12, wv_mul(wv_set1(2.0f), d34));
    o[2] = wv_add(p12, wv_mul(wv_set1(4.0f), p34));
    o[3] = wv_add(wv_add(d12, wv_mul(wv_set1(8.0f), d34)), q[5]);
}
RK_WINO_INLINE void w_out2(const wv *q, wv *o) {
    o[0] = wv_add(wv_add(q[0], q[1]), q[2]);
    o[1] = wv_sub(wv_sub(q[1], q[2]), q[3]);
}

/* The staging rows of tiles t0 .. t0+n: from the first tile's row to the
 * last's, a + (rows - 1) * m of them, each wq = (tiles_w - 1) * m + 8 floats
 * (the last tile's 8-float loads); 0 where they do not fit in QCAP. */
static int64_t stage_rows(const Wino *W, int64_t t0, int64_t n, int64_t *wq) {
    int64_t m = W->p->m, ty_a = t0 / W->tiles_w, ty_b = (t0 + n - 1) / W->tiles_w;
    int64_t nr = (ty_b - ty_a) * m + m + 2;
    *wq = (W->tiles_w - 1) * m + 8;
    return nr * *wq <= QCAP ? nr : 0;
}

RK_WINO_INLINE void input_transform_vec(const Wino *W, const float *x, int64_t t0, int64_t n, float *V, int m,
                                        int64_t nr, int64_t wq) {
    const rk_conv_wino_f32_params *p = W->p;
    const int a = m + 2;
    int64_t h = p->h, wd = p->w, plane = h * wd, vsz = round16(n) * p->c, tw = W->tiles_w;
    int64_t iy0 = t0 / tw * m - p->pt;
    int64_t lo = min64(p->pl, wq), hi = min64(wd + p->pl, wq);
    if (hi < lo) hi = lo;
    float Q[QCAP];
    float Tb[36 * WN];
    /* each lane's patch in Q, the same for every channel (n <= 2048, checked
     * by rk_conv_wino_f32); lanes past n read tile t0 and are stored as 0 */
    int32_t qoff[2048 + WN];
    for (int64_t j = 0; j < n + WN; j++) {
        int64_t t = t0 + (j < n ? j : 0), ty = t / tw, tx = t % tw;
        qoff[j] = (int32_t)((ty * m - p->pt - iy0) * wq + tx * m);
    }
    for (int64_t ic = 0; ic < p->c; ic++) {
        const float *xc = x + ic * plane;
        for (int64_t rr = 0; rr < nr; rr++) {   /* stage: Q[rr][q] = x[iy0 + rr][q - pl], 0 outside */
            float *d = Q + rr * wq;
            int64_t iy = iy0 + rr;
            if (iy < 0 || iy >= h) {
                for (int64_t q = 0; q < wq; q++) d[q] = 0.0f;
                continue;
            }
            const float *s = xc + iy * wd - p->pl;
            int64_t q = 0;
            for (; q < lo; q++) d[q] = 0.0f;
            for (; q + WN <= hi; q += WN) wv_storeu(d + q, wv_loadu(s + q));
            for (; q < hi; q++) d[q] = s[q];
            for (; q < wq; q++) d[q] = 0.0f;
        }
        int64_t row_off, panel_stride;
        rk_sgemm_packed_b_row(n, p->c, ic, &row_off, &panel_stride);
        for (int64_t j0 = 0; j0 < n; j0 += WN) {
            const float *base[WN];
            for (int e = 0; e < WN; e++) base[e] = Q + qoff[j0 + e];
            for (int r = 0; r < a; r++) {   /* row pass: Tb[r][s] = sum_i BT[s][i] row r's column i */
                wv xs[6], o[6];
                w_columns(base, r * wq, xs, a);
                if (m == 4) w_in4(xs, o);
                else w_in2(xs, o);
                for (int s = 0; s < a; s++) wv_storeu(Tb + (r * a + s) * WN, o[s]);
            }
            float *dst = V + row_off + (j0 / 16) * panel_stride + j0 % 16;
            for (int s = 0; s < a; s++) {   /* column pass: V[k*a + s] = sum_r BT[k][r] Tb[r][s] */
                wv xs[6], o[6];
                for (int r = 0; r < a; r++) xs[r] = wv_loadu(Tb + (r * a + s) * WN);
                if (m == 4) w_in4(xs, o);
                else w_in2(xs, o);
                for (int k = 0; k < a; k++) wv_storeu(dst + (k * a + s) * vsz, wv_keep(o[k], n - j0));
            }
        }
    }
}

RK_WINO_INLINE void output_transform_vec(const Wino *W, const float *M, int64_t o0, int64_t rows, int64_t t0,
                                         int64_t n, float *y, const float *res, int m) {
    const rk_conv_wino_f32_params *p = W->p;
    const int a = m + 2;
    int64_t oplane = p->oh * p->ow, msz = rows * n, tw = W->tiles_w, act = p->act;
    const float aa = (float)p->act_a, ab = (float)p->act_b;
    const wv lo = wv_set1(aa), hi = wv_set1(ab);
    float Z[4 * 4 * WN + WN];   /* a run's last vector may read past its row */
    memset(Z, 0, sizeof Z);
    for (int64_t j0 = 0; j0 < n; j0 += WN) {
        int64_t cnt = min64(WN, n - j0);
        /* the lanes' runs of one tile row each, the same for every channel:
         * first lane, output row and column of the run's first tile, floats */
        int64_t run_e[WN], run_oy[WN], run_ox[WN], run_len[WN], nrun = 0;
        for (int64_t e = 0; e < cnt; nrun++) {
            int64_t t = t0 + j0 + e, tx0 = t % tw, run = min64(tw - tx0, cnt - e);
            run_e[nrun] = e;
            run_oy[nrun] = t / tw * m;
            run_ox[nrun] = tx0 * m;
            run_len[nrun] = min64(run * m, p->ow - tx0 * m);
            e += run;
        }
        for (int64_t o = 0; o < rows; o++) {
            int64_t oc = o0 + o;
            wv bias = wv_set1(W->bias ? W->bias[oc] : 0.0f);
            const float *mo = M + o * n + j0;
            wv S[6][4], Y[4][4];
            for (int k = 0; k < a; k++) {   /* S[k][jj] = sum_s AT[jj][s] M[k*a + s] */
                wv q[6];
                for (int s = 0; s < a; s++) q[s] = wv_load_n(mo + (k * a + s) * msz, cnt);
                if (m == 4) w_out4(q, S[k]);
                else w_out2(q, S[k]);
            }
            for (int jj = 0; jj < m; jj++) {   /* Y[i][jj] = sum_k AT[i][k] S[k][jj] + bias */
                wv q[6], r[4];
                for (int k = 0; k < a; k++) q[k] = S[k][jj];
                if (m == 4) w_out4(q, r);
                else w_out2(q, r);
                for (int i = 0; i < m; i++) Y[i][jj] = wv_add(r[i], bias);
            }
            for (int i = 0; i < m; i++) w_interleave(Y[i], m, Z + i * 4 * WN);
            float *yo = y + oc * oplane;
            const float *ro = res ? res + oc * oplane : NULL;
            for (int64_t r = 0; r < nrun; r++) {
                int64_t valid = run_len[r];
                for (int i = 0; i < m && run_oy[r] + i < p->oh; i++) {
                    int64_t at = (run_oy[r] + i) * p->ow + run_ox[r];
                    const float *z = Z + i * 4 * WN + run_e[r] * m;
                    for (int64_t q = 0; q < valid; q += WN) {
                        wv v = wv_loadu(z + q);
                        if (ro) v = wv_add(v, wv_load_n(ro + at + q, valid - q));
                        wv_store_n(yo + at + q, wv_act(v, act, lo, hi, aa, ab), valid - q);
                    }
                }
            }
        }
    }
}
#endif

static void input_transform(const Wino *W, const float *x, int64_t t0, int64_t n, float *V) {
#if defined(RK_WINO_VEC)
    int64_t wq, nr = stage_rows(W, t0, n, &wq);
    if (nr) {
        if (W->p->m == 4) input_transform_vec(W, x, t0, n, V, 4, nr, wq);
        else input_transform_vec(W, x, t0, n, V, 2, nr, wq);
        return;
    }
#endif
    if (W->p->m == 4) input_transform_m(W, x, t0, n, V, 4);
    else input_transform_m(W, x, t0, n, V, 2);
}

/* y[0..cnt) = act(v + bias (+ res)), as epilogue_run in rk_convgemm.c */
RK_WINO_INLINE float act_of(float v, int64_t act, float aa, float ab) {
    switch (act) {
    case RS_ACT_NONE: return v;
    case RS_ACT_RELU: return rs_relu(v);
    case RS_ACT_CLIP: return rs_clip(v, aa, ab);
    default: return rs_act(v, (int)act, aa, ab);
    }
}

/* y[0..cnt) = act(v + bias (+ res)) in one pass; the activation is a
 * constant in each specialised loop. */
RK_WINO_INLINE void epilogue_loop(float *y, const float *v, int64_t cnt, float bias, const float *res, int64_t act,
                                  float aa, float ab) {
    if (res) {
        for (int64_t e = 0; e < cnt; e++) y[e] = act_of(v[e] + bias + res[e], act, aa, ab);
    } else {
        for (int64_t e = 0; e < cnt; e++) y[e] = act_of(v[e] + bias, act, aa, ab);
    }
}

static void epilogue_store(float *y, const float *v, int64_t cnt, float bias, const float *res, int64_t act, float aa,
                           float ab) {
    switch (act) {
    case RS_ACT_NONE: epilogue_loop(y, v, cnt, bias, res, RS_ACT_NONE, aa, ab); break;
    case RS_ACT_RELU: epilogue_loop(y, v, cnt, bias, res, RS_ACT_RELU, aa, ab); break;
    case RS_ACT_CLIP: epilogue_loop(y, v, cnt, bias, res, RS_ACT_CLIP, aa, ab); break;
    default: epilogue_loop(y, v, cnt, bias, res, act, aa, ab); break;
    }
}

/* M (a*a matrices of rows x n: output channels o0.. of tiles t0..) back to
 * outputs of image y (res: the residual of the same image, or NULL), a run
 * of tiles in one tile row at a time: the column pass over k, the row pass
 * into m output rows (Yr[i][x]), each stored through the epilogue. */
RK_WINO_INLINE void output_transform_m(const Wino *W, const float *M, int64_t o0, int64_t rows, int64_t t0, int64_t n,
                                       float *y, const float *res, int m) {
    const rk_conv_wino_f32_params *p = W->p;
    const int a = m + 2;
    int64_t oplane = p->oh * p->ow, msz = rows * n;
    float S[24 * CH], Yr[4 * CH * 4];
    float aa = (float)p->act_a, ab = (float)p->act_b;
    for (int64_t o = 0; o < rows; o++) {
        int64_t oc = o0 + o;
        float bias = W->bias ? W->bias[oc] : 0.0f;
        float *yo = y + oc * oplane;
        const float *ro = res ? res + oc * oplane : NULL;
        const float *mo = M + o * n;
        for (int64_t j = 0; j < n;) {
            int64_t t = t0 + j, ty = t / W->tiles_w, tx0 = t % W->tiles_w;
            int64_t cnt = min64(min64(W->tiles_w - tx0, n - j), CH);
            /* S[k][jj][e] = sum_s AT[jj][s] M[k*a + s][e]; Yr[i][e*m + jj] = sum_k AT[i][k] S[k][jj][e] */
            if (m == 4) {
                for (int k = 0; k < a; k++) out_line4(mo + j + k * a * msz, msz, 1, S + k * m * CH, CH, 1, cnt);
                for (int jj = 0; jj < m; jj++) out_line4(S + jj * CH, (int64_t)m * CH, 1, Yr + jj, CH * 4, 4, cnt);
            } else {
                for (int k = 0; k < a; k++) out_line2(mo + j + k * a * msz, msz, 1, S + k * m * CH, CH, 1, cnt);
                for (int jj = 0; jj < m; jj++) out_line2(S + jj * CH, (int64_t)m * CH, 1, Yr + jj, CH * 4, 2, cnt);
            }
            int64_t ox = tx0 * m, valid = min64(cnt * m, p->ow - ox);
            for (int i = 0; i < m && ty * m + i < p->oh; i++) {
                int64_t at = (ty * m + i) * p->ow + ox;
                epilogue_store(yo + at, Yr + i * CH * 4, valid, bias, ro ? ro + at : NULL, p->act, aa, ab);
            }
            j += cnt;
        }
    }
}

static void output_transform(const Wino *W, const float *M, int64_t o0, int64_t rows, int64_t t0, int64_t n,
                             float *y, const float *res) {
#if defined(RK_WINO_VEC)
    if (W->p->m == 4) output_transform_vec(W, M, o0, rows, t0, n, y, res, 4);
    else output_transform_vec(W, M, o0, rows, t0, n, y, res, 2);
#else
    if (W->p->m == 4) output_transform_m(W, M, o0, rows, t0, n, y, res, 4);
    else output_transform_m(W, M, o0, rows, t0, n, y, res, 2);
#endif
}

static void wino_task(void *arg, int tid) {
    const Wino *W = arg;
    const rk_conv_wino_f32_params *p = W->p;
    int a2 = W->a2;
    uint8_t *scratch = W->ctx->scratch + (size_t)tid * W->ctx->scratch_per_thread;
    float *V = rk_align64f(scratch);
    float *M = rk_align64f(V + (size_t)a2 * (size_t)(round16(p->tb) * p->c));
    void *gscratch = rk_align64f(M + (size_t)a2 * (size_t)(p->ocb * p->tb));
    size_t ufull = rk_sgemm_packed_a_size(p->ocb, p->c) / sizeof(float);
    int64_t plane = p->h * p->w, oplane = p->oh * p->ow, total = p->n * W->nblocks * W->nchunks;
    int64_t have = -1;   /* the (image, block) whose V this thread holds */
    for (int64_t cursor = 0, t = -1, t1 = 0;
         rk_next_item(W->q, (int)W->ntasks, tid, RK_RUNS, total, &cursor, &t, &t1);) {
        int64_t q = t % W->nchunks, bt = t / W->nchunks, b = bt / W->nblocks, blk = bt % W->nblocks;
        int64_t t0 = blk * p->tb, n = min64(p->tb, W->tiles - t0);
        if (bt != have) {
            input_transform(W, W->x + b * p->c * plane, t0, n, V);
            have = bt;
        }
        int64_t rows = chunk_rows(p->oc, p->ocb, q), vsz = round16(n) * p->c;
        size_t uper = rk_sgemm_packed_a_size(rows, p->c) / sizeof(float);
        const float *uq = W->u + (size_t)q * ufull * (size_t)a2;
        for (int pos = 0; pos < a2; pos++) {
            rk_sgemm_args g;
            memset(&g, 0, sizeof g);
            g.m = rows;
            g.n = n;
            g.k = p->c;
            g.alpha = 1.0f;
            g.packed_a = uq + (size_t)pos * uper;
            g.packed_b = V + pos * vsz;
            g.c = M + pos * rows * n;
            g.ldc = n;
            rk_sgemm_ex(&g, gscratch, 1, NULL, NULL);
        }
        output_transform(W, M, q * p->ocb, rows, t0, n, W->y + b * p->oc * oplane,
                         W->res ? W->res + b * p->oc * oplane : NULL);
    }
}

/* Below this many multiply-adds (of the direct method) a layer runs on one thread. */
#define THREAD_MIN_MACS (1 << 18)

int rk_conv_wino_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_wino_f32_params *p = params;
    if (p->n < 0 || p->c <= 0 || p->h < 0 || p->w < 0 || p->oc <= 0 || p->oh < 0 || p->ow < 0 ||
        (p->m != 2 && p->m != 4) || p->tb <= 0 || p->tb > 2048 || p->ocb <= 0 || p->pt < 0 || p->pl < 0 ||
        !ctx || !ctx->scratch || ctx->scratch_per_thread < rk_wino_scratch(p->m, p->c, p->ocb, p->tb))
        return RLX_E_ARG;
    Wino W;
    memset(&W, 0, sizeof W);
    W.p = p;
    W.ctx = ctx;
    W.x = in[0];
    W.u = in[1];
    int next = 2;
    W.bias = p->has_bias ? in[next++] : NULL;
    W.res = p->has_res ? in[next++] : NULL;
    W.y = out[0];
    W.a = (int)p->m + 2;
    W.a2 = W.a * W.a;
    W.tiles_w = (p->ow + p->m - 1) / p->m;
    W.tiles = W.tiles_w * ((p->oh + p->m - 1) / p->m);
    if (!W.tiles || !p->n) return RLX_OK;
    W.nblocks = (W.tiles + p->tb - 1) / p->tb;
    W.nchunks = (p->oc + p->ocb - 1) / p->ocb;
    int64_t total = p->n * W.nblocks * W.nchunks;
    double macs = (double)p->n * (double)p->oc * (double)p->c * 9.0 * (double)(p->oh * p->ow);
    int nt = ctx->nthreads > 1 && macs >= THREAD_MIN_MACS ? ctx->nthreads : 1;
    rk_queue q;
    W.ntasks = rk_queue_init(&q, nt < total ? nt : total);
    W.q = &q;
    rk_pool_share(ctx->pool, (int)W.ntasks, wino_task, &W);
    return RLX_OK;
}
