/* Intel 82540EM (e1000) driven through its registers as a driver would:
 * PCI identity, EEPROM (EERD and microwire on EECD) and its checksum, PHY
 * registers through MDIC, a legacy transmit descriptor reaching the peer,
 * TCP segmentation producing valid segments, receive into a ring with
 * DD/EOP and the interrupt causes, receive with no free descriptors (MPC),
 * and hostile descriptors and ring sizes being survived and counted. */
#include <glib.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "devices/net/e1000.h"
#include "devices/netdev/netdev.h"
#include "devices/netdev/netdev_internal.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "tests/unit/nic_peer_fixture.h"

#define BAR0  0xf0000000u
#define BAR1  0xc000u
#define TXR   0x100000u /* transmit ring */
#define TXB   0x110000u /* transmit buffers */
#define RXR   0x120000u /* receive ring */
#define RXB   0x130000u /* receive buffers, 2 KB each */
#define NDESC 8

static const uint8_t nic_mac[6] = {0x02, 0x45, 0x31, 0x30, 0x30, 0x30};
static const uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

static nm_config *cfg;
static nm_machine *m;
static void *dev;
static nm_pci_device *pci;

static void setup(void)
{
    GError *err = NULL;
    cfg = nm_config_new();
    g_free(cfg->cpu);
    cfg->cpu = g_strdup("486dx2-66");
    cfg->ram_bytes = 16u << 20;
    m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    g_assert_nonnull(nm_machine_add_device(m, &nm_pci_host_class, NULL, &err));
    g_assert_no_error(err);
    nm_devcfg *d = nm_net_devcfg_new("test e1000", "dev0");
    nm_net_devcfg_put(d, "mac", "02:45:31:30:30:30");
    nm_net_devcfg_put(d, "net", "peer");
    g_assert_nonnull(nm_machine_add_device(m, &nm_e1000_class, d, &err));
    g_assert_no_error(err);
    nm_devcfg_free(d);
    dev = NULL;
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls == &nm_e1000_class) dev = inst->state;
    }
    g_assert_nonnull(dev);
    pci = nm_pci_host_device(nm_pci_host_find(m), NM_PCI_DEVFN(1, 0));
    g_assert_nonnull(pci);
    nm_pci_config_write(pci, NM_PCI_BAR0, BAR0, 4);
    nm_pci_config_write(pci, NM_PCI_BAR0 + 4, BAR1, 4);
    nm_pci_config_write(pci, NM_PCI_COMMAND, NM_PCI_CMD_IO | NM_PCI_CMD_MEM | NM_PCI_CMD_MASTER, 2);
}

static void teardown(void)
{
    nm_machine_free(m);
    nm_config_free(cfg);
}

static void wr(uint32_t off, uint32_t v)
{
    nm_mem_write(m->mem, BAR0 + off, v, 4);
}
static uint32_t rd(uint32_t off)
{
    return nm_mem_read(m->mem, BAR0 + off, 4);
}

/* Run the event queue for `ns` of virtual time (the CPU idle). */
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

static void put(uint32_t addr, const void *p, size_t n)
{
    g_assert_true(nm_mem_dma_write(m->mem, addr, p, n));
}
static void get(uint32_t addr, void *p, size_t n)
{
    g_assert_true(nm_mem_dma_read(m->mem, addr, p, n));
}

static void put_desc(uint32_t ring, unsigned i, uint64_t addr, uint32_t lower, uint32_t upper)
{
    uint8_t d[16];
    for (int k = 0; k < 8; k++)
        d[k] = (uint8_t)(addr >> (8 * k));
    for (int k = 0; k < 4; k++) {
        d[8 + k] = (uint8_t)(lower >> (8 * k));
        d[12 + k] = (uint8_t)(upper >> (8 * k));
    }
    put(ring + 16 * i, d, 16);
}

