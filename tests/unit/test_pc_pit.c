/* The 8254 and port 0x61, on virtual time only: counts in modes 0/2/3/4,
 * latched reads, read-back, the channel 2 gate and OUT2 through port 0x61,
 * the refresh toggle, IRQ 0 timing exact to the PIT clock over an hour,
 * and Linux's TSC calibration loops terminating. */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/machine.h"

#include "pc_fixture.h"

/* A bare PC with the PIT (and port 0x61). */
static void setup(pc_fixture *f, gconstpointer data)
{
    pc_setup(f, data);
    pc_add_device(f, &nm_pit_class, NULL);
}

/* Exact reference values: PIT clock k begins at ceil(k * 88000 / 105) ns. */
static uint64_t ns_of_tick(uint64_t k)
{
    return (k * 88000 + 104) / 105;
}

/* Moves virtual time to the first cycle at or after `ns` and runs events. */
static void set_time_ns(pc_fixture *f, uint64_t ns)
{
    uint64_t cycle = nm_clock_cycles_from_ns(&f->m->clock, ns);
    g_assert_cmpuint(cycle, >=, f->m->clock.cycles);
    f->m->clock.cycles = cycle;
    nm_clock_run_due(&f->m->clock);
}

static void set_time_tick(pc_fixture *f, uint64_t tick)
{
    set_time_ns(f, ns_of_tick(tick));
}

static uint16_t read_count_latched(pc_fixture *f, unsigned ch)
{
    outb(f, 0x43, (uint8_t)(ch << 6)); /* counter latch */
    uint8_t lo = inb(f, 0x40 + ch);
    return (uint16_t)(lo | inb(f, 0x40 + ch) << 8);
}

static uint64_t irq0_count(pc_fixture *f)
{
    return f->m->irq.raised_count[0];
}

static void test_mode0_countdown(pc_fixture *f, gconstpointer data)
{
    (void)data;
    set_time_tick(f, 1000);
    outb(f, 0x43, 0x30); /* ch0, lo/hi, mode 0, binary */
    outb(f, 0x40, 0xe8);
    outb(f, 0x40, 0x03); /* 1000: loaded at the next clock, 1001 */
    set_time_tick(f, 1001);
    g_assert_cmpuint(read_count_latched(f, 0), ==, 1000);
    set_time_tick(f, 1101);
    g_assert_cmpuint(read_count_latched(f, 0), ==, 900);
    /* OUT low until terminal count, then IRQ 0 once. */
    set_time_tick(f, 2000);
    g_assert_cmpuint(read_count_latched(f, 0), ==, 1);
    g_assert_cmpuint(irq0_count(f), ==, 0);
    set_time_tick(f, 2001);
    g_assert_cmpuint(irq0_count(f), ==, 1);
    g_assert_cmpuint(read_count_latched(f, 0), ==, 0);
    /* The counter wraps and keeps counting; no second interrupt. */
    set_time_tick(f, 2003);
    g_assert_cmpuint(read_count_latched(f, 0), ==, 0xfffe);
    set_time_tick(f, 200000);
    g_assert_cmpuint(irq0_count(f), ==, 1);
}

