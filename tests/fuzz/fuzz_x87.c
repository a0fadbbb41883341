/* libFuzzer target: the x87 decoder and interpreter (cpu/fpu.c,
 * cpu/fpu_float.c), D8-DF with every ModRM, and WAIT.  The input is a
 * program: its first byte picks the CPU model (486DX2, Pentium, a 386 with
 * a 387, the 486SX) and the first 108 bytes after it are loaded with FRSTOR
 * (any control word, tags, TOP and register bit patterns: unnormals,
 * pseudo-NaNs, denormals ...); then records, each a flags byte (CR0's EM,
 * TS, MP and NE) and up to 14 instruction bytes, mostly made an ESC opcode,
 * run one at a time in flat 32-bit protected mode with whatever memory
 * operand they name (the FPU state carries over from record to record).
 * Exceptions go to IDT stubs that halt; an unmasked error with NE clear
 * freezes the CPU at the waiting instruction (IF is clear: the run ends).
 *
 * Checked beyond the sanitizers, after every record: the tags are 2-bit and
 * a non-empty register's tag is the one its value gives; the control word's
 * reserved bits read as the x87 reads them (bit 6 set, 7 and 13-15 clear);
 * ES and B agree, and say whether an unmasked exception is flagged; FERR#
 * (on the 387 and 486) follows ES.  docs/fuzzing.md. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "devices/pc/pc.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "fuzz_common.h"

#define MAX_LEN  4096u
#define GDT_ADDR 0x1000u
#define IDT_ADDR 0x2000u
#define STUBS    0x3000u /* 32 x `hlt` */
#define SETUP    0x4000u
#define IMAGE    0x5000u
#define CODE     0x8000u
#define STACK    0x70000u

static void put_desc(uint8_t *p, uint32_t lo, uint32_t hi)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(lo >> (8 * i));
        p[4 + i] = (uint8_t)(hi >> (8 * i));
    }
}

/* Runs from EIP until a HLT or `max` steps. */
static void run_to_halt(nm_cpu *c, unsigned max)
{
    for (unsigned k = 0; k < max && !nm_cpu_halted(c); k++)
        nm_cpu_run(c, 1);
}

