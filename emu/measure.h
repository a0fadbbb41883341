/* The measurement window (emu/measure.c): the guest opens and closes it
 * through the marker port (devices/pc/marker.c, port 0x600), which calls
 * this module through the machine core's window interface (nm_window_ops,
 * emu/core/machine.h).  It owns the machine's cost-model state (m->timing,
 * cpu/timing/timing.h) and, with cost-from=marker, switches the configured
 * cost model in for the window only; it sums the window's counters and
 * tells its listeners (the profiler) when the window opens and closes. */
#ifndef NICEMU_MEASURE_H
#define NICEMU_MEASURE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/machine.h"

typedef struct nm_measure nm_measure;

/* Reads the cost-model keys of m->cfg (one error on a bad value), creates
 * the timing state and installs the window on the machine (freed with it).
 * After the CPU: cost-from=boot switches the model in at once. */
nm_measure *nm_measure_new(nm_machine *m, GError **err);
/* The machine's measurement window (NULL: none). */
nm_measure *nm_measure_of(nm_machine *m);

/* Told when the window opens (after the cost model is switched on) and
 * closes (before it is switched off).  Up to 8 listeners. */
typedef void (*nm_measure_window_fn)(void *opaque, bool open);
bool nm_measure_on_window(nm_measure *ms, nm_measure_window_fn fn, void *opaque);
bool nm_measure_window_open(const nm_measure *ms);

/* The window totals so far (closed windows, plus the open one up to now). */
typedef struct nm_measure_window {
    uint64_t windows; /* windows opened */
    uint64_t clocks, instructions, bus_wait_cycles, virtual_ns;
    /* Serial output that began inside the windows: bytes and their
     * transmit time (CPU clocks).  A kernel console line in a window is a
     * measurement error: Linux's serial console polls with interrupts off
     * for every character (lost timer ticks at 9600 baud). */
    uint64_t console_bytes, console_clocks;
    /* Host time inside the windows, microseconds (g_get_monotonic_time):
     * reported as wall_seconds, read by nothing else -- never a count or
     * anything the guest sees (the tests compare reports less it). */
    uint64_t wall_us;
} nm_measure_window;
void nm_measure_window_totals(const nm_measure *ms, nm_measure_window *out);

/* Saves or loads the window in a snapshot (section "window"): refused while
 * a cost model runs or after a window was opened (the models' and the
 * profiler's state is not saved; docs/snapshots.md). */
typedef struct nm_snap nm_snap;
void nm_measure_snapshot(nm_measure *ms, nm_snap *s);

#endif
