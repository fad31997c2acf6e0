/* main.c - the rlxc driver: flags, the pass pipeline, writing the outputs.
 *
 * The pipeline is straight-line (read, then lib/pipeline.c's constants,
 * schedule, infer, legalize, dce, fusion, plan, lower, then codegen), each
 * pass a function of lib/. Every
 * output is built in memory first; only when all passes succeeded are the
 * files written, each to a temporary name and then renamed into place, so a
 * failed compile leaves nothing behind. A user error anywhere longjmps back
 * here (rlx_try), prints its one line and exits 1. `rlxc check` is in
 * check.c.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rlx.h"
#include "rlx_npy.h"
#include "rlxc.h"
#include "target.h"

static const char usage_text[] =
    "usage: rlxc MODEL -o OUT.c [options]      compile MODEL (.rlxg) to C sources\n"
    "       rlxc MODEL --build -o OUT [options]  ... and build the executable OUT\n"
    "       rlxc import MODEL -o OUT.rlxg        convert a model to the .rlxg container\n"
    "       rlxc runtime -o DIR                  build the runtime library (DIR/librlxrt.a) for $CC\n"
    "                                            and $CFLAGS\n"
    "       rlxc targets                         what each target supports (a Markdown table)\n"
    "       rlxc check MODEL -i IN.npy ...       find the first layer that differs from the reference\n"
    "                                            (rlxc check --help)\n"
    "\n"
    "options:\n"
    "  -o PATH          output; writes PATH.c, PATH.h and PATH.weights (a trailing .c is dropped)\n"
    "  -n NAME          model name, the prefix of the generated API (default: from the output name)\n"
    "  --target T       code generation target (below; default c)\n"
    "  --build          also build the executable OUT: compile OUT.c with $CC (default cc) and\n"
    "                   $CFLAGS (default -O2) and link the runtime library that matches them\n"
    "                   (see ENVIRONMENT)\n"
    "  --emit-main      add a main() that reads inputs from .npy files and writes outputs as .npy\n"
    "  --embed-weights  write the weights as PATH_weights.c (a const, 64-byte aligned array\n"
    "                   NAME_weights, for NAME_load_weights_buffer) instead of PATH.weights\n"
    "  --dump-values    (debug, for rlxc check) the --emit-main program's --dump DIR writes every\n"
    "                   value right after the kernel that computed it\n"
    "  --dim NAME=VALUE\n"
    "                   give the symbolic input dimension NAME (ONNX dim_param) the size VALUE;\n"
    "                   repeat for each one\n"
    "  --freeze NAME=FILE.npy\n"
    "                   bind graph input NAME to the array in FILE.npy at compile time: it becomes\n"
    "                   a constant (for inputs that decide a shape, such as Reshape's shape or\n"
    "                   Slice's starts, which a static-shape compiler needs); repeatable\n"
    "  -d LETTERS       dump the IR as .rlxg JSON to stderr after passes: r read, i infer,\n"
    "                   l legalize, d dead-code removal, f fusion\n"
    "  --cuda-arch sm_XX\n"
    "                   --target cuda: the GPU architecture of the embedded PTX (default sm_80, which\n"
    "                   sm_86, sm_89, sm_90 and later parts compile when they load it)\n"
    "  --cuda-cubin     --target cuda: also embed a cubin for that architecture (no compile at load\n"
    "                   time on it; other parts use the PTX)\n"
    "  --threads N      the model's default thread count (the built program's --threads\n"
    "                   and rlx_model_set_threads change it at run time; default 1)\n"
    "  --report PREFIX  write the memory plan as PREFIX.txt (buffers, offsets, lifetimes,\n"
    "                   what is live at the peak) and PREFIX.svg (lifetimes against offsets);\n"
    "                   with --build, also print the executable's code size split into runtime\n"
    "                   core, kernels, driver and model (and add it to PREFIX.txt)\n"
    "  --arena-limit N  fail if the arena needs more than N bytes (K, M, G suffixes)\n"
    "  --memory-limit N stop compiling when rlxc itself would use more than N bytes (K, M, G;\n"
    "                   default 512M plus 16 times the model file's size; 0: no limit)\n"
    "  --max-nodes N    refuse graphs of more than N nodes, as read or with control flow\n"
    "                   unrolled (default 65536)\n"
    "  --blas openblas  GEMMs call OpenBLAS's cblas_sgemm (the runtime is then built with\n"
    "                   -DRLX_BLAS_OPENBLAS and linked with OpenBLAS; --build does both)\n"
    "  --precision P    how float tensors inside the model are stored: f32 (default), f16 or bf16\n"
    "                   (every tensor the target's kernels can keep in half), or auto (f16, but\n"
    "                   reductions, LogSoftmax and Exp/Log/Pow chains stay f32); kernels compute\n"
    "                   in f32 and round once per store; the model's inputs and outputs keep their\n"
    "                   dtypes\n"
    "  --keep-f32 NODE  the outputs of node NODE stay f32 under --precision; repeatable\n"
    "  --weights W      how GEMM and convolution weights are stored: f32 (default), f16, bf16, or\n"
    "                   int8 (symmetric, one f32 scale per output channel, dequantized inside the\n"
    "                   kernel)\n"
    "  -O0              no fusion and no weight prepacking (the unfused reference schedule)\n"
    "  --no-winograd    3x3 convolutions run im2col + GEMM, never Winograd (which trades a few\n"
    "                   ulps of rounding and larger weights for fewer multiplies)\n"
    "  -v               print the time of each pass, the memory plan and the thunk count to stderr\n"
    "  --help           this text\n"
    "  --version        print the version\n"
    "\n"
    "environment:\n"
    "  CC, CFLAGS, LDFLAGS\n"
    "                   the compiler and flags of --build. Optimization, debug, warning and\n"
    "                   -std flags apply to the model's own file; the runtime library is always\n"
    "                   compiled -O3; other flags (-D, -f, -m, --target, sanitizers) reach the\n"
    "                   library too, which is then built once for them into the cache\n"
    "  RLXC_CACHE_DIR   where libraries for other compilers and flags are cached (default\n"
    "                   $XDG_CACHE_HOME/rlxc, else ~/.cache/rlxc)\n"
    "  RLXC_RUNTIME_DIR the runtime sources to build from (default: beside rlxc)\n"
    "  RLX_ISA          read by the built program: portable, avx2 or avx512 forces the kernels'\n"
    "                   instruction set (default: the widest this CPU runs, chosen at start)\n"
    "  RLX_THREADS      read by the built program: its thread count\n"
    "  RLXC_NVRTC       --target cuda: the NVRTC library to open (default libnvrtc.so.13, .so.12 or\n"
    "                   .so through the dynamic linker, then in $CUDA_HOME/lib64, CUDA_HOME\n"
    "                   defaulting to /usr/local/cuda)\n"
    "  RLX_LIBCUDA, RLX_CUDA_DEVICE\n"
    "                   read by a --target cuda program: the driver library (default\n"
    "                   libcuda.so.1) and the device ordinal (default 0)\n";

typedef struct {
    const char *model, *out, *name, *target, *dump;
    int build, emit_main, verbose, import;
    const char *report;          /* --report PREFIX */
    int64_t arena_limit;         /* --arena-limit BYTES, -1 if none */
    int64_t memory_limit;        /* --memory-limit BYTES, -1 if not given (0: none) */
    int64_t max_nodes;           /* --max-nodes N, 0 if not given */
    int threads;                 /* --threads N: the model's default */
    int no_opt;                  /* -O0: no pattern, epilogue or elementwise fusion, no prepacking */
    int blas;                    /* --blas openblas */
    int no_winograd;             /* --no-winograd */
    int embed_weights;           /* --embed-weights */
    int dump_values;             /* --dump-values */
    RlxPrecision precision;      /* --precision */
    RlxDType weights;            /* --weights (RLX_I8 for int8) */
    int nkeep;                   /* --keep-f32 NODE names */
    const char **keep;
    int ndims;                   /* --dim NAME=VALUE bindings */
    const char **dim_names;
    int64_t *dim_values;
    int nfreeze;                 /* --freeze NAME=FILE.npy bindings */
    const char **freeze_names, **freeze_paths;
    RlxTargetOptions topt;       /* --cuda-arch, --cuda-cubin */
    const char *target_flag;     /* the first target-specific flag given, for the check against --target */
} Args;

