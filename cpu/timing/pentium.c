/* The Pentium (P5 / P54C) cost model: what an instruction costs on the
 * two-pipe Pentium without MMX.  A table of clocks per instruction ID and
 * operand form, plus the rules of the pipeline:
 *
 *   - U/V pairing: an instruction of class UV or PU issued in the U pipe
 *     opens a slot that the next instruction of class UV or PV may fill in
 *     the V pipe (no RAW/WAW register dependency, no prefix, no
 *     displacement+immediate, code already in the code cache);
 *   - AGI: a base or index register written by the previous issue group
 *     costs one clock;
 *   - prefix decode: one clock per prefix byte (0F counts, except before a
 *     near Jcc), hidden in the shadow of a multi-clock group up to three
 *     groups before;
 *   - branch prediction: a 256-entry, 4-way BTB of 2-bit counters that
 *     predicts issue groups, keyed by the group before ("BTB");
 *   - memory: split 8 KB 2-way code and data caches (cache.c), the data
 *     cache write-back without write allocation, two write buffers, burst
 *     line fills and single transfers at the bus clock (membus.h), 3 clocks
 *     for a misaligned access, locked cycles on the bus.
 *
 * Sources, cited per row and rule as:
 *   [IT]  Agner Fog, "Instruction tables", list "Intel Pentium and Pentium
 *         MMX": clocks and pairability (UV, PU, PV, NP) per instruction.
 *   [MA]  Agner Fog, "The microarchitecture of Intel, AMD and VIA CPUs",
 *         chapter "Pentium 1 and Pentium MMX pipeline": 4.1 pairing rules,
 *         4.2 address generation interlock, 4.4 prefixes; chapter "Branch
 *         prediction", section on the P1 (BTB, penalties 3 / 4 clocks).
 *   [DB]  Intel, Pentium Processor data book (241428) 3.1.2 "Instruction
 *         pairing rules": two clocks for ALU reg,mem, three for ALU mem,reg,
 *         two more when two read-modify-write instructions pair.
 *   [PDM] Intel, Pentium Processor Family Developer's Manual vol. 3
 *         (241430), chapter 25 instruction clock counts: the mode-dependent
 *         rows (I/O, INT, IRET, far transfers, control registers).  Not
 *         read directly: checked through [NG] and [PIR], which copy it.
 *   [NG]  The x86 ("iAPx86") Norton Guide, per-instruction "Length and
 *         timing" tables, Pentium column (real and protected mode; the
 *         guide the 386/486 rows were checked against).
 *   [PIR] "Intel Pentium Instruction Set Reference", a copy of the Pentium
 *         manual's instruction pages with their Clocks column.
 *   [BB]  Abrash, Graphics Programming Black Book, chapters 19-21
 *         (pairing tables 20.1/20.2, lockstep RMW pairs, AGI, prefixes,
 *         branch misprediction clocks).
 *   [AF97] Agner Fog, "How to optimize for the Pentium processor"
 *         (version of 1997-08-19), 12.1.1-12.1.5 "Jumps and branches"
 *         (PPlain): the BTB keyed by the U instruction of the group before
 *         the branch's, the consecutive-branches shadow, misapplied
 *         predictions, state 0 as no entry ("BTB" below).  Read in Fujinami
 *         Junhisa's Japanese translation (the English original was not at
 *         hand).
 *   [AF]  Agner Fog, "How to optimize for the Pentium family of
 *         microprocessors" (the PPlain/PMMX edition), 10.2 "Imperfect
 *         pairing" (read in the copy at xiaohui.com/dev/mmx).
 *   [VT]  Intel VTune Performance Analyzer, user's guide, penalty
 *         indicator "Bank_Conflict" (Pentium processors).
 *   [GCC] GCC, gcc/config/i386/pentium.md (2002): the pairing classes
 *         (attribute pent_pair).
 *   [HOWTO] W. van Dorst, BogoMips mini-HOWTO (1995): "Pentium clock *
 *         (0.40 plusminus 0.01)" for Linux's delay loop (DEC + JNS).
 * Where they disagree the row keeps one figure and names the other;
 * docs/cost-models.md ("Verification", "Pentium") lists what was checked
 * and what is approximated.
 *
 * Hooks: mem only logs the accesses (a preallocated array); branch notes
 * the outcome; insn settles the bill, when the instruction ID is known: a
 * REP string's accesses are spread over its iterations so that write
 * buffer drains overlap the per-iteration clocks. */
#include "cpu/timing/pentium.h"

#include <glib.h>
#include <stddef.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/hooked_loop.h"
#include "cpu/timing/cache.h"
#include "cpu/timing/membus.h"
#include "cpu/timing/timing.h"
#include "cpu/timing/tlb.h"
#include "cpu/timing/x86cost.h"
#include "cpu/timing/x87cost.h"
#include "emu/core/memmap.h"

/* ------------------------------------------------------------ the table */

enum { P_NP = 0, P_UV, P_PU, P_PV }; /* pairability [IT] */

/* Row flags. */
#define F_RMW     1u /* the memory-destination form reads and writes memory */
#define F_SPECIAL 2u /* clocks computed in special_clocks() */
#define F_DST_G   4u /* the register destination is ModRM.reg (else ModRM.rm) */
#define F_STACK   8u /* uses ESP implicitly (push/pop/call/ret family) */

typedef struct p5_row {
    uint8_t pair;
    uint8_t clk[NM_FORM_COUNT]; /* NM_FORM_R, NM_FORM_LOAD, NM_FORM_MEM */
    uint8_t flags;
} p5_row;

#define ROW(p, r, l, m, f)                                                                         \
    {                                                                                              \
        p, {r, l, m}, f                                                                            \
    }
#define SPECIAL(p, f)                                                                              \
    {                                                                                              \
        p, {1, 1, 1}, (f) | F_SPECIAL                                                              \
    }

static const p5_row rows[NM_OP_COUNT] = {
    [NM_OP_INVALID] = ROW(P_NP, 1, 1, 1, 0),
    /* ALU r,r/i 1; r,m 2; m,r/i 3 [IT], [DB]; ADC/SBB pair in U only [IT]. */
    [NM_OP_ADD] = ROW(P_UV, 1, 2, 3, F_RMW),
    [NM_OP_OR] = ROW(P_UV, 1, 2, 3, F_RMW),
    [NM_OP_ADC] = ROW(P_PU, 1, 2, 3, F_RMW),
    [NM_OP_SBB] = ROW(P_PU, 1, 2, 3, F_RMW),
    [NM_OP_AND] = ROW(P_UV, 1, 2, 3, F_RMW),
    [NM_OP_SUB] = ROW(P_UV, 1, 2, 3, F_RMW),
    [NM_OP_XOR] = ROW(P_UV, 1, 2, 3, F_RMW),
    [NM_OP_CMP] = ROW(P_UV, 1, 2, 2, 0),     /* CMP m,r reads only [IT] */
    [NM_OP_TEST] = SPECIAL(P_UV, 0),         /* r,r r,m eax,i UV; r/m,i NP [IT] */
    [NM_OP_INC] = ROW(P_UV, 1, 3, 3, F_RMW), /* INC/DEC r 1, m 3 [IT] */
    [NM_OP_DEC] = ROW(P_UV, 1, 3, 3, F_RMW),
    [NM_OP_NEG] = ROW(P_NP, 1, 3, 3, F_RMW), /* NEG/NOT r 1, m 3 NP [IT] */
    [NM_OP_NOT] = ROW(P_NP, 1, 3, 3, F_RMW),
    /* data movement */
    [NM_OP_MOV] = ROW(P_UV, 1, 1, 1, 0),           /* [IT] */
    [NM_OP_MOV_TO_SREG] = SPECIAL(P_NP, 0),        /* real 2, protected 3 [PDM] */
    [NM_OP_MOV_FROM_SREG] = ROW(P_NP, 1, 1, 1, 0), /* [IT] */
    [NM_OP_MOV_TO_CR] = SPECIAL(P_NP, 0), /* CR0 22 CR2 12 CR3 21 CR4 14 [PDM]; [PIR]: 12-22 */
    [NM_OP_MOV_FROM_CR] = ROW(P_NP, 4, 4, 4, 0),  /* [PIR] */
    [NM_OP_MOV_TO_DR] = ROW(P_NP, 11, 11, 11, 0), /* DR0-3 11 [PDM]; [PIR]: 11/12 by register */
    [NM_OP_MOV_FROM_DR] = ROW(P_NP, 2, 2, 2, 0),  /* DR0-3 2 [PDM]; [PIR]: 2/12 by register */
    [NM_OP_MOVSX] = ROW(P_NP, 3, 3, 3, F_DST_G),  /* [IT] */
    [NM_OP_MOVZX] = ROW(P_NP, 3, 3, 3, F_DST_G),  /* [IT] */
    [NM_OP_LEA] = ROW(P_UV, 1, 1, 1, F_DST_G),    /* [IT] */
    [NM_OP_XCHG] = SPECIAL(P_NP, F_RMW),          /* eAX,r 2; r,r 3; r,m 3 + locked cycles [NG] */
    [NM_OP_XADD] = ROW(P_NP, 3, 4, 4, F_RMW),     /* [IT] */
    [NM_OP_CMPXCHG] = ROW(P_NP, 5, 6, 6, F_RMW),  /* r,r 5; m,r 6 [PIR] */
    [NM_OP_CMPXCHG8B] = ROW(P_NP, 10, 10, 10, F_RMW), /* [IT] */
    [NM_OP_BSWAP] = ROW(P_NP, 1, 1, 1, 0),            /* [IT] */
    [NM_OP_CBW] = ROW(P_NP, 3, 3, 3, 0),              /* CBW/CWDE 3 [IT] */
    [NM_OP_CWD] = ROW(P_NP, 2, 2, 2, 0),              /* CWD/CDQ 2 [IT] */
    [NM_OP_LAHF] = ROW(P_NP, 2, 2, 2, 0),             /* [IT] */
    [NM_OP_SAHF] = ROW(P_NP, 2, 2, 2, 0),             /* [IT] */
    [NM_OP_XLAT] = ROW(P_NP, 4, 4, 4, 0),             /* [IT] */
    [NM_OP_LDS] = ROW(P_NP, 4, 4, 4, F_DST_G),        /* LDS..LSS 4 [IT] */
    [NM_OP_LES] = ROW(P_NP, 4, 4, 4, F_DST_G),
    [NM_OP_LFS] = ROW(P_NP, 4, 4, 4, F_DST_G),
    [NM_OP_LGS] = ROW(P_NP, 4, 4, 4, F_DST_G),
    [NM_OP_LSS] = ROW(P_NP, 4, 4, 4, F_DST_G),
    /* stack: PUSH r/i, POP r 1 UV; PUSH m 2, POP m 3 NP [IT] */
    [NM_OP_PUSH] = SPECIAL(P_UV, F_STACK),
    [NM_OP_POP] = SPECIAL(P_UV, F_STACK),
    [NM_OP_PUSH_SREG] = ROW(P_NP, 1, 1, 1, F_STACK), /* [IT] */
    [NM_OP_POP_SREG] = ROW(P_NP, 3, 3, 3, F_STACK),  /* real 3; pm 3 + descriptor [PDM] */
    [NM_OP_PUSHA] = ROW(P_NP, 5, 5, 5, F_STACK),     /* [IT] */
    [NM_OP_POPA] = ROW(P_NP, 5, 5, 5, F_STACK),      /* [IT] */
    [NM_OP_PUSHF] = SPECIAL(P_NP, F_STACK),          /* real 9, pm 3 [PIR] (IT: 3-5) */
    [NM_OP_POPF] = SPECIAL(P_NP, F_STACK),           /* real 6, pm 4 [NG] (IT: 4-6) */
    [NM_OP_ENTER] = SPECIAL(P_NP, F_STACK),          /* 11, 15, 15+2L [IT] */
    [NM_OP_LEAVE] = ROW(P_NP, 3, 3, 3, F_STACK),     /* [IT] */
    /* shifts and rotates: see special_clocks() [IT] */
    [NM_OP_ROL] = SPECIAL(P_PU, F_RMW),
    [NM_OP_ROR] = SPECIAL(P_PU, F_RMW),
    [NM_OP_RCL] = SPECIAL(P_PU, F_RMW),
    [NM_OP_RCR] = SPECIAL(P_PU, F_RMW),
    [NM_OP_SHL] = SPECIAL(P_PU, F_RMW),
    [NM_OP_SHR] = SPECIAL(P_PU, F_RMW),
    [NM_OP_SAR] = SPECIAL(P_PU, F_RMW),
    [NM_OP_SHLD] = SPECIAL(P_NP, F_RMW), /* r 4; m,i 4; m,CL 5 [NG], [PIR] (IT: m 5) */
    [NM_OP_SHRD] = SPECIAL(P_NP, F_RMW),
    /* multiply and divide [IT]: "MUL IMUL r8/r16/m8/m16 11, all other
     * versions 9" (also [AF97] ch. 20; Intel's documented 10 for 32-bit,
     * [NG], is what GMP's mpn/x86/pentium/README says "measures 9") */
    [NM_OP_MUL] = SPECIAL(P_NP, 0),         /* r/m8 11, r/m16 11, r/m32 9 */
    [NM_OP_IMUL] = SPECIAL(P_NP, 0),        /* same */
    [NM_OP_IMUL2] = SPECIAL(P_NP, F_DST_G), /* r16,r/m16 11, r32,r/m32 9 */
    [NM_OP_IMUL3] = SPECIAL(P_NP, F_DST_G), /* same */
    [NM_OP_DIV] = SPECIAL(P_NP, 0),         /* 17 / 25 / 41 */
    [NM_OP_IDIV] = SPECIAL(P_NP, 0),        /* 22 / 30 / 46 */
    /* decimal [IT] */
    [NM_OP_DAA] = ROW(P_NP, 3, 3, 3, 0),
    [NM_OP_DAS] = ROW(P_NP, 3, 3, 3, 0),
    [NM_OP_AAA] = ROW(P_NP, 3, 3, 3, 0),
    [NM_OP_AAS] = ROW(P_NP, 3, 3, 3, 0),
    [NM_OP_AAM] = ROW(P_NP, 18, 18, 18, 0),
    [NM_OP_AAD] = ROW(P_NP, 10, 10, 10, 0),
    [NM_OP_SALC] = ROW(P_NP, 2, 2, 2, 0), /* undocumented: as LAHF */
    /* bits [IT]: BT r,r/i 4, m,i 4, m,r 9; BTS/BTR/BTC r 7, m,i 8, m,r 13
     * [NG], [PIR] (IT: 14) */
    [NM_OP_BT] = SPECIAL(P_NP, 0),
    [NM_OP_BTS] = SPECIAL(P_NP, F_RMW),
    [NM_OP_BTR] = SPECIAL(P_NP, F_RMW),
    [NM_OP_BTC] = SPECIAL(P_NP, F_RMW),
    [NM_OP_BSF] = SPECIAL(P_NP, F_DST_G),  /* 6-34 [IT] */
    [NM_OP_BSR] = SPECIAL(P_NP, F_DST_G),  /* 7-39 [IT] */
    [NM_OP_SETCC] = ROW(P_NP, 1, 2, 2, 0), /* [IT] */
    /* control transfer: near direct JMP/CALL/Jcc 1 PV; indirect 2 NP; RET 2,
     * RET i 3 [IT]; far and interrupt rows [PDM] */
    [NM_OP_JCC] = ROW(P_PV, 1, 1, 1, 0),
    [NM_OP_JMP] = SPECIAL(P_PV, 0),
    [NM_OP_JMP_FAR] = SPECIAL(P_NP, 0),
    [NM_OP_CALL] = SPECIAL(P_PV, F_STACK),
    [NM_OP_CALL_FAR] = SPECIAL(P_NP, F_STACK),
    [NM_OP_RET] = SPECIAL(P_NP, F_STACK),
    [NM_OP_RET_FAR] = SPECIAL(P_NP, F_STACK),
    [NM_OP_IRET] = SPECIAL(P_NP, F_STACK),
    [NM_OP_INT] = SPECIAL(P_NP, F_STACK),
    [NM_OP_INT3] = SPECIAL(P_NP, F_STACK),
    [NM_OP_INTO] = SPECIAL(P_NP, F_STACK),
    [NM_OP_ICEBP] = SPECIAL(P_NP, F_STACK),
    [NM_OP_LOOP] = SPECIAL(P_NP, 0),       /* 6 taken / 5 not [NG] */
    [NM_OP_LOOPE] = SPECIAL(P_NP, 0),      /* 8 / 7 [NG] */
    [NM_OP_LOOPNE] = SPECIAL(P_NP, 0),     /* 8 / 7 [NG] */
    [NM_OP_JCXZ] = SPECIAL(P_NP, 0),       /* 6 taken / 5 not [NG] */
    [NM_OP_BOUND] = ROW(P_NP, 8, 8, 8, 0), /* in range [IT] */
    /* strings: MOVS 4, CMPS 5, SCAS 4, LODS 2, STOS 3; REP forms in
     * special_clocks() [IT], [PDM]; INS/OUTS by privilege [PDM] */
    [NM_OP_MOVS] = SPECIAL(P_NP, 0),
    [NM_OP_CMPS] = SPECIAL(P_NP, 0),
    [NM_OP_SCAS] = SPECIAL(P_NP, 0),
    [NM_OP_LODS] = SPECIAL(P_NP, 0),
    [NM_OP_STOS] = SPECIAL(P_NP, 0),
    [NM_OP_INS] = SPECIAL(P_NP, 0),
    [NM_OP_OUTS] = SPECIAL(P_NP, 0),
    /* I/O by privilege [PDM] */
    [NM_OP_IN] = SPECIAL(P_NP, 0),
    [NM_OP_OUT] = SPECIAL(P_NP, 0),
    /* flags and processor control [IT] */
    [NM_OP_NOP] = ROW(P_UV, 1, 1, 1, 0),
    [NM_OP_HLT] = ROW(P_NP, 1, 1, 1, 0), /* the halted time is the run loop's */
    [NM_OP_CLI] = ROW(P_NP, 7, 7, 7, 0), /* [PDM] */
    [NM_OP_STI] = ROW(P_NP, 7, 7, 7, 0), /* [PDM] */
    [NM_OP_CLC] = ROW(P_NP, 2, 2, 2, 0),
    [NM_OP_STC] = ROW(P_NP, 2, 2, 2, 0),
    [NM_OP_CMC] = ROW(P_NP, 2, 2, 2, 0),
    [NM_OP_CLD] = ROW(P_NP, 2, 2, 2, 0),
    [NM_OP_STD] = ROW(P_NP, 2, 2, 2, 0),
    [NM_OP_WAIT] = SPECIAL(P_NP, 0), /* and the x87's: x87cost.c */
    [NM_OP_ESC] = SPECIAL(P_NP, 0),
    /* clang-format off */
    [NM_OP_FLD ... NM_OP_FNOP_LEGACY] = SPECIAL(P_NP, 0),
    /* clang-format on */
    /* system [PDM] */
    [NM_OP_SLDT] = ROW(P_NP, 2, 2, 2, 0),
    [NM_OP_STR] = ROW(P_NP, 2, 2, 2, 0),
    [NM_OP_LLDT] = ROW(P_NP, 9, 9, 9, 0),
    [NM_OP_LTR] = ROW(P_NP, 10, 10, 10, 0),
    [NM_OP_VERR] = ROW(P_NP, 7, 7, 7, 0),
    [NM_OP_VERW] = ROW(P_NP, 7, 7, 7, 0),
    [NM_OP_SGDT] = ROW(P_NP, 4, 4, 4, 0),
    [NM_OP_SIDT] = ROW(P_NP, 4, 4, 4, 0),
    [NM_OP_LGDT] = ROW(P_NP, 6, 6, 6, 0),
    [NM_OP_LIDT] = ROW(P_NP, 6, 6, 6, 0),
    [NM_OP_SMSW] = ROW(P_NP, 4, 4, 4, 0),
    [NM_OP_LMSW] = ROW(P_NP, 8, 8, 8, 0),
    [NM_OP_INVLPG] = ROW(P_NP, 25, 25, 25, 0),
    [NM_OP_LAR] = ROW(P_NP, 8, 8, 8, F_DST_G),
    [NM_OP_LSL] = ROW(P_NP, 8, 8, 8, F_DST_G),
    [NM_OP_ARPL] = ROW(P_NP, 7, 7, 7, F_RMW),
    [NM_OP_CLTS] = ROW(P_NP, 10, 10, 10, 0),
    [NM_OP_INVD] = ROW(P_NP, 15, 15, 15, 0),
    [NM_OP_WBINVD] = SPECIAL(P_NP, 0), /* 2000 + the write-backs [PDM] */
    [NM_OP_CPUID] = ROW(P_NP, 14, 14, 14, 0),
    [NM_OP_RDTSC] = ROW(P_NP, 13, 13, 13, 0), /* [IT: 6-13] */
    [NM_OP_RDMSR] = ROW(P_NP, 20, 20, 20, 0), /* [IT: 20-24] */
    [NM_OP_WRMSR] = ROW(P_NP, 30, 30, 30, 0), /* [IT: 30-45] */
    [NM_OP_UD2] = ROW(P_NP, 1, 1, 1, 0),
};

