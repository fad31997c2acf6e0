/* test_memsched.c - the memory-aware schedule and the planner on adversarial
 * lifetimes.
 *
 * rlx_schedule_memory: graphs whose plain order (Kahn, smallest node id
 * first) keeps every wide intermediate live at once, built so on purpose by
 * the order the nodes are added in. The expected schedules and the planner's
 * lower bound for both orders are worked out in the comments from the
 * greedy rule (run the ready node that grows the live bytes least) and the
 * intervals of plan.c; the arena must then stay within 2% of the bound.
 * Random DAGs check that the reordering is always a valid topological order
 * of the same nodes.
 *
 * rlx_plan_intervals: structured lifetimes (nested, staircase, ping-pong,
 * comb, a long chain) where the optimum is known by hand, beside the
 * random and best-fit cases of test_plan.c.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "rlx.h"

#define DIMS(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__}
#define IDS(...) (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__}

static RlxGraph *g;
static int counter;

static void cleanup(void) { rlx_arena_free_all(); }

static void fresh(void) {
    g = rlx_graph_new("memsched.rlxg");
    counter = 0;
}

static void set_shape(int v, RlxDType dt, int rank, const int64_t *dims) {
    g->v[v].dtype = dt;
    g->v[v].rank = rank;
    if (rank) memcpy(g->v[v].dims, dims, sizeof(int64_t) * (size_t)rank);
}

static int input(const char *name, int rank, const int64_t *dims) {
    int v = rlx_value_add(g, name);
    set_shape(v, RLX_F32, rank, dims);
    g->v[v].flags |= RLX_V_INPUT;
    g->inputs = rlx_realloc(g->inputs, sizeof(int) * (size_t)g->ninputs, sizeof(int) * (size_t)(g->ninputs + 1));
    g->inputs[g->ninputs++] = v;
    return v;
}

/* A weight of zeros. */
static int weight(RlxDType dt, int rank, const int64_t *dims) {
    int v = rlx_value_add(g, rlx_fmt("w%d", counter++));
    set_shape(v, dt, rank, dims);
    g->v[v].flags |= RLX_V_WEIGHT;
    g->v[v].data = rlx_alloc((size_t)rlx_value_bytes(&g->v[v]) + 1);
    return v;
}

static int axes(int64_t a) {
    int v = weight(RLX_I64, 1, (int64_t[]){1});
    memcpy((void *)g->v[v].data, &a, sizeof a);
    return v;
}

/* A one-output node; returns its output value. */
static int node(const char *op, int nin, const int *in) {
    int out = rlx_value_add(g, rlx_fmt("v%d", counter++));
    int o = rlx_op_from_name(op);
    cr_assert(o >= 0, "no op %s", op);
    rlx_node_add(g, rlx_fmt("n%d", counter++), (RlxOp)o, nin, in, 1, &out);
    return out;
}

/* ReduceSum over all axes of a 2-D value, to a scalar. */
static int reduce_all(int v) {
    int a = node("ReduceSum", IDS(v, weight(RLX_I64, 1, (int64_t[]){2})));
    int64_t both[2] = {0, 1};
    memcpy((void *)g->v[g->n[g->nn - 1].in[1]].data, both, sizeof both);
    rlx_attr_add(g, g->nn - 1, "keepdims", RLX_A_INT)->i = 0;
    return a;
}

static void output(int v) {
    g->outputs = rlx_realloc(g->outputs, sizeof(int) * (size_t)g->noutputs, sizeof(int) * (size_t)(g->noutputs + 1));
    g->outputs[g->noutputs++] = v;
    g->v[v].flags |= RLX_V_OUTPUT;
}

static void prepare(void) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        rlx_diag.jmp = NULL;
        cr_assert_fail("unexpected error: %s", rlx_diag.msg);
    }
    for (int i = 0; i < g->nn; i++) rlx_attr_check(g, i);
    rlx_schedule(g);
    rlx_infer(g);
    rlx_diag.jmp = NULL;
}

