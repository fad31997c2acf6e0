/* prepack.c - GEMM weights packed at compile time.  require: fused, scheduled
 *
 * The GEMM (rk_gemm.c) copies B into cache-sized panels before it
 * multiplies. When B is a weight, that copy is the same every run, so it is
 * done here, once: the MatMul or Gemm node reads a new weight holding B in
 * the packed layout (rlx_b_packed = 1), and the original B drops out of the
 * weights file unless something else reads it. The packed layout depends only
 * on (N, K), so the result is bit-for-bit the run-time packing's.
 */
#include <string.h>

#include "rlx.h"
#include "../../runtime_min/rk_gemm.h"

/* Conv weights (O, I/group, kh, kw) are the GEMM's A, one block per group;
 * the kernel shape moves to the attribute, as the packed weight is 1-D. */
static void prepack_conv(RlxGraph *g, int node) {
    RlxNode *n = &g->n[node];
    int wv = n->in[1];
    if (!rlx_is_const(g, wv) || g->v[wv].dtype != RLX_F32 || !rlx_conv_uses_gemm(g, node)) return;
    const RlxValue *w = &g->v[wv];
    int64_t group = rlx_attr_i(n, "group", 1), oc = w->dims[0], ocg = oc / group, kdim = 1;
    for (int i = 1; i < w->rank; i++) kdim *= w->dims[i];
    if (!ocg || !kdim) return;
    size_t per = rk_sgemm_packed_a_size(ocg, kdim);
    float *src = rlx_alloc((size_t)rlx_value_bytes(w));
    memcpy(src, w->data, (size_t)rlx_value_bytes(w));
    float *packed = rlx_alloc(per * (size_t)group);
    for (int64_t gi = 0; gi < group; gi++)
        rk_sgemm_pack_a(ocg, kdim, src + gi * ocg * kdim, kdim, 0, packed + gi * (int64_t)(per / sizeof(float)));
    if (!rlx_attr_get(n, "kernel_shape")) {
        RlxAttr *ks = rlx_attr_add(g, node, "kernel_shape", RLX_A_INTS);
        w = &g->v[wv];
        ks->n = w->rank - 2;
        ks->ints = rlx_alloc(sizeof(int64_t) * (size_t)(ks->n + 1));
        for (int i = 0; i < ks->n; i++) ks->ints[i] = w->dims[i + 2];
    }
    int pv = rlx_value_add(g, rlx_fmt("%s.packed_for_%s", g->v[wv].name, g->n[node].name));
    RlxValue *p = &g->v[pv];
    p->dtype = RLX_F32;
    p->rank = 1;
    p->dims[0] = (int64_t)(per * (size_t)group / sizeof(float));
    p->flags = RLX_V_WEIGHT;
    p->producer = -1;
    p->data = (const uint8_t *)packed;
    g->n[node].in[1] = pv;
    rlx_attr_add(g, node, "rlx_a_packed", RLX_A_INT)->i = 1;
}

void rlx_prepack(RlxGraph *g) {
    for (int s = 0; s < g->norder; s++) {
        int node = g->order[s];
        RlxNode *n = &g->n[node];
        if (n->op == RLX_OP_CONV) {
            prepack_conv(g, node);
            continue;
        }
        if (n->op != RLX_OP_MATMUL && n->op != RLX_OP_GEMM) continue;
        int bv = n->in[1];
        if (!rlx_is_const(g, bv) || g->v[bv].dtype != RLX_F32 || g->v[n->out[0]].dtype != RLX_F32) continue;
        const RlxValue *b = &g->v[bv];
        int64_t k, nn, ldb;
        int tb = 0;
        if (n->op == RLX_OP_MATMUL) {
            if (b->rank != 2) continue;   /* batched or 1-D weights stay as they are */
            tb = rlx_attr_i(n, "rlx_trans_b", 0) != 0;
            k = b->dims[tb];
            nn = b->dims[1 - tb];
            ldb = b->dims[1];
        } else {
            tb = rlx_attr_i(n, "transB", 0) != 0;
            k = b->dims[tb];
            nn = b->dims[1 - tb];
            ldb = b->dims[1];
        }
        if (!k || !nn) continue;
        size_t bytes = rk_sgemm_packed_b_size(nn, k);
        /* weight bytes may sit unaligned in the model file: align first */
        float *src = rlx_alloc((size_t)rlx_value_bytes(b));
        memcpy(src, b->data, (size_t)rlx_value_bytes(b));
        float *packed = rlx_alloc(bytes);
        rk_sgemm_pack_b(nn, k, src, ldb, tb, packed);
        int pv = rlx_value_add(g, rlx_fmt("%s.packed_for_%s", b->name, n->name));
        RlxValue *p = &g->v[pv];
        p->dtype = RLX_F32;
        p->rank = 1;
        p->dims[0] = (int64_t)(bytes / sizeof(float));
        p->flags = RLX_V_WEIGHT;
        p->producer = -1;
        p->data = (const uint8_t *)packed;
        n = &g->n[node];
        n->in[1] = pv;
        rlx_attr_add(g, node, "rlx_b_packed", RLX_A_INT)->i = 1;
    }
}
