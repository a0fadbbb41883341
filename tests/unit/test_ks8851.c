/* Micrel KSZ8851SNL on the Xilinx SPI master, driven through the
 * controller's registers the way Linux's ks8851_spi.c + spi-xilinx.c do:
 * probe (soft reset, CIDER, CCR, MAC from the EEPROM), open, a frame
 * transmitted through the TXQ reaching the peer, the peer's reply read
 * through RXFCTR/RXFHSR/RXFHBCR and the RXQ, the interrupt line and its
 * causes, link status; then malformed SPI commands driven straight onto the
 * bus being survived and counted. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "devices/bus/spi.h"
#include "devices/bus/xilinx_spi.h"
#include "devices/net/ks8851.h"
#include "devices/netdev/netdev.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "emu/pc.h"
#include "emu/core/report.h"
#include "tests/unit/nic_peer_fixture.h"

#define BAR0 0xf0000000u
#define IRQ  7

/* Register offsets and bits the driver uses (drivers/net/ethernet/micrel/
 * ks8851.h names, KSZ8851SNL datasheet register map). */
enum {
    CCR = 0x08,
    MARL = 0x10,
    MARM = 0x12,
    MARH = 0x14,
    MBIR = 0x24,
    GRR = 0x26,
    TXCR = 0x70,
    TXSR = 0x72,
    RXCR1 = 0x74,
    RXCR2 = 0x76,
    TXMIR = 0x78,
    RXFHSR = 0x7c,
    RXFHBCR = 0x7e,
    TXQCR = 0x80,
    RXQCR = 0x82,
    TXFDPR = 0x84,
    RXFDPR = 0x86,
    RXDTTR = 0x8c,
    RXDBCTR = 0x8e,
    IER = 0x90,
    ISR = 0x92,
    RXFCTR = 0x9c,
    CIDER = 0xc0,
    PMECR = 0xd4,
    P1MBCR = 0xe4,
    P1MBSR = 0xe6,
    PHY1ILR = 0xe8,
    PHY1IHR = 0xea,
};
#define IRQ_LCI    0x8000
#define IRQ_TXI    0x4000
#define IRQ_RXI    0x2000
#define IRQ_RXOI   0x0800
#define IRQ_TXPSI  0x0200
#define IRQ_RXPSI  0x0100
#define IRQ_SPIBEI 0x0002
#define STD_IRQ    (IRQ_LCI | IRQ_TXI | IRQ_RXI | IRQ_SPIBEI | IRQ_TXPSI | IRQ_RXPSI)
#define RXQCR_SDA  0x0008
#define RC_RXQCR   (0x0020 | 0x0040 | 0x0080) /* RXFCTE | RXDBCTE | RXDTTE */

static const uint8_t nic_mac[6] = {0x02, 0x45, 0x31, 0x30, 0x30, 0x30};

static nm_config *cfg;
static nm_machine *m;
static void *spi_dev, *ks;
static nm_pci_device *pci;
static unsigned fid;

static void *add(const nm_device_class *cls, const char *name, const char *spec)
{
    GError *err = NULL;
    nm_devcfg *d = nm_devcfg_parse("test", spec, &err);
    g_assert_no_error(err);
    g_free(d->name);
    d->name = g_strdup(name);
    void *s = nm_machine_add_device(m, cls, d, &err);
    g_assert_no_error(err);
    nm_devcfg_free(d);
    return s;
}

static void setup_with(const char *ks_spec)
{
    GError *err = NULL;
    cfg = nm_config_new();
    g_free(cfg->cpu);
    cfg->cpu = g_strdup("pentium-100");
    cfg->ram_bytes = 4u << 20;
    m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    g_assert_nonnull(nm_machine_add_device(m, &nm_pci_host_class, NULL, &err));
    spi_dev = add(&nm_xilinx_spi_class, "spi0", "xilinx-spi,sclk=25000000");
    ks = add(&nm_ks8851_class, "eth0", ks_spec);
    pci = nm_pci_host_device(nm_pci_host_find(m), NM_PCI_DEVFN(1, 0));
    nm_pci_config_write(pci, NM_PCI_BAR0, BAR0, 4);
    nm_pci_config_write(pci, NM_PCI_COMMAND, NM_PCI_CMD_MEM, 2);
    fid = 0;
}

