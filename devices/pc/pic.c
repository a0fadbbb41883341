/* Intel 8259A programmable interrupt controllers, the PC/AT pair: master at
 * 0x20/0x21, slave at 0xA0/0xA1 cascaded on master IR2, and the PIIX-style
 * edge/level control registers (ELCR) at 0x4D0/0x4D1.
 *
 * Inputs are the machine's IRQ lines 0-15 (line 2 is the ISA bus's IRQ2
 * pin, which the AT routes to slave IR1 = IRQ 9).  The master's INT output
 * drives the CPU's INTR; the CPU's interrupt-acknowledge cycle is
 * m->intc.acknowledge, which returns the vector.
 *
 * Triggering (8259A datasheet, "Edge and Level Triggered Modes"): a level
 * line's IRR bit follows the line.  An edge line's IRR bit is set by the
 * rising edge and stays set until acknowledged even if the line drops
 * before INTA (the chip would give a default IR7 there; devices here pulse
 * their lines, as the PIT does, so the request is latched).  An INTA that
 * finds no request gives the spurious IR7 vector of that chip without
 * setting its ISR bit (IRQ 7, or IRQ 15 with master ISR2 set). */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define PIC_MASTER 0
#define PIC_SLAVE  1
#define CASCADE_IR 2

typedef struct pic_chip {
    uint8_t irr, isr, imr;
    uint8_t input_levels;                  /* current IR pin levels */
    uint8_t elcr;                          /* per-line level triggering (ELCR) */
    uint8_t elcr_writable;                 /* lines whose trigger mode can be changed */
    uint8_t vector_base;                   /* ICW2, T7-T3 */
    uint8_t icw3;                          /* master: slaves bitmap; slave: its id */
    uint8_t lowest_priority;               /* the IR with the lowest priority (7 after init) */
    uint8_t init_next;                     /* next ICW expected on the data port (2..4), 0: none */
    bool icw4_expected, single, level_all; /* ICW1 IC4, SNGL, LTIM */
    bool auto_eoi, rotate_on_auto_eoi, special_fully_nested, special_mask;
    bool read_isr;     /* OCW3 RR/RIS: command port reads ISR (else IRR) */
    bool poll_pending; /* OCW3 P: the next read is a poll */
} pic_chip;

typedef struct pic {
    nm_machine *machine;
    pic_chip chip[2];
    nm_io_claim *claim_master, *claim_slave, *claim_elcr;
    uint64_t delivered[16];
    uint64_t spurious[2]; /* IRQ 7, IRQ 15 */
    uint64_t acknowledges;
} pic;

static bool line_is_level(const pic_chip *c, unsigned ir)
{
    return c->level_all || ((c->elcr >> ir) & 1);
}

/* Priority rank of IR `ir`: 0 is the highest (8259A "Priority Resolver";
 * rotation moves the lowest priority, the highest is the one after it). */
static unsigned priority_rank(const pic_chip *c, unsigned ir)
{
    return (ir - c->lowest_priority - 1) & 7;
}

/* The IR of the highest priority set in `bits`, or -1. */
static int highest_priority_ir(const pic_chip *c, uint8_t bits)
{
    if (!bits) return -1;
    for (unsigned rank = 0; rank < 8; rank++) {
        unsigned ir = (c->lowest_priority + 1 + rank) & 7;
        if ((bits >> ir) & 1) return (int)ir;
    }
    return -1;
}

/* The IR this chip would present at INTA now, or -1 (INT output low). */
static int chip_pending_ir(const pic_chip *c, bool is_master)
{
    int ir = highest_priority_ir(c, c->irr & ~c->imr);
    if (ir < 0) return -1;
    uint8_t in_service = c->isr;
    /* Special mask mode: masked in-service levels do not inhibit others. */
    if (c->special_mask) in_service &= ~c->imr;
    /* Special fully nested mode: the cascade's own ISR bit does not block
     * higher-priority requests from the same slave. */
    if (is_master && c->special_fully_nested) in_service &= ~(1u << CASCADE_IR);
    int serving = highest_priority_ir(c, in_service);
    if (serving >= 0 && priority_rank(c, (unsigned)ir) >= priority_rank(c, (unsigned)serving))
        return -1;
    return ir;
}

