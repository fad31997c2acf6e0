/* report.c - what the memory plan did, for people: --report and --arena-limit.
 *
 * The text report lists every arena buffer (offset, size, lifetime, the
 * values sharing it) and what is live at the peak step. The SVG draws each
 * buffer as a rectangle: schedule steps left to right, arena offsets top to
 * bottom, so reuse shows as rectangles stacked in the same rows. Both are
 * deterministic. --arena-limit fails the compile when the plan is larger,
 * naming what is live at the peak.
 */
#include <string.h>

#include "rlx.h"

/* The step where the live buffers' bytes peak, and those bytes. */
static int peak_step(const RlxGraph *g, const RlxPlan *p, int64_t *bytes) {
    int best = 0;
    int64_t best_live = -1;
    for (int s = 0; s <= g->norder; s++) {
        int64_t live = 0;
        for (int v = 0; v < g->nv; v++)
            if (p->off[v] >= 0 && p->buf[v] == v && p->bfirst[v] <= s && s <= p->blast[v])
                live += rlx_align64(p->bufsize[v]);
        if (live > best_live) {
            best_live = live;
            best = s;
        }
    }
    *bytes = best_live;
    return best;
}

static const char *step_name(const RlxGraph *g, int s) {
    if (s >= g->norder) return "(outputs copied out)";
    const RlxNode *n = &g->n[g->order[s]];
    return rlx_fmt("node '%s' (%s)", n->name, rlx_ops[n->op].name);
}

/* "a (4096 B), b+c (1024 B)": the buffers live at step s, largest first. */
static const char *live_at(const RlxGraph *g, const RlxPlan *p, int s, int limit) {
    int *ids = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    int n = 0;
    for (int v = 0; v < g->nv; v++)
        if (p->off[v] >= 0 && p->buf[v] == v && p->bfirst[v] <= s && s <= p->blast[v]) ids[n++] = v;
    for (int i = 1; i < n; i++)   /* insertion sort by size, then id: stable */
        for (int j = i; j > 0 && p->bufsize[ids[j]] > p->bufsize[ids[j - 1]]; j--) {
            int t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    RlxBuf b = {0};
    for (int i = 0; i < n && i < limit; i++)
        rlx_buf_printf(&b, "%s'%s' (%lld B)", i ? ", " : "", g->v[ids[i]].name, (long long)p->bufsize[ids[i]]);
    if (n > limit) rlx_buf_printf(&b, ", and %d more", n - limit);
    return b.data ? b.data : "nothing";
}

void rlx_check_arena_limit(const RlxGraph *g, const RlxPlan *p, int64_t limit) {
    if (p->arena_bytes <= limit) return;
    int64_t peak;
    int s = peak_step(g, p, &peak);
    rlx_error("%s: the arena needs %lld bytes, over the limit of %lld; live at the peak (step %d, %s): %s", g->file,
              (long long)p->arena_bytes, (long long)limit, s, step_name(g, s), live_at(g, p, s, 8));
}

/* Which tensors the precision pass stored in another type than their
 * declared f32 (precision.c), and the bytes that saved. */
static void report_storage(const RlxGraph *g, const RlxPlan *p, RlxBuf *out) {
    int64_t saved_a = 0, saved_w = 0, kept = 0, kept_bytes = 0;
    int nchanged = 0;
    RlxBuf rows = {0};
    for (int v = 0; v < g->nv; v++) {
        const RlxValue *x = &g->v[v];
        int in_arena = p->off[v] >= 0 && !(x->flags & RLX_V_WEIGHT), in_weights = (x->flags & RLX_V_WEIGHT) && p->woff[v] >= 0;
        if (!in_arena && !in_weights) continue;
        if (x->flags & RLX_V_STORAGE) {
            int64_t now = rlx_value_bytes(x), was = rlx_value_numel(x) * 4, d = was - now;
            if (in_weights) saved_w += d;
            else saved_a += d;
            nchanged++;
            rlx_buf_printf(&rows, "  %-6s %-7s %10lld B (f32: %lld)  %s\n", in_weights ? "weight" : "arena",
                           rlx_dtype_name(x->dtype), (long long)now, (long long)was, x->name);
        } else if (x->dtype == RLX_F32 && in_arena) {
            kept++;
            kept_bytes += rlx_value_bytes(x);
        }
    }
    rlx_buf_printf(out, "\nstorage (--precision, --weights): %d tensors stored in another type than their f32, "
                        "saving %lld bytes of tensors and %lld of weights; %lld arena tensors (%lld bytes) are f32\n",
                   nchanged, (long long)saved_a, (long long)saved_w, (long long)kept, (long long)kept_bytes);
    if (nchanged) rlx_buf_printf(out, "%s", rows.data);
}

void rlx_report_text(const RlxGraph *g, const RlxPlan *p, RlxBuf *out) {
    int64_t peak;
    int s = peak_step(g, p, &peak);
    rlx_buf_printf(out, "rlxc memory report: %s (%s)\n\n", g->name, g->file);
    rlx_buf_printf(out, "schedule steps:  %d\n", g->norder);
    rlx_buf_printf(out, "arena bytes:     %lld\n", (long long)p->arena_bytes);
    rlx_buf_printf(out, "lower bound:     %lld (largest sum of simultaneously live buffers)\n", (long long)p->lower_bound);
    rlx_buf_printf(out, "naive sum:       %lld (every value in its own slot)\n", (long long)p->naive_bytes);
    rlx_buf_printf(out, "weights bytes:   %lld\n", (long long)p->weights_bytes);
    if (p->lower_bound)
        rlx_buf_printf(out, "arena / bound:   %.4f\n", (double)p->arena_bytes / (double)p->lower_bound);
    rlx_buf_printf(out, "\npeak: step %d, %s, %lld bytes live: %s\n", s, step_name(g, s), (long long)peak,
                   live_at(g, p, s, 1 << 20));
    /* before the buffer table, which stays the last section: scripts read it to the end */
    report_storage(g, p, out);
    rlx_buf_printf(out, "\n%-10s %-10s %-11s  %s\n", "offset", "bytes", "steps", "buffer (values sharing it)");
    /* buffers by offset, then first step */
    int *ids = rlx_alloc(sizeof(int) * (size_t)(g->nv + 1));
    int n = 0;
    for (int v = 0; v < g->nv; v++)
        if (p->off[v] >= 0 && p->buf[v] == v) ids[n++] = v;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0; j--) {
            int a = ids[j - 1], b = ids[j];
            if (p->off[a] < p->off[b] || (p->off[a] == p->off[b] && p->bfirst[a] <= p->bfirst[b])) break;
            ids[j - 1] = b;
            ids[j] = a;
        }
    for (int i = 0; i < n; i++) {
        int o = ids[i];
        RlxBuf names = {0};
        rlx_buf_printf(&names, "%s", g->v[o].name);
        for (int v = 0; v < g->nv; v++)
            if (v != o && p->off[v] >= 0 && p->buf[v] == o) rlx_buf_printf(&names, ", %s", g->v[v].name);
        rlx_buf_printf(out, "%-10lld %-10lld [%4d,%4d]  %s\n", (long long)p->off[o], (long long)p->bufsize[o],
                       p->bfirst[o], p->blast[o], names.data);
    }
}

