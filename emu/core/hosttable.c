#include "emu/core/hosttable.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t page_size(void)
{
    static size_t page;
    if (!page) page = (size_t)sysconf(_SC_PAGESIZE);
    return page;
}

/* The usable span: size rounded up to pages.  The buffer ends where the
 * span ends, against the upper guard page. */
static size_t span_of(size_t size)
{
    size_t page = page_size();
    return (size + page - 1) / page * page;
}

/* A few freed mappings, their pages already handed back to the host (so
 * they read as zeros again), for the next buffer of the same size: a
 * process that builds machine after machine (the fuzzers, the tests) skips
 * mapping and protecting guards each time.  Host-side only: the contents a
 * machine sees are zeros either way. */
#define SPARE_MAX 8
static struct {
    uint8_t *base;
    size_t size;
} spare[SPARE_MAX];
static unsigned spares;
G_LOCK_DEFINE_STATIC(spare);

void *nm_host_table_new(size_t size)
{
    size_t page = page_size(), span = span_of(size);
    if (span < size || span > SIZE_MAX - 2 * page)
        g_error("a %zu-byte host buffer does not fit the address space", size);
    uint8_t *base = NULL;
    G_LOCK(spare);
    for (unsigned i = 0; i < spares; i++) {
        if (spare[i].size != size) continue;
        base = spare[i].base;
        spare[i] = spare[--spares];
        break;
    }
    G_UNLOCK(spare);
    if (!base) {
        base = mmap(NULL, span + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) g_error("out of host memory for a %zu-byte buffer", size);
        if (span && mprotect(base + page, span, PROT_READ | PROT_WRITE))
            g_error("out of host memory for a %zu-byte buffer", size);
    }
    return base + page + (span - size);
}

void nm_host_table_free(void *table, size_t size)
{
    if (!table) return;
    size_t page = page_size(), span = span_of(size);
    uint8_t *base = (uint8_t *)table - (span - size) - page;
    /* Zero-fill on next touch; without it the mapping goes. */
    bool keep = span && !madvise(base + page, span, MADV_DONTNEED);
    G_LOCK(spare);
    if (keep && spares < SPARE_MAX) {
        spare[spares].base = base;
        spare[spares].size = size;
        spares++;
        base = NULL;
    }
    G_UNLOCK(spare);
    if (base) munmap(base, span + 2 * page);
}
