/* The Intel486 cost model (486DX, DX2, DX4).
 *
 * Numbers: "Intel486 Microprocessor Family Programmer's Reference Manual"
 * (order 240486), chapter "Instruction Set Summary" / appendix "Instruction
 * Clock Count Summary" table (the same as the Intel486 data book's table
 * "Clock Count Summary").  The table assumes cache hits, aligned operands,
 * no AGI and no prefixes; the rules below add:
 *   - prefixes: 1 clock per operand-size, address-size, segment or LOCK
 *     prefix (REP is in the string rows);
 *   - address generation: +1 for an index register in the address; +1
 *     when the base or index register of a memory operand was written by
 *     the previous instruction (both from the table's notes) in protected
 *     mode, and the address pipeline and register file rules Abrash
 *     measured (Graphics Programming Black Book ch. 12: 2 clocks in real
 *     mode, 1 for a pointer written two clocks before, ESP as an explicit
 *     destination only, byte loads before an address and before a read of
 *     their whole register; pipe_rules);
 *   - +3 for a memory operand that crosses a dword boundary (misaligned);
 *   - the on-chip cache: 8 KB unified, 4-way, 16-byte lines, pseudo-LRU,
 *     write-through, no allocation on write misses (cache.h).  A read miss
 *     (code or data) is a burst line fill from the board (membus.h
 *     nm_board: the L2 at 2-1-1-1 bus clocks, or DRAM at the dram-timing
 *     burst), converted to core clocks (nm_bus_to_core).  The burst
 *     returns the requested dword first and the other three in the 486
 *     order, dword index first ^ k for transfer k (0-4-8-C, 4-0-C-8,
 *     8-C-0-4, C-8-4-0: Intel's US patent 5,131,083, Crawford and
 *     Grochowski: "the original address is selected as the data item that
 *     the user initially wants to access"; Cyrix's US 5,644,788: the
 *     "conventional 486 burst ordering" is ascending or descending
 *     "depending upon the position of the requested address (critical
 *     Dword) within a cache line"); transfer k
 *     arrives first + k*burst bus clocks after the fill starts.  A reader
 *     waits only for the dwords it needs (the data read: its own dword,
 *     the first transfer; a later access to a line still filling: the
 *     transfer carrying its dword); the rest of the fill keeps the bus
 *     busy, so the next bus cycle waits for it (fill_rec).  The fill goes
 *     on the bus after the buffered writes, except that it passes them
 *     when all of them were cache hits, once until the buffer has
 *     emptied (Intel486 data book / Embedded Intel486 Hardware Reference
 *     Manual, "write buffers": "a memory read will go onto the external bus
 *     before the memory writes pending in the buffer ... only if all writes
 *     pending in the buffers are cache hits and the read is a cache miss");
 *   - a 4-entry write buffer: every write goes to the bus (write-through),
 *     taking one single transfer on the board (L2 write hit: 2 bus clocks,
 *     the minimum non-burst cycle; else the DRAM single time); the CPU
 *     stalls only when all 4 entries are waiting;
 *   - I/O: IN, OUT, INS, OUTS wait until the buffered writes are on the bus
 *     (Embedded Intel486 Hardware Reference Manual, 3.2 "bus interface
unit", p. 3-10: "Single I/O
 *     writes are never buffered. When processing an OUT instruction,
 *     internal execution stops until all buffered writes and the I/O write
 *     are completed"; an I/O read is not cacheable, so it does not pass
 *     them either).  The I/O bus cycle itself is the bus model's.
 * Code fetch: the prefetch queue (32 bytes, fed 16-byte blocks from the
 * cache: Abrash, Graphics Programming Black Book ch. 20, "the 486's
 * 32-byte prefetch queue"; N. Juffa, comp.sys.intel 1993, "prefetch
 * queue: 32 bytes", from Intel's i486 manuals) holds the block the
 * decoder is in and at most one block beyond it (Embedded Intel486
 * Hardware Reference Manual 3.4, p. 3-14: to keep prefetching from
 * reading past an address, "instructions should come no closer to that
 * address than one byte plus one aligned 16-byte block").  So when the
 * next byte to decode enters block B, the prefetcher asks for B+16: a
 * cache hit costs nothing, a miss is a line fill (dword 0 first) that
 * runs while B executes.  The prefetcher has the lowest priority on the
 * bus (ibid.: "the prefetch unit has the lowest priority for processor
 * bus access"): its miss waits until the bus is free of the cycles asked
 * for before it, and a data access asked for before that moment goes
 * first; a flush drops a prefetch that has not started.  An instruction
 * waits until the dwords holding its bytes are there: on a hit at once,
 * during a fill when their transfers arrive (straight-line code runs
 * while the rest of the burst comes in).
 * A taken branch, an interrupt, a CS load or any jump in the physical
 * address flushes the queue (ibid.: "flushed whenever the next
 * instruction needed is not in numerical sequence"): the target's block
 * is asked for when the target is to run, its dword first; a fill
 * already on the bus completes (the line is cached) and delays it.  The
 * queue does not cross a 4 KB page (the next page's translation is not
 * known here).  Code is fetched before the instruction's data accesses:
 * from the first memory or I/O hook of the instruction (its length is
 * EIP - insn_eip while it executes), else from the insn hook.
 * I/O and MMIO wait states are charged by the bus models; an MMIO access
 * is neither cached nor buffered here. */
#include "cpu/timing/i486.h"

#include <glib.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "cpu/hooked_loop.h"
#include "cpu/timing/cache.h"
#include "cpu/timing/membus.h"
#include "cpu/timing/timing.h"
#include "cpu/timing/tlb.h"
#include "cpu/timing/x86cost.h"
#include "cpu/timing/x87cost.h"

typedef struct row {
    uint8_t c[NM_FORM_COUNT];
} row;

/* Clock count summary rows (Intel486 programmer's reference, clock count
 * summary).  0: a rule in cost_of(). */
static const row table[NM_OP_COUNT] = {
    /* ALU: reg,reg 1; reg,mem 2; mem,reg 3; imm,reg 1; imm,mem 3 */
    [NM_OP_ADD] = {{1, 2, 3}},
    [NM_OP_OR] = {{1, 2, 3}},
    [NM_OP_ADC] = {{1, 2, 3}},
    [NM_OP_SBB] = {{1, 2, 3}},
    [NM_OP_AND] = {{1, 2, 3}},
    [NM_OP_SUB] = {{1, 2, 3}},
    [NM_OP_XOR] = {{1, 2, 3}},
    /* CMP: reg,reg 1; reg,mem 2; mem,reg 2; imm,mem 2.  TEST: 1 / 2
     * (HelpPC 2.10, TEST, gives reg,mem 1 but mem,reg 2 for the one
     * encoding 84/85 /r: kept at 2) */
    [NM_OP_CMP] = {{1, 2, 2}},
    [NM_OP_TEST] = {{1, 2, 2}},
    /* INC/DEC/NEG/NOT: reg 1, mem 3 */
    [NM_OP_INC] = {{1, 3, 3}},
    [NM_OP_DEC] = {{1, 3, 3}},
    [NM_OP_NEG] = {{1, 3, 3}},
    [NM_OP_NOT] = {{1, 3, 3}},
    /* MOV: reg,reg 1; mem to reg 1; reg to mem 1; imm to reg/mem 1 */
    [NM_OP_MOV] = {{1, 1, 1}},
    /* MOV r/m,Sreg 3 / 3 */
    [NM_OP_MOV_FROM_SREG] = {{3, 3, 3}},
    /* MOVSX/MOVZX 3 / 3 */
    [NM_OP_MOVSX] = {{3, 3, 3}},
    [NM_OP_MOVZX] = {{3, 3, 3}},
    /* LEA 1 (the index +1 rule applies) */
    [NM_OP_LEA] = {{1, 1, 1}},
    /* XCHG: reg,reg 3; with memory 5 (HelpPC 2.10, XCHG, says reg,mem 3 but
     * mem,reg 5 for the same 86/87 /r encoding; the x86 Norton Guide's 486
     * column has 5 for both: kept) */
    [NM_OP_XCHG] = {{3, 5, 5}},
    /* XADD: reg 3, mem 4; CMPXCHG: reg 6, mem 7 (8 if the compare fails,
     * not distinguished); BSWAP 1 */
    [NM_OP_XADD] = {{3, 4, 4}},
    [NM_OP_CMPXCHG] = {{6, 7, 7}},
    [NM_OP_BSWAP] = {{1, 1, 1}},
    /* CBW 3; CWD 3; LAHF 3; SAHF 2; XLAT 4 */
    [NM_OP_CBW] = {{3, 3, 3}},
    [NM_OP_CWD] = {{3, 3, 3}},
    [NM_OP_LAHF] = {{3, 3, 3}},
    [NM_OP_SAHF] = {{2, 2, 2}},
    [NM_OP_XLAT] = {{4, 4, 4}},
    /* PUSH: reg 1, mem 4, imm 1; POP: reg 1, mem 6 (HelpPC 2.10, POP, has
     * reg 4, its 386 figure; the x86 Norton Guide's 486 column has 1: kept) */
    [NM_OP_PUSH] = {{1, 4, 4}},
    [NM_OP_POP] = {{1, 6, 6}},
    /* PUSH Sreg 3; PUSHA 11; POPA 9; PUSHF 4 (3 in PM, not distinguished);
     * LEAVE 5 */
    [NM_OP_PUSH_SREG] = {{3, 3, 3}},
    [NM_OP_PUSHA] = {{11, 11, 11}},
    [NM_OP_POPA] = {{9, 9, 9}},
    [NM_OP_PUSHF] = {{4, 4, 4}},
    [NM_OP_LEAVE] = {{5, 5, 5}},
    /* SHLD/SHRD: reg,imm 2; mem,imm 3; reg,CL 3; mem,CL 4 (CL: +1 rule) */
    [NM_OP_SHLD] = {{2, 3, 3}},
    [NM_OP_SHRD] = {{2, 3, 3}},
    /* DAA/DAS 2; AAA/AAS 3; AAM 15; AAD 14; SALC (undocumented) 2 */
    [NM_OP_DAA] = {{2, 2, 2}},
    [NM_OP_DAS] = {{2, 2, 2}},
    [NM_OP_AAA] = {{3, 3, 3}},
    [NM_OP_AAS] = {{3, 3, 3}},
    [NM_OP_AAM] = {{15, 15, 15}},
    [NM_OP_AAD] = {{14, 14, 14}},
    [NM_OP_SALC] = {{2, 2, 2}},
    /* BOUND 7 (in range) */
    [NM_OP_BOUND] = {{7, 7, 7}},
    /* NOP 1; HLT 4; CLI 5; STI 5; CLC/STC/CMC/CLD/STD 2; WAIT 1 (no FPU) */
    [NM_OP_NOP] = {{1, 1, 1}},
    [NM_OP_HLT] = {{4, 4, 4}},
    [NM_OP_CLI] = {{5, 5, 5}},
    [NM_OP_STI] = {{5, 5, 5}},
    [NM_OP_CLC] = {{2, 2, 2}},
    [NM_OP_STC] = {{2, 2, 2}},
    [NM_OP_CMC] = {{2, 2, 2}},
    [NM_OP_CLD] = {{2, 2, 2}},
    [NM_OP_STD] = {{2, 2, 2}},
    [NM_OP_WAIT] = {{1, 1, 1}},
    [NM_OP_ESC] = {{1, 1, 1}}, /* (WAIT, ESC and the x87's: x87cost.c) */
    /* system: SLDT 2/3; STR 2/3; LLDT 11; LTR 20; VERR 11; VERW 11;
     * SGDT/SIDT 10; LGDT/LIDT 11; SMSW 2/3; LMSW 13; LAR 11; LSL 10; ARPL 9/9;
     * CLTS 7; INVD 4; WBINVD 5; INVLPG 12; CPUID 14 (SL-enhanced parts) */
    [NM_OP_SLDT] = {{2, 3, 3}},
    [NM_OP_STR] = {{2, 3, 3}},
    [NM_OP_LLDT] = {{11, 11, 11}},
    [NM_OP_LTR] = {{20, 20, 20}},
    [NM_OP_VERR] = {{11, 11, 11}},
    [NM_OP_VERW] = {{11, 11, 11}},
    [NM_OP_SGDT] = {{10, 10, 10}},
    [NM_OP_SIDT] = {{10, 10, 10}},
    [NM_OP_LGDT] = {{11, 11, 11}},
    [NM_OP_LIDT] = {{11, 11, 11}},
    [NM_OP_SMSW] = {{2, 3, 3}},
    [NM_OP_LMSW] = {{13, 13, 13}},
    [NM_OP_LAR] = {{11, 11, 11}},
    [NM_OP_LSL] = {{10, 10, 10}},
    [NM_OP_ARPL] = {{9, 9, 9}},
    [NM_OP_CLTS] = {{7, 7, 7}},
    [NM_OP_INVD] = {{4, 4, 4}},
    [NM_OP_WBINVD] = {{5, 5, 5}},
    [NM_OP_INVLPG] = {{12, 12, 12}},
    [NM_OP_CPUID] = {{14, 14, 14}},
};

/* Strings: single; REP with n > 0: base + each*n (MOVS 7, REP 12+3n;
 * CMPS 8, REP 7+7n; SCAS 6, REP 7+5n; LODS 5, REP 7+4n; STOS 5, REP 7+4n;
 * REP with ECX = 0: 5). */
typedef struct str_row {
    uint8_t single, rep_base, rep_each;
} str_row;
static const str_row strings[] = {
    [NM_OP_MOVS - NM_OP_MOVS] = {7, 12, 3}, [NM_OP_CMPS - NM_OP_MOVS] = {8, 7, 7},
    [NM_OP_SCAS - NM_OP_MOVS] = {6, 7, 5},  [NM_OP_LODS - NM_OP_MOVS] = {5, 7, 4},
    [NM_OP_STOS - NM_OP_MOVS] = {5, 7, 4},
};

/* I/O by nm_io_class (real, PM CPL<=IOPL, PM CPL>IOPL, V86).  IN AL,imm8
 * is 14 / 8 / 28 / 27 like IN AL,DX: HelpPC 2.10, IN (and the pages
 * copied from it), the only figure found; the Intel486 book's IN page is
 * not in the sources searched, and the 9 / 29 this model had (one more
 * than the DX form, as OUT imm8 is) had no source.  OUT imm8 11 / 31 / 29,
 * OUT DX 10 / 30 / 29 (HelpPC 2.10, OUT). */
static const uint8_t in_imm[4] = {14, 8, 28, 27}, in_dx[4] = {14, 8, 28, 27};
static const uint8_t out_imm[4] = {16, 11, 31, 29}, out_dx[4] = {16, 10, 30, 29};
static const uint8_t ins_one[4] = {17, 10, 32, 30}, ins_rep[4] = {16, 10, 30, 29};   /* + 8n */
static const uint8_t outs_one[4] = {17, 10, 32, 30}, outs_rep[4] = {17, 11, 31, 30}; /* + 5n */

/* Control transfers by nm_xfer_class (real, same, gate, privilege, V86,
 * task).  Task switch: the "TS" table, 486 TSS to 486 TSS = 199. */
#define TS 199
/* INT n: real 26; PM same 44; to inner 71; from V86 82; task gate 37+TS */
static const uint16_t int_n[6] = {26, 44, 44, 71, 82, 37 + TS};
/* IRET: real 15; PM same 20; to outer 36; task 32+TS */
static const uint16_t iret_t[6] = {15, 20, 20, 36, 36, 32 + TS};
/* CALL far direct: real 18; PM 20; gate same 35; to inner (no params) 69;
 * task 37+TS.  Indirect: 17, 20, 35, 69, 37+TS. */
static const uint16_t callf_d[6] = {18, 20, 35, 69, 69, 37 + TS},
                      callf_m[6] = {17, 20, 35, 69, 69, 37 + TS};
/* JMP far direct: real 17; PM 19; gate 32; task 42+TS.  Indirect: 13, 18, 31. */
static const uint16_t jmpf_d[6] = {17, 19, 32, 32, 32, 42 + TS},
                      jmpf_m[6] = {13, 18, 31, 31, 31, 41 + TS};
/* RET far: real 13; PM same 18; to outer 33 */
static const uint16_t retf_t[6] = {13, 18, 18, 33, 33, 33};

#define LINE 16u
/* The TLB's sets (4 ways each, i486_create), a constant of its lookups. */
#define TLB_SETS 8u
/* The L2's burst in bus clocks: 2-1-1-1, the 486 bus's zero-wait-state
 * burst (Intel486 data book, "burst cycles"; docs/cost-models.md "board"). */
#define L2_FIRST 2u
#define L2_BURST 1u
/* Line fills remembered for their transfers' arrival times.  The bus does
 * one fill at a time, so a fill older than the last NFILL has long ended. */
#define NFILL 8u

/* One burst line fill: it occupies the bus from `start`; transfer k (the
 * dword first ^ k of the line) is in at start + off[k]. */
typedef struct fill_rec {
    uint32_t line; /* physical line address */
    bool used;
    uint8_t first; /* requested dword, 0..3 */
    uint64_t start;
    uint32_t off[4];
} fill_rec;

/* nm_bus_to_core of the first bus clock counts, worked out once */
#define BUS_CORE_N 64u

/* Address generation and the register file: what the two instructions
 * before one leave for its address rules (pipe_clocks), kept as one word
 * between instructions (i486_state.haz, and the stretches' and walks'
 * records):
 *   HAZ_R0: the register the last one wrote (written_reg; NM_REG_NONE: none),
 *   HAZ_R1: the one the instruction before it wrote, when the last one
 *           took one clock (else none): written two clocks before,
 *   HAZ_B0: the last one loaded a byte register (loads_byte_reg; HAZ_R0's),
 *   HAZ_B1: the one before it did, and the last one took one clock,
 *   HAZ_REAL: the next instruction runs in real or virtual-8086 mode.
 * Cycles, not instructions: Abrash, ch. 12, "If a register is loaded 2
 * cycles (which generally means 2 instructions, but, because some 486
 * instructions take more than 1 cycle, the 2 are not always equivalent)";
 * ch. 13, Terje Mathisen's WC loop: a load of DI followed by a 2-cycle ADD
 * then DI as the pointer, "because the intervening instruction takes two
 * cycles, there's no penalty at all".  An instruction's clocks here are
 * all it was charged (its row, prefixes, these rules, its stalls). */
#define HAZ_R0    0x000fu
#define HAZ_B0    0x0010u
#define HAZ_R1    0x0f00u /* (HAZ_R0 and HAZ_B0 of the one before: << 8) */
#define HAZ_B1    0x1000u
#define HAZ_REAL  0x8000u
#define HAZ_EMPTY ((NM_REG_NONE << 8) | NM_REG_NONE) /* nothing written, no byte load */
_Static_assert(NM_REG_NONE == 8, "HAZ_R0 / HAZ_R1 hold a register or NM_REG_NONE in 4 bits");

/* haz with the mode bit for the CPU's mode now. */
static inline unsigned haz_mode(unsigned h, const nm_cpu *c)
{
    return (h & ~HAZ_REAL) | (!c->pe || c->vm86 ? HAZ_REAL : 0u);
}

