/* test_rnn_f32.c - the f32 recurrent kernel (runtime_min/rk_rnn.c,
 * rk_rnn_f32) against the generic one (rk_rnn, double precision, which the
 * ONNX node tests check), over every cell, direction, layout and option the
 * f32 kernel takes: initial states, peepholes, clip, input_forget,
 * linear_before_reset, Relu, a batch that is not a whole number of the
 * GEMM's 4-row blocks,
 * sizes that are not multiples of a vector, several blocks of steps, and an
 * empty sequence. W and R are packed here as rlxc's prepare packs them
 * (lib/codegen_c/prepare_c.c); the cell entries (rk_rnn_f32_lstm, ...) must
 * agree with the general one bit for bit and refuse another cell, and runs
 * on a pool of threads (products split by rows and by columns) with one
 * thread's bits.
 *
 * Built also for AVX2 and AVX-512 (Makefile ISA_UNIT): rk_rnn.c is compiled
 * once and reaches its per-instruction-set parts (the activations, the fused
 * LSTM gates, the GEMM's few-rows entry) through rlx_isa.c's dispatch, so
 * those builds force the variant they were compiled for (RLX_ISA) before
 * the first call, and the general entry's fused gates are checked against
 * the cell entry's separate passes in that variant.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_gemm.h"
#include "rk_rnn.h"
#include "rlx_rt.h"
#include "rlx_scalar.h"

#define IN(...) ((const void *const[]){__VA_ARGS__})
#define OUT(...) ((void *const[]){__VA_ARGS__})

typedef struct {
    int cell, direction, layout, h0, c0, peep, clip, input_forget, lbr, relu;
    int64_t seq, batch, input, hidden;
    int threads;   /* > 1: also run on a pool of this many, for the same bits */
} Case;

#if defined(RK_ISA)
#include <stdlib.h>
#define ISA_NAME_(x) #x
#define ISA_NAME(x) ISA_NAME_(x)
/* every test process runs the variant this binary was built for */
__attribute__((constructor)) static void force_isa(void) {
    setenv("RLX_ISA", ISA_NAME(RK_ISA), 1);
    if (rlx_isa_init() != RLX_OK) abort();
}
#endif

