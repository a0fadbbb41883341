/* The Intel 386DX cost model.
 *
 * Numbers: "Intel386 DX Microprocessor" data sheet (order 231630), table
 * "Intel386 DX Instruction Set Clock Count Summary" (the same figures as the
 * 80386 Programmer's Reference Manual, 1986, appendix/chapter 17 clock
 * tables).  The table assumes an empty-free prefetch queue, aligned
 * operands and zero-wait-state 2-clock bus cycles; the rules below add:
 *   - wait states: every data and system bus cycle costs W more clocks
 *     (W = mem-wait-states); a misaligned operand crossing a dword takes
 *     two bus cycles; page-table reads after a TLB miss cost a whole bus
 *     cycle (2 + W) each, since the table does not include them;
 *   - "+m" of taken control transfers: m = components of the next
 *     instruction (x86cost.h nm_components), charged when that instruction
 *     runs (the total is exact; the attribution moves by one instruction);
 *   - a simple prefetch queue: 16 bytes = 4 dword fetches of credit, the bus
 *     idle clocks of each instruction (base - 2 per data bus cycle) fill it,
 *     new code dwords take (2 + W) each from it, and what it cannot cover is
 *     a stall; after a taken transfer the queue is empty and the target's
 *     dwords cost only their wait states (the +m term covers the rest).
 * I/O and MMIO wait states are charged by the bus models (emu/memmap.h),
 * so MMIO data cycles add nothing here. */
#include <glib.h>

#include "cpu/hooked_loop.h"
#include "cpu/timing/cache.h"
#include "cpu/timing/timing.h"
#include "cpu/timing/x86cost.h"
#include "cpu/timing/x87cost.h"

/* Columns: no memory operand, reg <- mem, mem destination (x86cost.h). */
typedef struct row {
    uint8_t c[NM_FORM_COUNT];
} row;

/* Clock count summary rows ("386 DX data sheet, clock count summary").
 * Instructions whose cost depends on the mode, privilege, count or operand
 * value have 0 here and a rule in cost_of(). */