typedef struct i486_state {
    nm_cpu *cpu;
    const nm_cpu_model *model;
    uint32_t bus_core[BUS_CORE_N];
    nm_cache *cache;
    nm_membus bus;
    nm_wbuf wbuf;
    nm_board board;                  /* L2 and DRAM */
    unsigned dram_first, dram_burst; /* the DRAM burst, bus clocks (dram-timing) */
    /* write-buffer reordering: a buffered write that missed the cache is
     * on the bus until miss_write_done; no second read passes before
     * ahead_blocked_until (the buffer empties) */
    uint64_t miss_write_done, ahead_blocked_until;
    fill_rec fills[NFILL]; /* the last line fills, a ring */
    unsigned fill_head;
    uint32_t fill_lines;    /* bit (line / LINE) % 32 of each line in fills: most lookups miss */
    unsigned fill_slot[32]; /* by that bit: the fill_head of the last fill of such a line */
    uint8_t fill_count[32]; /* by that bit: how many lines in fills have it */
    /* every fill started so far has all its dwords in by then: from then
     * on (the clock only moves on) the time a line's fill brought its last
     * dword, kept only to be compared with a later clock (ready_at,
     * arm_next_insn), may be taken as fills_in_at, without the search */
    uint64_t fills_in_at;
    /* the prefetch queue: holds the lines from the one of the next byte to
     * decode up to pq_last (a physical line address; the line before the
     * first one when empty), in it or coming; pq_next is the byte after
     * the last instruction decoded */
    bool pq_valid;
    uint32_t pq_last, pq_next;
    /* prefetch misses asked for but not on the bus yet (lowest priority:
     * a data access asked for before the bus frees goes first); at most
     * two, the queue's two 16-byte blocks */
    uint32_t pf_line[2];
    uint64_t pf_at[2];
    unsigned pf_n;
    /* this instruction's code: fetched for (lin, len) at phys; its bytes
     * were all in at code_ready */
    bool code_done;
    bool code_armed; /* ... by code_fetch_armed */
    uint32_t code_lin, code_len, code_phys;
    uint64_t code_ready;
    /* what code_fetch last learned of a line: all its dwords were in by
     * ready_at (0: no fill on record), true while no fill has started
     * since (fill_head == ready_head).  Straight-line code asks for the
     * same line several times; this spares the search of the fills. */
    uint32_t ready_line;
    unsigned ready_head;
    uint64_t ready_at;
    /* The same, made ready for the next instruction when one ends
     * (arm_next_insn): an instruction whose bytes start at pq_next and
     * end in line arm_line would pass code_fetch_slow's first test (the
     * queue valid and holding the line, no prefetch of it pending, the
     * cache on) once every dword of the line is in (from arm_ready on), as
     * long as no fill has started since (start_fill disarms) and the
     * memory map is as it was (arm_gen: the line is RAM).  arm_line 1 (not
     * a line): none.  arm_fast: arm_line when its dwords were all in by the
     * start of the instruction that armed it (the fast path's test), else
     * 1.  arm_stay: arm_line when the line after it is queued
     * too (pq_last past it), else 1: an instruction ending in it then asks
     * the prefetcher for nothing and leaves the same line armed (the fast
     * path's end test; every flush disarms).  arm_two: arm_line when the
     * line after it is ready too (queued, in the same 4 KB page, no
     * prefetch of it pending, all in, and arm_fast too), else 1: an
     * instruction from pq_next into that line passes code_fetch_slow's
     * steps with nothing to do. */
    uint32_t arm_line, arm_fast, arm_gen, arm_stay, arm_two;
    uint64_t arm_ready; /* the line's dwords are all in from then on */
    /* the record of the armed line's fill when arm_ready came from one
     * (arm_ready past the instruction's start); valid while armed, as
     * every fill started disarms: code_wait_armed needs no search */
    const fill_rec *arm_rec;
    /* fill_offsets' burst offsets for the last two (first, burst) pairs
     * (first UINT_MAX: none) */
    struct {
        unsigned first, burst;
        uint32_t off[4];
    } off_memo[2];
    bool shortcuts_off;      /* a test's: the searches the kept records spare done again */
    const uint32_t *map_gen; /* &cpu->mem->map_gen */
    /* this instruction */
    uint32_t stall;                                      /* cache / write-buffer stall so far */
    uint32_t code_stall, data_stall, wb_stall, io_stall; /* parts of stall */
    uint32_t accesses;                                   /* data accesses so far */
    uint32_t rep_pace, rep_stride; /* REP string: clocks per iteration, accesses per iteration */
    uint32_t misaligned;
    uint32_t last_read_phys;
    bool taken;
    /* across instructions */
    nm_x86_mode prev;
    unsigned haz; /* what the two instructions before leave for the address rules (HAZ_*) */
    bool rep_continues;
    /* counters */
    uint64_t insns, agi, misaligned_count, fill_stall, wbuf_stall;
    uint64_t split_writes; /* stores across a dword: two bus cycles */
    uint64_t code_misses, data_misses, async_transfers, taken_transfers, reads_ahead;
    uint64_t prefetch_fills, queue_flushes, fill_waits;
    /* The TLB: 32 entries, 4-way, pseudo-LRU (tlb.h).  tlb_cr3/tlb_paging
     * are what it was filled under: a change flushes it. */
    nm_tlb tlb;
    uint32_t tlb_cr3;
    bool tlb_paging;
    uint32_t tlb_stall; /* this instruction's page walks (part of stall) */
    uint64_t tlb_code_hits, tlb_code_misses, tlb_data_hits, tlb_data_misses;
    uint64_t walk_reads, interp_walk_reads;
    uint64_t snoop_invalidations;
    uint64_t clocks; /* (apart from insns: two scalar adds in the fast path, not one vector) */
    /* where the clocks went (they sum to `clocks`; each counted where it is
     * charged, so that the sum is a check) */
    uint64_t c_io, c_int, c_prefix, c_index, c_agi, c_ahead, c_partial, c_misaligned;
    uint64_t c_code_fill, c_data_fill, c_wbuf, c_io_drain, c_tlb;
    uint64_t c_base; /* (not next to `clocks`: the two adds would become one vector add) */
    /* i486_ahead: stretches off (a test's), and the instructions run in
     * them; i486_run's gate: the window so far, and when the rest ends */
    bool stretch_off;
    uint64_t stretch_insns;
    /* the Jcc the last stretch ended with (i486_ahead_branch): its
     * physical address, length, start clock and the clocks a jump adds */
    uint32_t jcc_phys, jcc_len, jcc_extra;
    uint64_t jcc_start;
    bool jcc_cross; /* its next byte in the next line: its line change (or its jump's) */
    /* the last stretch flagged NM_STRETCH_LOOP: its walk, place, page tag,
     * EIP and start (i486_ahead_branch's `again`) */
    const struct i486_run_memo *loop;
    uint32_t loop_phys, loop_lin, loop_page_tag, loop_eip;
    uint64_t loop_now;
    uint64_t loop_again; /* the runs made after the first (a test's count) */
    uint64_t window_insns, window_stretch, stretch_back_at;
    struct i486_stretch *stretch; /* STRETCH_SIZE */
    struct i486_run_memo *runs;   /* RUN_MEMO_SIZE */
    const char *ic_base;          /* the decoded-instruction cache's first instruction */
    nm_x87_timing x87;            /* the on-chip FPU (x87cost.h) */
} i486_state;
/* What i486_ahead works out of the instructions from one in its line (a
 * stretch's extent and sums) after the address rules' state haz_in, kept
 * by the first one's place in the decoded-instruction cache while the
 * page's decoded instructions are those (its tag and the icache's page
 * generation) and it is reached with that state. */
struct i486_stretch {
    uint64_t tag; /* 0: none */
    uint32_t gen;
    uint16_t haz_in, haz_out; /* the address rules' state before the first and after the last */
    uint8_t n, bytes, pfx, index, agi_n, agi, ahead, partial; /* rule_sums' */
    uint16_t clocks, base; /* clocks: rows, prefixes and the address rules */
    /* the instruction after them when it is one whose next byte is in the
     * next line (0: none; its sums and its fast_end at each use): a
     * register-only one, or a near Jcc (a stretch may end with it:
     * NM_STRETCH_BRANCH) */
    uint8_t cross_len;
    /* else the near Jcc after them, its next byte in the line too (0:
     * none; a stretch may end with it) */
    uint8_t jcc_len;
};
/* What the fast path's ends leave of the queue that its next instruction's
 * fetch test and end read (i486_insn_inline, fast_tail, fast_end_easy),
 * followed through a stretch without changing the model (i486_ahead). */
typedef struct {
    uint32_t arm_line, arm_fast, arm_stay, arm_two, pq_last;
    bool pf_pending;
} queue_view;

/* i486_ahead's walk's outcome (run_walk). */
enum { RUN_MAX_CHANGES = 8 };
typedef struct {
    uint32_t n, clocks, bytes;
    uint32_t base, pfx, index, agi_n, agi, ahead, partial;
    uint16_t haz; /* the address rules' state after it */
    uint8_t changes;
    /* the near Jcc it ends with (jcc_len 0: none), counted as not taken:
     * its place, its start (clocks from the first one's) and the clocks a
     * jump adds; jcc_cross: its next byte in the next line (the last line
     * change its own, made only if it does not jump) */
    uint8_t jcc_len, jcc_extra, jcc_cross;
    /* loops: that Jcc jumps back to the first one (NM_STRETCH_LOOP);
     * end_pending: the line after the last change's is not in the cache (a
     * prefetch of it pending after the stretch) */
    uint8_t loops, end_pending;
    uint16_t jcc_off;
    uint32_t jcc_spent;
    uint16_t change_off[RUN_MAX_CHANGES];
    uint8_t change_len[RUN_MAX_CHANGES];
    uint32_t change_spent[RUN_MAX_CHANGES];
} run_sums;

/* What i486_ahead's walk found from an instruction (its icache place) with
 * every fill all in (so nothing of the clock read): the same while the
 * page's decoded instructions (tag, generation), the lines the cache holds
 * (content_gen), the address rules' state (haz), the queue and whether it
 * is in use are. */
struct i486_run_memo {
    uint64_t tag; /* 0: none */
    uint32_t gen;
    uint64_t cache_gen;
    queue_view q;
    uint16_t haz_in;
    bool pq_valid;
    run_sums out;
};
/* The most runs of a loop's body the loop makes at once (NM_STRETCH_LOOP;
 * its step limit and the deadline bound it anyway). */
#define LOOP_REPS_MAX 65536u
#define RUN_MEMO_BITS 14
#define RUN_MEMO_SIZE (1u << RUN_MEMO_BITS)

#define STRETCH_BITS   16
#define STRETCH_SIZE   (1u << STRETCH_BITS)
#define STRETCH_WINDOW 65536u
#define STRETCH_SHARE  5u
#define STRETCH_REST   (1024u * 1024u)

static void last_transfer_init(void);

/* Nothing made ready for the next instruction (arm_next_insn). */
static inline void disarm(i486_state *s)
{
    s->arm_line = 1;
    s->arm_fast = 1;
    s->arm_stay = 1;
    s->arm_two = 1;
}

static void *i486_create(nm_cpu *cpu, const nm_cpu_model *model, const nm_timing_params *p)
{
    nm_cache_config cc = {"l1", 8192, 4, LINE, NM_CACHE_WRITE_THROUGH, false, NM_CACHE_PLRU};
    nm_cache *cache = nm_cache_new(&cc);
    if (!cache) return NULL;
    if (!nm_cache_is_i486(cache)) { /* (the nm_cache_i486_* instance is compiled for it) */
        nm_cache_free(cache);
        return NULL;
    }
    i486_state *s = g_new0(i486_state, 1);
    s->cpu = cpu;
    s->model = model;
    s->cache = cache;
    nm_wbuf_init(&s->wbuf, 4);
    /* The L2: 2-1-1-1 bursts and 2-clock single writes (the minimum
     * non-burst cycle); docs/cost-models.md "board" for the sources. */
    nm_board_timing bt = nm_board_timing_of(p, L2_FIRST, L2_BURST, 2);
    if (!nm_board_init(&s->board, model, &bt, LINE)) {
        nm_cache_free(cache);
        g_free(s);
        return NULL;
    }
    s->dram_first = p->dram_first_clocks;
    s->dram_burst = p->dram_burst_clocks;
    /* 32 entries, 4-way: Embedded Intel486 Hardware Reference Manual,
     * fig. 3-7 (8 sets x 4 ways, set = linear bits 14:12); 4 KB pages only
     * (the 486 has no PSE). */
    static const nm_tlb_config tc = {"tlb", TLB_SETS * NM_TLB_WAYS, 0};
    nm_tlb_init(&s->tlb, &tc);
    s->tlb_cr3 = cpu->cr3;
    s->tlb_paging = cpu->paging;
    s->prev = nm_x86_mode_now(cpu);
    s->haz = haz_mode(HAZ_EMPTY, cpu);
    s->ready_at = UINT64_MAX; /* nothing learned yet */
    s->off_memo[0].first = s->off_memo[1].first = UINT_MAX;
    last_transfer_init(); /* (the same table each time) */
    disarm(s);
    s->map_gen = &cpu->mem->map_gen;
    for (unsigned k = 0; k < BUS_CORE_N; k++)
        s->bus_core[k] = nm_bus_to_core(model, k);
    s->stretch = g_new0(struct i486_stretch, STRETCH_SIZE);
    s->runs = g_new0(struct i486_run_memo, RUN_MEMO_SIZE);
    s->ic_base = (const char *)&((const icache *)cpu->icache)->e[0].insn;
    return s;
}

static void i486_resume(void *st, nm_cpu *cpu)
{
    i486_state *s = st;
    s->prev = nm_x86_mode_now(cpu);
    s->rep_continues = false;
    s->taken = false;
    s->haz = haz_mode(HAZ_EMPTY, cpu);
    s->pq_valid = false; /* the CPU ran elsewhere meanwhile */
    s->pf_n = 0;
    s->code_done = s->code_armed = false;
    disarm(s);
    /* CR3 may have been loaded meanwhile: the TLB is unknown, start empty. */
    nm_tlb_flush(&s->tlb);
    s->tlb_cr3 = cpu->cr3;
    s->tlb_paging = cpu->paging;
}

static void i486_destroy(void *st)
{
    i486_state *s = st;
    g_free(s->stretch);
    g_free(s->runs);
    nm_cache_free(s->cache);
    nm_board_free(&s->board);
    g_free(s);
}

static inline bool is_mmio(const nm_cpu *c, uint32_t phys)
{
    const nm_mem_region *r = c->mem->page_region[phys >> NM_PAGE_SHIFT];
    return r && r->kind == NM_REGION_MMIO && c->mem->page_whole[phys >> NM_PAGE_SHIFT];
}

/* When an access of this instruction happens: its start, the stalls so far,
 * and one clock per earlier access (the 486 makes at most one per clock). */
/* When the instruction's next access happens: one clock after the one
 * before (the 486 makes at most one access a clock), or, inside a REP
 * string, one iteration's clocks after the previous iteration's (the
 * table's per-iteration figure: REP STOS 4 a store), so that a string's
 * writes reach the write buffer at the pace the CPU makes them, like a
 * loop of MOVs would. */
static inline __attribute__((always_inline)) uint64_t now_of(const i486_state *s)
{
    uint64_t t = s->cpu->clock->cycles + s->stall;
    if (s->rep_pace)
        return t + (uint64_t)(s->accesses / s->rep_stride) * s->rep_pace +
               s->accesses % s->rep_stride;
    return t + s->accesses;
}

/* At an instruction's first data access: a REP string's pacing. */
static void rep_pacing(i486_state *s)
{
    const nm_insn *i = s->cpu->cur_insn;
    s->rep_pace = 0;
    if (!i || !(i->prefixes & (NM_PFX_REP | NM_PFX_REPNE)) || i->op < NM_OP_MOVS ||
        i->op > NM_OP_STOS)
        return;
    s->rep_pace = strings[i->op - NM_OP_MOVS].rep_each;
    s->rep_stride = (i->op == NM_OP_MOVS || i->op == NM_OP_CMPS) ? 2 : 1;
}

static inline void add_read_stall(i486_state *s, uint32_t st, bool code)
{
    s->stall += st;
    s->fill_stall += st;
    if (code)
        s->code_stall += st;
    else
        s->data_stall += st;
}

/* Arrival of each transfer of a fill that took `cost` core clocks on the
 * bus: the L2's 2-1-1-1 or the DRAM's first-burst-burst-burst, cumulative
 * bus clocks rounded up to core clocks (so off[3] == cost).  A fill of
 * 2 x the DRAM burst wrote a dirty L2 victim back first (membus.h
 * nm_board_line_read): its transfers come after that write.  (A DRAM
 * burst as long as the L2's is 2-1-1-1 too: dram-timing clocks are >= 1.) */
static void fill_offsets(i486_state *s, uint32_t cost, uint32_t off[4])
{
    (void)cost;
    unsigned first = s->board.last_first, burst = s->board.last_burst;
    uint32_t base = s->board.last_before;
    /* The burst's own offsets depend on (first, burst) alone, the L2's or
     * the DRAM's: kept for the last two pairs seen, not worked out each fill. */
    unsigned m = s->off_memo[1].first == first && s->off_memo[1].burst == burst;
    if (unlikely(s->shortcuts_off) ||
        (!m && (s->off_memo[0].first != first || s->off_memo[0].burst != burst))) {
        s->off_memo[1] = s->off_memo[0];
        m = 0;
        s->off_memo[0].first = first;
        s->off_memo[0].burst = burst;
        for (unsigned k = 0; k < 4; k++) {
            unsigned bus = first + k * burst;
            s->off_memo[0].off[k] =
                bus < BUS_CORE_N ? s->bus_core[bus] : nm_bus_to_core(s->model, bus);
        }
    }
    for (unsigned k = 0; k < 4; k++)
        off[k] = base + s->off_memo[m].off[k];
}

/* A burst fill of the line holding `phys`, its dword first, asked for at
 * `now`: on the bus after the buffered writes unless it may pass them. */
static const fill_rec *start_fill(i486_state *s, uint32_t phys, uint64_t now)
{
    uint32_t cost = nm_board_line_read(&s->board, phys, nm_membus_start(&s->bus, now));
    uint64_t done;
    uint64_t empty = nm_wbuf_empty_at(&s->wbuf, now);
    if (empty > now && s->miss_write_done <= now && s->ahead_blocked_until <= now) {
        done = nm_wbuf_read_ahead(&s->wbuf, &s->bus, now, cost);
        s->ahead_blocked_until = nm_wbuf_empty_at(&s->wbuf, now);
        s->reads_ahead++;
    } else {
        done = nm_membus_use(&s->bus, now, cost);
    }
    s->fill_slot[((phys & ~(LINE - 1)) / LINE) % 32] = s->fill_head;
    fill_rec *f = &s->fills[s->fill_head++ % NFILL];
    disarm(s); /* what was made ready assumed no fill since */
    /* the record this one replaces leaves the hash */
    if (f->used) {
        unsigned old = (f->line / LINE) % 32;
        if (--s->fill_count[old] == 0) s->fill_lines &= ~(1u << old);
    }
    f->line = phys & ~(LINE - 1);
    f->used = true;
    f->first = (uint8_t)((phys >> 2) & 3);
    f->start = done - cost;
    fill_offsets(s, cost, f->off);
    if (f->start + f->off[3] > s->fills_in_at) s->fills_in_at = f->start + f->off[3]; /* all in */
    unsigned bit = (f->line / LINE) % 32;
    s->fill_count[bit]++;
    s->fill_lines |= 1u << bit;
    return f;
}

/* The record of the last fill of `line`, NULL if none is on record. */
static inline __attribute__((always_inline)) const fill_rec *fill_of(const i486_state *s,
                                                                     uint32_t line)
{
    if (!(s->fill_lines & (1u << ((line / LINE) % 32)))) return NULL; /* not on record */
    /* The last fill of a line like it: the last of this line if it is one
     * (a later fill of the line would be there instead), while on record. */
    unsigned slot = s->fill_slot[(line / LINE) % 32];
    const fill_rec *last = &s->fills[slot % NFILL];
    if (s->fill_head - slot <= NFILL && last->used && last->line == line) return last;
    /* The last fill with the bit is the only record with it: not this line */
    if (s->fill_count[(line / LINE) % 32] == 1) return NULL;
    for (unsigned k = 1; k <= NFILL; k++) {
        const fill_rec *f = &s->fills[(s->fill_head - k) % NFILL];
        if (f->used && f->line == line) return f;
    }
    return NULL;
}

/* When dwords d0..d1 of the line of fill `f` are all in: the latest of
 * their transfers; 0 without a record (cached long ago). */
