/* test_plan.c - the interval planner, the graph plan, and dead-code removal.
 *
 * Expected offsets and sizes are derived by hand in the comments beside them
 * (the greedy-by-size best-fit rule applied step by step); the random tests
 * check the invariants with an independent O(n^2) checker and a lower bound
 * computed here, not by the planner.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "rlx.h"

static int64_t al(int64_t n) { return (n + 63) / 64 * 64; }

/* Checks alignment, containment and time+space disjointness; returns the
 * largest sum of aligned live sizes over steps [0, maxstep]. */
static int64_t check_intervals(int n, const int64_t *sizes, const int *first, const int *last, const int64_t *off,
                               int64_t arena, int maxstep) {
    int64_t max_end = 0;
    for (int i = 0; i < n; i++) {
        cr_assert(off[i] >= 0 && off[i] % 64 == 0, "buffer %d offset %lld", i, (long long)off[i]);
        if (sizes[i] == 0) {
            cr_assert_eq(off[i], 0);
            continue;
        }
        cr_assert(off[i] + al(sizes[i]) <= arena);
        if (off[i] + al(sizes[i]) > max_end) max_end = off[i] + al(sizes[i]);
        for (int j = i + 1; j < n; j++) {
            if (sizes[j] == 0 || first[i] > last[j] || first[j] > last[i]) continue;
            cr_assert(off[i] + al(sizes[i]) <= off[j] || off[j] + al(sizes[j]) <= off[i],
                      "buffers %d and %d overlap in time and space", i, j);
        }
    }
    cr_assert_eq(arena, max_end, "arena is the largest end");
    int64_t lb = 0;
    for (int s = 0; s <= maxstep; s++) {
        int64_t live = 0;
        for (int i = 0; i < n; i++)
            if (first[i] <= s && s <= last[i]) live += al(sizes[i]);
        if (live > lb) lb = live;
    }
    return lb;
}

/* ---- rlx_plan_intervals ---- */

Test(plan_intervals, chain_reuses_slot) {
    /* a -> b -> c -> d, each read by the next step: a [0,1], b [1,2], c [2,3],
     * d [3,4]. a at 0; b overlaps a -> 256; c overlaps only b -> the gap below
     * b -> 0 (a's slot); d overlaps only c -> 256. */
    int64_t sizes[] = {256, 256, 256, 256}, off[4];
    int first[] = {0, 1, 2, 3}, last[] = {1, 2, 3, 4};
    int64_t arena = rlx_plan_intervals(4, sizes, first, last, off);
    cr_assert_eq(arena, 512);
    cr_assert_eq(off[0], 0);
    cr_assert_eq(off[1], 256);
    cr_assert_eq(off[2], off[0]);
    cr_assert_eq(off[3], off[1]);
}

Test(plan_intervals, all_live_no_reuse) {
    /* aligned: 128 + 64 + 64 + 256 = 512, all live together */
    int64_t sizes[] = {100, 64, 1, 200}, off[4];
    int first[] = {0, 0, 2, 1}, last[] = {5, 5, 3, 4};
    int64_t arena = rlx_plan_intervals(4, sizes, first, last, off);
    cr_assert_eq(arena, 512);
    int64_t lb = check_intervals(4, sizes, first, last, off, arena, 5);
    cr_assert_eq(lb, 512);
    /* largest first: 200 -> 0, 100 -> 256, then the two 64s (ties by first:
     * index 1 (first 0) -> 384, index 2 (first 2) -> 448) */
    cr_assert_eq(off[3], 0);
    cr_assert_eq(off[0], 256);
    cr_assert_eq(off[1], 384);
    cr_assert_eq(off[2], 448);
}

Test(plan_intervals, best_fit_beats_first_fit) {
    /* Placement order (size desc, first asc, index): 0, 3, 4, 5, 1, 2.
     *   0: 256 [3,3] -> 0
     *   3: 256 [3,5] overlaps 0 -> 256
     *   4: 192 [0,4] overlaps 0,3 -> 512
     *   5: 192 [3,5] overlaps 0,3,4 -> 704
     *   1: 192 [5,5] overlaps 3 [256,512) and 5 [704,896): gaps [0,256) (256)
     *      and [512,704) (192); best fit takes the 192 gap -> 512
     *   2: 128 [4,5] overlaps 3,4,5,1: the only gap is [0,256) -> 0
     * arena 896 = the live bytes at step 3 (256+256+192+192), so optimal.
     * First fit would put 1 at 0, leave 2 no gap, and need 1024. */
    int64_t sizes[] = {256, 192, 128, 256, 192, 192}, off[6];
    int first[] = {3, 5, 4, 3, 0, 3}, last[] = {3, 5, 5, 5, 4, 5};
    int64_t arena = rlx_plan_intervals(6, sizes, first, last, off);
    int64_t expect[] = {0, 512, 0, 256, 512, 704};
    for (int i = 0; i < 6; i++) cr_assert_eq(off[i], expect[i], "buffer %d at %lld", i, (long long)off[i]);
    cr_assert_eq(arena, 896);
    cr_assert_eq(check_intervals(6, sizes, first, last, off, arena, 5), 896);
}