static void test_mode2_and_exact_period(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* Linux HZ=100 periodic mode: 0x34, LATCH = 11932. */
    const uint64_t latch = 11932;
    outb(f, 0x43, 0x34);
    outb(f, 0x40, latch & 0xff);
    outb(f, 0x40, latch >> 8);
    const uint64_t start = 1;                          /* written at clock 0, loaded at clock 1 */
    g_assert_cmpuint(read_count_latched(f, 0), ==, 0); /* not loaded: held value */
    set_time_tick(f, start + 5);
    g_assert_cmpuint(read_count_latched(f, 0), ==, latch - 5);
    set_time_tick(f, start + latch - 1);
    g_assert_cmpuint(read_count_latched(f, 0), ==, 1);
    g_assert_cmpuint(irq0_count(f), ==, 0);
    /* Each edge at exactly start + k * latch: not one cycle before. */
    for (uint64_t k = 1; k <= 5; k++) {
        uint64_t due = nm_clock_cycles_from_ns(&f->m->clock, ns_of_tick(start + k * latch));
        f->m->clock.cycles = due - 1;
        nm_clock_run_due(&f->m->clock);
        g_assert_cmpuint(irq0_count(f), ==, k - 1);
        f->m->clock.cycles = due;
        nm_clock_run_due(&f->m->clock);
        g_assert_cmpuint(irq0_count(f), ==, k);
        g_assert_cmpuint(read_count_latched(f, 0), ==, latch);
    }
    /* An hour later (360,000 interrupts), still exact: no drift. */
    uint64_t k = 360000;
    uint64_t due = nm_clock_cycles_from_ns(&f->m->clock, ns_of_tick(start + k * latch));
    f->m->clock.cycles = due - 1;
    nm_clock_run_due(&f->m->clock);
    g_assert_cmpuint(irq0_count(f), ==, k - 1);
    f->m->clock.cycles = due;
    nm_clock_run_due(&f->m->clock);
    g_assert_cmpuint(irq0_count(f), ==, k);
    /* The 1193181.818... Hz clock: 360000 * 11932 clocks is 3600.0546 s. */
    g_assert_cmpuint(nm_clock_now_ns(&f->m->clock) / 1000000, ==, 3600054);
}

static void test_mode3_square_wave_on_out2(pc_fixture *f, gconstpointer data)
{
    (void)data;
    outb(f, 0x61, 0x01); /* gate 2 high, speaker off */
    outb(f, 0x43, 0xb6); /* ch2, lo/hi, mode 3 */
    outb(f, 0x42, 100);
    outb(f, 0x42, 0);
    /* Loaded at clock 1: high for 50, low for 50. */
    set_time_tick(f, 1);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x20);
    g_assert_cmpuint(read_count_latched(f, 2), ==, 100);
    set_time_tick(f, 11);
    g_assert_cmpuint(read_count_latched(f, 2), ==, 80); /* decrements by 2 */
    set_time_tick(f, 50);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x20);
    set_time_tick(f, 51);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x00);
    set_time_tick(f, 100);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x00);
    set_time_tick(f, 101);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x20);
    /* Gate low forces OUT high and stops the count. */
    set_time_tick(f, 160);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x00);
    outb(f, 0x61, 0x00);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x20);
    uint16_t held = read_count_latched(f, 2);
    set_time_tick(f, 500);
    g_assert_cmpuint(read_count_latched(f, 2), ==, held);
    /* Odd count on channel 0: IRQ 0 at every period. */
    outb(f, 0x43, 0x36);
    outb(f, 0x40, 101);
    outb(f, 0x40, 0);
    set_time_tick(f, 500 + 1 + 101 * 10);
    g_assert_cmpuint(irq0_count(f), ==, 10);
}

static void test_mode4_oneshot(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* Linux oneshot clockevent: 0x38, then the delta. */
    outb(f, 0x43, 0x38);
    outb(f, 0x40, 50);
    outb(f, 0x40, 0);
    set_time_tick(f, 51);
    g_assert_cmpuint(irq0_count(f), ==, 0);
    /* OUT low for the clock at count 0, high again after: the edge. */
    set_time_tick(f, 52);
    g_assert_cmpuint(irq0_count(f), ==, 1);
    set_time_tick(f, 100000);
    g_assert_cmpuint(irq0_count(f), ==, 1);
    /* Reprogramming before expiry cancels the old event. */
    outb(f, 0x40, 0x10);
    outb(f, 0x40, 0x27); /* 10000 */
    outb(f, 0x43, 0x30); /* shutdown: mode 0, no count */
    set_time_tick(f, 200000);
    g_assert_cmpuint(irq0_count(f), ==, 1);
}

