/* ext_ctrl.c - the ctrl op family: static control flow (If, Loop, Scan) and
 * TfIdfVectorizer.
 *
 * Control flow. The ONNX reader keeps each body as a graph of its own in the
 * node's GRAPH attribute, whose inputs are the formal parameters followed by
 * the outer values the body reads; those outer values are the node's last
 * 'captured' inputs (onnx.c). Inference reaches the node in schedule order,
 * after its inputs have been inferred and, where they depend on constants
 * only, folded. The node is then expanded in place: the taken If branch, or
 * the Loop/Scan body once per iteration, is copied into the graph with the
 * iteration's actual values as its inputs, and every copied node is inferred
 * and folded at once, so that a Loop condition computed by the body is a
 * known constant before the next iteration is copied. Scan slices are Gathers
 * at a constant index, scan outputs are stacked with Unsqueeze + Concat,
 * Identity nodes hand the results to the node's own output values, and the
 * node itself is marked dead. What is left is an ordinary graph, legalized
 * and optimized like any other: control flow is gone before legalization.
 * A condition or trip count that is still not a constant is an error naming
 * the graph inputs it depends on (binding those, e.g. with --freeze, makes
 * the model static).
 *
 * TfIdfVectorizer. Inference checks the attributes and encodes the n-gram
 * pool once as an i64 "gram table" weight, appended as the node's second
 * input (the kernel's params are fixed-size; the pool is not):
 *     [ngrams, has_weights, ncols,
 *      per gram: n, column, n tokens...,
 *      if has_weights: ncols weights as f64 bit patterns]
 * rk_tfidf (runtime_min/rk_ctrl.c) counts the grams in each row.
 *
 * rlx_infer_ctrl and rlx_lower_ctrl return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include <string.h>

#include "passes.h"

#define MAX_WHILE_ITERATIONS (1 << 16) /* a Loop without a trip count */

/* ---- building blocks: fresh values, constants, one-output nodes ---- */

static int new_value(RlxGraph *g, const char *base) {
    const char *name = base;
    for (int k = 1; rlx_value_find(g, name) >= 0; k++) name = rlx_fmt("%s.%d", base, k);
    return rlx_value_add(g, name);
}

static int const_i64(RlxGraph *g, const char *name, int rank, int64_t x) {
    int v = new_value(g, name);
    RlxValue *w = &g->v[v];
    int64_t *p = rlx_alloc(sizeof(int64_t));
    *p = x;
    w->dtype = RLX_I64;
    w->rank = rank;
    w->dims[0] = 1;
    w->flags = RLX_V_WEIGHT;
    w->data = (const uint8_t *)p;
    return v;
}

static int const_bool(RlxGraph *g, const char *name, int x) {
    int v = new_value(g, name);
    RlxValue *w = &g->v[v];
    uint8_t *p = rlx_alloc(1);
    *p = (uint8_t)(x != 0);
    w->dtype = RLX_BOOL;
    w->rank = 0;
    w->flags = RLX_V_WEIGHT;
    w->data = p;
    return v;
}

/* Adds a node with one output (a new value, or `out`), infers and folds it. */
static int add_node(RlxGraph *g, const char *name, RlxOp op, int nin, const int *in, int out, const char *attr,
                    int64_t attr_value) {
    rlx_check_node_count(g->file, g->nn + 1, "unrolling control flow makes");
    int o = out >= 0 ? out : new_value(g, name);
    int id = rlx_node_add(g, name, op, nin, in, 1, &o);
    g->v[o].producer = id;
    if (attr) rlx_attr_add(g, id, attr, RLX_A_INT)->i = attr_value;
    rlx_attr_check(g, id);
    rlx_infer_node(g, id);
    return o;
}

static int gather_at(RlxGraph *g, const char *name, int x, int64_t index, int64_t axis) {
    int in[2] = {x, const_i64(g, rlx_fmt("%s.index", name), 0, index)};
    return add_node(g, name, RLX_OP_GATHER, 2, in, -1, "axis", axis);
}

/* Stacks count values of one shape along a new axis (-rank-1 <= axis <=
 * rank); with count 0 the element type comes from the body's declaration. */
