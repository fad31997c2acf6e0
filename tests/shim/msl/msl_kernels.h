/* msl_kernels.h - included after a .metal file compiled over the shim's
 * metal_stdlib: RLX_MSL_KERNEL(name) makes the table entry of one of its
 * kernels (rlxc's signature: arena, weights, the operand offsets, the
 * thread's position in its threadgroup and the threadgroup's in the grid),
 * RLX_MSL_FINGERPRINT(name) that of the library's argument-less fingerprint
 * kernel. build.sh writes the list of them from the file's KNAME defines.
 * A test tool. */
#ifndef RLX_MSL_KERNELS_H
#define RLX_MSL_KERNELS_H

#include "msl_run.h"

namespace msl_shim {

typedef void (*RlxKernel)(device uchar *, device const uchar *, constant RlxPush &, uint3, uint3);
static_assert(sizeof(RlxPush) == 32 * sizeof(uint32_t), "the operand offsets are the dispatch's 32 words");

template <RlxKernel K> void body(void *arg) {
    const msl_shim_args *a = (const msl_shim_args *)arg;
    K(a->arena, a->weights, *(constant RlxPush *)(const void *)a->push, ids(gpu_fiber::thread_id()),
      ids(gpu_fiber::block_id()));
}

template <void (*K)()> void body0(void *) { K(); }

}  // namespace msl_shim

#define RLX_MSL_KERNEL(name) {#name, msl_shim::body<name>},
#define RLX_MSL_FINGERPRINT(name) {#name, msl_shim::body0<name>},

#endif
