/* DP8390 core, driven through an NE2000's ports as a driver would, with a
 * test station on the same hub as the far end of the wire. */
#include <glib.h>
#include <string.h>

#include "devices/net/dp8390.h"
#include "devices/netdev/netdev.h"
#include "emu/machine.h"

#define IOB     0x300
#define DATA    (IOB + 0x10)
#define RESET   (IOB + 0x1f)
#define NIC_IRQ 9
static const uint8_t NIC_MAC[6] = {0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc};
static const uint8_t PEER_MAC[6] = {0x52, 0x54, 0x00, 0x11, 0x22, 0x33};

typedef struct rxf {
    uint64_t cycle;
    size_t len;
    uint8_t data[2048];
} rxf;

typedef struct fx {
    nm_config *cfg;
    nm_machine *m;
    nm_dp8390 *nic;
    nm_net_endpoint ep;
    GArray *rx;
} fx;

static fx F;

static void peer_receive(void *opaque, const uint8_t *frame, size_t len)
{
    (void)opaque;
    rxf f = {.cycle = F.m->clock.cycles, .len = len};
    g_assert_cmpuint(len, <=, sizeof f.data);
    memcpy(f.data, frame, len);
    g_array_append_val(F.rx, f);
}

static void fx_setup(const char *cpu)
{
    memset(&F, 0, sizeof F);
    GError *err = NULL;
    F.cfg = nm_config_new();
    g_free(F.cfg->cpu);
    F.cfg->cpu = g_strdup(cpu);
    F.cfg->ram_bytes = 1 << 20;
    g_assert_true(nm_config_add_device_spec(
        F.cfg, "--nic", "ne2000,io=0x300,irq=9,mac=52:54:00:aa:bb:cc,net=hub:lan", &err));
    g_assert_no_error(err);
    F.m = nm_machine_new(F.cfg, &err);
    g_assert_no_error(err);
    g_assert_nonnull(F.m);
    for (guint i = 0; i < F.m->devices->len; i++) {
        nm_device_instance *inst = F.m->devices->pdata[i];
        if (!strcmp(inst->cls->name, "ne2000")) F.nic = nm_ne2000_nic(inst->state);
    }
    g_assert_nonnull(F.nic);
    F.rx = g_array_new(FALSE, TRUE, sizeof(rxf));
    F.ep.name = "peer";
    F.ep.receive = peer_receive;
    g_assert_nonnull(nm_net_attach(F.m, &F.ep, "hub:lan", 10000000, NULL, "test", &err));
    g_assert_no_error(err);
}

static void fx_teardown(void)
{
    nm_machine_free(F.m);
    nm_config_free(F.cfg);
    g_array_free(F.rx, TRUE);
}

static void outb(uint16_t port, uint8_t v)
{
    nm_io_write(F.m->io, port, v, 1);
}
static uint8_t inb(uint16_t port)
{
    return (uint8_t)nm_io_read(F.m->io, port, 1);
}
static void outw(uint16_t port, uint16_t v)
{
    nm_io_write(F.m->io, port, v, 2);
}
static uint16_t inw(uint16_t port)
{
    return (uint16_t)nm_io_read(F.m->io, port, 2);
}

/* Run virtual time up to an absolute cycle, firing events on the way. */
static void run_to(uint64_t cycle)
{
    nm_clock *c = &F.m->clock;
    while (c->deadline <= cycle) {
        if (c->cycles < c->deadline) c->cycles = c->deadline;
        nm_clock_run_due(c);
    }
    if (c->cycles < cycle) c->cycles = cycle;
}

static void run_ns(uint64_t ns)
{
    run_to(nm_clock_cycles_from_ns(&F.m->clock, nm_clock_now_ns(&F.m->clock) + ns));
}

