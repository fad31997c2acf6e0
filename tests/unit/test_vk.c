/* test_vk.c - the Vulkan host (runtime_min/rlx_vk.c) on lavapipe, and the
 * device check every GPU host shares (runtime_min/rlx_gpu.c).
 *
 * Kernels are small GLSL programs compiled here with rlx_spirv_compile;
 * schedules (rlx_gpu_schedule) are built by hand, like the tables rlxc
 * writes, and run through the real host on Mesa's lavapipe; outputs are
 * compared with values computed here in double precision.
 *
 * Every test of the `vk` suite runs with the Khronos validation layer
 * (synchronization validation on) and RLX_VK_DEBUG=1, with stderr sent to
 * a file; the end of each test (VK_TEST) fails it on any "rlx_vk: validation: "
 * line (or, for the tests that set expect_messages, on none: those prove
 * that the layer is really there and that the host enables only the
 * features a schedule asks for). What lavapipe cannot show (it runs
 * dispatches one after another, so a missing barrier changes no output,
 * and the layer here does not see compute-to-compute hazards) is checked
 * on the command stream itself: the host is given tests/unit/vk_trace.c,
 * a stand-in loader (RLX_VK_LOADER) that logs every copy, barrier, push
 * and dispatch it records; the same stand-in fails, in turn, every call
 * that can fail, to see each failure become a status with nothing left
 * behind.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen_spirv/spirv.h"
#include "rlx_gpu.h"

/* ---- the suite: validation on, stderr captured ---- */

static FILE *captured;
static int saved_stderr = -1;
static int expect_messages;   /* the test provokes validation messages on purpose */

static void vk_begin(void) {
    setenv("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation", 1);
    setenv("VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT", 1);
    setenv("RLX_VK_DEBUG", "1", 1);
    unsetenv("RLX_VK_LOADER");
    unsetenv("RLX_VK_DEVICE");
    fflush(stderr);
    captured = tmpfile();
    cr_assert(captured);
    saved_stderr = dup(2);
    cr_assert(saved_stderr >= 0 && dup2(fileno(captured), 2) == 2);
}

/* Restores stderr, echoes what was captured, counts validation lines. */
static int vk_messages(void) {
    fflush(stderr);
    if (saved_stderr >= 0) {
        dup2(saved_stderr, 2);
        close(saved_stderr);
        saved_stderr = -1;
    }
    int n = 0;
    char line[4096];
    rewind(captured);
    while (fgets(line, sizeof line, captured)) {
        fputs(line, stderr);
        if (!strncmp(line, "rlx_vk: validation: ", 20)) n++;
    }
    fclose(captured);
    captured = NULL;
    return n;
}

static void vk_end(void) {
    int n = vk_messages();
    if (expect_messages) cr_expect(n > 0, "expected validation messages, got none");
    else cr_expect_eq(n, 0, "%d validation message(s), see stderr", n);
}

/* Criterion reports a failed expectation in .fini but still passes the
 * test, so the check runs at the end of each test's body: VK_TEST(name)
 * defines the test and calls vk_end after the body. */
#define VK_TEST(name)                   \
    static void name##_body(void);      \
    Test(vk, name, .init = vk_begin) {  \
        name##_body();                  \
        vk_end();                       \
    }                                   \
    static void name##_body(void)

/* ---- building models ---- */

#define MAX_T 8
typedef struct {
    rlx_model_info info;
    rlx_tensor_info in[MAX_T], out[MAX_T];
    int64_t dims[2 * MAX_T][1];
    uint8_t out_w[MAX_T];
    rlx_gpu_kernel k[MAX_T];
    rlx_gpu_dispatch d[MAX_T];
    rlx_gpu_schedule s;
    uint8_t *wfile;   /* a weights file image for info */
    size_t wfile_len;
} Model;

