/* Where the CPU models differ in results the manuals leave open
 * (docs/cpu.md "Model corner cases"): a 32-bit PUSH of a segment register
 * (the 386 and 486 write the selector as a word, the Pentium zero-extends
 * it), POPAD on a 16-bit stack (the 386 loads ESP's upper half from the
 * popped slot), a SIB byte with no index and a scale (the 386 scales the
 * base), and the undefined flags of AAA, AAS, AAD, DAA, DAS, byte and word
 * SHL/SHR and BT, which the 386 models give as the 386 does.  The family
 * comes from CPUID (#UD: a 386); "PASS family_N" says which one ran. */
#include "bm.h"

#define CF    0x001u
#define PF    0x004u
#define AF    0x010u
#define ZF    0x040u
#define SF    0x080u
#define OF    0x800u
#define ARITH (CF | PF | AF | ZF | SF | OF)

static unsigned family;
static volatile uint32_t cpuid_eax;

static void do_cpuid(void)
{
    uint32_t a = 1, b, c, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
    cpuid_eax = a;
}

/* One value for the 386, another for the 486 and the Pentium. */
static uint32_t by386(uint32_t on386, uint32_t later)
{
    return family == 3 ? on386 : later;
}

/* 64 KB area for a 16-bit stack segment (SLOT_A), aligned so that an
 * offset's low 16 bits are its place in the area. */
static uint8_t area[65536] __attribute__((aligned(65536)));
volatile uint32_t saved_esp, saved_ebp, got_esp, got_slot, got_regs[8];

/* ---- PUSH Sreg with a 32-bit operand ---- */

/* On the flat 32-bit stack: the slot below ESP holds 0xDEADBEEF first. */
#define PUSH32_FLAT(fn, sreg)                                                                      \
    static void fn(void)                                                                           \
    {                                                                                              \
        __asm__ volatile("mov %%esp, saved_esp\n"                                                  \
                         "movl $0xdeadbeef, -4(%%esp)\n"                                           \
                         "pushl %%" #sreg "\n"                                                     \
                         "mov %%esp, got_esp\n"                                                    \
                         "popl %%eax\n"                                                            \
                         "mov %%eax, got_slot\n" ::                                                \
                             : "eax", "memory");                                                   \
    }
PUSH32_FLAT(push32_es, es)
PUSH32_FLAT(push32_cs, cs)
PUSH32_FLAT(push32_ss, ss)
PUSH32_FLAT(push32_ds, ds)
PUSH32_FLAT(push32_fs, fs)
PUSH32_FLAT(push32_gs, gs)

/* On a 16-bit stack (SS = SLOT_A, ESP 0xABCD0100: SP moves, the upper
 * half stays): the slot at SP 0xFC. */
static void push32_ds_stack16(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "mov %0, %%ss\n"
                     "mov $0xabcd0100, %%esp\n"
                     "pushl %%ds\n"
                     "mov %%esp, got_esp\n"
                     "mov $0x10, %%ax\n"
                     "mov %%ax, %%ss\n"
                     "mov saved_esp, %%esp\n" ::"r"((uint32_t)SEL_SLOT_A)
                     : "eax", "memory");
}

/* A 16-bit operand writes the word and moves ESP by 2 on every model. */
static void push16_ds(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "movl $0xdeadbeef, -4(%%esp)\n"
                     "pushw %%ds\n"
                     "mov %%esp, got_esp\n"
                     "movl -2(%%esp), %%eax\n" /* the pushed word and the one below */
                     "mov %%eax, got_slot\n"
                     "mov saved_esp, %%esp\n" ::
                         : "eax", "memory");
}

static void check_push(void)
{
    static const struct {
        const char *name;
        void (*fn)(void);
        uint32_t sel;
    } t[] = {
        {"push32_es", push32_es, SEL_KDATA}, {"push32_cs", push32_cs, SEL_KCODE},
        {"push32_ss", push32_ss, SEL_KDATA}, {"push32_ds", push32_ds, SEL_KDATA},
        {"push32_fs", push32_fs, SEL_KDATA}, {"push32_gs", push32_gs, SEL_KDATA},
    };
    __asm__ volatile("mov %0, %%fs\n"
                     "mov %0, %%gs" ::"r"((uint32_t)SEL_KDATA));
    for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++) {
        got_esp = got_slot = 0;
        t[i].fn();
        /* 386 and 486: a word moved, the upper half as it was. */
        check_eq(t[i].name, got_slot, (family == 5 ? 0 : 0xdead0000u) | t[i].sel);
        puts_("  ");
        check_eq("push32_esp_moved_4", saved_esp - got_esp, 4);
    }

    *(volatile uint32_t *)(area + 0xfc) = 0xdeadbeef;
    got_esp = 0;
    push32_ds_stack16();
    check_eq("push32_ds_stack16_slot", *(volatile uint32_t *)(area + 0xfc),
             (family == 5 ? 0 : 0xdead0000u) | SEL_KDATA);
    puts_("  ");
    check_eq("push32_ds_stack16_esp", got_esp, 0xabcd00fc);

    got_esp = got_slot = 0;
    push16_ds();
    check_eq("push16_ds_word", got_slot,
             (uint32_t)SEL_KDATA << 16 | 0xbeef); /* the word below kept */
    puts_("  ");
    check_eq("push16_esp_moved_2", saved_esp - got_esp, 2);
}

