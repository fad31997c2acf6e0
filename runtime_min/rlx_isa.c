/* rlx_isa.c - which instruction set the kernels run with, chosen once.
 *
 * A default build of the runtime library on x86-64 (RK_DISPATCH) holds
 * the kernel files with instruction-set specific code three times
 * (rk_isa.h): portable (the x86-64 baseline), avx2 (AVX2, FMA, F16C) and
 * avx512 (AVX-512 F/CD/VL/BW/DQ plus the AVX2 set). rlx_isa_init, which rlx_model_new (so NAME_init) calls, reads
 * CPUID and the OS's saved-state mask (XGETBV: the OS must save the YMM,
 * resp. ZMM and opmask, registers, or the instructions fault) and picks the
 * widest variant the machine runs; RLX_ISA=portable|avx2|avx512 forces one
 * instead (tests, bug reports), and naming one the CPU lacks is the status
 * RLX_E_ISA rather than a crash. Each such kernel's plain name (rk_conv2d_f32,
 * the one generated code calls) is defined here as a small entry that calls
 * the chosen variant; a binary linked with --gc-sections keeps only the
 * entries and variants of the kernels its schedule calls.
 *
 * The variants compute the same operations in the same order as a build of
 * the same sources with -march=native for that instruction set (the kernels
 * choose their code paths by __AVX2__ / __AVX512F__, and nothing is
 * contracted into FMAs that the source doesn't write), so a default build
 * and a -march=native one give the same bits.
 *
 * Without RK_DISPATCH (rlxc's own copy of the runtime, other architectures,
 * or a library built with the user's own -march) there is one variant, the
 * one the compiler flags chose, and RLX_ISA may only name that one.
 */
#include <stdlib.h>
#include <string.h>

#include "rlx_rt.h"
#include "rk_rnn.h"

enum { ISA_PORTABLE, ISA_AVX2, ISA_AVX512, ISA_NEON };
static const char *const isa_names[] = {"portable", "avx2", "avx512", "neon"};

#if defined(RK_DISPATCH)
#if !defined(__x86_64__) || !defined(__GNUC__)
#error "RK_DISPATCH needs x86-64 and a GCC-compatible compiler (cpuid.h)"
#endif
#include <cpuid.h>

static int xcr0_has(unsigned mask) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & mask) == mask;
}

/* The widest variant this CPU and OS run. */
static int detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return ISA_PORTABLE;
    const unsigned sse3 = 1u << 0, fma = 1u << 12, ssse3 = 1u << 9, sse41 = 1u << 19, sse42 = 1u << 20,
                   popcnt = 1u << 23, osxsave = 1u << 27, avx = 1u << 28, f16c = 1u << 29;
    unsigned need1 = sse3 | ssse3 | fma | sse41 | sse42 | popcnt | osxsave | avx | f16c;
    if ((c & need1) != need1 || !xcr0_has(0x6)) return ISA_PORTABLE;   /* XMM and YMM state */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return ISA_PORTABLE;
    const unsigned avx2 = 1u << 5, f = 1u << 16, dq = 1u << 17, cd = 1u << 28, bw = 1u << 30, vl = 1u << 31;
    if (!(b & avx2)) return ISA_PORTABLE;
    unsigned need512 = f | dq | cd | bw | vl;
    if ((b & need512) == need512 && xcr0_has(0xe6)) return ISA_AVX512;   /* + opmask, ZMM 0-15 and 16-31 */
    return ISA_AVX2;
}
#define ISA_BUILT ISA_AVX512   /* the widest variant compiled in */
#else
/* one variant: what the compiler flags made of the kernel sources */
#if defined(__AVX512F__)
#define ISA_ONLY ISA_AVX512
#elif defined(__AVX2__) && defined(__FMA__)
#define ISA_ONLY ISA_AVX2
#elif defined(__aarch64__) && defined(__ARM_NEON)
#define ISA_ONLY ISA_NEON
#else
#define ISA_ONLY ISA_PORTABLE
#endif
static int detect(void) { return ISA_ONLY; }
#endif

/* -1 until rlx_isa_init has run. Written by every init with the same value
 * for the same environment, so concurrent inits agree. */
