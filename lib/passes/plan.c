/* plan.c - liveness intervals and the arena plan.
 *
 * require: inferred shapes and dtypes, g->order (the schedule of live nodes).
 *
 * Step s is the s-th node of g->order. Each value that lives in the arena
 * gets an inclusive interval [first, last] of steps:
 *   - a graph input is copied in before step 0: first = 0;
 *   - a value produced at step s: first = s;
 *   - last = the last step that reads it; a graph output lives to the end
 *     (last = norder: it is copied out after the last step);
 *   - a value produced but never read (an unused second output) still gets a
 *     slot, [s, s], because its kernel writes it.
 * A value's own producing step overlaps the steps of its inputs, so an output
 * shares bytes with an input of its node only through assign_buffers: a view
 * op's output is its input's buffer, and an elementwise op may write in place
 * over an input of its shape that dies at that step.
 *
 * Weights are not in the arena: each weight that a live node reads (as an
 * input, or as a tensor attribute) gets an offset in the weights data
 * section, 64-byte aligned, in value-id order, so that the weights file is
 * the same for the same graph. Two cases are given an arena slot as well,
 * for the lowering to fill with a copy:
 *   - a graph output that is directly a weight: slot [0, norder], so the copy
 *     may happen at any time, and the weight also keeps its woff;
 *   - a graph input that is directly a graph output needs nothing special:
 *     it is the same value id, its slot is [0, norder], and the runtime copies
 *     the output out of the input's own slot.
 *
 * The offsets come from rlx_plan_intervals, the "greedy by size" best-fit
 * planner (as in TFLite's arena planner): buffers in decreasing size, each
 * put in the smallest gap between the already placed buffers whose
 * lifetimes overlap its own, else above all of them. It is O(n^2) in the
 * number of buffers, which is fine for graphs of thousands of values.
 * rlx_plan_verify checks the result independently of how it was found.
 */
#include <stdlib.h>

#include "rlx.h"
#include "passes.h"

#define ALIGN ((int64_t)RLX_ALIGN)

