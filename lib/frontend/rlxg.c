/* rlxg.c - the .rlxg reader and writer (docs/rlxg.md is the schema).
 *
 * Reading: the whole file goes into the arena. A file whose first non-blank
 * byte is '{' is the pure-JSON form; otherwise it must be the container:
 * "RLXG", u32 version, u64 header length, the JSON header, zero padding to a
 * 64-byte boundary, then the data section that weight offsets point into.
 * cJSON parses the header; the graph is built in two passes over "nodes"
 * (first every node and the values it produces, then the inputs, which may
 * name values produced by nodes listed later). Every field is checked before
 * it is used, and each failure is one rlx_error line naming the file and the
 * entry. cJSON mallocs its tree, so the build runs under a local rlx_try that
 * frees the tree and re-raises the error: no failure path leaks.
 *
 * Writing: one JSON printer serves both forms. The container form puts each
 * weight at a 64-byte aligned offset of the data section; the pure-JSON form
 * (rlx_graph_dump, used by -d) writes weights inline. Tensor attributes are
 * always written inline. Numbers are printed with the fewest digits that
 * read back to the same value, so a write -> read round trip is exact.
 * Multi-byte data is little-endian; like the rest of rlxc, this assumes a
 * little-endian host.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "rlx.h"

#define RLXG_MAGIC "RLXG"
#define RLXG_VERSION 1u
#define RLXG_FIXED 16u        /* magic + version + header length */
#define TWO63 9223372036854775808.0
#define TWO53 9007199254740992.0

/* ---- reading the file ---- */

uint8_t *rlx_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) rlx_error("%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        rlx_error("%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        rlx_error("%s: is a directory", path);
    }
    /* Regular files are read in one allocation of their size; pipes and
     * devices grow the buffer as they go. One spare byte keeps a NUL after
     * the contents. */
    size_t cap = 65536;
    if (S_ISREG(st.st_mode)) {
        if ((uintmax_t)st.st_size >= SIZE_MAX) {
            fclose(f);
            rlx_error("%s: file too large", path);
        }
        cap = (size_t)st.st_size + 1;
    }
    uint8_t *buf = rlx_alloc(cap);
    size_t n = 0;
    for (;;) {
        if (n == cap) {
            if (cap > SIZE_MAX / 2) {
                fclose(f);
                rlx_error("%s: file too large", path);
            }
            buf = rlx_realloc(buf, n, cap * 2);
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        rlx_error("%s: read error: %s", path, strerror(e));
    }
    fclose(f);
    if (n == cap) buf = rlx_realloc(buf, n, n + 1);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* ---- reader state and error helpers ---- */

typedef struct {
    int64_t off, len;
    int value;
} Range;

typedef struct {
    const char *file;
    RlxGraph *g;
    int container;
    const uint8_t *data;          /* the data section (container form) */
    size_t data_len;
    Range *ranges;                /* weight byte ranges, for the overlap check */
    int nranges, capranges;
    RlxNames node_ids;            /* node name -> id, for the duplicate check */
} Reader;

/* Every message is "WHERE: text", WHERE starting with the file name. */
static void err(const char *where, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rlx_error("%s: %s", where, msg);
}

static const char *json_type_name(const cJSON *j) {
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNull(j)) return "null";
    return "invalid";
}

/* Rejects unknown and repeated keys: cJSON keeps duplicates and lookups see
 * only the first, which would silently drop the second. */
static void check_keys(const cJSON *obj, const char *const *allowed, const char *where) {
    for (const cJSON *c = obj->child; c; c = c->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(*a, c->string)) ok = 1;
        if (!ok) err(where, "unknown field '%s'", c->string);
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (!strcmp(d->string, c->string)) err(where, "duplicate field '%s'", c->string);
    }
}

enum { J_NUM, J_STR, J_ARR, J_OBJ };
static const cJSON *field(const cJSON *obj, const char *key, int type, int required, const char *where) {
    static const char *names[] = {"a number", "a string", "an array", "an object"};
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) {
        if (required) err(where, "missing field '%s'", key);
        return NULL;
    }
    int ok = type == J_NUM ? cJSON_IsNumber(j) : type == J_STR ? cJSON_IsString(j)
           : type == J_ARR ? cJSON_IsArray(j) : cJSON_IsObject(j);
    if (!ok) err(where, "field '%s' must be %s, not %s", key, names[type], json_type_name(j));
    return j;
}

static int is_int64(double d) { return d == floor(d) && d >= -TWO63 && d < TWO63; }

static int64_t get_int(const cJSON *j, const char *what, const char *where) {
    if (!cJSON_IsNumber(j) || !is_int64(j->valuedouble))
        err(where, "%s must be an integer, not %s", what, cJSON_IsNumber(j) ? "a fraction" : json_type_name(j));
    return (int64_t)j->valuedouble;
}

/* Value names: non-empty, no control characters (messages stay one line and
 * generated comments stay intact). */
static const char *check_name(const cJSON *j, const char *what, const char *where) {
    if (!j) err(where, "missing %s", what);
    if (!cJSON_IsString(j)) err(where, "%s must be a string, not %s", what, json_type_name(j));
    const char *s = j->valuestring;
    if (!*s) err(where, "%s must not be empty", what);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f) err(where, "%s contains a control character", what);
    return s;
}

static int is_c_identifier(const char *s) {
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static const char *shape_text(int rank, const int64_t *dims) {
    RlxValue v;
    memset(&v, 0, sizeof v);
    v.rank = rank;
    memcpy(v.dims, dims, sizeof(int64_t) * (size_t)rank);
    return rlx_shape_str(&v);
}

/* An integer attribute (or element) beyond 2^53 is not exact as a JSON
 * number, so it is written, and read, as a decimal string; a JSON number
 * there would already have been rounded by the parser. */
static int attr_int_string(const char *s, int64_t *v) {
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || *s == ' ') return 0;
    *v = x;
    return 1;
}

/* "dtype" and "shape" of an input, weight, tensor attribute or output.
 * The byte size is checked here, with the file in the message, so that
 * later rlx_value_bytes calls cannot fail. */
