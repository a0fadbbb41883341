/* Running a machine to the end and reporting why it ended. */
#ifndef NICEMU_RUN_H
#define NICEMU_RUN_H

#include <stdio.h>

#include "emu/machine.h"

typedef struct nm_run_result {
    nm_stop_reason reason;
    int guest_status; /* exit-port value, when reason is NM_STOP_EXIT_PORT */
    int signal;       /* the signal, when reason is NM_STOP_SIGNAL (0: unknown) */
    uint64_t instructions;
    uint64_t cycles;
    uint64_t virtual_ns;
    double wall_seconds; /* host time: reported, never fed back into the run */
} nm_run_result;

/* Runs until the guest ends the run (exit port, halt, reset, a kernel
 * panic), a configured bound (max-instructions, max-virtual-time), an
 * emulator error (a capture write failed) or a signal (SIGINT, SIGTERM,
 * SIGHUP). */
nm_run_result nm_machine_run(nm_machine *m);
/* The max-virtual-time event's callback (m->max_time, set up with the
 * machine). */
void nm_run_on_max_time(void *opaque, uint64_t late);

/* The process exit status for a result: the exit-port value; 0 for a halt;
 * 3 reset (triple fault); 4 a bound reached; 5 a guest kernel panic;
 * 128 + the signal's number for a signal (SIGHUP 129, SIGINT 130, SIGTERM
 * 143); 1 an emulator error. */
int nm_run_exit_status(const nm_run_result *r);

/* One line per fact: why it ended, instructions, clocks, virtual and wall time. */
void nm_run_print_summary(const nm_machine *m, const nm_run_result *r, FILE *out);
void nm_run_report(const nm_machine *m, const nm_run_result *r, nm_report *rep);

#endif
