/* Shared pieces of the cost models' memory side: bus-clock to core-clock
 * conversion, the external bus as one resource that is busy until a core
 * cycle, and a FIFO write buffer that drains onto that bus.  All times are
 * absolute core cycles (nm_clock.cycles), so the state survives from one
 * instruction to the next without host time. */
#ifndef NICEMU_CPU_TIMING_MEMBUS_H
#define NICEMU_CPU_TIMING_MEMBUS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/models.h"
#include "cpu/timing/cache.h"
#include "emu/report.h"

/* Core clocks for `bus_clocks` clocks of the external bus, rounded up
 * (a DX2-66 runs 2 core clocks per 33 MHz bus clock; a DX4-100, 3). */
static inline uint32_t nm_bus_to_core(const nm_cpu_model *m, uint32_t bus_clocks)
{
    /* core/bus = (hz_num/hz_den) / (bus_hz_num/bus_hz_den) */
    uint64_t num = (uint64_t)bus_clocks * m->hz_num * m->bus_hz_den;
    uint64_t den = m->hz_den * m->bus_hz_num;
    return (uint32_t)((num + den - 1) / den);
}

/* The external bus: free from `free_at` on. */
typedef struct nm_membus {
    uint64_t free_at;
    uint64_t busy_cycles; /* counter: core cycles the bus was in use */
} nm_membus;

/* Occupies the bus for `cycles` from `now` or when it frees up; returns the
 * cycle the transfer ends. */
static inline uint64_t nm_membus_use(nm_membus *b, uint64_t now, uint32_t cycles)
{
    uint64_t start = b->free_at > now ? b->free_at : now;
    b->free_at = start + cycles;
    b->busy_cycles += cycles;
    return b->free_at;
}

/* A write buffer of up to 8 entries; each entry frees when its write has
 * gone out on the bus.  Writes drain in order. */
#define NM_WBUF_MAX 8
typedef struct nm_wbuf {
    unsigned depth;                 /* 4 on the 486 */
    uint64_t done_at[NM_WBUF_MAX];  /* ring of completion times */
    uint64_t start_at[NM_WBUF_MAX]; /* and of the times they went on the bus */
    unsigned head, count;
    uint64_t writes, full_stalls, stall_cycles;
} nm_wbuf;

static inline void nm_wbuf_init(nm_wbuf *w, unsigned depth)
{
    *w = (nm_wbuf){.depth = depth > NM_WBUF_MAX ? NM_WBUF_MAX : (depth ? depth : 1)};
}

/* Drops entries completed by `now`. */
static inline void nm_wbuf_retire(nm_wbuf *w, uint64_t now)
{
    while (w->count && w->done_at[w->head] <= now) {
        w->head = (w->head + 1) % NM_WBUF_MAX;
        w->count--;
    }
}

/* Time the buffer is empty (all writes on the bus done). */
static inline uint64_t nm_wbuf_empty_at(const nm_wbuf *w, uint64_t now)
{
    if (!w->count) return now;
    uint64_t t = w->done_at[(w->head + w->count - 1) % NM_WBUF_MAX];
    return t > now ? t : now;
}

/* Queues a write at `now` taking `bus_cycles` (core clocks) on the bus.
 * Returns the stall: core clocks the CPU waits for a free entry. */
static inline uint32_t nm_wbuf_write(nm_wbuf *w, nm_membus *bus, uint64_t now, uint32_t bus_cycles)
{
    uint32_t stall = 0;
    nm_wbuf_retire(w, now);
    if (w->count >= w->depth) {
        uint64_t t = w->done_at[w->head];
        stall = (uint32_t)(t - now);
        now = t;
        nm_wbuf_retire(w, now);
        w->full_stalls++;
        w->stall_cycles += stall;
    }
    uint64_t done = nm_membus_use(bus, now, bus_cycles);
    w->done_at[(w->head + w->count) % NM_WBUF_MAX] = done;
    w->start_at[(w->head + w->count) % NM_WBUF_MAX] = done - bus_cycles;
    w->count++;
    w->writes++;
    return stall;
}

/* A read that goes on the bus ahead of the buffered writes (the 486's
 * reordering, i486.c): it waits only for the bus cycle in progress at `now`
 * (or, when no buffered write has started, for what runs before them), then
 * occupies the bus for `cycles`; the writes not yet started move back by as
 * much.  Returns the cycle the read ends. */
static inline uint64_t nm_wbuf_read_ahead(nm_wbuf *w, nm_membus *bus, uint64_t now, uint32_t cycles)
{
    nm_wbuf_retire(w, now);
    if (!w->count) return nm_membus_use(bus, now, cycles);
    unsigned h = w->head % NM_WBUF_MAX;
    uint64_t t0 = w->start_at[h] <= now ? w->done_at[h] : w->start_at[h];
    if (t0 < now) t0 = now;
    for (unsigned k = 0; k < w->count; k++) {
        unsigned e = (w->head + k) % NM_WBUF_MAX;
        if (w->start_at[e] >= t0) {
            w->start_at[e] += cycles;
            w->done_at[e] += cycles;
        }
    }
    if (bus->free_at > t0)
        bus->free_at += cycles;
    else
        bus->free_at = t0 + cycles;
    bus->busy_cycles += cycles;
    return t0 + cycles;
}

