/* The device classes a configuration may name (registry.c): the one place
 * that lists every device, for the application to look names up in. */
#ifndef NICEMU_DEVICES_REGISTRY_H
#define NICEMU_DEVICES_REGISTRY_H

#include "emu/core/device.h"

/* The classes a configuration may name (devices/registry.c). */
const nm_device_class *nm_device_class_find(const char *name);
const nm_device_class *const *nm_device_class_list(void);
/* Comma-separated names (static storage), for error messages. */
const char *nm_device_class_names(void);

#endif