static const row table[NM_OP_COUNT] = {
    /* integer arithmetic: "register to register 2, memory to register 6,
     * register to memory 7, immediate to register 2, immediate to memory 7" */
    [NM_OP_ADD] = {{2, 6, 7}},
    [NM_OP_OR] = {{2, 6, 7}},
    [NM_OP_ADC] = {{2, 6, 7}},
    [NM_OP_SBB] = {{2, 6, 7}},
    [NM_OP_AND] = {{2, 6, 7}},
    [NM_OP_SUB] = {{2, 6, 7}},
    [NM_OP_XOR] = {{2, 6, 7}},
    /* CMP: reg,reg 2; mem,reg 5; reg,mem 6; imm,reg 2; imm,mem 5 */
    [NM_OP_CMP] = {{2, 6, 5}},
    /* TEST: r/m,reg 2/5; imm 2/5 (HelpPC 2.10, TEST, has reg,reg 1; the
     * 80386 Programmer's Reference Manual, TEST, has 2/5: kept) */
    [NM_OP_TEST] = {{2, 5, 5}},
    /* INC/DEC/NEG/NOT: reg 2, mem 6 */
    [NM_OP_INC] = {{2, 6, 6}},
    [NM_OP_DEC] = {{2, 6, 6}},
    [NM_OP_NEG] = {{2, 6, 6}},
    [NM_OP_NOT] = {{2, 6, 6}},
    /* MOV: reg,reg 2; mem to reg 4; reg to mem 2; imm to reg 2; imm to mem 2 */
    [NM_OP_MOV] = {{2, 4, 2}},
    /* MOV r/m,Sreg: 2 / 2 */
    [NM_OP_MOV_FROM_SREG] = {{2, 2, 2}},
    /* MOVSX/MOVZX: 3 / 6 */
    [NM_OP_MOVSX] = {{3, 6, 6}},
    [NM_OP_MOVZX] = {{3, 6, 6}},
    /* LEA 2 */
    [NM_OP_LEA] = {{2, 2, 2}},
    /* XCHG: reg,reg 3; with memory 5 */
    [NM_OP_XCHG] = {{3, 5, 5}},
    /* 486 instructions on a 386 model (only without strict-isa): the 486
     * figures (Intel486 data book), there is no 386 row */
    [NM_OP_XADD] = {{3, 4, 4}},
    [NM_OP_CMPXCHG] = {{6, 7, 7}},
    [NM_OP_BSWAP] = {{1, 1, 1}},
    /* CBW/CWDE 3; CWD/CDQ 2; LAHF 2; SAHF 3; XLAT 5 */
    [NM_OP_CBW] = {{3, 3, 3}},
    [NM_OP_CWD] = {{2, 2, 2}},
    [NM_OP_LAHF] = {{2, 2, 2}},
    [NM_OP_SAHF] = {{3, 3, 3}},
    [NM_OP_XLAT] = {{5, 5, 5}},
    /* PUSH: reg 2, mem 5, imm 2; POP: reg 4, mem 5 */
    [NM_OP_PUSH] = {{2, 5, 5}},
    [NM_OP_POP] = {{4, 5, 5}},
    /* PUSH Sreg 2; PUSHA 18; POPA 24; PUSHF 4; POPF 5; LEAVE 4 (HelpPC 2.10,
     * PUSHA, has 24, POPA's figure; the 80386 Programmer's Reference Manual,
     * PUSHA, has 18: kept) */
    [NM_OP_PUSH_SREG] = {{2, 2, 2}},
    [NM_OP_PUSHA] = {{18, 18, 18}},
    [NM_OP_POPA] = {{24, 24, 24}},
    [NM_OP_PUSHF] = {{4, 4, 4}},
    [NM_OP_POPF] = {{5, 5, 5}},
    [NM_OP_LEAVE] = {{4, 4, 4}},
    /* ROL/ROR/SAL/SHL/SHR/SAR: reg 3, mem 7 (by 1, CL or imm8);
     * RCL/RCR: reg 9, mem 10; SHLD/SHRD: reg 3, mem 7 */
    [NM_OP_ROL] = {{3, 7, 7}},
    [NM_OP_ROR] = {{3, 7, 7}},
    [NM_OP_RCL] = {{9, 10, 10}},
    [NM_OP_RCR] = {{9, 10, 10}},
    [NM_OP_SHL] = {{3, 7, 7}},
    [NM_OP_SHR] = {{3, 7, 7}},
    [NM_OP_SAR] = {{3, 7, 7}},
    [NM_OP_SHLD] = {{3, 7, 7}},
    [NM_OP_SHRD] = {{3, 7, 7}},
    /* DAA/DAS/AAA/AAS 4; AAM 17; AAD 19; SALC (undocumented) as LAHF */
    [NM_OP_DAA] = {{4, 4, 4}},
    [NM_OP_DAS] = {{4, 4, 4}},
    [NM_OP_AAA] = {{4, 4, 4}},
    [NM_OP_AAS] = {{4, 4, 4}},
    [NM_OP_AAM] = {{17, 17, 17}},
    [NM_OP_AAD] = {{19, 19, 19}},
    [NM_OP_SALC] = {{2, 2, 2}},
    /* SETcc: reg 4, mem 5 */
    [NM_OP_SETCC] = {{4, 5, 5}},
    /* BOUND 10 (in range) */
    [NM_OP_BOUND] = {{10, 10, 10}},
    /* NOP 3; HLT 5; CLI 3; STI 3; CLC/STC/CMC/CLD/STD 2; WAIT 6 */
    [NM_OP_NOP] = {{3, 3, 3}},
    [NM_OP_HLT] = {{5, 5, 5}},
    [NM_OP_CLI] = {{3, 3, 3}},
    [NM_OP_STI] = {{3, 3, 3}},
    [NM_OP_CLC] = {{2, 2, 2}},
    [NM_OP_STC] = {{2, 2, 2}},
    [NM_OP_CMC] = {{2, 2, 2}},
    [NM_OP_CLD] = {{2, 2, 2}},
    [NM_OP_STD] = {{2, 2, 2}},
    [NM_OP_WAIT] = {{6, 6, 6}},
    /* ESC with no coprocessor: the decode and EA only, as a 2-clock no-op */
    [NM_OP_ESC] = {{2, 2, 2}}, /* (and every x87 instruction: x87cost.c) */
    /* system: SLDT 2/2; STR 2/2; LLDT 20/24; LTR 23/27; VERR 10/11; VERW 15/16;
     * SGDT/SIDT 9; LGDT/LIDT 11; SMSW 2/3; LMSW 10/13; LAR 15/16; LSL 20/21;
     * ARPL 20/21; CLTS 5 */
    [NM_OP_SLDT] = {{2, 2, 2}},
    [NM_OP_STR] = {{2, 2, 2}},
    [NM_OP_LLDT] = {{20, 24, 24}},
    [NM_OP_LTR] = {{23, 27, 27}},
    [NM_OP_VERR] = {{10, 11, 11}},
    [NM_OP_VERW] = {{15, 16, 16}},
    [NM_OP_SGDT] = {{9, 9, 9}},
    [NM_OP_SIDT] = {{9, 9, 9}},
    [NM_OP_LGDT] = {{11, 11, 11}},
    [NM_OP_LIDT] = {{11, 11, 11}},
    [NM_OP_SMSW] = {{2, 3, 3}},
    [NM_OP_LMSW] = {{10, 13, 13}},
    [NM_OP_LAR] = {{15, 16, 16}},
    [NM_OP_LSL] = {{20, 21, 21}},
    [NM_OP_ARPL] = {{20, 21, 21}},
    [NM_OP_CLTS] = {{5, 5, 5}},
    /* 486 system instructions without a 386 row (non-strict 386 only): the
     * Intel486 figures INVD 4, WBINVD 5, INVLPG 12, CPUID 14 */
    [NM_OP_INVD] = {{4, 4, 4}},
    [NM_OP_WBINVD] = {{5, 5, 5}},
    [NM_OP_INVLPG] = {{12, 12, 12}},
    [NM_OP_CPUID] = {{14, 14, 14}},
};

/* String instructions: single, REP start, REP per iteration (data sheet:
 * MOVS 7, REP MOVS 7+4n; CMPS 10, REP 5+9n; SCAS 7, REP 5+8n; LODS 5,
 * REP 5+6n; STOS 4, REP 5+5n). */
typedef struct str_row {
    uint8_t single, rep_base, rep_each;
} str_row;
static const str_row strings[] = {
    [NM_OP_MOVS - NM_OP_MOVS] = {7, 7, 4}, [NM_OP_CMPS - NM_OP_MOVS] = {10, 5, 9},
    [NM_OP_SCAS - NM_OP_MOVS] = {7, 5, 8}, [NM_OP_LODS - NM_OP_MOVS] = {5, 5, 6},
    [NM_OP_STOS - NM_OP_MOVS] = {4, 5, 5},
};

/* I/O by nm_io_class (real, PM CPL<=IOPL, PM CPL>IOPL, V86). */
static const uint8_t in_imm[4] = {12, 6, 26, 26}, in_dx[4] = {13, 7, 27, 27};
static const uint8_t out_imm[4] = {10, 4, 24, 24}, out_dx[4] = {11, 5, 25, 25};
static const uint8_t ins_one[4] = {15, 9, 29, 29}, ins_rep[4] = {13, 7, 27, 27};   /* + 6n */
static const uint8_t outs_one[4] = {14, 8, 28, 28}, outs_rep[4] = {12, 6, 26, 26}; /* + 5n */

