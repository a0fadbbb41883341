/* A machine: the clock, the physical memory and I/O maps, the IRQ lines, the
 * CPU and the devices.  Everything a device needs it reaches through this
 * struct; nothing here is global.  The application builds it from one
 * nm_config (emu/machine.h: nm_machine_new); devices and the CPU see only
 * this core part (emu/core/README.md: who may include whom). */
#ifndef NICEMU_CORE_MACHINE_H
#define NICEMU_CORE_MACHINE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/core/clock.h"
#include "emu/core/devcfg.h"
#include "emu/core/device.h"
#include "emu/core/ioport.h"
#include "emu/core/irq.h"
#include "emu/core/memmap.h"
#include "emu/core/report.h"

typedef struct nm_cpu nm_cpu;
/* Opaque here: the application's configuration (emu/config.h) and the CPU
 * model (cpu/models.h, which the CPU and the cost models include). */
struct nm_config;
struct nm_cpu_model;

typedef enum {
    NM_STOP_NONE = 0,
    NM_STOP_EXIT_PORT, /* the guest wrote its status to the exit port */
    NM_STOP_HALT,      /* HLT with interrupts disabled: nothing can wake it */
    NM_STOP_RESET,     /* triple fault or a reset request (reported as such) */
    NM_STOP_MAX_INSTRUCTIONS,
    NM_STOP_MAX_TIME,
    NM_STOP_SIGNAL,
    NM_STOP_ERROR, /* an emulator error (not the guest's), e.g. a capture write failed */
    NM_STOP_PANIC, /* the guest kernel panicked (its console said so) */
    NM_STOP_SAVED, /* --save-state-exit: the state is saved (emu/snapshot.h) */
} nm_stop_reason;

const char *nm_stop_reason_name(nm_stop_reason why);

typedef struct nm_device_instance {
    const nm_device_class *cls;
    void *state;
    char *name;
} nm_device_instance;

/* The interrupt controller as the CPU sees it: the INTR pin and the
 * interrupt-acknowledge cycle that returns a vector. */
typedef struct nm_intc {
    uint8_t (*acknowledge)(void *opaque);
    void *opaque;
} nm_intc;

/* The measurement window (docs/cost-models.md) as the machine core sees
 * it: a port device (devices/pc/marker.c) decodes the guest's writes and
 * calls these; the application's measurement module (emu/measure.c) fills
 * them in and owns the window, its counters, its listeners and the
 * cost-model switch.  NULL ops: nothing measures on this machine. */
typedef struct nm_window_ops {
    void (*set)(void *opaque, bool open); /* the guest opened (true) or closed it */
    bool (*is_open)(void *opaque);
    void (*report)(void *opaque, nm_report *r); /* its counters, in the port's report */
    void (*destroy)(void *opaque);              /* by nm_machine_free, after the devices */
} nm_window_ops;

/* What devices and the CPU are told of the configuration: copied from the
 * nm_config by nm_machine_new (emu/machine.c). */
typedef struct nm_machine_settings {
    uint64_t ram_bytes;     /* RAM from address 0 (the RTC's CMOS memory sizes) */
    uint64_t rtc_epoch;     /* seconds since 1970 the RTC starts at */
    int post_port;          /* a second POST code port (-1: none) */
    bool strict_isa;        /* a 386 raises #UD on 486-only instructions */
    bool poll_fast_forward; /* the CPU may fast-forward a poll loop (cpu/poll.c) */
    /* What the host puts in the guest's mailbox (devices/pc/mailbox.c; NULL:
     * nothing): the command init reads after the snapshot point. */
    const char *mailbox;
} nm_machine_settings;

