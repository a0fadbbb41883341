/* Private to the system half (mmu.c, seg.c, far.c, interrupt.c, task.c,
 * sysregs.c): descriptors as read from the GDT/LDT/IDT, and the helpers the
 * far transfers, interrupts and task switches share. */
#ifndef NICEMU_CPU_SYSTEM_H
#define NICEMU_CPU_SYSTEM_H

#include "cpu/cpu_internal.h"

/* A descriptor as it sits in a table (SDM vol. 3A, 3.4.5 and 5.8.3). */
typedef struct nm_desc {
    uint32_t lo, hi;
    uint32_t addr; /* linear address of the descriptor (for the A/busy bits) */
} nm_desc;

static inline unsigned desc_type(const nm_desc *d)
{
    return (d->hi >> 8) & 0xf;
}
static inline bool desc_is_seg(const nm_desc *d)
{
    return (d->hi >> 12) & 1;
} /* S */
static inline unsigned desc_dpl(const nm_desc *d)
{
    return (d->hi >> 13) & 3;
}
static inline bool desc_present(const nm_desc *d)
{
    return (d->hi >> 15) & 1;
}
static inline bool desc_is_code(const nm_desc *d)
{
    return desc_is_seg(d) && (d->hi & 0x800);
}
static inline bool desc_is_data(const nm_desc *d)
{
    return desc_is_seg(d) && !(d->hi & 0x800);
}
static inline bool desc_conforming(const nm_desc *d)
{
    return desc_is_code(d) && (d->hi & 0x400);
}
static inline bool desc_readable(const nm_desc *d) /* code readable, or any data */
{
    return desc_is_data(d) || (d->hi & 0x200);
}
static inline bool desc_writable_data(const nm_desc *d)
{
    return desc_is_data(d) && (d->hi & 0x200);
}
static inline uint32_t desc_base(const nm_desc *d)
{
    return (d->lo >> 16) | ((d->hi & 0xff) << 16) | (d->hi & 0xff000000u);
}
static inline uint32_t desc_limit(const nm_desc *d)
{
    uint32_t l = (d->lo & 0xffff) | (d->hi & 0xf0000);
    return (d->hi & 0x800000) ? (l << 12) | 0xfff : l;
}
/* Gates: selector and offset (286 gates have a 16-bit offset). */
static inline uint16_t gate_selector(const nm_desc *d)
{
    return (uint16_t)(d->lo >> 16);
}
static inline uint32_t gate_offset(const nm_desc *d, bool gate32)
{
    return gate32 ? (d->lo & 0xffff) | (d->hi & 0xffff0000u) : (d->lo & 0xffff);
}

/* System descriptor types (SDM vol. 3A, table 3-2). */
enum {
    DT_TSS16_AVAIL = 1,
    DT_LDT = 2,
    DT_TSS16_BUSY = 3,
    DT_CALLGATE16 = 4,
    DT_TASKGATE = 5,
    DT_INTGATE16 = 6,
    DT_TRAPGATE16 = 7,
    DT_TSS32_AVAIL = 9,
    DT_TSS32_BUSY = 11,
    DT_CALLGATE32 = 12,
    DT_INTGATE32 = 14,
    DT_TRAPGATE32 = 15,
};

/* Reasons for a task switch (SDM vol. 3A, 7.3, table 7-2). */
enum { TS_JMP, TS_CALL, TS_IRET, TS_INT };

/* seg.c */
/* Reads the descriptor `sel` names; false if its index is beyond the GDT or
 * LDT limit (or the LDT is not loaded).  May raise #PF. */
bool sys_fetch_desc(nm_cpu *c, uint16_t sel, nm_desc *d);
/* Sets the accessed bit in the table if it is clear. */
void sys_set_accessed(nm_cpu *c, nm_desc *d);
/* Fills a hidden cache from a descriptor. */
void sys_seg_from_desc(nm_segment *s, uint16_t sel, const nm_desc *d);
void sys_seg_real(nm_segment *s, uint16_t sel, bool vm86);
void sys_seg_null(nm_segment *s, uint16_t sel);
/* Loads CS from a checked descriptor with RPL = cpl. */
void sys_load_cs(nm_cpu *c, uint16_t sel, const nm_desc *d, unsigned cpl);
/* After a return to an outer level: null DS/ES/FS/GS the new CPL may not use
 * (SDM vol. 3A, RET/IRET "RETURN-TO-OUTER-PRIVILEGE-LEVEL"). */
void sys_null_outer_segments(nm_cpu *c);
/* Writes `n` values of `width` bytes at decreasing addresses below `esp` in
 * stack segment `ss` (cache) with privilege `cpl`; raises #SS(ss_err) if the
 * frame does not fit the limit.  vals[0] is pushed first.  Returns new ESP
 * (only the low 16 bits change on a 16-bit stack). */
uint32_t sys_push_frame(nm_cpu *c, const nm_segment *ss, uint32_t esp, unsigned width,
                        const uint32_t *vals, unsigned n, unsigned cpl, uint32_t ss_err);
/* Reads a value of `width` bytes at SS:(ESP+off) of the current stack. */
uint32_t sys_stack_read(nm_cpu *c, uint32_t esp, uint32_t off, unsigned width);
/* Checks an SS selector for a stack switch to privilege `cpl` (TSS stack,
 * call gate, task switch): errors are #TS(sel) (exc = NM_EXC_TS) or, for RET/IRET,
 * #GP(sel); not present is #SS(sel). */
void sys_check_ss(nm_cpu *c, uint16_t sel, unsigned cpl, nm_desc *d, int exc, uint32_t ext);

/* task.c */
/* Switch to the task whose TSS descriptor `d` (selector `sel`) names.  For
 * TS_INT with has_error, the error code is pushed on the new task's stack. */
void sys_task_switch(nm_cpu *c, uint16_t sel, nm_desc *d, int reason, uint32_t return_eip,
                     bool has_error, uint32_t error_code, uint32_t ext);
/* Inner stack for privilege `dpl` from the current TSS (#TS on a limit error). */
void sys_tss_stack(nm_cpu *c, unsigned dpl, uint16_t *ss, uint32_t *esp, uint32_t ext);

/* sysregs.c */
uint32_t sys_eflags_mask(const nm_cpu *c); /* bits that exist on this model */

#endif
