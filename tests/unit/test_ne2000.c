/* NE2000 board: the Linux ne.c probe (PROM in byte and word mode, the 'WW'
 * signature, the reset port) and its ISA bus costs. */
#include <glib.h>
#include <string.h>

#include "devices/bus/isa.h"
#include "devices/net/dp8390.h"
#include "emu/machine.h"

#include "nic8390_fixture.h"

static const uint8_t MAC[6] = {0x00, 0x00, 0xe8, 0x01, 0x02, 0x03};

/* A machine on `cpu` with 1 MiB of RAM and the board `spec`. */
static void setup(const char *cpu, const char *spec)
{
    nic8390_setup(cpu, 1 << 20, spec);
}

/* ne_probe1's PROM read: byte-wide DCR, remote read of 32 bytes at 0. */
static void prom_dma(uint16_t io, uint8_t dcr, unsigned count)
{
    static const uint8_t seq[][2] = {{0x21, 0x00}, {0, 0x0e},    {0x00, 0x0a}, {0x00, 0x0b},
                                     {0x00, 0x0f}, {0xff, 0x07}, {0x20, 0x0c}, {0x02, 0x0d},
                                     {0, 0x0a},    {0x00, 0x0b}, {0x00, 0x08}, {0x00, 0x09},
                                     {0x0a, 0x00}};
    for (unsigned i = 0; i < G_N_ELEMENTS(seq); i++) {
        uint8_t v = seq[i][0];
        if (seq[i][1] == 0x0e) v = dcr;
        if (i == 8) v = (uint8_t)count;
        outb((uint16_t)(io + seq[i][1]), v);
    }
}

static void test_probe(void)
{
    setup("486dx-33", "ne2000,io=0x320,irq=5,mac=00:00:e8:01:02:03");
    const uint16_t io = 0x320;
    g_assert_cmphex(inb(io), !=, 0xff);
    /* The preliminary 8390 check: CNTR0 reads 0 after being read. */
    outb(io, 0x61);
    inb(io + 0x0d);
    outb(io + 0x0d, 0xff);
    outb(io, 0x20);
    inb(io + 0x0d);
    g_assert_cmphex(inb(io + 0x0d), ==, 0);
    /* Reset: read then write the reset port; ISR.RST acknowledges. */
    outb(io + 0x1f, inb(io + 0x1f));
    g_assert_cmphex(inb(io + 0x07) & 0x80, ==, 0x80);
    outb(io + 0x07, 0xff);

    /* Byte mode: 32 bytes, each PROM byte twice (so wordlength = 2). */
    prom_dma(io, 0x48, 32);
    uint8_t sa[32];
    for (int i = 0; i < 32; i += 2) {
        sa[i] = inb(io + 0x10);
        sa[i + 1] = inb(io + 0x10);
        g_assert_cmphex(sa[i], ==, sa[i + 1]);
    }
    for (int i = 0; i < 16; i++)
        sa[i] = sa[i + i];
    g_assert_cmpmem(sa, 6, MAC, 6);
    g_assert_cmphex(sa[14], ==, 0x57);
    g_assert_cmphex(sa[15], ==, 0x57);
    g_assert_cmphex(inb(io + 0x07) & 0x40, ==, 0x40); /* RDC */

    /* Word mode: 16 words, the byte on both lanes, "WW" at the end. */
    outb(io + 0x07, 0xff);
    prom_dma(io, 0x49, 32);
    uint16_t w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (uint16_t)nm_io_read(m->io, io + 0x10, 2);
    for (int i = 0; i < 6; i++)
        g_assert_cmphex(w[i], ==, MAC[i] * 0x101u);
    g_assert_cmphex(w[14], ==, 0x5757);
    g_assert_cmphex(w[15], ==, 0x5757);

    /* Autoirq: IMR 0x50, zero-count remote read -> IRQ 5. */
    outb(io + 0x07, 0xff);
    outb(io + 0x0f, 0x50);
    outb(io + 0x0a, 0);
    outb(io + 0x0b, 0);
    outb(io, 0x0a);
    g_assert_true(nm_irq_level(&m->irq, 5));
    outb(io + 0x0f, 0);
    g_assert_false(nm_irq_level(&m->irq, 5));
    nic8390_teardown();
}

static void test_isa_costs(void)
{
    /* 486DX-33: 8-bit I/O 6 BCLK = 720 ns = 24 clocks; 16-bit 3 BCLK = 12. */
    setup("486dx-33", "ne2000");
    uint64_t c = m->clock.cycles;
    inb(0x300 + 0x07);
    g_assert_cmpuint(m->clock.cycles - c, ==, 24);
    c = m->clock.cycles;
    nm_io_read(m->io, 0x310, 2); /* data port: one 16-bit cycle */
    g_assert_cmpuint(m->clock.cycles - c, ==, 12);
    c = m->clock.cycles;
    nm_io_read(m->io, 0x300, 2); /* word to the 8-bit registers: two cycles */
    g_assert_cmpuint(m->clock.cycles - c, ==, 48);
    nic8390_teardown();
    setup("486dx2-66", "ne2000");
    c = m->clock.cycles;
    inb(0x300);
    g_assert_cmpuint(m->clock.cycles - c, ==, 48);
    c = m->clock.cycles;
    nm_io_read(m->io, 0x310, 2);
    g_assert_cmpuint(m->clock.cycles - c, ==, 24);
    nm_report *r = nm_report_new();
    nm_machine_report(m, r);
    g_autofree char *json = nm_report_json(r);
    g_assert_nonnull(strstr(json, "isa_io_cycles"));
    nm_report_free(r);
    nic8390_teardown();
}

static void test_config_errors(void)
{
    GError *err = NULL;
    cfg = nm_config_new();
    g_assert_true(nm_config_add_device_spec(cfg, "--nic", "ne2000,io=0x301", &err));
    g_assert_null(nm_machine_new(cfg, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err->message, "io"));
    g_clear_error(&err);
    nm_config_free(cfg);
    /* Two cards on the same ports. */
    cfg = nm_config_new();
    g_assert_true(nm_config_add_device_spec(cfg, "--nic", "ne2000", &err));
    g_assert_true(nm_config_add_device_spec(cfg, "--nic", "ne2000,irq=10", &err));
    g_assert_null(nm_machine_new(cfg, &err));
    g_assert_nonnull(strstr(err->message, "already taken"));
    g_clear_error(&err);
    nm_config_free(cfg);
    /* Two cards on one IRQ: refused, naming the first, unless share-irq. */
    cfg = nm_config_new();
    g_assert_true(nm_config_add_device_spec(cfg, "--nic", "ne2000", &err));
    g_assert_true(nm_config_add_device_spec(cfg, "--nic", "ne2000,io=0x320", &err));
    g_assert_null(nm_machine_new(cfg, &err));
    g_assert_nonnull(strstr(err->message, "--nic ne2000,io=0x320: irq: IRQ 9 is already used by "
                                          "ne2000@0x300"));
    g_clear_error(&err);
    g_assert_true(nm_config_set(cfg, "command line", "share-irq", "9", &err));
    nm_machine *m2 = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    nm_machine_free(m2);
    nm_config_free(cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ne2000/probe", test_probe);
    g_test_add_func("/ne2000/isa-costs", test_isa_costs);
    g_test_add_func("/ne2000/config-errors", test_config_errors);
    return g_test_run();
}
