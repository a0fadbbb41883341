/* Micrel KSZ8851SNL: a 10/100 MAC + PHY behind an SPI slave interface, as
 * Linux's ks8851 driver (drivers/net/ethernet/micrel/ks8851_common.c and
 * ks8851_spi.c) drives it.
 *
 * Source: Micrel "KSZ8851SNL/SNLI Single-Port Ethernet Controller with SPI
 * Interface", Rev. 2.0 (M9999-083109-2.0), and the Microchip reissue
 * DS00002381; section and register names in the comments are the
 * datasheet's ("Register Map", "SPI Interface", "Frame Format for Receive
 * Queue").  docs/ks8851.md lists what is modelled and what is not.
 *
 * SPI (datasheet "SPI Interface"): every command starts when CSN falls.
 * The first two bits of the first byte are the opcode:
 *   00 register read, 01 register write: byte 0 = op | B3..B0 byte enables
 *      (bits 5:2) | A7:A6 (bits 1:0), byte 1 = A5:A2 (bits 7:4) | 4 don't
 *      care; then one data byte per enabled byte, lowest first;
 *   10 RXQ read: one command byte, 4 dummy bytes, then RXQ memory from the
 *      frame data pointer (status word, byte count, frame, CRC);
 *   11 TXQ write: one command byte, then TXQ memory: control word (TXIC,
 *      frame ID), byte count, frame data padded to a 4-byte boundary;
 *      several frames may follow each other.
 * FIFO commands need RXQCR.SDA set ("Start DMA Access").
 *
 * Queues (datasheet "Functional Description"): 6 KB TXQ, 12 KB RXQ, memory
 * in 4-byte units: a frame takes 4 header bytes + its data rounded up to 4.
 * TXMIR is the free TXQ memory the driver budgets with.
 *
 * The interrupt output INTRN is active low on the pin; the board inverts it
 * onto the machine IRQ line `irq`, which is therefore high while
 * (ISR & IER) != 0. */
#include "devices/net/ks8851.h"

#include <glib.h>
#include <string.h>

#include "devices/bus/spi.h"
#include "devices/netdev/netdev.h"
#include "emu/core/clock.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define WIRE_BPS   100000000u /* 100BASE-TX, full duplex after autonegotiation */
#define MAX_SCLK   40000000u  /* "SPI with clock speeds up to 40 MHz" */
#define TXQ_SIZE   6144u      /* "6K bytes for TX FIFO" */
#define RXQ_SIZE   12288u     /* "12K bytes for RX FIFO" */
#define MAX_FRAME  2000u      /* Table 10: receive packet data, maximum 2000 */
#define RXQ_FRAMES 256u       /* more frames than 12 KB of runts can hold */
#define TXQ_FRAMES 128u
#define ALIGN4(x)  (((x) + 3u) & ~3u)

/* Registers (datasheet "Register Map"); all 16 bits wide. */
enum {
    R_CCR = 0x08,
    R_MARL = 0x10,
    R_MARM = 0x12,
    R_MARH = 0x14,
    R_OBCR = 0x20,
    R_EEPCR = 0x22,
    R_MBIR = 0x24,
    R_GRR = 0x26,
    R_WFCR = 0x2a,
    R_TXCR = 0x70,
    R_TXSR = 0x72,
    R_RXCR1 = 0x74,
    R_RXCR2 = 0x76,
    R_TXMIR = 0x78,
    R_RXFHSR = 0x7c,
    R_RXFHBCR = 0x7e,
    R_TXQCR = 0x80,
    R_RXQCR = 0x82,
    R_TXFDPR = 0x84,
    R_RXFDPR = 0x86,
    R_RXDTTR = 0x8c,
    R_RXDBCTR = 0x8e,
    R_IER = 0x90,
    R_ISR = 0x92,
    R_RXFCTR = 0x9c,
    R_TXNTFSR = 0x9e,
    R_MAHTR0 = 0xa0,
    R_CIDER = 0xc0,
    R_CGCR = 0xc6,
    R_IACR = 0xc8,
    R_IADLR = 0xd0,
    R_IAHDR = 0xd2,
    R_PMECR = 0xd4,
    R_P1MBCR = 0xe4,
    R_P1MBSR = 0xe6,
    R_PHY1ILR = 0xe8,
    R_PHY1IHR = 0xea,
    R_P1ANAR = 0xec,
    R_P1ANLPR = 0xee,
    R_P1SCLMD = 0xf4,
    R_P1CR = 0xf6,
    R_P1SR = 0xf8,
};

