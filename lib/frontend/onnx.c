/* onnx.c - the ONNX reader: a ModelProto (opset 1 to 17) becomes an RlxGraph.
 *
 * The file goes into the arena, its wire format is walked once to bound how
 * deeply messages nest (protobuf-c recurses without a limit, so a crafted
 * file could otherwise exhaust the stack), then protobuf-c (code generated
 * at build time from Debian's onnx.proto) unpacks it with malloc. Everything
 * the graph keeps is copied into the arena, and the whole build runs under a
 * local rlx_try that frees the unpacked message and re-raises: no failure
 * path leaks.
 *
 * The build goes in the order a user wants to hear about problems: the
 * opset, then every unsupported op at once, then ops newer than the opset,
 * then initializers (weights),
 * graph inputs (every unbound symbolic dim at once), then the nodes in two
 * passes (first the values each produces, so that inputs may name values
 * produced later; then inputs and attributes), then the outputs. Each ONNX
 * node becomes exactly one rlx node with the same index; the few nodes a
 * rewrite adds (an Unsqueeze for legacy broadcasting) come after them.
 *
 * An op means the version in force at the model's opset (its latest version
 * with since_version <= opset). Versions in force before opset 7 are first
 * turned into their opset-7 form by rewrite_old_version, driven by the
 * documented old_versions table ("operator versions before opset 7" below):
 * consumed_inputs dropped, legacy broadcast/axis made NumPy broadcasting,
 * is_test checked, Cast-1's type names, Reshape-1's and Tile-1's operands
 * made inputs, and so on; forms rlxc cannot express are errors naming the
 * version and the attribute. Then every version is rewritten into the
 * canonical (opset-17, Reduce and Split opset-18) form of ops.def:
 * attributes such as Slice-1's starts or ReduceMean's axes become constant
 * weights feeding the node's inputs, Dropout becomes Identity, and legacy
 * Softmax gets legacy_2d=1.
 * The bodies of If, Loop and Scan are read the same way into graphs of their
 * own (see "control flow" below); ext_ctrl.c expands them during inference.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "rlx.h"

#define MIN_OPSET 1
#define MAX_OPSET 17
#define MAX_NESTING 64            /* real models nest a few levels per subgraph */
#define MAX_NAMES_LISTED 5        /* node names per op in the unsupported-ops message */

typedef struct Reader Reader;
struct Reader {
    const char *file;
    RlxGraph *g;
    const Onnx__GraphProto *gp;
    int opset;
    int ndims;
    const char *const *dim_names;
    const int64_t *dim_values;
    uint8_t *dim_used;
    const char **node_names;      /* per ONNX node: unique, never empty */
    RlxNames node_ids;            /* node name -> id, the ONNX nodes' and those added later */
    int *node_nout;               /* per ONNX node: outputs kept (trailing empty ones trimmed) */
    int **node_out;               /* per ONNX node: their value ids */
    const char **dropped;         /* Dropout mask outputs, which are not created */
    const char **dropped_by;
    int ndropped;
    struct {                      /* nodes a rewrite adds after the ONNX ones (unsqueeze_later) */
        const char *name;
        int in, axes, out;
    } *later;
    int nlater;
    /* a subgraph (If/Loop/Scan body): the enclosing graph's reader, and the
     * outer values the body reads, in the order they became body inputs */
    Reader *parent;
    int *captured, ncaptured;
};

/* One attribute on its way from the NodeProto to the node. */
typedef struct {
    RlxAttr a;
    int taken;                    /* consumed by a rewrite */
    int *captured, ncaptured;     /* GRAPH: the outer values the subgraph reads */
} Attr;

static RlxGraph *import_subgraph(Reader *r, int i, const Onnx__GraphProto *gp, const char *attr, Attr *out);
static int lookup_value(Reader *r, const char *name);

static const char *str(const char *s) { return s ? s : ""; }

static const char *onnx_type_name(int code) {
    static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                        "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                        "COMPLEX128", "BFLOAT16"};
    if (code >= 0 && code < (int)(sizeof names / sizeof names[0])) return rlx_fmt("%s (%d)", names[code], code);
    return rlx_fmt("%d", code);
}

/* Names end up in messages and generated comments: no control characters. */
static void check_name(const Reader *r, const char *name, const char *what) {
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f) rlx_error("%s: %s contains a control character", r->file, what);
}

/* ---- wire-format scan: bounds the nesting before protobuf-c recurses ---- */

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return 0;
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

enum { SCAN_BAD, SCAN_OK, SCAN_DEEP };

/* Also adds to *bytes an upper bound of what protobuf-c will malloc for the
 * message: its struct, and for each field occurrence a sub-message's
 * struct, a string's bytes, or 8 bytes per repeated element (a packed field
 * of len bytes holds at most len elements). An empty NodeProto is 2 bytes
 * on the wire and over 100 in memory, so a small file can ask for a lot. */
static int scan_message(const uint8_t *p, const uint8_t *end, const ProtobufCMessageDescriptor *d, int depth,
                        uint64_t *bytes) {
    if (depth > MAX_NESTING) return SCAN_DEEP;
    *bytes += d->sizeof_message;
    while (p < end) {
        uint64_t key, len;
        if (!read_varint(&p, end, &key)) return SCAN_BAD;
        uint64_t num = key >> 3;
        const ProtobufCFieldDescriptor *f =
            num > 0 && num <= 0x1fffffff ? protobuf_c_message_descriptor_get_field(d, (unsigned)num) : NULL;
        int repeated = f && f->label == PROTOBUF_C_LABEL_REPEATED;
        switch (key & 7) {
        case 0:
            if (!read_varint(&p, end, &len)) return SCAN_BAD;
            break;
        case 1:
            if (end - p < 8) return SCAN_BAD;
            p += 8;
            break;
        case 5:
            if (end - p < 4) return SCAN_BAD;
            p += 4;
            break;
        case 2: {
            if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) return SCAN_BAD;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                int st = scan_message(p, p + len, f->descriptor, depth + 1, bytes);
                if (st != SCAN_OK) return st;
            } else if (f && (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES)) {
                *bytes += len + 1;
            } else if (repeated) {
                *bytes += 8 * len;   /* packed */
            }
            p += len;
            break;
        }
        default: return SCAN_BAD;   /* groups (3, 4) are not in onnx.proto; 6, 7 do not exist */
        }
        if (repeated) *bytes += 8;   /* the element (or pointer) in the field's array */
    }
    return SCAN_OK;
}

/* ---- opset and op support ---- */

static int is_default_domain(const char *d) { return !*d || !strcmp(d, "ai.onnx"); }

static int read_opset(const Reader *r, const Onnx__ModelProto *m) {
    int found = 0;
    int64_t version = 0;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (!is_default_domain(str(o->domain))) continue;
        int64_t v = o->has_version ? o->version : 0;
        if (found && v != version)
            rlx_error("%s: the model imports two opsets of the default domain (%lld and %lld)", r->file,
                      (long long)version, (long long)v);
        version = v;
        found = 1;
    }
    /* IR versions 1 and 2 had no opset_import: their models use opset 1
     * (ONNX's checker assumes the same); from IR version 3 it is required */
    if (!found && m->n_opset_import == 0 && m->has_ir_version && m->ir_version >= 1 && m->ir_version < 3) return 1;
    if (!found)
        rlx_error("%s: the model imports no opset of the default domain (ai.onnx); rlxc reads opsets %d to %d",
                  r->file, MIN_OPSET, MAX_OPSET);
    if (version < MIN_OPSET || version > MAX_OPSET)
        rlx_error("%s: opset %lld of the default domain (ai.onnx) is not supported; rlxc reads opsets %d to %d",
                  r->file, (long long)version, MIN_OPSET, MAX_OPSET);
    return (int)version;
}

/* The rlx op an ONNX node becomes, or -1. */
static int node_op(const Onnx__NodeProto *n) {
    if (!is_default_domain(str(n->domain))) return -1;
    if (!strcmp(str(n->op_type), "Dropout")) return RLX_OP_IDENTITY;
    if (!strcmp(str(n->op_type), "Upsample")) return RLX_OP_RESIZE;             /* see rewrite_resize */
    if (!strcmp(str(n->op_type), "Scatter")) return RLX_OP_SCATTERELEMENTS;     /* opset 9-10 name */
    return rlx_op_from_name(str(n->op_type));
}

static const char *op_label(const Onnx__NodeProto *n) {
    const char *d = str(n->domain), *t = *str(n->op_type) ? n->op_type : "(no op type)";
    return is_default_domain(d) ? t : rlx_fmt("%s.%s", d, t);
}

/* Node names may be empty or repeated in ONNX; explicit names win, the rest
 * become OpType_INDEX, and any clash gets a numeric suffix. */
static void name_nodes(Reader *r) {
    const Onnx__GraphProto *gp = r->gp;
    int n = (int)gp->n_node;
    RlxNames *taken = &r->node_ids;
    r->node_names = rlx_alloc(sizeof(char *) * (size_t)(n + 1));
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            const Onnx__NodeProto *np = gp->node[i];
            const char *given = str(np->name);
            if ((pass == 0) != (*given != 0)) continue;
            check_name(r, given, rlx_fmt("node name '%s'", given));
            check_name(r, str(np->op_type), rlx_fmt("the op type of node '%s'", given));
            const char *base = *given ? given : rlx_fmt("%s_%d", *str(np->op_type) ? np->op_type : "node", i);
            const char *name = base;
            for (int k = 1; rlx_names_get(taken, name) >= 0; k++) name = rlx_fmt("%s_%d", base, k);
            r->node_names[i] = name;
            rlx_names_put(taken, name, i);
        }
}

/* One error listing every unsupported op type with its nodes, the op types
 * in the order of their first node. */
static void check_ops(Reader *r) {
    const Onnx__GraphProto *gp = r->gp;
    int n = (int)gp->n_node, nops = 0;
    RlxNames group_of = {0};
    struct { const char *label; int count; RlxBuf names; } *groups = rlx_alloc(sizeof *groups * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        if (node_op(gp->node[i]) >= 0) continue;
        const char *label = op_label(gp->node[i]);
        int k = rlx_names_get(&group_of, label);
        if (k < 0) {
            k = nops++;
            groups[k].label = label;
            rlx_names_put(&group_of, label, k);
        }
        if (groups[k].count < MAX_NAMES_LISTED)
            rlx_buf_printf(&groups[k].names, "%s'%s'", groups[k].count ? ", " : "", r->node_names[i]);
        groups[k].count++;
    }
    RlxBuf msg = {0};
    for (int k = 0; k < nops; k++) {
        int count = groups[k].count;
        if (count > MAX_NAMES_LISTED) rlx_buf_printf(&groups[k].names, " and %d more", count - MAX_NAMES_LISTED);
        rlx_buf_printf(&msg, "%s%s (node%s %s)", k ? "; " : "", groups[k].label, count > 1 ? "s" : "",
                       groups[k].names.data);
    }
    if (nops) rlx_error("%s: unsupported op%s: %s", r->file, nops > 1 ? "s" : "", msg.data);
}

/* ---- tensors ---- */

static int tensor_dtype(const Reader *r, int code, const char *what) {
    int dt = rlx_dtype_from_onnx(code);
    if (dt < 0)
        rlx_error("%s: %s has data type %s, which is not supported", r->file, what, onnx_type_name(code));
    return dt;
}

static void fill_dims(const Reader *r, RlxValue *v, size_t n, const int64_t *dims, const char *what) {
    if (n > RLX_MAX_RANK) rlx_error("%s: %s: rank %d exceeds the maximum of %d", r->file, what, (int)n, RLX_MAX_RANK);
    for (size_t i = 0; i < n; i++) {
        if (dims[i] < 0) rlx_error("%s: %s: negative dimension %lld", r->file, what, (long long)dims[i]);
        v->dims[i] = dims[i];
    }
    v->rank = (int)n;
    int64_t numel = 1;
    for (size_t i = 0; i < n; i++) {
        if (dims[i] && numel > INT64_MAX / dims[i]) rlx_error("%s: %s: size overflows 64 bits", r->file, what);
        numel *= dims[i];
    }
    if (numel > INT64_MAX / 8) rlx_error("%s: %s: byte size overflows 64 bits", r->file, what);
}

