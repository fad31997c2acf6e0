/* lower.c - graph to the neutral thunk list.  require: inferred, legalized, scheduled, planned
 *
 * Walks g->order and turns each live node into thunks: a computation of
 * runtime_min/rk_kernels.def with its parameters filled by field name, or
 * an elementwise region (RLX_K_ELTWISE) given by its step list. Every
 * operand becomes a slot: arena or weights space plus a byte offset from
 * the plan. After this pass, backends see no graph semantics: dims, strides
 * and attributes are resolved constants.
 *
 * The list is neutral: it says what to compute, never how a CPU does it.
 * The params that are the C target's choices (conv2d_f32's method, a_packed,
 * nblk; matmul's and gemm's b_packed; second implementations; per-thread
 * scratch) stay 0 here, for the C target's select (lib/codegen_c/select_c.c)
 * to fill. Nodes that a target's prepare made for itself (the C target's
 * Winograd and fused pointwise+depthwise convolutions) are lowered by that
 * target's own hook, asked first (target.h).
 */
#include <math.h>
#include <string.h>

#include "rlx.h"
#include "passes.h"
#include "target.h"

/* ---- thunk construction ---- */

RlxThunk *rlx_thunk_new(RlxThunkList *tl, RlxKernelKind kind, int node) {
    if (tl->n == tl->cap) {
        int cap = tl->cap ? tl->cap * 2 : 64;
        tl->t = rlx_realloc(tl->t, sizeof(RlxThunk) * (size_t)tl->cap, sizeof(RlxThunk) * (size_t)cap);
        tl->cap = cap;
    }
    RlxThunk *t = &tl->t[tl->n++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->node = node;
    if (kind != RLX_K_ELTWISE) {
        /* count the 8-byte slots of the params struct */
        for (const char *f = rlx_kernels[kind].fields; *f; f++)
            if (*f == ':') t->np += f[-1] == 'a' ? RK_MAX_RANK : 1;
        RLX_ASSERT(t->np <= (int)(sizeof t->p / sizeof t->p[0]));
    }
    return t;
}

/* Index of a named field in the params struct, and its kind letter. */
static int field_slot(const RlxThunk *t, const char *name, char *kind) {
    int slot = 0;
    const char *f = rlx_kernels[t->kind].fields;
    size_t len = strlen(name);
    while (*f) {
        char k = f[0];
        const char *nm = f + 2;
        size_t nl = strcspn(nm, " ");
        if (nl == len && !strncmp(nm, name, len)) {
            *kind = k;
            return slot;
        }
        slot += k == 'a' ? RK_MAX_RANK : 1;
        f = nm + nl;
        while (*f == ' ') f++;
    }
    RLX_ASSERT(!"no such kernel parameter");
    return -1;
}

void rlx_tk_i(RlxThunk *t, const char *name, int64_t v) {
    char k;
    int s = field_slot(t, name, &k);
    RLX_ASSERT(k == 'i');
    t->p[s].i = v;
}

int64_t rlx_tk_get_i(const RlxThunk *t, const char *name) {
    char k;
    int s = field_slot(t, name, &k);
    RLX_ASSERT(k == 'i');
    return t->p[s].i;
}

double rlx_tk_get_f(const RlxThunk *t, const char *name) {
    char k;
    int s = field_slot(t, name, &k);
    RLX_ASSERT(k == 'f');
    return t->p[s].f;
}

void rlx_tk_get_a(const RlxThunk *t, const char *name, int64_t *out) {
    char k;
    int s = field_slot(t, name, &k);
    RLX_ASSERT(k == 'a');
    for (int i = 0; i < RK_MAX_RANK; i++) out[i] = t->p[s + i].i;
}

void rlx_tk_f(RlxThunk *t, const char *name, double v) {
    char k;
    int s = field_slot(t, name, &k);
    RLX_ASSERT(k == 'f');
    t->p[s].f = v;
}

void rlx_tk_a(RlxThunk *t, const char *name, const int64_t *v, int n) {
    char k;
    int s = field_slot(t, name, &k);
    RLX_ASSERT(k == 'a' && n <= RK_MAX_RANK);
    for (int i = 0; i < n; i++) t->p[s + i].i = v[i];
}


RlxSlot rlx_slot_of(const RlxLower *L, int v) {
    RlxSlot s = {v, RLX_SPACE_ARENA, 0};
    if (v < 0) return s;
    if (L->g->v[v].flags & RLX_V_WEIGHT) {
        s.space = RLX_SPACE_WEIGHTS;
        s.off = L->plan->woff[v];
    } else {
        s.off = L->plan->off[v];
    }
    RLX_ASSERT(s.off >= 0);
    return s;
}

void rlx_tk_in(const RlxLower *L, RlxThunk *t, int v) {   /* v may be -1 */
    RLX_ASSERT(t->nin < (int)(sizeof t->in / sizeof t->in[0]));
    t->in[t->nin++] = rlx_slot_of(L, v);
}

void rlx_tk_out(const RlxLower *L, RlxThunk *t, int v) {
    RLX_ASSERT(t->nout < (int)(sizeof t->out / sizeof t->out[0]));
    t->out[t->nout++] = rlx_slot_of(L, v);
}

static const RlxValue *val(const RlxLower *L, int v) { return &L->g->v[v]; }

int64_t rlx_prod(const int64_t *d, int from, int to) {
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= d[i];
    return p;
}

int rlx_value_used(const RlxGraph *g, int v) {
    if (g->v[v].flags & RLX_V_OUTPUT) return 1;
    for (int i = 0; i < g->nn; i++) {
        if (g->n[i].dead) continue;
        for (int j = 0; j < g->n[i].nin; j++)
            if (g->n[i].in[j] == v) return 1;
    }
    return 0;
}

/* ---- elementwise ---- */

static void lower_eltwise(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_ELTWISE, node);
    t->nsteps = rlx_region_from_node(L->g, node, &t->steps);
    for (int i = 0; i < n->nin; i++) t->in[t->nin++] = rlx_slot_of(L, n->in[i]);
    rlx_tk_out(L, t, n->out[0]);
}