/* ---- temporary outputs ---- */
static const char **tmp_paths;
static int ntmp, captmp;

void rlxc_add_temp(const char *path) {
    if (ntmp == captmp) {
        int cap = captmp ? 2 * captmp : 16;
        tmp_paths = rlx_realloc(tmp_paths, sizeof(char *) * (size_t)captmp, sizeof(char *) * (size_t)cap);
        captmp = cap;
    }
    tmp_paths[ntmp++] = path;
}

void rlxc_keep_temps(void) { ntmp = 0; }

void rlxc_remove_temps(void) {
    for (int i = 0; i < ntmp; i++) unlink(tmp_paths[i]);
    ntmp = 0;
}

/* Writes data to a temporary file beside `path`; returns its name. */
static const char *write_temp(const char *path, const void *data, size_t len) {
    const char *tmp = rlx_fmt("%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) rlx_error("%s: cannot write: %s", path, strerror(errno));
    rlxc_add_temp(tmp);
    size_t w = len ? fwrite(data, 1, len, f) : 0;
    int bad = fclose(f) != 0 || w != len;
    if (bad) rlx_error("%s: write failed: %s", path, strerror(errno));
    return tmp;
}

/* Renames the first n registered temporaries to their final names. */
static void commit_temps(const char **finals, int n) {
    for (int i = 0; i < n; i++)
        if (rename(tmp_paths[i], finals[i]) != 0) rlx_error("%s: cannot rename into place: %s", finals[i], strerror(errno));
    ntmp = 0;
}

/* ---- helpers ---- */
static int is_identifier(const char *s) {
    if (!*s || (*s >= '0' && *s <= '9')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static const char *strip_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix) ? rlx_strndup(s, n - k) : s;
}

static const char *name_from_path(const char *path) {
    const char *b = base_name(path);
    char *s = rlx_strndup(b, strcspn(b, "."));
    for (char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) *p = '_';
    if (!*s || (*s >= '0' && *s <= '9')) return rlx_fmt("m_%s", s);
    return s;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int verbose;
static double pass_t0;
static void pass_done(const char *name) {
    double t = seconds();
    if (verbose)
        fprintf(stderr, "pass %-10s %8.3f ms  %6lld MiB held\n", name, (t - pass_t0) * 1e3,
                (long long)(rlx_memory_held() >> 20));
    pass_t0 = t;
}

static void dump_if(const Args *a, char letter, const RlxGraph *g) {
    if (a->dump && strchr(a->dump, letter)) rlx_graph_dump(g, stderr);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static RlxGraph *read_model(const Args *a) {
    if (ends_with(a->model, ".onnx")) return rlx_read_onnx(a->model, a->ndims, a->dim_names, a->dim_values);
    if (a->ndims) rlx_error("rlxc: --dim applies to ONNX models only");
    return rlx_read_rlxg(a->model);
}

/* --dim NAME=VALUE */
static void add_dim(Args *a, const char *arg) {
    const char *eq = strchr(arg, '=');
    char *end = NULL;
    errno = 0;
    long long v = eq ? strtoll(eq + 1, &end, 10) : -1;
    if (!eq || eq == arg || end == eq + 1 || *end || errno == ERANGE || v < 0)
        rlx_error("rlxc: --dim wants NAME=VALUE with VALUE a non-negative integer, not '%s'", arg);
    const char *name = rlx_strndup(arg, (size_t)(eq - arg));
    for (int i = 0; i < a->ndims; i++)
        if (!strcmp(a->dim_names[i], name)) rlx_error("rlxc: --dim %s is given twice", name);
    a->dim_names[a->ndims] = name;
    a->dim_values[a->ndims++] = v;
}

/* --freeze NAME=FILE.npy */
static void add_freeze(Args *a, const char *arg) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) rlx_error("rlxc: --freeze wants NAME=FILE.npy, not '%s'", arg);
    const char *name = rlx_strndup(arg, (size_t)(eq - arg));
    for (int i = 0; i < a->nfreeze; i++)
        if (!strcmp(a->freeze_names[i], name)) rlx_error("rlxc: --freeze %s is given twice", name);
    a->freeze_names[a->nfreeze] = name;
    a->freeze_paths[a->nfreeze++] = eq + 1;
}

/* Turns each --freeze input into a weight holding the .npy file's array,
 * which must have the input's dtype and shape; it leaves the input list. */
static void freeze_inputs(const Args *a, RlxGraph *g) {
    for (int f = 0; f < a->nfreeze; f++) {
        const char *name = a->freeze_names[f], *path = a->freeze_paths[f];
        int v = rlx_value_find(g, name), k = 0;
        while (k < g->ninputs && g->inputs[k] != v) k++;
        if (v < 0 || k == g->ninputs) rlx_error("rlxc: --freeze %s: the model has no graph input '%s'", name, name);
        int dtype, rank;
        int64_t dims[RK_MAX_RANK];
        void *data;
        size_t nbytes;
        int st = rlx_npy_read(path, &dtype, &rank, dims, &data, &nbytes);
        if (st)
            rlx_error("%s: --freeze %s: %s", path, name,
                      st == RLX_E_NOFILE ? "cannot open the file"
                      : st == RLX_E_FORMAT ? "not a .npy file rlxc reads (C order, little-endian, rank <= 8)"
                      : st == RLX_E_TRUNCATED ? "the file is truncated" : rlx_status_str(st));
        uint8_t *copy = rlx_alloc(nbytes + 1);
        memcpy(copy, data, nbytes);
        free(data);
        RlxValue *x = &g->v[v];
        int same = dtype == (int)x->dtype && rank == x->rank;
        for (int i = 0; same && i < rank; i++) same = dims[i] == x->dims[i];
        if (!same) {
            RlxValue got = *x;
            got.rank = rank;
            memcpy(got.dims, dims, sizeof(int64_t) * (size_t)rank);
            rlx_error("%s: --freeze %s: the array is %s %s, but the input is %s %s", path, name,
                      rlx_dtype_name(dtype), rlx_shape_str(&got), rlx_dtype_name(x->dtype), rlx_shape_str(x));
        }
        x->data = copy;
        x->flags = (x->flags & ~RLX_V_INPUT) | RLX_V_WEIGHT;
        memmove(g->inputs + k, g->inputs + k + 1, sizeof(int) * (size_t)(g->ninputs - k - 1));
        g->ninputs--;
    }
}

static int parse_threads(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < 1 || v > 1024) rlx_error("rlxc: --threads wants a count from 1 to 1024, not '%s'", s);
    return (int)v;
}

