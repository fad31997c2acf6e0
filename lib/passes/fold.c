/* fold.c - constant folding with the runtime's own arithmetic: the
 * reference evaluator.
 *
 * A node whose inputs are all constants is lowered by the neutral lowering
 * (rlx_lower_node) against a small private plan (its inputs packed into a
 * weights buffer, its outputs into an arena buffer), given the kernel
 * library's choices for plain operands (the C target's select, rlx_c_select:
 * conv methods, scratch), and run on runtime_min's kernels (the portable
 * build rlxc links); elementwise regions run through the interpreter below,
 * which evaluates each step with the same definitions (rlx_scalar.h) and
 * the same types as the C printer (emit_c.c: float for f32/f16/bf16, double
 * for f64, 64-bit integers for integers, wrapped to their width after every
 * step), so compile-time and run-time results agree bit for bit. This is
 * the one evaluator, whatever --target says: every target folds to the same
 * bits.
 */
#include <math.h>
#include <string.h>

#include "rlx.h"
#include "../codegen_c/c.h"
#include "../../runtime_min/rlx_scalar.h"

/* Outputs larger than this stay run-time work: folding an Expand or a
 * ConstantOfShape into a huge weight would bloat the weights file. */
#define FOLD_MAX_BYTES (16 << 20)

/* And so does a node whose evaluation is too much work for a compiler: a
 * few bytes of a model can make a Conv of constants with a kernel of half a
 * million channels over a padded plane, hours of folding. fold_work bounds
 * a node's work in multiply-adds (or element steps); one node may take
 * FOLD_MAX_WORK (~0.1 s of the portable kernels), a graph FOLD_TOTAL_WORK
 * (g->fold_work counts it) and then only folds of linear work go on, which
 * the memory limit bounds: shape arithmetic keeps folding. */
#define FOLD_MAX_WORK ((int64_t)1 << 26)
#define FOLD_TOTAL_WORK ((int64_t)1 << 30)

static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }
static int64_t sat_mul(int64_t a, int64_t b) { return a && b > INT64_MAX / a ? INT64_MAX : a * b; }

static int64_t numel_of(const RlxGraph *g, int v) { return v >= 0 ? rlx_value_numel(&g->v[v]) : 0; }

/* Elements read and written, plus the products of the ops that do more
 * than a constant amount of work per element. Every operand's size is known
 * (and fits in 64 bits) when folding is considered. */
