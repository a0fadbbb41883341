/* The Pentium (P5/P54C) cost model's counters, for the report and the
 * tests.  The model itself is cpu/timing/pentium.c (docs/cost-models.md,
 * "Pentium"). */
#ifndef NICEMU_CPU_TIMING_PENTIUM_H
#define NICEMU_CPU_TIMING_PENTIUM_H

#include <stdbool.h>
#include <stdint.h>

typedef struct nm_p5_stats {
    uint64_t instructions;
    uint64_t u_issues, v_issues, pairs; /* pairs == v_issues */
    uint64_t agi_stalls;
    uint64_t prefix_cycles, prefix_shadowed; /* decode clocks paid / hidden */
    uint64_t bank_conflicts;
    uint64_t branches, btb_hits, btb_misses, mispredicts, mispredict_cycles;
    /* groups predicted to jump that did not (3 clocks each, in the
     * mispredictions' clocks, unless in a flush's shadow), and transfers
     * whose prediction a flush dropped (pentium.c, "BTB") */
    uint64_t btb_misapplied, btb_misapplied_cycles, btb_shadowed;
    uint64_t code_hits, code_misses, data_hits, data_misses;
    uint64_t line_fills, writebacks, uncached_reads;
    uint64_t wbuf_writes, wbuf_stalls, wbuf_stall_cycles;
    uint64_t misaligned, locked;
    uint64_t split_writes;     /* store misses across a qword: two bus cycles */
    uint64_t mem_stall_cycles; /* fills, uncached reads, locked cycles */
    uint64_t log_overflows;
    uint64_t tlb_code_hits, tlb_code_misses, tlb_data_hits, tlb_data_misses;
    uint64_t tlb_walk_reads;      /* the modelled TLBs' page-table reads */
    uint64_t interp_walk_reads;   /* the interpreter's, not charged */
    uint64_t snoop_invalidations; /* L1 lines dropped by bus-master DMA writes */
    uint64_t snoop_writebacks;    /* modified lines written back on a DMA snoop (HITM) */
    /* Where the cycles went (docs/cost-models.md, "Pentium"): cycles ==
     * every c_* below added up, less c_pair_saved. */
    uint64_t c_table;      /* table rows of all other instructions */
    uint64_t c_io;         /* IN/OUT/INS/OUTS rows */
    uint64_t c_int;        /* INT/INTO/INT3/IRET rows, delivered interrupts */
    uint64_t c_pair_saved; /* V-pipe pairing: min(U, V) of each pair, saved */
    uint64_t c_rmw_pair;   /* +2 when both halves of a pair read-modify-write */
    uint64_t c_agi;        /* address generation interlocks */
    uint64_t c_bank;       /* data cache bank conflicts of a pair */
    uint64_t c_prefix;     /* prefix decode clocks not hidden in a shadow */
    uint64_t c_mispredict; /* branch mispredictions */
    uint64_t c_code_fill;  /* code cache misses */
    uint64_t c_data_fill;  /* data cache read misses, uncached reads */
    uint64_t c_wbuf;       /* writes waiting for a free write buffer */
    uint64_t c_misaligned; /* misaligned data accesses */
    uint64_t c_locked;     /* locked bus cycles (LOCK, XCHG with memory) */
    uint64_t c_io_drain;   /* I/O waiting for the write buffers to drain */
    uint64_t c_tlb;        /* page walks of TLB misses */
    /* (not next to `instructions`: gcc makes the two adds of an instruction
     * one vector add with its packing, six host instructions for two) */
    uint64_t cycles;
} nm_p5_stats;

/* `state` is what nm_cost_model_pentium.create returned. */
const nm_p5_stats *nm_pentium_stats(const void *state);

/* The issue memo (pentium.c, p5_memo): for tests, turned off for good
 * (false) or on again (with it the stretch memo, p5_stretch), the issues
 * it has done so far, and of those the instructions run in stretches.  The
 * clocks and counters are the same either way. */
void nm_pentium_set_issue_memo(void *state, bool on);
uint64_t nm_pentium_issue_memo_hits(const void *state);
uint64_t nm_pentium_stretch_insns(const void *state);

/* The code line memo (pentium.c, p5.cl_lin): for tests, off (false) or on
 * again.  The clocks and counters are the same either way. */
void nm_pentium_set_code_line_memo(void *state, bool on);

/* The one data access of an instruction settled without the log's general
 * walk (pentium.c, data_alone): for tests, off (false) or on again, and
 * the cache misses it has settled.  The clocks and counters are the same
 * either way. */
void nm_pentium_set_data_alone(void *state, bool on);
uint64_t nm_pentium_data_alone_misses(const void *state);

#endif
