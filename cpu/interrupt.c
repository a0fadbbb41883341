/* Interrupt and exception delivery: the real-mode IVT, the protected-mode
 * IDT with interrupt, trap and task gates (SDM vol. 3A, 6.10-6.14; INT n
 * pseudo-code in vol. 2), and the double/triple fault rules (6.15, table 6-5). */
#include "cpu/system.h"

#include <stdio.h>

#include "emu/core/log.h"

static void interrupt_real(nm_cpu *c, unsigned vector, uint32_t return_eip)
{
    /* SDM vol. 2, INT n, REAL-ADDRESS-MODE. */
    if (vector * 4 + 3 > c->idtr.limit) cpu_raise(c, NM_EXC_GP, 0);
    uint32_t ent = c->idtr.base + vector * 4;
    uint16_t ip = cpu_lin_read16(c, ent, true);
    uint16_t cs = cpu_lin_read16(c, ent + 2, true);
    uint32_t vals[3] = {cpu_get_eflags(c) & 0xffff, c->seg[NM_CS].selector, return_eip & 0xffff};
    uint32_t esp = sys_push_frame(c, &c->seg[NM_SS], c->gpr[NM_ESP], 2, vals, 3, 0, 0);
    c->gpr[NM_ESP] = esp;
    sys_seg_real(&c->seg[NM_CS], cs, false);
    c->eip = ip;
    cpu_set_eflags(c, 0, NM_FLAG_IF | NM_FLAG_TF | NM_FLAG_AC);
    cpu_update_mode(c);
}

static void interrupt_protected(nm_cpu *c, unsigned vector, unsigned kind, bool has_error,
                                uint32_t error_code, uint32_t return_eip)
{
    uint32_t ext = (kind == NM_INT_SOFTWARE) ? 0 : 1;
    uint32_t idt_err = vector * 8 + 2 + ext;
    unsigned cpl = (unsigned)c->cpl;

    /* The virtual-8086 IOPL check of INT n is in h_int: INT3 and INTO are
     * not IOPL-sensitive. */
    if (vector * 8 + 7 > c->idtr.limit) cpu_raise(c, NM_EXC_GP, idt_err);
    nm_desc gate;
    gate.addr = c->idtr.base + vector * 8;
    gate.lo = cpu_lin_read32(c, gate.addr, true);
    gate.hi = cpu_lin_read32(c, gate.addr + 4, true);
    unsigned type = desc_type(&gate);
    if (desc_is_seg(&gate) ||
        (type != DT_TASKGATE && type != DT_INTGATE16 && type != DT_TRAPGATE16 &&
         type != DT_INTGATE32 && type != DT_TRAPGATE32))
        cpu_raise(c, NM_EXC_GP, idt_err);
    /* Software interrupts check the gate's DPL (6.12.1.1); INT1 does not. */
    if (kind == NM_INT_SOFTWARE && desc_dpl(&gate) < cpl) cpu_raise(c, NM_EXC_GP, vector * 8 + 2);
    if (!desc_present(&gate)) cpu_raise(c, NM_EXC_NP, idt_err);

    if (type == DT_TASKGATE) {
        /* 6.11.2 / 7.3: the task gate names a TSS in the GDT. */
        uint16_t tsel = gate_selector(&gate);
        uint32_t terr = (tsel & 0xfffc) | ext;
        nm_desc tss;
        if ((tsel & 4) || !sys_fetch_desc(c, tsel, &tss)) cpu_raise(c, NM_EXC_GP, terr);
        if (desc_is_seg(&tss) ||
            (desc_type(&tss) != DT_TSS16_AVAIL && desc_type(&tss) != DT_TSS32_AVAIL))
            cpu_raise(c, NM_EXC_GP, terr);
        if (!desc_present(&tss)) cpu_raise(c, NM_EXC_NP, terr);
        sys_task_switch(c, tsel, &tss, TS_INT, return_eip, has_error, error_code, ext);
        return;
    }

    bool gate32 = type >= DT_TSS32_AVAIL;
    unsigned width = gate32 ? 4 : 2;
    uint16_t csel = gate_selector(&gate);
    uint32_t offset = gate_offset(&gate, gate32);
    uint32_t cerr = (csel & 0xfffc) | ext;
    nm_desc cs;
    if (!(csel & 0xfffc)) cpu_raise(c, NM_EXC_GP, ext);
    if (!sys_fetch_desc(c, csel, &cs)) cpu_raise(c, NM_EXC_GP, cerr);
    if (!desc_is_code(&cs) || desc_dpl(&cs) > cpl) cpu_raise(c, NM_EXC_GP, cerr);
    if (!desc_present(&cs)) cpu_raise(c, NM_EXC_NP, cerr);

    unsigned dpl = desc_dpl(&cs);
    uint32_t eflags = cpu_get_eflags(c);
    uint32_t vals[10];
    unsigned n = 0;
    nm_segment new_ss = c->seg[NM_SS];
    uint32_t new_esp;
    unsigned new_cpl;
    bool from_vm86 = c->vm86;

    if (!desc_conforming(&cs) && dpl < cpl) {
        /* Inner privilege: stack from the TSS (6.12.1). */
        if (from_vm86 && dpl != 0) cpu_raise(c, NM_EXC_GP, cerr);
        uint16_t ss_sel;
        uint32_t esp;
        sys_tss_stack(c, dpl, &ss_sel, &esp, ext);
        nm_desc ssd;
        sys_check_ss(c, ss_sel, dpl, &ssd, NM_EXC_TS, ext);
        sys_seg_from_desc(&new_ss, ss_sel, &ssd);
        new_ss.flags |= NM_SEGF_ACCESSED;
        if (from_vm86) {
            vals[n++] = c->seg[NM_GS].selector;
            vals[n++] = c->seg[NM_FS].selector;
            vals[n++] = c->seg[NM_DS].selector;
            vals[n++] = c->seg[NM_ES].selector;
        }
        vals[n++] = c->seg[NM_SS].selector;
        vals[n++] = c->gpr[NM_ESP];
        vals[n++] = eflags;
        vals[n++] = c->seg[NM_CS].selector;
        vals[n++] = return_eip;
        if (has_error) vals[n++] = error_code;
        if (offset > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, ext);
        new_esp = sys_push_frame(c, &new_ss, esp, width, vals, n, dpl, (ss_sel & 0xfffc) | ext);
        sys_set_accessed(c, &ssd);
        new_cpl = dpl;
    } else {
        if (from_vm86) cpu_raise(c, NM_EXC_GP, cerr);
        if (!desc_conforming(&cs) && dpl != cpl) cpu_raise(c, NM_EXC_GP, cerr);
        vals[n++] = eflags;
        vals[n++] = c->seg[NM_CS].selector;
        vals[n++] = return_eip;
        if (has_error) vals[n++] = error_code;
        if (offset > desc_limit(&cs)) cpu_raise(c, NM_EXC_GP, ext);
        new_esp = sys_push_frame(c, &new_ss, c->gpr[NM_ESP], width, vals, n, cpl, ext);
        new_cpl = cpl;
    }

    /* Commit. */
    if (from_vm86) {
        sys_seg_null(&c->seg[NM_ES], 0);
        sys_seg_null(&c->seg[NM_DS], 0);
        sys_seg_null(&c->seg[NM_FS], 0);
        sys_seg_null(&c->seg[NM_GS], 0);
    }
    c->seg[NM_SS] = new_ss;
    c->gpr[NM_ESP] = new_esp;
    uint32_t clear = NM_FLAG_TF | NM_FLAG_NT | NM_FLAG_RF | NM_FLAG_VM;
    if (type == DT_INTGATE16 || type == DT_INTGATE32) clear |= NM_FLAG_IF;
    cpu_set_eflags(c, 0, clear);
    sys_load_cs(c, csel, &cs, new_cpl);
    c->eip = offset;
    cpu_update_mode(c);
}

