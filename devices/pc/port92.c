/* System control port A (0x92, the PS/2 "fast A20 and reset" port):
 * bit 1 opens the A20 gate, a 0->1 transition of bit 0 resets the CPU
 * (IBM PS/2 Hardware Interface Technical Reference, "System Control Port
 * A").  Other bits are kept and read back. */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define PORT92_RESET 0x01
#define PORT92_A20   0x02

typedef struct port92 {
    nm_machine *machine;
    nm_io_claim *claim;
    uint8_t value; /* as last written, bit 1 replaced by the A20 state on read */
    uint64_t resets;
} port92;

static uint32_t port92_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    port92 *p = opaque;
    return (p->value & ~PORT92_A20) | (p->machine->a20 ? PORT92_A20 : 0);
}

static void port92_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    (void)size;
    port92 *p = opaque;
    uint8_t old = p->value;
    p->value = (uint8_t)value;
    nm_machine_set_a20(p->machine, value & PORT92_A20);
    if ((value & PORT92_RESET) && !(old & PORT92_RESET)) {
        p->resets++;
        nm_info(PORTS, "reset via port 0x92");
        nm_machine_request_stop(p->machine, NM_STOP_RESET, 0, "reset via port 0x92");
    }
}

static const nm_io_ops port92_ops = {port92_read, port92_write, NULL};

static void port92_reset(void *opaque)
{
    port92 *p = opaque;
    p->value = p->machine->a20 ? PORT92_A20 : 0;
}

static void *port92_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    port92 *p = g_new0(port92, 1);
    p->machine = m;
    p->claim = nm_ioport_claim(m->io, 0x92, 1, &port92_ops, p, "port92", NULL);
    if (!p->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: port 0x92 is already taken by %s", cfg ? cfg->origin : "port92",
                    nm_ioport_owner(m->io, 0x92)->name);
        g_free(p);
        return NULL;
    }
    port92_reset(p);
    return p;
}

static void port92_destroy(void *opaque)
{
    port92 *p = opaque;
    nm_ioport_release(p->machine->io, p->claim);
    g_free(p);
}

static void port92_report(void *opaque, nm_report *r)
{
    port92 *p = opaque;
    nm_report_u64(r, "resets", p->resets);
}

static void port92_snapshot(void *opaque, nm_snap *s)
{
    port92 *p = opaque;
    nm_snap_u8(s, "value", &p->value);
    nm_snap_u64(s, "resets", &p->resets);
}

static const char *const port92_keys[] = {NULL};

const nm_device_class nm_port92_class = {
    .name = "port92",
    .help = "system control port A (0x92): A20 gate and fast reset",
    .keys = port92_keys,
    .create = port92_create,
    .reset = port92_reset,
    .destroy = port92_destroy,
    .report = port92_report,
    .snapshot = port92_snapshot,
    .snapshot_version = 1,
};
