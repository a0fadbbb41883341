/* Intel 8254 programmable interval timer (0x40-0x43) and system control
 * port B (0x61), which gates channel 2 and reads back its OUT.
 *
 * Time: the PIT clock is 105/88 MHz (1.193181818... MHz).  Nothing ticks:
 * the PIT clock count at virtual time t ns is floor(t * 105 / 88000),
 * computed from absolute time, and a channel keeps the clock count at which
 * its counting element held the initial count (`start_tick`); its count and
 * OUT are functions of the ticks since then.  Channel 0's OUT rising edges
 * are nm_timer events at the exact time of their PIT clock, each a pulse on
 * IRQ 0 (raise, then lower).
 *
 * Modes (8254 datasheet, "Modes of Operation"): a count written is loaded
 * into the counting element on the next CLK pulse.  Modes 0-5 are modelled;
 * a new count written while a mode 2/3 counter runs restarts it on the next
 * CLK (the chip would wait for the end of the current period). */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define PIT_CHANNELS 3
#define PIT_IRQ      0
/* DRAM refresh request (port 0x61 bit 4) toggles each period of PIT
 * channel 1 programmed with 18 as the BIOS does: 18 / 1.193182 MHz =
 * 15.085 us. */
#define REFRESH_TICKS 18

typedef struct pit_channel {
    uint8_t mode;   /* 0-5 */
    uint8_t access; /* RW1 RW0: 1 LSB, 2 MSB, 3 LSB then MSB */
    bool bcd;
    bool programmed;    /* a control word has been written */
    bool gate;          /* GATE input level */
    uint32_t reload;    /* initial count, 1..65536 (10000 in BCD) */
    bool count_written; /* a count was written since the control word */
    bool counting;      /* counting element running from start_tick */
    bool paused;        /* modes 0/4 with GATE low: count held */
    uint64_t start_tick;
    uint64_t paused_elapsed;
    uint16_t held_count; /* what a read returns when not counting */
    bool mode0_out_low;  /* mode 0: first byte of a 2-byte count written */
    bool write_msb_next; /* LSB-then-MSB write flip-flop */
    uint8_t write_lsb;
    bool read_msb_next; /* LSB-then-MSB read flip-flop (unlatched reads) */
    bool count_latched;
    bool latch_msb_next;
    uint16_t latched_count;
    bool status_latched;
    uint8_t latched_status;
} pit_channel;

typedef struct pit {
    nm_machine *machine;
    nm_io_claim *claim_pit, *claim_port61;
    pit_channel ch[PIT_CHANNELS];
    uint8_t port61; /* bits 0-3 as written */
    nm_timer irq_timer;
    uint64_t irq_edge_tick; /* the PIT clock of the pending channel-0 edge */
    uint64_t irq0_pulses;
    uint64_t reprograms;
} pit;

/* ---- time ------------------------------------------------------------- */

/* PIT clocks elapsed at virtual time ns: floor(ns * 105 / 88000), split so
 * that it never overflows. */
static uint64_t pit_ticks_at_ns(uint64_t ns)
{
    return (ns / 88000) * 105 + (ns % 88000) * 105 / 88000;
}

/* The first ns at which `tick` PIT clocks have elapsed: ceil(tick*88000/105). */
static uint64_t pit_ns_of_tick(uint64_t tick)
{
    return (tick / 105) * 88000 + ((tick % 105) * 88000 + 104) / 105;
}

static uint64_t pit_now_tick(const pit *p)
{
    return pit_ticks_at_ns(nm_clock_now_ns(&p->machine->clock));
}

/* ---- counter state as a function of time ------------------------------ */

static uint32_t counter_modulus(const pit_channel *c)
{
    return c->bcd ? 10000 : 65536;
}

/* Clocks counted since the counting element was loaded, or -1 if it is not
 * counting (not loaded yet, or waiting for a trigger). */
static int64_t channel_elapsed(const pit_channel *c, uint64_t now)
{
    if (!c->counting) return -1;
    if (c->paused) return (int64_t)c->paused_elapsed;
    if (now < c->start_tick) return -1;
    return (int64_t)(now - c->start_tick);
}

