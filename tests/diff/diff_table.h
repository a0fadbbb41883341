/* Differential tests against a reference CPU: what the native generators
 * (diffgen: 32-bit, run on the host or under qemu-i386; diffgen64: the same
 * source in long mode), the comparison tool (diff_compare) and the
 * emulator-side test (test_diff, linked with nicemu_core) share.
 *
 *   - the table of instruction templates, built by diff_table_build() in the
 *     same order on all sides (a template's index is its id in the file);
 *   - the record written by a generator for every executed case;
 *   - the file header, which names the reference that ran the cases;
 *   - reading a record file.
 *
 * Plain C11 with fixed-size fields only: the layout is the same for the
 * 32-bit and the 64-bit programs. */
#ifndef NICEMU_DIFF_TABLE_H
#define NICEMU_DIFF_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* Addresses shared by the host and the emulator: an instruction with a
 * memory operand addresses [DIFF_DATA] (disp32), and a 16-byte window
 * around it is part of the record (BT with a register bit offset may reach
 * 8 bytes below and 7 above). */
#define DIFF_DATA_PAGE 0x00300000u
#define DIFF_DATA      0x00300800u
#define DIFF_WIN       16
#define DIFF_WIN_BASE  (DIFF_DATA - 8u)

/* How the operand size maps to registers. */
enum { DIFF_SZ8 = 1, DIFF_SZ16 = 2, DIFF_SZ32 = 4 };

/* Which flags the SDM leaves undefined (see README.md for the table and
 * the page of each). */
typedef enum {
    FC_DEFINED, /* every flag the instruction writes is defined */
    FC_LOGIC,   /* AND OR XOR TEST: AF */
    FC_SHIFT,   /* SHL SHR SAR: count 0 none; AF; OF if count != 1;
                   CF for SHL/SHR when count >= operand bits */
    FC_SAR,     /* SAR: as FC_SHIFT but CF stays defined (last bit out) */
    FC_ROT,     /* ROL ROR RCL RCR: count 0 none; OF if count != 1 */
    FC_SHD,     /* SHLD SHRD: count 0 none; count > size all + dest; AF; OF if != 1 */
    FC_MUL,     /* MUL IMUL: SF ZF AF PF */
    FC_DIV,     /* DIV IDIV: all six */
    FC_BT,      /* BT BTS BTR BTC: OF SF AF PF */
    FC_BSX,     /* BSF BSR: all but ZF; destination when the source is 0 */
    FC_AAA,     /* AAA AAS: OF SF ZF PF */
    FC_AAM,     /* AAM AAD: OF AF CF */
    FC_DAA,     /* DAA DAS: OF */
} diff_fclass;

/* How the generator picks inputs beyond the generic mix. */
typedef enum {
    G_GENERIC,
    G_COUNT,    /* shift count: CL or imm8 cycles 0..63, sometimes 64..255 */
    G_DIV,      /* dividend mostly in range; some fault (#DE) */
    G_BCD,      /* AL x CF x AF exhaustive over 1024 cases, AH random */
    G_BITSCAN,  /* sparse source values, zero one time in ten */
    G_BTMEM,    /* bit offset in -64..63 (memory bit string) */
    G_CMPXCHG,  /* accumulator equal to the destination half the time */
    G_COUNTREG, /* ECX small (JECXZ, LOOP) */
} diff_gen;

/* What is randomised in the encoding per case. */
typedef enum {
    M_NONE,
    M_REGREG, /* ModRM byte: mod=11, reg and rm random */
    M_RM,     /* ModRM byte: mod=11, rm random (reg is an opcode extension) */
    M_REG,    /* ModRM byte: reg random, mod/rm fixed (a memory operand) */
    M_OPREG,  /* the low 3 bits of the opcode byte at `modrm` (BSWAP, INC r32, XCHG) */
    M_LEA,    /* LEA: the whole addressing form is random */
} diff_mmode;

typedef enum { CNT_NONE, CNT_CL, CNT_IMM, CNT_ONE } diff_count;

typedef struct diff_insn {
    char name[40];    /* "add r/m32,r32" */
    char group[12];   /* "alu", "shift", ...: one CTest test per group */
    uint8_t size;     /* operand size in bytes */
    uint8_t fclass;   /* diff_fclass */
    uint8_t gen;      /* diff_gen */
    uint8_t mmode;    /* diff_mmode */
    uint8_t count;    /* diff_count: where the shift count comes from */
    uint8_t shl_shr;  /* FC_SHIFT: 1 for SHL/SHR (CF undefined for big counts) */
    uint8_t rm_src;   /* FC_BSX: the source is r/m (dest is reg) */
    uint8_t mem;      /* has the [DIFF_DATA] memory operand */
    uint8_t reg_byte; /* the ModRM reg field names an 8-bit register */
    uint8_t rm_byte;  /* the ModRM rm field names an 8-bit register */
    uint8_t chain;    /* lazy-flags chain: a second instruction follows (below) */
    int8_t modrm;     /* index of the ModRM (or opcode for M_OPREG), -1 none */
    int8_t imm;       /* index of a random immediate, -1 none */
    uint8_t immsize;
    uint8_t len;
    uint8_t bytes[15];
    uint32_t cases; /* how many cases diffgen runs */
} diff_insn;

/* Arithmetic flag bits (EFLAGS). */
#define DIFF_CF    0x001u
#define DIFF_PF    0x004u
#define DIFF_AF    0x010u
#define DIFF_ZF    0x040u
#define DIFF_SF    0x080u
#define DIFF_OF    0x800u
#define DIFF_ARITH (DIFF_CF | DIFF_PF | DIFF_AF | DIFF_ZF | DIFF_SF | DIFF_OF)

