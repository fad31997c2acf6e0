/* rlx_cuda.c - the CUDA host: runs an rlx_gpu_schedule (rlx_gpu.h) on an
 * NVIDIA GPU through the CUDA driver API.
 *
 * The driver is opened with dlopen("libcuda.so.1") (or $RLX_LIBCUDA) and
 * every entry point comes from cuGetProcAddress_v2 (drivers of CUDA 12.0
 * and later) at the ABI of CUDA 12.0, whose prototypes are declared here:
 * no CUDA header is needed to compile this file and nothing links against
 * libcuda, so a model built for CUDA starts on any machine and reports
 * RLX_E_NOLOADER where there is no driver, instead of failing in the
 * dynamic linker. `rlxc --build` links -ldl for this host. The file is part
 * of librlxrt.a like every runtime source; a model of another target never
 * calls it. Without <dlfcn.h>, or with -DRLX_NO_CUDA or -DRLX_NO_STDIO, it
 * compiles to functions that return RLX_E_NOLOADER.
 *
 * rlx_cuda_model_new:
 *   1. checks the tables (rlx_gpu_check without a device: RLX_E_ARG);
 *   2. opens the driver, cuInit: no library, the toolkit's stub library or
 *      a driver older than 12.0 is RLX_E_NOLOADER; no device, or device
 *      RLX_CUDA_DEVICE=N (default 0) out of range, RLX_E_NODEVICE;
 *   3. fills an rlx_gpu_caps from the device's attributes and checks the
 *      schedule (rlx_gpu_check: RLX_E_DEV_*); a device whose compute
 *      capability is below the PTX's (rlx_cuda_module.arch) cannot run the
 *      module: RLX_E_NODEVICE;
 *   4. retains the device's primary context (the one the CUDA runtime API
 *      uses too) and loads the module once: the cubin if there is one for
 *      this device's major version and a minor no newer than its own, else
 *      the PTX, which the driver compiles for the device. A driver older
 *      than the PTX is RLX_E_PTX_VERSION (update the driver, or build with
 *      --cuda-cubin for the device); then every kernel's function, whose
 *      largest block (after register allocation) must hold the kernel's;
 *   5. allocates one arena (zeroed, as the C target's, with the run's
 *      status word after the planned bytes) and one weights buffer with
 *      cuMemAlloc (out of memory: RLX_E_DEV_NOMEM), and a stream;
 *   6. captures the run once into a CUDA graph on that stream:
 *
 *        zero the status word
 *        for each dispatch: cuLaunchKernel(kernel, grid, block,
 *                                          arena, weights, push)
 *
 *      (launches on one stream run in order, so the schedule's barriers
 *      hold without anything more), and instantiates it.
 *
 * rlx_cuda_load_weights(_buffer) read and check the file with the runtime's
 * own loader (the C target's statuses), copy it to the device once and
 * drop the host copy. rlx_cuda_run copies the inputs in, launches the
 * graph, copies the outputs and the status word out, and waits for the
 * stream; it allocates nothing and returns the status word (RLX_E_RANGE
 * for a Gather index out of range) or RLX_OK. rlx_cuda_set_stream moves the
 * runs onto the caller's stream. Every call pushes the primary context and
 * pops it again, leaving the calling thread's current context as it was.
 * Any other failure of the driver is RLX_E_GPU; after a failed run the
 * model only returns RLX_E_GPU (the device's state is unknown).
 */
#include "rlx_gpu.h"

#if defined(RLX_NO_CUDA) || defined(RLX_NO_STDIO)
#define RLX_CUDA_AVAILABLE 0
#elif defined(__has_include)
#if __has_include(<dlfcn.h>)
#define RLX_CUDA_AVAILABLE 1
#else
#define RLX_CUDA_AVAILABLE 0
#endif
#else
#define RLX_CUDA_AVAILABLE 1
#endif

#if !RLX_CUDA_AVAILABLE

