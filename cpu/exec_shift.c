/* Shifts and rotates (SDM vol. 2B, "SAL/SAR/SHL/SHR", "RCL/RCR/ROL/ROR",
 * SHLD, SHRD).  The count is masked to 5 bits (386 and later); a masked
 * count of 0 changes nothing, flags included.  OF is defined for 1-bit
 * shifts; for larger counts we compute the same formula (deterministic),
 * but for the 386's byte and word SHL/SHR (shift_flags386). */
#include "cpu/exec.h"

static uint32_t shift_count(nm_cpu *c, const nm_insn *i)
{
    uint32_t n = i->src == NM_OPK_CL ? c->gpr[NM_ECX] : i->imm;
    return n & 31;
}

/* SHL/SAL, SHR, SAR by a non-zero count: all six arithmetic flags are
 * written (AF cleared), so the old ones are not needed.  CF and OF go to
 * eflags, ZF/SF/PF stay lazy on the result (LF_SHIFT). */
static inline __attribute__((always_inline)) uint32_t
shift_plain(unsigned op, uint32_t v, uint32_t cnt, unsigned sz, uint32_t *cfof)
{
    unsigned szi = szi_of(sz), bits = 8 * sz;
    uint32_t m = szi_mask(szi), sign = szi_sign(szi), r, cf, of;
    if (op == 4) { /* SHL/SAL */
        uint64_t x = (uint64_t)v << cnt;
        r = (uint32_t)x & m;
        cf = (uint32_t)(x >> bits) & 1;
        of = ((r & sign) != 0) ^ cf;
    } else if (op == 5) { /* SHR */
        r = cnt >= 32 ? 0 : (v >> cnt);
        cf = (v >> (cnt - 1)) & 1;
        of = (v & sign) != 0;
    } else { /* SAR */
        int32_t sv = (int32_t)(v << (32 - bits)) >> (32 - bits);
        r = (uint32_t)(sv >> cnt) & m;
        cf = (uint32_t)(sv >> (cnt - 1)) & 1;
        of = 0;
    }
    *cfof = (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
    return r;
}

/* The 386's CF, OF and AF of a byte or word SHL/SHR by a non-zero count
 * (test386.asm's README, from a 386SX): AF set; a byte shifted by 16 or 24
 * gives SHR the operand's top bit as CF, SHL its low bit (OF = CF), and by
 * another count above 8 CF = OF = 0; otherwise CF as defined, and SHR's OF
 * is the top two bits of the result XORed (the 1-bit definition, the old
 * top bit, for a count of 1). */
static uint32_t shift_flags386(unsigned op, uint32_t v, uint32_t cnt, unsigned sz, uint32_t r,
                               uint32_t cfof)
{
    uint32_t sign = sz == 1 ? 0x80 : 0x8000;
    if (sz == 1 && cnt > 8 && (cnt & 7) == 0) {
        bool cf = op == 4 ? v & 1 : (v & 0x80) != 0;
        cfof = cf ? (op == 4 ? NM_FLAG_CF | NM_FLAG_OF : NM_FLAG_CF) : 0;
    } else if (sz == 1 && cnt > 8) {
        cfof = 0;
    } else if (op == 5) {
        bool of = ((r & sign) != 0) ^ ((r & (sign >> 1)) != 0);
        cfof = (cfof & NM_FLAG_CF) | (of ? NM_FLAG_OF : 0);
    }
    return cfof | NM_FLAG_AF;
}

static inline __attribute__((always_inline)) void shift(nm_cpu *c, const nm_insn *i, unsigned sz)
{
    unsigned szi = szi_of(sz), bits = 8 * sz;
    uint32_t cnt = shift_count(c, i);
    uint32_t ea = 0, v;
    if (i->mod == 3)
        v = reg_get(c, i->rm, sz);
    else {
        ea = insn_ea(c, i);
        v = mem_read(c, i->seg, ea, sz);
    }
    if (cnt == 0) return;
    if (i->cond >= 4) {
        uint32_t cfof, r = shift_plain(i->cond, v, cnt, sz, &cfof);
        if (sz < 4 && i->cond != 7 && cpu_is386(c))
            cfof = shift_flags386(i->cond, v, cnt, sz, r, cfof);
        if (i->mod == 3)
            reg_set(c, i->rm, sz, r);
        else
            mem_write(c, i->seg, ea, r, sz); /* may fault: flags after it */
        c->eflags = (c->eflags & ~NM_FLAGS_ARITH) | cfof;
        c->lf_op = LF(LF_SHIFT, szi);
        c->lf_res = r;
        return;
    }
    uint32_t m = szi_mask(szi), sign = szi_sign(szi);
    uint32_t f = cpu_get_eflags(c), r, cf, of;
    switch (i->cond) {
    case 0: { /* ROL */
        unsigned k = cnt % bits;
        r = k ? ((v << k) | (v >> (bits - k))) & m : v;
        cf = r & 1;
        of = ((r & sign) != 0) ^ cf;
        f = (f & ~(NM_FLAG_CF | NM_FLAG_OF)) | (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
        break;
    }
    case 1: { /* ROR */
        unsigned k = cnt % bits;
        r = k ? ((v >> k) | (v << (bits - k))) & m : v;
        cf = (r & sign) != 0;
        of = cf ^ ((r & (sign >> 1)) != 0);
        f = (f & ~(NM_FLAG_CF | NM_FLAG_OF)) | (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
        break;
    }
    default: { /* RCL, RCR: rotate through CF, n+1 bits */
        unsigned k = cnt % (bits + 1);
        uint64_t mm = (1ull << (bits + 1)) - 1;
        uint64_t x = ((uint64_t)(f & NM_FLAG_CF) << bits) | v;
        if (k) {
            if (i->cond == 2)
                x = ((x << k) | (x >> (bits + 1 - k))) & mm;
            else
                x = ((x >> k) | (x << (bits + 1 - k))) & mm;
        }
        r = (uint32_t)x & m;
        cf = (uint32_t)(x >> bits) & 1;
        if (i->cond == 2)
            of = ((r & sign) != 0) ^ cf;
        else
            of = ((r & sign) != 0) ^ ((r & (sign >> 1)) != 0);
        f = (f & ~(NM_FLAG_CF | NM_FLAG_OF)) | (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
        break;
    }
    }
    if (i->mod == 3)
        reg_set(c, i->rm, sz, r);
    else
        mem_write(c, i->seg, ea, r, sz);
    flags_set_arith(c, f);
}

void h_shift(nm_cpu *c, const nm_insn *i)
{
    shift(c, i, i->opsize);
}
void h_shift_d(nm_cpu *c, const nm_insn *i)
{
    shift(c, i, 4);
}

static void shxd(nm_cpu *c, const nm_insn *i, bool left)
{
    unsigned sz = i->opsize, szi = szi_of(sz), bits = 8 * sz;
    uint32_t cnt = shift_count(c, i);
    uint32_t ea = 0, d;
    if (i->mod == 3)
        d = reg_get(c, i->rm, sz);
    else {
        ea = insn_ea(c, i);
        d = mem_read(c, i->seg, ea, sz);
    }
    if (cnt == 0) return;
    uint32_t s = reg_get(c, i->reg, sz), r, cf;
    if (bits == 32) {
        uint64_t x = left ? ((uint64_t)d << 32 | s) : ((uint64_t)s << 32 | d);
        if (left) {
            r = (uint32_t)((x << cnt) >> 32);
            cf = (uint32_t)(x >> (64 - cnt)) & 1;
        } else {
            r = (uint32_t)(x >> cnt);
            cf = (uint32_t)(x >> (cnt - 1)) & 1;
        }
    } else {
        /* 16 bits: counts above 16 are undefined; shift through d:s:d. */
        uint64_t x = left ? ((uint64_t)d << 32 | (uint64_t)s << 16 | d)
                          : ((uint64_t)d << 32 | (uint64_t)s << 16 | d);
        if (left) {
            r = (uint32_t)((x << cnt) >> 32) & 0xffff;
            cf = (uint32_t)(x >> (48 - cnt)) & 1;
        } else {
            r = (uint32_t)(x >> cnt) & 0xffff;
            cf = (uint32_t)(x >> (cnt - 1)) & 1;
        }
    }
    uint32_t sign = szi_sign(szi);
    bool of = ((r ^ d) & sign) != 0;
    uint32_t f = cpu_get_eflags(c);
    f = (f & ~NM_FLAGS_ARITH) | szp_flags(r, szi) | (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
    if (i->mod == 3)
        reg_set(c, i->rm, sz, r);
    else
        mem_write(c, i->seg, ea, r, sz);
    flags_set_arith(c, f);
}

void h_shld(nm_cpu *c, const nm_insn *i)
{
    shxd(c, i, true);
}
void h_shrd(nm_cpu *c, const nm_insn *i)
{
    shxd(c, i, false);
}

/* ---- specialised forms (exec_specialise): SHL, SHR, SAR, ROL, ROR of a
 * 32-bit register by a non-zero immediate count or by CL: the general
 * formulas with the size fixed. */

static inline __attribute__((always_inline)) void shift_r32(nm_cpu *c, const nm_insn *i,
                                                            unsigned op, uint32_t cnt)
{
    uint32_t v = c->gpr[i->rm], r, cf, of;
    if (op == 4) { /* SHL */
        r = v << cnt;
        cf = (v >> (32 - cnt)) & 1;
        of = (r >> 31) ^ cf;
    } else if (op == 5) { /* SHR */
        r = v >> cnt;
        cf = (v >> (cnt - 1)) & 1;
        of = v >> 31;
    } else { /* SAR */
        r = (uint32_t)((int32_t)v >> cnt);
        cf = (uint32_t)((int32_t)v >> (cnt - 1)) & 1;
        of = 0;
    }
    c->gpr[i->rm] = r;
    c->eflags = (c->eflags & ~NM_FLAGS_ARITH) | (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
    c->lf_op = LF(LF_SHIFT, 2);
    c->lf_res = r;
}

#define SHIFT_FAST(name, op)                                                                       \
    static void h_##name##_ri32(nm_cpu *c, const nm_insn *i)                                       \
    {                                                                                              \
        shift_r32(c, i, op, i->imm & 31);                                                          \
    }                                                                                              \
    static void h_##name##_rc32(nm_cpu *c, const nm_insn *i)                                       \
    {                                                                                              \
        uint32_t cnt = c->gpr[NM_ECX] & 31;                                                        \
        if (cnt) shift_r32(c, i, op, cnt);                                                         \
    }
SHIFT_FAST(shl, 4)
SHIFT_FAST(shr, 5)
SHIFT_FAST(sar, 7)

/* ROL and ROR write CF and OF only; the other four flags keep what the
 * last operation made of them.  The general handler works them all out
 * first (cpu_get_eflags); here the lazy state stays: LF_SHIFT of the same
 * result and size (ZF, SF, PF from lf_res), with AF worked out into eflags
 * next to the new CF and OF (the same six flags either way). */
static inline void rot_flags(nm_cpu *c, uint32_t cf, uint32_t of)
{
    const uint32_t op = c->lf_op;
    uint32_t keep = ~(NM_FLAG_CF | NM_FLAG_OF), set = (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
    if (op != LF_NONE) {
        keep &= ~NM_FLAG_AF;
        set |= flags_af(c) ? NM_FLAG_AF : 0;
        c->lf_op = LF(LF_SHIFT, op & 3);
    }
    c->eflags = (c->eflags & keep) | set;
}

static inline __attribute__((always_inline)) void rot_r32(nm_cpu *c, const nm_insn *i, bool left,
                                                          uint32_t k)
{
    uint32_t v = c->gpr[i->rm], r, cf, of;
    if (left) {
        r = (v << k) | (v >> (32 - k));
        cf = r & 1;
        of = (r >> 31) ^ cf;
    } else {
        r = (v >> k) | (v << (32 - k));
        cf = r >> 31;
        of = cf ^ ((r >> 30) & 1);
    }
    c->gpr[i->rm] = r;
    rot_flags(c, cf, of);
}

#define ROT_FAST(name, left)                                                                       \
    static void h_##name##_ri32(nm_cpu *c, const nm_insn *i)                                       \
    {                                                                                              \
        rot_r32(c, i, left, i->imm & 31);                                                          \
    }                                                                                              \
    static void h_##name##_rc32(nm_cpu *c, const nm_insn *i)                                       \
    {                                                                                              \
        uint32_t k = c->gpr[NM_ECX] & 31;                                                          \
        if (k) rot_r32(c, i, left, k);                                                             \
    }
ROT_FAST(rol, true)
ROT_FAST(ror, false)

nm_handler exec_shift_specialise(const nm_insn *i)
{
    if (i->fn != h_shift || i->opsize != 4 || i->mod != 3 || i->cond == 2 || i->cond == 3)
        return NULL;
    bool by_cl = i->src == NM_OPK_CL;
    /* A zero immediate count changes nothing, flags included: the general
     * handler keeps that case. */
    if (!by_cl && (i->imm & 31) == 0) return NULL;
    switch (i->cond) {
    case 0: return by_cl ? h_rol_rc32 : h_rol_ri32;
    case 1: return by_cl ? h_ror_rc32 : h_ror_ri32;
    case 4: return by_cl ? h_shl_rc32 : h_shl_ri32;
    case 5: return by_cl ? h_shr_rc32 : h_shr_ri32;
    case 7: return by_cl ? h_sar_rc32 : h_sar_ri32;
    default: return NULL;
    }
}
