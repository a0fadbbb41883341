/* Decimal adjust instructions (SDM vol. 2A: DAA, DAS, AAA, AAS, AAM, AAD).
 * Undefined flags: AAA/AAS leave OF, SF, ZF, PF as the 486 computes them
 * from AL (we set SZP from the result, OF clear); DAA/DAS OF clear. */
#include "cpu/exec.h"

void h_daa(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    uint32_t f = cpu_get_eflags(c);
    uint32_t al = c->gpr[NM_EAX] & 0xff, old_al = al;
    bool old_cf = f & NM_FLAG_CF, cf = false, af = false;
    if ((al & 0x0f) > 9 || (f & NM_FLAG_AF)) {
        cf = old_cf || al > 0xf9;
        al = (al + 6) & 0xff;
        af = true;
    }
    if (old_al > 0x99 || old_cf) {
        al = (al + 0x60) & 0xff;
        cf = true;
    }
    set_reg8(c, 0, al);
    f = (f & ~NM_FLAGS_ARITH) | szp_flags(al, 0) | (cf ? NM_FLAG_CF : 0) | (af ? NM_FLAG_AF : 0);
    flags_set_arith(c, f);
}

void h_das(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    uint32_t f = cpu_get_eflags(c);
    uint32_t al = c->gpr[NM_EAX] & 0xff, old_al = al;
    bool old_cf = f & NM_FLAG_CF, cf = false, af = false;
    if ((al & 0x0f) > 9 || (f & NM_FLAG_AF)) {
        cf = old_cf || al < 6;
        al = (al - 6) & 0xff;
        af = true;
    }
    if (old_al > 0x99 || old_cf) {
        al = (al - 0x60) & 0xff;
        cf = true;
    }
    set_reg8(c, 0, al);
    f = (f & ~NM_FLAGS_ARITH) | szp_flags(al, 0) | (cf ? NM_FLAG_CF : 0) | (af ? NM_FLAG_AF : 0);
    flags_set_arith(c, f);
}

static void aaa_aas(nm_cpu *c, bool sub)
{
    uint32_t f = cpu_get_eflags(c);
    uint32_t ax = c->gpr[NM_EAX] & 0xffff;
    bool adj = (ax & 0x0f) > 9 || (f & NM_FLAG_AF);
    if (adj) {
        /* SDM: AAA adds 106H to AX; AAS subtracts 6 from AX and 1 from AH. */
        if (sub)
            ax = ((ax - 6) & 0xffff) - 0x100;
        else
            ax += 0x106;
        ax &= 0xffff;
    }
    ax = (ax & 0xff00) | (ax & 0x0f);
    reg_set(c, NM_EAX, 2, ax);
    f = (f & ~NM_FLAGS_ARITH) | szp_flags(ax & 0xff, 0);
    if (adj) f |= NM_FLAG_AF | NM_FLAG_CF;
    flags_set_arith(c, f);
}

void h_aaa(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    aaa_aas(c, false);
}
void h_aas(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    aaa_aas(c, true);
}

void h_aam(nm_cpu *c, const nm_insn *i)
{
    uint32_t base = i->imm & 0xff, al = c->gpr[NM_EAX] & 0xff;
    if (base == 0) cpu_raise(c, NM_EXC_DE, 0);
    uint32_t ax = (al / base) << 8 | (al % base);
    reg_set(c, NM_EAX, 2, ax);
    flags_set_arith(c, (cpu_get_eflags(c) & ~NM_FLAGS_ARITH) | szp_flags(ax & 0xff, 0));
}

void h_aad(nm_cpu *c, const nm_insn *i)
{
    uint32_t base = i->imm & 0xff, ax = c->gpr[NM_EAX];
    uint32_t al = ((ax & 0xff) + ((ax >> 8) & 0xff) * base) & 0xff;
    reg_set(c, NM_EAX, 2, al);
    flags_set_arith(c, (cpu_get_eflags(c) & ~NM_FLAGS_ARITH) | szp_flags(al, 0));
}
