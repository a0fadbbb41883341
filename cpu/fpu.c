/* The x87 instructions: the register stack, the tag, control and status
 * words, the instruction and operand pointers, the masked and unmasked
 * exceptions and their delivery (#MF with CR0.NE; FERR# to the PC board's
 * IRQ 13 without it), #NM, and the decoding of D8-DF (SDM vol. 1 chapter 8,
 * vol. 2 for each instruction, table for the opcode map; the
 * Intel387 DX and Intel486 Programmer's Reference Manuals for the 387 and
 * 486 behaviour).  The arithmetic is cpu/fpu_float.c's. */
#include "cpu/fpu.h"

#include "cpu/exec.h"

/* ----------------------------------------------------------- the stack */

static inline unsigned fpu_top(const nm_fpu *f)
{
    return (f->sw >> 11) & 7;
}
static inline void set_top(nm_fpu *f, unsigned t)
{
    f->sw = (uint16_t)((f->sw & ~NM_FSW_TOP) | (t & 7) << 11);
}
static inline unsigned phys(const nm_fpu *f, unsigned i)
{
    return (fpu_top(f) + i) & 7;
}
static inline bool st_empty(const nm_fpu *f, unsigned i)
{
    return f->tag[phys(f, i)] == NM_FTAG_EMPTY;
}
static inline nm_f80 st_get(const nm_fpu *f, unsigned i)
{
    return f->r[phys(f, i)];
}

static void set_cc(nm_fpu *f, uint16_t bits, uint16_t mask)
{
    f->sw = (uint16_t)((f->sw & ~mask) | (bits & mask));
}

unsigned fpu_tag_of(nm_f80 v)
{
    switch (f80_class(v)) {
    case F80_NORMAL: return NM_FTAG_VALID;
    case F80_ZERO: return NM_FTAG_ZERO;
    default: return NM_FTAG_SPECIAL;
    }
}

static inline void st_set(nm_fpu *f, unsigned i, nm_f80 v)
{
    unsigned p = phys(f, i);
    f->r[p] = v;
    f->tag[p] = (uint8_t)fpu_tag_of(v);
}
static inline void fpu_pop(nm_fpu *f)
{
    f->tag[phys(f, 0)] = NM_FTAG_EMPTY;
    set_top(f, fpu_top(f) + 1);
}
static inline void fpu_push(nm_fpu *f, nm_f80 v)
{
    set_top(f, fpu_top(f) - 1);
    st_set(f, 0, v);
}

uint16_t fpu_tag_word(const nm_fpu *f)
{
    uint16_t tw = 0;
    for (unsigned p = 0; p < 8; p++) {
        unsigned t = f->tag[p] == NM_FTAG_EMPTY ? NM_FTAG_EMPTY : fpu_tag_of(f->r[p]);
        tw |= (uint16_t)(t << (2 * p));
    }
    return tw;
}

void fpu_init(nm_cpu *c)
{
    nm_fpu *f = &c->fpu;
    f->cw = NM_FCW_INIT;
    f->sw = 0;
    memset(f->tag, NM_FTAG_EMPTY, sizeof f->tag);
    f->fip = f->fdp = 0;
    f->fcs = f->fds = f->fop = 0;
    if (f->ferr) {
        f->ferr = false;
        nm_machine_set_ferr(c->m, false);
    }
}

void fpu_reset(nm_cpu *c)
{
    fpu_init(c);
    nm_fpu *f = &c->fpu;
    f->cw = 0x0040;
    for (unsigned p = 0; p < 8; p++) {
        f->r[p] = f80_zero(false);
        f->tag[p] = NM_FTAG_ZERO; /* FTW 5555H */
    }
}

/* ---------------------------------------------------- exceptions */

static void set_ferr(nm_cpu *c, bool on)
{
    if (c->fpu.ferr == on) return;
    c->fpu.ferr = on;
    nm_machine_set_ferr(c->m, on);
}

/* ES and B from the flags and the masks (the 387 and later: SDM vol. 1,
 * 8.1.3.1), and FERR# with them: the 387 and the 486 assert it as the error
 * is flagged, the Pentium at the next waiting instruction (Pentium
 * Processor Family Developer's Manual vol. 1, FERR#); both drop it when ES
 * clears. */
static void update_es(nm_cpu *c)
{
    nm_fpu *f = &c->fpu;
    if (f->sw & ~f->cw & 0x3f) {
        f->sw |= NM_FSW_ES | NM_FSW_B;
        if (c->fpu_kind != NM_FPU_PENTIUM) set_ferr(c, true);
    } else {
        f->sw &= (uint16_t) ~(NM_FSW_ES | NM_FSW_B);
        set_ferr(c, false);
    }
}

/* The end of an instruction's numeric part: the exceptions raised into
 * the status word, C1. */
static void signal_exc(nm_cpu *c, unsigned exc, bool c1)
{
    nm_fpu *f = &c->fpu;
    f->sw = (uint16_t)((f->sw & ~NM_FSW_C1) | (exc & 0x7f) | (c1 ? NM_FSW_C1 : 0));
    if (exc & ~f->cw & 0x3f) update_es(c);
}

static inline bool unmasked_pre(const nm_fpu *f, unsigned exc)
{
    return (exc & ~f->cw & NM_FPE_PRE) != 0;
}

/* A stack fault: underflow (an empty register read, C1 = 0) or overflow (a
 * push onto a full stack, C1 = 1).  True when masked: the caller then gives
 * the indefinite as the result. */
static bool stack_fault(nm_cpu *c, bool overflow)
{
    signal_exc(c, NM_FPE_IE | NM_FPE_SF, overflow);
    return (c->fpu.cw & NM_FPE_IE) != 0;
}

/* A pending unmasked exception at a waiting instruction (SDM vol. 1, 8.6;
 * Intel486 Programmer's Reference Manual, 15.x "Numeric exceptions"):
 * with CR0.NE on a 486 or Pentium, #MF, the instruction not executed.
 * Otherwise the PC's way: FERR# asserted (it drives IRQ 13 through the
 * board's latch), and the CPU waits at the instruction for an interrupt,
 * unless IGNNE# is asserted (the handler's write to port 0xF0), when the
 * error is ignored and the instruction runs.  The 386 has no NE: its 387's
 * ERROR# always takes the IRQ 13 path on a PC. */
