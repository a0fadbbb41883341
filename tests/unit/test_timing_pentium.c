/* The Pentium cost model (cpu/timing/pentium.c): short sequences in flat
 * 32-bit protected mode, clocks asserted exactly.  Each program runs once
 * to warm the caches (and, where said, the BTB), then again measured.  The
 * count is core clocks (bus wait states of I/O excluded) minus the closing
 * HLT (its row is 1 clock).
 *
 * Sources for the expected numbers, as in pentium.c:
 *   [IT] Agner Fog, instruction tables, Pentium list;
 *   [MA] Agner Fog, microarchitecture, P1 chapter: 4.1 pairing, 4.2 AGI,
 *        4.4 prefixes; P1 branch prediction (3 clocks U, 4 V);
 *   [DB] Pentium data book 3.1.2 (pairing, RMW);
 *   [PDM] Pentium developer's manual vol. 3, instruction clock counts;
 *   [NG] the x86 Norton Guide's "Length and timing" Pentium column;
 *   [PIR] "Intel Pentium Instruction Set Reference" (the Pentium manual's
 *        instruction pages with their clocks);
 *   [BB] Abrash, Graphics Programming Black Book, chapters 19-21. */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/timing/pentium.h"
#include "cpu/timing/timing.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "stretch_fixture.h"

extern const nm_cost_model_class nm_cost_model_pentium;

#define CODE  0x100000u
#define STACK 0x90000u
#define DATA  0x200000u
#define SRC   0x300000u
#define DST   0x301000u /* 4 KB from SRC: the same sets, the other way */
#define DST2  0x380000u /* never read: not in the data cache */
#define GDT   0x1000u
#define IDT   0x2000u

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    uint8_t *ram;
    void *st;
} fx;

/* The board's L2 for the next fx_init (0: none, the older tests' board). */
static uint32_t fx_l2_size;

/* DRAM 5-2-2-2, single transfers 5 bus clocks: a line fill is 11 bus
 * clocks (pentium-60: 11 core clocks; pentium-100: ceil(16.5) = 17). */
static void fx_init(fx *f, const char *model)
{
    f->cfg = nm_config_new();
    g_free(f->cfg->cpu);
    f->cfg->cpu = g_strdup(model);
    f->m = nm_machine_new(f->cfg, NULL);
    g_assert_nonnull(f->m);
    f->c = nm_cpu_new(f->m);
    f->ram = f->m->ram->host;
    nm_timing_params p = {.dram_first_clocks = 5,
                          .dram_burst_clocks = 2,
                          .dram_single_clocks = 5,
                          .l2_size = fx_l2_size};
    f->st = nm_cost_model_pentium.create(f->c, f->m->model, &p);
    g_assert_nonnull(f->st);
    nm_cpu_hooks h = nm_cost_model_pentium.hooks;
    h.opaque = f->st;
    nm_cpu_set_hooks(f->c, &h);
}