Test(plan_intervals, ties_by_first_then_index) {
    int64_t sizes[] = {128, 128, 64, 64, 64, 64}, off[6];
    int first[] = {0, 1, 0, 2, 1, 0}, last[] = {2, 1, 0, 2, 1, 0};
    int64_t arena = rlx_plan_intervals(6, sizes, first, last, off);
    /* order (size desc, then first, then index):
     *   0 (128,f0), 1 (128,f1), 2 (64,f0,i2), 5 (64,f0,i5), 4 (64,f1), 3 (64,f2), 1 (128,f1), 2 (64,f0,i2), 5 (64,f0,i5), 4 (64,f1), 3 (64,f2)
     *   0 [0,2] -> 0; 1 [1,1] overlaps 0 -> 128; 2 [0,0] overlaps 0 -> 128;
     *   5 [0,0] overlaps 0, 2 -> 192; 4 [1,1] overlaps 0, 1 -> 256;
     *   3 [2,2] overlaps 0 only -> 128 (lowest after 0; no gap below). */
    int64_t expect[] = {0, 128, 128, 128, 256, 192};
    for (int i = 0; i < 6; i++) cr_assert_eq(off[i], expect[i], "buffer %d at %lld", i, (long long)off[i]);
    cr_assert_eq(arena, 320);
    /* lower bound: step 0: 128+64+64 = 256; step 1: 128+128+64 = 320 */
    cr_assert_eq(check_intervals(6, sizes, first, last, off, arena, 2), 320);
}

Test(plan_intervals, fills_gaps_between_placed_buffers) {
    /* Placement order: A, B, C, D, E, F, G.
     *   A 256 [0,4] -> 0
     *   B 256 [0,0] overlaps A -> 256
     *   C 192 [2,4] overlaps A only -> 256
     *   D 128 [0,4] overlaps A [0,256), B [256,512), C [256,448) -> 512
     *   E 128 [1,1] overlaps A and D [512,640): gap [256,512) -> 256
     *   F  64 [1,1] overlaps A, E [256,384), D: gap [384,512) -> 384
     *   G  64 [3,3] overlaps A, C [256,448), D: the exact gap [448,512) -> 448 */
    int64_t sizes[] = {256, 256, 192, 128, 128, 64, 64}, off[7];
    int first[] = {0, 0, 2, 0, 1, 1, 3}, last[] = {4, 0, 4, 4, 1, 1, 3};
    int64_t arena = rlx_plan_intervals(7, sizes, first, last, off);
    int64_t expect[] = {0, 256, 256, 512, 256, 384, 448};
    for (int i = 0; i < 7; i++) cr_assert_eq(off[i], expect[i], "buffer %d at %lld", i, (long long)off[i]);
    cr_assert_eq(arena, 640);
    check_intervals(7, sizes, first, last, off, arena, 4);
}

