/* The 486 cost model on a 486DX2-66 (33 MHz bus: 2 core clocks per bus
 * clock), DRAM 5-2-2-2 (single 5): a line fill is 11 bus clocks = 22 core
 * clocks, a buffered write 5 bus clocks = 10 core clocks.  The fill's four
 * transfers arrive 5, 7, 9 and 11 bus clocks = 10, 14, 18 and 22 core
 * clocks after it starts, the requested dword first, then the 486 burst
 * order (dword first ^ k: 0-4-8-C, 4-0-C-8, 8-C-0-4, C-8-4-0).  Expected figures
 * are rows of the Intel486 Programmer's Reference Manual "Clock Count
 * Summary" plus the documented rules (cpu/timing/i486.c).  Most tests run
 * their code once to warm the cache, let the write buffer drain, then run
 * it again and measure instruction by instruction. */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/timing/i486.h"
#include "cpu/timing/timing.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "stretch_fixture.h"

#define CODE32 0x100000u
#define CODE16 0x7c00u
#define DATA   0x200000u
#define FILL   22u /* (5 + 3*2) bus clocks x 2 */
#define T0     10u /* the first transfer: 5 bus clocks x 2 */
#define T1     14u /* the second: (5 + 2) x 2 */
#define T2     18u /* the third: (5 + 2*2) x 2 */
#define WRITE  10u /* 5 bus clocks x 2 */

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    nm_timing *t;
    uint8_t *ram;
    uint32_t regs[8];
    uint32_t l2_size; /* set before fx_init: 0 (default) no L2 */
    bool real;        /* set before fx_init: real mode, code at 0000:CODE16 */
} fx;

static uint32_t entry_of(const fx *f)
{
    return f->real ? CODE16 : CODE32;
}

static void fx_init(fx *f, const uint8_t *code, size_t n)
{
    f->cfg = nm_config_new(); /* default CPU: 486dx2-66 */
    f->m = nm_machine_new(f->cfg, NULL);
    g_assert_nonnull(f->m);
    g_assert_cmpstr(f->m->model->name, ==, "486dx2-66");
    f->c = nm_cpu_new(f->m);
    f->ram = f->m->ram->host;
    nm_timing_params p;
    nm_timing_default_params(f->m->model, &p);
    g_assert_cmpuint(p.dram_first_clocks, ==, 5);
    g_assert_cmpuint(p.dram_burst_clocks, ==, 2);
    g_assert_cmpuint(p.l2_size, ==, 256u << 10);
    /* These tests pin the DRAM-only board (l2=none); test_l2_* the L2. */
    p.l2_size = f->l2_size;
    f->t = nm_timing_new(f->m, &p);
    memcpy(f->ram + entry_of(f), code, n);
    memset(f->regs, 0, sizeof f->regs);
    if (f->real) {
        /* From RESET: the reset vector's JMP FAR 0000:7C00 (no model yet). */
        nm_mem_region *rom = nm_memmap_add_rom(f->m->mem, "rom", 0xffff0000u, 0x10000);
        static const uint8_t jmp[] = {0xea, 0x00, 0x7c, 0x00, 0x00};
        nm_mem_region_load(rom, 0xfff0, jmp, sizeof jmp);
        nm_cpu_reset(f->c);
        g_assert_cmpuint(nm_cpu_run(f->c, 1), ==, 1);
        f->regs[NM_ESP] = 0x7000;
    } else {
        nm_cpu_enter_flat32(f->c, CODE32, 0x90000);
        f->regs[NM_ESP] = 0x90000;
    }
    f->c->cr0 &= ~(NM_CR0_CD | NM_CR0_NW); /* the 486 resets with the cache off */
    nm_timing_select(f->t, nm_cost_model_find("486"));
}

static void fx_free(fx *f)
{
    nm_timing_free(f->t);
    nm_cpu_free(f->c);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

static void set_regs(fx *f)
{
    for (int r = 0; r < 8; r++)
        nm_cpu_set_reg(f->c, r, f->regs[r]);
}

/* Runs the program to its HLT twice (the code lines, the data it reads,
 * and the line after the code, which the prefetcher asks for while the
 * first pass runs, are all cached), lets 1000 clocks pass (the write
 * buffer drains), and restarts it. */
static void warm(fx *f)
{
    for (int pass = 0; pass < 2; pass++) {
        set_regs(f);
        nm_cpu_set_eip(f->c, entry_of(f));
        nm_cpu_run(f->c, 100000);
        g_assert_true(f->m->stop_requested);
        f->m->stop_requested = 0;
        f->m->stop_reason = NM_STOP_NONE;
        g_free(f->m->stop_detail);
        f->m->stop_detail = NULL;
    }
    f->m->clock.cycles += 1000;
    set_regs(f);
    nm_cpu_set_eip(f->c, entry_of(f));
    /* A jump the model did not see: pause and resume it (as between two
     * measurement windows). */
    nm_timing_select(f->t, NULL);
    nm_timing_select(f->t, nm_cost_model_find("486"));
}

static uint64_t clocks_of(fx *f, uint64_t n)
{
    uint64_t before = f->m->clock.cycles;
    g_assert_cmpuint(nm_cpu_run(f->c, n), ==, n);
    return f->m->clock.cycles - before;
}

/* ALU reg,reg 1, dependent or not (no interlock between ALU results);
 * HLT 4.  Cold: the first instruction (bytes 0-1) waits for the first
 * transfer of the code line (dword 0, at 10); the second (bytes 2-3)
 * starts at 11 with its dword there; the third (bytes 4-5, dword 1)
 * starts at 12 and waits for the second transfer (at 14): 2 clocks. */
static void test_alu_chains(void)
{
    static const uint8_t code[] = {0x01, 0xd8, 0x01, 0xc0, 0x01, 0xca, 0xf4};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    set_regs(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + T0); /* cold code line */
    g_assert_cmpuint(clocks_of(&f, 2), ==, 1 + 1 + (T1 - 12));
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4);
    f.m->stop_requested = 0;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 3), ==, 3);
    fx_free(&f);
}

/* AGI: ADD EBX,ECX then MOV EAX,[EBX]: load 1 + 1 interlock; with an
 * unrelated register written first, 1.  Index register: +1. */
static void test_agi(void)
{
    static const uint8_t code[] = {
        0x01, 0xcb,       /* add ebx, ecx */
        0x8b, 0x03,       /* mov eax, [ebx]        AGI */
        0x01, 0xca,       /* add edx, ecx */
        0x8b, 0x03,       /* mov eax, [ebx]        no AGI */
        0x8b, 0x04, 0x33, /* mov eax, [ebx+esi]    index */
        0xf4,
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 1);
    fx_free(&f);
}

/* Prefixes: 1 clock each (66 01 D8 = ADD AX,BX: 1 + 1; 3E 66 with a load:
 * 1 + 2). */
static void test_prefix(void)
{
    static const uint8_t code[] = {0x66, 0x01, 0xd8, 0x3e, 0x66, 0x8b, 0x03, 0xf4};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 3);
    fx_free(&f);
}

/* Jcc taken 3, not taken 1; NOP 1; misaligned load +3. */
static void test_branches_misaligned(void)
{
    static const uint8_t code[] = {
        0x31, 0xc0, 0x74, 0x01, 0x90, 0x75,
        0x01, 0x90, 0x8b, 0x43, 0x02, /* mov eax, [ebx+2]: crosses a dword */
        0xf4,
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 3);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 3);
    fx_free(&f);
}

/* A load loop hitting one line, against one striding 16 bytes (a new line
 * each time, 16 KB > the 8 KB cache): MOV load 1, ADD 1, DEC 1, JNZ taken 3
 * = 6 per iteration.  Striding, the load waits for its own dword only (the
 * first transfer, 10) but the fill holds the bus for 22: a load starting at
 * s, its fill at f (>= s), ends at f + 10 + 1, the next load comes 5 clocks
 * later at f + 16 and its fill starts when the bus frees at f + 22.  So
 * the loop runs at the bus's pace, one 22-clock fill per iteration
 * (1 + 16 + 5), where waiting for whole fills cost 6 + 22 = 28. */
static void test_cache_loop(void)
{
    static const uint8_t code[] = {
        0x8b, 0x06, /* L: mov eax, [esi] */
        0x01, 0xd6, /*    add esi, edx */
        0x49,       /*    dec ecx */
        0x75, 0xf9, /*    jnz L */
        0xf4,
    };
    for (unsigned stride = 0; stride <= 16; stride += 16) {
        fx f = {0};
        fx_init(&f, code, sizeof code);
        f.regs[NM_ESI] = DATA;
        f.regs[NM_EDX] = stride;
        f.regs[NM_ECX] = 1024;
        set_regs(&f);
        clocks_of(&f, 4 * 8); /* eight iterations: code and (stride 0) data warm */
        g_assert_cmpuint(clocks_of(&f, 4 * 16), ==, 16 * (stride ? FILL : 6));
        fx_free(&f);
    }
}

/* A store stream: six MOV [EBX+d],EAX (1 clock each) into a 4-entry write
 * buffer draining one write per 10 clocks.  Writes enter at t = 0, 1, 2, 3
 * (done at 10, 20, 30, 40); the fifth at t = 4 waits for the first entry
 * (6 clocks), the sixth at t = 11 waits until 20 (9 clocks). */
static void test_write_buffer(void)
{
    static const uint8_t code[] = {
        0x89, 0x03, 0x89, 0x43, 0x04, 0x89, 0x43, 0x08, 0x89,
        0x43, 0x0c, 0x89, 0x43, 0x10, 0x89, 0x43, 0x14, 0xf4,
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 4), ==, 4);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 6);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 9);
    fx_free(&f);
}

/* A store across a dword boundary is two bus cycles on the 32-bit bus and
 * takes two write-buffer entries: MOV [EBX+2],EAX (1 clock, +3 misaligned)
 * puts entries done at 10 and 20; the next two stores (t = 4, 5) fill the
 * buffer (done 30, 40); the fourth (t = 6) waits for the first entry, until
 * 10: 4 clocks -> 4 + 1 + 1 + 1 + 4 = 11.  Aligned, the four stores fit
 * the four entries: 4 clocks. */
static void test_split_writes(void)
{
    static const uint8_t split[] = {0x89, 0x43, 0x02, 0x89, 0x43, 0x08, 0x89,
                                    0x43, 0x0c, 0x89, 0x43, 0x10, 0xf4};
    static const uint8_t aligned[] = {0x89, 0x43, 0x04, 0x89, 0x43, 0x08, 0x89,
                                      0x43, 0x0c, 0x89, 0x43, 0x10, 0xf4};
    for (int k = 0; k < 2; k++) {
        fx f = {0};
        fx_init(&f, k ? aligned : split, sizeof split);
        f.regs[NM_EBX] = DATA;
        warm(&f);
        g_assert_cmpuint(clocks_of(&f, 4), ==, k ? 4 : 11);
        fx_free(&f);
    }
}

/* REP MOVSD, ECX = 4, source cached: 12 + 3n = 24 clocks of execution; the
 * four writes (one per 3-clock iteration, issued after the reads: t = 1, 3,
 * 5, 7 by the one-access-per-clock rule) fit in the buffer: no stall. */
static void test_rep_movsd(void)
{
    static const uint8_t code[] = {0xf3, 0xa5, 0xf4};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_ESI] = DATA;
    f.regs[NM_EDI] = DATA + 0x1000;
    f.regs[NM_ECX] = 4;
    warm(&f);
    uint64_t got = clocks_of(&f, 1);
    if (got != 12 + 3 * 4) {
        nm_report *r = nm_report_new();
        nm_timing_report(f.t, r);
        nm_report_print(r, stderr);
        nm_report_free(r);
    }
    g_assert_cmpuint(got, ==, 12 + 3 * 4);
    fx_free(&f);
}

/* I/O in protected mode, CPL 0 <= IOPL (HelpPC 2.10, IN and OUT, 486
 * column): IN AL,imm8 8; OUT imm8,AL 11; IN AL,DX 8; OUT DX,AL 10. */
static void test_io_protected(void)
{
    static const uint8_t code[] = {0xe4, 0x80, 0xe6, 0x80, 0xec, 0xee, 0xf4};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EDX] = 0x80;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 8);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 11);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 8);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 10);
    fx_free(&f);
}

/* IDIV by a register 19 / 27 / 43 and by memory 20 / 28 / 44 (byte, word,
 * dword: HelpPC 2.10 and the iAPx86 Norton Guide, IDIV, 486 column); the
 * word forms carry the operand-size prefix (+1).  EDX:EAX = 0 and a divisor
 * of 7 keep every quotient 0 (the 486's IDIV time does not depend on the
 * values).  The divisor's line was cached by warm(). */
