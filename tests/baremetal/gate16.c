/* 286-style (16-bit) system objects on a 32-bit processor (SDM vol. 3A,
 * 5.8.3-5.8.6, 6.12.1, 7.6): a 16-bit call gate to ring 0 with two word
 * parameters copied and RET imm to ring 3, a 16-bit call gate at the same
 * level, 16-bit interrupt and trap gates (16-bit frames, IF), an exception
 * with an error code through a 16-bit gate from ring 3, and task switches
 * with 16-bit TSSs: CALL/IRET (back link, NT, busy bits, the saved 16-bit
 * state), JMP there and back, #GP through a task gate with the error code
 * pushed as a word.
 *
 * 16-bit gates and TSSs hold 16-bit offsets, so the code they name runs in
 * code segments based at 1 MB (where the program is loaded) with 64 KB
 * limits; it is placed first in .text (section .text.start). */
#include "bm.h"

#define SEL_R0B     0x40 /* ring-0 32-bit code, base 1 MB, limit 64 KB */
#define SEL_R3B     0x4b /* ring-3 32-bit code, base 1 MB, limit 64 KB */
#define SEL_TSS16B  0x68
#define SEL_CG16_R3 0x5b /* 16-bit call gate, DPL 3, 2 words */
#define SEL_CG16_R0 0x60 /* 16-bit call gate, DPL 0 */
#define SEL_TSS16A  0x70
#define SEL_STK16   0x78 /* ring-0 16-bit stack segment, base 0 */
#define BASE        0x100000u
#define USER_SP     0x9000u

struct tss16 {
    uint16_t link, sp0, ss0, sp1, ss1, sp2, ss2, ip, flags, ax, cx, dx, bx, sp, bp, si, di, es, cs,
        ss, ds, ldt;
} __attribute__((packed));

static struct tss16 tss_a __attribute__((aligned(16)));
static struct tss16 tss_b __attribute__((aligned(16)));

volatile uint32_t r3_off, r3_esp, r3_eax, r3_fl;
volatile uint32_t cg_esp16, cg_cs16, cg_w16[3];
volatile uint32_t r0_esp_before, r0_esp_after, r0_eax, cgs_esp, cgs_w;
volatile uint32_t ig_esp, ig_w[2], ig_fl_in, tg_esp, tg_w[2], tg_fl_in, r0_fl_after1, r0_fl_after2;
volatile uint32_t ig3_esp, ig3_w[3], gp_esp, gp_w[3];
volatile uint32_t t16_regs[8], t16_fl, t16_sregs[6], t16_tr, t16_runs, t16_own_type, t16_main_type;
volatile uint32_t t16b_ax, t16b_fl, t16b_own_type, t16b_main_type, t16b_runs;
volatile uint32_t t16c_sp, t16c_err, t16c_fl, t16c_runs;
extern volatile uint32_t last_vector;

