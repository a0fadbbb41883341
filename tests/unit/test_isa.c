/* ISA bus timing: cycle costs by width and CPU clock, splitting of wide
 * accesses, counters, the shared 8-bit cost, retiming on a clock change. */
#include <glib.h>
#include <string.h>

#include "devices/bus/isa.h"
#include "emu/machine.h"

typedef struct probe {
    unsigned calls[5];
    uint32_t last_offset;
} probe;

static uint32_t p_read(void *opaque, uint32_t offset, unsigned size)
{
    probe *p = opaque;
    p->calls[size]++;
    p->last_offset = offset;
    return size == 1 ? 0x10 + offset : 0x2000 + offset;
}

static void p_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)value;
    probe *p = opaque;
    p->calls[size]++;
    p->last_offset = offset;
}

static const nm_io_ops p_ops = {p_read, p_write, NULL};
static const nm_mmio_ops p_mops = {p_read, p_write};

static nm_machine *new_machine(nm_config **cfg, const char *cpu, const char *isa_spec)
{
    GError *err = NULL;
    *cfg = nm_config_new();
    g_free((*cfg)->cpu);
    (*cfg)->cpu = g_strdup(cpu);
    (*cfg)->ram_bytes = 512 << 10;
    if (isa_spec) g_assert_true(nm_config_add_device_spec(*cfg, "--device", isa_spec, &err));
    nm_machine *m = nm_machine_new(*cfg, &err);
    g_assert_no_error(err);
    return m;
}

static uint64_t cost_of(nm_machine *m, uint16_t port, unsigned size)
{
    uint64_t c = m->clock.cycles;
    nm_io_read(m->io, port, size);
    return m->clock.cycles - c;
}

static void test_io_cycles(void)
{
    nm_config *cfg;
    nm_machine *m = new_machine(&cfg, "486dx-33", NULL);
    GError *err = NULL;
    probe p8 = {0}, p16 = {0};
    nm_isa_io *a = nm_isa_claim_io(m, 0x200, 8, &p_ops, &p8, "card8", 8, &err);
    nm_isa_io *b = nm_isa_claim_io(m, 0x210, 8, &p_ops, &p16, "card16", 16, &err);
    g_assert_no_error(err);
    nm_isa_bus *bus = nm_isa_bus_get(m, NULL);
    g_assert_cmpuint(nm_isa_cycle_clocks(bus, true, 8, false), ==, 24);  /* 720 ns */
    g_assert_cmpuint(nm_isa_cycle_clocks(bus, true, 16, false), ==, 12); /* 360 ns */

    g_assert_cmpuint(cost_of(m, 0x200, 1), ==, 24);
    g_assert_cmpuint(cost_of(m, 0x200, 2), ==, 48); /* two 8-bit cycles */
    g_assert_cmpuint(p8.calls[1], ==, 3);
    g_assert_cmphex(nm_io_read(m->io, 0x202, 2), ==, 0x1312);
    g_assert_cmpuint(cost_of(m, 0x200, 4), ==, 96);
    g_assert_cmpuint(p8.calls[2] + p8.calls[4], ==, 0); /* the card sees bytes only */

    g_assert_cmpuint(cost_of(m, 0x210, 1), ==, 12);
    g_assert_cmpuint(cost_of(m, 0x210, 2), ==, 12);
    g_assert_cmpuint(cost_of(m, 0x210, 4), ==, 24); /* two 16-bit cycles */
    g_assert_cmpuint(p16.calls[2], ==, 3);
    g_assert_cmpuint(cost_of(m, 0x211, 2), ==, 24); /* odd: two byte cycles */

    nm_isa_stats st = {0};
    nm_isa_io_stats(a, &st);
    g_assert_cmpuint(st.io_cycles, ==, 1 + 2 + 2 + 4);
    g_assert_cmpuint(st.wait_clocks, ==, 24 * 9);

    /* Port 0x80-style claim with the bus's shared 8-bit cost. */
    probe pc = {0};
    nm_bus_cost *c8 = nm_isa_io8_cost(m);
    g_assert_nonnull(nm_ioport_claim(m->io, 0x80, 1, &p_ops, &pc, "post", c8));
    uint64_t c = m->clock.cycles;
    nm_io_write(m->io, 0x80, 0x55, 1);
    g_assert_cmpuint(m->clock.cycles - c, ==, 24);

    /* The CPU clock doubles: costs follow at the next access. */
    nm_clock_set_frequency(&m->clock, 200000000, 3);
    cost_of(m, 0x200, 1);
    g_assert_cmpuint(cost_of(m, 0x200, 1), ==, 48);
    g_assert_cmpuint(c8->cycles[1], ==, 48);

    nm_isa_stats all;
    nm_isa_bus_stats(bus, &all);
    g_assert_cmpuint(all.io_cycles, >=, st.io_cycles + 1);
    nm_isa_release_io(a);
    nm_isa_release_io(b);
    nm_machine_free(m);
    nm_config_free(cfg);
}

static void test_memory_and_config(void)
{
    nm_config *cfg;
    /* An 8 MHz bus: 6 BCLK = 750 ns = 24.75 -> 25 clocks at 33 MHz. */
    nm_machine *m = new_machine(&cfg, "486dx-33", "isa,clock=8000000");
    GError *err = NULL;
    probe pm = {0};
    nm_isa_mem *w = nm_isa_map_memory(m, 0xc8000, 0x4000, &p_mops, &pm, "win", 16, &err);
    g_assert_no_error(err);
    g_assert_cmphex(nm_mem_read(m->mem, 0xc8000, 1), ==, 0xff); /* created disabled */
    nm_isa_mem_set_enabled(w, true);
    uint64_t c = m->clock.cycles;
    g_assert_cmphex(nm_mem_read(m->mem, 0xc8004, 2), ==, 0x2004);
    g_assert_cmpuint(m->clock.cycles - c, ==, 13); /* 375 ns */
    nm_isa_mem_set_timing(w, 8, false);
    c = m->clock.cycles;
    nm_mem_read(m->mem, 0xc8004, 2);
    g_assert_cmpuint(m->clock.cycles - c, ==, 50);
    nm_isa_mem_move(w, 0xcc000);
    g_assert_cmphex(nm_mem_read(m->mem, 0xcc001, 1), ==, 0x11);
    nm_isa_unmap_memory(w);
    /* A second bus is refused; bad widths too. */
    g_assert_null(nm_isa_claim_io(m, 0x300, 4, &p_ops, &pm, "x", 12, &err));
    g_clear_error(&err);
    nm_machine_free(m);
    nm_config_free(cfg);

    cfg = nm_config_new();
    g_assert_true(nm_config_add_device_spec(cfg, "--device", "isa", &err));
    g_assert_true(nm_config_add_device_spec(cfg, "--device", "isa", &err));
    g_assert_null(nm_machine_new(cfg, &err));
    g_assert_nonnull(strstr(err->message, "already has an ISA bus"));
    g_clear_error(&err);
    nm_config_free(cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/isa/io-cycles", test_io_cycles);
    g_test_add_func("/isa/memory-config", test_memory_and_config);
    return g_test_run();
}
