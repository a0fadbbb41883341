/* The 386DX cost model: short sequences with their clock counts asserted
 * exactly.  Every expected figure is a row of the Intel386 DX data sheet's
 * "Instruction Set Clock Count Summary" (same as the 80386 Programmer's
 * Reference Manual clock tables), with wait states set to 0 unless the test
 * is about them.  Measurement: run N instructions, read the cycle counter,
 * run M more, compare. */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/timing/timing.h"
#include "emu/config.h"
#include "emu/machine.h"

#define CODE32 0x100000u
#define CODE16 0x7c00u
#define DATA   0x200000u

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    nm_timing *t;
    uint8_t *ram;
} fx;

static void fx_init(fx *f, unsigned wait_states)
{
    f->cfg = nm_config_new();
    g_free(f->cfg->cpu);
    f->cfg->cpu = g_strdup("386dx-40");
    f->m = nm_machine_new(f->cfg, NULL);
    g_assert_nonnull(f->m);
    f->c = nm_cpu_new(f->m);
    f->ram = f->m->ram->host;
    nm_mem_region *rom = nm_memmap_add_rom(f->m->mem, "rom", 0xffff0000u, 0x10000);
    static const uint8_t jmp[] = {0xea, 0x00, 0x7c, 0x00, 0x00}; /* JMP FAR 0000:7C00 */
    nm_mem_region_load(rom, 0xfff0, jmp, sizeof jmp);
    nm_cpu_reset(f->c);
    nm_timing_params p;
    nm_timing_default_params(f->m->model, &p);
    p.mem_wait_states = wait_states;
    f->t = nm_timing_new(f->m, &p);
}

