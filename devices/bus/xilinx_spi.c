/* Xilinx XPS SPI / AXI Quad SPI (standard mode, legacy register map) as an
 * SPI master on a PCI card, the way Linux's drivers/spi/spi-xilinx.c drives
 * it.  Sources: Xilinx DS570 "XPS Serial Peripheral Interface (SPI)
 * v2.00b" and PG153 "AXI Quad SPI" (register descriptions, "Legacy
 * Mode"); section names in the comments are PG153's.  docs/spi.md.
 *
 *   BAR0  4 KB memory: the core's registers at 0x1C..0x78, the rest reads 0
 *   INTA  the core's IP2INTC_Irpt (DGIER.GIE && (IPISR & IPIER)), level
 *
 * Timing.  Register accesses cost PCI target cycles (nm_pci_bus_timing).
 * Shifting runs on the virtual clock: a byte written to the TX FIFO starts
 * when the transmitter is enabled (CR.SPE, CR.MASTER, !CR.INHIBIT) and the
 * shift register is idle, takes 8 SCLK periods (nm_spi_bytes_ns), and the
 * next FIFO byte follows back to back.  Byte k of a burst that started at
 * t0 ends at exactly t0 + bytes_ns(k + 1).  The model is lazy: completed
 * bytes are exchanged with the selected device when the CPU next touches
 * the core (or at the timer armed for the interrupt), so status registers
 * are exact at every access without an event per byte. */
#include "devices/bus/xilinx_spi.h"

#include <glib.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "emu/core/clock.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define MAX_FIFO 256

/* SPICR (PG153 "SPI Control Register") */
#define CR_LOOP        (1u << 0)
#define CR_SPE         (1u << 1)
#define CR_MASTER      (1u << 2)
#define CR_CPOL        (1u << 3)
#define CR_CPHA        (1u << 4)
#define CR_TXFIFO_RST  (1u << 5) /* self-clearing */
#define CR_RXFIFO_RST  (1u << 6) /* self-clearing */
#define CR_MANUAL_SS   (1u << 7)
#define CR_INHIBIT     (1u << 8)
#define CR_LSB_FIRST   (1u << 9)
#define CR_WRITABLE    0x39fu
#define CR_RESET_VALUE 0x180u
/* SPISR (PG153 "SPI Status Register") */
#define SR_RX_EMPTY   (1u << 0)
#define SR_RX_FULL    (1u << 1)
#define SR_TX_EMPTY   (1u << 2)
#define SR_TX_FULL    (1u << 3)
#define SR_SLAVE_MODE (1u << 5) /* 1: not selected as a slave */
/* IPISR / IPIER (PG153 "IP Interrupt Status Register") */
#define INT_MODF         (1u << 0)
#define INT_DTR_EMPTY    (1u << 2)
#define INT_DRR_FULL     (1u << 4)
#define INT_DRR_OVERRUN  (1u << 5)
#define INT_TX_HALF      (1u << 6)
#define INT_DRR_NOTEMPTY (1u << 8)
#define INT_MASK         0x1ffu
#define DGIER_GIE        (1u << 31)
#define SRR_RESET        0x0000000au

typedef struct xspi {
    nm_machine *m;
    char *name;
    nm_pci_device pci;
    nm_pci_bus_timing bus;
    nm_spi_bus *spi;
    unsigned depth, num_cs;
    bool irq_wired;

    uint32_t cr, ssr, dgier, ipisr, ipier;
    uint8_t txf[MAX_FIFO], rxf[MAX_FIFO];
    unsigned tx_head, tx_count, rx_head, rx_count;

    /* The shift register: the byte in flight and the burst it belongs to. */
    bool shifting;
    uint8_t shift_byte;
    uint64_t burst_t0_ns; /* when the burst's first byte started */
    uint64_t burst_index; /* bytes of the burst completed */
    bool auto_ss;         /* automatic slave select asserted for this burst */
    nm_timer timer;
    bool irq_level;

    nm_xspi_stats st;
} xspi;

static uint64_t now_ns(xspi *s)
{
    return nm_clock_now_ns(&s->m->clock);
}

static uint8_t bit_reverse(uint8_t v)
{
    v = (uint8_t)((v & 0xf0) >> 4 | (v & 0x0f) << 4);
    v = (uint8_t)((v & 0xcc) >> 2 | (v & 0x33) << 2);
    return (uint8_t)((v & 0xaa) >> 1 | (v & 0x55) << 1);
}