static void parse_type(const cJSON *obj, int required, int *dtype, int *rank, int64_t *dims, const char *where) {
    const cJSON *jd = field(obj, "dtype", J_STR, required, where);
    const cJSON *js = field(obj, "shape", J_ARR, required, where);
    *dtype = -1;
    *rank = -1;
    if (jd) {
        *dtype = rlx_dtype_from_name(jd->valuestring);
        if (*dtype < 0) err(where, "unknown dtype '%s'", jd->valuestring);
    }
    if (!js) return;
    int n = cJSON_GetArraySize(js);
    if (n > RLX_MAX_RANK) err(where, "rank %d exceeds the maximum of %d", n, RLX_MAX_RANK);
    int i = 0;
    for (const cJSON *e = js->child; e; e = e->next, i++) {
        /* beyond 2^53 a decimal string, as the writer puts it (put_int) */
        int64_t d = 0;
        if (cJSON_IsString(e)) {
            if (!attr_int_string(e->valuestring, &d)) err(where, "shape[%d] must be an integer, not '%s'", i, e->valuestring);
        } else {
            d = get_int(e, rlx_fmt("shape[%d]", i), where);
        }
        if (d < 0) err(where, "negative dimension %lld in shape", (long long)d);
        dims[i] = d;
    }
    *rank = n;
    /* the ONNX reader's rule (onnx.c fill_dims), so that what it imports
     * reads back: the element count in 64 bits, and 8 bytes an element */
    int64_t numel = 1;
    for (i = 0; i < n; i++) {
        if (dims[i] && numel > INT64_MAX / dims[i])
            err(where, "shape %s: byte size overflows 64 bits", shape_text(n, dims));
        numel *= dims[i];
    }
    if (numel > INT64_MAX / 8) err(where, "shape %s: byte size overflows 64 bits", shape_text(n, dims));
}

static void set_value_type(RlxValue *v, int dtype, int rank, const int64_t *dims) {
    v->dtype = (RlxDType)dtype;
    v->rank = rank;
    memcpy(v->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* ---- inline data ---- */

static int parse_special_float(const char *s, double *d) {
    if (!strcmp(s, "nan")) *d = NAN;
    else if (!strcmp(s, "inf") || !strcmp(s, "+inf")) *d = INFINITY;
    else if (!strcmp(s, "-inf")) *d = -INFINITY;
    else return 0;
    return 1;
}

static double elem_float(const cJSON *e, int64_t i, const char *where) {
    double d;
    if (cJSON_IsNumber(e)) return e->valuedouble;
    if (cJSON_IsString(e)) {
        if (parse_special_float(e->valuestring, &d)) return d;
        char *end;
        errno = 0;
        d = strtod(e->valuestring, &end);
        if (end != e->valuestring && !*end) return d;
    }
    err(where, "data[%lld] must be a number, \"nan\", \"inf\" or \"-inf\"", (long long)i);
    return 0;
}

/* Integers: JSON numbers up to 2^53 (exact in a double), or decimal strings
 * for the full 64-bit range. u64 values above INT64_MAX come back as their
 * two's complement, which is what memcpy into a u64 slot wants. */
static int64_t elem_int(const cJSON *e, int dtype, int64_t i, const char *where) {
    static const struct { int dt; int64_t lo, hi; } lim[] = {
        {RLX_I8, INT8_MIN, INT8_MAX}, {RLX_U8, 0, UINT8_MAX}, {RLX_I16, INT16_MIN, INT16_MAX},
        {RLX_U16, 0, UINT16_MAX}, {RLX_I32, INT32_MIN, INT32_MAX}, {RLX_U32, 0, UINT32_MAX},
        {RLX_I64, INT64_MIN, INT64_MAX}, {RLX_U64, 0, INT64_MAX},
    };
    int64_t lo = 0, hi = 0;
    for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++)
        if (lim[k].dt == dtype) lo = lim[k].lo, hi = lim[k].hi;
    const char *dn = rlx_dtype_name(dtype);
    if (cJSON_IsNumber(e)) {
        double d = e->valuedouble;
        if (d != floor(d)) err(where, "data[%lld] must be an integer for dtype %s", (long long)i, dn);
        if (d < -TWO53 || d > TWO53)
            err(where, "data[%lld]: %.17g is not exact as a JSON number; write it as a decimal string",
                (long long)i, d);
        if (d < (double)lo || d > (double)hi) err(where, "data[%lld]: %.17g is out of range for %s", (long long)i, d, dn);
        return (int64_t)d;
    }
    if (cJSON_IsString(e)) {
        const char *s = e->valuestring;
        char *end;
        errno = 0;
        if (dtype == RLX_U64) {
            if (*s == '-' || *s == ' ') err(where, "data[%lld]: '%s' is out of range for u64", (long long)i, s);
            unsigned long long u = strtoull(s, &end, 10);
            if (end == s || *end) goto bad;
            if (errno == ERANGE) err(where, "data[%lld]: '%s' is out of range for u64", (long long)i, s);
            return (int64_t)u;
        }
        long long v = strtoll(s, &end, 10);
        if (end == s || *end) goto bad;
        if (errno == ERANGE || v < lo || v > hi) err(where, "data[%lld]: '%s' is out of range for %s", (long long)i, s, dn);
        return v;
    }
bad:
    err(where, "data[%lld] must be an integer (a number or a decimal string) for dtype %s", (long long)i, dn);
    return 0;
}

static void store_elem(const cJSON *e, int dtype, uint8_t *dst, int64_t i, const char *where) {
    switch (dtype) {
    case RLX_F32: { float f = (float)elem_float(e, i, where); memcpy(dst, &f, 4); return; }
    case RLX_F64: { double d = elem_float(e, i, where); memcpy(dst, &d, 8); return; }
    case RLX_F16: { uint16_t h = rlx_f32_to_f16((float)elem_float(e, i, where)); memcpy(dst, &h, 2); return; }
    case RLX_BF16: { uint16_t h = rlx_f32_to_bf16((float)elem_float(e, i, where)); memcpy(dst, &h, 2); return; }
    case RLX_BOOL:
        if (cJSON_IsBool(e)) *dst = cJSON_IsTrue(e) ? 1 : 0;
        else if (cJSON_IsNumber(e) && (e->valuedouble == 0 || e->valuedouble == 1)) *dst = e->valuedouble == 1;
        else err(where, "data[%lld] must be 0, 1, true or false for dtype bool", (long long)i);
        return;
    default: break;
    }
    int64_t v = elem_int(e, dtype, i, where);
    switch (rlx_dtype_size(dtype)) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); return; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); return; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); return; }
    default: memcpy(dst, &v, 8); return;
    }
}

