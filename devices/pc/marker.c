/* The measurement-window marker port (marker.h).  A write of any size:
 * 1 opens the window, 0 closes it, other values are user markers kept with
 * their cycle count (the first NM_MARKER_KEPT).  Reads return 1 while the
 * window is open.  The port charges no bus time: the OUT itself is the
 * only disturbance (the window includes the opening OUT and not the
 * closing one).
 *
 * The device owns the machine's timing state (m->timing): it reads the
 * cost-model keys at creation, so a bad value is one error at start-up. */
#include "devices/pc/marker.h"

#include <glib.h>

#include "cpu/cpu.h"
#include "cpu/timing/timing.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/machine.h" /* until the window moves out (m->cfg) */

#define NM_MARKER_KEPT 64u
#define MAX_LISTENERS  8

typedef struct marker_listener {
    nm_marker_window_fn fn;
    void *opaque;
} marker_listener;

typedef struct marker {
    nm_machine *machine;
    nm_io_claim *claim;
    nm_timing *timing;
    const nm_cost_model_class *cls; /* the configured model (NULL: none) */
    nm_cost_from from;
    bool open;
    /* at the window's start */
    uint64_t start_cycles, start_insns, start_bus, start_ns, start_con_bytes, start_con_ns;
    nm_marker_window total;
    struct {
        uint32_t value;
        uint64_t cycles;
    } marks[NM_MARKER_KEPT];
    uint64_t mark_count;
    marker_listener listeners[MAX_LISTENERS];
    unsigned n_listeners;
} marker;

static uint64_t insns_now(const marker *k)
{
    return k->machine->cpu ? nm_cpu_instructions(k->machine->cpu) : 0;
}

static void window_start(marker *k)
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
    k->total.windows++;
    for (unsigned n = 0; n < k->n_listeners; n++)
        k->listeners[n].fn(k->listeners[n].opaque, true);
}

static void window_add(const marker *k, nm_marker_window *w)
{
    const nm_clock *clk = &k->machine->clock;
    w->clocks += clk->cycles - k->start_cycles;
    w->instructions += insns_now(k) - k->start_insns;
    w->bus_wait_cycles += clk->bus_wait_cycles - k->start_bus;
    w->virtual_ns += nm_clock_now_ns(clk) - k->start_ns;
    w->console_bytes += k->machine->console_tx_bytes - k->start_con_bytes;
    w->console_clocks += nm_clock_duration_cycles(clk, k->machine->console_tx_ns - k->start_con_ns);
}

static void window_stop(marker *k)
{
    if (!k->open) return;
    for (unsigned n = 0; n < k->n_listeners; n++)
        k->listeners[n].fn(k->listeners[n].opaque, false);
    window_add(k, &k->total);
    k->open = false;
    if (k->from == NM_COST_FROM_MARKER) nm_timing_select(k->timing, NULL);
}

static uint32_t marker_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    return ((marker *)opaque)->open ? 1u : 0u;
}

static void marker_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    marker *k = opaque;
    if (offset != 0) return; /* the upper bytes of a wide OUT */
    if (value == NM_MARKER_WINDOW_START)
        window_start(k);
    else if (value == NM_MARKER_WINDOW_STOP)
        window_stop(k);
    else {
        if (k->mark_count < NM_MARKER_KEPT) {
            k->marks[k->mark_count].value = value;
            k->marks[k->mark_count].cycles = k->machine->clock.cycles;
        }
        k->mark_count++;
    }
}

static const nm_io_ops marker_ops = {marker_read, marker_write};