/* NS8390_init as lib8390.c does it, then start. */
static void nic_init(uint8_t dcr, uint8_t pstart, uint8_t pstop)
{
    outb(IOB, 0x21);
    outb(IOB + 0x0e, dcr);
    outb(IOB + 0x0a, 0);
    outb(IOB + 0x0b, 0);
    outb(IOB + 0x0c, 0x20);
    outb(IOB + 0x0d, 0x02);
    outb(IOB + 0x04, 0x40);
    outb(IOB + 0x01, pstart);
    outb(IOB + 0x03, (uint8_t)(pstop - 1));
    outb(IOB + 0x02, pstop);
    outb(IOB + 0x07, 0xff);
    outb(IOB + 0x0f, 0x00);
    outb(IOB, 0x61);
    for (int i = 0; i < 6; i++)
        outb(IOB + 1 + i, NIC_MAC[i]);
    outb(IOB + 0x07, pstart); /* CURR */
    outb(IOB, 0x21);
    outb(IOB + 0x07, 0xff);
    outb(IOB + 0x0f, 0x3f);
    outb(IOB, 0x22);
    outb(IOB + 0x0d, 0x00);
    outb(IOB + 0x0c, 0x04);
}

static void set_curr(uint8_t v)
{
    outb(IOB, 0x62);
    outb(IOB + 0x07, v);
    outb(IOB, 0x22);
}

static uint8_t get_curr(void)
{
    outb(IOB, 0x62);
    uint8_t v = inb(IOB + 0x07);
    outb(IOB, 0x22);
    return v;
}

static void remote_write(uint16_t addr, const uint8_t *buf, unsigned len, bool word)
{
    unsigned count = word ? (len + 1) & ~1u : len;
    outb(IOB + 0x07, 0x40);
    outb(IOB + 0x0a, (uint8_t)count);
    outb(IOB + 0x0b, (uint8_t)(count >> 8));
    outb(IOB + 0x08, (uint8_t)addr);
    outb(IOB + 0x09, (uint8_t)(addr >> 8));
    outb(IOB, 0x12);
    if (word) {
        for (unsigned i = 0; i < count; i += 2)
            outw(DATA, (uint16_t)(buf[i] | (i + 1 < len ? buf[i + 1] << 8 : 0)));
    } else {
        for (unsigned i = 0; i < len; i++)
            outb(DATA, buf[i]);
    }
    g_assert_cmphex(inb(IOB + 0x07) & 0x40, ==, 0x40); /* RDC */
    outb(IOB + 0x07, 0x40);
}

static void remote_read(uint16_t addr, uint8_t *buf, unsigned len, bool word)
{
    outb(IOB + 0x0a, (uint8_t)len);
    outb(IOB + 0x0b, (uint8_t)(len >> 8));
    outb(IOB + 0x08, (uint8_t)addr);
    outb(IOB + 0x09, (uint8_t)(addr >> 8));
    outb(IOB, 0x0a);
    if (word) {
        for (unsigned i = 0; i < len; i += 2) {
            uint16_t w = inw(DATA);
            buf[i] = (uint8_t)w;
            if (i + 1 < len) buf[i + 1] = (uint8_t)(w >> 8);
        }
    } else {
        for (unsigned i = 0; i < len; i++)
            buf[i] = inb(DATA);
    }
    outb(IOB + 0x07, 0x40);
}

/* A frame from the peer with a correct FCS; `len` includes the FCS. */
static size_t make_frame(uint8_t *f, const uint8_t dst[6], size_t len, uint8_t fill)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, PEER_MAC, 6);
    f[12] = 0x08;
    f[13] = 0x00;
    for (size_t i = 14; i < len - 4; i++)
        f[i] = (uint8_t)(fill + i);
    uint32_t crc = nm_eth_crc32(f, len - 4);
    for (int i = 0; i < 4; i++)
        f[len - 4 + i] = (uint8_t)(crc >> (8 * i));
    return len;
}

static void peer_send(const uint8_t *f, size_t len)
{
    nm_net_send(&F.ep, f, len);
    run_ns(2000000); /* through the hub and both links */
}

/* ---- tests --------------------------------------------------------------- */