Test(plan_intervals, zero_sizes_occupy_nothing) {
    /* 0 and 2 are empty: offset 0, no room taken; 100 -> 128 at 0, 64 -> 128 */
    int64_t sizes[] = {0, 100, 0, 64}, off[4] = {-5, -5, -5, -5};
    int first[] = {0, 0, 0, 0}, last[] = {1, 1, 1, 1};
    int64_t arena = rlx_plan_intervals(4, sizes, first, last, off);
    cr_assert_eq(arena, 192);
    cr_assert_eq(off[0], 0);
    cr_assert_eq(off[2], 0);
    cr_assert_eq(off[1], 0);
    cr_assert_eq(off[3], 128);
    int64_t none_sizes[] = {0, 0};
    int64_t none_off[2];
    cr_assert_eq(rlx_plan_intervals(2, none_sizes, first, last, none_off), 0);
    cr_assert_eq(rlx_plan_intervals(0, NULL, NULL, NULL, NULL), 0);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

Test(plan_intervals, random_lifetimes_are_valid) {
    enum { MAXN = 60 };
    for (int trial = 0; trial < 2000; trial++) {
        int n = 1 + (int)(next_rand() % MAXN);
        int steps = 1 + (int)(next_rand() % 30);
        int64_t sizes[MAXN], off[MAXN], off2[MAXN];
        int first[MAXN], last[MAXN];
        int64_t naive = 0;
        for (int i = 0; i < n; i++) {
            uint32_t kind = next_rand() % 8;
            /* mix of empty, tiny, exact multiples of 64, and large */
            sizes[i] = kind == 0 ? 0 : kind < 3 ? (int64_t)(next_rand() % 64) + 1
                     : kind < 6 ? 64 * (int64_t)(1 + next_rand() % 8) : (int64_t)(next_rand() % 100000);
            first[i] = (int)(next_rand() % (unsigned)steps);
            last[i] = first[i] + (int)(next_rand() % (unsigned)(steps - first[i]));
            naive += al(sizes[i]);
        }
        int64_t arena = rlx_plan_intervals(n, sizes, first, last, off);
        int64_t lb = check_intervals(n, sizes, first, last, off, arena, steps);
        cr_assert(arena >= lb, "trial %d: arena %lld below the lower bound %lld", trial, (long long)arena,
                  (long long)lb);
        cr_assert(arena <= naive);
        /* deterministic */
        cr_assert_eq(rlx_plan_intervals(n, sizes, first, last, off2), arena);
        cr_assert_arr_eq(off, off2, sizeof(int64_t) * (size_t)n);
    }
}

/* ---- rlx_plan on graphs ---- */

static int val(RlxGraph *g, const char *name, RlxDType dt, int rank, const int64_t *dims, int flags) {
    int v = rlx_value_add(g, name);
    g->v[v].dtype = dt;
    g->v[v].rank = rank;
    for (int i = 0; i < rank; i++) g->v[v].dims[i] = dims[i];
    g->v[v].flags = flags;
    if (flags & RLX_V_WEIGHT) g->v[v].data = rlx_alloc((size_t)rlx_value_bytes(&g->v[v]));
    return v;
}

static int node1(RlxGraph *g, const char *name, RlxOp op, int a, int b, int out) {
    int in[2] = {a, b};
    return rlx_node_add(g, name, op, b >= 0 ? 2 : 1, in, 1, &out);
}

static void set_io(RlxGraph *g, int nin, const int *in, int nout, const int *out) {
    /* memcpy from NULL is undefined even for 0 bytes (UBSan says so) */
    g->inputs = rlx_alloc(sizeof(int) * (size_t)(nin + 1));
    if (nin) memcpy(g->inputs, in, sizeof(int) * (size_t)nin);
    g->ninputs = nin;
    g->outputs = rlx_alloc(sizeof(int) * (size_t)(nout + 1));
    if (nout) memcpy(g->outputs, out, sizeof(int) * (size_t)nout);
    g->noutputs = nout;
}

static void set_order(RlxGraph *g, int n, const int *order) {
    g->order = rlx_alloc(sizeof(int) * (size_t)(n + 1));
    memcpy(g->order, order, sizeof(int) * (size_t)n);
    g->norder = n;
}

static void cleanup(void) { rlx_arena_free_all(); }

Test(plan, mlp_chain, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("mlp.rlxg");
    int64_t d14[] = {1, 4}, d43[] = {4, 3}, d3[] = {3}, d100[] = {100}, d13[] = {1, 3};
    int x = val(g, "x", RLX_F32, 2, d14, RLX_V_INPUT);            /* 16 B */
    int w = val(g, "w", RLX_F32, 2, d43, RLX_V_WEIGHT);           /* 48 B */
    int b = val(g, "b", RLX_F32, 1, d3, RLX_V_WEIGHT);            /* 12 B */
    int u = val(g, "unused", RLX_F32, 1, d100, RLX_V_WEIGHT);     /* read by no node */
    int h = val(g, "h", RLX_F32, 2, d13, 0);
    int a = val(g, "a", RLX_F32, 2, d13, 0);
    int y = val(g, "y", RLX_F32, 2, d13, RLX_V_OUTPUT);
    /* node ids differ from steps on purpose */
    int relu = node1(g, "relu", RLX_OP_RELU, a, -1, y);
    int add = node1(g, "add", RLX_OP_ADD, h, b, a);
    int mm = node1(g, "mm", RLX_OP_MATMUL, x, w, h);
    set_io(g, 1, &x, 1, &y);
    set_order(g, 3, (int[]){mm, add, relu});
    RlxPlan *p = rlx_plan(g);

    /* intervals: x [0,0], h [0,1], a [1,2], y [2,3] (live to the end) */
    cr_assert_eq(p->first[x], 0);
    cr_assert_eq(p->last[x], 0);
    cr_assert_eq(p->first[h], 0);
    cr_assert_eq(p->last[h], 1);
    cr_assert_eq(p->first[a], 1);
    cr_assert_eq(p->last[a], 2);
    cr_assert_eq(p->first[y], 2);
    cr_assert_eq(p->last[y], 3);
    cr_assert_eq(p->size[x], 16);
    cr_assert_eq(p->size[y], 12);
    /* weights: in id order, aligned; no arena slot */
    cr_assert_eq(p->woff[w], 0);
    cr_assert_eq(p->woff[b], 64);
    cr_assert_eq(p->woff[u], -1);
    cr_assert_eq(p->woff[x], -1);
    cr_assert_eq(p->weights_bytes, 128);
    cr_assert_eq(p->off[w], -1);
    cr_assert_eq(p->off[b], -1);
    cr_assert_eq(p->off[u], -1);
    cr_assert_eq(p->first[w], -1);
    cr_assert_eq(p->size[w], 0);
    /* four 64-byte values; add and relu write in place (h dies at step 1,
     * a at step 2), so two buffers: x [0,0] and h=a=y [0,3] */
    cr_assert_eq(p->naive_bytes, 256);
    cr_assert_eq(p->lower_bound, 128);
    cr_assert_eq(p->buf[a], h);
    cr_assert_eq(p->buf[y], h);
    cr_assert_eq(p->blast[h], 3);
    /* equal sizes and firsts: x (lower id) is placed first at 0, then h */
    cr_assert_eq(p->arena_bytes, 128);
    cr_assert_eq(p->off[x], 0);
    cr_assert_eq(p->off[h], 64);
    cr_assert_eq(p->off[a], 64);
    cr_assert_eq(p->off[y], 64);

    FILE *f = tmpfile();
    cr_assert(f);
    rlx_plan_print(g, p, f);
    char line[256] = {0};
    rewind(f);
    cr_assert(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_str_eq(line, "plan: arena 128 bytes, lower bound 128, naive 256 (4 values, 2 weights, weights 128 bytes)\n");
}

Test(plan, unused_second_output_keeps_a_slot, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("split.rlxg");
    int64_t d4[] = {4}, d2[] = {2};
    int x = val(g, "x", RLX_F32, 1, d4, RLX_V_INPUT);
    int s0 = val(g, "s0", RLX_F32, 1, d2, 0);
    int s1 = val(g, "s1", RLX_F32, 1, d2, 0);
    int y = val(g, "y", RLX_F32, 1, d2, RLX_V_OUTPUT);
    int split = rlx_node_add(g, "split", RLX_OP_SPLIT, 1, &x, 2, (int[]){s0, s1});
    int relu = node1(g, "relu", RLX_OP_RELU, s0, -1, y);
    set_io(g, 1, &x, 1, &y);
    set_order(g, 2, (int[]){split, relu});
    RlxPlan *p = rlx_plan(g);
    cr_assert_eq(p->first[s1], 0);
    cr_assert_eq(p->last[s1], 0);
    cr_assert(p->off[s1] >= 0);
    cr_assert_eq(p->first[s0], 0);
    cr_assert_eq(p->last[s0], 1);
    cr_assert_eq(p->first[y], 1);
    cr_assert_eq(p->last[y], 2);
    /* step 0: x, s0, s1 = 192; step 1: s0, y = 128; step 2: y = 64 */
    cr_assert_eq(p->lower_bound, 192);
    cr_assert_eq(p->naive_bytes, 256);
    /* relu writes y in place over s0, which dies at step 1 */
    cr_assert_eq(p->arena_bytes, 192);
    cr_assert_neq(p->off[s1], p->off[s0]);
    cr_assert_neq(p->off[s1], p->off[x]);
    cr_assert_eq(p->off[y], p->off[s0]);
}

Test(plan, input_and_weight_as_outputs, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("io.rlxg");
    int64_t d8[] = {8}, d2[] = {2};
    int x = val(g, "x", RLX_F32, 1, d8, RLX_V_INPUT | RLX_V_OUTPUT);    /* 32 B */
    int w = val(g, "w", RLX_I64, 1, d2, RLX_V_WEIGHT | RLX_V_OUTPUT);   /* 16 B */
    int y = val(g, "y", RLX_F32, 1, d8, RLX_V_OUTPUT);
    int relu = node1(g, "relu", RLX_OP_RELU, x, -1, y);
    set_io(g, 1, &x, 3, (int[]){x, w, y});
    set_order(g, 1, &relu);
    RlxPlan *p = rlx_plan(g);
    /* all three live over [0, 1] */
    cr_assert_eq(p->first[x], 0);
    cr_assert_eq(p->last[x], 1);
    cr_assert_eq(p->first[w], 0);
    cr_assert_eq(p->last[w], 1);
    cr_assert_eq(p->first[y], 0);
    cr_assert_eq(p->last[y], 1);
    cr_assert_eq(p->woff[w], 0);
    cr_assert(p->off[w] >= 0);
    cr_assert_eq(p->size[w], 16);
    cr_assert_eq(p->weights_bytes, 64);
    cr_assert_eq(p->arena_bytes, 192);
    cr_assert_eq(p->lower_bound, 192);
    cr_assert_eq(p->naive_bytes, 192);
}

Test(plan, empty_schedule, .fini = cleanup) {
    /* the model returns its input: one slot, live over [0, 0] */
    RlxGraph *g = rlx_graph_new("id.rlxg");
    int64_t d3[] = {3};
    int x = val(g, "x", RLX_U8, 1, d3, RLX_V_INPUT | RLX_V_OUTPUT);
    set_io(g, 1, &x, 1, &x);
    RlxPlan *p = rlx_plan(g);
    cr_assert_eq(p->off[x], 0);
    cr_assert_eq(p->first[x], 0);
    cr_assert_eq(p->last[x], 0);
    cr_assert_eq(p->arena_bytes, 64);
    cr_assert_eq(p->lower_bound, 64);
    cr_assert_eq(p->weights_bytes, 0);
}

Test(plan, arena_overflow_is_an_error, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("big.rlxg");
    int64_t huge[] = {(int64_t)1 << 60};   /* 2^62 bytes each; two overflow */
    int x = val(g, "x", RLX_F32, 1, huge, RLX_V_INPUT);
    int y = val(g, "y", RLX_F32, 1, huge, RLX_V_OUTPUT);
    int relu = node1(g, "relu", RLX_OP_RELU, x, -1, y);
    set_io(g, 1, &x, 1, &y);
    set_order(g, 1, &relu);
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_assert(strstr(rlx_diag.msg, "big.rlxg: ") == rlx_diag.msg, "%s", rlx_diag.msg);
        cr_assert(strstr(rlx_diag.msg, "overflows"), "%s", rlx_diag.msg);
        return;
    }
    rlx_plan(g);
    rlx_diag.jmp = NULL;
    cr_assert_fail("no error for a 2^63-byte arena");
}

Test(plan, dangling_input_is_an_error, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("bad.rlxg");
    int64_t d2[] = {2};
    int x = val(g, "x", RLX_F32, 1, d2, 0);      /* neither input nor produced */
    int y = val(g, "y", RLX_F32, 1, d2, RLX_V_OUTPUT);
    int relu = node1(g, "relu", RLX_OP_RELU, x, -1, y);
    set_io(g, 0, NULL, 1, &y);
    set_order(g, 1, &relu);
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_assert_str_eq(rlx_diag.msg, "bad.rlxg: node 'relu' (Relu): input 'x' is not produced by any node");
        return;
    }
    rlx_plan(g);
    rlx_diag.jmp = NULL;
    cr_assert_fail("no error for a dangling input");
}

