/* The x87's clock tables and timeline rules (x87cost.h).
 *
 * Sources, named at the rows:
 *   [387]  Intel387 DX Math CoProcessor data sheet (order 240448), the
 *          instruction set table's clock counts (387 clocks = the 386DX's:
 *          the 387 runs on the same CLK2);
 *   [HRM]  Intel386 DX Microprocessor Hardware Reference Manual, chapter 5
 *          "Coprocessor hardware interface": the 386 sends the opcode and
 *          each operand to the 387 by I/O cycles at 800000F8H-800000FFH,
 *          "one coprocessor cycle plus one memory cycle for an aligned
 *          operand" per transfer; the 386 tests BUSY# before an ESC
 *          instruction and at WAIT;
 *   [486]  Intel486 Microprocessor Family Programmer's Reference Manual
 *          (order 240486), floating-point clock count table: clock counts
 *          and the "concurrent execution" clocks (those that overlap the
 *          integer instructions after it);
 *   [P5]   Pentium Processor Family Developer's Manual vol. 3 (order
 *          241430), floating-point instruction timings: latency and
 *          throughput (FADD/FMUL 3/1), FXCH pairing, FDIV 19/33/39 by
 *          precision; with the integer and FP overlaps (i-ov, fp-ov) as
 *          A. Fog, "How to optimize for the Pentium family of
 *          microprocessors", section 28.2, tabulates them from it.
 * Cross-checked against the x86 Norton Guide's per-instruction timing
 * tables (8087 to Pentium columns) and 86Box's x87_timings.c (387, 486,
 * 486 concurrency).  A range is charged at its low end (x87cost.h). */
#include "cpu/timing/x87cost.h"

#include "cpu/cpu_internal.h"
#include "emu/core/report.h"

/* One row per cost class, grouped as the manuals group them. */
/* clang-format off */
enum {
    XC_BAD,
    XC_FLD_ST, XC_FLD_M32, XC_FLD_M64, XC_FLD_M80, XC_FILD_M16, XC_FILD_M32, XC_FILD_M64, XC_FBLD,
    XC_FST_ST, XC_FST_M32, XC_FST_M64, XC_FSTP_M80, XC_FIST_M16, XC_FIST_M32, XC_FISTP_M64, XC_FBSTP,
    XC_FADD_ST, XC_FADD_M32, XC_FADD_M64, XC_FIADD_M16, XC_FIADD_M32,
    XC_FMUL_ST, XC_FMUL_M32, XC_FMUL_M64, XC_FIMUL_M16, XC_FIMUL_M32,
    XC_FDIV_ST, XC_FDIV_M32, XC_FDIV_M64, XC_FIDIV_M16, XC_FIDIV_M32,
    XC_FCOM_ST, XC_FCOM_M32, XC_FCOM_M64, XC_FICOM_M16, XC_FICOM_M32, XC_FCOMPP, XC_FUCOM,
    XC_FTST, XC_FXAM,
    XC_FXCH, XC_FFREE, XC_FINCSTP, XC_FLDZ1, XC_FLDCONST, XC_FCHS, XC_FABS,
    XC_FSQRT, XC_FRNDINT, XC_FSCALE, XC_FXTRACT, XC_FPREM, XC_FPREM1,
    XC_F2XM1, XC_FYL2X, XC_FYL2XP1, XC_FPTAN, XC_FPATAN, XC_FSIN, XC_FSINCOS,
    XC_FNINIT, XC_FNCLEX, XC_FLDCW, XC_FNSTCW, XC_FNSTSW, XC_FNSTENV, XC_FLDENV, XC_FNSAVE,
    XC_FRSTOR, XC_FNOP, XC_FLEGACY, XC_WAIT,
    XC_COUNT
};
/* clang-format on */

/* Row flags. */
#define XF_FX    0x01u /* Pentium: pairs with a following FXCH [P5] */
#define XF_RET   0x02u /* returns data to the CPU: the 386 waits for the 387's result [HRM] */
#define XF_STORE 0x04u /* Pentium: the stored value is needed a clock in advance [P5] */
#define XF_DIV   0x08u /* Pentium: clocks by the precision control [P5] */
#define XF_FMUL  0x10u /* Pentium: an FMUL after it overlaps one clock less [P5] */
#define XF_ST1   0x20u /* reads ST(1) too (FSCALE, FPREM, FPATAN, FYL2X, FCOMPP ...) */

