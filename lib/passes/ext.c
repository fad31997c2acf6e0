/* ext.c - asks each op family (ext_*.c, listed once in RLX_FAMILIES of
 * passes.h) for an op the core passes don't handle themselves. */
#include "passes.h"

int rlx_infer_ext(RlxGraph *g, int node, RlxShape *outs) {
#define F(fam) if (rlx_infer_##fam(g, node, outs)) return 1;
    RLX_FAMILIES(F)
#undef F
    return 0;
}

int rlx_lower_ext(RlxLower *L, int node) {
#define F(fam) if (rlx_lower_##fam(L, node)) return 1;
    RLX_FAMILIES(F)
#undef F
    return 0;
}
