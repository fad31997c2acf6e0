/* render.c - one GPU launch as kernel source, in GLSL, CUDA C++ or MSL.
 *
 * The source is, in order: the language's header (GLSL's #version and the
 * extensions the kernel's types need), its prelude (prelude_<lang>.kl: the
 * kernel signature, ids, shared memory, barriers, type and math names), the
 * 64-bit switches and the scalar prelude (scalar.kl, scalar64.kl), the
 * buffer declarations (GLSL: one block per space and element type the
 * kernel uses, aliasing bindings 0 and 1), the operand accessors X/L/S<i>
 * (gpu.h), the launch's constants and constant arrays, then the template,
 * or for an elementwise region a body printed from its step list. Only
 * these tables differ per language; the templates are the same text for
 * all three. Everything printed depends only on the launch, so the same
 * launch gives the same bytes (kernels are deduplicated by their text).
 */
#include <math.h>
#include <string.h>

#include "gpu.h"
#include "../../runtime_min/rlx_gpu.h"

extern const char *const rlx_gpu_sources[][2];   /* embedded .kl files (build/gen/gpu_sources.c) */

static const char *source_of(const char *name) {
    for (int i = 0; rlx_gpu_sources[i][0]; i++)
        if (!strcmp(rlx_gpu_sources[i][0], name)) return rlx_gpu_sources[i][1];
    RLX_ASSERT(!"no such GPU template");
    return NULL;
}

/* ---- types ---- */

int rlx_gtype_size(RlxGType t) {
    static const int size[G_NTYPES] = {4, 8, 2, 2, 1, 1, 2, 2, 4, 4, 8, 8, 1, 8};
    return size[t];
}

RlxGType rlx_gtype_of(RlxDType dt) {
    switch (dt) {
    case RLX_F32: return G_F32;
    case RLX_F64: return G_F64;
    case RLX_F16: return G_F16;
    case RLX_BF16: return G_BF16;
    case RLX_I8: return G_I8;
    case RLX_U8: return G_U8;
    case RLX_I16: return G_I16;
    case RLX_U16: return G_U16;
    case RLX_I32: return G_I32;
    case RLX_U32: return G_U32;
    case RLX_I64: return G_I64;
    case RLX_U64: return G_U64;
    case RLX_BOOL: return G_BOOL;
    default: RLX_ASSERT(!"dtype"); return G_F32;
    }
}

RlxGType rlx_gtype_bytes(int64_t esize) {
    switch (esize) {
    case 1: return G_U8;
    case 2: return G_U16;
    case 4: return G_U32;
    case 8: return G_X64;
    default: RLX_ASSERT(!"element size"); return G_U8;
    }
}

/* the element type in the buffer */
static const char *storage_name(RlxGType t, RlxLang lang) {
    static const char *const names[RLX_NLANGS][G_NTYPES] = {
        {"float", "double", "float16_t", "uint16_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "int", "uint",
         "int64_t", "uint64_t", "uint8_t", "uvec2"},
        {"float", "double", "__half", "unsigned short", "signed char", "unsigned char", "short", "unsigned short",
         "int", "unsigned int", "long long", "unsigned long long", "unsigned char", "uint2"},
        {"float", "double", "half", "ushort", "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
         "uchar", "uint2"},
    };
    return names[lang][t];
}

/* short name for GLSL's buffer blocks */
static const char *short_name(RlxGType t) {
    static const char *const names[G_NTYPES] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i16", "u16",
                                                "i32", "u32", "i64", "u64", "b8", "x64"};
    return names[t];
}

/* the type kernels compute in */
static const char *compute_name(RlxGType t) {
    switch (t) {
    case G_F32: case G_F16: case G_BF16: return "float";
    case G_F64: return "rlx_f64";
    case G_I8: case G_I16: case G_I32: return "int";
    case G_U8: case G_U16: case G_U32: case G_BOOL: return "uint";
    case G_I64: return "rlx_i64";
    case G_U64: return "rlx_u64";
    default: return "rlx_x64";
    }
}

static const char *load_conv(RlxGType t, RlxLang lang, const char *e) {
    switch (t) {
    case G_F16: return lang == RLX_LANG_CUDA ? rlx_fmt("__half2float(%s)", e) : rlx_fmt("float(%s)", e);
    case G_BF16: return rlx_fmt("rs_bf16_to_f32(uint(%s))", e);
    case G_I8: case G_I16: return rlx_fmt("int(%s)", e);
    case G_U8: case G_U16: case G_BOOL: return rlx_fmt("uint(%s)", e);
    default: return e;
    }
}