typedef struct {
    uint16_t c387;   /* [387] clocks */
    uint16_t c486;   /* [486] clocks */
    uint8_t conc486; /* [486] concurrent execution clocks */
    uint8_t p5;      /* [P5] clocks (latency) */
    uint8_t p5_iov;  /* [P5] clocks that overlap the integer instructions after it */
    uint8_t p5_fov;  /* [P5] clocks that overlap the FP instructions after it */
    uint8_t flags;
} x87_row;

/*                         387  486 conc  P5 iov fov flags */
static const x87_row rows[XC_COUNT] = {
    /* reserved encodings: #UD (the decode) */
    [XC_BAD] = {2, 1, 0, 1, 0, 0, 0},
    /* FLD ST(i) 387 14, m32 20, m64 25, m80 44; 486 4, 3, 3, 6; P5 1 (m80 3), FX */
    [XC_FLD_ST] = {14, 4, 0, 1, 0, 0, XF_FX},
    [XC_FLD_M32] = {20, 3, 0, 1, 0, 0, XF_FX},
    [XC_FLD_M64] = {25, 3, 0, 1, 0, 0, XF_FX},
    [XC_FLD_M80] = {44, 6, 0, 3, 0, 0, 0},
    /* FILD m16 387 61-65, m32 45-52, m64 56-67; 486 13-16 (4), 9-12 (4), 10-18 (8); P5 3, 2/2 */
    [XC_FILD_M16] = {61, 13, 4, 3, 2, 2, 0},
    [XC_FILD_M32] = {45, 9, 4, 3, 2, 2, 0},
    [XC_FILD_M64] = {56, 10, 8, 3, 2, 2, 0},
    /* FBLD 387 266-275; 486 70-103 (8); P5 48-58 */
    [XC_FBLD] = {266, 70, 8, 48, 0, 0, 0},
    /* FST ST(i) 387 11, m32 44, m64 45, FSTP m80 53; 486 3, 7, 8, 6; P5 1, 2, 2, 3 */
    [XC_FST_ST] = {11, 3, 0, 1, 0, 0, 0},
    [XC_FST_M32] = {44, 7, 0, 2, 0, 0, XF_RET | XF_STORE},
    [XC_FST_M64] = {45, 8, 0, 2, 0, 0, XF_RET | XF_STORE},
    [XC_FSTP_M80] = {53, 6, 0, 3, 0, 0, XF_RET | XF_STORE},
    /* FIST m16 387 82-95, m32 79-93, FISTP m64 80-97; 486 29-34, 28-34, 29-34; P5 6 */
    [XC_FIST_M16] = {82, 29, 0, 6, 0, 0, XF_RET},
    [XC_FIST_M32] = {79, 28, 0, 6, 0, 0, XF_RET},
    [XC_FISTP_M64] = {80, 29, 0, 6, 0, 0, XF_RET},
    /* FBSTP 387 512-534; 486 172-176; P5 148-154 */
    [XC_FBSTP] = {512, 172, 0, 148, 0, 0, XF_RET},
    /* FADD/FSUB/FSUBR ST 387 23-34, m32 24-32, m64 29-37; FIADD m16 71-85, m32 57-72;
     * 486 8-20 (7), FIADD 20-35 (7), 19-32 (7); P5 3 2/2 FX, FIADD 6 2/2 */
    [XC_FADD_ST] = {23, 8, 7, 3, 2, 2, XF_FX},
    [XC_FADD_M32] = {24, 8, 7, 3, 2, 2, XF_FX},
    [XC_FADD_M64] = {29, 8, 7, 3, 2, 2, XF_FX},
    [XC_FIADD_M16] = {71, 20, 7, 6, 2, 2, 0},
    [XC_FIADD_M32] = {57, 19, 7, 6, 2, 2, 0},
    /* FMUL ST 387 29-57, m32 27-35, m64 32-57; FIMUL m16 76-87, m32 61-82;
     * 486 16 (13), 11 (8), 14 (11), FIMUL 23-27 (8), 22-24 (8); P5 3 2/2 FX, FIMUL 6 */
    [XC_FMUL_ST] = {29, 16, 13, 3, 2, 2, XF_FX | XF_FMUL},
    [XC_FMUL_M32] = {27, 11, 8, 3, 2, 2, XF_FX | XF_FMUL},
    [XC_FMUL_M64] = {32, 14, 11, 3, 2, 2, XF_FX | XF_FMUL},
    [XC_FIMUL_M16] = {76, 23, 8, 6, 2, 2, 0},
    [XC_FIMUL_M32] = {61, 22, 8, 6, 2, 2, 0},
    /* FDIV/FDIVR ST 387 88-91, m32 89, m64 94; FIDIV m16 136-140, m32 120-127;
     * 486 73 (70), FIDIV 85-89 (70), 84-86 (70); P5 39 (19/33/39 by PC) i-ov 38
     * fp-ov 2 FX, FIDIV 42 (22/36/42) */
    [XC_FDIV_ST] = {88, 73, 70, 39, 38, 2, XF_FX | XF_DIV},
    [XC_FDIV_M32] = {89, 73, 70, 39, 38, 2, XF_FX | XF_DIV},
    [XC_FDIV_M64] = {94, 73, 70, 39, 38, 2, XF_FX | XF_DIV},
    [XC_FIDIV_M16] = {136, 85, 70, 42, 38, 2, XF_DIV},
    [XC_FIDIV_M32] = {120, 84, 70, 42, 38, 2, XF_DIV},
    /* FCOM(P) ST 387 24 (26 popping), m32 26, m64 31; FICOM m16 71-75, m32 56-63;
     * FCOMPP 26; FUCOM(P)(P) 24-26; 486 4 (1), FICOM 16-20 (1), 15-17 (1); P5 1 FX
     * (FICOM 4) */
    [XC_FCOM_ST] = {24, 4, 1, 1, 0, 0, XF_FX},
    [XC_FCOM_M32] = {26, 4, 1, 1, 0, 0, XF_FX},
    [XC_FCOM_M64] = {31, 4, 1, 1, 0, 0, XF_FX},
    [XC_FICOM_M16] = {71, 16, 1, 4, 0, 0, 0},
    [XC_FICOM_M32] = {56, 15, 1, 4, 0, 0, 0},
    [XC_FCOMPP] = {26, 5, 1, 1, 0, 0, XF_FX | XF_ST1},
    [XC_FUCOM] = {24, 4, 1, 1, 0, 0, XF_FX},
    /* FTST 387 28; 486 4 (1); P5 1.  FXAM 387 30-38; 486 8; P5 17-21 i-ov 4 */
    [XC_FTST] = {28, 4, 1, 1, 0, 0, 0},
    [XC_FXAM] = {30, 8, 0, 17, 4, 0, 0},
    /* FXCH 387 18; 486 4; P5 1 (0 paired).  FFREE 387 18; 486 3; P5 2.
     * FINCSTP/FDECSTP 387 21-22; 486 3; P5 2 */
    [XC_FXCH] = {18, 4, 0, 1, 0, 0, 0},
    [XC_FFREE] = {18, 3, 0, 2, 0, 0, 0},
    [XC_FINCSTP] = {21, 3, 0, 2, 0, 0, 0},
    /* FLDZ/FLD1 387 20-24; 486 4; P5 2.  FLDPI etc. 387 40; 486 8 (2); P5 5 2/2 */
    [XC_FLDZ1] = {20, 4, 0, 2, 0, 0, 0},
    [XC_FLDCONST] = {40, 8, 2, 5, 2, 2, 0},
    /* FCHS 387 24-25; 486 6; P5 1 FX.  FABS 387 22; 486 3; P5 1 FX */
    [XC_FCHS] = {24, 6, 0, 1, 0, 0, XF_FX},
    [XC_FABS] = {22, 3, 0, 1, 0, 0, XF_FX},
    /* FSQRT 387 122-129; 486 83-87 (70); P5 70 i-ov 69 fp-ov 2 */
    [XC_FSQRT] = {122, 83, 70, 70, 69, 2, 0},
    /* FRNDINT 387 66-80; 486 21-30; P5 9-20 */
    [XC_FRNDINT] = {66, 21, 0, 9, 0, 0, 0},
    /* FSCALE 387 67-86; 486 30-32 (2); P5 20-32 i-ov 5 */
    [XC_FSCALE] = {67, 30, 2, 20, 5, 0, XF_ST1},
    /* FXTRACT 387 70-76; 486 16-20 (4); P5 12-66 */
    [XC_FXTRACT] = {70, 16, 4, 12, 0, 0, 0},
    /* FPREM 387 74-155; 486 70-138 (2); P5 16-64 2/2.  FPREM1 387 95-185; 486 72-167
     * (6); P5 20-70 2/2 */
    [XC_FPREM] = {74, 70, 2, 16, 2, 2, XF_ST1},
    [XC_FPREM1] = {95, 72, 6, 20, 2, 2, XF_ST1},
    /* F2XM1 387 211-476; 486 140-279 (2); P5 53-59 2/2 (13-57 in [P5]'s table) */
    [XC_F2XM1] = {211, 140, 2, 53, 2, 2, 0},
    /* FYL2X 387 120-538; 486 196-329 (13); P5 103 2/2.  FYL2XP1 387 257-547; 486
     * 171-326 (13); P5 105 2/2 */
    [XC_FYL2X] = {120, 196, 13, 103, 2, 2, XF_ST1},
    [XC_FYL2XP1] = {257, 171, 13, 105, 2, 2, XF_ST1},
    /* FPTAN 387 191-497; 486 200-273 (70); P5 120-147 i-ov 36.  FPATAN 387 314-487;
     * 486 218-303 (5); P5 112-134 2/2 */
    [XC_FPTAN] = {191, 200, 70, 120, 36, 0, 0},
    [XC_FPATAN] = {314, 218, 5, 112, 2, 2, XF_ST1},
    /* FSIN/FCOS 387 122-771; 486 257-354 (2); P5 65-100 2/2.  FSINCOS 387 194-809;
     * 486 292-365 (2); P5 89-112 2/2 */
    [XC_FSIN] = {122, 257, 2, 65, 2, 2, 0},
    [XC_FSINCOS] = {194, 292, 2, 89, 2, 2, 0},
    /* FNINIT 387 33; 486 17; P5 12-22.  FNCLEX 387 11; 486 7; P5 6-9 */
    [XC_FNINIT] = {33, 17, 0, 12, 0, 0, 0},
    [XC_FNCLEX] = {11, 7, 0, 6, 0, 0, 0},
    /* FLDCW 387 19; 486 4; P5 8.  FNSTCW 387 15; 486 3; P5 2.  FNSTSW m16/AX 387
     * 15/13; 486 3; P5 6 */
    [XC_FLDCW] = {19, 4, 0, 8, 0, 0, 0},
    [XC_FNSTCW] = {15, 3, 0, 2, 0, 0, XF_RET},
    [XC_FNSTSW] = {13, 3, 0, 6, 0, 0, XF_RET},
    /* FNSTENV 387 103-104; 486 56-67; P5 48-50.  FLDENV 387 71; 486 34-44; P5 32-37 */
    [XC_FNSTENV] = {103, 56, 0, 48, 0, 0, XF_RET},
    [XC_FLDENV] = {71, 34, 0, 32, 0, 0, 0},
    /* FNSAVE 387 375-376; 486 143-154; P5 124-300.  FRSTOR 387 308; 486 120-131; P5
     * 70-95 */
    [XC_FNSAVE] = {375, 143, 0, 124, 0, 0, XF_RET},
    [XC_FRSTOR] = {308, 120, 0, 70, 0, 0, 0},
    /* FNOP 387 12; 486 3; P5 1.  FNENI/FNDISI/FNSETPM: FNOP's (387 12, FSETPM's) */
    [XC_FNOP] = {12, 3, 0, 1, 0, 0, 0},
    [XC_FLEGACY] = {12, 3, 0, 1, 0, 0, 0},
    /* WAIT: the 386's own 6 (Intel386 DX data sheet), 486 1-3, P5 1 */
    [XC_WAIT] = {6, 1, 0, 1, 0, 0, 0},
};

