/* constants.c - Constant nodes become weights.
 *
 * require: nothing (runs first, before scheduling).
 *
 * A Constant node's output value turns into a weight holding the node's one
 * value attribute, and the node is marked dead, so later passes see a
 * constant input exactly as if the model had declared a weight. A tensor
 * attribute ("value") already is a weight value made by the reader: its
 * dtype, shape and bytes are shared (weight bytes are never written after
 * they are read). The scalar and list forms are encoded here at their own
 * width: value_float(s) as f32, value_int(s) as i64, as ONNX defines them.
 */
#include <string.h>

#include "rlx.h"

static const char *const value_attrs[] = {"value", "value_float", "value_floats", "value_int", "value_ints"};

static void to_weight(RlxGraph *g, int node) {
    RlxNode *n = &g->n[node];
    if (n->nin != 0) rlx_node_error(g, node, "a Constant takes no inputs, got %d", n->nin);
    if (n->nout != 1 || n->out[0] < 0) rlx_node_error(g, node, "a Constant has exactly one output");

    const RlxAttr *a = NULL;
    int given = 0;
    for (size_t k = 0; k < sizeof value_attrs / sizeof value_attrs[0]; k++) {
        const RlxAttr *x = rlx_attr_get(n, value_attrs[k]);
        if (x) {
            a = x;
            given++;
        }
    }
    if (given != 1)
        rlx_node_error(g, node, "exactly one of value, value_float, value_floats, value_int, value_ints "
                                "must be given (got %d)", given);

    RlxValue *out = &g->v[n->out[0]];
    if (out->flags & (RLX_V_INPUT | RLX_V_WEIGHT))
        rlx_node_error(g, node, "output '%s' is also a graph %s", out->name,
                       out->flags & RLX_V_WEIGHT ? "weight" : "input");
    int64_t count = 1;
    uint8_t *data = NULL;
    if (!strcmp(a->name, "value")) {
        if (a->kind != RLX_A_TENSOR || !rlx_is_const(g, a->tensor))
            rlx_node_error(g, node, "attribute 'value' must be a tensor");
        const RlxValue *t = &g->v[a->tensor];
        out->dtype = t->dtype;
        out->rank = t->rank;
        memcpy(out->dims, t->dims, sizeof out->dims);
        out->data = t->data;
    } else if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_floats")) {
        int list = !strcmp(a->name, "value_floats");
        if (list ? a->kind != RLX_A_FLOATS && a->kind != RLX_A_INTS : a->kind != RLX_A_FLOAT && a->kind != RLX_A_INT)
            rlx_node_error(g, node, "attribute '%s' must be of type %s", a->name, list ? "floats" : "float");
        count = list ? a->n : 1;
        data = rlx_alloc(sizeof(float) * (size_t)count + 1);
        for (int64_t i = 0; i < count; i++) {
            double d = !list ? (a->kind == RLX_A_FLOAT ? a->f : (double)a->i)
                             : (a->kind == RLX_A_FLOATS ? a->floats[i] : (double)a->ints[i]);
            float f = (float)d;
            memcpy(data + i * 4, &f, 4);
        }
        out->dtype = RLX_F32;
    } else {
        int list = !strcmp(a->name, "value_ints");
        if (a->kind != (list ? RLX_A_INTS : RLX_A_INT))
            rlx_node_error(g, node, "attribute '%s' must be of type %s", a->name, list ? "ints" : "int");
        count = list ? a->n : 1;
        data = rlx_alloc(sizeof(int64_t) * (size_t)count + 1);
        for (int64_t i = 0; i < count; i++) {
            int64_t x = list ? a->ints[i] : a->i;
            memcpy(data + i * 8, &x, 8);
        }
        out->dtype = RLX_I64;
    }
    if (data) {
        int list = a->kind == RLX_A_FLOATS || a->kind == RLX_A_INTS;
        out->rank = list ? 1 : 0;
        out->dims[0] = list ? count : 0;
        out->data = data;
    }
    out->flags |= RLX_V_WEIGHT;
    out->producer = -1;
    g->n[node].dead = 1;
}

void rlx_constants_to_weights(RlxGraph *g) {
    for (int i = 0; i < g->nn; i++)
        if (!g->n[i].dead && g->n[i].op == RLX_OP_CONSTANT) to_weight(g, i);
}