/* Rounds up to RLX_ALIGN; the caller has checked n <= INT64_MAX - ALIGN. */
static int64_t align_up(int64_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

static int intervals_overlap(int f0, int l0, int f1, int l1) { return f0 <= l1 && f1 <= l0; }

/* ---- the generic planner ---- */

typedef struct {
    int index;
    int64_t size;       /* aligned */
    int first, last;
} Buffer;

static int by_size_then_first(const void *pa, const void *pb) {
    const Buffer *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Orders tried by rlx_plan_intervals; the smallest arena wins. */
static int by_first_then_size(const void *pa, const void *pb) {
    const Buffer *a = pa, *b = pb;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int by_span_then_size(const void *pa, const void *pb) {
    const Buffer *a = pa, *b = pb;
    int sa = a->last - a->first, sb = b->last - b->first;
    if (sa != sb) return sa > sb ? -1 : 1;
    return by_size_then_first(pa, pb);
}

static int64_t plan_order(int n, const int64_t *sizes, const int *first, const int *last, int64_t *off_out,
                          int (*order)(const void *, const void *));

/* Best fit in three orders (largest first, earliest first, longest-lived
 * first); each is a valid packing, so the smallest is kept. Deterministic:
 * ties keep the earlier order. Each order costs O(n^2) where lifetimes
 * overlap a lot, so above PLAN_ONE_ORDER buffers only the first is tried
 * (65536 values live at once take 3 s that way). */
#define PLAN_ONE_ORDER 8192

int64_t rlx_plan_intervals(int n, const int64_t *sizes, const int *first, const int *last, int64_t *off_out) {
    int (*orders[])(const void *, const void *) = {by_size_then_first, by_first_then_size, by_span_then_size};
    int64_t best = -1;
    int64_t *tmp = rlx_alloc(sizeof(int64_t) * (size_t)(n + 1));
    size_t norders = n > PLAN_ONE_ORDER ? 1 : sizeof orders / sizeof orders[0];
    for (size_t k = 0; k < norders; k++) {
        int64_t arena = plan_order(n, sizes, first, last, tmp, orders[k]);
        if (best < 0 || arena < best) {
            best = arena;
            for (int i = 0; i < n; i++) off_out[i] = tmp[i];
        }
    }
    return best;
}

static int64_t plan_order(int n, const int64_t *sizes, const int *first, const int *last, int64_t *off_out,
                          int (*order)(const void *, const void *)) {
    RLX_ASSERT(n >= 0);
    Buffer *bufs = rlx_alloc(sizeof(Buffer) * (size_t)(n + 1));
    int nbufs = 0;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        RLX_ASSERT(sizes[i] >= 0 && sizes[i] <= INT64_MAX - ALIGN);
        RLX_ASSERT(first[i] <= last[i]);
        off_out[i] = 0;
        if (sizes[i] == 0) continue;
        int64_t size = align_up(sizes[i]);
        /* every offset is at most the sum of the sizes placed before it, so a
         * total that fits in int64 means no end below can overflow; the
         * callers check it (rlx_plan: "the arena ... overflows") */
        RLX_ASSERT(total <= INT64_MAX - size);
        total += size;
        bufs[nbufs].index = i;
        bufs[nbufs].size = size;
        bufs[nbufs].first = first[i];
        bufs[nbufs].last = last[i];
        nbufs++;
    }
    qsort(bufs, (size_t)nbufs, sizeof(Buffer), order);

    /* The placed buffers, kept sorted by (offset, end): the gaps between
     * those that overlap b's lifetime are read off in one walk, without
     * sorting b's conflicts again for every buffer. */
    int *placed = rlx_alloc(sizeof(int) * (size_t)(nbufs + 1));
    int64_t arena = 0;
    for (int k = 0; k < nbufs; k++) {
        const Buffer *b = &bufs[k];
        int64_t best = -1, best_gap = INT64_MAX, prev_end = 0;
        for (int j = 0; j < k; j++) {
            const Buffer *p = &bufs[placed[j]];
            if (!intervals_overlap(b->first, b->last, p->first, p->last)) continue;
            int64_t off = off_out[p->index], gap = off - prev_end;
            if (gap >= b->size && gap < best_gap) {
                best = prev_end;
                best_gap = gap;
            }
            if (off + p->size > prev_end) prev_end = off + p->size;
        }
        if (best < 0) best = prev_end;
        off_out[b->index] = best;
        if (best + b->size > arena) arena = best + b->size;
        /* insert k by (offset, end), as by_offset ordered the conflicts */
        int at = k;
        while (at > 0) {
            const Buffer *q = &bufs[placed[at - 1]];
            int64_t qo = off_out[q->index];
            if (qo < best || (qo == best && qo + q->size <= best + b->size)) break;
            placed[at] = placed[at - 1];
            at--;
        }
        placed[at] = k;
    }
    return arena;
}

/* ---- the graph plan ---- */

static void assign_buffers(const RlxGraph *g, RlxPlan *p, const char *planned, int concat_in_place);

static int64_t checked_add(const RlxGraph *g, int64_t a, int64_t b, const char *what) {
    if (a > INT64_MAX - b) rlx_error("%s: %s overflows 64 bits", g->file, what);
    return a + b;
}

/* Unaligned bytes of a value, with room to align it. */
static int64_t value_bytes_checked(const RlxGraph *g, int v) {
    int64_t bytes = rlx_value_bytes(&g->v[v]);
    if (bytes > INT64_MAX - ALIGN) rlx_error("%s: value '%s' is too large", g->file, g->v[v].name);
    return bytes;
}

RlxPlan *rlx_plan(RlxGraph *g) { return rlx_plan_ex(g, 0); }

RlxPlan *rlx_plan_ex(RlxGraph *g, int concat_in_place) {
    int nv = g->nv, norder = g->norder;
    RLX_ASSERT(g->order || norder == 0);
    RlxPlan *p = rlx_alloc(sizeof *p);
    p->off = rlx_alloc(sizeof(int64_t) * (size_t)(nv + 1));
    p->size = rlx_alloc(sizeof(int64_t) * (size_t)(nv + 1));
    p->woff = rlx_alloc(sizeof(int64_t) * (size_t)(nv + 1));
    p->first = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    p->last = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    /* planned[v]: the value needs an arena slot; wused[v]: a weight is read */
    char *planned = rlx_alloc((size_t)nv + 1);
    char *wused = rlx_alloc((size_t)nv + 1);
    int *made_at = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    char *in_order = rlx_alloc((size_t)g->nn + 1);
    for (int v = 0; v < nv; v++) {
        p->off[v] = -1;
        p->woff[v] = -1;
        p->first[v] = p->last[v] = -1;
        made_at[v] = -1;
    }

    /* production steps first, so that a read can be checked against them */
    for (int s = 0; s < norder; s++) {
        int id = g->order[s];
        RLX_ASSERT(id >= 0 && id < g->nn && !in_order[id] && !g->n[id].dead);
        in_order[id] = 1;
        const RlxNode *n = &g->n[id];
        for (int k = 0; k < n->nout; k++) {
            int v = n->out[k];
            if (v < 0) continue;
            RLX_ASSERT(v < nv && made_at[v] < 0 && !(g->v[v].flags & (RLX_V_INPUT | RLX_V_WEIGHT)));
            made_at[v] = s;
            planned[v] = 1;
            p->first[v] = p->last[v] = s;
        }
    }
    for (int k = 0; k < g->ninputs; k++) {
        int v = g->inputs[k];
        RLX_ASSERT(v >= 0 && v < nv && made_at[v] < 0);
        planned[v] = 1;
        p->first[v] = p->last[v] = 0;
    }
    for (int s = 0; s < norder; s++) {
        int id = g->order[s];
        const RlxNode *n = &g->n[id];
        for (int k = 0; k < n->nin; k++) {
            int v = n->in[k];
            if (v < 0) continue;
            RLX_ASSERT(v < nv);
            if (g->v[v].flags & RLX_V_WEIGHT) {
                wused[v] = 1;
                continue;
            }
            if (!planned[v]) rlx_node_error(g, id, "input '%s' is not produced by any node", g->v[v].name);
            RLX_ASSERT(made_at[v] < s);   /* inputs have made_at -1 */
            if (s > p->last[v]) p->last[v] = s;
        }
        for (int a = 0; a < n->nattr; a++)
            if (n->attr[a].kind == RLX_A_TENSOR && n->attr[a].tensor >= 0) {
                RLX_ASSERT(n->attr[a].tensor < nv);
                wused[n->attr[a].tensor] = 1;
            }
    }
    for (int k = 0; k < g->noutputs; k++) {
        int v = g->outputs[k];
        RLX_ASSERT(v >= 0 && v < nv);
        if (g->v[v].flags & RLX_V_WEIGHT) {
            /* a weight returned as an output: copied into a slot of its own */
            wused[v] = 1;
            planned[v] = 1;
            p->first[v] = 0;
        } else if (!planned[v]) {
            rlx_error("%s: output '%s' is not produced by any node", g->file, g->v[v].name);
        }
        p->last[v] = norder;
    }

    /* weights data section, in value-id order */
    int64_t wend = 0;
    for (int v = 0; v < nv; v++) {
        if (!wused[v]) continue;
        int64_t bytes = align_up(value_bytes_checked(g, v));
        p->woff[v] = wend;
        wend = checked_add(g, wend, bytes, "weights size");
    }
    p->weights_bytes = wend;

    /* Buffers: a view (Reshape, Flatten, ...) shares its input's buffer, and
     * an elementwise op whose input of the same size dies at that step
     * writes its output in place. p->buf[v] is the value that owns v's
     * buffer; the owner's interval covers every value sharing it. */
    assign_buffers(g, p, planned, concat_in_place);

    /* the arena: collect buffer owners, then place them */
    int nplan = 0;
    int *ids = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    int64_t *sizes = rlx_alloc(sizeof(int64_t) * (size_t)(nv + 1));
    int *firsts = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    int *lasts = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    int64_t *offs = rlx_alloc(sizeof(int64_t) * (size_t)(nv + 1));
    /* live bytes change by +size at first and -size after last */
    int64_t *delta = rlx_alloc(sizeof(int64_t) * (size_t)(norder + 2));
    int64_t naive = 0;
    for (int v = 0; v < nv; v++) {
        if (!planned[v]) continue;
        int64_t bytes = value_bytes_checked(g, v);
        p->size[v] = bytes;
        naive = checked_add(g, naive, align_up(bytes), "arena size");
        if (p->buf[v] != v) continue;
        ids[nplan] = v;
        sizes[nplan] = p->bufsize[v];
        firsts[nplan] = p->bfirst[v];
        lasts[nplan] = p->blast[v];
        nplan++;
        delta[p->bfirst[v]] += align_up(p->bufsize[v]);
        delta[p->blast[v] + 1] -= align_up(p->bufsize[v]);
    }
    p->naive_bytes = naive;
    /* every partial sum is at most naive, which fit, so these cannot overflow */
    int64_t live = 0;
    for (int s = 0; s <= norder; s++) {
        live += delta[s];
        if (live > p->lower_bound) p->lower_bound = live;
    }

    p->arena_bytes = rlx_plan_intervals(nplan, sizes, firsts, lasts, offs);
    for (int k = 0; k < nplan; k++) p->off[ids[k]] = offs[k];
    for (int v = 0; v < nv; v++)
        if (planned[v]) p->off[v] = p->off[p->buf[v]] + p->suboff[v];
    rlx_plan_verify(g, p);
    return p;
}

/* The value whose buffer `v` may share without a copy, or -1: the input of
 * a view op, or for an elementwise op an input of the output's dtype size
 * and shape (read at the same index it is written, so in place is safe). */
static int reuse_candidate(const RlxGraph *g, const RlxNode *n, int k, int out) {
    int v = n->in[k];
    if (v < 0 || (g->v[v].flags & RLX_V_WEIGHT)) return -1;
    const RlxValue *x = &g->v[v], *y = &g->v[out];
    if (rlx_value_bytes(x) != rlx_value_bytes(y)) return -1;
    if (rlx_ops[n->op].flags & RLX_OPF_VIEW) return k == 0 ? v : -1;
    if (!(rlx_ops[n->op].flags & RLX_OPF_ELT)) return -1;
    if (rlx_dtype_size(x->dtype) != rlx_dtype_size(y->dtype) || x->rank != y->rank) return -1;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] != y->dims[i]) return -1;
    return v;
}

