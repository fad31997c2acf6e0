/* cuda_status.c - the CUDA host's statuses and results, through the
 * stand-in driver (tests/shim/cuda_driver.cc).
 *
 * Linked with the cuda-target code rlxc generated for two models of
 * cuda.sh: "tiny" (y = x * w + b, x:[2,3], w:[3], b:[1]) and "gath"
 * (y = Gather(t, idx), t:[4] a weight, idx:[2] an i64 input), and with
 * runtime_min. argv: the stand-in libcuda.so.1, tiny's weights and kernels
 * library (tests/shim/kernels.sh), gath's, and the toolkit's stub
 * libcuda.so (or "-" if there is none). Each case
 * sets the environment the host and the stand-in read, then calls the
 * generated API:
 *
 *   no library, the stub library          RLX_E_NOLOADER
 *   no device, device 5 of 1, a device     RLX_E_NODEVICE
 *   older than the PTX's sm_80
 *   a driver older than the PTX           RLX_E_PTX_VERSION
 *   too little device memory              RLX_E_DEV_NOMEM
 *   a run before the weights              RLX_E_STATE
 *   a run, and a run on the caller's      RLX_OK and y exact (computed here
 *   stream (rlx_cuda_set_stream)          by hand from cuda.sh's weights)
 *   a Gather index out of range           RLX_E_RANGE (the status word), then
 *                                         RLX_OK again for a good index
 *
 * The stream case creates its stream through the same driver the host
 * opened (dlopen of the same path gives the same library). Prints "ok NAME"
 * or "FAIL NAME: ..." per check.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiny.h"
#include "gath.h"
#include "rlx_gpu.h"

static int failures;

static void expect_status(const char *what, int got, int want) {
    if (got == want) printf("ok   %s\n", what);
    else {
        printf("FAIL %s: status %d (%s), want %d (%s)\n", what, got, rlx_status_str(got), want,
               rlx_status_str(want));
        failures++;
    }
}

static void expect(const char *what, int cond, const char *detail) {
    if (cond) printf("ok   %s\n", what);
    else {
        printf("FAIL %s: %s\n", what, detail);
        failures++;
    }
}

/* sets or clears one variable of the case's environment */
static void env(const char *name, const char *value) {
    if (value) setenv(name, value, 1);
    else unsetenv(name);
}

static void shim_defaults(const char *driver) {
    env("RLX_LIBCUDA", driver);
    env("RLX_SHIM_DEVICES", NULL);
    env("RLX_SHIM_CC", NULL);
    env("RLX_SHIM_DRIVER", NULL);
    env("RLX_SHIM_MEM", NULL);
    env("RLX_CUDA_DEVICE", NULL);
}

/* init, expecting `want`; frees what it made */
static void expect_init(const char *what, int want) {
    rlx_model *m = NULL;
    int st = tiny_init(&m);
    expect_status(what, st, want);
    if (st == RLX_OK) tiny_free(m);
    else expect("  ...and no model is returned", m == NULL, "a model came back from a failed init");
}

static const float x_in[6] = {1, 2, 3, 4, 5, 6};
/* x * [0.5, -2, 4] + 0.25, row by row; every value is exact in f32 */
static const float y_want[6] = {0.75f, -3.75f, 12.25f, 2.25f, -9.75f, 24.25f};

static void expect_result(const char *what, rlx_model *m) {
    float y[6];
    for (int i = 0; i < 6; i++) y[i] = -12345.0f;
    const void *in[1] = {x_in};
    void *out[1] = {y};
    char name[128];
    snprintf(name, sizeof name, "%s: run", what);
    expect_status(name, tiny_run(m, in, out), RLX_OK);
    char detail[128] = "";
    int same = 1;
    for (int i = 0; i < 6 && same; i++)
        if (y[i] != y_want[i]) {
            snprintf(detail, sizeof detail, "y[%d] = %.9g, want %.9g", i, y[i], y_want[i]);
            same = 0;
        }
    snprintf(name, sizeof name, "%s: y = x*w + b exactly", what);
    expect(name, same, detail);
}

typedef int (*GetProc)(const char *, void **, int, unsigned long long, int *);

/* The caller's side of the stream case: the driver the host uses (dlopen
 * of the same path gives the same library), its primary context, a stream. */
static struct {
    void *lib, *ctx, *stream;
    int (*retain)(void **, int), (*release)(int), (*push)(void *), (*pop)(void **);
    int (*create)(void **, unsigned), (*destroy)(void *);
} user;