__asm__(".section .text.start, \"ax\"\n"
        /* Ring 3 at SEL_R3B:r3_off, stack 0x23:USER_SP (below 64 KB so
         * that a 16-bit frame holds it). */
        "enter_r3b:\n"
        "   mov $0x10, %ax\n"
        "   mov %ax, %ds\n"
        "   mov %ax, %es\n"
        "   pushl $0x23\n"
        "   pushl $0x9000\n"
        "   pushl $0x2\n"
        "   pushl $0x4b\n"
        "   pushl r3_off\n"
        "   iret\n"
        /* Ring 3: CALL through the 16-bit gate with two word parameters. */
        "u_cg16:\n"
        "   mov $0x23, %ax\n"
        "   mov %ax, %ds\n"
        "   mov %ax, %es\n"
        "   pushw $0xbbbb\n"
        "   pushw $0xaaaa\n"
        "   lcall $0x5b, $0\n"
        "u_cg16_ret:\n"
        "   mov %esp, r3_esp\n"
        "   mov %eax, r3_eax\n"
        "   int $0x81\n"
        "cg16_target:\n"
        "   mov %esp, %ss:cg_esp16\n"
        "   movw %cs, %ss:cg_cs16\n"
        "   movl 0(%esp), %eax\n"
        "   movl %eax, %ss:cg_w16\n"
        "   movl 4(%esp), %eax\n"
        "   movl %eax, %ss:cg_w16+4\n"
        "   movl 8(%esp), %eax\n"
        "   movl %eax, %ss:cg_w16+8\n"
        "   mov $0x1616, %eax\n"
        "   lretw $4\n"
        /* Ring 0 (entered by a 32-bit far call): the same-level gate. */
        "r0_cg16:\n"
        "   mov %esp, r0_esp_before\n"
        "   lcall $0x60, $0\n"
        "r0_cg16_ret:\n"
        "   mov %esp, r0_esp_after\n"
        "   mov %eax, r0_eax\n"
        "   lret\n"
        "cg16_same:\n"
        "   mov %esp, cgs_esp\n"
        "   movl (%esp), %eax\n"
        "   movl %eax, cgs_w\n"
        "   mov $0x6161, %eax\n"
        "   lretw\n"
        /* Ring 0: INT through 16-bit interrupt (0x40) and trap (0x41) gates. */
        "r0_int16:\n"
        "   mov %esp, r0_esp_before\n"
        "   pushl $0x203\n"
        "   popfl\n"
        "   int $0x40\n"
        "r0_int16_ret1:\n"
        "   pushfl\n"
        "   popl r0_fl_after1\n"
        "   int $0x41\n"
        "r0_int16_ret2:\n"
        "   pushfl\n"
        "   popl r0_fl_after2\n"
        "   pushl $0x2\n"
        "   popfl\n"
        "   mov %esp, r0_esp_after\n"
        "   lret\n"
        "ig16_h:\n"
        "   mov %esp, ig_esp\n"
        "   movl (%esp), %eax\n"
        "   movl %eax, ig_w\n"
        "   movzwl 4(%esp), %eax\n"
        "   movl %eax, ig_w+4\n"
        "   pushfl\n"
        "   popl ig_fl_in\n"
        "   iretw\n"
        "tg16_h:\n"
        "   mov %esp, tg_esp\n"
        "   movl (%esp), %eax\n"
        "   movl %eax, tg_w\n"
        "   movzwl 4(%esp), %eax\n"
        "   movl %eax, tg_w+4\n"
        "   pushfl\n"
        "   popl tg_fl_in\n"
        "   iretw\n"
        /* Ring 3: INT 0x42 through a 16-bit DPL-3 interrupt gate. */
        "u_int16:\n"
        "   mov $0x23, %ax\n"
        "   mov %ax, %ds\n"
        "   mov %ax, %es\n"
        "   xor %eax, %eax\n"
        "   int $0x42\n"
        "u_int16_ret:\n"
        "   pushfl\n"
        "   popl r3_fl\n"
        "   mov %esp, r3_esp\n"
        "   mov %eax, r3_eax\n"
        "   int $0x81\n"
        "ig16_h3:\n"
        "   mov %esp, %ss:ig3_esp\n"
        "   movl (%esp), %eax\n"
        "   movl %eax, %ss:ig3_w\n"
        "   movl 4(%esp), %eax\n"
        "   movl %eax, %ss:ig3_w+4\n"
        "   movzwl 8(%esp), %eax\n"
        "   movl %eax, %ss:ig3_w+8\n"
        "   mov $0x4242, %eax\n"
        "   iretw\n"
        /* Ring 3: #GP(0x10) delivered through a 16-bit interrupt gate. */
        "u_gp16:\n"
        "   mov $0x23, %ax\n"
        "   mov %ax, %ds\n"
        "   mov $0x10, %ecx\n"
        "   xor %eax, %eax\n"
        "u_gp16_at:\n"
        "   mov %cx, %es\n"
        "   int $0x81\n"
        "gp16_h:\n"
        "   mov %esp, %ss:gp_esp\n"
        "   movl (%esp), %eax\n"
        "   movl %eax, %ss:gp_w\n"
        "   movl 4(%esp), %eax\n"
        "   movl %eax, %ss:gp_w+4\n"
        "   movl 8(%esp), %eax\n"
        "   movl %eax, %ss:gp_w+8\n"
        "   movl $13, %ss:last_vector\n"
        "   ljmp $0x08, $catch_recover\n"
        /* Task A (16-bit TSS), entered by CALL: records its state, IRET. */
        "t16a_entry:\n"
        "   mov %eax, t16_regs\n"
        "   mov %ecx, t16_regs+4\n"
        "   mov %edx, t16_regs+8\n"
        "   mov %ebx, t16_regs+12\n"
        "   mov %esp, t16_regs+16\n"
        "   mov %ebp, t16_regs+20\n"
        "   mov %esi, t16_regs+24\n"
        "   mov %edi, t16_regs+28\n"
        "   pushfl\n"
        "   popl t16_fl\n"
        "   xor %eax, %eax\n"
        "   mov %es, %ax\n"
        "   mov %eax, t16_sregs\n"
        "   mov %cs, %ax\n"
        "   mov %eax, t16_sregs+4\n"
        "   mov %ss, %ax\n"
        "   mov %eax, t16_sregs+8\n"
        "   mov %ds, %ax\n"
        "   mov %eax, t16_sregs+12\n"
        "   mov %fs, %ax\n"
        "   mov %eax, t16_sregs+16\n"
        "   mov %gs, %ax\n"
        "   mov %eax, t16_sregs+20\n"
        "   str %ax\n"
        "   mov %eax, t16_tr\n"
        "   movzbl gdt+0x70+5, %eax\n"
        "   and $0xf, %eax\n"
        "   mov %eax, t16_own_type\n"
        "   movzbl gdt+0x28+5, %eax\n"
        "   and $0xf, %eax\n"
        "   mov %eax, t16_main_type\n"
        "   incl t16_runs\n"
        "   mov $0xa1a1, %eax\n"
        "   mov $0xb2b2, %ebx\n"
        "   mov $0x7ff0, %esp\n"
        "   pushl $0x48d5\n"
        "   popfl\n"
        "   iret\n"
        "t16a_again:\n"
        "   jmp t16a_entry\n"
        /* Task B (16-bit TSS), entered by JMP: JMPs back to the main task. */
        "t16b_entry:\n"
        "   mov %eax, t16b_ax\n"
        "   pushfl\n"
        "   popl t16b_fl\n"
        "   movzbl gdt+0x68+5, %eax\n"
        "   and $0xf, %eax\n"
        "   mov %eax, t16b_own_type\n"
        "   movzbl gdt+0x28+5, %eax\n"
        "   and $0xf, %eax\n"
        "   mov %eax, t16b_main_type\n"
        "   incl t16b_runs\n"
        "   mov $0xc3c3, %ecx\n"
        "   ljmp $0x28, $0\n"
        "t16b_after:\n"
        "   jmp t16b_entry\n"
        /* Task B again, as the #GP handler (task gate): the error code is a
         * word on its 16-bit stack. */
        "t16c_entry:\n"
        "   mov %esp, t16c_sp\n"
        "   movzwl %sp, %ebx\n"
        "   movzwl %ss:(%ebx), %eax\n"
        "   mov %eax, t16c_err\n"
        "   pushfl\n"
        "   popl t16c_fl\n"
        "   incl t16c_runs\n"
        "   movl $t16c_resume, main_tss+0x20\n"
        "   iret\n"
        "   jmp t16c_entry\n"
        "t16_code_end:\n"
        ".text\n"
        /* int trigger_gp16(void): 1 if the #GP task resumed us. */
        "trigger_gp16:\n"
        "   mov $0x400, %ax\n"
        "   mov %ax, %ds\n"
        "   xor %eax, %eax\n"
        "   ret\n"
        "t16c_resume:\n"
        "   mov $1, %eax\n"
        "   ret\n");

