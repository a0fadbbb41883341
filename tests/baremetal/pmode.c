/* Protected-mode entry, segment loads and their faults (#GP/#SS/#NP with
 * the selector error codes), limits, expand-down, LAR/LSL/VERR/VERW,
 * accessed bit, #TS on a short TSS, CPUID. */
#include "bm.h"

static void load_ds_beyond(void)
{
    __asm__ volatile("mov %w0, %%ds" ::"r"(0x400));
}
static void load_ds_slot_a(void)
{
    __asm__ volatile("mov %w0, %%fs" ::"r"(SEL_SLOT_A));
}
static void load_ss_null(void)
{
    __asm__ volatile("mov %w0, %%ss" ::"r"(0));
}
static void load_ss_user(void)
{
    __asm__ volatile("mov %w0, %%ss" ::"r"(SEL_UDATA));
}
static void load_ss_slot_b(void)
{
    __asm__ volatile("mov %w0, %%ss" ::"r"(SEL_SLOT_B));
}
static void load_ss_code(void)
{
    __asm__ volatile("mov %w0, %%ss" ::"r"(SEL_KCODE));
}
static void null_gs_read(void)
{
    uint32_t v;
    __asm__ volatile("mov %w1, %%gs; mov %%gs:0, %0" : "=r"(v) : "r"(0));
    (void)v;
}
static volatile uint32_t fs_val;
#define FS_ACCESS(name, insn)                                                                      \
    static void name(void)                                                                         \
    {                                                                                              \
        uint32_t v;                                                                                \
        __asm__ volatile("mov %w1, %%fs\n" insn : "=&q"(v) : "r"(SEL_SLOT_A) : "memory");          \
        fs_val = v;                                                                                \
    }
FS_ACCESS(fs_read_1000, "mov %%fs:0x1000, %0")
FS_ACCESS(fs_read_ffc, "mov %%fs:0xffc, %0")
FS_ACCESS(fs_read_ffe, "mov %%fs:0xffe, %0")
FS_ACCESS(fs_read_fff, "movb %%fs:0xfff, %b0")
FS_ACCESS(fs_write_0, "xor %0, %0; movl $1, %%fs:0")
static void ss_read_far(void)
{
    __asm__ volatile("mov %w0, %%ss; mov %%ss:0xfffffff0, %%eax" ::"r"(SEL_SLOT_B) : "eax");
}
static void jmp_small_tss(void)
{
    __asm__ volatile("ljmp $0x68, $0");
}
static void jmp_busy_tss(void)
{
    __asm__ volatile("ljmp $0x28, $0");
}
static void jmp_data(void)
{
    __asm__ volatile("ljmp $0x10, $0");
}
static void lldt_bad(void)
{
    __asm__ volatile("lldt %w0" ::"r"(SEL_KDATA));
}

static uint32_t lar(uint16_t sel, int *zf)
{
    uint32_t v = 0xdeadbeef;
    uint8_t z;
    __asm__ volatile("lar %w2, %0; setz %1" : "+r"(v), "=q"(z) : "r"(sel));
    *zf = z;
    return v;
}
static uint32_t lsl(uint16_t sel, int *zf)
{
    uint32_t v = 0xdeadbeef;
    uint8_t z;
    __asm__ volatile("lsl %w2, %0; setz %1" : "+r"(v), "=q"(z) : "r"(sel));
    *zf = z;
    return v;
}
static int verr(uint16_t sel)
{
    uint8_t z;
    __asm__ volatile("verr %w1; setz %0" : "=q"(z) : "r"(sel));
    return z;
}
static int verw(uint16_t sel)
{
    uint8_t z;
    __asm__ volatile("verw %w1; setz %0" : "=q"(z) : "r"(sel));
    return z;
}

static uint8_t small_tss[0x40];