static uint64_t align(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

static void model_init(Model *m, uint64_t arena_bytes, uint64_t weights_bytes) {
    free(m->wfile), m->wfile = NULL;
    memset(m, 0, sizeof *m);
    m->info.name = "t";
    m->info.hash = 0x1234567890abcdefull;
    m->info.arena_bytes = arena_bytes;
    m->info.weights_bytes = weights_bytes;
    m->info.nweights = 1;
    m->info.nthreads = 1;
    m->info.inputs = m->in;
    m->info.outputs = m->out;
    m->s.info = &m->info;
    m->s.kernels = m->k;
    m->s.dispatches = m->d;
    m->s.output_in_weights = m->out_w;
    m->s.status_offset = align(arena_bytes, 64);   /* the status word, after the arena (as rlxc plans it) */
}

static void add_tensor(Model *m, int output, const char *name, uint64_t offset, uint64_t floats, int in_weights) {
    int i = output ? m->info.noutputs++ : m->info.ninputs++;
    rlx_tensor_info *t = output ? &m->out[i] : &m->in[i];
    int64_t *dims = m->dims[output * MAX_T + i];
    dims[0] = (int64_t)floats;
    *t = (rlx_tensor_info){name, RLX_F32, 1, dims, offset, floats * 4};
    if (output) m->out_w[i] = (uint8_t)in_weights;
}

static uint32_t add_kernel(Model *m, const char *name, const char *glsl, uint32_t lx, uint32_t ly, uint32_t shared,
                           uint32_t trips, uint32_t needs) {
    size_t nw;
    uint32_t *code = rlx_spirv_compile(glsl, name, &nw);
    uint32_t i = m->s.nkernels++;
    m->k[i] = (rlx_gpu_kernel){name, code, nw * 4, {lx, ly, 1}, shared, trips, needs};
    return i;
}

static void add_dispatch(Model *m, uint32_t kernel, uint32_t gx, uint32_t gy, uint32_t barrier, int npush, ...) {
    rlx_gpu_dispatch *d = &m->d[m->s.ndispatches++];
    memset(d, 0, sizeof *d);
    d->kernel = kernel;
    d->groups[0] = gx, d->groups[1] = gy, d->groups[2] = 1;
    d->barrier = barrier;
    d->npush = (uint32_t)npush;
    va_list ap;
    va_start(ap, npush);
    for (int i = 0; i < npush; i++) d->push[i] = va_arg(ap, uint32_t);
    va_end(ap);
}

/* The schedule's summary fields, from its tables (as rlxc fills them). */
static void summarize(Model *m) {
    rlx_gpu_schedule *s = &m->s;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        uint32_t n = m->k[k].local[0] * m->k[k].local[1] * m->k[k].local[2];
        s->needs |= m->k[k].needs;
        if (n > s->max_local_invocations) s->max_local_invocations = n;
        if (m->k[k].shared_bytes > s->max_shared_bytes) s->max_shared_bytes = m->k[k].shared_bytes;
    }
    for (uint32_t i = 0; i < s->ndispatches; i++)
        for (int d = 0; d < 3; d++)
            if (m->d[i].groups[d] > s->max_groups[d]) s->max_groups[d] = m->d[i].groups[d];
    s->max_buffer_bytes = m->info.arena_bytes > m->info.weights_bytes ? m->info.arena_bytes : m->info.weights_bytes;
}

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* A weights file image for m (rlx_rt.h's layout), its data from `data`. */
static void make_weights(Model *m, const void *data) {
    m->wfile_len = RLX_WEIGHTS_HEADER + m->info.weights_bytes;
    m->wfile = calloc(1, m->wfile_len);
    cr_assert(m->wfile);
    memcpy(m->wfile, RLX_WEIGHTS_MAGIC, 4);
    put32(m->wfile + 4, RLX_WEIGHTS_VERSION);
    put64(m->wfile + 8, m->info.hash);
    put64(m->wfile + 16, m->info.weights_bytes);
    put64(m->wfile + 24, RLX_WEIGHTS_HEADER);
    put32(m->wfile + 32, m->info.nweights);
    if (data) memcpy(m->wfile + RLX_WEIGHTS_HEADER, data, (size_t)m->info.weights_bytes);
    put64(m->wfile + 40, rlx_weights_checksum(m->wfile + RLX_WEIGHTS_HEADER, (size_t)m->info.weights_bytes));
}

static rlx_model *new_model(Model *m) {
    rlx_model *vm = NULL;
    int st = rlx_vk_model_new(&m->s, &vm);
    cr_assert_eq(st, RLX_OK, "rlx_vk_model_new: %s", rlx_status_str(st));
    cr_assert(vm);
    return vm;
}

static int new_status(Model *m) {
    rlx_model *vm = (rlx_model *)1;
    int st = rlx_vk_model_new(&m->s, &vm);
    if (st) cr_expect_null(vm, "a failed rlx_vk_model_new leaves *out NULL");
    else rlx_vk_model_free(vm);
    return st;
}

/* ---- the kernels ---- */

#define HEAD                                                                       \
    "#version 450\n"                                                               \
    "layout(std430, set = 0, binding = 0) buffer Arena { float a[]; };\n"          \
    "layout(std430, set = 0, binding = 0) buffer ArenaU { uint au[]; };\n"         \
    "layout(std430, set = 0, binding = 1) readonly buffer Weights { float w[]; };\n"

/* y = x * wt + 1 (reads the weights) */
static const char *K_AXPB = HEAD
    "layout(local_size_x = 64) in;\n"
    "layout(push_constant) uniform P { uint n, x, wt, y; } p;\n"
    "void main() {\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    if (i < p.n) a[p.y + i] = a[p.x + i] * w[p.wt + i] + 1.0;\n"
    "}\n";
/* q = x + 0.5 */
static const char *K_SHIFT = HEAD
    "layout(local_size_x = 64) in;\n"
    "layout(push_constant) uniform P { uint n, x, q; } p;\n"
    "void main() {\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    if (i < p.n) a[p.q + i] = a[p.x + i] + 0.5;\n"
    "}\n";
/* z[r][c] = 2 y[r][c] - bias[c], over a 2-D grid of 8 x 8 workgroups */
static const char *K_2D = HEAD
    "layout(local_size_x = 8, local_size_y = 8) in;\n"
    "layout(push_constant) uniform P { uint rows, cols, y, bias, z; } p;\n"
    "void main() {\n"
    "    uint c = gl_GlobalInvocationID.x, r = gl_GlobalInvocationID.y;\n"
    "    if (r < p.rows && c < p.cols) a[p.z + r * p.cols + c] = 2.0 * a[p.y + r * p.cols + c] - w[p.bias + c];\n"
    "}\n";
/* s[r] = sum over c of z[r][c]: one workgroup per row, a shared-memory tree */
static const char *K_ROWSUM = HEAD
    "layout(local_size_x = 64) in;\n"
    "layout(push_constant) uniform P { uint rows, cols, z, s; } p;\n"
    "shared float part[64];\n"
    "void main() {\n"
    "    uint r = gl_WorkGroupID.x, t = gl_LocalInvocationID.x;\n"
    "    float acc = 0.0;\n"
    "    for (uint c = t; c < p.cols; c += 64u) acc += a[p.z + r * p.cols + c];\n"
    "    part[t] = acc;\n"
    "    barrier();\n"
    "    for (uint h = 32u; h > 0u; h >>= 1) {\n"
    "        if (t < h) part[t] += part[t + h];\n"
    "        barrier();\n"
    "    }\n"
    "    if (t == 0u) a[p.s + r] = part[0];\n"
    "}\n";

/* ---- the main model: 4 dispatches, 5 outputs ---- */

enum { R = 37, C = 29, N = R * C };

typedef struct {
    Model m;
    uint64_t x, y, q, z, s, never;   /* arena offsets, bytes */
    uint64_t wt, bias;               /* weights offsets, bytes */
    float wdata[N + 64];
} Main;

static void main_model(Main *t) {
    t->x = 0;
    t->y = align(t->x + N * 4, 256);
    t->q = align(t->y + N * 4, 256);
    t->z = align(t->q + N * 4, 256);
    t->s = align(t->z + N * 4, 256);
    t->never = align(t->s + R * 4, 256);
    t->wt = 0;
    t->bias = align(N * 4, 64);
    uint64_t arena = align(t->never + 16 * 4, 256), weights = t->bias + C * 4;
    Model *m = &t->m;
    model_init(m, arena, weights);
    m->info.nweights = 2;
    add_tensor(m, 0, "x", t->x, N, 0);
    add_tensor(m, 1, "s", t->s, R, 0);
    add_tensor(m, 1, "z", t->z, N, 0);
    add_tensor(m, 1, "q", t->q, N, 0);
    add_tensor(m, 1, "wt", t->wt, N, 1);        /* a weight as an output */
    add_tensor(m, 1, "never", t->never, 16, 0); /* no dispatch writes it: zeros */
    uint32_t axpb = add_kernel(m, "k_axpb", K_AXPB, 64, 1, 0, 0, 0);
    uint32_t shift = add_kernel(m, "k_shift", K_SHIFT, 64, 1, 0, 0, 0);
    uint32_t k2d = add_kernel(m, "k_2d", K_2D, 8, 8, 0, 0, 0);
    uint32_t rowsum = add_kernel(m, "k_rowsum", K_ROWSUM, 64, 1, 64 * 4, (C + 63) / 64 + 6, 0);
    add_dispatch(m, axpb, (N + 63) / 64, 1, 0, 4, N, (uint32_t)t->x / 4, (uint32_t)t->wt / 4, (uint32_t)t->y / 4);
    /* reads only x, writes q: nothing to wait for */
    add_dispatch(m, shift, (N + 63) / 64, 1, 0, 3, N, (uint32_t)t->x / 4, (uint32_t)t->q / 4);
    /* reads y, written by the first dispatch */
    add_dispatch(m, k2d, (C + 7) / 8, (R + 7) / 8, 1, 5, R, C, (uint32_t)t->y / 4, (uint32_t)t->bias / 4,
                 (uint32_t)t->z / 4);
    /* reads z */
    add_dispatch(m, rowsum, R, 1, 1, 4, R, C, (uint32_t)t->z / 4, (uint32_t)t->s / 4);
    summarize(m);
    for (int i = 0; i < N; i++) t->wdata[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
    for (int c = 0; c < C; c++) t->wdata[t->bias / 4 + c] = 0.25f * (float)c - 3.0f;
    make_weights(m, t->wdata);
}

static void fill_input(float *x, int run) {
    for (int i = 0; i < N; i++) x[i] = (float)((i * 13 + run * 7) % 41) / 8.0f - 2.5f + (float)run;
}

/* Runs vm once on input `run` and checks every output against doubles. */
static void check_run(Main *t, rlx_model *vm, int run) {
    static float x[N], s[R], z[N], q[N], wt[N], never[16];
    fill_input(x, run);
    memset(never, 0xff, sizeof never);
    const void *in[] = {x};
    void *out[] = {s, z, q, wt, never};
    int st = rlx_vk_run(vm, in, out);
    cr_assert_eq(st, RLX_OK, "rlx_vk_run: %s", rlx_status_str(st));
    const float *w = t->wdata, *bias = t->wdata + t->bias / 4;
    for (int r = 0; r < R; r++) {
        double sum = 0, mag = 0;
        for (int c = 0; c < C; c++) {
            int i = r * C + c;
            double y = (double)x[i] * w[i] + 1.0, zz = 2.0 * y - bias[c];
            cr_assert(fabs(z[i] - zz) <= 1e-5 * (1 + fabs(zz)), "run %d: z[%d] = %g, expected %g", run, i, z[i], zz);
            sum += zz, mag += fabs(zz);
        }
        cr_assert(fabs(s[r] - sum) <= 1e-5 * (1 + mag), "run %d: s[%d] = %g, expected %g", run, r, s[r], sum);
    }
    for (int i = 0; i < N; i++) {
        cr_assert_eq(q[i], x[i] + 0.5f, "run %d: q[%d]", run, i);
        cr_assert_eq(wt[i], w[i], "run %d: the weight output, element %d", run, i);
    }
    for (int i = 0; i < 16; i++) cr_assert_eq(never[i], 0.0f, "an arena slot nothing writes reads as zero");
}

VK_TEST(schedule_runs) {
    static Main t;
    main_model(&t);
    rlx_model *vm = new_model(&t.m);
    cr_expect(strstr(rlx_vk_device_name(vm), "device=llvmpipe") == rlx_vk_device_name(vm), "device name %s",
              rlx_vk_device_name(vm));
    static float x[N], s[R], z[N], q[N], wt[N], never[16];
    const void *in[] = {x};
    void *out[] = {s, z, q, wt, never};
    cr_expect_eq(rlx_vk_run(vm, in, out), RLX_E_STATE, "run before the weights are loaded");
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, t.m.wfile, t.m.wfile_len), RLX_OK);
    /* new inputs each run: the staging copies happen per run, not once */
    for (int run = 0; run < 3; run++) check_run(&t, vm, run);
    rlx_vk_model_free(vm);
    free(t.m.wfile), t.m.wfile = NULL;
}