static const char *store_conv(RlxGType t, RlxLang lang, const char *v) {
    const char *st = storage_name(t, lang);
    switch (t) {
    case G_F16:
        if (lang == RLX_LANG_CUDA) return rlx_fmt("__float2half_rn(%s)", v);
        return rlx_fmt("%s(%s)", st, v);
    case G_BF16: return lang == RLX_LANG_CUDA ? rlx_fmt("(unsigned short)rs_f32_to_bf16(%s)", v)
                                               : rlx_fmt("%s(rs_f32_to_bf16(%s))", st, v);
    case G_I8: case G_U8: case G_I16: case G_U16: case G_BOOL:
        return lang == RLX_LANG_CUDA ? rlx_fmt("(%s)(%s)", st, v) : rlx_fmt("%s(%s)", st, v);
    default: return v;
    }
}

static uint32_t type_needs(RlxGType t) {
    switch (t) {
    case G_F16: case G_BF16: case G_I16: case G_U16: return RLX_GPU_NEED_16BIT;
    case G_I8: case G_U8: case G_BOOL: return RLX_GPU_NEED_8BIT;
    case G_I64: case G_U64: return RLX_GPU_NEED_INT64;
    case G_F64: return RLX_GPU_NEED_F64;
    default: return 0;
    }
}

/* ---- elementwise regions ---- */

static RlxGType step_type(RlxDType dt) { return rlx_gtype_of(dt); }
static int is_float(RlxGType t) { return t == G_F32 || t == G_F16 || t == G_BF16 || t == G_F64; }
static int is_unsigned(RlxGType t) { return t == G_U8 || t == G_U16 || t == G_U32 || t == G_U64 || t == G_BOOL; }

/* a literal of the compute type of t */
static const char *lit(double v, RlxGType t, RlxLang lang) {
    if (t == G_F64) {
        if (isnan(v)) return "rlx_f64(RLX_FBITS(0x7fc00000u))";
        if (isinf(v)) return v > 0 ? "rlx_f64(RLX_FBITS(0x7f800000u))" : "rlx_f64(RLX_FBITS(0xff800000u))";
        const char *s = rlx_fmt("%.17g", v);
        if (!strpbrk(s, ".eE")) s = rlx_fmt("%s.0", s);
        return rlx_fmt("rlx_f64(%s%s)", s, lang == RLX_LANG_GLSL ? "lf" : "");
    }
    float f = (float)v;
    if (isnan(f)) return "RLX_FBITS(0x7fc00000u)";
    if (isinf(f)) return f > 0 ? "RLX_FBITS(0x7f800000u)" : "RLX_FBITS(0xff800000u)";
    const char *s = rlx_fmt("%.9g", (double)f);
    if (!strpbrk(s, ".eE")) s = rlx_fmt("%s.0", s);
    return rlx_fmt("%sf", s);
}

/* x converted from compute type `from` to compute type `to` (saturating
 * float to integer, NaN to 0; integer to narrower wraps) */