/* The latest transfer of dwords d0..d1 (d0 <= d1) of a fill that began
 * with dword `first`: max of d ^ first over them, [first][d0][d1]; the
 * offsets grow with the transfer (fill_offsets: bus clocks rounded up to
 * core clocks, a non-decreasing map), so its arrival is theirs. */
static uint8_t last_transfer[4][4][4];
static void last_transfer_init(void)
{
    for (unsigned f = 0; f < 4; f++)
        for (unsigned d0 = 0; d0 < 4; d0++)
            for (unsigned d1 = d0; d1 < 4; d1++) {
                unsigned k = 0;
                for (unsigned d = d0; d <= d1; d++)
                    if ((d ^ f) > k) k = d ^ f;
                last_transfer[f][d0][d1] = (uint8_t)k;
            }
}
static inline uint64_t fill_dwords_in(const fill_rec *f, unsigned d0, unsigned d1)
{
    if (!f || unlikely(d0 > d1)) return 0; /* (no dwords: none to wait for) */
    return f->start + f->off[last_transfer[f->first][d0][d1]];
}

/* When all four dwords of the line of fill `f` are in: its last transfer
 * (the offsets grow with k: fill_offsets), 0 without a record. */
static inline uint64_t fill_all_in(const fill_rec *f)
{
    return f ? f->start + f->off[3] : 0;
}

static void settle_prefetch_slow(i486_state *s, uint64_t t, bool all);
/* settle_prefetch below; nothing to do (the common case) inline */
static inline __attribute__((always_inline)) void settle_prefetch(i486_state *s, uint64_t t,
                                                                  bool all)
{
    if (s->pf_n) settle_prefetch_slow(s, t, all);
}

/* A data read of `size` bytes at `phys` within one line: a hit waits only
 * for a fill of the line still coming in; a miss starts a fill and waits
 * for the dwords it needs (its own first). */
static void __attribute__((noinline)) read_line_slow(i486_state *s, uint32_t phys, uint32_t size)
{
    uint64_t now = now_of(s);
    settle_prefetch(s, now, false);
    /* CR0.CD: the cache is neither filled nor used (NW is not modelled). */
    if (s->cpu->cr0 & NM_CR0_CD) {
        uint64_t done = nm_membus_use(
            &s->bus, now, nm_board_single_read(&s->board, phys, nm_membus_start(&s->bus, now)));
        add_read_stall(s, (uint32_t)(done - now), false);
        return;
    }
    uint32_t line = phys & ~(LINE - 1);
    unsigned d0 = (phys >> 2) & 3, d1 = ((phys + (size ? size - 1 : 0)) >> 2) & 3;
    bool hit = nm_cache_i486_access(s->cache, phys, false, NULL) & NM_CACHE_HIT;
    const fill_rec *f = NULL;
    if (!hit) {
        s->data_misses++;
        f = start_fill(s, phys, now); /* the line's last fill: no search */
    }
    if (hit || unlikely(s->shortcuts_off)) f = fill_of(s, line);
    uint64_t in = fill_dwords_in(f, d0, d1);
    if (in > now) {
        if (hit) s->fill_waits++;
        add_read_stall(s, (uint32_t)(in - now), false);
    }
}

/* read_line, its common case inline: no prefetch pending, the cache on,
 * no fill of the line on record or every fill all in by now (no wait) and
 * the line the one its set used last (a hit that changes nothing but the
 * counters). */
static inline __attribute__((always_inline)) void read_line(i486_state *s, uint32_t phys,
                                                            uint32_t size)
{
    if (s->pf_n == 0 && !(s->cpu->cr0 & NM_CR0_CD) &&
        (!(s->fill_lines & (1u << ((phys / LINE) % 32))) || s->fills_in_at <= now_of(s)) &&
        nm_cache_i486_read_set_mru(s->cache, phys))
        return;
    read_line_slow(s, phys, size);
}

/* A TLB miss: the chip reads the PDE and the PTE of `lin` from the
 * physical page tables, through the cache like any data read ("The cache
 * can be used to supply data for the TLB", Embedded Intel486 Hardware
 * Reference Manual 3.5, p. 3-17): a read that misses is a line fill from
 * the board.  No Intel figure for a fixed miss overhead was found; each
 * page-table read is charged the one clock of its cache access (the model
 * places accesses one clock apart, as the 486 makes at most one a clock)
 * plus what the read waits for.  The A/D bit writes are the interpreter's
 * page-walk writes, charged as writes when they come (cpu/mmu.c writes a
 * bit only when it changes, as the chip does). */
static void tlb_walk(i486_state *s, uint32_t lin)
{
    uint32_t addr[2];
    bool big;
    unsigned n = nm_tlb_walk_addrs(s->cpu, lin, addr, &big);
    uint32_t stall0 = s->stall, data0 = s->data_stall;
    for (unsigned k = 0; k < n; k++) {
        s->walk_reads++;
        s->stall += 1;
        if (!is_mmio(s->cpu, addr[k])) read_line(s, addr[k], 4);
        s->accesses++;
    }
    /* read_line booked its waits as data fills: they are the walk's */
    s->data_stall = data0;
    s->tlb_stall += s->stall - stall0;
    nm_tlb_fill(&s->tlb, lin, big);
}

/* Every access with paging on looks up the TLB, for each page it touches. */
static void __attribute__((noinline))
tlb_access_slow(i486_state *s, uint32_t lin, uint32_t size, bool code)
{
    uint32_t last = lin + (size ? size - 1 : 0);
    for (;;) {
        bool hit = nm_tlb_lookup(&s->tlb, lin);
        if (code) {
            s->tlb_code_hits += hit;
            s->tlb_code_misses += !hit;
        } else {
            s->tlb_data_hits += hit;
            s->tlb_data_misses += !hit;
        }
        if (!hit) tlb_walk(s, lin);
        if (((lin ^ last) & 0xfffff000u) == 0) return;
        lin = last & 0xfffff000u;
    }
}

/* nm_tlb_small_set_mru with the 486's sets a constant (i486_create). */
static inline __attribute__((always_inline)) uint32_t tlb_set_mru(const i486_state *s, uint32_t lin)
{
    return s->tlb.small.set_mru[(lin >> 12) & (TLB_SETS - 1)];
}

/* tlb_access's common case: an access on one page that hits the entry its
 * set used last (nm_tlb_lookup's first case: nothing changes but the counts
 * and the entry last used), counted; false, with nothing done, otherwise. */
static inline __attribute__((always_inline)) bool tlb_quick_hit(i486_state *s, uint32_t lin,
                                                                uint32_t size, bool code)
{
    const uint32_t tag = (lin & 0xfffff000u) | 1u;
    if (nm_tlb_crosses_page(lin, size) || tlb_set_mru(s, lin) != tag) return false;
    s->tlb.mru = tag;
    s->tlb.stats.hits++;
    if (code)
        s->tlb_code_hits++;
    else
        s->tlb_data_hits++;
    return true;
}

/* tlb_access of a code access on one page whose translation is in the
 * TLB (a hit, as tlb_access_slow counts it); false, with nothing done,
 * when it is not or the access crosses a page. */
static bool __attribute__((noinline)) tlb_code_hit_slow(i486_state *s, uint32_t lin, uint32_t size)
{
    if (nm_tlb_crosses_page(lin, size) || !nm_tlb_lookup_if_present(&s->tlb, lin)) return false;
    s->tlb_code_hits++;
    return true;
}

/* A code access's TLB lookup when it hits (with paging on): its set's last
 * entry, else any entry; false, with nothing done, on a miss or across a
 * page (the fast paths then leave it to the general one). */
static inline __attribute__((always_inline)) bool tlb_code_hit(i486_state *s, uint32_t lin,
                                                               uint32_t size)
{
    return tlb_quick_hit(s, lin, size, true) || tlb_code_hit_slow(s, lin, size);
}

static inline __attribute__((always_inline)) void tlb_access(i486_state *s, uint32_t lin,
                                                             uint32_t size, bool code)
{
    if (!tlb_quick_hit(s, lin, size, code)) tlb_access_slow(s, lin, size, code);
}

/* After an instruction: what flushes the TLB.  MOV CR3 (even with the
 * same value: "The TLB is flushed whenever the page directory base
 * register (CR3) is loaded", ibid.), any other change of CR3 (a task
 * switch), CR0.PG turning on or off; INVLPG drops one entry (Intel486
 * Programmer's Reference Manual, INVLPG).  No global pages on the 486. */
static void tlb_after(i486_state *s, const nm_insn *i)
{
    const nm_cpu *c = s->cpu;
    bool load_cr3 = i->op == NM_OP_MOV_TO_CR && i->reg == 3;
    if (load_cr3 || c->cr3 != s->tlb_cr3 || c->paging != s->tlb_paging) {
        nm_tlb_flush(&s->tlb);
        s->tlb_cr3 = c->cr3;
        s->tlb_paging = c->paging;
    } else if (i->op == NM_OP_INVLPG) {
        nm_tlb_flush_page(&s->tlb, c->invlpg_lin);
    }
}

/* The pending prefetches that would have had the bus by `t` (all of them
 * when `all`) go on it now, in order: a line filled meanwhile is a hit. */
static void settle_prefetch_slow(i486_state *s, uint64_t t, bool all)
{
    while (s->pf_n) {
        uint64_t start = s->pf_at[0] > s->bus.free_at ? s->pf_at[0] : s->bus.free_at;
        if (!all && start > t) return;
        uint32_t line = s->pf_line[0];
        uint64_t at = s->pf_at[0];
        s->pf_line[0] = s->pf_line[1];
        s->pf_at[0] = s->pf_at[1];
        s->pf_n--;
        if (nm_cache_i486_access(s->cache, line, false, NULL) & NM_CACHE_HIT) continue;
        s->code_misses++;
        s->prefetch_fills++;
        start_fill(s, line, at);
    }
}

/* A flush at `t`: a pending prefetch that had not won the bus by then is
 * dropped, one already on it completes. */
static void cancel_prefetch(i486_state *s, uint64_t t)
{
    settle_prefetch(s, t, false);
    s->pf_n = 0;
}

/* The prefetcher asks for the line of `want` (that byte first) at `t`:
 * a cache hit is in the queue at once; a miss is a line fill, at once on
 * demand, else pending until the bus is free of data accesses. */
static void queue_line(i486_state *s, uint32_t want, uint64_t t, bool ahead)
{
    if (ahead && s->pf_n == 0) {
        /* What follows with nothing pending (settle_prefetch does nothing),
         * with one cache lookup. */
        if (nm_cache_i486_read_if_present(s->cache, want)) return;
        s->pf_line[0] = want & ~(LINE - 1);
        s->pf_at[0] = t;
        s->pf_n = 1;
        return;
    }
    if (ahead && !nm_cache_i486_probe(s->cache, want)) {
        if (s->pf_n == 2) settle_prefetch(s, t, true);
        s->pf_line[s->pf_n] = want & ~(LINE - 1);
        s->pf_at[s->pf_n++] = t;
        return;
    }
    settle_prefetch(s, t, false);
    if (nm_cache_i486_access(s->cache, want, false, NULL) & NM_CACHE_HIT) return;
    s->code_misses++;
    start_fill(s, want, t);
}

/* The code of one instruction, `len` bytes at linear `lin`, physical
 * `phys`: flush the queue if it does not follow the last instruction, ask
 * for the lines it needs that are not queued yet, and wait until the
 * dwords holding its bytes are in.  Done once per instruction (again only
 * if the insn hook learns a longer length). */
static void __attribute__((noinline))
code_fetch_slow(i486_state *s, uint32_t lin, uint32_t phys, uint32_t len);

/* code_fetch_slow's steps once the line of an instruction within one line
 * (`line`) is queued with nothing of it pending: the instruction waits for
 * the transfers carrying its dwords, and what is learnt of the line is kept
 * (ready_*).  Returns now_of after the wait. */
static inline __attribute__((always_inline)) uint64_t
code_wait_rec(i486_state *s, const fill_rec *f, uint32_t phys, uint32_t len, uint64_t now)
{
    uint64_t in = fill_dwords_in(f, (phys >> 2) & 3, ((phys + len - 1) >> 2) & 3);
    s->ready_at = fill_all_in(f);
    if (in <= now) return now;
    add_read_stall(s, (uint32_t)(in - now), true);
    return in;
}
static uint64_t __attribute__((noinline))
code_wait_slow(i486_state *s, uint32_t line, uint32_t phys, uint32_t len, uint64_t now)
{
    return code_wait_rec(s, fill_of(s, line), phys, len, now);
}
static inline __attribute__((always_inline)) uint64_t
code_wait(i486_state *s, uint32_t line, uint32_t phys, uint32_t len, uint64_t now)
{
    s->ready_line = line;
    s->ready_head = s->fill_head;
    if (s->fills_in_at <= s->cpu->clock->cycles) { /* all in: nothing to wait for */
        s->ready_at = s->fills_in_at;
        return now;
    }
    return code_wait_slow(s, line, phys, len, now);
}

/* code_wait for an instruction in the armed line while it is still
 * coming in (arm_ready past now, so past the instruction's start: some
 * fill is not all in, and code_wait's first test fails): the armed line's
 * record is kept (arm_rec), no search. */
static inline __attribute__((always_inline)) uint64_t code_wait_armed(i486_state *s, uint32_t phys,
                                                                      uint32_t len, uint64_t now)
{
    if (unlikely(s->shortcuts_off)) return code_wait(s, s->arm_line, phys, len, now);
    s->ready_line = s->arm_line;
    s->ready_head = s->fill_head;
    return code_wait_rec(s, s->arm_rec, phys, len, now);
}

/* The code of this instruction is fetched: `len` bytes at `lin` / `phys`,
 * all in at `ready`. */
static inline __attribute__((always_inline)) void
code_fetched(i486_state *s, uint32_t lin, uint32_t phys, uint32_t len, uint64_t ready)
{
    s->code_done = true;
    s->code_lin = lin;
    s->code_len = len;
    s->code_phys = phys;
    s->code_ready = ready;
}

/* The instruction at `phys`, `len` bytes, is what the last one's end made
 * ready (arm_next_insn), and nothing has changed since: take it as
 * code_fetch_slow would (the caller has done the TLB): at once if the line
 * is all in (its first test), else waiting for its dwords (code_wait). */
static inline __attribute__((always_inline)) bool code_fetch_armed(i486_state *s, uint32_t lin,
                                                                   uint32_t phys, uint32_t len)
{
    if (phys != s->pq_next || ((phys + len - 1) & ~(LINE - 1)) != s->arm_line ||
        *s->map_gen != s->arm_gen || (s->cpu->cr0 & NM_CR0_CD))
        return false;
    uint64_t now = now_of(s);
    /* still coming in: wait for its dwords (arm_next_insn checked the rest) */
    if (unlikely(s->arm_ready > now)) now = code_wait_armed(s, phys, len, now);
    code_fetched(s, lin, phys, len, now);
    s->code_armed = true;
    return true;
}

static inline __attribute__((always_inline)) void code_fetch(i486_state *s, uint32_t lin,
                                                             uint32_t phys, uint32_t len)
{
    /* Fetched already (from a data or I/O hook), as long as decoded: what
     * code_fetch_slow does then. */
    if (s->code_done && s->code_lin == lin && s->code_len >= len) {
        s->code_len = len;
        return;
    }
    uint32_t first = phys & ~(LINE - 1);
    if (s->cpu->paging && !(s->code_done && s->code_lin == lin)) tlb_access(s, lin, len, true);
    if (!s->code_done && code_fetch_armed(s, lin, phys, len)) return;
    /* Straight-line code within a line the queue already holds, no
     * prefetch of it pending, and every dword of it in by now (what
     * code_fetch_slow learned of the line last time): the general path
     * would ask for nothing and wait for nothing. */
    if (!s->code_done && s->pq_valid && phys == s->pq_next && first == s->ready_line &&
        s->fill_head == s->ready_head && ((phys ^ (phys + len - 1)) & ~(LINE - 1)) == 0 &&
        (int32_t)(first - s->pq_last) <= 0 && !(s->cpu->cr0 & NM_CR0_CD) &&
        (s->pf_n < 1 || s->pf_line[0] != first) && (s->pf_n < 2 || s->pf_line[1] != first)) {
        uint64_t now = now_of(s);
        if (s->ready_at <= now) {
            code_fetched(s, lin, phys, len, now);
            return;
        }
    }
    code_fetch_slow(s, lin, phys, len);
}

/* The pending prefetches of an instruction's code lines (`lines` from
 * `first`) go on the bus now, with any before them. */
static inline __attribute__((always_inline)) void settle_code_lines(i486_state *s, uint32_t first,
                                                                    uint32_t lines, uint64_t now)
{
    if ((s->pf_n >= 1 && s->pf_line[0] - first < lines * LINE) ||
        (s->pf_n >= 2 && s->pf_line[1] - first < lines * LINE))
        settle_prefetch_slow(s, now, true);
}

/* The line `line` of an instruction's code, bytes `lo`..`hi` of it: queued
 * now (on demand) if it is past the last line queued; when those dwords
 * are in, and its fill record in `*f`. */
static inline __attribute__((always_inline)) uint64_t code_line_in(i486_state *s, uint32_t line,
                                                                   uint32_t lo, uint32_t hi,
                                                                   uint64_t now, const fill_rec **f)
{
    if ((int32_t)(line - s->pq_last) > 0) {
        queue_line(s, lo, now, false);
        s->pq_last = line;
    }
    if (s->fills_in_at <= s->cpu->clock->cycles) {
        /* every fill all in by the instruction's start: what is learnt is
         * only compared with that clock or later ones (fills_in_at) */
        *f = NULL;
        return 0;
    }
    *f = fill_of(s, line);
    return fill_dwords_in(*f, (lo >> 2) & 3, (hi >> 2) & 3);
}

/* When the dwords of an instruction's code (`len` bytes at `phys`, in
 * `lines` lines: one or two, an instruction being at most 15 bytes; its
 * pending prefetches settled) are all in, a line past the last one
 * queued being queued first, on demand.  For a one-line instruction, what
 * that teaches of the line (ready_*). */
static inline __attribute__((always_inline)) uint64_t
code_lines_in(i486_state *s, uint32_t phys, uint32_t len, uint32_t lines, uint64_t now)
{
    const uint32_t first = phys & ~(LINE - 1), end = phys + len - 1;
    const fill_rec *f; /* the last line's record (no fill starts after the search) */
    if (lines == 1) {
        const uint64_t ready = code_line_in(s, first, phys, end, now, &f);
        s->ready_line = first;
        s->ready_head = s->fill_head;
        s->ready_at = fill_all_in(f); /* all four dwords in */
        return ready;
    }
    const uint64_t ready = code_line_in(s, first, phys, first + LINE - 1, now, &f);
    const uint64_t in2 = code_line_in(s, first + LINE, first + LINE, end, now, &f);
    return in2 > ready ? in2 : ready;
}

