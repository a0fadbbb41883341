/* Debug console: bytes the guest writes to the port (0xE9 by default, the
 * Bochs/QEMU convention) are printed on the host, and kept so the run can
 * report them.  Reading the port returns 0xE9, which is how guests detect it. */
#include <glib.h>
#include <stdio.h>

#include "devices/pc/pc.h"
#include "emu/core/device.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

typedef struct debugcon {
    nm_machine *machine;
    nm_io_claim *claim;
    FILE *out; /* NULL: not printed, only kept */
    bool close_out;
    GString *text; /* everything written, for tests and the report */
} debugcon;

static uint32_t debugcon_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)opaque;
    (void)offset;
    (void)size;
    return 0xe9;
}

static void debugcon_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    debugcon *d = opaque;
    /* A wider OUT still sends its low byte first: emit each byte. */
    for (unsigned i = 0; i < size; i++) {
        char ch = (char)(value >> (8 * i));
        g_string_append_c(d->text, ch);
        if (d->out) fputc(ch, d->out);
    }
    if (d->out && (char)value == '\n') fflush(d->out);
}

static const nm_io_ops debugcon_ops = {debugcon_read, debugcon_write, NULL};

static void debugcon_destroy(void *opaque);

static void *debugcon_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t port = 0xe9;
    if (cfg && !nm_devcfg_u32(cfg, "io", 0xe9, 0, 0xffff, &port, err)) return NULL;
    const char *file = cfg ? nm_devcfg_get(cfg, "file") : NULL;
    debugcon *d = g_new0(debugcon, 1);
    d->machine = m;
    d->text = g_string_new(NULL);
    if (!file || !g_strcmp0(file, "stdout")) {
        d->out = stdout;
    } else if (!g_strcmp0(file, "none")) {
        d->out = NULL;
    } else {
        d->out = fopen(file, "w");
        if (!d->out) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: file: cannot open '%s'",
                        cfg->origin, file);
            debugcon_destroy(d);
            return NULL;
        }
        d->close_out = true;
    }
    d->claim = nm_ioport_claim(m->io, (uint16_t)port, 1, &debugcon_ops, d, "debugcon", NULL);
    if (!d->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: port 0x%x is already taken by %s", cfg ? cfg->origin : "debugcon",
                    port, nm_ioport_owner(m->io, (uint16_t)port)->name);
        debugcon_destroy(d);
        return NULL;
    }
    return d;
}

static void debugcon_destroy(void *opaque)
{
    debugcon *d = opaque;
    if (d->claim) nm_ioport_release(d->machine->io, d->claim);
    if (d->out) fflush(d->out);
    if (d->close_out) fclose(d->out);
    g_string_free(d->text, TRUE);
    g_free(d);
}

static void debugcon_report(void *opaque, nm_report *r)
{
    debugcon *d = opaque;
    nm_report_u64(r, "bytes", d->text->len);
}

/* Everything the guest wrote so far (tests and the --rom summary use it). */
const char *nm_debugcon_text(void *opaque)
{
    return ((debugcon *)opaque)->text->str;
}

static void debugcon_replay(void *opaque)
{
    debugcon *d = opaque;
    fwrite(d->text->str, 1, d->text->len, d->out);
    fflush(d->out);
}

/* What was written so far is state (the report counts it); a restored run
 * prints it again, as the UART does its console. */
static void debugcon_snapshot(void *opaque, nm_snap *s)
{
    debugcon *d = opaque;
    nm_snap_gstring(s, "text", d->text);
    if (nm_snap_saving(s)) {
        if (d->out) fflush(d->out);
    } else if (d->out && d->text->len) {
        nm_snap_after_load(s, debugcon_replay, d);
    }
}

static const char *const debugcon_keys[] = {"io", "file", NULL};

const nm_device_class nm_debugcon_class = {
    .name = "debugcon",
    .help = "debug console port: guest bytes printed (file=stdout|none|PATH, io=0xe9)",
    .keys = debugcon_keys,
    .create = debugcon_create,
    .destroy = debugcon_destroy,
    .report = debugcon_report,
    .snapshot = debugcon_snapshot,
    .snapshot_version = 1,
};
