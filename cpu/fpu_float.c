/* The x87's 80-bit arithmetic (cpu/fpu_float.h) on GNU MPFR.
 *
 * How a result is made: the operands are exact in 64-bit MPFR numbers; MPFR
 * computes the operation correctly rounded to the precision control's 24,
 * 53 or 64 bits in the rounding control's direction with an exponent range
 * far wider than the x87's, and `pack` then applies the x87's extended
 * range as the manuals describe it (SDM vol. 1, 4.9.1.4-4.9.1.6, 8.5.4-
 * 8.5.5): tininess is detected after rounding with an unbounded exponent;
 * a masked underflow denormalises the exact result again at the fixed
 * significand position (precision p less the shift: mpfr_subnormalize with
 * emin set for the format, which rounds the exact value once); an unmasked
 * overflow or underflow to a register gives the rounded result with its
 * exponent wrapped by 24576 (SDM vol. 1, 8.5.4, 8.5.5); a masked overflow
 * gives infinity or the largest finite number per the rounding direction.
 * The precision control narrows the significand only: the extended exponent
 * range is kept (SDM vol. 1, 8.1.5.2).  The same `pack`, with the format's
 * precision and range, rounds FST to single and double. */
#include "cpu/fpu_float.h"

#include <mpfr.h>
#include <string.h>

const nm_f80 f80_indefinite = {0xc000000000000000ull, 0xffff};

f80_class_t f80_class(nm_f80 a)
{
    unsigned e = a.se & F80_EXP_MAX;
    if (e == 0) return a.m ? F80_DENORMAL : F80_ZERO;
    if (!(a.m & F80_J)) return F80_UNSUPPORTED; /* unnormal, pseudo-NaN, pseudo-infinity */
    if (e != F80_EXP_MAX) return F80_NORMAL;
    if (!(a.m << 1)) return F80_INF;
    return (a.m & F80_QUIET) ? F80_QNAN : F80_SNAN;
}

nm_f80 f80_zero(bool sign)
{
    return (nm_f80){0, (uint16_t)(sign ? 0x8000 : 0)};
}
nm_f80 f80_inf(bool sign)
{
    return (nm_f80){F80_J, (uint16_t)((sign ? 0x8000 : 0) | F80_EXP_MAX)};
}
nm_f80 f80_one(void)
{
    return (nm_f80){F80_J, F80_BIAS};
}

/* A local variable of MPFR_DECL_INIT(x, 64) narrowed to p <= 64 bits (its
 * one limb of storage kept: MPFR's custom interface). */
static void narrow(mpfr_t x, mpfr_prec_t p)
{
    mpfr_custom_init_set(x, MPFR_NAN_KIND, 0, p, mpfr_custom_get_significand(x));
}

static mpfr_rnd_t rnd_of(const nm_fenv *env)
{
    static const mpfr_rnd_t r[4] = {MPFR_RNDN, MPFR_RNDD, MPFR_RNDU, MPFR_RNDZ};
    return r[env->rc & 3];
}

/* A finite value into x (x's precision at least 64: exact). */
static void f80_get(mpfr_t x, nm_f80 a)
{
    unsigned e = a.se & F80_EXP_MAX;
    if (e == 0) e = 1; /* denormals and pseudo-denormals: the exponent of 1 */
    mpfr_set_uj_2exp(x, a.m, (intmax_t)e - F80_BIAS - 63, MPFR_RNDN);
    if (f80_sign(a)) mpfr_neg(x, x, MPFR_RNDN);
}
/* Any value but NaNs and unsupported formats. */
static void f80_get_any(mpfr_t x, nm_f80 a)
{
    if (f80_class(a) == F80_INF)
        mpfr_set_inf(x, f80_sign(a) ? -1 : 1);
    else
        f80_get(x, a);
}

/* x (finite, rounded to at most 64 bits, inside the extended format's
 * range or its denormals) as a double-extended value. */
static nm_f80 f80_put(const mpfr_t x)
{
    bool neg = mpfr_signbit(x) != 0;
    if (mpfr_zero_p(x)) return f80_zero(neg);
    MPFR_DECL_INIT(t, 64);
    mpfr_abs(t, x, MPFR_RNDN);      /* x has at most 64 bits: exact */
    mpfr_exp_t e = mpfr_get_exp(t); /* t in [2^(e-1), 2^e) */
    long biased = (long)e + F80_BIAS - 1;
    nm_f80 r;
    if (biased >= 1) {
        mpfr_mul_2si(t, t, 64 - e, MPFR_RNDN);
        r.m = (uint64_t)mpfr_get_uj(t, MPFR_RNDZ);
        r.se = (uint16_t)biased;
    } else {
        mpfr_mul_2si(t, t, F80_BIAS - 1 + 63, MPFR_RNDN);
        r.m = (uint64_t)mpfr_get_uj(t, MPFR_RNDZ);
        r.se = 0;
    }
    if (neg) r.se |= 0x8000;
    return r;
}

