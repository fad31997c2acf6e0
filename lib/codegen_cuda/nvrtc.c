/* nvrtc.c - CUDA C++ to PTX (and cubins) with NVRTC, loaded with dlopen.
 *
 * rlxc builds and runs on machines without CUDA: NVRTC is opened only when
 * a model is compiled for --target cuda, through the dynamic linker
 * (libnvrtc.so.13, .so.12, .so), then from the toolkit's lib64 directory
 * ($CUDA_HOME, default /usr/local/cuda), or exactly the library
 * $RLXC_NVRTC names. Its few entry points are declared here (the
 * toolkit's nvrtc.h need not exist on the machine that builds rlxc).
 * Where none opens, rlx_nvrtc_open says which were tried and why the last
 * failed, and the target reports that as a one-line error.
 *
 * A compile passes no include path: the kernels include only
 * <cuda_fp16.h>, which NVRTC gets from memory (the storage type and the
 * two conversions the kernels use, over the PTX cvt instructions), so the
 * result does not depend on which toolkit headers are installed. The
 * options: the architecture, C++17, and no fast math (cuda.h).
 */
#include "cuda.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "../rlx.h"

typedef int NvrtcResult;
typedef struct NvrtcProgram *NvrtcProgram;

/* X(name, return type, arguments) */
#define RLX_NVRTC_FNS(X)                                                                                          \
    X(nvrtcVersion, NvrtcResult, (int *, int *))                                                                  \
    X(nvrtcGetErrorString, const char *, (NvrtcResult))                                                           \
    X(nvrtcGetNumSupportedArchs, NvrtcResult, (int *))                                                            \
    X(nvrtcGetSupportedArchs, NvrtcResult, (int *))                                                               \
    X(nvrtcCreateProgram, NvrtcResult,                                                                            \
      (NvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *))                \
    X(nvrtcDestroyProgram, NvrtcResult, (NvrtcProgram *))                                                         \
    X(nvrtcCompileProgram, NvrtcResult, (NvrtcProgram, int, const char *const *))                                 \
    X(nvrtcGetProgramLogSize, NvrtcResult, (NvrtcProgram, size_t *))                                              \
    X(nvrtcGetProgramLog, NvrtcResult, (NvrtcProgram, char *))                                                    \
    X(nvrtcGetPTXSize, NvrtcResult, (NvrtcProgram, size_t *))                                                     \
    X(nvrtcGetPTX, NvrtcResult, (NvrtcProgram, char *))                                                           \
    X(nvrtcGetCUBINSize, NvrtcResult, (NvrtcProgram, size_t *))                                                   \
    X(nvrtcGetCUBIN, NvrtcResult, (NvrtcProgram, char *))

static struct {
#define X(name, ret, args) ret(*name) args;
    RLX_NVRTC_FNS(X)
#undef X
    int opened;
    const char *missing;
    int version;
    int narchs;
    int *archs;
} nv;

/* What the kernels include, as NVRTC gets it. The same names as the
 * toolkit's header, so OUT.cu also builds with nvcc. */
static const char fp16_header[] =
    "// cuda_fp16.h as rlxc gives it to NVRTC: __half as a storage type and its conversions\n"
    "#pragma once\n"
    "struct __align__(2) __half { unsigned short __x; };\n"
    "__device__ static inline float __half2float(__half h) {\n"
    "    float f;\n"
    "    asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h.__x));\n"
    "    return f;\n"
    "}\n"
    "__device__ static inline __half __float2half_rn(float f) {\n"
    "    __half h;\n"
    "    asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h.__x) : \"f\"(f));\n"
    "    return h;\n"
    "}\n";

static void *try_open(const char *path, RlxBuf *tried) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        rlx_buf_printf(tried, "%s%s", tried->len ? ", " : "", path);
        nv.missing = e ? rlx_fmt("%s", e) : "not found";
    }
    return h;
}

const char *rlx_nvrtc_open(void) {
    if (nv.opened) return nv.missing ? nv.missing : NULL;
    nv.opened = 1;
    RlxBuf tried = {0};
    void *h = NULL;
    const char *env = getenv("RLXC_NVRTC");
    if (env && *env) {
        h = try_open(env, &tried);
    } else {
        static const char *const names[] = RLX_NVRTC_NAMES;
        const char *home = getenv("CUDA_HOME");
        if (!home || !*home) home = RLX_CUDA_HOME_DEFAULT;
        for (int pass = 0; pass < 2 && !h; pass++)
            for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++)
                h = try_open(pass ? rlx_fmt("%s/lib64/%s", home, names[i]) : names[i], &tried);
    }
    if (!h) {
        nv.missing = rlx_fmt("target 'cuda' needs NVRTC, the CUDA toolkit's runtime compiler, and none opens "
                             "(tried %s; set RLXC_NVRTC to the library or CUDA_HOME to the toolkit): %s",
                             tried.data, nv.missing);
        return nv.missing;
    }
    nv.missing = NULL;
