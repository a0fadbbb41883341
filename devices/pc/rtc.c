/* Motorola MC146818A real-time clock and CMOS RAM (index 0x70, data 0x71,
 * IRQ 8).
 *
 * Time is the configuration's epoch (m->settings.rtc_epoch, seconds since
 * 1970, UTC) plus virtual time: never the host clock.  The time registers
 * are computed when read.  Updates (one a second) end at exact virtual
 * second boundaries; UIP is set from 244 us before the update cycle
 * begins until it ends 1984 us later (datasheet, Register A and Table 6),
 * i.e. for the 2228 us before the registers show the next second.
 *
 * Interrupts (Register C): UF at every update, AF when the alarm matches
 * at an update (0xC0-0xFF in an alarm byte is "don't care"), PF at the
 * periodic rate of RS3-RS0.  IRQ 8 is high while IRQF is set and drops
 * when Register C is read. */
#include <glib.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define RTC_IRQ   8
#define CMOS_SIZE 128
#define NS_PER_S  1000000000ull
/* tBUC + tUC for the 32.768 kHz time base (Table 6). */
#define UIP_WINDOW_NS (244000ull + 1984000ull)

enum {
    REG_SECONDS = 0x00,
    REG_SECONDS_ALARM = 0x01,
    REG_MINUTES = 0x02,
    REG_MINUTES_ALARM = 0x03,
    REG_HOURS = 0x04,
    REG_HOURS_ALARM = 0x05,
    REG_DAY_OF_WEEK = 0x06,
    REG_DAY_OF_MONTH = 0x07,
    REG_MONTH = 0x08,
    REG_YEAR = 0x09,
    REG_A = 0x0a,
    REG_B = 0x0b,
    REG_C = 0x0c,
    REG_D = 0x0d,
    CMOS_CENTURY = 0x32,
};

#define A_UIP         0x80
#define A_DIVIDER     0x70
#define A_DIVIDER_32K 0x20
#define B_SET         0x80
#define B_PIE         0x40
#define B_AIE         0x20
#define B_UIE         0x10
#define B_BINARY      0x04
#define B_24H         0x02
#define C_IRQF        0x80
#define C_PF          0x40
#define C_AF          0x20
#define C_UF          0x10
#define D_VRT         0x80

typedef struct rtc {
    nm_machine *machine;
    nm_io_claim *claim;
    uint8_t index;
    uint8_t cmos[CMOS_SIZE]; /* 0x00-0x09 hold the time only while halted */
    bool irq_level;
    /* Update boundaries are at phase_ns + k * 1 s.  The time is
     * seconds_at_ref plus the boundaries passed since boundary ref_index. */
    uint64_t phase_ns;
    int64_t seconds_at_ref;
    uint64_t ref_index;
    uint64_t flags_cleared_ns; /* when Register C was last read */
    nm_timer update_timer, periodic_timer;
    uint64_t interrupts;
} rtc;

/* ---- calendar (proleptic Gregorian, days since 1970-01-01) ------------ */

static int64_t days_from_civil(int64_t y, unsigned mon, unsigned day)
{
    y -= mon <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (mon + (mon > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *mon, unsigned *day)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *day = doy - (153 * mp + 2) / 5 + 1;
    *mon = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*mon <= 2);
}

/* ---- register encoding ------------------------------------------------ */

static bool rtc_binary(const rtc *r)
{
    return r->cmos[REG_B] & B_BINARY;
}

static uint8_t encode(const rtc *r, unsigned v)
{
    return rtc_binary(r) ? (uint8_t)v : (uint8_t)((v / 10) << 4 | v % 10);
}

/* Decoding a guest-written byte: bad BCD digits are taken at face value
 * (as the chip's counters would), never trusted as an index. */
static unsigned decode(const rtc *r, uint8_t v)
{
    return rtc_binary(r) ? v : (v >> 4) * 10u + (v & 0xf);
}