#define CIDER_VALUE 0x8872u /* family 0x88, chip 0x7, revision field 1 (CIDER) */
/* CCR: SPI bus mode, 32-pin package; bit 9 = EEPROM present (EED_IO strap). */
#define CCR_SPI_32PIN 0x0101u
#define CCR_EEPROM    0x0200u
#define MBIR_DONE     0x1010u /* TX and RX memory BIST finished, no failure */
#define GRR_GSR       (1u << 0)
#define GRR_QMU       (1u << 1)
/* TXCR */
#define TXCR_TXE  (1u << 0)
#define TXCR_CRC  (1u << 1)
#define TXCR_PAD  (1u << 2)
#define TXCR_FTXQ (1u << 4)
/* RXCR1 */
#define RXCR1_RXE    (1u << 0)
#define RXCR1_RXINVF (1u << 1)
#define RXCR1_RXAE   (1u << 4)
#define RXCR1_RXUE   (1u << 5)
#define RXCR1_RXME   (1u << 6)
#define RXCR1_RXBE   (1u << 7)
#define RXCR1_RXMAFM (1u << 8)
#define RXCR1_RXEFE  (1u << 9)
#define RXCR1_RXPAFM (1u << 11)
#define RXCR1_FRXQ   (1u << 15)
/* RXFHSR: receive frame header status */
#define RXFS_VALID (1u << 15)
#define RXFS_BCAST (1u << 7)
#define RXFS_MCAST (1u << 6)
#define RXFS_UCAST (1u << 5)
#define RXFS_ETYPE (1u << 3)
#define RXFS_LONG  (1u << 2)
#define RXFS_RUNT  (1u << 1)
#define RXFS_CRC   (1u << 0)
/* TXQCR */
#define TXQCR_METFE  (1u << 0)
#define TXQCR_TXQMAM (1u << 1)
#define TXQCR_AETFE  (1u << 2)
/* RXQCR */
#define RXQCR_RRXEF  (1u << 0)
#define RXQCR_SDA    (1u << 3)
#define RXQCR_ADRFE  (1u << 4)
#define RXQCR_FCTE   (1u << 5)
#define RXQCR_DBCTE  (1u << 6)
#define RXQCR_DTTE   (1u << 7)
#define RXQCR_FCTS   (1u << 10)
#define RXQCR_DBCTS  (1u << 11)
#define RXQCR_DTTS   (1u << 12)
#define RXQCR_STATUS (RXQCR_FCTS | RXQCR_DBCTS | RXQCR_DTTS)
/* TXFDPR / RXFDPR */
#define FDPR_AUTOINC (1u << 14)
#define FDPR_PTR     0x7ffu
/* ISR / IER */
#define IRQ_LCI    (1u << 15)
#define IRQ_TXI    (1u << 14)
#define IRQ_RXI    (1u << 13)
#define IRQ_RXOI   (1u << 11)
#define IRQ_TXPSI  (1u << 9)
#define IRQ_RXPSI  (1u << 8)
#define IRQ_TXSAI  (1u << 6)
#define IRQ_SPIBEI (1u << 1)
#define IRQ_VALID  0xeb7fu
/* TX control word (datasheet "Frame Format for Transmit Queue") */
#define TXFR_TXIC 0x8000u
#define TXFR_FID  0x003fu
/* PHY (P1MBCR = MII BMCR, P1MBSR = BMSR) */
#define BMCR_RESET    (1u << 15)
#define BMCR_PDOWN    (1u << 11)
#define BMCR_RESTART  (1u << 9)
#define BMSR_BASE     0x7809u /* 100FD/HD, 10FD/HD, AN ability, extended regs */
#define BMSR_LINK     (1u << 2)
#define BMSR_AN_DONE  (1u << 5)
#define P1SR_LINKED   0x067fu /* 100 Mb/s FD, AN done, link good, partner caps */
#define ANLPR_PARTNER 0x45e1u

typedef enum {
    CMD_NONE,    /* selected, command byte not yet in */
    CMD_REG_HDR, /* register command, second command byte expected */
    CMD_REG_READ,
    CMD_REG_WRITE,
    CMD_RXQ,
    CMD_TXQ,
    CMD_DONE, /* extra bytes after a complete register command */
} cmd_state;

typedef struct rx_frame {
    uint32_t off; /* in rxq[] (ring), where its 4-byte header starts */
    uint32_t mem; /* 4 + ALIGN4(count) */
    uint16_t status, count;
} rx_frame;

typedef struct tx_frame {
    uint16_t ctrl, count;
    uint32_t mem;
    uint8_t data[MAX_FRAME + 64 + NM_ETH_FCS_BYTES];
} tx_frame;

typedef struct ks8851 {
    nm_machine *m;
    char *name;
    nm_spi_bus *spi;
    unsigned cs;
    unsigned irq;
    nm_net_endpoint ep;
    nm_net_link *link;
    uint8_t mac[6];
    bool eeprom;
    bool irq_level;

    uint16_t reg[128];

    /* The SPI command in progress. */
    bool selected;
    cmd_state cmd;
    uint8_t cmd0;
    uint8_t addr; /* dword address of a register command */
    unsigned be, data_bytes, data_done;
    uint8_t data[4];
    unsigned rxq_dummy;

    /* RXQ: frames in arrival order over a 12 KB ring. */
    uint8_t rxq[RXQ_SIZE];
    rx_frame rxf[RXQ_FRAMES];
    unsigned rx_head, rx_count;
    uint32_t rxq_used;
    uint32_t rx_ptr; /* RXFDPR pointer into the head frame */
    nm_timer rx_timer;

    /* TXQ: frames written, enqueued, transmitting. */
    tx_frame *txf; /* TXQ_FRAMES ring */
    unsigned tx_head, tx_count, tx_enqueued;
    bool tx_busy;
    uint32_t txq_used;
    tx_frame *tx_writing; /* the frame the host is writing, NULL between frames */
    tx_frame tx_stage;
    uint32_t tx_wpos, tx_wneed; /* bytes of the frame being written; its length */
    bool tx_wdrop;
    nm_timer tx_timer;

    nm_ks8851_stats st;
} ks8851;

static bool link_up(const ks8851 *s)
{
    return s->link && !(s->reg[R_P1MBCR / 2] & BMCR_PDOWN);
}

/* ---- interrupts (ISR/IER, "Interrupt Status Register") ---- */

static void update_irq(ks8851 *s)
{
    bool level = (s->reg[R_ISR / 2] & s->reg[R_IER / 2]) != 0;
    if (level == s->irq_level) return;
    s->irq_level = level;
    if (level) s->st.interrupts++;
    nm_irq_set(&s->m->irq, s->irq, level);
}

static void raise_isr(ks8851 *s, uint16_t bits)
{
    s->reg[R_ISR / 2] |= bits;
    update_irq(s);
}

/* ---- PHY ---- */

static void phy_status(ks8851 *s)
{
    bool up = link_up(s);
    s->reg[R_P1MBSR / 2] = (uint16_t)(BMSR_BASE | (up ? BMSR_LINK | BMSR_AN_DONE : 0));
    s->reg[R_P1SR / 2] = up ? P1SR_LINKED : 0;
    s->reg[R_P1ANLPR / 2] = up ? ANLPR_PARTNER : 0;
}

/* ---- QMU: queues ---- */

static uint32_t txq_free(const ks8851 *s)
{
    return TXQ_SIZE - s->txq_used;
}

static void update_txmir(ks8851 *s)
{
    s->reg[R_TXMIR / 2] = (uint16_t)(txq_free(s) & 0x1fff);
}

