/* Segment register loads, I/O, flag instructions, processor control and the
 * system instructions.  The core fetches operands and checks CPL 0 for the
 * privileged ones (#GP(0), SDM vol. 3A, 5.9) and the real/virtual-8086 mode
 * #UD of the protected-mode-only ones; the system half does the rest. */
#include "cpu/exec.h"

static void inhibit_next(nm_cpu *c)
{
    c->inhibit_irq = true;
    c->inhibit_fresh = true;
}

static void require_pm(nm_cpu *c)
{
    if (!c->pe || c->vm86) cpu_raise(c, NM_EXC_UD, 0);
}

void h_mov_to_sreg(nm_cpu *c, const nm_insn *i)
{
    uint16_t v = (uint16_t)rm_read(c, i, 2);
    cpu_load_sreg(c, i->reg, v);
    if (i->reg == NM_SS) inhibit_next(c); /* SDM vol. 3A, 6.8.3 */
}

void h_mov_from_sreg(nm_cpu *c, const nm_insn *i)
{
    rm_write(c, i, i->mod == 3 ? i->opsize : 2, c->seg[i->reg].selector);
}

/* LDS, LES, LFS, LGS, LSS. */
void h_load_far_ptr(nm_cpu *c, const nm_insn *i)
{
    uint32_t ea = insn_ea(c, i);
    uint32_t off = mem_read(c, i->seg, ea, i->opsize);
    uint32_t ea2 = ea + i->opsize;
    if (!i->addr32) ea2 &= 0xffff;
    uint16_t sel = (uint16_t)mem_read(c, i->seg, ea2, 2);
    cpu_load_sreg(c, i->cond, sel);
    reg_set(c, i->reg, i->opsize, off);
}

/* ------------------------------------------------------------------ I/O */

void io_check(nm_cpu *c, uint16_t port, unsigned size)
{
    /* SDM vol. 1, 18.5: protected mode with CPL > IOPL, or virtual-8086
     * mode, consults the TSS I/O permission bitmap. */
    if (c->pe && (c->vm86 || c->cpl > (int)iopl(c))) cpu_check_io(c, port, size);
}

uint32_t io_in(nm_cpu *c, uint16_t port, unsigned size)
{
    c->fast_exit |= NM_FAST_EXIT;
    if (c->have_hooks && c->hooks.io) c->hooks.io(c->hooks.opaque, port, size, false);
    uint32_t v = nm_io_read(c->io, port, size);
    if (c->poll.enabled && !c->have_hooks)
        cpu_poll_io(c, port, size, v, nm_io_read_repeatable(c->io, port, size));
    return v;
}

void io_out(nm_cpu *c, uint16_t port, uint32_t v, unsigned size)
{
    c->fast_exit |= NM_FAST_EXIT;
    if (c->have_hooks && c->hooks.io) c->hooks.io(c->hooks.opaque, port, size, true);
    if (c->poll.enabled && !c->have_hooks) cpu_poll_io(c, port, size, v, false);
    nm_io_write(c->io, port, v, size);
}

static uint16_t io_port(const nm_cpu *c, const nm_insn *i)
{
    return i->opcode < 0xe8 ? (uint16_t)(i->imm & 0xff) : (uint16_t)c->gpr[NM_EDX];
}

void h_in(nm_cpu *c, const nm_insn *i)
{
    uint16_t port = io_port(c, i);
    io_check(c, port, i->opsize);
    reg_set(c, NM_EAX, i->opsize, io_in(c, port, i->opsize));
}

void h_out(nm_cpu *c, const nm_insn *i)
{
    uint16_t port = io_port(c, i);
    io_check(c, port, i->opsize);
    io_out(c, port, reg_get(c, NM_EAX, i->opsize), i->opsize);
}

/* ---------------------------------------------------------------- flags */

void h_hlt(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    require_cpl0(c);
    c->halted = true;
    c->fetch_lin = 1; /* leaves the run loop's straight-line path */
}

/* CLI/STI: in protected mode only when CPL <= IOPL; in virtual-8086 mode
 * only with IOPL 3 (SDM vol. 2A, CLI; no VME/PVI). */
static void check_if_change(nm_cpu *c)
{
    if (c->vm86 ? iopl(c) < 3 : (c->pe && c->cpl > (int)iopl(c))) cpu_raise(c, NM_EXC_GP, 0);
}

void h_cli(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    check_if_change(c);
    c->eflags &= ~NM_FLAG_IF;
}

void h_sti(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    check_if_change(c);
    /* Interrupts are recognised after the instruction that follows STI. */
    if (!(c->eflags & NM_FLAG_IF)) inhibit_next(c);
    c->eflags |= NM_FLAG_IF;
}

static void set_cf_to(nm_cpu *c, int how) /* 0 clear, 1 set, 2 complement */
{
    uint32_t f = cpu_get_eflags(c);
    f = how == 0 ? f & ~NM_FLAG_CF : how == 1 ? f | NM_FLAG_CF : f ^ NM_FLAG_CF;
    flags_set_arith(c, f);
}
void h_clc(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    set_cf_to(c, 0);
}
void h_stc(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    set_cf_to(c, 1);
}
void h_cmc(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    set_cf_to(c, 2);
}
void h_cld(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    c->eflags &= ~NM_FLAG_DF;
}
void h_std(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    c->eflags |= NM_FLAG_DF;
}

void h_ud(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    cpu_raise(c, NM_EXC_UD, 0);
}

/* -------------------------------------------------------------- system */

void h_sldt(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    rm_write(c, i, i->mod == 3 ? i->opsize : 2, c->ldtr.selector);
}

