/* cuda.h - the cuda target's parts: NVRTC, loaded at run time (nvrtc.c). */
#ifndef RLX_CODEGEN_CUDA_H
#define RLX_CODEGEN_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* The architecture --cuda-arch defaults to: compute capability 8.0 (A100),
 * whose PTX every later datacenter part (sm_86, sm_89, sm_90 H100/H200,
 * sm_100 B200) compiles when it loads the module. */
#define RLX_CUDA_DEFAULT_ARCH 80

/* Where NVRTC is looked for: $RLXC_NVRTC (a library path; nothing else is
 * tried), else these names through the dynamic linker, then the same names
 * in $CUDA_HOME/lib64 (default /usr/local/cuda/lib64). */
#define RLX_NVRTC_NAMES {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}
#define RLX_CUDA_HOME_DEFAULT "/usr/local/cuda"

/* Opens NVRTC once; NULL if it is there, else one line saying what is
 * missing (which libraries were tried, and why the last one failed). */
const char *rlx_nvrtc_open(void);

/* NVRTC's version, as major * 1000 + minor * 10 (13.0 -> 13000). */
int rlx_nvrtc_version(void);

/* Whether this NVRTC compiles for compute capability arch (80 for sm_80). */
int rlx_nvrtc_has_arch(int arch);
/* The architectures it compiles for, "sm_75 sm_80 ...", for a message. */
const char *rlx_nvrtc_archs(void);

typedef struct {
    const char *ptx;       /* NUL-terminated PTX text */
    size_t ptx_bytes;      /* with the NUL */
    const uint8_t *cubin;  /* NULL unless asked for */
    size_t cubin_bytes;
    const char *log;       /* on failure: NVRTC's log */
} RlxCudaModule;

/* Compiles one CUDA translation unit for arch: PTX for compute_<arch>
 * and, with cubin, also a cubin for sm_<arch>. No fast math: no flush to
 * zero, IEEE division and square root, no contraction into fused
 * multiply-adds (the kernels ask for fmaf where they want one), so results
 * round like the C target's. The headers NVRTC lacks (it has no libc and,
 * without a toolkit, no cuda_fp16.h) come from memory. Returns 0, or -1
 * with out->log set (a kernel NVRTC rejects is rlxc's bug; the caller
 * names it). Memory from the compiler's arena. */
int rlx_nvrtc_compile(const char *source, const char *file_name, int arch, int cubin, RlxCudaModule *out);

#endif