/* ---- rlx_dce ---- */

Test(dce, removes_unused_branches, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("dce.rlxg");
    int64_t d4[] = {4}, d2[] = {2};
    int x = val(g, "x", RLX_F32, 1, d4, RLX_V_INPUT);
    int wdead = val(g, "wdead", RLX_F32, 1, d4, RLX_V_WEIGHT);
    int s0 = val(g, "s0", RLX_F32, 1, d2, 0);
    int s1 = val(g, "s1", RLX_F32, 1, d2, 0);
    int y = val(g, "y", RLX_F32, 1, d2, RLX_V_OUTPUT);
    int z = val(g, "z", RLX_F32, 1, d4, 0);
    int q = val(g, "q", RLX_F32, 1, d4, 0);
    int r = val(g, "r", RLX_F32, 1, d2, 0);
    /* dead chain first in the array, so that order of ids does not matter */
    int exp_ = node1(g, "exp", RLX_OP_EXP, z, -1, q);        /* q unused -> dead */
    int add = node1(g, "add", RLX_OP_ADD, x, wdead, z);      /* only feeds exp -> dead */
    int neg = node1(g, "neg", RLX_OP_NEG, s1, -1, r);        /* reads a live value, unused */
    int relu = node1(g, "relu", RLX_OP_RELU, s0, -1, y);
    int split = rlx_node_add(g, "split", RLX_OP_SPLIT, 1, &x, 2, (int[]){s0, s1});
    set_io(g, 1, &x, 1, &y);
    rlx_dce(g);
    cr_assert(g->n[exp_].dead);
    cr_assert(g->n[add].dead);
    cr_assert(g->n[neg].dead);
    cr_assert_not(g->n[relu].dead);
    cr_assert_not(g->n[split].dead, "a node with one used output stays");

    /* the weight only the dead add read is not planned */
    set_order(g, 2, (int[]){split, relu});
    RlxPlan *p = rlx_plan(g);
    cr_assert_eq(p->woff[wdead], -1);
    cr_assert_eq(p->weights_bytes, 0);
    cr_assert_eq(p->off[z], -1);
    cr_assert_eq(p->off[q], -1);
    cr_assert_eq(p->off[r], -1);
    cr_assert(p->off[s1] >= 0, "the unused output of a live node still has a slot");
}

