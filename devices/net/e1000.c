/* Intel 82540EM Gigabit Ethernet controller on PCI, as Linux's e1000 driver
 * (drivers/net/ethernet/intel/e1000) drives it.
 *
 * Source: Intel "PCI/PCI-X Family of Gigabit Ethernet Controllers Software
 * Developer's Manual" (8254x SDM, doc 317453): section numbers in the
 * comments ("SDM 13.4.1") are that manual's.  docs/e1000.md lists what is
 * modelled and what is not.
 *
 *   BAR0  128 KB memory: the registers (SDM 13, Table 13-2)
 *   BAR1  8 ports of I/O: IOADDR (+0) selects a register, IODATA (+4)
 *         reads/writes it (SDM 13.2.1 "I/O-Mapped Access")
 *   INTA  level: (ICR & IMS) != 0, paced by ITR
 *
 * The wire is the netdev link at 1 Gbit/s.  Transmit descriptors are
 * fetched, a packet's data read and the frame handed to the wire on the
 * virtual clock, a packet at a time, with the DMA burst time of the PCI bus
 * before each frame (bus-master: the CPU is not charged).  Receive is done
 * when a frame's last bit arrives. */
#include "devices/net/e1000.h"

#include <glib.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "devices/netdev/netdev.h"
#include "emu/core/clock.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define WIRE_BPS 1000000000u /* 1000BASE-T */

#define MMIO_SIZE     0x20000u /* SDM 4.1: 128 KB memory BAR */
#define IO_SIZE       8u
#define REG_WORDS     (0x6000u / 4) /* registers kept: 0x0000-0x5FFF */
#define EEPROM_WORDS  64            /* 93C46 microwire, 64 x 16 (EECD.EE_SIZE = 0) */
#define MAX_TX_PACKET (256u * 1024) /* gathered TSO packet (more: dropped) */
#define TX_FIFO_NS    131072u       /* 16 KB TX packet buffer at 1 Gbit/s (PBA) */

/* ---- registers (SDM Table 13-2) ---- */
enum {
    R_CTRL = 0x0000,
    R_STATUS = 0x0008,
    R_EECD = 0x0010,
    R_EERD = 0x0014,
    R_CTRL_EXT = 0x0018,
    R_FLA = 0x001c,
    R_MDIC = 0x0020,
    R_FCAL = 0x0028,
    R_FCAH = 0x002c,
    R_FCT = 0x0030,
    R_VET = 0x0038,
    R_ICR = 0x00c0,
    R_ITR = 0x00c4,
    R_ICS = 0x00c8,
    R_IMS = 0x00d0,
    R_IMC = 0x00d8,
    R_RCTL = 0x0100,
    R_FCTTV = 0x0170,
    R_TXCW = 0x0178,
    R_RXCW = 0x0180,
    R_TCTL = 0x0400,
    R_TIPG = 0x0410,
    R_AIT = 0x0458,
    R_LEDCTL = 0x0e00,
    R_PBA = 0x1000,
    R_FCRTL = 0x2160,
    R_FCRTH = 0x2168,
    R_RDBAL = 0x2800,
    R_RDBAH = 0x2804,
    R_RDLEN = 0x2808,
    R_RDH = 0x2810,
    R_RDT = 0x2818,
    R_RDTR = 0x2820,
    R_RXDCTL = 0x2828,
    R_RADV = 0x282c,
    R_RSRPD = 0x2c00,
    R_TXDMAC = 0x3000,
    R_TDBAL = 0x3800,
    R_TDBAH = 0x3804,
    R_TDLEN = 0x3808,
    R_TDH = 0x3810,
    R_TDT = 0x3818,
    R_TIDV = 0x3820,
    R_TXDCTL = 0x3828,
    R_TADV = 0x382c,
    R_TSPMT = 0x3830,
    R_STATS = 0x4000, /* 0x4000-0x40FF: statistics, clear on read (SDM 13.7) */
    R_RXCSUM = 0x5000,
    R_MTA = 0x5200,  /* 128 entries */
    R_RAL0 = 0x5400, /* RAL/RAH pairs, 16 entries */
    R_VFTA = 0x5600, /* 128 entries */
    R_WUC = 0x5800,
    R_WUFC = 0x5808,
    R_WUS = 0x5810,
    R_MANC = 0x5820,
    R_IPAV = 0x5838,
    R_IP4AT = 0x5840,
    R_IP6AT = 0x5880,
    R_WUPL = 0x5900,
    R_WUPM = 0x5a00,
    R_FFLT = 0x5f00,
};

/* Statistics (SDM 13.7), as offsets from 0x4000 / 4. */
enum {
    S_CRCERRS = 0x00 / 4,
    S_MPC = 0x10 / 4,
    S_PRC64 = 0x5c / 4,
    S_PRC127,
    S_PRC255,
    S_PRC511,
    S_PRC1023,
    S_PRC1522,
    S_GPRC = 0x74 / 4,
    S_BPRC,
    S_MPRC,
    S_GPTC,
    S_GORCL = 0x88 / 4,
    S_GORCH,
    S_GOTCL,
    S_GOTCH,
    S_RNBC = 0xa0 / 4,
    S_RUC,
    S_RFC,
    S_ROC,
    S_TORL = 0xc0 / 4,
    S_TORH,
    S_TOTL,
    S_TOTH,
    S_TPR,
    S_TPT,
    S_PTC64,
    S_PTC127,
    S_PTC255,
    S_PTC511,
    S_PTC1023,
    S_PTC1522,
    S_MPTC,
    S_BPTC,
    S_TSCTC,
    S_TSCTFC,
    STAT_WORDS = 64
};

/* CTRL (SDM 13.4.1) */
#define CTRL_FD      (1u << 0)
#define CTRL_SLU     (1u << 6)
#define CTRL_RST     (1u << 26)
#define CTRL_VME     (1u << 30)
#define CTRL_PHY_RST (1u << 31)
/* STATUS (SDM 13.4.2): FD, LU, SPEED 7:6 = 10b 1000 Mb/s, ASDV 9:8 */
#define STATUS_FD         (1u << 0)
#define STATUS_LU         (1u << 1)
#define STATUS_SPEED_1000 (2u << 6)
#define STATUS_ASDV_1000  (2u << 8)
/* EECD (SDM 13.4.3) */
#define EECD_SK   (1u << 0)
#define EECD_CS   (1u << 1)
#define EECD_DI   (1u << 2)
#define EECD_DO   (1u << 3)
#define EECD_FWE  (3u << 4)
#define EECD_REQ  (1u << 6)
#define EECD_GNT  (1u << 7)
#define EECD_PRES (1u << 8)
/* EERD (SDM 13.4.4, 82540-style): START 0, DONE 4, ADDR 15:8, DATA 31:16 */
#define EERD_START (1u << 0)
#define EERD_DONE  (1u << 4)
/* MDIC (SDM 13.4.7) */
#define MDIC_OP_WRITE (1u << 26)
#define MDIC_OP_READ  (2u << 26)
#define MDIC_READY    (1u << 28)
#define MDIC_IE       (1u << 29)
#define MDIC_ERROR    (1u << 30)
/* Interrupt causes, ICR/ICS/IMS/IMC (SDM 13.4.17-13.4.21) */
#define ICR_TXDW   (1u << 0)
#define ICR_TXQE   (1u << 1)
#define ICR_LSC    (1u << 2)
#define ICR_RXDMT0 (1u << 4)
#define ICR_RXO    (1u << 6)
#define ICR_RXT0   (1u << 7)
#define ICR_MDAC   (1u << 9)
#define ICR_VALID  0x0001f6dfu /* the causes the 82540EM has */
/* RCTL (SDM 13.4.22) */
#define RCTL_EN          (1u << 1)
#define RCTL_SBP         (1u << 2)
#define RCTL_UPE         (1u << 3)
#define RCTL_MPE         (1u << 4)
#define RCTL_LPE         (1u << 5)
#define RCTL_LBM         (3u << 6)
#define RCTL_RDMTS_SHIFT 8
#define RCTL_MO_SHIFT    12
#define RCTL_BAM         (1u << 15)
#define RCTL_BSIZE_SHIFT 16
#define RCTL_VFE         (1u << 18)
#define RCTL_BSEX        (1u << 25)
#define RCTL_SECRC       (1u << 26)
/* TCTL (SDM 13.4.33) */
#define TCTL_EN  (1u << 1)
#define TCTL_PSP (1u << 3)
/* RDTR/TIDV bit 31: flush partial descriptor block (SDM 13.4.30/13.4.44) */
#define DELAY_FPD (1u << 31)
/* RXCSUM (SDM 13.4.40) */
#define RXCSUM_IPOFLD (1u << 8)
#define RXCSUM_TUOFLD (1u << 9)
/* RAH (SDM 13.4.39): address valid */
#define RAH_AV (1u << 31)

