/* The SPI bus and the Xilinx SPI master driven as Linux's spi-xilinx.c
 * drives it: reset values, the endianness and FIFO-depth probes, manual
 * and automatic slave select, the exact virtual time bytes take on the
 * wire (bytes x 8 / SCLK), the transmit-empty interrupt at the end of a
 * burst, the PCI cost of register accesses, and hostile accesses. */
#include <glib.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "devices/bus/spi.h"
#include "devices/bus/xilinx_spi.h"
#include "emu/config.h"
#include "emu/machine.h"

#define BAR0 0xf0000000u

static nm_config *cfg;
static nm_machine *m;
static void *dev;
static nm_pci_device *pci;

/* A test slave: answers each byte with the previous one (a shift
 * register), records what it saw. */
typedef struct echo {
    uint8_t last;
    uint8_t seen[512];
    unsigned n;
    unsigned selects, deselects;
    bool selected;
} echo;
static echo ech;

static void echo_select(void *opaque, bool sel)
{
    echo *e = opaque;
    e->selected = sel;
    if (sel)
        e->selects++;
    else
        e->deselects++;
}

static uint8_t echo_exchange(void *opaque, uint8_t mosi)
{
    echo *e = opaque;
    uint8_t out = e->last;
    if (e->n < sizeof e->seen) e->seen[e->n++] = mosi;
    e->last = mosi;
    return out;
}

static const nm_spi_device_ops echo_ops = {echo_select, echo_exchange};

