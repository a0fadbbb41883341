/* The set-associative cache model (cache.h explains the policies). */
#include "cpu/timing/cache.h"

#include <glib.h>
#include <string.h>

#define TAG_VALID 1u /* line addresses have their low bits clear: bit 0 marks valid */

struct nm_cache {
    nm_cache_head h; /* first: cache.h reads it through the nm_cache pointer */
    nm_cache_config cfg;
    uint32_t sets;
    uint32_t line_shift;
    uint32_t set_mask;
    uint32_t *tag;  /* [set * ways + way]: line address | TAG_VALID, or 0 */
    uint8_t *dirty; /* [set * ways + way] */
    uint8_t *rank;  /* LRU: [set * ways + way], 0 = most recently used */
    uint8_t *plru;  /* PLRU: [set], bits B0 B1 B2 */
    /* [set]: the tag of the way used last (0: none since a flush or its
     * invalidation).  Using it again changes no replacement state (LRU
     * ranks and PLRU bits both stay), so a read hit there is counted and
     * nothing else. */
    uint32_t *set_mru;
    uint8_t *set_mru_way; /* [set]: its way */
    uint32_t geometry;    /* which instance of the steps below it takes (geometry()) */
};

static uint32_t geometry(const nm_cache *c);

static bool pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

nm_cache *nm_cache_new(const nm_cache_config *cfg)
{
    if (!cfg || !pow2(cfg->size) || !pow2(cfg->line_size) || cfg->line_size < 4 || cfg->ways == 0 ||
        cfg->ways > 16 || cfg->size % (cfg->ways * cfg->line_size) != 0 ||
        (cfg->replacement == NM_CACHE_PLRU && cfg->ways != 4))
        return NULL;
    uint32_t sets = cfg->size / (cfg->ways * cfg->line_size);
    if (!pow2(sets)) return NULL;
    nm_cache *c = g_new0(nm_cache, 1);
    c->cfg = *cfg;
    c->sets = sets;
    c->line_shift = (uint32_t)__builtin_ctz(cfg->line_size);
    c->set_mask = sets - 1;
    c->h.line_mask = ~(cfg->line_size - 1);
    c->tag = g_new0(uint32_t, (gsize)sets * cfg->ways);
    c->dirty = g_new0(uint8_t, (gsize)sets * cfg->ways);
    c->rank = g_new0(uint8_t, (gsize)sets * cfg->ways);
    c->plru = g_new0(uint8_t, sets);
    c->set_mru = g_new0(uint32_t, sets);
    c->h.set_mru = c->set_mru;
    c->h.line_shift = c->line_shift;
    c->h.set_mask = c->set_mask;
    c->set_mru_way = g_new0(uint8_t, sets);
    c->h.write_back = cfg->write_policy == NM_CACHE_WRITE_BACK;
    c->h.ways = cfg->ways;
    c->h.dirty = c->dirty;
    c->h.set_mru_way = c->set_mru_way;
    c->h.write_allocate = cfg->write_allocate;
    c->h.tag = c->tag;
    c->geometry = geometry(c);
    nm_cache_invalidate_all(c);
    c->h.stats.flushes = 0;
    return c;
}

void nm_cache_free(nm_cache *c)
{
    if (!c) return;
    g_free(c->tag);
    g_free(c->dirty);
    g_free(c->rank);
    g_free(c->plru);
    g_free(c->set_mru);
    g_free(c->set_mru_way);
    g_free(c);
}

const nm_cache_config *nm_cache_get_config(const nm_cache *c)
{
    return &c->cfg;
}
const nm_cache_stats *nm_cache_get_stats(const nm_cache *c)
{
    return &c->h.stats;
}
void nm_cache_reset_stats(nm_cache *c)
{
    memset(&c->h.stats, 0, sizeof c->h.stats);
}

/* ---- replacement state ----
 * Each step is written once for a geometry given as constants (g: its
 * ways and whether the replacement is the 486's PLRU, and for a fixed
 * geometry its line size, sets and write policy too), so that the
 * compiler unrolls it for the geometries the models use -- the board's
 * direct-mapped L2 (1 way), the Pentium's 2-way LRU L1s, the 486's 4-way
 * PLRU L1 (and the whole of the 486's L1: NM_CACHE_GEOM_I486) -- and a
 * general instance (GENERAL: the configuration's own) does the others.
 * The state each leaves (tags, ranks, PLRU bits, set_mru) is the same. */