/* ---- kernels ---- */

static void lower_copy(RlxLower *L, int node, int from, int to) {
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_copy, node);
    rlx_tk_in(L, t, from);
    rlx_tk_out(L, t, to);
    rlx_tk_i(t, "nbytes", rlx_value_bytes(val(L, to)));
}

/* The fused residual (input 3) and activation of MatMul and Gemm (fuse.c). */
static void set_epilogue(RlxLower *L, RlxThunk *t, int node) {
    const RlxNode *n = &L->g->n[node];
    if (n->nin > 3 && n->in[3] >= 0) {
        rlx_tk_in(L, t, n->in[3]);
        rlx_tk_i(t, "has_res", 1);
    }
    rlx_tk_i(t, "act", rlx_attr_i(n, "rlx_act", 0));
    rlx_tk_f(t, "act_a", rlx_attr_f(n, "rlx_act_a", 0));
    rlx_tk_f(t, "act_b", rlx_attr_f(n, "rlx_act_b", 0));
}

/* The storage dtypes of a convolution's or GEMM's operands (rk_kernels.def:
 * a_dtype / x_dtype, b_dtype / w_dtype, y_dtype, r_dtype), and the int8
 * weights' scales, the node's input 4 (precision.c), as the last input. */
static void set_dtypes(RlxLower *L, RlxThunk *t, int node, const char *a, const char *b) {
    const RlxNode *n = &L->g->n[node];
    rlx_tk_i(t, a, val(L, n->in[0])->dtype);
    rlx_tk_i(t, b, val(L, n->in[1])->dtype);
    rlx_tk_i(t, "y_dtype", val(L, n->out[0])->dtype);
    rlx_tk_i(t, "r_dtype", n->nin > 3 && n->in[3] >= 0 ? val(L, n->in[3])->dtype : RLX_F32);
    if (n->nin > 4 && n->in[4] >= 0) rlx_tk_in(L, t, n->in[4]);
}

/* An operand as the product sees it: with its last two axes swapped when
 * the pattern pass folded a Transpose into the MatMul (rlx_trans_*). */
static RlxValue operand_view(const RlxValue *v, int trans) {
    RlxValue x = *v;
    if (trans && x.rank >= 2) {
        x.dims[x.rank - 2] = v->dims[v->rank - 1];
        x.dims[x.rank - 1] = v->dims[v->rank - 2];
    }
    return x;
}