/* Concat in place: a Concat whose inputs are contiguous parts of its output
 * (everything before the axis is 1: a batch of one along channels) takes as
 * a part each input that a node makes, that is neither a graph input nor a
 * graph output, whose part starts on an ALIGN boundary, and that no Concat
 * but this one (or, below, its chain) reads, once each: the input's buffer
 * becomes the output's, at its part's offset (suboff), and the output's
 * buffer lives from the first such input's step. The producers then write
 * straight into the concatenation and the lowering copies nothing for those
 * inputs (SqueezeNet's fire modules, a U-Net's skip connections).
 *
 * A chain: a Concat whose inputs begin with all of an earlier one's, in
 * order, along the same axis, extends it (DenseNet: each layer reads the
 * concatenation of the block's features so far, and the block's output is
 * the concatenation of all of them). The earlier output is then the later
 * one's prefix, so every output of the chain is the last one's buffer at
 * offset 0, and a feature read by several Concats of the chain at the same
 * offset is written once, in its place, for all of them. */
typedef struct {
    int node, y, axis, ext, prev;   /* ext: the Concat extending this one; prev: the one it extends */
} ConcatInfo;

static int concat_contiguous(const RlxGraph *g, const RlxPlan *p, const char *planned, const RlxNode *n, int node,
                             int *axis) {
    if (n->op != RLX_OP_CONCAT || n->nout != 1 || n->out[0] < 0 || !planned[n->out[0]] || p->buf[n->out[0]] != n->out[0])
        return 0;
    const RlxValue *yv = &g->v[n->out[0]];
    if (yv->flags & (RLX_V_INPUT | RLX_V_WEIGHT)) return 0;
    *axis = rlx_norm_axis(g, node, rlx_attr_i(n, "axis", 0), yv->rank);
    for (int k = 0; k < n->nin; k++)
        if (n->in[k] < 0) return 0;
    return rlx_prod(yv->dims, 0, *axis) == 1;
}

