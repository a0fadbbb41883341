/* A guest polling the UART's LSR for THRE at 1200 baud, as Linux's serial
 * console does (a countdown decremented by DEC m32, JZ out): the CPU may
 * fast-forward the loop (cpu/poll.c), and test_cpu_sys_baremetal runs this
 * with and without that and wants the same output and counters.  The
 * second loop also compares the countdown with a limit (CMP m32): its
 * value then decides more than the JZ, so it must not be fast-forwarded
 * past that limit. */
#include "bm.h"

#define COM1 0x3f8

/* poll_thre(limit): sends nothing, waits for THRE with a countdown from
 * 100000; returns what is left of it.  With a non-zero limit it also
 * gives up once the countdown is below the limit. */
__asm__(".text\n"
        ".globl poll_thre\n"
        "poll_thre:\n"
        "   push %ebp\n"
        "   mov %esp, %ebp\n"
        "   push %ebx\n"
        "   mov 8(%ebp), %ebx\n"
        "   pushl $100000\n" /* the countdown, at -8(%ebp) */
        "1: mov $0x3fd, %edx\n"
        "   inb %dx, %al\n"
        "   test $0x20, %al\n"
        "   jnz 3f\n"
        "   decl -8(%ebp)\n"
        "   jz 3f\n"
        "   mov $4, %ecx\n"
        "   call spin\n"
        "   test %ebx, %ebx\n"
        "   jz 1b\n"
        "   cmpl %ebx, -8(%ebp)\n"
        "   jb 3f\n"
        "   test %ebx, %ebx\n" /* the flags at the next IN: not the CMP's */
        "   jmp 1b\n"
        "3: mov -8(%ebp), %eax\n"
        "   add $4, %esp\n"
        "   pop %ebx\n"
        "   pop %ebp\n"
        "   ret\n"
        "spin:\n"
        "   dec %ecx\n"
        "   jnz spin\n"
        "   ret\n");
uint32_t poll_thre(uint32_t limit);

static void uart_init(void)
{
    outb(COM1 + 3, 0x80); /* DLAB */
    outb(COM1 + 0, 96);   /* 115200 / 96 = 1200 baud */
    outb(COM1 + 1, 0);
    outb(COM1 + 3, 0x03); /* 8N1 */
    outb(COM1 + 2, 0x00); /* no FIFO */
    outb(COM1 + 1, 0x00); /* no interrupts */
}

void test_main(void)
{
    uart_init();
    uint32_t left[4];
    for (int k = 0; k < 3; k++) {
        outb(COM1, 'a' + k);
        left[k] = poll_thre(0);
    }
    /* The first character goes to the idle shift register at once (THRE
     * again at once); the next ones wait for the one before, 8.3 ms: the
     * countdown runs down but not out. */
    check("poll_waited", left[1] < 100000 && left[1] > 0 && left[2] < 100000 && left[2] > 0);
    for (int k = 0; k < 3; k++) {
        puts_("poll countdown left ");
        puthex(left[k]);
        puts_("\n");
    }
    outb(COM1, 'x');
    left[3] = poll_thre(90000);
    check_eq("poll_limit", left[3], 89999);
}
