/* build.c - the runtime library and a model's executable (rlxc --build).
 *
 * A model's executable is its own generated file compiled with the user's
 * $CC and $CFLAGS and linked with librlxrt.a, the runtime library, which is
 * built once per compiler and set of flags, never per model:
 *
 *   - `make` builds one beside rlxc (`rlxc runtime -o build`), `make install`
 *     installs it; rlxc uses it when its key matches.
 *   - For another compiler, or flags that must reach the runtime too, rlxc
 *     builds a matching library into a cache ($RLXC_CACHE_DIR, else
 *     $XDG_CACHE_HOME/rlxc, else ~/.cache/rlxc), once: a lock file makes
 *     concurrent rlxc processes (make -j over many models) wait for the one
 *     that builds it, and the library moves into place by a rename, so no
 *     process ever sees half of one.
 *
 * The key of a library is a hash of the compiler (its resolved path, size
 * and modification time, and any words after it in $CC), the flags that go
 * to the runtime, and the content of every runtime source and header. Which
 * of the user's CFLAGS go to the runtime: optimization, debug, warning and
 * language-standard flags (-O*, -g*, -W*, -std=*, -pedantic) are for the
 * model's own file only, since the library is compiled with the flags that
 * make it fastest whatever the model's file gets (runtime_flags below);
 * linker flags (-L, -l, -Wl,) go to the link; everything else (-D, -m, -f,
 * --target, -fsanitize=..., ...) also goes to the library, after its own
 * flags, and makes another key.
 *
 * The library holds the core (rlx_rt.c, rlx_pool.c, rlx_isa.c), the
 * --emit-main driver (rlx_main.c, rlx_npy.c) and the kernels (rk_*.c). On
 * x86-64 with a GCC-compatible compiler, unless the flags choose an
 * instruction set themselves (-march=, -mavx2, ...), the kernel files with
 * instruction-set specific code (rk_isa.h's RK_ISA_FILES) are compiled
 * three times, portable, avx2 and avx512, and rlx_isa.c dispatches between
 * them at NAME_init from CPUID. Every function
 * gets its own section and executables are linked with --gc-sections, so a
 * model keeps only the kernels its schedule calls.
 *
 * Objects are cached too, by a hash of the command and the sources, so a
 * change to one kernel file rebuilds only that file's objects.
 */
#define _XOPEN_SOURCE 700   /* realpath */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rlxc.h"

#define MAX_WORDS 256

/* ---- processes ---- */

int rlxc_run(char **argv) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "rlxc: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int rlxc_split_words(const char *s, char **argv, int max) {
    int n = 0;
    while (s && *s) {
        while (*s == ' ' || *s == '\t' || *s == '\n') s++;
        if (!*s) break;
        if (n == max) rlx_error("rlxc: too many words in a flags variable (at most %d)", max);
        size_t len = strcspn(s, " \t\n");
        argv[n++] = rlx_strndup(s, len);
        s += len;
    }
    return n;
}