static void rx_release_head(ks8851 *s)
{
    if (!s->rx_count) return;
    s->rxq_used -= s->rxf[s->rx_head].mem;
    s->rx_head = (s->rx_head + 1) % RXQ_FRAMES;
    s->rx_count--;
    s->rx_ptr = 0;
}

static void qmu_flush_rx(ks8851 *s)
{
    s->rx_head = s->rx_count = 0;
    s->rxq_used = 0;
    s->rx_ptr = 0;
    nm_timer_cancel(&s->m->clock, &s->rx_timer);
}

static void qmu_flush_tx(ks8851 *s)
{
    s->tx_head = s->tx_count = s->tx_enqueued = 0;
    s->tx_busy = false;
    s->txq_used = 0;
    s->tx_writing = NULL;
    s->tx_wpos = 0;
    s->tx_wdrop = false;
    nm_timer_cancel(&s->m->clock, &s->tx_timer);
    s->reg[R_TXQCR / 2] &= (uint16_t)~TXQCR_METFE;
    update_txmir(s);
}

/* Power-on values; MAR is loaded from the EEPROM when there is one
 * ("EEPROM Interface": the QMU MAC address registers). */
static void chip_reset(ks8851 *s)
{
    memset(s->reg, 0, sizeof s->reg);
    s->reg[R_CCR / 2] = (uint16_t)(CCR_SPI_32PIN | (s->eeprom ? CCR_EEPROM : 0));
    if (s->eeprom) {
        s->reg[R_MARH / 2] = (uint16_t)(s->mac[0] << 8 | s->mac[1]);
        s->reg[R_MARM / 2] = (uint16_t)(s->mac[2] << 8 | s->mac[3]);
        s->reg[R_MARL / 2] = (uint16_t)(s->mac[4] << 8 | s->mac[5]);
    }
    s->reg[R_MBIR / 2] = MBIR_DONE;
    s->reg[R_CIDER / 2] = CIDER_VALUE;
    s->reg[R_P1MBCR / 2] = 0x3100; /* autonegotiation on, 100 Mb/s, full duplex */
    s->reg[R_PHY1ILR / 2] = 0x1430;
    s->reg[R_PHY1IHR / 2] = 0x0022; /* PHY ID 0x0022:0x1430, halves swapped in HW */
    s->reg[R_P1ANAR / 2] = 0x05e1;
    s->reg[R_P1CR / 2] = 0x00ff;
    qmu_flush_rx(s);
    qmu_flush_tx(s);
    phy_status(s);
    s->cmd = CMD_NONE;
    update_irq(s);
}

/* ---- receive ---- */

/* Linux's ether_crc(): the CRC-32 of the address, bit-reversed; its top six
 * bits index the 64-bit multicast hash table MAHTR0..3. */