static uint32_t cs_mask(const xspi *s)
{
    return s->num_cs >= 32 ? 0xffffffffu : (1u << s->num_cs) - 1u;
}

/* The SS outputs: SSR (active low) in manual mode, or during a burst in
 * automatic mode; nothing unless the core is a master (PG153 "Slave
 * Select Register"). */
static void update_cs(xspi *s)
{
    uint32_t lines = 0;
    if (s->cr & CR_MASTER) {
        if ((s->cr & CR_MANUAL_SS) || s->auto_ss) lines = ~s->ssr & cs_mask(s);
    }
    nm_spi_bus_set_cs(s->spi, lines);
}

static void update_irq(xspi *s)
{
    bool level = (s->dgier & DGIER_GIE) && (s->ipisr & s->ipier & INT_MASK);
    if (level == s->irq_level) return;
    s->irq_level = level;
    if (level) s->st.interrupts++;
    if (s->irq_wired) nm_pci_set_irq(&s->pci, level);
}

static bool can_shift(const xspi *s)
{
    return (s->cr & (CR_SPE | CR_MASTER)) == (CR_SPE | CR_MASTER) && !(s->cr & CR_INHIBIT);
}

static uint8_t tx_pop(xspi *s)
{
    uint8_t v = s->txf[s->tx_head];
    s->tx_head = (s->tx_head + 1) % s->depth;
    s->tx_count--;
    if (s->tx_count == s->depth / 2 && s->depth > 1) s->ipisr |= INT_TX_HALF;
    return v;
}

/* Byte `burst_index` of the burst is complete: exchange it on the bus. */
static void complete_byte(xspi *s)
{
    uint8_t out = s->shift_byte, in;
    if (s->cr & CR_LSB_FIRST) out = bit_reverse(out);
    if (s->cr & CR_LOOP)
        in = out; /* local loopback: the receiver hears the transmitter */
    else
        in = nm_spi_bus_exchange(s->spi, out);
    if (s->cr & CR_LSB_FIRST) in = bit_reverse(in);
    s->st.bytes++;
    s->burst_index++;
    if (s->rx_count == s->depth) {
        s->ipisr |= INT_DRR_OVERRUN; /* the byte is lost (PG153: DRR overrun) */
        s->st.rx_fifo_overruns++;
    } else {
        s->rxf[(s->rx_head + s->rx_count) % s->depth] = in;
        s->rx_count++;
        s->ipisr |= INT_DRR_NOTEMPTY;
        if (s->rx_count == s->depth) s->ipisr |= INT_DRR_FULL;
    }
}

static void start_burst(xspi *s, uint64_t t)
{
    s->shifting = true;
    s->burst_t0_ns = t;
    s->burst_index = 0;
    s->shift_byte = tx_pop(s);
    s->st.bursts++;
    if (!(s->cr & CR_MANUAL_SS)) {
        s->auto_ss = true;
        update_cs(s);
    }
}

static uint64_t byte_end_ns(const xspi *s, uint64_t index)
{
    return s->burst_t0_ns + nm_spi_bytes_ns(nm_spi_bus_sclk(s->spi), index + 1);
}

/* Completes every byte whose 8 SCLKs have ended by `t`. */
static void run_to(xspi *s, uint64_t t)
{
    while (s->shifting && byte_end_ns(s, s->burst_index) <= t) {
        complete_byte(s);
        if (can_shift(s) && s->tx_count) {
            s->shift_byte = tx_pop(s); /* back to back: same burst */
            continue;
        }
        s->shifting = false;
        /* The FIFO ran dry with the last bit out (PG153: DTR empty). */
        if (!s->tx_count) s->ipisr |= INT_DTR_EMPTY;
        if (s->auto_ss) {
            s->auto_ss = false;
            update_cs(s);
        }
    }
}

/* Arms the timer for the next moment the interrupt output can change: the
 * end of the next byte if a per-byte cause is enabled, else the end of the
 * burst (the FIFO drained: DTR empty). */
static void arm_timer(xspi *s)
{
    nm_clock *c = &s->m->clock;
    if (!s->shifting || !(s->dgier & DGIER_GIE) || !(s->ipier & INT_MASK) || !s->irq_wired) {
        nm_timer_cancel(c, &s->timer);
        return;
    }
    uint64_t idx = s->burst_index;
    if (!(s->ipier & (INT_DRR_NOTEMPTY | INT_DRR_FULL | INT_DRR_OVERRUN | INT_TX_HALF)) &&
        can_shift(s))
        idx += s->tx_count;
    nm_timer_at_ns(c, &s->timer, byte_end_ns(s, idx));
}

