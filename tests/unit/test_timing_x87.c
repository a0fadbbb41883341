/* The x87's costs in the three cost models (cpu/timing/x87cost.c), rule by
 * rule, in clocks per instruction on warm code:
 *   - the 386 with a 387: the coprocessor protocol's 2-clock bus cycles
 *     (the opcode; per operand dword a memory cycle and a 387 cycle), the
 *     387 running on while the 386 goes on, the next ESC instruction or
 *     WAIT waiting for it, a store waiting for the 387's result;
 *   - the 486: an instruction's non-concurrent clocks, the next FP
 *     instruction or WAIT waiting for the FPU to finish;
 *   - the Pentium: FADD/FMUL latency 3 and an issue every clock, FXCH
 *     paired for nothing after an FX-pairable instruction, FDIV 19/33/39
 *     by the precision control, FST one clock later for its value, FMUL
 *     after FMUL a clock later, FILD's 3 clocks with 2 overlapped.
 * Each program runs twice to warm the caches (and the 386's queue), then
 * once more instruction by instruction. */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/timing/timing.h"
#include "emu/config.h"
#include "emu/machine.h"

#define CODE 0x100000u
#define DATA 0x200000u

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    nm_timing *t;
    const char *model;
} fx;

static void fx_init(fx *f, const char *cpu, const char *fpu, const char *cost_model,
                    const uint8_t *code, size_t n)
{
    GError *err = NULL;
    f->cfg = nm_config_new();
    g_assert_true(nm_config_set(f->cfg, "test", "cpu", cpu, &err));
    if (fpu) g_assert_true(nm_config_set(f->cfg, "test", "fpu", fpu, &err));
    g_assert_no_error(err);
    f->m = nm_machine_new(f->cfg, &err);
    g_assert_no_error(err);
    f->c = nm_cpu_new(f->m);
    nm_timing_params p;
    nm_timing_default_params(f->m->model, &p);
    if (!strcmp(cost_model, "386")) {
        /* zero-wait-state memory: the 386's clocks are the table's and the
         * protocol's alone */
        p.mem_wait_states = 0;
        p.dram_page_bytes = 0;
        p.l2_size = 0;
    }
    f->t = nm_timing_new(f->m, &p);
    memcpy(f->m->ram->host + CODE, code, n);
    nm_cpu_enter_flat32(f->c, CODE, 0x90000);
    f->model = cost_model;
}

static void fx_free(fx *f)
{
    nm_timing_free(f->t);
    nm_cpu_free(f->c);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

/* Runs the program to its HLT twice with the model on (caches warm), lets
 * the FPU and the write buffers go quiet, and restarts it. */
static void warm(fx *f)
{
    nm_timing_select(f->t, nm_cost_model_find(f->model));
    for (int pass = 0; pass < 2; pass++) {
        nm_cpu_set_eip(f->c, CODE);
        nm_cpu_run(f->c, 100000);
        g_assert_true(f->m->stop_requested);
        f->m->stop_requested = 0;
        f->m->stop_reason = NM_STOP_NONE;
        g_free(f->m->stop_detail);
        f->m->stop_detail = NULL;
    }
    f->m->clock.cycles += 1000;
    nm_cpu_set_eip(f->c, CODE);
    nm_timing_select(f->t, NULL);
    nm_timing_select(f->t, nm_cost_model_find(f->model));
}

static uint64_t clocks_of(fx *f, uint64_t n)
{
    uint64_t before = f->m->clock.cycles;
    g_assert_cmpuint(nm_cpu_run(f->c, n), ==, n);
    return f->m->clock.cycles - before;
}

/* fninit; fld1; fld1; ... the prologue every program starts with: an
 * empty FPU and two values on the stack, measured apart. */
#define PROLOGUE 0xdb, 0xe3, 0xd9, 0xe8, 0xd9, 0xe8, 0xd9, 0xe8

/* ------------------------------------------------------------- the 387 */

/* On zero-wait-state memory.  FADD ST,ST(1) (387 23): the opcode cycle,
 * 2; the 387 then runs its 23 clocks while the 386 goes on (three 2-clock
 * MOV r,r); the next FADD waits for it, 2 + 23 - 2 - 6 = 17, and its own
 * opcode cycle.  FST m32 (387 44, a result): the 387 still busy with that
 * FADD (its 23, begun after its opcode cycle), the opcode cycle, the 387's
 * 44, the dword's 387 cycle and memory cycle, 4.  WAIT: the 386's 6 once the 387 is quiet. */
static void test_387_concurrency(void)
{
    /* clang-format off */
    static const uint8_t code[] = {
        PROLOGUE,
        0xd8, 0xc1,                         /* fadd st,st(1) */
        0x89, 0xc0, 0x89, 0xc0, 0x89, 0xc0, /* mov eax,eax x3 */
        0xd8, 0xc1,                         /* fadd st,st(1) */
        0xd9, 0x15, 0x00, 0x00, 0x20, 0x00, /* fst dword [0x200000] */
        0x9b,                               /* wait */
        0xf4,
    };
    /* clang-format on */
    fx f = {0};
    fx_init(&f, "386dx-40", "387", "386", code, sizeof code);
    warm(&f);
    clocks_of(&f, 4);
    f.m->clock.cycles += 1000; /* the 387 quiet */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2);
    g_assert_cmpuint(clocks_of(&f, 3), ==, 6);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 17 + 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 23 + 2 + 44 + 4);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 6);
    fx_free(&f);
}

