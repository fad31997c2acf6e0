/* rk_ctrl.c - the ctrl family's kernel: TfIdfVectorizer (ONNX semantics).
 *
 * The compiler encodes the n-gram pool as a table (see rk_kernels.def and
 * lib/passes/ext_ctrl.c). For each row of tokens, every gram of the table
 * whose length n lies in [min_n, max_n] is compared at every start position
 * and every item distance d = 1 .. max_skip + 1 (the items are start,
 * start + d, ..., start + (n-1) d, all inside the row); each match adds 1 to
 * the gram's output column. A unigram has no distance, so it is counted once
 * per position, as ONNX's reference does. This is the plain
 * grams x distances x positions loop, with no trie: pools in models are small,
 * and the loop is easy to check against the definition.
 *
 * The counts are then weighted: TF keeps them, IDF writes the column's
 * weight (1 without weights) where the count is nonzero, TFIDF multiplies
 * the count by the weight. Weights belong to output columns, as in ONNX's
 * reference and ONNX Runtime.
 *
 * The table comes from the compiler, but the kernel still bounds every read
 * of it and returns RLX_E_ARG for one that does not fit.
 */
#include "rlx_rt.h"

#include <string.h>

static int64_t token_at(int64_t dtype, const void *base, int64_t i) {
    if (dtype == RLX_I32) {
        int32_t v;
        memcpy(&v, (const uint8_t *)base + 4 * i, 4);
        return v;
    }
    int64_t v;
    memcpy(&v, (const uint8_t *)base + 8 * i, 8);
    return v;
}

int rk_tfidf(rk_ctx *ctx, const void *params, const void *const *in, void *const *out) {
    const rk_tfidf_params *p = params;
    const int64_t *table = in[1];
    float *y = out[0];
    (void)ctx;
    if (p->table_len < 3) return RLX_E_ARG;
    int64_t ngrams = table[0], has_weights = table[1], ncols = table[2];
    if (ngrams < 0 || ncols < 0 || (p->idx_dtype != RLX_I32 && p->idx_dtype != RLX_I64)) return RLX_E_ARG;
    /* where the weights start: after every gram */
    int64_t at = 3;
    for (int64_t g = 0; g < ngrams; g++) {
        if (at + 2 > p->table_len || table[at] < 1 || table[at] > p->table_len) return RLX_E_ARG;
        at += 2 + table[at];
        if (at > p->table_len) return RLX_E_ARG;
    }
    const int64_t *weights = has_weights ? table + at : NULL;
    if (at + (has_weights ? ncols : 0) != p->table_len) return RLX_E_ARG;

    for (int64_t r = 0; r < p->rows; r++) {
        float *row_out = y + r * ncols;
        int64_t base = r * p->row_len;
        for (int64_t c = 0; c < ncols; c++) row_out[c] = 0;
        int64_t pos = 3;
        for (int64_t g = 0; g < ngrams; g++) {
            int64_t n = table[pos], col = table[pos + 1];
            const int64_t *items = table + pos + 2;
            pos += 2 + n;
            if (col < 0 || col >= ncols) return RLX_E_ARG;
            if (n < p->min_n || n > p->max_n) continue;
            int64_t max_d = n == 1 ? 1 : p->max_skip + 1;
            for (int64_t d = 1; d <= max_d; d++)
                for (int64_t s = 0; s + (n - 1) * d < p->row_len; s++) {
                    int64_t j = 0;
                    while (j < n && token_at(p->idx_dtype, in[0], base + s + j * d) == items[j]) j++;
                    if (j == n) row_out[col] += 1;
                }
        }
        for (int64_t c = 0; c < ncols; c++) {
            double w = 1;
            if (weights) memcpy(&w, &weights[c], 8);
            if (p->mode == 1) row_out[c] = row_out[c] > 0 ? (float)w : 0;
            else if (p->mode == 2) row_out[c] = (float)(row_out[c] * w);
        }
    }
    return 0;
}
