/* The host-to-guest mailbox (ports 0x604-0x607, beside the measurement
 * marker): a read-only string the host sets with --mailbox, which the
 * guest reads a byte at a time.  It is how the workload gets into a run
 * restored from a snapshot: the snapshot holds the booted guest, the
 * mailbox the command it runs next (init reads it right after the
 * snapshot point; docs/snapshots.md), so one snapshot serves any workload.
 *
 * Register map (8-bit registers, offsets from the base):
 *
 *   off  name     access  meaning
 *   0    STATUS   R       bit 0 PRESENT: the host put a command in
 *                         bit 1 MORE: bytes are left to read
 *   0    CONTROL  W       bit 0 REWIND: the next DATA read is byte 0 again
 *   1    DATA     R       the next byte (0 once all are read); advances
 *   2-3  LENGTH   R       the command's length in bytes (16 bits)
 *
 * Without the device (another machine) the ports read 0xFF: a guest checks
 * that STATUS has bits 2-7 clear before it believes PRESENT.  The command
 * is input, not state: a snapshot saves the read position only, and a
 * restored run's mailbox holds what its own --mailbox says. */
#include <glib.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define MAILBOX_PORT 0x604u
#define MAILBOX_MAX  4095u /* init's buffer holds 4 KB with its NUL */

#define STATUS_PRESENT 0x01u
#define STATUS_MORE    0x02u
#define CONTROL_REWIND 0x01u

typedef struct mailbox {
    nm_machine *machine;
    nm_io_claim *claim;
    const char *text; /* the machine's settings' (NULL: empty) */
    uint32_t len;
    uint32_t pos; /* next byte DATA returns */
    uint64_t reads, bad_writes;
} mailbox;

/* ---- registers ---- */

static uint32_t reg_status(mailbox *b)
{
    return (b->text ? STATUS_PRESENT : 0) | (b->pos < b->len ? STATUS_MORE : 0);
}

static uint32_t reg_data(mailbox *b)
{
    if (b->pos >= b->len) return 0;
    b->reads++;
    return (uint8_t)b->text[b->pos++];
}

static uint32_t reg_length_lo(mailbox *b)
{
    return b->len & 0xff;
}

static uint32_t reg_length_hi(mailbox *b)
{
    return b->len >> 8;
}

static void reg_control(mailbox *b, uint8_t v)
{
    if (v & CONTROL_REWIND) b->pos = 0;
    if (v & ~CONTROL_REWIND) {
        b->bad_writes++;
        nm_dev_warn(PORTS, b, "mailbox: CONTROL 0x%02x has bits other than REWIND set", v);
    }
}

typedef struct mailbox_reg {
    const char *name;
    uint32_t (*read)(mailbox *b);
    void (*write)(mailbox *b, uint8_t v);
} mailbox_reg;

static const mailbox_reg regs[4] = {
    {"STATUS/CONTROL", reg_status, reg_control},
    {"DATA", reg_data, NULL},
    {"LENGTH", reg_length_lo, NULL},
    {"LENGTH+1", reg_length_hi, NULL},
};

/* Wider accesses are byte accesses from the lowest port up (a 16-bit read
 * at LENGTH reads both halves). */
static uint32_t mailbox_read(void *opaque, uint32_t offset, unsigned size)
{
    mailbox *b = opaque;
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++) {
        uint32_t off = offset + i;
        uint32_t byte = off < G_N_ELEMENTS(regs) ? regs[off].read(b) & 0xff : 0xff;
        v |= byte << (8 * i);
    }
    return v;
}

static void mailbox_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    mailbox *b = opaque;
    for (unsigned i = 0; i < size; i++) {
        uint32_t off = offset + i;
        uint8_t v = (uint8_t)(value >> (8 * i));
        if (off < G_N_ELEMENTS(regs) && regs[off].write) {
            regs[off].write(b, v);
        } else {
            b->bad_writes++;
            nm_dev_warn(PORTS, b, "mailbox: write 0x%02x to read-only %s", v,
                        off < G_N_ELEMENTS(regs) ? regs[off].name : "port");
        }
    }
}

static const nm_io_ops mailbox_ops = {mailbox_read, mailbox_write, NULL};

/* ---- device ---- */

static void *mailbox_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t port = MAILBOX_PORT;
    if (cfg && !nm_devcfg_u32(cfg, "io", MAILBOX_PORT, 0, 0xfffc, &port, err)) return NULL;
    const char *text = m->settings.mailbox;
    size_t len = text ? strlen(text) : 0;
    if (len > MAILBOX_MAX) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "mailbox: %zu bytes is too long (accepted: at most %u)", len, MAILBOX_MAX);
        return NULL;
    }
    mailbox *b = g_new0(mailbox, 1);
    b->machine = m;
    b->text = text;
    b->len = (uint32_t)len;
    b->claim = nm_ioport_claim(m->io, (uint16_t)port, 4, &mailbox_ops, b, "mailbox", NULL);
    if (!b->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: port 0x%x is already taken by %s", cfg ? cfg->origin : "mailbox", port,
                    nm_ioport_owner(m->io, (uint16_t)port)->name);
        g_free(b);
        return NULL;
    }
    return b;
}

static void mailbox_reset(void *opaque)
{
    ((mailbox *)opaque)->pos = 0;
}

static void mailbox_destroy(void *opaque)
{
    mailbox *b = opaque;
    nm_ioport_release(b->machine->io, b->claim);
    g_free(b);
}

static void mailbox_report(void *opaque, nm_report *r)
{
    mailbox *b = opaque;
    nm_report_u64(r, "length", b->len);
    nm_report_u64(r, "bytes_read", b->reads);
    nm_report_u64(r, "bad_writes", b->bad_writes);
}

static void mailbox_snapshot(void *opaque, nm_snap *s)
{
    mailbox *b = opaque;
    nm_snap_u32(s, "pos", &b->pos);
    nm_snap_u64(s, "reads", &b->reads);
    nm_snap_u64(s, "bad_writes", &b->bad_writes);
    /* Another command may be shorter than the position. */
    if (b->pos > b->len) b->pos = b->len;
}

static const char *const mailbox_keys[] = {"io", NULL};

const nm_device_class nm_mailbox_class = {
    .name = "mailbox",
    .help = "host-to-guest mailbox (io=0x604): the --mailbox text, read a byte at a time",
    .keys = mailbox_keys,
    .create = mailbox_create,
    .reset = mailbox_reset,
    .destroy = mailbox_destroy,
    .report = mailbox_report,
    .snapshot = mailbox_snapshot,
    .snapshot_version = 1,
};