/* Control transfers by nm_xfer_class (real, same, gate, privilege, V86,
 * task).  Task switches: the "TS" table, 386 TSS to 386 TSS = 309. */
#define TS 309
/* INT n: real 37; PM same level 59; to inner level 99; from V86 119; via task gate TS */
static const uint16_t int_n[6] = {37, 59, 59, 99, 119, TS};
/* INT 3: real 33, otherwise as INT n */
static const uint16_t int_3[6] = {33, 59, 59, 99, 119, TS};
/* IRET: real 22; PM same 22; to outer level 38; (to V86: as outer); task TS */
static const uint16_t iret_t[6] = {22, 22, 22, 38, 38, TS};
/* CALL far direct: real 17+m; PM 34+m; gate same level 52+m; to inner level
 * (no parameters) 86+m; task TS.  Indirect (m16:32): 22, 38, 56, 90, TS. */
static const uint16_t callf_d[6] = {17, 34, 52, 86, 86, TS}, callf_m[6] = {22, 38, 56, 90, 90, TS};
/* JMP far direct: real 12+m; PM 27+m; gate 45+m; task TS.  Indirect: 17, 31, 49. */
static const uint16_t jmpf_d[6] = {12, 27, 45, 45, 45, TS}, jmpf_m[6] = {17, 31, 49, 49, 49, TS};
/* RET far: real 18+m; PM same 32+m; to outer level 68 */
static const uint16_t retf_t[6] = {18, 32, 32, 68, 68, TS};

/* Data cycles one instruction step logs for the DRAM occupancy: a REP string
 * step does at most a few thousand iterations of two cycles. */
#define BUS_LOG_CAP 8192u
enum { BUS_READ_HIT, BUS_READ_MISS, BUS_WRITE };

typedef struct i386_state {
    nm_cpu *cpu;
    const nm_cpu_model *model;
    uint32_t W;
    /* The board's external cache (386-cache64k, docs/boards.md), NULL: none.
     * The Intel386 DX Hardware Reference Manual's example design (7.6): 64 KB,
     * direct-mapped, 4-byte lines, buffered write-through: a read hit is a
     * 0-wait-state cycle, a miss takes the DRAM's W and fills the line; a
     * write goes to the one-deep write buffer at 0 wait states and updates
     * a line it hits (no allocation).  The buffered write then holds the
     * DRAM for a whole cycle (2 + W): a second write, or a read miss, that
     * comes before it is done waits for it (HRM 7.6, "posted" write-through:
     * one write buffered; the DRAM serves one cycle at a time).  Read hits
     * come from the cache SRAM and never wait. */
    nm_cache *l2;
    uint64_t l2_read_hits, l2_read_misses, l2_writes;
    /* Page-mode DRAM (the board preset's rows; off with mem-wait-states):
     * a cycle's wait states by the state of the bank's one open row, a
     * page hit (read or write), a closed row (at the start, after a
     * refresh) or a page miss (timing.c ws_page_*).  A refresh request
     * every refresh_period clocks closes the row (its busy time is not
     * modelled on the 386). */
    uint32_t page_bytes, open_row; /* open_row UINT32_MAX: closed */
    unsigned ws_read, ws_write, ws_closed, ws_miss;
    uint64_t refresh_period, refresh_seen;
    /* the clocks of refresh interval refresh_seen, [from, next): inside it
     * no refresh has run since the last look (0, 0: not looked yet) */
    uint64_t refresh_from, refresh_next;
    uint64_t page_hits, page_misses, rows_closed_at_access, refresh_row_closes;
    /* This instruction's data cycles in order, for the DRAM's occupancy. */
    uint8_t bus_log[BUS_LOG_CAP];
    uint8_t bus_ws[BUS_LOG_CAP]; /* each cycle's wait states */
    unsigned bus_n;
    bool bus_overflow; /* more cycles than the log holds: not simulated */
    uint64_t bus_free; /* model clock at which the DRAM finishes its cycle */
    uint64_t bus_wait_clocks, bus_waits, bus_unsimulated;
    /* this instruction */
    uint32_t data_cycles, data_waits, walk_cycles, walk_waits, last_read_phys;
    bool taken;
    /* across instructions */
    nm_x86_mode prev;
    bool m_pending;      /* the last instruction was a taken transfer: add m */
    uint32_t credit;     /* prefetch queue credit, clocks */
    uint32_t last_dword; /* last code dword fetched (sequential flow) */
    bool have_dword;
    /* counters */
    bool rep_continues; /* the last step of a REP string stopped at its budget */
    /* (insns, clocks and wait_clocks apart: gcc makes adjacent counters'
     * adds in one block one vector add with its packing) */
    uint64_t clocks, prefetch_stall, wait_clocks, m_clocks, insns, taken_transfers, async_transfers;
    nm_x87_timing x87; /* the 387 beside it (x87cost.h) */
} i386_state;

static void *i386_create(nm_cpu *cpu, const nm_cpu_model *model, const nm_timing_params *p)
{
    i386_state *s = g_new0(i386_state, 1);
    s->cpu = cpu;
    s->model = model;
    s->W = p->mem_wait_states;
    s->page_bytes = p->dram_page_bytes;
    s->open_row = UINT32_MAX;
    s->ws_read = p->ws_page_read;
    s->ws_write = p->ws_page_write;
    s->ws_closed = p->ws_row_closed;
    s->ws_miss = p->ws_page_miss;
    if (s->page_bytes && p->refresh_ns) {
        uint64_t den = model->hz_den * 1000000000ull;
        s->refresh_period = ((uint64_t)p->refresh_ns * model->hz_num + den / 2) / den;
    }
    if (p->l2_size) {
        nm_cache_config cc = {"l2", p->l2_size, 1, 4, NM_CACHE_WRITE_THROUGH, false, NM_CACHE_LRU};
        s->l2 = nm_cache_new(&cc);
        if (!s->l2) {
            g_free(s);
            return NULL;
        }
    }
    s->prev = nm_x86_mode_now(cpu);
    return s;
}

