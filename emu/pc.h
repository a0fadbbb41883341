/* The PC board: a machine with a CPU, our boot ROM (or the user's), the
 * platform devices at their usual places, the PCI host, the configured
 * devices, and what to run (a Linux kernel, a bare-metal ELF or a ROM). */
#ifndef NICEMU_PC_H
#define NICEMU_PC_H

#include <glib.h>

#include "emu/machine.h"

/* The platform devices nm_pc_new creates, for the run summary and tests. */
typedef struct nm_pc_devices {
    void *pic, *pit, *uart, *rtc, *port92, *i8042, *postcode, *exitport, *debugcon, *pci, *vga;
} nm_pc_devices;

/* Builds everything from the configuration; one clear error on bad input. */
nm_machine *nm_pc_new(const nm_config *cfg, nm_pc_devices *devs, GError **err);

#endif
