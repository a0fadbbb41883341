/* Virtual-8086 mode (SDM vol. 3A, chapter 20; Intel386 PRM chapter 15):
 * entry by a 32-bit IRET with EFLAGS.VM from CPL 0, exits through
 * exceptions and INT n to the ring-0 monitor (the V86 ES/DS/FS/GS pushed,
 * then nulled), real-mode address formation and the 64 KB limits, the
 * IOPL-sensitive CLI/STI/PUSHF/POPF/INT n/IRET, INT3/INTO (not
 * IOPL-sensitive), I/O through the TSS bitmap whatever IOPL, and IRET from
 * the monitor back to V86 mode.  CR4.VME is never set. */
#include "bm.h"

/* Low memory used by the V86 code (no paging: linear = physical). */
#define V86_CS 0x2000
#define V86_DS 0x2800
#define V86_ES 0x2900
#define V86_FS 0x2a00
#define V86_GS 0x2b00
#define V86_SS 0x3000
#define V86_SP 0x1000

#define EFL_VM   0x20000u
#define EFL_IOPL 0x3000u
#define EFL_RF   0x10000u

/* What v86_exit saves: the selectors as the handler found them, PUSHA,
 * the vector and error code (0 if the CPU pushed none), then the frame the
 * CPU pushed coming out of V86 mode. */
struct v86_exit {
    uint32_t gs_now, fs_now, es_now, ds_now;
    uint32_t edi, esi, ebp, esp_handler, ebx, edx, ecx, eax;
    uint32_t vector, err, eip, cs, eflags, esp, ss, es, ds, fs, gs;
};
volatile struct v86_exit vx;
volatile uint32_t v86_mon_esp, resume_count, resume_esp;

