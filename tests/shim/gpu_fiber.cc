/* gpu_fiber.cc - the executor of gpu_fiber.h: fibers, the scheduler and
 * its checks, thread and block orders. See gpu_fiber.h for the model.
 *
 * The scheduler loop of one block:
 *
 *   start every fiber (RUNNABLE)
 *   repeat:
 *     for each fiber in this round's order: run it if RUNNABLE, until it
 *       stops (AT_BARRIER, AT_SUBGROUP) or returns (DONE)
 *     all DONE: the block is finished
 *     release (gpu_fiber.h): the whole block at a barrier, else each
 *       subgroup whose live lanes all wait at an exchange; else deadlock
 *
 * A fiber's stack starts as if the fiber had called the switch: six
 * callee-saved registers, the control words, and fiber_main as the return
 * address, so the first switch to it "returns" into fiber_main.
 */
#include "gpu_fiber.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define GPU_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPU_FIBER_ASAN 1
#endif
#endif
#if defined(__x86_64__) && !defined(GPU_FIBER_ASAN) && !defined(GPU_FIBER_UCONTEXT)
#define GPU_FIBER_ASM 1
#else
#define GPU_FIBER_ASM 0
#endif

namespace gpu_fiber {

Fiber *g_fiber;
Launch g_launch;

namespace {

enum { MAX_THREADS = 1024 };

#if GPU_FIBER_ASM
/* gpu_fiber_switch(&save, load): saves the callee-saved state on this
 * stack and its pointer in *save, then continues the fiber whose stack
 * pointer is `load`. */
extern "C" void gpu_fiber_switch(void **save, void *load);
asm(".text\n"
    ".p2align 4\n"
    ".type gpu_fiber_switch,@function\n"
    "gpu_fiber_switch:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    subq $8, %rsp\n"
    "    stmxcsr (%rsp)\n"
    "    fnstcw 4(%rsp)\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    ldmxcsr (%rsp)\n"
    "    fldcw 4(%rsp)\n"
    "    addq $8, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size gpu_fiber_switch, .-gpu_fiber_switch\n");
#endif

struct Block {
    Fiber f[MAX_THREADS];
    ucontext_t uc[MAX_THREADS];
    ucontext_t sched_uc;
    void *sched_sp;
    unsigned order[MAX_THREADS];
    uint64_t slots[2][MAX_THREADS];
    size_t stack_bytes;
    unsigned nstacks;   /* fibers that have a stack */
};

Block B;
Body g_body;
void *g_arg;
bool g_active;
bool g_failed;
char g_error[512];
unsigned long long g_switches;
int g_order = -1;
unsigned g_seed = 1, g_rng;

size_t stack_size() {
    const char *s = getenv("RLX_SHIM_STACK_KB");
    long kb = s ? atol(s) : 0;
#if defined(GPU_FIBER_ASAN)
    if (kb <= 0) kb = 256;
#else
    if (kb <= 0) kb = 64;
#endif
    return (size_t)kb * 1024;
}

/* to the scheduler, from a fiber */
void to_scheduler() {
    g_switches++;
    Fiber *f = g_fiber;
#if GPU_FIBER_ASM
    gpu_fiber_switch(&f->sp, B.sched_sp);
#else
    swapcontext((ucontext_t *)f->uctx, &B.sched_uc);
#endif
}

/* to fiber f, from the scheduler */
void to_fiber(Fiber *f) {
    g_switches++;
    g_fiber = f;
#if GPU_FIBER_ASM
    gpu_fiber_switch(&B.sched_sp, f->sp);
#else
    swapcontext(&B.sched_uc, (ucontext_t *)f->uctx);
#endif
}

void fiber_main() {
    g_body(g_arg);
    g_fiber->state = DONE;
    to_scheduler();
    abort();   /* a finished fiber is never continued */
}

void set_error(const char *fmt, va_list ap) {
    int n = snprintf(g_error, sizeof g_error, "block (%u,%u,%u) of grid (%u,%u,%u), block size (%u,%u,%u): ",
                     g_launch.bid.x, g_launch.bid.y, g_launch.bid.z, g_launch.grid.x, g_launch.grid.y,
                     g_launch.grid.z, g_launch.block.x, g_launch.block.y, g_launch.block.z);
    if (n > 0 && (size_t)n < sizeof g_error) vsnprintf(g_error + n, sizeof g_error - (size_t)n, fmt, ap);
}

void scheduler_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error(fmt, ap);
    va_end(ap);
    g_failed = true;
}

bool ensure_stacks(unsigned n) {
    size_t want = stack_size();
    if (want != B.stack_bytes) {   /* RLX_SHIM_STACK_KB changed between launches */
        long page = sysconf(_SC_PAGESIZE);
        for (unsigned i = 0; i < B.nstacks; i++) munmap(B.f[i].stack - page, B.stack_bytes + (size_t)page);
        B.nstacks = 0;
        B.stack_bytes = want;
    }
    long page = sysconf(_SC_PAGESIZE);
    for (; B.nstacks < n; B.nstacks++) {
        size_t total = B.stack_bytes + (size_t)page;
        void *p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return false;
        mprotect(p, (size_t)page, PROT_NONE);   /* the guard page below the stack */
        B.f[B.nstacks].stack = (char *)p + page;
    }
    return true;
}

void start_fiber(Fiber *f, unsigned i) {
    const Dim &bd = g_launch.block;
    f->lin = i;
    f->tid = {i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y)};
    f->state = RUNNABLE;
    f->site = 0;
    f->waits = 0;
    f->exchanges = 0;
#if GPU_FIBER_ASM
    uintptr_t top = ((uintptr_t)f->stack + B.stack_bytes) & ~(uintptr_t)15;
    uintptr_t *sp = (uintptr_t *)top;
    *--sp = 0;                           /* fiber_main's return address: it never returns */
    *--sp = (uintptr_t)&fiber_main;      /* where the switch's ret goes */
    for (int r = 0; r < 6; r++) *--sp = 0;   /* rbp rbx r12 r13 r14 r15 */
    uint32_t ctl[2];
    __asm__ volatile("stmxcsr %0" : "=m"(ctl[0]));
    __asm__ volatile("fnstcw %0" : "=m"(ctl[1]));
    *--sp = (uintptr_t)ctl[0] | (uintptr_t)(ctl[1] & 0xffff) << 32;
    f->sp = sp;
#else
    ucontext_t *uc = &B.uc[i];
    getcontext(uc);
    uc->uc_stack.ss_sp = f->stack;
    uc->uc_stack.ss_size = B.stack_bytes;
    uc->uc_link = nullptr;
    makecontext(uc, fiber_main, 0);
    f->uctx = uc;
#endif
}

