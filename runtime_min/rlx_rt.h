/* rlx_rt.h - runtime_min: what a model built by rlxc needs at run time.
 *
 * Generated model code (model.c) includes this header and links with the
 * runtime's sources (rlx_rt.c, rlx_kernels.c; rlx_npy.c only for --emit-main).
 * The runtime:
 *   - owns the status codes (functions return them; nothing here exits);
 *   - allocates a model's arena once, in rlx_model_new, and nothing afterwards;
 *   - loads and validates the weights file (magic, version, model hash, sizes,
 *     the checksum of its data);
 *   - converts half-precision values (round to nearest even);
 *   - provides the kernel library (rk_*, rk_kernels.def) and scalar helpers
 *     (rlx_scalar.h) shared with the compiler, so that compile-time folding
 *     and run-time arithmetic agree.
 *
 * Weights file layout, version 2 (all little-endian):
 *
 *   0        4        8                16               24               32       36       40             48     64
 *   +--------+--------+----------------+----------------+----------------+--------+--------+--------------+------+------
 *   | "RLXW" | ver u32| model hash u64 | data bytes u64 | data offset u64| n u32  | zero   | checksum u64 | zero | data
 *   +--------+--------+----------------+----------------+----------------+--------+--------+--------------+------+------
 *
 * The data section starts at `data offset` (64) and holds every weight at the
 * 64-byte aligned offset that the generated code has baked in. `checksum` is
 * rlx_weights_checksum of the data section (its `data bytes` bytes); a file
 * whose data does not match it is refused with RLX_E_CHECKSUM. Version 1
 * had no checksum (bytes 36-63 zero) and is refused with RLX_E_VERSION.
 */
#ifndef RLX_RT_H
#define RLX_RT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rk_isa.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RLX_WEIGHTS_MAGIC "RLXW"
#define RLX_WEIGHTS_VERSION 2u
#define RLX_WEIGHTS_HEADER 64u
#define RLX_ALIGN 64u
#define RK_MAX_RANK 8

/* Status codes. 0 is success; each failure has its own code. */
#define RLX_STATUSES(X) \
    X(RLX_OK,          0, "ok") \
    X(RLX_E_NOMEM,     1, "out of memory") \
    X(RLX_E_ARG,       2, "invalid argument") \
    X(RLX_E_NOFILE,    3, "weights file missing or unreadable") \
    X(RLX_E_IO,        4, "read error") \
    X(RLX_E_TRUNCATED, 5, "weights file truncated") \
    X(RLX_E_MAGIC,     6, "not a weights file (bad magic)") \
    X(RLX_E_VERSION,   7, "weights file of another version") \
    X(RLX_E_MODEL,     8, "weights file of another model (hash mismatch)") \
    X(RLX_E_SIZE,      9, "weights file size disagrees with the model") \
    X(RLX_E_STATE,    10, "weights not loaded") \
    X(RLX_E_RANGE,    11, "index out of range") \
    X(RLX_E_FORMAT,   12, "malformed input file") \
    X(RLX_E_ISA,      13, "RLX_ISA names an instruction set this CPU or build lacks") \
    X(RLX_E_NOLOADER, 14, "no GPU driver or loader library on this machine") \
    X(RLX_E_NODEVICE, 15, "no GPU device that can run compute work") \
    X(RLX_E_DEV_F16,  16, "the GPU lacks the half-precision arithmetic the model needs") \
    X(RLX_E_DEV_16BIT, 17, "the GPU lacks the 16-bit storage the model needs") \
    X(RLX_E_DEV_8BIT, 18, "the GPU lacks the 8-bit storage the model needs") \
    X(RLX_E_DEV_INT64, 19, "the GPU lacks the 64-bit integers the model needs") \
    X(RLX_E_DEV_F64,  20, "the GPU lacks the double precision the model needs") \
    X(RLX_E_DEV_SUBGROUP, 21, "the GPU lacks the subgroup operations the model needs") \
    X(RLX_E_DEV_BUFFER, 22, "the arena or the weights exceed the GPU's storage buffer range") \
    X(RLX_E_DEV_SHARED, 23, "a kernel needs more workgroup memory than the GPU has") \
    X(RLX_E_DEV_WGSIZE, 24, "a kernel's workgroup is larger than the GPU allows") \
    X(RLX_E_DEV_WGCOUNT, 25, "a dispatch has more workgroups than the GPU allows") \
    X(RLX_E_DEV_LOOPS, 26, "a kernel runs more loop iterations per invocation than this GPU runs correctly") \
    X(RLX_E_DEV_NOMEM, 27, "out of GPU memory") \
    X(RLX_E_GPU,      28, "a GPU API call failed") \
    X(RLX_E_PTX_VERSION, 29, "the GPU driver is older than the model's PTX (update it, or build a cubin)") \
    X(RLX_E_CHECKSUM, 30, "weights data corrupted (checksum mismatch)")