static void lower_matmul(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    int trans_a = rlx_attr_i(n, "rlx_trans_a", 0) != 0, trans_b = rlx_attr_i(n, "rlx_trans_b", 0) != 0;
    RlxValue av = operand_view(val(L, n->in[0]), trans_a), bv = operand_view(val(L, n->in[1]), trans_b);
    const RlxValue *a = &av, *b = &bv, *y = val(L, n->out[0]);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_matmul_f32, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    if (n->nin > 2 && n->in[2] >= 0) {
        rlx_tk_in(L, t, n->in[2]);
        rlx_tk_i(t, "has_bias", 1);
    }
    set_epilogue(L, t, node);
    set_dtypes(L, t, node, "a_dtype", "b_dtype");
    rlx_tk_out(L, t, n->out[0]);
    int packed = rlx_attr_i(n, "rlx_b_packed", 0) != 0;
    int64_t k = a->dims[a->rank - 1];
    int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    /* a packed B (prepack.c) was a 2-D [k, n] weight: n is the output's last dim */
    int64_t nn = packed ? y->dims[y->rank - 1] : b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    int brank2 = packed || b->rank >= 2;
    rlx_tk_i(t, "trans_a", trans_a);
    rlx_tk_i(t, "trans_b", trans_b && !packed);
    rlx_tk_i(t, "m", m);
    rlx_tk_i(t, "n", nn);
    rlx_tk_i(t, "k", k);
    /* batch dims of the output; each operand's batch dims right-aligned */
    int ybatch = y->rank - (a->rank >= 2) - brank2;
    int abatch = a->rank > 2 ? a->rank - 2 : 0, bbatch = !packed && b->rank > 2 ? b->rank - 2 : 0;
    int64_t bdims[RLX_MAX_RANK] = {0}, as[RLX_MAX_RANK] = {0}, bs[RLX_MAX_RANK] = {0};
    int64_t astr = m * k, bstr = k * nn;
    for (int i = ybatch - 1; i >= 0; i--) {
        bdims[i] = y->dims[i];
        int ai = i - (ybatch - abatch), bi = i - (ybatch - bbatch);
        if (ai >= 0) {
            as[i] = a->dims[ai] == 1 ? 0 : astr;
            astr *= a->dims[ai];
        }
        if (bi >= 0) {
            bs[i] = b->dims[bi] == 1 ? 0 : bstr;
            bstr *= b->dims[bi];
        }
    }
    /* A batch of A's against one B (a linear layer on [batch, rows, k]) is
     * one GEMM with batch*rows rows: A, the output and a residual are
     * contiguous in that order. */
    int fold = !trans_a && ybatch > 0 && abatch == ybatch;
    int64_t rows = m;
    for (int i = 0; fold && i < ybatch; i++) {
        if (bs[i] != 0 || a->dims[i] != y->dims[i]) fold = 0;
        rows *= y->dims[i];
    }
    if (fold) {
        rlx_tk_i(t, "m", rows);
        ybatch = 0;
    }
    rlx_tk_i(t, "brank", ybatch);
    rlx_tk_a(t, "bdims", bdims, ybatch);
    rlx_tk_a(t, "astride", as, ybatch);
    rlx_tk_a(t, "bstride", bs, ybatch);
}

static void lower_gemm(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *a = val(L, n->in[0]), *y = val(L, n->out[0]);
    int ta = (int)rlx_attr_i(n, "transA", 0), tb = (int)rlx_attr_i(n, "transB", 0);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_gemm_f32, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    int has_c = n->nin > 2 && n->in[2] >= 0;
    if (has_c) rlx_tk_in(L, t, n->in[2]);
    set_epilogue(L, t, node);
    set_dtypes(L, t, node, "a_dtype", "b_dtype");
    rlx_tk_out(L, t, n->out[0]);
    int64_t m = y->dims[0], nn = y->dims[1], k = ta ? a->dims[0] : a->dims[1];
    rlx_tk_i(t, "m", m);
    rlx_tk_i(t, "n", nn);
    rlx_tk_i(t, "k", k);
    rlx_tk_i(t, "trans_a", ta);
    rlx_tk_i(t, "trans_b", tb);
    rlx_tk_f(t, "alpha", rlx_attr_f(n, "alpha", 1.0));
    rlx_tk_f(t, "beta", rlx_attr_f(n, "beta", 1.0));
    rlx_tk_i(t, "has_c", has_c);
    if (has_c) {
        const RlxValue *c = val(L, n->in[2]);
        int64_t c0 = c->rank >= 2 ? c->dims[c->rank - 2] : 1;
        int64_t c1 = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
        rlx_tk_i(t, "c_cs", c1 == 1 ? 0 : 1);
        rlx_tk_i(t, "c_rs", c0 == 1 ? 0 : c1);
    }
}

