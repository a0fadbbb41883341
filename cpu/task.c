/* Task switching (SDM vol. 3A, chapter 7), the TSS inner-stack fields and
 * the I/O permission bitmap (vol. 1, 18.5). */
#include "cpu/system.h"

#include "emu/core/log.h"

static bool tr_is32(const nm_cpu *c)
{
    return c->tr.flags & 0x8;
}

void sys_tss_stack(nm_cpu *c, unsigned dpl, uint16_t *ss, uint32_t *esp, uint32_t ext)
{
    /* SDM vol. 3A, 7.2.1 (32-bit TSS) and 7.6 (16-bit TSS). */
    uint32_t err = (c->tr.selector & 0xfffc) | ext;
    if (!(c->tr.flags & NM_SEGF_P)) cpu_raise(c, NM_EXC_TS, err);
    if (tr_is32(c)) {
        uint32_t off = 4 + dpl * 8;
        if (off + 5 > c->tr.limit) cpu_raise(c, NM_EXC_TS, err);
        *esp = cpu_lin_read32(c, c->tr.base + off, true);
        *ss = cpu_lin_read16(c, c->tr.base + off + 4, true);
    } else {
        uint32_t off = 2 + dpl * 4;
        if (off + 3 > c->tr.limit) cpu_raise(c, NM_EXC_TS, err);
        *esp = cpu_lin_read16(c, c->tr.base + off, true);
        *ss = cpu_lin_read16(c, c->tr.base + off + 2, true);
    }
}

void cpu_check_io(nm_cpu *c, uint16_t port, unsigned size)
{
    if (!c->pe) return;
    unsigned iopl = (cpu_get_eflags(c) >> 12) & 3;
    if (!c->vm86 && (unsigned)c->cpl <= iopl) return;
    /* The bitmap: a 32-bit TSS only; every bit of the access must be 0, and
     * both bytes read must be inside the TSS limit. */
    if (!(c->tr.flags & NM_SEGF_P) || !tr_is32(c) || c->tr.limit < 0x67) cpu_raise(c, NM_EXC_GP, 0);
    uint32_t map = cpu_lin_read16(c, c->tr.base + 0x66, true);
    uint32_t byte = map + port / 8;
    if (byte + 1 > c->tr.limit) cpu_raise(c, NM_EXC_GP, 0);
    uint32_t bits = cpu_lin_read16(c, c->tr.base + byte, true) >> (port & 7);
    if (bits & ((1u << size) - 1)) cpu_raise(c, NM_EXC_GP, 0);
}

typedef struct task_state {
    uint32_t cr3, eip, eflags, gpr[8];
    uint16_t seg[NM_SEG_COUNT], ldt;
} task_state;

static void read_tss(nm_cpu *c, uint32_t b, bool is32, task_state *t)
{
    if (is32) {
        t->cr3 = cpu_lin_read32(c, b + 0x1c, true);
        t->eip = cpu_lin_read32(c, b + 0x20, true);
        t->eflags = cpu_lin_read32(c, b + 0x24, true);
        for (int i = 0; i < 8; i++)
            t->gpr[i] = cpu_lin_read32(c, b + 0x28 + 4 * i, true);
        for (int i = 0; i < NM_SEG_COUNT; i++)
            t->seg[i] = cpu_lin_read16(c, b + 0x48 + 4 * i, true);
        t->ldt = cpu_lin_read16(c, b + 0x60, true);
    } else {
        /* 16-bit TSS (7.6): FS/GS null; "the upper 16 bits of the
         * registers are modified", to a value the SDM does not give: all
         * ones, as test386.asm's 286-TSS test expects (docs/cpu.md). */
        t->cr3 = c->cr3;
        t->eip = cpu_lin_read16(c, b + 0x0e, true);
        t->eflags = cpu_lin_read16(c, b + 0x10, true);
        for (int i = 0; i < 8; i++)
            t->gpr[i] = 0xffff0000u | cpu_lin_read16(c, b + 0x12 + 2 * i, true);
        for (int i = 0; i < 4; i++)
            t->seg[i] = cpu_lin_read16(c, b + 0x22 + 2 * i, true);
        t->seg[NM_FS] = t->seg[NM_GS] = 0;
        t->ldt = cpu_lin_read16(c, b + 0x2a, true);
    }
}