/* A destination format: significand bits, the MPFR exponent of its
 * overflow threshold (x < 2^emax) and of its smallest normal (2^(enorm-1)). */
typedef struct {
    unsigned prec;
    long emax, enorm;
    long wrap; /* the exponent adjust of an unmasked overflow/underflow; 0: memory */
} fmt_t;

static fmt_t fmt_reg(unsigned prec)
{
    return (fmt_t){prec, 16384, -16381, 24576};
}
static const fmt_t fmt_single = {24, 128, -125, 0};
static const fmt_t fmt_double = {53, 1024, -1021, 0};

static bool rounded_up(int t, bool neg)
{
    return neg ? t < 0 : t > 0;
}

/* An unmasked overflow (over) or underflow, exception bit `exc`, of x
 * (ternary t).  To a register: the exponent is wrapped by f->wrap, or
 * where the wrapped exponent is still out of range (FSCALE's), an
 * infinity for an overflow and a zero for an underflow whatever the
 * rounding (host x87).  To memory: nothing is stored and there is no PE.
 * Returns pack()'s result. */
static bool pack_unmasked(nm_fenv *env, mpfr_t x, int t, const fmt_t *f, bool neg, bool wrap_ok,
                          unsigned exc, bool over)
{
    if (!f->wrap) {
        env->exc |= exc;
        return false;
    }
    if (!wrap_ok) {
        env->exc |= exc | NM_FPE_PE;
        env->c1 = over;
        if (over)
            mpfr_set_inf(x, neg ? -1 : 1);
        else
            mpfr_set_zero(x, neg ? -1 : 1);
        return true;
    }
    env->exc |= exc | (t ? NM_FPE_PE : 0);
    env->c1 = rounded_up(t, neg);
    mpfr_mul_2si(x, x, over ? -f->wrap : f->wrap, MPFR_RNDN);
    return true;
}

/* x: the exact result rounded to f->prec bits with an unbounded exponent
 * (ternary t).  Applies the format's range: see the file's comment.
 * Returns false when an unmasked overflow or underflow to memory leaves the
 * destination as it was; x is then unchanged. */
static bool pack(nm_fenv *env, mpfr_t x, int t, const fmt_t *f)
{
    if (mpfr_nan_p(x)) { /* an invalid operation MPFR found: 0 * inf, inf - inf, 0/0 ... */
        env->exc |= NM_FPE_IE;
        return true;
    }
    if (mpfr_inf_p(x) || mpfr_zero_p(x)) return true; /* exact: from the operands */
    bool neg = mpfr_signbit(x) != 0;
    mpfr_rnd_t rnd = rnd_of(env);
    mpfr_exp_t e = mpfr_get_exp(x);
    /* wrap_ok: an unmasked exception's wrapped exponent is in range */
    bool wrap_ok = f->wrap && e - f->wrap <= f->emax && e + f->wrap >= f->enorm;
    if (e > f->emax) {
        if (!(env->masks & NM_FPE_OE))
            return pack_unmasked(env, x, t, f, neg, wrap_ok, NM_FPE_OE, true);
        /* Masked: infinity, or the largest finite number, by direction
         * (SDM vol. 1, table 4-10). */
        env->exc |= NM_FPE_OE | NM_FPE_PE;
        bool to_inf = env->rc == 0 || (env->rc == 2 && !neg) || (env->rc == 1 && neg);
        env->c1 = to_inf;
        if (to_inf) {
            mpfr_set_inf(x, neg ? -1 : 1);
        } else {
            mpfr_set_ui_2exp(x, 1, f->emax, MPFR_RNDN);
            mpfr_nextbelow(x); /* 1 - 2^-prec at x's precision, times 2^emax */
            if (neg) mpfr_neg(x, x, MPFR_RNDN);
        }
        return true;
    }
    if (e < f->enorm) { /* tiny after rounding */
        if (!(env->masks & NM_FPE_UE))
            return pack_unmasked(env, x, t, f, neg, wrap_ok, NM_FPE_UE, false);
        mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
        mpfr_set_emin(f->enorm - (long)f->prec + 1);
        mpfr_set_emax(f->emax);
        t = mpfr_check_range(x, t, rnd);
        t = mpfr_subnormalize(x, t, rnd);
        mpfr_set_emin(emin);
        mpfr_set_emax(emax);
        if (t) env->exc |= NM_FPE_UE | NM_FPE_PE;
        env->c1 = rounded_up(t, neg);
        return true;
    }
    if (t) env->exc |= NM_FPE_PE;
    env->c1 = rounded_up(t, neg);
    return true;
}

/* pack into a register value (never refused). */
static nm_f80 pack_reg(nm_fenv *env, mpfr_t x, int t, unsigned prec)
{
    fmt_t f = fmt_reg(prec);
    pack(env, x, t, &f);
    if (mpfr_nan_p(x)) return f80_indefinite;
    if (mpfr_inf_p(x)) return f80_inf(mpfr_signbit(x) != 0);
    return f80_put(x);
}