static void range_error(const Reader *r, const char *what, long long x, size_t i, int dt) {
    rlx_error("%s: %s: value %lld at index %llu is out of range for %s", r->file, what, x, (unsigned long long)i,
              rlx_dtype_name(dt));
}

/* Fills value vid (already added) from a TensorProto: a weight. */
static void read_tensor(const Reader *r, const Onnx__TensorProto *t, int vid, const char *what) {
    RlxValue *v = &r->g->v[vid];
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        rlx_error("%s: %s uses external data, which is not supported; re-save the model with all tensors inside "
                  "the file", r->file, what);
    if (t->segment) rlx_error("%s: %s is a segment of a tensor, which is not supported", r->file, what);
    int dt = tensor_dtype(r, t->has_data_type ? t->data_type : 0, what);
    v->dtype = (RlxDType)dt;
    fill_dims(r, v, t->n_dims, t->dims, what);
    v->flags |= RLX_V_WEIGHT;
    int64_t numel = rlx_value_numel(v), bytes = rlx_value_bytes(v);
    int size = rlx_dtype_size(dt);

    if (t->has_raw_data) {
        size_t typed = t->n_float_data + t->n_int32_data + t->n_int64_data + t->n_double_data + t->n_uint64_data;
        if (typed) rlx_error("%s: %s has both raw_data and typed data", r->file, what);
        if ((uint64_t)t->raw_data.len != (uint64_t)bytes)
            rlx_error("%s: %s has %llu bytes of raw data, but %s %s needs %lld", r->file, what,
                      (unsigned long long)t->raw_data.len, rlx_dtype_name(dt), rlx_shape_str(v), (long long)bytes);
        uint8_t *p = rlx_alloc(bytes ? (size_t)bytes : 1);
        if (bytes) memcpy(p, t->raw_data.data, (size_t)bytes);   /* little-endian, as the host */
        v->data = p;
        return;
    }
    /* The typed field ONNX stores each data type in. */
    size_t count;
    switch (dt) {
    case RLX_F32: count = t->n_float_data; break;
    case RLX_I64: count = t->n_int64_data; break;
    case RLX_F64: count = t->n_double_data; break;
    case RLX_U32: case RLX_U64: count = t->n_uint64_data; break;
    default: count = t->n_int32_data; break;
    }
    if ((uint64_t)count != (uint64_t)numel)
        rlx_error("%s: %s has %llu values, but shape %s needs %lld", r->file, what, (unsigned long long)count,
                  rlx_shape_str(v), (long long)numel);
    uint8_t *p = rlx_alloc(bytes ? (size_t)bytes : 1);
    for (size_t i = 0; i < count; i++) {
        uint8_t *dst = p + i * (size_t)size;
        switch (dt) {
        case RLX_F32: memcpy(dst, &t->float_data[i], 4); break;
        case RLX_I64: memcpy(dst, &t->int64_data[i], 8); break;
        case RLX_F64: memcpy(dst, &t->double_data[i], 8); break;
        case RLX_U64: memcpy(dst, &t->uint64_data[i], 8); break;
        case RLX_U32: {
            if (t->uint64_data[i] > UINT32_MAX) rlx_error("%s: %s: value %llu at index %llu is out of range for u32",
                                                          r->file, what, (unsigned long long)t->uint64_data[i],
                                                          (unsigned long long)i);
            uint32_t x = (uint32_t)t->uint64_data[i];
            memcpy(dst, &x, 4);
            break;
        }
        case RLX_I32: memcpy(dst, &t->int32_data[i], 4); break;
        default: {
            /* int8/uint8/int16/uint16/bool values, and float16/bfloat16 bit
             * patterns, each in one int32 */
            int32_t x = t->int32_data[i];
            int32_t lo = 0, hi = 0xffff;
            if (dt == RLX_I8) lo = -128, hi = 127;
            else if (dt == RLX_U8) hi = 255;
            else if (dt == RLX_I16) lo = -32768, hi = 32767;
            else if (dt == RLX_BOOL) hi = 1;
            if (x < lo || x > hi) range_error(r, what, x, i, dt);
            if (size == 1) {
                uint8_t b = (uint8_t)x;
                memcpy(dst, &b, 1);
            } else {
                uint16_t h = (uint16_t)x;
                memcpy(dst, &h, 2);
            }
        }
        }
    }
    v->data = p;
}

static const char *unique_value_name(const RlxGraph *g, const char *base) {
    const char *name = base;
    for (int k = 1; rlx_value_find(g, name) >= 0; k++) name = rlx_fmt("%s.%d", base, k);
    return name;
}

static int const_i64(Reader *r, const char *node, const char *role, int n, const int64_t *vals) {
    int vid = rlx_value_add(r->g, unique_value_name(r->g, rlx_fmt("%s.%s", node, role)));
    RlxValue *v = &r->g->v[vid];
    v->dtype = RLX_I64;
    v->rank = 1;
    v->dims[0] = n;
    v->flags |= RLX_V_WEIGHT;
    uint8_t *p = rlx_alloc(sizeof(int64_t) * (size_t)n + 1);
    if (n) memcpy(p, vals, sizeof(int64_t) * (size_t)n);
    v->data = p;
    return vid;
}

static int const_scalar(Reader *r, const char *node, const char *role, int dt, double x) {
    int vid = rlx_value_add(r->g, unique_value_name(r->g, rlx_fmt("%s.%s", node, role)));
    RlxValue *v = &r->g->v[vid];
    v->dtype = (RlxDType)dt;
    v->rank = 0;
    v->flags |= RLX_V_WEIGHT;
    uint8_t *p = rlx_alloc(8);
    union { float f; double d; uint16_t h; int64_t i; uint64_t u; } u;
    memset(&u, 0, sizeof u);
    switch (dt) {
    case RLX_F32: u.f = (float)x; break;
    case RLX_F64: u.d = x; break;
    case RLX_F16: u.h = rlx_f32_to_f16((float)x); break;
    case RLX_BF16: u.h = rlx_f32_to_bf16((float)x); break;
    default: {
        /* old Clip/Pad bounds of an integer tensor: saturate like a cast */
        double lo = rlx_dtype_is_signed(dt) ? -9.2233720368547758e18 : 0, hi = 9.2233720368547758e18;
        int64_t i = x != x ? 0 : x <= lo ? (int64_t)lo : x >= hi ? INT64_MAX : (int64_t)x;
        if (dt == RLX_BOOL) i = i != 0;
        u.i = i;   /* little-endian: the low bytes are the narrower integer */
        if (dt == RLX_I8 || dt == RLX_I16 || dt == RLX_I32) {
            int64_t bound = dt == RLX_I8 ? 127 : dt == RLX_I16 ? 32767 : 2147483647;
            u.i = i > bound ? bound : i < -bound - 1 ? -bound - 1 : i;
        } else if (dt == RLX_U8 || dt == RLX_U16 || dt == RLX_U32) {
            int64_t bound = dt == RLX_U8 ? 255 : dt == RLX_U16 ? 65535 : 4294967295LL;
            u.i = i > bound ? bound : i;
        }
    }
    }
    memcpy(p, &u, (size_t)rlx_dtype_size(dt));
    v->data = p;
    return vid;
}

/* ---- value types ---- */

static const char *type_kind_name(int value_case) {
    switch (value_case) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
    default: return "of an unknown kind";
    }
}

/* The tensor type of a ValueInfo, or NULL if it declares none; errors for
 * every non-tensor type. */
static const Onnx__TypeProto__Tensor *tensor_type(const Reader *r, const Onnx__ValueInfoProto *vi, const char *what) {
    const Onnx__TypeProto *t = vi->type;
    if (!t || t->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return NULL;
    if (t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
        rlx_error("%s: %s is %s, which is not supported (only tensors are)", r->file, what,
                  type_kind_name(t->value_case));
    return t->tensor_type;
}

static int find_dim(const Reader *r, const char *name) {
    for (int i = 0; i < r->ndims; i++)
        if (!strcmp(r->dim_names[i], name)) return i;
    return -1;
}

/* ---- graph inputs and initializers ---- */

static int is_initializer(const Reader *r, const char *name) {
    for (size_t i = 0; i < r->gp->n_initializer; i++)
        if (!strcmp(str(r->gp->initializer[i]->name), name)) return 1;
    return 0;
}

static void read_initializers(Reader *r) {
    const Onnx__GraphProto *gp = r->gp;
    if (gp->n_sparse_initializer)
        rlx_error("%s: the graph has sparse initializers, which are not supported", r->file);
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *t = gp->initializer[i];
        const char *name = str(t->name);
        if (!*name) rlx_error("%s: initializer %d has no name", r->file, (int)i);
        check_name(r, name, rlx_fmt("initializer name '%s'", name));
        if (rlx_value_find(r->g, name) >= 0) rlx_error("%s: initializer '%s' is given twice", r->file, name);
        read_tensor(r, t, rlx_value_add(r->g, name), rlx_fmt("tensor '%s'", name));
    }
}

static void read_inputs(Reader *r) {
    const Onnx__GraphProto *gp = r->gp;
    RlxGraph *g = r->g;
    RlxBuf unbound = {0}, unsized = {0};
    int nunbound = 0, nunsized = 0;
    const char **unbound_names = rlx_alloc(sizeof(char *) * (gp->n_input * RLX_MAX_RANK + 1));
    g->inputs = rlx_alloc(sizeof(int) * (gp->n_input + 1));
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = str(vi->name);
        if (!*name) rlx_error("%s: graph input %d has no name", r->file, (int)i);
        check_name(r, name, rlx_fmt("input name '%s'", name));
        const char *what = rlx_fmt("input '%s'", name);
        const Onnx__TypeProto__Tensor *tt = tensor_type(r, vi, what);
        if (is_initializer(r, name)) continue;   /* a weight with a default: rlxc compiles it in */
        if (rlx_value_find(g, name) >= 0) rlx_error("%s: graph input '%s' is listed twice", r->file, name);
        if (!tt) rlx_error("%s: %s has no type", r->file, what);
        int vid = rlx_value_add(g, name);
        RlxValue *v = &g->v[vid];
        v->dtype = (RlxDType)tensor_dtype(r, tt->has_elem_type ? tt->elem_type : 0, what);
        if (!tt->shape) rlx_error("%s: %s has no shape (rlxc compiles static shapes only)", r->file, what);
        if (tt->shape->n_dim > RLX_MAX_RANK)
            rlx_error("%s: %s: rank %d exceeds the maximum of %d", r->file, what, (int)tt->shape->n_dim, RLX_MAX_RANK);
        v->rank = (int)tt->shape->n_dim;
        for (int k = 0; k < v->rank; k++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[k];
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
                if (d->dim_value < 0) rlx_error("%s: %s: negative dimension %lld", r->file, what, (long long)d->dim_value);
                v->dims[k] = d->dim_value;
            } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && *str(d->dim_param)) {
                int b = find_dim(r, d->dim_param);
                if (b >= 0) {
                    v->dims[k] = r->dim_values[b];
                    r->dim_used[b] = 1;
                    continue;
                }
                check_name(r, d->dim_param, rlx_fmt("a dimension name of %s", what));
                int seen = 0;
                for (int j = 0; j < nunbound; j++)
                    if (!strcmp(unbound_names[j], d->dim_param)) seen = 1;
                if (!seen) {
                    rlx_buf_printf(&unbound, "%s'%s'", nunbound ? ", " : "", d->dim_param);
                    unbound_names[nunbound++] = d->dim_param;
                }
            } else {
                rlx_buf_printf(&unsized, "%s%s axis %d", nunsized++ ? ", " : "", what, k);
            }
        }
        fill_dims(r, v, (size_t)v->rank, v->dims, what);   /* the size check */
        v->flags |= RLX_V_INPUT;
        g->inputs[g->ninputs++] = vid;
    }
    if (nunbound || nunsized)
        rlx_error("%s: %s%s%s%s%s", r->file, nunbound ? "symbolic dimensions without a value: " : "",
                  nunbound ? unbound.data : "", nunbound ? " (bind each with --dim NAME=VALUE)" : "",
                  nunbound && nunsized ? "; " : "",
                  nunsized ? rlx_fmt("dimensions with neither a size nor a name: %s", unsized.data) : "");
}

