/* emit_c.c - the C target: prints the thunk list as model.c and model.h.
 *
 * model.c is one straight-line function (NAME_schedule) with a call per
 * kernel thunk, its parameters as a designated initializer and its operands
 * as constant offsets into the arena (A) or the weights (W), and an inline
 * loop nest per elementwise region. Before each thunk a comment names the
 * source node and the shapes. NAME_run copies the inputs into their arena
 * slots, runs the schedule, and copies the outputs out; it allocates
 * nothing. The text depends only on the graph and the plan (no pointers,
 * hash orders or times), so the output is byte-identical run to run.
 *
 * Two options add to that text and change nothing else: --embed-weights
 * declares NAME_weights in NAME.h (c_weights_file prints the array
 * into its own file, never into model.c: huge initializers make compilers
 * crawl), and the debug option dump_values (rlxc check) passes every value
 * a thunk writes to rlx_dump_value right after that thunk, before the
 * arena bytes are reused.
 */
#include <math.h>
#include <string.h>

#include "rlx.h"
#include "c.h"

typedef struct {
    const RlxGraph *g;
    const RlxPlan *plan;
    const char *name;
    RlxBuf *b;
} Emit;

/* A float literal that is valid C for its type (keeps a '.' or 'e'). */
static const char *float_lit(double v, int is_double) {
    if (isnan(v)) return is_double ? "(double)NAN" : "NAN";
    if (isinf(v)) return v > 0 ? (is_double ? "(double)INFINITY" : "INFINITY") : (is_double ? "(-(double)INFINITY)" : "(-INFINITY)");
    char *s = is_double ? rlx_fmt("%.17g", v) : rlx_fmt("%.9g", (double)(float)v);
    if (!strpbrk(s, ".eEn")) s = rlx_fmt("%s.0", s);
    return is_double ? s : rlx_fmt("%sf", s);
}

static const char *c_type(RlxDType dt) {
    switch (dt) {
    case RLX_F32: return "float";
    case RLX_F64: return "double";
    case RLX_F16: case RLX_BF16: case RLX_U16: return "uint16_t";
    case RLX_I8: return "int8_t";
    case RLX_U8: case RLX_BOOL: return "uint8_t";
    case RLX_I16: return "int16_t";
    case RLX_I32: return "int32_t";
    case RLX_U32: return "uint32_t";
    case RLX_I64: return "int64_t";
    case RLX_U64: return "uint64_t";
    default: RLX_ASSERT(!"dtype"); return "";
    }
}

/* The type elementwise code computes in for values of a dtype. */
typedef enum { CT_FLOAT, CT_DOUBLE, CT_INT, CT_UINT, CT_BOOL } CType;
static CType compute_type(RlxDType dt) {
    switch (dt) {
    case RLX_F32: case RLX_F16: case RLX_BF16: return CT_FLOAT;
    case RLX_F64: return CT_DOUBLE;
    case RLX_U8: case RLX_U16: case RLX_U32: case RLX_U64: return CT_UINT;
    case RLX_BOOL: return CT_BOOL;
    default: return CT_INT;
    }
}
static const char *ct_name(CType t) {
    static const char *names[] = {"float", "double", "int64_t", "uint64_t", "int"};
    return names[t];
}

static const char *dtype_enum(RlxDType dt) {
    static const char *names[] = {
#define X(id, name, bytes, ctype, npy, onnx) "RLX_" #id,
#include "../../runtime_min/rlx_dtypes.def"
#undef X
    };
    return names[dt];
}

static const char *slot_expr(const RlxSlot *s) {
    if (s->value < 0) return "NULL";
    return rlx_fmt("%s + %lld", s->space == RLX_SPACE_WEIGHTS ? "W" : "A", (long long)s->off);
}

/* ---- comments ---- */

static const char *value_desc(const RlxGraph *g, int v) {
    if (v < 0) return "(none)";
    const RlxValue *x = &g->v[v];
    return rlx_fmt("%s%s %s", x->name, rlx_shape_str(x), rlx_dtype_name(x->dtype));
}

/* Names in generated comments come from the model file: keep them from
 * closing the comment or breaking the line. */
const char *rlx_comment_safe(const char *s) {
    char *p = rlx_strdup(s);
    for (char *q = p; *q; q++) {
        if (*q == '\n' || *q == '\r' || (unsigned char)*q < 32) *q = ' ';
        if (q[0] == '*' && q[1] == '/') q[1] = '|';
        if (q[0] == '/' && q[1] == '*') q[1] = '|';
    }
    return p;
}

static void emit_thunk_comment(Emit *E, const RlxThunk *t, int step) {
    const RlxGraph *g = E->g;
    const RlxNode *n = &g->n[t->node];
    RlxBuf c = {0};
    rlx_buf_printf(&c, "%d: %s (%s) ", step, n->name, rlx_ops[n->op].name);
    for (int i = 0; i < n->nin; i++) rlx_buf_printf(&c, "%s%s", i ? ", " : "", value_desc(g, n->in[i]));
    rlx_buf_printf(&c, " -> ");
    for (int i = 0; i < n->nout; i++) rlx_buf_printf(&c, "%s%s", i ? ", " : "", value_desc(g, n->out[i]));
    rlx_emit(E->b, "/* %s */", rlx_comment_safe(c.data));
}

/* A C string literal's body: names come from the model file. */
static const char *c_string(const char *s) {
    RlxBuf b = {0};
    rlx_buf_printf(&b, "%s", "");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') rlx_buf_printf(&b, "\\%c", ch);
        else if (ch < 32 || ch >= 127) rlx_buf_printf(&b, "\\%03o", ch);
        else rlx_buf_printf(&b, "%c", ch);
    }
    return b.data;
}