VK_TEST(weights_from_file) {
    static Main t;
    main_model(&t);
    char path[] = "/tmp/rlx_test_vk_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, t.m.wfile, t.m.wfile_len), (ssize_t)t.m.wfile_len);
    close(fd);
    rlx_model *vm = new_model(&t.m);
    cr_expect_eq(rlx_vk_load_weights(vm, "/nonexistent/w.weights"), RLX_E_NOFILE);
    cr_assert_eq(rlx_vk_load_weights(vm, path), RLX_OK);
    check_run(&t, vm, 1);
    /* truncated by one byte: refused, and the weights already on the device stay */
    cr_assert_eq(truncate(path, (off_t)t.m.wfile_len - 1), 0);
    cr_expect_eq(rlx_vk_load_weights(vm, path), RLX_E_TRUNCATED);
    check_run(&t, vm, 2);
    unlink(path);
    rlx_vk_model_free(vm);
    free(t.m.wfile), t.m.wfile = NULL;
}

/* Each malformed image gets the status the C target's loader gives it. */
VK_TEST(weights_statuses_match_the_c_target) {
    static Main t;
    main_model(&t);
    rlx_model *vm = new_model(&t.m);
    rlx_model *cm = NULL;
    cr_assert_eq(rlx_model_new(&t.m.info, &cm), RLX_OK);
    struct { size_t at, len; uint8_t value; int status; } cases[] = {
        {0, 0, 0, RLX_OK},
        {0, 1, 'X', RLX_E_MAGIC},
        {4, 1, 9, RLX_E_VERSION},
        {8, 1, 0x55, RLX_E_MODEL},
        {16, 1, 0x11, RLX_E_SIZE},
        {32, 1, 7, RLX_E_SIZE},
    };
    uint8_t *img = malloc(t.m.wfile_len);
    cr_assert(img);
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(img, t.m.wfile, t.m.wfile_len);
        if (cases[c].len) img[cases[c].at] = cases[c].value;
        int want = rlx_load_weights_buffer(cm, img, t.m.wfile_len);
        cr_expect_eq(want, cases[c].status, "case %u: the C loader gives %d", c, want);
        cr_expect_eq(rlx_vk_load_weights_buffer(vm, img, t.m.wfile_len), want, "case %u", c);
    }
    /* one flipped bit of tensor data: the checksum's own status from both */
    cr_assert_gt(t.m.info.weights_bytes, 0);
    memcpy(img, t.m.wfile, t.m.wfile_len);
    img[t.m.wfile_len - 1] ^= 0x10;
    cr_expect_eq(rlx_load_weights_buffer(cm, img, t.m.wfile_len), RLX_E_CHECKSUM);
    cr_expect_eq(rlx_vk_load_weights_buffer(vm, img, t.m.wfile_len), RLX_E_CHECKSUM);
    for (size_t len = 0; len < t.m.wfile_len; len += t.m.wfile_len / 7 + 1) {
        int want = rlx_load_weights_buffer(cm, t.m.wfile, len);
        cr_expect_neq(want, RLX_OK);
        cr_expect_eq(rlx_vk_load_weights_buffer(vm, t.m.wfile, len), want, "%zu bytes", len);
    }
    free(img);
    rlx_model_free(cm);
    rlx_vk_model_free(vm);
    free(t.m.wfile), t.m.wfile = NULL;
}

/* ---- the command stream, through the stand-in loader ---- */

typedef const char *(*trace_fn)(void);

static const char *trace_path(void) {
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
    cr_assert(n > 0);
    path[n] = 0;
    strcpy(strrchr(path, '/') + 1, "libvktrace.so");
    return path;
}

typedef struct {
    char kind[16];
    unsigned long long v[6];
    int nv;
    int ids[2];   /* b/p/c numbers */
} Event;

/* Parses one trace line: "kind" then words, "bN"/"pN"/"cN" going to ids. */
static int parse_event(const char *line, Event *e) {
    memset(e, 0, sizeof *e);
    e->ids[0] = e->ids[1] = -1;
    int pos = 0, nid = 0;
    if (sscanf(line, "%15s%n", e->kind, &pos) != 1) return 0;
    const char *p = line + pos;
    char word[64];
    int k;
    while (sscanf(p, "%63s%n", word, &k) == 1) {
        p += k;
        if ((word[0] == 'b' || word[0] == 'p' || word[0] == 'c') && word[1] >= '0' && word[1] <= '9' && nid < 2)
            e->ids[nid++] = atoi(word + 1);
        else if (e->nv < 6)
            e->v[e->nv++] = strtoull(word, NULL, 10);
    }
    return 1;
}

static Event *parse_trace(const char *log, int *n) {
    int cap = 1;
    for (const char *p = log; *p; p++) cap += *p == '\n';
    Event *ev = calloc((size_t)cap, sizeof *ev);
    cr_assert(ev);
    *n = 0;
    const char *p = log;
    while (*p) {
        char line[256];
        size_t len = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (parse_event(line, &ev[*n])) (*n)++;
        p += len + (p[len] == '\n');
    }
    return ev;
}

/* stage and access bits as vulkan_core.h numbers them */
#define ST_TRANSFER 0x1000u
#define ST_COMPUTE 0x800u
#define ST_HOST 0x4000u
#define AC_SHADER_READ 0x20u
#define AC_SHADER_WRITE 0x40u
#define AC_TRANSFER_READ 0x800u
#define AC_TRANSFER_WRITE 0x1000u
#define AC_HOST_READ 0x2000u