/* Mispredicted branch: 3 clocks in U, 4 in V [MA, P1 branch prediction];
 * a Jcc then takes 4 / 5 in all [BB ch. 21].  A direct near JMP or CALL
 * takes 3 in either pipe [BB ch. 21]: 2 more than its row. */
#define MISPREDICT_U      3u
#define MISPREDICT_V      4u
#define MISPREDICT_UNCOND 2u
#define MISALIGN_CLOCKS   3u /* [MA] "misaligned data" on the P1 */
#define PREFIX_SHADOW_GROUPS                                                                       \
    3u                         /* issue groups a multi-clock group's shadow reaches [MA 4.4, BB]   \
                                */
#define P5_WRITE_BUFFERS 2     /* one per pipe [DB] */
#define LOG_CAP          4096u /* > 2 accesses x 1024 REP iterations per step */
#define BTB_SETS         64
#define BTB_WAYS         4
#define KEYED_BITS       12 /* p5.keyed: BTB entries by their key's bits 0-11 */
#define KEYED_MASK       ((1u << KEYED_BITS) - 1u)
#define P5_L1_SETS       128 /* 8 KB, 2 ways, 32-byte lines (p5_create): address bits 5-11 */
#define P5_L1_WAYS       2

/* -------------------------------------------------------------- state */

typedef nm_mem_record p5_access; /* (the interpreter appends to the log: p5_mem_log) */

typedef struct p5_btb {
    uint32_t tag[BTB_SETS][BTB_WAYS]; /* the key: a linear address (p5_group.key) */
    uint32_t target[BTB_SETS][BTB_WAYS];
    uint32_t stamp[BTB_SETS][BTB_WAYS]; /* LRU */
    /* 2-bit counter: >= 2 predicts taken; 0: no entry [AF97 12.1.1] */
    uint8_t state[BTB_SETS][BTB_WAYS];
    uint32_t clock;
} p5_btb;

/* The issue group the last instruction went into, as the BTB sees it
 * ("BTB" below). */
typedef struct p5_group {
    uint32_t u;   /* the linear address of its U instruction */
    uint32_t key; /* the U address of the group before: its BTB key */
    int8_t way;   /* the entry found at key, or -1 */
    bool pending; /* that entry predicts a transfer no instruction of the group has met yet */
    bool shadow;  /* the group before was flushed: no target was loaded for this one */
    bool flushed; /* this group was mispredicted: the next one is in its shadow */
} p5_group;

/* What the pairing rules need of an instruction. */
typedef struct p5_desc {
    /* The first 8 bytes are kept as they are per decoded instruction
     * (p5_static.d8): one copy per instruction. */
    uint8_t pair;
    bool rmw;        /* memory read-modify-write form */
    bool dispimm;    /* displacement and immediate: not pairable on the P5 [MA] */
    uint8_t stack;   /* 0, or ST_PUSH / ST_CALL / ST_POP for the ESP exemption */
    uint8_t rd, wr;  /* GPR masks (bit n = register n; eight registers) */
    uint8_t agi_wr;  /* registers whose write makes an AGI (implicit ESP updates excluded) */
    uint8_t addr;    /* registers used to form addresses */
    uint32_t clocks; /* table clocks, cache hits assumed */
} p5_desc;
_Static_assert(offsetof(p5_desc, clocks) == 8, "p5_static.d8");
/* As bits: 1 / 2 what a U instruction exempts (a PUSH, a POP), 4 / 8 what
 * a V instruction is exempted as (PUSH or CALL, POP): depends() ANDs them. */
enum { ST_NONE = 0, ST_PUSH = 1 | 4, ST_CALL = 4, ST_POP = 2 | 8 };

/* The issue state p5_issue reads and writes (but the open U instruction's
 * data address, p5.u_data): what the issue memo (p5_memo) keys on. */
typedef struct p5_pipe {
    p5_desc u;               /* the last instruction, alone in U */
    uint32_t u_exec;         /* its execution clocks (no decode or mispredict clocks) */
    uint32_t shadow;         /* prefix clocks the last multi-clock group can hide */
    uint8_t shadow_groups;   /* for this many more groups */
    bool u_open;             /* it may take a V partner */
    bool u_agi;              /* it already paid an AGI stall */
    bool u_has_data;         /* it accessed data (bank conflicts) */
    uint8_t last_agi_wr;     /* registers written by the previous issue group */
    uint8_t before_u_agi_wr; /* ... by the group before the open U */
    uint8_t zero[2];         /* (no padding: states are compared bytewise) */
} p5_pipe;
_Static_assert(sizeof(p5_pipe) == 28, "p5_pipe has no padding");

/* The issue memo: per decoded instruction (a slot by its place in the
 * decoded-instruction cache), the outcome of its last issue with nothing
 * dynamic in it (PS_PLAIN, no stall, no code miss, no misprediction, no
 * bank conflict): from the issue state named by entry_tok, the state
 * exit_tok names (exit), the clocks and the counters' steps.  A token
 * names one issue state for good (p5.tok: the state's, 0 when it has
 * none), so an instruction whose entry token is p5.tok would get exactly
 * that outcome again: a loop's instructions, once their states repeat,
 * are issued by a copy.  The counters are added for all its uses (hits)
 * when the slot is rewritten and when the counters are read
 * (p5_memo_fold). */
typedef struct p5_memo {
    uint64_t hits;  /* uses not yet in the counters */
    uint32_t owner; /* the instruction's offset in the decoded-instruction cache + 1; 0: free */
    uint32_t entry_tok, exit_tok;
    /* bit 0: the outcome of an issue with a data access (else without);
     * the rest: p5.code_epoch when its code was within the code page memo
     * (in_code_memo), else 0 */
    uint32_t code_key;
    p5_pipe exit;
    uint8_t bank_check; /* it paired in V with data after a U with data: no bank conflict then */
    uint8_t in_v;       /* it went to V */
    uint8_t cost, clocks, pair_saved, rmw_pair, agi, pfx_shadowed, pfx_cycles;
    uint8_t line2; /* its code goes on into a second line (p5_static.line2) */
} p5_memo;
_Static_assert(sizeof(p5_memo) == 64, "a memo slot in a host cache line");
#define P5_MEMO_BITS 16
#define P5_MEMO_SIZE (1u << P5_MEMO_BITS)
/* Slots per set: an instruction's outcomes from its last few states (a
 * loop whose stalls repeat every few iterations enters it in as many),
 * the most recent first. */
#define P5_MEMO_WAYS         4u
#define MEMO_WINDOW          1024u
#define MEMO_HITS_PER_RECORD 4u
#define MEMO_REST            (1024u * 1024u) /* guest instructions */

/* The stretch memo: for a straight line of PS_REGONLY instructions
 * (plain, no branch, no memory access, no fault), the outcome of issuing
 * all of them from the state named entry_tok, made from their issue memo
 * slots (which each gave the outcome from the state the one before left):
 * the run loop runs them and the model applies it at once (p5_ahead).
 * Valid while the page's decoded instructions are those it was made from
 * (tag and the icache's page generation) and the code page memo is the
 * one they were in (code_key). */
#define P5_STRETCH_KEYS 31 /* groups in a stretch but its last: at most */
typedef struct p5_stretch {
    uint64_t hits;  /* uses not yet in the counters */
    uint32_t owner; /* the first instruction's, as p5_memo.owner */
    uint32_t entry_tok, exit_tok;
    uint32_t code_key; /* p5.code_epoch << 1 when made */
    uint64_t tag;      /* the first instruction's icache tag */
    uint32_t gen;      /* the generation of its page in the icache */
    uint16_t n, bytes; /* instructions, and their code bytes */
    /* the sums of its instructions' memo slots: clocks added, in V, and
     * the counters' steps */
    uint16_t cost, clocks, v_n, pair_saved, rmw_pair, agi, pfx_shadowed, pfx_cycles;
    uint16_t line2; /* instructions whose code goes on into a second line */
    p5_pipe exit;
    /* What the BTB needs ("BTB", p5_ahead): the issue groups it starts
     * (its instructions that go to U), the byte offsets of its last
     * group's U instruction and of the U instructions of the others (the
     * keys of the groups after them). */
    uint8_t groups;
    bool first_u; /* its first instruction starts a group */
    uint16_t last_u;
    uint16_t keys[P5_STRETCH_KEYS];
    /* p5.btb_allocs when its groups' keys but the first and last were
     * last found without an entry (p5_ahead: only an allocation can add
     * one; 0: not yet) */
    uint64_t keys_clear_at;
} p5_stretch;
#define P5_STRETCH_BITS 14
#define P5_STRETCH_SIZE (1u << P5_STRETCH_BITS)
#define P5_STRETCH_WAYS 4u

/* The names given to issue states (pipe_name): a state's slot by a hash. */
typedef struct p5_name {
    uint32_t tok; /* 0: none */
    p5_pipe pipe;
} p5_name;
#define P5_NAMES_BITS 12
#define P5_NAMES_SIZE (1u << P5_NAMES_BITS)

typedef struct p5 {
    nm_cpu *cpu;
    const nm_cpu_model *model;
    nm_memmap *mem;
    nm_cache *code, *data;
    nm_membus bus;
    nm_wbuf wbuf;
    uint32_t fill_clocks, single_clocks; /* core clocks, DRAM (report) */
    nm_board board;                      /* L2 and DRAM (membus.h) */

    /* this instruction (filled by mem / branch; its accesses: log, at the
     * end) */
    /* What the other hooks noted since the last insn hook: nothing for
     * most instructions, which p5_insn sees in one test (`any`). */
    union p5_ev {
        struct {
            uint32_t pending; /* clocks of events between instructions (interrupt delivery,
                                 log overflow) */
            uint16_t nlog;    /* accesses in the log (LOG_CAP at most) */
            bool br_seen;
            bool mode_stale; /* an interrupt or exception came since: p5_insn makes it again */
        };
        uint64_t any;
    } ev;
    bool br_taken;
    uint32_t br_to;
    /* The causes of the stalls not yet charged (pending and this
     * instruction's), folded into st.c_* when the bill is settled. */
    uint32_t part_code, part_data, part_wbuf, part_mis, part_int;

    /* the pipeline (p5_issue), and its token (the issue memo, below) */
    p5_pipe pipe;
    uint32_t tok;
    uint32_t u_data; /* the open U instruction's first data address (bank conflicts) */
    bool rep_active; /* a REP string stopped at its budget and restarts */
    uint32_t rep_eip;
    nm_x86_mode mode; /* mode after the last instruction */

    p5_btb btb;
    p5_group grp;
    uint32_t btb_pen;                 /* the BTB's clocks of the last p5_issue */
    uint64_t btb_allocs;              /* entries made, from 1 (p5_stretch.keys_clear_at) */
    uint16_t keyed[1u << KEYED_BITS]; /* BTB entries by their key's low bits ("BTB") */
    /* The TLBs (tlb.h): code 32 entries; data 64 4 KB entries and 8 4 MB
     * entries.  tlb_cr3/paging/pse: what they were filled under. */
    nm_tlb code_tlb, data_tlb;
    uint32_t tlb_cr3;
    bool tlb_paging, tlb_pse;
    uint32_t part_tlb;
    /* Per set of the code cache, its most recently used line | 1 (0: not
     * known): a read of that line is a hit that changes nothing but the
     * counters (cache.h, nm_cache_head.mru).  Kept by read_line_slow (the
     * only reads of the code cache), cleared where lines go (snoops,
     * WBINVD). */
    uint32_t cmirror[P5_L1_SETS];
    /* The same for the data cache, | 2 when the line is known to be dirty
     * (a write hit there changes nothing but the counters too); kept by
     * read_line_slow and write_one, cleared by snoops and WBINVD. */
    uint32_t dmirror[P5_L1_SETS];
    /* The mirrors hold lines of cacheable RAM (they are set for no other)
     * of the memory map as it was at map_gen mirror_gen: while the map's
     * generation is that (mirrors_fresh), a mirror's line is still
     * cacheable RAM without looking at its page.  Emptied when they would
     * be set under another (mirrors_renew). */
    const uint32_t *map_gen; /* &mem->map_gen */
    uint32_t mirror_gen;
    /* The code page memo: the linear page the last code access was in and
     * its physical page, while the code TLB's last entry is that page
     * (with paging on), the page is cacheable RAM and the caches are on.
     * An instruction within one line of that page, the line most recently
     * used in its set (cmirror), is then a code TLB hit and a code cache
     * hit that change nothing but the counters (p5_insn's fast path).  Set
     * by settle_code_at, cleared (cm_lpage 1) by whatever may change one
     * of those: a non-plain instruction, a snoop, an MMIO access. */
    uint32_t cm_lpage, cm_page;
    bool cm_paging;
    /* The code line memo: the linear address of the 32-byte line the last
     * instruction that passed in_code_memo's lookups lay in (wholly), 1:
     * none.  While nothing moves the code page memo or a set's most recent
     * line (code_memo_moved resets it), an instruction within that line,
     * fetched from the code page memo's physical page, passes them too:
     * in_code_memo answers it without them.  cl_off: not kept (tests). */
    uint32_t cl_lin;
    bool cl_off;
    uint32_t code_epoch; /* bumped when the code page memo or cmirror change (p5_memo) */
    /* Counted later (p5_fold): the code hits of the code page memo
     * (code_hits, the code cache's read hits and, with cm_paging, the code
     * TLB's), and of those the fast path's instructions (instructions);
     * lazy_line2: the second lines' code hits of those across two lines
     * (one TLB lookup each: settle_code_at). */
    uint64_t lazy_code, lazy_fast, lazy_line2;
    p5_memo *memo;          /* P5_MEMO_SIZE slots */
    p5_name *names;         /* P5_NAMES_SIZE */
    p5_stretch *stretch;    /* P5_STRETCH_SIZE */
    uint32_t stretch_turn;  /* the slot of a full set a new stretch takes, in turn */
    uint64_t stretch_insns; /* instructions run in stretches (of memo_hits) */
    /* data_alone: off (tests: run_log settles everything), and the misses
     * it settled */
    bool alone_off;
    uint64_t alone_misses;
    uint32_t next_tok; /* the last token made */
    uint32_t tok_epoch;
    uint32_t memo_turn; /* the slot of a full set a new outcome takes, in turn */
    /* The memo pays only when most issues find their outcome in it (a miss
     * costs the issue, the state's name and the record: about four hits'
     * savings, measured with callgrind).  Counted per window of
     * MEMO_WINDOW records: with fewer than MEMO_HITS_PER_RECORD hits a
     * record, it is off (no names, no records: p5.tok 0) for MEMO_REST
     * instructions (looked at with branches and the general path).  Counts
     * of guest instructions alone: deterministic, and the clocks are the
     * same either way. */
    bool memo_off;
    uint64_t memo_back_at;   /* cpu->instructions when it is on again (UINT64_MAX: on) */
    uint32_t window_records; /* records in this window */
    uint64_t memo_hits;      /* uses of a slot */
    uint64_t window_hits0;   /* memo_hits when this window began */
    const char *ic_base;     /* the decoded-instruction cache's first instruction (memo slots) */
    nm_p5_stats st;
    nm_x87_timing x87; /* the FPU's pipeline (x87cost.h) */
    /* the accesses the memory hook logged for run_log (in the state, not
     * behind a pointer: one load less on every access) */
    p5_access log[LOG_CAP];
} p5;

static void code_epoch_wrap(p5 *s);

/* The code page memo or a code cache set's most recent line changed: what
 * the issue memo knew of the code (p5_memo.code_key) is old. */
static inline void code_memo_moved(p5 *s)
{
    s->cl_lin = 1; /* (the code line memo stood on what moved) */
    if (unlikely(++s->code_epoch == 1u << 31)) code_epoch_wrap(s);
}
static inline void cm_set(p5 *s, uint32_t lpage, uint32_t page)
{
    if (s->cm_lpage != lpage || s->cm_page != page) code_memo_moved(s);
    s->cm_lpage = lpage;
    s->cm_page = page;
}

/* ---------------------------------------------------- operand analysis */

static inline uint32_t gbit(unsigned r, unsigned size)
{
    return 1u << (size == 1 ? (r & 3) : (r & 7));
}

static inline bool has_mem(const nm_insn *i)
{
    return i->dst == NM_OPK_MEM || i->src == NM_OPK_MEM;
}

/* Register reads and writes, address registers.  Precise for the
 * pairable instructions; for the others the writes (AGI) are what counts. */
