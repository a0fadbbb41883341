/* What the parts of the CPU share.  Two halves meet here:
 *   core   (cpu.c, decode.c, exec_*.c, flags.c, access.c, icache.c, trace.c):
 *          the run loop, decoder, every instruction's semantics, lazy flags,
 *          segmented and linear memory access with the software TLB, the
 *          decoded-instruction cache, the hooks and the trace;
 *   system (mmu.c, seg.c, interrupt.c, task.c, sysregs.c): the page walk,
 *          descriptor loads and checks, far transfers through gates,
 *          interrupt/exception delivery, task switches, control registers,
 *          CPUID/MSR/TSC and the other system instructions.
 * The core calls the system half through the cpu_* functions declared below
 * and never reads a descriptor itself; the system half touches memory only
 * through the core's access functions. */
#ifndef NICEMU_CPU_INTERNAL_H
#define NICEMU_CPU_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "cpu/decode.h"
#include "cpu/fpu.h"
#include "cpu/models.h"
#include "cpu/poll.h"
#include "emu/core/machine.h"

/* Kinds of memory access, for the TLB and the page walk (bit values are the
 * page-fault error code's W/R and U/S bits, SDM vol. 3A, 4.7). */
#define NM_ACC_READ  0u
#define NM_ACC_WRITE 2u
#define NM_ACC_USER  4u /* CPL 3 access (not for implicit system accesses) */
#define NM_ACC_FETCH 8u /* instruction fetch (not a PF error-code bit on 486/P5) */

/* Software TLB: direct-mapped by linear page number. */
#define NM_TLB_ENTRIES 1024
typedef struct nm_tlb_entry {
    uint32_t tag_read;  /* linear page | 0 if valid for reads at this privilege */
    uint32_t tag_write; /* same, for writes (dirty already set, not a code page) */
    uint32_t tag_user;  /* tags valid for CPL 3 accesses */
    uint32_t phys_page;
    uint8_t *host; /* host pointer of the page if RAM (NULL: go through memmap) */
    /* Added by the core (access.c owns the meaning of every tag):
     * tag_valid: the page translation is cached (any permission);
     * tag_user_write: fast CPL 3 writes; perm: NM_TLBP_* bits. */
    uint32_t tag_valid;
    uint32_t tag_user_write;
    uint32_t perm;
    /* The four fast tags as they would be with no memory hook: while one
     * listens, access_read_slow / access_write_slow take a RAM access
     * through these and report it without the general path. */
    uint32_t hook_read, hook_write, hook_user, hook_user_write;
    uint32_t pad[3]; /* 64 bytes: the inline fast paths index with a shift */
} nm_tlb_entry;

struct nm_cpu {
    /* ---- architectural state (both halves) ---- */
    uint32_t gpr[8];
    uint32_t eip;
    uint32_t eflags; /* arithmetic flags may be stale: use cpu_get_eflags */
    nm_segment seg[NM_SEG_COUNT];
    nm_segment ldtr, tr;
    nm_dtr gdtr, idtr;
    uint32_t cr0, cr2, cr3, cr4;
    uint32_t invlpg_lin; /* the last INVLPG's linear address (the cost models' TLBs) */
    uint32_t dr[8];
    uint64_t tsc_offset;  /* TSC = cycles + tsc_offset (WRMSR 0x10 sets it) */
    uint64_t msr_misc[4]; /* the few other MSRs Linux touches (system half) */

    /* ---- derived mode state, updated by cpu_update_mode() ---- */
    int cpl;      /* 0 in real mode, 3 in virtual-8086 mode */
    bool pe;      /* CR0.PE */
    bool vm86;    /* EFLAGS.VM */
    bool code32;  /* CS.D */
    bool stack32; /* SS.B */
    bool paging;  /* CR0.PG */

    /* ---- lazy flags (core) ---- */
    uint32_t lf_op;  /* operation that last set the arithmetic flags */
    uint32_t lf_res; /* its result */
    uint32_t lf_a, lf_b;
    uint32_t lf_carry_in; /* ADC/SBB carry */

    /* ---- execution state (core) ---- */
    uint32_t insn_eip; /* EIP of the instruction being executed (fault restart) */
    uint32_t insn_esp; /* ESP at its start: restored when it faults */
    bool halted;
    bool inhibit_irq; /* one-instruction interrupt shadow after STI / MOV SS */
    bool strict_isa;  /* 386 model raises #UD on 486-only instructions */
    uint64_t instructions;
    jmp_buf *fault_jmp; /* the run loop's landing pad for exceptions */
    int pending_vector; /* exception in flight (-1: none) */
    uint32_t pending_error;
    bool pending_has_error;
    int exception_depth; /* for double/triple fault */

