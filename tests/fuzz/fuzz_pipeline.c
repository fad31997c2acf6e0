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
 */
#include "fuzz.h"
#include "target.h"

#define RUN_MAX_BYTES (1 << 20)

static uint8_t *align_up(uint8_t *p) { return p + (RLX_ALIGN - (uintptr_t)p % RLX_ALIGN) % RLX_ALIGN; }

static const char *fuzz_file(const uint8_t *data, size_t size) {
    return fuzz_is_rlxg(data, size) ? "fuzz.rlxg" : "fuzz.onnx";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *file = fuzz_file(data, size);
    fuzz_limits(file);
    jmp_buf jb;
    if (rlx_try(jb)) {
        fuzz_check_message(file);
    } else {
        RlxGraph *g = fuzz_is_rlxg(data, size) ? rlx_read_rlxg_buffer(file, data, size)
                                               : rlx_read_onnx_buffer(file, data, size, 0, NULL, NULL);
        RlxPipeline pipe = {"c", 0, 0, 0, -1, NULL, NULL};
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
            uint8_t *weights = align_up(rlx_alloc((size_t)comp.plan->weights_bytes + RLX_ALIGN));
            memcpy(weights, wimg->data + RLX_WEIGHTS_HEADER, (size_t)comp.plan->weights_bytes);
            (void)rlx_exec_thunks(g, comp.thunks, arena, weights);
        }
    }
    rlx_diag.jmp = NULL;
    rlx_arena_free_all();
    return 0;
}