static int is_barrier(const Event *e, unsigned src_stage, unsigned dst_stage, unsigned src_access,
                      unsigned dst_access) {
    return !strcmp(e->kind, "barrier") && (e->v[0] & src_stage) && (e->v[1] & dst_stage) &&
           (e->v[2] & src_access) == src_access && (e->v[3] & dst_access) == dst_access;
}

VK_TEST(command_stream) {
    static Main t;
    main_model(&t);
    Model *m = &t.m;
    const char *shim = trace_path();
    setenv("RLX_VK_LOADER", shim, 1);
    rlx_model *vm = new_model(m);
    void *lib = dlopen(shim, RTLD_NOW | RTLD_NOLOAD);
    cr_assert(lib, "the host opened %s", shim);
    trace_fn log_of;
    void *sym = dlsym(lib, "rlx_vktrace_log");
    cr_assert(sym);
    memcpy(&log_of, &sym, sizeof log_of);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m->wfile, m->wfile_len), RLX_OK);
    size_t at_load = strlen(log_of());
    check_run(&t, vm, 0);
    check_run(&t, vm, 1);
    const char *log = log_of();
    int n;
    Event *ev = parse_trace(log, &n);
    /* buffers: the arena, the weights, the staging buffer, then the upload's */
    int arena = -1, weights = -1, staging = -1, upload = -1, nbuf = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(ev[i].kind, "buffer")) continue;
        nbuf++;
        if (ev[i].v[0] == m->s.status_offset + 4 && (ev[i].v[1] & 0x20) && arena < 0) arena = ev[i].ids[0];
        else if (ev[i].v[0] == m->info.weights_bytes && (ev[i].v[1] & 0x20) && weights < 0) weights = ev[i].ids[0];
        else if (!(ev[i].v[1] & 0x20) && staging < 0) staging = ev[i].ids[0];
        else if (!(ev[i].v[1] & 0x20)) upload = ev[i].ids[0];
    }
    cr_assert(arena >= 0 && weights >= 0 && staging >= 0 && upload >= 0, "buffers %d %d %d %d", arena, weights,
              staging, upload);
    cr_expect_eq(nbuf, 4, "three buffers at init and one for the upload");
    /* the arena is zeroed once, the weights uploaded once */
    int fills = 0, uploads = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(ev[i].kind, "fill") && ev[i].ids[0] == arena && ev[i].v[0] == 0 && ev[i].v[2] == 0) fills++;
        if (!strcmp(ev[i].kind, "copy") && ev[i].ids[0] == upload && ev[i].ids[1] == weights)
            uploads += ev[i].v[0] == 0 && ev[i].v[1] == 0 && ev[i].v[2] == m->info.weights_bytes;
    }
    cr_expect_eq(fills, 1);
    cr_expect_eq(uploads, 1);
    /* the runs: two submits of one command buffer, and nothing created */
    int run_cb = -1, submits = 0;
    Event *after;
    int nafter;
    after = parse_trace(log + at_load, &nafter);
    for (int i = 0; i < nafter; i++) {
        cr_expect(strcmp(after[i].kind, "buffer") && strcmp(after[i].kind, "alloc") && strcmp(after[i].kind, "begin"),
                  "a run records or allocates nothing (%s)", after[i].kind);
        if (!strcmp(after[i].kind, "submit")) {
            if (run_cb < 0) run_cb = after[i].ids[0];
            cr_expect_eq(after[i].ids[0], run_cb);
            submits++;
        }
    }
    cr_expect_eq(submits, 2);
    free(after);
    /* the recorded run, from its begin to its end */
    int b = -1, e = -1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(ev[i].kind, "begin") && ev[i].ids[0] == run_cb && b < 0) b = i;
        if (!strcmp(ev[i].kind, "end") && ev[i].ids[0] == run_cb && b >= 0 && e < 0) e = i;
    }
    cr_assert(b >= 0 && e > b, "the run's command buffer c%d is recorded", run_cb);
    int i = b + 1;
    /* 0. before the input's copy overwrites the arena, the previous run's
     * shader writes and copies out of it are done (the command buffer is
     * submitted again and again) */
    int first_copy = i;
    while (first_copy < e && strcmp(ev[first_copy].kind, "copy")) first_copy++;
    int start = 0;
    for (int j = i; j < first_copy; j++)
        start |= is_barrier(&ev[j], ST_COMPUTE, ST_TRANSFER, AC_SHADER_WRITE | AC_TRANSFER_WRITE, AC_TRANSFER_WRITE) &&
                 (ev[j].v[0] & ST_TRANSFER);
    cr_expect(start, "a compute and transfer -> transfer barrier before the input's copy");
    /* 1. the input copied staging -> arena, then a transfer -> compute barrier */
    int copied = 0;
    for (; i < e && strcmp(ev[i].kind, "dispatch") && strcmp(ev[i].kind, "bind"); i++)
        if (!strcmp(ev[i].kind, "copy")) {
            cr_expect(ev[i].ids[0] == staging && ev[i].ids[1] == arena && ev[i].v[1] == m->in[0].offset &&
                      ev[i].v[2] == m->in[0].nbytes, "the input's copy");
            copied++;
            int seen = 0;
            for (int j = i + 1; j < e && strcmp(ev[j].kind, "dispatch"); j++)
                seen |= is_barrier(&ev[j], ST_TRANSFER, ST_COMPUTE, AC_TRANSFER_WRITE, AC_SHADER_READ);
            cr_expect(seen, "a transfer -> compute barrier between the input's copy and the first dispatch");
        }
    cr_expect_eq(copied, 1);
    int zeroed = 0;
    for (int j = b + 1; j < e && strcmp(ev[j].kind, "dispatch"); j++)
        zeroed += !strcmp(ev[j].kind, "fill") && ev[j].ids[0] == arena && ev[j].v[0] == m->s.status_offset &&
                  ev[j].v[1] == 4 && ev[j].v[2] == 0;
    cr_expect_eq(zeroed, 1, "the status word zeroed before the first dispatch");
    /* 2. each dispatch: a compute -> compute barrier before it exactly where
     * the schedule says, its pipeline, its push constants, its grid */
    int bound = -1;
    for (uint32_t d = 0; d < m->s.ndispatches; d++) {
        int barriers = 0, pushed = 0;
        for (; i < e && strcmp(ev[i].kind, "dispatch"); i++) {
            if (d > 0 && is_barrier(&ev[i], ST_COMPUTE, ST_COMPUTE, AC_SHADER_WRITE, AC_SHADER_READ)) barriers++;
            if (!strcmp(ev[i].kind, "bind")) bound = ev[i].ids[0];
            if (!strcmp(ev[i].kind, "push")) {
                pushed = 1;
                cr_expect(ev[i].v[0] == 0 && ev[i].v[1] >= m->d[d].npush * 4, "dispatch %u pushes its words", d);
                for (uint32_t k = 0; k < 4 && k < m->d[d].npush; k++)
                    cr_expect_eq(ev[i].v[2 + k], m->d[d].push[k], "dispatch %u, push word %u", d, k);
            }
        }
        cr_assert(i < e, "dispatch %u recorded", d);
        cr_expect_eq(barriers, d > 0 && m->d[d].barrier ? 1 : 0, "dispatch %u: barrier %u", d, m->d[d].barrier);
        cr_expect(pushed, "dispatch %u: push constants", d);
        cr_expect_eq(bound, (int)m->d[d].kernel, "dispatch %u: kernel %u's pipeline", d, m->d[d].kernel);
        cr_expect(ev[i].v[0] == m->d[d].groups[0] && ev[i].v[1] == m->d[d].groups[1] && ev[i].v[2] == 1,
                  "dispatch %u: its grid", d);
        i++;
    }
    /* 3. a compute -> transfer barrier, the outputs' copies, a transfer -> host barrier */
    int before_copies = 0, outs = 0, host = 0;
    for (; i < e; i++) {
        cr_expect(strcmp(ev[i].kind, "dispatch"), "no dispatch after the schedule's");
        if (is_barrier(&ev[i], ST_COMPUTE, ST_TRANSFER, AC_SHADER_WRITE, AC_TRANSFER_READ) && !outs) before_copies = 1;
        if (is_barrier(&ev[i], ST_TRANSFER, ST_HOST, AC_TRANSFER_WRITE, AC_HOST_READ) && outs) host = 1;
        if (!strcmp(ev[i].kind, "copy") && outs == m->info.noutputs) {
            cr_expect(ev[i].ids[0] == arena && ev[i].ids[1] == staging && ev[i].v[0] == m->s.status_offset &&
                      ev[i].v[2] == 4, "the status word copied out after the outputs");
            outs++;
        } else if (!strcmp(ev[i].kind, "copy")) {
            const rlx_tensor_info *o = &m->out[outs];
            cr_expect_eq(ev[i].ids[0], m->out_w[outs] ? weights : arena, "output %d copied from its buffer", outs);
            cr_expect_eq(ev[i].ids[1], staging);
            cr_expect(ev[i].v[0] == o->offset && ev[i].v[2] == o->nbytes, "output %d's slot", outs);
            outs++;
        }
    }
    cr_expect(before_copies, "a compute -> transfer barrier before the outputs' copies");
    cr_expect_eq(outs, m->info.noutputs + 1, "the outputs and the status word");
    cr_expect(host, "a transfer -> host barrier after the outputs' copies");
    free(ev);
    rlx_vk_model_free(vm);
    free(m->wfile), m->wfile = NULL;
}

