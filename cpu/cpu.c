/* The CPU core: creation and reset, the run loop (fetch through the
 * decoded-instruction cache, dispatch through the handler pointer), the
 * exception landing pad, interrupts, HLT, the hooks, register access and
 * the state dump. */
#include "cpu/core.h"
#include "cpu/hooked_loop.h"

#include <glib.h>
#include <inttypes.h>

#include "emu/core/log.h"

void icache_watch_cb(void *opaque, uint32_t paddr, unsigned len);

/* Vectors that push an error code (SDM vol. 3A, table 6-1). */
static bool vector_has_error(int v)
{
    return v == NM_EXC_DF || (v >= NM_EXC_TS && v <= NM_EXC_PF) || v == NM_EXC_AC;
}

_Noreturn void cpu_raise(nm_cpu *c, int vector, uint32_t error_code)
{
    c->pending_vector = vector;
    c->pending_error = error_code;
    c->pending_has_error = vector_has_error(vector);
    if (!c->fault_jmp) {
        /* Only the run loop executes guest code: an exception anywhere else
         * is an emulator bug, not a guest action. */
        g_error("cpu: exception %d raised outside nm_cpu_run", vector);
    }
    longjmp(*c->fault_jmp, 1);
}

_Noreturn void cpu_raise_noerr(nm_cpu *c, int vector)
{
    cpu_raise(c, vector, 0);
}

void cpu_update_mode(nm_cpu *c)
{
    c->pe = c->cr0 & NM_CR0_PE;
    c->vm86 = c->pe && (c->eflags & NM_FLAG_VM);
    c->paging = (c->cr0 & NM_CR0_PG) && c->pe;
    bool pm = c->pe && !c->vm86;
    c->code32 = pm && (c->seg[NM_CS].flags & NM_SEGF_DB);
    c->stack32 = pm && (c->seg[NM_SS].flags & NM_SEGF_DB);
    /* CPL is SS.DPL in protected mode (equal to CS.RPL once CS is loaded,
     * and 0 between setting CR0.PE and the first far jump). */
    c->cpl = !c->pe ? 0 : c->vm86 ? 3 : (c->seg[NM_SS].flags & NM_SEGF_DPL) >> NM_SEGF_DPL_SHIFT;
    c->fetch_lin = 1;
    bool ac = (c->cr0 & NM_CR0_AM) && (c->eflags & NM_FLAG_AC);
    if (ac != c->ac_on) {
        c->ac_on = ac;
        cpu_tlb_flush_all(c); /* user fast tags depend on it */
    }
}

bool nm_cpu_set_icache_bits(nm_cpu *c, unsigned bits)
{
    return icache_set_bits(c, bits);
}

nm_cpu *nm_cpu_new(nm_machine *m)
{
    nm_cpu *c = g_new0(nm_cpu, 1);
    c->m = m;
    c->clock = &m->clock;
    c->mem = m->mem;
    c->io = m->io;
    c->model = m->model;
    c->fpu_kind = m->model->fpu;
    c->strict_isa = m->settings.strict_isa;
    c->poll.enabled = m->settings.poll_fast_forward;
    c->icache = icache_new();
    c->a20_mask = 0xffffffffu;
    nm_memmap_set_write_watch(m->mem, icache_watch_cb, c);
    if (!m->cpu) m->cpu = c;
    trace_init(c);
    nm_cpu_reset(c);
    return c;
}

void nm_cpu_free(nm_cpu *c)
{
    if (!c) return;
    if (c->m->cpu == c) c->m->cpu = NULL;
    if (c->mem->watch_opaque == c) nm_memmap_set_write_watch(c->mem, NULL, NULL);
    trace_free(c);
    icache_free(c->icache);
    g_free(c);
}

static void set_seg(nm_segment *s, uint16_t sel, uint32_t base, uint32_t limit, uint16_t flags)
{
    s->selector = sel;
    s->base = base;
    s->limit = limit;
    s->flags = flags;
}