/* ---- weights and tensor attributes ---- */

static void add_range(Reader *r, int64_t off, int64_t len, int value) {
    if (r->nranges == r->capranges) {
        int cap = r->capranges ? r->capranges * 2 : 32;
        r->ranges = rlx_realloc(r->ranges, sizeof(Range) * (size_t)r->capranges, sizeof(Range) * (size_t)cap);
        r->capranges = cap;
    }
    r->ranges[r->nranges].off = off;
    r->ranges[r->nranges].len = len;
    r->ranges[r->nranges].value = value;
    r->nranges++;
}

/* Fills value id `vid` (already added) from a weight object. */
static void parse_weight(Reader *r, const cJSON *w, int vid, const char *where) {
    RlxGraph *g = r->g;
    int dtype, rank;
    int64_t dims[RLX_MAX_RANK];
    parse_type(w, 1, &dtype, &rank, dims, where);
    set_value_type(&g->v[vid], dtype, rank, dims);
    g->v[vid].flags |= RLX_V_WEIGHT;
    int64_t numel = rlx_value_numel(&g->v[vid]);
    int64_t bytes = rlx_value_bytes(&g->v[vid]);
    const cJSON *jdata = field(w, "data", J_ARR, 0, where);
    const cJSON *joff = field(w, "offset", J_NUM, 0, where);
    const cJSON *jlen = field(w, "length", J_NUM, 0, where);
    if (jdata && (joff || jlen)) err(where, "give either 'data' or 'offset' and 'length', not both");
    if (jdata) {
        int count = cJSON_GetArraySize(jdata);
        if (count != numel)
            err(where, "data has %d values, shape %s needs %lld", count, rlx_shape_str(&g->v[vid]), (long long)numel);
        uint8_t *p = rlx_alloc(bytes ? (size_t)bytes : 1);
        int size = rlx_dtype_size(dtype);
        int64_t i = 0;
        for (const cJSON *e = jdata->child; e; e = e->next, i++) store_elem(e, dtype, p + i * size, i, where);
        g->v[vid].data = p;
        return;
    }
    if (!joff && !jlen) err(where, "missing field 'data' (or 'offset' and 'length')");
    if (!r->container) err(where, "'offset' and 'length' need the container form; this file is pure JSON");
    if (!joff) err(where, "missing field 'offset'");
    if (!jlen) err(where, "missing field 'length'");
    int64_t off = get_int(joff, "offset", where), len = get_int(jlen, "length", where);
    if (off < 0) err(where, "negative offset %lld", (long long)off);
    if (len < 0) err(where, "negative length %lld", (long long)len);
    if (len != bytes)
        err(where, "length %lld does not match %s %s (%lld bytes)", (long long)len, rlx_dtype_name(dtype),
            rlx_shape_str(&g->v[vid]), (long long)bytes);
    if ((uint64_t)off > r->data_len || (uint64_t)len > r->data_len - (uint64_t)off)
        err(where, "bytes [%lld, %lld) run past the end of the data section (%llu bytes)", (long long)off,
            (long long)off + (long long)len, (unsigned long long)r->data_len);
    g->v[vid].data = r->data + off;
    if (len) add_range(r, off, len, vid);
}

static int cmp_range(const void *a, const void *b) {
    const Range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off ? 1 : x->value - y->value;
}

static void check_overlaps(Reader *r) {
    if (r->nranges < 2) return;
    qsort(r->ranges, (size_t)r->nranges, sizeof(Range), cmp_range);
    int widest = 0;   /* the earlier range reaching furthest */
    for (int i = 1; i < r->nranges; i++) {
        const Range *a = &r->ranges[widest], *b = &r->ranges[i];
        if (a->off + a->len > b->off)
            rlx_error("%s: weights '%s' and '%s' overlap in the data section", r->file, r->g->v[a->value].name,
                      r->g->v[b->value].name);
        if (b->off + b->len > a->off + a->len) widest = i;
    }
}

/* ---- nodes and attributes ---- */

/* The type token of attribute `name` in ops.def ("i", "d", ...), or NULL. */
static const char *spec_type(RlxOp op, const char *name, size_t *tlen) {
    const char *p = rlx_ops[op].attrs;
    size_t nl = strlen(name);
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        if (*p == '!') p++;
        const char *colon = strchr(p, ':');
        RLX_ASSERT(colon);
        const char *t = colon + 1;
        *tlen = strcspn(t, "= ");
        if ((size_t)(colon - p) == nl && !strncmp(p, name, nl)) return t;
        p = t + strcspn(t, " ");
    }
    return NULL;
}

static int spec_is(const char *t, size_t tl, const char *want) {
    return t && tl == strlen(want) && !strncmp(t, want, tl);
}

static const char *node_where(Reader *r, const char *name, const char *op) {
    return rlx_fmt("%s: node '%s' (%s)", r->file, name, op);
}

static void check_exact(double d, int spec_int, const char *aw) {
    if (spec_int && (d < -TWO53 || d > TWO53))
        err(aw, "%.17g is not exact as a JSON number; write it as a decimal string", d);
}