int rlx_cuda_model_new(const rlx_cuda_module *mod, rlx_model **out) {
    (void)mod;
    if (out) *out = NULL;
    return RLX_E_NOLOADER;
}
int rlx_cuda_load_weights(rlx_model *m, const char *path) { (void)m, (void)path; return RLX_E_NOLOADER; }
int rlx_cuda_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {
    (void)m, (void)buf, (void)len;
    return RLX_E_NOLOADER;
}
int rlx_cuda_run(rlx_model *m, const void *const *inputs, void *const *outputs) {
    (void)m, (void)inputs, (void)outputs;
    return RLX_E_NOLOADER;
}
void rlx_cuda_model_free(rlx_model *m) { (void)m; }
int rlx_cuda_set_stream(rlx_model *m, void *stream) { (void)m, (void)stream; return RLX_E_NOLOADER; }
const char *rlx_cuda_device_name(const rlx_model *m) { (void)m; return "device=none"; }

#else

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the driver API, as of CUDA 12.0 ---- */

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222
};
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
};
enum { CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0 };
enum { CU_STREAM_NON_BLOCKING = 1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1 };
enum { CU_GET_PROC_ADDRESS_DEFAULT = 0, CU_GET_PROC_ADDRESS_SUCCESS = 0 };
#define RLX_CUDA_ABI 12000   /* the version cuGetProcAddress resolves each entry point at */

/* X(name, arguments) - every entry point returns CUresult */
#define RLX_CU_FNS(X)                                                                                      \
    X(cuInit, (unsigned))                                                                                  \
    X(cuDriverGetVersion, (int *))                                                                         \
    X(cuDeviceGetCount, (int *))                                                                           \
    X(cuDeviceGet, (CUdevice *, int))                                                                      \
    X(cuDeviceGetAttribute, (int *, int, CUdevice))                                                        \
    X(cuDeviceGetName, (char *, int, CUdevice))                                                            \
    X(cuDeviceTotalMem, (size_t *, CUdevice))                                                              \
    X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                                                   \
    X(cuDevicePrimaryCtxRelease, (CUdevice))                                                               \
    X(cuCtxPushCurrent, (CUcontext))                                                                       \
    X(cuCtxPopCurrent, (CUcontext *))                                                                      \
    X(cuModuleLoadData, (CUmodule *, const void *))                                                        \
    X(cuModuleUnload, (CUmodule))                                                                          \
    X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))                                         \
    X(cuFuncGetAttribute, (int *, int, CUfunction))                                                        \
    X(cuMemAlloc, (CUdeviceptr *, size_t))                                                                 \
    X(cuMemFree, (CUdeviceptr))                                                                            \
    X(cuMemsetD8, (CUdeviceptr, unsigned char, size_t))                                                    \
    X(cuMemsetD32Async, (CUdeviceptr, unsigned, size_t, CUstream))                                         \
    X(cuMemcpyHtoD, (CUdeviceptr, const void *, size_t))                                                   \
    X(cuMemcpyHtoDAsync, (CUdeviceptr, const void *, size_t, CUstream))                                    \
    X(cuMemcpyDtoHAsync, (void *, CUdeviceptr, size_t, CUstream))                                          \
    X(cuStreamCreate, (CUstream *, unsigned))                                                              \
    X(cuStreamDestroy, (CUstream))                                                                         \
    X(cuStreamSynchronize, (CUstream))                                                                     \
    X(cuStreamBeginCapture, (CUstream, int))                                                               \
    X(cuStreamEndCapture, (CUstream, CUgraph *))                                                           \
    X(cuGraphInstantiateWithFlags, (CUgraphExec *, CUgraph, unsigned long long))                           \
    X(cuGraphDestroy, (CUgraph))                                                                           \
    X(cuGraphExecDestroy, (CUgraphExec))                                                                   \
    X(cuGraphLaunch, (CUgraphExec, CUstream))                                                              \
    X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                       CUstream, void **, void **))

typedef CUresult (*CuGetProcAddress)(const char *, void **, int, unsigned long long, int *);

typedef struct {
#define X(name, args) CUresult(*name) args;
    RLX_CU_FNS(X)
#undef X
} CuFns;

/* the kernel's last parameter: push.off[i], operand i's element offset */
typedef struct {
    uint32_t off[RLX_GPU_MAX_PUSH];
} CuPush;

