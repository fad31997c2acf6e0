/* TargetConditionals.h - a stand-in for Apple's: the syntax check of the
 * msl target's host (see Foundation/Foundation.h) is of its macOS build. */
#ifndef RLX_STUB_TARGETCONDITIONALS_H
#define RLX_STUB_TARGETCONDITIONALS_H
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
#endif