static void fx_free(fx *f)
{
    nm_timing_free(f->t);
    nm_cpu_free(f->c);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

static void flat(fx *f, const void *code, size_t n)
{
    memcpy(f->ram + CODE32, code, n);
    nm_cpu_enter_flat32(f->c, CODE32, 0x90000);
    nm_timing_select(f->t, nm_cost_model_find("386"));
}

/* Clocks of the next `n` instructions. */
static uint64_t clocks_of(fx *f, uint64_t n)
{
    uint64_t before = f->m->clock.cycles;
    g_assert_cmpuint(nm_cpu_run(f->c, n), ==, n);
    return f->m->clock.cycles - before;
}

/* The 386-cache64k board (Intel386 DX HRM 7.6: 64 KB direct-mapped, 4-byte
 * lines, buffered write-through): MOV EAX,[ESI] twice from one dword at
 * W = 2.  The first read misses and takes W; the second hits and costs
 * what it costs with no wait states at all ("MOV reg,mem 4"); a store is
 * buffered (no wait state) whether its line is cached or not. */
static uint64_t cached_mov(uint32_t l2, unsigned w, int which)
{
    fx f;
    f.cfg = NULL;
    fx_init(&f, w);
    nm_timing_free(f.t);
    nm_timing_params p;
    nm_timing_default_params(f.m->model, &p);
    p.mem_wait_states = w;
    p.l2_size = l2;
    f.t = nm_timing_new(f.m, &p);
    static const uint8_t code[] = {0x8b, 0x06, 0x8b, 0x06, 0x89, 0x46, 0x40, 0xf4};
    flat(&f, code, sizeof code);
    nm_cpu_set_reg(f.c, NM_ESI, 0x200100); /* not the code's slot (direct-mapped) */
    uint64_t c[3];
    for (int k = 0; k < 3; k++)
        c[k] = clocks_of(&f, 1);
    fx_free(&f);
    return c[which];
}

static void test_cache64k(void)
{
    uint64_t miss = cached_mov(64u << 10, 2, 0), hit = cached_mov(64u << 10, 2, 1);
    g_assert_cmpuint(hit, ==, cached_mov(0, 0, 1));     /* a hit: no wait state */
    g_assert_cmpuint(cached_mov(0, 2, 1), ==, hit + 2); /* without the cache: W */
    g_assert_cmpuint(miss, ==, cached_mov(0, 2, 0));    /* a miss: as without it */
    /* The store: buffered, no data wait state; its new code dword (bytes
     * 4-7, not cached) still takes W, as without the cache. */
    g_assert_cmpuint(cached_mov(64u << 10, 2, 2), ==, cached_mov(0, 2, 2) - 2);
}

/* The buffered write-through of 386-cache64k holds the DRAM for a whole
 * cycle (2 + W) after each store (HRM 7.6: one write buffered).  REP MOVSD
 * of 8 dwords at W = 2, its 16 data cycles placed evenly over its 7 + 4 x 8
 * = 39 table clocks.  From a cached source only the 8 stores use the DRAM,
 * about 5 clocks apart: never busy.  From an uncached source every read
 * misses (4-byte lines), takes W = 2 (16 in all) and finds the DRAM still
 * busy with the store before it: 0, 2, 2, 2, 2, 1, 1, 1 clocks more (11).
 * Without the occupancy the difference would be the 16 wait states only. */
static void test_cache64k_busy_dram(void)
{
    fx f;
    fx_init(&f, 2);
    nm_timing_free(f.t);
    nm_timing_params p;
    nm_timing_default_params(f.m->model, &p);
    p.mem_wait_states = 2;
    p.l2_size = 64u << 10;
    f.t = nm_timing_new(f.m, &p);
    static const uint8_t code[] = {0xf3, 0xa5, 0x90, 0x90, 0x90, 0x90, 0xf4}; /* rep movsd; nops */
    flat(&f, code, sizeof code);
    uint64_t c[3];
    const uint32_t src[3] = {0x200100, 0x200100, 0x200200};
    for (int k = 0; k < 3; k++) {
        nm_cpu_set_reg(f.c, NM_ESI, src[k]);
        nm_cpu_set_reg(f.c, NM_EDI, 0x210000);
        nm_cpu_set_reg(f.c, NM_ECX, 8);
        f.c->eip = CODE32;
        c[k] = clocks_of(&f, 1);
        (void)clocks_of(&f, 4); /* NOPs: the last store's DRAM cycle ends */
    }
    g_assert_cmpuint(c[2] - c[1], ==, 16 + 11);
    fx_free(&f);
}

/* ALU chains: "ADD reg,reg 2" whether or not the next one depends on it
 * (the 386 has no pipeline interlocks); HLT 5. */
static void test_alu_chains(void)
{
    fx f;
    fx_init(&f, 0);
    static const uint8_t code[] = {
        0x01, 0xd8, /* add eax, ebx */
        0x01, 0xc0, /* add eax, eax   (depends on the previous) */
        0x01, 0xca, /* add edx, ecx   (independent) */
        0xf4,       /* hlt */
    };
    flat(&f, code, sizeof code);
    g_assert_cmpuint(clocks_of(&f, 3), ==, 2 + 2 + 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 5);
    fx_free(&f);
}

/* Prefixes cost nothing on the 386 (they are components for "m" only):
 * 66 01 D8 = ADD AX,BX, 2. */
static void test_prefix(void)
{
    fx f;
    fx_init(&f, 0);
    static const uint8_t code[] = {0x66, 0x01, 0xd8, 0x01, 0xd8, 0xf4};
    flat(&f, code, sizeof code);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2);
    fx_free(&f);
}

/* Jcc taken: 7+m (m = components of the target: JNZ rel8 = opcode + rel
 * = 2, charged with the target); not taken: 3.  XOR 2, NOP 3. */
static void test_branches(void)
{
    fx f;
    fx_init(&f, 0);
    static const uint8_t code[] = {
        0x31, 0xc0, /* xor eax, eax */
        0x74, 0x01, /* jz +1 (taken) */
        0x90,       /* (skipped) */
        0x75, 0x01, /* jnz +1 (not taken) */
        0x90,       /* nop */
        0xf4,
    };
    flat(&f, code, sizeof code);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2);     /* XOR reg,reg */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 7);     /* Jcc taken, 7 ... */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2 + 3); /* ... + m = 2, then Jcc not taken 3 */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 3);     /* NOP */
    fx_free(&f);
}

