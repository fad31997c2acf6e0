/* fuzz_pipeline.c - libFuzzer target: the whole compiler, model to C.
 *
 * Each input is a model file, .rlxg (either form) or ONNX, told apart by
 * its first bytes. It goes through everything `rlxc MODEL -o OUT.c` does
 * in memory: the reader, lib/pipeline.c's passes (constants, inference with
 * folding, legalize, dce, fusion, the C target's prepare, memory schedule,
 * plan, lower, its select), its printer (the .c, .h and weights image,
 * through the target descriptor as the driver calls it) and the memory
 * report. So inference, fusion and planning meet hostile graphs: huge or
 * zero dims, cycles, wrong arities, absurd attributes.
 *
 * A model small enough (arena and weights of at most RUN_MAX_BYTES each) is
 * then also run, once, by the compiler's thunk interpreter (the kernels the
 * generated code calls, with the parameters lowering gave them) over a
 * zeroed arena: a lowering that passes a kernel wrong sizes shows up as a
 * sanitizer report here rather than in a user's program. A failing kernel
 * status is fine (a Gather index out of range, say); a crash is not.
 *
 * A model that compiles in f32 is compiled (and run) a second time with
 * mixed precision, as --precision P --weights W would: the precision pass
 * and the mixed kernels (rk_mixed.c) meet the same hostile graphs. P and W
 * come from a hash of the input, so an input always takes the same mode
 * and mutations explore all twelve; the f32 compile comes first so that
 * every input keeps the coverage it had before (the regression inputs
 * replay their bug's path).
 */
#include "fuzz.h"
#include "target.h"

#define RUN_MAX_BYTES (1 << 20)

static uint8_t *align_up(uint8_t *p) { return p + (RLX_ALIGN - (uintptr_t)p % RLX_ALIGN) % RLX_ALIGN; }

static const char *fuzz_file(const uint8_t *data, size_t size) {
    return fuzz_is_rlxg(data, size) ? "fuzz.rlxg" : "fuzz.onnx";
}

/* One compile of the input, with --precision `precision` --weights
 * `weights`; 1 if it compiled, 0 after a (one-line) user error. */
static int compile_once(const uint8_t *data, size_t size, RlxPrecision precision, RlxDType weights) {
    const char *file = fuzz_file(data, size);
    fuzz_limits(file);
    jmp_buf jb;
    if (rlx_try(jb)) {
        fuzz_check_message(file);
        rlx_diag.jmp = NULL;
        rlx_arena_free_all();
        return 0;
    }
    RlxGraph *g = fuzz_is_rlxg(data, size) ? rlx_read_rlxg_buffer(file, data, size)
                                           : rlx_read_onnx_buffer(file, data, size, 0, NULL, NULL);
    RlxPipeline pipe = {"c", 0, 0, 0, -1, NULL, NULL, precision, weights, 0, NULL};
    RlxCompiled comp;
    rlx_compile_graph(g, &pipe, &comp);
    g->name = "fuzz";
    /* the target's printer, as the driver calls it (its files: .c, .h, .weights) */
    RlxOutFile files[RLX_MAX_OUT_FILES];
    memset(files, 0, sizeof files);
    int nfiles = 0;
    RlxEmitJob job = {0};
    job.g = g;
    job.plan = comp.plan;
    job.tl = comp.thunks;
    job.name = "fuzz";
    job.header_name = "fuzz.h";
    job.emit_main = 1;
    job.nthreads = 1;
    job.files = files;
    job.nfiles = &nfiles;
    job.selected = comp.selected;
    comp.target->emit(&job);
    RlxBuf txt = {0}, svg = {0};
    rlx_report_text(g, comp.plan, &txt);
    rlx_report_svg(g, comp.plan, &svg);
    const RlxBuf *wimg = NULL;
    for (int i = 0; i < nfiles; i++)
        if (!strcmp(files[i].suffix, ".weights")) wimg = &files[i].data;
    if (!wimg || wimg->len != RLX_WEIGHTS_HEADER + (size_t)comp.plan->weights_bytes) abort();
    if (comp.plan->arena_bytes <= RUN_MAX_BYTES && comp.plan->weights_bytes <= RUN_MAX_BYTES) {
        /* both at RLX_ALIGN, as the runtime allocates them */
        uint8_t *arena = align_up(rlx_alloc((size_t)comp.plan->arena_bytes + RLX_ALIGN));
        uint8_t *wdata = align_up(rlx_alloc((size_t)comp.plan->weights_bytes + RLX_ALIGN));
        memcpy(wdata, wimg->data + RLX_WEIGHTS_HEADER, (size_t)comp.plan->weights_bytes);
        (void)rlx_exec_thunks(g, comp.thunks, arena, wdata);
    }
    rlx_diag.jmp = NULL;
    rlx_arena_free_all();
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const RlxPrecision precisions[] = {RLX_PRECISION_AUTO, RLX_PRECISION_F16, RLX_PRECISION_BF16};
    static const RlxDType weights[] = {RLX_F32, RLX_F16, RLX_BF16, RLX_I8};
    if (!compile_once(data, size, RLX_PRECISION_F32, RLX_F32)) return 0;
    uint64_t h = rlx_fnv1a(RLX_FNV_SEED, data, size);
    compile_once(data, size, precisions[h % 3], weights[h / 3 % 4]);
    return 0;
}