static int64_t fold_work(const RlxGraph *g, int node, int *linear) {
    const RlxNode *n = &g->n[node];
    int64_t in = 0, out = 0;
    for (int i = 0; i < n->nin; i++) in = sat_add(in, numel_of(g, n->in[i]));
    for (int i = 0; i < n->nout; i++) out = sat_add(out, numel_of(g, n->out[i]));
    int64_t extra = 0;
    const RlxValue *a = n->nin > 0 && n->in[0] >= 0 ? &g->v[n->in[0]] : NULL;
    const RlxValue *w = n->nin > 1 && n->in[1] >= 0 ? &g->v[n->in[1]] : NULL;
    switch (n->op) {
    case RLX_OP_MATMUL: case RLX_OP_MATMULINTEGER: case RLX_OP_QLINEARMATMUL: case RLX_OP_GEMM:
        /* each output element is a dot product over A's inner dim (at most A's largest dim) */
        for (int d = 0; a && d < a->rank; d++) extra = a->dims[d] > extra ? a->dims[d] : extra;
        extra = sat_mul(out, extra);
        break;
    case RLX_OP_CONV: case RLX_OP_CONVINTEGER: case RLX_OP_QLINEARCONV: case RLX_OP_CONVTRANSPOSE: {
        const RlxValue *k = n->op == RLX_OP_QLINEARCONV ? (n->nin > 3 && n->in[3] >= 0 ? &g->v[n->in[3]] : NULL) : w;
        int64_t per = k && k->rank > 0 && k->dims[0] ? rlx_value_numel(k) / k->dims[0] : 1;
        extra = sat_mul(n->op == RLX_OP_CONVTRANSPOSE ? in : out, per);
        break;
    }
    case RLX_OP_MAXPOOL: case RLX_OP_AVERAGEPOOL: case RLX_OP_LPPOOL: {
        const RlxAttr *ks = rlx_attr_get(n, "kernel_shape");
        int64_t k = 1;
        for (int i = 0; ks && ks->kind == RLX_A_INTS && i < ks->n; i++) k = sat_mul(k, ks->ints[i] > 0 ? ks->ints[i] : 1);
        extra = sat_mul(out, k);
        break;
    }
    case RLX_OP_LRN: extra = sat_mul(out, rlx_attr_i(n, "size", 1) > 0 ? rlx_attr_i(n, "size", 1) : 1); break;
    case RLX_OP_RNN: case RLX_OP_GRU: case RLX_OP_LSTM: {
        /* every step multiplies W and R (inputs 1 and 2) once per batch entry */
        int64_t steps = a && a->rank >= 2 ? sat_mul(a->dims[0], a->dims[1]) : 1;
        extra = sat_mul(steps, sat_add(numel_of(g, n->in[1]), n->nin > 2 ? numel_of(g, n->in[2]) : 0));
        break;
    }
    case RLX_OP_EINSUM: case RLX_OP_DET: case RLX_OP_DFT: case RLX_OP_STFT: case RLX_OP_NONMAXSUPPRESSION:
    case RLX_OP_UNIQUE: case RLX_OP_MELWEIGHTMATRIX: case RLX_OP_ROIALIGN: case RLX_OP_TFIDF:
    case RLX_OP_TOPK:
        /* no closer bound kept here: in^2 * out bounds each of them */
        extra = sat_mul(sat_mul(in, in), out > 0 ? out : 1);
        break;
    default: break;
    }
    *linear = extra == 0;
    return sat_add(sat_add(in, out), extra);
}

typedef enum { V_F, V_D, V_I, V_U, V_B } Kind;
typedef struct {
    Kind k;
    float f;
    double d;
    int64_t i;
    uint64_t u;
} Val;

static Kind kind_of(RlxDType dt) {
    switch (dt) {
    case RLX_F32: case RLX_F16: case RLX_BF16: return V_F;
    case RLX_F64: return V_D;
    case RLX_U8: case RLX_U16: case RLX_U32: case RLX_U64: return V_U;
    case RLX_BOOL: return V_B;
    default: return V_I;
    }
}

static double as_double(Val v) {
    switch (v.k) {
    case V_F: return v.f;
    case V_D: return v.d;
    case V_U: return (double)v.u;
    default: return (double)v.i;
    }
}

static int64_t as_int(Val v) { return v.k == V_U ? (int64_t)v.u : v.i; }

static Val mk(Kind k) {
    Val v;
    memset(&v, 0, sizeof v);
    v.k = k;
    return v;
}

static Val load(RlxDType dt, const uint8_t *p, int64_t i) {
    Val v = mk(kind_of(dt));
    int sz = rlx_dtype_size(dt);
    p += i * sz;
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64;
            float f; double d; } u;
    memcpy(&u, p, (size_t)sz);
    switch (dt) {
    case RLX_F32: v.f = u.f; break;
    case RLX_F16: v.f = rlx_f16_to_f32(u.u16); break;
    case RLX_BF16: v.f = rlx_bf16_to_f32(u.u16); break;
    case RLX_F64: v.d = u.d; break;
    case RLX_I8: v.i = u.i8; break;
    case RLX_I16: v.i = u.i16; break;
    case RLX_I32: v.i = u.i32; break;
    case RLX_I64: v.i = u.i64; break;
    case RLX_U8: v.u = u.u8; break;
    case RLX_U16: v.u = u.u16; break;
    case RLX_U32: v.u = u.u32; break;
    case RLX_U64: v.u = u.u64; break;
    case RLX_BOOL: v.i = u.u8 != 0; break;
    default: RLX_ASSERT(!"dtype");
    }
    return v;
}