/* REP MOVSD: 7+4n; with W wait states every bus cycle (n reads + n writes)
 * adds W. */
static void test_rep_movsd(void)
{
    for (unsigned w = 0; w <= 2; w += 2) {
        fx f;
        fx_init(&f, w);
        static const uint8_t code[] = {0xf3, 0xa5, 0xf4}; /* rep movsd; hlt */
        flat(&f, code, sizeof code);
        nm_cpu_set_reg(f.c, NM_ESI, DATA);
        nm_cpu_set_reg(f.c, NM_EDI, DATA + 0x1000);
        nm_cpu_set_reg(f.c, NM_ECX, 8);
        g_assert_cmpuint(clocks_of(&f, 1), ==, 7 + 4 * 8 + w * 16);
        g_assert_cmpuint(nm_cpu_get_reg(f.c, NM_ECX), ==, 0);
        fx_free(&f);
    }
}

/* Memory operands and wait states: MOV reg,mem 4; ADD mem,reg 7 (one read
 * and one write bus cycle: +2W); a misaligned dword is two bus cycles.  An
 * AAM (17 clocks, bus idle) first fills the prefetch queue, so that code
 * fetches stay hidden (with a cold queue the first fetch would stall). */
static void test_memory_wait_states(void)
{
    fx f;
    fx_init(&f, 2);
    static const uint8_t code[] = {
        0xd4, 0x0a,       /* aam */
        0x8b, 0x03,       /* mov eax, [ebx] */
        0x01, 0x03,       /* add [ebx], eax */
        0x8b, 0x43, 0x02, /* mov eax, [ebx+2] (crosses a dword) */
        0xf4,
    };
    flat(&f, code, sizeof code);
    nm_cpu_set_reg(f.c, NM_EBX, DATA);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 17); /* AAM 17 (its own fetch hides in it) */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4 + 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 7 + 2 * 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4 + 2 * 2);
    fx_free(&f);
}

/* Page-mode DRAM (the 386 board presets): a cycle's wait states by the
 * state of the bank's open row, 4 KB rows; at 40 MHz (timing.c ws_page_*)
 * 1 on a read page hit, 2 on a write hit or with the row closed, 4 on a
 * page miss.  Code runs from row 0x100 (CODE32), so a read of CODE32 +
 * 0x800 hits the row the code fetches keep open and a read of DATA (row
 * 0x200) misses; each AAM before them (17 clocks) covers the code dwords'
 * own fetches in its idle clocks.  "MOV reg,mem 4", "MOV mem,reg 2". */
static fx paged(void)
{
    fx f;
    fx_init(&f, 0);
    nm_timing_free(f.t);
    nm_timing_params p;
    nm_timing_default_params(f.m->model, &p);
    g_assert_cmpuint(p.ws_page_read, ==, 1);
    g_assert_cmpuint(p.ws_page_write, ==, 2);
    g_assert_cmpuint(p.ws_row_closed, ==, 2);
    g_assert_cmpuint(p.ws_page_miss, ==, 4);
    g_assert_cmpuint(p.mem_wait_states, ==, 2); /* without page mode: every cycle */
    p.dram_page_bytes = 4096;
    p.refresh_ns = 15086; /* 603 clocks at 40 MHz */
    f.t = nm_timing_new(f.m, &p);
    return f;
}

static void test_page_mode(void)
{
    fx f = paged();
    static const uint8_t code[] = {
        0xd4, 0x0a, /* aam */
        0x8b, 0x03, /* mov eax, [ebx]: the code's row */
        0xd4, 0x0a, /* aam */
        0x8b, 0x01, /* mov eax, [ecx]: another row */
        0xd4, 0x0a, /* aam */
        0x89, 0x03, /* mov [ebx], eax: the code's row */
        0xd4, 0x0a, /* aam */
        0x89, 0x01, /* mov [ecx], eax: another row */
        0xd4, 0x0a, /* aam */
        0x8b, 0x03, /* mov eax, [ebx] */
        0xf4,
    };
    flat(&f, code, sizeof code);
    nm_cpu_set_reg(f.c, NM_EBX, CODE32 + 0x800);
    nm_cpu_set_reg(f.c, NM_ECX, DATA);
    clocks_of(&f, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4 + 1); /* page hit */
    clocks_of(&f, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4 + 4); /* page miss */
    clocks_of(&f, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2 + 2); /* write, page hit */
    clocks_of(&f, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2 + 4); /* write, page miss */
    /* A refresh request (every 603 clocks) between the AAM's fetches and
     * the read: the read finds the row closed. */
    clocks_of(&f, 1);
    f.m->clock.cycles = (f.m->clock.cycles / 603 + 1) * 603 + 5;
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4 + 2);
    fx_free(&f);
}