/* ---- failures, through the stand-in loader ---- */

/* One model's life: init, weights, two runs, free; the statuses. */
static void life(Main *t, int st[4]) {
    rlx_model *vm = NULL;
    st[1] = st[2] = st[3] = -1;
    if ((st[0] = rlx_vk_model_new(&t->m.s, &vm))) {
        cr_expect_null(vm);
        return;
    }
    st[1] = rlx_vk_load_weights_buffer(vm, t->m.wfile, t->m.wfile_len);
    static float x[N], s[R], z[N], q[N], wt[N], never[16];
    fill_input(x, 0);
    const void *in[] = {x};
    void *out[] = {s, z, q, wt, never};
    st[2] = rlx_vk_run(vm, in, out);
    st[3] = rlx_vk_run(vm, in, out);
    rlx_vk_model_free(vm);
}

static int gpu_failure(int st) { return st == RLX_E_DEV_NOMEM || st == RLX_E_GPU; }

/* Every Vulkan call that can fail, failed in turn: each failure is
 * noticed and becomes RLX_E_DEV_NOMEM or RLX_E_GPU, the model is freed
 * whole however far it got (the validation layer reports any object left
 * behind when the device is destroyed), and a model whose submission
 * failed keeps answering RLX_E_GPU. */
VK_TEST(every_vulkan_failure_is_a_status) {
    static Main t;
    main_model(&t);
    const char *shim = trace_path();
    setenv("RLX_VK_LOADER", shim, 1);
    void *lib = dlopen(shim, RTLD_NOW | RTLD_LOCAL);   /* kept open: its counters live across models */
    cr_assert(lib, "%s", dlerror());
    void (*fail_at)(long);
    long (*calls)(void);
    void *sym = dlsym(lib, "rlx_vktrace_fail_at");
    cr_assert(sym);
    memcpy(&fail_at, &sym, sizeof fail_at);
    sym = dlsym(lib, "rlx_vktrace_calls");
    cr_assert(sym);
    memcpy(&calls, &sym, sizeof calls);
    int st[4];
    fail_at(0);
    life(&t, st);
    cr_assert(!st[0] && !st[1] && !st[2] && !st[3], "a life without failures");
    long total = calls();
    cr_assert(total >= 15, "%ld calls that can fail", total);
    for (long n = 1; n <= total; n++) {
        fail_at(n);
        life(&t, st);
        if (st[0]) {
            cr_expect(gpu_failure(st[0]), "call %ld: init gives %d", n, st[0]);
            continue;
        }
        if (st[1]) {
            cr_expect(gpu_failure(st[1]), "call %ld: loading gives %d", n, st[1]);
            cr_expect(st[2] == RLX_E_STATE || st[2] == RLX_E_GPU, "call %ld: a run then gives %d", n, st[2]);
            continue;
        }
        cr_expect(st[2] == RLX_E_GPU || st[3] == RLX_E_GPU, "call %ld fails: a run notices (%d, %d)", n, st[2], st[3]);
        if (st[2] == RLX_E_GPU) cr_expect_eq(st[3], RLX_E_GPU, "call %ld: a broken model stays broken", n);
    }
    fail_at(0);
    dlclose(lib);
    free(t.m.wfile), t.m.wfile = NULL;
}

/* ---- statuses ---- */

/* A one-kernel model: u[y] = loop count n (push 0), for status tests and the loop cap. */
static const char *K_LOOP = HEAD
    "layout(local_size_x = 1) in;\n"
    "layout(push_constant) uniform P { uint n, y; } p;\n"
    "void main() {\n"
    "    uint c = 0u;\n"
    "    for (uint i = 0u; i < p.n; i++) c += 1u;\n"
    "    au[p.y] = c;\n"
    "}\n";

static void loop_model(Model *m, uint32_t n, uint32_t trips) {
    model_init(m, 256, 0);
    m->info.nweights = 0;
    add_tensor(m, 1, "c", 0, 1, 0);
    uint32_t k = add_kernel(m, "k_loop", K_LOOP, 1, 1, 0, trips, 0);
    add_dispatch(m, k, 1, 1, 0, 2, n, 0u);
    summarize(m);
    make_weights(m, NULL);
}

static uint32_t run_loop(Model *m) {
    rlx_model *vm = new_model(m);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m->wfile, m->wfile_len), RLX_OK);
    uint32_t c = 0;
    void *out[] = {&c};
    cr_assert_eq(rlx_vk_run(vm, NULL, out), RLX_OK);
    rlx_vk_model_free(vm);
    free(m->wfile), m->wfile = NULL;
    return c;
}

VK_TEST(loop_cap) {
    static Model m;
    /* lavapipe stops a loop after 65535 trips (GPU.md): below that it counts right */
    loop_model(&m, 60000, 60000);
    cr_expect_eq(run_loop(&m), 60000u);
    loop_model(&m, 70000, 70000);
    cr_expect_eq(new_status(&m), RLX_E_DEV_LOOPS);
    loop_model(&m, 10, 65535);
    cr_expect_eq(new_status(&m), RLX_E_DEV_LOOPS);
    free(m.wfile), m.wfile = NULL;
}

VK_TEST(missing_loader) {
    static Model m;
    loop_model(&m, 1, 1);
    setenv("RLX_VK_LOADER", "/nonexistent/libvulkan.so.1", 1);
    cr_expect_eq(new_status(&m), RLX_E_NOLOADER);
    setenv("RLX_VK_LOADER", "libm.so.6", 1);   /* a library, but not a Vulkan loader */
    cr_expect_eq(new_status(&m), RLX_E_NOLOADER);
    free(m.wfile), m.wfile = NULL;
}

