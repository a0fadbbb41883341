/* The device interface.  A device is one .c file with a state struct and one
 * of these classes; it is created from its configuration, claims its ports,
 * MMIO, IRQ lines and timers through the machine, and holds no globals, so
 * any number of instances can coexist. */
#ifndef NICEMU_CORE_DEVICE_H
#define NICEMU_CORE_DEVICE_H

#include <glib.h>

#include "emu/core/devcfg.h"
#include "emu/core/report.h"

typedef struct nm_machine nm_machine;
typedef struct nm_snap nm_snap; /* emu/core/snapshot.h */

typedef struct nm_device_class {
    const char *name; /* what `model=` names */
    const char *help;
    const char *const *keys; /* accepted keys besides "model", NULL-terminated */
    void *(*create)(nm_machine *m, const nm_devcfg *cfg, GError **err);
    void (*reset)(void *dev);
    void (*destroy)(void *dev);
    void (*report)(void *dev, nm_report *r); /* may be NULL */
    /* NICs: frames sent and received so far (the profiler's per-packet
     * figures count them over the measurement window); NULL otherwise. */
    void (*frames)(const void *dev, uint64_t *tx, uint64_t *rx);
    /* Saves or loads the device's state (emu/core/snapshot.h) inside the
     * section the machine opened for it (named after the instance, version
     * `snapshot_version`).  Loading runs on a device freshly created from
     * the same configuration; it re-derives what it does not save (host
     * pointers, mappings) and refuses impossible values.  NULL: the device
     * cannot be saved (a snapshot of the machine is refused). */
    void (*snapshot)(void *dev, nm_snap *s);
    uint32_t snapshot_version;
} nm_device_class;

#endif
