/* The measurement window (emu/measure.c) and the marker port that drives
 * it (devices/pc/marker.c) through the machine core's window interface:
 * open and close from port writes, the port's read-back, the cost model
 * switched in for the window only (cost-from=marker) or from the start
 * (boot), the totals, listeners, user markers, one marker per machine,
 * the report, and a marker on a machine with no window. */
#include <glib.h>
#include <string.h>

#include "cpu/timing/timing.h"
#include "devices/pc/marker.h"
#include "emu/measure.h"

#include "pc_fixture.h"

#define PORT NM_MARKER_PORT

typedef struct events {
    GString *seen; /* "o" per open, "c" per close, in order */
    bool model_on; /* the cost model was on in every callback */
    nm_machine *m;
} events;

static void on_window(void *opaque, bool open)
{
    events *e = opaque;
    g_string_append_c(e->seen, open ? 'o' : 'c');
    if (!nm_timing_current(e->m->timing)) e->model_on = false;
}

/* A bare machine with a CPU, the window (cost-from as given) and the port. */
static nm_measure *setup_window(pc_fixture *f, const char *cost_from)
{
    pc_setup(f, NULL);
    if (cost_from) f->cfg->cost_from = g_strdup(cost_from);
    pc_add_cpu(f);
    GError *err = NULL;
    nm_measure *ms = nm_measure_new(f->m, &err);
    g_assert_no_error(err);
    g_assert_nonnull(ms);
    g_assert_true(nm_measure_of(f->m) == ms);
    g_assert_nonnull(f->m->timing);
    f->dev = pc_add_device(f, &nm_marker_class, NULL);
    return ms;
}

static void test_open_close(void)
{
    pc_fixture f = {0};
    nm_measure *ms = setup_window(&f, NULL);
    nm_clock *clk = &f.m->clock;
    /* cost-from=marker (the default): no model until the window opens. */
    g_assert_null(nm_timing_current(f.m->timing));
    g_assert_cmpuint(inb(&f, PORT), ==, 0);

    uint64_t c0 = clk->cycles;
    outb(&f, PORT, NM_MARKER_WINDOW_START);
    g_assert_true(nm_measure_window_open(ms));
    g_assert_cmpuint(inb(&f, PORT), ==, 1);
    g_assert_nonnull(nm_timing_current(f.m->timing));
    outb(&f, PORT, NM_MARKER_WINDOW_START); /* opening an open window: nothing */
    clk->cycles = c0 + 1000;
    clk->bus_wait_cycles += 40;
    outb(&f, PORT, NM_MARKER_WINDOW_STOP);
    g_assert_false(nm_measure_window_open(ms));
    g_assert_cmpuint(inb(&f, PORT), ==, 0);
    g_assert_null(nm_timing_current(f.m->timing));
    outb(&f, PORT, NM_MARKER_WINDOW_STOP); /* closing a closed one: nothing */

    nm_measure_window w;
    nm_measure_window_totals(ms, &w);
    g_assert_cmpuint(w.windows, ==, 1);
    g_assert_cmpuint(w.clocks, ==, 1000);
    g_assert_cmpuint(w.bus_wait_cycles, ==, 40);
    g_assert_cmpuint(w.instructions, ==, 0); /* the CPU did not run */
    g_assert_cmpuint(w.virtual_ns, ==,
                     nm_clock_ns_from_cycles(clk, c0 + 1000) - nm_clock_ns_from_cycles(clk, c0));

    /* Outside the window nothing adds up; an open window counts so far. */
    clk->cycles += 7777;
    outb(&f, PORT, NM_MARKER_WINDOW_START);
    clk->cycles += 500;
    nm_measure_window_totals(ms, &w);
    g_assert_cmpuint(w.windows, ==, 2);
    g_assert_cmpuint(w.clocks, ==, 1500);
    /* A wide OUT: only its low byte (offset 0) is the command. */
    nm_io_write(f.m->io, PORT, NM_MARKER_WINDOW_STOP, 4);
    g_assert_false(nm_measure_window_open(ms));
    pc_teardown(&f, NULL);
}

static void test_listeners(void)
{
    pc_fixture f = {0};
    nm_measure *ms = setup_window(&f, NULL);
    events e = {g_string_new(NULL), true, f.m};
    g_assert_true(nm_measure_on_window(ms, on_window, &e));
    outb(&f, PORT, 1);
    outb(&f, PORT, 0);
    outb(&f, PORT, 1);
    outb(&f, PORT, 0);
    g_assert_cmpstr(e.seen->str, ==, "ococ");
    /* Told after the model is switched on, before it is switched off. */
    g_assert_true(e.model_on);
    for (int i = 1; i < 8; i++)
        g_assert_true(nm_measure_on_window(ms, on_window, &e));
    g_assert_false(nm_measure_on_window(ms, on_window, &e)); /* 8 at most */
    g_assert_false(nm_measure_on_window(NULL, on_window, &e));
    g_string_free(e.seen, TRUE);
    pc_teardown(&f, NULL);
}

