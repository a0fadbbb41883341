/* Fast-forward of a guest polling a device register, exactly.
 *
 * Linux's serial console waits for the transmitter by reading the UART's
 * LSR in a loop (wait_for_xmitr: the read, udelay(1), a countdown); at 9600
 * baud that loop is most of a boot's instructions.  When the loop's
 * iterations provably do the same thing, and nothing can change what the
 * register returns before the clock's next event, running k more of them
 * changes only the counters and the countdown: this does that at once.
 * The guest sees exactly what it would have seen (the same instructions,
 * clocks, memory and device state at every later point); docs/cpu.md.
 *
 * How an iteration is proven the same:
 *  1. Two reads of a register whose device says a repeat of the read has no
 *     effect and returns the same value until an event (nm_io_ops.
 *     repeatable), from the same instruction, with the same value, and the
 *     registers, EFLAGS and EIP the same after each.
 *  2. The next iteration is recorded: run step by step with the TLB's fast
 *     tags dropped, so every memory access is logged (the bytes a write
 *     replaced too).  It must end at the same read with the same registers,
 *     every step of it an instruction recorded, with no other I/O, no
 *     event (the deadline as it was), exception or interrupt, no TLB fill
 *     or slow memory path (MMIO, a page walk, a page boundary), and no
 *     instruction that may change the mode (NM_SYNC_CHECK) but the read:
 *     every other one is pure (registers, flags and memory alone).
 *  3. Every byte it wrote holds what it held before, but for one dword W:
 *     written by a DEC of it, one less, with no other access to it; the
 *     instruction after the DEC is a JZ that was not taken, and the flags
 *     the DEC wrote are all written again before anything else reads them
 *     (only flag-neutral instructions in between).  So W's value decides
 *     nothing but that JZ, which goes the same way while W stays above 1.
 * Then k iterations are done at once: W -= k, the counters and the clock
 * advance by k times the iteration's (a repeatable read is on no bus
 * with counters of its own: nm_io_read_repeatable);
 * k keeps the clock before the next event and W above zero, and the
 * instructions within the step limit. */
#include "cpu/core.h"

#include "emu/core/log.h"

#include <string.h>

/* The machine's state after the instruction just run. */
static void point_now(nm_cpu *c, nm_poll_point *p, const nm_poll_point *io)
{
    memcpy(p->gpr, c->gpr, sizeof p->gpr);
    p->eflags = cpu_get_eflags(c);
    p->eip = c->eip;
    p->insn_eip = c->insn_eip;
    p->port = io->port;
    p->size = io->size;
    p->value = io->value;
    p->cycles = c->clock->cycles;
    p->instructions = c->instructions;
    p->steps = c->steps;
}

static bool same_point(const nm_poll_point *a, const nm_poll_point *b)
{
    return !memcmp(a->gpr, b->gpr, sizeof a->gpr) && a->eflags == b->eflags && a->eip == b->eip &&
           a->insn_eip == b->insn_eip && a->port == b->port && a->size == b->size &&
           a->value == b->value;
}

/* (io_in / io_out call it only when enabled and with no listener: setting
 * one abandons any poll, nm_cpu_set_hooks) */
void cpu_poll_io(nm_cpu *c, uint16_t port, unsigned size, uint32_t value, bool repeatable)
{
    nm_poll *p = &c->poll;
    if (repeatable && !p->io_seen) {
        p->io_seen = true;
        p->seen.port = port;
        p->seen.size = (uint8_t)size;
        p->seen.value = value;
    } else {
        p->io_other = true;
    }
}

void cpu_poll_record_insn(nm_cpu *c, const nm_insn *i)
{
    nm_poll *p = &c->poll;
    if (p->n_insns == NM_POLL_MAX_INSNS) {
        p->bad = true; /* (cpu_poll_after stops the recording) */
        return;
    }
    nm_poll_insn *r = &p->insns[p->n_insns++];
    r->eip = c->insn_eip;
    r->op = i->op;
    r->opsize = i->opsize;
    r->dst = i->dst;
    r->cond = i->cond;
    r->sync = i->sync;
    r->len = i->len;
}

void cpu_poll_record_access(nm_cpu *c, uint32_t phys, const uint8_t *host, unsigned size,
                            bool write)
{
    nm_poll *p = &c->poll;
    if (p->n_accesses == NM_POLL_MAX_ACCESSES || size > 4 || p->n_insns == 0) {
        p->bad = true;
        return;
    }
    nm_poll_access *a = &p->accesses[p->n_accesses++];
    a->phys = phys;
    a->size = (uint8_t)size;
    a->write = write;
    a->insn = (uint16_t)(p->n_insns - 1);
    if (write) memcpy(a->old, host, size);
}