/* The counting element's value (binary, 0..65535 / 0..9999). */
static uint32_t channel_count(const pit_channel *c, uint64_t now)
{
    int64_t e = channel_elapsed(c, now);
    if (e < 0) return c->held_count;
    uint64_t n = c->reload, m = counter_modulus(c), pos;
    switch (c->mode) {
    case 2: /* N, N-1, ..., 1, N, ... */ return (uint32_t)((n - (uint64_t)e % n) % m);
    case 3: { /* decrements by two through each half period */
        uint64_t high = (n + 1) / 2;
        pos = (uint64_t)e % n;
        if (pos >= high) pos -= high;
        return (uint32_t)(((n & ~1ull) - 2 * pos) % m);
    }
    default: /* 0, 1, 4, 5: down from N and wraps around */
        return (uint32_t)((n + m - (uint64_t)e % m) % m);
    }
}

static bool channel_out(const pit_channel *c, uint64_t now)
{
    if (!c->programmed) return false;
    int64_t e = channel_elapsed(c, now);
    uint64_t n = c->reload;
    switch (c->mode) {
    case 0: /* low from the control word until terminal count */
        return !c->mode0_out_low && e >= 0 && (uint64_t)e >= n;
    case 1: /* low from the trigger until terminal count */ return e < 0 || (uint64_t)e >= n;
    case 2: /* low for the one clock at count 1 */
        return !(e >= 0 && c->gate && (uint64_t)e % n == n - 1);
    case 3: /* high for ceil(N/2), low for floor(N/2) */
        return e < 0 || !c->gate || (uint64_t)e % n < (n + 1) / 2;
    default: /* 4, 5: low for the one clock at terminal count */
        return !(e >= 0 && (uint64_t)e == n);
    }
}

/* The first OUT rising edge strictly after clock `after`, or UINT64_MAX:
 * modes 0/1 at N, 2/3 at every multiple of N, 4/5 at N+1 (elapsed clocks).
 * Modes 2/3 with N = 1 are illegal (datasheet) and give no edges here. */
static uint64_t channel_next_edge(const pit_channel *c, uint64_t after)
{
    if (!c->counting || c->paused || c->mode0_out_low) return UINT64_MAX;
    uint64_t n = c->reload, edge;
    switch (c->mode) {
    case 2:
    case 3: {
        if (n < 2) return UINT64_MAX;
        uint64_t e = after >= c->start_tick ? after - c->start_tick : 0;
        return c->start_tick + (e / n + 1) * n;
    }
    case 0:
    case 1: edge = c->start_tick + n; break;
    default: edge = c->start_tick + n + 1; break;
    }
    return edge > after ? edge : UINT64_MAX;
}

/* ---- channel 0 interrupt ---------------------------------------------- */

static void pit_schedule_irq(pit *p)
{
    nm_clock *clock = &p->machine->clock;
    uint64_t edge = channel_next_edge(&p->ch[0], pit_now_tick(p));
    if (edge == UINT64_MAX) {
        nm_timer_cancel(clock, &p->irq_timer);
        return;
    }
    p->irq_edge_tick = edge;
    nm_timer_at_ns(clock, &p->irq_timer, pit_ns_of_tick(edge));
}

static void pit_irq_event(void *opaque, uint64_t late_cycles)
{
    (void)late_cycles;
    pit *p = opaque;
    nm_irq_bus *irq = &p->machine->irq;
    p->irq0_pulses++;
    nm_irq_raise(irq, PIT_IRQ);
    nm_irq_lower(irq, PIT_IRQ);
    /* The next edge from the one that fired (not from now): no drift. */
    uint64_t edge = channel_next_edge(&p->ch[0], p->irq_edge_tick);
    if (edge == UINT64_MAX) return;
    p->irq_edge_tick = edge;
    nm_timer_at_ns(&p->machine->clock, &p->irq_timer, pit_ns_of_tick(edge));
}

/* ---- programming ------------------------------------------------------ */

static uint32_t bcd_to_binary(uint32_t v)
{
    return ((v >> 12) & 0xf) * 1000 + ((v >> 8) & 0xf) * 100 + ((v >> 4) & 0xf) * 10 + (v & 0xf);
}

static uint32_t binary_to_bcd(uint32_t v)
{
    return ((v / 1000) % 10) << 12 | ((v / 100) % 10) << 8 | ((v / 10) % 10) << 4 | v % 10;
}