static void fx_free(fx *f)
{
    nm_cpu_set_hooks(f->c, NULL);
    nm_cost_model_pentium.destroy(f->st);
    nm_cpu_free(f->c);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

/* Through the DMA path, so that the decoded-instruction cache drops what
 * it held for these bytes. */
static void load(fx *f, uint32_t at, const void *code, size_t n)
{
    g_assert_true(nm_mem_dma_write(f->m->mem, at, code, n));
}

typedef struct {
    uint32_t eax, ebx, ecx, esi, edi;
} regs;

/* Runs from `eip` to the HLT; returns core clocks without the HLT. */
static uint64_t run(fx *f, uint32_t eip, regs r)
{
    f->m->stop_requested = 0;
    nm_cpu_enter_flat32(f->c, eip, STACK);
    f->c->cr0 &= ~(NM_CR0_CD | NM_CR0_NW); /* caches on, as Linux runs */
    nm_cpu_set_reg(f->c, NM_EAX, r.eax);
    nm_cpu_set_reg(f->c, NM_EBX, r.ebx);
    nm_cpu_set_reg(f->c, NM_ECX, r.ecx);
    nm_cpu_set_reg(f->c, NM_ESI, r.esi);
    nm_cpu_set_reg(f->c, NM_EDI, r.edi);
    uint64_t c0 = f->m->clock.cycles, b0 = f->m->clock.bus_wait_cycles;
    nm_cpu_run(f->c, 10000000);
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
    uint64_t core = (f->m->clock.cycles - c0) - (f->m->clock.bus_wait_cycles - b0);
    return core - 1; /* the HLT row */
}

/* Loads `code` + HLT at CODE, runs it warm (once to warm up), returns the
 * second run's clocks. */
static uint64_t measure(fx *f, const uint8_t *code, size_t n, regs r)
{
    static const uint8_t hlt = 0xf4;
    load(f, CODE, code, n);
    load(f, CODE + (uint32_t)n, &hlt, 1);
    run(f, CODE, r);
    return run(f, CODE, r);
}

/* Reads the line at `addr` into the data cache (stores alone do not
 * allocate), with a MOV eax,[esi] / HLT at CODE + 0x300. */
static void cache_line(fx *f, uint32_t addr)
{
    static const uint8_t rd[] = {0x8b, 0x06, 0xf4};
    load(f, CODE + 0x300, rd, sizeof rd);
    run(f, CODE + 0x300, (regs){.esi = addr});
}

static const nm_p5_stats *stats(fx *f)
{
    return nm_pentium_stats(f->st);
}

/* ------------------------------------------------------------ pairing */

/* The model keeps what it worked out of a decoded instruction (its row,
 * operands, prefix bytes) in the decoded-instruction cache; new code at the
 * same address is decoded again and costed as itself: MOVSX (NP, 3, +1 for 0F) then
 * LEA (UV, 1) at CODE cost what they cost in a fresh machine. */
static void test_recode_same_address(void)
{
    static const uint8_t movsx[] = {0x0f, 0xbe, 0xc3}; /* movsx eax, bl */
    static const uint8_t lea[] = {0x8d, 0x04, 0x18};   /* lea eax, [eax+ebx] */
    fx f, g;
    fx_init(&f, "pentium-100");
    uint64_t a = measure(&f, movsx, sizeof movsx, (regs){0});
    uint64_t b = measure(&f, lea, sizeof lea, (regs){0});
    fx_free(&f);
    fx_init(&g, "pentium-100");
    uint64_t fresh = measure(&g, lea, sizeof lea, (regs){0});
    fx_free(&g);
    g_assert_cmpuint(a, ==, 3 + 1); /* the 0F byte is a prefix for the decoder [MA 4.4] */
    g_assert_cmpuint(b, ==, fresh);
    g_assert_cmpuint(b, ==, 1);
}

static void test_alu_chains(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* Four independent ADD r,imm: UV, 1 clock each [IT]; two pairs -> 2. */
    static const uint8_t indep[] = {0x83, 0xc0, 0x01, 0x83, 0xc3, 0x01,  /* add eax,1; add ebx,1 */
                                    0x83, 0xc1, 0x01, 0x83, 0xc2, 0x01}; /* add ecx,1; add edx,1 */
    g_assert_cmpuint(measure(&f, indep, sizeof indep, (regs){0}), ==, 2);
    /* The same register four times: each reads what the last wrote (RAW),
     * no pairs [MA 4.1 rule 2] -> 4. */
    static const uint8_t dep[] = {0x83, 0xc0, 0x01, 0x83, 0xc0, 0x01,
                                  0x83, 0xc0, 0x01, 0x83, 0xc0, 0x01};
    uint64_t before = stats(&f)->pairs;
    g_assert_cmpuint(measure(&f, dep, sizeof dep, (regs){0}), ==, 4);
    g_assert_cmpuint(stats(&f)->pairs, ==, before);
    fx_free(&f);
}

static void test_pairing_rules(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    regs r = {.esi = DATA};
    cache_line(&f, DATA);
    /* MOV eax,ebx / MOV ecx,ebx: read after read, pairs -> 1 [MA 4.1]. */
    static const uint8_t rar[] = {0x89, 0xd8, 0x89, 0xd9};
    g_assert_cmpuint(measure(&f, rar, sizeof rar, r), ==, 1);
    /* MOV eax,ebx / MOV ecx,eax: read after write, no pair -> 2. */
    static const uint8_t raw[] = {0x89, 0xd8, 0x89, 0xc1};
    g_assert_cmpuint(measure(&f, raw, sizeof raw, r), ==, 2);
    /* MOV al,bl / MOV ah,0: two parts of EAX count as one register -> 2. */
    static const uint8_t partial[] = {0x88, 0xd8, 0xb4, 0x00};
    g_assert_cmpuint(measure(&f, partial, sizeof partial, r), ==, 2);
    /* MOV [esi],1 / MOV eax,ebx: a store (cache hit) pairs -> 1. */
    static const uint8_t st_imm[] = {0xc7, 0x06, 0x01, 0x00, 0x00, 0x00, 0x89, 0xd8};
    g_assert_cmpuint(measure(&f, st_imm, sizeof st_imm, r), ==, 1);
    /* MOV [esi+4],1 has a displacement and an immediate: not pairable on
     * the P5 [MA 4.1] -> 1 + 1 = 2. */
    static const uint8_t dispimm[] = {0xc7, 0x46, 0x04, 0x01, 0x00, 0x00, 0x00, 0x89, 0xd8};
    g_assert_cmpuint(measure(&f, dispimm, sizeof dispimm, r), ==, 2);
    /* SHL is U-only (PU) [IT]: ADD eax,1 / SHL ebx,1 cannot pair -> 2 ... */
    static const uint8_t u_in_v[] = {0x83, 0xc0, 0x01, 0xd1, 0xe3};
    g_assert_cmpuint(measure(&f, u_in_v, sizeof u_in_v, r), ==, 2);
    /* ... but SHL ebx,1 / ADD eax,1 does -> 1. */
    static const uint8_t u_then_v[] = {0xd1, 0xe3, 0x83, 0xc0, 0x01};
    g_assert_cmpuint(measure(&f, u_then_v, sizeof u_then_v, r), ==, 1);
    /* MOV eax,[esp-8] / NOP pair (the read caches the stack line: writes
     * alone do not allocate), then PUSH eax / PUSH ebx pair despite ESP
     * [MA 4.1 rule 6] -> 1 + 1 = 2. */
    static const uint8_t pushes[] = {0x8b, 0x44, 0x24, 0xf8, /* mov eax,[esp-8]: caches the line */
                                     0x90,                   /* nop (pairs with it) */
                                     0x50, 0x53};            /* push eax; push ebx */
    g_assert_cmpuint(measure(&f, pushes, sizeof pushes, r), ==, 2);
    /* Two read-modify-writes pair with two more clocks [DB]: ADD [esi],eax
     * (3) / ADD [esi+8],ebx (3) -> 3 + 2 = 5.  The line is cached by the
     * first run's reads (fill on the read half).  Bank: bits 2-4 differ. */
    static const uint8_t rmw2[] = {0x01, 0x06, 0x01, 0x5e, 0x08};
    g_assert_cmpuint(measure(&f, rmw2, sizeof rmw2, r), ==, 5);
    fx_free(&f);
}

/* Rotates by an immediate do not pair: "SHIFT/ROT by 1 and SHIFT by imm
 * may pair as the first instruction in a pair" [DB 3.1.2]; GCC's Pentium
 * model (gcc/config/i386/pentium.md, pent_pair) the same. */
static void test_rotate_imm(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    regs r = {.esi = DATA};
    cache_line(&f, DATA);
    /* ROL ebx,5 / ADD eax,1: NP, then the ADD alone -> 2. */
    static const uint8_t rol_i[] = {0xc1, 0xc3, 0x05, 0x83, 0xc0, 0x01};
    g_assert_cmpuint(measure(&f, rol_i, sizeof rol_i, r), ==, 2);
    /* ROR ebx,2 / ADD eax,1 -> 2. */
    static const uint8_t ror_i[] = {0xc1, 0xcb, 0x02, 0x83, 0xc0, 0x01};
    g_assert_cmpuint(measure(&f, ror_i, sizeof ror_i, r), ==, 2);
    /* ADD eax,1 / ROL ebx,5 / ADD ecx,1: the ROL takes no V partner and
     * gives none: three groups -> 3. */
    static const uint8_t mid[] = {0x83, 0xc0, 0x01, 0xc1, 0xc3, 0x05, 0x83, 0xc1, 0x01};
    g_assert_cmpuint(measure(&f, mid, sizeof mid, r), ==, 3);
    /* ROL ebx,1 (D1) / ADD eax,1: a rotate by 1 pairs in U -> 1. */
    static const uint8_t rol_1[] = {0xd1, 0xc3, 0x83, 0xc0, 0x01};
    g_assert_cmpuint(measure(&f, rol_1, sizeof rol_1, r), ==, 1);
    /* SHL ebx,5 / ADD eax,1: a shift by an immediate pairs in U -> 1. */
    static const uint8_t shl_i[] = {0xc1, 0xe3, 0x05, 0x83, 0xc0, 0x01};
    g_assert_cmpuint(measure(&f, shl_i, sizeof shl_i, r), ==, 1);
    /* ROL dword [esi],5 (3, NP) / ADD eax,1 -> 3 + 1 = 4. */
    static const uint8_t rol_m[] = {0xc1, 0x06, 0x05, 0x83, 0xc0, 0x01};
    g_assert_cmpuint(measure(&f, rol_m, sizeof rol_m, r), ==, 4);
    fx_free(&f);
}

/* Two paired accesses to one data cache bank (address bits 2-4), the same
 * dword included, take two clocks: "Two instructions cannot access the
 * same DWORD of memory simultaneously ... The pair takes 2 clock cycles",
 * and the same for bits 2-4 alike [AF 10.2, rules 2-3]; [VT] Bank_Conflict. */
static void test_bank_conflict(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    regs r = {.esi = DATA};
    cache_line(&f, DATA);
    cache_line(&f, DATA + 32);
    /* MOV al,[esi] / MOV bl,[esi+1]: one dword -> 2 ([AF]'s example). */
    static const uint8_t bytes[] = {0x8a, 0x06, 0x8a, 0x5e, 0x01};
    uint64_t b0 = stats(&f)->bank_conflicts;
    g_assert_cmpuint(measure(&f, bytes, sizeof bytes, r), ==, 2);
    /* (the warm-up run does not pair: its code missed the code cache) */
    g_assert_cmpuint(stats(&f)->bank_conflicts - b0, ==, 1);
    /* MOV al,[esi+3] / MOV bl,[esi+4]: either side of a dword boundary,
     * other banks -> 1 ([AF]). */
    static const uint8_t across[] = {0x8a, 0x46, 0x03, 0x8a, 0x5e, 0x04};
    g_assert_cmpuint(measure(&f, across, sizeof across, r), ==, 1);
    /* MOV edx,[esi] / MOV [esi],ecx: a load and a store of one dword (RC4's
     * key-schedule swap) -> 2. */
    static const uint8_t swap[] = {0x8b, 0x16, 0x89, 0x0e};
    g_assert_cmpuint(measure(&f, swap, sizeof swap, r), ==, 2);
    /* MOV eax,[esi] / MOV ebx,[esi+32]: other lines, one bank -> 2; to
     * [esi+36], another bank -> 1. */
    static const uint8_t bank[] = {0x8b, 0x06, 0x8b, 0x5e, 0x20};
    g_assert_cmpuint(measure(&f, bank, sizeof bank, r), ==, 2);
    static const uint8_t nobank[] = {0x8b, 0x06, 0x8b, 0x5e, 0x24};
    g_assert_cmpuint(measure(&f, nobank, sizeof nobank, r), ==, 1);
    fx_free(&f);
}

static void test_agi(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    regs r = {.esi = DATA};
    /* ADD esi,4 / MOV eax,[esi]: no pair (RAW), and ESI was written in the
     * previous clock: AGI +1 [MA 4.2] -> 1 + (1 + 1) = 3. */
    static const uint8_t agi[] = {0x83, 0xc6, 0x04, 0x8b, 0x06};
    uint64_t a0 = stats(&f)->agi_stalls;
    g_assert_cmpuint(measure(&f, agi, sizeof agi, r), ==, 3);
    g_assert_cmpuint(stats(&f)->agi_stalls - a0, ==, 2); /* warm-up and measured run */
    /* MOV eax,[esi] / ADD esi,4: write after read pairs, no AGI -> 1. */
    static const uint8_t noagi[] = {0x8b, 0x06, 0x83, 0xc6, 0x04};
    g_assert_cmpuint(measure(&f, noagi, sizeof noagi, r), ==, 1);
    /* ADD esi,4 + NOP (a pair), then MOV eax,[esi]: still the previous
     * clock -> 1 + 2 = 3. */
    static const uint8_t agi2[] = {0x83, 0xc6, 0x04, 0x90, 0x8b, 0x06};
    g_assert_cmpuint(measure(&f, agi2, sizeof agi2, r), ==, 3);
    /* ADD esp,4 / POP eax: AGI on the implicit ESP [MA 4.2] -> 1 + 2 = 3;
     * POP eax / POP ebx: none, and they pair -> 1. */
    static const uint8_t espagi[] = {0x83, 0xc4, 0x04, 0x58};
    g_assert_cmpuint(measure(&f, espagi, sizeof espagi, r), ==, 3);
    static const uint8_t pops[] = {0x58, 0x5b};
    g_assert_cmpuint(measure(&f, pops, sizeof pops, r), ==, 1);
    fx_free(&f);
}

static void test_prefix(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* MOV eax,1 / MOV ebx,2 pair -> 1. */
    static const uint8_t plain[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0xbb, 0x02, 0x00, 0x00, 0x00};
    g_assert_cmpuint(measure(&f, plain, sizeof plain, (regs){0}), ==, 1);
    /* MOV eax,1 / MOV bx,2 (66h): a prefixed instruction goes to U only and
     * its prefix costs a decode clock [MA 4.4] -> 1 + (1 + 1) = 3. */
    static const uint8_t pfx[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0x66, 0xbb, 0x02, 0x00};
    uint64_t p0 = stats(&f)->prefix_cycles;
    g_assert_cmpuint(measure(&f, pfx, sizeof pfx, (regs){0}), ==, 3);
    g_assert_cmpuint(stats(&f)->prefix_cycles - p0, >=, 1);
    /* MOVZX: 0F is a prefix on the P5 [MA 4.4]: 3 [IT] + 1 -> 4. */
    static const uint8_t movzx[] = {0x0f, 0xb6, 0xc3}; /* movzx eax,bl */
    g_assert_cmpuint(measure(&f, movzx, sizeof movzx, (regs){0}), ==, 4);
    /* The shadow of a 2-clock group (ADD eax,[esi] + NOP) hides one prefix
     * clock in the three groups after it [MA 4.4 "two (sometimes three)";
     * three from Abrash's listing 21.1 measurements, BB ch. 21]: two pairs,
     * then MOV bx,5 -> 2 + 1 + 1 + 1 = 5 (two groups would give 6). */
    regs rd = {.esi = DATA};
    static const uint8_t shadow3[] = {
        0x03, 0x06, 0x90,                                           /* add eax,[esi]; nop */
        0xbb, 0x01, 0x00, 0x00, 0x00, 0xb9, 0x02, 0x00, 0x00, 0x00, /* mov ebx,1; mov ecx,2 */
        0xba, 0x03, 0x00, 0x00, 0x00, 0xbd, 0x04, 0x00, 0x00, 0x00, /* mov edx,3; mov ebp,4 */
        0x66, 0xbb, 0x05, 0x00};                                    /* mov bx,5 */
    p0 = stats(&f)->prefix_shadowed;
    g_assert_cmpuint(measure(&f, shadow3, sizeof shadow3, rd), ==, 5);
    g_assert_cmpuint(stats(&f)->prefix_shadowed - p0, ==, 2); /* warm-up and measured run */
    /* One more pair between them: the fourth group pays -> 2 + 3 + 2 = 7. */
    static const uint8_t shadow4[] = {
        0x03, 0x06, 0x90,                                           /* add eax,[esi]; nop */
        0xbb, 0x01, 0x00, 0x00, 0x00, 0xb9, 0x02, 0x00, 0x00, 0x00, /* mov ebx,1; mov ecx,2 */
        0xba, 0x03, 0x00, 0x00, 0x00, 0xbd, 0x04, 0x00, 0x00, 0x00, /* mov edx,3; mov ebp,4 */
        0xbf, 0x05, 0x00, 0x00, 0x00, 0xbe, 0x06, 0x00, 0x00, 0x00, /* mov edi,5; mov esi,6 */
        0x66, 0xbb, 0x05, 0x00};                                    /* mov bx,5 */
    p0 = stats(&f)->prefix_cycles;
    g_assert_cmpuint(measure(&f, shadow4, sizeof shadow4, rd), ==, 7);
    g_assert_cmpuint(stats(&f)->prefix_cycles - p0, >=, 1);
    fx_free(&f);
}

/* ----------------------------------------------------------- branches */

static void test_branches(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* CMP eax,0 / JE +1 / NOP: the pair CMP+JE (flags exempt [MA 4.1 rule 5]). */
    static const uint8_t code[] = {0x3d, 0x00, 0x00, 0x00, 0x00, 0x74, 0x01, 0x90};
    static const uint8_t hlt = 0xf4;
    load(&f, CODE, code, sizeof code);
    load(&f, CODE + sizeof code, &hlt, 1);
    run(&f, CODE, (regs){.eax = 1}); /* warm-up, not taken: no BTB entry */
    /* Not taken, not in the BTB (predicted not taken): pair 1 + NOP 1 -> 2. */
    g_assert_cmpuint(run(&f, CODE, (regs){.eax = 1}), ==, 2);
    /* Taken, not in the BTB: mispredicted in V, 4 [MA] -> 1 + 4 = 5. */
    uint64_t m0 = stats(&f)->mispredicts;
    g_assert_cmpuint(run(&f, CODE, (regs){.eax = 0}), ==, 5);
    g_assert_cmpuint(stats(&f)->mispredicts - m0, ==, 1);
    /* Taken again: allocated in state 3, predicted -> 1. */
    g_assert_cmpuint(run(&f, CODE, (regs){.eax = 0}), ==, 1);
    /* Not taken while predicted taken: 1 + 4 + NOP 1 -> 6. */
    g_assert_cmpuint(run(&f, CODE, (regs){.eax = 1}), ==, 6);
    fx_free(&f);
}

static void test_loop_predicted(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* MOV ecx,10 / L: DEC ecx / JNZ L.  MOV and DEC do not pair (ECX RAW);
     * DEC+JNZ pair, 1 clock per iteration while JNZ is predicted taken
     * (the warm-up leaves its entry in state 2); the exit is mispredicted
     * in V (4) [MA] -> 1 + 10 + 4 = 15. */
    static const uint8_t loop[] = {0xb9, 0x0a, 0x00, 0x00, 0x00, 0x49, 0x75, 0xfd};
    g_assert_cmpuint(measure(&f, loop, sizeof loop, (regs){0}), ==, 15);
    fx_free(&f);
}

#define STRETCH_STOPS 48
typedef struct {
    uint64_t clocks;
    after_run end, stopped[STRETCH_STOPS];
    fired timed[STRETCH_STOPS];
} stretch_seen;

/* The stretch test's program under one fx: measured warm, then stopped
 * after 1..STRETCH_STOPS instructions by the step limit, then run with a
 * timer due 1..STRETCH_STOPS clocks after its start. */
/* From CODE with the stretch loop's registers (its HLT after it). */
static void stretch_start(fx *f, regs r)
{
    f->m->stop_requested = 0;
    nm_cpu_enter_flat32(f->c, CODE, STACK);
    f->c->cr0 &= ~(NM_CR0_CD | NM_CR0_NW);
    nm_cpu_set_reg(f->c, NM_EBX, r.ebx);
    nm_cpu_set_reg(f->c, NM_ECX, r.ecx);
}

static void stretch_runs(fx *f, stretch_seen *out)
{
    const regs r = {.ebx = 2463534242u, .ecx = 300};
    out->clocks = measure(f, stretch_loop, sizeof stretch_loop, r);
    out->end = after_of(f->c);
    for (unsigned k = 0; k < STRETCH_STOPS; k++) {
        stretch_start(f, r);
        g_assert_cmpuint(nm_cpu_run(f->c, k + 1), ==, k + 1);
        out->stopped[k] = after_of(f->c);
    }
    for (unsigned k = 0; k < STRETCH_STOPS; k++) {
        nm_timer t;
        out->timed[k] = (fired){.c = f->c};
        nm_timer_init(&t, on_fire, &out->timed[k], "test");
        stretch_start(f, r);
        nm_timer_at_cycle(&f->m->clock, &t, f->m->clock.cycles + k + 1);
        while (!f->m->stop_requested) {
            nm_cpu_run(f->c, 10000000);
            nm_clock_run_due(&f->m->clock);
        }
        g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
        g_assert_false(nm_timer_pending(&t));
        out->timed[k].c = NULL;
    }
}

/* The stretch memo runs a straight line of register-only instructions at
 * once and applies their issue from the memo (pentium.c, p5_stretch): a
 * loop of them with pairs, dependencies, shifts, LEA, IMUL, 0F and 66
 * prefixes and SETcc, broken by a store, costs the same clocks and
 * counters with it as without it, leaves the same registers, and stops at
 * the same instruction and clock for a step limit or a timer due inside a
 * stretch; most of its instructions ran in stretches. */
static void test_stretch_memo(void)
{
    fx off, on;
    static stretch_seen seen_off, seen_on;
    fx_init(&off, "pentium-100");
    nm_pentium_set_issue_memo(off.st, false);
    stretch_runs(&off, &seen_off);
    g_assert_cmpuint(nm_pentium_stretch_insns(off.st), ==, 0);
    fx_init(&on, "pentium-100");
    stretch_runs(&on, &seen_on);
    g_assert_cmpuint(seen_on.clocks, ==, seen_off.clocks);
    g_assert_cmpint(memcmp(&seen_on, &seen_off, sizeof seen_on), ==, 0);
    g_assert_cmpint(memcmp(stats(&on), stats(&off), sizeof(nm_p5_stats)), ==, 0);
    /* two runs of 300 x 18 instructions, 15 of them in the two stretches */
    g_assert_cmpuint(nm_pentium_stretch_insns(on.st), >, 300 * 15);
    fx_free(&on);
    fx_free(&off);
}

/* A stretch is made from the decoded instructions it covers: code
 * written over two of them (SHL EAX,13 by IMUL EAX,EAX,13, 10 clocks and
 * not pairable, and in a stretch's middle MOV EDX,EBX by SHL EDX,1, U
 * only), by a store of the guest's or by DMA, is costed as itself
 * afterwards, as without the memo. */
static void test_stretch_recode(void)
{
    static const uint8_t imul[] = {0x6b, 0xc0, 0x0d}, shl1[] = {0xd1, 0xe2};
    const regs r = {.ebx = 2463534242u, .ecx = 100};
    for (int dma = 0; dma < 2; dma++) {
        uint64_t clocks[2][2];
        for (int on = 0; on < 2; on++) {
            fx f;
            fx_init(&f, "pentium-100");
            if (!on) nm_pentium_set_issue_memo(f.st, false);
            clocks[on][0] = measure(&f, stretch_recode_loop, sizeof stretch_recode_loop, r);
            if (dma) {
                load(&f, CODE + 2, imul, sizeof imul);
                load(&f, CODE + 7, shl1, sizeof shl1);
            } else {
                /* mov dword [CODE + 2], 31 0d c0 6b (the XOR's first byte
                 * unchanged) / mov word [CODE + 7], e2 d1 / hlt, run from
                 * CODE + 0x300 */
                static const uint8_t patch[] = {0xc7, 0x05, 0x02, 0x00, 0x10, 0x00, 0x6b,
                                                0xc0, 0x0d, 0x31, 0x66, 0xc7, 0x05, 0x07,
                                                0x00, 0x10, 0x00, 0xd1, 0xe2, 0xf4};
                _Static_assert(CODE == 0x100000u, "patch");
                load(&f, CODE + 0x300, patch, sizeof patch);
                run(&f, CODE + 0x300, (regs){0});
            }
            clocks[on][1] = run(&f, CODE, r);
            if (on) g_assert_cmpuint(nm_pentium_stretch_insns(f.st), >, 100 * 6);
            fx_free(&f);
        }
        g_assert_cmpuint(clocks[1][0], ==, clocks[0][0]);
        g_assert_cmpuint(clocks[1][1], ==, clocks[0][1]);
        g_assert_cmpuint(clocks[1][1], >, clocks[1][0] + 100 * 7); /* IMUL 9, not pairable */
    }
}

/* The issue memo replays an instruction's issue from a state it has seen
 * (pentium.c, p5_memo): a loop with pairs, a dependency, AGI, a 0F and an
 * operand-size prefix, PUSH/POP, loads and stores that fill the write
 * buffers now and then costs the same clocks and counters with it as
 * without it, and the memo does most of the loop's issues. */
static void test_issue_memo(void)
{
    static const uint8_t loop[] = {
        0x8b, 0x06,             /* L: mov eax,[esi] */
        0x01, 0xc3,             /* add ebx,eax */
        0x89, 0x1f,             /* mov [edi],ebx (DST2: never cached) */
        0x89, 0x47, 0x04,       /* mov [edi+4],eax */
        0x0f, 0xb6, 0x56, 0x01, /* movzx edx,byte [esi+1] */
        0x8d, 0x76, 0x04,       /* lea esi,[esi+4] */
        0x83, 0xc7, 0x08,       /* add edi,8 */
        0x52,                   /* push edx */
        0x5a,                   /* pop edx */
        0x66, 0x01, 0xd3,       /* add bx,dx */
        0x49,                   /* dec ecx */
        0x75, 0xe5,             /* jnz L */
    };
    const regs r = {.ecx = 500, .esi = SRC, .edi = DST2};
    fx off, on;
    fx_init(&off, "pentium-100");
    nm_pentium_set_issue_memo(off.st, false);
    uint64_t clocks_off = measure(&off, loop, sizeof loop, r);
    g_assert_cmpuint(nm_pentium_issue_memo_hits(off.st), ==, 0);
    fx_init(&on, "pentium-100");
    uint64_t clocks_on = measure(&on, loop, sizeof loop, r);
    g_assert_cmpuint(clocks_on, ==, clocks_off);
    g_assert_cmpint(memcmp(stats(&on), stats(&off), sizeof(nm_p5_stats)), ==, 0);
    g_assert_cmpuint(stats(&on)->wbuf_stalls, >, 0);
    /* two runs of 500 x 12 instructions */
    g_assert_cmpuint(nm_pentium_issue_memo_hits(on.st), >, 500 * 12);
    fx_free(&on);
    fx_free(&off);
}

/* ---------------------------------------------------- INT/IRET, IN/OUT */

static void put_desc(uint8_t *p, uint32_t lo, uint32_t hi)
{
    memcpy(p, &lo, 4);
    memcpy(p + 4, &hi, 4);
}

static void test_int_iret(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* GDT: null, flat code 0x08, flat data 0x10; IDT vector 0x40: a 32-bit
     * interrupt gate to an IRET. */
    put_desc(f.ram + GDT, 0, 0);
    put_desc(f.ram + GDT + 8, 0x0000ffff, 0x00cf9a00);
    put_desc(f.ram + GDT + 16, 0x0000ffff, 0x00cf9200);
    uint32_t handler = CODE + 0x40;
    put_desc(f.ram + IDT + 0x40 * 8, (0x08u << 16) | (handler & 0xffff),
             (handler & 0xffff0000u) | 0x8e00);
    f.ram[handler] = 0xcf; /* iret */
    f.c->gdtr = (nm_dtr){GDT, 23};
    f.c->idtr = (nm_dtr){IDT, 0x40 * 8 + 7};
    /* INT n, protected mode, same privilege: 31; IRET same privilege: 10
     * [PDM] -> 41 (stack, IDT and GDT lines cached by the warm-up). */
    static const uint8_t code[] = {0xcd, 0x40};
    g_assert_cmpuint(measure(&f, code, sizeof code, (regs){0}), ==, 41);
    fx_free(&f);
}

/* Exceptions go through an interrupt gate like INT n ("INT n, protected
 * mode, same privilege 31" [PDM]; the tables give no separate exception
 * figure), charged from the interrupt hook; the faulting instruction does
 * not complete and costs the one clock of the run loop's fault delivery
 * (cpu/cpu.c).  The handlers step over the 2-byte faulting instruction
 * with ADD dword [esp],2 (3, UV) and return with IRETD (10); #GP pops its
 * error code first with ADD esp,4 (1; not paired, the next instruction
 * reads ESP, and an explicit ESP write followed by an address using ESP is
 * an AGI stall, +1 [BB] ch. 21). */
static uint64_t fault_clocks(uint8_t vector, const uint8_t *insn, bool error_code, uint32_t eax,
                             bool em)
{
    fx f;
    fx_init(&f, "pentium-60");
    put_desc(f.ram + GDT, 0, 0);
    put_desc(f.ram + GDT + 8, 0x0000ffff, 0x00cf9a00);
    put_desc(f.ram + GDT + 16, 0x0000ffff, 0x00cf9200);
    uint32_t handler = CODE + 0x40;
    put_desc(f.ram + IDT + vector * 8u, (0x08u << 16) | (handler & 0xffff),
             (handler & 0xffff0000u) | 0x8e00);
    static const uint8_t pop_err[] = {0x83, 0xc4, 0x04};
    static const uint8_t skip[] = {0x83, 0x04, 0x24, 0x02, 0xcf};
    uint32_t at = handler;
    if (error_code) {
        load(&f, at, pop_err, sizeof pop_err);
        at += sizeof pop_err;
    }
    load(&f, at, skip, sizeof skip);
    f.c->gdtr = (nm_dtr){GDT, 23};
    f.c->idtr = (nm_dtr){IDT, 0x40 * 8 + 7};
    if (em) cpu_write_cr(f.c, 0, f.c->cr0 | NM_CR0_EM);
    uint64_t n = measure(&f, insn, 2, (regs){.eax = eax});
    fx_free(&f);
    return n;
}

static void test_fault_delivery(void)
{
    static const uint8_t ud2[] = {0x0f, 0x0b}, mov_ds[] = {0x8e, 0xd8}, fld1[] = {0xd9, 0xe8};
    g_assert_cmpuint(fault_clocks(6, ud2, false, 0, false), ==, 1 + 31 + 3 + 10); /* #UD */
    g_assert_cmpuint(fault_clocks(13, mov_ds, true, 0x40, false), ==,
                     1 + 31 + 1 + 1 + 3 + 10);                                    /* #GP */
    g_assert_cmpuint(fault_clocks(7, fld1, false, 0, true), ==, 1 + 31 + 3 + 10); /* #NM */
}

static void test_in_out(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* IN al,E0h / OUT E0h,al in protected mode with CPL <= IOPL: 4 + 9
     * [PDM]; the bus's wait states are charged apart -> 13. */
    static const uint8_t code[] = {0xe4, 0xe0, 0xe6, 0xe0};
    g_assert_cmpuint(measure(&f, code, sizeof code, (regs){0}), ==, 13);
    fx_free(&f);
}

/* A far CALL through a same-privilege 32-bit call gate, then a direct one
 * [PDM]: "CALL via call gate to the same privilege level 13", "CALL ptr16:32
 * direct 4", "RET far, same privilege 4"; NOP 1 (NP transfers: no pairs).
 * GDT: null, flat code 0x08 and data 0x10, a call gate 0x18 to 0x08:RETF;
 * the descriptor and stack lines are cached by the warm-up run.
 * -> 13 + 4 + 1 + 4 + 4 + 1 = 27. */
static void test_far_call_gate(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    uint32_t target = CODE + 0x40;
    put_desc(f.ram + GDT, 0, 0);
    put_desc(f.ram + GDT + 8, 0x0000ffff, 0x00cf9a00);
    put_desc(f.ram + GDT + 16, 0x0000ffff, 0x00cf9200);
    put_desc(f.ram + GDT + 24, (0x08u << 16) | (target & 0xffff), (target & 0xffff0000u) | 0x8c00);
    f.c->gdtr = (nm_dtr){GDT, 31};
    static const uint8_t retf = 0xcb;
    load(&f, target, &retf, 1);
    static const uint8_t code[] = {
        0x9a, 0x00, 0x00, 0x00, 0x00, 0x18, 0x00, /* call far 0x18:0 (the gate) */
        0x90,                                     /* nop */
        0x9a, 0x40, 0x00, 0x10, 0x00, 0x08, 0x00, /* call far 0x08:CODE+0x40 */
        0x90,                                     /* nop */
    };
    g_assert_cmpuint(measure(&f, code, sizeof code, (regs){0}), ==, 13 + 4 + 1 + 4 + 4 + 1);
    fx_free(&f);
}

/* Real mode, from RESET through the reset vector's JMP FAR 0000:7C00:
 * runs to the HLT once (warm caches), then from 0000:7C00 again, and
 * returns that run's core clocks without the HLT (as run()). */
static uint64_t run_real(fx *f, const uint8_t *code, size_t n)
{
    nm_mem_region *rom = nm_memmap_add_rom(f->m->mem, "rom", 0xffff0000u, 0x10000);
    static const uint8_t jmp[] = {0xea, 0x00, 0x7c, 0x00, 0x00};
    nm_mem_region_load(rom, 0xfff0, jmp, sizeof jmp);
    static const uint8_t hlt = 0xf4;
    load(f, 0x7c00, code, n);
    load(f, 0x7c00 + (uint32_t)n, &hlt, 1);
    nm_cpu_reset(f->c);
    f->c->cr0 &= ~(NM_CR0_CD | NM_CR0_NW);
    uint64_t c0 = 0, b0 = 0;
    for (int pass = 0; pass < 2; pass++) {
        f->m->stop_requested = 0;
        if (pass) nm_cpu_set_eip(f->c, 0x7c00);
        nm_cpu_set_reg(f->c, NM_ESP, 0x7000);
        nm_cpu_set_reg(f->c, NM_EDX, 0xe0);
        c0 = f->m->clock.cycles, b0 = f->m->clock.bus_wait_cycles;
        nm_cpu_run(f->c, 10000000);
        g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
        g_assert_false(f->c->pe);
    }
    return (f->m->clock.cycles - c0) - (f->m->clock.bus_wait_cycles - b0) - 1;
}

/* Real mode [PDM], the "real" column: IN AL,imm8 7, OUT imm8,AL 12, IN AL,DX
 * 7, OUT DX,AL 12 (NP; ISA wait states charged apart) -> 38; then INT n 16
 * and IRET 8 (IVT and stack lines cached by the first pass) -> 62. */
static void test_real_mode_io_int(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t io[] = {0xe4, 0xe0, 0xe6, 0xe0, 0xec, 0xee};
    g_assert_cmpuint(run_real(&f, io, sizeof io), ==, 7 + 12 + 7 + 12);
    fx_free(&f);

    fx_init(&f, "pentium-60");
    static const uint8_t io_int[] = {0xe4, 0xe0, 0xe6, 0xe0, 0xec, 0xee, 0xcd, 0x20};
    static const uint8_t iret = 0xcf;
    load(&f, 0x8000, &iret, 1);
    static const uint8_t ivt[4] = {0x00, 0x80, 0x00, 0x00}; /* IVT[0x20] = 0000:8000 */
    load(&f, 0x20 * 4, ivt, sizeof ivt);
    g_assert_cmpuint(run_real(&f, io_int, sizeof io_int), ==, 7 + 12 + 7 + 12 + 16 + 8);
    fx_free(&f);
}

/* ---------------------------------------------------------------- caches */

/* L: MOV eax,[esi] / ADD esi,32 (pair) ; DEC ecx / JNZ L (pair): 2 clocks
 * an iteration on hits, plus the exit misprediction (4, V). */
static const uint8_t stride_loop[] = {0x8b, 0x06, 0x83, 0xc6, 0x20, 0x49, 0x75, 0xf8};

static void test_cache_loops(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* 64 lines (2 KB) fit the 8 KB data cache: 64 x 2 + 4 = 132. */
    uint64_t h0 = stats(&f)->data_hits;
    g_assert_cmpuint(measure(&f, stride_loop, sizeof stride_loop, (regs){.ecx = 64, .esi = DATA}),
                     ==, 132);
    g_assert_cmpuint(stats(&f)->data_hits - h0, >=, 64);
    /* 2048 lines (64 KB) miss every time: each load waits for a 5-2-2-2
     * burst fill, 11 bus = 11 core clocks at 60 MHz -> 2048 x 13 + 4. */
    uint64_t m0 = stats(&f)->line_fills;
    g_assert_cmpuint(measure(&f, stride_loop, sizeof stride_loop, (regs){.ecx = 2048, .esi = DATA}),
                     ==, 2048 * 13 + 4);
    /* Fills: the warm-up's (less the 64 lines the first loop left) and the
     * measured run's. */
    g_assert_cmpuint(stats(&f)->line_fills - m0, ==, (2048 - 64) + 2048);
    fx_free(&f);

    /* Pentium-100 on a 66 MHz bus: the fill is ceil(11 x 1.5) = 17 core
     * clocks -> 2048 x 19 + 4. */
    fx_init(&f, "pentium-100");
    g_assert_cmpuint(measure(&f, stride_loop, sizeof stride_loop, (regs){.ecx = 2048, .esi = DATA}),
                     ==, 2048 * 19 + 4);
    fx_free(&f);
}

/* With the board's 256 KB L2 (pipeline-burst SRAM, 3-1-1-1 = 6 bus clocks
 * a line, AOpen board manuals, "PBSRAM: normally 3-1-1-1"): the 64 KB loop's
 * second run misses the 8 KB data cache but hits the L2: ceil(6 x 1.5) = 9
 * core clocks a fill on the pentium-100 -> 2048 x 11 + 4. */
static void test_l2(void)
{
    fx f;
    fx_l2_size = 256u << 10;
    fx_init(&f, "pentium-100");
    fx_l2_size = 0;
    /* DATA + 4 KB: the direct-mapped L2 would share DATA's first entry
     * with CODE's line (256 KB apart). */
    g_assert_cmpuint(
        measure(&f, stride_loop, sizeof stride_loop, (regs){.ecx = 2048, .esi = DATA + 0x1000}), ==,
        2048 * 11 + 4);
    fx_free(&f);
}

static void test_misaligned(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* MOV eax,[esi+1]: a dword across a dword boundary, +3 [MA] -> 4. */
    static const uint8_t code[] = {0x8b, 0x46, 0x01};
    g_assert_cmpuint(measure(&f, code, sizeof code, (regs){.esi = DATA}), ==, 4);
    g_assert_cmpuint(stats(&f)->misaligned, ==, 2);
    fx_free(&f);
}

/* A store miss across a qword boundary is two bus cycles (the 64-bit data
 * bus), one within a qword is one: MOV [EDI+6],EAX against MOV [EDI+4],EAX
 * to a line not cached, each followed by an OUT that waits for the write
 * buffers [DB].  The first costs its +3 misaligned clocks [MA] and the
 * second bus write's 5 clocks more. */
static uint64_t stores_to_uncached(fx *f, const uint8_t *code, size_t n);
static void test_split_writes(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t split[] = {0x89, 0x47, 0x06};  /* mov [edi+6],eax */
    static const uint8_t within[] = {0x89, 0x47, 0x04}; /* mov [edi+4],eax */
    uint64_t w0 = stats(&f)->wbuf_writes;
    uint64_t a = stores_to_uncached(&f, split, sizeof split);
    uint64_t w1 = stats(&f)->wbuf_writes;
    uint64_t b = stores_to_uncached(&f, within, sizeof within);
    g_assert_cmpuint(w1 - w0, ==, 2 * 2); /* two runs (warm, measured), two writes each */
    g_assert_cmpuint(stats(&f)->wbuf_writes - w1, ==, 2);
    g_assert_cmpuint(stats(&f)->split_writes, ==, 2);
    g_assert_cmpuint(a - b, ==, 3 + 5);
    fx_free(&f);
}

static void test_rep_movsd(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* Warm-up: REP LODSD over SRC, then over DST, so both 1 KB blocks sit
     * in the data cache (writes alone would not allocate). */
    static const uint8_t warm[] = {0xf3, 0xad,                   /* rep lodsd */
                                   0x89, 0xfe,                   /* mov esi,edi */
                                   0xb9, 0x00, 0x01, 0x00, 0x00, /* mov ecx,256 */
                                   0xf3, 0xad, 0xf4};            /* rep lodsd; hlt */
    load(&f, CODE + 0x200, warm, sizeof warm);
    regs r = {.ecx = 256, .esi = SRC, .edi = DST};
    run(&f, CODE + 0x200, r);
    /* REP MOVSD, 256 dwords, all hits: 13 + n [IT] and the REP prefix's
     * decode clock [MA 4.4] -> 13 + 256 + 1 = 270. */
    static const uint8_t movsd[] = {0xf3, 0xa5};
    g_assert_cmpuint(measure(&f, movsd, sizeof movsd, r), ==, 270);
    /* CLD (2 clocks [IT]) first hides the prefix clock [MA 4.4: CLD / REP
     * MOVSD] -> 2 + 269 = 271. */
    static const uint8_t cld_movsd[] = {0xfc, 0xf3, 0xa5};
    g_assert_cmpuint(measure(&f, cld_movsd, sizeof cld_movsd, r), ==, 271);
    /* To a destination not in the cache: every store goes through the two
     * write buffers, 5 bus clocks each.  Store k is issued at iteration k;
     * from the third on each waits for the oldest buffer: 3 clocks, then 4
     * per store (5 on the bus - 1 of execution) -> 13 + 256 + 1 + 3 +
     * 4 x 253 = 1285, about 5 clocks a dword. */
    regs r2 = {.ecx = 256, .esi = SRC, .edi = DST2};
    uint64_t w0 = stats(&f)->wbuf_stalls;
    static const uint8_t hlt = 0xf4;
    load(&f, CODE, movsd, sizeof movsd);
    load(&f, CODE + sizeof movsd, &hlt, 1);
    g_assert_cmpuint(run(&f, CODE, r2), ==, 1285);
    g_assert_cmpuint(stats(&f)->wbuf_stalls - w0, ==, 254);
    fx_free(&f);
}

/* A REP STOSD and an unrolled loop of MOVs storing the same 32 dwords to
 * lines the data cache does not hold (no write allocation) are paced by the
 * same bus: each store goes through the two write buffers, 5 bus clocks
 * each (pentium-60: 5 core clocks).  The OUT after them waits for the
 * buffers to drain [DB], then takes its 9 [PDM].  The MOVs (two a clock,
 * paired) put the first store on the bus at once: 32 x 5 + 9 = 169.  The
 * string's stores follow the REP prefix's decode clock [MA 4.4], one an
 * iteration, its start-up overlapping them: 1 + 32 x 5 + 9 = 170. */
static uint64_t stores_to_uncached(fx *f, const uint8_t *code, size_t n)
{
    uint8_t prog[160];
    static const uint8_t out[] = {0xe6, 0x80}; /* out 0x80,al */
    memcpy(prog, code, n);
    memcpy(prog + n, out, sizeof out);
    static const uint8_t hlt = 0xf4;
    load(f, CODE, prog, n + sizeof out);
    load(f, CODE + (uint32_t)(n + sizeof out), &hlt, 1);
    /* Warm the code (the stores go to DST2 + 0x400: never read). */
    run(f, CODE, (regs){.ecx = 32, .edi = DST2 + 0x400});
    return run(f, CODE, (regs){.ecx = 32, .edi = DST2 + 0x400});
}

static void test_rep_vs_unrolled_stores(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t rep[] = {0xf3, 0xab}; /* rep stosd */
    uint8_t unrolled[32 * 3];
    for (unsigned k = 0; k < 32; k++) {
        unrolled[3 * k] = 0x89; /* mov [edi+4k],eax */
        unrolled[3 * k + 1] = 0x47;
        unrolled[3 * k + 2] = (uint8_t)(4 * k);
    }
    uint64_t a = stores_to_uncached(&f, rep, sizeof rep);
    uint64_t w0 = stats(&f)->wbuf_writes;
    uint64_t b = stores_to_uncached(&f, unrolled, sizeof unrolled);
    g_test_message("rep stosd + out: %" G_GUINT64_FORMAT ", 32 movs + out: %" G_GUINT64_FORMAT, a,
                   b);
    g_assert_cmpuint(stats(&f)->wbuf_writes - w0, ==, 64); /* both runs: every store */
    g_assert_cmpuint(b, ==, 32 * 5 + 9);
    g_assert_cmpuint(a, ==, 1 + 32 * 5 + 9);
    fx_free(&f);
}

/* ------------------------------------------- rows checked against [NG] */

/* XCHG: 86/87 r,r 3, 90+r (XCHG eAX,r) 2 [NG "XCHG": reg,reg 3, acc,reg 2;
 * IT: (E)AX,r 2, r,r 3].  NP: no pairs. */
static void test_xchg(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t rr[] = {0x87, 0xd9}; /* xchg ecx,ebx */
    g_assert_cmpuint(measure(&f, rr, sizeof rr, (regs){0}), ==, 3);
    static const uint8_t acc[] = {0x93}; /* xchg eax,ebx */
    g_assert_cmpuint(measure(&f, acc, sizeof acc, (regs){0}), ==, 2);
    fx_free(&f);
}

/* CMPXCHG r,r 5, m,r 6 [PIR "CMPXCHG"], plus the 0F prefix clock [MA 4.4]
 * (the first instruction after HLT: nothing hides it). */
static void test_cmpxchg(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    regs r = {.esi = DATA};
    cache_line(&f, DATA);
    static const uint8_t rr[] = {0x0f, 0xb1, 0xd9}; /* cmpxchg ecx,ebx */
    g_assert_cmpuint(measure(&f, rr, sizeof rr, r), ==, 5 + 1);
    static const uint8_t mr[] = {0x0f, 0xb1, 0x1e}; /* cmpxchg [esi],ebx */
    g_assert_cmpuint(measure(&f, mr, sizeof mr, r), ==, 6 + 1);
    fx_free(&f);
}

/* SHLD m,r,imm 4, m,r,CL 5 [NG "SHLD", PIR] (Agner: 5 for both memory
 * forms), plus the 0F prefix clock [MA 4.4]. */
static void test_shld(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    regs r = {.ecx = 4, .esi = DATA};
    cache_line(&f, DATA);
    static const uint8_t mi[] = {0x0f, 0xa4, 0x06, 0x04}; /* shld [esi],eax,4 */
    g_assert_cmpuint(measure(&f, mi, sizeof mi, r), ==, 4 + 1);
    static const uint8_t mcl[] = {0x0f, 0xa5, 0x06}; /* shld [esi],eax,cl */
    g_assert_cmpuint(measure(&f, mcl, sizeof mcl, r), ==, 5 + 1);
    static const uint8_t ri[] = {0x0f, 0xa4, 0xc3, 0x04}; /* shld ebx,eax,4 */
    g_assert_cmpuint(measure(&f, ri, sizeof ri, r), ==, 4 + 1);
    fx_free(&f);
}

/* BTS m,r 13 [NG "BTC" (BTS/BTR/BTC share the table), PIR "BTS"; Agner:
 * 14], plus the 0F prefix clock [MA 4.4].  EAX = 0: the bit is at [ESI]. */
static void test_bts(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    regs r = {.esi = DATA};
    cache_line(&f, DATA);
    static const uint8_t mr[] = {0x0f, 0xab, 0x06}; /* bts [esi],eax */
    g_assert_cmpuint(measure(&f, mr, sizeof mr, r), ==, 13 + 1);
    fx_free(&f);
}

/* PUSHF 3 and POPF 4 in protected mode [PIR "PUSHF": 3; NG "POPF": 4]
 * (Agner: 3-5 / 4-6).  The stack line is read (so cached) by the warm-up
 * run's POPF -> 3 + 4 = 7. */
static void test_pushf_popf(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t code[] = {0x9c, 0x9d}; /* pushfd; popfd */
    g_assert_cmpuint(measure(&f, code, sizeof code, (regs){0}), ==, 3 + 4);
    fx_free(&f);

    /* Real mode: PUSHF 9 [PIR], POPF 6 [NG] -> 15. */
    fx_init(&f, "pentium-60");
    g_assert_cmpuint(run_real(&f, code, sizeof code), ==, 9 + 6);
    fx_free(&f);
}

/* LOOP 6 taken / 5 not, LOOPE and LOOPNE 8 / 7 [NG "LOOP": 5/6 and 7/8,
 * "no jump/jump" as its JCXZ page labels the same pair].  L: LOOP L with
 * ECX = 2 runs twice: taken, then not.  LOOP is NP, a group of its own, so
 * the two passes have different BTB keys [AF97 12.1.2]: the first the U
 * instruction before the loop's (the MOV, or the XOR of the XOR/MOV pair),
 * whose entry the warm-up's mispredicted pass made (state 3: predicted);
 * the second L itself, where the warm-up's falling-through pass (in the
 * shadow of the first's misprediction) made none: predicted to fall
 * through, as it does. */
static void test_loop_clocks(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* MOV ecx,2 (1) / L: LOOP L -> 1 + 6 + 5 */
    static const uint8_t loop[] = {0xb9, 0x02, 0x00, 0x00, 0x00, 0xe2, 0xfe};
    g_assert_cmpuint(measure(&f, loop, sizeof loop, (regs){0}), ==, 1 + 6 + 5);
    /* XOR eax,eax / MOV ecx,2 pair (1, ZF = 1) / L: LOOPE L -> 1 + 8 + 7 */
    static const uint8_t loope[] = {0x31, 0xc0, 0xb9, 0x02, 0x00, 0x00, 0x00, 0xe1, 0xfe};
    g_assert_cmpuint(measure(&f, loope, sizeof loope, (regs){0}), ==, 1 + 8 + 7);
    /* OR eax,1 / MOV ecx,2 pair (1, ZF = 0) / L: LOOPNE L -> 1 + 8 + 7 */
    static const uint8_t loopne[] = {0x83, 0xc8, 0x01, 0xb9, 0x02, 0x00, 0x00, 0x00, 0xe0, 0xfe};
    g_assert_cmpuint(measure(&f, loopne, sizeof loopne, (regs){0}), ==, 1 + 8 + 7);
    fx_free(&f);
}

/* Runs `warm` + HLT, then puts `code` + HLT at the same address (its
 * branch now goes elsewhere) and returns that run's clocks. */
static uint64_t retarget(fx *f, const uint8_t *warm, size_t wn, const uint8_t *code, size_t n)
{
    static const uint8_t hlt = 0xf4;
    load(f, CODE, warm, wn);
    load(f, CODE + (uint32_t)wn, &hlt, 1);
    run(f, CODE, (regs){0});
    load(f, CODE, code, n);
    load(f, CODE + (uint32_t)n, &hlt, 1);
    return run(f, CODE, (regs){0});
}

/* A mispredicted direct JMP or CALL takes 3 clocks in either pipe [BB
 * ch. 21: "mispredicted calls and unconditional jumps take 3 cycles in
 * either pipe"] (a Jcc 4 in U, 5 in V: test_branches).  The BTB holds the
 * old target (the next instruction); the new code jumps one byte further. */
static void test_uncond_mispredict(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    /* JMP in U: 3. */
    static const uint8_t j0[] = {0xeb, 0x00}, j1[] = {0xeb, 0x01, 0x90};
    uint64_t m0 = stats(&f)->mispredicts;
    g_assert_cmpuint(retarget(&f, j0, sizeof j0, j1, sizeof j1), ==, 3);
    g_assert_cmpuint(stats(&f)->mispredicts - m0, ==, 2); /* warm-up (not in the BTB) + this */
    /* NOP / JMP paired, the JMP in V: 1 + 2 = 3. */
    static const uint8_t v0[] = {0x90, 0xeb, 0x00}, v1[] = {0x90, 0xeb, 0x01, 0x90};
    g_assert_cmpuint(retarget(&f, v0, sizeof v0, v1, sizeof v1), ==, 3);
    /* CALL rel32 in U: 3 (the return address goes to a write buffer). */
    static const uint8_t c0[] = {0xe8, 0x00, 0x00, 0x00, 0x00};
    static const uint8_t c1[] = {0xe8, 0x01, 0x00, 0x00, 0x00, 0x90};
    g_assert_cmpuint(retarget(&f, c0, sizeof c0, c1, sizeof c1), ==, 3);
    fx_free(&f);
}

/* ----------------------------------------------------------------- BTB */

/* The BTB predicts issue groups: a branch's entry is keyed by the U
 * instruction of the group before its own, a group in the shadow of a
 * misprediction gets no prediction, a prediction that meets no transfer
 * costs 3 clocks, state 0 is no entry (pentium.c "BTB"; [AF97] Agner
 * Fog, "How to optimize for the Pentium processor", 1997, 12.1.1-12.1.3). */

/* The Linux 1.x/2.0 delay loop: MOV eax,N / L: DEC eax / JNS L / MOV
 * ebx,1.  DEC + JNS is one group that jumps to itself: its key is its own
 * U (L).  Warm: the first pass is predicted by the entry keyed by the MOV;
 * the second finds L in state 1 (the last run's fall-through and the MOV
 * after it, "predicted to jump" to L, left it there) and is mispredicted
 * in V (1 + 4), and every pass after it is in the shadow of the one before:
 * 5 clocks an iteration [AF97 12.1.3: "a loop that jumps to itself ... gets
 * a misprediction penalty on every iteration"], BogoMIPS = 0.40 x MHz
 * (BogoMips mini-HOWTO).  The exit falls through in the shadow (1), the
 * MOV after it pays the misapplied prediction (1 + 3): 1 + 1 + 5 (N - 1) +
 * 1 + 1 + 3 = 5 N + 2. */
static void test_btb_self_loop(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    for (uint32_t n = 100; n <= 200; n += 100) {
        uint8_t code[] = {0xb8, 0, 0, 0, 0, 0x48, 0x79, 0xfd, 0xbb, 0x01, 0x00, 0x00, 0x00};
        memcpy(code + 1, &n, 4);
        uint64_t m0 = stats(&f)->mispredicts, a0 = stats(&f)->btb_misapplied;
        uint64_t clocks = measure(&f, code, sizeof code, (regs){0});
        g_assert_cmpuint(clocks, ==, 5 * n + 2);
        /* (the warm-up run's and the measured one's) */
        g_assert_cmpuint(stats(&f)->mispredicts - m0, >=, n - 1);
        g_assert_cmpuint(stats(&f)->btb_misapplied - a0, ==, 2);
    }
    fx_free(&f);
}

/* The form Agner recommends, two groups a pass (ADD esi,1 + ADD edi,1;
 * DEC ecx + JNZ L): JNZ's key is L, whose group never jumps: predicted on
 * every pass, 2 clocks an iteration; its exit mispredicted in V. */
static void test_btb_two_group_loop(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    uint64_t clocks[2];
    for (unsigned k = 0; k < 2; k++) {
        const uint32_t n = 100 + 100 * k;
        uint8_t code[] = {0xb9, 0,    0,    0,    0,    0xfc, 0x83, 0xc6, 0x01, 0x83,
                          0xc7, 0x01, 0x49, 0x75, 0xf7, 0xbb, 0x01, 0x00, 0x00, 0x00};
        memcpy(code + 1, &n, 4);
        uint64_t m0 = stats(&f)->mispredicts;
        clocks[k] = measure(&f, code, sizeof code, (regs){0});
        /* each run's exit, and the first pass of the first run */
        g_assert_cmpuint(stats(&f)->mispredicts - m0, ==, k ? 2 : 3);
    }
    g_assert_cmpuint(clocks[1] - clocks[0], ==, 2 * 100);
    fx_free(&f);
}

/* The key is the U instruction of the group before the branch's, not the
 * branch [AF97 12.1.2]: CLD / CLD / JMP +0 reached from its start has its
 * entry under the second CLD; the same JMP entered directly (after the
 * last run's HLT) has none there: mispredicted once, then predicted under
 * its own new key, and the old entry still serves the first path. */
static void test_btb_lookahead_key(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t code[] = {0xfc, 0xfc, 0xeb, 0x00, 0xf4};
    load(&f, CODE, code, sizeof code);
    run(&f, CODE, (regs){0});
    uint64_t m0 = stats(&f)->mispredicts;
    run(&f, CODE, (regs){0});
    g_assert_cmpuint(stats(&f)->mispredicts, ==, m0);
    run(&f, CODE + 2, (regs){0});
    g_assert_cmpuint(stats(&f)->mispredicts, ==, m0 + 1);
    run(&f, CODE + 2, (regs){0});
    run(&f, CODE, (regs){0});
    g_assert_cmpuint(stats(&f)->mispredicts, ==, m0 + 1);
    fx_free(&f);
}

/* A prediction applied to a group without a transfer [AF97 12.1.3]: CMP
 * eax,ebx / JB L1 / JMP L2 / L1: MOV ecx,ebx / INC edx / JMP +0 / L2: HLT.
 * JMP L2's entry is keyed by the CMP (its group's predecessor); once JB
 * is taken and predicted, the MOV/INC group at L1 (also after CMP/JB)
 * meets it and is "predicted to jump" to L2: 3 clocks, and the entry goes
 * down a state; the JMP +0 after it is in that flush's shadow (predicted
 * not to jump: 1 + 2).  In the shadow of JB's own misprediction the
 * MOV/INC group costs nothing but the entry goes down too. */
static void test_btb_misapplied(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t code[] = {0x39, 0xd8, 0x72, 0x02, 0xeb, 0x05,
                                   0x89, 0xd9, 0x42, 0xeb, 0x00, 0xf4};
    load(&f, CODE, code, sizeof code);
    const regs ge = {.eax = 1, .ebx = 0}, lt = {.eax = 0, .ebx = 1};
    run(&f, CODE, ge); /* JMP L2 mispredicted: its entry, state 3 */
    run(&f, CODE, ge); /* predicted */
    uint64_t a0 = stats(&f)->btb_misapplied, c0 = stats(&f)->btb_misapplied_cycles;
    /* JB mispredicted; L1's group in its shadow: 3 -> 2, no clocks; JMP +0
     * mispredicted (no entry yet) */
    run(&f, CODE, lt);
    g_assert_cmpuint(stats(&f)->btb_misapplied, ==, a0 + 1);
    g_assert_cmpuint(stats(&f)->btb_misapplied_cycles, ==, c0);
    /* JB predicted; CMP/JB 1 + MOV/INC 1 + 3 + JMP 1 + 2 (the shadow); the
     * entry 2 -> 1 */
    g_assert_cmpuint(run(&f, CODE, lt), ==, 8);
    g_assert_cmpuint(stats(&f)->btb_misapplied_cycles, ==, c0 + 3);
    /* state 1 predicts nothing; the JMP predicted: 3 */
    g_assert_cmpuint(run(&f, CODE, lt), ==, 3);
    g_assert_cmpuint(stats(&f)->btb_misapplied, ==, a0 + 2);
    fx_free(&f);
}

/* State 0 is no entry: a branch that falls through three times from state
 * 3 leaves the BTB, and taken again gets a new entry in state 3 (one
 * misprediction), where a counter going 0 -> 1 -> 2 would take two
 * [AF97 12.1.1].  CMP eax,0 / JE +1 / NOP: taken with eax = 0. */
static void test_btb_free_at_zero(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t code[] = {0x3d, 0x00, 0x00, 0x00, 0x00, 0x74, 0x01, 0x90, 0xf4};
    load(&f, CODE, code, sizeof code);
    /* (the first run: after it every run's key is the HLT) */
    static const uint32_t eax[] = {1, 0, 1, 1, 1, 0, 0};
    static const unsigned wrong[] = {0, 1, 1, 1, 0, 1, 0};
    for (unsigned k = 0; k < G_N_ELEMENTS(eax); k++) {
        uint64_t m0 = stats(&f)->mispredicts;
        run(&f, CODE, (regs){.eax = eax[k]});
        g_assert_cmpuint(stats(&f)->mispredicts - m0, ==, wrong[k]);
    }
    fx_free(&f);
}

/* A transfer alone in U (after CLD, which opens no V slot): its counter
 * goes up when it is predicted and taken (2 -> 3), so that two falls
 * through are needed before it predicts none.  TEST eax,eax / CLD / JZ +1
 * / NOP. */
static void test_btb_u_counter(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t code[] = {0x85, 0xc0, 0xfc, 0x74, 0x01, 0x90, 0xf4};
    load(&f, CODE, code, sizeof code);
    static const uint32_t eax[] = {1, 0, 1, 0, 1, 1, 1};
    static const unsigned wrong[] = {0, 1, 1, 0, 1, 1, 0};
    for (unsigned k = 0; k < G_N_ELEMENTS(eax); k++) {
        uint64_t m0 = stats(&f)->mispredicts;
        run(&f, CODE, (regs){.eax = eax[k]});
        g_assert_cmpuint(stats(&f)->mispredicts - m0, ==, wrong[k]);
    }
    fx_free(&f);
}

/* Random programs of register instructions, forward Jccs on the values,
 * short self loops and CALL/RET in a counted loop: the same clocks and
 * counters with the issue and stretch memos as without them (the BTB's
 * part is worked out in both: btb_after, p5_ahead), and their mispredicted,
 * misapplied and shadowed groups all seen. */
static uint32_t rnd_next(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static size_t random_program(uint8_t *p, uint32_t seed)
{
    static const uint8_t regs8[] = {0, 2, 3, 5, 6, 7}; /* eax edx ebx ebp esi edi */
    uint32_t x = seed;
    size_t n = 0, calls[12], ncalls = 0;
    p[n++] = 0xb9; /* mov ecx,200 */
    uint32_t iters = 200;
    memcpy(p + n, &iters, 4);
    n += 4;
    const size_t top = n;
    for (unsigned b = 0; b < 12; b++) {
        unsigned ops = 1 + rnd_next(&x) % 4;
        for (unsigned k = 0; k < ops; k++) {
            uint8_t d = regs8[rnd_next(&x) % 6], s = regs8[rnd_next(&x) % 6];
            switch (rnd_next(&x) % 7) {
            case 0: p[n++] = 0x01, p[n++] = (uint8_t)(0xc0 | s << 3 | d); break; /* add d,s */
            case 1: p[n++] = 0x31, p[n++] = (uint8_t)(0xc0 | s << 3 | d); break; /* xor d,s */
            case 2: p[n++] = 0x89, p[n++] = (uint8_t)(0xc0 | s << 3 | d); break; /* mov d,s */
            case 3:                                                              /* add d,imm8 */
                p[n++] = 0x83, p[n++] = (uint8_t)(0xc0 | d), p[n++] = (uint8_t)rnd_next(&x);
                break;
            case 4: /* shl / shr d,imm */
                p[n++] = 0xc1, p[n++] = (uint8_t)((rnd_next(&x) & 1 ? 0xe0 : 0xe8) | d);
                p[n++] = (uint8_t)(1 + rnd_next(&x) % 7);
                break;
            case 5: p[n++] = (uint8_t)(0x40 | d); break; /* inc d */
            default:                                     /* lea d,[s+disp8] */
                p[n++] = 0x8d, p[n++] = (uint8_t)(0x40 | d << 3 | s),
                p[n++] = (uint8_t)rnd_next(&x);
                break;
            }
        }
        switch (rnd_next(&x) % 4) {
        case 0:
        case 1: { /* test r,bit / jz over one or two xor instructions */
            uint8_t r = regs8[rnd_next(&x) % 6];
            uint32_t bit = 1u << (rnd_next(&x) % 8);
            p[n++] = 0xf7, p[n++] = (uint8_t)(0xc0 | r);
            memcpy(p + n, &bit, 4);
            n += 4;
            unsigned skip = 1 + rnd_next(&x) % 2;
            p[n++] = 0x74, p[n++] = (uint8_t)(2 * skip);
            for (unsigned k = 0; k < skip; k++)
                p[n++] = 0x31, p[n++] = (uint8_t)(0xc0 | regs8[rnd_next(&x) % 6] << 3 | 0);
            break;
        }
        case 2: /* mov ebp,k / L: dec ebp / jnz L (a group that jumps to itself) */
            p[n++] = 0xbd;
            uint32_t k = 1 + rnd_next(&x) % 5;
            memcpy(p + n, &k, 4);
            n += 4;
            p[n++] = 0x4d, p[n++] = 0x75, p[n++] = 0xfd;
            break;
        default: /* call f (f: add eax,ebx / ret, after the loop) */
            calls[ncalls++] = n;
            p[n++] = 0xe8;
            n += 4; /* (its target below) */
            break;
        }
    }
    p[n++] = 0x49; /* dec ecx */
    int32_t back = (int32_t)top - (int32_t)(n + 6);
    p[n++] = 0x0f, p[n++] = 0x85; /* jnz near top */
    memcpy(p + n, &back, 4);
    n += 4;
    p[n++] = 0xf4; /* hlt */
    const size_t f = n;
    p[n++] = 0x01, p[n++] = 0xd8, p[n++] = 0xc3; /* f: add eax,ebx / ret */
    for (size_t k = 0; k < ncalls; k++) {
        int32_t rel = (int32_t)f - (int32_t)(calls[k] + 5);
        memcpy(p + calls[k] + 1, &rel, 4);
    }
    return n;
}

static void test_btb_random_memo(void)
{
    uint64_t misapplied = 0, shadowed = 0, mispredicts = 0, stretched = 0;
    for (uint32_t seed = 1; seed <= 24; seed++) {
        uint8_t prog[1024];
        size_t n = random_program(prog, seed * 2654435761u);
        g_assert_cmpuint(n, <=, sizeof prog);
        const regs r = {.eax = seed, .ebx = 0x9e3779b9u * seed, .esi = 7 * seed, .edi = 1};
        fx off, on;
        fx_init(&off, "pentium-100");
        nm_pentium_set_issue_memo(off.st, false);
        load(&off, CODE, prog, n);
        uint64_t c_off = run(&off, CODE, r);
        c_off += run(&off, CODE, r);
        fx_init(&on, "pentium-100");
        load(&on, CODE, prog, n);
        uint64_t c_on = run(&on, CODE, r);
        c_on += run(&on, CODE, r);
        g_assert_cmpuint(c_on, ==, c_off);
        g_assert_cmpint(memcmp(stats(&on), stats(&off), sizeof(nm_p5_stats)), ==, 0);
        misapplied += stats(&on)->btb_misapplied;
        shadowed += stats(&on)->btb_shadowed;
        mispredicts += stats(&on)->mispredicts;
        stretched += nm_pentium_stretch_insns(on.st);
        fx_free(&on);
        fx_free(&off);
    }
    g_assert_cmpuint(misapplied, >, 0);
    g_assert_cmpuint(shadowed, >, 0);
    g_assert_cmpuint(mispredicts, >, 0);
    g_assert_cmpuint(stretched, >, 0);
}

/* What flushes the pipeline leaves the next group without a prediction
 * (pentium.c "BTB": the consecutive-branches rule of [AF97 12.1.3]
 * carried over to the other flushes, an inference): a JMP +0 right after
 * an IRET is mispredicted however often it ran (INT 31 + IRET 10 + JMP
 * 1 + 2 = 44), and so is one at the start of an exception handler (UD2,
 * the handler JMP +0 / ADD dword [esp],2 / IRETD). */
static void test_btb_flushes(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    put_desc(f.ram + GDT, 0, 0);
    put_desc(f.ram + GDT + 8, 0x0000ffff, 0x00cf9a00);
    put_desc(f.ram + GDT + 16, 0x0000ffff, 0x00cf9200);
    const uint32_t h40 = CODE + 0x40, h6 = CODE + 0x80;
    put_desc(f.ram + IDT + 0x40 * 8, (0x08u << 16) | (h40 & 0xffff), (h40 & 0xffff0000u) | 0x8e00);
    put_desc(f.ram + IDT + 6 * 8, (0x08u << 16) | (h6 & 0xffff), (h6 & 0xffff0000u) | 0x8e00);
    f.ram[h40] = 0xcf; /* iret */
    static const uint8_t ud_handler[] = {0xeb, 0x00, 0x83, 0x04, 0x24, 0x02, 0xcf};
    load(&f, h6, ud_handler, sizeof ud_handler);
    f.c->gdtr = (nm_dtr){GDT, 23};
    f.c->idtr = (nm_dtr){IDT, 0x40 * 8 + 7};
    static const uint8_t int_jmp[] = {0xcd, 0x40, 0xeb, 0x00};
    g_assert_cmpuint(measure(&f, int_jmp, sizeof int_jmp, (regs){0}), ==, 44);
    uint64_t m0 = stats(&f)->mispredicts;
    g_assert_cmpuint(measure(&f, int_jmp, sizeof int_jmp, (regs){0}), ==, 44);
    g_assert_cmpuint(stats(&f)->mispredicts - m0, ==, 2); /* (the warm-up's and this run's) */
    static const uint8_t ud2[] = {0x0f, 0x0b};
    measure(&f, ud2, sizeof ud2, (regs){0});
    m0 = stats(&f)->mispredicts;
    measure(&f, ud2, sizeof ud2, (regs){0});
    g_assert_cmpuint(stats(&f)->mispredicts - m0, ==, 2);
    fx_free(&f);
}

/* MUL and IMUL [IT] ([AF97] ch. 20): r8/r16/m8/m16 11, "all other
 * versions 9" (32-bit MUL/IMUL, IMUL r,r/m and r,r/m,imm), not pairable;
 * the 0F of two-operand IMUL and the 66 of the 16-bit forms 1 each (first
 * after a HLT: not hidden). */
static void test_mul_clocks(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t mul32[] = {0xf7, 0xe3}, mul16[] = {0x66, 0xf7, 0xe3},
                         mul8[] = {0xf6, 0xe3}, imul2[] = {0x0f, 0xaf, 0xc3},
                         imul3[] = {0x6b, 0xc3, 0x05}, imul2w[] = {0x66, 0x0f, 0xaf, 0xc3};
    g_assert_cmpuint(measure(&f, mul32, sizeof mul32, (regs){0}), ==, 9);
    g_assert_cmpuint(measure(&f, mul16, sizeof mul16, (regs){0}), ==, 11 + 1);
    g_assert_cmpuint(measure(&f, mul8, sizeof mul8, (regs){0}), ==, 11);
    g_assert_cmpuint(measure(&f, imul2, sizeof imul2, (regs){0}), ==, 9 + 1);
    g_assert_cmpuint(measure(&f, imul3, sizeof imul3, (regs){0}), ==, 9);
    g_assert_cmpuint(measure(&f, imul2w, sizeof imul2w, (regs){0}), ==, 11 + 2);
    fx_free(&f);
}

/* ---------------------------------------------------------- breakdown */

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

/* The report's clocks_* add up (less clocks_pairing_saved) to the
 * model's clocks, on a cold run that exercises most causes. */
static void test_breakdown_sums(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    static const uint8_t code[] = {
        0x66, 0xbb, 0x02, 0x00,             /* mov bx,2  prefix (first: not hidden) */
        0x83, 0xc0, 0x01, 0x83, 0xc3, 0x01, /* add eax,1; add ebx,1    pair */
        0x83, 0xc6, 0x04, 0x8b, 0x06,       /* add esi,4; mov eax,[esi]  AGI, data fill */
        0x8b, 0x46, 0x01,                   /* mov eax,[esi+1]          misaligned */
        0x01, 0x06, 0x01, 0x5e, 0x08,       /* add [esi],eax; add [esi+8],ebx  RMW pair */
        0x89, 0x07, 0x89, 0x47, 0x20,       /* mov [edi],eax; mov [edi+32],eax */
        0x89, 0x47, 0x40,                   /* mov [edi+64],eax         write buffers full */
        0xe6, 0xe0,                         /* out e0h,al               I/O, drain */
        0x87, 0x0e,                         /* xchg [esi],ecx           locked */
        0xeb, 0x00,                         /* jmp $+2                  mispredicted */
    };
    static const uint8_t hlt = 0xf4;
    load(&f, CODE, code, sizeof code);
    load(&f, CODE + sizeof code, &hlt, 1);
    /* Cold (code and data fills), then warm (the OUT waits for the three
     * buffered writes instead of a code fill). */
    run(&f, CODE, (regs){.esi = DATA, .edi = DST2});
    run(&f, CODE, (regs){.esi = DATA, .edi = DST2});
    const nm_p5_stats *t = stats(&f);
    uint64_t sum = t->c_table + t->c_io + t->c_int + t->c_rmw_pair + t->c_agi + t->c_bank +
                   t->c_prefix + t->c_mispredict + t->c_code_fill + t->c_data_fill + t->c_wbuf +
                   t->c_misaligned + t->c_locked + t->c_io_drain - t->c_pair_saved;
    g_assert_cmpuint(sum, ==, t->cycles);
    /* Per run: AGI 1 [MA 4.2], misaligned 3 [MA], RMW pair 2 [DB], OUT 9
     * (CPL <= IOPL [NG]); the JMP mispredicted once, in U: 2 [BB]. */
    g_assert_cmpuint(t->c_agi, ==, 2);
    g_assert_cmpuint(t->c_misaligned, ==, 6);
    g_assert_cmpuint(t->c_rmw_pair, ==, 4);
    g_assert_cmpuint(t->c_io, ==, 18);
    g_assert_cmpuint(t->c_mispredict, ==, 2);
    g_assert_cmpuint(t->c_prefix, >=, 1); /* 66h [MA 4.4] */
    g_assert_cmpuint(t->c_pair_saved, >=, 1);
    g_assert_cmpuint(t->c_code_fill, >, 0);
    g_assert_cmpuint(t->c_data_fill, >, 0);
    g_assert_cmpuint(t->c_locked, >, 0);
    g_assert_cmpuint(t->c_io_drain, >, 0);

    /* Warm: four independent ADDs, 4 table clocks less 2 paired -> 2. */
    static const uint8_t indep[] = {0x83, 0xc0, 0x01, 0x83, 0xc3, 0x01,
                                    0x83, 0xc1, 0x01, 0x83, 0xc2, 0x01};
    measure(&f, indep, sizeof indep, (regs){0});
    t = stats(&f);
    uint64_t t0 = t->c_table, s0 = t->c_pair_saved, c0 = t->cycles;
    run(&f, CODE, (regs){0});
    t = stats(&f);                                /* (the lazy counts in: nm_pentium_stats) */
    g_assert_cmpuint(t->c_table - t0, ==, 4 + 1); /* and the HLT's row */
    g_assert_cmpuint(t->c_pair_saved - s0, ==, 2);
    g_assert_cmpuint(t->cycles - c0, ==, 2 + 1);

    /* The same figures in the report (section cost-model-pentium). */
    nm_report *r = nm_report_new();
    nm_cost_model_pentium.report(f.st, r);
    char *js = nm_report_json(r);
    static const char *parts[] = {
        "clocks_table",      "clocks_io_instructions", "clocks_interrupts",   "clocks_rmw_pairs",
        "clocks_agi",        "clocks_bank_conflicts",  "clocks_prefixes",     "clocks_mispredicts",
        "clocks_code_fills", "clocks_data_fills",      "clocks_write_buffer", "clocks_misaligned",
        "clocks_locked",     "clocks_io_write_drain",
    };
    uint64_t rsum = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(parts); k++)
        rsum += report_u64(js, parts[k]);
    rsum -= report_u64(js, "clocks_pairing_saved");
    g_assert_cmpuint(rsum, ==, report_u64(js, "clocks"));
    g_assert_cmpuint(report_u64(js, "clocks"), ==, t->cycles);
    g_free(js);
    nm_report_free(r);
    fx_free(&f);
}

static void test_registry(void)
{
    /* The registry finds the model; it refuses a 486. */
    g_assert_true(nm_cost_model_find("pentium") == &nm_cost_model_pentium);
    fx f;
    fx_init(&f, "pentium-60");
    const nm_cpu_model *i486 = nm_cpu_model_find("486dx2-66");
    g_assert_null(nm_cost_model_pentium.create(f.c, i486, NULL));
    nm_report *r = nm_report_new();
    nm_cost_model_pentium.report(f.st, r);
    nm_report_free(r);
    fx_free(&f);
}

/* ---- the TLBs: code 32 entries, data 64 (16 sets x 4 ways) and 8 for
 * 4 MB pages (pentium.c, p5_create) ---- */

#define PDIR 0x500000u
#define PTAB 0x501000u

/* Page tables: 0..4 MB identity-mapped, A and D set (no A/D writes), by
 * 4 KB pages, or (big) by one 4 MB page with CR4.PSE. */
static bool pg_big;
static void page_tables(fx *f, bool big)
{
    uint32_t pde = big ? 0xe3u : PTAB | 0x63u; /* 4 MB: PS A D RW P */
    memcpy(f->ram + PDIR, &pde, 4);
    for (uint32_t k = 0; k < 1024; k++) {
        uint32_t pte = (k << 12) | 0x63u;
        memcpy(f->ram + PTAB + 4 * k, &pte, 4);
    }
    pg_big = big;
}

/* run() with paging on (CR3 = PDIR).  The model sees the same CR3, PG and
 * PSE from run to run, so its TLBs stay warm across runs.  The first
 * paged run's first instruction is looked up before the model learns that
 * paging is on (set here directly); after it the model flushes, as for a
 * MOV CR0, so that page misses again in the next run: tests warm up with
 * two paged runs. */
static uint64_t run_paged(fx *f, uint32_t eip, regs r)
{
    f->m->stop_requested = 0;
    nm_cpu_enter_flat32(f->c, eip, STACK);
    f->c->cr0 &= ~(NM_CR0_CD | NM_CR0_NW);
    f->c->cr3 = PDIR;
    if (pg_big) f->c->cr4 |= NM_CR4_PSE;
    f->c->cr0 |= NM_CR0_PG;
    cpu_update_mode(f->c);
    nm_cpu_flush_translations(f->c);
    nm_cpu_set_reg(f->c, NM_EAX, r.eax);
    nm_cpu_set_reg(f->c, NM_EBX, r.ebx);
    nm_cpu_set_reg(f->c, NM_ECX, r.ecx);
    nm_cpu_set_reg(f->c, NM_ESI, r.esi);
    nm_cpu_set_reg(f->c, NM_EDI, r.edi);
    uint64_t c0 = f->m->clock.cycles, b0 = f->m->clock.bus_wait_cycles;
    nm_cpu_run(f->c, 10000000);
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
    return (f->m->clock.cycles - c0) - (f->m->clock.bus_wait_cycles - b0) - 1;
}

/* run_paged when `paged` (the page tables set), else run. */
static uint64_t run_as(fx *f, uint32_t eip, regs r, bool paged)
{
    return paged ? run_paged(f, eip, r) : run(f, eip, r);
}

/* An instruction's one data access settled alone (data_alone): its hits,
 * write misses into the write buffer (stalling when it is full), byte and
 * word writes, line fills: the same clocks and counters as through the
 * log's walk (run_log), with paging off and on. */
static void test_data_alone(void)
{
    static const uint8_t loop[] = {
        0x8b, 0x06,             /* L: mov eax,[esi] (SRC: a line fill every 8) */
        0x89, 0x07,             /* mov [edi],eax (DST2: never cached) */
        0x88, 0x47, 0x05,       /* mov [edi+5],al */
        0x66, 0x89, 0x47, 0x06, /* mov [edi+6],ax */
        0x89, 0x1c, 0x24,       /* mov [esp],ebx (a hit) */
        0x8b, 0x14, 0x24,       /* mov edx,[esp] (a hit) */
        0x83, 0xc6, 0x04,       /* add esi,4 */
        0x83, 0xc7, 0x08,       /* add edi,8 */
        0x49,                   /* dec ecx */
        0x75, 0xe7,             /* jnz L */
        0xf4,                   /* hlt */
    };
    const regs r = {.ecx = 600, .esi = SRC, .edi = DST2};
    for (int paged = 0; paged < 2; paged++) {
        uint64_t clocks[2];
        nm_p5_stats st[2];
        for (int alone = 0; alone < 2; alone++) {
            fx f;
            fx_init(&f, "pentium-100");
            nm_pentium_set_data_alone(f.st, alone);
            load(&f, CODE, loop, sizeof loop);
            if (paged) page_tables(&f, false);
            run_as(&f, CODE, r, paged);
            clocks[alone] = run_as(&f, CODE, r, paged);
            st[alone] = *stats(&f);
            if (alone)
                g_assert_cmpuint(nm_pentium_data_alone_misses(f.st), >, 2 * 600);
            else
                g_assert_cmpuint(nm_pentium_data_alone_misses(f.st), ==, 0);
            fx_free(&f);
        }
        g_test_message("paging %d: %" G_GUINT64_FORMAT " clocks", paged, clocks[1]);
        g_assert_cmpuint(clocks[1], ==, clocks[0]);
        g_assert_cmpint(memcmp(&st[1], &st[0], sizeof st[0]), ==, 0);
        g_assert_cmpuint(st[1].wbuf_stalls, >, 600);
        g_assert_cmpuint(st[1].line_fills, >=, 600 / 8);
    }
}

/* Instructions across two code lines, each line a hit: two code cache
 * hits and one code TLB hit each (settle_code_at), also when the issue
 * memo, a stretch or the branch case of the fast path counts them (the
 * code page memo: in_code_memo), with paging off and on, the memo on and
 * off (the same clocks and counters). */
static void test_code_lines(void)
{
    uint8_t loop[0x70];
    unsigned n = 0;
    static const uint8_t head[] = {
        0x8b, 0x06,                         /* L (CODE + 0x1b): mov eax,[esi] */
        0x81, 0xc3, 0x78, 0x56, 0x34, 0x12, /* add ebx,imm32 (0x1d-0x22) */
        0x89, 0x1f,                         /* mov [edi],ebx */
    };
    memcpy(loop, head, sizeof head);
    n = sizeof head;
    for (unsigned k = 0; k < 12; k++) { /* add edx,eax (0x25-0x3c) */
        loop[n++] = 0x01;
        loop[n++] = 0xc2;
    }
    static const uint8_t mid[] = {
        0x90,             /* nop (0x3d) */
        0x8b, 0x46, 0x04, /* mov eax,[esi+4] (0x3e-0x40) */
    };
    memcpy(loop + n, mid, sizeof mid);
    n += sizeof mid;
    for (unsigned k = 0; k < 15; k++) { /* add edx,eax (0x41-0x5e) */
        loop[n++] = 0x01;
        loop[n++] = 0xc2;
    }
    static const uint8_t imm[] = {
        0x81, 0xc3, 0x78, 0x56, 0x34, 0x12, /* add ebx,imm32 (0x5f-0x64, in a stretch) */
    };
    memcpy(loop + n, imm, sizeof imm);
    n += sizeof imm;
    for (unsigned k = 0; k < 11; k++) { /* add edx,eax (0x65-0x7a) */
        loop[n++] = 0x01;
        loop[n++] = 0xc2;
    }
    static const uint8_t tail[] = {
        0x49,                               /* dec ecx */
        0x0f, 0x85, 0x99, 0xff, 0xff, 0xff, /* jnz L (0x7c-0x81) */
        0xf4,                               /* hlt */
    };
    memcpy(loop + n, tail, sizeof tail);
    n += sizeof tail;
    g_assert_cmpuint(n, <=, sizeof loop);
    const regs r = {.ecx = 300, .esi = DATA, .edi = DATA + 0x100};
    for (int paged = 0; paged < 2; paged++) {
        uint64_t clocks[2];
        nm_p5_stats st[2];
        for (int memo = 0; memo < 2; memo++) {
            fx f;
            fx_init(&f, "pentium-100");
            nm_pentium_set_issue_memo(f.st, memo);
            load(&f, CODE + 0x1b, loop, n);
            if (paged) { /* (two paged runs to warm up: run_paged) */
                page_tables(&f, false);
                run_paged(&f, CODE + 0x1b, r);
            }
            run_as(&f, CODE + 0x1b, r, paged);
            const nm_p5_stats a = *stats(&f);
            clocks[memo] = run_as(&f, CODE + 0x1b, r, paged);
            st[memo] = *stats(&f);
            const uint64_t insns = st[memo].instructions - a.instructions;
            g_assert_cmpuint(insns, ==, 300 * 46 + 1);
            /* four across two lines an iteration: the adds at 0x1d and
             * 0x5f, the load at 0x3e, the jnz at 0x7c */
            g_assert_cmpuint(st[memo].code_hits - a.code_hits, ==, insns + 300 * 4);
            g_assert_cmpuint(st[memo].code_misses - a.code_misses, ==, 0);
            if (paged) g_assert_cmpuint(st[memo].tlb_code_hits - a.tlb_code_hits, ==, insns);
            if (memo) g_assert_cmpuint(nm_pentium_stretch_insns(f.st), >, 300 * 10);
            fx_free(&f);
        }
        g_assert_cmpuint(clocks[1], ==, clocks[0]);
        g_assert_cmpint(memcmp(&st[1], &st[0], sizeof st[0]), ==, 0);
    }
}

/* The code line memo (p5.cl_lin) answers for an instruction only what the
 * code cache and TLB lookups would: the same clocks, counters and result
 * with it off and on, with paging off and on, for (a) a loop in one code
 * line that rewrites its own ADD's immediate in that line each iteration,
 * (b) straight code of short instructions over several lines, run again
 * after a DMA write into its first line (a snoop: that line leaves the
 * code cache), (c) a loop whose WBINVD empties the code cache under the
 * instructions after it in its line, then (b) again. */
static void snoop_to_model(void *opaque, uint32_t phys, size_t len, bool write);
static void test_code_line_memo(void)
{
    static const uint8_t smc[] = {
        0x88, 0x1d, 0x08, 0x00, 0x10, 0x00, /* L (CODE): mov [CODE+8],bl */
        0x83, 0xc0, 0x00,                   /* add eax,imm8 (the byte at CODE+8) */
        0x43,                               /* inc ebx */
        0x49,                               /* dec ecx */
        0x75, 0xf3,                         /* jnz L */
        0xf4,                               /* hlt */
    };
    uint8_t straight[0x60];
    for (unsigned k = 0; k < 0x5c; k += 2) { /* add edx,eax / inc ebx and nop */
        straight[k] = (k & 2) ? 0x43 : 0x01;
        straight[k + 1] = (k & 2) ? 0x90 : 0xc2;
    }
    straight[0x5c] = 0x49; /* dec ecx */
    straight[0x5d] = 0x75; /* jnz (CODE + 0x200) */
    straight[0x5e] = (uint8_t)(0x100 - 0x5f);
    straight[0x5f] = 0xf4; /* hlt */
    static const uint8_t wbinvd[] = {
        0x0f, 0x09, /* L (CODE + 0x300): wbinvd (the code cache emptied) */
        0x01, 0xc2, /* add edx,eax (in L's line: a miss each time) */
        0x43,       /* inc ebx */
        0x49,       /* dec ecx */
        0x75, 0xf8, /* jnz L */
        0xf4,       /* hlt */
    };
    for (int paged = 0; paged < 2; paged++) {
        uint64_t clocks[2];
        uint32_t eax[2];
        nm_p5_stats st[2];
        for (int on = 0; on < 2; on++) {
            fx f;
            fx_init(&f, "pentium-100");
            nm_pentium_set_code_line_memo(f.st, on);
            load(&f, CODE, smc, sizeof smc);
            load(&f, CODE + 0x200, straight, sizeof straight);
            load(&f, CODE + 0x300, wbinvd, sizeof wbinvd);
            if (paged) {
                page_tables(&f, false);
                run_paged(&f, CODE, (regs){.ecx = 1});
            }
            const regs r = {.ecx = 200};
            clocks[on] = run_as(&f, CODE, r, paged);
            eax[on] = nm_cpu_get_reg(f.c, NM_EAX);
            clocks[on] += run_as(&f, CODE + 0x200, r, paged);
            static const uint8_t nop = 0x90;
            nm_memmap_set_dma_snoop(f.m->mem, snoop_to_model, f.st);
            load(&f, CODE + 0x203, &nop, 1); /* (the NOP after INC EBX again) */
            clocks[on] += run_as(&f, CODE + 0x200, r, paged);
            clocks[on] += run_as(&f, CODE + 0x300, (regs){.ecx = 20}, paged);
            clocks[on] += run_as(&f, CODE + 0x200, r, paged);
            st[on] = *stats(&f);
            fx_free(&f);
        }
        g_test_message("paging %d: %" G_GUINT64_FORMAT " clocks", paged, clocks[1]);
        /* (the rewritten immediates were added) */
        g_assert_cmpuint(eax[1], >, 0);
        g_assert_cmpuint(eax[1], ==, eax[0]);
        g_assert_cmpuint(clocks[1], ==, clocks[0]);
        g_assert_cmpint(memcmp(&st[1], &st[0], sizeof st[0]), ==, 0);
        g_assert_cmpuint(st[1].snoop_invalidations, >, 0);
    }
}

/* The data and code mirrors (p5.dmirror, p5.cmirror) stand for lines of
 * cacheable RAM of the memory map they were made under (p5.mirror_gen): a
 * device's registers mapped over a page whose line a mirror holds make its
 * reads MMIO (no cache hit, the bus model's), and that page back in RAM
 * makes them hits of the line still in the cache. */
static uint32_t mirror_mmio_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)opaque;
    (void)offset;
    (void)size;
    return 0x5a5a5a5au;
}
static void mirror_mmio_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)opaque;
    (void)offset;
    (void)value;
    (void)size;
}
static void test_mirrors_map_change(void)
{
    static const uint8_t rd[] = {0x8b, 0x06, 0x8b, 0x46, 0x04}; /* mov eax,[esi]; mov eax,[esi+4] */
    static const nm_mmio_ops ops = {mirror_mmio_read, mirror_mmio_write};
    fx f;
    fx_init(&f, "pentium-100");
    const regs r = {.esi = DATA};
    measure(&f, rd, sizeof rd, r); /* DATA's line in the data cache, its set's most recent */
    uint64_t hits = stats(&f)->data_hits;
    run(&f, CODE, r);
    g_assert_cmpuint(stats(&f)->data_hits - hits, ==, 2);
    nm_mem_region *dev = nm_memmap_add_mmio(f.m->mem, "over-data", DATA, 0x1000, &ops, NULL, NULL);
    hits = stats(&f)->data_hits;
    run(&f, CODE, r);
    g_assert_cmpuint(nm_cpu_get_reg(f.c, NM_EAX), ==, 0x5a5a5a5au);
    g_assert_cmpuint(stats(&f)->data_hits - hits, ==, 0);
    nm_memmap_remove(f.m->mem, dev);
    hits = stats(&f)->data_hits;
    run(&f, CODE, r);
    g_assert_cmpuint(stats(&f)->data_hits - hits, ==, 2);
    fx_free(&f);
}

