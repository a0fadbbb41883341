/* Descriptor tables and segment register loads (SDM vol. 3A, chapters 3
 * and 5; MOV/POP Sreg pseudo-code in vol. 2), LAR/LSL/VERR/VERW, and the
 * stack helpers the far transfers and interrupts share. */
#include "cpu/system.h"

#include "emu/core/log.h"

bool sys_fetch_desc(nm_cpu *c, uint16_t sel, nm_desc *d)
{
    uint32_t base, limit;
    if (sel & 4) {
        /* A null or never-loaded LDTR is unusable: every LDT reference fails. */
        if (!(c->ldtr.flags & NM_SEGF_P)) return false;
        base = c->ldtr.base;
        limit = c->ldtr.limit;
    } else {
        base = c->gdtr.base;
        limit = c->gdtr.limit;
    }
    uint32_t off = sel & 0xfff8u;
    if (off + 7 > limit) return false;
    d->addr = base + off;
    d->lo = cpu_lin_read32(c, d->addr, true);
    d->hi = cpu_lin_read32(c, d->addr + 4, true);
    return true;
}

void sys_set_accessed(nm_cpu *c, nm_desc *d)
{
    /* SDM vol. 3A, 3.4.5.1: the processor sets A when it loads the selector. */
    if (!desc_is_seg(d) || (d->hi & 0x100)) return;
    d->hi |= 0x100;
    cpu_lin_write8(c, d->addr + 5, (uint8_t)(d->hi >> 8), true);
}

void sys_seg_from_desc(nm_segment *s, uint16_t sel, const nm_desc *d)
{
    s->selector = sel;
    s->base = desc_base(d);
    s->limit = desc_limit(d);
    s->flags = (uint16_t)((d->hi >> 8) & 0xf0ff);
}

void sys_seg_real(nm_segment *s, uint16_t sel, bool vm86)
{
    s->selector = sel;
    s->base = (uint32_t)sel << 4;
    if (vm86) {
        /* SDM vol. 3A, 20.2.1: 64 KB, 16-bit, DPL 3, read/write data. */
        s->limit = 0xffff;
        s->flags = NM_SEGF_P | NM_SEGF_S | (3 << NM_SEGF_DPL_SHIFT) | 0x3;
    } else {
        /* Real mode: only selector and base change (limit and attributes
         * stay as they were, which "unreal mode" relies on); make sure the
         * segment is usable after a protected-mode null load. */
        if (!(s->flags & NM_SEGF_P)) {
            s->flags = NM_SEGF_P | NM_SEGF_S | 0x3;
            s->limit = 0xffff;
        }
    }
}

void sys_seg_null(nm_segment *s, uint16_t sel)
{
    /* A null selector: the segment is unusable (P=0 in the cache); any access
     * through it raises #GP(0). */
    s->selector = sel;
    s->base = 0;
    s->limit = 0;
    s->flags = 0;
}

void sys_load_cs(nm_cpu *c, uint16_t sel, const nm_desc *d, unsigned cpl)
{
    nm_desc tmp = *d;
    sys_set_accessed(c, &tmp);
    sys_seg_from_desc(&c->seg[NM_CS], (uint16_t)((sel & 0xfffc) | cpl), &tmp);
    cpu_update_mode(c);
}

void sys_null_outer_segments(nm_cpu *c)
{
    static const int segs[] = {NM_ES, NM_DS, NM_FS, NM_GS};
    for (unsigned i = 0; i < 4; i++) {
        nm_segment *s = &c->seg[segs[i]];
        if (!(s->flags & NM_SEGF_P)) continue;
        unsigned dpl = (s->flags & NM_SEGF_DPL) >> NM_SEGF_DPL_SHIFT;
        bool conforming_code = (s->flags & 0x1c) == 0x1c;
        /* Data and non-conforming code the new CPL may not use. */
        if (!conforming_code && (unsigned)c->cpl > dpl) sys_seg_null(s, 0);
    }
}

/* Offset `off` (already wrapped to the stack width) with `width` bytes is
 * inside the segment: expand-up [0, limit], expand-down (limit, top]. */
static bool stack_offset_ok(const nm_segment *ss, uint32_t off, unsigned width)
{
    uint32_t last = off + width - 1;
    if (last < off) return false;
    if ((ss->flags & 0x1c) == 0x14) { /* expand-down data */
        uint32_t top = (ss->flags & NM_SEGF_DB) ? 0xffffffffu : 0xffffu;
        return off > ss->limit && last <= top;
    }
    return last <= ss->limit;
}

uint32_t sys_push_frame(nm_cpu *c, const nm_segment *ss, uint32_t esp, unsigned width,
                        const uint32_t *vals, unsigned n, unsigned cpl, uint32_t ss_err)
{
    bool big = ss->flags & NM_SEGF_DB;
    uint32_t mask = big ? 0xffffffffu : 0xffffu;
    uint32_t sp = esp;
    /* Check the whole frame first: nothing is written if it does not fit. */
    for (unsigned i = 0; i < n; i++) {
        sp = (sp - width) & mask;
        if (!stack_offset_ok(ss, sp, width)) cpu_raise(c, NM_EXC_SS, ss_err);
    }
    sp = esp;
    bool system = cpl < 3;
    for (unsigned i = 0; i < n; i++) {
        sp = (sp - width) & mask;
        uint32_t lin = ss->base + sp;
        if (width == 4)
            cpu_lin_write32(c, lin, vals[i], system);
        else
            cpu_lin_write16(c, lin, (uint16_t)vals[i], system);
    }
    return big ? sp : (esp & ~0xffffu) | sp;
}