void nm_cpu_reset(nm_cpu *c)
{
    /* SDM vol. 3A, 9.1.1, table 9-1. */
    memset(c->gpr, 0, sizeof c->gpr);
    c->gpr[NM_EDX] = c->model->reset_edx;
    c->eip = 0xfff0;
    c->eflags = 2;
    c->lf_op = LF_NONE;
    for (int s = 0; s < NM_SEG_COUNT; s++)
        set_seg(&c->seg[s], 0, 0, 0xffff, 0x93);
    set_seg(&c->seg[NM_CS], 0xf000, 0xffff0000u, 0xffff, 0x9b);
    set_seg(&c->ldtr, 0, 0, 0xffff, 0x82);
    set_seg(&c->tr, 0, 0, 0xffff, 0x8b);
    c->gdtr = (nm_dtr){0, 0xffff};
    c->idtr = (nm_dtr){0, 0xffff};
    /* The 486 and Pentium come up with CD, NW and ET set; the 386 with ET
     * set when a 387 answers at reset (386 Programmer's Reference Manual,
     * 10.1), clear otherwise. */
    c->cr0 = c->model->family >= NM_CPU_486 ? 0x60000010u
             : c->fpu_kind != NM_FPU_NONE   ? NM_CR0_ET
                                            : 0;
    fpu_reset(c);
    c->cr2 = c->cr3 = c->cr4 = 0;
    memset(c->dr, 0, sizeof c->dr);
    c->dr[6] = 0xffff0ff0u;
    c->dr[7] = 0x400;
    c->tsc_offset = (uint64_t)0 - c->clock->cycles; /* RESET zeroes the TSC */
    memset(c->msr_misc, 0, sizeof c->msr_misc);
    c->halted = false;
    c->inhibit_irq = c->inhibit_fresh = false;
    c->pending_vector = -1;
    c->exception_depth = 0;
    c->ac_on = false;
    cpu_update_mode(c);
    cpu_tlb_flush_all(c);
    icache_flush(c);
}

void nm_cpu_enter_flat32(nm_cpu *c, uint32_t eip, uint32_t esp)
{
    c->cr0 |= NM_CR0_PE;
    c->cr0 &= ~(NM_CR0_PG | NM_CR0_CD | NM_CR0_NW);
    c->eflags = 2;
    c->lf_op = LF_NONE;
    for (int s = 0; s < NM_SEG_COUNT; s++)
        set_seg(&c->seg[s], 0x10, 0, 0xffffffffu, 0xc093);
    set_seg(&c->seg[NM_CS], 0x08, 0, 0xffffffffu, 0xc09b);
    c->eip = eip;
    c->gpr[NM_ESP] = esp;
    c->halted = false;
    cpu_update_mode(c);
    cpu_tlb_flush_all(c);
}

void nm_cpu_flush_translations(nm_cpu *c)
{
    cpu_tlb_flush_all(c);
}

void nm_cpu_set_hooks(nm_cpu *c, const nm_cpu_hooks *hooks)
{
    if (hooks)
        c->hooks = *hooks;
    else
        memset(&c->hooks, 0, sizeof c->hooks);
    c->have_hooks =
        c->hooks.insn || c->hooks.mem || c->hooks.io || c->hooks.branch || c->hooks.interrupt;
    c->mem_log =
        c->hooks.mem && c->hooks.mem_log ? c->hooks.mem_log(c->hooks.opaque) : (nm_mem_log){0};
    cpu_poll_abandon(c);  /* a poll is fast-forwarded with no listener only */
    cpu_tlb_flush_all(c); /* fast TLB tags are off while a memory hook listens */
}

uint64_t nm_cpu_instructions(const nm_cpu *c)
{
    return c->instructions;
}
bool nm_cpu_halted(const nm_cpu *c)
{
    return c->halted;
}

uint32_t nm_cpu_get_reg(const nm_cpu *c, int reg)
{
    return reg >= 0 && reg < 8 ? c->gpr[reg] : 0;
}
void nm_cpu_set_reg(nm_cpu *c, int reg, uint32_t value)
{
    if (reg >= 0 && reg < 8) c->gpr[reg] = value;
}
uint32_t nm_cpu_get_eip(const nm_cpu *c)
{
    return c->eip;
}
void nm_cpu_set_eip(nm_cpu *c, uint32_t eip)
{
    c->eip = eip;
    c->halted = false;
}
uint32_t nm_cpu_get_eflags(nm_cpu *c)
{
    return cpu_get_eflags(c);
}
void nm_cpu_set_eflags(nm_cpu *c, uint32_t eflags)
{
    cpu_set_eflags(c, eflags, 0xffffffffu);
    cpu_update_mode(c);
}
const nm_segment *nm_cpu_get_segment(const nm_cpu *c, int seg)
{
    return seg >= 0 && seg < NM_SEG_COUNT ? &c->seg[seg] : NULL;
}