static bool error_pending(nm_cpu *c)
{
    nm_fpu *f = &c->fpu;
    if (!(f->sw & NM_FSW_ES)) return false;
    if ((c->cr0 & NM_CR0_NE) && c->fpu_kind != NM_FPU_387) cpu_raise_noerr(c, NM_EXC_MF);
    set_ferr(c, true);
    if (c->m->ignne) return false;
    c->eip = c->insn_eip;
    c->halted = true;
    c->fetch_lin = 1; /* leaves the run loop's straight-line path, as HLT does */
    return true;
}

/* --------------------------------------------------- memory operands */

static void read_bytes(nm_cpu *c, const nm_insn *i, uint32_t off, uint8_t *buf, unsigned n)
{
    for (unsigned k = 0; k < n;) {
        unsigned sz = n - k >= 4 ? 4 : n - k >= 2 ? 2 : 1;
        uint32_t v = mem_read(c, i->seg, off + k, sz);
        for (unsigned b = 0; b < sz; b++)
            buf[k + b] = (uint8_t)(v >> (8 * b));
        k += sz;
    }
}

/* Faults (#GP, #SS, #PF) come before any byte is written. */
static void write_bytes(nm_cpu *c, const nm_insn *i, uint32_t off, const uint8_t *buf, unsigned n)
{
    cpu_probe_write(c, i->seg, off, n);
    for (unsigned k = 0; k < n;) {
        unsigned sz = n - k >= 4 ? 4 : n - k >= 2 ? 2 : 1;
        uint32_t v = 0;
        for (unsigned b = 0; b < sz; b++)
            v |= (uint32_t)buf[k + b] << (8 * b);
        mem_write(c, i->seg, off + k, v, sz);
        k += sz;
    }
}

static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned k = 0; k < n; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}
static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

static nm_f80 f80_of_bytes(const uint8_t *p)
{
    return (nm_f80){get_le(p, 8), (uint16_t)get_le(p + 8, 2)};
}
static void f80_to_bytes(uint8_t *p, nm_f80 v)
{
    put_le(p, v.m, 8);
    put_le(p + 8, v.se, 2);
}

/* The memory formats, by the operand's bytes. */
enum { MF_R32, MF_R64, MF_R80, MF_I16, MF_I32, MF_I64, MF_BCD };
static const unsigned mf_bytes[] = {4, 8, 10, 2, 4, 8, 10};

/* The control word as loaded: the reserved bits 7 and 13-15 read as 0,
 * bit 6 as 1 (host x87; the 387 and later). */
static uint16_t cw_value(uint32_t v)
{
    return (uint16_t)((v & 0x1f3f) | 0x40);
}

static nm_fenv fenv_of(const nm_fpu *f)
{
    /* PC: 00 single, 01 reserved (extended on these parts), 10 double,
     * 11 extended (SDM vol. 1, 8.1.5.2). */
    static const unsigned prec[4] = {24, 64, 53, 64};
    return (nm_fenv){.prec = prec[(f->cw >> 8) & 3],
                     .rc = (f->cw >> 10) & 3u,
                     .masks = (uint16_t)(f->cw & 0x3f)};
}

/* A memory operand as a value (the loads and the arithmetic's source). */
static nm_f80 load_mem(nm_cpu *c, const nm_insn *i, unsigned fmt, nm_fenv *env)
{
    uint8_t buf[10];
    read_bytes(c, i, insn_ea(c, i), buf, mf_bytes[fmt]);
    switch (fmt) {
    case MF_R32: return f80_from_f32(env, (uint32_t)get_le(buf, 4));
    case MF_R64: return f80_from_f64(env, get_le(buf, 8));
    case MF_R80: return f80_of_bytes(buf);
    case MF_I16: return f80_from_int((int16_t)get_le(buf, 2));
    case MF_I32: return f80_from_int((int32_t)get_le(buf, 4));
    case MF_I64: return f80_from_int((int64_t)get_le(buf, 8));
    default: return f80_from_bcd(buf);
    }
}

/* The value a store writes for v in fmt (the indefinite of the format for
 * a masked stack underflow: indefinite true).  False: nothing is stored. */
static bool store_value(nm_fenv *env, nm_f80 v, unsigned fmt, uint8_t *buf, bool indefinite)
{
    bool store = true;
    switch (fmt) {
    case MF_R32: put_le(buf, indefinite ? 0xffc00000u : f80_to_f32(env, v, &store), 4); break;
    case MF_R64:
        put_le(buf, indefinite ? 0xfff8000000000000ull : f80_to_f64(env, v, &store), 8);
        break;
    case MF_R80: f80_to_bytes(buf, indefinite ? f80_indefinite : v); break;
    case MF_I16:
    case MF_I32:
    case MF_I64: {
        unsigned bits = fmt == MF_I16 ? 16 : fmt == MF_I32 ? 32 : 64;
        int64_t x = indefinite ? (int64_t)(UINT64_C(1) << 63) >> (64 - bits)
                               : f80_to_int(env, v, bits, &store);
        put_le(buf, (uint64_t)x, bits / 8);
        break;
    }
    default:
        if (indefinite) {
            memset(buf, 0, 10);
            buf[7] = 0xc0;
            buf[8] = buf[9] = 0xff;
        } else {
            f80_to_bcd(env, v, buf, &store);
        }
        break;
    }
    return store;
}

/* ------------------------------------------------------- the operations */

static void do_load(nm_cpu *c, const nm_insn *i, unsigned fmt)
{
    nm_fpu *f = &c->fpu;
    nm_fenv env = fenv_of(f);
    nm_f80 v = i->mod == 3 ? st_get(f, i->rm) : load_mem(c, i, fmt, &env);
    bool src_empty = i->mod == 3 && st_empty(f, i->rm);
    if (src_empty) {
        if (stack_fault(c, false)) fpu_push(f, f80_indefinite);
        return;
    }
    if (!st_empty(f, 7)) {
        if (stack_fault(c, true)) fpu_push(f, f80_indefinite);
        return;
    }
    /* An unmasked DE still loads (the 387 and later take denormals in),
     * an unmasked IE (an SNaN) does not. */
    if (!(env.exc & ~f->cw & NM_FPE_IE)) fpu_push(f, v);
    signal_exc(c, env.exc, false);
}