/* --cuda-arch sm_XX: the compute capability XX (two or three digits). */
static int parse_cuda_arch(const char *s) {
    size_t n = strncmp(s, "sm_", 3) ? 0 : strspn(s + 3, "0123456789");
    if (n < 2 || n > 3 || s[3 + n] || s[3] == '0')
        rlx_error("rlxc: --cuda-arch wants an architecture like sm_80 or sm_90, not '%s'", s);
    return atoi(s + 3);
}

/* A byte count: digits, optionally followed by K, M or G (powers of 1024). */
static int64_t parse_bytes(const char *s, const char *flag) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int64_t mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1 << 10, end++;
    else if (*end == 'M' || *end == 'm') mul = 1 << 20, end++;
    else if (*end == 'G' || *end == 'g') mul = 1 << 30, end++;
    if (end == s || *end || errno == ERANGE || v < 0 || v > INT64_MAX / mul)
        rlx_error("rlxc: %s wants a byte count like 65536 or 64K, not '%s'", flag, s);
    return (int64_t)v * mul;
}

/* A count from 1 to 2^31 - 1. */
static int64_t parse_count(const char *s, const char *flag) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < 1 || v > 0x7fffffff)
        rlx_error("rlxc: %s wants a count from 1 to 2147483647, not '%s'", flag, s);
    return (int64_t)v;
}

