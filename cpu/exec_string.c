/* String instructions (SDM vol. 2B: MOVS, CMPS, SCAS, LODS, STOS, INS,
 * OUTS; REP/REPE/REPNE).  A REP instruction runs at most REP_BUDGET
 * iterations per step, then restarts itself (EIP stays on it) so that the
 * run loop can take interrupts and fire timers in between; ESI, EDI and ECX
 * are updated per iteration, so a fault or an interrupt resumes exactly.
 * Such a step has not retired the instruction: it leaves c->instructions
 * as it found it (the run loop adds one after every step) and sets
 * c->rep_unfinished, so the instruction counts once, on the step that
 * finishes it, however many steps it took. */
#include "cpu/exec.h"

#define REP_BUDGET 1024u

static inline uint32_t sreg_get(const nm_cpu *c, unsigned r, bool a32)
{
    return a32 ? c->gpr[r] : c->gpr[r] & 0xffff;
}
static inline void sreg_add(nm_cpu *c, unsigned r, int32_t d, bool a32)
{
    if (a32)
        c->gpr[r] += (uint32_t)d;
    else
        c->gpr[r] = (c->gpr[r] & 0xffff0000u) | ((c->gpr[r] + (uint32_t)d) & 0xffff);
}
static inline int32_t step_of(const nm_cpu *c, unsigned sz)
{
    return (c->eflags & NM_FLAG_DF) ? -(int32_t)sz : (int32_t)sz;
}
static inline bool is_rep(const nm_insn *i)
{
    return i->prefixes & (NM_PFX_REP | NM_PFX_REPNE);
}

/* Runs `one` up to the budget; returns false to stop early (CMPS/SCAS).
 * `done0` iterations of this step were done already (the bulk paths). */
#define REP_LOOP_FROM(done0, body)                                                                 \
    do {                                                                                           \
        bool a32 = i->addr32, stop = false;                                                        \
        (void)stop;                                                                                \
        if (!is_rep(i)) {                                                                          \
            c->rep_iterations = 1;                                                                 \
            c->rep_unfinished = false;                                                             \
            body;                                                                                  \
            break;                                                                                 \
        }                                                                                          \
        uint32_t n = sreg_get(c, NM_ECX, a32), done = (done0);                                     \
        while (n && done < REP_BUDGET) {                                                           \
            body;                                                                                  \
            n--;                                                                                   \
            done++;                                                                                \
            if (a32)                                                                               \
                c->gpr[NM_ECX] = n;                                                                \
            else                                                                                   \
                c->gpr[NM_ECX] = (c->gpr[NM_ECX] & 0xffff0000u) | n;                               \
            if (stop | c->dr_hit) break; /* a data breakpoint traps after its iteration */         \
        }                                                                                          \
        c->rep_iterations = done;                                                                  \
        c->rep_unfinished = n && !stop; /* (a breakpoint stop resumes after the #DB) */            \
        if (c->rep_unfinished) {                                                                   \
            c->eip = c->insn_eip; /* more to do: run again */                                      \
            c->instructions--;    /* not retired: counted by the step that ends it */              \
        }                                                                                          \
    } while (0)
#define REP_LOOP(body) REP_LOOP_FROM(0, body)

/* The bulk part of REP MOVS / REP STOS with 32-bit addressing and DF=0:
 * as many whole iterations as lie inside the current source and
 * destination pages (and the budget), done with host pointers when both
 * pages have fast TLB tags (RAM, no listener, no breakpoint, no decoded
 * code: none of those iterations can fault or be seen), element by
 * element in order (so an overlap copies as the CPU's loop does).  Moves
 * ESI, EDI, ECX; returns the iterations done.  The general loop does the
 * rest (a page crossing, a slow page, the last iterations). */
