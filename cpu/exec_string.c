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

/* Runs `one` up to the budget; returns false to stop early (CMPS/SCAS). */
#define REP_LOOP(body)                                                                             \
    do {                                                                                           \
        bool a32 = i->addr32, stop = false;                                                        \
        (void)stop;                                                                                \
        if (!is_rep(i)) {                                                                          \
            c->rep_iterations = 1;                                                                 \
            c->rep_unfinished = false;                                                             \
            body;                                                                                  \
            break;                                                                                 \
        }                                                                                          \
        uint32_t n = sreg_get(c, NM_ECX, a32), done = 0;                                           \
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

void h_movs(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    int32_t st = step_of(c, sz);
    REP_LOOP({
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
    REP_LOOP({
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
