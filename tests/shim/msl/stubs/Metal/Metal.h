/* Metal.h - a stand-in for Apple's Metal framework, only the part the msl
 * target's host (lib/codegen_msl/metal_host.m) uses, with Apple's names,
 * types, values and signatures (see Foundation/Foundation.h for why and how
 * it is used). fastMathEnabled carries the deprecation newer SDKs give it,
 * so that the host's pragma around it is checked too. */
#ifndef RLX_STUB_METAL_H
#define RLX_STUB_METAL_H

#import <Foundation/Foundation.h>

NS_ASSUME_NONNULL_BEGIN

typedef struct {
    NSUInteger width, height, depth;
} MTLSize;
static inline MTLSize MTLSizeMake(NSUInteger width, NSUInteger height, NSUInteger depth) {
    MTLSize s = {width, height, depth};
    return s;
}

typedef NS_ENUM(NSInteger, MTLGPUFamily) {
    MTLGPUFamilyApple1 = 1001, MTLGPUFamilyApple2 = 1002, MTLGPUFamilyApple3 = 1003, MTLGPUFamilyApple4 = 1004,
    MTLGPUFamilyApple5 = 1005, MTLGPUFamilyApple6 = 1006, MTLGPUFamilyApple7 = 1007, MTLGPUFamilyApple8 = 1008,
    MTLGPUFamilyApple9 = 1009, MTLGPUFamilyMac1 = 2001, MTLGPUFamilyMac2 = 2002,
};
typedef NS_ENUM(NSUInteger, MTLLanguageVersion) {
    MTLLanguageVersion2_2 = (2 << 16) + 2, MTLLanguageVersion2_3 = (2 << 16) + 3, MTLLanguageVersion2_4 = (2 << 16) + 4,
};
typedef NS_OPTIONS(NSUInteger, MTLResourceOptions) {
    MTLResourceStorageModeShared = 0 << 4, MTLResourceStorageModeManaged = 1 << 4, MTLResourceStorageModePrivate = 2 << 4,
};
typedef NS_ENUM(NSUInteger, MTLDispatchType) { MTLDispatchTypeSerial, MTLDispatchTypeConcurrent };
typedef NS_OPTIONS(NSUInteger, MTLBarrierScope) {
    MTLBarrierScopeBuffers = 1 << 0, MTLBarrierScopeTextures = 1 << 1, MTLBarrierScopeRenderTargets = 1 << 2,
};
typedef NS_ENUM(NSUInteger, MTLCommandBufferStatus) {
    MTLCommandBufferStatusNotEnqueued = 0, MTLCommandBufferStatusEnqueued = 1, MTLCommandBufferStatusCommitted = 2,
    MTLCommandBufferStatusScheduled = 3, MTLCommandBufferStatusCompleted = 4, MTLCommandBufferStatusError = 5,
};
typedef NS_ENUM(NSUInteger, MTLCommandBufferError) {
    MTLCommandBufferErrorNone = 0, MTLCommandBufferErrorInternal = 1, MTLCommandBufferErrorTimeout = 2,
    MTLCommandBufferErrorPageFault = 3, MTLCommandBufferErrorAccessRevoked = 4, MTLCommandBufferErrorNotPermitted = 7,
    MTLCommandBufferErrorOutOfMemory = 8, MTLCommandBufferErrorInvalidResource = 9,
};

@protocol MTLFunction <NSObject>
@end

@protocol MTLLibrary <NSObject>
@property(readonly) NSArray<NSString *> *functionNames;
- (nullable id<MTLFunction>)newFunctionWithName:(NSString *)functionName;
@end

@protocol MTLComputePipelineState <NSObject>
@property(readonly) NSUInteger maxTotalThreadsPerThreadgroup;
@property(readonly) NSUInteger threadExecutionWidth;
@end

@protocol MTLBuffer <NSObject>
@property(readonly) NSUInteger length;
- (void *)contents NS_RETURNS_INNER_POINTER;
@end

@protocol MTLCommandEncoder <NSObject>
- (void)endEncoding;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBytes:(const void *)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)setBuffer:(nullable id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)memoryBarrierWithScope:(MTLBarrierScope)scope;
@end

@protocol MTLCommandBuffer <NSObject>
@property(readonly) MTLCommandBufferStatus status;
@property(nullable, readonly) NSError *error;
- (nullable id<MTLComputeCommandEncoder>)computeCommandEncoder;
- (nullable id<MTLComputeCommandEncoder>)computeCommandEncoderWithDispatchType:(MTLDispatchType)dispatchType;
- (void)commit;
- (void)waitUntilCompleted;
@end

@protocol MTLCommandQueue <NSObject>
- (nullable id<MTLCommandBuffer>)commandBuffer;
@end

@interface MTLCompileOptions : NSObject
@property(readwrite, nonatomic) BOOL fastMathEnabled __attribute__((deprecated("use mathMode instead")));
@property(readwrite, nonatomic) MTLLanguageVersion languageVersion;
@end

@protocol MTLDevice <NSObject>
@property(readonly) NSString *name;
@property(readonly) MTLSize maxThreadsPerThreadgroup;
@property(readonly) NSUInteger maxThreadgroupMemoryLength;
@property(readonly) NSUInteger maxBufferLength;
- (BOOL)supportsFamily:(MTLGPUFamily)gpuFamily;
- (nullable id<MTLCommandQueue>)newCommandQueue;
- (nullable id<MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options;
- (nullable id<MTLBuffer>)newBufferWithBytes:(const void *)pointer
                                      length:(NSUInteger)length
                                     options:(MTLResourceOptions)options;
- (nullable id<MTLLibrary>)newLibraryWithURL:(NSURL *)url error:(__autoreleasing NSError *_Nullable *_Nullable)error;
- (nullable id<MTLLibrary>)newLibraryWithSource:(NSString *)source
                                        options:(nullable MTLCompileOptions *)options
                                          error:(__autoreleasing NSError *_Nullable *_Nullable)error;
- (nullable id<MTLComputePipelineState>)newComputePipelineStateWithFunction:(id<MTLFunction>)computeFunction
                                                                      error:(__autoreleasing NSError *_Nullable *_Nullable)error;
@end

id<MTLDevice> _Nullable MTLCreateSystemDefaultDevice(void) NS_RETURNS_RETAINED;
NSArray<id<MTLDevice>> *MTLCopyAllDevices(void) NS_RETURNS_RETAINED;

NS_ASSUME_NONNULL_END

#endif