static const char *convert(const char *e, RlxGType from, RlxGType to) {
    const char *cf = compute_name(from), *ct = compute_name(to);
    if (!strcmp(cf, ct)) {
        /* same compute type, narrower storage: wrap to the target's width */
        switch (to) {
        case G_I8: return rlx_fmt("RLX_SEXT(%s, 8)", e);
        case G_I16: return rlx_fmt("RLX_SEXT(%s, 16)", e);
        case G_U8: return from == G_BOOL ? e : rlx_fmt("(%s & 0xffu)", e);
        case G_U16: return rlx_fmt("(%s & 0xffffu)", e);
        case G_BOOL: return rlx_fmt("uint(%s != 0u)", e);
        default: return e;
        }
    }
    if (to == G_BOOL) return is_float(from) ? rlx_fmt("uint(%s != 0.0f)", e) : rlx_fmt("uint(%s != %s(0))", e, cf);
    if (is_float(to)) return rlx_fmt("%s(%s)", ct, e);
    if (is_float(from)) {
        const char *x = from == G_F64 ? rlx_fmt("float(%s)", e) : e;
        switch (to) {
        case G_I8: return rlx_fmt("rs_f2i32(%s, -128.0f, 128.0f, -128, 127)", x);
        case G_I16: return rlx_fmt("rs_f2i32(%s, -32768.0f, 32768.0f, -32768, 32767)", x);
        case G_I32: return rlx_fmt("rs_f2i32(%s, -2147483648.0f, 2147483648.0f, int(0x80000000u), 2147483647)", x);
        case G_U8: return rlx_fmt("rs_f2u32(%s, 256.0f, 255u)", x);
        case G_U16: return rlx_fmt("rs_f2u32(%s, 65536.0f, 65535u)", x);
        case G_U32: return rlx_fmt("rs_f2u32(%s, 4294967296.0f, 4294967295u)", x);
        case G_I64: return rlx_fmt("rs_f2i64(%s)", x);
        case G_U64: return rlx_fmt("rs_f2u64(%s)", x);
        default: RLX_ASSERT(!"cast"); return e;
        }
    }
    /* integer to integer: through the target's compute type, then wrap */
    const char *v = rlx_fmt("%s(%s)", ct, e);
    switch (to) {
    case G_I8: return rlx_fmt("RLX_SEXT(%s, 8)", v);
    case G_I16: return rlx_fmt("RLX_SEXT(%s, 16)", v);
    case G_U8: return rlx_fmt("(%s & 0xffu)", v);
    case G_U16: return rlx_fmt("(%s & 0xffffu)", v);
    default: return v;
    }
}

/* a narrow integer result wrapped to its width after every step, as the C
 * printer does (emit_c.c wrap_narrow) */
static const char *wrap(const char *e, RlxGType t) {
    switch (t) {
    case G_I8: return rlx_fmt("RLX_SEXT(%s, 8)", e);
    case G_I16: return rlx_fmt("RLX_SEXT(%s, 16)", e);
    case G_U8: return rlx_fmt("(%s & 0xffu)", e);
    case G_U16: return rlx_fmt("(%s & 0xffffu)", e);
    default: return e;
    }
}

/* signed integer arithmetic through unsigned (wrapping, defined in C++) */
static const char *iop(const char *a, const char *op, const char *b, RlxGType t) {
    if (t == G_I64) return rlx_fmt("rlx_i64(rlx_u64(%s) %s rlx_u64(%s))", a, op, b);
    return rlx_fmt("int(uint(%s) %s uint(%s))", a, op, b);
}