/* dump_values: each arena value the thunk wrote, with its producer. */
static void emit_dumps(Emit *E, const RlxThunk *t) {
    const RlxGraph *g = E->g;
    for (int i = 0; i < t->nout; i++) {
        const RlxSlot *s = &t->out[i];
        if (s->value < 0 || s->space != RLX_SPACE_ARENA) continue;
        const RlxValue *v = &g->v[s->value];
        if (v->dtype == RLX_BF16) continue;   /* .npy has no bf16 */
        int p = v->producer >= 0 ? v->producer : t->node;
        RlxBuf d = {0};
        for (int j = 0; j < v->rank; j++) rlx_buf_printf(&d, "%s%lld", j ? ", " : "", (long long)v->dims[j]);
        rlx_emit(E->b, "if ((st = rlx_dump_value(\"%s\", \"%s\", \"%s\", %s, %d, (const int64_t[]){%s}, A + %lld))) return st;",
                 c_string(v->name), c_string(g->n[p].name), rlx_ops[g->n[p].op].name, dtype_enum(v->dtype), v->rank,
                 v->rank ? d.data : "0", (long long)s->off);
    }
}

/* ---- kernel calls ---- */

/* An int parameter as the reader wants it: dtypes and activations by name. */
static const char *int_param(const char *name, int64_t v) {
    static const char *acts[] = {"RS_ACT_NONE", "RS_ACT_RELU", "RS_ACT_CLIP", "RS_ACT_LEAKYRELU", "RS_ACT_SIGMOID",
                                 "RS_ACT_HARDSIGMOID", "RS_ACT_HARDSWISH", "RS_ACT_TANH", "RS_ACT_SILU",
                                 "RS_ACT_GELU"};
    size_t n = strlen(name);
    if (n >= 5 && !strcmp(name + n - 5, "dtype") && v >= 0 && v < RLX_NDTYPES) return dtype_enum((RlxDType)v);
    if (!strcmp(name, "act") && v >= 0 && v < (int64_t)(sizeof acts / sizeof acts[0])) return acts[v];
    return rlx_fmt("%lld", (long long)v);
}

/* A kernel call: the params as a designated initializer, wrapped at about
 * 100 columns, then the operands as offsets into A and W. */
static void emit_kernel(Emit *E, const RlxThunk *t) {
    const RlxKernelInfo *k = &rlx_kernels[t->kind];
    const char *f = k->fields;
    int slot = 0;
    const char **parts = rlx_alloc(sizeof(char *) * (size_t)(t->np + 1));
    int nparts = 0;
    while (*f) {
        char kind = f[0];
        const char *nm = f + 2;
        size_t nl = strcspn(nm, " ");
        const char *name = rlx_strndup(nm, nl);
        if (kind == 'i') {
            parts[nparts++] = rlx_fmt(".%s = %s", name, int_param(name, t->p[slot].i));
        } else if (kind == 'f') {
            parts[nparts++] = rlx_fmt(".%s = %s", name, float_lit(t->p[slot].f, 1));
        } else {
            /* arrays: up to the last nonzero entry; all-zero ones are omitted */
            int last = RK_MAX_RANK;
            while (last > 0 && t->p[slot + last - 1].i == 0) last--;
            if (last) {
                RlxBuf a = {0};
                rlx_buf_printf(&a, ".%s = {", name);
                for (int i = 0; i < last; i++) rlx_buf_printf(&a, "%s%lld", i ? ", " : "", (long long)t->p[slot + i].i);
                rlx_buf_printf(&a, "}");
                parts[nparts++] = a.data;
            }
        }
        slot += kind == 'a' ? RK_MAX_RANK : 1;
        f = nm + nl;
        while (*f == ' ') f++;
    }
    RlxBuf ins = {0}, outs = {0};
    for (int i = 0; i < t->nin; i++) rlx_buf_printf(&ins, "%s%s", i ? ", " : "", slot_expr(&t->in[i]));
    for (int i = 0; i < t->nout; i++) rlx_buf_printf(&outs, "%s%s", i ? ", " : "", slot_expr(&t->out[i]));
    const char *entry = t->impl ? rlx_fmt("%s_%s", k->name, rlx_kernel_impls[t->impl].name) : k->name;
    rlx_emit(E->b, "if ((st = rk_%s(ctx, &(const rk_%s_params){", entry, k->name);
    E->b->indent += 2;
    RlxBuf line = {0};
    for (int i = 0; i < nparts; i++) {
        if (line.len && line.len + strlen(parts[i]) > 90) {
            rlx_emit(E->b, "%s", line.data);
            line.len = 0;
            line.data[0] = 0;
        }
        rlx_buf_printf(&line, "%s%s%s", line.len ? " " : "", parts[i], i + 1 < nparts ? "," : "");
    }
    if (line.len) rlx_emit(E->b, "%s", line.data);
    if (!nparts) rlx_emit(E->b, "0");
    E->b->indent -= 2;
    rlx_emit(E->b, "    }, IN(%s), OUT(%s)))) return st;", t->nin ? ins.data : "NULL", outs.data);
}

/* ---- elementwise regions ---- */

static const char *index_expr(const RlxLoopNest *L, int o) {
    RlxBuf b = {0};
    for (int i = 0; i < L->rank; i++) {
        int64_t s = L->stride[o][i];
        if (!s) continue;
        if (b.len) rlx_buf_printf(&b, " + ");
        if (s == 1) rlx_buf_printf(&b, "i%d", i);
        else rlx_buf_printf(&b, "i%d * %lld", i, (long long)s);
    }
    return b.len ? b.data : "0";
}

static const char *load_expr(RlxDType dt, const char *elem) {
    switch (dt) {
    case RLX_F16: return rlx_fmt("rlx_f16_to_f32(%s)", elem);
    case RLX_BF16: return rlx_fmt("rlx_bf16_to_f32(%s)", elem);
    case RLX_F32: case RLX_F64: return elem;
    case RLX_BOOL: return rlx_fmt("(%s != 0)", elem);
    default: return rlx_fmt("(%s)%s", ct_name(compute_type(dt)), elem);
    }
}

/* Converts expression e of compute type `from` to dtype `to`'s compute
 * type: float to int saturates and maps NaN to 0 (LESSONS.md). */