/* ---------------------------------------------------------- run loop */

static void deliver_external(nm_cpu *c)
{
    if (!c->m->intc.acknowledge) return;
    c->insn_eip = c->eip;
    c->insn_esp = c->gpr[NM_ESP];
    c->halted = false;
    unsigned v = c->m->intc.acknowledge(c->m->intc.opaque);
    if (c->have_hooks && c->hooks.interrupt)
        c->hooks.interrupt(c->hooks.opaque, v, NM_INT_EXTERNAL, c->eip);
    cpu_interrupt(c, v, NM_INT_EXTERNAL, false, 0, c->eip);
}

/* After an instruction: single-step and data-breakpoint traps, interrupt
 * shadow, INTR. */
void cpu_post_insn(nm_cpu *c, uint32_t tf)
{
    uint32_t hits = cpu_debug_take_hits(c);
    if (tf | hits) {
        /* TF set at the start: #DB trap after it (SDM vol. 3A, 17.3.1.4);
         * a data breakpoint hit: the same trap, DR6.Bn (17.3.1.2). */
        if (tf) c->dr[6] |= 0x4000;
        c->insn_eip = c->eip;
        c->insn_esp = c->gpr[NM_ESP];
        if (c->have_hooks && c->hooks.interrupt)
            c->hooks.interrupt(c->hooks.opaque, NM_EXC_DB, NM_INT_EXCEPTION, c->eip);
        cpu_deliver_exception(c, NM_EXC_DB, false, 0);
        c->exception_depth = 0;
        return;
    }
    if (c->inhibit_irq) {
        if (c->inhibit_fresh) {
            c->inhibit_fresh = false;
            return;
        }
        c->inhibit_irq = false;
    }
    if (c->m->intr && (c->eflags & NM_FLAG_IF)) deliver_external(c);
}

void cpu_run_hooks(nm_cpu *c, const nm_insn *i)
{
    uint32_t cost = 1;
    c->hook_resync = true;
    if (c->hooks.mem && !c->hooks.mem_ignores_code) {
        /* The code bytes (the fetch page's translation is still cached
         * unless the instruction itself changed it). */
        uint32_t lin = c->seg[NM_CS].base + c->insn_eip;
        c->hooks.mem(c->hooks.opaque, lin, c->fetch_phys | (lin & 0xfff), i->len, NM_MEM_CODE);
    }
    if ((i->opflags & NM_OPF_BRANCH) && c->hooks.branch) {
        uint32_t next = c->insn_eip + i->len;
        bool cond = i->op == NM_OP_JCC || i->op == NM_OP_LOOP || i->op == NM_OP_LOOPE ||
                    i->op == NM_OP_LOOPNE || i->op == NM_OP_JCXZ || i->op == NM_OP_INTO;
        c->hooks.branch(c->hooks.opaque, c->insn_eip, c->eip, !cond || c->eip != next);
    }
    if (c->hooks.insn) {
        /* The hook sees the cached instruction itself (its model_tag and
         * model_data are the model's to fill), with ea set for this run of
         * it; the interpreter never reads ea. */
        nm_insn *hi = (nm_insn *)i;
        hi->ea = (i->dst == NM_OPK_MEM || i->src == NM_OPK_MEM) ? c->last_ea : 0;
        cost = c->hooks.insn(c->hooks.opaque, c, hi);
    }
    c->clock->cycles += cost;
}