/* What a command prints on stdout (NULL if it fails), stderr discarded. */
static const char *command_output(char **argv) {
    int fd[2];
    if (pipe(fd) < 0) return NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return NULL;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 2);
        }
        close(fd[0]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    RlxBuf out = {0};
    char buf[4096];
    ssize_t k;
    while ((k = read(fd[0], buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
        if (k > 0 && out.len < (1 << 24)) rlx_buf_put(&out, buf, (size_t)k);
    close(fd[0]);
    rlx_buf_put(&out, "", 1);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return NULL;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out.data : NULL;
}

/* ---- where things are ---- */

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* The directory rlxc runs from, or NULL. */
static const char *exe_dir(void) {
    static char dir[PATH_MAX];
    if (dir[0]) return dir;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = 0;
    memcpy(dir, exe, (size_t)(slash - exe) + 1);
    return dir;
}

const char *rlxc_runtime_src(void) {
    const char *env = getenv("RLXC_RUNTIME_DIR");
    if (env && *env) {
        if (!file_exists(rlx_fmt("%s/rlx_rt.h", env)))
            rlx_error("rlxc: RLXC_RUNTIME_DIR=%s holds no runtime (no rlx_rt.h there)", env);
        return env;
    }
    const char *d = exe_dir();
    if (d) {
        const char *cands[] = {rlx_fmt("%s/../runtime_min", d), rlx_fmt("%s/../share/rlxc/runtime_min", d)};
        for (int i = 0; i < 2; i++)
            if (file_exists(rlx_fmt("%s/rlx_rt.h", cands[i]))) return cands[i];
    }
    rlx_error("rlxc: cannot find runtime_min (set RLXC_RUNTIME_DIR)");
    return NULL;
}

static const char *cache_dir(void) {
    const char *env = getenv("RLXC_CACHE_DIR");
    if (env && *env) return env;
    env = getenv("XDG_CACHE_HOME");
    if (env && *env) return rlx_fmt("%s/rlxc", env);
    env = getenv("HOME");
    if (env && *env) return rlx_fmt("%s/.cache/rlxc", env);
    rlx_error("rlxc: no cache directory for the runtime library (set RLXC_CACHE_DIR or HOME)");
    return NULL;
}

/* mkdir -p */
static void make_dirs(const char *path) {
    char *p = rlx_strdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        mkdir(p, 0777);
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST) rlx_error("rlxc: cannot create %s: %s", p, strerror(errno));
}

/* ---- the compiler and its flags ---- */

typedef struct {
    char *cc[MAX_WORDS];        /* $CC split into words */
    int ncc;
    char *model[MAX_WORDS];     /* flags for the model's own file */
    int nmodel;
    char *lib[MAX_WORDS];       /* flags that also reach the runtime */
    int nlib;
    char *link[MAX_WORDS];      /* linker flags */
    int nlink;
    int user_isa;               /* the flags choose the instruction set */
    int blas;
    const char *identity;       /* the compiler, resolved */
} Toolchain;

typedef enum { FL_MODEL, FL_LIB, FL_LINK } FlagKind;

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static FlagKind flag_kind(const char *f) {
    if (starts(f, "-Wl,") || starts(f, "-L") || starts(f, "-l") || !strcmp(f, "-static") || !strcmp(f, "-pie") ||
        !strcmp(f, "-no-pie") || !strcmp(f, "-rdynamic") || !strcmp(f, "-s"))
        return FL_LINK;
    if (starts(f, "-Wa,") || starts(f, "-Wp,")) return FL_LIB;
    if (starts(f, "-O") || starts(f, "-g") || starts(f, "-W") || starts(f, "-std=") || starts(f, "-pedantic") ||
        !strcmp(f, "-ansi") || !strcmp(f, "-w") || starts(f, "-fdiagnostics") || starts(f, "-fno-diagnostics") ||
        starts(f, "-fmessage-length") || starts(f, "-fmax-errors"))
        return FL_MODEL;
    return FL_LIB;
}

/* A flag that picks the instruction set or the target: the library then
 * has one variant, compiled the way the user asked. */
static int picks_isa(const char *f) {
    return (starts(f, "-m") && !starts(f, "-mtune=")) || starts(f, "--target") || !strcmp(f, "-target");
}

/* The compiler's executable, found on PATH like execvp does, resolved. */
static const char *resolve_program(const char *name) {
    if (strchr(name, '/')) {
        char real[PATH_MAX];
        return realpath(name, real) ? rlx_strdup(real) : NULL;
    }
    const char *path = getenv("PATH");
    if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        const char *cand = rlx_fmt("%.*s/%s", (int)len, len ? path : ".", name);
        char real[PATH_MAX];
        if (access(cand, X_OK) == 0 && realpath(cand, real)) return rlx_strdup(real);
        path += len;
        if (*path == ':') path++;
    }
    return NULL;
}

static void toolchain_init(Toolchain *t, const char *cc, const char *cflags, int blas) {
    memset(t, 0, sizeof *t);
    if (!cc || !*cc) cc = "cc";
    t->ncc = rlxc_split_words(cc, t->cc, MAX_WORDS - 1);
    if (!t->ncc) rlx_error("rlxc: CC is empty");
    char *words[MAX_WORDS];
    int n = rlxc_split_words(cflags ? cflags : "-O2", words, MAX_WORDS);
    for (int i = 0; i < n; i++) {
        switch (flag_kind(words[i])) {
        case FL_MODEL: t->model[t->nmodel++] = words[i]; break;
        case FL_LINK: t->link[t->nlink++] = words[i]; break;
        case FL_LIB:
            t->lib[t->nlib++] = words[i];
            t->model[t->nmodel++] = words[i];   /* -D and -f flags apply to the model's file too */
            if (picks_isa(words[i])) t->user_isa = 1;
            break;
        }
    }
    t->blas = blas;
    const char *real = resolve_program(t->cc[0]);
    if (!real) rlx_error("rlxc: the C compiler '%s' is not found (set CC)", t->cc[0]);
    struct stat st;
    if (stat(real, &st) != 0) rlx_error("rlxc: cannot read the C compiler %s: %s", real, strerror(errno));
    RlxBuf id = {0};
    rlx_buf_printf(&id, "%s %lld %lld", real, (long long)st.st_size, (long long)st.st_mtime);
    for (int i = 1; i < t->ncc; i++) rlx_buf_printf(&id, " %s", t->cc[i]);
    t->identity = id.data;
}

/* pkg-config's flags for OpenBLAS, or a plain -lopenblas. */
static const char *openblas_flags(int want_libs) {
    char *argv[] = {"pkg-config", want_libs ? "--libs" : "--cflags", "openblas", NULL};
    const char *out = command_output(argv);
    return out ? out : (want_libs ? "-lopenblas" : "");
}

/* ---- the key ---- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The runtime directory's files with one of the suffixes, sorted. */
static int list_files(const char *dir, const char *const *suffixes, char **out, int max) {
    DIR *d = opendir(dir);
    if (!d) rlx_error("rlxc: cannot read the runtime directory %s: %s", dir, strerror(errno));
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        for (int s = 0; suffixes[s]; s++) {
            size_t k = strlen(suffixes[s]);
            if (len > k && !strcmp(e->d_name + len - k, suffixes[s])) {
                if (n == max) rlx_error("rlxc: too many files in %s", dir);
                out[n++] = rlx_strdup(e->d_name);
                break;
            }
        }
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof(char *), cmp_str);
    return n;
}

