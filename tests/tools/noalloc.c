/* noalloc.c - proves that a generated model's run function allocates nothing.
 *
 *   noalloc [-v] [--ban NAME]... ROOT FILE.c... [-- CLANG_ARGS...]
 *
 * Parses every FILE.c with libclang (the generated model .c and the runtime
 * sources it links with, so that calls into kernels are followed) and builds
 * one call graph over the functions they define. Functions are keyed by
 * their USR, which is the same across translation units for external
 * functions and names the file for static ones, so the graphs of separate
 * files join at their shared declarations.
 *
 * From ROOT (e.g. mlp_run) it walks the graph breadth-first and reports every
 * reachable call to a forbidden function (heap allocation, freeing, opening
 * files, mapping memory: the list in `default_banned`), each with the
 * shortest call chain that reaches it. A call through a function pointer
 * can't be resolved statically, so it is treated conservatively: it is
 * listed, and taken to reach every function of the pointer's type whose
 * address is taken anywhere in the parsed files (a kernel table, a callback
 * argument). Calling a function through a pointer of another type is
 * undefined in C, so the type filter loses nothing; without it, a thread
 * pool's worker (`void *(void *)`, given to pthread_create at init) would
 * seem reachable from every `void (*)(void *, int)` task call. Types are
 * compared as canonical spellings, so typedefs don't matter; a callee whose
 * type can't be read reaches every address-taken function.
 *
 * Exit status: 0 nothing forbidden is reachable; 1 something is (the chains
 * are printed); 2 bad usage, a file that doesn't parse, or ROOT not defined.
 */
#include <clang-c/Index.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_banned[] = {
    "malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "posix_memalign",
    "memalign", "valloc", "pvalloc", "strdup", "strndup", "asprintf", "vasprintf", "getline",
    "getdelim", "fopen", "fdopen", "freopen", "tmpfile", "open", "openat", "creat", "mmap",
    "munmap", "mremap", "brk", "sbrk", "alloca", "__builtin_alloca", "realpath", "scandir",
    "pthread_create", "exit", "abort",
};

typedef struct {
    char *usr;
    char *name;
    char *file;       /* of the definition; NULL if not defined in any FILE */
    unsigned line;
    int addr_taken;
    char *type;       /* canonical function type, e.g. "void (void *, int)" */
    int reached;
    int parent;       /* BFS: the function whose call reached this one */
    int parent_call;  /* BFS: index into calls of that call, -1 for an indirect call */
    int parent_ind;   /* BFS: index into indirect calls, when parent_call is -1 */
} Func;

typedef struct {
    int from, to;
    char *file;
    unsigned line;
} Call;

typedef struct {
    int from;
    char *file;
    unsigned line;
    char *what;       /* the callee expression's kind or name */
    char *type;       /* canonical pointee type of the callee; NULL if unknown */
} IndirectCall;

static Func *funcs;
static int nfuncs, capfuncs;
static Call *calls;
static int ncalls, capcalls;
static IndirectCall *indirect;
static int nindirect, capindirect;
static const char **banned;
static int nbanned;

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "noalloc: out of memory\n");
        exit(2);
    }
    return p;
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

/* Grows an array to hold one more element. */
#define PUSH(arr, n, cap) \
    ((n) == (cap) ? ((cap) = (cap) ? 2 * (cap) : 64, (arr) = xrealloc((arr), (size_t)(cap) * sizeof *(arr))) : 0, \
     &(arr)[(n)++])

/* Linear lookup: the graphs here have a few thousand functions at most. */
static int func_id(const char *usr, const char *name) {
    for (int i = 0; i < nfuncs; i++)
        if (strcmp(funcs[i].usr, usr) == 0) return i;
    Func *f = PUSH(funcs, nfuncs, capfuncs);
    memset(f, 0, sizeof *f);
    f->usr = xstrdup(usr);
    f->name = xstrdup(name);
    f->parent = -1;
    return nfuncs - 1;
}

static char *type_string(CXType t) {
    if (t.kind == CXType_Invalid) return NULL;
    CXString s = clang_getTypeSpelling(clang_getCanonicalType(t));
    char *r = xstrdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

static int func_of_cursor(CXCursor c) {
    CXString usr = clang_getCursorUSR(c), name = clang_getCursorSpelling(c);
    int id = func_id(clang_getCString(usr), clang_getCString(name));
    clang_disposeString(usr);
    clang_disposeString(name);
    if (!funcs[id].type) funcs[id].type = type_string(clang_getCursorType(c));
    return id;
}

static void location(CXCursor c, char **file, unsigned *line) {
    CXFile f;
    unsigned col, off;
    clang_getSpellingLocation(clang_getCursorLocation(c), &f, line, &col, &off);
    CXString s = clang_getFileName(f);
    const char *cs = clang_getCString(s);
    *file = xstrdup(cs ? cs : "?");
    clang_disposeString(s);
}

static int is_banned(const char *name) {
    for (int i = 0; i < nbanned; i++)
        if (strcmp(banned[i], name) == 0) return 1;
    return 0;
}

/* ---- the AST walk ---- */

typedef struct {
    int func;          /* the function whose body is being walked, -1 outside */
    int callee_pos;    /* inside the callee expression of a call */
} Walk;

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data);

