/* metal_host.m - the Metal host of the msl target: runs an rlx_gpu_schedule
 * (rlx_gpu.h) on a Metal device. rlxc embeds this file and writes it into
 * every model's OUT_metal.m after defining RLX_MTL(x) (the model's prefix
 * for the functions below, NAME_mtl_x) and RLX_MTL_HOST (the class name),
 * so that several models link into one program. Objective-C with ARC.
 *
 * RLX_MTL(model_new):
 *   1. checks the tables (rlx_gpu_check without a device: RLX_E_ARG);
 *   2. takes the system's default device, or on macOS device N of
 *      MTLCopyAllDevices() with RLX_MTL_DEVICE=N (none: RLX_E_NODEVICE);
 *   3. fills an rlx_gpu_caps from the device (threadgroup memory, threads
 *      per threadgroup, buffer length; half, 8/16-bit storage and 64-bit
 *      integers everywhere; simdgroups always, below) and checks the
 *      schedule against it (RLX_E_DEV_*);
 *   4. builds the library from the MSL source embedded in OUT.c with fast
 *      math off and MSL 2.3, or loads the .metallib named by
 *      $RLX_METALLIB, which must hold the source's fingerprint kernel
 *      (another model's library: RLX_E_MODEL);
 *   5. makes one compute pipeline per kernel; a kernel whose threadgroup is
 *      larger than its pipeline's maxTotalThreadsPerThreadgroup is
 *      RLX_E_DEV_WGSIZE. A kernel that reduces by simdgroup shuffles
 *      (RLX_GPU_NEED_SUBGROUP) runs as itself on a device with simdgroup
 *      functions (Apple7+, Mac2) where its pipeline's threadExecutionWidth
 *      is 32, and as its threadgroup-memory variant NAME_tg elsewhere;
 *   6. creates the arena buffer (the plan's bytes and the status word after
 *      them, zeroed as the C target's arena) in shared storage.
 * RLX_MTL(load_weights) reads and checks the file with the runtime's own
 * loader (the C target's statuses), copies it into one shared buffer and
 * drops the host copy.
 * RLX_MTL(run) copies the inputs into the arena, zeroes the status word,
 * encodes the whole schedule into one command buffer (one compute encoder
 * in concurrent dispatch mode, a memoryBarrierWithScope: before every
 * dispatch that rlxc marked, the arena at buffer 0, the weights at buffer 1,
 * each dispatch's operand offsets with setBytes at buffer 2), commits it,
 * waits, copies the outputs out and returns the status word if a kernel set
 * it (a Gather index out of range: RLX_E_RANGE). RLX_MTL_SERIAL=1 encodes in
 * serial dispatch mode instead, where Metal orders every dispatch after the
 * one before (to tell a missing barrier from a wrong kernel). A command
 * buffer that fails is RLX_E_DEV_NOMEM when the GPU ran out of memory,
 * RLX_E_GPU otherwise, and the model refuses to run again. Nothing here
 * prints or exits.
 *
 * Shared storage fits Apple silicon, where the GPU and the CPU share
 * memory; on a Mac with a discrete GPU the kernels then read the weights
 * across the bus (a private copy would be the next step there).
 */
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#include <TargetConditionals.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rlx_gpu.h"

#if !__has_feature(objc_arc)
#error "compile with -fobjc-arc"
#endif

#ifndef RLX_MTL
#define RLX_MTL(x) rlx_mtl_##x
#define RLX_MTL_HOST RlxMetalHost
int RLX_MTL(model_new)(const rlx_gpu_schedule *s, const char *msl, size_t msl_bytes, const char *fingerprint,
                       rlx_model **out);
int RLX_MTL(load_weights)(rlx_model *m, const char *path);
int RLX_MTL(load_weights_buffer)(rlx_model *m, const void *buf, size_t len);
int RLX_MTL(run)(rlx_model *m, const void *const *inputs, void *const *outputs);
void RLX_MTL(model_free)(rlx_model *m);
const char *RLX_MTL(device_name)(const rlx_model *m);
#endif

#define RLX_MTL_MIN_BUFFER 16u   /* Metal has no empty buffers */

@interface RLX_MTL_HOST : NSObject {
  @public
    char deviceName[256];   /* "device=NAME", for --bench */
}
@property(nonatomic, assign) const rlx_gpu_schedule *schedule;
@property(nonatomic, strong) id<MTLDevice> device;
@property(nonatomic, strong) id<MTLCommandQueue> queue;
@property(nonatomic, strong) NSArray<id<MTLComputePipelineState>> *pipelines;
@property(nonatomic, strong) id<MTLBuffer> arena;
@property(nonatomic, strong) id<MTLBuffer> weights;
@property(nonatomic, assign) int weightsLoaded;
@property(nonatomic, assign) int broken;   /* a command buffer failed: the device state is unknown */
@property(nonatomic, assign) int serial;   /* RLX_MTL_SERIAL=1 */
@end

