/* Intel 8042 keyboard controller (data 0x60, status/command 0x64) with an
 * AT keyboard behind it and no mouse.
 *
 * The controller answers its own commands at once (IBF never stays set, so
 * nothing waits for real time): command byte read/write, self-test,
 * interface tests, port enable/disable, output port (A20, reset), the AUX
 * loopback Linux uses to test IRQ 12, and pulse-reset.  A byte sent to the
 * mouse gets the answer of an empty port: 0xFE with the timeout status bit
 * (IBM PC AT technical reference, "Keyboard Controller", status bit 6), so
 * Linux's psmouse probe fails quickly and quietly.
 *
 * The keyboard answers the commands Linux's atkbd sends (IBM PC AT
 * technical reference, "Keyboard", commands to the keyboard): reset (ACK,
 * then BAT passed 0xAA), identify (ACK, 0xAB 0x83, or 0xAB 0x41 as the
 * controller's set-1 translation turns it), set LEDs, scancode set,
 * typematic rate (ACK and ACK for the argument), enable, disable, defaults,
 * echo, resend.  Keys come from the host (the display window) as set-1
 * scancodes, the codes the CPU reads with translation on, which is what
 * the BIOS sets and Linux keeps; with translation off they are still set 1
 * (not modelled: set 2/3 output).
 *
 * Output-buffer bytes from the keyboard side raise IRQ 1 and from the AUX
 * side IRQ 12 when enabled in the command byte; the line drops when the
 * byte is read. */
#include <glib.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define KBD_IRQ      1
#define AUX_IRQ      12
#define OUTPUT_QUEUE 16

#define STATUS_OBF      0x01
#define STATUS_SYS      0x04
#define STATUS_CMD      0x08 /* last write was to 0x64 */
#define STATUS_UNLOCKED 0x10
#define STATUS_AUX      0x20
#define STATUS_TIMEOUT  0x40

#define CTR_KBD_INT     0x01
#define CTR_AUX_INT     0x02
#define CTR_SYS         0x04
#define CTR_KBD_DISABLE 0x10
#define CTR_AUX_DISABLE 0x20
#define CTR_TRANSLATE   0x40

#define OUTPORT_RESET 0x01 /* active low: 0 resets the CPU */
#define OUTPORT_A20   0x02

#define REPLY_NAK 0xfe

/* Keyboard replies (PC AT technical reference, "Keyboard", "Commands from
 * the keyboard"). */
#define KBD_ACK       0xfa
#define KBD_BAT_OK    0xaa
#define KBD_ECHO      0xee
#define KBD_RESEND    0xfe
#define KBD_ID_FIRST  0xab
#define KBD_ID_SECOND 0x83 /* MF2 keyboard */
#define KBD_ID_XLATED 0x41 /* 0x83 after the controller's translation */

typedef struct output_byte {
    uint8_t value;
    bool aux, timeout;
} output_byte;

typedef struct i8042 {
    nm_machine *machine;
    nm_io_claim *claim_data, *claim_cmd;
    uint8_t ram[32];         /* ram[0] is the command byte */
    uint8_t pending_command; /* command awaiting its data byte, 0: none */
    bool last_write_command;
    uint8_t last_read;
    output_byte queue[OUTPUT_QUEUE];
    unsigned queue_head, queue_count;
    bool kbd_irq, aux_irq;
    uint64_t commands, naks, resets;
    /* The keyboard. */
    uint8_t kbd_pending; /* command awaiting its argument byte, 0: none */
    uint8_t kbd_last;    /* last byte sent, for resend */
    uint8_t kbd_set;     /* scancode set selected (reported; output is set 1) */
    bool kbd_enabled;    /* scanning (F4 enable / F5 disable) */
    uint64_t kbd_commands, keys_in, keys_dropped;
} i8042;

static void i8042_update_irq(i8042 *k)
{
    bool kbd = false, aux = false;
    if (k->queue_count) {
        const output_byte *b = &k->queue[k->queue_head];
        aux = b->aux && (k->ram[0] & CTR_AUX_INT);
        kbd = !b->aux && (k->ram[0] & CTR_KBD_INT);
    }
    nm_irq_bus *bus = &k->machine->irq;
    if (kbd != k->kbd_irq) nm_irq_set(bus, KBD_IRQ, kbd);
    if (aux != k->aux_irq) nm_irq_set(bus, AUX_IRQ, aux);
    k->kbd_irq = kbd;
    k->aux_irq = aux;
}