static void test_idiv(void)
{
    static const uint8_t code[] = {
        0xf6, 0xfb,       /* idiv bl */
        0x66, 0xf7, 0xfb, /* idiv bx */
        0xf7, 0xfb,       /* idiv ebx */
        0xf6, 0x3e,       /* idiv byte [esi] */
        0x66, 0xf7, 0x3e, /* idiv word [esi] */
        0xf7, 0x3e,       /* idiv dword [esi] */
        0xf4,
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    static const uint8_t seven[4] = {7, 0, 0, 0};
    memcpy(f.ram + DATA, seven, sizeof seven);
    f.regs[NM_EBX] = 7;
    f.regs[NM_ESI] = DATA;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 19);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 27 + 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 43);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 20);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 28 + 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 44);
    fx_free(&f);
}

/* Self-modifying code: the model keeps what it worked out of a decoded
 * instruction in the decoded-instruction cache (its row's clocks); a store
 * into the instruction makes it decoded again, and the new one is costed
 * as itself.  IDIV EBX (43) is patched into IDIV BL (19) by the MOV after
 * it; the JMP goes back to it. */
static void test_self_modifying_recost(void)
{
    static const uint8_t code[] = {
        0xf7, 0xfb,                               /* idiv ebx */
        0xc6, 0x05, 0x00, 0x00, 0x10, 0x00, 0xf6, /* mov byte [0x100000], 0xf6 */
        0xeb, 0xf5,                               /* jmp 0 */
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = 7;
    set_regs(&f);
    nm_cpu_set_eip(f.c, CODE32);
    g_assert_cmpuint(nm_cpu_run(f.c, 3), ==, 3); /* idiv ebx, the patch, the jump */
    f.m->clock.cycles += 1000;                   /* the write buffer drains */
    g_assert_cmpuint(nm_cpu_get_eip(f.c), ==, CODE32);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 19); /* idiv bl */
    g_assert_cmpuint(nm_cpu_get_eip(f.c), ==, CODE32 + 2);
    fx_free(&f);
}

/* ---- the board's L2 (l2=256K, the default): a line from the L2 is a
 * 2-1-1-1 burst = 5 bus clocks = 10 core clocks on the DX2-66 (the 486's
 * zero-wait burst, Intel486 data book "burst cycles"); a write that hits
 * the L2 is one 2-clock non-burst cycle = 4 core clocks. */
#define L2FILL 10u

/* The strided load loop of test_cache_loop over 32 KB (4x the L1) with the
 * L2: the first pass misses the L2 too and runs at the DRAM bursts' pace,
 * 22 per iteration (test_cache_loop); the second pass misses the L1 but
 * hits the L2: the first transfer comes 2 bus clocks = 4 core clocks after
 * the fill starts, the fill holds the bus 10; a load at f ends at f + 5,
 * the next load comes at f + 10, just as the bus frees: 1 + 4 + 5 = 10
 * per iteration (against 6 + 10 waiting for whole fills). */
static void test_l2_fill(void)
{
    static const uint8_t code[] = {
        0x8b, 0x06, /* L: mov eax, [esi] */
        0x01, 0xd6, /*    add esi, edx */
        0x49,       /*    dec ecx */
        0x75, 0xf9, /*    jnz L */
        0xf4,
    };
    fx f = {.l2_size = 256u << 10};
    fx_init(&f, code, sizeof code);
    f.regs[NM_ESI] = DATA;
    f.regs[NM_EDX] = 16;
    f.regs[NM_ECX] = 2048;
    set_regs(&f);
    clocks_of(&f, 4 * 8);
    g_assert_cmpuint(clocks_of(&f, 4 * 16), ==, 16 * FILL); /* L2 cold: DRAM */
    warm(&f); /* runs the whole 32 KB pass, restarts at ESI = DATA */
    clocks_of(&f, 4 * 8);
    g_assert_cmpuint(clocks_of(&f, 4 * 16), ==, 16 * L2FILL);
    fx_free(&f);
}

/* The store stream of test_write_buffer to lines the L2 holds: each write
 * drains in 4 clocks (done at 4, 8, 12, 16, 20 for writes issued at t = 0..4);
 * the sixth (t = 5) finds four entries pending and waits until 8: 3 clocks
 * (against 6 + 9 at the DRAM's 10). */
static void test_l2_write_buffer(void)
{
    static const uint8_t code[] = {
        0x8b, 0x0b, 0x8b, 0x4b, 0x10, /* mov ecx, [ebx]; mov ecx, [ebx+16]: both lines
                                       * are read, so the L2 holds them */
        0x89, 0x03, 0x89, 0x43, 0x04, 0x89, 0x43, 0x08, 0x89,
        0x43, 0x0c, 0x89, 0x43, 0x10, 0x89, 0x43, 0x14, 0xf4,
    };
    fx f = {.l2_size = 256u << 10};
    fx_init(&f, code, sizeof code);
    /* Not DATA itself: the L2 is direct-mapped, and DATA and CODE32 are
     * 256 KB apart, so their lines share L2 entries. */
    f.regs[NM_EBX] = DATA + 0x100;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 2), ==, 2);
    g_assert_cmpuint(clocks_of(&f, 5), ==, 5);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 3);
    fx_free(&f);
}

/* A read miss passes buffered writes when all of them hit the cache
 * (Embedded Intel486 Hardware Reference Manual, "write buffers"), l2=none:
 * writes 10 clocks on the bus, a fill 22, its first transfer 10 after it
 * starts.  Two writes at t = 0 (bus 0-10) and t = 1 (queued 10-20), then a
 * load that misses at t = 2: with cache-hit writes the fill runs 10-32 and
 * the load has its dword at 20 (1 + 18 clocks); with write misses the fill
 * waits for both writes, 20-42, its dword at 30 (1 + 28 clocks). */
static void test_read_ahead_of_writes(void)
{
    static const uint8_t code[] = {
        0x8b, 0x55, 0x00, /* mov edx, [ebp]      keeps DATA's line cached */
        0x89, 0x07,       /* mov [edi], eax */
        0x89, 0x47, 0x04, /* mov [edi+4], eax */
        0x8b, 0x0e,       /* mov ecx, [esi] */
        0xf4,
    };
    for (int hit = 1; hit >= 0; hit--) {
        fx f = {0};
        fx_init(&f, code, sizeof code);
        f.regs[NM_EBP] = DATA;
        f.regs[NM_EDI] = hit ? DATA : DATA + 0x3000;
        f.regs[NM_ESI] = DATA + 0x1000;
        warm(&f);
        nm_cpu_set_reg(f.c, NM_ESI, DATA + 0x2000); /* a line not cached */
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
        g_assert_cmpuint(clocks_of(&f, 2), ==, 2);
        g_assert_cmpuint(clocks_of(&f, 1), ==, hit ? 1 + 18 : 1 + 28);
        fx_free(&f);
    }
}

/* Critical word first, l2=none: a load that misses waits for its own
 * dword, the fill's first transfer (10), whichever dword of the line it
 * is; the rest of the line comes in the 486 burst order.  For each
 * requested dword f: mov eax,[X+4f] (1 + 10 = 11, ends at 11), then
 * mov ebx,[X+0Ch] (the same line: dword 3 is transfer 3 ^ f, in at 22, 18,
 * 14 or 10: 1 + 11, 1 + 7, 1 + 3, 1 + 0), then mov ecx,[X+100h] (another
 * line, asked for at t = 23, 19, 15 or 12: its fill starts at t or when
 * the first one leaves the bus at 22, whichever is later, and its dword is
 * in 10 later: 1 + 10, 1 + 13, 1 + 17, 1 + 20). */
static void test_data_miss_positions(void)
{
    static const uint8_t code[] = {
        0x8b, 0x06,       /* mov eax, [esi] */
        0x8b, 0x1f,       /* mov ebx, [edi] */
        0x8b, 0x4d, 0x00, /* mov ecx, [ebp] */
        0xf4,
    };
    static const unsigned third[4] = {FILL, T2, T1, T0}; /* dword 3's arrival */
    for (unsigned first = 0; first < 4; first++) {
        fx f = {0};
        fx_init(&f, code, sizeof code);
        f.regs[NM_ESI] = f.regs[NM_EDI] = f.regs[NM_EBP] = DATA;
        warm(&f);
        uint32_t x = DATA + 0x2000; /* not cached */
        nm_cpu_set_reg(f.c, NM_ESI, x + 4 * first);
        nm_cpu_set_reg(f.c, NM_EDI, x + 0xc);
        nm_cpu_set_reg(f.c, NM_EBP, x + 0x100);
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + T0);
        uint64_t second = clocks_of(&f, 1);
        g_assert_cmpuint(second, ==, 1 + (third[first] > 1 + T0 ? third[first] - (1 + T0) : 0));
        uint64_t t = 1 + T0 + second, start = t > FILL ? t : FILL;
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + (start + T0 - t));
        fx_free(&f);
    }
}

/* The prefetch queue runs one 16-byte block ahead (Embedded Intel486
 * Hardware Reference Manual 3.4: "one byte plus one aligned 16-byte
 * block"), l2=none, code cold: AAM (15) at offset 0 waits for dword 0 of
 * its line (10): 25.  Decoding it made room in the queue, so the
 * prefetcher asked for the next line at 10; the bus frees at 22 and that
 * fill runs 22-44.  Fourteen NOPs (bytes 2-15, all in by 22) take 14
 * clocks, so the NOP at offset 16 starts at 39, after the next line's
 * first transfer (32): 1 clock (a fetch on demand at 39 would have waited
 * until 49).  HLT (offset 17, the same dword) 4. */
static void test_code_prefetch_ahead(void)
{
    uint8_t code[18];
    code[0] = 0xd4, code[1] = 0x0a; /* aam */
    memset(code + 2, 0x90, 15);     /* nop x 15 */
    code[17] = 0xf4;
    fx f = {0};
    fx_init(&f, code, sizeof code);
    set_regs(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, T0 + 15);
    g_assert_cmpuint(clocks_of(&f, 14), ==, 14);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4);
    fx_free(&f);
}

/* A taken branch to a line not cached, l2=none, code cold.  JMP short at
 * offset 0: 3 + 10 (its dword, at 10).  The target, mov eax,1 at 4Ah
 * (bytes Ah-Eh of its line: dwords 2 and 3), flushes the queue: the
 * prefetch of the line after the JMP, asked for at 10, has not had the bus
 * (busy until 22) and is dropped; the target's fill starts at 22 with
 * dword 2 (in at 32), then dword 3 (at 36): the MOV, starting at 13, waits
 * 23 clocks.  HLT at 4Fh (dword 3, in) 4.  With AAM (15) before the JMP,
 * the prefetch of the next line has had the bus since 22 when the target
 * is asked for (at 28): it completes (22-44), the target's fill runs
 * 44-66, dwords 2 and 3 in at 54 and 58: the MOV waits 30. */
static void test_branch_to_cold_line(void)
{
    for (int aam = 0; aam <= 1; aam++) {
        uint8_t code[0x50] = {0};
        unsigned at = 0;
        if (aam) code[at++] = 0xd4, code[at++] = 0x0a;
        code[at] = 0xeb, code[at + 1] = (uint8_t)(0x4a - (at + 2)); /* jmp short 4Ah */
        static const uint8_t target[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0xf4};
        memcpy(code + 0x4a, target, sizeof target);
        fx f = {0};
        fx_init(&f, code, sizeof code);
        set_regs(&f);
        if (aam) {
            g_assert_cmpuint(clocks_of(&f, 1), ==, T0 + 15);
            g_assert_cmpuint(clocks_of(&f, 1), ==, 3);
            g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + (2 * FILL + T1) - 28);
        } else {
            g_assert_cmpuint(clocks_of(&f, 1), ==, 3 + T0);
            g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + (FILL + T1) - 13);
        }
        g_assert_cmpuint(clocks_of(&f, 1), ==, 4);
        fx_free(&f);
    }
}

/* OUT waits until the buffered writes are on the bus (Embedded Intel486
 * Hardware Reference Manual, "write buffers": "when processing an OUT
 * instruction, internal execution stops until all buffered writes and the
 * I/O write are completed"), l2=none: a write at t = 0 is on the bus until
 * 10; OUT DX,AL (PM, CPL <= IOPL: 10) starting at t = 1 waits 9. */
static void test_out_drains_writes(void)
{
    static const uint8_t code[] = {0x89, 0x03, 0xee, 0xf4};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    f.regs[NM_EDX] = 0x80;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 10 + 9);
    fx_free(&f);
}

/* ---- protected-mode structures in guest RAM: GDT at 0x1000 (null, flat
 * ring-0 code 0x08 and data 0x10, a 32-bit call gate 0x18 to
 * 0x08:`target`), IDT at 0x2000 (vector 0x40: a 32-bit interrupt gate to
 * 0x08:`target`).  The tests' warm-up run caches their lines. */
#define PM_GDT 0x1000u
#define PM_IDT 0x2000u

static void put_desc(uint8_t *p, uint32_t lo, uint32_t hi)
{
    memcpy(p, &lo, 4);
    memcpy(p + 4, &hi, 4);
}

