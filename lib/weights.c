/* weights.c - the weights file image and the model hash.
 *
 * The image is the 64-byte header of runtime_min/rlx_rt.h followed by the
 * data section, every weight at the offset the plan gave it (plan->woff),
 * zero bytes between; the header ends with the data section's checksum
 * (rlx_weights_checksum), which the runtime verifies when it loads it. The model hash covers what the generated code bakes
 * in: each live node's op, name and operand names, dtypes and shapes, and
 * every weight's offset and bytes; a weights file made for another model,
 * or for another version of this one, is refused by the runtime.
 */
#include <string.h>

#include "rlx.h"

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t hash_str(uint64_t h, const char *s) { return rlx_fnv1a(h, s, strlen(s) + 1); }

static uint64_t hash_value(uint64_t h, const RlxValue *v) {
    h = hash_str(h, v->name);
    uint8_t b[8];
    put32(b, (uint32_t)v->dtype);
    put32(b + 4, (uint32_t)v->rank);
    h = rlx_fnv1a(h, b, 8);
    for (int i = 0; i < v->rank; i++) {
        put64(b, (uint64_t)v->dims[i]);
        h = rlx_fnv1a(h, b, 8);
    }
    return h;
}

void rlx_weights_image(const RlxGraph *g, const RlxPlan *plan, RlxBuf *out, uint64_t *hash) {
    uint64_t h = RLX_FNV_SEED;
    h = hash_str(h, g->name);
    for (int i = 0; i < g->norder; i++) {
        const RlxNode *n = &g->n[g->order[i]];
        h = hash_str(h, rlx_ops[n->op].name);
        h = hash_str(h, n->name);
        for (int j = 0; j < n->nin; j++) h = n->in[j] >= 0 ? hash_value(h, &g->v[n->in[j]]) : hash_str(h, "");
        for (int j = 0; j < n->nout; j++) h = n->out[j] >= 0 ? hash_value(h, &g->v[n->out[j]]) : hash_str(h, "");
    }
    for (int i = 0; i < g->ninputs; i++) h = hash_value(h, &g->v[g->inputs[i]]);
    for (int i = 0; i < g->noutputs; i++) h = hash_value(h, &g->v[g->outputs[i]]);
    uint32_t nweights = 0;
    for (int i = 0; i < g->nv; i++) {
        if (plan->woff[i] < 0) continue;
        uint8_t b[8];
        put64(b, (uint64_t)plan->woff[i]);
        h = rlx_fnv1a(h, b, 8);
        h = rlx_fnv1a(h, g->v[i].data, (size_t)rlx_value_bytes(&g->v[i]));
        nweights++;
    }
    *hash = h;

    size_t total = RLX_WEIGHTS_HEADER + (size_t)plan->weights_bytes;
    out->len = 0;
    uint8_t *img = rlx_alloc(total + 1);
    memcpy(img, RLX_WEIGHTS_MAGIC, 4);
    put32(img + 4, RLX_WEIGHTS_VERSION);
    put64(img + 8, h);
    put64(img + 16, (uint64_t)plan->weights_bytes);
    put64(img + 24, RLX_WEIGHTS_HEADER);
    put32(img + 32, nweights);
    for (int i = 0; i < g->nv; i++) {
        if (plan->woff[i] < 0) continue;
        int64_t n = rlx_value_bytes(&g->v[i]);
        RLX_ASSERT(plan->woff[i] + n <= plan->weights_bytes);
        if (n) memcpy(img + RLX_WEIGHTS_HEADER + plan->woff[i], g->v[i].data, (size_t)n);
    }
    put64(img + 40, rlx_weights_checksum(img + RLX_WEIGHTS_HEADER, (size_t)plan->weights_bytes));
    out->data = (char *)img;
    out->len = total;
    out->cap = total + 1;
}