#define X(name, ret, args)                                                                          \
    {                                                                                               \
        void *sym = dlsym(h, #name);                                                                \
        if (!sym) {                                                                                 \
            nv.missing = rlx_fmt("target 'cuda': the NVRTC library lacks %s (too old?)", #name);   \
            return nv.missing;                                                                      \
        }                                                                                           \
        memcpy(&nv.name, &sym, sizeof nv.name); /* POSIX: a dlsym result converts to a function */  \
    }
    RLX_NVRTC_FNS(X)
#undef X
    int major = 0, minor = 0;
    if (nv.nvrtcVersion(&major, &minor) || nv.nvrtcGetNumSupportedArchs(&nv.narchs) || nv.narchs <= 0) {
        nv.missing = "target 'cuda': the NVRTC library does not answer (nvrtcVersion failed)";
        return nv.missing;
    }
    nv.version = major * 1000 + minor * 10;
    nv.archs = rlx_alloc(sizeof(int) * (size_t)nv.narchs);
    if (nv.nvrtcGetSupportedArchs(nv.archs)) nv.narchs = 0;
    return NULL;
}

int rlx_nvrtc_version(void) { return nv.version; }

int rlx_nvrtc_has_arch(int arch) {
    for (int i = 0; i < nv.narchs; i++)
        if (nv.archs[i] == arch) return 1;
    return 0;
}

const char *rlx_nvrtc_archs(void) {
    RlxBuf b = {0};
    for (int i = 0; i < nv.narchs; i++) rlx_buf_printf(&b, "%ssm_%d", i ? " " : "", nv.archs[i]);
    return b.len ? b.data : "none";
}

/* One compile for --gpu-architecture=arch_option; the PTX or the cubin. */
static int compile_once(const char *source, const char *file_name, const char *arch_option, int want_cubin,
                        RlxCudaModule *out) {
    static const char *const header_names[] = {"cuda_fp16.h"};
    const char *headers[] = {fp16_header};
    NvrtcProgram prog = NULL;
    if (nv.nvrtcCreateProgram(&prog, source, file_name, 1, headers, header_names)) {
        out->log = "nvrtcCreateProgram failed";
        return -1;
    }
    const char *opts[] = {arch_option, "--std=c++17", "--ftz=false", "--prec-div=true", "--prec-sqrt=true",
                          "--fmad=false"};
    NvrtcResult r = nv.nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    int rc = 0;
    if (r) {
        size_t n = 0;
        char *log = NULL;
        if (!nv.nvrtcGetProgramLogSize(prog, &n) && n) {
            log = rlx_alloc(n + 1);
            if (nv.nvrtcGetProgramLog(prog, log)) log[0] = 0;
        }
        out->log = log && log[0] ? log : nv.nvrtcGetErrorString(r);
        rc = -1;
    } else if (!want_cubin) {
        size_t n = 0;
        if (nv.nvrtcGetPTXSize(prog, &n) || !n) rc = -1;
        char *ptx = rc ? NULL : rlx_alloc(n);
        if (!rc && nv.nvrtcGetPTX(prog, ptx)) rc = -1;
        if (rc) out->log = "NVRTC gave no PTX";
        else {
            ptx[n - 1] = 0;
            out->ptx = ptx;
            out->ptx_bytes = strlen(ptx) + 1;
        }
    } else {
        size_t n = 0;
        if (nv.nvrtcGetCUBINSize(prog, &n) || !n) rc = -1;
        uint8_t *bin = rc ? NULL : rlx_alloc(n);
        if (!rc && nv.nvrtcGetCUBIN(prog, (char *)bin)) rc = -1;
        if (rc) out->log = "NVRTC gave no cubin";
        else {
            out->cubin = bin;
            out->cubin_bytes = n;
        }
    }
    nv.nvrtcDestroyProgram(&prog);
    return rc;
}

int rlx_nvrtc_compile(const char *source, const char *file_name, int arch, int cubin, RlxCudaModule *out) {
    memset(out, 0, sizeof *out);
    RLX_ASSERT(nv.opened && !nv.missing);
    if (compile_once(source, file_name, rlx_fmt("--gpu-architecture=compute_%d", arch), 0, out)) return -1;
    if (cubin && compile_once(source, file_name, rlx_fmt("--gpu-architecture=sm_%d", arch), 1, out)) return -1;
    return 0;
}