/* Receive descriptor status / errors (SDM 3.2.3.1, 3.2.3.2) */
#define RXD_DD    (1u << 0)
#define RXD_EOP   (1u << 1)
#define RXD_IXSM  (1u << 2)
#define RXD_VP    (1u << 3)
#define RXD_TCPCS (1u << 5)
#define RXD_IPCS  (1u << 6)
#define RXE_TCPE  (1u << 5)
#define RXE_IPE   (1u << 6)
#define RXE_RXE   (1u << 7)
/* Transmit descriptor command bits (SDM 3.3.3, 3.3.6, 3.3.7) */
#define TXC_EOP  (1u << 0)
#define TXC_IFCS (1u << 1)
#define TXC_IC   (1u << 2) /* legacy: insert checksum */
#define TXC_TSE  (1u << 2) /* extended: TCP segmentation enable */
#define TXC_RS   (1u << 3)
#define TXC_RPS  (1u << 4)
#define TXC_DEXT (1u << 5)
#define TXC_VLE  (1u << 6)
#define TXC_IDE  (1u << 7)
/* Context descriptor TUCMD (SDM 3.3.6): TCP 0, IP 1, TSE 2 */
#define TUCMD_TCP (1u << 0)
#define TUCMD_IP  (1u << 1)
/* Data descriptor POPTS (SDM 3.3.7.1) */
#define POPTS_IXSM (1u << 0)
#define POPTS_TXSM (1u << 1)
#define TXD_STA_DD (1u << 0)

/* ---- PHY: the 82540EM's integrated 10/100/1000 PHY (an M88E1011 core),
 * IEEE 802.3 clause 22 registers + the vendor ones the driver touches ---- */
enum {
    PHY_BMCR = 0,
    PHY_BMSR = 1,
    PHY_ID1 = 2,
    PHY_ID2 = 3,
    PHY_ANAR = 4,
    PHY_ANLPAR = 5,
    PHY_ANER = 6,
    PHY_1000T_CTRL = 9,
    PHY_1000T_STATUS = 10,
    PHY_EXT_STATUS = 15,
    PHY_SPEC_CTRL = 16,   /* M88 PSCR */
    PHY_SPEC_STATUS = 17, /* M88 PSSR */
    PHY_EXT_SPEC_CTRL = 20,
};
#define BMCR_RESET   (1u << 15)
#define BMCR_RESTART (1u << 9)
#define BMSR_LINK    (1u << 2)
#define BMSR_AN_DONE (1u << 5)
#define PHY_ADDR     1 /* the integrated PHY's MDIO address (SDM 13.4.7) */

typedef struct tx_context {
    uint8_t ipcss, ipcso, tucss, tucso;
    uint16_t ipcse, tucse;
    uint32_t paylen;
    uint8_t tucmd, hdrlen;
    uint16_t mss;
} tx_context;

typedef struct e1000 {
    nm_machine *m;
    char *name;
    nm_pci_device pci;
    nm_pci_bus_timing bus;
    nm_net_endpoint ep;
    nm_net_link *link;
    uint8_t mac[6];

    uint32_t regs[REG_WORDS];
    uint32_t stat[STAT_WORDS];
    uint32_t ioaddr;

    uint16_t eeprom[EEPROM_WORDS];
    struct {
        uint32_t eecd;    /* SK, CS, DI and REQ as written */
        unsigned bits_in; /* command bits clocked in since CS rose */
        uint32_t command;
        bool reading;
        uint16_t word;
        unsigned out_bits; /* data bits shifted out */
        bool data_out;
    } ee;
    uint16_t phy[32];

    /* Interrupts. */
    bool irq_level;
    uint64_t last_irq_ns;
    bool irq_ever;
    nm_timer itr_timer;
    nm_timer rdtr_timer, radv_timer, tidv_timer, tadv_timer;

    /* Transmit. */
    tx_context ctx;
    uint8_t *tx_buf;
    size_t tx_len;
    bool tx_tse, tx_ixsm, tx_txsm, tx_legacy_ic, tx_vle, tx_ifcs, tx_oversize;
    uint8_t tx_cso, tx_css;
    uint16_t tx_vlan;
    /* Descriptors of the packet in flight that asked for status (RS): their
     * DD is written back when the packet has left the FIFO for the wire. */
    uint32_t tx_wb_addr[64];
    unsigned tx_wb_count;
    bool tx_wb_ide_all;
    uint64_t wire_free_ns; /* when the wire has sent what we gave it */
    nm_timer tx_timer;
    uint64_t tx_pending_ns; /* DMA time of the packet gathered */
    bool tx_have_packet;

    nm_e1000_stats st;
} e1000;

static inline uint32_t *reg(e1000 *s, uint32_t off)
{
    return &s->regs[off / 4];
}
#define REG(s, off) (*reg((s), (off)))

static inline uint64_t now_ns(e1000 *s)
{
    return nm_clock_now_ns(&s->m->clock);
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Internet checksum helpers (RFC 1071): a 32-bit running sum of 16-bit
 * big-endian words, folded at the end. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += rd16(p + i);
    if (len & 1) sum += (uint32_t)p[len - 1] << 8;
    return sum;
}
static uint16_t csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

/* ---- interrupts (SDM 13.4.17-13.4.21; ITR 13.4.18) ---- */

static void update_irq(e1000 *s)
{
    bool want = (REG(s, R_ICR) & REG(s, R_IMS)) != 0;
    if (!want) {
        if (s->irq_level) {
            s->irq_level = false;
            nm_pci_set_irq(&s->pci, false);
        }
        nm_timer_cancel(&s->m->clock, &s->itr_timer);
        return;
    }
    if (s->irq_level) return;
    /* ITR: at least INTERVAL x 256 ns between interrupt assertions. */
    uint64_t interval = (uint64_t)(REG(s, R_ITR) & 0xffff) * 256u;
    uint64_t t = now_ns(s);
    if (interval && s->irq_ever && t < s->last_irq_ns + interval) {
        if (!nm_timer_pending(&s->itr_timer))
            nm_timer_at_ns(&s->m->clock, &s->itr_timer, s->last_irq_ns + interval);
        return;
    }
    s->irq_level = true;
    s->irq_ever = true;
    s->last_irq_ns = t;
    s->st.interrupts++;
    nm_pci_set_irq(&s->pci, true);
}

static void itr_expired(void *opaque, uint64_t late)
{
    (void)late;
    update_irq(opaque);
}

static void raise_cause(e1000 *s, uint32_t cause)
{
    REG(s, R_ICR) |= cause;
    update_irq(s);
}

/* The absolute/packet delay timers (RDTR/RADV, TIDV/TADV): 1.024 us units. */
static uint64_t delay_ns(uint32_t v)
{
    return (uint64_t)(v & 0xffff) * 1024u;
}

static void rx_timer_fire(void *opaque, uint64_t late)
{
    (void)late;
    e1000 *s = opaque;
    nm_timer_cancel(&s->m->clock, &s->rdtr_timer);
    nm_timer_cancel(&s->m->clock, &s->radv_timer);
    raise_cause(s, ICR_RXT0);
}

static void tx_timer_fire(void *opaque, uint64_t late)
{
    (void)late;
    e1000 *s = opaque;
    nm_timer_cancel(&s->m->clock, &s->tidv_timer);
    nm_timer_cancel(&s->m->clock, &s->tadv_timer);
    raise_cause(s, ICR_TXDW);
}

/* A frame was received: RXT0 now (RDTR 0) or after the packet timer
 * (restarted each frame) or the absolute timer (RADV, started by the first
 * frame), whichever ends first (SDM 3.2.7.1). */
static void rx_interrupt(e1000 *s)
{
    uint32_t rdtr = REG(s, R_RDTR) & 0xffff;
    if (!rdtr) {
        raise_cause(s, ICR_RXT0);
        return;
    }
    nm_timer_after_ns(&s->m->clock, &s->rdtr_timer, delay_ns(rdtr));
    uint32_t radv = REG(s, R_RADV) & 0xffff;
    if (radv && !nm_timer_pending(&s->radv_timer))
        nm_timer_after_ns(&s->m->clock, &s->radv_timer, delay_ns(radv));
}

/* A descriptor with RS was written back: TXDW now, or after TIDV/TADV when
 * the descriptor asked for a delayed interrupt (IDE) (SDM 3.4.1). */
static void tx_interrupt(e1000 *s, bool ide)
{
    uint32_t tidv = REG(s, R_TIDV) & 0xffff;
    if (!ide || !tidv) {
        raise_cause(s, ICR_TXDW);
        return;
    }
    nm_timer_after_ns(&s->m->clock, &s->tidv_timer, delay_ns(tidv));
    uint32_t tadv = REG(s, R_TADV) & 0xffff;
    if (tadv && !nm_timer_pending(&s->tadv_timer))
        nm_timer_after_ns(&s->m->clock, &s->tadv_timer, delay_ns(tadv));
}

/* ---- EEPROM (SDM 5; microwire protocol of the 93C46 on EECD, 13.4.3) ---- */