static void tx_ring_setup(void)
{
    wr(0x3800, TXR); /* TDBAL */
    wr(0x3804, 0);
    wr(0x3808, NDESC * 16); /* TDLEN */
    wr(0x3810, 0);
    wr(0x3818, 0);
    wr(0x0400, 0x0103f0fau); /* TCTL: EN, PSP, CT, COLD */
}

static void rx_ring_setup(unsigned tail)
{
    for (unsigned i = 0; i < NDESC; i++)
        put_desc(RXR, i, RXB + 2048 * i, 0, 0);
    wr(0x2800, RXR); /* RDBAL */
    wr(0x2804, 0);
    wr(0x2808, NDESC * 16);
    wr(0x2810, 0);
    wr(0x2818, tail);
    wr(0x0100, (1u << 1) | (1u << 15)); /* RCTL: EN, BAM, 2 KB buffers, CRC kept */
}

/* ---- tests ---- */

static void test_identity_eeprom(void)
{
    setup();
    g_assert_cmphex(nm_pci_config_read(pci, NM_PCI_VENDOR_ID, 4), ==, 0x100e8086u);
    g_assert_cmphex(nm_pci_config_read(pci, NM_PCI_SUBSYS_VENDOR, 4), ==, 0x001e8086u);
    g_assert_cmphex(nm_pci_config_read(pci, NM_PCI_REVISION, 4) >> 8, ==, 0x020000u);
    g_assert_cmpuint(nm_pci_config_read(pci, NM_PCI_INT_PIN, 1), ==, 1);
    /* BAR0 sizing: 128 KB. */
    nm_pci_config_write(pci, NM_PCI_BAR0, 0xffffffffu, 4);
    g_assert_cmphex(nm_pci_config_read(pci, NM_PCI_BAR0, 4), ==, 0xfffe0000u);
    nm_pci_config_write(pci, NM_PCI_BAR0, BAR0, 4);

    /* EERD: every word, checksum 0xBABA, MAC and IDs. */
    uint16_t w[64], sum = 0;
    for (unsigned i = 0; i < 64; i++) {
        wr(0x14, i << 8 | 1);
        uint32_t v = rd(0x14);
        g_assert_true(v & 0x10);
        w[i] = (uint16_t)(v >> 16);
        sum = (uint16_t)(sum + w[i]);
    }
    g_assert_cmphex(sum, ==, 0xbaba);
    for (int i = 0; i < 3; i++)
        g_assert_cmphex(w[i], ==, nic_mac[2 * i] | nic_mac[2 * i + 1] << 8);
    g_assert_cmphex(w[0x0d], ==, 0x100e);
    g_assert_cmphex(w[0x0e], ==, 0x8086);
    g_assert_cmphex(w[0x0b], ==, 0x001e);

    /* Microwire through EECD, as e1000_read_eeprom does: REQ/GNT, CS,
     * start + READ opcode (110), 6 address bits, 16 data bits. */
    uint32_t e = rd(0x10) | (1u << 6);
    wr(0x10, e);
    g_assert_true(rd(0x10) & (1u << 7)); /* granted */
    e &= ~5u;
    wr(0x10, e);
    e |= 2; /* CS */
    wr(0x10, e);
    unsigned cmd = 6u << 6 | 0x0e; /* READ word 0x0E */
    for (int b = 8; b >= 0; b--) {
        e = (e & ~4u) | ((cmd >> b) & 1 ? 4u : 0);
        wr(0x10, e);
        wr(0x10, e | 1);
        wr(0x10, e);
    }
    uint16_t word = 0;
    for (int b = 0; b < 16; b++) {
        wr(0x10, e | 1);
        word = (uint16_t)(word << 1 | ((rd(0x10) >> 3) & 1));
        wr(0x10, e);
    }
    g_assert_cmphex(word, ==, 0x8086);
    teardown();
}

static uint16_t mdic_read(unsigned r)
{
    wr(0x20, 2u << 26 | 1u << 21 | r << 16);
    uint32_t v = rd(0x20);
    g_assert_true(v & (1u << 28));
    g_assert_false(v & (1u << 30));
    return (uint16_t)v;
}