static unsigned hash_index(const uint8_t *da)
{
    uint32_t crc = 0xffffffffu;
    for (int i = 0; i < 6; i++) {
        crc ^= da[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (crc & 1 ? 0xedb88320u : 0);
    }
    uint32_t rev = 0;
    for (int b = 0; b < 32; b++)
        rev |= ((crc >> b) & 1u) << (31 - b);
    return rev >> 26;
}

/* Address filtering (datasheet "Address Filtering Scheme", RXCR1). */
static bool rx_accept(ks8851 *s, const uint8_t *da)
{
    uint16_t c = s->reg[R_RXCR1 / 2];
    const uint16_t promisc = RXCR1_RXAE | RXCR1_RXINVF;
    if ((c & (promisc | RXCR1_RXPAFM | RXCR1_RXMAFM)) == promisc) return true;
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (!memcmp(da, bcast, 6)) return (c & RXCR1_RXBE) != 0;
    if (da[0] & 1) {
        if (!(c & RXCR1_RXME)) return false;
        if ((c & RXCR1_RXAE) && (c & RXCR1_RXMAFM)) return true; /* all multicast */
        unsigned h = hash_index(da);
        return (s->reg[R_MAHTR0 / 2 + (h >> 4)] >> (h & 15)) & 1;
    }
    if (!(c & RXCR1_RXUE)) return false;
    uint8_t mac[6] = {
        (uint8_t)(s->reg[R_MARH / 2] >> 8), (uint8_t)s->reg[R_MARH / 2],
        (uint8_t)(s->reg[R_MARM / 2] >> 8), (uint8_t)s->reg[R_MARM / 2],
        (uint8_t)(s->reg[R_MARL / 2] >> 8), (uint8_t)s->reg[R_MARL / 2],
    };
    bool match = !memcmp(da, mac, 6);
    if (!(c & RXCR1_RXPAFM)) return (c & RXCR1_RXAE) ? true : match;
    return match != ((c & RXCR1_RXINVF) != 0);
}

/* RXI, or a threshold timer ("RXQ Command Register": frame count, byte count
 * and duration thresholds; none enabled: an interrupt per frame). */
static void rx_interrupt_check(ks8851 *s)
{
    uint16_t q = s->reg[R_RXQCR / 2];
    uint16_t hit = 0;
    if (!(q & (RXQCR_FCTE | RXQCR_DBCTE | RXQCR_DTTE))) {
        raise_isr(s, IRQ_RXI);
        return;
    }
    if ((q & RXQCR_FCTE) && s->rx_count >= (s->reg[R_RXFCTR / 2] & 0xffu)) hit |= RXQCR_FCTS;
    if ((q & RXQCR_DBCTE) && s->rxq_used >= s->reg[R_RXDBCTR / 2]) hit |= RXQCR_DBCTS;
    if (hit) {
        s->reg[R_RXQCR / 2] |= hit;
        nm_timer_cancel(&s->m->clock, &s->rx_timer);
        raise_isr(s, IRQ_RXI);
        return;
    }
    if ((q & RXQCR_DTTE) && !nm_timer_pending(&s->rx_timer) && !(s->reg[R_ISR / 2] & IRQ_RXI))
        nm_timer_after_ns(&s->m->clock, &s->rx_timer, (uint64_t)s->reg[R_RXDTTR / 2] * 1000u);
}

static void rx_timer_fired(void *opaque, uint64_t late)
{
    (void)late;
    ks8851 *s = opaque;
    if (!s->rx_count) return;
    s->reg[R_RXQCR / 2] |= RXQCR_DTTS;
    raise_isr(s, IRQ_RXI);
}

static void endpoint_receive(void *opaque, const uint8_t *frame, size_t len)
{
    ks8851 *s = opaque;
    if (!(s->reg[R_RXCR1 / 2] & RXCR1_RXE) || (s->reg[R_GRR / 2] & (GRR_GSR | GRR_QMU)) ||
        !link_up(s)) {
        s->st.rx_disabled_drops++;
        return;
    }
    if (len < 14) {
        s->st.rx_errors++;
        return;
    }
    uint16_t status = RXFS_VALID;
    if (!nm_eth_fcs_ok(frame, len)) status |= RXFS_CRC;
    if (len < NM_ETH_MIN_FRAME) status |= RXFS_RUNT;
    if (len > MAX_FRAME) status |= RXFS_LONG;
    if ((status & (RXFS_CRC | RXFS_RUNT | RXFS_LONG)) &&
        (!(s->reg[R_RXCR1 / 2] & RXCR1_RXEFE) || (status & RXFS_LONG))) {
        s->st.rx_errors++;
        return;
    }
    if (!rx_accept(s, frame)) {
        s->st.rx_filtered++;
        return;
    }
    if (!memcmp(frame, "\xff\xff\xff\xff\xff\xff", 6))
        status |= RXFS_BCAST;
    else if (frame[0] & 1)
        status |= RXFS_MCAST;
    else
        status |= RXFS_UCAST;
    if (((unsigned)frame[12] << 8 | frame[13]) >= 0x0600) status |= RXFS_ETYPE;

    uint32_t mem = 4 + ALIGN4((uint32_t)len);
    if (mem > RXQ_SIZE - s->rxq_used || s->rx_count == RXQ_FRAMES) {
        s->st.rx_overruns++;
        nm_debug(KS8851, "%s: RXQ full (%u bytes used): frame of %zu bytes dropped", s->name,
                 s->rxq_used, len);
        raise_isr(s, IRQ_RXOI);
        return;
    }
    unsigned idx = (s->rx_head + s->rx_count) % RXQ_FRAMES;
    uint32_t off = s->rx_count ? (s->rxf[(idx + RXQ_FRAMES - 1) % RXQ_FRAMES].off +
                                  s->rxf[(idx + RXQ_FRAMES - 1) % RXQ_FRAMES].mem) %
                                     RXQ_SIZE
                               : 0;
    if (!s->rx_count) s->rx_ptr = 0;
    rx_frame *f = &s->rxf[idx];
    f->off = off;
    f->mem = mem;
    f->status = status;
    f->count = (uint16_t)(len & 0xfff);
    uint8_t hdr[4] = {(uint8_t)status, (uint8_t)(status >> 8), (uint8_t)len,
                      (uint8_t)((len >> 8) & 0x0f)};
    for (uint32_t i = 0; i < mem; i++) {
        uint8_t v = i < 4 ? hdr[i] : (i - 4 < len ? frame[i - 4] : 0);
        s->rxq[(off + i) % RXQ_SIZE] = v;
    }
    s->rx_count++;
    s->rxq_used += mem;
    s->st.rx_frames++;
    s->st.rx_bytes += len;
    rx_interrupt_check(s);
}

/* The byte at the RXQ frame data pointer ("RXQ Frame Data Pointer"). */
static uint8_t rxq_read_byte(ks8851 *s)
{
    if (!s->rx_count) {
        s->st.fifo_misuse++;
        nm_debug(KS8851, "%s: RXQ read with no frame in the queue", s->name);
        return 0;
    }
    rx_frame *f = &s->rxf[s->rx_head];
    uint8_t v = 0;
    if (s->rx_ptr < f->mem) {
        v = s->rxq[(f->off + s->rx_ptr) % RXQ_SIZE];
    } else {
        s->st.fifo_misuse++; /* past the frame: the chip's memory beyond is not ours */
        nm_debug(KS8851, "%s: RXQ read past the frame (pointer %u, frame %u bytes)", s->name,
                 s->rx_ptr, f->mem);
    }
    if (s->reg[R_RXFDPR / 2] & FDPR_AUTOINC) s->rx_ptr = (s->rx_ptr + 1) & FDPR_PTR;
    /* Auto-dequeue (RXQCR.ADRFE): the frame is released once read to its
     * end, and the pointer moves on to the next frame's header. */
    if ((s->reg[R_RXQCR / 2] & RXQCR_ADRFE) && s->rx_ptr >= f->mem) rx_release_head(s);
    return v;
}

/* ---- transmit ---- */

static void tx_start(ks8851 *s);

static void tx_done(void *opaque, uint64_t late)
{
    (void)late;
    ks8851 *s = opaque;
    if (!s->tx_busy || !s->tx_count) return;
    tx_frame *f = &s->txf[s->tx_head];
    s->tx_busy = false;
    s->txq_used -= f->mem;
    s->tx_head = (s->tx_head + 1) % TXQ_FRAMES;
    s->tx_count--;
    s->tx_enqueued--;
    update_txmir(s);
    s->reg[R_TXSR / 2] = f->ctrl & TXFR_FID; /* no late or max collisions in full duplex */
    uint16_t isr = (f->ctrl & TXFR_TXIC) ? IRQ_TXI : 0;
    if ((s->reg[R_TXQCR / 2] & TXQCR_TXQMAM) && txq_free(s) >= s->reg[R_TXNTFSR / 2]) {
        s->reg[R_TXQCR / 2] &= (uint16_t)~TXQCR_TXQMAM;
        isr |= IRQ_TXSAI;
    }
    if (!s->tx_enqueued) s->reg[R_TXQCR / 2] &= (uint16_t)~TXQCR_METFE;
    if (isr) raise_isr(s, isr);
    tx_start(s);
}

/* Puts the oldest enqueued frame on the wire ("Transmit Queue"). */
static void tx_start(ks8851 *s)
{
    if (s->tx_busy || !s->tx_enqueued || !(s->reg[R_TXCR / 2] & TXCR_TXE) ||
        (s->reg[R_GRR / 2] & (GRR_GSR | GRR_QMU)))
        return;
    tx_frame *f = &s->txf[s->tx_head];
    size_t len = f->count;
    uint8_t *p = f->data;
    if ((s->reg[R_TXCR / 2] & TXCR_PAD) && len < NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES) {
        memset(p + len, 0, NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES - len);
        len = NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES;
    }
    if (s->reg[R_TXCR / 2] & TXCR_CRC) {
        nm_eth_put_fcs(p, len);
        len += NM_ETH_FCS_BYTES;
    }
    s->tx_busy = true;
    uint64_t now = nm_clock_now_ns(&s->m->clock), done;
    if (link_up(s)) {
        done = nm_net_send(&s->ep, p, len);
        s->st.tx_frames++;
        s->st.tx_bytes += len;
    } else {
        s->st.tx_dropped++; /* no carrier: the frame leaves into nothing */
        done = now + nm_net_wire_ns(WIRE_BPS, len);
    }
    if (done < now) done = now;
    nm_timer_at_ns(&s->m->clock, &s->tx_timer, done);
}

static void tx_enqueue_all(ks8851 *s)
{
    s->tx_enqueued = s->tx_count;
    if (!s->tx_enqueued) s->reg[R_TXQCR / 2] &= (uint16_t)~TXQCR_METFE;
    tx_start(s);
}

/* One byte of a TXQ write: header (control word, byte count), then data
 * padded to 4 bytes ("Frame Format for Transmit Queue"). */
static void txq_write_byte(ks8851 *s, uint8_t v)
{
    s->st.spi_txq_bytes++;
    tx_frame *st = &s->tx_stage;
    uint32_t pos = s->tx_wpos++;
    if (pos < 4) {
        if (pos == 0) {
            st->ctrl = v;
            s->tx_wdrop = false;
        } else if (pos == 1) {
            st->ctrl |= (uint16_t)(v << 8);
        } else if (pos == 2) {
            st->count = v;
        } else {
            st->count = (uint16_t)((st->count | v << 8) & 0x7ff);
            st->mem = 4 + ALIGN4(st->count);
            s->tx_wneed = st->mem;
            const char *why = NULL;
            if (!st->count || st->count > MAX_FRAME)
                why = "byte count out of range";
            else if (st->mem > txq_free(s) || s->tx_count == TXQ_FRAMES)
                why = "does not fit in the free TXQ memory";
            if (why) {
                s->tx_wdrop = true;
                s->st.tx_dropped++;
                nm_dev_warn(KS8851, s, "%s: TXQ frame of %u bytes dropped: %s (%u bytes free)",
                            s->name, st->count, why, txq_free(s));
                raise_isr(s, IRQ_SPIBEI);
            }
        }
    } else if (pos - 4 < st->count) {
        st->data[pos - 4] = v;
    }
    if (pos + 1 < 4 || pos + 1 < s->tx_wneed) return;
    /* The frame (and its padding) is in: it occupies TXQ memory. */
    s->tx_wpos = 0;
    s->tx_wneed = 0;
    if (s->tx_wdrop) return;
    tx_frame *f = &s->txf[(s->tx_head + s->tx_count) % TXQ_FRAMES];
    f->ctrl = st->ctrl;
    f->count = st->count;
    f->mem = st->mem;
    memcpy(f->data, st->data, st->count);
    s->tx_count++;
    s->txq_used += f->mem;
    update_txmir(s);
    if (s->reg[R_TXQCR / 2] & TXQCR_AETFE) tx_enqueue_all(s);
}

/* ---- registers ---- */

static uint16_t reg_read16(ks8851 *s, uint8_t r)
{
    switch (r) {
    case R_RXFHSR: return s->rx_count ? s->rxf[s->rx_head].status : 0;
    case R_RXFHBCR: return s->rx_count ? s->rxf[s->rx_head].count : 0;
    case R_RXFCTR: {
        unsigned n = s->rx_count > 255 ? 255 : s->rx_count;
        return (uint16_t)(n << 8 | (s->reg[R_RXFCTR / 2] & 0xff));
    }
    case R_RXFDPR: return (uint16_t)((s->reg[R_RXFDPR / 2] & ~FDPR_PTR) | (s->rx_ptr & FDPR_PTR));
    case R_TXFDPR: return (uint16_t)((s->reg[R_TXFDPR / 2] & ~FDPR_PTR) | (s->tx_wpos & FDPR_PTR));
    default: return s->reg[r / 2];
    }
}

static void reg_write16(ks8851 *s, uint8_t r, uint16_t v, uint16_t mask)
{
    uint16_t old = s->reg[r / 2];
    uint16_t nv = (uint16_t)((old & ~mask) | (v & mask));
    switch (r) {
    case R_CCR:
    case R_MBIR:
    case R_TXSR:
    case R_TXMIR:
    case R_RXFHSR:
    case R_RXFHBCR:
    case R_CIDER:
    case R_P1MBSR:
    case R_PHY1ILR:
    case R_PHY1IHR:
    case R_P1ANLPR:
    case R_P1SR:
    case R_IADLR:
    case R_IAHDR:
        nm_debug(KS8851, "%s: write 0x%04x to read-only register 0x%02x ignored", s->name, v, r);
        return;
    case R_ISR: /* write 1 to clear */
        s->reg[r / 2] = (uint16_t)(old & ~(v & mask));
        update_irq(s);
        return;
    case R_IER:
        s->reg[r / 2] = nv & IRQ_VALID;
        update_irq(s);
        return;
    case R_GRR:
        s->reg[r / 2] = nv & (GRR_GSR | GRR_QMU);
        if ((nv & GRR_GSR) && !(old & GRR_GSR)) {
            s->st.soft_resets++;
            chip_reset(s);               /* every register back to its default ... */
            s->reg[R_GRR / 2] = GRR_GSR; /* ... while the reset bit stays set */
        }
        if ((nv & GRR_QMU) && !(old & GRR_QMU)) {
            s->st.soft_resets++;
            qmu_flush_rx(s);
            qmu_flush_tx(s);
        }
        return;
    case R_TXCR:
        if (nv & TXCR_FTXQ) qmu_flush_tx(s); /* flush the TXQ (self-clearing) */
        s->reg[r / 2] = nv & (uint16_t)~TXCR_FTXQ;
        if ((old & TXCR_TXE) && !(nv & TXCR_TXE)) raise_isr(s, IRQ_TXPSI);
        tx_start(s);
        return;
    case R_RXCR1:
        if (nv & RXCR1_FRXQ) qmu_flush_rx(s);
        s->reg[r / 2] = nv & (uint16_t)~RXCR1_FRXQ;
        /* The receive process stops: RXPSI (the driver reprograms the
         * filters from that interrupt). */
        if ((old & RXCR1_RXE) && !(nv & RXCR1_RXE)) raise_isr(s, IRQ_RXPSI);
        return;
    case R_RXFCTR: /* the frame count byte is read-only */
        s->reg[r / 2] = (uint16_t)(nv & 0xff);
        return;
    case R_TXQCR:
        s->reg[r / 2] = nv & (TXQCR_METFE | TXQCR_TXQMAM | TXQCR_AETFE);
        if (nv & (TXQCR_METFE | TXQCR_AETFE)) tx_enqueue_all(s);
        if ((nv & TXQCR_TXQMAM) && txq_free(s) >= s->reg[R_TXNTFSR / 2] && !s->tx_count) {
            s->reg[r / 2] &= (uint16_t)~TXQCR_TXQMAM;
            raise_isr(s, IRQ_TXSAI);
        }
        return;
    case R_RXQCR:
        if ((nv & RXQCR_RRXEF) && (mask & RXQCR_RRXEF)) rx_release_head(s);
        if ((old & RXQCR_SDA) && !(nv & RXQCR_SDA) && s->tx_wpos) {
            s->st.fifo_misuse++; /* DMA access ended in the middle of a frame */
            nm_debug(KS8851, "%s: SDA cleared with a TXQ frame half written: dropped", s->name);
            s->tx_wpos = 0;
            s->tx_wneed = 0;
        }
        /* The threshold status bits are read-only; RRXEF self-clears. */
        s->reg[r / 2] = (uint16_t)((nv & ~(RXQCR_STATUS | RXQCR_RRXEF)) | (old & RXQCR_STATUS));
        return;
    case R_RXFDPR:
        s->reg[r / 2] = nv & (FDPR_AUTOINC | FDPR_PTR);
        s->rx_ptr = nv & FDPR_PTR;
        return;
    case R_TXFDPR: s->reg[r / 2] = nv & (FDPR_AUTOINC | FDPR_PTR); return;
    case R_P1MBCR: {
        bool was = link_up(s);
        s->reg[r / 2] = nv & (uint16_t) ~(BMCR_RESET | BMCR_RESTART); /* self-clearing */
        if (nv & BMCR_RESET) s->reg[r / 2] = 0x3100;
        phy_status(s);
        if (was != link_up(s)) raise_isr(s, IRQ_LCI);
        return;
    }
    default: s->reg[r / 2] = nv; return;
    }
}

static void isr_ack_status(ks8851 *s)
{
    /* Acknowledging RXI clears which threshold fired. */
    if (!(s->reg[R_ISR / 2] & IRQ_RXI)) s->reg[R_RXQCR / 2] &= (uint16_t)~RXQCR_STATUS;
}

/* ---- the SPI slave ---- */

static void spi_bad(ks8851 *s, const char *why)
{
    s->st.spi_bad_commands++;
    nm_debug(KS8851, "%s: SPI: %s", s->name, why);
    raise_isr(s, IRQ_SPIBEI);
}

static void spi_select(void *opaque, bool selected)
{
    ks8851 *s = opaque;
    if (selected) {
        s->selected = true;
        s->cmd = CMD_NONE;
        s->st.spi_transactions++;
        return;
    }
    s->selected = false;
    switch (s->cmd) {
    case CMD_REG_HDR: spi_bad(s, "chip select released inside a register command"); break;
    case CMD_REG_WRITE:
        spi_bad(s, "chip select released before all enabled bytes were written");
        break;
    default: break;
    }
    s->cmd = CMD_NONE;
}

static void reg_command_ready(ks8851 *s)
{
    if (!s->be) {
        spi_bad(s, "register command with no byte enabled");
        s->cmd = CMD_DONE;
        return;
    }
    s->data_bytes = (unsigned)__builtin_popcount(s->be);
    s->data_done = 0;
    if ((s->cmd0 >> 6) == 0) {
        s->st.spi_reg_reads++;
        uint16_t lo = reg_read16(s, s->addr), hi = reg_read16(s, (uint8_t)(s->addr + 2));
        uint8_t bytes[4] = {(uint8_t)lo, (uint8_t)(lo >> 8), (uint8_t)hi, (uint8_t)(hi >> 8)};
        unsigned n = 0;
        for (unsigned i = 0; i < 4; i++)
            if (s->be >> i & 1) s->data[n++] = bytes[i];
        s->cmd = CMD_REG_READ;
    } else {
        s->cmd = CMD_REG_WRITE;
    }
}

static void reg_write_commit(ks8851 *s)
{
    s->st.spi_reg_writes++;
    uint8_t bytes[4] = {0};
    unsigned n = 0;
    for (unsigned i = 0; i < 4; i++)
        if (s->be >> i & 1) bytes[i] = s->data[n++];
    for (unsigned half = 0; half < 2; half++) {
        unsigned be = (s->be >> (2 * half)) & 3;
        if (!be) continue;
        uint16_t v = (uint16_t)(bytes[2 * half] | bytes[2 * half + 1] << 8);
        uint16_t mask = (uint16_t)((be & 1 ? 0x00ff : 0) | (be & 2 ? 0xff00 : 0));
        reg_write16(s, (uint8_t)(s->addr + 2 * half), v, mask);
    }
    isr_ack_status(s);
}

static uint8_t spi_exchange(void *opaque, uint8_t mosi)
{
    ks8851 *s = opaque;
    if (!s->selected) return 0xff;
    switch (s->cmd) {
    case CMD_NONE:
        s->cmd0 = mosi;
        switch (mosi >> 6) {
        case 0:
        case 1:
            s->be = (mosi >> 2) & 0xf;
            s->cmd = CMD_REG_HDR;
            break;
        case 2:
            if (!(s->reg[R_RXQCR / 2] & RXQCR_SDA)) {
                s->st.fifo_misuse++;
                spi_bad(s, "RXQ read without RXQCR.SDA");
                s->cmd = CMD_DONE;
                break;
            }
            s->rxq_dummy = 4; /* the first 4 bytes read are dummy */
            s->cmd = CMD_RXQ;
            break;
        default:
            if (!(s->reg[R_RXQCR / 2] & RXQCR_SDA)) {
                s->st.fifo_misuse++;
                spi_bad(s, "TXQ write without RXQCR.SDA");
                s->cmd = CMD_DONE;
                break;
            }
            s->cmd = CMD_TXQ;
            break;
        }
        return 0;
    case CMD_REG_HDR:
        s->addr = (uint8_t)(((s->cmd0 & 3) << 6) | ((mosi >> 4) << 2));
        reg_command_ready(s);
        return 0;
    case CMD_REG_READ: {
        if (s->data_done >= s->data_bytes) {
            s->st.spi_bad_commands++;
            return 0;
        }
        return s->data[s->data_done++];
    }
    case CMD_REG_WRITE:
        s->data[s->data_done++] = mosi;
        if (s->data_done == s->data_bytes) {
            reg_write_commit(s);
            s->cmd = CMD_DONE;
        }
        return 0;
    case CMD_RXQ:
        if (s->rxq_dummy) {
            s->rxq_dummy--;
            return 0;
        }
        s->st.spi_rxq_bytes++;
        return rxq_read_byte(s);
    case CMD_TXQ: txq_write_byte(s, mosi); return 0;
    case CMD_DONE:
    default:
        s->st.spi_bad_commands++; /* clocks past the end of a command: ignored */
        return 0;
    }
}

static const nm_spi_device_ops ks_spi_ops = {spi_select, spi_exchange};

/* ---- the device class ---- */

static void ks_destroy(void *opaque);

static void *ks_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    const uint8_t defmac[6] = {0x52, 0x54, 0x00, 0x88, 0x51, 0x01};
    uint32_t cs = 0, irq = 7, eeprom = 1;
    const char *origin = cfg ? cfg->origin : "ks8851";
    if (cfg && (!nm_devcfg_u32(cfg, "cs", 0, 0, NM_SPI_MAX_CS - 1, &cs, err) ||
                !nm_devcfg_u32(cfg, "irq", 7, 1, 15, &irq, err) ||
                !nm_devcfg_u32(cfg, "eeprom", 1, 0, 1, &eeprom, err)))
        return NULL;
    const char *bus_name = cfg ? nm_devcfg_get(cfg, "spi") : NULL;
    nm_spi_bus *bus = nm_spi_bus_find(m, bus_name);
    if (!bus) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    bus_name ? "%s: spi: no SPI controller called '%s' (configure it first)"
                             : "%s: spi: the machine has no SPI controller (add one first, e.g. "
                               "model=xilinx-spi)",
                    origin, bus_name);
        return NULL;
    }
    if (!nm_irq_claim(&m->irq, irq, origin, cfg && cfg->name ? cfg->name : "ks8851", err))
        return NULL;
    ks8851 *s = g_new0(ks8851, 1);
    s->m = m;
    s->name = g_strdup(cfg && cfg->name ? cfg->name : "ks8851");
    s->irq = irq;
    /* INTRN stays asserted until ISR is acknowledged, and Linux requests it
     * IRQF_TRIGGER_LOW: the board makes the line level-triggered (ELCR). */
    nm_irq_declare_level(&m->irq, irq);
    s->eeprom = eeprom != 0;
    s->txf = g_new0(tx_frame, TXQ_FRAMES);
    if (cfg && !nm_devcfg_mac(cfg, "mac", defmac, s->mac, err)) goto fail;
    if (!cfg) memcpy(s->mac, defmac, 6);
    nm_timer_init(&s->rx_timer, rx_timer_fired, s, "ks8851-rx");
    nm_timer_init(&s->tx_timer, tx_done, s, "ks8851-tx");
    if (!nm_spi_bus_attach(bus, cs, s->name, MAX_SCLK, &ks_spi_ops, s, err)) goto fail;
    s->spi = bus;
    s->cs = cs;
    s->ep.name = s->name;
    s->ep.opaque = s;
    s->ep.receive = endpoint_receive;
    const char *net = cfg ? nm_devcfg_get(cfg, "net") : NULL;
    const char *capture = cfg ? nm_devcfg_get(cfg, "capture") : NULL;
    if (net) {
        s->link = nm_net_attach(m, &s->ep, net, WIRE_BPS, capture, origin, err);
        if (!s->link) goto fail;
    } else if (capture) {
        nm_dev_warn(KS8851, s,
                    "%s: capture= without net=: the cable is unplugged, nothing to capture",
                    s->name);
    }
    chip_reset(s);
    return s;