static void parse_attr(Reader *r, int node, const cJSON *ja, const char *where) {
    RlxGraph *g = r->g;
    const char *name = ja->string;
    size_t tl = 0;
    const char *t = spec_type(g->n[node].op, name, &tl);
    const char *aw = rlx_fmt("%s: attribute '%s'", where, name);
    double special;
    int64_t big;
    if (cJSON_IsNumber(ja) || cJSON_IsBool(ja)) {
        double d = cJSON_IsBool(ja) ? (cJSON_IsTrue(ja) ? 1 : 0) : ja->valuedouble;
        if (is_int64(d)) {
            check_exact(d, spec_is(t, tl, "i"), aw);
            rlx_attr_add(g, node, name, RLX_A_INT)->i = (int64_t)d;
        } else {
            rlx_attr_add(g, node, name, RLX_A_FLOAT)->f = d;
        }
    } else if (cJSON_IsString(ja)) {
        const char *s = ja->valuestring;
        if (spec_is(t, tl, "i") && attr_int_string(s, &big)) {
            rlx_attr_add(g, node, name, RLX_A_INT)->i = big;
        } else if (spec_is(t, tl, "d")) {
            int dt = rlx_dtype_from_name(s);
            if (dt < 0) err(aw, "unknown dtype '%s'", s);
            rlx_attr_add(g, node, name, RLX_A_DTYPE)->i = dt;
        } else if (spec_is(t, tl, "f") && parse_special_float(s, &special)) {
            rlx_attr_add(g, node, name, RLX_A_FLOAT)->f = special;
        } else {
            rlx_attr_add(g, node, name, RLX_A_STRING)->s = rlx_strdup(s);
        }
    } else if (cJSON_IsArray(ja)) {
        int n = cJSON_GetArraySize(ja), all_int = 1, i = 0, spec_ints = spec_is(t, tl, "ints");
        double *f = rlx_alloc(sizeof(double) * (size_t)(n + 1));
        int64_t *v = rlx_alloc(sizeof(int64_t) * (size_t)(n + 1));
        for (const cJSON *e = ja->child; e; e = e->next, i++) {
            if (cJSON_IsNumber(e)) {
                f[i] = e->valuedouble;
                if (!is_int64(f[i])) all_int = 0;
                else check_exact(f[i], spec_ints, rlx_fmt("%s: element %d", aw, i));
                v[i] = all_int ? (int64_t)f[i] : 0;
            } else if (cJSON_IsString(e) && spec_ints && attr_int_string(e->valuestring, &v[i])) {
                f[i] = (double)v[i];
            } else if (cJSON_IsString(e) && parse_special_float(e->valuestring, &f[i])) {
                all_int = 0;
            } else {
                err(aw, "element %d must be a number, not %s", i, json_type_name(e));
            }
        }
        if (all_int) {
            RlxAttr *a = rlx_attr_add(g, node, name, RLX_A_INTS);
            a->n = n;
            a->ints = v;
        } else {
            RlxAttr *a = rlx_attr_add(g, node, name, RLX_A_FLOATS);
            a->n = n;
            a->floats = f;
        }
    } else if (cJSON_IsObject(ja)) {
        static const char *const keys[] = {"dtype", "shape", "data", "offset", "length", NULL};
        check_keys(ja, keys, aw);
        /* The tensor becomes a weight value with a name no one else uses. */
        const char *vname = rlx_fmt("%s.%s", g->n[node].name, name);
        for (int k = 1; rlx_value_find(g, vname) >= 0; k++) vname = rlx_fmt("%s.%s.%d", g->n[node].name, name, k);
        int vid = rlx_value_add(g, vname);
        parse_weight(r, ja, vid, aw);
        rlx_attr_add(g, node, name, RLX_A_TENSOR)->tensor = vid;
    } else {
        err(aw, "unsupported value %s", json_type_name(ja));
    }
}

static const char *arity_text(int lo, int hi, const char *what) {
    if (hi < 0) return rlx_fmt("at least %d %s%s", lo, what, lo == 1 ? "" : "s");
    if (lo == hi) return rlx_fmt("%d %s%s", lo, what, lo == 1 ? "" : "s");
    return rlx_fmt("%d to %d %ss", lo, hi, what);
}

/* Pass 1: the node itself and the values it produces. */
static void add_node(Reader *r, const cJSON *jn, int index) {
    static const char *const keys[] = {"name", "op", "inputs", "outputs", "attrs", NULL};
    RlxGraph *g = r->g;
    const char *where = rlx_fmt("%s: nodes[%d]", r->file, index);
    if (!cJSON_IsObject(jn)) err(where, "must be an object, not %s", json_type_name(jn));
    const char *name = check_name(cJSON_GetObjectItemCaseSensitive(jn, "name"), "field 'name'", where);
    where = rlx_fmt("%s: node '%s'", r->file, name);
    const cJSON *jop = field(jn, "op", J_STR, 1, where);
    int op = rlx_op_from_name(jop->valuestring);
    where = node_where(r, name, jop->valuestring);
    if (op < 0) err(where, "unknown op '%s'", jop->valuestring);
    check_keys(jn, keys, where);
    if (rlx_names_get(&r->node_ids, name) >= 0) err(where, "duplicate node name '%s'", name);
    rlx_names_put(&r->node_ids, name, g->nn);
    const cJSON *jin = field(jn, "inputs", J_ARR, 1, where);
    const cJSON *jout = field(jn, "outputs", J_ARR, 1, where);
    field(jn, "attrs", J_OBJ, 0, where);
    const RlxOpInfo *info = &rlx_ops[op];
    int nin = cJSON_GetArraySize(jin), nout = cJSON_GetArraySize(jout);
    if (nin < info->min_in || (info->max_in >= 0 && nin > info->max_in))
        err(where, "takes %s, got %d", arity_text(info->min_in, info->max_in, "input"), nin);
    if (nout < info->min_out || (info->max_out >= 0 && nout > info->max_out))
        err(where, "takes %s, got %d", arity_text(info->min_out, info->max_out, "output"), nout);
    int *in = rlx_alloc(sizeof(int) * (size_t)(nin + 1));
    int *out = rlx_alloc(sizeof(int) * (size_t)(nout + 1));
    for (int i = 0; i < nin; i++) in[i] = -1;
    int i = 0, id = g->nn;
    for (const cJSON *e = jout->child; e; e = e->next, i++) {
        const char *vn = check_name(e, rlx_fmt("output %d", i), where);
        int v = rlx_value_find(g, vn);
        if (v >= 0) {
            const RlxValue *pv = &g->v[v];
            if (pv->producer >= 0)
                err(where, "value '%s' is produced twice (also by node '%s')", vn,
                    pv->producer == id ? name : g->n[pv->producer].name);
            err(where, "output '%s' is already a graph %s", vn, pv->flags & RLX_V_INPUT ? "input" : "weight");
        }
        out[i] = rlx_value_add(g, vn);
        g->v[out[i]].producer = id;
    }
    rlx_node_add(g, name, (RlxOp)op, nin, in, nout, out);
}