static void do_store(nm_cpu *c, const nm_insn *i, unsigned fmt, bool pop)
{
    nm_fpu *f = &c->fpu;
    nm_fenv env = fenv_of(f);
    if (i->mod == 3) { /* FST(P) ST(i): a copy, no exception but the stack's */
        if (st_empty(f, 0)) {
            if (!stack_fault(c, false)) return;
            st_set(f, i->rm, f80_indefinite);
        } else {
            st_set(f, i->rm, st_get(f, 0));
            signal_exc(c, 0, false);
        }
        if (pop) fpu_pop(f);
        return;
    }
    uint8_t buf[10];
    uint32_t off = insn_ea(c, i);
    if (st_empty(f, 0)) {
        if (!(f->cw & NM_FPE_IE)) {
            stack_fault(c, false);
            return;
        }
        store_value(&env, f80_zero(false), fmt, buf, true);
        write_bytes(c, i, off, buf, mf_bytes[fmt]);
        stack_fault(c, false);
        if (pop) fpu_pop(f);
        return;
    }
    if (!store_value(&env, st_get(f, 0), fmt, buf, false)) {
        signal_exc(c, env.exc, env.c1);
        return;
    }
    write_bytes(c, i, off, buf, mf_bytes[fmt]);
    signal_exc(c, env.exc, env.c1);
    if (pop) fpu_pop(f);
}

/* A memory operand's denormal (DE from its conversion) is not reported
 * when the other operand is a NaN or unsupported: the NaN decides first.
 * An SNaN's IE is the arithmetic's to raise (an SNaN and a QNaN give the
 * QNaN): the converted value is made signalling again for it. */
static unsigned src_snan(nm_f80 *src, unsigned src_exc)
{
    if ((src_exc & NM_FPE_IE) && f80_is_nan(*src)) {
        src->m &= ~F80_QUIET;
        src_exc &= ~NM_FPE_IE;
    }
    return src_exc;
}
static unsigned src_exc_with(nm_f80 other, unsigned src_exc)
{
    f80_class_t k = f80_class(other);
    if (k == F80_QNAN || k == F80_SNAN || k == F80_UNSUPPORTED) src_exc &= ~NM_FPE_DE;
    return src_exc;
}

/* The arithmetic: dst = x op y with (x, y) = (dst, src), or (src, dst)
 * for the reversed forms.  kind: the ModRM reg field's operation, for DC
 * and DE register forms already mapped to the mnemonic's (reg ^ 1). */
static void do_arith(nm_cpu *c, const nm_insn *i, unsigned kind, unsigned dst_i, nm_f80 src,
                     bool src_empty, bool pop, unsigned src_exc)
{
    nm_fpu *f = &c->fpu;
    nm_fenv env = fenv_of(f);
    env.exc = (uint16_t)src_exc;
    (void)i;
    if (st_empty(f, dst_i) || src_empty) {
        if (!stack_fault(c, false)) return;
        st_set(f, dst_i, f80_indefinite);
        if (pop) fpu_pop(f);
        return;
    }
    nm_f80 d = st_get(f, dst_i), r;
    env.exc = (uint16_t)src_exc_with(d, env.exc);
    nm_f80 divisor = kind == 6 ? src : d;
    if (kind >= 6 && f80_class(divisor) == F80_ZERO) /* x / 0 reports ZE alone */
        env.exc &= (uint16_t)~NM_FPE_DE;
    if (unmasked_pre(f, env.exc)) { /* the memory operand's own (an SNaN, a denormal) */
        signal_exc(c, env.exc, false);
        return;
    }
    switch (kind) {
    case 0: r = f80_arith(&env, 0, d, src); break;
    case 1: r = f80_arith(&env, 2, d, src); break;
    case 4: r = f80_arith(&env, 1, d, src); break;
    case 5: r = f80_arith(&env, 1, src, d); break;
    case 6: r = f80_arith(&env, 3, d, src); break;
    default: r = f80_arith(&env, 3, src, d); break;
    }
    if (unmasked_pre(f, env.exc)) {
        signal_exc(c, env.exc, false);
        return;
    }
    st_set(f, dst_i, r);
    signal_exc(c, env.exc, env.c1);
    if (pop) fpu_pop(f);
}

/* FCOM and friends: pops 0, 1 or 2 times.  The condition codes are set
 * (unordered for an invalid operand) whether the exception is masked or
 * not; an unmasked one leaves the stack unpopped. */
static void do_compare(nm_cpu *c, nm_f80 src, bool src_empty, unsigned src_exc, bool quiet,
                       unsigned pops)
{
    nm_fpu *f = &c->fpu;
    nm_fenv env = fenv_of(f);
    env.exc = (uint16_t)src_exc;
    unsigned r;
    if (st_empty(f, 0) || src_empty) {
        stack_fault(c, false);
        env.exc = NM_FPE_IE | NM_FPE_SF;
        r = 3;
    } else {
        env.exc = (uint16_t)src_exc_with(st_get(f, 0), env.exc);
        r = f80_compare(&env, st_get(f, 0), src, quiet);
        signal_exc(c, env.exc, false);
    }
    static const uint16_t cc[4] = {0, NM_FSW_C0, NM_FSW_C3, NM_FSW_C3 | NM_FSW_C2 | NM_FSW_C0};
    f->sw = (uint16_t)((f->sw & ~(NM_FSW_C0 | NM_FSW_C2 | NM_FSW_C3)) | cc[r]);
    if (unmasked_pre(f, env.exc)) return;
    while (pops--)
        fpu_pop(f);
}

static void do_fxam(nm_cpu *c)
{
    nm_fpu *f = &c->fpu;
    nm_f80 v = st_get(f, 0);
    uint16_t cc;
    if (st_empty(f, 0)) {
        cc = NM_FSW_C3 | NM_FSW_C0;
    } else {
        switch (f80_class(v)) {
        case F80_UNSUPPORTED: cc = 0; break;
        case F80_QNAN:
        case F80_SNAN: cc = NM_FSW_C0; break;
        case F80_NORMAL: cc = NM_FSW_C2; break;
        case F80_INF: cc = NM_FSW_C2 | NM_FSW_C0; break;
        case F80_ZERO: cc = NM_FSW_C3; break;
        default: cc = NM_FSW_C3 | NM_FSW_C2; break; /* denormal */
        }
    }
    if (f80_sign(v)) cc |= NM_FSW_C1;
    set_cc(f, cc, NM_FSW_CC);
}