fail:
    ks_destroy(s);
    return NULL;
}

static void ks_destroy(void *opaque)
{
    ks8851 *s = opaque;
    nm_timer_cancel(&s->m->clock, &s->rx_timer);
    nm_timer_cancel(&s->m->clock, &s->tx_timer);
    if (s->spi) nm_spi_bus_detach(s->spi, s->cs);
    if (s->irq_level) nm_irq_set(&s->m->irq, s->irq, false);
    g_free(s->txf);
    g_free(s->name);
    g_free(s);
}

static void ks_reset(void *opaque)
{
    chip_reset(opaque);
}

static void ks_report(void *opaque, nm_report *r)
{
    ks8851 *s = opaque;
#define NM_KS8851_REPORT(name) nm_report_u64(r, #name, s->st.name);
    NM_KS8851_COUNTERS(NM_KS8851_REPORT)
#undef NM_KS8851_REPORT
    nm_report_u64(r, "rxq_bytes_used", s->rxq_used);
    nm_report_u64(r, "txq_bytes_used", s->txq_used);
}

static void ks_frames(const void *opaque, uint64_t *tx, uint64_t *rx)
{
    const ks8851 *s = opaque;
    *tx = s->st.tx_frames;
    *rx = s->st.rx_frames;
}

const nm_ks8851_stats *nm_ks8851_get_stats(const void *dev)
{
    return &((const ks8851 *)dev)->st;
}