/* Recomputes the cascade input and the CPU's INTR. */
static void pic_update(pic *p)
{
    pic_chip *master = &p->chip[PIC_MASTER];
    bool slave_int = chip_pending_ir(&p->chip[PIC_SLAVE], false) >= 0;
    /* The slave's INT is wired to master IR2 as a level. */
    if (slave_int) {
        master->input_levels |= 1u << CASCADE_IR;
        master->irr |= 1u << CASCADE_IR;
    } else {
        master->input_levels &= ~(1u << CASCADE_IR);
        master->irr &= ~(1u << CASCADE_IR);
    }
    nm_machine_set_intr(p->machine, chip_pending_ir(master, true) >= 0);
}

static void chip_set_input(pic_chip *c, unsigned ir, bool level)
{
    uint8_t bit = 1u << ir;
    bool was = c->input_levels & bit;
    if (level)
        c->input_levels |= bit;
    else
        c->input_levels &= ~bit;
    if (line_is_level(c, ir)) {
        if (level)
            c->irr |= bit;
        else
            c->irr &= ~bit;
    } else if (level && !was) {
        c->irr |= bit;
    }
}

static void pic_irq_listener(void *opaque, unsigned line, bool level)
{
    pic *p = opaque;
    if (line >= 16) return; /* not ISA lines: another controller's */
    if (line == 2 || line == 9) {
        /* ISA IRQ2 and IRQ9 share slave IR1 (the AT's IRQ2 redirection). */
        const nm_irq_bus *bus = &p->machine->irq;
        level = nm_irq_level(bus, 2) || nm_irq_level(bus, 9);
        chip_set_input(&p->chip[PIC_SLAVE], 1, level);
    } else if (line < 8) {
        chip_set_input(&p->chip[PIC_MASTER], line, level);
    } else {
        chip_set_input(&p->chip[PIC_SLAVE], line - 8, level);
    }
    pic_update(p);
}

/* The INTA bookkeeping on one chip for IR `ir`. */
static void chip_acknowledge(pic_chip *c, unsigned ir)
{
    if (c->auto_eoi) {
        if (c->rotate_on_auto_eoi) c->lowest_priority = (uint8_t)ir;
    } else {
        c->isr |= 1u << ir;
    }
    if (!line_is_level(c, ir)) c->irr &= ~(1u << ir);
}

static uint8_t pic_acknowledge(void *opaque)
{
    pic *p = opaque;
    pic_chip *master = &p->chip[PIC_MASTER], *slave = &p->chip[PIC_SLAVE];
    p->acknowledges++;
    int ir = chip_pending_ir(master, true);
    uint8_t vector;
    if (ir < 0) {
        /* The request went away before INTA: default IR7, no ISR bit. */
        p->spurious[0]++;
        nm_debug(PIC, "spurious IRQ 7");
        vector = master->vector_base | 7;
    } else if (ir == CASCADE_IR && !master->single) {
        chip_acknowledge(master, CASCADE_IR);
        int sir = chip_pending_ir(slave, false);
        if (sir < 0) {
            p->spurious[1]++;
            nm_debug(PIC, "spurious IRQ 15");
            vector = slave->vector_base | 7;
        } else {
            chip_acknowledge(slave, (unsigned)sir);
            p->delivered[8 + sir]++;
            vector = slave->vector_base | (uint8_t)sir;
        }
    } else {
        chip_acknowledge(master, (unsigned)ir);
        p->delivered[ir]++;
        vector = master->vector_base | (uint8_t)ir;
    }
    nm_trace(PIC, "INTA -> vector 0x%02x", vector);
    pic_update(p);
    return vector;
}

/* ICW1 (8259A datasheet, "Initialization Command Words"): edge sense reset,
 * IMR cleared, IR7 lowest priority, special mask cleared, IRR selected for
 * reads; ICW4 functions cleared if IC4 = 0. */
