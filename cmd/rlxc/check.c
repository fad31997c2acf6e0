/* check.c - `rlxc check`: which layer of a build first differs from the reference.
 *
 *   rlxc check MODEL -i IN.npy [-i ...] [--target T] [--expect OUT.npy ...]
 *              [--rtol X] [--atol X] [--exec PREFIX] [--keep DIR] [--dim N=V] [--freeze N=F]
 *
 * It runs rlxc itself twice, each time with --build and the C printer's
 * debug option --dump-values (the built program's --dump DIR then writes
 * every value right after the kernel that computed it, before the arena
 * reuses its bytes):
 *
 *   the build under test   --target T (default c), with the caller's $CC and
 *                          $CFLAGS, every optimization on; run through
 *                          --exec PREFIX if given (an emulator such as
 *                          "qemu-aarch64 -L /usr/aarch64-linux-gnu" for a
 *                          cross compiler in $CC);
 *   the reference          --target c -O0 (no fusion, no prepacking, so no
 *                          Winograd and no fused epilogues: one kernel per
 *                          node), built with cc -O2 and run on this machine
 *                          with RLX_ISA=portable (the portable kernels of
 *                          the dispatching x86 library).
 *
 * Both run on the inputs; then every value that exists in both (by name:
 * fusion leaves the last value of a fused group, folding and views leave
 * some out) is compared, in the reference's schedule order. A value diverges
 * where some element has |got - ref| > atol + rtol * |ref| (default rtol
 * 1e-3, atol 1e-4: the zoo's tolerance), NaN where the reference has none,
 * or a different dtype or shape; integers and bools must be equal. The table
 * gives per value its producing node and op (the reference's: ONNX nodes),
 * the max absolute error, the max relative error (max |got - ref| over
 * max |ref|) and the cosine of the two as vectors; the first diverging node
 * is named last. The outputs are compared too, with the reference's and
 * with --expect files (the model's outputs in order, from another framework),
 * at the same tolerance; the exit status is 1 if any value or output
 * differs.
 *
 * Targets plug in through rlxc itself: a target whose --build makes a
 * program with the --emit-main harness (rlx_main.c) is checked by the same
 * code, value by value where its printer implements dump_values (the C
 * target's does), else on the outputs alone (said so in the last line); only
 * the reference is fixed to the C target. Work files go to a temporary directory, removed at
 * the end (or kept in --keep DIR).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rlxc.h"
#include "rk_typed.h"
#include "rlx.h"
#include "rlx_npy.h"

static const char check_usage[] =
    "usage: rlxc check MODEL -i IN.npy [-i IN.npy ...] [options]\n"
    "\n"
    "Builds MODEL twice -- as you ship it (--target, $CC, $CFLAGS) and as a reference (-O0:\n"
    "no fusion, no prepacking; cc -O2, RLX_ISA=portable: the portable kernels) --, runs both\n"
    "on the inputs, compares every value the two have in common in schedule order, and names\n"
    "the first node whose value differs beyond the tolerance. Exit status 1 if any does.\n"
    "\n"
    "options:\n"
    "  -i IN.npy        an input, in the model's order (repeat for each)\n"
    "  --expect OUT.npy the model's outputs as another framework computed them, in order\n"
    "                   (repeat); compared with the build under test's outputs\n"
    "  --target T       the target of the build under test (default c)\n"
    "  --rtol X, --atol X  a value diverges where |got - ref| > atol + rtol * |ref|\n"
    "                   (default rtol 1e-3, atol 1e-4)\n"
    "  --exec PREFIX    run the build under test through PREFIX, e.g. an emulator for a\n"
    "                   cross compiler in $CC: --exec \"qemu-aarch64 -L /usr/aarch64-linux-gnu\"\n"
    "  --keep DIR       keep the builds and the dumped values in DIR (else a temporary directory)\n"
    "  --dim NAME=VALUE, --freeze NAME=FILE.npy  as for rlxc, passed to both builds\n";

typedef struct {
    const char *model, *target, *exec, *keep;
    const char **inputs, **expects, **pass;   /* pass: --dim/--freeze words for both builds */
    int ninputs, nexpects, npass;
    double rtol, atol;
} CheckArgs;

