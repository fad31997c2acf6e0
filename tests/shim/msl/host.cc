/* host.cc - a stand-in for the msl target's Metal host (OUT_metal.m) that
 * runs the kernels on the CPU: the same RLX_MTL(x) functions, called by
 * the model's own OUT.c through its NAME_* API, following the same
 * schedule table the Objective-C host follows, with the kernels of OUT.metal
 * compiled over the shim (msl_kernels.h). A test tool (C++14), built by
 * build.sh with -DRLX_MTL_PREFIX=NAME.
 *
 * Built with -DRLX_SHIM_VK instead, it defines the Vulkan host's rlx_vk_*
 * functions (rlx_gpu.h), so that the spirv target's OUT.c runs its schedule
 * with spirv-cross's MSL translation of its SPIR-V kernels (spvx.py), found
 * by name in the same kind of table; there is no library source to check.
 *
 * What the Metal host does, this does the same way: rlx_gpu_check of the
 * tables and then of a device (an Apple7-class GPU: everything but f64,
 * 1024 threads, 32 KB of threadgroup memory), the fingerprint (the library
 * must hold the kernel rlx_msl_<hash>; here also the hash must be that of
 * the embedded source, so OUT.c embeds the very OUT.metal that was compiled),
 * every kernel found by name in the library and its code inside the
 * embedded source at its own section, the arena with the status word after
 * it (zeroed before a run, returned after), the weights copied once. A
 * launch the executor fails (a barrier divergence, a deadlock) is RLX_E_GPU,
 * with the executor's message on stderr: a test tool may print.
 *
 * SIMD width. The executor's subgroups are simdgroups of 32, as on Apple
 * GPUs, or of RLX_MSL_SIMD_WIDTH lanes (a power of two up to 64, as on
 * other Macs' GPUs), where a kernel that needs simdgroups runs as its
 * threadgroup-memory variant NAME_tg, as the Metal host chooses it.
 *
 * Dispatch order. Metal runs the dispatches of a concurrent encoder in any
 * order between memory barriers; here the run between two barriers goes in
 * schedule order, or reversed when RLX_SHIM_ORDER is reverse or shuffle, so
 * that a dispatch that reads another's output without a barrier between
 * them gives another result in the second order (tests run both).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gpu_fiber.h"
#include "msl_run.h"
#include "rlx_gpu.h"

namespace {

struct Host {
    const rlx_gpu_schedule *s;
    const msl_shim_kernel **kernels;   /* per schedule kernel, its table entry */
    unsigned simd_width;               /* the SIMD width modelled (RLX_MSL_SIMD_WIDTH, default 32) */
    unsigned char *arena;
    unsigned char *weights;
    int weights_loaded;
};

Host *host_of(const rlx_model *m) { return m ? (Host *)m->device : NULL; }

const msl_shim_kernel *find(const char *name) {
    for (const msl_shim_kernel *k = msl_shim_kernels; k->name; k++)
        if (!strcmp(k->name, name)) return k;
    return NULL;
}

const char *const FINGERPRINT_NOTE = "\n// The library's fingerprint";

/* The embedded source hashes to its fingerprint, the library holds the
 * fingerprint kernel, and each kernel's code is its own section. */
int check_library(const rlx_gpu_schedule *s, const char *msl, size_t msl_bytes, const char *fingerprint) {
    if (!msl || !fingerprint) return RLX_E_ARG;
    const char *note = NULL;
    for (const char *p = msl; (p = strstr(p, FINGERPRINT_NOTE)); p++) note = p;
    if (!note) return RLX_E_MODEL;
    char want[64];
    snprintf(want, sizeof want, "rlx_msl_%016llx",
             (unsigned long long)rlx_fnv1a(RLX_FNV_SEED, msl, (size_t)(note - msl)));
    if (strcmp(want, fingerprint) || !find(fingerprint)) return RLX_E_MODEL;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const rlx_gpu_kernel *kn = &s->kernels[k];
        const char *code = (const char *)kn->code;
        char head[160];
        snprintf(head, sizeof head, "//// kernel %s: ", kn->name);
        if (code < msl || code + kn->code_bytes > msl + msl_bytes || kn->code_bytes < strlen(head) ||
            strncmp(code, head, strlen(head)))
            return RLX_E_ARG;
    }
    return RLX_OK;
}

