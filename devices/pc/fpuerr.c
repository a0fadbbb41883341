/* The PC/AT's numeric-error logic: the x87's FERR# (the 387's ERROR#)
 * sets a latch that raises IRQ 13; a write to port 0xF0 clears the latch
 * (IRQ 13 drops) and asserts IGNNE# to the CPU, which then ignores the
 * pending error, until FERR# goes away (the handler's FNCLEX).  IBM PC AT
 * Technical Reference, "Math coprocessor" (the 80287's ERROR# through the
 * latch to IRQ 13, OUT F0 to clear it); Intel486 Microprocessor Data Book,
 * "FERR#" and "IGNNE#", and the Intel application note AP-578 on PC-
 * compatible x87 error reporting (the latch, port 0xF0, IGNNE#).
 *
 * The CPU drives FERR# through the machine core (nm_machine_set_ferr); this
 * device listens there, so neither knows the other. */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define FPUERR_PORT 0xf0
#define FPUERR_IRQ  13

typedef struct fpuerr {
    nm_machine *machine;
    nm_io_claim *claim;
    bool latch;      /* FERR# seen asserted since the last write to 0xF0: IRQ 13 high */
    uint64_t errors; /* FERR# assertions */
    uint64_t clears; /* writes to port 0xF0 */
} fpuerr;

static void fpuerr_ferr(void *opaque, bool asserted)
{
    fpuerr *e = opaque;
    if (asserted) {
        e->errors++;
        e->latch = true;
        nm_irq_raise(&e->machine->irq, FPUERR_IRQ);
    } else {
        e->machine->ignne = false; /* IGNNE# follows FERR# away */
    }
}

static uint32_t fpuerr_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)opaque;
    (void)offset;
    (void)size;
    return 0xff; /* write-only */
}

static void fpuerr_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    (void)value;
    (void)size;
    fpuerr *e = opaque;
    e->clears++;
    e->latch = false;
    nm_irq_lower(&e->machine->irq, FPUERR_IRQ);
    e->machine->ignne = e->machine->ferr;
}

static const nm_io_ops fpuerr_ops = {fpuerr_read, fpuerr_write, NULL};

static void fpuerr_reset(void *opaque)
{
    fpuerr *e = opaque;
    e->latch = false;
    nm_irq_lower(&e->machine->irq, FPUERR_IRQ);
    e->machine->ignne = false;
}

static void *fpuerr_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    const char *origin = cfg ? cfg->origin : "fpuerr";
    if (!nm_irq_claim(&m->irq, FPUERR_IRQ, origin, "fpuerr", err)) return NULL;
    fpuerr *e = g_new0(fpuerr, 1);
    e->machine = m;
    e->claim = nm_ioport_claim(m->io, FPUERR_PORT, 1, &fpuerr_ops, e, "fpuerr", NULL);
    if (!e->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: port 0xf0 is already taken by %s", origin,
                    nm_ioport_owner(m->io, FPUERR_PORT)->name);
        g_free(e);
        return NULL;
    }
    m->ferr_listener = fpuerr_ferr;
    m->ferr_listener_opaque = e;
    fpuerr_reset(e);
    return e;
}

static void fpuerr_destroy(void *opaque)
{
    fpuerr *e = opaque;
    if (e->machine->ferr_listener_opaque == e) e->machine->ferr_listener = NULL;
    nm_ioport_release(e->machine->io, e->claim);
    g_free(e);
}

static void fpuerr_report(void *opaque, nm_report *r)
{
    fpuerr *e = opaque;
    nm_report_u64(r, "errors", e->errors);
    nm_report_u64(r, "clears", e->clears);
}

static void fpuerr_snapshot(void *opaque, nm_snap *s)
{
    fpuerr *e = opaque;
    nm_snap_bool(s, "latch", &e->latch);
    nm_snap_bool(s, "ignne", &e->machine->ignne);
    nm_snap_u64(s, "errors", &e->errors);
    nm_snap_u64(s, "clears", &e->clears);
}

static const char *const fpuerr_keys[] = {NULL};

const nm_device_class nm_fpuerr_class = {
    .name = "fpuerr",
    .help = "the PC's numeric-error latch: FERR# to IRQ 13, port 0xF0 and IGNNE#",
    .keys = fpuerr_keys,
    .create = fpuerr_create,
    .reset = fpuerr_reset,
    .destroy = fpuerr_destroy,
    .report = fpuerr_report,
    .snapshot = fpuerr_snapshot,
    .snapshot_version = 1,
};