Test(dce, output_read_by_another_node_and_no_outputs, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("dce2.rlxg");
    int64_t d2[] = {2};
    int x = val(g, "x", RLX_F32, 1, d2, RLX_V_INPUT);
    int a = val(g, "a", RLX_F32, 1, d2, RLX_V_OUTPUT);
    int b = val(g, "b", RLX_F32, 1, d2, RLX_V_OUTPUT);
    int n0 = node1(g, "n0", RLX_OP_RELU, x, -1, a);
    int n1 = node1(g, "n1", RLX_OP_NEG, a, -1, b);
    set_io(g, 1, &x, 2, (int[]){a, b});
    rlx_dce(g);
    cr_assert_not(g->n[n0].dead);
    cr_assert_not(g->n[n1].dead);

    /* with no outputs at all, every node is dead; already dead ones stay dead */
    g->noutputs = 0;
    rlx_dce(g);
    cr_assert(g->n[n0].dead);
    cr_assert(g->n[n1].dead);
    g->noutputs = 1;   /* a is an output again, but its producer was removed */
    rlx_dce(g);
    cr_assert(g->n[n0].dead);
}

/* A view shares its input's buffer even while the input lives on; an
 * elementwise op must not write over an input that is read later. */
Test(plan, views_share_and_inplace_waits_for_last_use, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("view.rlxg");
    int64_t d23[] = {2, 3}, d6[] = {6}, d32[] = {3, 2};
    int x = val(g, "x", RLX_F32, 2, d23, RLX_V_INPUT);            /* 24 B */
    int shp = val(g, "shape", RLX_I64, 1, (int64_t[]){1}, RLX_V_WEIGHT);
    int r = val(g, "r", RLX_F32, 1, d6, 0);
    int e = val(g, "e", RLX_F32, 2, d23, 0);
    int y = val(g, "y", RLX_F32, 2, d23, RLX_V_OUTPUT);
    int z = val(g, "z", RLX_F32, 2, d32, RLX_V_OUTPUT);
    int resh = node1(g, "resh", RLX_OP_RESHAPE, x, shp, r);     /* step 0: view of x */
    int ex = node1(g, "exp", RLX_OP_EXP, x, -1, e);              /* step 1: x still read at 2 */
    int add = node1(g, "add", RLX_OP_ADD, e, x, y);              /* step 2: e and x die here */
    int resh2 = node1(g, "resh2", RLX_OP_RESHAPE, r, shp, z);   /* step 3: view of r, an output */
    set_io(g, 1, &x, 2, (int[]){y, z});
    set_order(g, 4, (int[]){resh, ex, add, resh2});
    RlxPlan *p = rlx_plan(g);
    cr_assert_eq(p->buf[r], x);
    cr_assert_eq(p->buf[z], x);
    cr_assert_eq(p->blast[x], 4);            /* z is an output: x's buffer lives to the end */
    cr_assert_eq(p->buf[e], e);              /* x is read later: exp is not in place */
    cr_assert_eq(p->buf[y], e);              /* e dies at add: y takes its bytes (x lives on via z) */
    cr_assert_eq(p->off[r], p->off[x]);
    cr_assert_neq(p->off[e], p->off[x]);
    /* two buffers live together from step 1 on: 64 + 64 */
    cr_assert_eq(p->lower_bound, 128);
    cr_assert_eq(p->arena_bytes, 128);
}