static nm_f80 quiet(nm_f80 a)
{
    a.m |= F80_QUIET;
    return a;
}

/* The NaN result of an operation with a NaN operand (SDM vol. 1, table
 * 4-7): an SNaN is invalid; of an SNaN and a QNaN the QNaN; of two of a
 * kind the one with the larger significand, quieted. */
static nm_f80 nan_result(nm_fenv *env, nm_f80 a, nm_f80 b, bool two)
{
    f80_class_t ka = f80_class(a), kb = two ? f80_class(b) : F80_ZERO;
    if (ka == F80_SNAN || kb == F80_SNAN) env->exc |= NM_FPE_IE;
    bool an = ka == F80_QNAN || ka == F80_SNAN, bn = kb == F80_QNAN || kb == F80_SNAN;
    if (an && bn) {
        if (ka != kb) return quiet(ka == F80_QNAN ? a : b); /* an SNaN and a QNaN: the QNaN */
        uint64_t ma = a.m | F80_QUIET, mb = b.m | F80_QUIET;
        if (ma != mb) return quiet(ma > mb ? a : b);
        return quiet(f80_sign(a) ? b : a); /* equal significands: the positive one */
    }
    return quiet(an ? a : b);
}

/* The operand checks before an operation (SDM vol. 1, 8.5 and 4.9.1.1-2):
 * unsupported formats are invalid (indefinite), NaNs propagate, denormals
 * raise DE.  True when the result is decided (in *r). */
static bool check_operands(nm_fenv *env, nm_f80 a, nm_f80 b, bool two, nm_f80 *r)
{
    f80_class_t ka = f80_class(a), kb = two ? f80_class(b) : F80_ZERO;
    if (ka == F80_UNSUPPORTED || kb == F80_UNSUPPORTED) {
        env->exc |= NM_FPE_IE;
        *r = f80_indefinite;
        return true;
    }
    if (ka == F80_QNAN || ka == F80_SNAN || kb == F80_QNAN || kb == F80_SNAN) {
        *r = nan_result(env, a, b, two);
        return true;
    }
    if (ka == F80_DENORMAL || kb == F80_DENORMAL) env->exc |= NM_FPE_DE;
    if (env->exc & NM_FPE_DE & ~env->masks) { /* unmasked: not computed */
        *r = a;
        return true;
    }
    return false;
}

/* An invalid operation MPFR reported as NaN: the indefinite. */
static nm_f80 finish(nm_fenv *env, mpfr_t x, int t, unsigned prec)
{
    if (mpfr_nan_p(x)) {
        env->exc |= NM_FPE_IE;
        return f80_indefinite;
    }
    return pack_reg(env, x, t, prec);
}

nm_f80 f80_arith(nm_fenv *env, unsigned op, nm_f80 a, nm_f80 b)
{
    nm_f80 r;
    f80_class_t ka = f80_class(a), kb = f80_class(b);
    if (op == 3 && kb == F80_ZERO && (ka == F80_NORMAL || ka == F80_DENORMAL)) {
        /* finite / 0: ZE, and no DE for a denormal dividend */
        env->exc |= NM_FPE_ZE;
        if (!(env->masks & NM_FPE_ZE)) return a;
        return f80_inf(f80_sign(a) != f80_sign(b));
    }
    if (check_operands(env, a, b, true, &r)) return r;
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    MPFR_DECL_INIT(z, 64);
    narrow(z, env->prec);
    f80_get_any(x, a);
    f80_get_any(y, b);
    mpfr_rnd_t rnd = rnd_of(env);
    int t;
    mpfr_clear_divby0();
    switch (op) {
    case 0: t = mpfr_add(z, x, y, rnd); break;
    case 1: t = mpfr_sub(z, x, y, rnd); break;
    case 2: t = mpfr_mul(z, x, y, rnd); break;
    default: t = mpfr_div(z, x, y, rnd); break;
    }
    return finish(env, z, t, env->prec);
}

nm_f80 f80_sqrt(nm_fenv *env, nm_f80 a)
{
    nm_f80 r;
    f80_class_t k = f80_class(a);
    if (f80_sign(a) && (k == F80_DENORMAL || k == F80_NORMAL)) { /* invalid before DE */
        env->exc |= NM_FPE_IE;
        return f80_indefinite;
    }
    if (check_operands(env, a, a, false, &r)) return r;
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(z, 64);
    narrow(z, env->prec);
    f80_get_any(x, a);
    int t = mpfr_sqrt(z, x, rnd_of(env));
    return finish(env, z, t, env->prec);
}

nm_f80 f80_round_int(nm_fenv *env, nm_f80 a)
{
    nm_f80 r;
    if (check_operands(env, a, a, false, &r)) return r;
    f80_class_t k = f80_class(a);
    if (k == F80_ZERO || k == F80_INF) return a;
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(z, 64);
    f80_get(x, a);
    int t = mpfr_rint(z, x, rnd_of(env));
    if (t) env->exc |= NM_FPE_PE;
    env->c1 = rounded_up(t, f80_sign(a));
    return f80_put(z);
}