/* The V86 code, copied to V86_CS:0; OFF() gives a label's offset in it. */
__asm__(".text\n"
        ".globl v86_blob, v86_blob_end\n"
        ".code16\n"
        "v86_blob:\n"
        /* Real-mode address formation through every segment register. */
        "v_addr:\n"
        "   movw $0x1234, 0x10\n"
        "   movw $0x5678, %es:0x10\n"
        "   movw $0x9abc, %fs:0x10\n"
        "   movw $0xdef0, %gs:0x10\n"
        "   mov $0x2c00, %ax\n"
        "   mov %ax, %es\n"
        "   movw $0x4321, %es:0x20\n"
        "   mov %es, %di\n"
        "   mov $0x2900, %ax\n"
        "   mov %ax, %es\n"
        "   push $0x7777\n"
        "   mov $0x55, %bx\n"
        "   xor %ax, %ax\n"
        "v_addr_hlt:\n"
        "   hlt\n"
        /* 64 KB limits: a word at DS:FFFF, a word at SS:FFFF. */
        "v_lim_ds:\n"
        "   mov 0xffff, %ax\n"
        "v_lim_ss:\n"
        "   mov $0xffff, %bp\n"
        "v_lim_ss_at:\n"
        "   mov (%bp), %ax\n"
        /* Protected-mode-only instruction; divide error. */
        "v_ud:\n"
        "   arpl %ax, %ax\n"
        "v_de:\n"
        "   xor %dx, %dx\n"
        "   xor %cx, %cx\n"
        "   mov $1, %ax\n"
        "v_de_at:\n"
        "   div %cx\n"
        /* IOPL-sensitive instructions, each alone. */
        "v_cli: cli\n"
        "v_sti: sti\n"
        "v_pushf: pushf\n"
        "v_popf: popf\n"
        "v_intn: int $0x30\n"
        "v_iret: iret\n"
        /* INT3 and INTO go through the IDT at any IOPL. */
        "v_int3:\n"
        "   int3\n"
        "v_int3_after:\n"
        "   hlt\n"
        "v_into:\n"
        "   mov $0x7f, %al\n"
        "   add $1, %al\n"
        "   into\n"
        "v_into_after:\n"
        "   hlt\n"
        /* IOPL 3: the flag instructions work. */
        "v_flags:\n"
        "   pushf\n"
        "   pop %ax\n"
        "   sti\n"
        "   pushf\n"
        "   pop %bx\n"
        "   cli\n"
        "   pushf\n"
        "   pop %cx\n"
        "   push $0x02d7\n"
        "   popf\n"
        "   pushf\n"
        "   pop %dx\n"
        "   pushfl\n"
        "   popl %esi\n"
        "   push $0\n"
        "   popf\n"
        "v_flags_hlt:\n"
        "   hlt\n"
        /* IOPL 3: INT n through DPL-3 gates. */
        "v_int30:\n"
        "   int $0x30\n"
        "v_int30_after:\n"
        "   hlt\n"
        "v_int33:\n"
        "   int $0x33\n"
        "v_int32:\n"
        "   int $0x32\n"
        /* IOPL 3: IRET inside V86 mode keeps IOPL. */
        "v_iret3:\n"
        "   push $0x0001\n"
        "   push %cs\n"
        "   push $(v_iret3_target - v86_blob)\n"
        "   iret\n"
        "   hlt\n"
        "v_iret3_target:\n"
        "   pushf\n"
        "   pop %ax\n"
        "   mov %sp, %bx\n"
        "v_iret3_hlt:\n"
        "   hlt\n"
        /* I/O: the bitmap allows port 0x84 only (of 0x84/0x85). */
        "v_io:\n"
        "   in $0x84, %al\n"
        "   mov $1, %bx\n"
        "v_io_denied:\n"
        "   in $0x85, %al\n"
        "v_io_word:\n"
        "   mov $0x84, %dx\n"
        "v_io_word_at:\n"
        "   in %dx, %ax\n"
        "v_io_out:\n"
        "   mov $0x84, %dx\n"
        "   out %al, %dx\n"
        "   mov $2, %bx\n"
        "v_io_out_denied:\n"
        "   out %al, $0x85\n"
        /* The monitor IRETs back to V86 mode after changing the frame. */
        "v_resume:\n"
        "   mov $0x1111, %bx\n"
        "   int $0x31\n"
        "   mov %es, %di\n"
        "   mov %ds, %si\n"
        "   mov %sp, %cx\n"
        "   pushf\n"
        "   pop %dx\n"
        "v_resume_hlt:\n"
        "   hlt\n"
        /* Far CALL/RET in V86 mode are real-mode style. */
        "v_far:\n"
        "   lcall $0x2000, $(v_far_sub - v86_blob)\n"
        "v_far_back:\n"
        "   hlt\n"
        "v_far_sub:\n"
        "   mov %sp, %bp\n"
        "   mov (%bp), %ax\n"
        "   mov 2(%bp), %bx\n"
        "   lret\n"
        "v86_blob_end:\n"
        ".code32\n");

extern char v86_blob[], v86_blob_end[];
extern char v_addr[], v_addr_hlt[], v_lim_ds[], v_lim_ss[], v_lim_ss_at[], v_ud[], v_de[],
    v_de_at[], v_cli[], v_sti[], v_pushf[], v_popf[], v_intn[], v_iret[], v_int3[], v_int3_after[],
    v_into[], v_into_after[], v_flags[], v_flags_hlt[], v_int30[], v_int30_after[], v_int33[],
    v_int32[], v_iret3[], v_iret3_hlt[], v_io[], v_io_denied[], v_io_word[], v_io_word_at[],
    v_io_out[], v_io_out_denied[], v_resume[], v_resume_hlt[], v_far[], v_far_back[];
#define OFF(l) ((uint32_t)((l)-v86_blob))

