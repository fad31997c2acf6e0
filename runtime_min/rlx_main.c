/* rlx_main.c - the command-line harness that --emit-main and --build link in.
 *
 *   MODEL [--weights PATH] [-i IN.npy]... [-o OUT.npy]... [--bench N] [--threads N] [--dump DIR]
 *
 * Inputs and outputs are .npy files in the model's declaration order; an
 * input must have the declared dtype and shape exactly (no silent
 * conversion). Without -o, each output is printed (name, dtype, shape, the
 * first values). --bench N runs once to warm up, then N times, and prints
 * `bench: runs=N median_ms=X min_ms=Y WHAT`, WHAT naming what ran the
 * kernels: isa=NAME on the C target (the instruction set, rlx_isa_name),
 * device=NAME on a GPU target. The default weights file is
 * argv[0] followed by ".weights", or, for a model built with rlxc
 * --embed-weights, the image linked into the program. Errors print one line
 * and return 1. --dump DIR (for a model compiled with rlxc's --dump-values,
 * as rlxc check does) writes every value of the first run into DIR as
 * rlx_dump_value says.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rlx_npy.h"
#include "rlx_rt.h"

#define MAX_IO 256

static double now_ms(void) {
#if defined(CLOCK_MONOTONIC)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
#else
    return (double)clock() * 1e3 / CLOCKS_PER_SEC;
#endif
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t tensor_bytes(const rlx_tensor_info *t) {
    uint64_t n = (uint64_t)rlx_dtype_size(t->dtype);
    for (int i = 0; i < t->rank; i++) n *= (uint64_t)t->dims[i];
    return n;
}

static void print_value(const void *p, int dtype, uint64_t i) {
    switch (dtype) {
    case RLX_F32: printf("%g", ((const float *)p)[i]); break;
    case RLX_F64: printf("%g", ((const double *)p)[i]); break;
    case RLX_F16: printf("%g", rlx_f16_to_f32(((const uint16_t *)p)[i])); break;
    case RLX_BF16: printf("%g", rlx_bf16_to_f32(((const uint16_t *)p)[i])); break;
    case RLX_I8: printf("%d", ((const int8_t *)p)[i]); break;
    case RLX_U8: case RLX_BOOL: printf("%u", ((const uint8_t *)p)[i]); break;
    case RLX_I16: printf("%d", ((const int16_t *)p)[i]); break;
    case RLX_U16: printf("%u", ((const uint16_t *)p)[i]); break;
    case RLX_I32: printf("%ld", (long)((const int32_t *)p)[i]); break;
    case RLX_U32: printf("%lu", (unsigned long)((const uint32_t *)p)[i]); break;
    case RLX_I64: printf("%lld", (long long)((const int64_t *)p)[i]); break;
    case RLX_U64: printf("%llu", (unsigned long long)((const uint64_t *)p)[i]); break;
    }
}

static void print_tensor(const rlx_tensor_info *t, const void *p) {
    uint64_t n = tensor_bytes(t) / (uint64_t)rlx_dtype_size(t->dtype);
    printf("%s: %s [", t->name, rlx_dtype_name(t->dtype));
    for (int i = 0; i < t->rank; i++) printf(i ? ",%lld" : "%lld", (long long)t->dims[i]);
    printf("] = [");
    for (uint64_t i = 0; i < n && i < 10; i++) {
        if (i) printf(", ");
        print_value(p, t->dtype, i);
    }
    printf(n > 10 ? ", ...]\n" : "]\n");
}

static int usage(const char *prog) {
    fprintf(stderr, "usage: %s [--weights PATH] [-i IN.npy]... [-o OUT.npy]... [--bench N] [--threads N] [--dump DIR]\n",
            prog);
    return 1;
}

static const void *embedded_weights;   /* rlx_main_embedded's image */
static size_t embedded_len;