static void walk(CXCursor c, int func, int callee_pos) {
    Walk w = {func, callee_pos};
    clang_visitChildren(c, visit, &w);
}

/* The first child of a call is its callee; a function named there is called,
 * not address-taken. */
typedef struct {
    int func;
    int index;
} CallChildren;

static enum CXChildVisitResult visit_call_child(CXCursor c, CXCursor parent, CXClientData data) {
    (void)parent;
    CallChildren *cc = data;
    int callee = cc->index++ == 0;
    if (callee && (clang_getCursorKind(c) == CXCursor_DeclRefExpr)) return CXChildVisit_Continue;
    Walk w = {cc->func, callee};
    visit(c, clang_getNullCursor(), &w);
    return CXChildVisit_Continue;
}

static enum CXChildVisitResult first_child(CXCursor c, CXCursor parent, CXClientData data) {
    (void)parent;
    *(CXCursor *)data = c;
    return CXChildVisit_Break;
}

/* The function type that a call's callee expression points to. */
static char *callee_type(CXCursor call) {
    CXCursor callee = clang_getNullCursor();
    clang_visitChildren(call, first_child, &callee);
    if (clang_Cursor_isNull(callee)) return NULL;
    CXType t = clang_getCanonicalType(clang_getCursorType(callee));
    if (t.kind == CXType_Pointer) t = clang_getPointeeType(t);
    if (t.kind != CXType_FunctionProto && t.kind != CXType_FunctionNoProto) return NULL;
    return type_string(t);
}

static void record_call(CXCursor call, int from) {
    CXCursor callee = clang_getCursorReferenced(call);
    enum CXCursorKind kind = clang_getCursorKind(callee);
    if (kind == CXCursor_FunctionDecl) {
        Call *e = PUSH(calls, ncalls, capcalls);
        e->from = from;
        e->to = func_of_cursor(callee);
        location(call, &e->file, &e->line);
        return;
    }
    IndirectCall *ic = PUSH(indirect, nindirect, capindirect);
    ic->from = from;
    location(call, &ic->file, &ic->line);
    ic->type = callee_type(call);
    if (clang_Cursor_isNull(callee)) {
        ic->what = xstrdup("computed pointer");
        return;
    }
    CXString what = clang_getCursorSpelling(callee);
    ic->what = xstrdup(clang_getCString(what));
    clang_disposeString(what);
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
    (void)parent;
    Walk *w = data;
    enum CXCursorKind kind = clang_getCursorKind(c);
    if (kind == CXCursor_FunctionDecl) {
        if (!clang_isCursorDefinition(c)) return CXChildVisit_Continue;
        int id = func_of_cursor(c);
        /* A static inline function of a header is defined in every file
         * that includes it: its body is walked once. */
        if (funcs[id].file) return CXChildVisit_Continue;
        location(c, &funcs[id].file, &funcs[id].line);
        walk(c, id, 0);
        return CXChildVisit_Continue;
    }
    if (kind == CXCursor_CallExpr) {
        if (w->func >= 0) record_call(c, w->func);
        CallChildren cc = {w->func, 0};
        clang_visitChildren(c, visit_call_child, &cc);
        return CXChildVisit_Continue;
    }
    if (kind == CXCursor_DeclRefExpr && !w->callee_pos) {
        CXCursor ref = clang_getCursorReferenced(c);
        if (clang_getCursorKind(ref) == CXCursor_FunctionDecl) funcs[func_of_cursor(ref)].addr_taken = 1;
        return CXChildVisit_Continue;
    }
    /* Implicit casts and parentheses keep the callee position; anything
     * else (a member access, an array index, a conditional) computes a
     * pointer, so a function named inside it has its address taken. */
    int keep = w->callee_pos && (kind == CXCursor_UnexposedExpr || kind == CXCursor_ParenExpr);
    walk(c, w->func, keep);
    return CXChildVisit_Continue;
}

static void parse(CXIndex index, const char *path, const char *const *args, int nargs) {
    CXTranslationUnit tu = NULL;
    enum CXErrorCode err = clang_parseTranslationUnit2(index, path, args, nargs, NULL, 0, CXTranslationUnit_None, &tu);
    if (err != CXError_Success || !tu) {
        fprintf(stderr, "noalloc: %s: cannot parse (libclang error %d)\n", path, (int)err);
        exit(2);
    }
    int errors = 0;
    for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            CXString s = clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions());
            fprintf(stderr, "noalloc: %s\n", clang_getCString(s));
            clang_disposeString(s);
            errors++;
        }
        clang_disposeDiagnostic(d);
    }
    /* A body that doesn't parse would hide its calls: refuse to judge. */
    if (errors) {
        fprintf(stderr, "noalloc: %s: %d error(s); not analysed\n", path, errors);
        exit(2);
    }
    Walk w = {-1, 0};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), visit, &w);
    clang_disposeTranslationUnit(tu);
}

