/* The x87 FPU's state: the Intel387 DX, the Intel486 DX's on-chip unit and
 * the Pentium's (SDM vol. 1 chapter 8; Intel387 DX Programmer's Reference
 * Manual chapter 2; Intel486 Programmer's Reference Manual chapter 15).
 * The instructions are cpu/fpu.c's, the 80-bit arithmetic
 * cpu/fpu_float.c's. */
#ifndef NICEMU_CPU_FPU_H
#define NICEMU_CPU_FPU_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/fpu_float.h"
#include "cpu/models.h"

/* Status word bits (SDM vol. 1, figure 8-4). */
#define NM_FSW_ES  0x0080u /* error summary */
#define NM_FSW_C0  0x0100u
#define NM_FSW_C1  0x0200u
#define NM_FSW_C2  0x0400u
#define NM_FSW_TOP 0x3800u
#define NM_FSW_C3  0x4000u
#define NM_FSW_B   0x8000u /* busy: a copy of ES on the 387 and later */
#define NM_FSW_CC  (NM_FSW_C0 | NM_FSW_C1 | NM_FSW_C2 | NM_FSW_C3)

/* Tags (SDM vol. 1, figure 8-7). */
enum { NM_FTAG_VALID = 0, NM_FTAG_ZERO = 1, NM_FTAG_SPECIAL = 2, NM_FTAG_EMPTY = 3 };

typedef struct nm_fpu {
    nm_f80 r[8];    /* the physical registers R0..R7; ST(i) is R((TOP + i) & 7) */
    uint8_t tag[8]; /* their tags */
    uint16_t cw;    /* control word */
    uint16_t sw;    /* status word, TOP in bits 11-13 */
    /* The last non-control instruction: its CS:EIP and opcode (the low 3
     * bits of its first byte and its ModRM byte), and its memory operand's
     * selector:offset (SDM vol. 1, 8.1.8-8.1.9). */
    uint32_t fip, fdp;
    uint16_t fcs, fds, fop;
    bool ferr; /* the FERR# output (the 387's ERROR#) is asserted */
} nm_fpu;

/* The control word after FNINIT, and the FPU's state after RESET (SDM vol.
 * 3A, table 9-1: FCW 0040H, FTW 5555H, registers +0). */
#define NM_FCW_INIT 0x037fu
struct nm_cpu;
void fpu_reset(struct nm_cpu *c);
void fpu_init(struct nm_cpu *c); /* FNINIT */
/* The tag a value would get (00 valid, 01 zero, 10 special). */
unsigned fpu_tag_of(nm_f80 v);
/* The full 16-bit tag word (FNSTENV's) and its 8-bit abridged form. */
uint16_t fpu_tag_word(const nm_fpu *f);

#endif
