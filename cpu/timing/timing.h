/* Cost models: what an instruction costs on a 386, 486 or Pentium.  The
 * interpreter computes what instructions do; a cost model listens on the CPU
 * hooks (cpu/cpu.h) and returns, per instruction, the core clocks it took,
 * including the stalls its memory accesses caused (caches, write buffer,
 * DRAM).  Bus wait states of I/O and MMIO accesses are charged separately by
 * the bus models (emu/memmap.h nm_bus_cost), before the device sees the
 * access: a model must not count them again.
 *
 * Order of hook calls for one instruction, as cpu/cpu.c makes them today:
 * mem for each data/system access (page walks included) and io, in program
 * order while the instruction executes (interrupt for INT n inside that);
 * then mem once with NM_MEM_CODE for the instruction's bytes (linear of
 * CS:insn_eip, length insn->len); then branch (control transfers); then
 * insn, whose return value closes the instruction.  The decoder also
 * reports single code bytes (NM_MEM_CODE, size 1) when it decodes an
 * instruction crossing a page or in MMIO.  External interrupts and
 * exceptions are delivered between insn calls without an insn call of
 * their own (their memory accesses arrive before the next insn).  A model
 * keeps what it learns from the first ones in its state and settles the
 * bill in insn.
 *
 * Models are switched at run time (nm_timing_select): a run boots with no
 * model (one clock per instruction, no hooks, full speed) and switches to
 * the chosen one when the guest opens the measurement window. */
#ifndef NICEMU_TIMING_H
#define NICEMU_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "cpu/decode.h"
#include "cpu/models.h"
#include "emu/core/devcfg.h"
#include "emu/core/report.h"

typedef struct nm_machine nm_machine;

/* The board's L2 write policy (membus.h, docs/boards.md). */
typedef enum {
    NM_L2_WRITE_BACK,              /* dirty tag: a victim is written back when dirty */
    NM_L2_WRITE_BACK_ALWAYS_DIRTY, /* no dirty tag: every valid victim is written back */
    NM_L2_WRITE_THROUGH,           /* write hits update the L2 and go to DRAM */
} nm_l2_policy;

/* A board's memory timings in bus clocks, as the models' board takes them
 * (membus.h nm_board). */
typedef struct nm_board_timing {
    uint32_t l2_size; /* bytes, 0: no L2 */
    nm_l2_policy l2_policy;
    unsigned l2_first, l2_burst, l2_write; /* read hit burst F-B-B-B, single write hit */
    unsigned dram_first, dram_burst;       /* burst read on a page hit */
    unsigned dram_single;                  /* single read or write on a page hit */
    unsigned dram_miss;                    /* added on a page miss */
    uint32_t dram_page_bytes;              /* 0: no page model */
    unsigned posted, posted_accept;        /* chipset write buffer: entries, accept clocks */
    bool victim_posted;                    /* L2 victims go out through the posted buffer */
    uint32_t refresh_ns;                   /* DRAM refresh request period, 0: none */
    uint32_t refresh_busy_ns;              /* how long each refresh holds the DRAM */
} nm_board_timing;

/* Memory-system parameters a model needs beyond the CPU model itself; from
 * the machine configuration: the board preset (cpu/timing/boards.c,
 * docs/boards.md), then the single keys that override it. */
typedef struct nm_timing_params {
    const char *board;           /* the preset's name (static), NULL: the model's defaults */
    unsigned mem_wait_states;    /* 386: wait states per non-pipelined DRAM bus cycle */
    unsigned dram_first_clocks;  /* 486/P5: bus clocks for the first transfer of a burst */
    unsigned dram_burst_clocks;  /* and for each following transfer (e.g. 5-2-2-2) */
    unsigned dram_single_clocks; /* a single non-burst read or write */
    unsigned l2_size;            /* 486/P5: external cache bytes, 0: none (key l2) */
    nm_l2_policy l2_policy;
    unsigned l2_first, l2_burst, l2_write; /* 0: the model's (486 2-1-1-1/2, P5 3-1-1-1/3) */
    unsigned dram_miss_clocks;             /* page miss: added bus clocks */
    uint32_t dram_page_bytes;              /* 0: no DRAM page model */
    unsigned posted_writes, posted_accept; /* chipset posted-write buffer */
    bool victim_posted;       /* L2 victims through the posted buffer, after the fill */
    uint32_t refresh_ns;      /* DRAM refresh period, 0: none */
    uint32_t refresh_busy_ns; /* how long a refresh holds the DRAM */
    /* 386 page-mode DRAM (dram_page_bytes != 0 on a 386 board): the wait
     * states of a bus cycle by the state of the bank's row (timing.c). */
    unsigned ws_page_read, ws_page_write, ws_row_closed, ws_page_miss;
} nm_timing_params;

/* The board timing a model runs with: `p`, with the model's own L2 burst
 * and write clocks where the parameters leave them 0. */
static inline nm_board_timing nm_board_timing_of(const nm_timing_params *p, unsigned l2_first,
                                                 unsigned l2_burst, unsigned l2_write)
{
    return (nm_board_timing){
        .l2_size = p->l2_size,
        .l2_policy = p->l2_policy,
        .l2_first = p->l2_first ? p->l2_first : l2_first,
        .l2_burst = p->l2_burst ? p->l2_burst : l2_burst,
        .l2_write = p->l2_write ? p->l2_write : l2_write,
        .dram_first = p->dram_first_clocks,
        .dram_burst = p->dram_burst_clocks,
        .dram_single = p->dram_single_clocks ? p->dram_single_clocks : p->dram_first_clocks,
        .dram_miss = p->dram_miss_clocks,
        .dram_page_bytes = p->dram_page_bytes,
        .posted = p->posted_writes,
        .posted_accept = p->posted_accept,
        .victim_posted = p->victim_posted,
        .refresh_ns = p->refresh_ns,
        .refresh_busy_ns = p->refresh_busy_ns,
    };
}

