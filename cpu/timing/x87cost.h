/* What the x87 instructions cost, for the three cost models (i386.c,
 * i486.c, pentium.c): the clock tables of the Intel387 DX beside a 386,
 * of the Intel486's on-chip unit and of the Pentium's pipelined FPU, and
 * the few rules that make them a timeline (x87cost.c says which source
 * each number comes from):
 *   - the 387 runs concurrently with the 386: the 386 spends the
 *     coprocessor protocol's bus cycles (the opcode to port 800000F8H, each
 *     operand dword through memory and 800000FCH), waits while the 387 is
 *     busy before it hands it the next ESC instruction, and waits for the
 *     387's result when the instruction returns data (stores, FNSTSW ...);
 *   - the 486's FPU overlaps the last "concurrent" clocks of an
 *     instruction with the integer instructions after it; the next FP
 *     instruction (or WAIT) waits for it to finish;
 *   - the Pentium's FPU is a pipeline: an instruction issues when the
 *     previous one lets it (its clocks less its FP overlap), its result is
 *     ready after its latency (FADD/FMUL 3, issue every clock), the
 *     integer pipe goes on after its clocks less its integer overlap,
 *     FXCH after an FX-pairable instruction pairs in the V pipe for no
 *     clock, FST waits one clock more for the value it stores, FDIV takes
 *     19, 33 or 39 clocks by the precision control.
 * Ranges in the manuals (operand-dependent: normalisation, special values)
 * are charged at their low end. */
#ifndef NICEMU_CPU_TIMING_X87COST_H
#define NICEMU_CPU_TIMING_X87COST_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/core.h"
#include "cpu/decode.h"

/* The instructions these functions cost: every x87 ID and WAIT. */
static inline bool nm_x87_costed(unsigned op)
{
    return (op >= NM_OP_FLD && op <= NM_OP_FNOP_LEGACY) || op == NM_OP_WAIT;
}

typedef struct nm_x87_timing {
    /* 387, 486: the cycle at which the FPU finishes its last instruction */
    uint64_t busy_until;
    /* Pentium: when the FP pipe takes the next instruction, when each
     * physical register's value is ready, what the last FP instruction was */
    uint64_t p5_next, p5_ready[8];
    uint64_t p5_fmul_next; /* an FMUL right after an FMUL issues no earlier */
    uint64_t insns_at_fx;  /* the CPU's instruction count at the last FX-pairable one */
    bool p5_last_fx, p5_last_fmul;
    /* counters (the models' reports) */
    uint64_t insns, stall_clocks, protocol_cycles, fxch_paired;
} nm_x87_timing;

/* The clocks the CPU spends on x87 instruction (or WAIT) i, decoded and
 * executed at cycle `now` (the CPU's state is after it); the cost model
 * adds its memory system's time for the operand's accesses as for any
 * instruction.  A model without an x87 (a 386 alone, the 486SX) costs an
 * ESC opcode as the no-op (or the #NM) it is. */
/* (the 387: `waits`, the wait states of the instruction's memory cycles,
 * which delay what the 387 receives or sends) */
unsigned nm_x87_cost_387(nm_x87_timing *t, const nm_cpu *c, const nm_insn *i, uint64_t now,
                         unsigned waits);
unsigned nm_x87_cost_486(nm_x87_timing *t, const nm_cpu *c, const nm_insn *i, uint64_t now);
unsigned nm_x87_cost_p5(nm_x87_timing *t, const nm_cpu *c, const nm_insn *i, uint64_t now);

/* The counters, in the model's report section: x87_instructions, the
 * clocks the CPU waited for the FPU (x87_stall_clocks), the 387's
 * protocol bus cycles, the Pentium's FXCHs paired for nothing. */
typedef struct nm_report nm_report;
void nm_x87_report(const nm_x87_timing *t, nm_report *r);

/* The instruction's row in the tables (x87cost.c), for tests. */
unsigned nm_x87_class(const nm_insn *i);

#endif
