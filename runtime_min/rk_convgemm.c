/* rk_convgemm.c - 2-D convolution (conv2d_f32): GEMM or direct, with epilogue.
 *
 * method 1 (GEMM): for each image and group, y_g (ocg x N, N = oh*ow) =
 * W_g (ocg x K, K = cg*kh*kw) * col (K x N). A 1x1 convolution with stride 1
 * and no padding reads x itself as col; otherwise col is built (im2col) one
 * block of nblk output columns at a time, in the calling thread's scratch,
 * so scratch stays a few hundred KB whatever the layer. The weights may come
 * pre-packed for the GEMM (a_packed: one rk_sgemm_pack_a block per group,
 * made by rlxc at compile time).
 *
 * method 0 (direct): a loop nest with the innermost loop along an output
 * row; used for depthwise and other thin group convolutions, where a GEMM
 * has nothing to reuse.
 *
 * methods 2 (stems) and 3 (grouped, a few channels per group): method 1's
 * sums, computed direct where built with AVX-512 (below).
 *
 * Both split the work over threads by disjoint output blocks (column blocks,
 * and when those are too few, slices of output channels for GEMM; output
 * channels for direct), so results do not depend on the thread count, and
 * apply the fused epilogue to the part each computed: bias (per output
 * channel), residual (in3, the output's shape), activation. The GEMM does it
 * inside, on each register tile as it completes, while it is still in L1.
 */
#include <string.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "rk_gemm.h"
#include "rlx_rt.h"
#include "rk_typed.h"
#include "rlx_scalar.h"
#include "rk_vmath.h"

/* Input rows split into their even and odd columns for taps at column
 * stride 2 (s2_layout, below). */
enum { S2_ROW = 2048, S2_MAXK = 16 };
typedef struct {
    int ok;                /* the layout fits: the kernels read split rows */
    int64_t pad, stride;   /* evens at [pad, ..), odds at [stride + pad, ..) */
    int64_t src[S2_MAXK];  /* where tap kx's output column 0 reads */
} S2;

typedef struct {
    const rk_conv2d_f32_params *p;
    const float *x, *w, *bias, *res;
    float *y;
    rk_ctx *ctx;
    int64_t cg, ocg, kdim, ncols, nblocks, ntasks;
    /* GEMM: block b covers NR-wide column tiles [ntiles*b/nblocks,
     * ntiles*(b+1)/nblocks) (when tiled; else nblk columns each), and each
     * block's rows are cut into msplit slices of mstep output channels */
    int tiled;
    int64_t ntiles, msplit, mstep;
    S2 s2;            /* stride 2: im2col (method 1) or the stem's taps (method 2) read split rows */
    const float *shared_col;   /* method 1: the one block's im2col, built by all threads (col_task) */
    float *shared_pb;          /* method 1: the one block's B packed for the GEMM, by all threads (pack_task) */
    int lanes;        /* method 0: depthwise with a vector of channels in the lanes (dw_lanes_block) */
    int stem_rows;    /* method 2: every block's weights in scratch, tasks row by row (stem_weights) */
    rk_gc_geom gc;    /* method 3: the direct form's bands and planes (rk_conv2d_grouped_geom) */
    rk_queue *q;      /* the tasks' owners (rk_take) */
} Conv;

enum { COL_TILE = 16 };   /* the GEMM's register tile width (NR in rk_gemm.c) */
/* plan_gemm: weights up to this many bytes are cheap to read once per column
 * block, and blocks keep at least this many tiles */
#define COL_SPLIT_WEIGHTS (32.0 * 1024)
enum { COL_MIN_TILES = 4 };

static int64_t align16f(int64_t n) { return (n + 15) & ~(int64_t)15; }

/* Bytes of scratch one thread needs: the col block and the GEMM's packing
 * (transposed: also the product's nblk x ocg block, before it is turned). */
size_t rk_conv2d_scratch(int64_t ocg, int64_t kdim, int64_t nblk, int transposed) {
    size_t col = (size_t)(align16f(kdim * nblk) * (int64_t)sizeof(float));
    if (transposed)
        return col + (size_t)(align16f(nblk * ocg) * (int64_t)sizeof(float)) + rk_sgemm_scratch_size(nblk, ocg, kdim) +
               2 * 64;
    return col + rk_sgemm_scratch_size(ocg, nblk, kdim) + 64;
}

/* y[0..n) = act(y + bias + res): the activation's switch is outside the
 * loops, so each loop is a straight run a compiler vectorizes. */
static void epilogue_run(float *y, int64_t n, float bias, const float *res, int64_t act, float a, float b) {
    if (res) {
        for (int64_t j = 0; j < n; j++) y[j] = y[j] + bias + res[j];
    } else if (bias != 0.0f) {
        for (int64_t j = 0; j < n; j++) y[j] += bias;
    }
    switch (act) {
    case RS_ACT_NONE: break;
    case RS_ACT_RELU:
        for (int64_t j = 0; j < n; j++) y[j] = rs_relu(y[j]);
        break;
    case RS_ACT_CLIP:
        for (int64_t j = 0; j < n; j++) y[j] = rs_clip(y[j], a, b);
        break;
    default:
        rk_act_run(y, n, (int)act, a, b);   /* in vectors, rs_act's bits */
        break;
    }
}

/* im2col of output columns [col0, col0+cols) of one image and group into
 * col (K x cols): row (ic, ky, kx) holds, for each output pixel, the input
 * pixel that tap reads (0 in the padding). Walked an output row segment at
 * a time: the valid part of a segment is one contiguous (or strided) copy. */
static void im2col(const Conv *C, const float *xg, float *col, int64_t col0, int64_t cols) {
    const rk_conv2d_f32_params *p = C->p;
    int64_t plane = p->h * p->w;
    for (int64_t ic = 0; ic < C->cg; ic++) {
        const float *xc = xg + ic * plane;
        for (int64_t ky = 0; ky < p->kh; ky++)
            for (int64_t kx = 0; kx < p->kw; kx++) {
                float *dst = col + ((ic * p->kh + ky) * p->kw + kx) * cols;
                int64_t off = kx * p->dw - p->pl, lo, hi;
                rk_out_range(p->ow, p->sw, off, p->w, &lo, &hi);
                int64_t j = 0;
                while (j < cols) {
                    int64_t c = col0 + j, oy = c / p->ow, ox0 = c % p->ow;
                    int64_t ox1 = p->ow - ox0 < cols - j ? p->ow : ox0 + (cols - j);
                    float *d = dst + j - ox0;   /* d[ox] is this row's column ox */
                    int64_t iy = oy * p->sh - p->pt + ky * p->dh;
                    if (iy < 0 || iy >= p->h) {
                        for (int64_t ox = ox0; ox < ox1; ox++) d[ox] = 0.0f;
                    } else {
                        const float *xrow = xc + iy * p->w;
                        int64_t a = lo > ox0 ? lo : ox0, b = hi < ox1 ? hi : ox1;
                        if (a > b) a = b;
                        for (int64_t ox = ox0; ox < a; ox++) d[ox] = 0.0f;
                        if (p->sw == 1) {
                            if (b > a) memcpy(d + a, xrow + a + off, sizeof(float) * (size_t)(b - a));
                        } else if (p->sw == 2) {   /* a constant stride vectorizes */
                            const float *xs = xrow + off;
                            for (int64_t ox = a; ox < b; ox++) d[ox] = xs[ox * 2];
                        } else {
                            for (int64_t ox = a; ox < b; ox++) d[ox] = xrow[ox * p->sw + off];
                        }
                        for (int64_t ox = b; ox < ox1; ox++) d[ox] = 0.0f;
                    }
                    j += ox1 - ox0;
                }
            }
    }
}

/* d[0, n) = s[0, n): runs of a few to a few dozen floats, where a call to
 * memcpy costs more than the copy. */
static inline void copy_run(float *d, const float *s, int64_t n) {
#if defined(__AVX512F__)
    /* whole vectors plain and the tail masked (masked moves cost far more on
     * these AMD cores); the mask is a variable, so the loop does not turn
     * into a memcpy call */
    for (; n > 0; n -= 16, d += 16, s += 16) {
        if (n >= 16) _mm512_storeu_ps(d, _mm512_loadu_ps(s));
        else {
            __mmask16 m = (__mmask16)((1u << n) - 1);
            _mm512_mask_storeu_ps(d, m, _mm512_maskz_loadu_ps(m, s));
        }
    }
#elif defined(__AVX2__)
    /* whole vectors, then the last 8 (or 4) again, overlapping: no masked
     * moves, and no call for the few floats of a small plane's row */
    if (n >= 8) {
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
        if (i < n) _mm256_storeu_ps(d + n - 8, _mm256_loadu_ps(s + n - 8));
    } else if (n >= 4) {
        __m128 a = _mm_loadu_ps(s), b = _mm_loadu_ps(s + n - 4);
        _mm_storeu_ps(d, a);
        _mm_storeu_ps(d + n - 4, b);
    } else {
        if (n > 0) d[0] = s[0];
        if (n > 1) d[1] = s[1];
        if (n > 2) d[2] = s[2];
    }
#else
    memcpy(d, s, sizeof(float) * (size_t)n);
#endif
}


/* im2col for column stride 2 (as im2col, same values): tap kx reads input
 * columns 2*ox + off, all of one parity. Each input row is split once into
 * its even and odd columns, each run between zeros wide enough for every
 * tap's reach past the row's ends; a tap's part of an output row is then one
 * straight copy, the padding's zeros included. (The strided gather per tap
 * and its edge cases cost ~15% of a stride-2 layer.) Split rows are kept in
 * three slots by iy % 3, so a 3-row kernel at row stride 2 splits each row
 * about once. im2col takes the shapes whose split rows exceed S2_ROW. */

/* The split row's layout for output columns [0, ow): evens at [pad, pad +
 * half), odds at [stride + pad, stride + pad + w/2), zeros around both.
 * ok = 0 if the kernel or the row is too wide for the slots. */
static S2 s2_layout(const rk_conv2d_f32_params *p, int64_t ow) {
    S2 l;
    memset(&l, 0, sizeof l);
    if (p->sw != 2 || p->kw > S2_MAXK || p->w > S2_ROW || ow > S2_ROW) return l;
    int64_t half = (p->w + 1) / 2, before = 0, after = 0;
    for (int64_t kx = 0; kx < p->kw; kx++) {
        int64_t off = kx * p->dw - p->pl, par = off & 1, first = (off - par) / 2, len = par ? p->w / 2 : half;
        if (-first > before) before = -first;
        if (ow + first - len > after) after = ow + first - len;
    }
    l.pad = before;
    l.stride = before + half + after;
    if (2 * l.stride > S2_ROW) return l;
    for (int64_t kx = 0; kx < p->kw; kx++) {
        int64_t off = kx * p->dw - p->pl, par = off & 1;
        l.src[kx] = par * l.stride + before + (off - par) / 2;
    }
    l.ok = 1;
    return l;
}

/* An input row into the layout above (the zeros are the caller's). */
static void s2_split(const float *xrow, int64_t w, const S2 *l, float *r) {
    for (int64_t i = 0; i < (w + 1) / 2; i++) r[l->pad + i] = xrow[2 * i];
    for (int64_t i = 0; i < w / 2; i++) r[l->stride + l->pad + i] = xrow[2 * i + 1];
}

static void im2col_s2(const Conv *C, const float *xg, float *col, int64_t col0, int64_t cols) {
    const rk_conv2d_f32_params *p = C->p;
    const S2 *l = &C->s2;
    int64_t plane = p->h * p->w;
    float split[3][S2_ROW];
    for (int i = 0; i < 3; i++) memset(split[i], 0, sizeof(float) * (size_t)(2 * l->stride));
    for (int64_t ic = 0; ic < C->cg; ic++) {
        const float *xc = xg + ic * plane;
        int64_t have[3] = {-1, -1, -1};
        for (int64_t j = 0; j < cols;) {
            int64_t c = col0 + j, oy = c / p->ow, ox0 = c % p->ow;
            int64_t n = p->ow - ox0 < cols - j ? p->ow - ox0 : cols - j;
            for (int64_t ky = 0; ky < p->kh; ky++) {
                float *d = col + (ic * p->kh + ky) * p->kw * cols + j;   /* + kx * cols: row (ic, ky, kx) */
                int64_t iy = oy * p->sh - p->pt + ky * p->dh;
                if (iy < 0 || iy >= p->h) {
                    for (int64_t kx = 0; kx < p->kw; kx++) memset(d + kx * cols, 0, sizeof(float) * (size_t)n);
                    continue;
                }
                float *r = split[iy % 3];
                if (have[iy % 3] != iy) {
                    s2_split(xc + iy * p->w, p->w, l, r);
                    have[iy % 3] = iy;
                }
                for (int64_t kx = 0; kx < p->kw; kx++) copy_run(d + kx * cols, r + l->src[kx] + ox0, n);
            }
            j += n;
        }
    }
}

/* Columns [*col0, *col0 + *cols) of column block blk. */
static void block_cols(const Conv *C, int64_t blk, int64_t *col0, int64_t *cols) {
    if (C->tiled) {
        int64_t t0 = C->ntiles * blk / C->nblocks, t1 = C->ntiles * (blk + 1) / C->nblocks;
        int64_t c1 = t1 * COL_TILE < C->ncols ? t1 * COL_TILE : C->ncols;
        *col0 = t0 * COL_TILE;
        *cols = c1 - *col0;
    } else {
        *col0 = blk * C->p->nblk;
        *cols = C->ncols - *col0 < C->p->nblk ? C->ncols - *col0 : C->p->nblk;
    }
}

/* A 1x1, stride-1, unpadded convolution's input already is its K x N matrix. */
static int reads_input_in_place(const rk_conv2d_f32_params *p) {
    return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 && p->oh == p->h &&
           p->ow == p->w;
}

/* One block split over threads by output channels (msplit > 1) needs the
 * same im2col in every thread: each built it whole (a 3x3 stride-2 layer
 * at 14x14 -> 7x7, 2304 x 49, is ~10% of the layer). Instead the threads
 * first build it together, input channel by input channel, into thread 0's
 * col (a run of its own), then all read it. The same values, so the same
 * bits. */
static void col_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    int64_t col0, cols;
    block_cols(C, 0, &col0, &cols);
    float *col = (float *)(void *)C->shared_col;
    Conv one = *C;
    one.cg = 1;
    for (int64_t cursor = 0, t = -1, t1 = 0; rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, C->cg, &cursor, &t, &t1);) {
        const float *xc = C->x + t * p->h * p->w;
        float *dst = col + t * p->kh * p->kw * cols;
        if (C->s2.ok) im2col_s2(&one, xc, dst, col0, cols);
        else im2col(&one, xc, dst, col0, cols);
    }
}

/* The same block split over threads by output channels: each thread's
 * GEMM packed the whole B (the block's K x N operand) for its rows, so at
 * 2 threads B was packed twice (ResNeXt-50's 14x14 1x1 layers, 1024 x 196:
 * 800 KB each time, read half from the other core). Where thread 0's
 * scratch has room past its col, the threads first pack B together into
 * it, in units of (K block, run of column panels), K-block-major so that a
 * thread packs the input channels the layer before wrote on its core when
 * that one split its output channels; then every GEMM reads it packed. The
 * packed form is the one each GEMM made for itself (rk_sgemm_pack_b), so
 * the bits are the same. */
enum { PACK_RUNS = 4 };   /* runs of column panels per K block */

static void pack_task(void *arg, int tid) {
    const Conv *C = arg;
    int64_t col0, cols, kbs = (C->kdim + rk_sgemm_kc_step(C->kdim) - 1) / rk_sgemm_kc_step(C->kdim);
    block_cols(C, 0, &col0, &cols);
    int64_t panels = (cols + RK_SGEMM_COL_STEP - 1) / RK_SGEMM_COL_STEP, runs = panels < PACK_RUNS ? panels : PACK_RUNS;
    /* B: the shared im2col block, or the input itself (a 1x1 read in place) */
    const float *b = C->shared_col ? C->shared_col : C->x + col0;
    int64_t ldb = C->shared_col ? cols : C->ncols;
    for (int64_t cursor = 0, t = -1, t1 = 0; rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, kbs * runs, &cursor, &t, &t1);) {
        int64_t kb = t / runs, r = t % runs;
        rk_sgemm_pack_b_panels(cols, C->kdim, b, ldb, kb, panels * r / runs, panels * (r + 1) / runs, C->shared_pb);
    }
}

static void gemm_transposed(const Conv *C, const rk_sgemm_args *g, int64_t ms, void *gscratch);

/* Task t: row slice t % msplit of block t / msplit over (image, group, column
 * block); the epilogue runs inside the GEMM, on each tile as it completes.
 * Each thread takes its share as contiguous runs (rk_next_item), not every
 * ntasks-th task: its columns are then one part of the plane, the part the
 * layer before (and after) computed on the same core when split the same way.
 * Round-robin blocks sent half of each layer's input across cores at 2
 * threads (a Sapphire Rapids VM: SqueezeNet, MobileNetV3-Large and ResNeXt-50
 * 2-3% faster). */
static void gemm_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    uint8_t *scratch = C->ctx->scratch + (size_t)tid * C->ctx->scratch_per_thread;
    float *col = (float *)(void *)scratch;
    void *gscratch = scratch + align16f(C->kdim * p->nblk) * (int64_t)sizeof(float);
    int direct_b = reads_input_in_place(p);
    size_t packed_group = (p->a_packed == 2 ? rk_sgemm_packed_b_size(C->ocg, C->kdim)
                                            : rk_sgemm_packed_a_size(C->ocg, C->kdim)) / sizeof(float);
    int64_t total = p->n * p->group * C->nblocks * C->msplit;
    for (int64_t cursor = 0, t = -1, t1 = 0;
         rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, total, &cursor, &t, &t1);) {
        int64_t ms = t % C->msplit, bt = t / C->msplit;
        int64_t blk = bt % C->nblocks, bg = bt / C->nblocks, gi = bg % p->group, b = bg / p->group;
        int64_t col0, cols;
        block_cols(C, blk, &col0, &cols);
        const float *xg = C->x + (b * p->c + gi * C->cg) * p->h * p->w;
        int64_t yoff = (b * p->oc + gi * C->ocg) * C->ncols;
        rk_sgemm_args g;
        memset(&g, 0, sizeof g);
        g.m = C->ocg;
        g.n = cols;
        g.k = C->kdim;
        g.alpha = 1.0f;
        g.beta = 0.0f;
        if (p->a_packed) {
            g.packed_a = C->w + (size_t)gi * packed_group;
        } else {
            g.a = C->w + gi * C->ocg * C->kdim;
            g.lda = C->kdim;
        }
        if (C->shared_pb) {
            g.packed_b = C->shared_pb;
        } else if (direct_b) {
            g.b = xg + col0;
            g.ldb = C->ncols;
        } else if (C->shared_col) {
            g.b = C->shared_col;
            g.ldb = cols;
        } else {
            if (C->s2.ok) im2col_s2(C, xg, col, col0, cols);
            else im2col(C, xg, col, col0, cols);
            g.b = col;
            g.ldb = cols;
        }
        g.c = C->y + yoff + col0;
        g.ldc = C->ncols;
        g.bias = C->bias ? C->bias + gi * C->ocg : NULL;
        g.res = C->res ? C->res + yoff + col0 : NULL;
        g.ldres = C->ncols;
        g.act = (int)p->act;
        g.act_a = (float)p->act_a;
        g.act_b = (float)p->act_b;
        if (p->a_packed == 2) {
            gemm_transposed(C, &g, ms, gscratch);
            continue;
        }
        if (C->msplit == 1) rk_sgemm_ex(&g, gscratch, 1, NULL, NULL);
        else rk_sgemm_rows(&g, ms * C->mstep, (ms + 1) * C->mstep, gscratch);
    }
}

