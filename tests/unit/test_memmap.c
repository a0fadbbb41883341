/* Physical memory map: RAM, ROM, MMIO dispatch with sizes, unmapped
 * accesses, overlapping regions, moves, DMA bounds, bus-cost charging. */
#include <glib.h>
#include <string.h>

#include "emu/core/memmap.h"

typedef struct {
    uint32_t last_offset, last_value;
    unsigned last_size;
    unsigned reads, writes;
} mmio_probe;

static uint32_t probe_read(void *opaque, uint32_t offset, unsigned size)
{
    mmio_probe *p = opaque;
    p->last_offset = offset;
    p->last_size = size;
    p->reads++;
    return 0xA0B0C0D0u + offset;
}

static void probe_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    mmio_probe *p = opaque;
    p->last_offset = offset;
    p->last_value = value;
    p->last_size = size;
    p->writes++;
}

static const nm_mmio_ops probe_ops = {probe_read, probe_write};

typedef struct {
    nm_clock clock;
    nm_memmap *map;
} fixture;

static void setup(fixture *f, gconstpointer data)
{
    (void)data;
    nm_clock_init(&f->clock, 33000000, 1);
    f->map = nm_memmap_new(&f->clock);
}

static void teardown(fixture *f, gconstpointer data)
{
    (void)data;
    nm_memmap_free(f->map);
}

static void test_ram(fixture *f, gconstpointer data)
{
    (void)data;
    nm_mem_region *ram = nm_memmap_add_ram(f->map, "ram", 0, 1 << 20);
    g_assert_nonnull(ram);
    nm_mem_write(f->map, 0x1234, 0x11223344, 4);
    g_assert_cmphex(nm_mem_read(f->map, 0x1234, 4), ==, 0x11223344);
    g_assert_cmphex(nm_mem_read(f->map, 0x1235, 2), ==, 0x2233);
    g_assert_cmphex(nm_mem_read(f->map, 0x1237, 1), ==, 0x11);
    g_assert_cmphex(ram->host[0x1234], ==, 0x44); /* little-endian */
    /* Across a page boundary. */
    nm_mem_write(f->map, 0x1ffe, 0xdeadbeef, 4);
    g_assert_cmphex(nm_mem_read(f->map, 0x1ffe, 4), ==, 0xdeadbeef);
    g_assert_nonnull(nm_memmap_page_ptr(f->map, 0x5000, true));
    g_assert_true(nm_memmap_page_ptr(f->map, 0x5123, false) == ram->host + 0x5000);
    g_assert_cmpuint(f->map->unmapped_reads, ==, 0);
}

static void test_rom(fixture *f, gconstpointer data)
{
    (void)data;
    nm_memmap_add_ram(f->map, "ram", 0, 1 << 20);
    nm_mem_region *rom = nm_memmap_add_rom(f->map, "rom", 0xF0000, 0x10000);
    const uint8_t code[4] = {0xEA, 0x5B, 0xE0, 0x00};
    g_assert_true(nm_mem_region_load(rom, 0xFFF0, code, 4));
    g_assert_false(nm_mem_region_load(rom, 0xFFFE, code, 4)); /* past its end */
    nm_mem_region *alias = nm_memmap_add_alias_rom(f->map, "rom-high", 0xFFFF0000, rom);
    g_assert_nonnull(alias);
    /* ROM covers the RAM beneath it; writes are ignored and counted. */
    g_assert_cmphex(nm_mem_read(f->map, 0xFFFF0, 4), ==, 0x00E05BEA);
    g_assert_cmphex(nm_mem_read(f->map, 0xFFFFFFF0, 4), ==, 0x00E05BEA);
    nm_mem_write(f->map, 0xFFFF0, 0x12345678, 4);
    g_assert_cmphex(nm_mem_read(f->map, 0xFFFF0, 4), ==, 0x00E05BEA);
    g_assert_cmpuint(f->map->rom_writes, ==, 1);
    g_assert_nonnull(nm_memmap_page_ptr(f->map, 0xF0000, false));
    g_assert_null(nm_memmap_page_ptr(f->map, 0xF0000, true));
}

