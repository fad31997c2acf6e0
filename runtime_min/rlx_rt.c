/* rlx_rt.c - runtime_min core: status strings, dtype table, model arena,
 * weights loading and validation, half-precision conversion, FNV-1a.
 *
 * rlx_model_new makes the only allocations a model needs (the model struct,
 * its arena, the kernels' scratch and the worker threads); the weights are
 * read into one aligned buffer when loaded, in pieces of LOAD_CHUNK bytes,
 * each summed for the checksum (rlx_sum_add) right after it is read, while
 * it is still in cache, so that verifying costs no second pass over memory.
 * Nothing here prints or exits: every failure is a status code.
 *
 * Built with -DRLX_NO_STDIO (a microcontroller without a filesystem) the
 * file-reading path is left out: rlx_load_weights_file returns RLX_E_NOFILE
 * and never touches <stdio.h>, so weights come from a buffer only (rlxc
 * --embed-weights writes one as a const array; see docs/edge.md).
 */
#include "rlx_rt.h"

#ifndef RLX_NO_STDIO
#include <stdio.h>
#endif
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/mman.h>   /* madvise, where the compiler's mode declares it */
#endif

const char *rlx_status_str(int status) {
    switch (status) {
#define X(id, code, msg) case code: return msg;
        RLX_STATUSES(X)
#undef X
    }
    return "unknown status";
}

static const struct { const char *name; int size; } dtype_table[] = {
#define X(id, name, bytes, ctype, npy, onnx) {name, bytes},
#include "rlx_dtypes.def"
#undef X
};

const char *rlx_dtype_name(int dtype) {
    return dtype >= 0 && dtype < RLX_NDTYPES ? dtype_table[dtype].name : "?";
}
int rlx_dtype_size(int dtype) { return dtype >= 0 && dtype < RLX_NDTYPES ? dtype_table[dtype].size : 0; }

/* Aligned allocation without posix_memalign, so that the runtime needs only
 * C99: over-allocate and keep the original pointer just below the block.
 * On Linux, where <sys/mman.h> declares MADV_HUGEPAGE (gcc's and clang's
 * default GNU modes; not strict -std=c99), a block of 2 MB or more (weights,
 * arena, scratch) starts on a 2 MB boundary and its whole 2 MB pages are
 * advised to be huge pages (transparent huge pages in "madvise" mode, the
 * common default): a run streams every weight once, and with 4 KB pages
 * that is a TLB miss every 4 KB (MobileNetV2 0.7-1.8% and ResNet-18 1.3%
 * faster at one thread in alternating runs; no change measurable at two).
 * Only pages wholly inside the block are advised, so no more memory is
 * resident than the block touches; where the kernel refuses, the advice is
 * ignored. */
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#define RLX_HUGE ((size_t)1 << 21)
#endif
static void *aligned_alloc64(size_t n, void **base, int advise) {
    size_t al = RLX_ALIGN;
#if defined(RLX_HUGE)
    if (n >= RLX_HUGE) al = RLX_HUGE;
#endif
    (void)advise;
    if (n > SIZE_MAX - al) return NULL;
    uint8_t *p = malloc(n + al);
    if (!p) return NULL;
    *base = p;
    uintptr_t a = ((uintptr_t)p + al) & ~(uintptr_t)(al - 1);
#if defined(RLX_HUGE)
    if (al == RLX_HUGE && advise) (void)madvise((void *)a, n & ~(RLX_HUGE - 1), MADV_HUGEPAGE);
#endif
    return (void *)a;
}

/* With several threads, each thread's scratch starts RLX_THREAD_GAP bytes
 * (2 MB) or a multiple past the one before, not right after it: on a Zen 5
 * VM, two threads whose scratch regions (the Winograd kernel's V and M,
 * ~550 KB each) lay next to each other ran SqueezeNet's 55x55 3x3 layers at
 * 2 threads no faster than at 1 (230 us a layer), and 140 us with the
 * regions 1.5 MB or more apart; the whole model 6% faster (alternating
 * runs of one binary, bench/layers.py's instrumentation). The gap is
 * address space only: a thread's untouched pages never become resident,
 * and a block of small per-thread parts is not advised to huge pages
 * (which would make each part's 2 MB resident). */