static const char *convert(const char *e, CType from, RlxDType to) {
    CType ct = compute_type(to);
    if (from == ct) return e;
    if (ct == CT_BOOL) return rlx_fmt("(%s != 0)", e);
    if (ct == CT_FLOAT || ct == CT_DOUBLE) return rlx_fmt("(%s)%s", ct_name(ct), e);
    if (from == CT_FLOAT || from == CT_DOUBLE) {
        static const struct { RlxDType dt; const char *lo, *hi, *ilo, *ihi; } lim[] = {
            {RLX_I8, "-128.0", "128.0", "-128", "127"},
            {RLX_U8, "0.0", "256.0", "0", "255"},
            {RLX_I16, "-32768.0", "32768.0", "-32768", "32767"},
            {RLX_U16, "0.0", "65536.0", "0", "65535"},
            {RLX_I32, "-2147483648.0", "2147483648.0", "INT32_MIN", "INT32_MAX"},
            {RLX_U32, "0.0", "4294967296.0", "0", "UINT32_MAX"},
            {RLX_I64, "-9223372036854775808.0", "9223372036854775808.0", "INT64_MIN", "INT64_MAX"},
        };
        if (to == RLX_U64) return rlx_fmt("rs_f2u64((double)%s)", e);
        for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
            if (lim[i].dt == to)
                return rlx_fmt("rs_f2i((double)%s, %s, %s, %s, %s)", e, lim[i].lo, lim[i].hi, lim[i].ilo, lim[i].ihi);
        RLX_ASSERT(!"cast target");
    }
    return rlx_fmt("(%s)%s", ct_name(ct), e);
}

static const char *store_expr(RlxDType dt, const char *e, CType from) {
    switch (dt) {
    case RLX_F16: return rlx_fmt("rlx_f32_to_f16(%s)", convert(e, from, RLX_F32));
    case RLX_BF16: return rlx_fmt("rlx_f32_to_bf16(%s)", convert(e, from, RLX_F32));
    case RLX_BOOL: return rlx_fmt("(uint8_t)(%s != 0)", e);
    default: {
        const char *v = convert(e, from, dt);
        /* no cast where the computed type is already the stored one */
        if ((dt == RLX_F32 && from == CT_FLOAT) || (dt == RLX_F64 && from == CT_DOUBLE) ||
            (dt == RLX_I64 && from == CT_INT) || (dt == RLX_U64 && from == CT_UINT))
            return v;
        return rlx_fmt("(%s)%s", c_type(dt), v);
    }
    }
}

/* Integers narrower than 64 bits compute in 64 and wrap to their width at
 * every step, so that a fused chain gives what the unfused ops store
 * (u8 200 + 100 is 44 before the next op sees it). Signed ones wrap as
 * two's complement, as gcc and clang define the narrowing conversion. The
 * interpreter (fold.c's narrow) does the same. */
static const char *wrap_narrow(const char *e, RlxDType dt) {
    switch (dt) {
    case RLX_I8: return rlx_fmt("(int64_t)(int8_t)(%s)", e);
    case RLX_I16: return rlx_fmt("(int64_t)(int16_t)(%s)", e);
    case RLX_I32: return rlx_fmt("(int64_t)(int32_t)(%s)", e);
    case RLX_U8: return rlx_fmt("(uint64_t)(uint8_t)(%s)", e);
    case RLX_U16: return rlx_fmt("(uint64_t)(uint16_t)(%s)", e);
    case RLX_U32: return rlx_fmt("(uint64_t)(uint32_t)(%s)", e);
    default: return e;
    }
}

