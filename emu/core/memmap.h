/* The physical address space: RAM, ROM and MMIO regions, looked up by 4 KB
 * page.  The CPU asks for a host pointer per RAM page (its fast path) and
 * falls back to nm_mem_read/write for everything else. */
#ifndef NICEMU_MEMMAP_H
#define NICEMU_MEMMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/core/clock.h"

#define NM_PAGE_SHIFT 12
#define NM_PAGE_SIZE  (1u << NM_PAGE_SHIFT)
#define NM_PAGE_COUNT (1u << (32 - NM_PAGE_SHIFT))

/* What a bus charges the CPU for one access, by access size, in CPU cycles.
 * The bus model (devices/bus/isa.c, pci.c) fills it from documented bus
 * timings at the CPU's clock; the counters feed the run report. */
typedef struct nm_bus_cost {
    const char *name;
    uint32_t cycles[5]; /* indexed by size: [1], [2], [4] */
    uint64_t accesses;
    uint64_t cycles_charged;
} nm_bus_cost;

static inline void nm_bus_cost_charge(nm_bus_cost *cost, nm_clock *clock, unsigned size)
{
    if (!cost) return;
    uint32_t cyc = cost->cycles[size > 4 ? 4 : size];
    cost->accesses++;
    cost->cycles_charged += cyc;
    nm_clock_charge_bus(clock, cyc);
}

/* MMIO callbacks get the offset into the region and the size (1, 2 or 4). */
typedef struct nm_mmio_ops {
    uint32_t (*read)(void *opaque, uint32_t offset, unsigned size);
    void (*write)(void *opaque, uint32_t offset, uint32_t value, unsigned size);
} nm_mmio_ops;

typedef enum { NM_REGION_RAM, NM_REGION_ROM, NM_REGION_MMIO } nm_region_kind;

typedef struct nm_mem_region nm_mem_region;
struct nm_mem_region {
    nm_mem_region *next; /* in priority order: later regions cover earlier ones */
    const char *name;
    nm_region_kind kind;
    uint32_t base;
    uint32_t size;
    bool enabled;
    uint8_t *host;  /* RAM and ROM contents */
    bool owns_host; /* allocated by the map */
    const nm_mmio_ops *ops;
    void *opaque;
    nm_bus_cost *cost; /* NULL: no wait states */
};

typedef void (*nm_write_watch_fn)(void *opaque, uint32_t paddr, unsigned len);
/* Bus-master DMA about to read (write false) or having written (write
 * true) [paddr, paddr + len): the cost models snoop their caches. */
typedef void (*nm_dma_snoop_fn)(void *opaque, uint32_t paddr, size_t len, bool write);

typedef struct nm_memmap {
    nm_clock *clock;
    nm_mem_region *regions;
    /* Per page: the topmost region touching it (NULL: unmapped), and whether
     * that region covers the page entirely (else the list is searched). */
    nm_mem_region **page_region;
    uint8_t *page_whole;
    /* Bumped whenever page_region/page_whole change: a cost model that
     * remembers what a page was (RAM, not MMIO) checks it is still so. */
    uint32_t map_gen;
    /* Pages holding decoded code: writes that do not go through the CPU's
     * own store path (DMA, MMIO-initiated) are reported to the CPU. */
    uint8_t *page_watched;
    nm_write_watch_fn watch_fn;
    void *watch_opaque;
    /* The cache snoop of bus-master DMA (the timing state; NULL: none). */
    nm_dma_snoop_fn dma_snoop_fn;
    void *dma_snoop_opaque;
    /* Counters for the report. */
    uint64_t unmapped_reads, unmapped_writes, rom_writes, dma_refused;
} nm_memmap;

nm_memmap *nm_memmap_new(nm_clock *clock);
void nm_memmap_free(nm_memmap *m);

/* Regions.  RAM and ROM are allocated and zero-filled by the map; ROM
 * contents are set with nm_mem_region_load.  Returns NULL if the range wraps
 * past 4 GB or has size 0. */
nm_mem_region *nm_memmap_add_ram(nm_memmap *m, const char *name, uint32_t base, uint32_t size);
nm_mem_region *nm_memmap_add_rom(nm_memmap *m, const char *name, uint32_t base, uint32_t size);
/* A ROM region sharing the contents of another (the boot ROM is visible both
 * below 1 MB and below 4 GB). */
nm_mem_region *nm_memmap_add_alias_rom(nm_memmap *m, const char *name, uint32_t base,
                                       const nm_mem_region *of);
nm_mem_region *nm_memmap_add_mmio(nm_memmap *m, const char *name, uint32_t base, uint32_t size,
                                  const nm_mmio_ops *ops, void *opaque, nm_bus_cost *cost);
void nm_memmap_remove(nm_memmap *m, nm_mem_region *r);
/* Enable/disable or move a region (WD8013 memory enable, PCI BARs). */
void nm_mem_region_set_enabled(nm_memmap *m, nm_mem_region *r, bool enabled);
void nm_mem_region_move(nm_memmap *m, nm_mem_region *r, uint32_t new_base);
bool nm_mem_region_load(nm_mem_region *r, uint32_t offset, const void *data, size_t len);

/* The region an address falls in (NULL: unmapped). */
nm_mem_region *nm_memmap_lookup(const nm_memmap *m, uint32_t paddr);

/* Host pointer to the start of the page containing paddr if the whole page is
 * RAM (or, for reads, ROM); NULL otherwise.  The CPU's software TLB caches it. */
uint8_t *nm_memmap_page_ptr(const nm_memmap *m, uint32_t paddr, bool for_write);

/* Single accesses of 1, 2 or 4 bytes, little-endian, any alignment.
 * MMIO callbacks see the access size; an access straddling two regions is
 * split into bytes.  Unmapped reads give all-ones; writes there and to ROM
 * are dropped.  Bus wait states are charged before the device sees it. */
uint32_t nm_mem_read(nm_memmap *m, uint32_t paddr, unsigned size);
void nm_mem_write(nm_memmap *m, uint32_t paddr, uint32_t value, unsigned size);

/* Bus-master DMA: RAM only.  A transfer that would touch anything but RAM,
 * or wrap past 4 GB, is refused whole (nothing copied), counted and logged,
 * and the call returns false; the device sets its error bit. */
bool nm_mem_dma_read(nm_memmap *m, uint32_t paddr, void *buf, size_t len);
bool nm_mem_dma_write(nm_memmap *m, uint32_t paddr, const void *buf, size_t len);

void nm_memmap_set_write_watch(nm_memmap *m, nm_write_watch_fn fn, void *opaque);
/* One listener (NULL: none): nm_mem_dma_read calls it before it copies,
 * nm_mem_dma_write after, each once for the whole accepted range. */
void nm_memmap_set_dma_snoop(nm_memmap *m, nm_dma_snoop_fn fn, void *opaque);
static inline void nm_memmap_watch_page(nm_memmap *m, uint32_t paddr)
{
    m->page_watched[paddr >> NM_PAGE_SHIFT] = 1;
}
static inline void nm_memmap_unwatch_page(nm_memmap *m, uint32_t paddr)
{
    m->page_watched[paddr >> NM_PAGE_SHIFT] = 0;
}
static inline bool nm_memmap_page_is_watched(const nm_memmap *m, uint32_t paddr)
{
    return m->page_watched[paddr >> NM_PAGE_SHIFT] != 0;
}

#endif
