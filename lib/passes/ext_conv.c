/* ext_conv.c - the conv op family: ConvTranspose, N-d convolution and pooling, LpPool, global pools.
 *
 * rlx_infer_conv and rlx_lower_conv return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_conv(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_conv(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
