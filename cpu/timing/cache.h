/* A generic set-associative cache model for the cost models: tags only (the
 * data lives in guest RAM), physical addresses, deterministic.  One instance
 * per cache (the 486's unified 8 KB cache; the Pentium's code and data
 * caches).  Everything is allocated at creation: a lookup touches only the
 * tag, dirty and replacement arrays of one set.
 *
 * Replacement:
 *   NM_CACHE_LRU   true LRU (any number of ways up to 16): the Pentium's
 *                  2-way caches (one LRU bit per set, Pentium data book,
 *                  "cache organisation") are exactly this.
 *   NM_CACHE_PLRU  the Intel486 tree pseudo-LRU for 4 ways, 3 bits per set
 *                  (Intel486 Microprocessor Family data book, "cache
 *                  replacement", figure "on-chip cache replacement
 *                  strategy"): an access to L0/L1 sets B0=1, to L2/L3 sets
 *                  B0=0; L0 sets B1=1, L1 B1=0; L2 sets B2=1, L3 B2=0.  A
 *                  fill takes an invalid way first (lowest numbered), else
 *                  B0=0 -> (B1=0 ? L0 : L1), B0=1 -> (B2=0 ? L2 : L3).
 *
 * Write policy: write-through (486, Pentium code cache) never holds dirty
 * lines; write-back (Pentium data cache in WB mode) marks a written line
 * dirty and reports it when it is evicted.  write_allocate says whether a
 * write miss fills the line (neither the 486 nor the Pentium allocate on a
 * write miss). */
#ifndef NICEMU_CPU_TIMING_CACHE_H
#define NICEMU_CPU_TIMING_CACHE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum { NM_CACHE_WRITE_THROUGH, NM_CACHE_WRITE_BACK } nm_cache_write_policy;
typedef enum { NM_CACHE_LRU, NM_CACHE_PLRU } nm_cache_replacement;

typedef struct nm_cache_config {
    const char *name;   /* for the report: "l1", "code", "data" */
    uint32_t size;      /* bytes, a power of two */
    uint32_t ways;      /* 1..16; NM_CACHE_PLRU needs 4 */
    uint32_t line_size; /* bytes, a power of two >= 4 */
    nm_cache_write_policy write_policy;
    bool write_allocate;
    nm_cache_replacement replacement;
} nm_cache_config;

typedef struct nm_cache_stats {
    uint64_t read_hits, read_misses;
    uint64_t write_hits, write_misses;
    uint64_t fills;              /* lines allocated */
    uint64_t evictions;          /* valid lines replaced by a fill */
    uint64_t writebacks;         /* dirty lines written back (evictions, flushes) */
    uint64_t flushes;            /* whole-cache invalidations (INVD, WBINVD, CR0.CD) */
    uint64_t line_invalidations; /* single lines (snoops, INVLPG does not) */
} nm_cache_stats;

/* Result bits of nm_cache_access. */
#define NM_CACHE_HIT       1u /* the line was present */
#define NM_CACHE_FILL      2u /* a miss that allocated the line (a line fill follows) */
#define NM_CACHE_WRITEBACK 4u /* the fill evicted a dirty line (*victim = its address) */
#define NM_CACHE_EVICTED   8u /* the fill replaced a valid line (*victim = its address) */

typedef struct nm_cache nm_cache;

/* The start of every nm_cache (cache.c owns the rest): what the inline
 * repeat-hit path of nm_cache_access needs. */