static uint64_t hash_file(uint64_t h, const char *dir, const char *name) {
    size_t len;
    uint8_t *data = rlx_read_file(rlx_fmt("%s/%s", dir, name), &len);
    h = rlx_fnv1a(h, name, strlen(name) + 1);
    h = rlx_fnv1a(h, &len, sizeof len);
    return rlx_fnv1a(h, data, len);
}

static uint64_t hash_str(uint64_t h, const char *s) { return rlx_fnv1a(h, s, strlen(s) + 1); }

/* The headers every runtime source may include. */
static uint64_t headers_hash(const char *src) {
    static const char *const hdr[] = {".h", ".def", NULL};
    char *names[256];
    int n = list_files(src, hdr, names, 256);
    uint64_t h = RLX_FNV_SEED;
    for (int i = 0; i < n; i++) h = hash_file(h, src, names[i]);
    return h;
}

/* Bumped when the way libraries are built changes (flags, layout). */
#define RUNTIME_BUILD_VERSION "rlxrt-build 1"

static uint64_t library_key(const Toolchain *t, const char *src) {
    static const char *const all[] = {".c", ".h", ".def", NULL};
    char *names[256];
    int n = list_files(src, all, names, 256);
    uint64_t h = hash_str(RLX_FNV_SEED, RUNTIME_BUILD_VERSION);
    h = hash_str(h, RLX_VERSION);
    h = hash_str(h, t->identity);
    for (int i = 0; i < t->nlib; i++) h = hash_str(h, t->lib[i]);
    h = hash_str(h, t->blas ? "blas" : "");
    for (int i = 0; i < n; i++) h = hash_file(h, src, names[i]);
    return h;
}

/* ---- building the library ---- */

/* What the builder found out about the compiler. */
typedef struct {
    int gnu;          /* takes GCC's flags (gcc, clang) */
    int dispatch;     /* three kernel variants and CPUID dispatch */
} LibTraits;

static LibTraits probe_compiler(const Toolchain *t) {
    LibTraits tr = {0, 0};
    char *argv[MAX_WORDS * 2 + 8];
    int n = 0;
    for (int i = 0; i < t->ncc; i++) argv[n++] = t->cc[i];
    for (int i = 0; i < t->nlib; i++) argv[n++] = t->lib[i];
    argv[n++] = "-dM";
    argv[n++] = "-E";
    argv[n++] = "-x";
    argv[n++] = "c";
    argv[n++] = "/dev/null";
    argv[n] = NULL;
    /* the predefined macros: __GNUC__ and __x86_64__ decide */
    const char *out = command_output(argv);
    if (!out) return tr;
    tr.gnu = strstr(out, "#define __GNUC__ ") != NULL;
    int x86_64 = strstr(out, "#define __x86_64__ ") != NULL;
    tr.dispatch = tr.gnu && x86_64 && !t->user_isa;
    return tr;
}

