/* Micrel (Microchip) KSZ8851SNL single-port Ethernet controller on SPI.
 * devices/net/ks8851.c; docs/ks8851.md says what is modelled. */
#ifndef NICEMU_DEVICES_NET_KS8851_H
#define NICEMU_DEVICES_NET_KS8851_H

#include <stdint.h>

#include "emu/core/device.h"

extern const nm_device_class nm_ks8851_class;

/* What the device counts (its report keys are the field names). */
#define NM_KS8851_COUNTERS(X)                                                                      \
    X(tx_frames)                                                                                   \
    X(tx_bytes)                                                                                    \
    X(tx_dropped)                                                                                  \
    X(rx_frames)                                                                                   \
    X(rx_bytes)                                                                                    \
    X(rx_overruns)                                                                                 \
    X(rx_filtered)                                                                                 \
    X(rx_errors)                                                                                   \
    X(rx_disabled_drops)                                                                           \
    X(spi_transactions)                                                                            \
    X(spi_reg_reads)                                                                               \
    X(spi_reg_writes)                                                                              \
    X(spi_rxq_bytes)                                                                               \
    X(spi_txq_bytes)                                                                               \
    X(spi_bad_commands)                                                                            \
    X(fifo_misuse)                                                                                 \
    X(interrupts)                                                                                  \
    X(soft_resets)

typedef struct nm_ks8851_stats {
#define NM_KS8851_FIELD(name) uint64_t name;
    NM_KS8851_COUNTERS(NM_KS8851_FIELD)
#undef NM_KS8851_FIELD
} nm_ks8851_stats;

/* For tests and the profiler: the counters of an instance. */
const nm_ks8851_stats *nm_ks8851_get_stats(const void *dev);
/* The level of the interrupt output (INTRN asserted). */
bool nm_ks8851_irq_asserted(const void *dev);

#endif
