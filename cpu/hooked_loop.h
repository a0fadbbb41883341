/* The run loop with a listener (cpu.c's run_hooked and run_hooked_model),
 * as an inline function: a cost model instantiates it with its own insn
 * hook (nm_cpu_hooks.run), which the compiler then inlines.  Internal to
 * the CPU and its cost models. */
#ifndef NICEMU_CPU_HOOKED_LOOP_H
#define NICEMU_CPU_HOOKED_LOOP_H

#include "cpu/core.h"

/* cpu.c: the end of an instruction for the reported paths (traps, the
 * interrupt shadow, INTR), and the hooks of one instruction when the
 * listener changed under the loop. */
void cpu_post_insn(nm_cpu *c, uint32_t tf);
void cpu_run_hooks(nm_cpu *c, const nm_insn *i);

/* The most instructions the loop runs between two looks at a stop asked
 * for from outside the guest. */
#define NM_HOOKED_CHUNK 65536u

/* Instructions until the step limit, at most NM_HOOKED_CHUNK (c->steps <
 * limit). */
static inline uint64_t nm_cpu_hooked_budget(const nm_cpu *c, uint64_t limit)
{
    uint64_t s = limit - c->steps;
    return s < NM_HOOKED_CHUNK ? s : NM_HOOKED_CHUNK;
}

/* Whether every instruction that starts in the page of EIP (up to 15
 * bytes) ends within the CS limit.  (EIP less than the page offset: the
 * base wraps, and the answer is no.) */
static inline bool nm_cpu_hooked_page_ok(const nm_cpu *c, uint32_t cs_base, uint32_t cs_limit)
{
    uint32_t eip_base = c->eip - ((cs_base + c->eip) & 0xfffu);
    return (uint64_t)eip_base + 0xfffu + 14u <= cs_limit;
}

/* Runs the k instructions from e (a cost model's stretch: nm_cpu_hooked_loop),
 * which neither fault nor touch memory nor move EIP but by their length;
 * returns the last one's entry.  (Out of the loop: its registers.) */
static __attribute__((noinline)) const ic_entry *nm_cpu_run_stretch(nm_cpu *c, const ic_entry *e,
                                                                    unsigned k)
{
    uint32_t at = c->eip;
    for (unsigned j = 1;; j++) {
        /* (none reads EIP: no nm_insn.sync, so the run handler is the
         * handler, exec_run_handler) */
        at += e->insn.len;
        e->run_fn(c, &e->insn);
        if (j == k) break;
        e = e->seq;
    }
    c->eip = at;
    c->cur_insn = &e->insn;
    c->instructions += k;
    c->steps += k;
    return e;
}

/* A stretch (nm_cpu_hooked_loop's `ahead`) whose last instruction is a
 * near conditional jump, which runs with the others (the flag in the count
 * the model returns); its outcome then goes to the model's `ahead_branch`. */
#define NM_STRETCH_BRANCH 0x80000000u
/* ... and that Jcc jumps back to the stretch's first instruction: the loop
 * may run it again at once while it does, up to cpu->stretch_reps times in
 * all, and tells the model how many more it ran (`ahead_branch`). */
#define NM_STRETCH_LOOP 0x40000000u

/* nm_cpu_run_stretch, the last of the k instructions a near conditional
 * jump that cannot fault (the model's promise: a flat CS), run with EIP at
 * the byte after it; whether it jumped. */
static __attribute__((noinline)) bool nm_cpu_run_stretch_branch(nm_cpu *c, const ic_entry **pe,
                                                                unsigned k)
{
    const ic_entry *e = *pe;
    uint32_t at = c->eip;
    for (unsigned j = 1; j < k; j++) {
        at += e->insn.len;
        e->run_fn(c, &e->insn);
        e = e->seq;
    }
    const uint32_t next = at + e->insn.len;
    c->insn_eip = at;
    c->eip = next;
    c->cur_insn = &e->insn;
    e->insn.fn(c, &e->insn);
    c->instructions += k;
    c->steps += k;
    *pe = e;
    return c->eip != next;
}