/* The page loop at CODE: mov eax,[esi] / add esi,EBX-stride / dec ecx /
 * jnz; ECX pages from DATA + 4 KB (data TLB set 1).  A MOV CR3 / HLT at
 * CODE + 0x300 flushes the TLBs. */
static void p5_page_loop(fx *f, uint32_t stride)
{
    uint8_t code[] = {0x8b, 0x06, 0x81, 0xc6, 0, 0, 0, 0, 0x49, 0x75, 0xf5, 0xf4};
    memcpy(code + 4, &stride, 4);
    load(f, CODE, code, sizeof code);
    static const uint8_t cr3[] = {0x0f, 0x22, 0xdf, 0xf4}; /* mov cr3, edi; hlt */
    load(f, CODE + 0x300, cr3, sizeof cr3);
}

/* Each TLB miss costs its walk and nothing else: the same loop with
 * paging off (P clocks, warm) takes P with every translation in the TLBs,
 * and P + 2 per data page after a flush: the PDE and PTE reads hit the data
 * cache, 1 clock each (pentium.c, tlb_walk).  63 data pages fit (the
 * stride 0x1020 gives each its own cache set; the PTEs are in sets 64-71). */
static void test_tlb_fits(void)
{
    fx f;
    fx_init(&f, "pentium-100");
    page_tables(&f, false);
    p5_page_loop(&f, 0x1020);
    regs r = {.ecx = 63, .esi = DATA + 0x1000u};
    run(&f, CODE, r);
    uint64_t p = run(&f, CODE, r); /* paging off, warm */
    run_paged(&f, CODE, r);        /* walks, page-table lines filled */
    run_paged(&f, CODE, r);        /* the first page again (above) */
    const nm_p5_stats *t = stats(&f);
    uint64_t m0 = t->tlb_data_misses, h0 = t->tlb_data_hits, w0 = t->c_tlb;
    g_assert_cmpuint(m0, ==, 63 + 1);
    g_assert_cmpuint(run_paged(&f, CODE, r), ==, p);
    g_assert_cmpuint(t->tlb_data_misses, ==, m0);
    g_assert_cmpuint(t->tlb_data_hits - h0, ==, 63);
    g_assert_cmpuint(t->c_tlb, ==, w0);
    /* MOV CR3 flushes both TLBs; its HLT walks for the code page again */
    run_paged(&f, CODE + 0x300, (regs){.edi = PDIR});
    g_assert_cmpuint(run_paged(&f, CODE, r), ==, p + 63 * 2);
    g_assert_cmpuint(t->tlb_data_misses, ==, m0 + 63);
    g_assert_cmpuint(t->interp_walk_reads, >, 0); /* counted, not charged */
    fx_free(&f);
}

