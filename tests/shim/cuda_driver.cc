/* cuda_driver.cc - a stand-in libcuda.so.1 that runs kernels on the CPU, so
 * that the real CUDA host (runtime_min/rlx_cuda.c) runs end to end on a
 * machine without a GPU. A test tool.
 *
 * Build it as a shared object named libcuda.so.1 and point the host at it
 * (RLX_LIBCUDA=.../libcuda.so.1). The kernels come from a library built from
 * the model's OUT.cu against cuda_shim.h with gpu_fiber.cc inside it
 * ($RLX_SHIM_KERNELS), which this driver dlopens; gpu_fiber_launch runs
 * them, in the order RLX_SHIM_ORDER gives.
 *
 * What it checks, as a driver would, and more:
 *
 *   - cuGetProcAddress_v2 resolves only the entry points it has, at the
 *     ABI version the host asks for (12000 or later);
 *   - a module is PTX (its .version no newer than the driver's CUDA
 *     version supports: else CUDA_ERROR_UNSUPPORTED_PTX_VERSION; its
 *     .target no newer than the device) or a cubin (ELF for EM_CUDA, its
 *     architecture the device's major version and no newer minor: else
 *     CUDA_ERROR_NO_BINARY_FOR_GPU); with RLX_SHIM_EXPECT_PTX=FILE the PTX
 *     must be that file's bytes (what rlxc embedded); every .entry of the
 *     PTX must be a kernel of the library, and a function is found only if
 *     it is an .entry;
 *   - a launch's block fits the kernel's .maxntid (its __launch_bounds__),
 *     its parameters are rlxc's (.u64, .u64, .b8[128], read from the
 *     .entry), its pointers point into allocations, and the call has a
 *     current context; copies and memsets stay inside their allocations;
 *   - memory from cuMemAlloc starts as 0xff bytes (NaN), not zero, so a host
 *     that forgets to clear the arena shows it;
 *   - when the last primary context is released, every allocation, module,
 *     stream and graph exec must have been freed: else it reports a leak.
 *
 * Every problem is printed to stderr as one line starting "cuda_driver: ",
 * which the tests treat as a failure, and returns the error code a driver
 * would. Stream capture records launches, memsets and copies into a graph
 * that cuGraphLaunch replays in order; everything runs at once, on the
 * calling thread (a stream's work is done before the call returns, which
 * is one of the orders a real driver may give).
 *
 * With RLX_SHIM_TRACE=1 it also says what it loaded and launched, one line
 * each, starting "cuda_driver trace: " (not a problem: tests look for it).
 *
 * Environment: RLX_SHIM_DEVICES (default 1; 0: cuInit says there is no
 * device), RLX_SHIM_CC (compute capability, default 90), RLX_SHIM_DRIVER
 * (the driver's CUDA version, default 13000), RLX_SHIM_MEM (device memory
 * in bytes, default 4 GiB).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_LAUNCH_FAILED = 719
};

namespace {

void report(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda_driver: %s\n", msg);
}

void trace(const char *fmt, ...) {
    const char *on = getenv("RLX_SHIM_TRACE");
    if (!on || strcmp(on, "1")) return;
    va_list ap;
    va_start(ap, fmt);
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuda_driver trace: %s\n", msg);
}

long env_long(const char *name, long dflt) {
    const char *s = getenv(name);
    return s && *s ? strtol(s, nullptr, 10) : dflt;
}

/* ---- the kernels library ---- */

typedef int (*FiberLaunch)(const unsigned *, const unsigned *, unsigned, void (*)(void *), void *);
struct Push {
    uint32_t off[32];
};
typedef void (*Kernel)(unsigned char *, const unsigned char *, Push);

struct Library {
    void *h = nullptr;
    FiberLaunch launch = nullptr;
    const char *(*last_error)() = nullptr;
};

/* The library RLX_SHIM_KERNELS names now (each module is loaded from the
 * library named at its cuModuleLoadData, so one process can hold several
 * models' kernels: RTLD_LOCAL keeps their same-named kernels apart). */
