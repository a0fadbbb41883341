/* Stack-size rules of instructions that load SS or write below the stack
 * pointer (SDM vol. 2): POP SS moves ESP by the stack size in force at the
 * pop, not by the size of the SS it loads; ENTER checks that its final
 * stack pointer is writable (#SS beyond the limit, #PF on a page a write
 * there would fault) before it changes ESP or EBP. */
#include "bm.h"

#define P  1u
#define RW 2u
#define US 4u

static uint32_t pd[1024] __attribute__((aligned(4096)));
static uint32_t pt[2][1024] __attribute__((aligned(4096)));
/* 64 KB stack area for the 16-bit segments, 64 KB aligned so that an
 * offset's low 16 bits are its offset in the area. */
static uint8_t area[65536] __attribute__((aligned(65536)));
/* Two pages for the paged ENTER case: page 0 supervisor, page 1 user. */
static uint8_t epages[2][4096] __attribute__((aligned(4096)));

volatile uint32_t saved_esp, saved_ebp, got_esp, got_ebp;

/* Old SS 16-bit, ESP 0x0002FFFC: POP SS (32-bit operand) of a 32-bit
 * data segment's selector; SP wraps in 16 bits: ESP = 0x00020000. */
static void pop_ss32_from_16bit_stack(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "mov %0, %%ss\n"
                     "mov $0x0002fffc, %%esp\n"
                     "pop %%ss\n"
                     "mov %%esp, got_esp\n"
                     "mov $0x10, %%ax\n"
                     "mov %%ax, %%ss\n"
                     "mov saved_esp, %%esp\n" ::"r"((uint32_t)SEL_SLOT_A)
                     : "eax", "memory");
}
/* The same with a 16-bit operand (66 17) from SP 0xFFFE. */
static void pop_ss16_from_16bit_stack(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "mov %0, %%ss\n"
                     "mov $0x0002fffe, %%esp\n"
                     "popw %%ss\n"
                     "mov %%esp, got_esp\n"
                     "mov $0x10, %%ax\n"
                     "mov %%ax, %%ss\n"
                     "mov saved_esp, %%esp\n" ::"r"((uint32_t)SEL_SLOT_A)
                     : "eax", "memory");
}
/* Old SS 32-bit (flat), new SS 16-bit: ESP goes up by 4 in 32 bits. */
volatile uint32_t flat_esp;
static void pop_ss32_from_32bit_stack(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "mov flat_esp, %%esp\n"
                     "pop %%ss\n"
                     "mov %%esp, got_esp\n"
                     "mov $0x10, %%ax\n"
                     "mov %%ax, %%ss\n"
                     "mov saved_esp, %%esp\n" ::
                         : "eax", "memory");
}

/* Ring 3, SS = a 16-bit DPL-3 segment (SLOT_B): ENTER with SP and imm16 in
 * u_sp/u_alloc; records ESP/EBP if it completes. */
volatile uint32_t u_sp, u_alloc_is_8;
/* ENTER $alloc,$0 at SP u_sp with SS = SLOT_B | 3, EBP 0x5555. */
#define U_ENTER(alloc)                                                                             \
    __asm__ volatile("mov %%esp, saved_esp\n"                                                      \
                     "mov %%ebp, saved_ebp\n"                                                      \
                     "mov %0, %%ss\n"                                                              \
                     "mov u_sp, %%esp\n"                                                           \
                     "mov $0x5555, %%ebp\n"                                                        \
                     "enter $" #alloc ", $0\n"                                                     \
                     "mov %%esp, got_esp\n"                                                        \
                     "mov %%ebp, got_ebp\n"                                                        \
                     "mov $0x23, %%ax\n"                                                           \
                     "mov %%ax, %%ss\n"                                                            \
                     "mov saved_esp, %%esp\n"                                                      \
                     "mov saved_ebp, %%ebp\n" ::"r"((uint32_t)(SEL_SLOT_B | 3))                    \
                     : "eax", "memory")
static void u_enter(void)
{
    if (u_alloc_is_8)
        U_ENTER(8);
    else
        U_ENTER(1);
}