unsigned next_rand() {
    g_rng = g_rng * 1103515245u + 12345u;
    return g_rng >> 8;
}

void shuffle(unsigned *v, unsigned n) {
    for (unsigned i = n; i > 1; i--) {
        unsigned j = next_rand() % i, t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* Releases what can go on after a round; false (and the error set) if
 * nothing can. */
bool release() {
    unsigned n = g_launch.nthreads, sg = g_launch.subgroup;
    unsigned done = 0, at_barrier = 0;
    for (unsigned i = 0; i < n; i++) {
        done += B.f[i].state == DONE;
        at_barrier += B.f[i].state == AT_BARRIER;
    }
    if (at_barrier && at_barrier + done == n) {
        if (done) {
            scheduler_error("barrier divergence: %u of %u threads returned while the others wait at a barrier "
                            "(site %d)", done, n, B.f[0].state == AT_BARRIER ? B.f[0].site : B.f[n - 1].site);
            return false;
        }
        for (unsigned i = 1; i < n; i++)
            if (B.f[i].site != B.f[0].site || B.f[i].waits != B.f[0].waits) {
                scheduler_error("barrier divergence: thread %u waits at barrier site %d (wait %lu), thread 0 at "
                                "site %d (wait %lu)", i, B.f[i].site, B.f[i].waits, B.f[0].site, B.f[0].waits);
                return false;
            }
        for (unsigned i = 0; i < n; i++) B.f[i].state = RUNNABLE;
        return true;
    }
    bool released = false;
    for (unsigned lo = 0; lo < n; lo += sg) {
        unsigned hi = lo + sg < n ? lo + sg : n, live = 0, waiting = 0, first = hi;
        for (unsigned i = lo; i < hi; i++) {
            if (B.f[i].state == DONE) continue;
            live++;
            if (B.f[i].state == AT_SUBGROUP) {
                waiting++;
                if (first == hi) first = i;
            }
        }
        if (!live || waiting != live) continue;
        if (live != hi - lo) {
            scheduler_error("subgroup divergence: %u of %u lanes of subgroup %u returned while the others wait at "
                            "a subgroup operation (site %d)", hi - lo - live, hi - lo, lo / sg, B.f[first].site);
            return false;
        }
        for (unsigned i = lo; i < hi; i++)
            if (B.f[i].site != B.f[lo].site || B.f[i].waits != B.f[lo].waits) {
                scheduler_error("subgroup divergence: lane %u of subgroup %u is at subgroup operation site %d (wait "
                                "%lu), lane 0 at site %d (wait %lu)", i - lo, lo / sg, B.f[i].site, B.f[i].waits,
                                B.f[lo].site, B.f[lo].waits);
                return false;
            }
        for (unsigned i = lo; i < hi; i++) B.f[i].state = RUNNABLE;
        released = true;
    }
    if (!released) {
        unsigned at_sg = n - done - at_barrier;
        scheduler_error("deadlock: %u threads wait at a block barrier, %u at subgroup operations whose subgroups "
                        "never all arrive, %u returned", at_barrier, at_sg, done);
    }
    return released;
}

/* Runs one block; false on an error. */
bool run_block() {
    unsigned n = g_launch.nthreads;
    for (unsigned i = 0; i < n; i++) start_fiber(&B.f[i], i);
    for (;;) {
        for (unsigned i = 0; i < n; i++) B.order[i] = g_order == ORDER_REVERSE ? n - 1 - i : i;
        if (g_order == ORDER_SHUFFLE) shuffle(B.order, n);
        for (unsigned k = 0; k < n; k++) {
            Fiber *f = &B.f[B.order[k]];
            if (f->state != RUNNABLE) continue;
            to_fiber(f);
            if (g_failed) return false;   /* a shim's fail() inside the fiber */
        }
        unsigned done = 0;
        for (unsigned i = 0; i < n; i++) done += B.f[i].state == DONE;
        if (done == n) return true;
        if (!release()) return false;
    }
}

/* fiber side: stop in `state` at `site` until released */
void wait_here(int state, int site) {
    if (!g_active) fail("a barrier or subgroup operation outside a launch");
    Fiber *f = g_fiber;
    f->state = state;
    f->site = site;
    f->waits++;
    to_scheduler();
}

}  // namespace

unsigned subgroup_lanes() {
    unsigned lo = g_fiber->lin / g_launch.subgroup * g_launch.subgroup;
    return g_launch.nthreads - lo < g_launch.subgroup ? g_launch.nthreads - lo : g_launch.subgroup;
}

void barrier(int site) { wait_here(AT_BARRIER, site); }

const uint64_t *exchange(uint64_t v, int site) {
    Fiber *f = g_fiber;
    unsigned buf = f->exchanges++ & 1u;
    B.slots[buf][f->lin] = v;
    wait_here(AT_SUBGROUP, site);
    return &B.slots[buf][f->lin / g_launch.subgroup * g_launch.subgroup];
}

void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char msg[400];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!g_active || !g_fiber) {
        fprintf(stderr, "gpu_fiber: %s\n", msg);
        abort();
    }
    scheduler_error("thread (%u,%u,%u): %s", g_fiber->tid.x, g_fiber->tid.y, g_fiber->tid.z, msg);
    for (;;) to_scheduler();   /* the scheduler sees g_failed and never comes back */
}