typedef struct {
    const rlx_cuda_module *mod;
    const rlx_gpu_schedule *s;   /* mod->schedule */
    void *lib;
    CuFns fn;
    CUdevice dev;
    int cc;                  /* compute capability * 10 + minor: 90 */
    CUcontext ctx;           /* the primary context, retained */
    CUmodule module;
    CUfunction *fns;         /* one per kernel */
    CUdeviceptr arena, weights;
    CUstream own, stream;    /* the host's stream; the one runs go on */
    CUgraphExec graph;
    uint32_t status;         /* the run's status word, copied out */
    int weights_loaded;
    int broken;              /* a run failed: the device state is unknown */
    char name[300];
} CuHost;

/* A failed driver call's status. */
static int cu_status(CUresult r) {
    if (r == CUDA_SUCCESS) return RLX_OK;
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return RLX_E_DEV_NOMEM;
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) return RLX_E_PTX_VERSION;
    return RLX_E_GPU;
}

#define CU_TRY(call)                    \
    do {                                \
        int st_ = cu_status(call);      \
        if (st_) return st_;            \
    } while (0)

/* ---- the driver ---- */

static int open_driver(CuHost *h) {
    const char *name = getenv("RLX_LIBCUDA");
    h->lib = dlopen(name && *name ? name : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h->lib) return RLX_E_NOLOADER;
    /* POSIX guarantees that a dlsym result converts to a function pointer;
     * ISO C has no such cast, so copy the bits. */
    void *sym = dlsym(h->lib, "cuGetProcAddress_v2");
    if (!sym) return RLX_E_NOLOADER;   /* a driver older than CUDA 12.0 */
    CuGetProcAddress gpa;
    memcpy(&gpa, &sym, sizeof gpa);
#define X(fname, args)                                                                                     \
    {                                                                                                      \
        void *p = NULL;                                                                                    \
        int found = -1;                                                                                    \
        CUresult r = gpa(#fname, &p, RLX_CUDA_ABI, CU_GET_PROC_ADDRESS_DEFAULT, &found);                   \
        if (r == CUDA_ERROR_STUB_LIBRARY) return RLX_E_NOLOADER; /* the toolkit's stub, not a driver */   \
        if (r || !p || found != CU_GET_PROC_ADDRESS_SUCCESS) return RLX_E_NOLOADER;                       \
        memcpy(&h->fn.fname, &p, sizeof h->fn.fname);                                                      \
    }
    RLX_CU_FNS(X)
#undef X
    CUresult r = h->fn.cuInit(0);
    if (r == CUDA_ERROR_STUB_LIBRARY || r == CUDA_ERROR_INSUFFICIENT_DRIVER) return RLX_E_NOLOADER;
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return RLX_E_DEV_NOMEM;
    if (r) return RLX_E_NODEVICE;   /* no device, or none the driver can use */
    return RLX_OK;
}

static int pick_device(CuHost *h) {
    int n = 0, want = 0;
    CUresult r = h->fn.cuDeviceGetCount(&n);
    if (r == CUDA_ERROR_NO_DEVICE || (!r && n <= 0)) return RLX_E_NODEVICE;
    CU_TRY(r);
    const char *env = getenv("RLX_CUDA_DEVICE");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end || v < 0 || v >= n) return RLX_E_NODEVICE;
        want = (int)v;
    }
    r = h->fn.cuDeviceGet(&h->dev, want);
    if (r == CUDA_ERROR_INVALID_DEVICE || r == CUDA_ERROR_NO_DEVICE) return RLX_E_NODEVICE;
    return cu_status(r);
}

static int attribute(CuHost *h, int which, uint32_t *out) {
    int v = 0;
    CU_TRY(h->fn.cuDeviceGetAttribute(&v, which, h->dev));
    *out = v > 0 ? (uint32_t)v : 0;
    return RLX_OK;
}

