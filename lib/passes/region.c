/* region.c - elementwise regions: a chain of elementwise ops as one loop.
 *
 * A region is a straight-line program over its inputs, evaluated per output
 * element (RlxEltStep in rlx.h). A plain elementwise node is the region of
 * one step (or of n-1 steps for variadic Sum/Max/Min); the fusion pass
 * (fuse.c) merges chains of them into one rlx.Region node, whose program
 * is kept as a readable string attribute, so that a dumped graph reads back:
 *
 *     s0:f32 = Mul(x0, x1); s1:f32 = Add(s0, x2); s2:f32 = LeakyRelu[0.1](s1)
 *
 * xK is the node's K-th input, sK an earlier step, _ an absent optional
 * input; [a, b] are the op's attributes (RlxEltStep's alpha, beta): the
 * float attributes in ops.def order (Selu [alpha, gamma], Shrink [bias,
 * lambd]), and as numbers Mod [fmod], BitShift [1 = LEFT, 0 = RIGHT],
 * IsInf [detect_negative, detect_positive] and Mean [n]: Mean[n](args)
 * is the sum of its arguments divided by n, so a Mean node of n inputs
 * is n-1 Adds and a Mean[n] of their sum. CastLike is a Cast step of its
 * first input (its second input only gives the dtype).
 */
#include <stdlib.h>
#include <string.h>

#include "rlx.h"

static int has_alpha(RlxOp op) {
    switch (op) {
    case RLX_OP_LEAKYRELU: case RLX_OP_ELU: case RLX_OP_HARDSIGMOID: case RLX_OP_SELU: case RLX_OP_CELU:
    case RLX_OP_THRESHOLDEDRELU: case RLX_OP_SHRINK: case RLX_OP_MOD: case RLX_OP_BITSHIFT: case RLX_OP_ISINF:
    case RLX_OP_MEAN:
        return 1;
    default: return 0;
    }
}
static int has_beta(RlxOp op) {
    return op == RLX_OP_HARDSIGMOID || op == RLX_OP_SELU || op == RLX_OP_SHRINK || op == RLX_OP_ISINF;
}

int rlx_step_args_in_result_type(RlxOp op) {
    switch (op) {
    case RLX_OP_CAST: case RLX_OP_CASTLIKE: case RLX_OP_POW: case RLX_OP_WHERE: case RLX_OP_EQUAL: case RLX_OP_LESS:
    case RLX_OP_GREATER: case RLX_OP_LESSOREQUAL: case RLX_OP_GREATEROREQUAL: case RLX_OP_AND: case RLX_OP_OR:
    case RLX_OP_XOR: case RLX_OP_NOT: case RLX_OP_ISNAN: case RLX_OP_ISINF:
        return 0;
    default: return 1;
    }
}

int rlx_region_from_node(const RlxGraph *g, int node, RlxEltStep **out) {
    const RlxNode *n = &g->n[node];
    if (n->op == RLX_OP_REGION) return rlx_region_parse(g, node, out);
    RLX_ASSERT(rlx_ops[n->op].flags & RLX_OPF_ELT);
    RlxDType dt = g->v[n->out[0]].dtype;
    if (n->op == RLX_OP_MEAN) {
        int ns = n->nin;
        RlxEltStep *s = rlx_alloc(sizeof(RlxEltStep) * (size_t)ns);
        *out = s;
        for (int k = 0; k + 1 < ns; k++) {
            s[k].op = RLX_OP_ADD;
            s[k].dtype = dt;
            s[k].nargs = 2;
            s[k].args[0] = k == 0 ? 0 : -k;
            s[k].args[1] = k + 1;
        }
        s[ns - 1].op = RLX_OP_MEAN;
        s[ns - 1].dtype = dt;
        s[ns - 1].nargs = 1;
        s[ns - 1].args[0] = ns == 1 ? 0 : -(ns - 1);
        s[ns - 1].alpha = n->nin;
        return ns;
    }
    int variadic = n->op == RLX_OP_SUM || n->op == RLX_OP_MAX || n->op == RLX_OP_MIN;
    int nsteps = variadic && n->nin > 2 ? n->nin - 1 : 1;
    RlxEltStep *s = rlx_alloc(sizeof(RlxEltStep) * (size_t)nsteps);
    *out = s;
    if (variadic) {
        if (n->nin == 1) {   /* a single input is a copy */
            s->op = RLX_OP_IDENTITY;
            s->dtype = dt;
            s->nargs = 1;
            return 1;
        }
        RlxOp bin = n->op == RLX_OP_SUM ? RLX_OP_ADD : n->op;
        for (int k = 0; k < nsteps; k++) {
            s[k].op = bin;
            s[k].dtype = dt;
            s[k].nargs = 2;
            s[k].args[0] = k == 0 ? 0 : -k;   /* the previous step */
            s[k].args[1] = k + 1;
        }
        return nsteps;
    }
    s->op = n->op;
    s->dtype = dt;
    s->nargs = n->nin;
    RLX_ASSERT(n->nin <= 4);
    for (int i = 0; i < n->nin; i++) s->args[i] = n->in[i] >= 0 ? i : RLX_ARG_ABSENT;
    switch (n->op) {
    case RLX_OP_LEAKYRELU: s->alpha = rlx_attr_f(n, "alpha", 0.01); break;
    case RLX_OP_ELU: s->alpha = rlx_attr_f(n, "alpha", 1.0); break;
    case RLX_OP_HARDSIGMOID:
        s->alpha = rlx_attr_f(n, "alpha", 0.2);
        s->beta = rlx_attr_f(n, "beta", 0.5);
        break;
    case RLX_OP_SELU:
        s->alpha = rlx_attr_f(n, "alpha", 1.67326319217681884765625);
        s->beta = rlx_attr_f(n, "gamma", 1.05070102214813232421875);
        break;
    case RLX_OP_CELU: s->alpha = rlx_attr_f(n, "alpha", 1.0); break;
    case RLX_OP_THRESHOLDEDRELU: s->alpha = rlx_attr_f(n, "alpha", 1.0); break;
    case RLX_OP_SHRINK:
        s->alpha = rlx_attr_f(n, "bias", 0.0);
        s->beta = rlx_attr_f(n, "lambd", 0.5);
        break;
    case RLX_OP_MOD: s->alpha = rlx_attr_i(n, "fmod", 0) != 0; break;
    case RLX_OP_BITSHIFT: s->alpha = !strcmp(rlx_attr_s(n, "direction", ""), "LEFT"); break;
    case RLX_OP_ISINF:
        s->alpha = rlx_attr_i(n, "detect_negative", 1) != 0;
        s->beta = rlx_attr_i(n, "detect_positive", 1) != 0;
        break;
    case RLX_OP_CASTLIKE:
        s->op = RLX_OP_CAST;
        s->nargs = 1;
        break;
    default: break;
    }
    return 1;
}