int rlx_main_embedded(int argc, char **argv, const rlx_model_api *api, const void *weights, size_t len) {
    embedded_weights = weights;
    embedded_len = len;
    return rlx_main(argc, argv, api);
}

static const char *dump_dir;   /* --dump DIR, during the first run */
static FILE *dump_index;
static int dump_step;

/* A name on one line of index.tsv. */
static void put_field(FILE *f, const char *s) {
    for (; *s; s++) fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
    fputc('\t', f);
}

int rlx_dump_value(const char *value, const char *node, const char *op, int dtype, int rank, const int64_t *dims,
                   const void *data) {
    if (!dump_dir) return RLX_OK;
    char file[32], path[4096];
    snprintf(file, sizeof file, "v%05d.npy", dump_step);
    if (snprintf(path, sizeof path, "%s/%s", dump_dir, file) >= (int)sizeof path) return RLX_E_ARG;
    int st = rlx_npy_write(path, dtype, rank, dims, data);
    if (st) return st;
    fprintf(dump_index, "%d\t", dump_step++);
    put_field(dump_index, value);
    put_field(dump_index, node);
    put_field(dump_index, op);
    fprintf(dump_index, "%s\n", file);
    return ferror(dump_index) ? RLX_E_IO : RLX_OK;
}

static int parse_count(const char *s, long *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > 1000000) return 0;
    *out = v;
    return 1;
}