static void setup(void)
{
    setup_with("ks8851,spi=spi0,cs=0,irq=7,mac=02:45:31:30:30:30,net=peer");
}

static void teardown(void)
{
    nm_machine_free(m);
    nm_config_free(cfg);
}

static void run_ns(uint64_t ns)
{
    nm_clock *c = &m->clock;
    uint64_t end = nm_clock_cycles_from_ns(c, nm_clock_now_ns(c) + ns);
    while (c->deadline <= end) {
        if (c->deadline > c->cycles) c->cycles = c->deadline;
        nm_clock_run_due(c);
    }
    c->cycles = end;
}

/* ---- the controller, as spi-xilinx.c drives it (polling) ---- */

static void xw(uint32_t off, uint32_t v)
{
    nm_mem_write(m->mem, BAR0 + off, v, 4);
}
static uint32_t xr(uint32_t off)
{
    return nm_mem_read(m->mem, BAR0 + off, 4);
}

static void spi_init(void)
{
    xw(NM_XSPI_SRR, 0x0a);
    xw(NM_XSPI_IPIER, 0x04);
    xw(NM_XSPI_DGIER, 0);
    xw(NM_XSPI_SSR, 0xffff);
    xw(NM_XSPI_CR, 0x80 | 0x04 | 0x02 | 0x20 | 0x40);
}

static void cs(bool on)
{
    xw(NM_XSPI_SSR, on ? ~1u : ~0u);
}

/* xilinx_spi_txrx_bufs(): 15 words at a time, then drain the RX FIFO. */
static void txrx(const uint8_t *tx, uint8_t *rx, size_t len)
{
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < 15 ? len - done : 15;
        for (size_t i = 0; i < n; i++)
            xw(NM_XSPI_DTR, tx ? tx[done + i] : 0);
        size_t got = 0;
        unsigned guard = 0;
        while (got < n) {
            uint32_t sr = xr(NM_XSPI_SR);
            if (!(sr & 1)) {
                uint8_t v = (uint8_t)xr(NM_XSPI_DRR);
                if (rx) rx[done + got] = v;
                got++;
            }
            g_assert_cmpuint(++guard, <, 10000);
        }
        done += n;
    }
}

/* ---- ks8851_spi.c ---- */

static void mk_op(uint8_t *b, unsigned reg, unsigned op)
{
    unsigned be = reg & 2 ? 0xc : 0x3;
    uint16_t w = (uint16_t)((be << 2) | (reg << 10) | (reg >> 6) | op);
    b[0] = (uint8_t)w;
    b[1] = (uint8_t)(w >> 8);
}

static void wrreg(unsigned reg, uint16_t v)
{
    uint8_t b[4];
    mk_op(b, reg, 0x40);
    b[2] = (uint8_t)v;
    b[3] = (uint8_t)(v >> 8);
    cs(true);
    txrx(b, NULL, 4);
    cs(false);
}

static uint16_t rdreg(unsigned reg)
{
    uint8_t b[4] = {0}, r[4];
    mk_op(b, reg, 0x00);
    cs(true);
    txrx(b, r, 4);
    cs(false);
    return (uint16_t)(r[2] | r[3] << 8);
}

static void rdfifo(uint8_t *buf, size_t len)
{
    uint8_t op = 0x80;
    cs(true);
    txrx(&op, NULL, 1);
    txrx(NULL, buf, len);
    cs(false);
}

