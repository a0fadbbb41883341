/* Debug registers (SDM vol. 3A, 17.2-17.3): an instruction breakpoint is
 * a fault that EFLAGS.RF lets the handler step over; data breakpoints are
 * traps taken after the access (after the iteration, for a REP string),
 * write-only or read/write, over their aligned length; DR7.GD faults the
 * next MOV DRn with DR6.BD. */
#include "bm.h"

volatile uint32_t db_count, db_eip, db_dr6, db_ecx;

/* #DB handler that resumes: records the stacked EIP, DR6 and ECX, clears
 * DR6, sets RF in the stacked EFLAGS (so an instruction breakpoint is not
 * taken again on return) and IRETs. */
__asm__(".text\n"
        ".globl db_resume\n"
        "db_resume:\n"
        "   mov %ecx, db_ecx\n"
        "   push %eax\n"
        "   mov %dr6, %eax\n"
        "   mov %eax, db_dr6\n"
        "   mov 4(%esp), %eax\n"
        "   mov %eax, db_eip\n"
        "   orl $0x10000, 12(%esp)\n"
        "   incl db_count\n"
        "   xor %eax, %eax\n"
        "   mov %eax, %dr6\n"
        "   pop %eax\n"
        "   iret\n"
        ".globl bp_target\n"
        "bp_target:\n"
        "   mov $5, %eax\n"
        "   ret\n"
        ".globl store_watched\n"
        "store_watched:\n"
        "   movl $7, watched\n"
        ".globl after_store\n"
        "after_store:\n"
        "   ret\n"
        ".globl load_watched\n"
        "load_watched:\n"
        "   mov watched, %eax\n"
        ".globl after_load\n"
        "after_load:\n"
        "   ret\n"
        ".globl store_byte_2\n"
        "store_byte_2:\n"
        "   movb $1, watched+2\n"
        "   ret\n"
        ".globl store_next\n"
        "store_next:\n"
        "   movl $1, watched+4\n"
        "   ret\n"
        ".globl fill_buf\n"
        "fill_buf:\n"
        "   push %edi\n"
        "   mov $buf, %edi\n"
        "   mov $16, %ecx\n"
        "   mov $0xaa, %al\n"
        "   cld\n"
        ".globl fill_rep\n"
        "fill_rep:\n"
        "   rep stosb\n"
        "   pop %edi\n"
        "   ret\n");
void db_resume(void);
uint32_t bp_target(void);
void store_watched(void), load_watched(void), store_byte_2(void), store_next(void);
void fill_buf(void);
extern uint8_t after_store[], after_load[], fill_rep[];

volatile uint32_t watched[2] __attribute__((aligned(8)));
volatile uint8_t buf[16];

static void write_dr(int n, uint32_t v)
{
    switch (n) {
    case 0: __asm__ volatile("mov %0, %%dr0" ::"r"(v)); break;
    case 1: __asm__ volatile("mov %0, %%dr1" ::"r"(v)); break;
    case 2: __asm__ volatile("mov %0, %%dr2" ::"r"(v)); break;
    case 6: __asm__ volatile("mov %0, %%dr6" ::"r"(v)); break;
    default: __asm__ volatile("mov %0, %%dr7" ::"r"(v)); break;
    }
}
static uint32_t read_dr6(void)
{
    uint32_t v;
    __asm__ volatile("mov %%dr6, %0" : "=r"(v));
    return v;
}
static uint32_t read_dr7(void)
{
    uint32_t v;
    __asm__ volatile("mov %%dr7, %0" : "=r"(v));
    return v;
}
static void read_dr0(void)
{
    uint32_t v;
    __asm__ volatile("mov %%dr0, %0" : "=r"(v));
    (void)v;
}

/* DR7 for breakpoint n: local enable, R/W and LEN fields (17.2.4). */
static uint32_t dr7_for(int n, unsigned rw, unsigned len_code)
{
    return (1u << (2 * n)) | (rw << (16 + 4 * n)) | (len_code << (18 + 4 * n));
}

void test_main(void)
{
    /* General detect: the MOV DRn faults (EIP on it), DR6.BD set, GD cleared. */
    write_dr(6, 0);
    write_dr(7, 1u << 13);
    check_eq("gd_vector", (uint32_t)catch_call(read_dr0), 1);
    check_eq("gd_dr6_bd", read_dr6() & 0x2000, 0x2000);
    check_eq("gd_cleared", read_dr7() & 0x2000, 0);
    write_dr(6, 0);

    gate_set(idt, 1, SEL_KCODE, (uint32_t)db_resume, 0x8e, 0);

    /* Instruction breakpoint: one #DB per execution, at the instruction,
     * and the handler's RF lets it run. */
    write_dr(0, (uint32_t)bp_target);
    write_dr(7, dr7_for(0, 0, 0));
    uint32_t sum = bp_target() + bp_target();
    check_eq("exec_result", sum, 10);
    check_eq("exec_count", db_count, 2);
    check_eq("exec_eip", db_eip, (uint32_t)bp_target);
    check_eq("exec_dr6", db_dr6 & 0xf, 1);

    /* Write breakpoint on a dword: the trap comes after the store. */
    db_count = 0;
    write_dr(1, (uint32_t)&watched[0]);
    write_dr(7, dr7_for(1, 1, 3));
    store_watched();
    check_eq("write_count", db_count, 1);
    check_eq("write_eip_after", db_eip, (uint32_t)after_store);
    check_eq("write_dr6", db_dr6 & 0xf, 2);
    check_eq("write_done", watched[0], 7);
    load_watched();
    check_eq("write_only_ignores_read", db_count, 1);
    store_byte_2();
    check_eq("write_overlap_byte", db_count, 2);
    store_next();
    check_eq("write_next_dword_no_hit", db_count, 2);

    /* Read/write breakpoint: a load traps too. */
    write_dr(7, dr7_for(1, 3, 3));
    load_watched();
    check_eq("rw_read_count", db_count, 3);
    check_eq("rw_read_eip_after", db_eip, (uint32_t)after_load);

    /* A REP string: the trap after the iteration that wrote buf[5], with
     * EIP on the REP and ECX counting what is left; it then completes. */
    db_count = 0;
    write_dr(2, (uint32_t)&buf[5]);
    write_dr(7, dr7_for(2, 1, 0));
    fill_buf();
    check_eq("rep_count", db_count, 1);
    check_eq("rep_eip", db_eip, (uint32_t)fill_rep);
    check_eq("rep_ecx_left", db_ecx, 10);
    check_eq("rep_dr6", db_dr6 & 0xf, 4);
    check_eq("rep_completed", buf[15], 0xaa);

    /* Disabled: nothing. */
    write_dr(7, 0);
    db_count = 0;
    bp_target();
    store_watched();
    check_eq("disabled_no_hits", db_count, 0);
}