@implementation RLX_MTL_HOST
@end

static RLX_MTL_HOST *host_of(const rlx_model *m) { return m && m->device ? (__bridge RLX_MTL_HOST *)m->device : nil; }

static id<MTLDevice> pick_device(void) {
#if TARGET_OS_OSX
    const char *n = getenv("RLX_MTL_DEVICE");
    if (n && *n) {
        char *end;
        long i = strtol(n, &end, 10);
        NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
        if (*end || i < 0 || (unsigned long)i >= all.count) return nil;
        return all[(NSUInteger)i];
    }
#endif
    return MTLCreateSystemDefaultDevice();
}

/* whether the device has the simdgroup functions (simd_shuffle_xor) */
static int has_simdgroups(id<MTLDevice> dev) {
    if (@available(macOS 10.15, iOS 13.0, *))   /* supportsFamily: came after Metal itself */
        return [dev supportsFamily:MTLGPUFamilyApple7] || [dev supportsFamily:MTLGPUFamilyMac2];
    return 0;
}

/* Every kernel that needs simdgroups has a threadgroup-memory variant
 * NAME_tg (model_init picks one per pipeline), so the device always
 * satisfies RLX_GPU_NEED_SUBGROUP. */
static void device_caps(id<MTLDevice> dev, rlx_gpu_caps *caps) {
    memset(caps, 0, sizeof *caps);
    caps->has = RLX_GPU_NEED_F16_ARITH | RLX_GPU_NEED_16BIT | RLX_GPU_NEED_8BIT | RLX_GPU_NEED_INT64 |
                RLX_GPU_NEED_SUBGROUP;
    MTLSize t = dev.maxThreadsPerThreadgroup;
    caps->max_local[0] = (uint32_t)t.width;
    caps->max_local[1] = (uint32_t)t.height;
    caps->max_local[2] = (uint32_t)t.depth;
    caps->max_invocations = t.width < 1024 ? (uint32_t)t.width : 1024u;   /* Apple GPUs: 1024 in all */
    caps->max_shared_bytes = (uint32_t)dev.maxThreadgroupMemoryLength;
    for (int d = 0; d < 3; d++) caps->max_groups[d] = 65535u;   /* what rlxc's grids stay within */
    caps->max_buffer_bytes = (uint64_t)dev.maxBufferLength;
    caps->loop_cap = 0;
}