static void eeprom_build(e1000 *s)
{
    uint16_t *w = s->eeprom;
    memset(w, 0, sizeof s->eeprom);
    for (int i = 0; i < 3; i++) /* 00h-02h: Ethernet address (SDM 5.6.1) */
        w[i] = (uint16_t)(s->mac[2 * i] | s->mac[2 * i + 1] << 8);
    w[0x04] = 0xffff; /* ID LED settings: reserved value = driver default */
    w[0x05] = 0x1000; /* EEPROM image version */
    w[0x0a] = 0x0000; /* Initialization Control 1 */
    w[0x0b] = 0x001e; /* Subsystem ID (SDM 5.6.7) */
    w[0x0c] = 0x8086; /* Subsystem Vendor ID */
    w[0x0d] = 0x100e; /* Device ID */
    w[0x0e] = 0x8086; /* Vendor ID */
    w[0x0f] = 0x0000; /* Initialization Control 2: no PAUSE advertised */
    w[0x24] = 0x0000; /* Initialization Control 3 (port A): APM off */
    uint16_t sum = 0;
    for (int i = 0; i < EEPROM_WORDS - 1; i++)
        sum = (uint16_t)(sum + w[i]);
    w[EEPROM_WORDS - 1] = (uint16_t)(0xbaba - sum); /* 3Fh: the words sum to BABAh */
}

/* Microwire: with CS high, DI is sampled on each SK rising edge: a start
 * bit 1, opcode 10 (READ), then 6 address bits; the part then drives the
 * 16 data bits on DO, MSB first, one per rising edge.  CS low ends it. */
static void eeprom_write_eecd(e1000 *s, uint32_t v)
{
    uint32_t old = s->ee.eecd;
    s->ee.eecd = v & (EECD_SK | EECD_CS | EECD_DI | EECD_REQ | EECD_FWE);
    if (!(v & EECD_CS)) {
        s->ee.bits_in = 0;
        s->ee.command = 0;
        s->ee.reading = false;
        return;
    }
    bool rising = (v & EECD_SK) && !(old & EECD_SK);
    if (!rising) return;
    if (s->ee.reading) {
        if (s->ee.out_bits < 16) {
            s->ee.data_out = (s->ee.word >> (15 - s->ee.out_bits)) & 1;
            s->ee.out_bits++;
        } else {
            /* Sequential read past the word: the next one (93C46). */
            s->ee.word = s->eeprom[(s->ee.command + 1) % EEPROM_WORDS];
            s->ee.command++;
            s->ee.out_bits = 1;
            s->ee.data_out = (s->ee.word >> 15) & 1;
        }
        return;
    }
    if (s->ee.bits_in == 0 && !(v & EECD_DI)) return; /* waiting for the start bit */
    s->ee.command = s->ee.command << 1 | ((v & EECD_DI) ? 1 : 0);
    s->ee.bits_in++;
    if (s->ee.bits_in == 9) { /* start + 2 opcode + 6 address bits */
        unsigned op = (s->ee.command >> 6) & 7, addr = s->ee.command & 0x3f;
        if (op == 6) { /* 1 10: READ */
            s->ee.reading = true;
            s->ee.word = s->eeprom[addr];
            s->ee.command = addr;
            s->ee.out_bits = 0;
            s->ee.data_out = false; /* the dummy 0 before the data */
        } else {
            nm_debug(E1000, "%s: EEPROM opcode %u (address 0x%02x) ignored: read-only part",
                     s->name, op & 3, addr);
        }
    }
}

static uint32_t eeprom_read_eecd(e1000 *s)
{
    uint32_t v = s->ee.eecd | EECD_PRES;
    if (v & EECD_REQ) v |= EECD_GNT; /* no firmware competes for it */
    if ((v & EECD_CS) && s->ee.reading && s->ee.data_out) v |= EECD_DO;
    return v;
}

/* ---- PHY (MDIC, SDM 13.4.7; registers IEEE 802.3 22.2.4) ---- */

static bool link_up(const e1000 *s)
{
    return s->link != NULL;
}

static void phy_reset(e1000 *s)
{
    uint16_t *p = s->phy;
    memset(s->phy, 0, sizeof s->phy);
    p[PHY_BMCR] = 0x1140; /* autoneg enable, full duplex, 1000 Mb/s select */
    p[PHY_ID1] = 0x0141;  /* M88E1011 (Marvell OUI), what e1000_detect_gig_phy expects */
    p[PHY_ID2] = 0x0c20;
    p[PHY_ANAR] = 0x01e1;
    p[PHY_1000T_CTRL] = 0x0300;
    p[PHY_EXT_STATUS] = 0x3000; /* 1000BASE-T full and half duplex capable */
    p[PHY_SPEC_CTRL] = 0x0068;
    p[PHY_EXT_SPEC_CTRL] = 0x0d60;
}

static uint16_t phy_read(e1000 *s, unsigned r)
{
    bool up = link_up(s);
    switch (r) {
    case PHY_BMSR: /* 10/100 capable, ext status, preamble suppression, AN able */
        return (uint16_t)(0x7949 | (up ? BMSR_LINK | BMSR_AN_DONE : 0));
    case PHY_ANLPAR: /* partner: ACK, 10/100 half/full (no PAUSE) */ return up ? 0x41e1 : 0;
    case PHY_ANER: return up ? 0x0001 : 0;
    case PHY_1000T_STATUS: /* local/remote receiver OK, partner 1000 FD/HD */
        return up ? 0x3c00 : 0;
    case PHY_SPEC_STATUS: /* 1000 Mb/s, full duplex, resolved, link */ return up ? 0xac00 : 0;
    default: return s->phy[r];
    }
}

static void phy_write(e1000 *s, unsigned r, uint16_t v)
{
    switch (r) {
    case PHY_BMCR:
        if (v & BMCR_RESET) {
            phy_reset(s); /* self-clearing; autoneg is done at once */
            return;
        }
        s->phy[r] = v & (uint16_t)~BMCR_RESTART;
        return;
    case PHY_BMSR:
    case PHY_ID1:
    case PHY_ID2:
    case PHY_ANLPAR:
    case PHY_ANER:
    case PHY_1000T_STATUS:
    case PHY_EXT_STATUS:
    case PHY_SPEC_STATUS: return; /* read-only */
    default: s->phy[r] = v;
    }
}

static void mdic_write(e1000 *s, uint32_t v)
{
    unsigned phyadd = (v >> 21) & 0x1f, regadd = (v >> 16) & 0x1f, op = v & (3u << 26);
    uint32_t result = v & ~(MDIC_READY | MDIC_ERROR);
    if (phyadd != PHY_ADDR || (op != MDIC_OP_READ && op != MDIC_OP_WRITE)) {
        nm_debug(E1000, "%s: MDIC 0x%08x: no PHY at %u or bad opcode", s->name, v, phyadd);
        result |= MDIC_ERROR;
    } else if (op == MDIC_OP_READ) {
        result = (result & 0xffff0000u) | phy_read(s, regadd);
    } else {
        phy_write(s, regadd, (uint16_t)v);
    }
    /* The MDIO frame takes ~64 MDC clocks; completed before the driver's
     * first poll (it waits 50 us before reading). */
    REG(s, R_MDIC) = result | MDIC_READY;
    if (v & MDIC_IE) raise_cause(s, ICR_MDAC);
}

/* ---- reset ---- */

static void tx_abort_packet(e1000 *s)
{
    s->tx_wb_count = 0;
    s->tx_wb_ide_all = true;
    s->tx_len = 0;
    s->tx_have_packet = false;
    s->tx_oversize = false;
}

static void mac_reset(e1000 *s)
{
    nm_clock *c = &s->m->clock;
    nm_timer_cancel(c, &s->itr_timer);
    nm_timer_cancel(c, &s->rdtr_timer);
    nm_timer_cancel(c, &s->radv_timer);
    nm_timer_cancel(c, &s->tidv_timer);
    nm_timer_cancel(c, &s->tadv_timer);
    nm_timer_cancel(c, &s->tx_timer);
    memset(s->regs, 0, sizeof s->regs);
    memset(s->stat, 0, sizeof s->stat);
    memset(&s->ctx, 0, sizeof s->ctx);
    memset(&s->ee, 0, sizeof s->ee);
    tx_abort_packet(s);
    /* Values after reset and the EEPROM load (SDM 13.4): */
    REG(s, R_CTRL) = CTRL_FD | CTRL_SLU | (1u << 5) /* ASDE */;
    REG(s, R_EECD) = 0;
    REG(s, R_LEDCTL) = 0x07068302u;
    REG(s, R_PBA) = 0x00000030u; /* 48 KB RX, 16 KB TX */
    REG(s, R_TIPG) = 0x00000008u;
    REG(s, R_TXDCTL) = 0x00000000u;
    REG(s, R_RXCSUM) = 0x00000000u;
    REG(s, R_MANC) = 0;
    /* RAL0/RAH0 loaded from the EEPROM's Ethernet address, valid. */
    REG(s, R_RAL0) = le32(s->mac);
    REG(s, R_RAL0 + 4) = le16(s->mac + 4) | RAH_AV;
    s->ioaddr = 0;
    s->irq_ever = false;
    if (s->irq_level) {
        s->irq_level = false;
        nm_pci_set_irq(&s->pci, false);
    }
}

/* ---- receive (SDM 3.2) ---- */