/* ---- nodes ---- */

static void node_err(const Reader *r, int i, const char *msg) {
    rlx_error("%s: node '%s' (%s): %s", r->file, r->node_names[i], op_label(r->gp->node[i]), msg);
}

static void add_dropped(Reader *r, const char *name, const char *node) {
    r->dropped = rlx_realloc(r->dropped, sizeof(char *) * (size_t)r->ndropped, sizeof(char *) * (size_t)(r->ndropped + 1));
    r->dropped_by = rlx_realloc(r->dropped_by, sizeof(char *) * (size_t)r->ndropped,
                                sizeof(char *) * (size_t)(r->ndropped + 1));
    r->dropped[r->ndropped] = name;
    r->dropped_by[r->ndropped++] = node;
}

static void check_not_dropped(const Reader *r, const char *name, const char *user) {
    for (int k = 0; k < r->ndropped; k++)
        if (!strcmp(r->dropped[k], name))
            rlx_error("%s: %s uses '%s', the mask output of Dropout node '%s', which is not supported", r->file, user,
                      name, r->dropped_by[k]);
}

/* Pass 1: the values node i produces (its rlx node will have id i). */
static void add_outputs(Reader *r, int i) {
    const Onnx__NodeProto *np = r->gp->node[i];
    RlxGraph *g = r->g;
    int is_dropout = !strcmp(str(np->op_type), "Dropout");
    int nout = (int)np->n_output;
    while (nout > 0 && !*np->output[nout - 1]) nout--;
    if (is_dropout && nout > 1) {
        add_dropped(r, np->output[1], r->node_names[i]);
        nout = 1;
    }
    r->node_nout[i] = nout;
    r->node_out[i] = rlx_alloc(sizeof(int) * (size_t)(nout + 1));
    for (int k = 0; k < nout; k++) {
        const char *vn = np->output[k];
        r->node_out[i][k] = -1;
        if (!*vn) continue;   /* named in pass 1b */
        check_name(r, vn, rlx_fmt("output name '%s'", vn));
        int v = rlx_value_find(g, vn);
        if (v >= 0) {
            const RlxValue *pv = &g->v[v];
            if (pv->producer >= 0)
                node_err(r, i, rlx_fmt("value '%s' is produced twice (also by node '%s')", vn,
                                       r->node_names[pv->producer]));
            node_err(r, i, rlx_fmt("output '%s' is already a graph %s", vn,
                                   pv->flags & RLX_V_INPUT ? "input" : "initializer"));
        }
        v = rlx_value_add(g, vn);
        g->v[v].producer = i;
        r->node_out[i][k] = v;
    }
}

/* Pass 1b: an empty output name before a named one still needs a value. */
static void name_skipped_outputs(Reader *r, int i) {
    const Onnx__NodeProto *np = r->gp->node[i];
    for (int k = 0; k < r->node_nout[i]; k++)
        if (!*np->output[k]) {
            int v = rlx_value_add(r->g, unique_value_name(r->g, rlx_fmt("%s.out%d", r->node_names[i], k)));
            r->g->v[v].producer = i;
            r->node_out[i][k] = v;
        }
}

/* An ONNX attribute as an RlxAttr (TENSOR: a new weight). */
static void read_attr(Reader *r, int i, int op, const Onnx__AttributeProto *pa, Attr *out) {
    const char *name = str(pa->name);
    const char *where = rlx_fmt("attribute '%s'", name);
    if (!*name) node_err(r, i, "an attribute has no name");
    check_name(r, name, rlx_fmt("an attribute name of node '%s'", r->node_names[i]));
    int type = pa->has_type ? (int)pa->type : 0;
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) {
        /* IR version 1 had no type field: the field that is set says it */
        type = pa->has_f ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT
             : pa->has_i ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT
             : pa->has_s ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING
             : pa->t ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR
             : pa->g ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH
             : pa->n_floats ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS
             : pa->n_ints ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS
             : 0;
        if (!type) node_err(r, i, rlx_fmt("%s has no value", where));
    }
    RlxAttr *a = &out->a;
    memset(out, 0, sizeof *out);
    a->name = rlx_strdup(name);
    a->tensor = -1;
    if (type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH && pa->g &&
        (op == RLX_OP_IF || op == RLX_OP_LOOP || op == RLX_OP_SCAN)) {
        a->kind = RLX_A_GRAPH;   /* anywhere else a subgraph is not supported (below) */
        a->graph = import_subgraph(r, i, pa->g, a->name, out);
        return;
    }
    switch (type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        a->kind = RLX_A_FLOAT;
        a->f = pa->f;
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        a->kind = RLX_A_INT;
        a->i = pa->i;
        if (op == RLX_OP_CAST && !strcmp(name, "to")) {
            int dt = pa->i >= 0 && pa->i <= 0x7fffffff ? rlx_dtype_from_onnx((int)pa->i) : -1;
            if (dt < 0)
                node_err(r, i, rlx_fmt("attribute 'to': ONNX type %s is not supported",
                                       pa->i >= 0 && pa->i <= 0x7fffffff ? onnx_type_name((int)pa->i)
                                                                         : rlx_fmt("%lld", (long long)pa->i)));
            a->kind = RLX_A_DTYPE;
            a->i = dt;
        }
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
        const char *s = rlx_strndup(pa->s.data ? (const char *)pa->s.data : "", pa->s.len);
        check_name(r, s, rlx_fmt("the value of %s of node '%s'", where, r->node_names[i]));
        a->kind = RLX_A_STRING;
        a->s = s;
        break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: {
        /* one STRING, comma-separated (RNN/GRU/LSTM activations) */
        RlxBuf b = {0};
        for (size_t k = 0; k < pa->n_strings; k++) {
            const char *s = rlx_strndup(pa->strings[k].data ? (const char *)pa->strings[k].data : "", pa->strings[k].len);
            check_name(r, s, rlx_fmt("the value of %s of node '%s'", where, r->node_names[i]));
            if (strchr(s, ',')) node_err(r, i, rlx_fmt("%s: an entry contains ','", where));
            rlx_buf_printf(&b, "%s%s", k ? "," : "", s);
        }
        a->kind = RLX_A_STRING;
        a->s = b.data ? b.data : "";
        break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        if (pa->n_ints > 0x7fffffff) node_err(r, i, rlx_fmt("%s has too many values", where));
        a->kind = RLX_A_INTS;
        a->n = (int)pa->n_ints;
        a->ints = rlx_alloc(sizeof(int64_t) * (pa->n_ints + 1));
        if (pa->n_ints) memcpy(a->ints, pa->ints, sizeof(int64_t) * pa->n_ints);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        if (pa->n_floats > 0x7fffffff) node_err(r, i, rlx_fmt("%s has too many values", where));
        a->kind = RLX_A_FLOATS;
        a->n = (int)pa->n_floats;
        a->floats = rlx_alloc(sizeof(double) * (pa->n_floats + 1));
        for (size_t k = 0; k < pa->n_floats; k++) a->floats[k] = pa->floats[k];
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        if (!pa->t) node_err(r, i, rlx_fmt("%s has no tensor", where));
        const char *vname = unique_value_name(r->g, rlx_fmt("%s.%s", r->node_names[i], name));
        int vid = rlx_value_add(r->g, vname);
        read_tensor(r, pa->t, vid, rlx_fmt("tensor '%s' (attribute '%s' of node '%s')", vname, name, r->node_names[i]));
        a->kind = RLX_A_TENSOR;
        a->tensor = vid;
        break;
    }
    default: {
        static const char *const kinds[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS",
                                            "INTS", "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR",
                                            "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
        const char *k = type >= 0 && type < (int)(sizeof kinds / sizeof kinds[0]) ? kinds[type] : rlx_fmt("%d", type);
        node_err(r, i, rlx_fmt("%s of type %s is not supported", where, k));
    }
    }
}

static Attr *find_attr(Attr *at, int n, const char *name) {
    for (int k = 0; k < n; k++)
        if (!at[k].taken && !strcmp(at[k].a.name, name)) return &at[k];
    return NULL;
}

/* Removes an attribute a rewrite turns into something else; NULL if absent. */
static RlxAttr *take(Attr *at, int n, const char *name) {
    Attr *x = find_attr(at, n, name);
    if (!x) return NULL;
    x->taken = 1;
    return &x->a;
}

static RlxAttr *take_ints(const Reader *r, int i, Attr *at, int n, const char *name, int required) {
    RlxAttr *a = take(at, n, name);
    if (!a && required) node_err(r, i, rlx_fmt("missing required attribute '%s'", name));
    if (a && a->kind != RLX_A_INTS) node_err(r, i, rlx_fmt("attribute '%s' must be of type ints", name));
    return a;
}

static double take_float(const Reader *r, int i, Attr *at, int n, const char *name, int *given) {
    RlxAttr *a = take(at, n, name);
    *given = a != NULL;
    if (!a) return 0;
    if (a->kind == RLX_A_INT) return (double)a->i;
    if (a->kind != RLX_A_FLOAT) node_err(r, i, rlx_fmt("attribute '%s' must be of type float", name));
    return a->f;
}

/* The element type of a value, as far as the importer can tell before
 * inference: declared types first, then through the producer's first input.
 * Only old Clip/Pad need it, for bounds of the input's dtype; a wrong guess
 * is caught by inference (bounds must have the input's dtype). */
static int guess_dtype(const Reader *r, const char *name, int depth) {
    const RlxGraph *g = r->g;
    const Onnx__GraphProto *gp = r->gp;
    int v = rlx_value_find(g, name);
    if (v >= 0 && (g->v[v].flags & (RLX_V_INPUT | RLX_V_WEIGHT))) return g->v[v].dtype;
    const Onnx__ValueInfoProto *const *lists[] = {(const Onnx__ValueInfoProto *const *)gp->value_info,
                                                  (const Onnx__ValueInfoProto *const *)gp->output};
    size_t counts[] = {gp->n_value_info, gp->n_output};
    for (int l = 0; l < 2; l++)
        for (size_t k = 0; k < counts[l]; k++) {
            const Onnx__ValueInfoProto *vi = lists[l][k];
            const Onnx__TypeProto *t = vi->type;
            if (strcmp(str(vi->name), name) || !t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) continue;
            int dt = t->tensor_type->has_elem_type ? rlx_dtype_from_onnx(t->tensor_type->elem_type) : -1;
            if (dt >= 0) return dt;
        }
    if (v < 0 || g->v[v].producer < 0 || depth > 64) return RLX_F32;
    const Onnx__NodeProto *np = gp->node[g->v[v].producer];
    const char *op = str(np->op_type);
    if (!strcmp(op, "Cast") || !strcmp(op, "Constant")) {
        for (size_t k = 0; k < np->n_attribute; k++) {
            const Onnx__AttributeProto *pa = np->attribute[k];
            const char *an = str(pa->name);
            if (!strcmp(an, "to") && pa->i >= 0 && pa->i < 64 && rlx_dtype_from_onnx((int)pa->i) >= 0)
                return rlx_dtype_from_onnx((int)pa->i);
            if (!strcmp(an, "value") && pa->t && rlx_dtype_from_onnx(pa->t->data_type) >= 0)
                return rlx_dtype_from_onnx(pa->t->data_type);
            if (!strcmp(an, "value_int") || !strcmp(an, "value_ints")) return RLX_I64;
        }
        return RLX_F32;
    }
    if (!strcmp(op, "ArgMax")) return RLX_I64;
    if (!strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") || !strcmp(op, "And") ||
        !strcmp(op, "Or") || !strcmp(op, "Not"))
        return RLX_BOOL;
    int first = !strcmp(op, "Where") ? 1 : 0;
    if (np->n_input > (size_t)first && *np->input[first]) return guess_dtype(r, np->input[first], depth + 1);
    return RLX_F32;
}