/* Entry by IRET, the exit stubs and the resuming INT 0x31 handler. */
__asm__(".text\n"
        /* int v86_run(uint32_t ip, uint32_t eflags): runs V86 code at
         * V86_CS:ip until an exception or interrupt reaches v86_exit. */
        ".globl v86_run\n"
        "v86_run:\n"
        "   push %ebp\n"
        "   push %ebx\n"
        "   push %esi\n"
        "   push %edi\n"
        "   mov %esp, v86_mon_esp\n"
        "   mov 20(%esp), %eax\n"
        "   mov 24(%esp), %edx\n"
        "   pushl $0x2b00\n"
        "   pushl $0x2a00\n"
        "   pushl $0x2800\n"
        "   pushl $0x2900\n"
        "   pushl $0x3000\n"
        "   pushl $0x1000\n"
        "   orl $0x20002, %edx\n"
        "   pushl %edx\n"
        "   pushl $0x2000\n"
        "   pushl %eax\n"
        "   xor %eax, %eax\n"
        "   xor %ebx, %ebx\n"
        "   xor %ecx, %ecx\n"
        "   xor %edx, %edx\n"
        "   xor %esi, %esi\n"
        "   xor %edi, %edi\n"
        "   xor %ebp, %ebp\n"
        "   iretl\n"
        "v86_exit:\n"
        "   pusha\n"
        "   xor %eax, %eax\n"
        "   mov %ds, %ax\n"
        "   push %eax\n"
        "   mov %es, %ax\n"
        "   push %eax\n"
        "   mov %fs, %ax\n"
        "   push %eax\n"
        "   mov %gs, %ax\n"
        "   push %eax\n"
        "   mov $0x10, %ax\n"
        "   mov %ax, %ds\n"
        "   mov %ax, %es\n"
        "   mov %ax, %fs\n"
        "   mov %ax, %gs\n"
        "   cld\n"
        "   mov %esp, %esi\n"
        "   mov $vx, %edi\n"
        "   mov $23, %ecx\n"
        "   rep movsl\n"
        "   mov v86_mon_esp, %esp\n"
        "   mov vx+48, %eax\n"
        "   pop %edi\n"
        "   pop %esi\n"
        "   pop %ebx\n"
        "   pop %ebp\n"
        "   ret\n"
        /* INT 0x31 from V86: change the saved ES and CF, add to EBX, IRET
         * back.  DS is null here: globals through SS. */
        "v86_resume_stub:\n"
        "   incl %ss:resume_count\n"
        "   movl %esp, %ss:resume_esp\n"
        "   movl $0x2c00, 20(%esp)\n"
        "   orl $1, 8(%esp)\n"
        "   add $0x1111, %ebx\n"
        "   iretl\n"
        ".macro VSTUB n, haserr\n"
        "vstub\\n:\n"
        "   .if \\haserr == 0\n"
        "   pushl $0\n"
        "   .endif\n"
        "   pushl $\\n\n"
        "   jmp v86_exit\n"
        ".endm\n"
        "VSTUB 0,0\n VSTUB 1,0\n VSTUB 2,0\n VSTUB 3,0\n VSTUB 4,0\n VSTUB 5,0\n VSTUB 6,0\n"
        "VSTUB 7,0\n VSTUB 8,1\n VSTUB 9,0\n VSTUB 10,1\n VSTUB 11,1\n VSTUB 12,1\n VSTUB 13,1\n"
        "VSTUB 14,1\n VSTUB 15,0\n VSTUB 16,0\n VSTUB 17,1\n VSTUB 18,0\n VSTUB 19,0\n"
        "VSTUB 0x30,0\n");

int v86_run(uint32_t ip, uint32_t eflags);
extern char vstub0[], vstub1[], vstub2[], vstub3[], vstub4[], vstub5[], vstub6[], vstub7[],
    vstub8[], vstub9[], vstub10[], vstub11[], vstub12[], vstub13[], vstub14[], vstub15[], vstub16[],
    vstub17[], vstub18[], vstub19[], vstub0x30[], v86_resume_stub[];
static char *const vstubs[20] = {vstub0,  vstub1,  vstub2,  vstub3,  vstub4,  vstub5,  vstub6,
                                 vstub7,  vstub8,  vstub9,  vstub10, vstub11, vstub12, vstub13,
                                 vstub14, vstub15, vstub16, vstub17, vstub18, vstub19};