/* What the device offers, in the schedule's terms. */
static int device_caps(CuHost *h, rlx_gpu_caps *caps) {
    memset(caps, 0, sizeof *caps);
    uint32_t major, minor, warp;
    int st;
    if ((st = attribute(h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major)) ||
        (st = attribute(h, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor)) ||
        (st = attribute(h, CU_DEVICE_ATTRIBUTE_WARP_SIZE, &warp)) ||
        (st = attribute(h, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &caps->max_invocations)) ||
        (st = attribute(h, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &caps->max_shared_bytes)))
        return st;
    for (int d = 0; d < 3; d++)
        if ((st = attribute(h, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + d, &caps->max_local[d])) ||
            (st = attribute(h, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d, &caps->max_groups[d])))
            return st;
    size_t total = 0;
    CU_TRY(h->fn.cuDeviceTotalMem(&total, h->dev));
    caps->max_buffer_bytes = total;
    h->cc = (int)(major * 10 + minor);
    /* every part CUDA 12 supports (5.0 and later) stores 8 and 16 bits and
     * computes in int64 and f64; half arithmetic from 5.3; warps of 32 */
    caps->has = RLX_GPU_NEED_16BIT | RLX_GPU_NEED_8BIT | RLX_GPU_NEED_INT64 | RLX_GPU_NEED_F64;
    if (h->cc >= 53) caps->has |= RLX_GPU_NEED_F16_ARITH;
    if (warp == 32) caps->has |= RLX_GPU_NEED_SUBGROUP;
    caps->loop_cap = 0;
    return RLX_OK;
}

/* The cubin where this device runs it (same major version, minor no newer
 * than the device's), else the PTX. */
static int load_module(CuHost *h) {
    const rlx_gpu_schedule *s = h->s;
    int arch = (int)h->mod->arch;
    if (h->mod->cubin && h->mod->cubin_bytes && arch / 10 == h->cc / 10 && arch <= h->cc) {
        CUresult r = h->fn.cuModuleLoadData(&h->module, h->mod->cubin);
        if (!r) return RLX_OK;
        if (r != CUDA_ERROR_NO_BINARY_FOR_GPU && r != CUDA_ERROR_INVALID_IMAGE) return cu_status(r);
        h->module = NULL;   /* refused: try the PTX */
    }
    const char *ptx = s->kernels[0].code;
    size_t n = s->kernels[0].code_bytes;
    if (!n || ptx[n - 1] != 0) return RLX_E_ARG;   /* the PTX is a NUL-terminated string */
    for (uint32_t k = 1; k < s->nkernels; k++)
        if (s->kernels[k].code != s->kernels[0].code) return RLX_E_ARG;   /* one module */
    return cu_status(h->fn.cuModuleLoadData(&h->module, ptx));
}

static int get_functions(CuHost *h) {
    const rlx_gpu_schedule *s = h->s;
    h->fns = calloc(s->nkernels, sizeof *h->fns);
    if (!h->fns) return RLX_E_NOMEM;
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const rlx_gpu_kernel *kn = &s->kernels[k];
        if (!kn->name || h->fn.cuModuleGetFunction(&h->fns[k], h->module, kn->name)) return RLX_E_ARG;
        int most = 0;
        CU_TRY(h->fn.cuFuncGetAttribute(&most, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, h->fns[k]));
        if ((uint64_t)kn->local[0] * kn->local[1] * kn->local[2] > (uint64_t)(most > 0 ? most : 0))
            return RLX_E_DEV_WGSIZE;
    }
    return RLX_OK;
}

