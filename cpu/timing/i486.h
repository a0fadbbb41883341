/* The 486 cost model's hooks for tests.  The model itself is
 * cpu/timing/i486.c (docs/cost-models.md, "486"). */
#ifndef NICEMU_CPU_TIMING_I486_H
#define NICEMU_CPU_TIMING_I486_H

#include <stdbool.h>
#include <stdint.h>

/* Stretches (i486.c, i486_ahead): for tests, turned off (false) or on
 * again, and the instructions run in them so far.  `state` is what
 * nm_cost_model_486.create returned (the CPU's hooks.opaque).  The clocks
 * and counters are the same either way. */
void nm_i486_set_stretch(void *state, bool on);
uint64_t nm_i486_stretch_insns(const void *state);
/* The model's kept lookups (the armed line's fill record, ...): for tests,
 * turned off (false: the searches they spare are done each time) or on
 * again.  The clocks and counters are the same either way. */
void nm_i486_set_shortcuts(void *state, bool on);
/* The runs of loops' bodies made after the first at once so far
 * (NM_STRETCH_LOOP's `again`). */
uint64_t nm_i486_loop_again(const void *state);

#endif
