/* test_spirv.c - lib/codegen_spirv/spirv.c: GLSL compute kernels to
 * validated SPIR-V.
 *
 * What compiles must be a Vulkan 1.1 module (SPIR-V 1.3) and the same
 * words every time, in this process and in another; the extensions the GPU
 * kernels use must be accepted. A kernel that does not compile or validate
 * is an internal error: those cases run in a child process, which must die
 * of abort() with one line on stderr naming the kernel and the first error.
 * (Running the modules is test_vk.c's part.)
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen_spirv/spirv.h"

static const char *K_ADD =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) buffer Arena { float a[]; };\n"
    "layout(push_constant) uniform P { uint n, x, y, z; } p;\n"
    "void main() {\n"
    "    uint i = gl_GlobalInvocationID.x;\n"
    "    if (i < p.n) a[p.z + i] = a[p.x + i] + a[p.y + i];\n"
    "}\n";

Test(spirv, compiles_to_a_vulkan_1_1_module) {
    size_t n = 0;
    uint32_t *w = rlx_spirv_compile(K_ADD, "k_add", &n);
    cr_assert(w && n > 5);
    cr_expect_eq(w[0], 0x07230203u, "magic");
    cr_expect_eq(w[1], 0x00010300u, "SPIR-V 1.3, Vulkan 1.1's");
    cr_expect_eq(w[4], 0u, "schema");
    rlx_spirv_validate(w, n, "k_add");   /* returns: valid */
}

/* Compiles K_ADD in a child process and reads its words back. */
static uint32_t *compile_in_child(size_t *n) {
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        size_t nw;
        uint32_t *w = rlx_spirv_compile(K_ADD, "k_add", &nw);
        _exit(write(fd[1], w, nw * 4) == (ssize_t)(nw * 4) ? 0 : 1);
    }
    close(fd[1]);
    static uint32_t buf[2][4096];
    static int which;
    uint32_t *out = buf[which++ % 2];
    size_t got = 0;
    ssize_t r;
    while ((r = read(fd[0], (char *)out + got, sizeof buf[0] - got)) > 0) got += (size_t)r;
    close(fd[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    *n = got / 4;
    return out;
}

Test(spirv, same_words_every_time) {
    size_t n1, n2, n3, n4;
    uint32_t *a = rlx_spirv_compile(K_ADD, "k_add", &n1), *b = rlx_spirv_compile(K_ADD, "k_add", &n2);
    cr_assert_eq(n1, n2);
    cr_expect_eq(memcmp(a, b, n1 * 4), 0, "twice in one process");
    uint32_t *c = compile_in_child(&n3), *d = compile_in_child(&n4);
    cr_assert(n3 == n1 && n4 == n1);
    cr_expect_eq(memcmp(a, c, n1 * 4), 0, "in another process");
    cr_expect_eq(memcmp(c, d, n1 * 4), 0, "in two other processes");
    /* and the kernel's name is not in the module: the words depend on the source only */
    size_t n5;
    uint32_t *e = rlx_spirv_compile(K_ADD, "another_name", &n5);
    cr_expect(n5 == n1 && !memcmp(a, e, n1 * 4));
}

Test(spirv, accepts_the_extensions_gpu_kernels_use) {
    static const char *k =
        "#version 450\n"
        "#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require\n"
        "#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require\n"
        "#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require\n"
        "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n"
        "#extension GL_EXT_shader_16bit_storage : require\n"
        "#extension GL_EXT_shader_8bit_storage : require\n"
        "#extension GL_KHR_shader_subgroup_arithmetic : require\n"
        "#extension GL_KHR_shader_subgroup_shuffle : require\n"
        "layout(local_size_x = 64) in;\n"
        "layout(std430, set = 0, binding = 0) buffer A { float a[]; };\n"
        "layout(std430, set = 0, binding = 0) buffer AH { float16_t ah[]; };\n"
        "layout(std430, set = 0, binding = 0) buffer AB { int8_t ab[]; };\n"
        "layout(std430, set = 0, binding = 1) readonly buffer W { uint16_t ws[]; };\n"
        "layout(push_constant) uniform P { uint off[32]; } p;\n"
        "shared float part[64];\n"
        "void main() {\n"
        "    uint i = gl_GlobalInvocationID.x;\n"
        "    float16_t h = ah[p.off[0] + i] * float16_t(0.5);\n"
        "    int64_t q = int64_t(ab[p.off[1] + i]) * int64_t(ws[i]);\n"
        "    int16_t s = int16_t(ab[i]) + int16_t(3);\n"
        "    part[gl_LocalInvocationID.x] = float(h) + float(q) + float(s);\n"
        "    barrier();\n"
        "    a[p.off[2] + i] = subgroupAdd(part[gl_LocalInvocationID.x]) + subgroupShuffle(float(h), 0u);\n"
        "    ab[p.off[3] + i] = int8_t(s);\n"
        "}\n";
    size_t n;
    uint32_t *w = rlx_spirv_compile(k, "k_ext", &n);
    cr_assert(w && n > 5 && w[0] == 0x07230203u);
}

/* Runs fn in a child with stderr captured; returns what it printed and
 * whether it died of SIGABRT. */
static int dies_of_abort(void (*fn)(void), char *err, size_t cap) {
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    fflush(stderr);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        fn();
        _exit(0);   /* returned: not an internal error */
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < cap && (r = read(fd[0], err + got, cap - 1 - got)) > 0) got += (size_t)r;
    err[got] = 0;
    close(fd[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void compile_broken(void) {
    size_t n;
    rlx_spirv_compile("#version 450\n"
                      "layout(local_size_x = 1) in;\n"
                      "layout(std430, set = 0, binding = 0) buffer A { float a[]; };\n"
                      "void main() {\n"
                      "    a[0] = undeclared_thing;\n"
                      "}\n",
                      "k_broken", &n);
}

Test(spirv, a_compile_error_is_an_internal_error_naming_the_kernel) {
    char err[4096];
    cr_assert(dies_of_abort(compile_broken, err, sizeof err), "child output: %s", err);
    cr_expect(strstr(err, "rlxc: internal error at "), "%s", err);
    cr_expect(strstr(err, "spirv: kernel 'k_broken' does not compile: "), "%s", err);
    /* glslang's first error line: the kernel's name, the line, the identifier */
    cr_expect(strstr(err, "k_broken:5: error:") && strstr(err, "undeclared_thing"), "%s", err);
    cr_expect_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
}

static void validate_broken(void) {
    size_t n;
    uint32_t *w = rlx_spirv_compile(K_ADD, "k_add", &n);
    w[3] = 2;   /* an id bound smaller than the ids the module uses */
    rlx_spirv_validate(w, n, "k_bad_module");
}

Test(spirv, a_validation_failure_is_an_internal_error_naming_the_kernel) {
    char err[4096];
    cr_assert(dies_of_abort(validate_broken, err, sizeof err), "child output: %s", err);
    cr_expect(strstr(err, "spirv: kernel 'k_bad_module' fails SPIR-V validation: "), "%s", err);
    cr_expect_eq(strchr(err, '\n'), err + strlen(err) - 1, "one line: %s", err);
}