/* The instruction-set variants and their flags (rk_isa.h). */
static const struct {
    const char *name, *flags;
} variants[] = {
    {"portable", ""},
    {"avx2", "-mavx2 -mfma -mf16c"},
    {"avx512", "-mavx512f -mavx512cd -mavx512vl -mavx512bw -mavx512dq -mavx2 -mfma -mf16c"},
};

const char *rlxc_isa_flags(const char *isa) {
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        if (!strcmp(variants[i].name, isa)) return variants[i].flags;
    rlx_error("rlxc runtime: no instruction-set variant '%s' (portable, avx2, avx512)", isa);
    return NULL;
}

/* The flags the library is compiled with before the user's: strict C99,
 * which also keeps gcc from contracting a*b+c into FMAs (so results don't
 * depend on the instruction set beyond what the kernels write), no
 * trapping math (gcc then turns the selects of rlx_vmath.h's branch-free
 * code into vector blends; no value changes), the
 * BSD/SVID declarations (madvise, for huge pages), and one section per
 * function for --gc-sections. Then -O3 for the files compiled per
 * instruction set, the GEMM and convolutions, whose inlined micro-kernels
 * and plain loops gcc 12 vectorizes fully only at -O3 (MobileNetV2 ran
 * about 1.5x slower with the runtime at -O2), and -O2 for the other files,
 * plain loops that -O3 only makes several times larger (rk_norm.c: 54 KB
 * of code at -O2, 254 KB at -O3). */
static const char *runtime_flags(const LibTraits *tr) {
    return tr->gnu ? "-std=c99 -ffp-contract=off -fno-trapping-math -D_DEFAULT_SOURCE -ffunction-sections -fdata-sections"
                   : "";
}

static const char *opt_flags(const LibTraits *tr, int per_isa) { return tr->gnu && per_isa ? "-O3" : "-O2"; }

/* Whether a runtime source is in rk_isa.h's RK_ISA_FILES. */
static int per_isa_file(const char *src, const char *name) {
    static const char *files;
    if (!files) {
        size_t len;
        const char *h = (const char *)rlx_read_file(rlx_fmt("%s/rk_isa.h", src), &len);
        const char *d = strstr(h, "#define RK_ISA_FILES \"");
        if (!d) rlx_error("%s/rk_isa.h: no RK_ISA_FILES line", src);
        d += strlen("#define RK_ISA_FILES \"");
        files = rlx_strndup(d, strcspn(d, "\"\n"));
    }
    size_t n = strlen(name);
    for (const char *f = files; *f;) {
        while (*f == ' ') f++;
        size_t k = strcspn(f, " ");
        if (k == n && !strncmp(f, name, n)) return 1;
        f += k;
    }
    return 0;
}

typedef struct {
    char **argv;
    const char *obj;        /* the cached object */
    const char *tmp;        /* compiled here, then renamed to obj */
    pid_t pid;
} Job;

/* Compiles the jobs whose objects are not cached yet, a few at a time. */
static void run_jobs(Job *jobs, int n) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("RLXC_JOBS");
    int max = env && atoi(env) > 0 ? atoi(env) : (ncpu > 0 ? (int)ncpu : 1);
    int next = 0, running = 0, failed = -1;
    fflush(stdout);
    fflush(stderr);
    while (next < n || running) {
        while (failed < 0 && next < n && running < max) {
            Job *j = &jobs[next++];
            if (file_exists(j->obj)) continue;
            j->pid = fork();
            if (j->pid < 0) rlx_error("rlxc: cannot start the C compiler: %s", strerror(errno));
            if (j->pid == 0) {
                execvp(j->argv[0], j->argv);
                fprintf(stderr, "rlxc: cannot run %s: %s\n", j->argv[0], strerror(errno));
                _exit(127);
            }
            running++;
        }
        if (!running) break;
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < n; i++) {
            if (jobs[i].pid != pid) continue;
            jobs[i].pid = 0;
            running--;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && rename(jobs[i].tmp, jobs[i].obj) == 0) break;
            unlink(jobs[i].tmp);
            if (failed < 0) failed = i;
        }
    }
    if (failed >= 0) {
        RlxBuf cmd = {0};
        for (char **a = jobs[failed].argv; *a; a++) rlx_buf_printf(&cmd, "%s%s", a == jobs[failed].argv ? "" : " ", *a);
        rlx_error("rlxc: building the runtime library failed: %s", cmd.data);
    }
}

