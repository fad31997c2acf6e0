/* ext_rnn.c - the rnn op family: RNN, GRU, LSTM (ONNX opset 7-14), Einsum.
 *
 * Recurrent ops. Inference checks every operand against ONNX's shapes
 * (W [dirs, G*H, I], R [dirs, G*H, H], B [dirs, 2*G*H], sequence_lens
 * [batch], initial_h/c and Y_h/Y_c [dirs, batch, H] or, with layout 1,
 * [batch, dirs, H], P [dirs, 3*H]; G = 1, 3, 4 gates), resolves the
 * activations (a comma-separated list: the ONNX importer joins the strings
 * attribute) and gives the node all its outputs: the kernel (rk_rnn.c)
 * keeps its state in Y, in Y_h (GRU scratch) and in Y_c (LSTM cell state),
 * so an output the model leaves out is created here as a real value, named
 * after the node, and the planner gives it a slot like any other.
 *
 * Activations: per direction, f (RNN), f g (GRU), f g h (LSTM); the list
 * gives them for one direction (used by both of a bidirectional node) or
 * for each. activation_alpha / activation_beta are consumed in list order
 * by the activations that take them (as onnxruntime does); the others use
 * their ONNX defaults (rk_rnn.h).
 *
 * Einsum: the equation is parsed into labels. Each letter is a label, and
 * each axis covered by '...' is one too (aligned from the right across
 * operands, size-1 axes broadcast). The kernel loops over the output labels
 * (in output order), then over the summed ones, so the plan is just each
 * label's size and every operand's stride per label (a label repeated in an
 * operand adds its axes' strides: a diagonal).
 *
 * rlx_infer_rnn and rlx_lower_rnn return 1 for the family's own ops and 0
 * for any other (see passes.h).
 */
#include <ctype.h>
#include <string.h>

#include "passes.h"
#include "rk_rnn.h"
#include "rlx_scalar.h"

/* ---- recurrent ops ---- */

typedef struct {
    int cell;            /* 0 RNN, 1 GRU, 2 LSTM */
    int gates, nacts, nout;
    int direction, dirs, layout;
    int64_t seq, batch, input, hidden;
    int64_t acts[6];
    double alpha[6], beta[6];
} Recur;

static const char *const act_names[RK_NACTS] = {
#define X(code, name, nargs, alpha, beta) name,
    RK_RNN_ACTS(X)
#undef X
};
static const int act_nargs[RK_NACTS] = {
#define X(code, name, nargs, alpha, beta) nargs,
    RK_RNN_ACTS(X)
#undef X
};
static const double act_alpha[RK_NACTS] = {
#define X(code, name, nargs, alpha, beta) alpha,
    RK_RNN_ACTS(X)
#undef X
};
static const double act_beta[RK_NACTS] = {
#define X(code, name, nargs, alpha, beta) beta,
    RK_RNN_ACTS(X)
#undef X
};

