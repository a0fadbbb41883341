/* The uncosted run loop (cpu/cpu.c run_fast_loop) against the per-instruction
 * loop: one program, run with no listener (runs of straight-line
 * instructions, counters advanced once per run, full checks only where they
 * can matter) and with a listener that charges one clock per instruction
 * (the hooked loop, every check after every instruction), in
 * one slice and in slices of 1, 7 and 100 steps, must leave the same
 * registers, memory, counters and clock, and a device must see the same
 * clock at every access.
 *
 * The program (flat 32-bit protected mode) puts into straight-line runs what
 * the fast loop treats specially: MMIO reads and writes that record the
 * clock, a #DE in the middle of a run (its handler fixes the divisor and
 * returns to the DIV), a store into an instruction of the same run, a run
 * that crosses a page, a timer interrupt every 997 clocks with IF set, and
 * DEC/JNZ busy-waits (which the fast loop may run ahead: dec_loop_ahead),
 * and before them REP STOS/MOVS across pages, overlapping and unaligned
 * (the bulk path, rep_bulk: the listener's memory hook turns it off). */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "emu/config.h"
#include "emu/machine.h"

#define GDT     0x1000u
#define IDT     0x2000u
#define PSEUD   0x1800u   /* LGDT / LIDT operands */
#define H_DE    0x3000u   /* #DE handler */
#define H_TMR   0x3100u   /* timer handler (vector 0x20) */
#define DATA    0x5000u   /* counters (handlers) and the loop's sums at DATA+0x1000 */
#define CODE    0x100fc4u /* the MOV [MMIO+4],ECX crosses the page at 0x101000 */
#define MMIO    0xfe000000u
#define STRINGS 0x102000u
#define LOG_MAX 8192

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    nm_timer tick;
    uint64_t log[LOG_MAX]; /* (clock << 32 | value) of every MMIO access */
    unsigned n_log;
} fx;

static uint32_t mmio_read(void *opaque, uint32_t off, unsigned size)
{
    fx *f = opaque;
    (void)size;
    uint64_t now = f->m->clock.cycles;
    if (f->n_log < LOG_MAX) f->log[f->n_log++] = now << 32 | off;
    return (uint32_t)now;
}

static void mmio_write(void *opaque, uint32_t off, uint32_t v, unsigned size)
{
    fx *f = opaque;
    (void)size;
    (void)off;
    if (f->n_log < LOG_MAX) f->log[f->n_log++] = f->m->clock.cycles << 32 | v;
}

static const nm_mmio_ops mmio_ops = {mmio_read, mmio_write};

static void on_tick(void *opaque, uint64_t late)
{
    fx *f = opaque;
    (void)late;
    f->m->intr = true;
    nm_timer_at_cycle(&f->m->clock, &f->tick, f->m->clock.cycles + 997);
}

static uint8_t ack(void *opaque)
{
    nm_machine *m = opaque;
    m->intr = false;
    return 0x20;
}

static uint32_t one_clock(void *opaque, nm_cpu *c, const nm_insn *i)
{
    (void)opaque;
    (void)c;
    (void)i;
    return 1;
}

/* With a memory listener the TLB keeps no fast tags: every access, and
 * every REP iteration, goes one by one. */
static void no_mem(void *opaque, uint32_t linear, uint32_t physical, unsigned size, unsigned flags)
{
    (void)opaque;
    (void)linear;
    (void)physical;
    (void)size;
    (void)flags;
}

static void put(uint8_t *ram, uint32_t at, const void *p, size_t n)
{
    memcpy(ram + at, p, n);
}
static void put32(uint8_t *ram, uint32_t at, uint32_t v)
{
    memcpy(ram + at, &v, 4);
}

static void gate(uint8_t *ram, unsigned vector, uint32_t handler)
{
    uint32_t lo = 0x00080000u | (handler & 0xffff), hi = (handler & 0xffff0000u) | 0x8e00u;
    put32(ram, IDT + 8 * vector, lo);
    put32(ram, IDT + 8 * vector + 4, hi);
}