/* The busiest thread's work, in register tiles (6 rows x 16 columns), when
 * each of ntasks threads takes its even share of the tasks, in one piece
 * (gemm_task's runs). */
static int64_t busiest_load(const Conv *C) {
    int64_t total = C->p->n * C->p->group * C->nblocks * C->msplit, worst = 0;
    for (int64_t tid = 0; tid < C->ntasks; tid++) {
        int64_t load = 0;
        for (int64_t t = total * tid / C->ntasks; t < total * (tid + 1) / C->ntasks; t++) {
            int64_t ms = t % C->msplit, blk = t / C->msplit % C->nblocks, col0, cols;
            block_cols(C, blk, &col0, &cols);
            int64_t m1 = (ms + 1) * C->mstep < C->ocg ? (ms + 1) * C->mstep : C->ocg;
            int64_t rows = m1 - ms * C->mstep;
            if (C->p->a_packed == 2) load += (cols + 11) / 12 * ((rows + 15) / 16) * 2;   /* 12 x 16 tiles */
            else load += (cols + COL_TILE - 1) / COL_TILE * ((rows + 5) / 6);
        }
        if (load > worst) worst = load;
    }
    return worst;
}

/* Column blocks cut at tile boundaries, as even as the scratch (nblk columns
 * of im2col) allows. If that leaves threads idle or uneven, two ways out:
 * more, smaller column blocks (each thread then reads all the weights), or
 * each block's output channels split over the threads (each then builds the
 * same im2col block and packs the same B): the first when the output plane
 * outweighs the weights, the second otherwise, kept only for a clear gain. */
static void plan_gemm(Conv *C, int nt) {
    const rk_conv2d_f32_params *p = C->p;
    C->nblocks = (C->ncols + p->nblk - 1) / p->nblk;
    C->ntiles = (C->ncols + COL_TILE - 1) / COL_TILE;
    C->tiled = p->nblk >= C->ncols || p->nblk % COL_TILE == 0;
    C->msplit = 1;
    C->mstep = C->ocg;
    int64_t total = p->n * p->group * C->nblocks;
    C->ntasks = nt < total ? nt : (total > 0 ? total : 1);
    if (nt <= 1 || total <= 0 || !C->tiled) return;
    int64_t load = busiest_load(C);
    Conv cols = *C, rows = *C;
    int64_t cols_load = -1, rows_load = -1;
    /* a multiple of nt column blocks, none wider than nblk */
    cols.nblocks = (C->nblocks + nt - 1) / nt * nt;
    /* Small weights, which every block reads again (from L1 or L2): RK_RUNS
     * blocks for each thread, each of at least COL_MIN_TILES register tiles,
     * so that a thread left behind gives up part of its share (one block a
     * thread, the other waited out the slower half). */
    if ((double)C->ocg * (double)C->kdim * sizeof(float) <= COL_SPLIT_WEIGHTS)
        for (int64_t want = (int64_t)nt * RK_RUNS; want > cols.nblocks; want -= nt)
            if (C->ntiles / want >= COL_MIN_TILES) {
                cols.nblocks = want;
                break;
            }
    if (cols.nblocks <= C->ntiles && (C->ntiles + cols.nblocks - 1) / cols.nblocks * COL_TILE <= p->nblk) {
        int64_t ctotal = p->n * p->group * cols.nblocks;
        cols.ntasks = nt < ctotal ? nt : ctotal;
        cols_load = busiest_load(&cols);
    }
    /* slices of whole register tiles: GEMM rows, or columns when transposed */
    int64_t step = p->a_packed == 2 ? RK_SGEMM_COL_STEP : RK_SGEMM_ROW_STEP;
    if (C->ocg >= 2 * step) {
        rows.mstep = (C->ocg + nt - 1) / nt;
        rows.mstep = (rows.mstep + step - 1) / step * step;
        rows.msplit = (C->ocg + rows.mstep - 1) / rows.mstep;
        rows.ntasks = nt < total * rows.msplit ? nt : total * rows.msplit;
        rows_load = busiest_load(&rows);
    }
    const Conv *best = NULL;
    int64_t best_load = 0;
    int prefer_cols = C->ncols >= C->ocg;
    if (cols_load >= 0 && (rows_load < 0 || (prefer_cols ? cols_load * 8 <= rows_load * 9 : cols_load * 9 < rows_load * 8)))
        best = &cols, best_load = cols_load;
    else if (rows_load >= 0)
        best = &rows, best_load = rows_load;
    if (best && best_load * 8 < load * 7) *C = *best;
}

/* One input channel, 3x3 taps, no dilation (depthwise layers), with the
 * epilogue folded in: each output row is summed in one pass (the nine taps
 * of an output element accumulate in a register and it is stored once),
 * then bias, residual and activation run over the row while it is in L1.
 * Columns whose window leaves the image take the clipped path; the interior
 * runs without a bounds check, one loop per stride (1, 2, other) and per
 * count of input rows inside the image, so a compiler vectorizes it. Rows
 * outside the image are skipped, never read with weight 0 (an inf there
 * would make NaN). The sums are dw_any_ok's (per kernel row from +0, the
 * taps in order, by fma where the file is built with FMA; the rows added
 * in order), so a plane's bits are the same in every depthwise kernel of
 * one build, and conv_pwdw_f32, which runs this one over bands, gives the
 * bits of the layers it fuses whichever kernel conv2d_f32 picks for them.
 * Built with AVX-512, strides 1 and 2 take dw_plane_avx512 instead. */
#if defined(__FMA__)
#define DW_MADD(a, b, c) fmaf(a, b, c)
#else
#define DW_MADD(a, b, c) ((a) * (b) + (c))
#endif
#define DW_TAPS(R, W0, W1, W2, IX) DW_MADD(W2, (R)[(IX) + 2], DW_MADD(W1, (R)[(IX) + 1], DW_MADD(W0, (R)[IX], 0.0f)))

/* y[j] = taps of rows a (and b, c when nr > 1, 2) at input column j*S
 * onward, j in [0, n); S is a constant in the calls below. */
static inline void dw_interior(float *restrict y, int64_t n, int64_t s, int nr, const float *restrict a,
                               const float *wa, const float *restrict b, const float *wb, const float *restrict c,
                               const float *wc) {
    float a0 = wa[0], a1 = wa[1], a2 = wa[2];
    if (nr == 1) {
        for (int64_t j = 0; j < n; j++) y[j] = DW_TAPS(a, a0, a1, a2, j * s);
        return;
    }
    float b0 = wb[0], b1 = wb[1], b2 = wb[2];
    if (nr == 2) {
        for (int64_t j = 0; j < n; j++) y[j] = DW_TAPS(a, a0, a1, a2, j * s) + DW_TAPS(b, b0, b1, b2, j * s);
        return;
    }
    float c0 = wc[0], c1 = wc[1], c2 = wc[2];
    for (int64_t j = 0; j < n; j++)
        y[j] = DW_TAPS(a, a0, a1, a2, j * s) + DW_TAPS(b, b0, b1, b2, j * s) + DW_TAPS(c, c0, c1, c2, j * s);
}

/* y[j] = act(y[j] + bias + res[j]) in one pass for the activations depthwise
 * layers use; the others go through epilogue_run. Same arithmetic as
 * epilogue_run (no bias add when the bias is 0 and there is no residual). */
static void dw_epilogue(float *restrict y, int64_t n, float bias, const float *restrict res, int64_t act, float lo,
                        float hi) {
    if (act != RS_ACT_NONE && act != RS_ACT_RELU && act != RS_ACT_CLIP) {
        epilogue_run(y, n, bias, res, act, lo, hi);
        return;
    }
    if (res) {
        if (act == RS_ACT_RELU)
            for (int64_t j = 0; j < n; j++) y[j] = rs_relu(y[j] + bias + res[j]);
        else if (act == RS_ACT_CLIP)
            for (int64_t j = 0; j < n; j++) y[j] = rs_clip(y[j] + bias + res[j], lo, hi);
        else
            for (int64_t j = 0; j < n; j++) y[j] = y[j] + bias + res[j];
    } else if (bias != 0.0f) {
        if (act == RS_ACT_RELU)
            for (int64_t j = 0; j < n; j++) y[j] = rs_relu(y[j] + bias);
        else if (act == RS_ACT_CLIP)
            for (int64_t j = 0; j < n; j++) y[j] = rs_clip(y[j] + bias, lo, hi);
        else
            for (int64_t j = 0; j < n; j++) y[j] += bias;
    } else {
        if (act == RS_ACT_RELU)
            for (int64_t j = 0; j < n; j++) y[j] = rs_relu(y[j]);
        else if (act == RS_ACT_CLIP)
            for (int64_t j = 0; j < n; j++) y[j] = rs_clip(y[j], lo, hi);
    }
}

#if defined(__GNUC__)
#define DW_INLINE static inline __attribute__((always_inline))
#else
#define DW_INLINE static inline
#endif

#if defined(__AVX512F__)
/* The even and the odd elements of the 32 floats (a, b): stride-2 taps. */
static inline __m512 dw_even(__m512 a, __m512 b) {
    return _mm512_permutex2var_ps(a, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), b);
}

static inline __m512 dw_odd(__m512 a, __m512 b) {
    return _mm512_permutex2var_ps(a, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), b);
}

/* rk_vmath.h's activations on 16 lanes, out of line: inlined into every
 * kernel they would grow it by their whole switch */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static __m512 dw_act_other(__m512 acc, int act, float lo, float hi) { return rk_v16_act(acc, act, lo, hi); }

/* rs_act on 16 lanes: relu and clip here, the others rk_vmath.h's. Always
 * inlined: as a call (gcc's choice for the whole switch), the relu of
 * SqueezeNet's stem took 10% of its time. */
DW_INLINE __m512 dw_act(__m512 acc, int64_t act, float lo, float hi) {
    if (act == RS_ACT_RELU) {
        /* rs_relu: x if x > 0 or NaN, else 0 */
        __mmask16 keep = _mm512_cmp_ps_mask(acc, _mm512_setzero_ps(), _CMP_GT_OQ) |
                         _mm512_cmp_ps_mask(acc, acc, _CMP_UNORD_Q);
        acc = _mm512_maskz_mov_ps(keep, acc);
    } else if (act == RS_ACT_CLIP) {
        /* rs_clip: x < lo ? lo : (x > hi ? hi : x) */
        __m512 lov = _mm512_set1_ps(lo), hiv = _mm512_set1_ps(hi);
        __mmask16 below = _mm512_cmp_ps_mask(acc, lov, _CMP_LT_OQ);
        acc = _mm512_mask_mov_ps(acc, _mm512_cmp_ps_mask(acc, hiv, _CMP_GT_OQ), hiv);
        acc = _mm512_mask_mov_ps(acc, below, lov);
    } else if (act != RS_ACT_NONE) {
        acc = dw_act_other(acc, (int)act, lo, hi);
    }
    return acc;
}

/* act(acc + bias + res) with epilogue_run's arithmetic. */
DW_INLINE __m512 dw_finish(__m512 acc, float bias, const float *res, __mmask16 out, int64_t act, float lo,
                               float hi) {
    if (res)
        acc = _mm512_add_ps(_mm512_add_ps(acc, _mm512_set1_ps(bias)), rk_load16(out, res));
    else if (bias != 0.0f)
        acc = _mm512_add_ps(acc, _mm512_set1_ps(bias));
    return dw_act(acc, act, lo, hi);
}

/* One input row's three taps for a strip of 16 output columns: lane j of
 * tap t holds the input column (j0 + j)*s - pl + t, 0 where that column is
 * outside the row (loads are masked to the row: nothing is read past its
 * ends). m: per tap, the lanes inside; v: for stride 2, the lanes of the
 * three loads (33 consecutive inputs) inside. */
typedef struct {
    __m512 t[3];
} DwTaps;

DW_INLINE DwTaps dw_taps(const float *src, int64_t s, const __mmask16 *m, const __mmask16 *v) {
    DwTaps r;
    if (s == 1) {
        for (int t = 0; t < 3; t++) r.t[t] = rk_load16(m[t], src + t);
    } else {
        __m512 a = rk_load16(v[0], src), b = rk_load16(v[1], src + 16);
        /* only lane 0 of the third load is used (src[32], tap 2 of lane 15) */
        __m512 c = rk_load_first(v[2], src + 32);
        r.t[0] = dw_even(a, b);
        r.t[1] = dw_odd(a, b);
        /* src[2j + 2]: tap 0 moved down one lane, src[32] into lane 15 */
        r.t[2] = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(c), _mm512_castps_si512(r.t[0]), 1));
    }
    return r;
}

/* One output strip: each kernel row's taps summed in order from 0 (three
 * independent FMA chains), then the rows added; a tap whose mask lane is
 * off is skipped (sums that start from +0 are never -0, so a row with
 * every tap skipped adds nothing). */
DW_INLINE __m512 dw_sum(const __m512 *wv, const DwTaps *rows, const __mmask16 (*m)[3]) {
    __m512 r[3];
    for (int k = 0; k < 3; k++) {
        r[k] = _mm512_setzero_ps();
        for (int t = 0; t < 3; t++) r[k] = _mm512_mask3_fmadd_ps(wv[3 * k + t], rows[k].t[t], r[k], m[k][t]);
    }
    return _mm512_add_ps(_mm512_add_ps(r[0], r[1]), r[2]);
}

/* The epilogue in registers, the strip's one store. */
DW_INLINE void dw_emit(__m512 acc, float *yrow, __mmask16 out, float bias, const float *res, int epilogue,
                       int64_t act, float lo, float hi) {
    if (epilogue) acc = dw_finish(acc, bias, res, out, act, lo, hi);
    _mm512_mask_storeu_ps(yrow, out, acc);
}

/* A depthwise 3x3 plane of stride 1 or 2 (either axis), in strips of 16
 * output columns, each strip walked down the rows; a 7-wide plane is one
 * masked strip. On the rows whose three input rows are all inside, an
 * input row's taps are loaded once and kept in registers for every output
 * row that reads it (three for row stride 1, two for 2); the rows near the
 * top and bottom mask off the input rows outside (never a read with weight
 * 0: an inf there would make NaN). The epilogue runs in registers before
 * each strip's one store. s (column stride) and act are constants in each
 * call (dw_plane_avx512), so each combination is its own loop. */
DW_INLINE void dw_plane_avx512_for(const rk_conv2d_f32_params *p, const float *x, const float *w, float *y,
                                   float bias, const float *res, int epilogue, int64_t s, int64_t act) {
    int64_t h = p->h, wd = p->w, oh = p->oh, ow = p->ow, sh = p->sh, pl = p->pl, pt = p->pt;
    float lo = (float)p->act_a, hi = (float)p->act_b;
    int64_t colo[3], cohi[3];   /* per tap: the output columns whose input column is inside */
    for (int t = 0; t < 3; t++) rk_out_range(ow, s, t - pl, wd, &colo[t], &cohi[t]);
    /* output rows whose input rows iy0 .. iy0 + 2 (iy0 = oy*sh - pt) are all inside */
    int64_t run_lo = (pt + sh - 1) / sh, run_hi = h - 3 + pt >= 0 ? (h - 3 + pt) / sh + 1 : 0;
    if (run_hi > oh) run_hi = oh;
    if (run_lo > run_hi) run_lo = run_hi;
    __m512 wv[9];
    for (int i = 0; i < 9; i++) wv[i] = _mm512_set1_ps(w[i]);
    for (int64_t j0 = 0; j0 < ow; j0 += 16) {
        int64_t base = j0 * s - pl;   /* input column of lane 0, tap 0 */
        __mmask16 m[3], v[3];
        for (int t = 0; t < 3; t++) {
            m[t] = rk_v16_range(colo[t] - j0, cohi[t] - j0);
            v[t] = rk_v16_range(-base - 16 * t, wd - base - 16 * t);
        }
        v[2] &= 1;
        __mmask16 out = rk_v16_range(0, ow - j0);
        __mmask16 mrow[3][3];   /* every input row inside */
        for (int k = 0; k < 3; k++)
            for (int t = 0; t < 3; t++) mrow[k][t] = m[t];
        for (int64_t oy = 0; oy < oh; oy++) {
            DwTaps rows[3];
            if (oy == run_lo && run_lo < run_hi) {
                const float *src = x + (oy * sh - pt) * wd + base;
                rows[0] = dw_taps(src, s, m, v);
                rows[1] = dw_taps(src + wd, s, m, v);
                src += 2 * wd;
                for (; oy < run_hi; oy++) {
                    rows[2] = dw_taps(src, s, m, v);
                    dw_emit(dw_sum(wv, rows, (const __mmask16(*)[3])mrow), y + oy * ow + j0, out, bias,
                            res ? res + oy * ow + j0 : NULL, epilogue, act, lo, hi);
                    if (sh == 1) {
                        rows[0] = rows[1];
                        rows[1] = rows[2];
                        src += wd;
                    } else {
                        rows[0] = rows[2];
                        if (oy + 1 < run_hi) rows[1] = dw_taps(src + wd, s, m, v);
                        src += 2 * wd;
                    }
                }
                if (oy >= oh) break;
            }
            __mmask16 mk[3][3];
            int64_t iy0 = oy * sh - pt;
            for (int k = 0; k < 3; k++) {
                int inside = iy0 + k >= 0 && iy0 + k < h;
                for (int t = 0; t < 3; t++) {
                    mk[k][t] = inside ? m[t] : 0;
                    rows[k].t[t] = _mm512_setzero_ps();
                }
                if (inside) rows[k] = dw_taps(x + (iy0 + k) * wd + base, s, m, v);
            }
            dw_emit(dw_sum(wv, rows, (const __mmask16(*)[3])mk), y + oy * ow + j0, out, bias,
                    res ? res + oy * ow + j0 : NULL, epilogue, act, lo, hi);
        }
    }
}

static void dw_plane_avx512(const rk_conv2d_f32_params *p, const float *x, const float *w, float *y, float bias,
                            const float *res, int epilogue) {
    int64_t act = epilogue ? p->act : RS_ACT_NONE;
    /* SiLU and the others with exp or erf come here without their
     * activation (depthwise3x3 applies it over the plane) */
    int kind = act == RS_ACT_NONE ? 0 : act == RS_ACT_RELU ? 1 : act == RS_ACT_CLIP ? 2
                                                               : act == RS_ACT_HARDSWISH ? 4 : 5;
#define DW_CASE(S, K, A)                                                    \
    if (p->sw == S && kind == K) {                                          \
        dw_plane_avx512_for(p, x, w, y, bias, res, epilogue, S, (A));       \
        return;                                                             \
    }
    DW_CASE(1, 0, RS_ACT_NONE)
    DW_CASE(1, 1, RS_ACT_RELU)
    DW_CASE(1, 2, RS_ACT_CLIP)
    DW_CASE(2, 0, RS_ACT_NONE)
    DW_CASE(2, 1, RS_ACT_RELU)
    DW_CASE(2, 2, RS_ACT_CLIP)
    DW_CASE(1, 4, RS_ACT_HARDSWISH)
    DW_CASE(2, 4, RS_ACT_HARDSWISH)
#undef DW_CASE
    dw_plane_avx512_for(p, x, w, y, bias, res, epilogue, p->sw, act);
}
#endif