#define KTOP ((uint32_t)(kstack + sizeof kstack))

/* Runs V86 code at `ip` with the monitor's IDT installed, then restores
 * the runtime's. */
static int run(uint32_t ip, uint32_t iopl)
{
    uint64_t saved[20], saved_hi[4];
    for (unsigned v = 0; v < 20; v++) {
        saved[v] = idt[v];
        /* Exceptions ignore the gate DPL; INT3/INTO need DPL 3. */
        gate_set(idt, v, SEL_KCODE, (uint32_t)vstubs[v], (v == 3 || v == 4) ? 0xee : 0x8e, 0);
    }
    for (unsigned v = 0; v < 4; v++)
        saved_hi[v] = idt[0x30 + v];
    gate_set(idt, 0x30, SEL_KCODE, (uint32_t)vstub0x30, 0xee, 0);       /* DPL 3 */
    gate_set(idt, 0x31, SEL_KCODE, (uint32_t)v86_resume_stub, 0xee, 0); /* DPL 3 */
    gate_set(idt, 0x32, SEL_UCODE, 0, 0xee, 0);                         /* ring-3 code */
    gate_set(idt, 0x33, SEL_KCODE, (uint32_t)vstub0x30, 0x8e, 0);       /* DPL 0 */
    for (unsigned i = 0; i < sizeof vx / 4; i++)
        ((volatile uint32_t *)&vx)[i] = 0xdeadbeef;
    int r = v86_run(ip, iopl << 12);
    for (unsigned v = 0; v < 20; v++)
        idt[v] = saved[v];
    for (unsigned v = 0; v < 4; v++)
        idt[0x30 + v] = saved_hi[v];
    return r;
}

static volatile uint16_t *w16(uint32_t lin)
{
    return (volatile uint16_t *)lin;
}

/* An exit through #GP(0)/#SS(0)/... at V86 offset `ip`. */
static void expect_fault(const char *name, uint32_t entry, uint32_t iopl, uint32_t vec,
                         uint32_t err, uint32_t ip)
{
    uint32_t r = (uint32_t)run(entry, iopl);
    int ok = r == vec && vx.err == err && vx.eip == ip && vx.cs == V86_CS &&
             (vx.eflags & (EFL_VM | EFL_IOPL)) == (EFL_VM | iopl << 12);
    if (ok) {
        check(name, 1);
        return;
    }
    puts_("FAIL ");
    puts_(name);
    puts_(": vector ");
    puthex(r);
    puts_(" err ");
    puthex(vx.err);
    puts_(" eip ");
    puthex(vx.eip);
    puts_(" cs ");
    puthex(vx.cs);
    puts_(" eflags ");
    puthex(vx.eflags);
    puts_("\n");
    check(name, 0);
}

