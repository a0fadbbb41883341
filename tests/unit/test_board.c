/* The board under the cost models (cpu/timing/membus.h nm_board) and its
 * presets (cpu/timing/boards.c): DRAM page hits and misses, the L2 write
 * policies, posted writes, and the preset table.  On a 486DX2-66 (2 core
 * clocks per bus clock), so every bus figure below is doubled. */
#include <glib.h>
#include <string.h>

#include "cpu/models.h"
#include "cpu/timing/boards.h"
#include "cpu/timing/cache.h"
#include "cpu/timing/membus.h"

static const nm_cpu_model *dx2(void)
{
    const nm_cpu_model *m = nm_cpu_model_find("486dx2-66");
    g_assert_nonnull(m);
    return m;
}

/* 5-2-2-2 / single 5 on a page hit, +3 on a miss, 4 KB pages, no L2. */
static nm_board_timing dram_only(void)
{
    return (nm_board_timing){.dram_first = 5,
                             .dram_burst = 2,
                             .dram_single = 5,
                             .dram_miss = 3,
                             .dram_page_bytes = 4096};
}

static void test_page_hit_miss(void)
{
    nm_board b;
    nm_board_timing t = dram_only();
    g_assert_true(nm_board_init(&b, dx2(), &t, 16));
    /* First access: no row open, a miss: (5+6) + 3 bus = 28 core. */
    g_assert_cmpuint(nm_board_line_read(&b, 0x10000, 0), ==, 28);
    /* Same 4 KB row: 11 bus = 22. */
    g_assert_cmpuint(nm_board_line_read(&b, 0x10ff0, 100), ==, 22);
    /* A single write in that row: 5 bus = 10; in another row 8 bus = 16. */
    g_assert_cmpuint(nm_board_write(&b, 0x10800, 200), ==, 10);
    g_assert_cmpuint(nm_board_write(&b, 0x20000, 300), ==, 16);
    g_assert_cmpuint(nm_board_single_read(&b, 0x20004, 400), ==, 10);
    g_assert_cmpuint(b.dram_page_hits, ==, 3);
    g_assert_cmpuint(b.dram_page_misses, ==, 2);
    nm_board_free(&b);
}

/* With no page model every access is timed as the old flat board. */
static void test_no_page_model(void)
{
    nm_board b;
    nm_board_timing t = dram_only();
    t.dram_page_bytes = 0;
    g_assert_true(nm_board_init(&b, dx2(), &t, 16));
    g_assert_cmpuint(nm_board_line_read(&b, 0x10000, 0), ==, 22);
    g_assert_cmpuint(nm_board_line_read(&b, 0x90000, 0), ==, 22);
    g_assert_cmpuint(nm_board_write(&b, 0x50000, 0), ==, 10);
    nm_board_free(&b);
}

static nm_board_timing with_l2(nm_l2_policy policy)
{
    nm_board_timing t = dram_only();
    t.dram_page_bytes = 0; /* flat DRAM: the L2's part alone */
    t.l2_size = 64u << 10;
    t.l2_policy = policy;
    t.l2_first = 2;
    t.l2_burst = 1;
    t.l2_write = 2;
    return t;
}

/* A write hit: write-back 2 bus (4 core) and no DRAM; write-through also
 * writes DRAM (5 bus = 10 core); a write miss goes to DRAM either way (no
 * write allocation). */