/* Mirrors emit_c.c's convert(): float to integer saturates, NaN -> 0. */
static Val convert(Val v, RlxDType to) {
    Kind k = kind_of(to);
    if (v.k == k) return v;
    Val r = mk(k);
    int from_float = v.k == V_F || v.k == V_D;
    switch (k) {
    case V_B: r.i = from_float ? as_double(v) != 0 : (v.k == V_U ? v.u != 0 : v.i != 0); break;
    case V_F: r.f = v.k == V_D ? (float)v.d : v.k == V_U ? (float)v.u : (float)v.i; break;
    case V_D: r.d = v.k == V_F ? (double)v.f : v.k == V_U ? (double)v.u : (double)v.i; break;
    case V_U:
        if (from_float) {
            double x = as_double(v);
            if (to == RLX_U64) r.u = rs_f2u64(x);
            else if (to == RLX_U8) r.u = (uint64_t)rs_f2i(x, 0.0, 256.0, 0, 255);
            else if (to == RLX_U16) r.u = (uint64_t)rs_f2i(x, 0.0, 65536.0, 0, 65535);
            else r.u = (uint64_t)rs_f2i(x, 0.0, 4294967296.0, 0, UINT32_MAX);
        } else {
            r.u = (uint64_t)v.i;
        }
        break;
    case V_I:
        if (from_float) {
            double x = as_double(v);
            switch (to) {
            case RLX_I8: r.i = rs_f2i(x, -128.0, 128.0, -128, 127); break;
            case RLX_I16: r.i = rs_f2i(x, -32768.0, 32768.0, -32768, 32767); break;
            case RLX_I32: r.i = rs_f2i(x, -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX); break;
            default: r.i = rs_f2i(x, -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX); break;
            }
        } else {
            r.i = (int64_t)v.u;
        }
        break;
    }
    return r;
}

static void store(RlxDType dt, uint8_t *p, int64_t i, Val v) {
    int sz = rlx_dtype_size(dt);
    p += i * sz;
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64; uint64_t u64;
            float f; double d; } u;
    if (dt == RLX_F16 || dt == RLX_BF16) v = convert(v, RLX_F32);
    else v = convert(v, dt);
    switch (dt) {
    case RLX_F32: u.f = v.f; break;
    case RLX_F16: u.u16 = rlx_f32_to_f16(v.f); break;
    case RLX_BF16: u.u16 = rlx_f32_to_bf16(v.f); break;
    case RLX_F64: u.d = v.d; break;
    case RLX_I8: u.i8 = (int8_t)v.i; break;
    case RLX_I16: u.i16 = (int16_t)v.i; break;
    case RLX_I32: u.i32 = (int32_t)v.i; break;
    case RLX_I64: u.i64 = v.i; break;
    case RLX_U8: u.u8 = (uint8_t)v.u; break;
    case RLX_U16: u.u16 = (uint16_t)v.u; break;
    case RLX_U32: u.u32 = (uint32_t)v.u; break;
    case RLX_U64: u.u64 = v.u; break;
    case RLX_BOOL: u.u8 = (uint8_t)(v.i != 0); break;
    default: RLX_ASSERT(!"dtype");
    }
    memcpy(p, &u, (size_t)sz);
}