static int stack(RlxGraph *g, int node, const char *name, const int *vals, int count, int64_t axis,
                 const RlxDecl *decl) {
    int rank = count ? g->v[vals[0]].rank : decl->rank;
    if (!count && (decl->dtype < 0 || decl->rank < 0))
        rlx_node_error(g, node, "scan output '%s' has no iterations, and the body does not declare its element "
                                "type and shape", name);
    if (rank + 1 > RLX_MAX_RANK) rlx_node_error(g, node, "scan output '%s' would exceed rank %d", name, RLX_MAX_RANK);
    if (axis < -(rank + 1) || axis > rank)
        rlx_node_error(g, node, "scan output axis %lld is out of range for rank %d", (long long)axis, rank + 1);
    if (axis < 0) axis += rank + 1;
    if (!count) {
        int v = new_value(g, name);
        RlxValue *w = &g->v[v];
        w->dtype = (RlxDType)decl->dtype;
        w->rank = rank + 1;
        for (int a = 0, k = 0; a <= rank; a++) w->dims[a] = a == axis ? 0 : decl->dims[k++];
        w->flags = RLX_V_WEIGHT;
        w->data = rlx_alloc(1);
        return v;
    }
    int axes = const_i64(g, rlx_fmt("%s.axes", name), 1, axis);
    int *parts = rlx_alloc(sizeof(int) * (size_t)count);
    for (int i = 0; i < count; i++) {
        int in[2] = {vals[i], axes};
        parts[i] = add_node(g, rlx_fmt("%s/unsqueeze%d", name, i), RLX_OP_UNSQUEEZE, 2, in, -1, NULL, 0);
    }
    return add_node(g, name, RLX_OP_CONCAT, count, parts, -1, "axis", axis);
}

/* ---- what is not static ---- */

/* The one-line error for values that decide control flow but are not
 * constants: names every graph input they depend on, in the words of
 * rlx_want_const, so that the user (or a harness) knows what to bind. */
static void not_static(const RlxGraph *g, int node, const char *what, const int *vals, int nvals) {
    uint8_t *seen = rlx_alloc((size_t)g->nv + 1);
    int *stack_ = rlx_alloc(sizeof(int) * ((size_t)g->nv + 1));
    int top = 0;
    RlxBuf deps = {0};
    for (int i = 0; i < nvals; i++)
        if (vals[i] >= 0 && !seen[vals[i]]) seen[stack_[top++] = vals[i]] = 1;
    while (top > 0) {
        const RlxValue *v = &g->v[stack_[--top]];
        if (v->flags & RLX_V_WEIGHT) continue;
        if (v->flags & RLX_V_INPUT) {
            rlx_buf_printf(&deps, "; graph input (value '%s') must be a constant", v->name);
            continue;
        }
        if (v->producer < 0) continue;
        const RlxNode *p = &g->n[v->producer];
        for (int k = 0; k < p->nin; k++)
            if (p->in[k] >= 0 && !seen[p->in[k]]) seen[stack_[top++] = p->in[k]] = 1;
    }
    rlx_node_error(g, node, "%s not known at compile time; rlxc needs static control flow%s", what,
                   deps.len ? deps.data : "");
}

/* A constant scalar (one element) of a control-flow input, as int64. */
static int64_t scalar_of(const RlxGraph *g, int node, int v, const char *role) {
    const RlxValue *x = &g->v[v];
    if (!rlx_dtype_is_int(x->dtype) && x->dtype != RLX_BOOL)
        rlx_node_error(g, node, "%s '%s' must be an integer or bool, not %s", role, x->name, rlx_dtype_name(x->dtype));
    if (rlx_value_numel(x) != 1)
        rlx_node_error(g, node, "%s '%s' must have one element, not shape %s", role, x->name, rlx_shape_str(x));
    return rlx_weight_i64(x, 0);
}

/* ---- copying a body ---- */

static RlxGraph *graph_attr(const RlxGraph *g, int node, const char *name) {
    const RlxAttr *a = rlx_attr_get(&g->n[node], name);
    if (!a || a->kind != RLX_A_GRAPH || !a->graph) rlx_node_error(g, node, "needs the subgraph attribute '%s'", name);
    return a->graph;
}

/* The body value v as a value of g: mapped already, or a weight copied. */
static int body_value(RlxGraph *g, const RlxGraph *body, int *map, int v, const char *prefix) {
    if (map[v] >= 0) return map[v];
    const RlxValue *bv = &body->v[v];
    RLX_ASSERT(bv->flags & RLX_V_WEIGHT);
    int c = new_value(g, rlx_fmt("%s/%s", prefix, bv->name));
    RlxValue *w = &g->v[c];
    w->dtype = bv->dtype;
    w->rank = bv->rank;
    memcpy(w->dims, bv->dims, sizeof w->dims);
    w->flags = RLX_V_WEIGHT;
    w->data = bv->data;   /* weight bytes are never written: shared */
    return map[v] = c;
}