static int same_name_nocase(const char *a, size_t alen, const char *b) {
    if (strlen(b) != alen) return 0;
    for (size_t i = 0; i < alen; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return 0;
    return 1;
}

static void parse_activations(const RlxGraph *g, int node, Recur *r) {
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    const RlxNode *n = &g->n[node];
    const char *list = rlx_attr_s(n, "activations", NULL);
    int count = 0;
    int64_t codes[6];
    if (!list) {
        for (int k = 0; k < r->nacts; k++) {
            for (int c = 0; c < RK_NACTS; c++)
                if (!strcmp(act_names[c], defaults[r->cell][k])) codes[count] = c;
            count++;
        }
    } else {
        const char *s = list;
        for (;;) {
            while (*s == ' ') s++;
            size_t len = strcspn(s, ",");
            size_t trimmed = len;
            while (trimmed > 0 && s[trimmed - 1] == ' ') trimmed--;
            if (count == 6) rlx_node_error(g, node, "attribute 'activations' has more than %d entries", 2 * r->nacts);
            int code = -1;
            for (int c = 0; c < RK_NACTS; c++)
                if (same_name_nocase(s, trimmed, act_names[c])) code = c;
            if (code < 0)
                rlx_node_error(g, node, "unknown activation '%s' (known: Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                               "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)",
                               rlx_strndup(s, trimmed));
            codes[count++] = code;
            if (!s[len]) break;
            s += len + 1;
        }
    }
    if (count != r->nacts && count != r->nacts * r->dirs)
        rlx_node_error(g, node, "attribute 'activations' has %d entries; %s with %d direction%s takes %d%s", count,
                       rlx_ops[n->op].name, r->dirs, r->dirs > 1 ? "s" : "", r->nacts,
                       r->dirs > 1 ? rlx_fmt(" or %d", r->nacts * r->dirs) : "");
    const RlxAttr *al = rlx_attr_get(n, "activation_alpha"), *be = rlx_attr_get(n, "activation_beta");
    int ia = 0, ib = 0;
    for (int k = 0; k < r->nacts * r->dirs; k++) {
        int c = (int)codes[k % count];
        r->acts[k] = c;
        r->alpha[k] = act_alpha[c];
        r->beta[k] = act_beta[c];
        /* a list given once for both directions is consumed once */
        if (k >= count) {
            r->alpha[k] = r->alpha[k - count];
            r->beta[k] = r->beta[k - count];
            continue;
        }
        if (act_nargs[c] >= 1 && al && ia < al->n) r->alpha[k] = al->floats[ia++];
        if (act_nargs[c] >= 2 && be && ib < be->n) r->beta[k] = be->floats[ib++];
    }
}

/* Adds the outputs the model left out: the kernel writes all of them. */
static void complete_outputs(RlxGraph *g, int node, int full) {
    RlxNode *n = &g->n[node];
    if (n->nout < full) {
        int *out = rlx_alloc(sizeof(int) * (size_t)full);
        for (int k = 0; k < full; k++) out[k] = k < n->nout ? n->out[k] : -1;
        n->out = out;
        n->nout = full;
    }
    static const char *const roles[3] = {"Y", "Y_h", "Y_c"};
    for (int k = 0; k < full; k++) {
        if (n->out[k] >= 0) continue;
        const char *base = rlx_fmt("%s.%s", n->name, roles[k]), *name = base;
        for (int i = 1; rlx_value_find(g, name) >= 0; i++) name = rlx_fmt("%s.%d", base, i);
        int v = rlx_value_add(g, name);
        g->v[v].producer = node;
        n = &g->n[node];
        n->out[k] = v;
    }
}

static void want_shape(const RlxGraph *g, int node, int k, const char *role, int rank, const int64_t *dims) {
    const RlxValue *v = rlx_input(g, node, k);
    int ok = v->rank == rank;
    for (int i = 0; ok && i < rank; i++) ok = v->dims[i] == dims[i];
    if (!ok)
        rlx_node_error(g, node, "input %s '%s' must have shape %s, not %s", role, v->name, rlx_dims_str(rank, dims),
                       rlx_shape_str(v));
}

