/* The CPU's part of a machine snapshot (emu/core/snapshot.h): the
 * architectural registers, the lazy flags as they stand, the interrupt
 * shadow and HLT, the counters.  The software TLB, the decoded-instruction
 * cache and the mode bits derived from CR0/CS/SS/EFLAGS are not saved:
 * loading recomputes the mode and starts both caches empty, as after a
 * flush (they hold nothing the guest could tell from memory). */
#include "cpu/core.h"
#include "emu/core/snapshot.h"

static void segment(nm_snap *s, const char *name, nm_segment *g)
{
    nm_snap_push(s, "%s", name);
    nm_snap_u16(s, "selector", &g->selector);
    nm_snap_u32(s, "base", &g->base);
    nm_snap_u32(s, "limit", &g->limit);
    nm_snap_u16(s, "flags", &g->flags);
    nm_snap_pop(s);
}

/* The x87's registers, tags, control and status words and pointers, and
 * its FERR# output. */
static void fpu_state(nm_snap *s, nm_fpu *f)
{
    uint64_t m[8];
    uint16_t se[8];
    for (int k = 0; k < 8; k++) {
        m[k] = f->r[k].m;
        se[k] = f->r[k].se;
    }
    nm_snap_push(s, "fpu");
    nm_snap_u64s(s, "mant", m, 8);
    nm_snap_u16s(s, "sexp", se, 8);
    nm_snap_bytes(s, "tag", f->tag, 8);
    nm_snap_u16(s, "cw", &f->cw);
    nm_snap_u16(s, "sw", &f->sw);
    nm_snap_u32(s, "fip", &f->fip);
    nm_snap_u32(s, "fdp", &f->fdp);
    nm_snap_u16(s, "fcs", &f->fcs);
    nm_snap_u16(s, "fds", &f->fds);
    nm_snap_u16(s, "fop", &f->fop);
    nm_snap_bool(s, "ferr", &f->ferr);
    nm_snap_pop(s);
    for (int k = 0; k < 8; k++) {
        f->r[k] = (nm_f80){m[k], se[k]};
        f->tag[k] &= 3;
    }
}

/* Version 2: the x87.  A version 1 file is refused: it has no FPU state,
 * and the machine it was made from had CPUID and the guest's view of the
 * FPU as they were before. */
#define CPU_SNAPSHOT_VERSION 2

void nm_cpu_snapshot(nm_cpu *c, nm_snap *s)
{
    static const char *const seg_names[NM_SEG_COUNT] = {"es", "cs", "ss", "ds", "fs", "gs"};
    if (!nm_snap_begin(s, "cpu", CPU_SNAPSHOT_VERSION)) return;
    if (!nm_snap_saving(s) && nm_snap_version(s) < CPU_SNAPSHOT_VERSION) {
        nm_snap_fail(s,
                     "cpu: section version %u is from before the x87 (this nicemu reads %u): "
                     "save the state again",
                     nm_snap_version(s), CPU_SNAPSHOT_VERSION);
        return;
    }
    nm_snap_same_string(s, "model", c->model->name);
    nm_snap_u32s(s, "gpr", c->gpr, 8);
    nm_snap_u32(s, "eip", &c->eip);
    nm_snap_u32(s, "eflags", &c->eflags);
    for (int k = 0; k < NM_SEG_COUNT; k++)
        segment(s, seg_names[k], &c->seg[k]);
    segment(s, "ldtr", &c->ldtr);
    segment(s, "tr", &c->tr);
    nm_snap_u32(s, "gdtr.base", &c->gdtr.base);
    nm_snap_u16(s, "gdtr.limit", &c->gdtr.limit);
    nm_snap_u32(s, "idtr.base", &c->idtr.base);
    nm_snap_u16(s, "idtr.limit", &c->idtr.limit);
    nm_snap_u32(s, "cr0", &c->cr0);
    nm_snap_u32(s, "cr2", &c->cr2);
    nm_snap_u32(s, "cr3", &c->cr3);
    nm_snap_u32(s, "cr4", &c->cr4);
    nm_snap_u32(s, "invlpg_lin", &c->invlpg_lin);
    nm_snap_u32s(s, "dr", c->dr, 8);
    nm_snap_u64(s, "tsc_offset", &c->tsc_offset);
    nm_snap_u64s(s, "msr_misc", c->msr_misc, 4);
    nm_snap_u32(s, "lf_op", &c->lf_op);
    nm_snap_u32(s, "lf_res", &c->lf_res);
    nm_snap_u32(s, "lf_a", &c->lf_a);
    nm_snap_u32(s, "lf_b", &c->lf_b);
    nm_snap_u32(s, "lf_carry_in", &c->lf_carry_in);
    nm_snap_u32(s, "insn_eip", &c->insn_eip);
    nm_snap_u32(s, "insn_esp", &c->insn_esp);
    nm_snap_bool(s, "halted", &c->halted);
    nm_snap_bool(s, "inhibit_irq", &c->inhibit_irq);
    nm_snap_bool(s, "inhibit_fresh", &c->inhibit_fresh);
    nm_snap_u64(s, "instructions", &c->instructions);
    nm_snap_u64(s, "steps", &c->steps);
    int32_t pv = c->pending_vector, depth = c->exception_depth;
    nm_snap_i32(s, "pending_vector", &pv);
    nm_snap_u32(s, "pending_error", &c->pending_error);
    nm_snap_bool(s, "pending_has_error", &c->pending_has_error);
    nm_snap_i32(s, "exception_depth", &depth);
    nm_snap_u32(s, "a20_mask", &c->a20_mask);
    nm_snap_u32(s, "last_ea", &c->last_ea);
    nm_snap_u32(s, "rep_iterations", &c->rep_iterations);
    nm_snap_bool(s, "rep_unfinished", &c->rep_unfinished);
    nm_snap_u8(s, "dr_hit", &c->dr_hit);
    bool ac = c->ac_on;
    nm_snap_bool(s, "ac_on", &ac);
    fpu_state(s, &c->fpu);
    nm_snap_end(s);
    if (nm_snap_saving(s) || nm_snap_failed(s)) return;
    /* Between two instructions nothing is in flight. */
    if (!nm_snap_check(s, pv >= -1 && pv < 32, "pending_vector") ||
        !nm_snap_check(s, depth >= 0 && depth < 3, "exception_depth") ||
        !nm_snap_check(s, c->a20_mask == 0xffffffffu || c->a20_mask == ~(1u << 20), "a20_mask") ||
        !nm_snap_check(s, c->lf_op < 4 * (LF_SHIFT + 1) && (c->lf_op & 3) != 3, "lf_op"))
        return;
    c->pending_vector = pv;
    c->exception_depth = depth;
    /* The mode (CPL, code and stack size, paging) from the registers; the
     * TLB, the fetch page and the decoded instructions start empty. */
    c->ac_on = ac;
    c->m->ferr = c->fpu.ferr; /* the board's latch and IGNNE# are its own (devices/pc/fpuerr.c) */
    cpu_update_mode(c);
    c->dr_exec_mask = c->dr_data_mask = 0xff; /* recomputed: */
    cpu_debug_update(c);
    cpu_tlb_flush_all(c);
    icache_flush(c);
}