static void wrfifo(const uint8_t *frame, size_t len, bool irq)
{
    unsigned f = (fid++ & 0x3f) | (irq ? 0x8000u : 0);
    uint8_t h[5] = {0xc0, (uint8_t)f, (uint8_t)(f >> 8), (uint8_t)len, (uint8_t)(len >> 8)};
    uint8_t data[2048] = {0};
    memcpy(data, frame, len);
    cs(true);
    txrx(h, NULL, 5);
    txrx(data, NULL, (len + 3) & ~3u);
    cs(false);
}

/* ks8851_tx_work() for one frame. */
static void transmit(const uint8_t *frame, size_t len)
{
    wrreg(RXQCR, RC_RXQCR | RXQCR_SDA);
    wrfifo(frame, len, true);
    wrreg(RXQCR, RC_RXQCR);
    wrreg(TXQCR, 0x0001); /* METFE */
}

/* ks8851_net_open() */
static void net_open(void)
{
    wrreg(PMECR, rdreg(PMECR) & ~3u);
    wrreg(GRR, 0x0002);
    wrreg(GRR, 0);
    wrreg(TXCR, 0x0001 | 0x0004 | 0x0002 | 0x0008);
    wrreg(TXFDPR, 0x4000);
    wrreg(RXCR1, 0x0800 | 0x0400 | 0x0080 | 0x0020 | 0x0001);
    wrreg(RXCR2, 0x4 << 5);
    wrreg(RXDTTR, 1000);
    wrreg(RXDBCTR, 4096);
    wrreg(RXFCTR, 10);
    wrreg(RXQCR, RC_RXQCR);
    wrreg(ISR, STD_IRQ);
    wrreg(IER, STD_IRQ);
}

/* ---- tests ---- */

static void test_probe(void)
{
    setup();
    spi_init();
    /* ks8851_probe_common(): global soft reset, chip ID, CCR, self test. */
    wrreg(GRR, 0x0001);
    wrreg(GRR, 0);
    uint16_t cider = rdreg(CIDER);
    g_assert_cmphex(cider & ~0x000eu, ==, 0x8870);
    uint16_t ccr = rdreg(CCR);
    g_assert_cmphex(ccr & 0x0200, ==, 0x0200); /* EEPROM present */
    g_assert_cmphex(ccr & 0x0100, ==, 0x0100); /* SPI */
    g_assert_cmphex(rdreg(MBIR) & 0x1010, ==, 0x1010);
    /* ks8851_read_mac_addr(): MAR(i) = 0x14 - i, high byte first. */
    uint8_t mac[6];
    for (int i = 0; i < 6; i += 2) {
        uint16_t r = rdreg(0x14 - i);
        mac[i] = (uint8_t)(r >> 8);
        mac[i + 1] = (uint8_t)r;
    }
    g_assert_cmpmem(mac, 6, nic_mac, 6);
    /* ks8851_write_mac_addr() */
    wrreg(MARH, 0x0211);
    wrreg(MARM, 0x2233);
    wrreg(MARL, 0x4455);
    g_assert_cmphex(rdreg(MARM), ==, 0x2233);
    /* The PHY: ID halves swapped in hardware, link up with the peer. */
    g_assert_cmphex(rdreg(PHY1IHR), ==, 0x0022);
    g_assert_cmphex(rdreg(PHY1ILR), ==, 0x1430);
    g_assert_cmphex(rdreg(P1MBSR) & 0x0024, ==, 0x0024);
    /* Read-only registers stay put. */
    wrreg(CIDER, 0);
    g_assert_cmphex(rdreg(CIDER), ==, cider);
    /* The SPI traffic charged PCI time: each register access is 4 bytes on
     * the wire plus the controller's register accesses. */
    g_assert_cmpuint(nm_xilinx_spi_wait_clocks(spi_dev), >, 0);
    teardown();

    /* No EEPROM: MAR reads 0, CCR says so (the driver picks a random MAC). */
    setup_with("ks8851,spi=spi0,eeprom=0");
    spi_init();
    g_assert_cmphex(rdreg(CCR) & 0x0200, ==, 0);
    g_assert_cmphex(rdreg(MARH), ==, 0);
    teardown();
}