/* Stops counting, remembering the value reads will return. */
static void channel_stop(pit_channel *c, uint64_t now)
{
    c->held_count = (uint16_t)channel_count(c, now);
    c->counting = false;
    c->paused = false;
}

/* Starts the counting element from the initial count on the next CLK. */
static void channel_start(pit_channel *c, uint64_t now)
{
    c->counting = true;
    c->paused = false;
    c->start_tick = now + 1;
    /* Modes 0/4 hold the count while GATE is low. */
    if (!c->gate && (c->mode == 0 || c->mode == 4)) {
        c->paused = true;
        c->paused_elapsed = 0;
    }
}

static void channel_load_count(pit *p, unsigned idx, uint32_t value)
{
    pit_channel *c = &p->ch[idx];
    uint64_t now = pit_now_tick(p);
    if (c->bcd) value = bcd_to_binary(value);
    if (value == 0 || value > counter_modulus(c)) {
        if (value) nm_debug(PIT, "channel %u: BCD count 0x%x out of range", idx, value);
        value = value ? value % counter_modulus(c) : 0;
        if (!value) value = counter_modulus(c);
    }
    channel_stop(c, now);
    c->reload = value;
    c->count_written = true;
    c->mode0_out_low = false;
    switch (c->mode) {
    case 1:
    case 5: /* wait for a GATE rising edge */ break;
    case 2:
    case 3: /* run while GATE is high */
        if (c->gate) channel_start(c, now);
        break;
    default: channel_start(c, now); break;
    }
    p->reprograms++;
    if (idx == 0) pit_schedule_irq(p);
}

static void channel_write(pit *p, unsigned idx, uint8_t value)
{
    pit_channel *c = &p->ch[idx];
    if (!c->programmed) {
        nm_debug(PIT, "channel %u: count written before a control word", idx);
        return;
    }
    switch (c->access) {
    case 1: channel_load_count(p, idx, value); break;
    case 2: channel_load_count(p, idx, (uint32_t)value << 8); break;
    default:
        if (!c->write_msb_next) {
            c->write_lsb = value;
            c->write_msb_next = true;
            /* Mode 0: the first byte stops the count and sets OUT low. */
            if (c->mode == 0) {
                channel_stop(c, pit_now_tick(p));
                c->mode0_out_low = true;
                if (idx == 0) pit_schedule_irq(p);
            }
        } else {
            c->write_msb_next = false;
            channel_load_count(p, idx, c->write_lsb | (uint32_t)value << 8);
        }
        break;
    }
}

static uint16_t channel_count_for_read(const pit_channel *c, uint64_t now)
{
    uint32_t v = channel_count(c, now);
    return (uint16_t)(c->bcd ? binary_to_bcd(v) : v);
}

static uint8_t channel_status(const pit_channel *c, uint64_t now)
{
    bool null_count = !c->count_written || channel_elapsed(c, now) < 0;
    return (uint8_t)(channel_out(c, now) << 7 | null_count << 6 | c->access << 4 | c->mode << 1 |
                     c->bcd);
}

static uint8_t channel_read(pit *p, unsigned idx)
{
    pit_channel *c = &p->ch[idx];
    if (c->status_latched) {
        c->status_latched = false;
        return c->latched_status;
    }
    uint16_t count;
    bool msb;
    if (c->count_latched) {
        count = c->latched_count;
        if (c->access == 3) {
            msb = c->latch_msb_next;
            c->latch_msb_next = !c->latch_msb_next;
            if (msb) c->count_latched = false;
        } else {
            msb = c->access == 2;
            c->count_latched = false;
        }
    } else {
        count = channel_count_for_read(c, pit_now_tick(p));
        if (c->access == 3) {
            msb = c->read_msb_next;
            c->read_msb_next = !c->read_msb_next;
        } else {
            msb = c->access == 2;
        }
    }
    return msb ? (uint8_t)(count >> 8) : (uint8_t)count;
}

static void channel_latch_count(pit_channel *c, uint64_t now)
{
    if (c->count_latched) return; /* a second latch is ignored until read */
    c->latched_count = channel_count_for_read(c, now);
    c->count_latched = true;
    c->latch_msb_next = false;
}