void test_main(void)
{
    /* Copy the V86 code below 1 MB; the I/O bitmap allows 0x84, not 0x85. */
    uint8_t *dst = (uint8_t *)(V86_CS << 4);
    for (char *p = v86_blob; p < v86_blob_end; p++)
        *dst++ = (uint8_t)*p;
    main_tss.iobitmap[0x84 / 8] &= (uint8_t) ~(1u << (0x84 & 7));
    *w16(0x28010) = *w16(0x29010) = *w16(0x2a010) = *w16(0x2b010) = *w16(0x2c020) = 0;

    /* Entry, address formation, the exit frame (HLT is #GP(0) at CPL 3). */
    check_eq("v86_hlt_gp", (uint32_t)run(OFF(v_addr), 0), 13);
    check_eq("v86_hlt_err", vx.err, 0);
    check_eq("v86_frame_eip", vx.eip, OFF(v_addr_hlt));
    check_eq("v86_frame_cs", vx.cs, V86_CS);
    /* RF in a fault frame is not asserted (P6 and later set it). */
    check_eq("v86_frame_eflags", vx.eflags & ~EFL_RF, EFL_VM | 0x46);
    check_eq("v86_frame_esp", vx.esp, V86_SP - 2);
    check_eq("v86_frame_ss", vx.ss, V86_SS);
    check_eq("v86_frame_es", vx.es, V86_ES);
    check_eq("v86_frame_ds", vx.ds, V86_DS);
    check_eq("v86_frame_fs", vx.fs, V86_FS);
    check_eq("v86_frame_gs", vx.gs, V86_GS);
    check_eq("v86_exit_ds_null", vx.ds_now, 0);
    check_eq("v86_exit_es_null", vx.es_now, 0);
    check_eq("v86_exit_fs_null", vx.fs_now, 0);
    check_eq("v86_exit_gs_null", vx.gs_now, 0);
    check_eq("v86_exit_on_esp0", vx.esp_handler, KTOP - 44);
    check_eq("v86_regs_bx", vx.ebx, 0x55);
    check_eq("v86_regs_di_es", vx.edi, 0x2c00);
    check_eq("v86_regs_ax", vx.eax, 0);
    check_eq("v86_write_ds", *w16(0x28010), 0x1234);
    check_eq("v86_write_es", *w16(0x29010), 0x5678);
    check_eq("v86_write_fs", *w16(0x2a010), 0x9abc);
    check_eq("v86_write_gs", *w16(0x2b010), 0xdef0);
    check_eq("v86_write_reloaded_es", *w16(0x2c020), 0x4321);
    check_eq("v86_push_ss", *w16((V86_SS << 4) + V86_SP - 2), 0x7777);

    /* 64 KB segment limits: #GP(0) for DS, #SS(0) for SS. */
    expect_fault("v86_limit_ds_gp", OFF(v_lim_ds), 0, 13, 0, OFF(v_lim_ds));
    expect_fault("v86_limit_ss_ss", OFF(v_lim_ss), 0, 12, 0, OFF(v_lim_ss_at));
    expect_fault("v86_arpl_ud", OFF(v_ud), 0, 6, 0, OFF(v_ud));
    expect_fault("v86_div_de", OFF(v_de), 0, 0, 0, OFF(v_de_at));

    /* IOPL 0: the sensitive instructions fault before doing anything. */
    expect_fault("v86_cli_iopl0_gp", OFF(v_cli), 0, 13, 0, OFF(v_cli));
    expect_fault("v86_sti_iopl0_gp", OFF(v_sti), 0, 13, 0, OFF(v_sti));
    expect_fault("v86_pushf_iopl0_gp", OFF(v_pushf), 0, 13, 0, OFF(v_pushf));
    check_eq("v86_pushf_iopl0_nothing_pushed", vx.esp, V86_SP);
    expect_fault("v86_popf_iopl0_gp", OFF(v_popf), 0, 13, 0, OFF(v_popf));
    expect_fault("v86_intn_iopl0_gp", OFF(v_intn), 0, 13, 0, OFF(v_intn));
    expect_fault("v86_iret_iopl0_gp", OFF(v_iret), 0, 13, 0, OFF(v_iret));

    /* INT3 and INTO are not IOPL-sensitive (SDM vol. 2, INT n: "the
     * virtual-8086 mode IOPL checks do not occur" for CC). */
    expect_fault("v86_int3_iopl0", OFF(v_int3), 0, 3, 0, OFF(v_int3_after));
    expect_fault("v86_into_iopl0", OFF(v_into), 0, 4, 0, OFF(v_into_after));
    check_eq("v86_into_frame_eflags", vx.eflags, EFL_VM | 0x892);

    /* IOPL 3: CLI/STI/PUSHF/POPF act on IF; POPF cannot change IOPL. */
    expect_fault("v86_flags_iopl3", OFF(v_flags), 3, 13, 0, OFF(v_flags_hlt));
    check_eq("v86_pushf_iopl3", vx.eax, 0x3002);
    check_eq("v86_sti_iopl3", vx.ebx, 0x3202);
    check_eq("v86_cli_iopl3", vx.ecx, 0x3002);
    check_eq("v86_popf_iopl3_keeps_iopl", vx.edx, 0x32d7);
    check_eq("v86_pushfd_no_vm_rf", vx.esi, 0x32d7);
    check_eq("v86_flags_exit_eflags", vx.eflags & ~EFL_RF, EFL_VM | 0x3002);
    check_eq("v86_flags_esp", vx.esp, V86_SP);

    /* IOPL 3: INT n through a DPL-3 gate reaches the monitor. */
    check_eq("v86_int30_iopl3", (uint32_t)run(OFF(v_int30), 3), 0x30);
    check_eq("v86_int30_eip", vx.eip, OFF(v_int30_after));
    check_eq("v86_int30_cs", vx.cs, V86_CS);
    check_eq("v86_int30_eflags", vx.eflags, EFL_VM | 0x3002);
    check_eq("v86_int30_esp", vx.esp, V86_SP);
    check_eq("v86_int30_ss", vx.ss, V86_SS);
    check_eq("v86_int30_ds", vx.ds, V86_DS);
    check_eq("v86_int30_gs", vx.gs, V86_GS);
    check_eq("v86_int30_ds_null", vx.ds_now, 0);
    check_eq("v86_int30_on_esp0", vx.esp_handler, KTOP - 44);
    expect_fault("v86_int_gate_dpl0_gp", OFF(v_int33), 3, 13, 0x33 * 8 + 2, OFF(v_int33));
    /* A gate to a ring-3 code segment: #GP(selector) (SDM vol. 2, INT n,
     * INTERRUPT-FROM-VIRTUAL-8086-MODE needs DPL 0). */
    expect_fault("v86_int_to_ring3_gp", OFF(v_int32), 3, 13, SEL_UCODE & 0xfffc, OFF(v_int32));

    /* IOPL 3: IRET within V86 mode. */
    expect_fault("v86_iret_iopl3", OFF(v_iret3), 3, 13, 0, OFF(v_iret3_hlt));
    check_eq("v86_iret_keeps_iopl", vx.eax, 0x3003);
    check_eq("v86_iret_pops", vx.ebx, V86_SP);

    /* I/O: the bitmap decides in V86 mode, whatever IOPL. */
    expect_fault("v86_io_bitmap_iopl0", OFF(v_io), 0, 13, 0, OFF(v_io_denied));
    check_eq("v86_io_allowed_ran", vx.ebx, 1);
    expect_fault("v86_io_bitmap_iopl3", OFF(v_io), 3, 13, 0, OFF(v_io_denied));
    expect_fault("v86_io_word_bitmap", OFF(v_io_word), 3, 13, 0, OFF(v_io_word_at));
    expect_fault("v86_out_bitmap", OFF(v_io_out), 0, 13, 0, OFF(v_io_out_denied));
    check_eq("v86_out_allowed_ran", vx.ebx, 2);

    /* The monitor IRETs back to V86 mode with a changed frame. */
    resume_count = 0;
    expect_fault("v86_monitor_iret", OFF(v_resume), 3, 13, 0, OFF(v_resume_hlt));
    check_eq("v86_monitor_ran", resume_count, 1);
    check_eq("v86_monitor_esp", resume_esp, KTOP - 36);
    check_eq("v86_monitor_ebx", vx.ebx, 0x2222);
    check_eq("v86_monitor_new_es", vx.edi, 0x2c00);
    check_eq("v86_monitor_ds_back", vx.esi, V86_DS);
    check_eq("v86_monitor_sp_back", vx.ecx, V86_SP);
    check_eq("v86_monitor_flags_back", vx.edx, 0x3003);
    check_eq("v86_monitor_frame_es", vx.es, 0x2c00);

    /* Far CALL/RET. */
    expect_fault("v86_far_call_ret", OFF(v_far), 0, 13, 0, OFF(v_far_back));
    check_eq("v86_far_call_ip", vx.eax, OFF(v_far_back));
    check_eq("v86_far_call_cs", vx.ebx, V86_CS);
    check_eq("v86_far_ret_sp", vx.esp, V86_SP);
}