/* A 4-byte register command occupies the wire for 4 x 320 ns at 25 MHz;
 * the whole transaction costs that plus the controller's accesses. */
static void test_register_access_time(void)
{
    setup();
    spi_init();
    uint64_t t0 = nm_clock_now_ns(&m->clock);
    (void)rdreg(CIDER);
    uint64_t dt = nm_clock_now_ns(&m->clock) - t0;
    g_assert_cmpuint(dt, >=, 4 * 320);
    g_assert_cmpuint(dt, <, 4 * 320 + 20 * 300); /* a handful of polled reads */
    teardown();
}

static void test_tx_rx(void)
{
    setup();
    spi_init();
    net_open();
    g_assert_cmpuint(rdreg(TXMIR), ==, 6144);
    g_assert_false(nm_irq_level(&m->irq, IRQ));

    uint8_t f[64];
    size_t n = arp_request_to_peer(f, nic_mac);
    transmit(f, n);
    /* The frame took 4 + 44 bytes of TXQ memory until it left. */
    uint16_t txmir = rdreg(TXMIR);
    g_assert_true(txmir == 6144 - 48 || txmir == 6144);
    run_ns(2000000);
    g_assert_cmpuint(rdreg(TXMIR), ==, 6144);
    g_assert_cmpuint(peer_stats(m)->arp_requests, ==, 1);
    const nm_ks8851_stats *st = nm_ks8851_get_stats(ks);
    g_assert_cmpuint(st->tx_frames, ==, 1);
    g_assert_cmpuint(st->tx_bytes, ==, 64); /* padded to 60 + CRC */
    g_assert_cmphex(rdreg(TXSR) & 0x3f, ==, 0);
    g_assert_cmphex(rdreg(TXQCR) & 1, ==, 0); /* METFE self-cleared */

    /* The peer's ARP reply is in the RXQ: one frame is under the frame-count
     * threshold (10) and the byte threshold (4096), so RXI came from the
     * 1 ms duration timer; TXI from the frame's TXIC. */
    g_assert_cmpuint(st->rx_frames, ==, 1);
    g_assert_true(nm_irq_level(&m->irq, IRQ));
    /* ks8851_irq() */
    uint16_t status = rdreg(ISR);
    wrreg(ISR, status);
    g_assert_cmphex(status & (IRQ_TXI | IRQ_RXI), ==, IRQ_TXI | IRQ_RXI);
    g_assert_false(nm_irq_level(&m->irq, IRQ));
    g_assert_cmpuint(rdreg(TXMIR), ==, 6144);
    unsigned rxfc = rdreg(RXFCTR) >> 8;
    g_assert_cmpuint(rxfc, ==, 1);
    uint16_t rxstat = rdreg(RXFHSR);
    unsigned rxlen = rdreg(RXFHBCR) & 0xfff;
    g_assert_cmphex(rxstat & 0x8000, ==, 0x8000); /* valid */
    g_assert_cmphex(rxstat & 0x0020, ==, 0x0020); /* unicast */
    g_assert_cmphex(rxstat & 0x0001, ==, 0);      /* CRC good */
    g_assert_cmpuint(rxlen, ==, 64);              /* includes the CRC */
    wrreg(RXFDPR, 0x4000);
    wrreg(RXQCR, RC_RXQCR | RXQCR_SDA);
    uint8_t buf[8 + 64];
    unsigned aligned = (rxlen - 4 + 3) & ~3u;
    rdfifo(buf, aligned + 8);
    /* 4 dummy bytes, status word, byte count, then the frame. */
    g_assert_cmpuint(buf[4] | buf[5] << 8, ==, rxstat);
    g_assert_cmpuint(buf[6] | buf[7] << 8, ==, rxlen);
    g_assert_cmpmem(buf + 8, 6, nic_mac, 6);
    g_assert_cmphex(buf[8 + 12], ==, 0x08);
    g_assert_cmphex(buf[8 + 13], ==, 0x06);
    g_assert_cmphex(buf[8 + 21], ==, 0x02); /* ARP reply */
    wrreg(RXQCR, RC_RXQCR | 0x0001);        /* RRXEF: release */
    g_assert_cmpuint(rdreg(RXFCTR) >> 8, ==, 0);
    g_assert_cmphex(rdreg(RXFHSR), ==, 0);

    /* ks8851_rxctrl_work(): stopping RX raises RXPSI, the handler
     * re-enables. */
    wrreg(RXCR1, 0);
    g_assert_true(nm_irq_level(&m->irq, IRQ));
    status = rdreg(ISR);
    g_assert_cmphex(status & IRQ_RXPSI, ==, IRQ_RXPSI);
    wrreg(ISR, status);
    wrreg(RXCR1, 0x0800 | 0x0400 | 0x0080 | 0x0020 | 0x0001);
    g_assert_false(nm_irq_level(&m->irq, IRQ));

    /* Link: powering the PHY down drops the link with LCI. */
    wrreg(P1MBCR, rdreg(P1MBCR) | 0x0800);
    g_assert_cmphex(rdreg(P1MBSR) & 0x0004, ==, 0);
    g_assert_cmphex(rdreg(ISR) & IRQ_LCI, ==, IRQ_LCI);
    wrreg(ISR, IRQ_LCI);
    wrreg(P1MBCR, rdreg(P1MBCR) & ~0x0800u);
    g_assert_cmphex(rdreg(P1MBSR) & 0x0004, ==, 0x0004);
    teardown();
}