static void fx_init(fx *f)
{
    memset(f, 0, sizeof *f);
    f->cfg = nm_config_new();
    g_free(f->cfg->cpu);
    f->cfg->cpu = g_strdup("486dx2-66");
    f->m = nm_machine_new(f->cfg, NULL);
    g_assert_nonnull(f->m);
    f->c = nm_cpu_new(f->m);
    nm_memmap_add_mmio(f->m->mem, "clock-probe", MMIO, 0x1000, &mmio_ops, f, NULL);
    f->m->intc.acknowledge = ack;
    f->m->intc.opaque = f->m;
    nm_timer_init(&f->tick, on_tick, f, "tick");
    nm_timer_at_cycle(&f->m->clock, &f->tick, 997);

    uint8_t *ram = f->m->ram->host;
    /* GDT: null, 0x08 code, 0x10 data (flat, 32-bit, DPL 0). */
    put32(ram, GDT + 8, 0x0000ffffu);
    put32(ram, GDT + 12, 0x00cf9a00u);
    put32(ram, GDT + 16, 0x0000ffffu);
    put32(ram, GDT + 20, 0x00cf9200u);
    static const uint8_t pgdt[] = {0x17, 0x00, GDT & 0xff, GDT >> 8, 0, 0};
    static const uint8_t pidt[] = {0xff, 0x01, IDT & 0xff, IDT >> 8, 0, 0};
    put(ram, PSEUD, pgdt, sizeof pgdt);
    put(ram, PSEUD + 8, pidt, sizeof pidt);
    gate(ram, 0, H_DE);
    gate(ram, 0x20, H_TMR);
    static const uint8_t h_de[] = {
        0xbb, 0x03, 0x00,        0x00,      0x00,    /* mov ebx,3 */
        0xff, 0x05, DATA & 0xff, DATA >> 8, 0,    0, /* inc dword [DATA] */
        0xcf,                                        /* iret: the DIV again */
    };
    static const uint8_t h_tmr[] = {
        0xff,
        0x05,
        (DATA + 4) & 0xff,
        (DATA + 4) >> 8,
        0,
        0,    /* inc dword [DATA+4] */
        0x50, /* push eax */
        0xa1,
        0x08,
        0x00,
        0x00,
        0xfe, /* mov eax,[MMIO+8] */
        0x01,
        0x05,
        (DATA + 8) & 0xff,
        (DATA + 8) >> 8,
        0,
        0,    /* add [DATA+8],eax */
        0x58, /* pop eax */
        0xcf, /* iret */
    };
    put(ram, H_DE, h_de, sizeof h_de);
    put(ram, H_TMR, h_tmr, sizeof h_tmr);

    const uint32_t patch = CODE + 73; /* the immediate of the MOV AL,imm8 at CODE+72 */
    const uint8_t code[] = {
        0x0f, 0x01, 0x15, PSEUD & 0xff, PSEUD >> 8, 0, 0,       /* lgdt [PSEUD] */
        0x0f, 0x01, 0x1d, (PSEUD + 8) & 0xff, PSEUD >> 8, 0, 0, /* lidt [PSEUD+8] */
        0xbe, 0x00, 0x60, 0x00, 0x00,                           /* mov esi,DATA+0x1000 */
        0xb9, 0xb8, 0x0b, 0x00, 0x00,                           /* mov ecx,3000 */
        0xfb,                                                   /* sti */
        0xb8, 0xa0, 0x86, 0x01, 0x00,                           /* mov eax,100000 */
        0x48, 0x75, 0xfd,                                       /* dec eax ; jnz $-1 */
        /* L (CODE+33): */
        0xa1, 0x00, 0x00, 0x00, 0xfe,       /* mov eax,[MMIO]: the clock */
        0x01, 0x06,                         /* add [esi],eax */
        0x89, 0xca,                         /* mov edx,ecx */
        0x83, 0xe2, 0x07,                   /* and edx,7 */
        0x89, 0xd3,                         /* mov ebx,edx */
        0x89, 0xc8,                         /* mov eax,ecx */
        0x31, 0xd2,                         /* xor edx,edx */
        0xf7, 0xf3,                         /* div ebx: #DE when ECX%8 == 0 */
        0x01, 0x46, 0x04,                   /* add [esi+4],eax */
        0x01, 0x56, 0x08,                   /* add [esi+8],edx */
        0x89, 0x0d, 0x04, 0x00, 0x00, 0xfe, /* mov [MMIO+4],ecx (across the page) */
        0x88, 0x0d, patch & 0xff, (patch >> 8) & 0xff, (patch >> 16) & 0xff,
        0x00, /* mov [patch],cl */
        0x90, /* nop */
        /* CODE+72: */
        0xb0, 0x00,                         /* mov al,<patched> */
        0x00, 0x46, 0x0c,                   /* add [esi+12],al */
        0xc1, 0xe2, 0x03,                   /* shl edx,3 */
        0xd1, 0xf8,                         /* sar eax,1 */
        0x8d, 0x3c, 0x8e,                   /* lea edi,[esi+ecx*4] */
        0x57,                               /* push edi */
        0x5f,                               /* pop edi */
        0x89, 0x7e, 0x10,                   /* mov [esi+16],edi */
        0x51,                               /* push ecx */
        0x89, 0xc8,                         /* mov eax,ecx */
        0x83, 0xe0, 0x3f,                   /* and eax,63 */
        0x40,                               /* inc eax */
        0x81, 0xf9, 0xdc, 0x05, 0x00, 0x00, /* cmp ecx,1500: CF for the ADC below */
        0x48, 0x75, 0xfd,                   /* dec eax ; jnz $-1 (1..64 times) */
        0x11, 0x46, 0x14,                   /* adc [esi+20],eax */
        0x9c,                               /* pushfd */
        0x5a,                               /* pop edx */
        0x89, 0x56, 0x18,                   /* mov [esi+24],edx */
        0x59,                               /* pop ecx */
        0x49,                               /* dec ecx */
        0x0f, 0x85, 0xa7, 0xff, 0xff, 0xff, /* jnz L (CODE+33) */
        0xfa,                               /* cli */
        0xf4,                               /* hlt: the end */
    };
    g_assert_cmpuint(code[72], ==, 0xb0);
    g_assert_cmpuint(code[33], ==, 0xa1);
    g_assert_cmpuint(code[59], ==, 0x89);
    g_assert_cmpuint(sizeof code, ==, 124);
    put(ram, CODE, code, sizeof code);
    /* First, REP STOS/MOVS over pages, overlapping and unaligned (with
     * interrupts off: they run before the loop's STI), then the loop. */
    const uint8_t strings[] = {
        0xbf,
        0x00,
        0x70,
        0x00,
        0x00, /* mov edi,0x7000 */
        0xb9,
        0xb8,
        0x0b,
        0x00,
        0x00, /* mov ecx,3000 */
        0xb8,
        0x44,
        0x33,
        0x22,
        0x11, /* mov eax,0x11223344 */
        0xf3,
        0xab, /* rep stosd (12000 bytes) */
        0xbe,
        0x00,
        0x70,
        0x00,
        0x00, /* mov esi,0x7000 */
        0xbf,
        0x03,
        0x70,
        0x00,
        0x00, /* mov edi,0x7003 */
        0xb9,
        0x88,
        0x13,
        0x00,
        0x00, /* mov ecx,5000 */
        0xf3,
        0xa4, /* rep movsb: overlapping, forward */
        0xbe,
        0x01,
        0x70,
        0x00,
        0x00, /* mov esi,0x7001 */
        0xbf,
        0x00,
        0x90,
        0x00,
        0x00, /* mov edi,0x9000 */
        0xb9,
        0xd0,
        0x07,
        0x00,
        0x00, /* mov ecx,2000 */
        0xf3,
        0xa5, /* rep movsd: unaligned source */
        0xb8,
        CODE & 0xff,
        (CODE >> 8) & 0xff,
        (CODE >> 16) & 0xff,
        0x00, /* mov eax,CODE */
        0xff,
        0xe0, /* jmp eax */
    };
    put(ram, STRINGS, strings, sizeof strings);
    nm_cpu_enter_flat32(f->c, STRINGS, 0x90000);
}