static void chip_icw1(pic_chip *c, uint8_t value)
{
    c->icw4_expected = value & 0x01;
    c->single = value & 0x02;
    c->level_all = value & 0x08;
    if (!(value & 0x01)) {
        c->auto_eoi = false;
        c->special_fully_nested = false;
    }
    c->imr = 0;
    c->isr = 0;
    c->irr = 0;
    for (unsigned ir = 0; ir < 8; ir++)
        if (line_is_level(c, ir) && ((c->input_levels >> ir) & 1)) c->irr |= 1u << ir;
    c->lowest_priority = 7;
    c->special_mask = false;
    c->read_isr = false;
    c->poll_pending = false;
    c->rotate_on_auto_eoi = false;
    c->init_next = 2;
}

static void chip_data_write(pic_chip *c, uint8_t value, const char *name)
{
    switch (c->init_next) {
    case 2: /* ICW2: vector T7-T3 (x86 mode ignores the low bits) */
        c->vector_base = value & 0xf8;
        c->init_next = !c->single ? 3 : c->icw4_expected ? 4 : 0;
        break;
    case 3: /* ICW3: cascade wiring, fixed on the PC board */
        c->icw3 = value;
        c->init_next = c->icw4_expected ? 4 : 0;
        break;
    case 4: /* ICW4: uPM, AEOI, M/S, BUF, SFNM */
        if (!(value & 0x01))
            nm_dev_warn(PIC, c, "%s: ICW4 selects 8080 mode; x86 mode assumed", name);
        c->auto_eoi = value & 0x02;
        c->special_fully_nested = value & 0x10;
        c->init_next = 0;
        break;
    default: /* OCW1: the mask */ c->imr = value; break;
    }
}

/* OCW2: R, SL, EOI and the level L2-L0 (datasheet, "Operation Command
 * Words" and "The End of Interrupt"). */
static void chip_ocw2(pic_chip *c, uint8_t value, const char *name)
{
    unsigned level = value & 7;
    int serving = highest_priority_ir(c, c->isr);
    switch (value >> 5) {
    case 0: c->rotate_on_auto_eoi = false; break;
    case 4: c->rotate_on_auto_eoi = true; break;
    case 1: /* non-specific EOI */
        if (serving >= 0) c->isr &= ~(1u << serving);
        break;
    case 5: /* rotate on non-specific EOI */
        if (serving >= 0) {
            c->isr &= ~(1u << serving);
            c->lowest_priority = (uint8_t)serving;
        }
        break;
    case 3: c->isr &= ~(1u << level); break; /* specific EOI */
    case 7:                                  /* rotate on specific EOI */
        c->isr &= ~(1u << level);
        c->lowest_priority = (uint8_t)level;
        break;
    case 6: c->lowest_priority = (uint8_t)level; break; /* set priority */
    case 2: nm_debug(PIC, "%s: OCW2 no-op", name); break;
    }
}

static void chip_ocw3(pic_chip *c, uint8_t value)
{
    if (value & 0x40) c->special_mask = value & 0x20; /* ESMM: SMM applies */
    if (value & 0x04) c->poll_pending = true;
    if (value & 0x02) c->read_isr = value & 0x01;
}

static void chip_command_write(pic_chip *c, uint8_t value, const char *name)
{
    if (value & 0x10) {
        if (value & 0x04) nm_debug(PIC, "%s: ICW1 ADI ignored (x86 mode)", name);
        chip_icw1(c, value);
    } else if (value & 0x08) {
        chip_ocw3(c, value);
    } else {
        chip_ocw2(c, value, name);
    }
}

/* A poll (OCW3 P=1): the read acts as INTA and returns 0x80|level, or 0. */
static uint8_t pic_poll(pic *p, unsigned which)
{
    pic_chip *c = &p->chip[which];
    c->poll_pending = false;
    int ir = chip_pending_ir(c, which == PIC_MASTER);
    if (ir < 0) return 0x00;
    chip_acknowledge(c, (unsigned)ir);
    if (which == PIC_MASTER && ir != CASCADE_IR) p->delivered[ir]++;
    if (which == PIC_SLAVE) p->delivered[8 + ir]++;
    pic_update(p);
    return 0x80 | (uint8_t)ir;
}