static void do_fxch(nm_cpu *c, unsigned j)
{
    nm_fpu *f = &c->fpu;
    if (st_empty(f, 0) || st_empty(f, j)) {
        if (!stack_fault(c, false)) return;
        if (st_empty(f, 0)) st_set(f, 0, f80_indefinite);
        if (st_empty(f, j)) st_set(f, j, f80_indefinite);
    } else {
        signal_exc(c, 0, false);
    }
    unsigned a = phys(f, 0), b = phys(f, j);
    nm_f80 t = f->r[a];
    uint8_t tt = f->tag[a];
    f->r[a] = f->r[b];
    f->tag[a] = f->tag[b];
    f->r[b] = t;
    f->tag[b] = tt;
}

/* One operand in ST(0), the result replacing it (FSQRT, FRNDINT, F2XM1,
 * FSIN, FCOS, and FABS/FCHS with op NULL and a sign change). */
typedef nm_f80 (*unary_fn)(nm_fenv *env, nm_f80 a);
static bool st0_ready(nm_cpu *c)
{
    if (!st_empty(&c->fpu, 0)) return true;
    if (stack_fault(c, false)) st_set(&c->fpu, 0, f80_indefinite);
    return false;
}
static void do_unary(nm_cpu *c, unary_fn fn)
{
    nm_fpu *f = &c->fpu;
    if (!st0_ready(c)) return;
    nm_fenv env = fenv_of(f);
    if (fn == f80_sqrt) {
        /* precision control applies */
    } else {
        env.prec = 64;
    }
    nm_f80 r = fn(&env, st_get(f, 0));
    if (unmasked_pre(f, env.exc)) {
        signal_exc(c, env.exc, false);
        return;
    }
    st_set(f, 0, r);
    signal_exc(c, env.exc, env.c1);
}

/* FSIN, FCOS (which 0, 1), FPTAN (2), FSINCOS (3): C2 is set, and nothing
 * changed, for an operand of 2^63 or more. */
static void do_trig(nm_cpu *c, unsigned which)
{
    nm_fpu *f = &c->fpu;
    bool pushes = which >= 2;
    set_cc(f, 0, NM_FSW_C2); /* reduced, unless out of range below */
    if (st_empty(f, 0)) {
        if (!stack_fault(c, false)) return;
        st_set(f, 0, f80_indefinite);
        if (pushes) fpu_push(f, f80_indefinite);
        return;
    }
    if (pushes && !st_empty(f, 7)) {
        if (!stack_fault(c, true)) return;
        st_set(f, 0, f80_indefinite);
        fpu_push(f, f80_indefinite);
        return;
    }
    nm_fenv env = fenv_of(f);
    env.prec = 64;
    nm_f80 a = st_get(f, 0), r, r2 = f80_one();
    bool oor = false, c1b = false;
    switch (which) {
    case 0: r = f80_sin(&env, a, &oor); break;
    case 1: r = f80_cos(&env, a, &oor); break;
    case 2: r = f80_tan(&env, a, &oor); break;
    default: {
        r = f80_sin(&env, a, &oor);
        bool c1s = env.c1;
        r2 = f80_cos(&env, a, &oor);
        c1b = c1s;
        break;
    }
    }
    (void)c1b;
    if (oor) {
        set_cc(f, NM_FSW_C2, NM_FSW_C2);
        signal_exc(c, env.exc, false);
        return;
    }
    if (unmasked_pre(f, env.exc)) {
        signal_exc(c, env.exc, false);
        return;
    }
    set_cc(f, 0, NM_FSW_C2);
    st_set(f, 0, r);
    if (which == 2) {
        /* a NaN operand's FPTAN pushes the NaN again, not 1 */
        if (f80_is_nan(r)) r2 = r;
        fpu_push(f, r2);
    } else if (which == 3) {
        fpu_push(f, r2);
    }
    signal_exc(c, env.exc, env.c1);
}

/* Two operands ST(0) and ST(1) (FSCALE, FPREM, FPREM1: the result in ST(0);
 * FPATAN, FYL2X, FYL2XP1: the result in ST(1), then a pop). */
static void do_binary_st(nm_cpu *c, unsigned which)
{
    nm_fpu *f = &c->fpu;
    bool to_st1 = which >= 3;
    if (which == 1 || which == 2) set_cc(f, 0, NM_FSW_C2); /* FPREM: complete unless told */
    if (st_empty(f, 0) || st_empty(f, 1)) {
        if (!stack_fault(c, false)) return;
        st_set(f, to_st1 ? 1 : 0, f80_indefinite);
        if (to_st1) fpu_pop(f);
        return;
    }
    nm_fenv env = fenv_of(f);
    env.prec = 64;
    nm_f80 a = st_get(f, 0), b = st_get(f, 1), r;
    unsigned q = 0;
    bool incomplete = false;
    switch (which) {
    case 0: r = f80_scale(&env, a, b); break;
    case 1: r = f80_prem(&env, a, b, false, &q, &incomplete); break;
    case 2: r = f80_prem(&env, a, b, true, &q, &incomplete); break;
    case 3: r = f80_atan2(&env, b, a); break;
    case 4: r = f80_yl2x(&env, b, a, false); break;
    default: r = f80_yl2x(&env, b, a, true); break;
    }
    if (unmasked_pre(f, env.exc)) {
        signal_exc(c, env.exc, false);
        return;
    }
    st_set(f, to_st1 ? 1 : 0, r);
    if ((which == 1 || which == 2) && f80_is_nan(r)) {
        signal_exc(c, env.exc, false); /* C0 and C3 as they were (host x87) */
    } else if (which == 1 || which == 2) {
        /* C0 C3 C1 = the quotient's bits 2 1 0, C2 = not complete */
        uint16_t cc = (uint16_t)(((q & 4) ? NM_FSW_C0 : 0) | ((q & 2) ? NM_FSW_C3 : 0) |
                                 (incomplete ? NM_FSW_C2 : 0));
        signal_exc(c, env.exc, (q & 1) != 0);
        set_cc(f, cc, NM_FSW_C0 | NM_FSW_C2 | NM_FSW_C3);
    } else {
        signal_exc(c, env.exc, env.c1);
    }
    if (to_st1) fpu_pop(f);
}