static void setup_with(const char *extra)
{
    GError *err = NULL;
    cfg = nm_config_new();
    g_free(cfg->cpu);
    cfg->cpu = g_strdup("pentium-100"); /* 10 ns a clock: times are exact */
    cfg->ram_bytes = 4u << 20;
    m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    g_assert_nonnull(nm_machine_add_device(m, &nm_pci_host_class, NULL, &err));
    g_assert_no_error(err);
    g_autofree char *spec = g_strdup_printf("xilinx-spi%s", extra ? extra : "");
    nm_devcfg *d = nm_devcfg_parse("test", spec, &err);
    g_assert_no_error(err);
    g_free(d->name);
    d->name = g_strdup("spi0");
    dev = nm_machine_add_device(m, &nm_xilinx_spi_class, d, &err);
    g_assert_no_error(err);
    nm_devcfg_free(d);
    pci = nm_pci_host_device(nm_pci_host_find(m), NM_PCI_DEVFN(1, 0));
    g_assert_nonnull(pci);
    nm_pci_config_write(pci, NM_PCI_BAR0, BAR0, 4);
    nm_pci_config_write(pci, NM_PCI_COMMAND, NM_PCI_CMD_MEM, 2);
    memset(&ech, 0, sizeof ech);
    nm_spi_bus *b = nm_spi_bus_find(m, "spi0");
    g_assert_true(b == nm_xilinx_spi_bus(dev));
    g_assert_true(nm_spi_bus_attach(b, 0, "echo", 0, &echo_ops, &ech, &err));
    g_assert_no_error(err);
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

static uint64_t now_ns(void)
{
    return nm_clock_now_ns(&m->clock);
}

/* Moves virtual time to `ns` (forward only), firing due events. */
static void run_until_ns(uint64_t ns)
{
    nm_clock *c = &m->clock;
    uint64_t end = nm_clock_cycles_from_ns(c, ns);
    g_assert_cmpuint(end, >=, c->cycles);
    while (c->deadline <= end) {
        if (c->deadline > c->cycles) c->cycles = c->deadline;
        nm_clock_run_due(c);
    }
    c->cycles = end;
}

/* What xspi_init_hw() does. */
static void linux_init(void)
{
    wr(NM_XSPI_SRR, 0x0a);
    wr(NM_XSPI_IPIER, 0x04);
    wr(NM_XSPI_DGIER, 0);
    wr(NM_XSPI_SSR, 0xffff);
    wr(NM_XSPI_CR, 0x80 | 0x04 | 0x02 | 0x20 | 0x40);
}

static void test_identity_and_probe(void)
{
    setup_with(NULL);
    g_assert_cmphex(nm_pci_config_read(pci, NM_PCI_VENDOR_ID, 4), ==, 0x701110eeu);
    g_assert_cmphex(nm_pci_config_read(pci, NM_PCI_REVISION, 4) >> 8, ==, 0x0c8000u);
    g_assert_cmpuint(nm_pci_config_read(pci, NM_PCI_INT_PIN, 1), ==, 1);
    /* Reset values (PG153): CR 0x180, SR 0x25, SSR all ones. */
    g_assert_cmphex(rd(NM_XSPI_CR), ==, 0x180);
    g_assert_cmphex(rd(NM_XSPI_SR), ==, 0x25);
    g_assert_cmphex(rd(NM_XSPI_SSR), ==, 0x1);
    /* Endianness probe: the LOOP bit reads back in little-endian. */
    wr(NM_XSPI_CR, 0x01);
    g_assert_cmphex(rd(NM_XSPI_CR) & 1, ==, 1);
    /* xilinx_spi_find_buffer_size(): reset, then fill until TX full. */
    wr(NM_XSPI_SRR, 0x0a);
    unsigned n = 0;
    for (;;) {
        wr(NM_XSPI_DTR, 0);
        if (rd(NM_XSPI_SR) & 0x08) break;
        n++;
        g_assert_cmpuint(n, <, 1000);
    }
    g_assert_cmpuint(n, ==, 15); /* a 16-deep FIFO, as the driver counts it */
    g_assert_cmpuint(rd(NM_XSPI_TXOCY), ==, 15);
    g_assert_cmpuint(ech.n, ==, 0); /* inhibited: nothing went out */
    linux_init();
    g_assert_cmphex(rd(NM_XSPI_SR), ==, 0x25); /* FIFOs reset */
    g_assert_cmpuint(ech.selects, ==, 0);
    teardown();
}

/* The exact time: with the PCI costs zeroed the device sees each access at
 * the instant the test makes it. */
static void test_byte_timing(void)
{
    setup_with(",pci_read_clocks=0,pci_write_clocks=0");
    g_assert_cmpuint(nm_spi_bytes_ns(25000000, 1), ==, 320);
    g_assert_cmpuint(nm_spi_bytes_ns(25000000, 1500), ==, 480000);
    g_assert_cmpuint(nm_spi_bytes_ns(40000000, 3), ==, 600);
    g_assert_cmpuint(nm_spi_bytes_ns(33333333, 1), ==, 241); /* rounded up */
    linux_init();
    wr(NM_XSPI_SSR, ~1u); /* select CS 0 (manual slave select) */
    g_assert_true(ech.selected);
    g_assert_cmpuint(ech.selects, ==, 1);
    run_until_ns(10000);
    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < 4; i++)
        wr(NM_XSPI_DTR, 0xa0 + i);
    uint64_t end = t0 + 4 * 320; /* 4 bytes x 8 SCLK at 25 MHz */
    run_until_ns(end - 10);
    g_assert_cmpuint(rd(NM_XSPI_RXOCY), ==, 2);       /* 3 bytes in */
    g_assert_cmphex(rd(NM_XSPI_SR) & 0x05, ==, 0x04); /* TX FIFO empty, RX not */
    run_until_ns(end);
    g_assert_cmpuint(rd(NM_XSPI_RXOCY), ==, 3); /* the 4th just completed */
    g_assert_cmpuint(ech.n, ==, 4);
    g_assert_cmpmem(ech.seen, 4, ((uint8_t[]){0xa0, 0xa1, 0xa2, 0xa3}), 4);
    /* Full duplex: the echo answered each byte with the previous one. */
    g_assert_cmphex(rd(NM_XSPI_DRR), ==, 0x00);
    g_assert_cmphex(rd(NM_XSPI_DRR), ==, 0xa0);
    g_assert_cmphex(rd(NM_XSPI_DRR), ==, 0xa1);
    g_assert_cmphex(rd(NM_XSPI_DRR), ==, 0xa2);
    g_assert_cmphex(rd(NM_XSPI_SR) & 1, ==, 1);

    /* A later write starts a new burst from its own instant; a full FIFO of
     * 16 takes 16 x 320 ns. */
    run_until_ns(end + 5000);
    uint64_t t1 = now_ns();
    for (unsigned i = 0; i < 16; i++)
        wr(NM_XSPI_DTR, i);
    run_until_ns(t1 + 16 * 320 - 10);
    g_assert_cmpuint(rd(NM_XSPI_RXOCY), ==, 14);
    run_until_ns(t1 + 16 * 320);
    g_assert_cmpuint(rd(NM_XSPI_RXOCY), ==, 15);
    g_assert_cmphex(rd(NM_XSPI_SR) & 0x02, ==, 0x02); /* RX full */
    wr(NM_XSPI_SSR, ~0u);
    g_assert_false(ech.selected);
    teardown();

    /* 40 MHz: 200 ns a byte. */
    setup_with(",sclk=40000000,pci_read_clocks=0,pci_write_clocks=0");
    linux_init();
    wr(NM_XSPI_SSR, ~1u);
    uint64_t t2 = now_ns();
    wr(NM_XSPI_DTR, 0x55);
    wr(NM_XSPI_DTR, 0x66);
    run_until_ns(t2 + 390);
    g_assert_cmphex(rd(NM_XSPI_SR) & 1, ==, 0); /* the first byte is in */
    g_assert_cmpuint(rd(NM_XSPI_RXOCY), ==, 0);
    g_assert_cmpuint(ech.n, ==, 1); /* exchanged when the CPU looked */
    run_until_ns(t2 + 400);
    g_assert_cmpuint(rd(NM_XSPI_RXOCY), ==, 1);
    g_assert_cmpuint(ech.n, ==, 2);
    teardown();
}