/* Pass 2: inputs (every producer exists now) and attributes. */
static void link_node(Reader *r, const cJSON *jn, int node) {
    RlxGraph *g = r->g;
    const char *where = node_where(r, g->n[node].name, rlx_ops[g->n[node].op].name);
    const cJSON *jin = cJSON_GetObjectItemCaseSensitive(jn, "inputs");
    int i = 0;
    for (const cJSON *e = jin->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e)) err(where, "input %d must be a string, not %s", i, json_type_name(e));
        if (!e->valuestring[0]) {
            if (i < rlx_ops[g->n[node].op].min_in) err(where, "input %d is required and must not be empty", i);
            continue;
        }
        int v = rlx_value_find(g, e->valuestring);
        if (v < 0) err(where, "input '%s' is not defined (not a graph input, a weight or a node output)", e->valuestring);
        g->n[node].in[i] = v;
    }
    const cJSON *ja = cJSON_GetObjectItemCaseSensitive(jn, "attrs");
    if (ja)
        for (const cJSON *a = ja->child; a; a = a->next) parse_attr(r, node, a, where);
    rlx_attr_check(g, node);
}

/* ---- the graph ---- */

static void build_graph(Reader *r, const cJSON *root) {
    static const char *const top_keys[] = {"rlxg", "name", "inputs", "outputs", "weights", "nodes", NULL};
    static const char *const input_keys[] = {"name", "dtype", "shape", NULL};
    static const char *const weight_keys[] = {"name", "dtype", "shape", "data", "offset", "length", NULL};
    RlxGraph *g = r->g;
    const char *file = r->file;
    if (!cJSON_IsObject(root)) err(file, "the JSON must be an object, not %s", json_type_name(root));
    check_keys(root, top_keys, file);
    const cJSON *jver = field(root, "rlxg", J_NUM, 0, file);
    if (jver && jver->valuedouble != 1) err(file, "unsupported rlxg version %g (expected 1)", jver->valuedouble);
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (jname) {
        if (!cJSON_IsString(jname)) err(file, "field 'name' must be a string, not %s", json_type_name(jname));
        if (!is_c_identifier(jname->valuestring))
            err(file, "model name '%s' is not a valid C identifier", jname->valuestring);
        g->name = rlx_strdup(jname->valuestring);
    }
    const cJSON *jins = field(root, "inputs", J_ARR, 0, file);
    const cJSON *jouts = field(root, "outputs", J_ARR, 1, file);
    const cJSON *jws = field(root, "weights", J_ARR, 0, file);
    const cJSON *jnodes = field(root, "nodes", J_ARR, 0, file);

    int n = jins ? cJSON_GetArraySize(jins) : 0, i = 0;
    g->inputs = rlx_alloc(sizeof(int) * (size_t)(n + 1));
    if (jins)
        for (const cJSON *e = jins->child; e; e = e->next, i++) {
            const char *where = rlx_fmt("%s: inputs[%d]", file, i);
            if (!cJSON_IsObject(e)) err(where, "must be an object, not %s", json_type_name(e));
            const char *name = check_name(cJSON_GetObjectItemCaseSensitive(e, "name"), "field 'name'", where);
            where = rlx_fmt("%s: input '%s'", file, name);
            check_keys(e, input_keys, where);
            int dtype, rank;
            int64_t dims[RLX_MAX_RANK];
            parse_type(e, 1, &dtype, &rank, dims, where);
            int v = rlx_value_add(g, name);
            set_value_type(&g->v[v], dtype, rank, dims);
            g->v[v].flags |= RLX_V_INPUT;
            g->inputs[g->ninputs++] = v;
        }

    i = 0;
    if (jws)
        for (const cJSON *e = jws->child; e; e = e->next, i++) {
            const char *where = rlx_fmt("%s: weights[%d]", file, i);
            if (!cJSON_IsObject(e)) err(where, "must be an object, not %s", json_type_name(e));
            const char *name = check_name(cJSON_GetObjectItemCaseSensitive(e, "name"), "field 'name'", where);
            where = rlx_fmt("%s: weight '%s'", file, name);
            check_keys(e, weight_keys, where);
            parse_weight(r, e, rlx_value_add(g, name), where);
        }

    if (jnodes) {
        rlx_check_node_count(file, cJSON_GetArraySize(jnodes), "the graph has");
        i = 0;
        for (const cJSON *e = jnodes->child; e; e = e->next, i++) add_node(r, e, i);
        i = 0;
        for (const cJSON *e = jnodes->child; e; e = e->next, i++) link_node(r, e, i);
    }
    check_overlaps(r);

    n = cJSON_GetArraySize(jouts);
    if (n == 0) err(file, "the graph has no outputs");
    g->outputs = rlx_alloc(sizeof(int) * (size_t)n);
    g->output_decl = rlx_alloc(sizeof(RlxDecl) * (size_t)n);
    i = 0;
    for (const cJSON *e = jouts->child; e; e = e->next, i++) {
        static const char *const keys[] = {"name", "dtype", "shape", NULL};
        const char *where = rlx_fmt("%s: outputs[%d]", file, i);
        if (!cJSON_IsObject(e)) err(where, "must be an object, not %s", json_type_name(e));
        const char *name = check_name(cJSON_GetObjectItemCaseSensitive(e, "name"), "field 'name'", where);
        where = rlx_fmt("%s: output '%s'", file, name);
        check_keys(e, keys, where);
        int v = rlx_value_find(g, name);
        if (v < 0) err(file, "graph output '%s' is not defined (not a graph input, a weight or a node output)", name);
        if (g->v[v].flags & RLX_V_OUTPUT) err(file, "graph output '%s' is listed twice", name);
        RlxDecl *d = &g->output_decl[i];
        parse_type(e, 0, &d->dtype, &d->rank, d->dims, where);
        g->v[v].flags |= RLX_V_OUTPUT;
        g->outputs[g->noutputs++] = v;
    }
}

