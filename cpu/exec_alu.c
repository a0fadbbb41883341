/* ALU operations, TEST, INC/DEC/NEG/NOT, MOV and friends, exchanges
 * (SDM vol. 2, each instruction's page). */
#include "cpu/exec.h"

enum { ALU_ADD, ALU_OR, ALU_ADC, ALU_SBB, ALU_AND, ALU_SUB, ALU_XOR, ALU_CMP };

/* Computes a op b at size index szi and records the lazy flags. */
static inline uint32_t alu(nm_cpu *c, unsigned op, uint32_t a, uint32_t b, unsigned szi)
{
    uint32_t m = szi_mask(szi), r, cin;
    switch (op) {
    case ALU_ADD:
        r = (a + b) & m;
        lf_set(c, LF_ADD, szi, a, b, r);
        return r;
    case ALU_OR:
        r = a | b;
        lf_set_logic(c, szi, r);
        return r;
    case ALU_ADC:
        cin = flags_cf(c);
        r = (a + b + cin) & m;
        c->lf_carry_in = cin;
        lf_set(c, LF_ADC, szi, a, b, r);
        return r;
    case ALU_SBB:
        cin = flags_cf(c);
        r = (a - b - cin) & m;
        c->lf_carry_in = cin;
        lf_set(c, LF_SBB, szi, a, b, r);
        return r;
    case ALU_AND:
        r = a & b;
        lf_set_logic(c, szi, r);
        return r;
    case ALU_XOR:
        r = a ^ b;
        lf_set_logic(c, szi, r);
        return r;
    default: /* SUB, CMP */
        r = (a - b) & m;
        lf_set(c, LF_SUB, szi, a, b, r);
        return r;
    }
}

/* Specialised per operation so that `alu` folds to one case, and once more
 * for 32-bit operands (SZ a constant: the size tests fold away); the
 * decoder picks the 32-bit ones (exec.h). */
#define ALU_HANDLERS(name, op, SZ, sfx)                                                            \
    NM_FALLBACK static void h_##name##_EG##sfx(nm_cpu *c, const nm_insn *i)                        \
    {                                                                                              \
        unsigned sz = SZ, szi = szi_of(sz);                                                        \
        uint32_t b = reg_get(c, i->reg, sz);                                                       \
        if (i->mod == 3) {                                                                         \
            uint32_t r = alu(c, op, reg_get(c, i->rm, sz), b, szi);                                \
            if (op != ALU_CMP) reg_set(c, i->rm, sz, r);                                           \
        } else {                                                                                   \
            uint32_t ea = insn_ea(c, i);                                                           \
            uint32_t r = alu(c, op, mem_read(c, i->seg, ea, sz), b, szi);                          \
            if (op != ALU_CMP) mem_write(c, i->seg, ea, r, sz);                                    \
        }                                                                                          \
    }                                                                                              \
    NM_FALLBACK static void h_##name##_GE##sfx(nm_cpu *c, const nm_insn *i)                        \
    {                                                                                              \
        unsigned sz = SZ;                                                                          \
        uint32_t b = rm_read(c, i, sz);                                                            \
        uint32_t r = alu(c, op, reg_get(c, i->reg, sz), b, szi_of(sz));                            \
        if (op != ALU_CMP) reg_set(c, i->reg, sz, r);                                              \
    }                                                                                              \
    NM_FALLBACK static void h_##name##_EI##sfx(nm_cpu *c, const nm_insn *i)                        \
    {                                                                                              \
        unsigned sz = SZ, szi = szi_of(sz);                                                        \
        if (i->mod == 3) {                                                                         \
            uint32_t r = alu(c, op, reg_get(c, i->rm, sz), i->imm, szi);                           \
            if (op != ALU_CMP) reg_set(c, i->rm, sz, r);                                           \
        } else {                                                                                   \
            uint32_t ea = insn_ea(c, i);                                                           \
            uint32_t r = alu(c, op, mem_read(c, i->seg, ea, sz), i->imm, szi);                     \
            if (op != ALU_CMP) mem_write(c, i->seg, ea, r, sz);                                    \
        }                                                                                          \
    }

