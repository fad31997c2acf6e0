/* gpu_fiber.h - runs GPU kernels on the CPU: one fiber per thread of a block.
 *
 * A test tool (C++17, g++ or clang++), not part of what rlxc ships. The
 * language shims (cuda_shim.h for CUDA; an MSL one can sit on the same
 * executor) map a kernel language's built-ins onto the calls below, so the
 * same kernel text that a GPU compiler takes compiles as C++ and runs here.
 *
 * How a launch runs (gpu_fiber.cc): the blocks of the grid run one after
 * another on the calling OS thread; within a block every thread is a fiber
 * with its own stack. The scheduler runs each runnable fiber until it stops
 * at a block barrier or a subgroup operation, or returns; when none is
 * runnable it releases what can be released:
 *
 *   - every live thread of the block waits at a block barrier: all go on
 *     (if some already returned, or they wait at different barriers, that
 *     is barrier divergence: an error);
 *   - every live lane of a subgroup waits at a subgroup operation: its
 *     lanes go on (lanes that returned, or lanes at different operations:
 *     an error);
 *   - nothing can go on: a deadlock (an error).
 *
 * Errors end the launch: launch() returns nonzero and last_error() says
 * what happened in which block; the abandoned fibers' stacks are reused.
 *
 * The order fibers run in between two releases, and the order of the blocks,
 * come from RLX_SHIM_ORDER: `forward` (the default), `reverse`, or
 * `shuffle` (a new permutation at every release, seeded by RLX_SHIM_SEED,
 * default 1). On a GPU threads interleave arbitrarily; here a thread runs
 * alone until it stops, so a kernel that reads what another thread of its
 * block writes without a barrier between them, or what another block
 * writes, gets another result in another order. Tests run kernels in two
 * orders and compare.
 *
 * Subgroup exchange: a lane publishes a 64-bit value and, once every lane
 * of its subgroup has, reads any lane's value (shuffles, ballots and
 * reductions are built on that). Values alternate between two slot arrays,
 * so one wait per exchange is enough: a lane can only overwrite a slot
 * array again after every lane of its subgroup has passed the exchange in
 * between, that is, has read this one.
 *
 * State is process-global (no thread_local: the language shims' shared
 * memory is a function-local static, shared by the fibers of a block and
 * reused by the next block): one launch at a time per process; a launch
 * from inside a kernel or from a second OS thread is an error.
 *
 * Fibers switch with a few instructions of assembly on x86-64 (callee-saved
 * registers, stack pointer, the SSE and x87 control words), and with
 * ucontext elsewhere, under AddressSanitizer (which follows swapcontext
 * across stacks) or with -DGPU_FIBER_UCONTEXT. Stacks are mmap'd with a
 * guard page below them: an overflow faults instead of corrupting the next
 * fiber. Their size: RLX_SHIM_STACK_KB (default 64, 256 under ASan).
 */
#ifndef GPU_FIBER_H
#define GPU_FIBER_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gpu_fiber {

struct Dim {
    unsigned x, y, z;
};

enum Order { ORDER_FORWARD, ORDER_REVERSE, ORDER_SHUFFLE };

enum State { RUNNABLE, AT_BARRIER, AT_SUBGROUP, DONE };

struct Fiber {
    Dim tid;              /* thread index in the block */
    unsigned lin;         /* linear index: x + y * dim.x + z * dim.x * dim.y */
    int state;            /* State */
    int site;             /* where it waits (the shim passes __LINE__ or similar) */
    unsigned long waits;  /* barriers and subgroup operations passed, for divergence checks */
    unsigned exchanges;   /* subgroup exchanges passed: which slot array is next */
    void *sp;             /* saved stack pointer (assembly switch) */
    void *uctx;           /* ucontext_t * (ucontext switch) */
    char *stack;          /* lowest usable byte */
};

/* The running launch; valid inside a kernel. */
struct Launch {
    Dim grid, block, bid;
    unsigned nthreads, subgroup;
};

extern Fiber *g_fiber;    /* the running fiber */
extern Launch g_launch;

inline const Dim &thread_id() { return g_fiber->tid; }
inline const Dim &block_id() { return g_launch.bid; }
inline const Dim &block_dim() { return g_launch.block; }
inline const Dim &grid_dim() { return g_launch.grid; }
inline unsigned linear_id() { return g_fiber->lin; }
inline unsigned subgroup_size() { return g_launch.subgroup; }
inline unsigned lane() { return g_fiber->lin % g_launch.subgroup; }
inline unsigned subgroup_id() { return g_fiber->lin / g_launch.subgroup; }
/* lanes in this thread's subgroup (the last one of a block may be partial) */
unsigned subgroup_lanes();

/* Waits until every thread of the block has reached a barrier; `site`
 * names the barrier (threads at different sites are divergent). */
void barrier(int site);

/* Publishes v for this lane, waits for every lane of the subgroup, and
 * returns the subgroup's values, lane 0 first (subgroup_lanes() of them);
 * valid until this lane's next exchange but one. */
const uint64_t *exchange(uint64_t v, int site);

/* Ends the launch with an error (a shim's check: a bad shuffle mask, a
 * lane out of range). Does not return. */
[[noreturn]] void fail(const char *fmt, ...);

template <class T> inline uint64_t to_bits(T v) {
    static_assert(sizeof(T) <= 8, "exchange values are at most 64 bits");
    uint64_t b = 0;
    memcpy(&b, &v, sizeof v);
    return b;
}
template <class T> inline T from_bits(uint64_t b) {
    T v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* What launch() runs once per thread. */
typedef void (*Body)(void *arg);

/* Runs body(arg) for every thread of every block: grid and block sizes at
 * least 1, at most 1024 threads per block, subgroups of `subgroup` lanes
 * (a power of two up to 64). Returns 0, or -1 with last_error() set. */
int launch(Dim grid, Dim block, unsigned subgroup, Body body, void *arg);
const char *last_error();

/* The order threads and blocks run in (RLX_SHIM_ORDER at the first launch
 * unless set here first); the seed of ORDER_SHUFFLE. */
void set_order(Order order, unsigned seed);
Order order();

/* Fiber switches in this process so far (a measure of the work). */
unsigned long long switches();

}  // namespace gpu_fiber

#endif