/* Every live node exactly once, each after the producers of its inputs. */
static void check_topological(void) {
    int live = 0;
    for (int i = 0; i < g->nn; i++) live += !g->n[i].dead;
    cr_assert_eq(g->norder, live);
    int *step = rlx_alloc(sizeof(int) * (size_t)(g->nn + 1));
    for (int i = 0; i < g->nn; i++) step[i] = -1;
    for (int s = 0; s < g->norder; s++) {
        int id = g->order[s];
        cr_assert(id >= 0 && id < g->nn && !g->n[id].dead);
        cr_assert_eq(step[id], -1, "node %d scheduled twice", id);
        step[id] = s;
    }
    for (int s = 0; s < g->norder; s++) {
        const RlxNode *n = &g->n[g->order[s]];
        for (int k = 0; k < n->nin; k++) {
            int v = n->in[k];
            if (v < 0 || g->v[v].producer < 0) continue;
            cr_assert(step[g->v[v].producer] >= 0 && step[g->v[v].producer] < s,
                      "step %d ('%s') reads '%s' before it is computed", s, n->name, g->v[v].name);
        }
    }
}

static int *copy_order(void) {
    int *o = rlx_alloc(sizeof(int) * (size_t)(g->norder + 1));
    memcpy(o, g->order, sizeof(int) * (size_t)g->norder);
    return o;
}

static void within_2_percent(const RlxPlan *p) {
    cr_assert(p->arena_bytes * 100 <= p->lower_bound * 102, "arena %lld is over 1.02 x the lower bound %lld",
              (long long)p->arena_bytes, (long long)p->lower_bound);
}

/* ---- rlx_schedule_memory ---- */

/* x [16] (64 B) fans out to 8 wide values b_i = x + c_i ([64,16], 4096 B),
 * each reduced to a scalar s_i (64 B aligned), all summed into y. The Adds
 * get the smallest ids, so the plain order runs all of them first:
 *   steps 0-7 Add_i, 8-15 ReduceSum_i, 16 Sum
 *   x [0,7], b_i [i, 8+i], s_i [8+i, 16] (y writes over s_0: [8,17])
 *   step 7: x + 8 b = 64 + 32768 = 32832 (step 8: 8 b + s_0, the same)
 * The memory-aware order runs each ReduceSum right after its Add (-4032
 * bytes beats +4096; ties go to the lower plain position):
 *   A0 R0 A1 R1 ... A7 R7 Sum: x [0,14], b_i [2i, 2i+1], s_i [2i+1, 16]
 *   step 14: x + b_7 + s_0..s_6 = 64 + 4096 + 448 = 4608
 *   step 15: b_7 + s_0..s_7 = 4096 + 512 = 4608 */
Test(memsched, wide_fan_out, .fini = cleanup) {
    fresh();
    enum { K = 8 };
    int x = input("x", DIMS(16));
    int b[K], s[K];
    for (int i = 0; i < K; i++) b[i] = node("Add", IDS(x, weight(RLX_F32, DIMS(64, 16))));
    for (int i = 0; i < K; i++) s[i] = reduce_all(b[i]);
    int y = node("Sum", K, s);
    output(y);
    prepare();

    RlxPlan *plain = rlx_plan(g);
    cr_assert_eq(plain->lower_bound, 32832);
    int *plain_order = copy_order();

    rlx_schedule_memory(g);
    check_topological();
    for (int i = 0; i < K; i++) {
        cr_assert_eq(g->order[2 * i], plain_order[i], "step %d is not Add_%d", 2 * i, i);
        cr_assert_eq(g->order[2 * i + 1], plain_order[K + i], "step %d is not ReduceSum_%d", 2 * i + 1, i);
    }
    cr_assert_eq(g->order[2 * K], plain_order[2 * K]);
    RlxPlan *p = rlx_plan(g);
    cr_assert_eq(p->lower_bound, 4608);
    cr_assert(p->lower_bound < plain->lower_bound);
    within_2_percent(p);
    within_2_percent(plain);
    cr_assert_eq(p->naive_bytes, plain->naive_bytes, "the same values either way");
}

/* Two branches x -> Add (wide) -> Relu -> Exp -> ReduceSum, joined by an
 * Add; node ids interleave the branches, so the plain order does too:
 *   A0 B0 A1 B1 A2 B2 AR BR Y: Relu and Exp write in place, so each branch
 *   is one 4096 B buffer: a [0,6], b [1,7]; x [0,1]
 *   step 1: x + a + b = 8256
 * Memory-aware: after A0 the branch's Relu (0 bytes) beats B0 (+4096):
 *   A0 A1 A2 AR B0 B1 B2 BR Y: x [0,4], a [0,3], aR [3,8] (Y over it),
 *   b [4,7], bR [7,8]
 *   step 3: x + a + aR = 4224; step 4: x + aR + b = 4224 */