int init(Host *h, const char *msl, size_t msl_bytes, const char *fingerprint) {
    const rlx_gpu_schedule *s = h->s;
    rlx_gpu_caps caps;
    memset(&caps, 0, sizeof caps);
    caps.has = RLX_GPU_NEED_F16_ARITH | RLX_GPU_NEED_16BIT | RLX_GPU_NEED_8BIT | RLX_GPU_NEED_INT64 |
               RLX_GPU_NEED_SUBGROUP;
    caps.max_invocations = 1024;
    caps.max_local[0] = caps.max_local[1] = caps.max_local[2] = 1024;
    caps.max_shared_bytes = 32768;
    caps.max_groups[0] = caps.max_groups[1] = caps.max_groups[2] = 65535;
    caps.max_buffer_bytes = (uint64_t)1 << 32;
    int st = rlx_gpu_check(s, &caps);
    if (st) return st;
    if (fingerprint && (st = check_library(s, msl, msl_bytes, fingerprint))) return st;
    h->kernels = (const msl_shim_kernel **)calloc(s->nkernels ? s->nkernels : 1, sizeof *h->kernels);
    if (!h->kernels) return RLX_E_NOMEM;
    const char *w = getenv("RLX_MSL_SIMD_WIDTH");
    h->simd_width = w && *w ? (unsigned)atoi(w) : 32u;
    if (h->simd_width < 1 || h->simd_width > 64 || (h->simd_width & (h->simd_width - 1))) return RLX_E_ARG;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        /* as the Metal host: a kernel that shuffles within simdgroups of 32
         * runs as its threadgroup-memory variant NAME_tg on another width */
        char name[160];
        snprintf(name, sizeof name, "%s%s", s->kernels[k].name,
                 (s->kernels[k].needs & RLX_GPU_NEED_SUBGROUP) && h->simd_width != 32 ? "_tg" : "");
        if (!(h->kernels[k] = find(name))) return RLX_E_GPU;   /* newFunctionWithName: nil */
    }
    uint64_t bytes = s->status_offset + 4 > s->info->arena_bytes ? s->status_offset + 4 : s->info->arena_bytes;
    h->arena = (unsigned char *)aligned_alloc(256, (size_t)(bytes + 255) / 256 * 256);
    if (!h->arena) return RLX_E_DEV_NOMEM;
    memset(h->arena, 0, (size_t)bytes);
    return RLX_OK;
}

int upload_weights(rlx_model *m, Host *h) {
    size_t n = (size_t)m->info->weights_bytes;
    free(h->weights);
    h->weights = (unsigned char *)aligned_alloc(256, (n + 256) / 256 * 256);
    int st = h->weights ? RLX_OK : RLX_E_DEV_NOMEM;
    if (!st && n) memcpy(h->weights, m->weights, n);
    h->weights_loaded = !st;
    free(m->weights_alloc);
    m->weights_alloc = NULL;
    m->weights = NULL;
    return st;
}

int dispatch(Host *h, uint32_t i) {
    const rlx_gpu_dispatch *d = &h->s->dispatches[i];
    const rlx_gpu_kernel *kn = &h->s->kernels[d->kernel];
    msl_shim_args a = {h->arena, h->weights, d->push};
    gpu_fiber::Dim grid = {d->groups[0], d->groups[1], d->groups[2]};
    gpu_fiber::Dim block = {kn->local[0], kn->local[1], kn->local[2]};
    if (gpu_fiber::launch(grid, block, h->simd_width, h->kernels[d->kernel]->body, &a)) {
        fprintf(stderr, "msl shim: dispatch %u (%s): %s\n", i, kn->name, gpu_fiber::last_error());
        return RLX_E_GPU;
    }
    return RLX_OK;
}

void shim_free(rlx_model *m);

int shim_new(const rlx_gpu_schedule *s, const char *msl, size_t msl_bytes, const char *fingerprint, rlx_model **out) {
    if (!out) return RLX_E_ARG;
    *out = NULL;
    int st = rlx_gpu_check(s, NULL);
    if (st) return st;
    rlx_model *m = (rlx_model *)calloc(1, sizeof *m);
    Host *h = (Host *)calloc(1, sizeof *h);
    if (!m || !h) {
        free(m);
        free(h);
        return RLX_E_NOMEM;
    }
    m->info = s->info;
    m->device = h;
    m->ctx.nthreads = 1;
    h->s = s;
    if ((st = init(h, msl, msl_bytes, fingerprint))) {
        shim_free(m);
        return st;
    }
    *out = m;
    return RLX_OK;
}

void shim_free(rlx_model *m) {
    Host *h = host_of(m);
    if (h) {
        free(h->kernels);
        free(h->arena);
        free(h->weights);
        free(h);
    }
    if (m) {
        free(m->weights_alloc);
        free(m);
    }
}

