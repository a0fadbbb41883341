/* WD8013: the reads Linux's wd.c probe makes, the shared-memory window
 * (shown and hidden by MSR.MENB, moved by MSR/LAAR), its ISA cost by LAAR's
 * 16-bit bit at 33 and 66 MHz, and traffic through the shared memory. */
#include <glib.h>
#include <string.h>

#include "devices/net/dp8390.h"
#include "devices/netdev/netdev.h"
#include "emu/machine.h"

#include "nic8390_fixture.h"

#define IO  0x280
#define NIC (IO + 0x10)
static const uint8_t MAC[6] = {0x00, 0x00, 0xc0, 0x12, 0x34, 0x56};

/* A machine on `cpu` with 512 KiB of RAM (below the ISA window area) and
 * the board `spec`. */
static void setup(const char *cpu, const char *spec)
{
    nic8390_setup(cpu, 512 << 10, spec);
}

static void test_probe(void)
{
    setup("386dx-40", "wd8013,mac=00:00:c0:12:34:56");
    unsigned sum = 0;
    for (int i = 0; i < 8; i++)
        sum += inb(IO + 8 + i);
    g_assert_cmphex(sum & 0xff, ==, 0xff);
    g_assert_cmphex(inb(IO + 8), !=, 0xff);
    for (int i = 0; i < 6; i++)
        g_assert_cmphex(inb(IO + 8 + i), ==, MAC[i]);
    g_assert_cmphex(inb(IO + 14), ==, 0x27); /* WD8013EP, soft config */
    /* Not a PureData card, not an "ancient" 8003 (0..5 differ from 8..13). */
    g_assert_false(inb(IO) == 'P' && inb(IO + 1) == 'D');
    int i;
    for (i = 0; i < 6; i++)
        if (inb(IO + i) != inb(IO + 8 + i)) break;
    g_assert_cmpint(i, <, 6);
    /* The 16-bit test: bit 0 of register 1 stays set when written clear. */
    uint8_t tmp = inb(IO + 1);
    g_assert_cmphex(tmp & 1, ==, 1);
    outb(IO + 1, tmp ^ 0x01);
    g_assert_cmphex(inb(IO + 1) & 1, ==, 1);
    uint8_t r5 = inb(IO + 5);
    outb(IO + 5, 0x40 | (r5 & 0x1f));
    outb(IO + 1, tmp);
    /* mem_start from MSR and LAAR. */
    uint8_t reg0 = inb(IO);
    g_assert_true(reg0 != 0xff && reg0 != 0);
    uint32_t mem = ((uint32_t)(reg0 & 0x3f) << 13) + ((uint32_t)(inb(IO + 5) & 0x1f) << 19);
    g_assert_cmphex(mem, ==, 0xd0000);
    /* IRQ from IRR and ICR. */
    static const int irqmap[] = {9, 3, 5, 7, 10, 11, 15, 4};
    g_assert_cmpint(irqmap[((inb(IO + 4) >> 5) & 3) + (inb(IO + 1) & 4)], ==, 10);
    nic8390_teardown();
    setup("386dx-40", "wd8013,irq=3,io=0x300,mem=0xcc000");
    g_assert_cmpint(irqmap[((inb(0x304) >> 5) & 3) + (inb(0x301) & 4)], ==, 3);
    uint32_t mem2 = ((uint32_t)(inb(0x300) & 0x3f) << 13) + ((uint32_t)(inb(0x305) & 0x1f) << 19);
    g_assert_cmphex(mem2, ==, 0xcc000);
    nic8390_teardown();
}

static void test_window_and_costs(void)
{
    const char *cpus[2] = {"486dx-33", "486dx2-66"};
    /* Per bus cycle: 8-bit memory 6 BCLK (720 ns), 16-bit 3 BCLK (360 ns). */
    const unsigned c8[2] = {24, 48}, c16[2] = {12, 24};
    for (int k = 0; k < 2; k++) {
        setup(cpus[k], "wd8013");
        /* Window hidden: unmapped (all ones). */
        g_assert_cmphex(nm_mem_read(m->mem, 0xd0000, 1), ==, 0xff);
        outb(IO, (0xd0000 >> 13 & 0x3f) | 0x40); /* MENB */
        nm_mem_write(m->mem, 0xd0010, 0xa55a, 2);
        g_assert_cmphex(nm_mem_read(m->mem, 0xd0010, 2), ==, 0xa55a);
        uint64_t c = m->clock.cycles;
        nm_mem_read(m->mem, 0xd0000, 2); /* 8-bit window: two 8-bit cycles */
        g_assert_cmpuint(m->clock.cycles - c, ==, 2 * c8[k]);
        c = m->clock.cycles;
        nm_mem_read(m->mem, 0xd0000, 1);
        g_assert_cmpuint(m->clock.cycles - c, ==, c8[k]);
        outb(IO + 5, 0x80 | 0x40 | (0xd0000 >> 19)); /* MEM16EN */
        c = m->clock.cycles;
        nm_mem_read(m->mem, 0xd0000, 2);
        g_assert_cmpuint(m->clock.cycles - c, ==, c16[k]);
        c = m->clock.cycles;
        nm_mem_read(m->mem, 0xd0000, 4); /* two 16-bit cycles */
        g_assert_cmpuint(m->clock.cycles - c, ==, 2 * c16[k]);
        /* 0WS16: NOWS# makes it 2 BCLK. */
        outb(IO + 5, 0x80 | 0x40 | 0x20 | (0xd0000 >> 19));
        c = m->clock.cycles;
        nm_mem_read(m->mem, 0xd0000, 2);
        g_assert_cmpuint(m->clock.cycles - c, ==, c16[k] * 2 / 3);
        /* Register access: 8-bit I/O cycle. */
        c = m->clock.cycles;
        inb(NIC + 7);
        g_assert_cmpuint(m->clock.cycles - c, ==, c8[k]);
        /* Disable: hidden again; the RAM keeps its contents. */
        outb(IO, 0xd0000 >> 13 & 0x3f);
        g_assert_cmphex(nm_mem_read(m->mem, 0xd0010, 2), ==, 0xffff);
        outb(IO, (0xd0000 >> 13 & 0x3f) | 0x40);
        g_assert_cmphex(nm_mem_read(m->mem, 0xd0010, 2), ==, 0xa55a);
        /* Moved by MSR: 0xd8000. */
        outb(IO, (0xd8000 >> 13 & 0x3f) | 0x40);
        g_assert_cmphex(nm_mem_read(m->mem, 0xd8010, 2), ==, 0xa55a);
        g_assert_cmphex(nm_mem_read(m->mem, 0xd0010, 2), ==, 0xffff);
        nic8390_teardown();
    }
}