/* Copies body into g with actual[k] as its input k (formal parameters, then
 * captures); returns the g values of the body's outputs. */
static int *inline_body(RlxGraph *g, RlxGraph *body, const int *actual, const char *prefix) {
    rlx_constants_to_weights(body);   /* idempotent */
    rlx_schedule(body);
    int *map = rlx_alloc(sizeof(int) * ((size_t)body->nv + 1));
    for (int v = 0; v < body->nv; v++) map[v] = -1;
    for (int k = 0; k < body->ninputs; k++) map[body->inputs[k]] = actual[k];
    for (int s = 0; s < body->norder; s++) {
        const RlxNode *bn = &body->n[body->order[s]];
        rlx_check_node_count(g->file, g->nn + 1, "unrolling control flow makes");
        int *in = rlx_alloc(sizeof(int) * ((size_t)bn->nin + 1)), *out = rlx_alloc(sizeof(int) * ((size_t)bn->nout + 1));
        for (int k = 0; k < bn->nin; k++) in[k] = bn->in[k] < 0 ? -1 : body_value(g, body, map, bn->in[k], prefix);
        for (int k = 0; k < bn->nout; k++)
            out[k] = bn->out[k] < 0 ? -1 : new_value(g, rlx_fmt("%s/%s", prefix, body->v[bn->out[k]].name));
        int id = rlx_node_add(g, rlx_fmt("%s/%s", prefix, bn->name), bn->op, bn->nin, in, bn->nout, out);
        for (int k = 0; k < bn->nout; k++)
            if (out[k] >= 0) {
                g->v[out[k]].producer = id;
                map[bn->out[k]] = out[k];
            }
        for (int k = 0; k < bn->nattr; k++) {
            RlxAttr *a = rlx_attr_add(g, id, bn->attr[k].name, bn->attr[k].kind);
            *a = bn->attr[k];
            if (a->kind == RLX_A_TENSOR && a->tensor >= 0) a->tensor = body_value(g, body, map, a->tensor, prefix);
        }
        rlx_infer_node(g, id);
    }
    int *res = rlx_alloc(sizeof(int) * ((size_t)body->noutputs + 1));
    for (int k = 0; k < body->noutputs; k++) res[k] = body_value(g, body, map, body->outputs[k], prefix);
    return res;
}

/* Hands res[k] to the node's output k through an Identity, and retires the
 * node; outs gets the shapes (infer_node writes them again). */
static void finish(RlxGraph *g, int node, const int *res, RlxShape *outs) {
    int nout = g->n[node].nout;
    const char *name = g->n[node].name;
    int *outv = rlx_alloc(sizeof(int) * ((size_t)nout + 1));
    memcpy(outv, g->n[node].out, sizeof(int) * (size_t)nout);
    g->n[node].dead = 1;   /* before the Identities: one live producer per value */
    for (int k = 0; k < nout; k++) {
        if (outv[k] < 0) continue;
        add_node(g, rlx_fmt("%s/out%d", name, k), RLX_OP_IDENTITY, 1, &res[k], outv[k], NULL, 0);
        const RlxValue *v = &g->v[outv[k]];
        outs[k].dtype = v->dtype;
        outs[k].rank = v->rank;
        memcpy(outs[k].dims, v->dims, sizeof(int64_t) * (size_t)v->rank);
    }
}

/* The node's 'captured' count, checked against its inputs. */
static int captured_count(const RlxGraph *g, int node, int fixed) {
    int64_t c = rlx_attr_i(&g->n[node], "captured", 0);
    if (c < 0 || c > g->n[node].nin - fixed)
        rlx_node_error(g, node, "attribute 'captured' (%lld) does not fit its %d inputs", (long long)c, g->n[node].nin);
    return (int)c;
}

/* The body must take nin inputs and give at least the node's outputs (the
 * reader drops trailing unnamed outputs of the node, not of the body). */
static void want_body(const RlxGraph *g, int node, const RlxGraph *body, const char *what, int nin, int nout) {
    if (body->ninputs != nin || body->noutputs < nout)
        rlx_node_error(g, node, "%s takes %d inputs and gives %d outputs; the node needs %d and %d", what,
                       body->ninputs, body->noutputs, nin, nout);
}

/* ---- If ---- */