/* Small planes, stride 1, as one flat run: with ow == w, output element
 * f = oy*ow + ox reads input f + (ky - pt)*w + (kx - pl) for tap (ky, kx),
 * so a 7x7 plane is 4 vectors of 16 (49 of 64 lanes) rather than 7 strips
 * of 7 lanes. Per vector and tap, a mask of the lanes whose tap is inside
 * the image: made once per task (dw_flat_plan), the same for every channel.
 * The taps are summed as dw_sum does (per kernel row from 0, skipped where
 * masked off, rows added in order), so the bits are the strips'. */
enum { DW_FLAT_VECS = 4 };   /* planes up to 64 elements (8x8) */
typedef struct {
    int nv;
    int64_t off[9];
    uint16_t tap[DW_FLAT_VECS][9], out[DW_FLAT_VECS];
} DwFlat;

#if defined(__AVX512F__)
static int dw_flat_plan(const rk_conv2d_f32_params *p, DwFlat *f) {
    int64_t n = p->oh * p->ow;
    if (p->sh != 1 || p->sw != 1 || p->ow != p->w || p->ow >= 16 || n <= 0 || n > 16 * DW_FLAT_VECS) return 0;
    f->nv = (int)((n + 15) / 16);
    for (int k = 0; k < 9; k++) f->off[k] = (k / 3 - p->pt) * p->w + (k % 3 - p->pl);
    for (int v = 0; v < f->nv; v++) {
        f->out[v] = 0;
        for (int k = 0; k < 9; k++) f->tap[v][k] = 0;
        for (int l = 0; l < 16; l++) {
            int64_t fo = 16 * v + l, oy = fo / p->ow, ox = fo % p->ow;
            if (fo >= n) break;
            f->out[v] |= (uint16_t)(1u << l);
            for (int k = 0; k < 9; k++) {
                int64_t iy = oy - p->pt + k / 3, ix = ox - p->pl + k % 3;
                if (iy >= 0 && iy < p->h && ix >= 0 && ix < p->w) f->tap[v][k] |= (uint16_t)(1u << l);
            }
        }
    }
    return 1;
}

static void dw_flat_avx512(const DwFlat *f, const rk_conv2d_f32_params *p, const float *x, const float *w, float *y,
                           float bias, const float *res, int epilogue) {
    int64_t act = epilogue ? p->act : RS_ACT_NONE;
    float lo = (float)p->act_a, hi = (float)p->act_b;
    __m512 wv[9];
    for (int i = 0; i < 9; i++) wv[i] = _mm512_set1_ps(w[i]);
    for (int v = 0; v < f->nv; v++) {
        __m512 r[3];
        for (int k = 0; k < 3; k++) {
            r[k] = _mm512_setzero_ps();
            for (int t = 0; t < 3; t++) {
                __mmask16 m = f->tap[v][3 * k + t];
                __m512 xv = _mm512_maskz_loadu_ps(m, x + 16 * v + f->off[3 * k + t]);
                r[k] = _mm512_mask3_fmadd_ps(wv[3 * k + t], xv, r[k], m);
            }
        }
        __m512 acc = _mm512_add_ps(_mm512_add_ps(r[0], r[1]), r[2]);
        dw_emit(acc, y + 16 * v, f->out[v], bias, res ? res + 16 * v : NULL, epilogue, act, lo, hi);
    }
}
#endif

/* A depthwise 3x3 that depthwise3x3 takes: one input channel per group, no
 * dilation, pads not negative. */
static int dw3_ok(const Conv *C) {
    const rk_conv2d_f32_params *p = C->p;
    return C->cg == 1 && p->kh == 3 && p->kw == 3 && p->dh == 1 && p->dw == 1 && p->pt >= 0 && p->pl >= 0;
}

/* A depthwise convolution of any kernel, stride and dilation: one input
 * channel per group, pads not negative. Its sums are the 3x3 kernels':
 * per kernel row from +0, the taps in order (by fma where the file is
 * built with FMA), the rows added in order, then the bias where it is not
 * 0 (always with a residual) and the activation. Taps over the zero
 * padding add w * 0 = +-0 to a sum that is never -0, so they change
 * nothing (finite weights): the kernels below read padded copies of the
 * input without a test per tap, and give the bits of one that skips them. */
static int dw_any_ok(const Conv *C) {
    const rk_conv2d_f32_params *p = C->p;
    return C->cg == 1 && p->pt >= 0 && p->pl >= 0 && p->kh > 0 && p->kw > 0 && p->oh > 0 && p->ow > 0;
}

/* Rows and columns of the padded input the output reads. */
static int64_t dw_span(int64_t out, int64_t s, int64_t k, int64_t d) { return (out - 1) * s + (k - 1) * d + 1; }

/* ---- rows of taps (any instruction set) ----
 * Each input row a plane's outputs read is copied once into a slot of a
 * small ring (on the stack), padded with zeros and split into its sw
 * phases (phase q holds padded columns q, q + sw, ...), so that tap kx of
 * output column ox is column ox + kx*dw/sw of phase kx*dw%sw: every tap's
 * row of products is one straight loop over the output row, which
 * compilers vectorize. The ring holds the (kh - 1)*dh + 1 rows one output
 * row reads; rows outside the image are skipped. */
enum { DW_ROWS_FLOATS = 12288 };   /* the ring and two output rows: 48 KB */

static int64_t dw_rows_phase(const rk_conv2d_f32_params *p) {
    return align16f((dw_span(p->ow, p->sw, p->kw, p->dw) + p->sw - 1) / p->sw);
}

static int dw_rows_ok(const Conv *C) {
    const rk_conv2d_f32_params *p = C->p;
    if (!dw_any_ok(C)) return 0;
    int64_t slots = (p->kh - 1) * p->dh + 1, slot = p->sw * dw_rows_phase(p);
    return p->kh <= 64 && slots * slot + 2 * align16f(p->ow) <= DW_ROWS_FLOATS;
}

static void dw_rows(const rk_conv2d_f32_params *p, const float *x, const float *w, float *y, float bias,
                    const float *res, int epilogue) {
    const int64_t h = p->h, wd = p->w, oh = p->oh, ow = p->ow, sh = p->sh, sw = p->sw, kh = p->kh, kw = p->kw;
    const int64_t dh = p->dh, dw = p->dw, pt = p->pt, pl = p->pl, ph = dw_rows_phase(p);
    const int64_t slots = (kh - 1) * dh + 1, slot = sw * ph;
    float ring[DW_ROWS_FLOATS];
    float *tot = ring + slots * slot, *srow = tot + align16f(ow);
    int64_t tag[64];
    for (int64_t i = 0; i < slots; i++) tag[i] = -1;
    for (int64_t oy = 0; oy < oh; oy++) {
        int first = 1;
        for (int64_t ky = 0; ky < kh; ky++) {
            int64_t iy = oy * sh - pt + ky * dh;
            if (iy < 0 || iy >= h) continue;
            float *r = ring + (iy % slots) * slot;
            if (tag[iy % slots] != iy) {   /* the padded row, split into phases */
                const float *xr = x + iy * wd;
                for (int64_t q = 0; q < sw; q++)
                    for (int64_t k = 0; k < ph; k++) {
                        int64_t ix = k * sw + q - pl;
                        r[q * ph + k] = ix >= 0 && ix < wd ? xr[ix] : 0.0f;
                    }
                tag[iy % slots] = iy;
            }
            const float *wr = w + ky * kw;
            for (int64_t j = 0; j < ow; j++) srow[j] = 0.0f;
            for (int64_t kx = 0; kx < kw; kx++) {
                const float wv = wr[kx], *src = r + (kx * dw % sw) * ph + kx * dw / sw;
                for (int64_t j = 0; j < ow; j++) srow[j] = DW_MADD(wv, src[j], srow[j]);
            }
            if (first)
                for (int64_t j = 0; j < ow; j++) tot[j] = srow[j];
            else
                for (int64_t j = 0; j < ow; j++) tot[j] = tot[j] + srow[j];
            first = 0;
        }
        float *yrow = y + oy * ow;
        if (first)
            for (int64_t j = 0; j < ow; j++) yrow[j] = 0.0f;
        else
            for (int64_t j = 0; j < ow; j++) yrow[j] = tot[j];
        if (epilogue) epilogue_run(yrow, ow, bias, res ? res + oy * ow : NULL, p->act, (float)p->act_a, (float)p->act_b);
    }
}

/* The vector kernels that AVX-512 and AVX2 (with FMA) builds share: the
 * depthwise lanes kernel and method 3's direct form. */
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#define CONV_SIMD 1
#else
#define CONV_SIMD 0
#endif

#if CONV_SIMD
/* ---- depthwise on small planes, a vector of channels in the lanes ----
 * On a 14x14 or 7x7 plane a row is one part-empty vector, and a plane's
 * few rows are too few for the sums of one row to overlap the next (a
 * 576-channel 14x14 3x3 layer: 18 cycles a row, 1.5x ORT's time). Here DL
 * channels (16 with AVX-512, 8 with AVX2) go through at once: their planes
 * are turned into [position][DL channels] (DLxDL blocks transposed in
 * registers), then spread into a zero-padded plane, each output position
 * is kh*kw fmas of whole vectors, every lane with the same geometry (no
 * masks, no tests), four positions at a time, and the outputs are turned
 * back. The sums are dw_any_ok's, so a plane's bits do not depend on which
 * kernel it gets. A plane whose padded input or output is too large for the
 * stack buffers goes in bands of output rows, each band's input rows
 * transposed a row at a time (the rows two bands share, twice). 3x3
 * kernels: planes of up to 256 positions (the AVX-512 strips or, with
 * AVX2, depthwise3x3 take larger ones); others up to
 * DW_LANES_TAPS taps (with AVX2 this replaced dw_rows, whose per-row
 * epilogue ran the 7- and 14-wide rows of EfficientNet's 5x5 layers lane by
 * lane); one input channel per output channel, no residual, any activation. */
enum { DW_LANES_IN = RK_DWL_IN, DW_LANES_OUT = RK_DWL_OUT, DW_LANES_TAPS = RK_DWL_TAPS };

#if defined(__AVX512F__)
#define DL 16
typedef __m512 dl_vec;
typedef __mmask16 dl_bias_mask;
#define DL_ZERO() _mm512_setzero_ps()
#define DL_LOAD(p) _mm512_loadu_ps(p)
#define DL_STORE(p, v) _mm512_storeu_ps(p, v)
#define DL_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define DL_ADD(a, b) _mm512_add_ps(a, b)
/* the first n (0..16) floats at p, the other lanes 0 (and not read); the
 * first n lanes of v to p */
#define DL_LOAD_N(n, p) rk_load16(rk_v16_range(0, n), p)
#define DL_STORE_N(n, p, v) _mm512_mask_storeu_ps(p, rk_v16_range(0, n), v)
/* t + bias in the lanes of m, t in the others */
#define DL_BIAS_MASK(bv) _mm512_cmp_ps_mask(bv, _mm512_setzero_ps(), _CMP_NEQ_UQ)
#define DL_NO_BIAS() ((__mmask16)0)
#define DL_ADD_BIAS(t, m, bv) _mm512_mask_add_ps(t, m, t, bv)
#define DL_ACT(v, act, lo, hi) dw_act(v, act, lo, hi)
#define DL_TR(r) dw_tr16(r)

/* r[i] lane j <- r[j] lane i */
static inline void dw_tr16(__m512 *r) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    /* per 128-bit lane L, u[4g + j] = rows 4g .. 4g+3 of column 4L + j */
    for (int g = 0; g < 16; g += 4) {
        __m512d a = _mm512_castps_pd(t[g]), b = _mm512_castps_pd(t[g + 1]);
        __m512d c = _mm512_castps_pd(t[g + 2]), d = _mm512_castps_pd(t[g + 3]);
        r[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    for (int j = 0; j < 4; j++) {
        __m512 v01 = _mm512_shuffle_f32x4(r[j], r[4 + j], _MM_SHUFFLE(1, 0, 1, 0));
        __m512 v23 = _mm512_shuffle_f32x4(r[j], r[4 + j], _MM_SHUFFLE(3, 2, 3, 2));
        __m512 w01 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], _MM_SHUFFLE(1, 0, 1, 0));
        __m512 w23 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], _MM_SHUFFLE(3, 2, 3, 2));
        t[j] = _mm512_shuffle_f32x4(v01, w01, _MM_SHUFFLE(2, 0, 2, 0));
        t[4 + j] = _mm512_shuffle_f32x4(v01, w01, _MM_SHUFFLE(3, 1, 3, 1));
        t[8 + j] = _mm512_shuffle_f32x4(v23, w23, _MM_SHUFFLE(2, 0, 2, 0));
        t[12 + j] = _mm512_shuffle_f32x4(v23, w23, _MM_SHUFFLE(3, 1, 3, 1));
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}
#else
#define DL 8
typedef __m256 dl_vec;
typedef __m256 dl_bias_mask;
#define DL_ZERO() _mm256_setzero_ps()
#define DL_LOAD(p) _mm256_loadu_ps(p)
#define DL_STORE(p, v) _mm256_storeu_ps(p, v)
#define DL_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define DL_ADD(a, b) _mm256_add_ps(a, b)
#define DL_LOAD_N(n, p) ((n) >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, rk_v8_lanes(n)))
#define DL_STORE_N(n, p, v) ((n) >= 8 ? _mm256_storeu_ps(p, v) : _mm256_maskstore_ps(p, rk_v8_lanes(n), v))
#define DL_BIAS_MASK(bv) _mm256_cmp_ps(bv, _mm256_setzero_ps(), _CMP_NEQ_UQ)
#define DL_NO_BIAS() _mm256_setzero_ps()
#define DL_ADD_BIAS(t, m, bv) _mm256_blendv_ps(t, _mm256_add_ps(t, bv), m)
#define DL_ACT(v, act, lo, hi) rk_v8_act(v, (int)(act), lo, hi)
#define DL_TR(r) dw_tr8(r)