/* The branches whose outcome is a condition (the others are always taken,
 * even to the next instruction): the branch hook's `taken`. */
static const bool nm_cpu_conditional_op[NM_OP_COUNT] = {
    [NM_OP_JCC] = true,    [NM_OP_LOOP] = true, [NM_OP_LOOPE] = true,
    [NM_OP_LOOPNE] = true, [NM_OP_JCXZ] = true, [NM_OP_INTO] = true,
};

/* A listener set, no trace, TF, RF and instruction breakpoints clear: the
 * steps of step_reported, following the decoded-instruction cache from an
 * instruction to its sequential successor as run_fast does.  Leaves on the
 * same conditions as run_fast (the listener removed or replaced flushes
 * the TLB, which resets fetch_lin).
 *
 * model_only: the listener is a cost model alone (an insn hook that does
 * not read ea, no code reports).  insn: NULL, or the listener's own insn
 * hook named at compile time, so that a cost model's instance of the loop
 * (nm_cpu_hooks.run) has its insn hook inlined; it gets `seq` too: true
 * when its last call returned in this loop and nothing has run since but
 * this instruction (no interrupt or trap delivered, no resync: EIP, CS and
 * cpu->hook_resync are as that call left them).  branch: NULL, or the
 * listener's own branch hook named likewise.  ahead: NULL, or the cost
 * model's stretch (named likewise), asked before each instruction: how
 * many instructions from e it knows the outcome of (and has applied), none
 * of which can fault, touch memory or move EIP but by its length, so that
 * the loop runs them without a hook (nm_cpu_run_stretch).  Its `ok`: the
 * last insn hook returned in this loop and nothing ran since (`seq`), and
 * the page is 32-bit code within the CS limit (EIP does not wrap in it);
 * the model also leaves the stretch alone while a full check is due
 * (cpu->fast_exit), and when its clocks would reach `deadline` from `now`
 * or its instructions use up `budget`.  ahead_branch: NULL, or the cost
 * model's (named likewise) for a stretch whose count it returns with
 * NM_STRETCH_BRANCH: the last of them a near conditional jump that cannot
 * fault, run with the others; its outcome (`taken`) then, which returns
 * the clocks the model adds to the stretch's for it.  With NM_STRETCH_LOOP
 * too, the jump goes back to the stretch's first instruction, and the loop
 * runs the stretch again while it does, up to cpu->stretch_reps times in
 * all: `again`, the times it ran after the first (all but the last
 * jumping back), and `taken`, the last one's outcome. */
