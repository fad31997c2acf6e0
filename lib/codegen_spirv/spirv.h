/* spirv.h - GLSL compute kernels to SPIR-V, at compile time (spirv.c). */
#ifndef RLX_SPIRV_H
#define RLX_SPIRV_H

#include <stddef.h>
#include <stdint.h>

/* The target environment every kernel is compiled and validated for:
 * Vulkan 1.1 (SPIR-V 1.3), the oldest that has subgroups and 16-bit
 * storage in core; rlx_vk.c asks for a Vulkan 1.1 device. */
#define RLX_SPIRV_ENV "vulkan1.1"

/* Compiles one GLSL compute shader (#version 450, entry point main) to
 * SPIR-V and validates it. Returns the module's words (*nwords of them),
 * allocated from the compiler's arena; the same source gives the same words.
 * A compile error or a validation failure is an internal error
 * (rlx_fatal_internal) whose message names the kernel and the first error. */
uint32_t *rlx_spirv_compile(const char *glsl_source, const char *kernel_name, size_t *nwords);

/* Validates a SPIR-V module for RLX_SPIRV_ENV with SPIRV-Tools; a failure
 * is an internal error naming the kernel. rlx_spirv_compile calls it. */
void rlx_spirv_validate(const uint32_t *words, size_t nwords, const char *kernel_name);

#endif