/* Captures the run into h->graph (see the top of the file). */
static int capture(CuHost *h) {
    const rlx_gpu_schedule *s = h->s;
    CU_TRY(h->fn.cuStreamBeginCapture(h->own, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CUresult r = h->fn.cuMemsetD32Async(h->arena + s->status_offset, 0, 1, h->own);
    for (uint32_t i = 0; i < s->ndispatches && !r; i++) {
        const rlx_gpu_dispatch *d = &s->dispatches[i];
        const rlx_gpu_kernel *kn = &s->kernels[d->kernel];
        CuPush push;
        memset(&push, 0, sizeof push);
        memcpy(push.off, d->push, sizeof(uint32_t) * d->npush);
        void *params[] = {&h->arena, &h->weights, &push};   /* copied into the graph's node */
        r = h->fn.cuLaunchKernel(h->fns[d->kernel], d->groups[0], d->groups[1], d->groups[2], kn->local[0],
                                 kn->local[1], kn->local[2], 0, h->own, params, NULL);
    }
    CUgraph g = NULL;
    CUresult e = h->fn.cuStreamEndCapture(h->own, &g);   /* ends the capture even after a failed launch */
    if (!r) r = e;
    if (!r) r = h->fn.cuGraphInstantiateWithFlags(&h->graph, g, 0);
    if (g) h->fn.cuGraphDestroy(g);
    return cu_status(r);
}

/* ---- the API ---- */

static CuHost *host_of(const rlx_model *m) { return m ? (CuHost *)m->device : NULL; }

/* The primary context current on this thread for the call, as it was after. */
static int enter(CuHost *h) { return cu_status(h->fn.cuCtxPushCurrent(h->ctx)); }
static void leave(CuHost *h) {
    CUcontext c;
    h->fn.cuCtxPopCurrent(&c);
}

void rlx_cuda_model_free(rlx_model *m) {
    CuHost *h = host_of(m);
    if (h) {
        if (h->ctx && !enter(h)) {
            if (h->stream) h->fn.cuStreamSynchronize(h->stream);
            if (h->graph) h->fn.cuGraphExecDestroy(h->graph);
            if (h->own) h->fn.cuStreamDestroy(h->own);
            if (h->weights) h->fn.cuMemFree(h->weights);
            if (h->arena) h->fn.cuMemFree(h->arena);
            if (h->module) h->fn.cuModuleUnload(h->module);
            leave(h);
        }
        if (h->ctx) h->fn.cuDevicePrimaryCtxRelease(h->dev);
        if (h->lib) dlclose(h->lib);
        free(h->fns);
        free(h);
    }
    if (m) {
        free(m->weights_alloc);
        free(m);
    }
}

/* a buffer of at least 256 bytes (the driver has no empty allocations) */
static int device_alloc(CuHost *h, CUdeviceptr *p, uint64_t bytes) {
    if (bytes > (uint64_t)(size_t)-1 - 256) return RLX_E_DEV_NOMEM;
    return cu_status(h->fn.cuMemAlloc(p, bytes < 256 ? 256 : (size_t)bytes));
}

static int model_init(CuHost *h) {
    const rlx_gpu_schedule *s = h->s;
    const rlx_model_info *info = s->info;
    int st;
    if ((st = open_driver(h)) || (st = pick_device(h))) return st;
    rlx_gpu_caps caps;
    if ((st = device_caps(h, &caps)) || (st = rlx_gpu_check(s, &caps))) return st;
    if (h->cc < (int)h->mod->arch) return RLX_E_NODEVICE;   /* older than the module's architecture */
    char dev[256];
    if (h->fn.cuDeviceGetName(dev, (int)sizeof dev, h->dev)) snprintf(dev, sizeof dev, "CUDA device");
    dev[sizeof dev - 1] = 0;
    snprintf(h->name, sizeof h->name, "device=%s (sm_%d)", dev, h->cc);
    CU_TRY(h->fn.cuDevicePrimaryCtxRetain(&h->ctx, h->dev));
    if ((st = enter(h))) return st;
    /* the arena holds the run's status word after the planned bytes (rlx_gpu.h) */
    uint64_t arena = s->status_offset + 4 > info->arena_bytes ? s->status_offset + 4 : info->arena_bytes;
    if (!s->nkernels) st = RLX_OK;
    else if (!(st = load_module(h))) st = get_functions(h);
    if (!st) st = device_alloc(h, &h->arena, arena);
    if (!st) st = device_alloc(h, &h->weights, info->weights_bytes);
    if (!st) st = cu_status(h->fn.cuMemsetD8(h->arena, 0, (size_t)arena));
    if (!st) st = cu_status(h->fn.cuStreamCreate(&h->own, CU_STREAM_NON_BLOCKING));
    if (!st) {
        h->stream = h->own;
        st = capture(h);
    }
    leave(h);
    return st;
}

int rlx_cuda_model_new(const rlx_cuda_module *mod, rlx_model **out) {
    if (!out) return RLX_E_ARG;
    *out = NULL;
    if (!mod) return RLX_E_ARG;
    const rlx_gpu_schedule *s = mod->schedule;
    int st = rlx_gpu_check(s, NULL);
    if (st) return st;
    rlx_model *m = calloc(1, sizeof *m);
    CuHost *h = calloc(1, sizeof *h);
    if (!m || !h) {
        free(m);
        free(h);
        return RLX_E_NOMEM;
    }
    m->info = s->info;
    m->device = h;
    m->ctx.nthreads = 1;
    h->mod = mod;
    h->s = s;
    if ((st = model_init(h))) {
        rlx_cuda_model_free(m);
        return st;
    }
    *out = m;
    return RLX_OK;
}

/* Copies what the runtime's loader left in m->weights to the device, then drops it. */
static int upload_weights(rlx_model *m) {
    CuHost *h = host_of(m);
    int st = h->broken ? RLX_E_GPU : RLX_OK;
    if (!st && m->info->weights_bytes && !(st = enter(h))) {
        st = cu_status(h->fn.cuMemcpyHtoD(h->weights, m->weights, (size_t)m->info->weights_bytes));
        leave(h);
    }
    h->weights_loaded = !st;
    free(m->weights_alloc);
    m->weights_alloc = NULL;
    m->weights = NULL;
    return st;
}

int rlx_cuda_load_weights(rlx_model *m, const char *path) {
    if (!host_of(m)) return RLX_E_ARG;
    int st = rlx_load_weights_file(m, path);
    return st ? st : upload_weights(m);
}

int rlx_cuda_load_weights_buffer(rlx_model *m, const void *buf, size_t len) {
    if (!host_of(m)) return RLX_E_ARG;
    int st = rlx_load_weights_buffer(m, buf, len);
    return st ? st : upload_weights(m);
}

int rlx_cuda_set_stream(rlx_model *m, void *stream) {
    CuHost *h = host_of(m);
    if (!h) return RLX_E_ARG;
    h->stream = stream ? (CUstream)stream : h->own;
    return RLX_OK;
}

int rlx_cuda_run(rlx_model *m, const void *const *inputs, void *const *outputs) {
    CuHost *h = host_of(m);
    if (!h) return RLX_E_ARG;
    const rlx_model_info *info = m->info;
    const rlx_gpu_schedule *s = h->s;
    if ((info->ninputs && !inputs) || (info->noutputs && !outputs)) return RLX_E_ARG;
    for (int i = 0; i < info->ninputs; i++)
        if (info->inputs[i].nbytes && !inputs[i]) return RLX_E_ARG;
    for (int i = 0; i < info->noutputs; i++)
        if (info->outputs[i].nbytes && !outputs[i]) return RLX_E_ARG;
    if (!h->weights_loaded) return RLX_E_STATE;
    if (h->broken) return RLX_E_GPU;
    int st = enter(h);
    if (st) return st;
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < info->ninputs && !r; i++)
        if (info->inputs[i].nbytes)
            r = h->fn.cuMemcpyHtoDAsync(h->arena + info->inputs[i].offset, inputs[i], (size_t)info->inputs[i].nbytes,
                                        h->stream);
    if (!r) r = h->fn.cuGraphLaunch(h->graph, h->stream);
    for (int i = 0; i < info->noutputs && !r; i++) {
        if (!info->outputs[i].nbytes) continue;
        CUdeviceptr base = s->output_in_weights && s->output_in_weights[i] ? h->weights : h->arena;
        r = h->fn.cuMemcpyDtoHAsync(outputs[i], base + info->outputs[i].offset, (size_t)info->outputs[i].nbytes,
                                    h->stream);
    }
    if (!r) r = h->fn.cuMemcpyDtoHAsync(&h->status, h->arena + s->status_offset, 4, h->stream);
    CUresult w = h->fn.cuStreamSynchronize(h->stream);   /* also after a failed call: nothing in flight */
    if (!r) r = w;
    leave(h);
    if (r) {
        h->broken = 1;
        return cu_status(r);
    }
    return h->status ? (int)h->status : RLX_OK;
}

const char *rlx_cuda_device_name(const rlx_model *m) {
    CuHost *h = host_of(m);
    return h && h->name[0] ? h->name : "device=none";
}

#endif
