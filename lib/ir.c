/* ir.c - arena, diagnostics, op and dtype tables, graph construction.
 *
 * The arena is a list of malloc'd blocks: small requests are carved from the
 * current block, large ones get a block of their own. rlx_arena_free_all
 * releases every block; nothing is freed one by one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rlx.h"

/* ---- arena ---- */
typedef struct Block {
    struct Block *next;
    size_t used, cap;
    long double data[];   /* max alignment (C99 has no max_align_t) */
} Block;
static Block *blocks;
#define BLOCK_SIZE (1u << 20)

/* Under AddressSanitizer every allocation is a block of its own, exactly
 * its size, so that ASan's redzones sit at the end of each one: carved from
 * shared blocks, a write past an allocation lands in the next one unseen
 * (patterns.c once wrote past its use counts into folded weights). */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_PER_ALLOCATION 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_PER_ALLOCATION 1
#endif
#endif
#ifndef ARENA_PER_ALLOCATION
#define ARENA_PER_ALLOCATION 0
#endif

RlxLimits rlx_limits = {0, RLX_DEFAULT_MAX_NODES, NULL};
static int64_t held;   /* bytes of the blocks, plus what rlx_memory_reserve added */

/* malloc itself failed (the memory limit is off or above what the machine
 * has): still one line, and through rlx_error so the driver cleans up. */
static void out_of_memory(void) {
    rlx_error("%s: out of memory after %lld MiB", rlx_limits.file ? rlx_limits.file : "rlxc", (long long)(held >> 20));
}

void rlx_memory_reserve(int64_t bytes) {
    int64_t limit = rlx_limits.memory;
    if (bytes > 0 && limit > 0 && (bytes > limit || held > limit - bytes))
        rlx_error("%s: compiling this model needs more than %lld MiB of memory, rlxc's limit (--memory-limit "
                  "raises it)", rlx_limits.file ? rlx_limits.file : "rlxc", (long long)(limit >> 20));
    held += bytes;
}

int64_t rlx_memory_held(void) { return held; }

void rlx_check_node_count(const char *file, int64_t nodes, const char *what) {
    if (nodes > rlx_limits.max_nodes)
        rlx_error("%s: %s more than %lld nodes, rlxc's limit (--max-nodes raises it)", file, what,
                  (long long)rlx_limits.max_nodes);
}

void *rlx_alloc(size_t n) {
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n || need > (size_t)INT64_MAX - sizeof(Block)) out_of_memory();
    if (ARENA_PER_ALLOCATION) need = n ? n : 1;
    if (need > BLOCK_SIZE / 4 || ARENA_PER_ALLOCATION) {
        rlx_memory_reserve((int64_t)(sizeof(Block) + need));
        Block *b = calloc(1, sizeof(Block) + need);
        if (!b) out_of_memory();
        b->used = b->cap = need;
        if (blocks) {          /* keep the current small block on top */
            b->next = blocks->next;
            blocks->next = b;
        } else {
            blocks = b;
        }
        return b->data;
    }
    if (!blocks || blocks->cap - blocks->used < need) {
        rlx_memory_reserve((int64_t)(sizeof(Block) + BLOCK_SIZE));
        Block *b = malloc(sizeof(Block) + BLOCK_SIZE);
        if (!b) out_of_memory();
        b->used = 0;
        b->cap = BLOCK_SIZE;
        b->next = blocks;
        blocks = b;
    }
    void *p = (char *)blocks->data + blocks->used;
    blocks->used += need;
    memset(p, 0, n);
    return p;
}

void *rlx_realloc(void *p, size_t old, size_t n) {
    void *q = rlx_alloc(n);
    if (p && old) memcpy(q, p, old < n ? old : n);
    return q;
}