static Recur recur_params(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    Recur r;
    memset(&r, 0, sizeof r);
    r.cell = n->op == RLX_OP_RNN ? 0 : n->op == RLX_OP_GRU ? 1 : 2;
    r.gates = r.cell == 0 ? 1 : r.cell == 1 ? 3 : 4;
    r.nacts = r.cell + 1;
    r.nout = r.cell == 2 ? 3 : 2;
    const char *dir = rlx_attr_s(n, "direction", "forward");
    if (!strcmp(dir, "forward")) r.direction = 0;
    else if (!strcmp(dir, "reverse")) r.direction = 1;
    else if (!strcmp(dir, "bidirectional")) r.direction = 2;
    else rlx_node_error(g, node, "direction '%s' is not one of forward, reverse, bidirectional", dir);
    r.dirs = r.direction == 2 ? 2 : 1;
    int64_t layout = rlx_attr_i(n, "layout", 0);
    if (layout != 0 && layout != 1) rlx_node_error(g, node, "layout must be 0 or 1, not %lld", (long long)layout);
    r.layout = (int)layout;

    rlx_want_rank(g, node, 0, 3, 3);
    rlx_want_dtype(g, node, 0, T_FLOAT);
    const RlxValue *x = rlx_input(g, node, 0), *rv = rlx_input(g, node, 2);
    r.seq = x->dims[r.layout ? 1 : 0];
    r.batch = x->dims[r.layout ? 0 : 1];
    r.input = x->dims[2];
    /* W and R packed for the C target's f32 kernel (rlx_rnn_packable):
     * their shapes were checked before, and hidden is kept in an attribute */
    int packed = rlx_attr_i(n, "rlx_rnn_packed", 0) != 0;
    if (!packed) rlx_want_rank(g, node, 2, 3, 3);
    r.hidden = packed ? rlx_attr_i(n, "rlx_rnn_hidden", 0) : rv->dims[2];
    const RlxAttr *hs = rlx_attr_get(n, "hidden_size");
    if (hs && hs->i != r.hidden)
        rlx_node_error(g, node, "hidden_size is %lld but R '%s' has shape %s (want [%d, %lld, %lld])",
                       (long long)hs->i, rv->name, rlx_shape_str(rv), r.dirs, (long long)(r.gates * hs->i),
                       (long long)hs->i);
    int64_t gh = rlx_mul_checked(g, node, r.gates, r.hidden);
    int64_t wdims[3] = {r.dirs, gh, r.input}, rdims[3] = {r.dirs, gh, r.hidden};
    int64_t bdims[2] = {r.dirs, rlx_mul_checked(g, node, 2, gh)}, ldims[1] = {r.batch};
    int64_t sdims[3] = {r.layout ? r.batch : r.dirs, r.layout ? r.dirs : r.batch, r.hidden};
    int64_t pdims[2] = {r.dirs, rlx_mul_checked(g, node, 3, r.hidden)};
    static const char *const roles[8] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
    for (int k = 1; k < n->nin; k++) {
        if (!rlx_has_input(g, node, k)) continue;
        if (k == 4) {
            rlx_want_dtype(g, node, k, T_INDEX);
            want_shape(g, node, k, roles[k], 1, ldims);
            continue;
        }
        /* all alike, but X as the precision pass stores it (RLX_V_STORAGE) */
        if (k > 1 || !(g->v[n->in[0]].flags & RLX_V_STORAGE)) rlx_want_same_dtype(g, node, k > 1 ? 1 : 0, k);
        switch (k) {
        case 1: if (!packed) want_shape(g, node, k, roles[k], 3, wdims); break;
        case 2: if (!packed) want_shape(g, node, k, roles[k], 3, rdims); break;
        case 3: want_shape(g, node, k, roles[k], 2, bdims); break;
        case 5: case 6: want_shape(g, node, k, roles[k], 3, sdims); break;
        default: want_shape(g, node, k, roles[k], 2, pdims); break;
        }
    }
    if (rlx_attr_get(n, "clip") && !(rlx_attr_f(n, "clip", 0) > 0))
        rlx_node_error(g, node, "clip must be positive, not %g", rlx_attr_f(n, "clip", 0));
    parse_activations(g, node, &r);
    return r;
}

static void infer_recurrent(RlxGraph *g, int node, RlxShape *outs) {
    Recur r = recur_params(g, node);
    complete_outputs(g, node, r.nout);
    RlxDType dt = rlx_input(g, node, 0)->dtype;
    outs[0].dtype = dt;
    outs[0].rank = 4;
    int64_t y_layout0[4] = {r.seq, r.dirs, r.batch, r.hidden}, y_layout1[4] = {r.batch, r.seq, r.dirs, r.hidden};
    memcpy(outs[0].dims, r.layout ? y_layout1 : y_layout0, sizeof y_layout0);
    for (int k = 1; k < r.nout; k++) {
        outs[k].dtype = dt;
        outs[k].rank = 3;
        outs[k].dims[0] = r.layout ? r.batch : r.dirs;
        outs[k].dims[1] = r.layout ? r.dirs : r.batch;
        outs[k].dims[2] = r.hidden;
    }
}

/* The f32 kernel's activation code for an rk_rnn.h one, -1 if it has none. */
static int64_t f32_act(int64_t code) {
    return code == RK_ACT_SIGMOID ? RS_ACT_SIGMOID : code == RK_ACT_TANH ? RS_ACT_TANH
         : code == RK_ACT_RELU ? RS_ACT_RELU : -1;
}