bool open_library(Library *lib) {
    const char *path = getenv("RLX_SHIM_KERNELS");
    if (!path || !*path) {
        report("RLX_SHIM_KERNELS names no kernels library");
        return false;
    }
    lib->h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->h) {
        report("cannot open the kernels library: %s", dlerror());
        return false;
    }
    void *l = dlsym(lib->h, "gpu_fiber_launch"), *e = dlsym(lib->h, "gpu_fiber_last_error");
    if (!l || !e) {
        report("%s has no gpu_fiber_launch (built without gpu_fiber.cc?)", path);
        return false;
    }
    memcpy(&lib->launch, &l, sizeof l);
    memcpy(&lib->last_error, &e, sizeof e);
    return true;
}

/* ---- state ---- */

struct Alloc {
    size_t bytes;
};
std::map<uintptr_t, Alloc> allocs;   /* by base address */
size_t mem_used;

struct Entry {
    std::string name;
    std::vector<size_t> params;   /* bytes of each parameter */
    unsigned maxntid = 1024;
};
struct Module {
    std::map<std::string, Entry> entries;   /* a PTX module's .entry list */
    std::string cubin;                      /* a cubin module's image */
    Library lib;                            /* where its kernels run */
};
struct Function {
    Module *mod;
    const Entry *entry;
    Kernel kernel;
};

struct Node {
    enum { KERNEL, MEMSET32, HTOD, DTOH } kind;
    Function *fn;
    unsigned grid[3], block[3];
    std::vector<unsigned char> params;   /* the kernel's parameters, copied */
    CUdeviceptr dst;
    const void *src;
    void *hdst;
    size_t n;
    unsigned value;
};
struct Graph {
    std::vector<Node> nodes;
};
struct Stream {
    Graph *capture = nullptr;   /* capturing into this */
};

std::vector<Module *> modules;
std::vector<Stream *> streams;
std::vector<Graph *> graphs, execs;
int primary_refs;
int ctx_token;                          /* the primary context's handle: its address */
thread_local std::vector<void *> ctx_stack;
bool initialized;

int device_cc() { return (int)env_long("RLX_SHIM_CC", 90); }
int ndevices() { return (int)env_long("RLX_SHIM_DEVICES", 1); }
size_t mem_total() { return (size_t)env_long("RLX_SHIM_MEM", 4096l << 20); }

template <class T> bool known(const std::vector<T *> &v, const void *p) {
    for (T *x : v)
        if (x == p) return true;
    return false;
}

bool has_context(const char *fn) {
    if (!ctx_stack.empty() && ctx_stack.back() == &ctx_token) return true;
    report("%s without a current context", fn);
    return false;
}

/* the allocation [p, p + n) lies in, or null */
const Alloc *inside(CUdeviceptr p, size_t n) {
    auto it = allocs.upper_bound((uintptr_t)p);
    if (it == allocs.begin()) return nullptr;
    --it;
    if ((uintptr_t)p < it->first || (uintptr_t)p - it->first > it->second.bytes ||
        n > it->second.bytes - ((uintptr_t)p - it->first))
        return nullptr;
    return &it->second;
}

/* ---- PTX and cubins ---- */

/* the PTX ISA version (major * 10 + minor) each driver version supports at most */
int ptx_isa_of_driver(int v) {
    static const int table[][2] = {{12000, 80}, {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84}, {12050, 85},
                                   {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90}};
    int isa = 0;
    for (auto &t : table)
        if (v >= t[0]) isa = t[1];
    return isa;
}