static inline __attribute__((always_inline)) void nm_cpu_hooked_loop(
    nm_cpu *c, uint64_t limit, const bool model_only,
    uint32_t (*const insn)(void *opaque, nm_cpu *cpu, const nm_insn *i, bool seq),
    void (*const branch)(void *opaque, uint32_t from, uint32_t to, bool taken),
    unsigned (*const ahead)(void *opaque, nm_cpu *cpu, const ic_entry *e, bool ok, uint64_t now,
                            uint64_t deadline, uint64_t budget, uint32_t *cost),
    uint32_t (*const ahead_branch)(void *opaque, nm_cpu *cpu, bool taken, uint32_t again))
{
    nm_clock *const clk = c->clock;
    nm_machine *const m = c->m;
    c->insn_eip = c->eip; /* the fetch may fault */
    c->insn_esp = c->gpr[NM_ESP];
    const ic_entry *e = icache_fetch_entry(c);
    uint32_t flin = c->fetch_lin;
    const uint32_t cs_limit = c->seg[NM_CS].limit;
    const uint32_t cs_base = c->seg[NM_CS].base;
    const uint32_t eip_mask = c->code32 ? 0xffffffffu : 0xffffu;
    /* Whether every instruction starting in the fetch page ends within the
     * CS limit (a flat segment: always but in the last page), so that
     * their own test is not needed */
    bool page_ok = nm_cpu_hooked_page_ok(c, cs_base, cs_limit);
    /* (ahead: 32-bit code, the page within the limit: EIP does not wrap
     * in it) */
    const bool code32 = c->code32;
    bool page_ahead = page_ok && code32;
    /* The listener as it is now: nm_cpu_set_hooks flushes the TLB, so while
     * fetch_lin is unchanged these are still c->hooks (else run_hooks reads
     * them again), and so are CS and the fetch page. */
    const nm_cpu_hooks h = c->hooks;
    /* model_only: an insn hook that does not read ea, and no code reports
     * (the cost models) */
    const bool code_mem = !model_only && h.mem && !h.mem_ignores_code;
    /* The deadline moves only when an event is scheduled: by a device
     * (I/O: NM_SYNC_CHECK; MMIO: fast_exit) or between instructions
     * (post_insn); read again after those. */
    uint64_t deadline = clk->deadline;
    /* Instructions before the step limit or the next look at a stop asked
     * for from outside the guest (a signal, the window closed): as in
     * run_fast, every NM_HOOKED_CHUNK at most.  A stop asked for by a
     * device (the exit port, a reset, a panic on the console, the snapshot
     * point) comes from an I/O or MMIO access, looked at after it. */
    uint64_t budget = nm_cpu_hooked_budget(c, limit);
    /* The first instruction gets the full check (INTR may be pending). */
    c->fast_exit = NM_FAST_EXIT;
    c->hook_resync = true;
    bool seq = false;
    for (;;) {
        const nm_insn *i = &e->insn;
        const uint32_t eip = c->eip;
        const unsigned len = i->len;
        c->insn_eip = eip;
        c->insn_esp = c->gpr[NM_ESP];
        if (unlikely(!page_ok) && (uint64_t)eip + (len - 1u) > cs_limit) cpu_raise(c, NM_EXC_GP, 0);
        const uint32_t next = eip + len;
        c->eip = next & eip_mask;
        c->cur_insn = i;
        i->fn(c, i);
        c->instructions++;
        c->steps++;
        if (likely(c->fetch_lin == flin)) {
            /* run_hooks with the listener held here */
            uint32_t cost = 1;
            if (code_mem) {
                uint32_t lin = cs_base + eip;
                h.mem(h.opaque, lin, c->fetch_phys | (lin & 0xfff), len, NM_MEM_CODE);
            }
            if ((i->opflags & NM_OPF_BRANCH) && (branch || h.branch)) {
                bool taken = !nm_cpu_conditional_op[i->op] || c->eip != eip + len;
                (branch ? branch : h.branch)(h.opaque, eip, c->eip, taken);
            }
            if (model_only || h.insn) {
                nm_insn *hi = (nm_insn *)i;
                if (!model_only)
                    hi->ea = (i->dst == NM_OPK_MEM || i->src == NM_OPK_MEM) ? c->last_ea : 0;
                cost = insn ? insn(h.opaque, c, hi, seq) : h.insn(h.opaque, c, hi);
                seq = true;
            }
            clk->cycles += cost;
        } else if (c->have_hooks) {
            cpu_run_hooks(c, i);
            seq = false;
        } else {
            clk->cycles += 1;
        }
        /* TF, RF, INTR, the interrupt shadow and data breakpoints change
         * only through an instruction with NM_SYNC_CHECK or a slow memory
         * path (fast_exit): as in run_fast, only then (or while one of them
         * is still pending) are they looked at. */
        if (unlikely(c->fast_exit | (i->sync & NM_SYNC_CHECK))) {
            c->fast_exit = 0;
            if ((c->eflags & (NM_FLAG_TF | NM_FLAG_RF)) | (uint32_t)m->intr |
                (uint32_t)c->inhibit_irq | c->dr_hit) {
                cpu_post_insn(c, 0);
                seq = false;
                if (c->eflags & (NM_FLAG_TF | NM_FLAG_RF)) return; /* step_reported */
                if (c->inhibit_irq | (m->intr && (c->eflags & NM_FLAG_IF)) | (c->dr_hit != 0))
                    c->fast_exit = NM_FAST_EXIT;
            }
            deadline = clk->deadline;
            if (m->stop_requested || c->steps >= limit) return;
            budget = nm_cpu_hooked_budget(c, limit) + 1; /* (the test below takes one) */
        }
        if (unlikely(clk->cycles >= deadline || --budget == 0)) {
            if (!(clk->cycles < deadline && !m->stop_requested && c->steps < limit)) return;
            budget = nm_cpu_hooked_budget(c, limit);
        }
        const ic_entry *n = e->seq;
        if (likely(n && c->eip == next && n->tag == e->tag + ((uint64_t)len << 1) &&
                   c->fetch_lin == flin)) {
            e = n;
        } else {
            if (c->fetch_lin != flin) return; /* HLT, mode change, flush: the outer loop */
        lookup:
            c->insn_eip = c->eip;
            c->insn_esp = c->gpr[NM_ESP];
            e = icache_fetch_entry(c);
            if (c->fetch_lin != flin) {
                flin = c->fetch_lin;
                page_ok = nm_cpu_hooked_page_ok(c, cs_base, cs_limit);
                page_ahead = page_ok && code32;
            }
        }
        if (ahead) {
            /* A stretch the model knows from here: its instructions run
             * alone, then the model's outcome for all of them at once.
             * They neither fault nor touch memory nor move EIP but by
             * their length (the model's promise: nm_insn_regonly), so
             * nothing but their registers can tell.  The
             * model leaves the deadline and the budget ahead of them. */
            uint32_t cost;
            /* Without ahead_branch (the Pentium's instance) the plain case
             * below is written out on its own: folded into the one after
             * it, the same plain case compiled differently there and the
             * Pentium's cpubench measured 120.4 host instructions a guest
             * instruction against 119.4. */
            if (!ahead_branch) {
                const unsigned k =
                    ahead(h.opaque, c, e, seq && page_ahead, clk->cycles, deadline, budget, &cost);
                if (k) {
                    e = nm_cpu_run_stretch(c, e, k);
                    clk->cycles += cost;
                    budget -= k;
                    n = ic_successor(e);
                    if (!n) goto lookup;
                    e = n;
                }
                continue;
            }
            unsigned k =
                ahead(h.opaque, c, e, seq && page_ahead, clk->cycles, deadline, budget, &cost);
            if (k & NM_STRETCH_BRANCH) {
                /* ending in a conditional jump: its outcome's clocks and
                 * state are the model's (within the deadline and the
                 * budget either way); a loop's body again while it jumps
                 * back, as many times as the model allows */
                const bool loop = k & NM_STRETCH_LOOP;
                k &= ~(NM_STRETCH_BRANCH | NM_STRETCH_LOOP);
                const ic_entry *const head = e;
                const uint32_t head_eip = c->eip;
                bool taken = nm_cpu_run_stretch_branch(c, &e, k);
                uint32_t again = 0;
                if (loop) {
                    const uint32_t reps = c->stretch_reps;
                    while (taken && c->eip == head_eip && again + 1 < reps) {
                        e = head;
                        taken = nm_cpu_run_stretch_branch(c, &e, k);
                        again++;
                    }
                }
                clk->cycles += cost + ahead_branch(h.opaque, c, taken, again);
                budget -= k * (again + 1);
                if (taken) goto lookup;
                n = ic_successor(e);
                if (!n) goto lookup;
                e = n;
            } else if (k) {
                e = nm_cpu_run_stretch(c, e, k);
                clk->cycles += cost;
                budget -= k;
                n = ic_successor(e);
                if (!n) goto lookup;
                e = n;
            }
        }
    }
}

#endif
