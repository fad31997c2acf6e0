/* vk_trace.c - a stand-in Vulkan loader for test_vk.c that records what the
 * host asks of Vulkan.
 *
 * Built as build/unit/libvktrace.so and named by RLX_VK_LOADER, it opens
 * the real loader (libvulkan.so.1) and hands every entry point through
 * unchanged, except that vkGetDeviceProcAddr returns wrappers for the calls
 * that make up the host's schedule: buffer creation and memory allocation,
 * command buffer begin/end, copies, fills, barriers, pipeline binds, push
 * constants, dispatches and submits. Each wrapper appends one line to a log
 * and calls the real function, so the model runs as it would without the
 * shim (validation layers included). test_vk.c reads the log through
 * rlx_vktrace_log to check what results on lavapipe cannot show: lavapipe
 * runs dispatches strictly one after another, so a missing barrier never
 * changes an output there, and the synchronization validation of the
 * layer this machine has does not see compute-to-compute hazards (GPU.md).
 *
 * Buffers and pipelines are logged by creation number (b0, b1, ...; p0,
 * p1, ...), command buffers by the order they are first begun (c0, c1).
 *
 * rlx_vktrace_fail_at(n) makes the n-th call (from then on) of those that
 * return a VkResult fail instead of reaching the driver: out of host or
 * device memory for creation, allocation and recording, device lost for a
 * submission, as a driver may answer. The test walks n over every such
 * call of a model's life to see each failure become a status, with
 * nothing left behind.
 */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void *real_lib;
static PFN_vkGetInstanceProcAddr real_gipa;
static PFN_vkGetDeviceProcAddr real_gdpa;

#define TRACED(X)                                                                                                 \
    X(vkCreateBuffer) X(vkAllocateMemory) X(vkCreateComputePipelines) X(vkBeginCommandBuffer) X(vkEndCommandBuffer) \
    X(vkCmdCopyBuffer) X(vkCmdFillBuffer) X(vkCmdPipelineBarrier) X(vkCmdBindPipeline) X(vkCmdPushConstants)        \
    X(vkCmdDispatch) X(vkQueueSubmit)
#define X(f) static PFN_##f real_##f;
TRACED(X)
#undef X

static char trace[1 << 20];
static size_t trace_len;

const char *rlx_vktrace_log(void) { return trace; }
void rlx_vktrace_reset(void) { trace_len = 0, trace[0] = 0; }

static long fail_at, calls;
void rlx_vktrace_fail_at(long n) { fail_at = n, calls = 0; }
long rlx_vktrace_calls(void) { return calls; }

static void note(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(trace + trace_len, sizeof trace - trace_len, fmt, ap);
    va_end(ap);
    if (n > 0 && trace_len + (size_t)n < sizeof trace) trace_len += (size_t)n;
}

/* Counts a call that returns a VkResult: 1 if this one is to fail. */
static int failing(const char *fn) {
    if (++calls != fail_at) return 0;
    note("fail %s\n", fn);
    return 1;
}

/* handle -> creation number */
typedef struct { uint64_t h[256]; int n; } Ids;
static Ids buffers, pipelines, cmdbufs;
static int id_of(Ids *ids, uint64_t h) {
    for (int i = 0; i < ids->n; i++)
        if (ids->h[i] == h) return i;
    if (ids->n == 256) return -1;
    ids->h[ids->n] = h;
    return ids->n++;
}
static uint64_t handle_bits(const void *p, size_t n) {
    uint64_t h = 0;
    memcpy(&h, p, n < sizeof h ? n : sizeof h);
    return h;
}
#define ID(ids, x) id_of(&(ids), handle_bits(&(x), sizeof(x)))