nm_f80 f80_scale(nm_fenv *env, nm_f80 a, nm_f80 b)
{
    nm_f80 r;
    if (check_operands(env, a, b, true, &r)) return r;
    f80_class_t ka = f80_class(a), kb = f80_class(b);
    if (kb == F80_INF) {
        /* 0 * 2^+inf and inf * 2^-inf are invalid (SDM vol. 2, FSCALE table). */
        if ((ka == F80_ZERO && !f80_sign(b)) || (ka == F80_INF && f80_sign(b))) {
            env->exc |= NM_FPE_IE;
            return f80_indefinite;
        }
        if (ka == F80_ZERO || ka == F80_INF) return a;
        return f80_sign(b) ? f80_zero(f80_sign(a)) : f80_inf(f80_sign(a));
    }
    if (ka == F80_ZERO || ka == F80_INF) return a;
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    f80_get(x, a);
    f80_get(y, b);
    mpfr_trunc(y, y);
    /* Beyond +-2^17 every result over- or underflows whatever a is: clamp
     * (the wrapped results of unmasked exceptions stay in their range too). */
    long n = mpfr_cmp_si(y, 1l << 17) > 0      ? 1l << 17
             : mpfr_cmp_si(y, -(1l << 17)) < 0 ? -(1l << 17)
                                               : mpfr_get_si(y, MPFR_RNDZ);
    mpfr_mul_2si(x, x, n, MPFR_RNDN); /* exact: no rounding at an unbounded exponent */
    return pack_reg(env, x, 0, 64);
}

nm_f80 f80_extract(nm_fenv *env, nm_f80 a, nm_f80 *exp_out)
{
    nm_f80 r;
    if (check_operands(env, a, a, false, &r)) {
        *exp_out = r;
        return r;
    }
    f80_class_t k = f80_class(a);
    if (k == F80_ZERO) { /* ZE, exponent -inf (SDM vol. 2, FXTRACT) */
        env->exc |= NM_FPE_ZE;
        *exp_out = f80_inf(true);
        return a;
    }
    if (k == F80_INF) {
        *exp_out = f80_inf(false);
        return a;
    }
    MPFR_DECL_INIT(x, 64);
    f80_get(x, a);
    long e = (long)mpfr_get_exp(x) - 1; /* x in [2^e, 2^(e+1)) */
    *exp_out = f80_from_int(e);
    mpfr_mul_2si(x, x, -e, MPFR_RNDN);
    return f80_put(x);
}

/* A finite value again as a result: a pseudo-denormal comes out normal,
 * a denormal through the underflow rules (wrapped when UE is unmasked). */
static nm_f80 repack(nm_fenv *env, nm_f80 a)
{
    MPFR_DECL_INIT(x, 64);
    f80_get(x, a);
    return pack_reg(env, x, 0, 64);
}

/* A finite nonzero value as m * 2^e with m's top bit set. */
static void f80_norm(nm_f80 a, uint64_t *m, long *e)
{
    long ex = a.se & F80_EXP_MAX;
    if (ex == 0) ex = 1;
    uint64_t mm = a.m;
    int sh = __builtin_clzll(mm);
    *m = mm << sh;
    *e = ex - F80_BIAS - 63 - sh;
}

nm_f80 f80_prem(nm_fenv *env, nm_f80 a, nm_f80 b, bool ieee, unsigned *quot, bool *incomplete)
{
    *quot = 0;
    *incomplete = false;
    nm_f80 r;
    f80_class_t ka = f80_class(a), kb = f80_class(b);
    bool specials =
        ka == F80_UNSUPPORTED || kb == F80_UNSUPPORTED || f80_is_nan(a) || f80_is_nan(b);
    if (!specials && (ka == F80_INF || kb == F80_ZERO)) { /* invalid, before DE */
        env->exc |= NM_FPE_IE;
        return f80_indefinite;
    }
    if (check_operands(env, a, b, true, &r)) return r;
    if (ka == F80_ZERO) return a;
    if (kb == F80_INF) return repack(env, a);
    uint64_t ma, mb;
    long ea, eb;
    f80_norm(a, &ma, &ea);
    f80_norm(b, &mb, &eb);
    long d = ea - eb; /* the exponents' difference (both significands normalised) */
    bool neg = f80_sign(a);
    uint64_t q, rem;
    long escale;
    if (d < 0) {
        /* |a| < |b|: quotient 0, or 1 for FPREM1 when |a| > |b| / 2. */
        if (!ieee || d < -1) return repack(env, a);
        /* d = -1: |a| > |b| / 2 when ma > mb (a tie goes to the even 0);
         * then |a| - |b| = -(2 mb - ma) 2^ea. */
        if (ma <= mb) return repack(env, a);
        q = 1;
        rem = (uint64_t)(((unsigned __int128)mb << 1) - ma);
        escale = ea;
        neg = !neg;
        goto done;
    }
    unsigned shift;
    if (d < 64) {
        shift = (unsigned)d;
        escale = eb;
    } else { /* a partial remainder: the difference comes down to 32..63 */
        shift = 32 + (unsigned)((d - 32) % 32);
        *incomplete = true;
        escale = ea - shift;
    }
    {
        unsigned __int128 num = (unsigned __int128)ma << shift;
        q = (uint64_t)(num / mb);
        rem = (uint64_t)(num % mb);
    }
    if (ieee && !*incomplete) {
        unsigned __int128 twice = (unsigned __int128)rem << 1;
        if (twice > mb || (twice == mb && (q & 1))) {
            q++;
            rem = mb - rem;
            neg = !neg;
        }
    }
done:
    *quot = (unsigned)(q & 7);
    if (rem == 0) return f80_zero(f80_sign(a));
    MPFR_DECL_INIT(x, 64);
    mpfr_set_uj_2exp(x, rem, escale, MPFR_RNDN);
    if (neg) mpfr_neg(x, x, MPFR_RNDN);
    return pack_reg(env, x, 0, 64);
}