/* Bring the shifter up to now, start a burst if one can start, and settle
 * the interrupt output. */
static void settle(xspi *s)
{
    uint64_t t = now_ns(s);
    run_to(s, t);
    if (!s->shifting && can_shift(s) && s->tx_count) start_burst(s, t);
    update_irq(s);
    arm_timer(s);
}

static void timer_fired(void *opaque, uint64_t late)
{
    (void)late;
    settle(opaque);
}

static void core_reset(xspi *s)
{
    s->cr = CR_RESET_VALUE;
    s->ssr = 0xffffffffu & cs_mask(s);
    s->dgier = s->ipisr = s->ipier = 0;
    s->tx_head = s->tx_count = s->rx_head = s->rx_count = 0;
    s->shifting = false;
    s->auto_ss = false;
    nm_timer_cancel(&s->m->clock, &s->timer);
    update_cs(s);
    update_irq(s);
}

static uint32_t sr_value(const xspi *s)
{
    uint32_t v = SR_SLAVE_MODE;
    if (!s->rx_count) v |= SR_RX_EMPTY;
    if (s->rx_count == s->depth) v |= SR_RX_FULL;
    if (!s->tx_count) v |= SR_TX_EMPTY;
    if (s->tx_count == s->depth) v |= SR_TX_FULL;
    return v;
}

static uint32_t reg_read(xspi *s, uint32_t reg)
{
    switch (reg) {
    case NM_XSPI_DGIER: return s->dgier;
    case NM_XSPI_IPISR: return s->ipisr;
    case NM_XSPI_IPIER: return s->ipier;
    case NM_XSPI_CR: return s->cr;
    case NM_XSPI_SR: return sr_value(s);
    case NM_XSPI_DRR: {
        if (!s->rx_count) { /* PG153: reading an empty DRR returns stale data */
            s->st.rx_fifo_underruns++;
            nm_debug(SPI, "%s: read of an empty receive FIFO", s->name);
            return 0;
        }
        uint8_t v = s->rxf[s->rx_head];
        s->rx_head = (s->rx_head + 1) % s->depth;
        s->rx_count--;
        return v;
    }
    case NM_XSPI_SSR: return s->ssr;
    case NM_XSPI_TXOCY: return s->depth > 1 && s->tx_count ? s->tx_count - 1 : 0;
    case NM_XSPI_RXOCY: return s->depth > 1 && s->rx_count ? s->rx_count - 1 : 0;
    case NM_XSPI_SRR:
    case NM_XSPI_DTR: return 0; /* write-only */
    default:
        s->st.bad_accesses++;
        nm_debug(SPI, "%s: read of unimplemented offset 0x%x", s->name, reg);
        return 0;
    }
}

static void reg_write(xspi *s, uint32_t reg, uint32_t v)
{
    switch (reg) {
    case NM_XSPI_DGIER: s->dgier = v & DGIER_GIE; break;
    case NM_XSPI_IPISR: /* toggle on write (PG153 "IPISR") */ s->ipisr ^= v & INT_MASK; break;
    case NM_XSPI_IPIER: s->ipier = v & INT_MASK; break;
    case NM_XSPI_SRR:
        if (v != SRR_RESET) {
            s->st.bad_accesses++;
            nm_debug(SPI, "%s: SRR write 0x%x is not the reset key 0xA: ignored", s->name, v);
            break;
        }
        s->st.resets++;
        core_reset(s);
        break;
    case NM_XSPI_CR:
        if (v & CR_TXFIFO_RST) s->tx_head = s->tx_count = 0;
        if (v & CR_RXFIFO_RST) s->rx_head = s->rx_count = 0;
        s->cr = v & CR_WRITABLE;
        if (!(s->cr & (CR_SPE | CR_MASTER)) && s->shifting) {
            /* Disabling the core aborts the byte in flight. */
            s->shifting = false;
            s->auto_ss = false;
        }
        update_cs(s);
        break;
    case NM_XSPI_DTR:
        if (s->tx_count == s->depth) { /* write to a full FIFO: lost */
            s->st.tx_fifo_overflows++;
            nm_debug(SPI, "%s: write to a full transmit FIFO dropped", s->name);
            break;
        }
        s->txf[(s->tx_head + s->tx_count) % s->depth] = (uint8_t)v;
        s->tx_count++;
        break;
    case NM_XSPI_SSR:
        s->ssr = v & cs_mask(s);
        update_cs(s);
        break;
    case NM_XSPI_SR:
    case NM_XSPI_DRR:
    case NM_XSPI_TXOCY:
    case NM_XSPI_RXOCY: break; /* read-only */
    default:
        s->st.bad_accesses++;
        nm_debug(SPI, "%s: write 0x%x to unimplemented offset 0x%x", s->name, v, reg);
        break;
    }
}

