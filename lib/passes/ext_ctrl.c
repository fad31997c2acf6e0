/* ext_ctrl.c - the ctrl op family: control flow helpers and other ops (TfIdfVectorizer).
 *
 * rlx_infer_ctrl and rlx_lower_ctrl return 1 for the family's own ops and
 * 0 for any other (see passes.h).
 */
#include "passes.h"

int rlx_infer_ctrl(RlxGraph *g, int node, RlxShape *outs) {
    (void)g;
    (void)node;
    (void)outs;
    return 0;
}

int rlx_lower_ctrl(RlxLower *L, int node) {
    (void)L;
    (void)node;
    return 0;
}
