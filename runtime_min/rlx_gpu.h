/* rlx_gpu.h - what a GPU target's generated host file hands its runtime host.
 *
 * For --target spirv (and later cuda, msl), rlxc writes OUT.c with the same
 * NAME_* API as the C target, but instead of a C schedule it holds a table:
 * the compiled kernels (SPIR-V words, PTX, MSL source), one entry per
 * distinct kernel, and the dispatches in schedule order, each naming its
 * kernel, its grid and its push constants (the element offsets of its
 * operands in the arena or the weights buffer). The host (rlx_vk.c for
 * Vulkan) creates one device-local buffer for the arena and one for the
 * weights at the offsets rlxc planned, one pipeline per kernel, and records
 * the whole schedule once, at init, with a barrier before each dispatch
 * whose `barrier` flag is set (rlxc sets it where the dispatch touches bytes
 * that an earlier one since the last barrier wrote, or writes bytes one of
 * them read). NAME_run copies the inputs in, submits, waits and copies the
 * outputs out; it allocates nothing.
 *
 * Every kernel reads the arena as binding 0 and the weights as binding 1 of
 * descriptor set 0 (storage buffers), and its operand offsets as push
 * constants: push[i] is operand i's offset in elements of its own type.
 */
#ifndef RLX_GPU_H
#define RLX_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "rlx_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { RLX_GPU_MAX_PUSH = 32 };   /* 128 bytes of push constants: the minimum every device offers */

/* What a kernel needs of the device (rlx_gpu_kernel.needs): checked at init,
 * each missing one its own status (rlx_rt.h). */
enum {
    RLX_GPU_NEED_F16_ARITH = 1u << 0,   /* half-precision arithmetic (shaderFloat16) */
    RLX_GPU_NEED_16BIT = 1u << 1,       /* 16-bit storage (f16, bf16, i16, u16 tensors) */
    RLX_GPU_NEED_8BIT = 1u << 2,        /* 8-bit storage (i8, u8, bool tensors) */
    RLX_GPU_NEED_INT64 = 1u << 3,       /* 64-bit integers (shaderInt64) */
    RLX_GPU_NEED_F64 = 1u << 4,         /* double precision (shaderFloat64) */
    RLX_GPU_NEED_SUBGROUP = 1u << 5     /* subgroup arithmetic and shuffles */
};

typedef struct {
    const char *name;          /* k3_conv2d_f32, as in OUT.comp */
    const void *code;          /* SPIR-V words (spirv), PTX text (cuda), MSL source (msl) */
    size_t code_bytes;
    uint32_t local[3];         /* workgroup size */
    uint32_t shared_bytes;     /* workgroup memory it declares */
    uint32_t max_loop_trips;   /* loop iterations one invocation runs, all loops together */
    uint32_t needs;            /* RLX_GPU_NEED_* */
} rlx_gpu_kernel;

typedef struct {
    uint32_t kernel;           /* index into the kernel table */
    uint32_t groups[3];        /* workgroups per dimension */
    uint32_t npush;            /* words of push used */
    uint32_t push[RLX_GPU_MAX_PUSH];
    uint32_t barrier;          /* 1: a memory barrier before this dispatch */
} rlx_gpu_dispatch;

typedef struct {
    const rlx_model_info *info;        /* names, dtypes, shapes, offsets; arena and weights bytes; hash */
    const rlx_gpu_kernel *kernels;
    uint32_t nkernels;
    const rlx_gpu_dispatch *dispatches;
    uint32_t ndispatches;
    uint32_t needs;                    /* the union of the kernels' needs */
    uint32_t max_local_invocations;    /* largest local[0] * local[1] * local[2] */
    uint32_t max_shared_bytes;
    uint32_t max_groups[3];            /* largest groups[d] of any dispatch */
    uint64_t max_buffer_bytes;         /* the larger of arena_bytes and weights_bytes */
    /* Per output (info->noutputs entries), 1 where the output is a weight:
     * its info->outputs[i].offset is then an offset in the weights buffer,
     * as in the C target's NAME_run. NULL: every output is in the arena. */
    const uint8_t *output_in_weights;
    /* A u32 status word after the arena (the arena buffer holds
     * status_offset + 4 bytes; status_offset >= arena_bytes, a multiple of
     * 4): a kernel that meets a data error (a Gather index out of range)
     * stores its RLX_E_* there. The host zeroes it before each run and
     * returns it from NAME_run when a kernel set it. */
    uint64_t status_offset;
} rlx_gpu_schedule;