static uint8_t encode_hours(const rtc *r, unsigned hour)
{
    if (r->cmos[REG_B] & B_24H) return encode(r, hour);
    unsigned h12 = hour % 12 ? hour % 12 : 12;
    return encode(r, h12) | (hour >= 12 ? 0x80 : 0);
}

static unsigned decode_hours(const rtc *r, uint8_t v)
{
    if (r->cmos[REG_B] & B_24H) return decode(r, v) % 24;
    unsigned h = decode(r, v & 0x7f) % 12;
    return h + (v & 0x80 ? 12 : 0);
}

/* Fills the ten time registers for `t` seconds since 1970. */
static void time_to_registers(const rtc *r, int64_t t, uint8_t regs[10])
{
    int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
    unsigned secs_of_day = (unsigned)(t - days * 86400);
    int64_t year;
    unsigned month, day;
    civil_from_days(days, &year, &month, &day);
    regs[REG_SECONDS] = encode(r, secs_of_day % 60);
    regs[REG_MINUTES] = encode(r, secs_of_day / 60 % 60);
    regs[REG_HOURS] = encode_hours(r, secs_of_day / 3600);
    regs[REG_DAY_OF_WEEK] = encode(r, (unsigned)(((days % 7) + 7 + 4) % 7) + 1); /* 1 = Sunday */
    regs[REG_DAY_OF_MONTH] = encode(r, day);
    regs[REG_MONTH] = encode(r, month);
    regs[REG_YEAR] = encode(r, (unsigned)(((year % 100) + 100) % 100));
    regs[REG_SECONDS_ALARM] = r->cmos[REG_SECONDS_ALARM];
    regs[REG_MINUTES_ALARM] = r->cmos[REG_MINUTES_ALARM];
    regs[REG_HOURS_ALARM] = r->cmos[REG_HOURS_ALARM];
}

static int64_t registers_to_time(const rtc *r, const uint8_t regs[10])
{
    unsigned yy = decode(r, regs[REG_YEAR]) % 100;
    uint8_t century_byte = r->cmos[CMOS_CENTURY];
    unsigned century = (century_byte >> 4) * 10u + (century_byte & 0xf);
    if (century < 19 || century > 99) century = yy < 70 ? 20 : 19;
    unsigned month = decode(r, regs[REG_MONTH]);
    unsigned day = decode(r, regs[REG_DAY_OF_MONTH]);
    if (month < 1 || month > 12) month = 1;
    if (day < 1 || day > 31) day = 1;
    int64_t days = days_from_civil(century * 100 + yy, month, day);
    return days * 86400 + decode_hours(r, regs[REG_HOURS]) * 3600 +
           (decode(r, regs[REG_MINUTES]) % 60) * 60 + decode(r, regs[REG_SECONDS]) % 60;
}

/* ---- time ------------------------------------------------------------- */

static uint64_t rtc_now_ns(const rtc *r)
{
    return nm_clock_now_ns(&r->machine->clock);
}

static bool rtc_running(const rtc *r)
{
    unsigned dv = r->cmos[REG_A] & A_DIVIDER;
    return !(r->cmos[REG_B] & B_SET) && dv != 0x60 && dv != 0x70;
}

/* Update boundaries at or before `ns`. */
static uint64_t boundary_index(const rtc *r, uint64_t ns)
{
    return ns >= r->phase_ns ? (ns - r->phase_ns) / NS_PER_S + 1 : 0;
}

static int64_t rtc_current_time(const rtc *r)
{
    return r->seconds_at_ref + (int64_t)(boundary_index(r, rtc_now_ns(r)) - r->ref_index);
}

static void rtc_set_current_time(rtc *r, int64_t t)
{
    r->seconds_at_ref = t;
    r->ref_index = boundary_index(r, rtc_now_ns(r));
}

static bool rtc_uip(const rtc *r)
{
    if (!rtc_running(r)) return false;
    uint64_t now = rtc_now_ns(r);
    uint64_t next = r->phase_ns + boundary_index(r, now) * NS_PER_S;
    return next - now <= UIP_WINDOW_NS;
}

/* ---- interrupts ------------------------------------------------------- */