/* The compile-time limits (docs/robustness.md): --memory-limit, else 512
 * MiB and 16 times the model file's size (ResNet-18's 47 MB ONNX file
 * peaks at 420 MB); --max-nodes, else RLX_DEFAULT_MAX_NODES. */
static void set_limits(const Args *a) {
    rlx_limits.file = a->model;
    rlx_limits.max_nodes = a->max_nodes ? a->max_nodes : RLX_DEFAULT_MAX_NODES;
    if (a->memory_limit >= 0) {
        rlx_limits.memory = a->memory_limit;
        return;
    }
    struct stat st;
    int64_t size = stat(a->model, &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size : 0;
    int64_t base = (int64_t)512 << 20;
    rlx_limits.memory = size > (INT64_MAX - base) / 16 ? INT64_MAX : base + 16 * size;
}

static int parse_args(int argc, char **argv, Args *a) {
    memset(a, 0, sizeof *a);
    a->target = "c";
    a->arena_limit = -1;
    a->memory_limit = -1;
    a->dim_names = rlx_alloc(sizeof(char *) * (size_t)argc);
    a->dim_values = rlx_alloc(sizeof(int64_t) * (size_t)argc);
    a->freeze_names = rlx_alloc(sizeof(char *) * (size_t)argc);
    a->freeze_paths = rlx_alloc(sizeof(char *) * (size_t)argc);
    int i = 1;
    if (argc > 1 && !strcmp(argv[1], "import")) {
        a->import = 1;
        i = 2;
    }
    for (; i < argc; i++) {
        const char *s = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(usage_text, stdout);
            /* the targets, from their descriptors */
            printf("\ntargets:\n");
            for (int t = 0; t < rlx_ntargets; t++) printf("  %-16s %s\n", rlx_targets[t]->name, rlx_targets[t]->doc);
            exit(0);
        } else if (!strcmp(s, "--version")) {
            printf("rlxc %s\n", RLX_VERSION);
            exit(0);
        } else if (!strcmp(s, "-o") && has) a->out = argv[++i];
        else if (!strcmp(s, "-n") && has) a->name = argv[++i];
        else if (!strcmp(s, "--target") && has) a->target = argv[++i];
        else if (!strcmp(s, "-d") && has) a->dump = argv[++i];
        else if (!strcmp(s, "--dim") && has) add_dim(a, argv[++i]);
        else if (!strcmp(s, "--freeze") && has) add_freeze(a, argv[++i]);
        else if (!strcmp(s, "--build")) a->build = 1;
        else if (!strcmp(s, "--precision") && has) {
            const char *p = argv[++i];
            static const char *const modes[] = {"f32", "f16", "bf16", "auto"};
            int m = -1;
            for (int k = 0; k < 4; k++)
                if (!strcmp(p, modes[k])) m = k;
            if (m < 0) rlx_error("rlxc: --precision takes f32, f16, bf16 or auto, not '%s'", p);
            a->precision = (RlxPrecision)m;
        } else if (!strcmp(s, "--weights") && has) {
            const char *w = argv[++i];
            if (!strcmp(w, "f32")) a->weights = RLX_F32;
            else if (!strcmp(w, "f16")) a->weights = RLX_F16;
            else if (!strcmp(w, "bf16")) a->weights = RLX_BF16;
            else if (!strcmp(w, "int8")) a->weights = RLX_I8;
            else rlx_error("rlxc: --weights takes f32, f16, bf16 or int8, not '%s'", w);
        } else if (!strcmp(s, "--keep-f32") && has) {
            a->keep = rlx_realloc(a->keep, sizeof(char *) * (size_t)a->nkeep, sizeof(char *) * (size_t)(a->nkeep + 1));
            a->keep[a->nkeep++] = argv[++i];
        }
        else if (!strcmp(s, "--report") && has) a->report = argv[++i];
        else if (!strcmp(s, "--threads") && has) a->threads = parse_threads(argv[++i]);
        else if (!strcmp(s, "--arena-limit") && has) a->arena_limit = parse_bytes(argv[++i], "--arena-limit");
        else if (!strcmp(s, "--memory-limit") && has) a->memory_limit = parse_bytes(argv[++i], "--memory-limit");
        else if (!strcmp(s, "--max-nodes") && has) a->max_nodes = parse_count(argv[++i], "--max-nodes");
        else if (!strcmp(s, "--emit-main")) a->emit_main = 1;
        else if (!strcmp(s, "--embed-weights")) a->embed_weights = 1;
        else if (!strcmp(s, "--dump-values")) a->dump_values = 1;
        else if (!strcmp(s, "--cuda-arch") && has) {
            a->topt.cuda_arch = parse_cuda_arch(argv[++i]);
            if (!a->target_flag) a->target_flag = s;
        } else if (!strcmp(s, "--cuda-cubin")) {
            a->topt.cuda_cubin = 1;
            if (!a->target_flag) a->target_flag = s;
        }
        else if (!strcmp(s, "-v")) a->verbose = 1;
        else if (!strcmp(s, "-O0")) a->no_opt = 1;
        else if (!strcmp(s, "--no-winograd")) a->no_winograd = 1;
        else if (!strcmp(s, "--blas") && has) {
            const char *b = argv[++i];
            if (!strcmp(b, "openblas")) a->blas = 1;
            else if (strcmp(b, "none")) rlx_error("rlxc: --blas takes openblas or none, not '%s'", b);
        }
        else if (s[0] == '-' && s[1]) rlx_error("rlxc: unknown option '%s' (see rlxc --help)", s);
        else if (!a->model) a->model = s;
        else rlx_error("rlxc: more than one model given ('%s' and '%s')", a->model, s);
    }
    if (!a->model) rlx_error("rlxc: no model given (see rlxc --help)");
    if (!a->out) rlx_error("rlxc: no output given (-o)");
    if (a->name && !is_identifier(a->name)) rlx_error("rlxc: model name '%s' is not a C identifier", a->name);
    if (a->embed_weights && strcmp(a->target, "c"))   /* the GPU printers write the weights as a file */
        rlx_error("rlxc: --embed-weights is for --target c, not '%s' (its weights stay a file)", a->target);
    if (a->target_flag && strcmp(a->target, "cuda"))
        rlx_error("rlxc: %s is for --target cuda, not '%s'", a->target_flag, a->target);
    if (a->dump && a->dump[strspn(a->dump, "rildf")])
        rlx_error("rlxc: unknown dump letters '%s' (r, i, l, d, f)", a->dump);
    return 0;
}