uint32_t sys_stack_read(nm_cpu *c, uint32_t esp, uint32_t off, unsigned width)
{
    uint32_t o = c->stack32 ? esp + off : (esp + off) & 0xffff;
    return width == 4 ? cpu_read32(c, NM_SS, o) : cpu_read16(c, NM_SS, o);
}

void sys_check_ss(nm_cpu *c, uint16_t sel, unsigned cpl, nm_desc *d, int exc, uint32_t ext)
{
    if (!(sel & 0xfffc)) cpu_raise(c, exc, ext);
    uint32_t err = (sel & 0xfffc) | ext;
    if (!sys_fetch_desc(c, sel, d)) cpu_raise(c, exc, err);
    if ((sel & 3) != cpl || !desc_writable_data(d) || desc_dpl(d) != cpl) cpu_raise(c, exc, err);
    if (!desc_present(d)) cpu_raise(c, NM_EXC_SS, err);
}

void cpu_load_sreg(nm_cpu *c, int seg, uint16_t sel)
{
    nm_segment *s = &c->seg[seg];
    if (!c->pe || c->vm86) {
        sys_seg_real(s, sel, c->vm86);
        if (seg == NM_SS || seg == NM_CS) cpu_update_mode(c);
        return;
    }
    if (seg == NM_CS) cpu_raise_noerr(c, NM_EXC_UD); /* MOV CS: far transfers only */
    unsigned cpl = (unsigned)c->cpl, rpl = sel & 3;
    uint32_t err = sel & 0xfffc;
    nm_desc d;
    if (seg == NM_SS) {
        /* MOV SS / POP SS / LSS (SDM vol. 2, MOV). */
        if (!(sel & 0xfffc)) cpu_raise(c, NM_EXC_GP, 0);
        sys_check_ss(c, sel, cpl, &d, NM_EXC_GP, 0);
        sys_set_accessed(c, &d);
        sys_seg_from_desc(s, sel, &d);
        cpu_update_mode(c);
        return;
    }
    if (!(sel & 0xfffc)) {
        sys_seg_null(s, sel);
        return;
    }
    if (!sys_fetch_desc(c, sel, &d)) cpu_raise(c, NM_EXC_GP, err);
    if (!desc_is_seg(&d) || !desc_readable(&d)) cpu_raise(c, NM_EXC_GP, err);
    if (!desc_conforming(&d) && (desc_dpl(&d) < cpl || desc_dpl(&d) < rpl))
        cpu_raise(c, NM_EXC_GP, err);
    if (!desc_present(&d)) cpu_raise(c, NM_EXC_NP, err);
    sys_set_accessed(c, &d);
    sys_seg_from_desc(s, sel, &d);
}

/* ---- LAR, LSL, VERR, VERW (SDM vol. 2; valid types in their tables) ---- */

/* Fetches the descriptor and applies the common privilege rule: DPL must be
 * >= CPL and >= RPL unless the segment is conforming code. */
static bool probe_desc(nm_cpu *c, uint16_t sel, nm_desc *d)
{
    if (!(sel & 0xfffc)) return false;
    if (!sys_fetch_desc(c, sel, d)) return false;
    if (desc_conforming(d)) return true;
    unsigned dpl = desc_dpl(d);
    return dpl >= (unsigned)c->cpl && dpl >= (sel & 3u);
}

uint32_t cpu_lar(nm_cpu *c, uint16_t sel, bool *ok)
{
    nm_desc d;
    *ok = false;
    if (!probe_desc(c, sel, &d)) return 0;
    if (!desc_is_seg(&d)) {
        switch (desc_type(&d)) {
        case DT_TSS16_AVAIL:
        case DT_LDT:
        case DT_TSS16_BUSY:
        case DT_CALLGATE16:
        case DT_TASKGATE:
        case DT_TSS32_AVAIL:
        case DT_TSS32_BUSY:
        case DT_CALLGATE32: break;
        default: return 0;
        }
    }
    *ok = true;
    return d.hi & 0x00f0ff00u;
}

uint32_t cpu_lsl(nm_cpu *c, uint16_t sel, bool *ok)
{
    nm_desc d;
    *ok = false;
    if (!probe_desc(c, sel, &d)) return 0;
    if (!desc_is_seg(&d)) {
        switch (desc_type(&d)) {
        case DT_TSS16_AVAIL:
        case DT_LDT:
        case DT_TSS16_BUSY:
        case DT_TSS32_AVAIL:
        case DT_TSS32_BUSY: break;
        default: return 0;
        }
    }
    *ok = true;
    return desc_limit(&d);
}

bool cpu_verr(nm_cpu *c, uint16_t sel)
{
    nm_desc d;
    if (!probe_desc(c, sel, &d)) return false;
    return desc_is_seg(&d) && desc_readable(&d);
}

bool cpu_verw(nm_cpu *c, uint16_t sel)
{
    nm_desc d;
    if (!probe_desc(c, sel, &d)) return false;
    return desc_writable_data(&d);
}