/* ways and replacement constant, the rest the cache's */
#define G1      ((nm_cache_geom){.ways = 1})
#define G2      ((nm_cache_geom){.ways = 2})
#define G4      ((nm_cache_geom){.ways = 4, .plru = true})
#define GENERAL NM_CACHE_GEOM_OWN /* (ways 0: the cache's own) */

static inline __attribute__((always_inline)) uint32_t ways_of(const nm_cache *c,
                                                              const nm_cache_geom g)
{
    return g.ways ? g.ways : c->cfg.ways;
}
static inline __attribute__((always_inline)) bool is_plru(const nm_cache *c, const nm_cache_geom g)
{
    return g.ways ? g.plru : c->cfg.replacement == NM_CACHE_PLRU;
}
static inline __attribute__((always_inline)) uint32_t line_of(const nm_cache *c, uint32_t phys,
                                                              const nm_cache_geom g)
{
    return phys & nm_cache_g_line_mask(&c->h, g);
}
static inline __attribute__((always_inline)) uint32_t set_of(const nm_cache *c, uint32_t phys,
                                                             const nm_cache_geom g)
{
    return (phys >> nm_cache_g_shift(&c->h, g)) & nm_cache_g_mask(&c->h, g);
}

static inline __attribute__((always_inline)) void touch_as(nm_cache *c, uint32_t set, uint32_t way,
                                                           const nm_cache_geom g)
{
    const uint32_t n = ways_of(c, g), ways = g.ways;
    c->h.mru = c->set_mru[set] = c->tag[set * n + way];
    c->set_mru_way[set] = (uint8_t)way;
    if (is_plru(c, g)) {
        /* B0 (bit 0): 1 after L0/L1; B1 (bit 1): 1 after L0, 0 after L1;
         * B2 (bit 2): 1 after L2, 0 after L3: the bits a use of each way
         * keeps, and those it sets. */
        static const uint8_t keep[4] = {0xff, 0xfd, 0xfe, 0xfa}, set_bits[4] = {3, 1, 4, 0};
        c->plru[set] = (uint8_t)((c->plru[set] & keep[way & 3]) | set_bits[way & 3]);
        return;
    }
    uint8_t *r = &c->rank[set * n];
    if (ways == 1) return; /* (its one rank stays 0) */
    if (ways == 2) {       /* the ranks a permutation of 0 and 1 */
        r[way] = 0;
        r[way ^ 1u] = 1;
        return;
    }
    uint8_t old = r[way];
    for (uint32_t w = 0; w < n; w++)
        if (r[w] < old) r[w]++;
    r[way] = 0;
}

static inline __attribute__((always_inline)) uint32_t victim_way_as(const nm_cache *c, uint32_t set,
                                                                    const nm_cache_geom g)
{
    const uint32_t n = ways_of(c, g), ways = g.ways;
    const uint32_t *t = &c->tag[set * n];
    if (ways == 1) return 0;
    if (ways == 2) {
        if (!(t[0] & TAG_VALID)) return 0;
        if (!(t[1] & TAG_VALID)) return 1;
        return c->rank[set * 2] == 1 ? 0 : 1; /* (the ranks a permutation of 0 and 1) */
    }
    if (ways == 4) {
        if (!(t[0] & t[1] & t[2] & t[3] & TAG_VALID)) {
            if (!(t[0] & TAG_VALID)) return 0;
            if (!(t[1] & TAG_VALID)) return 1;
            if (!(t[2] & TAG_VALID)) return 2;
            return 3;
        }
    } else {
        for (uint32_t w = 0; w < n; w++)
            if (!(t[w] & TAG_VALID)) return w;
    }
    if (is_plru(c, g)) {
        uint8_t b = c->plru[set];
        if (!(b & 1u)) return (b & 2u) ? 1 : 0;
        return (b & 4u) ? 3 : 2;
    }
    const uint8_t *r = &c->rank[set * n];
    for (uint32_t w = 0; w < n; w++)
        if (r[w] == n - 1) return w;
    return 0; /* not reached: ranks are a permutation */
}

