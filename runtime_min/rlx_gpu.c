/* rlx_gpu.c - the part of a GPU host that does not depend on the GPU API:
 * checking a schedule (rlx_gpu.h) against what a device offers.
 *
 * Every host (Vulkan now; CUDA and Metal later) fills an rlx_gpu_caps from
 * its API's features and limits and calls rlx_gpu_check at init, so the
 * rules, and the order in which problems are reported, are the same on
 * every target. Kept apart from the API code so that unit tests can run it
 * on made-up devices: a machine has only the device it has, and lavapipe
 * offers every feature the schedule can ask for.
 */
#include "rlx_gpu.h"

/* A slot of `bytes` at `off` inside a buffer of `size` bytes, without
 * overflowing. */
static int slot_inside(uint64_t off, uint64_t bytes, uint64_t size) { return off <= size && bytes <= size - off; }

static int check_tables(const rlx_gpu_schedule *s) {
    const rlx_model_info *info = s->info;
    if (!info || (s->nkernels && !s->kernels) || (s->ndispatches && !s->dispatches)) return RLX_E_ARG;
    if ((info->ninputs && !info->inputs) || (info->noutputs && !info->outputs) || info->ninputs < 0 ||
        info->noutputs < 0)
        return RLX_E_ARG;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const rlx_gpu_kernel *kn = &s->kernels[k];
        if (!kn->code || !kn->code_bytes) return RLX_E_ARG;
    }
    for (uint32_t d = 0; d < s->ndispatches; d++)
        if (s->dispatches[d].kernel >= s->nkernels || s->dispatches[d].npush > RLX_GPU_MAX_PUSH) return RLX_E_ARG;
    if (s->status_offset < info->arena_bytes || s->status_offset % 4 || s->status_offset > UINT64_MAX - 4)
        return RLX_E_ARG;
    for (int i = 0; i < info->ninputs; i++)
        if (!slot_inside(info->inputs[i].offset, info->inputs[i].nbytes, info->arena_bytes)) return RLX_E_ARG;
    for (int i = 0; i < info->noutputs; i++) {
        int w = s->output_in_weights && s->output_in_weights[i];
        if (!slot_inside(info->outputs[i].offset, info->outputs[i].nbytes, w ? info->weights_bytes : info->arena_bytes))
            return RLX_E_ARG;
    }
    return RLX_OK;
}

int rlx_gpu_check(const rlx_gpu_schedule *s, const rlx_gpu_caps *caps) {
    if (!s) return RLX_E_ARG;
    int st = check_tables(s);
    if (st || !caps) return st;
    /* what the schedule needs: its summary, and again from the tables */
    uint32_t needs = s->needs, invocations = s->max_local_invocations, shared = s->max_shared_bytes;
    uint32_t local[3] = {0, 0, 0}, groups[3], trips = 0;
    uint64_t buffer = s->max_buffer_bytes;
    if (s->info->arena_bytes > buffer) buffer = s->info->arena_bytes;
    if (s->info->weights_bytes > buffer) buffer = s->info->weights_bytes;
    if (s->status_offset + 4 > buffer) buffer = s->status_offset + 4;   /* the arena buffer holds the status word */
    int wide = 0;   /* a workgroup whose invocation count overflows 32 bits */
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const rlx_gpu_kernel *kn = &s->kernels[k];
        needs |= kn->needs;
        uint64_t n = (uint64_t)kn->local[0] * kn->local[1] * kn->local[2];
        if (n > UINT32_MAX) wide = 1;
        else if (n > invocations) invocations = (uint32_t)n;
        for (int d = 0; d < 3; d++)
            if (kn->local[d] > local[d]) local[d] = kn->local[d];
        if (kn->shared_bytes > shared) shared = kn->shared_bytes;
        if (kn->max_loop_trips > trips) trips = kn->max_loop_trips;
    }
    for (int d = 0; d < 3; d++) groups[d] = s->max_groups[d];
    for (uint32_t i = 0; i < s->ndispatches; i++)
        for (int d = 0; d < 3; d++)
            if (s->dispatches[i].groups[d] > groups[d]) groups[d] = s->dispatches[i].groups[d];
    static const struct { uint32_t need; int status; } features[] = {
        {RLX_GPU_NEED_F16_ARITH, RLX_E_DEV_F16}, {RLX_GPU_NEED_16BIT, RLX_E_DEV_16BIT},
        {RLX_GPU_NEED_8BIT, RLX_E_DEV_8BIT},     {RLX_GPU_NEED_INT64, RLX_E_DEV_INT64},
        {RLX_GPU_NEED_F64, RLX_E_DEV_F64},       {RLX_GPU_NEED_SUBGROUP, RLX_E_DEV_SUBGROUP},
    };
    for (unsigned i = 0; i < sizeof features / sizeof features[0]; i++)
        if ((needs & features[i].need) && !(caps->has & features[i].need)) return features[i].status;
    if (buffer > caps->max_buffer_bytes) return RLX_E_DEV_BUFFER;
    if (shared > caps->max_shared_bytes) return RLX_E_DEV_SHARED;
    if (wide || invocations > caps->max_invocations) return RLX_E_DEV_WGSIZE;
    for (int d = 0; d < 3; d++)
        if (local[d] > caps->max_local[d]) return RLX_E_DEV_WGSIZE;
    for (int d = 0; d < 3; d++)
        if (groups[d] > caps->max_groups[d]) return RLX_E_DEV_WGCOUNT;
    if (caps->loop_cap && trips >= caps->loop_cap) return RLX_E_DEV_LOOPS;
    return RLX_OK;
}