char *rlx_strndup(const char *s, size_t n) {
    char *p = rlx_alloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *rlx_strdup(const char *s) { return rlx_strndup(s, strlen(s)); }

char *rlx_fmt(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = rlx_alloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void rlx_arena_free_all(void) {
    while (blocks) {
        Block *next = blocks->next;
        free(blocks);
        blocks = next;
    }
    held = 0;
}

/* ---- buffers ---- */
void rlx_buf_put(RlxBuf *b, const void *p, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;   /* many buffers are short-lived, a few words */
        while (cap < b->len + n + 1) cap *= 2;
        b->data = rlx_realloc(b->data, b->len, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void buf_vprintf(RlxBuf *b, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char small[512];
    char *p = (size_t)n < sizeof small ? small : rlx_alloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    rlx_buf_put(b, p, (size_t)n);
}

void rlx_buf_printf(RlxBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void rlx_emit(RlxBuf *b, const char *fmt, ...) {
    static const char spaces[] = "                                                                ";
    int ind = b->indent * 4;
    if (ind > 64) ind = 64;
    if (fmt[0]) rlx_buf_put(b, spaces, (size_t)ind);
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
    rlx_buf_put(b, "\n", 1);
}

/* ---- name maps ---- */
static size_t name_slot(const RlxNames *m, const char *name) {
    size_t mask = m->cap - 1, i = (size_t)rlx_fnv1a(RLX_FNV_SEED, name, strlen(name)) & mask;
    while (m->names[i] && strcmp(m->names[i], name)) i = (i + 1) & mask;
    return i;
}

int rlx_names_get(const RlxNames *m, const char *name) {
    if (!m->cap) return -1;
    size_t i = name_slot(m, name);
    return m->names[i] ? m->ids[i] : -1;
}

void rlx_names_put(RlxNames *m, const char *name, int id) {
    if (2 * (m->n + 1) > m->cap) {   /* at most half full: short probe runs */
        RlxNames grown = {0};
        grown.cap = m->cap ? 2 * m->cap : 64;
        grown.names = rlx_alloc(sizeof(char *) * grown.cap);
        grown.ids = rlx_alloc(sizeof(int) * grown.cap);
        for (size_t k = 0; k < m->cap; k++)
            if (m->names[k]) {
                size_t j = name_slot(&grown, m->names[k]);
                grown.names[j] = m->names[k];
                grown.ids[j] = m->ids[k];
            }
        grown.n = m->n;
        *m = grown;
    }
    size_t i = name_slot(m, name);
    RLX_ASSERT(!m->names[i]);
    m->names[i] = name;
    m->ids[i] = id;
    m->n++;
}

/* ---- diagnostics ---- */
RlxDiag rlx_diag;

void rlx_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rlx_diag.msg, sizeof rlx_diag.msg, fmt, ap);
    va_end(ap);
    /* one line, always */
    for (char *p = rlx_diag.msg; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    if (rlx_diag.jmp) longjmp(*rlx_diag.jmp, 1);
    fprintf(stderr, "%s\n", rlx_diag.msg);
    abort();
}

void rlx_fatal_internal(const char *file, int line, const char *msg) {
    fprintf(stderr, "rlxc: internal error at %s:%d: %s\n", file, line, msg);
    abort();
}

/* ---- dtypes ---- */
static const struct { const char *name; int size; int onnx; } dtypes[] = {
#define X(id, name, bytes, ctype, npy, onnx) {name, bytes, onnx},
#include "../runtime_min/rlx_dtypes.def"
#undef X
};

int rlx_dtype_from_name(const char *name) {
    for (int i = 0; i < RLX_NDTYPES; i++)
        if (!strcmp(dtypes[i].name, name)) return i;
    return -1;
}
int rlx_dtype_from_onnx(int code) {
    for (int i = 0; i < RLX_NDTYPES; i++)
        if (dtypes[i].onnx == code) return i;
    return -1;
}
int rlx_dtype_to_onnx(int dt) { return dt >= 0 && dt < RLX_NDTYPES ? dtypes[dt].onnx : 0; }
int rlx_dtype_is_float(int dt) { return dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16 || dt == RLX_F64; }
int rlx_dtype_is_int(int dt) {
    return dt == RLX_I8 || dt == RLX_U8 || dt == RLX_I16 || dt == RLX_U16 || dt == RLX_I32 ||
           dt == RLX_U32 || dt == RLX_I64 || dt == RLX_U64;
}
int rlx_dtype_is_signed(int dt) {
    return dt == RLX_I8 || dt == RLX_I16 || dt == RLX_I32 || dt == RLX_I64 || rlx_dtype_is_float(dt);
}

/* ---- ops ---- */
const RlxOpInfo rlx_ops[RLX_NOPS] = {
#define X(id, name, mi, xi, mo, xo, fl, attrs, doc) {name, mi, xi, mo, xo, fl, attrs, doc},
#include "ops.def"
#undef X
};

int rlx_op_from_name(const char *name) {
    for (int i = 0; i < RLX_NOPS; i++)
        if (!strcmp(rlx_ops[i].name, name)) return i;
    return -1;
}

/* ---- graph ---- */
RlxGraph *rlx_graph_new(const char *file) {
    RlxGraph *g = rlx_alloc(sizeof *g);
    g->file = rlx_strdup(file ? file : "<graph>");
    g->name = "model";
    return g;
}

int rlx_value_find(const RlxGraph *g, const char *name) { return rlx_names_get(&g->value_ids, name); }

int rlx_value_add(RlxGraph *g, const char *name) {
    if (rlx_value_find(g, name) >= 0) rlx_error("%s: duplicate value name '%s'", g->file, name);
    if (g->nv == g->capv) {
        int cap = g->capv ? g->capv * 2 : 64;
        g->v = rlx_realloc(g->v, sizeof(RlxValue) * (size_t)g->capv, sizeof(RlxValue) * (size_t)cap);
        g->capv = cap;
    }
    RlxValue *v = &g->v[g->nv];
    memset(v, 0, sizeof *v);
    v->name = rlx_strdup(name);
    rlx_names_put(&g->value_ids, v->name, g->nv);
    v->rank = -1;
    v->producer = -1;
    v->dtype = RLX_F32;
    return g->nv++;
}

int rlx_node_add(RlxGraph *g, const char *name, RlxOp op, int nin, const int *in, int nout, const int *out) {
    if (g->nn == g->capn) {
        int cap = g->capn ? g->capn * 2 : 64;
        g->n = rlx_realloc(g->n, sizeof(RlxNode) * (size_t)g->capn, sizeof(RlxNode) * (size_t)cap);
        g->capn = cap;
    }
    RlxNode *n = &g->n[g->nn];
    memset(n, 0, sizeof *n);
    n->name = rlx_strdup(name);
    n->op = op;
    n->nin = nin;
    n->nout = nout;
    n->in = rlx_alloc(sizeof(int) * (size_t)(nin + 1));
    n->out = rlx_alloc(sizeof(int) * (size_t)(nout + 1));
    if (nin) memcpy(n->in, in, sizeof(int) * (size_t)nin);
    if (nout) memcpy(n->out, out, sizeof(int) * (size_t)nout);
    return g->nn++;
}

RlxAttr *rlx_attr_add(RlxGraph *g, int node, const char *name, RlxAttrKind kind) {
    RlxNode *n = &g->n[node];
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attr[i].name, name)) rlx_node_error(g, node, "duplicate attribute '%s'", name);
    n->attr = rlx_realloc(n->attr, sizeof(RlxAttr) * (size_t)n->nattr, sizeof(RlxAttr) * (size_t)(n->nattr + 1));
    RlxAttr *a = &n->attr[n->nattr++];
    a->name = rlx_strdup(name);
    a->kind = kind;
    a->tensor = -1;
    return a;
}

const RlxAttr *rlx_attr_get(const RlxNode *n, const char *name) {
    for (int i = 0; i < n->nattr; i++)
        if (!strcmp(n->attr[i].name, name)) return &n->attr[i];
    return NULL;
}

int64_t rlx_attr_i(const RlxNode *n, const char *name, int64_t dflt) {
    const RlxAttr *a = rlx_attr_get(n, name);
    return a && (a->kind == RLX_A_INT || a->kind == RLX_A_DTYPE) ? a->i : dflt;
}
double rlx_attr_f(const RlxNode *n, const char *name, double dflt) {
    const RlxAttr *a = rlx_attr_get(n, name);
    return a && a->kind == RLX_A_FLOAT ? a->f : dflt;
}
const char *rlx_attr_s(const RlxNode *n, const char *name, const char *dflt) {
    const RlxAttr *a = rlx_attr_get(n, name);
    return a && a->kind == RLX_A_STRING ? a->s : dflt;
}

static RlxAttrKind kind_from_spec(const char *t, size_t n) {
    static const struct { const char *s; RlxAttrKind k; } kinds[] = {
        {"i", RLX_A_INT}, {"f", RLX_A_FLOAT}, {"s", RLX_A_STRING}, {"ints", RLX_A_INTS},
        {"floats", RLX_A_FLOATS}, {"t", RLX_A_TENSOR}, {"d", RLX_A_DTYPE}, {"g", RLX_A_GRAPH},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].s) == n && !strncmp(kinds[i].s, t, n)) return kinds[i].k;
    RLX_ASSERT(!"bad attribute type in ops.def");
    return RLX_A_INT;
}