static void test_isr_semantics(void)
{
    fx_setup("486dx-33");
    inb(RESET);
    g_assert_cmphex(inb(IOB + 0x07), ==, 0x80); /* RST after reset */
    g_assert_cmphex(inb(IOB) & 0x03, ==, 0x01); /* stopped */
    outb(IOB + 0x07, 0xff);
    g_assert_cmphex(inb(IOB + 0x07), ==, 0x80); /* RST is not write-1-to-clear */
    outb(IOB + 0x0e, 0x48);
    outb(IOB, 0x22);
    g_assert_cmphex(inb(IOB + 0x07), ==, 0x00); /* START clears it */
    /* A zero-count remote read completes at once: RDC (Linux's autoirq). */
    outb(IOB + 0x0a, 0);
    outb(IOB + 0x0b, 0);
    outb(IOB, 0x0a);
    g_assert_cmphex(inb(IOB + 0x07), ==, 0x40);
    g_assert_false(nm_irq_level(&F.m->irq, NIC_IRQ)); /* masked */
    outb(IOB + 0x0f, 0x40);
    g_assert_true(nm_irq_level(&F.m->irq, NIC_IRQ));
    outb(IOB + 0x07, 0x01); /* other bits: no effect */
    g_assert_cmphex(inb(IOB + 0x07), ==, 0x40);
    g_assert_true(nm_irq_level(&F.m->irq, NIC_IRQ));
    outb(IOB + 0x07, 0x40);
    g_assert_cmphex(inb(IOB + 0x07), ==, 0x00);
    g_assert_false(nm_irq_level(&F.m->irq, NIC_IRQ));
    /* Page 2 reads back the page-0 write-only registers. */
    outb(IOB + 0x0f, 0x3f);
    outb(IOB + 0x0c, 0x1c);
    outb(IOB + 0x0d, 0x06);
    outb(IOB + 0x01, 0x46);
    outb(IOB + 0x02, 0x80);
    outb(IOB + 0x04, 0x40);
    outb(IOB, 0xa2);
    g_assert_cmphex(inb(IOB + 0x01), ==, 0x46);
    g_assert_cmphex(inb(IOB + 0x02), ==, 0x80);
    g_assert_cmphex(inb(IOB + 0x04), ==, 0x40);
    g_assert_cmphex(inb(IOB + 0x0c), ==, 0x1c);
    g_assert_cmphex(inb(IOB + 0x0d), ==, 0x06);
    g_assert_cmphex(inb(IOB + 0x0e), ==, 0x48);
    g_assert_cmphex(inb(IOB + 0x0f), ==, 0x3f);
    g_assert_cmphex(inb(IOB) & 0xc0, ==, 0x80);
    fx_teardown();
}

static void test_remote_dma_wrap(void)
{
    fx_setup("486dx-33");
    nic_init(0x49, 0x46, 0x80);
    uint8_t buf[300], back[300];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7 + 1);
    /* 300 bytes from 0x7f00: the remote DMA wraps from PSTOP to PSTART. */
    remote_write(0x7f00, buf, sizeof buf, true);
    outb(IOB, 0x22);
    g_assert_cmphex(inb(IOB + 0x08) | inb(IOB + 0x09) << 8, ==, 0x4600 + 300 - 256);
    remote_read(0x7f00, back, sizeof back, true);
    g_assert_cmpmem(buf, sizeof buf, back, sizeof back);
    outb(IOB + 0x0e, 0x48);
    remote_read(0x4600, back, 44, false);
    g_assert_cmpmem(buf + 256, 44, back, 44);
    /* A byte-wide read in word mode still moves a word (low byte seen). */
    outb(IOB + 0x0e, 0x49);
    remote_read(0x4600, back, 4, false);
    g_assert_cmphex(back[0], ==, buf[256]);
    g_assert_cmphex(back[1], ==, buf[258]);
    /* Byte mode transfers count bytes. */
    outb(IOB + 0x0e, 0x48);
    remote_write(0x5000, buf, 33, false);
    remote_read(0x5000, back, 33, false);
    g_assert_cmpmem(buf, 33, back, 33);
    /* Past the top of the 64 K local space: wraps to 0x0000, the PROM
     * (mirrored), and never outside the card's memory. */
    outb(IOB + 0x02, 0x00); /* no ring wrap in the way */
    remote_read(0xfffe, back, 4, false);
    g_assert_cmphex(back[2], ==, NIC_MAC[0]);
    g_assert_cmphex(back[3], ==, NIC_MAC[0]);
    /* Writes to the PROM are ignored. */
    remote_write(0x0000, buf, 4, false);
    remote_read(0x0000, back, 2, false);
    g_assert_cmphex(back[0], ==, NIC_MAC[0]);
    /* Data port with no DMA running: all ones, nothing moves. */
    g_assert_cmphex(inw(DATA), ==, 0xffff);
    fx_teardown();
}