/* Unary float functions, in f32 and f64 forms, by op. */
static int float_unary(RlxOp op, const RlxEltStep *s, Val a, Val *r) {
    int d = a.k == V_D;
    float x = a.f;
    double y = a.d;
#define U(OP, F) case OP: if (d) r->d = F##_d(y); else r->f = F(x); return 1;
    switch (op) {
        U(RLX_OP_SQRT, rs_sqrt)
        U(RLX_OP_RECIPROCAL, rs_reciprocal)
        U(RLX_OP_EXP, rs_exp)
        U(RLX_OP_LOG, rs_log)
        U(RLX_OP_ERF, rs_erf)
        U(RLX_OP_TANH, rs_tanh)
        U(RLX_OP_SIGMOID, rs_sigmoid)
        U(RLX_OP_SOFTPLUS, rs_softplus)
        U(RLX_OP_HARDSWISH, rs_hardswish)
        U(RLX_OP_RELU, rs_relu)
        U(RLX_OP_ABS, rs_abs)
        U(RLX_OP_NEG, rs_neg)
        U(RLX_OP_SIN, rs_sin)
        U(RLX_OP_COS, rs_cos)
        U(RLX_OP_TAN, rs_tan)
        U(RLX_OP_ASIN, rs_asin)
        U(RLX_OP_ACOS, rs_acos)
        U(RLX_OP_ATAN, rs_atan)
        U(RLX_OP_SINH, rs_sinh)
        U(RLX_OP_COSH, rs_cosh)
        U(RLX_OP_ASINH, rs_asinh)
        U(RLX_OP_ACOSH, rs_acosh)
        U(RLX_OP_ATANH, rs_atanh)
        U(RLX_OP_FLOOR, rs_floor)
        U(RLX_OP_CEIL, rs_ceil)
        U(RLX_OP_ROUND, rs_round)
        U(RLX_OP_SIGN, rs_sign)
        U(RLX_OP_MISH, rs_mish)
        U(RLX_OP_SOFTSIGN, rs_softsign)
    case RLX_OP_CELU: if (d) r->d = rs_celu_d(y, s->alpha); else r->f = rs_celu(x, (float)s->alpha); return 1;
    case RLX_OP_THRESHOLDEDRELU:
        if (d) r->d = rs_thresholdedrelu_d(y, s->alpha);
        else r->f = rs_thresholdedrelu(x, (float)s->alpha);
        return 1;
    case RLX_OP_SELU:
        if (d) r->d = rs_selu_d(y, s->alpha, s->beta);
        else r->f = rs_selu(x, (float)s->alpha, (float)s->beta);
        return 1;
    case RLX_OP_SHRINK:
        if (d) r->d = rs_shrink_d(y, s->alpha, s->beta);
        else r->f = rs_shrink(x, (float)s->alpha, (float)s->beta);
        return 1;
    case RLX_OP_LEAKYRELU: if (d) r->d = rs_leakyrelu_d(y, s->alpha); else r->f = rs_leakyrelu(x, (float)s->alpha); return 1;
    case RLX_OP_ELU: if (d) r->d = rs_elu_d(y, s->alpha); else r->f = rs_elu(x, (float)s->alpha); return 1;
    case RLX_OP_HARDSIGMOID:
        if (d) r->d = rs_hardsigmoid_d(y, s->alpha, s->beta);
        else r->f = rs_hardsigmoid(x, (float)s->alpha, (float)s->beta);
        return 1;
    default: return 0;
    }
#undef U
}

/* Mirrors emit_c.c's wrap_narrow(): narrow integers wrap at every step. */
static Val narrow(Val v, RlxDType dt) {
    switch (dt) {
    case RLX_I8: v.i = (int8_t)v.i; break;
    case RLX_I16: v.i = (int16_t)v.i; break;
    case RLX_I32: v.i = (int32_t)v.i; break;
    case RLX_U8: v.u = (uint8_t)v.u; break;
    case RLX_U16: v.u = (uint16_t)v.u; break;
    case RLX_U32: v.u = (uint32_t)v.u; break;
    default: break;
    }
    return v;
}