static void pm_tables(fx *f, uint32_t target)
{
    uint8_t *g = f->ram + PM_GDT;
    put_desc(g, 0, 0);
    put_desc(g + 0x08, 0x0000ffff, 0x00cf9a00);
    put_desc(g + 0x10, 0x0000ffff, 0x00cf9200);
    put_desc(g + 0x18, (0x08u << 16) | (target & 0xffff), (target & 0xffff0000u) | 0x8c00);
    put_desc(f->ram + PM_IDT + 0x40 * 8, (0x08u << 16) | (target & 0xffff),
             (target & 0xffff0000u) | 0x8e00);
    f->c->gdtr = (nm_dtr){PM_GDT, 0x1f};
    f->c->idtr = (nm_dtr){PM_IDT, 0x40 * 8 + 7};
}

/* A far CALL through a same-privilege 32-bit call gate, against a direct
 * one: clock count summary "CALL ptr16:32, protected mode, via call gate to
 * same privilege level 35", "direct, same privilege 20"; "RET far, same
 * privilege level 18"; NOP 1.  Warm: code, GDT and stack lines are cached;
 * the two pushes of each CALL fit in the 4-entry write buffer (drained by
 * the time of the next CALL). */
static void test_far_call_gate(void)
{
    uint8_t code[0x44] = {0};
    static const uint8_t prog[] = {
        0x9a, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, /* call far 0x18:0 (the gate) */
        0x90,                                     /* nop */
        0x9a, 0x40, 0x00, 0x10, 0x00, 0x08, 0x00, /* call far 0x08:CODE32+0x40 */
        0xf4,
    };
    memcpy(code, prog, sizeof prog);
    code[0x40] = 0xcb; /* retf */
    fx f = {0};
    fx_init(&f, code, sizeof code);
    pm_tables(&f, CODE32 + 0x40);
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 35); /* CALL via gate, same privilege */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 18); /* RET far, same privilege */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);  /* NOP */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 20); /* CALL far direct */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 18); /* RET far */
    fx_free(&f);
}

/* INT/IRET in protected mode at CPL 0: "INT n, protected mode, interrupt
 * gate, same privilege 44"; "IRET, protected mode, same privilege 20".
 * The three pushes go to the write buffer; the IRET's pops hit the stack
 * line the warm-up cached. */
static void test_int_iret_protected(void)
{
    uint8_t code[0x41] = {0xcd, 0x40, 0xf4}; /* int 0x40; hlt */
    code[0x40] = 0xcf;                       /* the handler: iretd */
    fx f = {0};
    fx_init(&f, code, sizeof code);
    pm_tables(&f, CODE32 + 0x40);
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 44);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 20);
    fx_free(&f);
}

/* Exceptions are delivered like INT n through an interrupt gate ("INT n,
 * protected mode, same privilege 44", Intel486 clock count summary: the
 * table gives no separate figure for exceptions), charged at the
 * handler's first instruction, which the model sees arrive out of
 * sequence; the faulting instruction does not complete and costs the one
 * clock of the run loop's fault delivery (cpu/cpu.c).  Handlers: add
 * dword [esp],2 (3: "ADD mem,imm 3") to step over the 2-byte faulting
 * instruction, then IRETD (20).  #GP and #PF push an error code, popped
 * first with add esp,4 (1). */
enum { FAULT_PLAIN, FAULT_EM };
static void fault_case(uint8_t vector, const uint8_t *insn, bool error_code, uint32_t eax,
                       int setup)
{
    uint8_t code[0x48] = {0};
    memcpy(code, insn, 2);
    code[2] = 0xf4;
    static const uint8_t pop_err[] = {0x83, 0xc4, 0x04};
    static const uint8_t skip[] = {0x83, 0x04, 0x24, 0x02, 0xcf};
    size_t at = 0x40;
    if (error_code) {
        memcpy(code + at, pop_err, sizeof pop_err);
        at += sizeof pop_err;
    }
    memcpy(code + at, skip, sizeof skip);
    fx f = {0};
    fx_init(&f, code, sizeof code);
    pm_tables(&f, CODE32 + 0x40);
    put_desc(f.ram + PM_IDT + vector * 8u, (0x08u << 16) | ((CODE32 + 0x40) & 0xffff),
             ((CODE32 + 0x40) & 0xffff0000u) | 0x8e00);
    f.regs[NM_EAX] = eax;
    if (setup == FAULT_EM) cpu_write_cr(f.c, 0, f.c->cr0 | NM_CR0_EM);
    warm(&f);
    uint64_t b = f.m->clock.cycles;
    g_assert_cmpuint(nm_cpu_run(f.c, 1), ==, 0); /* the fault: no instruction completes */
    g_assert_cmpuint(f.m->clock.cycles - b, ==, 1);
    g_assert_cmpuint(f.c->eip, ==, CODE32 + 0x40);
    uint64_t first = clocks_of(&f, 1);
    g_test_message("vector %u: handler's first instruction %" G_GUINT64_FORMAT, vector, first);
    g_assert_cmpuint(first, ==, 44 + (error_code ? 1 : 3));
    fx_free(&f);
}

/* A REP STOSD and an unrolled loop of MOV [EDI+k],EAX storing the same 16
 * dwords to lines the cache does not hold (no write allocation): both are
 * paced by the bus, one 5-clock DRAM write (10 core clocks) each through
 * the 4-entry write buffer, and an OUT after them waits until the last has
 * left the bus (Embedded Intel486 HRM p. 3-10).  The string's writes come
 * at its 4 clocks an iteration ("REP STOS 7+4n"), the MOVs' at 1 clock, so
 * both are bus-bound: from the first write to the OUT the two take the
 * same time, 16 x 10 clocks of writes plus the OUT. */
static uint64_t stores_then_out(const uint8_t *code, size_t n)
{
    uint8_t prog[128];
    memcpy(prog, code, n);
    static const uint8_t out[] = {0xe6, 0x80, 0xf4}; /* out 0x80,al; hlt */
    memcpy(prog + n, out, sizeof out);
    fx f = {0};
    fx_init(&f, prog, n + sizeof out);
    f.regs[NM_EDI] = DATA + 0x4000;
    f.regs[NM_ECX] = 16;
    warm(&f);
    uint64_t before = f.m->clock.cycles;
    nm_cpu_run(f.c, n == 2 ? 2 : 17); /* the stores and the OUT */
    uint64_t t = f.m->clock.cycles - before;
    fx_free(&f);
    return t;
}

static void test_rep_vs_unrolled_stores(void)
{
    static const uint8_t rep[] = {0xf3, 0xab}; /* rep stosd */
    uint8_t unrolled[48];
    for (unsigned k = 0; k < 16; k++) {
        unrolled[3 * k] = 0x89; /* mov [edi+4k],eax */
        unrolled[3 * k + 1] = 0x47;
        unrolled[3 * k + 2] = (uint8_t)(4 * k);
    }
    uint64_t a = stores_then_out(rep, sizeof rep), b = stores_then_out(unrolled, sizeof unrolled);
    g_test_message("rep stosd + out: %" G_GUINT64_FORMAT ", 16 movs + out: %" G_GUINT64_FORMAT, a,
                   b);
    g_assert_cmpuint(a, ==, b);
}

static void test_fault_delivery(void)
{
    static const uint8_t ud2[] = {0x0f, 0x0b}, mov_ds[] = {0x8e, 0xd8}, fld1[] = {0xd9, 0xe8};
    fault_case(6, ud2, false, 0, FAULT_PLAIN);       /* #UD */
    fault_case(13, mov_ds, true, 0x40, FAULT_PLAIN); /* #GP(0x40): beyond the GDT limit */
    fault_case(7, fld1, false, 0, FAULT_EM);         /* #NM: ESC with CR0.EM */
}

/* Real mode: "IN AL,imm8 real 14", "OUT imm8,AL real 16", "IN AL,DX real
 * 14", "OUT DX,AL real 16"; "INT n, real mode 26"; "IRET, real mode 15".
 * No buffered writes are pending at the I/O instructions (warm() lets the
 * buffer drain); IVT, stack and code lines are cached. */
static void test_real_mode_io_int(void)
{
    static const uint8_t code[] = {
        0xe4, 0x80, /* in al, 0x80 */
        0xe6, 0x80, /* out 0x80, al */
        0xec,       /* in al, dx */
        0xee,       /* out dx, al */
        0xcd, 0x20, /* int 0x20 */
        0xf4,
    };
    fx f = {.real = true};
    fx_init(&f, code, sizeof code);
    f.ram[0x8000] = 0xcf; /* the handler: iret */
    f.ram[0x80] = 0x00, f.ram[0x81] = 0x80, f.ram[0x82] = 0, f.ram[0x83] = 0; /* IVT[0x20] */
    f.regs[NM_EDX] = 0x80;
    warm(&f);
    g_assert_false(f.c->pe);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 14);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 16);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 14);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 16);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 26);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 15);
    fx_free(&f);
}

/* ---- the TLB (32 entries, 4-way, 8 sets: Embedded Intel486 Hardware
 * Reference Manual fig. 3-7) ---- */

#define PDIR 0x300000u
#define PTAB 0x301000u

/* Identity-maps 0..4 MB (one page table) with A and D already set (so the
 * walks write nothing), loads CR3 and turns paging on. */
static void paging_on(fx *f)
{
    uint32_t pde = PTAB | 0x63u;
    memcpy(f->ram + PDIR, &pde, 4);
    for (uint32_t k = 0; k < 1024; k++) {
        uint32_t pte = (k << 12) | 0x63u;
        memcpy(f->ram + PTAB + 4 * k, &pte, 4);
    }
    f->c->cr3 = PDIR;
    f->c->cr0 |= NM_CR0_PG;
    cpu_update_mode(f->c);
    nm_cpu_flush_translations(f->c);
}

static uint64_t report_of(fx *f, const char *key);

/* The page loop, `passes` (EDX) times over ECX pages from ESI, EBX apart:
 *    0 mov cr3, edi        (only when `reload`: 0f 22 df)
 *      mov ecx, N / mov esi, DATA + 0x1000
 *   10 mov eax, [esi] / add esi, stride / dec ecx / jnz 10
 *      dec edx / jnz 0 / hlt
 * Warm figures: MOV 1, ADD 1, DEC 1, Jcc taken 3 / not 1 = 6 an
 * iteration, 4 in the last; the first MOV [ESI] after MOV ESI pays an AGI
 * (+1).  So a pass over N pages with every translation in the TLB is
 * 6N - 1 clocks; each TLB miss adds the walk: two page-table reads that hit
 * the cache, 1 clock each (cpu/timing/i486.c, tlb_walk). */
static void page_loop(fx *f, uint32_t n, uint32_t stride, bool reload)
{
    uint8_t code[64];
    size_t k = 0;
    if (reload) {
        code[k++] = 0x0f, code[k++] = 0x22, code[k++] = 0xdf; /* mov cr3, edi */
    }
    code[k++] = 0xb9; /* mov ecx, n */
    memcpy(code + k, &n, 4), k += 4;
    uint32_t data = DATA + 0x1000u; /* page 0x201: TLB set 1 */
    code[k++] = 0xbe;               /* mov esi, data */
    memcpy(code + k, &data, 4), k += 4;
    size_t loop = k;
    code[k++] = 0x8b, code[k++] = 0x06; /* mov eax, [esi] */
    code[k++] = 0x81, code[k++] = 0xc6; /* add esi, stride */
    memcpy(code + k, &stride, 4), k += 4;
    code[k++] = 0x49;                                           /* dec ecx */
    code[k++] = 0x75, code[k] = (uint8_t)(loop - (k + 1)), k++; /* jnz loop */
    code[k++] = 0x4a;                                           /* dec edx */
    code[k++] = 0x75, code[k] = (uint8_t)(0 - (k + 1)), k++;    /* jnz 0 */
    code[k++] = 0xf4;
    fx_init(f, code, k);
    paging_on(f);
    f->regs[NM_EDX] = 3;
    f->regs[NM_EDI] = PDIR;
    set_regs(f);
}

/* Runs one pass's set-up instructions and returns the clocks of its loop. */
static uint64_t loop_pass(fx *f, uint32_t n, bool reload)
{
    clocks_of(f, reload ? 3 : 2);
    uint64_t c = clocks_of(f, 4 * n);
    clocks_of(f, 2); /* dec edx / jnz */
    return c;
}

/* 31 data pages + the code page = 32 translations, 4 in each set (data
 * pages 0x201.. fill sets 1-7 four times and set 0 three times, with the
 * code page 0x100): the second pass hits every one.  The stride 0x1010
 * puts each data line in its own cache set. */
static void test_tlb_fits(void)
{
    fx f = {0};
    page_loop(&f, 31, 0x1010, false);
    loop_pass(&f, 31, false); /* cold: caches and TLB fill */
    uint64_t miss0 = report_of(&f, "tlb_data_misses");
    g_assert_cmpuint(miss0, ==, 31);
    g_assert_cmpuint(loop_pass(&f, 31, false), ==, 6 * 31 - 1);
    g_assert_cmpuint(report_of(&f, "tlb_data_misses"), ==, 31);
    /* 2: the first instruction looked up before the model saw CR0.PG set
     * (the test sets it directly); after it the model flushes, as for a
     * MOV CR0, and the second instruction walks again. */
    g_assert_cmpuint(report_of(&f, "tlb_code_misses"), ==, 2);
    g_assert_cmpuint(report_of(&f, "tlb_data_hits"), ==, 31);
    /* The interpreter's own walks (its software TLB) are not charged. */
    g_assert_cmpuint(report_of(&f, "interpreter_walk_reads_not_charged"), >, 0);
    fx_free(&f);
}