static const char *step_expr(const RlxEltStep *s, const char **a, const RlxGType *at, RlxLang lang) {
    RlxGType t = step_type(s->dtype);
    int fl = is_float(t), un = is_unsigned(t), dbl = t == G_F64, wide = t == G_I64 || t == G_U64;
    const char *d = dbl ? "_d" : wide ? "_64" : "";
    const char *zero = fl ? lit(0, t, lang) : rlx_fmt("%s(0)", compute_name(t));
    (void)zero;
    switch (s->op) {
    case RLX_OP_IDENTITY: return a[0];
    case RLX_OP_ADD: return fl || un ? rlx_fmt("(%s + %s)", a[0], a[1]) : iop(a[0], "+", a[1], t);
    case RLX_OP_SUB: return fl || un ? rlx_fmt("(%s - %s)", a[0], a[1]) : iop(a[0], "-", a[1], t);
    case RLX_OP_MUL: return fl || un ? rlx_fmt("(%s * %s)", a[0], a[1]) : iop(a[0], "*", a[1], t);
    case RLX_OP_DIV:
        if (fl) return rlx_fmt("(%s / %s)", a[0], a[1]);
        return rlx_fmt("rs_%sdiv%s(%s, %s)", un ? "u" : "i", wide ? "_64" : "", a[0], a[1]);
    case RLX_OP_POW:
        if (fl) return rlx_fmt("rs_pow%s(%s, %s)", d, a[0], convert(a[1], at[1], t));
        if (is_float(at[1])) return convert(rlx_fmt("rs_pow(float(%s), float(%s))", a[0], a[1]), G_F32, t);
        if (wide) return rlx_fmt("%s(rs_ipow_64(rlx_i64(%s), rlx_i64(%s)))", compute_name(t), a[0], a[1]);
        return un ? rlx_fmt("rs_upow(%s, uint(%s))", a[0], a[1]) : rlx_fmt("rs_ipow(%s, int(%s))", a[0], a[1]);
    case RLX_OP_MAX:
        if (fl) return rlx_fmt("rs_max%s(%s, %s)", d, a[0], a[1]);
        return rlx_fmt("(%s > %s ? %s : %s)", a[0], a[1], a[0], a[1]);
    case RLX_OP_MIN:
        if (fl) return rlx_fmt("rs_min%s(%s, %s)", d, a[0], a[1]);
        return rlx_fmt("(%s < %s ? %s : %s)", a[0], a[1], a[0], a[1]);
    case RLX_OP_EQUAL: return rlx_fmt("uint(%s == %s)", a[0], a[1]);
    case RLX_OP_LESS: return rlx_fmt("uint(%s < %s)", a[0], a[1]);
    case RLX_OP_GREATER: return rlx_fmt("uint(%s > %s)", a[0], a[1]);
    case RLX_OP_LESSOREQUAL: return rlx_fmt("uint(%s <= %s)", a[0], a[1]);
    case RLX_OP_GREATEROREQUAL: return rlx_fmt("uint(%s >= %s)", a[0], a[1]);
    case RLX_OP_AND: return rlx_fmt("uint(%s != 0u && %s != 0u)", a[0], a[1]);
    case RLX_OP_OR: return rlx_fmt("uint(%s != 0u || %s != 0u)", a[0], a[1]);
    case RLX_OP_XOR: return rlx_fmt("uint((%s != 0u) != (%s != 0u))", a[0], a[1]);
    case RLX_OP_NOT: return rlx_fmt("uint(%s == 0u)", a[0]);
    case RLX_OP_WHERE: return rlx_fmt("(%s != 0u ? %s : %s)", a[0], a[1], a[2]);
    case RLX_OP_NEG:
        if (fl || un) return rlx_fmt("(-%s)", a[0]);
        return wide ? rlx_fmt("rlx_i64(rlx_u64(0) - rlx_u64(%s))", a[0]) : rlx_fmt("int(0u - uint(%s))", a[0]);
    case RLX_OP_ABS:
        if (fl) return rlx_fmt("rs_abs%s(%s)", d, a[0]);
        if (un) return a[0];
        return rlx_fmt("(%s < %s ? %s : %s)", a[0], compute_name(t)[0] == 'i' ? "0" : "rlx_i64(0)",
                       wide ? rlx_fmt("rlx_i64(rlx_u64(0) - rlx_u64(%s))", a[0]) : rlx_fmt("int(0u - uint(%s))", a[0]),
                       a[0]);
    case RLX_OP_SQRT: return rlx_fmt("rs_sqrt%s(%s)", d, a[0]);
    case RLX_OP_RECIPROCAL: return rlx_fmt("rs_reciprocal%s(%s)", d, a[0]);
    case RLX_OP_EXP: return rlx_fmt("rs_exp%s(%s)", d, a[0]);
    case RLX_OP_LOG: return rlx_fmt("rs_log%s(%s)", d, a[0]);
    case RLX_OP_ERF: return rlx_fmt("rs_erf%s(%s)", d, a[0]);
    case RLX_OP_TANH: return rlx_fmt("rs_tanh%s(%s)", d, a[0]);
    case RLX_OP_SIGMOID: return rlx_fmt("rs_sigmoid%s(%s)", d, a[0]);
    case RLX_OP_SOFTPLUS: return rlx_fmt("rs_softplus%s(%s)", d, a[0]);
    case RLX_OP_HARDSWISH: return rlx_fmt("rs_hardswish%s(%s)", d, a[0]);
    case RLX_OP_RELU:
        if (fl) return rlx_fmt("rs_relu%s(%s)", d, a[0]);
        return un ? a[0] : rlx_fmt("(%s > %s ? %s : %s)", a[0], wide ? "rlx_i64(0)" : "0", a[0],
                                   wide ? "rlx_i64(0)" : "0");
    case RLX_OP_LEAKYRELU: return rlx_fmt("rs_leakyrelu%s(%s, %s)", d, a[0], lit(s->alpha, t, lang));
    case RLX_OP_ELU: return rlx_fmt("rs_elu%s(%s, %s)", d, a[0], lit(s->alpha, t, lang));
    case RLX_OP_HARDSIGMOID:
        return rlx_fmt("rs_hardsigmoid%s(%s, %s, %s)", d, a[0], lit(s->alpha, t, lang), lit(s->beta, t, lang));
    case RLX_OP_CLIP: {
        const char *lo = s->nargs > 1 && a[1] ? a[1] : NULL, *hi = s->nargs > 2 && a[2] ? a[2] : NULL;
        const char *e = a[0];
        if (lo) e = rlx_fmt("(%s < %s ? %s : %s)", e, lo, lo, e);
        if (hi) e = rlx_fmt("(%s > %s ? %s : %s)", e, hi, hi, e);
        return e;
    }
    case RLX_OP_CAST: case RLX_OP_CASTLIKE: return convert(a[0], at[0], t);
    case RLX_OP_ISNAN: return rlx_fmt("rs_isnan%s(%s)", at[0] == G_F64 ? "_d" : "", a[0]);
    case RLX_OP_ISINF:
        return rlx_fmt("rs_isinf%s(%s, %du, %du)", at[0] == G_F64 ? "_d" : "", a[0], s->alpha != 0, s->beta != 0);
    case RLX_OP_SIN: return rlx_fmt("rs_sin%s(%s)", d, a[0]);
    case RLX_OP_COS: return rlx_fmt("rs_cos%s(%s)", d, a[0]);
    case RLX_OP_TAN: return rlx_fmt("rs_tan%s(%s)", d, a[0]);
    case RLX_OP_ASIN: return rlx_fmt("rs_asin%s(%s)", d, a[0]);
    case RLX_OP_ACOS: return rlx_fmt("rs_acos%s(%s)", d, a[0]);
    case RLX_OP_ATAN: return rlx_fmt("rs_atan%s(%s)", d, a[0]);
    case RLX_OP_SINH: return rlx_fmt("rs_sinh%s(%s)", d, a[0]);
    case RLX_OP_COSH: return rlx_fmt("rs_cosh%s(%s)", d, a[0]);
    case RLX_OP_ASINH: return rlx_fmt("rs_asinh%s(%s)", d, a[0]);
    case RLX_OP_ACOSH: return rlx_fmt("rs_acosh%s(%s)", d, a[0]);
    case RLX_OP_ATANH: return rlx_fmt("rs_atanh%s(%s)", d, a[0]);
    case RLX_OP_FLOOR: return rlx_fmt("rs_floor%s(%s)", d, a[0]);
    case RLX_OP_CEIL: return rlx_fmt("rs_ceil%s(%s)", d, a[0]);
    case RLX_OP_ROUND: return rlx_fmt("rs_round%s(%s)", d, a[0]);
    case RLX_OP_MISH: return rlx_fmt("rs_mish%s(%s)", d, a[0]);
    case RLX_OP_SOFTSIGN: return rlx_fmt("rs_softsign%s(%s)", d, a[0]);
    case RLX_OP_SIGN:
        if (fl) return rlx_fmt("rs_sign%s(%s)", d, a[0]);
        if (un) return rlx_fmt("%s(%s > %s(0))", compute_name(t), a[0], compute_name(t));
        return wide ? rlx_fmt("rs_isign_64(%s)", a[0]) : rlx_fmt("rs_isign(%s)", a[0]);
    case RLX_OP_MOD:
        if (fl) return rlx_fmt("rs_%smod%s(%s, %s)", s->alpha != 0 ? "f" : "", d, a[0], a[1]);
        if (un) return rlx_fmt("rs_umod%s(%s, %s)", wide ? "_64" : "", a[0], a[1]);
        return rlx_fmt("rs_i%smod%s(%s, %s)", s->alpha != 0 ? "f" : "", wide ? "_64" : "", a[0], a[1]);
    case RLX_OP_BITSHIFT:
        return rlx_fmt("rs_sh%s%s(%s, %s)", s->alpha != 0 ? "l" : "r", wide ? "_64" : "", a[0], a[1]);
    case RLX_OP_MEAN: {
        RlxBuf sum = {0};
        for (int j = 0; j < s->nargs; j++) rlx_buf_printf(&sum, "%s%s", j ? " + " : "", a[j]);
        return rlx_fmt("rs_mean%s(%s, %s)", d, sum.data, lit(s->alpha, t, lang));
    }
    case RLX_OP_PRELU:
        if (fl) return rlx_fmt("rs_prelu%s(%s, %s)", d, a[0], a[1]);
        if (un) return a[0];
        return rlx_fmt("(%s < %s ? %s : %s)", a[0], wide ? "rlx_i64(0)" : "0", iop(a[1], "*", a[0], t), a[0]);
    case RLX_OP_SELU:
        return rlx_fmt("rs_selu%s(%s, %s, %s)", d, a[0], lit(s->alpha, t, lang), lit(s->beta, t, lang));
    case RLX_OP_CELU: return rlx_fmt("rs_celu%s(%s, %s)", d, a[0], lit(s->alpha, t, lang));
    case RLX_OP_THRESHOLDEDRELU: return rlx_fmt("rs_thresholdedrelu%s(%s, %s)", d, a[0], lit(s->alpha, t, lang));
    case RLX_OP_SHRINK:
        return rlx_fmt("rs_shrink%s(%s, %s, %s)", d, a[0], lit(s->alpha, t, lang), lit(s->beta, t, lang));
    default: RLX_ASSERT(!"elementwise op without a GPU form"); return "";
    }
}