/* 1-D and 2-D run on conv2d_f32 (1-D as a 1-row image), 3-D on conv_nd_f32. */
static void lower_conv(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    RlxWindow w;
    rlx_conv_geometry(L->g, node, &w);
    int has_bias = n->nin > 2 && n->in[2] >= 0;
    if (!rlx_value_numel(y)) return;
    RlxThunk *t = rlx_thunk_new(L->tl, w.nsp <= 2 ? RLX_K_conv2d_f32 : RLX_K_conv_nd_f32, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    if (has_bias) rlx_tk_in(L, t, n->in[2]);
    rlx_tk_i(t, "n", x->dims[0]);
    rlx_tk_i(t, "c", x->dims[1]);
    rlx_tk_i(t, "oc", y->dims[1]);
    rlx_tk_i(t, "group", rlx_attr_i(n, "group", 1));
    rlx_tk_i(t, "has_bias", has_bias);
    if (w.nsp == 3) {
        rlx_tk_out(L, t, n->out[0]);
        rlx_tk_a(t, "in_dims", x->dims + 2, 3);
        rlx_tk_a(t, "out_dims", y->dims + 2, 3);
        rlx_tk_a(t, "k", w.k, 3);
        rlx_tk_a(t, "s", w.s, 3);
        rlx_tk_a(t, "d", w.d, 3);
        rlx_tk_a(t, "pb", w.pad_begin, 3);
        return;
    }
    /* the fused epilogue (fuse.c): residual input 3, activation */
    if (n->nin > 3 && n->in[3] >= 0) {
        rlx_tk_in(L, t, n->in[3]);
        rlx_tk_i(t, "has_res", 1);
    }
    set_dtypes(L, t, node, "x_dtype", "w_dtype");
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "act", rlx_attr_i(n, "rlx_act", 0));
    rlx_tk_f(t, "act_a", rlx_attr_f(n, "rlx_act_a", 0));
    rlx_tk_f(t, "act_b", rlx_attr_f(n, "rlx_act_b", 0));
    int r = 2 - w.nsp;   /* 1-D: a leading row axis of size 1 */
    rlx_tk_i(t, "h", r ? 1 : x->dims[2]);
    rlx_tk_i(t, "w", x->dims[x->rank - 1]);
    rlx_tk_i(t, "oh", r ? 1 : y->dims[2]);
    rlx_tk_i(t, "ow", y->dims[y->rank - 1]);
    rlx_tk_i(t, "kh", r ? 1 : w.k[0]);
    rlx_tk_i(t, "kw", w.k[w.nsp - 1]);
    rlx_tk_i(t, "sh", r ? 1 : w.s[0]);
    rlx_tk_i(t, "sw", w.s[w.nsp - 1]);
    rlx_tk_i(t, "dh", r ? 1 : w.d[0]);
    rlx_tk_i(t, "dw", w.d[w.nsp - 1]);
    rlx_tk_i(t, "pt", r ? 0 : w.pad_begin[0]);
    rlx_tk_i(t, "pl", w.pad_begin[w.nsp - 1]);
}

static void lower_transpose(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]);
    int64_t perm[RLX_MAX_RANK];
    const RlxAttr *pa = rlx_attr_get(n, "perm");
    for (int i = 0; i < x->rank; i++) perm[i] = pa ? pa->ints[i] : x->rank - 1 - i;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_transpose, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "rank", x->rank);
    rlx_tk_a(t, "dims", x->dims, x->rank);
    rlx_tk_a(t, "perm", perm, x->rank);
}