static void do_fxtract(nm_cpu *c)
{
    nm_fpu *f = &c->fpu;
    if (st_empty(f, 0)) {
        if (!stack_fault(c, false)) return;
        st_set(f, 0, f80_indefinite);
        fpu_push(f, f80_indefinite);
        return;
    }
    if (!st_empty(f, 7)) {
        if (!stack_fault(c, true)) return;
        st_set(f, 0, f80_indefinite);
        fpu_push(f, f80_indefinite);
        return;
    }
    nm_fenv env = fenv_of(f);
    nm_f80 e, s = f80_extract(&env, st_get(f, 0), &e);
    if (unmasked_pre(f, env.exc)) {
        signal_exc(c, env.exc, false);
        return;
    }
    st_set(f, 0, e);
    fpu_push(f, s);
    signal_exc(c, env.exc, false);
}

/* ----------------------------------------------------- the environment */

/* FNSTENV / FNSAVE's first part (SDM vol. 1, figures 8-9 to 8-12):
 * 14 bytes with a 16-bit operand size, 28 with 32; the real-mode layouts
 * (real and virtual-8086 mode) hold 20-bit (32-bit: 32-bit) linear
 * pointers and the opcode, the protected-mode ones selector and offset. */
static unsigned env_store(nm_cpu *c, const nm_insn *i, uint8_t *p)
{
    nm_fpu *f = &c->fpu;
    bool real = !c->pe || c->vm86;
    uint16_t tw = fpu_tag_word(f);
    uint32_t ip = f->fip, dp = f->fdp;
    if (real) {
        ip += (uint32_t)f->fcs << 4;
        dp += (uint32_t)f->fds << 4;
    }
    if (i->opsize == 4) {
        memset(p, 0xff, 28);
        put_le(p, f->cw, 2);
        put_le(p + 4, f->sw, 2);
        put_le(p + 8, tw, 2);
        if (real) {
            put_le(p + 12, ip & 0xffff, 2);
            put_le(p + 16, (ip >> 16 & 0xffff) << 12 | f->fop, 4);
            put_le(p + 20, dp & 0xffff, 2);
            put_le(p + 24, (dp >> 16 & 0xffff) << 12, 4);
        } else {
            put_le(p + 12, ip, 4);
            put_le(p + 16, f->fcs | (uint32_t)f->fop << 16, 4);
            put_le(p + 20, dp, 4);
            put_le(p + 24, f->fds, 2);
        }
        return 28;
    }
    put_le(p, f->cw, 2);
    put_le(p + 2, f->sw, 2);
    put_le(p + 4, tw, 2);
    if (real) {
        put_le(p + 6, ip & 0xffff, 2);
        put_le(p + 8, (ip >> 16 & 0xf) << 12 | f->fop, 2);
        put_le(p + 10, dp & 0xffff, 2);
        put_le(p + 12, (dp >> 16 & 0xf) << 12, 2);
    } else {
        put_le(p + 6, ip & 0xffff, 2);
        put_le(p + 8, f->fcs, 2);
        put_le(p + 10, dp & 0xffff, 2);
        put_le(p + 12, f->fds, 2);
    }
    return 14;
}

static void env_load(nm_cpu *c, const nm_insn *i, const uint8_t *p)
{
    nm_fpu *f = &c->fpu;
    bool real = !c->pe || c->vm86;
    uint16_t tw;
    if (i->opsize == 4) {
        f->cw = cw_value((uint32_t)get_le(p, 2));
        f->sw = (uint16_t)get_le(p + 4, 2);
        tw = (uint16_t)get_le(p + 8, 2);
        if (real) {
            uint32_t hi = (uint32_t)get_le(p + 16, 4);
            f->fip = (uint32_t)get_le(p + 12, 2) | (hi >> 12 & 0xffff) << 16;
            f->fop = (uint16_t)(hi & 0x7ff);
            f->fdp = (uint32_t)get_le(p + 20, 2) | ((uint32_t)get_le(p + 24, 4) >> 12 & 0xffff)
                                                       << 16;
            f->fcs = f->fds = 0;
        } else {
            f->fip = (uint32_t)get_le(p + 12, 4);
            uint32_t w = (uint32_t)get_le(p + 16, 4);
            f->fcs = (uint16_t)w;
            f->fop = (uint16_t)(w >> 16 & 0x7ff);
            f->fdp = (uint32_t)get_le(p + 20, 4);
            f->fds = (uint16_t)get_le(p + 24, 2);
        }
    } else {
        f->cw = cw_value((uint32_t)get_le(p, 2));
        f->sw = (uint16_t)get_le(p + 2, 2);
        tw = (uint16_t)get_le(p + 4, 2);
        if (real) {
            uint32_t hi = (uint32_t)get_le(p + 8, 2);
            f->fip = (uint32_t)get_le(p + 6, 2) | (hi >> 12) << 16;
            f->fop = (uint16_t)(hi & 0x7ff);
            f->fdp = (uint32_t)get_le(p + 10, 2) | ((uint32_t)get_le(p + 12, 2) >> 12) << 16;
            f->fcs = f->fds = 0;
        } else {
            f->fip = (uint32_t)get_le(p + 6, 2);
            f->fcs = (uint16_t)get_le(p + 8, 2);
            f->fdp = (uint32_t)get_le(p + 10, 2);
            f->fds = (uint16_t)get_le(p + 12, 2);
        }
    }
    /* The tags: only "empty" is taken from the word, the others follow
     * the registers' contents (387 and later). */
    for (unsigned r = 0; r < 8; r++)
        f->tag[r] =
            ((tw >> (2 * r)) & 3) == NM_FTAG_EMPTY ? NM_FTAG_EMPTY : (uint8_t)fpu_tag_of(f->r[r]);
    update_es(c);
}