static void expand_if(RlxGraph *g, int node, RlxShape *outs) {
    RlxGraph *then_g = graph_attr(g, node, "then_branch"), *else_g = graph_attr(g, node, "else_branch");
    int ncap = captured_count(g, node, 1);
    const RlxNode *n = &g->n[node];
    if (n->in[0] < 0) rlx_node_error(g, node, "input 0 (cond) is required");
    if (then_g->ninputs + else_g->ninputs != ncap || n->nin != 1 + ncap)
        rlx_node_error(g, node, "the branches' captured values do not match the node's inputs");
    want_body(g, node, then_g, "then_branch", then_g->ninputs, n->nout);
    want_body(g, node, else_g, "else_branch", else_g->ninputs, n->nout);
    if (then_g->noutputs != else_g->noutputs)
        rlx_node_error(g, node, "then_branch gives %d outputs, else_branch %d", then_g->noutputs, else_g->noutputs);
    int cond = n->in[0];
    if (!rlx_is_const(g, cond)) not_static(g, node, "the condition is", &cond, 1);
    int taken = scalar_of(g, node, cond, "cond") != 0;
    const int *actual = taken ? n->in + 1 : n->in + 1 + then_g->ninputs;
    int *res = inline_body(g, taken ? then_g : else_g, actual, rlx_fmt("%s/%s", n->name, taken ? "then" : "else"));
    finish(g, node, res, outs);
}

/* ---- Loop ---- */

static void expand_loop(RlxGraph *g, int node, RlxShape *outs) {
    RlxGraph *body = graph_attr(g, node, "body");
    int ncap = captured_count(g, node, 2);
    const RlxNode *n = &g->n[node];
    const char *name = n->name;
    int ncarried = n->nin - 2 - ncap, nscan = body->noutputs - 1 - ncarried;
    if (nscan < 0) rlx_node_error(g, node, "has %d loop-carried values, but its body gives only %d outputs", ncarried,
                                  body->noutputs);
    want_body(g, node, body, "the body", 2 + ncarried + ncap, n->nout + 1);
    for (int k = 2; k < n->nin; k++)
        if (n->in[k] < 0) rlx_node_error(g, node, "input %d is required and must not be empty", k);
    int m = n->in[0], c = n->in[1];
    int unknown[2], nunknown = 0;
    if (m >= 0 && !rlx_is_const(g, m)) unknown[nunknown++] = m;
    if (c >= 0 && !rlx_is_const(g, c)) unknown[nunknown++] = c;
    if (m < 0 && c < 0) not_static(g, node, "the trip count is", NULL, 0);   /* an endless loop */
    if (nunknown)
        not_static(g, node, nunknown == 2 ? "the trip count and the condition are"
                            : unknown[0] == m ? "the trip count is" : "the condition is", unknown, nunknown);
    int64_t trip = m >= 0 ? scalar_of(g, node, m, "trip count M") : -1;
    int cond = c >= 0 ? scalar_of(g, node, c, "cond") != 0 : 1;
    /* A trip count and no condition: every iteration copies at least the
     * body's nodes, so a count that must pass the node limit is refused
     * now, not after building that many nodes (a fuzzed Loop of 2^53
     * iterations took 5 s of CPU under ASan to reach the limit). */
    if (m >= 0 && c < 0 && trip > 0) {
        rlx_constants_to_weights(body);   /* as inline_body does: idempotent */
        rlx_schedule(body);
        int64_t room = rlx_limits.max_nodes - g->nn;
        if (body->norder > 0 && (room < 0 || trip > room / body->norder))
            rlx_check_node_count(g->file, rlx_limits.max_nodes + 1, "unrolling control flow makes");
    }

    int nin_body = 2 + ncarried + ncap;
    int *actual = rlx_alloc(sizeof(int) * (size_t)nin_body);
    for (int k = 0; k < ncarried + ncap; k++) actual[2 + k] = g->n[node].in[2 + k];
    int cap = 16, iters = 0;
    int **scans = rlx_alloc(sizeof(int *) * ((size_t)nscan + 1));
    for (int s = 0; s < nscan; s++) scans[s] = rlx_alloc(sizeof(int) * (size_t)cap);
    for (; (m < 0 || iters < trip) && cond; iters++) {
        if (m < 0 && iters >= MAX_WHILE_ITERATIONS)
            rlx_node_error(g, node, "the condition is still true after %d iterations; rlxc unrolls loops at compile "
                                    "time and needs a trip count", MAX_WHILE_ITERATIONS);
        const char *prefix = rlx_fmt("%s/%d", name, iters);
        actual[0] = const_i64(g, rlx_fmt("%s/iter", prefix), 0, iters);
        actual[1] = const_bool(g, rlx_fmt("%s/cond", prefix), cond);
        int *res = inline_body(g, body, actual, prefix);
        if (c >= 0) {   /* without a cond input, the body's cond_out is ignored (ONNX) */
            if (!rlx_is_const(g, res[0])) not_static(g, node, "the loop condition is", &res[0], 1);
            cond = scalar_of(g, node, res[0], "the body's cond output") != 0;
        }
        for (int k = 0; k < ncarried; k++) actual[2 + k] = res[1 + k];
        if (iters == cap) {
            for (int s = 0; s < nscan; s++)
                scans[s] = rlx_realloc(scans[s], sizeof(int) * (size_t)cap, sizeof(int) * (size_t)cap * 2);
            cap *= 2;
        }
        for (int s = 0; s < nscan; s++) scans[s][iters] = res[1 + ncarried + s];
    }
    int *res = rlx_alloc(sizeof(int) * ((size_t)ncarried + (size_t)nscan + 1));
    for (int k = 0; k < ncarried; k++) res[k] = actual[2 + k];
    for (int s = 0; s < nscan; s++)
        res[ncarried + s] = stack(g, node, rlx_fmt("%s/scan%d", name, s), scans[s], iters, 0,
                                  &body->output_decl[1 + ncarried + s]);
    finish(g, node, res, outs);
}