static void start_recording(nm_cpu *c)
{
    nm_poll *p = &c->poll;
    p->recording = true;
    p->bad = false;
    p->n_insns = p->n_accesses = 0;
    p->rec_deadline = c->clock->deadline;
    cpu_tlb_fast_tags(c, false);
}

static void stop_recording(nm_cpu *c)
{
    c->poll.recording = false;
    cpu_tlb_fast_tags(c, true);
}

/* Instructions that neither read nor write the arithmetic flags. */
static bool flag_neutral(const nm_poll_insn *r)
{
    switch (r->op) {
    case NM_OP_MOV:
    case NM_OP_MOVZX:
    case NM_OP_MOVSX:
    case NM_OP_LEA:
    case NM_OP_PUSH:
    case NM_OP_POP:
    case NM_OP_CALL:
    case NM_OP_RET:
    case NM_OP_JMP:
    case NM_OP_NOP: return true;
    default: return false;
    }
}

/* Instructions that write OF, SF, ZF, AF and PF from their result alone. */
static bool flag_writer(const nm_poll_insn *r)
{
    switch (r->op) {
    case NM_OP_ADD:
    case NM_OP_OR:
    case NM_OP_AND:
    case NM_OP_SUB:
    case NM_OP_XOR:
    case NM_OP_CMP:
    case NM_OP_TEST:
    case NM_OP_INC:
    case NM_OP_DEC:
    case NM_OP_NEG: return true;
    default: return false;
    }
}

/* Whether access a overlaps [phys, phys + 4). */
static bool overlaps(const nm_poll_access *a, uint32_t phys)
{
    return a->phys < phys + 4 && phys < a->phys + a->size;
}

/* The recorded iteration (from `last` to `now`) checked as the comment at
 * the top says; returns its counter's physical address, or 1 (never a
 * dword's address: odd) when it cannot be fast-forwarded. */
static uint32_t counter_of(nm_cpu *c, const nm_poll_point *last, const nm_poll_point *now)
{
    const nm_poll *p = &c->poll;
    const uint32_t n = p->n_insns;
    const uint64_t dins = now->instructions - last->instructions;
    if (p->bad || n == 0 || dins != n || now->steps - last->steps != dins ||
        c->clock->deadline != p->rec_deadline || p->insns[n - 1].eip != now->insn_eip)
        return 1;
    for (uint32_t k = 0; k + 1 < n; k++)
        if (p->insns[k].sync & NM_SYNC_CHECK) return 1;
    /* the DEC m32 that writes the one dword that changed */
    uint32_t w = 1, dec = 0;
    for (uint32_t k = 0; k < p->n_accesses; k++) {
        const nm_poll_access *a = &p->accesses[k];
        if (!a->write) continue;
        for (unsigned b = 0; b < a->size; b++) {
            uint32_t phys = a->phys + b;
            /* the byte's value before the iteration: the first write's */
            uint8_t before = a->old[b];
            bool first = true;
            for (uint32_t j = 0; j < k && first; j++) {
                const nm_poll_access *e = &p->accesses[j];
                if (e->write && phys - e->phys < e->size) first = false;
            }
            if (!first) continue;
            uint8_t after;
            const uint8_t *host = nm_memmap_page_ptr(c->mem, phys & ~0xfffu, true);
            if (!host) return 1;
            after = host[phys & 0xfff];
            if (after == before) continue;
            /* a changed byte: part of the counter */
            const nm_poll_insn *r = &p->insns[a->insn];
            if (r->op != NM_OP_DEC || r->dst != NM_OPK_MEM || r->opsize != 4 || a->size != 4)
                return 1;
            if (w != 1 && w != a->phys) return 1;
            w = a->phys;
            dec = a->insn;
        }
    }
    if (w == 1 || (w & 0xfff) > 0xffc) return 1;
    /* W: one read and one write, both the DEC's, and nothing else near */
    unsigned reads = 0, writes = 0;
    for (uint32_t k = 0; k < p->n_accesses; k++) {
        const nm_poll_access *a = &p->accesses[k];
        if (!overlaps(a, w)) continue;
        if (a->insn != dec || a->phys != w || a->size != 4) return 1;
        if (a->write)
            writes++;
        else
            reads++;
    }
    if (reads != 1 || writes != 1) return 1;
    /* the JZ right after it, not taken */
    const nm_poll_insn *jz = &p->insns[(dec + 1) % n];
    const nm_poll_insn *after = &p->insns[(dec + 2) % n];
    if (jz->op != NM_OP_JCC || jz->cond != 4 || after->eip != jz->eip + jz->len) return 1;
    /* the DEC's flags written again before anything reads them */
    for (uint32_t k = 2; k < n; k++) {
        const nm_poll_insn *r = &p->insns[(dec + k) % n];
        if (flag_writer(r)) return w;
        if (!flag_neutral(r)) return 1;
    }
    return 1;
}

