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
    unsigned depth;                /* 4 on the 486 */
    uint64_t done_at[NM_WBUF_MAX]; /* ring of completion times */
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
    w->count++;
    w->writes++;
    return stall;
}

#endif