CUresult parse_ptx(const char *ptx, Module *m) {
    const char *ver = strstr(ptx, "\n.version ");
    const char *tgt = strstr(ptx, "\n.target sm_");
    if (!ver || !tgt) {
        report("a module that is neither PTX (.version, .target) nor a cubin");
        return CUDA_ERROR_INVALID_IMAGE;
    }
    int vmaj = 0, vmin = 0, arch = 0;
    if (sscanf(ver, "\n.version %d.%d", &vmaj, &vmin) != 2 || sscanf(tgt, "\n.target sm_%d", &arch) != 1)
        return CUDA_ERROR_INVALID_PTX;
    int driver = (int)env_long("RLX_SHIM_DRIVER", 13000);
    if (vmaj * 10 + vmin > ptx_isa_of_driver(driver)) return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    if (arch > device_cc()) return CUDA_ERROR_NO_BINARY_FOR_GPU;
    for (const char *p = ptx; (p = strstr(p, ".entry ")); p++) {
        Entry e;
        const char *n = p + 7;
        e.name.assign(n, strcspn(n, "( \n"));
        const char *open = strchr(n, '('), *close = open ? strchr(open, ')') : nullptr;
        if (!close) return CUDA_ERROR_INVALID_PTX;
        std::string params(open + 1, close);
        for (size_t at = 0; (at = params.find(".param", at)) != std::string::npos; at++) {
            size_t end = params.find_first_of(",", at);
            std::string one = params.substr(at, end == std::string::npos ? std::string::npos : end - at);
            size_t b = one.find(".b8 "), br = one.find('[');
            if (one.find(".u64") != std::string::npos) e.params.push_back(8);
            else if (b != std::string::npos && br != std::string::npos) e.params.push_back((size_t)atol(one.c_str() + br + 1));
            else e.params.push_back(0);   /* a type rlxc never passes */
        }
        const char *body = strchr(close, '{');
        const char *maxn = strstr(close, ".maxntid ");
        if (maxn && body && maxn < body) {
            unsigned x = 1, y = 1, z = 1;
            sscanf(maxn, ".maxntid %u, %u, %u", &x, &y, &z);
            e.maxntid = x * y * z;
        }
        m->entries[e.name] = e;
    }
    if (m->entries.empty()) {
        report("a PTX module without kernels");
        return CUDA_ERROR_INVALID_PTX;
    }
    return CUDA_SUCCESS;
}

}  // namespace

/* ---- the API ---- */