unsigned f80_compare(nm_fenv *env, nm_f80 a, nm_f80 b, bool quiet_cmp)
{
    f80_class_t ka = f80_class(a), kb = f80_class(b);
    if (ka == F80_UNSUPPORTED || kb == F80_UNSUPPORTED || ka == F80_SNAN || kb == F80_SNAN) {
        env->exc |= NM_FPE_IE;
        return 3;
    }
    if (ka == F80_QNAN || kb == F80_QNAN) {
        if (!quiet_cmp) env->exc |= NM_FPE_IE;
        return 3;
    }
    if (ka == F80_DENORMAL || kb == F80_DENORMAL) env->exc |= NM_FPE_DE;
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(y, 64);
    f80_get_any(x, a);
    f80_get_any(y, b);
    int c = mpfr_cmp(x, y);
    return c > 0 ? 0 : c < 0 ? 1 : 2;
}

nm_f80 f80_from_int(int64_t v)
{
    if (v == 0) return f80_zero(false);
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int sh = __builtin_clzll(mag);
    nm_f80 r = {mag << sh, (uint16_t)(F80_BIAS + 63 - sh)};
    if (v < 0) r.se |= 0x8000;
    return r;
}

/* A single or double (frac bits, exponent bits) into the extended format. */
static nm_f80 from_ieee(nm_fenv *env, uint64_t v, unsigned fbits, unsigned ebits)
{
    bool neg = (v >> (fbits + ebits)) & 1;
    unsigned emaxv = (1u << ebits) - 1, bias = emaxv >> 1;
    unsigned e = (unsigned)(v >> fbits) & emaxv;
    uint64_t frac = v & ((1ull << fbits) - 1);
    nm_f80 r;
    if (e == emaxv) {
        r.se = F80_EXP_MAX;
        r.m = F80_J | frac << (63 - fbits);
        if (frac && !(r.m & F80_QUIET)) { /* SNaN: invalid, loaded quiet */
            env->exc |= NM_FPE_IE;
            r.m |= F80_QUIET;
        }
    } else if (e == 0) {
        if (!frac) return f80_zero(neg);
        env->exc |= NM_FPE_DE; /* a denormal is normalised on the way in */
        int sh = __builtin_clzll(frac);
        r.m = frac << sh;
        r.se = (uint16_t)(F80_BIAS - bias + 1 - (sh - (63 - (int)fbits)));
    } else {
        r.m = F80_J | frac << (63 - fbits);
        r.se = (uint16_t)(e - bias + F80_BIAS);
    }
    if (neg) r.se |= 0x8000;
    return r;
}

nm_f80 f80_from_f32(nm_fenv *env, uint32_t v)
{
    return from_ieee(env, v, 23, 8);
}
nm_f80 f80_from_f64(nm_fenv *env, uint64_t v)
{
    return from_ieee(env, v, 52, 11);
}

nm_f80 f80_from_bcd(const uint8_t bcd[10])
{
    uint64_t v = 0;
    for (int i = 8; i >= 0; i--)
        v = v * 100 + (bcd[i] >> 4) * 10 + (bcd[i] & 15);
    nm_f80 r = f80_from_int((int64_t)v); /* < 10^18 for valid digits; at most 1.7e18 */
    if (bcd[9] & 0x80) r.se |= 0x8000;
    return r;
}

