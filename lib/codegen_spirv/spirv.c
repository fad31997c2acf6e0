/* spirv.c - GLSL compute kernels to SPIR-V with shaderc, checked with
 * SPIRV-Tools.
 *
 * The GPU kernels rlxc prints are GLSL (#version 450, compute); rlxc
 * compiles each one here, at compile time, so that a generated model holds
 * finished SPIR-V words and the machine that runs it needs no shader
 * compiler. shaderc's C API drives glslang (GLSL -> SPIR-V, with the
 * GL_EXT_shader_explicit_arithmetic_types_* and 16/8-bit storage
 * extensions) and spirv-opt at -O (shaderc_optimization_level_performance:
 * the kernels of tests/unit/test_spirv.c give the same bits with and
 * without it on lavapipe); spvValidate then checks every module for the
 * Vulkan 1.1 environment. Both libraries are linked statically (TOOLCHAIN:
 * Debian's shared libshaderc is built against another glslang and crashes).
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

void rlx_spirv_validate(const uint32_t *words, size_t nwords, const char *kernel_name) {
    spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_1);
    RLX_ASSERT(ctx);
    spv_const_binary_t bin = {words, nwords};
    spv_diagnostic diag = NULL;
    spv_result_t r = spvValidate(ctx, &bin, &diag);
    if (r != SPV_SUCCESS) {
        /* copy the message out before the diagnostic is freed */
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", diag && diag->error ? diag->error : "spvValidate failed");
        spvDiagnosticDestroy(diag);
        spvContextDestroy(ctx);
        spirv_fail(kernel_name, "fails SPIR-V validation", detail);
    }
    spvDiagnosticDestroy(diag);
    spvContextDestroy(ctx);
}

uint32_t *rlx_spirv_compile(const char *glsl_source, const char *kernel_name, size_t *nwords) {
    RLX_ASSERT(glsl_source && kernel_name && nwords);
    shaderc_compiler_t sc = shaderc_compiler_initialize();
    shaderc_compile_options_t opt = shaderc_compile_options_initialize();
    RLX_ASSERT(sc && opt);
    shaderc_compile_options_set_source_language(opt, shaderc_source_language_glsl);
    shaderc_compile_options_set_target_env(opt, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
    shaderc_compile_options_set_optimization_level(opt, shaderc_optimization_level_performance);
    /* the kernel's name stands for the file name in glslang's messages */
    shaderc_compilation_result_t res = shaderc_compile_into_spv(sc, glsl_source, strlen(glsl_source),
                                                                shaderc_compute_shader, kernel_name, "main", opt);
    shaderc_compile_options_release(opt);
    if (!res || shaderc_result_get_compilation_status(res) != shaderc_compilation_status_success) {
        char detail[1024];
        snprintf(detail, sizeof detail, "%s", res ? shaderc_result_get_error_message(res) : "shaderc failed");
        shaderc_result_release(res);
        shaderc_compiler_release(sc);
        spirv_fail(kernel_name, "does not compile", detail);
    }
    size_t bytes = shaderc_result_get_length(res);
    RLX_ASSERT(bytes && bytes % 4 == 0);
    uint32_t *words = rlx_alloc(bytes);
    memcpy(words, shaderc_result_get_bytes(res), bytes);
    shaderc_result_release(res);
    shaderc_compiler_release(sc);
    *nwords = bytes / 4;
    rlx_spirv_validate(words, *nwords, kernel_name);
    return words;
}