/* 65 pages: data TLB set 1 gets five (pages 0x201, 0x211, .. 0x241), the
 * other sets four.  In the second pass after a flush the tree pseudo-LRU
 * gives that set 1 hit and 4 misses (as test_tlb.c, overflow-plru): P + 4
 * walks. */
static void test_tlb_overflow(void)
{
    fx f;
    fx_init(&f, "pentium-100");
    page_tables(&f, false);
    p5_page_loop(&f, 0x1020);
    regs r = {.ecx = 65, .esi = DATA + 0x1000u};
    run(&f, CODE, r);
    uint64_t p = run(&f, CODE, r);
    run_paged(&f, CODE, r);
    /* From an empty TLB (MOV CR3), the first pass fills set 1 with A-D and
     * puts E over A, as in test_tlb.c; the second is the one measured. */
    run_paged(&f, CODE + 0x300, (regs){.edi = PDIR});
    run_paged(&f, CODE, r);
    const nm_p5_stats *t = stats(&f);
    uint64_t m0 = t->tlb_data_misses;
    g_assert_cmpuint(run_paged(&f, CODE, r), ==, p + 4 * 2);
    g_assert_cmpuint(t->tlb_data_misses - m0, ==, 4);
    uint64_t sum = t->c_table + t->c_io + t->c_int + t->c_rmw_pair + t->c_agi + t->c_bank +
                   t->c_prefix + t->c_mispredict + t->c_code_fill + t->c_data_fill + t->c_wbuf +
                   t->c_misaligned + t->c_locked + t->c_io_drain + t->c_tlb - t->c_pair_saved;
    g_assert_cmpuint(sum, ==, t->cycles);
    fx_free(&f);
}