void h_str(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    rm_write(c, i, i->mod == 3 ? i->opsize : 2, c->tr.selector);
}

void h_lldt(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    require_cpl0(c);
    cpu_lldt(c, (uint16_t)rm_read(c, i, 2));
}

void h_ltr(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    require_cpl0(c);
    cpu_ltr(c, (uint16_t)rm_read(c, i, 2));
}

static void set_zf_to(nm_cpu *c, bool zf)
{
    uint32_t f = cpu_get_eflags(c);
    flags_set_arith(c, zf ? f | NM_FLAG_ZF : f & ~NM_FLAG_ZF);
}

void h_verr(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    set_zf_to(c, cpu_verr(c, (uint16_t)rm_read(c, i, 2)));
}

void h_verw(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    set_zf_to(c, cpu_verw(c, (uint16_t)rm_read(c, i, 2)));
}

static void store_dtr(nm_cpu *c, const nm_insn *i, const nm_dtr *t)
{
    uint32_t ea = insn_ea(c, i);
    uint32_t ea2 = ea + 2;
    if (!i->addr32) ea2 &= 0xffff;
    /* With a 16-bit operand the 386/486 store a 24-bit base (high byte 0). */
    uint32_t base = i->opsize == 2 ? t->base & 0x00ffffffu : t->base;
    mem_write(c, i->seg, ea, t->limit, 2);
    mem_write(c, i->seg, ea2, base, 4);
}

static void load_dtr(nm_cpu *c, const nm_insn *i, uint32_t *base, uint16_t *limit)
{
    uint32_t ea = insn_ea(c, i);
    uint32_t ea2 = ea + 2;
    if (!i->addr32) ea2 &= 0xffff;
    *limit = (uint16_t)mem_read(c, i->seg, ea, 2);
    *base = mem_read(c, i->seg, ea2, 4);
    if (i->opsize == 2) *base &= 0x00ffffffu;
}

void h_sgdt(nm_cpu *c, const nm_insn *i)
{
    store_dtr(c, i, &c->gdtr);
}
void h_sidt(nm_cpu *c, const nm_insn *i)
{
    store_dtr(c, i, &c->idtr);
}

void h_lgdt(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    uint32_t base;
    uint16_t limit;
    load_dtr(c, i, &base, &limit);
    cpu_lgdt(c, base, limit);
}

void h_lidt(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    uint32_t base;
    uint16_t limit;
    load_dtr(c, i, &base, &limit);
    cpu_lidt(c, base, limit);
}

void h_smsw(nm_cpu *c, const nm_insn *i)
{
    uint32_t v = c->cr0;
    rm_write(c, i, i->mod == 3 ? i->opsize : 2, i->mod == 3 && i->opsize == 4 ? v : v & 0xffff);
}

void h_lmsw(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    uint32_t v = rm_read(c, i, 2);
    /* Loads PE, MP, EM, TS; cannot clear PE (SDM vol. 2A, LMSW). */
    uint32_t cr0 = (c->cr0 & ~0xeu) | (v & 0xe) | ((v | c->cr0) & 1);
    cpu_write_cr(c, 0, cr0);
}

void h_invlpg(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    cpu_invlpg(c, c->seg[i->seg].base + insn_ea(c, i));
}

void h_lar(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    bool ok = false;
    uint32_t v = cpu_lar(c, (uint16_t)rm_read(c, i, 2), &ok);
    if (ok) reg_set(c, i->reg, i->opsize, v);
    set_zf_to(c, ok);
}

void h_lsl(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    bool ok = false;
    uint32_t v = cpu_lsl(c, (uint16_t)rm_read(c, i, 2), &ok);
    if (ok) reg_set(c, i->reg, i->opsize, v);
    set_zf_to(c, ok);
}

void h_arpl(nm_cpu *c, const nm_insn *i)
{
    require_pm(c);
    uint32_t ea = i->mod == 3 ? 0 : insn_ea(c, i);
    uint32_t d = i->mod == 3 ? reg_get(c, i->rm, 2) : mem_read(c, i->seg, ea, 2);
    uint32_t s = reg_get(c, i->reg, 2);
    bool adjust = (d & 3) < (s & 3);
    if (adjust) {
        d = (d & ~3u) | (s & 3);
        if (i->mod == 3)
            reg_set(c, i->rm, 2, d);
        else
            mem_write(c, i->seg, ea, d, 2);
    }
    set_zf_to(c, adjust);
}

void h_clts(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    require_cpl0(c);
    cpu_clts(c);
}

/* No caches are modelled here: INVD/WBINVD only check privilege. */
void h_invd(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    require_cpl0(c);
}
void h_wbinvd(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    require_cpl0(c);
}

void h_cpuid(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    cpu_cpuid(c);
}

void h_rdtsc(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    uint64_t v = cpu_rdtsc_value(c);
    c->gpr[NM_EAX] = (uint32_t)v;
    c->gpr[NM_EDX] = (uint32_t)(v >> 32);
}

void h_rdmsr(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    require_cpl0(c);
    cpu_rdmsr(c);
}
void h_wrmsr(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    require_cpl0(c);
    cpu_wrmsr(c);
}

void h_mov_from_cr(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    c->gpr[i->rm] = cpu_read_cr(c, i->reg);
}

void h_mov_to_cr(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    cpu_write_cr(c, i->reg, c->gpr[i->rm]); /* flushes the TLB and updates the mode */
}

void h_mov_from_dr(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    c->gpr[i->rm] = cpu_read_dr(c, i->reg);
}

void h_mov_to_dr(nm_cpu *c, const nm_insn *i)
{
    require_cpl0(c);
    cpu_write_dr(c, i->reg, c->gpr[i->rm]);
}