void set_order(Order o, unsigned seed) {
    g_order = o;
    g_seed = seed;
}

Order order() {
    if (g_order < 0) {
        const char *s = getenv("RLX_SHIM_ORDER"), *seed = getenv("RLX_SHIM_SEED");
        g_order = !s || !*s || !strcmp(s, "forward") ? ORDER_FORWARD
                  : !strcmp(s, "reverse")             ? ORDER_REVERSE
                  : !strcmp(s, "shuffle")             ? ORDER_SHUFFLE
                                                      : -2;
        if (g_order == -2) {
            fprintf(stderr, "gpu_fiber: RLX_SHIM_ORDER is forward, reverse or shuffle, not '%s'\n", s);
            abort();
        }
        if (seed && *seed) g_seed = (unsigned)strtoul(seed, nullptr, 10);
    }
    return (Order)g_order;
}

const char *last_error() { return g_error; }

unsigned long long switches() { return g_switches; }

int launch(Dim grid, Dim block, unsigned subgroup, Body body, void *arg) {
    g_error[0] = 0;
    if (g_active) {
        snprintf(g_error, sizeof g_error, "a launch while another one runs (from a kernel, or a second OS thread)");
        return -1;
    }
    unsigned long long nblocks = (unsigned long long)grid.x * grid.y * grid.z;
    unsigned long long nthreads = (unsigned long long)block.x * block.y * block.z;
    if (!nblocks || !nthreads || nthreads > MAX_THREADS || !subgroup || subgroup > 64 || (subgroup & (subgroup - 1))) {
        snprintf(g_error, sizeof g_error, "bad launch: grid (%u,%u,%u), block (%u,%u,%u), subgroup %u", grid.x, grid.y,
                 grid.z, block.x, block.y, block.z, subgroup);
        return -1;
    }
    if (!ensure_stacks((unsigned)nthreads)) {
        snprintf(g_error, sizeof g_error, "out of memory for %llu fiber stacks", nthreads);
        return -1;
    }
    order();
    g_rng = g_seed;
    g_launch = {grid, block, {0, 0, 0}, (unsigned)nthreads, subgroup};
    g_body = body;
    g_arg = arg;
    g_failed = false;
    g_active = true;
    /* blocks in order (forward: x fastest), reversed, or a random permutation:
     * block k of the permutation is ((k * a) + c) mod n over a full cycle, a
     * coprime to n, so no table of blocks is needed */
    unsigned long long a = 1, c = 0;
    if (g_order == ORDER_SHUFFLE && nblocks > 1) {
        a = (next_rand() % nblocks) | 1;
        while (true) {   /* coprime: gcd(a, nblocks) == 1 */
            unsigned long long x = a, y = nblocks;
            while (y) { unsigned long long t = x % y; x = y; y = t; }
            if (x == 1) break;
            a += 2;
        }
        c = next_rand() % nblocks;
    }
    int rc = 0;
    for (unsigned long long k = 0; k < nblocks; k++) {
        unsigned long long b = g_order == ORDER_REVERSE ? nblocks - 1 - k
                                                        : (unsigned long long)(((unsigned __int128)k * a + c) % nblocks);
        g_launch.bid = {(unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y), (unsigned)(b / grid.x / grid.y)};
        if (!run_block()) {
            rc = -1;
            break;
        }
    }
    g_active = false;
    g_fiber = nullptr;
    return rc;
}

}  // namespace gpu_fiber

/* C entry points, for a stand-in driver that dlopens a library of kernels
 * built with this executor inside it. */
extern "C" __attribute__((visibility("default"))) int gpu_fiber_launch(const unsigned grid[3], const unsigned block[3],
                                                                      unsigned subgroup, void (*body)(void *),
                                                                      void *arg) {
    return gpu_fiber::launch({grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, subgroup, body, arg);
}
extern "C" __attribute__((visibility("default"))) const char *gpu_fiber_last_error(void) {
    return gpu_fiber::last_error();
}