static Val eval_op(const RlxEltStep *s, const Val *a, const int *present) {
    Kind k = kind_of(s->dtype);
    Val r = mk(k);
    int fl = k == V_F || k == V_D;
    Val x = a[0], y = a[1];
    /* arithmetic operands in the result's type, as the printer converts them */
    if (rlx_step_args_in_result_type(s->op)) {
        x = convert(x, s->dtype);
        if (s->nargs > 1 && present[1]) y = convert(y, s->dtype);
    }
    switch (s->op) {
    case RLX_OP_IDENTITY: return x;
    case RLX_OP_ADD: case RLX_OP_SUB: case RLX_OP_MUL: case RLX_OP_DIV: case RLX_OP_MAX: case RLX_OP_MIN:
        if (k == V_F) {
            float p = x.f, q = y.f;
            r.f = s->op == RLX_OP_ADD ? p + q : s->op == RLX_OP_SUB ? p - q : s->op == RLX_OP_MUL ? p * q
                : s->op == RLX_OP_DIV ? p / q : s->op == RLX_OP_MAX ? rs_max(p, q) : rs_min(p, q);
        } else if (k == V_D) {
            double p = x.d, q = y.d;
            r.d = s->op == RLX_OP_ADD ? p + q : s->op == RLX_OP_SUB ? p - q : s->op == RLX_OP_MUL ? p * q
                : s->op == RLX_OP_DIV ? p / q : s->op == RLX_OP_MAX ? rs_max_d(p, q) : rs_min_d(p, q);
        } else if (k == V_U) {
            uint64_t p = x.u, q = y.u;
            r.u = s->op == RLX_OP_ADD ? p + q : s->op == RLX_OP_SUB ? p - q : s->op == RLX_OP_MUL ? p * q
                : s->op == RLX_OP_DIV ? (q ? p / q : 0) : s->op == RLX_OP_MAX ? (p > q ? p : q) : (p < q ? p : q);
        } else {
            int64_t p = x.i, q = y.i;
            r.i = s->op == RLX_OP_ADD ? (int64_t)((uint64_t)p + (uint64_t)q)
                : s->op == RLX_OP_SUB ? (int64_t)((uint64_t)p - (uint64_t)q)
                : s->op == RLX_OP_MUL ? (int64_t)((uint64_t)p * (uint64_t)q)
                : s->op == RLX_OP_DIV ? rs_idiv(p, q) : s->op == RLX_OP_MAX ? (p > q ? p : q) : (p < q ? p : q);
        }
        return r;
    case RLX_OP_POW:
        if (k == V_F) r.f = powf(x.f, (float)as_double(y));
        else if (k == V_D) r.d = pow(x.d, as_double(y));
        else if (y.k == V_F || y.k == V_D) {
            Val t = mk(V_D);
            t.d = pow(as_double(x), as_double(y));
            return convert(t, s->dtype);
        } else {
            int64_t p = rs_ipow(as_int(x), as_int(y));
            if (k == V_U) r.u = (uint64_t)p;
            else r.i = p;
        }
        return r;
    case RLX_OP_EQUAL: case RLX_OP_LESS: case RLX_OP_GREATER: {
        int c;
        if (x.k == V_F) c = s->op == RLX_OP_EQUAL ? x.f == y.f : s->op == RLX_OP_LESS ? x.f < y.f : x.f > y.f;
        else if (x.k == V_D) c = s->op == RLX_OP_EQUAL ? x.d == y.d : s->op == RLX_OP_LESS ? x.d < y.d : x.d > y.d;
        else if (x.k == V_U) c = s->op == RLX_OP_EQUAL ? x.u == y.u : s->op == RLX_OP_LESS ? x.u < y.u : x.u > y.u;
        else c = s->op == RLX_OP_EQUAL ? x.i == y.i : s->op == RLX_OP_LESS ? x.i < y.i : x.i > y.i;
        r.i = c;
        return r;
    }
    case RLX_OP_AND: r.i = x.i && y.i; return r;
    case RLX_OP_OR: r.i = x.i || y.i; return r;
    case RLX_OP_NOT: r.i = !x.i; return r;
    case RLX_OP_WHERE: return as_int(a[0]) ? convert(a[1], s->dtype) : convert(a[2], s->dtype);
    case RLX_OP_CLIP: {
        Val v = x;
        for (int j = 1; j <= 2; j++) {
            if (!present[j]) continue;
            Val b = convert(a[j], s->dtype);
            double vv = as_double(v), bb = as_double(b);
            int take = j == 1 ? vv < bb : vv > bb;
            if (k == V_I) take = j == 1 ? v.i < b.i : v.i > b.i;
            if (k == V_U) take = j == 1 ? v.u < b.u : v.u > b.u;
            if (take) v = b;
        }
        return v;
    }
    case RLX_OP_CAST: case RLX_OP_CASTLIKE: return convert(a[0], s->dtype);
    case RLX_OP_LESSOREQUAL: case RLX_OP_GREATEROREQUAL: {
        int le = s->op == RLX_OP_LESSOREQUAL, c;
        if (x.k == V_F) c = le ? x.f <= y.f : x.f >= y.f;
        else if (x.k == V_D) c = le ? x.d <= y.d : x.d >= y.d;
        else if (x.k == V_U) c = le ? x.u <= y.u : x.u >= y.u;
        else c = le ? x.i <= y.i : x.i >= y.i;
        r.i = c;
        return r;
    }
    case RLX_OP_XOR: r.i = x.i != y.i; return r;
    case RLX_OP_ISNAN: r.i = x.k == V_D ? rs_isnan_d(x.d) : rs_isnan(x.f); return r;
    case RLX_OP_ISINF:
        r.i = x.k == V_D ? rs_isinf_d(x.d, s->alpha != 0, s->beta != 0) : rs_isinf(x.f, s->alpha != 0, s->beta != 0);
        return r;
    case RLX_OP_MOD:
        if (k == V_F) r.f = s->alpha != 0 ? rs_fmod(x.f, y.f) : rs_mod(x.f, y.f);
        else if (k == V_D) r.d = s->alpha != 0 ? rs_fmod_d(x.d, y.d) : rs_mod_d(x.d, y.d);
        else if (k == V_U) r.u = rs_umod(x.u, y.u);
        else r.i = s->alpha != 0 ? rs_ifmod(x.i, y.i) : rs_imod(x.i, y.i);
        return r;
    case RLX_OP_BITSHIFT: {
        uint64_t p = (uint64_t)as_int(x), q = (uint64_t)as_int(y);
        uint64_t v = s->alpha != 0 ? rs_shl(p, q) : rs_shr(p, q);
        if (k == V_U) r.u = v;
        else r.i = (int64_t)v;
        return r;
    }
    case RLX_OP_MEAN: {
        /* the sum in the printer's order: ((a0 + a1) + a2) ... */
        Val sum = x;
        for (int j = 1; j < s->nargs; j++) {
            Val b = convert(a[j], s->dtype);
            if (k == V_F) sum.f = sum.f + b.f;
            else sum.d = sum.d + b.d;
        }
        RLX_ASSERT(fl);
        if (k == V_F) r.f = rs_mean(sum.f, (float)s->alpha);
        else r.d = rs_mean_d(sum.d, s->alpha);
        return r;
    }
    case RLX_OP_PRELU:
        if (k == V_F) { r.f = rs_prelu(x.f, y.f); return r; }
        if (k == V_D) { r.d = rs_prelu_d(x.d, y.d); return r; }
        if (k == V_U) return x;
        r.i = x.i < 0 ? (int64_t)((uint64_t)y.i * (uint64_t)x.i) : x.i;
        return r;
    case RLX_OP_SIGN:
        if (k == V_I) { r.i = rs_isign(x.i); return r; }
        if (k == V_U) { r.u = x.u > 0; return r; }
        break;
    case RLX_OP_NEG:
        if (k == V_I) { r.i = (int64_t)(0 - (uint64_t)x.i); return r; }
        if (k == V_U) { r.u = 0 - x.u; return r; }
        break;
    case RLX_OP_ABS:
        if (k == V_I) { r.i = x.i < 0 ? (int64_t)(0 - (uint64_t)x.i) : x.i; return r; }
        if (k == V_U) return x;
        break;
    case RLX_OP_RELU:
        if (k == V_I) { r.i = x.i > 0 ? x.i : 0; return r; }
        if (k == V_U) return x;
        break;
    default: break;
    }
    RLX_ASSERT(fl);
    if (!float_unary(s->op, s, x, &r)) RLX_ASSERT(!"elementwise op without an evaluator");
    return r;
}