void test_main(void)
{
    check("pmode_entry", 1);
    expect_exc("ds_beyond_gdt_gp", load_ds_beyond, 13, 0x400);

    gdt_set(SEL_SLOT_A, 0, 0xfffff, 0x13, 0xc0); /* data, not present */
    expect_exc("ds_not_present_np", load_ds_slot_a, 11, SEL_SLOT_A);
    gdt_set(SEL_SLOT_A, 0, 0xfffff, 0x98, 0xc0); /* execute-only code */
    expect_exc("ds_execute_only_gp", load_ds_slot_a, 13, SEL_SLOT_A);
    gdt_set(SEL_SLOT_A, 0, 0xfffff, 0xba, 0xc0); /* DPL 1 readable code */
    check_eq("ds_readable_code_ok", (uint32_t)catch_call(load_ds_slot_a), (uint32_t)-1);

    expect_exc("ss_null_gp", load_ss_null, 13, 0);
    expect_exc("ss_rpl3_gp", load_ss_user, 13, SEL_UDATA & ~3);
    expect_exc("ss_code_gp", load_ss_code, 13, SEL_KCODE);
    gdt_set(SEL_SLOT_B, 0, 0xfffff, 0x12, 0xc0); /* writable data, not present */
    expect_exc("ss_not_present_ss", load_ss_slot_b, 12, SEL_SLOT_B);

    expect_exc("null_seg_access_gp", null_gs_read, 13, 0);

    /* Byte-granular limit 0xfff, accessed bit clear. */
    gdt_set(SEL_SLOT_A, 0, 0xfff, 0x92, 0x40);
    check_eq("load_small_seg", (uint32_t)catch_call(load_ds_slot_a), (uint32_t)-1);
    check("accessed_bit_set", (gdt[SEL_SLOT_A >> 3] >> 40) & 1);
    check_eq("limit_ok_read", (uint32_t)catch_call(fs_read_ffc), (uint32_t)-1);
    expect_exc("limit_beyond_gp", fs_read_1000, 13, 0);
    expect_exc("limit_straddle_gp", fs_read_ffe, 13, 0);
    /* Read-only data: writes fault. */
    gdt_set(SEL_SLOT_A, 0, 0xfff, 0x90, 0x40);
    catch_call(load_ds_slot_a);
    expect_exc("readonly_write_gp", fs_write_0, 13, 0);
    /* Expand-down, 32-bit, limit 0xfff: valid offsets 0x1000..0xffffffff. */
    gdt_set(SEL_SLOT_A, 0, 0xfff, 0x96, 0x40);
    catch_call(load_ds_slot_a);
    check_eq("expand_down_ok", (uint32_t)catch_call(fs_read_1000), (uint32_t)-1);
    expect_exc("expand_down_gp", fs_read_fff, 13, 0);

    /* Stack limit: SS limit 16 MB, an SS: access near 4 GB is #SS(0). */
    gdt_set(SEL_SLOT_B, 0, 0xfff, 0x92, 0xc0);
    expect_exc("ss_limit_ss", ss_read_far, 12, 0);

    /* Far transfers that must fail. */
    for (unsigned i = 0; i < sizeof small_tss; i++)
        small_tss[i] = 0;
    tss_set(SEL_SMALLTSS, (struct tss *)small_tss, 0x20);
    expect_exc("jmp_short_tss_ts", jmp_small_tss, 10, SEL_SMALLTSS);
    expect_exc("jmp_busy_tss_gp", jmp_busy_tss, 13, SEL_TSS);
    expect_exc("jmp_data_seg_gp", jmp_data, 13, SEL_KDATA);
    expect_exc("lldt_not_ldt_gp", lldt_bad, 13, SEL_KDATA);

    int zf;
    uint32_t v = lar(SEL_KCODE, &zf);
    check("lar_code_zf", zf);
    check_eq("lar_code_value", v & 0x00f0ff00, 0x00c09b00);
    v = lsl(SEL_KDATA, &zf);
    check("lsl_data_zf", zf);
    check_eq("lsl_data_value", v, 0xffffffff);
    v = lsl(SEL_TSS, &zf);
    check_eq("lsl_tss_value", zf ? v : 0, sizeof(struct tss) - 1);
    lar(0x400, &zf);
    check("lar_beyond_nz", !zf);
    lsl(SEL_CGATE, &zf);
    check("lsl_callgate_nz", !zf);
    lar(SEL_CGATE, &zf);
    check("lar_callgate_zf", zf);
    check("verr_code", verr(SEL_KCODE));
    check("verw_code_not", !verw(SEL_KCODE));
    check("verw_data", verw(SEL_KDATA));
    gdt_set(SEL_SLOT_A, 0, 0xfff, 0x98, 0x40);
    check("verr_execonly_not", !verr(SEL_SLOT_A));

    /* CPUID (486 SL-enhanced and Pentium models have it). */
    uint32_t a = 0, b, c, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
    check_eq("cpuid_max_leaf", a, 1);
    check("cpuid_vendor", b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e);
}