/* MUL early out: 6 + max(ceiling(log2 |m|), 3) ("MUL r32 9-38").  ECX = 5:
 * ceiling(log2 5) = 3 -> 9; ECX = 0x10000: 16 -> 22; ECX = 0xffffffff: 32 -> 38. */
static void test_mul_early_out(void)
{
    static const struct {
        uint32_t m;
        unsigned clocks;
    } cases[] = {{5, 9}, {0x10000, 22}, {0xffffffffu, 38}};
    for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
        fx f;
        fx_init(&f, 0);
        static const uint8_t code[] = {0xf7, 0xe1, 0xf4}; /* mul ecx */
        flat(&f, code, sizeof code);
        nm_cpu_set_reg(f.c, NM_EAX, 3);
        nm_cpu_set_reg(f.c, NM_ECX, cases[k].m);
        g_assert_cmpuint(clocks_of(&f, 1), ==, cases[k].clocks);
        fx_free(&f);
    }
}

/* I/O, protected mode CPL 0 <= IOPL: IN AL,imm8 6; OUT imm8,AL 4; IN AL,DX
 * 7; OUT DX,AL 5.  (Unclaimed ports: no bus wait states are charged.) */
static void test_io_protected(void)
{
    fx f;
    fx_init(&f, 0);
    static const uint8_t code[] = {0xe4, 0x80, 0xe6, 0x80, 0xec, 0xee, 0xf4};
    flat(&f, code, sizeof code);
    nm_cpu_set_reg(f.c, NM_EDX, 0x80);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 6);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 4);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 7);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 5);
    fx_free(&f);
}

/* Real mode: IN AL,imm8 12; OUT imm8,AL 10; INT n 37; IRET 22. */
static void test_real_mode_io_int(void)
{
    fx f;
    fx_init(&f, 0);
    static const uint8_t code[] = {
        0xe4, 0x80, /* in al, 0x80 */
        0xe6, 0x80, /* out 0x80, al */
        0xcd, 0x20, /* int 0x20 */
        0xf4,
    };
    memcpy(f.ram + CODE16, code, sizeof code);
    f.ram[0x8000] = 0xcf; /* the handler: iret */
    f.ram[0x80] = 0x00, f.ram[0x81] = 0x80, f.ram[0x82] = 0, f.ram[0x83] = 0; /* IVT[0x20] */
    g_assert_cmpuint(nm_cpu_run(f.c, 1), ==, 1); /* the reset vector's far jump */
    nm_timing_select(f.t, nm_cost_model_find("386"));
    g_assert_cmpuint(clocks_of(&f, 1), ==, 12);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 10);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 37);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 22);
    fx_free(&f);
}

/* A far CALL through a same-privilege 32-bit call gate: "CALL ptr16:32 via
 * call gate, same privilege level, 52+m" (m of the target, RETF: 1); the
 * RETF back: "RET far, same privilege level, 32+m" (m of the NOP after the
 * call: 1); direct far call, protected mode: 34+m. */