/* The pipeline's hook: -v's pass times and plan summary, -d's dumps. */
static void after_stage(void *hook, const char *stage, char letter, RlxGraph *g, const RlxPlan *plan) {
    const Args *a = hook;
    pass_done(stage);
    if (letter) dump_if(a, letter, g);
    if (verbose && !strcmp(stage, "plan")) rlx_plan_print(g, plan, stderr);
}

static void compile(const Args *a) {
    verbose = a->verbose;
    pass_t0 = seconds();
    RlxGraph *g = read_model(a);
    freeze_inputs(a, g);
    pass_done("read");
    dump_if(a, 'r', g);
    if (a->import) {
        RlxBuf out = {0};
        rlx_write_rlxg(g, &out);
        const char *final[] = {a->out};
        write_temp(a->out, out.data, out.len);
        commit_temps(final, 1);
        return;
    }
    /* a target that cannot --build here says so before any pass runs */
    const RlxTarget *want = rlx_target_find(g->file, a->target);
    if (a->build && want->no_build) rlx_error("rlxc: --build: %s", want->no_build);
    RlxPipeline pipe = {a->target, a->no_opt, a->blas, a->no_winograd, a->arena_limit, after_stage, (void *)a,
                        a->precision, a->weights, a->nkeep, a->keep};
    RlxCompiled comp;
    rlx_compile_graph(g, &pipe, &comp);
    RlxPlan *plan = comp.plan;
    RlxThunkList *tl = comp.thunks;
    const RlxTarget *tg = comp.target;
    void *selected = comp.selected;
    if (verbose) fprintf(stderr, "thunks: %d\n", tl->n);

    const char *base = strip_suffix(a->out, ".c");
    const char *name = a->name ? a->name : name_from_path(base);
    g->name = name;
    RlxOutFile files[RLX_MAX_OUT_FILES];
    memset(files, 0, sizeof files);
    int nfiles = 0;
    RlxEmitJob job = {g, plan, tl, name, rlx_fmt("%s.h", base_name(base)), a->emit_main || a->build, a->threads,
                      a->blas, files, &nfiles, selected, a->embed_weights, a->dump_values,
                      &a->topt};
    tg->emit(&job);
    pass_done("codegen");

    const char *finals[RLX_MAX_OUT_FILES];
    for (int i = 0; i < nfiles; i++) {
        finals[i] = rlx_fmt("%s%s", base, files[i].suffix);
        write_temp(finals[i], files[i].data.data, files[i].data.len);
    }
    commit_temps(finals, nfiles);
    RlxBuf txt = {0}, svg = {0};
    if (a->report) {
        rlx_report_text(g, plan, &txt);
        rlx_report_svg(g, plan, &svg);
    }
    if (a->build) {
        /* the sources are in place; a failed build removes them again */
        for (int i = 0; i < nfiles; i++) rlxc_add_temp(finals[i]);
        rlx_buf_printf(&txt, "\n");
        rlxc_build_executable(base, base, a->blas, tg->build_libs, a->embed_weights ? rlx_fmt("%s_weights.c", base) : NULL,
                              a->report ? &txt : NULL);
        rlxc_keep_temps();
        pass_done("build");
    }
    if (a->report) {
        const char *rep[2] = {rlx_fmt("%s.txt", a->report), rlx_fmt("%s.svg", a->report)};
        write_temp(rep[0], txt.data, txt.len);
        write_temp(rep[1], svg.data, svg.len);
        commit_temps(rep, 2);
    }
}