static const char *kind_name(RlxAttrKind k) {
    static const char *names[] = {"int", "float", "string", "ints", "floats", "tensor", "dtype", "graph"};
    return names[k];
}

/* Walks the spec "name:type[=default] ..." of the node's op. */
void rlx_attr_check(RlxGraph *g, int node) {
    RlxNode *n = &g->n[node];
    const char *spec = rlx_ops[n->op].attrs;
    /* unknown names and wrong kinds */
    for (int i = 0; i < n->nattr; i++) {
        const char *p = spec;
        int found = 0;
        while (*p) {
            while (*p == ' ') p++;
            if (!*p) break;
            if (*p == '!') p++;
            const char *colon = strchr(p, ':');
            RLX_ASSERT(colon);
            const char *t = colon + 1;
            size_t tl = strcspn(t, "= ");
            if ((size_t)(colon - p) == strlen(n->attr[i].name) && !strncmp(p, n->attr[i].name, (size_t)(colon - p))) {
                RlxAttrKind k = kind_from_spec(t, tl);
                RlxAttr *a = &n->attr[i];
                /* an int given where a float is expected is fine */
                if (k == RLX_A_FLOAT && a->kind == RLX_A_INT) {
                    a->kind = RLX_A_FLOAT;
                    a->f = (double)a->i;
                } else if (k == RLX_A_FLOATS && a->kind == RLX_A_INTS) {
                    a->floats = rlx_alloc(sizeof(double) * (size_t)(a->n + 1));
                    for (int j = 0; j < a->n; j++) a->floats[j] = (double)a->ints[j];
                    a->kind = RLX_A_FLOATS;
                } else if (k != a->kind) {
                    rlx_node_error(g, node, "attribute '%s' must be of type %s, not %s", a->name, kind_name(k),
                                   kind_name(a->kind));
                }
                found = 1;
                break;
            }
            p = t + strcspn(t, " ");
        }
        if (!found) rlx_node_error(g, node, "unknown attribute '%s'", n->attr[i].name);
    }
    /* required ones, and defaults */
    const char *p = spec;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        int required = *p == '!';
        if (required) p++;
        const char *colon = strchr(p, ':');
        const char *t = colon + 1;
        size_t tl = strcspn(t, "= ");
        const char *name = rlx_strndup(p, (size_t)(colon - p));
        const char *end = t + strcspn(t, " ");
        if (!rlx_attr_get(n, name)) {
            if (required) rlx_node_error(g, node, "missing required attribute '%s'", name);
            if (t[tl] == '=') {
                const char *dv = rlx_strndup(t + tl + 1, (size_t)(end - (t + tl + 1)));
                RlxAttr *a = rlx_attr_add(g, node, name, kind_from_spec(t, tl));
                n = &g->n[node];
                switch (a->kind) {
                case RLX_A_INT: a->i = strtoll(dv, NULL, 10); break;
                case RLX_A_FLOAT: a->f = strtod(dv, NULL); break;
                case RLX_A_STRING: a->s = dv; break;
                default: RLX_ASSERT(!"default of this kind unsupported");
                }
            }
        }
        p = end;
    }
}