Test(memsched, interleaved_branches_run_one_at_a_time, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(16));
    int a0 = node("Add", IDS(x, weight(RLX_F32, DIMS(64, 16))));
    int b0 = node("Add", IDS(x, weight(RLX_F32, DIMS(64, 16))));
    int a1 = node("Relu", IDS(a0));
    int b1 = node("Relu", IDS(b0));
    int a2 = node("Exp", IDS(a1));
    int b2 = node("Exp", IDS(b1));
    int ar = reduce_all(a2);
    int br = reduce_all(b2);
    int y = node("Add", IDS(ar, br));
    output(y);
    prepare();
    RlxPlan *plain = rlx_plan(g);
    cr_assert_eq(plain->lower_bound, 8256);
    int *po = copy_order();   /* A0 B0 A1 B1 A2 B2 AR BR Y */
    rlx_schedule_memory(g);
    check_topological();
    int want[] = {po[0], po[2], po[4], po[6], po[1], po[3], po[5], po[7], po[8]};
    for (int i = 0; i < 9; i++) cr_assert_eq(g->order[i], want[i], "step %d", i);
    RlxPlan *p = rlx_plan(g);
    cr_assert_eq(p->lower_bound, 4224);
    within_2_percent(p);
    within_2_percent(plain);
}

Test(memsched, a_chain_keeps_its_order, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(8, 8));
    int v = x;
    v = node("Relu", IDS(v));
    v = node("Add", IDS(v, weight(RLX_F32, DIMS(4, 8, 8))));   /* grows: still the only choice */
    v = node("Exp", IDS(v));
    v = reduce_all(node("Reshape", IDS(v, weight(RLX_I64, DIMS(2)))));
    memcpy((void *)g->v[g->n[g->nn - 2].in[1]].data, (int64_t[]){32, 8}, 2 * sizeof(int64_t));
    output(v);
    prepare();
    int *po = copy_order();
    rlx_schedule_memory(g);
    cr_assert_arr_eq(g->order, po, sizeof(int) * (size_t)g->norder);
}

/* A graph output is never freed: reading it for the last time gains
 * nothing, so the greedy rule prefers the branch that frees a real
 * intermediate. x -> o = Exp(x) (an output, 4096 B) and x -> t = Neg(x);
 * from there, Relu(o) ([64,16], +4096) and Abs(t) (in place: 4096 - 4096
 * = 0) are ready: Abs goes first although its id is larger. */