static void test_l2_write_policies(void)
{
    nm_board wb, wt;
    nm_board_timing a = with_l2(NM_L2_WRITE_BACK), c = with_l2(NM_L2_WRITE_THROUGH);
    g_assert_true(nm_board_init(&wb, dx2(), &a, 16));
    g_assert_true(nm_board_init(&wt, dx2(), &c, 16));
    g_assert_cmpuint(nm_board_line_read(&wb, 0x1000, 0), ==, 22); /* miss: DRAM, allocates */
    g_assert_cmpuint(nm_board_line_read(&wt, 0x1000, 0), ==, 22);
    g_assert_cmpuint(nm_board_line_read(&wb, 0x1000, 0), ==, 10); /* hit: 2-1-1-1 = 5 bus */
    g_assert_cmpuint(nm_board_write(&wb, 0x1004, 0), ==, 4);
    g_assert_cmpuint(nm_board_write(&wt, 0x1004, 0), ==, 10);
    g_assert_cmpuint(nm_board_write(&wb, 0x8000, 0), ==, 10);     /* miss */
    g_assert_cmpuint(nm_board_line_read(&wb, 0x8000, 0), ==, 22); /* not allocated by it */
    /* The dirty line's victim (64 KB apart: the same direct-mapped slot):
     * written back first, 22 + 22; the write-through L2 has none. */
    g_assert_cmpuint(nm_board_line_read(&wb, 0x11000, 0), ==, 44);
    g_assert_cmpuint(nm_board_line_read(&wt, 0x11000, 0), ==, 22);
    g_assert_cmpuint(wb.l2_writebacks, ==, 1);
    g_assert_cmpuint(wt.l2_writebacks, ==, 0);
    nm_board_free(&wb);
    nm_board_free(&wt);
}

/* "Always dirty": a clean victim is written back too. */
static void test_l2_always_dirty(void)
{
    nm_board b, d;
    nm_board_timing t = with_l2(NM_L2_WRITE_BACK_ALWAYS_DIRTY), u = with_l2(NM_L2_WRITE_BACK);
    g_assert_true(nm_board_init(&b, dx2(), &t, 16));
    g_assert_true(nm_board_init(&d, dx2(), &u, 16));
    g_assert_cmpuint(nm_board_line_read(&b, 0x2000, 0), ==, 22); /* into an empty slot */
    g_assert_cmpuint(nm_board_line_read(&d, 0x2000, 0), ==, 22);
    g_assert_cmpuint(nm_board_line_read(&b, 0x12000, 0), ==, 44); /* clean victim written back */
    g_assert_cmpuint(nm_board_line_read(&d, 0x12000, 0), ==, 22); /* dirty tag: clean, none */
    nm_board_free(&b);
    nm_board_free(&d);
}

/* Posted writes: 2 entries accepted in 1 bus clock (2 core) each while
 * there is room; each takes the DRAM 10 core clocks behind the CPU; a third
 * write at once waits for the first to drain; a read waits for the buffer
 * to be empty. */
static void test_posted_writes(void)
{
    nm_board b;
    nm_board_timing t = dram_only();
    t.dram_page_bytes = 0;
    t.posted = 2;
    t.posted_accept = 1;
    g_assert_true(nm_board_init(&b, dx2(), &t, 16));
    g_assert_cmpuint(nm_board_write(&b, 0x100, 0), ==, 2);     /* DRAM 2..12 */
    g_assert_cmpuint(nm_board_write(&b, 0x104, 2), ==, 2);     /* DRAM 12..22 */
    g_assert_cmpuint(nm_board_write(&b, 0x108, 4), ==, 2 + 6); /* waits to 12 for an entry */
    /* A line read at 12: the posted writes drain until 32, then 22. */
    g_assert_cmpuint(nm_board_line_read(&b, 0x4000, 12), ==, 20 + 22);
    g_assert_cmpuint(b.posted_writes, ==, 3);
    g_assert_cmpuint(b.posted_full_stalls, ==, 1);
    nm_board_free(&b);
}

/* Refresh: a request every 1000 ns (66 core clocks on the DX2-66: 66.67
 * MHz, rounded), each holding the DRAM 150 ns (10 core clocks).  An access
 * starting inside a refresh waits for its end; the first access after a
 * refresh finds its row closed (a page miss), the next one in the same
 * period a page hit. */