/* Memory operand classes by (op, opcode byte, ModRM.reg): the arithmetic's
 * formats come from the opcode (D8 m32 real, DA m32 int, DC m64 real, DE
 * m16 int). */
static unsigned arith_class(const nm_insn *i, unsigned st, unsigned m32, unsigned m64, unsigned i16,
                            unsigned i32)
{
    if (i->mod == 3) return st;
    switch (i->opcode) {
    case 0xd8: return m32;
    case 0xdc: return m64;
    case 0xda: return i32;
    default: return i16;
    }
}

unsigned nm_x87_class(const nm_insn *i)
{
    bool reg = i->mod == 3;
    switch (i->op) {
    case NM_OP_FLD:
        if (reg) return XC_FLD_ST;
        return i->opcode == 0xd9 ? XC_FLD_M32 : i->opcode == 0xdd ? XC_FLD_M64 : XC_FLD_M80;
    case NM_OP_FILD:
        return i->opcode == 0xdb ? XC_FILD_M32 : i->reg == 0 ? XC_FILD_M16 : XC_FILD_M64;
    case NM_OP_FBLD: return XC_FBLD;
    case NM_OP_FST:
    case NM_OP_FSTP:
        if (reg) return XC_FST_ST;
        return i->opcode == 0xd9 ? XC_FST_M32 : i->opcode == 0xdd ? XC_FST_M64 : XC_FSTP_M80;
    case NM_OP_FIST:
    case NM_OP_FISTP:
        return i->opcode == 0xdb ? XC_FIST_M32 : i->reg == 7 ? XC_FISTP_M64 : XC_FIST_M16;
    case NM_OP_FBSTP: return XC_FBSTP;
    case NM_OP_FADD:
    case NM_OP_FSUB:
    case NM_OP_FSUBR:
        return arith_class(i, XC_FADD_ST, XC_FADD_M32, XC_FADD_M64, XC_FIADD_M16, XC_FIADD_M32);
    case NM_OP_FMUL:
        return arith_class(i, XC_FMUL_ST, XC_FMUL_M32, XC_FMUL_M64, XC_FIMUL_M16, XC_FIMUL_M32);
    case NM_OP_FDIV:
    case NM_OP_FDIVR:
        return arith_class(i, XC_FDIV_ST, XC_FDIV_M32, XC_FDIV_M64, XC_FIDIV_M16, XC_FIDIV_M32);
    case NM_OP_FCOM:
    case NM_OP_FCOMP:
        return arith_class(i, XC_FCOM_ST, XC_FCOM_M32, XC_FCOM_M64, XC_FICOM_M16, XC_FICOM_M32);
    case NM_OP_FCOMPP:
    case NM_OP_FUCOMPP: return XC_FCOMPP;
    case NM_OP_FUCOM:
    case NM_OP_FUCOMP: return XC_FUCOM;
    case NM_OP_FTST: return XC_FTST;
    case NM_OP_FXAM: return XC_FXAM;
    case NM_OP_FXCH: return XC_FXCH;
    case NM_OP_FFREE: return XC_FFREE;
    case NM_OP_FINCSTP:
    case NM_OP_FDECSTP: return XC_FINCSTP;
    case NM_OP_FLDCONST: return i->rm == 0 || i->rm == 6 ? XC_FLDZ1 : XC_FLDCONST;
    case NM_OP_FCHS: return XC_FCHS;
    case NM_OP_FABS: return XC_FABS;
    case NM_OP_FSQRT: return XC_FSQRT;
    case NM_OP_FRNDINT: return XC_FRNDINT;
    case NM_OP_FSCALE: return XC_FSCALE;
    case NM_OP_FXTRACT: return XC_FXTRACT;
    case NM_OP_FPREM: return XC_FPREM;
    case NM_OP_FPREM1: return XC_FPREM1;
    case NM_OP_F2XM1: return XC_F2XM1;
    case NM_OP_FYL2X: return XC_FYL2X;
    case NM_OP_FYL2XP1: return XC_FYL2XP1;
    case NM_OP_FPTAN: return XC_FPTAN;
    case NM_OP_FPATAN: return XC_FPATAN;
    case NM_OP_FSIN:
    case NM_OP_FCOS: return XC_FSIN;
    case NM_OP_FSINCOS: return XC_FSINCOS;
    case NM_OP_FNINIT: return XC_FNINIT;
    case NM_OP_FNCLEX: return XC_FNCLEX;
    case NM_OP_FLDCW: return XC_FLDCW;
    case NM_OP_FNSTCW: return XC_FNSTCW;
    case NM_OP_FNSTSW: return XC_FNSTSW;
    case NM_OP_FNSTENV: return XC_FNSTENV;
    case NM_OP_FLDENV: return XC_FLDENV;
    case NM_OP_FNSAVE: return XC_FNSAVE;
    case NM_OP_FRSTOR: return XC_FRSTOR;
    case NM_OP_FNOP: return XC_FNOP;
    case NM_OP_FNOP_LEGACY: return XC_FLEGACY;
    case NM_OP_WAIT: return XC_WAIT;
    default: return XC_BAD;
    }
}