/* rlxc targets: what each target supports, from the descriptors (the
 * table of docs/targets.md, which scripts/targets_doc.sh regenerates and
 * tests/integration/cli.sh compares). */
static void print_targets(void) {
    static const char *const feat[] = {"f64", "int64", "f16 arithmetic", "subgroups", "CPU threads"};
    printf("| target | what it emits | arena alignment | features | limits |\n|---|---|---|---|---|\n");
    for (int t = 0; t < rlx_ntargets; t++) {
        const RlxTarget *tg = rlx_targets[t];
        RlxBuf f = {0}, l = {0};
        for (int i = 0; i < 5; i++)
            if (tg->features >> i & 1) rlx_buf_printf(&f, "%s%s", f.len ? ", " : "", feat[i]);
        if (tg->limits.workgroup_size)
            rlx_buf_printf(&l, "workgroups of %lld, %lld per grid dimension, %lld B shared, %lld B push constants",
                           (long long)tg->limits.workgroup_size, (long long)tg->limits.groups_per_dim,
                           (long long)tg->limits.shared_bytes, (long long)tg->limits.push_bytes);
        printf("| `%s` | %s | %lld | %s | %s |\n", tg->name, tg->doc, (long long)tg->align, f.len ? f.data : "-",
               l.len ? l.data : "-");
    }
    printf("\nOps and the dtypes each target supports for them (legalize's columns; `-`: not supported):\n\n| op |");
    for (int t = 0; t < rlx_ntargets; t++) printf(" %s |", rlx_targets[t]->name);
    printf("\n|---|");
    for (int t = 0; t < rlx_ntargets; t++) printf("---|");
    printf("\n");
    for (int op = 0; op < RLX_NOPS; op++) {
        unsigned any = 0;
        for (int t = 0; t < rlx_ntargets; t++) any |= rlx_target_op_dtypes(rlx_targets[t], (RlxOp)op);
        if (!any) continue;
        printf("| %s |", rlx_ops[op].name);
        for (int t = 0; t < rlx_ntargets; t++) {
            unsigned m = rlx_target_op_dtypes(rlx_targets[t], (RlxOp)op);
            RlxBuf b = {0};
            if (m == RLX_DT_ANY) rlx_buf_printf(&b, "all");
            else
                for (int d = 0; d < RLX_NDTYPES; d++)
                    if (m >> d & 1) rlx_buf_printf(&b, "%s%s", b.len ? " " : "", rlx_dtype_name(d));
            printf(" %s |", b.len ? b.data : "-");
        }
        printf("\n");
    }
}

