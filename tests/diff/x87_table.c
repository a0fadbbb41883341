/* The x87 differential test's templates and inputs (x87_table.h).  Built
 * by code, in the same order on both sides; every case's inputs come from
 * its own splitmix64 stream seeded by (seed, template, case), so a new
 * template changes nobody else's cases. */
#include "x87_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TMPL 256
static x87_tmpl tmpls[MAX_TMPL];
static unsigned ntmpls;
static char names[MAX_TMPL][40];

static void add(const char *group, const char *name, const uint8_t *code, unsigned len,
                unsigned mem, unsigned nst, unsigned gen, unsigned flags, unsigned count)
{
    if (ntmpls >= MAX_TMPL) {
        fprintf(stderr, "x87_table: too many templates\n");
        exit(2);
    }
    x87_tmpl *t = &tmpls[ntmpls];
    snprintf(names[ntmpls], sizeof names[0], "%s", name);
    t->group = group;
    t->name = names[ntmpls];
    memcpy(t->code, code, len);
    t->len = (uint8_t)len;
    t->mem = (uint8_t)mem;
    t->nst = (uint8_t)nst;
    t->gen = (uint8_t)gen;
    t->flags = (uint8_t)flags;
    t->count = count;
    ntmpls++;
}

/* A memory form with [EBX]: ModRM mod 00, rm 011 (the same bytes address
 * [rbx] on the 64-bit host). */
static void addm(const char *group, const char *name, unsigned op, unsigned reg, unsigned mem,
                 unsigned nst, unsigned gen, unsigned flags, unsigned count)
{
    uint8_t c[2] = {(uint8_t)op, (uint8_t)(reg << 3 | 3)};
    add(group, name, c, 2, mem, nst, gen, flags, count);
}
/* A register form: op, 0xc0 | reg << 3 (| rm, random per case with X87_F_RM). */
static void addr(const char *group, const char *name, unsigned op, unsigned modrm, unsigned nst,
                 unsigned gen, unsigned flags, unsigned count)
{
    uint8_t c[2] = {(uint8_t)op, (uint8_t)modrm};
    add(group, name, c, 2, X87_M_NONE, nst, gen, flags, count);
}

