/* simd/simd.h - spirv-cross's MSL includes Apple's <simd/simd.h>; rlxc's
 * kernels and the translations the shim runs use nothing of it. A test
 * tool (see ../metal_stdlib). */
#ifndef RLX_MSL_SHIM_SIMD_H
#define RLX_MSL_SHIM_SIMD_H
#endif