#define ALU_BOTH(name, op)                                                                         \
    ALU_HANDLERS(name, op, i->opsize, )                                                            \
    ALU_HANDLERS(name, op, 4u, _d)

ALU_BOTH(add, ALU_ADD)
ALU_BOTH(or, ALU_OR)
ALU_BOTH(adc, ALU_ADC)
ALU_BOTH(sbb, ALU_SBB)
ALU_BOTH(and, ALU_AND)
ALU_BOTH(sub, ALU_SUB)
ALU_BOTH(xor, ALU_XOR)
ALU_BOTH(cmp, ALU_CMP)

const nm_handler h_alu_EG[8] = {h_add_EG, h_or_EG,  h_adc_EG, h_sbb_EG,
                                h_and_EG, h_sub_EG, h_xor_EG, h_cmp_EG};
const nm_handler h_alu_GE[8] = {h_add_GE, h_or_GE,  h_adc_GE, h_sbb_GE,
                                h_and_GE, h_sub_GE, h_xor_GE, h_cmp_GE};
const nm_handler h_alu_EI[8] = {h_add_EI, h_or_EI,  h_adc_EI, h_sbb_EI,
                                h_and_EI, h_sub_EI, h_xor_EI, h_cmp_EI};
static const nm_handler h_alu_EG_d[8] = {h_add_EG_d, h_or_EG_d,  h_adc_EG_d, h_sbb_EG_d,
                                         h_and_EG_d, h_sub_EG_d, h_xor_EG_d, h_cmp_EG_d};
static const nm_handler h_alu_GE_d[8] = {h_add_GE_d, h_or_GE_d,  h_adc_GE_d, h_sbb_GE_d,
                                         h_and_GE_d, h_sub_GE_d, h_xor_GE_d, h_cmp_GE_d};

void h_test_EG(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t r = rm_read(c, i, sz) & reg_get(c, i->reg, sz);
    lf_set_logic(c, szi_of(sz), r);
}

NM_FALLBACK void h_test_EI(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t r = rm_read(c, i, sz) & i->imm;
    lf_set_logic(c, szi_of(sz), r);
}

/* INC/DEC keep CF (SDM vol. 2A, INC). */
static inline void incdec(nm_cpu *c, const nm_insn *i, bool dec, unsigned sz)
{
    unsigned szi = szi_of(sz);
    uint32_t cf = flags_cf(c), a, r;
    if (i->mod == 3) {
        a = reg_get(c, i->rm, sz);
        r = (dec ? a - 1 : a + 1) & szi_mask(szi);
        reg_set(c, i->rm, sz, r);
    } else {
        uint32_t ea = insn_ea(c, i);
        a = mem_read(c, i->seg, ea, sz);
        r = (dec ? a - 1 : a + 1) & szi_mask(szi);
        mem_write(c, i->seg, ea, r, sz);
    }
    c->lf_carry_in = cf;
    lf_set(c, dec ? LF_DEC : LF_INC, szi, a, 1, r);
}
void h_inc(nm_cpu *c, const nm_insn *i)
{
    incdec(c, i, false, i->opsize);
}
void h_dec(nm_cpu *c, const nm_insn *i)
{
    incdec(c, i, true, i->opsize);
}
NM_FALLBACK static void h_inc_d(nm_cpu *c, const nm_insn *i)
{
    incdec(c, i, false, 4);
}
NM_FALLBACK static void h_dec_d(nm_cpu *c, const nm_insn *i)
{
    incdec(c, i, true, 4);
}

void h_neg(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize, szi = szi_of(sz);
    uint32_t ea = i->mod == 3 ? 0 : insn_ea(c, i);
    uint32_t a = i->mod == 3 ? reg_get(c, i->rm, sz) : mem_read(c, i->seg, ea, sz);
    uint32_t r = (0 - a) & szi_mask(szi);
    if (i->mod == 3)
        reg_set(c, i->rm, sz, r);
    else
        mem_write(c, i->seg, ea, r, sz);
    lf_set(c, LF_SUB, szi, 0, a, r); /* NEG is 0 - x: CF = (x != 0) */
}