static void build(void)
{
    if (ntmpls) return;
    static const char *const an[8] = {"fadd", "fmul",  "fcom", "fcomp",
                                      "fsub", "fsubr", "fdiv", "fdivr"};
    char n[40];
    /* arithmetic and compares with memory operands */
    static const struct {
        unsigned op, mem;
        const char *suffix;
    } am[4] = {{0xd8, X87_M_R32, "m32"},
               {0xdc, X87_M_R64, "m64"},
               {0xda, X87_M_I32, "m32int"},
               {0xde, X87_M_I16, "m16int"}};
    for (unsigned f = 0; f < 4; f++)
        for (unsigned r = 0; r < 8; r++) {
            snprintf(n, sizeof n, "%s_%s", an[r], am[f].suffix);
            addm(r == 2 || r == 3 ? "compare" : "arith", n, am[f].op, r, am[f].mem, 1, X87_G_ANY, 0,
                 f < 2 ? 2500 : 1200);
        }
    /* register forms: D8 ST(0) op ST(i); DC ST(i) op ST(0); DE and pop */
    for (unsigned r = 0; r < 8; r++) {
        snprintf(n, sizeof n, "%s_st0_sti", an[r]);
        addr(r == 2 || r == 3 ? "compare" : "arith", n, 0xd8, 0xc0 | r << 3, 2, X87_G_ANY, X87_F_RM,
             2500);
        snprintf(n, sizeof n, "dc_%s_sti_st0", an[r]);
        addr(r == 2 || r == 3 ? "compare" : "arith", n, 0xdc, 0xc0 | r << 3, 2, X87_G_ANY, X87_F_RM,
             r == 2 || r == 3 ? 300 : 2500);
        snprintf(n, sizeof n, "de_%s_p", an[r]);
        if (r != 3)
            addr(r == 2 ? "compare" : "arith", n, 0xde, 0xc0 | r << 3, 2, X87_G_ANY, X87_F_RM,
                 r == 2 ? 300 : 2000);
    }
    addr("compare", "fcompp", 0xde, 0xd9, 2, X87_G_ANY, 0, 1500);
    addr("compare", "fucompp", 0xda, 0xe9, 2, X87_G_ANY, 0, 1500);
    addr("compare", "fucom", 0xdd, 0xe0, 2, X87_G_ANY, X87_F_RM, 1500);
    addr("compare", "fucomp", 0xdd, 0xe8, 2, X87_G_ANY, X87_F_RM, 1500);
    addr("compare", "ftst", 0xd9, 0xe4, 1, X87_G_ANY, 0, 1500);
    addr("compare", "fxam", 0xd9, 0xe5, 1, X87_G_ANY, 0, 2000);
    /* loads and stores */
    addm("load", "fld_m32", 0xd9, 0, X87_M_R32, 0, X87_G_ANY, X87_F_PUSH, 3000);
    addm("load", "fld_m64", 0xdd, 0, X87_M_R64, 0, X87_G_ANY, X87_F_PUSH, 3000);
    addm("load", "fld_m80", 0xdb, 5, X87_M_R80, 0, X87_G_ANY, X87_F_PUSH, 2000);
    addm("load", "fild_m16", 0xdf, 0, X87_M_I16, 0, X87_G_ANY, X87_F_PUSH, 1000);
    addm("load", "fild_m32", 0xdb, 0, X87_M_I32, 0, X87_G_ANY, X87_F_PUSH, 1000);
    addm("load", "fild_m64", 0xdf, 5, X87_M_I64, 0, X87_G_ANY, X87_F_PUSH, 1000);
    addm("load", "fbld", 0xdf, 4, X87_M_BCD, 0, X87_G_ANY, X87_F_PUSH, 1000);
    addr("load", "fld_sti", 0xd9, 0xc0, 0, X87_G_ANY, X87_F_RM | X87_F_PUSH, 1500);
    static const char *const cn[7] = {"fld1",   "fldl2t", "fldl2e", "fldpi",
                                      "fldlg2", "fldln2", "fldz"};
    for (unsigned k = 0; k < 7; k++)
        addr("load", cn[k], 0xd9, 0xe8 + k, 0, X87_G_ANY, X87_F_PUSH, 400);
    addm("store", "fst_m32", 0xd9, 2, X87_M_R32, 1, X87_G_ANY, X87_F_STORE, 4000);
    addm("store", "fstp_m32", 0xd9, 3, X87_M_R32, 1, X87_G_ANY, X87_F_STORE, 1500);
    addm("store", "fst_m64", 0xdd, 2, X87_M_R64, 1, X87_G_ANY, X87_F_STORE, 4000);
    addm("store", "fstp_m64", 0xdd, 3, X87_M_R64, 1, X87_G_ANY, X87_F_STORE, 1500);
    addm("store", "fstp_m80", 0xdb, 7, X87_M_R80, 1, X87_G_ANY, X87_F_STORE, 1500);
    addm("store", "fist_m16", 0xdf, 2, X87_M_I16, 1, X87_G_INT, X87_F_STORE, 2000);
    addm("store", "fistp_m16", 0xdf, 3, X87_M_I16, 1, X87_G_INT, X87_F_STORE, 1000);
    addm("store", "fist_m32", 0xdb, 2, X87_M_I32, 1, X87_G_INT, X87_F_STORE, 2000);
    addm("store", "fistp_m32", 0xdb, 3, X87_M_I32, 1, X87_G_INT, X87_F_STORE, 1000);
    addm("store", "fistp_m64", 0xdf, 7, X87_M_I64, 1, X87_G_INT, X87_F_STORE, 2000);
    addm("store", "fbstp", 0xdf, 6, X87_M_BCD, 1, X87_G_INT, X87_F_STORE, 2000);
    addr("store", "fst_sti", 0xdd, 0xd0, 1, X87_G_ANY, X87_F_RM, 1000);
    addr("store", "fstp_sti", 0xdd, 0xd8, 1, X87_G_ANY, X87_F_RM, 1000);
    /* Not D9 D8+i (FSTP1, the 8087's alias of FSTP ST(i), as the 486 has
     * it): this host's x87 pops without a store or a stack fault there. */
    addr("store", "fstp8_sti", 0xdf, 0xd0, 1, X87_G_ANY, X87_F_RM, 300);
    addr("store", "fstp9_sti", 0xdf, 0xd8, 1, X87_G_ANY, X87_F_RM, 300);
    /* one-operand arithmetic */
    addr("unary", "fchs", 0xd9, 0xe0, 1, X87_G_ANY, 0, 1000);
    addr("unary", "fabs", 0xd9, 0xe1, 1, X87_G_ANY, 0, 1000);
    addr("unary", "fsqrt", 0xd9, 0xfa, 1, X87_G_ANY, 0, 5000);
    addr("unary", "frndint", 0xd9, 0xfc, 1, X87_G_INT, 0, 3000);
    addr("unary", "fscale", 0xd9, 0xfd, 2, X87_G_ANY, 0, 3000);
    addr("unary", "fxtract", 0xd9, 0xf4, 1, X87_G_ANY, X87_F_PUSH, 2000);
    addr("unary", "fprem", 0xd9, 0xf8, 2, X87_G_PREM, X87_F_PREM, 4000);
    addr("unary", "fprem1", 0xd9, 0xf5, 2, X87_G_PREM, X87_F_PREM, 4000);
    /* transcendentals */
    addr("trans", "fsin", 0xd9, 0xfe, 1, X87_G_TRIG, X87_F_TRANS, 3000);
    addr("trans", "fcos", 0xd9, 0xff, 1, X87_G_TRIG, X87_F_TRANS, 3000);
    addr("trans", "fsincos", 0xd9, 0xfb, 1, X87_G_TRIG, X87_F_TRANS | X87_F_PUSH, 2000);
    addr("trans", "fptan", 0xd9, 0xf2, 1, X87_G_TRIG, X87_F_TRANS | X87_F_PUSH, 3000);
    addr("trans", "fpatan", 0xd9, 0xf3, 2, X87_G_ANY, X87_F_TRANS, 3000);
    addr("trans", "f2xm1", 0xd9, 0xf0, 1, X87_G_UNIT, X87_F_TRANS, 3000);
    addr("trans", "fyl2x", 0xd9, 0xf1, 2, X87_G_LOGX, X87_F_TRANS, 3000);
    addr("trans", "fyl2xp1", 0xd9, 0xf9, 2, X87_G_LOG1P, X87_F_TRANS, 3000);
    /* stack and control */
    addr("control", "fxch", 0xd9, 0xc8, 1, X87_G_ANY, X87_F_RM, 1000);
    addr("control", "fxch4", 0xdd, 0xc8, 1, X87_G_ANY, X87_F_RM, 300);
    addr("control", "fxch7", 0xdf, 0xc8, 1, X87_G_ANY, X87_F_RM, 300);
    addr("control", "ffree", 0xdd, 0xc0, 0, X87_G_ANY, X87_F_RM, 300);
    addr("control", "ffreep", 0xdf, 0xc0, 0, X87_G_ANY, X87_F_RM, 300);
    addr("control", "fincstp", 0xd9, 0xf7, 0, X87_G_ANY, 0, 300);
    addr("control", "fdecstp", 0xd9, 0xf6, 0, X87_G_ANY, 0, 300);
    addr("control", "fnop", 0xd9, 0xd0, 0, X87_G_ANY, 0, 200);
    addr("control", "fnclex", 0xdb, 0xe2, 0, X87_G_ANY, X87_F_PENDING, 300);
    addr("control", "fninit", 0xdb, 0xe3, 0, X87_G_ANY, X87_F_PENDING, 200);
    addr("control", "fneni", 0xdb, 0xe0, 0, X87_G_ANY, 0, 100);
    addr("control", "fndisi", 0xdb, 0xe1, 0, X87_G_ANY, 0, 100);
    addr("control", "fnsetpm", 0xdb, 0xe4, 0, X87_G_ANY, 0, 100);
    addr("control", "fnstsw_ax", 0xdf, 0xe0, 0, X87_G_ANY, X87_F_PENDING, 300);
    {
        uint8_t w[1] = {0x9b};
        add("control", "fwait", w, 1, X87_M_NONE, 0, X87_G_ANY, 0, 200);
    }
    addm("control", "fldcw", 0xd9, 5, X87_M_CW, 0, X87_G_ANY, 0, 1000);
    addm("control", "fnstcw", 0xd9, 7, X87_M_CW, 0, X87_G_ANY, X87_F_STORE | X87_F_PENDING, 300);
    addm("control", "fnstsw_m16", 0xdd, 7, X87_M_CW, 0, X87_G_ANY, X87_F_STORE | X87_F_PENDING,
         300);
    addm("control", "fnstenv", 0xd9, 6, X87_M_ENV28, 0, X87_G_ANY, X87_F_STORE | X87_F_PENDING,
         500);
    addm("control", "fldenv", 0xd9, 4, X87_M_ENV28, 0, X87_G_ANY, 0, 500);
    addm("control", "fnsave", 0xdd, 6, X87_M_SAVE, 0, X87_G_ANY, X87_F_STORE | X87_F_PENDING, 500);
    addm("control", "frstor", 0xdd, 4, X87_M_SAVE, 0, X87_G_ANY, 0, 500);
    {
        uint8_t e16[3] = {0x66, 0xd9, 6 << 3 | 3}, l16[3] = {0x66, 0xd9, 4 << 3 | 3};
        add("control", "fnstenv16", e16, 3, X87_M_ENV14, 0, X87_G_ANY, X87_F_STORE | X87_F_PENDING,
            300);
        add("control", "fldenv16", l16, 3, X87_M_ENV14, 0, X87_G_ANY, 0, 300);
    }
}

