#include "emu/core/clock.h"

#include <assert.h>
#include <stddef.h>

#define NS_PER_SECOND 1000000000u

void nm_clock_init(nm_clock *c, uint64_t hz_num, uint64_t hz_den)
{
    *c = (nm_clock){.deadline = UINT64_MAX};
    nm_clock_set_frequency(c, hz_num, hz_den);
}

void nm_clock_set_frequency(nm_clock *c, uint64_t hz_num, uint64_t hz_den)
{
    assert(hz_num > 0 && hz_den > 0);
    c->hz_num = hz_num;
    c->hz_den = hz_den;
}

/* 128-bit intermediates: ns up to 2^64 times hz up to ~2^28 does not fit 64. */
uint64_t nm_clock_cycles_from_ns(const nm_clock *c, uint64_t ns)
{
    unsigned __int128 num = (unsigned __int128)ns * c->hz_num;
    unsigned __int128 den = (unsigned __int128)c->hz_den * NS_PER_SECOND;
    unsigned __int128 q = (num + den - 1) / den;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

uint64_t nm_clock_ns_from_cycles(const nm_clock *c, uint64_t cycles)
{
    unsigned __int128 num = (unsigned __int128)cycles * c->hz_den * NS_PER_SECOND;
    unsigned __int128 q = num / c->hz_num;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

uint64_t nm_clock_duration_cycles(const nm_clock *c, uint64_t ns)
{
    return nm_clock_cycles_from_ns(c, ns);
}

void nm_timer_init(nm_timer *t, nm_timer_fn fn, void *opaque, const char *name)
{
    *t = (nm_timer){.fn = fn, .opaque = opaque, .name = name};
}

static void unlink_timer(nm_clock *c, nm_timer *t)
{
    for (nm_timer **p = &c->head; *p; p = &(*p)->next) {
        if (*p == t) {
            *p = t->next;
            break;
        }
    }
    t->next = NULL;
    t->pending = false;
    c->deadline = c->head ? c->head->due : UINT64_MAX;
}

void nm_timer_at_cycle(nm_clock *c, nm_timer *t, uint64_t abs_cycle)
{
    if (t->pending) unlink_timer(c, t);
    t->due = abs_cycle;
    t->seq = c->next_seq++;
    t->pending = true;
    /* The queue is short (a few timers per device): a sorted list is simplest
     * and its order is exactly (due, seq). */
    nm_timer **p = &c->head;
    while (*p && (*p)->due <= abs_cycle)
        p = &(*p)->next;
    t->next = *p;
    *p = t;
    c->deadline = c->head->due;
}

void nm_timer_at_ns(nm_clock *c, nm_timer *t, uint64_t abs_ns)
{
    nm_timer_at_cycle(c, t, nm_clock_cycles_from_ns(c, abs_ns));
}

void nm_timer_after_ns(nm_clock *c, nm_timer *t, uint64_t delay_ns)
{
    /* From the current virtual time in ns, so that a device that keeps
     * rescheduling itself every N ns does not drift by rounding. */
    nm_timer_at_ns(c, t, nm_clock_now_ns(c) + delay_ns);
}

void nm_timer_cancel(nm_clock *c, nm_timer *t)
{
    if (t->pending) unlink_timer(c, t);
}

unsigned nm_clock_run_due(nm_clock *c)
{
    unsigned fired = 0;
    while (c->head && c->head->due <= c->cycles) {
        nm_timer *t = c->head;
        c->head = t->next;
        t->next = NULL;
        t->pending = false;
        c->deadline = c->head ? c->head->due : UINT64_MAX;
        fired++;
        c->events_fired++;
        t->fn(t->opaque, c->cycles - t->due);
    }
    return fired;
}

bool nm_clock_skip_to_deadline(nm_clock *c)
{
    if (!c->head) return false;
    if (c->cycles < c->head->due) c->cycles = c->head->due;
    return true;
}