/* The transmit-empty interrupt, as the driver's IRQ mode uses it for
 * transfers longer than the FIFO: INTA rises when the last bit is out. */
static void test_tx_empty_interrupt(void)
{
    setup_with(",pci_read_clocks=0,pci_write_clocks=0");
    linux_init();
    wr(NM_XSPI_SSR, ~1u);
    uint32_t cr = rd(NM_XSPI_CR);
    wr(NM_XSPI_CR, cr | 0x100); /* inhibit while filling */
    wr(NM_XSPI_DGIER, 0x80000000u);
    for (unsigned i = 0; i < 15; i++)
        wr(NM_XSPI_DTR, i);
    g_assert_false(pci->irq_level);
    uint64_t t0 = now_ns();
    wr(NM_XSPI_CR, cr); /* go */
    run_until_ns(t0 + 15 * 320 - 10);
    g_assert_false(pci->irq_level);
    run_until_ns(t0 + 15 * 320);
    g_assert_true(pci->irq_level); /* fired by the controller's timer */
    uint32_t isr = rd(NM_XSPI_IPISR);
    g_assert_cmphex(isr & 0x04, ==, 0x04);
    wr(NM_XSPI_IPISR, isr); /* toggle-on-write clears what was read */
    g_assert_false(pci->irq_level);
    g_assert_cmphex(rd(NM_XSPI_IPISR), ==, 0);
    g_assert_cmpuint(nm_xilinx_spi_stats(dev)->interrupts, ==, 1);
    teardown();
}

/* Automatic slave select: asserted for a burst only. */
static void test_auto_slave_select(void)
{
    setup_with(",pci_read_clocks=0,pci_write_clocks=0");
    wr(NM_XSPI_SRR, 0x0a);
    wr(NM_XSPI_SSR, ~1u);
    wr(NM_XSPI_CR, 0x06); /* master, enabled, automatic SS */
    g_assert_false(ech.selected);
    uint64_t t0 = now_ns();
    wr(NM_XSPI_DTR, 1);
    g_assert_true(ech.selected);
    run_until_ns(t0 + 320);
    g_assert_cmphex(rd(NM_XSPI_SR) & 0x04, ==, 0x04);
    g_assert_false(ech.selected);
    g_assert_cmpuint(ech.selects, ==, 1);
    g_assert_cmpuint(ech.deselects, ==, 1);
    teardown();
}

/* The CPU pays PCI time for every register access: a read 10 PCI clocks
 * (300 ns = 30 clocks at 100 MHz), a posted write 3 (90 ns = 9 clocks). */
static void test_bus_cost(void)
{
    setup_with(NULL);
    uint64_t c0 = m->clock.cycles;
    rd(NM_XSPI_SR);
    g_assert_cmpuint(m->clock.cycles - c0, ==, 30);
    c0 = m->clock.cycles;
    wr(NM_XSPI_SSR, ~0u);
    g_assert_cmpuint(m->clock.cycles - c0, ==, 9);
    g_assert_cmpuint(nm_xilinx_spi_wait_clocks(dev), ==, 39);
    teardown();
}