typedef struct nm_cache_head {
    /* The line last hit or filled, | 1 (0: none).  It is the most recently
     * used of its set, so reading it again is a hit that changes nothing
     * but the counter (LRU and the 486's PLRU bits both stay as they are);
     * straight-line code and stack accesses read one line many times. */
    uint32_t mru;
    uint32_t line_mask; /* ~(line_size - 1) */
    /* Per set, the line its way used last, | 1 (0: none): using it again
     * changes no replacement state either, so a read hit there is counted
     * and nothing else.  Set = (phys >> line_shift) & set_mask. */
    const uint32_t *set_mru;
    uint32_t line_shift, set_mask;
    /* A write hit on that line changes nothing but the counter either, and
     * in a write-back cache its dirty bit: dirty[set * ways + way], the
     * way set_mru_way[set]. */
    bool write_back;
    uint32_t ways;
    uint8_t *dirty;
    const uint8_t *set_mru_way;
    /* A write miss without write-allocate changes nothing but the counter:
     * found inline when no way of the set holds the line (tag[set * ways
     * + way], 1 or 4 ways). */
    bool write_allocate;
    const uint32_t *tag;
    nm_cache_stats stats;
    /* Moved on by every change of which lines are present (a fill, an
     * invalidation, a flush); never reset: what a model worked out from
     * the lines present holds while it is unchanged. */
    uint64_t content_gen;
} nm_cache_head;

/* A geometry known when compiling, for the instances of the steps below
 * (the inline ones here and their slow paths in cache.c) compiled for it:
 * the line size's shift, the set mask, the ways, the replacement and the
 * write policy become constants instead of loads and loops.  One instance
 * so far, the 486's L1 (8 KB, 4-way PLRU, 16-byte lines, write-through, no
 * write allocation: NM_CACHE_GEOM_I486, nm_cache_i486_*); a cache takes an
 * instance only if its configuration is that one (nm_cache_is_i486).
 * NM_CACHE_GEOM_OWN: the cache's own configuration (the generic steps). */
typedef struct nm_cache_geom {
    bool fixed; /* false: everything from the cache (the generic steps) */
    uint32_t ways, line_shift, set_mask;
    bool plru, write_back, write_allocate;
} nm_cache_geom;
#define NM_CACHE_GEOM_OWN ((nm_cache_geom){.fixed = false})
#define NM_CACHE_GEOM_I486                                                                         \
    ((nm_cache_geom){.fixed = true,                                                                \
                     .ways = 4,                                                                    \
                     .line_shift = 4,                                                              \
                     .set_mask = 8192 / (4 * 16) - 1,                                              \
                     .plru = true,                                                                 \
                     .write_back = false,                                                          \
                     .write_allocate = false})

/* The head's fields, or the instance's constants. */
static inline __attribute__((always_inline)) uint32_t nm_cache_g_shift(const nm_cache_head *h,
                                                                       const nm_cache_geom g)
{
    return g.fixed ? g.line_shift : h->line_shift;
}
static inline __attribute__((always_inline)) uint32_t nm_cache_g_mask(const nm_cache_head *h,
                                                                      const nm_cache_geom g)
{
    return g.fixed ? g.set_mask : h->set_mask;
}
static inline __attribute__((always_inline)) uint32_t nm_cache_g_line_mask(const nm_cache_head *h,
                                                                           const nm_cache_geom g)
{
    return g.fixed ? ~((1u << g.line_shift) - 1) : h->line_mask;
}
static inline __attribute__((always_inline)) uint32_t nm_cache_g_ways(const nm_cache_head *h,
                                                                      const nm_cache_geom g)
{
    return g.fixed ? g.ways : h->ways;
}
static inline __attribute__((always_inline)) bool nm_cache_g_wb(const nm_cache_head *h,
                                                                const nm_cache_geom g)
{
    return g.fixed ? g.write_back : h->write_back;
}
static inline __attribute__((always_inline)) bool nm_cache_g_wa(const nm_cache_head *h,
                                                                const nm_cache_geom g)
{
    return g.fixed ? g.write_allocate : h->write_allocate;
}

/* NULL (with nothing allocated) if the geometry is impossible: size not a
 * multiple of ways*line_size, not powers of two, PLRU with ways != 4. */
nm_cache *nm_cache_new(const nm_cache_config *cfg);
void nm_cache_free(nm_cache *c);
const nm_cache_config *nm_cache_get_config(const nm_cache *c);