typedef struct {
    nm_net_endpoint ep;
    unsigned n;
    size_t len;
} sink;

static void sink_rx(void *opaque, const uint8_t *f, size_t len)
{
    (void)f;
    sink *s = opaque;
    s->n++;
    s->len = len;
}

static void run_ns(uint64_t ns)
{
    nm_clock *c = &m->clock;
    uint64_t end = nm_clock_cycles_from_ns(c, nm_clock_now_ns(c) + ns);
    while (c->deadline <= end) {
        if (c->cycles < c->deadline) c->cycles = c->deadline;
        nm_clock_run_due(c);
    }
    c->cycles = end;
}

static void test_traffic_through_shared_memory(void)
{
    setup("386dx-40", "wd8013,net=hub:w,mac=00:00:c0:12:34:56");
    GError *err = NULL;
    sink s = {.ep = {.name = "sink"}};
    s.ep.opaque = &s;
    s.ep.receive = sink_rx;
    g_assert_nonnull(nm_net_attach(m, &s.ep, "hub:w", 10000000, NULL, "test", &err));
    /* wd_open + NS8390_init (word16). */
    outb(IO + 5, 0x40 | 0x80 | 0x01);
    outb(IO, 0x28 | 0x40);
    outb(IO + 4, inb(IO + 4) | 0x80); /* IEN, as wd.c does on soft-config boards */
    outb(NIC, 0x21);
    outb(NIC + 0x0e, 0x49);
    outb(NIC + 0x0c, 0x04);
    outb(NIC + 0x0d, 0x00);
    outb(NIC + 0x01, 0x0c);
    outb(NIC + 0x02, 0x40);
    outb(NIC + 0x03, 0x3f);
    outb(NIC, 0x61);
    for (int i = 0; i < 6; i++)
        outb(NIC + 1 + i, MAC[i]);
    outb(NIC + 7, 0x0c);
    outb(NIC, 0x22);
    outb(NIC + 0x07, 0xff);
    outb(NIC + 0x0f, 0x3f);
    /* TX: the frame goes into shared memory at page 0. */
    uint8_t f[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    memcpy(f + 6, MAC, 6);
    for (unsigned i = 0; i < sizeof f; i += 2)
        nm_mem_write(m->mem, 0xd0000 + i, (uint32_t)(f[i] | f[i + 1] << 8), 2);
    outb(NIC + 4, 0x00);
    outb(NIC + 5, 60);
    outb(NIC + 6, 0);
    outb(NIC, 0x26);
    run_ns(1000000);
    g_assert_cmpuint(s.n, ==, 1);
    g_assert_cmpuint(s.len, ==, 64);
    g_assert_true(nm_irq_level(&m->irq, 10));
    /* IEN off masks the line. */
    outb(IO + 4, inb(IO + 4) & 0x7f);
    g_assert_false(nm_irq_level(&m->irq, 10));
    outb(IO + 4, inb(IO + 4) | 0x80);
    outb(NIC + 7, 0xff);
    /* RX: lands in the ring, read straight out of the window. */
    uint8_t r[64];
    memcpy(r, MAC, 6);
    memcpy(r + 6, f, 6);
    memset(r + 12, 0x5a, 48);
    uint32_t crc = nm_eth_crc32(r, 60);
    for (int i = 0; i < 4; i++)
        r[60 + i] = (uint8_t)(crc >> (8 * i));
    nm_net_send(&s.ep, r, sizeof r);
    run_ns(1000000);
    g_assert_cmphex(inb(NIC + 7) & 1, ==, 1);
    g_assert_cmphex(nm_mem_read(m->mem, 0xd0c00, 1), ==, 0x01);       /* status */
    g_assert_cmphex(nm_mem_read(m->mem, 0xd0c01, 1), ==, 0x0d);       /* next */
    g_assert_cmphex(nm_mem_read(m->mem, 0xd0c02, 2), ==, 68);         /* count */
    g_assert_cmphex(nm_mem_read(m->mem, 0xd0c04, 4), ==, 0x12c00000); /* dst */
    /* Board reset through MSR.RST. */
    outb(IO, 0x80);
    g_assert_cmphex(inb(NIC + 7) & 0x80, ==, 0x80);
    g_assert_cmphex(nm_mem_read(m->mem, 0xd0c00, 1), ==, 0xff); /* MENB off */
    nic8390_teardown();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/wd8013/probe", test_probe);
    g_test_add_func("/wd8013/window-costs", test_window_and_costs);
    g_test_add_func("/wd8013/traffic", test_traffic_through_shared_memory);
    return g_test_run();
}