/* ---- reachability ---- */

static void print_chain(int f) {
    if (funcs[f].parent < 0) return;
    print_chain(funcs[f].parent);
    if (funcs[f].parent_call >= 0) {
        const Call *e = &calls[funcs[f].parent_call];
        printf("    %s calls %s at %s:%u\n", funcs[e->from].name, funcs[f].name, e->file, e->line);
    } else {
        const IndirectCall *ic = &indirect[funcs[f].parent_ind];
        printf("    %s may call %s through a pointer (%s) at %s:%u\n", funcs[ic->from].name, funcs[f].name,
               ic->what, ic->file, ic->line);
    }
}

static void reach(int f, int parent, int call, int ind, int *queue, int *tail) {
    if (funcs[f].reached) return;
    funcs[f].reached = 1;
    funcs[f].parent = parent;
    funcs[f].parent_call = call;
    funcs[f].parent_ind = ind;
    queue[(*tail)++] = f;
}

static int usage(void) {
    fprintf(stderr, "usage: noalloc [-v] [--ban NAME]... ROOT FILE.c... [-- CLANG_ARGS...]\n");
    return 2;
}

int main(int argc, char **argv) {
    int verbose = 0, i = 1;
    nbanned = (int)(sizeof default_banned / sizeof *default_banned);
    banned = xrealloc(NULL, (size_t)(nbanned + argc) * sizeof *banned);
    memcpy(banned, default_banned, sizeof default_banned);
    for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++) {
        if (strcmp(argv[i], "-v") == 0) verbose = 1;
        else if (strcmp(argv[i], "--ban") == 0 && i + 1 < argc) banned[nbanned++] = argv[++i];
        else return usage();
    }
    if (i >= argc) return usage();
    const char *root = argv[i++];
    int first_file = i;
    while (i < argc && strcmp(argv[i], "--")) i++;
    int nfiles = i - first_file;
    if (nfiles == 0) return usage();
    const char *args[256];
    int nargs = 0;
    args[nargs++] = "-std=c99";
    args[nargs++] = "-D_POSIX_C_SOURCE=200809L";
    for (i = i + 1; i < argc && nargs < 256; i++) args[nargs++] = argv[i];

    CXIndex index = clang_createIndex(0, 0);
    for (int f = 0; f < nfiles; f++) parse(index, argv[first_file + f], args, nargs);
    clang_disposeIndex(index);

    int r = -1;
    for (int f = 0; f < nfiles && r < 0; f++)
        for (int k = 0; k < nfuncs; k++)
            if (funcs[k].file && strcmp(funcs[k].name, root) == 0) r = k;
    if (r < 0) {
        fprintf(stderr, "noalloc: %s is not defined in the given files\n", root);
        return 2;
    }

    int *queue = xrealloc(NULL, (size_t)(nfuncs ? nfuncs : 1) * sizeof *queue);
    int head = 0, tail = 0, nind_reached = 0;
    reach(r, -1, -1, -1, queue, &tail);
    while (head < tail) {
        int f = queue[head++];
        for (int k = 0; k < ncalls; k++)
            if (calls[k].from == f) reach(calls[k].to, f, k, -1, queue, &tail);
        for (int k = 0; k < nindirect; k++) {
            if (indirect[k].from != f) continue;
            nind_reached++;
            const char *type = indirect[k].type;
            int targets = 0;
            for (int t = 0; t < nfuncs; t++)
                if (funcs[t].addr_taken && (!type || !funcs[t].type || strcmp(type, funcs[t].type) == 0)) {
                    reach(t, f, -1, k, queue, &tail);
                    targets++;
                }
            printf("noalloc: indirect call in %s at %s:%u (%s, type %s): assumed to reach %d address-taken "
                   "function(s) of that type\n",
                   funcs[f].name, indirect[k].file, indirect[k].line, indirect[k].what, type ? type : "unknown",
                   targets);
        }
    }

    int bad = 0, defined = 0, external = 0;
    for (int k = 0; k < tail; k++) {
        int f = queue[k];
        if (is_banned(funcs[f].name)) {
            bad++;
            printf("noalloc: %s reaches forbidden call %s:\n", root, funcs[f].name);
            print_chain(f);
        } else if (funcs[f].file) {
            defined++;
        } else {
            external++;
            if (verbose) printf("noalloc: external call allowed: %s\n", funcs[f].name);
        }
    }
    printf("noalloc: %s: %d reachable functions defined here, %d external, %d indirect call sites, %d forbidden\n",
           root, defined, external, nind_reached, bad);
    return bad ? 1 : 0;
}