static void test_tx_runt_and_timing(void)
{
    fx_setup("486dx-33");
    nic_init(0x49, 0x4c, 0x80);
    uint8_t f[42];
    memcpy(f, PEER_MAC, 6);
    memcpy(f + 6, NIC_MAC, 6);
    f[12] = 0x08;
    f[13] = 0x06;
    for (unsigned i = 14; i < sizeof f; i++)
        f[i] = (uint8_t)i;
    remote_write(0x4000, f, sizeof f, true);
    outb(IOB + 0x04, 0x40);
    outb(IOB + 0x05, sizeof f);
    outb(IOB + 0x06, 0);
    outb(IOB, 0x26);
    /* The NIC saw the command after the ISA cycle was charged: now. */
    uint64_t t0 = nm_clock_now_ns(&F.m->clock);
    g_assert_cmphex(inb(IOB) & 0x04, ==, 0x04); /* TXP while sending */
    /* PTX at the time nm_net_send returned: 46 bytes + preamble + gap. */
    uint64_t done = nm_clock_cycles_from_ns(&F.m->clock, t0 + nm_net_wire_ns(10000000, 46));
    run_to(done - 1);
    g_assert_cmphex(inb(IOB + 0x07) & 0x02, ==, 0);
    run_to(done);
    g_assert_cmphex(inb(IOB + 0x07) & 0x02, ==, 0x02);
    g_assert_cmphex(inb(IOB + 0x04), ==, 0x01); /* TSR.PTX */
    g_assert_cmphex(inb(IOB) & 0x04, ==, 0);
    g_assert_true(nm_irq_level(&F.m->irq, NIC_IRQ));
    run_ns(1000000);
    g_assert_cmpuint(F.rx->len, ==, 1);
    rxf *r = &g_array_index(F.rx, rxf, 0);
    g_assert_cmpuint(r->len, ==, 46); /* not padded: a runt with its FCS */
    g_assert_cmpmem(r->data, 42, f, 42);
    uint32_t crc = nm_eth_crc32(f, 42);
    g_assert_cmphex(
        r->data[42] | r->data[43] << 8 | r->data[44] << 16 | (uint32_t)r->data[45] << 24, ==, crc);
    g_assert_cmpuint(nm_dp8390_get_stats(F.nic)->tx_runts, ==, 1);

    /* CRC inhibit: no FCS appended. */
    outb(IOB + 0x07, 0xff);
    outb(IOB + 0x0d, 0x01);
    outb(IOB, 0x26);
    run_ns(2000000);
    g_assert_cmpuint(F.rx->len, ==, 2);
    g_assert_cmpuint(g_array_index(F.rx, rxf, 1).len, ==, 42);

    /* TBCR past the local memory: wraps, nothing breaks. */
    outb(IOB + 0x0d, 0x00);
    outb(IOB + 0x04, 0xff);
    outb(IOB + 0x05, 0x00);
    outb(IOB + 0x06, 0x06);
    outb(IOB, 0x26);
    run_ns(4000000);
    g_assert_cmpuint(F.rx->len, ==, 3);
    g_assert_cmpuint(g_array_index(F.rx, rxf, 2).len, ==, 0x600 + 4);
    fx_teardown();
}