static uint64_t le_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* An upper bound of what cJSON mallocs for text: one item per value (each
 * value but the root follows a ',', '[' or ':' outside strings) and the
 * bytes of its strings. "[{},{},...]" is 3 bytes an item on disk and some
 * 64 in memory, so the tree can be many times the file. */
static int64_t json_tree_bound(const char *text, size_t len) {
    int64_t items = 1;
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_string) {
            if (ch == '\\') i++;
            else if (ch == '"') in_string = 0;
        } else if (ch == '"') {
            in_string = 1;
        } else if (ch == ',' || ch == '[' || ch == ':') {
            items++;
        }
    }
    return items * (int64_t)sizeof(cJSON) + (int64_t)len;
}

static void json_error(const char *file, const char *text, size_t len, const char *at, size_t base, const char *what) {
    size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : len;
    int line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') line++, col = 1;
        else col++;
    }
    rlx_error("%s: %s at line %d, column %d (byte %llu)", file, what, line, col, (unsigned long long)(base + off));
}

RlxGraph *rlx_read_rlxg(const char *path) {
    size_t len;
    const uint8_t *buf = rlx_read_file(path, &len);
    return rlx_read_rlxg_buffer(path, buf, len);
}

RlxGraph *rlx_read_rlxg_buffer(const char *path, const uint8_t *buf, size_t len) {
    Reader r;
    memset(&r, 0, sizeof r);
    r.file = path;
    r.g = rlx_graph_new(path);
    const char *text;
    size_t text_len, text_base;

    size_t ws = 0;
    while (ws < len && (buf[ws] == ' ' || buf[ws] == '\t' || buf[ws] == '\n' || buf[ws] == '\r')) ws++;
    if (len == 0) rlx_error("%s: empty file", path);
    if (ws < len && buf[ws] == '{') {
        text = (const char *)buf;
        text_len = len;
        text_base = 0;
    } else {
        size_t m = len < 4 ? len : 4;
        if (memcmp(buf, RLXG_MAGIC, m) != 0)
            rlx_error("%s: not an .rlxg file (bad magic: neither \"RLXG\" nor a JSON object)", path);
        if (len < RLXG_FIXED)
            rlx_error("%s: truncated header: %llu bytes, the fixed header has %u", path, (unsigned long long)len,
                      RLXG_FIXED);
        uint32_t version = (uint32_t)buf[4] | (uint32_t)buf[5] << 8 | (uint32_t)buf[6] << 16 | (uint32_t)buf[7] << 24;
        if (version != RLXG_VERSION)
            rlx_error("%s: unsupported .rlxg version %lu (this rlxc reads version %u)", path, (unsigned long)version,
                      RLXG_VERSION);
        uint64_t hlen = le_u64(buf + 8);
        if (hlen > len - RLXG_FIXED)
            rlx_error("%s: header length %llu runs past the end of the file (%llu bytes)", path,
                      (unsigned long long)hlen, (unsigned long long)len);
        size_t data_off = ((size_t)(RLXG_FIXED + hlen) + (RLX_ALIGN - 1)) & ~(size_t)(RLX_ALIGN - 1);
        if (data_off > len)
            rlx_error("%s: truncated: the header padding runs past the end of the file (%llu bytes)", path,
                      (unsigned long long)len);
        for (size_t i = RLXG_FIXED + (size_t)hlen; i < data_off; i++)
            if (buf[i]) rlx_error("%s: nonzero byte in the header padding at offset %llu", path, (unsigned long long)i);
        text = (const char *)buf + RLXG_FIXED;
        text_len = (size_t)hlen;
        text_base = RLXG_FIXED;
        r.container = 1;
        r.data = buf + data_off;
        r.data_len = len - data_off;
    }

    /* cJSON skips NUL as if it were a blank and ends strings at one, so a
     * NUL would silently truncate names: JSON has no place for it anyway. */
    const char *nul = memchr(text, 0, text_len);
    if (nul) json_error(path, text, text_len, nul, text_base, "invalid JSON: NUL byte");
    /* cJSON mallocs its tree: held against the memory limit while it lives */
    int64_t held = json_tree_bound(text, text_len);
    rlx_memory_reserve(held);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, text_len, &end, 0);
    if (!root) {
        rlx_memory_reserve(-held);
        json_error(path, text, text_len, end, text_base, "invalid JSON");
    }
    size_t off = (size_t)(end - text);
    while (off < text_len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' || text[off] == '\r')) off++;
    if (off < text_len) {
        cJSON_Delete(root);
        rlx_memory_reserve(-held);
        json_error(path, text, text_len, text + off, text_base, "invalid JSON: unexpected text after the top-level value");
    }

    /* Free the tree on every error: catch, free, re-raise to the caller. */
    jmp_buf jb;
    jmp_buf *outer = rlx_diag.jmp;
    if (rlx_try(jb)) {
        char msg[sizeof rlx_diag.msg];
        rlx_diag.jmp = outer;
        cJSON_Delete(root);
        rlx_memory_reserve(-held);
        memcpy(msg, rlx_diag.msg, sizeof msg);
        rlx_error("%s", msg);
    }
    build_graph(&r, root);
    rlx_diag.jmp = outer;
    cJSON_Delete(root);
    rlx_memory_reserve(-held);
    return r.g;
}