static void test_refresh(void)
{
    nm_board b;
    nm_board_timing t = dram_only();
    t.refresh_ns = 1000;
    t.refresh_busy_ns = 150;
    g_assert_true(nm_board_init(&b, dx2(), &t, 16));
    g_assert_cmpuint(b.refresh_period, ==, 67); /* 1000 ns x 66.67 MHz = 66.7 */
    g_assert_cmpuint(b.refresh_busy, ==, 10);
    /* At 70: refresh 1 runs 67..77: waits 7, then a miss (no row open):
     * 7 + (5 single + 3 miss) bus = 7 + 16. */
    g_assert_cmpuint(nm_board_write(&b, 0x100, 70), ==, 7 + 16);
    /* At 100, the same row, the same period: a hit, no wait. */
    g_assert_cmpuint(nm_board_write(&b, 0x104, 100), ==, 10);
    g_assert_cmpuint(b.refresh_row_closes, ==, 0); /* no row was open before 70 */
    /* At 140 (period 2 began at 134, its refresh ended at 144): waits 4,
     * and the refresh closed the open row: a miss again. */
    g_assert_cmpuint(nm_board_write(&b, 0x108, 140), ==, 4 + 16);
    g_assert_cmpuint(b.refresh_row_closes, ==, 1);
    g_assert_cmpuint(b.refresh_waits, ==, 2);
    g_assert_cmpuint(b.refresh_wait_clocks, ==, 11);
    /* No refresh: the same accesses cost no waits, and the second and
     * third are page hits. */
    nm_board_free(&b);
    t.refresh_ns = 0;
    g_assert_true(nm_board_init(&b, dx2(), &t, 16));
    g_assert_cmpuint(nm_board_write(&b, 0x100, 70), ==, 16);
    g_assert_cmpuint(nm_board_write(&b, 0x104, 100), ==, 10);
    g_assert_cmpuint(nm_board_write(&b, 0x108, 140), ==, 10);
    nm_board_free(&b);
}

/* A dirty L2 victim: written back before the fill on a plain write-back
 * board (the CPU waits for both), or (victim_posted, the 82434LX's LBX
 * path) copied out of the SRAM in one L2 burst, the fill first and the
 * victim's DRAM write queued behind it in the posted buffer.  A 16 KB L2
 * (1 KB apart: the same set), 2-1-1-1 L2, DRAM 5-2-2-2, no pages, 2 posted
 * entries accepted in 1 bus clock. */
static void test_victim_posted(void)
{
    nm_board plain, lbx;
    nm_board_timing t = dram_only();
    t.dram_page_bytes = 0;
    t.l2_size = 16u << 10;
    t.l2_policy = NM_L2_WRITE_BACK;
    t.l2_first = 2, t.l2_burst = 1, t.l2_write = 2;
    t.posted = 2;
    t.posted_accept = 1;
    nm_board_timing u = t;
    u.victim_posted = true;
    g_assert_true(nm_board_init(&plain, dx2(), &t, 16));
    g_assert_true(nm_board_init(&lbx, dx2(), &u, 16));
    for (nm_board *b = &plain; b; b = b == &plain ? &lbx : NULL) {
        g_assert_cmpuint(nm_board_line_read(b, 0x1000, 0), ==, 22); /* allocates */
        g_assert_cmpuint(nm_board_write(b, 0x1004, 100), ==, 4);    /* hit: dirty now */
    }
    /* 0x5000: the same set.  Plain: victim 22 + fill 22 = 44. */
    g_assert_cmpuint(nm_board_line_read(&plain, 0x5000, 200), ==, 44);
    /* LBX: the victim out of the SRAM (2-1-1-1 = 10) + the fill (22) = 32;
     * its DRAM write follows the fill, 232..254. */
    g_assert_cmpuint(nm_board_line_read(&lbx, 0x5000, 200), ==, 32);
    g_assert_cmpuint(lbx.posted_writes, ==, 1);
    g_assert_cmpuint(lbx.l2_writebacks, ==, 1);
    /* A read at 238 waits for that write to finish (the chipset keeps
     * reads behind posted writes): 16 + 22. */
    g_assert_cmpuint(nm_board_line_read(&lbx, 0x9000, 238), ==, 16 + 22);
    nm_board_free(&plain);
    nm_board_free(&lbx);
}

/* The presets: every name is found, each CPU model has a default that fits
 * it, a 486 board does not fit a Pentium, and applying a preset sets the
 * parameters the models take. */