int rlx_main(int argc, char **argv, const rlx_model_api *api) {
    const rlx_model_info *info = api->info;
    const char *prog = argc > 0 ? argv[0] : "model";
    const char *weights = NULL, *ins[MAX_IO], *outs[MAX_IO];
    int nin = 0, nout = 0, rc = 1;
    long bench = 0, threads = 1;
    int threads_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--weights") && has) weights = argv[++i];
        else if (!strcmp(a, "-i") && has && nin < MAX_IO) ins[nin++] = argv[++i];
        else if (!strcmp(a, "-o") && has && nout < MAX_IO) outs[nout++] = argv[++i];
        else if (!strcmp(a, "--bench") && has) {
            if (!parse_count(argv[++i], &bench)) return usage(prog);
        } else if (!strcmp(a, "--threads") && has) {
            if (!parse_count(argv[++i], &threads) || threads > 1024) return usage(prog);
            threads_given = 1;
        } else if (!strcmp(a, "--dump") && has) {
            dump_dir = argv[++i];
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(prog);
            return 0;
        } else {
            fprintf(stderr, "%s: unknown or incomplete option '%s'\n", prog, a);
            return 1;
        }
    }
    if (nin != info->ninputs) {
        fprintf(stderr, "%s: model '%s' takes %d inputs (-i), %d given\n", prog, info->name, info->ninputs, nin);
        return 1;
    }
    if (nout && nout != info->noutputs) {
        fprintf(stderr, "%s: model '%s' has %d outputs (-o), %d given\n", prog, info->name, info->noutputs, nout);
        return 1;
    }

    char *wpath = NULL;
    void *in_data[MAX_IO] = {0}, *out_data[MAX_IO] = {0};
    rlx_model *m = NULL;
    int st = api->init(&m);
    if (st) {
        fprintf(stderr, "%s: %s\n", prog, rlx_status_str(st));
        return 1;
    }
    if (threads_given && !api->set_threads && threads != 1) {
        fprintf(stderr, "%s: --threads: this model's target runs on a GPU\n", prog);
        goto done;
    }
    if (threads_given && api->set_threads && (st = api->set_threads(m, (int)threads))) {
        fprintf(stderr, "%s: cannot start %ld threads: %s\n", prog, threads, rlx_status_str(st));
        goto done;
    }
    if (!weights && embedded_weights) {
        st = rlx_load_weights_buffer(m, embedded_weights, embedded_len);
        if (st) {
            fprintf(stderr, "%s: the embedded weights: %s\n", prog, rlx_status_str(st));
            goto done;
        }
    } else if (!weights) {
        size_t n = strlen(prog);
        wpath = malloc(n + 9);
        if (!wpath) goto done;
        memcpy(wpath, prog, n);
        memcpy(wpath + n, ".weights", 9);
        weights = wpath;
    }
    if (weights && (st = api->load_weights(m, weights))) {
        fprintf(stderr, "%s: %s: %s\n", prog, weights, rlx_status_str(st));
        goto done;
    }
    for (int i = 0; i < nin; i++) {
        const rlx_tensor_info *t = &info->inputs[i];
        int dtype, rank;
        int64_t dims[RK_MAX_RANK];
        size_t nbytes;
        st = rlx_npy_read(ins[i], &dtype, &rank, dims, &in_data[i], &nbytes);
        if (st) {
            fprintf(stderr, "%s: %s: %s\n", prog, ins[i], rlx_status_str(st));
            goto done;
        }
        int same = dtype == t->dtype && rank == t->rank;
        for (int d = 0; same && d < rank; d++) same = dims[d] == t->dims[d];
        if (!same || nbytes != tensor_bytes(t)) {
            fprintf(stderr, "%s: %s: input '%s' must be %s with shape [", prog, ins[i], t->name, rlx_dtype_name(t->dtype));
            for (int d = 0; d < t->rank; d++) fprintf(stderr, d ? ",%lld" : "%lld", (long long)t->dims[d]);
            fprintf(stderr, "]\n");
            goto done;
        }
    }
    for (int i = 0; i < info->noutputs; i++) {
        out_data[i] = malloc(tensor_bytes(&info->outputs[i]) + 1);
        if (!out_data[i]) {
            fprintf(stderr, "%s: out of memory\n", prog);
            goto done;
        }
    }
    int dumping = dump_dir != NULL;
    if (dump_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/index.tsv", dump_dir);
        if (!(dump_index = fopen(path, "w"))) {
            fprintf(stderr, "%s: --dump: cannot write %s\n", prog, path);
            goto done;
        }
    }
    st = api->run(m, (const void *const *)in_data, out_data);
    if (dump_index && fclose(dump_index) && !st) st = RLX_E_IO;
    dump_index = NULL;
    dump_dir = NULL;   /* the first run only */
    if (st) {
        fprintf(stderr, "%s: run failed: %s\n", prog, rlx_status_str(st));
        goto done;
    }
    if (bench) {
        double *t = malloc(sizeof(double) * (size_t)bench);
        if (!t) goto done;
        for (long r = 0; r < bench; r++) {
            double t0 = now_ms();
            st = api->run(m, (const void *const *)in_data, out_data);
            t[r] = now_ms() - t0;
            if (st) break;
        }
        if (!st) {
            qsort(t, (size_t)bench, sizeof(double), cmp_double);
            double med = bench % 2 ? t[bench / 2] : (t[bench / 2 - 1] + t[bench / 2]) / 2;
            printf("bench: runs=%ld median_ms=%.3f min_ms=%.3f %s\n", bench, med, t[0], api->describe(m));
        }
        free(t);
        if (st) {
            fprintf(stderr, "%s: run failed: %s\n", prog, rlx_status_str(st));
            goto done;
        }
    }
    for (int i = 0; i < info->noutputs; i++) {
        const rlx_tensor_info *t = &info->outputs[i];
        if (nout) {
            st = rlx_npy_write(outs[i], t->dtype, t->rank, t->dims, out_data[i]);
            if (st) {
                fprintf(stderr, "%s: %s: %s\n", prog, outs[i], rlx_status_str(st));
                goto done;
            }
        } else if (!bench && !dumping) {   /* rlxc check reads the dump, not stdout */
            print_tensor(t, out_data[i]);
        }
    }
    rc = 0;
done:
    for (int i = 0; i < MAX_IO; i++) {
        free(in_data[i]);
        free(out_data[i]);
    }
    free(wpath);
    if (m) api->free(m);
    return rc;
}