static const char *xml_escape(const char *s) {
    RlxBuf b = {0};
    for (; *s; s++) {
        switch (*s) {
        case '<': rlx_buf_printf(&b, "&lt;"); break;
        case '>': rlx_buf_printf(&b, "&gt;"); break;
        case '&': rlx_buf_printf(&b, "&amp;"); break;
        case '"': rlx_buf_printf(&b, "&quot;"); break;
        default: rlx_buf_put(&b, s, 1);
        }
    }
    return b.data ? b.data : "";
}

void rlx_report_svg(const RlxGraph *g, const RlxPlan *p, RlxBuf *out) {
    const double W = 960, H = 540, left = 70, top = 40, right = 20, bottom = 50;
    double pw = W - left - right, ph = H - top - bottom;
    int steps = g->norder + 1;
    double arena = p->arena_bytes ? (double)p->arena_bytes : 1;
    int64_t peak;
    int ps = peak_step(g, p, &peak);
    rlx_buf_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                        "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
    rlx_buf_printf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    rlx_buf_printf(out, "<text x=\"%.0f\" y=\"22\" font-size=\"15\">%s: arena %lld bytes, lower bound %lld, "
                        "naive %lld</text>\n", left, xml_escape(g->name), (long long)p->arena_bytes,
                   (long long)p->lower_bound, (long long)p->naive_bytes);
    /* the peak step */
    rlx_buf_printf(out, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"#fff3c4\"/>\n",
                   left + pw * ps / steps, top, pw / steps, ph);
    for (int v = 0; v < g->nv; v++) {
        if (p->off[v] < 0 || p->buf[v] != v || !p->bufsize[v]) continue;
        double x = left + pw * p->bfirst[v] / steps, w = pw * (p->blast[v] - p->bfirst[v] + 1) / steps;
        double y = top + ph * (double)p->off[v] / arena, h = ph * (double)rlx_align64(p->bufsize[v]) / arena;
        unsigned hue = (unsigned)(v * 47u % 360u);
        rlx_buf_printf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"hsl(%u,60%%,70%%)\" "
                            "stroke=\"#333\" stroke-width=\"0.5\"><title>%s: %lld bytes at offset %lld, steps %d-%d"
                            "</title></rect>\n", x, y, w, h < 0.5 ? 0.5 : h, hue, xml_escape(g->v[v].name),
                       (long long)p->bufsize[v], (long long)p->off[v], p->bfirst[v], p->blast[v]);
        /* a label where it fits (about 6 px a character at this size) */
        size_t fit = (size_t)((w - 4) / 6);
        const char *name = g->v[v].name;
        if (strlen(name) > fit && fit >= 4) name = rlx_fmt("..%s", name + strlen(name) - (fit - 2));
        if (h >= 12 && strlen(name) <= fit)
            rlx_buf_printf(out, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\">%s</text>\n", x + 2, y + 11,
                           xml_escape(name));
    }
    /* axes */
    rlx_buf_printf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"black\"/>\n",
                   left, top, pw, ph);
    rlx_buf_printf(out, "<text x=\"%.0f\" y=\"%.0f\">schedule step (0 to %d; peak at step %d shaded)</text>\n",
                   left, H - 15, g->norder, ps);
    rlx_buf_printf(out, "<text x=\"14\" y=\"%.0f\" transform=\"rotate(-90 14 %.0f)\">arena offset (0 at top, "
                        "%lld at bottom)</text>\n", top + ph / 2 + 90, top + ph / 2 + 90, (long long)p->arena_bytes);
    rlx_buf_printf(out, "</svg>\n");
}