struct nm_machine {
    const struct nm_config *cfg; /* the application's; not read below emu/ */
    void *app_snapshot;          /* the application's snapshot state (emu/snapshot.c) */
    const struct nm_cpu_model *model;
    /* --mhz, --fpu 387: the copy `model` points to, owned; else NULL */
    struct nm_cpu_model *model_at_mhz;
    nm_machine_settings settings;
    nm_clock clock;
    nm_memmap *mem;
    nm_ioport_map *io;
    nm_irq_bus irq;
    nm_mem_region *ram;
    nm_cpu *cpu;
    /* The cost-model state (nm_timing*, cpu/timing/timing.h); owned by the
     * measurement window (emu/measure.c), NULL without one. */
    void *timing;
    /* The measurement window (above) and the port device that drives it
     * (one per machine). */
    const nm_window_ops *window_ops;
    void *window_opaque;
    void *window_port;
    nm_intc intc;
    bool intr; /* the CPU's INTR input, driven by the interrupt controller */
    bool a20;  /* A20 gate open */
    /* Told when the A20 gate changes (the CPU masks address bit 20). */
    void (*a20_listener)(void *opaque, bool enabled);
    void *a20_listener_opaque;
    /* The x87's FERR# output (the CPU drives it) and the IGNNE# input (the
     * board drives it): the PC's FPU error path through IRQ 13 and port
     * 0xF0 (devices/pc/fpuerr.c), told of FERR# through the listener. */
    bool ferr, ignne;
    void (*ferr_listener)(void *opaque, bool asserted);
    void *ferr_listener_opaque;
    GPtrArray *devices; /* nm_device_instance*, in creation order */
    /* Serial output so far (every UART counts; COM1 is the console): bytes
     * put on the line and their transmit time.  The measurement window warns
     * when the guest printed inside it (docs/cost-models.md). */
    uint64_t console_tx_bytes, console_tx_ns;
    /* Called by the run loop between CPU slices (nm_machine_run_pollers). */
    GArray *pollers; /* nm_machine_poller */

    /* Why and how the run ended.  `stop_requested` is polled by the CPU loop
     * (a volatile flag, so a signal handler may set it): NM_STOP_REQUESTED,
     * or NM_BREAK_REQUESTED when the run loop only has to look at something
     * between two instructions (the snapshot point) and runs on. */
    volatile int stop_requested;
    volatile int stop_signal; /* the signal that stopped the run, or 0 */
    nm_stop_reason stop_reason;
    int exit_status;
    char *stop_detail;

    /* The run loop's max-virtual-time event (emu/run.c): a machine timer, so
     * that a snapshot saves it with the others. */
    nm_timer max_time;
    /* The guest reached the snapshot point (the marker port, docs/
     * snapshots.md): the run loop saves there if asked to, before the next
     * instruction.  `snapshot_points` counts them. */
    bool snapshot_pending;
    uint64_t snapshot_points;
};

#define NM_STOP_REQUESTED  1
#define NM_BREAK_REQUESTED 2

/* Creates one device from its configuration and adds it to the machine. */
void *nm_machine_add_device(nm_machine *m, const nm_device_class *cls, const nm_devcfg *cfg,
                            GError **err);
/* Resets every device (in creation order) and the CPU. */
void nm_machine_reset(nm_machine *m);

/* Ends the run after the current instruction.  The first request wins. */
void nm_machine_request_stop(nm_machine *m, nm_stop_reason why, int exit_status,
                             const char *detail);
/* The guest reached the snapshot point: the CPU loop returns to the run loop
 * after the current instruction, which handles it and runs on. */
void nm_machine_snapshot_point(nm_machine *m);

/* A "poll between slices" callback: the run loop calls every poller, in the
 * order added, after the events due at the end of each CPU slice.  For host
 * I/O at a real-world boundary (slirp's sockets); a poller may block on host
 * time briefly (slirp paces virtual time to host time that way).  Pollers
 * live as long as the machine. */
typedef struct nm_machine_poller {
    void (*fn)(void *opaque);
    void *opaque;
} nm_machine_poller;

void nm_machine_add_poller(nm_machine *m, void (*fn)(void *opaque), void *opaque);

static inline void nm_machine_run_pollers(nm_machine *m)
{
    for (guint i = 0; i < m->pollers->len; i++) {
        const nm_machine_poller *p = &g_array_index(m->pollers, nm_machine_poller, i);
        p->fn(p->opaque);
    }
}

/* Drives the CPU's INTR input (called by the interrupt controller). */
static inline void nm_machine_set_intr(nm_machine *m, bool level)
{
    m->intr = level;
}

/* The guest opened or closed the measurement window (a no-op without one). */
static inline void nm_machine_window_set(nm_machine *m, bool open)
{
    if (m->window_ops) m->window_ops->set(m->window_opaque, open);
}

static inline bool nm_machine_window_is_open(nm_machine *m)
{
    return m->window_ops && m->window_ops->is_open(m->window_opaque);
}

/* The CPU's FERR# output changed (cpu/fpu.c). */
static inline void nm_machine_set_ferr(nm_machine *m, bool asserted)
{
    m->ferr = asserted;
    if (m->ferr_listener) m->ferr_listener(m->ferr_listener_opaque, asserted);
}

/* The A20 gate (port 0x92, the keyboard controller's output port): when
 * closed, the CPU's address line 20 is forced to 0. */
void nm_machine_set_a20(nm_machine *m, bool enabled);

#endif
