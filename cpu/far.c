/* Far control transfers: JMP/CALL far (direct, call gates, task gates,
 * TSS descriptors), RET far and IRET, in every mode (SDM vol. 2, JMP, CALL,
 * RET, IRET pseudo-code; vol. 3A, 5.8 and 7.3). */
#include "cpu/system.h"

#include "emu/core/log.h"

static uint32_t err_sel(uint16_t sel)
{
    return sel & 0xfffcu;
}

/* Commits a frame on the current stack. */
static void push_current(nm_cpu *c, const uint32_t *vals, unsigned n, unsigned width)
{
    c->gpr[NM_ESP] =
        sys_push_frame(c, &c->seg[NM_SS], c->gpr[NM_ESP], width, vals, n, (unsigned)c->cpl, 0);
}

/* ESP after popping `bytes` from the current stack. */
static uint32_t esp_after(nm_cpu *c, uint32_t esp, uint32_t bytes)
{
    return c->stack32 ? esp + bytes : (esp & ~0xffffu) | ((esp + bytes) & 0xffff);
}

static void real_load_cs(nm_cpu *c, uint16_t sel, uint32_t offset)
{
    sys_seg_real(&c->seg[NM_CS], sel, c->vm86);
    c->eip = offset;
    cpu_update_mode(c);
}

/* Direct transfer to a code segment: the privilege rules of JMP/CALL
 * (SDM vol. 3A, 5.8.1). */
static void check_direct_code(nm_cpu *c, uint16_t sel, const nm_desc *d)
{
    unsigned cpl = (unsigned)c->cpl;
    if (desc_conforming(d)) {
        if (desc_dpl(d) > cpl) cpu_raise(c, NM_EXC_GP, err_sel(sel));
    } else if ((sel & 3u) > cpl || desc_dpl(d) != cpl) {
        cpu_raise(c, NM_EXC_GP, err_sel(sel));
    }
    if (!desc_present(d)) cpu_raise(c, NM_EXC_NP, err_sel(sel));
}

/* The code segment a call gate names (5.8.4). */
static void gate_target(nm_cpu *c, const nm_desc *gate, uint16_t *tsel, nm_desc *cs)
{
    *tsel = gate_selector(gate);
    if (!(*tsel & 0xfffc)) cpu_raise(c, NM_EXC_GP, 0);
    if (!sys_fetch_desc(c, *tsel, cs)) cpu_raise(c, NM_EXC_GP, err_sel(*tsel));
    if (!desc_is_code(cs) || desc_dpl(cs) > (unsigned)c->cpl)
        cpu_raise(c, NM_EXC_GP, err_sel(*tsel));
    if (!desc_present(cs)) cpu_raise(c, NM_EXC_NP, err_sel(*tsel));
}

/* Checks common to task gates and TSS descriptors named by JMP/CALL, then
 * the switch (7.3). */