static int isa_current = -1;

int rlx_isa_init(void) {
    static int detected = -1;
    if (detected < 0) detected = detect();
    int want = detected;
    const char *env = getenv("RLX_ISA");
    if (env && *env && strcmp(env, "auto")) {
        want = -1;
        for (int i = 0; i < (int)(sizeof isa_names / sizeof isa_names[0]); i++)
            if (!strcmp(env, isa_names[i])) want = i;
        if (want < 0) return RLX_E_ISA;
#if defined(RK_DISPATCH)
        if (want > detected || want > ISA_BUILT) return RLX_E_ISA;   /* this CPU can't run it */
#else
        if (want != detected) return RLX_E_ISA;   /* not compiled in */
#endif
    }
    isa_current = want;
    return RLX_OK;
}

const char *rlx_isa_name(void) {
    if (isa_current < 0 && rlx_isa_init() != RLX_OK) return "none";
    return isa_names[isa_current];
}

#if defined(RK_DISPATCH)
static int isa_level(void) {
    int l = isa_current;
    if (l < 0) {
        /* a kernel called before any NAME_init: the detected variant */
        if (rlx_isa_init() != RLX_OK) isa_current = detect();
        l = isa_current;
    }
    return l;
}

int rlx_isa_sum_wide(void) { return isa_level() == ISA_AVX512; }

/* Each entry of RK_ISA_KERNELS: its three variants declared, the chosen one
 * called. */
#define RK_ENTRY(fn)                                                                              \
    int fn##_portable(rk_ctx *ctx, const void *params, const void *const *in, void *const *out); \
    int fn##_avx2(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);     \
    int fn##_avx512(rk_ctx *ctx, const void *params, const void *const *in, void *const *out);   \
    int fn(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {            \
        switch (isa_level()) {                                                                    \
        case ISA_AVX512: return fn##_avx512(ctx, params, in, out);                                \
        case ISA_AVX2: return fn##_avx2(ctx, params, in, out);                                    \
        default: return fn##_portable(ctx, params, in, out);                                      \
        }                                                                                         \
    }
RK_ISA_KERNELS(RK_ENTRY)

/* The f32 recurrent kernel's activations (rk_rnn_f32.c): a helper, not a
 * kernel, dispatched the same way. */
void rk_rnn_act_f32_portable(float *y, int64_t n, int64_t act);
void rk_rnn_act_f32_avx2(float *y, int64_t n, int64_t act);
void rk_rnn_act_f32_avx512(float *y, int64_t n, int64_t act);
void rk_rnn_act_f32(float *y, int64_t n, int64_t act) {
    switch (isa_level()) {
    case ISA_AVX512: rk_rnn_act_f32_avx512(y, n, act); break;
    case ISA_AVX2: rk_rnn_act_f32_avx2(y, n, act); break;
    default: rk_rnn_act_f32_portable(y, n, act); break;
    }
}
void rk_rnn_lstm_gates_f32_portable(const float *pre, const float *x, float *c, float *hb, float *y, int64_t h,
                                    int64_t n);
void rk_rnn_lstm_gates_f32_avx2(const float *pre, const float *x, float *c, float *hb, float *y, int64_t h,
                                int64_t n);
void rk_rnn_lstm_gates_f32_avx512(const float *pre, const float *x, float *c, float *hb, float *y, int64_t h,
                                  int64_t n);
void rk_rnn_lstm_gates_f32(const float *pre, const float *x, float *c, float *hb, float *y, int64_t h, int64_t n) {
    switch (isa_level()) {
    case ISA_AVX512: rk_rnn_lstm_gates_f32_avx512(pre, x, c, hb, y, h, n); break;
    case ISA_AVX2: rk_rnn_lstm_gates_f32_avx2(pre, x, c, hb, y, h, n); break;
    default: rk_rnn_lstm_gates_f32_portable(pre, x, c, hb, y, h, n); break;
    }
}
#endif

#if !defined(RK_DISPATCH)
/* one variant: this file and rlx_rt.c are compiled for the same instruction set */
int rlx_isa_sum_wide(void) { return 0; }
#endif