int shim_load_weights(rlx_model *m, const char *path) {
    Host *h = host_of(m);
    if (!h) return RLX_E_ARG;
    int st = rlx_load_weights_file(m, path);
    return st ? st : upload_weights(m, h);
}

int shim_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {
    Host *h = host_of(m);
    if (!h) return RLX_E_ARG;
    int st = rlx_load_weights_buffer(m, buf, len);
    return st ? st : upload_weights(m, h);
}

int shim_run(rlx_model *m, const void *const *inputs, void *const *outputs) {
    Host *h = host_of(m);
    if (!h) return RLX_E_ARG;
    const rlx_gpu_schedule *s = h->s;
    const rlx_model_info *info = m->info;
    if ((info->ninputs && !inputs) || (info->noutputs && !outputs)) return RLX_E_ARG;
    if (!h->weights_loaded) return RLX_E_STATE;
    for (int i = 0; i < info->ninputs; i++) {
        if (!info->inputs[i].nbytes) continue;
        if (!inputs[i]) return RLX_E_ARG;
        memcpy(h->arena + info->inputs[i].offset, inputs[i], (size_t)info->inputs[i].nbytes);
    }
    for (int i = 0; i < info->noutputs; i++)
        if (info->outputs[i].nbytes && !outputs[i]) return RLX_E_ARG;
    uint32_t status = 0;
    memcpy(h->arena + s->status_offset, &status, sizeof status);
    int backwards = gpu_fiber::order() != gpu_fiber::ORDER_FORWARD;
    for (uint32_t lo = 0; lo < s->ndispatches;) {
        uint32_t hi = lo + 1;   /* [lo, hi): dispatches with no barrier between them */
        while (hi < s->ndispatches && !s->dispatches[hi].barrier) hi++;
        for (uint32_t j = 0; j < hi - lo; j++) {
            int st = dispatch(h, backwards ? hi - 1 - j : lo + j);
            if (st) return st;
        }
        lo = hi;
    }
    for (int i = 0; i < info->noutputs; i++) {
        if (!info->outputs[i].nbytes) continue;
        const unsigned char *from = s->output_in_weights && s->output_in_weights[i] ? h->weights : h->arena;
        memcpy(outputs[i], from + info->outputs[i].offset, (size_t)info->outputs[i].nbytes);
    }
    memcpy(&status, h->arena + s->status_offset, sizeof status);
    return status ? (int)status : RLX_OK;
}

const char *shim_device_name(const rlx_model *m) { return host_of(m) ? "device=msl-shim" : "device=none"; }

}  // namespace

/* ---- the entry points ---- */

#if defined(RLX_MTL_PREFIX)
#define RLX_MTL_CAT2(a, b) a##_mtl_##b
#define RLX_MTL_CAT(a, b) RLX_MTL_CAT2(a, b)
#define RLX_MTL(x) RLX_MTL_CAT(RLX_MTL_PREFIX, x)
extern "C" {
int RLX_MTL(model_new)(const rlx_gpu_schedule *s, const char *msl, size_t msl_bytes, const char *fingerprint,
                       rlx_model **out) {
    if (!fingerprint) return RLX_E_ARG;
    return shim_new(s, msl, msl_bytes, fingerprint, out);
}
int RLX_MTL(load_weights)(rlx_model *m, const char *path) { return shim_load_weights(m, path); }
int RLX_MTL(load_weights_buffer)(rlx_model *m, const void *buf, size_t len) {
    return shim_load_weights_buffer(m, buf, len);
}
int RLX_MTL(run)(rlx_model *m, const void *const *inputs, void *const *outputs) { return shim_run(m, inputs, outputs); }
void RLX_MTL(model_free)(rlx_model *m) { shim_free(m); }
const char *RLX_MTL(device_name)(const rlx_model *m) { return shim_device_name(m); }
}
#elif defined(RLX_SHIM_VK)
int rlx_vk_model_new(const rlx_gpu_schedule *s, rlx_model **out) { return shim_new(s, NULL, 0, NULL, out); }
int rlx_vk_load_weights(rlx_model *m, const char *path) { return shim_load_weights(m, path); }
int rlx_vk_load_weights_buffer(rlx_model *m, const void *buf, size_t len) { return shim_load_weights_buffer(m, buf, len); }
int rlx_vk_run(rlx_model *m, const void *const *inputs, void *const *outputs) { return shim_run(m, inputs, outputs); }
void rlx_vk_model_free(rlx_model *m) { shim_free(m); }
const char *rlx_vk_device_name(const rlx_model *m) { return shim_device_name(m); }
#else
#error "define RLX_MTL_PREFIX (the msl target's host) or RLX_SHIM_VK (spirv's, for spirv-cross's kernels)"
#endif