/* TXCR.TXPE pads to 60 bytes, TXCR.TXCRC adds the FCS; with both off the
 * frame goes out as written, however short (a hostile driver's 1-byte
 * frame is a 1-byte runt on the wire). */
static void test_tx_unpadded(void)
{
    static const struct {
        uint16_t txcr;
        uint64_t wire_bytes;
    } cases[] = {
        {0x0001, 1},                   /* TXE */
        {0x0001 | 0x0002, 1 + 4},      /* TXE, TXCRC */
        {0x0001 | 0x0004 | 0x0002, 64} /* TXE, TXPE, TXCRC: Linux's */
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        setup();
        spi_init();
        net_open();
        wrreg(TXCR, cases[i].txcr);
        const uint8_t one = 0x5a;
        transmit(&one, 1);
        run_ns(2000000);
        const nm_ks8851_stats *st = nm_ks8851_get_stats(ks);
        g_assert_cmpuint(st->tx_frames, ==, 1);
        g_assert_cmpuint(st->tx_bytes, ==, cases[i].wire_bytes);
        g_assert_cmpuint(rdreg(TXMIR), ==, 6144); /* sent: its memory is free */
        teardown();
    }
}

/* Two frames, read in one RXQ burst with auto-dequeue (RXQCR.ADRFE), and
 * the frame-count threshold. */
static void test_auto_dequeue(void)
{
    setup();
    spi_init();
    net_open();
    wrreg(RXFCTR, 2);
    wrreg(RXQCR, 0x0020 | 0x0010); /* RXFCTE | ADRFE */
    uint8_t f[64];
    size_t n = arp_request_to_peer(f, nic_mac);
    transmit(f, n);
    run_ns(200000);
    g_assert_false(rdreg(ISR) & IRQ_RXI); /* one frame: below the threshold */
    transmit(f, n);
    run_ns(200000);
    g_assert_cmphex(rdreg(ISR) & IRQ_RXI, ==, IRQ_RXI);
    g_assert_cmphex(rdreg(RXQCR) & 0x0400, ==, 0x0400); /* RXFCTS */
    wrreg(ISR, 0xffff);
    g_assert_cmpuint(rdreg(RXFCTR) >> 8, ==, 2);
    wrreg(RXFDPR, 0x4000);
    wrreg(RXQCR, 0x0020 | 0x0010 | RXQCR_SDA);
    uint8_t buf[4 + 2 * 68];
    rdfifo(buf, sizeof buf);
    g_assert_cmpuint(buf[6] | buf[7] << 8, ==, 64);
    g_assert_cmpuint(buf[4 + 68 + 2] | buf[4 + 68 + 3] << 8, ==, 64);
    g_assert_cmpmem(buf + 4 + 68 + 4, 6, nic_mac, 6);
    wrreg(RXQCR, 0x0020 | 0x0010);
    g_assert_cmpuint(rdreg(RXFCTR) >> 8, ==, 0);
    teardown();
}

