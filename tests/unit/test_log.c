/* The shared rate limit of error and warning lines (emu/log.c): per
 * subsystem, cause and device, the first NM_LOG_LIMIT_FIRST print, the rest
 * are counted and reported once by nm_log_limit_flush. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/core/log.h"

static char *captured(FILE *f, char **buf)
{
    fflush(f);
    return *buf;
}

static unsigned count_lines(const char *text, const char *needle)
{
    unsigned n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_limit_per_device_and_cause(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    nm_log_set_file(f);
    int dev_a, dev_b;
    for (int i = 0; i < 25; i++)
        nm_dev_warn(NE2000, &dev_a, "%s: ring empty (%d)", "nic0", i);
    for (int i = 0; i < 3; i++)
        nm_dev_warn(NE2000, &dev_b, "%s: ring empty (%d)", "nic1", i);
    for (int i = 0; i < 12; i++)
        nm_warn(PIC, "ICW4 %d", i);
    for (int i = 0; i < 30; i++)
        nm_debug(PIC, "debug lines are never limited %d", i); /* off by default: not printed */
    char *text = captured(f, &buf);
    /* 10 of the first device's, all 3 of the second's, 10 of the PIC's. */
    g_assert_cmpuint(count_lines(text, "nic0: ring empty"), ==, NM_LOG_LIMIT_FIRST);
    g_assert_cmpuint(count_lines(text, "nic1: ring empty"), ==, 3);
    g_assert_cmpuint(count_lines(text, "[pic] warn: ICW4"), ==, NM_LOG_LIMIT_FIRST);
    g_assert_nonnull(strstr(text, "nic0: ring empty (9) [more like this are counted, not shown]"));
    g_assert_null(strstr(text, "(10)"));
    size_t before = strlen(text);
    nm_log_limit_flush();
    text = captured(f, &buf);
    const char *tail = text + before;
    g_assert_nonnull(
        strstr(tail, "[ne2000] warn: 15 more like \"nic0: ring empty (0)\" not shown\n"));
    g_assert_nonnull(strstr(tail, "[pic] warn: 2 more like \"ICW4 0\" not shown\n"));
    g_assert_null(strstr(tail, "nic1"));
    /* Forgotten after the flush: a new run starts with a fresh allowance. */
    before = strlen(text);
    nm_dev_warn(NE2000, &dev_a, "%s: ring empty (%d)", "nic0", 99);
    text = captured(f, &buf);
    g_assert_nonnull(strstr(text + before, "nic0: ring empty (99)\n"));
    nm_log_set_file(NULL);
    fclose(f);
    free(buf);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/log/limit", test_limit_per_device_and_cause);
    return g_test_run();
}
