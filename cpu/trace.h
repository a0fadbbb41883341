/* The -d exec instruction trace (active when the "exec" log subsystem is at
 * debug level).  Limits, settable from the environment or by the API:
 *   NICEMU_TRACE_RANGE=lo-hi      only instructions whose linear address is
 *                                 in [lo, hi] (hex or decimal)
 *   NICEMU_TRACE_WINDOW=start,count  only instructions number start ..
 *                                 start+count-1 (the instruction counter) */
#ifndef NICEMU_CPU_TRACE_H
#define NICEMU_CPU_TRACE_H

#include <stdint.h>

#include "cpu/cpu.h"

void nm_cpu_trace_set_range(nm_cpu *c, uint32_t lo, uint32_t hi);
void nm_cpu_trace_set_window(nm_cpu *c, uint64_t start, uint64_t count);

#endif