/* r[i] lane j <- r[j] lane i */
static inline void dw_tr8(__m256 *r) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    /* per 128-bit half H, u[4g + j] = rows 4g .. 4g+3 of column 4H + j */
    for (int g = 0; g < 8; g += 4) {
        u[g] = _mm256_shuffle_ps(t[g], t[g + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int j = 0; j < 4; j++) {
        r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}
#endif

/* Output rows per band: the most whose padded input rows fit in
 * DW_LANES_IN positions and outputs in DW_LANES_OUT; 0 if not one. */
static int64_t dw_lanes_band(const rk_conv2d_f32_params *p) {
    int64_t wp = dw_span(p->ow, p->sw, p->kw, p->dw), nb = p->oh;
    while (nb > 0 && (dw_span(nb, p->sh, p->kh, p->dh) * wp > DW_LANES_IN || nb * p->ow > DW_LANES_OUT)) nb--;
    return nb;
}

static int dw_lanes_ok(const Conv *C) {
    const rk_conv2d_f32_params *p = C->p;
    if (!dw_any_ok(C) || C->ocg != 1 || C->res || p->kh * p->kw > DW_LANES_TAPS || p->h * p->w <= 0) return 0;
    /* 3x3: small planes; the strips (AVX-512) or depthwise3x3 take the others */
    if (dw3_ok(C)) return p->sh <= 2 && p->sw <= 2 && p->h * p->w <= 256 && p->oh * p->ow <= 256;
    return dw_lanes_band(p) > 0;
}

/* tout[q] (DL channels) = the sums and epilogue of output position q from
 * tin ([padded position][DL channels], rows wp positions wide), for oh
 * output rows (a band's), four positions of a row at a time; act a
 * constant after inlining. */
DW_INLINE void dw_lanes_sums(const rk_conv2d_f32_params *p, const float *tin, int64_t wp, int64_t oh, float *tout,
                             const float *wl, dl_vec bv, dl_bias_mask has_bias, int64_t act) {
    const int64_t ow = p->ow, sh = p->sh, sw = p->sw, kh = p->kh, kw = p->kw, dh = p->dh, dw = p->dw;
    const float lo = (float)p->act_a, hi = (float)p->act_b;
    for (int64_t oy = 0; oy < oh; oy++) {
        float *to = tout + oy * ow * DL;
        int64_t ox = 0;
        for (; ox + 4 <= ow; ox += 4) {
            dl_vec t0 = DL_ZERO(), t1 = t0, t2 = t0, t3 = t0;
            for (int64_t ky = 0; ky < kh; ky++) {
                const float *r = tin + ((oy * sh + ky * dh) * wp + ox * sw) * DL;
                dl_vec s0 = DL_ZERO(), s1 = s0, s2 = s0, s3 = s0;
                for (int64_t kx = 0; kx < kw; kx++) {
                    dl_vec wv = DL_LOAD(wl + (ky * kw + kx) * DL);
                    const float *q = r + kx * dw * DL;
                    s0 = DL_FMA(wv, DL_LOAD(q), s0);
                    s1 = DL_FMA(wv, DL_LOAD(q + sw * DL), s1);
                    s2 = DL_FMA(wv, DL_LOAD(q + 2 * sw * DL), s2);
                    s3 = DL_FMA(wv, DL_LOAD(q + 3 * sw * DL), s3);
                }
                if (ky == 0) {
                    t0 = s0, t1 = s1, t2 = s2, t3 = s3;
                } else {
                    t0 = DL_ADD(t0, s0), t1 = DL_ADD(t1, s1);
                    t2 = DL_ADD(t2, s2), t3 = DL_ADD(t3, s3);
                }
            }
            DL_STORE(to + ox * DL, DL_ACT(DL_ADD_BIAS(t0, has_bias, bv), act, lo, hi));
            DL_STORE(to + (ox + 1) * DL, DL_ACT(DL_ADD_BIAS(t1, has_bias, bv), act, lo, hi));
            DL_STORE(to + (ox + 2) * DL, DL_ACT(DL_ADD_BIAS(t2, has_bias, bv), act, lo, hi));
            DL_STORE(to + (ox + 3) * DL, DL_ACT(DL_ADD_BIAS(t3, has_bias, bv), act, lo, hi));
        }
        for (; ox < ow; ox++) {
            dl_vec t0 = DL_ZERO();
            for (int64_t ky = 0; ky < kh; ky++) {
                const float *r = tin + ((oy * sh + ky * dh) * wp + ox * sw) * DL;
                dl_vec s0 = DL_ZERO();
                for (int64_t kx = 0; kx < kw; kx++)
                    s0 = DL_FMA(DL_LOAD(wl + (ky * kw + kx) * DL), DL_LOAD(r + kx * dw * DL), s0);
                t0 = ky == 0 ? s0 : DL_ADD(t0, s0);
            }
            DL_STORE(to + ox * DL, DL_ACT(DL_ADD_BIAS(t0, has_bias, bv), act, lo, hi));
        }
    }
}

/* Kernels 3, 5 and 7 wide at column stride 1 or 2 (no dilation along
 * rows): DW_ROWP consecutive positions of an output row at once, each input
 * vector of a kernel row loaded once for every tap that reads it. A
 * position's tap kx reads column ox * sw + kx, so the (DW_ROWP - 1) * sw +
 * kw vectors of a kernel row feed DW_ROWP * kw fmas, where one load per fma
 * (dw_lanes_sums) made the loads the bound: 5x5 on 14x14, 672 channels,
 * 109 -> 72 us. Each sum still takes its taps in kx order from +0 and the
 * kernel rows in order, so the bits are dw_lanes_sums'. The last group of
 * a row may run past it (into the next padded row, or the DW_SLACK zeroed
 * positions after the last one): those sums are not stored. */
#if defined(__AVX512F__)
#define DW_ROWP 8
#else
#define DW_ROWP 4   /* AVX2: 16 registers */
#endif
enum { DW_SLACK = 2 * DW_ROWP };

static int dw_reuse_ok(const rk_conv2d_f32_params *p) {
    return p->dw == 1 && (p->sw == 1 || p->sw == 2) && (p->kw == 3 || p->kw == 5 || (p->kw == 7 && DW_ROWP == 8));
}

/* s[i] = kernel row ky's taps of position i, from r (position 0's first
 * input) and wk (the row's kw weight vectors); kw and sw constants */
DW_INLINE void dw_row_taps(const float *r, const float *wk, dl_vec *s, const int kw, const int sw) {
    dl_vec w[7];
    for (int kx = 0; kx < kw; kx++) w[kx] = DL_LOAD(wk + kx * DL);
    for (int i = 0; i < DW_ROWP; i++) s[i] = DL_ZERO();
#if defined(__GNUC__)
#pragma GCC unroll 32
#endif
    for (int j = 0; j < (DW_ROWP - 1) * sw + kw; j++) {
        dl_vec v = DL_LOAD(r + j * DL);
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
        for (int kx = 0; kx < kw; kx++) {
            int d = j - kx;
            if (d >= 0 && d % sw == 0 && d / sw < DW_ROWP) s[d / sw] = DL_FMA(w[kx], v, s[d / sw]);
        }
    }
}

/* dw_lanes_sums' outputs (before the activation, which the caller applies)
 * by dw_row_taps; kw and sw constants after inlining */
DW_INLINE void dw_reuse_sums(const rk_conv2d_f32_params *p, const float *tin, int64_t wp, int64_t oh, float *tout,
                            const float *wl, dl_vec bv, dl_bias_mask has_bias, const int kw, const int sw) {
    const int64_t ow = p->ow, sh = p->sh, kh = p->kh, dh = p->dh;
    for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox0 = 0; ox0 < ow; ox0 += DW_ROWP) {
            dl_vec t[DW_ROWP], s[DW_ROWP];
            for (int64_t ky = 0; ky < kh; ky++) {
                dw_row_taps(tin + ((oy * sh + ky * dh) * wp + ox0 * sw) * DL, wl + ky * kw * DL, s, kw, sw);
                for (int i = 0; i < DW_ROWP; i++) t[i] = ky == 0 ? s[i] : DL_ADD(t[i], s[i]);
            }
            int64_t n = ow - ox0 < DW_ROWP ? ow - ox0 : DW_ROWP;
            for (int i = 0; i < n; i++) DL_STORE(tout + (oy * ow + ox0 + i) * DL, DL_ADD_BIAS(t[i], has_bias, bv));
        }
}

static void dw_lanes_run(const rk_conv2d_f32_params *p, const float *tin, int64_t wp, int64_t oh, float *tout,
                         const float *wl, dl_vec bv, dl_bias_mask has_bias) {
    if (dw_reuse_ok(p)) {
        int shape = (int)p->kw * 2 + (int)p->sw;
        switch (shape) {
#define DW_ROWS_CASE(kw, sw) \
        case kw * 2 + sw: dw_reuse_sums(p, tin, wp, oh, tout, wl, bv, has_bias, kw, sw); break;
        DW_ROWS_CASE(3, 1) DW_ROWS_CASE(3, 2) DW_ROWS_CASE(5, 1) DW_ROWS_CASE(5, 2)
#if DW_ROWP == 8
        DW_ROWS_CASE(7, 1) DW_ROWS_CASE(7, 2)
#endif
#undef DW_ROWS_CASE
        default: break;
        }
        if (p->act != RS_ACT_NONE) rk_act_run(tout, oh * p->ow * DL, (int)p->act, (float)p->act_a, (float)p->act_b);
        return;
    }
    switch (p->act) {   /* the activation a constant in each loop */
    case RS_ACT_NONE: dw_lanes_sums(p, tin, wp, oh, tout, wl, bv, has_bias, RS_ACT_NONE); break;
    case RS_ACT_RELU: dw_lanes_sums(p, tin, wp, oh, tout, wl, bv, has_bias, RS_ACT_RELU); break;
    case RS_ACT_CLIP: dw_lanes_sums(p, tin, wp, oh, tout, wl, bv, has_bias, RS_ACT_CLIP); break;
    case RS_ACT_HARDSWISH: dw_lanes_sums(p, tin, wp, oh, tout, wl, bv, has_bias, RS_ACT_HARDSWISH); break;
    default:
        if (rk_act_exp((int)p->act)) {
            /* SiLU and the others with exp or erf: over the band after its
             * sums, four vectors at a time (rk_act_run), as depthwise3x3 */
            dw_lanes_sums(p, tin, wp, oh, tout, wl, bv, has_bias, RS_ACT_NONE);
            rk_act_run(tout, oh * p->ow * DL, (int)p->act, (float)p->act_a, (float)p->act_b);
        } else {
            dw_lanes_sums(p, tin, wp, oh, tout, wl, bv, has_bias, p->act);
        }
        break;
    }
}

/* Row ry of a padded band (wp positions) from input row iy of nch
 * channels (planes np apart), DL columns at a time; zeros around it. */
static void dw_lanes_row(const rk_conv2d_f32_params *p, const float *x, int64_t np, int64_t nch, int64_t iy,
                         int64_t wp, float *dst) {
    int64_t lo = p->pl < wp ? p->pl : wp, hi = p->pl + p->w < wp ? p->pl + p->w : wp;
    if (iy < 0 || iy >= p->h || hi <= lo) {
        memset(dst, 0, sizeof(float) * (size_t)(wp * DL));
        return;
    }
    memset(dst, 0, sizeof(float) * (size_t)(lo * DL));
    memset(dst + hi * DL, 0, sizeof(float) * (size_t)((wp - hi) * DL));
    dl_vec r[DL];
    for (int64_t c0 = lo; c0 < hi; c0 += DL) {
        int64_t n = hi - c0 < DL ? hi - c0 : DL;
        const float *src = x + iy * p->w + (c0 - p->pl);
        for (int c = 0; c < DL; c++) r[c] = c < nch ? DL_LOAD_N(n, src + c * np) : DL_ZERO();
        DL_TR(r);
        for (int64_t i = 0; i < n; i++) DL_STORE(dst + (c0 + i) * DL, r[i]);
    }
}

/* Positions [q0, q0 + n) (n <= DL) of tout back to nch channels' planes
 * (nq apart) at y. */
static void dw_lanes_back(const float *tout, int64_t n, int64_t nch, int64_t nq, float *y) {
    dl_vec r[DL];
    for (int i = 0; i < DL; i++) r[i] = i < n ? DL_LOAD(tout + i * DL) : DL_ZERO();
    DL_TR(r);
    for (int c = 0; c < nch; c++) DL_STORE_N(n, y + c * nq, r[c]);
}

/* A whole plane: input position q's channels are the first `lanes` floats
 * at t + q * ldt (the others 0), spread into the zero-padded plane tin
 * (padded row ry is input row ry - pt, its column c input column c - pl),
 * then the sums into tout and nch channels' planes back into y (oh*ow
 * apart). t may be tout: it is read before the sums write tout. */
static void dw_lanes_plane(const rk_conv2d_f32_params *p, const float *t, int64_t ldt, int64_t lanes, const float *wl,
                           dl_vec bv, dl_bias_mask has_bias, float *tin, float *tout, float *y, int64_t nch) {
    const int64_t nq = p->oh * p->ow;
    const int64_t hp = dw_span(p->oh, p->sh, p->kh, p->dh), wp = dw_span(p->ow, p->sw, p->kw, p->dw);
    int64_t lo = p->pl < wp ? p->pl : wp, hi = p->pl + p->w < wp ? p->pl + p->w : wp;
    for (int64_t ry = 0; ry < hp; ry++) {
        float *dst = tin + ry * wp * DL;
        int64_t iy = ry - p->pt;
        if (iy < 0 || iy >= p->h || hi <= lo) {
            memset(dst, 0, sizeof(float) * (size_t)(wp * DL));
            continue;
        }
        memset(dst, 0, sizeof(float) * (size_t)(lo * DL));
        const float *src = t + iy * p->w * ldt;
        for (int64_t c = lo; c < hi; c++) DL_STORE(dst + c * DL, DL_LOAD_N(lanes, src + (c - p->pl) * ldt));
        memset(dst + hi * DL, 0, sizeof(float) * (size_t)((wp - hi) * DL));
    }
    memset(tin + hp * wp * DL, 0, sizeof(float) * DW_SLACK * DL);
    dw_lanes_run(p, tin, wp, p->oh, tout, wl, bv, has_bias);
    for (int64_t q0 = 0; q0 < nq; q0 += DL)
        dw_lanes_back(tout + q0 * DL, nq - q0 < DL ? nq - q0 : DL, nch, nq, y + q0);
}

/* wl (taps x DL) and bl (DL) from nch channels' weights (taps each) and
 * bias (or NULL), zeros in the other lanes */
static void dw_lanes_weights(const float *w, const float *bias, int64_t nch, int64_t taps, float *wl, float *bl) {
    for (int c = 0; c < DL; c++) {
        for (int64_t k = 0; k < taps; k++) wl[k * DL + c] = c < nch ? w[c * taps + k] : 0.0f;
        bl[c] = c < nch && bias ? bias[c] : 0.0f;
    }
}

/* nch (1..DL) channels: planes x (h*w apart), weights w (kh*kw each),
 * bias or NULL, outputs y (oh*ow apart) */
static void dw_lanes_block(const rk_conv2d_f32_params *p, const float *x, const float *w, const float *bias,
                           float *y, int64_t nch) {
    const int64_t np = p->h * p->w, nq = p->oh * p->ow, taps = p->kh * p->kw;
    const int64_t hp = dw_span(p->oh, p->sh, p->kh, p->dh), wp = dw_span(p->ow, p->sw, p->kw, p->dw);
    float tin[(DW_LANES_IN + DW_SLACK) * DL];
    float tout[DW_LANES_OUT * DL];   /* also the whole plane transposed, before the sums */
    float wl[DW_LANES_TAPS * DL];
    float bl[DL];
    dl_vec r[DL];
    dw_lanes_weights(w, bias, nch, taps, wl, bl);
    dl_vec bv = DL_LOAD(bl);
    /* dw_finish adds a channel's bias where it is not 0 (NaN is not 0) */
    dl_bias_mask has_bias = bias ? DL_BIAS_MASK(bv) : DL_NO_BIAS();
    if (hp * wp <= DW_LANES_IN && np <= DW_LANES_OUT && nq <= DW_LANES_OUT) {
        /* the whole plane: DL positions of the flat plane per transpose
         * (rows of a 7x7 plane are shorter than a vector), then spread into
         * the padded plane (which reads tout before the sums write it) */
        for (int64_t p0 = 0; p0 < np; p0 += DL) {
            int64_t n = np - p0 < DL ? np - p0 : DL;
            for (int c = 0; c < DL; c++) r[c] = c < nch ? DL_LOAD_N(n, x + c * np + p0) : DL_ZERO();
            DL_TR(r);
            for (int i = 0; i < n; i++) DL_STORE(tout + (p0 + i) * DL, r[i]);
        }
        dw_lanes_plane(p, tout, DL, DL, wl, bv, has_bias, tin, tout, y, nch);
        return;
    }
    int64_t nb = dw_lanes_band(p);
    for (int64_t oy0 = 0; oy0 < p->oh; oy0 += nb) {
        int64_t rows = p->oh - oy0 < nb ? p->oh - oy0 : nb, iy0 = oy0 * p->sh - p->pt;
        int64_t span = dw_span(rows, p->sh, p->kh, p->dh);
        for (int64_t ry = 0; ry < span; ry++) dw_lanes_row(p, x, np, nch, iy0 + ry, wp, tin + ry * wp * DL);
        memset(tin + span * wp * DL, 0, sizeof(float) * DW_SLACK * DL);
        dw_lanes_run(p, tin, wp, rows, tout, wl, bv, has_bias);
        for (int64_t oy = 0; oy < rows; oy++)
            for (int64_t c0 = 0; c0 < p->ow; c0 += DL)
                dw_lanes_back(tout + (oy * p->ow + c0) * DL, p->ow - c0 < DL ? p->ow - c0 : DL, nch, nq,
                              y + (oy0 + oy) * p->ow + c0);
    }
}

/* dw_lanes_block's whole-plane path for nch (1..DL) channels whose input
 * is in t, positions x channels (the channels ldt floats apart per
 * position, the first at t): each position's vector of channels is one
 * load, where dw_lanes_block turns DL planes. */
static void dw_lanes_from_t(const rk_conv2d_f32_params *p, const float *t, int64_t ldt, const float *w,
                            const float *bias, float *y, int64_t nch) {
    float tin[(DW_LANES_IN + DW_SLACK) * DL];
    float tout[DW_LANES_OUT * DL];
    float wl[DW_LANES_TAPS * DL];
    float bl[DL];
    dw_lanes_weights(w, bias, nch, p->kh * p->kw, wl, bl);
    dl_vec bv = DL_LOAD(bl);
    dw_lanes_plane(p, t, ldt, nch, wl, bv, bias ? DL_BIAS_MASK(bv) : DL_NO_BIAS(), tin, tout, y, nch);
}
#endif

static void depthwise3x3(const rk_conv2d_f32_params *p, const float *x, const float *w, float *y, float bias,
                         const float *res, int epilogue, const DwFlat *flat) {
#if defined(__AVX512F__)
    if (epilogue && rk_act_exp((int)p->act) && p->sh <= 2 && p->sw <= 2 && p->h > 0) {
        /* an activation with exp or erf in it over the whole plane after
         * the sums, bias and residual (in L1), four vectors at a time
         * (rk_act_run): per vector in the strips, out of line (dw_act_other),
         * the SiLU of EfficientNet-B0's depthwise layers cost as much as their
         * sums. The same operations on each element, so the same bits. */
        rk_conv2d_f32_params q = *p;
        q.act = RS_ACT_NONE;
        depthwise3x3(&q, x, w, y, bias, res, epilogue, flat);
        rk_act_run(y, p->oh * p->ow, (int)p->act, (float)p->act_a, (float)p->act_b);
        return;
    }
    if (flat) {
        dw_flat_avx512(flat, p, x, w, y, bias, res, epilogue);
        return;
    }
    if (p->sh <= 2 && p->sw <= 2 && p->h > 0) {
        dw_plane_avx512(p, x, w, y, bias, res, epilogue);
        return;
    }
#else
    (void)flat;
#endif
    int64_t h = p->h, wd = p->w, oh = p->oh, ow = p->ow, sh = p->sh, sw = p->sw, pl = p->pl;
    /* interior columns: ox*sw - pl >= 0 and ox*sw - pl + 2 < wd */
    int64_t lo = (pl + sw - 1) / sw, hi = wd - 3 + pl >= 0 ? (wd - 3 + pl) / sw + 1 : 0;
    if (hi > ow) hi = ow;
    if (lo > hi) lo = hi;
    for (int64_t oy = 0; oy < oh; oy++) {
        float *yrow = y + oy * ow;
        int64_t iy0 = oy * sh - p->pt;
        const float *r[3], *wr[3];
        int nr = 0;
        for (int k = 0; k < 3; k++)
            if (iy0 + k >= 0 && iy0 + k < h) {
                r[nr] = x + (iy0 + k) * wd;
                wr[nr++] = w + 3 * k;
            }
        if (nr == 0) {
            for (int64_t ox = 0; ox < ow; ox++) yrow[ox] = 0.0f;
        } else {
            int64_t n = hi - lo, ix = lo * sw - pl;
            const float *b = nr > 1 ? r[1] + ix : NULL, *c = nr > 2 ? r[2] + ix : NULL;
            if (n > 0) {
                if (sw == 1)
                    dw_interior(yrow + lo, n, 1, nr, r[0] + ix, wr[0], b, wr[1], c, wr[2]);
                else if (sw == 2)
                    dw_interior(yrow + lo, n, 2, nr, r[0] + ix, wr[0], b, wr[1], c, wr[2]);
                else
                    dw_interior(yrow + lo, n, sw, nr, r[0] + ix, wr[0], b, wr[1], c, wr[2]);
            }
            for (int64_t ox = 0; ox < ow; ox++) {
                if (ox == lo) ox = hi;
                if (ox >= ow) break;
                float acc = 0.0f;
                int64_t ix0 = ox * sw - pl;
                for (int k = 0; k < nr; k++) {
                    float s = 0.0f;
                    for (int t = 0; t < 3; t++)
                        if (ix0 + t >= 0 && ix0 + t < wd) s = DW_MADD(wr[k][t], r[k][ix0 + t], s);
                    acc = k ? acc + s : s;
                }
                yrow[ox] = acc;
            }
        }
        if (epilogue)
            dw_epilogue(yrow, ow, bias, res ? res + oy * ow : NULL, p->act, (float)p->act_a, (float)p->act_b);
    }
}

static void direct_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    int64_t plane = p->h * p->w, oplane = p->oh * p->ow;
    /* contiguous runs of planes (RK_RUNS per thread): taking every other
     * plane put both threads' writes in the cache lines where small planes
     * (7x7 = 196 bytes) meet, and 14x14 and 7x7 depthwise layers did not scale */
    int64_t cursor = 0, t = -1, t1 = 0;
#if CONV_SIMD
    if (C->lanes) {   /* items: blocks of DL channels of an image */
        int64_t nb = (p->oc + DL - 1) / DL;
        while (rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, p->n * nb, &cursor, &t, &t1)) {
            int64_t b = t / nb, o = t % nb * DL, nch = p->oc - o < DL ? p->oc - o : DL;
            dw_lanes_block(p, C->x + (b * p->c + o) * plane, C->w + o * p->kh * p->kw, C->bias ? C->bias + o : NULL,
                           C->y + (b * p->oc + o) * oplane, nch);
        }
        return;
    }
#endif
    int64_t total = p->n * p->oc;
    int dw3 = dw3_ok(C);