static const char *archiver(const Toolchain *t, const LibTraits *tr) {
    const char *env = getenv("AR");
    if (env && *env) return env;
    if (tr->gnu) {
        char *argv[MAX_WORDS + 2];
        int n = 0;
        for (int i = 0; i < t->ncc; i++) argv[n++] = t->cc[i];
        argv[n++] = "-print-prog-name=ar";
        argv[n] = NULL;
        const char *out = command_output(argv);
        if (out) {
            char *s = rlx_strndup(out, strcspn(out, "\n"));
            if (*s && (strchr(s, '/') ? access(s, X_OK) == 0 : resolve_program(s) != NULL)) return s;
        }
    }
    return "ar";
}

/* Compiles every runtime source into objects (cached) and archives them
 * into lib (written through a temporary name). */
static LibTraits build_library(const Toolchain *t, const char *src, const char *lib) {
    LibTraits tr = probe_compiler(t);
    const char *objdir = rlx_fmt("%s/obj", cache_dir());
    make_dirs(objdir);
    static const char *const csrc[] = {".c", NULL};
    char *names[256];
    int nsrc = list_files(src, csrc, names, 256);
    uint64_t hh = headers_hash(src);
    char *fixed[MAX_WORDS], *blasf[MAX_WORDS];
    int nfixed = rlxc_split_words(runtime_flags(&tr), fixed, MAX_WORDS);
    int nblas = t->blas ? rlxc_split_words(openblas_flags(0), blasf, MAX_WORDS) : 0;
    Job *jobs = rlx_alloc(sizeof(Job) * (size_t)nsrc * 3);
    int njobs = 0;
    for (int i = 0; i < nsrc; i++) {
        int per_isa = per_isa_file(src, names[i]);
        int nv = per_isa && tr.dispatch ? 3 : 1;
        for (int v = 0; v < nv; v++) {
            char **argv = rlx_alloc(sizeof(char *) * (MAX_WORDS * 4));
            int n = 0;
            for (int k = 0; k < t->ncc; k++) argv[n++] = t->cc[k];
            for (int k = 0; k < nfixed; k++) argv[n++] = fixed[k];
            argv[n++] = (char *)opt_flags(&tr, per_isa);
            if (nv > 1) {
                argv[n++] = rlx_fmt("-DRK_ISA=%s", variants[v].name);
                n += rlxc_split_words(variants[v].flags, argv + n, MAX_WORDS);
            }
            if (tr.dispatch && !strcmp(names[i], "rlx_isa.c")) argv[n++] = "-DRK_DISPATCH";
            if (t->blas) argv[n++] = "-DRLX_BLAS_OPENBLAS";
            for (int k = 0; k < nblas; k++) argv[n++] = blasf[k];
            for (int k = 0; k < t->nlib; k++) argv[n++] = t->lib[k];
            argv[n++] = rlx_fmt("-I%s", src);
            argv[n++] = "-c";
            argv[n++] = rlx_fmt("%s/%s", src, names[i]);
            /* the object's key: the command (without the paths) and the sources */
            uint64_t h = hash_str(RLX_FNV_SEED, t->identity);
            for (int k = t->ncc; k < n - 2; k++) h = hash_str(h, starts(argv[k], "-I") ? "-I" : argv[k]);
            h = rlx_fnv1a(h, &hh, sizeof hh);
            h = hash_file(h, src, names[i]);
            const char *stem = rlx_strndup(names[i], strlen(names[i]) - 2);
            Job *j = &jobs[njobs++];
            j->obj = rlx_fmt("%s/%s.%s.%016llx.o", objdir, stem, nv > 1 ? variants[v].name : "plain",
                             (unsigned long long)h);
            j->tmp = rlx_fmt("%s.tmp%ld", j->obj, (long)getpid());
            argv[n++] = "-o";
            argv[n++] = (char *)j->tmp;
            argv[n] = NULL;
            j->argv = argv;
        }
    }
    run_jobs(jobs, njobs);
    /* ar rcs lib.tmp objects..., then rename */
    const char *tmp = rlx_fmt("%s.tmp%ld", lib, (long)getpid());
    rlxc_add_temp(tmp);
    unlink(tmp);
    char **argv = rlx_alloc(sizeof(char *) * (size_t)(njobs + 8));
    int n = rlxc_split_words(archiver(t, &tr), argv, 4);
    argv[n++] = "rcs";
    argv[n++] = (char *)tmp;
    for (int i = 0; i < njobs; i++) argv[n++] = (char *)jobs[i].obj;
    argv[n] = NULL;
    int st = rlxc_run(argv);
    if (st != 0) rlx_error("rlxc: archiving the runtime library failed (%s, status %d)", argv[0], st);
    if (rename(tmp, lib) != 0) rlx_error("%s: cannot rename into place: %s", lib, strerror(errno));
    return tr;
}