/* One access to the line holding physical address `phys` (the caller splits
 * accesses that cross lines: nm_cache_lines).  Updates replacement state on
 * hits and fills, counters always.  A write hit in a write-back cache marks
 * the line dirty; a write-allocating fill likewise.  Returns NM_CACHE_* bits;
 * when NM_CACHE_WRITEBACK is set, *victim (may be NULL) gets the line
 * address written back. */
unsigned nm_cache_access_slow(nm_cache *c, uint32_t phys, bool write, uint32_t *victim);
/* Whether the cache's configuration is NM_CACHE_GEOM_I486's (so that the
 * nm_cache_i486_* instance may be used on it). */
bool nm_cache_is_i486(const nm_cache *c);
/* nm_cache_access_slow, nm_cache_probe and nm_cache_read_if_present_slow
 * compiled for NM_CACHE_GEOM_I486 (the same results and state). */
unsigned nm_cache_i486_access_slow(nm_cache *c, uint32_t phys, bool write, uint32_t *victim);
bool nm_cache_i486_probe(const nm_cache *c, uint32_t phys);
bool nm_cache_i486_read_if_present_slow(nm_cache *c, uint32_t phys);
/* Whether no way of a set (its tags from `t`: `ways` of them, 1, 2 or 4,
 * a constant of the caller) holds the line tagged `tag`. */
static inline __attribute__((always_inline)) bool
nm_cache_set_lacks(const uint32_t *t, uint32_t tag, const unsigned ways)
{
    return ways == 1   ? t[0] != tag
           : ways == 2 ? t[0] != tag && t[1] != tag
                       : t[0] != tag && t[1] != tag && t[2] != tag && t[3] != tag;
}
/* A write miss found inline: the cache does not allocate on a write, and
 * no way of the line's set holds it (`ways`, the cache's, a constant of
 * the caller).  Counted as nm_cache_access_slow's write miss (nothing else
 * changes), true; else false and nothing done. */
static inline __attribute__((always_inline)) bool nm_cache_write_absent(nm_cache *c, uint32_t phys,
                                                                        const unsigned ways)
{
    nm_cache_head *h = (nm_cache_head *)(void *)c;
    if (h->write_allocate) return false;
    const uint32_t tag = (phys & h->line_mask) | 1u;
    if (!nm_cache_set_lacks(&h->tag[((phys >> h->line_shift) & h->set_mask) * ways], tag, ways))
        return false;
    h->stats.write_misses++;
    return true;
}
/* nm_cache_access's steps for geometry g (a constant). */
static inline __attribute__((always_inline)) unsigned
nm_cache_access_g(nm_cache *c, uint32_t phys, bool write, uint32_t *victim, const nm_cache_geom g)
{
    nm_cache_head *h = (nm_cache_head *)(void *)c;
    const uint32_t shift = nm_cache_g_shift(h, g), mask = nm_cache_g_mask(h, g);
    const uint32_t ways = nm_cache_g_ways(h, g);
    uint32_t tag = (phys & nm_cache_g_line_mask(h, g)) | 1u;
    if (!write) {
        /* the line last used, or the one its set used last */
        if (tag == h->mru || tag == h->set_mru[(phys >> shift) & mask]) {
            h->stats.read_hits++;
            h->mru = tag;
            return NM_CACHE_HIT;
        }
    } else {
        /* the line its set used last: nm_cache_access_slow's first case */
        uint32_t set = (phys >> shift) & mask;
        if (tag == h->set_mru[set]) {
            h->stats.write_hits++;
            if (nm_cache_g_wb(h, g)) h->dirty[set * ways + h->set_mru_way[set]] = 1;
            h->mru = tag;
            return NM_CACHE_HIT;
        }
        if (!nm_cache_g_wa(h, g)) {
            const uint32_t *t = &h->tag[set * ways];
            bool absent = ways == 4   ? nm_cache_set_lacks(t, tag, 4)
                          : ways == 1 ? nm_cache_set_lacks(t, tag, 1)
                                      : false;
            if (absent) { /* nm_cache_access_slow's write miss */
                h->stats.write_misses++;
                return 0;
            }
        }
    }
    return g.fixed ? nm_cache_i486_access_slow(c, phys, write, victim)
                   : nm_cache_access_slow(c, phys, write, victim);
}
static inline unsigned nm_cache_access(nm_cache *c, uint32_t phys, bool write, uint32_t *victim)
{
    return nm_cache_access_g(c, phys, write, victim, NM_CACHE_GEOM_OWN);
}
/* A read hit on the line its set used last: counted, that line is the
 * most recent (h->mru), nothing else changes; false when it is not that
 * line (then the caller asks the cache). */