static const char *arity_text(int lo, int hi, const char *what) {
    if (hi < 0) return rlx_fmt("at least %d %s%s", lo, what, lo == 1 ? "" : "s");
    if (lo == hi) return rlx_fmt("%d %s%s", lo, what, lo == 1 ? "" : "s");
    return rlx_fmt("%d to %d %ss", lo, hi, what);
}

/* The shape family's older forms and ONNX-coded dtypes: TopK-1's k
 * attribute becomes the constant K input (opset 10), EyeLike's dtype (an
 * ONNX type code) becomes an rlx dtype. */
static void import_shape_family(Reader *r, int i, int op, Attr *at, int nat, int *in, int *nin) {
    const char *nn = r->node_names[i];
    if (op == RLX_OP_TOPK && r->opset < 10) {
        RlxAttr *k = take(at, nat, "k");
        if (!k || k->kind != RLX_A_INT) node_err(r, i, "TopK-1 needs the int attribute 'k'");
        if (*nin != 1) node_err(r, i, rlx_fmt("TopK-1 takes 1 input, got %d", *nin));
        in[(*nin)++] = const_i64(r, nn, "K", 1, &k->i);
    }
    if (op == RLX_OP_EYELIKE) {
        Attr *a = find_attr(at, nat, "dtype");
        if (a && a->a.kind == RLX_A_INT) {
            int dt = a->a.i >= 0 && a->a.i <= 0x7fffffff ? rlx_dtype_from_onnx((int)a->a.i) : -1;
            if (dt < 0) node_err(r, i, rlx_fmt("attribute 'dtype': ONNX type %lld is not supported", (long long)a->a.i));
            a->a.kind = RLX_A_DTYPE;
            a->a.i = dt;
        }
    }
}

/* The signal family's ONNX-coded dtypes: the windows' and MelWeightMatrix's
 * output_datatype (an ONNX type code) becomes an rlx dtype. */
static void import_signal_family(Reader *r, int i, int op, Attr *at, int nat) {
    if (op != RLX_OP_HANNWINDOW && op != RLX_OP_HAMMINGWINDOW && op != RLX_OP_BLACKMANWINDOW &&
        op != RLX_OP_MELWEIGHTMATRIX)
        return;
    Attr *a = find_attr(at, nat, "output_datatype");
    if (a && a->a.kind == RLX_A_INT) {
        int dt = a->a.i >= 0 && a->a.i <= 0x7fffffff ? rlx_dtype_from_onnx((int)a->a.i) : -1;
        if (dt < 0) node_err(r, i, rlx_fmt("attribute 'output_datatype': ONNX type %lld is not supported", (long long)a->a.i));
        a->a.kind = RLX_A_DTYPE;
        a->a.i = dt;
    }
}

/* The norm family's older forms: ReduceL1/L2/LogSum/LogSumExp/Prod/SumSquare
 * take axes as an attribute until opset 18 (an input in the canonical form);
 * Hardmax before 13 defaults axis to 1 and coerces its input to 2-D, like
 * Softmax (legacy_2d). Returns the attribute array, grown if needed. */
static Attr *rewrite_norm(Reader *r, int i, int op, Attr *at, int *nat, int *in, int *nin) {
    const char *nn = r->node_names[i];
    switch (op) {
    case RLX_OP_REDUCEL1:
    case RLX_OP_REDUCEL2:
    case RLX_OP_REDUCELOGSUM:
    case RLX_OP_REDUCELOGSUMEXP:
    case RLX_OP_REDUCEPROD:
    case RLX_OP_REDUCESUMSQUARE: {
        RlxAttr *ax = take_ints(r, i, at, *nat, "axes", 0);
        if (*nin != 1) node_err(r, i, rlx_fmt("takes 1 input in opset %d, got %d", r->opset, *nin));
        if (ax) in[(*nin)++] = const_i64(r, nn, "axes", ax->n, ax->ints);
        break;
    }
    case RLX_OP_HARDMAX:
        if (r->opset < 13) {
            int has_axis = find_attr(at, *nat, "axis") != NULL;
            at = rlx_realloc(at, sizeof(Attr) * (size_t)(*nat + 1), sizeof(Attr) * (size_t)(*nat + 3));
            if (!has_axis) {
                at[*nat].a.name = "axis";
                at[*nat].a.kind = RLX_A_INT;
                at[*nat].a.i = 1;
                at[(*nat)++].a.tensor = -1;
            }
            at[*nat].a.name = "legacy_2d";
            at[*nat].a.kind = RLX_A_INT;
            at[*nat].a.i = 1;
            at[(*nat)++].a.tensor = -1;
        }
        break;
    default: break;
    }
    return at;
}

/* Upsample-7 (scales an attribute), Upsample-9 and Resize-10 (inputs X,
 * scales) become Resize (X, roi, scales): their only coordinate rule is
 * asymmetric with nearest rounding down, which is what ONNX's own 10 -> 11
 * converter writes into the attributes. Resize-11 and later are canonical. */
static Attr *rewrite_resize(Reader *r, int i, Attr *at, int *nat, int *in, int *nin) {
    const Onnx__NodeProto *np = r->gp->node[i];
    int upsample = !strcmp(str(np->op_type), "Upsample");
    if (!upsample && r->opset >= 11) return at;
    if (upsample && r->opset < 9) {
        RlxAttr *s = take(at, *nat, "scales");
        if (!s || s->kind != RLX_A_FLOATS) node_err(r, i, "missing required attribute 'scales' (floats)");
        if (*nin != 1) node_err(r, i, rlx_fmt("Upsample-7 takes 1 input, got %d", *nin));
        int vid = rlx_value_add(r->g, unique_value_name(r->g, rlx_fmt("%s.scales", r->node_names[i])));
        RlxValue *v = &r->g->v[vid];
        float *data = rlx_alloc(sizeof(float) * (size_t)(s->n + 1));
        for (int k = 0; k < s->n; k++) data[k] = (float)s->floats[k];
        v->dtype = RLX_F32;
        v->rank = 1;
        v->dims[0] = s->n;
        v->flags |= RLX_V_WEIGHT;
        v->data = (const uint8_t *)data;
        in[(*nin)++] = vid;
    } else if (*nin != 2) {
        node_err(r, i, rlx_fmt("takes 2 inputs (X, scales) in opset %d, got %d", r->opset, *nin));
    }
    in[2] = in[1];
    in[1] = -1;
    *nin = 3;
    if (find_attr(at, *nat, "coordinate_transformation_mode") || find_attr(at, *nat, "nearest_mode"))
        node_err(r, i, rlx_fmt("attributes of Resize-11 are not allowed in opset %d", r->opset));
    at = rlx_realloc(at, sizeof(Attr) * (size_t)(*nat + 1), sizeof(Attr) * (size_t)(*nat + 3));
    const char *names[2] = {"coordinate_transformation_mode", "nearest_mode"}, *values[2] = {"asymmetric", "floor"};
    for (int k = 0; k < 2; k++) {
        Attr *a = &at[(*nat)++];
        memset(a, 0, sizeof *a);
        a->a.name = names[k];
        a->a.kind = RLX_A_STRING;
        a->a.s = values[k];
        a->a.tensor = -1;
    }
    return at;
}

/* ---- operator versions before opset 7 ----
 *
 * ONNX versions every op on its own: in a model importing opset N, an op
 * means its latest version whose since_version is <= N. ops.def and the
 * rewrites in build_node follow the versions in force from opset 7 on.
 * Two tables cover older models (tests/unit/test_onnx.c checks both against
 * ONNX's schema history, onnx.defs.get_all_schemas_with_history):
 *
 *   op_introduced  the ops rlxc reads that ONNX added after opset 1; a node
 *                  of one in an older model is an error.
 *   old_versions   every version in force before opset 7 that differs from
 *                  the op's version at opset 7, with the OV_* differences.
 *                  rewrite_old_version turns such a node into its opset-7
 *                  form (which build_node then makes canonical), or rejects
 *                  it naming the version and the attribute.
 *
 * Differences in the lists of allowed types are not rows: old versions
 * allow fewer types, and rlxc accepting more is harmless.
 */
static const struct {
    const char *op;
    int since;
} op_introduced[] = {
    {"Acos", 7}, {"Asin", 7}, {"Atan", 7}, {"Cos", 7}, {"Sin", 7}, {"Tan", 7},
    {"Expand", 8}, {"Scan", 8},
    {"Acosh", 9}, {"Asinh", 9}, {"Atanh", 9}, {"Compress", 9}, {"ConstantOfShape", 9}, {"Cosh", 9}, {"Erf", 9},
    {"EyeLike", 9}, {"IsNaN", 9}, {"MaxUnpool", 9}, {"MeanVarianceNormalization", 9}, {"NonZero", 9}, {"OneHot", 9},
    {"Scatter", 9}, {"TfIdfVectorizer", 9},
    {"Shrink", 9}, {"Sign", 9}, {"Sinh", 9}, {"Where", 9},
    {"ConvInteger", 10}, {"DequantizeLinear", 10}, {"IsInf", 10}, {"MatMulInteger", 10}, {"Mod", 10},
    {"NonMaxSuppression", 10}, {"QLinearConv", 10}, {"QLinearMatMul", 10}, {"QuantizeLinear", 10}, {"Resize", 10},
    {"ReverseSequence", 10}, {"RoiAlign", 10}, {"ThresholdedRelu", 10},
    {"BitShift", 11}, {"CumSum", 11}, {"Det", 11}, {"DynamicQuantizeLinear", 11}, {"GatherElements", 11}, {"GatherND", 11},
    {"Range", 11}, {"Round", 11}, {"ScatterElements", 11}, {"ScatterND", 11}, {"Unique", 11},
    {"Celu", 12}, {"Einsum", 12}, {"GreaterOrEqual", 12}, {"LessOrEqual", 12}, {"NegativeLogLikelihoodLoss", 12},
    {"SoftmaxCrossEntropyLoss", 12},
    {"HardSwish", 14}, {"Trilu", 14},
    {"CastLike", 15},
    {"GridSample", 16},
    {"BlackmanWindow", 17}, {"DFT", 17}, {"HammingWindow", 17}, {"HannWindow", 17}, {"LayerNormalization", 17},
    {"MelWeightMatrix", 17}, {"STFT", 17},
    {"Mish", 18},
};