enum {
#define X(id, code, msg) id = code,
    RLX_STATUSES(X)
#undef X
};
const char *rlx_status_str(int status);

typedef enum {
#define X(id, name, bytes, ctype, npy, onnx) RLX_##id,
#include "rlx_dtypes.def"
#undef X
    RLX_NDTYPES
} rlx_dtype;

const char *rlx_dtype_name(int dtype);   /* "f32", ...; "?" if out of range */
int rlx_dtype_size(int dtype);           /* bytes per element; 0 if out of range */

/* Model description, a constant table in the generated code. */
typedef struct {
    const char *name;
    int dtype;
    int rank;
    const int64_t *dims;
    uint64_t offset;   /* byte offset of the tensor's slot in the arena */
    uint64_t nbytes;   /* bytes of the slot actually used by the tensor */
} rlx_tensor_info;

typedef struct {
    const char *name;
    uint64_t hash;
    uint64_t arena_bytes;
    uint64_t weights_bytes;
    uint32_t nweights;
    uint64_t scratch_per_thread;   /* kernel scratch, bytes per thread */
    int nthreads;                  /* default thread count (rlxc --threads) */
    int ninputs, noutputs;
    const rlx_tensor_info *inputs;
    const rlx_tensor_info *outputs;
} rlx_model_info;

/* The thread pool (rlx_pool.c): fork-join over tids 0..n-1. */
typedef struct rk_pool rk_pool;
int rk_pool_new(int nthreads, rk_pool **out);
void rk_pool_free(rk_pool *pool);
void rk_pool_run(void *pool, int nthreads, void (*task)(void *arg, int tid), void *arg);
/* The same for tasks that take their work with rk_take: a worker that comes
 * late (its core busy with other load) may be skipped, its share done by
 * the others. */
void rk_pool_share(void *pool, int nthreads, void (*task)(void *arg, int tid), void *arg);

/* The work of a rk_pool_share run, in units: each of the run's threads owns
 * `per` of them (unit k of owner v; the kernel maps (v, k) to its work the
 * way it split it over threads before), takes its own first, in order, then
 * helps the others with what is left of theirs. When all threads keep pace
 * each does exactly its own share, so what one layer leaves in a core's
 * cache the next reads on that core; a thread slowed or kept off its core by
 * other load leaves its share to the others. With GCC-style atomics; else
 * each thread takes its own share only (and rk_pool_share runs every tid).
 * A run uses at most RK_QUEUE_MAX threads: rk_queue_init returns the count
 * the run is to use. */
enum { RK_QUEUE_MAX = 64 };
typedef struct {
    int64_t taken[RK_QUEUE_MAX][8];   /* per owner: units given out; a cache line each */
} rk_queue;

static inline int64_t rk_queue_init(rk_queue *q, int64_t nthreads) {
    if (nthreads > RK_QUEUE_MAX) nthreads = RK_QUEUE_MAX;
    for (int64_t v = 0; v < nthreads; v++) q->taken[v][0] = 0;
    return nthreads;
}

/* The next unit for thread tid (cursor: the thread's, 0 before its first
 * call): its owner, with *k set, or -1 when none is left. */
static inline int rk_take(rk_queue *q, int nthreads, int tid, int64_t per, int64_t *cursor, int64_t *k) {
#if defined(__GNUC__) && !defined(RLX_NO_THREADS) && !defined(RLX_NO_ATOMICS)
    for (; *cursor < nthreads; (*cursor)++) {
        int v = (int)((tid + *cursor) % nthreads);
        int64_t j = __atomic_fetch_add(&q->taken[v][0], 1, __ATOMIC_RELAXED);
        if (j < per) {
            *k = j;
            return v;
        }
    }
    return -1;
#else
    (void)q, (void)nthreads;
    if (*cursor >= per) return -1;
    *k = (*cursor)++;
    return tid;
#endif
}

/* A thread's next task of `total` split round-robin (thread v's own: v,
 * v + nthreads, ...): 1 with *t set, 0 when none is left. Start with
 * *cursor = 0. */