/* An extended value into a single or double. */
static uint64_t to_ieee(nm_fenv *env, nm_f80 a, const fmt_t *f, unsigned fbits, unsigned ebits,
                        bool *store)
{
    *store = true;
    uint64_t sign = (uint64_t)f80_sign(a) << (fbits + ebits);
    uint64_t emaxv = (1ull << ebits) - 1;
    f80_class_t k = f80_class(a);
    switch (k) {
    case F80_ZERO: return sign;
    case F80_INF: return sign | emaxv << fbits;
    case F80_UNSUPPORTED:
        env->exc |= NM_FPE_IE;
        if (!(env->masks & NM_FPE_IE)) *store = false;
        return 1ull << (fbits + ebits) | emaxv << fbits | 1ull << (fbits - 1); /* indefinite */
    case F80_SNAN:
    case F80_QNAN:
        if (k == F80_SNAN) {
            env->exc |= NM_FPE_IE;
            if (!(env->masks & NM_FPE_IE)) *store = false;
        }
        return sign | emaxv << fbits | ((a.m | F80_QUIET) << 1 >> (64 - fbits));
    default: break;
    }
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(z, 64);
    narrow(z, f->prec);
    f80_get(x, a);
    int t = mpfr_set(z, x, rnd_of(env));
    if (!pack(env, z, t, f)) {
        *store = false;
        return 0;
    }
    if (mpfr_inf_p(z)) return sign | emaxv << fbits;
    if (mpfr_zero_p(z)) return sign;
    long e = (long)mpfr_get_exp(z); /* z in [2^(e-1), 2^e) */
    long bias = (long)(emaxv >> 1);
    long biased = e - 1 + bias;
    mpfr_abs(z, z, MPFR_RNDN);
    if (biased >= 1) {
        mpfr_mul_2si(z, z, (long)fbits + 1 - e, MPFR_RNDN);
        uint64_t m = (uint64_t)mpfr_get_uj(z, MPFR_RNDZ);
        return sign | (uint64_t)biased << fbits | (m & ((1ull << fbits) - 1));
    }
    mpfr_mul_2si(z, z, bias - 1 + (long)fbits, MPFR_RNDN);
    return sign | (uint64_t)mpfr_get_uj(z, MPFR_RNDZ);
}

uint32_t f80_to_f32(nm_fenv *env, nm_f80 a, bool *store)
{
    return (uint32_t)to_ieee(env, a, &fmt_single, 23, 8, store);
}
uint64_t f80_to_f64(nm_fenv *env, nm_f80 a, bool *store)
{
    return to_ieee(env, a, &fmt_double, 52, 11, store);
}

/* Rounds a to an integer per env (PE, C1) into z (64-bit); false for
 * NaNs, infinities and unsupported formats. */
static bool round_to_integer(nm_fenv *env, nm_f80 a, mpfr_t z, int *t)
{
    f80_class_t k = f80_class(a);
    if (k == F80_QNAN || k == F80_SNAN || k == F80_INF || k == F80_UNSUPPORTED) return false;
    MPFR_DECL_INIT(x, 64);
    f80_get(x, a);
    *t = mpfr_rint(z, x, rnd_of(env));
    return true;
}

int64_t f80_to_int(nm_fenv *env, nm_f80 a, unsigned bits, bool *store)
{
    *store = true;
    MPFR_DECL_INIT(z, 64);
    int t = 0;
    bool ok = round_to_integer(env, a, z, &t);
    if (ok) {
        MPFR_DECL_INIT(lim, 64);
        mpfr_set_si_2exp(lim, -1, (long)bits - 1, MPFR_RNDN);
        ok = mpfr_cmp(z, lim) >= 0;
        mpfr_neg(lim, lim, MPFR_RNDN);
        ok = ok && mpfr_cmp(z, lim) < 0;
    }
    if (!ok) { /* invalid: the integer indefinite, the most negative value */
        env->exc |= NM_FPE_IE;
        if (!(env->masks & NM_FPE_IE)) *store = false;
        return (int64_t)(UINT64_C(1) << 63) >> (64 - bits);
    }
    if (t) env->exc |= NM_FPE_PE;
    env->c1 = rounded_up(t, f80_sign(a));
    return mpfr_get_sj(z, MPFR_RNDZ);
}

void f80_to_bcd(nm_fenv *env, nm_f80 a, uint8_t bcd[10], bool *store)
{
    *store = true;
    MPFR_DECL_INIT(z, 64);
    int t = 0;
    bool ok = round_to_integer(env, a, z, &t);
    uint64_t v = 0;
    if (ok) {
        MPFR_DECL_INIT(az, 64);
        mpfr_abs(az, z, MPFR_RNDN);
        ok = mpfr_cmp_d(az, 1e18) < 0; /* 10^18 is exact in a double */
        if (ok) v = (uint64_t)mpfr_get_uj(az, MPFR_RNDZ);
    }
    if (!ok) { /* the packed-BCD indefinite (SDM vol. 1, table 4-3) */
        env->exc |= NM_FPE_IE;
        if (!(env->masks & NM_FPE_IE)) *store = false;
        memset(bcd, 0, 10);
        bcd[9] = 0xff;
        bcd[8] = 0xff;
        bcd[7] = 0xc0;
        return;
    }
    if (t) env->exc |= NM_FPE_PE;
    env->c1 = rounded_up(t, f80_sign(a));
    for (int i = 0; i < 9; i++) {
        unsigned lo = (unsigned)(v % 10);
        v /= 10;
        unsigned hi = (unsigned)(v % 10);
        v /= 10;
        bcd[i] = (uint8_t)(hi << 4 | lo);
    }
    bcd[9] = f80_sign(a) ? 0x80 : 0;
}

