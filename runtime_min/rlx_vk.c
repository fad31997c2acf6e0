/* rlx_vk.c - the Vulkan host: runs an rlx_gpu_schedule (rlx_gpu.h) on a
 * Vulkan device.
 *
 * The loader is opened with dlopen("libvulkan.so.1") (or $RLX_VK_LOADER)
 * and every entry point is resolved through vkGetInstanceProcAddr and
 * vkGetDeviceProcAddr; nothing links against libvulkan. So a model built
 * for Vulkan starts on any machine and reports RLX_E_NOLOADER where there is
 * no loader, instead of failing in the dynamic linker before main, and
 * `rlxc --build` links only -ldl for this host, never -lvulkan. The file is
 * part of librlxrt.a like every runtime source; a C-target model never
 * calls it, so the linker never pulls it in. Only the Vulkan headers are
 * needed to compile it; where they (or <dlfcn.h>) are missing, or with
 * -DRLX_NO_VULKAN or -DRLX_NO_STDIO, it compiles to functions that return
 * RLX_E_NOLOADER, so the library still builds for microcontrollers.
 *
 * rlx_vk_model_new:
 *   1. checks the tables (rlx_gpu_check without a device: RLX_E_ARG);
 *   2. opens the loader, creates an instance (Vulkan 1.1 or later), with a
 *      VK_EXT_debug_utils messenger when RLX_VK_DEBUG=1: every validation
 *      warning or error is then printed to stderr as one line starting
 *      "rlx_vk: validation: " (the only printing this runtime ever does);
 *   3. picks the first device that has a compute queue and Vulkan 1.1, or
 *      device RLX_VK_DEVICE=N (out of range or unusable: RLX_E_NODEVICE);
 *   4. fills an rlx_gpu_caps from its features and limits and checks the
 *      schedule against it (rlx_gpu_check: RLX_E_DEV_*); on lavapipe
 *      ("llvmpipe"), which silently stops a loop after 65535 iterations per
 *      invocation, a kernel with max_loop_trips >= 65535 is RLX_E_DEV_LOOPS;
 *   5. creates the device with exactly the features the schedule needs,
 *      one device-local storage buffer each for the arena (zeroed, as the C
 *      target's) and the weights, one host-visible staging buffer for the
 *      inputs and outputs, one descriptor set (binding 0 arena, binding 1
 *      weights), one pipeline per kernel with 128 bytes of push constants;
 *   6. records the whole run once into one command buffer:
 *
 *        barrier: everything the previous run did -> this run's copies
 *        zero the run's status word; copy staging -> arena, each input
 *        barrier: transfer writes -> compute
 *        for each dispatch: [barrier compute -> compute if its `barrier`]
 *                           bind its pipeline if it changed, push, dispatch
 *        barrier: compute writes -> transfer reads
 *        copy arena (or weights) -> staging, each output, and the status word
 *        barrier: transfer writes -> host reads
 *
 * rlx_vk_load_weights(_buffer) read and check the file with the runtime's
 * own loader (the C target's statuses), upload it once through a temporary
 * staging buffer and drop the host copy. rlx_vk_run copies the inputs into
 * the staging buffer, submits, waits on a fence and copies the outputs out;
 * it allocates nothing. A kernel that meets a data error (an index out of
 * range) stores its RLX_E_* in the run's status word (rlx_gpu.h); the run
 * then returns that status, as the C target's kernel would, and copies no
 * outputs. Every Vulkan failure is a status: RLX_E_DEV_NOMEM
 * for out of host or device memory, RLX_E_GPU for anything else.
 */
#include "rlx_gpu.h"

#if defined(RLX_NO_VULKAN) || defined(RLX_NO_STDIO)
#define RLX_VK_AVAILABLE 0
#elif defined(__has_include)
#if __has_include(<vulkan/vulkan.h>) && __has_include(<dlfcn.h>)
#define RLX_VK_AVAILABLE 1
#else
#define RLX_VK_AVAILABLE 0
#endif
#else
#define RLX_VK_AVAILABLE 1
#endif

#if !RLX_VK_AVAILABLE

int rlx_vk_model_new(const rlx_gpu_schedule *s, rlx_model **out) {
    (void)s;
    if (out) *out = NULL;
    return RLX_E_NOLOADER;
}
int rlx_vk_load_weights(rlx_model *m, const char *path) { (void)m, (void)path; return RLX_E_NOLOADER; }
int rlx_vk_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {
    (void)m, (void)buf, (void)len;
    return RLX_E_NOLOADER;
}
int rlx_vk_run(rlx_model *m, const void *const *inputs, void *const *outputs) {
    (void)m, (void)inputs, (void)outputs;
    return RLX_E_NOLOADER;
}
void rlx_vk_model_free(rlx_model *m) { (void)m; }
const char *rlx_vk_device_name(const rlx_model *m) { (void)m; return "device=none"; }

#else