static void test_presets(void)
{
    size_t n;
    const nm_board_preset *list = nm_board_preset_list(&n);
    g_assert_cmpuint(n, >=, 7);
    for (size_t i = 0; i < n; i++)
        g_assert_true(nm_board_preset_find(list[i].name) == &list[i]);
    size_t nm;
    const nm_cpu_model *models = nm_cpu_model_list(&nm);
    for (size_t i = 0; i < nm; i++) {
        const nm_board_preset *b = nm_board_preset_default(&models[i]);
        g_assert_nonnull(b);
        g_assert_true(nm_board_preset_fits(b, &models[i]));
    }
    const nm_cpu_model *p100 = nm_cpu_model_find("pentium-100");
    g_assert_false(nm_board_preset_fits(nm_board_preset_find("486-wb256"), p100));
    g_assert_true(nm_board_preset_fits(nm_board_preset_find("p54c-430fx-pb"), p100));
    nm_timing_params p;
    nm_timing_default_params(p100, &p);
    nm_board_preset_apply(nm_board_preset_find("p54c-430fx-async"), &p);
    g_assert_cmpstr(p.board, ==, "p54c-430fx-async");
    g_assert_cmpuint(p.l2_first, ==, 3);
    g_assert_cmpuint(p.l2_burst, ==, 2);
    g_assert_cmpuint(p.l2_write, ==, 4);
    g_assert_cmpuint(p.posted_writes, ==, 4);
    g_assert_null(nm_board_preset_find("no-such-board"));
}

/* nm_cache_read_if_present is nm_cache_probe then, when present,
 * nm_cache_access of a read, in one lookup: two 486-shaped caches (4-way
 * PLRU, 16-byte lines, 256 bytes: 4 sets), one driven each way through the
 * same mixed sequence, agree on every answer, counter and later victim. */
static void test_cache_read_if_present(void)
{
    const nm_cache_config cc = {"l1", 256, 4, 16, NM_CACHE_WRITE_THROUGH, false, NM_CACHE_PLRU};
    nm_cache *a = nm_cache_new(&cc), *b = nm_cache_new(&cc);
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    uint32_t x = 12345;
    unsigned present = 0, absent = 0;
    for (unsigned k = 0; k < 4000; k++) {
        x = x * 1103515245u + 12345u;
        uint32_t addr = ((x >> 8) & 0x3f) * 16; /* 64 lines over 4 sets: misses and hits */
        if ((x >> 20) & 1) {
            /* a fill or repeat access, the same on both */
            unsigned ra = nm_cache_access(a, addr, false, NULL);
            unsigned rb = nm_cache_access(b, addr, false, NULL);
            g_assert_cmpuint(ra, ==, rb);
            continue;
        }
        bool pa = nm_cache_probe(a, addr);
        if (pa) g_assert_true(nm_cache_access(a, addr, false, NULL) & NM_CACHE_HIT);
        bool pb = nm_cache_read_if_present(b, addr);
        g_assert_cmpint(pa, ==, pb);
        present += pa;
        absent += !pa;
    }
    g_assert_cmpuint(present, >, 100);
    g_assert_cmpuint(absent, >, 100);
    g_assert_cmpmem(nm_cache_get_stats(a), sizeof(nm_cache_stats), nm_cache_get_stats(b),
                    sizeof(nm_cache_stats));
    nm_cache_free(a);
    nm_cache_free(b);
}

/* The 486 L1's compiled instance (cache.h NM_CACHE_GEOM_I486,
 * nm_cache_i486_*) against the generic steps on a cache of the same
 * configuration: a random sequence of reads, writes, probes, reads if
 * present, fills and line invalidations, over lines that crowd a few sets
 * (the set's slow path: evictions, PLRU) including the last set, and
 * accesses at the ends of 4 KB pages, gives the same results, victims and
 * counters. */