/* FLD m64 (387 25): the opcode cycle and two dwords, each a memory cycle
 * and a 387 cycle: 5 bus cycles, 10 clocks; the 387 loads it after that;
 * FNSTSW AX (a result): waits the 25, then 2 + 13 + 4 (the status word's
 * 387 cycle and its 2-clock move, counted as a dword's two cycles). */
static void test_387_protocol(void)
{
    /* clang-format off */
    static const uint8_t code[] = {
        PROLOGUE,
        0xdd, 0x05, 0x00, 0x00, 0x20, 0x00, /* fld qword [0x200000] */
        0xdf, 0xe0,                         /* fnstsw ax */
        0xf4,
    };
    /* clang-format on */
    fx f = {0};
    fx_init(&f, "386dx-40", "387", "386", code, sizeof code);
    warm(&f);
    clocks_of(&f, 4);
    f.m->clock.cycles += 1000;
    g_assert_cmpuint(clocks_of(&f, 1), ==, 10);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 25 + 2 + 13 + 4);
    fx_free(&f);
}

/* ------------------------------------------------------------- the 486 */

/* FADD ST,ST(1): 8 with 7 concurrent: 1, then integer instructions run
 * beside it; the next FADD waits for the FPU: 7 - 3 (three MOVs) + 1.
 * FDIV (73, 70 concurrent): 3; the FLD after it waits 70: 70 + 4 (FLD
 * ST(i) 4, none concurrent).  WAIT after nothing in flight: 1. */
static void test_486_concurrency(void)
{
    /* clang-format off */
    static const uint8_t code[] = {
        PROLOGUE,
        0xd8, 0xc1,                         /* fadd st,st(1) */
        0x89, 0xc0, 0x89, 0xc0, 0x89, 0xc0, /* mov eax,eax x3 */
        0xd8, 0xc1,                         /* fadd st,st(1) */
        0xd8, 0xf1,                         /* fdiv st,st(1) */
        0xd9, 0xc1,                         /* fld st(1) */
        0x9b,                               /* wait */
        0xf4,
    };
    /* clang-format on */
    fx f = {0};
    fx_init(&f, "486dx2-66", NULL, "486", code, sizeof code);
    warm(&f);
    clocks_of(&f, 4);
    f.m->clock.cycles += 1000;
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 3), ==, 3);
    g_assert_cmpuint(clocks_of(&f, 1), ==, (7 - 3) + 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 7 + 3); /* the FADD's 7, then FDIV's 3 */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 70 + 4);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    fx_free(&f);
}

/* FSAVE/FRSTOR (Linux's switch_fpu_*): 143 and 120, nothing concurrent;
 * FNINIT 17, FLDCW 4, FNSTSW AX 3. */
static void test_486_save_restore(void)
{
    /* clang-format off */
    static const uint8_t code[] = {
        0xdb, 0xe3,                         /* fninit */
        0xdd, 0x35, 0x00, 0x00, 0x20, 0x00, /* fnsave [0x200000] */
        0xdd, 0x25, 0x00, 0x00, 0x20, 0x00, /* frstor [0x200000] */
        0xdf, 0xe0,                         /* fnstsw ax */
        0xf4,
    };
    /* clang-format on */
    fx f = {0};
    fx_init(&f, "486dx2-66", NULL, "486", code, sizeof code);
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 17);
    /* FNSAVE's 27 dword writes go through the write buffer (4 entries, 10
     * clocks each on this board's DRAM): its 143, and the 90 the buffer
     * makes it wait (the integer stores' rule: test_timing_486) */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 143 + 90);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 120); /* reads: cache hits */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 3);
    fx_free(&f);
}

/* --------------------------------------------------------- the Pentium */

/* FADD ST,ST(2): 3 clocks, 2 of them overlapped: 1.  FXCH ST(1) right
 * after it pairs: 0.  The FADD on the other value does not wait: 1.  A
 * dependent FADD waits for the result: issue 3 after the first (2 stall)
 * and its 1.  FMUL then FMUL (independent, FXCH between): the second
 * issues 2 after the first. */