/* ---- Scan ---- */

typedef struct {
    int nstate, nin, nout, ncap;
    const int64_t *in_axes, *in_dirs, *out_axes, *out_dirs;
} ScanForm;

/* An ints attribute of n entries (each 0 or 1 if `flags`), default 0. */
static const int64_t *scan_ints(const RlxGraph *g, int node, const char *name, int n, int flags) {
    int64_t *out = rlx_alloc(sizeof(int64_t) * ((size_t)n + 1));
    const RlxAttr *a = rlx_attr_get(&g->n[node], name);
    if (!a) return out;
    if (a->n != n) rlx_node_error(g, node, "attribute '%s' must have %d entries, not %d", name, n, a->n);
    for (int i = 0; i < n; i++) {
        if (flags && a->ints[i] != 0 && a->ints[i] != 1)
            rlx_node_error(g, node, "attribute '%s' entries must be 0 (forward) or 1 (reverse)", name);
        out[i] = a->ints[i];
    }
    return out;
}

/* One scan over states and scan inputs xs; final[] gets the last states,
 * scanned[] the stacked scan outputs. */
static void run_scan(RlxGraph *g, int node, RlxGraph *body, const ScanForm *f, const int *states, const int *xs,
                     const int *caps, const char *prefix, int *final, int *scanned) {
    int64_t len = -1;
    int64_t *axes = rlx_alloc(sizeof(int64_t) * ((size_t)f->nin + 1));
    for (int j = 0; j < f->nin; j++) {
        const RlxValue *x = &g->v[xs[j]];
        axes[j] = rlx_norm_axis(g, node, f->in_axes[j], x->rank);
        if (len >= 0 && x->dims[axes[j]] != len)
            rlx_node_error(g, node, "scan inputs have different lengths (%lld and %lld)", (long long)len,
                           (long long)x->dims[axes[j]]);
        len = x->dims[axes[j]];
    }
    if (len > MAX_WHILE_ITERATIONS) rlx_node_error(g, node, "a scan of %lld steps is too long to unroll", (long long)len);
    int nbody = f->nstate + f->nin + f->ncap;
    int *actual = rlx_alloc(sizeof(int) * (size_t)nbody);
    memcpy(actual, states, sizeof(int) * (size_t)f->nstate);
    memcpy(actual + f->nstate + f->nin, caps, sizeof(int) * (size_t)f->ncap);
    int **elems = rlx_alloc(sizeof(int *) * ((size_t)f->nout + 1));
    for (int s = 0; s < f->nout; s++) elems[s] = rlx_alloc(sizeof(int) * ((size_t)len + 1));
    for (int64_t t = 0; t < len; t++) {
        const char *step = rlx_fmt("%s/%lld", prefix, (long long)t);
        for (int j = 0; j < f->nin; j++)
            actual[f->nstate + j] = gather_at(g, rlx_fmt("%s/x%d", step, j), xs[j], f->in_dirs[j] ? len - 1 - t : t,
                                              axes[j]);
        int *res = inline_body(g, body, actual, step);
        memcpy(actual, res, sizeof(int) * (size_t)f->nstate);
        for (int s = 0; s < f->nout; s++) {
            int64_t at = f->out_dirs[s] ? len - 1 - t : t;   /* reverse: the last step's element comes first */
            elems[s][at] = res[f->nstate + s];
        }
    }
    memcpy(final, actual, sizeof(int) * (size_t)f->nstate);
    for (int s = 0; s < f->nout; s++)
        scanned[s] = stack(g, node, rlx_fmt("%s/scan%d", prefix, s), elems[s], (int)len, f->out_axes[s],
                           &body->output_decl[f->nstate + s]);
}

