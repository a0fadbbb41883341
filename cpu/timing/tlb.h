/* A hardware TLB tag model for the cost models: which linear pages the
 * CPU's own translation lookaside buffer holds, independent of the
 * interpreter's software TLB (cpu/access.c), so that a page walk is charged
 * when the modelled chip would walk.  Tags only (the translation itself is
 * the interpreter's), deterministic, no host pointers; everything is in the
 * struct, nothing is allocated after nm_tlb_new.
 *
 * Organisation: 4-way set associative, set = the low bits of the linear
 * page number, replacement the Intel486 3-bit tree pseudo-LRU ("The TLB
 * uses a pseudo-LRU algorithm, similar to the cache", Embedded Intel486
 * Hardware Reference Manual 3.5, p. 3-17, figure 3-7 "Translation
 * Lookaside Buffer": 8 sets of 4 ways, set select = linear address bits
 * 14:12).  The Pentium's TLBs are 4-way with pseudo-LRU as well (Null and
 * Lobur, The Essentials of Computer Organization and Architecture, 6.6
 * "A real-world example": "Both TLBs are 4-way set associative and use a
 * pseudo-LRU replacement"); the same tree is used for them.
 *
 * Two arrays: 4 KB entries and, optionally (the Pentium's data TLB),
 * separate 4 MB entries.  A lookup checks both, as the hardware does in
 * parallel; the caller walks on a miss and then fills the array the page's
 * size selects.  Neither the 486 nor the P5 has global pages (CR4.PGE
 * comes with the P6): a flush drops everything. */
#ifndef NICEMU_CPU_TIMING_TLB_H
#define NICEMU_CPU_TIMING_TLB_H

#include <stdbool.h>
#include <stdint.h>

#define NM_TLB_WAYS     4u  /* both parts; the tree pseudo-LRU needs 4 */
#define NM_TLB_MAX_SETS 16u /* 64 entries (the Pentium's data TLB) */

typedef struct nm_tlb_config {
    const char *name;     /* for the report: "tlb", "code_tlb", "data_tlb" */
    uint32_t entries;     /* 4 KB entries: 4 x a power of two, <= 64 */
    uint32_t big_entries; /* separate 4 MB entries (0: none), same limits */
} nm_tlb_config;

typedef struct nm_tlb_part {
    uint32_t sets, shift;                       /* set = (lin >> shift) & (sets - 1) */
    uint32_t tag[NM_TLB_MAX_SETS][NM_TLB_WAYS]; /* page base | 1 (valid), or 0 */
    uint8_t plru[NM_TLB_MAX_SETS];              /* B0 B1 B2 as in cache.h */
    /* per set, the tag of the way used last (0: none): using it again
     * changes no replacement bit, so a hit there is only counted */
    uint32_t set_mru[NM_TLB_MAX_SETS];
} nm_tlb_part;

typedef struct nm_tlb_stats {
    uint64_t hits, misses;
    uint64_t flushes;      /* whole-TLB flushes (CR3 loads, task switches, CR0.PG/CR4.PSE) */
    uint64_t page_flushes; /* INVLPG */
} nm_tlb_stats;

typedef struct nm_tlb {
    nm_tlb_config cfg;
    nm_tlb_part small, big;
    uint32_t mru; /* the 4 KB page last hit or filled, | 1 (0: none) */
    nm_tlb_stats stats;
} nm_tlb;

/* False (and *t untouched) when the geometry is impossible. */
bool nm_tlb_init(nm_tlb *t, const nm_tlb_config *cfg);

/* Looks up the page of linear address `lin`; a hit updates the
 * replacement state.  Counts a hit or a miss. */
bool nm_tlb_lookup_slow(nm_tlb *t, uint32_t lin);
/* Whether an access of `size` bytes at linear `lin` runs into the next
 * page (size 0 as 1): it then looks up two entries (the 486's and the
 * Pentium's tlb_access). */
static inline bool nm_tlb_crosses_page(uint32_t lin, uint32_t size)
{
    return (lin & 0xfffu) + size > 0x1000u;
}
/* The 4 KB part's tag used last in the set of `lin` (a hit on it changes
 * nothing but the counters; the 4 KB part is looked up first). */
static inline uint32_t nm_tlb_small_set_mru(const nm_tlb *t, uint32_t lin)
{
    return t->small.set_mru[(lin >> 12) & (t->small.sets - 1)];
}
static inline bool nm_tlb_lookup(nm_tlb *t, uint32_t lin)
{
    /* The entry last used is the most recent of its set: a hit that
     * changes no replacement bit (code and stack stay on a page). */
    uint32_t tag = (lin & 0xfffff000u) | 1u;
    if (tag == t->mru || nm_tlb_small_set_mru(t, lin) == tag) {
        t->mru = tag;
        t->stats.hits++;
        return true;
    }
    return nm_tlb_lookup_slow(t, lin);
}

/* nm_tlb_lookup of a page whose translation is present (a hit, counted,
 * the replacement state updated); false, with nothing changed and
 * nothing counted, when it is not. */
bool nm_tlb_lookup_if_present(nm_tlb *t, uint32_t lin);

/* After a miss's walk: enters the translation of `lin`, a 4 MB page when
 * `big` and the TLB has 4 MB entries (else a 4 KB entry for the 4 KB of it
 * that `lin` is in). */
void nm_tlb_fill(nm_tlb *t, uint32_t lin, bool big);
/* MOV CR3, a task switch loading another CR3, CR0.PG / CR4.PSE changes. */
void nm_tlb_flush(nm_tlb *t);
/* INVLPG: drops the entry (4 KB or 4 MB) that translates `lin`. */
void nm_tlb_flush_page(nm_tlb *t, uint32_t lin);

/* The page-table entries the chip reads on a miss for linear `lin`, from
 * the CPU's CR3, CR4.PSE and the page directory in guest RAM (read without
 * side effects): addr[0] the PDE, addr[1] the PTE.  Returns how many: 2, 1
 * for a 4 MB page (*big set) or when the PDE is not present or not in RAM
 * (the walk stops there: the interpreter raises the fault), 0 with paging
 * off. */
typedef struct nm_cpu nm_cpu;
unsigned nm_tlb_walk_addrs(const nm_cpu *c, uint32_t lin, uint32_t addr[2], bool *big);

#endif
