/* ext_signal.c - the signal op family: DFT, STFT, the window functions
 * (HannWindow, HammingWindow, BlackmanWindow) and MelWeightMatrix (ONNX
 * opset 17).
 *
 * Inference checks what ONNX requires and reads every input that decides a
 * shape as a constant scalar: DFT's dft_length, STFT's frame_step and
 * frame_length, a window's size, MelWeightMatrix's num_mel_bins and
 * dft_length (a graph input there gives the usual "must be a constant"
 * error, which names it). Values that only feed arithmetic (the signal, the
 * STFT window, the sample rate and band edges) stay run-time inputs.
 *
 * DFT sees its input as (outer, len, inner, 1 or 2) around the DFT axis and
 * STFT as (batch, len, 1 or 2); both lower to one kernel each (rk_signal.c)
 * that transforms a column at a time in kernel scratch (sized by the C
 * target's select). A window or a mel matrix has only constant shape
 * inputs, so once its size is known the node is usually constant-folded
 * through the same kernels.
 *
 * rlx_infer_signal and rlx_lower_signal return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include <string.h>

#include "passes.h"
#include "rk_signal.h"

/* A constant integer scalar (or one-element tensor) input. */
static int64_t const_scalar(const RlxGraph *g, int node, int k, const char *role) {
    rlx_want_const(g, node, k, role);
    const RlxValue *v = rlx_input(g, node, k);
    if (!rlx_dtype_is_int(v->dtype) || rlx_value_numel(v) != 1 || v->rank > 1)
        rlx_node_error(g, node, "input '%s' (value '%s') must be an integer scalar, not %s %s", role, v->name,
                       rlx_dtype_name(v->dtype), rlx_shape_str(v));
    return rlx_weight_i64(v, 0);
}

/* A run-time scalar input of the given dtype class. */
static void want_scalar(const RlxGraph *g, int node, int k, int cls, const char *role) {
    const RlxValue *v = rlx_input(g, node, k);
    rlx_want_dtype(g, node, k, cls);
    if (v->rank > 1 || rlx_value_numel(v) != 1)
        rlx_node_error(g, node, "input '%s' (value '%s') must be a scalar, not %s", role, v->name, rlx_shape_str(v));
}

static int64_t transform_length(const RlxGraph *g, int node, int64_t n, const char *what) {
    if (n < 1 || n > RK_DFT_MAX_N)
        rlx_node_error(g, node, "%s %lld is outside [1, %lld]", what, (long long)n, (long long)RK_DFT_MAX_N);
    return n;
}

/* The DFT axis of an input of rank r: [0, r-2], negative counts from the end. */
static int dft_axis(const RlxGraph *g, int node, int rank) {
    int64_t a = rlx_attr_i(&g->n[node], "axis", 1);
    if (a < 0) a += rank;
    if (a < 0 || a > rank - 2)
        rlx_node_error(g, node, "axis %lld is outside [%d, %d] for an input of rank %d",
                       (long long)rlx_attr_i(&g->n[node], "axis", 1), -rank, rank - 2, rank);
    return (int)a;
}

static int bool_attr(const RlxGraph *g, int node, const char *name, int dflt) {
    int64_t v = rlx_attr_i(&g->n[node], name, dflt);
    if (v != 0 && v != 1) rlx_node_error(g, node, "attribute '%s' must be 0 or 1, not %lld", name, (long long)v);
    return (int)v;
}

/* Input 0: [..., 1 or 2] of a float dtype; returns 1 if complex. */
static int want_signal(const RlxGraph *g, int node, int min_rank, int max_rank) {
    const RlxValue *x = rlx_input(g, node, 0);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    rlx_want_rank(g, node, 0, min_rank, max_rank);
    int64_t last = x->dims[x->rank - 1];
    if (last != 1 && last != 2)
        rlx_node_error(g, node, "input '%s' %s must end in a dimension of 1 (real) or 2 (complex), not %lld", x->name,
                       rlx_shape_str(x), (long long)last);
    return last == 2;
}