int rlx_rnn_packable(const RlxGraph *g, int node) {
    const RlxNode *n = &g->n[node];
    if (n->op != RLX_OP_RNN && n->op != RLX_OP_GRU && n->op != RLX_OP_LSTM) return 0;
    if (rlx_has_input(g, node, 4) || !rlx_is_const(g, n->in[1]) || !rlx_is_const(g, n->in[2])) return 0;
    for (int k = 0; k < n->nin; k++)
        if (rlx_has_input(g, node, k) && g->v[n->in[k]].dtype != RLX_F32) return 0;
    for (int k = 0; k < n->nout; k++)
        if (n->out[k] >= 0 && g->v[n->out[k]].dtype != RLX_F32) return 0;
    Recur r = recur_params(g, node);
    for (int k = 0; k < r.nacts * r.dirs; k++)
        if (f32_act(r.acts[k]) < 0) return 0;
    return r.hidden > 0;
}

/* The C target's f32 kernel on W and R packed by its prepare (prepare_c.c). */
static void lower_packed(RlxLower *L, int node, const Recur *r) {
    const RlxGraph *g = L->g;
    const RlxNode *n = &g->n[node];
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_rnn_f32, node);
    for (int k = 0; k < 8; k++) rlx_tk_in(L, t, k != 4 && rlx_has_input(g, node, k) ? n->in[k] : -1);
    for (int k = 0; k < r->nout; k++) rlx_tk_out(L, t, n->out[k]);
    if (r->nout == 2) rlx_tk_out(L, t, -1);
    rlx_tk_i(t, "cell", r->cell);
    rlx_tk_i(t, "seq", r->seq);
    rlx_tk_i(t, "batch", r->batch);
    rlx_tk_i(t, "input", r->input);
    rlx_tk_i(t, "hidden", r->hidden);
    rlx_tk_i(t, "direction", r->direction);
    rlx_tk_i(t, "layout", r->layout);
    rlx_tk_i(t, "has_b", rlx_has_input(g, node, 3));
    rlx_tk_i(t, "has_h0", rlx_has_input(g, node, 5));
    rlx_tk_i(t, "has_c0", rlx_has_input(g, node, 6));
    rlx_tk_i(t, "has_p", rlx_has_input(g, node, 7));
    rlx_tk_i(t, "input_forget", r->cell == 2 && rlx_attr_i(n, "input_forget", 0));
    rlx_tk_i(t, "linear_before_reset", r->cell == 1 && rlx_attr_i(n, "linear_before_reset", 0));
    rlx_tk_i(t, "has_clip", rlx_attr_get(n, "clip") != NULL);
    rlx_tk_f(t, "clip", rlx_attr_f(n, "clip", 0));
    int64_t acts[6];
    for (int k = 0; k < r->nacts * r->dirs; k++) acts[k] = f32_act(r->acts[k]);
    rlx_tk_a(t, "acts", acts, r->nacts * r->dirs);
    rlx_tk_i(t, "w_step", rlx_attr_i(n, "rlx_rnn_w_step", 0));
    rlx_tk_i(t, "r_step", rlx_attr_i(n, "rlx_rnn_r_step", 0));
    rlx_tk_i(t, "r_split", rlx_attr_i(n, "rlx_rnn_r_split", 0));
}

