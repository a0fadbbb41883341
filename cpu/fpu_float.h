/* The x87's 80-bit arithmetic (Intel387 DX Programmer's Reference Manual,
 * Intel486 Microprocessor Family Programmer's Reference Manual chapters
 * 15-16, Pentium Processor Family Developer's Manual vol. 3 chapter 6, and
 * SDM vol. 1 chapters 4 and 8): values in the double-extended format, every
 * result rounded as the x87 rounds it under the precision control (24, 53
 * or 64 bits, with the extended exponent range kept) and the rounding
 * control, with the masked and unmasked responses to the six numeric
 * exceptions.  The exact arithmetic is GNU MPFR's (cpu/fpu_float.c says
 * how); the transcendentals are correctly rounded from an argument reduced
 * with the x87's 66-bit pi (docs/cpu.md, "The x87").
 *
 * Nothing here knows the register stack, the tag word or the instruction
 * pointers: those are cpu/fpu.c's. */
#ifndef NICEMU_CPU_FPU_FLOAT_H
#define NICEMU_CPU_FPU_FLOAT_H

#include <stdbool.h>
#include <stdint.h>

/* A double-extended value: 64-bit significand with its explicit integer
 * bit, sign and 15-bit biased exponent in `se`. */
typedef struct nm_f80 {
    uint64_t m;
    uint16_t se;
} nm_f80;

#define F80_BIAS    16383
#define F80_EXP_MAX 0x7fff
#define F80_J       0x8000000000000000ull /* the integer bit */
#define F80_QUIET   0x4000000000000000ull /* the quiet bit of a NaN */

/* The status word's exception bits (SDM vol. 1, 8.1.3). */
#define NM_FPE_IE 0x0001u /* invalid operation */
#define NM_FPE_DE 0x0002u /* denormal operand */
#define NM_FPE_ZE 0x0004u /* zero divide */
#define NM_FPE_OE 0x0008u /* overflow */
#define NM_FPE_UE 0x0010u /* underflow */
#define NM_FPE_PE 0x0020u /* precision (inexact) */
#define NM_FPE_SF 0x0040u /* stack fault (with IE) */
/* The exceptions an x87 detects before it computes a result: unmasked, the
 * destination and the stack are left as they were (SDM vol. 1, 8.5). */
#define NM_FPE_PRE (NM_FPE_IE | NM_FPE_DE | NM_FPE_ZE)

/* Classes (FXAM's, SDM vol. 2 FXAM, plus the signalling/quiet split). */
typedef enum {
    F80_ZERO,
    F80_DENORMAL, /* exponent 0, significand not 0: denormals and pseudo-denormals */
    F80_NORMAL,
    F80_INF,
    F80_QNAN,
    F80_SNAN,
    F80_UNSUPPORTED, /* unnormals, pseudo-NaNs, pseudo-infinities (387 and later) */
} f80_class_t;

f80_class_t f80_class(nm_f80 a);
static inline bool f80_sign(nm_f80 a)
{
    return (a.se & 0x8000) != 0;
}
static inline bool f80_is_nan(nm_f80 a)
{
    f80_class_t k = f80_class(a);
    return k == F80_QNAN || k == F80_SNAN;
}

/* What an operation works under and what it reports. */
typedef struct nm_fenv {
    unsigned prec;  /* significand bits results are rounded to: 24, 53 or 64 */
    unsigned rc;    /* rounding control: 0 nearest, 1 down, 2 up, 3 toward zero */
    uint16_t masks; /* the control word's six mask bits (1: masked) */
    uint16_t exc;   /* out: NM_FPE_* raised */
    bool c1;        /* out: the result was rounded up in magnitude (SW.C1) */
} nm_fenv;

