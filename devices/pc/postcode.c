/* POST code port (0x80, plus the configured post-port if any): every byte
 * written is recorded, and a read returns the last one (0xff before any).
 * Linux writes 0x80 as an I/O delay, so this stays cheap: the first
 * NM_POSTCODE_KEPT bytes are kept in order and the rest only counted. */
#include <glib.h>

#include "devices/bus/isa.h"
#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

typedef struct postcode {
    nm_machine *machine;
    nm_io_claim *claim, *claim_extra;
    uint8_t *codes;
    size_t count;
    uint64_t total;
    uint8_t last;
} postcode;

static uint32_t postcode_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    return ((postcode *)opaque)->last;
}

static void postcode_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    postcode *p = opaque;
    /* A wider OUT on a 1-port claim arrives as bytes; keep each. */
    (void)size;
    p->last = (uint8_t)value;
    p->total++;
    if (p->count < NM_POSTCODE_KEPT) p->codes[p->count++] = (uint8_t)value;
}

static const nm_io_ops postcode_ops = {postcode_read, postcode_write, NULL};

static void postcode_destroy(void *opaque);

static void *postcode_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    postcode *p = g_new0(postcode, 1);
    p->machine = m;
    p->last = 0xff;
    p->codes = g_malloc(NM_POSTCODE_KEPT);
    const char *origin = cfg ? cfg->origin : "postcode";
    /* Port 0x80 sits on the ISA bus: each write (Linux's I/O delay) costs an
     * 8-bit ISA I/O cycle (docs/isa-bus.md). */
    nm_bus_cost *isa8 = nm_isa_io8_cost(m);
    p->claim = nm_ioport_claim(m->io, 0x80, 1, &postcode_ops, p, "postcode", isa8);
    int extra = m->settings.post_port;
    if (p->claim && extra >= 0 && extra != 0x80) {
        p->claim_extra =
            nm_ioport_claim(m->io, (uint16_t)extra, 1, &postcode_ops, p, "postcode", isa8);
        if (!p->claim_extra) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "post-port: port 0x%x is already taken by %s", extra,
                        nm_ioport_owner(m->io, (uint16_t)extra)->name);
            postcode_destroy(p);
            return NULL;
        }
    }
    if (!p->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: port 0x80 is already taken by %s", origin,
                    nm_ioport_owner(m->io, 0x80)->name);
        postcode_destroy(p);
        return NULL;
    }
    return p;
}

static void postcode_destroy(void *opaque)
{
    postcode *p = opaque;
    nm_ioport_release(p->machine->io, p->claim);
    nm_ioport_release(p->machine->io, p->claim_extra);
    g_free(p->codes);
    g_free(p);
}

static void postcode_report(void *opaque, nm_report *r)
{
    postcode *p = opaque;
    nm_report_u64(r, "writes", p->total);
    nm_report_u64(r, "last", p->last);
}

const uint8_t *nm_postcode_codes(void *dev, size_t *count)
{
    postcode *p = dev;
    *count = p->count;
    return p->codes;
}

uint64_t nm_postcode_total(void *dev)
{
    return ((postcode *)dev)->total;
}

static void postcode_snapshot(void *opaque, nm_snap *s)
{
    postcode *p = opaque;
    nm_snap_var_into(s, "codes", p->codes, NM_POSTCODE_KEPT, &p->count);
    nm_snap_u64(s, "total", &p->total);
    nm_snap_u8(s, "last", &p->last);
}

static const char *const postcode_keys[] = {NULL};

const nm_device_class nm_postcode_class = {
    .name = "postcode",
    .help = "POST code port 0x80 (and [machine] post-port): codes recorded for the summary",
    .keys = postcode_keys,
    .create = postcode_create,
    .destroy = postcode_destroy,
    .report = postcode_report,
    .snapshot = postcode_snapshot,
    .snapshot_version = 1,
};