/* The stamp beside a library: its key and what the builder found. */
static void write_stamp(const char *path, uint64_t key, const Toolchain *t, const LibTraits *tr) {
    RlxBuf s = {0};
    rlx_buf_printf(&s, "key %016llx\ngnu %d\ndispatch %d\ncc %s\nflags", (unsigned long long)key, tr->gnu,
                   tr->dispatch, t->identity);
    for (int i = 0; i < t->nlib; i++) rlx_buf_printf(&s, " %s", t->lib[i]);
    rlx_buf_printf(&s, "\nblas %d\n", t->blas);
    const char *tmp = rlx_fmt("%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) rlx_error("%s: cannot write: %s", tmp, strerror(errno));
    rlxc_add_temp(tmp);
    int bad = fwrite(s.data, 1, s.len, f) != s.len;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) rlx_error("%s: cannot write: %s", path, strerror(errno));
}

/* Reads a stamp: 1 if its key is `key`, with the traits filled. */
static int stamp_matches(const char *path, uint64_t key, LibTraits *tr) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[4096];
    int ok = 0;
    unsigned long long k;
    int v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "key %llx", &k) == 1) ok = k == (unsigned long long)key;
        else if (sscanf(line, "gnu %d", &v) == 1) tr->gnu = v;
        else if (sscanf(line, "dispatch %d", &v) == 1) tr->dispatch = v;
    }
    fclose(f);
    return ok;
}

/* Holds an exclusive lock on path (created) until the process exits or
 * the descriptor is closed. */
static int lock_file(const char *path) {
    int fd = open(path, O_RDWR | O_CREAT, 0666);
    if (fd < 0) rlx_error("rlxc: cannot create the lock %s: %s", path, strerror(errno));
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, F_SETLKW, &fl) < 0)
        if (errno != EINTR) rlx_error("rlxc: cannot lock %s: %s", path, strerror(errno));
    return fd;
}

static LibTraits library_for(const Toolchain *t, const char **lib_out) {
    const char *src = rlxc_runtime_src();
    uint64_t key = library_key(t, src);
    LibTraits tr = {0, 0};
    /* the one make built beside rlxc, or the installed one */
    const char *d = exe_dir();
    if (d) {
        const char *libs[] = {rlx_fmt("%s/librlxrt.a", d), rlx_fmt("%s/../lib/librlxrt.a", d)};
        const char *stamps[] = {rlx_fmt("%s/librlxrt.stamp", d), rlx_fmt("%s/../share/rlxc/librlxrt.stamp", d)};
        for (int i = 0; i < 2; i++)
            if (file_exists(libs[i]) && stamp_matches(stamps[i], key, &tr)) {
                *lib_out = libs[i];
                return tr;
            }
    }
    const char *dir = rlx_fmt("%s/lib-%016llx", cache_dir(), (unsigned long long)key);
    const char *lib = rlx_fmt("%s/librlxrt.a", dir), *stamp = rlx_fmt("%s/librlxrt.stamp", dir);
    *lib_out = lib;
    if (file_exists(lib) && stamp_matches(stamp, key, &tr)) return tr;
    make_dirs(cache_dir());
    int fd = lock_file(rlx_fmt("%s.lock", dir));
    if (!(file_exists(lib) && stamp_matches(stamp, key, &tr))) {
        fprintf(stderr, "rlxc: building the runtime library for %s into %s (once)\n", t->cc[0], dir);
        make_dirs(dir);
        tr = build_library(t, src, lib);
        write_stamp(stamp, key, t, &tr);
    }
    close(fd);
    return tr;
}

const char *rlxc_runtime_library(const char *cc, const char *cflags, int blas, int *gnu) {
    Toolchain t;
    toolchain_init(&t, cc, cflags, blas);
    const char *lib;
    LibTraits tr = library_for(&t, &lib);
    if (gnu) *gnu = tr.gnu;
    return lib;
}

void rlxc_build_runtime_into(const char *dir, const char *cc, const char *cflags) {
    Toolchain t;
    toolchain_init(&t, cc, cflags, 0);
    const char *src = rlxc_runtime_src();
    make_dirs(dir);
    uint64_t key = library_key(&t, src);
    LibTraits tr = build_library(&t, src, rlx_fmt("%s/librlxrt.a", dir));
    write_stamp(rlx_fmt("%s/librlxrt.stamp", dir), key, &t, &tr);
}