/* Concat and Split are row copies: `outer` rows, each a contiguous run. */
static void lower_concat(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *y = val(L, n->out[0]);
    int axis = rlx_norm_axis(L->g, node, rlx_attr_i(n, "axis", 0), y->rank);
    int64_t es = rlx_dtype_size(y->dtype), inner = rlx_prod(y->dims, axis + 1, y->rank) * es;
    int64_t outer = rlx_prod(y->dims, 0, axis), at = 0;
    for (int i = 0; i < n->nin; i++) {
        const RlxValue *x = val(L, n->in[i]);
        int64_t row = x->dims[axis] * inner;
        /* made in its place in the output (plan.c): nothing to copy */
        int in_place = outer == 1 && L->plan && L->plan->off[n->in[i]] >= 0 &&
                       L->plan->off[n->in[i]] == L->plan->off[n->out[0]] + at;
        if (row && outer && !in_place) {
            RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_strided_copy, node);
            rlx_tk_in(L, t, n->in[i]);
            rlx_tk_out(L, t, n->out[0]);
            rlx_tk_i(t, "rows", outer);
            rlx_tk_i(t, "row_bytes", row);
            rlx_tk_i(t, "src_stride", row);
            rlx_tk_i(t, "dst_stride", y->dims[axis] * inner);
            rlx_tk_i(t, "dst_off", at);
        }
        at += row;
    }
}

static void lower_split(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]);
    int axis = rlx_norm_axis(L->g, node, rlx_attr_i(n, "axis", 0), x->rank);
    int64_t es = rlx_dtype_size(x->dtype), inner = rlx_prod(x->dims, axis + 1, x->rank) * es;
    int64_t outer = rlx_prod(x->dims, 0, axis), at = 0;
    for (int i = 0; i < n->nout; i++) {
        const RlxValue *y = val(L, n->out[i]);
        int64_t row = y->dims[axis] * inner;
        if (row && outer) {
            RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_strided_copy, node);
            rlx_tk_in(L, t, n->in[0]);
            rlx_tk_out(L, t, n->out[i]);
            rlx_tk_i(t, "rows", outer);
            rlx_tk_i(t, "row_bytes", row);
            rlx_tk_i(t, "src_stride", x->dims[axis] * inner);
            rlx_tk_i(t, "dst_stride", row);
            rlx_tk_i(t, "src_off", at);
        }
        at += row;
    }
}

static void lower_slice(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]);
    int64_t starts[RLX_MAX_RANK], steps[RLX_MAX_RANK], od[RLX_MAX_RANK];
    rlx_slice_params(L->g, node, starts, steps, od);
    if (!rlx_value_numel(y)) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_slice, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "rank", x->rank);
    rlx_tk_a(t, "in_dims", x->dims, x->rank);
    rlx_tk_a(t, "out_dims", y->dims, y->rank);
    rlx_tk_a(t, "starts", starts, x->rank);
    rlx_tk_a(t, "steps", steps, x->rank);
}

static void lower_gather(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *idx = val(L, n->in[1]), *y = val(L, n->out[0]);
    int axis = rlx_norm_axis(L->g, node, rlx_attr_i(n, "axis", 0), x->rank);
    if (!rlx_value_numel(y)) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_gather, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, n->in[1]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "outer", rlx_prod(x->dims, 0, axis));
    rlx_tk_i(t, "axis_len", x->dims[axis]);
    rlx_tk_i(t, "inner", rlx_prod(x->dims, axis + 1, x->rank));
    rlx_tk_i(t, "nidx", rlx_value_numel(idx));
    rlx_tk_i(t, "idx_dtype", idx->dtype);
}

/* The pad value's bytes in the element type, from the optional constant
 * input (ONNX: default 0). */
static int64_t pad_value_bits(const RlxLower *L, int node, RlxDType dt) {
    const RlxNode *n = &L->g->n[node];
    int64_t bits = 0;
    if (n->nin < 3 || n->in[2] < 0) return 0;
    if (!rlx_is_const(L->g, n->in[2])) rlx_node_error(L->g, node, "constant_value must be a constant (weight)");
    const RlxValue *cv = val(L, n->in[2]);
    if (rlx_value_numel(cv) < 1) return 0;
    union { float f; double d; int64_t i; uint64_t u; int32_t i32; int16_t i16; int8_t i8; uint16_t h; } u;
    memset(&u, 0, sizeof u);
    switch (dt) {
    case RLX_F32: u.f = (float)rlx_weight_f64(cv, 0); break;
    case RLX_F64: u.d = rlx_weight_f64(cv, 0); break;
    case RLX_F16: u.h = rlx_f32_to_f16((float)rlx_weight_f64(cv, 0)); break;
    case RLX_BF16: u.h = rlx_f32_to_bf16((float)rlx_weight_f64(cv, 0)); break;
    default: u.i = rlx_weight_i64(cv, 0); break;   /* little-endian: low bytes */
    }
    memcpy(&bits, &u, sizeof bits);
    return bits;
}