static void test_mmio(fixture *f, gconstpointer data)
{
    (void)data;
    mmio_probe probe = {0};
    nm_memmap_add_ram(f->map, "ram", 0, 1 << 20);
    nm_mem_region *r = nm_memmap_add_mmio(f->map, "dev", 0xD0000, 0x4000, &probe_ops, &probe, NULL);
    g_assert_nonnull(r);
    g_assert_cmphex(nm_mem_read(f->map, 0xD0010, 2), ==, (0xA0B0C0D0u + 0x10) & 0xffff);
    g_assert_cmpuint(probe.last_size, ==, 2);
    g_assert_cmphex(probe.last_offset, ==, 0x10);
    g_assert_cmphex(nm_mem_read(f->map, 0xD0020, 4), ==, 0xA0B0C0D0u + 0x20);
    g_assert_cmpuint(probe.last_size, ==, 4);
    nm_mem_write(f->map, 0xD3FFF, 0x1ab, 1);
    g_assert_cmpuint(probe.last_size, ==, 1);
    g_assert_cmphex(probe.last_value, ==, 0xab); /* masked to the size */
    g_assert_cmphex(probe.last_offset, ==, 0x3FFF);
    g_assert_null(nm_memmap_page_ptr(f->map, 0xD0000, false));
    /* A 4-byte access straddling the region's end is split into bytes. */
    probe.reads = 0;
    nm_mem_read(f->map, 0xD3FFE, 4);
    g_assert_cmpuint(probe.reads, ==, 2);
    /* Disabled: the RAM beneath shows again. */
    nm_mem_region_set_enabled(f->map, r, false);
    nm_mem_write(f->map, 0xD0000, 0x55, 1);
    g_assert_cmphex(nm_mem_read(f->map, 0xD0000, 1), ==, 0x55);
    nm_mem_region_set_enabled(f->map, r, true);
    g_assert_cmphex(nm_mem_read(f->map, 0xD0000, 1), ==, 0xD0);
    /* Moved: the old place is RAM, the new place reaches the device. */
    nm_mem_region_move(f->map, r, 0xFEBC0000);
    g_assert_cmphex(nm_mem_read(f->map, 0xD0000, 1), ==, 0x55);
    probe.reads = 0;
    g_assert_cmphex(nm_mem_read(f->map, 0xFEBC0004, 4), ==, 0xA0B0C0D4u);
    g_assert_cmpuint(probe.reads, ==, 1);
}

static void test_sub_page_regions(fixture *f, gconstpointer data)
{
    (void)data;
    mmio_probe probe = {0};
    nm_memmap_add_ram(f->map, "ram", 0, 1 << 20);
    nm_memmap_add_mmio(f->map, "small", 0x3100, 0x20, &probe_ops, &probe, NULL);
    nm_mem_write(f->map, 0x30FF, 0x77, 1);
    g_assert_cmphex(nm_mem_read(f->map, 0x30FF, 1), ==, 0x77); /* RAM below it */
    g_assert_cmphex(nm_mem_read(f->map, 0x3100, 1), ==, 0xD0); /* the device */
    g_assert_cmphex(nm_mem_read(f->map, 0x3120, 1), ==, 0x00); /* RAM above it */
    g_assert_null(nm_memmap_page_ptr(f->map, 0x3000, false));  /* page not all RAM */
}

static void test_unmapped(fixture *f, gconstpointer data)
{
    (void)data;
    nm_memmap_add_ram(f->map, "ram", 0, 1 << 20);
    g_assert_cmphex(nm_mem_read(f->map, 0x200000, 4), ==, 0xffffffff);
    g_assert_cmphex(nm_mem_read(f->map, 0x200000, 2), ==, 0xffff);
    g_assert_cmphex(nm_mem_read(f->map, 0x200000, 1), ==, 0xff);
    g_assert_cmpuint(f->map->unmapped_reads, ==, 3);
    nm_mem_write(f->map, 0x200000, 1, 4);
    g_assert_cmpuint(f->map->unmapped_writes, ==, 1);
    /* Straddling the end of RAM: the RAM bytes read, the rest all-ones. */
    nm_mem_write(f->map, 0xFFFFE, 0xabcd, 2);
    g_assert_cmphex(nm_mem_read(f->map, 0xFFFFE, 4), ==, 0xffffabcd);
    /* Wrapping past 4 GB is split, never out of bounds. */
    g_assert_cmphex(nm_mem_read(f->map, 0xFFFFFFFE, 4), ==, 0x0000ffff);
    g_assert_null(nm_memmap_add_ram(f->map, "bad", 0xFFFFF000, 0x2000));
    g_assert_null(nm_memmap_add_ram(f->map, "empty", 0x1000, 0));
}