/* The refresh interval the clock is in (refresh_period clocks each): one
 * other than the last looked at means a refresh ran since, which closed
 * the row. */
static void __attribute__((noinline)) refresh_look(i386_state *s, uint64_t now)
{
    uint64_t k = now / s->refresh_period;
    s->refresh_from = k * s->refresh_period;
    s->refresh_next = s->refresh_from + s->refresh_period;
    if (k != s->refresh_seen) {
        s->refresh_seen = k;
        if (s->open_row != UINT32_MAX) s->refresh_row_closes++;
        s->open_row = UINT32_MAX;
    }
}

static uint32_t dram_row_change(i386_state *s, uint32_t row);

/* Wait states of one DRAM bus cycle at `phys` (a page hit inline). */
static inline __attribute__((always_inline)) uint32_t dram_waits(i386_state *s, uint32_t phys,
                                                                 bool write)
{
    if (!s->page_bytes) return s->W;
    if (s->refresh_period) {
        uint64_t now = s->cpu->clock->cycles;
        if (now >= s->refresh_next || now < s->refresh_from) refresh_look(s, now);
    }
    uint32_t row = phys / s->page_bytes;
    if (row == s->open_row) {
        s->page_hits++;
        return write ? s->ws_write : s->ws_read;
    }
    return dram_row_change(s, row);
}

/* dram_waits for a closed row or another one: it opens this one. */
static uint32_t __attribute__((noinline)) dram_row_change(i386_state *s, uint32_t row)
{
    uint32_t w = s->ws_miss;
    if (s->open_row == UINT32_MAX) {
        s->rows_closed_at_access++;
        w = s->ws_closed;
    } else {
        s->page_misses++;
    }
    s->open_row = row;
    return w;
}

/* Wait states of one read (or code) bus cycle at `phys`. */
static inline __attribute__((always_inline)) uint32_t read_waits(i386_state *s, uint32_t phys)
{
    if (!s->l2) return dram_waits(s, phys, false);
    if (nm_cache_access(s->l2, phys, false, NULL) & NM_CACHE_HIT) {
        s->l2_read_hits++;
        return 0;
    }
    s->l2_read_misses++;
    return dram_waits(s, phys, false);
}

static void bus_log(i386_state *s, uint8_t kind, uint32_t ws)
{
    if (s->bus_n < BUS_LOG_CAP) {
        s->bus_ws[s->bus_n] = (uint8_t)ws;
        s->bus_log[s->bus_n++] = kind;
    } else {
        s->bus_overflow = true;
    }
}

/* The clocks this instruction waits for the DRAM (with the external cache
 * only).  Its data cycles are placed evenly over its `span` table clocks,
 * from model clock `start`, each moved on by the wait states and waits
 * before it: a read miss or a write that finds the DRAM busy waits until
 * it is free, then holds it for 2 + its wait states. */
static uint32_t bus_occupancy(i386_state *s, uint64_t start, uint32_t span)
{
    uint32_t waited = 0, waits = 0, n = s->bus_n;
    if (s->bus_overflow) {
        s->bus_unsimulated++;
        s->bus_free = 0;
        return 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        if (s->bus_log[k] == BUS_READ_HIT) continue;
        uint64_t t = start + (uint64_t)span * k / n + waits + waited;
        if (s->bus_free > t) {
            waited += (uint32_t)(s->bus_free - t);
            s->bus_waits++;
            t = s->bus_free;
        }
        s->bus_free = t + 2 + s->bus_ws[k];
        if (s->bus_log[k] == BUS_READ_MISS) waits += s->bus_ws[k];
    }
    s->bus_wait_clocks += waited;
    return waited;
}

static void i386_resume(void *st, nm_cpu *cpu)
{
    i386_state *s = st;
    s->prev = nm_x86_mode_now(cpu);
    s->rep_continues = false;
    s->taken = false;
    s->m_pending = false;
    s->credit = 0;
    s->have_dword = false;
    s->bus_n = 0;
    s->bus_overflow = false;
    s->bus_free = 0;          /* time went on without the model: the DRAM is idle */
    s->open_row = UINT32_MAX; /* and refreshed: no row open */
}

static void i386_destroy(void *st)
{
    i386_state *s = st;
    if (s->l2) nm_cache_free(s->l2);
    g_free(st);
}

static inline bool is_mmio(const nm_cpu *c, uint32_t phys)
{
    const nm_mem_region *r = c->mem->page_region[phys >> NM_PAGE_SHIFT];
    return r && r->kind == NM_REGION_MMIO && c->mem->page_whole[phys >> NM_PAGE_SHIFT];
}

static void i386_mem(void *opaque, uint32_t linear, uint32_t phys, unsigned size, unsigned flags)
{
    i386_state *s = opaque;
    if (flags & NM_MEM_CODE) return; /* code is counted from the instruction in insn */
    /* A 32-bit bus: an operand crossing a dword boundary takes two cycles. */
    uint32_t cycles = ((phys & 3) + size > 4) ? 2 : 1;
    if (!(flags & NM_MEM_WRITE)) s->last_read_phys = phys;
    if (is_mmio(s->cpu, phys)) return; /* the bus model charges it */
    bool write = (flags & NM_MEM_WRITE) != 0;
    if ((flags & NM_MEM_SYSTEM) && s->cpu->paging && linear == phys) {
        s->walk_cycles += cycles; /* page-table read/write after a TLB miss */
        s->walk_waits += dram_waits(s, phys, write);
        if (cycles == 2) s->walk_waits += dram_waits(s, (phys | 3) + 1, write);
        return;
    }
    s->data_cycles += cycles;
    if (!s->l2) {
        s->data_waits += dram_waits(s, phys, write);
        if (cycles == 2) s->data_waits += dram_waits(s, (phys | 3) + 1, write);
    } else if (write) {
        s->l2_writes++;
        (void)nm_cache_access(s->l2, phys, true, NULL); /* buffered: no wait state */
        bus_log(s, BUS_WRITE, dram_waits(s, phys, true));
        if (cycles == 2) bus_log(s, BUS_WRITE, dram_waits(s, (phys | 3) + 1, true));
    } else {
        uint32_t w = read_waits(s, phys);
        s->data_waits += w;
        bus_log(s, w ? BUS_READ_MISS : BUS_READ_HIT, w);
        if (cycles == 2) {
            w = read_waits(s, (phys | 3) + 1);
            s->data_waits += w;
            bus_log(s, w ? BUS_READ_MISS : BUS_READ_HIT, w);
        }
    }
}