static void test_far_call_gate(void)
{
    fx f;
    fx_init(&f, 0);
    /* GDT at 0x1000: null, code 0x08 (flat 32-bit DPL 0), data 0x10, call
     * gate 0x18 -> 0x08:CODE32+0x40. */
    uint8_t *g = f.ram + 0x1000;
    memset(g, 0, 32);
    static const uint8_t code_d[8] = {0xff, 0xff, 0, 0, 0, 0x9b, 0xcf, 0};
    static const uint8_t data_d[8] = {0xff, 0xff, 0, 0, 0, 0x93, 0xcf, 0};
    memcpy(g + 8, code_d, 8);
    memcpy(g + 16, data_d, 8);
    uint32_t target = CODE32 + 0x40;
    uint8_t gate[8] = {target & 0xff, (target >> 8) & 0xff,  0x08,        0x00, 0x00,
                       0x8c,          (target >> 16) & 0xff, target >> 24};
    memcpy(g + 24, gate, 8);
    /* GDTR image at 0x2000: limit 31, base 0x1000. */
    static const uint8_t gdtr[6] = {31, 0, 0x00, 0x10, 0, 0};
    memcpy(f.ram + 0x2000, gdtr, sizeof gdtr);
    uint8_t code[0x48] = {0};
    static const uint8_t prog[] = {
        0x0f, 0x01, 0x15, 0x00, 0x20, 0x00, 0x00, /* lgdt [0x2000] */
        0x9a, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, /* call far 0x18:0 (gate) */
        0x90,                                     /* nop */
        0x9a, 0x40, 0x00, 0x10, 0x00, 0x08, 0x00, /* call far 0x08:CODE32+0x40 */
        0x90, 0xf4,
    };
    memcpy(code, prog, sizeof prog);
    code[0x40] = 0xcb; /* retf */
    flat(&f, code, sizeof code);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 11);     /* LGDT 11 */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 52);     /* CALL via gate 52 ... */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 32); /* ... + m(RETF) = 1; RETF 32 */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 3);  /* m(NOP) = 1; NOP 3 */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 34);     /* CALL far direct 34 ... */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 32); /* ... + m(RETF); RETF 32 */
    fx_free(&f);
}

/* ---- protected-mode structures built in guest RAM for the tests below:
 * GDT at 0x1000: null, ring-0 code 0x08 and data 0x10 (flat), ring-3 code
 * 0x1b and data 0x23 (flat), a 386 TSS 0x28 at 0x3000 whose I/O permission
 * bitmap (offset 0x68, all ports allowed, 0xff terminator) covers every
 * port; IDT at 0x2000: vector 0x40 a DPL-3 and 0x41 a DPL-0 32-bit
 * interrupt gate, both to 0x08:`handler`. */
#define PM_GDT 0x1000u
#define PM_IDT 0x2000u
#define PM_TSS 0x3000u

static void put_desc(uint8_t *p, uint32_t lo, uint32_t hi)
{
    memcpy(p, &lo, 4);
    memcpy(p + 4, &hi, 4);
}

static void pm_tables(fx *f, uint32_t handler)
{
    uint8_t *g = f->ram + PM_GDT;
    put_desc(g, 0, 0);
    put_desc(g + 0x08, 0x0000ffff, 0x00cf9a00);
    put_desc(g + 0x10, 0x0000ffff, 0x00cf9200);
    put_desc(g + 0x18, 0x0000ffff, 0x00cffa00);
    put_desc(g + 0x20, 0x0000ffff, 0x00cff200);
    uint32_t limit = 0x68 + 0x2000; /* the bitmap and its terminator byte */
    put_desc(g + 0x28, (PM_TSS << 16) | (limit & 0xffff),
             ((PM_TSS >> 16) & 0xff) | 0x8900 | (limit & 0xf0000) | (PM_TSS & 0xff000000u));
    uint8_t *t = f->ram + PM_TSS;
    memset(t, 0, 0x68 + 0x2001);
    uint32_t esp0 = 0x90000, ss0 = 0x10;
    memcpy(t + 4, &esp0, 4);
    memcpy(t + 8, &ss0, 4);
    t[0x66] = 0x68, t[0x67] = 0;
    t[0x68 + 0x2000] = 0xff;
    uint8_t *idt = f->ram + PM_IDT;
    put_desc(idt + 0x40 * 8, (0x08u << 16) | (handler & 0xffff), (handler & 0xffff0000u) | 0xee00);
    put_desc(idt + 0x41 * 8, (0x08u << 16) | (handler & 0xffff), (handler & 0xffff0000u) | 0x8e00);
    f->c->gdtr = (nm_dtr){PM_GDT, 0x2f};
    f->c->idtr = (nm_dtr){PM_IDT, 0x41 * 8 + 7};
}

