/* Debug registers (SDM vol. 3A, 17.2; Intel486 PRM chapter 11; the 386
 * PRM chapter 12 describes the same set): four breakpoint addresses DR0-3,
 * the status DR6 and the control DR7.
 *
 *   - instruction breakpoints (R/W = 00, LEN = 00) are faults: checked
 *     before the instruction at the address runs, unless EFLAGS.RF is set;
 *   - data breakpoints (R/W = 01 write, 11 read or write) are traps: a hit
 *     is noted during the instruction and #DB is taken after it (after
 *     the iteration, for a REP string);
 *   - DR7.GD makes the next MOV to or from a debug register fault with
 *     DR6.BD set;
 *   - a task switch clears the local enables L0-3 and LE (17.2.4).
 *
 * I/O breakpoints (R/W = 10 with CR4.DE, Pentium) are not implemented:
 * such an entry never hits.  LEN = 10 (8 bytes) is undefined on these
 * parts and is treated as 4.  Only enabled breakpoints report hits in
 * DR6 (the parts may also flag disabled ones: software must not rely on
 * that, 17.2.3).
 *
 * Cost: nothing while DR7 enables no breakpoint.  With an instruction
 * breakpoint armed the run loop takes the reported path (one check per
 * instruction); with a data breakpoint armed the pages holding one get no
 * fast TLB tags, so only their accesses are checked. */
#include "cpu/core.h"

#include "emu/core/log.h"

enum { DR7_GD = 1u << 13, DR7_LOCAL = 0x155u, DR6_BD = 1u << 13 };

static unsigned dr_rw(uint32_t dr7, unsigned k)
{
    return (dr7 >> (16 + 4 * k)) & 3;
}

static uint32_t dr_len(uint32_t dr7, unsigned k)
{
    static const uint32_t bytes[4] = {1, 2, 4, 4};
    return bytes[(dr7 >> (18 + 4 * k)) & 3];
}

void cpu_debug_update(nm_cpu *c)
{
    uint32_t dr7 = c->dr[7];
    uint8_t exec = 0, data = 0;
    for (unsigned k = 0; k < 4; k++) {
        if (!((dr7 >> (2 * k)) & 3)) continue;
        switch (dr_rw(dr7, k)) {
        case 0: exec |= (uint8_t)(1u << k); break;
        case 1:
        case 3: data |= (uint8_t)(1u << k); break;
        default: break; /* I/O: not implemented (header) */
        }
    }
    bool changed = exec != c->dr_exec_mask || data != c->dr_data_mask;
    c->dr_exec_mask = exec;
    c->dr_data_mask = data;
    /* The TLB's fast tags depend on the data breakpoints (cpu_debug_page),
     * and the run loop picks its path by the masks: start afresh. */
    if (changed || data) cpu_tlb_flush_all(c);
}

void cpu_debug_task_switch(nm_cpu *c)
{
    if (!(c->dr[7] & DR7_LOCAL)) return;
    c->dr[7] &= ~DR7_LOCAL;
    cpu_debug_update(c);
}

void cpu_debug_access_check(nm_cpu *c)
{
    if (!(c->dr[7] & DR7_GD)) return;
    /* The handler must be able to use the registers (17.2.4). */
    c->dr[7] &= ~DR7_GD;
    c->dr[6] |= DR6_BD;
    cpu_raise_noerr(c, NM_EXC_DB);
}

bool cpu_debug_page(const nm_cpu *c, uint32_t page)
{
    for (unsigned k = 0; k < 4; k++) {
        if (!(c->dr_data_mask & (1u << k))) continue;
        uint32_t len = dr_len(c->dr[7], k);
        uint32_t first = c->dr[k] & ~(len - 1);
        if ((first & ~0xfffu) == page) return true;
    }
    return false;
}

void cpu_debug_data(nm_cpu *c, uint32_t lin, unsigned size, bool write)
{
    for (unsigned k = 0; k < 4; k++) {
        if (!(c->dr_data_mask & (1u << k))) continue;
        if (dr_rw(c->dr[7], k) == 1 && !write) continue;
        uint32_t len = dr_len(c->dr[7], k);
        uint32_t first = c->dr[k] & ~(len - 1); /* aligned to its length (17.2.5) */
        /* Overlap of [lin, lin+size) and [first, first+len), without wrap. */
        if (lin - first < len || first - lin < size) c->dr_hit |= (uint8_t)(1u << k);
    }
}

void cpu_debug_exec(nm_cpu *c)
{
    uint32_t lin = c->seg[NM_CS].base + c->eip;
    uint8_t hit = 0;
    for (unsigned k = 0; k < 4; k++)
        if ((c->dr_exec_mask & (1u << k)) && c->dr[k] == lin) hit |= (uint8_t)(1u << k);
    if (!hit) return;
    c->dr[6] = (c->dr[6] & ~0xfu) | hit;
    nm_debug(CPU, "instruction breakpoint at %08x (DR6 %08x)", lin, c->dr[6]);
    cpu_raise_noerr(c, NM_EXC_DB);
}

uint32_t cpu_debug_take_hits(nm_cpu *c)
{
    uint32_t hit = c->dr_hit;
    c->dr_hit = 0;
    if (hit) c->dr[6] = (c->dr[6] & ~0xfu) | hit;
    return hit;
}