static uint32_t pic_chip_read(pic *p, unsigned which, uint32_t offset)
{
    pic_chip *c = &p->chip[which];
    if (c->poll_pending) return pic_poll(p, which);
    if (offset == 0) return c->read_isr ? c->isr : c->irr;
    return c->imr;
}

static void pic_chip_write(pic *p, unsigned which, uint32_t offset, uint32_t value)
{
    pic_chip *c = &p->chip[which];
    const char *name = which == PIC_MASTER ? "master" : "slave";
    if (offset == 0)
        chip_command_write(c, (uint8_t)value, name);
    else
        chip_data_write(c, (uint8_t)value, name);
    pic_update(p);
}

static uint32_t pic_master_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    return pic_chip_read(opaque, PIC_MASTER, offset);
}

static void pic_master_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    pic_chip_write(opaque, PIC_MASTER, offset, value);
}

static uint32_t pic_slave_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    return pic_chip_read(opaque, PIC_SLAVE, offset);
}

static void pic_slave_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    pic_chip_write(opaque, PIC_SLAVE, offset, value);
}

/* ELCR (Intel PIIX datasheet, "ELCR1/ELCR2"): IRQ 0, 1, 2, 8 and 13 are
 * always edge triggered; their bits read 0. */
static uint32_t pic_elcr_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    pic *p = opaque;
    return p->chip[offset].elcr;
}

static void pic_elcr_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    pic *p = opaque;
    pic_chip *c = &p->chip[offset];
    c->elcr = (uint8_t)value & c->elcr_writable;
    /* Level lines' requests follow their pins from now on. */
    for (unsigned ir = 0; ir < 8; ir++) {
        if (!line_is_level(c, ir)) continue;
        if ((c->input_levels >> ir) & 1)
            c->irr |= 1u << ir;
        else
            c->irr &= ~(1u << ir);
    }
    pic_update(p);
}

static const nm_io_ops pic_master_ops = {pic_master_read, pic_master_write, NULL};
static const nm_io_ops pic_slave_ops = {pic_slave_read, pic_slave_write, NULL};
static const nm_io_ops pic_elcr_ops = {pic_elcr_read, pic_elcr_write, NULL};

/* Power-on state.  The datasheet leaves it undefined until ICW1; we start
 * as a BIOS leaves it (vectors 0x08/0x70, everything masked), so a boot
 * ROM that forgets to initialise gets no surprise interrupts. */
static void pic_reset(void *opaque)
{
    pic *p = opaque;
    for (unsigned which = 0; which < 2; which++) {
        pic_chip *c = &p->chip[which];
        uint8_t inputs = c->input_levels;
        *c = (pic_chip){0};
        c->input_levels = inputs;
        c->imr = 0xff;
        c->lowest_priority = 7;
        c->vector_base = which == PIC_MASTER ? 0x08 : 0x70;
        c->icw3 = which == PIC_MASTER ? 1u << CASCADE_IR : CASCADE_IR;
        c->elcr_writable = which == PIC_MASTER ? 0xf8 : 0xde;
    }
    pic_update(p);
}

static void pic_destroy(void *opaque);

static void *pic_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    (void)cfg;
    pic *p = g_new0(pic, 1);
    p->machine = m;
    p->claim_master = nm_ioport_claim(m->io, 0x20, 2, &pic_master_ops, p, "pic-master", NULL);
    p->claim_slave = nm_ioport_claim(m->io, 0xa0, 2, &pic_slave_ops, p, "pic-slave", NULL);
    p->claim_elcr = nm_ioport_claim(m->io, 0x4d0, 2, &pic_elcr_ops, p, "pic-elcr", NULL);
    if (!p->claim_master || !p->claim_slave || !p->claim_elcr) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: ports 0x20/0xa0/0x4d0 are already taken (one PIC pair per machine)",
                    cfg ? cfg->origin : "pic");
        pic_destroy(p);
        return NULL;
    }
    if (m->irq.listener) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: the machine already has an interrupt controller",
                    cfg ? cfg->origin : "pic");
        pic_destroy(p);
        return NULL;
    }
    for (unsigned line = 0; line < 16; line++) {
        unsigned which = line < 8 ? PIC_MASTER : PIC_SLAVE;
        if (line == 2) continue;
        if (nm_irq_level(&m->irq, line)) p->chip[which].input_levels |= 1u << (line & 7);
    }
    if (nm_irq_level(&m->irq, 2)) p->chip[PIC_SLAVE].input_levels |= 1u << 1;
    nm_irq_set_listener(&m->irq, pic_irq_listener, p);
    m->intc.acknowledge = pic_acknowledge;
    m->intc.opaque = p;
    pic_reset(p);
    return p;
}