/* Chain templates ("chain" group) test the interpreter's lazy flags: the
 * template's instruction sets the flags, then one of these reads, keeps or
 * partly rewrites them.  diffgen picks one per case, appends its bytes
 * and stores its index in code[15] (beyond any instruction's length).  Its
 * registers are ECX/EDX (and EDI for the jumps). */
typedef struct diff_second {
    const char *name;
    uint8_t len;
    uint8_t bytes[6];
    int8_t cc_at;    /* byte that gets a random condition code in bits 3:0, -1 none */
    uint16_t writes; /* flags it writes with a defined value */
    uint16_t undef;  /* flags it leaves undefined */
    uint16_t reads;  /* flags its results depend on (cc_at: from the condition) */
} diff_second;

/* The flags condition code cc (Jcc/SETcc low nibble) reads. */
uint16_t diff_cc_reads(unsigned cc);
/* The flags the second instruction of a chain case reads. */
uint16_t diff_second_reads(const diff_second *s2, const uint8_t *bytes);

extern const diff_second diff_seconds[];
extern const unsigned diff_nseconds;
#define DIFF_CHAIN_SLOT 15

/* Fills the table (static storage); returns the count. */
unsigned diff_table_build(const diff_insn **out);
/* FNV-1a over the table, stored in the file to catch a stale data file. */
uint32_t diff_table_hash(void);

typedef struct diff_record {
    uint16_t tmpl;
    uint8_t len;
    uint8_t status; /* DIFF_ST_* */
    uint8_t code[16];
    uint32_t in_regs[8];
    uint32_t in_flags;
    uint32_t out_regs[8];
    uint32_t out_flags;
    uint8_t mem_in[DIFF_WIN];
    uint8_t mem_out[DIFF_WIN];
    uint32_t idx; /* the case's number within its template */
} diff_record;

enum {
    DIFF_ST_OK = 0,
    DIFF_ST_DE = 1, /* the host raised #DE (SIGFPE): outputs = inputs */
};

/* Which cases a file holds: every case, the cases long mode can run
 * (diffgen64), or the others (diffgen's complement of diffgen64). */
#define DIFF_CASES_ALL    "all"
#define DIFF_CASES_LONG   "long"
#define DIFF_CASES_LEGACY "legacy"

/* Who ran them. */
#define DIFF_REF_HOST32 "host-32"   /* diffgen, natively (32-bit process) */
#define DIFF_REF_HOST64 "host-64"   /* diffgen64, natively in long mode */
#define DIFF_REF_QEMU   "qemu-i386" /* diffgen under qemu-user's i386 emulation */

#define DIFF_MAGIC "NMDIFF02"
typedef struct diff_header {
    char magic[8];
    uint32_t seed;
    uint32_t percent;
    uint32_t templates;
    uint32_t table_hash;
    uint32_t records;
    uint32_t record_size;
    char reference[16]; /* DIFF_REF_* */
    char cases[8];      /* DIFF_CASES_* */
    char cpu[48];       /* the CPUID brand string of the CPU that ran them */
} diff_header;

/* How many cases a generator runs of template t at scale `percent`. */
static inline uint32_t diff_case_count(const diff_insn *t, uint32_t percent)
{
    return (uint32_t)(((uint64_t)t->cases * percent + 99) / 100);
}

/* Reads a record file written for this table (header checked, records in
 * (template, case) order, every template id and case number in range).
 * Returns 0, or -1 with a one-line reason in err. *recs is malloc'ed. */
int diff_read_file(const char *path, diff_header *h, diff_record **recs, char *err, size_t errlen);

/* What the SDM leaves undefined in one case: flags, and the destination
 * (bits `mask` of register `reg`, or the memory operand) when it is. */
typedef struct diff_undef {
    uint32_t flags;
    int reg; /* -1: none */
    uint32_t mask;
    int mem;
} diff_undef;

/* For a chain template: the prefix's undefined flags only (the generator
 * keeps them away from a second instruction that reads them). */
diff_undef diff_undefined_first(const diff_insn *t, const diff_record *r);
/* The whole case: for a chain, the second instruction's undefined flags
 * plus the prefix's ones it leaves in place. */
diff_undef diff_undefined(const diff_insn *t, const diff_record *r);

/* Operand access by register number and size (8-bit: 0-3 = AL..BL,
 * 4-7 = AH..BH). */
static inline uint32_t diff_get_op(const uint32_t *regs, unsigned size, unsigned r)
{
    if (size == 1) return r < 4 ? regs[r] & 0xff : (regs[r - 4] >> 8) & 0xff;
    if (size == 2) return regs[r] & 0xffff;
    return regs[r];
}

static inline void diff_set_op(uint32_t *regs, unsigned size, unsigned r, uint32_t v)
{
    if (size == 1) {
        if (r < 4)
            regs[r] = (regs[r] & ~0xffu) | (v & 0xff);
        else
            regs[r - 4] = (regs[r - 4] & ~0xff00u) | ((v & 0xff) << 8);
    } else if (size == 2) {
        regs[r] = (regs[r] & ~0xffffu) | (v & 0xffff);
    } else {
        regs[r] = v;
    }
}

/* The bits of the 32-bit registers an operand occupies, in reg[]: for the
 * undefined-destination mask. */
static inline void diff_op_mask(unsigned size, unsigned r, unsigned *reg, uint32_t *mask)
{
    if (size == 1) {
        *reg = r & 3;
        *mask = r < 4 ? 0xffu : 0xff00u;
    } else {
        *reg = r;
        *mask = size == 2 ? 0xffffu : 0xffffffffu;
    }
}

#endif
