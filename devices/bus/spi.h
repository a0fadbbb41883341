/* An SPI bus: one master (a controller the CPU programs), chip-select lines,
 * and the devices behind them.  docs/spi.md.
 *
 * The bus is full duplex and byte-wide: each byte the master shifts out on
 * MOSI, one byte comes back on MISO, both in 8 SCLK periods.  The bus does
 * not keep time itself: the controller decides when a byte starts and ends
 * (it owns the shift register and the SCLK divider) and calls
 * nm_spi_bus_exchange when the byte is complete; nm_spi_bytes_ns says how
 * long bytes take at a given SCLK, exactly, so every controller and test
 * computes the same times.
 *
 * A device on the bus gives two callbacks: `select` when its chip select is
 * asserted (true) or released (false) - the frame boundary of every SPI
 * command - and `exchange`, one byte in, one byte out, while it is selected.
 *
 * A controller creates the bus (it becomes a device instance of the machine,
 * named after the controller, reported and freed with it); devices find it by
 * that name with nm_spi_bus_find and claim a chip select:
 *
 *     b = nm_spi_bus_new(m, "spi0", 4, 25000000, err);            (controller)
 *     nm_spi_bus_set_cs(b, 1u << 0);  x = nm_spi_bus_exchange(b, 0x40);
 *
 *     b = nm_spi_bus_find(m, "spi0");                             (device)
 *     nm_spi_bus_attach(b, 0, "eth0", 40000000, &ops, s, err);
 *     ...
 *     nm_spi_bus_detach(b, 0);                                    (its destroy) */
#ifndef NICEMU_DEVICES_BUS_SPI_H
#define NICEMU_DEVICES_BUS_SPI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/core/device.h"

typedef struct nm_machine nm_machine;
typedef struct nm_spi_bus nm_spi_bus;

#define NM_SPI_MAX_CS 32

typedef struct nm_spi_device_ops {
    /* Chip select asserted (true: a transaction starts) or released. */
    void (*select)(void *opaque, bool selected);
    /* One full-duplex byte while selected: MOSI in, MISO out. */
    uint8_t (*exchange)(void *opaque, uint8_t mosi);
} nm_spi_device_ops;

typedef struct nm_spi_stats {
    uint64_t bytes;            /* bytes clocked on the bus */
    uint64_t bytes_unselected; /* clocked with no device selected (MISO reads 0xFF) */
    uint64_t selects;          /* chip-select assertions (transactions) */
    uint64_t contentions;      /* bytes clocked with two devices selected */
} nm_spi_stats;

/* The device class of bus instances (created by controllers, never named in
 * a configuration). */
extern const nm_device_class nm_spi_bus_class;

/* A bus with `chip_selects` lines (1..32) clocked at `sclk_hz`, added to the
 * machine as a device instance called `name`. */
nm_spi_bus *nm_spi_bus_new(nm_machine *m, const char *name, unsigned chip_selects, uint64_t sclk_hz,
                           GError **err);
/* The bus called `name` (NULL: the machine's first SPI bus), or NULL. */
nm_spi_bus *nm_spi_bus_find(nm_machine *m, const char *name);
const char *nm_spi_bus_name(const nm_spi_bus *b);

/* Claims chip select `cs` for a device that runs at most `max_hz` (0: no
 * limit; a faster SCLK is logged once: the part would sample garbage).
 * Errors (cs out of range or taken) name `name`. */
bool nm_spi_bus_attach(nm_spi_bus *b, unsigned cs, const char *name, uint64_t max_hz,
                       const nm_spi_device_ops *ops, void *opaque, GError **err);
void nm_spi_bus_detach(nm_spi_bus *b, unsigned cs);

/* The chip-select lines the master drives: bit n set = CS n asserted.
 * Devices whose line changes are told (released ones first).  Bits beyond
 * the bus's lines are ignored. */
void nm_spi_bus_set_cs(nm_spi_bus *b, uint32_t asserted);
uint32_t nm_spi_bus_cs(const nm_spi_bus *b);

/* One byte on the wire: every selected device sees `mosi`; MISO is what the
 * selected device drives, 0xFF (the pull-up) when none is selected, and the
 * AND of the drivers when several are (counted as contention). */
uint8_t nm_spi_bus_exchange(nm_spi_bus *b, uint8_t mosi);

/* SCLK (Hz) and its change (the controller's divider). */
uint64_t nm_spi_bus_sclk(const nm_spi_bus *b);
void nm_spi_bus_set_sclk(nm_spi_bus *b, uint64_t sclk_hz);

/* Virtual time `bytes` bytes take at `sclk_hz`: bytes x 8 SCLK periods,
 * ns rounded up (exact for the usual 12.5/20/25/40 MHz clocks). */
uint64_t nm_spi_bytes_ns(uint64_t sclk_hz, uint64_t bytes);

void nm_spi_bus_stats(const nm_spi_bus *b, nm_spi_stats *out);

#endif