static id<MTLLibrary> make_library(id<MTLDevice> dev, const char *msl, size_t msl_bytes, int *st) {
    NSError *err = nil;
    const char *path = getenv("RLX_METALLIB");
    if (path && *path) {
        id<MTLLibrary> lib = [dev newLibraryWithURL:[NSURL fileURLWithPath:@(path)] error:&err];
        if (!lib) *st = RLX_E_GPU;
        return lib;
    }
    NSString *src = [[NSString alloc] initWithBytes:msl length:msl_bytes encoding:NSUTF8StringEncoding];
    if (!src) {
        *st = RLX_E_ARG;
        return nil;
    }
    MTLCompileOptions *opts = [[MTLCompileOptions alloc] init];
    /* inf and NaN must survive (rs_relu keeps NaN, max propagates it): no
     * fast math. The property is deprecated in newer SDKs in favour of
     * mathMode, and still honoured. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    opts.fastMathEnabled = NO;
#pragma clang diagnostic pop
    if (@available(macOS 11.0, iOS 14.0, *)) opts.languageVersion = MTLLanguageVersion2_3;
    id<MTLLibrary> lib = [dev newLibraryWithSource:src options:opts error:&err];
    if (!lib) *st = RLX_E_GPU;
    return lib;
}

static int model_init(RLX_MTL_HOST *h, const char *msl, size_t msl_bytes, const char *fingerprint) {
    const rlx_gpu_schedule *s = h.schedule;
    const rlx_model_info *info = s->info;
    id<MTLDevice> dev = pick_device();
    if (!dev) return RLX_E_NODEVICE;
    h.device = dev;
    const char *dn = dev.name.UTF8String;
    snprintf(h->deviceName, sizeof h->deviceName, "device=%s", dn ? dn : "?");
    rlx_gpu_caps caps;
    device_caps(dev, &caps);
    int st = rlx_gpu_check(s, &caps);
    if (st) return st;
    st = RLX_OK;
    id<MTLLibrary> lib = make_library(dev, msl, msl_bytes, &st);
    if (!lib) return st;
    if (fingerprint && ![lib.functionNames containsObject:@(fingerprint)]) return RLX_E_MODEL;
    NSMutableArray<id<MTLComputePipelineState>> *ps = [NSMutableArray arrayWithCapacity:s->nkernels];
    int simd = has_simdgroups(dev);
    for (uint32_t k = 0; k < s->nkernels; k++) {
        const rlx_gpu_kernel *kn = &s->kernels[k];
        int sg = (kn->needs & RLX_GPU_NEED_SUBGROUP) != 0;
        id<MTLComputePipelineState> p = nil;
        NSError *err = nil;
        if (!sg || simd) {
            id<MTLFunction> fn = [lib newFunctionWithName:@(kn->name)];
            if (!fn) return RLX_E_GPU;
            p = [dev newComputePipelineStateWithFunction:fn error:&err];
            if (!p) return RLX_E_GPU;
        }
        /* the shuffles assume simdgroups of 32 (Apple GPUs; others vary) */
        if (sg && (!p || p.threadExecutionWidth != 32)) {
            id<MTLFunction> fn = [lib newFunctionWithName:[@(kn->name) stringByAppendingString:@"_tg"]];
            if (!fn) return RLX_E_GPU;
            p = [dev newComputePipelineStateWithFunction:fn error:&err];
            if (!p) return RLX_E_GPU;
        }
        if ((uint64_t)kn->local[0] * kn->local[1] * kn->local[2] > (uint64_t)p.maxTotalThreadsPerThreadgroup)
            return RLX_E_DEV_WGSIZE;
        [ps addObject:p];
    }
    h.pipelines = ps;
    h.queue = [dev newCommandQueue];
    if (!h.queue) return RLX_E_GPU;
    /* the arena holds the run's status word after the planned bytes (rlx_gpu.h) */
    uint64_t bytes = s->status_offset + 4 > info->arena_bytes ? s->status_offset + 4 : info->arena_bytes;
    if (bytes < RLX_MTL_MIN_BUFFER) bytes = RLX_MTL_MIN_BUFFER;
    h.arena = [dev newBufferWithLength:(NSUInteger)bytes options:MTLResourceStorageModeShared];
    if (!h.arena) return RLX_E_DEV_NOMEM;
    memset(h.arena.contents, 0, (size_t)bytes);
    const char *serial = getenv("RLX_MTL_SERIAL");
    h.serial = serial && !strcmp(serial, "1");
    return RLX_OK;
}

int RLX_MTL(model_new)(const rlx_gpu_schedule *s, const char *msl, size_t msl_bytes, const char *fingerprint,
                       rlx_model **out) {
    if (!out) return RLX_E_ARG;
    *out = NULL;
    int st = rlx_gpu_check(s, NULL);
    if (st) return st;
    if (!msl && !getenv("RLX_METALLIB")) return RLX_E_ARG;
    rlx_model *m = calloc(1, sizeof *m);
    if (!m) return RLX_E_NOMEM;
    @autoreleasepool {
        RLX_MTL_HOST *h = [[RLX_MTL_HOST alloc] init];
        if (!h) {
            free(m);
            return RLX_E_NOMEM;
        }
        h.schedule = s;
        m->info = s->info;
        m->ctx.nthreads = 1;
        m->device = (__bridge_retained void *)h;
        st = model_init(h, msl, msl_bytes, fingerprint);
    }
    if (st) {
        RLX_MTL(model_free)(m);
        return st;
    }
    *out = m;
    return RLX_OK;
}

void RLX_MTL(model_free)(rlx_model *m) {
    if (!m) return;
    if (m->device) {
        (void)(__bridge_transfer RLX_MTL_HOST *)m->device;   /* ARC releases the host */
        m->device = NULL;
    }
    free(m->weights_alloc);
    free(m);
}

/* Copies what the runtime's loader left in m->weights into the device
 * buffer, then drops the host copy. */
static int upload_weights(rlx_model *m, RLX_MTL_HOST *h) {
    int st = RLX_OK;
    size_t n = (size_t)m->info->weights_bytes;
    @autoreleasepool {
        id<MTLBuffer> w = n ? [h.device newBufferWithBytes:m->weights length:n options:MTLResourceStorageModeShared]
                            : [h.device newBufferWithLength:RLX_MTL_MIN_BUFFER options:MTLResourceStorageModeShared];
        if (w) h.weights = w;
        else st = RLX_E_DEV_NOMEM;
    }
    h.weightsLoaded = !st;
    free(m->weights_alloc);
    m->weights_alloc = NULL;
    m->weights = NULL;
    return st;
}

