#include "emu/run.h"

#include <signal.h>

#include "cpu/cpu.h"
#include "cpu/timing/timing.h"
#include "emu/core/log.h"
#include "emu/snapshot.h"

/* The machine a signal should stop.  Only the signal handler reads it. */
static nm_machine *volatile signal_target;

static void on_signal(int sig)
{
    nm_machine *m = signal_target;
    if (m && m->stop_requested != NM_STOP_REQUESTED) {
        m->stop_signal = sig;
        m->stop_requested = NM_STOP_REQUESTED; /* reason left NONE: read as "signal" below */
    }
}

void nm_run_on_max_time(void *opaque, uint64_t late)
{
    (void)late;
    nm_machine_request_stop(opaque, NM_STOP_MAX_TIME, 0, "max-virtual-time reached");
}

nm_run_result nm_machine_run(nm_machine *m)
{
    nm_run_result r = {0};
    const nm_config *cfg = m->cfg;
    gint64 wall_start = g_get_monotonic_time();

    /* Armed already when the machine was restored with this limit. */
    if (cfg->max_virtual_ns && !nm_timer_pending(&m->max_time))
        nm_timer_at_ns(&m->clock, &m->max_time, cfg->max_virtual_ns);

    /* SIGINT, SIGTERM and SIGHUP (the terminal went away) end the run the
     * same way: the summary and the report still come out. */
    static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa = {.sa_handler = on_signal}, old[G_N_ELEMENTS(stop_signals)];
    sigemptyset(&sa.sa_mask);
    signal_target = m;
    for (size_t i = 0; i < G_N_ELEMENTS(stop_signals); i++)
        sigaction(stop_signals[i], &sa, &old[i]);

    while (m->stop_requested != NM_STOP_REQUESTED) {
        /* The snapshot point (the guest's marker write; docs/snapshots.md):
         * here, between two instructions with nothing half done, the state
         * is what a restored run starts from. */
        if (m->snapshot_pending) {
            m->snapshot_pending = false;
            __sync_bool_compare_and_swap(&m->stop_requested, NM_BREAK_REQUESTED, 0);
            nm_snapshot_at_point(m);
            continue;
        }
        uint64_t budget = UINT64_MAX;
        if (cfg->max_instructions) {
            uint64_t done = nm_cpu_instructions(m->cpu);
            if (done >= cfg->max_instructions) {
                nm_machine_request_stop(m, NM_STOP_MAX_INSTRUCTIONS, 0, "max-instructions reached");
                break;
            }
            budget = cfg->max_instructions - done;
        }
        nm_cpu_run(m->cpu, budget);
        nm_clock_run_due(&m->clock);
        /* Host I/O between slices (slirp): none in deterministic runs. */
        nm_machine_run_pollers(m);
        /* Halted, nothing pending, nothing scheduled: nothing can ever
         * wake the CPU again. */
        if (nm_cpu_halted(m->cpu) && !m->intr && m->clock.deadline == UINT64_MAX &&
            m->stop_requested != NM_STOP_REQUESTED)
            nm_machine_request_stop(m, NM_STOP_HALT, 0, "halted with no event pending");
    }

    for (size_t i = 0; i < G_N_ELEMENTS(stop_signals); i++)
        sigaction(stop_signals[i], &old[i], NULL);
    signal_target = NULL;
    nm_timer_cancel(&m->clock, &m->max_time);

    if (m->stop_reason == NM_STOP_NONE) m->stop_reason = NM_STOP_SIGNAL;
    r.reason = m->stop_reason;
    r.signal = m->stop_signal;
    r.guest_status = m->exit_status;
    r.instructions = nm_cpu_instructions(m->cpu);
    r.cycles = m->clock.cycles;
    r.virtual_ns = nm_clock_now_ns(&m->clock);
    r.wall_seconds = (double)(g_get_monotonic_time() - wall_start) / 1e6;
    return r;
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    }
    return "?";
}

int nm_run_exit_status(const nm_run_result *r)
{
    switch (r->reason) {
    case NM_STOP_EXIT_PORT: return r->guest_status;
    case NM_STOP_HALT:
    case NM_STOP_SAVED: return 0;
    case NM_STOP_RESET: return 3;
    case NM_STOP_MAX_INSTRUCTIONS:
    case NM_STOP_MAX_TIME: return 4;
    case NM_STOP_SIGNAL: return 128 + (r->signal ? r->signal : SIGINT); /* the shell's rule */
    case NM_STOP_PANIC: return 5;
    case NM_STOP_NONE:
    case NM_STOP_ERROR: break;
    }
    return 1;
}

void nm_run_print_summary(const nm_machine *m, const nm_run_result *r, FILE *out)
{
    fprintf(out, "nicemu: run ended: %s", nm_stop_reason_name(r->reason));
    if (r->reason == NM_STOP_EXIT_PORT) fprintf(out, " (status %d)", r->guest_status);
    if (r->reason == NM_STOP_SIGNAL && r->signal) fprintf(out, " (%s)", signal_name(r->signal));
    if (m->stop_detail) fprintf(out, ": %s", m->stop_detail);
    char cpu[96];
    nm_cpu_model_label(m->model, cpu, sizeof cpu);
    fprintf(out,
            "\nnicemu: cpu %s, board %s, %" G_GUINT64_FORMAT " instructions, %" G_GUINT64_FORMAT
            " clocks, virtual time %.9f s, wall time %.3f s\n",
            cpu, nm_timing_board(m->timing) ? nm_timing_board(m->timing) : "none", r->instructions,
            r->cycles, (double)r->virtual_ns / 1e9, r->wall_seconds);
}

void nm_run_report(const nm_machine *m, const nm_run_result *r, nm_report *rep)
{
    nm_report_section(rep, "run");
    nm_report_str(rep, "end", nm_stop_reason_name(r->reason));
    nm_report_u64(rep, "exit_status", (uint64_t)nm_run_exit_status(r));
    if (m->stop_detail) nm_report_str(rep, "detail", m->stop_detail);
    if (r->reason == NM_STOP_SIGNAL && r->signal)
        nm_report_str(rep, "signal", signal_name(r->signal));
    nm_report_u64(rep, "instructions", r->instructions);
    nm_report_u64(rep, "cycles", r->cycles);
    nm_report_u64(rep, "virtual_time_ns", r->virtual_ns);
    nm_report_double(rep, "wall_seconds", r->wall_seconds);
}