/* ---- the code size split (--report) ---- */

enum { PART_CORE, PART_KERNELS, PART_DRIVER, PART_MODEL, PART_OTHER, NPARTS };
static const char *const part_names[NPARTS] = {"runtime core", "kernels", "driver", "model", "libc, startup"};
enum { SEC_CODE, SEC_RO, SEC_UNWIND, NSECS };

/* Which part an input section of the link map belongs to, by its object. */
static int map_part(const char *section, const char *file, const char *model_obj) {
    if (!strcmp(file, model_obj)) return PART_MODEL;
    const char *m = strrchr(file, '(');
    if (!m || !strstr(file, "librlxrt.a(")) return PART_OTHER;
    m++;
    if (starts(m, "rlx_main") || starts(m, "rlx_npy")) return PART_DRIVER;
    if (starts(m, "rk_")) return PART_KERNELS;
    /* rlx_isa.o holds the kernels' dispatching entries too */
    if (starts(m, "rlx_isa") && (strstr(section, ".rk_") || strstr(section, "isa_level"))) return PART_KERNELS;
    return PART_CORE;
}

static int map_sec(const char *out_section) {
    if (!strcmp(out_section, ".text") || !strcmp(out_section, ".init") || !strcmp(out_section, ".fini") ||
        starts(out_section, ".plt"))
        return SEC_CODE;
    if (!strcmp(out_section, ".rodata") || starts(out_section, ".rodata.")) return SEC_RO;
    if (starts(out_section, ".eh_frame") || !strcmp(out_section, ".gcc_except_table")) return SEC_UNWIND;
    return -1;
}

/* Sums GNU ld's map: input sections (one space, then the name; address,
 * size and object on the same line or the next) under output sections. */
static int split_map(const char *map, const char *model_obj, long long size[NPARTS][NSECS]) {
    size_t len;
    char *text = (char *)rlx_read_file(map, &len);
    int found = 0, sec = -1;
    char *pending = NULL;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (line[0] == '.') {
            char name[256];
            if (sscanf(line, "%255s", name) == 1) sec = map_sec(name);
            pending = NULL;
        } else if (line[0] == ' ' && line[1] == '.') {
            char name[512], file[2048];
            unsigned long long addr, sz;
            int k = sscanf(line + 1, "%511s 0x%llx 0x%llx %2047[^\n]", name, &addr, &sz, file);
            if (k == 4) {
                if (sec >= 0) size[map_part(name, file, model_obj)][sec] += (long long)sz, found = 1;
                pending = NULL;
            } else if (k == 1) pending = rlx_strdup(name);
        } else if (pending && line[0] == ' ') {
            char file[2048];
            unsigned long long addr, sz;
            if (sscanf(line, " 0x%llx 0x%llx %2047[^\n]", &addr, &sz, file) == 3 && sec >= 0) {
                size[map_part(pending, file, model_obj)][sec] += (long long)sz;
                found = 1;
            }
            pending = NULL;
        }
        line = nl ? nl + 1 : NULL;
    }
    return found;
}

static void report_sizes(const char *exe, const char *map, const char *model_obj, RlxBuf *report) {
    long long size[NPARTS][NSECS];
    memset(size, 0, sizeof size);
    RlxBuf r = {0};
    if (!split_map(map, model_obj, size)) {
        rlx_buf_printf(&r, "code size of %s: no split (the linker's map is not in GNU ld's format)\n", exe);
    } else {
        rlx_buf_printf(&r, "code size of %s, bytes (code: .text .plt .init; ro: .rodata; unwind: .eh_frame):\n", exe);
        rlx_buf_printf(&r, "  %-16s %9s %9s %9s\n", "part", "code", "ro", "unwind");
        long long tot[NSECS] = {0, 0, 0};
        for (int p = 0; p < NPARTS; p++) {
            rlx_buf_printf(&r, "  %-16s %9lld %9lld %9lld\n", part_names[p], size[p][SEC_CODE], size[p][SEC_RO],
                           size[p][SEC_UNWIND]);
            for (int s = 0; s < NSECS; s++) tot[s] += size[p][s];
        }
        rlx_buf_printf(&r, "  %-16s %9lld %9lld %9lld\n", "total", tot[SEC_CODE], tot[SEC_RO], tot[SEC_UNWIND]);
    }
    fputs(r.data, stdout);
    rlx_buf_put(report, r.data, r.len);
}

/* ---- the executable ---- */