/* What a device offers, in the schedule's terms; each host fills one from
 * its API's features and limits and calls rlx_gpu_check (rlx_gpu.c). */
typedef struct {
    uint32_t has;                      /* the RLX_GPU_NEED_* it supports */
    uint32_t max_invocations;          /* per workgroup */
    uint32_t max_local[3];             /* workgroup size per dimension */
    uint32_t max_shared_bytes;         /* workgroup memory */
    uint32_t max_groups[3];            /* workgroups per dimension of one dispatch */
    uint64_t max_buffer_bytes;         /* one storage buffer (range and allocation) */
    uint32_t loop_cap;                 /* refuse kernels whose max_loop_trips reach it; 0: no known cap */
} rlx_gpu_caps;

/* Checks a schedule's tables (kernel indices, push counts, code present,
 * every input and output slot inside its buffer, the status word after the
 * arena): RLX_E_ARG if malformed.
 * With caps, then checks the device: the first problem in the order
 * F16, 16BIT, 8BIT, INT64, F64, SUBGROUP, BUFFER, SHARED, WGSIZE, WGCOUNT,
 * LOOPS (RLX_E_DEV_*), or RLX_OK. The schedule's declared maxima and the
 * ones the tables give are both checked, so a summary field that is too
 * small cannot hide a kernel the device cannot run. */
int rlx_gpu_check(const rlx_gpu_schedule *s, const rlx_gpu_caps *caps);

/* The Vulkan host (rlx_vk.c). rlx_vk_model_new picks a compute-capable
 * device (the first, or RLX_VK_DEVICE=N), checks its features and limits
 * against the schedule, creates the buffers and pipelines and records the
 * command buffer; the weights are uploaded by the load functions. The
 * loader is opened at run time (dlopen; RLX_VK_LOADER=PATH overrides it),
 * so a machine without one gets RLX_E_NOLOADER; RLX_VK_DEBUG=1 prints
 * validation messages to stderr. docs/targets.md lists every status. */
int rlx_vk_model_new(const rlx_gpu_schedule *s, rlx_model **out);
int rlx_vk_load_weights(rlx_model *m, const char *path);
int rlx_vk_load_weights_buffer(rlx_model *m, const void *buf, size_t len);
int rlx_vk_run(rlx_model *m, const void *const *inputs, void *const *outputs);
void rlx_vk_model_free(rlx_model *m);
const char *rlx_vk_device_name(const rlx_model *m);   /* for --bench */

/* What the CUDA host runs: the schedule, whose every kernel's code is the
 * module's PTX (one NUL-terminated string, the same pointer: one module,
 * loaded once); the compute capability the PTX is for (80: compute_80);
 * and optionally a cubin of the same module for sm_<arch>. */
typedef struct {
    const rlx_gpu_schedule *schedule;
    uint32_t arch;
    const void *cubin;     /* NULL: none */
    size_t cubin_bytes;
} rlx_cuda_module;

/* The CUDA host (rlx_cuda.c): the same five functions over the CUDA driver
 * API, and the stream NAME_run works on. rlx_cuda_set_stream(m, s) makes
 * every later run go on the caller's CUstream s (NULL: the host's own);
 * a run still waits for its outputs before it returns. */
int rlx_cuda_model_new(const rlx_cuda_module *mod, rlx_model **out);
int rlx_cuda_load_weights(rlx_model *m, const char *path);
int rlx_cuda_load_weights_buffer(rlx_model *m, const void *buf, size_t len);
int rlx_cuda_run(rlx_model *m, const void *const *inputs, void *const *outputs);
void rlx_cuda_model_free(rlx_model *m);
int rlx_cuda_set_stream(rlx_model *m, void *stream);
const char *rlx_cuda_device_name(const rlx_model *m);   /* for --bench */

#ifdef __cplusplus
}
#endif
#endif