/* Whether the region's steps need a type's arithmetic (not only its storage). */
static uint32_t region_needs(const RlxThunk *t) {
    uint32_t n = 0;
    for (int k = 0; k < t->nsteps; k++) {
        RlxGType g = step_type(t->steps[k].dtype);
        if (g == G_I64 || g == G_U64) n |= RLX_GPU_NEED_INT64;
        if (g == G_F64) n |= RLX_GPU_NEED_F64;
    }
    return n;
}

static void region_body(RlxBuf *b, const RlxGraph *g, const RlxThunk *t, RlxLang lang) {
    RlxLoopNest L;
    rlx_region_loops(g, t, &L);
    rlx_emit(b, "RLX_KERNEL_BEGIN(KNAME, LX, 1, 1)");
    rlx_emit(b, "RLX_BODY");
    b->indent++;
    rlx_emit(b, "uint o = RLX_GID;");
    rlx_emit(b, "if (o >= N) return;");
    /* the coordinates of o over the loop nest (row-major; the output is dense) */
    if (L.rank > 1) rlx_emit(b, "uint r = o;");
    for (int i = L.rank - 1; i >= 0; i--) {
        if (L.rank == 1) rlx_emit(b, "uint i0 = o;");
        else if (i == 0) rlx_emit(b, "uint i0 = r;");
        else {
            rlx_emit(b, "uint i%d = r %% %lluu;", i, (unsigned long long)L.dims[i]);
            rlx_emit(b, "r = r / %lluu;", (unsigned long long)L.dims[i]);
        }
    }
    const char **argx = rlx_alloc(sizeof(char *) * (size_t)(t->nin + t->nsteps));
    RlxGType *argt = rlx_alloc(sizeof(RlxGType) * (size_t)(t->nin + t->nsteps));
    for (int i = 0; i < t->nin; i++) {
        if (rlx_region_operand(t, i) < 0) continue;
        RlxGType gt = rlx_gtype_of(g->v[t->in[i].value].dtype);
        RlxBuf ix = {0};
        for (int d = 0; d < L.rank; d++) {
            int64_t s = L.stride[i][d];
            if (!s) continue;
            if (ix.len) rlx_buf_printf(&ix, " + ");
            if (s == 1) rlx_buf_printf(&ix, "i%d", d);
            else rlx_buf_printf(&ix, "i%d * %lluu", d, (unsigned long long)s);
        }
        rlx_emit(b, "%s a%d = L%d(%s);", compute_name(gt), i, i, ix.len ? ix.data : "0u");
        argx[i] = rlx_fmt("a%d", i);
        argt[i] = gt;
    }
    const char *res = NULL;
    RlxGType rest = G_F32;
    for (int k = 0; k < t->nsteps; k++) {
        const RlxEltStep *s = &t->steps[k];
        const char *a[4] = {0};
        RlxGType at[4] = {G_F32, G_F32, G_F32, G_F32};
        for (int j = 0; j < s->nargs; j++) {
            int ai = s->args[j];
            if (ai == RLX_ARG_ABSENT) continue;
            if (ai >= 0) {
                if (t->in[ai].value < 0) continue;
                a[j] = argx[ai];
                at[j] = argt[ai];
            } else {
                a[j] = argx[t->nin + (-ai - 1)];
                at[j] = argt[t->nin + (-ai - 1)];
            }
        }
        RlxGType ct = step_type(s->dtype);
        if (rlx_step_args_in_result_type(s->op)) {
            for (int j = 0; j < s->nargs; j++)
                if (a[j] && strcmp(compute_name(at[j]), compute_name(ct))) a[j] = convert(a[j], at[j], ct);
        }
        if (s->op == RLX_OP_WHERE)
            for (int j = 1; j < 3; j++)
                if (a[j] && strcmp(compute_name(at[j]), compute_name(ct))) a[j] = convert(a[j], at[j], ct);
        const char *e = wrap(step_expr(s, a, at, lang), ct);
        rlx_emit(b, "%s s%d = %s;", compute_name(ct), k, e);
        argx[t->nin + k] = rlx_fmt("s%d", k);
        argt[t->nin + k] = ct;
        res = argx[t->nin + k];
        rest = ct;
    }
    RlxGType yt = rlx_gtype_of(g->v[t->out[0].value].dtype);
    const char *v = strcmp(compute_name(rest), compute_name(yt)) ? convert(res, rest, yt) : res;
    rlx_emit(b, "S%d(o, %s);", t->nin, v);
    b->indent--;
    rlx_emit(b, "RLX_KERNEL_END");
}