/* rlxc runtime -o DIR: the runtime library for $CC and $CFLAGS. */
static void build_runtime(int argc, char **argv) {
    const char *out = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--isa-flags") && i + 1 < argc) {
            printf("%s\n", rlxc_isa_flags(argv[++i]));   /* for the Makefile's kernel tests */
            return;
        } else rlx_error("rlxc runtime: unknown argument '%s' (rlxc runtime -o DIR)", argv[i]);
    }
    if (!out) rlx_error("rlxc runtime: no output directory given (-o DIR)");
    rlxc_build_runtime_into(out, getenv("CC"), getenv("CFLAGS"));
}

int main(int argc, char **argv) {
    jmp_buf jb;
    if (rlx_try(jb)) {
        fprintf(stderr, "%s\n", rlx_diag.msg);
        rlxc_remove_temps();
        rlx_arena_free_all();
        return 1;
    }
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 1;
    }
    if (!strcmp(argv[1], "targets")) {
        print_targets();
        rlx_arena_free_all();
        return 0;
    }
    if (!strcmp(argv[1], "runtime")) {
        build_runtime(argc, argv);
        rlx_arena_free_all();
        return 0;
    }
    if (!strcmp(argv[1], "check")) {
        int rc = rlxc_check(argc - 1, argv + 1);
        rlx_arena_free_all();
        return rc;
    }
    Args a;
    parse_args(argc, argv, &a);
    set_limits(&a);
    compile(&a);
    rlx_arena_free_all();
    return 0;
}