/* whether Concat a's inputs are the first of b's, in order, b having more */
static int concat_prefix(const RlxNode *a, const RlxNode *b) {
    if (a->nin >= b->nin) return 0;
    for (int k = 0; k < a->nin; k++)
        if (a->in[k] != b->in[k]) return 0;
    return 1;
}

/* v's buffer (with everything in it) becomes owner's at byte `at` */
static void concat_move(RlxPlan *p, int nv, int v, int owner, int64_t at) {
    for (int u = 0; u < nv; u++)
        if (u != v && p->buf[u] == v) p->buf[u] = owner, p->suboff[u] += at;
    p->buf[v] = owner;
    p->suboff[v] = at;
    if (p->bfirst[v] < p->bfirst[owner]) p->bfirst[owner] = p->bfirst[v];
    if (p->blast[v] > p->blast[owner]) p->blast[owner] = p->blast[v];
}

static void concat_parts(const RlxGraph *g, RlxPlan *p, const char *planned) {
    int nv = g->nv, nc = 0;
    int *uses = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    ConcatInfo *c = rlx_alloc(sizeof(ConcatInfo) * (size_t)(g->norder + 1));
    for (int s = 0; s < g->norder; s++) {
        const RlxNode *n = &g->n[g->order[s]];
        if (n->op != RLX_OP_CONCAT) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k] >= 0) uses[n->in[k]]++;
        int axis;
        if (!concat_contiguous(g, p, planned, n, g->order[s], &axis)) continue;
        c[nc] = (ConcatInfo){g->order[s], n->out[0], axis, -1, -1};
        /* the latest earlier one whose inputs begin this one's, not yet extended */
        for (int j = nc - 1; j >= 0; j--)
            if (c[j].ext < 0 && c[j].axis == axis && g->v[c[j].y].dtype == g->v[n->out[0]].dtype &&
                concat_prefix(&g->n[c[j].node], n)) {
                c[j].ext = nc;
                c[nc].prev = j;
                break;
            }
        nc++;
    }
    /* each chain from its last Concat, whose output owns the buffer */
    for (int last = 0; last < nc; last++) {
        if (c[last].ext >= 0) continue;
        int y = c[last].y;
        const RlxNode *n = &g->n[c[last].node];
        const RlxValue *yv = &g->v[y];
        int64_t es = rlx_dtype_size(yv->dtype), inner = rlx_prod(yv->dims, c[last].axis + 1, yv->rank) * es;
        /* the earlier outputs: the prefixes of this one */
        int members = 1;
        for (int j = c[last].prev; j >= 0; j = c[j].prev) {
            int yj = c[j].y;
            if (g->v[yj].flags & RLX_V_OUTPUT) break;   /* copied out of its own slot: the chain starts after it */
            concat_move(p, nv, yj, y, 0);
            members++;
        }
        /* the parts: input k is read by the chain's Concats from the first
         * that has it on, once each; alias it where no other Concat reads it */
        int64_t at = 0;
        for (int k = 0; k < n->nin; k++) {
            int x = n->in[k];
            const RlxValue *xv = &g->v[x];
            int64_t part = xv->dims[c[last].axis] * inner;
            int readers = 0, j = last;
            for (int m = 0; m < members; m++, j = c[j].prev)
                if (g->n[c[j].node].nin > k) readers++;
            if (planned[x] && uses[x] == readers && p->buf[x] == x && part > 0 && at % ALIGN == 0 &&
                rlx_dtype_size(xv->dtype) == es && !(xv->flags & (RLX_V_INPUT | RLX_V_OUTPUT | RLX_V_WEIGHT)))
                concat_move(p, nv, x, y, at);
            at += part;
        }
    }
}