static void test_mdic_phy(void)
{
    setup();
    g_assert_cmphex(mdic_read(2), ==, 0x0141);
    g_assert_cmphex(mdic_read(3) & 0xfff0, ==, 0x0c20);
    g_assert_cmphex(mdic_read(1), ==, 0x796d);           /* link up, autoneg complete */
    g_assert_cmphex(mdic_read(17) & 0xc000, ==, 0x8000); /* 1000 Mb/s */
    /* BMCR reset self-clears. */
    wr(0x20, 1u << 26 | 1u << 21 | 0u << 16 | 0x9140);
    g_assert_cmphex(mdic_read(0) & 0x8000, ==, 0);
    /* A write sticks; an absent PHY address is an error. */
    wr(0x20, 1u << 26 | 1u << 21 | 4u << 16 | 0x0de1);
    g_assert_cmphex(mdic_read(4), ==, 0x0de1);
    wr(0x20, 2u << 26 | 5u << 21 | 1u << 16);
    g_assert_true(rd(0x20) & (1u << 30));
    /* STATUS: link up, 1000 Mb/s full duplex. */
    g_assert_cmphex(rd(0x08) & 0xc3, ==, 0x83);
    teardown();
}

static void test_legacy_tx_and_rx(void)
{
    setup();
    tx_ring_setup();
    rx_ring_setup(NDESC - 1);
    wr(0xd0, 0x9d); /* IMS: RXT0, RXDMT0, LSC, TXDW */
    uint8_t f[64];
    size_t n = arp_request_to_peer(f, nic_mac);
    put(TXB, f, n);
    /* Legacy: length, CMD = EOP | IFCS | RS. */
    put_desc(TXR, 0, TXB, (uint32_t)n | (0x0bu << 24), 0);
    wr(0x3818, 1);
    run_ns(1000000);
    uint8_t sta;
    get(TXR + 12, &sta, 1);
    g_assert_cmphex(sta & 1, ==, 1); /* DD */
    g_assert_cmpuint(rd(0x3810), ==, 1);
    g_assert_cmpuint(peer_stats(m)->arp_requests, ==, 1);
    const nm_e1000_stats *st = nm_e1000_get_stats(dev);
    g_assert_cmpuint(st->tx_frames, ==, 1);
    g_assert_cmpuint(st->tx_bytes, ==, 64); /* padded to 60 + FCS */

    /* The peer's ARP reply came back into descriptor 0. */
    uint8_t d[16];
    get(RXR, d, 16);
    g_assert_cmphex(d[12] & 3, ==, 3);          /* DD | EOP */
    g_assert_cmpuint(d[8] | d[9] << 8, ==, 64); /* with the FCS (SECRC clear) */
    g_assert_cmpuint(rd(0x2810), ==, 1);
    uint8_t reply[64];
    get(RXB, reply, 64);
    g_assert_cmpmem(reply, 6, nic_mac, 6);
    g_assert_true(nm_eth_fcs_ok(reply, 64));
    g_assert_true(pci->irq_level);
    uint32_t icr = rd(0xc0);
    g_assert_cmphex(icr & 0x81, ==, 0x81); /* RXT0 | TXDW */
    g_assert_false(pci->irq_level);        /* ICR read clears and deasserts */
    g_assert_cmphex(rd(0xc0), ==, 0);      /* clear on read */
    g_assert_cmpuint(rd(0x4074), ==, 1);   /* GPRC */
    g_assert_cmpuint(rd(0x4074), ==, 0);   /* statistics clear on read */
    g_assert_cmpuint(rd(0x4080), ==, 1);   /* GPTC */
    g_assert_cmpuint(nm_e1000_pci_wait_clocks(dev), >, 0);
    teardown();
}