static inline int rk_next_task(rk_queue *q, int nthreads, int tid, int64_t total, int64_t *cursor, int64_t *t) {
    int64_t per = (total + nthreads - 1) / nthreads, k;
    for (int v; (v = rk_take(q, nthreads, tid, per, cursor, &k)) >= 0;) {
        *t = v + k * nthreads;
        if (*t < total) return 1;
    }
    return 0;
}

/* Contiguous runs of `total` items, `per` runs for each of nthreads owners:
 * run k of owner v is items [*lo, *hi). Owner v's runs together are its
 * even share, [total * v / nthreads, total * (v + 1) / nthreads). */
static inline void rk_run_range(int64_t total, int nthreads, int64_t per, int v, int64_t k, int64_t *lo, int64_t *hi) {
    int64_t runs = (int64_t)nthreads * per, u = (int64_t)v * per + k;
    *lo = total * u / runs;
    *hi = total * (u + 1) / runs;
}

/* Runs per thread where a kernel cuts its work into runs (rk_next_item):
 * few enough that each thread's share stays in one piece per layer (what
 * one layer writes in a core's cache, the next, split the same way, reads
 * on that core), enough that a thread left behind gives up part of it. */
enum { RK_RUNS = 4 };

/* A thread's next item of work cut into runs as above: *t moves on inside
 * the run [.., *hi) it has, or to the start of the next non-empty run it
 * takes; 0 when none is left. Start with *t = -1, *hi = 0, *cursor = 0. */
static inline int rk_next_item(rk_queue *q, int nthreads, int tid, int64_t per, int64_t total, int64_t *cursor,
                               int64_t *t, int64_t *hi) {
    if (++*t < *hi) return 1;
    for (;;) {
        int64_t k, lo;
        int v = rk_take(q, nthreads, tid, per, cursor, &k);
        if (v < 0) return 0;
        rk_run_range(total, nthreads, per, v, k, &lo, hi);
        if (lo < *hi) {
            *t = lo;
            return 1;
        }
    }
}

/* Kernel context: threads and the scratch memory kernels may use (GEMM
 * packing, im2col), scratch_per_thread bytes for each of nthreads. */
typedef struct rk_ctx {
    int nthreads;
    rk_pool *pool;
    uint8_t *scratch;
    size_t scratch_per_thread;
} rk_ctx;

/* Copies (transpose, slice, strided copy) of this many bytes or more are
 * split over the model's threads; rlxc calls the _serial entries of smaller
 * ones, so a model with only small copies does not link the thread pool. */
#define RK_COPY_THREAD_MIN ((int64_t)1 << 17)

/* An elementwise region of generated code over its outer loop's [lo, hi). */
typedef void (*rk_region_fn)(uint8_t *A, const uint8_t *W, int64_t lo, int64_t hi);
/* Runs fn over [0, n): on ctx's threads, in runs of the outer loop, where
 * the region has elems elements or more than a fork is worth; else on the
 * calling thread. Every element is computed by the same code whoever runs
 * it, so results do not depend on the thread count. */
void rk_region_run(rk_ctx *ctx, rk_region_fn fn, uint8_t *A, const uint8_t *W, int64_t n, int64_t elems);

typedef struct rlx_model {
    const rlx_model_info *info;
    void *device;            /* a GPU target's host state (rlx_gpu.h); NULL on the C target */
    uint8_t *arena;          /* arena_bytes, RLX_ALIGN-aligned */
    void *arena_alloc;       /* what to free */
    uint8_t *weights;        /* the data section, RLX_ALIGN-aligned */
    void *weights_alloc;     /* what to free, NULL if borrowed */
    void *scratch_alloc;
    rk_ctx ctx;
} rlx_model;

/* Allocates the model, its arena, its scratch and its threads
 * (info->nthreads, or RLX_THREADS from the environment if set). */
int rlx_model_new(const rlx_model_info *info, rlx_model **out);
/* Changes the thread count (reallocates scratch and threads); not while running. */
int rlx_model_set_threads(rlx_model *m, int nthreads);
void rlx_model_free(rlx_model *m);
/* Reads and validates a weights file; on failure the model keeps the
 * weights it had (or none). Built with RLX_NO_STDIO: always RLX_E_NOFILE (no
 * file I/O at all). */
int rlx_load_weights_file(rlx_model *m, const char *path);
/* Uses `buf` (a whole weights file image of `len` bytes) in place if its data
 * section is RLX_ALIGN-aligned, else copies it. The caller keeps `buf` alive. */
