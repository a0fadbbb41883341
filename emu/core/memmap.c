#include "emu/core/memmap.h"

#include <glib.h>
#include <string.h>

#include "emu/core/hosttable.h"
#include "emu/core/log.h"

nm_memmap *nm_memmap_new(nm_clock *clock)
{
    nm_memmap *m = g_new0(nm_memmap, 1);
    m->clock = clock;
    /* 1 M entries each; untouched pages cost no host memory (hosttable.h). */
    m->page_region = nm_host_table_new(NM_PAGE_COUNT * sizeof *m->page_region);
    m->page_whole = nm_host_table_new(NM_PAGE_COUNT);
    m->page_watched = nm_host_table_new(NM_PAGE_COUNT);
    return m;
}

void nm_memmap_free(nm_memmap *m)
{
    if (!m) return;
    for (nm_mem_region *r = m->regions, *next; r; r = next) {
        next = r->next;
        if (r->owns_host) nm_host_table_free(r->host, r->size);
        g_free(r);
    }
    nm_host_table_free(m->page_region, NM_PAGE_COUNT * sizeof *m->page_region);
    nm_host_table_free(m->page_whole, NM_PAGE_COUNT);
    nm_host_table_free(m->page_watched, NM_PAGE_COUNT);
    g_free(m);
}

static bool region_contains(const nm_mem_region *r, uint32_t paddr)
{
    return r->enabled && paddr - r->base < r->size;
}

/* Recompute the page entries of [first_page, last_page] from the region list:
 * the last enabled region in the list that touches a page wins. */
static void rebuild_pages(nm_memmap *m, uint32_t first_page, uint32_t last_page)
{
    for (uint64_t p = first_page; p <= last_page; p++) {
        uint32_t lo = (uint32_t)(p << NM_PAGE_SHIFT), hi = lo + (NM_PAGE_SIZE - 1);
        nm_mem_region *top = NULL;
        bool whole = false;
        for (nm_mem_region *r = m->regions; r; r = r->next) {
            if (!r->enabled) continue;
            uint32_t rlast = r->base + (r->size - 1);
            if (rlast < lo || r->base > hi) continue;
            top = r;
            whole = r->base <= lo && rlast >= hi;
        }
        /* "Whole": the top region covers the page, so nothing beneath shows. */
        m->page_region[p] = top;
        m->page_whole[p] = whole;
    }
    m->map_gen++;
}

static void rebuild_region_pages(nm_memmap *m, const nm_mem_region *r)
{
    rebuild_pages(m, r->base >> NM_PAGE_SHIFT, (r->base + (r->size - 1)) >> NM_PAGE_SHIFT);
}

static nm_mem_region *add_region(nm_memmap *m, const char *name, nm_region_kind kind, uint32_t base,
                                 uint32_t size)
{
    if (size == 0 || (uint64_t)base + size > (1ull << 32)) return NULL;
    nm_mem_region *r = g_new0(nm_mem_region, 1);
    r->name = name;
    r->kind = kind;
    r->base = base;
    r->size = size;
    r->enabled = true;
    nm_mem_region **tail = &m->regions;
    while (*tail)
        tail = &(*tail)->next;
    *tail = r;
    rebuild_region_pages(m, r);
    return r;
}

nm_mem_region *nm_memmap_add_ram(nm_memmap *m, const char *name, uint32_t base, uint32_t size)
{
    nm_mem_region *r = add_region(m, name, NM_REGION_RAM, base, size);
    if (r) {
        r->host = nm_host_table_new(size);
        r->owns_host = true;
    }
    return r;
}

nm_mem_region *nm_memmap_add_rom(nm_memmap *m, const char *name, uint32_t base, uint32_t size)
{
    nm_mem_region *r = add_region(m, name, NM_REGION_ROM, base, size);
    if (r) {
        r->host = nm_host_table_new(size);
        r->owns_host = true;
    }
    return r;
}

nm_mem_region *nm_memmap_add_alias_rom(nm_memmap *m, const char *name, uint32_t base,
                                       const nm_mem_region *of)
{
    nm_mem_region *r = add_region(m, name, NM_REGION_ROM, base, of->size);
    if (r) r->host = of->host;
    return r;
}

nm_mem_region *nm_memmap_add_mmio(nm_memmap *m, const char *name, uint32_t base, uint32_t size,
                                  const nm_mmio_ops *ops, void *opaque, nm_bus_cost *cost)
{
    nm_mem_region *r = add_region(m, name, NM_REGION_MMIO, base, size);
    if (r) {
        r->ops = ops;
        r->opaque = opaque;
        r->cost = cost;
    }
    return r;
}