static void test_rx_no_descriptors(void)
{
    setup();
    tx_ring_setup();
    rx_ring_setup(0); /* RDH == RDT: no descriptor for the hardware */
    uint8_t f[64];
    size_t n = arp_request_to_peer(f, nic_mac);
    put(TXB, f, n);
    put_desc(TXR, 0, TXB, (uint32_t)n | (0x0bu << 24), 0);
    wr(0x3818, 1);
    run_ns(1000000);
    g_assert_cmpuint(peer_stats(m)->arp_replies, ==, 1);
    g_assert_cmpuint(rd(0x4010), ==, 1); /* MPC */
    g_assert_cmpuint(rd(0x2810), ==, 0);
    g_assert_true(rd(0xc0) & (1u << 6)); /* RXO */
    g_assert_cmpuint(nm_e1000_get_stats(dev)->rx_missed, ==, 1);
    teardown();
}

static uint16_t fold(uint32_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)s;
}

static void test_tso(void)
{
    setup();
    tx_ring_setup();
    enum { HDR = 54, PAY = 3000, MSS = 1000 };
    static uint8_t p[HDR + PAY];
    memcpy(p, peer_mac, 6);
    memcpy(p + 6, nic_mac, 6);
    p[12] = 0x08, p[13] = 0x00;
    uint8_t *ip = p + 14, *tcp = p + 34;
    memset(ip, 0, 20);
    ip[0] = 0x45, ip[4] = 0x12, ip[5] = 0x34, ip[8] = 64, ip[9] = 6;
    memcpy(ip + 12, (uint8_t[]){10, 0, 0, 2, 10, 0, 0, 1}, 8); /* tot_len and check 0 */
    memset(tcp, 0, 20);
    tcp[0] = 0x9c, tcp[1] = 0x40, tcp[2] = 0x13, tcp[3] = 0x89; /* 40000 -> 5001 */
    tcp[4] = 0x11, tcp[5] = 0x22, tcp[6] = 0x33, tcp[7] = 0x44;
    tcp[12] = 0x50, tcp[13] = 0x18; /* PSH | ACK */
    tcp[14] = 0x10;
    /* Software's part: the pseudo-header sum without the length. */
    uint16_t ps = fold(0x0a00 + 0x0002 + 0x0a00 + 0x0001 + 6);
    tcp[16] = (uint8_t)(ps >> 8), tcp[17] = (uint8_t)ps;
    for (int i = 0; i < PAY; i++)
        p[HDR + i] = (uint8_t)(i * 7);
    put(TXB, p, sizeof p);
    /* Context: IPCSS 14, IPCSO 24, IPCSE 33, TUCSS 34, TUCSO 50, TUCSE 0,
     * PAYLEN, TUCMD = DEXT | TSE | IP | TCP, HDRLEN 54, MSS 1000. */
    uint64_t ip_fields = 14 | 24u << 8 | 33u << 16 | (uint64_t)34 << 32 | (uint64_t)50 << 40;
    put_desc(TXR, 0, ip_fields, PAY | (0x27u << 24), (uint32_t)HDR << 8 | (uint32_t)MSS << 16);
    /* Data: header, then payload; DTYP 1, DCMD = DEXT | TSE | IFCS (+EOP|RS
     * last), POPTS = IXSM | TXSM. */
    put_desc(TXR, 1, TXB, HDR | 1u << 20 | 0x26u << 24, 3u << 8);
    put_desc(TXR, 2, TXB + HDR, PAY | 1u << 20 | 0x2fu << 24, 3u << 8);
    wr(0x3818, 3);
    run_ns(2000000);
    const nm_e1000_stats *st = nm_e1000_get_stats(dev);
    g_assert_cmpuint(st->tx_tso_packets, ==, 1);
    g_assert_cmpuint(st->tx_tso_segments, ==, 3);
    g_assert_cmpuint(st->tx_frames, ==, 3);
    g_assert_cmpuint(st->tx_bytes, ==, 3 * (HDR + MSS + 4));
    /* The peer checked each IP header and TCP checksum. */
    g_assert_cmpuint(peer_stats(m)->ip_packets, ==, 3);
    g_assert_cmpuint(peer_stats(m)->ip_bad_checksum, ==, 0);
    g_assert_cmpuint(peer_stats(m)->tcp_bad_checksum, ==, 0);
    g_assert_cmpuint(peer_stats(m)->tcp_segments, ==, 3);
    g_assert_cmpuint(peer_stats(m)->tcp_bytes + peer_stats(m)->tcp_out_of_order +
                         peer_stats(m)->tcp_beyond_window,
                     >=, 0);
    uint8_t sta;
    get(TXR + 2 * 16 + 12, &sta, 1);
    g_assert_cmphex(sta & 1, ==, 1);
    g_assert_cmpuint(rd(0x40f8), ==, 1); /* TSCTC */
    teardown();
}