static Val eval_step(const RlxEltStep *s, const Val *a, const int *present) {
    return narrow(eval_op(s, a, present), s->dtype);
}

static void exec_eltwise(const RlxGraph *g, const RlxThunk *t, uint8_t *A, const uint8_t *W) {
    const RlxValue *y = &g->v[t->out[0].value];
    int r = y->rank;
    int64_t n = rlx_value_numel(y);
    int64_t stride[16][RLX_MAX_RANK];
    const uint8_t *base[16];
    int present[16];
    for (int i = 0; i < t->nin; i++) {
        /* as the printer: an input no step reads (CastLike's target_type)
         * is not loaded, whatever its shape */
        int read = 0;
        for (int k = 0; k < t->nsteps; k++)
            for (int j = 0; j < t->steps[k].nargs; j++) read |= t->steps[k].args[j] == i;
        present[i] = t->in[i].value >= 0 && read;
        if (!present[i]) continue;
        const RlxValue *x = &g->v[t->in[i].value];
        base[i] = (t->in[i].space == RLX_SPACE_WEIGHTS ? W : A) + t->in[i].off;
        int64_t s = 1;
        for (int d = r - 1; d >= 0; d--) {
            int xd = d - (r - x->rank);
            if (xd < 0 || x->dims[xd] == 1) stride[i][d] = 0;
            else {
                stride[i][d] = s;
                s *= x->dims[xd];
            }
        }
    }
    uint8_t *out = A + t->out[0].off;
    Val *tmp = rlx_alloc(sizeof(Val) * (size_t)(t->nin + t->nsteps));
    for (int64_t e = 0; e < n; e++) {
        int64_t idx[RLX_MAX_RANK], rem = e;
        for (int d = r - 1; d >= 0; d--) {
            idx[d] = rem % y->dims[d];
            rem /= y->dims[d];
        }
        for (int i = 0; i < t->nin; i++) {
            if (!present[i]) continue;
            int64_t off = 0;
            for (int d = 0; d < r; d++) off += idx[d] * stride[i][d];
            tmp[i] = load(g->v[t->in[i].value].dtype, base[i], off);
        }
        Val res = mk(V_F);
        for (int k = 0; k < t->nsteps; k++) {
            const RlxEltStep *s = &t->steps[k];
            Val a[4];
            int pr[4] = {0, 0, 0, 0};
            memset(a, 0, sizeof a);
            for (int j = 0; j < s->nargs; j++) {
                int ai = s->args[j];
                if (ai == RLX_ARG_ABSENT) continue;
                if (ai >= 0) {
                    pr[j] = present[ai];
                    if (pr[j]) a[j] = tmp[ai];
                } else {
                    pr[j] = 1;
                    a[j] = tmp[t->nin + (-ai - 1)];
                }
            }
            res = eval_step(s, a, pr);
            tmp[t->nin + k] = res;
        }
        store(y->dtype, out, e, res);
    }
}

