/* The measurement window (measure.h).  The marker port tells it when the
 * guest opens (1) and closes (0) the window; the window includes the
 * opening OUT and not the closing one.  It reads the cost-model keys when
 * the board is built, so a bad value is one error at start-up. */
#include "emu/measure.h"

#include "cpu/cpu.h"
#include "cpu/timing/timing.h"
#include "emu/core/snapshot.h"

#define MAX_LISTENERS 8

typedef struct measure_listener {
    nm_measure_window_fn fn;
    void *opaque;
} measure_listener;

struct nm_measure {
    nm_machine *machine;
    nm_timing *timing;
    const nm_cost_model_class *cls; /* the configured model (NULL: none) */
    nm_cost_from from;
    bool open;
    /* at the window's start */
    uint64_t start_cycles, start_insns, start_bus, start_ns, start_con_bytes, start_con_ns;
    int64_t start_wall_us; /* host time: the report's wall_seconds only */
    nm_measure_window total;
    measure_listener listeners[MAX_LISTENERS];
    unsigned n_listeners;
};

static uint64_t insns_now(const nm_measure *k)
{
    return k->machine->cpu ? nm_cpu_instructions(k->machine->cpu) : 0;
}

static void window_start(nm_measure *k)
{
    if (k->open) return;
    if (k->from == NM_COST_FROM_MARKER) nm_timing_select(k->timing, k->cls);
    nm_clock *clk = &k->machine->clock;
    k->open = true;
    k->start_cycles = clk->cycles;
    k->start_insns = insns_now(k);
    k->start_bus = clk->bus_wait_cycles;
    k->start_ns = nm_clock_now_ns(clk);
    k->start_con_bytes = k->machine->console_tx_bytes;
    k->start_con_ns = k->machine->console_tx_ns;
    k->start_wall_us = g_get_monotonic_time();
    k->total.windows++;
    for (unsigned n = 0; n < k->n_listeners; n++)
        k->listeners[n].fn(k->listeners[n].opaque, true);
}

static void window_add(const nm_measure *k, nm_measure_window *w)
{
    const nm_clock *clk = &k->machine->clock;
    w->clocks += clk->cycles - k->start_cycles;
    w->instructions += insns_now(k) - k->start_insns;
    w->bus_wait_cycles += clk->bus_wait_cycles - k->start_bus;
    w->virtual_ns += nm_clock_now_ns(clk) - k->start_ns;
    w->console_bytes += k->machine->console_tx_bytes - k->start_con_bytes;
    w->console_clocks += nm_clock_duration_cycles(clk, k->machine->console_tx_ns - k->start_con_ns);
    w->wall_us += (uint64_t)(g_get_monotonic_time() - k->start_wall_us);
}

static void window_stop(nm_measure *k)
{
    if (!k->open) return;
    for (unsigned n = 0; n < k->n_listeners; n++)
        k->listeners[n].fn(k->listeners[n].opaque, false);
    window_add(k, &k->total);
    k->open = false;
    if (k->from == NM_COST_FROM_MARKER) nm_timing_select(k->timing, NULL);
}

/* ---- the core's window interface (what the marker port calls) ---- */

static void measure_set(void *opaque, bool open)
{
    if (open)
        window_start(opaque);
    else
        window_stop(opaque);
}

static bool measure_is_open(void *opaque)
{
    return ((nm_measure *)opaque)->open;
}

/* The window's section of the report, after the marker port's own keys. */
static void measure_report(void *opaque, nm_report *r)
{
    nm_measure *k = opaque;
    nm_measure_window w;
    nm_measure_window_totals(k, &w);
    nm_report_section(r, "window");
    nm_report_u64(r, "windows", w.windows);
    nm_report_u64(r, "open", k->open);
    nm_report_u64(r, "clocks", w.clocks);
    nm_report_u64(r, "instructions", w.instructions);
    nm_report_double(r, "cpi", w.instructions ? (double)w.clocks / (double)w.instructions : 0.0);
    nm_report_u64(r, "bus_wait_cycles", w.bus_wait_cycles);
    nm_report_u64(r, "virtual_ns", w.virtual_ns);
    /* the host's time in the windows (informative: virtual_ns / it is the
     * speed against real time; the one key here that is not exact) */
    nm_report_double(r, "wall_seconds", (double)w.wall_us / 1e6);
    nm_report_u64(r, "console_bytes", w.console_bytes);
    nm_report_u64(r, "console_clocks", w.console_clocks);
    nm_timing_report(k->timing, r);
}