/* One instruction with the hooks reporting it, the trace on or TF set. */
static void step_reported(nm_cpu *c, bool tracing)
{
    c->insn_eip = c->eip;
    c->insn_esp = c->gpr[NM_ESP];
    /* EFLAGS.RF suppresses instruction breakpoints for one instruction
     * (SDM vol. 3A, 17.3.1.1); cleared once it completes, unless it is the
     * IRET that set it again.  A fault keeps it in the pushed image.  The
     * breakpoint comes before faults fetching the instruction (table 6-2). */
    uint32_t rf = c->eflags & NM_FLAG_RF;
    if (unlikely(c->dr_exec_mask) && !rf) cpu_debug_exec(c);
    const nm_insn *i = icache_fetch(c);
    const nm_segment *cs = &c->seg[NM_CS];
    if (unlikely(c->eip > cs->limit || cs->limit - c->eip < (uint32_t)i->len - 1u))
        cpu_raise(c, NM_EXC_GP, 0);
    uint32_t tf = c->eflags & NM_FLAG_TF;
    if (unlikely(tracing)) trace_insn(c, i);
    if (unlikely(c->poll.recording)) cpu_poll_record_insn(c, i);
    c->eip += i->len;
    if (!c->code32) c->eip &= 0xffff;
    c->cur_insn = i;
    i->fn(c, i);
    if (unlikely(rf) && i->op != NM_OP_IRET) c->eflags &= ~NM_FLAG_RF;
    c->instructions++;
    c->steps++;
    if (c->have_hooks)
        cpu_run_hooks(c, i);
    else
        c->clock->cycles += 1;
    if (unlikely(tf | (uint32_t)c->m->intr | (uint32_t)c->inhibit_irq | c->dr_hit))
        cpu_post_insn(c, tf);
}

/* Makes the counters hold `done` instructions of the current run beyond
 * its start (they hold run_added of them). */
static void run_settle(nm_cpu *c, uint32_t done)
{
    uint64_t d = (uint64_t)done - c->run_added; /* modulo 2^64: may go down */
    c->instructions += d;
    c->steps += d;
    c->clock->cycles += d;
    c->run_added = done;
}

/* fast_exit read again in the run loop's exit path (so that the test in
 * the loop stays one compare with memory). */
static inline uint8_t fast_exit_now(const nm_cpu *c)
{
    return *(const volatile uint8_t *)&c->fast_exit;
}

/* How many instructions of the current run come before run_cur. */
static uint32_t run_index(const nm_cpu *c)
{
    uint32_t k = 0;
    for (const ic_entry *e = c->run_head; e != c->run_cur; e = e->seq)
        k++;
    return k;
}

void cpu_run_sync_slow(nm_cpu *c)
{
    run_settle(c, run_index(c));
}

/* A run `DEC r32 ; JNZ` back to the DEC (ic_entry.run_dec_loop), about to
 * start: does at once every iteration that leaves the register non-zero
 * and fits the budget with one iteration to spare, as they would have run
 * (the register, the lazy flags of the last DEC with the carry kept,
 * two instructions, steps and clocks each; EIP is the DEC's again).  The
 * loop then goes on as usual.  Not with fast_exit set: a full check is due
 * after the next instruction (an interrupt may be waiting). */
static void dec_loop_ahead(nm_cpu *c, const ic_entry *e, uint64_t *budget)
{
    const unsigned r = e->insn.rm;
    const uint32_t r0 = c->gpr[r];
    /* Iterations until the one that makes it zero (2^32 from zero). */
    uint64_t j = (r0 ? r0 : 1ull << 32) - 1;
    if (j > (*budget - 2) / 2) j = (*budget - 2) / 2;
    if (j == 0) return;
    const uint32_t rj = r0 - (uint32_t)j;
    c->lf_carry_in = flags_cf_fast(c);
    lf_set(c, LF_DEC, 2, rj + 1, 1, rj);
    c->gpr[r] = rj;
    c->instructions += 2 * j;
    c->steps += 2 * j;
    c->clock->cycles += 2 * j;
    *budget -= 2 * j;
}

/* The most instructions run_fast runs between two full checks: a stop
 * requested by a signal handler is seen within this many. */
#define FAST_CHUNK 65536u

/* How many instructions run_fast may run before its next full check: each
 * costs one cycle and one step there, so the distance to the deadline and
 * to the step limit (both non-zero when it is called). */
static inline uint64_t fast_budget(const nm_cpu *c, uint64_t limit)
{
    uint64_t b = FAST_CHUNK;
    uint64_t d = c->clock->deadline - c->clock->cycles, s = limit - c->steps;
    if (d < b) b = d;
    if (s < b) b = s;
    return b;
}