static void test_cache_i486_instance(void)
{
    const nm_cache_config cc = {"l1", 8192, 4, 16, NM_CACHE_WRITE_THROUGH, false, NM_CACHE_PLRU};
    nm_cache *a = nm_cache_new(&cc), *b = nm_cache_new(&cc);
    g_assert_nonnull(a);
    g_assert_nonnull(b);
    g_assert_true(nm_cache_is_i486(b));
    const nm_cache_config other = {"l1", 8192, 4, 32, NM_CACHE_WRITE_THROUGH, false, NM_CACHE_PLRU};
    nm_cache *o = nm_cache_new(&other);
    g_assert_false(nm_cache_is_i486(o));
    nm_cache_free(o);
    uint32_t x = 2463534242u;
    unsigned hits = 0, fills = 0, evictions = 0;
    for (unsigned k = 0; k < 200000; k++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        /* sets 0, 1, 64 and 127 (a set every 2 KB), 8 lines each; or a
         * page's last or first bytes */
        static const uint32_t sets[4] = {0, 1, 64, 127};
        uint32_t addr = (((x >> 4) & 7) << 11) | (sets[(x >> 8) & 3] << 4) | (x & 0xf);
        if (((x >> 10) & 7) == 0) addr = (((x >> 13) & 15) << 12) + 0xff0u + (x & 0x1f) - 0x10u;
        addr += 0x100000u;
        uint32_t va = 0, vb = 0;
        switch ((x >> 20) & 7) {
        case 0:
        case 1:
        case 2: {
            unsigned ra = nm_cache_access(a, addr, false, &va);
            unsigned rb = nm_cache_i486_access(b, addr, false, &vb);
            g_assert_cmpuint(ra, ==, rb);
            if (ra & NM_CACHE_EVICTED) g_assert_cmpuint(va, ==, vb);
            hits += (ra & NM_CACHE_HIT) != 0;
            fills += (ra & NM_CACHE_FILL) != 0;
            evictions += (ra & NM_CACHE_EVICTED) != 0;
            break;
        }
        case 3:
            g_assert_cmpuint(nm_cache_access(a, addr, true, NULL), ==,
                             nm_cache_i486_access(b, addr, true, NULL));
            break;
        case 4: g_assert_cmpint(nm_cache_probe(a, addr), ==, nm_cache_i486_probe(b, addr)); break;
        case 5:
            g_assert_cmpint(nm_cache_read_if_present(a, addr), ==,
                            nm_cache_i486_read_if_present(b, addr));
            break;
        case 6:
            g_assert_cmpuint(nm_cache_fill(a, addr, &va), ==, nm_cache_fill(b, addr, &vb));
            break;
        default:
            if (((x >> 23) & 7) == 0)
                g_assert_cmpint(nm_cache_invalidate_line(a, addr), ==,
                                nm_cache_invalidate_line(b, addr));
            else
                g_assert_cmpint(nm_cache_read_set_mru(a, addr), ==,
                                nm_cache_i486_read_set_mru(b, addr));
            break;
        }
    }
    g_assert_cmpuint(hits, >, 10000);
    g_assert_cmpuint(fills, >, 10000);
    g_assert_cmpuint(evictions, >, 5000);
    g_assert_cmpmem(nm_cache_get_stats(a), sizeof(nm_cache_stats), nm_cache_get_stats(b),
                    sizeof(nm_cache_stats));
    for (uint32_t line = 0x100000u; line < 0x100000u + 65536u; line += 16)
        g_assert_cmpint(nm_cache_probe(a, line), ==, nm_cache_probe(b, line));
    nm_cache_free(a);
    nm_cache_free(b);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/board/page-hit-miss", test_page_hit_miss);
    g_test_add_func("/board/cache-read-if-present", test_cache_read_if_present);
    g_test_add_func("/board/cache-i486-instance", test_cache_i486_instance);
    g_test_add_func("/board/no-page-model", test_no_page_model);
    g_test_add_func("/board/l2-write-policies", test_l2_write_policies);
    g_test_add_func("/board/l2-always-dirty", test_l2_always_dirty);
    g_test_add_func("/board/posted-writes", test_posted_writes);
    g_test_add_func("/board/refresh", test_refresh);
    g_test_add_func("/board/victim-posted", test_victim_posted);
    g_test_add_func("/board/presets", test_presets);
    return g_test_run();
}