#if defined(__AVX512F__)
    if (p->sh > 2 || p->sw > 2) dw3 = 0;   /* the strips take strides 1 and 2; dw_rows the others, same sums */
#endif
    int rows = !dw3 && dw_rows_ok(C);
    DwFlat flat_plan, *flat = NULL;
#if defined(__AVX512F__)
    if (dw3 && dw_flat_plan(p, &flat_plan)) flat = &flat_plan;
#else
    (void)flat_plan;
#endif
    while (rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, total, &cursor, &t, &t1)) {
        int64_t b = t / p->oc, o = t % p->oc;
        const float *xg = C->x + (b * p->c + (o / C->ocg) * C->cg) * plane;
        const float *wo = C->w + o * C->cg * p->kh * p->kw;
        float *yo = C->y + (b * p->oc + o) * oplane;
        const float *res = C->res ? C->res + (b * p->oc + o) * oplane : NULL;
        int epilogue = C->bias || res || p->act != RS_ACT_NONE;
        if (dw3) {
            depthwise3x3(p, xg, wo, yo, C->bias ? C->bias[o] : 0.0f, res, epilogue, flat);
            continue;
        }
        if (rows) {
            dw_rows(p, xg, wo, yo, C->bias ? C->bias[o] : 0.0f, res, epilogue);
            continue;
        }
        for (int64_t oy = 0; oy < p->oh; oy++) {
            float *yrow = yo + oy * p->ow;
            for (int64_t ox = 0; ox < p->ow; ox++) yrow[ox] = 0.0f;
            for (int64_t ic = 0; ic < C->cg; ic++) {
                const float *xc = xg + ic * plane, *wc = wo + ic * p->kh * p->kw;
                for (int64_t ky = 0; ky < p->kh; ky++) {
                    int64_t iy = oy * p->sh - p->pt + ky * p->dh;
                    if (iy < 0 || iy >= p->h) continue;
                    const float *xrow = xc + iy * p->w;
                    for (int64_t kx = 0; kx < p->kw; kx++) {
                        float wv = wc[ky * p->kw + kx];
                        int64_t off = kx * p->dw - p->pl, lo, hi;
                        rk_out_range(p->ow, p->sw, off, p->w, &lo, &hi);
                        if (p->sw == 1) {
                            const float *xs = xrow + (lo + off);
                            float *ys = yrow + lo;
                            for (int64_t j = 0; j < hi - lo; j++) ys[j] += wv * xs[j];
                        } else {
                            for (int64_t ox = lo; ox < hi; ox++) yrow[ox] += wv * xrow[ox * p->sw + off];
                        }
                    }
                }
            }
            /* bias, residual, activation while the row is in cache */
            if (epilogue)
                epilogue_run(yrow, p->ow, C->bias ? C->bias[o] : 0.0f, res ? res + oy * p->ow : NULL, p->act,
                             (float)p->act_a, (float)p->act_b);
        }
    }
}

/* Below this many multiply-adds a layer runs on one thread. */
#define THREAD_MIN_MACS (1 << 18)

#if defined(__AVX512F__)
/* r[i] (row i, 16 floats) -> r[j] = column j. */
static inline void turn16(__m512 r[16]) {
    __m512 a[16], b[16];
    for (int k = 0; k < 8; k++) {
        a[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
        a[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    /* b[4k + q], 128-bit lane L: rows 4k .. 4k+3 of column 4L + q */
    for (int k = 0; k < 4; k++) {
        b[4 * k] = _mm512_shuffle_ps(a[4 * k], a[4 * k + 2], 0x44);
        b[4 * k + 1] = _mm512_shuffle_ps(a[4 * k], a[4 * k + 2], 0xEE);
        b[4 * k + 2] = _mm512_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0x44);
        b[4 * k + 3] = _mm512_shuffle_ps(a[4 * k + 1], a[4 * k + 3], 0xEE);
    }
    for (int q = 0; q < 4; q++) {
        __m512 c0 = _mm512_shuffle_f32x4(b[q], b[4 + q], 0x88), c1 = _mm512_shuffle_f32x4(b[q], b[4 + q], 0xDD);
        __m512 d0 = _mm512_shuffle_f32x4(b[8 + q], b[12 + q], 0x88), d1 = _mm512_shuffle_f32x4(b[8 + q], b[12 + q], 0xDD);
        r[q] = _mm512_shuffle_f32x4(c0, d0, 0x88);
        r[8 + q] = _mm512_shuffle_f32x4(c0, d0, 0xDD);
        r[4 + q] = _mm512_shuffle_f32x4(c1, d1, 0x88);
        r[12 + q] = _mm512_shuffle_f32x4(c1, d1, 0xDD);
    }
}
#endif

/* The transposed product (a_packed == 2: the weights pre-packed as the
 * GEMM's B, rk_sgemm_pack_b of W^T): y_g^T (cols x ocg) = col^T * W_g^T, into
 * scratch, then turned into y's rows, output channels [m0, m1) of slice ms,
 * with the epilogue on each row as it is written. Planes of a few columns
 * (7x7 = 49) fill the GEMM's 16-wide register tiles poorly along the plane
 * and exactly along 16k output channels. Each element is the same dot
 * product in the same order, so the bits are those of the upright GEMM and
 * its fused epilogue (epilogue_run: y + bias + res, or y + bias where the
 * bias is not 0, then the activation). g holds the upright arguments. */
/* gemm_transposed's epilogue of output channels [m0, m1), whose rows are
 * written: epilogue_run's arithmetic, the bias and residual per row, then
 * the activation over the rows as one run where they are contiguous (a 1x1
 * plane's rows are one float each: an SE block's sigmoid over 1152 of them
 * one call per channel took 8x the product's time). */
static void transposed_epilogue(const Conv *C, const rk_sgemm_args *g, int64_t m0, int64_t m1, int64_t cols) {
    const rk_conv2d_f32_params *p = C->p;
    float lo = (float)p->act_a, hi = (float)p->act_b;
    int one_run = g->ldc == cols;
    for (int64_t i = m0; i < m1; i++)
        epilogue_run(g->c + i * g->ldc, cols, g->bias ? g->bias[i] : 0.0f, g->res ? g->res + i * g->ldres : NULL,
                     one_run ? RS_ACT_NONE : p->act, lo, hi);
    if (one_run && m1 > m0) epilogue_run(g->c + m0 * g->ldc, (m1 - m0) * cols, 0.0f, NULL, p->act, lo, hi);
}

static void gemm_transposed(const Conv *C, const rk_sgemm_args *g, int64_t ms, void *gscratch) {
    int64_t cols = g->n, ocg = g->m;
    float *t = rk_align64f(gscratch);
    void *tscratch = t + align16f(cols * ocg);
    rk_sgemm_args h;
    memset(&h, 0, sizeof h);
    h.m = cols;
    h.n = ocg;
    h.k = g->k;
    h.alpha = 1.0f;
    h.a = g->b;
    h.lda = g->ldb;
    h.trans_a = 1;
    h.packed_b = g->packed_a;
    h.c = t;
    h.ldc = ocg;
    int64_t m0 = ms * C->mstep, m1 = (ms + 1) * C->mstep < ocg ? (ms + 1) * C->mstep : ocg;
    if (C->msplit == 1) rk_sgemm_ex(&h, tscratch, 1, NULL, NULL);
    else rk_sgemm_cols(&h, m0, m1, tscratch);
    int64_t m = m0;
#if defined(__AVX512F__)
    const rk_conv2d_f32_params *p = C->p;
    float lo = (float)p->act_a, hi = (float)p->act_b;
    /* 16 x 16 blocks turned in registers, the epilogue on each turned row
     * (dw_finish: epilogue_run's arithmetic) before its one store */
    int vec_ep = p->act == RS_ACT_NONE || p->act == RS_ACT_RELU || p->act == RS_ACT_CLIP;
    for (; m + 16 <= m1; m += 16) {
        for (int64_t j0 = 0; j0 < cols; j0 += 16) {
            int64_t nj = cols - j0 < 16 ? cols - j0 : 16;
            __m512 r[16];
            for (int i = 0; i < 16; i++) r[i] = i < nj ? _mm512_loadu_ps(t + (j0 + i) * ocg + m) : _mm512_setzero_ps();
            turn16(r);
            __mmask16 out = rk_v16_range(0, nj);
            for (int i = 0; i < 16; i++) {
                __m512 v = r[i];
                if (vec_ep)
                    v = dw_finish(v, g->bias ? g->bias[m + i] : 0.0f, g->res ? g->res + (m + i) * g->ldres + j0 : NULL,
                                  out, p->act, lo, hi);
                _mm512_mask_storeu_ps(g->c + (m + i) * g->ldc + j0, out, v);
            }
        }
        if (!vec_ep) transposed_epilogue(C, g, m, m + 16, cols);
    }
#elif CONV_SIMD
    /* 8 x 8 blocks turned in registers (column reads ocg floats apart were
     * 6% of ResNeXt-50), then each row's epilogue while it is in L1 */
    for (; m + 8 <= m1; m += 8) {
        for (int64_t j0 = 0; j0 < cols; j0 += 8) {
            int64_t nj = cols - j0 < 8 ? cols - j0 : 8;
            __m256 r[8];
            for (int i = 0; i < 8; i++) r[i] = i < nj ? _mm256_loadu_ps(t + (j0 + i) * ocg + m) : _mm256_setzero_ps();
            dw_tr8(r);
            for (int i = 0; i < 8; i++) DL_STORE_N(nj, g->c + (m + i) * g->ldc + j0, r[i]);
        }
        transposed_epilogue(C, g, m, m + 8, cols);
    }
#endif
    int64_t rest = m;
    for (; m < m1; m++) {
        float *yrow = g->c + m * g->ldc;
        const float *tm = t + m;
        for (int64_t j = 0; j < cols; j++) yrow[j] = tm[j * ocg];
    }
    transposed_epilogue(C, g, rest, m1, cols);
}


/* ---- method 2: convolutions over a few input channels (stems) ----
 * A 3-channel image's first layer (3x3 or 7x7, stride 2) as im2col + GEMM
 * copies K = 27 or 147 rows of the whole output plane for a GEMM whose K
 * is short. With AVX-512 it runs direct instead: for a strip of 16 output
 * columns and 16 output channels, 16 sums in registers, each tap's 16
 * inputs gathered once (two loads and an even-lane permute at stride 2)
 * and multiplied into all 16 channels. The taps go in the GEMM's k order
 * (input channel, kernel row, kernel column) with one fma each, padding
 * included as 0 (as im2col writes it), and the epilogue is the GEMM's: the
 * bits are those of method 1 with unpacked weights, which is what other
 * builds run (rlxc leaves these weights unpacked). Needs output channels a
 * multiple of 16, stride 1 or 2 along rows, no dilation, no groups, at most
 * 4 input channels and 7x7 taps. */
#if CONV_SIMD
/* The stems' tasks are (image, output row, block of 16 channels). Where the
 * weights of every block fit in a thread's scratch beside its split rows
 * (C->stem_rows), a row's blocks are consecutive tasks, so each input row
 * is split once for all of them: block by block, SqueezeNet's 3 -> 64 stem
 * split every row 4 times (9% of its time). Else a block's rows are
 * consecutive, its weights gathered once per block. */
static void stem_item(const Conv *C, int64_t t, int64_t *b, int64_t *oy, int64_t *o0) {
    int64_t ob = C->p->oc / 16, oh = C->p->oh;
    if (C->stem_rows) {
        *o0 = t % ob * 16, *oy = t / ob % oh, *b = t / ob / oh;
    } else {
        *oy = t % oh, *o0 = t / oh % ob * 16, *b = t / oh / ob;
    }
}

/* Bytes of a thread's scratch for the stem: its split rows (8 slots of c
 * rows, 2 * stride floats each, aligned), then, where they fit
 * (C->stem_rows), every block's weights. */
static size_t stem_split_need(int64_t c, int64_t stride) { return (size_t)(8 * c * 2 * stride) * sizeof(float) + 64; }

static size_t stem_split_bytes(const Conv *C) { return C->s2.ok ? stem_split_need(C->p->c, C->s2.stride) : 0; }

static int stem_rows_fit(const Conv *C) {
    return C->ctx && C->ctx->scratch &&
           stem_split_bytes(C) + (size_t)(C->p->oc * C->kdim) * sizeof(float) + 64 <= C->ctx->scratch_per_thread;
}

/* Block o0's weights (16 channels), [tap][16] at dst. */
static void stem_gather(const Conv *C, int64_t o0, float *dst) {
    for (int64_t k = 0; k < C->kdim; k++)
        for (int o = 0; o < 16; o++) dst[k * 16 + o] = C->w[(o0 + o) * C->kdim + k];
}

/* Every block's weights in the thread's scratch after its split rows
 * (C->stem_rows; else NULL). */
static float *stem_weights(const Conv *C, int tid) {
    if (!C->stem_rows) return NULL;
    float *all = rk_align64f(C->ctx->scratch + (size_t)tid * C->ctx->scratch_per_thread + stem_split_bytes(C));
    for (int64_t o0 = 0; o0 < C->p->oc; o0 += 16) stem_gather(C, o0, all + o0 * C->kdim);
    return all;
}

/* Block o0's weights, [tap][16]: in the thread's copy of all blocks, else
 * gathered into wt (have: the block there). */
static const float *stem_block_weights(const Conv *C, const float *all, int64_t o0, float *wt, int64_t *have) {
    if (all) return all + o0 * C->kdim;
    if (o0 != *have) stem_gather(C, o0, wt);
    *have = o0;
    return wt;
}
#endif

#if defined(__AVX512F__)
static int stem_ok(const rk_conv2d_f32_params *p) {
    return p->group == 1 && p->oc % 16 == 0 && p->dh == 1 && p->dw == 1 && p->sw >= 1 && p->sw <= 2 &&
           p->kh <= 7 && p->kw <= 7 && p->c <= 4 && p->pt >= 0 && p->pl >= 0;
}

/* Split rows (stride 2): 8 of the block's 16 channels (half hf) against
 * S <= 3 strips of 16 output columns from ox0, 8 * S sums in registers: per
 * tap S loads and 8 broadcasts feed 8 * S fmas, where 16 channels against
 * one strip need 17 loads for 16 (the stem ran at ~75% of the FMA peak).
 * The same fmas in the same order per sum, so the same bits. */
#define STEM_S_MAX 3
DW_INLINE void stem_split_strips(int S, const Conv *C, const float *wt, int hf, const float *split, int64_t srow,
                                 int64_t b, int64_t o0, int64_t oy, int64_t ox0) {
    const rk_conv2d_f32_params *p = C->p;
    const int64_t c = p->c, h = p->h, kh = p->kh, kw = p->kw, oc = p->oc, oh = p->oh, ow = p->ow;
    const int64_t sh = p->sh, pt = p->pt, act = p->act;
    const float lo = (float)p->act_a, hi = (float)p->act_b;
    const S2 *l = &C->s2;
    __m512 a0[8], a1[8], a2[8];
    for (int o = 0; o < 8; o++) a0[o] = a1[o] = a2[o] = _mm512_setzero_ps();
    const float *wk = wt + 8 * hf;
    for (int64_t ic = 0; ic < c; ic++)
        for (int64_t ky = 0; ky < kh; ky++) {
            int64_t iy = oy * sh - pt + ky;
            if (iy < 0 || iy >= h) {   /* a padding row: taps of 0, fma'd as the GEMM does */
                const __m512 z = _mm512_setzero_ps();
                for (int64_t kx = 0; kx < kw; kx++, wk += 16)
                    for (int o = 0; o < 8; o++) {
                        __m512 wv = _mm512_set1_ps(wk[o]);
                        a0[o] = _mm512_fmadd_ps(wv, z, a0[o]);
                        if (S > 1) a1[o] = _mm512_fmadd_ps(wv, z, a1[o]);
                        if (S > 2) a2[o] = _mm512_fmadd_ps(wv, z, a2[o]);
                    }
                continue;
            }
            const float *sr = split + (iy % 8 * c + ic) * srow + ox0;
            for (int64_t kx = 0; kx < kw; kx++, wk += 16) {
                const float *q = sr + l->src[kx];
                __m512 t0 = _mm512_loadu_ps(q), t1 = S > 1 ? _mm512_loadu_ps(q + 16) : t0;
                __m512 t2 = S > 2 ? _mm512_loadu_ps(q + 32) : t0;
                for (int o = 0; o < 8; o++) {
                    __m512 wv = _mm512_set1_ps(wk[o]);
                    a0[o] = _mm512_fmadd_ps(wv, t0, a0[o]);
                    if (S > 1) a1[o] = _mm512_fmadd_ps(wv, t1, a1[o]);
                    if (S > 2) a2[o] = _mm512_fmadd_ps(wv, t2, a2[o]);
                }
            }
        }
    if (!C->res && act == RS_ACT_RELU) {
        /* the common stem: bias and relu straight from the sums (adding a
         * bias of 0 is then the same bits: relu makes -0 and +0 alike) */
        for (int st = 0; st < S; st++) {
            int64_t x0 = ox0 + 16 * st, n = ow - x0 < 16 ? ow - x0 : 16;
            __mmask16 out = rk_v16_range(0, n);
            float *yo = C->y + ((b * oc + o0 + 8 * hf) * oh + oy) * ow + x0;
            const float *bo = C->bias ? C->bias + o0 + 8 * hf : NULL;
            for (int o = 0; o < 8; o++) {
                __m512 v = st == 0 ? a0[o] : st == 1 ? a1[o] : a2[o];
                if (bo) v = _mm512_add_ps(v, _mm512_set1_ps(bo[o]));
                _mm512_mask_storeu_ps(yo + o * oh * ow, out, dw_act(v, RS_ACT_RELU, 0.0f, 0.0f));
            }
        }
        return;
    }
    /* out of registers in one simple loop (see stem_task) */
    float sums[STEM_S_MAX * 8 * 16];
    for (int o = 0; o < 8; o++) {
        _mm512_storeu_ps(sums + 16 * o, a0[o]);
        if (S > 1) _mm512_storeu_ps(sums + 16 * (8 + o), a1[o]);
        if (S > 2) _mm512_storeu_ps(sums + 16 * (16 + o), a2[o]);
    }
    for (int st = 0; st < S; st++) {
        int64_t x0 = ox0 + 16 * st, n = ow - x0 < 16 ? ow - x0 : 16;   /* the caller's strips start inside ow */
        __mmask16 out = rk_v16_range(0, n);
        for (int o = 0; o < 8; o++) {
            int64_t ch = o0 + 8 * hf + o, at = ((b * oc + ch) * oh + oy) * ow + x0;
            float bo = C->bias ? C->bias[ch] : 0.0f;
            __m512 v = _mm512_loadu_ps(sums + 16 * (8 * st + o));
            _mm512_mask_storeu_ps(C->y + at, out, dw_finish(v, bo, C->res ? C->res + at : NULL, out, act, lo, hi));
        }
    }
}

static void stem_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    /* the geometry in locals: the stores through y could alias *p */
    const int64_t c = p->c, h = p->h, w = p->w, oc = p->oc, oh = p->oh, ow = p->ow, kh = p->kh, kw = p->kw;
    const int64_t sh = p->sh, sw = p->sw, pt = p->pt, pl = p->pl, act = p->act, kdim = C->kdim;
    const float lo = (float)p->act_a, hi = (float)p->act_b;
    const float *x = C->x, *bias = C->bias, *res = C->res;
    float *y = C->y;
    int64_t ob = oc / 16, total = p->n * ob * oh;   /* rows: (image, 16 channels, output row) */
    int64_t cursor = 0;
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    float wt[4 * 7 * 7 * 16];   /* the block's weights, [tap][16 channels] */
    int64_t have = -1;
    /* stride 2 (C->s2.ok): the input rows split into even and odd columns
     * between zeros (s2_layout) in scratch, in 8 slots by iy % 8 (a task's
     * rows are kh <= 7 consecutive ones); a tap is then one plain load, no
     * permute and no mask. Slot i of channel ic: split + (i * c + ic) * srow. */
    const S2 *l = &C->s2;
    float *split = NULL;
    int64_t srow = 2 * l->stride, slot_key[8];
    if (l->ok) {
        split = rk_align64f(C->ctx->scratch + (size_t)tid * C->ctx->scratch_per_thread);
        memset(split, 0, sizeof(float) * (size_t)(8 * c * srow));
        for (int i = 0; i < 8; i++) slot_key[i] = -1;
    }
    const float *all = stem_weights(C, tid);
    for (int64_t t = -1, t1 = 0; rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, total, &cursor, &t, &t1);) {
        int64_t oy, o0, b;
        stem_item(C, t, &b, &oy, &o0);
        const float *xb = x + b * c * h * w;
        const float *wb = stem_block_weights(C, all, o0, wt, &have);
        for (int64_t ky = 0; split && ky < kh; ky++) {
            int64_t iy = oy * sh - pt + ky;
            if (iy < 0 || iy >= h || slot_key[iy % 8] == b * h + iy) continue;
            for (int64_t ic = 0; ic < c; ic++)
                s2_split(xb + (ic * h + iy) * w, w, l, split + (iy % 8 * c + ic) * srow);
            slot_key[iy % 8] = b * h + iy;
        }
        if (split) {
            /* strips in groups of up to 3 (7 = 3 + 2 + 2: no lone strip) */
            int64_t strips = (ow + 15) / 16;
            for (int hf = 0; hf < 2; hf++)
                for (int64_t s0 = 0; s0 < strips;) {
                    int64_t left = strips - s0;
                    int S = left >= 5 || left == 3 ? 3 : left >= 2 ? 2 : 1;
                    if (S == 3) stem_split_strips(3, C, wb, hf, split, srow, b, o0, oy, 16 * s0);
                    else if (S == 2) stem_split_strips(2, C, wb, hf, split, srow, b, o0, oy, 16 * s0);
                    else stem_split_strips(1, C, wb, hf, split, srow, b, o0, oy, 16 * s0);
                    s0 += S;
                }
            continue;
        }
        for (int64_t ox0 = 0; ox0 < ow; ox0 += 16) {
            __m512 acc[16];
            for (int o = 0; o < 16; o++) acc[o] = _mm512_setzero_ps();
            const float *wk = wb;
            /* each tap's lanes inside the input row depend on the strip and
             * the kernel column only: masks once per strip, then no branch
             * per tap (lanes outside load as 0, the padding im2col writes) */
            int64_t base0 = ox0 * sw - pl;
            __mmask16 ma[7], md[7];
            int full = split || (base0 >= 0 && base0 + kw - 1 + 16 * sw <= w);
            for (int64_t kx = 0; kx < kw && !full; kx++) {
                int64_t base = base0 + kx;   /* input column of lane 0 */
                ma[kx] = rk_v16_range(-base, w - base);
                md[kx] = rk_v16_range(-base - 16, w - base - 16);
            }
            for (int64_t ic = 0; ic < c; ic++)
                for (int64_t ky = 0; ky < kh; ky++) {
                    int64_t iy = oy * sh - pt + ky;
                    if (iy < 0 || iy >= h) {   /* a padding row: taps of 0, fma'd as the GEMM does */
                        for (int64_t kx = 0; kx < kw; kx++, wk += 16)
                            for (int o = 0; o < 16; o++)
                                acc[o] = _mm512_fmadd_ps(_mm512_set1_ps(wk[o]), _mm512_setzero_ps(), acc[o]);
                        continue;
                    }
                    const float *row = xb + (ic * h + iy) * w + base0;
#define STEM_TAPS(TAP)                                                                                      \
    for (int64_t kx = 0; kx < kw; kx++, wk += 16) {                                                        \
        __m512 tap = TAP;                                                                                   \
        for (int o = 0; o < 16; o++) acc[o] = _mm512_fmadd_ps(_mm512_set1_ps(wk[o]), tap, acc[o]);         \
    }
                    if (split) {
                        const float *sr = split + (iy % 8 * c + ic) * srow + ox0;
                        STEM_TAPS(_mm512_loadu_ps(sr + l->src[kx]))
                    } else if (sw == 2 && full)
                        STEM_TAPS(_mm512_permutex2var_ps(_mm512_loadu_ps(row + kx), even, _mm512_loadu_ps(row + kx + 16)))
                    else if (sw == 2)
                        STEM_TAPS(_mm512_permutex2var_ps(_mm512_maskz_loadu_ps(ma[kx], row + kx), even,
                                                         _mm512_maskz_loadu_ps(md[kx], row + kx + 16)))
                    else if (full)
                        STEM_TAPS(_mm512_loadu_ps(row + kx))
                    else
                        STEM_TAPS(_mm512_maskz_loadu_ps(ma[kx], row + kx))
#undef STEM_TAPS
                }
            /* out of registers in one simple loop, so that the sums stay in
             * registers above (an epilogue loop indexing acc kept them on
             * the stack: 2x slower) */
            float sums[16 * 16];
            for (int o = 0; o < 16; o++) _mm512_storeu_ps(sums + 16 * o, acc[o]);
            int64_t n = ow - ox0 < 16 ? ow - ox0 : 16;
            __mmask16 out = rk_v16_range(0, n);
            for (int o = 0; o < 16; o++) {
                int64_t at = ((b * oc + o0 + o) * oh + oy) * ow + ox0;
                float bo = bias ? bias[o0 + o] : 0.0f;
                __m512 v = _mm512_loadu_ps(sums + 16 * o);
                _mm512_mask_storeu_ps(y + at, out, dw_finish(v, bo, res ? res + at : NULL, out, act, lo, hi));
            }
        }
    }
}
#elif CONV_SIMD
/* AVX2: the stride-2 stems, over split rows as above (the others stay with
 * im2col + GEMM). For a task's output row (image, 16 channels, row), 4 of
 * the channels against S <= 2 strips of 8 output columns: 4 * S sums in
 * registers, per tap S loads and 4 broadcasts for 4 * S fmas (three strips'
 * 12 sums, 3 taps and a broadcast left gcc one register short: a sum
 * spilled to the stack made it slower than im2col + GEMM). The taps in
 * the GEMM's k order with one fma each, the padding rows' zeros included;
 * then each channel's row gets the GEMM's epilogue (epilogue_run; in the
 * strips' registers, the activation's code cost the sums their registers):
 * method 1's bits, as test_conv_turned checks. */