/* No listener, no trace, TF clear: runs instructions until one of the run
 * loop's conditions needs the outer loop (deadline, stop, limit, TF, INTR,
 * the interrupt shadow, HLT, a mode change or TLB flush, a listener set).
 * Kept out of nm_cpu_run so that the compiler keeps its state in registers
 * (a function calling setjmp gets none).
 *
 * The conditions are looked at in full only after an instruction that may
 * change them: one with NM_SYNC_CHECK (I/O, system, far transfers, flag and
 * segment loads: decode.c), one that took a slow memory path (a device,
 * the page tables, a breakpoint: cpu->fast_exit), or the one that uses up
 * the budget (deadline and step limit: one cycle and one step each here).
 * Every other instruction changes only registers and RAM, so the outcome
 * is the same as looking after every instruction.
 *
 * Instructions go in runs: from a looked-up entry, the cached instructions
 * that follow it in the page up to one with no run handler (icache_run;
 * ic_entry.run_fn: none for those with NM_SYNC_END but a forward Jcc,
 * whose run handler only notes a jump, NM_FAST_TAKEN).  The ones before
 * the last need no EIP: they neither read nor move it, and a fault among
 * them finds its EIP from run_cur (nm_cpu_run's landing pad) and its ESP
 * unchanged (they write registers after their last possible fault).  The
 * last one runs with EIP, insn_eip and insn_esp kept, as every instruction
 * did before.  A DEC/JNZ busy-wait runs ahead (dec_loop_ahead). */