int rlx_load_weights_buffer(rlx_model *m, const void *buf, size_t len);
/* The same with flags: RLX_LOAD_NO_CHECKSUM skips the data checksum (for
 * weights in storage that is already checked; bench/weights_load.c times
 * both). The header checks always run. */
#define RLX_LOAD_NO_CHECKSUM 1u
int rlx_load_weights_file_flags(rlx_model *m, const char *path, unsigned flags);
int rlx_load_weights_buffer_flags(rlx_model *m, const void *buf, size_t len, unsigned flags);
/* Checks a weights image header against the model; RLX_OK or the status. */
int rlx_check_weights_header(const rlx_model_info *info, const uint8_t *buf, size_t len);

/* The instruction set the kernels run with (rlx_isa.c): chosen once from
 * CPUID, or forced with RLX_ISA=portable|avx2|avx512; rlx_model_new calls
 * rlx_isa_init. rlx_isa_name gives "portable", "avx2", "avx512" or "neon". */
int rlx_isa_init(void);
const char *rlx_isa_name(void);
/* Whether the kernels run the AVX-512 variant of a default x86-64 build
 * (then the weights checksum may use AVX-512 too); 0 elsewhere. */
int rlx_isa_sum_wide(void);

/* The checksum of a weights file's data section (rlx_rt.c says why it
 * catches every flipped bit): 16 lanes of two 32-bit running sums over
 * the data as 32-bit words, lane i % 16 for word i. rlx_sum_add takes the
 * data in pieces whose sizes are multiples of RLX_SUM_BLOCK, but for the
 * last, so a loader can sum each piece while it is in cache. */
#define RLX_SUM_LANES 16
#define RLX_SUM_BLOCK (4 * RLX_SUM_LANES)
typedef struct {
    uint32_t a[RLX_SUM_LANES], b[RLX_SUM_LANES];
} rlx_sum;
void rlx_sum_init(rlx_sum *s);
void rlx_sum_add(rlx_sum *s, const void *data, size_t n);
uint64_t rlx_sum_end(const rlx_sum *s);
uint64_t rlx_weights_checksum(const void *data, size_t n);   /* init + add + end */

/* Half precision: exact widening; narrowing rounds to nearest even, keeps
 * NaN a quiet NaN (its payload's top bits) and the sign of zero and inf.
 * Inline and without branches, so that kernels' and generated code's loops
 * over them vectorize. */
static inline uint32_t rlx_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float rlx_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float rlx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, em = h & 0x7fffu;
    /* normals: the exponent rebiased (15 -> 127); subnormals: man * 2^-24,
     * an f32 normal (exact, and no denormal input whatever DAZ says) */
    uint32_t u = em < 0x400u ? rlx_f32_bits((float)em * (1.0f / 16777216.0f)) : (em << 13) + 0x38000000u;
    u = em >= 0x7c00u ? 0x7f800000u | (em & 0x3ffu) << 13 : u;   /* inf, nan */
    return rlx_bits_f32(sign | u);
}

static inline uint16_t rlx_f32_to_f16(float f) {
    uint32_t u = rlx_f32_bits(f), sign = (u >> 16) & 0x8000, a = u & 0x7fffffffu;
    /* normals: rebias, round to nearest even on the 13 bits dropped */
    uint32_t n = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    /* subnormals: + 0.5 puts the f16 mantissa in the low bits, rounded (to
     * nearest even) by the addition */
    uint32_t s = rlx_f32_bits(rlx_bits_f32(a) + 0.5f) - 0x3f000000u;
    uint32_t r = a < 0x38800000u ? s : n;
    r = a >= 0x477ff000u ? 0x7c00u : r;                           /* rounds to inf */
    r = a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) : r;     /* nan */
    return (uint16_t)(sign | r);
}

static inline float rlx_bf16_to_f32(uint16_t h) { return rlx_bits_f32((uint32_t)h << 16); }

static inline uint16_t rlx_f32_to_bf16(float f) {
    uint32_t u = rlx_f32_bits(f);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : r);   /* nan: quiet */
}

/* FNV-1a, 64 bits: the model hash. */
uint64_t rlx_fnv1a(uint64_t h, const void *data, size_t n);
#define RLX_FNV_SEED 0xcbf29ce484222325ull