static void assign_buffers(const RlxGraph *g, RlxPlan *p, const char *planned, int concat_in_place) {
    int nv = g->nv;
    p->buf = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    p->bfirst = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    p->blast = rlx_alloc(sizeof(int) * (size_t)(nv + 1));
    p->bufsize = rlx_alloc(sizeof(int64_t) * (size_t)(nv + 1));
    p->suboff = rlx_alloc(sizeof(int64_t) * (size_t)(nv + 1));
    for (int v = 0; v < nv; v++) {
        p->buf[v] = planned[v] ? v : -1;
        p->bfirst[v] = p->first[v];
        p->blast[v] = p->last[v];
        p->bufsize[v] = planned[v] ? rlx_value_bytes(&g->v[v]) : 0;
    }
    if (concat_in_place) concat_parts(g, p, planned);
    for (int s = 0; s < g->norder; s++) {
        const RlxNode *n = &g->n[g->order[s]];
        if (n->nout != 1 || n->out[0] < 0) continue;
        int y = n->out[0];
        if (p->buf[y] != y) continue;   /* a Concat's part */
        int view = (rlx_ops[n->op].flags & RLX_OPF_VIEW) != 0;
        for (int k = 0; k < n->nin; k++) {
            int x = reuse_candidate(g, n, k, y);
            if (x < 0 || !planned[x]) continue;
            int owner = p->buf[x];
            /* in place only where every value of that buffer is dead after
             * this step; a view may share a buffer that lives on */
            if (!view && p->blast[owner] > s) continue;
            p->buf[y] = owner;
            p->suboff[y] = p->suboff[x];
            if (p->last[y] > p->blast[owner]) p->blast[owner] = p->last[y];
            if (p->suboff[y] + p->bufsize[y] > p->bufsize[owner]) p->bufsize[owner] = p->suboff[y] + p->bufsize[y];
            break;
        }
    }
}