/* Every instruction's code is one lookup in the TLB, also a load's whose
 * code was made ready by the instruction before it (fetched at its data
 * access: code_early): a warm loop of ADD, MOV from memory, DEC, JNZ with
 * paging -- code hits and misses together as many as the instructions. */
static void test_tlb_code_lookups(void)
{
    static const uint8_t code[] = {
        0x83, 0xc3, 0x01, /* L: add ebx,1 */
        0x8b, 0x06,       /* mov eax,[esi] */
        0x49,             /* dec ecx */
        0x75, 0xf8,       /* jnz L */
        0xf4,             /* hlt */
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    paging_on(&f);
    f.regs[NM_ECX] = 50;
    f.regs[NM_ESI] = DATA;
    const uint64_t insns0 = f.c->instructions;
    set_regs(&f);
    nm_cpu_set_eip(f.c, entry_of(&f));
    nm_cpu_run(f.c, 100000);
    g_assert_cmpint(f.m->stop_reason, ==, NM_STOP_HALT);
    g_assert_cmpuint(report_of(&f, "tlb_code_hits") + report_of(&f, "tlb_code_misses"), ==,
                     f.c->instructions - insns0);
    g_assert_cmpuint(report_of(&f, "tlb_data_hits"), ==, 49);
    fx_free(&f);
}

/* Five data pages in one TLB set (stride 8 pages + 16 bytes): four ways
 * cycled through five pages.  The tree pseudo-LRU (tlb.h) then gives, in
 * the second pass, A miss, B hit, C miss, D miss, E miss (the order
 * worked out in test_tlb.c, overflow-plru): 4 walks of 2 clocks. */
static void test_tlb_overflow(void)
{
    fx f = {0};
    page_loop(&f, 5, 0x8010, false);
    loop_pass(&f, 5, false);
    g_assert_cmpuint(report_of(&f, "tlb_data_misses"), ==, 5);
    g_assert_cmpuint(loop_pass(&f, 5, false), ==, 6 * 5 - 1 + 4 * 2);
    g_assert_cmpuint(report_of(&f, "tlb_data_misses"), ==, 5 + 4);
    g_assert_cmpuint(report_of(&f, "clocks_tlb_walks"), >=, 4 * 2);
    /* the breakdown, walks included, still adds up to the clocks */
    static const char *parts[] = {
        "clocks_table",           "clocks_io_instructions",
        "clocks_interrupts",      "clocks_prefixes",
        "clocks_index",           "clocks_agi",
        "clocks_misaligned",      "clocks_code_fills",
        "clocks_data_fills",      "clocks_write_buffer",
        "clocks_io_write_drain",  "clocks_tlb_walks",
        "clocks_byte_load_ahead", "clocks_partial_register",
    };
    uint64_t sum = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(parts); k++)
        sum += report_of(&f, parts[k]);
    g_assert_cmpuint(sum, ==, report_of(&f, "clocks"));
    fx_free(&f);
}

/* MOV CR3 flushes the TLB, even with the same value: after it the code
 * page walks again (at the MOV ECX after it: 1 + 2) and so does every
 * data page.  MOV CR3,r is 4 clocks (clock count summary). */
static void test_tlb_mov_cr3(void)
{
    fx f = {0};
    page_loop(&f, 4, 0x1010, true);
    loop_pass(&f, 4, true);
    uint64_t fl = report_of(&f, "tlb_flushes"), w = report_of(&f, "clocks_tlb_walks");
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4);         /* mov cr3, edi */
    g_assert_cmpuint(clocks_of(&f, 2), ==, 1 + 2 + 1); /* the code page's walk */
    g_assert_cmpuint(clocks_of(&f, 16), ==, 6 * 4 - 1 + 4 * 2);
    g_assert_cmpuint(report_of(&f, "tlb_flushes"), ==, fl + 1);
    g_assert_cmpuint(report_of(&f, "clocks_tlb_walks"), ==, w + 5 * 2);
    g_assert_cmpuint(report_of(&f, "tlb_data_misses"), ==, 8);
    /* the first instruction, the second (paging seen on, CR3 loaded: see
     * tlb-fits), and the MOV ECX after this MOV CR3 */
    g_assert_cmpuint(report_of(&f, "tlb_code_misses"), ==, 3);
    fx_free(&f);
}

/* INVLPG drops one page: of four warm data pages only the one named
 * misses in the next pass (a walk, 2 clocks).  INVLPG 12 (clock count
 * summary). */
static void test_tlb_invlpg(void)
{
    static const uint8_t code[] = {
        0x8b, 0x06,                         /* 0: mov eax, [esi] */
        0x8b, 0x86, 0x10, 0x10, 0x00, 0x00, /* mov eax, [esi+0x1010] */
        0x8b, 0x86, 0x20, 0x20, 0x00, 0x00, /* mov eax, [esi+0x2020] */
        0x8b, 0x86, 0x30, 0x30, 0x00, 0x00, /* mov eax, [esi+0x3030] */
        0x0f, 0x01, 0x3b,                   /* invlpg [ebx]  the second page */
        0x4a, 0x75, 0xe6,                   /* dec edx; jnz 0 */
        0xf4,
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    paging_on(&f);
    f.regs[NM_ESI] = DATA + 0x1000u;
    f.regs[NM_EBX] = DATA + 0x2010u;
    f.regs[NM_EDX] = 3;
    set_regs(&f);
    clocks_of(&f, 7); /* cold */
    clocks_of(&f, 7); /* warm, INVLPG again */
    g_assert_cmpuint(report_of(&f, "tlb_page_flushes"), ==, 2);
    uint64_t m0 = report_of(&f, "tlb_data_misses");
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 2); /* the page INVLPG dropped */
    g_assert_cmpuint(clocks_of(&f, 2), ==, 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 12);
    g_assert_cmpuint(report_of(&f, "tlb_data_misses"), ==, m0 + 1);
    g_assert_cmpuint(report_of(&f, "tlb_page_flushes"), ==, 3);
    fx_free(&f);
}

/* Bus-master DMA snoops the cache (cpu/timing/i486.c, i486_snoop): a
 * cached line written by DMA is dropped, so the next read misses and waits
 * for the fill's first transfer (DRAM: T0).  With the board's L2 the line
 * is dropped there too: the fill comes from DRAM (T0), not from the L2
 * (2 bus clocks = 4).  A line DMA did not write stays (1 clock). */
static void restart(fx *f)
{
    f->m->stop_requested = 0;
    f->m->clock.cycles += 1000;
    set_regs(f);
    nm_cpu_set_eip(f->c, entry_of(f));
    nm_timing_select(f->t, NULL);
    nm_timing_select(f->t, nm_cost_model_find("486"));
}

static void test_dma_snoop(void)
{
    static const uint8_t code[] = {0x8b, 0x03, 0xf4}; /* mov eax, [ebx]; hlt */
    for (int l2 = 0; l2 < 2; l2++) {
        fx f = {.l2_size = l2 ? 256u << 10 : 0};
        fx_init(&f, code, sizeof code);
        f.regs[NM_EBX] = DATA + 0x40;
        set_regs(&f);
        warm(&f);
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
        /* DMA into another line: nothing dropped */
        static const uint8_t frame[16] = {1, 2, 3};
        g_assert_true(nm_mem_dma_write(f.m->mem, DATA + 0x80, frame, sizeof frame));
        restart(&f);
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
        g_assert_cmpuint(report_of(&f, "snoop_invalidations"), ==, 0);
        /* DMA into the line read (another dword of it): dropped from L1
         * (and L2) */
        g_assert_true(nm_mem_dma_write(f.m->mem, DATA + 0x48, frame, 4));
        restart(&f);
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + T0);
        g_assert_cmpuint(report_of(&f, "snoop_invalidations"), ==, 1);
        g_assert_cmpuint(report_of(&f, "l2_snoop_invalidations"), ==, l2 ? 1 : 0);
        /* a DMA read changes nothing (write-through: memory is current) */
        uint8_t buf[16];
        g_assert_true(nm_mem_dma_read(f.m->mem, DATA + 0x40, buf, sizeof buf));
        restart(&f);
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
        fx_free(&f);
    }
}

static uint64_t report_u64(const char *json, const char *key)
{
    char pat[64];
    g_snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(json, pat);
    g_assert_nonnull(p);
    p = strchr(p + strlen(pat), ':');
    g_assert_nonnull(p);
    return g_ascii_strtoull(p + 1, NULL, 10);
}

static uint64_t report_of(fx *f, const char *key)
{
    nm_report *r = nm_report_new();
    nm_timing_report(f->t, r);
    char *js = nm_report_json(r);
    uint64_t v = report_u64(js, key);
    g_free(js);
    nm_report_free(r);
    return v;
}

#define STRETCH_STOPS 40
typedef struct {
    after_run end, stopped[STRETCH_STOPS];
    fired timed[STRETCH_STOPS];
} stretch_seen;

/* From the entry with the stretch test's registers, stopped by the HLT (a
 * timer may fire on the way). */
static void stretch_start(fx *f)
{
    f->m->stop_requested = 0;
    f->m->stop_reason = NM_STOP_NONE;
    g_free(f->m->stop_detail);
    f->m->stop_detail = NULL;
    set_regs(f);
    nm_cpu_set_eip(f->c, entry_of(f));
}

/* Runs the program from its start to its HLT twice (cold, then warm),
 * each run within `limit` instructions; what each leaves in seen[pass]. */
static void halt_twice(fx *f, uint64_t limit, after_run seen[2])
{
    for (int pass = 0; pass < 2; pass++) {
        stretch_start(f);
        nm_cpu_run(f->c, limit);
        g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
        seen[pass] = after_of(f->c);
    }
}

/* The stretch test's program under one fx, warm: run to its HLT, then
 * stopped after 1..STRETCH_STOPS instructions by the step limit, then run
 * with a timer due 1, 8, 15, ... clocks after its start (the first
 * iterations). */
static void stretch_runs(fx *f, stretch_seen *out)
{
    warm(f);
    stretch_start(f);
    nm_cpu_run(f->c, 1000000);
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
    out->end = after_of(f->c);
    for (unsigned k = 0; k < STRETCH_STOPS; k++) {
        stretch_start(f);
        g_assert_cmpuint(nm_cpu_run(f->c, k + 1), ==, k + 1);
        out->stopped[k] = after_of(f->c);
    }
    for (unsigned k = 0; k < STRETCH_STOPS; k++) {
        nm_timer t;
        out->timed[k] = (fired){.c = f->c};
        nm_timer_init(&t, on_fire, &out->timed[k], "test");
        stretch_start(f);
        nm_timer_at_cycle(&f->m->clock, &t, f->m->clock.cycles + 7 * k + 1);
        while (!f->m->stop_requested) {
            nm_cpu_run(f->c, 1000000);
            nm_clock_run_due(&f->m->clock);
        }
        g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
        g_assert_false(nm_timer_pending(&t));
        out->timed[k].c = NULL;
    }
}

/* The model's report as text. */
static char *report_text(fx *f)
{
    nm_report *r = nm_report_new();
    nm_timing_report(f->t, r);
    char *js = nm_report_json(r);
    nm_report_free(r);
    return js;
}

/* What the on/off stretch comparisons read of the model with stretches
 * on and off ([0] off, [1] on). */
typedef struct {
    uint64_t stretch_insns[2], loop_again[2];
    uint64_t agi[2], ahead[2], partial[2]; /* the address rules' clocks */
} stretch_counts;

/* `code` (n bytes) with EBX and ECX set, warm, under stretch_runs with
 * stretches off and on, paging as asked: the same clocks, registers,
 * stopping points and report either way; what each ran in stretches. */
static stretch_counts stretch_on_off(const uint8_t *code, size_t n, bool paging, uint32_t ebx,
                                     uint32_t ecx)
{
    static stretch_seen seen[2];
    fx both[2] = {{0}, {0}};
    char *report[2];
    stretch_counts out;
    for (int k = 0; k < 2; k++) {
        fx *f = &both[k];
        fx_init(f, code, n);
        if (paging) paging_on(f);
        f->regs[NM_EBX] = ebx;
        f->regs[NM_ECX] = ecx;
        nm_i486_set_stretch(f->c->hooks.opaque, k == 1);
        stretch_runs(f, &seen[k]);
        report[k] = report_text(f);
        out.stretch_insns[k] = nm_i486_stretch_insns(f->c->hooks.opaque);
        out.loop_again[k] = nm_i486_loop_again(f->c->hooks.opaque);
        out.agi[k] = report_u64(report[k], "clocks_agi");
        out.ahead[k] = report_u64(report[k], "clocks_byte_load_ahead");
        out.partial[k] = report_u64(report[k], "clocks_partial_register");
    }
    g_assert_cmpint(memcmp(&seen[1], &seen[0], sizeof seen[0]), ==, 0);
    g_assert_cmpstr(report[1], ==, report[0]);
    for (int k = 0; k < 2; k++) {
        g_free(report[k]);
        fx_free(&both[k]);
    }
    return out;
}