/* One step of a region as a C expression over its argument expressions. */
static const char *step_expr(const RlxEltStep *s, const char **a, const CType *at) {
    CType ct = compute_type(s->dtype);
    int fl = ct == CT_FLOAT || ct == CT_DOUBLE;
    const char *sfx = ct == CT_DOUBLE ? "_d" : "";
    int dbl = ct == CT_DOUBLE;
    CType t0 = at[0];
    switch (s->op) {
    case RLX_OP_IDENTITY: return a[0];
    case RLX_OP_ADD: return fl || ct == CT_UINT ? rlx_fmt("(%s + %s)", a[0], a[1]) : rlx_fmt("(int64_t)((uint64_t)%s + (uint64_t)%s)", a[0], a[1]);
    case RLX_OP_SUB: return fl || ct == CT_UINT ? rlx_fmt("(%s - %s)", a[0], a[1]) : rlx_fmt("(int64_t)((uint64_t)%s - (uint64_t)%s)", a[0], a[1]);
    case RLX_OP_MUL: return fl || ct == CT_UINT ? rlx_fmt("(%s * %s)", a[0], a[1]) : rlx_fmt("(int64_t)((uint64_t)%s * (uint64_t)%s)", a[0], a[1]);
    case RLX_OP_DIV:
        if (fl) return rlx_fmt("(%s / %s)", a[0], a[1]);
        if (ct == CT_UINT) return rlx_fmt("(%s ? %s / %s : 0)", a[1], a[0], a[1]);
        return rlx_fmt("rs_idiv(%s, %s)", a[0], a[1]);
    case RLX_OP_POW:
        if (fl) return rlx_fmt(dbl ? "pow(%s, (double)%s)" : "powf(%s, (float)%s)", a[0], a[1]);
        if (at[1] == CT_FLOAT || at[1] == CT_DOUBLE)
            return convert(rlx_fmt("pow((double)%s, (double)%s)", a[0], a[1]), CT_DOUBLE, s->dtype);
        return rlx_fmt("(%s)rs_ipow((int64_t)%s, (int64_t)%s)", ct_name(ct), a[0], a[1]);
    case RLX_OP_MAX:
        if (fl) return rlx_fmt("rs_max%s(%s, %s)", sfx, a[0], a[1]);
        return rlx_fmt("(%s > %s ? %s : %s)", a[0], a[1], a[0], a[1]);
    case RLX_OP_MIN:
        if (fl) return rlx_fmt("rs_min%s(%s, %s)", sfx, a[0], a[1]);
        return rlx_fmt("(%s < %s ? %s : %s)", a[0], a[1], a[0], a[1]);
    case RLX_OP_EQUAL: return rlx_fmt("(%s == %s)", a[0], a[1]);
    case RLX_OP_LESS: return rlx_fmt("(%s < %s)", a[0], a[1]);
    case RLX_OP_GREATER: return rlx_fmt("(%s > %s)", a[0], a[1]);
    case RLX_OP_AND: return rlx_fmt("(%s && %s)", a[0], a[1]);
    case RLX_OP_OR: return rlx_fmt("(%s || %s)", a[0], a[1]);
    case RLX_OP_NOT: return rlx_fmt("(!%s)", a[0]);
    case RLX_OP_WHERE: return rlx_fmt("(%s ? %s : %s)", a[0], a[1], a[2]);
    case RLX_OP_NEG: return fl || ct == CT_UINT ? rlx_fmt("(-%s)", a[0]) : rlx_fmt("(int64_t)(0 - (uint64_t)%s)", a[0]);
    case RLX_OP_ABS:
        if (fl) return rlx_fmt("rs_abs%s(%s)", sfx, a[0]);
        if (ct == CT_UINT) return a[0];
        return rlx_fmt("(%s < 0 ? (int64_t)(0 - (uint64_t)%s) : %s)", a[0], a[0], a[0]);
    case RLX_OP_SQRT: return rlx_fmt("rs_sqrt%s(%s)", sfx, a[0]);
    case RLX_OP_RECIPROCAL: return rlx_fmt("rs_reciprocal%s(%s)", sfx, a[0]);
    case RLX_OP_EXP: return rlx_fmt("rs_exp%s(%s)", sfx, a[0]);
    case RLX_OP_LOG: return rlx_fmt("rs_log%s(%s)", sfx, a[0]);
    case RLX_OP_ERF: return rlx_fmt("rs_erf%s(%s)", sfx, a[0]);
    case RLX_OP_TANH: return rlx_fmt("rs_tanh%s(%s)", sfx, a[0]);
    case RLX_OP_SIGMOID: return rlx_fmt("rs_sigmoid%s(%s)", sfx, a[0]);
    case RLX_OP_SOFTPLUS: return rlx_fmt("rs_softplus%s(%s)", sfx, a[0]);
    case RLX_OP_HARDSWISH: return rlx_fmt("rs_hardswish%s(%s)", sfx, a[0]);
    case RLX_OP_RELU:
        if (fl) return rlx_fmt("rs_relu%s(%s)", sfx, a[0]);
        return rlx_fmt("(%s > 0 ? %s : 0)", a[0], a[0]);
    case RLX_OP_LEAKYRELU: return rlx_fmt("rs_leakyrelu%s(%s, %s)", sfx, a[0], float_lit(s->alpha, dbl));
    case RLX_OP_ELU: return rlx_fmt("rs_elu%s(%s, %s)", sfx, a[0], float_lit(s->alpha, dbl));
    case RLX_OP_HARDSIGMOID:
        return rlx_fmt("rs_hardsigmoid%s(%s, %s, %s)", sfx, a[0], float_lit(s->alpha, dbl), float_lit(s->beta, dbl));
    case RLX_OP_CLIP: {
        const char *lo = s->nargs > 1 && a[1] ? a[1] : NULL, *hi = s->nargs > 2 && a[2] ? a[2] : NULL;
        const char *e = a[0];
        if (lo) e = rlx_fmt("(%s < %s ? %s : %s)", e, lo, lo, e);
        if (hi) e = rlx_fmt("(%s > %s ? %s : %s)", e, hi, hi, e);
        return e;
    }
    case RLX_OP_CAST: case RLX_OP_CASTLIKE: return convert(a[0], at[0], s->dtype);
    case RLX_OP_LESSOREQUAL: return rlx_fmt("(%s <= %s)", a[0], a[1]);
    case RLX_OP_GREATEROREQUAL: return rlx_fmt("(%s >= %s)", a[0], a[1]);
    case RLX_OP_XOR: return rlx_fmt("(%s != %s)", a[0], a[1]);
    /* IsNaN and IsInf take floats and give bools: the argument's form */
    case RLX_OP_ISNAN: return rlx_fmt("rs_isnan%s(%s)", t0 == CT_DOUBLE ? "_d" : "", a[0]);
    case RLX_OP_ISINF:
        return rlx_fmt("rs_isinf%s(%s, %d, %d)", t0 == CT_DOUBLE ? "_d" : "", a[0], s->alpha != 0, s->beta != 0);
    case RLX_OP_SIN: return rlx_fmt("rs_sin%s(%s)", sfx, a[0]);
    case RLX_OP_COS: return rlx_fmt("rs_cos%s(%s)", sfx, a[0]);
    case RLX_OP_TAN: return rlx_fmt("rs_tan%s(%s)", sfx, a[0]);
    case RLX_OP_ASIN: return rlx_fmt("rs_asin%s(%s)", sfx, a[0]);
    case RLX_OP_ACOS: return rlx_fmt("rs_acos%s(%s)", sfx, a[0]);
    case RLX_OP_ATAN: return rlx_fmt("rs_atan%s(%s)", sfx, a[0]);
    case RLX_OP_SINH: return rlx_fmt("rs_sinh%s(%s)", sfx, a[0]);
    case RLX_OP_COSH: return rlx_fmt("rs_cosh%s(%s)", sfx, a[0]);
    case RLX_OP_ASINH: return rlx_fmt("rs_asinh%s(%s)", sfx, a[0]);
    case RLX_OP_ACOSH: return rlx_fmt("rs_acosh%s(%s)", sfx, a[0]);
    case RLX_OP_ATANH: return rlx_fmt("rs_atanh%s(%s)", sfx, a[0]);
    case RLX_OP_FLOOR: return rlx_fmt("rs_floor%s(%s)", sfx, a[0]);
    case RLX_OP_CEIL: return rlx_fmt("rs_ceil%s(%s)", sfx, a[0]);
    case RLX_OP_ROUND: return rlx_fmt("rs_round%s(%s)", sfx, a[0]);
    case RLX_OP_MISH: return rlx_fmt("rs_mish%s(%s)", sfx, a[0]);
    case RLX_OP_SOFTSIGN: return rlx_fmt("rs_softsign%s(%s)", sfx, a[0]);
    case RLX_OP_SIGN:
        if (fl) return rlx_fmt("rs_sign%s(%s)", sfx, a[0]);
        if (ct == CT_UINT) return rlx_fmt("(uint64_t)(%s > 0)", a[0]);
        return rlx_fmt("rs_isign(%s)", a[0]);
    case RLX_OP_MOD:
        if (fl) return rlx_fmt("rs_%smod%s(%s, %s)", s->alpha != 0 ? "f" : "", sfx, a[0], a[1]);
        if (ct == CT_UINT) return rlx_fmt("rs_umod(%s, %s)", a[0], a[1]);
        return rlx_fmt("rs_i%smod(%s, %s)", s->alpha != 0 ? "f" : "", a[0], a[1]);
    case RLX_OP_BITSHIFT:
        return rlx_fmt("rs_sh%s((uint64_t)%s, (uint64_t)%s)", s->alpha != 0 ? "l" : "r", a[0], a[1]);
    case RLX_OP_MEAN: {
        RlxBuf sum = {0};
        for (int j = 0; j < s->nargs; j++) rlx_buf_printf(&sum, "%s%s", j ? " + " : "", a[j]);
        return rlx_fmt("rs_mean%s(%s, %s)", sfx, sum.data, float_lit(s->alpha, dbl));
    }
    case RLX_OP_PRELU:
        if (fl) return rlx_fmt("rs_prelu%s(%s, %s)", sfx, a[0], a[1]);
        if (ct == CT_UINT) return a[0];
        return rlx_fmt("(%s < 0 ? (int64_t)((uint64_t)%s * (uint64_t)%s) : %s)", a[0], a[1], a[0], a[0]);
    case RLX_OP_SELU:
        return rlx_fmt("rs_selu%s(%s, %s, %s)", sfx, a[0], float_lit(s->alpha, dbl), float_lit(s->beta, dbl));
    case RLX_OP_CELU: return rlx_fmt("rs_celu%s(%s, %s)", sfx, a[0], float_lit(s->alpha, dbl));
    case RLX_OP_THRESHOLDEDRELU: return rlx_fmt("rs_thresholdedrelu%s(%s, %s)", sfx, a[0], float_lit(s->alpha, dbl));
    case RLX_OP_SHRINK:
        return rlx_fmt("rs_shrink%s(%s, %s, %s)", sfx, a[0], float_lit(s->alpha, dbl), float_lit(s->beta, dbl));
    default: RLX_ASSERT(!"elementwise op without a C form"); return "";
    }
}