static void infer_dft(RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int complex_in = want_signal(g, node, 2, RLX_MAX_RANK);
    int axis = dft_axis(g, node, x->rank);
    int onesided = bool_attr(g, node, "onesided", 0);
    bool_attr(g, node, "inverse", 0);
    if (onesided && complex_in) rlx_node_error(g, node, "onesided needs a real input ([..., 1]), not a complex one");
    int64_t n = x->dims[axis];
    if (rlx_has_input(g, node, 1)) n = const_scalar(g, node, 1, "dft_length");
    transform_length(g, node, n, "dft_length");
    out->dtype = x->dtype;
    out->rank = x->rank;
    memcpy(out->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    out->dims[axis] = onesided ? n / 2 + 1 : n;
    out->dims[x->rank - 1] = 2;
}

/* STFT geometry: frame length, frame step and frame count. */
typedef struct {
    int64_t flen, step, frames, nbins;
} StftGeometry;

static StftGeometry stft_geometry(const RlxGraph *g, int node) {
    const RlxValue *x = rlx_input(g, node, 0);
    StftGeometry s;
    s.step = const_scalar(g, node, 1, "frame_step");
    if (s.step < 1) rlx_node_error(g, node, "frame_step must be >= 1, not %lld", (long long)s.step);
    s.flen = -1;
    if (rlx_has_input(g, node, 2)) {
        const RlxValue *w = rlx_input(g, node, 2);
        if (w->rank != 1) rlx_node_error(g, node, "window '%s' must be 1-D, not %s", w->name, rlx_shape_str(w));
        s.flen = w->dims[0];
    }
    if (rlx_has_input(g, node, 3)) {
        int64_t fl = const_scalar(g, node, 3, "frame_length");
        if (s.flen >= 0 && fl != s.flen)
            rlx_node_error(g, node, "frame_length %lld differs from the window's length %lld", (long long)fl,
                           (long long)s.flen);
        s.flen = fl;
    }
    if (s.flen < 0) rlx_node_error(g, node, "needs a window or a frame_length to know the frame length");
    transform_length(g, node, s.flen, "frame_length");
    int64_t len = x->dims[1];
    if (s.flen > len)
        rlx_node_error(g, node, "frame_length %lld is longer than the signal (%lld samples)", (long long)s.flen,
                       (long long)len);
    s.frames = (len - s.flen) / s.step + 1;
    s.nbins = rlx_attr_i(&g->n[node], "onesided", 1) ? s.flen / 2 + 1 : s.flen;
    return s;
}

static void infer_stft(RlxGraph *g, int node, RlxShape *out) {
    const RlxValue *x = rlx_input(g, node, 0);
    int complex_in = want_signal(g, node, 3, 3);
    int onesided = bool_attr(g, node, "onesided", 1);
    if (onesided && complex_in)
        rlx_node_error(g, node, "onesided needs a real signal ([batch, length, 1]), not a complex one");
    if (rlx_has_input(g, node, 2)) rlx_want_same_dtype(g, node, 0, 2);
    StftGeometry s = stft_geometry(g, node);
    out->dtype = x->dtype;
    out->rank = 4;
    out->dims[0] = x->dims[0];
    out->dims[1] = s.frames;
    out->dims[2] = s.nbins;
    out->dims[3] = 2;
}

static RlxDType output_datatype(const RlxGraph *g, int node) {
    RlxDType dt = (RlxDType)rlx_attr_i(&g->n[node], "output_datatype", RLX_F32);
    if (!rlx_dtype_is_float(dt) && !rlx_dtype_is_int(dt))
        rlx_node_error(g, node, "output_datatype %s is not a numeric type", rlx_dtype_name(dt));
    return dt;
}

static void infer_window(RlxGraph *g, int node, RlxShape *out) {
    int64_t size = const_scalar(g, node, 0, "size");
    bool_attr(g, node, "periodic", 1);
    if (size < 0) rlx_node_error(g, node, "size must be >= 0, not %lld", (long long)size);
    out->dtype = output_datatype(g, node);
    out->rank = 1;
    out->dims[0] = size;
}

static void infer_mel(RlxGraph *g, int node, RlxShape *out) {
    int64_t mels = const_scalar(g, node, 0, "num_mel_bins");
    int64_t dft_length = const_scalar(g, node, 1, "dft_length");
    if (mels < 0) rlx_node_error(g, node, "num_mel_bins must be >= 0, not %lld", (long long)mels);
    if (dft_length < 1) rlx_node_error(g, node, "dft_length must be >= 1, not %lld", (long long)dft_length);
    want_scalar(g, node, 2, T_INDEX, "sample_rate");
    want_scalar(g, node, 3, T_FLOAT, "lower_edge_hertz");
    want_scalar(g, node, 4, T_FLOAT, "upper_edge_hertz");
    rlx_want_same_dtype(g, node, 3, 4);
    out->dtype = output_datatype(g, node);
    out->rank = 2;
    out->dims[0] = dft_length / 2 + 1;
    out->dims[1] = mels;
}

int rlx_infer_signal(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_DFT: infer_dft(g, node, outs); return 1;
    case RLX_OP_STFT: infer_stft(g, node, outs); return 1;
    case RLX_OP_HANNWINDOW: case RLX_OP_HAMMINGWINDOW: case RLX_OP_BLACKMANWINDOW: infer_window(g, node, outs); return 1;
    case RLX_OP_MELWEIGHTMATRIX: infer_mel(g, node, outs); return 1;
    default: return 0;
    }
}