/* The dwords the 386 moves between memory and the 387 [HRM]: the
 * operand's size (the environment and the save area: 14/28 and 94/108
 * bytes by the operand size); FNSTSW AX reads the status word, a
 * register-only instruction moves nothing but its opcode. */
static unsigned transfers(const nm_insn *i, unsigned xc)
{
    switch (xc) {
    case XC_FNSTENV:
    case XC_FLDENV: return i->opsize == 4 ? 7 : 4;
    case XC_FNSAVE:
    case XC_FRSTOR: return i->opsize == 4 ? 27 : 24;
    case XC_FNSTSW: return 1;
    default: break;
    }
    if (i->mod == 3) return 0;
    return (i->opsize + 3u) / 4u;
}

/* A 386 without a 387, the 486SX: the ESC opcode is decoded with its
 * ModRM and does nothing (or raises #NM, whose delivery the model costs
 * apart): the 386's 2 and the 486's 1 of the no-coprocessor ESC row. */
static unsigned no_fpu(unsigned xc, unsigned esc, unsigned wait)
{
    return xc == XC_WAIT ? wait : esc;
}

unsigned nm_x87_cost_387(nm_x87_timing *t, const nm_cpu *c, const nm_insn *i, uint64_t now,
                         unsigned waits)
{
    unsigned xc = nm_x87_class(i);
    const x87_row *r = &rows[xc];
    if (c->fpu_kind == NM_FPU_NONE) return no_fpu(xc, 2, r->c387);
    /* The 386 waits for BUSY# to go away before it hands the 387 this
     * instruction, and at WAIT [HRM]. */
    uint32_t stall = t->busy_until > now ? (uint32_t)(t->busy_until - now) : 0;
    t->stall_clocks += stall;
    t->insns++;
    if (xc == XC_WAIT) return r->c387 + stall;
    /* The opcode write, and per operand dword a memory cycle and a
     * coprocessor cycle, each a 2-clock bus cycle (the memory cycles' wait
     * states are the model's, from the accesses themselves). */
    unsigned n = transfers(i, xc);
    unsigned cycles = 1 + 2 * n;
    t->protocol_cycles += cycles;
    unsigned protocol = 2 * cycles;
    if (r->flags & XF_RET) {
        /* the result comes back when the 387 is done */
        uint32_t cost = stall + 2 + r->c387 + 4 * n;
        t->busy_until = now + cost + waits;
        return cost;
    }
    /* the 387 starts when the operand is in, the memory cycles' waits too */
    t->busy_until = now + stall + protocol + waits + r->c387;
    return stall + protocol;
}