static void do_fstenv(nm_cpu *c, const nm_insn *i, bool save)
{
    nm_fpu *f = &c->fpu;
    uint8_t buf[108];
    unsigned n = env_store(c, i, buf);
    if (save)
        for (unsigned k = 0; k < 8; k++)
            f80_to_bytes(buf + n + 10 * k, st_get(f, k));
    write_bytes(c, i, insn_ea(c, i), buf, save ? n + 80 : n);
    if (save)
        fpu_init(c);
    else {
        f->cw |= 0x3f; /* FNSTENV masks every exception after storing: */
        update_es(c);  /* nothing is pending then (host x87) */
    }
}

static void do_fldenv(nm_cpu *c, const nm_insn *i, bool restore)
{
    nm_fpu *f = &c->fpu;
    uint8_t buf[108];
    unsigned n = i->opsize == 4 ? 28 : 14;
    read_bytes(c, i, insn_ea(c, i), buf, restore ? n + 80 : n);
    nm_f80 regs[8];
    for (unsigned k = 0; k < 8; k++)
        regs[k] = f80_of_bytes(buf + n + 10 * k);
    if (restore) {
        /* The registers are in stack order from the TOP the image holds. */
        unsigned top = (unsigned)(get_le(buf + (i->opsize == 4 ? 4 : 2), 2) >> 11) & 7;
        for (unsigned k = 0; k < 8; k++)
            f->r[(top + k) & 7] = regs[k];
    }
    env_load(c, i, buf);
}

/* ------------------------------------------------------ the handler */

static unsigned op_fmt(const nm_insn *i)
{
    /* D8 m32real, DA m32int, DC m64real, DE m16int (the arithmetic). */
    static const uint8_t fmt[4] = {MF_R32, MF_I32, MF_R64, MF_I16};
    return fmt[(i->opcode >> 1) & 3];
}

/* Instructions that neither wait for a pending exception nor update the
 * instruction and operand pointers: the no-wait controls (SDM vol. 1,
 * 8.3.11 and 8.3.12). */
static bool fpu_nowait(unsigned op)
{
    switch (op) {
    case NM_OP_FNINIT:
    case NM_OP_FNCLEX:
    case NM_OP_FNSTCW:
    case NM_OP_FNSTSW:
    case NM_OP_FNSTENV:
    case NM_OP_FNSAVE:
    case NM_OP_FNOP_LEGACY: return true;
    default: return false;
    }
}
static bool fpu_control(unsigned op)
{
    return fpu_nowait(op) || op == NM_OP_FLDCW || op == NM_OP_FLDENV || op == NM_OP_FRSTOR;
}