const char *rlx_region_format(const RlxEltStep *s, int nsteps) {
    RlxBuf b = {0};
    for (int k = 0; k < nsteps; k++) {
        rlx_buf_printf(&b, "%ss%d:%s = %s", k ? "; " : "", k, rlx_dtype_name(s[k].dtype), rlx_ops[s[k].op].name);
        if (has_alpha(s[k].op)) {
            rlx_buf_printf(&b, "[%.17g", s[k].alpha);
            if (has_beta(s[k].op)) rlx_buf_printf(&b, ", %.17g", s[k].beta);
            rlx_buf_printf(&b, "]");
        }
        rlx_buf_printf(&b, "(");
        for (int j = 0; j < s[k].nargs; j++) {
            int a = s[k].args[j];
            if (a == RLX_ARG_ABSENT) rlx_buf_printf(&b, "%s_", j ? ", " : "");
            else if (a >= 0) rlx_buf_printf(&b, "%sx%d", j ? ", " : "", a);
            else rlx_buf_printf(&b, "%ss%d", j ? ", " : "", -a - 1);
        }
        rlx_buf_printf(&b, ")");
    }
    return b.data ? b.data : "";
}

/* ---- parsing (the program comes from a file: check everything) ---- */
typedef struct {
    const RlxGraph *g;
    int node;
    const char *p;
} Parser;

static void skip_blank(Parser *P) {
    while (*P->p == ' ') P->p++;
}

static void expect(Parser *P, char c) {
    skip_blank(P);
    if (*P->p != c) rlx_node_error(P->g, P->node, "bad region program: expected '%c' at \"%.20s\"", c, P->p);
    P->p++;
}

static long number(Parser *P) {
    char *end;
    long v = strtol(P->p, &end, 10);
    if (end == P->p || v < 0 || v > 1000000) rlx_node_error(P->g, P->node, "bad region program at \"%.20s\"", P->p);
    P->p = end;
    return v;
}

