/* Triple fault: with an empty IDT every exception escalates (#GP -> #DF ->
 * shutdown).  The run must end with a reset request, not this FAIL line. */
#include "bm.h"

void test_main(void)
{
    puts_("triple fault next\n");
    struct __attribute__((packed)) {
        uint16_t limit;
        uint32_t base;
    } idtr = {0, 0};
    __asm__ volatile("lidt %0" ::"m"(idtr));
    __asm__ volatile("mov %w0, %%ds" ::"r"(0x400)); /* #GP(0x400) */
    puts_("FAIL still running after triple fault\n");
}