enum {
    OV_CONSUMED_INPUTS = 1 << 0,  /* 'consumed_inputs', a hint for in-place execution with no effect on results: dropped */
    OV_BROADCAST = 1 << 1,        /* 'broadcast'/'axis': B matches A's dims from axis (default: A's last dims) only
                                   * with broadcast=1, else equal shapes: NumPy broadcasting, B unsqueezed when
                                   * axis leaves trailing dims of A */
    OV_GEMM_BROADCAST = 1 << 2,   /* 'broadcast': C broadcasts to (M, N) only when set; Gemm-7 always does */
    OV_IS_TEST = 1 << 3,          /* 'is_test', default 0 = training: 0 given is an error, else dropped (as ONNX's
                                   * own 6 -> 7 converter does) */
    OV_CAST_TO_NAME = 1 << 4,     /* 'to' is a type name ("FLOAT"), not a code */
    OV_CONCAT_AXIS = 1 << 5,      /* 'axis' optional, default 1 */
    OV_RESHAPE_ATTR = 1 << 6,     /* the shape is the attribute 'shape', not an input */
    OV_SPLIT_1 = 1 << 7,          /* 'split' an attribute or a second input; 'axis' has no default */
    OV_PAD_PADDINGS = 1 << 8,     /* 'paddings', later named 'pads' */
    OV_TILE_1 = 1 << 9,           /* inputs (input, tiles, axis): tiles copies along one axis */
    OV_UPSAMPLE_1 = 1 << 10,      /* 'height_scale'/'width_scale' of a 4-D input; mode 'bilinear' (later 'linear') */
    OV_SELU_DEFAULTS = 1 << 11,   /* alpha defaults to 1.6732 and gamma to 1.0507 (later 1.67326.., 1.05070..) */
    OV_P_FLOAT = 1 << 12,         /* 'p' is a float (an int from version 2) */
    OV_OUTPUT_SEQUENCE = 1 << 13, /* 'output_sequence': whether Y is wanted; the listed outputs say it: dropped */
    OV_GRU_1 = 1 << 14,           /* direction's default is spelled 'foward'; no 'linear_before_reset' (acts as 0) */
    OV_NO_COUNT_INCLUDE_PAD = 1 << 15, /* no 'count_include_pad' (acts as 0) */
    OV_PRELU_SLOPE = 1 << 16,     /* slope: one value "shared across channels", else undefined how it broadcasts */
};

static const struct {
    const char *op;
    int version;                  /* its since_version */
    int next;                     /* the next version's since_version: the row holds for opsets version..next-1 */
    unsigned changes;             /* OV_* */
} old_versions[] = {
    {"Abs", 1, 6, OV_CONSUMED_INPUTS},
    {"Add", 1, 6, OV_CONSUMED_INPUTS | OV_BROADCAST},
    {"Add", 6, 7, OV_BROADCAST},
    {"And", 1, 7, OV_BROADCAST},
    {"AveragePool", 1, 7, OV_NO_COUNT_INCLUDE_PAD},
    {"BatchNormalization", 1, 6, OV_CONSUMED_INPUTS | OV_IS_TEST},
    {"BatchNormalization", 6, 7, OV_IS_TEST},
    {"Cast", 1, 6, OV_CAST_TO_NAME},
    {"Ceil", 1, 6, OV_CONSUMED_INPUTS},
    {"Clip", 1, 6, OV_CONSUMED_INPUTS},
    {"Concat", 1, 4, OV_CONCAT_AXIS},
    {"Div", 1, 6, OV_CONSUMED_INPUTS | OV_BROADCAST},
    {"Div", 6, 7, OV_BROADCAST},
    {"Dropout", 1, 6, OV_CONSUMED_INPUTS | OV_IS_TEST},
    {"Dropout", 6, 7, OV_IS_TEST},
    {"Elu", 1, 6, OV_CONSUMED_INPUTS},
    {"Equal", 1, 7, OV_BROADCAST},
    {"Exp", 1, 6, OV_CONSUMED_INPUTS},
    {"Floor", 1, 6, OV_CONSUMED_INPUTS},
    {"GRU", 1, 3, OV_OUTPUT_SEQUENCE | OV_GRU_1},
    {"GRU", 3, 7, OV_OUTPUT_SEQUENCE},
    {"Gemm", 1, 6, OV_GEMM_BROADCAST},
    {"Gemm", 6, 7, OV_GEMM_BROADCAST},
    {"GlobalLpPool", 1, 2, OV_P_FLOAT},
    {"Greater", 1, 7, OV_BROADCAST},
    {"HardSigmoid", 1, 6, OV_CONSUMED_INPUTS},
    {"InstanceNormalization", 1, 6, OV_CONSUMED_INPUTS},
    {"LSTM", 1, 7, OV_OUTPUT_SEQUENCE},
    {"LeakyRelu", 1, 6, OV_CONSUMED_INPUTS},
    {"Less", 1, 7, OV_BROADCAST},
    {"Log", 1, 6, OV_CONSUMED_INPUTS},
    {"LpPool", 1, 2, OV_P_FLOAT},
    {"Max", 1, 6, OV_CONSUMED_INPUTS},
    {"Mean", 1, 6, OV_CONSUMED_INPUTS},
    {"Min", 1, 6, OV_CONSUMED_INPUTS},
    {"Mul", 1, 6, OV_CONSUMED_INPUTS | OV_BROADCAST},
    {"Mul", 6, 7, OV_BROADCAST},
    {"Neg", 1, 6, OV_CONSUMED_INPUTS},
    {"Or", 1, 7, OV_BROADCAST},
    {"PRelu", 1, 6, OV_CONSUMED_INPUTS | OV_PRELU_SLOPE},
    {"PRelu", 6, 7, OV_PRELU_SLOPE},
    {"Pad", 1, 2, OV_PAD_PADDINGS},
    {"Pow", 1, 7, OV_BROADCAST},
    {"RNN", 1, 7, OV_OUTPUT_SEQUENCE},
    {"Reciprocal", 1, 6, OV_CONSUMED_INPUTS},
    {"Relu", 1, 6, OV_CONSUMED_INPUTS},
    {"Reshape", 1, 5, OV_CONSUMED_INPUTS | OV_RESHAPE_ATTR},
    {"Selu", 1, 6, OV_CONSUMED_INPUTS | OV_SELU_DEFAULTS},
    {"Sigmoid", 1, 6, OV_CONSUMED_INPUTS},
    {"Split", 1, 2, OV_SPLIT_1},
    {"Sqrt", 1, 6, OV_CONSUMED_INPUTS},
    {"Sub", 1, 6, OV_CONSUMED_INPUTS | OV_BROADCAST},
    {"Sub", 6, 7, OV_BROADCAST},
    {"Sum", 1, 6, OV_CONSUMED_INPUTS},
    {"Tanh", 1, 6, OV_CONSUMED_INPUTS},
    {"Tile", 1, 6, OV_TILE_1},
    {"Upsample", 1, 7, OV_UPSAMPLE_1},
    {"Xor", 1, 7, OV_BROADCAST},
};

/* A node of an op ONNX added after the model's opset is an error. */
static void check_op_versions(const Reader *r) {
    for (int i = 0; i < (int)r->gp->n_node; i++) {
        const Onnx__NodeProto *np = r->gp->node[i];
        if (!is_default_domain(str(np->domain))) continue;
        for (size_t k = 0; k < sizeof op_introduced / sizeof op_introduced[0]; k++)
            if (!strcmp(str(np->op_type), op_introduced[k].op) && op_introduced[k].since > r->opset)
                node_err(r, i, rlx_fmt("%s does not exist in opset %d (ONNX added it in opset %d)", op_introduced[k].op,
                                       r->opset, op_introduced[k].since));
    }
}

/* The rank of a value as far as the importer can tell before inference, or
 * -1: graph inputs and weights, declared shapes (value_info, outputs),
 * Constant nodes, and through ops whose output has their first input's
 * rank (in opsets before 7 that includes the binary ops: A's shape). */
static int known_rank(const Reader *r, const char *name, int depth) {
    static const char *const keep_rank[] = {
        "Abs", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Conv", "ConvTranspose", "Dropout", "Elu",
        "Exp", "Floor", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "HardSigmoid", "Hardmax", "Identity",
        "InstanceNormalization", "LRN", "LeakyRelu", "Log", "LogSoftmax", "LpNormalization", "LpPool", "MaxPool",
        "Neg", "Not", "PRelu", "Pad", "Reciprocal", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "Softsign",
        "Sqrt", "Tanh", "Tile", "Upsample"};
    static const char *const binary[] = {"Add", "And", "Div", "Equal", "Greater", "Less", "Mul", "Or", "Pow", "Sub", "Xor"};
    const RlxGraph *g = r->g;
    const Onnx__GraphProto *gp = r->gp;
    int v = rlx_value_find(g, name);
    if (v >= 0 && (g->v[v].flags & (RLX_V_INPUT | RLX_V_WEIGHT))) return g->v[v].rank;
    const Onnx__ValueInfoProto *const *lists[] = {(const Onnx__ValueInfoProto *const *)gp->value_info,
                                                  (const Onnx__ValueInfoProto *const *)gp->output};
    size_t counts[] = {gp->n_value_info, gp->n_output};
    for (int l = 0; l < 2; l++)
        for (size_t k = 0; k < counts[l]; k++) {
            const Onnx__TypeProto *t = lists[l][k]->type;
            if (!strcmp(str(lists[l][k]->name), name) && t && t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                t->tensor_type->shape && t->tensor_type->shape->n_dim <= RLX_MAX_RANK)
                return (int)t->tensor_type->shape->n_dim;
        }
    if (v < 0 || g->v[v].producer < 0 || g->v[v].producer >= (int)gp->n_node || depth > 64) return -1;
    const Onnx__NodeProto *np = gp->node[g->v[v].producer];
    const char *op = str(np->op_type);
    if (!is_default_domain(str(np->domain))) return -1;
    if (!strcmp(op, "Constant")) {
        for (size_t k = 0; k < np->n_attribute; k++) {
            const Onnx__AttributeProto *pa = np->attribute[k];
            const char *an = str(pa->name);
            if (!strcmp(an, "value") && pa->t && pa->t->n_dims <= RLX_MAX_RANK) return (int)pa->t->n_dims;
            if (!strcmp(an, "value_float") || !strcmp(an, "value_int")) return 0;
            if (!strcmp(an, "value_floats") || !strcmp(an, "value_ints")) return 1;
        }
        return -1;
    }
    int follows = 0;
    for (size_t k = 0; k < sizeof keep_rank / sizeof keep_rank[0]; k++) follows |= !strcmp(op, keep_rank[k]);
    for (size_t k = 0; k < sizeof binary / sizeof binary[0] && r->opset < 7; k++) follows |= !strcmp(op, binary[k]);
    if (!follows || np->n_input == 0 || !*np->input[0]) return -1;
    return known_rank(r, np->input[0], depth + 1);
}

static Attr *add_attr(Attr *at, int *nat, const char *name, RlxAttrKind kind) {
    at = rlx_realloc(at, sizeof(Attr) * (size_t)(*nat + 1), sizeof(Attr) * (size_t)(*nat + 2));
    Attr *a = &at[(*nat)++];
    memset(a, 0, sizeof *a);
    a->a.name = name;
    a->a.kind = kind;
    a->a.tensor = -1;
    return at;
}

/* The vision family's older forms: RoiAlign-10 has no
 * coordinate_transformation_mode and samples as output_half_pixel does;
 * RoiAlign-16 added the attribute with the default half_pixel (the
 * canonical form), so the old rule is written in explicitly. */
static Attr *rewrite_vision(Reader *r, int i, int op, Attr *at, int *nat) {
    if (op != RLX_OP_ROIALIGN || r->opset >= 16) return at;
    if (find_attr(at, *nat, "coordinate_transformation_mode"))
        node_err(r, i, rlx_fmt("attribute 'coordinate_transformation_mode' is not allowed in opset %d", r->opset));
    at = rlx_realloc(at, sizeof(Attr) * (size_t)(*nat + 1), sizeof(Attr) * (size_t)(*nat + 2));
    Attr *a = &at[(*nat)++];
    memset(a, 0, sizeof *a);
    a->a.name = "coordinate_transformation_mode";
    a->a.kind = RLX_A_STRING;
    a->a.s = "output_half_pixel";
    a->a.tensor = -1;
    return at;
}

/* B of a legacy broadcast with axis gets trailing size-1 axes so that NumPy
 * broadcasting lines it up with A's dims from axis: an Unsqueeze node, added
 * after the ONNX nodes (each ONNX node keeps its index as its node id). */