/* Constants. */
extern const nm_f80 f80_indefinite; /* the QNaN "real indefinite": -1.1 x 2^16384 */
nm_f80 f80_zero(bool sign);
nm_f80 f80_inf(bool sign);
nm_f80 f80_one(void);
/* FLD1 FLDL2T FLDL2E FLDPI FLDLG2 FLDLN2 FLDZ (D9 E8..EE): index 0..6,
 * rounded per env->rc from the 66-bit internal constant (no exception). */
nm_f80 f80_constant(nm_fenv *env, unsigned index);

/* Arithmetic, rounded to env->prec bits.  op: 0 add, 1 sub, 2 mul, 3 div. */
nm_f80 f80_arith(nm_fenv *env, unsigned op, nm_f80 a, nm_f80 b);
nm_f80 f80_sqrt(nm_fenv *env, nm_f80 a);
/* FRNDINT (64-bit precision, env->rc). */
nm_f80 f80_round_int(nm_fenv *env, nm_f80 a);
/* FSCALE: a * 2^trunc(b). */
nm_f80 f80_scale(nm_fenv *env, nm_f80 a, nm_f80 b);
/* FXTRACT: *exp_out the unbiased exponent as a value, the result the
 * significand with exponent 0 (so both carry a's sign rules). */
nm_f80 f80_extract(nm_fenv *env, nm_f80 a, nm_f80 *exp_out);
/* FPREM (ieee false: truncating quotient) / FPREM1 (nearest): the partial
 * remainder of a / b; *quot the quotient's low three bits, *incomplete
 * the C2 of an exponent difference too large for one step. */
nm_f80 f80_prem(nm_fenv *env, nm_f80 a, nm_f80 b, bool ieee, unsigned *quot, bool *incomplete);

/* Compare a with b: 0 a > b, 1 a < b, 2 equal, 3 unordered.  quiet: FUCOM
 * (only SNaNs and unsupported formats are invalid). */
unsigned f80_compare(nm_fenv *env, nm_f80 a, nm_f80 b, bool quiet);

/* Conversions from memory formats (exact; SNaNs quieted with IE). */
nm_f80 f80_from_int(int64_t v);
nm_f80 f80_from_f32(nm_fenv *env, uint32_t v);
nm_f80 f80_from_f64(nm_fenv *env, uint64_t v);
/* Packed BCD: 18 digits in bytes 0..8, sign in bit 7 of byte 9. */
nm_f80 f80_from_bcd(const uint8_t bcd[10]);

/* Conversions to memory formats, rounded per env (env->prec is ignored:
 * the format's own precision and exponent range apply).  *store false: an
 * unmasked exception leaves memory as it was. */
uint32_t f80_to_f32(nm_fenv *env, nm_f80 a, bool *store);
uint64_t f80_to_f64(nm_fenv *env, nm_f80 a, bool *store);
/* bits 16, 32 or 64; out of range or NaN: IE and the integer indefinite. */
int64_t f80_to_int(nm_fenv *env, nm_f80 a, unsigned bits, bool *store);
void f80_to_bcd(nm_fenv *env, nm_f80 a, uint8_t bcd[10], bool *store);

/* The transcendentals (64-bit precision, env->rc).  *out_of_range: the
 * operand's magnitude is 2^63 or more (C2 set, nothing changed). */
nm_f80 f80_sin(nm_fenv *env, nm_f80 a, bool *out_of_range);
nm_f80 f80_cos(nm_fenv *env, nm_f80 a, bool *out_of_range);
nm_f80 f80_tan(nm_fenv *env, nm_f80 a, bool *out_of_range);
/* FPATAN: atan(y / x) in the quadrant of (x, y). */
nm_f80 f80_atan2(nm_fenv *env, nm_f80 y, nm_f80 x);
nm_f80 f80_2xm1(nm_fenv *env, nm_f80 a);
/* FYL2X: y * log2(x); FYL2XP1: y * log2(x + 1). */
nm_f80 f80_yl2x(nm_fenv *env, nm_f80 y, nm_f80 x, bool plus1);

#endif
