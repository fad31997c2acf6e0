/* Shared helpers for the unit tests that build a small graph by hand and run
 * shape inference on it.
 *
 * The helpers work on the file-scope graph `g` declared here: a test sets
 * `g = rlx_graph_new("t.rlxg")`, adds values and nodes, then calls run() (or
 * fails_with()).  Which passes run() applies differs between suites — some
 * rely on rlx_attr_check running over every node first, some on
 * rlx_legalize running last — so a test file must define TG_PASSES, an OR of
 * TG_CHECK_ATTRS and TG_LEGALIZE (or 0), before including this header.
 * rlx_schedule and rlx_infer always run.
 *
 * Everything is `static inline` so a file that uses only some of the helpers
 * still builds with -Werror. */
#ifndef TESTGRAPH_H
#define TESTGRAPH_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "rlx.h"

#define TG_CHECK_ATTRS 1 /* rlx_attr_check on every node, before scheduling */
#define TG_LEGALIZE 2    /* rlx_legalize(g, "c") after inference */

#ifndef TG_PASSES
#error "define TG_PASSES (TG_CHECK_ATTRS, TG_LEGALIZE, both or 0) before including testgraph.h"
#endif

static RlxGraph *g;

/* A value of the given type, shape and RLX_V_* flags, in no input or output
 * list. */
static inline int typed_value(const char *name, RlxDType dt, int rank, const int64_t *dims, int flags) {
    int v = rlx_value_add(g, name);
    g->v[v].dtype = dt;
    g->v[v].rank = rank;
    if (rank > 0) memcpy(g->v[v].dims, dims, sizeof(int64_t) * (size_t)rank);   /* dims may be NULL for a scalar */
    g->v[v].flags |= flags;
    return v;
}

/* A graph input of the given type and shape. */
static inline int input(const char *name, RlxDType dt, int rank, const int64_t *dims) {
    int v = typed_value(name, dt, rank, dims, RLX_V_INPUT);
    g->inputs = rlx_realloc(g->inputs, sizeof(int) * (size_t)g->ninputs, sizeof(int) * (size_t)(g->ninputs + 1));
    g->inputs[g->ninputs++] = v;
    return v;
}

/* A 1-D weight of n elements copied from data (one spare byte so n = 0 still
 * gets a non-empty buffer). */
static inline int weight(const char *name, RlxDType dt, int64_t n, const void *data) {
    int v = typed_value(name, dt, 1, &n, RLX_V_WEIGHT);
    size_t bytes = (size_t)n * (size_t)rlx_dtype_size(dt);
    uint8_t *p = rlx_alloc(bytes + 1);
    memcpy(p, data, bytes);
    g->v[v].data = p;
    return v;
}

/* Appends v to the graph outputs. */
static inline void graph_output(int v) {
    g->v[v].flags |= RLX_V_OUTPUT;
    g->outputs = rlx_realloc(g->outputs, sizeof(int) * (size_t)g->noutputs, sizeof(int) * (size_t)(g->noutputs + 1));
    g->outputs[g->noutputs++] = v;
}

/* Runs the passes TG_PASSES selects on g: 0 when they succeed, 1 when one
 * reports an error (the message is in rlx_diag.msg). */
static inline int run(void) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        return 1;
    }
    if (TG_PASSES & TG_CHECK_ATTRS)
        for (int n = 0; n < g->nn; n++) rlx_attr_check(g, n);
    rlx_schedule(g);
    rlx_infer(g);
    if (TG_PASSES & TG_LEGALIZE) rlx_legalize(g, "c");
    rlx_diag.jmp = NULL;
    return 0;
}

static inline void shape_is(int v, RlxDType dt, int rank, const int64_t *dims) {
    const RlxValue *x = &g->v[v];
    cr_assert_eq(x->dtype, dt, "%s: dtype %s", x->name, rlx_dtype_name(x->dtype));
    cr_assert_eq(x->rank, rank, "%s: shape %s", x->name, rlx_shape_str(x));
    for (int i = 0; i < rank; i++) cr_assert_eq(x->dims[i], dims[i], "%s: shape %s", x->name, rlx_shape_str(x));
}

/* run() must fail with a message containing text. */
static inline void fails_with(const char *text) {
    cr_assert_eq(run(), 1, "expected an error containing \"%s\"", text);
    cr_assert(strstr(rlx_diag.msg, text), "message \"%s\" lacks \"%s\"", rlx_diag.msg, text);
}

#endif