void cpu_interrupt(nm_cpu *c, unsigned vector, unsigned kind, bool has_error, uint32_t error_code,
                   uint32_t return_eip)
{
    vector &= 0xff;
    /* The run loop reports exceptions and external interrupts to the hook
     * before delivering them; software interrupts are reported here. */
    if ((kind == NM_INT_SOFTWARE || kind == NM_INT_SOFTWARE_ICEBP) && c->have_hooks &&
        c->hooks.interrupt)
        c->hooks.interrupt(c->hooks.opaque, vector, kind, return_eip);
    nm_debug(INT, "int 0x%02x kind %u err %s0x%x at %04x:%08x", vector, kind,
             has_error ? "" : "(none) ", error_code, c->seg[NM_CS].selector, return_eip);
    c->halted = false;
    if (!c->pe)
        interrupt_real(c, vector, return_eip);
    else
        interrupt_protected(c, vector, kind, has_error, error_code, return_eip);
}

/* Exception classes for the double-fault rules (SDM vol. 3A, table 6-4). */
static bool contributory(int v)
{
    return v == NM_EXC_DE || v == NM_EXC_TS || v == NM_EXC_NP || v == NM_EXC_SS || v == NM_EXC_GP;
}

static void triple_fault(nm_cpu *c)
{
    nm_warn(CPU, "triple fault at %04x:%08x", c->seg[NM_CS].selector, c->eip);
    fprintf(stderr, "nicemu: triple fault (shutdown); CPU state:\n");
    nm_cpu_dump_state(c, stderr);
    nm_machine_request_stop(c->m, NM_STOP_RESET, 0, "triple fault");
    /* Shutdown: nothing but RESET (or NMI) continues; we stop here. */
    cpu_set_eflags(c, 0, NM_FLAG_IF);
    c->halted = true;
}

void cpu_deliver_exception(nm_cpu *c, int vector, bool has_error, uint32_t error_code)
{
    jmp_buf here;
    jmp_buf *volatile outer = c->fault_jmp;
    volatile int vec = vector;
    volatile bool has_err = has_error;
    volatile uint32_t err = error_code;

    c->exception_depth = 0;
    if (setjmp(here)) { /* a fault while delivering `vec` lands here */
        /* The nested fault the core recorded before unwinding. */
        int second = c->pending_vector;
        bool second_has = c->pending_has_error;
        uint32_t second_err = c->pending_error;
        if (vec == NM_EXC_DF) {
            c->fault_jmp = outer;
            c->exception_depth = 0;
            c->pending_vector = -1;
            triple_fault(c);
            return;
        }
        if ((contributory(vec) && contributory(second)) ||
            (vec == NM_EXC_PF && (second == NM_EXC_PF || contributory(second)))) {
            vec = NM_EXC_DF;
            has_err = true;
            err = 0;
            if (c->have_hooks && c->hooks.interrupt)
                c->hooks.interrupt(c->hooks.opaque, NM_EXC_DF, NM_INT_EXCEPTION, c->eip);
        } else {
            /* Benign combinations: handle the second one serially. */
            vec = second;
            has_err = second_has;
            err = second_err;
        }
    }
    c->exception_depth++;
    c->fault_jmp = &here;
    cpu_interrupt(c, (unsigned)vec, NM_INT_EXCEPTION, has_err, err, c->eip);
    c->fault_jmp = outer;
    c->exception_depth = 0;
    c->pending_vector = -1;
}