static void lower_pad(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]), *y = val(L, n->out[0]), *pv = val(L, n->in[1]);
    int r = x->rank;
    int64_t begin[RLX_MAX_RANK] = {0};
    int axes[RLX_MAX_RANK];
    int naxes = r;
    for (int i = 0; i < r; i++) axes[i] = i;
    if (n->nin > 3 && n->in[3] >= 0) {
        const RlxValue *av = val(L, n->in[3]);
        naxes = (int)rlx_value_numel(av);
        for (int i = 0; i < naxes; i++) axes[i] = rlx_norm_axis(L->g, node, rlx_weight_i64(av, i), r);
    }
    RLX_ASSERT(rlx_value_numel(pv) == 2 * naxes);
    for (int i = 0; i < naxes; i++) begin[axes[i]] = rlx_weight_i64(pv, i);
    const char *mode = rlx_attr_s(n, "mode", "constant");
    int m = !strcmp(mode, "constant") ? 0 : !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : -1;
    if (m < 0) rlx_node_error(L->g, node, "pad mode '%s' not supported", mode);
    if (!rlx_value_numel(y)) return;
    if (m != 0 && !rlx_value_numel(x)) rlx_node_error(L->g, node, "cannot %s-pad an empty tensor", mode);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_pad, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "esize", rlx_dtype_size(x->dtype));
    rlx_tk_i(t, "rank", r);
    rlx_tk_i(t, "mode", m);
    rlx_tk_a(t, "in_dims", x->dims, r);
    rlx_tk_a(t, "out_dims", y->dims, r);
    rlx_tk_a(t, "pads_begin", begin, r);
    rlx_tk_i(t, "value_bits", pad_value_bits(L, node, x->dtype));
}

static void lower_reduce(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = val(L, n->in[0]);
    int mask[RLX_MAX_RANK] = {0};
    if (!rlx_reduce_axes(L->g, node, x->rank, mask)) {
        lower_copy(L, node, n->in[0], n->out[0]);
        return;
    }
    /* the op numbers of rk_reduce (rk_kernels.def) */
    static const struct { RlxOp op; int code; } codes[] = {
        {RLX_OP_REDUCESUM, 0}, {RLX_OP_REDUCEMEAN, 1}, {RLX_OP_REDUCEMAX, 2}, {RLX_OP_REDUCEMIN, 3},
        {RLX_OP_REDUCEPROD, 4}, {RLX_OP_REDUCEL1, 5}, {RLX_OP_REDUCEL2, 6}, {RLX_OP_REDUCELOGSUM, 7},
        {RLX_OP_REDUCELOGSUMEXP, 8}, {RLX_OP_REDUCESUMSQUARE, 9}};
    int op = -1;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].op == n->op) op = codes[i].code;
    RLX_ASSERT(op >= 0);
    if (!rlx_value_numel(val(L, n->out[0]))) return;
    if (!rlx_value_numel(x) && (op == 2 || op == 3))
        rlx_node_error(L->g, node, "reduction of an empty tensor has no identity");
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_reduce, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    int64_t m64[RLX_MAX_RANK];
    for (int i = 0; i < x->rank; i++) m64[i] = mask[i];
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "op", op);
    rlx_tk_i(t, "rank", x->rank);
    rlx_tk_a(t, "dims", x->dims, x->rank);
    rlx_tk_a(t, "mask", m64, x->rank);
}

/* Kernels over (outer, axis_len, inner): softmax, argmax. */
static void set_axis_split(RlxThunk *t, const RlxValue *x, int axis) {
    rlx_tk_i(t, "outer", rlx_prod(x->dims, 0, axis));
    rlx_tk_i(t, "axis_len", x->dims[axis]);
    rlx_tk_i(t, "inner", rlx_prod(x->dims, axis + 1, x->rank));
}

