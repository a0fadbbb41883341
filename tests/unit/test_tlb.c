/* The hardware TLB tag model (cpu/timing/tlb.c): the 486's 32-entry
 * 4-way TLB (8 sets, set = linear bits 14:12, pseudo-LRU: Embedded
 * Intel486 Hardware Reference Manual fig. 3-7) and the Pentium data TLB's
 * separate 4 MB entries. */
#include <glib.h>

#include "cpu/timing/tlb.h"

static void init(nm_tlb *t, uint32_t entries, uint32_t big)
{
    nm_tlb_config cfg = {"tlb", entries, big};
    g_assert_true(nm_tlb_init(t, &cfg));
}

/* Touches pages 0..n-1 (at 0x400000 + k * 4 KB) once, filling on a miss. */
static void pass(nm_tlb *t, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        uint32_t lin = 0x400000u + k * 0x1000u + 0x10u;
        if (!nm_tlb_lookup(t, lin)) nm_tlb_fill(t, lin, false);
    }
}

static void test_geometry(void)
{
    nm_tlb t;
    nm_tlb_config bad = {"x", 24, 0}; /* 6 sets: not a power of two */
    g_assert_false(nm_tlb_init(&t, &bad));
    nm_tlb_config big = {"x", 128, 0}; /* 32 sets: more than the model holds */
    g_assert_false(nm_tlb_init(&t, &big));
    init(&t, 32, 0);
    g_assert_cmpuint(t.small.sets, ==, 8);
}

/* 32 pages fit (8 sets x 4 ways): the second pass hits every one. */
static void test_fits(void)
{
    nm_tlb t;
    init(&t, 32, 0);
    pass(&t, 32);
    g_assert_cmpuint(t.stats.misses, ==, 32);
    g_assert_cmpuint(t.stats.hits, ==, 0);
    pass(&t, 32);
    g_assert_cmpuint(t.stats.misses, ==, 32);
    g_assert_cmpuint(t.stats.hits, ==, 32);
    /* Another offset on the same pages: still hits (page granularity). */
    g_assert_true(nm_tlb_lookup(&t, 0x400fffu));
}

/* 40 pages: each set cycles through five pages A..E in four ways.  The
 * first pass fills ways 0-3 with A-D and puts E over A (B0=0, B1=0 -> L0).
 * Second pass, by the tree: A misses (B0=1, B2=0 -> L2: C out), B hits,
 * C misses (B0=1, B2=1 -> L3: D out), D misses (B0=0, B1=0 -> L0: E out),
 * E misses (B0=1, B2=0 -> L2: A out): 1 hit, 4 misses per set. */
static void test_overflow_plru(void)
{
    nm_tlb t;
    init(&t, 32, 0);
    pass(&t, 40);
    g_assert_cmpuint(t.stats.misses, ==, 40);
    pass(&t, 40);
    g_assert_cmpuint(t.stats.hits, ==, 8);
    g_assert_cmpuint(t.stats.misses, ==, 40 + 32);
}

static void test_flushes(void)
{
    nm_tlb t;
    init(&t, 32, 0);
    pass(&t, 4);
    nm_tlb_flush(&t); /* MOV CR3 */
    g_assert_cmpuint(t.stats.flushes, ==, 1);
    pass(&t, 4);
    g_assert_cmpuint(t.stats.misses, ==, 8);
    /* INVLPG of page 2 drops only that entry. */
    nm_tlb_flush_page(&t, 0x402000u);
    g_assert_cmpuint(t.stats.page_flushes, ==, 1);
    g_assert_true(nm_tlb_lookup(&t, 0x401000u));
    g_assert_false(nm_tlb_lookup(&t, 0x402000u));
    g_assert_true(nm_tlb_lookup(&t, 0x403000u));
    /* The page last used, flushed, misses (no stale shortcut). */
    nm_tlb_flush_page(&t, 0x403000u);
    g_assert_false(nm_tlb_lookup(&t, 0x403000u));
}

/* 4 MB entries (the P5 data TLB's separate 8, 2 sets x 4 ways, set =
 * linear bit 22): a 4 MB page holds every 4 KB of it in one entry. */
static void test_big_pages(void)
{
    nm_tlb t;
    init(&t, 64, 8);
    g_assert_cmpuint(t.big.sets, ==, 2);
    g_assert_false(nm_tlb_lookup(&t, 0xc0000000u));
    nm_tlb_fill(&t, 0xc0000000u, true);
    for (uint32_t k = 0; k < 1024; k += 100)
        g_assert_true(nm_tlb_lookup(&t, 0xc0000000u + k * 0x1000u));
    g_assert_false(nm_tlb_lookup(&t, 0xc0400000u)); /* the next 4 MB */
    /* Eight 4 MB pages fit (2 sets x 4 ways). */
    for (uint32_t k = 1; k < 8; k++)
        nm_tlb_fill(&t, 0xc0000000u + k * 0x400000u, true);
    uint64_t h = t.stats.hits;
    for (uint32_t k = 0; k < 8; k++)
        g_assert_true(nm_tlb_lookup(&t, 0xc0000000u + k * 0x400000u));
    g_assert_cmpuint(t.stats.hits - h, ==, 8);
    /* INVLPG anywhere in a 4 MB page drops it. */
    nm_tlb_flush_page(&t, 0xc0123456u);
    g_assert_false(nm_tlb_lookup(&t, 0xc0000000u));
    /* Without 4 MB entries (the P5 code TLB) a big page takes a 4 KB entry
     * for the 4 KB used. */
    nm_tlb c;
    init(&c, 32, 0);
    nm_tlb_fill(&c, 0xc0001000u, true);
    g_assert_true(nm_tlb_lookup(&c, 0xc0001ffcu));
    g_assert_false(nm_tlb_lookup(&c, 0xc0002000u));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timing/tlb/geometry", test_geometry);
    g_test_add_func("/timing/tlb/fits", test_fits);
    g_test_add_func("/timing/tlb/overflow-plru", test_overflow_plru);
    g_test_add_func("/timing/tlb/flushes", test_flushes);
    g_test_add_func("/timing/tlb/big-pages", test_big_pages);
    return g_test_run();
}