/* Protected-mode INT/IRET and I/O at CPL 3 > IOPL 0 (the TSS bitmap is
 * read).  Data sheet rows: "INT type n, protected mode, via interrupt gate,
 * same level 59; to inner level 99"; "IRET, protected mode, same level 22;
 * to outer level 38" (INT and IRET have no +m); "IN AL,imm8 pm 6* / 26**",
 * "OUT imm8,AL 4* / 24**", "IN AL,DX 7* / 27**", "OUT DX,AL 5* / 25**"
 * (** CPL > IOPL); NOP 3, MOV reg,imm 2, LTR reg 23, PUSH imm 2.  W = 0:
 * the gate, descriptor, TSS and bitmap reads cost no wait states, and every
 * instruction has enough bus-idle clocks to prefetch its own dword. */
static void test_protected_int_iret_io_bitmap(void)
{
    fx f;
    fx_init(&f, 0);
    uint8_t code[0x84] = {0};
    static const uint8_t ring0[] = {
        0xcd, 0x41,                   /* int 0x41 (DPL-0 gate, same level) */
        0x90,                         /* nop */
        0x66, 0xb8, 0x28, 0x00,       /* mov ax, 0x28 */
        0x0f, 0x00, 0xd8,             /* ltr ax */
        0x6a, 0x23,                   /* push 0x23 (ring-3 SS) */
        0x68, 0x00, 0x00, 0x08, 0x00, /* push 0x80000 (ring-3 ESP) */
        0x6a, 0x02,                   /* push 2 (EFLAGS: IOPL 0) */
        0x6a, 0x1b,                   /* push 0x1b (ring-3 CS) */
        0x68, 0x20, 0x00, 0x10, 0x00, /* push CODE32+0x20 */
        0xcf,                         /* iretd (to ring 3) */
    };
    static const uint8_t ring3[] = {
        0xe4, 0x80, /* in al, 0x80 */
        0xe6, 0x80, /* out 0x80, al */
        0xec,       /* in al, dx */
        0xee,       /* out dx, al */
        0xcd, 0x40, /* int 0x40 (DPL-3 gate, to ring 0) */
        0x90,       /* nop */
        0xeb, 0xfe, /* jmp $ */
    };
    memcpy(code, ring0, sizeof ring0);
    memcpy(code + 0x20, ring3, sizeof ring3);
    code[0x80] = 0xcf; /* the handler: iretd */
    pm_tables(&f, CODE32 + 0x80);
    flat(&f, code, sizeof code);
    nm_cpu_set_reg(f.c, NM_EDX, 0x80);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 59); /* INT, same level */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 22); /* IRET, same level */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 3);  /* NOP (no +m after IRET) */
    g_assert_cmpuint(clocks_of(&f, 2), ==, 2 + 23);
    g_assert_cmpuint(clocks_of(&f, 5), ==, 5 * 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 38); /* IRET to outer level */
    g_assert_cmpuint(f.c->cpl, ==, 3);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 26); /* IN AL,imm8, CPL > IOPL */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 24); /* OUT imm8,AL */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 27); /* IN AL,DX */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 25); /* OUT DX,AL */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 99); /* INT to inner level */
    g_assert_cmpuint(f.c->cpl, ==, 0);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 38); /* IRET to outer level */
    g_assert_cmpuint(f.c->cpl, ==, 3);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 3); /* NOP */
    fx_free(&f);
}

/* Exceptions are delivered like INT n through an interrupt gate ("INT type
 * n, protected mode, via interrupt gate, same level 59; to inner level 99";
 * the data sheet has no separate exception figure): #UD (UD2, 0F 0B) at
 * CPL 0 and from a ring-3 program.  The faulting instruction does not
 * complete and costs the run loop's one clock of fault delivery
 * (cpu/cpu.c); the model charges the INT row at the handler's first
 * instruction, ADD dword [esp],2 ("ADD mem,imm 7"), which steps over UD2;
 * IRETD returns (same level 22, to outer level 38).  W = 0. */