static void i386_branch(void *opaque, uint32_t from, uint32_t to, bool taken)
{
    (void)from;
    (void)to;
    i386_state *s = opaque;
    s->taken = taken;
}

/* The early-out multiplier of MUL/IMUL (value of the r/m operand, or the
 * immediate of the three-operand IMUL).  Memory operands are read back
 * from RAM; a register operand that the instruction overwrote (MUL EAX)
 * gives the worst case. */
static unsigned mul_clocks(i386_state *s, const nm_cpu *c, const nm_insn *i)
{
    uint32_t v;
    bool sgn = i->op != NM_OP_MUL;
    if (i->op == NM_OP_IMUL3) {
        v = i->imm;
    } else if (i->src == NM_OPK_MEM || i->dst == NM_OPK_MEM) {
        const uint8_t *p = nm_memmap_page_ptr(c->mem, s->last_read_phys, false);
        if (!p || (s->last_read_phys & 0xfff) + i->opsize > 0x1000) return 6 + 8u * i->opsize + 3;
        p += s->last_read_phys & 0xfff;
        v = i->opsize == 1   ? p[0]
            : i->opsize == 2 ? (uint32_t)(p[0] | p[1] << 8)
                             : (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
        return 6 + nm_mul_bits(v, i->opsize, sgn) + 3; /* memory forms: +3 */
    } else {
        unsigned r = i->rm;
        bool clobbered = (i->op == NM_OP_MUL || i->op == NM_OP_IMUL) ? (r == NM_EAX || r == NM_EDX)
                                                                     : r == i->reg;
        if (i->opsize == 1) clobbered = i->op == NM_OP_IMUL2 ? r == i->reg : (r == 0 || r == 4);
        if (clobbered) return 6 + 8u * i->opsize;
        v = reg_get(c, r, i->opsize);
    }
    /* "9-14 / 9-22 / 9-38": 6 + max(ceiling(log2 |m|), 3) */
    return 6 + nm_mul_bits(v, i->opsize, sgn);
}

/* BSF/BSR: 10 + 3n, n = bits scanned (from the result). */
static unsigned bitscan_clocks(const nm_cpu *c, const nm_insn *i)
{
    unsigned bits = 8u * i->opsize, n;
    if (flags_zf(c))
        n = bits;
    else {
        uint32_t idx = reg_get(c, i->reg, i->opsize);
        n = i->op == NM_OP_BSF ? idx + 1 : bits - idx;
    }
    return 10 + 3 * n + (i->src == NM_OPK_MEM ? 0 : 0);
}

/* The instructions cost_of works out by a rule below; every other one
 * costs its row alone (row_cost), which depends on the instruction only. */
static bool has_rule(unsigned op)
{
    switch (op) {
    case NM_OP_JCC:
    case NM_OP_JMP:
    case NM_OP_CALL:
    case NM_OP_RET:
    case NM_OP_LOOP:
    case NM_OP_LOOPE:
    case NM_OP_LOOPNE:
    case NM_OP_JCXZ:
    case NM_OP_JMP_FAR:
    case NM_OP_CALL_FAR:
    case NM_OP_RET_FAR:
    case NM_OP_IRET:
    case NM_OP_INT:
    case NM_OP_ICEBP:
    case NM_OP_INT3:
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
    case NM_OP_DIV:
    case NM_OP_IDIV:
    case NM_OP_BT:
    case NM_OP_BTS:
    case NM_OP_BTR:
    case NM_OP_BTC:
    case NM_OP_BSF:
    case NM_OP_BSR:
    case NM_OP_ENTER:
    case NM_OP_MOV_TO_SREG:
    case NM_OP_POP_SREG:
    case NM_OP_LDS:
    case NM_OP_LES:
    case NM_OP_LFS:
    case NM_OP_LGS:
    case NM_OP_LSS:
    case NM_OP_MOV_TO_CR:
    case NM_OP_MOV_FROM_CR:
    case NM_OP_MOV_TO_DR:
    case NM_OP_MOV_FROM_DR: return true;
    default: return false;
    }
}

/* The table row's clocks (an instruction with no rule). */
static unsigned row_cost(const nm_insn *i)
{
    unsigned v = table[i->op].c[nm_insn_form(i)];
    return v ? v : 2;
}

static unsigned cost_of(i386_state *s, const nm_cpu *c, const nm_insn *i, const nm_x86_mode *now)
{
    if (nm_x87_costed(i->op))
        return nm_x87_cost_387(&s->x87, c, i, c->clock->cycles, s->data_waits);
    if (!has_rule(i->op)) return row_cost(i);
    unsigned form = nm_insn_form(i);
    const nm_x86_mode *before = &s->prev;
    unsigned ioc = nm_io_class(before);
    unsigned xc = nm_xfer_class(before, now);
    bool real = !before->pe || before->vm86;
    switch (i->op) {
    case NM_OP_JCC: return s->taken ? 7 : 3;               /* Jcc: 7+m taken, 3 not taken */
    case NM_OP_JMP: return form == NM_FORM_LOAD ? 10 : 7;  /* JMP rel/reg 7+m; mem 10+m */
    case NM_OP_CALL: return form == NM_FORM_LOAD ? 10 : 7; /* CALL rel/reg 7+m; mem 10+m */
    case NM_OP_RET: return 10;                             /* RET near (imm) 10+m */
    case NM_OP_LOOP:
    case NM_OP_LOOPE:
    case NM_OP_LOOPNE: return 11;             /* LOOPcc 11+m */
    case NM_OP_JCXZ: return s->taken ? 9 : 5; /* JCXZ 9+m / 5 */
    case NM_OP_JMP_FAR: {
        unsigned k = nm_far_xfer_class(xc, form, i, now);
        return form == NM_FORM_R ? jmpf_d[k] : jmpf_m[k];
    }
    case NM_OP_CALL_FAR: {
        unsigned k = nm_far_xfer_class(xc, form, i, now);
        return form == NM_FORM_R ? callf_d[k] : callf_m[k];
    }
    case NM_OP_RET_FAR: return retf_t[xc];
    case NM_OP_IRET: return iret_t[xc];
    case NM_OP_INT:
    case NM_OP_ICEBP: return int_n[xc];
    case NM_OP_INT3: return int_3[xc];
    case NM_OP_INTO: return s->taken ? (xc == NM_XFER_REAL ? 35 : int_n[xc]) : 3; /* INTO 35 / 3 */
    case NM_OP_IN: return i->src == NM_OPK_IMM ? in_imm[ioc] : in_dx[ioc];
    case NM_OP_OUT: return i->dst == NM_OPK_IMM ? out_imm[ioc] : out_dx[ioc];
    case NM_OP_MOVS:
    case NM_OP_CMPS:
    case NM_OP_SCAS:
    case NM_OP_LODS:
    case NM_OP_STOS: {
        const str_row *r = &strings[i->op - NM_OP_MOVS];
        if (!(i->prefixes & (NM_PFX_REP | NM_PFX_REPNE))) return r->single;
        return (s->rep_continues ? 0u : r->rep_base) + r->rep_each * c->rep_iterations;
    }
    case NM_OP_INS:
    case NM_OP_OUTS: {
        bool ins = i->op == NM_OP_INS;
        if (!(i->prefixes & (NM_PFX_REP | NM_PFX_REPNE))) return ins ? ins_one[ioc] : outs_one[ioc];
        unsigned base = s->rep_continues ? 0u : ins ? ins_rep[ioc] : outs_rep[ioc];
        return base + (ins ? 6u : 5u) * c->rep_iterations;
    }
    case NM_OP_MUL:
    case NM_OP_IMUL:
    case NM_OP_IMUL2:
    case NM_OP_IMUL3: return mul_clocks(s, c, i);
    case NM_OP_DIV: { /* DIV: reg 14/22/38, mem 17/25/41 */
        unsigned r = i->opsize == 1 ? 14 : i->opsize == 2 ? 22 : 38;
        return r + (form != NM_FORM_R ? 3 : 0);
    }
    case NM_OP_IDIV: { /* IDIV: reg 19/27/43, mem 22/30/46 */
        unsigned r = i->opsize == 1 ? 19 : i->opsize == 2 ? 27 : 43;
        return r + (form != NM_FORM_R ? 3 : 0);
    }
    case NM_OP_BT: /* BT: reg,imm 3; mem,imm 6; reg,reg 3; mem,reg 12 */
        return form == NM_FORM_R ? 3 : i->src == NM_OPK_IMM ? 6 : 12;
    case NM_OP_BTS:
    case NM_OP_BTR:
    case NM_OP_BTC: /* reg 6; mem,imm 8; mem,reg 13 */
        return form == NM_FORM_R ? 6 : i->src == NM_OPK_IMM ? 8 : 13;
    case NM_OP_BSF:
    case NM_OP_BSR: return bitscan_clocks(c, i);
    case NM_OP_ENTER: { /* ENTER imm16,0: 10; ,1: 12; ,L: 15+4(L-1) */
        unsigned l = i->imm2 & 31;
        return l == 0 ? 10 : l == 1 ? 12 : 15 + 4 * (l - 1);
    }
    case NM_OP_MOV_TO_SREG: /* MOV Sreg,r/m: real 2/5, protected 18/19 */
        return real ? (form == NM_FORM_R ? 2 : 5) : (form == NM_FORM_R ? 18 : 19);
    case NM_OP_POP_SREG: return real ? 7 : 21; /* POP Sreg: real 7, protected 21 */
    case NM_OP_LDS:
    case NM_OP_LES:
    case NM_OP_LFS:
    case NM_OP_LGS:
    case NM_OP_LSS: return real ? 7 : 22; /* LDS etc.: real 7, protected 22 */
    case NM_OP_MOV_TO_CR:                 /* MOV CR0,r 10; CR2,r 4; CR3,r 5 */
        return i->reg == 0 ? 10 : i->reg == 2 ? 4 : 5;
    case NM_OP_MOV_FROM_CR: return 6;                    /* MOV r,CRn 6 */
    case NM_OP_MOV_TO_DR: return i->reg < 4 ? 22 : 16;   /* DR0-3 22; DR6/7 16 */
    case NM_OP_MOV_FROM_DR: return i->reg < 4 ? 22 : 14; /* DR0-3 22; DR6/7 14 */
    default: return row_cost(i);                         /* not reached: has_rule lists the cases */
    }
}

/* What the insn hook works out once per decoded instruction (nm_insn
 * model_data, valid while model_tag is NM_INSN_TAG_386). */
enum {
    /* A pure instruction (decode.c: it changes only registers, arithmetic
     * flags and memory, so not the mode) that is not a transfer or a
     * string and costs its row alone: i386_plain's case. */
    ST_PLAIN = 1,
    /* A near JMP, CALL, RET, Jcc, LOOPcc or JCXZ (pure too): its clocks
     * by the outcome, i386_plain's case with the taken-transfer steps. */
    ST_NEAR_BRANCH = 2,
};
typedef struct i386_static {
    uint8_t base;       /* row_cost (ST_PLAIN); not taken (ST_NEAR_BRANCH) */
    uint8_t base_taken; /* taken (ST_NEAR_BRANCH) */
    uint8_t m;          /* nm_components: the "+m" it adds after a taken transfer */
    uint8_t flags;      /* ST_* */
} i386_static;
_Static_assert(sizeof(i386_static) <= sizeof(((nm_insn *)0)->model_data), "model_data");
_Static_assert(_Alignof(i386_static) == 1, "model_data has no alignment");

static const i386_static *static_of(const nm_insn *ci)
{
    nm_insn *i = (nm_insn *)ci; /* the cached instruction: model_data is ours */
    i386_static *st = (i386_static *)(void *)i->model_data;
    if (likely(i->model_tag == NM_INSN_TAG_386)) return st;
    bool pure = !(i->sync & NM_SYNC_CHECK) && !nm_loads_cs(i);
    unsigned opf = nm_op_flags(i->op);
    bool plain = pure && !(opf & (NM_OPF_BRANCH | NM_OPF_STRING)) && !has_rule(i->op);
    unsigned base = plain ? row_cost(i) : 0, base_taken = 0, f = plain ? ST_PLAIN : 0;
    if (pure && (opf & NM_OPF_BRANCH) && !(opf & NM_OPF_STRING)) {
        /* cost_of's rules for these, by the outcome */
        unsigned form = nm_insn_form(i);
        f = ST_NEAR_BRANCH;
        switch (i->op) {
        case NM_OP_JCC: base = 3, base_taken = 7; break;
        case NM_OP_JMP:
        case NM_OP_CALL: base = base_taken = form == NM_FORM_LOAD ? 10 : 7; break;
        case NM_OP_RET: base = base_taken = 10; break;
        case NM_OP_LOOP:
        case NM_OP_LOOPE:
        case NM_OP_LOOPNE: base = base_taken = 11; break;
        case NM_OP_JCXZ: base = 5, base_taken = 9; break;
        default: f = 0; break; /* (none other is pure) */
        }
    }
    *st = (i386_static){
        .base = (uint8_t)base,
        .base_taken = (uint8_t)base_taken,
        .m = (uint8_t)nm_components(i),
        .flags = (uint8_t)f,
    };
    i->model_tag = NM_INSN_TAG_386;
    return st;
}

/* The code dwords of this instruction the prefetcher has not fetched yet
 * and their wait states, and what the queue could not cover (both paths
 * below): clocks to add. */
static inline __attribute__((always_inline)) uint32_t
prefetch_clocks(i386_state *s, const nm_cpu *c, const nm_insn *i, bool sequential, uint32_t base,
                uint32_t bus)
{
    uint32_t lin = c->seg[NM_CS].base + c->insn_eip;
    uint32_t first = lin >> 2, last = (lin + i->len - 1) >> 2;
    uint32_t dwords = last - first + 1;
    bool first_known = sequential && s->have_dword && first == s->last_dword;
    if (first_known) dwords--;
    s->last_dword = last;
    s->have_dword = true;
    /* The wait states of the new code dwords (through the cache if any). */
    uint32_t code_waits = s->W * dwords;
    if (s->l2 || s->page_bytes) {
        code_waits = 0;
        uint32_t page = c->fetch_phys & ~0xfffu;
        for (uint32_t d = first + (first_known ? 1 : 0); d <= last; d++)
            code_waits += read_waits(s, page | ((d << 2) & 0xfff));
    }
    uint32_t idle = base > 2 * bus ? base - 2 * bus : 0;
    if (!sequential) {
        s->credit = 0;
        return code_waits; /* the target: +m covers the 2-clock cycles */
    }
    uint32_t need = 2 * dwords + code_waits, have = s->credit + idle;
    uint32_t cap = 4 * (2 + (s->page_bytes ? s->ws_read : s->W));
    if (need <= have) {
        s->credit = have - need > cap ? cap : have - need;
        return 0;
    }
    s->prefetch_stall += need - have;
    s->credit = 0;
    return need - have;
}

static uint32_t __attribute__((noinline)) i386_general(i386_state *s, nm_cpu *c, const nm_insn *i)
{
    (void)static_of(i);
    nm_x86_mode now = nm_x86_mode_now(c);
    uint32_t clocks = 0;
    bool sequential = !s->m_pending;

    /* An interrupt or exception delivered before this instruction (no insn
     * hook of its own): charge its INT row, by what it did. */
    if (c->insn_eip != s->prev.next_eip ||
        (!nm_loads_cs(i) && c->seg[NM_CS].selector != s->prev.cs)) {
        clocks += int_n[nm_xfer_class(&s->prev, &now)];
        s->async_transfers++;
        sequential = false;
        s->credit = 0;
    }
    if (s->m_pending) {
        uint32_t m = nm_components(i);
        clocks += m;
        s->m_clocks += m;
        s->m_pending = false;
    }

    uint32_t base = cost_of(s, c, i, &now);
    uint32_t bus = s->data_cycles;
    if (s->l2 && s->bus_n) clocks += bus_occupancy(s, s->clocks + clocks, base);
    clocks += base + s->data_waits + 2 * s->walk_cycles + s->walk_waits;
    s->wait_clocks += s->data_waits;

    /* Prefetch: the dwords of this instruction not fetched yet. */
    clocks += prefetch_clocks(s, c, i, sequential, base, bus);

    unsigned opf = nm_op_flags(i->op);
    bool xfer = (opf & NM_OPF_BRANCH) && s->taken;
    if (xfer) {
        s->taken_transfers++;
        /* "+m" of the transfers that have it (not INT/IRET/task switches) */
        if (i->op != NM_OP_INT && i->op != NM_OP_INT3 && i->op != NM_OP_INTO &&
            i->op != NM_OP_ICEBP && i->op != NM_OP_IRET && now.tr == s->prev.tr)
            s->m_pending = true;
        s->credit = 0;
    }
    /* A REP string that ran out of its step budget restarts itself: the next
     * step continues it (no start-up clocks again). */
    s->rep_continues = (opf & NM_OPF_STRING) && (i->prefixes & (NM_PFX_REP | NM_PFX_REPNE)) &&
                       c->eip == c->insn_eip;
    s->data_cycles = s->walk_cycles = s->data_waits = s->walk_waits = 0;
    s->bus_n = 0;
    s->bus_overflow = false;
    s->taken = false;
    s->prev = now;
    /* a REP string once, however many steps (any other instruction retires) */
    s->insns += (opf & NM_OPF_STRING) ? cpu_insn_retired(c, i) : 1;
    s->clocks += clocks;
    return clocks;
}

/* i386_general's steps for an ST_PLAIN or ST_NEAR_BRANCH instruction
 * right after the last one (seq: no interrupt delivered in between, and
 * the mode as the last one left it, which a pure instruction does not
 * change). */
static inline __attribute__((always_inline)) uint32_t
i386_plain(i386_state *s, nm_cpu *c, const nm_insn *i, const i386_static *st)
{
    uint32_t clocks = 0;
    bool sequential = !s->m_pending;
    if (s->m_pending) {
        clocks += st->m;
        s->m_clocks += st->m;
        s->m_pending = false;
    }
    /* (s->taken: only a branch's hook sets it) */
    uint32_t base = s->taken ? st->base_taken : st->base;
    uint32_t bus = s->data_cycles;
    if (s->l2 && s->bus_n) clocks += bus_occupancy(s, s->clocks + clocks, base);
    clocks += base + s->data_waits + 2 * s->walk_cycles + s->walk_waits;
    s->wait_clocks += s->data_waits;
    clocks += prefetch_clocks(s, c, i, sequential, base, bus);
    if (s->taken) {
        /* a near transfer: "+m" on the next instruction, the queue empty */
        s->taken_transfers++;
        s->m_pending = true;
        s->credit = 0;
        s->taken = false;
    }
    s->rep_continues = false;
    s->data_cycles = s->walk_cycles = s->data_waits = s->walk_waits = 0;
    s->bus_n = 0;
    s->bus_overflow = false;
    s->prev.next_eip = c->eip;
    s->insns++;
    s->clocks += clocks;
    return clocks;
}

static inline __attribute__((always_inline)) uint32_t
i386_insn_inline(void *opaque, nm_cpu *c, const nm_insn *i, const bool seq)
{
    i386_state *s = opaque;
    const i386_static *st = (const i386_static *)(const void *)i->model_data;
    if (unlikely(!seq || i->model_tag != NM_INSN_TAG_386 ||
                 !(st->flags & (ST_PLAIN | ST_NEAR_BRANCH))))
        return i386_general(s, c, i);
    return i386_plain(s, c, i, st);
}

static uint32_t i386_insn(void *opaque, nm_cpu *c, const nm_insn *i)
{
    return i386_insn_inline(opaque, c, i, false);
}

/* The CPU's run loop with this model as its only listener, the insn and
 * branch hooks inlined (nm_cpu_hooks.run). */
static void i386_run(nm_cpu *c, uint64_t limit)
{
    nm_cpu_hooked_loop(c, limit, true, i386_insn_inline, i386_branch, NULL, NULL);
}

static void i386_report(void *opaque, nm_report *r)
{
    i386_state *s = opaque;
    nm_report_u64(r, "instructions", s->insns);
    nm_report_u64(r, "clocks", s->clocks);
    nm_x87_report(&s->x87, r);
    nm_report_u64(r, "wait_state_clocks", s->wait_clocks);
    nm_report_u64(r, "l2_read_hits", s->l2_read_hits);
    nm_report_u64(r, "l2_read_misses", s->l2_read_misses);
    nm_report_u64(r, "l2_writes", s->l2_writes);
    nm_report_u64(r, "dram_page_hits", s->page_hits);
    nm_report_u64(r, "dram_page_misses", s->page_misses);
    nm_report_u64(r, "dram_row_closed_cycles", s->rows_closed_at_access);
    nm_report_u64(r, "refresh_row_closes", s->refresh_row_closes);
    nm_report_u64(r, "dram_busy_waits", s->bus_waits);
    nm_report_u64(r, "dram_busy_wait_clocks", s->bus_wait_clocks);
    nm_report_u64(r, "dram_busy_unsimulated_steps", s->bus_unsimulated);
    nm_report_u64(r, "prefetch_stall_clocks", s->prefetch_stall);
    nm_report_u64(r, "next_instruction_m_clocks", s->m_clocks);
    nm_report_u64(r, "taken_transfers", s->taken_transfers);
    nm_report_u64(r, "interrupts_and_exceptions", s->async_transfers);
}

const nm_cost_model_class nm_cost_model_386 = {
    .name = "386",
    .description = "Intel386 DX: data-sheet clock counts, wait states, +m, simple prefetch queue",
    .create = i386_create,
    .destroy = i386_destroy,
    .resume = i386_resume,
    .hooks = {.insn = i386_insn,
              .mem = i386_mem,
              .branch = i386_branch,
              .mem_ignores_code = true,
              .insn_ignores_ea = true,
              .run = i386_run},
    .report = i386_report,
    /* The size its figures were made with (docs/cost-models.md, "Speed
     * inside the Linux windows"): it charges the interpreter's page walks,
     * which a decode after a miss of the decoded-instruction cache may
     * make, so another size moves them.  (Until it has a TLB of its own.) */
    .icache_bits = 18,
};