static unsigned rx_buffer_size(uint32_t rctl)
{
    unsigned bsize = (rctl >> RCTL_BSIZE_SHIFT) & 3;
    if (rctl & RCTL_BSEX) {
        static const unsigned ext[4] = {0, 16384, 8192, 4096}; /* 00: reserved */
        return ext[bsize];
    }
    static const unsigned base[4] = {2048, 1024, 512, 256};
    return base[bsize];
}

static uint32_t mta_hash(uint32_t rctl, const uint8_t *a)
{
    /* RCTL.MO selects bits [47:36], [46:35], [45:34] or [43:32] (SDM 13.4.22). */
    switch ((rctl >> RCTL_MO_SHIFT) & 3) {
    case 0: return ((a[4] >> 4) | (uint32_t)a[5] << 4) & 0xfff;
    case 1: return ((a[4] >> 3) | (uint32_t)a[5] << 5) & 0xfff;
    case 2: return ((a[4] >> 2) | (uint32_t)a[5] << 6) & 0xfff;
    default: return (a[4] | (uint32_t)a[5] << 8) & 0xfff;
    }
}

/* Address filtering (SDM 3.2.1 / 13.4.22): exact RAL/RAH, UPE, MPE, MTA,
 * BAM, then the VLAN filter. */
static bool rx_accept(e1000 *s, const uint8_t *f, size_t len)
{
    uint32_t rctl = REG(s, R_RCTL);
    bool ok = false;
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (!memcmp(f, bcast, 6)) {
        ok = (rctl & RCTL_BAM) || (rctl & RCTL_MPE);
    } else {
        for (unsigned i = 0; i < 16 && !ok; i++) {
            uint32_t lo = REG(s, R_RAL0 + 8 * i), hi = REG(s, R_RAL0 + 8 * i + 4);
            uint8_t a[6] = {(uint8_t)lo,         (uint8_t)(lo >> 8), (uint8_t)(lo >> 16),
                            (uint8_t)(lo >> 24), (uint8_t)hi,        (uint8_t)(hi >> 8)};
            ok = (hi & RAH_AV) && !memcmp(f, a, 6);
        }
        if (!ok && (f[0] & 1)) {
            uint32_t h = mta_hash(rctl, f);
            ok = (rctl & RCTL_MPE) || (REG(s, R_MTA + 4 * (h >> 5)) >> (h & 31) & 1);
        } else if (!ok) {
            ok = rctl & RCTL_UPE;
        }
    }
    if (ok && (rctl & RCTL_VFE) && len >= 16 && rd16(f + 12) == (REG(s, R_VET) & 0xffff) &&
        (REG(s, R_VET) & 0xffff)) {
        unsigned vid = rd16(f + 14) & 0xfff;
        ok = REG(s, R_VFTA + 4 * (vid >> 5)) >> (vid & 31) & 1;
    }
    return ok;
}

/* RX checksum offload (SDM 3.2.9 / RXCSUM 13.4.40): IPv4 header and
 * TCP/UDP checksums of unfragmented IPv4 packets. */
static void rx_checksum(e1000 *s, const uint8_t *f, size_t len, uint8_t *status, uint8_t *errors)
{
    uint32_t rxcsum = REG(s, R_RXCSUM);
    if (!(rxcsum & (RXCSUM_IPOFLD | RXCSUM_TUOFLD))) {
        *status |= RXD_IXSM;
        return;
    }
    if (len < 14 + 20 || rd16(f + 12) != 0x0800) return;
    const uint8_t *ip = f + 14;
    size_t ihl = (size_t)(ip[0] & 15) * 4, tot = rd16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl || 14 + tot > len) return;
    if (rxcsum & RXCSUM_IPOFLD) {
        *status |= RXD_IPCS;
        if (csum_fold(csum_add(0, ip, ihl)) != 0xffff) *errors |= RXE_IPE;
    }
    if (!(rxcsum & RXCSUM_TUOFLD) || (rd16(ip + 6) & 0x3fff)) return; /* fragments: no */
    uint8_t proto = ip[9];
    const uint8_t *l4 = ip + ihl;
    size_t l4len = tot - ihl;
    if (proto == 6 && l4len >= 20) {
    } else if (proto == 17 && l4len >= 8) {
        if (rd16(l4 + 6) == 0) return; /* UDP without a checksum */
    } else {
        return;
    }
    uint32_t sum = csum_add(0, ip + 12, 8) + proto + (uint32_t)l4len;
    *status |= RXD_TCPCS;
    if (csum_fold(csum_add(sum, l4, l4len)) != 0xffff) *errors |= RXE_TCPE;
}

static void count_size(uint32_t *stat, unsigned first, size_t len)
{
    unsigned i = len <= 64     ? 0
                 : len <= 127  ? 1
                 : len <= 255  ? 2
                 : len <= 511  ? 3
                 : len <= 1023 ? 4
                               : 5;
    stat[first + i]++;
}

static void stat_add64(e1000 *s, unsigned lo, uint64_t v)
{
    uint64_t t = ((uint64_t)s->stat[lo + 1] << 32 | s->stat[lo]) + v;
    s->stat[lo] = (uint32_t)t;
    s->stat[lo + 1] = (uint32_t)(t >> 32);
}

static bool ring_ok(e1000 *s, uint32_t len_reg, uint32_t bah, const char *what)
{
    uint32_t len = REG(s, len_reg);
    /* xDBAL is the register before xDBAH.  A ring that runs past 4 GB has
     * its tail descriptors above 4 GB (64-bit addresses, SDM 3.2.6), where
     * a 32-bit PC has nothing: refused like a ring above 4 GB, where the
     * 32-bit `base + index * 16` once wrapped them to the bottom of RAM. */
    uint64_t end = (uint64_t)REG(s, bah - 4) + len;
    if (len >= 128 && !(len & 127) && !REG(s, bah) && end <= (1ull << 32)) return true;
    s->st.bad_ring_config++;
    nm_dev_warn(E1000, s, "%s: %s ring of %u bytes (base high 0x%08x) is not usable: %s", s->name,
                what, len, REG(s, bah),
                REG(s, bah) || end > (1ull << 32) ? "above 4 GB"
                                                  : "not a non-zero multiple of 128 bytes");
    return false;
}

static void rx_drop_missed(e1000 *s, const char *why)
{
    s->st.rx_missed++;
    s->stat[S_MPC]++;
    s->stat[S_RNBC]++;
    nm_debug(E1000, "%s: received frame dropped: %s", s->name, why);
    raise_cause(s, ICR_RXO);
}

