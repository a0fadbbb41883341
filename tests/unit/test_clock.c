/* The virtual clock and event queue: ordering, ties, cancellation, events
 * scheduled from inside events, and exact ns<->cycle conversion. */
#include <glib.h>

#include "emu/core/clock.h"

typedef struct {
    nm_clock *clock;
    GString *log;
    nm_timer *chain; /* scheduled from inside the callback, if set */
    uint64_t chain_delay_ns;
} recorder;

typedef struct {
    recorder *rec;
    char tag;
    nm_timer timer;
} tagged_timer;

static void record(void *opaque, uint64_t late)
{
    (void)late;
    tagged_timer *t = opaque;
    g_string_append_c(t->rec->log, t->tag);
    if (t->rec->chain && t->tag == 'a') {
        nm_timer_after_ns(t->rec->clock, t->rec->chain, t->rec->chain_delay_ns);
        t->rec->chain = NULL;
    }
}

static void init_tagged(tagged_timer *t, recorder *rec, char tag)
{
    t->rec = rec;
    t->tag = tag;
    nm_timer_init(&t->timer, record, t, "test");
}

static void test_order_and_ties(void)
{
    nm_clock c;
    nm_clock_init(&c, 100000000, 1); /* 100 MHz: 10 ns per cycle */
    recorder rec = {.clock = &c, .log = g_string_new(NULL)};
    tagged_timer t[5];
    const char tags[] = "abcde";
    for (int i = 0; i < 5; i++)
        init_tagged(&t[i], &rec, tags[i]);
    nm_timer_at_ns(&c, &t[0].timer, 500); /* cycle 50 */
    nm_timer_at_ns(&c, &t[1].timer, 100); /* cycle 10 */
    nm_timer_at_ns(&c, &t[2].timer, 500); /* tie with a: after it */
    nm_timer_at_ns(&c, &t[3].timer, 300);
    nm_timer_at_ns(&c, &t[4].timer, 500); /* tie: last */
    g_assert_cmpuint(c.deadline, ==, 10);

    c.cycles = 9;
    g_assert_cmpuint(nm_clock_run_due(&c), ==, 0);
    c.cycles = 10;
    g_assert_cmpuint(nm_clock_run_due(&c), ==, 1);
    g_assert_cmpstr(rec.log->str, ==, "b");
    g_assert_cmpuint(c.deadline, ==, 30);
    c.cycles = 1000;
    g_assert_cmpuint(nm_clock_run_due(&c), ==, 4);
    g_assert_cmpstr(rec.log->str, ==, "bdace");
    g_assert_cmpuint(c.deadline, ==, UINT64_MAX);
    g_assert_cmpuint(c.events_fired, ==, 5);
    g_string_free(rec.log, TRUE);
}

static void test_cancel_and_reschedule(void)
{
    nm_clock c;
    nm_clock_init(&c, 33000000, 1);
    recorder rec = {.clock = &c, .log = g_string_new(NULL)};
    tagged_timer a, b, d;
    init_tagged(&a, &rec, 'a');
    init_tagged(&b, &rec, 'b');
    init_tagged(&d, &rec, 'd');
    nm_timer_at_cycle(&c, &a.timer, 100);
    nm_timer_at_cycle(&c, &b.timer, 200);
    nm_timer_at_cycle(&c, &d.timer, 300);
    nm_timer_cancel(&c, &a.timer);
    g_assert_false(nm_timer_pending(&a.timer));
    g_assert_cmpuint(c.deadline, ==, 200);
    nm_timer_cancel(&c, &a.timer);        /* cancelling twice is harmless */
    nm_timer_at_cycle(&c, &d.timer, 150); /* moving a pending timer */
    g_assert_cmpuint(c.deadline, ==, 150);
    nm_timer_cancel(&c, &b.timer);
    c.cycles = 1000;
    nm_clock_run_due(&c);
    g_assert_cmpstr(rec.log->str, ==, "d");
    g_string_free(rec.log, TRUE);
}

static void test_schedule_from_callback(void)
{
    nm_clock c;
    nm_clock_init(&c, 40000000, 1); /* 25 ns per cycle */
    recorder rec = {.clock = &c, .log = g_string_new(NULL)};
    tagged_timer a, b, z;
    init_tagged(&a, &rec, 'a');
    init_tagged(&b, &rec, 'b');
    init_tagged(&z, &rec, 'z');
    /* a fires at cycle 4 and schedules z for "now": z fires in the same run,
     * before b (due later). */
    rec.chain = &z.timer;
    rec.chain_delay_ns = 0;
    nm_timer_at_cycle(&c, &a.timer, 4);
    nm_timer_at_cycle(&c, &b.timer, 8);
    c.cycles = 4;
    g_assert_cmpuint(nm_clock_run_due(&c), ==, 2);
    g_assert_cmpstr(rec.log->str, ==, "az");
    c.cycles = 10;
    g_assert_cmpuint(nm_clock_run_due(&c), ==, 1);
    g_assert_cmpstr(rec.log->str, ==, "azb");
    /* Running late: "now" is the current cycle, so an event a late callback
     * schedules for now comes after one that was due before now. */
    g_string_truncate(rec.log, 0);
    rec.chain = &z.timer;
    nm_timer_at_cycle(&c, &a.timer, 12);
    nm_timer_at_cycle(&c, &b.timer, 15);
    c.cycles = 20;
    g_assert_cmpuint(nm_clock_run_due(&c), ==, 3);
    g_assert_cmpstr(rec.log->str, ==, "abz");

    /* Scheduled from a callback into the future: stays pending. */
    g_string_truncate(rec.log, 0);
    rec.chain = &z.timer;
    rec.chain_delay_ns = 1000; /* 40 cycles after now (cycle 20 = 500 ns) */
    nm_timer_at_cycle(&c, &a.timer, 10);
    nm_clock_run_due(&c);
    g_assert_cmpstr(rec.log->str, ==, "a");
    g_assert_true(nm_timer_pending(&z.timer));
    g_assert_cmpuint(z.timer.due, ==, 60);
    g_assert_true(nm_clock_skip_to_deadline(&c));
    g_assert_cmpuint(c.cycles, ==, 60);
    nm_clock_run_due(&c);
    g_assert_cmpstr(rec.log->str, ==, "az");
    g_assert_false(nm_clock_skip_to_deadline(&c));
    g_string_free(rec.log, TRUE);
}