/* An elementwise region as its own function, NAME_regionK(A, W, lo, hi):
 * the loop nest over the outer loop's [lo, hi). The schedule calls it
 * through rk_region_run, which splits the outer loop over threads where the
 * region is large. Being called by pointer, it is compiled for speed: in the
 * schedule itself, after a few dozen `if (st) return st;` tests, a
 * compiler's guessed profile takes the code for cold and leaves its loops
 * scalar. */
static void emit_region_fn(Emit *E, const RlxThunk *t, int step) {
    const RlxGraph *g = E->g;
    RlxLoopNest L;
    rlx_region_loops(g, t, &L);
    RlxBuf *b = E->b;
    const RlxValue *y = &g->v[t->out[0].value];
    const RlxNode *n = &g->n[t->node];
    int uses_w = 0;
    for (int i = 0; i < t->nin; i++)
        if (rlx_region_operand(t, i) >= 0 && t->in[i].space == RLX_SPACE_WEIGHTS) uses_w = 1;
    rlx_emit(b, "/* %d: %s (%s) */", step, rlx_comment_safe(n->name), rlx_ops[n->op].name);
    rlx_emit(b, "static void %s_region%d(uint8_t *A, const uint8_t *W, int64_t lo, int64_t hi) {", E->name, step);
    b->indent++;
    if (!uses_w) rlx_emit(b, "(void)W;");
    if (!L.rank) rlx_emit(b, "(void)lo;");
    if (!L.rank) rlx_emit(b, "(void)hi;");
    for (int i = 0; i < t->nin; i++) {
        if (rlx_region_operand(t, i) < 0) continue;
        const RlxValue *x = &g->v[t->in[i].value];
        rlx_emit(b, "const %s *x%d = (const %s *)(%s);", c_type(x->dtype), i, c_type(x->dtype), slot_expr(&t->in[i]));
    }
    rlx_emit(b, "%s *y = (%s *)(%s);", c_type(y->dtype), c_type(y->dtype), slot_expr(&t->out[0]));
    /* Each load sits in the innermost loop whose index it uses: an operand
     * broadcast along the inner loops is read once before them. All
     * operands point into the same arena, so a load left inside a loop
     * that stores to y could see that store; compilers then keep the loop
     * scalar (clang) or add a run-time overlap test (gcc). */
    const char **argx = rlx_alloc(sizeof(char *) * (size_t)(t->nin + t->nsteps));
    CType *argt = rlx_alloc(sizeof(CType) * (size_t)(t->nin + t->nsteps));
    for (int level = -1; level < L.rank; level++) {
        if (level == 0) {
            rlx_emit(b, "for (int64_t i0 = lo; i0 < hi; i0++) {");
            b->indent++;
        } else if (level > 0) {
            rlx_emit(b, "for (int64_t i%d = 0; i%d < %lld; i%d++) {", level, level, (long long)L.dims[level], level);
            b->indent++;
        }
        for (int i = 0; i < t->nin; i++) {
            if (rlx_region_operand(t, i) < 0) continue;
            int deepest = -1;
            for (int j = 0; j < L.rank; j++)
                if (L.stride[i][j]) deepest = j;
            if (deepest != level) continue;
            const RlxValue *x = &g->v[t->in[i].value];
            CType ct = compute_type(x->dtype);
            rlx_emit(b, "const %s a%d = %s;", ct_name(ct), i,
                     load_expr(x->dtype, rlx_fmt("x%d[%s]", i, index_expr(&L, i))));
            argx[i] = rlx_fmt("a%d", i);
            argt[i] = ct;
        }
    }
    /* steps: each its own local, so a reader can follow the chain */
    const char *res = NULL;
    CType rest = CT_FLOAT;
    for (int k = 0; k < t->nsteps; k++) {
        const RlxEltStep *s = &t->steps[k];
        const char *a[4] = {0};
        CType at[4] = {CT_FLOAT, CT_FLOAT, CT_FLOAT, CT_FLOAT};
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
        /* binary float ops on mixed operands: compute in the result's type */
        CType ct = compute_type(s->dtype);
        if (rlx_step_args_in_result_type(s->op)) {
            for (int j = 0; j < s->nargs; j++)
                if (a[j] && at[j] != ct) a[j] = convert(a[j], at[j], s->dtype);
        }
        if (s->op == RLX_OP_WHERE) {
            for (int j = 1; j < 3; j++)
                if (a[j] && at[j] != ct) a[j] = convert(a[j], at[j], s->dtype);
        }
        const char *e = wrap_narrow(step_expr(s, a, at), s->dtype);
        rlx_emit(b, "const %s s%d = %s;", ct_name(ct), k, e);
        argx[t->nin + k] = rlx_fmt("s%d", k);
        argt[t->nin + k] = ct;
        res = argx[t->nin + k];
        rest = ct;
    }
    rlx_emit(b, "y[%s] = %s;", index_expr(&L, t->nin), store_expr(y->dtype, res, rest));
    for (int i = 0; i < L.rank; i++) {
        b->indent--;
        rlx_emit(b, "}");
    }
    b->indent--;
    rlx_emit(b, "}");
    rlx_emit(b, "");
}

