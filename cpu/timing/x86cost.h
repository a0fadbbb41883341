/* Helpers shared by the table-driven cost models (i386.c, i486.c, and
 * whatever pentium.c wants): the operand form of a decoded instruction,
 * the mode an instruction ran in and what a control transfer did (gate,
 * privilege change, task switch), the early-out multiplier width, and the
 * 386's "m" (components of the next instruction). */
#ifndef NICEMU_CPU_TIMING_X86COST_H
#define NICEMU_CPU_TIMING_X86COST_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/core.h"
#include "cpu/decode.h"

/* The opcode flags of cpu/opcodes.def (NM_OPF_*) as a table the models
 * index inline: nm_opcode_flags() is a call into decode.c, and the models
 * ask several times per instruction. */
static const uint8_t nm_x86_op_flags[NM_OP_COUNT] = {
#define NM_OPCODE(id, nm, fl) [NM_OP_##id] = (fl),
#include "cpu/opcodes.def"
#undef NM_OPCODE
};
static inline unsigned nm_op_flags(unsigned op)
{
    return op < NM_OP_COUNT ? nm_x86_op_flags[op] : 0;
}

/* Whether an instruction can neither fault nor touch memory nor move EIP
 * but by its length: the register forms of these operations (LEA: none
 * read), which a cost model may run in a stretch (nm_cpu_hooked_loop's
 * `ahead`).  (DIV and IDIV fault; the others not here are stack, string,
 * I/O, system or transfers, or read a segment or flags the CPU checks.) */
static const bool nm_x86_regonly_op[NM_OP_COUNT] = {
    [NM_OP_ADD] = true,   [NM_OP_OR] = true,    [NM_OP_ADC] = true,   [NM_OP_SBB] = true,
    [NM_OP_AND] = true,   [NM_OP_SUB] = true,   [NM_OP_XOR] = true,   [NM_OP_CMP] = true,
    [NM_OP_TEST] = true,  [NM_OP_INC] = true,   [NM_OP_DEC] = true,   [NM_OP_NEG] = true,
    [NM_OP_NOT] = true,   [NM_OP_MOV] = true,   [NM_OP_MOVSX] = true, [NM_OP_MOVZX] = true,
    [NM_OP_LEA] = true,   [NM_OP_BSWAP] = true, [NM_OP_CBW] = true,   [NM_OP_CWD] = true,
    [NM_OP_LAHF] = true,  [NM_OP_SAHF] = true,  [NM_OP_ROL] = true,   [NM_OP_ROR] = true,
    [NM_OP_RCL] = true,   [NM_OP_RCR] = true,   [NM_OP_SHL] = true,   [NM_OP_SHR] = true,
    [NM_OP_SAR] = true,   [NM_OP_SHLD] = true,  [NM_OP_SHRD] = true,  [NM_OP_IMUL2] = true,
    [NM_OP_IMUL3] = true, [NM_OP_SETCC] = true, [NM_OP_NOP] = true,   [NM_OP_CLC] = true,
    [NM_OP_STC] = true,   [NM_OP_CMC] = true,   [NM_OP_CLD] = true,   [NM_OP_STD] = true,
};
static inline bool nm_insn_regonly(const nm_insn *i)
{
    return i->op < NM_OP_COUNT && nm_x86_regonly_op[i->op] && !(i->prefixes & NM_PFX_LOCK) &&
           !i->sync && /* (none reads EIP: its run handler is its handler, decode.c) */
           (i->op == NM_OP_LEA || (i->dst != NM_OPK_MEM && i->src != NM_OPK_MEM));
}

/* Set bits of a byte (prefix masks): __builtin_popcount is a libgcc call
 * on a baseline x86-64 target (no POPCNT). */
static inline unsigned nm_popcount8(unsigned v)
{
    v = v - ((v >> 1) & 0x55u);
    v = (v & 0x33u) + ((v >> 2) & 0x33u);
    return (v + (v >> 4)) & 0x0fu;
}

/* Operand forms: the columns of a cost table row. */
enum {
    NM_FORM_R = 0, /* no memory operand: reg, reg,reg, reg,imm, none */
    NM_FORM_LOAD,  /* reg <- mem (memory source) */
    NM_FORM_MEM,   /* mem destination: store or read-modify-write (mem,reg / mem,imm) */
    NM_FORM_COUNT
};

static inline unsigned nm_insn_form(const nm_insn *i)
{
    if (i->dst == NM_OPK_MEM) return NM_FORM_MEM;
    if (i->src == NM_OPK_MEM) return NM_FORM_LOAD;
    return NM_FORM_R;
}

/* The CPU's mode as an instruction saw it. */
typedef struct nm_x86_mode {
    bool pe, vm86;
    uint8_t cpl, iopl;
    uint16_t tr;
    uint16_t cs;
    uint32_t next_eip; /* EIP after the last instruction: a mismatch means an
                          interrupt or exception was delivered in between */
} nm_x86_mode;

static inline nm_x86_mode nm_x86_mode_now(const nm_cpu *c)
{
    nm_x86_mode m = {c->pe,           c->vm86,
                     (uint8_t)c->cpl, (uint8_t)((c->eflags >> 12) & 3),
                     c->tr.selector,  c->seg[NM_CS].selector,
                     c->eip};
    return m;
}