/* Several frames in one TXQ write, as the ks8851-tx study's batching
 * variant writes them (guest-images/patches/ks8851-tx-batch.patch): SDA on,
 * one chip select with the command byte once and each frame's control
 * word, byte count and padded data, SDA off, one METFE for all. TXIC only
 * on the last frame: one TXI. */
static void test_tx_batch(void)
{
    setup();
    spi_init();
    net_open();
    uint8_t f[64];
    size_t n = arp_request_to_peer(f, nic_mac);
    enum { FRAMES = 3 };
    wrreg(RXQCR, RC_RXQCR | RXQCR_SDA);
    cs(true);
    uint8_t op = 0xc0;
    txrx(&op, NULL, 1);
    for (unsigned i = 0; i < FRAMES; i++) {
        unsigned ctrl = (fid++ & 0x3f) | (i == FRAMES - 1 ? 0x8000u : 0);
        uint8_t h[4] = {(uint8_t)ctrl, (uint8_t)(ctrl >> 8), (uint8_t)n, (uint8_t)(n >> 8)};
        uint8_t data[64] = {0};
        memcpy(data, f, n);
        txrx(h, NULL, 4);
        txrx(data, NULL, (n + 3) & ~3u);
    }
    cs(false);
    wrreg(RXQCR, RC_RXQCR);
    /* All three are in the TXQ, none enqueued yet: 3 x (4 + 44) bytes. */
    g_assert_cmpuint(rdreg(TXMIR), ==, 6144 - FRAMES * 48);
    const nm_ks8851_stats *st = nm_ks8851_get_stats(ks);
    g_assert_cmpuint(st->tx_frames, ==, 0);
    wrreg(TXQCR, 0x0001); /* METFE: every written frame */
    run_ns(2000000);
    g_assert_cmpuint(st->tx_frames, ==, FRAMES);
    g_assert_cmpuint(st->tx_dropped, ==, 0);
    g_assert_cmpuint(peer_stats(m)->arp_requests, ==, FRAMES);
    g_assert_cmpuint(rdreg(TXMIR), ==, 6144);
    g_assert_cmphex(rdreg(TXSR) & 0x3f, ==, FRAMES - 1); /* the last frame's ID */
    g_assert_cmphex(rdreg(TXQCR) & 1, ==, 0);
    uint16_t status = rdreg(ISR);
    g_assert_cmphex(status & IRQ_TXI, ==, IRQ_TXI);
    g_assert_cmphex(status & IRQ_SPIBEI, ==, 0);
    g_assert_cmpuint(st->spi_bad_commands, ==, 0);
    g_assert_cmpuint(st->fifo_misuse, ==, 0);
    teardown();
}