static void rtc_update_irq(rtc *r)
{
    uint8_t c = r->cmos[REG_C] & (C_PF | C_AF | C_UF);
    uint8_t enabled = r->cmos[REG_B] & (B_PIE | B_AIE | B_UIE); /* same bit positions */
    if (c & enabled) c |= C_IRQF;
    r->cmos[REG_C] = c;
    bool level = c & C_IRQF;
    if (level == r->irq_level) return;
    r->irq_level = level;
    if (level) r->interrupts++;
    nm_irq_set(&r->machine->irq, RTC_IRQ, level);
}

static bool alarm_byte_matches(uint8_t alarm, uint8_t value)
{
    return (alarm & 0xc0) == 0xc0 || alarm == value;
}

/* The update event runs only while UIE or AIE wants an interrupt; UF and
 * AF are otherwise worked out when Register C is read. */
static void schedule_update(rtc *r)
{
    nm_clock *clock = &r->machine->clock;
    if (!rtc_running(r) || !(r->cmos[REG_B] & (B_UIE | B_AIE))) {
        nm_timer_cancel(clock, &r->update_timer);
        return;
    }
    uint64_t next = r->phase_ns + boundary_index(r, rtc_now_ns(r)) * NS_PER_S;
    nm_timer_at_ns(clock, &r->update_timer, next);
}

static bool alarm_matches(const rtc *r, int64_t t)
{
    uint8_t regs[10];
    time_to_registers(r, t, regs);
    return alarm_byte_matches(regs[REG_SECONDS_ALARM], regs[REG_SECONDS]) &&
           alarm_byte_matches(regs[REG_MINUTES_ALARM], regs[REG_MINUTES]) &&
           alarm_byte_matches(regs[REG_HOURS_ALARM], regs[REG_HOURS]);
}

static void rtc_update_event(void *opaque, uint64_t late_cycles)
{
    (void)late_cycles;
    rtc *r = opaque;
    r->cmos[REG_C] |= C_UF;
    if (alarm_matches(r, rtc_current_time(r))) r->cmos[REG_C] |= C_AF;
    rtc_update_irq(r);
    schedule_update(r);
}

/* Flags of the updates since Register C was last read, for the time the
 * update event was not running.  AF looks at most one day of updates: every
 * alarm setting that can match does so within a day. */
static void rtc_catch_up_update_flags(rtc *r)
{
    if (!rtc_running(r)) return;
    uint64_t first = boundary_index(r, r->flags_cleared_ns) + 1;
    uint64_t last = boundary_index(r, rtc_now_ns(r));
    if (first > last) return;
    r->cmos[REG_C] |= C_UF;
    if (r->cmos[REG_C] & C_AF) return;
    if (last - first > 86400) first = last - 86400;
    for (uint64_t k = first; k <= last; k++) {
        if (alarm_matches(r, r->seconds_at_ref + (int64_t)(k - r->ref_index))) {
            r->cmos[REG_C] |= C_AF;
            break;
        }
    }
}

/* Periodic rate (Table 5, 32.768 kHz time base) as a period in 32 kHz
 * clocks: RS 1, 2 give 256 and 128 Hz; RS n >= 3 gives 2^(n-1) clocks. */
static uint64_t periodic_clocks(const rtc *r)
{
    unsigned rs = r->cmos[REG_A] & 0x0f;
    if (!rs) return 0;
    return rs <= 2 ? 1ull << (rs + 6) : 1ull << (rs - 1);
}

/* 32.768 kHz clocks at or before ns, and the ns of clock j (rounded up). */
static uint64_t clocks_32k_at_ns(uint64_t ns)
{
    return (ns / 1953125) * 64 + (ns % 1953125) * 64 / 1953125;
}

static uint64_t ns_of_clock_32k(uint64_t j)
{
    return (j / 64) * 1953125 + ((j % 64) * 1953125 + 63) / 64;
}