int RLX_MTL(load_weights)(rlx_model *m, const char *path) {
    RLX_MTL_HOST *h = host_of(m);
    if (!h) return RLX_E_ARG;
    int st = rlx_load_weights_file(m, path);
    return st ? st : upload_weights(m, h);
}

int RLX_MTL(load_weights_buffer)(rlx_model *m, const void *buf, size_t len) {
    RLX_MTL_HOST *h = host_of(m);
    if (!h) return RLX_E_ARG;
    int st = rlx_load_weights_buffer(m, buf, len);
    return st ? st : upload_weights(m, h);
}

static int encode_and_wait(RLX_MTL_HOST *h) {
    const rlx_gpu_schedule *s = h.schedule;
    id<MTLCommandBuffer> cb = [h.queue commandBuffer];
    if (!cb) return RLX_E_GPU;
    id<MTLComputeCommandEncoder> enc =
        h.serial ? [cb computeCommandEncoder] : [cb computeCommandEncoderWithDispatchType:MTLDispatchTypeConcurrent];
    if (!enc) return RLX_E_GPU;
    [enc setBuffer:h.arena offset:0 atIndex:0];
    [enc setBuffer:h.weights offset:0 atIndex:1];
    uint32_t bound = UINT32_MAX;
    for (uint32_t i = 0; i < s->ndispatches; i++) {
        const rlx_gpu_dispatch *d = &s->dispatches[i];
        const rlx_gpu_kernel *kn = &s->kernels[d->kernel];
        if (d->barrier && !h.serial) [enc memoryBarrierWithScope:MTLBarrierScopeBuffers];
        if (d->kernel != bound) {
            [enc setComputePipelineState:h.pipelines[d->kernel]];
            bound = d->kernel;
        }
        [enc setBytes:d->push length:sizeof d->push atIndex:2];
        [enc dispatchThreadgroups:MTLSizeMake(d->groups[0], d->groups[1], d->groups[2])
            threadsPerThreadgroup:MTLSizeMake(kn->local[0], kn->local[1], kn->local[2])];
    }
    [enc endEncoding];
    [cb commit];
    [cb waitUntilCompleted];
    if (cb.status == MTLCommandBufferStatusCompleted) return RLX_OK;
    h.broken = 1;
    return cb.error.code == MTLCommandBufferErrorOutOfMemory ? RLX_E_DEV_NOMEM : RLX_E_GPU;
}

int RLX_MTL(run)(rlx_model *m, const void *const *inputs, void *const *outputs) {
    RLX_MTL_HOST *h = host_of(m);
    if (!h) return RLX_E_ARG;
    const rlx_gpu_schedule *s = h.schedule;
    const rlx_model_info *info = m->info;
    if ((info->ninputs && !inputs) || (info->noutputs && !outputs)) return RLX_E_ARG;
    if (!h.weightsLoaded) return RLX_E_STATE;
    if (h.broken) return RLX_E_GPU;
    uint8_t *arena = h.arena.contents;
    for (int i = 0; i < info->ninputs; i++) {
        if (!info->inputs[i].nbytes) continue;
        if (!inputs[i]) return RLX_E_ARG;
        memcpy(arena + info->inputs[i].offset, inputs[i], (size_t)info->inputs[i].nbytes);
    }
    for (int i = 0; i < info->noutputs; i++)
        if (info->outputs[i].nbytes && !outputs[i]) return RLX_E_ARG;
    uint32_t status = 0;
    memcpy(arena + s->status_offset, &status, sizeof status);
    int st;
    @autoreleasepool {
        st = encode_and_wait(h);
    }
    if (st) return st;
    const uint8_t *weights = h.weights.contents;
    for (int i = 0; i < info->noutputs; i++) {
        if (!info->outputs[i].nbytes) continue;
        const uint8_t *from = s->output_in_weights && s->output_in_weights[i] ? weights : arena;
        memcpy(outputs[i], from + info->outputs[i].offset, (size_t)info->outputs[i].nbytes);
    }
    memcpy(&status, arena + s->status_offset, sizeof status);
    return status ? (int)status : RLX_OK;
}

const char *RLX_MTL(device_name)(const rlx_model *m) {
    RLX_MTL_HOST *h = host_of(m);
    return h && h->deviceName[0] ? h->deviceName : "device=none";
}