void h_not(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    if (i->mod == 3) {
        reg_set(c, i->rm, sz, ~reg_get(c, i->rm, sz));
    } else {
        uint32_t ea = insn_ea(c, i);
        mem_write(c, i->seg, ea, ~mem_read(c, i->seg, ea, sz), sz);
    }
}

NM_FALLBACK void h_mov_EG(nm_cpu *c, const nm_insn *i)
{
    rm_write(c, i, i->opsize, reg_get(c, i->reg, i->opsize));
}
NM_FALLBACK void h_mov_GE(nm_cpu *c, const nm_insn *i)
{
    reg_set(c, i->reg, i->opsize, rm_read(c, i, i->opsize));
}
NM_FALLBACK void h_mov_EI(nm_cpu *c, const nm_insn *i)
{
    rm_write(c, i, i->opsize, i->imm);
}
NM_FALLBACK static void h_mov_EG_d(nm_cpu *c, const nm_insn *i)
{
    rm_write(c, i, 4, c->gpr[i->reg]);
}
NM_FALLBACK static void h_mov_GE_d(nm_cpu *c, const nm_insn *i)
{
    c->gpr[i->reg] = rm_read(c, i, 4);
}
NM_FALLBACK static void h_mov_EI_d(nm_cpu *c, const nm_insn *i)
{
    rm_write(c, i, 4, i->imm);
}

NM_FALLBACK void h_movzx8(nm_cpu *c, const nm_insn *i)
{
    reg_set(c, i->reg, i->opsize, rm_read(c, i, 1));
}
NM_FALLBACK void h_movzx16(nm_cpu *c, const nm_insn *i)
{
    reg_set(c, i->reg, i->opsize, rm_read(c, i, 2));
}
void h_movsx8(nm_cpu *c, const nm_insn *i)
{
    reg_set(c, i->reg, i->opsize, (uint32_t)(int32_t)(int8_t)rm_read(c, i, 1));
}
void h_movsx16(nm_cpu *c, const nm_insn *i)
{
    reg_set(c, i->reg, i->opsize, (uint32_t)(int32_t)(int16_t)rm_read(c, i, 2));
}

void h_lea(nm_cpu *c, const nm_insn *i)
{
    reg_set(c, i->reg, i->opsize, insn_ea(c, i));
}

void h_xchg(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t a = reg_get(c, i->reg, sz);
    if (i->mod == 3) {
        reg_set(c, i->reg, sz, reg_get(c, i->rm, sz));
        reg_set(c, i->rm, sz, a);
    } else {
        uint32_t ea = insn_ea(c, i);
        uint32_t m = mem_read(c, i->seg, ea, sz);
        mem_write(c, i->seg, ea, a, sz);
        reg_set(c, i->reg, sz, m);
    }
}

void h_xadd(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize, szi = szi_of(sz);
    uint32_t src = reg_get(c, i->reg, sz);
    if (i->mod == 3) {
        uint32_t d = reg_get(c, i->rm, sz);
        uint32_t r = alu(c, ALU_ADD, d, src, szi);
        reg_set(c, i->reg, sz, d);
        reg_set(c, i->rm, sz, r);
    } else {
        uint32_t ea = insn_ea(c, i);
        uint32_t d = mem_read(c, i->seg, ea, sz);
        uint32_t r = (d + src) & szi_mask(szi);
        mem_write(c, i->seg, ea, r, sz);
        lf_set(c, LF_ADD, szi, d, src, r);
        reg_set(c, i->reg, sz, d);
    }
}

/* CMPXCHG: compare the accumulator with the destination (SDM vol. 2A); the
 * destination is written back either way (the bus sees a write). */
void h_cmpxchg(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize, szi = szi_of(sz);
    uint32_t acc = reg_get(c, NM_EAX, sz), src = reg_get(c, i->reg, sz), d;
    uint32_t ea = 0;
    if (i->mod == 3)
        d = reg_get(c, i->rm, sz);
    else {
        ea = insn_ea(c, i);
        d = mem_read(c, i->seg, ea, sz);
    }
    uint32_t r = (acc - d) & szi_mask(szi);
    bool eq = acc == d;
    uint32_t out = eq ? src : d;
    if (i->mod == 3)
        reg_set(c, i->rm, sz, out);
    else
        mem_write(c, i->seg, ea, out, sz);
    if (!eq) reg_set(c, NM_EAX, sz, d);
    lf_set(c, LF_SUB, szi, acc, d, r);
}

