/* target_msl.c - the Metal target: Metal Shading Language kernels in one
 * library and an Objective-C host over Metal, for Apple GPUs.
 *
 * Its select is the GPU targets' (lib/gpu/select.c) in MSL; its printer
 * writes
 *   OUT.metal     the library, one translation unit: the MSL preamble once
 *                 (rlx_gpu_preamble: prelude_msl.kl and the scalar
 *                 functions), then every kernel's section: its own part
 *                 (rlx_gpu_render_split) with its file-scope names
 *                 (constant arrays, tables, helper functions) renamed after
 *                 the kernel (k3_KDIMS, k3_red_base, through a macro each,
 *                 as MSL's kernels must stay at file scope for the host to
 *                 find them by name), and every macro it defined #undef'd
 *                 after it, so that sections never see each other's; then
 *                 a fingerprint kernel rlx_msl_<hash> whose name carries a
 *                 hash of the text before it, so that the host can tell a
 *                 .metallib built from another model's (or another rlxc's)
 *                 file;
 *   OUT.c         the schedule table (lib/gpu/schedule.c) with the library
 *                 source embedded, each kernel's code pointing at its own
 *                 section of it, and the same NAME_* API as the C target,
 *                 which hands the table to the host functions of OUT_metal.m;
 *   OUT_metal.m   the host (metal_host.m, embedded into rlxc like the
 *                 kernel templates), its functions named NAME_mtl_* so that
 *                 several models link into one program;
 *   OUT.h, OUT.weights  as the C target's.
 * Nothing here compiles MSL: no Metal compiler exists off Apple's systems.
 * The host builds the library at init with fast math off, or loads the
 * .metallib named by $RLX_METALLIB.
 *
 * What Metal offers decides the descriptor: no double at all (legalize
 * refuses f64 with the node's name); 64-bit long and ulong (MSL 2.2 and
 * later, and the host asks for MSL 2.3), 8- and 16-bit storage, half; 32 KB
 * of threadgroup memory and 1024 threads per threadgroup on Apple GPUs
 * (the host checks the device's own figures, and each pipeline's
 * maxTotalThreadsPerThreadgroup, at init); the grids kept within 65535
 * threadgroups per dimension like the other GPU targets', and the operand
 * offsets passed with setBytes as 128 bytes.
 */
#include <string.h>

#include "../codegen_c/c.h"
#include "../gpu/gpu.h"
#include "../target.h"
#include "../../runtime_min/rlx_gpu.h"

extern const char *const rlx_gpu_sources[][2];   /* build/gen/gpu_sources.c */

static const char *host_source(void) {
    for (int i = 0; rlx_gpu_sources[i][0]; i++)
        if (!strcmp(rlx_gpu_sources[i][0], "metal_host.m")) return rlx_gpu_sources[i][1];
    RLX_ASSERT(!"metal_host.m is not embedded");
    return NULL;
}