/* Stretches (i486.c, i486_ahead): instructions that can neither fault nor
 * touch memory, within the line made ready, run at once with the fast
 * path's outcome for each worked out together: a loop of them (a
 * dependency, LEA with an index and an AGI, shifts, IMUL, 66 and 0F
 * prefixes, SETcc) over several lines and broken by a store costs the
 * same clocks and counters with them as without them, leaves the same
 * registers, and stops at the same instruction and clock for a step limit
 * or a timer due inside one; with paging too (the code TLB's hits); most
 * of its instructions ran in stretches. */
static void test_stretch(void)
{
    uint8_t code[sizeof stretch_loop + 1];
    memcpy(code, stretch_loop, sizeof stretch_loop);
    code[sizeof stretch_loop] = 0xf4; /* hlt */
    for (int paging = 0; paging < 2; paging++) {
        const stretch_counts got = stretch_on_off(code, sizeof code, paging, 2463534242u, 200);
        g_assert_cmpuint(got.stretch_insns[0], ==, 0);
        /* 44 runs of the whole loop, 200 x 17 instructions: half of them at least */
        g_assert_cmpuint(got.stretch_insns[1], >, 44 * 200 * 8);
    }
}

/* Stretches across line changes, cold and warm: straight-line register
 * code (2-, 3- and 4-byte instructions, so that some run into the next
 * line), over 13 lines and over more than the cache, run from a cold cache
 * (lines still coming in, the next one not yet asked for) and again,
 * costs the same clocks and counters and leaves the same registers with
 * stretches as without. */
/* `pattern` repeated whole while it fits in `size` bytes with a HLT after
 * it; *n: the code's length, HLT included.  g_free() it. */
static uint8_t *repeated_code(const uint8_t *pattern, size_t pattern_len, size_t size, size_t *n)
{
    uint8_t *code = g_malloc(size);
    size_t len = 0;
    while (len + pattern_len < size - 1)
        for (size_t k = 0; k < pattern_len; k++)
            code[len++] = pattern[k];
    code[len++] = 0xf4; /* hlt */
    *n = len;
    return code;
}

static void stretch_lines(const uint8_t *pattern, size_t pattern_len, size_t size)
{
    size_t n;
    uint8_t *code = repeated_code(pattern, pattern_len, size, &n);
    after_run seen[2][2];
    char *report[2];
    for (int on = 0; on < 2; on++) {
        fx f = {0};
        fx_init(&f, code, n);
        f.regs[NM_EBX] = 0x12345;
        nm_i486_set_stretch(f.c->hooks.opaque, on);
        halt_twice(&f, 100000, seen[on]);
        report[on] = report_text(&f);
        if (on) g_assert_cmpuint(nm_i486_stretch_insns(f.c->hooks.opaque), >, 40);
        fx_free(&f);
    }
    g_assert_cmpint(memcmp(seen[1], seen[0], sizeof seen[0]), ==, 0);
    g_assert_cmpstr(report[1], ==, report[0]);
    g_free(report[0]);
    g_free(report[1]);
    g_free(code);
}

/* The model's kept lookups (nm_i486_set_shortcuts: the armed line's fill
 * record, a fill's record handed back, the burst offsets kept): code over
 * more than the cache (lines still coming in when reached), loads and
 * stores striding through more than it (data misses, a load across a 4 KB
 * page and TLB entry), short jumps (branch targets' fills), with paging,
 * without and with an L2 (its bursts and the DRAM's), cold and warm: the
 * same clocks, counters and registers with them as without. */
static void test_shortcuts(void)
{
    static const uint8_t pattern[] = {
        0x8b, 0x06,       /* mov eax,[esi] (across a page once: ESI below) */
        0x83, 0xc6, 0x14, /* add esi,20 */
        0x89, 0x07,       /* mov [edi],eax */
        0x83, 0xc7, 0x04, /* add edi,4 */
        0x03, 0x5e, 0x02, /* add ebx,[esi+2] */
        0xeb, 0x01,       /* jmp +1 */
        0x90,             /* nop (jumped over) */
        0x40,             /* inc eax */
    };
    size_t n;
    uint8_t *code = repeated_code(pattern, sizeof pattern, 12 * 1024, &n);
    for (int l2 = 0; l2 < 2; l2++) {
        after_run seen[2][2];
        char *report[2];
        for (int on = 0; on < 2; on++) {
            fx f = {0};
            f.l2_size = l2 ? 256u << 10 : 0;
            fx_init(&f, code, n);
            paging_on(&f);
            /* the 100th load at 0x200ffe: across the page */
            f.regs[NM_ESI] = DATA + 0xffe - 100 * 20;
            f.regs[NM_EDI] = DATA + 0x80000;
            nm_i486_set_shortcuts(f.c->hooks.opaque, on);
            halt_twice(&f, 1000000, seen[on]);
            report[on] = report_text(&f);
            g_assert_cmpuint(report_u64(report[on], "cache_data_misses"), >, 500);
            g_assert_cmpuint(report_u64(report[on], "reads_waiting_for_a_fill") +
                                 report_u64(report[on], "clocks_code_fills"),
                             >, 0);
            fx_free(&f);
        }
        g_assert_cmpint(memcmp(seen[1], seen[0], sizeof seen[0]), ==, 0);
        g_assert_cmpstr(report[1], ==, report[0]);
        g_free(report[0]);
        g_free(report[1]);
    }
    g_free(code);
}

static void test_stretch_lines(void)
{
    static const uint8_t fast[] = {
        0x01, 0xd8,             /* add eax,ebx */
        0xc1, 0xe3, 0x03,       /* shl ebx,3 */
        0x8d, 0x4c, 0x18, 0x01, /* lea ecx,[eax+ebx+1] (AGI: base) */
        0x31, 0xca,             /* xor edx,ecx */
        0x8d, 0x34, 0x16,       /* lea esi,[esi+edx] (AGI: index) */
    };
    /* slow enough a line (CWDE, CDQ: 3 clocks a byte) for the next lines
     * to come in while it runs; over 8 KB, so cold on both passes */
    static const uint8_t slow[] = {
        0x98,             /* cwde */
        0x99,             /* cdq */
        0x0f, 0xb6, 0xc3, /* movzx eax,bl */
        0x98,             /* cwde */
        0x66, 0x99,       /* cwd */
        0xc1, 0xe3, 0x03, /* shl ebx,3 */
    };
    stretch_lines(fast, sizeof fast, 220);
    stretch_lines(slow, sizeof slow, 9000);
}

/* A stretch from a branch target (i486_ahead's target_walk: the queue
 * flushed, the target's fetch and end made with the stretch): a loop whose
 * target is at offset 0, 5, 14 (its next byte in the next line) and 15
 * (across two lines) of its line, cold and warm, stopped by step limits and
 * timers, paging off and on -- the same clocks, registers and report with
 * stretches on and off; with the target in its line, most of the loop's
 * instructions ran in stretches. */
static void test_stretch_targets(void)
{
    static const unsigned offsets[] = {0, 5, 14, 15};
    for (unsigned o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        uint8_t code[0x60];
        const unsigned at = 0x20 + offsets[o]; /* L */
        size_t n = 0;
        code[n++] = 0xeb; /* jmp L */
        code[n++] = (uint8_t)(at - 2);
        while (n < at)
            code[n++] = 0x90;         /* nop */
        for (int k = 0; k < 6; k++) { /* L: add eax,ebx; lea edx,[eax+eax]; ... */
            code[n++] = 0x01;
            code[n++] = 0xd8;
            code[n++] = 0x8d;
            code[n++] = 0x14;
            code[n++] = 0x00;
        }
        code[n++] = 0x49; /* dec ecx */
        code[n++] = 0x75; /* jnz L */
        code[n] = (uint8_t)(at - (n + 1));
        n++;
        code[n++] = 0xf4; /* hlt */
        g_assert_cmpuint(n, <=, sizeof code);
        for (int paging = 0; paging < 2; paging++) {
            const stretch_counts got = stretch_on_off(code, n, paging, 7, 30);
            /* 44 runs of 30 x 14 instructions: the 13 from L in one stretch
             * (but the cold first ones) when L ends in its line */
            if (offsets[o] < 14) g_assert_cmpuint(got.stretch_insns[1], >, 44 * 30 * 12);
        }
    }
}

/* A stretch ending with a Jcc (i486_ahead_branch) only with a flat CS,
 * where the jump cannot fault: a loop whose JZ leaves it for an address
 * past a CS limit just after the code's page (#GP: the run goes on in the
 * handler at the IDT's gate), cold and warm -- the same clocks,
 * instructions, registers and report with stretches on and off (the
 * instructions after the JZ in stretches). */
static void test_stretch_jcc_limit(void)
{
    uint8_t code[0x48] = {0};
    static const uint8_t prog[] = {
        0x01, 0xd8,                         /* L: add eax,ebx */
        0x01, 0xd8,                         /* add eax,ebx */
        0x49,                               /* dec ecx */
        0x0f, 0x84, 0x00, 0x30, 0x00, 0x00, /* jz L+0x300b (past the limit) */
        0x01, 0xd8,                         /* add eax,ebx */
        0x01, 0xd8,                         /* add eax,ebx */
        0xeb, 0xef,                         /* jmp L */
    };
    memcpy(code, prog, sizeof prog);
    code[0x40] = 0x41; /* the #GP handler: inc ecx */
    code[0x41] = 0xf4; /* hlt */
    after_run seen[2];
    char *report[2];
    for (int on = 0; on < 2; on++) {
        fx f = {0};
        fx_init(&f, code, sizeof code);
        pm_tables(&f, CODE32 + 0x40);
        put_desc(f.ram + PM_IDT + 13 * 8, (0x08u << 16) | ((CODE32 + 0x40) & 0xffff),
                 ((CODE32 + 0x40) & 0xffff0000u) | 0x8e00); /* #GP: an interrupt gate */
        f.regs[NM_EBX] = 5;
        f.regs[NM_ECX] = 50;
        nm_i486_set_stretch(f.c->hooks.opaque, on);
        for (int pass = 0; pass < 2; pass++) { /* cold, then warm */
            stretch_start(&f);
            f.c->seg[NM_CS].limit = CODE32 + 0x1fff; /* the code's page and the next */
            nm_cpu_run(f.c, 100000);
            g_assert_cmpint(f.m->stop_reason, ==, NM_STOP_HALT);
            g_assert_cmpuint(nm_cpu_get_reg(f.c, NM_ECX), ==, 1); /* (the handler ran) */
        }
        seen[on] = after_of(f.c);
        report[on] = report_text(&f);
        if (on) g_assert_cmpuint(nm_i486_stretch_insns(f.c->hooks.opaque), >, 0);
        fx_free(&f);
    }
    g_assert_cmpint(memcmp(&seen[1], &seen[0], sizeof seen[0]), ==, 0);
    g_assert_cmpstr(report[1], ==, report[0]);
    g_free(report[0]);
    g_free(report[1]);
}

static uint64_t run_to_hlt(fx *f, uint32_t eip);

/* A loop's body run again at once while its Jcc jumps back
 * (NM_STRETCH_LOOP, i486.c loop_again): the same clocks, instructions,
 * registers and report with stretches on and off, stopped by step limits
 * and timers, paging off and on; (a) entered by a CALL, whose ESP the
 * body's first instruction reads (an AGI in the first run only); (b) warm
 * but for the line after the body's last, evicted (a prefetch of it
 * pending after the first run, so the next one waits for the bus) --
 * and runs made at once in both. */