static void operands(const nm_insn *i, const p5_row *row, p5_desc *d)
{
    unsigned sz = i->opsize;
    bool mem = has_mem(i);
    uint32_t E = i->mod == 3 ? gbit(i->rm, sz) : 0;
    uint32_t G = gbit(i->reg, sz);
    uint32_t rd = 0, wr = 0, impl_wr = 0;
    uint32_t addr = 0;
    if (mem && !(nm_op_flags(i->op) & NM_OPF_STRING) && i->op != NM_OP_XLAT) {
        if (i->base != NM_REG_NONE) addr |= 1u << i->base;
        if (i->index != NM_REG_NONE) addr |= 1u << i->index;
    }
    const uint32_t EAX = 1u << NM_EAX, ECX = 1u << NM_ECX, EDX = 1u << NM_EDX;
    const uint32_t EBX = 1u << NM_EBX, ESP = 1u << NM_ESP, EBP = 1u << NM_EBP;
    const uint32_t ESI = 1u << NM_ESI, EDI = 1u << NM_EDI;
    uint32_t rep_ecx = (i->prefixes & (NM_PFX_REP | NM_PFX_REPNE)) ? ECX : 0;

    switch (i->op) {
    case NM_OP_ADD:
    case NM_OP_OR:
    case NM_OP_ADC:
    case NM_OP_SBB:
    case NM_OP_AND:
    case NM_OP_SUB:
    case NM_OP_XOR:
    case NM_OP_CMP: {
        uint32_t dst;
        if (i->opcode < 0x40) {
            unsigned f = i->opcode & 7;
            if (f < 2) {
                dst = E;
                rd = E | G;
            } else if (f < 4) {
                dst = G;
                rd = G | E;
            } else {
                dst = EAX;
                rd = EAX;
            }
        } else {
            dst = E; /* 80-83: r/m, imm */
            rd = E;
        }
        if (i->op != NM_OP_CMP) wr = dst;
        break;
    }
    case NM_OP_TEST:
        rd = (i->opcode == 0xa8 || i->opcode == 0xa9) ? EAX
                                                      : E | ((i->opcode & 0xfe) == 0x84 ? G : 0);
        break;
    case NM_OP_INC:
    case NM_OP_DEC:
    case NM_OP_NEG:
    case NM_OP_NOT: rd = wr = E; break;
    case NM_OP_MOV:
        if ((i->opcode & 0xfc) == 0x88) {
            if (i->opcode & 2) {
                rd = E;
                wr = G;
            } else {
                rd = G;
                wr = E;
            }
        } else if (i->opcode == 0xa0 || i->opcode == 0xa1) {
            wr = EAX;
        } else if (i->opcode == 0xa2 || i->opcode == 0xa3) {
            rd = EAX;
        } else {
            wr = E; /* B0-BF, C6/C7 */
        }
        break;
    case NM_OP_LEA: wr = G; break;
    case NM_OP_PUSH:
        rd = i->src == NM_OPK_IMM ? 0 : E;
        impl_wr = ESP;
        addr |= ESP;
        break;
    case NM_OP_POP:
        wr = E;
        impl_wr = ESP;
        addr |= ESP;
        break;
    case NM_OP_XCHG: rd = wr = E | G; break;
    case NM_OP_ROL:
    case NM_OP_ROR:
    case NM_OP_RCL:
    case NM_OP_RCR:
    case NM_OP_SHL:
    case NM_OP_SHR:
    case NM_OP_SAR:
        rd = wr = E;
        if (i->src == NM_OPK_CL) rd |= ECX;
        break;
    case NM_OP_JMP: rd = i->src == NM_OPK_IMM ? 0 : E; break;
    case NM_OP_CALL:
        rd = i->src == NM_OPK_IMM ? 0 : E;
        impl_wr = ESP;
        addr |= ESP;
        break;
    case NM_OP_RET:
        impl_wr = ESP;
        addr |= ESP;
        /* RET imm adds to ESP: an AGI source like ADD ESP [MA 4.2]. */
        if (i->src == NM_OPK_IMM) wr = ESP;
        break;
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_DIV:
    case NM_OP_IDIV: wr = sz == 1 ? EAX : EAX | EDX; break;
    case NM_OP_CBW:
    case NM_OP_LAHF:
    case NM_OP_SALC:
    case NM_OP_DAA:
    case NM_OP_DAS:
    case NM_OP_AAA:
    case NM_OP_AAS:
    case NM_OP_AAM:
    case NM_OP_AAD: wr = EAX; break;
    case NM_OP_CWD: wr = EDX; break;
    case NM_OP_XLAT:
        wr = EAX;
        addr = EBX | EAX;
        break;
    case NM_OP_MOVS:
    case NM_OP_CMPS:
        wr = ESI | EDI | rep_ecx;
        addr = ESI | EDI;
        break;
    case NM_OP_LODS:
        wr = EAX | ESI | rep_ecx;
        addr = ESI;
        break;
    case NM_OP_OUTS:
        wr = ESI | rep_ecx;
        addr = ESI;
        break;
    case NM_OP_STOS:
    case NM_OP_SCAS:
    case NM_OP_INS:
        wr = EDI | rep_ecx;
        addr = EDI;
        break;
    case NM_OP_LOOP:
    case NM_OP_LOOPE:
    case NM_OP_LOOPNE: wr = ECX; break;
    case NM_OP_IN: wr = EAX; break;
    case NM_OP_POPA:
        wr = 0xffu & ~ESP;
        impl_wr = ESP;
        addr |= ESP;
        break;
    case NM_OP_ENTER:
    case NM_OP_LEAVE:
        wr = ESP | EBP;
        addr |= ESP | EBP;
        break;
    case NM_OP_CPUID: wr = EAX | EBX | ECX | EDX; break;
    case NM_OP_RDTSC:
    case NM_OP_RDMSR:
    case NM_OP_CMPXCHG8B: wr = EAX | EDX; break;
    case NM_OP_CMPXCHG: wr = EAX | E; break;
    case NM_OP_XADD: wr = E | G; break;
    default:
        if (i->dst == NM_OPK_REG) wr = (row->flags & F_DST_G) ? G : E;
        if (row->flags & F_STACK) {
            impl_wr = ESP;
            addr |= ESP;
        }
        break;
    }
    d->rd = rd | addr;
    d->wr = wr | impl_wr;
    d->agi_wr = wr;
    d->addr = addr;
    d->stack = i->op == NM_OP_PUSH && i->src != NM_OPK_MEM   ? ST_PUSH
               : i->op == NM_OP_CALL && i->src == NM_OPK_IMM ? ST_CALL
               : i->op == NM_OP_POP && i->dst == NM_OPK_REG  ? ST_POP
                                                             : ST_NONE;
}

/* Which operand form (table column) and whether it is read-modify-write. */
static inline unsigned form_of(const nm_insn *i)
{
    return nm_insn_form(i);
}

/* Clocks by privilege situation [PDM]: real, pm CPL<=IOPL, pm CPL>IOPL, v86.
 * OUT all four [NG]; IN real 7 [PIR]; the other I/O figures unchecked. */
static const uint8_t p5_in[4] = {7, 4, 21, 19};
static const uint8_t p5_out[4] = {12, 9, 26, 24};
static const uint8_t p5_ins[4] = {9, 6, 24, 22};
static const uint8_t p5_outs[4] = {13, 10, 24, 22};
/* INT n / INT 3 by transfer kind (nm_xfer_class) [PDM]: real, same
 * privilege, gate (same privilege), more privileged, from v86, task.
 * Real 16 / 13 and the protected range 27-82 [NG]; task 85 unchecked. */
static const uint8_t int_n[6] = {16, 31, 31, 48, 82, 85};
static const uint8_t int_3[6] = {13, 27, 27, 44, 56, 85};
/* IRET: real, same, -, outer, to v86, task [PDM]; 8 and 10-27 [NG]. */
static const uint8_t iret_c[6] = {8, 10, 10, 27, 27, 85};
/* Far CALL / JMP / RET [PDM]. */
static const uint8_t callf_c[6] = {4, 4, 13, 22, 22, 85};
static const uint8_t jmpf_c[6] = {3, 3, 18, 18, 18, 85};
static const uint8_t retf_c[6] = {4, 4, 4, 23, 23, 85};

/* REP strings: (clocks with ECX = 0, startup, per iteration) [IT], [PDM]. */
typedef struct {
    uint8_t zero, start, per;
} rep_row;
static rep_row rep_of(unsigned op)
{
    switch (op) {
    case NM_OP_MOVS: return (rep_row){6, 13, 1};
    case NM_OP_STOS: return (rep_row){6, 9, 1};
    case NM_OP_LODS: return (rep_row){7, 7, 3};
    case NM_OP_SCAS: return (rep_row){7, 9, 4};
    case NM_OP_CMPS: return (rep_row){7, 9, 4};
    case NM_OP_INS: return (rep_row){11, 11, 3};
    case NM_OP_OUTS: return (rep_row){13, 13, 4};
    default: return (rep_row){1, 1, 1};
    }
}

/* Accesses per iteration of a string instruction (the log's stride). */
static unsigned string_accesses(unsigned op)
{
    return op == NM_OP_MOVS || op == NM_OP_CMPS ? 2 : 1;
}

static unsigned bits_scanned(uint32_t result, unsigned bits, bool reverse)
{
    result &= bits - 1;
    return reverse ? bits - 1 - result : result;
}

/* The clocks of the rows marked SPECIAL, and the pairability refinements. */
static uint32_t special_clocks(p5 *s, nm_cpu *c, const nm_insn *i, p5_desc *d,
                               const nm_x86_mode *before, const nm_x86_mode *after, bool rep_cont)
{
    unsigned form = form_of(i);
    bool mem = form != NM_FORM_R;
    switch (i->op) {
    case NM_OP_TEST:
        /* TEST r,r / r,m / EAX,i pair; TEST r/m,i (F6/F7) does not [IT]. */
        if (i->opcode == 0xf6 || i->opcode == 0xf7) d->pair = P_NP;
        return mem ? 2 : 1;
    case NM_OP_MOV_TO_SREG: return before->pe && !before->vm86 ? 3 : 2;
    case NM_OP_MOV_TO_CR:
        switch (i->reg) {
        case 0: return 22;
        case 2: return 12;
        case 3: return 21;
        default: return 14;
        }
    case NM_OP_PUSH:
        if (i->src == NM_OPK_MEM) {
            d->pair = P_NP;
            return 2;
        }
        return 1;
    case NM_OP_POP:
        if (i->dst == NM_OPK_MEM) {
            d->pair = P_NP;
            return 3;
        }
        return 1;
    case NM_OP_PUSHF: return before->pe ? 3 : 9;
    case NM_OP_POPF: return before->pe ? 4 : 6;
    case NM_OP_XCHG:
        /* 90+r (XCHG eAX,r) 2; 86/87 r,r 3, with memory 3 [NG] */
        if (mem) return 3;
        return i->opcode >= 0x91 && i->opcode <= 0x97 ? 2 : 3;
    case NM_OP_SHLD:
    case NM_OP_SHRD: return mem && i->src == NM_OPK_CL ? 5 : 4;
    case NM_OP_ENTER: {
        unsigned l = i->imm2 & 31;
        return l == 0 ? 11 : l == 1 ? 15 : 15 + 2 * l;
    }
    case NM_OP_ROL:
    case NM_OP_ROR:
    case NM_OP_SHL:
    case NM_OP_SHR:
    case NM_OP_SAR:
        /* by 1 or imm: r 1, m 3 PU; by CL: r 4, m 4 NP [IT] */
        if (i->src == NM_OPK_CL) {
            d->pair = P_NP;
            return 4;
        }
        /* ROL/ROR by an immediate (C0/C1) do not pair: "SHIFT/ROT by 1
         * and SHIFT by imm may pair as the first instruction in a pair"
         * [DB] (read in the copy at gamedev.net, "Pentium Pairing Rules";
         * a rotate by imm is not in it), as GCC's Pentium scheduling
         * model has it [GCC]; the same clocks as by 1.  ([NG]'s ROR page
         * marks "reg, imm" PU.) */
        if ((i->op == NM_OP_ROL || i->op == NM_OP_ROR) && i->src == NM_OPK_IMM) d->pair = P_NP;
        return mem ? 3 : 1;
    case NM_OP_RCL:
    case NM_OP_RCR:
        /* by 1: r 1, m 3 PU; by imm: r 8, m 10; by CL: r 7, m 9 NP [IT] */
        if (i->src == NM_OPK_ONE) return mem ? 3 : 1;
        d->pair = P_NP;
        if (i->src == NM_OPK_CL) return mem ? 9 : 7;
        return mem ? 10 : 8;
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_IMUL2:
    case NM_OP_IMUL3: return i->opsize == 4 ? 9 : 11;
    case NM_OP_DIV: return i->opsize == 1 ? 17 : i->opsize == 2 ? 25 : 41;
    case NM_OP_IDIV: return i->opsize == 1 ? 22 : i->opsize == 2 ? 30 : 46;
    case NM_OP_BT:
        if (!mem) return 4;
        return i->src == NM_OPK_IMM ? 4 : 9;
    case NM_OP_BTS:
    case NM_OP_BTR:
    case NM_OP_BTC:
        if (!mem) return 7;
        return i->src == NM_OPK_IMM ? 8 : 13;
    case NM_OP_BSF:
    case NM_OP_BSR: {
        /* The range of [IT] spread linearly over the bits scanned (the
         * result register holds the index). */
        unsigned bits = 8u * i->opsize;
        unsigned n = bits_scanned(c->gpr[i->reg], bits, i->op == NM_OP_BSR);
        return i->op == NM_OP_BSF ? 6 + n * 28 / (bits - 1) : 7 + n * 32 / (bits - 1);
    }
    case NM_OP_JMP:
        if (i->src != NM_OPK_IMM) {
            d->pair = P_NP;
            return 2;
        }
        return 1;
    case NM_OP_CALL:
        if (i->src != NM_OPK_IMM) {
            d->pair = P_NP;
            return 2;
        }
        return 1;
    case NM_OP_RET: return i->src == NM_OPK_IMM ? 3 : 2;
    case NM_OP_JMP_FAR:
    case NM_OP_CALL_FAR: {
        /* Through a call gate: the gate's "13" / "18" rows [PDM]. */
        unsigned k = nm_far_xfer_class(nm_xfer_class(before, after), form, i, after);
        return i->op == NM_OP_CALL_FAR ? callf_c[k] : jmpf_c[k];
    }
    case NM_OP_RET_FAR: return retf_c[nm_xfer_class(before, after)];
    case NM_OP_IRET: return iret_c[nm_xfer_class(before, after)];
    case NM_OP_INT: return int_n[nm_xfer_class(before, after)];
    case NM_OP_INT3:
    case NM_OP_ICEBP: return int_3[nm_xfer_class(before, after)];
    case NM_OP_INTO: return s->ev.br_seen && s->br_taken ? int_3[nm_xfer_class(before, after)] : 4;
    case NM_OP_LOOP: return s->br_taken ? 6 : 5;
    case NM_OP_LOOPE:
    case NM_OP_LOOPNE: return s->br_taken ? 8 : 7;
    case NM_OP_JCXZ: return s->br_taken ? 6 : 5;
    case NM_OP_IN: return p5_in[nm_io_class(before)];
    case NM_OP_OUT: return p5_out[nm_io_class(before)];
    case NM_OP_MOVS:
    case NM_OP_CMPS:
    case NM_OP_SCAS:
    case NM_OP_LODS:
    case NM_OP_STOS:
    case NM_OP_INS:
    case NM_OP_OUTS: {
        unsigned io = nm_io_class(before);
        if (!(i->prefixes & (NM_PFX_REP | NM_PFX_REPNE))) {
            switch (i->op) {
            case NM_OP_MOVS: return 4;
            case NM_OP_CMPS: return 5;
            case NM_OP_SCAS: return 4;
            case NM_OP_LODS: return 2;
            case NM_OP_STOS: return 3;
            case NM_OP_INS: return p5_ins[io];
            default: return p5_outs[io];
            }
        }
        rep_row r = rep_of(i->op);
        uint32_t n = c->rep_iterations;
        uint32_t clocks = n * r.per;
        if (!rep_cont) {
            clocks += n ? r.start : r.zero;
            /* Port checks through the TSS / from v86: the single forms' extra [PDM]. */
            if (i->op == NM_OP_INS || i->op == NM_OP_OUTS) {
                const uint8_t *single = i->op == NM_OP_INS ? p5_ins : p5_outs;
                if (io >= NM_IO_PM_TSS) clocks += (uint32_t)(single[io] - single[NM_IO_PM_OK]);
            }
        }
        return clocks;
    }
    case NM_OP_WBINVD: {
        uint32_t dirty = nm_cache_writeback_invalidate(s->data);
        memset(s->dmirror, 0, sizeof s->dmirror);
        nm_cache_invalidate_all(s->code);
        memset(s->cmirror, 0, sizeof s->cmirror);
        code_memo_moved(s);
        uint64_t now = s->cpu->clock->cycles;
        uint32_t wb = s->board.l2 ? s->board.l2_fill : s->board.dram_fill;
        for (uint32_t k = 0; k < dirty; k++)
            nm_membus_use(&s->bus, now, wb);
        s->st.writebacks += dirty;
        uint64_t done = s->bus.free_at > now ? s->bus.free_at : now;
        return 2000 + (uint32_t)(done - now);
    }
    default: /* the FPU's pipeline (x87cost.c) */
        return nm_x87_costed(i->op) ? nm_x87_cost_p5(&s->x87, c, i, c->clock->cycles) : 1;
    }
}

/* The SPECIAL rows whose clocks and pairing special_clocks works out from
 * the decoded form alone (no mode, state, operand value or outcome): done
 * once per decoded instruction (static_of). */
static bool special_is_static(unsigned op)
{
    switch (op) {
    case NM_OP_TEST:
    case NM_OP_MOV_TO_CR:
    case NM_OP_PUSH:
    case NM_OP_POP:
    case NM_OP_XCHG:
    case NM_OP_SHLD:
    case NM_OP_SHRD:
    case NM_OP_ENTER:
    case NM_OP_ROL:
    case NM_OP_ROR:
    case NM_OP_SHL:
    case NM_OP_SHR:
    case NM_OP_SAR:
    case NM_OP_RCL:
    case NM_OP_RCR:
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_IMUL2:
    case NM_OP_IMUL3:
    case NM_OP_DIV:
    case NM_OP_IDIV:
    case NM_OP_BT:
    case NM_OP_BTS:
    case NM_OP_BTR:
    case NM_OP_BTC:
    case NM_OP_JMP:
    case NM_OP_CALL:
    case NM_OP_RET: return true;
    default: return false;
    }
}

/* --------------------------------------------------------------- memory */

static inline bool cacheable_region(const p5 *s, uint32_t phys, bool *mmio)
{
    const nm_mem_region *r = s->mem->page_region[phys >> NM_PAGE_SHIFT];
    *mmio = !r || r->kind == NM_REGION_MMIO;
    if (*mmio) return false;
    /* The legacy video window is not cacheable on PC chipsets (KEN#). */
    return phys < 0xa0000u || phys >= 0xc0000u;
}

static uint32_t read_line_slow(p5 *s, nm_cache *cache, uint32_t phys, uint64_t now, bool code);

/* The page of `phys` is cacheable RAM (cacheable_region's test), and also
 * the caches are on (the code page memo's test: settle_code_at). */
static inline __attribute__((always_inline)) bool page_cacheable(const p5 *s, uint32_t phys)
{
    const nm_mem_region *r = s->mem->page_region[phys >> NM_PAGE_SHIFT];
    return r && r->kind != NM_REGION_MMIO && (phys < 0xa0000u || phys >= 0xc0000u);
}
static inline __attribute__((always_inline)) bool page_cached(const p5 *s, uint32_t phys)
{
    return !(s->cpu->cr0 & NM_CR0_CD) && page_cacheable(s, phys);
}

/* The mirrors' lines are still cacheable RAM (p5.mirror_gen); with the
 * caches on (mirrors_cached) a read of a mirror's line is a hit that
 * read_line_slow would count and nothing else. */
static inline __attribute__((always_inline)) bool mirrors_fresh(const p5 *s)
{
    return *s->map_gen == s->mirror_gen;
}
static inline __attribute__((always_inline)) bool mirrors_cached(const p5 *s)
{
    return !(s->cpu->cr0 & NM_CR0_CD) && mirrors_fresh(s);
}
/* Before a mirror is set: emptied if made under another memory map. */
static __attribute__((noinline, cold)) void mirrors_renew(p5 *s)
{
    memset(s->cmirror, 0, sizeof s->cmirror);
    memset(s->dmirror, 0, sizeof s->dmirror);
    code_memo_moved(s);
    s->mirror_gen = *s->map_gen;
}
static inline __attribute__((always_inline)) void mirrors_check(p5 *s)
{
    if (unlikely(!mirrors_fresh(s))) mirrors_renew(s);
}

/* A data read of one line; returns the stall.  Inline: the data cache's
 * most recent line of its set (which includes the line it used last:
 * straight-line data, the stack). */
static inline uint32_t read_line(p5 *s, uint32_t phys, uint64_t now)
{
    if ((s->dmirror[(phys >> 5) & (P5_L1_SETS - 1)] | 2u) == ((phys & ~31u) | 3u) &&
        mirrors_cached(s)) {
        ((nm_cache_head *)(void *)s->data)->stats.read_hits++;
        s->st.data_hits++;
        return 0;
    }
    return read_line_slow(s, s->data, phys, now, false);
}