/* The core's registers are 32 bits wide on a 32-bit bus (PG153: "all
 * registers are accessed as 32-bit words"); narrower accesses at a
 * register's address act on the whole word, others are ignored. */
static uint32_t mmio_read(void *opaque, uint32_t offset, unsigned size)
{
    xspi *s = opaque;
    nm_pci_bus_timing_read(&s->bus);
    s->st.reg_reads++;
    run_to(s, now_ns(s));
    uint32_t v = reg_read(s, offset & ~3u);
    settle(s);
    if (offset & 3) v >>= 8 * (offset & 3);
    return size == 4 ? v : v & ((1u << (8 * size)) - 1u);
}

static void mmio_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    xspi *s = opaque;
    nm_pci_bus_timing_write(&s->bus);
    s->st.reg_writes++;
    if (offset & 3) {
        s->st.bad_accesses++;
        nm_dev_warn(SPI, s, "%s: %u-byte write at unaligned offset 0x%x ignored", s->name, size,
                    offset);
        return;
    }
    run_to(s, now_ns(s));
    reg_write(s, offset, value);
    settle(s);
}

static const nm_mmio_ops xspi_mmio_ops = {mmio_read, mmio_write};

/* ---- the device class ---- */

static void xspi_destroy(void *opaque);

static void *xspi_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t sclk = 25000000, fifo = 16, num_cs = 1, irq = 1, dev_id = NM_XSPI_PCI_DEVICE;
    uint32_t rd_clocks = NM_PCI_READ_CLOCKS, wr_clocks = NM_PCI_WRITE_CLOCKS;
    const char *origin = cfg ? cfg->origin : "xilinx-spi";
    if (cfg && (!nm_devcfg_u32(cfg, "sclk", sclk, 100000, 100000000, &sclk, err) ||
                !nm_devcfg_u32(cfg, "fifo", fifo, 1, 256, &fifo, err) ||
                !nm_devcfg_u32(cfg, "chip_selects", num_cs, 1, NM_SPI_MAX_CS, &num_cs, err) ||
                !nm_devcfg_u32(cfg, "irq", irq, 0, 1, &irq, err) ||
                !nm_devcfg_u32(cfg, "pci_device", dev_id, 0, 0xfffe, &dev_id, err) ||
                !nm_devcfg_u32(cfg, "pci_read_clocks", rd_clocks, 0, 64, &rd_clocks, err) ||
                !nm_devcfg_u32(cfg, "pci_write_clocks", wr_clocks, 0, 64, &wr_clocks, err)))
        return NULL;
    /* C_FIFO_DEPTH: 0 (no FIFO: one data register), 16 or 256 (PG153
     * "Design Parameters"). */
    if (fifo != 1 && fifo != 16 && fifo != 256) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: fifo: %u is not a depth of the core (accepted: 1 (no FIFO), 16, 256)",
                    origin, fifo);
        return NULL;
    }
    xspi *s = g_new0(xspi, 1);
    s->m = m;
    s->name = g_strdup(cfg && cfg->name ? cfg->name : "xilinx-spi");
    s->depth = fifo;
    s->num_cs = num_cs;
    s->irq_wired = irq != 0;
    nm_timer_init(&s->timer, timer_fired, s, "xilinx-spi");
    nm_pci_bus_timing_init(&s->bus, &m->clock, s->name, rd_clocks, wr_clocks);
    s->spi = nm_spi_bus_new(m, s->name, num_cs, sclk, err);
    if (!s->spi) goto fail;
    /* Class 0C/80/00: serial bus controller, other. */
    nm_pci_device_init(&s->pci, s->name, NM_XSPI_PCI_VENDOR, (uint16_t)dev_id, 0x00, 0x0c8000,
                       s->irq_wired ? 1 : 0);
    if (!nm_pci_device_set_bar_mem(&s->pci, 0, NM_XSPI_BAR_SIZE, false, &xspi_mmio_ops, s,
                                   &s->bus.cost, err))
        goto fail;
    if (!nm_pci_register(nm_pci_host_find(m), &s->pci, -1, err)) goto fail;
    core_reset(s);
    return s;