    /* ---- translation (core fills, system walks) ---- */
    nm_tlb_entry tlb[NM_TLB_ENTRIES];
    uint32_t a20_mask;

    /* ---- environment ---- */
    nm_machine *m;
    nm_clock *clock;
    nm_memmap *mem;
    nm_ioport_map *io;
    const nm_cpu_model *model;
    nm_cpu_hooks hooks;
    bool have_hooks; /* any hook set: one test per instruction */
    void *icache;    /* decoded-instruction cache (core, icache.c) */
    void *tracer;    /* -d exec state (core, trace.c) */
    /* hooks.mem_log's answer (rec NULL: none), held here: no call to ask */
    nm_mem_log mem_log;

    /* ---- more core state (added by the core half) ---- */
    uint32_t fetch_lin;      /* linear page of the last fetch translation (1: none) */
    uint32_t fetch_phys;     /* its physical page */
    uint32_t last_ea;        /* effective address of the last memory operand */
    uint32_t rep_iterations; /* string iterations done by the last step (cost models) */
    const nm_insn *cur_insn; /* the instruction executing, in hooked steps (cost models) */
    bool rep_unfinished;     /* that step stopped at its budget: the REP string runs again */
    uint8_t dr_exec_mask;    /* DR7-enabled instruction breakpoints (debug.c) */
    uint8_t dr_data_mask;    /* DR7-enabled data breakpoints */
    uint8_t dr_hit;          /* data breakpoints hit by the running instruction */
    bool inhibit_fresh;      /* inhibit_irq set by the instruction that just ran */
    uint64_t steps;          /* instructions + delivered exceptions (run loop bound) */
    bool ac_on;              /* CR0.AM && EFLAGS.AC as last seen by cpu_update_mode */
    /* NM_FAST_EXIT: set by every path that may reach a device, the page
     * tables or a data breakpoint (access.c's slow paths, the page walk,
     * I/O): the uncosted run loop then does its full check after the
     * instruction.  NM_FAST_TAKEN: a Jcc inside a run jumps (cpu.c). */
    uint8_t fast_exit;
    /* Set by the run loop when the insn hook runs for the first time since
     * the CPU's state may have been changed from outside the hooked
     * instructions (a new run: a test, a snapshot, the machine between
     * runs; a step on the slow path).  A cost model that keeps the mode or
     * CR3 only after the instructions that may change them (NM_SYNC_CHECK)
     * takes them again then and clears it. */
    bool hook_resync;
    /* How many times in a row the hooked loop may run a stretch its cost
     * model flagged NM_STRETCH_LOOP (hooked_loop.h), set by the model's
     * `ahead` with the flag. */
    uint32_t stretch_reps;
    /* The uncosted loop's run of straight-line instructions (cpu.c): the
     * cache entry of the one executing (NULL outside a run, and for the
     * run's last instruction), the run's first entry and its EIP.  A fault
     * works out EIP from them (insn_eip is not kept up in a run). */
    const void *run_cur, *run_head;
    uint32_t run_eip;
    /* Instructions of the run the counters (instructions, steps, cycles)
     * already hold beyond the run's start (cpu.c). */
    uint32_t run_added;
    /* A guest polling a device register, fast-forwarded (poll.c). */
    nm_poll poll;

    /* ---- the x87 (fpu.c) ---- */
    nm_fpu_kind fpu_kind; /* the model's (NM_FPU_NONE: ESC opcodes do nothing) */
    nm_fpu fpu;
};

#define NM_FAST_EXIT  1u
#define NM_FAST_TAKEN 2u

/* Whether the instruction whose step just ran has retired: not a REP
 * string step that stopped at its budget (cpu/exec_string.c).  Cost models
 * and the profiler count instructions with it, as the CPU does. */
static inline bool cpu_insn_retired(const nm_cpu *c, const nm_insn *i)
{
    return !(c->rep_unfinished && (nm_opcode_flags(i->op) & NM_OPF_STRING));
}

/* The 486 architecture (EFLAGS.AC, CR0.WP/NE/AM/CD/NW, CR3 PWT/PCD): every
 * model runs the 486 ISA (Linux 6.1 needs it), except a 386 model under
 * --strict-isa, which is a 386 for bare-metal programs. */
static inline bool cpu_isa486(const nm_cpu *c)
{
    return c->model->family >= NM_CPU_486 || !c->strict_isa;
}