/* ---- POPAD on a 16-bit stack ---- */

/* SS = SLOT_A, ESP 0x1234FFE0: the eight dwords at SP 0xFFE0 (EDI first),
 * SP wraps to 0 after them. */
static void popad_stack16(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "mov %%ebp, saved_ebp\n"
                     "mov %0, %%ss\n"
                     "mov $0x1234ffe0, %%esp\n"
                     "popal\n"
                     "mov %%esp, got_esp\n"
                     "mov %%eax, got_regs\n"
                     "mov %%ecx, got_regs+4\n"
                     "mov %%edx, got_regs+8\n"
                     "mov %%ebx, got_regs+12\n"
                     "mov %%ebp, got_regs+20\n"
                     "mov %%esi, got_regs+24\n"
                     "mov %%edi, got_regs+28\n"
                     "mov $0x10, %%ax\n"
                     "mov %%ax, %%ss\n"
                     "mov saved_esp, %%esp\n"
                     "mov saved_ebp, %%ebp\n" ::"r"((uint32_t)SEL_SLOT_A)
                     : "eax", "ebx", "ecx", "edx", "esi", "edi", "memory");
}
/* The same with a 16-bit operand (POPA): SP only, on every model. */
static void popa_stack16(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "mov %%ebp, saved_ebp\n"
                     "mov %0, %%ss\n"
                     "mov $0x1234fff0, %%esp\n"
                     "popaw\n"
                     "mov %%esp, got_esp\n"
                     "mov $0x10, %%ax\n"
                     "mov %%ax, %%ss\n"
                     "mov saved_esp, %%esp\n"
                     "mov saved_ebp, %%ebp\n" ::"r"((uint32_t)SEL_SLOT_A)
                     : "eax", "ebx", "ecx", "edx", "esi", "edi", "memory");
}
/* And POPAD on the flat stack: ESP moves by 32, the slot is ignored. */
static volatile uint32_t flat_frame[8];
static void popad_flat(void)
{
    __asm__ volatile("mov %%esp, saved_esp\n"
                     "mov %%ebp, saved_ebp\n"
                     "mov %0, %%esp\n"
                     "popal\n"
                     "mov %%esp, got_esp\n"
                     "mov saved_esp, %%esp\n"
                     "mov saved_ebp, %%ebp\n" ::"r"((uint32_t)flat_frame)
                     : "eax", "ebx", "ecx", "edx", "esi", "edi", "memory");
}

static void check_popad(void)
{
    volatile uint32_t *f = (volatile uint32_t *)(area + 0xffe0);
    static const uint32_t v[8] = {0x88888888, 0x77777777, 0x66666666, 0xdead5678,
                                  0x44444444, 0x33333333, 0x22222222, 0x11111111};
    for (unsigned i = 0; i < 8; i++)
        f[i] = v[i];
    popad_stack16();
    /* The 386: the slot's upper half, SP moved on; later: ESP's own. */
    check_eq("popad_stack16_esp", got_esp, by386(0xdead0000u, 0x12340000u));
    static const char *const names[8] = {"popad_eax", "popad_ecx", "popad_edx", "popad_ebx",
                                         "",          "popad_ebp", "popad_esi", "popad_edi"};
    for (unsigned r = 0; r < 8; r++) {
        if (r == 4) continue;
        puts_("  ");
        check_eq(names[r], got_regs[r], v[7 - r]);
    }

    popa_stack16();
    check_eq("popa16_stack16_esp", got_esp, 0x12340000u);

    for (unsigned i = 0; i < 8; i++)
        flat_frame[i] = 0xdead0000u + i;
    popad_flat();
    check_eq("popad_flat_esp", got_esp, (uint32_t)flat_frame + 32);
}

/* ---- SIB: index 100 with a scale ---- */

static volatile uint32_t sib_target __attribute__((aligned(8))) = 0x5a5a1234;

/* The SIB forms as bytes (the assembler no longer has %eiz), EAX in, EBX
 * out: ModRM 0x1C/0x5C (EBX, [SIB], [SIB+disp8]), SIB index 100. */
#define SIB_OP(bytes, in, out) __asm__ volatile(".byte " bytes : "=b"(out) : "a"(in) : "memory")

