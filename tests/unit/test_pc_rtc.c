/* The MC146818 on virtual time: the configured epoch, BCD and binary,
 * 12/24 hours, UIP timing, Linux's mc146818_get_time loop, setting the
 * clock, update/periodic/alarm interrupts on IRQ 8, CMOS contents. */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/machine.h"

#define NS_PER_S 1000000000ull

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    void *rtc;
} fixture;

static void make(fixture *f, uint64_t epoch)
{
    GError *err = NULL;
    f->cfg = nm_config_new();
    f->cfg->rtc_epoch = epoch;
    f->m = nm_machine_new(f->cfg, &err);
    g_assert_no_error(err);
    f->rtc = nm_machine_add_device(f->m, &nm_rtc_class, NULL, &err);
    g_assert_no_error(err);
}

/* 2023-11-14 22:13:20 UTC, a Tuesday. */
static void setup(fixture *f, gconstpointer data)
{
    (void)data;
    make(f, 1700000000);
}

static void teardown(fixture *f, gconstpointer data)
{
    (void)data;
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

static uint8_t cmos(fixture *f, uint8_t idx)
{
    nm_io_write(f->m->io, 0x70, idx, 1);
    return (uint8_t)nm_io_read(f->m->io, 0x71, 1);
}

static void cmos_write(fixture *f, uint8_t idx, uint8_t v)
{
    nm_io_write(f->m->io, 0x70, idx, 1);
    nm_io_write(f->m->io, 0x71, v, 1);
}

static void set_time_ns(fixture *f, uint64_t ns)
{
    uint64_t cycle = nm_clock_cycles_from_ns(&f->m->clock, ns);
    g_assert_cmpuint(cycle, >=, f->m->clock.cycles);
    f->m->clock.cycles = cycle;
    nm_clock_run_due(&f->m->clock);
}

static uint64_t now_ns(fixture *f)
{
    return nm_clock_now_ns(&f->m->clock);
}
static bool irq8(fixture *f)
{
    return nm_irq_level(&f->m->irq, 8);
}

static void assert_time(fixture *f, uint8_t h, uint8_t m, uint8_t s)
{
    g_assert_cmphex(cmos(f, 4), ==, h);
    g_assert_cmphex(cmos(f, 2), ==, m);
    g_assert_cmphex(cmos(f, 0), ==, s);
}

static void test_epoch_bcd(fixture *f, gconstpointer data)
{
    (void)data;
    assert_time(f, 0x22, 0x13, 0x20);
    g_assert_cmphex(cmos(f, 6), ==, 3); /* Tuesday, Sunday = 1 */
    g_assert_cmphex(cmos(f, 7), ==, 0x14);
    g_assert_cmphex(cmos(f, 8), ==, 0x11);
    g_assert_cmphex(cmos(f, 9), ==, 0x23);
    g_assert_cmphex(cmos(f, 0x32), ==, 0x20);
    g_assert_cmphex(cmos(f, 0x0a), ==, 0x26);
    g_assert_cmphex(cmos(f, 0x0b), ==, 0x02);
    g_assert_cmphex(cmos(f, 0x0d), ==, 0x80); /* VRT; bit 6 clear as Linux checks */
    /* Virtual time moves the clock: 1 h 1 min 1 s later. */
    set_time_ns(f, 3661 * NS_PER_S);
    assert_time(f, 0x23, 0x14, 0x21);
    /* Past midnight into the next day. */
    set_time_ns(f, (3661 + 2800) * NS_PER_S);
    assert_time(f, 0x00, 0x01, 0x01);
    g_assert_cmphex(cmos(f, 7), ==, 0x15);
    g_assert_cmphex(cmos(f, 6), ==, 4);
}

static void test_binary_and_12h(fixture *f, gconstpointer data)
{
    (void)data;
    cmos_write(f, 0x0b, 0x06); /* binary, 24 h */
    assert_time(f, 22, 13, 20);
    g_assert_cmpuint(cmos(f, 9), ==, 23);
    cmos_write(f, 0x0b, 0x04); /* binary, 12 h: 10 PM */
    g_assert_cmphex(cmos(f, 4), ==, 0x80 | 10);
    cmos_write(f, 0x0b, 0x00); /* BCD, 12 h */
    g_assert_cmphex(cmos(f, 4), ==, 0x90);
    /* 00:01 is 12 AM. */
    set_time_ns(f, (3661 + 2800) * NS_PER_S);
    g_assert_cmphex(cmos(f, 4), ==, 0x12);
}

static void test_leap_day_and_century(fixture *f, gconstpointer data)
{
    (void)data;
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
    make(f, 951782400); /* 2000-02-29 00:00:00, a Tuesday */
    g_assert_cmphex(cmos(f, 7), ==, 0x29);
    g_assert_cmphex(cmos(f, 8), ==, 0x02);
    g_assert_cmphex(cmos(f, 9), ==, 0x00);
    g_assert_cmphex(cmos(f, 0x32), ==, 0x20);
    set_time_ns(f, 86400 * NS_PER_S);
    g_assert_cmphex(cmos(f, 7), ==, 0x01);
    g_assert_cmphex(cmos(f, 8), ==, 0x03);
}

static void test_uip_timing(fixture *f, gconstpointer data)
{
    (void)data;
    /* UIP: 244 us before the update cycle plus its 1984 us, ending when
     * the registers show the next second. */
    const uint64_t window = 2228000;
    set_time_ns(f, NS_PER_S - window - 100);
    g_assert_cmphex(cmos(f, 0x0a) & 0x80, ==, 0);
    g_assert_cmphex(cmos(f, 0), ==, 0x20);
    set_time_ns(f, NS_PER_S - window);
    g_assert_cmphex(cmos(f, 0x0a), ==, 0xa6);
    set_time_ns(f, NS_PER_S - 100);
    g_assert_cmphex(cmos(f, 0x0a) & 0x80, ==, 0x80);
    set_time_ns(f, NS_PER_S);
    g_assert_cmphex(cmos(f, 0x0a) & 0x80, ==, 0);
    g_assert_cmphex(cmos(f, 0), ==, 0x21);
    /* Same every second, however far on. */
    set_time_ns(f, 1000 * NS_PER_S - window + 10);
    g_assert_cmphex(cmos(f, 0x0a) & 0x80, ==, 0x80);
    set_time_ns(f, 1000 * NS_PER_S);
    g_assert_cmphex(cmos(f, 0x0a) & 0x80, ==, 0);
}

/* drivers/rtc/rtc-mc146818-lib.c mc146818_get_time(): read seconds, check
 * UIP (udelay(100) and retry while set), read the rest, check again. */
static void test_linux_get_time(fixture *f, gconstpointer data)
{
    (void)data;
    set_time_ns(f, 5 * NS_PER_S - 1000000); /* inside the UIP window */
    unsigned retries = 0;
    uint8_t sec;
    for (;;) {
        g_assert_cmphex(cmos(f, 0x0d) & 0x40, ==, 0);
        sec = cmos(f, 0);
        if (cmos(f, 0x0a) & 0x80) {
            set_time_ns(f, now_ns(f) + 100000); /* udelay(100) */
            retries++;
            g_assert_cmpuint(retries, <, 100);
            continue;
        }
        if (sec != cmos(f, 0)) continue;
        break;
    }
    g_assert_cmpuint(retries, ==, 10);
    g_assert_cmphex(sec, ==, 0x25);
    assert_time(f, 0x22, 0x13, 0x25);
}

static void test_set_time(fixture *f, gconstpointer data)
{
    (void)data;
    set_time_ns(f, 300000000); /* 0.3 s into a second */
    /* Linux mc146818_set_time: SET, divider reset, write, restore. */
    uint8_t b = cmos(f, 0x0b), a = cmos(f, 0x0a);
    cmos_write(f, 0x0b, b | 0x80);
    cmos_write(f, 0x0a, a | 0x70);
    g_assert_cmphex(cmos(f, 0x0b), ==, 0x82);
    cmos_write(f, 0, 0x00);
    cmos_write(f, 2, 0x30);
    cmos_write(f, 4, 0x08);
    cmos_write(f, 7, 0x01);
    cmos_write(f, 8, 0x01);
    cmos_write(f, 9, 0x24);
    /* Held while SET: time does not move. */
    set_time_ns(f, 2 * NS_PER_S);
    assert_time(f, 0x08, 0x30, 0x00);
    g_assert_cmphex(cmos(f, 0x0a) & 0x80, ==, 0);
    uint64_t release = now_ns(f);
    cmos_write(f, 0x0b, b);
    cmos_write(f, 0x0a, a);
    /* The first update ends half a second (plus the update cycle) later. */
    set_time_ns(f, release + 500000000);
    assert_time(f, 0x08, 0x30, 0x00);
    set_time_ns(f, release + 502000000);
    assert_time(f, 0x08, 0x30, 0x01);
    g_assert_cmphex(cmos(f, 7), ==, 0x01);
    g_assert_cmphex(cmos(f, 9), ==, 0x24);
    g_assert_cmphex(cmos(f, 6), ==, 2); /* 2024-01-01 was a Monday */
    /* Writing one field of the running clock. */
    cmos_write(f, 2, 0x45);
    assert_time(f, 0x08, 0x45, 0x01);
    set_time_ns(f, release + 1502000000);
    assert_time(f, 0x08, 0x45, 0x02);
}

static void test_update_interrupt(fixture *f, gconstpointer data)
{
    (void)data;
    cmos_write(f, 0x0a, 0x20); /* no periodic rate: only UF below */
    cmos(f, 0x0c);
    cmos_write(f, 0x0b, 0x12); /* UIE, 24 h, BCD */
    g_assert_false(irq8(f));
    set_time_ns(f, NS_PER_S - 100);
    g_assert_false(irq8(f));
    set_time_ns(f, NS_PER_S);
    g_assert_true(irq8(f));
    g_assert_cmphex(cmos(f, 0x0c), ==, 0x90); /* IRQF | UF */
    g_assert_false(irq8(f));
    g_assert_cmphex(cmos(f, 0x0c), ==, 0x00);
    set_time_ns(f, 2 * NS_PER_S);
    g_assert_true(irq8(f));
    /* SET clears UIE. */
    cmos(f, 0x0c);
    cmos_write(f, 0x0b, 0x92);
    g_assert_cmphex(cmos(f, 0x0b), ==, 0x82);
}

static void test_periodic_interrupt(fixture *f, gconstpointer data)
{
    (void)data;
    cmos_write(f, 0x0b, 0x42);   /* PIE; rate 6 = 1024 Hz from register A */
    set_time_ns(f, 976563 - 20); /* a cycle is 15 ns: stay clear of it */
    g_assert_false(irq8(f));
    set_time_ns(f, 976563); /* 32 clocks of 32.768 kHz */
    g_assert_true(irq8(f));
    g_assert_cmphex(cmos(f, 0x0c), ==, 0xc0);
    g_assert_false(irq8(f));
    /* 1024 periods in one second, exactly. */
    unsigned count = 1;
    for (unsigned i = 2; i <= 1024; i++) {
        set_time_ns(f, (i * NS_PER_S + 1023) / 1024);
        g_assert_true(irq8(f));
        cmos(f, 0x0c);
        count++;
    }
    g_assert_cmpuint(count, ==, 1024);
    g_assert_cmpuint(now_ns(f) / 1000, ==, 1000000);
    /* 2 Hz (rate 15). */
    cmos_write(f, 0x0a, 0x2f);
    set_time_ns(f, NS_PER_S + 500000000 - 20);
    g_assert_false(irq8(f));
    set_time_ns(f, NS_PER_S + 500000000);
    g_assert_true(irq8(f));
}

static void test_alarm_and_polled_flags(fixture *f, gconstpointer data)
{
    (void)data;
    /* Without enables, flags still show in register C (no IRQ). */
    set_time_ns(f, 1500000000);
    g_assert_cmphex(cmos(f, 0x0c), ==, 0x50); /* PF | UF */
    g_assert_false(irq8(f));
    g_assert_cmphex(cmos(f, 0x0c), ==, 0x00);
    /* Alarm at :23 every minute of every hour. */
    cmos_write(f, 1, 0x23);
    cmos_write(f, 3, 0xc0);
    cmos_write(f, 5, 0xff);
    cmos_write(f, 0x0a, 0x20); /* no periodic rate */
    cmos_write(f, 0x0b, 0x22); /* AIE */
    set_time_ns(f, 2 * NS_PER_S);
    g_assert_false(irq8(f)); /* :22 */
    set_time_ns(f, 3 * NS_PER_S);
    g_assert_true(irq8(f));                   /* :23 */
    g_assert_cmphex(cmos(f, 0x0c), ==, 0xb0); /* IRQF | AF | UF */
    /* Polled AF after a long gap with the event off. */
    cmos_write(f, 0x0b, 0x02);
    set_time_ns(f, 200 * NS_PER_S);
    g_assert_cmphex(cmos(f, 0x0c), ==, 0x30);
}

static void test_cmos_contents(fixture *f, gconstpointer data)
{
    (void)data;
    /* 32 MB: 640 K base, 31744 K extended, 256 x 64 K above 16 M. */
    g_assert_cmphex(cmos(f, 0x15), ==, 0x80);
    g_assert_cmphex(cmos(f, 0x16), ==, 0x02);
    g_assert_cmphex(cmos(f, 0x17), ==, 0x00);
    g_assert_cmphex(cmos(f, 0x18), ==, 0x7c);
    g_assert_cmphex(cmos(f, 0x30), ==, 0x00);
    g_assert_cmphex(cmos(f, 0x31), ==, 0x7c);
    g_assert_cmphex(cmos(f, 0x34), ==, 0x00);
    g_assert_cmphex(cmos(f, 0x35), ==, 0x01);
    /* Bit 7 of the index (NMI mask) is ignored. */
    nm_io_write(f->m->io, 0x70, 0x80 | 0x15, 1);
    g_assert_cmphex(nm_io_read(f->m->io, 0x71, 1), ==, 0x80);
    cmos_write(f, 0x40, 0x5a);
    g_assert_cmphex(cmos(f, 0x40), ==, 0x5a);
    g_assert_cmphex(nm_rtc_cmos_get(f->rtc, 0x40), ==, 0x5a);
    nm_rtc_cmos_set(f->rtc, 0x41, 0x77);
    g_assert_cmphex(cmos(f, 0xc1), ==, 0x77);
    /* Checksum over 0x10-0x2d. */
    unsigned sum = 0;
    for (unsigned i = 0x10; i <= 0x2d; i++)
        sum += cmos(f, (uint8_t)i);
    g_assert_cmphex(cmos(f, 0x2e) << 8 | cmos(f, 0x2f), ==, sum);
}

/* The equipment byte's bit 1 (IBM AT technical reference, CMOS 0x14: "math
 * coprocessor installed") follows the model's x87, and the checksum with it. */
static void test_cmos_equipment_fpu(void)
{
    static const struct {
        const char *cpu, *fpu;
        uint8_t equipment;
    } cases[] = {
        {"486dx2-66", NULL, 0x02}, {"pentium-60", NULL, 0x02}, {"486sx-25", NULL, 0x00},
        {"386dx-33", NULL, 0x00},  {"386dx-33", "387", 0x02},  {"386dx-33", "none", 0x00},
    };
    for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
        fixture f;
        GError *err = NULL;
        f.cfg = nm_config_new();
        g_free(f.cfg->cpu);
        f.cfg->cpu = g_strdup(cases[k].cpu);
        f.cfg->fpu = g_strdup(cases[k].fpu);
        f.m = nm_machine_new(f.cfg, &err);
        g_assert_no_error(err);
        f.rtc = nm_machine_add_device(f.m, &nm_rtc_class, NULL, &err);
        g_assert_no_error(err);
        g_assert_cmphex(cmos(&f, 0x14), ==, cases[k].equipment);
        unsigned sum = 0;
        for (unsigned i = 0x10; i <= 0x2d; i++)
            sum += cmos(&f, (uint8_t)i);
        g_assert_cmphex(cmos(&f, 0x2e) << 8 | cmos(&f, 0x2f), ==, sum);
        teardown(&f, NULL);
    }
}

