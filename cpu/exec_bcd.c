/* Decimal adjust instructions (SDM vol. 2A: DAA, DAS, AAA, AAS, AAM, AAD).
 * Undefined flags: on the 486 and Pentium models AAA/AAS set SZP from the
 * result and clear OF, DAA/DAS clear OF, AAD/AAM clear CF, OF and AF.  The
 * 386 models give the 386's own values (cpu_is386; docs/cpu.md "Model
 * corner cases"). */
#include "cpu/exec.h"

#define FLAG_IF(cond, flag) ((cond) ? (flag) : 0u)

/* The 386's OF of DAA/DAS: that of AL plus (minus) the whole correction
 * (0, 6, 60H or 66H) as one byte ADD (SUB). */
static uint32_t daa_das_of386(uint32_t old_al, uint32_t al, bool sub)
{
    uint32_t corr = sub ? (old_al - al) & 0xff : (al - old_al) & 0xff;
    uint32_t of = sub ? (old_al ^ corr) & (old_al ^ al) : (old_al ^ al) & (corr ^ al);
    return FLAG_IF(of & 0x80, NM_FLAG_OF);
}

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
    if (cpu_is386(c)) f |= daa_das_of386(old_al, al, false);
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
    if (cpu_is386(c)) f |= daa_das_of386(old_al, al, true);
    flags_set_arith(c, f);
}

/* The 386's SF, ZF, PF and OF of AAA and AAS (test386.asm's README, from a
 * 386SX): which of the three cases (low digit above 9, AF set, neither)
 * applies decides them, from AL before and after the adjustment. */
static uint32_t aaa_aas_flags386(uint32_t old_al, uint32_t new_al, bool digit, bool adj, bool sub)
{
    uint32_t f = parity_flag(new_al);
    if (!sub) {
        f |= FLAG_IF(old_al >= 0x7a && old_al <= 0xf9, NM_FLAG_SF);
        if (digit)
            f |= FLAG_IF((old_al & 0xf0) == 0x70, NM_FLAG_OF) | FLAG_IF(new_al == 0, NM_FLAG_ZF);
        else if (!adj)
            f |= FLAG_IF(old_al == 0, NM_FLAG_ZF);
    } else {
        if (digit)
            f |= FLAG_IF(old_al > 0x85, NM_FLAG_SF);
        else if (adj)
            f |= FLAG_IF(old_al >= 0x80 && old_al <= 0x85, NM_FLAG_OF) |
                 FLAG_IF(old_al < 0x06 || old_al > 0x85, NM_FLAG_SF);
        else
            f |= FLAG_IF(old_al >= 0x80, NM_FLAG_SF);
        f |= FLAG_IF(new_al == 0, NM_FLAG_ZF);
    }
    return f;
}

static void aaa_aas(nm_cpu *c, bool sub)
{
    uint32_t f = cpu_get_eflags(c);
    uint32_t ax = c->gpr[NM_EAX] & 0xffff, old_al = ax & 0xff;
    bool digit = (ax & 0x0f) > 9, adj = digit || (f & NM_FLAG_AF);
    if (adj) {
        /* SDM: AAA adds 106H to AX; AAS subtracts 6 from AX and 1 from AH. */
        if (sub)
            ax = ((ax - 6) & 0xffff) - 0x100;
        else
            ax += 0x106;
        ax &= 0xffff;
    }
    uint32_t new_al = ax & 0xff;
    ax = (ax & 0xff00) | (ax & 0x0f);
    reg_set(c, NM_EAX, 2, ax);
    f &= ~NM_FLAGS_ARITH;
    f |= cpu_is386(c) ? aaa_aas_flags386(old_al, new_al, digit, adj, sub) : szp_flags(ax & 0xff, 0);
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
    uint32_t lo = ax & 0xff, prod = (((ax >> 8) & 0xff) * base) & 0xff;
    uint32_t al = (lo + prod) & 0xff;
    reg_set(c, NM_EAX, 2, al);
    uint32_t f = (cpu_get_eflags(c) & ~NM_FLAGS_ARITH) | szp_flags(al, 0);
    /* The 386: CF, OF and AF of the byte ADD of AL and AH * imm8. */
    if (cpu_is386(c))
        f |= FLAG_IF(lo + prod > 0xff, NM_FLAG_CF) | FLAG_IF((lo ^ prod ^ al) & 0x10, NM_FLAG_AF) |
             FLAG_IF((lo ^ al) & (prod ^ al) & 0x80, NM_FLAG_OF);
    flags_set_arith(c, f);
}
