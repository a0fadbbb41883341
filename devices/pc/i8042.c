/* Intel 8042 keyboard controller (data 0x60, status/command 0x64) with no
 * keyboard and no mouse behind it.
 *
 * The controller answers its own commands at once (IBF never stays set, so
 * nothing waits for real time): command byte read/write, self-test,
 * interface tests, port enable/disable, output port (A20, reset), the AUX
 * loopback Linux uses to test IRQ 12, and pulse-reset.  A byte sent to the
 * keyboard or the mouse gets the answer of an empty port: 0xFE with the
 * timeout status bit (IBM PC AT technical reference, "Keyboard Controller",
 * status bit 6), so Linux's atkbd/psmouse probes fail quickly and quietly.
 *
 * Output-buffer bytes from the keyboard side raise IRQ 1 and from the AUX
 * side IRQ 12 when enabled in the command byte; the line drops when the
 * byte is read. */
#include <glib.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/log.h"
#include "emu/machine.h"

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
        k->naks++; /* to the keyboard: nobody there */
        queue_byte(k, REPLY_NAK, false, true);
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

static const nm_io_ops i8042_data_ops = {i8042_data_read, i8042_data_port_write};
static const nm_io_ops i8042_cmd_ops = {i8042_status_read, i8042_command_write};

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
}

static const char *const i8042_keys[] = {NULL};

const nm_device_class nm_i8042_class = {
    .name = "i8042",
    .help = "8042 keyboard controller (0x60/0x64), no keyboard or mouse attached",
    .keys = i8042_keys,
    .create = i8042_create,
    .reset = i8042_reset,
    .destroy = i8042_destroy,
    .report = i8042_report,
};