void h_cmpxchg8b(nm_cpu *c, const nm_insn *i)
{
    uint32_t ea = insn_ea(c, i);
    uint32_t lo = mem_read(c, i->seg, ea, 4), hi = mem_read(c, i->seg, ea + 4, 4);
    uint32_t f = cpu_get_eflags(c);
    if (lo == c->gpr[NM_EAX] && hi == c->gpr[NM_EDX]) {
        mem_write(c, i->seg, ea, c->gpr[NM_EBX], 4);
        mem_write(c, i->seg, ea + 4, c->gpr[NM_ECX], 4);
        f |= NM_FLAG_ZF;
    } else {
        mem_write(c, i->seg, ea, lo, 4);
        mem_write(c, i->seg, ea + 4, hi, 4);
        c->gpr[NM_EAX] = lo;
        c->gpr[NM_EDX] = hi;
        f &= ~NM_FLAG_ZF;
    }
    flags_set_arith(c, f);
}

void h_bswap(nm_cpu *c, const nm_insn *i)
{
    /* With a 16-bit operand the result is undefined; the 486 clears the
     * low word (as later parts do). */
    if (i->opsize == 2)
        c->gpr[i->rm] &= 0xffff0000u;
    else
        c->gpr[i->rm] = __builtin_bswap32(c->gpr[i->rm]);
}

void h_cbw(nm_cpu *c, const nm_insn *i)
{
    if (i->opsize == 4)
        c->gpr[NM_EAX] = (uint32_t)(int32_t)(int16_t)c->gpr[NM_EAX];
    else
        reg_set(c, NM_EAX, 2, (uint32_t)(int32_t)(int8_t)c->gpr[NM_EAX]);
}

void h_cwd(nm_cpu *c, const nm_insn *i)
{
    if (i->opsize == 4)
        c->gpr[NM_EDX] = (c->gpr[NM_EAX] & 0x80000000u) ? 0xffffffffu : 0;
    else
        reg_set(c, NM_EDX, 2, (c->gpr[NM_EAX] & 0x8000) ? 0xffff : 0);
}

void h_lahf(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    set_reg8(c, 4, (cpu_get_eflags(c) & 0xd5) | 2);
}

void h_sahf(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    uint32_t f = cpu_get_eflags(c);
    flags_set_arith(c, (f & ~0xd5u) | (reg8(c, 4) & 0xd5u) | (f & NM_FLAG_OF));
}

void h_xlat(nm_cpu *c, const nm_insn *i)
{
    uint32_t a = c->gpr[NM_EBX] + (c->gpr[NM_EAX] & 0xff);
    if (!i->addr32) a &= 0xffff;
    c->last_ea = a;
    set_reg8(c, 0, mem_read(c, i->seg, a, 1));
}

/* SALC (D6): undocumented but present on every 8086-compatible Intel part:
 * AL = CF ? 0xFF : 0. */
void h_salc(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    set_reg8(c, 0, flags_cf(c) ? 0xff : 0);
}

void h_nop(nm_cpu *c, const nm_insn *i)
{
    (void)c;
    (void)i;
}

/* ---- specialised forms: 32-bit operands, by operand form ----
 * The decoder's last step (exec_specialise) picks one of these when the
 * instruction has its form; the semantics are those of the general
 * handlers above, with the size, the operand kinds and the addressing form
 * fixed at compile time: r = register, i = immediate, m = memory through a
 * base register and a displacement (b) or base and index (x), M = any
 * memory operand. */

