/* Ring 3 <-> ring 0: IRET to an outer level (data segments nulled), INT
 * through a DPL-3 gate with the TSS ESP0 stack switch, a call gate with
 * parameter copy and RET to the outer level, the I/O permission bitmap,
 * IOPL-sensitive instructions, and the gate DPL / not-present checks. */
#include "bm.h"

static volatile uint32_t r_eax, r_esp_before, io_ok;

static void u_nothing(void) {}
static void u_int80(void)
{
    uint32_t a;
    __asm__ volatile("int $0x80" : "=a"(a)::"memory");
    r_eax = a;
}
static void u_callgate(void)
{
    uint32_t a, sp;
    __asm__ volatile("mov %%esp, %1\n"
                     "pushl $0xbbbb\n"
                     "pushl $0xaaaa\n"
                     "lcall $0x53, $0\n"
                     "sub %%esp, %1\n"
                     : "=a"(a), "=&r"(sp)::"memory");
    r_eax = a;
    r_esp_before = sp; /* 0 if RET imm popped the parameters on this stack */
}
static void u_io_allowed(void)
{
    outb(0xe9, '.');
    io_ok = 1;
}
static void u_io_denied(void)
{
    (void)inb(0x80);
}
static void u_io_word_straddle(void)
{
    __asm__ volatile("outw %%ax, %%dx" ::"a"(0), "d"(0xe8));
}
static void u_cli(void)
{
    __asm__ volatile("cli");
}
static void u_int_dpl0(void)
{
    __asm__ volatile("int $0x83");
}
static void u_int_np(void)
{
    __asm__ volatile("int $0x82");
}
static void u_load_kdata(void)
{
    __asm__ volatile("mov %w0, %%ds" ::"r"(SEL_KDATA));
}
static void u_lgdt(void)
{
    static uint8_t buf[6];
    __asm__ volatile("lgdt %0" ::"m"(buf));
}

void test_main(void)
{
    check_eq("user_excursion", (uint32_t)run_user(u_nothing), 0x81);
    check_eq("iret_outer_nulls_ds", user_ds_seen & 0xffff, 0);
    check_eq("iret_outer_nulls_es", user_es_seen & 0xffff, 0);
    check_eq("frame_cs_from_ring3", last_cs, SEL_UCODE);

    check_eq("int80_excursion", (uint32_t)run_user(u_int80), 0x81);
    check_eq("int80_return_value", r_eax, 0x1234);
    check_eq("int80_saved_cs", isr80_cs & 0xffff, SEL_UCODE);
    check_eq("int80_saved_ss", isr80_ss & 0xffff, SEL_UDATA);
    check("int80_on_esp0_stack",
          isr80_frame_at >= (uint32_t)kstack && isr80_frame_at < (uint32_t)kstack + sizeof kstack);
    check("int80_saved_esp_user", isr80_esp > (uint32_t)user_stack &&
                                      isr80_esp <= (uint32_t)user_stack + sizeof user_stack);

    check_eq("callgate_excursion", (uint32_t)run_user(u_callgate), 0x81);
    check_eq("callgate_return_value", r_eax, 0x777);
    check_eq("callgate_cs_ring0", cg_cs & 0xffff, SEL_KCODE);
    check_eq("callgate_frame_cs", cg_frame[1] & 0xffff, SEL_UCODE);
    check_eq("callgate_param0", cg_frame[2], 0xaaaa);
    check_eq("callgate_param1", cg_frame[3], 0xbbbb);
    check_eq("callgate_old_ss", cg_frame[5] & 0xffff, SEL_UDATA);
    check("callgate_on_esp0_stack",
          cg_esp >= (uint32_t)kstack && cg_esp < (uint32_t)kstack + sizeof kstack);
    check_eq("ret_imm_outer_pops_params", r_esp_before, 0);

    check_eq("io_bitmap_allows", (uint32_t)run_user(u_io_allowed), 0x81);
    check_eq("io_bitmap_allowed_ran", io_ok, 1);
    check_eq("io_bitmap_denies", (uint32_t)run_user(u_io_denied), 13);
    check_eq("io_bitmap_denies_err", last_err, 0);
    check_eq("io_bitmap_all_bits", (uint32_t)run_user(u_io_word_straddle), 13);
    check_eq("cli_ring3_gp", (uint32_t)run_user(u_cli), 13);
    check_eq("lgdt_ring3_gp", (uint32_t)run_user(u_lgdt), 13);
    check_eq("int_gate_dpl0_gp", (uint32_t)run_user(u_int_dpl0), 13);
    check_eq("int_gate_dpl0_err", last_err, 0x83 * 8 + 2);
    check_eq("int_gate_np", (uint32_t)run_user(u_int_np), 11);
    check_eq("int_gate_np_err", last_err, 0x82 * 8 + 2);
    check_eq("ring3_load_ring0_data_gp", (uint32_t)run_user(u_load_kdata), 13);
    check_eq("ring3_load_ring0_data_err", last_err, SEL_KDATA);
}