static int unsqueeze_later(Reader *r, int i, int b, int rank_b, int trailing) {
    const char *nn = r->node_names[i];
    int64_t axes[RLX_MAX_RANK];
    RLX_ASSERT(trailing > 0 && rank_b + trailing <= RLX_MAX_RANK);
    for (int k = 0; k < trailing; k++) axes[k] = rank_b + k;
    int n = r->nlater++;
    r->later = rlx_realloc(r->later, sizeof *r->later * (size_t)n, sizeof *r->later * (size_t)(n + 1));
    r->later[n].in = b;
    r->later[n].axes = const_i64(r, nn, "B_axes", trailing, axes);
    r->later[n].out = rlx_value_add(r->g, unique_value_name(r->g, rlx_fmt("%s.B_unsqueezed", nn)));
    const char *base = rlx_fmt("%s.unsqueeze_B", nn), *name = base;
    for (int k = 1; rlx_names_get(&r->node_ids, name) >= 0; k++) name = rlx_fmt("%s_%d", base, k);
    rlx_names_put(&r->node_ids, name, (int)r->gp->n_node + n);
    r->later[n].name = name;
    return r->later[n].out;
}

static void add_later_nodes(Reader *r) {
    for (int k = 0; k < r->nlater; k++) {
        int in[2] = {r->later[k].in, r->later[k].axes};
        int id = rlx_node_add(r->g, r->later[k].name, RLX_OP_UNSQUEEZE, 2, in, 1, &r->later[k].out);
        r->g->v[r->later[k].out].producer = id;
        rlx_attr_check(r->g, id);
    }
}

static const char *old_name(int row) {
    return rlx_fmt("%s-%d", old_versions[row].op, old_versions[row].version);
}

/* A scalar attribute given as an int (0/1 flags in old versions). */
static int take_flag(const Reader *r, int i, int row, Attr *at, int nat, const char *name, int dflt) {
    RlxAttr *a = take(at, nat, name);
    if (!a) return dflt;
    if (a->kind != RLX_A_INT) node_err(r, i, rlx_fmt("%s: attribute '%s' must be of type int", old_name(row), name));
    return a->i != 0;
}

static void old_broadcast(Reader *r, int i, int row, Attr *at, int nat, int *in, int nin) {
    const Onnx__NodeProto *np = r->gp->node[i];
    const char *ver = old_name(row);
    int bc = take_flag(r, i, row, at, nat, "broadcast", 0);
    RlxAttr *ax = take(at, nat, "axis");
    if (ax && ax->kind != RLX_A_INT) node_err(r, i, rlx_fmt("%s: attribute 'axis' must be of type int", ver));
    if (nin != 2 || in[0] < 0 || in[1] < 0) return;   /* the arity check names it */
    const RlxValue *a = &r->g->v[in[0]], *b = &r->g->v[in[1]];
    if (!bc) {
        /* equal shapes, where NumPy broadcasting agrees; checked when known
         * (a subgraph's formal inputs have no shape yet: rank -1) */
        int known = (a->flags & (RLX_V_INPUT | RLX_V_WEIGHT)) && (b->flags & (RLX_V_INPUT | RLX_V_WEIGHT)) &&
                    a->rank >= 0 && b->rank >= 0;
        if (known && (a->rank != b->rank || memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank)))
            node_err(r, i, rlx_fmt("%s without broadcast=1 needs inputs of equal shapes, got %s and %s", ver,
                                   rlx_shape_str(a), rlx_shape_str(b)));
        return;
    }
    if (!ax) return;   /* B matches A's last dims: NumPy's alignment */
    int ra = known_rank(r, np->input[0], 0), rb = known_rank(r, np->input[1], 0);
    if (ra < 0 || rb < 0)
        node_err(r, i, rlx_fmt("%s: broadcast=1 with axis=%lld needs the ranks of A ('%s') and B ('%s') at import; "
                               "declare their shapes (value_info)", ver, (long long)ax->i, np->input[0], np->input[1]));
    if (ax->i < 0 || ax->i > ra - rb)
        node_err(r, i, rlx_fmt("%s: broadcast axis=%lld is out of range for A of rank %d and B of rank %d", ver,
                               (long long)ax->i, ra, rb));
    int trailing = ra - (int)ax->i - rb;
    if (trailing > 0) in[1] = unsqueeze_later(r, i, in[1], rb, trailing);
}

/* A node of an op version in force before opset 7 -> its opset-7 form. */
static Attr *rewrite_old_version(Reader *r, int i, Attr *at, int *nat, int *in, int *nin) {
    const Onnx__NodeProto *np = r->gp->node[i];
    const char *nn = r->node_names[i];
    int row = -1;
    if (!is_default_domain(str(np->domain))) return at;
    for (int k = 0; k < (int)(sizeof old_versions / sizeof old_versions[0]); k++)
        if (!strcmp(str(np->op_type), old_versions[k].op) && old_versions[k].version <= r->opset &&
            r->opset < old_versions[k].next)
            row = k;
    if (row < 0) return at;
    unsigned ch = old_versions[row].changes;
    const char *ver = old_name(row);
    RlxAttr *a;
    Attr *x;

    if (ch & OV_CONSUMED_INPUTS) take(at, *nat, "consumed_inputs");
    if (ch & OV_BROADCAST) old_broadcast(r, i, row, at, *nat, in, *nin);
    if (ch & OV_GEMM_BROADCAST) take_flag(r, i, row, at, *nat, "broadcast", 0);
    if ((ch & OV_IS_TEST) && (a = take(at, *nat, "is_test")) && a->kind == RLX_A_INT && a->i == 0)
        node_err(r, i, rlx_fmt("%s: is_test=0 (training mode) is not supported; rlxc compiles inference", ver));
    if ((ch & OV_CAST_TO_NAME) && (x = find_attr(at, *nat, "to")) && x->a.kind == RLX_A_STRING) {
        int code = -1;
        for (int c = 1; c < 17 && code < 0; c++) {
            const char *tn = onnx_type_name(c), *p = x->a.s;
            size_t len = strcspn(tn, " ");
            int same = strlen(p) == len;
            for (size_t k = 0; k < len && same; k++) same = p[k] == tn[k] || (p[k] >= 'a' && p[k] <= 'z' && p[k] - 32 == tn[k]);
            if (same) code = c;
        }
        int dt = code >= 0 ? rlx_dtype_from_onnx(code) : -1;
        if (dt < 0) node_err(r, i, rlx_fmt("%s: attribute 'to': type '%s' is not supported", ver, x->a.s));
        x->a.kind = RLX_A_DTYPE;
        x->a.i = dt;
    }
    if ((ch & OV_CONCAT_AXIS) && !find_attr(at, *nat, "axis")) {
        at = add_attr(at, nat, "axis", RLX_A_INT);
        at[*nat - 1].a.i = 1;
    }
    if (ch & OV_RESHAPE_ATTR) {
        a = take(at, *nat, "shape");
        if (!a || a->kind != RLX_A_INTS) node_err(r, i, rlx_fmt("%s needs the attribute 'shape' (ints)", ver));
        if (*nin != 1) node_err(r, i, rlx_fmt("%s takes 1 input, got %d", ver, *nin));
        in[(*nin)++] = const_i64(r, nn, "shape", a->n, a->ints);
    }
    if (ch & OV_SPLIT_1) {
        if (!find_attr(at, *nat, "axis"))
            node_err(r, i, rlx_fmt("%s needs the attribute 'axis' (ONNX gives it no default before Split-2)", ver));
        if (find_attr(at, *nat, "split") && *nin > 1)
            node_err(r, i, rlx_fmt("%s takes 'split' as an attribute or as input 2, not both", ver));
    }
    if ((ch & OV_PAD_PADDINGS) && (x = find_attr(at, *nat, "paddings"))) {
        if (find_attr(at, *nat, "pads")) node_err(r, i, rlx_fmt("%s has no attribute 'pads' (it is 'paddings')", ver));
        x->a.name = "pads";
    }
    if (ch & OV_TILE_1) {
        if (*nin != 3) node_err(r, i, rlx_fmt("%s takes 3 inputs (input, tiles, axis), got %d", ver, *nin));
        int64_t v[2];
        for (int k = 0; k < 2; k++) {
            const char *role = k ? "axis" : "tiles";
            if (in[k + 1] < 0 || !rlx_is_const(r->g, in[k + 1]) || rlx_value_numel(&r->g->v[in[k + 1]]) != 1)
                node_err(r, i, rlx_fmt("%s: input '%s' must be a constant (weight) holding one value", ver, role));
            double d = rlx_weight_f64(&r->g->v[in[k + 1]], 0);
            if (!(d >= -1e15 && d <= 1e15) || d != (double)(int64_t)d)
                node_err(r, i, rlx_fmt("%s: input '%s' must hold a whole number, got %g", ver, role, d));
            v[k] = (int64_t)d;
        }
        int rank = known_rank(r, np->input[0], 0);
        if (rank < 0)
            node_err(r, i, rlx_fmt("%s needs the rank of its input '%s' at import; declare its shape (value_info)",
                                   ver, np->input[0]));
        if (v[0] < 0 || v[1] < 0 || v[1] >= rank)
            node_err(r, i, rlx_fmt("%s: tiles=%lld, axis=%lld are out of range for an input of rank %d", ver,
                                   (long long)v[0], (long long)v[1], rank));
        int64_t repeats[RLX_MAX_RANK];
        for (int k = 0; k < rank; k++) repeats[k] = k == v[1] ? v[0] : 1;
        in[1] = const_i64(r, nn, "repeats", rank, repeats);
        *nin = 2;
    }
    if (ch & OV_UPSAMPLE_1) {
        int has_h, has_w;
        double hs = take_float(r, i, at, *nat, "height_scale", &has_h), ws = take_float(r, i, at, *nat, "width_scale", &has_w);
        if (!has_h || !has_w) node_err(r, i, rlx_fmt("%s needs the attributes 'height_scale' and 'width_scale'", ver));
        if (find_attr(at, *nat, "scales")) node_err(r, i, rlx_fmt("%s has no attribute 'scales'", ver));
        if ((x = find_attr(at, *nat, "mode")) && x->a.kind == RLX_A_STRING && !strcmp(x->a.s, "bilinear")) x->a.s = "linear";
        at = add_attr(at, nat, "scales", RLX_A_FLOATS);   /* X is [N,C,H,W] */
        RlxAttr *s = &at[*nat - 1].a;
        s->n = 4;
        s->floats = rlx_alloc(sizeof(double) * 4);
        s->floats[0] = s->floats[1] = 1;
        s->floats[2] = hs;
        s->floats[3] = ws;
    }
    if (ch & OV_SELU_DEFAULTS) {
        const char *names[2] = {"alpha", "gamma"};
        const double dflt[2] = {1.6732f, 1.0507f};   /* float attributes, as ONNX stores them */
        for (int k = 0; k < 2; k++)
            if (!find_attr(at, *nat, names[k])) {
                at = add_attr(at, nat, names[k], RLX_A_FLOAT);
                at[*nat - 1].a.f = dflt[k];
            }
    }
    if ((ch & OV_P_FLOAT) && (x = find_attr(at, *nat, "p")) && x->a.kind == RLX_A_FLOAT) {
        double p = x->a.f;
        if (!(p >= 1 && p <= 1e6) || p != (double)(int64_t)p)
            node_err(r, i, rlx_fmt("%s: p=%g is not supported (rlxc's Lp pooling takes a whole p >= 1, as ONNX does "
                                   "from version 2)", ver, p));
        x->a.kind = RLX_A_INT;
        x->a.i = (int64_t)p;
    }
    if (ch & OV_OUTPUT_SEQUENCE) take(at, *nat, "output_sequence");
    if (ch & OV_GRU_1) {
        if (find_attr(at, *nat, "linear_before_reset"))
            node_err(r, i, rlx_fmt("%s has no attribute 'linear_before_reset' (added in GRU-3)", ver));
        if ((x = find_attr(at, *nat, "direction")) && x->a.kind == RLX_A_STRING && !strcmp(x->a.s, "foward"))
            x->a.s = "forward";
    }
    if ((ch & OV_NO_COUNT_INCLUDE_PAD) && find_attr(at, *nat, "count_include_pad"))
        node_err(r, i, rlx_fmt("%s has no attribute 'count_include_pad' (added in AveragePool-7)", ver));
    if ((ch & OV_PRELU_SLOPE) && *nin == 2 && in[1] >= 0) {
        /* one slope value, or one per element, means the same in every
         * reading; a 1-D slope on an input of rank > 2 is per channel (axis
         * 1) in Caffe2's reading and on the last axis in NumPy's: ambiguous */
        const RlxValue *s = &r->g->v[in[1]];
        int rs = known_rank(r, np->input[1], 0), rx = known_rank(r, np->input[0], 0);
        int64_t count = (s->flags & (RLX_V_INPUT | RLX_V_WEIGHT)) && rs >= 0 ? rlx_value_numel(s) : -1;
        if (rs == 1 && count != 1 && !(rx == 1 || rx == 2))
            node_err(r, i, rlx_fmt("%s: a 1-D slope on an input of rank %s is ambiguous before PRelu-7 (per channel in "
                                   "Caffe2, the last axis in NumPy); reshape the slope to broadcast as meant",
                                   ver, rx < 0 ? "unknown at import" : rlx_fmt("%d", rx)));
        if (rs < 0)
            node_err(r, i, rlx_fmt("%s needs the shape of its slope '%s' at import; declare it (value_info)", ver,
                                   np->input[1]));
    }
    return at;
}