static void schedule_periodic(rtc *r)
{
    nm_clock *clock = &r->machine->clock;
    uint64_t period = periodic_clocks(r);
    if (!period || !(r->cmos[REG_B] & B_PIE) || !rtc_running(r)) {
        nm_timer_cancel(clock, &r->periodic_timer);
        return;
    }
    uint64_t next = (clocks_32k_at_ns(rtc_now_ns(r)) / period + 1) * period;
    nm_timer_at_ns(clock, &r->periodic_timer, ns_of_clock_32k(next));
}

static void rtc_periodic_event(void *opaque, uint64_t late_cycles)
{
    (void)late_cycles;
    rtc *r = opaque;
    r->cmos[REG_C] |= C_PF;
    rtc_update_irq(r);
    schedule_periodic(r);
}

/* PF is set whether or not PIE is: without the timer, work out whether a
 * periodic edge has passed since PF was last cleared. */
static void rtc_catch_up_pf(rtc *r)
{
    uint64_t period = periodic_clocks(r);
    if (!period || !rtc_running(r)) return;
    uint64_t now = clocks_32k_at_ns(rtc_now_ns(r)) / period;
    if (now != clocks_32k_at_ns(r->flags_cleared_ns) / period) r->cmos[REG_C] |= C_PF;
}

/* ---- registers -------------------------------------------------------- */

static void rtc_enter_halt(rtc *r)
{
    uint8_t regs[10];
    time_to_registers(r, rtc_current_time(r), regs);
    for (unsigned i = 0; i < 10; i++)
        if (i != REG_SECONDS_ALARM && i != REG_MINUTES_ALARM && i != REG_HOURS_ALARM)
            r->cmos[i] = regs[i];
}

static void rtc_leave_halt(rtc *r, bool divider_released)
{
    if (divider_released) {
        /* "When the divider reset is removed, the first update cycle
         * begins one-half second later." */
        uint64_t first_end = rtc_now_ns(r) + NS_PER_S / 2 + 1984000;
        r->phase_ns = first_end % NS_PER_S;
    }
    rtc_set_current_time(r, registers_to_time(r, r->cmos));
}

static uint8_t rtc_register_read(rtc *r, unsigned idx)
{
    switch (idx) {
    case REG_A: return (r->cmos[REG_A] & ~A_UIP) | (rtc_uip(r) ? A_UIP : 0);
    case REG_C: {
        rtc_catch_up_pf(r);
        rtc_catch_up_update_flags(r);
        rtc_update_irq(r);
        uint8_t v = r->cmos[REG_C];
        r->cmos[REG_C] = 0;
        r->flags_cleared_ns = rtc_now_ns(r);
        rtc_update_irq(r);
        return v;
    }
    case REG_D: return D_VRT;
    default:
        if (idx < 10 && idx != REG_SECONDS_ALARM && idx != REG_MINUTES_ALARM &&
            idx != REG_HOURS_ALARM && rtc_running(r)) {
            uint8_t regs[10];
            time_to_registers(r, rtc_current_time(r), regs);
            return regs[idx];
        }
        return r->cmos[idx];
    }
}

static void rtc_register_write(rtc *r, unsigned idx, uint8_t v)
{
    bool was_running = rtc_running(r);
    unsigned old_dv = r->cmos[REG_A] & A_DIVIDER;
    switch (idx) {
    case REG_A:
        r->cmos[REG_A] = v & ~A_UIP;
        if ((v & A_DIVIDER) != A_DIVIDER_32K && (v & A_DIVIDER) < 0x60)
            nm_debug(RTC, "register A divider 0x%x: 32.768 kHz time base assumed", v & 0x70);
        break;
    case REG_B:
        if (v & B_SET) v &= ~B_UIE; /* SET clears UIE */
        r->cmos[REG_B] = v;
        break;
    case REG_C:
    case REG_D: nm_debug(RTC, "write 0x%02x to read-only register %u ignored", v, idx); return;
    default:
        if (idx < 10 && rtc_running(r) && idx != REG_SECONDS_ALARM && idx != REG_MINUTES_ALARM &&
            idx != REG_HOURS_ALARM) {
            /* Setting one field of the running clock. */
            uint8_t regs[10];
            time_to_registers(r, rtc_current_time(r), regs);
            regs[idx] = v;
            rtc_set_current_time(r, registers_to_time(r, regs));
        } else {
            r->cmos[idx] = v;
        }
        return;
    }
    bool running = rtc_running(r);
    if (was_running && !running)
        rtc_enter_halt(r);
    else if (!was_running && running)
        rtc_leave_halt(r, old_dv == 0x60 || old_dv == 0x70);
    rtc_update_irq(r);
    schedule_update(r);
    schedule_periodic(r);
}