/* The schedule's call of region K: the outer loop's extent and the
 * region's element count (rk_region_run forks only for large ones). */
static void emit_region_call(Emit *E, const RlxThunk *t, int step) {
    RlxLoopNest L;
    rlx_region_loops(E->g, t, &L);
    int64_t elems = 1;
    for (int i = 0; i < L.rank; i++) elems *= L.dims[i];
    rlx_emit(E->b, "rk_region_run(ctx, %s_region%d, A, W, %lld, %lld);", E->name, step,
             (long long)(L.rank ? L.dims[0] : 1), (long long)elems);
}

/* ---- the files ---- */

static void emit_tensor_infos(Emit *E, const char *what, const int *vals, int n) {
    const RlxGraph *g = E->g;
    for (int i = 0; i < n; i++) {
        const RlxValue *v = &g->v[vals[i]];
        RlxBuf d = {0};
        for (int j = 0; j < v->rank; j++) rlx_buf_printf(&d, "%s%lld", j ? ", " : "", (long long)v->dims[j]);
        rlx_emit(E->b, "static const int64_t %s_%s%d_dims[] = {%s};", E->name, what, i, v->rank ? d.data : "0");
    }
    rlx_emit(E->b, "static const rlx_tensor_info %s_%ss[] = {", E->name, what);
    for (int i = 0; i < n; i++) {
        const RlxValue *v = &g->v[vals[i]];
        int w = (v->flags & RLX_V_WEIGHT) != 0;
        /* a weight as output is read from the weights; offset in its space */
        rlx_emit(E->b, "    {\"%s\", %s, %d, %s_%s%d_dims, %lld, %lld},", v->name, dtype_enum(v->dtype), v->rank,
                 E->name, what, i, (long long)(w ? E->plan->woff[vals[i]] : E->plan->off[vals[i]]),
                 (long long)rlx_value_bytes(v));
    }
    if (!n) rlx_emit(E->b, "    {0, 0, 0, 0, 0, 0},");
    rlx_emit(E->b, "};");
}

/* The API header, the same for every target (target.h): OUT.h; with
 * embed_weights (--embed-weights) it declares NAME_weights too. */
void rlx_emit_model_header(const RlxGraph *g, const RlxPlan *plan, const char *N, int emit_main, int embed_weights,
                           RlxBuf *h) {
    rlx_emit(h, "/* %s.h - generated by rlxc %s. Do not edit. */", N, RLX_VERSION);
    rlx_emit(h, "#ifndef %s_MODEL_H", N);
    rlx_emit(h, "#define %s_MODEL_H", N);
    rlx_emit(h, "");
    rlx_emit(h, "#include \"rlx_rt.h\"");
    rlx_emit(h, "");
    rlx_emit(h, "#ifdef __cplusplus");
    rlx_emit(h, "extern \"C\" {");
    rlx_emit(h, "#endif");
    rlx_emit(h, "");
    rlx_emit(h, "/* Inputs and outputs, in this order, as dense row-major arrays:");
    for (int i = 0; i < g->ninputs; i++)
        rlx_emit(h, " *   input  %d: %s", i, rlx_comment_safe(value_desc(g, g->inputs[i])));
    for (int i = 0; i < g->noutputs; i++)
        rlx_emit(h, " *   output %d: %s", i, rlx_comment_safe(value_desc(g, g->outputs[i])));
    rlx_emit(h, " * arena: %lld bytes; weights: %lld bytes. */", (long long)plan->arena_bytes,
             (long long)plan->weights_bytes);
    rlx_emit(h, "extern const rlx_model_info %s_info;", N);
    rlx_emit(h, "");
    rlx_emit(h, "/* Allocates the model and its arena; RLX_OK or a status. */");
    rlx_emit(h, "int %s_init(rlx_model **m);", N);
    rlx_emit(h, "/* Loads %s.weights (or another path); a distinct status for a missing,", N);
    rlx_emit(h, " * truncated, other-version, other-model or corrupted (checksum) file. */");
    rlx_emit(h, "int %s_load_weights(rlx_model *m, const char *path);", N);
    rlx_emit(h, "/* Uses a weights file image already in memory (kept alive by the caller). */");
    rlx_emit(h, "int %s_load_weights_buffer(rlx_model *m, const void *buf, size_t len);", N);
    rlx_emit(h, "/* Runs the model; allocates nothing. */");
    rlx_emit(h, "int %s_run(rlx_model *m, const void *const *inputs, void *const *outputs);", N);
    rlx_emit(h, "void %s_free(rlx_model *m);", N);
    if (embed_weights) {
        rlx_emit(h, "/* The weights image (rlxc --embed-weights: %s_weights.c), a const array, 64-byte", N);
        rlx_emit(h, " * aligned where the compiler allows it: %s_load_weights_buffer(m, %s_weights,", N, N);
        rlx_emit(h, " * %s_weights_size) then uses it in place (in flash on a microcontroller). */", N);
        rlx_emit(h, "extern const unsigned char %s_weights[];", N);
        rlx_emit(h, "extern const size_t %s_weights_size;", N);
    }
    if (emit_main) {
        rlx_emit(h, "/* The command-line harness of --emit-main. */");
        rlx_emit(h, "int %s_main(int argc, char **argv);", N);
    }
    rlx_emit(h, "");
    rlx_emit(h, "#ifdef __cplusplus");
    rlx_emit(h, "}");
    rlx_emit(h, "#endif");
    rlx_emit(h, "#endif");

}