bool nm_ks8851_irq_asserted(const void *dev)
{
    return ((const ks8851 *)dev)->irq_level;
}

static void ks_tx_frame_snapshot(nm_snap *s, tx_frame *f)
{
    nm_snap_u16(s, "ctrl", &f->ctrl);
    nm_snap_u16(s, "count", &f->count);
    nm_snap_u32(s, "mem", &f->mem);
    nm_snap_bytes(s, "data", f->data, sizeof f->data);
}

static void ks_snapshot(void *opaque, nm_snap *s)
{
    ks8851 *k = opaque;
    if (nm_snap_saving(s) && k->tx_writing) {
        nm_snap_fail(s, "%s: a frame write in progress cannot be saved", k->name);
        return;
    }
    nm_snap_bool(s, "irq_level", &k->irq_level);
    nm_snap_u16s(s, "reg", k->reg, 128);
    nm_snap_bool(s, "selected", &k->selected);
    uint32_t cmd = k->cmd;
    nm_snap_u32(s, "cmd", &cmd);
    if (nm_snap_check(s, cmd <= CMD_DONE, "cmd")) k->cmd = (cmd_state)cmd;
    nm_snap_u8(s, "cmd0", &k->cmd0);
    nm_snap_u8(s, "addr", &k->addr);
    nm_snap_uint(s, "be", &k->be);
    nm_snap_uint(s, "data_bytes", &k->data_bytes);
    nm_snap_uint(s, "data_done", &k->data_done);
    nm_snap_check(s, k->data_bytes <= 4 && k->data_done <= 4, "data_done");
    nm_snap_bytes(s, "data", k->data, 4);
    nm_snap_uint(s, "rxq_dummy", &k->rxq_dummy);
    nm_snap_bytes(s, "rxq", k->rxq, RXQ_SIZE);
    for (unsigned j = 0; j < RXQ_FRAMES; j++) {
        rx_frame *f = &k->rxf[j];
        nm_snap_push(s, "rxf%u", j);
        nm_snap_u32(s, "off", &f->off);
        nm_snap_u32(s, "mem", &f->mem);
        nm_snap_u16(s, "status", &f->status);
        nm_snap_u16(s, "count", &f->count);
        nm_snap_check(s, f->off < RXQ_SIZE && f->mem <= RXQ_SIZE, "off");
        nm_snap_pop(s);
    }
    nm_snap_uint(s, "rx_head", &k->rx_head);
    nm_snap_uint(s, "rx_count", &k->rx_count);
    nm_snap_u32(s, "rxq_used", &k->rxq_used);
    nm_snap_u32(s, "rx_ptr", &k->rx_ptr);
    nm_snap_check(s,
                  k->rx_head < RXQ_FRAMES && k->rx_count <= RXQ_FRAMES && k->rxq_used <= RXQ_SIZE,
                  "rx_head");
    nm_snap_timer(s, "rx_timer", &k->rx_timer);
    nm_snap_uint(s, "tx_head", &k->tx_head);
    nm_snap_uint(s, "tx_count", &k->tx_count);
    nm_snap_uint(s, "tx_enqueued", &k->tx_enqueued);
    if (!nm_snap_check(s,
                       k->tx_head < TXQ_FRAMES && k->tx_count <= TXQ_FRAMES &&
                           k->tx_enqueued <= k->tx_count,
                       "tx_head"))
        return;
    /* The ring's frames in use (the others are written before they are read). */
    for (unsigned j = 0; j < k->tx_count; j++) {
        nm_snap_push(s, "txf%u", j);
        ks_tx_frame_snapshot(s, &k->txf[(k->tx_head + j) % TXQ_FRAMES]);
        nm_snap_pop(s);
    }
    nm_snap_bool(s, "tx_busy", &k->tx_busy);
    nm_snap_u32(s, "txq_used", &k->txq_used);
    nm_snap_push(s, "tx_stage");
    ks_tx_frame_snapshot(s, &k->tx_stage);
    nm_snap_pop(s);
    nm_snap_u32(s, "tx_wpos", &k->tx_wpos);
    nm_snap_u32(s, "tx_wneed", &k->tx_wneed);
    nm_snap_check(s,
                  k->txq_used <= TXQ_SIZE && k->tx_wpos <= sizeof k->tx_stage.data &&
                      k->tx_wneed <= sizeof k->tx_stage.data,
                  "tx_wpos");
    nm_snap_bool(s, "tx_wdrop", &k->tx_wdrop);
    nm_snap_timer(s, "tx_timer", &k->tx_timer);
#define KS_SNAP_FIELD(name) nm_snap_u64(s, "st." #name, &k->st.name);
    NM_KS8851_COUNTERS(KS_SNAP_FIELD)
#undef KS_SNAP_FIELD
}

static const char *const ks_keys[] = {"spi", "cs", "irq", "mac", "eeprom", "net", "capture", NULL};

const nm_device_class nm_ks8851_class = {
    .name = "ks8851",
    .help = "Micrel KSZ8851SNL 10/100 Ethernet controller on SPI: spi=CONTROLLER (default the "
            "first), cs=0, irq=7, mac=, eeprom=1 (MAC from EEPROM), net=, capture=FILE",
    .keys = ks_keys,
    .create = ks_create,
    .reset = ks_reset,
    .destroy = ks_destroy,
    .report = ks_report,
    .frames = ks_frames,
    .snapshot = ks_snapshot,
    .snapshot_version = 1,
};