unsigned nm_x87_cost_486(nm_x87_timing *t, const nm_cpu *c, const nm_insn *i, uint64_t now)
{
    unsigned xc = nm_x87_class(i);
    const x87_row *r = &rows[xc];
    if (c->fpu_kind == NM_FPU_NONE) return no_fpu(xc, 1, r->c486);
    uint32_t stall = t->busy_until > now ? (uint32_t)(t->busy_until - now) : 0;
    t->stall_clocks += stall;
    t->insns++;
    if (xc == XC_WAIT) return r->c486 + stall;
    /* The FPU starts when the last one is done; the integer unit goes on
     * after the clocks that are not concurrent [486]. */
    t->busy_until = now + stall + r->c486;
    return stall + r->c486 - r->conc486;
}

/* The Pentium's stack: the physical register ST(k) names before the
 * instruction (the CPU's state is after it: TOP less its pushes, plus its
 * pops) and after it. */
static unsigned pushes_pops(const nm_cpu *c, const nm_insn *i, int *delta)
{
    int d = 0;
    switch (i->op) {
    case NM_OP_FLD:
    case NM_OP_FILD:
    case NM_OP_FBLD:
    case NM_OP_FLDCONST:
    case NM_OP_FXTRACT:
    case NM_OP_FSINCOS:
    case NM_OP_FDECSTP: d = 1; break;
    case NM_OP_FPTAN: d = (c->fpu.sw & NM_FSW_C2) ? 0 : 1; break;
    case NM_OP_FSTP:
    case NM_OP_FISTP:
    case NM_OP_FBSTP:
    case NM_OP_FCOMP:
    case NM_OP_FUCOMP:
    case NM_OP_FPATAN:
    case NM_OP_FYL2X:
    case NM_OP_FYL2XP1:
    case NM_OP_FINCSTP: d = -1; break;
    case NM_OP_FCOMPP:
    case NM_OP_FUCOMPP: d = -2; break;
    case NM_OP_FFREE: d = i->opcode == 0xdf ? -1 : 0; break; /* FFREEP */
    default:
        if (i->opcode == 0xde && i->mod == 3 && i->op >= NM_OP_FADD && i->op <= NM_OP_FDIVR) d = -1;
        break;
    }
    *delta = d;
    return ((c->fpu.sw >> 11) & 7u);
}