#define RLX_THREAD_GAP ((size_t)1 << 21)

int rlx_model_set_threads(rlx_model *m, int nthreads) {
    if (!m || nthreads < 1 || nthreads > 1024) return RLX_E_ARG;
    rk_pool_free(m->ctx.pool);
    m->ctx.pool = NULL;
    free(m->scratch_alloc);
    m->scratch_alloc = NULL;
    m->ctx.scratch = NULL;
    m->ctx.nthreads = 1;
    size_t per = (size_t)m->info->scratch_per_thread;
    int advise = 1;
    if (per && nthreads > 1) {   /* each thread's scratch on its own RLX_THREAD_GAP boundary (above) */
        if (per > SIZE_MAX - RLX_THREAD_GAP) return RLX_E_NOMEM;
        advise = per >= RLX_THREAD_GAP;
        per = (per + RLX_THREAD_GAP - 1) / RLX_THREAD_GAP * RLX_THREAD_GAP;
    }
    if (per) {
        if (per > (SIZE_MAX - RLX_THREAD_GAP) / (size_t)nthreads) return RLX_E_NOMEM;
        void *base;
        uint8_t *s = aligned_alloc64(per * (size_t)nthreads, &base, advise);
        if (!s) return RLX_E_NOMEM;
        m->ctx.scratch = s;
        m->scratch_alloc = base;
    }
    m->ctx.scratch_per_thread = per;
    int st = rk_pool_new(nthreads, &m->ctx.pool);
    if (st) return st;
    m->ctx.nthreads = nthreads;
    return RLX_OK;
}

int rlx_model_new(const rlx_model_info *info, rlx_model **out) {
    if (!info || !out) return RLX_E_ARG;
    *out = NULL;
    int st = rlx_isa_init();   /* the kernels' instruction set, once */
    if (st) return st;
    rlx_model *m = calloc(1, sizeof *m);
    if (!m) return RLX_E_NOMEM;
    m->info = info;
    m->ctx.nthreads = 1;
    void *base = NULL;
    /* sizes are uint64 in the model: one that size_t (a 32-bit host) or the
     * alignment slack cannot hold is memory this host does not have */
    if (info->arena_bytes >= SIZE_MAX / 2) {
        free(m);
        return RLX_E_NOMEM;
    }
    size_t bytes = (size_t)(info->arena_bytes ? info->arena_bytes : RLX_ALIGN);
    uint8_t *arena = aligned_alloc64(bytes, &base, 1);
    if (!arena) {
        free(m);
        return RLX_E_NOMEM;
    }
    memset(arena, 0, bytes);   /* defined bytes in padding, for SIMD tails */
    m->arena = arena;
    m->arena_alloc = base;
    st = rlx_model_set_threads(m, info->nthreads > 0 ? info->nthreads : 1);
    if (st) {
        rlx_model_free(m);
        return st;
    }
    *out = m;
    return RLX_OK;
}

/* without snprintf: the core needs no <stdio.h> (RLX_NO_STDIO) */
const char *rlx_describe_cpu(const rlx_model *m) {
    static char buf[32] = "isa=";
    (void)m;
    const char *name = rlx_isa_name();
    size_t n = strlen(name);
    if (n > sizeof buf - 5) n = sizeof buf - 5;
    memcpy(buf + 4, name, n);
    buf[4 + n] = 0;
    return buf;
}

static void drop_weights(rlx_model *m) {
    free(m->weights_alloc);
    m->weights_alloc = NULL;
    m->weights = NULL;
}