static void test_hostile(void)
{
    setup();
    tx_ring_setup();
    /* A buffer outside RAM: refused, the descriptor still completes. */
    put_desc(TXR, 0, 0xf8000000u, 100 | (0x0bu << 24), 0);
    /* A buffer above 4 GB. */
    put_desc(TXR, 1, 0x100000000ull, 100 | (0x0bu << 24), 0);
    wr(0x3818, 2);
    run_ns(1000000);
    const nm_e1000_stats *st = nm_e1000_get_stats(dev);
    g_assert_cmpuint(st->bad_descriptors, >=, 2);
    g_assert_cmpuint(pci->dma_refused, >=, 1);
    uint8_t sta;
    get(TXR + 16 + 12, &sta, 1);
    g_assert_cmphex(sta & 1, ==, 1);

    /* A ring length that is not a multiple of 128, then a tail past the
     * ring: nothing fetched, counted. */
    uint64_t before = st->tx_descriptors;
    wr(0x3808, 100);
    wr(0x3818, 3);
    run_ns(100000);
    g_assert_cmpuint(st->bad_ring_config, >=, 1);
    wr(0x3808, NDESC * 16);
    wr(0x3818, 4000);
    run_ns(100000);
    g_assert_cmpuint(st->bad_ring_config, >=, 2);
    g_assert_cmpuint(st->tx_descriptors, ==, before);

    /* A receive ring outside RAM: frames are dropped and counted. */
    wr(0x2800, 0xf8000000u);
    wr(0x2808, NDESC * 16);
    wr(0x2810, 0);
    wr(0x2818, 4);
    wr(0x0100, (1u << 1) | (1u << 15));
    wr(0x3808, NDESC * 16);
    wr(0x3810, 0);
    wr(0x3818, 0);
    uint8_t f[64];
    size_t n = arp_request_to_peer(f, nic_mac);
    put(TXB, f, n);
    put_desc(TXR, 0, TXB, (uint32_t)n | (0x0bu << 24), 0);
    wr(0x3818, 1);
    run_ns(1000000);
    g_assert_cmpuint(st->rx_missed, ==, 1);
    /* Unmodelled registers and a device reset survive. */
    wr(0x1ff00, 0x12345678);
    g_assert_cmphex(rd(0x1ff00), ==, 0);
    g_assert_cmpuint(st->bad_register_accesses, >=, 2);
    nm_io_write(m->io, BAR1, 0x0000, 4);       /* IOADDR = CTRL */
    nm_io_write(m->io, BAR1 + 4, 1u << 26, 4); /* RST through IODATA */
    g_assert_cmpuint(st->mac_resets, ==, 1);
    g_assert_cmphex(rd(0x3808), ==, 0);
    teardown();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/e1000/identity-eeprom", test_identity_eeprom);
    g_test_add_func("/e1000/mdic-phy", test_mdic_phy);
    g_test_add_func("/e1000/legacy-tx-rx", test_legacy_tx_and_rx);
    g_test_add_func("/e1000/rx-no-descriptors", test_rx_no_descriptors);
    g_test_add_func("/e1000/tso", test_tso);
    g_test_add_func("/e1000/hostile", test_hostile);
    return g_test_run();
}