void h_fpu(nm_cpu *c, const nm_insn *i)
{
    /* #NM: CR0.EM or CR0.TS (SDM vol. 3A, table 2-2), with or without an
     * x87.  With none (a 386 alone, a 486SX) an ESC opcode then does
     * nothing at all: FNSTSW and FNSTCW store nothing, which is how an
     * FPU probe finds none. */
    if (c->cr0 & (NM_CR0_EM | NM_CR0_TS)) cpu_raise_noerr(c, NM_EXC_NM);
    if (c->fpu_kind == NM_FPU_NONE) return;
    if (i->op == NM_OP_ESC) cpu_raise_noerr(c, NM_EXC_UD);
    nm_fpu *f = &c->fpu;
    unsigned op = i->op;
    if (!fpu_nowait(op) && error_pending(c)) return;
    if (!fpu_control(op)) {
        f->fip = c->insn_eip;
        f->fcs = c->seg[NM_CS].selector;
        f->fop = (uint16_t)((i->opcode & 7) << 8 | i->mod << 6 | i->reg << 3 | i->rm);
        if (i->mod != 3) {
            f->fdp = insn_ea(c, i);
            f->fds = c->seg[i->seg].selector;
        }
    }
    bool reg = i->mod == 3;
    switch (op) {
    /* ---- loads and stores ---- */
    case NM_OP_FLD:
        do_load(c, i, i->opcode == 0xd9 ? MF_R32 : i->opcode == 0xdd ? MF_R64 : MF_R80);
        return;
    case NM_OP_FILD:
        do_load(c, i, i->opcode == 0xdb ? MF_I32 : i->reg == 0 ? MF_I16 : MF_I64);
        return;
    case NM_OP_FBLD: do_load(c, i, MF_BCD); return;
    case NM_OP_FST:
    case NM_OP_FSTP: {
        unsigned fmt = i->opcode == 0xd9 ? MF_R32 : i->opcode == 0xdd ? MF_R64 : MF_R80;
        do_store(c, i, fmt, op == NM_OP_FSTP);
        return;
    }
    case NM_OP_FIST:
    case NM_OP_FISTP: {
        unsigned fmt = i->opcode == 0xdb ? MF_I32 : i->reg == 7 ? MF_I64 : MF_I16;
        do_store(c, i, fmt, op == NM_OP_FISTP);
        return;
    }
    case NM_OP_FBSTP: do_store(c, i, MF_BCD, true); return;
    /* ---- arithmetic ---- */
    case NM_OP_FADD:
    case NM_OP_FMUL:
    case NM_OP_FSUB:
    case NM_OP_FSUBR:
    case NM_OP_FDIV:
    case NM_OP_FDIVR: {
        static const uint8_t kind_of[] = {
            [NM_OP_FADD - NM_OP_FADD] = 0, [NM_OP_FMUL - NM_OP_FADD] = 1,
            [NM_OP_FSUB - NM_OP_FADD] = 4, [NM_OP_FSUBR - NM_OP_FADD] = 5,
            [NM_OP_FDIV - NM_OP_FADD] = 6, [NM_OP_FDIVR - NM_OP_FADD] = 7};
        unsigned kind = kind_of[op - NM_OP_FADD];
        if (!reg) {
            nm_fenv env = fenv_of(f);
            nm_f80 src = load_mem(c, i, op_fmt(i), &env);
            do_arith(c, i, kind, 0, src, false, false, src_snan(&src, env.exc));
        } else if (i->opcode == 0xd8) {
            do_arith(c, i, kind, 0, st_get(f, i->rm), st_empty(f, i->rm), false, 0);
        } else { /* DC, DE: ST(i) = ST(i) op ST(0); DE pops */
            do_arith(c, i, kind, i->rm, st_get(f, 0), st_empty(f, 0), i->opcode == 0xde, 0);
        }
        return;
    }
    /* ---- comparisons ---- */
    case NM_OP_FCOM:
    case NM_OP_FCOMP:
    case NM_OP_FUCOM:
    case NM_OP_FUCOMP: {
        unsigned pops = op == NM_OP_FCOMP || op == NM_OP_FUCOMP;
        bool quiet = op == NM_OP_FUCOM || op == NM_OP_FUCOMP;
        if (reg) {
            do_compare(c, st_get(f, i->rm), st_empty(f, i->rm), 0, quiet, pops);
        } else {
            nm_fenv env = fenv_of(f);
            nm_f80 src = load_mem(c, i, op_fmt(i), &env);
            do_compare(c, src, false, src_snan(&src, env.exc), false, pops);
        }
        return;
    }
    case NM_OP_FCOMPP: do_compare(c, st_get(f, 1), st_empty(f, 1), 0, false, 2); return;
    case NM_OP_FUCOMPP: do_compare(c, st_get(f, 1), st_empty(f, 1), 0, true, 2); return;
    case NM_OP_FTST: do_compare(c, f80_zero(false), false, 0, false, 0); return;
    case NM_OP_FXAM: do_fxam(c); return;
    /* ---- stack ---- */
    case NM_OP_FXCH: do_fxch(c, i->rm); return;
    case NM_OP_FFREE:
        f->tag[phys(f, i->rm)] = NM_FTAG_EMPTY;
        set_cc(f, 0, NM_FSW_C1);
        if (i->opcode == 0xdf) fpu_pop(f); /* FFREEP */
        return;
    case NM_OP_FINCSTP:
    case NM_OP_FDECSTP:
        set_top(f, fpu_top(f) + (op == NM_OP_FINCSTP ? 1 : 7));
        set_cc(f, 0, NM_FSW_C1);
        return;
    case NM_OP_FLDCONST: {
        nm_fenv env = fenv_of(f);
        if (!st_empty(f, 7)) {
            if (stack_fault(c, true)) fpu_push(f, f80_indefinite);
            return;
        }
        fpu_push(f, f80_constant(&env, i->rm));
        signal_exc(c, 0, false);
        return;
    }
    /* ---- one-operand arithmetic ---- */
    case NM_OP_FCHS:
    case NM_OP_FABS:
        if (!st0_ready(c)) return;
        {
            nm_f80 v = st_get(f, 0);
            v.se = op == NM_OP_FCHS ? v.se ^ 0x8000 : v.se & 0x7fff;
            st_set(f, 0, v);
            signal_exc(c, 0, false);
        }
        return;
    case NM_OP_FSQRT: do_unary(c, f80_sqrt); return;
    case NM_OP_FRNDINT: do_unary(c, f80_round_int); return;
    case NM_OP_F2XM1: do_unary(c, f80_2xm1); return;
    case NM_OP_FSIN: do_trig(c, 0); return;
    case NM_OP_FCOS: do_trig(c, 1); return;
    case NM_OP_FPTAN: do_trig(c, 2); return;
    case NM_OP_FSINCOS: do_trig(c, 3); return;
    case NM_OP_FXTRACT: do_fxtract(c); return;
    case NM_OP_FSCALE: do_binary_st(c, 0); return;
    case NM_OP_FPREM: do_binary_st(c, 1); return;
    case NM_OP_FPREM1: do_binary_st(c, 2); return;
    case NM_OP_FPATAN: do_binary_st(c, 3); return;
    case NM_OP_FYL2X: do_binary_st(c, 4); return;
    case NM_OP_FYL2XP1: do_binary_st(c, 5); return;
    /* ---- control ---- */
    case NM_OP_FNOP:
    case NM_OP_FNOP_LEGACY: return;
    case NM_OP_FNINIT: fpu_init(c); return;
    case NM_OP_FNCLEX:
        f->sw &= (uint16_t) ~(0x7f | NM_FSW_ES | NM_FSW_B);
        set_ferr(c, false);
        return;
    case NM_OP_FLDCW: {
        uint32_t v = mem_read(c, i->seg, insn_ea(c, i), 2);
        f->cw = cw_value(v);
        update_es(c);
        return;
    }
    case NM_OP_FNSTCW: {
        uint8_t b[2];
        put_le(b, f->cw, 2);
        write_bytes(c, i, insn_ea(c, i), b, 2);
        return;
    }
    case NM_OP_FNSTSW:
        if (reg) {
            c->gpr[NM_EAX] = (c->gpr[NM_EAX] & 0xffff0000u) | f->sw;
        } else {
            uint8_t b[2];
            put_le(b, f->sw, 2);
            write_bytes(c, i, insn_ea(c, i), b, 2);
        }
        return;
    case NM_OP_FNSTENV: do_fstenv(c, i, false); return;
    case NM_OP_FNSAVE: do_fstenv(c, i, true); return;
    case NM_OP_FLDENV: do_fldenv(c, i, false); return;
    case NM_OP_FRSTOR: do_fldenv(c, i, true); return;
    default: cpu_raise_noerr(c, NM_EXC_UD);
    }
}

/* WAIT/FWAIT: #NM when CR0.MP and CR0.TS are both set; then a pending
 * unmasked exception is delivered (SDM vol. 2, WAIT). */
void h_wait(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    if ((c->cr0 & (NM_CR0_MP | NM_CR0_TS)) == (NM_CR0_MP | NM_CR0_TS)) cpu_raise(c, NM_EXC_NM, 0);
    if (c->fpu_kind != NM_FPU_NONE) error_pending(c);
}

/* ------------------------------------------------------ the decoder */

/* D8-DF after their ModRM (SDM vol. 2, tables ): the ID, which
 * says the operation, and the operand's size for memory forms (opsize:
 * 2, 4, 8 or 10; the environment forms keep the operand size, which picks
 * their layout).  Reserved encodings get FBAD (#UD when an x87 is there). */