static void test_dma(fixture *f, gconstpointer data)
{
    (void)data;
    mmio_probe probe = {0};
    nm_memmap_add_ram(f->map, "ram", 0, 1 << 20);
    nm_memmap_add_mmio(f->map, "hole", 0xA0000, 0x20000, &probe_ops, &probe, NULL);
    uint8_t buf[8192], back[8192];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7);
    g_assert_true(nm_mem_dma_write(f->map, 0x1800, buf, sizeof buf));
    g_assert_true(nm_mem_dma_read(f->map, 0x1800, back, sizeof back));
    g_assert_cmpmem(buf, sizeof buf, back, sizeof back);
    /* Into the MMIO hole, past RAM, past 4 GB: refused whole, nothing copied. */
    memset(back, 0x5a, sizeof back);
    g_assert_false(nm_mem_dma_write(f->map, 0x9F000, buf, sizeof buf));
    g_assert_cmphex(nm_mem_read(f->map, 0x9F000, 1), ==, 0);
    g_assert_cmpuint(probe.writes, ==, 0);
    g_assert_false(nm_mem_dma_read(f->map, 0xFF000, back, sizeof back));
    g_assert_cmphex(back[0], ==, 0x5a);
    g_assert_false(nm_mem_dma_read(f->map, 0xFFFFF000, back, 0x2000));
    g_assert_cmpuint(f->map->dma_refused, ==, 3);
}

typedef struct {
    unsigned calls;
    uint32_t paddr;
} watch_log;

static void on_watch(void *opaque, uint32_t paddr, unsigned len)
{
    (void)len;
    watch_log *w = opaque;
    w->calls++;
    w->paddr = paddr;
}

static void test_write_watch(fixture *f, gconstpointer data)
{
    (void)data;
    watch_log w = {0};
    nm_memmap_add_ram(f->map, "ram", 0, 1 << 20);
    nm_memmap_set_write_watch(f->map, on_watch, &w);
    nm_mem_write(f->map, 0x7000, 1, 1);
    g_assert_cmpuint(w.calls, ==, 0);
    nm_memmap_watch_page(f->map, 0x7000);
    g_assert_true(nm_memmap_page_is_watched(f->map, 0x7abc));
    nm_mem_write(f->map, 0x7010, 1, 1);
    g_assert_cmpuint(w.calls, ==, 1);
    g_assert_cmphex(w.paddr, ==, 0x7010);
    uint8_t buf[16] = {0};
    nm_mem_dma_write(f->map, 0x7ff8, buf, sizeof buf); /* spans 0x7000 and 0x8000 */
    g_assert_cmpuint(w.calls, ==, 2);
    nm_memmap_unwatch_page(f->map, 0x7000);
    nm_mem_write(f->map, 0x7010, 1, 1);
    g_assert_cmpuint(w.calls, ==, 2);
}

static void test_bus_cost(fixture *f, gconstpointer data)
{
    (void)data;
    mmio_probe probe = {0};
    nm_bus_cost cost = {.name = "isa-mem16", .cycles = {0, 9, 9, 0, 18}};
    nm_memmap_add_mmio(f->map, "shared-mem", 0xD0000, 0x4000, &probe_ops, &probe, &cost);
    nm_mem_read(f->map, 0xD0000, 2);
    nm_mem_write(f->map, 0xD0000, 0, 4);
    nm_mem_read(f->map, 0xD0000, 1);
    g_assert_cmpuint(cost.accesses, ==, 3);
    g_assert_cmpuint(cost.cycles_charged, ==, 36);
    g_assert_cmpuint(f->clock.cycles, ==, 36);
    g_assert_cmpuint(f->clock.bus_wait_cycles, ==, 36);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add("/memmap/" path, fixture, NULL, setup, fn, teardown)
    ADD("ram", test_ram);
    ADD("rom", test_rom);
    ADD("mmio", test_mmio);
    ADD("sub-page-regions", test_sub_page_regions);
    ADD("unmapped", test_unmapped);
    ADD("dma", test_dma);
    ADD("write-watch", test_write_watch);
    ADD("bus-cost", test_bus_cost);
    return g_test_run();
}