static void lower_dft(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]], *y = &L->g->v[n->out[0]];
    int axis = dft_axis(L->g, node, x->rank);
    int64_t len = x->dims[axis];
    int64_t dft_n = rlx_has_input(L->g, node, 1) ? rlx_weight_i64(&L->g->v[n->in[1]], 0) : len;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_dft, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "outer", rlx_prod(x->dims, 0, axis));
    rlx_tk_i(t, "len", len);
    rlx_tk_i(t, "inner", rlx_prod(x->dims, axis + 1, x->rank - 1));
    rlx_tk_i(t, "complex_in", x->dims[x->rank - 1] == 2);
    rlx_tk_i(t, "n", dft_n);
    rlx_tk_i(t, "nout", y->dims[axis]);
    rlx_tk_i(t, "inverse", rlx_attr_i(n, "inverse", 0));
}

static void lower_stft(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]];
    StftGeometry s = stft_geometry(L->g, node);
    int has_window = rlx_has_input(L->g, node, 2);
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_stft, node);
    rlx_tk_in(L, t, n->in[0]);
    rlx_tk_in(L, t, has_window ? n->in[2] : -1);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "dtype", x->dtype);
    rlx_tk_i(t, "batch", x->dims[0]);
    rlx_tk_i(t, "len", x->dims[1]);
    rlx_tk_i(t, "complex_in", x->dims[2] == 2);
    rlx_tk_i(t, "frames", s.frames);
    rlx_tk_i(t, "step", s.step);
    rlx_tk_i(t, "flen", s.flen);
    rlx_tk_i(t, "nbins", s.nbins);
    rlx_tk_i(t, "has_window", has_window);
}

static void lower_window(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *y = &L->g->v[n->out[0]];
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_window, node);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "kind", n->op == RLX_OP_HANNWINDOW ? 0 : n->op == RLX_OP_HAMMINGWINDOW ? 1 : 2);
    rlx_tk_i(t, "size", y->dims[0]);
    rlx_tk_i(t, "periodic", rlx_attr_i(n, "periodic", 1));
    rlx_tk_i(t, "dtype", y->dtype);
}

static void lower_mel(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxGraph *g = L->g;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_mel_weight_matrix, node);
    for (int k = 2; k < 5; k++) rlx_tk_in(L, t, n->in[k]);
    rlx_tk_out(L, t, n->out[0]);
    rlx_tk_i(t, "num_mel_bins", rlx_weight_i64(&g->v[n->in[0]], 0));
    rlx_tk_i(t, "dft_length", rlx_weight_i64(&g->v[n->in[1]], 0));
    rlx_tk_i(t, "sr_dtype", g->v[n->in[2]].dtype);
    rlx_tk_i(t, "edge_dtype", g->v[n->in[3]].dtype);
    rlx_tk_i(t, "dtype", g->v[n->out[0]].dtype);
}

int rlx_lower_signal(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    switch (n->op) {
    case RLX_OP_DFT: case RLX_OP_STFT: case RLX_OP_HANNWINDOW: case RLX_OP_HAMMINGWINDOW:
    case RLX_OP_BLACKMANWINDOW: case RLX_OP_MELWEIGHTMATRIX:
        break;
    default: return 0;
    }
    if (!rlx_value_numel(&L->g->v[n->out[0]])) return 1;   /* nothing to compute */
    switch (n->op) {
    case RLX_OP_DFT: lower_dft(L, node); break;
    case RLX_OP_STFT: lower_stft(L, node); break;
    case RLX_OP_MELWEIGHTMATRIX: lower_mel(L, node); break;
    default: lower_window(L, node); break;
    }
    return 1;
}