void rlx_model_free(rlx_model *m) {
    if (!m) return;
    drop_weights(m);
    rk_pool_free(m->ctx.pool);
    free(m->scratch_alloc);
    free(m->arena_alloc);
    free(m);
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

int rlx_check_weights_header(const rlx_model_info *info, const uint8_t *buf, size_t len) {
    if (len < 8) return len >= 4 && memcmp(buf, RLX_WEIGHTS_MAGIC, 4) ? RLX_E_MAGIC : RLX_E_TRUNCATED;
    if (memcmp(buf, RLX_WEIGHTS_MAGIC, 4)) return RLX_E_MAGIC;
    if (rd32(buf + 4) != RLX_WEIGHTS_VERSION) return RLX_E_VERSION;
    if (len < RLX_WEIGHTS_HEADER) return RLX_E_TRUNCATED;
    if (rd64(buf + 8) != info->hash) return RLX_E_MODEL;
    if (info->weights_bytes >= SIZE_MAX / 2) return RLX_E_NOMEM;   /* the loaders add alignment to it */
    uint64_t data_bytes = rd64(buf + 16), data_off = rd64(buf + 24);
    if (data_off != RLX_WEIGHTS_HEADER || data_bytes != info->weights_bytes || rd32(buf + 32) != info->nweights)
        return RLX_E_SIZE;
    if (len - RLX_WEIGHTS_HEADER < data_bytes) return RLX_E_TRUNCATED;
    return RLX_OK;
}

/* ---- the data checksum ----
 *
 * The data are read as 32-bit words w[0..] (host order: the weights file is
 * little-endian and read in place, so only little-endian hosts use it),
 * a final partial word padded with zero bytes. Word i goes to lane
 * j = i % 16, which keeps two running sums mod 2^32:
 *     a[j] += w[i];   b[j] += a[j];
 * (Fletcher's two sums, mod 2^32 so they vectorize: 16 lanes are a block of
 * 64 bytes, four SSE2 or two AVX2 vectors of each sum.) The checksum is
 *     A = sum of a[j],  B = sum of (2j + 1) * b[j]  (mod 2^32),  A | B << 32.
 * Any single flipped bit is caught: flipping bit k of w[i] (k < 32) adds or
 * subtracts 2^k, so A, the plain sum of all words mod 2^32, changes by
 * +-2^k, which is not 0 mod 2^32 for k < 32. B adds what A misses: each
 * b[j] weighs a word by its distance from the end of its lane, so swapped
 * or moved words change it (an odd multiplier keeps a change in one lane a
 * change of B). The data length is not part of it; the header's `data
 * bytes` must equal the model's anyway. */
void rlx_sum_init(rlx_sum *s) { memset(s, 0, sizeof *s); }

/* Whole blocks. With GCC or clang the 16 lanes of each sum live in
 * vector registers (generic vectors): four of 4 lanes (SSE2, NEON), or two
 * of 8 where the compiler targets AVX2. gcc -O2 kept the plain arrays of
 * the fallback below in memory and ran at a third of the speed, and 8-lane
 * vectors without AVX went through the stack. All compute the same lanes,
 * each word loaded once, by one memcpy per register (through an array gcc
 * stored and reloaded it). */
#if defined(__GNUC__) && defined(__AVX2__)
typedef uint32_t rlx_sum_vec __attribute__((vector_size(32)));

static void sum_blocks(uint32_t *sa, uint32_t *sb, const uint8_t *p, size_t nblocks) {
    rlx_sum_vec a0, a1, b0, b1, w0, w1;
    memcpy(&a0, sa, 32);
    memcpy(&a1, sa + 8, 32);
    memcpy(&b0, sb, 32);
    memcpy(&b1, sb + 8, 32);
    for (size_t k = 0; k < nblocks; k++, p += RLX_SUM_BLOCK) {
        memcpy(&w0, p, 32);
        memcpy(&w1, p + 32, 32);
        a0 += w0;
        a1 += w1;
        b0 += a0;
        b1 += a1;
    }
    memcpy(sa, &a0, 32);
    memcpy(sa + 8, &a1, 32);
    memcpy(sb, &b0, 32);
    memcpy(sb + 8, &b1, 32);
}
#elif defined(__GNUC__)
typedef uint32_t rlx_sum_vec __attribute__((vector_size(16)));

static void sum_blocks(uint32_t *sa, uint32_t *sb, const uint8_t *p, size_t nblocks) {
    rlx_sum_vec a0, a1, a2, a3, b0, b1, b2, b3, w0, w1, w2, w3;
    memcpy(&a0, sa, 16);
    memcpy(&a1, sa + 4, 16);
    memcpy(&a2, sa + 8, 16);
    memcpy(&a3, sa + 12, 16);
    memcpy(&b0, sb, 16);
    memcpy(&b1, sb + 4, 16);
    memcpy(&b2, sb + 8, 16);
    memcpy(&b3, sb + 12, 16);
    for (size_t k = 0; k < nblocks; k++, p += RLX_SUM_BLOCK) {
        memcpy(&w0, p, 16);
        memcpy(&w1, p + 16, 16);
        memcpy(&w2, p + 32, 16);
        memcpy(&w3, p + 48, 16);
        a0 += w0;
        a1 += w1;
        a2 += w2;
        a3 += w3;
        b0 += a0;
        b1 += a1;
        b2 += a2;
        b3 += a3;
    }
    memcpy(sa, &a0, 16);
    memcpy(sa + 4, &a1, 16);
    memcpy(sa + 8, &a2, 16);
    memcpy(sa + 12, &a3, 16);
    memcpy(sb, &b0, 16);
    memcpy(sb + 4, &b1, 16);
    memcpy(sb + 8, &b2, 16);
    memcpy(sb + 12, &b3, 16);
}
#else
static void sum_blocks(uint32_t *a, uint32_t *b, const uint8_t *p, size_t nblocks) {
    uint32_t w[RLX_SUM_LANES];
    for (size_t k = 0; k < nblocks; k++, p += RLX_SUM_BLOCK) {
        memcpy(w, p, RLX_SUM_BLOCK);
        for (int j = 0; j < RLX_SUM_LANES; j++) {
            a[j] += w[j];
            b[j] += a[j];
        }
    }
}
#endif

/* The default x86-64 build compiles this file for the baseline (SSE2), where
 * the sums take eight vector adds per block; on a CPU with AVX-512 one
 * register holds all 16 lanes and a block takes two (rlx_isa.c says whether
 * the kernels run AVX-512, and so whether this may). The same lanes, so the
 * same sums: it is only faster (ResNet-18's 47 MB in the page cache: docs/robustness.md). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__AVX2__) && (defined(__clang__) || __GNUC__ >= 6)
#define RLX_SUM_WIDE 1
typedef uint32_t rlx_sum_vec16 __attribute__((vector_size(64)));

__attribute__((target("avx512f"))) static void sum_blocks_512(uint32_t *sa, uint32_t *sb, const uint8_t *p,
                                                              size_t nblocks) {
    rlx_sum_vec16 a, b, w;
    memcpy(&a, sa, 64);
    memcpy(&b, sb, 64);
    for (size_t k = 0; k < nblocks; k++, p += RLX_SUM_BLOCK) {
        memcpy(&w, p, 64);
        a += w;
        b += a;
    }
    memcpy(sa, &a, 64);
    memcpy(sb, &b, 64);
}
#endif

void rlx_sum_add(rlx_sum *s, const void *data, size_t n) {
    const uint8_t *p = data;
    uint32_t a[RLX_SUM_LANES], b[RLX_SUM_LANES], w[RLX_SUM_LANES];
    memcpy(a, s->a, sizeof a);
    memcpy(b, s->b, sizeof b);
#if defined(RLX_SUM_WIDE)
    if (rlx_isa_sum_wide()) sum_blocks_512(a, b, p, n / RLX_SUM_BLOCK);
    else
#endif
        sum_blocks(a, b, p, n / RLX_SUM_BLOCK);
    p += n / RLX_SUM_BLOCK * RLX_SUM_BLOCK;
    n %= RLX_SUM_BLOCK;
    if (n) {   /* the last, partial block: zero bytes after the data */
        memset(w, 0, sizeof w);
        memcpy(w, p, n);
        for (int j = 0; j < RLX_SUM_LANES; j++) {
            a[j] += w[j];
            b[j] += a[j];
        }
    }
    memcpy(s->a, a, sizeof a);
    memcpy(s->b, b, sizeof b);
}

