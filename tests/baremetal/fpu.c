/* The x87 as a program sees it: the answers (100 sqrt 2 and 10 pi through
 * FISTP), CR0.ET and CPUID, #NM with CR0.TS/EM/MP, a pending unmasked
 * exception delivered as #MF with CR0.NE (EIP on the waiting instruction,
 * FIP/FOP/FDP on the one that failed), and without NE the PC's way: FERR#
 * through the board's latch to IRQ 13, the handler's write to port 0xF0
 * (IGNNE#) and FNCLEX.  Run by tests/baremetal/check-fpu with nicemu --elf
 * on the FPU models, costed and uncosted, and on the 486SX (no FPU: the
 * probe finds none, ESC opcodes do nothing, #NM still comes). */
#include "bm.h"

#define PIC1         0x20
#define PIC2         0xa0
#define IRQ13_VECTOR 0x2d /* the slave PIC based at 0x28 */

static int has_cpuid(void)
{
    uint32_t a, b;
    __asm__ volatile("pushfl; pop %0; mov %0, %1; xor $0x200000, %0; push %0; popfl;"
                     "pushfl; pop %0; push %1; popfl"
                     : "=&r"(a), "=&r"(b));
    return ((a ^ b) & 0x200000) != 0;
}

static uint32_t cpuid1_edx(void)
{
    uint32_t a = 1, b, c, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
    return d;
}

static uint32_t cpuid1_eax(void)
{
    uint32_t a = 1, b, c, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
    return a;
}

/* FNINIT; FNSTSW; FNSTCW over 0x5a5a: Linux's probe. */
static int fpu_probe(void)
{
    volatile uint16_t sw = 0x5a5a, cw = 0x5a5a;
    __asm__ volatile("fninit; fnstsw %0; fnstcw %1" : "+m"(sw), "+m"(cw));
    return sw == 0 && (cw & 0x103f) == 0x003f;
}

static void answers(void)
{
    static const int32_t hundred = 100, ten = 10;
    volatile int32_t a = 0, b = 0;
    __asm__ volatile("fninit\n"
                     "fld1\n"
                     "fadd %%st(0), %%st(0)\n" /* 2 */
                     "fsqrt\n"
                     "fimull %2\n"
                     "fistpl %0\n"
                     "fldpi\n"
                     "fimull %3\n"
                     "fistpl %1\n"
                     "fwait"
                     : "=m"(a), "=m"(b)
                     : "m"(hundred), "m"(ten));
    check_eq("x100_sqrt2_fistp", (uint32_t)a, 141);
    check_eq("x10_pi_fistp", (uint32_t)b, 31);
    /* and under the other roundings: chop gives 141 and 31 too, up 142 and 32 */
    static const uint16_t cw_up = 0x0b7f;
    __asm__ volatile("fninit; fldcw %2; fld1; fadd %%st(0), %%st(0); fsqrt; fimull %3; fistpl %0;"
                     "fldpi; fimull %4; fistpl %1; fninit"
                     : "=m"(a), "=m"(b)
                     : "m"(cw_up), "m"(hundred), "m"(ten));
    check_eq("x100_sqrt2_round_up", (uint32_t)a, 142);
    check_eq("x10_pi_round_up", (uint32_t)b, 32);
}

static void do_fld1(void)
{
    __asm__ volatile("fld1; fstp %%st(0)" ::: "memory");
}
static void do_fnstsw(void)
{
    volatile uint16_t sw;
    __asm__ volatile("fnstsw %0" : "=m"(sw));
}
static void do_wait(void)
{
    __asm__ volatile("fwait");
}