/* ------------------------------------------------- constants */

/* The constants, rounded per RC (SDM vol. 1, 8.3.8: held internally with
 * more bits than the format, rounded per RC; the host x87 rounds log10(2),
 * whose bits 65-66 are 10 and then not all zero, up under round-to-
 * nearest: the value is rounded, not a 66-bit truncation). */
nm_f80 f80_constant(nm_fenv *env, unsigned index)
{
    if (index == 0) return f80_one();
    if (index == 6) return f80_zero(false);
    MPFR_DECL_INIT(big, 192);
    MPFR_DECL_INIT(z, 64);
    switch (index) {
    case 1: /* log2(10) */
        mpfr_set_ui(big, 10, MPFR_RNDN);
        mpfr_log2(big, big, MPFR_RNDN);
        break;
    case 2: /* log2(e) = 1 / ln 2 */
        mpfr_const_log2(big, MPFR_RNDN);
        mpfr_ui_div(big, 1, big, MPFR_RNDN);
        break;
    case 3: mpfr_const_pi(big, MPFR_RNDN); break;
    case 4: /* log10(2) */
        mpfr_set_ui(big, 2, MPFR_RNDN);
        mpfr_log10(big, big, MPFR_RNDN);
        break;
    default: mpfr_const_log2(big, MPFR_RNDN); break;
    }
    mpfr_set(z, big, rnd_of(env));
    return f80_put(z);
}

/* ------------------------------------------------- transcendentals */

#define TPREC 256 /* the working precision: rounded once to 64 bits at the end */

/* The x87's pi for argument reduction: 66 bits, 0xC90FDAA22168C234C
 * (Pentium Processor Family Developer's Manual vol. 3, FSIN: "a 66-bit
 * approximation of pi"; the significand of pi rounded to 66 bits). */
static void pi66_half(mpfr_t p)
{
    /* pi's first 64 bits (value M * 2^-62), then its 65th and 66th bits
     * (binary 11, weights 2^-63 and 2^-64); exact at TPREC */
    mpfr_set_uj_2exp(p, 0xC90FDAA22168C234ull, -62, MPFR_RNDN);
    MPFR_DECL_INIT(lo, 64);
    mpfr_set_ui_2exp(lo, 3, -64, MPFR_RNDN);
    mpfr_add(p, p, lo, MPFR_RNDN);
    mpfr_div_2ui(p, p, 1, MPFR_RNDN);
}

/* x reduced by the 66-bit pi/2: r = x - k pi66/2, exactly (r has TPREC bits;
 * x 64, k pi66/2 at most 64 + 66). */
static long reduce(mpfr_t r, const mpfr_t x)
{
    MPFR_DECL_INIT(p, TPREC);
    MPFR_DECL_INIT(q, TPREC);
    pi66_half(p);
    mpfr_div(q, x, p, MPFR_RNDN);
    mpfr_rint(q, q, MPFR_RNDN);
    long k = (long)(mpfr_get_sj(q, MPFR_RNDN) & 3);
    mpfr_mul(q, q, p, MPFR_RNDN); /* exact: 64 + 66 bits */
    mpfr_sub(r, x, q, MPFR_RNDN); /* exact: see above */
    return k;
}

/* Rounds a TPREC-bit value to the result: `big` holds the exact value
 * rounded to nearest with ternary tbig.  One rounding to 64 bits of it is
 * the correct rounding of the exact value, but when `big` is itself a
 * 64-bit number or a midpoint (sin x = x - x^3/6 for a tiny x: the exact
 * value is just beside it), where it is moved by one of its own units
 * toward the exact value first. */
static nm_f80 tround(nm_fenv *env, mpfr_t big, int tbig)
{
    if (mpfr_nan_p(big)) {
        env->exc |= NM_FPE_IE;
        return f80_indefinite;
    }
    if (tbig && mpfr_regular_p(big)) {
        MPFR_DECL_INIT(c65, 65);
        if (mpfr_set(c65, big, MPFR_RNDN) == 0) {
            if (tbig > 0)
                mpfr_nextbelow(big);
            else
                mpfr_nextabove(big);
        }
    }
    MPFR_DECL_INIT(z, 64);
    int t = mpfr_set(z, big, rnd_of(env));
    /* a tiny result is an underflow here even when exact (host x87: FYL2X
     * of a denormal y and a power of two) */
    if ((env->masks & NM_FPE_UE) && mpfr_regular_p(z) && mpfr_get_exp(z) < -16381)
        env->exc |= NM_FPE_UE;
    return pack_reg(env, z, t, 64);
}