/* Kernel library. */
#define I(x) int64_t x;
#define F(x) double x;
#define A(x) int64_t x[RK_MAX_RANK];
#define K(name, fields, doc) \
    typedef struct { fields } rk_##name##_params; \
    int rk_##name(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);
#define KI(name, impl, doc) \
    int rk_##name##_##impl(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);
#include "rk_kernels.def"
#undef KI
#undef K
#undef I
#undef F
#undef A

/* The command-line harness of --emit-main (rlx_main.c): reads inputs from
 * .npy files, runs, writes outputs; see rlx_main.c for its flags. It works
 * through the model's own API, so every target's generated code can use it:
 * set_threads may be NULL (a GPU target), and describe names what runs the
 * kernels for --bench (the instruction set, the GPU device). */
typedef struct {
    const rlx_model_info *info;
    int (*init)(rlx_model **m);
    int (*load_weights)(rlx_model *m, const char *path);
    int (*run)(rlx_model *m, const void *const *inputs, void *const *outputs);
    void (*free)(rlx_model *m);
    int (*set_threads)(rlx_model *m, int nthreads);
    const char *(*describe)(const rlx_model *m);
} rlx_model_api;
int rlx_main(int argc, char **argv, const rlx_model_api *api);
/* The same for a C model built with rlxc --embed-weights: the weights image
 * linked into the program (len bytes) is used unless --weights PATH is given. */
int rlx_main_embedded(int argc, char **argv, const rlx_model_api *api, const void *weights, size_t len);
/* Debug builds of rlxc check (rlxc's dump_values): generated code passes
 * each value here right after the thunk that wrote it; the harness's --dump
 * DIR writes it as DIR/vNNNNN.npy with a line in DIR/index.tsv (step, value,
 * node, op, file); without --dump it does nothing. */
int rlx_dump_value(const char *value, const char *node, const char *op, int dtype, int rank, const int64_t *dims,
                   const void *data);
/* describe for the C target: "isa=avx512" */
const char *rlx_describe_cpu(const rlx_model *m);

/* Scratch bytes per thread of conv2d_f32's GEMM method (rk_convgemm.c). */
size_t rk_conv2d_scratch(int64_t ocg, int64_t kdim, int64_t nblk, int transposed);

/* conv2d_f32's method 3 (rk_convgemm.c): a grouped convolution of a few
 * output channels per group (ResNeXt's and RegNet's 3x3), which AVX-512
 * and AVX2 builds compute directly, without im2col, with method 1's sums (its K
 * blocks: K = cg kh kw <= 512, at most two of the GEMM's KC, each block's sums
 * added to the one before; taps in its order, one fma each, padding as 0), and
 * portable builds by method 1 on the same unpacked weights.
 * Where it applies; and its geometry, which rlxc and the kernel share: output
 * rows in bands of `band`, each band's input copied as sw phases per (input
 * channel, kernel row) of `s` floats per output row, so that tap kx of
 * output column x of band row r is element r s + x + kx / sw of phase kx % sw
 * (plane floats apart: a band's rows plus room for vectors past the end). */
enum { RK_GC_MAX_OCG = 32, RK_GC_BAND = 256 };
static inline int rk_conv2d_grouped_ok(int64_t group, int64_t cg, int64_t ocg, int64_t kh, int64_t kw, int64_t sh,
                                       int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl) {
    return group > 1 && cg >= 1 && ocg >= 1 && ocg <= RK_GC_MAX_OCG && kh >= 1 && kh <= 7 && kw >= 1 && kw <= 7 &&
           cg * kh * kw <= 512 && sh == sw && (sw == 1 || sw == 2) && dh == 1 && dw == 1 && pt >= 0 && pl >= 0;
}
typedef struct {
    int64_t s, band, plane, planes, cols;   /* cols: a band's columns rounded up to 64 */
} rk_gc_geom;
static inline rk_gc_geom rk_conv2d_grouped_geom(int64_t cg, int64_t kh, int64_t kw, int64_t sw, int64_t oh,
                                                int64_t ow) {
    rk_gc_geom g;
    g.s = ow + (kw - 1) / sw;
    g.band = RK_GC_BAND / (g.s > 0 ? g.s : 1);
    if (g.band > oh) g.band = oh;
    if (g.band < 1) g.band = 1;
    g.cols = (g.band * g.s + 63) / 64 * 64;
    g.plane = g.cols + 16;   /* the last vectors of a band read up to (kw - 1) / sw < 16 past cols */
    g.planes = cg * kh * sw;
    return g;
}
/* Scratch bytes per thread of method 3's direct form: the planes, the
 * weights as K x 16, K tap offsets and the sums of 16 channels. */