/* The 386 models: where the manuals leave a result undefined, the 386's
 * own (measured by test386.asm's author on a 386SX: flags of AAA, AAS,
 * AAD, DAA, DAS, byte and word SHL/SHR, BT*; a SIB byte with no index and
 * a scale; POPAD with a 16-bit stack).  docs/cpu.md "Model corner cases". */
static inline bool cpu_is386(const nm_cpu *c)
{
    return c->model->family == NM_CPU_386;
}

/* ===== provided by the core ===== */

/* Raise an exception: does not return (longjmps to the run loop, which
 * restores EIP/ESP of the faulting instruction and delivers it).  has_error
 * says whether the vector pushes an error code. */
_Noreturn void cpu_raise(nm_cpu *c, int vector, uint32_t error_code);
_Noreturn void cpu_raise_noerr(nm_cpu *c, int vector);

/* Before a device (MMIO, the page tables on one) sees the clock from
 * inside a run of the uncosted loop, which advances the counters once for
 * the whole run: makes them exact (cpu.c). */
void cpu_run_sync_slow(nm_cpu *c);
static inline void cpu_run_sync(nm_cpu *c)
{
    if (__builtin_expect(c->run_cur != NULL, 0)) cpu_run_sync_slow(c);
}

uint32_t cpu_get_eflags(nm_cpu *c);
/* Writes the bits in `mask` (caller applies the privilege rules of POPF/IRET). */
void cpu_set_eflags(nm_cpu *c, uint32_t value, uint32_t mask);
/* Recompute cpl/pe/vm86/code32/stack32/paging after CR0, CS, SS or EFLAGS.VM
 * changed. */
void cpu_update_mode(nm_cpu *c);

/* Segmented data access: limit and rights checks (#GP(0), or #SS(0) for SS),
 * then linear access.  seg is NM_ES..NM_GS. */
uint8_t cpu_read8(nm_cpu *c, int seg, uint32_t offset);
uint16_t cpu_read16(nm_cpu *c, int seg, uint32_t offset);
uint32_t cpu_read32(nm_cpu *c, int seg, uint32_t offset);
void cpu_write8(nm_cpu *c, int seg, uint32_t offset, uint8_t value);
void cpu_write16(nm_cpu *c, int seg, uint32_t offset, uint16_t value);
void cpu_write32(nm_cpu *c, int seg, uint32_t offset, uint32_t value);

/* Linear access through paging.  `system` accesses (descriptor tables, TSS,
 * IDT) are supervisor accesses whatever the CPL.  Faults raise #PF. */
uint8_t cpu_lin_read8(nm_cpu *c, uint32_t lin, bool system);
uint16_t cpu_lin_read16(nm_cpu *c, uint32_t lin, bool system);
uint32_t cpu_lin_read32(nm_cpu *c, uint32_t lin, bool system);
void cpu_lin_write8(nm_cpu *c, uint32_t lin, uint8_t value, bool system);
void cpu_lin_write16(nm_cpu *c, uint32_t lin, uint16_t value, bool system);
void cpu_lin_write32(nm_cpu *c, uint32_t lin, uint32_t value, bool system);

/* Stack at SS:ESP, honouring SS.B for the stack-pointer width. */
void cpu_push16(nm_cpu *c, uint16_t v);
void cpu_push32(nm_cpu *c, uint32_t v);
uint16_t cpu_pop16(nm_cpu *c);
uint32_t cpu_pop32(nm_cpu *c);

void cpu_tlb_flush_all(nm_cpu *c);
/* Drops (on false) or sets again (on true) the TLB's fast tags, so that
 * every access takes the logged path while a poll is recorded (poll.c);
 * the entries themselves stay. */
void cpu_tlb_fast_tags(nm_cpu *c, bool on);
/* The poll fast-forward (poll.c): an I/O access by the instruction
 * running; a step recorded; a memory access recorded (before a write);
 * after an instruction that did I/O (or any while recording): true when
 * the uncosted loop must leave for the recording; a stop of it all. */
void cpu_poll_io(nm_cpu *c, uint16_t port, unsigned size, uint32_t value, bool repeatable);
void cpu_poll_record_insn(nm_cpu *c, const nm_insn *i);
void cpu_poll_record_access(nm_cpu *c, uint32_t phys, const uint8_t *host, unsigned size,
                            bool write);
bool cpu_poll_after(nm_cpu *c, uint64_t limit, bool may_record);
void cpu_poll_abandon(nm_cpu *c);
void cpu_tlb_flush_page(nm_cpu *c, uint32_t lin);

/* ===== provided by the system half ===== */