void nm_memmap_remove(nm_memmap *m, nm_mem_region *r)
{
    for (nm_mem_region **p = &m->regions; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    r->enabled = false;
    rebuild_region_pages(m, r);
    if (r->owns_host) nm_host_table_free(r->host, r->size);
    g_free(r);
}

void nm_mem_region_set_enabled(nm_memmap *m, nm_mem_region *r, bool enabled)
{
    if (r->enabled == enabled) return;
    r->enabled = enabled;
    rebuild_region_pages(m, r);
}

void nm_mem_region_move(nm_memmap *m, nm_mem_region *r, uint32_t new_base)
{
    if ((uint64_t)new_base + r->size > (1ull << 32)) {
        nm_warn(MEM, "region %s cannot move to 0x%08x: it would pass 4 GB", r->name, new_base);
        return;
    }
    bool was = r->enabled;
    r->enabled = false;
    rebuild_region_pages(m, r);
    r->base = new_base;
    r->enabled = was;
    rebuild_region_pages(m, r);
}

bool nm_mem_region_load(nm_mem_region *r, uint32_t offset, const void *data, size_t len)
{
    if (!r->host || offset > r->size || len > r->size - offset) return false;
    memcpy(r->host + offset, data, len);
    return true;
}

nm_mem_region *nm_memmap_lookup(const nm_memmap *m, uint32_t paddr)
{
    uint32_t page = paddr >> NM_PAGE_SHIFT;
    nm_mem_region *r = m->page_region[page];
    if (!r || m->page_whole[page]) return r;
    /* Page shared by several regions: the last one in the list wins. */
    nm_mem_region *found = NULL;
    for (nm_mem_region *q = m->regions; q; q = q->next)
        if (region_contains(q, paddr)) found = q;
    return found;
}

uint8_t *nm_memmap_page_ptr(const nm_memmap *m, uint32_t paddr, bool for_write)
{
    uint32_t page = paddr >> NM_PAGE_SHIFT;
    nm_mem_region *r = m->page_region[page];
    if (!r || !m->page_whole[page]) return NULL;
    if (r->kind == NM_REGION_RAM || (r->kind == NM_REGION_ROM && !for_write))
        return r->host + ((page << NM_PAGE_SHIFT) - r->base);
    return NULL;
}

static uint32_t read_le(const uint8_t *p, unsigned size)
{
    switch (size) {
    case 1: return p[0];
    case 2: return (uint32_t)p[0] | (uint32_t)p[1] << 8;
    default:
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
}

static void write_le(uint8_t *p, uint32_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t size_mask(unsigned size)
{
    return size >= 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
}

uint32_t nm_mem_read(nm_memmap *m, uint32_t paddr, unsigned size)
{
    nm_mem_region *r = nm_memmap_lookup(m, paddr);
    uint32_t last = paddr + (size - 1);
    if (size > 1 && (last < paddr || !r || !region_contains(r, last)) &&
        (r || last < paddr || nm_memmap_lookup(m, last))) {
        /* Straddles a region boundary (or 4 GB): byte by byte, as the bus would. */
        uint32_t v = 0;
        for (unsigned i = 0; i < size; i++)
            v |= nm_mem_read(m, paddr + i, 1) << (8 * i);
        return v;
    }
    if (!r) {
        m->unmapped_reads++;
        nm_debug(MEM, "read%u from unmapped 0x%08x", size * 8, paddr);
        return size_mask(size);
    }
    if (r->kind != NM_REGION_MMIO) return read_le(r->host + (paddr - r->base), size);
    nm_bus_cost_charge(r->cost, m->clock, size);
    return r->ops->read(r->opaque, paddr - r->base, size) & size_mask(size);
}

void nm_mem_write(nm_memmap *m, uint32_t paddr, uint32_t value, unsigned size)
{
    nm_mem_region *r = nm_memmap_lookup(m, paddr);
    uint32_t last = paddr + (size - 1);
    if (size > 1 && (last < paddr || !r || !region_contains(r, last)) &&
        (r || last < paddr || nm_memmap_lookup(m, last))) {
        for (unsigned i = 0; i < size; i++)
            nm_mem_write(m, paddr + i, (value >> (8 * i)) & 0xff, 1);
        return;
    }
    if (!r) {
        m->unmapped_writes++;
        nm_debug(MEM, "write%u 0x%x to unmapped 0x%08x dropped", size * 8, value, paddr);
        return;
    }
    switch (r->kind) {
    case NM_REGION_RAM:
        write_le(r->host + (paddr - r->base), value, size);
        if (m->page_watched[paddr >> NM_PAGE_SHIFT] && m->watch_fn)
            m->watch_fn(m->watch_opaque, paddr, size);
        return;
    case NM_REGION_ROM:
        m->rom_writes++;
        nm_debug(MEM, "write%u 0x%x to ROM %s at 0x%08x ignored", size * 8, value, r->name, paddr);
        return;
    case NM_REGION_MMIO:
        nm_bus_cost_charge(r->cost, m->clock, size);
        r->ops->write(r->opaque, paddr - r->base, value & size_mask(size), size);
        return;
    }
}

/* Bytes from paddr over which one region answers every address: the rest of
 * the page when one region covers it, else a single byte. */
static size_t same_region_span(const nm_memmap *m, uint32_t paddr)
{
    if (m->page_whole[paddr >> NM_PAGE_SHIFT]) return NM_PAGE_SIZE - (paddr & (NM_PAGE_SIZE - 1));
    return 1; /* a page shared by several regions: go byte by byte */
}

/* True if [paddr, paddr+len) lies in RAM only. */
static bool dma_range_ok(const nm_memmap *m, uint32_t paddr, size_t len)
{
    if ((uint64_t)paddr + len > (1ull << 32)) return false;
    uint64_t end = (uint64_t)paddr + len;
    for (uint64_t a = paddr; a < end;) {
        nm_mem_region *r = nm_memmap_lookup(m, (uint32_t)a);
        if (!r || r->kind != NM_REGION_RAM) return false;
        a += same_region_span(m, (uint32_t)a);
    }
    return true;
}

static bool dma_refuse(nm_memmap *m, const char *what, uint32_t paddr, size_t len)
{
    m->dma_refused++;
    nm_warn(MEM, "DMA %s of %zu bytes at 0x%08x refused: not all RAM", what, len, paddr);
    return false;
}

bool nm_mem_dma_read(nm_memmap *m, uint32_t paddr, void *buf, size_t len)
{
    if (!dma_range_ok(m, paddr, len)) return dma_refuse(m, "read", paddr, len);
    /* The caches are snooped first: a modified line is written back
     * before the master reads memory (MESI inquire cycle, HITM#). */
    if (m->dma_snoop_fn && len) m->dma_snoop_fn(m->dma_snoop_opaque, paddr, len, false);
    uint8_t *out = buf;
    while (len) {
        nm_mem_region *r = nm_memmap_lookup(m, paddr);
        size_t chunk = MIN(len, same_region_span(m, paddr));
        memcpy(out, r->host + (paddr - r->base), chunk);
        out += chunk;
        paddr += (uint32_t)chunk;
        len -= chunk;
    }
    return true;
}

bool nm_mem_dma_write(nm_memmap *m, uint32_t paddr, const void *buf, size_t len)
{
    if (!dma_range_ok(m, paddr, len)) return dma_refuse(m, "write", paddr, len);
    const uint32_t start = paddr;
    const size_t total = len;
    const uint8_t *in = buf;
    while (len) {
        nm_mem_region *r = nm_memmap_lookup(m, paddr);
        size_t chunk = MIN(len, same_region_span(m, paddr));
        memcpy(r->host + (paddr - r->base), in, chunk);
        /* Tell the CPU when DMA overwrites a page it decoded code from. */
        if (m->watch_fn && m->page_watched[paddr >> NM_PAGE_SHIFT])
            m->watch_fn(m->watch_opaque, paddr, (unsigned)chunk);
        in += chunk;
        paddr += (uint32_t)chunk;
        len -= chunk;
    }
    /* The cost models drop the cache lines it wrote (bus snoop). */
    if (m->dma_snoop_fn && total) m->dma_snoop_fn(m->dma_snoop_opaque, start, total, true);
    return true;
}

void nm_memmap_set_dma_snoop(nm_memmap *m, nm_dma_snoop_fn fn, void *opaque)
{
    m->dma_snoop_fn = fn;
    m->dma_snoop_opaque = opaque;
}

void nm_memmap_set_write_watch(nm_memmap *m, nm_write_watch_fn fn, void *opaque)
{
    m->watch_fn = fn;
    m->watch_opaque = opaque;
}