static void lower_recurrent(RlxLower *L, int node) {
    const RlxGraph *g = L->g;
    const RlxNode *n = &g->n[node];
    Recur r = recur_params(g, node);
    RLX_ASSERT(n->nout == r.nout);
    if (rlx_attr_i(n, "rlx_rnn_packed", 0)) {
        lower_packed(L, node, &r);
        return;
    }
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_rnn, node);
    for (int k = 0; k < 8; k++) rlx_tk_in(L, t, rlx_has_input(g, node, k) ? n->in[k] : -1);
    for (int k = 0; k < r.nout; k++) rlx_tk_out(L, t, n->out[k]);
    if (r.nout == 2) rlx_tk_out(L, t, -1);
    rlx_tk_i(t, "cell", r.cell);
    rlx_tk_i(t, "dtype", g->v[n->in[1]].dtype);
    rlx_tk_i(t, "x_dtype", g->v[n->in[0]].dtype);
    rlx_tk_i(t, "y_dtype", g->v[n->out[0]].dtype);
    rlx_tk_i(t, "seq", r.seq);
    rlx_tk_i(t, "batch", r.batch);
    rlx_tk_i(t, "input", r.input);
    rlx_tk_i(t, "hidden", r.hidden);
    rlx_tk_i(t, "direction", r.direction);
    rlx_tk_i(t, "layout", r.layout);
    rlx_tk_i(t, "has_b", rlx_has_input(g, node, 3));
    rlx_tk_i(t, "has_seq_lens", rlx_has_input(g, node, 4));
    rlx_tk_i(t, "seq_lens_dtype", rlx_has_input(g, node, 4) ? g->v[n->in[4]].dtype : RLX_I32);
    rlx_tk_i(t, "has_h0", rlx_has_input(g, node, 5));
    rlx_tk_i(t, "has_c0", rlx_has_input(g, node, 6));
    rlx_tk_i(t, "has_p", rlx_has_input(g, node, 7));
    rlx_tk_i(t, "input_forget", r.cell == 2 && rlx_attr_i(n, "input_forget", 0));
    rlx_tk_i(t, "linear_before_reset", r.cell == 1 && rlx_attr_i(n, "linear_before_reset", 0));
    rlx_tk_i(t, "has_clip", rlx_attr_get(n, "clip") != NULL);
    rlx_tk_f(t, "clip", rlx_attr_f(n, "clip", 0));
    rlx_tk_a(t, "acts", r.acts, r.nacts * r.dirs);
    static const char *const alphas[6] = {"alpha0", "alpha1", "alpha2", "alpha3", "alpha4", "alpha5"};
    static const char *const betas[6] = {"beta0", "beta1", "beta2", "beta3", "beta4", "beta5"};
    for (int k = 0; k < r.nacts * r.dirs; k++) {
        rlx_tk_f(t, alphas[k], r.alpha[k]);
        rlx_tk_f(t, betas[k], r.beta[k]);
    }
}

/* ---- Einsum ---- */

#define EINSUM_MAX_OPS 5
#define EINSUM_MAX_LABELS RK_MAX_RANK

typedef struct {
    int nops, nlabels, nout;             /* labels 0..nout-1 are the output's, in order */
    int64_t dims[EINSUM_MAX_LABELS];
    int64_t ostride[EINSUM_MAX_LABELS];
    int64_t stride[EINSUM_MAX_OPS][EINSUM_MAX_LABELS];
    int out_rank;
    int64_t out_dims[RLX_MAX_RANK];
} Einsum;

/* One term of the equation: its letters, and where '...' stands (-1: none). */
typedef struct {
    char letters[RLX_MAX_RANK + 1];
    int nletters, ellipsis;
} Term;

static const char *parse_term(const RlxGraph *g, int node, const char *s, Term *t, const char *stop) {
    memset(t, 0, sizeof *t);
    t->ellipsis = -1;
    while (*s && !strchr(stop, *s)) {
        if (*s == ' ') {
            s++;
        } else if (*s == '.') {
            if (strncmp(s, "...", 3) || t->ellipsis >= 0)
                rlx_node_error(g, node, "equation: a term has a stray '.' or more than one '...'");
            t->ellipsis = t->nletters;
            s += 3;
        } else if (isalpha((unsigned char)*s)) {
            if (t->nletters == RLX_MAX_RANK) rlx_node_error(g, node, "equation: a term has more than %d labels", RLX_MAX_RANK);
            t->letters[t->nletters++] = *s++;
        } else {
            rlx_node_error(g, node, "equation: unexpected character '%c'", *s);
        }
    }
    return s;
}

