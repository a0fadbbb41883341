/* The exit port (0xF4 by default, QEMU's isa-debug-exit convention): a
 * write of any size ends the run with exit status value & 0xff.  A wider
 * OUT reaches the port as its low byte first.  Reads return 0xff. */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

typedef struct exitport {
    nm_machine *machine;
    nm_io_claim *claim;
} exitport;

static uint32_t exitport_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)opaque;
    (void)offset;
    (void)size;
    return 0xff;
}

static void exitport_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    (void)size;
    exitport *e = opaque;
    nm_info(PORTS, "exit port: status %u", value & 0xff);
    nm_machine_request_stop(e->machine, NM_STOP_EXIT_PORT, (int)(value & 0xff), NULL);
}

static const nm_io_ops exitport_ops = {exitport_read, exitport_write, NULL};

static void *exitport_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t port = 0xf4;
    if (cfg && !nm_devcfg_u32(cfg, "io", 0xf4, 0, 0xffff, &port, err)) return NULL;
    exitport *e = g_new0(exitport, 1);
    e->machine = m;
    e->claim = nm_ioport_claim(m->io, (uint16_t)port, 1, &exitport_ops, e, "exitport", NULL);
    if (!e->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: port 0x%x is already taken by %s", cfg ? cfg->origin : "exitport",
                    port, nm_ioport_owner(m->io, (uint16_t)port)->name);
        g_free(e);
        return NULL;
    }
    return e;
}

static void exitport_destroy(void *opaque)
{
    exitport *e = opaque;
    nm_ioport_release(e->machine->io, e->claim);
    g_free(e);
}

/* Nothing but its port: the run ends at the first write. */
static void exitport_snapshot(void *opaque, nm_snap *s)
{
    (void)opaque;
    (void)s;
}

static const char *const exitport_keys[] = {"io", NULL};

const nm_device_class nm_exitport_class = {
    .name = "exitport",
    .help = "exit port: a write ends the run with status value & 0xff (io=0xf4)",
    .keys = exitport_keys,
    .create = exitport_create,
    .destroy = exitport_destroy,
    .snapshot = exitport_snapshot,
    .snapshot_version = 1,
};
