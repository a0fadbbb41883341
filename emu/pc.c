/* The PC board.  Order matters: the interrupt controller first (it takes
 * the CPU's INTR and the acknowledge cycle), then the other platform devices
 * at their AT addresses, the PCI host, then the CPU, then the devices the
 * user configured (PCI NICs need the host), then the program to run. */
#include "emu/pc.h"

#include <string.h>

#include "cpu/cpu.h"
#include "cpu/trace.h"
#include "devices/bus/isa.h"
#include "devices/bus/pci.h"
#include "devices/pc/marker.h"
#include "devices/pc/pc.h"
#include "devices/video/vga.h"
#include "emu/elfload.h"
#include "emu/linux_boot.h"
#include "emu/core/log.h"
#include "emu/measure.h"
#include "emu/outfile.h"
#include "emu/rom_image.h"

/* Creates a board device from a spec ("uart,file=stdout"); NULL on error. */
static void *add_board_device(nm_machine *m, const nm_device_class *cls, const char *spec,
                              GError **err)
{
    if (!spec) return nm_machine_add_device(m, cls, NULL, err);
    nm_devcfg *d = nm_devcfg_parse("board", spec, err);
    if (!d) return NULL;
    void *dev = nm_machine_add_device(m, cls, d, err);
    nm_devcfg_free(d);
    return dev;
}

static void cpu_a20_listener(void *opaque, bool enabled)
{
    nm_cpu_set_a20(opaque, enabled);
}

/* The bare-metal ELF's initial stack: the top of conventional memory, below
 * the EBDA the E820 map reserves. */
#define ELF_STACK_TOP 0x9f000u

nm_machine *nm_pc_new(const nm_config *cfg, nm_pc_devices *devs, GError **err)
{
    nm_pc_devices local;
    if (!devs) devs = &local;
    *devs = (nm_pc_devices){0};
    nm_machine *m = nm_machine_new_bare(cfg, err);
    if (!m) return NULL;

    /* The console file is checked by name first: its own message, and the
     * spec below could not carry a name with a comma. */
    if (cfg->serial && strcmp(cfg->serial, "stdout") && strcmp(cfg->serial, "none") &&
        (!nm_output_file_check("serial", cfg->serial, err) || strchr(cfg->serial, ','))) {
        if (!*err)
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "serial: '%s': a file name with a comma cannot be used", cfg->serial);
        nm_machine_free(m);
        return NULL;
    }
    g_autofree char *uart_spec =
        g_strdup_printf("uart,io=0x3f8,irq=4,file=%s", cfg->serial ? cfg->serial : "stdout");
    if (!(devs->pic = add_board_device(m, &nm_pic_class, NULL, err)) ||
        !(devs->pit = add_board_device(m, &nm_pit_class, NULL, err)) ||
        !(devs->uart = add_board_device(m, &nm_uart_class, uart_spec, err)) ||
        !(devs->rtc = add_board_device(m, &nm_rtc_class, NULL, err)) ||
        !(devs->port92 = add_board_device(m, &nm_port92_class, NULL, err)) ||
        !add_board_device(m, &nm_fpuerr_class, NULL, err) ||
        !(devs->i8042 = add_board_device(m, &nm_i8042_class, NULL, err)) ||
        /* The ISA bus where the POST port used to create it (the order of
         * devices is the order of resets and of the report). */
        !nm_isa_bus_get(m, err) ||
        !(devs->exitport = add_board_device(m, &nm_exitport_class, NULL, err)) ||
        !(devs->debugcon = add_board_device(m, &nm_debugcon_class, NULL, err)) ||
        !(devs->pci = add_board_device(m, &nm_pci_host_class, NULL, err)))
        goto fail;

    m->cpu = nm_cpu_new(m);
    m->a20_listener = cpu_a20_listener;
    m->a20_listener_opaque = m->cpu;
    /* The measurement window and the cost model (after the CPU), then the
     * port the guest opens and closes it with. */
    if (!nm_measure_new(m, err) || !add_board_device(m, &nm_marker_class, NULL, err)) goto fail;
    /* The mailbox beside it: what init runs after the snapshot point. */
    if (!add_board_device(m, &nm_mailbox_class, NULL, err)) goto fail;
    /* The POST port last of the board: a post-port on a port another board
     * device needs is then reported against post-port, not that device. */
    if (!(devs->postcode = add_board_device(m, &nm_postcode_class, NULL, err))) goto fail;
    uint64_t a, b;
    if (cfg->trace_range && nm_parse_pair(cfg->trace_range, '-', &a, &b))
        nm_cpu_trace_set_range(m->cpu, (uint32_t)a, (uint32_t)b);
    if (cfg->trace_window && nm_parse_pair(cfg->trace_window, ',', &a, &b))
        nm_cpu_trace_set_window(m->cpu, a, b);

    if (!nm_machine_add_config_devices(m, err)) goto fail;
    /* The VGA is an ISA card: after the configuration's devices, so an
     * [isa] section there still sets the bus up first (docs/isa-bus.md). */
    if (!(devs->vga = add_board_device(m, &nm_vga_class, NULL, err))) goto fail;

    if (cfg->rom) {
        if (!nm_rom_install_file(m, cfg->rom, err)) goto fail;
    } else {
        if (!nm_boot_rom_install(m, err)) goto fail;
    }
    nm_machine_reset(m);
    nm_cpu_reset(m->cpu);
    /* PCI interrupts are level-triggered, and so are the lines devices
     * declared level (the KS8851's INTRN): mark their PIC inputs in the ELCR
     * (ports 0x4D0/0x4D1), as a BIOS would; Linux keeps what it finds. */
    uint16_t level_irqs =
        (uint16_t)(nm_pci_host_irq_mask(devs->pci) | (m->irq.level_lines & 0xffffu));
    nm_io_write(m->io, 0x4d0, level_irqs & 0xff, 1);
    nm_io_write(m->io, 0x4d1, level_irqs >> 8, 1);

    if (cfg->rom) {
        /* The CPU starts at the user's reset vector. */
    } else if (cfg->elf) {
        if (!nm_elf_boot(m, m->cpu, cfg->elf, ELF_STACK_TOP, err)) goto fail;
    } else if (cfg->kernel) {
        if (!nm_linux_boot_load(m, cfg->kernel, cfg->initrd, cfg->append, err)) goto fail;
    } else {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                    "nothing to run: give --kernel FILE, --elf FILE or --rom FILE");
        goto fail;
    }
    return m;
fail:
    nm_machine_free(m);
    return NULL;
}