static inline __attribute__((always_inline)) void run_fast_loop(nm_cpu *c, uint64_t limit,
                                                                const uint32_t eip_mask)
{
    nm_clock *const clk = c->clock;
    nm_machine *const m = c->m;
    icache *const ic = c->icache;
    /* CS and the code size change only with cpu_update_mode, which resets
     * fetch_lin: we leave before the next instruction when they do. */
    const uint32_t cs_limit = c->seg[NM_CS].limit;
    const uint32_t cs_base = c->seg[NM_CS].base;
    const bool code32 = eip_mask == 0xffffffffu;
    /* The last offset a run may reach: the limit, and for 16-bit code no
     * wrap of IP inside a run. */
    const uint64_t run_limit = cs_limit < eip_mask ? cs_limit : eip_mask;
    uint64_t budget = fast_budget(c, limit);
    const ic_entry *e;
    const nm_insn *i;
    uint32_t eip = c->eip;
    /* The first instruction gets the full check (INTR may be pending). */
    c->fast_exit = NM_FAST_EXIT;
    for (;;) {
        /* ---- the page EIP is in: its translation, where its entries and
         * its generation are, and whether the CS limit (and for 16-bit code
         * the wrap of IP) spares every offset in it */
        const uint32_t lin0 = cs_base + eip;
        if (unlikely((lin0 & ~0xfffu) != c->fetch_lin)) {
            c->insn_eip = eip; /* the translation may fault */
            c->insn_esp = c->gpr[NM_ESP];
            c->fetch_phys = fetch_phys_page(c, lin0);
            c->fetch_lin = lin0 & ~0xfffu;
        }
        const uint32_t flin = c->fetch_lin, page_phys = c->fetch_phys;
        const uint32_t eip_base = eip - (lin0 & 0xfffu); /* EIP of the page's first byte */
        const bool page_ok = (lin0 & 0xfffu) <= eip && (uint64_t)eip_base + 0xfffu <= run_limit;
        ic_entry *const page_e = &ic->e[page_phys & ic->mask];
        const uint64_t page_tag = ic_tag(page_phys, code32);
        const uint32_t *const genp = ic_gen(ic, page_phys);
        uint32_t off;
        while ((off = eip - eip_base) <= 0xfffu) {
            /* ---- the instruction at EIP and its run */
            e = page_e + off;
            uint64_t n = 1;
            if (likely(e->tag == page_tag + ((uint64_t)off << 1) && page_ok)) {
                n = e->run_n;
                if (unlikely(e->run_gen != *genp || n == 0)) n = icache_run((ic_entry *)e, *genp);
                if (unlikely(e->run_dec_loop) && budget >= 4 && !c->fast_exit)
                    dec_loop_ahead(c, e, &budget);
                if (n > budget) n = budget;
            } else {
                /* A miss (decoded now: may fault), or a page the CS limit
                 * cuts: this one alone, its last byte within the limit. */
                c->insn_eip = eip;
                c->insn_esp = c->gpr[NM_ESP];
                if (e->tag != page_tag + ((uint64_t)off << 1))
                    e = icache_miss(c, page_e + off, cs_base + eip, page_phys | off,
                                    page_tag + ((uint64_t)off << 1));
                if ((uint64_t)eip + (e->insn.len - 1u) > cs_limit) cpu_raise(c, NM_EXC_GP, 0);
            }
            budget -= n;
            if (n > 1) {
                /* ---- the run but its last instruction.  The counters go
                 * up for all of them at once (a device that looks at the
                 * clock from inside the run, a fault and an early exit
                 * make them exact: run_settle). */
                const ic_entry *const head = e;
                const uint32_t k0 = (uint32_t)n - 1;
                c->run_head = head;
                c->run_eip = eip;
                c->run_added = k0;
                c->instructions += k0;
                c->steps += k0;
                clk->cycles += k0;
                uint32_t k = k0;
                do {
                    c->run_cur = e;
                    e->run_fn(c, &e->insn);
                    if (unlikely(c->fast_exit)) {
                        /* Leave after this one (done, counted): EIP and
                         * what the full check (and a listener just set)
                         * read of it.  ESP is the one after it (no listener
                         * can be set by a store: the measurement window
                         * opens through a port).  A Jcc that jumps moves
                         * EIP to its target, which must be within the CS
                         * limit (else #GP, the Jcc not done); with nothing
                         * else to look at, no full check is due. */
                        const uint32_t done = k0 - k + 1;
                        /* (a Jcc did not overwrite itself: its tag holds) */
                        eip = fast_exit_now(c) == NM_FAST_TAKEN
                                  ? eip_base + ((uint32_t)(e->tag >> 1) & 0xfffu)
                                  : c->run_eip + (uint32_t)(e - head);
                        uint32_t next = eip + e->insn.len;
                        if (fast_exit_now(c) & NM_FAST_TAKEN) {
                            next += e->insn.disp;
                            if (unlikely(next > cs_limit)) {
                                run_settle(c, done - 1);
                                c->run_cur = NULL;
                                c->insn_eip = eip;
                                c->insn_esp = c->gpr[NM_ESP];
                                cpu_raise(c, NM_EXC_GP, 0);
                            }
                        }
                        run_settle(c, done);
                        c->run_cur = NULL;
                        i = &e->insn;
                        c->insn_eip = eip;
                        c->insn_esp = c->gpr[NM_ESP];
                        c->eip = next & eip_mask;
                        if (fast_exit_now(c) == NM_FAST_TAKEN) {
                            c->fast_exit = 0;
                            budget += n - done; /* the ones not run */
                            eip = c->eip;
                            goto next;
                        }
                        goto full;
                    }
                    e = e->seq;
                } while (--k);
                c->run_cur = NULL;
                /* (its offset in the page from its tag: no division) */
                eip = eip_base + ((uint32_t)(e->tag >> 1) & 0xfffu);
            }
            /* ---- the last instruction, with EIP, insn_eip and insn_esp */
            i = &e->insn;
            c->insn_eip = eip;
            c->insn_esp = c->gpr[NM_ESP];
            c->eip = (eip + i->len) & eip_mask;
            i->fn(c, i);
            c->instructions++;
            c->steps++;
            clk->cycles++;
            eip = c->eip;
            if (likely(!(c->fast_exit | (i->sync & NM_SYNC_CHECK))) && likely(budget != 0))
                continue;
            goto full;
        next:
            if (likely(budget != 0)) continue;
        full:
            c->fast_exit = 0;
            if (c->fetch_lin != flin && c->have_hooks) {
                /* A listener may have been set by this very instruction (an
                 * I/O to the measurement marker; nm_cpu_set_hooks flushes
                 * the TLB): it sees the instruction, and its cost replaces
                 * our 1. */
                clk->cycles -= 1;
                cpu_run_hooks(c, i);
            }
            /* TF was clear at the start (the outer loop steps with TF set):
             * post_insn only for INTR and the shadow; TF just set by this
             * instruction traps after the next one, which the outer loop
             * runs.  INTR pending with IF=0 changes nothing: we go on (a
             * delivered interrupt moves EIP and resets fetch_lin, so the
             * test below leaves). */
            if ((c->eflags & (NM_FLAG_TF | NM_FLAG_RF)) | (uint32_t)m->intr |
                (uint32_t)c->inhibit_irq | c->dr_hit) {
                cpu_post_insn(c, 0);
                if (c->eflags & (NM_FLAG_TF | NM_FLAG_RF)) return; /* the reported path */
            }
            /* A read of a device register a poll loop may repeat (poll.c):
             * the loop is recorded step by step (the outer loop), or done
             * at once. */
            if (unlikely(c->poll.io_seen | c->poll.io_other) && cpu_poll_after(c, limit, true))
                return;
            if (!(clk->cycles < clk->deadline && !m->stop_requested && c->steps < limit)) return;
            if (c->fetch_lin != flin) return; /* HLT, mode change, flush: the outer loop */
            budget = fast_budget(c, limit);
            /* Still to look at after the next instruction: the end of the
             * interrupt shadow, an interrupt still pending and enabled. */
            if (c->inhibit_irq | (m->intr && (c->eflags & NM_FLAG_IF)) | (c->dr_hit != 0))
                c->fast_exit = NM_FAST_EXIT;
            eip = c->eip;
        }
    }
}