/* Concat in place (rlx_plan_ex, the C target): the inputs a node makes,
 * that no other Concat reads, whose part starts on a 64-byte boundary,
 * become parts of the output's buffer (its bytes at the part's offset); a
 * graph input, an input another Concat also reads and a part at an
 * unaligned offset keep their own buffers (and their copies). The plain
 * plan shares nothing. */
Test(plan, concat_parts_in_place, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("concat.rlxg");
    int64_t d16[] = {1, 16}, d8[] = {1, 8}, d32[] = {2, 16}, d24[] = {1, 24};
    int x = val(g, "x", RLX_F32, 2, d16, RLX_V_INPUT);
    int a = val(g, "a", RLX_F32, 2, d16, 0), b = val(g, "b", RLX_F32, 2, d16, 0);
    int c = val(g, "c", RLX_F32, 2, d8, 0), d = val(g, "d", RLX_F32, 2, d16, 0);
    int y = val(g, "y", RLX_F32, 2, d32, RLX_V_OUTPUT), y2 = val(g, "y2", RLX_F32, 2, d24, RLX_V_OUTPUT);
    int y3 = val(g, "y3", RLX_F32, 2, d32, RLX_V_OUTPUT);
    int n0 = node1(g, "relu", RLX_OP_RELU, x, -1, a);
    int n1 = node1(g, "exp", RLX_OP_EXP, x, -1, b);
    int n2 = rlx_node_add(g, "neg", RLX_OP_SLICE, 1, (int[]){x}, 1, &c);
    int n3 = node1(g, "abs", RLX_OP_ABS, x, -1, d);
    int cat = rlx_node_add(g, "cat", RLX_OP_CONCAT, 2, (int[]){a, b}, 1, &y);       /* axis 0: [2, 16] */
    int cat2 = rlx_node_add(g, "cat2", RLX_OP_CONCAT, 2, (int[]){c, d}, 1, &y2);    /* d at byte 32 */
    int cat3 = rlx_node_add(g, "cat3", RLX_OP_CONCAT, 2, (int[]){x, b}, 1, &y3);    /* x: an input */
    set_io(g, 1, &x, 3, (int[]){y, y2, y3});
    set_order(g, 7, (int[]){n0, n1, n2, n3, cat, cat2, cat3});
    rlx_attr_add(g, cat2, "axis", RLX_A_INT)->i = 1;
    RlxPlan *p = rlx_plan_ex(g, 1);
    cr_assert_eq(p->buf[a], y);
    cr_assert_eq(p->off[a], p->off[y]);
    cr_assert_eq(p->buf[b], b, "b is read by two Concats");
    cr_assert_eq(p->buf[c], y2);
    cr_assert_eq(p->off[c], p->off[y2]);
    cr_assert_eq(p->buf[d], d, "d's part starts at byte 32");
    cr_assert_eq(p->buf[x], x, "a graph input keeps its slot");
    cr_assert_eq(p->bfirst[y], p->first[a], "the output's buffer lives from its part's step");
    cr_assert_eq(p->bfirst[y2], p->first[c]);
    RlxPlan *q = rlx_plan(g);
    cr_assert_eq(q->buf[a], a);
    cr_assert_eq(q->buf[c], c);
}