/* ---- the board: an optional external (second-level) cache before DRAM ----
 * What one line read or one single write costs on the bus behind the CPU's
 * own caches, in core clocks.  With no L2 every line comes from DRAM at the
 * dram-timing burst and every write takes the DRAM single transfer.  With an
 * L2 (docs/cost-models.md, "board"): direct-mapped, write-back, allocated on
 * read misses only, line size = the CPU's line size; a read hit is an L2
 * burst (486: 2-1-1-1, Pentium: 3-1-1-1 bus clocks), a read miss the DRAM
 * burst (plus a DRAM burst write first when the victim is dirty: no
 * write-back buffer), a write hit the L2 single write (marks the line
 * dirty), a write miss a DRAM single write.  Tags only; deterministic. */
typedef struct nm_board {
    nm_cache *l2;               /* NULL: no external cache */
    uint32_t l2_fill, l2_write; /* core clocks: line burst / single write on an L2 hit */
    uint32_t dram_fill, dram_single;
    uint64_t l2_read_hits, l2_read_misses, l2_write_hits, l2_write_misses, l2_writebacks;
    uint64_t l2_snoop_invalidations,
        l2_snoop_dirty; /* lines dropped by DMA writes; of them dirty */
} nm_board;

/* Sets up the board: `l2_size` bytes of L2 (0: none) with `line`-byte
 * lines; L2 timings and DRAM timings in bus clocks.  False if the L2
 * geometry is impossible (not a power of two). */
static inline bool nm_board_init(nm_board *b, const nm_cpu_model *m, uint32_t l2_size,
                                 uint32_t line, unsigned l2_first, unsigned l2_burst,
                                 unsigned l2_write, unsigned dram_first, unsigned dram_burst,
                                 unsigned dram_single)
{
    *b = (nm_board){0};
    b->dram_fill = nm_bus_to_core(m, dram_first + 3 * dram_burst);
    b->dram_single = nm_bus_to_core(m, dram_single);
    b->l2_fill = nm_bus_to_core(m, l2_first + 3 * l2_burst);
    b->l2_write = nm_bus_to_core(m, l2_write);
    if (!l2_size) return true;
    nm_cache_config cc = {"l2", l2_size, 1, line, NM_CACHE_WRITE_BACK, false, NM_CACHE_LRU};
    b->l2 = nm_cache_new(&cc);
    return b->l2 != NULL;
}

static inline void nm_board_free(nm_board *b)
{
    if (b->l2) nm_cache_free(b->l2);
    b->l2 = NULL;
}

/* The board cache's counters, into the model's report section. */
static inline void nm_board_report(const nm_board *b, nm_report *r)
{
    nm_report_u64(r, "l2_read_hits", b->l2_read_hits);
    nm_report_u64(r, "l2_read_misses", b->l2_read_misses);
    nm_report_u64(r, "l2_write_hits", b->l2_write_hits);
    nm_report_u64(r, "l2_write_misses", b->l2_write_misses);
    nm_report_u64(r, "l2_writebacks", b->l2_writebacks);
    nm_report_u64(r, "l2_snoop_invalidations", b->l2_snoop_invalidations);
    nm_report_u64(r, "l2_snoop_dirty", b->l2_snoop_dirty);
}

/* Bus-master DMA wrote [phys, phys + len): the chipset snoops its L2 and
 * drops the lines the master wrote (a dirty one is counted: its other
 * bytes would be merged into memory; no time is charged to the CPU, the
 * master's cycle is the chipset's).  A DMA read leaves the L2 as it is
 * (the data is right in the emulator either way). */
static inline void nm_board_snoop_write(nm_board *b, uint32_t phys, uint32_t len)
{
    if (!b->l2 || !len) return;
    uint32_t line = nm_cache_get_config(b->l2)->line_size;
    uint64_t end = (uint64_t)phys + len;
    for (uint64_t a = phys & ~(uint64_t)(line - 1); a < end; a += line) {
        if (!nm_cache_probe(b->l2, (uint32_t)a)) continue;
        if (nm_cache_invalidate_line(b->l2, (uint32_t)a)) b->l2_snoop_dirty++;
        b->l2_snoop_invalidations++;
    }
}

/* Bus time (core clocks) of a line fill of `phys` for the CPU's cache. */
static inline uint32_t nm_board_line_read(nm_board *b, uint32_t phys)
{
    if (!b->l2) return b->dram_fill;
    uint32_t victim;
    unsigned r = nm_cache_access(b->l2, phys, false, &victim);
    if (r & NM_CACHE_HIT) {
        b->l2_read_hits++;
        return b->l2_fill;
    }
    b->l2_read_misses++;
    if (r & NM_CACHE_WRITEBACK) {
        b->l2_writebacks++;
        return 2 * b->dram_fill;
    }
    return b->dram_fill;
}

/* Bus time of a single (non-burst) read: an uncached read with CR0.CD set
 * is still served by the L2 when it holds the line (no allocation). */
static inline uint32_t nm_board_single_read(nm_board *b, uint32_t phys)
{
    if (b->l2 && nm_cache_probe(b->l2, phys)) return b->l2_write;
    return b->dram_single;
}

/* Bus time of a single write (the write buffer's entry). */
static inline uint32_t nm_board_write(nm_board *b, uint32_t phys)
{
    if (!b->l2) return b->dram_single;
    if (nm_cache_access(b->l2, phys, true, NULL) & NM_CACHE_HIT) {
        b->l2_write_hits++;
        return b->l2_write;
    }
    b->l2_write_misses++;
    return b->dram_single;
}

/* Bus time of a whole-line write (a write-back cache's victim). */
static inline uint32_t nm_board_line_write(nm_board *b, uint32_t phys)
{
    if (!b->l2) return b->dram_fill;
    if (nm_cache_access(b->l2, phys, true, NULL) & NM_CACHE_HIT) {
        b->l2_write_hits++;
        return b->l2_fill;
    }
    b->l2_write_misses++;
    return b->dram_fill;
}

#endif