static void expand_scan(RlxGraph *g, int node, RlxShape *outs) {
    RlxGraph *body = graph_attr(g, node, "body");
    const RlxNode *n = &g->n[node];
    int legacy = rlx_attr_i(n, "legacy_batch", 0) != 0, first = legacy;
    int ncap = captured_count(g, node, first);
    int64_t nsi = rlx_attr_i(n, "num_scan_inputs", 0);
    ScanForm f;
    memset(&f, 0, sizeof f);
    f.ncap = ncap;
    if (nsi < 1 || nsi > n->nin - first - ncap)
        rlx_node_error(g, node, "num_scan_inputs (%lld) must be 1 to the number of inputs", (long long)nsi);
    f.nin = (int)nsi;
    f.nstate = n->nin - first - ncap - f.nin;
    f.nout = body->noutputs - f.nstate;
    if (f.nout < 0) rlx_node_error(g, node, "has %d states, but its body gives only %d outputs", f.nstate,
                                   body->noutputs);
    want_body(g, node, body, "the body", f.nstate + f.nin + ncap, n->nout);
    for (int k = first; k < n->nin - ncap; k++)
        if (n->in[k] < 0) rlx_node_error(g, node, "input %d is required and must not be empty", k);
    if (legacy) {
        static const char *const later[] = {"scan_input_axes", "scan_input_directions", "scan_output_axes",
                                            "scan_output_directions"};
        for (int k = 0; k < 4; k++)
            if (rlx_attr_get(n, later[k])) rlx_node_error(g, node, "attribute '%s' is not part of Scan-8", later[k]);
        f.in_dirs = scan_ints(g, node, "directions", f.nin, 1);
        /* all 0: the time axis, once the batch axis is gone; outputs forward */
        f.in_axes = rlx_alloc(sizeof(int64_t) * ((size_t)f.nin + 1));
        f.out_axes = f.out_dirs = rlx_alloc(sizeof(int64_t) * ((size_t)f.nout + 1));
    } else {
        if (rlx_attr_get(n, "directions")) rlx_node_error(g, node, "attribute 'directions' is Scan-8's; use scan_input_directions");
        f.in_axes = scan_ints(g, node, "scan_input_axes", f.nin, 0);
        f.in_dirs = scan_ints(g, node, "scan_input_directions", f.nin, 1);
        f.out_axes = scan_ints(g, node, "scan_output_axes", f.nout, 0);
        f.out_dirs = scan_ints(g, node, "scan_output_directions", f.nout, 1);
    }
    int ntotal = n->nin;
    int *in = rlx_alloc(sizeof(int) * ((size_t)ntotal + 1));
    memcpy(in, n->in, sizeof(int) * (size_t)ntotal);
    const char *name = n->name;
    const int *states = in + first, *xs = in + first + f.nstate, *caps = in + ntotal - ncap;
    int *res = rlx_alloc(sizeof(int) * ((size_t)f.nstate + (size_t)f.nout + 1));
    if (!legacy) {
        run_scan(g, node, body, &f, states, xs, caps, name, res, res + f.nstate);
        finish(g, node, res, outs);
        return;
    }
    /* Scan-8: axis 0 of every state, scan input and output is a batch axis,
     * axis 1 of the scan inputs the time axis; each batch entry is a scan */
    int64_t batch = -1;
    for (int k = 0; k < f.nstate + f.nin; k++) {
        const RlxValue *v = &g->v[states[k]];
        if (v->rank < (k < f.nstate ? 1 : 2))
            rlx_node_error(g, node, "input '%s' needs a batch axis%s (Scan-8)", v->name, k < f.nstate ? "" : " and a time axis");
        if (batch >= 0 && v->dims[0] != batch) rlx_node_error(g, node, "inputs disagree on the batch size");
        batch = v->dims[0];
    }
    int64_t steps = g->v[xs[0]].dims[1];
    if (in[0] >= 0) {
        int sl = in[0];
        if (!rlx_is_const(g, sl)) not_static(g, node, "sequence_lens is", &sl, 1);
        const RlxValue *lens = &g->v[sl];
        if (!rlx_dtype_is_int(lens->dtype) || rlx_value_numel(lens) != batch)
            rlx_node_error(g, node, "sequence_lens must hold one integer per batch entry");
        for (int64_t b = 0; b < batch; b++)
            if (rlx_weight_i64(lens, b) != steps)
                rlx_node_error(g, node, "sequence_lens shorter than the scan inputs (%lld of %lld) are not supported",
                               (long long)rlx_weight_i64(lens, b), (long long)steps);
    }
    if (batch > MAX_WHILE_ITERATIONS) rlx_node_error(g, node, "a batch of %lld is too large to unroll", (long long)batch);
    int nres = f.nstate + f.nout;
    int **per = rlx_alloc(sizeof(int *) * ((size_t)nres + 1));
    for (int k = 0; k < nres; k++) per[k] = rlx_alloc(sizeof(int) * ((size_t)batch + 1));
    int *bs = rlx_alloc(sizeof(int) * ((size_t)f.nstate + (size_t)f.nin + 1));
    int *bres = rlx_alloc(sizeof(int) * ((size_t)nres + 1));
    for (int64_t b = 0; b < batch; b++) {
        const char *prefix = rlx_fmt("%s/b%lld", name, (long long)b);
        for (int k = 0; k < f.nstate + f.nin; k++)
            bs[k] = gather_at(g, rlx_fmt("%s/in%d", prefix, k), states[k], b, 0);
        run_scan(g, node, body, &f, bs, bs + f.nstate, caps, prefix, bres, bres + f.nstate);
        for (int k = 0; k < nres; k++) per[k][b] = bres[k];
    }
    for (int k = 0; k < nres; k++) {
        RlxDecl none = {-1, -1, {0}};
        res[k] = stack(g, node, rlx_fmt("%s/batch%d", name, k), per[k], (int)batch, 0, &none);
    }
    finish(g, node, res, outs);
}

