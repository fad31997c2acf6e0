/* schedule.c - the host file's tables that every GPU target prints the
 * same way: the kernel table, the dispatches and the rlx_gpu_schedule
 * (runtime_min/rlx_gpu.h) of a program from rlx_gpu_select.
 *
 * Only what a kernel's code is differs between targets (SPIR-V words in an
 * array of their own, MSL text inside the library source, PTX), so the
 * printer of each target passes, per kernel, the C expressions of its
 * code pointer and byte count; everything else comes from the program and
 * the plan. The tables are static, named NAME_kernels, NAME_dispatches and
 * NAME_schedule; the target prints the NAME_* API that hands
 * &NAME_schedule to its host.
 */
#include <string.h>

#include "gpu.h"
#include "../codegen_c/c.h"
#include "../../runtime_min/rlx_gpu.h"

const char *rlx_gpu_needs_str(uint32_t n) {
    static const char *const names[] = {"RLX_GPU_NEED_F16_ARITH", "RLX_GPU_NEED_16BIT", "RLX_GPU_NEED_8BIT",
                                        "RLX_GPU_NEED_INT64", "RLX_GPU_NEED_F64", "RLX_GPU_NEED_SUBGROUP"};
    RlxBuf b = {0};
    for (int i = 0; i < 6; i++)
        if (n >> i & 1) rlx_buf_printf(&b, "%s%s", b.len ? " | " : "", names[i]);
    return b.len ? b.data : "0";
}

void rlx_gpu_emit_schedule(RlxBuf *c, const RlxEmitJob *job, const char *const *code, const char *const *code_bytes) {
    const RlxGraph *g = job->g;
    const RlxPlan *plan = job->plan;
    const RlxGpuProgram *p = job->selected;
    const char *N = job->name;
    uint32_t needs = 0, max_inv = 0, max_shared = 0, max_groups[3] = {0, 0, 0};
    for (int i = 0; i < p->nk; i++) {
        needs |= p->k[i].needs;
        uint32_t inv = p->k[i].local[0] * p->k[i].local[1] * p->k[i].local[2];
        if (inv > max_inv) max_inv = inv;
        if (p->k[i].shared_bytes > max_shared) max_shared = p->k[i].shared_bytes;
    }
    rlx_emit(c, "");
    rlx_emit(c, "static const rlx_gpu_kernel %s_kernels[] = {", N);
    for (int i = 0; i < p->nk; i++) {
        const RlxGpuKernel *kn = &p->k[i];
        uint64_t trips = kn->trips > UINT32_MAX ? UINT32_MAX : kn->trips;
        rlx_emit(c, "    {\"%s\", %s, %s, {%u, %u, %u}, %u, %llu, %s},", kn->name, code[i], code_bytes[i], kn->local[0],
                 kn->local[1], kn->local[2], kn->shared_bytes, (unsigned long long)trips, rlx_gpu_needs_str(kn->needs));
    }
    if (!p->nk) rlx_emit(c, "    {0, 0, 0, {0, 0, 0}, 0, 0, 0},");
    rlx_emit(c, "};");
    rlx_emit(c, "");
    rlx_emit(c, "static const rlx_gpu_dispatch %s_dispatches[] = {", N);
    for (int i = 0; i < p->nd; i++) {
        const RlxGpuDispatch *d = &p->d[i];
        const RlxNode *n = &g->n[job->tl->t[d->thunk].node];
        RlxBuf push = {0};
        for (int j = 0; j < d->npush; j++) rlx_buf_printf(&push, "%s%u", j ? ", " : "", d->push[j]);
        for (int a = 0; a < 3; a++)
            if (d->groups[a] > max_groups[a]) max_groups[a] = d->groups[a];
        rlx_emit(c, "    /* %d: %s (%s) */", i, rlx_comment_safe(n->name), rlx_ops[n->op].name);
        rlx_emit(c, "    {%d, {%u, %u, %u}, %d, {%s}, %d},", d->kernel, d->groups[0], d->groups[1], d->groups[2],
                 d->npush, d->npush ? push.data : "0", d->barrier);
    }
    if (!p->nd) rlx_emit(c, "    {0, {0, 0, 0}, 0, {0}, 0},");
    rlx_emit(c, "};");
    rlx_emit(c, "");
    int64_t buf = plan->arena_bytes > plan->weights_bytes ? plan->arena_bytes : plan->weights_bytes;
    rlx_emit(c, "static const uint8_t %s_output_in_weights[] = {", N);
    RlxBuf ow = {0};
    for (int i = 0; i < g->noutputs; i++)
        rlx_buf_printf(&ow, "%s%d", i ? ", " : "", (g->v[g->outputs[i]].flags & RLX_V_WEIGHT) != 0);
    rlx_emit(c, "    %s", g->noutputs ? ow.data : "0");
    rlx_emit(c, "};");
    rlx_emit(c, "static const rlx_gpu_schedule %s_schedule = {", N);
    rlx_emit(c, "    .info = &%s_info,", N);
    rlx_emit(c, "    .kernels = %s_kernels,", N);
    rlx_emit(c, "    .nkernels = %d,", p->nk);
    rlx_emit(c, "    .dispatches = %s_dispatches,", N);
    rlx_emit(c, "    .ndispatches = %d,", p->nd);
    rlx_emit(c, "    .needs = %s,", rlx_gpu_needs_str(needs));
    rlx_emit(c, "    .max_local_invocations = %u,", max_inv);
    rlx_emit(c, "    .max_shared_bytes = %u,", max_shared);
    rlx_emit(c, "    .max_groups = {%u, %u, %u},", max_groups[0], max_groups[1], max_groups[2]);
    rlx_emit(c, "    .max_buffer_bytes = %lld,", (long long)buf);
    rlx_emit(c, "    .output_in_weights = %s_output_in_weights,", N);
    rlx_emit(c, "    .status_offset = %lld,", (long long)rlx_align64(plan->arena_bytes));
    rlx_emit(c, "};");
}