static void nm_tests(void)
{
    uint32_t cr0 = read_cr0();
    write_cr0(cr0 | 0x8); /* TS */
    expect_exc("nm_ts_fld1", do_fld1, 7, 0);
    expect_exc("nm_ts_fnstsw", do_fnstsw, 7, 0);
    check("nm_ts_wait_without_mp", catch_call(do_wait) == -1);
    write_cr0(cr0 | 0x8 | 0x2); /* TS, MP */
    expect_exc("nm_ts_mp_wait", do_wait, 7, 0);
    write_cr0(cr0 | 0x4); /* EM */
    expect_exc("nm_em_fld1", do_fld1, 7, 0);
    check("nm_em_wait_without_ts", catch_call(do_wait) == -1);
    write_cr0(cr0);
    __asm__ volatile("clts");
    check("no_nm_cleared", catch_call(do_fld1) == -1);
}

/* ------------------------------------------------------------ #MF */

static const uint16_t cw_ze_unmasked = 0x037b; /* ZM clear */
static volatile uint32_t fdiv_at;

static void zero_divide(void)
{
    static const float zero = 0.0f;
    __asm__ volatile("fninit\n"
                     "fldcw %1\n"
                     "fld1\n"
                     "movl $1f, %0\n"
                     "1: fdivs %2\n" /* 1/0: ZE, unmasked: pending */
                     : "=m"(fdiv_at)
                     : "m"(cw_ze_unmasked), "m"(zero)
                     : "memory");
}

static volatile uint32_t wait_at;
static void zero_divide_then_wait(void)
{
    zero_divide();
    __asm__ volatile("movl $1f, %0\n"
                     "1: fwait\n"
                     : "=m"(wait_at)::"memory");
}

static volatile uint32_t fnop_at;
static void zero_divide_then_fnop(void)
{
    zero_divide();
    __asm__ volatile("movl $1f, %0\n"
                     "1: fnop\n" /* a waiting instruction too */
                     : "=m"(fnop_at)::"memory");
}

static void mf_tests(void)
{
    write_cr0(read_cr0() | 0x20 | 0x2); /* NE, MP */
    /* the FDIV itself raises nothing: the error waits for the next one */
    check("mf_not_at_fdiv", catch_call(zero_divide) == -1);
    uint16_t sw;
    __asm__ volatile("fnstsw %0" : "=m"(sw));
    check_eq("mf_pending_sw", sw & 0x80ff, 0x8084); /* B ES ZE */
    __asm__ volatile("fnclex");
    int v = catch_call(zero_divide_then_wait);
    check_eq("mf_at_fwait_vector", (uint32_t)v, 16);
    check_eq("mf_at_fwait_eip", last_eip, wait_at);
    /* the environment points at the FDIV: FIP, FCS, FOP (D8 /6, [disp32]),
     * and at its operand's segment */
    uint32_t env[7];
    __asm__ volatile("fnstenv %0" : "=m"(env));
    check_eq("mf_fip_is_fdiv", env[3], fdiv_at);
    check_eq("mf_fcs", env[4] & 0xffff, 0x08);
    check_eq("mf_fop", env[4] >> 16, 0x0035); /* D8 & 7, ModRM 35 */
    check_eq("mf_fds", env[6] & 0xffff, 0x10);
    check_eq("mf_env_sw_es", env[1] & 0x80ff, 0x8084);
    __asm__ volatile("fninit");
    v = catch_call(zero_divide_then_fnop);
    check_eq("mf_at_fnop_vector", (uint32_t)v, 16);
    check_eq("mf_at_fnop_eip", last_eip, fnop_at);
    __asm__ volatile("fninit");
    write_cr0(read_cr0() & ~0x20u);
}

/* ------------------------------------------------------- IRQ 13 */

volatile uint32_t irq13_count, irq13_clear_f0, irq13_eip;
volatile uint16_t irq13_sw;
/* The handler: acknowledge the latch (out 0xF0), FNCLEX unless told not
 * to, EOI to both PICs. */