/* ---- TfIdfVectorizer ---- */

static int64_t *tfidf_table(const RlxGraph *g, int node, int *len_out, int64_t *ncols_out) {
    const RlxNode *n = &g->n[node];
    const RlxAttr *counts = rlx_attr_get(n, "ngram_counts"), *idx = rlx_attr_get(n, "ngram_indexes");
    const RlxAttr *pool = rlx_attr_get(n, "pool_int64s"), *w = rlx_attr_get(n, "weights");
    if (rlx_attr_get(n, "pool_strings")) rlx_node_error(g, node, "string pools (pool_strings) are not supported");
    if (!pool) rlx_node_error(g, node, "missing required attribute 'pool_int64s'");
    /* level k (n = k + 1 items per gram) is pool[counts[k] .. counts[k+1]) */
    int ngrams = 0;
    for (int k = 0; k < counts->n; k++) {
        int64_t lo = counts->ints[k], hi = k + 1 < counts->n ? counts->ints[k + 1] : pool->n;
        if (lo < 0 || hi < lo || hi > pool->n || (hi - lo) % (k + 1))
            rlx_node_error(g, node, "ngram_counts [%d] = %lld does not split pool_int64s (%d entries) into %d-grams", k,
                           (long long)lo, pool->n, k + 1);
        ngrams += (int)((hi - lo) / (k + 1));
    }
    if (idx->n != ngrams)
        rlx_node_error(g, node, "ngram_indexes has %d entries, but the pool holds %d n-grams", idx->n, ngrams);
    int64_t ncols = 0;
    for (int i = 0; i < idx->n; i++) {
        if (idx->ints[i] < 0 || idx->ints[i] >= (1 << 24))
            rlx_node_error(g, node, "ngram_indexes entry %lld is out of range", (long long)idx->ints[i]);
        if (idx->ints[i] + 1 > ncols) ncols = idx->ints[i] + 1;
    }
    if (w && w->n < ncols)
        rlx_node_error(g, node, "weights has %d entries, but the output has %lld columns", w->n, (long long)ncols);
    /* header 3, per gram 2 + n, weights ncols: all bounded by the checks above */
    int len = 3 + 2 * ngrams + pool->n + (w ? (int)ncols : 0);
    int64_t *t = rlx_alloc(sizeof(int64_t) * (size_t)len);
    t[0] = ngrams;
    t[1] = w != NULL;
    t[2] = ncols;
    int at = 3, gram = 0;
    for (int k = 0; k < counts->n; k++) {
        int64_t lo = counts->ints[k], hi = k + 1 < counts->n ? counts->ints[k + 1] : pool->n;
        for (int64_t p = lo; p < hi; p += k + 1) {
            t[at++] = k + 1;
            t[at++] = idx->ints[gram++];
            for (int j = 0; j <= k; j++) t[at++] = pool->ints[p + j];
        }
    }
    for (int c = 0; w && c < ncols; c++) memcpy(&t[at++], &w->floats[c], 8);
    RLX_ASSERT(at == len);
    *len_out = len;
    *ncols_out = ncols;
    return t;
}