static void pit_control_word(pit *p, uint8_t value)
{
    unsigned select = value >> 6;
    uint64_t now = pit_now_tick(p);
    if (select == 3) {
        /* Read-back: bit 5 = 0 latch count, bit 4 = 0 latch status. */
        for (unsigned idx = 0; idx < PIT_CHANNELS; idx++) {
            if (!(value & (2u << idx))) continue;
            pit_channel *c = &p->ch[idx];
            if (!(value & 0x20)) channel_latch_count(c, now);
            if (!(value & 0x10) && !c->status_latched) {
                c->latched_status = channel_status(c, now);
                c->status_latched = true;
            }
        }
        return;
    }
    pit_channel *c = &p->ch[select];
    unsigned access = (value >> 4) & 3;
    if (access == 0) {
        channel_latch_count(c, now);
        return;
    }
    channel_stop(c, now);
    c->programmed = true;
    c->access = (uint8_t)access;
    c->mode = (value >> 1) & 7;
    if (c->mode > 5) c->mode -= 4; /* 6, 7 are 2, 3 */
    c->bcd = value & 1;
    c->count_written = false;
    c->mode0_out_low = false;
    c->write_msb_next = false;
    c->read_msb_next = false;
    c->count_latched = false;
    c->status_latched = false;
    if (select == 0) pit_schedule_irq(p);
}

static void channel_set_gate(pit *p, unsigned idx, bool gate)
{
    pit_channel *c = &p->ch[idx];
    if (c->gate == gate) return;
    uint64_t now = pit_now_tick(p);
    bool rising = gate;
    switch (c->mode) {
    case 0:
    case 4: /* GATE low holds the count */
        if (!c->counting) break;
        if (!gate) {
            int64_t e = channel_elapsed(c, now);
            c->paused_elapsed = e < 0 ? 0 : (uint64_t)e;
            c->paused = true;
        } else if (c->paused) {
            c->paused = false;
            c->start_tick = now + 1 - c->paused_elapsed;
        }
        break;
    case 1:
    case 5: /* a rising edge (re)triggers */
        if (rising && c->count_written) channel_start(c, now);
        break;
    default: /* 2, 3: low stops and forces OUT high; rising edge reloads */
        if (!c->count_written) break;
        if (rising)
            channel_start(c, now);
        else
            channel_stop(c, now);
        break;
    }
    c->gate = gate;
    if (idx == 0) pit_schedule_irq(p);
}

/* ---- ports ------------------------------------------------------------ */

static uint32_t pit_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    pit *p = opaque;
    if (offset == 3) return 0xff; /* the control word register is write-only */
    return channel_read(p, offset);
}

static void pit_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    pit *p = opaque;
    if (offset == 3)
        pit_control_word(p, (uint8_t)value);
    else
        channel_write(p, offset, (uint8_t)value);
}

/* Port 0x61 (IBM PC/AT technical reference, "System Control Port B"):
 * bit 0 timer 2 gate, bit 1 speaker data enable, bits 2-3 parity/channel
 * check enables (stored), bit 4 refresh detect, bit 5 timer 2 OUT, bits 6-7
 * parity/channel check status (never set here). */
static uint32_t port61_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    pit *p = opaque;
    uint64_t now = pit_now_tick(p);
    uint8_t v = p->port61 & 0x0f;
    if ((now / REFRESH_TICKS) & 1) v |= 0x10;
    if (channel_out(&p->ch[2], now)) v |= 0x20;
    return v;
}

static void port61_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    (void)size;
    pit *p = opaque;
    p->port61 = value & 0x0f;
    channel_set_gate(p, 2, value & 1);
}

static const nm_io_ops pit_ops = {pit_read, pit_write, NULL};
static const nm_io_ops port61_ops = {port61_read, port61_write, NULL};

/* After reset no channel is programmed (the BIOS programs them): nothing
 * counts and IRQ 0 stays quiet.  Gates of channels 0 and 1 are tied high. */
static void pit_reset(void *opaque)
{
    pit *p = opaque;
    nm_timer_cancel(&p->machine->clock, &p->irq_timer);
    for (unsigned idx = 0; idx < PIT_CHANNELS; idx++) {
        p->ch[idx] = (pit_channel){.gate = idx != 2, .reload = 65536, .access = 3};
    }
    p->port61 = 0;
}