/* Malformed SPI traffic straight onto the bus. */
static void test_hostile(void)
{
    setup();
    nm_spi_bus *b = nm_xilinx_spi_bus(spi_dev);
    const nm_ks8851_stats *st = nm_ks8851_get_stats(ks);
    /* Enable the SPI bus error interrupt, directly. */
    nm_spi_bus_set_cs(b, 1);
    uint8_t op[2];
    mk_op(op, IER, 0x40);
    nm_spi_bus_exchange(b, op[0]);
    nm_spi_bus_exchange(b, op[1]);
    nm_spi_bus_exchange(b, 0x02);
    nm_spi_bus_exchange(b, 0x00);
    nm_spi_bus_set_cs(b, 0);
    /* A register command cut after one byte. */
    nm_spi_bus_set_cs(b, 1);
    nm_spi_bus_exchange(b, 0x4c);
    nm_spi_bus_set_cs(b, 0);
    g_assert_cmpuint(st->spi_bad_commands, ==, 1);
    g_assert_true(nm_irq_level(&m->irq, IRQ));
    /* FIFO commands without SDA. */
    nm_spi_bus_set_cs(b, 1);
    nm_spi_bus_exchange(b, 0x80);
    for (int i = 0; i < 10; i++)
        g_assert_cmphex(nm_spi_bus_exchange(b, 0), ==, 0);
    nm_spi_bus_set_cs(b, 0);
    nm_spi_bus_set_cs(b, 1);
    nm_spi_bus_exchange(b, 0xc0);
    nm_spi_bus_exchange(b, 0x12);
    nm_spi_bus_set_cs(b, 0);
    g_assert_cmpuint(st->fifo_misuse, ==, 2);
    /* With SDA: a zero byte count, one too large for the TXQ, an RXQ read
     * with nothing queued. */
    nm_spi_bus_set_cs(b, 1);
    mk_op(op, RXQCR, 0x40);
    nm_spi_bus_exchange(b, op[0]);
    nm_spi_bus_exchange(b, op[1]);
    nm_spi_bus_exchange(b, RXQCR_SDA);
    nm_spi_bus_exchange(b, 0);
    nm_spi_bus_set_cs(b, 0);
    nm_spi_bus_set_cs(b, 1);
    static const uint8_t bad_tx[] = {0xc0, 0, 0, 0, 0, 1, 0x80, 0xff, 0x07};
    for (size_t i = 0; i < sizeof bad_tx; i++)
        nm_spi_bus_exchange(b, bad_tx[i]);
    for (int i = 0; i < 3000; i++)
        nm_spi_bus_exchange(b, 0xee);
    nm_spi_bus_set_cs(b, 0);
    g_assert_cmpuint(st->tx_dropped, >=, 2);
    nm_spi_bus_set_cs(b, 1);
    nm_spi_bus_exchange(b, 0x80);
    for (int i = 0; i < 64; i++)
        nm_spi_bus_exchange(b, 0);
    nm_spi_bus_set_cs(b, 0);
    /* Register commands with every byte-enable pattern, read and write, at
     * every address, and a random byte storm. */
    for (unsigned be = 0; be < 16; be++)
        for (unsigned a = 0; a < 256; a += 4) {
            if (a == 0x24 || a == 0xe4) continue; /* GRR, P1MBCR: resets, tested above */
            nm_spi_bus_set_cs(b, 1);
            nm_spi_bus_exchange(b, (uint8_t)((be << 2) | (a >> 6)));
            nm_spi_bus_exchange(b, (uint8_t)(a << 2));
            for (int i = 0; i < 6; i++)
                nm_spi_bus_exchange(b, (uint8_t)(a + i));
            nm_spi_bus_set_cs(b, 0);
        }
    guint32 seed = 99;
    for (unsigned i = 0; i < 50000; i++) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % 7 == 0) nm_spi_bus_set_cs(b, (seed >> 20) & 1);
        nm_spi_bus_exchange(b, (uint8_t)(seed >> 8));
        if ((seed >> 12) % 1000 == 0) run_ns(10000);
    }
    nm_spi_bus_set_cs(b, 0);
    run_ns(5000000);
    g_assert_cmpuint(st->spi_bad_commands, >, 10);
    teardown();
}

static void test_bad_config(void)
{
    GError *err = NULL;
    nm_config *c = nm_config_new();
    nm_machine *mm = nm_machine_new(c, &err);
    g_assert_no_error(err);
    nm_devcfg *d = nm_devcfg_parse("test", "ks8851,spi=nope", &err);
    g_assert_no_error(err);
    g_assert_null(nm_machine_add_device(mm, &nm_ks8851_class, d, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err->message, "nope"));
    g_clear_error(&err);
    nm_devcfg_free(d);
    nm_machine_free(mm);
    nm_config_free(c);
}