static void code_fetch_slow(i486_state *s, uint32_t lin, uint32_t phys, uint32_t len)
{
    s->code_armed = false;
    uint32_t first = phys & ~(LINE - 1);
    /* The same in a line entered now: when its fill on record has brought
     * every dword by now, or no fill is on record (cached long ago), the
     * path below would ask for nothing and wait for nothing, and learn
     * when the line was all in. */
    if (!s->code_done && s->pq_valid && phys == s->pq_next &&
        ((phys ^ (phys + len - 1)) & ~(LINE - 1)) == 0 && (int32_t)(first - s->pq_last) <= 0 &&
        !(s->cpu->cr0 & NM_CR0_CD) && (s->pf_n < 1 || s->pf_line[0] != first) &&
        (s->pf_n < 2 || s->pf_line[1] != first)) {
        uint64_t now = now_of(s);
        uint64_t all_in = fill_all_in(fill_of(s, first));
        if (all_in <= now) {
            s->ready_line = first;
            s->ready_head = s->fill_head;
            s->ready_at = all_in;
            code_fetched(s, lin, phys, len, now);
            return;
        }
    }
    bool again = s->code_done && s->code_lin == lin;
    if (again && s->code_len >= len) {
        s->code_len = len; /* the decoded length (from the insn hook) */
        return;
    }
    uint64_t now = now_of(s);
    /* nm_cache_lines with the line size known here (a shift, no call) */
    uint32_t lines = (phys + (len ? len - 1 : 0)) / LINE - phys / LINE + 1;
    if (s->cpu->cr0 & NM_CR0_CD) {
        /* No cache: a single transfer per line, the queue not modelled. */
        s->pq_valid = false;
        s->pf_n = 0;
        disarm(s);
        if (!again) {
            for (uint32_t k = 0; k < lines; k++) {
                uint64_t t = now_of(s);
                uint32_t a = first + k * LINE;
                uint64_t done = nm_membus_use(
                    &s->bus, t, nm_board_single_read(&s->board, a, nm_membus_start(&s->bus, t)));
                add_read_stall(s, (uint32_t)(done - t), true);
            }
        }
    } else {
        if (!again && !(s->pq_valid && phys == s->pq_next)) {
            s->queue_flushes++;
            cancel_prefetch(s, now);
            s->pq_valid = true;
            s->pq_last = first - LINE;
        }
        settle_code_lines(s, first, lines, now);
        uint64_t ready = code_lines_in(s, phys, len, lines, now);
        if (ready > now) add_read_stall(s, (uint32_t)(ready - now), true);
    }
    code_fetched(s, lin, phys, len, now_of(s));
}

/* After an instruction has made its bus requests: the decoder moves past
 * it, the blocks before the next byte leave the queue, and the prefetcher
 * asks for the block of the next byte and the one after it (not across a
 * 4 KB page). */
static inline void prefetch_ahead(i486_state *s)
{
    if (!s->pq_valid) return;
    uint32_t next = s->code_phys + s->code_len;
    uint32_t page_end = (s->code_phys | 0xfff) + 1;
    s->pq_next = next;
    uint32_t b = next & ~(LINE - 1);
    if ((int32_t)(b + LINE - s->pq_last) <= 0) return; /* both blocks queued already */
    if (next - (page_end - 0x1000) >= 0x1000) return;  /* the next page */
    uint32_t end = b + LINE == page_end ? b : b + LINE;
    while (unlikely((int32_t)(end - s->pq_last) > 0)) {
        uint32_t line = s->pq_last + LINE;
        if (s->pf_n == 0) {
            /* queue_line's first case, without the call */
            if (!nm_cache_i486_read_if_present(s->cache, line)) {
                s->pf_line[0] = line;
                s->pf_at[0] = s->code_ready;
                s->pf_n = 1;
            }
        } else {
            queue_line(s, line, s->code_ready, true);
        }
        s->pq_last = line;
    }
}

/* When an instruction ends: make the straight-line case of the next one
 * ready (the arm_* fields), if code_fetch_slow's first test would pass for
 * an instruction in the line of the next byte whatever happens before it
 * but a fill starting or the memory map changing: the queue is valid and
 * holds the line, in the same 4 KB page as the one just fetched (so RAM),
 * no prefetch of it is pending and the cache is on, and every dword of it
 * is in by this instruction's start (else the next one takes the way that
 * waits for them).  What it learns of the line is code_fetch's ready_*
 * too. */
static inline __attribute__((always_inline)) void arm_after(i486_state *s, uint32_t line);
static inline __attribute__((always_inline)) void arm_next_body(i486_state *s, const bool page_ram)
{
    uint32_t next = s->pq_next, line = next & ~(LINE - 1);
    disarm(s);
    if (!s->pq_valid || ((next ^ s->code_phys) & ~0xfffu) || (int32_t)(line - s->pq_last) > 0 ||
        (s->cpu->cr0 & NM_CR0_CD) || (s->pf_n >= 1 && s->pf_line[0] == line) ||
        (s->pf_n >= 2 && s->pf_line[1] == line) || (!page_ram && is_mmio(s->cpu, line)))
        return;
    /* (fills_in_at: every fill all in by this instruction's start) */
    const fill_rec *f = NULL;
    uint64_t all_in = s->fills_in_at <= s->cpu->clock->cycles ? s->fills_in_at
                                                              : fill_all_in(f = fill_of(s, line));
    s->arm_rec = f;
    s->ready_line = line;
    s->ready_head = s->fill_head;
    s->ready_at = all_in;
    s->arm_line = line;
    s->arm_ready = all_in;
    s->arm_fast = all_in <= s->cpu->clock->cycles ? line : 1; /* else still coming in */
    arm_after(s, line);
    s->arm_gen = *s->map_gen;
}

/* arm_stay and arm_two for the line armed, `line` (the line after it
 * queued; and ready for an instruction running into it). */
static inline __attribute__((always_inline)) void arm_after(i486_state *s, uint32_t line)
{
    const uint32_t line2 = line + LINE;
    const uint64_t start = s->cpu->clock->cycles;
    s->arm_stay = s->arm_two = 1;
    if ((int32_t)(line2 - s->pq_last) > 0) return;
    s->arm_stay = line;
    if (s->arm_fast != line || !(line2 & 0xfffu) || (s->pf_n >= 1 && s->pf_line[0] == line2) ||
        (s->pf_n >= 2 && s->pf_line[1] == line2))
        return;
    if (s->fills_in_at > start && fill_all_in(fill_of(s, line2)) > start) return;
    s->arm_two = line;
}

static void __attribute__((noinline)) arm_next_insn(i486_state *s)
{
    arm_next_body(s, false);
}

/* The code of an instruction after the queue was flushed (a taken
 * transfer), as code_fetch_slow fetches it when the code is in one line of
 * RAM with the cache on: the pending prefetches that had the bus by now go
 * on it, the others are dropped, the queue starts at the line (a cache
 * lookup, a fill on a miss) and the instruction waits for its dwords.  With
 * paging, only on a TLB hit.  Returns false, having changed nothing, in any other case
 * (code_fetch then does it). */
static inline __attribute__((always_inline)) bool
target_fetch(i486_state *s, nm_cpu *c, uint32_t lin, uint32_t phys, uint32_t len)
{
    const uint32_t first = phys & ~(LINE - 1);
    if (s->code_done || s->pq_valid || (c->cr0 & NM_CR0_CD) ||
        ((phys + len - 1) & ~(LINE - 1)) != first || is_mmio(c, phys))
        return false;
    if (c->paging && !tlb_code_hit(s, lin, len)) return false;
    const uint64_t now = now_of(s);
    s->queue_flushes++;
    cancel_prefetch(s, now);
    s->pq_valid = true;
    /* queue_line on demand, nothing pending now */
    const fill_rec *f = NULL;
    if (!(nm_cache_i486_access(s->cache, phys, false, NULL) & NM_CACHE_HIT)) {
        s->code_misses++;
        f = start_fill(s, phys, now);
    }
    s->pq_last = first;
    uint64_t ready;
    if (f && likely(!s->shortcuts_off)) {
        /* code_wait after the fill just started (not all in: its first
         * test fails), its record at hand */
        s->ready_line = first;
        s->ready_head = s->fill_head;
        ready = code_wait_rec(s, f, phys, len, now);
    } else {
        ready = code_wait(s, first, phys, len, now);
    }
    code_fetched(s, lin, phys, len, ready);
    s->code_armed = false;
    return true;
}

/* The code of the instruction now executing, from a memory or I/O hook:
 * while it executes EIP is past it, so its length is EIP - insn_eip
 * (outside an instruction, e.g. delivering an interrupt, EIP is still at
 * insn_eip, and a transfer may already have moved it: then the insn hook
 * does it). */
/* code_early_slow's cases but the line made ready (out of line: that one
 * then saves no registers for the general fetch inlined here) */
static void __attribute__((noinline))
code_early_rest(i486_state *s, nm_cpu *c, uint32_t lin, uint32_t phys, uint32_t len)
{
    if (!s->pq_valid && target_fetch(s, c, lin, phys, len)) return;
    if (is_mmio(c, phys)) return;
    code_fetch(s, lin, phys, len);
}
static void __attribute__((noinline)) code_early_slow(i486_state *s)
{
    nm_cpu *c = s->cpu;
    uint32_t len = c->eip - c->insn_eip;
    if (!c->code32) len &= 0xffff;
    if (len == 0 || len > 15) return;
    uint32_t lin = c->seg[NM_CS].base + c->insn_eip;
    if (s->code_done && s->code_lin == lin) return;
    uint32_t phys = c->fetch_phys | (lin & 0xfff);
    /* In the line made ready, the memory map as it was: RAM, so no
     * is_mmio; code_fetch's steps then: the TLB, code_fetch_armed */
    if (!s->code_done && phys == s->pq_next && ((phys + len - 1) & ~(LINE - 1)) == s->arm_line &&
        *s->map_gen == s->arm_gen && !(c->cr0 & NM_CR0_CD)) {
        if (c->paging) tlb_access(s, lin, len, true);
        uint64_t now = now_of(s);
        if (unlikely(s->arm_ready > now)) now = code_wait_armed(s, phys, len, now);
        code_fetched(s, lin, phys, len, now);
        s->code_armed = true;
        return;
    }
    code_early_rest(s, c, lin, phys, len);
}

/* code_early_slow, but inline for the instruction's second and later
 * accesses (its code fetched already) and for the first when its code is
 * in the line made ready and all in by the start of the instruction that
 * made it ready (arm_fast: no wait; armed, so the cache is on), with
 * paging on a TLB hit on its set's last entry: code_early_slow's steps
 * then.  (arm_fast tested first: in a Linux window the line is often
 * still coming in, and the test of the rest cost more than it saved.) */
static inline __attribute__((always_inline)) void code_early(i486_state *s)
{
    const nm_cpu *c = s->cpu;
    const uint32_t lin = c->seg[NM_CS].base + c->insn_eip;
    if (s->code_done) {
        if (s->code_lin == lin) return;
    } else if (s->arm_fast != 1 && likely(c->code32)) {
        const uint32_t len = c->eip - c->insn_eip, phys = c->fetch_phys | (lin & 0xfff);
        if (len - 1u < 15u && phys == s->pq_next &&
            ((phys + len - 1) & ~(LINE - 1)) == s->arm_fast && *s->map_gen == s->arm_gen &&
            (!c->paging || tlb_quick_hit(s, lin, len, true))) {
            code_fetched(s, lin, phys, len, now_of(s));
            s->code_armed = true;
            return;
        }
    }
    code_early_slow(s);
}

/* The memory hook's steps for `flags`, a constant of each instance below. */
static inline __attribute__((always_inline)) void
mem_body(i486_state *s, uint32_t linear, uint32_t phys, unsigned size, const unsigned flags)
{
    if (flags & NM_MEM_CODE) return; /* code is fetched in code_early / insn */
    /* The interpreter's walk (its software TLB missed): not the chip's;
     * the chip's walks are tlb_walk's.  Its A/D writes go on below. */
    if ((flags & (NM_MEM_PAGEWALK | NM_MEM_WRITE)) == NM_MEM_PAGEWALK) {
        s->interp_walk_reads++;
        return;
    }
    code_early(s);
    if (!s->accesses) rep_pacing(s);
    if (s->cpu->paging && !(flags & NM_MEM_PAGEWALK)) tlb_access(s, linear, size, false);
    if (!(flags & NM_MEM_SYSTEM) && ((phys & 3) + size > 4)) s->misaligned++;
    if (!(flags & NM_MEM_WRITE)) s->last_read_phys = phys;
    const nm_memmap *mem = s->cpu->mem;
    const nm_mem_region *r = mem->page_region[phys >> NM_PAGE_SHIFT];
    if (unlikely(!r || r->kind != NM_REGION_RAM || !mem->page_whole[phys >> NM_PAGE_SHIFT])) {
        /* A device may change the memory map: what was made ready for the
         * next instruction (arm_gen) is looked at again. */
        disarm(s);
        if (r && r->kind == NM_REGION_MMIO && mem->page_whole[phys >> NM_PAGE_SHIFT])
            return; /* (is_mmio) uncached, timed by the bus model */
    }
    if (flags & NM_MEM_WRITE) {
        /* Write-through: update the line if present, and queue the write. */
        bool hit = !(s->cpu->cr0 & NM_CR0_CD) &&
                   (nm_cache_i486_access(s->cache, phys, true, NULL) & NM_CACHE_HIT);
        uint64_t now = now_of(s);
        settle_prefetch(s, now, false);
        uint32_t st =
            nm_wbuf_write(&s->wbuf, &s->bus, now,
                          nm_board_write_inline(&s->board, phys, nm_membus_start(&s->bus, now)));
        if ((phys & 3) + size > 4) {
            /* Across a dword: two bus cycles on the 32-bit bus, two
             * write-buffer entries (Intel486 data book, misaligned
             * transfers). */
            uint32_t next = (phys | 3) + 1;
            s->split_writes++;
            st += nm_wbuf_write(
                &s->wbuf, &s->bus, now + st,
                nm_board_write_inline(&s->board, next, nm_membus_start(&s->bus, now + st)));
        }
        if (!hit) s->miss_write_done = nm_wbuf_empty_at(&s->wbuf, now + st);
        s->stall += st;
        s->wbuf_stall += st;
        s->wb_stall += st;
        s->accesses++;
        return;
    }
    uint32_t in_line = LINE - (phys & (LINE - 1));
    if (size <= in_line) {
        read_line(s, phys, size);
    } else {
        read_line(s, phys, in_line);
        read_line(s, phys + in_line, size - in_line);
    }
    s->accesses++;
}

/* Instanced for the plain read and write (access_read_slow's and
 * access_write_slow's flags: nearly every access), whose flag tests are
 * then constants; anything else through the general instance. */
static void i486_mem(void *opaque, uint32_t linear, uint32_t phys, unsigned size, unsigned flags)
{
    i486_state *s = opaque;
    if (flags == 0)
        mem_body(s, linear, phys, size, 0);
    else if (flags == NM_MEM_WRITE)
        mem_body(s, linear, phys, size, NM_MEM_WRITE);
    else
        mem_body(s, linear, phys, size, flags);
}

/* I/O: the instruction waits for the buffered writes to reach the bus
 * (data book, "write buffers"); the I/O cycle is the bus model's. */
static void i486_io(void *opaque, uint16_t port, unsigned size, bool write)
{
    (void)port;
    (void)size;
    (void)write;
    i486_state *s = opaque;
    code_early(s);
    uint64_t now = now_of(s);
    uint64_t empty = nm_wbuf_empty_at(&s->wbuf, now);
    if (empty > now) {
        s->stall += (uint32_t)(empty - now);
        s->io_stall += (uint32_t)(empty - now);
    }
}

static void i486_branch(void *opaque, uint32_t from, uint32_t to, bool taken)
{
    (void)from;
    (void)to;
    ((i486_state *)opaque)->taken = taken;
}