static const char *word(Parser *P) {
    skip_blank(P);
    size_t n = strspn(P->p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
    if (!n) rlx_node_error(P->g, P->node, "bad region program at \"%.20s\"", P->p);
    const char *w = rlx_strndup(P->p, n);
    P->p += n;
    return w;
}

int rlx_region_parse(const RlxGraph *g, int node, RlxEltStep **out) {
    const RlxNode *n = &g->n[node];
    const char *prog = rlx_attr_s(n, "program", NULL);
    if (!prog) rlx_node_error(g, node, "missing attribute 'program'");
    int cap = 1;
    for (const char *c = prog; *c; c++) cap += *c == ';';
    RlxEltStep *s = rlx_alloc(sizeof(RlxEltStep) * (size_t)cap);
    Parser P = {g, node, prog};
    int k = 0;
    for (;;) {
        skip_blank(&P);
        if (*P.p != 's') rlx_node_error(g, node, "bad region program: expected step s%d", k);
        P.p++;
        if (number(&P) != k) rlx_node_error(g, node, "bad region program: steps must be numbered s0, s1, ...");
        expect(&P, ':');
        int dt = rlx_dtype_from_name(word(&P));
        if (dt < 0) rlx_node_error(g, node, "bad region program: unknown dtype in step s%d", k);
        expect(&P, '=');
        int op = rlx_op_from_name(word(&P));
        if (op < 0 || !(rlx_ops[op].flags & RLX_OPF_ELT) || op == RLX_OP_REGION)
            rlx_node_error(g, node, "bad region program: step s%d is not an elementwise op", k);
        s[k].op = (RlxOp)op;
        s[k].dtype = (RlxDType)dt;
        skip_blank(&P);
        if (*P.p == '[') {
            P.p++;
            char *end;
            s[k].alpha = strtod(P.p, &end);
            if (end == P.p) rlx_node_error(g, node, "bad region program: bad number in step s%d", k);
            P.p = end;
            skip_blank(&P);
            if (*P.p == ',') {
                P.p++;
                s[k].beta = strtod(P.p, &end);
                if (end == P.p) rlx_node_error(g, node, "bad region program: bad number in step s%d", k);
                P.p = end;
            }
            expect(&P, ']');
        } else if (has_alpha(s[k].op)) {
            rlx_node_error(g, node, "bad region program: step s%d needs its attributes in [...]", k);
        }
        expect(&P, '(');
        int na = 0;
        for (;;) {
            skip_blank(&P);
            if (na == 4) rlx_node_error(g, node, "bad region program: too many arguments in step s%d", k);
            char c = *P.p++;
            if (c == '_') {
                s[k].args[na++] = RLX_ARG_ABSENT;
            } else if (c == 'x' || c == 's') {
                long v = number(&P);
                if (c == 'x' && v >= n->nin) rlx_node_error(g, node, "bad region program: x%ld is not an input", v);
                if (c == 's' && v >= k) rlx_node_error(g, node, "bad region program: s%ld used before it is computed", v);
                s[k].args[na++] = c == 'x' ? (int)v : (int)(-v - 1);
            } else {
                rlx_node_error(g, node, "bad region program: bad argument in step s%d", k);
            }
            skip_blank(&P);
            if (*P.p == ',') {
                P.p++;
                continue;
            }
            expect(&P, ')');
            break;
        }
        s[k].nargs = na;
        const RlxOpInfo *oi = &rlx_ops[s[k].op];
        if (na < oi->min_in || (oi->max_in >= 0 && na > oi->max_in))
            rlx_node_error(g, node, "bad region program: step s%d has %d arguments", k, na);
        k++;
        skip_blank(&P);
        if (!*P.p) break;
        expect(&P, ';');
    }
    *out = s;
    return k;
}

/* The value of operand o (inputs, then the output), or -1 when it is absent
 * or no step reads it (CastLike's target_type): such an input is neither
 * loaded nor part of the loop structure, whatever its shape. */
int rlx_region_operand(const RlxThunk *t, int o) {
    if (o == t->nin) return t->out[0].value;
    for (int k = 0; k < t->nsteps; k++)
        for (int j = 0; j < t->steps[k].nargs; j++)
            if (t->steps[k].args[j] == o) return t->in[o].value;
    return -1;
}

void rlx_region_loops(const RlxGraph *g, const RlxThunk *t, RlxLoopNest *L) {
    const RlxValue *y = &g->v[t->out[0].value];
    int nops = t->nin + 1;
    int64_t dims[RLX_MAX_RANK], st[17][RLX_MAX_RANK];
    int r = y->rank;
    for (int o = 0; o < nops; o++) {
        int v = rlx_region_operand(t, o);
        if (v < 0) continue;
        const RlxValue *x = &g->v[v];
        int64_t s = 1;
        for (int i = r - 1; i >= 0; i--) {
            int xi = i - (r - x->rank);
            if (xi < 0 || x->dims[xi] == 1) st[o][i] = 0;
            else {
                st[o][i] = s;
                s *= x->dims[xi];
            }
        }
    }
    memcpy(dims, y->dims, sizeof(int64_t) * (size_t)r);
    /* drop size-1 dims, then merge dim i into i-1 where every operand allows */
    L->rank = 0;
    for (int i = 0; i < r; i++) {
        if (dims[i] == 1) continue;
        int k = L->rank;
        if (k > 0) {
            int ok = 1;
            for (int o = 0; o < nops; o++) {
                int v = rlx_region_operand(t, o);
                if (v >= 0 && L->stride[o][k - 1] != st[o][i] * dims[i]) ok = 0;
            }
            if (ok) {
                L->dims[k - 1] *= dims[i];
                for (int o = 0; o < nops; o++) L->stride[o][k - 1] = st[o][i];
                continue;
            }
        }
        L->dims[k] = dims[i];
        for (int o = 0; o < nops; o++) L->stride[o][k] = st[o][i];
        L->rank++;
    }
}