static bool trig_operand(nm_fenv *env, nm_f80 a, nm_f80 *r, bool *out_of_range)
{
    *out_of_range = false;
    if (check_operands(env, a, a, false, r)) return true;
    if (f80_class(a) == F80_INF) {
        env->exc |= NM_FPE_IE;
        *r = f80_indefinite;
        return true;
    }
    if ((a.se & F80_EXP_MAX) >= F80_BIAS + 63) {
        *out_of_range = true;
        *r = a;
        return true;
    }
    return false;
}

/* which: 0 sin, 1 cos, 2 tan. */
static nm_f80 trig(nm_fenv *env, nm_f80 a, unsigned which, bool *out_of_range)
{
    nm_f80 r;
    if (trig_operand(env, a, &r, out_of_range)) return r;
    if (f80_class(a) == F80_ZERO) return which == 1 ? f80_one() : a;
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(red, TPREC);
    MPFR_DECL_INIT(big, TPREC);
    f80_get(x, a);
    long k = reduce(red, x);
    int t;
    if (which == 2) {
        if (k & 1) {
            t = mpfr_cot(big, red, MPFR_RNDN);
            mpfr_neg(big, big, MPFR_RNDN);
            t = -t;
        } else {
            t = mpfr_tan(big, red, MPFR_RNDN);
        }
    } else {
        long s = (k + (which == 1 ? 1 : 0)) & 3; /* cos x = sin(x + pi/2) */
        if (s & 1)
            t = mpfr_cos(big, red, MPFR_RNDN);
        else
            t = mpfr_sin(big, red, MPFR_RNDN);
        if (s & 2) {
            mpfr_neg(big, big, MPFR_RNDN);
            t = -t;
        }
    }
    return tround(env, big, t);
}

nm_f80 f80_sin(nm_fenv *env, nm_f80 a, bool *out_of_range)
{
    return trig(env, a, 0, out_of_range);
}
nm_f80 f80_cos(nm_fenv *env, nm_f80 a, bool *out_of_range)
{
    return trig(env, a, 1, out_of_range);
}
nm_f80 f80_tan(nm_fenv *env, nm_f80 a, bool *out_of_range)
{
    return trig(env, a, 2, out_of_range);
}

nm_f80 f80_atan2(nm_fenv *env, nm_f80 y, nm_f80 x)
{
    nm_f80 r;
    if (check_operands(env, y, x, true, &r)) return r;
    MPFR_DECL_INIT(a, 64);
    MPFR_DECL_INIT(b, 64);
    MPFR_DECL_INIT(big, TPREC);
    f80_get_any(a, y);
    f80_get_any(b, x);
    int t = mpfr_atan2(big, a, b, MPFR_RNDN);
    return tround(env, big, t);
}

nm_f80 f80_2xm1(nm_fenv *env, nm_f80 a)
{
    nm_f80 r;
    if (check_operands(env, a, a, false, &r)) return r;
    f80_class_t k = f80_class(a);
    if (k == F80_ZERO) return a;
    if (k == F80_INF) return f80_sign(a) ? (nm_f80){F80_J, 0x8000 | F80_BIAS} : a;
    MPFR_DECL_INIT(x, 64);
    MPFR_DECL_INIT(big, TPREC);
    f80_get(x, a);
    int t = mpfr_exp2m1(big, x, MPFR_RNDN);
    return tround(env, big, t);
}

nm_f80 f80_yl2x(nm_fenv *env, nm_f80 y, nm_f80 x, bool plus1)
{
    nm_f80 r;
    f80_class_t kx = f80_class(x), ky = f80_class(y);
    if (!plus1 && f80_sign(x) && (kx == F80_NORMAL || kx == F80_DENORMAL || kx == F80_INF) &&
        ky != F80_UNSUPPORTED && !f80_is_nan(y)) { /* log of a negative: invalid, before DE */
        env->exc |= NM_FPE_IE;
        return f80_indefinite;
    }
    if (!plus1 && kx == F80_ZERO && (ky == F80_NORMAL || ky == F80_DENORMAL)) {
        /* y log2(0): zero divide, before DE; -inf with y's sign turned */
        env->exc |= NM_FPE_ZE;
        if (!(env->masks & NM_FPE_ZE)) return x;
        return f80_inf(!f80_sign(y));
    }
    if (check_operands(env, y, x, true, &r)) return r;
    MPFR_DECL_INIT(a, 64);
    MPFR_DECL_INIT(b, 64);
    MPFR_DECL_INIT(big, TPREC);
    f80_get_any(a, y);
    f80_get_any(b, x);
    int t;
    if (plus1) {
        t = mpfr_log2p1(big, b, MPFR_RNDN);
    } else {
        t = mpfr_log2(big, b, MPFR_RNDN);
    }
    /* y times the TPREC-bit logarithm is exact at TPREC + 64 bits: the
     * product's direction from the exact value is the logarithm's, with
     * y's sign */
    MPFR_DECL_INIT(prod, TPREC + 64);
    mpfr_mul(prod, big, a, MPFR_RNDN);
    if (mpfr_signbit(a)) t = -t;
    return tround(env, prod, mpfr_regular_p(prod) ? t : 0);
}