/* ---- the kernel ---- */

static void emit_text(RlxBuf *b, const char *text) { rlx_buf_put(b, text, strlen(text)); }

/* The language's header, prelude and scalar functions for a kernel (or a
 * module of kernels) that needs `need` and uses f16 storage if f16;
 * `title`, when given, is a comment line after the header. */
static void emit_preamble(RlxBuf *b, RlxLang lang, uint32_t need, int f16, const char *title) {
    if (lang == RLX_LANG_GLSL) {
        rlx_emit(b, "#version 450");
        if (need & RLX_GPU_NEED_16BIT) rlx_emit(b, "#extension GL_EXT_shader_16bit_storage : require");
        if (need & RLX_GPU_NEED_8BIT) rlx_emit(b, "#extension GL_EXT_shader_8bit_storage : require");
        if (need & RLX_GPU_NEED_INT64) rlx_emit(b, "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require");
    } else if (lang == RLX_LANG_CUDA && f16) {
        rlx_emit(b, "#include <cuda_fp16.h>");
    }
    if (title) rlx_emit(b, "%s", title);
    emit_text(b, source_of(lang == RLX_LANG_GLSL ? "prelude_glsl" : lang == RLX_LANG_CUDA ? "prelude_cuda" : "prelude_msl"));
    if (need & RLX_GPU_NEED_INT64) rlx_emit(b, "#define RLX_HAS_I64 1");
    if (need & RLX_GPU_NEED_F64) rlx_emit(b, "#define RLX_HAS_F64 1");
    emit_text(b, source_of("scalar"));
    if (need & (RLX_GPU_NEED_INT64 | RLX_GPU_NEED_F64)) emit_text(b, source_of("scalar64"));
}