/* ---- control flow: the bodies of If, Loop and Scan ----
 *
 * A body (a GRAPH attribute) becomes a graph of its own, kept in the node's
 * RLX_A_GRAPH attribute; ext_ctrl.c copies it into the model graph during
 * inference, once the condition or the trip count is known (rlxc compiles
 * static control flow only). The body's inputs are its formal parameters,
 * then one input per outer value it reads (ONNX lets a body name any value
 * of an enclosing graph): lookup_value makes such a capture on first use, in
 * every graph between the body and the one that defines the value, and
 * import_control_flow appends the captured outer values to the node's
 * inputs, so that scheduling and dead-code removal see the dependency. */

static void build_node(Reader *r, int i);

/* A value visible in r's graph: its own, or an enclosing graph's (captured). */
static int lookup_value(Reader *r, const char *name) {
    int v = rlx_value_find(r->g, name);
    if (v >= 0 || !r->parent) return v;
    int outer = lookup_value(r->parent, name);
    if (outer < 0) return -1;
    RlxGraph *g = r->g;
    v = rlx_value_add(g, name);
    g->v[v].flags |= RLX_V_INPUT;
    g->inputs = rlx_realloc(g->inputs, sizeof(int) * (size_t)g->ninputs, sizeof(int) * (size_t)(g->ninputs + 1));
    g->inputs[g->ninputs++] = v;
    r->captured = rlx_realloc(r->captured, sizeof(int) * (size_t)r->ncaptured,
                              sizeof(int) * (size_t)(r->ncaptured + 1));
    r->captured[r->ncaptured++] = outer;
    return v;
}

/* The body graph of attribute `attr` of node i; out gets its captures. */
static RlxGraph *import_subgraph(Reader *r, int i, const Onnx__GraphProto *gp, const char *attr, Attr *out) {
    Reader sub;
    memset(&sub, 0, sizeof sub);
    sub.file = r->file;
    sub.opset = r->opset;
    sub.ndims = r->ndims;
    sub.dim_names = r->dim_names;
    sub.dim_values = r->dim_values;
    sub.dim_used = r->dim_used;
    sub.parent = r;
    sub.gp = gp;
    sub.g = rlx_graph_new(r->file);
    RlxGraph *g = sub.g;
    g->name = rlx_fmt("%s.%s", r->node_names[i], attr);
    const char *where = rlx_fmt("subgraph '%s' of node '%s'", attr, r->node_names[i]);
    rlx_check_node_count(r->file, (int64_t)gp->n_node, rlx_fmt("%s has", where));
    if (gp->n_input > 0x3fffffff || gp->n_output > 0x3fffffff) rlx_error("%s: %s is too large", r->file, where);
    for (size_t k = 0; k < gp->n_value_info; k++)
        tensor_type(&sub, gp->value_info[k], rlx_fmt("value '%s' (%s)", str(gp->value_info[k]->name), where));
    name_nodes(&sub);
    check_ops(&sub);
    read_initializers(&sub);
    /* the formal parameters; their shapes come from the actual values */
    g->inputs = rlx_alloc(sizeof(int) * (gp->n_input + 1));
    for (size_t k = 0; k < gp->n_input; k++) {
        const char *name = str(gp->input[k]->name);
        if (!*name) rlx_error("%s: input %d of %s has no name", r->file, (int)k, where);
        check_name(r, name, rlx_fmt("input name '%s'", name));
        tensor_type(&sub, gp->input[k], rlx_fmt("input '%s' of %s", name, where));
        if (rlx_value_find(g, name) >= 0)
            rlx_error("%s: input '%s' of %s is listed twice or is also an initializer", r->file, name, where);
        int v = rlx_value_add(g, name);
        g->v[v].flags |= RLX_V_INPUT;
        g->inputs[g->ninputs++] = v;
    }
    int n = (int)gp->n_node;
    sub.node_nout = rlx_alloc(sizeof(int) * (size_t)(n + 1));
    sub.node_out = rlx_alloc(sizeof(int *) * (size_t)(n + 1));
    for (int k = 0; k < n; k++) add_outputs(&sub, k);
    for (int k = 0; k < n; k++) name_skipped_outputs(&sub, k);
    for (int k = 0; k < n; k++) build_node(&sub, k);
    g->outputs = rlx_alloc(sizeof(int) * (gp->n_output + 1));
    g->output_decl = rlx_alloc(sizeof(RlxDecl) * (gp->n_output + 1));
    for (size_t k = 0; k < gp->n_output; k++) {
        const char *name = str(gp->output[k]->name);
        const char *what = rlx_fmt("output '%s' of %s", name, where);
        const Onnx__TypeProto__Tensor *tt = tensor_type(&sub, gp->output[k], what);
        int v = *name ? lookup_value(&sub, name) : -1;
        if (v < 0) {
            check_not_dropped(&sub, name, where);
            rlx_error("%s: %s is not defined", r->file, what);
        }
        /* what a loop that runs zero times needs to shape its scan outputs */
        RlxDecl *d = &g->output_decl[g->noutputs];
        d->dtype = tt && tt->has_elem_type && tt->elem_type ? tensor_dtype(r, tt->elem_type, what) : -1;
        d->rank = -1;
        if (tt && tt->shape && tt->shape->n_dim <= RLX_MAX_RANK) {
            int known = 1;
            for (size_t a = 0; a < tt->shape->n_dim; a++) {
                const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[a];
                known &= dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0;
                if (known) d->dims[a] = dim->dim_value;
            }
            if (known) d->rank = (int)tt->shape->n_dim;
        }
        g->outputs[g->noutputs++] = v;
    }
    out->captured = sub.captured;
    out->ncaptured = sub.ncaptured;
    return g;
}

/* Appends the outer values the node's bodies capture to its inputs (then's,
 * then else's), recorded as 'captured'; Loop's M and cond, and Scan-8's
 * sequence_lens, keep their places even when absent. Scan before opset 9
 * is marked legacy_batch. */
static Attr *import_control_flow(Reader *r, int i, int op, Attr *at, int *nat, int **in, int *nin) {
    static const char *const graphs[] = {"then_branch", "else_branch", "body"};
    int fixed = op == RLX_OP_LOOP ? 2 : op == RLX_OP_SCAN && r->opset < 9 ? 1 : 0;
    if ((int)r->gp->node[i]->n_input < fixed)
        node_err(r, i, rlx_fmt("takes at least %d inputs, got %d", fixed, (int)r->gp->node[i]->n_input));
    if (*nin < fixed) *nin = fixed;   /* the absent ones are -1 already */
    int ncap = 0;
    for (int k = 0; k < 3; k++) {
        Attr *a = find_attr(at, *nat, graphs[k]);
        if (a && a->a.kind == RLX_A_GRAPH) ncap += a->ncaptured;
    }
    int *grown = rlx_alloc(sizeof(int) * (size_t)(*nin + ncap + 1));
    memcpy(grown, *in, sizeof(int) * (size_t)*nin);
    for (int k = 0; k < 3; k++) {
        Attr *a = find_attr(at, *nat, graphs[k]);
        if (!a || a->a.kind != RLX_A_GRAPH || !a->ncaptured) continue;
        memcpy(grown + *nin, a->captured, sizeof(int) * (size_t)a->ncaptured);
        *nin += a->ncaptured;
    }
    *in = grown;
    at = rlx_realloc(at, sizeof(Attr) * (size_t)(*nat + 1), sizeof(Attr) * (size_t)(*nat + 3));
    const char *names[2] = {"captured", "legacy_batch"};
    int64_t values[2] = {ncap, 1};
    for (int k = 0; k < (op == RLX_OP_SCAN && r->opset < 9 ? 2 : 1); k++) {
        Attr *a = &at[(*nat)++];
        memset(a, 0, sizeof *a);
        a->a.name = names[k];
        a->a.kind = RLX_A_INT;
        a->a.i = values[k];
        a->a.tensor = -1;
    }
    return at;
}