static uint32_t read_line_slow(p5 *s, nm_cache *cache, uint32_t phys, uint64_t now, bool code)
{
    mirrors_check(s);
    bool mmio;
    bool cacheable = cacheable_region(s, phys, &mmio);
    if (mmio) {
        cm_set(s, 1, s->cm_page); /* a device ran: the memory map may have changed */
        return 0;                 /* the bus model charges MMIO */
    }
    bool cd = (s->cpu->cr0 & NM_CR0_CD) != 0;
    if (cacheable && (!cd || nm_cache_probe(cache, phys))) {
        uint32_t victim;
        unsigned r = nm_cache_access(cache, phys, false, &victim);
        /* a hit or a fill: now the most recent of its set (a dirty one
         * hit stays known as dirty) */
        uint32_t set = (phys >> 5) & (P5_L1_SETS - 1), tag = (phys & ~31u) | 1u;
        if (code) {
            if (s->cmirror[set] != tag) code_memo_moved(s);
            s->cmirror[set] = tag;
        } else if ((s->dmirror[set] & ~2u) != tag)
            s->dmirror[set] = tag;
        if (r & NM_CACHE_HIT) {
            if (code)
                s->st.code_hits++;
            else
                s->st.data_hits++;
            return 0;
        }
        if (code)
            s->st.code_misses++;
        else
            s->st.data_misses++;
        /* Burst line fill: reads do not pass buffered writes (strong
         * ordering), so it starts when the bus is free [DB]. */
        uint64_t done = nm_membus_use(
            &s->bus, now, nm_board_line_read(&s->board, phys, nm_membus_start(&s->bus, now)));
        s->st.line_fills++;
        if (r & NM_CACHE_WRITEBACK) {
            /* The victim goes out through the write-back buffer after the fill. */
            nm_membus_use(&s->bus, done,
                          nm_board_line_write(&s->board, victim, nm_membus_start(&s->bus, done)));
            s->st.writebacks++;
        }
        s->st.mem_stall_cycles += done - now;
        return (uint32_t)(done - now);
    }
    if (code)
        s->st.code_misses++;
    else
        s->st.data_misses++;
    s->st.uncached_reads++;
    uint64_t done = nm_membus_use(
        &s->bus, now,
        cacheable ? nm_board_single_read(&s->board, phys, nm_membus_start(&s->bus, now))
                  : s->board.dram_single);
    s->st.mem_stall_cycles += done - now;
    return (uint32_t)(done - now);
}

/* A write of one line's part (`bytes` from `phys`): a hit stays in the
 * write-back cache, a miss goes through the write buffers (no allocation)
 * [DB], one bus cycle per 64-bit data bus transfer: a part crossing a qword
 * boundary takes two (the P5 data bus is 8 bytes wide; byte enables select
 * within one transfer). */
static uint32_t write_one(p5 *s, uint32_t phys, uint64_t now);
static uint32_t write_line(p5 *s, uint32_t phys, unsigned bytes, uint64_t now)
{
    /* A hit in the data cache's most recent line of its set, known dirty:
     * write_one's hit changes nothing but the counters, and a part across
     * a qword finds the line present (no second bus cycle). */
    if (s->dmirror[(phys >> 5) & (P5_L1_SETS - 1)] == ((phys & ~31u) | 3u) && mirrors_fresh(s)) {
        ((nm_cache_head *)(void *)s->data)->stats.write_hits++;
        s->st.data_hits++;
        return 0;
    }
    uint32_t stall = write_one(s, phys, now);
    if ((phys & 7) + bytes > 8) {
        bool mmio;
        if (!cacheable_region(s, phys, &mmio) && mmio) return stall;
        if (nm_cache_probe(s->data, phys)) return stall; /* a hit: no bus cycle */
        s->st.split_writes++;
        stall += write_one(s, (phys | 7) + 1, now + stall);
    }
    return stall;
}

static inline __attribute__((always_inline)) uint32_t write_one_at(p5 *s, uint32_t phys,
                                                                   uint64_t now)
{
    mirrors_check(s);
    bool mmio;
    bool cacheable = cacheable_region(s, phys, &mmio);
    if (mmio) {
        cm_set(s, 1, s->cm_page); /* a device ran: the memory map may have changed */
        return 0;
    }
    if (cacheable && !nm_cache_write_absent(s->data, phys, P5_L1_WAYS) &&
        (nm_cache_access(s->data, phys, true, NULL) & NM_CACHE_HIT)) {
        /* the most recent of its set now, and dirty (write-back) */
        s->dmirror[(phys >> 5) & (P5_L1_SETS - 1)] = (phys & ~31u) | 3u;
        s->st.data_hits++;
        return 0;
    }
    if (cacheable) s->st.data_misses++;
    uint32_t stall =
        nm_wbuf_write(&s->wbuf, &s->bus, now,
                      cacheable ? nm_board_write(&s->board, phys, nm_membus_start(&s->bus, now))
                                : s->board.dram_single);
    s->st.wbuf_writes++;
    if (stall) {
        s->st.wbuf_stalls++;
        s->st.wbuf_stall_cycles += stall;
    }
    return stall;
}
static uint32_t write_one(p5 *s, uint32_t phys, uint64_t now)
{
    return write_one_at(s, phys, now);
}

/* A TLB miss at `now`: the PDE and PTE reads (one for a 4 MB page) of
 * the real page tables, through the data cache and the board like any
 * read.  No documented fixed miss overhead was found; each read is
 * charged the one clock of a data cache access plus what it waits for.
 * The A/D bit writes are the interpreter's page-walk writes, charged as
 * writes (it writes a bit only when it changes, as the chip does).
 * Returns the clocks. */
static uint32_t tlb_walk(p5 *s, nm_tlb *t, uint32_t lin, uint64_t now)
{
    uint32_t addr[2];
    bool big;
    unsigned n = nm_tlb_walk_addrs(s->cpu, lin, addr, &big);
    uint32_t w = 0;
    for (unsigned k = 0; k < n; k++) {
        s->st.tlb_walk_reads++;
        w += 1 + read_line(s, addr[k], now + w + 1);
    }
    nm_tlb_fill(t, lin, big);
    return w;
}

/* The TLB lookups of one access of `size` bytes at linear `lin` (each page
 * it touches); returns the walks' clocks. */
static uint32_t __attribute__((noinline))
tlb_access_slow(p5 *s, uint32_t lin, uint32_t size, bool code, uint64_t now)
{
    nm_tlb *t = code ? &s->code_tlb : &s->data_tlb;
    uint32_t last = lin + (size ? size - 1 : 0), w = 0;
    for (;;) {
        if (nm_tlb_lookup(t, lin)) {
            if (code)
                s->st.tlb_code_hits++;
            else
                s->st.tlb_data_hits++;
        } else {
            if (code)
                s->st.tlb_code_misses++;
            else
                s->st.tlb_data_misses++;
            w += tlb_walk(s, t, lin, now + w);
        }
        if (((lin ^ last) & 0xfffff000u) == 0) break;
        lin = last & 0xfffff000u;
    }
    s->part_tlb += w;
    return w;
}

/* ... the common case inline: one page, a hit on the 4 KB entry its set
 * used last (nm_tlb_lookup's first case: nothing changes but the counts
 * and the entry last used). */
static inline __attribute__((always_inline)) uint32_t tlb_access(p5 *s, uint32_t lin, uint32_t size,
                                                                 bool code, uint64_t now)
{
    nm_tlb *t = code ? &s->code_tlb : &s->data_tlb;
    const uint32_t tag = (lin & 0xfffff000u) | 1u;
    if (!nm_tlb_crosses_page(lin, size) && nm_tlb_small_set_mru(t, lin) == tag) {
        t->mru = tag;
        t->stats.hits++;
        if (code)
            s->st.tlb_code_hits++;
        else
            s->st.tlb_data_hits++;
        return 0;
    }
    return tlb_access_slow(s, lin, size, code, now);
}

/* After an instruction: MOV CR3 (any value), another CR3 (a task switch),
 * CR0.PG or CR4.PSE changing flush both TLBs; INVLPG drops the entry of
 * its page in each (Pentium Processor Family Developer's Manual vol. 3,
 * "translation lookaside buffers"; no global pages before the P6: the
 * PGE flag "introduced in the P6 family", SDM vol. 3, 19.22.1.2). */
static void tlb_after(p5 *s, const nm_insn *i)
{
    const nm_cpu *c = s->cpu;
    bool pse = (c->cr4 & NM_CR4_PSE) != 0;
    bool load_cr3 = i->op == NM_OP_MOV_TO_CR && i->reg == 3;
    if (load_cr3 || c->cr3 != s->tlb_cr3 || c->paging != s->tlb_paging || pse != s->tlb_pse) {
        nm_tlb_flush(&s->code_tlb);
        nm_tlb_flush(&s->data_tlb);
        s->tlb_cr3 = c->cr3;
        s->tlb_paging = c->paging;
        s->tlb_pse = pse;
    } else if (i->op == NM_OP_INVLPG) {
        nm_tlb_flush_page(&s->code_tlb, c->invlpg_lin);
        nm_tlb_flush_page(&s->data_tlb, c->invlpg_lin);
    }
}

/* Adds the lazy counts (p5.lazy_code) to the counters they stand for:
 * before cm_paging changes and before the counters are read. */
static void p5_fold(p5 *s)
{
    uint64_t n = s->lazy_code + s->lazy_fast;
    s->st.instructions += s->lazy_fast;
    s->st.code_hits += n + s->lazy_line2;
    ((nm_cache_head *)(void *)s->code)->stats.read_hits += n + s->lazy_line2;
    if (s->cm_paging) {
        s->code_tlb.stats.hits += n;
        s->st.tlb_code_hits += n;
    }
    s->lazy_code = s->lazy_fast = s->lazy_line2 = 0;
    s->st.pairs = s->st.v_issues;
}

/* One logged code access, settled `stall` clocks after t0 (its TLB lookup,
 * then its lines from the code cache); returns the new stall. */
static inline __attribute__((always_inline)) uint32_t
settle_code_at(p5 *s, uint32_t lin, uint32_t phys, unsigned size, bool walk, uint64_t t0,
               uint32_t stall, bool *code_miss)
{
    uint32_t first = phys & ~31u, last = (phys + size - 1) & ~31u;
    const bool paging = s->cpu->paging;
    if (paging && walk) stall += tlb_access(s, lin, size, true, t0 + stall);
    for (uint32_t line = first;; line += 32) {
        /* (a hit in the line most recent in its set: no miss, no wait, no
         * change but the counters) */
        if (s->cmirror[(line >> 5) & (P5_L1_SETS - 1)] == (line | 1u) && mirrors_cached(s)) {
            ((nm_cache_head *)(void *)s->code)->stats.read_hits++;
            s->st.code_hits++;
        } else {
            uint64_t before = s->st.code_misses;
            uint32_t w = read_line_slow(s, s->code, line, t0 + stall, true);
            stall += w;
            s->part_code += w;
            if (s->st.code_misses != before) *code_miss = true;
        }
        if (line == last) break;
    }
    /* The code page memo (p5.cm_lpage) */
    if (walk && (!paging || s->code_tlb.mru == ((lin & 0xfffff000u) | 1u)) &&
        page_cached(s, phys)) {
        cm_set(s, lin & 0xfffff000u, phys & 0xfffff000u);
        if (s->cm_paging != paging) {
            p5_fold(s);
            s->cm_paging = paging;
        }
    } else {
        cm_set(s, 1, s->cm_page);
    }
    return stall;
}

static inline uint32_t settle_code(p5 *s, const p5_access *a, uint64_t t0, uint32_t stall,
                                   bool *code_miss)
{
    return settle_code_at(s, a->lin, a->phys, a->size ? a->size : 1, !(a->flags & NM_MEM_PAGEWALK),
                          t0, stall, code_miss);
}

/* Settles the logged accesses.  `per_iter` > 0 spreads a string's data
 * accesses over its iterations (`stride` accesses each). */
static uint32_t run_log(p5 *s, uint64_t t0, unsigned per_iter, unsigned stride, bool *code_miss,
                        bool *has_data, uint32_t *first_data)
{
    uint32_t stall = 0;
    unsigned data_idx = 0;
    const bool paging = s->cpu->paging;
    bool data = *has_data;
    const unsigned n = s->ev.nlog;
    for (unsigned k = 0; k < n; k++) {
        const p5_access *a = &s->log[k];
        const unsigned flags = a->flags;
        if (flags & NM_MEM_CODE) {
            stall = settle_code(s, a, t0, stall, code_miss);
            continue;
        }
        const uint32_t phys = a->phys, size = a->size ? a->size : 1;
        /* (a string's: its iteration's start) */
        const uint64_t base = t0 + (per_iter ? (uint64_t)(data_idx / stride) * per_iter : 0);
        data_idx++;
        if (paging && !(flags & NM_MEM_PAGEWALK))
            stall += tlb_access(s, a->lin, size, false, base + stall);
        uint64_t now = base + stall;
        if (!data) {
            data = true;
            *first_data = phys;
        }
        /* Misaligned: a word across a dword boundary, a dword not on one [MA]. */
        if ((size == 2 && (phys & 3) == 3) || (size == 4 && (phys & 3))) {
            stall += MISALIGN_CLOCKS;
            s->part_mis += MISALIGN_CLOCKS;
            now += MISALIGN_CLOCKS;
            s->st.misaligned++;
        }
        const uint32_t first = phys & ~31u, last = (phys + size - 1) & ~31u;
        for (uint32_t line = first;; line += 32) {
            const uint32_t addr = line == first ? phys : line;
            uint32_t w;
            if (flags & NM_MEM_WRITE) {
                const uint32_t end = phys + size, part = (end > line + 32 ? line + 32 : end) - addr;
                w = write_line(s, addr, part, now);
                s->part_wbuf += w;
            } else {
                w = read_line(s, addr, now);
                s->part_data += w;
            }
            stall += w;
            now += w;
            if (line == last) break;
        }
    }
    *has_data = data;
    s->ev.nlog = 0;
    return stall;
}

/* ------------------------------------------------------------------ BTB */

/* The P5's BTB predicts issue groups (a pair, or an instruction alone in
 * U), not instructions [AF97 12.1.2-12.1.3]:
 *
 *   - "The BTB entry for any control transfer instruction is attached to
 *     the address of the U-pipe instruction of the preceding instruction
 *     pair": a group's key is the U address of the group before it
 *     (p5_group.key); an entry found there in state 2 or 3 loads its
 *     target before the group is decoded;
 *   - a group with such a prediction and no control transfer was
 *     "predicted to jump": 3 clocks, and the entry is decremented
 *     (misapply);
 *   - "When a jump is mispredicted, the pipeline is flushed.  If the next
 *     instruction pair executed also contains a control transfer
 *     instruction, the PPlain does not load its target ... predicted to
 *     fall through regardless of the state of its BTB entry"; the entry is
 *     still updated (p5_group.shadow).  A chain of jumping groups after a
 *     misprediction mispredicts every group; "the most extreme case of
 *     this is a loop that jumps to itself: it gets a misprediction penalty
 *     on every iteration" (the Linux 1.x/2.0 delay loop, DEC + JNS: 5
 *     clocks an iteration, BogoMIPS = 0.40 x MHz [HOWTO]);
 *   - state 0 is no entry: a taken transfer without one gets a new entry
 *     in state 3, a fall-through from state 1 frees it [AF97 12.1.1].
 * Inferred, not stated by a source (docs/cost-models.md): a misapplied
 * prediction flushes like a misprediction (its next group is in the
 * shadow), and so do far transfers, INT/IRET and delivered interrupts.
 * Not modelled: Agner's pseudo-random replacement (LRU here), the tight
 * loops' 0 -> 1 step [AF97 12.1.5], no entry on a first execution that
 * missed a pairing.
 *
 * p5.keyed counts the entries by the low bits of their key, so that a
 * group whose key has none is known at one load (most groups). */
#define MISAPPLIED_CLOCKS 3u /* [AF97 12.1.3] "predicting non-jumping instructions to jump" */

/* How an instruction takes part (p5_insn works it out). */
enum {
    BK_NONE = 0, /* no control transfer */
    BK_JUMP,     /* a near transfer the BTB predicts: Jcc, RET, LOOPcc, JCXZ, JMP/CALL r/m */
    BK_DIRECT,   /* a direct near JMP or CALL (PS_DIRECT_UNCOND) */
    BK_FLUSH,    /* a far transfer, INT, IRET: the BTB is not asked, the pipeline flushed */
    BK_HALT,     /* HLT: its group's prediction dropped */
};

static inline unsigned btb_set(uint32_t key)
{
    return key & (BTB_SETS - 1);
}

/* The way of the entry keyed `key`, or -1. */
static int btb_find(const p5 *s, uint32_t key)
{
    const p5_btb *b = &s->btb;
    const unsigned set = btb_set(key);
    for (unsigned w = 0; w < BTB_WAYS; w++)
        if (b->tag[set][w] == key && b->state[set][w]) return (int)w;
    return -1;
}

static void btb_free(p5 *s, unsigned set, unsigned w)
{
    p5_btb *b = &s->btb;
    s->keyed[b->tag[set][w] & KEYED_MASK]--;
    b->state[set][w] = 0;
}

/* A taken transfer with no entry at `key`: one in state 3 (the least
 * recently used way of the set). */
static void btb_alloc(p5 *s, uint32_t key, uint32_t to)
{
    p5_btb *b = &s->btb;
    const unsigned set = btb_set(key);
    unsigned victim = 0;
    for (unsigned w = 0; w < BTB_WAYS; w++) {
        if (!b->state[set][w]) {
            victim = w;
            break;
        }
        if (b->stamp[set][w] < b->stamp[set][victim]) victim = w;
    }
    if (b->state[set][victim]) btb_free(s, set, victim);
    b->tag[set][victim] = key;
    b->target[set][victim] = to;
    b->state[set][victim] = 3;
    b->stamp[set][victim] = b->clock;
    s->keyed[key & KEYED_MASK]++;
    s->btb_allocs++;
}

/* The group's prediction met no control transfer: the entry is
 * decremented (from 2 or 3: it stays); 3 clocks unless no target was
 * loaded (the shadow).  Returns the clocks. */
static uint32_t misapply(p5 *s, p5_group *g)
{
    p5_btb *b = &s->btb;
    const unsigned set = btb_set(g->key);
    b->state[set][g->way]--;
    g->pending = false;
    s->st.btb_misapplied++;
    if (g->shadow) return 0;
    s->st.btb_misapplied_cycles += MISAPPLIED_CLOCKS;
    return MISAPPLIED_CLOCKS;
}

/* The group's control transfer (the branch hook's outcome in p5.br_*):
 * predicted by the entry found at its key unless in the shadow; the entry
 * updated, allocated or freed.  Returns the misprediction clocks. */
static uint32_t resolve(p5 *s, p5_group *g, bool in_v, unsigned bk)
{
    p5_btb *b = &s->btb;
    const bool taken = s->br_taken;
    const uint32_t to = s->br_to;
    const unsigned set = btb_set(g->key);
    b->clock++;
    s->st.branches++;
    bool predicted = false, wrong;
    if (g->way >= 0) {
        const unsigned w = (unsigned)g->way;
        s->st.btb_hits++;
        if (b->state[set][w] >= 2) {
            if (g->shadow)
                s->st.btb_shadowed++;
            else
                predicted = true;
        }
        wrong = predicted != taken || (taken && b->target[set][w] != to);
        b->stamp[set][w] = b->clock;
        if (taken) {
            if (b->state[set][w] < 3) b->state[set][w]++;
            b->target[set][w] = to;
        } else if (--b->state[set][w] == 0) {
            btb_free(s, set, w);
        }
    } else {
        s->st.btb_misses++;
        wrong = taken; /* predicted to fall through */
        if (taken) btb_alloc(s, g->key, to);
    }
    g->pending = false;
    if (!wrong) return 0;
    const uint32_t mp = bk == BK_DIRECT ? MISPREDICT_UNCOND : in_v ? MISPREDICT_V : MISPREDICT_U;
    s->st.mispredicts++;
    s->st.mispredict_cycles += mp;
    g->flushed = true;
    return mp;
}