/* ---- writing ---- */

static void put_str(RlxBuf *b, const char *s) {
    rlx_buf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') rlx_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20) rlx_buf_printf(b, "\\u%04x", *p);
        else rlx_buf_put(b, p, 1);
    }
    rlx_buf_put(b, "\"", 1);
}

/* The fewest digits that read back to the same double (or float). */
static void put_real(RlxBuf *b, double d, int single) {
    if (d != d) { rlx_buf_printf(b, "\"nan\""); return; }
    if (isinf(d)) { rlx_buf_printf(b, d > 0 ? "\"inf\"" : "\"-inf\""); return; }
    char tmp[40];
    for (int prec = single ? 6 : 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        double back = strtod(tmp, NULL);
        if (single ? (float)back == (float)d : back == d) break;
    }
    rlx_buf_printf(b, "%s", tmp);
}

/* Beyond 2^53 a decimal string, which the reader takes where ops.def
 * types the attribute i or ints (attr_int_string), and in shapes. */
static void put_int(RlxBuf *b, int64_t x) {
    int big = x > (int64_t)TWO53 || x < -(int64_t)TWO53;
    rlx_buf_printf(b, big ? "\"%lld\"" : "%lld", (long long)x);
}

static void put_shape(RlxBuf *b, int rank, const int64_t *dims) {
    rlx_buf_put(b, "[", 1);
    for (int i = 0; i < rank; i++) {
        if (i) rlx_buf_put(b, ", ", 2);
        put_int(b, dims[i]);
    }
    rlx_buf_put(b, "]", 1);
}

static void put_type(RlxBuf *b, int dtype, int rank, const int64_t *dims) {
    rlx_buf_printf(b, "\"dtype\": \"%s\", \"shape\": ", rlx_dtype_name(dtype));
    put_shape(b, rank, dims);
}

static void put_data(RlxBuf *b, const RlxValue *v) {
    int64_t n = rlx_value_numel(v);
    rlx_buf_put(b, "\"data\": [", 9);
    for (int64_t i = 0; i < n; i++) {
        if (i) rlx_buf_put(b, ", ", 2);
        switch (v->dtype) {
        case RLX_F32: case RLX_F16: case RLX_BF16: put_real(b, rlx_weight_f64(v, i), 1); break;
        case RLX_F64: put_real(b, rlx_weight_f64(v, i), 0); break;
        case RLX_BOOL: rlx_buf_printf(b, rlx_weight_i64(v, i) ? "true" : "false"); break;
        case RLX_U64: {
            uint64_t u;
            memcpy(&u, v->data + i * 8, 8);
            rlx_buf_printf(b, u > (uint64_t)TWO53 ? "\"%llu\"" : "%llu", (unsigned long long)u);
            break;
        }
        default: {
            int64_t x = rlx_weight_i64(v, i);
            int big = x > (int64_t)TWO53 || x < -(int64_t)TWO53;
            rlx_buf_printf(b, big ? "\"%lld\"" : "%lld", (long long)x);
        }
        }
    }
    rlx_buf_put(b, "]", 1);
}

static void put_attr(RlxBuf *b, const RlxGraph *g, const RlxAttr *a) {
    put_str(b, a->name);
    rlx_buf_put(b, ": ", 2);
    switch (a->kind) {
    case RLX_A_INT: put_int(b, a->i); break;
    case RLX_A_FLOAT: put_real(b, a->f, 0); break;
    case RLX_A_STRING: put_str(b, a->s); break;
    case RLX_A_DTYPE: put_str(b, rlx_dtype_name((int)a->i)); break;
    case RLX_A_INTS:
    case RLX_A_FLOATS:
        rlx_buf_put(b, "[", 1);
        for (int i = 0; i < a->n; i++) {
            if (i) rlx_buf_put(b, ", ", 2);
            if (a->kind == RLX_A_INTS) put_int(b, a->ints[i]);
            else put_real(b, a->floats[i], 0);
        }
        rlx_buf_put(b, "]", 1);
        break;
    case RLX_A_TENSOR: {
        const RlxValue *v = &g->v[a->tensor];
        rlx_buf_put(b, "{", 1);
        put_type(b, v->dtype, v->rank, v->dims);
        rlx_buf_put(b, ", ", 2);
        put_data(b, v);
        rlx_buf_put(b, "}", 1);
        break;
    }
    case RLX_A_GRAPH:   /* a -d dump only: rlx_write_rlxg refuses subgraphs */
        put_str(b, rlx_fmt("(subgraph '%s': %d nodes)", a->graph->name, a->graph->nn));
        break;
    }
}

/* The JSON of either form; woff (container form) gives each written weight
 * its offset in the data section, NULL writes weights inline. */