static inline size_t rk_conv2d_grouped_scratch(int64_t cg, int64_t kh, int64_t kw, int64_t sw, int64_t oh,
                                               int64_t ow) {
    rk_gc_geom g = rk_conv2d_grouped_geom(cg, kh, kw, sw, oh, ow);
    int64_t k = cg * kh * kw;
    return (size_t)(g.planes * g.plane + k * RK_GC_MAX_OCG + RK_GC_MAX_OCG * g.cols) * sizeof(float) +
           (size_t)k * sizeof(int64_t) + 4 * 64;
}
/* Scratch bytes per thread of conv_transpose_f32's product path (rk_conv.c;
 * in_dims, k: its 3 spatial axes); 0 where it has none. */
size_t rk_conv_transpose_scratch(int64_t c, int64_t oc, int64_t group, const int64_t *k, const int64_t *in_dims);
/* rk_mixed.c: conv2d_f32, matmul_f32 and gemm_f32 whose dtype params are not
 * all f32 (operands stored in f16 or bf16, weights in int8) run here; every
 * thread needs rk_mixed_scratch() bytes. */
int rk_conv2d_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);
int rk_matmul_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);
int rk_gemm_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);
int rk_conv_pwdw_mixed(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);
size_t rk_mixed_scratch(void);
size_t rk_conv_pwdw_mixed_scratch(int64_t e, int64_t w, int64_t ow, int64_t sh, int64_t rows);
/* conv_pool_f32: one band's convolution rows (oc channels, rows pooled
 * rows), the input rows they read, and the convolution's own scratch. */
size_t rk_conv_pool_scratch(int64_t c, int64_t w, int64_t oc, int64_t ow, int64_t kh, int64_t kw, int64_t sh,
                            int64_t pkh, int64_t psh, int64_t rows);
/* conv_pwdw_f32: the expanded rows of one band (e channels) and the GEMM's packing. */
size_t rk_conv_pwdw_scratch(int64_t c, int64_t e, int64_t w, int64_t sh, int64_t rows);

/* The depthwise kernel that takes a vector of channels in its lanes
 * (rk_convgemm.c) holds a whole padded plane of at most RK_DWL_IN
 * positions, input and output planes of at most RK_DWL_OUT and kernels of
 * at most RK_DWL_TAPS taps. conv_pwdw_small_f32 (a 1x1 expansion computed
 * transposed, then a depthwise convolution on its positions x channels
 * product) applies to the depthwise convolutions whose plane fits it
 * whole; rlxc and the kernel share the test. Its scratch per thread: the
 * product (h w x e), the GEMM's packing, and 16 planes. */
enum { RK_DWL_IN = 2048, RK_DWL_OUT = 1024, RK_DWL_TAPS = 64 };
static inline int rk_conv_pwdw_small_ok(int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t kh, int64_t kw,
                                        int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl) {
    if (h < 1 || w < 1 || oh < 1 || ow < 1 || kh < 1 || kw < 1 || sh < 1 || sw < 1 || dh < 1 || dw < 1 || pt < 0 ||
        pl < 0 || kh * kw > RK_DWL_TAPS || h * w > RK_DWL_OUT || oh * ow > RK_DWL_OUT)
        return 0;
    int64_t hp = (oh - 1) * sh + (kh - 1) * dh + 1, wp = (ow - 1) * sw + (kw - 1) * dw + 1;
    return hp * wp <= RK_DWL_IN;
}
size_t rk_conv_pwdw_small_scratch(int64_t c, int64_t e, int64_t hw);

/* Winograd 3x3 convolution (rk_wino.c): scratch bytes per thread, and the
 * compile-time weight transform (w: oc x c x 3 x 3 -> u, rk_wino_weights_size
 * bytes; tmp: (m+2)^2 * oc * c floats of workspace). */
size_t rk_wino_scratch(int64_t m, int64_t c, int64_t ocb, int64_t tb);
size_t rk_wino_weights_size(int64_t m, int64_t oc, int64_t c, int64_t ocb);
void rk_wino_pack_weights(int64_t m, int64_t oc, int64_t c, int64_t ocb, const float *w, float *tmp, float *u);

typedef int (*rk_kernel_fn)(rk_ctx *, const void *, const void *const *, void *const *);

#ifdef __cplusplus
}
#endif
#endif