static int stem_ok(const rk_conv2d_f32_params *p) {
    return p->group == 1 && p->oc % 16 == 0 && p->dh == 1 && p->dw == 1 && p->sw == 2 && p->kh <= 7 && p->kw <= 7 &&
           p->c <= 4 && p->pt >= 0 && p->pl >= 0;
}

DW_INLINE void stem_strips8(int S, const Conv *C, const float *wt, int q, const float *split, int64_t srow,
                            float *const *yrow, int64_t oy, int64_t ox0) {
    const rk_conv2d_f32_params *p = C->p;
    const int64_t c = p->c, h = p->h, kh = p->kh, kw = p->kw, ow = p->ow, sh = p->sh, pt = p->pt;
    const S2 *l = &C->s2;
    __m256 a0[4], a1[4];
    for (int o = 0; o < 4; o++) a0[o] = a1[o] = _mm256_setzero_ps();
    const float *wk = wt + 4 * q;
    for (int64_t ic = 0; ic < c; ic++)
        for (int64_t ky = 0; ky < kh; ky++) {
            int64_t iy = oy * sh - pt + ky;
            if (iy < 0 || iy >= h) {   /* a padding row: taps of 0, fma'd as the GEMM does */
                const __m256 z = _mm256_setzero_ps();
                for (int64_t kx = 0; kx < kw; kx++, wk += 16)
                    for (int o = 0; o < 4; o++) {
                        __m256 wv = _mm256_broadcast_ss(wk + o);
                        a0[o] = _mm256_fmadd_ps(wv, z, a0[o]);
                        if (S > 1) a1[o] = _mm256_fmadd_ps(wv, z, a1[o]);
                    }
                continue;
            }
            const float *sr = split + (iy % 8 * c + ic) * srow + ox0;
            for (int64_t kx = 0; kx < kw; kx++, wk += 16) {
                const float *t = sr + l->src[kx];
                __m256 t0 = _mm256_loadu_ps(t), t1 = S > 1 ? _mm256_loadu_ps(t + 8) : t0;
                for (int o = 0; o < 4; o++) {
                    __m256 wv = _mm256_broadcast_ss(wk + o);
                    a0[o] = _mm256_fmadd_ps(wv, t0, a0[o]);
                    if (S > 1) a1[o] = _mm256_fmadd_ps(wv, t1, a1[o]);
                }
            }
        }
    /* whole strips plain: masked stores cost far more on AMD cores */
    for (int st = 0; st < S; st++) {
        int64_t x0 = ox0 + 8 * st, n = ow - x0 < 8 ? ow - x0 : 8;   /* the caller's strips start inside ow */
        for (int o = 0; o < 4; o++) {
            __m256 v = st == 0 ? a0[o] : a1[o];
            if (n == 8) _mm256_storeu_ps(yrow[4 * q + o] + x0, v);
            else _mm256_maskstore_ps(yrow[4 * q + o] + x0, rk_v8_lanes(n), v);
        }
    }
}

static void stem_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    const int64_t c = p->c, h = p->h, w = p->w, oc = p->oc, oh = p->oh, ow = p->ow, kh = p->kh, sh = p->sh;
    const int64_t pt = p->pt, kdim = C->kdim;
    const float lo = (float)p->act_a, hi = (float)p->act_b;
    const S2 *l = &C->s2;
    int64_t ob = oc / 16, total = p->n * ob * oh, srow = 2 * l->stride, slot_key[8], have = -1;
    float wt[4 * 7 * 7 * 16];   /* the block's weights, [tap][16 channels] */
    /* the input rows split into even and odd columns between zeros, in 8
     * slots by iy % 8 (a task's rows are kh <= 7 consecutive ones) */
    float *split = rk_align64f(C->ctx->scratch + (size_t)tid * C->ctx->scratch_per_thread);
    memset(split, 0, sizeof(float) * (size_t)(8 * c * srow));
    for (int i = 0; i < 8; i++) slot_key[i] = -1;
    const float *all = stem_weights(C, tid);
    for (int64_t cursor = 0, t = -1, t1 = 0;
         rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, total, &cursor, &t, &t1);) {
        int64_t oy, o0, b;
        stem_item(C, t, &b, &oy, &o0);
        const float *xb = C->x + b * c * h * w;
        const float *wb = stem_block_weights(C, all, o0, wt, &have);
        for (int64_t ky = 0; ky < kh; ky++) {
            int64_t iy = oy * sh - pt + ky;
            if (iy < 0 || iy >= h || slot_key[iy % 8] == b * h + iy) continue;
            for (int64_t ic = 0; ic < c; ic++) s2_split(xb + (ic * h + iy) * w, w, l, split + (iy % 8 * c + ic) * srow);
            slot_key[iy % 8] = b * h + iy;
        }
        float *yrow[16];
        for (int o = 0; o < 16; o++) yrow[o] = C->y + ((b * oc + o0 + o) * oh + oy) * ow;
        int64_t strips = (ow + 7) / 8;
        for (int q = 0; q < 4; q++)
            for (int64_t s0 = 0; s0 < strips;) {
                if (strips - s0 >= 2) stem_strips8(2, C, wb, q, split, srow, yrow, oy, 8 * s0);
                else stem_strips8(1, C, wb, q, split, srow, yrow, oy, 8 * s0);
                s0 += strips - s0 >= 2 ? 2 : 1;
            }
        for (int o = 0; o < 16; o++) {
            int64_t ch = o0 + o, at = ((b * oc + ch) * oh + oy) * ow;
            epilogue_run(yrow[o], ow, C->bias ? C->bias[ch] : 0.0f, C->res ? C->res + at : NULL, p->act, lo, hi);
        }
    }
}
#endif

/* ---- method 3: grouped convolutions of a few channels per group ----
 * ResNeXt's and RegNet's 3x3 convolutions have 4 to 32 output channels per
 * group: as im2col + GEMM each group is a product of fewer rows than the
 * register tile, after an im2col that copies every input 9 times (RegNet's
 * im2col was a fifth of its run). With AVX-512 and AVX2 they run direct (rlxc
 * leaves their weights unpacked; rlx_rt.h, rk_conv2d_grouped_ok): for each
 * (image, group, band of output rows) the band's input is copied once into
 * planes laid out so that every tap of every output column is a contiguous
 * run (rk_conv2d_grouped_geom: sw phases, each output row s floats apart),
 * and the sums in registers (AVX-512: 16 vectors, 4 channels x 64 columns,
 * 8 x 32 or 16 x 16; AVX2: 12, 4 channels x 24 columns) take each tap's
 * inputs with one load per vector of columns and one broadcast weight per
 * channel. The taps go in the GEMM's k order with one fma each and the
 * padding's zeros included, K in the GEMM's blocks (two where K > 256:
 * ResNeXt-50's last stage, 32 channels per group, K = 288, ran as 32 products
 * of 49 x 32 x 288 after an im2col, 2.6x ONNX Runtime's time); the epilogue is
 * the GEMM's: the bits of method 1 (tests/unit/test_conv_grouped.c compares
 * them). Columns past ow in a row (s - ow of them) are computed and dropped. */
/* rk_conv2d_grouped_ok's K <= 512 is at most two of the GEMM's K blocks */
typedef char rk_gc_two_k_blocks[RK_SGEMM_KC == 256 ? 1 : -1];

#if CONV_SIMD
/* d[0, n) = 0 as copy_run copies (a loop of a few stores turns into a
 * memset call) */
static inline void zero_run(float *d, int64_t n) {
    if (n >= 8) {
        int64_t i = 0;
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_setzero_ps());
        if (i < n) _mm256_storeu_ps(d + n - 8, _mm256_setzero_ps());
    } else if (n >= 4) {
        _mm_storeu_ps(d, _mm_setzero_ps());
        _mm_storeu_ps(d + n - 4, _mm_setzero_ps());
    } else {
        if (n > 0) d[0] = 0.0f;
        if (n > 1) d[1] = 0.0f;
        if (n > 2) d[2] = 0.0f;
    }
}

static int grouped_ok(const rk_conv2d_f32_params *p) {
    return rk_conv2d_grouped_ok(p->group, p->c / p->group, p->oc / p->group, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw,
                                p->pt, p->pl);
}

#if defined(__AVX512F__)
/* The sums of NO channels (weights wt: K x wstride, these channels' first
 * column at wt) over taps [k0, k1) by NV vectors of 16 columns from j0, tap k
 * reading the planes at off[k] + j, into T (rows tstride apart); with add,
 * plus what T holds (an earlier K block's sums, as the GEMM adds them). */
DW_INLINE void gc_tile(int NO, int NV, const float *planes, const int64_t *off, const float *wt, int64_t wstride,
                       int64_t k0, int64_t k1, int add, int64_t j0, float *T, int64_t tstride) {
    __m512 acc[16];
    for (int i = 0; i < NO * NV; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; k++) {
        const float *src = planes + off[k] + j0, *wk = wt + k * wstride;
        __m512 xv[4];
        for (int v = 0; v < NV; v++) xv[v] = _mm512_loadu_ps(src + 16 * v);
        for (int o = 0; o < NO; o++) {
            __m512 wv = _mm512_set1_ps(wk[o]);
            for (int v = 0; v < NV; v++) acc[o * NV + v] = _mm512_fmadd_ps(wv, xv[v], acc[o * NV + v]);
        }
    }
    for (int o = 0; o < NO; o++)
        for (int v = 0; v < NV; v++) {
            float *t = T + o * tstride + j0 + 16 * v;
            _mm512_storeu_ps(t, add ? _mm512_add_ps(acc[o * NV + v], _mm512_loadu_ps(t)) : acc[o * NV + v]);
        }
}

/* 16 or 32 channels a group: the sums of PW (7 or 14) output positions of
 * a row, padded columns j0 .. j0 + PW - 1 of the planes, by NC vectors of
 * 16 channels (the weights' first NC * 16 columns at wt), over taps
 * [k0, k1): each tap loads NC vectors of weights and broadcasts one input
 * per position. Lanes over channels, not columns, spend none on a row's
 * padding columns: ResNeXt-50's 7x7 planes (s = 9) fill 49 of gc_tile's 64
 * lanes, its 14x14 ones 196 of 224 (on a Zen 4, its last two stages'
 * grouped layers took 1.7-2x ONNX Runtime's time). Each (position,
 * channel) sees gc_tile's fmas in gc_tile's order: the same bits. Then
 * 16 x 16 turns in registers, and each channel's PW sums stored (added,
 * with add) to T's row at columns j0 ... */
DW_INLINE void gc_ctile(int NC, int PW, const float *planes, const int64_t *off, const float *wt, int64_t k0,
                        int64_t k1, int add, int64_t j0, int nch, float *T, int64_t tstride) {
    __m512 acc[2 * 14];
    for (int i = 0; i < NC * PW; i++) acc[i] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; k++) {
        const float *src = planes + off[k] + j0, *wk = wt + k * 16 * NC;
        __m512 w0 = _mm512_loadu_ps(wk), w1 = NC > 1 ? _mm512_loadu_ps(wk + 16) : w0;
        for (int i = 0; i < PW; i++) {
            __m512 xv = _mm512_set1_ps(src[i]);
            acc[i * NC] = _mm512_fmadd_ps(w0, xv, acc[i * NC]);
            if (NC > 1) acc[i * NC + 1] = _mm512_fmadd_ps(w1, xv, acc[i * NC + 1]);
        }
    }
    const __mmask16 m = (__mmask16)((1u << PW) - 1);
    for (int c = 0; c < NC && c * 16 < nch; c++) {
        __m512 r[16];
        for (int i = 0; i < 16; i++) r[i] = i < PW ? acc[i * NC + c] : _mm512_setzero_ps();
        turn16(r);   /* r[o]: channel c * 16 + o, position i in lane i */
        for (int o = 0; o < 16 && c * 16 + o < nch; o++) {
            float *t = T + (int64_t)(c * 16 + o) * tstride + j0;
            __m512 v = add ? _mm512_add_ps(r[o], _mm512_maskz_loadu_ps(m, t)) : r[o];
            _mm512_mask_storeu_ps(t, m, v);
        }
    }
}

