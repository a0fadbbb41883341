/* The guest profiler: clocks and instructions per guest function (self and
 * inclusive) and per program, and the cost per packet of the NIC under test.
 *
 * It observes the CPU through the timing framework (nm_timing_set_observer,
 * cpu/timing/timing.h): every instruction with the clocks the cost model
 * charged.  Each instruction's clocks are the clock's advance since the
 * previous one ended, so bus wait states, exception overhead and the idle
 * time after HLT (a pseudo-function "(idle)") are attributed too, and the
 * self times add up to the window's clocks exactly.
 *
 * Inclusive times come from shadow call stacks: CALL pushes, RET pops to
 * the frame whose return address it goes to (a RET that matches no frame is
 * counted as a resync and pops nothing); an interrupt or exception pushes a
 * frame that IRET pops.  One shadow stack per kernel stack (ESP's
 * `stack region`-aligned block: a task, an IRQ stack) and per address space
 * in user mode, so a task switch parks the frames of the task it leaves:
 * inclusive time is the time a function's task ran while it was open.  A
 * recursive function's inclusive time counts its outermost frame only.
 * Functions already running when the window opens get no inclusive time for
 * that part.  docs/profiler.md has the details. */
#ifndef NICEMU_PROFILER_H
#define NICEMU_PROFILER_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include "cpu/timing/timing.h"
#include "emu/core/clock.h"
#include "emu/core/report.h"
#include "emu/symbols.h"

typedef struct nm_machine nm_machine;
typedef struct nm_profiler nm_profiler;

/* Linux i386 THREAD_SIZE: kernel and IRQ stacks are this size and aligned
 * to it (arch/x86/include/asm/page_32_types.h). */
#define NM_PROFILER_STACK_REGION 8192u

/* From the machine's configuration: symbols (--system-map or System.map
 * beside --kernel, --symbols, the programs beside each --initrd), profile
 * scope (--profile-from), the kernel stack size (--profile-stack-region),
 * the NIC under test (--measure-nic).  Profiling
 * (the per-instruction observer) is on with --profile, --profile-top,
 * --symbols, --system-map or --profile-from; the per-packet figures are
 * always kept.  NULL and one clear error on bad input. */
nm_profiler *nm_profiler_new(nm_machine *m, GError **err);
void nm_profiler_free(nm_profiler *p);
/* Ends the profile at the end of the run (closes an open window's part). */
void nm_profiler_finish(nm_profiler *p);
/* Sections "profile", "profile-programs" and "packets". */
void nm_profiler_report(nm_profiler *p, nm_report *r);
/* The table printed with --profile. */
void nm_profiler_print(nm_profiler *p, FILE *out);

/* Live figures for an observer (the display window); reading them changes
 * nothing.  The NIC under test's frames and the clocks of the measurement
 * window so far (open window included); false without a NIC. */
bool nm_profiler_packets_so_far(nm_profiler *p, uint64_t *frames, uint64_t *clocks);
/* The `n` functions with the most self clocks so far, most first: names
 * (valid until the next call) and clocks; returns how many (0: profiling
 * off). */
unsigned nm_profiler_top(nm_profiler *p, unsigned n, const char **names, uint64_t *clocks);

/* ---- the core, without a machine (unit tests) ---- */

/* `clock` is read for the cycle and bus-wait counters. */
nm_profiler *nm_profiler_new_bare(nm_clock *clock);
/* Adds a symbol table (taken over).  `kernel`: used at CPL 0-2 first. */
void nm_profiler_add_symbols(nm_profiler *p, nm_symtab *t, bool kernel);
/* The size and alignment of a kernel stack (a power of two; 0: one shadow
 * stack for everything).  Before the first start. */
void nm_profiler_set_stack_region(nm_profiler *p, uint32_t bytes);
/* Starts / stops attributing (a measurement window). */
void nm_profiler_start(nm_profiler *p);
void nm_profiler_stop(nm_profiler *p);
const nm_timing_observer *nm_profiler_observer(nm_profiler *p);

/* A function's totals, by name (first match; NULL: not seen). */
typedef struct nm_profile_entry {
    const char *name;
    const char *where; /* table label: "vmlinux", a program, or "" */
    uint64_t self_clocks, self_insns, self_bus;
    uint64_t incl_clocks, incl_insns;
    uint64_t calls;
    /* Hardware interrupts that landed while it was open (its outermost
     * frames), the clocks they took (their handlers up to the IRET:
     * softirqs run on the way out included), and incl_clocks less those. */
    uint64_t irqs_inside, irq_clocks_inside, incl_no_irq;
} nm_profile_entry;
bool nm_profiler_get(nm_profiler *p, const char *name, nm_profile_entry *out);

/* Marks every function named `name` for a per-call distribution and, with
 * `callers`, for the callers-and-callees report (--profile-callers).  After
 * the symbol tables are added.  false: no symbol has that name. */
bool nm_profiler_watch(nm_profiler *p, const char *name, bool callers);
/* One edge of the call graph seen from a function: the caller (or callee),
 * the calls along it and the callee's inclusive clocks on those calls
 * (each call's own length), with and without the hardware interrupts that
 * landed in them.  Callers that are not functions: "(hardware interrupt)",
 * "(exception or INT n)" (interrupt frames). */
typedef struct nm_profile_arc {
    const char *name;
    uint64_t calls, incl_clocks, incl_no_irq;
} nm_profile_arc;
/* The callers (callees: false) of `name`, most calls first, edges from
 * functions of one name merged; stores at most `max`, returns how many
 * there are. */
unsigned nm_profiler_arcs(nm_profiler *p, const char *name, bool callers, nm_profile_arc *out,
                          unsigned max);
/* A watched function's per-call inclusive clocks, hardware interrupts
 * excluded: exact calls, min, max, sum; median and p90 (nearest rank) to
 * bucket resolution: the lower edge of the histogram bucket holding them
 * (exact below 16, else buckets an eighth of an octave wide: the true value
 * is at most 12.5 % above); log2[0]: calls of 0 clocks, log2[k]: calls of
 * [2^(k-1), 2^k) clocks. */
typedef struct nm_profile_dist {
    uint64_t calls, min, max, sum, median, p90;
    uint64_t log2[65];
} nm_profile_dist;
bool nm_profiler_dist(nm_profiler *p, const char *name, nm_profile_dist *out);
/* All clocks / instructions attributed. */
void nm_profiler_totals(nm_profiler *p, uint64_t *clocks, uint64_t *insns);
/* Shadow-stack statistics. */
typedef struct nm_profile_stack_stats {
    unsigned depth, max_depth; /* frames open on all stacks; the deepest stack */
    uint64_t resyncs;          /* RET/IRET matching no frame */
    uint64_t unwound;          /* frames popped without their own RET (a deeper match) */
    uint64_t overflows;
    uint64_t contexts;  /* shadow stacks started (tasks, IRQ stacks, address spaces) */
    uint64_t switches;  /* task switches: the running stacks parked, others resumed */
    uint64_t nested;    /* stacks entered on top of the running ones (IRQ stack…) */
    uint64_t evictions; /* parked stacks forgotten (more than the profiler keeps) */
} nm_profile_stack_stats;
void nm_profiler_stack_stats(nm_profiler *p, nm_profile_stack_stats *out);

/* The function-name sets of the per-packet report (drivers and the network
 * stack's hot path), as data: docs/profiler.md lists them.  Returns the set
 * ("8390", "ne", "wd", "e1000", "ks8851", "stack") `name` belongs to, or
 * NULL. */
const char *nm_profiler_function_set(const char *name);

#endif