/* The tensor tables and NAME_info, the same for every target. */
void rlx_emit_model_info(const RlxGraph *g, const RlxPlan *plan, const char *N, uint64_t hash, int64_t scratch,
                         int nthreads, RlxBuf *c) {
    Emit E = {g, plan, N, c};
    int nweights = 0;
    for (int i = 0; i < g->nv; i++)
        if (plan->woff[i] >= 0) nweights++;
    emit_tensor_infos(&E, "input", g->inputs, g->ninputs);
    emit_tensor_infos(&E, "output", g->outputs, g->noutputs);
    rlx_emit(c, "");
    rlx_emit(c, "const rlx_model_info %s_info = {", N);
    rlx_emit(c, "    .name = \"%s\",", N);
    rlx_emit(c, "    .hash = 0x%016llxull,", (unsigned long long)hash);
    rlx_emit(c, "    .arena_bytes = %lld,", (long long)plan->arena_bytes);
    rlx_emit(c, "    .weights_bytes = %lld,", (long long)plan->weights_bytes);
    rlx_emit(c, "    .nweights = %d,", nweights);
    rlx_emit(c, "    .scratch_per_thread = %lld,", (long long)scratch);
    rlx_emit(c, "    .nthreads = %d,", nthreads > 0 ? nthreads : 1);
    rlx_emit(c, "    .ninputs = %d,", g->ninputs);
    rlx_emit(c, "    .noutputs = %d,", g->noutputs);
    rlx_emit(c, "    .inputs = %s_inputs,", N);
    rlx_emit(c, "    .outputs = %s_outputs,", N);
    rlx_emit(c, "};");
    rlx_emit(c, "");
}

void rlx_codegen_c(const RlxGraph *g, const RlxPlan *plan, const RlxThunkList *tl, const RlxCOptions *opt,
                   RlxBuf *c, RlxBuf *h) {
    Emit E = {g, plan, opt->name, c};
    const char *N = opt->name;
    uint64_t hash = opt->hash;

    rlx_emit_model_header(g, plan, N, opt->emit_main, opt->embed_weights, h);

    /* source */
    rlx_emit(c, "/* %s.c - generated by rlxc %s from %s. Do not edit.", N, RLX_VERSION, rlx_comment_safe(g->file));
    rlx_emit(c, " *");
    rlx_emit(c, " * %d thunks; arena %lld bytes (lower bound %lld, naive %lld); weights %lld bytes.",
             tl->n, (long long)plan->arena_bytes, (long long)plan->lower_bound, (long long)plan->naive_bytes,
             (long long)plan->weights_bytes);
    rlx_emit(c, " * A is the arena, W the weights; every offset below is in bytes.");
    rlx_emit(c, " */");
    rlx_emit(c, "#include <stddef.h>");
    rlx_emit(c, "#include <stdint.h>");
    rlx_emit(c, "#include <string.h>");
    rlx_emit(c, "");
    rlx_emit(c, "#include \"%s\"", opt->header_name);
    rlx_emit(c, "#include \"rlx_scalar.h\"");
    rlx_emit(c, "");
    if (opt->blas) {
        rlx_emit(c, "#ifndef RLX_BLAS_OPENBLAS");
        rlx_emit(c, "#error \"compiled with rlxc --blas openblas: build with -DRLX_BLAS_OPENBLAS and link OpenBLAS\"");
        rlx_emit(c, "#endif");
        rlx_emit(c, "");
    }
    rlx_emit(c, "#define IN(...) ((const void *const[]){__VA_ARGS__})");
    rlx_emit(c, "#define OUT(...) ((void *const[]){__VA_ARGS__})");
    rlx_emit(c, "");
    rlx_emit_model_info(g, plan, N, hash, rlx_thunks_scratch(tl), opt->nthreads, c);
    rlx_emit(c, "int %s_init(rlx_model **m) { return rlx_model_new(&%s_info, m); }", N, N);
    rlx_emit(c, "int %s_load_weights(rlx_model *m, const char *path) { return rlx_load_weights_file(m, path); }", N);
    rlx_emit(c, "int %s_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {", N);
    rlx_emit(c, "    return rlx_load_weights_buffer(m, buf, len);");
    rlx_emit(c, "}");
    rlx_emit(c, "void %s_free(rlx_model *m) { rlx_model_free(m); }", N);
    rlx_emit(c, "");
    for (int i = 0; i < tl->n; i++)
        if (tl->t[i].kind == RLX_K_ELTWISE) emit_region_fn(&E, &tl->t[i], i);
    rlx_emit(c, "static int %s_schedule(rk_ctx *ctx, uint8_t *A, const uint8_t *W) {", N);
    c->indent++;
    rlx_emit(c, "int st = 0;");
    rlx_emit(c, "(void)ctx;");
    rlx_emit(c, "(void)A;");
    rlx_emit(c, "(void)W;");
    for (int i = 0; i < tl->n; i++) {
        const RlxThunk *t = &tl->t[i];
        emit_thunk_comment(&E, t, i);
        if (t->kind == RLX_K_ELTWISE) emit_region_call(&E, t, i);
        else emit_kernel(&E, t);
        if (opt->dump_values) emit_dumps(&E, t);
    }
    rlx_emit(c, "return st;");
    c->indent--;
    rlx_emit(c, "}");
    rlx_emit(c, "");
    rlx_emit(c, "int %s_run(rlx_model *m, const void *const *inputs, void *const *outputs) {", N);
    c->indent++;
    if (g->ninputs) rlx_emit(c, "if (!m || !inputs || !outputs) return RLX_E_ARG;");
    else rlx_emit(c, "(void)inputs;   /* the model has no inputs */");
    if (!g->ninputs) rlx_emit(c, "if (!m || !outputs) return RLX_E_ARG;");
    rlx_emit(c, "if (!m->weights) return RLX_E_STATE;");
    for (int i = 0; i < g->ninputs; i++) {
        int v = g->inputs[i];
        if (rlx_value_bytes(&g->v[v]))
            rlx_emit(c, "memcpy(m->arena + %lld, inputs[%d], %lld);", (long long)plan->off[v], i,
                     (long long)rlx_value_bytes(&g->v[v]));
    }
    rlx_emit(c, "int st = %s_schedule(&m->ctx, m->arena, m->weights);", N);
    rlx_emit(c, "if (st) return st;");
    for (int i = 0; i < g->noutputs; i++) {
        int v = g->outputs[i];
        int w = (g->v[v].flags & RLX_V_WEIGHT) != 0;
        if (rlx_value_bytes(&g->v[v]))
            rlx_emit(c, "memcpy(outputs[%d], %s + %lld, %lld);", i, w ? "m->weights" : "m->arena",
                     (long long)(w ? plan->woff[v] : plan->off[v]), (long long)rlx_value_bytes(&g->v[v]));
    }
    rlx_emit(c, "return RLX_OK;");
    c->indent--;
    rlx_emit(c, "}");
    rlx_emit(c, "");
    if (opt->emit_main) {
        rlx_emit(c, "static const rlx_model_api %s_api = {", N);
        rlx_emit(c, "    &%s_info, %s_init, %s_load_weights, %s_run, %s_free, rlx_model_set_threads, rlx_describe_cpu,", N, N,
                 N, N, N);
        rlx_emit(c, "};");
        if (opt->embed_weights)
            rlx_emit(c, "int %s_main(int argc, char **argv) { return rlx_main_embedded(argc, argv, &%s_api, %s_weights, %s_weights_size); }",
                     N, N, N, N);
        else
            rlx_emit(c, "int %s_main(int argc, char **argv) { return rlx_main(argc, argv, &%s_api); }", N, N);
        rlx_emit(c, "int main(int argc, char **argv) { return %s_main(argc, argv); }", N);
    }
}