/* The message is formatted only on failure: these run for every value in
 * every pass. */
static int64_t mul_checked(int64_t a, int64_t b, const RlxValue *v) {
    if (a < 0 || b < 0) rlx_error("value '%s': negative size", v->name);
    if (b && a > INT64_MAX / b) rlx_error("value '%s': size overflows 64 bits", v->name);
    return a * b;
}

int64_t rlx_value_numel(const RlxValue *v) {
    int64_t n = 1;
    RLX_ASSERT(v->rank >= 0);
    for (int i = 0; i < v->rank; i++) n = mul_checked(n, v->dims[i], v);
    return n;
}

int64_t rlx_value_bytes(const RlxValue *v) { return mul_checked(rlx_value_numel(v), rlx_dtype_size(v->dtype), v); }

int rlx_value_size_ok(const RlxValue *v, int64_t *bytes) {
    int64_t n = rlx_dtype_size(v->dtype);
    if (v->rank < 0 || v->rank > RLX_MAX_RANK) return 0;
    for (int i = 0; i < v->rank; i++) {
        if (v->dims[i] < 0 || (v->dims[i] && n > INT64_MAX / v->dims[i])) return 0;
        n *= v->dims[i];
    }
    if (bytes) *bytes = n;
    return 1;
}

int64_t rlx_weight_i64(const RlxValue *v, int64_t i) {
    const uint8_t *p = v->data + i * rlx_dtype_size(v->dtype);
    union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32; int64_t i64;
            uint64_t u64; float f32; double f64; } u;
    memcpy(&u, p, (size_t)rlx_dtype_size(v->dtype));
    switch (v->dtype) {
    case RLX_I8: return u.i8;
    case RLX_U8: case RLX_BOOL: return u.u8;
    case RLX_I16: return u.i16;
    case RLX_U16: return u.u16;
    case RLX_I32: return u.i32;
    case RLX_U32: return u.u32;
    case RLX_I64: return u.i64;
    case RLX_U64: return (int64_t)u.u64;
    default: return (int64_t)rlx_weight_f64(v, i);
    }
}