VK_TEST(device_choice) {
    static Model m;
    loop_model(&m, 3, 3);
    setenv("RLX_VK_DEVICE", "0", 1);
    cr_expect_eq(run_loop(&m), 3u);
    loop_model(&m, 3, 3);
    setenv("RLX_VK_DEVICE", "99", 1);
    cr_expect_eq(new_status(&m), RLX_E_NODEVICE);
    setenv("RLX_VK_DEVICE", "abc", 1);
    cr_expect_eq(new_status(&m), RLX_E_ARG);
    setenv("RLX_VK_DEVICE", "-1", 1);
    cr_expect_eq(new_status(&m), RLX_E_ARG);
    free(m.wfile), m.wfile = NULL;
}

/* lavapipe's limits (vulkaninfo): 1024 invocations and 1024 per dimension,
 * 32 KiB of shared memory, 65535 groups per dimension, 128 MiB per storage
 * buffer. At each limit a kernel runs; one past it, the status. */
static const char *K_BIG = HEAD
    "layout(local_size_x = 1024) in;\n"
    "layout(push_constant) uniform P { uint y; } p;\n"
    "shared float big[8192];\n"
    "void main() {\n"
    "    uint t = gl_LocalInvocationID.x;\n"
    "    for (uint k = 0u; k < 8u; k++) big[t * 8u + k] = float(t * 8u + k);\n"
    "    barrier();\n"
    "    a[p.y + gl_GlobalInvocationID.x] = big[8191u - t * 8u];\n"
    "}\n";
static const char *K_IOTA = HEAD
    "layout(local_size_x = 1) in;\n"
    "layout(push_constant) uniform P { uint y; } p;\n"
    "void main() { au[p.y + gl_WorkGroupID.x] = gl_WorkGroupID.x * 3u + 1u; }\n";

VK_TEST(limits) {
    static Model m;
    /* 1024 invocations and 32 KiB of shared memory: runs */
    model_init(&m, 2 * 1024 * 4, 0);
    m.info.nweights = 0;
    add_tensor(&m, 1, "y", 0, 2048, 0);
    uint32_t k = add_kernel(&m, "k_big", K_BIG, 1024, 1, 32768, 8, 0);
    add_dispatch(&m, k, 2, 1, 0, 1, 0u);
    summarize(&m);
    make_weights(&m, NULL);
    rlx_model *vm = new_model(&m);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m.wfile, m.wfile_len), RLX_OK);
    static float y[2048];
    void *out[] = {y};
    cr_assert_eq(rlx_vk_run(vm, NULL, out), RLX_OK);
    for (int i = 0; i < 2048; i++) cr_assert_eq(y[i], (float)(8191 - (i % 1024) * 8), "y[%d]", i);
    rlx_vk_model_free(vm);
    /* one past each limit */
    m.k[0].shared_bytes = 32769;
    cr_expect_eq(new_status(&m), RLX_E_DEV_SHARED, "shared memory in the kernel table");
    m.k[0].shared_bytes = 0;
    m.s.max_shared_bytes = 1u << 30;
    cr_expect_eq(new_status(&m), RLX_E_DEV_SHARED, "shared memory in the summary");
    m.s.max_shared_bytes = 32768;
    m.k[0].local[0] = 1025;
    cr_expect_eq(new_status(&m), RLX_E_DEV_WGSIZE, "1025 invocations");
    m.k[0].local[0] = 1;
    m.k[0].local[2] = 1025;
    cr_expect_eq(new_status(&m), RLX_E_DEV_WGSIZE, "1025 in z");
    m.k[0].local[0] = 1024, m.k[0].local[2] = 1;
    m.s.max_local_invocations = 4096;
    cr_expect_eq(new_status(&m), RLX_E_DEV_WGSIZE, "invocations in the summary");
    m.s.max_local_invocations = 1024;
    m.d[0].groups[1] = 65536;
    cr_expect_eq(new_status(&m), RLX_E_DEV_WGCOUNT, "65536 groups in y");
    m.d[0].groups[1] = 1;
    m.s.max_groups[2] = 70000;
    cr_expect_eq(new_status(&m), RLX_E_DEV_WGCOUNT, "groups in the summary");
    m.s.max_groups[2] = 1;
    m.s.max_buffer_bytes = (128u << 20) + 1;
    cr_expect_eq(new_status(&m), RLX_E_DEV_BUFFER, "a buffer in the summary");
    m.s.max_buffer_bytes = 0;
    m.info.arena_bytes = 1ull << 40;
    m.s.status_offset = 1ull << 40;
    cr_expect_eq(new_status(&m), RLX_E_DEV_BUFFER, "a 1 TiB arena");
    free(m.wfile), m.wfile = NULL;
    /* 65535 workgroups: runs */
    model_init(&m, 65535 * 4, 0);
    m.info.nweights = 0;
    add_tensor(&m, 1, "y", 0, 65535, 0);
    k = add_kernel(&m, "k_iota", K_IOTA, 1, 1, 0, 0, 0);
    add_dispatch(&m, k, 65535, 1, 0, 1, 0u);
    summarize(&m);
    make_weights(&m, NULL);
    vm = new_model(&m);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m.wfile, m.wfile_len), RLX_OK);
    static uint32_t u[65535];
    void *uout[] = {u};
    cr_assert_eq(rlx_vk_run(vm, NULL, uout), RLX_OK);
    for (uint32_t i = 0; i < 65535; i++) cr_assert_eq(u[i], i * 3 + 1, "u[%u]", i);
    rlx_vk_model_free(vm);
    free(m.wfile), m.wfile = NULL;
}

VK_TEST(malformed_tables) {
    static Model m;
    loop_model(&m, 1, 1);
    m.d[0].kernel = 1;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "a dispatch of a kernel that is not there");
    m.d[0].kernel = 0;
    m.d[0].npush = RLX_GPU_MAX_PUSH + 1;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "33 push words");
    m.d[0].npush = 2;
    m.out[0].offset = 256 - 2;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "an output past the arena's end");
    m.out[0].offset = 0;
    m.out_w[0] = 1;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "an output past the weights' end");
    m.out_w[0] = 0;
    static const uint32_t not_spirv[8] = {0x12345678};
    const void *code = m.k[0].code;
    m.k[0].code = not_spirv;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "code that is not SPIR-V");
    m.k[0].code = code;
    m.k[0].code_bytes -= 2;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "SPIR-V of a size that is not whole words");
    m.k[0].code_bytes += 2;
    m.s.status_offset = 128;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "a status word inside the arena");
    m.s.status_offset = 258;
    cr_expect_eq(new_status(&m), RLX_E_ARG, "a status word not on a word boundary");
    m.s.status_offset = 256;
    cr_expect_eq(new_status(&m), RLX_OK, "the status word right after the arena");
    cr_expect_eq(rlx_vk_model_new(NULL, NULL), RLX_E_ARG);
    rlx_vk_model_free(NULL);
    cr_expect_eq(rlx_vk_run(NULL, NULL, NULL), RLX_E_ARG);
    cr_expect_eq(rlx_vk_load_weights(NULL, "x"), RLX_E_ARG);
    cr_expect_str_eq(rlx_vk_device_name(NULL), "device=none");
    free(m.wfile), m.wfile = NULL;
}

/* The status word: a kernel that meets an index out of range stores
 * RLX_E_RANGE there (as rlxc's Gather does), and the run returns it; the
 * next run starts from zero again. */
