/* The measurement-window marker port (devices/pc/marker.c): the guest
 * writes 1 to open the window, 0 to close it, anything else as a user
 * marker.  The board creates it at port 0x600; it owns the machine's
 * cost-model state (cpu/timing/timing.h, m->timing) and, with
 * cost-from=marker, switches the cost model on for the window only. */
#ifndef NICEMU_DEVICES_PC_MARKER_H
#define NICEMU_DEVICES_PC_MARKER_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/core/device.h"

typedef struct nm_machine nm_machine;

extern const nm_device_class nm_marker_class;

#define NM_MARKER_PORT         0x600u
#define NM_MARKER_WINDOW_STOP  0u
#define NM_MARKER_WINDOW_START 1u

/* Told when the window opens (after the cost model is switched on) and
 * closes (before it is switched off).  Up to 8 listeners. */
typedef void (*nm_marker_window_fn)(void *opaque, bool open);
bool nm_marker_on_window(void *dev, nm_marker_window_fn fn, void *opaque);
bool nm_marker_window_open(void *dev);

/* The window totals so far (closed windows, plus the open one up to now). */
typedef struct nm_marker_window {
    uint64_t windows; /* windows opened */
    uint64_t clocks, instructions, bus_wait_cycles, virtual_ns;
    /* Serial output that began inside the windows: bytes and their
     * transmit time (CPU clocks).  A kernel console line in a window is a
     * measurement error: Linux's serial console polls with interrupts off
     * for every character (lost timer ticks at 9600 baud). */
    uint64_t console_bytes, console_clocks;
} nm_marker_window;
void nm_marker_window_totals(void *dev, nm_marker_window *out);

/* The marker device of a machine (NULL: none). */
void *nm_marker_of(nm_machine *m);

#endif