static uint32_t rtc_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    rtc *r = opaque;
    if (offset == 0) return 0xff; /* the index register is write-only */
    if (r->index < 0x0e) return rtc_register_read(r, r->index);
    return r->cmos[r->index];
}

static void rtc_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    rtc *r = opaque;
    if (offset == 0) {
        r->index = value & 0x7f; /* bit 7 is the NMI mask on the PC: ignored */
        return;
    }
    if (r->index < 0x0e)
        rtc_register_write(r, r->index, (uint8_t)value);
    else
        r->cmos[r->index] = (uint8_t)value;
}

static const nm_io_ops rtc_ops = {rtc_read, rtc_write, NULL};

uint8_t nm_rtc_cmos_get(void *dev, unsigned index)
{
    rtc *r = dev;
    return index >= 0x0e && index < CMOS_SIZE ? r->cmos[index] : 0xff;
}

void nm_rtc_cmos_set(void *dev, unsigned index, uint8_t value)
{
    rtc *r = dev;
    if (index >= 0x0e && index < CMOS_SIZE) r->cmos[index] = value;
}

/* ---- CMOS contents ---------------------------------------------------- */

static void put_u16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* The bytes a PC/AT BIOS keeps (IBM AT technical reference, "CMOS RAM
 * address map"; 0x34/0x35 as AMI/SeaBIOS do). */
static void cmos_fill(rtc *r)
{
    uint64_t ram = r->machine->settings.ram_bytes;
    uint64_t ext_kb = ram > (1u << 20) ? (ram - (1u << 20)) >> 10 : 0;
    uint64_t above_16m = ram > (16u << 20) ? (ram - (16u << 20)) >> 16 : 0;
    memset(r->cmos + 0x0e, 0, CMOS_SIZE - 0x0e);
    r->cmos[0x10] = 0x00; /* no floppy drives */
    r->cmos[0x12] = 0x00; /* no hard disks */
    /* equipment: bit 1 a math coprocessor, no floppies (bits 0, 6-7), EGA/VGA
     * (bits 4-5 = 00) */
    r->cmos[0x14] = r->machine->settings.fpu_present ? 0x02 : 0x00;
    put_u16(r->cmos + 0x15, 640);
    put_u16(r->cmos + 0x17, (unsigned)MIN(ext_kb, 0xffff));
    put_u16(r->cmos + 0x30, (unsigned)MIN(ext_kb, 0xffff));
    put_u16(r->cmos + 0x34, (unsigned)MIN(above_16m, 0xffff));
    unsigned sum = 0;
    for (unsigned i = 0x10; i <= 0x2d; i++)
        sum += r->cmos[i];
    r->cmos[0x2e] = (uint8_t)(sum >> 8);
    r->cmos[0x2f] = (uint8_t)sum;
    int64_t days = (int64_t)(r->machine->settings.rtc_epoch / 86400);
    int64_t year;
    unsigned month, day;
    civil_from_days(days, &year, &month, &day);
    unsigned century = (unsigned)(year / 100) % 100;
    r->cmos[CMOS_CENTURY] = (uint8_t)((century / 10) << 4 | century % 10);
}

/* Power-on (create): the time from the configured epoch, registers as a
 * BIOS sets them (A = 32.768 kHz, 1024 Hz rate; B = 24-hour BCD), CMOS
 * filled from the configuration. */
static void rtc_power_on(rtc *r)
{
    memset(r->cmos, 0, 0x0e);
    r->cmos[REG_A] = A_DIVIDER_32K | 0x06;
    r->cmos[REG_B] = B_24H;
    r->cmos[REG_D] = D_VRT;
    cmos_fill(r);
    uint64_t now = rtc_now_ns(r);
    r->phase_ns = now % NS_PER_S;
    r->seconds_at_ref = (int64_t)r->machine->settings.rtc_epoch + (int64_t)(now / NS_PER_S);
    r->ref_index = boundary_index(r, now);
    r->flags_cleared_ns = now;
    rtc_update_irq(r);
    schedule_update(r);
    schedule_periodic(r);
}

/* The RESET pin (datasheet, "RESET"): the clock, the CMOS RAM and the
 * divider are battery-backed and untouched; PIE, AIE, UIE, SQWE and the
 * interrupt flags are cleared. */
static void rtc_reset(void *opaque)
{
    rtc *r = opaque;
    r->cmos[REG_B] &= ~(B_PIE | B_AIE | B_UIE | 0x08);
    r->cmos[REG_C] = 0;
    r->flags_cleared_ns = rtc_now_ns(r);
    rtc_update_irq(r);
    schedule_update(r);
    schedule_periodic(r);
}

static void rtc_destroy(void *opaque);

static void *rtc_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    rtc *r = g_new0(rtc, 1);
    r->machine = m;
    nm_timer_init(&r->update_timer, rtc_update_event, r, "rtc-update");
    nm_timer_init(&r->periodic_timer, rtc_periodic_event, r, "rtc-periodic");
    r->claim = nm_ioport_claim(m->io, 0x70, 2, &rtc_ops, r, "rtc", NULL);
    if (!r->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: ports 0x70/0x71 are already taken (one RTC per machine)",
                    cfg ? cfg->origin : "rtc");
        rtc_destroy(r);
        return NULL;
    }
    rtc_power_on(r);
    return r;
}

