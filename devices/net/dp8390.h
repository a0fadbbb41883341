/* The National DP8390 NIC core, shared by the board wrappers (NE2000: remote
 * DMA through a data port; WD8013: shared memory).  The board supplies its
 * local buffer memory and its interrupt line through nm_dp8390_board; the
 * core does the registers, remote and local DMA, the receive ring, the
 * address filter, the tally counters and the wire side (devices/netdev).
 * What is modelled and what is not: docs/dp8390.md. */
#ifndef NICEMU_DEVICES_NET_DP8390_H
#define NICEMU_DEVICES_NET_DP8390_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/core/report.h"

typedef struct nm_machine nm_machine;
typedef struct nm_dp8390 nm_dp8390;
typedef struct nm_net_endpoint nm_net_endpoint;

/* Register bits (DP8390D datasheet, section 7 "Register Descriptions"). */
enum {
    NM_DP_CR_STP = 0x01,
    NM_DP_CR_STA = 0x02,
    NM_DP_CR_TXP = 0x04,
    NM_DP_CR_RD_READ = 0x08,
    NM_DP_CR_RD_WRITE = 0x10,
    NM_DP_CR_RD_SEND = 0x18,
    NM_DP_CR_RD_ABORT = 0x20,
    NM_DP_CR_RD_MASK = 0x38,
    NM_DP_CR_PS_MASK = 0xc0,

    NM_DP_ISR_PRX = 0x01,
    NM_DP_ISR_PTX = 0x02,
    NM_DP_ISR_RXE = 0x04,
    NM_DP_ISR_TXE = 0x08,
    NM_DP_ISR_OVW = 0x10,
    NM_DP_ISR_CNT = 0x20,
    NM_DP_ISR_RDC = 0x40,
    NM_DP_ISR_RST = 0x80,

    NM_DP_DCR_WTS = 0x01,
    NM_DP_DCR_BOS = 0x02,
    NM_DP_DCR_LAS = 0x04,
    NM_DP_DCR_LS = 0x08,
    NM_DP_DCR_AR = 0x10,
    NM_DP_DCR_FT = 0x60,

    NM_DP_TCR_CRC = 0x01,
    NM_DP_TCR_LB = 0x06,
    NM_DP_TCR_ATD = 0x08,
    NM_DP_TCR_OFST = 0x10,

    NM_DP_TSR_PTX = 0x01,
    NM_DP_TSR_COL = 0x04,
    NM_DP_TSR_ABT = 0x08,
    NM_DP_TSR_CRS = 0x10,
    NM_DP_TSR_FU = 0x20,
    NM_DP_TSR_CDH = 0x40,
    NM_DP_TSR_OWC = 0x80,

    NM_DP_RCR_SEP = 0x01,
    NM_DP_RCR_AR = 0x02,
    NM_DP_RCR_AB = 0x04,
    NM_DP_RCR_AM = 0x08,
    NM_DP_RCR_PRO = 0x10,
    NM_DP_RCR_MON = 0x20,

    NM_DP_RSR_PRX = 0x01,
    NM_DP_RSR_CRC = 0x02,
    NM_DP_RSR_FAE = 0x04,
    NM_DP_RSR_FO = 0x08,
    NM_DP_RSR_MPA = 0x10,
    NM_DP_RSR_PHY = 0x20,
    NM_DP_RSR_DIS = 0x40,
    NM_DP_RSR_DFR = 0x80,
};

/* What the board gives the core.  Addresses are the NIC's 16-bit local
 * addresses; the board decodes them (mirrors, PROM, unpopulated space) and
 * must accept any value. */
typedef struct nm_dp8390_board {
    void *opaque;
    uint8_t (*mem_read)(void *opaque, uint16_t addr);
    void (*mem_write)(void *opaque, uint16_t addr, uint8_t value);
    /* The INT pin: (ISR & IMR) != 0.  Called on every change. */
    void (*irq)(void *opaque, bool level);
} nm_dp8390_board;

typedef struct nm_dp8390_stats {
    uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes;
    uint64_t missed; /* frames for us that could not be stored */
    uint64_t rx_runts, tx_runts, crc_errors, overflows;
    uint64_t rx_ignored; /* not for us, or the receiver was off */
} nm_dp8390_stats;

/* `name` labels log lines ("ne2000 @0x300"). */
nm_dp8390 *nm_dp8390_new(nm_machine *m, const char *name, const nm_dp8390_board *board);
void nm_dp8390_free(nm_dp8390 *d);
/* Connects the wire: nm_net_attach(net, 10 Mbit/s, capture).  Without a
 * call the cable is unplugged: frames sent go nowhere (after their wire
 * time), nothing arrives. */
bool nm_dp8390_attach(nm_dp8390 *d, const char *net, const char *capture, const char *origin,
                      GError **err);
nm_net_endpoint *nm_dp8390_endpoint(nm_dp8390 *d);

/* The RESET pin (board reset). */
void nm_dp8390_reset(nm_dp8390 *d);

/* Register access, reg 0..15 in the page CR.PS selects. */
uint8_t nm_dp8390_read(nm_dp8390 *d, unsigned reg);
void nm_dp8390_write(nm_dp8390 *d, unsigned reg, uint8_t value);

/* The remote DMA data path (the NE2000's data port).  One call is one
 * transfer of DCR.WTS width (a byte, or a word whose low byte a byte-wide
 * host access sees); `size` 2 in byte mode is two transfers. */
uint32_t nm_dp8390_dma_read(nm_dp8390 *d, unsigned size);
void nm_dp8390_dma_write(nm_dp8390 *d, uint32_t value, unsigned size);

bool nm_dp8390_irq_level(const nm_dp8390 *d);
const nm_dp8390_stats *nm_dp8390_get_stats(const nm_dp8390 *d);
void nm_dp8390_report(const nm_dp8390 *d, nm_report *r);
/* The core's state in its board's snapshot section (emu/core/snapshot.h). */
typedef struct nm_snap nm_snap;
void nm_dp8390_snapshot(nm_dp8390 *d, nm_snap *s);

/* The multicast filter bit (0..63) a destination address selects: the top
 * 6 bits of the CRC-32 of the address, MSB-first (datasheet "Multicast
 * Address Registers"). */
unsigned nm_dp8390_mcast_index(const uint8_t addr[6]);

/* The core inside a board's device state (tests, the board's report). */
nm_dp8390 *nm_ne2000_nic(void *ne2000_dev);
nm_dp8390 *nm_wd8013_nic(void *wd8013_dev);

#endif
