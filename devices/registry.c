/* Every device class a configuration can name.  Adding a device: one file,
 * one class, one line here. */
#include <glib.h>
#include <string.h>

#include "emu/device.h"

extern const nm_device_class nm_debugcon_class;

static const nm_device_class *const classes[] = {
    &nm_debugcon_class,
    NULL,
};

const nm_device_class *nm_device_class_find(const char *name)
{
    for (const nm_device_class *const *c = classes; *c; c++)
        if (!strcmp((*c)->name, name)) return *c;
    return NULL;
}

const nm_device_class *const *nm_device_class_list(void) { return classes; }

const char *nm_device_class_names(void)
{
    static char names[512];
    if (!names[0]) {
        for (const nm_device_class *const *c = classes; *c; c++) {
            if (c != classes) g_strlcat(names, ", ", sizeof names);
            g_strlcat(names, (*c)->name, sizeof names);
        }
    }
    return names;
}