static void test_stretch_loop_again(void)
{
    static const uint8_t call_loop[] = {
        0xe8, 0x00, 0x00, 0x00, 0x00, /* call L */
        0x8d, 0x14, 0x04,             /* L: lea edx,[esp+eax] */
        0x66, 0x01, 0xd8,             /* add ax,bx (a prefix) */
        0x49,                         /* dec ecx */
        0x75, 0xf7,                   /* jnz L (its next byte in L's line) */
        0xf4,                         /* hlt */
    };
    for (int paging = 0; paging < 2; paging++) {
        const stretch_counts got = stretch_on_off(call_loop, sizeof call_loop, paging, 3, 40);
        g_assert_cmpuint(got.loop_again[1], >, 44 * 20);
    }

    /* (b) L at 0x00: its body over lines 0x00 and 0x10, the JNZ's next
     * byte in 0x10 (a JMP to the HLT at 0x40 there too): 0x20 is only
     * asked for by the prefetcher.  At 0x80, the program that evicts it:
     * four loads into its set (8 KB, 4 ways: 2 KB apart), then HLT; at
     * 0x60 a JMP to L. */
    uint8_t code[0xa0];
    memset(code, 0x90, sizeof code);
    size_t n = 0;
    for (int k = 0; k < 13; k++) { /* L: add eax,ebx x 13 (0x00-0x19) */
        code[n++] = 0x01;
        code[n++] = 0xd8;
    }
    code[n++] = 0x49; /* dec ecx (0x1a) */
    code[n++] = 0x75; /* jnz L (0x1b) */
    code[n] = (uint8_t)(0 - (n + 1));
    n++;
    code[n++] = 0xeb; /* jmp 0x40 (0x1d) */
    code[n] = (uint8_t)(0x40 - (n + 1));
    code[0x40] = 0xf4;
    code[0x60] = 0xeb; /* jmp L: the first run from a branch target too */
    code[0x61] = (uint8_t)(0 - 0x62);
    static const uint8_t evict[] = {
        0x8b, 0x86, 0x00, 0x00, 0x00, 0x00, /* mov eax,[esi] */
        0x8b, 0x86, 0x00, 0x08, 0x00, 0x00, /* mov eax,[esi+0x800] */
        0x8b, 0x86, 0x00, 0x10, 0x00, 0x00, /* mov eax,[esi+0x1000] */
        0x8b, 0x86, 0x00, 0x18, 0x00, 0x00, /* mov eax,[esi+0x1800] */
        0xf4,                               /* hlt */
    };
    memcpy(code + 0x80, evict, sizeof evict);
    after_run seen[2];
    char *report[2];
    uint64_t again[2];
    for (int on = 0; on < 2; on++) {
        fx f = {0};
        fx_init(&f, code, sizeof code);
        f.regs[NM_EBX] = 3;
        f.regs[NM_ECX] = 30;
        f.regs[NM_ESI] = DATA + ((CODE32 + 0x20) & 0x7ff);
        nm_i486_set_stretch(f.c->hooks.opaque, on);
        run_to_hlt(&f, CODE32 + 0x60); /* cold: 0x20 and 0x70 cached too */
        run_to_hlt(&f, CODE32 + 0x60); /* warm */
        run_to_hlt(&f, CODE32 + 0x80); /* 0x20 evicted */
        f.m->clock.cycles += 1000;     /* every fill in */
        run_to_hlt(&f, CODE32 + 0x60);
        seen[on] = after_of(f.c);
        report[on] = report_text(&f);
        again[on] = nm_i486_loop_again(f.c->hooks.opaque);
        fx_free(&f);
    }
    g_assert_cmpint(memcmp(&seen[1], &seen[0], sizeof seen[0]), ==, 0);
    g_assert_cmpstr(report[1], ==, report[0]);
    g_assert_cmpuint(again[0], ==, 0);
    g_assert_cmpuint(again[1], >, 20);
    g_free(report[0]);
    g_free(report[1]);
}

/* What a stretch's walk found is kept for the queue, the register written
 * and the lines the cache holds (i486_run_memo): a loop whose stretches run
 * over its first four lines, and every other iteration loads four lines
 * into the sets of its third and fourth (evicting them: the line after the
 * next one is then missing at a stretch's line change) -- the same clocks,
 * counts and report with stretches on and off. */
static void test_stretch_evict(void)
{
    uint8_t code[0x80];
    size_t n = 0;
    for (int k = 0; k < 22; k++) { /* L: add eax,ebx (0x00-0x2b) */
        code[n++] = 0x01;
        code[n++] = 0xd8;
    }
    static const uint8_t tail[] = {
        0xf6, 0xc1, 0x01,                   /* test cl,1 */
        0x74, 0x29,                         /* jz skip */
        0x8b, 0x16,                         /* mov edx,[esi] (ESI: the set of L + 0x20) */
        0x8b, 0x96, 0x00, 0x08, 0x00, 0x00, /* mov edx,[esi+0x800] */
        0x8b, 0x96, 0x00, 0x10, 0x00, 0x00, /* mov edx,[esi+0x1000] */
        0x8b, 0x96, 0x00, 0x18, 0x00, 0x00, /* mov edx,[esi+0x1800] */
        0x8b, 0x56, 0x10,                   /* mov edx,[esi+0x10] (the set of L + 0x30) */
        0x8b, 0x96, 0x10, 0x08, 0x00, 0x00, /* mov edx,[esi+0x810] */
        0x8b, 0x96, 0x10, 0x10, 0x00, 0x00, /* mov edx,[esi+0x1010] */
        0x8b, 0x96, 0x10, 0x18, 0x00, 0x00, /* mov edx,[esi+0x1810] */
        0x6b, 0xd2, 0x03,                   /* skip: imul edx,edx,3 (the fills come in) */
        0x6b, 0xd2, 0x03,                   /* imul edx,edx,3 */
        0x6b, 0xd2, 0x03,                   /* imul edx,edx,3 */
        0x6b, 0xd2, 0x03,                   /* imul edx,edx,3 */
        0x6b, 0xd2, 0x03,                   /* imul edx,edx,3 */
        0x6b, 0xd2, 0x03,                   /* imul edx,edx,3 */
        0x49,                               /* dec ecx */
        0x75, 0x91,                         /* jnz L */
        0xf4,                               /* hlt */
    };
    memcpy(code + n, tail, sizeof tail);
    n += sizeof tail;
    after_run seen[2];
    char *report[2];
    uint64_t code_misses[2];
    for (int on = 0; on < 2; on++) {
        fx f = {0};
        fx_init(&f, code, n);
        f.regs[NM_EBX] = 3;
        f.regs[NM_ECX] = 40;
        f.regs[NM_ESI] = DATA + 0x20;
        nm_i486_set_stretch(f.c->hooks.opaque, on);
        stretch_start(&f);
        nm_cpu_run(f.c, 100000);
        g_assert_cmpint(f.m->stop_reason, ==, NM_STOP_HALT);
        seen[on] = after_of(f.c);
        report[on] = report_text(&f);
        code_misses[on] = report_of(&f, "cache_code_misses");
        if (on) g_assert_cmpuint(nm_i486_stretch_insns(f.c->hooks.opaque), >, 40 * 10);
        fx_free(&f);
    }
    g_assert_cmpuint(code_misses[1], >=, 20); /* (the line evicted, fetched again) */
    g_assert_cmpint(memcmp(&seen[1], &seen[0], sizeof seen[0]), ==, 0);
    g_assert_cmpstr(report[1], ==, report[0]);
    g_free(report[0]);
    g_free(report[1]);
}

/* From `eip` (0: the entry) with the test's registers to the HLT: the
 * clocks it took. */
static uint64_t run_to_hlt(fx *f, uint32_t eip)
{
    stretch_start(f);
    if (eip) nm_cpu_set_eip(f->c, eip);
    const uint64_t c0 = f->m->clock.cycles;
    nm_cpu_run(f->c, 1000000);
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
    return f->m->clock.cycles - c0;
}

/* Code written over by a guest store with nothing else changing the lines
 * the cache holds (the writer's code in the cache already, the line
 * written present: a write-through hit): what a stretch's walk found
 * (i486_run_memo) is not used for the new instruction. */
static void test_stretch_recode_warm(void)
{
    uint8_t code[sizeof stretch_recode_loop + 1];
    memcpy(code, stretch_recode_loop, sizeof stretch_recode_loop);
    code[sizeof stretch_recode_loop] = 0xf4; /* hlt */
    /* at +0x300: mov [esi],di / hlt (ESI: CODE32 + 7; DI: 89 da, the same
     * bytes, then d1 e2, SHL EDX,1) */
    static const uint8_t patch[] = {0x66, 0x89, 0x3e, 0xf4};
    uint64_t clocks[2][2];
    for (int on = 0; on < 2; on++) {
        fx f = {0};
        fx_init(&f, code, sizeof code);
        memcpy(f.ram + CODE32 + 0x300, patch, sizeof patch);
        f.regs[NM_EBX] = 2463534242u;
        f.regs[NM_ECX] = 100;
        f.regs[NM_ESI] = CODE32 + 7;
        nm_i486_set_stretch(f.c->hooks.opaque, on);
        warm(&f);
        for (int k = 0; k < 2; k++) {
            f.regs[NM_EDI] = k ? 0xe2d1u : 0xda89u;
            run_to_hlt(&f, CODE32 + 0x300);
            clocks[on][k] = run_to_hlt(&f, 0);
        }
        if (on) g_assert_cmpuint(nm_i486_stretch_insns(f.c->hooks.opaque), >, 100 * 4);
        fx_free(&f);
    }
    g_assert_cmpuint(clocks[1][0], ==, clocks[0][0]);
    g_assert_cmpuint(clocks[1][1], ==, clocks[0][1]);
    g_assert_cmpuint(clocks[1][1], >=, clocks[1][0] + 100 * 2);
}

/* A stretch is worked out once from the decoded instructions it covers
 * (i486_stretch): code written over one in its middle (MOV EDX,EBX, 1
 * clock, by SHL EDX,1, 3), by a store of the guest's or by DMA, is costed
 * as itself afterwards, as without stretches. */
static void test_stretch_recode(void)
{
    uint8_t code[sizeof stretch_recode_loop + 1];
    memcpy(code, stretch_recode_loop, sizeof stretch_recode_loop);
    code[sizeof stretch_recode_loop] = 0xf4; /* hlt */
    static const uint8_t shl1[] = {0xd1, 0xe2};
    /* mov word [CODE32 + 7], e2 d1 / hlt */
    static const uint8_t patch[] = {0x66, 0xc7, 0x05, 0x07, 0x00, 0x10, 0x00, 0xd1, 0xe2, 0xf4};
    _Static_assert(CODE32 == 0x100000u, "patch");
    for (int dma = 0; dma < 2; dma++) {
        uint64_t clocks[2][2];
        for (int on = 0; on < 2; on++) {
            fx f = {0};
            fx_init(&f, code, sizeof code);
            f.regs[NM_EBX] = 2463534242u;
            f.regs[NM_ECX] = 100;
            nm_i486_set_stretch(f.c->hooks.opaque, on);
            warm(&f);
            clocks[on][0] = run_to_hlt(&f, 0);
            if (dma) {
                g_assert_true(nm_mem_dma_write(f.m->mem, CODE32 + 7, shl1, sizeof shl1));
            } else {
                memcpy(f.ram + CODE32 + 0x300, patch, sizeof patch);
                run_to_hlt(&f, CODE32 + 0x300);
            }
            clocks[on][1] = run_to_hlt(&f, 0);
            if (on) g_assert_cmpuint(nm_i486_stretch_insns(f.c->hooks.opaque), >, 100 * 4);
            fx_free(&f);
        }
        g_assert_cmpuint(clocks[1][0], ==, clocks[0][0]);
        g_assert_cmpuint(clocks[1][1], ==, clocks[0][1]);
        g_assert_cmpuint(clocks[1][1], >=, clocks[1][0] + 100 * 2);
    }
}

/* ---- the address pipeline and the register file (cpu/timing/i486.c,
 * pipe_rules: Abrash, Graphics Programming Black Book ch. 12 rules #2,
 * #2A, #3, #4; Intel's documented 1-clock AGI in protected mode) ---- */

/* Runs a warm program instruction by instruction: each one's clocks
 * against want[] (n of them). */
static void expect_each(fx *f, const unsigned *want, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const uint64_t got = clocks_of(f, 1);
        if (got != want[k]) g_test_message("instruction %zu", k);
        g_assert_cmpuint(got, ==, want[k]);
    }
}

/* Rule #2 in real mode: a pointer loaded by the instruction before costs
 * 2 ("not one but two cycles are lost"), loaded two cycles before 1, three
 * cycles before nothing (Abrash's MOV BX,OFFSET MemVar / MOV AX,[BX] with
 * INC DX, DEC CX moved between them); cycles, not instructions (one
 * 2-clock SHL between: nothing, as in Terje Mathisen's WC loop, ch. 13);
 * the preincrement loop's ADD SI,2 / ADD AX,[SI] (2 + 2). */
static void test_agi_real(void)
{
    static const uint8_t code[] = {
        0xbb, 0x00, 0x80, /* mov bx, 0x8000 */
        0x8b, 0x07,       /* mov ax, [bx]     1 + 2 */
        0xbb, 0x00, 0x80, /* mov bx, 0x8000 */
        0x42,             /* inc dx */
        0x8b, 0x07,       /* mov ax, [bx]     1 + 1 */
        0xbb, 0x00, 0x80, /* mov bx, 0x8000 */
        0x42,             /* inc dx */
        0x49,             /* dec cx */
        0x8b, 0x07,       /* mov ax, [bx]     1 */
        0xbb, 0x00, 0x80, /* mov bx, 0x8000 */
        0xc1, 0xe2, 0x02, /* shl dx, 2        2 */
        0x8b, 0x07,       /* mov ax, [bx]     1 */
        0x83, 0xc6, 0x02, /* add si, 2 */
        0x03, 0x04,       /* add ax, [si]     2 + 2 */
        0xf4,
    };
    static const unsigned want[] = {1, 3, 1, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 4};
    fx f = {.real = true};
    fx_init(&f, code, sizeof code);
    f.regs[NM_ESI] = 0x8000;
    warm(&f);
    g_assert_false(f.c->pe);
    expect_each(&f, want, G_N_ELEMENTS(want));
    /* three runs (two to warm): 2 + 1 + 2 each */
    g_assert_cmpuint(report_of(&f, "clocks_agi"), ==, 3 * (2 + 1 + 2));
    fx_free(&f);
}