void irq13_c(uint32_t eip)
{
    irq13_count++;
    irq13_eip = eip;
    __asm__ volatile("fnstsw %0" : "=m"(irq13_sw));
    outb(0xf0, 0);
    if (!irq13_clear_f0) __asm__ volatile("fnclex");
    outb(PIC2, 0x20);
    outb(PIC1, 0x20);
}
__asm__(".text\n"
        ".globl irq13_stub\n"
        "irq13_stub:\n"
        "   pusha\n"
        "   pushl 32(%esp)\n" /* the interrupted EIP */
        "   call irq13_c\n"
        "   add $4, %esp\n"
        "   popa\n"
        "   iret\n");
void irq13_stub(void);

static void pic_init(void)
{
    outb(PIC1, 0x11);
    outb(PIC2, 0x11);
    outb(PIC1 + 1, 0x20);
    outb(PIC2 + 1, 0x28);
    outb(PIC1 + 1, 4);
    outb(PIC2 + 1, 2);
    outb(PIC1 + 1, 1);
    outb(PIC2 + 1, 1);
    outb(PIC1 + 1, 0xfb); /* only the cascade */
    outb(PIC2 + 1, 0xdf); /* only IRQ 13 */
}

static void irq13_tests(unsigned family)
{
    /* FERR# went out with the #MF tests too (the 486 drives it whatever NE
     * says): the latch still holds IRQ 13 high; clear it, as a BIOS would */
    outb(0xf0, 0);
    pic_init();
    gate_set(idt, IRQ13_VECTOR, SEL_KCODE, (uint32_t)irq13_stub, 0x8e, 0);
    write_cr0(read_cr0() & ~0x20u); /* NE clear: the PC's way */
    irq13_count = 0;
    irq13_clear_f0 = 0;
    __asm__ volatile("sti");
    zero_divide_then_wait(); /* FERR# -> IRQ 13; the handler clears; the FWAIT runs */
    __asm__ volatile("cli");
    check_eq("irq13_once", irq13_count, 1);
    /* The 387 and the 486 assert FERR# at the error: IRQ 13 comes right
     * after the FDIV; the Pentium at the next waiting instruction: it comes
     * at the FWAIT, which runs again after the handler. */
    if (family == 5)
        check_eq("irq13_at_fwait", irq13_eip, wait_at);
    else
        check_eq("irq13_after_fdiv", irq13_eip, fdiv_at + 6);
    check_eq("irq13_saw_es_ze", irq13_sw & 0x80ff, 0x8084);
    uint16_t sw;
    __asm__ volatile("fnstsw %0" : "=m"(sw));
    check_eq("irq13_cleared", sw & 0x80ff, 0);
    /* The handler only writes port 0xF0 (IGNNE#): the waiting instruction
     * then runs with the error still pending, once. */
    irq13_count = 0;
    irq13_clear_f0 = 1;
    __asm__ volatile("sti");
    zero_divide_then_wait();
    __asm__ volatile("cli");
    check_eq("ignne_irq13_once", irq13_count, 1);
    __asm__ volatile("fnstsw %0" : "=m"(sw));
    check_eq("ignne_error_kept", sw & 0x80ff, 0x8084);
    __asm__ volatile("fwait"); /* IGNNE# still asserted: ignored again */
    check_eq("ignne_wait_again", irq13_count, 1);
    __asm__ volatile("fninit"); /* FERR# away, IGNNE# with it */
    outb(PIC2 + 1, 0xff);
}

void test_main(void)
{
    uint32_t cr0 = read_cr0();
    int cpuid = has_cpuid();
    int present = fpu_probe();
    if (cpuid) check_eq("cpuid_fpu_bit", cpuid1_edx() & 1, (uint32_t)present);
    if (!present) { /* the 486SX: ESC opcodes store nothing, #NM still comes */
        check("no_fpu_probe", 1);
        nm_tests();
        return;
    }
    check("cr0_et", (cr0 & 0x10) != 0);
    answers();
    nm_tests();
    if (cpuid) mf_tests(); /* a 386 has no NE: its 387 always takes IRQ 13 */
    irq13_tests(cpuid ? (cpuid1_eax() >> 8) & 15 : 3);
}