/* A 4 MB page (CR4.PSE, PDE.PS): the data TLB's 4 MB entries hold all 65
 * pages in one: after a flush one walk, the PDE read alone (1 clock).  The
 * code TLB holds the page as a 4 KB entry. */
static void test_tlb_4mb_page(void)
{
    fx f;
    fx_init(&f, "pentium-100");
    page_tables(&f, true);
    p5_page_loop(&f, 0x1020);
    regs r = {.ecx = 65, .esi = DATA + 0x1000u};
    run(&f, CODE, r);
    uint64_t p = run(&f, CODE, r);
    run_paged(&f, CODE, r);
    run_paged(&f, CODE, r);
    const nm_p5_stats *t = stats(&f);
    g_assert_cmpuint(t->tlb_data_misses, ==, 2); /* the first run's, twice (above) */
    g_assert_cmpuint(run_paged(&f, CODE, r), ==, p);
    run_paged(&f, CODE + 0x300, (regs){.edi = PDIR});
    uint64_t walks = t->tlb_walk_reads;
    g_assert_cmpuint(run_paged(&f, CODE, r), ==, p + 1);
    g_assert_cmpuint(t->tlb_data_misses, ==, 3);
    g_assert_cmpuint(t->tlb_walk_reads - walks, ==, 1);
    fx_free(&f);
}