static void save_tss(nm_cpu *c, uint32_t b, bool is32, uint32_t eip, uint32_t eflags)
{
    if (is32) {
        cpu_lin_write32(c, b + 0x20, eip, true);
        cpu_lin_write32(c, b + 0x24, eflags, true);
        for (int i = 0; i < 8; i++)
            cpu_lin_write32(c, b + 0x28 + 4 * i, c->gpr[i], true);
        for (int i = 0; i < NM_SEG_COUNT; i++)
            cpu_lin_write16(c, b + 0x48 + 4 * i, c->seg[i].selector, true);
    } else {
        cpu_lin_write16(c, b + 0x0e, (uint16_t)eip, true);
        cpu_lin_write16(c, b + 0x10, (uint16_t)eflags, true);
        for (int i = 0; i < 8; i++)
            cpu_lin_write16(c, b + 0x12 + 2 * i, (uint16_t)c->gpr[i], true);
        for (int i = 0; i < 4; i++)
            cpu_lin_write16(c, b + 0x22 + 2 * i, c->seg[i].selector, true);
    }
}

/* Sets or clears the busy bit (type bit 1) of a TSS descriptor in the GDT. */
static void set_busy(nm_cpu *c, uint16_t sel, bool busy)
{
    uint32_t off = sel & 0xfff8u;
    if (off + 7 > c->gdtr.limit) return;
    uint32_t a = c->gdtr.base + off + 5;
    uint8_t t = cpu_lin_read8(c, a, true);
    cpu_lin_write8(c, a, busy ? (t | 2) : (t & ~2), true);
}

/* Loads a data segment register of the new task (7.3 step 11, table 7-?:
 * errors are #TS(sel), not present #NP(sel)). */
static void task_load_data(nm_cpu *c, int seg, uint16_t sel, unsigned cpl, uint32_t ext)
{
    if (!(sel & 0xfffc)) {
        sys_seg_null(&c->seg[seg], sel);
        return;
    }
    uint32_t err = (sel & 0xfffc) | ext;
    nm_desc d;
    if (!sys_fetch_desc(c, sel, &d)) cpu_raise(c, NM_EXC_TS, err);
    if (!desc_is_seg(&d) || !desc_readable(&d)) cpu_raise(c, NM_EXC_TS, err);
    if (!desc_conforming(&d) && (desc_dpl(&d) < cpl || desc_dpl(&d) < (sel & 3u)))
        cpu_raise(c, NM_EXC_TS, err);
    if (!desc_present(&d)) cpu_raise(c, NM_EXC_NP, err);
    sys_set_accessed(c, &d);
    sys_seg_from_desc(&c->seg[seg], sel, &d);
}