/* Rule #2 in 32-bit protected mode: the documented 1 clock for the
 * instruction before ("the 1 cycle that Intel [documents]"), nothing two
 * cycles before (the real-mode second cycle is not charged). */
static void test_agi_protected(void)
{
    static const uint8_t code[] = {
        0xbb, 0x00, 0x00, 0x20, 0x00, /* mov ebx, DATA */
        0x8b, 0x03,                   /* mov eax, [ebx]   1 + 1 */
        0xbb, 0x00, 0x00, 0x20, 0x00, /* mov ebx, DATA */
        0x42,                         /* inc edx */
        0x8b, 0x03,                   /* mov eax, [ebx]   1 */
        0x83, 0xc6, 0x04,             /* add esi, 4 */
        0x03, 0x06,                   /* add eax, [esi]   2 + 1 */
        0xf4,
    };
    static const unsigned want[] = {1, 2, 1, 1, 1, 1, 3};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_ESI] = DATA;
    warm(&f);
    expect_each(&f, want, G_N_ELEMENTS(want));
    fx_free(&f);
}

/* Rule #2A: ESP as the implied destination of a stack instruction then
 * its implied pointer costs nothing (POP AX / RET: "six cycles per
 * POP/RET pair, matching the official times"); as an explicit destination
 * (ADD SP,10h) then RET or POP, 2 in real mode ("loses two cycles"), and
 * two cycles before 1 ("used by one of the two following instructions");
 * POP AX then PUSH AX nothing.  The stack at 0:7000 holds the return
 * offsets. */
static void test_agi_stack_real(void)
{
    static const uint8_t code[] = {
        0x58,             /* 0: pop ax          1 */
        0xc3,             /* 1: ret (to 2)      5 */
        0x58,             /* 2: pop ax          1 */
        0xc3,             /* 3: ret (to 4)      5 */
        0x83, 0xc4, 0x10, /* 4: add sp, 16      1 */
        0xc3,             /* 7: ret (to 8)      5 + 2 */
        0x83, 0xc4, 0x10, /* 8: add sp, 16      1 */
        0x58,             /* b: pop ax          1 + 2 */
        0x83, 0xc4, 0x10, /* c: add sp, 16      1 */
        0x90,             /* f: nop             1 */
        0x58,             /* 10: pop ax         1 + 1 */
        0x50,             /* 11: push ax        1 */
        0xf4,
    };
    static const unsigned want[] = {1, 5, 1, 5, 1, 7, 1, 3, 1, 1, 2, 1};
    fx f = {.real = true};
    fx_init(&f, code, sizeof code);
    /* return offsets: [7002] = 7c02, [7006] = 7c04, [7018] = 7c08 */
    static const uint16_t ret[][2] = {{0x7002, 0x7c02}, {0x7006, 0x7c04}, {0x7018, 0x7c08}};
    for (size_t k = 0; k < G_N_ELEMENTS(ret); k++)
        memcpy(f.ram + ret[k][0], &ret[k][1], 2);
    warm(&f);
    expect_each(&f, want, G_N_ELEMENTS(want));
    fx_free(&f);
}

/* Rule #2A in protected mode: ADD ESP then POP 1 (Intel's figure), two
 * cycles before nothing; MOV ESP,EBP then RET 1; PUSH then [ESP] as a
 * pointer nothing (an implied destination). */
static void test_agi_stack_protected(void)
{
    static const uint8_t code[] = {
        0x83, 0xc4, 0x10, /* 0: add esp, 16      1 */
        0x58,             /* 3: pop eax          1 + 1 */
        0x83, 0xc4, 0x10, /* 4: add esp, 16      1 */
        0x90,             /* 7: nop              1 */
        0x58,             /* 8: pop eax          1 */
        0x50,             /* 9: push eax         1 */
        0x8b, 0x04, 0x24, /* a: mov eax, [esp]   1 */
        0x89, 0xec,       /* d: mov esp, ebp     1 */
        0xc3,             /* f: ret (to 10)      5 + 1 */
        0xf4,             /* 10 */
    };
    static const unsigned want[] = {1, 2, 1, 1, 1, 1, 1, 1, 6};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBP] = 0x91000;
    const uint32_t to = CODE32 + 0x10;
    memcpy(f.ram + 0x91000, &to, 4);
    warm(&f);
    expect_each(&f, want, G_N_ELEMENTS(want));
    fx_free(&f);
}

/* Rule #4 in real mode, Abrash's four sequences: a byte register loaded
 * two cycles before any register addresses memory 1, one and two cycles
 * before 2, one cycle before only nothing, and with a pointer loaded two
 * cycles before (rule #2's 1) a byte load between: 2. */
static void test_byte_ahead_real(void)
{
    static const uint8_t code[] = {
        0x88, 0xd8,       /* mov al, bl */
        0x89, 0xd1,       /* mov cx, dx */
        0x8b, 0x35,       /* mov si, [di]     1 + 1 */
        0x88, 0xc3,       /* mov bl, al */
        0xb1, 0x03,       /* mov cl, 3 */
        0x8b, 0x1c,       /* mov bx, [si]     1 + 2 */
        0xb9, 0x03, 0x00, /* mov cx, 3 */
        0x88, 0xc2,       /* mov dl, al */
        0x8b, 0x37,       /* mov si, [bx]     1 */
        0xbb, 0x00, 0x80, /* mov bx, 0x8000 */
        0x88, 0xc1,       /* mov cl, al */
        0x8b, 0x07,       /* mov ax, [bx]     1 + 2 (1 of them rule #2's) */
        0xf4,
    };
    static const unsigned want[] = {1, 1, 2, 1, 1, 3, 1, 1, 1, 1, 1, 3};
    fx f = {.real = true};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EDI] = 0x8000;
    f.ram[0x8000] = 0x00, f.ram[0x8001] = 0x80; /* [di] = 0x8000: SI and BX point there */
    warm(&f);
    const uint64_t ahead0 = report_of(&f, "clocks_byte_load_ahead");
    const uint64_t agi0 = report_of(&f, "clocks_agi");
    expect_each(&f, want, G_N_ELEMENTS(want));
    g_assert_cmpuint(report_of(&f, "clocks_byte_load_ahead") - ahead0, ==, 1 + 2 + 1);
    g_assert_cmpuint(report_of(&f, "clocks_agi") - agi0, ==, 1);
    fx_free(&f);
}

/* Listings 12.1 and 12.2 (real mode), 16 repetitions each: MOV DL,CL /
 * NOP / MOV AX,[BX] "4 cycles per repetition", NOP / MOV DL,CL / MOV
 * AX,[BX] "3 cycles". */
static void test_byte_ahead_listings(void)
{
    static const uint8_t rep121[] = {0x88, 0xca, 0x90, 0x8b, 0x07};
    static const uint8_t rep122[] = {0x90, 0x88, 0xca, 0x8b, 0x07};
    const uint8_t *reps[2] = {rep121, rep122};
    for (int l = 0; l < 2; l++) {
        uint8_t code[16 * 5 + 1];
        for (int k = 0; k < 16; k++)
            memcpy(code + 5 * k, reps[l], 5);
        code[16 * 5] = 0xf4;
        fx f = {.real = true};
        fx_init(&f, code, sizeof code);
        f.regs[NM_EBX] = 0x8000;
        warm(&f);
        clocks_of(&f, 3); /* the first repetition (nothing before it) */
        g_assert_cmpuint(clocks_of(&f, 15 * 3), ==, 15u * (l == 0 ? 4 : 3));
        fx_free(&f);
    }
}

/* Rule #4 in protected mode, Ervin Toth's measurements (1998): ADD ECX,EBP
 * / ADC BL,DL / MOV AL,[EBX] "the MOV takes three cycles" (the AGI and the
 * byte load together); with SUB ESI,EBP between the ADC and the MOV "the
 * MOV takes two"; and with an unrelated register (MOV AL,BL / MOV ECX,EDX
 * / MOV ESI,[EDI]) the same 1 as in real mode. */
static void test_byte_ahead_protected(void)
{
    static const uint8_t code[] = {
        0x01, 0xe9, /* add ecx, ebp */
        0x10, 0xd3, /* adc bl, dl */
        0x8a, 0x03, /* mov al, [ebx]    1 + 1 + 1 */
        0x01, 0xe9, /* add ecx, ebp */
        0x10, 0xd3, /* adc bl, dl */
        0x29, 0xee, /* sub esi, ebp */
        0x8a, 0x03, /* mov al, [ebx]    1 + 1 */
        0x88, 0xd8, /* mov al, bl */
        0x89, 0xd1, /* mov ecx, edx */
        0x8b, 0x37, /* mov esi, [edi]   1 + 1 */
        0xf4,
    };
    static const unsigned want[] = {1, 1, 3, 1, 1, 1, 2, 1, 1, 2};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    f.regs[NM_EDI] = DATA;
    warm(&f);
    const uint64_t ahead0 = report_of(&f, "clocks_byte_load_ahead");
    const uint64_t agi0 = report_of(&f, "clocks_agi");
    expect_each(&f, want, G_N_ELEMENTS(want));
    g_assert_cmpuint(report_of(&f, "clocks_byte_load_ahead") - ahead0, ==, 3);
    g_assert_cmpuint(report_of(&f, "clocks_agi") - agi0, ==, 1);
    fx_free(&f);
}

/* Rule #3, real mode: a byte register loaded, its whole register read
 * by the next instruction as data 1 (MOV AL,[MemVar2] / ADD CX,AX), not
 * with an instruction between, not for a byte source (ADD CL,AL), PUSH AX
 * after MOV AH,BL 1; XLAT after a byte load: its 4 (exempt). */
static void test_partial_register_real(void)
{
    static const uint8_t code[] = {
        0xa0, 0x00, 0x80,       /* mov al, [0x8000] */
        0x01, 0xc1,             /* add cx, ax        1 + 1 */
        0xa0, 0x00, 0x80,       /* mov al, [0x8000] */
        0x8b, 0x0e, 0x02, 0x80, /* mov cx, [0x8002] */
        0x01, 0xc1,             /* add cx, ax        1 */
        0x88, 0xd8,             /* mov al, bl */
        0x00, 0xc1,             /* add cl, al        1 */
        0x90,                   /* nop */
        0x88, 0xdc,             /* mov ah, bl */
        0x50,                   /* push ax           1 + 1 */
        0x8a, 0x04,             /* mov al, [si] */
        0xd7,                   /* xlat              4 */
        0xf4,
    };
    static const unsigned want[] = {1, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 4};
    fx f = {.real = true};
    fx_init(&f, code, sizeof code);
    f.regs[NM_ESI] = 0x8000;
    f.regs[NM_EBX] = 0x8100;
    warm(&f);
    const uint64_t p0 = report_of(&f, "clocks_partial_register");
    expect_each(&f, want, G_N_ELEMENTS(want));
    g_assert_cmpuint(report_of(&f, "clocks_partial_register") - p0, ==, 2);
    fx_free(&f);
}

/* Rule #3 in protected mode: MOV AL,BL / ADD ECX,EAX 1 + 1; ADD CX,AX (a
 * 16-bit read, prefixed) too; a byte source nothing. */
static void test_partial_register_protected(void)
{
    static const uint8_t code[] = {
        0x88, 0xd8,       /* mov al, bl */
        0x01, 0xc1,       /* add ecx, eax     1 + 1 */
        0x88, 0xd8,       /* mov al, bl */
        0x66, 0x01, 0xc1, /* add cx, ax       1 + 1 + 1 */
        0x88, 0xd8,       /* mov al, bl */
        0x00, 0xc1,       /* add cl, al       1 */
        0xf4,
    };
    static const unsigned want[] = {1, 2, 1, 3, 1, 1};
    fx f = {0};
    fx_init(&f, code, sizeof code);
    warm(&f);
    expect_each(&f, want, G_N_ELEMENTS(want));
    fx_free(&f);
}

/* Rule #2 in virtual-8086 mode: real-mode addressing, so the real-mode
 * figures (the 2 and the 1 two cycles before).  The program loops (JMP
 * back, 3), warmed and measured by instruction counts: HLT would fault
 * at CPL 3. */
