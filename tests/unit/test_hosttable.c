/* Host buffers for RAM, ROM and the big tables (emu/core/hosttable.h): zero
 * when handed out, also when a freed one of the same size is reused; a
 * byte past the end or before the start of a page-sized one faults. */
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "emu/core/hosttable.h"

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

static void test_zero_on_reuse(void)
{
    static const size_t sizes[] = {1, 4095, 4096, 4097, 1u << 20, 3 * 4096 + 17};
    for (unsigned s = 0; s < G_N_ELEMENTS(sizes); s++) {
        size_t n = sizes[s];
        /* Dirty more buffers than are kept spare, free them, take them
         * again: every byte reads zero. */
        uint8_t *b[12];
        for (unsigned i = 0; i < G_N_ELEMENTS(b); i++) {
            b[i] = nm_host_table_new(n);
            g_assert_true(all_zero(b[i], n));
            memset(b[i], 0x5a + (int)i, n);
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(b); i++)
            nm_host_table_free(b[i], n);
        for (unsigned i = 0; i < G_N_ELEMENTS(b); i++) {
            b[i] = nm_host_table_new(n);
            g_assert_true(all_zero(b[i], n));
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(b); i++)
            nm_host_table_free(b[i], n);
    }
    nm_host_table_free(NULL, 4096); /* nothing */
}

/* One byte past the end of an odd-sized buffer (its end is against the
 * upper guard) and one before the start of a whole-page one fault, in a
 * child process. */
static void test_guards(void)
{
    if (g_test_subprocess()) {
        if (!strcmp(g_getenv("NICEMU_GUARD_SIDE"), "low")) {
            volatile uint8_t *p = nm_host_table_new(8192);
            p[0] = 1;
            p[-1] = 1;
        } else {
            volatile uint8_t *p = nm_host_table_new(5000);
            p[4999] = 1;
            p[5000] = 1;
        }
        return; /* not reached */
    }
    g_setenv("NICEMU_GUARD_SIDE", "high", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_failed();
    g_setenv("NICEMU_GUARD_SIDE", "low", TRUE);
    g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_failed();
}

/* The children in test_guards fail for the right reason: the accesses
 * just inside the buffers do not fault. */
static void test_inside(void)
{
    volatile uint8_t *p = nm_host_table_new(5000), *q = nm_host_table_new(8192);
    p[4999] = 2;
    q[0] = 1;
    g_assert_cmpuint(p[4999] + q[0], ==, 3);
    nm_host_table_free((void *)p, 5000);
    nm_host_table_free((void *)q, 8192);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hosttable/zero-on-reuse", test_zero_on_reuse);
    g_test_add_func("/hosttable/guards", test_guards);
    g_test_add_func("/hosttable/inside", test_inside);
    return g_test_run();
}