typedef struct nm_cost_model_class {
    const char *name; /* "386", "486", "pentium" */
    const char *description;
    /* NULL when this model cannot run this CPU (a Pentium model on a 386). */
    void *(*create)(nm_cpu *cpu, const nm_cpu_model *model, const nm_timing_params *params);
    void (*destroy)(void *state);
    /* The hooks; insn must be set, the others may be NULL. */
    nm_cpu_hooks hooks;
    /* May be NULL.  Called when an existing instance is selected again (a
     * second measurement window): the CPU ran without the model meanwhile,
     * so whatever the model remembers about the previous instruction (mode,
     * EIP, queue) is stale.  Caches and counters stay. */
    void (*resume)(void *state, nm_cpu *cpu);
    /* Counters for the report (cache hits/misses, stalls by cause, pairs…). */
    void (*report)(void *state, nm_report *r);
    /* May be NULL.  Bus-master DMA read (write false) or wrote [phys,
     * phys + len): the model snoops its caches and the board's L2 (every
     * instance, the current one and those kept for the report). */
    void (*snoop)(void *state, uint32_t phys, uint32_t len, bool write);
    /* 0, or the size of the decoded-instruction cache (2^icache_bits
     * entries) the machine's CPU must have when this model is configured:
     * for a model whose figures depend on which instructions miss it (the
     * 386's: it charges the interpreter's own page walks, and a decode
     * after a miss reads its code through the interpreter's TLB). */
    unsigned icache_bits;
} nm_cost_model_class;

/* The models, by name; "none" is one clock per instruction (no hooks). */
const nm_cost_model_class *nm_cost_model_find(const char *name);
/* The model matching a CPU model's family. */
const nm_cost_model_class *nm_cost_model_for_cpu(const nm_cpu_model *model);
const char *nm_cost_model_names(void);

/* Per-machine timing state: the selected model and its instance. */
typedef struct nm_timing nm_timing;
nm_timing *nm_timing_new(nm_machine *m, const nm_timing_params *params);
void nm_timing_free(nm_timing *t);
/* Switches the running CPU to `cls` (NULL: none) from the next instruction
 * on; the old model's state is kept for the report. */
void nm_timing_select(nm_timing *t, const nm_cost_model_class *cls);
const nm_cost_model_class *nm_timing_current(const nm_timing *t);
void nm_timing_report(nm_timing *t, nm_report *r);
/* The board preset's name (NULL: none). */
const char *nm_timing_board(const nm_timing *t);
const nm_timing_params *nm_timing_get_params(const nm_timing *t);

/* ---- observers (the profiler, emu/profiler.h) ----
 * The model owns the CPU hooks; an observer sees every instruction after
 * the model with the clocks the model charged for it (1 with no model),
 * and the control transfers and interrupts.  nm_timing installs one set of
 * hooks that calls the model, then the observer.  With no observer the
 * model's own hooks are installed (no extra call per instruction). */
typedef struct nm_timing_insn_info {
    uint32_t eip;      /* linear address of the instruction (CS base + EIP) */
    uint32_t next;     /* linear address of what runs next (CS base + EIP after it) */
    uint32_t cr3;      /* page directory: tells processes apart */
    uint8_t cpl;       /* privilege level it ran at */
    uint8_t cpl_next;  /* privilege level after it (IRET to user: 3) */
    uint32_t esp;      /* ESP at its start: which stack (task) it ran on */
    uint32_t esp_next; /* ESP after it (a stack switch: MOV/XCHG ESP, IRET) */
    bool retired;      /* false for a REP string step that runs again (count it once) */
} nm_timing_insn_info;

typedef struct nm_timing_observer {
    void *opaque;
    /* After the model's insn hook: `clocks` is what it returned (the bus
     * wait states of the instruction's I/O are in the clock, not here). */
    void (*insn)(void *opaque, const nm_insn *insn, const nm_timing_insn_info *info,
                 uint32_t clocks);
    /* Exceptions and interrupts as they are delivered (cpu.h's hook);
     * may be NULL. */
    void (*interrupt)(void *opaque, unsigned vector, unsigned kind, uint32_t from_eip);
} nm_timing_observer;

/* Sets (or, with NULL, removes) the observer; takes effect from the next
 * instruction.  One observer per machine. */
void nm_timing_set_observer(nm_timing *t, const nm_timing_observer *obs);

/* ---- configuration ([machine] keys cost-model, cost-from, mem-wait-states,
 * dram-timing, l2; docs/cost-models.md) ---- */
typedef enum { NM_COST_FROM_MARKER, NM_COST_FROM_BOOT } nm_cost_from;
/* The defaults for a CPU model (docs/cost-models.md gives the sources). */
void nm_timing_default_params(const nm_cpu_model *model, nm_timing_params *p);
/* The [machine] keys as the user wrote them (NULL: not given), filled by
 * the application from its configuration (emu/config.h). */
typedef struct nm_cost_config {
    const char *cost_model, *cost_from, *mem_wait_states, *dram_timing, *l2, *board;
} nm_cost_config;
/* Reads and checks the keys: *cls is NULL for "none"; one clear error on a
 * bad value. */
bool nm_timing_from_config(const nm_cost_config *cfg, const nm_cpu_model *model,
                           const nm_cost_model_class **cls, nm_cost_from *from, nm_timing_params *p,
                           GError **err);

#endif