/* Row of the I/O and interrupt tables by privilege situation. */
enum {
    NM_IO_REAL = 0, /* real mode */
    NM_IO_PM_OK,    /* protected mode, CPL <= IOPL */
    NM_IO_PM_TSS,   /* protected mode, CPL > IOPL (TSS bitmap consulted) */
    NM_IO_V86,      /* virtual-8086 mode */
};
static inline unsigned nm_io_class(const nm_x86_mode *m)
{
    if (!m->pe) return NM_IO_REAL;
    if (m->vm86) return NM_IO_V86;
    return m->cpl <= m->iopl ? NM_IO_PM_OK : NM_IO_PM_TSS;
}

/* What a far transfer, INT or IRET did, from the mode before and after. */
enum {
    NM_XFER_REAL = 0, /* real mode (or virtual-8086 to virtual-8086) */
    NM_XFER_SAME,     /* protected mode, same privilege, no gate */
    NM_XFER_GATE,     /* through a call gate, same privilege */
    NM_XFER_PRIV,     /* privilege change (inner for CALL/INT, outer for RET/IRET) */
    NM_XFER_FROM_V86, /* INT from virtual-8086 mode / IRET back to it */
    NM_XFER_TASK,     /* task switch */
};
static inline unsigned nm_xfer_class(const nm_x86_mode *before, const nm_x86_mode *after)
{
    if (before->tr != after->tr) return NM_XFER_TASK;
    if (!before->pe && !after->pe) return NM_XFER_REAL;
    if (before->vm86 != after->vm86) return NM_XFER_FROM_V86;
    if (before->vm86) return NM_XFER_REAL;
    if (before->cpl != after->cpl) return NM_XFER_PRIV;
    return NM_XFER_SAME;
}

/* The class of a far CALL/JMP: a direct one at the same privilege went
 * through a call gate when the selector it named is not the CS it loaded
 * (RPL ignored).  `after` is the mode after the instruction. */
static inline unsigned nm_far_xfer_class(unsigned xfer, unsigned form, const nm_insn *i,
                                         const nm_x86_mode *after)
{
    if (xfer == NM_XFER_SAME && form == NM_FORM_R && (i->imm2 & ~3u) != (after->cs & ~3u))
        return NM_XFER_GATE;
    return xfer;
}

/* Whether the instruction loads CS itself (far JMP/CALL/RET, IRET, INT).
 * The insn hook runs after the instruction, so c->seg[NM_CS] is then the
 * CS it loaded: only for the others does a CS unlike the previous
 * instruction's mean an interrupt or exception was delivered in between
 * (for these the EIP check alone detects one). */
static inline bool nm_loads_cs(const nm_insn *i)
{
    switch (i->op) {
    case NM_OP_JMP_FAR:
    case NM_OP_CALL_FAR:
    case NM_OP_RET_FAR:
    case NM_OP_IRET:
    case NM_OP_INT:
    case NM_OP_INT3:
    case NM_OP_INTO:
    case NM_OP_ICEBP: return true;
    default: return false;
    }
}

/* Significant bits of the early-out multiplier (Intel 386 DX data sheet /
 * Intel486 data book footnote: ceiling(log2(|m|)), at least 3; 0 gives the
 * minimum).  `value` is the multiplier as an unsigned operand-size value. */
static inline unsigned nm_mul_bits(uint32_t value, unsigned opsize, bool is_signed)
{
    unsigned bits = 8 * opsize;
    uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
    value &= mask;
    if (is_signed && (value >> (bits - 1))) value = (uint32_t)(-value) & mask; /* |m| */
    if (value <= 1) return 3;
    /* ceiling(log2(v)) */
    unsigned n = 32u - (unsigned)__builtin_clz(value - 1);
    return n < 3 ? 3 : n;
}

/* The 386's "m": components of the next instruction (386 DX data sheet,
 * instruction set clock count summary notes: the whole displacement counts
 * as one component, the whole immediate as one, every other byte, prefixes
 * included, as one each).  From the decoded form: prefix and opcode bytes,
 * ModRM/SIB, one for a displacement or relative target, one for an
 * immediate, never more than the length. */
static inline unsigned nm_components(const nm_insn *i)
{
    unsigned n = nm_popcount8(i->prefixes & (NM_PFX_OPSIZE | NM_PFX_ADSIZE | NM_PFX_SEG |
                                             NM_PFX_LOCK | NM_PFX_REP | NM_PFX_REPNE));
    n += (i->prefixes & NM_PFX_0F) ? 2 : 1;
    bool modrm = i->dst == NM_OPK_MEM || i->src == NM_OPK_MEM || i->mod == 3;
    if (modrm) n++;
    bool mem = i->dst == NM_OPK_MEM || i->src == NM_OPK_MEM;
    if (mem && i->addr32 && i->rm == 4) n++; /* SIB */
    bool disp =
        mem && (i->mod == 1 || i->mod == 2 || (i->mod == 0 && i->rm == (i->addr32 ? 5 : 6)));
    if (disp) n++;
    /* An immediate, or a branch's relative target / far pointer. */
    if (i->src == NM_OPK_IMM || i->dst == NM_OPK_IMM) n++;
    return n < i->len ? n : i->len;
}

#endif