static int ident_char(char c) {
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* #undef for every "#define NAME" line of text, in order */
static void undefine_macros(RlxBuf *b, const char *text) {
    for (const char *p = text; *p;) {
        if (!strncmp(p, "#define ", 8)) {
            const char *n = p + 8, *e = n;
            while (ident_char(*e)) e++;
            rlx_emit(b, "#undef %.*s", (int)(e - n), n);
        }
        p = strchr(p, '\n');
        if (!p) break;
        p++;
    }
}

/* A kernel's own part as its section of the library (above): each
 * file-scope declaration (a line that starts with RLX_FN, RLX_TABLE or
 * constant: helper functions, tables, constant arrays) gets a macro that
 * renames it after the kernel before it ("#define KDIMS k3_KDIMS"); then
 * the #undefs of every macro the section defined. */
static void print_section(RlxBuf *b, const char *kname, const char *body) {
    static const char *const scoped[] = {"RLX_FN ", "RLX_TABLE ", "constant "};
    RlxBuf sec = {0};
    for (const char *line = body; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        const char *l = rlx_strndup(line, n);
        for (int i = 0; i < 3; i++) {
            if (strncmp(l, scoped[i], strlen(scoped[i]))) continue;
            const char *at = l + strcspn(l, "([");
            if (!*at) break;
            const char *id = at;
            while (id > l && ident_char(id[-1])) id--;
            rlx_emit(&sec, "#define %.*s %s_%.*s", (int)(at - id), id, kname, (int)(at - id), id);
            break;
        }
        rlx_emit(&sec, "%s", l);
        if (!end) break;
        line = end + 1;
    }
    rlx_buf_put(b, sec.data, sec.len);
    undefine_macros(b, sec.data);
}

/* The threadgroup-memory variant of a kernel that reduces by simdgroup
 * shuffles (SG_REDUCE, RLX_GPU_NEED_SUBGROUP): its own part without that
 * define, its KNAME NAME_tg. The host runs it where the pipeline's SIMD
 * width is not 32 (or the device has no simdgroup functions). */
static const char *threadgroup_variant(const char *body, const char *kname) {
    RlxBuf b = {0};
    int dropped = 0;
    for (const char *line = body; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
        const char *l = rlx_strndup(line, n);
        if (!strcmp(l, "#define SG_REDUCE 1\n")) dropped++;
        else if (!strncmp(l, "#define KNAME ", 14)) rlx_emit(&b, "#define KNAME %s_tg", kname);
        else rlx_buf_put(&b, l, n);
        line += n;
    }
    RLX_ASSERT(dropped == 1);   /* launch.c: the only source of NEED_SUBGROUP */
    rlx_buf_put(&b, "", 1);
    return b.data;
}

/* Apple GPUs have simdgroups of 32: the row reductions by shuffles (with a
 * threadgroup-memory variant of each, above), the products in register
 * tiles (gemm_tiled.kl; no loop cap on Metal). */
static void *msl_select(RlxGraph *g, const RlxPlan *plan, RlxThunkList *tl) {
    RlxGpuOptions opt = {rlx_target_msl.features, 1};
    return rlx_gpu_select_with(g, plan, tl, RLX_LANG_MSL, &rlx_target_msl.limits, &opt);
}

/* text as the lines of a C string literal, each at most about 100 columns */
static void emit_c_string(RlxBuf *c, const char *text, size_t n) {
    RlxBuf line = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\\' || ch == '"') rlx_buf_printf(&line, "\\%c", ch);
        else if (ch == '\n') rlx_buf_printf(&line, "\\n");
        else if (ch == '\t') rlx_buf_printf(&line, "\\t");
        else if (ch < 32 || ch > 126) rlx_buf_printf(&line, "\\%03o", ch);
        else if (ch == '?' && i + 1 < n && text[i + 1] == '?') rlx_buf_printf(&line, "\\?");   /* no trigraphs */
        else rlx_buf_put(&line, (const char *)&ch, 1);
        if (ch == '\n' || line.len >= 96 || i + 1 == n) {
            rlx_emit(c, "    \"%s\"", line.data);
            line.len = 0;
            line.data[0] = 0;
        }
    }
    if (!n) rlx_emit(c, "    \"\"");
}

/* The host functions OUT_metal.m defines, as OUT.c and OUT_metal.m both
 * declare them (so that the compiler checks each file against the same
 * text). */
static void emit_host_protos(RlxBuf *b, const char *N) {
    rlx_emit(b, "int %s_mtl_model_new(const rlx_gpu_schedule *s, const char *msl, size_t msl_bytes, "
             "const char *fingerprint, rlx_model **out);", N);
    rlx_emit(b, "int %s_mtl_load_weights(rlx_model *m, const char *path);", N);
    rlx_emit(b, "int %s_mtl_load_weights_buffer(rlx_model *m, const void *buf, size_t len);", N);
    rlx_emit(b, "int %s_mtl_run(rlx_model *m, const void *const *inputs, void *const *outputs);", N);
    rlx_emit(b, "void %s_mtl_model_free(rlx_model *m);", N);
    rlx_emit(b, "const char *%s_mtl_device_name(const rlx_model *m);", N);
}