static void check_header(uint8_t page, uint8_t status, uint8_t next, unsigned count)
{
    uint8_t h[4];
    remote_read((uint16_t)(page << 8), h, 4, true);
    g_assert_cmphex(h[0], ==, status);
    g_assert_cmphex(h[1], ==, next);
    g_assert_cmpuint(h[2] | h[3] << 8, ==, count);
}

static void test_receive_ring_wrap_and_send_packet(void)
{
    fx_setup("486dx-33");
    nic_init(0x49, 0x4c, 0x80);
    set_curr(0x7e);
    outb(IOB + 0x03, 0x7d);
    uint8_t f[604];
    make_frame(f, NIC_MAC, sizeof f, 3);
    peer_send(f, sizeof f);
    g_assert_cmphex(inb(IOB + 0x07) & 0x01, ==, 0x01); /* PRX */
    g_assert_cmphex(inb(IOB + 0x0c), ==, 0x01);        /* RSR: intact, physical */
    /* 608 bytes with the header: pages 7e, 7f, then wrapped to 4c. */
    g_assert_cmphex(get_curr(), ==, 0x4d);
    check_header(0x7e, 0x01, 0x4d, 608);
    uint8_t back[608];
    remote_read(0x7e04, back, 604, true); /* the remote DMA wraps at PSTOP */
    g_assert_cmpmem(back, 604, f, 604);
    /* Send Packet: RSAR/RBCR from BNRY's header; BNRY advances at the end. */
    outb(IOB + 0x07, 0xff);
    outb(IOB + 0x03, 0x7e);
    outb(IOB, 0x1a);
    for (unsigned i = 0; i < 608; i += 2) {
        uint16_t w = inw(DATA);
        back[i] = (uint8_t)w;
        back[i + 1] = (uint8_t)(w >> 8);
    }
    g_assert_cmphex(inb(IOB + 0x07) & 0x40, ==, 0x40);
    g_assert_cmphex(inb(IOB + 0x03), ==, 0x4d);
    g_assert_cmpmem(back + 4, 604, f, 604);
    fx_teardown();
}

static void test_overflow(void)
{
    fx_setup("486dx-33");
    nic_init(0x49, 0x4c, 0x50); /* 4 pages; BNRY 0x4f, CURR 0x4c */
    uint8_t f[64];
    make_frame(f, NIC_MAC, sizeof f, 1);
    peer_send(f, sizeof f);
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4e);
    g_assert_cmphex(inb(IOB + 0x07) & 0x10, ==, 0);
    peer_send(f, sizeof f);                            /* its next page would be BNRY */
    g_assert_cmphex(inb(IOB + 0x07) & 0x90, ==, 0x90); /* OVW and RST */
    g_assert_cmphex(get_curr(), ==, 0x4e);             /* ring intact */
    g_assert_cmpuint(inb(IOB + 0x0f), ==, 1);          /* missed tally */
    g_assert_cmpuint(inb(IOB + 0x0f), ==, 0);          /* cleared by the read */
    /* Draining alone does not restart reception: the datasheet's recovery
     * (stop, clear RBCR, loopback, start, drain, ack, normal) does. */
    outb(IOB + 0x03, 0x4d);
    g_assert_cmphex(inb(IOB + 0x07) & 0x80, ==, 0);
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4e);
    g_assert_cmpuint(inb(IOB + 0x0f), ==, 1);
    outb(IOB, 0x21);
    outb(IOB + 0x0a, 0);
    outb(IOB + 0x0b, 0);
    outb(IOB + 0x0d, 0x02);
    outb(IOB, 0x22);
    peer_send(f, sizeof f); /* in loopback the wire is not heard */
    g_assert_cmphex(get_curr(), ==, 0x4e);
    outb(IOB + 0x03, 0x4d);
    outb(IOB + 0x07, 0x10);
    outb(IOB + 0x0d, 0x00);
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4f);
    g_assert_cmpuint(nm_dp8390_get_stats(F.nic)->overflows, ==, 1);
    fx_teardown();
}