static uint32_t rep_bulk(nm_cpu *c, const nm_insn *i, unsigned sz, bool movs, uint32_t v)
{
    if (!is_rep(i) || !i->addr32 || (c->eflags & NM_FLAG_DF)) return 0;
    uint32_t done = 0;
    for (;;) {
        uint32_t n = c->gpr[NM_ECX];
        uint32_t k = REP_BUDGET - done < n ? REP_BUDGET - done : n;
        uint32_t di = c->gpr[NM_EDI], si = c->gpr[NM_ESI];
        uint32_t droom = (0x1000 - ((c->seg[NM_ES].base + di) & 0xfff)) / sz;
        if (droom < k) k = droom;
        if (movs) {
            uint32_t sroom = (0x1000 - ((c->seg[i->seg].base + si) & 0xfff)) / sz;
            if (sroom < k) k = sroom;
        }
        if (k == 0) return done;
        uint8_t *d = mem_write_ptr(c, NM_ES, di, k * sz);
        const uint8_t *s = movs ? mem_read_ptr(c, i->seg, si, k * sz) : NULL;
        if (!d || (movs && !s)) return done;
        if (movs) {
            for (uint32_t j = 0; j < k * sz; j += sz)
                host_put(d + j, host_get(s + j, sz), sz);
            c->gpr[NM_ESI] = si + k * sz;
        } else {
            for (uint32_t j = 0; j < k * sz; j += sz)
                host_put(d + j, v, sz);
        }
        c->gpr[NM_EDI] = di + k * sz;
        c->gpr[NM_ECX] = n - k;
        done += k;
    }
}

void h_movs(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    int32_t st = step_of(c, sz);
    uint32_t bulk = rep_bulk(c, i, sz, true, 0);
    REP_LOOP_FROM(bulk, {
        uint32_t v = mem_read(c, i->seg, sreg_get(c, NM_ESI, a32), sz);
        mem_write(c, NM_ES, sreg_get(c, NM_EDI, a32), v, sz);
        sreg_add(c, NM_ESI, st, a32);
        sreg_add(c, NM_EDI, st, a32);
    });
}

void h_stos(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    int32_t st = step_of(c, sz);
    uint32_t v = reg_get(c, NM_EAX, sz);
    uint32_t bulk = rep_bulk(c, i, sz, false, v);
    REP_LOOP_FROM(bulk, {
        mem_write(c, NM_ES, sreg_get(c, NM_EDI, a32), v, sz);
        sreg_add(c, NM_EDI, st, a32);
    });
}

void h_lods(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    int32_t st = step_of(c, sz);
    REP_LOOP({
        reg_set(c, NM_EAX, sz, mem_read(c, i->seg, sreg_get(c, NM_ESI, a32), sz));
        sreg_add(c, NM_ESI, st, a32);
    });
}

void h_cmps(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize, szi = szi_of(sz);
    int32_t st = step_of(c, sz);
    bool want_eq = i->prefixes & NM_PFX_REP; /* REPE: go on while equal */
    REP_LOOP({
        uint32_t a = mem_read(c, i->seg, sreg_get(c, NM_ESI, a32), sz);
        uint32_t b = mem_read(c, NM_ES, sreg_get(c, NM_EDI, a32), sz);
        sreg_add(c, NM_ESI, st, a32);
        sreg_add(c, NM_EDI, st, a32);
        lf_set(c, LF_SUB, szi, a, b, (a - b) & szi_mask(szi));
        stop = (a == b) != want_eq;
    });
}

void h_scas(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize, szi = szi_of(sz);
    int32_t st = step_of(c, sz);
    bool want_eq = i->prefixes & NM_PFX_REP;
    uint32_t a = reg_get(c, NM_EAX, sz);
    REP_LOOP({
        uint32_t b = mem_read(c, NM_ES, sreg_get(c, NM_EDI, a32), sz);
        sreg_add(c, NM_EDI, st, a32);
        lf_set(c, LF_SUB, szi, a, b, (a - b) & szi_mask(szi));
        stop = (a == b) != want_eq;
    });
}

void h_ins(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    int32_t st = step_of(c, sz);
    uint16_t port = (uint16_t)c->gpr[NM_EDX];
    io_check(c, port, sz);
    REP_LOOP({
        uint32_t di = sreg_get(c, NM_EDI, a32);
        /* Check the destination before the port read has side effects. */
        seg_lin(c, NM_ES, di, sz, true);
        mem_write(c, NM_ES, di, io_in(c, port, sz), sz);
        sreg_add(c, NM_EDI, st, a32);
    });
}

void h_outs(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    int32_t st = step_of(c, sz);
    uint16_t port = (uint16_t)c->gpr[NM_EDX];
    io_check(c, port, sz);
    REP_LOOP({
        io_out(c, port, mem_read(c, i->seg, sreg_get(c, NM_ESI, a32), sz), sz);
        sreg_add(c, NM_ESI, st, a32);
    });
}