static void check_sib(void)
{
    uint32_t r, base = 0x100;
    SIB_OP("0x8d, 0x1c, 0xa0", base, r); /* lea ebx, [eax + eiz*4] */
    check_eq("sib_noindex_scale4_lea", r, by386(0x400, 0x100));
    SIB_OP("0x8d, 0x5c, 0x60, 0x10", base, r); /* lea ebx, [eax + eiz*2 + 0x10] */
    puts_("  ");
    check_eq("sib_noindex_scale2_disp8_lea", r, by386(0x210, 0x110));
    SIB_OP("0x8d, 0x1c, 0x20", base, r); /* lea ebx, [eax + eiz*1] */
    puts_("  ");
    check_eq("sib_noindex_scale1_lea", r, 0x100);
    /* No base (mod 00, base 101): nothing to scale, disp32 on every model. */
    SIB_OP("0x8d, 0x1c, 0xe5, 0x00, 0x10, 0x00, 0x00", base, r); /* lea ebx, [eiz*8 + 0x1000] */
    puts_("  ");
    check_eq("sib_noindex_nobase_lea", r, 0x1000);
    /* A load: the 386 reads at base * 2, the others at base. */
    uint32_t half = (uint32_t)&sib_target / 2;
    SIB_OP("0x8b, 0x1c, 0x60", half, r); /* mov ebx, [eax + eiz*2] */
    puts_("  ");
    check_eq("sib_noindex_scale2_load", r, family == 3 ? 0x5a5a1234u : *(volatile uint32_t *)half);
}

/* ---- undefined flags ---- */

/* Runs one instruction with EAX = *ax, ECX = cx and the arithmetic flags
 * `fl`; returns the arithmetic flags after it, *ax = EAX. */
#define FLAGS_OP(fn, insn)                                                                         \
    static uint32_t fn(uint32_t *ax, uint32_t fl, uint32_t cx)                                     \
    {                                                                                              \
        uint32_t a = *ax, f = fl | 2;                                                              \
        __asm__ volatile("push %1\n"                                                               \
                         "popf\n" insn "\n"                                                        \
                         "pushf\n"                                                                 \
                         "pop %1"                                                                  \
                         : "+a"(a), "+d"(f)                                                        \
                         : "c"(cx)                                                                 \
                         : "cc", "memory");                                                        \
        *ax = a;                                                                                   \
        return f & ARITH;                                                                          \
    }
FLAGS_OP(op_aaa, "aaa")
FLAGS_OP(op_aas, "aas")
FLAGS_OP(op_aad, "aad")
FLAGS_OP(op_daa, "daa")
FLAGS_OP(op_das, "das")
FLAGS_OP(op_shrb, "shrb %%cl, %%al")
FLAGS_OP(op_shrw, "shrw %%cl, %%ax")
FLAGS_OP(op_shlb, "shlb %%cl, %%al")
FLAGS_OP(op_shlw, "shlw %%cl, %%ax")
FLAGS_OP(op_btw, "btw %%cx, %%ax")
FLAGS_OP(op_btl, "btl %%ecx, %%eax")
FLAGS_OP(op_btsl, "btsl %%ecx, %%eax")
static volatile uint32_t bt_mem;
FLAGS_OP(op_btl_mem, "btl %%ecx, bt_mem")

typedef struct {
    const char *name;
    uint32_t (*op)(uint32_t *, uint32_t, uint32_t);
    uint32_t ax, fl, cx;
    uint32_t ax_after, fl386, fl_later; /* ax_after: the low 16 bits of EAX */
} flag_case;

/* fl386: the 386's rules (test386.asm's README, a 386SX; the ones marked
 * "measured" are points its author took); fl_later: the 486 and Pentium
 * models' (SZP from the result, OF/AF clear where undefined, BT keeps OF,
 * SHR's OF the operand's top bit). */