static void __attribute__((noinline)) run_fast32(nm_cpu *c, uint64_t limit)
{
    run_fast_loop(c, limit, 0xffffffffu);
}
static void __attribute__((noinline)) run_fast16(nm_cpu *c, uint64_t limit)
{
    run_fast_loop(c, limit, 0xffffu);
}

static void __attribute__((noinline)) run_hooked_model(nm_cpu *c, uint64_t limit)
{
    nm_cpu_hooked_loop(c, limit, true, NULL, NULL, NULL, NULL);
}
static void __attribute__((noinline)) run_hooked(nm_cpu *c, uint64_t limit)
{
    nm_cpu_hooked_loop(c, limit, false, NULL, NULL, NULL, NULL);
}

uint64_t nm_cpu_run(nm_cpu *c, uint64_t max_instructions)
{
    jmp_buf jb;
    jmp_buf *saved = c->fault_jmp;
    const uint64_t start_insns = c->instructions;
    /* 0 means no limit; the sum saturates (callers pass UINT64_MAX). */
    const uint64_t limit = (max_instructions && max_instructions <= UINT64_MAX - c->steps)
                               ? c->steps + max_instructions
                               : UINT64_MAX;
    const bool tracing = nm_log_enabled(EXEC, NM_LOG_DEBUG) && trace_active(c);
    nm_clock *clk = c->clock;
    nm_machine *m = c->m;

    c->fault_jmp = &jb;
    if (setjmp(jb)) {
        /* Landing pad: the instruction faulted.  Restore its start and
         * deliver (which may fault again: the system half escalates to #DF
         * and triple fault). */
        int v = c->pending_vector;
        c->pending_vector = -1;
        if (c->poll.recording) c->poll.bad = true; /* an exception: not a steady loop */
        if (c->run_cur) {
            /* In a run (run_fast_loop): the counters without this one, EIP
             * from the entry's place in the page; ESP is still the
             * instruction's start's. */
            run_settle(c, run_index(c));
            c->insn_eip = c->run_eip +
                          (uint32_t)((const ic_entry *)c->run_cur - (const ic_entry *)c->run_head);
            c->insn_esp = c->gpr[NM_ESP];
            c->run_cur = NULL;
        }
        c->dr_hit = 0; /* data breakpoints report only completed instructions */
        c->eip = c->insn_eip;
        c->gpr[NM_ESP] = c->insn_esp;
        c->steps++;
        clk->cycles += 1;
        if (c->have_hooks && c->hooks.interrupt)
            c->hooks.interrupt(c->hooks.opaque, (unsigned)v, NM_INT_EXCEPTION, c->insn_eip);
        cpu_deliver_exception(c, v, c->pending_has_error, c->pending_error);
        c->exception_depth = 0;
    }

    while (clk->cycles < clk->deadline && !m->stop_requested && c->steps < limit) {
        if (unlikely(c->halted)) {
            if (m->intr && (c->eflags & NM_FLAG_IF) && m->intc.acknowledge) {
                deliver_external(c);
                continue;
            }
            if (!(c->eflags & NM_FLAG_IF)) {
                nm_machine_request_stop(m, NM_STOP_HALT, 0, "HLT with interrupts disabled");
                break;
            }
            if (clk->deadline != UINT64_MAX) clk->cycles = clk->deadline;
            break;
        }
        if (unlikely(tracing || (c->eflags & (NM_FLAG_TF | NM_FLAG_RF)) || c->dr_exec_mask ||
                     c->poll.recording)) {
            step_reported(c, tracing);
            if (unlikely(c->poll.io_seen | c->poll.io_other | c->poll.recording))
                cpu_poll_after(c, limit, false);
            continue;
        }
        if (c->have_hooks) {
            if (c->hooks.insn && c->hooks.insn_ignores_ea &&
                !(c->hooks.mem && !c->hooks.mem_ignores_code))
                (c->hooks.run ? c->hooks.run : run_hooked_model)(c, limit);
            else
                run_hooked(c, limit);
            continue;
        }
        if (c->code32)
            run_fast32(c, limit);
        else
            run_fast16(c, limit);
    }
    c->fault_jmp = saved;
    return c->instructions - start_insns;
}