/* The board makes the KS8851's line level-triggered (ELCR), as Linux's
 * IRQF_TRIGGER_LOW expects, next to the PCI lines; the other lines stay edge.
 * The machine is the whole PC (nm_pc_new) with a ROM that never runs. */
static void test_board_elcr(void)
{
    GError *err = NULL;
    g_autofree char *dir = g_dir_make_tmp("nicemu-ks8851-XXXXXX", &err);
    g_assert_no_error(err);
    g_autofree char *rom = g_build_filename(dir, "rom.bin", NULL);
    uint8_t image[4096];
    memset(image, 0xf4, sizeof image); /* hlt */
    g_assert_true(g_file_set_contents(rom, (const char *)image, sizeof image, &err));
    for (unsigned irq = 3; irq <= 12; irq++) {
        if (irq == 5 || irq == 11) continue; /* PCI lines: level anyway */
        nm_config *c = nm_config_new();
        c->rom = g_strdup(rom);
        c->share_irqs = 1u << irq; /* IRQ 4 is COM1's: this test is about the ELCR */
        g_autofree char *spec = g_strdup_printf("ks8851,irq=%u", irq);
        g_assert_true(nm_config_add_device_spec(c, "device", "xilinx-spi", &err));
        g_assert_true(nm_config_add_device_spec(c, "nic", spec, &err));
        g_assert_no_error(err);
        nm_machine *pcm = nm_pc_new(c, NULL, &err);
        g_assert_no_error(err);
        unsigned elcr = nm_io_read(pcm->io, 0x4d0, 1) | nm_io_read(pcm->io, 0x4d1, 1) << 8;
        /* The ELCR has no bit for IRQ 8 (the RTC, edge on every PC). */
        bool settable = irq != 8;
        g_assert_cmphex(elcr & (1u << irq), ==, settable ? 1u << irq : 0);
        g_assert_cmphex(elcr & ~(1u << irq) & ~0xc820u, ==, 0); /* PCI: 5, 11, 14, 15 */
        g_assert_cmphex(elcr & 0xc820u, ==, 0xc820u);
        nm_machine_free(pcm);
        nm_config_free(c);
    }
    g_assert_cmpint(g_remove(rom), ==, 0);
    g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/* The SPI bus reports in a section of its own, beside the controller's
 * (the two used to share one, with duplicate keys). */
static void test_report_sections(void)
{
    setup();
    nm_report *r = nm_report_new();
    nm_machine_report(m, r);
    g_autofree char *json = nm_report_json(r);
    g_assert_nonnull(strstr(json, "\"spi0.spi\": {"));
    g_assert_nonnull(strstr(json, "\"spi0\": {"));
    const char *sec = strstr(json, "\"spi0\": {");
    const char *end = strchr(sec, '}');
    g_autofree char *body = g_strndup(sec, (gsize)(end - sec));
    g_assert_nonnull(strstr(body, "\"model\": \"xilinx-spi\""));
    g_assert_null(strstr(body, "spi-bus"));
    nm_report_free(r);
    teardown();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ks8851/probe", test_probe);
    g_test_add_func("/ks8851/register-access-time", test_register_access_time);
    g_test_add_func("/ks8851/tx-rx", test_tx_rx);
    g_test_add_func("/ks8851/auto-dequeue", test_auto_dequeue);
    g_test_add_func("/ks8851/tx-batch", test_tx_batch);
    g_test_add_func("/ks8851/tx-unpadded", test_tx_unpadded);
    g_test_add_func("/ks8851/hostile", test_hostile);
    g_test_add_func("/ks8851/bad-config", test_bad_config);
    g_test_add_func("/ks8851/board-elcr", test_board_elcr);
    g_test_add_func("/ks8851/report-sections", test_report_sections);
    return g_test_run();
}