static void queue_byte(i8042 *k, uint8_t value, bool aux, bool timeout)
{
    if (k->queue_count == OUTPUT_QUEUE) {
        nm_debug(KBD, "output buffer overflow, 0x%02x dropped", value);
        return;
    }
    k->queue[(k->queue_head + k->queue_count++) % OUTPUT_QUEUE] =
        (output_byte){.value = value, .aux = aux, .timeout = timeout};
    i8042_update_irq(k);
}

static void reply(i8042 *k, uint8_t value)
{
    queue_byte(k, value, false, false);
}

static uint8_t output_port(const i8042 *k)
{
    uint8_t v = OUTPORT_RESET | 0xc0; /* keyboard clock and data lines idle high */
    if (k->machine->a20) v |= OUTPORT_A20;
    if (k->queue_count && !k->queue[k->queue_head].aux) v |= 0x10;
    if (k->queue_count && k->queue[k->queue_head].aux) v |= 0x20;
    return v;
}

static void request_reset(i8042 *k)
{
    k->resets++;
    nm_info(KBD, "reset via keyboard controller");
    nm_machine_request_stop(k->machine, NM_STOP_RESET, 0, "reset via keyboard controller");
}

static void i8042_command(i8042 *k, uint8_t cmd)
{
    k->commands++;
    k->pending_command = 0;
    if (cmd >= 0x20 && cmd <= 0x3f) { /* read controller RAM */
        reply(k, k->ram[cmd & 0x1f]);
        return;
    }
    if ((cmd >= 0x60 && cmd <= 0x7f) || cmd == 0xd1 || cmd == 0xd2 || cmd == 0xd3 || cmd == 0xd4) {
        k->pending_command = cmd; /* the data byte follows on 0x60 */
        return;
    }
    if (cmd >= 0xf0) { /* pulse output port bits low for 6 us; bit 0 = reset */
        if (!(cmd & 0x01)) request_reset(k);
        return;
    }
    switch (cmd) {
    case 0xa7: k->ram[0] |= CTR_AUX_DISABLE; break;
    case 0xa8: k->ram[0] &= ~CTR_AUX_DISABLE; break;
    case 0xa9: reply(k, 0x00); break; /* AUX interface test: OK */
    case 0xaa:                        /* self-test passed */
        k->ram[0] |= CTR_SYS;
        reply(k, 0x55);
        break;
    case 0xab: reply(k, 0x00); break; /* keyboard interface test: OK */
    case 0xad: k->ram[0] |= CTR_KBD_DISABLE; break;
    case 0xae: k->ram[0] &= ~CTR_KBD_DISABLE; break;
    case 0xc0: reply(k, 0xbf); break; /* input port: not locked, colour */
    case 0xd0: reply(k, output_port(k)); break;
    case 0xdd: nm_machine_set_a20(k->machine, false); break;
    case 0xdf: nm_machine_set_a20(k->machine, true); break;
    case 0xe0: reply(k, 0x00); break; /* test inputs */
    default: nm_debug(KBD, "unsupported controller command 0x%02x ignored", cmd); break;
    }
    i8042_update_irq(k);
}

static void kbd_send(i8042 *k, uint8_t value)
{
    k->kbd_last = value;
    queue_byte(k, value, false, false);
}

/* A byte written to port 0x60 with no controller command pending goes to
 * the keyboard (the controller enables its interface to send it). */
static void keyboard_byte(i8042 *k, uint8_t value)
{
    k->kbd_commands++;
    k->ram[0] &= ~CTR_KBD_DISABLE;
    uint8_t cmd = k->kbd_pending;
    k->kbd_pending = 0;
    if (cmd) { /* the argument of ED, F0 or F3 */
        kbd_send(k, KBD_ACK);
        if (cmd == 0xf0) {
            if (value == 0)
                kbd_send(k, k->kbd_set); /* report the current set */
            else if (value <= 3)
                k->kbd_set = value;
        }
        return;
    }
    switch (value) {
    case 0xed: /* set LEDs */
    case 0xf0: /* select scancode set */
    case 0xf3: /* typematic rate and delay */
        kbd_send(k, KBD_ACK);
        k->kbd_pending = value;
        break;
    case 0xee: kbd_send(k, KBD_ECHO); break;
    case 0xf2: /* identify */
        kbd_send(k, KBD_ACK);
        kbd_send(k, KBD_ID_FIRST);
        kbd_send(k, (k->ram[0] & CTR_TRANSLATE) ? KBD_ID_XLATED : KBD_ID_SECOND);
        break;
    case 0xf4:
        k->kbd_enabled = true;
        kbd_send(k, KBD_ACK);
        break;
    case 0xf5: /* disable: also restores defaults */
        k->kbd_enabled = false;
        kbd_send(k, KBD_ACK);
        break;
    case 0xf6:
        k->kbd_enabled = true;
        kbd_send(k, KBD_ACK);
        break;
    case 0xf7:
    case 0xf8:
    case 0xf9:
    case 0xfa:
    case 0xfb:
    case 0xfc:
    case 0xfd:
        kbd_send(k, KBD_ACK); /* set-3 key types: accepted, no effect */
        break;
    case 0xfe: queue_byte(k, k->kbd_last, false, false); break;
    case 0xff: /* reset: ACK, then the basic assurance test passed */
        k->kbd_enabled = true;
        k->kbd_set = 2;
        kbd_send(k, KBD_ACK);
        kbd_send(k, KBD_BAT_OK);
        break;
    default:
        nm_debug(KBD, "unknown keyboard command 0x%02x: resend requested", value);
        queue_byte(k, KBD_RESEND, false, false);
        break;
    }
}