void test_main(void)
{
    /* SLOT_A: 16-bit writable data, DPL 0, base = area, limit 0xFFFF. */
    gdt_set(SEL_SLOT_A, (uint32_t)area, 0xffff, 0x92, 0x00);

    *(volatile uint32_t *)(area + 0xfffc) = SEL_KDATA;
    got_esp = 0;
    check_eq("pop_ss32_old16_new32_esp", (uint32_t)catch_call(pop_ss32_from_16bit_stack),
             0xffffffffu);
    puts_("  ");
    check_eq("pop_ss32_old16_new32_esp", got_esp, 0x00020000);

    *(volatile uint16_t *)(area + 0xfffe) = SEL_KDATA;
    got_esp = 0;
    check_eq("pop_ss16_old16_new32", (uint32_t)catch_call(pop_ss16_from_16bit_stack), 0xffffffffu);
    puts_("  ");
    check_eq("pop_ss16_old16_new32_esp", got_esp, 0x00020000);

    /* Flat 32-bit stack at area+0xFFFC holding SLOT_A's selector. */
    flat_esp = (uint32_t)area + 0xfffc;
    *(volatile uint32_t *)(area + 0xfffc) = SEL_SLOT_A;
    got_esp = 0;
    check_eq("pop_ss32_old32_new16", (uint32_t)catch_call(pop_ss32_from_32bit_stack), 0xffffffffu);
    puts_("  ");
    check_eq("pop_ss32_old32_new16_esp", got_esp, (uint32_t)area + 0x10000);

    /* ENTER beyond a 16-bit SS's limit (ring 3, limit 0x0FFF): SP 4,
     * enter 8,0 pushes EBP at 0..3, the final SP wraps to 0xFFF8: #SS(0),
     * ESP and EBP as before (the frame holds the ring-3 values). */
    gdt_set(SEL_SLOT_B, (uint32_t)area, 0x0fff, 0xf2, 0x00);
    u_sp = 4;
    u_alloc_is_8 = 1;
    got_esp = got_ebp = 0;
    check_eq("enter_final_sp_beyond_limit_ss", (uint32_t)run_user(u_enter), 12);
    puts_("  ");
    check_eq("enter_final_sp_beyond_limit_err", last_err, 0);
    puts_("  ");
    check_eq("enter_final_sp_beyond_limit_esp", last_frame_esp, 4);
    puts_("  ");
    check_eq("enter_final_sp_beyond_limit_ebp", last_frame_ebp, 0x5555);
    /* Within the limit it completes: SP 0x800 -> 0x7f8, EBP 0x7fc. */
    u_sp = 0x800;
    check_eq("enter_within_limit", (uint32_t)run_user(u_enter), 0x81);
    puts_("  ");
    check_eq("enter_within_limit_esp", got_esp, 0x7f4);
    puts_("  ");
    check_eq("enter_within_limit_ebp", got_ebp, 0x7fc);

    /* Paging: SLOT_B based at epages[0] (supervisor-only page), limit
     * 0xFFFF; SP 0x1004: enter 1,0 pushes EBP into the user page
     * (0x1000..0x1003) and ends at SP 0x0FFF in the supervisor page:
     * #PF(protection | write | user) at epages[0] + 0xFFF before ESP/EBP
     * change. */
    for (unsigned i = 0; i < 2; i++) {
        pd[i] = (uint32_t)pt[i] | P | RW | US;
        for (unsigned j = 0; j < 1024; j++)
            pt[i][j] = ((i * 1024 + j) << 12) | P | RW | US;
    }
    uint32_t page0 = (uint32_t)epages[0];
    pt[page0 >> 22][(page0 >> 12) & 1023] &= ~US;
    write_cr3((uint32_t)pd);
    write_cr0(read_cr0() | 0x80000000u);
    gdt_set(SEL_SLOT_B, page0, 0xffff, 0xf2, 0x00);
    u_sp = 0x1004;
    u_alloc_is_8 = 0;
    got_esp = got_ebp = 0;
    last_cr2 = 0;
    check_eq("enter_final_sp_supervisor_page_pf", (uint32_t)run_user(u_enter), 14);
    puts_("  ");
    check_eq("enter_final_sp_supervisor_page_err", last_err, 7);
    puts_("  ");
    check_eq("enter_final_sp_supervisor_page_cr2", last_cr2, page0 + 0xfff);
    puts_("  ");
    check_eq("enter_final_sp_supervisor_page_esp", last_frame_esp, 0x1004);
    puts_("  ");
    check_eq("enter_final_sp_supervisor_page_ebp", last_frame_ebp, 0x5555);
    check("enter_completed_nothing", got_esp == 0 && got_ebp == 0);
    /* With page 0 user-writable it completes. */
    pt[page0 >> 22][(page0 >> 12) & 1023] |= US;
    write_cr3((uint32_t)pd); /* no INVLPG on the 386 */
    check_eq("enter_user_page_ok", (uint32_t)run_user(u_enter), 0x81);
    puts_("  ");
    check_eq("enter_user_page_ok_esp", got_esp, 0x0fff);
    write_cr0(read_cr0() & ~0x80000000u);
}