/* ---- lookups ---- */

static inline __attribute__((always_inline)) int find_way_as(const nm_cache *c, uint32_t set,
                                                             uint32_t want, const nm_cache_geom g)
{
    const uint32_t n = ways_of(c, g), ways = g.ways;
    const uint32_t *t = &c->tag[set * n];
    /* (written out: gcc -O2 leaves a loop of a constant 4 a loop) */
    if (ways == 1) return t[0] == want ? 0 : -1;
    if (ways == 2) return t[0] == want ? 0 : t[1] == want ? 1 : -1;
    if (ways == 4) {
        if (t[0] == want) return 0;
        if (t[1] == want) return 1;
        if (t[2] == want) return 2;
        if (t[3] == want) return 3;
        return -1;
    }
    for (uint32_t w = 0; w < n; w++)
        if (t[w] == want) return (int)w;
    return -1;
}

static inline __attribute__((always_inline)) unsigned do_fill_as(nm_cache *c, uint32_t set,
                                                                 uint32_t line, bool dirty,
                                                                 uint32_t *victim,
                                                                 const nm_cache_geom g)
{
    uint32_t way = victim_way_as(c, set, g);
    uint32_t idx = set * ways_of(c, g) + way;
    unsigned res = NM_CACHE_FILL;
    /* A fixed write-through geometry never marks a line dirty (its fills
     * and hits leave dirty 0): nothing to read or write there. */
    const bool may_dirty = !g.fixed || g.write_back;
    if (c->tag[idx] & TAG_VALID) {
        c->h.stats.evictions++;
        res |= NM_CACHE_EVICTED;
        if (victim) *victim = c->tag[idx] & ~TAG_VALID;
        if (may_dirty && c->dirty[idx]) {
            c->h.stats.writebacks++;
            res |= NM_CACHE_WRITEBACK;
        }
    }
    c->tag[idx] = line | TAG_VALID;
    c->h.content_gen++;
    if (may_dirty) c->dirty[idx] = dirty;
    c->h.stats.fills++;
    touch_as(c, set, way, g);
    return res;
}

static inline __attribute__((always_inline)) unsigned
access_as(nm_cache *c, uint32_t phys, bool write, uint32_t *victim, const nm_cache_geom g)
{
    uint32_t line = line_of(c, phys, g);
    uint32_t set = set_of(c, phys, g);
    const bool wb = nm_cache_g_wb(&c->h, g), wa = nm_cache_g_wa(&c->h, g);
    if (c->set_mru[set] == (line | TAG_VALID)) { /* what touch would leave */
        if (write) {
            c->h.stats.write_hits++;
            if (wb) c->dirty[set * ways_of(c, g) + c->set_mru_way[set]] = 1;
        } else {
            c->h.stats.read_hits++;
        }
        c->h.mru = line | TAG_VALID;
        return NM_CACHE_HIT;
    }
    int way = find_way_as(c, set, line | TAG_VALID, g);
    if (way >= 0) {
        if (write) {
            c->h.stats.write_hits++;
            if (wb) c->dirty[set * ways_of(c, g) + (uint32_t)way] = 1;
        } else {
            c->h.stats.read_hits++;
        }
        touch_as(c, set, (uint32_t)way, g);
        return NM_CACHE_HIT;
    }
    if (write) {
        c->h.stats.write_misses++;
        if (!wa) return 0;
        return do_fill_as(c, set, line, wb, victim, g);
    }
    c->h.stats.read_misses++;
    return do_fill_as(c, set, line, false, victim, g);
}

/* Which instance a cache takes: 1 (direct-mapped), 2 (2-way LRU), 4
 * (4-way PLRU), else 0 (GENERAL). */
static inline uint32_t geometry(const nm_cache *c)
{
    const uint32_t w = c->cfg.ways;
    const bool plru = c->cfg.replacement == NM_CACHE_PLRU;
    if (w == 1 && !plru) return 1;
    if (w == 2 && !plru) return 2;
    if (w == 4 && plru) return 4;
    return 0;
}

