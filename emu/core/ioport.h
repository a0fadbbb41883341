/* The 64 K I/O port space.  A device claims a contiguous range; the callbacks
 * see the offset into the claim and the access size. */
#ifndef NICEMU_IOPORT_H
#define NICEMU_IOPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/core/memmap.h" /* nm_bus_cost */

typedef struct nm_io_ops {
    uint32_t (*read)(void *opaque, uint32_t offset, unsigned size);
    void (*write)(void *opaque, uint32_t offset, uint32_t value, unsigned size);
    /* Optional: whether, right after a read of this register, another read
     * would return the same value and change nothing, until the device's
     * state changes by a clock event or a write (the CPU's poll
     * fast-forward counts on it: cpu/poll.c; not asked of a claim with a
     * bus cost).  NULL: never. */
    bool (*repeatable)(void *opaque, uint32_t offset, unsigned size);
} nm_io_ops;

typedef struct nm_io_claim {
    const char *name;
    uint16_t base;
    uint32_t count;
    const nm_io_ops *ops;
    void *opaque;
    nm_bus_cost *cost;
    struct nm_io_claim *prev, *next; /* every live claim, for nm_ioport_free */
} nm_io_claim;

typedef struct nm_ioport_map {
    nm_clock *clock;
    nm_io_claim *port_claim[65536];
    nm_io_claim *claims; /* the list of live claims */
    uint64_t unclaimed_reads, unclaimed_writes;
} nm_ioport_map;

nm_ioport_map *nm_ioport_new(nm_clock *clock);
void nm_ioport_free(nm_ioport_map *m);

/* Returns NULL if any port in the range is taken or the range passes 0xFFFF. */
nm_io_claim *nm_ioport_claim(nm_ioport_map *m, uint16_t base, uint32_t count, const nm_io_ops *ops,
                             void *opaque, const char *name, nm_bus_cost *cost);
void nm_ioport_release(nm_ioport_map *m, nm_io_claim *claim);
const nm_io_claim *nm_ioport_owner(const nm_ioport_map *m, uint16_t port);

/* Accesses of 1, 2 or 4 bytes.  An access that does not fit in one claim is
 * split into byte accesses (as an 8-bit device sees a 16-bit IN). Unclaimed
 * ports read all-ones; writes to them are dropped. */
uint32_t nm_io_read(nm_ioport_map *m, uint16_t port, unsigned size);
void nm_io_write(nm_ioport_map *m, uint16_t port, uint32_t value, unsigned size);
/* Whether the read of `port` just done may be repeated without effect
 * (nm_io_ops.repeatable, cpu/poll.c): never on a claim with a bus cost,
 * whose counters each read moves. */
bool nm_io_read_repeatable(const nm_ioport_map *m, uint16_t port, unsigned size);

#endif
