/* Foundation.h - a stand-in for Apple's Foundation, only the part the
 * msl target's host (lib/codegen_msl/metal_host.m) uses, with Apple's
 * names, types and signatures, so that `clang -fsyntax-only -x objective-c
 * -fobjc-arc -fobjc-runtime=macosx-11.0` checks the host's syntax and types
 * on a machine without Apple's SDK. Nothing here is ever linked or run.
 * A declaration missing here fails the check: add it from Apple's
 * documentation, never loosen a type to make the host compile. */
#ifndef RLX_STUB_FOUNDATION_H
#define RLX_STUB_FOUNDATION_H

#include <stddef.h>
#include <stdint.h>

typedef long NSInteger;
typedef unsigned long NSUInteger;
typedef signed char BOOL;
#define YES ((BOOL)1)
#define NO ((BOOL)0)
#define NS_RETURNS_RETAINED __attribute__((ns_returns_retained))
#define NS_RETURNS_INNER_POINTER __attribute__((objc_returns_inner_pointer))
#define NS_ENUM(_type, _name) enum _name : _type _name; enum _name : _type
#define NS_OPTIONS(_type, _name) enum _name : _type _name; enum _name : _type

#define nil ((id)0)
#define NS_ASSUME_NONNULL_BEGIN _Pragma("clang assume_nonnull begin")
#define NS_ASSUME_NONNULL_END _Pragma("clang assume_nonnull end")

NS_ASSUME_NONNULL_BEGIN

typedef NSUInteger NSStringEncoding;
enum { NSUTF8StringEncoding = 4 };

@protocol NSObject
@end

__attribute__((objc_root_class))
@interface NSObject <NSObject> {
    Class isa;
}
+ (instancetype)alloc;
+ (instancetype)new;
- (instancetype)init;
@end

@interface NSString : NSObject
+ (nullable instancetype)stringWithUTF8String:(const char *)nullTerminatedCString;
- (nullable instancetype)initWithBytes:(const void *)bytes
                                length:(NSUInteger)len
                              encoding:(NSStringEncoding)encoding;
@property(nullable, readonly) const char *UTF8String NS_RETURNS_INNER_POINTER;
- (NSString *)stringByAppendingString:(NSString *)aString;
@end

@interface NSArray<__covariant ObjectType> : NSObject
@property(readonly) NSUInteger count;
- (ObjectType)objectAtIndexedSubscript:(NSUInteger)idx;
- (BOOL)containsObject:(ObjectType)anObject;
@end

@interface NSMutableArray<ObjectType> : NSArray<ObjectType>
+ (instancetype)arrayWithCapacity:(NSUInteger)numItems;
- (void)addObject:(ObjectType)anObject;
@end

@interface NSError : NSObject
@property(readonly) NSInteger code;
@end

@interface NSURL : NSObject
+ (NSURL *)fileURLWithPath:(NSString *)path;
@end

NS_ASSUME_NONNULL_END

#endif