static void test_agi_v86(void)
{
    static const uint8_t code[] = {
        0xbb, 0x00, 0x80, /* L: mov bx, 0x8000 */
        0x8b, 0x07,       /* mov ax, [bx]       1 + 2 */
        0xbb, 0x00, 0x80, /* mov bx, 0x8000 */
        0x42,             /* inc dx */
        0x8b, 0x07,       /* mov ax, [bx]       1 + 1 */
        0xeb, 0xf3,       /* jmp L              3 */
    };
    static const unsigned want[] = {1, 3, 1, 1, 2, 3, 1, 3};
    fx f = {.real = true};
    fx_init(&f, code, sizeof code);
    f.c->cr0 |= NM_CR0_PE;
    f.c->eflags |= NM_FLAG_VM;
    cpu_update_mode(f.c);
    g_assert_true(f.c->vm86);
    set_regs(&f);
    nm_cpu_set_eip(f.c, CODE16);
    g_assert_cmpuint(nm_cpu_run(f.c, 60), ==, 60); /* 10 rounds: warm */
    nm_timing_select(f.t, NULL);
    nm_timing_select(f.t, nm_cost_model_find("486"));
    nm_cpu_set_eip(f.c, CODE16);
    expect_each(&f, want, G_N_ELEMENTS(want));
    fx_free(&f);
}

/* An exception's delivery lies between the instruction before it and the
 * handler's first: MOV EBX,DATA / UD2, and the #UD handler's MOV EAX,[EBX]
 * pays the delivery (44) and its row, no AGI. */
static void test_agi_after_fault(void)
{
    uint8_t code[0x48] = {0xbb, 0x00, 0x00, 0x20, 0x00, 0x0f, 0x0b, 0xf4};
    static const uint8_t handler[] = {
        0x8b, 0x03,                   /* mov eax, [ebx] */
        0x83, 0x04, 0x24, 0x02, 0xcf, /* add dword [esp], 2; iretd */
    };
    memcpy(code + 0x40, handler, sizeof handler);
    fx f = {0};
    fx_init(&f, code, sizeof code);
    pm_tables(&f, CODE32 + 0x40);
    put_desc(f.ram + PM_IDT + 6 * 8u, (0x08u << 16) | ((CODE32 + 0x40) & 0xffff),
             ((CODE32 + 0x40) & 0xffff0000u) | 0x8e00);
    f.regs[NM_EBX] = DATA;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);      /* mov ebx, DATA */
    g_assert_cmpuint(nm_cpu_run(f.c, 1), ==, 0);    /* the fault */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 44 + 1); /* mov eax, [ebx] */
    fx_free(&f);
}

/* What the rules count as written: MUL r/m writes EAX (and EDX), not the
 * register it names, and loads no byte register (MUL BL); POP r/m32 in
 * its register form (8F /0) writes its r/m register. */
static void test_agi_writers(void)
{
    static const uint8_t code[] = {
        0xf7, 0xe1, /* mul ecx */
        0x8b, 0x10, /* mov edx, [eax]   1 + 1 */
        0xf6, 0xe3, /* mul bl */
        0x90,       /* nop */
        0x8b, 0x16, /* mov edx, [esi]   1 */
        0x8f, 0xc3, /* pop ebx (8F /0) */
        0x8b, 0x03, /* mov eax, [ebx]   1 + 1 */
        0xf4,
    };
    fx f = {0};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EAX] = DATA;
    f.regs[NM_ECX] = 1;
    f.regs[NM_ESI] = DATA;
    memcpy(f.ram + 0x90000, &(uint32_t){DATA}, 4); /* what POP EBX loads */
    warm(&f);
    clocks_of(&f, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2);
    clocks_of(&f, 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2);
    fx_free(&f);
}

/* The rules inside stretches (i486_ahead): a loop of register
 * instructions and LEAs where each rule fires (a byte load two cycles
 * before an LEA, a byte load then its whole register, LEA after its base's
 * writer, a byte load then LEA through its register), broken by a byte
 * load from memory whose rule #4 falls on the stretch after it, and by a
 * load that is misaligned every other iteration (1 clock, or 4) with a
 * byte load before it, so that the stretch after it is reached with the
 * rule #4 of that byte load one iteration and not the next (its records
 * are kept by the state they are reached with); a byte load before the
 * JNZ, whose jump leaves nothing for the LEA at its target.  The same
 * clocks, counters and registers with stretches as without, paging off
 * and on; most of it ran in stretches, and every rule fired. */
static void test_stretch_rules(void)
{
    static const uint8_t code[] = {
        0xbe, 0x00, 0x00, 0x20, 0x00, /* mov esi, DATA */
        0xbf, 0x00, 0x00, 0x20, 0x00, /* mov edi, DATA */
        0x8d, 0x2c, 0x1f,             /* L: lea ebp, [edi+ebx]  after the jump: the index only */
        0x88, 0xd8,                   /* mov al, bl */
        0x89, 0xd5,                   /* mov ebp, edx */
        0x8d, 0x2c, 0x1f,             /* lea ebp, [edi+ebx]  rule #4 */
        0x01, 0xc5,                   /* add ebp, eax */
        0x88, 0xc4,                   /* mov ah, al */
        0x01, 0xc2,                   /* add edx, eax        rule #3 */
        0x8d, 0x6a, 0x04,             /* lea ebp, [edx+4]    AGI */
        0xc1, 0xc3, 0x05,             /* rol ebx, 5 */
        0xa0, 0x00, 0x00, 0x20, 0x00, /* mov al, [DATA] */
        0x89, 0xd5,                   /* mov ebp, edx */
        0x8d, 0x2c, 0x3b,             /* lea ebp, [ebx+edi]  rule #4 (the load's) */
        0x88, 0xdc,                   /* mov ah, bl */
        0x88, 0xf2,                   /* mov dl, dh */
        0x8d, 0x04, 0x16,             /* lea eax, [esi+edx]  AGI + rule #4, 2 */
        0x66, 0x01, 0xd8,             /* add ax, bx */
        0x31, 0xc3,                   /* xor ebx, eax */
        0x83, 0xf6, 0x03,             /* xor esi, 3          DATA, DATA+3, ... */
        0x88, 0xd8,                   /* mov al, bl */
        0x8b, 0x16,                   /* mov edx, [esi]      1, or 1 + 3 misaligned */
        0x8d, 0x6f, 0x08,             /* lea ebp, [edi+8]    rule #4 after the aligned load */
        0x49,                         /* dec ecx */
        0x88, 0xd7,                   /* mov bh, dl */
        0x75, 0xc5,                   /* jnz L */
        0xf4,
    };
    _Static_assert(sizeof code - 1 == 69, "jnz L: 10 - 69");
    for (int paging = 0; paging < 2; paging++) {
        const stretch_counts got = stretch_on_off(code, sizeof code, paging, 2463534242u, 200);
        /* over 40 runs of the whole loop (stretch_runs), 200 x 24
         * instructions: a third of them at least in stretches; an
         * iteration 2 AGI clocks, 3.5 of rule #4, 1 of rule #3 */
        g_assert_cmpuint(got.stretch_insns[1], >, 40 * 200 * 8);
        for (int k = 0; k < 2; k++) {
            g_assert_cmpuint(got.agi[k], >, 40 * 200 * 2);
            g_assert_cmpuint(got.ahead[k], >, 40 * 200 * 3);
            g_assert_cmpuint(got.partial[k], >, 40 * 200 * 1);
        }
    }
}

/* The report's breakdown adds up to the model's clocks. */
static void test_breakdown_sums(void)
{
    static const uint8_t code[] = {
        0x66, 0x01, 0xd8,       /* add ax, bx          prefix */
        0x8b, 0x04, 0x33,       /* mov eax, [ebx+esi]  index, cold line */
        0x89, 0x43, 0x02,       /* mov [ebx+2], eax    misaligned write */
        0x01, 0xcb, 0x8b, 0x03, /* add ebx, ecx; mov eax, [ebx]  AGI */
        0xee,                   /* out dx, al */
        0xf4,
    };
    fx f = {.l2_size = 256u << 10};
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    f.regs[NM_EDX] = 0x80;
    set_regs(&f);
    nm_cpu_run(f.c, 100);
    nm_report *r = nm_report_new();
    nm_timing_report(f.t, r);
    char *js = nm_report_json(r);
    static const char *parts[] = {
        "clocks_table",
        "clocks_io_instructions",
        "clocks_interrupts",
        "clocks_prefixes",
        "clocks_index",
        "clocks_agi",
        "clocks_misaligned",
        "clocks_code_fills",
        "clocks_data_fills",
        "clocks_write_buffer",
        "clocks_io_write_drain",
        "clocks_byte_load_ahead",
        "clocks_partial_register",
    };
    uint64_t sum = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(parts); k++)
        sum += report_u64(js, parts[k]);
    g_assert_cmpuint(sum, ==, report_u64(js, "clocks"));
    g_assert_cmpuint(report_u64(js, "clocks_agi"), ==, 1);
    g_assert_cmpuint(report_u64(js, "clocks_index"), ==, 1);
    g_assert_cmpuint(report_u64(js, "clocks_prefixes"), ==, 1);
    g_assert_cmpuint(report_u64(js, "clocks_misaligned"), ==, 3);
    g_assert_cmpuint(report_u64(js, "clocks_io_instructions"), ==, 10);
    g_free(js);
    nm_report_free(r);
    fx_free(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timing/486/alu-chains", test_alu_chains);
    g_test_add_func("/timing/486/self-modifying-recost", test_self_modifying_recost);
    g_test_add_func("/timing/486/agi", test_agi);
    g_test_add_func("/timing/486/prefix", test_prefix);
    g_test_add_func("/timing/486/branches-misaligned", test_branches_misaligned);
    g_test_add_func("/timing/486/cache-loop", test_cache_loop);
    g_test_add_func("/timing/486/write-buffer", test_write_buffer);
    g_test_add_func("/timing/486/split-writes", test_split_writes);
    g_test_add_func("/timing/486/rep-movsd", test_rep_movsd);
    g_test_add_func("/timing/486/io-protected", test_io_protected);
    g_test_add_func("/timing/486/idiv", test_idiv);
    g_test_add_func("/timing/486/l2-fill", test_l2_fill);
    g_test_add_func("/timing/486/l2-write-buffer", test_l2_write_buffer);
    g_test_add_func("/timing/486/read-ahead-of-writes", test_read_ahead_of_writes);
    g_test_add_func("/timing/486/data-miss-positions", test_data_miss_positions);
    g_test_add_func("/timing/486/code-prefetch-ahead", test_code_prefetch_ahead);
    g_test_add_func("/timing/486/branch-to-cold-line", test_branch_to_cold_line);
    g_test_add_func("/timing/486/out-drains-writes", test_out_drains_writes);
    g_test_add_func("/timing/486/breakdown-sums", test_breakdown_sums);
    g_test_add_func("/timing/486/agi-real", test_agi_real);
    g_test_add_func("/timing/486/agi-protected", test_agi_protected);
    g_test_add_func("/timing/486/agi-v86", test_agi_v86);
    g_test_add_func("/timing/486/agi-writers", test_agi_writers);
    g_test_add_func("/timing/486/agi-after-fault", test_agi_after_fault);
    g_test_add_func("/timing/486/agi-stack-real", test_agi_stack_real);
    g_test_add_func("/timing/486/agi-stack-protected", test_agi_stack_protected);
    g_test_add_func("/timing/486/byte-ahead-real", test_byte_ahead_real);
    g_test_add_func("/timing/486/byte-ahead-listings", test_byte_ahead_listings);
    g_test_add_func("/timing/486/byte-ahead-protected", test_byte_ahead_protected);
    g_test_add_func("/timing/486/partial-register-real", test_partial_register_real);
    g_test_add_func("/timing/486/partial-register-protected", test_partial_register_protected);
    g_test_add_func("/timing/486/stretch-rules", test_stretch_rules);
    g_test_add_func("/timing/486/stretch", test_stretch);
    g_test_add_func("/timing/486/stretch-recode", test_stretch_recode);
    g_test_add_func("/timing/486/stretch-lines", test_stretch_lines);
    g_test_add_func("/timing/486/shortcuts", test_shortcuts);
    g_test_add_func("/timing/486/stretch-evict", test_stretch_evict);
    g_test_add_func("/timing/486/stretch-targets", test_stretch_targets);
    g_test_add_func("/timing/486/stretch-jcc-limit", test_stretch_jcc_limit);
    g_test_add_func("/timing/486/stretch-loop-again", test_stretch_loop_again);
    g_test_add_func("/timing/486/stretch-recode-warm", test_stretch_recode_warm);
    g_test_add_func("/timing/486/far-call-gate", test_far_call_gate);
    g_test_add_func("/timing/486/int-iret-protected", test_int_iret_protected);
    g_test_add_func("/timing/486/real-mode-io-int", test_real_mode_io_int);
    g_test_add_func("/timing/486/fault-delivery", test_fault_delivery);
    g_test_add_func("/timing/486/rep-vs-unrolled-stores", test_rep_vs_unrolled_stores);
    g_test_add_func("/timing/486/tlb-fits", test_tlb_fits);
    g_test_add_func("/timing/486/tlb-code-lookups", test_tlb_code_lookups);
    g_test_add_func("/timing/486/tlb-overflow", test_tlb_overflow);
    g_test_add_func("/timing/486/tlb-mov-cr3", test_tlb_mov_cr3);
    g_test_add_func("/timing/486/tlb-invlpg", test_tlb_invlpg);
    g_test_add_func("/timing/486/dma-snoop", test_dma_snoop);
    return g_test_run();
}
