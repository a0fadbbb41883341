/* The x87 differential test's templates and record format, shared by the
 * host side (x87gen.c, a 64-bit program running x87 code natively) and the
 * emulator side (test_x87diff.c).  tests/diff/README-x87.md says what is
 * compared and why. */
#ifndef NICEMU_TESTS_X87_TABLE_H
#define NICEMU_TESTS_X87_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#define X87_MAGIC   0x58383744u /* "D78X" */
#define X87_VERSION 1
#define X87_MEM     112 /* the memory operand's window: [EBX] .. +111 (FNSAVE's 108 bytes) */

/* What the generator gives an operand. */
enum {
    X87_G_ANY,   /* every class, weighted toward normal values */
    X87_G_TRIG,  /* FSIN and friends: moderate, some beyond 2^63 */
    X87_G_UNIT,  /* F2XM1: [-1, 1] */
    X87_G_LOGX,  /* FYL2X's x: mostly positive */
    X87_G_LOG1P, /* FYL2XP1's x: |x| < 1 - sqrt(2)/2 */
    X87_G_INT,   /* integer-valued (FRNDINT, FIST, FBSTP near the limits) */
    X87_G_PREM,  /* FPREM: exponent differences 0..100 */
};

/* Memory operand formats. */
enum {
    X87_M_NONE,
    X87_M_R32,
    X87_M_R64,
    X87_M_R80,
    X87_M_I16,
    X87_M_I32,
    X87_M_I64,
    X87_M_BCD,
    X87_M_CW,
    X87_M_ENV28,
    X87_M_ENV14,
    X87_M_SAVE
};

/* Template flags. */
#define X87_F_RM      0x01u /* register form: ModRM.rm random per case */
#define X87_F_STORE   0x02u /* writes the memory operand */
#define X87_F_TRANS   0x04u /* a transcendental: compared within X87_ULP_BOUND */
#define X87_F_PUSH    0x08u /* pushes: ST(7) sometimes full */
#define X87_F_PREM    0x10u /* FPREM/FPREM1: C0 C1 C3 of an incomplete reduction not compared */
#define X87_F_PENDING 0x20u /* a no-wait instruction: the input may hold a pending exception */

/* The transcendentals' bound against the host, in units of the last place
 * of the 64-bit significand (docs/cpu.md, "The x87"). */
#define X87_ULP_BOUND 1

typedef struct {
    const char *group, *name;
    uint8_t code[4];
    uint8_t len;
    uint8_t mem;    /* X87_M_* */
    uint8_t nst;    /* stack operands the instruction reads: ST(0), ST(1) */
    uint8_t gen;    /* X87_G_* of ST(0) (and the memory operand) */
    uint8_t flags;  /* X87_F_* */
    uint32_t count; /* cases at 100 percent */
} x87_tmpl;

/* One case: the state loaded with FRSTOR (108 bytes, 32-bit protected-mode
 * layout), the memory window, EAX; and what the host had after the
 * instruction: FNSAVE's image, the window and EAX. */
typedef struct {
    uint16_t tmpl;
    uint8_t code[4];
    uint8_t len;
    uint8_t pad[1];
    uint32_t eax_in, eax_out;
    uint8_t in[108];
    uint8_t mem_in[X87_MEM];
    uint8_t out[108];
    uint8_t mem_out[X87_MEM];
} x87_record;

typedef struct {
    uint32_t magic, version, seed, percent;
    uint32_t ntmpl, nrec;
    uint64_t table_hash;
} x87_header;

/* The templates (built by code: the same order on both sides). */
const x87_tmpl *x87_table(unsigned *n);
uint64_t x87_table_hash(void);

/* The inputs of case k of template t (deterministic from seed, t, k). */
void x87_make_case(const x87_tmpl *t, unsigned tindex, uint32_t seed, unsigned k, x87_record *r);

#endif