fail:
    xspi_destroy(s);
    return NULL;
}

static void xspi_destroy(void *opaque)
{
    xspi *s = opaque;
    nm_timer_cancel(&s->m->clock, &s->timer);
    nm_pci_unregister(&s->pci);
    g_free(s->name);
    g_free(s);
}

static void xspi_reset(void *opaque)
{
    core_reset(opaque);
}

static void xspi_report(void *opaque, nm_report *r)
{
    xspi *s = opaque;
#define NM_XSPI_REPORT(name) nm_report_u64(r, #name, s->st.name);
    NM_XSPI_COUNTERS(NM_XSPI_REPORT)
#undef NM_XSPI_REPORT
    nm_report_u64(r, "fifo_depth", s->depth);
    nm_report_u64(r, "pci_wait_clocks", nm_pci_bus_timing_wait_clocks(&s->bus));
}

nm_spi_bus *nm_xilinx_spi_bus(void *dev)
{
    return ((xspi *)dev)->spi;
}

const nm_xspi_stats *nm_xilinx_spi_stats(const void *dev)
{
    return &((const xspi *)dev)->st;
}

uint64_t nm_xilinx_spi_wait_clocks(const void *dev)
{
    return nm_pci_bus_timing_wait_clocks(&((const xspi *)dev)->bus);
}

static void xspi_snapshot(void *opaque, nm_snap *s)
{
    xspi *x = opaque;
    nm_snap_u32(s, "cr", &x->cr);
    nm_snap_u32(s, "ssr", &x->ssr);
    nm_snap_u32(s, "dgier", &x->dgier);
    nm_snap_u32(s, "ipisr", &x->ipisr);
    nm_snap_u32(s, "ipier", &x->ipier);
    nm_snap_bytes(s, "txf", x->txf, MAX_FIFO);
    nm_snap_bytes(s, "rxf", x->rxf, MAX_FIFO);
    nm_snap_uint(s, "tx_head", &x->tx_head);
    nm_snap_uint(s, "tx_count", &x->tx_count);
    nm_snap_uint(s, "rx_head", &x->rx_head);
    nm_snap_uint(s, "rx_count", &x->rx_count);
    nm_snap_check(s,
                  x->tx_head < x->depth && x->tx_count <= x->depth && x->rx_head < x->depth &&
                      x->rx_count <= x->depth,
                  "tx_head");
    nm_snap_bool(s, "shifting", &x->shifting);
    nm_snap_u8(s, "shift_byte", &x->shift_byte);
    nm_snap_u64(s, "burst_t0_ns", &x->burst_t0_ns);
    nm_snap_u64(s, "burst_index", &x->burst_index);
    nm_snap_bool(s, "auto_ss", &x->auto_ss);
    nm_snap_timer(s, "timer", &x->timer);
    nm_snap_bool(s, "irq_level", &x->irq_level);
#define XSPI_SNAP_FIELD(name) nm_snap_u64(s, "st." #name, &x->st.name);
    NM_XSPI_COUNTERS(XSPI_SNAP_FIELD)
#undef XSPI_SNAP_FIELD
    nm_pci_bus_timing_snapshot(&x->bus, s);
}

static const char *const xspi_keys[] = {
    "sclk", "fifo", "chip_selects", "irq", "pci_device", "pci_read_clocks", "pci_write_clocks",
    NULL};

const nm_device_class nm_xilinx_spi_class = {
    .name = "xilinx-spi",
    .help = "Xilinx XPS/AXI Quad SPI master on a PCI card (10ee:7011, Linux spi-xilinx): "
            "sclk=25000000, fifo=16 (1, 16, 256), chip_selects=1, irq=1 (INTA wired), "
            "pci_device=0x7011, pci_read_clocks=10, pci_write_clocks=3",
    .keys = xspi_keys,
    .create = xspi_create,
    .reset = xspi_reset,
    .destroy = xspi_destroy,
    .report = xspi_report,
    .snapshot = xspi_snapshot,
    .snapshot_version = 1,
};