/* INVLPG drops the page in both TLBs: one data walk in the next pass. */
static void test_tlb_invlpg(void)
{
    fx f;
    fx_init(&f, "pentium-100");
    page_tables(&f, false);
    p5_page_loop(&f, 0x1020);
    static const uint8_t inv[] = {0x0f, 0x01, 0x3b, 0xf4}; /* invlpg [ebx]; hlt */
    load(&f, CODE + 0x380, inv, sizeof inv);
    regs r = {.ecx = 8, .esi = DATA + 0x1000u};
    run(&f, CODE, r);
    uint64_t p = run(&f, CODE, r);
    run_paged(&f, CODE, r);
    run_paged(&f, CODE, r);
    g_assert_cmpuint(run_paged(&f, CODE, r), ==, p);
    run_paged(&f, CODE + 0x380, (regs){.ebx = DATA + 0x3020u});
    const nm_p5_stats *t = stats(&f);
    uint64_t m0 = t->tlb_data_misses;
    g_assert_cmpuint(run_paged(&f, CODE, r), ==, p + 2);
    g_assert_cmpuint(t->tlb_data_misses - m0, ==, 1);
    fx_free(&f);
}

/* ---- bus-master DMA snooping the caches (pentium.c, p5_snoop) ---- */

static void snoop_to_model(void *opaque, uint32_t phys, size_t len, bool write)
{
    nm_cost_model_pentium.snoop(opaque, phys, (uint32_t)len, write);
}