uint64_t rlx_sum_end(const rlx_sum *s) {
    uint32_t sa = 0, sb = 0;
    for (int j = 0; j < RLX_SUM_LANES; j++) {
        sa += s->a[j];
        sb += (uint32_t)(2 * j + 1) * s->b[j];
    }
    return (uint64_t)sb << 32 | sa;
}

uint64_t rlx_weights_checksum(const void *data, size_t n) {
    rlx_sum s;
    rlx_sum_init(&s);
    rlx_sum_add(&s, data, n);
    return rlx_sum_end(&s);
}

/* Pieces of this many bytes are read (or copied) and summed at once: a
 * multiple of RLX_SUM_BLOCK that stays in a core's L2 cache. */
#define LOAD_CHUNK ((size_t)256 << 10)

#define HEADER_CHECKSUM 40   /* offset of the checksum in the header */

int rlx_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {
    return rlx_load_weights_buffer_flags(m, buf, len, 0);
}

int rlx_load_weights_buffer_flags(rlx_model *m, const void *buf, size_t len, unsigned flags) {
    if (!m || (!buf && len)) return RLX_E_ARG;
    int st = rlx_check_weights_header(m->info, buf, len);
    if (st) return st;
    const uint8_t *data = (const uint8_t *)buf + RLX_WEIGHTS_HEADER;
    size_t n = (size_t)m->info->weights_bytes;
    int check = !(flags & RLX_LOAD_NO_CHECKSUM);
    uint64_t want = rd64((const uint8_t *)buf + HEADER_CHECKSUM);
    if (((uintptr_t)data & (RLX_ALIGN - 1)) == 0) {
        if (check && rlx_weights_checksum(data, n) != want) return RLX_E_CHECKSUM;
        drop_weights(m);
        m->weights = (uint8_t *)data;   /* borrowed: the caller keeps buf alive */
        return RLX_OK;
    }
    void *base;
    uint8_t *w = aligned_alloc64(n + 1, &base, 1);
    if (!w) return RLX_E_NOMEM;
    rlx_sum sum;
    rlx_sum_init(&sum);
    for (size_t off = 0; off < n; off += LOAD_CHUNK) {
        size_t k = n - off < LOAD_CHUNK ? n - off : LOAD_CHUNK;
        memcpy(w + off, data + off, k);
        if (check) rlx_sum_add(&sum, w + off, k);
    }
    if (check && rlx_sum_end(&sum) != want) {
        free(base);
        return RLX_E_CHECKSUM;
    }
    drop_weights(m);
    m->weights = w;
    m->weights_alloc = base;
    return RLX_OK;
}