static void endpoint_receive(void *opaque, const uint8_t *frame, size_t len)
{
    e1000 *s = opaque;
    uint32_t rctl = REG(s, R_RCTL);
    if (!(rctl & RCTL_EN)) {
        s->st.rx_disabled_drops++;
        return;
    }
    if (len < 14 + NM_ETH_FCS_BYTES) {
        s->stat[S_RUC]++;
        s->st.rx_filtered++;
        return;
    }
    s->stat[S_TPR]++;
    stat_add64(s, S_TORL, len);
    if (!nm_eth_fcs_ok(frame, len) && !(rctl & RCTL_SBP)) {
        s->stat[S_CRCERRS]++;
        s->st.rx_crc_errors++;
        return;
    }
    /* Long packets: more than 1522 bytes with FCS without LPE, 16384 with it
     * (SDM 13.4.22, 3.2.2). */
    if (len > ((rctl & RCTL_LPE) ? 16384u : 1522u)) {
        s->stat[S_ROC]++;
        s->st.rx_too_long++;
        return;
    }
    if (len < NM_ETH_MIN_FRAME) s->stat[S_RUC]++;
    if (!rx_accept(s, frame, len)) {
        s->st.rx_filtered++;
        return;
    }
    /* VLAN tag stripping with CTRL.VME (SDM 3.2.3, 9.x): status VP. */
    uint8_t data[16384];
    uint8_t status = 0, errors = 0;
    uint16_t special = 0;
    size_t n = len;
    const uint8_t *src = frame;
    if ((REG(s, R_CTRL) & CTRL_VME) && n >= 18 && rd16(frame + 12) == (REG(s, R_VET) & 0xffff)) {
        special = rd16(frame + 14);
        status |= RXD_VP;
        memcpy(data, frame, 12);
        memcpy(data + 12, frame + 16, n - 16);
        n -= 4;
        src = data;
    }
    rx_checksum(s, src, n - NM_ETH_FCS_BYTES, &status, &errors);
    size_t store = (rctl & RCTL_SECRC) ? n - NM_ETH_FCS_BYTES : n;

    if (!ring_ok(s, R_RDLEN, R_RDBAH, "receive")) {
        rx_drop_missed(s, "bad receive ring");
        return;
    }
    uint32_t count = REG(s, R_RDLEN) / 16, rdh = REG(s, R_RDH), rdt = REG(s, R_RDT);
    if (rdh >= count || rdt >= count) {
        s->st.bad_ring_config++;
        nm_dev_warn(E1000, s, "%s: RDH %u / RDT %u outside the %u-descriptor ring", s->name, rdh,
                    rdt, count);
        rx_drop_missed(s, "head/tail outside the ring");
        return;
    }
    unsigned bufsize = rx_buffer_size(rctl);
    if (!bufsize) {
        s->st.bad_ring_config++;
        rx_drop_missed(s, "reserved buffer size (BSEX with BSIZE 00)");
        return;
    }
    uint32_t avail = (rdt + count - rdh) % count;
    uint32_t need = (uint32_t)((store + bufsize - 1) / bufsize);
    if (need > avail) { /* SDM 3.2.6: no descriptors, the FIFO overruns */
        rx_drop_missed(s, "no free receive descriptors");
        return;
    }
    uint32_t base = REG(s, R_RDBAL);
    /* The packet checksum field: the sum from RXCSUM.PCSS to the end. */
    size_t pcss = REG(s, R_RXCSUM) & 0xff, body = n - NM_ETH_FCS_BYTES;
    uint16_t pkt_csum = pcss < body ? csum_fold(csum_add(0, src + pcss, body - pcss)) : 0;
    size_t off = 0;
    for (uint32_t i = 0; i < need; i++) {
        uint32_t daddr = base + rdh * 16;
        uint8_t desc[16];
        if (!nm_pci_dma_read(&s->pci, daddr, desc, 16)) {
            s->st.bad_descriptors++;
            nm_debug(E1000, "%s: receive descriptor %u at 0x%08x unreadable", s->name, rdh, daddr);
            rx_drop_missed(s, "descriptor fetch refused");
            return;
        }
        uint64_t buf = (uint64_t)le32(desc) | (uint64_t)le32(desc + 4) << 32;
        size_t chunk = store - off < bufsize ? store - off : bufsize;
        uint8_t wb[8] = {0};
        bool last = i + 1 == need;
        uint8_t st_bits = (uint8_t)(RXD_DD | (last ? RXD_EOP | status : 0));
        uint8_t err_bits = last ? errors : 0;
        if (buf >> 32 || !nm_pci_dma_write(&s->pci, (uint32_t)buf, src + off, chunk)) {
            s->st.bad_descriptors++;
            nm_debug(E1000, "%s: receive buffer 0x%" G_GINT64_MODIFIER "x of descriptor %u refused",
                     s->name, buf, rdh);
            err_bits |= RXE_RXE;
        }
        wb[0] = (uint8_t)chunk;
        wb[1] = (uint8_t)(chunk >> 8);
        wb[2] = (uint8_t)pkt_csum;
        wb[3] = (uint8_t)(pkt_csum >> 8);
        wb[4] = st_bits;
        wb[5] = err_bits;
        wb[6] = (uint8_t)special;
        wb[7] = (uint8_t)(special >> 8);
        if (!nm_pci_dma_write(&s->pci, daddr + 8, wb, 8)) s->st.bad_descriptors++;
        off += chunk;
        rdh = (rdh + 1) % count;
        s->st.rx_descriptors++;
    }
    REG(s, R_RDH) = rdh;
    s->st.rx_frames++;
    s->st.rx_bytes += len;
    s->stat[S_GPRC]++;
    stat_add64(s, S_GORCL, len);
    count_size(s->stat, S_PRC64, len);
    if (frame[0] & 1) s->stat[!memcmp(frame, "\xff\xff\xff\xff\xff\xff", 6) ? S_BPRC : S_MPRC]++;
    /* RXDMT0: free descriptors fell to the threshold (RCTL.RDMTS: 1/2, 1/4, 1/8). */
    uint32_t left = (rdt + count - rdh) % count;
    unsigned shift = 1 + ((rctl >> RCTL_RDMTS_SHIFT) & 3);
    if (shift <= 3 && left <= (count >> shift)) REG(s, R_ICR) |= ICR_RXDMT0;
    rx_interrupt(s);
    update_irq(s);
}

/* ---- transmit (SDM 3.3 - 3.5) ---- */

static void tx_put_frame(e1000 *s, uint8_t *frame, size_t len)
{
    /* frame has room for a VLAN tag, padding and the FCS */
    if (s->tx_vle && (REG(s, R_CTRL) & CTRL_VME) && len >= 12) {
        memmove(frame + 16, frame + 12, len - 12);
        wr16(frame + 12, (uint16_t)REG(s, R_VET));
        wr16(frame + 14, s->tx_vlan);
        len += 4;
    }
    if ((REG(s, R_TCTL) & TCTL_PSP) && len < 60) { /* pad short packets */
        memset(frame + len, 0, 60 - len);
        len = 60;
    }
    if (s->tx_ifcs) {
        nm_eth_put_fcs(frame, len);
        len += NM_ETH_FCS_BYTES;
    }
    s->st.tx_frames++;
    s->st.tx_bytes += len;
    s->stat[S_GPTC]++;
    s->stat[S_TPT]++;
    stat_add64(s, S_GOTCL, len);
    stat_add64(s, S_TOTL, len);
    count_size(s->stat, S_PTC64, len);
    if (frame[0] & 1) s->stat[!memcmp(frame, "\xff\xff\xff\xff\xff\xff", 6) ? S_BPTC : S_MPTC]++;
    if (s->link) s->wire_free_ns = nm_net_send(&s->ep, frame, len);
}

/* Checksum of p[start .. end] (end inclusive, 0 = to the end of the packet)
 * stored at p[at] (SDM 3.3.6). */
static void insert_csum(uint8_t *p, size_t len, unsigned start, unsigned end, unsigned at,
                        uint32_t extra)
{
    size_t stop = end ? (size_t)end + 1 : len;
    if (stop > len) stop = len;
    if (start >= stop || (size_t)at + 2 > len) return;
    uint16_t c = (uint16_t)~csum_fold(csum_add(extra, p + start, stop - start));
    wr16(p + at, c);
}

static void tx_send_segmented(e1000 *s)
{
    tx_context *c = &s->ctx;
    size_t hdr = c->hdrlen, total = s->tx_len;
    if (!c->mss || hdr > total || hdr < (size_t)c->tucss + 20 || (size_t)c->ipcss + 20 > hdr) {
        s->st.tx_dropped++;
        s->st.bad_descriptors++;
        nm_dev_warn(E1000, s,
                    "%s: TCP segmentation context (HDRLEN %u, MSS %u, %zu bytes) unusable: dropped",
                    s->name, c->hdrlen, c->mss, total);
        return;
    }
    size_t payload = total - hdr;
    if (payload != c->paylen)
        nm_debug(E1000, "%s: TSO PAYLEN %u but %zu bytes gathered", s->name, c->paylen, payload);
    /* Room for a VLAN tag, PSP padding to 60 bytes and the FCS, as in
     * tx_send_packet (a small HDRLEN + MSS once overran hdr + mss + 32). */
    uint8_t *seg = g_malloc(MAX(hdr + c->mss, 60) + 32);
    uint16_t ip_id = rd16(s->tx_buf + c->ipcss + 4);
    uint32_t seq = (uint32_t)rd16(s->tx_buf + c->tucss + 4) << 16 | rd16(s->tx_buf + c->tucss + 6);
    bool tcp = c->tucmd & TUCMD_TCP, ipv4 = c->tucmd & TUCMD_IP;
    size_t done = 0;
    unsigned nseg = 0;
    do {
        size_t chunk = payload - done < c->mss ? payload - done : c->mss;
        bool last = done + chunk >= payload;
        memcpy(seg, s->tx_buf, hdr);
        memcpy(seg + hdr, s->tx_buf + hdr + done, chunk);
        size_t len = hdr + chunk;
        if (ipv4) { /* total length and identification per segment (SDM 3.5.4) */
            wr16(seg + c->ipcss + 2, (uint16_t)(len - c->ipcss));
            wr16(seg + c->ipcss + 4, (uint16_t)(ip_id + nseg));
        } else { /* IPv6 payload length */
            wr16(seg + c->ipcss + 4, (uint16_t)(len - c->ipcss - 40));
        }
        uint32_t l4len = (uint32_t)(len - c->tucss);
        if (tcp) {
            uint32_t sq = seq + (uint32_t)done;
            wr16(seg + c->tucss + 4, (uint16_t)(sq >> 16));
            wr16(seg + c->tucss + 6, (uint16_t)sq);
            if (!last) seg[c->tucss + 13] &= (uint8_t)~0x09; /* FIN and PSH: last only */
        } else {
            wr16(seg + c->tucss + 4, (uint16_t)l4len);
        }
        /* IPCSO is the guest's byte offset (SDM 3.3.6); one at or past the
         * segment's end names no field: nothing is inserted there, as
         * insert_csum does (it was written unchecked, past the buffer). */
        if (s->tx_ixsm && ipv4 && (size_t)c->ipcso + 2 <= len) {
            wr16(seg + c->ipcso, 0);
            insert_csum(seg, len, c->ipcss, c->ipcse ? c->ipcse : (unsigned)c->tucss - 1, c->ipcso,
                        0);
        }
        /* The L4 checksum field holds the pseudo-header sum without the
         * length (software's part); the hardware adds the length and the
         * segment (SDM 3.5.2). */
        if (s->tx_txsm) insert_csum(seg, len, c->tucss, 0, c->tucso, l4len);
        tx_put_frame(s, seg, len);
        done += chunk;
        nseg++;
    } while (done < payload);
    g_free(seg);
    s->st.tx_tso_packets++;
    s->st.tx_tso_segments += nseg;
    s->stat[S_TSCTC]++;
}

