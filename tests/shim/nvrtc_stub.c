/* nvrtc_stub.c - a stand-in libnvrtc that rejects every program, so that
 * rlxc's handling of a kernel NVRTC refuses can be tested (RLXC_NVRTC=this
 * library). A test tool.
 *
 * It answers as NVRTC 13.0 for sm_80 and sm_90 would, except that
 * nvrtcCompileProgram fails with the log
 *   NAME(LINE): error: rejected by the NVRTC stub
 * where NAME is the program's name and LINE is $RLX_NVRTC_STUB_LINE
 * (default 1): rlxc must name the kernel whose part of OUT.cu holds that
 * line. Build: cc -shared -fPIC nvrtc_stub.c -o libnvrtc_stub.so
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char name[256];
    char log[512];
} Program;

int nvrtcVersion(int *major, int *minor) {
    *major = 13;
    *minor = 0;
    return 0;
}
const char *nvrtcGetErrorString(int r) { return r ? "NVRTC_ERROR_COMPILATION" : "NVRTC_SUCCESS"; }
int nvrtcGetNumSupportedArchs(int *n) {
    *n = 2;
    return 0;
}
int nvrtcGetSupportedArchs(int *a) {
    a[0] = 80;
    a[1] = 90;
    return 0;
}
int nvrtcCreateProgram(Program **p, const char *src, const char *name, int nh, const char *const *h,
                       const char *const *hn) {
    (void)src, (void)nh, (void)h, (void)hn;
    *p = calloc(1, sizeof **p);
    if (!*p) return 1;
    snprintf((*p)->name, sizeof (*p)->name, "%s", name ? name : "default_program");
    return 0;
}
int nvrtcDestroyProgram(Program **p) {
    free(*p);
    *p = NULL;
    return 0;
}
int nvrtcCompileProgram(Program *p, int n, const char *const *opts) {
    (void)n, (void)opts;
    const char *line = getenv("RLX_NVRTC_STUB_LINE");
    snprintf(p->log, sizeof p->log, "%s(%s): error: rejected by the NVRTC stub\n\n1 error detected\n", p->name,
             line && *line ? line : "1");
    return 6;   /* NVRTC_ERROR_COMPILATION */
}
int nvrtcGetProgramLogSize(Program *p, size_t *n) {
    *n = strlen(p->log) + 1;
    return 0;
}
int nvrtcGetProgramLog(Program *p, char *log) {
    memcpy(log, p->log, strlen(p->log) + 1);
    return 0;
}
int nvrtcGetPTXSize(Program *p, size_t *n) {
    (void)p;
    *n = 0;
    return 1;
}
int nvrtcGetPTX(Program *p, char *out) {
    (void)p, (void)out;
    return 1;
}
int nvrtcGetCUBINSize(Program *p, size_t *n) {
    (void)p;
    *n = 0;
    return 1;
}
int nvrtcGetCUBIN(Program *p, char *out) {
    (void)p, (void)out;
    return 1;
}