static const flag_case flag_cases[] = {
    {"aaa_7a", op_aaa, 0x007a, 0, 0, 0x0100, CF | AF | SF | OF, CF | PF | AF | ZF}, /* measured */
    {"aaa_79_af", op_aaa, 0x0079, AF, 0, 0x010f, CF | AF, CF | PF | AF},
    {"aaa_80", op_aaa, 0x0080, 0, 0, 0x0000, SF, ZF | PF},
    {"aas_00_af", op_aas, 0x0000, AF, 0, 0xfe0a, CF | PF | AF | SF, CF | PF | AF}, /* measured */
    {"aas_680_af", op_aas, 0x0680, AF, 0, 0x050a, CF | AF | OF, CF | PF | AF},     /* measured */
    {"aas_90", op_aas, 0x0090, 0, 0, 0x0000, SF | PF, ZF | PF},
    {"aas_8b", op_aas, 0x008b, 0, 0, 0xff05, CF | AF | SF, CF | PF | AF},
    {"aad_d8e", op_aad, 0x0d8e, 0, 0, 0x0010, CF | AF | OF, 0}, /* measured */
    {"aad_1f7", op_aad, 0x01f7, 0, 0, 0x0001, CF | AF, 0},      /* measured */
    {"aad_779", op_aad, 0x0779, 0, 0, 0x00bf, SF | OF, SF},
    {"daa_1a_cf", op_daa, 0x001a, CF, 0, 0x0080, CF | AF | SF | OF, CF | AF | SF}, /* measured */
    {"daa_7a", op_daa, 0x007a, 0, 0, 0x0080, AF | SF | OF, AF | SF},
    {"das_80_af", op_das, 0x0080, AF, 0, 0x007a, AF | OF, AF},           /* measured */
    {"shrb_82_2", op_shrb, 0x0082, 0, 2, 0x0020, CF | AF, CF | OF},      /* measured */
    {"shrb_81_1", op_shrb, 0x0081, 0, 1, 0x0040, CF | AF | OF, CF | OF}, /* measured */
    {"shrb_80_8", op_shrb, 0x0080, 0, 8, 0x0000, CF | PF | AF | ZF,
     CF | PF | ZF | OF},                                                             /* measured */
    {"shrb_80_16", op_shrb, 0x0080, 0, 16, 0x0000, CF | PF | AF | ZF, PF | ZF | OF}, /* measured */
    {"shrb_80_24", op_shrb, 0x0080, 0, 24, 0x0000, CF | PF | AF | ZF, PF | ZF | OF}, /* measured */
    {"shrb_c0_11", op_shrb, 0x00c0, 0, 11, 0x0000, PF | AF | ZF, PF | ZF | OF},
    {"shrw_8000_16", op_shrw, 0x8000, 0, 16, 0x0000, CF | PF | AF | ZF,
     CF | PF | ZF | OF}, /* measured */
    {"shrw_c000_3", op_shrw, 0xc000, 0, 3, 0x1800, PF | AF, PF | OF},
    {"shlb_01_16", op_shlb, 0x0001, 0, 16, 0x0000, CF | PF | AF | ZF | OF, PF | ZF}, /* measured */
    {"shlb_41_2", op_shlb, 0x0041, 0, 2, 0x0004, CF | AF | OF, CF | OF},             /* measured */
    {"shlb_00_24_cf", op_shlb, 0x0000, CF, 24, 0x0000, PF | AF | ZF, PF | ZF},
    {"shlw_0001_16", op_shlw, 0x0001, 0, 16, 0x0000, CF | PF | AF | ZF | OF,
     CF | PF | ZF | OF},                                /* measured */
    {"btw_1_1", op_btw, 0x0001, 0, 1, 0x0001, OF, 0},   /* measured */
    {"btw_1_17", op_btw, 0x0001, 0, 17, 0x0001, OF, 0}, /* the offset modulo 16 */
    {"btl_1_2", op_btl, 0x0001, 0, 2, 0x0001, OF, 0},   /* measured */
    {"btl_80000001_0", op_btl, 0x80000001u, 0, 0, 0x0001, CF | OF, CF},
    {"btl_1_3_of", op_btl, 0x0001, OF, 3, 0x0001, 0, OF}, /* the 486 keeps OF */
    {"btsl_1_1", op_btsl, 0x0001, 0, 1, 0x0003, OF, 0},
};

static void check_flags(void)
{
    for (unsigned i = 0; i < sizeof flag_cases / sizeof flag_cases[0]; i++) {
        const flag_case *t = &flag_cases[i];
        uint32_t ax = t->ax;
        uint32_t fl = t->op(&ax, t->fl, t->cx);
        if (i) puts_("  ");
        check_eq(t->name, fl, by386(t->fl386, t->fl_later));
        puts_("  ");
        check_eq("ax_after", ax & 0xffff, t->ax_after);
    }
    /* BT of a memory operand: the dword read, rotated as the register's. */
    bt_mem = 1;
    uint32_t ax = 0;
    puts_("  ");
    check_eq("btl_mem_1_1", op_btl_mem(&ax, 0, 1), by386(OF, 0));
}

void test_main(void)
{
    int v = catch_call(do_cpuid);
    family = v == 6 ? 3 : (cpuid_eax >> 8) & 15;
    check(family == 3   ? "family_386"
          : family == 4 ? "family_486"
                        : "family_586",
          family >= 3 && family <= 5);
    /* SLOT_A: 16-bit writable data, DPL 0, base = area, limit 0xFFFF. */
    gdt_set(SEL_SLOT_A, (uint32_t)area, 0xffff, 0x92, 0x00);
    check_push();
    check_popad();
    check_sib();
    check_flags();
}