static void tx_send_packet(e1000 *s)
{
    if (s->tx_oversize) {
        s->st.tx_dropped++;
        nm_dev_warn(E1000, s, "%s: transmit packet longer than %u bytes: dropped", s->name,
                    MAX_TX_PACKET);
        return;
    }
    if (!s->tx_len) return;
    if (s->tx_tse) {
        tx_send_segmented(s);
        return;
    }
    /* Room for what tx_put_frame adds: a VLAN tag (4), TCTL.PSP padding
     * of a short packet to 60 bytes (SDM 13.4.33) and the FCS (4) - a
     * packet shorter than 28 bytes once overran a tx_len + 32 buffer. */
    uint8_t *f = g_malloc(MAX(s->tx_len, 60) + 32);
    memcpy(f, s->tx_buf, s->tx_len);
    if (s->tx_legacy_ic) {
        insert_csum(f, s->tx_len, s->tx_css, 0, s->tx_cso, 0);
    } else {
        if (s->tx_ixsm) insert_csum(f, s->tx_len, s->ctx.ipcss, s->ctx.ipcse, s->ctx.ipcso, 0);
        if (s->tx_txsm) insert_csum(f, s->tx_len, s->ctx.tucss, s->ctx.tucse, s->ctx.tucso, 0);
        if (s->tx_ixsm || s->tx_txsm) s->st.tx_csum_offloads++;
    }
    if (s->tx_len > 16384) { /* SDM 3.3: no more than 16 KB without TSE */
        s->st.tx_dropped++;
        nm_dev_warn(E1000, s, "%s: %zu-byte frame without TSE: dropped", s->name, s->tx_len);
    } else {
        tx_put_frame(s, f, s->tx_len);
    }
    g_free(f);
}

static void tx_append(e1000 *s, uint64_t addr, size_t len)
{
    if (!len) return;
    if (s->tx_len + len > MAX_TX_PACKET || addr >> 32) {
        if (addr >> 32) {
            s->st.bad_descriptors++;
            nm_debug(E1000, "%s: transmit buffer above 4 GB refused", s->name);
        }
        s->tx_oversize = s->tx_oversize || s->tx_len + len > MAX_TX_PACKET;
        return;
    }
    if (!nm_pci_dma_read(&s->pci, (uint32_t)addr, s->tx_buf + s->tx_len, len)) {
        s->st.bad_descriptors++;
        memset(s->tx_buf + s->tx_len, 0, len);
    }
    s->tx_len += len;
    s->tx_pending_ns += nm_pci_dma_burst_ns(len);
}

static bool tx_ring_ready(e1000 *s, uint32_t *count)
{
    if (!(REG(s, R_TCTL) & TCTL_EN)) return false;
    if (!ring_ok(s, R_TDLEN, R_TDBAH, "transmit")) return false;
    *count = REG(s, R_TDLEN) / 16;
    if (REG(s, R_TDH) >= *count || REG(s, R_TDT) >= *count) {
        s->st.bad_ring_config++;
        nm_dev_warn(E1000, s, "%s: TDH %u / TDT %u outside the %u-descriptor ring", s->name,
                    REG(s, R_TDH), REG(s, R_TDT), *count);
        return false;
    }
    return true;
}

static void tx_schedule(e1000 *s, uint64_t at_ns)
{
    if (!nm_timer_pending(&s->tx_timer)) nm_timer_at_ns(&s->m->clock, &s->tx_timer, at_ns);
}

/* The transmit engine, one packet per run: fetch descriptors from TDH until
 * EOP, then send the packet when its DMA has had time to finish (the timer
 * runs again then), write back and interrupt. */
static void tx_run(void *opaque, uint64_t late)
{
    (void)late;
    e1000 *s = opaque;
    uint32_t count;
    if (s->tx_have_packet) {
        /* The packet's data is in the FIFO: out to the wire, status back
         * (SDM 3.3.3.2: DD of the descriptors with RS), then TXDW. */
        tx_send_packet(s);
        static const uint8_t sta = TXD_STA_DD;
        for (unsigned i = 0; i < s->tx_wb_count; i++)
            if (!nm_pci_dma_write(&s->pci, s->tx_wb_addr[i], &sta, 1)) s->st.bad_descriptors++;
        if (s->tx_wb_count) tx_interrupt(s, s->tx_wb_ide_all);
        if (REG(s, R_TDH) == REG(s, R_TDT)) raise_cause(s, ICR_TXQE);
        tx_abort_packet(s);
    }
    if (!tx_ring_ready(s, &count)) return;
    uint32_t tdh = REG(s, R_TDH), tdt = REG(s, R_TDT), base = REG(s, R_TDBAL);
    s->tx_pending_ns = 0;
    while (tdh != tdt) {
        uint32_t daddr = base + tdh * 16;
        uint8_t d[16];
        if (!nm_pci_dma_read(&s->pci, daddr, d, 16)) {
            /* The fetch hit a master abort: the TX unit stalls here until
             * software writes TDT again. */
            s->st.bad_descriptors++;
            nm_debug(E1000, "%s: transmit descriptor %u at 0x%08x unreadable", s->name, tdh, daddr);
            break;
        }
        s->tx_pending_ns += nm_pci_dma_burst_ns(16);
        s->st.tx_descriptors++;
        uint64_t addr = (uint64_t)le32(d) | (uint64_t)le32(d + 4) << 32;
        uint32_t lower = le32(d + 8);
        uint8_t cmd = d[11];
        bool eop = false;
        if (!(cmd & TXC_DEXT)) { /* legacy (SDM 3.3.3) */
            if (!s->tx_len) {
                s->tx_legacy_ic = cmd & TXC_IC;
                s->tx_tse = s->tx_ixsm = s->tx_txsm = false;
            }
            s->tx_cso = d[10];
            s->tx_css = d[13];
            tx_append(s, addr, lower & 0xffff);
            eop = cmd & TXC_EOP;
        } else if (((lower >> 20) & 0xf) == 0) { /* context (SDM 3.3.6) */
            tx_context *c = &s->ctx;
            c->ipcss = d[0];
            c->ipcso = d[1];
            c->ipcse = le16(d + 2);
            c->tucss = d[4];
            c->tucso = d[5];
            c->tucse = le16(d + 6);
            c->paylen = lower & 0xfffff;
            c->tucmd = cmd;
            c->hdrlen = d[13];
            c->mss = le16(d + 14);
        } else if (((lower >> 20) & 0xf) == 1) { /* data (SDM 3.3.7) */
            if (!s->tx_len) {
                s->tx_legacy_ic = false;
                s->tx_tse = cmd & TXC_TSE;
                s->tx_ixsm = d[13] & POPTS_IXSM;
                s->tx_txsm = d[13] & POPTS_TXSM;
            }
            tx_append(s, addr, lower & 0xfffff);
            eop = cmd & TXC_EOP;
        } else {
            s->st.bad_descriptors++;
            nm_debug(E1000, "%s: transmit descriptor %u: reserved type %u skipped", s->name, tdh,
                     (lower >> 20) & 0xf);
        }
        if (eop) {
            s->tx_ifcs = cmd & TXC_IFCS;
            s->tx_vle = cmd & TXC_VLE;
            s->tx_vlan = le16(d + 14);
        }
        if (cmd & (TXC_RS | TXC_RPS)) { /* report status (SDM 3.3.3.2) */
            if (s->tx_wb_count < (unsigned)G_N_ELEMENTS(s->tx_wb_addr)) {
                s->tx_wb_addr[s->tx_wb_count++] = daddr + 12;
            } else { /* more than the engine tracks: written back at once */
                static const uint8_t sta = TXD_STA_DD;
                if (!nm_pci_dma_write(&s->pci, daddr + 12, &sta, 1)) s->st.bad_descriptors++;
            }
            s->tx_wb_ide_all = s->tx_wb_ide_all && (cmd & TXC_IDE);
        }
        tdh = (tdh + 1) % count;
        if (eop) {
            s->tx_have_packet = true;
            break;
        }
    }
    REG(s, R_TDH) = tdh;
    if (s->tx_have_packet) {
        /* Send when the DMA is done - and no sooner than the 16 KB TX FIFO
         * has room, the wire draining what is ahead (SDM 3.4: PBA). */
        uint64_t t = now_ns(s) + s->tx_pending_ns;
        if (s->wire_free_ns > TX_FIFO_NS && s->wire_free_ns - TX_FIFO_NS > t)
            t = s->wire_free_ns - TX_FIFO_NS;
        tx_schedule(s, t);
    } else if (s->tx_len) {
        /* Descriptors without EOP up to TDT: the rest comes with the next
         * TDT write; the DMA done so far is kept. */
    } else if (tdh == tdt && s->tx_wb_count == 0) {
        raise_cause(s, ICR_TXQE);
    }
}