void sys_task_switch(nm_cpu *c, uint16_t sel, nm_desc *d, int reason, uint32_t return_eip,
                     bool has_error, uint32_t error_code, uint32_t ext)
{
    uint32_t err = (sel & 0xfffc) | ext;
    bool new32 = desc_type(d) & 8;
    uint32_t nbase = desc_base(d), nlimit = desc_limit(d);
    if (nlimit < (new32 ? 0x67u : 0x2bu)) cpu_raise(c, NM_EXC_TS, err);
    bool old32 = tr_is32(c);
    if (!(c->tr.flags & NM_SEGF_P) || c->tr.limit < (old32 ? 0x67u : 0x2bu))
        cpu_raise(c, NM_EXC_TS, (c->tr.selector & 0xfffc) | ext);
    nm_debug(CPU, "task switch %04x -> %04x (reason %d)", c->tr.selector, sel, reason);

    /* Read the new state before anything changes (a #PF here leaves the old
     * task intact). */
    task_state t;
    read_tss(c, nbase, new32, &t);

    uint32_t eflags = cpu_get_eflags(c);
    if (reason == TS_IRET) eflags &= ~NM_FLAG_NT;
    if (reason == TS_JMP || reason == TS_IRET) set_busy(c, c->tr.selector, false);
    save_tss(c, c->tr.base, old32, return_eip, eflags);
    if (reason == TS_CALL || reason == TS_INT) {
        cpu_lin_write16(c, nbase, c->tr.selector, true); /* back link */
        t.eflags |= NM_FLAG_NT;
    }
    if (reason != TS_IRET) set_busy(c, sel, true);

    /* Commit: from here on, faults belong to the new task. */
    nm_desc nd = *d;
    nd.hi |= 0x200; /* busy */
    sys_seg_from_desc(&c->tr, sel, &nd);
    c->cr0 |= NM_CR0_TS;
    cpu_debug_task_switch(c); /* local breakpoints belong to the old task */
    if (new32 && (c->cr0 & NM_CR0_PG)) {
        c->cr3 = t.cr3;
        cpu_tlb_flush_all(c);
    }
    for (int i = 0; i < 8; i++)
        c->gpr[i] = t.gpr[i];
    c->eip = t.eip;
    cpu_set_eflags(c, t.eflags | 2, sys_eflags_mask(c));
    for (int i = 0; i < NM_SEG_COUNT; i++)
        sys_seg_null(&c->seg[i], t.seg[i]);
    sys_seg_null(&c->ldtr, t.ldt);
    bool vm86 = (t.eflags & NM_FLAG_VM) && new32;
    if (vm86) {
        /* Segments are reloaded real-mode style; CS carries CPL 3. */
        for (int i = 0; i < NM_SEG_COUNT; i++)
            sys_seg_real(&c->seg[i], t.seg[i], true);
    } else {
        /* Keep CS 's RPL visible so CPL is the new task's while it is checked. */
        c->seg[NM_CS].flags = NM_SEGF_P | NM_SEGF_S | 0x8 | (uint16_t)((t.seg[NM_CS] & 3) << 5);
        c->seg[NM_SS].flags = NM_SEGF_P | NM_SEGF_S | 0x2 | (uint16_t)((t.seg[NM_CS] & 3) << 5);
    }
    cpu_update_mode(c);
    /* The run loop restores EIP/ESP of "the faulting instruction" on a
     * fault: make that the new task's. */
    c->insn_eip = c->eip;
    c->insn_esp = c->gpr[NM_ESP];

    /* LDTR (7.3 step 11; errors #TS(ldt)). */
    if (t.ldt & 0xfffc) {
        uint32_t lerr = (t.ldt & 0xfffc) | ext;
        nm_desc ld;
        if ((t.ldt & 4) || !sys_fetch_desc(c, t.ldt, &ld)) cpu_raise(c, NM_EXC_TS, lerr);
        if (desc_is_seg(&ld) || desc_type(&ld) != DT_LDT || !desc_present(&ld))
            cpu_raise(c, NM_EXC_TS, lerr);
        sys_seg_from_desc(&c->ldtr, t.ldt, &ld);
    }
    if (!vm86) {
        /* CS. */
        uint16_t cs = t.seg[NM_CS];
        uint32_t cerr = (cs & 0xfffc) | ext;
        unsigned cpl = cs & 3u;
        nm_desc cd;
        if (!(cs & 0xfffc)) cpu_raise(c, NM_EXC_TS, ext);
        if (!sys_fetch_desc(c, cs, &cd) || !desc_is_code(&cd)) cpu_raise(c, NM_EXC_TS, cerr);
        if (desc_conforming(&cd) ? desc_dpl(&cd) > cpl : desc_dpl(&cd) != cpl)
            cpu_raise(c, NM_EXC_TS, cerr);
        if (!desc_present(&cd)) cpu_raise(c, NM_EXC_NP, cerr);
        /* SS. */
        nm_desc sd;
        sys_check_ss(c, t.seg[NM_SS], cpl, &sd, NM_EXC_TS, ext);
        sys_set_accessed(c, &sd);
        sys_seg_from_desc(&c->seg[NM_SS], t.seg[NM_SS], &sd);
        sys_load_cs(c, cs, &cd, cpl);
        /* Data segments. */
        static const int data[] = {NM_ES, NM_DS, NM_FS, NM_GS};
        for (unsigned i = 0; i < 4; i++)
            task_load_data(c, data[i], t.seg[data[i]], cpl, ext);
    }
    cpu_update_mode(c);

    if (has_error) {
        /* 6.13: an exception with an error code delivered through a task
         * gate pushes it on the new task's stack. */
        uint32_t v = error_code;
        c->gpr[NM_ESP] = sys_push_frame(c, &c->seg[NM_SS], c->gpr[NM_ESP], new32 ? 4 : 2, &v, 1,
                                        (unsigned)c->cpl, ext);
    }
    if (c->eip > c->seg[NM_CS].limit) cpu_raise(c, NM_EXC_GP, ext);
}