static void test_fault_delivery(void)
{
    fx f;
    fx_init(&f, 0);
    uint8_t code[0x90] = {0};
    static const uint8_t ring0[] = {
        0x0f, 0x0b,                   /* ud2 (#UD at CPL 0) */
        0x66, 0xb8, 0x28, 0x00,       /* mov ax, 0x28 */
        0x0f, 0x00, 0xd8,             /* ltr ax */
        0x6a, 0x23,                   /* push 0x23 (ring-3 SS) */
        0x68, 0x00, 0x00, 0x08, 0x00, /* push 0x80000 (ring-3 ESP) */
        0x6a, 0x02,                   /* push 2 (EFLAGS) */
        0x6a, 0x1b,                   /* push 0x1b (ring-3 CS) */
        0x68, 0x40, 0x00, 0x10, 0x00, /* push CODE32+0x40 */
        0xcf,                         /* iretd (to ring 3) */
    };
    static const uint8_t ring3[] = {0x0f, 0x0b, 0x90, 0xeb, 0xfe};   /* ud2; nop; jmp $ */
    static const uint8_t handler[] = {0x83, 0x04, 0x24, 0x02, 0xcf}; /* add [esp],2; iretd */
    memcpy(code, ring0, sizeof ring0);
    memcpy(code + 0x40, ring3, sizeof ring3);
    memcpy(code + 0x80, handler, sizeof handler);
    pm_tables(&f, CODE32 + 0x80);
    uint32_t h = CODE32 + 0x80;
    put_desc(f.ram + PM_IDT + 6 * 8, (0x08u << 16) | (h & 0xffff), (h & 0xffff0000u) | 0x8e00);
    flat(&f, code, sizeof code);
    uint64_t b = f.m->clock.cycles;
    g_assert_cmpuint(nm_cpu_run(f.c, 1), ==, 0); /* the fault */
    g_assert_cmpuint(f.m->clock.cycles - b, ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 59 + 7); /* delivered, same level; ADD */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 22);     /* IRETD, same level */
    clocks_of(&f, 8);                               /* MOV, LTR, 5 PUSHes, IRETD: ring 3 */
    g_assert_cmpuint(f.c->cpl, ==, 3);
    b = f.m->clock.cycles;
    g_assert_cmpuint(nm_cpu_run(f.c, 1), ==, 0); /* the fault in the user program */
    g_assert_cmpuint(f.m->clock.cycles - b, ==, 1);
    g_assert_cmpuint(f.c->cpl, ==, 0);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 99 + 7); /* delivered to an inner level; ADD */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 38);     /* IRETD to the outer level */
    g_assert_cmpuint(f.c->cpl, ==, 3);
    fx_free(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timing/386/cache64k", test_cache64k);
    g_test_add_func("/timing/386/cache64k-busy-dram", test_cache64k_busy_dram);
    g_test_add_func("/timing/386/fault-delivery", test_fault_delivery);
    g_test_add_func("/timing/386/alu-chains", test_alu_chains);
    g_test_add_func("/timing/386/prefix", test_prefix);
    g_test_add_func("/timing/386/branches", test_branches);
    g_test_add_func("/timing/386/rep-movsd", test_rep_movsd);
    g_test_add_func("/timing/386/memory-wait-states", test_memory_wait_states);
    g_test_add_func("/timing/386/page-mode", test_page_mode);
    g_test_add_func("/timing/386/mul-early-out", test_mul_early_out);
    g_test_add_func("/timing/386/io-protected", test_io_protected);
    g_test_add_func("/timing/386/real-mode-io-int", test_real_mode_io_int);
    g_test_add_func("/timing/386/far-call-gate", test_far_call_gate);
    g_test_add_func("/timing/386/protected-int-iret-io-bitmap", test_protected_int_iret_io_bitmap);
    return g_test_run();
}
