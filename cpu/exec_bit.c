/* Bit test/modify, bit scan and SETcc (SDM vol. 2A: BT, BTS, BTR, BTC,
 * BSF, BSR, SETcc). */
#include "cpu/exec.h"

static void set_cf(nm_cpu *c, bool cf)
{
    uint32_t f = cpu_get_eflags(c);
    flags_set_arith(c, cf ? f | NM_FLAG_CF : f & ~NM_FLAG_CF);
}

/* BT* set CF to the bit; OF is undefined: the 486 and Pentium models keep
 * it, the 386 sets it to the top two bits XORed of the operand rotated
 * right by the bit offset (fits every point test386.asm's author measured
 * on a 386SX, where his README calls it RCR's OF with CF clear). */
static void bt_flags(nm_cpu *c, uint32_t v, unsigned n, unsigned bits)
{
    if (!cpu_is386(c)) {
        set_cf(c, (v >> n) & 1);
        return;
    }
    bool of = ((v >> ((n + bits - 1) % bits)) ^ (v >> ((n + bits - 2) % bits))) & 1;
    uint32_t f = cpu_get_eflags(c) & ~(NM_FLAG_CF | NM_FLAG_OF);
    flags_set_arith(c, f | (((v >> n) & 1) ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0));
}

static uint32_t bit_op(unsigned op, uint32_t v, uint32_t bit)
{
    switch (op) {
    case 1: return v | bit;  /* BTS */
    case 2: return v & ~bit; /* BTR */
    case 3: return v ^ bit;  /* BTC */
    default: return v;
    }
}

static void bt_common(nm_cpu *c, const nm_insn *i, uint32_t offset, bool from_reg)
{
    unsigned sz = i->opsize, bits = 8 * sz;
    unsigned op = i->cond;
    if (i->mod == 3) {
        uint32_t v = reg_get(c, i->rm, sz), bit = 1u << (offset & (bits - 1));
        bt_flags(c, v, offset & (bits - 1), bits);
        if (op) reg_set(c, i->rm, sz, bit_op(op, v, bit));
        return;
    }
    uint32_t ea = insn_ea(c, i);
    if (from_reg) {
        /* A register bit offset is signed and may reach outside the operand
         * (SDM vol. 2A, BT: "bit base"). */
        int32_t so = sz == 2 ? (int16_t)offset : (int32_t)offset;
        ea += (uint32_t)((so >> (sz == 2 ? 4 : 5)) * (int32_t)sz);
        if (!i->addr32) ea &= 0xffff;
    }
    uint32_t bit = 1u << (offset & (bits - 1));
    uint32_t v = mem_read(c, i->seg, ea, sz);
    if (op) mem_write(c, i->seg, ea, bit_op(op, v, bit), sz);
    bt_flags(c, v, offset & (bits - 1), bits);
}

void h_bt_G(nm_cpu *c, const nm_insn *i)
{
    bt_common(c, i, reg_get(c, i->reg, i->opsize), true);
}
void h_bt_I(nm_cpu *c, const nm_insn *i)
{
    bt_common(c, i, i->imm, false);
}

static void set_zf(nm_cpu *c, bool zf)
{
    uint32_t f = cpu_get_eflags(c);
    flags_set_arith(c, zf ? f | NM_FLAG_ZF : f & ~NM_FLAG_ZF);
}

void h_bsf(nm_cpu *c, const nm_insn *i)
{
    uint32_t v = rm_read(c, i, i->opsize);
    if (!v) {
        set_zf(c, true); /* destination unchanged */
        return;
    }
    reg_set(c, i->reg, i->opsize, (uint32_t)__builtin_ctz(v));
    set_zf(c, false);
}

void h_bsr(nm_cpu *c, const nm_insn *i)
{
    uint32_t v = rm_read(c, i, i->opsize);
    if (!v) {
        set_zf(c, true);
        return;
    }
    reg_set(c, i->reg, i->opsize, 31u - (uint32_t)__builtin_clz(v));
    set_zf(c, false);
}

void h_setcc(nm_cpu *c, const nm_insn *i)
{
    rm_write(c, i, 1, flags_cond(c, i->cond));
}
