/* Xilinx XPS / AXI Quad SPI core (standard SPI mode, the register set Linux's
 * spi-xilinx.c drives, compatible "xlnx,xps-spi-2.00.a") inside an FPGA on a
 * PCI card.  devices/bus/xilinx_spi.c; docs/spi.md. */
#ifndef NICEMU_DEVICES_BUS_XILINX_SPI_H
#define NICEMU_DEVICES_BUS_XILINX_SPI_H

#include <stdint.h>

#include "devices/bus/spi.h"
#include "emu/core/device.h"

extern const nm_device_class nm_xilinx_spi_class;

/* Register offsets (DS570 / PG153 "legacy" register map). */
enum {
    NM_XSPI_DGIER = 0x1c, /* device global interrupt enable: bit 31 */
    NM_XSPI_IPISR = 0x20, /* interrupt status, toggle on write */
    NM_XSPI_IPIER = 0x28, /* interrupt enable */
    NM_XSPI_SRR = 0x40,   /* software reset: write 0x0000000A */
    NM_XSPI_CR = 0x60,    /* control */
    NM_XSPI_SR = 0x64,    /* status */
    NM_XSPI_DTR = 0x68,   /* data transmit (TX FIFO) */
    NM_XSPI_DRR = 0x6c,   /* data receive (RX FIFO) */
    NM_XSPI_SSR = 0x70,   /* slave select, active low */
    NM_XSPI_TXOCY = 0x74, /* TX FIFO occupancy - 1 */
    NM_XSPI_RXOCY = 0x78, /* RX FIFO occupancy - 1 */
};

/* The PCI identity of the card: Xilinx's vendor ID and the 7-series PCIe
 * block's default device ID (no Linux 6.1 driver claims it). */
#define NM_XSPI_PCI_VENDOR 0x10eeu
#define NM_XSPI_PCI_DEVICE 0x7011u
#define NM_XSPI_BAR_SIZE   0x1000u

#define NM_XSPI_COUNTERS(X)                                                                        \
    X(bytes)                                                                                       \
    X(bursts)                                                                                      \
    X(tx_fifo_overflows)                                                                           \
    X(rx_fifo_overruns)                                                                            \
    X(rx_fifo_underruns)                                                                           \
    X(interrupts)                                                                                  \
    X(resets)                                                                                      \
    X(bad_accesses)                                                                                \
    X(reg_reads)                                                                                   \
    X(reg_writes)

typedef struct nm_xspi_stats {
#define NM_XSPI_FIELD(name) uint64_t name;
    NM_XSPI_COUNTERS(NM_XSPI_FIELD)
#undef NM_XSPI_FIELD
} nm_xspi_stats;

/* For tests and tools: the SPI bus the controller masters, its counters and
 * the CPU clocks its register accesses waited on the PCI bus. */
nm_spi_bus *nm_xilinx_spi_bus(void *dev);
const nm_xspi_stats *nm_xilinx_spi_stats(const void *dev);
uint64_t nm_xilinx_spi_wait_clocks(const void *dev);

#endif