static uint32_t seed = 12345;
static float rnd(void) {   /* uniform in [-1, 1) */
    seed = seed * 1664525u + 1013904223u;
    return (float)((seed >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}
static float *rand_floats(int64_t n, float scale) {
    float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) p[i] = scale * rnd();
    return p;
}

/* W or R of one direction (rows x k) packed as prepare_c.c packs it. */
static int64_t pack(const float *src, int64_t rows, int64_t k, float *dst) {
    if (dst) rk_sgemm_pack_b(rows, k, src, k, 1, dst);
    return (int64_t)(rk_sgemm_packed_b_size(rows, k) / sizeof(float));
}

static void run_case(Case c) {
    int64_t dirs = c.direction == 2 ? 2 : 1, gates = c.cell == 0 ? 1 : c.cell == 1 ? 3 : 4;
    int64_t g = gates * c.hidden, hid = c.hidden, nacts = c.cell + 1;
    int64_t nx = c.seq * c.batch * c.input, ny = c.seq * dirs * c.batch * hid, ns = dirs * c.batch * hid;
    float *x = rand_floats(nx, 1.5f), *w = rand_floats(dirs * g * c.input, 0.6f), *r = rand_floats(dirs * g * hid, 0.6f);
    float *b = rand_floats(dirs * 2 * g, 0.5f), *h0 = rand_floats(ns, 0.8f), *c0 = rand_floats(ns, 0.8f);
    float *pp = rand_floats(dirs * 3 * hid, 0.5f);

    /* the fields both kernels' params share, set once for each */
#define RNN_COMMON(q)                                                                                        \
    do {                                                                                                     \
        memset(&(q), 0, sizeof(q));                                                                          \
        (q).cell = c.cell, (q).seq = c.seq, (q).batch = c.batch, (q).input = c.input, (q).hidden = hid;      \
        (q).direction = c.direction, (q).layout = c.layout, (q).has_b = 1, (q).has_h0 = c.h0;                \
        (q).has_c0 = c.c0, (q).has_p = c.peep, (q).input_forget = c.input_forget;                            \
        (q).linear_before_reset = c.lbr, (q).has_clip = c.clip, (q).clip = 0.9;                              \
    } while (0)
    rk_rnn_params ref;
    RNN_COMMON(ref);
    ref.dtype = ref.x_dtype = ref.y_dtype = RLX_F32;
    rk_rnn_f32_params p;
    RNN_COMMON(p);
#undef RNN_COMMON
    /* ONNX defaults (RNN tanh; GRU sigmoid, tanh; LSTM sigmoid, tanh, tanh), or Relu for RNN */
    static const int64_t gen[3][3] = {{RK_ACT_TANH}, {RK_ACT_SIGMOID, RK_ACT_TANH}, {RK_ACT_SIGMOID, RK_ACT_TANH, RK_ACT_TANH}};
    static const int64_t f32[3][3] = {{RS_ACT_TANH}, {RS_ACT_SIGMOID, RS_ACT_TANH}, {RS_ACT_SIGMOID, RS_ACT_TANH, RS_ACT_TANH}};
    for (int k = 0; k < nacts * dirs; k++) {
        ref.acts[k] = c.relu ? RK_ACT_RELU : gen[c.cell][k % nacts];
        p.acts[k] = c.relu ? RS_ACT_RELU : f32[c.cell][k % nacts];
    }

    /* packed weights */
    int gru = c.cell == 1;
    int64_t split = gru ? pack(NULL, 2 * hid, hid, NULL) : 0, wstep = pack(NULL, g, c.input, NULL);
    int64_t rstep = gru ? split + pack(NULL, hid, hid, NULL) : pack(NULL, g, hid, NULL);
    float *wp = malloc(sizeof(float) * (size_t)(dirs * wstep)), *rp = malloc(sizeof(float) * (size_t)(dirs * rstep));
    for (int64_t d = 0; d < dirs; d++) {
        pack(w + d * g * c.input, g, c.input, wp + d * wstep);
        if (gru) {
            pack(r + d * g * hid, 2 * hid, hid, rp + d * rstep);
            pack(r + d * g * hid + 2 * hid * hid, hid, hid, rp + d * rstep + split);
        } else {
            pack(r + d * g * hid, g, hid, rp + d * rstep);
        }
    }
    p.w_step = wstep;
    p.r_step = rstep;
    p.r_split = split;

    float *y0 = calloc((size_t)ny + 1, 4), *yh0 = calloc((size_t)ns, 4), *yc0 = calloc((size_t)ns, 4);
    float *y1 = calloc((size_t)ny + 1, 4), *yh1 = calloc((size_t)ns, 4), *yc1 = calloc((size_t)ns, 4);
    float *y2 = calloc((size_t)ny + 1, 4), *yh2 = calloc((size_t)ns, 4), *yc2 = calloc((size_t)ns, 4);
    rk_ctx gctx = {1, NULL, NULL, 0};
    cr_assert_eq(rk_rnn(&gctx, &ref, IN(x, w, r, b, NULL, c.h0 ? h0 : NULL, c.c0 ? c0 : NULL, c.peep ? pp : NULL),
                        OUT(y0, yh0, yc0)),
                 RLX_OK);
    size_t sbytes = rk_rnn_f32_scratch(c.cell, c.seq, c.batch, c.input, hid);
    uint8_t *scratch = malloc(sbytes);
    memset(scratch, 0xff, sbytes);   /* NaN: nothing may be read before it is written */
    rk_ctx fctx = {1, NULL, scratch, sbytes};
    const void *const *in = IN(x, wp, rp, b, NULL, c.h0 ? h0 : NULL, c.c0 ? c0 : NULL, c.peep ? pp : NULL);
    cr_assert_eq(rk_rnn_f32(&fctx, &p, in, OUT(y1, yh1, yc1)), RLX_OK);
    int (*cells[3])(rk_ctx *, const void *, const void *const *, void *const *) = {rk_rnn_f32_rnn, rk_rnn_f32_gru,
                                                                                  rk_rnn_f32_lstm};
    cr_assert_eq(cells[c.cell](&fctx, &p, in, OUT(y2, yh2, yc2)), RLX_OK);
    cr_assert_eq(cells[(c.cell + 1) % 3](&fctx, &p, in, OUT(y2, yh2, yc2)), RLX_E_ARG, "another cell's entry refuses");
    cr_assert(!memcmp(y1, y2, sizeof(float) * (size_t)ny) && !memcmp(yh1, yh2, sizeof(float) * (size_t)ns),
              "the cell entry gives the general entry's bits");

    if (c.threads > 1) {
        rk_pool *pool = NULL;
        cr_assert_eq(rk_pool_new(c.threads, &pool), RLX_OK);
        uint8_t *tscratch = malloc(sbytes * (size_t)c.threads);
        memset(tscratch, 0xff, sbytes * (size_t)c.threads);
        rk_ctx tctx = {c.threads, pool, tscratch, sbytes};
        for (int rep = 0; rep < 3; rep++) {   /* whichever thread takes which unit */
            cr_assert_eq(rk_rnn_f32(&tctx, &p, in, OUT(y2, yh2, yc2)), RLX_OK);
            cr_assert(!memcmp(y1, y2, sizeof(float) * (size_t)ny) && !memcmp(yh1, yh2, sizeof(float) * (size_t)ns) &&
                          (c.cell != 2 || !memcmp(yc1, yc2, sizeof(float) * (size_t)ns)),
                      "cell %d hidden %lld: %d threads give one thread's bits", c.cell, (long long)hid, c.threads);
        }
        rk_pool_free(pool);
        free(tscratch);
    }

    const char *what[3] = {"Y", "Y_h", "Y_c"};
    float *got[3] = {y1, yh1, yc1}, *want[3] = {y0, yh0, yc0};
    int64_t count[3] = {ny, ns, c.cell == 2 ? ns : 0};
    double worst = 0;
    for (int o = 0; o < 3; o++)
        for (int64_t i = 0; i < count[o]; i++) {
            double e = fabs((double)got[o][i] - want[o][i]), tol = 2e-5 + 2e-5 * fabs(want[o][i]);
            if (e > worst) worst = e;
            cr_expect(e <= tol, "cell %d dir %d layout %d batch %lld: %s[%lld] = %.9g, generic %.9g", c.cell,
                      c.direction, c.layout, (long long)c.batch, what[o], (long long)i, (double)got[o][i],
                      (double)want[o][i]);
            if (e > tol) return;
        }
    cr_log_info("cell %d dir %d layout %d batch %lld seq %lld: worst difference %.3g", c.cell, c.direction, c.layout,
                (long long)c.batch, (long long)c.seq, worst);
    free(x), free(w), free(r), free(b), free(h0), free(c0), free(pp), free(wp), free(rp), free(scratch);
    free(y0), free(yh0), free(yc0), free(y1), free(yh1), free(yc1), free(y2), free(yh2), free(yc2);
}

Test(rnn_f32, every_cell_direction_layout_and_option) {
    for (int cell = 0; cell < 3; cell++)
        for (int dir = 0; dir < 3; dir++)
            for (int layout = 0; layout < 2; layout++)
                for (int variant = 0; variant < 4; variant++) {
                    Case c = {cell, dir, layout, 0, 0, 0, 0, 0, 0, 0, 5, 1, 7, 13};
                    c.batch = variant & 1 ? 11 : 1;   /* 11: not a whole number of 4-row blocks */
                    c.h0 = c.c0 = variant >= 2;
                    c.peep = cell == 2 && variant >= 2;
                    c.clip = variant == 3;
                    c.input_forget = cell == 2 && variant == 1;
                    c.lbr = cell == 1 && (variant & 1);
                    c.relu = cell == 0 && variant == 2;
                    run_case(c);
                }
}

Test(rnn_f32, several_blocks_of_steps) {
    /* 9 x 256 gate values per step: a block of 113 steps, so 120 steps take two */
    run_case((Case){2, 2, 0, 1, 1, 0, 0, 0, 0, 0, 120, 9, 3, 64});
    run_case((Case){1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 150, 9, 3, 86});
}

Test(rnn_f32, threads_give_the_same_bits) {
    /* batch 4, hidden 256 (lstm_medium's): each step's recurrent product
     * split by columns, the projections of 24 rows by rows; hidden 300 has
     * K > 256, where the packed layout allows no column split; input 300
     * makes the projection's K > 256 as well. */
    run_case((Case){2, 0, 0, 1, 1, 0, 0, 0, 0, 0, 6, 4, 128, 256, 2});
    run_case((Case){2, 2, 1, 0, 0, 1, 1, 0, 0, 0, 5, 4, 300, 256, 3});
    run_case((Case){1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 6, 4, 128, 256, 2});
    run_case((Case){1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 4, 8, 64, 300, 2});
    run_case((Case){0, 2, 0, 1, 0, 0, 0, 0, 0, 0, 2, 5, 96, 272, 2});
    /* LSTMs and GRUs (linear_before_reset) whose steps run per run of
     * hidden units (product and gates on each thread, the state in two
     * buffers): both directions, batch-first, the first step without a state
     * (on the caller), hidden 208 (the last run ragged) at 2 threads and 160
     * at 3; a GRU with a clip */
    run_case((Case){2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 7, 4, 64, 208, 2});
    run_case((Case){2, 1, 0, 1, 1, 0, 0, 0, 0, 0, 5, 8, 32, 160, 3});
    run_case((Case){1, 2, 1, 0, 0, 0, 0, 0, 1, 0, 7, 4, 64, 208, 2});
    run_case((Case){1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 5, 8, 32, 256, 3});
}

Test(rnn_f32, empty_sequence_and_state) {
    /* no steps: Y_h and Y_c are zeros, as the generic kernel's */
    run_case((Case){2, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 2, 3, 4});
    run_case((Case){1, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4});
}

Test(rnn_f32, refuses_bad_params) {
    rk_rnn_f32_params p;
    memset(&p, 0, sizeof p);
    p.cell = 2;
    p.seq = p.batch = p.input = p.hidden = 1;
    p.acts[0] = RS_ACT_SIGMOID;
    p.acts[1] = RS_ACT_GELU;   /* not one the kernel takes */
    p.acts[2] = RS_ACT_TANH;
    float buf[64] = {0};
    uint8_t scratch[4096];
    rk_ctx ctx = {1, NULL, scratch, sizeof scratch};
    cr_expect_eq(rk_rnn_f32(&ctx, &p, IN(buf, buf, buf, buf, NULL, NULL, NULL, NULL), OUT(buf, buf, buf)), RLX_E_ARG);
    p.acts[1] = RS_ACT_TANH;
    rk_ctx small = {1, NULL, scratch, 8};   /* less scratch than the plan reserves */
    cr_expect_eq(rk_rnn_f32(&small, &p, IN(buf, buf, buf, buf, NULL, NULL, NULL, NULL), OUT(buf, buf, buf)), RLX_E_ARG);
    p.cell = 3;
    cr_expect_eq(rk_rnn_f32(&ctx, &p, IN(buf, buf, buf, buf, NULL, NULL, NULL, NULL), OUT(buf, buf, buf)), RLX_E_ARG);
}