static void fx_free(fx *f)
{
    nm_cpu_free(f->c);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

/* Runs to the final HLT in slices of `slice` steps (0: one slice), firing
 * the events due between them as the machine's run loop does. */
static void run(fx *f, uint64_t slice, bool listener)
{
    if (listener) {
        nm_cpu_hooks h = {.insn = one_clock, .mem = no_mem};
        nm_cpu_set_hooks(f->c, &h);
    }
    for (unsigned guard = 0; !f->m->stop_requested && guard < 10000000; guard++) {
        nm_cpu_run(f->c, slice);
        nm_clock_run_due(&f->m->clock);
    }
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_HALT);
}

typedef struct {
    uint32_t gpr[8], eip, eflags;
    uint64_t instructions, cycles;
    uint8_t data[0x6000]; /* DATA.. : counters, sums, the strings' area */
    uint64_t log[LOG_MAX];
    unsigned n_log;
} outcome;

static void take(fx *f, outcome *o)
{
    memset(o, 0, sizeof *o);
    for (int r = 0; r < 8; r++)
        o->gpr[r] = nm_cpu_get_reg(f->c, r);
    o->eip = nm_cpu_get_eip(f->c);
    o->eflags = nm_cpu_get_eflags(f->c);
    o->instructions = nm_cpu_instructions(f->c);
    o->cycles = f->m->clock.cycles;
    memcpy(o->data, (uint8_t *)f->m->ram->host + DATA, sizeof o->data);
    memcpy(o->log, f->log, sizeof o->log);
    o->n_log = f->n_log;
}

static void same(const outcome *a, const outcome *b)
{
    for (int r = 0; r < 8; r++)
        g_assert_cmphex(a->gpr[r], ==, b->gpr[r]);
    g_assert_cmphex(a->eip, ==, b->eip);
    g_assert_cmphex(a->eflags, ==, b->eflags);
    g_assert_cmpuint(a->instructions, ==, b->instructions);
    g_assert_cmpuint(a->cycles, ==, b->cycles);
    g_assert_cmpuint(a->n_log, ==, b->n_log);
    for (unsigned k = 0; k < a->n_log; k++)
        g_assert_cmphex(a->log[k], ==, b->log[k]);
    g_assert_cmpmem(a->data, sizeof a->data, b->data, sizeof b->data);
}

