/* MUL, IMUL (three forms), DIV, IDIV (SDM vol. 2A/2B).  Multiplies set CF
 * and OF when the high half is significant; SF, ZF, AF, PF are undefined
 * (we set SF/ZF/PF from the low result, AF clear: deterministic).  Divide by
 * zero or a quotient that does not fit raises #DE (a fault). */
#include "cpu/exec.h"

static void mul_flags(nm_cpu *c, bool overflow, uint32_t low, unsigned szi)
{
    /* All six arithmetic flags are written: the lazy ones need not be
     * worked out first. */
    uint32_t f = szp_flags(low, szi);
    if (overflow) f |= NM_FLAG_CF | NM_FLAG_OF;
    flags_set_arith(c, f);
}

void h_mul(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t s = rm_read(c, i, sz);
    if (sz == 1) {
        uint32_t r = (c->gpr[NM_EAX] & 0xff) * s;
        reg_set(c, NM_EAX, 2, r);
        mul_flags(c, (r >> 8) != 0, r, 0);
    } else if (sz == 2) {
        uint32_t r = (c->gpr[NM_EAX] & 0xffff) * s;
        reg_set(c, NM_EAX, 2, r);
        reg_set(c, NM_EDX, 2, r >> 16);
        mul_flags(c, (r >> 16) != 0, r, 1);
    } else {
        uint64_t r = (uint64_t)c->gpr[NM_EAX] * s;
        c->gpr[NM_EAX] = (uint32_t)r;
        c->gpr[NM_EDX] = (uint32_t)(r >> 32);
        mul_flags(c, (r >> 32) != 0, (uint32_t)r, 2);
    }
}

void h_imul1(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t s = rm_read(c, i, sz);
    if (sz == 1) {
        int32_t r = (int32_t)(int8_t)c->gpr[NM_EAX] * (int8_t)s;
        reg_set(c, NM_EAX, 2, (uint32_t)r);
        mul_flags(c, r != (int8_t)r, (uint32_t)r, 0);
    } else if (sz == 2) {
        int32_t r = (int32_t)(int16_t)c->gpr[NM_EAX] * (int16_t)s;
        reg_set(c, NM_EAX, 2, (uint32_t)r);
        reg_set(c, NM_EDX, 2, (uint32_t)r >> 16);
        mul_flags(c, r != (int16_t)r, (uint32_t)r, 1);
    } else {
        int64_t r = (int64_t)(int32_t)c->gpr[NM_EAX] * (int32_t)s;
        c->gpr[NM_EAX] = (uint32_t)r;
        c->gpr[NM_EDX] = (uint32_t)((uint64_t)r >> 32);
        mul_flags(c, r != (int32_t)r, (uint32_t)r, 2);
    }
}

static void imul_to_reg(nm_cpu *c, const nm_insn *i, uint32_t a, uint32_t b)
{
    unsigned sz = i->opsize;
    if (sz == 2) {
        int32_t r = (int32_t)(int16_t)a * (int16_t)b;
        reg_set(c, i->reg, 2, (uint32_t)r);
        mul_flags(c, r != (int16_t)r, (uint32_t)r, 1);
    } else {
        int64_t r = (int64_t)(int32_t)a * (int32_t)b;
        c->gpr[i->reg] = (uint32_t)r;
        mul_flags(c, r != (int32_t)r, (uint32_t)r, 2);
    }
}

void h_imul2(nm_cpu *c, const nm_insn *i)
{
    uint32_t s = rm_read(c, i, i->opsize);
    imul_to_reg(c, i, reg_get(c, i->reg, i->opsize), s);
}

void h_imul3(nm_cpu *c, const nm_insn *i)
{
    imul_to_reg(c, i, rm_read(c, i, i->opsize), i->imm);
}

void h_div(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t s = rm_read(c, i, sz);
    if (s == 0) cpu_raise(c, NM_EXC_DE, 0);
    if (sz == 1) {
        uint32_t n = c->gpr[NM_EAX] & 0xffff, q = n / s;
        if (q > 0xff) cpu_raise(c, NM_EXC_DE, 0);
        reg_set(c, NM_EAX, 2, (n % s) << 8 | q);
    } else if (sz == 2) {
        uint32_t n = (c->gpr[NM_EDX] & 0xffff) << 16 | (c->gpr[NM_EAX] & 0xffff), q = n / s;
        if (q > 0xffff) cpu_raise(c, NM_EXC_DE, 0);
        reg_set(c, NM_EAX, 2, q);
        reg_set(c, NM_EDX, 2, n % s);
    } else {
        uint64_t n = (uint64_t)c->gpr[NM_EDX] << 32 | c->gpr[NM_EAX], q = n / s;
        if (q > 0xffffffffu) cpu_raise(c, NM_EXC_DE, 0);
        c->gpr[NM_EAX] = (uint32_t)q;
        c->gpr[NM_EDX] = (uint32_t)(n % s);
    }
}

void h_idiv(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t s = rm_read(c, i, sz);
    if (s == 0) cpu_raise(c, NM_EXC_DE, 0);
    if (sz == 1) {
        int32_t n = (int16_t)c->gpr[NM_EAX], d = (int8_t)s, q = n / d;
        if (q > 127 || q < -128) cpu_raise(c, NM_EXC_DE, 0);
        reg_set(c, NM_EAX, 2, ((uint32_t)(n % d) & 0xff) << 8 | ((uint32_t)q & 0xff));
    } else if (sz == 2) {
        int32_t n = (int32_t)((c->gpr[NM_EDX] & 0xffff) << 16 | (c->gpr[NM_EAX] & 0xffff));
        int32_t d = (int16_t)s;
        /* INT32_MIN / -1 would overflow the host division itself. */
        if (n == INT32_MIN && d == -1) cpu_raise(c, NM_EXC_DE, 0);
        int32_t q = n / d;
        if (q > 32767 || q < -32768) cpu_raise(c, NM_EXC_DE, 0);
        reg_set(c, NM_EAX, 2, (uint32_t)q);
        reg_set(c, NM_EDX, 2, (uint32_t)(n % d));
    } else {
        int64_t n = (int64_t)((uint64_t)c->gpr[NM_EDX] << 32 | c->gpr[NM_EAX]);
        int64_t d = (int32_t)s;
        if (n == INT64_MIN && d == -1) cpu_raise(c, NM_EXC_DE, 0);
        int64_t q = n / d;
        if (q > INT32_MAX || q < INT32_MIN) cpu_raise(c, NM_EXC_DE, 0);
        c->gpr[NM_EAX] = (uint32_t)q;
        c->gpr[NM_EDX] = (uint32_t)(n % d);
    }
}