/* Page walk on a TLB miss (CR0.PG=1): checks U/S and R/W (with CR0.WP),
 * sets A (and D on writes) in the PDE/PTE, handles 4 MB pages when CR4.PSE.
 * On a fault sets CR2 and raises #PF with the error code.  Returns the
 * physical address; writable and user tell what the TLB may cache. */
uint32_t cpu_page_walk(nm_cpu *c, uint32_t lin, unsigned access, bool *writable, bool *user);

/* Segment register loads (MOV/POP Sreg, LDS/LES/LFS/LGS/LSS): real and
 * virtual-8086 mode set base = selector*16; protected mode does the
 * descriptor checks and raises #GP/#SS/#NP with the selector. */
void cpu_load_sreg(nm_cpu *c, int seg, uint16_t selector);

/* Far control transfers, all modes, through call gates and task gates. */
void cpu_jmp_far(nm_cpu *c, uint16_t selector, uint32_t offset);
void cpu_call_far(nm_cpu *c, uint16_t selector, uint32_t offset, bool op32);
void cpu_ret_far(nm_cpu *c, bool op32, uint16_t pop_bytes);
void cpu_iret(nm_cpu *c, bool op32);

/* Delivers an interrupt or exception through the IVT (real mode) or IDT:
 * interrupt/trap/task gates, stack switch through the TSS, error code push.
 * `return_eip` is what gets pushed (the next instruction for INT n and
 * traps, the faulting one for faults).  kind: NM_INT_*. */
void cpu_interrupt(nm_cpu *c, unsigned vector, unsigned kind, bool has_error, uint32_t error_code,
                   uint32_t return_eip);
/* Called by the run loop with the exception that unwound an instruction;
 * turns a second fault into #DF and a fault during #DF into a triple fault
 * (which requests NM_STOP_RESET with a register dump). */
void cpu_deliver_exception(nm_cpu *c, int vector, bool has_error, uint32_t error_code);

/* I/O permission: CPL <= IOPL, or the TSS I/O bitmap allows it (#GP(0) else). */
void cpu_check_io(nm_cpu *c, uint16_t port, unsigned size);

/* System instructions (operands already fetched by the core). */
void cpu_lgdt(nm_cpu *c, uint32_t base, uint16_t limit);
void cpu_lidt(nm_cpu *c, uint32_t base, uint16_t limit);
void cpu_lldt(nm_cpu *c, uint16_t selector);
void cpu_ltr(nm_cpu *c, uint16_t selector);
uint32_t cpu_read_cr(nm_cpu *c, int n);
void cpu_write_cr(nm_cpu *c, int n, uint32_t value); /* #GP on reserved bits */
uint32_t cpu_read_dr(nm_cpu *c, int n);
void cpu_write_dr(nm_cpu *c, int n, uint32_t value);
void cpu_clts(nm_cpu *c);
/* Debug registers (debug.c): recompute the armed breakpoints after a DR7
 * or DR0-3 write; clear the local enables on a task switch; DR7.GD check
 * before a MOV DRn; whether a linear page holds an armed data breakpoint
 * (no fast TLB tags then); note data hits; fault on an instruction
 * breakpoint at CS:EIP; move the noted hits into DR6 (returns them). */
void cpu_debug_update(nm_cpu *c);
void cpu_debug_task_switch(nm_cpu *c);
void cpu_debug_access_check(nm_cpu *c);
bool cpu_debug_page(const nm_cpu *c, uint32_t page);
void cpu_debug_data(nm_cpu *c, uint32_t lin, unsigned size, bool write);
void cpu_debug_exec(nm_cpu *c);
uint32_t cpu_debug_take_hits(nm_cpu *c);
/* LAR/LSL/VERR/VERW: *ok is ZF. */
uint32_t cpu_lar(nm_cpu *c, uint16_t selector, bool *ok);
uint32_t cpu_lsl(nm_cpu *c, uint16_t selector, bool *ok);
bool cpu_verr(nm_cpu *c, uint16_t selector);
bool cpu_verw(nm_cpu *c, uint16_t selector);
void cpu_cpuid(nm_cpu *c); /* reads EAX, writes EAX..EDX; #UD if the model has none */
void cpu_rdmsr(nm_cpu *c); /* ECX -> EDX:EAX, #GP on unknown MSR */
void cpu_wrmsr(nm_cpu *c);
uint64_t cpu_rdtsc_value(nm_cpu *c); /* #GP if CR4.TSD and CPL>0 */
void cpu_invlpg(nm_cpu *c, uint32_t lin);

#endif