static void test_same_as_stepped(void)
{
    static outcome ref, got;
    fx *f = g_new(fx, 1);
    /* Reference: the hooked loop, one clock per instruction. */
    fx_init(f);
    run(f, 0, true);
    take(f, &ref);
    fx_free(f);
    /* The program did what it is there for. */
    uint32_t de, ticks;
    memcpy(&de, ref.data, 4);
    memcpy(&ticks, ref.data + 4, 4);
    g_assert_cmpuint(de, ==, 375); /* ECX 3000..1, every multiple of 8 */
    g_assert_cmpuint(ticks, >, 50);
    g_assert_cmpuint(ref.n_log, >, 6000);
    g_assert_cmpuint(ref.data[0x1000 + 12], !=, 0); /* the patched immediates */
    uint32_t carries;
    memcpy(&carries, ref.data + 0x1000 + 20, 4);
    g_assert_cmpuint(carries, ==, 1499); /* ECX 1..1499: CF kept through the DEC loop */

    static const uint64_t slices[] = {0, 1, 7, 100};
    for (unsigned k = 0; k < G_N_ELEMENTS(slices); k++) {
        for (int listener = 0; listener < 2; listener++) {
            if (listener && slices[k] == 0) continue; /* the reference */
            g_test_message("slice %" G_GUINT64_FORMAT ", listener %d", slices[k], listener);
            fx_init(f);
            run(f, slices[k], listener);
            take(f, &got);
            fx_free(f);
            same(&ref, &got);
        }
    }
    g_free(f);
}

/* A forward Jcc inside a run whose target is past the CS limit: #GP with
 * the Jcc's EIP and the Jcc not counted, as in the per-instruction loop.
 * The loop runs the Jcc not taken first (so its fall-through is decoded
 * and the Jcc sits inside a run), then taken. */
static void gp_case(bool listener, uint32_t *eip_pushed, uint64_t *insns, uint64_t *clocks)
{
    fx *f = g_new(fx, 1);
    fx_init(f);
    uint8_t *ram = f->m->ram->host;
    static const uint8_t h_gp[] = {0xf4}; /* hlt (IF=0: the end) */
    put(ram, 0x3200, h_gp, sizeof h_gp);
    gate(ram, 13, 0x3200);
    const uint8_t code[] = {
        0x0f, 0x01, 0x15, PSEUD & 0xff, PSEUD >> 8, 0, 0,       /* lgdt [PSEUD] */
        0x0f, 0x01, 0x1d, (PSEUD + 8) & 0xff, PSEUD >> 8, 0, 0, /* lidt [PSEUD+8] */
        0xb9, 0x03, 0x00, 0x00, 0x00,                           /* mov ecx,3 */
        /* L (+19): */
        0x49,                               /* dec ecx */
        0x0f, 0x84, 0x00, 0x10, 0x00, 0x00, /* jz +0x1000: past the limit */
        0x90,                               /* nop */
        0xeb, 0xf6,                         /* jmp L */
    };
    put(ram, 0x200000, code, sizeof code);
    f->m->clock.deadline = UINT64_MAX; /* no timer */
    nm_timer_cancel(&f->m->clock, &f->tick);
    nm_cpu_enter_flat32(f->c, 0x200000, 0x90000);
    f->c->seg[NM_CS].limit = 0x200fff; /* (the descriptor cache: LGDT leaves CS alone) */
    run(f, 0, listener);
    uint32_t esp = nm_cpu_get_reg(f->c, NM_ESP);
    memcpy(eip_pushed, ram + esp + 4, 4); /* above the error code */
    *insns = nm_cpu_instructions(f->c);
    *clocks = f->m->clock.cycles;
    fx_free(f);
    g_free(f);
}

static void test_jcc_beyond_limit(void)
{
    uint32_t e0, e1;
    uint64_t n0, n1, k0, k1;
    gp_case(true, &e0, &n0, &k0);
    gp_case(false, &e1, &n1, &k1);
    g_assert_cmphex(e0, ==, 0x200014); /* the JZ */
    g_assert_cmphex(e1, ==, e0);
    g_assert_cmpuint(n1, ==, n0);
    g_assert_cmpuint(k1, ==, k0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cpu/fastloop/same-as-stepped", test_same_as_stepped);
    g_test_add_func("/cpu/fastloop/jcc-beyond-limit", test_jcc_beyond_limit);
    return g_test_run();
}