static void test_machine_reset(fixture *f, gconstpointer data)
{
    (void)data;
    cmos_write(f, 0x0b, 0x12); /* UIE */
    cmos_write(f, 0x40, 0x99);
    set_time_ns(f, 10 * NS_PER_S);
    g_assert_true(irq8(f));
    nm_machine_reset(f->m);
    /* Battery-backed: time and RAM survive; RESET clears the enables. */
    g_assert_false(irq8(f));
    g_assert_cmphex(cmos(f, 0x0b), ==, 0x02);
    g_assert_cmphex(cmos(f, 0x40), ==, 0x99);
    assert_time(f, 0x22, 0x13, 0x30);
    set_time_ns(f, 11 * NS_PER_S);
    g_assert_false(irq8(f));
    assert_time(f, 0x22, 0x13, 0x31);
}

static void test_hostile_writes(fixture *f, gconstpointer data)
{
    (void)data;
    for (unsigned v = 0; v < 1024; v++) {
        cmos_write(f, (uint8_t)v, (uint8_t)(v * 31));
        cmos(f, (uint8_t)(v * 7));
        set_time_ns(f, now_ns(f) + 10000000);
    }
    /* Back to sane settings: the clock still works. */
    cmos_write(f, 0x0b, 0x86);
    cmos_write(f, 0x0a, 0x20);
    cmos_write(f, 0, 59);
    cmos_write(f, 2, 59);
    cmos_write(f, 4, 23);
    cmos_write(f, 7, 31);
    cmos_write(f, 8, 12);
    cmos_write(f, 9, 99);
    cmos_write(f, 0x32, 0x20);
    cmos_write(f, 0x0b, 0x06);
    set_time_ns(f, now_ns(f) + 2 * NS_PER_S);
    g_assert_cmpuint(cmos(f, 9), ==, 0); /* 2099 -> 2100 */
    g_assert_cmpuint(cmos(f, 8), ==, 1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add("/pc/rtc/" path, fixture, NULL, setup, fn, teardown)
    ADD("epoch-bcd", test_epoch_bcd);
    ADD("binary-and-12h", test_binary_and_12h);
    ADD("leap-day-and-century", test_leap_day_and_century);
    ADD("uip-timing", test_uip_timing);
    ADD("linux-get-time", test_linux_get_time);
    ADD("set-time", test_set_time);
    ADD("update-interrupt", test_update_interrupt);
    ADD("periodic-interrupt", test_periodic_interrupt);
    ADD("alarm-and-polled-flags", test_alarm_and_polled_flags);
    ADD("cmos-contents", test_cmos_contents);
    g_test_add_func("/pc/rtc/cmos-equipment-fpu", test_cmos_equipment_fpu);
    ADD("machine-reset", test_machine_reset);
    ADD("hostile-writes", test_hostile_writes);
#undef ADD
    return g_test_run();
}