Test(plan, concat_part_at_its_offset, .fini = cleanup) {
    /* two parts of 64 floats: the second at byte 256 of the output */
    RlxGraph *g = rlx_graph_new("concat2.rlxg");
    int64_t d64[] = {1, 64, 1}, d128[] = {1, 128, 1};
    int x = val(g, "x", RLX_F32, 3, d64, RLX_V_INPUT);
    int a = val(g, "a", RLX_F32, 3, d64, 0), b = val(g, "b", RLX_F32, 3, d64, 0);
    int y = val(g, "y", RLX_F32, 3, d128, RLX_V_OUTPUT);
    int n0 = node1(g, "relu", RLX_OP_RELU, x, -1, a);
    int n1 = node1(g, "exp", RLX_OP_EXP, x, -1, b);
    int cat = rlx_node_add(g, "cat", RLX_OP_CONCAT, 2, (int[]){a, b}, 1, &y);
    rlx_attr_add(g, cat, "axis", RLX_A_INT)->i = 1;
    set_io(g, 1, &x, 1, &y);
    set_order(g, 3, (int[]){n0, n1, cat});
    RlxPlan *p = rlx_plan_ex(g, 1);
    cr_assert_eq(p->buf[a], y);
    cr_assert_eq(p->buf[b], y);
    cr_assert_eq(p->suboff[b], 256);
    cr_assert_eq(p->off[b], p->off[y] + 256);
    /* the output's buffer covers both parts from the first's step: x, a, b
     * and y would need 4 x 256 bytes apart; x and y's buffer are all */
    cr_assert_eq(p->arena_bytes, 256 + 512);
}