static void test_p5_pipeline(void)
{
    /* clang-format off */
    static const uint8_t code[] = {
        PROLOGUE,
        0xd8, 0xc2, /* fadd st,st(2) */
        0xd9, 0xc9, /* fxch st(1) */
        0xd8, 0xc2, /* fadd st,st(2) */
        0xd8, 0xc2, /* fadd st,st(2): depends on the last */
        0xd8, 0xca, /* fmul st,st(2) */
        0xd9, 0xc9, /* fxch st(1) */
        0xd8, 0xca, /* fmul st,st(2) */
        0xf4,
    };
    /* clang-format on */
    fx f = {0};
    fx_init(&f, "pentium-100", NULL, "pentium", code, sizeof code);
    warm(&f);
    clocks_of(&f, 4);
    f.m->clock.cycles += 1000;
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 0);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2 + 1);
    /* FMUL: the FADD's result (ready 3 after it issued): 2 + 1 */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 2 + 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 0);
    /* the second FMUL: a clock more than an FADD would wait */
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1 + 1);
    fx_free(&f);
}

/* FDIV by the precision control: 39 (PC 64), 33 (53), 19 (24) clocks,
 * 38 overlapped with integer instructions, 2 with the next FP one: the
 * FDIV costs 1, an FLD after it waits the rest: clocks - 2 - 1, and its 1. */
static void test_p5_fdiv_precision(void)
{
    static const uint16_t cws[3] = {0x037f, 0x027f, 0x007f};
    static const unsigned clocks[3] = {39, 33, 19};
    for (int k = 0; k < 3; k++) {
        uint8_t code[] = {
            PROLOGUE, 0xd9, 0x2d, 0x00, 0x00, 0x20, 0x00, /* fldcw [0x200000] */
            0xd8,     0xf1,                               /* fdiv st,st(1) */
            0xd9,     0xc2,                               /* fld st(2) */
            0xf4,
        };
        fx f = {0};
        fx_init(&f, "pentium-100", NULL, "pentium", code, sizeof code);
        memcpy(f.m->ram->host + DATA, &cws[k], 2);
        warm(&f);
        clocks_of(&f, 5);
        f.m->clock.cycles += 1000;
        g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
        g_assert_cmpuint(clocks_of(&f, 1), ==, (clocks[k] - 2 - 1) + 1);
        fx_free(&f);
    }
}

/* FST m32 right after the FADD that made its value: the value is wanted a
 * clock before the store issues: FADD at t (ready t+3), the store at t+4:
 * 3 stall + 2.  FILD m32: 3 clocks, 2 overlapped with integer: 1. */
static void test_p5_store_and_int_loads(void)
{
    /* clang-format off */
    static const uint8_t code[] = {
        PROLOGUE,
        0xd8, 0xc1,                         /* fadd st,st(1) */
        0xd9, 0x15, 0x00, 0x00, 0x20, 0x00, /* fst dword [0x200000] */
        0xdb, 0x05, 0x04, 0x00, 0x20, 0x00, /* fild dword [0x200004] */
        0xf4,
    };
    /* clang-format on */
    fx f = {0};
    fx_init(&f, "pentium-100", NULL, "pentium", code, sizeof code);
    warm(&f);
    clocks_of(&f, 4);
    f.m->clock.cycles += 1000;
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 3 + 2);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    fx_free(&f);
}

/* Without an x87 (the 486SX, a 386 alone) an ESC opcode is the no-op it
 * is: 1 on the 486 and WAIT 1; 2 on the 386 and WAIT 6. */
static void test_no_fpu(void)
{
    static const uint8_t code[] = {0xd8, 0xc1, 0x9b, 0xf4};
    fx f = {0};
    fx_init(&f, "486sx-25", NULL, "486", code, sizeof code);
    warm(&f);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    g_assert_cmpuint(clocks_of(&f, 1), ==, 1);
    fx_free(&f);
    fx g = {0};
    fx_init(&g, "386dx-40", NULL, "386", code, sizeof code);
    warm(&g);
    g_assert_cmpuint(clocks_of(&g, 1), ==, 2);
    g_assert_cmpuint(clocks_of(&g, 1), ==, 6);
    fx_free(&g);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();
    g_test_add_func("/timing/x87/387-concurrency", test_387_concurrency);
    g_test_add_func("/timing/x87/387-protocol", test_387_protocol);
    g_test_add_func("/timing/x87/486-concurrency", test_486_concurrency);
    g_test_add_func("/timing/x87/486-save-restore", test_486_save_restore);
    g_test_add_func("/timing/x87/p5-pipeline", test_p5_pipeline);
    g_test_add_func("/timing/x87/p5-fdiv-precision", test_p5_fdiv_precision);
    g_test_add_func("/timing/x87/p5-store-int-loads", test_p5_store_and_int_loads);
    g_test_add_func("/timing/x87/no-fpu", test_no_fpu);
    return g_test_run();
}