extern char enter_r3b[], u_cg16[], u_cg16_ret[], cg16_target[], r0_cg16[], r0_cg16_ret[],
    cg16_same[], r0_int16[], r0_int16_ret1[], r0_int16_ret2[], ig16_h[], tg16_h[], u_int16[],
    u_int16_ret[], ig16_h3[], u_gp16[], u_gp16_at[], gp16_h[], t16a_entry[], t16a_again[],
    t16b_entry[], t16b_after[], t16c_entry[], t16_code_end[];
int trigger_gp16(void);

static uint16_t off(const char *p)
{
    return (uint16_t)((uint32_t)p - BASE);
}

static unsigned desc_type(uint16_t sel)
{
    return (unsigned)(gdt[sel >> 3] >> 40) & 0xf;
}

/* Far call (32-bit) to SEL_R0B:off(fn). */
static void call_r0b(const char *fn)
{
    struct __attribute__((packed)) {
        uint32_t off;
        uint16_t sel;
    } fp = {off(fn), SEL_R0B};
    __asm__ volatile("lcall *%0" ::"m"(fp) : "eax", "memory", "cc");
}

static int run_r3b(const char *fn)
{
    r3_off = off(fn);
    return catch_call((void (*)(void))enter_r3b);
}

static void init_tss16(struct tss16 *t, const char *entry, uint16_t sp)
{
    uint8_t *p = (uint8_t *)t;
    for (unsigned i = 0; i < sizeof *t; i++)
        p[i] = 0;
    t->ip = off(entry);
    t->cs = SEL_R0B;
    t->flags = 0x0002;
    t->sp = sp;
    t->ss = SEL_STK16;
    t->ds = t->es = SEL_KDATA;
}