static void pic_destroy(void *opaque)
{
    pic *p = opaque;
    nm_machine *m = p->machine;
    if (m->intc.opaque == p) {
        m->intc.acknowledge = NULL;
        m->intc.opaque = NULL;
        nm_irq_set_listener(&m->irq, NULL, NULL);
        nm_machine_set_intr(m, false);
    }
    nm_ioport_release(m->io, p->claim_master);
    nm_ioport_release(m->io, p->claim_slave);
    nm_ioport_release(m->io, p->claim_elcr);
    g_free(p);
}

static void pic_report(void *opaque, nm_report *r)
{
    pic *p = opaque;
    nm_report_u64(r, "acknowledges", p->acknowledges);
    for (unsigned line = 0; line < 16; line++) {
        if (!p->delivered[line]) continue;
        char key[32];
        g_snprintf(key, sizeof key, "irq%u_delivered", line);
        nm_report_u64(r, key, p->delivered[line]);
    }
    nm_report_u64(r, "spurious_irq7", p->spurious[0]);
    nm_report_u64(r, "spurious_irq15", p->spurious[1]);
}

static void pic_snapshot(void *opaque, nm_snap *s)
{
    pic *p = opaque;
    for (unsigned k = 0; k < 2; k++) {
        pic_chip *c = &p->chip[k];
        nm_snap_push(s, "%s", k == PIC_MASTER ? "master" : "slave");
        nm_snap_u8(s, "irr", &c->irr);
        nm_snap_u8(s, "isr", &c->isr);
        nm_snap_u8(s, "imr", &c->imr);
        nm_snap_u8(s, "input_levels", &c->input_levels);
        nm_snap_u8(s, "elcr", &c->elcr);
        nm_snap_u8(s, "elcr_writable", &c->elcr_writable);
        nm_snap_u8(s, "vector_base", &c->vector_base);
        nm_snap_u8(s, "icw3", &c->icw3);
        nm_snap_u8(s, "lowest_priority", &c->lowest_priority);
        nm_snap_u8(s, "init_next", &c->init_next);
        nm_snap_bool(s, "icw4_expected", &c->icw4_expected);
        nm_snap_bool(s, "single", &c->single);
        nm_snap_bool(s, "level_all", &c->level_all);
        nm_snap_bool(s, "auto_eoi", &c->auto_eoi);
        nm_snap_bool(s, "rotate_on_auto_eoi", &c->rotate_on_auto_eoi);
        nm_snap_bool(s, "special_fully_nested", &c->special_fully_nested);
        nm_snap_bool(s, "special_mask", &c->special_mask);
        nm_snap_bool(s, "read_isr", &c->read_isr);
        nm_snap_bool(s, "poll_pending", &c->poll_pending);
        nm_snap_check(s, c->lowest_priority < 8 && c->init_next <= 4, "lowest_priority");
        nm_snap_pop(s);
    }
    nm_snap_u64s(s, "delivered", p->delivered, 16);
    nm_snap_u64s(s, "spurious", p->spurious, 2);
    nm_snap_u64(s, "acknowledges", &p->acknowledges);
}

static const char *const pic_keys[] = {NULL};

const nm_device_class nm_pic_class = {
    .name = "pic",
    .help = "8259A master/slave interrupt controllers with ELCR (0x20, 0xa0, 0x4d0)",
    .keys = pic_keys,
    .create = pic_create,
    .reset = pic_reset,
    .destroy = pic_destroy,
    .report = pic_report,
    .snapshot = pic_snapshot,
    .snapshot_version = 1,
};