static void test_hostile(void)
{
    setup_with(",fifo=16");
    linux_init();
    const nm_xspi_stats *st = nm_xilinx_spi_stats(dev);
    /* Bad reset key, unaligned and unknown offsets, byte accesses. */
    wr(NM_XSPI_SRR, 0x1234);
    g_assert_cmpuint(st->resets, ==, 1);
    nm_mem_write(m->mem, BAR0 + NM_XSPI_CR + 1, 0xff, 1);
    g_assert_cmphex(rd(NM_XSPI_CR), ==, 0xe6 & 0x39f);
    wr(0x800, 1);
    (void)rd(0xffc);
    (void)nm_mem_read(m->mem, BAR0 + NM_XSPI_SR + 2, 2);
    g_assert_cmpuint(st->bad_accesses, >=, 3);
    /* Reading an empty receive FIFO, overflowing the transmit FIFO with
     * the transmitter inhibited, overrunning the receive FIFO. */
    g_assert_cmphex(rd(NM_XSPI_DRR), ==, 0);
    g_assert_cmpuint(st->rx_fifo_underruns, ==, 1);
    wr(NM_XSPI_CR, rd(NM_XSPI_CR) | 0x100);
    for (unsigned i = 0; i < 40; i++)
        wr(NM_XSPI_DTR, i);
    g_assert_cmpuint(st->tx_fifo_overflows, ==, 24);
    wr(NM_XSPI_CR, rd(NM_XSPI_CR) & ~0x100u);
    run_until_ns(now_ns() + 100000);
    for (unsigned i = 0; i < 16; i++)
        wr(NM_XSPI_DTR, i);
    run_until_ns(now_ns() + 100000);
    (void)rd(NM_XSPI_SR);
    g_assert_cmpuint(st->rx_fifo_overruns, ==, 16);
    g_assert_cmphex(rd(NM_XSPI_IPISR) & 0x20, ==, 0x20);
    /* Disabling the core mid-burst, selecting absent chip selects. */
    wr(NM_XSPI_CR, 0x86 | 0x40);
    wr(NM_XSPI_DTR, 1);
    wr(NM_XSPI_DTR, 2);
    wr(NM_XSPI_CR, 0);
    wr(NM_XSPI_SSR, 0);
    run_until_ns(now_ns() + 100000);
    g_assert_cmphex(rd(NM_XSPI_SSR), ==, 0);
    /* A random register storm. */
    guint32 seed = 12345;
    for (unsigned i = 0; i < 20000; i++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t off = (seed >> 8) & 0x7c;
        uint32_t v = seed * 2654435761u;
        if (seed & 0x10000)
            wr(off, v);
        else
            (void)rd(off);
    }
    run_until_ns(now_ns() + 1000000);
    /* A bus with nothing on a chip select answers 0xFF. */
    nm_spi_bus *b = nm_xilinx_spi_bus(dev);
    nm_spi_bus_set_cs(b, 0);
    g_assert_cmphex(nm_spi_bus_exchange(b, 0x12), ==, 0xff);
    GError *err = NULL;
    g_assert_false(nm_spi_bus_attach(b, 0, "dup", 0, &echo_ops, &ech, &err));
    g_assert_nonnull(err);
    g_clear_error(&err);
    g_assert_false(nm_spi_bus_attach(b, 5, "far", 0, &echo_ops, &ech, &err));
    g_clear_error(&err);
    teardown();
}

static void test_bad_config(void)
{
    GError *err = NULL;
    nm_config *c = nm_config_new();
    nm_machine *mm = nm_machine_new(c, &err);
    g_assert_no_error(err);
    g_assert_nonnull(nm_machine_add_device(mm, &nm_pci_host_class, NULL, &err));
    nm_devcfg *d = nm_devcfg_parse("test", "xilinx-spi,fifo=17", &err);
    g_assert_no_error(err);
    g_assert_null(nm_machine_add_device(mm, &nm_xilinx_spi_class, d, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err->message, "fifo"));
    g_clear_error(&err);
    nm_devcfg_free(d);
    nm_machine_free(mm);
    nm_config_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/spi/identity-probe", test_identity_and_probe);
    g_test_add_func("/spi/byte-timing", test_byte_timing);
    g_test_add_func("/spi/tx-empty-interrupt", test_tx_empty_interrupt);
    g_test_add_func("/spi/auto-slave-select", test_auto_slave_select);
    g_test_add_func("/spi/bus-cost", test_bus_cost);
    g_test_add_func("/spi/hostile", test_hostile);
    g_test_add_func("/spi/bad-config", test_bad_config);
    return g_test_run();
}