/* One function an instance, reached by a tail call: the dispatch saves
 * no registers (the four inlined in one function cost every call its
 * prologue and epilogue, about 18 host instructions). */
static __attribute__((noinline)) unsigned access_1(nm_cache *c, uint32_t phys, bool write,
                                                   uint32_t *victim)
{
    return access_as(c, phys, write, victim, G1);
}
static __attribute__((noinline)) unsigned access_2(nm_cache *c, uint32_t phys, bool write,
                                                   uint32_t *victim)
{
    return access_as(c, phys, write, victim, G2);
}
static __attribute__((noinline)) unsigned access_4(nm_cache *c, uint32_t phys, bool write,
                                                   uint32_t *victim)
{
    return access_as(c, phys, write, victim, G4);
}
static __attribute__((noinline)) unsigned access_general(nm_cache *c, uint32_t phys, bool write,
                                                         uint32_t *victim)
{
    return access_as(c, phys, write, victim, GENERAL);
}

unsigned nm_cache_access_slow(nm_cache *c, uint32_t phys, bool write, uint32_t *victim)
{
    switch (c->geometry) {
    case 1: return access_1(c, phys, write, victim);
    case 2: return access_2(c, phys, write, victim);
    case 4: return access_4(c, phys, write, victim);
    }
    return access_general(c, phys, write, victim);
}

static inline __attribute__((always_inline)) int find_way(const nm_cache *c, uint32_t set,
                                                          uint32_t want)
{
    switch (c->geometry) {
    case 1: return find_way_as(c, set, want, G1);
    case 2: return find_way_as(c, set, want, G2);
    case 4: return find_way_as(c, set, want, G4);
    }
    return find_way_as(c, set, want, GENERAL);
}

static void touch(nm_cache *c, uint32_t set, uint32_t way)
{
    switch (c->geometry) {
    case 1: touch_as(c, set, way, G1); return;
    case 2: touch_as(c, set, way, G2); return;
    case 4: touch_as(c, set, way, G4); return;
    }
    touch_as(c, set, way, GENERAL);
}

static unsigned do_fill(nm_cache *c, uint32_t set, uint32_t line, bool dirty, uint32_t *victim)
{
    switch (c->geometry) {
    case 1: return do_fill_as(c, set, line, dirty, victim, G1);
    case 2: return do_fill_as(c, set, line, dirty, victim, G2);
    case 4: return do_fill_as(c, set, line, dirty, victim, G4);
    }
    return do_fill_as(c, set, line, dirty, victim, GENERAL);
}

bool nm_cache_probe(const nm_cache *c, uint32_t phys)
{
    uint32_t line = phys & ~(c->cfg.line_size - 1);
    uint32_t set = (phys >> c->line_shift) & c->set_mask;
    return find_way(c, set, line | TAG_VALID) >= 0;
}

bool nm_cache_read_if_present_slow(nm_cache *c, uint32_t phys)
{
    if (((phys & c->h.line_mask) | 1u) == c->h.mru) {
        c->h.stats.read_hits++;
        return true;
    }
    uint32_t line = phys & ~(c->cfg.line_size - 1);
    uint32_t set = (phys >> c->line_shift) & c->set_mask;
    if (c->set_mru[set] == (line | TAG_VALID)) { /* what touch would leave */
        c->h.stats.read_hits++;
        c->h.mru = line | TAG_VALID;
        return true;
    }
    int way = find_way(c, set, line | TAG_VALID);
    if (way < 0) return false;
    c->h.stats.read_hits++;
    touch(c, set, (uint32_t)way);
    return true;
}

/* ---- the NM_CACHE_GEOM_I486 instance (cache.h) ---- */

bool nm_cache_is_i486(const nm_cache *c)
{
    const nm_cache_geom g = NM_CACHE_GEOM_I486;
    return c->cfg.ways == g.ways && c->cfg.line_size == 1u << g.line_shift &&
           c->set_mask == g.set_mask && (c->cfg.replacement == NM_CACHE_PLRU) == g.plru &&
           (c->cfg.write_policy == NM_CACHE_WRITE_BACK) == g.write_back &&
           c->cfg.write_allocate == g.write_allocate;
}