int rlx_load_weights_file(rlx_model *m, const char *path) { return rlx_load_weights_file_flags(m, path, 0); }

int rlx_load_weights_file_flags(rlx_model *m, const char *path, unsigned flags) {
    if (!m || !path) return RLX_E_ARG;
#ifdef RLX_NO_STDIO
    (void)flags;
    return RLX_E_NOFILE;   /* no files in this build: rlx_load_weights_buffer */
#else
    FILE *f = fopen(path, "rb");
    if (!f) return RLX_E_NOFILE;
    uint8_t hdr[RLX_WEIGHTS_HEADER];
    size_t got = fread(hdr, 1, sizeof hdr, f);
    int st = rlx_check_weights_header(m->info, hdr, got);
    /* The header alone can't tell truncation of the data: check it below. */
    if (st && st != RLX_E_TRUNCATED) {
        fclose(f);
        return st;
    }
    if (got < RLX_WEIGHTS_HEADER) {
        fclose(f);
        return RLX_E_TRUNCATED;
    }
    size_t n = (size_t)m->info->weights_bytes;
    void *base;
    uint8_t *w = aligned_alloc64(n + 1, &base, 1);
    if (!w) {
        fclose(f);
        return RLX_E_NOMEM;
    }
    int check = !(flags & RLX_LOAD_NO_CHECKSUM);
    rlx_sum sum;
    rlx_sum_init(&sum);
    size_t off = 0;
    while (off < n) {
        size_t k = n - off < LOAD_CHUNK ? n - off : LOAD_CHUNK;
        size_t rd = fread(w + off, 1, k, f);
        if (rd != k) break;
        if (check) rlx_sum_add(&sum, w + off, k);
        off += k;
    }
    int err = ferror(f);
    fclose(f);
    if (err || off != n) {
        free(base);
        return err ? RLX_E_IO : RLX_E_TRUNCATED;
    }
    if (check && rlx_sum_end(&sum) != rd64(hdr + HEADER_CHECKSUM)) {
        free(base);
        return RLX_E_CHECKSUM;
    }
    drop_weights(m);
    m->weights = w;
    m->weights_alloc = base;
    return RLX_OK;
#endif
}

uint64_t rlx_fnv1a(uint64_t h, const void *data, size_t n) {
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
