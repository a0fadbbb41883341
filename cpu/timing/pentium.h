/* The Pentium (P5/P54C) cost model's counters, for the report and the
 * tests.  The model itself is cpu/timing/pentium.c (docs/cost-models.md,
 * "Pentium"). */
#ifndef NICEMU_CPU_TIMING_PENTIUM_H
#define NICEMU_CPU_TIMING_PENTIUM_H

#include <stdint.h>

typedef struct nm_p5_stats {
    uint64_t instructions, cycles;
    uint64_t u_issues, v_issues, pairs; /* pairs == v_issues */
    uint64_t agi_stalls;
    uint64_t prefix_cycles, prefix_shadowed; /* decode clocks paid / hidden */
    uint64_t bank_conflicts;
    uint64_t branches, btb_hits, btb_misses, mispredicts, mispredict_cycles;
    uint64_t code_hits, code_misses, data_hits, data_misses;
    uint64_t line_fills, writebacks, uncached_reads;
    uint64_t wbuf_writes, wbuf_stalls, wbuf_stall_cycles;
    uint64_t misaligned, locked;
    uint64_t mem_stall_cycles; /* fills, uncached reads, locked cycles */
    uint64_t log_overflows;
} nm_p5_stats;

/* `state` is what nm_cost_model_pentium.create returned. */
const nm_p5_stats *nm_pentium_stats(const void *state);

#endif
