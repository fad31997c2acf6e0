/* test_shim.cc - the MSL shim's own tests over checks/kernels.metal: a
 * reduction through threadgroup memory against its exact sum, a racy kernel
 * that two thread orders tell apart, half conversions against IEEE
 * binary16 bit patterns worked out by hand, and barrier divergence reported
 * as an error. Closing line: N passed, N failed. A test tool. */
#include <stdio.h>

#include "kernels.metal"

static int npass, nfail;
static void check(bool ok, const char *what) {
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    (ok ? npass : nfail)++;
}

template <class F> static int run(gpu_fiber::Dim grid, gpu_fiber::Dim block, F f) {
    return gpu_fiber::launch(grid, block, 32, [](void *a) { (*(F *)a)(); }, &f);
}
static metal::uint3 lid() { return msl_shim::ids(gpu_fiber::thread_id()); }
static metal::uint3 wg() { return msl_shim::ids(gpu_fiber::block_id()); }

int main() {
    /* 1. tg_sum: 3 groups of 256 small integers (exact in float) */
    static float x[768], y[3];
    for (int i = 0; i < 768; i++) x[i] = (float)((i * 37) % 101 - 50);
    int rc = run({3, 1, 1}, {256, 1, 1}, [&] { tg_sum(x, y, lid(), wg()); });
    bool ok = rc == 0;
    for (int g = 0; g < 3; g++) {
        long want = 0;
        for (int i = 0; i < 256; i++) want += (long)x[g * 256 + i];
        ok = ok && (long)y[g] == want;
    }
    check(ok, "tg_sum: threadgroup memory and barriers give the exact sums");

    /* 2. racy_shift: forward and reverse thread orders differ */
    static float in[64], fwd[64], rev[64];
    for (int i = 0; i < 64; i++) in[i] = (float)i;
    gpu_fiber::set_order(gpu_fiber::ORDER_FORWARD, 1);
    rc = run({1, 1, 1}, {64, 1, 1}, [&] { racy_shift(in, fwd, lid()); });
    gpu_fiber::set_order(gpu_fiber::ORDER_REVERSE, 1);
    rc |= run({1, 1, 1}, {64, 1, 1}, [&] { racy_shift(in, rev, lid()); });
    gpu_fiber::set_order(gpu_fiber::ORDER_FORWARD, 1);
    check(rc == 0 && memcmp(fwd, rev, sizeof fwd) != 0, "racy_shift: a missing barrier changes the result with the order");

    /* 3. half_round: binary16 bit patterns */
    static const struct { uint32_t f; uint16_t h; } cases[] = {
        {0x3eaaaaabu, 0x3555u},   /* 1/3 -> 0.333251953125 */
        {0x477fe000u, 0x7bffu},   /* 65504, the largest half */
        {0x477ff000u, 0x7c00u},   /* 65520 rounds to infinity */
        {0x477fefffu, 0x7bffu},   /* just below 65520 stays finite */
        {0x33800000u, 0x0001u},   /* 2^-24, the smallest subnormal */
        {0x33000000u, 0x0000u},   /* 2^-25: a tie, to even (zero) */
        {0x33000001u, 0x0001u},   /* just above 2^-25 */
        {0x80000000u, 0x8000u},   /* -0 */
        {0x7fc00000u, 0x7e00u},   /* quiet NaN */
        {0x3f801000u, 0x3c00u},   /* 1 + 2^-11: a tie, to even (1) */
        {0x3f803000u, 0x3c02u},   /* 1 + 3 * 2^-11: a tie, to even (1 + 2^-9) */
    };
    enum { NC = sizeof cases / sizeof cases[0] };
    static float hx[32], hy[32];
    static metal::half hh[32];
    for (int i = 0; i < NC; i++) memcpy(&hx[i], &cases[i].f, 4);
    rc = run({1, 1, 1}, {NC, 1, 1}, [&] { half_round(hx, hh, hy, lid()); });
    ok = rc == 0;
    for (int i = 0; i < NC; i++) {
        if (hh[i].bits != cases[i].h) {
            printf("     half(0x%08x) = 0x%04x, want 0x%04x\n", cases[i].f, hh[i].bits, cases[i].h);
            ok = false;
        }
    }
    /* back to float: 1/3's half is 0x3eaaa000, the subnormal 2^-24 exactly */
    uint32_t b0, b4;
    memcpy(&b0, &hy[0], 4);
    memcpy(&b4, &hy[4], 4);
    check(ok && b0 == 0x3eaaa000u && b4 == 0x33800000u, "half: float to half rounds to nearest even, and back");

    /* 4. divergent: an error of the launch, not a hang */
    static float dy[32];
    rc = run({1, 1, 1}, {32, 1, 1}, [&] { divergent(dy, lid()); });
    check(rc != 0 && strstr(gpu_fiber::last_error(), "diverg"), "a barrier some threads skipped is reported");
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail != 0;
}