static void einsum_plan(const RlxGraph *g, int node, Einsum *e) {
    const RlxNode *n = &g->n[node];
    const char *eq = rlx_attr_s(n, "equation", "");
    memset(e, 0, sizeof *e);
    if (n->nin > EINSUM_MAX_OPS) rlx_node_error(g, node, "more than %d operands are not supported", EINSUM_MAX_OPS);
    e->nops = n->nin;
    Term terms[EINSUM_MAX_OPS], out;
    const char *s = eq;
    int nterms = 0;
    for (;;) {
        if (nterms == EINSUM_MAX_OPS) rlx_node_error(g, node, "equation has more terms than the %d inputs", n->nin);
        s = parse_term(g, node, s, &terms[nterms++], ",-");
        if (*s == ',') {
            s++;
            continue;
        }
        break;
    }
    if (nterms != n->nin)
        rlx_node_error(g, node, "equation '%s' has %d input terms for %d inputs", eq, nterms, n->nin);
    int explicit_out = 0;
    if (*s == '-') {
        if (s[1] != '>') rlx_node_error(g, node, "equation: '-' must start '->'");
        s = parse_term(g, node, s + 2, &out, "");
        explicit_out = 1;
    }
    /* ellipsis axes: each operand's count, the broadcast count */
    int ell_n[EINSUM_MAX_OPS], ell_max = 0;
    for (int k = 0; k < nterms; k++) {
        const RlxValue *v = rlx_input(g, node, k);
        ell_n[k] = v->rank - terms[k].nletters;
        if (terms[k].ellipsis < 0 ? ell_n[k] != 0 : ell_n[k] < 0)
            rlx_node_error(g, node, "equation term %d has %d labels for input '%s' of rank %d", k, terms[k].nletters,
                           v->name, v->rank);
        if (ell_n[k] > ell_max) ell_max = ell_n[k];
    }
    /* output labels: characters, with '.' + index for ellipsis axes */
    char labels[EINSUM_MAX_LABELS * 2 + RLX_MAX_RANK];   /* letter, or 0 for ellipsis axis */
    int ell_of[EINSUM_MAX_LABELS + RLX_MAX_RANK];
    int nl = 0;
    if (explicit_out) {
        if (out.ellipsis < 0 && ell_max > 0)
            rlx_node_error(g, node, "equation: the inputs have '...' axes but the output has no '...'");
        for (int i = 0; i <= out.nletters; i++) {
            if (i == out.ellipsis)
                for (int a = 0; a < ell_max; a++) labels[nl] = 0, ell_of[nl++] = a;
            if (i == out.nletters) break;
            for (int j = 0; j < nl; j++)
                if (labels[j] == out.letters[i])
                    rlx_node_error(g, node, "equation: output label '%c' appears twice", out.letters[i]);
            int seen = 0;
            for (int k = 0; k < nterms; k++) seen |= memchr(terms[k].letters, out.letters[i], (size_t)terms[k].nletters) != NULL;
            if (!seen) rlx_node_error(g, node, "equation: output label '%c' is not in any input", out.letters[i]);
            if (nl >= RLX_MAX_RANK) rlx_node_error(g, node, "equation: output rank above %d", RLX_MAX_RANK);
            labels[nl] = out.letters[i], ell_of[nl++] = -1;
        }
    } else {
        for (int a = 0; a < ell_max; a++) labels[nl] = 0, ell_of[nl++] = a;
        for (int c = 0; c < 128; c++) {
            if (!isalpha(c)) continue;
            int count = 0;
            for (int k = 0; k < nterms; k++)
                for (int i = 0; i < terms[k].nletters; i++) count += terms[k].letters[i] == c;
            if (count != 1) continue;
            if (nl >= RLX_MAX_RANK) rlx_node_error(g, node, "equation: output rank above %d", RLX_MAX_RANK);
            labels[nl] = (char)c, ell_of[nl++] = -1;
        }
    }
    e->nout = e->out_rank = nl;
    /* summed labels, in order of appearance */
    for (int k = 0; k < nterms; k++)
        for (int i = 0; i < terms[k].nletters; i++) {
            int found = 0;
            for (int j = 0; j < nl; j++) found |= labels[j] == terms[k].letters[i];
            if (found) continue;
            if (nl >= EINSUM_MAX_LABELS)
                rlx_node_error(g, node, "equation has more than %d distinct labels (not supported)", EINSUM_MAX_LABELS);
            labels[nl] = terms[k].letters[i], ell_of[nl++] = -1;
        }
    if (nl > EINSUM_MAX_LABELS)
        rlx_node_error(g, node, "equation has more than %d distinct labels (not supported)", EINSUM_MAX_LABELS);
    e->nlabels = nl;
    for (int l = 0; l < nl; l++) e->dims[l] = 1;
    /* sizes (size-1 axes broadcast), then strides */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < nterms; k++) {
            const RlxValue *v = rlx_input(g, node, k);
            int64_t stride = 1;
            for (int axis = v->rank - 1; axis >= 0; axis--) {
                /* the label of this axis */
                int before = terms[k].ellipsis < 0 ? v->rank : terms[k].ellipsis;
                int l = -1;
                if (axis < before) {
                    for (int j = 0; j < nl; j++)
                        if (labels[j] && labels[j] == terms[k].letters[axis]) l = j;
                } else if (axis < before + ell_n[k]) {
                    int a = ell_max - ell_n[k] + (axis - before);
                    for (int j = 0; j < nl; j++)
                        if (!labels[j] && ell_of[j] == a) l = j;
                } else {
                    char c = terms[k].letters[axis - ell_n[k]];
                    for (int j = 0; j < nl; j++)
                        if (labels[j] == c) l = j;
                }
                RLX_ASSERT(l >= 0);
                int64_t d = v->dims[axis];
                if (pass == 0) {
                    if (d != 1 && e->dims[l] != 1 && e->dims[l] != d)
                        rlx_node_error(g, node, "equation: label sizes disagree (%lld and %lld, input '%s')",
                                       (long long)e->dims[l], (long long)d, v->name);
                    if (d != 1) e->dims[l] = d;
                } else {
                    if (d == e->dims[l] && d != 1) e->stride[k][l] += stride;
                    else if (d != 1)
                        rlx_node_error(g, node, "equation: repeated label '%c' has axes of sizes %lld and %lld",
                                       labels[l], (long long)e->dims[l], (long long)d);
                }
                stride = rlx_mul_checked(g, node, stride, d);
            }
        }
    int64_t stride = 1;
    for (int l = e->nout - 1; l >= 0; l--) {
        e->out_dims[l] = e->dims[l];
        e->ostride[l] = stride;
        stride = rlx_mul_checked(g, node, stride, e->dims[l]);
    }
    (void)s;
}