static void measure_destroy(void *opaque)
{
    nm_measure *k = opaque;
    if (k->machine->timing == k->timing) k->machine->timing = NULL;
    nm_timing_free(k->timing);
    g_free(k);
}

static const nm_window_ops measure_ops = {
    .set = measure_set,
    .is_open = measure_is_open,
    .report = measure_report,
    .destroy = measure_destroy,
};

nm_measure *nm_measure_new(nm_machine *m, GError **err)
{
    if (m->window_ops) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "the machine has a measurement window already");
        return NULL;
    }
    nm_measure *k = g_new0(nm_measure, 1);
    k->machine = m;
    nm_timing_params params;
    const nm_config *c = m->cfg;
    const nm_cost_config cost = {c->cost_model,  c->cost_from, c->mem_wait_states,
                                 c->dram_timing, c->l2,        c->board};
    if (!nm_timing_from_config(&cost, m->model, &k->cls, &k->from, &params, err)) {
        g_free(k);
        return NULL;
    }
    /* (before the CPU runs: its decoded-instruction cache is empty) */
    if (k->cls && k->cls->icache_bits && m->cpu)
        nm_cpu_set_icache_bits(m->cpu, k->cls->icache_bits);
    k->timing = nm_timing_new(m, &params);
    m->timing = k->timing;
    m->window_ops = &measure_ops;
    m->window_opaque = k;
    /* cost-from=boot: the model runs from the first instruction (the CPU
     * exists already: the board creates the window after it). */
    if (k->from == NM_COST_FROM_BOOT && m->cpu) nm_timing_select(k->timing, k->cls);
    return k;
}

nm_measure *nm_measure_of(nm_machine *m)
{
    return m->window_ops == &measure_ops ? m->window_opaque : NULL;
}

bool nm_measure_on_window(nm_measure *k, nm_measure_window_fn fn, void *opaque)
{
    if (!k || !fn || k->n_listeners >= MAX_LISTENERS) return false;
    k->listeners[k->n_listeners++] = (measure_listener){fn, opaque};
    return true;
}

bool nm_measure_window_open(const nm_measure *k)
{
    return k && k->open;
}

void nm_measure_window_totals(const nm_measure *k, nm_measure_window *out)
{
    *out = k->total;
    if (k->open) window_add(k, out);
}

void nm_measure_snapshot(nm_measure *k, nm_snap *s)
{
    /* The cost models keep caches, TLBs and write buffers that are not
     * saved: a snapshot is taken in the uncosted boot phase, before the
     * first window (docs/snapshots.md); the model is switched on at the
     * window after a restore as it would have been. */
    if (nm_snap_saving(s) && nm_timing_current(k->timing)) {
        nm_snap_fail(s,
                     "a cost model is running (%s): its caches, TLBs and write buffers are not "
                     "saved; snapshots are taken in the uncosted boot phase, with "
                     "cost-from=marker before the measurement window opens",
                     k->from == NM_COST_FROM_BOOT ? "cost-from=boot" : "the window is open");
        return;
    }
    if (nm_snap_saving(s) && k->total.windows) {
        nm_snap_fail(s, "the measurement window was opened before the snapshot point: the cost "
                        "model's and the profiler's state from it are not saved");
        return;
    }
    if (!nm_snap_begin(s, "window", 1)) return;
    uint32_t from = k->from;
    nm_snap_u32(s, "cost_from", &from);
    nm_snap_check(s, from == (uint32_t)k->from, "cost_from");
    nm_snap_bool(s, "open", &k->open);
    nm_snap_check(s, !k->open, "open");
    nm_snap_u64(s, "start_cycles", &k->start_cycles);
    nm_snap_u64(s, "start_insns", &k->start_insns);
    nm_snap_u64(s, "start_bus", &k->start_bus);
    nm_snap_u64(s, "start_ns", &k->start_ns);
    nm_snap_u64(s, "start_con_bytes", &k->start_con_bytes);
    nm_snap_u64(s, "start_con_ns", &k->start_con_ns);
    nm_snap_u64(s, "windows", &k->total.windows);
    nm_snap_u64(s, "clocks", &k->total.clocks);
    nm_snap_u64(s, "instructions", &k->total.instructions);
    nm_snap_u64(s, "bus_wait_cycles", &k->total.bus_wait_cycles);
    nm_snap_u64(s, "virtual_ns", &k->total.virtual_ns);
    nm_snap_u64(s, "console_bytes", &k->total.console_bytes);
    nm_snap_u64(s, "console_clocks", &k->total.console_clocks);
    nm_snap_check(s, !k->total.windows, "windows");
    nm_snap_end(s);
}