static int same_bytes(const RlxLower *L, int a, int b) {
    RlxSlot sa = rlx_slot_of(L, a), sb = rlx_slot_of(L, b);
    return sa.space == sb.space && sa.off == sb.off;
}

static void lower_node(RlxLower *L, int node) {
    RlxGraph *g = L->g;
    const RlxNode *n = &g->n[node];
    const RlxValue *x = n->nin > 0 && n->in[0] >= 0 ? val(L, n->in[0]) : NULL;
    RlxThunk *t;
    if (rlx_ops[n->op].flags & RLX_OPF_ELT) {
        if (rlx_value_numel(val(L, n->out[0]))) lower_eltwise(L, node);
        return;
    }
    switch (n->op) {
    case RLX_OP_IDENTITY:
    case RLX_OP_RESHAPE:
    case RLX_OP_FLATTEN:
    case RLX_OP_SQUEEZE:
    case RLX_OP_UNSQUEEZE:
        /* a view: nothing to do when the plan gave it its input's bytes */
        if (rlx_value_bytes(val(L, n->out[0])) && !same_bytes(L, n->in[0], n->out[0]))
            lower_copy(L, node, n->in[0], n->out[0]);
        return;
    case RLX_OP_MATMUL: lower_matmul(L, node); return;
    case RLX_OP_GEMM: lower_gemm(L, node); return;
    case RLX_OP_CONV: lower_conv(L, node); return;
    case RLX_OP_BATCHNORM:
        t = rlx_thunk_new(L->tl, RLX_K_batchnorm_f32, node);
        for (int i = 0; i < 5; i++) rlx_tk_in(L, t, n->in[i]);
        rlx_tk_out(L, t, n->out[0]);
        rlx_tk_i(t, "n", x->dims[0]);
        rlx_tk_i(t, "c", x->rank > 1 ? x->dims[1] : 1);
        rlx_tk_i(t, "hw", rlx_prod(x->dims, 2, x->rank));
        rlx_tk_f(t, "eps", rlx_attr_f(n, "epsilon", 1e-5));
        rlx_tk_i(t, "act", rlx_attr_i(n, "rlx_act", 0));   /* fuse.c */
        rlx_tk_f(t, "act_a", rlx_attr_f(n, "rlx_act_a", 0));
        rlx_tk_f(t, "act_b", rlx_attr_f(n, "rlx_act_b", 0));
        return;
    case RLX_OP_LAYERNORM: {
        int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", -1), x->rank);
        int has_bias = n->nin > 2 && n->in[2] >= 0;
        int has_mean = n->nout > 1 && n->out[1] >= 0 && rlx_value_used(g, n->out[1]);
        int has_inv = n->nout > 2 && n->out[2] >= 0 && rlx_value_used(g, n->out[2]);
        if ((has_mean || has_inv) && val(L, n->out[has_mean ? 1 : 2])->dtype != RLX_F32)
            rlx_node_error(g, node, "the Mean and InvStdDev outputs are supported with stash_type 1 (f32) only");
        if (!rlx_value_numel(x)) return;
        t = rlx_thunk_new(L->tl, RLX_K_layernorm_f32, node);
        rlx_tk_in(L, t, n->in[0]);
        rlx_tk_in(L, t, n->in[1]);
        if (has_bias) rlx_tk_in(L, t, n->in[2]);
        rlx_tk_out(L, t, n->out[0]);
        if (has_mean) rlx_tk_out(L, t, n->out[1]);
        if (has_inv) rlx_tk_out(L, t, n->out[2]);
        rlx_tk_i(t, "outer", rlx_prod(x->dims, 0, axis));
        rlx_tk_i(t, "inner", rlx_prod(x->dims, axis, x->rank));
        rlx_tk_f(t, "eps", rlx_attr_f(n, "epsilon", 1e-5));
        rlx_tk_i(t, "has_bias", has_bias);
        rlx_tk_i(t, "has_mean", has_mean);
        rlx_tk_i(t, "has_inv_std", has_inv);
        rlx_tk_i(t, "dtype", x->dtype);
        rlx_tk_i(t, "w_dtype", val(L, n->in[1])->dtype);
        /* Scale and B broadcast (right-aligned) to the normalized dims x[axis:] */
        int nr = x->rank - axis;
        rlx_tk_i(t, "nrank", nr);
        rlx_tk_a(t, "ndims", x->dims + axis, nr);
        for (int k = 1; k <= 1 + has_bias; k++) {
            const RlxValue *p = val(L, n->in[k]);
            int64_t st[RLX_MAX_RANK] = {0}, step = 1;
            for (int i = p->rank - 1; i >= 0; i--) {
                st[nr - p->rank + i] = p->dims[i] == 1 ? 0 : step;
                step *= p->dims[i];
            }
            rlx_tk_a(t, k == 1 ? "scale_strides" : "bias_strides", st, nr);
        }
        return;
    }
    case RLX_OP_SOFTMAX:
    case RLX_OP_LOGSOFTMAX: {
        int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", -1), x->rank);
        if (!rlx_value_numel(x)) return;
        t = rlx_thunk_new(L->tl, RLX_K_softmax_f32, node);
        rlx_tk_in(L, t, n->in[0]);
        rlx_tk_out(L, t, n->out[0]);
        set_axis_split(t, x, axis);
        if (rlx_attr_i(n, "legacy_2d", 0)) {
            /* ONNX < 13: the input is coerced to 2-D at axis */
            rlx_tk_i(t, "outer", rlx_prod(x->dims, 0, axis));
            rlx_tk_i(t, "axis_len", rlx_prod(x->dims, axis, x->rank));
            rlx_tk_i(t, "inner", 1);
        }
        rlx_tk_i(t, "log", n->op == RLX_OP_LOGSOFTMAX);
        rlx_tk_i(t, "dtype", x->dtype);
        return;
    }
    case RLX_OP_ARGMAX:
    case RLX_OP_ARGMIN: {
        int axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", 0), x->rank);
        if (!rlx_value_numel(val(L, n->out[0]))) return;
        t = rlx_thunk_new(L->tl, RLX_K_argminmax, node);
        rlx_tk_in(L, t, n->in[0]);
        rlx_tk_out(L, t, n->out[0]);
        rlx_tk_i(t, "dtype", x->dtype);
        set_axis_split(t, x, axis);
        rlx_tk_i(t, "select_last", rlx_attr_i(n, "select_last_index", 0) != 0);
        rlx_tk_i(t, "is_min", n->op == RLX_OP_ARGMIN);
        return;
    }
    case RLX_OP_TRANSPOSE:
        if (rlx_value_numel(x)) lower_transpose(L, node);
        return;
    case RLX_OP_CONCAT: lower_concat(L, node); return;
    case RLX_OP_SPLIT: lower_split(L, node); return;
    case RLX_OP_SLICE: lower_slice(L, node); return;
    case RLX_OP_GATHER: lower_gather(L, node); return;
    case RLX_OP_PAD: lower_pad(L, node); return;
    case RLX_OP_REDUCEMEAN:
    case RLX_OP_REDUCESUM:
    case RLX_OP_REDUCEMAX:
    case RLX_OP_REDUCEMIN:
    case RLX_OP_REDUCEL1:
    case RLX_OP_REDUCEL2:
    case RLX_OP_REDUCELOGSUM:
    case RLX_OP_REDUCELOGSUMEXP:
    case RLX_OP_REDUCEPROD:
    case RLX_OP_REDUCESUMSQUARE: lower_reduce(L, node); return;
    default:
        if (!rlx_lower_ext(L, node)) rlx_node_error(g, node, "no lowering for this op (internal)");
    }
}

int64_t rlx_thunks_scratch(const RlxThunkList *tl) {
    int64_t most = 0;
    for (int i = 0; i < tl->n; i++)
        if (tl->t[i].scratch > most) most = tl->t[i].scratch;
    return (most + 63) & ~(int64_t)63;
}

void rlx_lower_node(RlxGraph *g, const RlxPlan *plan, RlxThunkList *tl, int node) {
    RlxLower L = {g, plan, tl};
    lower_node(&L, node);
}

RlxThunkList *rlx_lower(RlxGraph *g, const RlxPlan *plan, const RlxTarget *target) {
    RlxLower L = {g, plan, rlx_alloc(sizeof(RlxThunkList))};
    for (int i = 0; i < g->norder; i++)
        if (!target->lower || !target->lower(&L, g->order[i])) lower_node(&L, g->order[i]);
    /* Graph outputs that are weights are copied out of the weights space by
     * the run function; nothing to lower for them. */
    return L.tl;
}