void rlxc_build_executable(const char *base, const char *exe, int blas, const char *target_libs, const char *extra,
                           RlxBuf *report) {
    Toolchain t;
    toolchain_init(&t, getenv("CC"), getenv("CFLAGS"), blas);
    const char *lib;
    LibTraits tr = library_for(&t, &lib);
    const char *src = rlxc_runtime_src();
    const char *obj = rlx_fmt("%s.tmp%ld.o", exe, (long)getpid());
    const char *tmp = rlx_fmt("%s.tmp%ld", exe, (long)getpid());
    const char *map = rlx_fmt("%s.tmp%ld.map", exe, (long)getpid());
    rlxc_add_temp(obj);
    rlxc_add_temp(tmp);
    if (report) rlxc_add_temp(map);
    char *ldflags[MAX_WORDS], *blasl[MAX_WORDS];
    int nld = rlxc_split_words(getenv("LDFLAGS"), ldflags, MAX_WORDS);
    int nblas = blas ? rlxc_split_words(openblas_flags(1), blasl, MAX_WORDS) : 0;
    char *tlibs[MAX_WORDS];
    int ntlibs = rlxc_split_words(target_libs, tlibs, MAX_WORDS);

    /* the model's own file: its flags (results don't depend on them: no FMA
     * contraction; without trapping math its loops of rlx_vmath.h's selects
     * vectorize) */
    char *argv[MAX_WORDS * 4];
    int n = 0;
    for (int i = 0; i < t.ncc; i++) argv[n++] = t.cc[i];
    if (tr.gnu) argv[n++] = "-ffp-contract=off";
    if (tr.gnu) argv[n++] = "-fno-trapping-math";
    if (blas) argv[n++] = "-DRLX_BLAS_OPENBLAS";   /* the model's file checks for it */
    for (int i = 0; i < t.nmodel; i++) argv[n++] = t.model[i];
    argv[n++] = rlx_fmt("-I%s", src);
    argv[n++] = "-c";
    argv[n++] = rlx_fmt("%s.c", base);
    argv[n++] = "-o";
    argv[n++] = (char *)obj;
    argv[n] = NULL;
    int st = rlxc_run(argv);
    if (st != 0) rlx_error("%s.c: the C compiler (%s) failed with status %d", base, t.cc[0], st);
    const char *extra_obj = NULL;
    if (extra) {   /* the same command for the --embed-weights array */
        extra_obj = rlx_fmt("%s.tmp%ld.w.o", exe, (long)getpid());
        rlxc_add_temp(extra_obj);
        argv[n - 3] = (char *)extra;
        argv[n - 1] = (char *)extra_obj;
        if ((st = rlxc_run(argv)) != 0) rlx_error("%s: the C compiler (%s) failed with status %d", extra, t.cc[0], st);
    }

    /* the link: the model, then the library; only the sections it reaches */
    n = 0;
    for (int i = 0; i < t.ncc; i++) argv[n++] = t.cc[i];
    for (int i = 0; i < t.nmodel; i++) argv[n++] = t.model[i];
    for (int i = 0; i < nld; i++) argv[n++] = ldflags[i];
    argv[n++] = (char *)obj;
    if (extra_obj) argv[n++] = (char *)extra_obj;
    argv[n++] = (char *)lib;
    if (tr.gnu) argv[n++] = "-Wl,--gc-sections";
    if (tr.gnu && report) argv[n++] = rlx_fmt("-Wl,-Map=%s", map);
    for (int i = 0; i < t.nlink; i++) argv[n++] = t.link[i];
    for (int i = 0; i < nblas; i++) argv[n++] = blasl[i];
    for (int i = 0; i < ntlibs; i++) argv[n++] = tlibs[i];
    argv[n++] = "-lm";
    argv[n++] = "-lpthread";
    argv[n++] = "-o";
    argv[n++] = (char *)tmp;
    argv[n] = NULL;
    st = rlxc_run(argv);
    if (st != 0) rlx_error("%s.c: linking with the C compiler (%s) failed with status %d", base, t.cc[0], st);
    if (rename(tmp, exe) != 0) rlx_error("%s: cannot rename into place: %s", exe, strerror(errno));
    if (report) {
        if (tr.gnu) report_sizes(exe, map, obj, report);
        else {
            const char *msg = rlx_fmt("code size of %s: no split (the compiler takes no GNU linker flags)\n", exe);
            fputs(msg, stdout);
            rlx_buf_put(report, msg, strlen(msg));
        }
        unlink(map);
    }
    unlink(obj);
    if (extra_obj) unlink(extra_obj);
}