static void *user_stream(const char *driver) {
    user.lib = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
    void *sym = user.lib ? dlsym(user.lib, "cuGetProcAddress_v2") : NULL;
    if (!sym) return NULL;
    GetProc gpa;
    memcpy(&gpa, &sym, sizeof gpa);
    static const char *const names[6] = {"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuCtxPushCurrent",
                                         "cuCtxPopCurrent", "cuStreamCreate", "cuStreamDestroy"};
    void *p[6] = {0};
    for (int i = 0; i < 6; i++)
        if (gpa(names[i], &p[i], 12000, 0, NULL) || !p[i]) return NULL;
    memcpy(&user.retain, &p[0], sizeof p[0]);
    memcpy(&user.release, &p[1], sizeof p[1]);
    memcpy(&user.push, &p[2], sizeof p[2]);
    memcpy(&user.pop, &p[3], sizeof p[3]);
    memcpy(&user.create, &p[4], sizeof p[4]);
    memcpy(&user.destroy, &p[5], sizeof p[5]);
    void *old;
    if (user.retain(&user.ctx, 0) || user.push(user.ctx) || user.create(&user.stream, 1) || user.pop(&old))
        return NULL;
    return user.stream;
}

/* destroys the stream and lets go of the context and the library */
static void user_done(void) {
    void *old;
    if (user.stream && !user.push(user.ctx)) {
        user.destroy(user.stream);
        user.pop(&old);
    }
    if (user.ctx) user.release(0);
    if (user.lib) dlclose(user.lib);
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s LIBCUDA TINY.weights TINY.so GATH.weights GATH.so STUB|-\n", argv[0]);
        return 2;
    }
    const char *driver = argv[1], *tiny_w = argv[2], *gath_w = argv[4], *stub = argv[6];
    env("RLX_SHIM_KERNELS", argv[3]);   /* the stand-in loads a module's kernels from it */

    shim_defaults("/nonexistent/libcuda.so.1");
    expect_init("no driver library: RLX_E_NOLOADER", RLX_E_NOLOADER);
    if (strcmp(stub, "-")) {
        shim_defaults(stub);
        expect_init("the toolkit's stub libcuda: RLX_E_NOLOADER", RLX_E_NOLOADER);
    }
    shim_defaults(driver);
    env("RLX_SHIM_DEVICES", "0");
    expect_init("no device: RLX_E_NODEVICE", RLX_E_NODEVICE);
    shim_defaults(driver);
    env("RLX_CUDA_DEVICE", "5");
    expect_init("RLX_CUDA_DEVICE=5 of 1 device: RLX_E_NODEVICE", RLX_E_NODEVICE);
    shim_defaults(driver);
    env("RLX_SHIM_CC", "75");
    expect_init("an sm_75 device for sm_80 PTX: RLX_E_NODEVICE", RLX_E_NODEVICE);
    shim_defaults(driver);
    env("RLX_SHIM_DRIVER", "12080");
    expect_init("a CUDA 12.8 driver for PTX 9.0: RLX_E_PTX_VERSION", RLX_E_PTX_VERSION);
    shim_defaults(driver);
    env("RLX_SHIM_MEM", "300");   /* more than either buffer, less than both */
    expect_init("300 bytes of device memory: RLX_E_DEV_NOMEM", RLX_E_DEV_NOMEM);

    shim_defaults(driver);
    rlx_model *m = NULL;
    expect_status("init", tiny_init(&m), RLX_OK);
    if (!m) return 1;
    float y[6];
    const void *in[1] = {x_in};
    void *out[1] = {y};
    expect_status("a run before the weights: RLX_E_STATE", tiny_run(m, in, out), RLX_E_STATE);
    expect_status("load the weights", tiny_load_weights(m, tiny_w), RLX_OK);
    expect_result("the host's stream", m);
    expect_result("again (the graph replayed)", m);
    void *s = user_stream(driver);
    expect("a stream of the caller's", s != NULL, "could not create one through the stand-in");
    if (s) {
        expect_status("rlx_cuda_set_stream", rlx_cuda_set_stream(m, s), RLX_OK);
        expect_result("the caller's stream", m);
        expect_status("rlx_cuda_set_stream(NULL): the host's again", rlx_cuda_set_stream(m, NULL), RLX_OK);
        expect_result("the host's stream after", m);
    }
    user_done();
    expect("device name", !strcmp(rlx_cuda_device_name(m), "device=rlx CPU shim (sm_90)"), rlx_cuda_device_name(m));
    tiny_free(m);

    /* the status word: t = [10, 20, 30, 40]; idx 5 is out of range, -1 is the last */
    rlx_model *g = NULL;
    env("RLX_SHIM_KERNELS", argv[5]);
    expect_status("gath: init", gath_init(&g), RLX_OK);
    if (!g) return 1;
    expect_status("gath: load the weights", gath_load_weights(g, gath_w), RLX_OK);
    int64_t bad[2] = {1, 5}, good[2] = {-1, 0};
    float gy[2] = {0, 0};
    const void *gin[1] = {bad};
    void *gout[1] = {gy};
    expect_status("a Gather index out of range: RLX_E_RANGE", gath_run(g, gin, gout), RLX_E_RANGE);
    gin[0] = good;
    expect_status("the next run, in range: RLX_OK (the status word cleared)", gath_run(g, gin, gout), RLX_OK);
    char detail[64];
    snprintf(detail, sizeof detail, "y = [%g, %g], want [40, 10]", gy[0], gy[1]);
    expect("gath: y = t[idx]", gy[0] == 40.0f && gy[1] == 10.0f, detail);
    gath_free(g);
    return failures ? 1 : 0;
}