/* ---- register access (SDM 13) ---- */

static uint32_t stat_read(e1000 *s, unsigned i)
{
    uint32_t v = s->stat[i];
    switch (i) {
    case S_GORCL:
    case S_GOTCL:
    case S_TORL:
    case S_TOTL: return v; /* 64-bit counters clear when the high half is read */
    case S_GORCH:
    case S_GOTCH:
    case S_TORH:
    case S_TOTH: s->stat[i - 1] = 0; break;
    default: break;
    }
    s->stat[i] = 0;
    return v;
}

static uint32_t reg_read(e1000 *s, uint32_t off)
{
    off &= ~3u;
    if (off >= R_STATS && off < R_STATS + 4 * STAT_WORDS) return stat_read(s, (off - R_STATS) / 4);
    if (off >= REG_WORDS * 4) {
        s->st.bad_register_accesses++;
        nm_debug(E1000, "%s: read of unmodelled register 0x%05x", s->name, off);
        return 0;
    }
    switch (off) {
    case R_STATUS: {
        uint32_t v = 0;
        if (link_up(s) && (REG(s, R_CTRL) & CTRL_SLU))
            v = STATUS_FD | STATUS_LU | STATUS_SPEED_1000 | STATUS_ASDV_1000;
        return v;
    }
    case R_EECD: return eeprom_read_eecd(s);
    case R_ICR: { /* clear on read (SDM 13.4.17) */
        uint32_t v = REG(s, R_ICR);
        REG(s, R_ICR) = 0;
        update_irq(s);
        return v;
    }
    case R_ICS:
    case R_IMC: return 0; /* write-only */
    default: return REG(s, off);
    }
}

static void reg_write(e1000 *s, uint32_t off, uint32_t v)
{
    off &= ~3u;
    if (off >= REG_WORDS * 4 || (off >= R_STATS && off < R_STATS + 4 * STAT_WORDS)) {
        if (off >= REG_WORDS * 4) s->st.bad_register_accesses++;
        nm_debug(E1000, "%s: write 0x%08x to read-only/unmodelled register 0x%05x ignored", s->name,
                 v, off);
        return;
    }
    switch (off) {
    case R_CTRL:
        if (v & CTRL_RST) { /* global reset, self-clearing (SDM 13.4.1) */
            s->st.mac_resets++;
            nm_debug(E1000, "%s: device reset", s->name);
            mac_reset(s);
            return;
        }
        if (v & CTRL_PHY_RST) phy_reset(s);
        REG(s, R_CTRL) = v & ~(CTRL_RST | CTRL_PHY_RST);
        return;
    case R_STATUS: return;
    case R_EECD: eeprom_write_eecd(s, v); return;
    case R_EERD: /* read a word through the register (SDM 13.4.4) */
        if (v & EERD_START) {
            unsigned a = (v >> 8) & 0xff;
            uint16_t w = a < EEPROM_WORDS ? s->eeprom[a] : 0xffff;
            REG(s, R_EERD) = (uint32_t)w << 16 | (v & 0xff00) | EERD_DONE;
        } else {
            REG(s, R_EERD) = v & 0xff00;
        }
        return;
    case R_MDIC: mdic_write(s, v); return;
    case R_ICR: /* writing 1s clears them */
        REG(s, R_ICR) &= ~v;
        update_irq(s);
        return;
    case R_ICS: raise_cause(s, v & ICR_VALID); return;
    case R_IMS:
        REG(s, R_IMS) |= v & ICR_VALID;
        update_irq(s);
        return;
    case R_IMC:
        REG(s, R_IMS) &= ~v;
        update_irq(s);
        return;
    case R_ITR:
        REG(s, R_ITR) = v & 0xffff;
        update_irq(s);
        return;
    case R_RCTL: REG(s, R_RCTL) = v & 0x07fffffeu; return;
    case R_RDBAL:
    case R_TDBAL:
        REG(s, off) = v & ~0xfu; /* 16-byte aligned */
        return;
    case R_RDLEN:
    case R_TDLEN:
        REG(s, off) = v & 0xfff80u; /* multiple of 128 (SDM 13.4.27) */
        return;
    case R_RDH:
    case R_RDT: REG(s, off) = v & 0xffff; return;
    case R_TDH: REG(s, off) = v & 0xffff; return;
    case R_TDT:
        REG(s, off) = v & 0xffff;
        tx_schedule(s, now_ns(s));
        return;
    case R_TCTL:
        REG(s, off) = v;
        if (v & TCTL_EN) tx_schedule(s, now_ns(s));
        return;
    case R_RDTR:
        REG(s, off) = v & 0xffff;
        if ((v & DELAY_FPD) &&
            (nm_timer_pending(&s->rdtr_timer) || nm_timer_pending(&s->radv_timer)))
            rx_timer_fire(s, 0);
        return;
    case R_TIDV:
        REG(s, off) = v & 0xffff;
        if ((v & DELAY_FPD) &&
            (nm_timer_pending(&s->tidv_timer) || nm_timer_pending(&s->tadv_timer)))
            tx_timer_fire(s, 0);
        return;
    default: REG(s, off) = v; return;
    }
}

static uint32_t mmio_read(void *opaque, uint32_t offset, unsigned size)
{
    e1000 *s = opaque;
    nm_pci_bus_timing_read(&s->bus);
    s->st.mmio_reads++;
    uint32_t v = reg_read(s, offset);
    if (size == 4) return v;
    return (v >> (8 * (offset & 3))) & (size == 1 ? 0xffu : 0xffffu);
}

static void mmio_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    e1000 *s = opaque;
    nm_pci_bus_timing_write(&s->bus);
    s->st.mmio_writes++;
    if (size != 4) { /* a partial write: merge into the register as stored */
        unsigned sh = 8 * (offset & 3);
        uint32_t mask = (size == 1 ? 0xffu : 0xffffu) << sh;
        uint32_t cur = (offset & ~3u) < REG_WORDS * 4 ? s->regs[(offset & ~3u) / 4] : 0;
        value = (cur & ~mask) | ((value << sh) & mask);
    }
    reg_write(s, offset, value);
}

static const nm_mmio_ops e1000_mmio_ops = {mmio_read, mmio_write};

/* I/O BAR: IOADDR at +0, IODATA at +4 (SDM 13.2.1). */
static uint32_t io_read(void *opaque, uint32_t offset, unsigned size)
{
    e1000 *s = opaque;
    nm_pci_bus_timing_read(&s->bus);
    s->st.io_reads++;
    uint32_t v = 0;
    if (offset < 4)
        v = s->ioaddr;
    else
        v = (s->ioaddr & 0x1ffff) < MMIO_SIZE ? reg_read(s, s->ioaddr & 0x1fffc) : 0;
    return size == 4 ? v : v & (size == 1 ? 0xffu : 0xffffu);
}

static void io_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    e1000 *s = opaque;
    nm_pci_bus_timing_write(&s->bus);
    s->st.io_writes++;
    if (size != 4) {
        s->st.bad_register_accesses++;
        nm_debug(E1000, "%s: %u-byte I/O write at +%u ignored (IOADDR/IODATA are dwords)", s->name,
                 size, offset);
        return;
    }
    if (offset < 4)
        s->ioaddr = value & 0x1fffc;
    else
        reg_write(s, s->ioaddr, value);
}

static const nm_io_ops e1000_io_ops = {io_read, io_write, NULL};

/* ---- the device class ---- */

static void e1000_destroy(void *opaque);

