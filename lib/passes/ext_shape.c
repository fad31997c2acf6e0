/* ext_shape.c - the shape op family: Shape, Size, ConstantOfShape, Expand, Tile, Range, EyeLike, OneHot, Trilu, CumSum, TopK, DepthToSpace, SpaceToDepth, ReverseSequence, data-dependent shapes.
 *
 * rlx_infer_shape and rlx_lower_shape return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_shape(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_shape(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