void rlx_plan_verify(const RlxGraph *g, const RlxPlan *p) {
    int nv = g->nv;
    RLX_ASSERT(p->arena_bytes >= 0 && p->arena_bytes % ALIGN == 0);
    RLX_ASSERT(p->weights_bytes >= 0 && p->weights_bytes % ALIGN == 0);
    RLX_ASSERT(p->lower_bound <= p->arena_bytes && p->arena_bytes <= p->naive_bytes);
    for (int v = 0; v < nv; v++) {
        if (p->off[v] >= 0) {
            RLX_ASSERT(p->off[v] % ALIGN == 0);
            RLX_ASSERT(p->size[v] >= 0 && p->size[v] <= p->arena_bytes - p->off[v]);
            RLX_ASSERT(p->first[v] >= 0 && p->first[v] <= p->last[v] && p->last[v] <= g->norder);
        } else {
            RLX_ASSERT(p->off[v] == -1);
        }
        if (p->woff[v] >= 0) {
            RLX_ASSERT(g->v[v].flags & RLX_V_WEIGHT);
            RLX_ASSERT(p->woff[v] % ALIGN == 0);
            RLX_ASSERT(rlx_value_bytes(&g->v[v]) <= p->weights_bytes - p->woff[v]);
        }
    }
    /* pairwise: quadratic, but it only compares numbers */
    for (int v = 0; v < nv; v++) {
        if (p->off[v] < 0) continue;
        int o = p->buf[v];
        RLX_ASSERT(o >= 0 && p->suboff[v] >= 0 && p->off[v] == p->off[o] + p->suboff[v] &&
                   p->suboff[v] + p->size[v] <= p->bufsize[o]);
        RLX_ASSERT(p->bfirst[o] <= p->first[v] && p->last[v] <= p->blast[o]);
    }
    for (int a = 0; a < nv; a++) {
        if (p->off[a] < 0 || p->buf[a] != a || p->bufsize[a] == 0) continue;
        int64_t a_end = p->off[a] + align_up(p->bufsize[a]);
        for (int b = a + 1; b < nv; b++) {
            if (p->off[b] < 0 || p->buf[b] != b || p->bufsize[b] == 0) continue;
            if (!intervals_overlap(p->bfirst[a], p->blast[a], p->bfirst[b], p->blast[b])) continue;
            int64_t b_end = p->off[b] + align_up(p->bufsize[b]);
            RLX_ASSERT(a_end <= p->off[b] || b_end <= p->off[a]);
        }
    }
    /* weights never share bytes: in id order, each starts after the last */
    int64_t wend = 0;
    for (int v = 0; v < nv; v++) {
        if (p->woff[v] < 0) continue;
        RLX_ASSERT(p->woff[v] >= wend);
        wend = p->woff[v] + rlx_value_bytes(&g->v[v]);
    }
}

void rlx_plan_print(const RlxGraph *g, const RlxPlan *p, FILE *f) {
    int nvalues = 0, nweights = 0;
    for (int v = 0; v < g->nv; v++) {
        if (p->off[v] >= 0) nvalues++;
        if (p->woff[v] >= 0) nweights++;
    }
    fprintf(f, "plan: arena %lld bytes, lower bound %lld, naive %lld (%d values, %d weights, weights %lld bytes)\n",
            (long long)p->arena_bytes, (long long)p->lower_bound, (long long)p->naive_bytes, nvalues, nweights,
            (long long)p->weights_bytes);
}
