/* The 486 cost model on a 486DX2-66 (33 MHz bus: 2 core clocks per bus
 * clock), DRAM 5-2-2-2 (single 5): a line fill is 11 bus clocks = 22 core
 * clocks, a buffered write 5 bus clocks = 10 core clocks.  Expected figures
 * are rows of the Intel486 Programmer's Reference Manual "Clock Count
 * Summary" plus the documented rules (cpu/timing/i486.c).  Most tests run
 * their code once to warm the cache, let the write buffer drain, then run
 * it again and measure instruction by instruction. */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/timing/timing.h"
#include "emu/config.h"
#include "emu/machine.h"

#define CODE32 0x100000u
#define DATA 0x200000u
#define FILL 22u  /* (5 + 3*2) bus clocks x 2 */
#define WRITE 10u /* 5 bus clocks x 2 */

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    nm_timing *t;
    uint8_t *ram;
    uint32_t regs[8];
} fx;

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
    f->t = nm_timing_new(f->m, &p);
    memcpy(f->ram + CODE32, code, n);
    nm_cpu_enter_flat32(f->c, CODE32, 0x90000);
    f->c->cr0 &= ~(NM_CR0_CD | NM_CR0_NW); /* the 486 resets with the cache off */
    memset(f->regs, 0, sizeof f->regs);
    f->regs[NM_ESP] = 0x90000;
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
    for (int r = 0; r < 8; r++) nm_cpu_set_reg(f->c, r, f->regs[r]);
}

/* Runs the program to its HLT once (cache warm), lets 1000 clocks pass
 * (the write buffer drains), and restarts it. */
static void warm(fx *f)
{
    set_regs(f);
    nm_cpu_run(f->c, 100000);
    g_assert_true(f->m->stop_requested);
    f->m->stop_requested = 0;
    f->m->stop_reason = NM_STOP_NONE;
    g_free(f->m->stop_detail);
    f->m->stop_detail = NULL;
    f->m->clock.cycles += 1000;
    set_regs(f);
    nm_cpu_set_eip(f->c, CODE32);
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
 * HLT 4.  Cold: the first instruction waits for the code line fill. */
static void test_alu_chains(void)
{
    static const uint8_t code[] = {0x01, 0xd8, 0x01, 0xc0, 0x01, 0xca, 0xf4};
    fx f;
    fx_init(&f, code, sizeof code);
    set_regs(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + FILL); /* cold code line */
    g_assert_cmpuint(clocks_of(&f, 2), ==, 1 + 1);
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
    fx f;
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
    fx f;
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
        0x31, 0xc0, 0x74, 0x01, 0x90, 0x75, 0x01, 0x90,
        0x8b, 0x43, 0x02, /* mov eax, [ebx+2]: crosses a dword */
        0xf4,
    };
    fx f;
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
 * = 6 per iteration; a miss adds the 22-clock line fill. */
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
        fx f;
        fx_init(&f, code, sizeof code);
        f.regs[NM_ESI] = DATA;
        f.regs[NM_EDX] = stride;
        f.regs[NM_ECX] = 1024;
        set_regs(&f);
        clocks_of(&f, 4 * 8); /* eight iterations: code and (stride 0) data warm */
        g_assert_cmpuint(clocks_of(&f, 4 * 16), ==, 16 * (6 + (stride ? FILL : 0)));
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
        0x89, 0x03, 0x89, 0x43, 0x04, 0x89, 0x43, 0x08, 0x89, 0x43, 0x0c,
        0x89, 0x43, 0x10, 0x89, 0x43, 0x14, 0xf4,
    };
    fx f;
    fx_init(&f, code, sizeof code);
    f.regs[NM_EBX] = DATA;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 4), ==, 4);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 6);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 9);
    fx_free(&f);
}

/* REP MOVSD, ECX = 4, source cached: 12 + 3n = 24 clocks of execution; the
 * four writes (one per 3-clock iteration, issued after the reads: t = 1, 3,
 * 5, 7 by the one-access-per-clock rule) fit in the buffer: no stall. */
static void test_rep_movsd(void)
{
    static const uint8_t code[] = {0xf3, 0xa5, 0xf4};
    fx f;
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

/* I/O in protected mode, CPL 0 <= IOPL: IN AL,imm8 9; OUT imm8,AL 11;
 * IN AL,DX 8; OUT DX,AL 10. */
static void test_io_protected(void)
{
    static const uint8_t code[] = {0xe4, 0x80, 0xe6, 0x80, 0xec, 0xee, 0xf4};
    fx f;
    fx_init(&f, code, sizeof code);
    f.regs[NM_EDX] = 0x80;
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 9);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 11);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 8);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 10);
    fx_free(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timing/486/alu-chains", test_alu_chains);
    g_test_add_func("/timing/486/agi", test_agi);
    g_test_add_func("/timing/486/prefix", test_prefix);
    g_test_add_func("/timing/486/branches-misaligned", test_branches_misaligned);
    g_test_add_func("/timing/486/cache-loop", test_cache_loop);
    g_test_add_func("/timing/486/write-buffer", test_write_buffer);
    g_test_add_func("/timing/486/rep-movsd", test_rep_movsd);
    g_test_add_func("/timing/486/io-protected", test_io_protected);
    return g_test_run();
}