static void infer_einsum(RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    for (int k = 0; k < n->nin; k++) {
        if (!rlx_has_input(g, node, k)) rlx_node_error(g, node, "input %d is required", k);
        rlx_want_dtype(g, node, k, T_NUMERIC);
        rlx_want_same_dtype(g, node, 0, k);
    }
    Einsum e;
    einsum_plan(g, node, &e);
    outs[0].dtype = rlx_input(g, node, 0)->dtype;
    outs[0].rank = e.out_rank;
    memcpy(outs[0].dims, e.out_dims, sizeof(int64_t) * (size_t)e.out_rank);
}

static void lower_einsum(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    Einsum e;
    einsum_plan(L->g, node, &e);
    if (!rlx_value_numel(&L->g->v[n->out[0]])) return;
    RlxThunk *t = rlx_thunk_new(L->tl, RLX_K_einsum, node);
    for (int k = 0; k < n->nin; k++) rlx_tk_in(L, t, n->in[k]);
    rlx_tk_out(L, t, n->out[0]);
    static const char *const sname[EINSUM_MAX_OPS] = {"s0", "s1", "s2", "s3", "s4"};
    rlx_tk_i(t, "dtype", L->g->v[n->in[0]].dtype);
    rlx_tk_i(t, "nops", e.nops);
    rlx_tk_i(t, "nlabels", e.nlabels);
    rlx_tk_i(t, "nout_labels", e.nout);
    rlx_tk_a(t, "dims", e.dims, e.nlabels);
    rlx_tk_a(t, "ostride", e.ostride, e.nlabels);
    for (int k = 0; k < e.nops; k++) rlx_tk_a(t, sname[k], e.stride[k], e.nlabels);
}

int rlx_infer_rnn(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_RNN: case RLX_OP_GRU: case RLX_OP_LSTM: infer_recurrent(g, node, outs); return 1;
    case RLX_OP_EINSUM: infer_einsum(g, node, outs); return 1;
    default: return 0;
    }
}

int rlx_lower_rnn(RlxLower *L, int node) {
    switch (L->g->n[node].op) {
    case RLX_OP_RNN: case RLX_OP_GRU: case RLX_OP_LSTM: lower_recurrent(L, node); return 1;
    case RLX_OP_EINSUM: lower_einsum(L, node); return 1;
    default: return 0;
    }
}