extern "C" {

CUresult cuInit(unsigned flags) {
    if (flags) return CUDA_ERROR_INVALID_VALUE;
    if (ndevices() <= 0) return CUDA_ERROR_NO_DEVICE;
    initialized = true;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v) {
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    *v = (int)env_long("RLX_SHIM_DRIVER", 13000);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *n = ndevices();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(int *d, int ordinal) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= ndevices()) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= ndevices()) return CUDA_ERROR_INVALID_DEVICE;
    switch (attr) {
    case 1: *v = 1024; break;                       /* threads per block */
    case 2: case 3: *v = 1024; break;               /* block x, y */
    case 4: *v = 64; break;                         /* block z */
    case 5: *v = 2147483647; break;                 /* grid x */
    case 6: case 7: *v = 65535; break;              /* grid y, z */
    case 8: *v = 49152; break;                      /* shared memory per block */
    case 10: *v = 32; break;                        /* warp */
    case 75: *v = device_cc() / 10; break;
    case 76: *v = device_cc() % 10; break;
    default: report("cuDeviceGetAttribute(%d): not an attribute this driver knows", attr); return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, int dev) {
    if (dev < 0 || dev >= ndevices() || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "rlx CPU shim");
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) {
    if (dev < 0 || dev >= ndevices()) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = mem_total();
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev < 0 || dev >= ndevices()) return CUDA_ERROR_INVALID_DEVICE;
    primary_refs++;
    *ctx = &ctx_token;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(int dev) {
    if (dev < 0 || dev >= ndevices() || primary_refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--primary_refs == 0) {
        if (!allocs.empty()) report("%zu device allocations leaked (%zu bytes)", allocs.size(), mem_used);
        if (!modules.empty()) report("%zu modules leaked", modules.size());
        if (!streams.empty()) report("%zu streams leaked", streams.size());
        if (!execs.empty()) report("%zu graph execs leaked", execs.size());
        if (!graphs.empty()) report("%zu graphs leaked", graphs.size());
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(void *ctx) {
    if (ctx != &ctx_token || primary_refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    ctx_stack.push_back(ctx);
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(void **ctx) {
    if (ctx_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx) *ctx = ctx_stack.back();
    ctx_stack.pop_back();
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(void **out, const void *image) {
    if (!has_context("cuModuleLoadData")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!image) return CUDA_ERROR_INVALID_VALUE;
    Module *m = new Module;
    if (!open_library(&m->lib)) {
        delete m;
        return CUDA_ERROR_INVALID_IMAGE;
    }
    const unsigned char *b = (const unsigned char *)image;
    CUresult r = CUDA_SUCCESS;
    if (!memcmp(b, "\x7f" "ELF", 4)) {
        uint16_t machine;
        uint32_t flags;
        memcpy(&machine, b + 18, 2);
        memcpy(&flags, b + 48, 4);
        int arch = (int)(flags >> 8 & 0xff), cc = device_cc();
        if (machine != 190) r = CUDA_ERROR_INVALID_IMAGE;
        else if (arch / 10 != cc / 10 || arch > cc) r = CUDA_ERROR_NO_BINARY_FOR_GPU;
        /* its size from the ELF header: the section headers end it */
        uint64_t shoff;
        uint16_t shentsize, shnum;
        memcpy(&shoff, b + 40, 8);
        memcpy(&shentsize, b + 58, 2);
        memcpy(&shnum, b + 60, 2);
        if (!r) m->cubin.assign((const char *)b, (size_t)(shoff + (uint64_t)shentsize * shnum));
        if (!r) trace("module: a cubin for sm_%d (%zu bytes)", arch, m->cubin.size());
    } else {
        const char *expect = getenv("RLX_SHIM_EXPECT_PTX");
        if (expect && *expect) {
            FILE *f = fopen(expect, "rb");
            std::string want;
            char buf[65536];
            size_t n;
            while (f && (n = fread(buf, 1, sizeof buf, f)) > 0) want.append(buf, n);
            if (f) fclose(f);
            if (!f || want != (const char *)image) {
                report("the PTX loaded is not %s (what rlxc embedded)", expect);
                r = CUDA_ERROR_INVALID_IMAGE;
            }
        }
        if (!r) r = parse_ptx((const char *)image, m);
        if (!r) trace("module: PTX with %zu kernels", m->entries.size());
        for (auto &e : m->entries)
            if (!r && !dlsym(m->lib.h, e.first.c_str())) {
                report("the PTX's kernel %s is not in the kernels library", e.first.c_str());
                r = CUDA_ERROR_INVALID_IMAGE;
            }
    }
    if (r) {
        dlclose(m->lib.h);
        delete m;
        return r;
    }
    modules.push_back(m);
    *out = m;
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(void *mod) {
    for (size_t i = 0; i < modules.size(); i++)
        if (modules[i] == mod) {
            dlclose(modules[i]->lib.h);
            delete modules[i];
            modules.erase(modules.begin() + (long)i);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuModuleGetFunction(void **out, void *mod, const char *name) {
    if (!has_context("cuModuleGetFunction")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!known(modules, mod)) return CUDA_ERROR_INVALID_HANDLE;
    Module *m = (Module *)mod;
    static Entry cubin_entry = {"(from a cubin)", {8, 8, 128}, 1024};
    const Entry *e = nullptr;
    auto it = m->entries.find(name);
    if (it != m->entries.end()) e = &it->second;
    /* a cubin's kernel: its name in the string table, NUL on both sides */
    else if (!m->cubin.empty() && m->cubin.find(std::string("\0", 1) + name + std::string("\0", 1)) != std::string::npos)
        e = &cubin_entry;
    void *sym = dlsym(m->lib.h, name);
    if (!e || !sym) return CUDA_ERROR_NOT_FOUND;
    Function *f = new Function{m, e, nullptr};
    memcpy(&f->kernel, &sym, sizeof sym);
    *out = f;   /* functions live as long as the process: a driver frees them with the module */
    return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *v, int attr, void *fn) {
    if (attr != 0 || !fn) return CUDA_ERROR_INVALID_VALUE;
    *v = (int)((Function *)fn)->entry->maxntid;
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
    if (!has_context("cuMemAlloc")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (bytes > mem_total() - mem_used) return CUDA_ERROR_OUT_OF_MEMORY;
    void *m = aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    memset(m, 0xff, bytes);   /* not zero: the host must clear what it needs cleared */
    allocs[(uintptr_t)m] = {bytes};
    mem_used += bytes;
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
    auto it = allocs.find((uintptr_t)p);
    if (it == allocs.end()) {
        report("cuMemFree of 0x%llx, not an allocation", p);
        return CUDA_ERROR_INVALID_VALUE;
    }
    mem_used -= it->second.bytes;
    allocs.erase(it);
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
    if (!has_context("cuMemsetD8")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!inside(p, n)) {
        report("cuMemsetD8 of %zu bytes at 0x%llx: outside every allocation", n, p);
        return CUDA_ERROR_INVALID_VALUE;
    }
    memset((void *)(uintptr_t)p, v, n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) {
    if (!has_context("cuMemcpyHtoD")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!inside(d, n)) {
        report("cuMemcpyHtoD of %zu bytes to 0x%llx: outside every allocation", n, d);
        return CUDA_ERROR_INVALID_VALUE;
    }
    memcpy((void *)(uintptr_t)d, h, n);
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(void **s, unsigned flags) {
    if (!has_context("cuStreamCreate")) return CUDA_ERROR_INVALID_CONTEXT;
    (void)flags;
    Stream *st = new Stream;
    streams.push_back(st);
    *s = st;
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(void *s) {
    for (size_t i = 0; i < streams.size(); i++)
        if (streams[i] == s) {
            if (streams[i]->capture) report("a stream destroyed while capturing");
            delete streams[i];
            streams.erase(streams.begin() + (long)i);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

namespace {

struct LaunchArgs {
    Kernel k;
    unsigned char *a;
    const unsigned char *w;
    Push push;
};
void run_thread(void *p) {
    LaunchArgs *l = (LaunchArgs *)p;
    l->k(l->a, l->w, l->push);
}

CUresult run_node(const Node &n) {
    switch (n.kind) {
    case Node::MEMSET32:
        for (size_t i = 0; i < n.n; i++) memcpy((char *)(uintptr_t)n.dst + 4 * i, &n.value, 4);
        return CUDA_SUCCESS;
    case Node::HTOD: memcpy((void *)(uintptr_t)n.dst, n.src, n.n); return CUDA_SUCCESS;
    case Node::DTOH: memcpy(n.hdst, (const void *)(uintptr_t)n.dst, n.n); return CUDA_SUCCESS;
    case Node::KERNEL: break;
    }
    LaunchArgs l;
    CUdeviceptr a, w;
    memcpy(&a, &n.params[0], 8);
    memcpy(&w, &n.params[8], 8);
    memcpy(&l.push, &n.params[16], sizeof l.push);
    l.k = n.fn->kernel;
    l.a = (unsigned char *)(uintptr_t)a;
    l.w = (const unsigned char *)(uintptr_t)w;
    const Library &lib = n.fn->mod->lib;
    if (lib.launch(n.grid, n.block, 32, run_thread, &l)) {
        report("kernel %s: %s", n.fn->entry->name.c_str(), lib.last_error());
        return CUDA_ERROR_LAUNCH_FAILED;
    }
    return CUDA_SUCCESS;
}

/* runs n now, or records it if s is capturing */
CUresult submit(void *s, Node n) {
    Stream *st = (Stream *)s;
    if (s && !known(streams, s)) return CUDA_ERROR_INVALID_HANDLE;
    if (st && st->capture) {
        st->capture->nodes.push_back(n);
        return CUDA_SUCCESS;
    }
    return run_node(n);
}

}  // namespace

CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, void *s) {
    if (!has_context("cuMemsetD32Async")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!inside(p, 4 * n) || p % 4) {
        report("cuMemsetD32Async of %zu words at 0x%llx: outside every allocation, or unaligned", n, p);
        return CUDA_ERROR_INVALID_VALUE;
    }
    Node node{};
    node.kind = Node::MEMSET32;
    node.dst = p;
    node.n = n;
    node.value = v;
    return submit(s, node);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, void *s) {
    if (!has_context("cuMemcpyHtoDAsync")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!inside(d, n)) {
        report("cuMemcpyHtoDAsync of %zu bytes to 0x%llx: outside every allocation", n, d);
        return CUDA_ERROR_INVALID_VALUE;
    }
    Node node{};
    node.kind = Node::HTOD;
    node.dst = d;
    node.src = h;
    node.n = n;
    return submit(s, node);
}

CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, void *s) {
    if (!has_context("cuMemcpyDtoHAsync")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!inside(d, n)) {
        report("cuMemcpyDtoHAsync of %zu bytes from 0x%llx: outside every allocation", n, d);
        return CUDA_ERROR_INVALID_VALUE;
    }
    Node node{};
    node.kind = Node::DTOH;
    node.dst = d;
    node.hdst = h;
    node.n = n;
    return submit(s, node);
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *s, void **params, void **extra) {
    if (!has_context("cuLaunchKernel")) return CUDA_ERROR_INVALID_CONTEXT;
    Function *fn = (Function *)f;
    if (!fn) return CUDA_ERROR_INVALID_HANDLE;
    const char *name = fn->entry->name.c_str();
    uint64_t threads = (uint64_t)bx * by * bz;
    if (!gx || !gy || !gz || !threads || gy > 65535 || gz > 65535 || bx > 1024 || by > 1024 || bz > 64 ||
        threads > fn->entry->maxntid) {
        report("kernel %s: grid (%u,%u,%u), block (%u,%u,%u) beyond the device or its .maxntid %u", name, gx, gy, gz,
               bx, by, bz, fn->entry->maxntid);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (shared || extra || !params) {
        report("kernel %s: dynamic shared memory or extra parameters (rlxc passes neither)", name);
        return CUDA_ERROR_INVALID_VALUE;
    }
    const std::vector<size_t> &p = fn->entry->params;
    if (p.size() != 3 || p[0] != 8 || p[1] != 8 || p[2] != sizeof(Push)) {
        report("kernel %s: parameters are not rlxc's (u64 arena, u64 weights, 128-byte push)", name);
        return CUDA_ERROR_INVALID_VALUE;
    }
    Node n{};
    n.kind = Node::KERNEL;
    n.fn = fn;
    n.grid[0] = gx, n.grid[1] = gy, n.grid[2] = gz;
    n.block[0] = bx, n.block[1] = by, n.block[2] = bz;
    n.params.resize(16 + sizeof(Push));
    memcpy(&n.params[0], params[0], 8);
    memcpy(&n.params[8], params[1], 8);
    memcpy(&n.params[16], params[2], sizeof(Push));
    for (int i = 0; i < 2; i++) {
        CUdeviceptr ptr;
        memcpy(&ptr, &n.params[8 * i], 8);
        if (!inside(ptr, 1)) {
            report("kernel %s: parameter %d (0x%llx) is not a device allocation", name, i, ptr);
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return submit(s, n);
}

CUresult cuStreamSynchronize(void *s) {
    if (!has_context("cuStreamSynchronize")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!known(streams, s)) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture_v2(void *s, int mode) {
    if (!has_context("cuStreamBeginCapture")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!known(streams, s) || mode < 0 || mode > 2) return CUDA_ERROR_INVALID_VALUE;
    Stream *st = (Stream *)s;
    if (st->capture) return CUDA_ERROR_INVALID_VALUE;
    st->capture = new Graph;
    return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(void *s, void **g) {
    if (!known(streams, s) || !((Stream *)s)->capture) return CUDA_ERROR_INVALID_VALUE;
    Stream *st = (Stream *)s;
    graphs.push_back(st->capture);
    *g = st->capture;
    st->capture = nullptr;
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *g, unsigned long long flags) {
    if (!has_context("cuGraphInstantiateWithFlags")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!known(graphs, g) || flags) return CUDA_ERROR_INVALID_VALUE;
    Graph *e = new Graph(*(Graph *)g);   /* a copy: the graph may be destroyed after */
    execs.push_back(e);
    *exec = e;
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(void *g) {
    for (size_t i = 0; i < graphs.size(); i++)
        if (graphs[i] == g) {
            delete graphs[i];
            graphs.erase(graphs.begin() + (long)i);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuGraphExecDestroy(void *e) {
    for (size_t i = 0; i < execs.size(); i++)
        if (execs[i] == e) {
            delete execs[i];
            execs.erase(execs.begin() + (long)i);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuGraphLaunch(void *e, void *s) {
    if (!has_context("cuGraphLaunch")) return CUDA_ERROR_INVALID_CONTEXT;
    if (!known(execs, e) || !known(streams, s)) return CUDA_ERROR_INVALID_HANDLE;
    trace("graph of %zu nodes launched on stream %zu", ((Graph *)e)->nodes.size(),
          (size_t)(std::find(streams.begin(), streams.end(), (Stream *)s) - streams.begin()));
    for (const Node &n : ((Graph *)e)->nodes) {
        CUresult r = run_node(n);
        if (r) return r;
    }
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *name, void **fn, int version, unsigned long long flags, int *status) {
    static const struct {
        const char *name;
        void *fn;
    } table[] = {
#define F(api, impl) {#api, (void *)&impl}
        F(cuInit, cuInit), F(cuDriverGetVersion, cuDriverGetVersion), F(cuDeviceGetCount, cuDeviceGetCount),
        F(cuDeviceGet, cuDeviceGet), F(cuDeviceGetAttribute, cuDeviceGetAttribute),
        F(cuDeviceGetName, cuDeviceGetName), F(cuDeviceTotalMem, cuDeviceTotalMem_v2),
        F(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain),
        F(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2), F(cuCtxPushCurrent, cuCtxPushCurrent_v2),
        F(cuCtxPopCurrent, cuCtxPopCurrent_v2), F(cuModuleLoadData, cuModuleLoadData),
        F(cuModuleUnload, cuModuleUnload), F(cuModuleGetFunction, cuModuleGetFunction),
        F(cuFuncGetAttribute, cuFuncGetAttribute), F(cuMemAlloc, cuMemAlloc_v2), F(cuMemFree, cuMemFree_v2),
        F(cuMemsetD8, cuMemsetD8_v2), F(cuMemsetD32Async, cuMemsetD32Async), F(cuMemcpyHtoD, cuMemcpyHtoD_v2),
        F(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2), F(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2),
        F(cuStreamCreate, cuStreamCreate), F(cuStreamDestroy, cuStreamDestroy_v2),
        F(cuStreamSynchronize, cuStreamSynchronize), F(cuStreamBeginCapture, cuStreamBeginCapture_v2),
        F(cuStreamEndCapture, cuStreamEndCapture), F(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags),
        F(cuGraphDestroy, cuGraphDestroy), F(cuGraphExecDestroy, cuGraphExecDestroy),
        F(cuGraphLaunch, cuGraphLaunch), F(cuLaunchKernel, cuLaunchKernel),
#undef F
    };
    if (!name || !fn || flags) return CUDA_ERROR_INVALID_VALUE;
    *fn = nullptr;
    if (version < 12000) {   /* the host declares the 12.0 prototypes */
        report("cuGetProcAddress(%s) at ABI %d: older than the prototypes rlx_cuda.c declares", name, version);
        if (status) *status = 2;   /* CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT */
        return CUDA_ERROR_NOT_FOUND;
    }
    for (auto &t : table)
        if (!strcmp(t.name, name)) {
            *fn = t.fn;
            if (status) *status = 0;
            return CUDA_SUCCESS;
        }
    if (status) *status = 1;   /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return CUDA_ERROR_NOT_FOUND;
}

}  // extern "C"