static void late_recorder(void *opaque, uint64_t late)
{
    *(uint64_t *)opaque = late;
}

static void test_late(void)
{
    nm_clock c;
    nm_clock_init(&c, 66000000, 1);
    uint64_t late = 99;
    nm_timer t;
    nm_timer_init(&t, late_recorder, &late, "late");
    nm_timer_at_cycle(&c, &t, 100);
    c.cycles = 107;
    nm_clock_run_due(&c);
    g_assert_cmpuint(late, ==, 7);
}

/* At each frequency: conversions are exact at 10^12 cycles (no drift),
 * round-trip, and round the right way. */
static void test_conversion_exact(void)
{
    static const struct {
        uint64_t num, den;
    } freqs[] = {{25000000, 1},
                 {33000000, 1},
                 {40000000, 1},
                 {66000000, 1},
                 {60000000, 1},
                 {100000000, 1},
                 {133000000, 1},
                 /* the real 33 1/3, 66 2/3 and 133 1/3 MHz parts */
                 {100000000, 3},
                 {200000000, 3},
                 {400000000, 3}};
    for (size_t i = 0; i < G_N_ELEMENTS(freqs); i++) {
        nm_clock c;
        nm_clock_init(&c, freqs[i].num, freqs[i].den);
        /* One second of virtual time is exactly hz cycles when hz is whole. */
        if (freqs[i].den == 1) {
            g_assert_cmpuint(nm_clock_cycles_from_ns(&c, 1000000000u), ==, freqs[i].num);
            g_assert_cmpuint(nm_clock_ns_from_cycles(&c, freqs[i].num), ==, 1000000000u);
        } else {
            /* 3 seconds is exactly num cycles. */
            g_assert_cmpuint(nm_clock_cycles_from_ns(&c, 3000000000u), ==, freqs[i].num);
        }
        /* 10^12 cycles: computed directly, equals (10^12 * 10^9 * den / num)
         * exactly, whatever steps got us there. */
        uint64_t big = 1000000000000ull;
        unsigned __int128 want = (unsigned __int128)big * 1000000000u * freqs[i].den / freqs[i].num;
        g_assert_true(nm_clock_ns_from_cycles(&c, big) == (uint64_t)want);
        /* A timer re-armed every 1 ms for 10^6 periods (1000 s) lands exactly
         * where one armed for 1000 s does: scheduling is from absolute ns. */
        uint64_t ns = 0, cycle_via_steps = 0;
        for (int k = 0; k < 1000000; k++) {
            ns += 1000000;
            cycle_via_steps = nm_clock_cycles_from_ns(&c, ns);
        }
        g_assert_cmpuint(cycle_via_steps, ==, nm_clock_cycles_from_ns(&c, 1000000000000ull));
        /* Round trip: cycles -> ns -> cycles is the identity. */
        for (uint64_t cyc = 0; cyc < 2000; cyc += 7) {
            uint64_t t = nm_clock_ns_from_cycles(&c, cyc);
            g_assert_cmpuint(nm_clock_cycles_from_ns(&c, t), <=, cyc);
            g_assert_cmpuint(nm_clock_ns_from_cycles(&c, nm_clock_cycles_from_ns(&c, t)), ==, t);
        }
    }
}

static void test_conversion_rounding(void)
{
    nm_clock c;
    nm_clock_init(&c, 33000000, 1); /* 30.303... ns per cycle */
    g_assert_cmpuint(nm_clock_cycles_from_ns(&c, 0), ==, 0);
    g_assert_cmpuint(nm_clock_cycles_from_ns(&c, 1), ==, 1); /* rounds up */
    g_assert_cmpuint(nm_clock_cycles_from_ns(&c, 30), ==, 1);
    g_assert_cmpuint(nm_clock_cycles_from_ns(&c, 31), ==, 2);
    g_assert_cmpuint(nm_clock_ns_from_cycles(&c, 1), ==, 30); /* rounds down */
    g_assert_cmpuint(nm_clock_ns_from_cycles(&c, 33), ==, 1000);
    /* ISA bus cycle of 120 ns at 33 MHz: 3.96 -> 4 cycles. */
    g_assert_cmpuint(nm_clock_duration_cycles(&c, 120), ==, 4);
    nm_clock_charge_bus(&c, 4);
    g_assert_cmpuint(c.cycles, ==, 4);
    g_assert_cmpuint(c.bus_wait_cycles, ==, 4);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/clock/order-and-ties", test_order_and_ties);
    g_test_add_func("/clock/cancel-and-reschedule", test_cancel_and_reschedule);
    g_test_add_func("/clock/schedule-from-callback", test_schedule_from_callback);
    g_test_add_func("/clock/late", test_late);
    g_test_add_func("/clock/conversion-exact", test_conversion_exact);
    g_test_add_func("/clock/conversion-rounding", test_conversion_rounding);
    return g_test_run();
}