VK_TEST(status_word) {
    static Model m;
    static const char *K_PICK = HEAD "layout(local_size_x = 64) in;\n"
                                     "layout(push_constant) uniform P { uint n, idx, y, status; } p;\n"
                                     "void main() {\n"
                                     "    uint i = gl_GlobalInvocationID.x;\n"
                                     "    if (i >= p.n) return;\n"
                                     "    uint j = au[p.idx + i];\n"
                                     "    if (j >= p.n) { au[p.status] = 11u; j = 0u; }\n"
                                     "    a[p.y + i] = float(j) * 2.0;\n"
                                     "}\n";
    model_init(&m, 2 * 100 * 4, 0);
    m.info.nweights = 0;
    add_tensor(&m, 0, "idx", 0, 100, 0);
    add_tensor(&m, 1, "y", 400, 100, 0);
    uint32_t k = add_kernel(&m, "k_pick", K_PICK, 64, 1, 0, 0, 0);
    add_dispatch(&m, k, 2, 1, 0, 4, 100u, 0u, 100u, (uint32_t)(m.s.status_offset / 4));
    summarize(&m);
    make_weights(&m, NULL);
    rlx_model *vm = new_model(&m);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m.wfile, m.wfile_len), RLX_OK);
    static uint32_t idx[100];
    static float y[100];
    const void *in[] = {idx};
    void *out[] = {y};
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 100; i++) idx[i] = (uint32_t)(99 - i);
        cr_expect_eq(rlx_vk_run(vm, in, out), RLX_OK, "round %d: indices in range", round);
        for (int i = 0; i < 100; i++) cr_expect_eq(y[i], (float)(2 * (99 - i)));
        idx[37] = 100;
        cr_expect_eq(rlx_vk_run(vm, in, out), RLX_E_RANGE, "round %d: an index out of range", round);
    }
    rlx_vk_model_free(vm);
    free(m.wfile), m.wfile = NULL;
}

/* ---- features: each need enables its feature, and only its ---- */

typedef struct {
    const char *name;
    uint32_t need;
    const char *glsl;
} Feature;

static const Feature features[] = {
    {"f16_arith", RLX_GPU_NEED_F16_ARITH,
     HEAD "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
          "layout(local_size_x = 1) in;\n"
          "void main() {\n"
          "    float16_t x = float16_t(a[0]), y = float16_t(a[1]);\n"
          "    a[2] = float(x / y);\n"
          "    a[3] = float(x + y);\n"
          "}\n"},
    {"16bit_storage", RLX_GPU_NEED_16BIT,
     HEAD "#extension GL_EXT_shader_16bit_storage : require\n"
          "layout(std430, set = 0, binding = 0) buffer ArenaH { float16_t h[]; };\n"
          "layout(local_size_x = 1) in;\n"
          "void main() { a[2] = float(h[1]); a[3] = float(h[3]); }\n"},
    {"8bit_storage", RLX_GPU_NEED_8BIT,
     HEAD "#extension GL_EXT_shader_8bit_storage : require\n"
          "layout(std430, set = 0, binding = 0) buffer ArenaB { uint8_t b[]; };\n"
          "layout(local_size_x = 1) in;\n"
          "void main() { a[2] = float(uint(b[0]) + uint(b[5])); a[3] = float(uint(b[7])); }\n"},
    {"int64", RLX_GPU_NEED_INT64,
     HEAD "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
          "layout(local_size_x = 1) in;\n"
          "void main() { int64_t x = int64_t(a[0]) * int64_t(1000000000); a[2] = float(x / int64_t(a[1]));"
          " a[3] = float(int(x >> 32)); }\n"},
    {"f64", RLX_GPU_NEED_F64,
     HEAD "layout(local_size_x = 1) in;\n"
          "void main() { double x = double(a[0]), y = double(a[1]); a[2] = float((x / y) * 1e10lf - 3333333333.0lf);"
          " a[3] = float(x + y); }\n"},
};

/* Each kernel's input (two words) and what it must give, computed here. */
static void feature_case(const Feature *f, float in[2], double expect[2], double *tol) {
    *tol = 0;
    if (f->need == RLX_GPU_NEED_16BIT) {
        uint16_t h[4] = {rlx_f32_to_f16(1.0f), rlx_f32_to_f16(2.0f), 0, rlx_f32_to_f16(-0.5f)};
        memcpy(in, h, 8);
        expect[0] = 2.0, expect[1] = -0.5;
    } else if (f->need == RLX_GPU_NEED_8BIT) {
        uint8_t b[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
        memcpy(in, b, 8);
        expect[0] = 0x11 + 0x66, expect[1] = 0x88;
    } else if (f->need == RLX_GPU_NEED_INT64) {
        in[0] = 7.0f, in[1] = 3.0f;
        expect[0] = (float)(7000000000ll / 3), expect[1] = (float)(7000000000ll >> 32);
    } else if (f->need == RLX_GPU_NEED_F64) {
        /* 0.3333... in double; in float arithmetic it would be about 171 */
        in[0] = 1.0f, in[1] = 3.0f;
        expect[0] = (float)((1.0 / 3.0) * 1e10 - 3333333333.0), expect[1] = 4.0;
        *tol = 1e-6;
    } else {
        /* f16 arithmetic: 1/3 rounded to half precision */
        in[0] = 1.0f, in[1] = 3.0f;
        expect[0] = rlx_f16_to_f32(rlx_f32_to_f16(1.0f / 3.0f)), expect[1] = 4.0;
    }
}

static void feature_model(Model *m, const Feature *f, uint32_t needs) {
    model_init(m, 256, 0);
    m->info.nweights = 0;
    add_tensor(m, 0, "in", 0, 2, 0);
    add_tensor(m, 1, "out", 8, 2, 0);
    uint32_t k = add_kernel(m, f->name, f->glsl, 1, 1, 0, 0, needs);
    add_dispatch(m, k, 1, 1, 0, 0);
    summarize(m);
    make_weights(m, NULL);
}

static void run_feature(const Feature *f, uint32_t needs, int check) {
    static Model m;
    feature_model(&m, f, needs);
    rlx_model *vm = new_model(&m);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m.wfile, m.wfile_len), RLX_OK);
    float in[2], out[2] = {-1, -1};
    double expect[2], tol;
    feature_case(f, in, expect, &tol);
    const void *ins[] = {in};
    void *outs[] = {out};
    cr_assert_eq(rlx_vk_run(vm, ins, outs), RLX_OK);
    if (check)
        for (int i = 0; i < 2; i++)
            cr_expect(fabs(out[i] - expect[i]) <= tol, "%s: out[%d] = %.9g, expected %.9g", f->name, i, out[i],
                      expect[i]);
    rlx_vk_model_free(vm);
}

VK_TEST(features_enabled) {
    for (unsigned i = 0; i < sizeof features / sizeof features[0]; i++) run_feature(&features[i], features[i].need, 1);
}

/* Without its need the feature is not enabled, and the layer says so: this
 * also proves that the layer is there and that its messages reach the
 * check (vk_end). One test per feature, so each must produce its own. */
#define FEATURE_NOT_ENABLED(i, nm)                       \
    VK_TEST(nm##_not_enabled_without_its_need) {         \
        expect_messages = 1;                             \
        run_feature(&features[i], 0, 0);                 \
    }