static void pit_destroy(void *opaque);

static void *pit_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    pit *p = g_new0(pit, 1);
    p->machine = m;
    nm_timer_init(&p->irq_timer, pit_irq_event, p, "pit-irq0");
    p->claim_pit = nm_ioport_claim(m->io, 0x40, 4, &pit_ops, p, "pit", NULL);
    p->claim_port61 = nm_ioport_claim(m->io, 0x61, 1, &port61_ops, p, "port61", NULL);
    if (!p->claim_pit || !p->claim_port61) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: ports 0x40-0x43/0x61 are already taken (one PIT per machine)",
                    cfg ? cfg->origin : "pit");
        pit_destroy(p);
        return NULL;
    }
    pit_reset(p);
    return p;
}

static void pit_destroy(void *opaque)
{
    pit *p = opaque;
    nm_timer_cancel(&p->machine->clock, &p->irq_timer);
    nm_ioport_release(p->machine->io, p->claim_pit);
    nm_ioport_release(p->machine->io, p->claim_port61);
    g_free(p);
}

static void pit_report(void *opaque, nm_report *r)
{
    pit *p = opaque;
    nm_report_u64(r, "irq0_ticks", p->irq0_pulses);
    nm_report_u64(r, "counts_loaded", p->reprograms);
    nm_report_u64(r, "channel0_mode", p->ch[0].mode);
    nm_report_u64(r, "channel0_count", p->ch[0].reload);
}

static void pit_snapshot(void *opaque, nm_snap *s)
{
    pit *p = opaque;
    for (unsigned k = 0; k < PIT_CHANNELS; k++) {
        pit_channel *c = &p->ch[k];
        nm_snap_push(s, "ch%u", k);
        nm_snap_u8(s, "mode", &c->mode);
        nm_snap_u8(s, "access", &c->access);
        nm_snap_bool(s, "bcd", &c->bcd);
        nm_snap_bool(s, "programmed", &c->programmed);
        nm_snap_bool(s, "gate", &c->gate);
        nm_snap_u32(s, "reload", &c->reload);
        nm_snap_bool(s, "count_written", &c->count_written);
        nm_snap_bool(s, "counting", &c->counting);
        nm_snap_bool(s, "paused", &c->paused);
        nm_snap_u64(s, "start_tick", &c->start_tick);
        nm_snap_u64(s, "paused_elapsed", &c->paused_elapsed);
        nm_snap_u16(s, "held_count", &c->held_count);
        nm_snap_bool(s, "mode0_out_low", &c->mode0_out_low);
        nm_snap_bool(s, "write_msb_next", &c->write_msb_next);
        nm_snap_u8(s, "write_lsb", &c->write_lsb);
        nm_snap_bool(s, "read_msb_next", &c->read_msb_next);
        nm_snap_bool(s, "count_latched", &c->count_latched);
        nm_snap_bool(s, "latch_msb_next", &c->latch_msb_next);
        nm_snap_u16(s, "latched_count", &c->latched_count);
        nm_snap_bool(s, "status_latched", &c->status_latched);
        nm_snap_u8(s, "latched_status", &c->latched_status);
        /* The counter divides by its reload value. */
        nm_snap_check(s, c->mode < 6 && c->access <= 3 && c->reload >= 1 && c->reload <= 65536,
                      "reload");
        nm_snap_pop(s);
    }
    nm_snap_u8(s, "port61", &p->port61);
    nm_snap_timer(s, "irq_timer", &p->irq_timer);
    nm_snap_u64(s, "irq_edge_tick", &p->irq_edge_tick);
    nm_snap_u64(s, "irq0_pulses", &p->irq0_pulses);
    nm_snap_u64(s, "reprograms", &p->reprograms);
}

static const char *const pit_keys[] = {NULL};

const nm_device_class nm_pit_class = {
    .name = "pit",
    .help = "8254 interval timer (0x40-0x43, IRQ 0) and system control port B (0x61)",
    .keys = pit_keys,
    .create = pit_create,
    .reset = pit_reset,
    .destroy = pit_destroy,
    .report = pit_report,
    .snapshot = pit_snapshot,
    .snapshot_version = 1,
};