static double parse_tol(const char *flag, const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= 0) || isinf(v)) rlx_error("rlxc: check: %s wants a number >= 0, not '%s'", flag, s);
    return v;
}

static void parse_check_args(int argc, char **argv, CheckArgs *a) {
    memset(a, 0, sizeof *a);
    a->target = "c";
    a->rtol = 1e-3;
    a->atol = 1e-4;
    a->inputs = rlx_alloc(sizeof(char *) * (size_t)argc);
    a->expects = rlx_alloc(sizeof(char *) * (size_t)argc);
    a->pass = rlx_alloc(sizeof(char *) * (size_t)argc * 2);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            fputs(check_usage, stdout);
            exit(0);
        } else if (!strcmp(s, "-i") && has) a->inputs[a->ninputs++] = argv[++i];
        else if (!strcmp(s, "--expect") && has) a->expects[a->nexpects++] = argv[++i];
        else if (!strcmp(s, "--target") && has) a->target = argv[++i];
        else if (!strcmp(s, "--rtol") && has) a->rtol = parse_tol(s, argv[++i]);
        else if (!strcmp(s, "--atol") && has) a->atol = parse_tol(s, argv[++i]);
        else if (!strcmp(s, "--exec") && has) a->exec = argv[++i];
        else if (!strcmp(s, "--keep") && has) a->keep = argv[++i];
        else if ((!strcmp(s, "--dim") || !strcmp(s, "--freeze")) && has) {
            a->pass[a->npass++] = s;
            a->pass[a->npass++] = argv[++i];
        } else if (s[0] == '-' && s[1]) rlx_error("rlxc: check: unknown or incomplete option '%s' (see rlxc check --help)", s);
        else if (!a->model) a->model = s;
        else rlx_error("rlxc: check: more than one model given ('%s' and '%s')", a->model, s);
    }
    if (!a->model) rlx_error("rlxc: check: no model given (see rlxc check --help)");
    if (!a->ninputs) rlx_error("rlxc: check: no input given (-i IN.npy)");
    for (int i = 0; i < a->ninputs; i++)
        if (access(a->inputs[i], R_OK)) rlx_error("rlxc: check: cannot read the input %s", a->inputs[i]);
    for (int i = 0; i < a->nexpects; i++)
        if (access(a->expects[i], R_OK)) rlx_error("rlxc: check: cannot read %s", a->expects[i]);
}

static const char *self_path(void) {
    static char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) rlx_error("rlxc: check: cannot find the rlxc executable (/proc/self/exe)");
    exe[n] = 0;
    return exe;
}

/* Sets (or, value NULL, unsets) an environment variable; returns the old
 * value (NULL if unset) for restore_env. */
static const char *swap_env(const char *name, const char *value) {
    const char *old = getenv(name);
    old = old ? rlx_strdup(old) : NULL;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
    return old;
}

/* rlxc MODEL --build -o DIR/m --dump-values ...; 0 on success (on failure
 * the child has printed its one-line error). */
static int build(const CheckArgs *a, const char *out, int reference) {
    char **argv = rlx_alloc(sizeof(char *) * (size_t)(16 + a->npass));
    int n = 0;
    argv[n++] = (char *)self_path();
    argv[n++] = (char *)a->model;
    argv[n++] = "--build";
    argv[n++] = "--dump-values";
    argv[n++] = "-n";
    argv[n++] = "m";
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n++] = "--target";
    argv[n++] = reference ? "c" : (char *)a->target;
    if (reference) argv[n++] = "-O0";
    for (int i = 0; i < a->npass; i++) argv[n++] = (char *)a->pass[i];
    argv[n] = NULL;
    const char *cc = NULL, *cflags = NULL;
    if (reference) {   /* this machine's compiler, the portable kernels */
        cc = swap_env("CC", "cc");
        cflags = swap_env("CFLAGS", "-O2");
    }
    int st = rlxc_run(argv);
    if (reference) {
        swap_env("CC", cc);
        swap_env("CFLAGS", cflags);
    }
    return st;
}

