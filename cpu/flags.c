/* Lazy arithmetic flags: the last flag-setting operation keeps its operands
 * and result (lf_*), and a flag is computed only when something reads it.
 * Definitions from SDM vol. 1, 3.4.3.1 and each instruction's "Flags
 * Affected". */
#include "cpu/core.h"

bool flags_of(const nm_cpu *c)
{
    uint32_t a = c->lf_a, b = c->lf_b, r = c->lf_res, sign = szi_sign(c->lf_op & 3);
    switch (c->lf_op >> 2) {
    case LF_NONE:
    case LF_SHIFT: return c->eflags & NM_FLAG_OF;
    case LF_ADD:
    case LF_ADC:
    case LF_INC: return ((a ^ r) & (b ^ r) & sign) != 0;
    case LF_SUB:
    case LF_SBB:
    case LF_DEC: return ((a ^ b) & (a ^ r) & sign) != 0;
    default: return false;
    }
}

bool flags_af(const nm_cpu *c)
{
    switch (c->lf_op >> 2) {
    case LF_NONE:
    case LF_SHIFT: return c->eflags & NM_FLAG_AF;
    case LF_LOGIC: return false; /* undefined; the 486 leaves it clear */
    default: return ((c->lf_a ^ c->lf_b ^ c->lf_res) & 0x10) != 0;
    }
}

bool flags_pf(const nm_cpu *c)
{
    if (c->lf_op == LF_NONE) return c->eflags & NM_FLAG_PF;
    return parity_flag(c->lf_res) != 0;
}

bool flags_cond(const nm_cpu *c, unsigned cc)
{
    bool r;
    /* After CMP/SUB, compare the operands directly. */
    if ((c->lf_op >> 2) == LF_SUB) {
        unsigned sh = 32 - (8u << (c->lf_op & 3));
        uint32_t a = c->lf_a, b = c->lf_b;
        int32_t sa = (int32_t)(a << sh), sb = (int32_t)(b << sh);
        switch (cc >> 1) {
        case 1: r = a < b; goto done;
        case 2: r = a == b; goto done;
        case 3: r = a <= b; goto done;
        case 6: r = sa < sb; goto done;
        case 7: r = sa <= sb; goto done;
        default: break;
        }
    }
    switch (cc >> 1) {
    case 0: r = flags_of(c); break;
    case 1: r = flags_cf(c); break;
    case 2: r = flags_zf(c); break;
    case 3: r = flags_cf(c) || flags_zf(c); break;
    case 4: r = flags_sf(c); break;
    case 5: r = flags_pf(c); break;
    case 6: r = flags_sf(c) != flags_of(c); break;
    default: r = flags_zf(c) || (flags_sf(c) != flags_of(c)); break;
    }
done:
    return (cc & 1) ? !r : r;
}

/* Materialises the lazy flags: the same formulas as flags_cf/of/af/pf/zf/sf,
 * with one dispatch on the operation. */
uint32_t cpu_get_eflags(nm_cpu *c)
{
    uint32_t op = c->lf_op;
    if (op != LF_NONE) {
        uint32_t a = c->lf_a, b = c->lf_b, r = c->lf_res, sign = szi_sign(op & 3);
        uint32_t f = (r == 0 ? NM_FLAG_ZF : 0) | ((r & sign) ? NM_FLAG_SF : 0) | parity_flag(r);
        bool cf, of;
        bool af = ((a ^ b ^ r) & 0x10) != 0;
        bool of_add = ((a ^ r) & (b ^ r) & sign) != 0, of_sub = ((a ^ b) & (a ^ r) & sign) != 0;
        switch (op >> 2) {
        case LF_ADD:
            cf = r < a;
            of = of_add;
            break;
        case LF_ADC:
            cf = c->lf_carry_in ? r <= a : r < a;
            of = of_add;
            break;
        case LF_SUB:
            cf = a < b;
            of = of_sub;
            break;
        case LF_SBB:
            cf = c->lf_carry_in ? a <= b : a < b;
            of = of_sub;
            break;
        case LF_INC:
            cf = c->lf_carry_in != 0;
            of = of_add;
            break;
        case LF_DEC:
            cf = c->lf_carry_in != 0;
            of = of_sub;
            break;
        case LF_LOGIC:
            cf = false;
            of = false;
            af = false;
            break;
        case LF_SHIFT:
            cf = c->eflags & NM_FLAG_CF;
            of = c->eflags & NM_FLAG_OF;
            af = c->eflags & NM_FLAG_AF;
            break;
        default:
            cf = false;
            of = false;
            break;
        }
        f |= (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0) | (af ? NM_FLAG_AF : 0);
        c->eflags = (c->eflags & ~NM_FLAGS_ARITH) | f;
        c->lf_op = LF_NONE;
    }
    return c->eflags | 2u; /* bit 1 always reads 1 */
}

void cpu_set_eflags(nm_cpu *c, uint32_t value, uint32_t mask)
{
    uint32_t old = cpu_get_eflags(c);
    /* Bits 1, 3, 5, 15, 22-31 are reserved (bit 1 set, the others clear).
     * AC exists from the 486 on, ID on the CPUID-capable parts. */
    uint32_t writable = 0x003f7fd5u;
    if (!cpu_isa486(c)) writable &= ~(NM_FLAG_AC | NM_FLAG_ID);
    if (!c->model->has_cpuid) writable &= ~NM_FLAG_ID;
    mask &= writable;
    c->eflags = ((old & ~mask) | (value & mask)) | 2u;
    if ((old ^ c->eflags) & (NM_FLAG_VM | NM_FLAG_AC)) cpu_update_mode(c);
}