/* An issue's part in the BTB (in_v: it went to V, joining the open
 * group; else it starts a group): returns the clocks it adds, counted. */
static __attribute__((noinline)) uint32_t btb_issue(p5 *s, uint32_t lin, bool in_v, unsigned bk)
{
    p5_group *g = &s->grp;
    uint32_t pen = 0;
    if (!in_v) {
        /* The group before closes; this one is looked up with its U. */
        bool shadow = g->flushed;
        if (g->pending) {
            uint32_t m = misapply(s, g);
            pen += m;
            if (m) shadow = true;
        }
        g->key = g->u;
        g->u = lin;
        g->shadow = shadow;
        g->flushed = false;
        g->way = s->keyed[g->key & KEYED_MASK] ? (int8_t)btb_find(s, g->key) : -1;
        g->pending = g->way >= 0 && s->btb.state[btb_set(g->key)][g->way] >= 2;
    }
    /* (a group closed by a V instruction without a transfer pays its
     * misapplied prediction when the next one starts: above) */
    if (bk == BK_JUMP || bk == BK_DIRECT) {
        pen += resolve(s, g, in_v, bk);
    } else if (bk == BK_FLUSH) {
        g->pending = false;
        g->flushed = true;
    } else if (bk == BK_HALT) {
        g->pending = false;
    }
    s->st.cycles += pen;
    s->st.c_mispredict += pen;
    return pen;
}

/* btb_issue, its common case inline: an instruction without a transfer
 * that joins a group without a prediction, or starts one whose key has no
 * entry. */
static inline __attribute__((always_inline)) uint32_t btb_after(p5 *s, uint32_t lin, bool in_v,
                                                                unsigned bk)
{
    p5_group *g = &s->grp;
    if (likely(bk == BK_NONE && !g->pending)) {
        if (in_v) return 0;
        if (likely(!s->keyed[g->u & KEYED_MASK])) {
            g->key = g->u;
            g->u = lin;
            g->shadow = g->flushed;
            g->flushed = false;
            g->way = -1;
            return 0;
        }
    } else if (bk == BK_JUMP || bk == BK_DIRECT) {
        /* resolve's two common outcomes: a transfer in V predicted right
         * by its group's entry, and one that starts a group whose key has
         * no entry and falls through */
        p5_btb *b = &s->btb;
        if (in_v) {
            const unsigned set = btb_set(g->key), w = (unsigned)g->way;
            if (g->way >= 0 && !g->shadow && s->br_taken && b->state[set][w] >= 2 &&
                b->target[set][w] == s->br_to) {
                b->clock++;
                s->st.branches++;
                s->st.btb_hits++;
                b->stamp[set][w] = b->clock;
                if (b->state[set][w] < 3) b->state[set][w]++;
                g->pending = false;
                return 0;
            }
        } else if (!g->pending) {
            const uint32_t key = g->u;
            const int way = s->keyed[key & KEYED_MASK] ? btb_find(s, key) : -1;
            const unsigned set = btb_set(key), w = (unsigned)way;
            if (way < 0 ? !s->br_taken
                        : !g->flushed && s->br_taken && b->state[set][w] >= 2 &&
                              b->target[set][w] == s->br_to) {
                g->key = key;
                g->u = lin;
                g->shadow = g->flushed;
                g->flushed = false;
                g->way = (int8_t)way;
                b->clock++;
                s->st.branches++;
                if (way < 0) {
                    s->st.btb_misses++;
                } else {
                    s->st.btb_hits++;
                    b->stamp[set][w] = b->clock;
                    if (b->state[set][w] < 3) b->state[set][w]++;
                }
                return 0;
            }
        }
    }
    return btb_issue(s, lin, in_v, bk);
}

static bool uses_btb(unsigned op)
{
    switch (op) {
    case NM_OP_JCC:
    case NM_OP_JMP:
    case NM_OP_CALL:
    case NM_OP_RET:
    case NM_OP_LOOP:
    case NM_OP_LOOPE:
    case NM_OP_LOOPNE:
    case NM_OP_JCXZ: return true;
    default: return false;
    }
}

/* ---------------------------------------------------------------- hooks */

static void log_overflow(p5 *s);
static uint32_t pipe_name(p5 *s);

/* Logs one access for run_log. */
static inline void log_access(p5 *s, uint32_t linear, uint32_t physical, unsigned size,
                              unsigned flags)
{
    if (unlikely(s->ev.nlog == LOG_CAP)) log_overflow(s);
    s->log[s->ev.nlog++] = (p5_access){physical, linear, (uint8_t)size, (uint8_t)flags};
}

static void p5_mem(void *opaque, uint32_t linear, uint32_t physical, unsigned size, unsigned flags)
{
    p5 *s = opaque;
    /* The interpreter's walk (its software TLB missed): not the chip's,
     * which run_log charges from the modelled TLBs.  Its A/D writes stay. */
    if ((flags & (NM_MEM_PAGEWALK | NM_MEM_WRITE)) == NM_MEM_PAGEWALK) {
        s->st.interp_walk_reads++;
        return;
    }
    log_access(s, linear, physical, size, flags);
}

/* The log the interpreter appends to itself: every access but its page
 * walk's, which still come to p5_mem (as does one that finds it full). */
static nm_mem_log p5_mem_log(void *opaque)
{
    p5 *s = opaque;
    return (nm_mem_log){s->log, &s->ev.nlog, LOG_CAP};
}

/* A full log (never with the REP budget of exec_string.c): settled at once. */
static void log_overflow(p5 *s)
{
    bool cm = false, hd = false;
    uint32_t fd = 0;
    s->ev.pending += run_log(s, s->cpu->clock->cycles + s->ev.pending, 0, 1, &cm, &hd, &fd);
    s->st.log_overflows++;
}

static void p5_branch(void *opaque, uint32_t from_eip, uint32_t to_eip, bool taken)
{
    (void)from_eip;
    p5 *s = opaque;
    s->ev.br_seen = true;
    s->br_taken = taken;
    s->br_to = to_eip;
}

static void p5_interrupt(void *opaque, unsigned vector, unsigned kind, uint32_t from_eip)
{
    (void)vector;
    (void)from_eip;
    p5 *s = opaque;
    if (kind == NM_INT_SOFTWARE || kind == NM_INT_SOFTWARE_ICEBP) return; /* INT n's own row */
    /* An exception or external interrupt: delivered like INT n, through an
     * interrupt gate to ring 0 (what the guests here use) [PDM]. */
    const nm_cpu *c = s->cpu;
    unsigned cls = !c->pe    ? NM_XFER_REAL
                   : c->vm86 ? NM_XFER_FROM_V86
                   : c->cpl  ? NM_XFER_PRIV
                             : NM_XFER_SAME;
    s->ev.pending += int_n[cls];
    s->part_int += int_n[cls];
    s->ev.mode_stale = true; /* the mode may change (p5_insn) */
    /* The pipeline is flushed (and so the BTB's next group gets no
     * prediction: "BTB", an inference). */
    s->pipe.u_open = false;
    s->grp.pending = false;
    s->grp.flushed = true;
    s->pipe.last_agi_wr = 0;
    if (!s->memo_off) s->tok = pipe_name(s); /* (else 0) */
}

static unsigned prefix_bytes(const nm_insn *i)
{
    unsigned n = nm_popcount8(i->prefixes & (NM_PFX_OPSIZE | NM_PFX_ADSIZE | NM_PFX_SEG |
                                             NM_PFX_LOCK | NM_PFX_REP | NM_PFX_REPNE));
    /* 0F is a prefix for the P5's decoder, except on a near Jcc [MA 4.4]. */
    if ((i->prefixes & NM_PFX_0F) && i->op != NM_OP_JCC) n++;
    return n;
}

static bool depends(const p5_desc *u, const p5_desc *v)
{
    uint32_t uw = u->wr, vr = v->rd, vw = v->wr;
    /* PUSH+PUSH, PUSH+CALL and POP+POP pair despite ESP [MA 4.1 rule 6]. */
    bool exempt = ((u->stack & 3u) & (v->stack >> 2)) != 0; /* PUSH+PUSH/CALL, POP+POP */
    if (exempt) {
        uint32_t esp = 1u << NM_ESP;
        uw &= ~esp;
        vr &= ~esp;
        vw &= ~esp;
    }
    /* RAW and WAW on registers, partial registers as whole ones; flags do
     * not count (two flag writers pair, CMP/TEST+Jcc pair) [MA 4.1]. */
    return (uw & (vr | vw)) != 0;
}

/* What p5_insn needs of an instruction that depends on the decoded form
 * alone, worked out on its first run and kept in the decoded-instruction
 * cache with it (nm_insn.model_data, while model_tag is
 * NM_INSN_TAG_PENTIUM): the row (but for F_SPECIAL rows, which
 * special_clocks works out each time), the operands, the prefix bytes. */
#define PS_SPECIAL       0x001u
#define PS_RMW           0x002u
#define PS_DISPIMM       0x004u
#define PS_STRING        0x008u
#define PS_REP           0x010u /* a string with REP / REPNE */
#define PS_LOCKED        0x020u /* LOCK, or XCHG with memory: locked bus cycles */
#define PS_IO            0x040u /* IN, OUT, INS, OUTS: the write buffers drain */
#define PS_BTB           0x080u /* uses_btb */
#define PS_DIRECT_UNCOND 0x100u /* JMP / CALL rel */
#define PS_HLT           0x200u
#define PS_BRANCH        0x400u  /* NM_OPF_BRANCH */
#define PS_INT_ROW       0x800u  /* INT n, INT 3, INTO, ICEBP, IRET: booked as interrupts */
#define PS_PLAIN         0x1000u /* none of SPECIAL, STRING, LOCKED, IO, HLT, NM_SYNC_CHECK */
/* The pairing tests on the row and form alone (valid while the pair class
 * is the static one: PS_PLAIN instructions): */
#define PS_V_OK 0x2000u /* may go to V: UV or PV, no prefix, not disp+imm */
#define PS_OPENS_V                                                                                 \
    0x4000u /* alone in U may take a V partner: UV or PU, not disp+imm, no branch                  \
             */
#define PS_REGONLY                                                                                 \
    0x8000u /* plain, no branch, no memory access, cannot fault: may be in a stretch (p5_ahead) */
/* The instruction's part: its PS_* flags and the branch hook's note. */
static inline __attribute__((always_inline)) unsigned btb_kind(const p5 *s, unsigned sf)
{
    /* HLT: what its group's prediction loaded is never run (the CPU stops;
     * what runs next comes after an interrupt's flush) */
    if (sf & PS_HLT) return BK_HALT;
    if (!s->ev.br_seen) return BK_NONE;
    if (sf & PS_BTB) return (sf & PS_DIRECT_UNCOND) ? BK_DIRECT : BK_JUMP;
    return (sf & PS_BRANCH) && s->br_taken ? BK_FLUSH : BK_NONE;
}
/* ... of a PS_PLAIN instruction (never HLT: static_of). */
static inline __attribute__((always_inline)) unsigned plain_btb_kind(const p5 *s, unsigned sf)
{
    if (!s->ev.br_seen) return BK_NONE;
    if (sf & PS_BTB) return (sf & PS_DIRECT_UNCOND) ? BK_DIRECT : BK_JUMP;
    return (sf & PS_BRANCH) && s->br_taken ? BK_FLUSH : BK_NONE;
}

typedef struct p5_static {
    /* PS_* (bytes: model_data is not aligned); flags_hi first, next to
     * nm_insn.model_tag: p5_insn tests the tag and PS_PLAIN together */
    uint8_t flags_hi, flags_lo;
    uint8_t d8[8];  /* p5_desc up to its clocks: the row's pair class, operands() */
    uint8_t clocks; /* the row's */
    uint8_t pfx;    /* prefix_bytes */
    uint8_t line2;  /* 1: its code goes on into a second 32-byte line */
} p5_static;
_Static_assert(offsetof(nm_insn, model_data) == offsetof(nm_insn, model_tag) + 1, "p5_insn");
_Static_assert(sizeof(p5_static) <= sizeof(((nm_insn *)0)->model_data), "model_data");
_Static_assert(_Alignof(p5_static) == 1, "model_data has no alignment");

/* The PS_* flags and the pairing record of a p5_static. */
static inline __attribute__((always_inline)) unsigned static_flags(const p5_static *st)
{
    return st->flags_lo | (unsigned)st->flags_hi << 8;
}
static inline __attribute__((always_inline)) p5_desc static_desc(const p5_static *st)
{
    p5_desc d;
    memcpy(&d, st->d8, sizeof st->d8);
    d.clocks = st->clocks;
    return d;
}

/* Books the row and the stalls charged with it by cause (the breakdown
 * in the report; mispredictions, AGI, prefixes, bank conflicts, locked
 * and I/O-drain clocks are booked where they are charged). */
static inline __attribute__((always_inline)) void account(p5 *s, unsigned sf, uint32_t row,
                                                          uint32_t stall, const bool plain)
{
    nm_p5_stats *t = &s->st;
    /* (a PS_PLAIN instruction is neither: I/O is not plain, the INT rows
     * are F_SPECIAL ones worked out each time) */
    if (!plain && (sf & PS_IO))
        t->c_io += row;
    else if (!plain && (sf & PS_INT_ROW))
        t->c_int += row;
    else
        t->c_table += row;
    /* Every part went into the instruction's stall (with the pending
     * clocks): none without one (most instructions). */
    if (!stall) return;
    t->c_int += s->part_int;
    t->c_code_fill += s->part_code;
    t->c_data_fill += s->part_data;
    t->c_wbuf += s->part_wbuf;
    t->c_misaligned += s->part_mis;
    t->c_tlb += s->part_tlb;
    s->part_int = s->part_code = s->part_data = s->part_wbuf = s->part_mis = s->part_tlb = 0;
}

static void memo_forget(p5 *s, const nm_insn *i);

static const p5_static *static_of(p5 *s, const nm_insn *ci)
{
    nm_insn *i = (nm_insn *)ci; /* the cached instruction: model_data is ours */
    p5_static *st = (p5_static *)(void *)i->model_data;
    if (likely(i->model_tag == NM_INSN_TAG_PENTIUM)) return st;
    memo_forget(s, i); /* (a new instruction in its place) */
    const p5_row *row = &rows[i->op < NM_OP_COUNT ? i->op : 0];
    unsigned opf = nm_op_flags(i->op);
    bool is_string = (opf & NM_OPF_STRING) != 0;
    unsigned form = form_of(i);
    p5_desc d = {.pair = row->pair};
    operands(i, row, &d);
    unsigned f = 0;
    uint8_t pair = row->pair, clocks = row->clk[form];
    if (row->flags & F_SPECIAL) {
        if (special_is_static(i->op)) {
            /* special_clocks reads nothing but the decoded form for these */
            p5_desc sd = {.pair = row->pair};
            clocks = (uint8_t)special_clocks(NULL, NULL, i, &sd, NULL, NULL, false);
            pair = sd.pair;
        } else {
            f |= PS_SPECIAL;
        }
    }
    if (form == NM_FORM_MEM && (row->flags & F_RMW)) f |= PS_RMW;
    if (form != NM_FORM_R && !is_string) {
        bool disp = i->mod == 1 || i->mod == 2 || i->base == NM_REG_NONE;
        if (disp && i->src == NM_OPK_IMM) f |= PS_DISPIMM;
    }
    if (is_string) f |= PS_STRING;
    if (is_string && (i->prefixes & (NM_PFX_REP | NM_PFX_REPNE))) f |= PS_REP;
    if ((i->prefixes & NM_PFX_LOCK) || (i->op == NM_OP_XCHG && form != NM_FORM_R)) f |= PS_LOCKED;
    if (i->op == NM_OP_IN || i->op == NM_OP_OUT || i->op == NM_OP_INS || i->op == NM_OP_OUTS)
        f |= PS_IO;
    if (uses_btb(i->op)) f |= PS_BTB;
    if ((i->op == NM_OP_JMP || i->op == NM_OP_CALL) && i->src == NM_OPK_IMM) f |= PS_DIRECT_UNCOND;
    if (i->op == NM_OP_HLT) f |= PS_HLT;
    if (opf & NM_OPF_BRANCH) f |= PS_BRANCH;
    if (i->op == NM_OP_INT || i->op == NM_OP_INT3 || i->op == NM_OP_INTO || i->op == NM_OP_ICEBP ||
        i->op == NM_OP_IRET)
        f |= PS_INT_ROW;
    if (!(f & (PS_SPECIAL | PS_STRING | PS_LOCKED | PS_IO | PS_HLT)) && !(i->sync & NM_SYNC_CHECK))
        f |= PS_PLAIN;
    if ((f & PS_PLAIN) && nm_insn_regonly(i)) f |= PS_REGONLY;
    unsigned pfx = prefix_bytes(i);
    if ((pair == P_UV || pair == P_PV) && pfx == 0 && !(f & PS_DISPIMM)) f |= PS_V_OK;
    if ((pair == P_UV || pair == P_PU) && !(f & PS_DISPIMM) && !(f & PS_BRANCH)) f |= PS_OPENS_V;
    p5_desc sd = {
        .pair = pair,
        .rmw = (f & PS_RMW) != 0,
        .dispimm = (f & PS_DISPIMM) != 0,
        .stack = d.stack,
        .rd = d.rd,
        .wr = d.wr,
        .agi_wr = d.agi_wr,
        .addr = d.addr,
    };
    /* The decoded-instruction cache holds an instruction at the index of
     * its physical address (icache_fetch_entry): its offset in a line is
     * the index's.  (Not for the uncacheable one past the end, which is
     * decoded again each time: a new instruction for this model, its
     * code settled by p5_insn_slow.) */
    const uint32_t at = (uint32_t)(((const char *)i - s->ic_base) / sizeof(ic_entry));
    *st = (p5_static){
        .clocks = clocks,
        .pfx = (uint8_t)pfx,
        .line2 = (uint8_t)((at & 31u) + i->len > 32u),
        .flags_lo = (uint8_t)f,
        .flags_hi = (uint8_t)(f >> 8),
    };
    memcpy(st->d8, &sd, sizeof st->d8);
    _Static_assert(PS_REGONLY < 0x10000u, "flags_lo and flags_hi");
    i->model_tag = NM_INSN_TAG_PENTIUM;
    return st;
}

static void memo_fold(p5 *s, p5_memo *m);
static void stretch_fold(p5 *s, p5_stretch *r);

/* Every name given: every memo and stretch slot and name is dropped (their
 * uses counted first) and the names start again (pipe_name). */
static __attribute__((noinline)) void names_wrap(p5 *s)
{
    for (uint32_t k = 0; k < P5_MEMO_SIZE; k++) {
        memo_fold(s, &s->memo[k]);
        s->memo[k].owner = 0;
    }
    for (uint32_t k = 0; k < P5_STRETCH_SIZE; k++) {
        stretch_fold(s, &s->stretch[k]);
        s->stretch[k].owner = 0;
    }
    memset(s->names, 0, P5_NAMES_SIZE * sizeof *s->names);
    s->next_tok = 0;
    s->tok_epoch++;
}

/* The name of the issue state (p5.pipe): the one it was given when last
 * seen, if the names table still holds it, else a new one.  A name is
 * never given to another state: after 2^32 - 1 of them every memo slot
 * and name is dropped (p5.tok_epoch counts those times). */