size_t nm_i8042_keys(void *dev, const uint8_t *codes, size_t len)
{
    i8042 *k = dev;
    size_t accepted = 0;
    for (size_t i = 0; i < len; i++) {
        if (!k->kbd_enabled || (k->ram[0] & CTR_KBD_DISABLE) || k->queue_count == OUTPUT_QUEUE) {
            k->keys_dropped++;
            continue;
        }
        k->keys_in++;
        queue_byte(k, codes[i], false, false);
        accepted++;
    }
    return accepted;
}

static void i8042_data_write(i8042 *k, uint8_t value)
{
    uint8_t cmd = k->pending_command;
    k->pending_command = 0;
    if (cmd >= 0x60 && cmd <= 0x7f) {
        k->ram[cmd & 0x1f] = value;
    } else if (cmd == 0xd1) {
        nm_machine_set_a20(k->machine, value & OUTPORT_A20);
        if (!(value & OUTPORT_RESET)) request_reset(k);
    } else if (cmd == 0xd2) {
        queue_byte(k, value, false, false); /* as if from the keyboard */
    } else if (cmd == 0xd3) {
        queue_byte(k, value, true, false); /* as if from the mouse */
    } else if (cmd == 0xd4) {
        k->naks++; /* to the mouse: nobody there */
        queue_byte(k, REPLY_NAK, true, true);
    } else {
        keyboard_byte(k, value);
    }
    i8042_update_irq(k);
}

static uint8_t i8042_status(const i8042 *k)
{
    uint8_t v = STATUS_UNLOCKED;
    if (k->ram[0] & CTR_SYS) v |= STATUS_SYS;
    if (k->last_write_command) v |= STATUS_CMD;
    if (k->queue_count) {
        const output_byte *b = &k->queue[k->queue_head];
        v |= STATUS_OBF;
        if (b->aux) v |= STATUS_AUX;
        if (b->timeout) v |= STATUS_TIMEOUT;
    }
    return v;
}

static uint32_t i8042_data_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    i8042 *k = opaque;
    if (!k->queue_count) return k->last_read; /* the buffer keeps its last byte */
    k->last_read = k->queue[k->queue_head].value;
    k->queue_head = (k->queue_head + 1) % OUTPUT_QUEUE;
    k->queue_count--;
    /* Drop the line so the next byte makes a new edge. */
    nm_irq_bus *bus = &k->machine->irq;
    if (k->kbd_irq) nm_irq_lower(bus, KBD_IRQ);
    if (k->aux_irq) nm_irq_lower(bus, AUX_IRQ);
    k->kbd_irq = k->aux_irq = false;
    i8042_update_irq(k);
    return k->last_read;
}

static void i8042_data_port_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    (void)size;
    i8042 *k = opaque;
    k->last_write_command = false;
    i8042_data_write(k, (uint8_t)value);
}

static uint32_t i8042_status_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    return i8042_status(opaque);
}

static void i8042_command_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    (void)size;
    i8042 *k = opaque;
    k->last_write_command = true;
    i8042_command(k, (uint8_t)value);
}

static const nm_io_ops i8042_data_ops = {i8042_data_read, i8042_data_port_write, NULL};
static const nm_io_ops i8042_cmd_ops = {i8042_status_read, i8042_command_write, NULL};

/* After reset the command byte is what a BIOS leaves: both interrupts on,
 * system flag set, scancode translation on. */