double rlx_weight_f64(const RlxValue *v, int64_t i) {
    const uint8_t *p = v->data + i * rlx_dtype_size(v->dtype);
    switch (v->dtype) {
    case RLX_F32: { float f; memcpy(&f, p, 4); return f; }
    case RLX_F64: { double d; memcpy(&d, p, 8); return d; }
    case RLX_F16: { uint16_t h; memcpy(&h, p, 2); return rlx_f16_to_f32(h); }
    case RLX_BF16: { uint16_t h; memcpy(&h, p, 2); return rlx_bf16_to_f32(h); }
    case RLX_U64: { uint64_t u; memcpy(&u, p, 8); return (double)u; }
    default: return (double)rlx_weight_i64(v, i);
    }
}

int rlx_is_const(const RlxGraph *g, int value) {
    return value >= 0 && (g->v[value].flags & RLX_V_WEIGHT) && g->v[value].data;
}

void rlx_node_error(const RlxGraph *g, int node, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const RlxNode *n = &g->n[node];
    rlx_error("%s: node '%s' (%s): %s", g->file, n->name, rlx_ops[n->op].name, msg);
}

/* Formatted on the stack and copied: messages call this often (some
 * eagerly), and an RlxBuf starts at 4 KB. */
const char *rlx_shape_str(const RlxValue *v) {
    if (v->rank < 0) return "[?]";
    char text[2 + RLX_MAX_RANK * 21];
    int n = 0, rank = v->rank < RLX_MAX_RANK ? v->rank : RLX_MAX_RANK;
    text[n++] = '[';
    for (int i = 0; i < rank; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, i ? ",%lld" : "%lld", (long long)v->dims[i]);
    text[n++] = ']';
    return rlx_strndup(text, (size_t)n);
}
