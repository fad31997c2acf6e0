/* startup.c - reset, memory set-up and I/O for the bare-metal example.
 *
 * The vector table (initial stack pointer, reset, the fault handlers)
 * goes first in flash (.vectors, mps2_an386.ld). Reset turns the FPU on (the
 * code is built -mfloat-abi=hard: the first float instruction would fault
 * with it off), copies .data's initial values from flash to RAM, clears
 * .bss, and calls main. _sbrk gives newlib's malloc the RAM between .bss and
 * the stack (the model's arena is malloc'd once, in NAME_init).
 *
 * Output and exit go through semihosting (a bkpt 0xab the debugger or QEMU
 * -semihosting answers): bm_write prints a string, bm_exit ends the program
 * with a status QEMU passes on. On a board without a debugger attached, a
 * semihosting call stops the core: replace these two with the board's UART
 * and a halt loop.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int main(void);
void bm_write(const char *s);
void bm_exit(int status);

extern uint8_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint8_t __heap_start[], __heap_end[], __stack_top[];

static int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void bm_write(const char *s) { semihost(0x04, s); }   /* SYS_WRITE0 */

void bm_exit(int status) {
    /* SYS_EXIT: ADP_Stopped_ApplicationExit is status 0, anything else 1 */
    semihost(0x18, (const void *)(uintptr_t)(status == 0 ? 0x20026 : 0x20024));
    for (;;) {
    }
}

void bm_reset(void) {
    volatile uint32_t *cpacr = (volatile uint32_t *)0xE000ED88;
    *cpacr |= 0xFu << 20;   /* CP10 and CP11: full access to the FPU */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    memcpy(__data_start, __data_load, (size_t)(__data_end - __data_start));
    memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
    bm_exit(main());
}

static void bm_fault(void) {
    bm_write("fault\n");
    bm_exit(1);
}

void *_sbrk(ptrdiff_t incr);
void *_sbrk(ptrdiff_t incr) {
    static uint8_t *brk = __heap_start;
    if (incr < 0 || incr > __heap_end - brk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    uint8_t *old = brk;
    brk += incr;
    return old;
}

/* initial stack pointer, reset, NMI, hard fault, memory, bus and usage faults */
__attribute__((section(".vectors"), used)) static void (*const bm_vectors[7])(void) = {
    (void (*)(void))(uintptr_t)__stack_top, bm_reset, bm_fault, bm_fault, bm_fault, bm_fault, bm_fault,
};