/* A chain of Concats (DenseNet's block): each begins with all of the one
 * before, so every output is the last one's buffer at offset 0 and each
 * feature is written once at its offset, for all of them; a feature that a
 * Concat outside the chain also reads keeps its own slot. */
Test(plan, concat_chain_shares_one_buffer, .fini = cleanup) {
    RlxGraph *g = rlx_graph_new("chain.rlxg");
    int64_t d16[] = {1, 16}, d32[] = {1, 32}, d48[] = {1, 48};
    int x = val(g, "x", RLX_F32, 2, d16, RLX_V_INPUT);
    int x0 = val(g, "x0", RLX_F32, 2, d16, 0), f1 = val(g, "f1", RLX_F32, 2, d16, 0);
    int f2 = val(g, "f2", RLX_F32, 2, d16, 0), c2 = val(g, "c2", RLX_F32, 2, d32, 0);
    int c3 = val(g, "c3", RLX_F32, 2, d48, 0), y = val(g, "y", RLX_F32, 2, d48, RLX_V_OUTPUT);
    int o = val(g, "o", RLX_F32, 2, d32, RLX_V_OUTPUT);
    int n0 = node1(g, "relu", RLX_OP_RELU, x, -1, x0);
    int n1 = node1(g, "neg", RLX_OP_NEG, x0, -1, f1);
    int k2 = rlx_node_add(g, "cat2", RLX_OP_CONCAT, 2, (int[]){x0, f1}, 1, &c2);
    int n2 = node1(g, "exp", RLX_OP_EXP, c2, -1, f2);
    int k3 = rlx_node_add(g, "cat3", RLX_OP_CONCAT, 3, (int[]){x0, f1, f2}, 1, &c3);
    int n3 = node1(g, "abs", RLX_OP_ABS, c3, -1, y);
    int k4 = rlx_node_add(g, "other", RLX_OP_CONCAT, 2, (int[]){f1, x}, 1, &o);   /* outside the chain */
    for (int k = 0; k < g->nn; k++)
        if (g->n[k].op == RLX_OP_CONCAT) rlx_attr_add(g, k, "axis", RLX_A_INT)->i = 1;
    set_io(g, 1, &x, 2, (int[]){y, o});
    set_order(g, 7, (int[]){n0, n1, k2, n2, k3, n3, k4});
    RlxPlan *p = rlx_plan_ex(g, 1);
    cr_assert_eq(p->buf[c2], c3, "the earlier output is the last one's prefix");
    cr_assert_eq(p->off[c2], p->off[c3]);
    cr_assert_eq(p->buf[x0], c3);
    cr_assert_eq(p->off[x0], p->off[c3]);
    cr_assert_eq(p->buf[f2], c3);
    cr_assert_eq(p->off[f2], p->off[c3] + 128);
    cr_assert_eq(p->buf[f1], f1, "another Concat reads f1");
    cr_assert_eq(p->bfirst[c3], p->first[x0]);
    /* without the other reader, f1 joins too, at byte 64 */
    g->n[k4].in[0] = x0;
    RlxPlan *q = rlx_plan_ex(g, 1);
    cr_assert_eq(q->buf[f1], c3);
    cr_assert_eq(q->off[f1], q->off[c3] + 64);
    cr_assert_eq(q->buf[x0], x0, "now another Concat reads x0");
}
