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
#include "cpu/timing/timing.h"
#include "emu/core/report.h"

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

/* When a transfer asked for at `now` can start. */
static inline uint64_t nm_membus_start(const nm_membus *b, uint64_t now)
{
    return b->free_at > now ? b->free_at : now;
}

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
    unsigned count = w->count, head = w->head;
    if (!count || w->done_at[head] > now) return;
    do {
        head = (head + 1) % NM_WBUF_MAX;
        count--;
    } while (count && w->done_at[head] <= now);
    w->count = count;
    w->head = head;
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
 * own caches, in core clocks, for a board preset (cpu/timing/boards.c,
 * docs/boards.md).  The pieces, each off when its parameter is 0:
 *
 * L2: direct-mapped, line size = the CPU's line, allocated on read misses
 *   only (no write allocation on the 486/Pentium boards of the period).
 *   Policies: write-back with a dirty tag (a victim is written back only when
 *   dirty), write-back "always dirty" (no dirty tag: every valid victim is
 *   written back), write-through (write hits update the L2 and go to DRAM).
 *   A read hit is the L2 burst (e.g. 2-1-1-1), a write hit the L2 single
 *   write; a read miss is a DRAM burst, after the victim's write-back when
 *   there is one (no write-back buffer).
 * DRAM pages: the open row of one bank; an access in it is a page hit (the
 *   first/single clocks), another row costs `miss` more bus clocks (RAS
 *   precharge and RAS-to-CAS).  0 bytes: every access is timed as a hit.
 * Posted writes: a chipset buffer of `posted` entries accepts a DRAM write in
 *   `posted_accept` bus clocks and writes it to DRAM behind the CPU; a full
 *   buffer makes the CPU wait for its oldest entry; a DRAM read waits until
 *   the buffer has drained (the chipset keeps reads behind writes).  With
 *   `victim_posted` an L2 victim is copied from the SRAM into that buffer
 *   (one L2 burst), the new line is filled first and the victim's DRAM
 *   write follows it (the 82434LX's LBX path).
 * Refresh: every `refresh_ns` the chipset refreshes a row, holding the DRAM
 *   for `refresh_busy_ns`; an access that starts inside a refresh waits for
 *   its end, and the first access after a refresh finds no row open (a
 *   refresh precharges the bank).  The requests are at fixed multiples of
 *   the period from cycle 0 (the PC's refresh timer never stops).
 * Tags and times only; deterministic (absolute core cycles). */
/* nm_l2_policy and nm_board_timing (the preset's data): timing.h. */

typedef struct nm_board {
    const nm_cpu_model *model;
    nm_board_timing t;
    nm_cache *l2; /* NULL: no external cache */
    /* Core clocks of the fixed parts. */
    uint32_t l2_fill, l2_write, dram_fill, dram_single, dram_miss, posted_accept;
    uint64_t refresh_period; /* core clocks between refresh requests, 0: none */
    uint32_t refresh_busy;   /* core clocks a refresh holds the DRAM */
    uint64_t refresh_seen;   /* the last refresh period an access was in */
    uint32_t open_page;      /* DRAM row open (page number), UINT32_MAX: none */
    nm_membus dram;          /* the DRAM behind the chipset's write buffer */
    nm_wbuf posted;          /* the chipset's posted writes */
    /* The last line read: its burst in bus clocks and the core clocks spent
     * before its first transfer (a victim's write-back, a page miss, the
     * posted writes draining): the 486's critical-word-first timing. */
    unsigned last_first, last_burst;
    uint32_t last_before;
    uint64_t l2_read_hits, l2_read_misses, l2_write_hits, l2_write_misses, l2_writebacks;
    uint64_t dram_page_hits, dram_page_misses, posted_writes, posted_full_stalls;
    uint64_t l2_snoop_invalidations, l2_snoop_dirty; /* lines dropped by DMA writes; dirty */
    uint64_t refresh_waits, refresh_wait_clocks, refresh_row_closes;
} nm_board;

/* Core clocks of `ns` nanoseconds, rounded to the nearest. */
static inline uint64_t nm_ns_to_core(const nm_cpu_model *m, uint64_t ns)
{
    uint64_t den = m->hz_den * 1000000000u;
    return (ns * m->hz_num + den / 2) / den;
}

/* Sets up the board for `t` (bus clocks) with `line`-byte lines.  False if
 * the L2 geometry is impossible (not a power of two). */
static inline bool nm_board_init(nm_board *b, const nm_cpu_model *m, const nm_board_timing *t,
                                 uint32_t line)
{
    *b = (nm_board){0};
    b->model = m;
    b->t = *t;
    b->dram_fill = nm_bus_to_core(m, t->dram_first + 3 * t->dram_burst);
    b->dram_single = nm_bus_to_core(m, t->dram_single);
    b->dram_miss = nm_bus_to_core(m, t->dram_miss);
    b->l2_fill = nm_bus_to_core(m, t->l2_first + 3 * t->l2_burst);
    b->l2_write = nm_bus_to_core(m, t->l2_write);
    b->posted_accept = nm_bus_to_core(m, t->posted_accept);
    b->refresh_period = t->refresh_ns ? nm_ns_to_core(m, t->refresh_ns) : 0;
    b->refresh_busy = (uint32_t)nm_ns_to_core(m, t->refresh_busy_ns);
    b->open_page = UINT32_MAX;
    nm_wbuf_init(&b->posted, t->posted ? t->posted : 1);
    if (!t->l2_size) return true;
    nm_cache_config cc = {"l2",
                          t->l2_size,
                          1,
                          line,
                          t->l2_policy == NM_L2_WRITE_THROUGH ? NM_CACHE_WRITE_THROUGH
                                                              : NM_CACHE_WRITE_BACK,
                          false,
                          NM_CACHE_LRU};
    b->l2 = nm_cache_new(&cc);
    return b->l2 != NULL;
}

static inline void nm_board_free(nm_board *b)
{
    if (b->l2) nm_cache_free(b->l2);
    b->l2 = NULL;
}

/* The board's counters, into the model's report section. */
static inline void nm_board_report(const nm_board *b, nm_report *r)
{
    nm_report_u64(r, "l2_read_hits", b->l2_read_hits);
    nm_report_u64(r, "l2_read_misses", b->l2_read_misses);
    nm_report_u64(r, "l2_write_hits", b->l2_write_hits);
    nm_report_u64(r, "l2_write_misses", b->l2_write_misses);
    nm_report_u64(r, "l2_writebacks", b->l2_writebacks);
    nm_report_u64(r, "dram_page_hits", b->dram_page_hits);
    nm_report_u64(r, "dram_page_misses", b->dram_page_misses);
    nm_report_u64(r, "posted_writes", b->posted_writes);
    nm_report_u64(r, "posted_full_stalls", b->posted_full_stalls);
    nm_report_u64(r, "l2_snoop_invalidations", b->l2_snoop_invalidations);
    nm_report_u64(r, "l2_snoop_dirty", b->l2_snoop_dirty);
    nm_report_u64(r, "refresh_waits", b->refresh_waits);
    nm_report_u64(r, "refresh_wait_clocks", b->refresh_wait_clocks);
    nm_report_u64(r, "refresh_row_closes", b->refresh_row_closes);
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

/* Core clocks a DRAM access to `phys` starting at `t` adds for the DRAM's
 * state: a refresh in progress, then a page miss (and the row it leaves
 * open). */
static inline uint32_t nm_board_page(nm_board *b, uint32_t phys, uint64_t t)
{
    uint32_t wait = 0;
    if (b->refresh_period) {
        uint64_t k = t / b->refresh_period;
        if (k != b->refresh_seen) { /* a refresh ran since the last access */
            b->refresh_seen = k;
            if (b->open_page != UINT32_MAX) b->refresh_row_closes++;
            b->open_page = UINT32_MAX;
        }
        uint64_t end = k * b->refresh_period + b->refresh_busy;
        if (t < end) {
            wait = (uint32_t)(end - t);
            b->refresh_waits++;
            b->refresh_wait_clocks += wait;
        }
    }
    if (!b->t.dram_page_bytes) return wait;
    uint32_t page = phys / b->t.dram_page_bytes;
    if (page == b->open_page) {
        b->dram_page_hits++;
        return wait;
    }
    b->open_page = page;
    b->dram_page_misses++;
    return wait + b->dram_miss;
}

/* Core clocks from `now` until the DRAM is free for a read (posted writes
 * drained, the DRAM idle). */
static inline uint32_t nm_board_dram_wait(nm_board *b, uint64_t now)
{
    if (!b->t.posted) return 0;
    uint64_t t = nm_wbuf_empty_at(&b->posted, now);
    if (b->dram.free_at > t) t = b->dram.free_at;
    return (uint32_t)(t - now);
}

/* Queues a DRAM write of `clocks` (core, page hit) to `phys` in the posted
 * buffer at `at`; returns the wait for a free entry.  The write reaches the
 * DRAM when the DRAM is free (the buffer drains in order). */
static inline uint32_t nm_board_post(nm_board *b, uint32_t phys, uint64_t at, uint32_t clocks)
{
    b->posted_writes++;
    nm_wbuf_retire(&b->posted, at);
    if (b->posted.count >= b->posted.depth) b->posted_full_stalls++;
    uint32_t miss = nm_board_page(b, phys, nm_membus_start(&b->dram, at));
    return nm_wbuf_write(&b->posted, &b->dram, at, clocks + miss);
}

/* A DRAM write of `clocks` (core, page hit) to `phys` asked for at `now`:
 * the CPU bus time it takes (posted: the accept time, plus any wait for a
 * free entry). */
static inline uint32_t nm_board_dram_write(nm_board *b, uint32_t phys, uint64_t now,
                                           uint32_t clocks)
{
    if (!b->t.posted) return clocks + nm_board_page(b, phys, now);
    return b->posted_accept + nm_board_post(b, phys, now + b->posted_accept, clocks);
}

/* Bus time (core clocks) of a line fill of `phys` for the CPU's cache,
 * asked for at `now`. */
static inline uint32_t nm_board_line_read(nm_board *b, uint32_t phys, uint64_t now)
{
    b->last_before = 0;
    bool victim_out = false;
    uint32_t victim = 0;
    if (b->l2) {
        unsigned r = nm_cache_access(b->l2, phys, false, &victim);
        if (r & NM_CACHE_HIT) {
            b->l2_read_hits++;
            b->last_first = b->t.l2_first;
            b->last_burst = b->t.l2_burst;
            return b->l2_fill;
        }
        b->l2_read_misses++;
        bool wb = (r & NM_CACHE_WRITEBACK) ||
                  (b->t.l2_policy == NM_L2_WRITE_BACK_ALWAYS_DIRTY && (r & NM_CACHE_EVICTED));
        if (wb) {
            b->l2_writebacks++;
            if (b->t.victim_posted && b->t.posted) {
                /* Out of the SRAM into the write buffer; its DRAM write
                 * after the fill (below). */
                b->last_before += b->l2_fill;
                victim_out = true;
            } else {
                b->last_before += nm_board_dram_wait(b, now);
                b->last_before += b->dram_fill + nm_board_page(b, victim, now + b->last_before);
            }
        }
    }
    b->last_before += nm_board_dram_wait(b, now + b->last_before);
    b->last_before += nm_board_page(b, phys, now + b->last_before);
    b->last_first = b->t.dram_first;
    b->last_burst = b->t.dram_burst;
    uint32_t cost = b->last_before + b->dram_fill;
    if (victim_out) {
        /* The fill holds the DRAM until it ends; the victim queues behind it. */
        if (b->dram.free_at < now + cost) b->dram.free_at = now + cost;
        cost += nm_board_post(b, victim, now + cost, b->dram_fill);
    }
    return cost;
}

/* Bus time of a single (non-burst) read at `now`: an uncached read with
 * CR0.CD set is still served by the L2 when it holds the line (no
 * allocation). */
static inline uint32_t nm_board_single_read(nm_board *b, uint32_t phys, uint64_t now)
{
    if (b->l2 && nm_cache_probe(b->l2, phys)) return b->l2_write;
    uint32_t w = nm_board_dram_wait(b, now);
    return w + nm_board_page(b, phys, now + w) + b->dram_single;
}

/* Bus time of a single write (the CPU write buffer's entry) at `now`;
 * always inline (the 486's instanced memory hook: a call for every write
 * otherwise), nm_board_write below left to the compiler (inlined into the
 * Pentium's paths it measured slower). */
static inline __attribute__((always_inline)) uint32_t
nm_board_write_inline(nm_board *b, uint32_t phys, uint64_t now)
{
    if (b->l2 && (nm_cache_access(b->l2, phys, true, NULL) & NM_CACHE_HIT)) {
        b->l2_write_hits++;
        if (b->t.l2_policy != NM_L2_WRITE_THROUGH) return b->l2_write;
    } else if (b->l2) {
        b->l2_write_misses++;
    }
    return nm_board_dram_write(b, phys, now, b->dram_single);
}
static inline uint32_t nm_board_write(nm_board *b, uint32_t phys, uint64_t now)
{
    return nm_board_write_inline(b, phys, now);
}

/* Bus time of a whole-line write (a write-back cache's victim) at `now`. */
static inline uint32_t nm_board_line_write(nm_board *b, uint32_t phys, uint64_t now)
{
    if (b->l2 && (nm_cache_access(b->l2, phys, true, NULL) & NM_CACHE_HIT)) {
        b->l2_write_hits++;
        if (b->t.l2_policy != NM_L2_WRITE_THROUGH) return b->l2_fill;
    } else if (b->l2) {
        b->l2_write_misses++;
    }
    return nm_board_dram_write(b, phys, now, b->dram_fill);
}

#endif