/* Linux's ether_crc (the MSB-first CRC-32 the 8390 driver hashes with),
 * written independently of the code under test. */
static uint32_t ether_crc(const uint8_t *d, int len)
{
    uint32_t crc = 0xffffffffu;
    while (--len >= 0) {
        uint8_t b = *d++;
        for (int bit = 0; bit < 8; bit++, b >>= 1) {
            uint32_t msb = crc >> 31;
            crc <<= 1;
            if (msb ^ (b & 1)) crc ^= 0x04c11db7u;
        }
    }
    return crc;
}

static void test_multicast_hash(void)
{
    /* Known pairs (Linux make_mc_bits: bits[crc>>29] |= 1 << ((crc>>26)&7)). */
    static const struct {
        uint8_t mac[6];
        unsigned idx;
    } known[] = {
        {{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}, 31}, {{0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb}, 15},
        {{0x33, 0x33, 0x00, 0x00, 0x00, 0x01}, 62}, {{0x33, 0x33, 0xff, 0x12, 0x34, 0x56}, 2},
        {{0x01, 0x80, 0xc2, 0x00, 0x00, 0x00}, 25}, {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 63},
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(known); i++) {
        g_assert_cmpuint(nm_dp8390_mcast_index(known[i].mac), ==, known[i].idx);
        g_assert_cmpuint(ether_crc(known[i].mac, 6) >> 26, ==, known[i].idx);
    }
    GRand *r = g_rand_new_with_seed(8390);
    for (int n = 0; n < 1000; n++) {
        uint8_t mac[6];
        for (int i = 0; i < 6; i++)
            mac[i] = (uint8_t)g_rand_int(r);
        g_assert_cmpuint(nm_dp8390_mcast_index(mac), ==, ether_crc(mac, 6) >> 26);
    }
    g_rand_free(r);

    /* The filter in action: accept 01:00:5e:00:00:01 only. */
    fx_setup("486dx-33");
    nic_init(0x49, 0x4c, 0x80);
    outb(IOB, 0x62);
    for (int i = 0; i < 8; i++)
        outb(IOB + 8 + i, i == 3 ? 0x80 : 0);
    outb(IOB, 0x22);
    outb(IOB + 0x0c, 0x08); /* AM only */
    uint8_t f[64];
    make_frame(f, known[2].mac, sizeof f, 0); /* bit 62: not set */
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4c);
    make_frame(f, known[0].mac, sizeof f, 0);
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4d);
    g_assert_cmphex(inb(IOB + 0x0c), ==, 0x21); /* PRX + PHY (group address) */
    /* Broadcast needs AB; physical for someone else needs PRO. */
    make_frame(f, known[5].mac, sizeof f, 0);
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4d);
    make_frame(f, PEER_MAC, sizeof f, 0);
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4d);
    outb(IOB + 0x0c, 0x14);
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4e);
    fx_teardown();
}

static void test_loopback(void)
{
    fx_setup("486dx-33");
    nic_init(0x41, 0x4c, 0x80); /* LS = 0 */
    outb(IOB + 0x0d, 0x02);     /* internal loopback */
    uint8_t f[60];
    memcpy(f, NIC_MAC, 6);
    memcpy(f + 6, NIC_MAC, 6);
    for (unsigned i = 12; i < sizeof f; i++)
        f[i] = (uint8_t)(0xa0 + i);
    remote_write(0x4000, f, sizeof f, true);
    outb(IOB + 0x04, 0x40);
    outb(IOB + 0x05, sizeof f);
    outb(IOB + 0x06, 0);
    outb(IOB, 0x26);
    run_ns(1000000);
    g_assert_cmphex(inb(IOB + 0x07) & 0x03, ==, 0x03); /* PRX and PTX */
    g_assert_cmpuint(F.rx->len, ==, 0);                /* nothing on the wire */
    check_header(0x4c, 0x01, 0x4d, 60 + 4 + 4);
    uint8_t back[64];
    remote_read(0x4c04, back, 64, true);
    g_assert_cmpmem(back, 60, f, 60);
    uint32_t crc = nm_eth_crc32(f, 60);
    g_assert_cmphex(back[60] | back[61] << 8 | back[62] << 16 | (uint32_t)back[63] << 24, ==, crc);
    fx_teardown();
}