static __attribute__((noinline)) uint32_t pipe_name(p5 *s)
{
    /* What p5_issue can no longer read is cleared first, so that states
     * that differ only there get one name: the open U instruction's fields
     * with no open U (only a V partner reads them), the shadow with no
     * group left (the next U issue clears it). */
    p5_pipe *p = &s->pipe;
    if (!p->u_open) {
        p->u = (p5_desc){0};
        p->u_exec = 0;
        p->u_agi = p->u_has_data = false;
        p->before_u_agi_wr = 0;
    }
    if (!p->shadow_groups) p->shadow = 0;
    uint64_t w[3];
    uint32_t w3;
    memcpy(w, p, sizeof w);
    memcpy(&w3, (const char *)p + sizeof w, sizeof w3);
    _Static_assert(sizeof w + sizeof w3 == sizeof(p5_pipe), "pipe_name reads the whole state");
    const uint64_t h = (w[0] ^ (w[1] * 0x9e3779b97f4a7c15u) ^ (w[2] * 0xc2b2ae3d27d4eb4fu) ^ w3) *
                       0x165667b19e3779f9u;
    p5_name *n = &s->names[h >> (64 - P5_NAMES_BITS)];
    uint64_t v[3];
    uint32_t v3;
    memcpy(v, &n->pipe, sizeof v);
    memcpy(&v3, (const char *)&n->pipe + sizeof v, sizeof v3);
    if (n->tok && ((v[0] ^ w[0]) | (v[1] ^ w[1]) | (v[2] ^ w[2]) | (v3 ^ w3)) == 0) return n->tok;
    if (unlikely(s->next_tok == UINT32_MAX)) names_wrap(s);
    n->tok = ++s->next_tok;
    n->pipe = s->pipe;
    return n->tok;
}

/* Whether a U access at b and a V access at a of one pair meet in a data
 * cache bank (p5_issue): the same dword ("Two instructions cannot access
 * the same DWORD of memory simultaneously ... The pair takes 2 clock
 * cycles"), or the same bank, address bits 2-4 [AF, imperfect pairing,
 * rules 2 and 3]; "a bank conflict occurs when both instructions access
 * data from the same data-cache bank" [VT]. */
static inline bool bank_conflict(uint32_t a, uint32_t b)
{
    return ((a ^ b) & 0x1c) == 0;
}

/* The issue of an instruction whose memory, decode and branch outcome
 * are settled: U/V pairing, AGI, prefixes and their shadow, the counters.
 * `plain` as for p5_insn_body; p5_insn's fast path calls it with the
 * outcome of a code-cache hit and nothing else (no stall, no data, no
 * branch). */
static inline __attribute__((always_inline)) uint32_t
p5_issue(p5 *s, nm_cpu *c, const nm_insn *i, unsigned sf, unsigned pfx, p5_desc d, uint32_t stall,
         bool code_miss, bool has_data, uint32_t first_data, unsigned bk, const bool plain,
         bool is_string, bool is_rep, const bool lazy)
{
    bool v_ok =
        plain ? (sf & PS_V_OK) != 0 : (d.pair == P_UV || d.pair == P_PV) && pfx == 0 && !d.dispimm;
    bool pair = s->pipe.u_open && v_ok && !depends(&s->pipe.u, &d);
    uint32_t cost, exec;
    if (pair) {
        /* V pipe: the pair takes as long as its slower half, two more for
         * two read-modify-writes [DB]. */
        uint32_t group = d.clocks > s->pipe.u.clocks ? d.clocks : s->pipe.u.clocks;
        if (d.rmw && s->pipe.u.rmw) group += 2;
        uint32_t extra = group - s->pipe.u.clocks;
        uint32_t agi = (d.addr & s->pipe.before_u_agi_wr) && !s->pipe.u_agi ? 1 : 0;
        /* Both pipes to one cache bank: the V access waits a clock
         * (bank_conflict). */
        uint32_t bank = 0;
        if (has_data && s->pipe.u_has_data && bank_conflict(first_data, s->u_data)) {
            bank = 1;
            s->st.bank_conflicts++;
        }
        cost = extra + agi + bank + stall;
        exec = s->pipe.u_exec + cost; /* the whole group */
        if (agi) {
            s->st.agi_stalls++;
            s->st.c_agi++;
        }
        /* The V instruction's row, less what the pair overlaps (the
         * smaller of the two rows), plus the lockstep of two RMWs. */
        s->st.c_pair_saved += d.clocks < s->pipe.u.clocks ? d.clocks : s->pipe.u.clocks;
        if (d.rmw && s->pipe.u.rmw) s->st.c_rmw_pair += 2;
        s->st.c_bank += bank;
        s->pipe.last_agi_wr = s->pipe.u.agi_wr | d.agi_wr;
        s->pipe.u_open = false;
        s->st.v_issues++; /* (and pairs: p5_fold) */
    } else {
        /* U pipe (alone, or waiting for a V partner). */
        if (s->pipe.shadow_groups)
            s->pipe.shadow_groups--;
        else
            s->pipe.shadow = 0;
        uint32_t pen = pfx;
        if (pen) {
            uint32_t hid = pen < s->pipe.shadow ? pen : s->pipe.shadow;
            s->pipe.shadow -= hid;
            pen -= hid;
            s->st.prefix_shadowed += hid;
            s->st.prefix_cycles += pen;
            s->st.c_prefix += pen;
        }
        uint32_t agi = (d.addr & s->pipe.last_agi_wr) ? 1 : 0;
        if (agi) {
            s->st.agi_stalls++;
            s->st.c_agi++;
        }
        exec = d.clocks + agi + stall;
        cost = exec + pen;
        s->pipe.before_u_agi_wr = s->pipe.last_agi_wr;
        s->pipe.last_agi_wr = d.agi_wr;
        /* Opens a V slot: pairable in U, not a branch, boundaries known
         * (code cache hit, or a one-byte instruction) [MA 4.1]. */
        bool opens = plain ? (sf & PS_OPENS_V) != 0
                           : (d.pair == P_UV || d.pair == P_PU) && !d.dispimm && !(sf & PS_BRANCH);
        s->pipe.u_open = opens && !(code_miss && i->len > 1);
        s->pipe.u = d;
        s->pipe.u_exec = exec;
        s->pipe.u_agi = agi != 0;
        s->pipe.u_has_data = has_data;
        if (has_data) s->u_data = first_data; /* (read only with u_has_data) */
        s->st.u_issues++;
    }
    /* A group of N clocks hides N-1 prefix clocks of the groups that follow
     * it: "the next two (sometimes three) instructions or instruction pairs",
     * also across a predicted branch [MA 4.4].  Three: Abrash's measured
     * listing 21.1 [BB ch. 21] needs the 2-clock ADD AX,[ESI] to hide its
     * own next iteration's prefix, three groups on, once ADC AX,0 became
     * ADC EAX,0 (5 -> 4 clocks a word); two groups give 5 for both.  Agner's
     * own examples (CLD / REP MOVSD, CMP mem / MOV / SETNZ) are within two
     * and come out the same either way (docs/boards.md, ab2-p5-211e). */
    if (exec > 1) {
        s->pipe.shadow = exec - 1;
        s->pipe.shadow_groups = PREFIX_SHADOW_GROUPS;
    }
    if (!plain && (sf & PS_HLT)) {
        /* HLT drains the pipeline: no shadow, no V slot left. */
        s->pipe.shadow = 0;
        s->pipe.shadow_groups = 0;
        s->pipe.u_open = false;
    }
    if (is_rep) {
        s->rep_active = c->eip == c->insn_eip;
        s->rep_eip = c->insn_eip;
    }
    /* (a plain instruction after nothing else changes neither: p5_insn) */
    if (!plain) {
        s->mode = nm_x86_mode_now(c);
        s->ev.mode_stale = false;
        c->hook_resync = false;
        tlb_after(s, i);
        cm_set(s, 1, s->cm_page); /* CR0, paging, the TLBs or the memory map may have changed */
    } else {
        s->mode.next_eip = c->eip;
    }
    account(s, sf, d.clocks, stall, plain);
    /* a REP string once, however many steps (any other instruction retires) */
    if (!lazy) s->st.instructions += is_string ? cpu_insn_retired(c, i) : 1;
    s->st.cycles += cost;
    if (!s->memo_off) s->tok = pipe_name(s); /* (else 0) */
    /* The BTB's part (its clocks counted there, kept apart for the issue
     * memo: p5_issue_record) */
    s->btb_pen = btb_after(s, c->seg[NM_CS].base + c->insn_eip, pair, bk);
    return cost + s->btb_pen;
}

/* ------------------------------------------------------- the issue memo */

/* The counters' steps of one use of a memo slot (one issue) or of a
 * stretch slot (its issues summed). */
typedef struct {
    uint32_t issues, v, cost, clocks, pair_saved, rmw_pair, agi, pfx_shadowed, pfx_cycles;
} p5_steps;

/* Adds n uses' steps to the counters. */
static inline void fold_steps(p5 *s, uint64_t n, p5_steps d)
{
    nm_p5_stats *t = &s->st;
    t->cycles += n * d.cost;
    t->c_table += n * d.clocks;
    t->v_issues += n * d.v;
    t->u_issues += n * (d.issues - d.v);
    t->c_pair_saved += n * d.pair_saved;
    t->c_rmw_pair += n * d.rmw_pair;
    t->agi_stalls += n * d.agi;
    t->c_agi += n * d.agi;
    t->prefix_shadowed += n * d.pfx_shadowed;
    t->prefix_cycles += n * d.pfx_cycles;
    t->c_prefix += n * d.pfx_cycles;
}

/* Adds a memo slot's uses to the counters. */
static void memo_fold(p5 *s, p5_memo *m)
{
    if (!m->hits) return;
    fold_steps(s, m->hits,
               (p5_steps){1, m->in_v, m->cost, m->clocks, m->pair_saved, m->rmw_pair, m->agi,
                          m->pfx_shadowed, m->pfx_cycles});
    m->hits = 0;
}

/* Adds a stretch slot's uses to the counters (as memo_fold for each of
 * its instructions). */
static void stretch_fold(p5 *s, p5_stretch *r)
{
    if (!r->hits) return;
    fold_steps(s, r->hits,
               (p5_steps){r->n, r->v_n, r->cost, r->clocks, r->pair_saved, r->rmw_pair, r->agi,
                          r->pfx_shadowed, r->pfx_cycles});
    r->hits = 0;
}

static void memo_fold_all(p5 *s)
{
    /* (the test here: most slots have none, and the folds are calls) */
    for (uint32_t k = 0; k < P5_MEMO_SIZE; k++)
        if (s->memo[k].hits) memo_fold(s, &s->memo[k]);
    for (uint32_t k = 0; k < P5_STRETCH_SIZE; k++)
        if (s->stretch[k].hits) stretch_fold(s, &s->stretch[k]);
}

/* The instruction's place in the decoded-instruction cache (a byte offset:
 * a function of its physical address) + 1, its memo set, and the key of
 * its slot from the state named tok (the slot's owner and entry_tok as one
 * word; a free slot has owner 0, and no slot entry_tok 0). */
static inline __attribute__((always_inline)) uint32_t memo_owner(const p5 *s, const nm_insn *i)
{
    return (uint32_t)((const char *)i - s->ic_base) + 1u;
}
_Static_assert(sizeof(ic_entry) >= 32, "one memo set index per decoded instruction");
static inline __attribute__((always_inline)) p5_memo *memo_set(p5 *s, uint32_t owner)
{
    return &s->memo[(owner >> 5) * P5_MEMO_WAYS & (P5_MEMO_SIZE - 1)];
}
static inline __attribute__((always_inline)) uint64_t memo_key(uint32_t owner, uint32_t tok)
{
    return owner | (uint64_t)tok << 32;
}
_Static_assert(offsetof(p5_memo, entry_tok) == offsetof(p5_memo, owner) + 4, "memo_key");
static inline __attribute__((always_inline)) uint64_t slot_key(const p5_memo *m)
{
    uint64_t k;
    memcpy(&k, &m->owner, sizeof k);
    return k;
}
static inline __attribute__((always_inline)) p5_memo *memo_find(p5_memo *set, uint64_t key)
{
    _Static_assert(P5_MEMO_WAYS == 4, "memo_find");
    if (slot_key(&set[0]) == key) return &set[0];
    if (slot_key(&set[1]) == key) return &set[1];
    if (slot_key(&set[2]) == key) return &set[2];
    if (slot_key(&set[3]) == key) return &set[3];
    return NULL;
}

/* The instruction was decoded (again): its slots are freed. */
static void memo_forget(p5 *s, const nm_insn *i)
{
    const uint32_t owner = memo_owner(s, i);
    p5_memo *set = memo_set(s, owner);
    for (unsigned w = 0; w < P5_MEMO_WAYS; w++) {
        if (set[w].owner == owner) {
            memo_fold(s, &set[w]);
            set[w].owner = 0;
        }
    }
}

/* The outcome of a memo slot whose entry state is the state now. */
static inline __attribute__((always_inline)) uint32_t memo_apply(p5 *s, const nm_cpu *c, p5_memo *m,
                                                                 const bool has_data,
                                                                 uint32_t first_data,
                                                                 const bool lazy, const unsigned bk)
{
    s->pipe = m->exit;
    s->tok = m->exit_tok;
    m->hits++;
    s->memo_hits++;
    if (has_data && !m->in_v) s->u_data = first_data;
    s->mode.next_eip = c->eip;
    if (!lazy) s->st.instructions++;
    /* (the BTB's clocks are not the slot's: p5_issue_record) */
    return m->cost + btb_after(s, c->seg[NM_CS].base + c->insn_eip, m->in_v, bk);
}

/* Whether slot m holds the outcome for this access (with or without data,
 * the same banks). */
static inline __attribute__((always_inline)) bool
memo_fits(const p5 *s, const p5_memo *m, const bool has_data, uint32_t first_data)
{
    return (m->code_key & 1u) == has_data &&
           !(has_data && m->bank_check && bank_conflict(first_data, s->u_data));
}

/* p5_issue of a PS_PLAIN instruction with no stall, code miss or
 * misprediction (code_ok: its code within the code page memo), by its
 * memo slot if it has one for this state, else worked out and recorded
 * (but with a bank conflict), its new state named. */
static __attribute__((noinline)) uint32_t p5_issue_record(p5 *s, nm_cpu *c, const nm_insn *i,
                                                          const p5_static *st, bool has_data,
                                                          uint32_t first_data, bool lazy,
                                                          bool code_ok, unsigned bk)
{
    const uint32_t owner = memo_owner(s, i);
    p5_memo *const set = memo_set(s, owner);
    p5_memo *m = s->tok ? memo_find(set, memo_key(owner, s->tok)) : NULL;
    if (m && memo_fits(s, m, has_data, first_data)) {
        /* (the fast path's test failed on its code epoch only) */
        if (code_ok) m->code_key = s->code_epoch << 1 | has_data;
        return memo_apply(s, c, m, has_data, first_data, lazy, bk);
    }
    const unsigned sf = static_flags(st);
    p5_desc d = static_desc(st);
    const uint32_t entry_tok = s->tok, epoch = s->tok_epoch;
    const bool u_data_open = s->pipe.u_open && s->pipe.u_has_data;
    const nm_p5_stats *t = &s->st;
    const uint64_t v0 = t->v_issues, ps0 = t->c_pair_saved, rp0 = t->c_rmw_pair,
                   agi0 = t->agi_stalls, sh0 = t->prefix_shadowed, pc0 = t->prefix_cycles,
                   bank0 = t->bank_conflicts;
    const uint32_t all = p5_issue(s, c, i, sf, st->pfx, d, 0, false, has_data, first_data, bk, true,
                                  false, false, lazy);
    const uint32_t cost = all - s->btb_pen; /* the slot's */
    const uint64_t ps = t->c_pair_saved - ps0, rp = t->c_rmw_pair - rp0, agi = t->agi_stalls - agi0,
                   sh = t->prefix_shadowed - sh0, pc = t->prefix_cycles - pc0;
    /* (a bank conflict: an outcome of the addresses too) */
    if (t->bank_conflicts != bank0 || (cost | ps | rp | sh | pc | d.clocks) > 0xff ||
        epoch != s->tok_epoch || !entry_tok)
        return all;
    const bool in_v = t->v_issues != v0; /* (before the fold below) */
    if (++s->window_records == MEMO_WINDOW) {
        if (s->memo_hits - s->window_hits0 < (uint64_t)MEMO_HITS_PER_RECORD * MEMO_WINDOW) {
            s->memo_off = true;
            s->memo_back_at = c->instructions + MEMO_REST;
            s->tok = 0;
        }
        s->window_records = 0;
        s->window_hits0 = s->memo_hits;
        if (s->memo_off) return all;
    }
    if (!m) {
        /* a free slot of the set, else one in turn */
        for (unsigned w = 0; w < P5_MEMO_WAYS && !m; w++)
            if (!set[w].owner) m = &set[w];
        if (!m) m = &set[s->memo_turn++ % P5_MEMO_WAYS];
    }
    memo_fold(s, m);
    *m = (p5_memo){
        .owner = owner,
        .entry_tok = entry_tok,
        .exit_tok = s->tok,
        .exit = s->pipe,
        .code_key = (code_ok ? s->code_epoch << 1 : 0) | has_data,
        .bank_check = in_v && has_data && u_data_open,
        .in_v = in_v,
        .cost = (uint8_t)cost,
        .clocks = (uint8_t)d.clocks,
        .pair_saved = (uint8_t)ps,
        .rmw_pair = (uint8_t)rp,
        .agi = (uint8_t)agi,
        .pfx_shadowed = (uint8_t)sh,
        .pfx_cycles = (uint8_t)pc,
        .line2 = st->line2,
    };
    return all;
}

/* The memo on again after its rest (p5.memo_back_at). */
static __attribute__((noinline)) void memo_on(p5 *s)
{
    s->memo_off = false;
    s->memo_back_at = UINT64_MAX;
    s->window_records = 0;
    s->window_hits0 = s->memo_hits;
}

/* p5_issue_record's outcome, by the memo slot inline when it has one. */
static inline __attribute__((always_inline)) uint32_t
p5_issue_memo(p5 *s, nm_cpu *c, const nm_insn *i, const p5_static *st, const bool has_data,
              uint32_t first_data, const bool lazy, bool code_ok, const unsigned bk)
{
    const uint32_t owner = memo_owner(s, i);
    p5_memo *m = s->tok ? memo_find(memo_set(s, owner), memo_key(owner, s->tok)) : NULL;
    if (likely(m && memo_fits(s, m, has_data, first_data)))
        return memo_apply(s, c, m, has_data, first_data, lazy, bk);
    return p5_issue_record(s, c, i, st, has_data, first_data, lazy, code_ok, bk);
}

/* Bumps every memo slot's code epoch off (code_key) and starts again. */
static void code_epoch_wrap(p5 *s)
{
    for (uint32_t k = 0; k < P5_MEMO_SIZE; k++)
        s->memo[k].code_key &= 1u;
    s->code_epoch = 1;
}

/* ------------------------------------------------------ the stretch memo */

/* Whether an instruction was seen by this model and has the PS_* flag
 * `ps`, one of p5_static.flags_hi's: the tag and the flag in one test
 * (flags_hi is next to nm_insn.model_tag). */
static inline __attribute__((always_inline)) bool seen_with(const nm_insn *i, const unsigned ps)
{
    const uint8_t mask[2] = {0xff, (uint8_t)(ps >> 8)};
    const uint8_t want[2] = {NM_INSN_TAG_PENTIUM, (uint8_t)(ps >> 8)};
    uint16_t tp, m, w;
    memcpy(&tp, &i->model_tag, 2);
    memcpy(&m, mask, 2);
    memcpy(&w, want, 2);
    return (tp & m) == w;
}

/* Whether an instruction was seen by this model and is PS_REGONLY. */
static inline __attribute__((always_inline)) bool regonly(const nm_insn *i)
{
    return seen_with(i, PS_REGONLY);
}