const char *rlx_gpu_preamble(RlxLang lang, uint32_t needs) {
    RlxBuf b = {0};
    emit_preamble(&b, lang, needs, (needs & RLX_GPU_NEED_16BIT) != 0, NULL);
    rlx_buf_put(&b, "", 1);
    return b.data;
}

const char *rlx_gpu_render(const RlxGraph *g, const RlxGpuLaunch *l, RlxLang lang, const char *name, uint32_t *needs) {
    return rlx_gpu_render_split(g, l, lang, name, needs, NULL);
}

const char *rlx_gpu_render_split(const RlxGraph *g, const RlxGpuLaunch *l, RlxLang lang, const char *name,
                                 uint32_t *needs, size_t *body_at) {
    RlxBuf b = {0};
    uint32_t need = 0;
    int used[2][G_NTYPES];
    memset(used, 0, sizeof used);
    for (int i = 0; i < l->nops; i++) {
        used[l->ops[i].slot.space == RLX_SPACE_WEIGHTS][l->ops[i].type] = 1;
        need |= type_needs(l->ops[i].type);
    }
    if (!l->tmpl) need |= region_needs(l->thunk);
    for (int i = 0; i < l->nconst; i++) {
        if (!strcmp(l->consts[i].name, "RLX_NEED_INT64")) need |= RLX_GPU_NEED_INT64;
        if (!strcmp(l->consts[i].name, "SG_REDUCE")) need |= RLX_GPU_NEED_SUBGROUP;   /* launch.c */
    }
    *needs = need;
    emit_preamble(&b, lang, need, used[0][G_F16] || used[1][G_F16],
                  rlx_fmt("// %s: %s", name, l->tmpl ? l->tmpl : "elementwise region"));
    if (body_at) *body_at = b.len;

    /* buffers and operands */
    rlx_emit(&b, "// operands: element offsets in rlx_p.off[i]");
    if (lang == RLX_LANG_GLSL)
        for (int sp = 0; sp < 2; sp++)
            for (int t = 0; t < G_NTYPES; t++)
                if (used[sp][t])
                    rlx_emit(&b, "layout(std430, set = 0, binding = %d) %sbuffer Rlx%c_%s { %s rlx_%c_%s[]; };", sp,
                             sp ? "readonly " : "", sp ? 'W' : 'A', short_name((RlxGType)t),
                             storage_name((RlxGType)t, lang), sp ? 'W' : 'A', short_name((RlxGType)t));
    for (int i = 0; i < l->nops; i++) {
        const RlxGpuOperand *o = &l->ops[i];
        int w = o->slot.space == RLX_SPACE_WEIGHTS;
        const char *st = storage_name(o->type, lang);
        const char *x;
        if (lang == RLX_LANG_GLSL) x = rlx_fmt("rlx_%c_%s[RLX_OFF(%d) + uint(k)]", w ? 'W' : 'A', short_name(o->type), i);
        else if (lang == RLX_LANG_CUDA) x = rlx_fmt("((%s%s *)rlx_%c)[RLX_OFF(%d) + (k)]", w ? "const " : "", st, w ? 'W' : 'A', i);
        else x = rlx_fmt("((device %s%s *)rlx_%c)[RLX_OFF(%d) + (k)]", w ? "const " : "", st, w ? 'W' : 'A', i);
        rlx_emit(&b, "#define X%d(k) %s", i, x);
        rlx_emit(&b, "#define L%d(k) %s", i, load_conv(o->type, lang, rlx_fmt("X%d(k)", i)));
        if (o->write) rlx_emit(&b, "#define S%d(k, v) X%d(k) = %s", i, i, store_conv(o->type, lang, "(v)"));
    }

    /* constants */
    rlx_emit(&b, "#define KNAME %s", name);
    rlx_emit(&b, "#define LX %uu", l->local[0]);
    rlx_emit(&b, "#define LY %uu", l->local[1]);
    for (int i = 0; i < l->nconst; i++) {
        int64_t v = l->consts[i].v;
        RLX_ASSERT(v >= -2147483647LL - 1 && v <= 4294967295LL);
        if (v < 0) rlx_emit(&b, "#define %s (%lld)", l->consts[i].name, (long long)v);
        else rlx_emit(&b, "#define %s %lld%s", l->consts[i].name, (long long)v, v > 2147483647LL ? "u" : "");
    }
    rlx_emit(&b, "#define RLX_GID ((RLX_WG_Y * uint(GX) + RLX_WG_X) * LX + RLX_LID_X)");
    for (int i = 0; i < l->ndefs; i++) rlx_emit(&b, "#define %s %s", l->defs[i].name, l->defs[i].text);
    for (int i = 0; i < l->narr; i++) {
        const RlxGpuArray *a = &l->arrays[i];
        RlxBuf v = {0};
        for (int k = 0; k < a->n; k++) {
            RLX_ASSERT(a->v[k] >= -2147483647LL - 1 && a->v[k] <= 2147483647LL);
            rlx_buf_printf(&v, "%s%lld", k ? ", " : "", (long long)a->v[k]);
        }
        int n = a->n ? a->n : 1;
        const char *vals = a->n ? v.data : "0";
        if (lang == RLX_LANG_GLSL) rlx_emit(&b, "const int %s[%d] = int[%d](%s);", a->name, n, n, vals);
        else if (lang == RLX_LANG_CUDA) rlx_emit(&b, "__constant__ int %s[%d] = {%s};", a->name, n, vals);
        else rlx_emit(&b, "constant int %s[%d] = {%s};", a->name, n, vals);
    }
    if (l->tmpl) emit_text(&b, source_of(l->tmpl));
    else region_body(&b, g, l->thunk, lang);
    rlx_buf_put(&b, "", 1);
    return b.data;
}