static void i8042_reset(void *opaque)
{
    i8042 *k = opaque;
    memset(k->ram, 0, sizeof k->ram);
    k->ram[0] = CTR_KBD_INT | CTR_AUX_INT | CTR_SYS | CTR_TRANSLATE;
    k->pending_command = 0;
    k->last_write_command = false;
    k->queue_head = k->queue_count = 0;
    k->kbd_pending = 0;
    k->kbd_last = 0;
    k->kbd_set = 2;
    k->kbd_enabled = true;
    i8042_update_irq(k);
}

static void i8042_destroy(void *opaque);

static void *i8042_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    i8042 *k = g_new0(i8042, 1);
    k->machine = m;
    k->claim_data = nm_ioport_claim(m->io, 0x60, 1, &i8042_data_ops, k, "i8042", NULL);
    k->claim_cmd = nm_ioport_claim(m->io, 0x64, 1, &i8042_cmd_ops, k, "i8042", NULL);
    if (!k->claim_data || !k->claim_cmd) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: ports 0x60/0x64 are already taken (one i8042 per machine)",
                    cfg ? cfg->origin : "i8042");
        i8042_destroy(k);
        return NULL;
    }
    i8042_reset(k);
    return k;
}

static void i8042_destroy(void *opaque)
{
    i8042 *k = opaque;
    nm_irq_bus *bus = &k->machine->irq;
    if (k->kbd_irq) nm_irq_lower(bus, KBD_IRQ);
    if (k->aux_irq) nm_irq_lower(bus, AUX_IRQ);
    nm_ioport_release(k->machine->io, k->claim_data);
    nm_ioport_release(k->machine->io, k->claim_cmd);
    g_free(k);
}

static void i8042_report(void *opaque, nm_report *r)
{
    i8042 *k = opaque;
    nm_report_u64(r, "commands", k->commands);
    nm_report_u64(r, "device_bytes_unanswered", k->naks);
    nm_report_u64(r, "resets", k->resets);
    nm_report_u64(r, "keyboard_commands", k->kbd_commands);
    nm_report_u64(r, "keys", k->keys_in);
    nm_report_u64(r, "keys_dropped", k->keys_dropped);
}

static void i8042_snapshot(void *opaque, nm_snap *s)
{
    i8042 *k = opaque;
    nm_snap_bytes(s, "ram", k->ram, sizeof k->ram);
    nm_snap_u8(s, "pending_command", &k->pending_command);
    nm_snap_bool(s, "last_write_command", &k->last_write_command);
    nm_snap_u8(s, "last_read", &k->last_read);
    for (unsigned j = 0; j < OUTPUT_QUEUE; j++) {
        nm_snap_push(s, "queue%u", j);
        nm_snap_u8(s, "value", &k->queue[j].value);
        nm_snap_bool(s, "aux", &k->queue[j].aux);
        nm_snap_bool(s, "timeout", &k->queue[j].timeout);
        nm_snap_pop(s);
    }
    nm_snap_uint(s, "queue_head", &k->queue_head);
    nm_snap_uint(s, "queue_count", &k->queue_count);
    nm_snap_check(s, k->queue_head < OUTPUT_QUEUE && k->queue_count <= OUTPUT_QUEUE, "queue_head");
    nm_snap_bool(s, "kbd_irq", &k->kbd_irq);
    nm_snap_bool(s, "aux_irq", &k->aux_irq);
    nm_snap_u64(s, "commands", &k->commands);
    nm_snap_u64(s, "naks", &k->naks);
    nm_snap_u64(s, "resets", &k->resets);
    nm_snap_u8(s, "kbd_pending", &k->kbd_pending);
    nm_snap_u8(s, "kbd_last", &k->kbd_last);
    nm_snap_u8(s, "kbd_set", &k->kbd_set);
    nm_snap_bool(s, "kbd_enabled", &k->kbd_enabled);
    nm_snap_u64(s, "kbd_commands", &k->kbd_commands);
    nm_snap_u64(s, "keys_in", &k->keys_in);
    nm_snap_u64(s, "keys_dropped", &k->keys_dropped);
}

static const char *const i8042_keys[] = {NULL};

const nm_device_class nm_i8042_class = {
    .name = "i8042",
    .help = "8042 keyboard controller (0x60/0x64) with an AT keyboard (IRQ 1), no mouse",
    .keys = i8042_keys,
    .create = i8042_create,
    .reset = i8042_reset,
    .destroy = i8042_destroy,
    .report = i8042_report,
    .snapshot = i8042_snapshot,
    .snapshot_version = 1,
};