static void far_task(nm_cpu *c, uint16_t sel, nm_desc *d, int reason, uint32_t return_eip)
{
    unsigned cpl = (unsigned)c->cpl;
    if (desc_dpl(d) < cpl || desc_dpl(d) < (sel & 3u)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
    if (desc_type(d) == DT_TASKGATE) {
        if (!desc_present(d)) cpu_raise(c, NM_EXC_NP, err_sel(sel));
        uint16_t tsel = gate_selector(d);
        nm_desc tss;
        if ((tsel & 4) || !sys_fetch_desc(c, tsel, &tss)) cpu_raise(c, NM_EXC_GP, err_sel(tsel));
        if (desc_is_seg(&tss) ||
            (desc_type(&tss) != DT_TSS16_AVAIL && desc_type(&tss) != DT_TSS32_AVAIL))
            cpu_raise(c, NM_EXC_GP, err_sel(tsel));
        if (!desc_present(&tss)) cpu_raise(c, NM_EXC_NP, err_sel(tsel));
        sys_task_switch(c, tsel, &tss, reason, return_eip, false, 0, 0);
    } else {
        if (sel & 4) cpu_raise(c, NM_EXC_GP, err_sel(sel)); /* TSS descriptors live in the GDT */
        if (!desc_present(d)) cpu_raise(c, NM_EXC_NP, err_sel(sel));
        sys_task_switch(c, sel, d, reason, return_eip, false, 0, 0);
    }
}

void cpu_jmp_far(nm_cpu *c, uint16_t sel, uint32_t offset)
{
    if (!c->pe || c->vm86) {
        if (offset > c->seg[NM_CS].limit) cpu_raise(c, NM_EXC_GP, 0);
        real_load_cs(c, sel, offset);
        return;
    }
    if (!(sel & 0xfffc)) cpu_raise(c, NM_EXC_GP, 0);
    nm_desc d;
    if (!sys_fetch_desc(c, sel, &d)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
    if (desc_is_seg(&d)) {
        if (!desc_is_code(&d)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
        check_direct_code(c, sel, &d);
        if (offset > desc_limit(&d)) cpu_raise(c, NM_EXC_GP, 0);
        sys_load_cs(c, sel, &d, (unsigned)c->cpl);
        c->eip = offset;
        return;
    }
    unsigned cpl = (unsigned)c->cpl;
    switch (desc_type(&d)) {
    case DT_CALLGATE16:
    case DT_CALLGATE32: {
        if (desc_dpl(&d) < cpl || desc_dpl(&d) < (sel & 3u)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
        if (!desc_present(&d)) cpu_raise(c, NM_EXC_NP, err_sel(sel));
        uint16_t tsel;
        nm_desc cs;
        gate_target(c, &d, &tsel, &cs);
        /* JMP through a gate never changes privilege. */
        if (!desc_conforming(&cs) && desc_dpl(&cs) != cpl) cpu_raise(c, NM_EXC_GP, err_sel(tsel));
        uint32_t off = gate_offset(&d, desc_type(&d) == DT_CALLGATE32);
        if (off > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, 0);
        sys_load_cs(c, tsel, &cs, cpl);
        c->eip = off;
        return;
    }
    case DT_TASKGATE:
    case DT_TSS16_AVAIL:
    case DT_TSS32_AVAIL: far_task(c, sel, &d, TS_JMP, c->eip); return;
    default: cpu_raise(c, NM_EXC_GP, err_sel(sel));
    }
}

void cpu_call_far(nm_cpu *c, uint16_t sel, uint32_t offset, bool op32)
{
    unsigned width = op32 ? 4 : 2;
    if (!c->pe || c->vm86) {
        if (offset > c->seg[NM_CS].limit) cpu_raise(c, NM_EXC_GP, 0);
        uint32_t vals[2] = {c->seg[NM_CS].selector, op32 ? c->eip : c->eip & 0xffff};
        push_current(c, vals, 2, width);
        real_load_cs(c, sel, offset);
        return;
    }
    if (!(sel & 0xfffc)) cpu_raise(c, NM_EXC_GP, 0);
    nm_desc d;
    if (!sys_fetch_desc(c, sel, &d)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
    unsigned cpl = (unsigned)c->cpl;
    if (desc_is_seg(&d)) {
        if (!desc_is_code(&d)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
        check_direct_code(c, sel, &d);
        if (offset > desc_limit(&d)) cpu_raise(c, NM_EXC_GP, 0);
        uint32_t vals[2] = {c->seg[NM_CS].selector, c->eip};
        push_current(c, vals, 2, width);
        sys_load_cs(c, sel, &d, cpl);
        c->eip = offset;
        return;
    }
    switch (desc_type(&d)) {
    case DT_CALLGATE16:
    case DT_CALLGATE32: break;
    case DT_TASKGATE:
    case DT_TSS16_AVAIL:
    case DT_TSS32_AVAIL: far_task(c, sel, &d, TS_CALL, c->eip); return;
    default: cpu_raise(c, NM_EXC_GP, err_sel(sel));
    }

    /* Through a call gate (5.8.5, 5.8.6). */
    if (desc_dpl(&d) < cpl || desc_dpl(&d) < (sel & 3u)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
    if (!desc_present(&d)) cpu_raise(c, NM_EXC_NP, err_sel(sel));
    uint16_t tsel;
    nm_desc cs;
    gate_target(c, &d, &tsel, &cs);
    bool gate32 = desc_type(&d) == DT_CALLGATE32;
    unsigned gw = gate32 ? 4 : 2;
    uint32_t off = gate_offset(&d, gate32);
    unsigned dpl = desc_dpl(&cs);

    if (!desc_conforming(&cs) && dpl < cpl) {
        /* More privileged: new stack from the TSS, parameters copied. */
        uint16_t ss_sel;
        uint32_t esp;
        sys_tss_stack(c, dpl, &ss_sel, &esp, 0);
        nm_desc ssd;
        sys_check_ss(c, ss_sel, dpl, &ssd, NM_EXC_TS, 0);
        nm_segment new_ss;
        sys_seg_from_desc(&new_ss, ss_sel, &ssd);
        new_ss.flags |= NM_SEGF_ACCESSED;
        unsigned count = d.hi & 0x1f;
        uint32_t vals[2 + 31 + 2];
        unsigned n = 0;
        vals[n++] = c->seg[NM_SS].selector;
        vals[n++] = c->gpr[NM_ESP];
        for (unsigned i = count; i-- > 0;)
            vals[n++] = sys_stack_read(c, c->gpr[NM_ESP], i * gw, gw);
        vals[n++] = c->seg[NM_CS].selector;
        vals[n++] = c->eip;
        if (off > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, 0);
        uint32_t new_esp = sys_push_frame(c, &new_ss, esp, gw, vals, n, dpl, err_sel(ss_sel));
        sys_set_accessed(c, &ssd);
        c->seg[NM_SS] = new_ss;
        c->gpr[NM_ESP] = new_esp;
        sys_load_cs(c, tsel, &cs, dpl);
        c->eip = off;
        return;
    }
    if (!desc_conforming(&cs) && dpl != cpl) cpu_raise(c, NM_EXC_GP, err_sel(tsel));
    if (off > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, 0);
    uint32_t vals[2] = {c->seg[NM_CS].selector, c->eip};
    push_current(c, vals, 2, gw);
    sys_load_cs(c, tsel, &cs, cpl);
    c->eip = off;
}

/* The CS a RET/IRET returns to: checks shared by both (SDM vol. 2, RET). */
static void check_return_cs(nm_cpu *c, uint16_t sel, nm_desc *d)
{
    if (!(sel & 0xfffc)) cpu_raise(c, NM_EXC_GP, 0);
    if (!sys_fetch_desc(c, sel, d)) cpu_raise(c, NM_EXC_GP, err_sel(sel));
    unsigned rpl = sel & 3u;
    if (!desc_is_code(d) || rpl < (unsigned)c->cpl) cpu_raise(c, NM_EXC_GP, err_sel(sel));
    if (desc_conforming(d) ? desc_dpl(d) > rpl : desc_dpl(d) != rpl)
        cpu_raise(c, NM_EXC_GP, err_sel(sel));
    if (!desc_present(d)) cpu_raise(c, NM_EXC_NP, err_sel(sel));
}

/* Outer-level SS for RET/IRET: #GP(sel) errors, #SS(sel) not present. */
static void check_return_ss(nm_cpu *c, uint16_t sel, unsigned rpl, nm_desc *d)
{
    if (!(sel & 0xfffc)) cpu_raise(c, NM_EXC_GP, 0);
    sys_check_ss(c, sel, rpl, d, NM_EXC_GP, 0);
}

void cpu_ret_far(nm_cpu *c, bool op32, uint16_t pop_bytes)
{
    unsigned w = op32 ? 4 : 2;
    uint32_t esp = c->gpr[NM_ESP];
    uint32_t eip = sys_stack_read(c, esp, 0, w);
    uint16_t sel = (uint16_t)sys_stack_read(c, esp, w, 2);
    if (!c->pe || c->vm86) {
        if (eip > c->seg[NM_CS].limit) cpu_raise(c, NM_EXC_GP, 0);
        c->gpr[NM_ESP] = esp_after(c, esp, 2 * w + pop_bytes);
        real_load_cs(c, sel, eip);
        return;
    }
    nm_desc cs;
    check_return_cs(c, sel, &cs);
    unsigned rpl = sel & 3u;
    if (rpl == (unsigned)c->cpl) {
        if (eip > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, 0);
        c->gpr[NM_ESP] = esp_after(c, esp, 2 * w + pop_bytes);
        sys_load_cs(c, sel, &cs, rpl);
        c->eip = eip;
        return;
    }
    /* Return to an outer level: SS:ESP come from the inner stack. */
    uint32_t new_esp = sys_stack_read(c, esp, 2 * w + pop_bytes, w);
    uint16_t ss_sel = (uint16_t)sys_stack_read(c, esp, 3 * w + pop_bytes, 2);
    nm_desc ssd;
    check_return_ss(c, ss_sel, rpl, &ssd);
    if (eip > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, 0);
    sys_set_accessed(c, &ssd);
    sys_load_cs(c, sel, &cs, rpl);
    sys_seg_from_desc(&c->seg[NM_SS], ss_sel, &ssd);
    c->eip = eip;
    cpu_update_mode(c);
    if (!op32) new_esp &= 0xffff;
    c->gpr[NM_ESP] = c->stack32 ? new_esp + pop_bytes
                                : (c->gpr[NM_ESP] & ~0xffffu) | ((new_esp + pop_bytes) & 0xffff);
    sys_null_outer_segments(c);
}

/* EFLAGS loaded by IRET at privilege `cpl` (SDM vol. 2, IRET). */
static void iret_set_flags(nm_cpu *c, uint32_t fl, bool op32, unsigned cpl)
{
    uint32_t mask = NM_FLAGS_ARITH | NM_FLAG_TF | NM_FLAG_DF | NM_FLAG_NT;
    if (op32) mask |= NM_FLAG_RF | NM_FLAG_AC | NM_FLAG_ID;
    if (cpl <= ((cpu_get_eflags(c) >> 12) & 3)) mask |= NM_FLAG_IF;
    if (cpl == 0) mask |= NM_FLAG_IOPL | (op32 ? NM_FLAG_VIF | NM_FLAG_VIP : 0);
    cpu_set_eflags(c, fl, mask & sys_eflags_mask(c));
}

static void iret_to_vm86(nm_cpu *c, uint32_t esp, uint32_t eip, uint16_t cs, uint32_t fl)
{
    /* SDM vol. 2, IRET, RETURN-TO-VIRTUAL-8086-MODE (from CPL 0, 32-bit). */
    uint32_t new_esp = sys_stack_read(c, esp, 12, 4);
    uint16_t ss = (uint16_t)sys_stack_read(c, esp, 16, 4);
    uint16_t es = (uint16_t)sys_stack_read(c, esp, 20, 4);
    uint16_t ds = (uint16_t)sys_stack_read(c, esp, 24, 4);
    uint16_t fs = (uint16_t)sys_stack_read(c, esp, 28, 4);
    uint16_t gs = (uint16_t)sys_stack_read(c, esp, 32, 4);
    cpu_set_eflags(c, fl | NM_FLAG_VM, sys_eflags_mask(c));
    sys_seg_real(&c->seg[NM_CS], cs, true);
    sys_seg_real(&c->seg[NM_SS], ss, true);
    sys_seg_real(&c->seg[NM_ES], es, true);
    sys_seg_real(&c->seg[NM_DS], ds, true);
    sys_seg_real(&c->seg[NM_FS], fs, true);
    sys_seg_real(&c->seg[NM_GS], gs, true);
    c->gpr[NM_ESP] = new_esp;
    c->eip = eip & 0xffff;
    cpu_update_mode(c);
}

void cpu_iret(nm_cpu *c, bool op32)
{
    unsigned w = op32 ? 4 : 2;
    uint32_t esp = c->gpr[NM_ESP];

    if (!c->pe) {
        uint32_t eip = sys_stack_read(c, esp, 0, w);
        uint16_t sel = (uint16_t)sys_stack_read(c, esp, w, 2);
        uint32_t fl = sys_stack_read(c, esp, 2 * w, w);
        if (eip > c->seg[NM_CS].limit) cpu_raise(c, NM_EXC_GP, 0);
        c->gpr[NM_ESP] = esp_after(c, esp, 3 * w);
        real_load_cs(c, sel, eip);
        /* Real mode: every flag but VM, VIF, VIP (and the upper half on a
         * 16-bit IRET). */
        uint32_t mask = op32 ? ~(NM_FLAG_VM | NM_FLAG_VIF | NM_FLAG_VIP) : 0xffffu;
        cpu_set_eflags(c, fl, mask & sys_eflags_mask(c));
        return;
    }
    if (c->vm86) {
        /* SDM vol. 3A, 20.2.7: IRET in VM86 mode needs IOPL 3 (no VME). */
        if (((cpu_get_eflags(c) >> 12) & 3) < 3) cpu_raise(c, NM_EXC_GP, 0);
        uint32_t eip = sys_stack_read(c, esp, 0, w);
        uint16_t sel = (uint16_t)sys_stack_read(c, esp, w, 2);
        uint32_t fl = sys_stack_read(c, esp, 2 * w, w);
        if (!op32) eip &= 0xffff;
        if (eip > c->seg[NM_CS].limit) cpu_raise(c, NM_EXC_GP, 0);
        c->gpr[NM_ESP] = esp_after(c, esp, 3 * w);
        real_load_cs(c, sel, eip);
        uint32_t mask = ~(NM_FLAG_VM | NM_FLAG_IOPL | NM_FLAG_VIF | NM_FLAG_VIP);
        if (!op32) mask &= 0xffff;
        cpu_set_eflags(c, fl, mask & sys_eflags_mask(c));
        return;
    }

    if (cpu_get_eflags(c) & NM_FLAG_NT) {
        /* Return from a nested task (7.3): the back link names a busy TSS. */
        uint16_t back = cpu_lin_read16(c, c->tr.base, true);
        nm_desc tss;
        if ((back & 4) || !sys_fetch_desc(c, back, &tss)) cpu_raise(c, NM_EXC_TS, err_sel(back));
        if (desc_is_seg(&tss) ||
            (desc_type(&tss) != DT_TSS16_BUSY && desc_type(&tss) != DT_TSS32_BUSY))
            cpu_raise(c, NM_EXC_TS, err_sel(back));
        if (!desc_present(&tss)) cpu_raise(c, NM_EXC_NP, err_sel(back));
        sys_task_switch(c, back, &tss, TS_IRET, c->eip, false, 0, 0);
        return;
    }

    uint32_t eip = sys_stack_read(c, esp, 0, w);
    uint16_t sel = (uint16_t)sys_stack_read(c, esp, w, 2);
    uint32_t fl = sys_stack_read(c, esp, 2 * w, w);
    unsigned cpl = (unsigned)c->cpl;
    if (op32 && (fl & NM_FLAG_VM) && cpl == 0) {
        iret_to_vm86(c, esp, eip, sel, fl);
        return;
    }
    nm_desc cs;
    check_return_cs(c, sel, &cs);
    unsigned rpl = sel & 3u;
    if (rpl == cpl) {
        if (eip > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, 0);
        c->gpr[NM_ESP] = esp_after(c, esp, 3 * w);
        sys_load_cs(c, sel, &cs, rpl);
        c->eip = eip;
        iret_set_flags(c, fl, op32, cpl);
        return;
    }
    /* Outer level. */
    uint32_t new_esp = sys_stack_read(c, esp, 3 * w, w);
    uint16_t ss_sel = (uint16_t)sys_stack_read(c, esp, 4 * w, 2);
    nm_desc ssd;
    check_return_ss(c, ss_sel, rpl, &ssd);
    if (eip > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, 0);
    sys_set_accessed(c, &ssd);
    iret_set_flags(c, fl, op32, cpl);
    sys_load_cs(c, sel, &cs, rpl);
    sys_seg_from_desc(&c->seg[NM_SS], ss_sel, &ssd);
    c->eip = eip;
    cpu_update_mode(c);
    c->gpr[NM_ESP] = c->stack32 ? new_esp : (c->gpr[NM_ESP] & ~0xffffu) | (new_esp & 0xffff);
    sys_null_outer_segments(c);
}