static void put_graph(const RlxGraph *g, RlxBuf *b, int64_t *woff, int64_t *data_bytes) {
    /* Which weights to write: those a live node or the graph output list
     * uses, except tensor attributes, which are written inline. */
    uint8_t *used = rlx_alloc((size_t)g->nv + 1), *attr_tensor = rlx_alloc((size_t)g->nv + 1);
    for (int i = 0; i < g->nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] >= 0) used[n->in[k]] = 1;
        for (int k = 0; k < n->nattr; k++)
            if (n->attr[k].kind == RLX_A_TENSOR && n->attr[k].tensor >= 0) attr_tensor[n->attr[k].tensor] = 1;
    }
    for (int i = 0; i < g->noutputs; i++) used[g->outputs[i]] = 1;

    rlx_buf_printf(b, "{\"rlxg\": 1, \"name\": ");
    put_str(b, g->name);
    rlx_buf_printf(b, ",\n \"inputs\": [");
    for (int i = 0; i < g->ninputs; i++) {
        const RlxValue *v = &g->v[g->inputs[i]];
        RLX_ASSERT(v->rank >= 0);
        rlx_buf_printf(b, "%s\n  {\"name\": ", i ? "," : "");
        put_str(b, v->name);
        rlx_buf_put(b, ", ", 2);
        put_type(b, v->dtype, v->rank, v->dims);
        rlx_buf_put(b, "}", 1);
    }
    rlx_buf_printf(b, "],\n \"outputs\": [");
    for (int i = 0; i < g->noutputs; i++) {
        const RlxValue *v = &g->v[g->outputs[i]];
        rlx_buf_printf(b, "%s\n  {\"name\": ", i ? "," : "");
        put_str(b, v->name);
        /* inferred facts when known, else what the file declared */
        if (v->rank >= 0) {
            rlx_buf_put(b, ", ", 2);
            put_type(b, v->dtype, v->rank, v->dims);
        } else if (g->output_decl) {
            const RlxDecl *d = &g->output_decl[i];
            if (d->dtype >= 0) rlx_buf_printf(b, ", \"dtype\": \"%s\"", rlx_dtype_name(d->dtype));
            if (d->rank >= 0) {
                rlx_buf_printf(b, ", \"shape\": ");
                put_shape(b, d->rank, d->dims);
            }
        }
        rlx_buf_put(b, "}", 1);
    }
    rlx_buf_printf(b, "],\n \"weights\": [");
    int64_t off = 0;
    int nw = 0;
    for (int i = 0; i < g->nv; i++) {
        const RlxValue *v = &g->v[i];
        if (!(v->flags & RLX_V_WEIGHT) || (v->flags & RLX_V_INPUT) || attr_tensor[i] || !used[i]) continue;
        int64_t bytes = rlx_value_bytes(v);
        RLX_ASSERT(v->data || bytes == 0);
        rlx_buf_printf(b, "%s\n  {\"name\": ", nw++ ? "," : "");
        put_str(b, v->name);
        rlx_buf_put(b, ", ", 2);
        put_type(b, v->dtype, v->rank, v->dims);
        rlx_buf_put(b, ", ", 2);
        if (woff) {
            woff[i] = off;
            rlx_buf_printf(b, "\"offset\": %lld, \"length\": %lld", (long long)off, (long long)bytes);
            RLX_ASSERT(off <= INT64_MAX - bytes - (int64_t)RLX_ALIGN);
            off = (off + bytes + (RLX_ALIGN - 1)) & ~(int64_t)(RLX_ALIGN - 1);
        } else {
            put_data(b, v);
        }
        rlx_buf_put(b, "}", 1);
    }
    if (data_bytes) *data_bytes = off;
    rlx_buf_printf(b, "],\n \"nodes\": [");
    int nn = 0;
    for (int i = 0; i < g->nn; i++) {
        const RlxNode *n = &g->n[i];
        if (n->dead) continue;
        rlx_buf_printf(b, "%s\n  {\"name\": ", nn++ ? "," : "");
        put_str(b, n->name);
        rlx_buf_printf(b, ", \"op\": \"%s\", \"inputs\": [", rlx_ops[n->op].name);
        for (int k = 0; k < n->nin; k++) {
            if (k) rlx_buf_put(b, ", ", 2);
            put_str(b, n->in[k] >= 0 ? g->v[n->in[k]].name : "");
        }
        rlx_buf_printf(b, "], \"outputs\": [");
        for (int k = 0; k < n->nout; k++) {
            if (k) rlx_buf_put(b, ", ", 2);
            put_str(b, n->out[k] >= 0 ? g->v[n->out[k]].name : "");
        }
        rlx_buf_put(b, "]", 1);
        if (n->nattr) {
            rlx_buf_printf(b, ", \"attrs\": {");
            for (int k = 0; k < n->nattr; k++) {
                if (k) rlx_buf_put(b, ", ", 2);
                put_attr(b, g, &n->attr[k]);
            }
            rlx_buf_put(b, "}", 1);
        }
        rlx_buf_put(b, "}", 1);
    }
    rlx_buf_printf(b, "]}\n");
}

static void put_le(RlxBuf *b, uint64_t v, int bytes) {
    uint8_t p[8];
    for (int i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
    rlx_buf_put(b, p, (size_t)bytes);
}

static void put_zeros(RlxBuf *b, size_t n) {
    static const uint8_t zeros[RLX_ALIGN];
    while (n) {
        size_t k = n < sizeof zeros ? n : sizeof zeros;
        rlx_buf_put(b, zeros, k);
        n -= k;
    }
}

void rlx_write_rlxg(const RlxGraph *g, RlxBuf *out) {
    for (int i = 0; i < g->nn; i++)
        for (int k = 0; !g->n[i].dead && k < g->n[i].nattr; k++)
            if (g->n[i].attr[k].kind == RLX_A_GRAPH)
                rlx_node_error(g, i, "control flow (a subgraph attribute) has no .rlxg form; compile the ONNX "
                                     "model directly");
    int64_t *woff = rlx_alloc(sizeof(int64_t) * ((size_t)g->nv + 1));
    for (int i = 0; i < g->nv; i++) woff[i] = -1;
    RlxBuf json = {0};
    int64_t data_bytes = 0;
    put_graph(g, &json, woff, &data_bytes);
    rlx_buf_put(out, RLXG_MAGIC, 4);
    put_le(out, RLXG_VERSION, 4);
    put_le(out, json.len, 8);
    rlx_buf_put(out, json.data, json.len);
    size_t at = RLXG_FIXED + json.len;
    put_zeros(out, (RLX_ALIGN - at % RLX_ALIGN) % RLX_ALIGN);
    size_t data_start = out->len;
    for (int i = 0; i < g->nv; i++) {
        if (woff[i] < 0) continue;
        size_t bytes = (size_t)rlx_value_bytes(&g->v[i]);
        put_zeros(out, data_start + (size_t)woff[i] - out->len);
        if (bytes) rlx_buf_put(out, g->v[i].data, bytes);
    }
    put_zeros(out, data_start + (size_t)data_bytes - out->len);
}

void rlx_graph_dump(const RlxGraph *g, FILE *f) {
    RlxBuf b = {0};
    put_graph(g, &b, NULL, NULL);
    fwrite(b.data, 1, b.len, f);
}