#define VK_NO_PROTOTYPES   /* every entry point comes from the loader at run time */
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lavapipe's per-invocation loop limit (GPU.md) */
#define RLX_VK_LLVMPIPE_LOOP_CAP 65535u
#define RLX_VK_MIN_BUFFER 64u   /* Vulkan has no empty buffers */

/* Entry points, by the level they are resolved at. */
#define RLX_VK_GLOBAL_FNS(X) X(vkEnumerateInstanceVersion) X(vkEnumerateInstanceExtensionProperties) X(vkCreateInstance)
#define RLX_VK_INSTANCE_FNS(X)                                                                                  \
    X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties)                        \
    X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) X(vkGetPhysicalDeviceQueueFamilyProperties) \
    X(vkGetPhysicalDeviceMemoryProperties) X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice)           \
    X(vkGetDeviceProcAddr)
#define RLX_VK_DEVICE_FNS(X)                                                                                      \
    X(vkDestroyDevice) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements)   \
    X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory)                      \
    X(vkCreateDescriptorSetLayout) X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout)                      \
    X(vkDestroyPipelineLayout) X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateComputePipelines)       \
    X(vkDestroyPipeline) X(vkCreateDescriptorPool) X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets)         \
    X(vkUpdateDescriptorSets) X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers)          \
    X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkResetCommandBuffer) X(vkCmdBindPipeline)                    \
    X(vkCmdBindDescriptorSets) X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkCmdCopyBuffer)   \
    X(vkCmdFillBuffer) X(vkCreateFence) X(vkDestroyFence) X(vkResetFences) X(vkWaitForFences) X(vkQueueSubmit)     \
    X(vkDeviceWaitIdle)

typedef struct {
    PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
    PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
    PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
#define X(f) PFN_##f f;
    RLX_VK_GLOBAL_FNS(X) RLX_VK_INSTANCE_FNS(X) RLX_VK_DEVICE_FNS(X)
#undef X
} VkFns;

typedef struct {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map;   /* host-visible buffers only */
} VkHostBuffer;

typedef struct {
    const rlx_gpu_schedule *s;
    void *lib;
    VkFns fn;
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkPhysicalDeviceMemoryProperties memprops;
    VkDevice device;
    uint32_t queue_family;
    VkQueue queue;
    VkHostBuffer arena, weights, staging;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkDescriptorPool pool;
    VkDescriptorSet set;
    VkPipeline *pipelines;   /* one per kernel */
    VkCommandPool cmd_pool;
    VkCommandBuffer cmd_run, cmd_once;
    VkFence fence;
    uint64_t *staging_off;   /* inputs, then outputs: each tensor's offset in staging */
    uint64_t status_staging; /* the status word's offset in staging, after the outputs */
    int weights_loaded;
    int broken;              /* a submission failed: the device state is unknown */
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 16];
} VkHost;

static int vk_status(VkResult r) {
    if (r == VK_SUCCESS) return RLX_OK;
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY) return RLX_E_DEV_NOMEM;
    return RLX_E_GPU;
}

#define VK_TRY(call)                          \
    do {                                      \
        int st_ = vk_status(call);            \
        if (st_) return st_;                  \
    } while (0)

/* ---- the loader ---- */

static int open_loader(VkHost *h) {
    const char *name = getenv("RLX_VK_LOADER");
    h->lib = dlopen(name && *name ? name : "libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h->lib) return RLX_E_NOLOADER;
    /* POSIX guarantees that a dlsym result converts to a function pointer;
     * ISO C has no such cast, so copy the bits. */
    void *sym = dlsym(h->lib, "vkGetInstanceProcAddr");
    if (!sym) return RLX_E_NOLOADER;
    memcpy(&h->fn.vkGetInstanceProcAddr, &sym, sizeof h->fn.vkGetInstanceProcAddr);
#define X(f) h->fn.f = (PFN_##f)h->fn.vkGetInstanceProcAddr(NULL, #f);
    RLX_VK_GLOBAL_FNS(X)
#undef X
    /* vkEnumerateInstanceVersion is new in 1.1: a 1.0 loader is too old */
    if (!h->fn.vkEnumerateInstanceVersion || !h->fn.vkEnumerateInstanceExtensionProperties || !h->fn.vkCreateInstance)
        return RLX_E_NOLOADER;
    return RLX_OK;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT types,
                                                    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
    (void)user;
    /* The loader's own notes (general messages, such as "env var
     * VK_INSTANCE_LAYERS defined") are not about the host's use of the API:
     * only its errors count. */
    int error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
    if (types == VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT && !error) return VK_FALSE;
    /* one line, so that tests can grep for the prefix */
    char line[2048];
    int n = snprintf(line, sizeof line, "rlx_vk: validation: %s: %s",
                     error ? "error" : "warning",
                     data && data->pMessage ? data->pMessage : "(no message)");
    if (n < 0) return VK_FALSE;
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    fprintf(stderr, "%s\n", line);
    return VK_FALSE;
}

static int has_extension(const VkExtensionProperties *ext, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(ext[i].extensionName, name)) return 1;
    return 0;
}