static inline __attribute__((always_inline)) p5_stretch *stretch_set(p5 *s, uint32_t owner)
{
    return &s->stretch[(owner >> 5) * P5_STRETCH_WAYS & (P5_STRETCH_SIZE - 1)];
}
static inline __attribute__((always_inline)) uint64_t stretch_key(const p5_stretch *r)
{
    uint64_t k;
    memcpy(&k, &r->owner, sizeof k);
    return k;
}
_Static_assert(offsetof(p5_stretch, entry_tok) == offsetof(p5_stretch, owner) + 4, "stretch_key");

/* The stretch from e and the state now, made from the issue memo's slots
 * (into `r`, a slot found old, else one of the set): NULL when fewer than
 * two instructions from e have a slot for the state the one before them
 * leaves, with their code within the code page memo. */
static __attribute__((noinline)) p5_stretch *stretch_make(p5 *s, nm_cpu *c, const ic_entry *e,
                                                          p5_stretch *set, p5_stretch *r)
{
    const uint32_t epoch = s->code_epoch << 1;
    /* (the common way to none: no slot for the first one from the state
     * now, as in a function entered from many states) */
    const uint32_t owner0 = memo_owner(s, &e->insn);
    const p5_memo *m0 = memo_find(memo_set(s, owner0), memo_key(owner0, s->tok));
    if (!m0 || m0->code_key != epoch) return NULL;
    p5_stretch t = {
        .owner = memo_owner(s, &e->insn),
        .entry_tok = s->tok,
        .code_key = epoch,
        .tag = e->tag,
        .gen = *ic_gen(c->icache, c->fetch_phys),
    };
    uint32_t tok = s->tok;
    const p5_memo *last = NULL;
    for (const ic_entry *x = e;;) {
        const nm_insn *i = &x->insn;
        if (!regonly(i)) break;
        const uint32_t owner = memo_owner(s, i);
        const p5_memo *m = memo_find(memo_set(s, owner), memo_key(owner, tok));
        if (!m || m->code_key != epoch) break;
        if (!m->in_v) {
            /* a group starts: the one before's U is the key of this one */
            if (t.groups == P5_STRETCH_KEYS + 1) break;
            if (t.groups) t.keys[t.groups - 1] = t.last_u;
            if (!t.n) t.first_u = true;
            t.last_u = t.bytes;
            t.groups++;
        }
        t.n++;
        t.bytes += i->len;
        t.cost += m->cost;
        t.clocks += m->clocks;
        t.v_n += m->in_v;
        t.pair_saved += m->pair_saved;
        t.rmw_pair += m->rmw_pair;
        t.agi += m->agi;
        t.pfx_shadowed += m->pfx_shadowed;
        t.pfx_cycles += m->pfx_cycles;
        t.line2 += m->line2;
        tok = m->exit_tok;
        last = m;
        const ic_entry *nx = ic_successor(x);
        if (t.n == IC_RUN_MAX || !nx) break;
        x = nx;
    }
    if (t.n < 2) return NULL;
    t.exit_tok = tok;
    t.exit = last->exit;
    if (!r) {
        for (unsigned w = 0; w < P5_STRETCH_WAYS && !r; w++)
            if (!set[w].owner) r = &set[w];
        if (!r) r = &set[s->stretch_turn++ % P5_STRETCH_WAYS];
    }
    stretch_fold(s, r);
    *r = t;
    return r;
}

/* The run loop's question before an instruction (nm_cpu_hooked_loop's
 * `ahead`; `ok`: the last insn hook returned in the loop and nothing ran
 * since, the page is 32-bit code within the CS limit): the number of
 * instructions from e whose issue the stretch memo knows from the state
 * now, their clocks in *cost, the model's state moved past them as their
 * insn hooks would have moved it (p5_insn's memo hits: no data access, no
 * branch, code within the code page memo); 0 when it does not know, a
 * full check is due after the next instruction (fast_exit), or they would
 * reach the deadline or use up the budget (then each one goes through the
 * insn hook). */
static inline __attribute__((always_inline)) unsigned p5_ahead(void *opaque, nm_cpu *c,
                                                               const ic_entry *e, const bool ok,
                                                               uint64_t now, uint64_t deadline,
                                                               uint64_t budget, uint32_t *cost)
{
    p5 *s = opaque;
    if (!s->tok || !ok || c->fast_exit || !regonly(&e->insn)) return 0;
    /* (the successor's flags before its tag: most fail there) */
    const ic_entry *nx = e->seq;
    if (!nx || !regonly(&nx->insn) || nx != ic_successor(e) || s->ev.any ||
        ((c->seg[NM_CS].base + c->eip) & 0xfffff000u) != s->cm_lpage)
        return 0;
    const uint32_t owner = memo_owner(s, &e->insn);
    p5_stretch *const set = stretch_set(s, owner);
    const uint64_t key = memo_key(owner, s->tok);
    p5_stretch *r = NULL;
    for (unsigned w = 0; w < P5_STRETCH_WAYS; w++)
        if (stretch_key(&set[w]) == key) r = &set[w];
    if (!r || r->tag != e->tag || r->code_key != s->code_epoch << 1 ||
        r->gen != *ic_gen(c->icache, c->fetch_phys)) {
        r = stretch_make(s, c, e, set, r);
        if (!r) return 0;
    }
    if (r->n >= budget || now + r->cost >= deadline) return 0;
    /* The BTB: every group it starts but the last looked up with a key of
     * no entry (p5.keyed; else one by one, btb_after), and none of the
     * group open before it predicted; its last group's lookup made (a
     * prediction there is paid by the group after it, btb_issue). */
    p5_group *const g = &s->grp;
    if (g->pending) return 0;
    const uint32_t lin0 = c->seg[NM_CS].base + c->eip;
    uint32_t bkey = g->u;
    if (r->groups > 1) {
        if (s->keyed[bkey & KEYED_MASK]) return 0;
        if (r->keys_clear_at != s->btb_allocs) {
            for (unsigned k = 0; k + 2u < r->groups; k++)
                if (s->keyed[(lin0 + r->keys[k]) & KEYED_MASK]) return 0;
            r->keys_clear_at = s->btb_allocs;
        }
        bkey = lin0 + r->keys[r->groups - 2];
    }
    const int way = s->keyed[bkey & KEYED_MASK] ? btb_find(s, bkey) : -1;
    const bool pending = way >= 0 && s->btb.state[btb_set(bkey)][way] >= 2;
    /* (its last group's predecessor is one of its own, or the open group
     * its first instruction joined, neither flushed, or the group before it) */
    g->shadow = r->groups == 1 && r->first_u && g->flushed;
    g->flushed = false;
    g->key = bkey;
    g->u = lin0 + r->last_u;
    g->way = (int8_t)way;
    g->pending = pending;
    s->pipe = r->exit;
    s->tok = r->exit_tok;
    r->hits++;
    s->memo_hits += r->n;
    s->stretch_insns += r->n;
    s->lazy_fast += r->n; /* the code hits, the instructions */
    s->lazy_line2 += r->line2;
    s->mode.next_eip = c->eip + r->bytes;
    *cost = r->cost;
    return r->n;
}

/* The insn hook.  `plain`: the instruction is PS_PLAIN and nothing ran
 * between it and the last one (p5_insn): the tests whose outcome that
 * fixes are left out of this instance. */
static inline __attribute__((always_inline)) uint32_t
p5_insn_body(p5 *s, nm_cpu *c, const nm_insn *i, const p5_static *st, const bool plain)
{
    /* The instruction's code bytes, logged as the run loop's code report
     * would have been, just before this call (with mem_ignores_code it
     * makes none). */
    uint32_t code_lin = c->seg[NM_CS].base + c->insn_eip;
    /* With no data access logged, the code is the only one: settled below
     * without the log (as run_log would settle a log of that one). */
    const bool code_alone = s->ev.nlog == 0;
    if (!code_alone)
        log_access(s, code_lin, c->fetch_phys | (code_lin & 0xfff), i->len, NM_MEM_CODE);
    const unsigned sf = static_flags(st);
    bool is_string = !plain && (sf & PS_STRING) != 0;
    bool is_rep = !plain && (sf & PS_REP) != 0;
    bool rep_cont = is_rep && s->rep_active && s->rep_eip == c->insn_eip;

    p5_desc d = static_desc(st);
    if (!plain && (sf & PS_SPECIAL)) {
        /* The mode before (the previous instruction's) and now (the model
         * changes nothing in the CPU: the same all through this call). */
        nm_x86_mode after = nm_x86_mode_now(c);
        d.clocks = special_clocks(s, c, i, &d, &s->mode, &after, rep_cont);
    }
    /* Memory: the logged accesses, spread over a string's iterations. */
    unsigned per_iter = 0, stride = 1;
    if (is_rep) {
        per_iter = rep_of(i->op).per;
        stride = string_accesses(i->op);
    }
    bool code_miss = false, has_data = false;
    uint32_t first_data = 0;
    uint64_t t0 = c->clock->cycles + s->ev.pending;
    uint32_t stall;
    if (code_alone) {
        /* the instruction's code alone: run_log's loop for its one access */
        stall = s->ev.pending + settle_code_at(s, code_lin, c->fetch_phys | (code_lin & 0xfff),
                                               i->len, true, t0, 0, &code_miss);
    } else {
        stall =
            s->ev.pending + run_log(s, t0, per_iter, stride, &code_miss, &has_data, &first_data);
    }
    s->ev.pending = 0;
    /* Locked cycles (LOCK, XCHG with memory) run on the bus [DB]. */
    if (!plain && (sf & PS_LOCKED)) {
        uint64_t now = c->clock->cycles + stall;
        uint32_t one = has_data ? nm_board_single_read(&s->board, first_data, s->cpu->clock->cycles)
                                : s->board.dram_single;
        uint64_t done = nm_membus_use(&s->bus, now, 2 * one);
        stall += (uint32_t)(done - now);
        s->st.mem_stall_cycles += done - now;
        s->st.c_locked += done - now;
        s->st.locked++;
    }
    /* I/O waits for the write buffers to drain [DB]. */
    if (!plain && (sf & PS_IO)) {
        uint64_t now = c->clock->cycles + stall;
        uint64_t empty = nm_wbuf_empty_at(&s->wbuf, now);
        stall += (uint32_t)(empty - now);
        s->st.c_io_drain += empty - now;
    }

    /* Branch prediction (p5_issue, "BTB"). */
    const unsigned bk = btb_kind(s, sf);
    s->ev.br_seen = false;

    return p5_issue(s, c, i, sf, st->pfx, d, stall, code_miss, has_data, first_data, bk, plain,
                    is_string, is_rep, false);
}

/* Everything p5_insn's fast path leaves to the general one. */
static __attribute__((noinline)) uint32_t p5_insn_slow(p5 *s, nm_cpu *c, const nm_insn *i)
{
    const p5_static *st = static_of(s, i);
    if (unlikely(c->instructions >= s->memo_back_at)) memo_on(s);
    /* EIP or CS not where the last instruction left them: something ran in
     * between (an interrupt, an exception, a reset) and may have changed
     * the mode; as has a new run (cpu->hook_resync) or an interrupt hook
     * (mode_stale).  The mode, CR3, CR4 and paging change only then or
     * with an instruction that has NM_SYNC_CHECK (decode.c: the others
     * change registers, flags and memory only): else s->mode but its EIP,
     * and the TLBs' view, are already what they would be made. */
    if (likely((st->flags_hi & (PS_PLAIN >> 8)) && !s->ev.mode_stale && !c->hook_resync &&
               c->insn_eip == s->mode.next_eip && c->seg[NM_CS].selector == s->mode.cs))
        return p5_insn_body(s, c, i, st, true);
    return p5_insn_body(s, c, i, st, false);
}

/* Whether the instruction's code lies within the code page memo
 * (p5.cm_lpage), in one line or two of the page, each the most recent line
 * of its set (p5.cmirror): then settle_code_at would count the code TLB's
 * hit and the code cache's (one a line) and charge nothing (p5_code_memo
 * counts them).  The set index (address bits 5-11) is within the page
 * offset: the linear address gives it. */
static inline __attribute__((always_inline)) bool in_code_memo(p5 *s, const nm_cpu *c,
                                                               const nm_insn *i, uint32_t code_lin)
{
    const uint32_t at = code_lin & 0xfe0u;
    const bool one_line = (code_lin & 31u) + i->len <= 32u;
    /* (the code line memo: the lookups below passed for this line since
     * anything they read last moved) */
    if ((code_lin & ~31u) == s->cl_lin && one_line && c->fetch_phys == s->cm_page) return true;
    if (!((code_lin & 0xfffff000u) == s->cm_lpage && c->fetch_phys == s->cm_page &&
          s->cmirror[at >> 5] == (c->fetch_phys | at | 1u)))
        return false;
    if (one_line) {
        if (!s->cl_off) s->cl_lin = code_lin & ~31u;
        return true;
    }
    return at != 0xfe0u && s->cmirror[(at >> 5) + 1] == (c->fetch_phys | (at + 32) | 1u);
}
_Static_assert(P5_L1_SETS == 4096 / 32, "in_code_memo: a page's lines, one a set");
static inline __attribute__((always_inline)) void p5_code_memo(p5 *s, const p5_static *st)
{
    s->lazy_code++;
    s->lazy_line2 += st->line2;
}

/* An access of `size` bytes at `phys` within one aligned dword: not
 * misaligned [MA] (a word not across a dword, a dword on one), within one
 * line and one qword (one pass of run_log's loop, one bus transfer). */
static inline __attribute__((always_inline)) bool within_dword(uint32_t phys, uint32_t size)
{
    return ((phys ^ (phys + size - 1u)) & ~3u) == 0;
}

/* Whether the log's one access would be a hit that changes nothing but
 * the counters if run_log settled it now (data_alone's first case, the
 * tests written out again there: one pass measured faster): a data access
 * in the data TLB's entry its set used last (with paging on:
 * nm_tlb_lookup's first case), within one dword (within_dword), in the
 * data cache's most recent line of its set (dmirror; a write to a line known
 * dirty) in cacheable RAM. */
static inline __attribute__((always_inline)) bool data_alone_hits(const p5 *s)
{
    const p5_access *a = &s->log[0];
    const uint32_t phys = a->phys, size = a->size ? a->size : 1;
    if ((a->flags & NM_MEM_CODE) || !within_dword(phys, size)) return false;
    if (s->cpu->paging && !(a->flags & NM_MEM_PAGEWALK) &&
        nm_tlb_small_set_mru(&s->data_tlb, a->lin) != ((a->lin & 0xfffff000u) | 1u))
        return false;
    const uint32_t m = s->dmirror[(phys >> 5) & (P5_L1_SETS - 1)], line = (phys & ~31u) | 3u;
    if (a->flags & NM_MEM_WRITE) return m == line && mirrors_fresh(s);
    return (m | 2u) == line && mirrors_cached(s);
}

/* The log's one access, a hit (data_alone_hits): its counters as run_log
 * counts them, the log emptied. */
static inline __attribute__((always_inline)) void data_alone_hit(p5 *s)
{
    const p5_access *a = &s->log[0];
    nm_cache_head *h = (nm_cache_head *)(void *)s->data;
    if (a->flags & NM_MEM_WRITE)
        h->stats.write_hits++;
    else
        h->stats.read_hits++;
    s->st.data_hits++;
    if (s->cpu->paging && !(a->flags & NM_MEM_PAGEWALK)) {
        s->data_tlb.mru = (a->lin & 0xfffff000u) | 1u;
        s->data_tlb.stats.hits++;
        s->st.tlb_data_hits++;
    }
    s->ev.nlog = 0;
}

/* The log holds one data access (not a code one) that run_log would find
 * in the data TLB's entry its set used last (with paging on:
 * nm_tlb_lookup's first case), within one dword (within_dword): settled
 * at t0 as run_log would, the log emptied, its stall in *stall: a
 * hit in the most recent line of its set its counters and no stall
 * (data_alone_hits), else a miss (a write into the write buffer, a line
 * fill) or an uncached access.  Else false and nothing done. */
static inline __attribute__((always_inline)) bool data_alone(p5 *s, uint64_t t0, uint32_t *stall)
{
    const p5_access *a = &s->log[0];
    const uint32_t phys = a->phys, size = a->size ? a->size : 1;
    if ((a->flags & NM_MEM_CODE) || !within_dword(phys, size)) return false;
    const bool tlb = s->cpu->paging && !(a->flags & NM_MEM_PAGEWALK);
    const uint32_t tag = (a->lin & 0xfffff000u) | 1u;
    if (tlb && nm_tlb_small_set_mru(&s->data_tlb, a->lin) != tag) return false;
    const uint32_t m = s->dmirror[(phys >> 5) & (P5_L1_SETS - 1)], line = (phys & ~31u) | 3u;
    nm_cache_head *h = (nm_cache_head *)(void *)s->data;
    if (a->flags & NM_MEM_WRITE) {
        if (m == line && mirrors_fresh(s)) {
            h->stats.write_hits++;
            s->st.data_hits++;
        } else {
            /* (write_line's other case: no part across a qword) */
            const uint32_t w = write_one_at(s, phys, t0);
            s->part_wbuf += w;
            *stall = w;
            s->alone_misses++;
        }
    } else if ((m | 2u) == line && mirrors_cached(s)) {
        h->stats.read_hits++;
        s->st.data_hits++;
    } else {
        const uint32_t w = read_line_slow(s, s->data, phys, t0, false);
        s->part_data += w;
        *stall = w;
        s->alone_misses++;
    }
    if (tlb) {
        s->data_tlb.mru = tag;
        s->data_tlb.stats.hits++;
        s->st.tlb_data_hits++;
    }
    s->ev.nlog = 0;
    return true;
}

/* A plain instruction after nothing else (p5_insn_slow's test), its log
 * not full: p5_insn_body's plain case, the code access settled after the
 * logged ones (where p5_insn_body logs it) without going through the log. */
static __attribute__((noinline)) uint32_t p5_insn_plain(p5 *s, nm_cpu *c, const nm_insn *i)
{
    const p5_static *st = (const p5_static *)(const void *)i->model_data;
    const uint32_t code_lin = c->seg[NM_CS].base + c->insn_eip;
    const unsigned sf = static_flags(st);
    bool code_miss = false, has_data = false;
    uint32_t first_data = 0, stall = 0;
    const uint64_t t0 = c->clock->cycles + s->ev.pending;
    if (s->ev.nlog == 1 && !s->alone_off && data_alone(s, t0, &stall)) {
        has_data = true;
        first_data = s->log[0].phys;
    } else if (s->ev.nlog) {
        stall = run_log(s, t0, 0, 1, &code_miss, &has_data, &first_data);
    }
    const bool code_ok = in_code_memo(s, c, i, code_lin);
    if (code_ok)
        p5_code_memo(s, st);
    else
        stall = settle_code_at(s, code_lin, c->fetch_phys | (code_lin & 0xfff), i->len, true, t0,
                               stall, &code_miss);
    stall += s->ev.pending;
    s->ev.pending = 0;
    const unsigned bk = plain_btb_kind(s, sf);
    s->ev.br_seen = false;
    if (!s->memo_off && !(stall | code_miss))
        return p5_issue_memo(s, c, i, st, has_data, first_data, false, code_ok, bk);
    p5_desc d = static_desc(st);
    return p5_issue(s, c, i, sf, st->pfx, d, stall, code_miss, has_data, first_data, bk, true,
                    false, false, false);
}

/* The fast path's case (p5_insn) with a branch outcome noted. */
static __attribute__((noinline)) uint32_t p5_insn_branch(p5 *s, nm_cpu *c, const nm_insn *i)
{
    const p5_static *st = (const p5_static *)(const void *)i->model_data;
    const unsigned sf = static_flags(st);
    s->lazy_fast++; /* the code hits, the instruction */
    s->lazy_line2 += st->line2;
    const unsigned bk = plain_btb_kind(s, sf);
    s->ev.br_seen = false;
    if (unlikely(c->instructions >= s->memo_back_at)) memo_on(s);
    if (!s->memo_off) return p5_issue_memo(s, c, i, st, false, 0, true, true, bk);
    p5_desc d = static_desc(st);
    return p5_issue(s, c, i, sf, st->pfx, d, 0, false, false, 0, bk, true, false, false, true);
}