static void lo16(const char *name, uint32_t got, uint32_t want)
{
    check_eq(name, got & 0xffff, want);
}

static void call_task_a(volatile uint32_t *eax_after)
{
    uint32_t a = 0x5a5a5a5a;
    __asm__ volatile("lcall $0x70, $0" : "+a"(a)::"memory", "cc");
    *eax_after = a;
}

void test_main(void)
{
    check("code_below_64k", (uint32_t)t16_code_end - BASE < 0x10000);
    gdt_set(SEL_R0B, BASE, 0xffff, 0x9b, 0x40);
    gdt_set(SEL_R3B, BASE, 0xffff, 0xfb, 0x40);
    gdt_set(SEL_STK16, 0, 0xffff, 0x93, 0x00);
    gate_set(gdt, SEL_CG16_R3 >> 3, SEL_R0B, off(cg16_target), 0xe4, 2); /* type 4, DPL 3 */
    gate_set(gdt, SEL_CG16_R0 >> 3, SEL_R0B, off(cg16_same), 0x84, 0);   /* type 4, DPL 0 */
    uint32_t ktop = (uint32_t)(kstack + sizeof kstack);

    /* 16-bit call gate to ring 0: 16-bit frame on the TSS ring-0 stack:
     * IP, CS, the two parameter words, SP, SS. */
    check_eq("cg16_excursion", (uint32_t)run_r3b(u_cg16), 0x81);
    check_eq("cg16_esp", cg_esp16, ktop - 12);
    lo16("cg16_cs", cg_cs16, SEL_R0B);
    check_eq("cg16_frame_ip_cs", cg_w16[0], off(u_cg16_ret) | (uint32_t)SEL_R3B << 16);
    check_eq("cg16_frame_params", cg_w16[1], 0xbbbbaaaa);
    check_eq("cg16_frame_sp_ss", cg_w16[2], (USER_SP - 4) | 0x23u << 16);
    check_eq("cg16_return_value", r3_eax, 0x1616);
    check_eq("cg16_retw_imm_esp", r3_esp, USER_SP);

    /* Same level: CS and IP words on the current stack. */
    call_r0b(r0_cg16);
    check_eq("cg16_same_frame", cgs_w, off(r0_cg16_ret) | (uint32_t)SEL_R0B << 16);
    check_eq("cg16_same_esp", cgs_esp, r0_esp_before - 4);
    check_eq("cg16_same_ret_esp", r0_esp_after, r0_esp_before);
    check_eq("cg16_same_value", r0_eax, 0x6161);

    /* 16-bit interrupt and trap gates at ring 0: FLAGS, CS, IP words. */
    uint64_t saved40 = idt[0x40], saved41 = idt[0x41], saved42 = idt[0x42];
    gate_set(idt, 0x40, SEL_R0B, off(ig16_h), 0x86, 0); /* type 6 */
    gate_set(idt, 0x41, SEL_R0B, off(tg16_h), 0x87, 0); /* type 7 */
    gate_set(idt, 0x42, SEL_R0B, off(ig16_h3), 0xe6, 0);
    call_r0b(r0_int16);
    check_eq("intgate16_esp", ig_esp, r0_esp_before - 6);
    check_eq("intgate16_ip_cs", ig_w[0], off(r0_int16_ret1) | (uint32_t)SEL_R0B << 16);
    check_eq("intgate16_flags", ig_w[1], 0x0203);
    check_eq("intgate16_clears_if", ig_fl_in, 0x0003);
    check_eq("intgate16_iretw_flags", r0_fl_after1, 0x0203);
    check_eq("trapgate16_esp", tg_esp, r0_esp_before - 6);
    check_eq("trapgate16_ip_cs", tg_w[0], off(r0_int16_ret2) | (uint32_t)SEL_R0B << 16);
    check_eq("trapgate16_flags", tg_w[1], 0x0203);
    check_eq("trapgate16_keeps_if", tg_fl_in, 0x0203);
    check_eq("trapgate16_iretw_flags", r0_fl_after2, 0x0203);
    check_eq("int16_ret_esp", r0_esp_after, r0_esp_before);

    /* From ring 3: SS, SP, FLAGS, CS, IP words on the ring-0 stack; IRETW
     * to the outer level. */
    check_eq("intgate16_r3_excursion", (uint32_t)run_r3b(u_int16), 0x81);
    check_eq("intgate16_r3_esp", ig3_esp, ktop - 10);
    check_eq("intgate16_r3_ip_cs", ig3_w[0], off(u_int16_ret) | (uint32_t)SEL_R3B << 16);
    check_eq("intgate16_r3_flags_sp", ig3_w[1], 0x0046 | USER_SP << 16);
    check_eq("intgate16_r3_ss", ig3_w[2], 0x23);
    check_eq("intgate16_r3_value", r3_eax, 0x4242);
    check_eq("intgate16_r3_ret_esp", r3_esp, USER_SP);
    check_eq("intgate16_r3_ret_flags", r3_fl, 0x0046);
    idt[0x40] = saved40;
    idt[0x41] = saved41;
    idt[0x42] = saved42;

    /* #GP(0x10) from ring 3 through a 16-bit gate: the error code word. */
    uint64_t saved13 = idt[13];
    gate_set(idt, 13, SEL_R0B, off(gp16_h), 0x86, 0);
    check_eq("gp16_vector", (uint32_t)run_r3b(u_gp16), 13);
    idt[13] = saved13;
    check_eq("gp16_esp", gp_esp, ktop - 12);
    check_eq("gp16_err_ip", gp_w[0], 0x10 | (uint32_t)off(u_gp16_at) << 16);
    check_eq("gp16_cs_flags", gp_w[1], SEL_R3B | 0x0046u << 16);
    check_eq("gp16_sp_ss", gp_w[2], USER_SP | 0x23u << 16);

    /* CALL to a 16-bit TSS, IRET back. */
    init_tss16(&tss_a, t16a_entry, 0x8000);
    tss_a.flags = 0x0087;
    tss_a.ax = 0x1111;
    tss_a.cx = 0x2222;
    tss_a.dx = 0x3333;
    tss_a.bx = 0x4444;
    tss_a.bp = 0x5555;
    tss_a.si = 0x6666;
    tss_a.di = 0x7777;
    gdt_set(SEL_TSS16A, (uint32_t)&tss_a, sizeof tss_a - 1, 0x81, 0x00); /* type 1 */
    volatile uint32_t main_eax = 0;
    call_task_a(&main_eax);
    check_eq("tss16_ran", t16_runs, 1);
    static const char *const rn[8] = {"tss16_ax", "tss16_cx", "tss16_dx", "tss16_bx",
                                      "tss16_sp", "tss16_bp", "tss16_si", "tss16_di"};
    static const uint16_t rv[8] = {0x1111, 0x2222, 0x3333, 0x4444, 0x8000, 0x5555, 0x6666, 0x7777};
    for (unsigned i = 0; i < 8; i++)
        lo16(rn[i], t16_regs[i], rv[i]);
    /* The upper halves, which SDM vol. 3A 7.6 says a 16-bit TSS load
     * modifies: all ones here (docs/cpu.md "Model corner cases"). */
    static const char *const un[8] = {"tss16_eax_upper", "tss16_ecx_upper", "tss16_edx_upper",
                                      "tss16_ebx_upper", "tss16_esp_upper", "tss16_ebp_upper",
                                      "tss16_esi_upper", "tss16_edi_upper"};
    for (unsigned i = 0; i < 8; i++)
        check_eq(un[i], t16_regs[i] >> 16, 0xffff);
    lo16("tss16_flags_nt", t16_fl, 0x4087);
    check_eq("tss16_es", t16_sregs[0], SEL_KDATA);
    check_eq("tss16_cs", t16_sregs[1], SEL_R0B);
    check_eq("tss16_ss", t16_sregs[2], SEL_STK16);
    check_eq("tss16_ds", t16_sregs[3], SEL_KDATA);
    check_eq("tss16_fs_null", t16_sregs[4], 0);
    check_eq("tss16_gs_null", t16_sregs[5], 0);
    check_eq("tss16_tr", t16_tr, SEL_TSS16A);
    check_eq("tss16_own_busy", t16_own_type, 3);
    check_eq("tss16_main_busy", t16_main_type, 0xb);
    check_eq("tss16_back_link", tss_a.link, SEL_TSS);
    check_eq("tss16_not_busy_after", desc_type(SEL_TSS16A), 1);
    check_eq("tss16_main_busy_after", desc_type(SEL_TSS), 0xb);
    check_eq("tss16_main_eax_restored", main_eax, 0x5a5a5a5a);
    check_eq("tss16_saved_ip", tss_a.ip, off(t16a_again));
    check_eq("tss16_saved_flags_nt_clear", tss_a.flags, 0x08d7);
    check_eq("tss16_saved_ax", tss_a.ax, 0xa1a1);
    check_eq("tss16_saved_bx", tss_a.bx, 0xb2b2);
    check_eq("tss16_saved_sp", tss_a.sp, 0x7ff0);
    check_eq("tss16_saved_cs", tss_a.cs, SEL_R0B);
    check_eq("tss16_saved_ss", tss_a.ss, SEL_STK16);
    check_eq("tss16_saved_ds", tss_a.ds, SEL_KDATA);
    check("tss16_cr0_ts", read_cr0() & 8u);
    __asm__ volatile("clts");
    call_task_a(&main_eax);
    check_eq("tss16_second_call", t16_runs, 2);
    lo16("tss16_second_ax", t16_regs[0], 0xa1a1);
    lo16("tss16_second_sp", t16_regs[4], 0x7ff0);
    check_eq("tss16_second_back_link", tss_a.link, SEL_TSS);

    /* JMP to a 16-bit TSS and JMP back: no back link, no NT. */
    init_tss16(&tss_b, t16b_entry, 0x7000);
    tss_b.link = 0x1234;
    tss_b.ax = 0xbeef;
    gdt_set(SEL_TSS16B, (uint32_t)&tss_b, sizeof tss_b - 1, 0x81, 0x00);
    __asm__ volatile("ljmp $0x68, $0" ::: "memory", "cc");
    check_eq("tss16_jmp_ran", t16b_runs, 1);
    lo16("tss16_jmp_ax", t16b_ax, 0xbeef);
    lo16("tss16_jmp_no_nt", t16b_fl, 0x0002);
    check_eq("tss16_jmp_own_busy", t16b_own_type, 3);
    check_eq("tss16_jmp_main_free", t16b_main_type, 9);
    check_eq("tss16_jmp_link_kept", tss_b.link, 0x1234);
    check_eq("tss16_jmp_free_after", desc_type(SEL_TSS16B), 1);
    check_eq("tss16_jmp_main_busy_after", desc_type(SEL_TSS), 0xb);
    check_eq("tss16_jmp_saved_ip", tss_b.ip, off(t16b_after));
    check_eq("tss16_jmp_saved_cx", tss_b.cx, 0xc3c3);
    __asm__ volatile("clts");

    /* #GP(0x400) through a task gate to a 16-bit TSS. */
    init_tss16(&tss_b, t16c_entry, 0x7000);
    gdt_set(SEL_TSS16B, (uint32_t)&tss_b, sizeof tss_b - 1, 0x81, 0x00);
    gate_set(idt, 13, SEL_TSS16B, 0, 0x85, 0); /* task gate */
    int r = trigger_gp16();
    idt[13] = saved13;
    __asm__ volatile("clts");
    check_eq("tss16_gp_task_resumed", (uint32_t)r, 1);
    check_eq("tss16_gp_task_ran", t16c_runs, 1);
    check_eq("tss16_gp_error_word", t16c_err, 0x400);
    lo16("tss16_gp_error_sp", t16c_sp, 0x7000 - 2);
    lo16("tss16_gp_nt", t16c_fl, 0x4002);
    check_eq("tss16_gp_back_link", tss_b.link, SEL_TSS);
    check_eq("tss16_gp_free_after", desc_type(SEL_TSS16B), 1);
}
