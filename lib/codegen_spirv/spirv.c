/* spirv.c - GLSL compute kernels to SPIR-V with shaderc, checked with
 * SPIRV-Tools.
 *
 * The GPU kernels rlxc prints are GLSL (#version 450, compute); rlxc
 * compiles each one here, at compile time, so that a generated model holds
 * finished SPIR-V words and the machine that runs it needs no shader
 * compiler. shaderc's C API drives glslang (GLSL -> SPIR-V, with the
 * GL_EXT_shader_explicit_arithmetic_types_* and 16/8-bit storage
 * extensions), without spirv-opt: -O (shaderc_optimization_level_performance)
 * changes results. Its folding rewrites a division by a constant into a
 * multiplication by the rounded reciprocal: on lavapipe, 4096 of 4096
 * quotients x / 7 equal the CPU's IEEE division without -O, 1869 with it
 * (test_vk.c's exact_division). The driver optimizes the module again
 * anyway, so -O would mainly shrink the words. spvValidate then checks
 * every module for the Vulkan 1.1 environment. Both libraries are linked
 * statically (TOOLCHAIN: Debian's shared libshaderc is built against
 * another glslang and crashes).
 *
 * One shaderc compiler serves the whole process: its first compile costs
 * about 100 ms (glslang's setup), later ones under a millisecond for a
 * small kernel, and a new compiler pays the 100 ms again. It is made on the
 * first call (so the first call must not race another) and lives until
 * the process ends; so does the SPIRV-Tools context.
 *
 * A kernel that does not compile or validate is a bug in rlxc's templates,
 * never the user's model, so it is an internal error: rlx_fatal_internal
 * with the kernel's name and the first line of the diagnostic. Neither
 * library stamps times or paths into the module (no debug info is asked
 * for), so the same source gives the same words in every run.
 */
#include "spirv.h"

#include <shaderc/shaderc.h>
#include <spirv-tools/libspirv.h>
#include <string.h>

#include "../rlx.h"

/* Aborts with "spirv: kernel 'NAME' WHAT: FIRST LINE OF DETAIL". */
static void spirv_fail(const char *kernel_name, const char *what, const char *detail) {
    size_t len = detail ? strcspn(detail, "\n") : 0;
    char msg[1024];
    snprintf(msg, sizeof msg, "spirv: kernel '%s' %s: %.*s", kernel_name, what, (int)(len < 800 ? len : 800),
             detail ? detail : "");
    rlx_fatal_internal(__FILE__, __LINE__, msg);
}

static shaderc_compiler_t spirv_compiler;
static shaderc_compile_options_t spirv_options;
static spv_context spirv_context;

void rlx_spirv_validate(const uint32_t *words, size_t nwords, const char *kernel_name) {
    if (!spirv_context) spirv_context = spvContextCreate(SPV_ENV_VULKAN_1_1);
    RLX_ASSERT(spirv_context);
    spv_const_binary_t bin = {words, nwords};
    spv_diagnostic diag = NULL;
    spv_result_t r = spvValidate(spirv_context, &bin, &diag);
    if (r != SPV_SUCCESS) {
        /* copy the message out before the diagnostic is freed */
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", diag && diag->error ? diag->error : "spvValidate failed");
        spvDiagnosticDestroy(diag);
        spirv_fail(kernel_name, "fails SPIR-V validation", detail);
    }
    spvDiagnosticDestroy(diag);
}

uint32_t *rlx_spirv_compile(const char *glsl_source, const char *kernel_name, size_t *nwords) {
    RLX_ASSERT(glsl_source && kernel_name && nwords);
    if (!spirv_compiler) {
        spirv_compiler = shaderc_compiler_initialize();
        spirv_options = shaderc_compile_options_initialize();
        RLX_ASSERT(spirv_compiler && spirv_options);
        shaderc_compile_options_set_source_language(spirv_options, shaderc_source_language_glsl);
        shaderc_compile_options_set_target_env(spirv_options, shaderc_target_env_vulkan,
                                               shaderc_env_version_vulkan_1_1);
        /* not -O: see above */
        shaderc_compile_options_set_optimization_level(spirv_options, shaderc_optimization_level_zero);
    }
    /* the kernel's name stands for the file name in glslang's messages */
    shaderc_compilation_result_t res = shaderc_compile_into_spv(
        spirv_compiler, glsl_source, strlen(glsl_source), shaderc_compute_shader, kernel_name, "main", spirv_options);
    if (!res || shaderc_result_get_compilation_status(res) != shaderc_compilation_status_success) {
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", res ? shaderc_result_get_error_message(res) : "shaderc failed");
        if (res) shaderc_result_release(res);
        spirv_fail(kernel_name, "does not compile", detail);
    }
    size_t bytes = shaderc_result_get_length(res);
    RLX_ASSERT(bytes && bytes % 4 == 0);
    uint32_t *words = rlx_alloc(bytes);
    memcpy(words, shaderc_result_get_bytes(res), bytes);
    shaderc_result_release(res);
    *nwords = bytes / 4;
    rlx_spirv_validate(words, *nwords, kernel_name);
    return words;
}