void rlx_gpu_emit_api(RlxBuf *c, const RlxEmitJob *job, const char *host, const char *init_arg) {
    const char *N = job->name;
    rlx_emit(c, "");
    rlx_emit(c, "int %s_init(rlx_model **m) { return %s_model_new(%s, m); }", N, host, init_arg);
    rlx_emit(c, "int %s_load_weights(rlx_model *m, const char *path) { return %s_load_weights(m, path); }", N, host);
    rlx_emit(c, "int %s_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {", N);
    rlx_emit(c, "    return %s_load_weights_buffer(m, buf, len);", host);
    rlx_emit(c, "}");
    rlx_emit(c, "int %s_run(rlx_model *m, const void *const *inputs, void *const *outputs) {", N);
    rlx_emit(c, "    return %s_run(m, inputs, outputs);", host);
    rlx_emit(c, "}");
    rlx_emit(c, "void %s_free(rlx_model *m) { %s_model_free(m); }", N, host);
    if (job->emit_main) {
        rlx_emit(c, "");
        rlx_emit(c, "static const rlx_model_api %s_api = {", N);
        rlx_emit(c, "    &%s_info, %s_init, %s_load_weights, %s_run, %s_free, NULL, %s_device_name,", N, N, N, N, N,
                 host);
        rlx_emit(c, "};");
        rlx_emit(c, "int %s_main(int argc, char **argv) { return rlx_main(argc, argv, &%s_api); }", N, N);
        rlx_emit(c, "int main(int argc, char **argv) { return %s_main(argc, argv); }", N);
    }
}

void rlx_gpu_emit_hex(RlxBuf *c, const char *decl, const void *data, size_t n, int elem_bytes, int per_line) {
    const uint8_t *b = (const uint8_t *)data;
    rlx_emit(c, "%s = {", decl);
    RlxBuf line = {0};
    for (size_t j = 0; j < n; j++) {
        if (elem_bytes == 4) {
            uint32_t w;
            memcpy(&w, b + 4 * j, 4);
            rlx_buf_printf(&line, "%s0x%08x,", line.len ? " " : "", (unsigned)w);
        } else {
            rlx_buf_printf(&line, "%s0x%02x,", line.len ? " " : "", b[j]);
        }
        if (j % (size_t)per_line == (size_t)per_line - 1 || j + 1 == n) {
            rlx_emit(c, "    %s", line.data);
            line.len = 0;
            line.data[0] = 0;
        }
    }
    rlx_emit(c, "};");
}
