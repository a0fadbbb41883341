/* The x86 CPU as the rest of the emulator sees it.  Semantics only: what an
 * instruction costs is decided by a cost model listening on the hooks. */
#ifndef NICEMU_CPU_H
#define NICEMU_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct nm_machine nm_machine;
typedef struct nm_cpu nm_cpu;
typedef struct nm_insn nm_insn; /* a decoded instruction: cpu/decode.h */

enum { NM_EAX, NM_ECX, NM_EDX, NM_EBX, NM_ESP, NM_EBP, NM_ESI, NM_EDI };
enum { NM_ES, NM_CS, NM_SS, NM_DS, NM_FS, NM_GS, NM_SEG_COUNT };

/* EFLAGS bits (SDM vol. 1, 3.4.3). */
#define NM_FLAG_CF     0x00000001u
#define NM_FLAG_PF     0x00000004u
#define NM_FLAG_AF     0x00000010u
#define NM_FLAG_ZF     0x00000040u
#define NM_FLAG_SF     0x00000080u
#define NM_FLAG_TF     0x00000100u
#define NM_FLAG_IF     0x00000200u
#define NM_FLAG_DF     0x00000400u
#define NM_FLAG_OF     0x00000800u
#define NM_FLAG_IOPL   0x00003000u
#define NM_FLAG_NT     0x00004000u
#define NM_FLAG_RF     0x00010000u
#define NM_FLAG_VM     0x00020000u
#define NM_FLAG_AC     0x00040000u
#define NM_FLAG_VIF    0x00080000u
#define NM_FLAG_VIP    0x00100000u
#define NM_FLAG_ID     0x00200000u
#define NM_FLAGS_ARITH (NM_FLAG_CF | NM_FLAG_PF | NM_FLAG_AF | NM_FLAG_ZF | NM_FLAG_SF | NM_FLAG_OF)

/* CR0 / CR4 bits (SDM vol. 3A, 2.5). */
#define NM_CR0_PE  0x00000001u
#define NM_CR0_MP  0x00000002u
#define NM_CR0_EM  0x00000004u
#define NM_CR0_TS  0x00000008u
#define NM_CR0_ET  0x00000010u
#define NM_CR0_NE  0x00000020u
#define NM_CR0_WP  0x00010000u
#define NM_CR0_AM  0x00040000u
#define NM_CR0_NW  0x20000000u
#define NM_CR0_CD  0x40000000u
#define NM_CR0_PG  0x80000000u
#define NM_CR4_VME 0x001u
#define NM_CR4_PVI 0x002u
#define NM_CR4_TSD 0x004u
#define NM_CR4_DE  0x008u
#define NM_CR4_PSE 0x010u
#define NM_CR4_MCE 0x040u

/* Exception vectors (SDM vol. 3A, table 6-1). */
enum {
    NM_EXC_DE = 0,
    NM_EXC_DB = 1,
    NM_EXC_NMI = 2,
    NM_EXC_BP = 3,
    NM_EXC_OF = 4,
    NM_EXC_BR = 5,
    NM_EXC_UD = 6,
    NM_EXC_NM = 7,
    NM_EXC_DF = 8,
    NM_EXC_TS = 10,
    NM_EXC_NP = 11,
    NM_EXC_SS = 12,
    NM_EXC_GP = 13,
    NM_EXC_PF = 14,
    NM_EXC_MF = 16,
    NM_EXC_AC = 17,
    NM_EXC_MC = 18,
};

/* A segment register with its hidden descriptor cache. */
typedef struct nm_segment {
    uint16_t selector;
    uint32_t base;
    uint32_t limit; /* in bytes, granularity already applied */
    /* Descriptor bits 8..23 of the high dword: type(4) S DPL(2) P, then
     * limit 19:16 (unused here), AVL, 0, D/B, G at bits 12..15. */
    uint16_t flags;
} nm_segment;

#define NM_SEGF_TYPE      0x000fu
#define NM_SEGF_ACCESSED  0x0001u
#define NM_SEGF_S         0x0010u /* code/data (1) vs system (0) */
#define NM_SEGF_DPL_SHIFT 5
#define NM_SEGF_DPL       0x0060u
#define NM_SEGF_P         0x0080u
#define NM_SEGF_DB        0x4000u
#define NM_SEGF_G         0x8000u

typedef struct nm_dtr {
    uint32_t base;
    uint16_t limit;
} nm_dtr;

/* One memory access as a cost model's access log holds it (after
 * translation; size in bytes; flags NM_MEM_*). */
typedef struct nm_mem_record {
    uint32_t phys, lin;
    uint8_t size, flags;
} nm_mem_record;

/* A cost model's access log, which the interpreter appends to itself
 * (nm_cpu_hooks.mem_log): records rec[0 .. *n - 1], room for cap. */
typedef struct nm_mem_log {
    nm_mem_record *rec;
    uint16_t *n;
    uint16_t cap;
} nm_mem_log;

/* Listeners for the cost models and the profiler.  Each pointer may be NULL;
 * with no hooks set the interpreter does no work for them. */