const x87_tmpl *x87_table(unsigned *n)
{
    build();
    *n = ntmpls;
    return tmpls;
}

uint64_t x87_table_hash(void)
{
    build();
    uint64_t h = 1469598103934665603ull;
    for (unsigned i = 0; i < ntmpls; i++) {
        const x87_tmpl *t = &tmpls[i];
        const uint8_t fields[] = {t->len, t->mem, t->nst, t->gen, t->flags};
        for (unsigned k = 0; k < t->len; k++)
            h = (h ^ t->code[k]) * 1099511628211ull;
        for (unsigned k = 0; k < sizeof fields; k++)
            h = (h ^ fields[k]) * 1099511628211ull;
        for (const char *p = t->name; *p; p++)
            h = (h ^ (uint8_t)*p) * 1099511628211ull;
        h = (h ^ t->count) * 1099511628211ull;
    }
    return h;
}

/* ------------------------------------------------------ the inputs */

typedef struct {
    uint64_t s;
} rng_t;
static uint64_t next(rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static unsigned below(rng_t *r, unsigned n)
{
    return (unsigned)(next(r) % n);
}

static void put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* A significand with a few random bits, or all random. */
static uint64_t sig(rng_t *r)
{
    switch (below(r, 4)) {
    case 0: return 0x8000000000000000ull | (next(r) & (0xffull << below(r, 56)));
    case 1: return 0x8000000000000000ull | (next(r) >> below(r, 64)); /* low bits */
    default: return 0x8000000000000000ull | next(r);
    }
}

/* An extended value of the generator's kind. */
static void gen_f80(rng_t *r, unsigned gen, uint8_t out[10])
{
    uint64_t m;
    unsigned e, sign = below(r, 2);
    unsigned w = below(r, 100);
    switch (gen) {
    case X87_G_TRIG:
        if (w < 85) {
            e = 16383 - 20 + below(r, 45); /* 2^-20 .. 2^24 */
        } else if (w < 95) {
            e = 16383 + 24 + below(r, 42); /* up to 2^65: some out of range */
        } else {
            goto any;
        }
        m = sig(r);
        break;
    case X87_G_UNIT: /* F2XM1 is defined for |x| <= 1 only (SDM vol. 2) */
        if (w < 90) {
            e = 16383 - 1 - below(r, 70);
            m = sig(r);
        } else if (w < 95) { /* not +-1: this host flags PE there, exact as 2^x - 1 is */
            e = 16383 - 1;
            m = 0xffffffffffffffffull << below(r, 8); /* just below 1 */
        } else {
            goto small_special;
        }
        break;
    case X87_G_LOGX:
        if (w < 85) {
            sign = below(r, 20) == 0;
            e = 16383 - 200 + below(r, 400);
            m = sig(r);
            break;
        }
        goto any;
    case X87_G_LOG1P: /* FYL2XP1: defined for |x| < 1 - sqrt(2)/2 only */
        if (w < 85) {
            e = 16383 - 2 - below(r, 80); /* |x| < 0.25 */
            m = sig(r);
            break;
        }
    small_special: /* a value of magnitude below 1/4 or a special one but infinity */
        do
            gen_f80(r, X87_G_ANY, out);
        while (((out[9] & 0x7f) << 8 | out[8]) >= 16383 - 2 &&
               !(((out[9] & 0x7f) << 8 | out[8]) == 0x7fff && (out[7] & 0x40)));
        return;
    case X87_G_INT:
        if (w < 60) { /* integers and halves around the int16/int32/int64 and 10^18 limits */
            static const unsigned bits[] = {3, 8, 15, 16, 31, 32, 59, 60, 63, 64};
            unsigned b = bits[below(r, 10)];
            e = 16383 + b - 1 - below(r, 3);
            m = sig(r);
            break;
        }
        goto any;
    case X87_G_PREM:
        if (w < 85) {
            e = 16383 - 20 + below(r, 140);
            m = sig(r);
            break;
        }
        goto any;
    default:
    any:
        w = below(r, 100);
        if (w < 45) {
            e = 16383 - 64 + below(r, 128);
            m = sig(r);
        } else if (w < 55) {
            e = 1 + below(r, 0x7ffe);
            m = sig(r);
        } else if (w < 65) { /* near the ends of the range, and of single's and double's */
            /* clang-format off */
            static const unsigned edge[] = {1, 2, 64, 16383 - 126, 16383 - 149, 16383 + 127,
                                            16383 - 1022, 16383 - 1074, 16383 + 1023, 0x7ffd, 0x7ffe};
            /* clang-format on */
            e = edge[below(r, 11)] + below(r, 3) - 1;
            if (e == 0) e = 1;
            if (e >= 0x7fff) e = 0x7ffe;
            m = sig(r);
        } else if (w < 71) {
            e = 0; /* denormal */
            m = next(r) >> (1 + below(r, 63));
            if (!m) m = 1;
        } else if (w < 73) {
            e = 0; /* pseudo-denormal */
            m = 0x8000000000000000ull | next(r);
        } else if (w < 79) {
            e = 0;
            m = 0;
        } else if (w < 83) {
            e = 0x7fff;
            m = 0x8000000000000000ull;
        } else if (w < 87) {
            e = 0x7fff;
            m = 0xc000000000000000ull | (next(r) >> below(r, 64) >> 2);
        } else if (w < 91) {
            e = 0x7fff;
            m = 0x8000000000000000ull | (next(r) >> 2 >> below(r, 62));
            if (m == 0x8000000000000000ull) m |= 1;
        } else if (w < 93) {
            e = 1 + below(r, 0x7ffe); /* unnormal */
            m = next(r) >> 1;
        } else if (w < 94) {
            e = 0x7fff; /* pseudo-NaN / pseudo-infinity */
            m = next(r) >> 1;
        } else {
            e = 16383 + below(r, 20); /* a small integer */
            m = sig(r) & ~((1ull << (63 - (e - 16383))) - 1);
        }
        break;
    }
    put(out, m, 8);
    put(out + 8, (uint64_t)(sign << 15 | e), 2);
}

static uint64_t gen_ieee(rng_t *r, unsigned fbits, unsigned ebits)
{
    uint64_t emaxv = (1ull << ebits) - 1, frac = next(r) & ((1ull << fbits) - 1), e;
    unsigned w = below(r, 100);
    if (w < 60)
        e = (emaxv >> 1) - 30 + below(r, 60);
    else if (w < 75)
        e = 1 + below(r, (unsigned)emaxv - 1);
    else if (w < 83)
        e = 0; /* denormals (and zeros when frac is 0) */
    else if (w < 86)
        e = 0, frac = 0;
    else if (w < 90)
        e = emaxv, frac = 0;
    else
        e = emaxv, frac = frac ? frac : 1; /* NaNs, quiet and signalling */
    if (w < 60 && below(r, 3) == 0) frac &= ~((1ull << below(r, fbits)) - 1);
    return (uint64_t)below(r, 2) << (fbits + ebits) | e << fbits | frac;
}

static int64_t gen_int(rng_t *r, unsigned bits)
{
    static const int64_t edge[] = {0, 1, -1, 2, 10, -10, 127, -128, 255};
    unsigned w = below(r, 10);
    int64_t v;
    if (w < 2) {
        v = edge[below(r, 9)];
    } else if (w < 4) {
        v = (int64_t)(UINT64_C(1) << (bits - 1)) * (below(r, 2) ? -1 : 1);
        v += (int64_t)below(r, 3) - 1;
    } else {
        v = (int64_t)(next(r) >> below(r, 64));
        if (below(r, 2)) v = -v;
    }
    if (bits < 64) {
        v &= (int64_t)((UINT64_C(1) << bits) - 1);
        if (v >> (bits - 1)) v -= (int64_t)(UINT64_C(1) << bits);
    }
    return v;
}

static void gen_bcd(rng_t *r, uint8_t out[10])
{
    unsigned digits = 1 + below(r, 18);
    memset(out, 0, 10);
    for (unsigned d = 0; d < digits; d++) {
        unsigned v = below(r, 10);
        out[d / 2] |= (uint8_t)(v << (4 * (d & 1)));
    }
    if (below(r, 2)) out[9] = 0x80;
}

static uint16_t gen_cw(rng_t *r)
{
    static const unsigned pc[6] = {0, 1, 2, 3, 3, 3};
    unsigned masks = below(r, 4) ? 0x3f : below(r, 64);
    return (uint16_t)(masks | 0x40 | pc[below(r, 6)] << 8 | below(r, 4) << 10 | below(r, 2) << 12);
}

/* A 108-byte FRSTOR image: its CW, SW (nothing pending: only masked
 * exception flags), TW and registers. */
static void gen_image(rng_t *r, const x87_tmpl *t, uint8_t *img, bool pending_ok)
{
    memset(img, 0, 108);
    uint16_t cw = gen_cw(r);
    unsigned top = below(r, 8);
    uint16_t flags = (uint16_t)(below(r, 64) & (pending_ok ? 0x3f : cw & 0x3f));
    if (below(r, 2)) flags = 0;
    static const uint16_t cc[4] = {0x0100, 0x0200, 0x0400, 0x4000}; /* C0 C1 C2 C3 */
    uint16_t sw = (uint16_t)(flags | top << 11);
    for (unsigned b = 0; b < 4; b++)
        if (below(r, 2)) sw |= cc[b];
    if (pending_ok && (flags & ~cw & 0x3f)) sw |= 0x8080;
    uint16_t tw = 0;
    for (unsigned i = 0; i < 8; i++) { /* stack order: ST(i) is R((top + i) & 7) */
        unsigned p = (top + i) & 7;
        bool empty;
        if (i < t->nst)
            empty = below(r, 25) == 0;
        else if (i == 7 && (t->flags & X87_F_PUSH))
            empty = below(r, 7) != 0;
        else
            empty = below(r, 2) == 0;
        if (empty) tw |= (uint16_t)(3u << (2 * p));
        unsigned gen = i == 0 ? t->gen : X87_G_ANY;
        if (i == 1 && t->gen == X87_G_PREM) gen = X87_G_PREM;
        gen_f80(r, gen, img + 28 + 10 * i);
    }
    put(img, cw | 0xffff0000u, 4);
    put(img + 4, sw | 0xffff0000u, 4);
    put(img + 8, tw | 0xffff0000u, 4);
}

void x87_make_case(const x87_tmpl *t, unsigned tindex, uint32_t seed, unsigned k, x87_record *rec)
{
    rng_t r = {((uint64_t)seed << 32) ^ ((uint64_t)tindex << 20) ^ k};
    next(&r);
    memset(rec, 0, sizeof *rec);
    rec->tmpl = (uint16_t)tindex;
    memcpy(rec->code, t->code, t->len);
    rec->len = t->len;
    if (t->flags & X87_F_RM)
        rec->code[t->len - 1] = (uint8_t)((rec->code[t->len - 1] & ~7u) | below(&r, 8));
    rec->eax_in = (uint32_t)next(&r);
    gen_image(&r, t, rec->in, (t->flags & X87_F_PENDING) && below(&r, 2));
    for (unsigned b = 0; b < X87_MEM; b++)
        rec->mem_in[b] = (uint8_t)next(&r);
    uint8_t *m = rec->mem_in;
    switch (t->mem) {
    case X87_M_R32: put(m, gen_ieee(&r, 23, 8), 4); break;
    case X87_M_R64: put(m, gen_ieee(&r, 52, 11), 8); break;
    case X87_M_R80: gen_f80(&r, X87_G_ANY, m); break;
    case X87_M_I16: put(m, (uint64_t)gen_int(&r, 16), 2); break;
    case X87_M_I32: put(m, (uint64_t)gen_int(&r, 32), 4); break;
    case X87_M_I64: put(m, (uint64_t)gen_int(&r, 64), 8); break;
    case X87_M_BCD: gen_bcd(&r, m); break;
    case X87_M_CW:
        if (below(&r, 2)) put(m, gen_cw(&r), 2);
        break;
    case X87_M_ENV28:
    case X87_M_SAVE: {
        uint8_t img[108];
        gen_image(&r, t, img, true);
        memcpy(m, img, t->mem == X87_M_SAVE ? 108 : 28);
        break;
    }
    case X87_M_ENV14: {
        uint8_t img[108];
        gen_image(&r, t, img, true);
        memcpy(m, img, 2);
        memcpy(m + 2, img + 4, 2);
        memcpy(m + 4, img + 8, 2);
        memset(m + 6, 0, 8);
        break;
    }
    default: break;
    }
}