static unsigned mul_clocks(i486_state *s, const nm_cpu *c, const nm_insn *i)
{
    /* MUL/IMUL 13-18 / 13-26 / 13-42: 10 + max(ceiling(log2 |m|), 3) */
    uint32_t v;
    bool sgn = i->op != NM_OP_MUL;
    if (i->op == NM_OP_IMUL3) {
        v = i->imm;
    } else if (i->src == NM_OPK_MEM || i->dst == NM_OPK_MEM) {
        const uint8_t *p = nm_memmap_page_ptr(c->mem, s->last_read_phys, false);
        if (!p || (s->last_read_phys & 0xfff) + i->opsize > 0x1000) return 10 + 8u * i->opsize;
        p += s->last_read_phys & 0xfff;
        v = i->opsize == 1   ? p[0]
            : i->opsize == 2 ? (uint32_t)(p[0] | p[1] << 8)
                             : (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
    } else {
        unsigned r = i->rm;
        bool clobbered = (i->op == NM_OP_MUL || i->op == NM_OP_IMUL) ? (r == NM_EAX || r == NM_EDX)
                                                                     : r == i->reg;
        if (i->opsize == 1) clobbered = i->op == NM_OP_IMUL2 ? r == i->reg : (r == 0 || r == 4);
        if (clobbered) return 10 + 8u * i->opsize;
        v = reg_get(c, r, i->opsize);
    }
    return 10 + nm_mul_bits(v, i->opsize, sgn);
}

/* The clocks of the rows that depend on the decoded instruction alone
 * (worked out once per instruction: i486_static); 0 for the others, which
 * cost_of works out each time from the mode, the branch outcome, the
 * iteration count or an operand value. */
static unsigned static_cost(const nm_insn *i)
{
    if (nm_x87_costed(i->op)) return 0; /* cost_of: the FPU's timeline */
    unsigned form = nm_insn_form(i);
    switch (i->op) {
    case NM_OP_JCC:
    case NM_OP_LOOP:
    case NM_OP_LOOPE:
    case NM_OP_LOOPNE:
    case NM_OP_JCXZ:
    case NM_OP_JMP_FAR:
    case NM_OP_CALL_FAR:
    case NM_OP_RET_FAR:
    case NM_OP_IRET:
    case NM_OP_INT:
    case NM_OP_INT3:
    case NM_OP_ICEBP:
    case NM_OP_INTO:
    case NM_OP_IN:
    case NM_OP_OUT:
    case NM_OP_MOVS:
    case NM_OP_CMPS:
    case NM_OP_SCAS:
    case NM_OP_LODS:
    case NM_OP_STOS:
    case NM_OP_INS:
    case NM_OP_OUTS:
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_IMUL2:
    case NM_OP_IMUL3:
    case NM_OP_RCL:
    case NM_OP_RCR:
    case NM_OP_BSF:
    case NM_OP_BSR:
    case NM_OP_SETCC:
    case NM_OP_POPF:
    case NM_OP_MOV_TO_SREG:
    case NM_OP_POP_SREG:
    case NM_OP_LDS:
    case NM_OP_LES:
    case NM_OP_LFS:
    case NM_OP_LGS:
    case NM_OP_LSS: return 0;                                              /* cost_of's own rows */
    case NM_OP_JMP: return form == NM_FORM_R ? (i->mod == 3 ? 5 : 3) : 5;  /* rel 3; r/m 5 */
    case NM_OP_CALL: return form == NM_FORM_R ? (i->mod == 3 ? 5 : 3) : 5; /* rel 3; r/m 5 */
    case NM_OP_RET: return 5;                                              /* RET (imm) 5 */
    case NM_OP_DIV: return i->opsize == 1 ? 16 : i->opsize == 2 ? 24 : 40; /* DIV 16/24/40 */
    case NM_OP_IDIV:
        /* IDIV register 19/27/43, memory 20/28/44: HelpPC 2.10, IDIV, and
         * the iAPx86 Norton Guide, IDIV, agree (DIV: memory = register) */
        return (i->opsize == 1 ? 19u : i->opsize == 2 ? 27u : 43u) + (form != NM_FORM_R ? 1 : 0);
    case NM_OP_ROL:
    case NM_OP_ROR:
    case NM_OP_SHL:
    case NM_OP_SHR:
    case NM_OP_SAR:
        /* reg,1 3; reg,CL 3; reg,imm 2; mem,1 4; mem,CL 4; mem,imm 4 */
        return form != NM_FORM_R ? 4 : i->src == NM_OPK_IMM ? 2 : 3;
    case NM_OP_SHLD:
    case NM_OP_SHRD: return table[i->op].c[form] + (i->src == NM_OPK_CL ? 1 : 0);
    case NM_OP_BT: /* reg,imm 3; mem,imm 3; reg,reg 3; mem,reg 8 (HelpPC 2.10, BT,
                    * repeats the 386's 6/12 for memory; the iAPx86 Norton
                    * Guide has 3/8: kept) */
        return form != NM_FORM_R && i->src == NM_OPK_REG ? 8 : 3;
    case NM_OP_BTS:
    case NM_OP_BTR:
    case NM_OP_BTC: /* reg 6; mem,imm 8; mem,reg 13 */
        return form == NM_FORM_R ? 6 : i->src == NM_OPK_IMM ? 8 : 13;
    case NM_OP_ENTER: { /* ENTER imm16,0: 14; ,1: 17; ,L: 17+3L */
        unsigned l = i->imm2 & 31;
        return l == 0 ? 14 : l == 1 ? 17 : 17 + 3 * l;
    }
    case NM_OP_MOV_TO_CR: return i->reg == 0 ? 17 : 4; /* MOV CR0,r 17; CR2/CR3 4 */
    case NM_OP_MOV_FROM_CR: return 4;                  /* MOV r,CRn 4 */
    case NM_OP_MOV_TO_DR: return i->reg < 4 ? 11 : 11; /* MOV DRn,r 11 */
    case NM_OP_MOV_FROM_DR: return i->reg < 4 ? 9 : 9; /* MOV r,DRn 9 */
    default: {
        unsigned v = table[i->op].c[form];
        return v ? v : 1;
    }
    }
}

static unsigned cost_of(i486_state *s, const nm_cpu *c, const nm_insn *i, const nm_x86_mode *now)
{
    if (nm_x87_costed(i->op)) return nm_x87_cost_486(&s->x87, c, i, c->clock->cycles);
    unsigned form = nm_insn_form(i);
    const nm_x86_mode *before = &s->prev;
    /* The I/O and transfer classes are worked out by the rows that use
     * them (most instructions need neither). */
    bool real = !before->pe || before->vm86;
    bool rep = i->prefixes & (NM_PFX_REP | NM_PFX_REPNE);
    switch (i->op) {
    case NM_OP_JCC: return s->taken ? 3 : 1;  /* Jcc 3 taken / 1 not */
    case NM_OP_LOOP: return s->taken ? 7 : 6; /* LOOP 7 / 6 */
    case NM_OP_LOOPE:
    case NM_OP_LOOPNE: return s->taken ? 9 : 6; /* LOOPcc 9 / 6 */
    case NM_OP_JCXZ: return s->taken ? 8 : 5;   /* JCXZ 8 / 5 */
    case NM_OP_JMP_FAR: {
        unsigned k = nm_far_xfer_class(nm_xfer_class(before, now), form, i, now);
        return form == NM_FORM_R ? jmpf_d[k] : jmpf_m[k];
    }
    case NM_OP_CALL_FAR: {
        unsigned k = nm_far_xfer_class(nm_xfer_class(before, now), form, i, now);
        return form == NM_FORM_R ? callf_d[k] : callf_m[k];
    }
    case NM_OP_RET_FAR: {
        unsigned xc = nm_xfer_class(before, now);
        return retf_t[xc] + (i->src == NM_OPK_IMM && xc <= NM_XFER_GATE ? (real ? 1 : 0) : 0);
    }
    case NM_OP_IRET: return iret_t[nm_xfer_class(before, now)];
    case NM_OP_INT:
    case NM_OP_INT3:
    case NM_OP_ICEBP: return int_n[nm_xfer_class(before, now)]; /* INT 3 = INT n */
    case NM_OP_INTO: {
        unsigned xc = nm_xfer_class(before, now);
        return s->taken ? (xc == NM_XFER_REAL ? 28 : int_n[xc]) : 3; /* 28 / 3 */
    }
    case NM_OP_IN: {
        unsigned ioc = nm_io_class(before);
        return i->src == NM_OPK_IMM ? in_imm[ioc] : in_dx[ioc];
    }
    case NM_OP_OUT: {
        unsigned ioc = nm_io_class(before);
        return i->dst == NM_OPK_IMM ? out_imm[ioc] : out_dx[ioc];
    }
    case NM_OP_MOVS:
    case NM_OP_CMPS:
    case NM_OP_SCAS:
    case NM_OP_LODS:
    case NM_OP_STOS: {
        const str_row *r = &strings[i->op - NM_OP_MOVS];
        if (!rep) return r->single;
        if (s->rep_continues) return r->rep_each * c->rep_iterations;
        if (c->rep_iterations == 0) return 5;
        if (i->op == NM_OP_MOVS && c->rep_iterations == 1) return 13; /* REP MOVS n=1: 13 */
        return r->rep_base + r->rep_each * c->rep_iterations;
    }
    case NM_OP_INS:
    case NM_OP_OUTS: {
        bool ins = i->op == NM_OP_INS;
        unsigned ioc = nm_io_class(before);
        if (!rep) return ins ? ins_one[ioc] : outs_one[ioc];
        unsigned base = s->rep_continues ? 0u : ins ? ins_rep[ioc] : outs_rep[ioc];
        return base + (ins ? 8u : 5u) * c->rep_iterations;
    }
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_IMUL2:
    case NM_OP_IMUL3: return mul_clocks(s, c, i);
    case NM_OP_RCL:
    case NM_OP_RCR:
        /* reg,1 3; mem,1 4; reg,CL/imm 8-30; mem,CL/imm 9-31: 8 + count */
        if (i->src == NM_OPK_ONE) return form != NM_FORM_R ? 4 : 3;
        return (form != NM_FORM_R ? 9u : 8u) +
               ((i->src == NM_OPK_IMM ? i->imm : c->gpr[NM_ECX]) & 31) * 22u / 31u;
    case NM_OP_BSF:
    case NM_OP_BSR: {
        /* BSF 6-42, BSR 6-103 (reg; +1 mem): 6 + bits scanned (BSR: 3 per bit
         * scanned past the first byte is folded into the same linear rule) */
        unsigned bits = 8u * i->opsize, n;
        if (flags_zf(c))
            n = bits;
        else {
            uint32_t idx = reg_get(c, i->reg, i->opsize);
            n = i->op == NM_OP_BSF ? idx + 1 : bits - idx;
        }
        unsigned v = 6 + (i->op == NM_OP_BSF ? n * 36 / 32 : n * 97 / 32);
        return v + (form != NM_FORM_R ? 1 : 0);
    }
    case NM_OP_SETCC: /* reg 4 if true, 3 if false; mem 3 true, 4 false (HelpPC
                       * 2.10, SETcc, one figure each: reg 3, mem 4) */
        if (form == NM_FORM_R) return flags_cond(c, i->cond) ? 4 : 3;
        return flags_cond(c, i->cond) ? 3 : 4;
    case NM_OP_POPF:
        return real ? 9 : 6; /* POPF real 9, PM 6 */
    /* MOV Sreg,r/m: real 3, PM 9 (HelpPC 2.10, MOV, lists segreg,reg16 3 and
     * segreg,mem16 9 with no mode split: read as the real/PM pair) */
    case NM_OP_MOV_TO_SREG: return real ? 3 : 9;
    case NM_OP_POP_SREG: return real ? 3 : 9; /* POP Sreg: real 3, PM 9 */
    case NM_OP_LDS:
    case NM_OP_LES:
    case NM_OP_LFS:
    case NM_OP_LGS:
    case NM_OP_LSS: return real ? 6 : 12; /* LDS etc.: real 6, PM 12 */
    default: return static_cost(i);
    }
}

/* The general register an instruction writes as its destination, for the
 * address rules (NM_REG_NONE: none we track); a byte register counts as
 * its 32-bit register.  ESP written as the implied destination of a stack
 * instruction does not count (Abrash, Graphics Programming Black Book
 * ch. 12, rule #2A: "POP AX / RET" pairs run "in six cycles per POP/RET
 * pair, matching the official times", POP DX / POP CX / POP BX / POP AX
 * "one cycle per instruction": "the stack pointer incurs the addressing
 * pipeline penalty only if (E)SP is the *explicit* destination of one
 * instruction").  POP reg writes its register; LEAVE EBP (its POP). */
static uint8_t written_reg(const nm_insn *i)
{
    switch (i->op) {
    case NM_OP_POP:
        /* 58+r and 8F /0 with mod 3: the register is rm (reg_in_opcode
         * sets both; 8F's reg field is the /0) */
        return i->dst == NM_OPK_REG ? i->rm : NM_REG_NONE;
    case NM_OP_LEAVE: return NM_EBP;
    case NM_OP_PUSH:
    case NM_OP_CALL:
    case NM_OP_RET:
    case NM_OP_PUSHF:
    case NM_OP_POPF:
    case NM_OP_PUSH_SREG:
    case NM_OP_POP_SREG:
    case NM_OP_PUSHA:
    case NM_OP_ENTER: return NM_REG_NONE;
    case NM_OP_MOVS:
    case NM_OP_STOS:
    case NM_OP_CMPS:
    case NM_OP_SCAS: return NM_EDI;
    case NM_OP_LODS: return NM_ESI;
    /* one-operand MUL/IMUL/DIV/IDIV write (E)AX (and (E)DX), not the
     * r/m operand they name */
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_DIV:
    case NM_OP_IDIV: return NM_EAX;
    case NM_OP_CMP:
    case NM_OP_TEST:
    case NM_OP_BT:
    case NM_OP_MOV_TO_CR:
    case NM_OP_MOV_TO_DR:
    case NM_OP_MOV_TO_SREG: return NM_REG_NONE;
    default: break;
    }
    if (i->dst != NM_OPK_REG) return NM_REG_NONE;
    uint8_t r;
    if (i->mod != 3) {
        r = i->reg; /* reg <- mem, or a register named in the opcode */
    } else if (i->prefixes & NM_PFX_0F) {
        bool to_reg = i->op == NM_OP_MOVSX || i->op == NM_OP_MOVZX || i->op == NM_OP_IMUL2 ||
                      i->op == NM_OP_BSF || i->op == NM_OP_BSR || i->op == NM_OP_LAR ||
                      i->op == NM_OP_LSL;
        r = to_reg ? i->reg : i->rm;
    } else if (i->opcode < 0x40 || (i->opcode >= 0x88 && i->opcode <= 0x8b)) {
        r = (i->opcode & 2) ? i->reg : i->rm; /* the direction bit */
    } else if (i->opcode == 0x69 || i->opcode == 0x6b) {
        r = i->reg;
    } else {
        r = i->rm; /* group opcodes: the r/m register */
    }
    return i->opsize == 1 ? (uint8_t)(r & 3) : r;
}

/* Whether the instruction loads a byte register (rules #3 and #4 below):
 * its destination operand is an 8-bit general register it writes (MOV,
 * the ALU operations, INC/DEC/NEG/NOT, shifts, SETcc, XCHG, IN AL).  The
 * register is written_reg's.  Byte registers written implicitly (LAHF,
 * SALC, DAA/DAS, XLAT, LODSB, the 8-bit DIV's AL and AH) are not counted:
 * microcoded, slow, and none of Abrash's cases; the 8-bit MUL writes AX. */
static bool loads_byte_reg(const nm_insn *i, uint8_t written)
{
    switch (i->op) {
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_DIV:
    case NM_OP_IDIV: return false;
    default: break;
    }
    return i->dst == NM_OPK_REG && i->opsize == 1 && written != NM_REG_NONE;
}

/* The registers an instruction reads whole (16 or 32 bits) as data, not
 * as an address (bit n: register n), for rule #3 below.  The fast core
 * instructions only (Abrash, ch. 12: the penalties "apply primarily to the
 * fast core instructions of the 486, most notably register-only
 * instructions and MOV"); 0 for the others. */
static uint8_t whole_reads(const nm_insn *i)
{
    const unsigned E = i->mod == 3 ? 1u << (i->rm & 7) : 0, G = 1u << (i->reg & 7);
    const unsigned EAX = 1u << NM_EAX;
    unsigned rd = 0;
    if (i->op == NM_OP_MOVZX || i->op == NM_OP_MOVSX) return (i->opcode & 1) ? (uint8_t)E : 0;
    if (i->opsize == 1) return 0;
    switch (i->op) {
    case NM_OP_ADD:
    case NM_OP_OR:
    case NM_OP_ADC:
    case NM_OP_SBB:
    case NM_OP_AND:
    case NM_OP_SUB:
    case NM_OP_XOR:
    case NM_OP_CMP:
        if (i->opcode < 0x40)
            rd = (i->opcode & 7) < 4 ? E | G : EAX; /* r/m,r and r,r/m; eAX,imm */
        else
            rd = E; /* 81/83: r/m, imm */
        break;
    case NM_OP_TEST: rd = i->opcode == 0xa9 ? EAX : E | (i->opcode == 0x85 ? G : 0); break;
    case NM_OP_INC:
    case NM_OP_DEC:
    case NM_OP_NEG:
    case NM_OP_NOT:
    case NM_OP_ROL:
    case NM_OP_ROR:
    case NM_OP_RCL:
    case NM_OP_RCR:
    case NM_OP_SHL:
    case NM_OP_SHR:
    case NM_OP_SAR:
    case NM_OP_BSWAP:
    case NM_OP_IMUL3: rd = E; break;
    case NM_OP_IMUL2:
    case NM_OP_XCHG: rd = E | G; break;
    case NM_OP_MOV:
        if (i->opcode == 0x89)
            rd = G; /* MOV r/m, r */
        else if (i->opcode == 0x8b)
            rd = E; /* MOV r, r/m */
        else if (i->opcode == 0xa3)
            rd = EAX; /* MOV moffs, eAX */
        break;
    case NM_OP_PUSH: rd = i->src == NM_OPK_REG ? E : 0; break;
    default: break;
    }
    return (uint8_t)rd;
}

/* PUSH, POP and near RET address memory with ESP (Abrash, ch. 12, rule
 * #2A, after Intel: "the implied base addressing register for PUSH, POP,
 * and RET"). */
static bool stack_addressing(const nm_insn *i)
{
    return i->op == NM_OP_PUSH || i->op == NM_OP_POP || i->op == NM_OP_RET;
}

/* Prefixes: 1 clock each (REP is in the string rows). */
static inline unsigned pfx_clocks_of(const nm_insn *i)
{
    return nm_popcount8(i->prefixes & (NM_PFX_OPSIZE | NM_PFX_ADSIZE | NM_PFX_SEG | NM_PFX_LOCK));
}

/* What i486_insn needs of an instruction that depends on the decoded form
 * alone, worked out on its first run and kept in the decoded-instruction
 * cache with it (nm_insn.model_data, while model_tag is NM_INSN_TAG_486). */
#define ST_MEM_AGI  1u  /* a memory operand the address rules apply to */
#define ST_INDEX    2u  /* ... with an index register (+1) */
#define ST_LOADS_CS 4u  /* nm_loads_cs */
#define ST_IO       8u  /* its row is booked as I/O */
#define ST_INT      16u /* its row is booked as an interrupt */
#define ST_INVD     32u /* INVD / WBINVD: empties the cache */
#define ST_PLAIN                                                                                   \
    64u /* none of the above but the address rules, a static row, no                               \
         * transfer or string, no NM_SYNC_CHECK: i486_plain may do it */
#define ST_NEAR_BRANCH                                                                             \
    128u /* a near transfer whose row reads only the branch outcome (Jcc,                          \
          * LOOPcc, JCXZ: base / base_taken) or nothing (JMP, CALL, RET),                          \
          * none of the other flags, no NM_SYNC_CHECK: the fast path may do it */
typedef struct i486_static {
    uint8_t fast;       /* 1: ST_PLAIN or ST_NEAR_BRANCH (first: read with model_tag) */
    uint8_t base;       /* static_cost (0: cost_of each time); ST_NEAR_BRANCH: not taken */
    uint8_t base_taken; /* ST_NEAR_BRANCH: taken */
    uint8_t pfx;        /* pfx_clocks_of */
    uint8_t hw;         /* written_reg | loads_byte_reg << 4: its HAZ_R0 and HAZ_B0 */
    uint8_t flags;      /* ST_* */
    uint8_t opf;        /* nm_op_flags */
    uint8_t regonly;    /* 1: ST_PLAIN and nm_insn_regonly: may be in a stretch (i486_ahead) */
    uint8_t amask;      /* the registers it addresses memory with (bit n: register n) */
    uint8_t reads;      /* whole_reads */
} i486_static;
_Static_assert(sizeof(i486_static) <= sizeof(((nm_insn *)0)->model_data), "model_data");
_Static_assert(_Alignof(i486_static) == 1, "model_data has no alignment");
_Static_assert(offsetof(nm_insn, model_data) == offsetof(nm_insn, model_tag) + 1 &&
                   offsetof(i486_static, fast) == 0,
               "the fast path reads model_tag and i486_static.fast as one");

static const i486_static *static_of(const nm_insn *ci)
{
    nm_insn *i = (nm_insn *)ci; /* the cached instruction: model_data is ours */
    i486_static *st = (i486_static *)(void *)i->model_data;
    if (likely(i->model_tag == NM_INSN_TAG_486)) return st;
    unsigned opf = nm_op_flags(i->op);
    unsigned f = 0;
    unsigned amask = 0;
    if ((i->dst == NM_OPK_MEM || i->src == NM_OPK_MEM) && !(opf & NM_OPF_STRING) &&
        i->op != NM_OP_XLAT) {
        f |= ST_MEM_AGI;
        if (i->index != NM_REG_NONE) f |= ST_INDEX;
        if (i->base != NM_REG_NONE) amask |= 1u << i->base;
        if (i->index != NM_REG_NONE) amask |= 1u << i->index;
    }
    if (stack_addressing(i)) amask |= 1u << NM_ESP;
    if (nm_loads_cs(i)) f |= ST_LOADS_CS;
    switch (i->op) {
    case NM_OP_IN:
    case NM_OP_OUT:
    case NM_OP_INS:
    case NM_OP_OUTS: f |= ST_IO; break;
    case NM_OP_INT:
    case NM_OP_INT3:
    case NM_OP_ICEBP:
    case NM_OP_INTO:
    case NM_OP_IRET: f |= ST_INT; break;
    case NM_OP_INVD:
    case NM_OP_WBINVD: f |= ST_INVD; break;
    default: break;
    }
    unsigned base = static_cost(i), base_taken = 0;
    const uint8_t written = written_reg(i);
    if (base && !(f & (ST_LOADS_CS | ST_IO | ST_INT | ST_INVD)) &&
        !(opf & (NM_OPF_BRANCH | NM_OPF_STRING)) && !(i->sync & NM_SYNC_CHECK))
        f |= ST_PLAIN;
    if ((opf & NM_OPF_BRANCH) && !(f & (ST_LOADS_CS | ST_IO | ST_INT | ST_INVD)) &&
        !(opf & NM_OPF_STRING) && !(i->sync & NM_SYNC_CHECK)) {
        /* cost_of's rows for these, by the outcome */
        static const struct {
            uint8_t op, not_taken, taken;
        } outcome_rows[] = {
            {NM_OP_JCC, 1, 3},    {NM_OP_LOOP, 6, 7}, {NM_OP_LOOPE, 6, 9},
            {NM_OP_LOOPNE, 6, 9}, {NM_OP_JCXZ, 5, 8},
        };
        if (i->op == NM_OP_JMP || i->op == NM_OP_CALL || i->op == NM_OP_RET) {
            f |= ST_NEAR_BRANCH;
            base_taken = base;
        }
        for (unsigned k = 0; k < sizeof outcome_rows / sizeof outcome_rows[0]; k++)
            if (i->op == outcome_rows[k].op) {
                f |= ST_NEAR_BRANCH;
                base = outcome_rows[k].not_taken;
                base_taken = outcome_rows[k].taken;
            }
    }
    *st = (i486_static){
        .fast = (f & (ST_PLAIN | ST_NEAR_BRANCH)) ? 1 : 0,
        .base = (uint8_t)base,
        .base_taken = (uint8_t)base_taken,
        .pfx = (uint8_t)pfx_clocks_of(i),
        .hw = (uint8_t)(written | (loads_byte_reg(i, written) ? HAZ_B0 : 0)),
        .flags = (uint8_t)f,
        .opf = (uint8_t)opf,
        .regonly = (f & ST_PLAIN) && nm_insn_regonly(i),
        .amask = (uint8_t)amask,
        .reads = whole_reads(i),
    };
    i->model_tag = NM_INSN_TAG_486;
    return st;
}

/* haz after an instruction of `clocks` clocks (st) from h before it. */
static inline __attribute__((always_inline)) unsigned haz_after(unsigned h, const i486_static *st,
                                                                uint32_t clocks)
{
    const unsigned older = clocks == 1 ? (h & (HAZ_R0 | HAZ_B0)) << 8 : (unsigned)NM_REG_NONE << 8;
    return st->hw | older | (h & HAZ_REAL);
}

/* The clocks of the address and register rules for an instruction (st)
 * after h, by rule (docs/cost-models.md "486", "The address pipeline"; Abrash,
 * Graphics Programming Black Book ch. 12, measured with the Zen timer on two
 * 486s, cached, real mode unless said):
 *   agi, rule #2: its address register written by the instruction before:
 *     protected mode +1 (Intel's documented AGI; Abrash: "In 32-bit
 *     protected mode, however, the penalty is, in fact, the 1 cycle that
 *     Intel [documents]"); real mode +2 ("not one but two cycles are lost":
 *     MOV BX,OFFSET MemVar / MOV AX,[BX] / INC DX / DEC CX / JNZ "loses two
 *     cycles"), and written two cycles before +1 ("loses only one cycle"
 *     with INC DX between, "no cycles at all" with INC DX and DEC CX).
 *     ESP: rule #2A, explicit destinations only (written_reg), PUSH, POP
 *     and RET addressing with it ("ADD SP,10h / RET ... loses two cycles").
 *   ahead, rule #4: a byte register loaded two cycles before any register
 *     addresses memory +1 (MOV AL,BL / MOV CX,DX / MOV SI,[DI] "takes four
 *     rather than the expected three cycles"), one and two cycles before +2
 *     (MOV BL,AL / MOV CL,3 / MOV BX,[SI] "five rather than three"), one
 *     cycle before only 0 (MOV CX,3 / MOV DL,AL / MOV SI,[BX] "the expected
 *     three"), and one cycle before an address that waits a cycle for its
 *     register +1 (MOV BX,OFFSET MemVar / MOV CL,AL / MOV AX,[BX] "takes 5
 *     cycles").  As a pipeline: the address is worked out in the two cycles
 *     before the instruction, starting no earlier than the cycle after its
 *     register's writer ended (protected mode: that cycle) and never in the
 *     last cycle of a byte load; each cycle it starts late is a clock.  In
 *     protected mode too: Ervin Toth, df.lth.se/~john_e/gems/gem0026 (1998),
 *     ADD ECX,EBP / ADC BL,DL / MOV AL,[EBX]: "the MOV takes three cycles",
 *     with SUB ESI,EBP before the MOV "two".
 *   partial, rule #3: a byte register loaded by the instruction before and
 *     its whole register read as data +1 (MOV AL,[MemVar2] / ADD CX,AX), in
 *     both modes (Toth lists it for protected mode).
 * XLAT and the strings are exempt (no amask: "none of the penalties
 * mentioned in this chapter apply to XLAT"). */
typedef struct {
    uint32_t agi, ahead, partial;
} pipe_parts;
static inline __attribute__((always_inline)) uint32_t pipe_rules(unsigned h, const i486_static *st,
                                                                 pipe_parts *p)
{
    const unsigned r0 = h & HAZ_R0, r1 = (h & HAZ_R1) >> 8;
    const unsigned b0 = (h >> 4) & 1u, b1 = (h >> 12) & 1u, real = (h >> 15) & 1u;
    const unsigned am = st->amask;
    uint32_t agi = 0, ahead = 0;
    if ((am >> r0) & 1u) {
        agi = 1 + real; /* real: the pipeline starts at the instruction itself */
        ahead = real ? 0 : b0;
    } else if (real && ((am >> r1) & 1u)) {
        agi = 1;
        ahead = b0;
    } else if (am && b1) {
        ahead = 1 + b0;
    }
    p->agi = agi;
    p->ahead = ahead;
    p->partial = b0 & (st->reads >> r0);
    return agi + ahead + p->partial;
}

/* The address and register rules' clocks for i after s->haz, booked. */
static uint32_t __attribute__((noinline)) pipe_slow(i486_state *s, const i486_static *st)
{
    pipe_parts p;
    const uint32_t clocks = pipe_rules(s->haz, st, &p);
    s->agi += p.agi != 0;
    s->c_agi += p.agi;
    s->c_ahead += p.ahead;
    s->c_partial += p.partial;
    return clocks;
}
static inline __attribute__((always_inline)) uint32_t pipe_clocks(i486_state *s,
                                                                  const i486_static *st)
{
    uint32_t clocks = 0;
    if (st->flags & ST_INDEX) {
        clocks = 1;
        s->c_index++;
    }
    /* nothing to do without a byte load before, in protected mode, when
     * the last one wrote none of its address registers (amask 0 too) */
    const unsigned h = s->haz;
    if (likely(!(h & (HAZ_B0 | HAZ_B1 | HAZ_REAL)) && !((st->amask >> (h & HAZ_R0)) & 1u)))
        return clocks;
    return clocks + pipe_slow(s, st);
}

/* i486_insn for an ST_PLAIN instruction with nothing between it and the
 * last one (no jump of EIP or CS, no new run) and no misaligned access:
 * what i486_insn does then, without the tests whose outcome is known (no
 * interrupt to charge, no mode-dependent row, no transfer, no string, no
 * mode or CR3 change, no branch outcome: taken stays false). */
static uint32_t __attribute__((noinline))
i486_plain(i486_state *s, nm_cpu *c, const nm_insn *i, const i486_static *st)
{
    uint32_t lin = c->seg[NM_CS].base + c->insn_eip;
    uint32_t phys = c->fetch_phys | (lin & 0xfff);
    if (unlikely(is_mmio(c, phys))) {
        s->pq_valid = false;
        s->code_done = s->code_armed = false;
    } else {
        code_fetch(s, lin, phys, i->len);
    }
    uint32_t base = st->base, pfx = st->pfx;
    uint32_t clocks = base + pfx;
    s->c_base += base;
    s->c_prefix += pfx; /* also the report's prefix_clocks */
    clocks += pipe_clocks(s, st);
    if (unlikely(s->stall)) {
        clocks += s->stall;
        s->c_tlb += s->tlb_stall;
        s->c_code_fill += s->code_stall;
        s->c_data_fill += s->data_stall;
        s->c_wbuf += s->wb_stall;
        s->c_io_drain += s->io_stall;
    }
    if (s->code_done) prefetch_ahead(s);
    s->code_done = s->code_armed = false;
    s->rep_continues = false;
    s->haz = haz_after(s->haz, st, clocks);
    if (unlikely(s->stall)) {
        s->stall = 0;
        s->code_stall = s->data_stall = s->wb_stall = s->io_stall = s->tlb_stall = 0;
    }
    s->accesses = 0;
    s->rep_pace = 0;
    s->prev.next_eip = c->eip;
    s->insns++;
    s->clocks += clocks;
    arm_next_insn(s);
    return clocks;
}

/* i486_insn but for the cases i486_plain and its fast path take. */
static uint32_t __attribute__((noinline)) i486_general(i486_state *s, nm_cpu *c, const nm_insn *i)
{
    const i486_static *st = static_of(i);
    if (likely((st->flags & ST_PLAIN) && !c->hook_resync && !s->misaligned &&
               c->insn_eip == s->prev.next_eip && c->seg[NM_CS].selector == s->prev.cs))
        return i486_plain(s, c, i, st);
    /* The mode now (after the instruction; the model changes nothing in
     * the CPU, so it is the same all through this call): built where a rule
     * needs it, and into s->prev at the end. */
    nm_x86_mode now;
    uint32_t clocks = 0;
    unsigned opf = st->opf;

    const bool async = c->insn_eip != s->prev.next_eip ||
                       (!(st->flags & ST_LOADS_CS) && c->seg[NM_CS].selector != s->prev.cs);
    if (unlikely(async)) {
        now = nm_x86_mode_now(c);
        uint32_t v = int_n[nm_xfer_class(&s->prev, &now)];
        clocks += v;
        s->c_int += v;
        s->async_transfers++;
        /* the delivery's clocks lie between it and the one before */
        s->haz = HAZ_EMPTY;
    }
    /* the address rules in the mode this one runs in (the mode changes
     * only at the points below, or between instructions: async) */
    if (unlikely(async || c->hook_resync)) s->haz = haz_mode(s->haz, c);

    /* Code: fetched from the first data/I/O hook if there was one, else
     * now (the same call learns the decoded length if it differs). */
    uint32_t lin = c->seg[NM_CS].base + c->insn_eip;
    uint32_t phys = c->fetch_phys | (lin & 0xfff);
    if (is_mmio(c, phys)) {
        s->pq_valid = false; /* uncached code: the bus model times it */
        s->code_done = s->code_armed = false;
    } else {
        code_fetch(s, lin, phys, i->len);
    }

    uint32_t base = st->base;
    if (st->flags & ST_NEAR_BRANCH) {
        base = s->taken ? st->base_taken : st->base; /* cost_of's rows, kept */
    } else if (!base) {
        now = nm_x86_mode_now(c);
        base = cost_of(s, c, i, &now);
    }
    clocks += base;
    if (st->flags & ST_IO)
        s->c_io += base;
    else if (st->flags & ST_INT)
        s->c_int += base;
    else
        s->c_base += base;
    /* Prefixes: 1 clock each (REP is in the string rows). */
    unsigned pfx = st->pfx;
    s->c_prefix += pfx; /* also the report's prefix_clocks */
    clocks += pfx;
    clocks += pipe_clocks(s, st);
    if (s->misaligned) {
        clocks += 3 * s->misaligned;
        s->misaligned_count += s->misaligned;
        s->c_misaligned += 3 * s->misaligned;
    }
    if (s->stall) { /* its parts are 0 when it is */
        clocks += s->stall;
        s->c_tlb += s->tlb_stall;
        s->c_code_fill += s->code_stall;
        s->c_data_fill += s->data_stall;
        s->c_wbuf += s->wb_stall;
        s->c_io_drain += s->io_stall;
    }

    /* INVD/WBINVD empty the cache (write-through: nothing to write back). */
    if (st->flags & ST_INVD) nm_cache_invalidate_all(s->cache);

    /* The prefetcher runs ahead of what was decoded; a taken transfer or a
     * CS load then flushes the queue (the next instruction refetches). */
    if (s->code_done) prefetch_ahead(s);
    bool xfer = (opf & NM_OPF_BRANCH) && s->taken;
    if (xfer) s->taken_transfers++;
    if (xfer || (st->flags & ST_LOADS_CS)) s->pq_valid = false;
    s->code_done = s->code_armed = false;
    s->rep_continues = (opf & NM_OPF_STRING) && (i->prefixes & (NM_PFX_REP | NM_PFX_REPNE)) &&
                       c->eip == c->insn_eip;
    s->haz = haz_after(s->haz, st, clocks);
    /* The mode, CR3 and paging change only with an instruction that has
     * NM_SYNC_CHECK (decode.c: the others change registers, flags and
     * memory only) or between instructions (an interrupt, an exception, a
     * reset: seen above as a jump of EIP or CS), or from outside the hooked
     * instructions (cpu->hook_resync).  Otherwise s->prev but
     * its EIP and the TLB's view are already what they would be made. */
    const bool mode_may_change = async || (i->sync & NM_SYNC_CHECK) || c->hook_resync;
    if (mode_may_change) {
        c->hook_resync = false;
        tlb_after(s, i);
    }
    if (s->stall) {
        s->stall = 0;
        s->code_stall = s->data_stall = s->wb_stall = s->io_stall = s->tlb_stall = 0;
    }
    s->accesses = 0;
    s->rep_pace = 0;
    s->misaligned = 0;
    s->taken = false;
    if (mode_may_change) {
        s->prev = nm_x86_mode_now(c);
        s->haz = haz_mode(s->haz, c);
    } else
        s->prev.next_eip = c->eip;
    /* a REP string once, however many steps (cpu_insn_retired; any other
     * instruction retires) */
    s->insns += (opf & NM_OPF_STRING) ? cpu_insn_retired(c, i) : 1;
    s->clocks += clocks;
    arm_next_insn(s);
    return clocks;
}

/* The end of i486_insn's fast path when the prefetcher asks for a line, a
 * fill has started or the next byte is in the next line: prefetch_ahead
 * and arm_next_insn (out of line, so that the fast path saves no
 * registers).  The instruction's code page is RAM (each fast path found
 * it so under this map: made ready, or is_mmio), and the line to arm is in
 * it. */
static inline __attribute__((always_inline)) bool fast_end_easy(const i486_state *s)
{
    const uint32_t line = s->pq_next & ~(LINE - 1), line2 = line + LINE;
    return line == s->pq_last && !s->pf_n && s->pq_valid &&
           !((s->pq_next ^ s->code_phys) & ~0xfffu) && (line2 & 0xfffu) &&
           !(s->cpu->cr0 & NM_CR0_CD);
}
/* fast_end_body's first case (fast_end_easy), for an instruction that
 * started at `start`. */
static inline __attribute__((always_inline)) void fast_end_easy_at(i486_state *s, uint64_t start)
{
    const uint32_t line = s->pq_next & ~(LINE - 1), line2 = line + LINE;
    /* The decoder's next byte is in the last line queued (the line
     * after the armed one, or a branch target's), in the code's 4 KB
     * page, with the line after it in the page too and nothing
     * pending: what the steps below do then.  prefetch_ahead asks for
     * line2 (a cache lookup; a miss pending), arm_next_body arms the
     * line (the queue holds it, in the code's page), arm_after: line2
     * queued, ready unless pending or coming in. */
    bool pending = false;
    if (!nm_cache_i486_read_if_present(s->cache, line2)) {
        s->pf_line[0] = line2;
        s->pf_at[0] = s->code_ready;
        s->pf_n = 1;
        pending = true;
    }
    s->pq_last = line2;
    const bool all = s->fills_in_at <= start; /* (fills_in_at: as in arm_next_body) */
    const fill_rec *f = all ? NULL : fill_of(s, line);
    const uint64_t all_in = all ? s->fills_in_at : fill_all_in(f);
    s->ready_line = line;
    s->ready_head = s->fill_head;
    s->ready_at = all_in;
    s->arm_line = line;
    s->arm_ready = all_in;
    s->arm_rec = f;
    s->arm_fast = all_in <= start ? line : 1;
    s->arm_stay = line;
    s->arm_two = s->arm_fast == line && !pending && (all || fill_all_in(fill_of(s, line2)) <= start)
                     ? line
                     : 1;
    s->arm_gen = *s->map_gen;
}
static inline __attribute__((always_inline)) uint32_t fast_end_body(i486_state *s, uint32_t clocks)
{
    if (likely(fast_end_easy(s))) {
        fast_end_easy_at(s, s->cpu->clock->cycles);
        return clocks;
    }
    prefetch_ahead(s);
    if ((s->pq_next & ~(LINE - 1)) == s->arm_line) {
        if (s->arm_ready <= s->cpu->clock->cycles) s->arm_fast = s->arm_line;
        arm_after(s, s->arm_line);
    } else {
        arm_next_body(s, true);
    }
    return clocks;
}
static uint32_t __attribute__((noinline)) fast_end(i486_state *s, uint32_t clocks)
{
    return fast_end_body(s, clocks);
}

/* This instruction's cache and write-buffer stalls, booked by their parts
 * and cleared (i486_plain's steps); their clocks. */
static uint32_t __attribute__((noinline)) stall_clocks(i486_state *s)
{
    uint32_t st = s->stall;
    s->c_tlb += s->tlb_stall;
    s->c_code_fill += s->code_stall;
    s->c_data_fill += s->data_stall;
    s->c_wbuf += s->wb_stall;
    s->c_io_drain += s->io_stall;
    s->stall = 0;
    s->code_stall = s->data_stall = s->wb_stall = s->io_stall = s->tlb_stall = 0;
    return st;
}

/* The +3 of each misaligned access of this instruction (i486_general's
 * rule), booked; its clocks. */
static uint32_t __attribute__((noinline)) misaligned_clocks(i486_state *s)
{
    uint32_t m = s->misaligned;
    s->misaligned_count += m;
    s->c_misaligned += 3 * m;
    s->misaligned = 0;
    return 3 * m;
}

/* The fast path's end for a near transfer taken: i486_general's steps for
 * it (the queue flushed after the prefetcher has asked for what follows
 * the branch; nothing made ready for the target). */
static uint32_t __attribute__((noinline))
fast_taken(i486_state *s, nm_cpu *c, const i486_static *st)
{
    uint32_t base = st->base_taken, pfx = st->pfx;
    uint32_t clocks = base + pfx + pipe_clocks(s, st);
    if (unlikely(s->misaligned)) clocks += misaligned_clocks(s);
    if (unlikely(s->stall)) clocks += stall_clocks(s);
    s->c_base += base;
    s->c_prefix += pfx;
    prefetch_ahead(s);
    s->taken_transfers++;
    s->pq_valid = false;
    s->code_done = s->code_armed = false;
    s->rep_continues = false;
    s->haz = st->hw | (NM_REG_NONE << 8) | (s->haz & HAZ_REAL); /* haz_after: 3 clocks or more */
    s->accesses = 0;
    s->rep_pace = 0;
    s->taken = false;
    s->prev.next_eip = c->eip;
    s->insns++;
    s->clocks += clocks;
    disarm(s);
    return clocks;
}

/* The insn hook.  Its common case first, with nothing to call: an
 * ST_PLAIN instruction following the last one (i486_plain's case), its
 * code what the last one made ready (code_fetch_armed) or fetched already
 * by a data hook, no stall, the next byte still in the line made ready.
 * It does what i486_plain does then; anything else goes to i486_plain or
 * i486_general, whose results it shares. */
/* This instruction's misaligned accesses and stalls, booked; their clocks
 * (the fast path tests both at once). */
static uint32_t __attribute__((noinline)) extra_clocks(i486_state *s)
{
    uint32_t clocks = 0;
    if (s->misaligned) clocks += misaligned_clocks(s);
    if (s->stall) clocks += stall_clocks(s);
    return clocks;
}

/* What code_fetch_armed keeps that prefetch_ahead and arm_next_insn read,
 * for an instruction the fast path took as made ready with no wait: kept
 * only when they are read (fast_tail's ends that call out). */
static inline __attribute__((always_inline)) void keep_code(i486_state *s, const nm_cpu *c,
                                                            uint32_t next, uint32_t len)
{
    s->code_phys = next - len;
    s->code_len = len;
    s->code_ready = c->clock->cycles; /* the instruction's start: no stall */
}

/* The rest of i486_insn's fast path once the code is in (`next`: the byte
 * after the instruction).  `unkept`: its code was taken as made ready with
 * no wait (code_done clear), and keep_code has not run.  `end_inline`:
 * fast_end's steps here (in the paths out of line already). */
static inline __attribute__((always_inline)) uint32_t
fast_tail(i486_state *s, nm_cpu *c, const nm_insn *i, const i486_static *st, uint32_t next,
          const bool unkept, const bool end_inline)
{
    if (unlikely(s->taken)) {
        if (unkept) keep_code(s, c, next, i->len);
        return fast_taken(s, c, st);
    }
    uint32_t base = st->base, pfx = st->pfx;
    uint32_t clocks = base + pfx + pipe_clocks(s, st);
    if (unlikely(s->misaligned | s->stall)) clocks += extra_clocks(s);
    s->c_prefix += pfx;
    if (!unkept) s->code_done = s->code_armed = false; /* (code_armed implies code_done) */
    s->rep_continues = false;
    s->haz = haz_after(s->haz, st, clocks);
    s->accesses = 0; /* rep_pace is 0: only a REP string (i486_general's) sets it */
    s->prev.next_eip = c->eip;
    s->insns++;
    s->clocks += clocks;
    s->c_base += base;
    /* prefetch_ahead: the next byte's line and the one after are queued
     * already; arm_next_insn: the same line, so only the place moves (both
     * when the next byte is in arm_stay, which a fill or flush clears) */
    s->pq_next = next;
    if (unlikely((next & ~(LINE - 1)) != s->arm_stay)) {
        if (unkept) keep_code(s, c, next, i->len);
        return end_inline ? fast_end_body(s, clocks) : fast_end(s, clocks);
    }
    return clocks;
}

/* i486_insn's fast path for the first instruction after the queue was
 * flushed (a taken transfer): target_fetch, then fast_tail; anything else
 * is i486_general's. */
static uint32_t __attribute__((noinline))
fast_target(i486_state *s, nm_cpu *c, const nm_insn *i, const i486_static *st)
{
    const uint32_t lin = c->seg[NM_CS].base + c->insn_eip, len = i->len;
    const uint32_t phys = c->fetch_phys | (lin & 0xfff);
    if (!target_fetch(s, c, lin, phys, len)) return i486_general(s, c, i);
    return fast_tail(s, c, i, st, phys + len, false, true);
}

/* i486_insn's fast path for an instruction made ready whose line is still
 * coming in (arm_fast clear): with paging on a TLB hit, it waits for its
 * dwords (code_wait), then fast_tail. */
static uint32_t __attribute__((noinline))
fast_armed_wait(i486_state *s, nm_cpu *c, const nm_insn *i, const i486_static *st, uint32_t lin,
                uint32_t phys)
{
    const uint32_t len = i->len;
    if (c->paging && !tlb_code_hit(s, lin, len)) return i486_general(s, c, i);
    s->code_phys = phys;
    s->code_len = len;
    const uint64_t now = c->clock->cycles; /* no data access yet: no stall so far */
    s->code_ready = s->arm_ready > now ? code_wait_armed(s, phys, len, now) : now;
    return fast_tail(s, c, i, st, phys + len, false, true);
}

/* i486_insn's fast path for an instruction that starts at the next byte
 * of the queue (no flush) with every line it needs queued already (one,
 * or two in the same 4 KB page), in RAM with the cache on, but that the
 * last one's end could not make ready (a prefetch of its line pending, or
 * its bytes run into the next line): code_fetch_slow's steps for it, which
 * ask the bus for nothing but the pending prefetches of those lines
 * (settled now) and wait for the dwords it needs; with paging, on a TLB
 * hit.  Then fast_tail.  Anything else is i486_general's, with nothing
 * changed. */
static uint32_t __attribute__((noinline))
fast_queued(i486_state *s, nm_cpu *c, const nm_insn *i, const i486_static *st, uint32_t lin,
            uint32_t phys)
{
    const uint32_t len = i->len, first = phys & ~(LINE - 1);
    const uint32_t last = (phys + len - 1) & ~(LINE - 1), lines = last == first ? 1 : 2;
    if ((int32_t)(last - s->pq_last) > 0 || ((first ^ last) & ~0xfffu) || (c->cr0 & NM_CR0_CD) ||
        is_mmio(c, phys))
        return i486_general(s, c, i);
    if (c->paging && !tlb_code_hit(s, lin, len)) return i486_general(s, c, i);
    /* no data access yet: no stall so far, the clock is the start; every
     * line queued already (code_lines_in queues none) */
    const uint64_t now = c->clock->cycles;
    settle_code_lines(s, first, lines, now);
    const uint64_t ready = code_lines_in(s, phys, len, lines, now);
    if (ready > now) add_read_stall(s, (uint32_t)(ready - now), true);
    /* what code_fetched keeps that prefetch_ahead reads */
    s->code_phys = phys;
    s->code_len = len;
    s->code_ready = now_of(s);
    return fast_tail(s, c, i, st, phys + len, false, true);
}

static inline __attribute__((always_inline)) uint32_t
i486_insn_inline(void *opaque, nm_cpu *c, const nm_insn *i, const bool seq)
{
    i486_state *s = opaque;
    const i486_static *st = (const i486_static *)(const void *)i->model_data;
    /* seq: the last instruction's call left EIP and CS in s->prev and
     * hook_resync clear, and nothing has run since but this instruction,
     * whose accesses to anything but RAM disarmed (i486_mem): so the
     * memory map is as the line made ready saw it, if one is (else it is
     * looked at here) */
    /* model_tag and st->fast, in one load: the memo is ours, and the
     * instruction may take a fast path */
    static const uint8_t tag_fast[2] = {NM_INSN_TAG_486, 1};
    uint16_t want, have;
    memcpy(&want, tag_fast, sizeof want);
    memcpy(&have, &i->model_tag, sizeof have);
    if (unlikely(have != want ||
                 (!seq && (c->hook_resync || c->insn_eip != s->prev.next_eip ||
                           c->seg[NM_CS].selector != s->prev.cs || *s->map_gen != s->arm_gen))))
        return i486_general(s, c, i);
    const uint32_t lin = c->seg[NM_CS].base + c->insn_eip, len = i->len;
    if (likely(!s->code_done)) {
        /* code_fetch_armed but CR0.CD's test (only MOV CR0 changes it:
         * an NM_SYNC_CHECK instruction, i486_general's, whose end makes
         * nothing ready with the cache off).  No data access yet, so no
         * stall so far, and the clock is the instruction's start. */
        const uint32_t phys = c->fetch_phys | (lin & 0xfff), next = phys + len;
        if (phys != s->pq_next || ((next - 1) & ~(LINE - 1)) != s->arm_fast) {
            if (!s->pq_valid) return fast_target(s, c, i, st);
            if (phys != s->pq_next) return i486_general(s, c, i);
            /* made ready, still coming in: the wait for its dwords */
            if (((next - 1) & ~(LINE - 1)) == s->arm_line)
                return fast_armed_wait(s, c, i, st, lin, phys);
            /* into the line after the one armed, ready too: as made ready
             * (fast_queued's steps would wait for nothing) */
            if (((next - 1) & ~(LINE - 1)) != s->arm_two + LINE)
                return fast_queued(s, c, i, st, lin, phys);
        }
        /* tlb_access when it hits (a test without effect when it does
         * not, so i486_general starts from the same state) */
        if (c->paging && !tlb_code_hit(s, lin, len)) return i486_general(s, c, i);
        return fast_tail(s, c, i, st, next, true, false);
    }
    /* by a data hook: made ready, the map unchanged since (so still RAM:
     * i486_general looks again; code_fetch_armed saw the instruction in
     * the line made ready); or fetched another way */
    const uint32_t next = s->code_phys + len;
    if (s->code_lin != lin || s->code_len < len) return i486_general(s, c, i);
    if (likely(s->code_armed)) {
        if (*s->map_gen != s->arm_gen) return i486_general(s, c, i);
    } else {
        /* fetched another way (after a flush, or waiting on the bus):
         * i486_plain's MMIO test, the queue in use (not with the cache
         * off), and nothing made ready kept (the instruction's end works
         * it out again: fast_end) */
        if (!s->pq_valid || is_mmio(c, c->fetch_phys | (lin & 0xfff))) return i486_general(s, c, i);
        disarm(s);
    }
    s->code_len = len; /* code_fetch's first case */
    return fast_tail(s, c, i, st, next, false, false);
}
static uint32_t i486_insn(void *opaque, nm_cpu *c, const nm_insn *i)
{
    return i486_insn_inline(opaque, c, i, false);
}

/* Whether an instruction was seen by this model and may be in a stretch. */
static inline __attribute__((always_inline)) bool regonly(const nm_insn *i)
{
    return i->model_tag == NM_INSN_TAG_486 &&
           ((const i486_static *)(const void *)i->model_data)->regonly;
}

/* The address rules' clocks of the instructions of a stretch, by part
 * (pipe_clocks' bookings). */
typedef struct {
    uint32_t index, agi_n, agi, ahead, partial;
} rule_sums;

/* A walk's step (stretch_walk, run_walk): the clocks of an instruction
 * (st) of `row` clocks by its row and prefixes after the address rules'
 * state *h, its rules added to t, *h moved past it: pipe_clocks and
 * haz_after as its fast path makes them. */
static inline __attribute__((always_inline)) uint32_t walk_rules(unsigned *h, const i486_static *st,
                                                                 uint32_t row, rule_sums *t)
{
    uint32_t clocks = row;
    if (st->flags & ST_INDEX) {
        clocks++;
        t->index++;
    }
    if (st->amask | (*h & HAZ_B0)) {
        pipe_parts p;
        clocks += pipe_rules(*h, st, &p);
        t->agi_n += p.agi != 0;
        t->agi += p.agi;
        t->ahead += p.ahead;
        t->partial += p.partial;
    }
    *h = haz_after(*h, st, clocks);
    return clocks;
}

/* i486_ahead's instructions from e (at `phys`) that end in its line with
 * the next byte there too, and the one after them when its next byte is
 * in the next line, after the address rules' state h, made into slot r;
 * NULL when an instruction the model has not seen yet stops it (nothing
 * kept: it may qualify once seen). */
static __attribute__((noinline)) struct i486_stretch *
stretch_walk(struct i486_stretch *r, const ic_entry *e, uint32_t phys, uint32_t gen, unsigned h)
{
    const uint32_t line = phys & ~(LINE - 1);
    struct i486_stretch t = {.tag = e->tag, .gen = gen, .haz_in = (uint16_t)h};
    uint32_t at = phys, clocks = 0, base = 0;
    rule_sums rs = {0};
    for (const ic_entry *x = e;;) {
        const nm_insn *i = &x->insn;
        const i486_static *st = (const i486_static *)(const void *)i->model_data;
        const uint32_t next = at + i->len;
        if (i->model_tag != NM_INSN_TAG_486) return NULL;
        if (!st->regonly) {
            if (i->op == NM_OP_JCC && (st->flags & ST_NEAR_BRANCH)) {
                if ((next & ~(LINE - 1)) == line)
                    t.jcc_len = i->len;
                else
                    t.cross_len = i->len;
            }
            break;
        }
        if ((next & ~(LINE - 1)) != line) {
            t.cross_len = i->len;
            break;
        }
        clocks += walk_rules(&h, st, st->base + st->pfx, &rs);
        base += st->base;
        t.pfx += st->pfx;
        at = next;
        t.n++;
        const ic_entry *nx = ic_successor(x);
        if (!nx) break;
        x = nx;
    }
    t.bytes = (uint8_t)(at - phys); /* (fewer than two: kept too, as no stretch) */
    t.haz_out = (uint16_t)h;
    t.index = (uint8_t)rs.index;
    t.agi_n = (uint8_t)rs.agi_n;
    t.agi = (uint8_t)rs.agi;
    t.ahead = (uint8_t)rs.ahead;
    t.partial = (uint8_t)rs.partial;
    t.clocks = (uint16_t)clocks;
    t.base = (uint16_t)base;
    *r = t;
    return r;
}

/* i486_ahead's walk from e (at `phys`, the queue as q0): the stretch's
 * instructions and sums, and its line changes; *unseen when an instruction
 * the model has not seen yet stopped it (it may go further once seen). */
static inline __attribute__((always_inline)) void
run_walk(i486_state *s, const ic_entry *e, uint32_t phys, uint32_t gen, uint64_t now, queue_view q,
         const bool pq_valid, run_sums *out, bool *unseen)
{
    unsigned h = s->haz;
    uint32_t n = 0, clocks = 0, base = 0, pfx = 0, at = phys;
    rule_sums rs = {0};
    unsigned changes = out->changes; /* (the target's end: target_walk's) */
    out->jcc_len = out->jcc_extra = out->loops = out->jcc_cross = 0;
    for (const ic_entry *x = e;;) {
        const uint32_t here = at & ~(LINE - 1);
        if (q.arm_fast != here || q.arm_stay != here) break;
        const uint32_t owner = (uint32_t)((const char *)&x->insn - s->ic_base);
        struct i486_stretch *r = &s->stretch[(owner >> 5) & (STRETCH_SIZE - 1)];
        if (r->tag != x->tag || r->gen != gen || r->haz_in != h) {
            r = stretch_walk(r, x, at, gen, h);
            if (!r) {
                *unseen = true;
                break;
            }
        }
        if (r->n) {
            n += r->n;
            clocks += r->clocks;
            base += r->base;
            pfx += r->pfx;
            rs.index += r->index;
            rs.agi_n += r->agi_n;
            rs.agi += r->agi;
            rs.ahead += r->ahead;
            rs.partial += r->partial;
            h = r->haz_out;
            at += r->bytes;
        }
        if (!r->cross_len) {
            if (r->jcc_len) {
                /* the near Jcc after them (in the line made ready, its next
                 * byte there): the fast path's outcome if not taken (no
                 * address rules: no memory operand); a jump's is added
                 * after it ran (i486_ahead_branch) */
                const nm_insn *ji = &(x + r->bytes)->insn;
                const i486_static *js = (const i486_static *)(const void *)ji->model_data;
                out->jcc_len = ji->len;
                out->jcc_extra = (uint8_t)(js->base_taken - js->base);
                out->jcc_off = (uint16_t)(at - phys);
                /* (32-bit: its target its next byte + disp) */
                out->loops = !(ji->prefixes & NM_PFX_OPSIZE) && at - phys + ji->len + ji->disp == 0;
                out->jcc_spent = clocks;
                clocks += walk_rules(&h, js, js->base + js->pfx, &rs);
                base += js->base;
                pfx += js->pfx;
                n++;
                at += ji->len;
            }
            break;
        }
        if (changes == RUN_MAX_CHANGES) break;
        /* the one whose next byte is in the next line: its fetch made ready
         * (its last byte in the line), or into the line after one armed
         * with it ready too; its end fast_end_easy's */
        const ic_entry *cx = x + r->bytes; /* (e + len: the successor, icache.c) */
        const nm_insn *ci = &cx->insn;
        const i486_static *cs = (const i486_static *)(const void *)ci->model_data;
        const uint32_t next = at + ci->len, last = (next - 1) & ~(LINE - 1);
        const uint32_t line1 = here + LINE, line2 = line1 + LINE;
        if (last != q.arm_fast && !(pq_valid && last != q.arm_line && last == q.arm_two + LINE))
            break;
        if (line1 != q.pq_last || q.pf_pending || ((next ^ at) & ~0xfffu) || !(line2 & 0xfffu))
            break;
        const uint64_t start = now + clocks;
        out->change_off[changes] = (uint16_t)(at - phys);
        out->change_len[changes] = (uint8_t)ci->len;
        out->change_spent[changes++] = clocks;
        clocks += walk_rules(&h, cs, cs->base + cs->pfx, &rs);
        base += cs->base;
        pfx += cs->pfx;
        n++;
        if (!cs->regonly) {
            /* a near Jcc (stretch_walk): the stretch ends with it */
            out->jcc_len = ci->len;
            out->jcc_extra = (uint8_t)(cs->base_taken - cs->base);
            out->jcc_off = (uint16_t)(at - phys);
            out->jcc_spent = out->change_spent[changes - 1];
            out->jcc_cross = 1;
            at = next;
            break;
        }
        at = next;
        /* fast_end_easy_at's outcome for the queue */
        const nm_cache_head *ch = (const nm_cache_head *)(const void *)s->cache;
        const bool pending = ((line2 & ch->line_mask) | 1u) !=
                                 ch->set_mru[(line2 >> ch->line_shift) & ch->set_mask] &&
                             !nm_cache_i486_probe(s->cache, line2);
        const bool all = s->fills_in_at <= start;
        const uint64_t all_in = all ? s->fills_in_at : fill_all_in(fill_of(s, line1));
        q.pq_last = line2;
        q.pf_pending = pending;
        q.arm_line = line1;
        q.arm_fast = all_in <= start ? line1 : 1;
        q.arm_stay = line1;
        q.arm_two =
            q.arm_fast == line1 && !pending && (all || fill_all_in(fill_of(s, line2)) <= start)
                ? line1
                : 1;
        /* (ic_successor written out: through it, cpubench measured 0.25%
         * slower here) */
        const ic_entry *nx = cx->seq;
        if (!nx || nx->tag != cx->tag + ((uint64_t)ci->len << 1)) break;
        if (nx->insn.model_tag != NM_INSN_TAG_486) {
            *unseen = true;
            break;
        }
        if (!regonly(&nx->insn)) break;
        x = nx;
    }
    out->n = n;
    out->clocks = clocks;
    out->bytes = at - phys;
    out->base = base;
    out->pfx = pfx;
    out->index = rs.index;
    out->agi_n = rs.agi_n;
    out->agi = rs.agi;
    out->ahead = rs.ahead;
    out->partial = rs.partial;
    out->haz = (uint16_t)h;
    out->changes = (uint8_t)changes;
    out->end_pending = q.pf_pending;
}

/* run_walk from a branch target, the queue flushed (e at `phys`, every
 * fill all in): its fetch as target_fetch makes it (its line a cache hit,
 * no prefetch pending) and its end as fast_end_easy_at (its next byte in
 * the line, the line after it in the page), the first of the changes, at
 * its start; then the walk with the queue that end leaves.  n 0 when the
 * line is not in the cache or the instruction's next byte is past it. */
static inline __attribute__((always_inline)) void target_walk(i486_state *s, const ic_entry *e,
                                                              uint32_t phys, uint32_t gen,
                                                              uint64_t now, run_sums *out,
                                                              bool *unseen)
{
    const uint32_t line = phys & ~(LINE - 1), line2 = line + LINE, len = e->insn.len;
    *out = (run_sums){0};
    if (((phys + len) & ~(LINE - 1)) != line || !(line2 & 0xfffu) ||
        !nm_cache_i486_probe(s->cache, phys))
        return;
    const nm_cache_head *ch = (const nm_cache_head *)(const void *)s->cache;
    const bool pending =
        ((line2 & ch->line_mask) | 1u) != ch->set_mru[(line2 >> ch->line_shift) & ch->set_mask] &&
        !nm_cache_i486_probe(s->cache, line2);
    const queue_view q = {line, line, line, pending ? 1 : line, line2, pending};
    out->change_len[0] = (uint8_t)len; /* (offset 0, at the start) */
    out->changes = 1;
    run_walk(s, e, phys, gen, now, q, true, out, unseen);
}

/* i486_ahead's outcome for the stretch `w` from `phys` (`lin`, EIP `eip`,
 * the code page's TLB tag `page_tag`) starting at `now`, a branch target's
 * (target_walk) or not: each one's fast_tail steps and tlb_quick_hit's,
 * then its line changes, made afterwards at each one's start. */
static inline __attribute__((always_inline)) void
stretch_apply(i486_state *s, const nm_cpu *c, const run_sums *w, uint32_t phys, uint32_t lin,
              uint32_t page_tag, uint32_t eip, uint64_t now, const bool target)
{
    const uint32_t n = w->n;
    s->stretch_insns += n;
    /* fast_tail's steps for each, and tlb_quick_hit's */
    if (c->paging) {
        s->tlb.mru = page_tag;
        s->tlb.stats.hits += n;
        s->tlb_code_hits += n;
    }
    s->c_index += w->index;
    s->agi += w->agi_n;
    s->c_agi += w->agi;
    s->c_ahead += w->ahead;
    s->c_partial += w->partial;
    s->c_prefix += w->pfx;
    s->rep_continues = false;
    s->haz = w->haz;
    s->accesses = 0;
    s->prev.next_eip = eip + w->bytes;
    s->insns += n;
    s->clocks += w->clocks;
    s->c_base += w->base;
    if (target) {
        /* target_fetch's steps: the flush, nothing pending to settle, the
         * line a hit (target_walk found it) */
        s->queue_flushes++;
        s->pq_valid = true;
        nm_cache_i486_access(s->cache, phys, false, NULL);
        s->code_lin = lin;
    }
    /* the line changes, at the start of the instruction that makes each
     * (keep_code, fast_end_easy_at; a target's end the first): what one
     * leaves the next overwrites but its cache lookup of the line after
     * the next byte's, a hit (the walk goes past a change only when that
     * line is in the cache: nothing pending) */
    const unsigned made = w->changes - w->jcc_cross; /* (a Jcc's: i486_ahead_branch's) */
    if (made) {
        const unsigned last = made - 1u;
        for (unsigned k = 0; k < last; k++) {
            /* (nm_cache_read_if_present written out: left to the
             * compiler, it was a call here) */
            const uint32_t line2 =
                ((phys + w->change_off[k] + w->change_len[k]) & ~(LINE - 1)) + LINE;
            if (!nm_cache_i486_read_set_mru(s->cache, line2))
                nm_cache_i486_read_if_present_slow(s->cache, line2);
        }
        const uint64_t start = now + w->change_spent[last];
        s->pq_next = phys + w->change_off[last] + w->change_len[last];
        s->code_phys = phys + w->change_off[last];
        s->code_len = w->change_len[last];
        s->code_ready = start;
        fast_end_easy_at(s, start);
    }
    s->pq_next = phys + w->bytes;
}

/* The run loop's question before an instruction (nm_cpu_hooked_loop's
 * `ahead`; `ok`: the last insn hook returned in the loop and nothing ran
 * since, the page is 32-bit code within the CS limit).  A stretch here:
 * instructions that can neither fault nor touch memory (nm_insn_regonly,
 * ST_PLAIN) from the decoder's next byte, with no branch outcome, stall or
 * misaligned access pending, the cache on and, with paging, the code page
 * the TLB's entry its set used last, each of which would take i486_insn's
 * fast path with its code made ready (fast_tail with nothing kept): in the
 * line made ready (arm_fast) leaving the next byte there (arm_stay), or,
 * where the next byte is in the next line, ending in the line or running
 * into the next one armed ready too (arm_two), with fast_end_easy's case
 * at its end; past it the stretch goes on while the line it arms is all
 * in by that instruction's start (queue_view follows the queue).  Each
 * comes to its row, its prefix clocks and the address rules (agi_clocks,
 * with the register the one before wrote); per line those are kept
 * (stretch_walk), and the line changes made afterwards at each one's
 * start clock (fast_end_easy_at).  Applied when they stay short of the
 * deadline and the budget: their number, their clocks in *cost; else 0
 * and nothing done (each one then goes through the insn hook). */
static inline __attribute__((always_inline)) unsigned i486_ahead(void *opaque, nm_cpu *c,
                                                                 const ic_entry *e, const bool ok,
                                                                 uint64_t now, uint64_t deadline,
                                                                 uint64_t budget, uint32_t *cost)
{
    i486_state *s = opaque;
    if (!ok || !regonly(&e->insn) || !e->seq || !regonly(&e->seq->insn)) return 0;
    const uint32_t lin = c->seg[NM_CS].base + c->eip;
    const uint32_t phys = c->fetch_phys | (lin & 0xfff), line = phys & ~(LINE - 1);
    /* Every fill all in by now (so by every start in the stretch): the walk
     * reads nothing of the clock, and what it finds holds while its inputs
     * do (i486_run_memo) */
    const bool settled = s->fills_in_at <= now;
    /* A branch target (the queue flushed: target_walk), every fill all in
     * and no prefetch pending (the flush drops nothing), not MMIO, or the
     * line armed */
    const bool target = !s->pq_valid;
    if (target ? !settled || s->pf_n || is_mmio(c, phys)
               : phys != s->pq_next || s->arm_fast != line || s->arm_stay != line)
        return 0;
    if (s->code_done || s->taken || (s->misaligned | s->stall) || c->fast_exit ||
        (c->cr0 & NM_CR0_CD))
        return 0;
    const uint32_t page_tag = (lin & 0xfffff000u) | 1u;
    if (c->paging && tlb_set_mru(s, lin) != page_tag) return 0;
    const uint32_t gen = *ic_gen(c->icache, c->fetch_phys);
    /* The queue as fast_end_easy leaves it at each line change (followed
     * without changing the model), the sums, and the changes to make.  (A
     * target's: none, the flush's; target_walk's queue follows from the
     * line.) */
    const queue_view q0 =
        target ? (queue_view){0} : (queue_view){s->arm_line, s->arm_fast, s->arm_stay,
                                                s->arm_two,  s->pq_last,  s->pf_n != 0};
    const uint64_t cache_gen = ((const nm_cache_head *)(const void *)s->cache)->content_gen;
    struct i486_run_memo *rm =
        &s->runs[((uint32_t)((const char *)&e->insn - s->ic_base) >> 5) & (RUN_MEMO_SIZE - 1)];
    run_sums walked;
    const run_sums *w = &rm->out;
    if (settled && rm->tag == e->tag && rm->gen == gen && rm->cache_gen == cache_gen &&
        rm->haz_in == s->haz && rm->pq_valid == s->pq_valid && rm->q.arm_line == q0.arm_line &&
        rm->q.arm_fast == q0.arm_fast && rm->q.arm_stay == q0.arm_stay &&
        rm->q.arm_two == q0.arm_two && rm->q.pq_last == q0.pq_last &&
        rm->q.pf_pending == q0.pf_pending) {
    } else {
        bool unseen = false;
        if (target) {
            target_walk(s, e, phys, gen, now, &walked, &unseen);
        } else {
            walked.changes = 0;
            run_walk(s, e, phys, gen, now, q0, true, &walked, &unseen);
        }
        w = &walked;
        if (settled && !unseen) {
            rm->tag = e->tag;
            rm->gen = gen;
            rm->cache_gen = cache_gen;
            rm->haz_in = (uint16_t)s->haz;
            rm->pq_valid = s->pq_valid;
            rm->q = q0;
            rm->out = walked;
            w = &rm->out;
        }
    }
    const uint32_t n = w->n, clocks = w->clocks;
    /* (a Jcc at the end: its jump's clocks within the deadline too, and no
     * fault possible, the segment flat) */
    if (n < 2 || n >= budget || now + clocks + w->jcc_extra >= deadline || s->stretch_off ||
        (w->jcc_len && c->seg[NM_CS].limit != 0xffffffffu))
        return 0;
    const unsigned haz_before = s->haz;
    stretch_apply(s, c, w, phys, lin, page_tag, c->eip, now, target);
    *cost = clocks;
    if (w->jcc_len) {
        s->jcc_phys = phys + w->jcc_off;
        s->jcc_len = w->jcc_len;
        s->jcc_extra = w->jcc_extra;
        s->jcc_start = now + w->jcc_spent;
        s->jcc_cross = w->jcc_cross;
        /* A loop's body from its target (kept: w is the memo's), whose next
         * run would find what this one did: the address rules' state the
         * same (a taken Jcc's, jcc_jumped), nothing pending after it, every
         * fill still in (a
         * target's), and its cache lookups of the consecutive lines it
         * runs through (distinct sets) hits on their sets' last lines, the
         * queue flushed again -- each run the same but for its clock.  As
         * many as i486_ahead would take one after the other: each within
         * the deadline, jump included, and short of the budget. */
        if (target && w->loops && !w->end_pending && w == &rm->out &&
            (haz_before & ~HAZ_REAL) == HAZ_EMPTY) {
            const uint64_t per = clocks + w->jcc_extra;
            uint64_t reps = (deadline - now - 1) / per;
            if ((budget - 1) / n < reps) reps = (budget - 1) / n;
            if (reps > LOOP_REPS_MAX) reps = LOOP_REPS_MAX;
            if (reps > 1) {
                c->stretch_reps = (uint32_t)reps;
                s->loop = rm;
                s->loop_phys = phys;
                s->loop_lin = lin;
                s->loop_page_tag = page_tag;
                s->loop_eip = c->eip;
                s->loop_now = now;
                return n | NM_STRETCH_BRANCH | NM_STRETCH_LOOP;
            }
        }
        return n | NM_STRETCH_BRANCH;
    }
    return n;
}

/* The Jcc a stretch ended with jumped: keep_code's state from its start,
 * then fast_taken's steps (`prefetch`: its next byte in the next line, for
 * which prefetch_ahead asks; in its line it asks for nothing, the line
 * after queued already, arm_stay); the clocks a jump adds. */
static inline __attribute__((always_inline)) uint32_t jcc_jumped(i486_state *s, const nm_cpu *c,
                                                                 const bool prefetch)
{
    const uint32_t extra = s->jcc_extra;
    s->c_base += extra;
    s->clocks += extra;
    s->code_phys = s->jcc_phys;
    s->code_len = s->jcc_len;
    s->code_ready = s->jcc_start;
    if (prefetch) prefetch_ahead(s);
    s->taken_transfers++;
    s->pq_valid = false;
    s->prev.next_eip = c->eip;
    /* the Jcc writes nothing and took more than one clock (haz_after) */
    s->haz = HAZ_EMPTY | (s->haz & HAZ_REAL);
    disarm(s);
    return extra;
}

/* i486_ahead_branch when the loop ran a loop's body `again` more times
 * (NM_STRETCH_LOOP): the first one's jump, the ones between (jumps too) as
 * counts -- each the same but for its clock -- and the last one as
 * i486_ahead makes it at its start, then its Jcc's outcome; their clocks
 * but the first one's. */
static uint32_t __attribute__((noinline))
loop_again(i486_state *s, nm_cpu *c, bool taken, uint32_t again)
{
    const run_sums *w = &s->loop->out;
    const uint32_t n = w->n, clocks = w->clocks, extra = w->jcc_extra;
    s->loop_again += again;
    s->c_base += extra;
    s->clocks += extra;
    s->taken_transfers++;
    const uint64_t mid = again - 1u;
    s->stretch_insns += mid * n;
    if (c->paging) {
        s->tlb.stats.hits += mid * n;
        s->tlb_code_hits += mid * n;
    }
    s->c_index += mid * w->index;
    s->agi += mid * w->agi_n;
    s->c_agi += mid * w->agi;
    s->c_ahead += mid * w->ahead;
    s->c_partial += mid * w->partial;
    s->c_prefix += mid * w->pfx;
    s->insns += mid * n;
    s->clocks += mid * (clocks + extra);
    s->c_base += mid * (w->base + extra);
    s->queue_flushes += mid;
    s->taken_transfers += mid;
    /* the target's lookup and each change's */
    ((nm_cache_head *)(void *)s->cache)->stats.read_hits += mid * (1u + w->changes);
    const uint64_t now = s->loop_now + (uint64_t)again * (clocks + extra);
    stretch_apply(s, c, w, s->loop_phys, s->loop_lin, s->loop_page_tag, s->loop_eip, now, true);
    s->jcc_start = now + w->jcc_spent;
    return again * (clocks + extra) + (taken ? jcc_jumped(s, c, false) : 0);
}

/* i486_ahead_branch for a Jcc whose next byte is in the next line: not
 * taken, its line change (the walk's, at its start); taken, prefetch_ahead
 * asks for the line after it.  Either way from keep_code's state. */
static uint32_t __attribute__((noinline)) ahead_branch_cross(i486_state *s, nm_cpu *c, bool taken)
{
    if (taken) return jcc_jumped(s, c, true);
    s->code_phys = s->jcc_phys;
    s->code_len = s->jcc_len;
    s->code_ready = s->jcc_start;
    fast_end_easy_at(s, s->jcc_start);
    return 0;
}

/* The outcome of the Jcc a stretch ended with (nm_cpu_hooked_loop's
 * ahead_branch), counted as not taken by i486_ahead: a jump is fast_taken's
 * further steps from its start (keep_code's), its further clocks
 * returned. */
static inline __attribute__((always_inline)) uint32_t i486_ahead_branch(void *opaque, nm_cpu *c,
                                                                        bool taken, uint32_t again)
{
    i486_state *s = opaque;
    if (unlikely(again)) return loop_again(s, c, taken, again);
    if (unlikely(s->jcc_cross)) return ahead_branch_cross(s, c, taken);
    return taken ? jcc_jumped(s, c, false) : 0;
}

/* The CPU's run loop with this model as its only listener, the insn and
 * branch hooks inlined (nm_cpu_hooks.run).  (The branch hook was once left
 * to its pointer, when inlining it measured slower; with the stretches'
 * walk kept (i486_run_memo) inlined is faster: cpubench small 149.9 host
 * instructions a guest instruction inlined, 153.1 through the pointer.) */
static __attribute__((noinline)) void i486_run_stretches(nm_cpu *c, uint64_t limit)
{
    nm_cpu_hooked_loop(c, limit, true, i486_insn_inline, i486_branch, i486_ahead,
                       i486_ahead_branch);
}
static __attribute__((noinline)) void i486_run_plain(nm_cpu *c, uint64_t limit)
{
    nm_cpu_hooked_loop(c, limit, true, i486_insn_inline, i486_branch, NULL, NULL);
}
static void i486_run(nm_cpu *c, uint64_t limit)
{
    i486_state *s = c->hooks.opaque;
    if (c->instructions < s->stretch_back_at) {
        i486_run_plain(c, limit);
        return;
    }
    const uint64_t insns0 = c->instructions, stretch0 = s->stretch_insns;
    i486_run_stretches(c, limit);
    /* Asking for stretches costs the loop (it keeps fewer values in
     * registers: a guest kernel's window, where the code is mostly still
     * coming in when it is asked for, ran 2% slower), so the loop asks only
     * while they pay: with fewer than one instruction in STRETCH_SHARE
     * run in them over a window of STRETCH_WINDOW, it rests for
     * STRETCH_REST instructions (counts of guest instructions:
     * deterministic; the clocks are the same either way). */
    s->window_insns += c->instructions - insns0;
    s->window_stretch += s->stretch_insns - stretch0;
    if (s->window_insns >= STRETCH_WINDOW) {
        if (s->window_stretch * STRETCH_SHARE < s->window_insns)
            s->stretch_back_at = c->instructions + STRETCH_REST;
        s->window_insns = s->window_stretch = 0;
    }
}

/* Bus-master DMA: the 486 snoops its cache when another master drives the
 * bus (AHOLD/EADS#: "the Intel486 processor will invalidate the cache
 * line if the address hits", Embedded Intel486 Hardware Reference Manual,
 * "cache invalidation"); a write-through cache holds nothing newer than
 * memory, so a write's lines are dropped and a read needs nothing.  The
 * board's L2 drops the lines written too (membus.h). */
static void i486_snoop(void *opaque, uint32_t phys, uint32_t len, bool write)
{
    i486_state *s = opaque;
    if (!write || !len) return;
    uint64_t end = (uint64_t)phys + len;
    for (uint64_t a = phys & ~(uint64_t)(LINE - 1); a < end; a += LINE) {
        if (!nm_cache_i486_probe(s->cache, (uint32_t)a)) continue;
        nm_cache_invalidate_line(s->cache, (uint32_t)a);
        s->snoop_invalidations++;
        /* the straight-line shortcut of code_fetch must look again */
        if ((uint32_t)a == s->ready_line) s->ready_at = UINT64_MAX;
        if ((uint32_t)a == s->arm_line || (uint32_t)a == s->arm_two + LINE) disarm(s);
    }
    nm_board_snoop_write(&s->board, phys, len);
}

void nm_i486_set_shortcuts(void *state, bool on)
{
    ((i486_state *)state)->shortcuts_off = !on;
}

void nm_i486_set_stretch(void *state, bool on)
{
    ((i486_state *)state)->stretch_off = !on;
}

uint64_t nm_i486_stretch_insns(const void *state)
{
    return ((const i486_state *)state)->stretch_insns;
}

uint64_t nm_i486_loop_again(const void *state)
{
    return ((const i486_state *)state)->loop_again;
}

static void i486_report(void *opaque, nm_report *r)
{
    i486_state *s = opaque;
    const nm_cache_stats *cs = nm_cache_get_stats(s->cache);
    nm_report_u64(r, "instructions", s->insns);
    nm_report_u64(r, "clocks", s->clocks);
    nm_x87_report(&s->x87, r);
    nm_report_u64(r, "agi_stalls", s->agi);
    nm_report_u64(r, "prefix_clocks", s->c_prefix); /* the same count */
    nm_report_u64(r, "misaligned_accesses", s->misaligned_count);
    nm_report_u64(r, "split_writes", s->split_writes);
    nm_report_u64(r, "cache_read_hits", cs->read_hits);
    nm_report_u64(r, "cache_read_misses", cs->read_misses);
    nm_report_u64(r, "cache_code_misses", s->code_misses);
    nm_report_u64(r, "cache_data_misses", s->data_misses);
    nm_report_u64(r, "cache_write_hits", cs->write_hits);
    nm_report_u64(r, "cache_write_misses", cs->write_misses);
    nm_report_u64(r, "line_fill_stall_clocks", s->fill_stall);
    nm_report_u64(r, "write_buffer_writes", s->wbuf.writes);
    nm_report_u64(r, "write_buffer_full_stalls", s->wbuf.full_stalls);
    nm_report_u64(r, "write_buffer_stall_clocks", s->wbuf_stall);
    nm_report_u64(r, "taken_transfers", s->taken_transfers);
    nm_report_u64(r, "interrupts_and_exceptions", s->async_transfers);
    nm_report_u64(r, "reads_ahead_of_writes", s->reads_ahead);
    nm_report_u64(r, "prefetch_ahead_fills", s->prefetch_fills);
    nm_report_u64(r, "prefetch_queue_flushes", s->queue_flushes);
    nm_report_u64(r, "reads_waiting_for_a_fill", s->fill_waits);
    nm_report_u64(r, "line_fill_bus_clocks_l2", s->board.l2 ? s->board.l2_fill : 0);
    nm_report_u64(r, "line_fill_bus_clocks_dram", s->board.dram_fill);
    nm_board_report(&s->board, r);
    /* Where the clocks went; the parts sum to `clocks`.  The I/O bus cycles
     * (ISA wait states) are not here: the window's bus_wait_cycles. */
    nm_report_u64(r, "clocks_table", s->c_base);
    nm_report_u64(r, "clocks_io_instructions", s->c_io);
    nm_report_u64(r, "clocks_interrupts", s->c_int);
    nm_report_u64(r, "clocks_prefixes", s->c_prefix);
    nm_report_u64(r, "clocks_index", s->c_index);
    nm_report_u64(r, "clocks_agi", s->c_agi);
    nm_report_u64(r, "clocks_byte_load_ahead", s->c_ahead);
    nm_report_u64(r, "clocks_partial_register", s->c_partial);
    nm_report_u64(r, "clocks_misaligned", s->c_misaligned);
    nm_report_u64(r, "clocks_code_fills", s->c_code_fill);
    nm_report_u64(r, "clocks_data_fills", s->c_data_fill);
    nm_report_u64(r, "clocks_write_buffer", s->c_wbuf);
    nm_report_u64(r, "clocks_io_write_drain", s->c_io_drain);
    nm_report_u64(r, "clocks_tlb_walks", s->c_tlb);
    nm_report_u64(r, "tlb_code_hits", s->tlb_code_hits);
    nm_report_u64(r, "tlb_code_misses", s->tlb_code_misses);
    nm_report_u64(r, "tlb_data_hits", s->tlb_data_hits);
    nm_report_u64(r, "tlb_data_misses", s->tlb_data_misses);
    nm_report_u64(r, "tlb_flushes", s->tlb.stats.flushes);
    nm_report_u64(r, "tlb_page_flushes", s->tlb.stats.page_flushes);
    nm_report_u64(r, "tlb_walk_reads", s->walk_reads);
    nm_report_u64(r, "interpreter_walk_reads_not_charged", s->interp_walk_reads);
    nm_report_u64(r, "snoop_invalidations", s->snoop_invalidations);
}

const nm_cost_model_class nm_cost_model_486 = {
    .name = "486",
    .description = "Intel486: clock count summary, AGI, prefixes, 8 KB write-through cache, "
                   "4-entry write buffer, critical-word-first burst fills, 32-byte prefetch queue",
    .create = i486_create,
    .destroy = i486_destroy,
    .resume = i486_resume,
    .hooks = {.insn = i486_insn,
              .mem = i486_mem,
              .io = i486_io,
              .branch = i486_branch,
              .mem_ignores_code = true,
              .insn_ignores_ea = true,
              .run = i486_run},
    .report = i486_report,
    .snoop = i486_snoop,
};
