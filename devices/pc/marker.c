/* The measurement-window marker port (marker.h).  A write of any size:
 * 1 opens the window, 0 closes it, NM_MARKER_SNAPSHOT marks the snapshot
 * point (the run loop saves there with --save-state), other values are user
 * markers kept with their cycle count (the first NM_MARKER_KEPT).  Reads return 1 while the
 * window is open.  The port charges no bus time: the OUT itself is the
 * only disturbance (the window includes the opening OUT and not the
 * closing one).
 *
 * The port only decodes: the window itself (its counters, its listeners,
 * the cost-model switch) is the application's (emu/measure.c), reached
 * through the machine core's window interface (nm_machine_window_set). */
#include "devices/pc/marker.h"

#include <glib.h>

#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define NM_MARKER_KEPT 64u

typedef struct marker {
    nm_machine *machine;
    nm_io_claim *claim;
    struct {
        uint32_t value;
        uint64_t cycles;
    } marks[NM_MARKER_KEPT];
    uint64_t mark_count;
} marker;

static uint32_t marker_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    return nm_machine_window_is_open(((marker *)opaque)->machine) ? 1u : 0u;
}

static void marker_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    marker *k = opaque;
    if (offset != 0) return; /* the upper bytes of a wide OUT */
    if (value == NM_MARKER_WINDOW_START)
        nm_machine_window_set(k->machine, true);
    else if (value == NM_MARKER_WINDOW_STOP)
        nm_machine_window_set(k->machine, false);
    else if (value == NM_MARKER_SNAPSHOT)
        nm_machine_snapshot_point(k->machine);
    else {
        if (k->mark_count < NM_MARKER_KEPT) {
            k->marks[k->mark_count].value = value;
            k->marks[k->mark_count].cycles = k->machine->clock.cycles;
        }
        k->mark_count++;
    }
}

static const nm_io_ops marker_ops = {marker_read, marker_write, NULL};

static void *marker_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t port = NM_MARKER_PORT;
    if (cfg && !nm_devcfg_u32(cfg, "io", NM_MARKER_PORT, 0, 0xfffc, &port, err)) return NULL;
    if (m->window_port) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "marker: the machine has one measurement marker already");
        return NULL;
    }
    marker *k = g_new0(marker, 1);
    k->machine = m;
    k->claim = nm_ioport_claim(m->io, (uint16_t)port, 4, &marker_ops, k, "marker", NULL);
    if (!k->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: port 0x%x is already taken by %s", cfg ? cfg->origin : "marker", port,
                    nm_ioport_owner(m->io, (uint16_t)port)->name);
        g_free(k);
        return NULL;
    }
    m->window_port = k;
    return k;
}

static void marker_destroy(void *opaque)
{
    marker *k = opaque;
    if (k->machine->window_port == k) k->machine->window_port = NULL;
    nm_ioport_release(k->machine->io, k->claim);
    g_free(k);
}

static void marker_report(void *opaque, nm_report *r)
{
    marker *k = opaque;
    nm_report_u64(r, "user_markers", k->mark_count);
    nm_report_u64(r, "snapshot_points", k->machine->snapshot_points);
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
    /* The window's counters and the cost model's (emu/measure.c). */
    nm_machine *m = k->machine;
    if (m->window_ops && m->window_ops->report) m->window_ops->report(m->window_opaque, r);
}

static void marker_reset(void *opaque)
{
    (void)opaque;
}

static void marker_snapshot(void *opaque, nm_snap *s)
{
    marker *k = opaque;
    for (unsigned j = 0; j < NM_MARKER_KEPT; j++) {
        nm_snap_push(s, "mark%u", j);
        nm_snap_u32(s, "value", &k->marks[j].value);
        nm_snap_u64(s, "cycles", &k->marks[j].cycles);
        nm_snap_pop(s);
    }
    nm_snap_u64(s, "mark_count", &k->mark_count);
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
    .snapshot = marker_snapshot,
    .snapshot_version = 1,
};