int rlx_exec_thunks(const RlxGraph *g, const RlxThunkList *tl, uint8_t *A, const uint8_t *W) {
    rk_ctx ctx = {1, NULL, NULL, 0};
    ctx.scratch_per_thread = (size_t)rlx_thunks_scratch(tl);
    if (ctx.scratch_per_thread) ctx.scratch = rlx_alloc(ctx.scratch_per_thread + 64);
    for (int i = 0; i < tl->n; i++) {
        const RlxThunk *t = &tl->t[i];
        if (t->kind == RLX_K_ELTWISE) {
            exec_eltwise(g, t, A, W);
            continue;
        }
        const void *in[16];
        void *out[8];
        for (int j = 0; j < t->nin; j++)
            in[j] = t->in[j].value < 0 ? NULL : (t->in[j].space == RLX_SPACE_WEIGHTS ? W : A) + t->in[j].off;
        for (int j = 0; j < t->nout; j++) out[j] = A + t->out[j].off;
        rk_kernel_fn fn = t->impl ? rlx_kernel_impls[t->impl].fn : rlx_kernels[t->kind].fn;
        int st = fn(&ctx, t->p, in, out);
        if (st) return st;
    }
    return 0;
}

int rlx_fold_node(RlxGraph *g, int node) {
    RlxNode *n = &g->n[node];
    if (n->dead || n->op == RLX_OP_CONSTANT) return 0;
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] >= 0 && !rlx_is_const(g, n->in[i])) return 0;
    int64_t out_bytes = 0;
    for (int i = 0; i < n->nout; i++) {
        if (n->out[i] < 0) continue;
        if (g->v[n->out[i]].rank < 0) return 0;
        out_bytes += rlx_align64(rlx_value_bytes(&g->v[n->out[i]]));
        if (out_bytes > FOLD_MAX_BYTES) return 0;
    }
    int linear;
    int64_t work = fold_work(g, node, &linear);
    if (!linear && (work > FOLD_MAX_WORK || g->fold_work > FOLD_TOTAL_WORK - work)) return 0;
    g->fold_work = sat_add(g->fold_work, work);
    /* a private plan: inputs packed as weights, outputs packed in an arena.
     * Its per-value arrays are the graph's fold scratch, kept all -1 between
     * folds: fresh arrays of g->nv entries per fold cost O(values) each, and
     * a loop unrolled into 65536 folded nodes asked for tens of GB. */
    RlxFoldScratch *fs = g->fold_scratch;
    if (!fs || fs->cap < g->nv) {
        fs = rlx_alloc(sizeof *fs);
        fs->cap = 2 * g->nv + 16;
        fs->off = rlx_alloc(sizeof(int64_t) * (size_t)fs->cap);
        fs->woff = rlx_alloc(sizeof(int64_t) * (size_t)fs->cap);
        for (int i = 0; i < fs->cap; i++) fs->off[i] = fs->woff[i] = -1;
        g->fold_scratch = fs;
    }
    RlxPlan plan;
    memset(&plan, 0, sizeof plan);
    plan.off = fs->off;
    plan.woff = fs->woff;
    int64_t wbytes = 0, abytes = 0;
    for (int i = 0; i < n->nin; i++) {
        int v = n->in[i];
        if (v < 0 || plan.woff[v] >= 0) continue;
        plan.woff[v] = wbytes;
        wbytes += rlx_align64(rlx_value_bytes(&g->v[v]));
    }
    for (int i = 0; i < n->nout; i++) {
        int v = n->out[i];
        if (v < 0) continue;
        plan.off[v] = abytes;
        abytes += rlx_align64(rlx_value_bytes(&g->v[v]));
    }
    uint8_t *W = rlx_alloc((size_t)wbytes + 64), *A = rlx_alloc((size_t)abytes + 64);
    for (int i = 0; i < n->nin; i++) {
        int v = n->in[i];
        if (v >= 0) memcpy(W + plan.woff[v], g->v[v].data, (size_t)rlx_value_bytes(&g->v[v]));
    }
    /* room for a node's few thunks: rlx_thunk_new's first growth is to 64
     * (77 KB), once per folded node */
    RlxThunkList tl = {0};
    tl.cap = 4;
    tl.t = rlx_alloc(sizeof(RlxThunk) * (size_t)tl.cap);
    rlx_lower_node(g, &plan, &tl, node);
    rlx_c_select(g, &plan, &tl);
    int st = rlx_exec_thunks(g, &tl, A, W);
    n = &g->n[node];
    for (int i = 0; i < n->nout; i++) {
        int v = n->out[i];
        if (v < 0 || st) continue;
        g->v[v].data = A + plan.off[v];
        g->v[v].flags |= RLX_V_WEIGHT;
        g->v[v].producer = -1;
    }
    /* the scratch back to all -1 for the next fold */
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] >= 0) fs->woff[n->in[i]] = -1;
    for (int i = 0; i < n->nout; i++)
        if (n->out[i] >= 0) fs->off[n->out[i]] = -1;
    if (st) rlx_node_error(g, node, "evaluating this constant node failed: %s", rlx_status_str(st));
    n->dead = 1;
    return 1;
}