static void test_latch_and_readback(pc_fixture *f, gconstpointer data)
{
    (void)data;
    outb(f, 0x43, 0x34);
    outb(f, 0x40, 0x00);
    outb(f, 0x40, 0x10); /* 4096 */
    set_time_tick(f, 101);
    outb(f, 0x43, 0x00); /* latch: 3996 */
    set_time_tick(f, 201);
    outb(f, 0x43, 0x00); /* a second latch before reading is ignored */
    g_assert_cmpuint(inb(f, 0x40), ==, 3996 & 0xff);
    set_time_tick(f, 301);
    g_assert_cmpuint(inb(f, 0x40), ==, 3996 >> 8);
    /* Unlatched lo/hi reads alternate bytes of the live count. */
    g_assert_cmpuint(inb(f, 0x40), ==, 3796 & 0xff);
    g_assert_cmpuint(inb(f, 0x40), ==, 3796 >> 8);

    /* Read-back: status then count of channel 0. */
    outb(f, 0x43, 0xc2);
    uint8_t status = inb(f, 0x40);
    g_assert_cmpuint(status, ==, 0x80 | 0x30 | (2 << 1)); /* OUT high, lo/hi, mode 2 */
    g_assert_cmpuint(inb(f, 0x40), ==, 3796 & 0xff);
    g_assert_cmpuint(inb(f, 0x40), ==, 3796 >> 8);
    /* Null count right after a control word; mode 0 OUT low. */
    outb(f, 0x43, 0x30);
    outb(f, 0x43, 0xe2); /* status only */
    g_assert_cmpuint(inb(f, 0x40), ==, 0x40 | 0x30);
    outb(f, 0x40, 0x10);
    outb(f, 0x40, 0x00);
    outb(f, 0x43, 0xe2);
    g_assert_cmpuint(inb(f, 0x40) & 0x40, ==, 0x40); /* not loaded until the next clock */
    set_time_tick(f, 302);
    outb(f, 0x43, 0xe2);
    g_assert_cmpuint(inb(f, 0x40) & 0x40, ==, 0x00);

    /* Byte-only access modes and BCD. */
    outb(f, 0x43, 0x51); /* ch1, LSB only, mode 0, BCD */
    outb(f, 0x41, 0x99);
    set_time_tick(f, 303 + 9);
    g_assert_cmpuint(inb(f, 0x41), ==, 0x90);
    outb(f, 0x43, 0x64); /* ch1, MSB only, mode 2 */
    outb(f, 0x41, 0x02);
    set_time_tick(f, 313 + 256);
    g_assert_cmpuint(inb(f, 0x41), ==, 0x01); /* 512 - 256 = 0x100 */
}

static void test_gate2_and_port61(pc_fixture *f, gconstpointer data)
{
    (void)data;
    g_assert_cmpuint(inb(f, 0x61) & 0x0f, ==, 0);
    outb(f, 0x43, 0xb0); /* ch2 mode 0 */
    outb(f, 0x42, 100);
    outb(f, 0x42, 0);
    /* Gate low: the count is loaded but held. */
    set_time_tick(f, 50);
    g_assert_cmpuint(read_count_latched(f, 2), ==, 100);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0);
    outb(f, 0x61, 0x03); /* gate high, speaker data on */
    g_assert_cmpuint(inb(f, 0x61) & 0x0f, ==, 0x03);
    set_time_tick(f, 150);
    g_assert_cmpuint(read_count_latched(f, 2), ==, 1);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0);
    set_time_tick(f, 151);
    g_assert_cmpuint(inb(f, 0x61) & 0x20, ==, 0x20);
    /* Channel 2 never interrupts. */
    g_assert_cmpuint(irq0_count(f), ==, 0);
}

static void test_refresh_toggle(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* Bit 4 flips every 18 PIT clocks (15.085 us). */
    set_time_tick(f, 0);
    g_assert_cmpuint(inb(f, 0x61) & 0x10, ==, 0);
    set_time_tick(f, 17);
    g_assert_cmpuint(inb(f, 0x61) & 0x10, ==, 0);
    set_time_tick(f, 18);
    g_assert_cmpuint(inb(f, 0x61) & 0x10, ==, 0x10);
    g_assert_cmpuint(ns_of_tick(18), ==, 15086);
    set_time_tick(f, 36);
    g_assert_cmpuint(inb(f, 0x61) & 0x10, ==, 0);
}