/* ------------------------------------------------------------- dump */

void nm_cpu_dump_state(nm_cpu *c, FILE *out)
{
    static const char *const gpr_names[8] = {"EAX", "ECX", "EDX", "EBX",
                                             "ESP", "EBP", "ESI", "EDI"};
    static const char *const seg_names[NM_SEG_COUNT] = {"ES", "CS", "SS", "DS", "FS", "GS"};
    uint32_t f = cpu_get_eflags(c);
    fprintf(out, "CPU %s: %s mode, CPL %d, %s code, %s stack%s%s\n", c->model->name,
            !c->pe    ? "real"
            : c->vm86 ? "virtual-8086"
                      : "protected",
            c->cpl, c->code32 ? "32-bit" : "16-bit", c->stack32 ? "32-bit" : "16-bit",
            c->paging ? ", paging" : "", c->halted ? ", halted" : "");
    for (int r = 0; r < 8; r++)
        fprintf(out, "%s=%08x%s", gpr_names[r], c->gpr[r], r == 3 || r == 7 ? "\n" : " ");
    fprintf(out, "EIP=%08x EFLAGS=%08x [%s%s%s%s%s%s%s%s%s%s%s%s IOPL=%u]\n", c->eip, f,
            f & NM_FLAG_CF ? "CF " : "", f & NM_FLAG_PF ? "PF " : "", f & NM_FLAG_AF ? "AF " : "",
            f & NM_FLAG_ZF ? "ZF " : "", f & NM_FLAG_SF ? "SF " : "", f & NM_FLAG_TF ? "TF " : "",
            f & NM_FLAG_IF ? "IF " : "", f & NM_FLAG_DF ? "DF " : "", f & NM_FLAG_OF ? "OF " : "",
            f & NM_FLAG_NT ? "NT " : "", f & NM_FLAG_VM ? "VM " : "", f & NM_FLAG_AC ? "AC " : "",
            (f >> 12) & 3);
    for (int s = 0; s < NM_SEG_COUNT; s++) {
        const nm_segment *g = &c->seg[s];
        fprintf(out, "%s=%04x base=%08x limit=%08x flags=%04x (type %x%s DPL%u%s%s%s)\n",
                seg_names[s], g->selector, g->base, g->limit, g->flags, g->flags & 0xf,
                g->flags & NM_SEGF_S ? "" : " system", (g->flags >> 5) & 3,
                g->flags & NM_SEGF_P ? " P" : " NP", g->flags & NM_SEGF_DB ? " D/B" : "",
                g->flags & NM_SEGF_G ? " G" : "");
    }
    fprintf(out, "LDTR=%04x base=%08x limit=%08x  TR=%04x base=%08x limit=%08x\n", c->ldtr.selector,
            c->ldtr.base, c->ldtr.limit, c->tr.selector, c->tr.base, c->tr.limit);
    fprintf(out, "GDTR=%08x/%04x IDTR=%08x/%04x\n", c->gdtr.base, c->gdtr.limit, c->idtr.base,
            c->idtr.limit);
    fprintf(out, "CR0=%08x CR2=%08x CR3=%08x CR4=%08x DR6=%08x DR7=%08x\n", c->cr0, c->cr2, c->cr3,
            c->cr4, c->dr[6], c->dr[7]);
    fprintf(out, "instructions=%" PRIu64 " cycles=%" PRIu64 " A20=%s\n", c->instructions,
            c->clock->cycles, c->a20_mask == 0xffffffffu ? "on" : "off");
}