static void msl_emit(const RlxEmitJob *job) {
    const RlxGraph *g = job->g;
    const RlxPlan *plan = job->plan;
    const RlxGpuProgram *p = job->selected;
    const char *N = job->name;
    RlxOutFile *f = job->files;
    f[0].suffix = ".c";
    f[1].suffix = ".h";
    f[2].suffix = ".metal";
    f[3].suffix = "_metal.m";
    f[4].suffix = ".weights";
    *job->nfiles = 5;
    uint64_t hash;
    rlx_weights_image(g, plan, &f[4].data, &hash);
    rlx_emit_model_header(g, plan, N, job->emit_main, 0, &f[1].data);   /* its weights stay a file */

    /* OUT.metal: one library; each kernel's section starts at off[k] */
    RlxBuf *k = &f[2].data;
    rlx_emit(k, "// %s.metal - generated by rlxc %s from %s: the %d Metal compute kernels of %s.c, in", N,
             RLX_VERSION, rlx_comment_safe(g->file), p->nk, N);
    rlx_emit(k, "// one library. %s_metal.m builds it at init from the copy embedded in %s.c, or loads", N, N);
    rlx_emit(k, "// a .metallib built from this file ($RLX_METALLIB; build it with -fno-fast-math). Do not edit.");
    uint32_t needs = 0;
    for (int i = 0; i < p->nk; i++) needs |= p->k[i].needs;
    RLX_ASSERT(!(needs & RLX_GPU_NEED_F64));   /* legalize refuses f64 for this target */
    const char *pre = rlx_gpu_preamble(RLX_LANG_MSL, needs);
    rlx_buf_put(k, pre, strlen(pre));
    size_t *off = rlx_alloc(sizeof(size_t) * (size_t)(p->nk + 1));
    size_t *len = rlx_alloc(sizeof(size_t) * (size_t)(p->nk + 1));
    for (int i = 0; i < p->nk; i++) {
        const RlxGpuKernel *kn = &p->k[i];
        rlx_emit(k, "");
        off[i] = (size_t)k->len;
        rlx_emit(k, "//// kernel %s: threadgroup %ux%ux%u, %u bytes of threadgroup memory, %llu loop iterations per "
                 "thread", kn->name, kn->local[0], kn->local[1], kn->local[2], kn->shared_bytes,
                 (unsigned long long)kn->trips);
        print_section(k, kn->name, kn->body);
        if (kn->needs & RLX_GPU_NEED_SUBGROUP) {
            rlx_emit(k, "");
            rlx_emit(k, "// %s_tg: %s reducing through threadgroup memory alone (a SIMD width other than 32)",
                     kn->name, kn->name);
            print_section(k, rlx_fmt("%s_tg", kn->name), threadgroup_variant(kn->body, kn->name));
        }
        len[i] = (size_t)k->len - off[i];
    }
    uint64_t fp = rlx_fnv1a(RLX_FNV_SEED, k->data, (size_t)k->len);
    const char *fingerprint = rlx_fmt("rlx_msl_%016llx", (unsigned long long)fp);
    rlx_emit(k, "");
    rlx_emit(k, "// The library's fingerprint: a hash of the text above (the host refuses a .metallib without it).");
    rlx_emit(k, "kernel void %s() {}", fingerprint);

    /* OUT.c: the schedule table and the API */
    RlxBuf *c = &f[0].data;
    rlx_emit(c, "/* %s.c - generated by rlxc %s from %s for target msl. Do not edit.", N, RLX_VERSION,
             rlx_comment_safe(g->file));
    rlx_emit(c, " *");
    rlx_emit(c, " * %d kernels (%s.metal, embedded below as %s_msl), %d dispatches; arena %lld bytes, weights "
             "%lld bytes.", p->nk, N, N, p->nd, (long long)plan->arena_bytes, (long long)plan->weights_bytes);
    rlx_emit(c, " * The Metal host (%s_metal.m) builds the library and one pipeline per kernel once, and runs", N);
    rlx_emit(c, " * the dispatches in one command buffer per run; push[i] is operand i's offset in elements of");
    rlx_emit(c, " * the kernel's type for it. Build on macOS with %s_metal.m (docs/targets.md, Metal).", N);
    rlx_emit(c, " */");
    rlx_emit(c, "#include <stddef.h>");
    rlx_emit(c, "#include <stdint.h>");
    rlx_emit(c, "");
    rlx_emit(c, "#include \"%s\"", job->header_name);
    rlx_emit(c, "#include \"rlx_gpu.h\"");
    rlx_emit(c, "");
    rlx_emit(c, "/* the host, in %s_metal.m */", N);
    emit_host_protos(c, N);
    rlx_emit(c, "");
    rlx_emit_model_info(g, plan, N, hash, 0, 1, c);
    rlx_emit(c, "");
    rlx_emit(c, "/* %s.metal */", N);
    rlx_emit(c, "static const char %s_msl[] =", N);
    emit_c_string(c, k->data, (size_t)k->len);
    rlx_emit(c, ";");
    const char **code = rlx_alloc(sizeof(char *) * (size_t)(p->nk + 1));
    const char **code_bytes = rlx_alloc(sizeof(char *) * (size_t)(p->nk + 1));
    for (int i = 0; i < p->nk; i++) {
        code[i] = rlx_fmt("%s_msl + %zu", N, off[i]);
        code_bytes[i] = rlx_fmt("%zu", len[i]);
    }
    rlx_gpu_emit_schedule(c, job, code, code_bytes);
    rlx_gpu_emit_api(c, job, rlx_fmt("%s_mtl", N),
                     rlx_fmt("&%s_schedule, %s_msl, sizeof %s_msl - 1, \"%s\"", N, N, N, fingerprint));

    /* OUT_metal.m: the host, its functions named after the model */
    RlxBuf *m = &f[3].data;
    rlx_emit(m, "/* %s_metal.m - generated by rlxc %s from %s for target msl: the Metal host of %s.c.", N,
             RLX_VERSION, rlx_comment_safe(g->file), N);
    rlx_emit(m, " * Build on macOS (docs/targets.md, Metal), with runtime_min/ as R:");
    rlx_emit(m, " *   clang -fobjc-arc -O2 -I$R -c %s_metal.m", N);
    rlx_emit(m, " *   clang -std=c99 -O2 -I$R -c %s.c $R/rlx_rt.c $R/rlx_pool.c $R/rlx_isa.c $R/rlx_gpu.c", N);
    rlx_emit(m, " *   clang *.o -framework Metal -framework Foundation");
    rlx_emit(m, " * Do not edit. */");
    rlx_emit(m, "#define RLX_MTL(x) %s_mtl_##x", N);
    rlx_emit(m, "#define RLX_MTL_HOST %s_RlxMetalHost", N);
    rlx_emit(m, "#include <stddef.h>");
    rlx_emit(m, "#include \"rlx_gpu.h\"");
    emit_host_protos(m, N);
    rlx_emit(m, "");
    const char *host = host_source();
    rlx_buf_put(m, host, strlen(host));
}

const RlxTarget rlx_target_msl = {
    .name = "msl",
    .doc = "Metal Shading Language kernels in one library, an Objective-C host",
    .align = 256,
    .support = rlx_gpu_support,
    .nsupport = -1,
    .storage_dtypes = RLX_DT_ANY & ~RLX_DT(F64),                      /* MSL has no double */
    .compute_dtypes = RLX_DT(F32) | RLX_DT_INTS | RLX_DT_BOOLS,        /* f16 and bf16 in f32 */
    .features = RLX_TF_INT64 | RLX_TF_SUBGROUPS,
    .limits = {32768, 1024, 65535, 128, 0},
    .half_storage = RLX_DT(F16) | RLX_DT(BF16),   /* half, and bf16 as ushort bits (scalar.kl) */
    .reduced_weights = RLX_DT(F16) | RLX_DT(BF16),
    .no_build = "target 'msl' is built on macOS: compile OUT.c and OUT_metal.m with clang -fobjc-arc and link "
                "-framework Metal -framework Foundation (docs/targets.md, Metal)",
    .select = msl_select,
    .emit = msl_emit,
    .node_check = rlx_gpu_node_check,
};