unsigned nm_cache_i486_access_slow(nm_cache *c, uint32_t phys, bool write, uint32_t *victim)
{
    return access_as(c, phys, write, victim, NM_CACHE_GEOM_I486);
}

bool nm_cache_i486_probe(const nm_cache *c, uint32_t phys)
{
    const nm_cache_geom g = NM_CACHE_GEOM_I486;
    return find_way_as(c, set_of(c, phys, g), line_of(c, phys, g) | TAG_VALID, g) >= 0;
}

/* nm_cache_read_if_present_slow's steps for it */
bool nm_cache_i486_read_if_present_slow(nm_cache *c, uint32_t phys)
{
    const nm_cache_geom g = NM_CACHE_GEOM_I486;
    const uint32_t line = line_of(c, phys, g), set = set_of(c, phys, g);
    if ((line | 1u) == c->h.mru) {
        c->h.stats.read_hits++;
        return true;
    }
    if (c->set_mru[set] == (line | TAG_VALID)) {
        c->h.stats.read_hits++;
        c->h.mru = line | TAG_VALID;
        return true;
    }
    int way = find_way_as(c, set, line | TAG_VALID, g);
    if (way < 0) return false;
    c->h.stats.read_hits++;
    touch_as(c, set, (uint32_t)way, g);
    return true;
}

unsigned nm_cache_fill(nm_cache *c, uint32_t phys, uint32_t *victim)
{
    uint32_t line = phys & ~(c->cfg.line_size - 1);
    uint32_t set = (phys >> c->line_shift) & c->set_mask;
    int way = find_way(c, set, line | TAG_VALID);
    if (way >= 0) return NM_CACHE_HIT;
    return do_fill(c, set, line, false, victim);
}

bool nm_cache_invalidate_line(nm_cache *c, uint32_t phys)
{
    uint32_t line = phys & ~(c->cfg.line_size - 1);
    uint32_t set = (phys >> c->line_shift) & c->set_mask;
    int way = find_way(c, set, line | TAG_VALID);
    if (way < 0) return false;
    uint32_t idx = set * c->cfg.ways + (uint32_t)way;
    bool was_dirty = c->dirty[idx];
    c->tag[idx] = 0;
    c->dirty[idx] = 0;
    c->h.stats.line_invalidations++;
    c->h.content_gen++;
    c->h.mru = 0;
    if (c->set_mru[set] == (line | TAG_VALID)) c->set_mru[set] = 0;
    return was_dirty;
}

bool nm_cache_clean_line(nm_cache *c, uint32_t phys)
{
    uint32_t line = phys & ~(c->cfg.line_size - 1);
    uint32_t set = (phys >> c->line_shift) & c->set_mask;
    int way = find_way(c, set, line | TAG_VALID);
    if (way < 0) return false;
    uint32_t idx = set * c->cfg.ways + (uint32_t)way;
    if (!c->dirty[idx]) return false;
    c->dirty[idx] = 0;
    c->h.stats.writebacks++;
    return true;
}

static uint32_t drop_all(nm_cache *c)
{
    uint32_t n = c->sets * c->cfg.ways, dirty = 0;
    for (uint32_t k = 0; k < n; k++) {
        if ((c->tag[k] & TAG_VALID) && c->dirty[k]) dirty++;
        c->tag[k] = 0;
        c->dirty[k] = 0;
    }
    for (uint32_t s = 0; s < c->sets; s++) {
        for (uint32_t w = 0; w < c->cfg.ways; w++)
            c->rank[s * c->cfg.ways + w] = (uint8_t)w;
        c->plru[s] = 0;
        c->set_mru[s] = 0;
    }
    c->h.stats.flushes++;
    c->h.content_gen++;
    c->h.mru = 0;
    return dirty;
}

uint32_t nm_cache_invalidate_all(nm_cache *c)
{
    return drop_all(c);
}

uint32_t nm_cache_writeback_invalidate(nm_cache *c)
{
    uint32_t dirty = drop_all(c);
    c->h.stats.writebacks += dirty;
    return dirty;
}