/* Pass 2: inputs, the rewrite into canonical form, attributes. */
static void build_node(Reader *r, int i) {
    const Onnx__NodeProto *np = r->gp->node[i];
    RlxGraph *g = r->g;
    const char *nn = r->node_names[i];
    int op = node_op(np), opset = r->opset;
    int is_dropout = !strcmp(str(np->op_type), "Dropout");
    const char *user = rlx_fmt("node '%s' (%s)", nn, op_label(np));

    int nat = (int)np->n_attribute;
    Attr *at = rlx_alloc(sizeof(Attr) * (size_t)(nat + 1));
    for (int k = 0; k < nat; k++) {
        read_attr(r, i, op, np->attribute[k], &at[k]);
        for (int j = 0; j < k; j++)
            if (!strcmp(at[j].a.name, at[k].a.name)) node_err(r, i, rlx_fmt("duplicate attribute '%s'", at[k].a.name));
    }

    /* inputs: room for the ones rewrites add */
    int nin = (int)np->n_input, cap = nin + 4;
    int *in = rlx_alloc(sizeof(int) * (size_t)cap);
    for (int k = 0; k < nin; k++) {
        const char *vn = np->input[k];
        in[k] = -1;
        if (!*vn) continue;
        int v = lookup_value(r, vn);
        if (v < 0) {
            check_not_dropped(r, vn, user);
            node_err(r, i, rlx_fmt("input '%s' is not defined (not a graph input, an initializer or a node output)",
                                   vn));
        }
        in[k] = v;
    }

    /* older operator versions -> the canonical form */
    at = rewrite_old_version(r, i, at, &nat, in, &nin);
    RlxAttr *a;
    switch (op) {
    case RLX_OP_SLICE:
        if (opset < 10) {
            RlxAttr *s = take_ints(r, i, at, nat, "starts", 1), *e = take_ints(r, i, at, nat, "ends", 1);
            RlxAttr *ax = take_ints(r, i, at, nat, "axes", 0);
            if (nin != 1) node_err(r, i, rlx_fmt("Slice-1 takes 1 input, got %d", nin));
            in[nin++] = const_i64(r, nn, "starts", s->n, s->ints);
            in[nin++] = const_i64(r, nn, "ends", e->n, e->ints);
            if (ax) in[nin++] = const_i64(r, nn, "axes", ax->n, ax->ints);
        }
        break;
    case RLX_OP_CLIP:
        if (opset < 11) {
            int has_min, has_max;
            double lo = take_float(r, i, at, nat, "min", &has_min), hi = take_float(r, i, at, nat, "max", &has_max);
            if (nin != 1) node_err(r, i, rlx_fmt("Clip-6 takes 1 input, got %d", nin));
            int dt = in[0] >= 0 ? guess_dtype(r, np->input[0], 0) : RLX_F32;
            in[nin++] = has_min ? const_scalar(r, nn, "min", dt, lo) : -1;
            in[nin++] = has_max ? const_scalar(r, nn, "max", dt, hi) : -1;
        }
        break;
    case RLX_OP_SQUEEZE:
    case RLX_OP_UNSQUEEZE:
        if (opset < 13) {
            RlxAttr *ax = take_ints(r, i, at, nat, "axes", op == RLX_OP_UNSQUEEZE);
            if (nin != 1) node_err(r, i, rlx_fmt("%s-1 and -11 take 1 input, got %d", rlx_ops[op].name, nin));
            if (ax) in[nin++] = const_i64(r, nn, "axes", ax->n, ax->ints);
        }
        break;
    case RLX_OP_SPLIT:
        if (opset < 13 && (a = take_ints(r, i, at, nat, "split", 0))) {
            if (nin != 1) node_err(r, i, rlx_fmt("Split-2 and -11 take 1 input, got %d", nin));
            in[nin++] = const_i64(r, nn, "split", a->n, a->ints);
        }
        break;
    case RLX_OP_REDUCESUM:
    case RLX_OP_REDUCEMEAN:
    case RLX_OP_REDUCEMAX:
    case RLX_OP_REDUCEMIN:
        /* axes became an input in opset 13 for ReduceSum, 18 for the rest */
        if (op != RLX_OP_REDUCESUM || opset < 13) {
            RlxAttr *ax = take_ints(r, i, at, nat, "axes", 0);
            if (nin != 1) node_err(r, i, rlx_fmt("takes 1 input in opset %d, got %d", opset, nin));
            if (ax) in[nin++] = const_i64(r, nn, "axes", ax->n, ax->ints);
        }
        break;
    case RLX_OP_PAD:
        if (opset < 11) {
            RlxAttr *p = take_ints(r, i, at, nat, "pads", 1);
            int has_value;
            double value = take_float(r, i, at, nat, "value", &has_value);
            if (nin != 1) node_err(r, i, rlx_fmt("Pad-2 takes 1 input, got %d", nin));
            in[nin++] = const_i64(r, nn, "pads", p->n, p->ints);
            if (has_value) in[nin++] = const_scalar(r, nn, "value", in[0] >= 0 ? guess_dtype(r, np->input[0], 0) : RLX_F32, value);
        }
        break;
    case RLX_OP_BATCHNORM:
        if (opset < 9 && (a = take(at, nat, "spatial")) && !(a->kind == RLX_A_INT && a->i == 1))
            node_err(r, i, "spatial=0 (per-element statistics) is not supported");
        break;
    case RLX_OP_SOFTMAX:
    case RLX_OP_LOGSOFTMAX:
        if (opset < 13) {
            /* before 13: axis defaults to 1 and the input is coerced to 2-D
             * [prod(dims[:axis]), prod(dims[axis:])] */
            Attr *ax = find_attr(at, nat, "axis");
            at = rlx_realloc(at, sizeof(Attr) * (size_t)(nat + 1), sizeof(Attr) * (size_t)(nat + 3));
            if (!ax) {
                at[nat].a.name = "axis";
                at[nat].a.kind = RLX_A_INT;
                at[nat].a.i = 1;
                at[nat++].a.tensor = -1;
            }
            at[nat].a.name = "legacy_2d";
            at[nat].a.kind = RLX_A_INT;
            at[nat].a.i = 1;
            at[nat++].a.tensor = -1;
        }
        break;
    case RLX_OP_RESIZE: at = rewrite_resize(r, i, at, &nat, in, &nin); break;
    case RLX_OP_IDENTITY:
        if (is_dropout) {
            /* inference: Y = X; ratio and seed do not matter, training does */
            take(at, nat, "ratio");
            take(at, nat, "seed");
            take(at, nat, "is_test");
            if (nin > 2 && in[2] >= 0) {
                const RlxValue *tm = &g->v[in[2]];
                if (!rlx_is_const(g, in[2]) || rlx_value_numel(tm) != 1 || rlx_weight_i64(tm, 0) != 0)
                    node_err(r, i, "training_mode is not supported (only inference: training_mode absent or false)");
            }
            if (nin > 1) nin = 1;
        }
        break;
    default: at = rewrite_norm(r, i, op, at, &nat, in, &nin); break;
    }
    import_shape_family(r, i, op, at, nat, in, &nin);
    import_signal_family(r, i, op, at, nat);
    at = rewrite_vision(r, i, op, at, &nat);
    while (nin > 0 && in[nin - 1] < 0) nin--;
    if (op == RLX_OP_IF || op == RLX_OP_LOOP || op == RLX_OP_SCAN)
        at = import_control_flow(r, i, op, at, &nat, &in, &nin);

    const RlxOpInfo *info = &rlx_ops[op];
    int nout = r->node_nout[i];
    if (nin < info->min_in || (info->max_in >= 0 && nin > info->max_in))
        node_err(r, i, rlx_fmt("takes %s, got %d", arity_text(info->min_in, info->max_in, "input"), nin));
    if (nout < info->min_out || (info->max_out >= 0 && nout > info->max_out))
        node_err(r, i, rlx_fmt("takes %s, got %d", arity_text(info->min_out, info->max_out, "output"), nout));
    for (int k = 0; k < info->min_in; k++)
        if (in[k] < 0) node_err(r, i, rlx_fmt("input %d is required and must not be empty", k));
    int id = rlx_node_add(g, nn, (RlxOp)op, nin, in, nout, r->node_out[i]);
    RLX_ASSERT(id == i);
    for (int k = 0; k < nat; k++) {
        if (at[k].taken) continue;
        RlxAttr *dst = rlx_attr_add(g, id, at[k].a.name, at[k].a.kind);
        *dst = at[k].a;
    }
    rlx_attr_check(g, id);
}

/* ---- outputs and the model name ---- */

static void read_outputs(Reader *r) {
    const Onnx__GraphProto *gp = r->gp;
    RlxGraph *g = r->g;
    size_t n = gp->n_output;
    if (n == 0) rlx_error("%s: the graph has no outputs", r->file);
    g->outputs = rlx_alloc(sizeof(int) * n);
    g->output_decl = rlx_alloc(sizeof(RlxDecl) * n);
    for (size_t i = 0; i < n; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        const char *name = str(vi->name);
        if (!*name) rlx_error("%s: graph output %d has no name", r->file, (int)i);
        check_name(r, name, rlx_fmt("output name '%s'", name));
        const char *what = rlx_fmt("output '%s'", name);
        const Onnx__TypeProto__Tensor *tt = tensor_type(r, vi, what);
        int v = rlx_value_find(g, name);
        if (v < 0) {
            check_not_dropped(r, name, "the graph's output list");
            rlx_error("%s: graph output '%s' is not defined (not a graph input, an initializer or a node output)",
                      r->file, name);
        }
        if (g->v[v].flags & RLX_V_OUTPUT) rlx_error("%s: graph output '%s' is listed twice", r->file, name);
        RlxDecl *d = &g->output_decl[g->noutputs];
        d->dtype = -1;
        d->rank = -1;
        if (tt && tt->has_elem_type && tt->elem_type != 0) d->dtype = tensor_dtype(r, tt->elem_type, what);
        /* a declared shape is checked after inference when every dim is known */
        if (tt && tt->shape && tt->shape->n_dim <= RLX_MAX_RANK) {
            int known = 1;
            for (size_t k = 0; k < tt->shape->n_dim; k++) {
                const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[k];
                if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0) {
                    d->dims[k] = dim->dim_value;
                } else if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                           find_dim(r, str(dim->dim_param)) >= 0) {
                    int b = find_dim(r, dim->dim_param);
                    d->dims[k] = r->dim_values[b];
                    r->dim_used[b] = 1;
                } else {
                    known = 0;
                }
            }
            if (known) d->rank = (int)tt->shape->n_dim;
        }
        g->v[v].flags |= RLX_V_OUTPUT;
        g->outputs[g->noutputs++] = v;
    }
}

/* The graph's name as a C identifier (the driver's -n overrides it). */
static const char *model_name(const char *graph_name) {
    char *s = rlx_strdup(graph_name);
    for (char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) *p = '_';
    if (!*s) return "model";
    if (*s >= '0' && *s <= '9') return rlx_fmt("m_%s", s);
    return s;
}

static void build_graph(Reader *r, const Onnx__ModelProto *m) {
    if (!m->graph) rlx_error("%s: not a valid ONNX model (it has no graph)", r->file);
    r->gp = m->graph;
    r->opset = read_opset(r, m);
    const Onnx__GraphProto *gp = r->gp;
    RlxGraph *g = r->g;
    g->name = model_name(str(gp->name));
    for (size_t i = 0; i < gp->n_value_info; i++)
        tensor_type(r, gp->value_info[i], rlx_fmt("value '%s'", str(gp->value_info[i]->name)));
    rlx_check_node_count(r->file, (int64_t)gp->n_node, "the graph has");
    int n = (int)gp->n_node;
    name_nodes(r);
    check_ops(r);
    check_op_versions(r);
    read_initializers(r);
    read_inputs(r);
    r->node_nout = rlx_alloc(sizeof(int) * (size_t)(n + 1));
    r->node_out = rlx_alloc(sizeof(int *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) add_outputs(r, i);
    for (int i = 0; i < n; i++) name_skipped_outputs(r, i);
    for (int i = 0; i < n; i++) build_node(r, i);
    add_later_nodes(r);
    read_outputs(r);
    for (int i = 0; i < r->ndims; i++)
        if (!r->dim_used[i])
            rlx_error("%s: --dim %s: the model has no symbolic dimension of that name", r->file, r->dim_names[i]);
}

RlxGraph *rlx_read_onnx(const char *path, int ndims, const char *const *dim_names, const int64_t *dim_values) {
    size_t len;
    const uint8_t *buf = rlx_read_file(path, &len);
    return rlx_read_onnx_buffer(path, buf, len, ndims, dim_names, dim_values);
}

RlxGraph *rlx_read_onnx_buffer(const char *path, const uint8_t *buf, size_t len, int ndims,
                               const char *const *dim_names, const int64_t *dim_values) {
    if (len == 0) rlx_error("%s: empty file (not an ONNX model)", path);
    uint64_t unpacked = 0;
    int scan = scan_message(buf, buf + len, &onnx__model_proto__descriptor, 0, &unpacked);
    if (scan == SCAN_DEEP)
        rlx_error("%s: not a valid ONNX model (messages nested more than %d levels deep)", path, MAX_NESTING);
    /* held against the memory limit while the message lives (it is malloc'd) */
    int64_t held = scan == SCAN_OK ? (int64_t)(unpacked < (uint64_t)INT64_MAX ? unpacked : INT64_MAX) : 0;
    rlx_memory_reserve(held);
    Onnx__ModelProto *m = scan == SCAN_OK ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
    if (!m) {
        rlx_memory_reserve(-held);
        rlx_error("%s: not a valid ONNX model (protobuf parse failed)", path);
    }

    Reader r;
    memset(&r, 0, sizeof r);
    r.file = path;
    r.g = rlx_graph_new(path);
    r.ndims = ndims;
    r.dim_names = dim_names;
    r.dim_values = dim_values;
    r.dim_used = rlx_alloc((size_t)ndims + 1);

    /* Free the message on every error: catch, free, re-raise to the caller. */
    jmp_buf jb;
    jmp_buf *outer = rlx_diag.jmp;
    if (rlx_try(jb)) {
        char msg[sizeof rlx_diag.msg];
        rlx_diag.jmp = outer;
        onnx__model_proto__free_unpacked(m, NULL);
        rlx_memory_reserve(-held);
        memcpy(msg, rlx_diag.msg, sizeof msg);
        rlx_error("%s", msg);
    }
    build_graph(&r, m);
    rlx_diag.jmp = outer;
    onnx__model_proto__free_unpacked(m, NULL);
    rlx_memory_reserve(-held);
    return r.g;
}