static void test_cost_from_boot(void)
{
    pc_fixture f = {0};
    nm_measure *ms = setup_window(&f, "boot");
    const nm_cost_model_class *model = nm_timing_current(f.m->timing);
    g_assert_nonnull(model);
    outb(&f, PORT, 1);
    g_assert_true(nm_timing_current(f.m->timing) == model);
    outb(&f, PORT, 0);
    g_assert_true(nm_timing_current(f.m->timing) == model);
    nm_measure_window w;
    nm_measure_window_totals(ms, &w);
    g_assert_cmpuint(w.windows, ==, 1);
    pc_teardown(&f, NULL);
}

static void test_bad_cost_from(void)
{
    pc_fixture f = {0};
    pc_setup(&f, NULL);
    f.cfg->cost_from = g_strdup("sometimes");
    GError *err = NULL;
    g_assert_null(nm_measure_new(f.m, &err));
    g_assert_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE);
    g_assert_cmpstr(err->message, ==, "cost-from: bad value 'sometimes' (accepted: boot, marker)");
    g_error_free(err);
    g_assert_null(nm_measure_of(f.m));
    g_assert_null(f.m->timing);
    pc_teardown(&f, NULL);
}

static void test_markers_and_report(void)
{
    pc_fixture f = {0};
    setup_window(&f, NULL);
    f.m->clock.cycles = 1234;
    outb(&f, PORT, 0x42);
    outb(&f, PORT, 1);
    nm_report *r = nm_report_new();
    nm_machine_report(f.m, r);
    g_autofree char *json = nm_report_json(r);
    nm_report_free(r);
    g_assert_nonnull(strstr(json, "\"user_markers\": 1,"));
    g_assert_nonnull(strstr(json, "\"marker_0\": \"0x42@1234\""));
    /* The window's section follows the port's own keys, then the timing's. */
    const char *win = strstr(json, "\"window\": {\n    \"windows\": 1,\n    \"open\": 1,");
    g_assert_nonnull(win);
    g_assert_true(strstr(json, "\"marker_0\"") < win);
    g_assert_nonnull(strstr(win, "\"timing\""));
    pc_teardown(&f, NULL);
}

static void test_one_marker(void)
{
    pc_fixture f = {0};
    setup_window(&f, NULL);
    GError *err = NULL;
    nm_devcfg *d = nm_devcfg_parse("test", "marker,io=0x610", &err);
    g_assert_no_error(err);
    g_assert_null(nm_machine_add_device(f.m, &nm_marker_class, d, &err));
    g_assert_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE);
    g_assert_cmpstr(err->message, ==, "marker: the machine has one measurement marker already");
    g_error_free(err);
    nm_devcfg_free(d);
    g_assert_cmpuint(inb(&f, 0x610), ==, 0xff); /* not claimed */
    pc_teardown(&f, NULL);
}

/* A marker on a machine nothing measures: the port reads 0, writes only
 * keep user markers, the report has no window section. */
static void test_no_window(void)
{
    pc_fixture f = {0};
    pc_setup(&f, NULL);
    pc_add_device(&f, &nm_marker_class, NULL);
    outb(&f, PORT, 1);
    g_assert_cmpuint(inb(&f, PORT), ==, 0);
    g_assert_null(nm_measure_of(f.m));
    nm_report *r = nm_report_new();
    nm_machine_report(f.m, r);
    g_autofree char *json = nm_report_json(r);
    nm_report_free(r);
    g_assert_nonnull(strstr(json, "\"user_markers\": 0"));
    g_assert_null(strstr(json, "\"window\""));
    pc_teardown(&f, NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/measure/open-close", test_open_close);
    g_test_add_func("/measure/listeners", test_listeners);
    g_test_add_func("/measure/cost-from-boot", test_cost_from_boot);
    g_test_add_func("/measure/bad-cost-from", test_bad_cost_from);
    g_test_add_func("/measure/markers-and-report", test_markers_and_report);
    g_test_add_func("/measure/one-marker", test_one_marker);
    g_test_add_func("/measure/no-window", test_no_window);
    return g_test_run();
}