static void test_crc_errors_and_runts(void)
{
    fx_setup("486dx-33");
    nic_init(0x49, 0x4c, 0x80);
    uint8_t f[64];
    make_frame(f, NIC_MAC, sizeof f, 9);
    f[63] ^= 0xff;
    peer_send(f, sizeof f);
    g_assert_cmphex(inb(IOB + 0x07) & 0x05, ==, 0x04); /* RXE, not PRX */
    g_assert_cmphex(get_curr(), ==, 0x4c);
    g_assert_cmpuint(inb(IOB + 0x0e), ==, 1); /* CRC tally */
    outb(IOB + 0x0c, 0x05);                   /* SEP: keep it, marked */
    peer_send(f, sizeof f);
    g_assert_cmphex(get_curr(), ==, 0x4d);
    check_header(0x4c, 0x02, 0x4d, 68);
    /* A 50-byte frame is a runt: dropped unless RCR.AR. */
    uint8_t r[50];
    make_frame(r, NIC_MAC, sizeof r, 0);
    outb(IOB + 0x0c, 0x04);
    peer_send(r, sizeof r);
    g_assert_cmphex(get_curr(), ==, 0x4d);
    outb(IOB + 0x0c, 0x06);
    peer_send(r, sizeof r);
    g_assert_cmphex(get_curr(), ==, 0x4e);
    g_assert_cmpuint(nm_dp8390_get_stats(F.nic)->rx_runts, ==, 2);
    /* Tally counters stop at 192 and raise CNT from 128. */
    outb(IOB + 0x07, 0xff);
    outb(IOB + 0x0c, 0x04);
    for (int i = 0; i < 200; i++) {
        nm_net_send(&F.ep, f, sizeof f);
        run_ns(200000);
    }
    g_assert_cmphex(inb(IOB + 0x07) & 0x20, ==, 0x20);
    g_assert_cmpuint(inb(IOB + 0x0e), ==, 192);
    fx_teardown();
}

static void test_hostile_ring(void)
{
    fx_setup("486dx-33");
    nic_init(0x49, 0x80, 0x40); /* inverted */
    set_curr(0xfe);
    outb(IOB + 0x03, 0x10);
    uint8_t f[1518];
    make_frame(f, NIC_MAC, sizeof f, 5);
    for (int i = 0; i < 5; i++)
        peer_send(f, sizeof f);
    /* Survived; the chip wrote where its pointers led, inside its space. */
    g_assert_cmpuint(nm_dp8390_get_stats(F.nic)->rx_frames, >=, 1);
    outb(IOB + 0x01, 0x50);
    outb(IOB + 0x02, 0x50); /* empty ring */
    set_curr(0x50);
    for (int i = 0; i < 3; i++)
        peer_send(f, sizeof f);
    fx_teardown();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dp8390/isr", test_isr_semantics);
    g_test_add_func("/dp8390/remote-dma", test_remote_dma_wrap);
    g_test_add_func("/dp8390/tx-runt-timing", test_tx_runt_and_timing);
    g_test_add_func("/dp8390/ring-wrap-send-packet", test_receive_ring_wrap_and_send_packet);
    g_test_add_func("/dp8390/overflow", test_overflow);
    g_test_add_func("/dp8390/multicast", test_multicast_hash);
    g_test_add_func("/dp8390/loopback", test_loopback);
    g_test_add_func("/dp8390/crc-runts", test_crc_errors_and_runts);
    g_test_add_func("/dp8390/hostile-ring", test_hostile_ring);
    return g_test_run();
}
