/* Building a machine from a configuration (the application's part of
 * nm_machine; the core part, which devices and the CPU see, is
 * emu/core/machine.h). */
#ifndef NICEMU_MACHINE_H
#define NICEMU_MACHINE_H

#include <glib.h>
#include <stdbool.h>

#include "cpu/models.h"
#include "devices/registry.h"
#include "emu/config.h"
#include "emu/core/machine.h"

/* Builds the machine from a configuration: clock at the CPU model's
 * frequency, RAM from address 0, then the configured devices in order.
 * No CPU and no board devices: that is nm_pc_new (emu/pc.h). */
nm_machine *nm_machine_new(const nm_config *cfg, GError **err);
/* The same without the configured devices, and adding them. */
nm_machine *nm_machine_new_bare(const nm_config *cfg, GError **err);
bool nm_machine_add_config_devices(nm_machine *m, GError **err);
/* Frees the CPU, every device (in reverse order) and the machine. */
void nm_machine_free(nm_machine *m);

/* Adds the machine's and every device's counters to a report. */
void nm_machine_report(nm_machine *m, nm_report *r);

#endif
