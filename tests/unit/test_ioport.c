/* I/O port map and IRQ lines. */
#include <glib.h>

#include "emu/core/ioport.h"
#include "emu/core/irq.h"

typedef struct {
    uint32_t offset, value;
    unsigned size, reads, writes;
} port_probe;

static uint32_t probe_read(void *opaque, uint32_t offset, unsigned size)
{
    port_probe *p = opaque;
    p->offset = offset;
    p->size = size;
    p->reads++;
    return offset < 4 ? 0x44332211u >> (8 * offset) : 0;
}

static void probe_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    port_probe *p = opaque;
    p->offset = offset;
    p->value = value;
    p->size = size;
    p->writes++;
}

static const nm_io_ops probe_ops = {probe_read, probe_write, NULL};

static void test_claims(void)
{
    nm_clock clock;
    nm_clock_init(&clock, 66000000, 1);
    nm_ioport_map *io = nm_ioport_new(&clock);
    port_probe a = {0}, b = {0};
    nm_io_claim *ca = nm_ioport_claim(io, 0x300, 0x20, &probe_ops, &a, "a", NULL);
    g_assert_nonnull(ca);
    g_assert_null(nm_ioport_claim(io, 0x31f, 2, &probe_ops, &b, "b", NULL));  /* overlaps */
    g_assert_null(nm_ioport_claim(io, 0xffff, 2, &probe_ops, &b, "b", NULL)); /* past 64K */
    g_assert_null(nm_ioport_claim(io, 0x400, 0, &probe_ops, &b, "b", NULL));
    nm_io_claim *cb = nm_ioport_claim(io, 0x320, 4, &probe_ops, &b, "b", NULL);
    g_assert_nonnull(cb);
    g_assert_cmpstr(nm_ioport_owner(io, 0x310)->name, ==, "a");
    g_assert_null(nm_ioport_owner(io, 0x324));

    g_assert_cmphex(nm_io_read(io, 0x300, 1), ==, 0x11);
    g_assert_cmpuint(a.size, ==, 1);
    g_assert_cmphex(nm_io_read(io, 0x300, 4), ==, 0x44332211);
    g_assert_cmpuint(a.size, ==, 4);
    nm_io_write(io, 0x310, 0x1234abcd, 2);
    g_assert_cmphex(a.value, ==, 0xabcd); /* masked to the size */
    g_assert_cmpuint(a.offset, ==, 0x10);
    g_assert_cmpuint(a.size, ==, 2);

    /* A word across two claims goes as two byte accesses. */
    a.reads = b.reads = 0;
    g_assert_cmphex(nm_io_read(io, 0x31f, 2), ==, 0x1100);
    g_assert_cmpuint(a.reads, ==, 1);
    g_assert_cmpuint(b.reads, ==, 1);

    /* Unclaimed ports: all-ones, writes dropped, both counted. */
    g_assert_cmphex(nm_io_read(io, 0x500, 1), ==, 0xff);
    g_assert_cmphex(nm_io_read(io, 0x500, 2), ==, 0xffff);
    g_assert_cmphex(nm_io_read(io, 0x500, 4), ==, 0xffffffff);
    g_assert_cmpuint(io->unclaimed_reads, ==, 1 + 2 + 4);
    nm_io_write(io, 0x500, 0, 1);
    g_assert_cmpuint(io->unclaimed_writes, ==, 1);
    /* A dword at 0xFFFE wraps to port 0 as the bus would, never out of bounds. */
    g_assert_cmphex(nm_io_read(io, 0xfffe, 4), ==, 0xffffffff);

    nm_ioport_release(io, ca);
    g_assert_null(nm_ioport_owner(io, 0x300));
    g_assert_cmphex(nm_io_read(io, 0x300, 1), ==, 0xff);
    nm_ioport_free(io);
}

static void test_bus_cost(void)
{
    nm_clock clock;
    nm_clock_init(&clock, 40000000, 1);
    nm_ioport_map *io = nm_ioport_new(&clock);
    port_probe a = {0};
    nm_bus_cost cost = {.name = "isa-io8", .cycles = {0, 30, 60, 0, 120}};
    nm_ioport_claim(io, 0x80, 1, &probe_ops, &a, "post", &cost);
    nm_io_write(io, 0x80, 0x55, 1);
    nm_io_read(io, 0x80, 1);
    g_assert_cmpuint(clock.cycles, ==, 60);
    g_assert_cmpuint(cost.accesses, ==, 2);
    g_assert_cmpuint(clock.bus_wait_cycles, ==, 60);
    nm_ioport_free(io);
}

typedef struct {
    GString *log;
} irq_log;

static void on_irq(void *opaque, unsigned line, bool level)
{
    irq_log *l = opaque;
    g_string_append_printf(l->log, "%u%c ", line, level ? '+' : '-');
}

static void test_irq_lines(void)
{
    nm_irq_bus bus;
    nm_irq_init(&bus);
    irq_log log = {g_string_new(NULL)};
    nm_irq_raise(&bus, 3); /* no listener yet: level kept */
    nm_irq_set_listener(&bus, on_irq, &log);
    g_assert_true(nm_irq_level(&bus, 3));
    nm_irq_raise(&bus, 9);
    nm_irq_raise(&bus, 9); /* no change: not reported again */
    nm_irq_lower(&bus, 9);
    nm_irq_lower(&bus, 9);
    nm_irq_lower(&bus, 3);
    nm_irq_raise(&bus, 40); /* no such line: ignored */
    g_assert_cmpstr(log.log->str, ==, "9+ 9- 3- ");
    g_assert_cmpuint(bus.raised_count[9], ==, 1);
    g_assert_false(nm_irq_level(&bus, 40));
    g_string_free(log.log, TRUE);
}

/* Claims released in any order leave the others working; the map frees
 * whatever is left (ASan/LSan in the sanitizer build see a double free or
 * a leak), and a new map starts empty. */
static void test_release_order(void)
{
    nm_clock clock;
    nm_clock_init(&clock, 66000000, 1);
    port_probe p = {0};
    for (unsigned round = 0; round < 3; round++) {
        nm_ioport_map *io = nm_ioport_new(&clock);
        g_assert_null(nm_ioport_owner(io, 0x100));
        g_assert_cmpuint(io->unclaimed_reads, ==, 0);
        nm_io_claim *c[5];
        for (unsigned i = 0; i < 5; i++)
            c[i] = nm_ioport_claim(io, (uint16_t)(0x100 + 8 * i), 8, &probe_ops, &p, "p", NULL);
        nm_ioport_release(io, c[2 + round % 3]); /* the middle, the last, the first-but-one */
        nm_ioport_release(io, c[0]);             /* the oldest */
        g_assert_null(nm_ioport_owner(io, 0x100));
        g_assert_true(nm_ioport_owner(io, 0x108) == c[1]);
        g_assert_true(nm_ioport_claim(io, 0x100, 8, &probe_ops, &p, "again", NULL) != NULL);
        nm_io_read(io, 0x2000, 1); /* unclaimed */
        nm_ioport_free(io);        /* frees the four left */
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ioport/claims", test_claims);
    g_test_add_func("/ioport/bus-cost", test_bus_cost);
    g_test_add_func("/ioport/release-order", test_release_order);
    g_test_add_func("/irq/lines", test_irq_lines);
    return g_test_run();
}