/* [PREFIX...] EXE -i IN... --dump DIR [-o OUT_k...]; 0 on success. */
static int run_program(const CheckArgs *a, const char *exe, const char *prefix, const char *dump, int noutputs,
                       const char *outdir) {
    int max = 32 + 2 * a->ninputs + 2 * noutputs;
    char **argv = rlx_alloc(sizeof(char *) * (size_t)max);
    int n = 0;
    if (prefix) n += rlxc_split_words(prefix, argv, 16);
    argv[n++] = (char *)exe;
    for (int i = 0; i < a->ninputs; i++) {
        argv[n++] = "-i";
        argv[n++] = (char *)a->inputs[i];
    }
    argv[n++] = "--dump";
    argv[n++] = (char *)dump;
    for (int i = 0; outdir && i < noutputs; i++) {
        argv[n++] = "-o";
        argv[n++] = rlx_fmt("%s/out_%d.npy", outdir, i);
    }
    argv[n] = NULL;
    if (mkdir(dump, 0777) && errno != EEXIST) rlx_error("rlxc: check: cannot create %s: %s", dump, strerror(errno));
    return rlxc_run(argv);
}

/* One line of a dump's index.tsv. */
typedef struct {
    const char *value, *node, *op, *file;
} DumpEntry;

static int read_index(const char *dir, DumpEntry **out) {
    size_t len;
    char *text = (char *)rlx_read_file(rlx_fmt("%s/index.tsv", dir), &len);
    int n = 0, cap = 0;
    DumpEntry *e = NULL;
    for (char *line = text; line < text + len;) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        if (!nl) break;
        *nl = 0;
        char *f[5];
        int nf = 0;
        for (char *p = line; nf < 5;) {
            f[nf++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        if (nf == 5) {
            if (n == cap) {
                e = rlx_realloc(e, sizeof *e * (size_t)cap, sizeof *e * (size_t)(cap ? 2 * cap : 64));
                cap = cap ? 2 * cap : 64;
            }
            e[n++] = (DumpEntry){f[1], f[2], f[3], rlx_fmt("%s/%s", dir, f[4])};
        }
        line = nl + 1;
    }
    *out = e;
    return n;
}

typedef struct {
    int dtype, rank;
    int64_t dims[RK_MAX_RANK], n;
    void *data;
} Array;

static void load_array(const char *path, Array *x) {
    size_t nbytes;
    int st = rlx_npy_read(path, &x->dtype, &x->rank, x->dims, &x->data, &nbytes);
    if (st) rlx_error("rlxc: check: %s: %s", path, rlx_status_str(st));
    x->n = 1;
    for (int i = 0; i < x->rank; i++) x->n *= x->dims[i];
}

/* The comparison of one value: got (the build under test) against ref. */
typedef struct {
    const char *problem;   /* dtype / shape / NaN mismatch, or NULL */
    double max_abs, max_rel, cosine;
    int64_t nbad;
} Diff;

static Diff compare(const Array *got, const Array *ref, double rtol, double atol) {
    Diff d = {0};
    d.cosine = 1;
    if (got->dtype != ref->dtype) {
        d.problem = rlx_fmt("dtype %s, reference %s", rlx_dtype_name(got->dtype), rlx_dtype_name(ref->dtype));
        return d;
    }
    int same = got->rank == ref->rank;
    for (int i = 0; same && i < got->rank; i++) same = got->dims[i] == ref->dims[i];
    if (!same) {
        d.problem = "shape differs from the reference";
        return d;
    }
    int exact = !rk_dtype_is_float(ref->dtype);
    double dot = 0, gg = 0, rr = 0, ref_max = 0;
    int64_t nan_bad = 0;
    for (int64_t i = 0; i < ref->n; i++) {
        double g = rk_load_f64(got->dtype, got->data, i), r = rk_load_f64(ref->dtype, ref->data, i);
        if (isnan(r) || isnan(g)) {
            if (isnan(r) != isnan(g)) nan_bad++;
            continue;
        }
        if (isinf(r) || isinf(g)) {
            if (g != r) d.nbad++;
            continue;
        }
        double e = fabs(g - r);
        if (e > d.max_abs) d.max_abs = e;
        if (fabs(r) > ref_max) ref_max = fabs(r);
        if (exact ? g != r : e > atol + rtol * fabs(r)) d.nbad++;
        dot += g * r, gg += g * g, rr += r * r;
    }
    d.max_rel = ref_max > 0 ? d.max_abs / ref_max : d.max_abs > 0 ? INFINITY : 0;
    d.cosine = gg > 0 && rr > 0 ? dot / sqrt(gg * rr) : gg == rr ? 1 : 0;
    if (nan_bad) d.problem = rlx_fmt("%lld NaN mismatches", (long long)nan_bad);
    return d;
}

static int diverges(const Diff *d) { return d->problem || d->nbad; }

/* The model's output count (for -o), from reading the model as rlxc does
 * (with the --dim bindings). */
static int model_outputs(const CheckArgs *a) {
    const char **names = rlx_alloc(sizeof(char *) * (size_t)(a->npass + 1));
    int64_t *values = rlx_alloc(sizeof(int64_t) * (size_t)(a->npass + 1));
    int nd = 0;
    for (int i = 0; i + 1 < a->npass; i += 2) {
        const char *eq = strchr(a->pass[i + 1], '=');
        if (strcmp(a->pass[i], "--dim") || !eq) continue;
        names[nd] = rlx_strndup(a->pass[i + 1], (size_t)(eq - a->pass[i + 1]));
        values[nd++] = strtoll(eq + 1, NULL, 10);
    }
    size_t n = strlen(a->model);
    RlxGraph *g = n > 5 && !strcmp(a->model + n - 5, ".onnx") ? rlx_read_onnx(a->model, nd, names, values)
                                                                : rlx_read_rlxg(a->model);
    return g->noutputs;
}

/* The temporary directory, removed at exit on every path (an error
 * longjmps out of rlxc_check). */
static char *check_tmpdir;
static void remove_check_tmpdir(void) {
    if (!check_tmpdir) return;
    char *argv[] = {"rm", "-rf", check_tmpdir, NULL};
    rlxc_run(argv);
    check_tmpdir = NULL;
}

int rlxc_check(int argc, char **argv) {
    CheckArgs a;
    parse_check_args(argc, argv, &a);
    int nout = model_outputs(&a);
    if (a.nexpects && a.nexpects != nout)
        rlx_error("rlxc: check: the model has %d output%s, %d --expect file%s given", nout, nout == 1 ? "" : "s",
                  a.nexpects, a.nexpects == 1 ? "" : "s");
    char tmpl[] = "/tmp/rlxc-check.XXXXXX";
    const char *dir = a.keep;
    if (dir) {
        if (mkdir(dir, 0777) && errno != EEXIST) rlx_error("rlxc: check: cannot create %s: %s", dir, strerror(errno));
    } else {
        const char *tmp = getenv("TMPDIR");
        char *t = tmp && *tmp ? rlx_fmt("%s/rlxc-check.XXXXXX", tmp) : tmpl;
        if (!mkdtemp(t)) rlx_error("rlxc: check: cannot create a temporary directory: %s", strerror(errno));
        check_tmpdir = strdup(t);
        atexit(remove_check_tmpdir);
        dir = t;
    }
    int rc = 1;
    const char *opt = rlx_fmt("%s/opt", dir), *ref = rlx_fmt("%s/ref", dir);
    mkdir(opt, 0777);
    mkdir(ref, 0777);
    if (build(&a, rlx_fmt("%s/m", opt), 0) || build(&a, rlx_fmt("%s/m", ref), 1)) goto done;
    if (run_program(&a, rlx_fmt("%s/m", opt), a.exec, rlx_fmt("%s/dump", opt), nout, opt)) goto done;
    const char *isa = swap_env("RLX_ISA", "portable");
    int ref_st = run_program(&a, rlx_fmt("%s/m", ref), NULL, rlx_fmt("%s/dump", ref), nout, ref);
    swap_env("RLX_ISA", isa);
    if (ref_st) goto done;

    DumpEntry *re, *oe;
    int nre = read_index(rlx_fmt("%s/dump", ref), &re), noe = read_index(rlx_fmt("%s/dump", opt), &oe);
    printf("rlxc check %s: target %s against the reference (-O0, portable kernels)\n", a.model, a.target);
    printf("%5s  %-40s %-20s %11s %11s %10s\n", "step", "node", "op", "max_abs", "max_rel", "cosine");
    int ncompared = 0, nonly = 0, first = -1, nbad = 0;
    for (int i = 0; i < nre; i++) {
        int j = noe - 1;
        while (j >= 0 && strcmp(oe[j].value, re[i].value)) j--;
        if (j < 0) {
            nonly++;
            continue;
        }
        Array x, y;
        load_array(oe[j].file, &x);
        load_array(re[i].file, &y);
        Diff d = compare(&x, &y, a.rtol, a.atol);
        free(x.data);
        free(y.data);
        ncompared++;
        int bad = diverges(&d);
        if (bad) {
            nbad++;
            if (first < 0) first = i;
        }
        printf("%5d  %-40s %-20s %11.3g %11.3g %10.6f  %s\n", i, re[i].node, re[i].op, d.max_abs, d.max_rel,
               d.cosine, !bad ? "ok" : d.problem ? d.problem : rlx_fmt("DIVERGES (%lld elements)", (long long)d.nbad));
    }
    printf("%d values compared, %d of the reference's only in the reference (fused, folded or views); "
           "tolerance |got - ref| <= atol + rtol * |ref|, rtol %g, atol %g (--rtol, --atol)\n",
           ncompared, nonly, a.rtol, a.atol);
    /* the outputs: against the reference always (they are all a target
     * whose printer has no --dump-values gives), and against --expect */
    int expect_bad = 0;
    for (int k = 0; k < nout; k++) {
        Array x, y;
        load_array(rlx_fmt("%s/out_%d.npy", opt, k), &x);
        load_array(rlx_fmt("%s/out_%d.npy", ref, k), &y);
        Diff d = compare(&x, &y, a.rtol, a.atol);
        free(x.data);
        free(y.data);
        int bad = diverges(&d);
        expect_bad += bad;
        printf("output %d against the reference: max_abs %.3g, max_rel %.3g, cosine %.6f: %s\n", k, d.max_abs,
               d.max_rel, d.cosine, !bad ? "ok" : d.problem ? d.problem : rlx_fmt("DIFFERS (%lld elements)", (long long)d.nbad));
    }
    for (int k = 0; k < a.nexpects; k++) {
        Array x, y;
        load_array(rlx_fmt("%s/out_%d.npy", opt, k), &x);
        load_array(a.expects[k], &y);
        Diff d = compare(&x, &y, a.rtol, a.atol);
        free(x.data);
        free(y.data);
        int bad = diverges(&d);
        expect_bad += bad;
        printf("output %d against %s: max_abs %.3g, max_rel %.3g, cosine %.6f: %s\n", k, a.expects[k], d.max_abs,
               d.max_rel, d.cosine, !bad ? "ok" : d.problem ? d.problem : rlx_fmt("DIFFERS (%lld elements)", (long long)d.nbad));
    }
    if (first >= 0)
        printf("first divergence: node '%s' (%s), value '%s'; %d of %d values diverge\n", re[first].node, re[first].op,
               re[first].value, nbad, ncompared);
    else if (!noe)
        printf("the build under test wrote no values (target %s's printer has no --dump-values): only the outputs "
               "were compared, %s\n", a.target, expect_bad ? "and they differ" : "and they agree");
    else if (!ncompared)
        printf("no value in common: nothing compared\n");
    else if (expect_bad)
        printf("no value diverges, but an output differs\n");
    else
        printf("all clear: no value diverges\n");
    rc = first >= 0 || expect_bad || (noe && !ncompared);
done:
    return rc;
}