/* pentium-60, DRAM 5-2-2-2 on a 60 MHz bus: a line fill (and a line
 * write-back) is 11 core clocks.  A warm MOV EAX,[ESI] is 1 clock [IT].
 * After DMA writes its line: a fill, 1 + 11.  When the line was modified
 * (a MOV [ESI],EAX hit it), the inquire cycle's HITM write-back holds the
 * bus first: 1 + 11 + 11.  A DMA read of a modified line writes it back
 * and leaves it valid: the next read hits. */
static void test_dma_snoop(void)
{
    fx f;
    fx_init(&f, "pentium-60");
    nm_memmap_set_dma_snoop(f.m->mem, snoop_to_model, f.st);
    static const uint8_t rd[] = {0x8b, 0x06};       /* mov eax, [esi] */
    static const uint8_t wr[] = {0x89, 0x06, 0xf4}; /* mov [esi], eax; hlt */
    regs r = {.esi = DATA + 0x20, .eax = 0x11223344u};
    uint64_t warm = measure(&f, rd, sizeof rd, r);
    g_assert_cmpuint(warm, ==, 1);
    const nm_p5_stats *t = stats(&f);
    static const uint8_t frame[8] = {9, 9};
    /* another line: nothing */
    g_assert_true(nm_mem_dma_write(f.m->mem, DATA + 0x40, frame, sizeof frame));
    f.m->clock.cycles += 1000;
    g_assert_cmpuint(run(&f, CODE, r), ==, 1);
    g_assert_cmpuint(t->snoop_invalidations, ==, 0);
    /* the line read: invalidated, refilled */
    g_assert_true(nm_mem_dma_write(f.m->mem, DATA + 0x38, frame, sizeof frame));
    f.m->clock.cycles += 1000;
    g_assert_cmpuint(run(&f, CODE, r), ==, 1 + 11);
    g_assert_cmpuint(t->snoop_invalidations, ==, 1);
    g_assert_cmpuint(t->snoop_writebacks, ==, 0);
    /* modified, then written by DMA: HITM write-back, then the fill */
    load(&f, CODE + 0x300, wr, sizeof wr);
    run(&f, CODE + 0x300, r); /* a write hit: the line is dirty */
    f.m->clock.cycles += 1000;
    g_assert_true(nm_mem_dma_write(f.m->mem, DATA + 0x20, frame, sizeof frame));
    g_assert_cmpuint(t->snoop_writebacks, ==, 1);
    g_assert_cmpuint(run(&f, CODE, r), ==, 1 + 11 + 11);
    g_assert_cmpuint(nm_cpu_get_reg(f.c, NM_EAX), ==, 0x0909u); /* DMA's bytes */
    /* modified, then read by DMA: written back, still cached */
    run(&f, CODE + 0x300, r);
    f.m->clock.cycles += 1000;
    uint8_t buf[8];
    g_assert_true(nm_mem_dma_read(f.m->mem, DATA + 0x20, buf, sizeof buf));
    g_assert_cmpuint(t->snoop_writebacks, ==, 2);
    f.m->clock.cycles += 1000;
    g_assert_cmpuint(run(&f, CODE, r), ==, 1);
    g_assert_cmpuint(t->snoop_invalidations, ==, 2);
    nm_memmap_set_dma_snoop(f.m->mem, NULL, NULL);
    fx_free(&f);
}