/* The insn hook.  Its fast path: a plain instruction after nothing else
 * (p5_insn_slow's test), no memory access, branch or pending clock logged,
 * its code within the code page memo: p5_insn_body's outcome for it is the
 * code hits counted and the issue with no stall, which is all this does.
 * `memo`: the instance asks the issue memo here (with the memo off, the
 * run loop's other instance, p5_run_plain, leaves that to the calls). */
static inline __attribute__((always_inline)) uint32_t
p5_insn_fast(void *opaque, nm_cpu *c, const nm_insn *i, const bool seq, const bool memo)
{
    p5 *s = opaque;
    const p5_static *st = (const p5_static *)(const void *)i->model_data;
    /* seq: the last instruction's call left EIP and CS in s->mode and
     * hook_resync clear, and nothing has run since */
    if (likely(seen_with(i, PS_PLAIN) &&
               (seq || (!c->hook_resync && c->insn_eip == s->mode.next_eip &&
                        c->seg[NM_CS].selector == s->mode.cs)))) {
        const uint32_t code_lin = c->seg[NM_CS].base + c->insn_eip;
        if (likely(!s->ev.any)) {
            /* p5_issue_memo's test with in_code_memo's: the slot's code
             * epoch is the code page memo's now (so in_code_memo's outcome
             * for this instruction is the same as when recorded but for its
             * linear page) */
            const uint32_t owner = memo_owner(s, i);
            p5_memo *m =
                memo && s->tok ? memo_find(memo_set(s, owner), memo_key(owner, s->tok)) : NULL;
            if (likely(m && m->code_key == s->code_epoch << 1 &&
                       (code_lin & 0xfffff000u) == s->cm_lpage)) {
                s->lazy_fast++; /* the code hits, the instruction */
                s->lazy_line2 += m->line2;
                return memo_apply(s, c, m, false, 0, true, BK_NONE);
            }
            if (in_code_memo(s, c, i, code_lin)) {
                s->lazy_fast++; /* the code hits, the instruction */
                s->lazy_line2 += st->line2;
                if (m && !(m->code_key & 1u)) {
                    /* (only its code epoch was old) */
                    m->code_key = s->code_epoch << 1;
                    return memo_apply(s, c, m, false, 0, true, BK_NONE);
                }
                if (!s->memo_off)
                    return p5_issue_record(s, c, i, st, false, 0, true, true, BK_NONE);
                const unsigned sf = static_flags(st);
                p5_desc d = static_desc(st);
                return p5_issue(s, c, i, sf, st->pfx, d, 0, false, false, 0, BK_NONE, true, false,
                                false, true);
            }
        }
        /* One data access noted, a hit (data_alone's first case): the
         * issue memo's slot for it with data, its code epoch the code page
         * memo's now (as above), no bank conflict (memo_fits) */
        static const union p5_ev one_access = {.nlog = 1};
        if (memo && s->ev.any == one_access.any) {
            const uint32_t owner = memo_owner(s, i);
            p5_memo *m = s->tok ? memo_find(memo_set(s, owner), memo_key(owner, s->tok)) : NULL;
            const uint32_t first_data = s->log[0].phys;
            if (m && m->code_key == (s->code_epoch << 1 | 1u) &&
                (code_lin & 0xfffff000u) == s->cm_lpage &&
                !(m->bank_check && bank_conflict(first_data, s->u_data)) && !s->alone_off &&
                data_alone_hits(s)) {
                data_alone_hit(s);
                s->lazy_fast++; /* the code hits, the instruction */
                s->lazy_line2 += m->line2;
                return memo_apply(s, c, m, true, first_data, true, BK_NONE);
            }
        }
        /* nothing noted but a branch outcome */
        static const union p5_ev br_only = {.br_seen = true};
        if (s->ev.any == br_only.any) {
            /* p5_insn_branch's outcome when the memo has a slot for it with
             * its code epoch the code page memo's now (as above) */
            if (memo) {
                const uint32_t owner = memo_owner(s, i);
                p5_memo *m = s->tok ? memo_find(memo_set(s, owner), memo_key(owner, s->tok)) : NULL;
                if (m && m->code_key == s->code_epoch << 1 &&
                    (code_lin & 0xfffff000u) == s->cm_lpage) {
                    s->lazy_fast++; /* the code hits, the instruction */
                    s->lazy_line2 += m->line2;
                    const unsigned bk = plain_btb_kind(s, static_flags(st));
                    s->ev.br_seen = false;
                    return memo_apply(s, c, m, false, 0, true, bk);
                }
            }
            if (in_code_memo(s, c, i, code_lin)) return p5_insn_branch(s, c, i);
        }
        /* (a full log: p5_insn_body's log overflow when it logs the code) */
        if (!s->ev.mode_stale && s->ev.nlog < LOG_CAP) return p5_insn_plain(s, c, i);
    }
    return p5_insn_slow(s, c, i);
}

static inline __attribute__((always_inline)) uint32_t p5_insn_memo(void *opaque, nm_cpu *c,
                                                                   const nm_insn *i, const bool seq)
{
    return p5_insn_fast(opaque, c, i, seq, true);
}
static inline __attribute__((always_inline)) uint32_t
p5_insn_plain_fast(void *opaque, nm_cpu *c, const nm_insn *i, const bool seq)
{
    return p5_insn_fast(opaque, c, i, seq, false);
}

static uint32_t p5_insn(void *opaque, nm_cpu *c, const nm_insn *i)
{
    return p5_insn_fast(opaque, c, i, false, true);
}

/* The CPU's run loop with this model as its only listener, the insn and
 * branch hooks inlined (nm_cpu_hooks.run). */
static __attribute__((noinline)) void p5_run_stretches(nm_cpu *c, uint64_t limit)
{
    nm_cpu_hooked_loop(c, limit, true, p5_insn_memo, p5_branch, p5_ahead, NULL);
}
static __attribute__((noinline)) void p5_run_plain(nm_cpu *c, uint64_t limit)
{
    nm_cpu_hooked_loop(c, limit, true, p5_insn_plain_fast, p5_branch, NULL, NULL);
}
static void p5_run(nm_cpu *c, uint64_t limit)
{
    /* With the memo off (p5_ahead finds no stretch then), the loop without
     * the question: asking costs a guest kernel's window more than 1% (its
     * loop keeps fewer values in registers).  The loop returns at least
     * every NM_HOOKED_CHUNK instructions, so a memo back on is seen soon. */
    if (((const p5 *)c->hooks.opaque)->memo_off)
        p5_run_plain(c, limit);
    else
        p5_run_stretches(c, limit);
}

/* Bus-master DMA: the 430FX-class chipset runs an inquire cycle on the
 * CPU bus for each line a PCI master touches (Pentium data book, "inquire
 * cycles": EADS# with INV set for a write, clear for a read).  A hit in the
 * code cache or a clean data line is invalidated (write) or left (read); a
 * modified data line answers HITM# and is written back first (a line write
 * on the bus, charged to the bus the CPU waits for), then invalidated
 * (write) or kept clean (read: MESI M -> S; the S state's write-through of
 * later writes is not modelled, the line is kept as clean).  The board's
 * L2 drops the lines written (membus.h). */
static void p5_snoop(void *opaque, uint32_t phys, uint32_t len, bool write)
{
    p5 *s = opaque;
    if (!len) return;
    cm_set(s, 1, s->cm_page); /* the code line may go */
    uint64_t end = (uint64_t)phys + len;
    for (uint64_t a = phys & ~(uint64_t)31; a < end; a += 32) {
        uint32_t line = (uint32_t)a;
        bool dirty = false;
        if (write) {
            if (nm_cache_probe(s->code, line)) {
                nm_cache_invalidate_line(s->code, line);
                s->cmirror[(line >> 5) & (P5_L1_SETS - 1)] = 0;
                code_memo_moved(s);
                s->st.snoop_invalidations++;
            }
            if (nm_cache_probe(s->data, line)) {
                dirty = nm_cache_invalidate_line(s->data, line);
                s->dmirror[(line >> 5) & (P5_L1_SETS - 1)] = 0;
                s->st.snoop_invalidations++;
            }
        } else {
            dirty = nm_cache_clean_line(s->data, line);
            s->dmirror[(line >> 5) & (P5_L1_SETS - 1)] = 0; /* no longer dirty */
        }
        if (dirty) {
            /* HITM#: the write-back goes to memory (DRAM: the L2 line is
             * snooped below for a write; a read leaves it) */
            nm_membus_use(&s->bus, s->cpu->clock->cycles, s->board.dram_fill);
            s->st.snoop_writebacks++;
        }
    }
    if (write) nm_board_snoop_write(&s->board, phys, len);
}

/* ------------------------------------------------------------ lifetime */

static void *p5_create(nm_cpu *cpu, const nm_cpu_model *model, const nm_timing_params *params)
{
    if (model->family < NM_CPU_PENTIUM) return NULL;
    p5 *s = g_new0(p5, 1);
    s->cpu = cpu;
    s->model = model;
    s->mem = cpu->mem;
    s->map_gen = &cpu->mem->map_gen;
    s->mirror_gen = cpu->mem->map_gen; /* (the mirrors empty) */
    /* 8 KB, 2-way, 32-byte lines, LRU; code read-only, data write-back
     * without write allocation [DB].  (The mirrors, p5.cmirror/dmirror,
     * index their P5_L1_SETS sets by address bits 5-11.) */
    static const nm_cache_config code_cfg = {
        "code", 8192, P5_L1_WAYS, 32, NM_CACHE_WRITE_THROUGH, false, NM_CACHE_LRU};
    static const nm_cache_config data_cfg = {
        "data", 8192, P5_L1_WAYS, 32, NM_CACHE_WRITE_BACK, false, NM_CACHE_LRU};
    s->code = nm_cache_new(&code_cfg);
    s->data = nm_cache_new(&data_cfg);
    nm_timing_params p;
    if (params)
        p = *params;
    else
        nm_timing_default_params(model, &p);
    unsigned first = p.dram_first_clocks ? p.dram_first_clocks : 7;
    unsigned burst = p.dram_burst_clocks ? p.dram_burst_clocks : 3;
    unsigned single = p.dram_single_clocks ? p.dram_single_clocks : first;
    /* A 32-byte line is four 64-bit transfers: first + 3 x burst. */
    s->fill_clocks = nm_bus_to_core(model, first + 3 * burst);
    s->single_clocks = nm_bus_to_core(model, single);
    /* The L2: pipeline-burst SRAM, 3-1-1-1 bus clocks a line, 3 for a
     * single write (docs/cost-models.md, "board"). */
    p.dram_first_clocks = first;
    p.dram_burst_clocks = burst;
    p.dram_single_clocks = single;
    nm_board_timing bt = nm_board_timing_of(&p, 3, 1, 3);
    if (!nm_board_init(&s->board, model, &bt, 32)) {
        nm_cache_free(s->code);
        nm_cache_free(s->data);
        g_free(s);
        return NULL;
    }
    nm_wbuf_init(&s->wbuf, P5_WRITE_BUFFERS);
    /* Code TLB 32 entries, 4-way, 4 MB pages held as 4 KB entries; data
     * TLB 64 entries 4-way for 4 KB pages and a separate 8-entry 4-way TLB
     * for 4 MB pages (Pentium Processor Family Developer's Manual vol. 1,
     * "on-chip caches"; Null and Lobur, Essentials of Computer Organization
     * and Architecture, 6.6: "the D-cache TLB has 64 entries and the
     * I-cache has only 32 entries. Both TLBs are 4-way set associative and
     * use a pseudo-LRU replacement"). */
    static const nm_tlb_config code_tc = {"code_tlb", 32, 0}, data_tc = {"data_tlb", 64, 8};
    nm_tlb_init(&s->code_tlb, &code_tc);
    nm_tlb_init(&s->data_tlb, &data_tc);
    s->tlb_cr3 = cpu->cr3;
    s->tlb_paging = cpu->paging;
    s->tlb_pse = (cpu->cr4 & NM_CR4_PSE) != 0;
    s->mode = nm_x86_mode_now(cpu);
    cm_set(s, 1, s->cm_page); /* no code page memo yet */
    s->cl_lin = 1;            /* nor a code line memo */
    s->memo = g_new0(p5_memo, P5_MEMO_SIZE);
    s->memo_back_at = UINT64_MAX;
    s->names = g_new0(p5_name, P5_NAMES_SIZE);
    s->stretch = g_new0(p5_stretch, P5_STRETCH_SIZE);
    s->grp.way = -1;
    s->btb_allocs = 1;
    s->ic_base = (const char *)&((const icache *)cpu->icache)->e[0].insn;
    return s;
}

static void p5_destroy(void *state)
{
    p5 *s = state;
    if (!s) return;
    nm_cache_free(s->code);
    nm_cache_free(s->data);
    nm_board_free(&s->board);
    g_free(s->memo);
    g_free(s->names);
    g_free(s->stretch);
    g_free(s);
}

const nm_p5_stats *nm_pentium_stats(const void *state)
{
    p5 *s = (p5 *)state; /* the instance create made: its lazy counts go in */
    memo_fold_all(s);
    p5_fold(s);
    return &s->st;
}

void nm_pentium_set_issue_memo(void *state, bool on)
{
    p5 *s = state;
    if (on) {
        memo_on(s);
    } else {
        s->memo_off = true;
        s->memo_back_at = UINT64_MAX;
        s->tok = 0;
    }
}

uint64_t nm_pentium_issue_memo_hits(const void *state)
{
    return ((const p5 *)state)->memo_hits;
}

uint64_t nm_pentium_stretch_insns(const void *state)
{
    return ((const p5 *)state)->stretch_insns;
}

void nm_pentium_set_code_line_memo(void *state, bool on)
{
    p5 *s = state;
    s->cl_off = !on;
    s->cl_lin = 1;
}

void nm_pentium_set_data_alone(void *state, bool on)
{
    ((p5 *)state)->alone_off = !on;
}

uint64_t nm_pentium_data_alone_misses(const void *state)
{
    return ((const p5 *)state)->alone_misses;
}

static void p5_report(void *state, nm_report *r)
{
    memo_fold_all(state);
    p5_fold(state);
    const p5 *s = state;
    const nm_p5_stats *t = &s->st;
    nm_report_u64(r, "instructions", t->instructions);
    nm_report_u64(r, "cycles", t->cycles);
    nm_x87_report(&s->x87, r);
    nm_report_u64(r, "u_issues", t->u_issues);
    nm_report_u64(r, "v_issues", t->v_issues);
    nm_report_u64(r, "pairs", t->pairs);
    nm_report_u64(r, "agi_stalls", t->agi_stalls);
    nm_report_u64(r, "prefix_cycles", t->prefix_cycles);
    nm_report_u64(r, "prefix_shadowed", t->prefix_shadowed);
    nm_report_u64(r, "bank_conflicts", t->bank_conflicts);
    nm_report_u64(r, "branches", t->branches);
    nm_report_u64(r, "btb_hits", t->btb_hits);
    nm_report_u64(r, "btb_misses", t->btb_misses);
    nm_report_u64(r, "mispredicts", t->mispredicts);
    nm_report_u64(r, "mispredict_cycles", t->mispredict_cycles);
    nm_report_u64(r, "btb_misapplied", t->btb_misapplied);
    nm_report_u64(r, "btb_misapplied_cycles", t->btb_misapplied_cycles);
    nm_report_u64(r, "btb_unpredicted_after_flush", t->btb_shadowed);
    nm_report_u64(r, "code_hits", t->code_hits);
    nm_report_u64(r, "code_misses", t->code_misses);
    nm_report_u64(r, "data_hits", t->data_hits);
    nm_report_u64(r, "data_misses", t->data_misses);
    nm_report_u64(r, "line_fills", t->line_fills);
    nm_report_u64(r, "writebacks", t->writebacks);
    nm_report_u64(r, "uncached_reads", t->uncached_reads);
    nm_report_u64(r, "write_buffer_writes", t->wbuf_writes);
    nm_report_u64(r, "write_buffer_stalls", t->wbuf_stalls);
    nm_report_u64(r, "write_buffer_stall_cycles", t->wbuf_stall_cycles);
    nm_report_u64(r, "misaligned", t->misaligned);
    nm_report_u64(r, "split_writes", t->split_writes);
    nm_report_u64(r, "locked", t->locked);
    nm_report_u64(r, "memory_stall_cycles", t->mem_stall_cycles);
    nm_report_u64(r, "line_fill_clocks", s->fill_clocks);
    nm_report_u64(r, "single_transfer_clocks", s->single_clocks);
    nm_report_u64(r, "line_fill_clocks_l2", s->board.l2 ? s->board.l2_fill : 0);
    nm_board_report(&s->board, r);
    /* Where the clocks went: clocks == the clocks_* below added up, less
     * clocks_pairing_saved.  ISA/PCI wait states are the window's
     * bus_wait_cycles, not here. */
    nm_report_u64(r, "clocks", t->cycles);
    nm_report_u64(r, "clocks_table", t->c_table);
    nm_report_u64(r, "clocks_io_instructions", t->c_io);
    nm_report_u64(r, "clocks_interrupts", t->c_int);
    nm_report_u64(r, "clocks_pairing_saved", t->c_pair_saved);
    nm_report_u64(r, "clocks_rmw_pairs", t->c_rmw_pair);
    nm_report_u64(r, "clocks_agi", t->c_agi);
    nm_report_u64(r, "clocks_bank_conflicts", t->c_bank);
    nm_report_u64(r, "clocks_prefixes", t->c_prefix);
    nm_report_u64(r, "clocks_mispredicts", t->c_mispredict);
    nm_report_u64(r, "clocks_code_fills", t->c_code_fill);
    nm_report_u64(r, "clocks_data_fills", t->c_data_fill);
    nm_report_u64(r, "clocks_write_buffer", t->c_wbuf);
    nm_report_u64(r, "clocks_misaligned", t->c_misaligned);
    nm_report_u64(r, "clocks_locked", t->c_locked);
    nm_report_u64(r, "clocks_io_write_drain", t->c_io_drain);
    nm_report_u64(r, "clocks_tlb_walks", t->c_tlb);
    nm_report_u64(r, "tlb_code_hits", t->tlb_code_hits);
    nm_report_u64(r, "tlb_code_misses", t->tlb_code_misses);
    nm_report_u64(r, "tlb_data_hits", t->tlb_data_hits);
    nm_report_u64(r, "tlb_data_misses", t->tlb_data_misses);
    nm_report_u64(r, "tlb_flushes", s->data_tlb.stats.flushes);
    nm_report_u64(r, "tlb_page_flushes", s->data_tlb.stats.page_flushes);
    nm_report_u64(r, "tlb_walk_reads", t->tlb_walk_reads);
    nm_report_u64(r, "interpreter_walk_reads_not_charged", t->interp_walk_reads);
    nm_report_u64(r, "snoop_invalidations", t->snoop_invalidations);
    nm_report_u64(r, "snoop_writebacks", t->snoop_writebacks);
}

const nm_cost_model_class nm_cost_model_pentium = {
    .name = "pentium",
    .description = "Pentium P5/P54C: U/V pairing, AGI, prefixes, BTB, split 8 KB caches, "
                   "write buffers",
    .create = p5_create,
    .destroy = p5_destroy,
    .hooks =
        {
            .insn = p5_insn,
            .mem = p5_mem,
            .mem_log = p5_mem_log,
            .branch = p5_branch,
            .interrupt = p5_interrupt,
            /* p5_insn logs the instruction's code bytes itself */
            .mem_ignores_code = true,
            .insn_ignores_ea = true,
            .run = p5_run,
        },
    .report = p5_report,
    .snoop = p5_snoop,
};