static VKAPI_ATTR VkResult VKAPI_CALL t_vkCreateBuffer(VkDevice d, const VkBufferCreateInfo *ci,
                                                       const VkAllocationCallbacks *a, VkBuffer *b) {
    if (failing("vkCreateBuffer")) return VK_ERROR_OUT_OF_HOST_MEMORY;
    VkResult r = real_vkCreateBuffer(d, ci, a, b);
    if (r == VK_SUCCESS)
        note("buffer b%d %llu %u\n", ID(buffers, *b), (unsigned long long)ci->size, (unsigned)ci->usage);
    return r;
}
static VKAPI_ATTR VkResult VKAPI_CALL t_vkAllocateMemory(VkDevice d, const VkMemoryAllocateInfo *ai,
                                                         const VkAllocationCallbacks *a, VkDeviceMemory *m) {
    if (failing("vkAllocateMemory")) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    note("alloc %llu\n", (unsigned long long)ai->allocationSize);
    return real_vkAllocateMemory(d, ai, a, m);
}
static VKAPI_ATTR VkResult VKAPI_CALL t_vkCreateComputePipelines(VkDevice d, VkPipelineCache c, uint32_t n,
                                                                 const VkComputePipelineCreateInfo *ci,
                                                                 const VkAllocationCallbacks *a, VkPipeline *p) {
    if (failing("vkCreateComputePipelines")) {
        for (uint32_t i = 0; i < n; i++) p[i] = VK_NULL_HANDLE;
        return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    VkResult r = real_vkCreateComputePipelines(d, c, n, ci, a, p);
    for (uint32_t i = 0; r == VK_SUCCESS && i < n; i++) note("pipeline p%d\n", ID(pipelines, p[i]));
    return r;
}
static VKAPI_ATTR VkResult VKAPI_CALL t_vkBeginCommandBuffer(VkCommandBuffer cb, const VkCommandBufferBeginInfo *bi) {
    if (failing("vkBeginCommandBuffer")) return VK_ERROR_OUT_OF_HOST_MEMORY;
    note("begin c%d\n", ID(cmdbufs, cb));
    return real_vkBeginCommandBuffer(cb, bi);
}
static VKAPI_ATTR VkResult VKAPI_CALL t_vkEndCommandBuffer(VkCommandBuffer cb) {
    if (failing("vkEndCommandBuffer")) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    note("end c%d\n", ID(cmdbufs, cb));
    return real_vkEndCommandBuffer(cb);
}
static VKAPI_ATTR void VKAPI_CALL t_vkCmdCopyBuffer(VkCommandBuffer cb, VkBuffer src, VkBuffer dst, uint32_t n,
                                                    const VkBufferCopy *r) {
    for (uint32_t i = 0; i < n; i++)
        note("copy b%d b%d %llu %llu %llu\n", ID(buffers, src), ID(buffers, dst), (unsigned long long)r[i].srcOffset,
             (unsigned long long)r[i].dstOffset, (unsigned long long)r[i].size);
    real_vkCmdCopyBuffer(cb, src, dst, n, r);
}
static VKAPI_ATTR void VKAPI_CALL t_vkCmdFillBuffer(VkCommandBuffer cb, VkBuffer b, VkDeviceSize off, VkDeviceSize size,
                                                    uint32_t v) {
    note("fill b%d %llu %llu %u\n", ID(buffers, b), (unsigned long long)off, (unsigned long long)size, v);
    real_vkCmdFillBuffer(cb, b, off, size, v);
}
static VKAPI_ATTR void VKAPI_CALL t_vkCmdPipelineBarrier(VkCommandBuffer cb, VkPipelineStageFlags src,
                                                         VkPipelineStageFlags dst, VkDependencyFlags dep, uint32_t nm,
                                                         const VkMemoryBarrier *m, uint32_t nb,
                                                         const VkBufferMemoryBarrier *b, uint32_t ni,
                                                         const VkImageMemoryBarrier *im) {
    /* stages, then the union of the access masks of its memory barriers */
    unsigned sa = 0, da = 0;
    for (uint32_t i = 0; i < nm; i++) sa |= m[i].srcAccessMask, da |= m[i].dstAccessMask;
    for (uint32_t i = 0; i < nb; i++) sa |= b[i].srcAccessMask, da |= b[i].dstAccessMask;
    note("barrier %u %u %u %u\n", (unsigned)src, (unsigned)dst, sa, da);
    real_vkCmdPipelineBarrier(cb, src, dst, dep, nm, m, nb, b, ni, im);
}
static VKAPI_ATTR void VKAPI_CALL t_vkCmdBindPipeline(VkCommandBuffer cb, VkPipelineBindPoint bp, VkPipeline p) {
    note("bind p%d\n", ID(pipelines, p));
    real_vkCmdBindPipeline(cb, bp, p);
}
static VKAPI_ATTR void VKAPI_CALL t_vkCmdPushConstants(VkCommandBuffer cb, VkPipelineLayout l, VkShaderStageFlags st,
                                                       uint32_t off, uint32_t size, const void *v) {
    const uint32_t *w = v;
    note("push %u %u %u %u %u %u\n", off, size, size > 0 ? w[0] : 0, size > 4 ? w[1] : 0, size > 8 ? w[2] : 0,
         size > 12 ? w[3] : 0);
    real_vkCmdPushConstants(cb, l, st, off, size, v);
}
static VKAPI_ATTR void VKAPI_CALL t_vkCmdDispatch(VkCommandBuffer cb, uint32_t x, uint32_t y, uint32_t z) {
    note("dispatch %u %u %u\n", x, y, z);
    real_vkCmdDispatch(cb, x, y, z);
}
static VKAPI_ATTR VkResult VKAPI_CALL t_vkQueueSubmit(VkQueue q, uint32_t n, const VkSubmitInfo *si, VkFence f) {
    if (failing("vkQueueSubmit")) return VK_ERROR_DEVICE_LOST;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < si[i].commandBufferCount; j++)
            note("submit c%d\n", ID(cmdbufs, si[i].pCommandBuffers[j]));
    return real_vkQueueSubmit(q, n, si, f);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL t_vkGetDeviceProcAddr(VkDevice d, const char *name) {
    PFN_vkVoidFunction f = real_gdpa(d, name);
    if (!f) return f;
#define X(fn)                             \
    if (!strcmp(name, #fn)) {             \
        real_##fn = (PFN_##fn)f;          \
        return (PFN_vkVoidFunction)t_##fn; \
    }
    TRACED(X)
#undef X
    return f;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance inst, const char *name) {
    if (!real_lib) {
        real_lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        void *sym = real_lib ? dlsym(real_lib, "vkGetInstanceProcAddr") : NULL;
        if (!sym) return NULL;
        memcpy(&real_gipa, &sym, sizeof real_gipa);
    }
    if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)vkGetInstanceProcAddr;
    PFN_vkVoidFunction f = real_gipa(inst, name);
    if (f && !strcmp(name, "vkGetDeviceProcAddr")) {
        real_gdpa = (PFN_vkGetDeviceProcAddr)f;
        return (PFN_vkVoidFunction)t_vkGetDeviceProcAddr;
    }
    return f;
}
