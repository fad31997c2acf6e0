/* c.h - the C target's parts (target_c.c puts them in its descriptor). */
#ifndef RLX_CODEGEN_C_H
#define RLX_CODEGEN_C_H

#include "rlx.h"
#include "../target.h"

void rlx_c_prepare(RlxGraph *g, const RlxOptions *opt);                   /* prepare_c.c */
int rlx_c_lower(void *lower, int node);                                  /* select_c.c */
void *rlx_c_select(RlxGraph *g, const RlxPlan *plan, RlxThunkList *tl);  /* select_c.c; returns NULL */
/* Whether every operand of a convolution or GEMM node is stored as f32:
 * only then do prepacking, Winograd and the fused bands apply (select_c.c). */
int rlx_c_all_f32(const RlxGraph *g, int node);
/* A 2-D (or 1-D) convolution that runs as im2col + GEMM (select_c.c). */
int rlx_c_conv_uses_gemm(const RlxGraph *g, int node);
void rlx_c_emit(const RlxEmitJob *job);                                  /* emit_c.c */
/* emit_c.c, for every target's printer: the API header OUT.h, and the
 * tensor tables with NAME_info. */
void rlx_emit_model_header(const RlxGraph *g, const RlxPlan *plan, const char *name, int emit_main, int embed_weights,
                           RlxBuf *h);
void rlx_emit_model_info(const RlxGraph *g, const RlxPlan *plan, const char *name, uint64_t hash, int64_t scratch,
                         int nthreads, RlxBuf *c);
/* A comment-safe copy of a name from the model file. */
const char *rlx_comment_safe(const char *s);

#endif
