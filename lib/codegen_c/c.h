/* c.h - the C target's parts (target_c.c puts them in its descriptor). */
#ifndef RLX_CODEGEN_C_H
#define RLX_CODEGEN_C_H

#include "rlx.h"
#include "../target.h"

void rlx_c_prepare(RlxGraph *g, const RlxOptions *opt);                   /* prepare_c.c */
int rlx_c_lower(void *lower, int node);                                  /* select_c.c */
void rlx_c_select(RlxGraph *g, const RlxPlan *plan, RlxThunkList *tl);   /* select_c.c */
/* A 2-D (or 1-D) convolution that runs as im2col + GEMM (select_c.c). */
int rlx_c_conv_uses_gemm(const RlxGraph *g, int node);
void rlx_c_emit(const RlxEmitJob *job);                                  /* emit_c.c */

#endif
