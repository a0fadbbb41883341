/* The ISA (AT) bus: what an access to a card on it costs the CPU.
 *
 * Cards claim their I/O ports and memory windows through the bus, saying how
 * wide they are (8 or 16 bits: whether they assert IOCS16#/MEMCS16#).  The
 * bus owns one nm_bus_cost per claim, filled from the AT bus cycle lengths
 * (docs/isa-bus.md) at the CPU's clock, hands it to the port/memory map so
 * the CPU pays before the card sees the access, and splits wide accesses
 * into the bus cycles a real AT bus controller would run: a 16-bit access to
 * an 8-bit card is two 8-bit cycles, a 32-bit access is two 16-bit cycles.
 * The card's callbacks therefore only ever see its own width (8-bit cards:
 * size 1; 16-bit cards: size 1 or 2).
 *
 * There is one bus per machine: the device class "isa" (keys clock, io8_ws,
 * io16_ws, mem8_ws, mem16_ws).  nm_isa_bus_get finds it among the machine's
 * devices, creating it with the defaults when the configuration has none. */
#ifndef NICEMU_DEVICES_BUS_ISA_H
#define NICEMU_DEVICES_BUS_ISA_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/core/ioport.h"
#include "emu/core/memmap.h"

typedef struct nm_machine nm_machine;
typedef struct nm_isa_bus nm_isa_bus;
typedef struct nm_isa_io nm_isa_io;   /* one I/O port claim */
typedef struct nm_isa_mem nm_isa_mem; /* one memory window */

/* Counters of one claim (or of the whole bus). */
typedef struct nm_isa_stats {
    uint64_t io_cycles;   /* ISA I/O bus cycles run */
    uint64_t mem_cycles;  /* ISA memory bus cycles run */
    uint64_t wait_clocks; /* CPU clocks charged for them */
} nm_isa_stats;

/* The machine's ISA bus, created with default timings if there is none yet.
 * NULL (and err set) only if creating it failed. */
nm_isa_bus *nm_isa_bus_get(nm_machine *m, GError **err);

/* Claims ports base..base+count-1 for a card `width` (8 or 16) bits wide.
 * NULL with err set (naming `name` and the current owner) if a port is taken. */
nm_isa_io *nm_isa_claim_io(nm_machine *m, uint16_t base, uint32_t count, const nm_io_ops *ops,
                           void *opaque, const char *name, unsigned width, GError **err);
void nm_isa_release_io(nm_isa_io *io);
void nm_isa_io_stats(const nm_isa_io *io, nm_isa_stats *sum); /* adds to *sum */

/* Maps a memory window (created disabled: enable it with
 * nm_isa_mem_set_enabled).  `nows`: the card asserts NOWS# (zero wait
 * states on 16-bit cycles, one on 8-bit ones). */
nm_isa_mem *nm_isa_map_memory(nm_machine *m, uint32_t base, uint32_t size, const nm_mmio_ops *ops,
                              void *opaque, const char *name, unsigned width, GError **err);
void nm_isa_unmap_memory(nm_isa_mem *w);
void nm_isa_mem_set_enabled(nm_isa_mem *w, bool enabled);
void nm_isa_mem_move(nm_isa_mem *w, uint32_t base);
void nm_isa_mem_set_timing(nm_isa_mem *w, unsigned width, bool nows);
bool nm_isa_mem_enabled(const nm_isa_mem *w);
uint32_t nm_isa_mem_base(const nm_isa_mem *w);
void nm_isa_mem_stats(const nm_isa_mem *w, nm_isa_stats *sum); /* adds to *sum */

/* The cost of an 8-bit I/O cycle, for claims made outside this API (the
 * board attaches it to the POST-code port 0x80).  Owned by the bus. */
nm_bus_cost *nm_isa_io8_cost(nm_machine *m);

/* Recomputes every cost after the CPU clock changed (the bus also notices
 * by itself at the next access through one of its claims). */
void nm_isa_retime(nm_isa_bus *b);

/* Bus clock (exact fraction of Hz) and cycle lengths in BCLK, for tests
 * and the docs. */
void nm_isa_bus_clock(const nm_isa_bus *b, uint64_t *hz_num, uint64_t *hz_den);
/* CPU clocks one bus cycle takes: io (true) or memory, 8 or 16 bits wide. */
uint32_t nm_isa_cycle_clocks(const nm_isa_bus *b, bool io, unsigned width, bool nows);
void nm_isa_bus_stats(const nm_isa_bus *b, nm_isa_stats *sum);

#endif
