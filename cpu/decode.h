/* A decoded instruction, as the interpreter runs it and as the cost models
 * and the profiler see it (the insn hook).  Decoded once per physical
 * address and kept in the decoded-instruction cache (icache.c). */
#ifndef NICEMU_CPU_DECODE_H
#define NICEMU_CPU_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"

#define NM_OPF_LOCK   0x01u
#define NM_OPF_BRANCH 0x02u
#define NM_OPF_STRING 0x04u
#define NM_OPF_PRIV   0x08u
#define NM_OPF_I486   0x10u
#define NM_OPF_I586   0x20u

/* Instruction IDs (cpu/opcodes.def). */
typedef enum {
#define NM_OPCODE(id, name, flags) NM_OP_##id,
#include "cpu/opcodes.def"
#undef NM_OPCODE
    NM_OP_COUNT
} nm_opcode;

const char *nm_opcode_name(unsigned op);
unsigned nm_opcode_flags(unsigned op);

/* Operand kinds (nm_insn.dst, nm_insn.src). */
enum {
    NM_OPK_NONE = 0,
    NM_OPK_REG, /* general register (or segment/control register for the MOVs that name one) */
    NM_OPK_MEM,
    NM_OPK_IMM,
    NM_OPK_CL,  /* shift count in CL / port in DX for IN, OUT, INS, OUTS */
    NM_OPK_ONE, /* shift by 1 */
};

/* Prefixes seen (nm_insn.prefixes). */
#define NM_PFX_OPSIZE 0x01u
#define NM_PFX_ADSIZE 0x02u
#define NM_PFX_SEG    0x04u
#define NM_PFX_LOCK   0x08u
#define NM_PFX_REP    0x10u /* F3: REP / REPE */
#define NM_PFX_REPNE  0x20u /* F2 */
#define NM_PFX_0F     0x40u /* two-byte opcode */

/* No base / index register in a memory operand. */
#define NM_REG_NONE 8

typedef void (*nm_handler)(nm_cpu *c, const nm_insn *i);

struct nm_insn {
    nm_handler fn;
    uint32_t disp;  /* memory operand displacement; relative branch offset */
    uint32_t imm;   /* immediate (sign- or zero-extended to the operand size) */
    uint32_t imm2;  /* second immediate: far-pointer selector, ENTER nesting level */
    uint32_t ea;    /* effective address of the memory operand: only in the insn hook's copy */
    uint16_t op;    /* NM_OP_* */
    uint8_t len;    /* bytes, prefixes included */
    uint8_t opsize; /* operand size in bytes: 1, 2 or 4 */
    uint8_t addr32; /* 32-bit addressing */
    uint8_t prefixes;
    uint8_t seg;      /* segment of the memory operand (NM_ES..NM_GS) */
    uint8_t dst, src; /* NM_OPK_* */
    uint8_t opcode;   /* last opcode byte (after 0F) */
    uint8_t mod, reg, rm;
    uint8_t base, index, scale; /* memory operand: NM_REG_NONE if absent */
    uint8_t cond;               /* Jcc / SETcc condition, group sub-op */
    uint8_t opflags;            /* NM_OPF_* of op (the decoder's copy of opcodes.def) */
    /* What the cost model on the insn hook works out once per decoded
     * instruction (the parts of its cost that depend on the instruction
     * alone), valid while model_tag is that model's NM_INSN_TAG_*; the
     * decoder clears it, so a decoded-again instruction (self-modifying
     * code, an uncacheable one) is worked out again. */
    uint8_t model_tag;
    uint8_t model_data[14];
    /* NM_SYNC_*: what the uncosted run loop (cpu.c) must do around this
     * instruction; 0 for most (decode.c says which). */
    uint8_t sync;
};

/* nm_insn.sync bits.  END: the instruction reads or moves EIP, or may
 * change ESP before it faults, so it runs with the run loop's full
 * bookkeeping (EIP and ESP of its start kept for a fault) and ends a run of
 * straight-line instructions.  CHECK (always with END): it may change what
 * the run loop looks at between instructions (INTR, the interrupt shadow,
 * TF, the mode, the fetch page, events, a stop request). */
#define NM_SYNC_END   1u
#define NM_SYNC_CHECK 2u

/* nm_insn.model_tag values: one per cost model (0: none yet). */
enum { NM_INSN_TAG_NONE = 0, NM_INSN_TAG_486, NM_INSN_TAG_PENTIUM, NM_INSN_TAG_386 };

/* Decodes the instruction at linear address `lin` (fetching through the
 * TLB, which may fault).  Raises #UD, #GP(0) (longer than 15 bytes) or #PF.
 * *cacheable is false when the bytes cross a page or come from MMIO. */
void nm_decode(nm_cpu *c, uint32_t lin, nm_insn *out, bool *cacheable);

#endif