unsigned nm_x87_cost_p5(nm_x87_timing *t, const nm_cpu *c, const nm_insn *i, uint64_t now)
{
    unsigned xc = nm_x87_class(i);
    const x87_row *r = &rows[xc];
    if (c->fpu_kind == NM_FPU_NONE) return no_fpu(xc, 1, r->p5);
    t->insns++;
    int delta;
    unsigned top_after = pushes_pops(c, i, &delta);
    unsigned top_before = (unsigned)(top_after + (unsigned)delta) & 7u;
    if (xc == XC_FXCH) {
        /* FXCH right after an FX-pairable instruction goes in the V pipe
         * with it, for nothing [P5]; its two registers' values (and their
         * readiness) change places either way. */
        unsigned a = top_before, b = (top_before + i->rm) & 7u;
        uint64_t x = t->p5_ready[a];
        t->p5_ready[a] = t->p5_ready[b];
        t->p5_ready[b] = x;
        bool paired = t->p5_last_fx && c->instructions == t->insns_at_fx + 1;
        t->p5_last_fx = false;
        if (paired) {
            t->fxch_paired++;
            return 0;
        }
        return r->p5;
    }
    if (xc == XC_WAIT) {
        uint64_t done = t->p5_next;
        for (unsigned k = 0; k < 8; k++)
            if (t->p5_ready[k] > done) done = t->p5_ready[k];
        uint32_t stall = done > now ? (uint32_t)(done - now) : 0;
        t->stall_clocks += stall;
        t->p5_last_fx = false;
        return r->p5 + stall;
    }
    unsigned clocks = r->p5;
    if (r->flags & XF_DIV) { /* 19/33/39 (FIDIV 22/36/42) by PC = 24/53/64 bits [P5] */
        unsigned pc = (c->fpu.cw >> 8) & 3u;
        unsigned base = xc == XC_FDIV_ST || xc == XC_FDIV_M32 || xc == XC_FDIV_M64 ? 0 : 3;
        clocks = (pc == 0 ? 19u : pc == 2 ? 33u : 39u) + base;
    }
    /* When it can issue: the pipe, and the values it reads (ST(0), the
     * register form's ST(i), ST(1) for the two-operand ones; a store
     * wants its value a clock early). */
    uint64_t issue = now > t->p5_next ? now : t->p5_next;
    if ((r->flags & XF_FMUL) && t->p5_last_fmul && t->p5_fmul_next > issue) issue = t->p5_fmul_next;
    unsigned srcs[3], ns = 0;
    if (xc != XC_FLD_ST && xc != XC_FLD_M32 && xc != XC_FLD_M64 && xc != XC_FLD_M80 &&
        xc != XC_FILD_M16 && xc != XC_FILD_M32 && xc != XC_FILD_M64 && xc != XC_FBLD &&
        xc != XC_FLDZ1 && xc != XC_FLDCONST && xc != XC_FNINIT && xc != XC_FNCLEX &&
        xc != XC_FLDCW && xc != XC_FLDENV && xc != XC_FRSTOR && xc != XC_FFREE && xc != XC_FINCSTP)
        srcs[ns++] = top_before;
    if (i->mod == 3 && i->rm && xc != XC_FFREE) srcs[ns++] = (top_before + i->rm) & 7u;
    if (r->flags & XF_ST1) srcs[ns++] = (top_before + 1) & 7u;
    if (xc == XC_FNSTSW || xc == XC_FNSTENV || xc == XC_FNSAVE) {
        /* the status, the environment: after everything in flight */
        for (unsigned k = 0; k < 8; k++)
            if (t->p5_ready[k] > issue) issue = t->p5_ready[k];
    }
    for (unsigned k = 0; k < ns; k++) {
        uint64_t want = t->p5_ready[srcs[k]] + ((r->flags & XF_STORE) ? 1 : 0);
        if (want > issue) issue = want;
    }
    uint32_t stall = (uint32_t)(issue - now);
    t->stall_clocks += stall;
    /* The result: ST(0) after, or ST(i) for the DC/DE register forms. */
    unsigned dst = top_after;
    if ((i->opcode == 0xdc || i->opcode == 0xde) && i->mod == 3) dst = (top_before + i->rm) & 7u;
    if (xc == XC_FNSAVE || xc == XC_FNINIT || xc == XC_FRSTOR)
        for (unsigned k = 0; k < 8; k++)
            t->p5_ready[k] = issue + clocks;
    else if (xc != XC_FST_M32 && xc != XC_FST_M64 && xc != XC_FSTP_M80 && !(r->flags & XF_RET))
        t->p5_ready[dst] = issue + clocks;
    if (xc == XC_FSINCOS || xc == XC_FXTRACT || xc == XC_FPTAN)
        t->p5_ready[(top_after + 1) & 7u] = issue + clocks;
    t->p5_next = issue + clocks - r->p5_fov;
    /* "1 if the overlapping instruction is also an FMUL" [P5 via Fog]: an
     * FMUL after an FMUL issues a clock later than the overlap says */
    t->p5_last_fmul = (r->flags & XF_FMUL) != 0;
    if (t->p5_last_fmul) t->p5_fmul_next = issue + clocks - 1;
    t->p5_last_fx = (r->flags & XF_FX) != 0;
    t->insns_at_fx = c->instructions;
    /* (the 19- and 33-clock FDIVs overlap all but their first clock too) */
    unsigned iov = r->p5_iov < clocks ? r->p5_iov : clocks - 1;
    return stall + clocks - iov;
}

void nm_x87_report(const nm_x87_timing *t, nm_report *r)
{
    nm_report_u64(r, "x87_instructions", t->insns);
    nm_report_u64(r, "x87_stall_clocks", t->stall_clocks);
    nm_report_u64(r, "x87_protocol_cycles", t->protocol_cycles);
    nm_report_u64(r, "x87_fxch_paired", t->fxch_paired);
}