typedef struct nm_cpu_hooks {
    void *opaque;
    /* After each instruction, with its decoded form.  Returns the core clocks
     * it costs (added to the cycle counter); bus wait states are separate. */
    uint32_t (*insn)(void *opaque, nm_cpu *cpu, const nm_insn *insn);
    /* Every data or code memory access after translation.  flags: NM_MEM_*. */
    void (*mem)(void *opaque, uint32_t linear, uint32_t physical, unsigned size, unsigned flags);
    /* Optional, with mem: the listener's access log (asked once, when the
     * hooks are set).  The interpreter then appends each access without
     * NM_MEM_PAGEWALK to it itself, in the order mem would have had them
     * (no call for the common data access); mem gets the page walk's
     * reads and writes, and an access that finds the log full. */
    nm_mem_log (*mem_log)(void *opaque);
    void (*io)(void *opaque, uint16_t port, unsigned size, bool write);
    void (*branch)(void *opaque, uint32_t from_eip, uint32_t to_eip, bool taken);
    /* Exceptions and interrupts as they are delivered. */
    void (*interrupt)(void *opaque, unsigned vector, unsigned kind, uint32_t from_eip);
    /* The mem hook ignores NM_MEM_CODE: the run loop then does not report
     * each instruction's code bytes (the decoder's single code bytes still
     * come). */
    bool mem_ignores_code;
    /* The insn hook does not read insn->ea: the run loop may leave it
     * unset (the cost models). */
    bool insn_ignores_ea;
    /* Optional, with insn_ignores_ea and no code reports: the run loop with
     * a listener instantiated with this insn hook inlined
     * (cpu/hooked_loop.h); the CPU runs it instead of its own. */
    void (*run)(nm_cpu *cpu, uint64_t limit);
} nm_cpu_hooks;

#define NM_MEM_WRITE  1u
#define NM_MEM_CODE   2u
#define NM_MEM_SYSTEM 4u /* descriptor tables, TSS, page tables */
/* With NM_MEM_SYSTEM: the interpreter's own page walk (cpu/mmu.c), made
 * when its software TLB misses.  The 486 and Pentium models charge walks
 * from their model of the chip's TLB instead and only count these reads
 * (the A/D bit writes they still charge: the chip makes them too, when a
 * bit changes); the 386 model charges them as bus cycles. */
#define NM_MEM_PAGEWALK 8u

/* Kinds of interrupt for cpu_interrupt and the interrupt hook. */
enum { NM_INT_EXCEPTION, NM_INT_EXTERNAL, NM_INT_SOFTWARE, NM_INT_SOFTWARE_ICEBP };

nm_cpu *nm_cpu_new(nm_machine *m);
void nm_cpu_free(nm_cpu *c);
/* The state after RESET (SDM vol. 3A, table 9-1): real mode, CS:EIP =
 * F000:FFF0 with CS base FFFF0000, EDX = the model's signature. */
void nm_cpu_reset(nm_cpu *c);

/* Runs until the cycle counter reaches the clock's deadline (the next event),
 * a stop is requested, or `max_instructions` have executed.  A halted CPU
 * with nothing to wake it advances the clock to the deadline and returns.
 * Returns the number of instructions executed. */
uint64_t nm_cpu_run(nm_cpu *c, uint64_t max_instructions);

uint64_t nm_cpu_instructions(const nm_cpu *c);
bool nm_cpu_halted(const nm_cpu *c);
/* The decoded-instruction cache's size, 2^bits entries (12..20; default
 * 20), emptied; false (nothing changed) for another size.  Guest-visible
 * behaviour does not depend on it but where a cost model reads the
 * interpreter's own TLB (nm_cost_model_class.icache_bits). */
bool nm_cpu_set_icache_bits(nm_cpu *c, unsigned bits);
void nm_cpu_set_hooks(nm_cpu *c, const nm_cpu_hooks *hooks);
/* Memory mapping changed: drop cached translations. */
void nm_cpu_flush_translations(nm_cpu *c);
/* The A20 gate: closed forces linear-to-physical address bit 20 to 0. */
void nm_cpu_set_a20(nm_cpu *c, bool enabled);
/* Registers, segments, control registers: one readable block. */
void nm_cpu_dump_state(nm_cpu *c, FILE *out);

/* Direct register access for loaders and tests. */
uint32_t nm_cpu_get_reg(const nm_cpu *c, int reg);
void nm_cpu_set_reg(nm_cpu *c, int reg, uint32_t value);
uint32_t nm_cpu_get_eip(const nm_cpu *c);
void nm_cpu_set_eip(nm_cpu *c, uint32_t eip);
uint32_t nm_cpu_get_eflags(nm_cpu *c);
/* Poll loops fast-forwarded so far (cpu/poll.c; nothing a guest sees). */
uint64_t nm_cpu_poll_skips(const nm_cpu *c);
void nm_cpu_set_eflags(nm_cpu *c, uint32_t eflags);
const nm_segment *nm_cpu_get_segment(const nm_cpu *c, int seg);
/* Enters 32-bit flat protected mode directly (ring 0, CS/DS/ES/SS/FS/GS base
 * 0 limit 4 GB, paging off, interrupts off, caches on - CR0.CD/NW clear, as
 * firmware leaves them and as our boot ROM hands Linux over): the bare-metal
 * ELF loader's entry state, like a Multiboot loader's.  The guest loads its
 * own GDT before it reloads a segment register. */
void nm_cpu_enter_flat32(nm_cpu *c, uint32_t eip, uint32_t esp);

/* Saves or loads the CPU's state in a snapshot (section "cpu",
 * emu/core/snapshot.h); loading starts the TLB and the decoded-instruction
 * cache empty. */
typedef struct nm_snap nm_snap;
void nm_cpu_snapshot(nm_cpu *c, nm_snap *s);

#endif