/* --embed-weights: the weights image as a C file defining NAME_weights, a
 * const 64-byte aligned array, and NAME_weights_size. */
static void c_weights_file(const char *name, const RlxBuf *image, RlxBuf *out) {
    const uint8_t *p = (const uint8_t *)image->data;
    size_t n = image->len;
    rlx_emit(out, "/* %s_weights.c - generated by rlxc %s (--embed-weights). Do not edit.", name, RLX_VERSION);
    rlx_emit(out, " *");
    rlx_emit(out, " * The weights image of model %s (%zu bytes: the 64-byte header, then the data),", name, n);
    rlx_emit(out, " * as %s.weights would hold it. Const, so it stays in flash on a microcontroller;", name);
    rlx_emit(out, " * 64-byte aligned where the compiler has a way to say so, so that");
    rlx_emit(out, " * %s_load_weights_buffer uses it in place instead of copying it to RAM.", name);
    rlx_emit(out, " */");
    rlx_emit(out, "#include <stddef.h>");
    rlx_emit(out, "");
    rlx_emit(out, "#if defined(__GNUC__) || defined(__clang__)");
    rlx_emit(out, "#define RLX_WEIGHTS_ALIGNED __attribute__((aligned(64)))");
    rlx_emit(out, "#else");
    rlx_emit(out, "#define RLX_WEIGHTS_ALIGNED");
    rlx_emit(out, "#endif");
    rlx_emit(out, "");
    rlx_emit(out, "extern const unsigned char %s_weights[];", name);
    rlx_emit(out, "extern const size_t %s_weights_size;", name);
    rlx_emit(out, "const size_t %s_weights_size = %zu;", name, n);
    rlx_emit(out, "const unsigned char %s_weights[%zu] RLX_WEIGHTS_ALIGNED = {", name, n ? n : (size_t)1);
    /* decimal bytes, 24 to a line: the shortest plain text for binary data */
    char line[24 * 4 + 8];
    for (size_t i = 0; i < n; i += 24) {
        size_t len = 0;
        for (size_t j = i; j < n && j < i + 24; j++) len += (size_t)snprintf(line + len, sizeof line - len, "%u,", p[j]);
        rlx_buf_printf(out, "%s\n", line);
    }
    if (!n) rlx_buf_printf(out, "0\n");
    rlx_emit(out, "};");
}

/* The C target's printer (target.h): OUT.c, OUT.h, and OUT.weights or, with
 * --embed-weights, OUT_weights.c. */
void rlx_c_emit(const RlxEmitJob *job) {
    RlxOutFile *f = job->files;
    f[0].suffix = ".c";
    f[1].suffix = ".h";
    f[2].suffix = job->embed_weights ? "_weights.c" : ".weights";
    uint64_t hash;
    RlxBuf image = {0};
    rlx_weights_image(job->g, job->plan, &image, &hash);
    if (job->embed_weights) c_weights_file(job->name, &image, &f[2].data);
    else f[2].data = image;
    RlxCOptions opt = {job->name, job->emit_main, job->header_name, hash, job->nthreads, job->blas,
                       job->embed_weights, job->dump_values};
    rlx_codegen_c(job->g, job->plan, job->tl, &opt, &f[0].data, &f[1].data);
    *job->nfiles = 3;
}