void fpu_decode(nm_insn *i)
{
    static const uint16_t arith[8] = {NM_OP_FADD, NM_OP_FMUL,  NM_OP_FCOM, NM_OP_FCOMP,
                                      NM_OP_FSUB, NM_OP_FSUBR, NM_OP_FDIV, NM_OP_FDIVR};
    unsigned b = i->opcode, r = i->reg, m = i->rm;
    uint16_t op = NM_OP_ESC;
    uint8_t size = 0;
    i->fn = h_fpu;
    if (i->mod != 3) {
        switch (b) {
        case 0xd8: op = arith[r], size = 4; break;
        case 0xdc: op = arith[r], size = 8; break;
        case 0xda:
        case 0xde: {
            static const uint16_t iarith[8] = {NM_OP_FADD, NM_OP_FMUL,  NM_OP_FCOM, NM_OP_FCOMP,
                                               NM_OP_FSUB, NM_OP_FSUBR, NM_OP_FDIV, NM_OP_FDIVR};
            op = iarith[r];
            size = b == 0xda ? 4 : 2;
            break;
        }
        case 0xd9: {
            static const uint16_t t[8] = {NM_OP_FLD,    NM_OP_ESC,   NM_OP_FST,     NM_OP_FSTP,
                                          NM_OP_FLDENV, NM_OP_FLDCW, NM_OP_FNSTENV, NM_OP_FNSTCW};
            op = t[r];
            size = r < 4 ? 4 : r == 5 || r == 7 ? 2 : 0;
            break;
        }
        case 0xdb: {
            static const uint16_t t[8] = {NM_OP_FILD, NM_OP_ESC, NM_OP_FIST, NM_OP_FISTP,
                                          NM_OP_ESC,  NM_OP_FLD, NM_OP_ESC,  NM_OP_FSTP};
            op = t[r];
            size = r < 4 ? 4 : 10;
            break;
        }
        case 0xdd: {
            static const uint16_t t[8] = {NM_OP_FLD,    NM_OP_ESC, NM_OP_FST,    NM_OP_FSTP,
                                          NM_OP_FRSTOR, NM_OP_ESC, NM_OP_FNSAVE, NM_OP_FNSTSW};
            op = t[r];
            size = r < 4 ? 8 : r == 7 ? 2 : 0;
            break;
        }
        default: { /* DF */
            static const uint16_t t[8] = {NM_OP_FILD, NM_OP_ESC,  NM_OP_FIST,  NM_OP_FISTP,
                                          NM_OP_FBLD, NM_OP_FILD, NM_OP_FBSTP, NM_OP_FISTP};
            static const uint8_t s[8] = {2, 0, 2, 2, 10, 8, 10, 8};
            op = t[r];
            size = s[r];
            break;
        }
        }
        if (size) i->opsize = size;
        i->op = op;
        return;
    }
    switch (b) {
    case 0xd8: op = arith[r]; break;
    case 0xdc: /* reg 2, 3: FCOM2/FCOMP3, aliases; 4-7 swap their sense */
        op = r >= 4 ? arith[r ^ 1] : arith[r];
        break;
    case 0xde:
        if (r == 2)
            op = NM_OP_FCOMP; /* FCOMP5, an alias */
        else if (r == 3)
            op = m == 1 ? NM_OP_FCOMPP : NM_OP_ESC;
        else
            op = r >= 4 ? arith[r ^ 1] : arith[r];
        break;
    case 0xd9:
        switch (r) {
        case 0: op = NM_OP_FLD; break;
        case 1: op = NM_OP_FXCH; break;
        case 2: op = m == 0 ? NM_OP_FNOP : NM_OP_ESC; break;
        case 3: op = NM_OP_FSTP; break; /* FSTP1, an alias */
        case 4: {
            static const uint16_t t[8] = {NM_OP_FCHS, NM_OP_FABS, NM_OP_ESC, NM_OP_ESC,
                                          NM_OP_FTST, NM_OP_FXAM, NM_OP_ESC, NM_OP_ESC};
            op = t[m];
            break;
        }
        case 5: op = m == 7 ? NM_OP_ESC : NM_OP_FLDCONST; break;
        case 6: {
            static const uint16_t t[8] = {NM_OP_F2XM1,   NM_OP_FYL2X,   NM_OP_FPTAN,
                                          NM_OP_FPATAN,  NM_OP_FXTRACT, NM_OP_FPREM1,
                                          NM_OP_FDECSTP, NM_OP_FINCSTP};
            op = t[m];
            break;
        }
        default: {
            static const uint16_t t[8] = {NM_OP_FPREM,   NM_OP_FYL2XP1, NM_OP_FSQRT, NM_OP_FSINCOS,
                                          NM_OP_FRNDINT, NM_OP_FSCALE,  NM_OP_FSIN,  NM_OP_FCOS};
            op = t[m];
            break;
        }
        }
        break;
    case 0xda: op = r == 5 && m == 1 ? NM_OP_FUCOMPP : NM_OP_ESC; break; /* no FCMOV: P6 */
    case 0xdb:
        if (r == 4 && m <= 4) {
            static const uint16_t t[5] = {NM_OP_FNOP_LEGACY, NM_OP_FNOP_LEGACY, NM_OP_FNCLEX,
                                          NM_OP_FNINIT, NM_OP_FNOP_LEGACY};
            op = t[m]; /* FNENI, FNDISI and FNSETPM do nothing on the 387 and later */
        }
        break;
    case 0xdd: {
        static const uint16_t t[8] = {NM_OP_FFREE, NM_OP_FXCH,   NM_OP_FST, NM_OP_FSTP,
                                      NM_OP_FUCOM, NM_OP_FUCOMP, NM_OP_ESC, NM_OP_ESC};
        op = t[r]; /* DD C8+i: FXCH4, an alias */
        break;
    }
    default: /* DF */
        switch (r) {
        case 0: op = NM_OP_FFREE; break; /* FFREEP */
        case 1: op = NM_OP_FXCH; break;  /* FXCH7 */
        case 2:
        case 3: op = NM_OP_FSTP; break; /* FSTP8, FSTP9 */
        case 4: op = m == 0 ? NM_OP_FNSTSW : NM_OP_ESC; break;
        default: break; /* FUCOMIP, FCOMIP: P6 */
        }
        break;
    }
    i->op = op;
}