static void check_fpu(const nm_cpu *c)
{
    const nm_fpu *f = &c->fpu;
    for (unsigned r = 0; r < 8; r++) {
        FZ_CHECK(f->tag[r] <= 3, "R%u's tag is %u", r, f->tag[r]);
        if (f->tag[r] != NM_FTAG_EMPTY)
            FZ_CHECK(f->tag[r] == fpu_tag_of(f->r[r]), "R%u's tag %u, its value's %u", r, f->tag[r],
                     fpu_tag_of(f->r[r]));
    }
    FZ_CHECK((f->cw & 0xe0c0) == 0x0040, "control word %04x: reserved bits", f->cw);
    bool es = (f->sw & NM_FSW_ES) != 0, b = (f->sw & NM_FSW_B) != 0;
    FZ_CHECK(es == b, "status word %04x: ES and B differ", f->sw);
    FZ_CHECK(es == ((f->sw & ~f->cw & 0x3f) != 0), "status word %04x, control %04x: ES", f->sw,
             f->cw);
    if (c->fpu_kind == NM_FPU_387 || c->fpu_kind == NM_FPU_486)
        FZ_CHECK(f->ferr == es, "FERR# %d with ES %d", f->ferr, es);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const cpus[4] = {"486dx2-66", "pentium-100", "386dx-40", "486sx-25"};
    if (size > MAX_LEN) return -1;
    fz_init_logging();
    fz_in in = {data, size};
    uint8_t how = fz_u8(&in);
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    g_free(cfg->cpu);
    cfg->cpu = g_strdup(cpus[how & 3]);
    if ((how & 3) == 2) cfg->fpu = g_strdup("387");
    cfg->ram_bytes = 1u << 20;
    nm_machine *m = nm_machine_new(cfg, &err);
    if (!m) fz_fail("fixture: %s", err->message);
    if (!nm_machine_add_device(m, &nm_fpuerr_class, NULL, &err))
        fz_fail("fixture: %s", err->message);
    nm_cpu *c = nm_cpu_new(m);
    if (!m->cpu) m->cpu = c;
    nm_cpu_reset(c);

    /* A flat GDT and an IDT of HLT stubs, loaded by LGDT/LIDT; then the
     * input's FPU state by FRSTOR. */
    uint8_t *ram = m->ram->host;
    put_desc(ram + GDT_ADDR, 0, 0);
    put_desc(ram + GDT_ADDR + 8, 0x0000ffffu, 0x00cf9a00u);
    put_desc(ram + GDT_ADDR + 16, 0x0000ffffu, 0x00cf9200u);
    for (uint32_t v = 0; v < 32; v++) {
        put_desc(ram + IDT_ADDR + v * 8, 0x08u << 16 | ((STUBS + v) & 0xffff), 0x8e00u);
        ram[STUBS + v] = 0xf4;
    }
    static const uint8_t pd[14] = {23,  0, GDT_ADDR & 0xff, GDT_ADDR >> 8, 0, 0, 0, 0,
                                   255, 0, IDT_ADDR & 0xff, IDT_ADDR >> 8, 0, 0};
    memcpy(ram + 0x6000, pd, sizeof pd);
    static const uint8_t setup[] = {
        0x0f, 0x01, 0x15, 0x00, 0x60, 0x00, 0x00, /* lgdt [0x6000] */
        0x0f, 0x01, 0x1d, 0x08, 0x60, 0x00, 0x00, /* lidt [0x6008] */
        0xdd, 0x25, 0x00, 0x50, 0x00, 0x00,       /* frstor [0x5000] */
        0xf4,
    };
    memcpy(ram + SETUP, setup, sizeof setup);
    fz_bytes(&in, ram + IMAGE, 108);
    nm_cpu_enter_flat32(c, SETUP, STACK);
    run_to_halt(c, 16);
    check_fpu(c);

    uint64_t records = 0;
    while (fz_more(&in) && records < 256) {
        uint8_t flags = fz_u8(&in);
        uint8_t code[16];
        unsigned n = 1 + (flags >> 4) % 14;
        fz_bytes(&in, code, n);
        if ((flags & 0x0c) != 0x0c)
            code[0] = (uint8_t)(0xd8 | (code[0] & 7)); /* an ESC */
        else if (flags & 2)
            code[0] = 0x9b; /* WAIT */
        code[n] = 0xf4;
        /* CR0: EM TS MP NE from the flags (PE kept) */
        uint32_t cr0 = c->cr0 & ~(uint32_t)(NM_CR0_EM | NM_CR0_TS | NM_CR0_MP | NM_CR0_NE);
        if (flags & 1) cr0 |= (flags & 2) ? NM_CR0_TS : NM_CR0_EM;
        if (flags & 2) cr0 |= NM_CR0_MP;
        if (!(flags & 8)) cr0 |= NM_CR0_NE;
        c->cr0 = cr0;
        nm_mem_dma_write(m->mem, CODE, code, n + 1); /* (the decoded-instruction cache hears) */
        /* registers: the memory operand lands anywhere in (and past) RAM,
         * mostly above the system tables (a store over the IDT makes the
         * next exception a triple fault: allowed, but not every time) */
        for (int r = 0; r < 8; r++)
            nm_cpu_set_reg(c, r, r == NM_ESP ? STACK : 0x10000u + fz_u32(&in) % 0x1f0000u);
        nm_cpu_set_eflags(c, 2);
        nm_cpu_set_eip(c, CODE);
        c->halted = false;
        run_to_halt(c, 8);
        check_fpu(c);
        records++;
    }
    fz_digest(m, &records, sizeof records);
    nm_machine_free(m);
    nm_config_free(cfg);
    return 0;
}