static int tfidf_mode(const RlxGraph *g, int node) {
    const char *m = rlx_attr_s(&g->n[node], "mode", "");
    if (!strcmp(m, "TF")) return 0;
    if (!strcmp(m, "IDF")) return 1;
    if (!strcmp(m, "TFIDF")) return 2;
    rlx_node_error(g, node, "mode '%s' is not one of TF, IDF, TFIDF", m);
    return -1;
}

static void infer_tfidf(RlxGraph *g, int node, RlxShape *outs) {
    const RlxNode *n = &g->n[node];
    rlx_want_dtype(g, node, 0, T_INDEX);
    rlx_want_rank(g, node, 0, 1, 2);
    tfidf_mode(g, node);
    int64_t lo = rlx_attr_i(n, "min_gram_length", 0), hi = rlx_attr_i(n, "max_gram_length", 0);
    if (lo < 1 || hi < lo) rlx_node_error(g, node, "gram lengths must satisfy 1 <= min_gram_length <= max_gram_length");
    if (rlx_attr_i(n, "max_skip_count", 0) < 0) rlx_node_error(g, node, "max_skip_count must be >= 0");
    int len;
    int64_t ncols;
    int64_t *table = tfidf_table(g, node, &len, &ncols);
    if (n->nin == 2) {
        /* a -d dump read back: the table must be the one these attributes make */
        const RlxValue *t = rlx_input(g, node, 1);
        int same = rlx_is_const(g, n->in[1]) && t->dtype == RLX_I64 && t->rank == 1 && t->dims[0] == len;
        if (!same || memcmp(t->data, table, sizeof(int64_t) * (size_t)len))
            rlx_node_error(g, node, "takes 1 input (X); the second is rlxc's own gram table");
    } else {
        int v = new_value(g, rlx_fmt("%s.grams", n->name));
        RlxValue *t = &g->v[v];
        t->dtype = RLX_I64;
        t->rank = 1;
        t->dims[0] = len;
        t->flags = RLX_V_WEIGHT;
        t->data = (const uint8_t *)table;
        RlxNode *m = &g->n[node];
        int *in = rlx_alloc(sizeof(int) * 2);
        in[0] = m->in[0];
        in[1] = v;
        m->in = in;
        m->nin = 2;
    }
    const RlxValue *x = rlx_input(g, node, 0);
    outs[0].dtype = RLX_F32;
    outs[0].rank = x->rank;
    if (x->rank == 2) outs[0].dims[0] = x->dims[0];
    outs[0].dims[x->rank - 1] = ncols;
}

static void lower_tfidf(RlxLower *L, int node) {
    const RlxNode *n = &L->g->n[node];
    const RlxValue *x = &L->g->v[n->in[0]], *t = &L->g->v[n->in[1]];
    RlxThunk *k = rlx_thunk_new(L->tl, RLX_K_tfidf, node);
    rlx_tk_in(L, k, n->in[0]);
    rlx_tk_in(L, k, n->in[1]);
    rlx_tk_out(L, k, n->out[0]);
    rlx_tk_i(k, "rows", x->rank == 2 ? x->dims[0] : 1);
    rlx_tk_i(k, "row_len", x->dims[x->rank - 1]);
    rlx_tk_i(k, "idx_dtype", x->dtype);
    rlx_tk_i(k, "table_len", t->dims[0]);
    rlx_tk_i(k, "min_n", rlx_attr_i(n, "min_gram_length", 1));
    rlx_tk_i(k, "max_n", rlx_attr_i(n, "max_gram_length", 1));
    rlx_tk_i(k, "max_skip", rlx_attr_i(n, "max_skip_count", 0));
    rlx_tk_i(k, "mode", tfidf_mode(L->g, node));
}

/* ---- hooks ---- */

int rlx_infer_ctrl(RlxGraph *g, int node, RlxShape *outs) {
    switch (g->n[node].op) {
    case RLX_OP_IF: expand_if(g, node, outs); return 1;
    case RLX_OP_LOOP: expand_loop(g, node, outs); return 1;
    case RLX_OP_SCAN: expand_scan(g, node, outs); return 1;
    case RLX_OP_TFIDF: infer_tfidf(g, node, outs); return 1;
    default: return 0;
    }
}

int rlx_lower_ctrl(RlxLower *L, int node) {
    switch (L->g->n[node].op) {
    case RLX_OP_TFIDF: lower_tfidf(L, node); return 1;
    default: return 0;
    }
}