/* Two random programs (btb_random_memo's) at the same linear page in two
 * physical pages, mapped in turn: each keeps its decoded instructions,
 * memo slots and stretches while the other's branches leave BTB entries at
 * addresses inside its stretches; the same clocks and counters with the
 * memos as without. */
static void test_btb_random_remap(void)
{
    uint64_t misapplied = 0, stretched = 0;
    const uint32_t pte_at = PTAB + 4 * (CODE >> 12), other = 0x1c0000u;
    for (uint32_t seed = 1; seed <= 12; seed++) {
        uint8_t a[1024], b[1024];
        size_t na = random_program(a, seed * 2654435761u),
               nb = random_program(b, seed * 40503u + 7);
        const regs r = {.eax = seed, .ebx = 0x9e3779b9u * seed, .esi = 7 * seed, .edi = 1};
        uint64_t clocks[2] = {0, 0};
        nm_p5_stats after[2];
        for (int on = 0; on < 2; on++) {
            fx f;
            fx_init(&f, "pentium-100");
            if (!on) nm_pentium_set_issue_memo(f.st, false);
            page_tables(&f, false);
            load(&f, CODE, a, na);
            load(&f, other, b, nb);
            for (unsigned k = 0; k < 8; k++) {
                uint32_t pte = (k & 1 ? other : CODE) | 0x63u;
                memcpy(f.ram + pte_at, &pte, 4);
                clocks[on] += run_paged(&f, CODE, r);
            }
            after[on] = *stats(&f);
            if (on) stretched += nm_pentium_stretch_insns(f.st);
            fx_free(&f);
        }
        g_assert_cmpuint(clocks[1], ==, clocks[0]);
        g_assert_cmpint(memcmp(&after[0], &after[1], sizeof after[0]), ==, 0);
        misapplied += after[1].btb_misapplied;
    }
    g_assert_cmpuint(misapplied, >, 0);
    g_assert_cmpuint(stretched, >, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timing/pentium/alu-chains", test_alu_chains);
    g_test_add_func("/timing/pentium/recode-same-address", test_recode_same_address);
    g_test_add_func("/timing/pentium/pairing-rules", test_pairing_rules);
    g_test_add_func("/timing/pentium/rotate-imm", test_rotate_imm);
    g_test_add_func("/timing/pentium/bank-conflict", test_bank_conflict);
    g_test_add_func("/timing/pentium/agi", test_agi);
    g_test_add_func("/timing/pentium/prefix", test_prefix);
    g_test_add_func("/timing/pentium/branches", test_branches);
    g_test_add_func("/timing/pentium/loop-predicted", test_loop_predicted);
    g_test_add_func("/timing/pentium/issue-memo", test_issue_memo);
    g_test_add_func("/timing/pentium/stretch-memo", test_stretch_memo);
    g_test_add_func("/timing/pentium/data-alone", test_data_alone);
    g_test_add_func("/timing/pentium/code-lines", test_code_lines);
    g_test_add_func("/timing/pentium/code-line-memo", test_code_line_memo);
    g_test_add_func("/timing/pentium/mirrors-map-change", test_mirrors_map_change);
    g_test_add_func("/timing/pentium/stretch-recode", test_stretch_recode);
    g_test_add_func("/timing/pentium/int-iret", test_int_iret);
    g_test_add_func("/timing/pentium/fault-delivery", test_fault_delivery);
    g_test_add_func("/timing/pentium/in-out", test_in_out);
    g_test_add_func("/timing/pentium/far-call-gate", test_far_call_gate);
    g_test_add_func("/timing/pentium/real-mode-io-int", test_real_mode_io_int);
    g_test_add_func("/timing/pentium/cache-loops", test_cache_loops);
    g_test_add_func("/timing/pentium/l2", test_l2);
    g_test_add_func("/timing/pentium/misaligned", test_misaligned);
    g_test_add_func("/timing/pentium/rep-movsd", test_rep_movsd);
    g_test_add_func("/timing/pentium/split-writes", test_split_writes);
    g_test_add_func("/timing/pentium/rep-vs-unrolled-stores", test_rep_vs_unrolled_stores);
    g_test_add_func("/timing/pentium/xchg", test_xchg);
    g_test_add_func("/timing/pentium/cmpxchg", test_cmpxchg);
    g_test_add_func("/timing/pentium/shld", test_shld);
    g_test_add_func("/timing/pentium/bts", test_bts);
    g_test_add_func("/timing/pentium/pushf-popf", test_pushf_popf);
    g_test_add_func("/timing/pentium/loop-clocks", test_loop_clocks);
    g_test_add_func("/timing/pentium/uncond-mispredict", test_uncond_mispredict);
    g_test_add_func("/timing/pentium/btb-self-loop", test_btb_self_loop);
    g_test_add_func("/timing/pentium/btb-two-group-loop", test_btb_two_group_loop);
    g_test_add_func("/timing/pentium/btb-lookahead-key", test_btb_lookahead_key);
    g_test_add_func("/timing/pentium/btb-misapplied", test_btb_misapplied);
    g_test_add_func("/timing/pentium/btb-free-at-zero", test_btb_free_at_zero);
    g_test_add_func("/timing/pentium/btb-random-memo", test_btb_random_memo);
    g_test_add_func("/timing/pentium/btb-random-remap", test_btb_random_remap);
    g_test_add_func("/timing/pentium/btb-u-counter", test_btb_u_counter);
    g_test_add_func("/timing/pentium/btb-flushes", test_btb_flushes);
    g_test_add_func("/timing/pentium/mul-clocks", test_mul_clocks);
    g_test_add_func("/timing/pentium/breakdown-sums", test_breakdown_sums);
    g_test_add_func("/timing/pentium/registry", test_registry);
    g_test_add_func("/timing/pentium/tlb-fits", test_tlb_fits);
    g_test_add_func("/timing/pentium/tlb-overflow", test_tlb_overflow);
    g_test_add_func("/timing/pentium/tlb-4mb-page", test_tlb_4mb_page);
    g_test_add_func("/timing/pentium/tlb-invlpg", test_tlb_invlpg);
    g_test_add_func("/timing/pentium/dma-snoop", test_dma_snoop);
    return g_test_run();
}
