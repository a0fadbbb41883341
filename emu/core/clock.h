/* The one clock: the CPU's cycle counter, and the event queue that devices
 * schedule on.  Devices speak nanoseconds of virtual time; the queue keeps
 * absolute cycles.  Conversions are exact integer arithmetic on absolute
 * values (never accumulated deltas), so there is no drift however long a run. */
#ifndef NICEMU_CLOCK_H
#define NICEMU_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

typedef struct nm_clock nm_clock;
typedef struct nm_timer nm_timer;

/* `late_cycles`: how far past its due time the event fires (the CPU finishes
 * the instruction it is in, so this is usually a few cycles). */
typedef void (*nm_timer_fn)(void *opaque, uint64_t late_cycles);

struct nm_timer {
    nm_timer *next;
    uint64_t due; /* absolute cycle */
    uint64_t seq; /* scheduling order: breaks ties deterministically */
    nm_timer_fn fn;
    void *opaque;
    const char *name;
    bool pending;
};

struct nm_clock {
    /* The CPU cycle counter: the only time there is.  The CPU adds to it. */
    uint64_t cycles;
    /* Cycle at which the earliest pending event is due (UINT64_MAX: none).
     * The CPU compares against this after each instruction. */
    uint64_t deadline;
    /* CPU frequency as an exact fraction hz_num/hz_den (66 2/3 MHz is
     * 200000000/3).  Conversions: cycles = ns*hz_num / (hz_den*1e9). */
    uint64_t hz_num, hz_den;
    nm_timer *head; /* sorted by (due, seq) */
    uint64_t next_seq;
    uint64_t events_fired;
    /* Cycles charged for bus wait states (a subset of `cycles`). */
    uint64_t bus_wait_cycles;
};

void nm_clock_init(nm_clock *c, uint64_t hz_num, uint64_t hz_den);
void nm_clock_set_frequency(nm_clock *c, uint64_t hz_num, uint64_t hz_den);

/* Exact conversions.  cycles_from_ns rounds up: an event due at time t fires
 * at the first cycle whose start is not before t.  ns_from_cycles rounds down. */
uint64_t nm_clock_cycles_from_ns(const nm_clock *c, uint64_t ns);
uint64_t nm_clock_ns_from_cycles(const nm_clock *c, uint64_t cycles);
static inline uint64_t nm_clock_now_ns(const nm_clock *c)
{
    return nm_clock_ns_from_cycles(c, c->cycles);
}
/* Cycles a duration of `ns` takes, rounded up (for bus wait states). */
uint64_t nm_clock_duration_cycles(const nm_clock *c, uint64_t ns);

void nm_timer_init(nm_timer *t, nm_timer_fn fn, void *opaque, const char *name);
/* (Re)schedule at an absolute virtual time in ns / cycles, or after a delay
 * from now.  Rescheduling a pending timer moves it. */
void nm_timer_at_ns(nm_clock *c, nm_timer *t, uint64_t abs_ns);
void nm_timer_after_ns(nm_clock *c, nm_timer *t, uint64_t delay_ns);
void nm_timer_at_cycle(nm_clock *c, nm_timer *t, uint64_t abs_cycle);
void nm_timer_cancel(nm_clock *c, nm_timer *t);
static inline bool nm_timer_pending(const nm_timer *t)
{
    return t->pending;
}

/* Fire every event due at or before the current cycle, in (due, seq) order,
 * including events that callbacks schedule for "now".  Returns how many fired. */
unsigned nm_clock_run_due(nm_clock *c);

/* Advance time to the next event (the CPU is halted).  Returns false when no
 * event is pending (nothing would ever wake the CPU). */
bool nm_clock_skip_to_deadline(nm_clock *c);

/* Charge bus wait cycles to the CPU: time passes before the access happens. */
static inline void nm_clock_charge_bus(nm_clock *c, uint64_t cycles)
{
    c->cycles += cycles;
    c->bus_wait_cycles += cycles;
}

#endif
