/* Every device class a configuration can name.  Adding a device: one file,
 * one class, one line here. */
#include <glib.h>
#include <string.h>

#include "devices/registry.h"

#include "devices/pc/marker.h"
#include "devices/pc/pc.h"
#include "devices/video/vga.h"

extern const nm_device_class nm_pci_host_class;
extern const nm_device_class nm_isa_class;        /* devices/bus/isa.c */
extern const nm_device_class nm_ne2000_class;     /* devices/net/ne2000.c */
extern const nm_device_class nm_wd8013_class;     /* devices/net/wd8013.c */
extern const nm_device_class nm_e1000_class;      /* devices/net/e1000.c */
extern const nm_device_class nm_xilinx_spi_class; /* devices/bus/xilinx_spi.c */
extern const nm_device_class nm_ks8851_class;     /* devices/net/ks8851.c */

static const nm_device_class *const classes[] = {
    &nm_debugcon_class, &nm_isa_class,        &nm_ne2000_class,
    &nm_wd8013_class,   &nm_pic_class,        &nm_pit_class,
    &nm_uart_class,     &nm_rtc_class,        &nm_port92_class,
    &nm_i8042_class,    &nm_postcode_class,   &nm_exitport_class,
    &nm_marker_class,   &nm_mailbox_class,    &nm_pci_host_class,
    &nm_e1000_class,    &nm_xilinx_spi_class, &nm_ks8851_class,
    &nm_vga_class,      &nm_fpuerr_class,     NULL,
};

const nm_device_class *nm_device_class_find(const char *name)
{
    for (const nm_device_class *const *c = classes; *c; c++)
        if (!strcmp((*c)->name, name)) return *c;
    return NULL;
}

const nm_device_class *const *nm_device_class_list(void)
{
    return classes;
}

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