static inline __attribute__((always_inline)) bool
nm_cache_read_set_mru_g(nm_cache *c, uint32_t phys, const nm_cache_geom g)
{
    nm_cache_head *h = (nm_cache_head *)(void *)c;
    uint32_t tag = (phys & nm_cache_g_line_mask(h, g)) | 1u;
    if (tag != h->set_mru[(phys >> nm_cache_g_shift(h, g)) & nm_cache_g_mask(h, g)]) return false;
    h->stats.read_hits++;
    h->mru = tag;
    return true;
}
static inline bool nm_cache_read_set_mru(nm_cache *c, uint32_t phys)
{
    return nm_cache_read_set_mru_g(c, phys, NM_CACHE_GEOM_OWN);
}
/* Is the line present?  No state or counter changes. */
bool nm_cache_probe(const nm_cache *c, uint32_t phys);
/* nm_cache_probe, then, if the line is present, nm_cache_access of a read
 * (a hit): one lookup.  Nothing changes when it is absent. */
bool nm_cache_read_if_present_slow(nm_cache *c, uint32_t phys);
static inline bool nm_cache_read_if_present(nm_cache *c, uint32_t phys)
{
    return nm_cache_read_set_mru(c, phys) || nm_cache_read_if_present_slow(c, phys);
}
/* The NM_CACHE_GEOM_I486 instances of the inline steps (the cache
 * nm_cache_is_i486). */
static inline unsigned nm_cache_i486_access(nm_cache *c, uint32_t phys, bool write,
                                            uint32_t *victim)
{
    return nm_cache_access_g(c, phys, write, victim, NM_CACHE_GEOM_I486);
}
static inline bool nm_cache_i486_read_set_mru(nm_cache *c, uint32_t phys)
{
    return nm_cache_read_set_mru_g(c, phys, NM_CACHE_GEOM_I486);
}
static inline bool nm_cache_i486_read_if_present(nm_cache *c, uint32_t phys)
{
    return nm_cache_i486_read_set_mru(c, phys) || nm_cache_i486_read_if_present_slow(c, phys);
}
/* Fills a line without counting an access (prefetch, the other pipe's
 * line); returns NM_CACHE_* bits like nm_cache_access. */
unsigned nm_cache_fill(nm_cache *c, uint32_t phys, uint32_t *victim);
/* Drops one line (bus snoop, DMA write); returns true if it was dirty. */
bool nm_cache_invalidate_line(nm_cache *c, uint32_t phys);
/* A snoop that reads: a dirty line is written back and stays valid, clean
 * (counted in writebacks); returns true if it was dirty. */
bool nm_cache_clean_line(nm_cache *c, uint32_t phys);
/* INVD: drops everything, dirty data is lost.  Returns the dirty lines dropped. */
uint32_t nm_cache_invalidate_all(nm_cache *c);
/* WBINVD: returns the number of dirty lines written back, then drops all. */
uint32_t nm_cache_writeback_invalidate(nm_cache *c);
/* How many lines [phys, phys+size) touches (1 or 2 for data; more for a
 * code span); size 0 counts as 1. */
static inline unsigned nm_cache_lines(const nm_cache_config *cfg, uint32_t phys, uint32_t size)
{
    uint32_t first = phys / cfg->line_size;
    uint32_t last = (phys + (size ? size - 1 : 0)) / cfg->line_size;
    return last - first + 1;
}

const nm_cache_stats *nm_cache_get_stats(const nm_cache *c);
void nm_cache_reset_stats(nm_cache *c);

#endif