#define ALU_FAST(name, op)                                                                         \
    static void h_##name##_rr(nm_cpu *c, const nm_insn *i)                                         \
    {                                                                                              \
        uint32_t r = alu(c, op, c->gpr[i->rm], c->gpr[i->reg], 2);                                 \
        if (op != ALU_CMP) c->gpr[i->rm] = r;                                                      \
    }                                                                                              \
    static void h_##name##_GErr(nm_cpu *c, const nm_insn *i)                                       \
    {                                                                                              \
        uint32_t r = alu(c, op, c->gpr[i->reg], c->gpr[i->rm], 2);                                 \
        if (op != ALU_CMP) c->gpr[i->reg] = r;                                                     \
    }                                                                                              \
    static void h_##name##_ri(nm_cpu *c, const nm_insn *i)                                         \
    {                                                                                              \
        uint32_t r = alu(c, op, c->gpr[i->rm], i->imm, 2);                                         \
        if (op != ALU_CMP) c->gpr[i->rm] = r;                                                      \
    }                                                                                              \
    static void h_##name##_mrb(nm_cpu *c, const nm_insn *i)                                        \
    {                                                                                              \
        uint8_t *p;                                                                                \
        if (op == ALU_CMP) {                                                                       \
            uint32_t v;                                                                            \
            if (likely(mem_read_fast(c, i->seg, insn_ea_b32(c, i), 4, &v))) {                      \
                alu(c, op, v, c->gpr[i->reg], 2);                                                  \
                return;                                                                            \
            }                                                                                      \
        } else if (likely((p = mem_access_ptr(c, i->seg, insn_ea_b32(c, i), 4, true)) != NULL)) {  \
            host_put(p, alu(c, op, host_get(p, 4), c->gpr[i->reg], 2), 4);                         \
            return;                                                                                \
        }                                                                                          \
        h_##name##_EG_d(c, i);                                                                     \
    }                                                                                              \
    static void h_##name##_rmb(nm_cpu *c, const nm_insn *i)                                        \
    {                                                                                              \
        uint32_t b;                                                                                \
        if (unlikely(!mem_read_fast(c, i->seg, insn_ea_b32(c, i), 4, &b))) {                       \
            h_##name##_GE_d(c, i);                                                                 \
            return;                                                                                \
        }                                                                                          \
        uint32_t r = alu(c, op, c->gpr[i->reg], b, 2);                                             \
        if (op != ALU_CMP) c->gpr[i->reg] = r;                                                     \
    }                                                                                              \
    ALU_MI(name, op, mib, insn_ea_b32, 4, 2, h_##name##_EI_d)                                      \
    ALU_MI(name, op, miM, insn_ea, 4, 2, h_##name##_EI_d)                                          \
    ALU_MI(name, op, mi8, insn_ea, 1, 0, h_##name##_EI)

/* op r/m, imm through memory: `size` bytes at the address `ea_fn` gives. */
#define ALU_MI(name, op, form, ea_fn, size, szi, general)                                          \
    static void h_##name##_##form(nm_cpu *c, const nm_insn *i)                                     \
    {                                                                                              \
        uint8_t *p;                                                                                \
        if (op == ALU_CMP) {                                                                       \
            uint32_t v;                                                                            \
            if (likely(mem_read_fast(c, i->seg, ea_fn(c, i), size, &v))) {                         \
                alu(c, op, v, i->imm, szi);                                                        \
                return;                                                                            \
            }                                                                                      \
        } else if (likely((p = mem_access_ptr(c, i->seg, ea_fn(c, i), size, true)) != NULL)) {     \
            host_put(p, alu(c, op, host_get(p, size), i->imm, szi), size);                         \
            return;                                                                                \
        }                                                                                          \
        general(c, i);                                                                             \
    }

ALU_FAST(add, ALU_ADD)
ALU_FAST(or, ALU_OR)
ALU_FAST(adc, ALU_ADC)
ALU_FAST(sbb, ALU_SBB)
ALU_FAST(and, ALU_AND)
ALU_FAST(sub, ALU_SUB)
ALU_FAST(xor, ALU_XOR)
ALU_FAST(cmp, ALU_CMP)

#define ALU_TABLE(form)                                                                            \
    static const nm_handler h_alu_##form[8] = {h_add_##form, h_or_##form,  h_adc_##form,           \
                                               h_sbb_##form, h_and_##form, h_sub_##form,           \
                                               h_xor_##form, h_cmp_##form};
ALU_TABLE(rr)
ALU_TABLE(GErr)
ALU_TABLE(ri)
ALU_TABLE(mrb)
ALU_TABLE(rmb)
ALU_TABLE(mib)
ALU_TABLE(miM)
ALU_TABLE(mi8)

static void h_test_rr(nm_cpu *c, const nm_insn *i)
{
    lf_set_logic(c, 2, c->gpr[i->rm] & c->gpr[i->reg]);
}
static void h_test_ri(nm_cpu *c, const nm_insn *i)
{
    lf_set_logic(c, 2, c->gpr[i->rm] & i->imm);
}
static void h_test_mib(nm_cpu *c, const nm_insn *i)
{
    uint32_t v;
    if (likely(mem_read_fast(c, i->seg, insn_ea_b32(c, i), 4, &v)))
        lf_set_logic(c, 2, v & i->imm);
    else
        h_test_EI(c, i);
}

static void h_test_miM(nm_cpu *c, const nm_insn *i)
{
    uint32_t v;
    if (likely(mem_read_fast(c, i->seg, insn_ea(c, i), 4, &v)))
        lf_set_logic(c, 2, v & i->imm);
    else
        h_test_EI(c, i);
}
static void h_test_mi8(nm_cpu *c, const nm_insn *i)
{
    uint32_t v;
    if (likely(mem_read_fast(c, i->seg, insn_ea(c, i), 1, &v)))
        lf_set_logic(c, 0, v & i->imm);
    else
        h_test_EI(c, i);
}

static void h_inc_r(nm_cpu *c, const nm_insn *i)
{
    uint32_t cf = flags_cf_fast(c), a = c->gpr[i->rm], r = a + 1;
    c->gpr[i->rm] = r;
    c->lf_carry_in = cf;
    lf_set(c, LF_INC, 2, a, 1, r);
}
static void h_dec_r(nm_cpu *c, const nm_insn *i)
{
    uint32_t cf = flags_cf_fast(c), a = c->gpr[i->rm], r = a - 1;
    c->gpr[i->rm] = r;
    c->lf_carry_in = cf;
    lf_set(c, LF_DEC, 2, a, 1, r);
}

/* INC/DEC of a 32-bit memory operand: the fast half, else the general
 * handler. */
#define INCDEC_M(name, dec, ea_fn, general)                                                        \
    static void name(nm_cpu *c, const nm_insn *i)                                                  \
    {                                                                                              \
        uint8_t *p = mem_access_ptr(c, i->seg, ea_fn(c, i), 4, true);                              \
        if (unlikely(p == NULL)) {                                                                 \
            general(c, i);                                                                         \
            return;                                                                                \
        }                                                                                          \
        uint32_t cf = flags_cf_fast(c), a = host_get(p, 4), r = dec ? a - 1 : a + 1;               \
        host_put(p, r, 4);                                                                         \
        c->lf_carry_in = cf;                                                                       \
        lf_set(c, dec ? LF_DEC : LF_INC, 2, a, 1, r);                                              \
    }
INCDEC_M(h_inc_mb, false, insn_ea_b32, h_inc_d)
INCDEC_M(h_dec_mb, true, insn_ea_b32, h_dec_d)
INCDEC_M(h_inc_M, false, insn_ea, h_inc_d)
INCDEC_M(h_dec_M, true, insn_ea, h_dec_d)

static void h_mov_rr(nm_cpu *c, const nm_insn *i)
{
    c->gpr[i->rm] = c->gpr[i->reg];
}
static void h_mov_GErr(nm_cpu *c, const nm_insn *i)
{
    c->gpr[i->reg] = c->gpr[i->rm];
}
static void h_mov_ri(nm_cpu *c, const nm_insn *i)
{
    c->gpr[i->rm] = i->imm;
}
/* Loads and stores: the fast half, else the general handler. */
#define MOV_LOAD(name, ea_fn, size, general)                                                       \
    static void name(nm_cpu *c, const nm_insn *i)                                                  \
    {                                                                                              \
        uint32_t v;                                                                                \
        if (likely(mem_read_fast(c, i->seg, ea_fn(c, i), size, &v)))                               \
            c->gpr[i->reg] = v;                                                                    \
        else                                                                                       \
            general(c, i);                                                                         \
    }
#define MOV_STORE(name, ea_fn, size, value, general)                                               \
    static void name(nm_cpu *c, const nm_insn *i)                                                  \
    {                                                                                              \
        uint8_t *p = mem_access_ptr(c, i->seg, ea_fn(c, i), size, false);                          \
        if (likely(p != NULL))                                                                     \
            host_put(p, value, size);                                                              \
        else                                                                                       \
            general(c, i);                                                                         \
    }
MOV_LOAD(h_mov_rmb, insn_ea_b32, 4, h_mov_GE_d)
MOV_LOAD(h_mov_rmx, insn_ea_bi32, 4, h_mov_GE_d)
MOV_LOAD(h_mov_rM, insn_ea, 4, h_mov_GE_d)
MOV_LOAD(h_movzx8_rM, insn_ea, 1, h_movzx8)
MOV_LOAD(h_movzx16_rM, insn_ea, 2, h_movzx16)
MOV_STORE(h_mov_mrb, insn_ea_b32, 4, c->gpr[i->reg], h_mov_EG_d)
MOV_STORE(h_mov_mrx, insn_ea_bi32, 4, c->gpr[i->reg], h_mov_EG_d)
MOV_STORE(h_mov_Mr, insn_ea, 4, c->gpr[i->reg], h_mov_EG_d)
MOV_STORE(h_mov_mib, insn_ea_b32, 4, i->imm, h_mov_EI_d)
/* Byte moves through memory (the register is AL..BH by number). */
MOV_STORE(h_mov8_Mr, insn_ea, 1, reg8(c, i->reg), h_mov_EG)
MOV_STORE(h_mov8_Mi, insn_ea, 1, i->imm, h_mov_EI)
/* 16-bit moves through memory. */
MOV_STORE(h_mov16_Mr, insn_ea, 2, c->gpr[i->reg], h_mov_EG)
MOV_STORE(h_mov16_Mi, insn_ea, 2, i->imm, h_mov_EI)
static void h_mov16_rM(nm_cpu *c, const nm_insn *i)
{
    uint32_t v;
    if (likely(mem_read_fast(c, i->seg, insn_ea(c, i), 2, &v)))
        c->gpr[i->reg] = (c->gpr[i->reg] & 0xffff0000u) | v;
    else
        h_mov_GE(c, i);
}
static void h_mov8_rM(nm_cpu *c, const nm_insn *i)
{
    uint32_t v;
    if (likely(mem_read_fast(c, i->seg, insn_ea(c, i), 1, &v)))
        set_reg8(c, i->reg, v);
    else
        h_mov_GE(c, i);
}
static void h_movzx8_rr(nm_cpu *c, const nm_insn *i)
{
    c->gpr[i->reg] = reg8(c, i->rm);
}

static void h_lea_b(nm_cpu *c, const nm_insn *i)
{
    c->gpr[i->reg] = insn_ea_b32(c, i);
}
static void h_lea_x(nm_cpu *c, const nm_insn *i)
{
    c->gpr[i->reg] = insn_ea_bi32(c, i);
}

/* Which memory form the specialised handlers have for this operand: 'b'
 * (base + displacement), 'x' (base + index), else 0.  Only 32-bit
 * addressing. */
static char mem_form(const nm_insn *i)
{
    if (i->mod == 3 || !i->addr32 || i->base == NM_REG_NONE) return 0;
    return i->index == NM_REG_NONE ? 'b' : 'x';
}

/* The eight ALU operations: the form by the general handler the decoder
 * set (EG, GE or EI), then by operand kind. */
static nm_handler alu_specialise(const nm_insn *i, unsigned k)
{
    const nm_handler fn = i->fn;
    const bool reg = i->mod == 3;
    const char mf = mem_form(i);
    if (fn == h_alu_EG[k]) return reg ? h_alu_rr[k] : mf == 'b' ? h_alu_mrb[k] : h_alu_EG_d[k];
    if (fn == h_alu_GE[k]) return reg ? h_alu_GErr[k] : mf == 'b' ? h_alu_rmb[k] : h_alu_GE_d[k];
    if (fn == h_alu_EI[k]) return reg ? h_alu_ri[k] : mf == 'b' ? h_alu_mib[k] : h_alu_miM[k];
    return fn;
}

nm_handler exec_specialise(const nm_insn *i)
{
    const nm_handler fn = i->fn;
    const bool reg = i->mod == 3;
    const char mf = mem_form(i);
    if (i->opsize == 1) { /* byte operations on memory */
        if (reg) return fn;
        if (i->op == NM_OP_MOV)
            return fn == h_mov_GE   ? h_mov8_rM
                   : fn == h_mov_EG ? h_mov8_Mr
                   : fn == h_mov_EI ? h_mov8_Mi
                                    : fn;
        if (i->op >= NM_OP_ADD && i->op <= NM_OP_CMP && fn == h_alu_EI[i->op - NM_OP_ADD])
            return h_alu_mi8[i->op - NM_OP_ADD];
        if (i->op == NM_OP_TEST && fn == h_test_EI) return h_test_mi8;
        return fn;
    }
    if (i->opsize == 2) { /* 16-bit moves through memory */
        if (reg || i->op != NM_OP_MOV) return fn;
        return fn == h_mov_GE   ? h_mov16_rM
               : fn == h_mov_EG ? h_mov16_Mr
               : fn == h_mov_EI ? h_mov16_Mi
                                : fn;
    }
    if (i->opsize != 4) return fn;
    switch (i->op) {
    case NM_OP_ADD:
    case NM_OP_OR:
    case NM_OP_ADC:
    case NM_OP_SBB:
    case NM_OP_AND:
    case NM_OP_SUB:
    case NM_OP_XOR:
    case NM_OP_CMP: return alu_specialise(i, (unsigned)(i->op - NM_OP_ADD));
    case NM_OP_TEST:
        if (fn == h_test_EG && reg) return h_test_rr;
        if (fn == h_test_EI && reg) return h_test_ri;
        if (fn == h_test_EI && !reg) return mf == 'b' ? h_test_mib : h_test_miM;
        return fn;
    case NM_OP_INC: return fn != h_inc ? fn : reg ? h_inc_r : mf == 'b' ? h_inc_mb : h_inc_M;
    case NM_OP_DEC: return fn != h_dec ? fn : reg ? h_dec_r : mf == 'b' ? h_dec_mb : h_dec_M;
    case NM_OP_MOV:
        if (fn == h_mov_EG)
            return reg ? h_mov_rr : mf == 'b' ? h_mov_mrb : mf == 'x' ? h_mov_mrx : h_mov_Mr;
        if (fn == h_mov_GE)
            return reg ? h_mov_GErr : mf == 'b' ? h_mov_rmb : mf == 'x' ? h_mov_rmx : h_mov_rM;
        if (fn == h_mov_EI) return reg ? h_mov_ri : mf == 'b' ? h_mov_mib : h_mov_EI_d;
        return fn;
    case NM_OP_MOVZX:
        if (fn == h_movzx8) return reg ? h_movzx8_rr : h_movzx8_rM;
        if (fn == h_movzx16 && !reg) return h_movzx16_rM;
        return fn;
    case NM_OP_LEA: return mf == 'b' ? h_lea_b : mf == 'x' ? h_lea_x : fn;
    case NM_OP_ROL:
    case NM_OP_ROR:
    case NM_OP_RCL:
    case NM_OP_RCR:
    case NM_OP_SHL:
    case NM_OP_SHR:
    case NM_OP_SAR:
    case NM_OP_SHLD: { /* (the decoder gives SAR the ID after SHR, SHLD's) */
        if (fn != h_shift) return fn;
        nm_handler s = exec_shift_specialise(i);
        return s ? s : h_shift_d;
    }
    case NM_OP_JCC:
    case NM_OP_JMP:
    case NM_OP_CALL:
    case NM_OP_RET:
    case NM_OP_PUSH:
    case NM_OP_POP: {
        nm_handler s = exec_control_specialise(i);
        return s ? s : fn;
    }
    default: return fn;
    }
}
