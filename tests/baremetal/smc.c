/* Self-modifying code: stores into code already executed (and cached as
 * decoded instructions) must take effect at the next execution. */
#include "bm.h"

__asm__(".text\n"
        ".globl smc_fn\n"
        "smc_fn:\n"
        "   mov $0x11111111, %eax\n"
        "   ret\n"
        ".globl smc_loop\n"
        /* Patches the immediate of the instruction after the jump. */
        "smc_loop:\n"
        "   movl $0x33333333, smc_patch+1\n"
        "   jmp 1f\n"
        "1:\n"
        "smc_patch:\n"
        "   mov $0x22222222, %eax\n"
        "   ret\n");
uint32_t smc_fn(void);
uint32_t smc_loop(void);
extern uint8_t smc_patch[];

void test_main(void)
{
    uint32_t sum = 0;
    for (int i = 0; i < 10; i++)
        sum += smc_fn();
    check_eq("smc_before", sum, 10u * 0x11111111u);
    *(volatile uint32_t *)((uint8_t *)smc_fn + 1) = 0x44444444;
    check_eq("smc_after_store", smc_fn(), 0x44444444);
    *(volatile uint8_t *)((uint8_t *)smc_fn + 1) = 0x55;
    check_eq("smc_after_byte_store", smc_fn(), 0x44444455);
    check_eq("smc_same_block", smc_loop(), 0x33333333);
    *(volatile uint32_t *)(smc_patch + 1) = 0x22222222;
    check_eq("smc_same_block_again", smc_loop(), 0x33333333);
}
