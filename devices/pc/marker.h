/* The measurement-window marker port (devices/pc/marker.c): the guest
 * writes 1 to open the window, 0 to close it, anything else as a user
 * marker.  The board creates it at port 0x600, after the measurement
 * window (emu/measure.h), which it drives through the machine core. */
#ifndef NICEMU_DEVICES_PC_MARKER_H
#define NICEMU_DEVICES_PC_MARKER_H

#include "emu/core/device.h"

extern const nm_device_class nm_marker_class;

#define NM_MARKER_PORT         0x600u
#define NM_MARKER_WINDOW_STOP  0u
#define NM_MARKER_WINDOW_START 1u
/* The snapshot point ('SNAP' in memory order): the guest is at the place a
 * snapshot is taken (docs/snapshots.md); init writes it after configuring
 * the network, before reading its workload from the mailbox. */
#define NM_MARKER_SNAPSHOT 0x50414e53u

#endif