FEATURE_NOT_ENABLED(0, f16_arith)
FEATURE_NOT_ENABLED(1, storage16)
FEATURE_NOT_ENABLED(2, storage8)
FEATURE_NOT_ENABLED(3, int64)
FEATURE_NOT_ENABLED(4, f64)

/* Subgroups need no feature switched on; the check is the device's. */
VK_TEST(subgroups) {
    static Model m;
    static const char *K_SG = HEAD "#extension GL_KHR_shader_subgroup_arithmetic : require\n"
                                   "layout(local_size_x = 64) in;\n"
                                   "void main() {\n"
                                   "    float s = subgroupAdd(float(gl_SubgroupInvocationID + 1u));\n"
                                   "    if (gl_LocalInvocationID.x == 0u) a[0] = s, a[1] = float(gl_SubgroupSize);\n"
                                   "}\n";
    model_init(&m, 256, 0);
    m.info.nweights = 0;
    add_tensor(&m, 1, "out", 0, 2, 0);
    uint32_t k = add_kernel(&m, "k_sg", K_SG, 64, 1, 0, 0, RLX_GPU_NEED_SUBGROUP);
    add_dispatch(&m, k, 1, 1, 0, 0);
    summarize(&m);
    make_weights(&m, NULL);
    rlx_model *vm = new_model(&m);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m.wfile, m.wfile_len), RLX_OK);
    float out[2];
    void *outs[] = {out};
    cr_assert_eq(rlx_vk_run(vm, NULL, outs), RLX_OK);
    cr_expect(out[1] >= 1 && out[1] <= 64, "subgroup size %g", out[1]);
    cr_expect_eq(out[0], out[1] * (out[1] + 1) / 2, "subgroupAdd(1..%g) = %g", out[1], out[0]);
    rlx_vk_model_free(vm);
    free(m.wfile), m.wfile = NULL;
}

/* Division is IEEE division: spirv.c compiles without spirv-opt, whose -O
 * turns x / 7 into x * (1/7) (a different float for about half of all x). */
VK_TEST(exact_division) {
    static Model m;
    static const char *K_DIV = HEAD "layout(local_size_x = 64) in;\n"
                                    "void main() { uint i = gl_GlobalInvocationID.x; a[4096u + i] = a[i] / 7.0; }\n";
    model_init(&m, 8192 * 4, 0);
    m.info.nweights = 0;
    add_tensor(&m, 0, "x", 0, 4096, 0);
    add_tensor(&m, 1, "y", 4096 * 4, 4096, 0);
    uint32_t k = add_kernel(&m, "k_div", K_DIV, 64, 1, 0, 0, 0);
    add_dispatch(&m, k, 64, 1, 0, 0);
    summarize(&m);
    make_weights(&m, NULL);
    rlx_model *vm = new_model(&m);
    cr_assert_eq(rlx_vk_load_weights_buffer(vm, m.wfile, m.wfile_len), RLX_OK);
    static float x[4096], y[4096];
    for (int i = 0; i < 4096; i++) x[i] = (float)(i - 2048) * 0.37f + 0.001f * (float)(i % 13);
    const void *in[] = {x};
    void *out[] = {y};
    cr_assert_eq(rlx_vk_run(vm, in, out), RLX_OK);
    int same = 0;
    for (int i = 0; i < 4096; i++) {
        float q = x[i] / 7.0f;
        same += memcmp(&q, &y[i], 4) == 0;
    }
    cr_expect_eq(same, 4096, "%d of 4096 quotients are the CPU's", same);
    rlx_vk_model_free(vm);
    free(m.wfile), m.wfile = NULL;
}

/* ---- rlx_gpu_check on made-up devices (no device needed) ---- */

static rlx_gpu_caps roomy(void) {
    rlx_gpu_caps c = {RLX_GPU_NEED_F16_ARITH | RLX_GPU_NEED_16BIT | RLX_GPU_NEED_8BIT | RLX_GPU_NEED_INT64 |
                          RLX_GPU_NEED_F64 | RLX_GPU_NEED_SUBGROUP,
                      1024, {1024, 1024, 64}, 49152, {65535, 65535, 65535}, 1ull << 30, 0};
    return c;
}

static void check_model(Model *m, uint32_t needs) {
    static const uint32_t code[5] = {0x07230203u};
    model_init(m, 1024, 512);
    add_tensor(m, 0, "x", 0, 16, 0);
    add_tensor(m, 1, "y", 64, 16, 0);
    m->k[0] = (rlx_gpu_kernel){"k", code, sizeof code, {64, 2, 1}, 4096, 100, needs};
    m->s.nkernels = 1;
    add_dispatch(m, 0, 10, 20, 0, 0);
    summarize(m);
}

Test(gpu_check, each_missing_feature_has_its_status) {
    static const struct { uint32_t need; int status; } f[] = {
        {RLX_GPU_NEED_F16_ARITH, RLX_E_DEV_F16}, {RLX_GPU_NEED_16BIT, RLX_E_DEV_16BIT},
        {RLX_GPU_NEED_8BIT, RLX_E_DEV_8BIT},     {RLX_GPU_NEED_INT64, RLX_E_DEV_INT64},
        {RLX_GPU_NEED_F64, RLX_E_DEV_F64},       {RLX_GPU_NEED_SUBGROUP, RLX_E_DEV_SUBGROUP},
    };
    static Model m;
    for (unsigned i = 0; i < 6; i++) {
        rlx_gpu_caps c = roomy();
        check_model(&m, f[i].need);
        cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_OK);
        c.has &= ~f[i].need;
        cr_expect_eq(rlx_gpu_check(&m.s, &c), f[i].status, "need %#x", f[i].need);
        /* a need in the kernel only, not in the summary, counts too */
        m.s.needs = 0;
        cr_expect_eq(rlx_gpu_check(&m.s, &c), f[i].status, "need %#x in the kernel table", f[i].need);
        /* and one in the summary only */
        check_model(&m, 0);
        m.s.needs = f[i].need;
        cr_expect_eq(rlx_gpu_check(&m.s, &c), f[i].status, "need %#x in the summary", f[i].need);
    }
}

Test(gpu_check, limits_and_their_order) {
    static Model m;
    check_model(&m, RLX_GPU_NEED_INT64);
    rlx_gpu_caps c = roomy();
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_OK);
    c.max_shared_bytes = 4095;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_SHARED);
    c.max_local[1] = 1;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_SHARED, "shared memory is reported before workgroup size");
    c = roomy();
    c.max_local[1] = 1;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_WGSIZE);
    c = roomy();
    c.max_invocations = 127;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_WGSIZE);
    c = roomy();
    c.max_groups[1] = 19;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_WGCOUNT);
    c.max_buffer_bytes = 1023;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_BUFFER, "buffer before workgroup count");
    c.has = 0;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_INT64, "features first");
    c = roomy();
    c.loop_cap = 100;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_LOOPS, "100 trips reach a cap of 100");
    c.loop_cap = 101;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_OK);
    /* a workgroup whose invocation count overflows 32 bits */
    c = roomy();
    c.max_local[0] = c.max_local[1] = c.max_local[2] = UINT32_MAX;
    m.k[0].local[0] = m.k[0].local[1] = 1u << 16;
    m.k[0].local[2] = 1;
    m.s.max_local_invocations = 0;
    cr_expect_eq(rlx_gpu_check(&m.s, &c), RLX_E_DEV_WGSIZE);
    cr_expect_eq(rlx_gpu_check(NULL, &c), RLX_E_ARG);
    cr_expect_eq(rlx_gpu_check(&m.s, NULL), RLX_OK, "tables only");
}