static bool try_skip(nm_cpu *c, const nm_poll_point *last, const nm_poll_point *now, uint64_t limit)
{
    nm_clock *clk = c->clock;
    const uint32_t w = counter_of(c, last, now);
    if (w == 1 || c->m->stop_requested) return false;
    const uint64_t dins = now->instructions - last->instructions;
    const uint64_t dcyc = now->cycles - last->cycles;
    uint8_t *host = nm_memmap_page_ptr(c->mem, w & ~0xfffu, true);
    if (!host || nm_memmap_page_is_watched(c->mem, w & ~0xfffu) || dcyc < dins) return false;
    uint32_t v;
    memcpy(&v, host + (w & 0xfff), 4);
    /* iteration j's DEC leaves v - j, which must not be 0 */
    uint64_t k = v ? (uint64_t)v - 1 : UINT32_MAX;
    /* the clock stays before the next event, the steps before the limit */
    if (clk->deadline != UINT64_MAX) {
        if (clk->deadline <= clk->cycles) return true; /* a loop, but no room now */
        uint64_t kc = (clk->deadline - clk->cycles - 1) / dcyc;
        if (kc < k) k = kc;
    }
    if (limit != UINT64_MAX) {
        if (limit <= c->steps) return true;
        uint64_t ks = (limit - c->steps - 1) / dins;
        if (ks < k) k = ks;
    }
    if (k == 0) return true;
    v -= (uint32_t)k;
    memcpy(host + (w & 0xfff), &v, 4);
    c->instructions += k * dins;
    c->steps += k * dins;
    clk->cycles += k * dcyc;
    c->poll.skips++;
    nm_debug(CPU, "poll at %08x fast-forwarded %llu iterations of %llu instructions", now->insn_eip,
             (unsigned long long)k, (unsigned long long)dins);
    return true;
}

/* A recorded iteration that is not a loop to fast-forward: the next polls
 * are not recorded, for twice as many as last time (up to 4096). */
static void fail(nm_poll *p)
{
    p->backoff = p->backoff ? (p->backoff < 2048 ? p->backoff * 2 : 4096) : 1;
    p->wait = p->backoff;
}

bool cpu_poll_after(nm_cpu *c, uint64_t limit, bool may_record)
{
    nm_poll *p = &c->poll;
    const bool seen = p->io_seen, other = p->io_other;
    p->io_seen = p->io_other = false;
    if (p->recording) {
        if (other) p->bad = true;
        if (p->bad) {
            /* not a loop to fast-forward: run on at full speed, and record
             * at this read again only after a while (poll.backoff) */
            stop_recording(c);
            fail(p);
            return false;
        }
        if (!seen) return false;
        /* a repeatable read: the iteration ends here */
        stop_recording(c);
        nm_poll_point now;
        point_now(c, &now, &p->seen);
        if (same_point(&p->last, &now) && try_skip(c, &p->last, &now, limit)) {
            p->backoff = 0;
        } else {
            fail(p);
        }
        point_now(c, &p->last, &p->seen);
        p->have = 1;
        return false;
    }
    if (!seen) {
        if (other) p->have = 0;
        return false;
    }
    nm_poll_point now;
    point_now(c, &now, &p->seen);
    if (p->wait) p->wait--;
    if (p->have && may_record && !p->wait && same_point(&p->last, &now) && !c->have_hooks) {
        p->last = now;
        start_recording(c);
        return true;
    }
    p->last = now;
    p->have = 1;
    return false;
}

void cpu_poll_abandon(nm_cpu *c)
{
    nm_poll *p = &c->poll;
    if (p->recording) stop_recording(c);
    p->have = 0;
    p->io_seen = p->io_other = false;
}

uint64_t nm_cpu_poll_skips(const nm_cpu *c)
{
    return c->poll.skips;
}