static int instance_has_debug_utils(VkHost *h) {
    uint32_t n = 0;
    if (h->fn.vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS || !n) return 0;
    VkExtensionProperties *ext = malloc(sizeof *ext * n);
    if (!ext) return 0;
    int found = h->fn.vkEnumerateInstanceExtensionProperties(NULL, &n, ext) >= 0 &&
                has_extension(ext, n, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    free(ext);
    return found;
}

static int create_instance(VkHost *h) {
    uint32_t version = 0;
    VK_TRY(h->fn.vkEnumerateInstanceVersion(&version));
    if (version < VK_API_VERSION_1_1) return RLX_E_NOLOADER;
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "rlx";
    app.pEngineName = "rlx";
    /* 1.2 where the loader has it (8-bit storage and f16 arithmetic are core there) */
    app.apiVersion = version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
    const char *debug_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    const char *dbg = getenv("RLX_VK_DEBUG");
    int debug = dbg && !strcmp(dbg, "1") && instance_has_debug_utils(h);
    VkDebugUtilsMessengerCreateInfoEXT mi = {.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = debug_message;
    VkInstanceCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ii.pApplicationInfo = &app;
    if (debug) {
        ii.pNext = &mi;   /* also reports what vkCreateInstance and vkDestroyInstance see */
        ii.enabledExtensionCount = 1;
        ii.ppEnabledExtensionNames = &debug_ext;
    }
    VkResult r = h->fn.vkCreateInstance(&ii, NULL, &h->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER) return RLX_E_NODEVICE;   /* a loader without drivers */
    VK_TRY(r);
#define X(f) h->fn.f = (PFN_##f)h->fn.vkGetInstanceProcAddr(h->instance, #f);
    RLX_VK_INSTANCE_FNS(X)
#undef X
#define X(f) \
    if (!h->fn.f) return RLX_E_GPU;
    RLX_VK_INSTANCE_FNS(X)
#undef X
    if (debug) {
        h->fn.vkCreateDebugUtilsMessengerEXT = (PFN_vkCreateDebugUtilsMessengerEXT)h->fn.vkGetInstanceProcAddr(
            h->instance, "vkCreateDebugUtilsMessengerEXT");
        h->fn.vkDestroyDebugUtilsMessengerEXT = (PFN_vkDestroyDebugUtilsMessengerEXT)h->fn.vkGetInstanceProcAddr(
            h->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (!h->fn.vkCreateDebugUtilsMessengerEXT || !h->fn.vkDestroyDebugUtilsMessengerEXT) return RLX_E_GPU;
        VK_TRY(h->fn.vkCreateDebugUtilsMessengerEXT(h->instance, &mi, NULL, &h->messenger));
    }
    return RLX_OK;
}

/* ---- the device ---- */

/* What a device offers beyond Vulkan 1.1, and how to ask for it. */
typedef struct {
    uint32_t api;                /* min(instance, device) API version */
    int has_8bit_ext, has_f16_ext;   /* before 1.2: the extensions */
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceFeatures2 f2;
    VkPhysicalDevice16BitStorageFeatures f16bit;
    VkPhysicalDevice8BitStorageFeatures f8bit;
    VkPhysicalDeviceShaderFloat16Int8Features ff16;
    VkPhysicalDeviceSubgroupProperties subgroup;
    VkPhysicalDeviceMaintenance3Properties maint3;
} VkDeviceInfo;

static int compute_queue(VkHost *h, VkPhysicalDevice pd, uint32_t *family) {
    uint32_t n = 0;
    h->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties *q = malloc(sizeof *q * (n ? n : 1));
    if (!q) return RLX_E_NOMEM;
    h->fn.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    int st = RLX_E_NODEVICE;
    for (uint32_t i = 0; i < n; i++)
        if ((q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && q[i].queueCount) {
            *family = i;
            st = RLX_OK;
            break;
        }
    free(q);
    return st;
}

/* RLX_OK if pd can run the host at all: Vulkan 1.1 and a compute queue. */
static int usable_device(VkHost *h, VkPhysicalDevice pd, uint32_t *family) {
    VkPhysicalDeviceProperties p;
    h->fn.vkGetPhysicalDeviceProperties(pd, &p);
    if (p.apiVersion < VK_API_VERSION_1_1) return RLX_E_NODEVICE;
    return compute_queue(h, pd, family);
}

static int pick_device(VkHost *h) {
    uint32_t n = 0;
    VK_TRY(h->fn.vkEnumeratePhysicalDevices(h->instance, &n, NULL));
    if (!n) return RLX_E_NODEVICE;
    VkPhysicalDevice *pd = malloc(sizeof *pd * n);
    if (!pd) return RLX_E_NOMEM;
    VkResult r = h->fn.vkEnumeratePhysicalDevices(h->instance, &n, pd);
    if (r < 0) {
        free(pd);
        return vk_status(r);
    }
    const char *want = getenv("RLX_VK_DEVICE");
    int st = RLX_E_NODEVICE;
    if (want && *want) {
        char *end;
        long i = strtol(want, &end, 10);
        if (*end || i < 0) st = RLX_E_ARG;
        else if ((unsigned long)i < n && !(st = usable_device(h, pd[i], &h->queue_family))) h->phys = pd[i];
    } else {
        for (uint32_t i = 0; i < n && st; i++)
            if (!(st = usable_device(h, pd[i], &h->queue_family))) h->phys = pd[i];
    }
    free(pd);
    return st;
}

static int query_device(VkHost *h, VkDeviceInfo *d) {
    memset(d, 0, sizeof *d);
    h->fn.vkGetPhysicalDeviceProperties(h->phys, &d->props);
    uint32_t inst = VK_API_VERSION_1_1;
    uint32_t loader = 0;
    if (h->fn.vkEnumerateInstanceVersion(&loader) == VK_SUCCESS && loader >= VK_API_VERSION_1_2)
        inst = VK_API_VERSION_1_2;
    d->api = d->props.apiVersion < inst ? d->props.apiVersion : inst;
    if (d->api < VK_API_VERSION_1_2) {
        uint32_t n = 0;
        VK_TRY(h->fn.vkEnumerateDeviceExtensionProperties(h->phys, NULL, &n, NULL));
        VkExtensionProperties *ext = malloc(sizeof *ext * (n ? n : 1));
        if (!ext) return RLX_E_NOMEM;
        VkResult r = h->fn.vkEnumerateDeviceExtensionProperties(h->phys, NULL, &n, ext);
        if (r >= 0) {
            d->has_8bit_ext = has_extension(ext, n, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
            d->has_f16_ext = has_extension(ext, n, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
        }
        free(ext);
        if (r < 0) return vk_status(r);
    }
    /* features: chain only the structures this device knows */
    d->f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    d->f16bit.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    d->f8bit.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
    d->ff16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    d->f2.pNext = &d->f16bit;
    void **tail = &d->f16bit.pNext;
    if (d->api >= VK_API_VERSION_1_2 || d->has_8bit_ext) {
        *tail = &d->f8bit;
        tail = &d->f8bit.pNext;
    }
    if (d->api >= VK_API_VERSION_1_2 || d->has_f16_ext) *tail = &d->ff16;
    h->fn.vkGetPhysicalDeviceFeatures2(h->phys, &d->f2);
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    d->subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    d->maint3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    p2.pNext = &d->subgroup;
    d->subgroup.pNext = &d->maint3;
    h->fn.vkGetPhysicalDeviceProperties2(h->phys, &p2);
    d->subgroup.pNext = d->maint3.pNext = NULL;
    return RLX_OK;
}

static void device_caps(const VkDeviceInfo *d, rlx_gpu_caps *c) {
    const VkPhysicalDeviceLimits *l = &d->props.limits;
    memset(c, 0, sizeof *c);
    if (d->ff16.shaderFloat16) c->has |= RLX_GPU_NEED_F16_ARITH;
    if (d->f16bit.storageBuffer16BitAccess) c->has |= RLX_GPU_NEED_16BIT;
    if (d->f8bit.storageBuffer8BitAccess) c->has |= RLX_GPU_NEED_8BIT;
    if (d->f2.features.shaderInt64) c->has |= RLX_GPU_NEED_INT64;
    if (d->f2.features.shaderFloat64) c->has |= RLX_GPU_NEED_F64;
    const VkSubgroupFeatureFlags ops =
        VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    if ((d->subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) && (d->subgroup.supportedOperations & ops) == ops)
        c->has |= RLX_GPU_NEED_SUBGROUP;
    c->max_invocations = l->maxComputeWorkGroupInvocations;
    c->max_shared_bytes = l->maxComputeSharedMemorySize;
    for (int i = 0; i < 3; i++) {
        c->max_local[i] = l->maxComputeWorkGroupSize[i];
        c->max_groups[i] = l->maxComputeWorkGroupCount[i];
    }
    c->max_buffer_bytes = l->maxStorageBufferRange;
    if (d->maint3.maxMemoryAllocationSize && d->maint3.maxMemoryAllocationSize < c->max_buffer_bytes)
        c->max_buffer_bytes = d->maint3.maxMemoryAllocationSize;
    if (strstr(d->props.deviceName, "llvmpipe")) c->loop_cap = RLX_VK_LLVMPIPE_LOOP_CAP;
}

/* Creates the device with the features `needs` asks for and nothing more. */
static int create_device(VkHost *h, const VkDeviceInfo *d, uint32_t needs) {
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    VkPhysicalDevice16BitStorageFeatures f16bit = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDevice8BitStorageFeatures f8bit = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    VkPhysicalDeviceShaderFloat16Int8Features ff16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    const char *ext[2];
    uint32_t next = 0;
    void **tail = &f2.pNext;
    f2.features.shaderInt64 = (needs & RLX_GPU_NEED_INT64) ? VK_TRUE : VK_FALSE;
    f2.features.shaderFloat64 = (needs & RLX_GPU_NEED_F64) ? VK_TRUE : VK_FALSE;
    if (needs & RLX_GPU_NEED_16BIT) {
        f16bit.storageBuffer16BitAccess = VK_TRUE;
        *tail = &f16bit;
        tail = &f16bit.pNext;
    }
    if (needs & RLX_GPU_NEED_8BIT) {
        f8bit.storageBuffer8BitAccess = VK_TRUE;
        *tail = &f8bit;
        tail = &f8bit.pNext;
        if (d->api < VK_API_VERSION_1_2) ext[next++] = VK_KHR_8BIT_STORAGE_EXTENSION_NAME;
    }
    if (needs & RLX_GPU_NEED_F16_ARITH) {
        ff16.shaderFloat16 = VK_TRUE;
        *tail = &ff16;
        if (d->api < VK_API_VERSION_1_2) ext[next++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = h->queue_family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.pNext = &f2;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    di.enabledExtensionCount = next;
    di.ppEnabledExtensionNames = next ? ext : NULL;
    VK_TRY(h->fn.vkCreateDevice(h->phys, &di, NULL, &h->device));
#define X(f) \
    if (!(h->fn.f = (PFN_##f)h->fn.vkGetDeviceProcAddr(h->device, #f))) return RLX_E_GPU;
    RLX_VK_DEVICE_FNS(X)
#undef X
    h->fn.vkGetDeviceQueue(h->device, h->queue_family, 0, &h->queue);
    return RLX_OK;
}

/* ---- buffers ---- */

/* A memory type of `bits` with all of `want`, or -1. */
static int memory_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
        if (((bits >> i) & 1) && (mp->memoryTypes[i].propertyFlags & want) == want) return (int)i;
    return -1;
}

/* host: a mapped host-visible buffer (cached if there is one), else
 * device-local memory where there is some. */
static int create_buffer(VkHost *h, VkHostBuffer *b, uint64_t bytes, VkBufferUsageFlags usage, int host) {
    b->size = bytes < RLX_VK_MIN_BUFFER ? RLX_VK_MIN_BUFFER : bytes;
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = b->size;
    bi.usage = usage;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VK_TRY(h->fn.vkCreateBuffer(h->device, &bi, NULL, &b->buf));
    VkMemoryRequirements mr;
    h->fn.vkGetBufferMemoryRequirements(h->device, b->buf, &mr);
    const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = host ? memory_type(&h->memprops, mr.memoryTypeBits, coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                    : memory_type(&h->memprops, mr.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = memory_type(&h->memprops, mr.memoryTypeBits, host ? coherent : 0);
    if (type < 0) return RLX_E_GPU;
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = mr.size;
    ai.memoryTypeIndex = (uint32_t)type;
    VK_TRY(h->fn.vkAllocateMemory(h->device, &ai, NULL, &b->mem));
    VK_TRY(h->fn.vkBindBufferMemory(h->device, b->buf, b->mem, 0));
    if (host) VK_TRY(h->fn.vkMapMemory(h->device, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map));
    return RLX_OK;
}

static void destroy_buffer(VkHost *h, VkHostBuffer *b) {
    if (b->map) h->fn.vkUnmapMemory(h->device, b->mem);
    if (b->buf) h->fn.vkDestroyBuffer(h->device, b->buf, NULL);
    if (b->mem) h->fn.vkFreeMemory(h->device, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

/* ---- pipelines and commands ---- */

static int create_pipelines(VkHost *h) {
    const rlx_gpu_schedule *s = h->s;
    VkDescriptorSetLayoutBinding bind[2];
    memset(bind, 0, sizeof bind);
    for (uint32_t i = 0; i < 2; i++) {
        bind[i].binding = i;   /* 0: arena, 1: weights */
        bind[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bind[i].descriptorCount = 1;
        bind[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = 2;
    li.pBindings = bind;
    VK_TRY(h->fn.vkCreateDescriptorSetLayout(h->device, &li, NULL, &h->set_layout));
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, RLX_GPU_MAX_PUSH * 4};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &h->set_layout;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &push;
    VK_TRY(h->fn.vkCreatePipelineLayout(h->device, &pli, NULL, &h->layout));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
    VkDescriptorPoolCreateInfo dpi = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VK_TRY(h->fn.vkCreateDescriptorPool(h->device, &dpi, NULL, &h->pool));
    VkDescriptorSetAllocateInfo dai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = h->pool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &h->set_layout;
    VK_TRY(h->fn.vkAllocateDescriptorSets(h->device, &dai, &h->set));
    VkDescriptorBufferInfo dbi[2] = {{h->arena.buf, 0, VK_WHOLE_SIZE}, {h->weights.buf, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet wd = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    wd.dstSet = h->set;
    wd.descriptorCount = 2;
    wd.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    wd.pBufferInfo = dbi;
    h->fn.vkUpdateDescriptorSets(h->device, 1, &wd, 0, NULL);

    if (!s->nkernels) return RLX_OK;
    h->pipelines = calloc(s->nkernels, sizeof *h->pipelines);
    if (!h->pipelines) return RLX_E_NOMEM;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const rlx_gpu_kernel *kn = &s->kernels[k];
        uint32_t magic;
        memcpy(&magic, kn->code, sizeof magic);
        if (kn->code_bytes % 4 || kn->code_bytes < 20 || magic != 0x07230203u) return RLX_E_ARG;   /* not SPIR-V */
        VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        mi.codeSize = kn->code_bytes;
        mi.pCode = kn->code;
        VkShaderModule mod;
        VK_TRY(h->fn.vkCreateShaderModule(h->device, &mi, NULL, &mod));
        VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        ci.stage.module = mod;
        ci.stage.pName = "main";
        ci.layout = h->layout;
        VkResult r = h->fn.vkCreateComputePipelines(h->device, VK_NULL_HANDLE, 1, &ci, NULL, &h->pipelines[k]);
        h->fn.vkDestroyShaderModule(h->device, mod, NULL);
        VK_TRY(r);
    }
    return RLX_OK;
}

static void memory_barrier(VkHost *h, VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src,
                           VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src;
    mb.dstAccessMask = dst;
    h->fn.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

#define STAGE_WORK (VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT)
#define ACCESS_WRITES (VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT)
#define ACCESS_ALL                                                                   \
    (VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | \
     VK_ACCESS_TRANSFER_WRITE_BIT)

static int create_commands(VkHost *h) {
    VkCommandPoolCreateInfo cpi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = h->queue_family;
    VK_TRY(h->fn.vkCreateCommandPool(h->device, &cpi, NULL, &h->cmd_pool));
    VkCommandBuffer cb[2];
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = h->cmd_pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 2;
    VK_TRY(h->fn.vkAllocateCommandBuffers(h->device, &cai, cb));
    h->cmd_run = cb[0];
    h->cmd_once = cb[1];
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VK_TRY(h->fn.vkCreateFence(h->device, &fi, NULL, &h->fence));
    return RLX_OK;
}

/* Submits cb and waits for it. */
static int submit_wait(VkHost *h, VkCommandBuffer cb) {
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VkResult r = h->fn.vkQueueSubmit(h->queue, 1, &si, h->fence);
    if (r == VK_SUCCESS) r = h->fn.vkWaitForFences(h->device, 1, &h->fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS) r = h->fn.vkResetFences(h->device, 1, &h->fence);
    if (r != VK_SUCCESS) h->broken = 1;
    return vk_status(r);
}

/* Records the whole run into cmd_run (see the top of the file). */
static int record_run(VkHost *h) {
    const rlx_gpu_schedule *s = h->s;
    const rlx_model_info *info = s->info;
    VkCommandBuffer cb = h->cmd_run;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_TRY(h->fn.vkBeginCommandBuffer(cb, &bi));
    /* the previous run's reads and writes of the arena and the staging buffer
     * are done before this run's copies overwrite them */
    memory_barrier(h, cb, STAGE_WORK, ACCESS_WRITES, STAGE_WORK, ACCESS_ALL);
    h->fn.vkCmdFillBuffer(cb, h->arena.buf, s->status_offset, 4, 0);
    for (int i = 0; i < info->ninputs; i++) {
        if (!info->inputs[i].nbytes) continue;
        VkBufferCopy c = {h->staging_off[i], info->inputs[i].offset, info->inputs[i].nbytes};
        h->fn.vkCmdCopyBuffer(cb, h->staging.buf, h->arena.buf, 1, &c);
    }
    memory_barrier(h, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    h->fn.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, h->layout, 0, 1, &h->set, 0, NULL);
    uint32_t bound = UINT32_MAX;
    for (uint32_t i = 0; i < s->ndispatches; i++) {
        const rlx_gpu_dispatch *d = &s->dispatches[i];
        if (d->barrier)
            memory_barrier(h, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        if (d->kernel != bound) {
            h->fn.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, h->pipelines[d->kernel]);
            bound = d->kernel;
        }
        /* all 32 words: the words past npush are zero, and every word the
         * push-constant block declares is then defined */
        h->fn.vkCmdPushConstants(cb, h->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, RLX_GPU_MAX_PUSH * 4, d->push);
        h->fn.vkCmdDispatch(cb, d->groups[0], d->groups[1], d->groups[2]);
    }
    memory_barrier(h, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    for (int i = 0; i < info->noutputs; i++) {
        if (!info->outputs[i].nbytes) continue;
        int w = s->output_in_weights && s->output_in_weights[i];
        VkBufferCopy c = {info->outputs[i].offset, h->staging_off[info->ninputs + i], info->outputs[i].nbytes};
        h->fn.vkCmdCopyBuffer(cb, w ? h->weights.buf : h->arena.buf, h->staging.buf, 1, &c);
    }
    VkBufferCopy status = {s->status_offset, h->status_staging, 4};
    h->fn.vkCmdCopyBuffer(cb, h->arena.buf, h->staging.buf, 1, &status);
    memory_barrier(h, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                   VK_ACCESS_HOST_READ_BIT);
    VK_TRY(h->fn.vkEndCommandBuffer(cb));
    return RLX_OK;
}

/* Runs one command on cmd_once: zero the arena (src NULL) or copy `src`
 * into the weights through a temporary staging buffer. */
static int run_once(VkHost *h, const uint8_t *src, uint64_t bytes) {
    VkHostBuffer tmp = {0};
    int st = RLX_OK;
    if (src && (st = create_buffer(h, &tmp, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, 1))) goto done;
    if (src) memcpy(tmp.map, src, (size_t)bytes);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if ((st = vk_status(h->fn.vkResetCommandBuffer(h->cmd_once, 0)))) goto done;
    if ((st = vk_status(h->fn.vkBeginCommandBuffer(h->cmd_once, &bi)))) goto done;
    /* earlier runs' reads of the buffer are done before it is overwritten */
    memory_barrier(h, h->cmd_once, STAGE_WORK, ACCESS_WRITES, VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT);
    if (src) {
        VkBufferCopy c = {0, 0, bytes};
        h->fn.vkCmdCopyBuffer(h->cmd_once, tmp.buf, h->weights.buf, 1, &c);
    } else {
        h->fn.vkCmdFillBuffer(h->cmd_once, h->arena.buf, 0, VK_WHOLE_SIZE, 0);
    }
    memory_barrier(h, h->cmd_once, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, STAGE_WORK,
                   ACCESS_ALL);
    if ((st = vk_status(h->fn.vkEndCommandBuffer(h->cmd_once)))) goto done;
    st = submit_wait(h, h->cmd_once);
done:
    destroy_buffer(h, &tmp);
    return st;
}

/* ---- the API ---- */

static VkHost *host_of(const rlx_model *m) { return m ? (VkHost *)m->device : NULL; }

void rlx_vk_model_free(rlx_model *m) {
    VkHost *h = host_of(m);
    if (h) {
        if (h->device) {
            h->fn.vkDeviceWaitIdle(h->device);
            if (h->fence) h->fn.vkDestroyFence(h->device, h->fence, NULL);
            if (h->cmd_pool) h->fn.vkDestroyCommandPool(h->device, h->cmd_pool, NULL);
            if (h->pipelines)
                for (uint32_t k = 0; k < h->s->nkernels; k++)
                    if (h->pipelines[k]) h->fn.vkDestroyPipeline(h->device, h->pipelines[k], NULL);
            if (h->pool) h->fn.vkDestroyDescriptorPool(h->device, h->pool, NULL);
            if (h->layout) h->fn.vkDestroyPipelineLayout(h->device, h->layout, NULL);
            if (h->set_layout) h->fn.vkDestroyDescriptorSetLayout(h->device, h->set_layout, NULL);
            destroy_buffer(h, &h->staging);
            destroy_buffer(h, &h->weights);
            destroy_buffer(h, &h->arena);
            h->fn.vkDestroyDevice(h->device, NULL);
        }
        if (h->messenger) h->fn.vkDestroyDebugUtilsMessengerEXT(h->instance, h->messenger, NULL);
        if (h->instance) h->fn.vkDestroyInstance(h->instance, NULL);
        if (h->lib) dlclose(h->lib);
        free(h->pipelines);
        free(h->staging_off);
        free(h);
    }
    if (m) {
        free(m->weights_alloc);
        free(m);
    }
}

static int model_init(VkHost *h) {
    const rlx_gpu_schedule *s = h->s;
    const rlx_model_info *info = s->info;
    int st;
    if ((st = open_loader(h)) || (st = create_instance(h)) || (st = pick_device(h))) return st;
    VkDeviceInfo d;
    if ((st = query_device(h, &d))) return st;
    rlx_gpu_caps caps;
    device_caps(&d, &caps);
    if ((st = rlx_gpu_check(s, &caps))) return st;
    if (d.props.limits.maxPushConstantsSize < RLX_GPU_MAX_PUSH * 4) return RLX_E_GPU;   /* the spec's minimum */
    snprintf(h->name, sizeof h->name, "device=%s", d.props.deviceName);
    uint32_t needs = s->needs;
    for (uint32_t k = 0; k < s->nkernels; k++) needs |= s->kernels[k].needs;
    if ((st = create_device(h, &d, needs))) return st;
    h->fn.vkGetPhysicalDeviceMemoryProperties(h->phys, &h->memprops);
    /* staging: each input, then each output, at 64-byte aligned offsets */
    int n = info->ninputs + info->noutputs;
    h->staging_off = calloc((size_t)(n ? n : 1), sizeof *h->staging_off);
    if (!h->staging_off) return RLX_E_NOMEM;
    uint64_t staging = 0;
    for (int i = 0; i < n; i++) {
        const rlx_tensor_info *t = i < info->ninputs ? &info->inputs[i] : &info->outputs[i - info->ninputs];
        h->staging_off[i] = staging;
        if (t->nbytes > UINT64_MAX - staging - RLX_ALIGN) return RLX_E_ARG;
        staging += (t->nbytes + RLX_ALIGN - 1) / RLX_ALIGN * RLX_ALIGN;
    }
    h->status_staging = staging;
    staging += RLX_ALIGN;
    const VkBufferUsageFlags dev = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    /* the arena holds the run's status word after the planned bytes (rlx_gpu.h) */
    uint64_t arena = h->s->status_offset + 4 > info->arena_bytes ? h->s->status_offset + 4 : info->arena_bytes;
    if ((st = create_buffer(h, &h->arena, arena, dev, 0)) ||
        (st = create_buffer(h, &h->weights, info->weights_bytes, dev, 0)) ||
        (st = create_buffer(h, &h->staging, staging,
                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, 1)) ||
        (st = create_pipelines(h)) || (st = create_commands(h)) || (st = run_once(h, NULL, 0)) ||
        (st = record_run(h)))
        return st;
    return RLX_OK;
}

int rlx_vk_model_new(const rlx_gpu_schedule *s, rlx_model **out) {
    if (!out) return RLX_E_ARG;
    *out = NULL;
    int st = rlx_gpu_check(s, NULL);
    if (st) return st;
    rlx_model *m = calloc(1, sizeof *m);
    VkHost *h = calloc(1, sizeof *h);
    if (!m || !h) {
        free(m);
        free(h);
        return RLX_E_NOMEM;
    }
    m->info = s->info;
    m->device = h;
    m->ctx.nthreads = 1;
    h->s = s;
    if ((st = model_init(h))) {
        rlx_vk_model_free(m);
        return st;
    }
    *out = m;
    return RLX_OK;
}

/* Uploads what the runtime's loader left in m->weights, then drops it. */
static int upload_weights(rlx_model *m) {
    VkHost *h = host_of(m);
    int st = h->broken ? RLX_E_GPU : RLX_OK;
    if (!st && m->info->weights_bytes) st = run_once(h, m->weights, m->info->weights_bytes);
    h->weights_loaded = !st;
    free(m->weights_alloc);
    m->weights_alloc = NULL;
    m->weights = NULL;
    return st;
}

int rlx_vk_load_weights(rlx_model *m, const char *path) {
    if (!host_of(m)) return RLX_E_ARG;
    int st = rlx_load_weights_file(m, path);
    return st ? st : upload_weights(m);
}

int rlx_vk_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {
    if (!host_of(m)) return RLX_E_ARG;
    int st = rlx_load_weights_buffer(m, buf, len);
    return st ? st : upload_weights(m);
}

int rlx_vk_run(rlx_model *m, const void *const *inputs, void *const *outputs) {
    VkHost *h = host_of(m);
    if (!h) return RLX_E_ARG;
    const rlx_model_info *info = m->info;
    if ((info->ninputs && !inputs) || (info->noutputs && !outputs)) return RLX_E_ARG;
    if (!h->weights_loaded) return RLX_E_STATE;
    if (h->broken) return RLX_E_GPU;
    uint8_t *staging = h->staging.map;
    for (int i = 0; i < info->ninputs; i++) {
        if (!info->inputs[i].nbytes) continue;
        if (!inputs[i]) return RLX_E_ARG;
        memcpy(staging + h->staging_off[i], inputs[i], (size_t)info->inputs[i].nbytes);
    }
    for (int i = 0; i < info->noutputs; i++)
        if (info->outputs[i].nbytes && !outputs[i]) return RLX_E_ARG;
    int st = submit_wait(h, h->cmd_run);
    if (st) return st;
    uint32_t status;
    memcpy(&status, staging + h->status_staging, 4);
    if (status) return (int)status;
    for (int i = 0; i < info->noutputs; i++)
        if (info->outputs[i].nbytes)
            memcpy(outputs[i], staging + h->staging_off[info->ninputs + i], (size_t)info->outputs[i].nbytes);
    return RLX_OK;
}

const char *rlx_vk_device_name(const rlx_model *m) {
    VkHost *h = host_of(m);
    return h && h->name[0] ? h->name : "device=none";
}

#endif