static void rtc_destroy(void *opaque)
{
    rtc *r = opaque;
    nm_clock *clock = &r->machine->clock;
    nm_timer_cancel(clock, &r->update_timer);
    nm_timer_cancel(clock, &r->periodic_timer);
    if (r->irq_level) nm_irq_lower(&r->machine->irq, RTC_IRQ);
    nm_ioport_release(r->machine->io, r->claim);
    g_free(r);
}

static void rtc_report(void *opaque, nm_report *rep)
{
    rtc *r = opaque;
    nm_report_u64(rep, "interrupts", r->interrupts);
    nm_report_u64(rep, "time", (uint64_t)rtc_current_time(r));
}

static void rtc_snapshot(void *opaque, nm_snap *s)
{
    rtc *r = opaque;
    nm_snap_u8(s, "index", &r->index);
    nm_snap_bytes(s, "cmos", r->cmos, CMOS_SIZE);
    nm_snap_bool(s, "irq_level", &r->irq_level);
    nm_snap_u64(s, "phase_ns", &r->phase_ns);
    nm_snap_i64(s, "seconds_at_ref", &r->seconds_at_ref);
    nm_snap_u64(s, "ref_index", &r->ref_index);
    nm_snap_u64(s, "flags_cleared_ns", &r->flags_cleared_ns);
    nm_snap_timer(s, "update_timer", &r->update_timer);
    nm_snap_timer(s, "periodic_timer", &r->periodic_timer);
    nm_snap_u64(s, "interrupts", &r->interrupts);
    nm_snap_check(s, r->index < CMOS_SIZE, "index");
}

static const char *const rtc_keys[] = {NULL};

const nm_device_class nm_rtc_class = {
    .name = "rtc",
    .help = "MC146818 real-time clock and CMOS RAM (0x70/0x71, IRQ 8), time from rtc-epoch",
    .keys = rtc_keys,
    .create = rtc_create,
    .reset = rtc_reset,
    .destroy = rtc_destroy,
    .report = rtc_report,
    .snapshot = rtc_snapshot,
    .snapshot_version = 1,
};
