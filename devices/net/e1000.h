/* Intel 82540EM Gigabit Ethernet controller ("e1000") on PCI.
 * devices/net/e1000.c; docs/e1000.md says what is modelled. */
#ifndef NICEMU_DEVICES_NET_E1000_H
#define NICEMU_DEVICES_NET_E1000_H

#include <stdint.h>

#include "emu/core/device.h"

extern const nm_device_class nm_e1000_class;

/* What the device counts (its report keys are the field names). */
#define NM_E1000_COUNTERS(X)                                                                       \
    X(tx_frames)                                                                                   \
    X(tx_bytes)                                                                                    \
    X(rx_frames)                                                                                   \
    X(rx_bytes)                                                                                    \
    X(rx_missed)                                                                                   \
    X(rx_filtered)                                                                                 \
    X(rx_crc_errors)                                                                               \
    X(rx_too_long)                                                                                 \
    X(rx_disabled_drops)                                                                           \
    X(tx_descriptors)                                                                              \
    X(tx_tso_packets)                                                                              \
    X(tx_tso_segments)                                                                             \
    X(tx_csum_offloads)                                                                            \
    X(tx_dropped)                                                                                  \
    X(rx_descriptors)                                                                              \
    X(interrupts)                                                                                  \
    X(mmio_reads)                                                                                  \
    X(mmio_writes)                                                                                 \
    X(io_reads)                                                                                    \
    X(io_writes)                                                                                   \
    X(bad_descriptors)                                                                             \
    X(bad_ring_config)                                                                             \
    X(bad_register_accesses)                                                                       \
    X(mac_resets)

typedef struct nm_e1000_stats {
#define NM_E1000_FIELD(name) uint64_t name;
    NM_E1000_COUNTERS(NM_E1000_FIELD)
#undef NM_E1000_FIELD
} nm_e1000_stats;

/* For tests and the profiler: the counters of an instance (the state a
 * device instance of nm_e1000_class holds). */
const nm_e1000_stats *nm_e1000_get_stats(const void *dev);
/* CPU clocks the instance's register accesses waited on the PCI bus. */
uint64_t nm_e1000_pci_wait_clocks(const void *dev);

#endif