Test(memsched, outputs_are_not_freed, .fini = cleanup) {
    fresh();
    int x = input("x", DIMS(64, 16));
    int o = node("Exp", IDS(x));
    int t = node("Neg", IDS(x));
    int r = node("Relu", IDS(o));
    int a = node("Abs", IDS(t));
    output(o);
    output(r);
    output(a);
    prepare();
    rlx_schedule_memory(g);
    check_topological();
    cr_assert_eq(g->order[2], g->v[a].producer, "Abs (frees t) before Relu (frees nothing)");
    cr_assert_eq(g->order[3], g->v[r].producer);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* Random DAGs of small [16] and wide [R,16] values: widening Adds,
 * elementwise ops, reductions back to [16]. Every unread value is an
 * output. The reordered schedule must be a valid order of the same nodes;
 * the planner verifies its own plan (rlx_plan_verify) on both. */
Test(memsched, random_dags_stay_valid, .fini = cleanup) {
    for (int trial = 0; trial < 200; trial++) {
        fresh();
        /* rows[k]: 0 for a [16] value, else the rows of a [rows,16] one */
        int pool[64], np = 0;
        int64_t rows[64];
        pool[np] = input("x", DIMS(16));
        rows[np++] = 0;
        int nnodes = 3 + (int)(next_rand() % 40);
        for (int k = 0; k < nnodes && np < 64; k++) {
            int ia = (int)(next_rand() % (unsigned)np), a = pool[ia];
            int64_t r = rows[ia];
            int v;
            switch (next_rand() % 4) {
            case 0:   /* widen a [16] value, or add a weight of a wide one's shape */
                if (!r) r = 1 + (int64_t)(next_rand() % 32);
                v = node("Add", IDS(a, weight(RLX_F32, DIMS(r, 16))));
                break;
            case 1: v = node(next_rand() % 2 ? "Relu" : "Exp", IDS(a)); break;
            case 2: {   /* with another value of the same shape, if there is one */
                int ib = (int)(next_rand() % (unsigned)np);
                v = node("Mul", IDS(a, rows[ib] == r ? pool[ib] : a));
                break;
            }
            default:
                if (r) {
                    v = node("ReduceSum", IDS(a, axes(0)));
                    rlx_attr_add(g, g->nn - 1, "keepdims", RLX_A_INT)->i = 0;
                    r = 0;
                } else {
                    v = node("Neg", IDS(a));
                }
                break;
            }
            pool[np] = v;
            rows[np++] = r;
        }
        /* unread values become outputs */
        char *read = rlx_alloc((size_t)g->nv + 1);
        for (int i = 0; i < g->nn; i++)
            for (int k = 0; k < g->n[i].nin; k++) read[g->n[i].in[k]] = 1;
        for (int i = 0; i < g->nn; i++)
            if (!read[g->n[i].out[0]]) output(g->n[i].out[0]);
        prepare();
        RlxPlan *plain = rlx_plan(g);
        rlx_schedule_memory(g);
        check_topological();
        RlxPlan *p = rlx_plan(g);
        cr_assert_eq(p->naive_bytes, plain->naive_bytes);
        cr_assert(p->arena_bytes >= p->lower_bound);
        rlx_arena_free_all();
    }
}

/* ---- rlx_plan_intervals on structured lifetimes ---- */

static int64_t live_peak(int n, const int64_t *sizes, const int *first, const int *last) {
    int maxs = 0;
    for (int i = 0; i < n; i++)
        if (last[i] > maxs) maxs = last[i];
    int64_t lb = 0;
    for (int s = 0; s <= maxs; s++) {
        int64_t live = 0;
        for (int i = 0; i < n; i++)
            if (first[i] <= s && s <= last[i]) live += (sizes[i] + 63) / 64 * 64;
        if (live > lb) lb = live;
    }
    return lb;
}

static void check_disjoint(int n, const int64_t *sizes, const int *first, const int *last, const int64_t *off,
                           int64_t arena) {
    for (int i = 0; i < n; i++) {
        cr_assert(off[i] % 64 == 0 && off[i] + (sizes[i] + 63) / 64 * 64 <= arena);
        for (int j = i + 1; j < n; j++) {
            if (!sizes[i] || !sizes[j] || first[i] > last[j] || first[j] > last[i]) continue;
            cr_assert(off[i] + (sizes[i] + 63) / 64 * 64 <= off[j] || off[j] + (sizes[j] + 63) / 64 * 64 <= off[i],
                      "buffers %d and %d overlap", i, j);
        }
    }
}

Test(plan_adversarial, nested_intervals_all_live_at_the_middle, .fini = cleanup) {
    /* [i, 2N-1-i]: all 40 overlap at steps N-1 and N, so nothing is shared:
     * the arena is the sum of the aligned sizes, sizes 1..40 x 50 bytes */
    enum { N = 40 };
    int64_t sizes[N], off[N], sum = 0;
    int first[N], last[N];
    for (int i = 0; i < N; i++) {
        sizes[i] = 50 * (int64_t)(i + 1);
        first[i] = i;
        last[i] = 2 * N - 1 - i;
        sum += (sizes[i] + 63) / 64 * 64;
    }
    int64_t arena = rlx_plan_intervals(N, sizes, first, last, off);
    check_disjoint(N, sizes, first, last, off, arena);
    cr_assert_eq(arena, sum);
    cr_assert_eq(live_peak(N, sizes, first, last), sum);
}

Test(plan_adversarial, staircase_reaches_the_bound, .fini = cleanup) {
    /* buffer i: 64*(i+1) bytes over [i, i+1]; neighbours overlap. The two
     * largest, 39 and 38, overlap at step 39: bound 64*(40+39) = 5056. By
     * size: 39 -> 0, 38 -> 2560, 37 (overlaps 38 only) -> 0, 36 (overlaps
     * 37 [0,2432)) -> 2432, and so on, alternating: the bound is met. */
    enum { N = 40 };
    int64_t sizes[N], off[N];
    int first[N], last[N];
    for (int i = 0; i < N; i++) {
        sizes[i] = 64 * (int64_t)(i + 1);
        first[i] = i;
        last[i] = i + 1;
    }
    int64_t arena = rlx_plan_intervals(N, sizes, first, last, off);
    check_disjoint(N, sizes, first, last, off, arena);
    cr_assert_eq(live_peak(N, sizes, first, last), 64 * (40 + 39));
    cr_assert_eq(arena, 64 * (40 + 39));
    cr_assert_eq(off[39], 0);
    cr_assert_eq(off[38], 2560);
    cr_assert_eq(off[37], 0);
    cr_assert_eq(off[36], 2432);
}

Test(plan_adversarial, long_ping_pong_chain, .fini = cleanup) {
    /* 3000 equal buffers, each live with the next only: two slots */
    enum { N = 3000 };
    int64_t *sizes = rlx_alloc(sizeof(int64_t) * N), *off = rlx_alloc(sizeof(int64_t) * N);
    int *first = rlx_alloc(sizeof(int) * N), *last = rlx_alloc(sizeof(int) * N);
    for (int i = 0; i < N; i++) {
        sizes[i] = 1000;
        first[i] = i;
        last[i] = i + 1;
    }
    int64_t arena = rlx_plan_intervals(N, sizes, first, last, off);
    cr_assert_eq(arena, 2 * 1024);
    for (int i = 1; i < N; i++) cr_assert_neq(off[i], off[i - 1]);
}

Test(plan_adversarial, comb_of_short_wide_and_long_narrow, .fini = cleanup) {
    /* 10 narrow buffers (64 B) live over everything, 20 wide ones (10000 B)
     * each for one step: bound 10*64 + 10048; the wide ones share one slot */
    enum { N = 30 };
    int64_t sizes[N], off[N];
    int first[N], last[N];
    for (int i = 0; i < 10; i++) {
        sizes[i] = 64;
        first[i] = 0;
        last[i] = 19;
    }
    for (int i = 10; i < N; i++) {
        sizes[i] = 10000;
        first[i] = last[i] = i - 10;
    }
    int64_t arena = rlx_plan_intervals(N, sizes, first, last, off);
    check_disjoint(N, sizes, first, last, off, arena);
    cr_assert_eq(arena, 640 + 10048);
    cr_assert_eq(live_peak(N, sizes, first, last), arena);
    for (int i = 11; i < N; i++) cr_assert_eq(off[i], off[10]);
}

Test(plan_adversarial, alternating_big_and_small, .fini = cleanup) {
    /* big i over [2i, 2i+1], small i over [2i+1, 2i+2]: each small overlaps
     * two bigs, never another small; the bigs are disjoint in time. Bound:
     * big + small = 8192 + 64. */
    enum { N = 50 };
    int64_t sizes[2 * N], off[2 * N];
    int first[2 * N], last[2 * N];
    for (int i = 0; i < N; i++) {
        sizes[2 * i] = 8192;
        first[2 * i] = 2 * i;
        last[2 * i] = 2 * i + 1;
        sizes[2 * i + 1] = 1;
        first[2 * i + 1] = 2 * i + 1;
        last[2 * i + 1] = 2 * i + 2;
    }
    int64_t arena = rlx_plan_intervals(2 * N, sizes, first, last, off);
    check_disjoint(2 * N, sizes, first, last, off, arena);
    cr_assert_eq(arena, 8192 + 64);
}

Test(plan_adversarial, identical_lifetimes_stack_in_size_order, .fini = cleanup) {
    /* all live over [0, 3]: placed largest first, ties by index */
    int64_t sizes[] = {64, 640, 64, 6400, 1}, off[5];
    int first[] = {0, 0, 0, 0, 0}, last[] = {3, 3, 3, 3, 3};
    int64_t arena = rlx_plan_intervals(5, sizes, first, last, off);
    /* 6400 -> 0, 640 -> 6400, 64 (index 0) -> 7040, 64 (index 2) -> 7104, 1 -> 7168 */
    int64_t want[] = {7040, 6400, 7104, 0, 7168};
    for (int i = 0; i < 5; i++) cr_assert_eq(off[i], want[i], "buffer %d at %lld", i, (long long)off[i]);
    cr_assert_eq(arena, 7232);
}