static void *marker_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t port = NM_MARKER_PORT;
    if (cfg && !nm_devcfg_u32(cfg, "io", NM_MARKER_PORT, 0, 0xfffc, &port, err)) return NULL;
    if (m->timing) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "marker: the machine has one measurement marker already");
        return NULL;
    }
    marker *k = g_new0(marker, 1);
    k->machine = m;
    nm_timing_params params;
    const nm_config *c = m->cfg;
    const nm_cost_config cost = {c->cost_model,  c->cost_from, c->mem_wait_states,
                                 c->dram_timing, c->l2,        c->board};
    if (!nm_timing_from_config(&cost, m->model, &k->cls, &k->from, &params, err)) {
        g_free(k);
        return NULL;
    }
    k->claim = nm_ioport_claim(m->io, (uint16_t)port, 4, &marker_ops, k, "marker", NULL);
    if (!k->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: port 0x%x is already taken by %s", cfg ? cfg->origin : "marker", port,
                    nm_ioport_owner(m->io, (uint16_t)port)->name);
        g_free(k);
        return NULL;
    }
    k->timing = nm_timing_new(m, &params);
    m->timing = k->timing;
    /* cost-from=boot: the model runs from the first instruction (the CPU
     * exists already: the board creates this device after it). */
    if (k->from == NM_COST_FROM_BOOT && m->cpu) nm_timing_select(k->timing, k->cls);
    return k;
}

static void marker_destroy(void *opaque)
{
    marker *k = opaque;
    if (k->machine->timing == k->timing) k->machine->timing = NULL;
    nm_timing_free(k->timing);
    nm_ioport_release(k->machine->io, k->claim);
    g_free(k);
}

static void marker_report(void *opaque, nm_report *r)
{
    marker *k = opaque;
    nm_report_u64(r, "user_markers", k->mark_count);
    uint64_t n = k->mark_count < NM_MARKER_KEPT ? k->mark_count : NM_MARKER_KEPT;
    for (uint64_t j = 0; j < n; j++) {
        char key[32], val[64];
        g_snprintf(key, sizeof key, "marker_%u", (unsigned)j);
        g_snprintf(val, sizeof val, "0x%x@%" G_GUINT64_FORMAT, k->marks[j].value,
                   k->marks[j].cycles);
        nm_report_str(r, key, val);
        g_snprintf(key, sizeof key, "marker_%u_ns", (unsigned)j);
        nm_report_u64(r, key, nm_clock_ns_from_cycles(&k->machine->clock, k->marks[j].cycles));
    }
    nm_marker_window w;
    nm_marker_window_totals(k, &w);
    nm_report_section(r, "window");
    nm_report_u64(r, "windows", w.windows);
    nm_report_u64(r, "open", k->open);
    nm_report_u64(r, "clocks", w.clocks);
    nm_report_u64(r, "instructions", w.instructions);
    nm_report_double(r, "cpi", w.instructions ? (double)w.clocks / (double)w.instructions : 0.0);
    nm_report_u64(r, "bus_wait_cycles", w.bus_wait_cycles);
    nm_report_u64(r, "virtual_ns", w.virtual_ns);
    nm_report_u64(r, "console_bytes", w.console_bytes);
    nm_report_u64(r, "console_clocks", w.console_clocks);
    nm_timing_report(k->timing, r);
}

static void marker_reset(void *opaque)
{
    (void)opaque;
}

static const char *const marker_keys[] = {"io", NULL};

const nm_device_class nm_marker_class = {
    .name = "marker",
    .help = "measurement window port: 1 opens, 0 closes, others are user markers (io=0x600)",
    .keys = marker_keys,
    .create = marker_create,
    .reset = marker_reset,
    .destroy = marker_destroy,
    .report = marker_report,
};

/* ---- API ---- */

bool nm_marker_on_window(void *dev, nm_marker_window_fn fn, void *opaque)
{
    marker *k = dev;
    if (!k || !fn || k->n_listeners >= MAX_LISTENERS) return false;
    k->listeners[k->n_listeners++] = (marker_listener){fn, opaque};
    return true;
}

bool nm_marker_window_open(void *dev)
{
    return dev && ((marker *)dev)->open;
}

void nm_marker_window_totals(void *dev, nm_marker_window *out)
{
    marker *k = dev;
    *out = k->total;
    if (k->open) window_add(k, out);
}

void *nm_marker_of(nm_machine *m)
{
    for (guint n = 0; n < m->devices->len; n++) {
        nm_device_instance *inst = m->devices->pdata[n];
        if (inst->cls == &nm_marker_class) return inst->state;
    }
    return NULL;
}