/* ... for the band's rows, each row in tiles of 14 positions and a last one
 * of 7 (ow a multiple of 7: gc_channel_tiles); NO is 16 or 32. */
static int gc_channel_tiles(int NO, int64_t ow) { return NO >= 16 && ow % 7 == 0; }

static void gc_ctiles(int NO, int64_t rows, int64_t ow, int64_t s, const float *planes, const int64_t *off,
                      const float *wt, int64_t k0, int64_t k1, int add, int nch, float *T, int64_t tstride) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t x0 = 0; x0 < ow; x0 += 14) {
            int64_t j0 = r * s + x0;
            if (ow - x0 >= 14) {
                if (NO == 16) gc_ctile(1, 14, planes, off, wt, k0, k1, add, j0, nch, T, tstride);
                else gc_ctile(2, 14, planes, off, wt, k0, k1, add, j0, nch, T, tstride);
            } else {
                if (NO == 16) gc_ctile(1, 7, planes, off, wt, k0, k1, add, j0, nch, T, tstride);
                else gc_ctile(2, 7, planes, off, wt, k0, k1, add, j0, nch, T, tstride);
            }
        }
}
#else
/* AVX2 (16 registers): the sums of 4 channels (o0 .. o0+3 of the NO in
 * wt's rows) over taps [k0, k1) by NV (1 or 3) vectors of 8 columns from j0:
 * 12 chains of fmas with three loads and four broadcasts per tap; the same
 * order as above, and the same add. */
DW_INLINE void gc_tile8(int NV, const float *planes, const int64_t *off, const float *wt, int NO, int o0,
                        int64_t k0, int64_t k1, int add, int64_t j0, float *T, int64_t tstride) {
    __m256 acc[12];
    for (int i = 0; i < 4 * NV; i++) acc[i] = _mm256_setzero_ps();
    for (int64_t k = k0; k < k1; k++) {
        const float *src = planes + off[k] + j0, *wk = wt + k * NO + o0;
        __m256 xv[3];
        for (int v = 0; v < NV; v++) xv[v] = _mm256_loadu_ps(src + 8 * v);
        for (int o = 0; o < 4; o++) {
            __m256 wv = _mm256_broadcast_ss(wk + o);
            for (int v = 0; v < NV; v++) acc[o * NV + v] = _mm256_fmadd_ps(wv, xv[v], acc[o * NV + v]);
        }
    }
    for (int o = 0; o < 4; o++)
        for (int v = 0; v < NV; v++) {
            float *t = T + (o0 + o) * tstride + j0 + 8 * v;
            _mm256_storeu_ps(t, add ? _mm256_add_ps(acc[o * NV + v], _mm256_loadu_ps(t)) : acc[o * NV + v]);
        }
}
#endif

/* A thread's share of the scratch, as rk_conv2d_grouped_scratch counts it:
 * the planes, the weights of one group (K x 16), the sums of 16 channels
 * over a band, and the taps' offsets into the planes. */
typedef struct {
    float *planes, *wt, *T;
    int64_t *off;
} GcScratch;

static GcScratch gc_scratch(const Conv *C, uint8_t *scr) {
    GcScratch S;
    S.planes = rk_align64f(scr);
    S.wt = S.planes + C->gc.planes * C->gc.plane;
    S.T = S.wt + C->kdim * RK_GC_MAX_OCG;
    S.off = (int64_t *)(void *)(S.T + RK_GC_MAX_OCG * C->gc.cols);
    return S;
}

/* NO: the weights' columns, 4, 8, 16 or 32 (a tile takes 4, 8 or 16 of
 * them, NV = 16 / its channels vectors of columns; 32 in two tiles). */
static int gc_channels(int64_t ocg) { return ocg <= 4 ? 4 : ocg <= 8 ? 8 : ocg <= 16 ? 16 : 32; }

/* Group gi's weights as K x NO (channels past ocg 0). */
static void gc_pack_weights(const Conv *C, int64_t gi, float *wt) {
    const int64_t ocg = C->ocg, k_all = C->kdim;
    const int NO = gc_channels(ocg);
    const float *wg = C->w + gi * ocg * k_all;
#if defined(__AVX512F__)
    if (ocg == NO && NO >= 16) {
        /* 16 x 16 blocks turned in registers: a fifth of a 32-channel
         * layer's time went to this copy, element by element */
        for (int64_t o0 = 0; o0 < NO; o0 += 16)
            for (int64_t k0 = 0; k0 < k_all; k0 += 16) {
                int nk = k_all - k0 < 16 ? (int)(k_all - k0) : 16;
                __mmask16 m = rk_v16_range(0, nk);
                __m512 r[16];
                for (int i = 0; i < 16; i++) r[i] = _mm512_maskz_loadu_ps(m, wg + (o0 + i) * k_all + k0);
                turn16(r);   /* r[j]: tap k0 + j of channels o0 .. o0 + 15 */
                for (int j = 0; j < nk; j++) _mm512_storeu_ps(wt + (k0 + j) * NO + o0, r[j]);
            }
        return;
    }
#endif
    for (int64_t k = 0; k < k_all; k++)
        for (int o = 0; o < NO; o++) wt[k * NO + o] = o < ocg ? wg[o * k_all + k] : 0.0f;
}

/* Kernel rows ky and ky + sh read the same input rows, one output row
 * apart: an input channel's kh planes (per phase) are min(sh, kh) tall
 * planes of rows + (kh - 1) / sh rows of s, then the slack that the last
 * vectors read past a band; tap (ky, kx) reads tall plane ky % sh from row
 * ky / sh. At stride 1 that is a third of the copying for 3x3 kernels,
 * which on 7x7 planes (rows of 7 floats) was a fifth of the layer's time.
 * 0 where they would not fit in the scratch counted for the kh planes (a
 * band of one wide row at stride 2). */
static int64_t gc_classes(const Conv *C) { return C->p->sh < C->p->kh ? C->p->sh : C->p->kh; }

static int64_t gc_tall_plane(const Conv *C) {
    int64_t size = (C->p->kh - 1) / C->p->sh * C->gc.s + C->gc.cols + 16;
    return gc_classes(C) * size <= C->p->kh * C->gc.plane ? size : 0;
}

/* Where tap k (input channel, kernel row, kernel column) reads in the planes:
 * the same for every unit. */
static void gc_offsets(const Conv *C, int64_t *off) {
    const int64_t kh = C->p->kh, kw = C->p->kw, sw = C->p->sw, tall = gc_tall_plane(C);
    for (int64_t k = 0; k < C->kdim; k++) {
        int64_t kx = k % kw, ky = k / kw % kh, ic = k / (kw * kh);
        off[k] = tall ? ((ic * gc_classes(C) + ky % C->p->sh) * sw + kx % sw) * tall + ky / C->p->sh * C->gc.s + kx / sw
                      : ((ic * kh + ky) * sw + kx % sw) * C->gc.plane + kx / sw;
    }
}

/* A plane row of s floats: element i = xp[i sw] for i in [lo, hi), zeros
 * around it (lo <= hi: rk_out_range). At stride 2 with AVX-512 16 at a
 * time (rk_v16_load_even): element by element it was a fifth of
 * ResNeXt-50's 14x14 stride-2 grouped layer. */
static inline void gc_row(float *qr, const float *xp, int64_t lo, int64_t hi, int64_t s, int64_t sw) {
    zero_run(qr, lo);
    if (sw == 1) {
        copy_run(qr + lo, xp + lo, hi - lo);
    } else {   /* sw is 2 (grouped_ok) */
        int64_t i = lo;
#if defined(__AVX512F__)
        for (; i < hi; i += 16) {
            int64_t cnt = hi - i < 16 ? hi - i : 16;
            _mm512_mask_storeu_ps(qr + i, rk_v16_lanes(cnt), rk_v16_load_even(xp + 2 * i, cnt));
        }
#endif
        for (; i < hi; i++) qr[i] = xp[i * 2];
    }
    zero_run(qr + hi, s - hi);
}

/* gc_unit's tall planes (gc_tall_plane): class q of channel ic, phase ph,
 * row t = phase ph of input row (oy0 + t) sh - pt + q; phase ph's columns
 * [inside[ph][0], inside[ph][1]) inside the image. With AVX-512, rows of at
 * most 16 floats from input rows of at most 16 sw: the input row in two
 * masked loads, each phase's row one masked permute (zeros outside the
 * image) and one store, where the general copy's three runs a row cost
 * more than their few floats (14x14 stride-2 layers, rows of 8). */
static void gc_fill_tall(const Conv *C, int64_t b, int64_t gi, int64_t oy0, int64_t rows, int64_t inside[2][2],
                         int64_t tall, float *planes) {
    const rk_conv2d_f32_params *p = C->p;
    const int64_t h = p->h, w = p->w, s = C->gc.s, sh = p->sh, sw = p->sw, nq = gc_classes(C);
    const int64_t trows = rows + (p->kh - 1) / sh;
#if defined(__AVX512F__)
    const int fast = s <= 16 && w <= 16 * sw;
    __m512i idx[2];
    __mmask16 valid[2];
    const __mmask16 row = rk_v16_range(0, s);
    for (int64_t ph = 0; ph < sw; ph++) {
        idx[ph] = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                      _mm512_set1_epi32((int)sw)),
                                   _mm512_set1_epi32((int)(ph - p->pl)));
        valid[ph] = rk_v16_range(inside[ph][0], inside[ph][1]) & row;
    }
#else
    const int fast = 0;
#endif
    if (sw == 1 && !fast) {   /* stride 1 (grouped_ok: sh == sw): one class, one phase */
        const int64_t lo = inside[0][0], hi = inside[0][1];
        for (int64_t ic = 0; ic < C->cg; ic++) {
            float *q = planes + ic * tall;
            const float *xc = C->x + (b * p->c + gi * C->cg + ic) * h * w;
            for (int64_t r = 0; r < trows; r++) {
                int64_t iy = oy0 - p->pt + r;
                float *qr = q + r * s;
                if (iy < 0 || iy >= h) {
                    zero_run(qr, s);
                    continue;
                }
                gc_row(qr, xc + iy * w - p->pl, lo, hi, s, 1);
            }
            zero_run(q + trows * s, tall - trows * s);
        }
        return;
    }
    for (int64_t ic = 0; ic < C->cg; ic++) {
        const float *xc = C->x + (b * p->c + gi * C->cg + ic) * h * w;
        for (int64_t q = 0; q < nq; q++) {
            float *pq = planes + (ic * nq + q) * sw * tall;
            for (int64_t t = 0; t < trows; t++) {
                int64_t iy = (oy0 + t) * sh - p->pt + q;
                if (iy < 0 || iy >= h) {
                    for (int64_t ph = 0; ph < sw; ph++) zero_run(pq + ph * tall + t * s, s);
                    continue;
                }
                const float *xr = xc + iy * w;
#if defined(__AVX512F__)
                if (fast) {   /* sw 2, or sw 1 with a short row */
                    __m512 v0 = _mm512_maskz_loadu_ps(rk_v16_range(0, w), xr);
                    __m512 v1 = _mm512_maskz_loadu_ps(rk_v16_range(0, w - 16), xr + 16);
                    for (int64_t ph = 0; ph < sw; ph++)
                        _mm512_mask_storeu_ps(pq + ph * tall + t * s, row,
                                              _mm512_maskz_permutex2var_ps(valid[ph], v0, idx[ph], v1));
                    continue;
                }
#endif
                for (int64_t ph = 0; ph < sw; ph++)
                    gc_row(pq + ph * tall + t * s, xr + ph - p->pl, inside[ph][0], inside[ph][1], s, sw);
            }
            for (int64_t ph = 0; ph < sw; ph++) zero_run(pq + ph * tall + trows * s, tall - trows * s);
        }
    }
}

/* One (image b, group gi, band from output row oy0), gi's weights in S.wt. */
static void gc_unit(const Conv *C, int64_t b, int64_t gi, int64_t oy0, const GcScratch *S) {
    const rk_conv2d_f32_params *p = C->p;
    const rk_gc_geom *G = &C->gc;
    const int64_t c = p->c, h = p->h, w = p->w, oc = p->oc, oh = p->oh, ow = p->ow, kh = p->kh;
    const int64_t sw = p->sw, cg = C->cg, ocg = C->ocg, k_all = C->kdim;
    const int NO = gc_channels(ocg);
    int64_t rows = oh - oy0 < G->band ? oh - oy0 : G->band, n = rows * G->s;
    float *planes = S->planes, *T = S->T;
    int64_t inside[2][2];   /* per phase (sw <= 2, grouped_ok) */
    for (int64_t ph = 0; ph < sw; ph++) rk_out_range(G->s, sw, ph - p->pl, w, &inside[ph][0], &inside[ph][1]);
    const int64_t tall = gc_tall_plane(C);
    if (tall) gc_fill_tall(C, b, gi, oy0, rows, inside, tall, planes);
    for (int64_t ic = 0; !tall && ic < cg; ic++)
        for (int64_t ky = 0; ky < kh; ky++)
            for (int64_t ph = 0; ph < sw; ph++) {
                float *q = planes + ((ic * kh + ky) * sw + ph) * G->plane;
                const float *xc = C->x + (b * c + gi * cg + ic) * h * w;
                for (int64_t r = 0; r < rows; r++) {
                    int64_t iy = (oy0 + r) * p->sh - p->pt + ky;
                    float *qr = q + r * G->s;
                    if (iy < 0 || iy >= h) {
                        zero_run(qr, G->s);
                        continue;
                    }
                    /* element i reads column i sw + ph - pl: inside the row for i in [lo, hi) */
                    gc_row(qr, xc + iy * w + ph - p->pl, inside[ph][0], inside[ph][1], G->s, sw);
                }
                zero_run(q + n, G->plane - n);
            }
    /* K in the GEMM's blocks (at most two, rk_conv2d_grouped_ok): each
     * block's sums from +0, then added to the earlier block's, as method 1's
     * GEMM reads C back */
    const int64_t kcs = rk_sgemm_kc_step(k_all);
    for (int64_t k0 = 0; k0 < k_all; k0 += kcs) {
        const int64_t k1 = k0 + kcs < k_all ? k0 + kcs : k_all;
        const int add = k0 > 0;
#if defined(__AVX512F__)
        if (gc_channel_tiles(NO, ow)) {
            gc_ctiles(NO, rows, ow, G->s, planes, S->off, S->wt, k0, k1, add, (int)ocg, T, G->cols);
            continue;
        }
        for (int64_t j0 = 0; j0 < n; j0 += 16 * (16 / (NO < 16 ? NO : 16))) {
            if (NO == 4) gc_tile(4, 4, planes, S->off, S->wt, 4, k0, k1, add, j0, T, G->cols);
            else if (NO == 8) gc_tile(8, 2, planes, S->off, S->wt, 8, k0, k1, add, j0, T, G->cols);
            else
                for (int o0 = 0; o0 < NO; o0 += 16)
                    gc_tile(16, 1, planes, S->off, S->wt + o0, NO, k0, k1, add, j0, T + o0 * G->cols, G->cols);
        }
#else
        /* 24 columns at a time while they fit in T's rows (cols: a multiple
         * of 64), then 8; four channels at a time, those past ocg skipped */
        for (int o0 = 0; o0 < ocg; o0 += 4)
            for (int64_t j0 = 0; j0 < n;) {
                if (j0 + 24 <= G->cols) {
                    gc_tile8(3, planes, S->off, S->wt, NO, o0, k0, k1, add, j0, T, G->cols);
                    j0 += 24;
                } else {
                    gc_tile8(1, planes, S->off, S->wt, NO, o0, k0, k1, add, j0, T, G->cols);
                    j0 += 8;
                }
            }
#endif
    }
    /* each output row: its first ow sums, with the GEMM's epilogue */
    const int64_t act = p->act;
    const float lo = (float)p->act_a, hi = (float)p->act_b;
    for (int64_t o = 0; o < ocg; o++) {
        int64_t ch = gi * ocg + o;
        float bo = C->bias ? C->bias[ch] : 0.0f;
        for (int64_t r = 0; r < rows; r++) {
            int64_t at = ((b * oc + ch) * oh + oy0 + r) * ow;
            const float *t = T + o * G->cols + r * G->s;
#if defined(__AVX512F__)
            for (int64_t x0 = 0; x0 < ow; x0 += 16) {
                __mmask16 m = rk_v16_range(0, ow - x0);
                __m512 v = _mm512_maskz_loadu_ps(m, t + x0);
                _mm512_mask_storeu_ps(C->y + at + x0, m,
                                      dw_finish(v, bo, C->res ? C->res + at + x0 : NULL, m, act, lo, hi));
            }
#else
            copy_run(C->y + at, t, ow);
#endif
        }
#if !defined(__AVX512F__)
        /* the band's rows are contiguous in y: one epilogue pass over them */
        int64_t at0 = ((b * oc + ch) * oh + oy0) * ow;
        epilogue_run(C->y + at0, rows * ow, bo, C->res ? C->res + at0 : NULL, act, lo, hi);
#endif
    }
}

/* Units t = (image, group, band) in that order, taken in contiguous runs; a
 * thread packs a group's weights again only when its next unit is in
 * another group. */
static int64_t gc_units(const Conv *C) { return C->p->n * C->p->group * ((C->p->oh + C->gc.band - 1) / C->gc.band); }

static void grouped_task(void *arg, int tid) {
    const Conv *C = arg;
    const rk_conv2d_f32_params *p = C->p;
    int64_t nb = (p->oh + C->gc.band - 1) / C->gc.band, packed = -1;
    GcScratch S = gc_scratch(C, C->ctx->scratch + (size_t)tid * C->ctx->scratch_per_thread);
    gc_offsets(C, S.off);
    for (int64_t cursor = 0, t = -1, t1 = 0;
         rk_next_item(C->q, (int)C->ntasks, tid, RK_RUNS, gc_units(C), &cursor, &t, &t1);) {
        int64_t gi = t / nb % p->group;
        if (gi != packed) gc_pack_weights(C, gi, S.wt);
        packed = gi;
        gc_unit(C, t / nb / p->group, gi, t % nb * C->gc.band, &S);
    }
}
#endif