static void *e1000_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    const uint8_t defmac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
    uint32_t rd_clocks = NM_PCI_READ_CLOCKS, wr_clocks = NM_PCI_WRITE_CLOCKS;
    if (cfg &&
        (!nm_devcfg_u32(cfg, "pci_read_clocks", NM_PCI_READ_CLOCKS, 0, 64, &rd_clocks, err) ||
         !nm_devcfg_u32(cfg, "pci_write_clocks", NM_PCI_WRITE_CLOCKS, 0, 64, &wr_clocks, err)))
        return NULL;
    e1000 *s = g_new0(e1000, 1);
    s->m = m;
    s->name = g_strdup(cfg && cfg->name ? cfg->name : "e1000");
    if (cfg && !nm_devcfg_mac(cfg, "mac", defmac, s->mac, err)) goto fail;
    if (!cfg) memcpy(s->mac, defmac, 6);
    s->tx_buf = g_malloc(MAX_TX_PACKET);
    nm_timer_init(&s->itr_timer, itr_expired, s, "e1000-itr");
    nm_timer_init(&s->rdtr_timer, rx_timer_fire, s, "e1000-rdtr");
    nm_timer_init(&s->radv_timer, rx_timer_fire, s, "e1000-radv");
    nm_timer_init(&s->tidv_timer, tx_timer_fire, s, "e1000-tidv");
    nm_timer_init(&s->tadv_timer, tx_timer_fire, s, "e1000-tadv");
    nm_timer_init(&s->tx_timer, tx_run, s, "e1000-tx");
    nm_pci_bus_timing_init(&s->bus, &m->clock, s->name, rd_clocks, wr_clocks);
    eeprom_build(s);
    phy_reset(s);

    /* PCI identity (SDM 4.1, Table 4-1): 8086:100E rev 02, class 02/00/00,
     * subsystem 8086:001E, INTA. */
    nm_pci_device_init(&s->pci, s->name, 0x8086, 0x100e, 0x02, 0x020000, 1);
    s->pci.config[NM_PCI_SUBSYS_VENDOR] = 0x86;
    s->pci.config[NM_PCI_SUBSYS_VENDOR + 1] = 0x80;
    s->pci.config[NM_PCI_SUBSYS_ID] = 0x1e;
    s->pci.config[NM_PCI_SUBSYS_ID + 1] = 0x00;
    s->pci.config[NM_PCI_MIN_GNT] = 0xff;
    if (!nm_pci_device_set_bar_mem(&s->pci, 0, MMIO_SIZE, false, &e1000_mmio_ops, s, &s->bus.cost,
                                   err) ||
        !nm_pci_device_set_bar_io(&s->pci, 1, IO_SIZE, &e1000_io_ops, s, &s->bus.cost, err))
        goto fail;
    if (!nm_pci_register(nm_pci_host_find(m), &s->pci, -1, err)) goto fail;

    s->ep.name = s->name;
    s->ep.opaque = s;
    s->ep.receive = endpoint_receive;
    mac_reset(s);
    const char *net = cfg ? nm_devcfg_get(cfg, "net") : NULL;
    const char *capture = cfg ? nm_devcfg_get(cfg, "capture") : NULL;
    if (net) {
        s->link = nm_net_attach(m, &s->ep, net, WIRE_BPS, capture, cfg->origin, err);
        if (!s->link) goto fail;
    } else if (capture) {
        nm_dev_warn(E1000, s,
                    "%s: capture= without net=: the cable is unplugged, nothing to capture",
                    s->name);
    }
    return s;
fail:
    e1000_destroy(s);
    return NULL;
}

static void e1000_destroy(void *opaque)
{
    e1000 *s = opaque;
    nm_clock *c = &s->m->clock;
    nm_timer_cancel(c, &s->itr_timer);
    nm_timer_cancel(c, &s->rdtr_timer);
    nm_timer_cancel(c, &s->radv_timer);
    nm_timer_cancel(c, &s->tidv_timer);
    nm_timer_cancel(c, &s->tadv_timer);
    nm_timer_cancel(c, &s->tx_timer);
    nm_pci_unregister(&s->pci);
    g_free(s->tx_buf);
    g_free(s->name);
    g_free(s);
}

static void e1000_reset(void *opaque)
{
    e1000 *s = opaque;
    mac_reset(s);
    phy_reset(s);
}

static void e1000_report(void *opaque, nm_report *r)
{
    e1000 *s = opaque;
#define NM_E1000_REPORT(name) nm_report_u64(r, #name, s->st.name);
    NM_E1000_COUNTERS(NM_E1000_REPORT)
#undef NM_E1000_REPORT
    nm_report_u64(r, "pci_reads", s->bus.reads);
    nm_report_u64(r, "pci_writes", s->bus.writes);
    nm_report_u64(r, "pci_wait_clocks", nm_pci_bus_timing_wait_clocks(&s->bus));
    nm_report_u64(r, "dma_bytes_read", s->pci.dma_bytes_read);
    nm_report_u64(r, "dma_bytes_written", s->pci.dma_bytes_written);
    nm_report_u64(r, "dma_refused", s->pci.dma_refused);
}

const nm_e1000_stats *nm_e1000_get_stats(const void *dev)
{
    return &((const e1000 *)dev)->st;
}

static void e1000_frames(const void *opaque, uint64_t *tx, uint64_t *rx)
{
    const e1000 *s = opaque;
    *tx = s->st.tx_frames;
    *rx = s->st.rx_frames;
}

uint64_t nm_e1000_pci_wait_clocks(const void *dev)
{
    return nm_pci_bus_timing_wait_clocks(&((const e1000 *)dev)->bus);
}

static void e1000_snapshot(void *opaque, nm_snap *s)
{
    e1000 *e = opaque;
    nm_snap_u32s(s, "regs", e->regs, REG_WORDS);
    nm_snap_u32s(s, "stat", e->stat, STAT_WORDS);
    nm_snap_u32(s, "ioaddr", &e->ioaddr);
    nm_snap_u16s(s, "eeprom", e->eeprom, EEPROM_WORDS);
    nm_snap_u32(s, "ee.eecd", &e->ee.eecd);
    nm_snap_uint(s, "ee.bits_in", &e->ee.bits_in);
    nm_snap_u32(s, "ee.command", &e->ee.command);
    nm_snap_bool(s, "ee.reading", &e->ee.reading);
    nm_snap_u16(s, "ee.word", &e->ee.word);
    nm_snap_uint(s, "ee.out_bits", &e->ee.out_bits);
    nm_snap_bool(s, "ee.data_out", &e->ee.data_out);
    nm_snap_u16s(s, "phy", e->phy, 32);
    nm_snap_bool(s, "irq_level", &e->irq_level);
    nm_snap_u64(s, "last_irq_ns", &e->last_irq_ns);
    nm_snap_bool(s, "irq_ever", &e->irq_ever);
    nm_snap_timer(s, "itr_timer", &e->itr_timer);
    nm_snap_timer(s, "rdtr_timer", &e->rdtr_timer);
    nm_snap_timer(s, "radv_timer", &e->radv_timer);
    nm_snap_timer(s, "tidv_timer", &e->tidv_timer);
    nm_snap_timer(s, "tadv_timer", &e->tadv_timer);
    nm_snap_u8(s, "ctx.ipcss", &e->ctx.ipcss);
    nm_snap_u8(s, "ctx.ipcso", &e->ctx.ipcso);
    nm_snap_u8(s, "ctx.tucss", &e->ctx.tucss);
    nm_snap_u8(s, "ctx.tucso", &e->ctx.tucso);
    nm_snap_u16(s, "ctx.ipcse", &e->ctx.ipcse);
    nm_snap_u16(s, "ctx.tucse", &e->ctx.tucse);
    nm_snap_u32(s, "ctx.paylen", &e->ctx.paylen);
    nm_snap_u8(s, "ctx.tucmd", &e->ctx.tucmd);
    nm_snap_u8(s, "ctx.hdrlen", &e->ctx.hdrlen);
    nm_snap_u16(s, "ctx.mss", &e->ctx.mss);
    nm_snap_var_into(s, "tx_buf", e->tx_buf, MAX_TX_PACKET, &e->tx_len);
    nm_snap_bool(s, "tx_tse", &e->tx_tse);
    nm_snap_bool(s, "tx_ixsm", &e->tx_ixsm);
    nm_snap_bool(s, "tx_txsm", &e->tx_txsm);
    nm_snap_bool(s, "tx_legacy_ic", &e->tx_legacy_ic);
    nm_snap_bool(s, "tx_vle", &e->tx_vle);
    nm_snap_bool(s, "tx_ifcs", &e->tx_ifcs);
    nm_snap_bool(s, "tx_oversize", &e->tx_oversize);
    nm_snap_u8(s, "tx_cso", &e->tx_cso);
    nm_snap_u8(s, "tx_css", &e->tx_css);
    nm_snap_u16(s, "tx_vlan", &e->tx_vlan);
    nm_snap_u32s(s, "tx_wb_addr", e->tx_wb_addr, G_N_ELEMENTS(e->tx_wb_addr));
    nm_snap_uint(s, "tx_wb_count", &e->tx_wb_count);
    nm_snap_check(s, e->tx_wb_count <= G_N_ELEMENTS(e->tx_wb_addr), "tx_wb_count");
    nm_snap_bool(s, "tx_wb_ide_all", &e->tx_wb_ide_all);
    nm_snap_u64(s, "wire_free_ns", &e->wire_free_ns);
    nm_snap_timer(s, "tx_timer", &e->tx_timer);
    nm_snap_u64(s, "tx_pending_ns", &e->tx_pending_ns);
    nm_snap_bool(s, "tx_have_packet", &e->tx_have_packet);
#define E1000_SNAP_FIELD(name) nm_snap_u64(s, "st." #name, &e->st.name);
    NM_E1000_COUNTERS(E1000_SNAP_FIELD)
#undef E1000_SNAP_FIELD
    nm_pci_bus_timing_snapshot(&e->bus, s);
}

static const char *const e1000_keys[] = {
    "mac", "net", "capture", "pci_read_clocks", "pci_write_clocks", NULL};

const nm_device_class nm_e1000_class = {
    .name = "e1000",
    .help = "Intel 82540EM gigabit NIC on PCI (8086:100E): mac=, net=, capture=FILE, "
            "pci_read_clocks=10, pci_write_clocks=3",
    .keys = e1000_keys,
    .create = e1000_create,
    .reset = e1000_reset,
    .destroy = e1000_destroy,
    .report = e1000_report,
    .frames = e1000_frames,
    .snapshot = e1000_snapshot,
    .snapshot_version = 1,
};