/* arch/x86/kernel/tsc.c pit_calibrate_tsc(): the loop must end, with a
 * steady per-iteration cost as a cycle-counted CPU gives it. */
static void test_linux_pit_calibrate_tsc(pc_fixture *f, gconstpointer data)
{
    (void)data;
    const uint64_t latch = 1193182 / (1000 / 10); /* CAL_LATCH for 10 ms */
    outb(f, 0x61, (uint8_t)((inb(f, 0x61) & ~0x02) | 0x01));
    outb(f, 0x43, 0xb0);
    outb(f, 0x42, latch & 0xff);
    outb(f, 0x42, (uint8_t)(latch >> 8));
    uint64_t loops = 0;
    while ((inb(f, 0x61) & 0x20) == 0) {
        f->m->clock.cycles += 40; /* one loop iteration on the CPU */
        loops++;
        g_assert_cmpuint(loops, <, 100000);
    }
    /* 10 ms at 66.67 MHz in 40-cycle loops: about 16,700. */
    uint64_t ns = nm_clock_now_ns(&f->m->clock);
    g_assert_cmpuint(ns, >=, ns_of_tick(latch + 1));
    g_assert_cmpuint(ns, <, ns_of_tick(latch + 2));
    g_assert_cmpuint(loops, >, 1000); /* CAL_PIT_LOOPS */
}

/* quick_pit_calibrate(): unlatched LSB/MSB reads of channel 2 in mode 0
 * from 0xffff; the MSB must count down 0xff, 0xfe, ... */
static void test_linux_quick_pit_calibrate(pc_fixture *f, gconstpointer data)
{
    (void)data;
    outb(f, 0x61, (uint8_t)((inb(f, 0x61) & ~0x02) | 0x01));
    outb(f, 0x43, 0xb0);
    outb(f, 0x42, 0xff);
    outb(f, 0x42, 0xff);
    f->m->clock.cycles += 100;
    inb(f, 0x42);
    inb(f, 0x42); /* pit_verify_msb(0): one 16-bit read */
    for (unsigned expect = 0xff; expect > 0xf0; expect--) {
        unsigned count = 0;
        for (;;) {
            inb(f, 0x42);
            if (inb(f, 0x42) != expect) break;
            f->m->clock.cycles += 30;
            count++;
            g_assert_cmpuint(count, <, 50000);
        }
        g_assert_cmpuint(count, >, 5);
    }
}

static void test_hostile_writes(pc_fixture *f, gconstpointer data)
{
    (void)data;
    for (unsigned v = 0; v < 256; v++) {
        outb(f, 0x43, (uint8_t)v);
        outb(f, 0x40 + v % 3, (uint8_t)(v * 7));
        outb(f, 0x40 + v % 3, (uint8_t)(v * 5));
        outb(f, 0x61, (uint8_t)v);
        inb(f, 0x40 + (v + 1) % 3);
        inb(f, 0x43);
        f->m->clock.cycles += 1000;
        nm_clock_run_due(&f->m->clock);
    }
    /* Mode 2 with the illegal count 1 does not flood the event queue. */
    outb(f, 0x43, 0x34);
    outb(f, 0x40, 1);
    outb(f, 0x40, 0);
    f->m->clock.cycles += 1000000;
    g_assert_cmpuint(nm_clock_run_due(&f->m->clock), <, 10);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add("/pc/pit/" path, pc_fixture, NULL, setup, fn, pc_teardown)
    ADD("mode0-countdown", test_mode0_countdown);
    ADD("mode2-exact-period", test_mode2_and_exact_period);
    ADD("mode3-square-wave-out2", test_mode3_square_wave_on_out2);
    ADD("mode4-oneshot", test_mode4_oneshot);
    ADD("latch-and-readback", test_latch_and_readback);
    ADD("gate2-and-port61", test_gate2_and_port61);
    ADD("refresh-toggle", test_refresh_toggle);
    ADD("linux-pit-calibrate-tsc", test_linux_pit_calibrate_tsc);
    ADD("linux-quick-pit-calibrate", test_linux_quick_pit_calibrate);
    ADD("hostile-writes", test_hostile_writes);
#undef ADD
    return g_test_run();
}