int rk_conv2d_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv2d_f32_params *p = params;
    if (p->x_dtype || p->w_dtype || p->y_dtype || p->r_dtype) return rk_conv2d_mixed(ctx, params, in, out);
    if (p->n < 0 || p->c < 0 || p->h < 0 || p->w < 0 || p->oc < 0 || p->oh < 0 || p->ow < 0 || p->kh < 0 ||
        p->kw < 0 || p->sh <= 0 || p->sw <= 0 || p->dh <= 0 || p->dw <= 0 || p->group <= 0 ||
        p->c % p->group || p->oc % p->group || (p->method >= 1 && p->nblk <= 0) || p->method < 0 ||
        p->method > 3 || (p->method >= 2 && p->a_packed))
        return RLX_E_ARG;
    Conv C;
    memset(&C, 0, sizeof C);
    C.p = p;
    C.ctx = ctx;
    C.x = in[0];
    C.w = in[1];
    int next = 2;
    C.bias = p->has_bias ? in[next++] : NULL;
    C.res = p->has_res ? in[next++] : NULL;
    C.y = out[0];
    C.cg = p->c / p->group;
    C.ocg = p->oc / p->group;
    C.kdim = C.cg * p->kh * p->kw;
    C.ncols = p->oh * p->ow;
    double macs = (double)p->n * (double)p->oc * (double)C.ncols * (double)C.kdim;
    /* the direct kernels (depthwise) do few multiply-adds per byte: their
     * inputs and outputs count as work too (a 14x14 -> 7x7 depthwise of 576
     * channels, 254 K multiply-adds, ran on one thread) */
    if (p->method == 0) macs += (double)p->n * (double)(p->c * p->h * p->w + p->oc * C.ncols);
    /* a few positions against many weights (an SE block's 1x1 layers): the
     * weights streamed from memory are the work, and two threads stream them
     * in halves (4 multiply-adds a float, as rk_sgemm_threads_pay counts) */
    if (p->method == 1 && p->a_packed == 2 && C.ncols <= RK_SGEMM_FEW_ROWS)
        macs += 4.0 * (double)p->oc * (double)C.kdim;
    int nt = ctx && ctx->nthreads > 1 && macs >= THREAD_MIN_MACS ? ctx->nthreads : 1;
    rk_queue q;
    C.q = &q;
#if defined(__AVX512F__)
    if (p->method == 2 && stem_ok(p)) {
        int64_t total = p->n * (p->oc / 16) * p->oh;
        /* the stem reads up to 16-lane strips past ow, and keeps 8 split rows of each channel in scratch */
        C.s2 = s2_layout(p, (p->ow + 15) / 16 * 16);
        C.s2.ok = C.s2.ok && ctx && ctx->scratch && stem_split_need(p->c, C.s2.stride) <= ctx->scratch_per_thread;
        C.stem_rows = stem_rows_fit(&C);
        C.ntasks = rk_queue_init(&q, nt < total ? nt : (total > 0 ? total : 1));
        rk_pool_share(ctx ? ctx->pool : NULL, (int)C.ntasks, stem_task, &C);
        return RLX_OK;
    }
#elif CONV_SIMD
    if (p->method == 2 && stem_ok(p) && ctx && ctx->scratch) {
        /* strips of 8 read up to 7 columns past ow */
        S2 l = s2_layout(p, (p->ow + 7) / 8 * 8);
        if (l.ok && stem_split_need(p->c, l.stride) <= ctx->scratch_per_thread) {
            int64_t total = p->n * (p->oc / 16) * p->oh;
            C.s2 = l;
            C.stem_rows = stem_rows_fit(&C);
            C.ntasks = rk_queue_init(&q, nt < total ? nt : (total > 0 ? total : 1));
            rk_pool_share(ctx->pool, (int)C.ntasks, stem_task, &C);
            return RLX_OK;
        }
    }
#endif
#if CONV_SIMD
    if (p->method == 3 && grouped_ok(p) && ctx && ctx->scratch &&
        ctx->scratch_per_thread >= rk_conv2d_grouped_scratch(C.cg, p->kh, p->kw, p->sw, p->oh, p->ow)) {
        C.gc = rk_conv2d_grouped_geom(C.cg, p->kh, p->kw, p->sw, p->oh, p->ow);
        int64_t total = gc_units(&C);
        C.ntasks = rk_queue_init(&q, nt < total ? nt : (total > 0 ? total : 1));
        rk_pool_share(ctx->pool, (int)C.ntasks, grouped_task, &C);
        return RLX_OK;
    }
#endif
    if (p->method >= 1) {
        if (!ctx || !ctx->scratch ||
            ctx->scratch_per_thread < rk_conv2d_scratch(C.ocg, C.kdim, p->nblk, p->a_packed == 2))
            return RLX_E_ARG;   /* the plan reserves this; a mismatch is a bug, not a crash */
        C.s2 = s2_layout(p, p->ow);   /* sw 2: never a 1x1 read in place */
        plan_gemm(&C, nt);
        C.ntasks = rk_queue_init(&q, C.ntasks);
        if (C.ntasks > 1 && C.msplit > 1 && p->n * p->group * C.nblocks == 1) {   /* one block, rows split */
            if (!reads_input_in_place(p)) {
                C.shared_col = (const float *)(void *)ctx->scratch;   /* thread 0's col */
                rk_pool_share(ctx->pool, (int)C.ntasks, col_task, &C);
                C.ntasks = rk_queue_init(&q, C.ntasks);
            }
            /* B packed once, by all (pack_task), past thread 0's col if it fits */
            float *pb = rk_align64f(ctx->scratch + (size_t)align16f(C.kdim * p->nblk) * sizeof(float));
            if (p->a_packed == 1 && C.ncols <= RK_SGEMM_NC &&
                (size_t)((uint8_t *)pb - ctx->scratch) + rk_sgemm_packed_b_size(C.ncols, C.kdim) <=
                    ctx->scratch_per_thread) {
                C.shared_pb = pb;
                rk_pool_share(ctx->pool, (int)C.ntasks, pack_task, &C);
                C.ntasks = rk_queue_init(&q, C.ntasks);
            }
        }
        rk_pool_share(ctx->pool, (int)C.ntasks, gemm_task, &C);
    } else {
        int64_t total = p->n * p->oc;
#if CONV_SIMD
        C.lanes = dw_lanes_ok(&C);
        if (C.lanes) total = p->n * ((p->oc + DL - 1) / DL);
#endif
        C.ntasks = rk_queue_init(&q, nt < total ? nt : (total > 0 ? total : 1));
        rk_pool_share(ctx ? ctx->pool : NULL, (int)C.ntasks, direct_task, &C);
    }
    return RLX_OK;
}

/* ---- conv_pwdw_f32: a 1x1 expansion and the depthwise 3x3 after it ----
 * MobileNetV2's blocks widen the channels 6x with a 1x1 convolution and
 * then run a depthwise 3x3 over the wide tensor (96 x 112 x 112: 4.8 MB,
 * written once and read once, from L3 or DRAM). Here the output is made
 * in bands of `rows` output rows: the 1x1 rows a band reads (its input rows
 * of the depthwise) are computed by the GEMM into scratch, with their
 * epilogue, then the depthwise runs over that band as over a small image
 * whose top pad is what is left of pt. The rows two bands share (1 for
 * stride 2, 2 for stride 1) move up in scratch instead of being computed
 * again. Every element is computed as by the two separate kernels (the
 * GEMM's sums depend on K only, the depthwise's on the taps inside the
 * image), so the bits are theirs; each thread takes a contiguous run of
 * bands. */

/* Rows of the 1x1 output one band may need. */
static int64_t pwdw_erows(int64_t sh, int64_t rows) { return (rows - 1) * sh + 3; }

size_t rk_conv_pwdw_scratch(int64_t c, int64_t e, int64_t w, int64_t sh, int64_t rows) {
    int64_t n = pwdw_erows(sh, rows) * w;
    return (size_t)(align16f(e * n) * (int64_t)sizeof(float)) + rk_sgemm_scratch_size(e, n, c) + 2 * 64;
}

typedef struct {
    const rk_conv_pwdw_f32_params *p;
    const float *x, *w1, *b1, *w2, *b2;
    float *y;
    rk_ctx *ctx;
    int64_t nbands, ntasks;
    rk_queue *q;     /* runs of bands, RK_RUNS per thread (rk_take) */
} PwDw;

static void pwdw_task(void *arg, int tid) {
    const PwDw *D = arg;
    const rk_conv_pwdw_f32_params *p = D->p;
    uint8_t *scratch = D->ctx->scratch + (size_t)tid * D->ctx->scratch_per_thread;
    int64_t stride = pwdw_erows(p->sh, p->rows) * p->w;   /* one channel's rows in scratch */
    float *e = rk_align64f(scratch);
    void *gscratch = e + align16f(p->e * stride);
    int64_t total = p->n * D->nbands, cursor = 0, t = -1, t1 = 0;
    int64_t have_img = -1, have0 = 0, have1 = 0;   /* 1x1 rows [have0, have1) of image have_img in scratch */
    while (rk_next_item(D->q, (int)D->ntasks, tid, RK_RUNS, total, &cursor, &t, &t1)) {
        int64_t img = t / D->nbands, oy0 = t % D->nbands * p->rows;
        int64_t oy1 = oy0 + p->rows < p->oh ? oy0 + p->rows : p->oh;
        int64_t r0 = oy0 * p->sh - p->pt, r1 = (oy1 - 1) * p->sh - p->pt + 3;
        if (r0 < 0) r0 = 0;
        if (r1 > p->h) r1 = p->h;
        if (r1 < r0) r1 = r0;
        /* rows already there move up; the rest are computed */
        int64_t from = r0;
        if (img == have_img && r0 >= have0 && r0 < have1) {
            int64_t keep = (have1 < r1 ? have1 : r1) - r0;
            if (r0 > have0)
                for (int64_t ch = 0; ch < p->e; ch++)
                    memmove(e + ch * stride, e + ch * stride + (r0 - have0) * p->w,
                            (size_t)(keep * p->w) * sizeof(float));
            from = r0 + keep;
        }
        if (r1 > from) {
            rk_sgemm_args g;
            memset(&g, 0, sizeof g);
            g.m = p->e;
            g.n = (r1 - from) * p->w;
            g.k = p->c;
            g.alpha = 1.0f;
            g.packed_a = D->w1;
            g.b = D->x + img * p->c * p->h * p->w + from * p->w;
            g.ldb = p->h * p->w;
            g.c = e + (from - r0) * p->w;
            g.ldc = stride;
            g.bias = D->b1;
            g.act = (int)p->act1;
            g.act_a = (float)p->act1_a;
            g.act_b = (float)p->act1_b;
            rk_sgemm_ex(&g, gscratch, 1, NULL, NULL);
        }
        have_img = img, have0 = r0, have1 = r1;
        /* the band's depthwise, as conv2d_f32's over a band-high image */
        rk_conv2d_f32_params q;
        memset(&q, 0, sizeof q);
        q.n = 1, q.c = 1, q.h = r1 - r0, q.w = p->w, q.oc = 1, q.oh = oy1 - oy0, q.ow = p->ow;
        q.kh = 3, q.kw = 3, q.sh = p->sh, q.sw = p->sw, q.pt = p->pt - oy0 * p->sh + r0, q.pl = p->pl;
        q.dh = 1, q.dw = 1, q.group = 1, q.has_bias = p->has_b2, q.act = p->act2, q.act_a = p->act2_a;
        q.act_b = p->act2_b;
        int epilogue = p->has_b2 || p->act2 != RS_ACT_NONE;
        for (int64_t ch = 0; ch < p->e; ch++)
            depthwise3x3(&q, e + ch * stride, D->w2 + ch * 9, D->y + ((img * p->e + ch) * p->oh + oy0) * p->ow,
                         D->b2 ? D->b2[ch] : 0.0f, NULL, epilogue, NULL);
    }
}

int rk_conv_pwdw_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_pwdw_f32_params *p = params;
    if (p->x_dtype || p->w1_dtype || p->y_dtype) return rk_conv_pwdw_mixed(ctx, params, in, out);
    if (p->n < 0 || p->c <= 0 || p->h <= 0 || p->w <= 0 || p->e <= 0 || p->oh < 0 || p->ow < 0 || p->sh <= 0 ||
        p->sw <= 0 || p->pt < 0 || p->pl < 0 || p->rows <= 0 ||
        !ctx || !ctx->scratch || ctx->scratch_per_thread < rk_conv_pwdw_scratch(p->c, p->e, p->w, p->sh, p->rows))
        return RLX_E_ARG;
    PwDw D;
    D.p = p;
    D.ctx = ctx;
    D.x = in[0];
    D.w1 = in[1];
    int next = 2;
    D.b1 = p->has_b1 ? in[next++] : NULL;
    D.w2 = in[next++];
    D.b2 = p->has_b2 ? in[next++] : NULL;
    D.y = out[0];
    D.nbands = (p->oh + p->rows - 1) / p->rows;
    int64_t total = p->n * D.nbands;
    double macs = (double)p->n * (double)p->e * (double)p->h * (double)p->w * (double)p->c;
    int64_t nt = ctx->nthreads > 1 && macs >= THREAD_MIN_MACS ? ctx->nthreads : 1;
    rk_queue q;
    D.ntasks = rk_queue_init(&q, nt < total ? nt : (total > 0 ? total : 1));
    D.q = &q;
    rk_pool_share(ctx->pool, (int)D.ntasks, pwdw_task, &D);
    return RLX_OK;
}

/* ---- conv_pwdw_small_f32: a 1x1 expansion and the depthwise after it, on a small plane ----
 * On a 14x14 or 7x7 plane the 1x1 runs transposed (y^T = x^T W^T, the
 * weights as the GEMM's B: conv2d_f32's a_packed 2), which gives its output
 * positions x channels; conv2d_f32 then turns it into planes, and the
 * depthwise's lanes kernel turns those planes back into vectors of
 * channels. Here the product stays in scratch as it is and the depthwise
 * reads each position's channels with one load (dw_lanes_from_t): neither
 * turn, and the expanded tensor never reaches the arena. The 1x1's bias and
 * activation are the GEMM's epilogue on its columns (y + b1[j], then act1:
 * conv2d_f32's per-row epilogue_run adds a bias only where it is not 0,
 * and a sum begun at +0 is never -0, so adding a 0 changes nothing), the
 * depthwise's sums are dw_any_ok's, so the bits are the two kernels'.
 * Units are (image, run of output channels): the run's columns of the
 * product (rk_sgemm_cols), then its blocks of DL channels. Builds without
 * vectors gather each run's planes and call conv2d_f32's depthwise on them. */
size_t rk_conv_pwdw_small_scratch(int64_t c, int64_t e, int64_t hw) {
    return (size_t)((align16f(hw * e) + 16 * align16f(hw)) * (int64_t)sizeof(float)) +
           rk_sgemm_scratch_size(hw, e, c) + 3 * 64;
}

typedef struct {
    const rk_conv_pwdw_small_f32_params *p;
    const float *x, *w1, *b1, *w2, *b2;
    float *y;
    rk_ctx *ctx;
    int64_t run, nruns, ntasks;
    rk_queue *q;
} PwDwSmall;

static void pwdw_small_task(void *arg, int tid) {
    const PwDwSmall *D = arg;
    const rk_conv_pwdw_small_f32_params *p = D->p;
    int64_t hw = p->h * p->w, ohw = p->oh * p->ow, taps = p->kh * p->kw;
    uint8_t *scratch = D->ctx->scratch + (size_t)tid * D->ctx->scratch_per_thread;
    float *t = rk_align64f(scratch), *planes = t + align16f(hw * p->e);
    void *gscratch = planes + 16 * align16f(hw);
    /* the depthwise's geometry, as conv2d_f32's (one image) */
    rk_conv2d_f32_params q;
    memset(&q, 0, sizeof q);
    q.n = 1, q.h = p->h, q.w = p->w, q.oh = p->oh, q.ow = p->ow, q.kh = p->kh, q.kw = p->kw;
    q.sh = p->sh, q.sw = p->sw, q.pt = p->pt, q.pl = p->pl, q.dh = p->dh, q.dw = p->dw, q.has_bias = p->has_b2;
    q.act = p->act2, q.act_a = p->act2_a, q.act_b = p->act2_b;
    int64_t cursor = 0, u = -1, u1 = 0;
    while (rk_next_item(D->q, (int)D->ntasks, tid, RK_RUNS, p->n * D->nruns, &cursor, &u, &u1)) {
        int64_t img = u / D->nruns, m0 = u % D->nruns * D->run, m1 = m0 + D->run < p->e ? m0 + D->run : p->e;
        rk_sgemm_args g;
        memset(&g, 0, sizeof g);
        g.m = hw, g.n = p->e, g.k = p->c, g.alpha = 1.0f;
        g.a = D->x + img * p->c * hw, g.lda = hw, g.trans_a = 1;
        g.packed_b = D->w1, g.c = t, g.ldc = p->e;
        g.bias = D->b1, g.bias_per_col = 1, g.act = (int)p->act1, g.act_a = (float)p->act1_a, g.act_b = (float)p->act1_b;
        if (m0 == 0 && m1 == p->e) rk_sgemm_ex(&g, gscratch, 1, NULL, NULL);
        else rk_sgemm_cols(&g, m0, m1, gscratch);
        float *yi = D->y + img * p->e * ohw;
#if CONV_SIMD
        (void)planes;
        for (int64_t cb = m0; cb < m1; cb += DL)
            dw_lanes_from_t(&q, t + cb, p->e, D->w2 + cb * taps, D->b2 ? D->b2 + cb : NULL, yi + cb * ohw,
                            m1 - cb < DL ? m1 - cb : DL);
#else
        for (int64_t cb = m0; cb < m1; cb += 16) {
            int64_t nch = m1 - cb < 16 ? m1 - cb : 16;
            for (int64_t ch = 0; ch < nch; ch++)
                for (int64_t i = 0; i < hw; i++) planes[ch * hw + i] = t[i * p->e + cb + ch];
            q.c = q.oc = q.group = nch;
            rk_ctx one = {1, NULL, NULL, 0};
            const void *in[3] = {planes, D->w2 + cb * taps, D->b2 ? D->b2 + cb : NULL};
            void *out[1] = {yi + cb * ohw};
            rk_conv2d_f32(&one, &q, in, out);   /* method 0 on valid params: cannot fail */
        }
#endif
    }
}

int rk_conv_pwdw_small_f32(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_conv_pwdw_small_f32_params *p = params;
    if (p->n < 0 || p->c <= 0 || p->e <= 0 || p->act1 < 0 || p->act2 < 0 ||
        !rk_conv_pwdw_small_ok(p->h, p->w, p->oh, p->ow, p->kh, p->kw, p->sh, p->sw, p->dh, p->dw, p->pt, p->pl) ||
        !ctx || !ctx->scratch || ctx->scratch_per_thread < rk_conv_pwdw_small_scratch(p->c, p->e, p->h * p->w))
        return RLX_E_ARG;   /* rlxc checked and planned these */
    PwDwSmall D;
    memset(&D, 0, sizeof D);
    D.p = p;
    D.ctx = ctx;
    int next = 0;
    D.x = in[next++];
    D.w1 = in[next++];
    D.b1 = p->has_b1 ? in[next++] : NULL;
    D.w2 = in[next++];
    D.b2 = p->has_b2 ? in[next++] : NULL;
    D.y = out[0];
    /* one run of channels per thread (a multiple of 16): each run's GEMM
     * packs the input once, and smaller runs (64 channels, two or more per
     * thread) made EfficientNet-B0 2.5% slower at 2 threads */
    int64_t nt = ctx->nthreads > 1 && ctx->pool ? ctx->nthreads : 1;
    D.run = p->e;
    if (nt > 1) {
        int64_t want = (p->e + nt - 1) / nt;
        want = (want + 15) / 16 * 16;
        D.run = want;
    }
    D.nruns = (p->e + D.run - 1) / D.run;
    rk_queue q;
    int64_t total = p->n * D.nruns;
    D.ntasks = rk_queue_init(&q, nt < total ? nt : (total > 0 ? total : 1));
    D.q = &q;
    rk_pool_share(ctx->pool, (int)D.ntasks, pwdw_small_task, &D);
    return RLX_OK;
}
