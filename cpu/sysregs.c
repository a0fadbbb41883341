/* System registers and instructions: descriptor-table registers, LLDT/LTR,
 * control and debug registers, CPUID, MSRs and the TSC (SDM vol. 3A, 2.4-2.7
 * and vol. 2 for each instruction). */
#include "cpu/system.h"

#include "emu/core/log.h"

uint32_t sys_eflags_mask(const nm_cpu *c)
{
    uint32_t m = NM_FLAGS_ARITH | NM_FLAG_TF | NM_FLAG_IF | NM_FLAG_DF | NM_FLAG_IOPL | NM_FLAG_NT |
                 NM_FLAG_RF | NM_FLAG_VM;
    if (cpu_isa486(c)) m |= NM_FLAG_AC;
    if (c->model->has_cpuid) m |= NM_FLAG_ID;
    if (c->model->cpuid_features & NM_CPUID_VME) m |= NM_FLAG_VIF | NM_FLAG_VIP;
    return m;
}

/* Privileged instructions: CPL 0 in protected mode (VM86 runs at CPL 3). */
static void need_cpl0(nm_cpu *c)
{
    if (c->pe && c->cpl != 0) cpu_raise(c, NM_EXC_GP, 0);
}

static bool has_cr4(const nm_cpu *c)
{
    return c->model->family >= NM_CPU_PENTIUM || c->model->has_cpuid;
}

static uint32_t cr4_valid_bits(const nm_cpu *c)
{
    /* Pentium: VME PVI TSD DE PSE MCE; SL-enhanced 486: VME PVI. */
    uint32_t f = c->model->cpuid_features, m = 0;
    if (f & NM_CPUID_VME) m |= NM_CR4_VME | NM_CR4_PVI;
    if (f & NM_CPUID_TSC) m |= NM_CR4_TSD;
    if (f & NM_CPUID_DE) m |= NM_CR4_DE;
    if (f & NM_CPUID_PSE) m |= NM_CR4_PSE;
    if (f & NM_CPUID_MCE) m |= NM_CR4_MCE;
    return m;
}

void cpu_lgdt(nm_cpu *c, uint32_t base, uint16_t limit)
{
    /* The core masks the base to 24 bits for a 16-bit operand size. */
    need_cpl0(c);
    c->gdtr.base = base;
    c->gdtr.limit = limit;
}

void cpu_lidt(nm_cpu *c, uint32_t base, uint16_t limit)
{
    need_cpl0(c);
    c->idtr.base = base;
    c->idtr.limit = limit;
}

void cpu_lldt(nm_cpu *c, uint16_t sel)
{
    if (!c->pe || c->vm86) cpu_raise_noerr(c, NM_EXC_UD);
    need_cpl0(c);
    if (!(sel & 0xfffc)) {
        sys_seg_null(&c->ldtr, sel); /* LDTR unusable */
        return;
    }
    uint32_t err = sel & 0xfffc;
    nm_desc d;
    if ((sel & 4) || !sys_fetch_desc(c, sel, &d)) cpu_raise(c, NM_EXC_GP, err);
    if (desc_is_seg(&d) || desc_type(&d) != DT_LDT) cpu_raise(c, NM_EXC_GP, err);
    if (!desc_present(&d)) cpu_raise(c, NM_EXC_NP, err);
    sys_seg_from_desc(&c->ldtr, sel, &d);
}

void cpu_ltr(nm_cpu *c, uint16_t sel)
{
    if (!c->pe || c->vm86) cpu_raise_noerr(c, NM_EXC_UD);
    need_cpl0(c);
    if (!(sel & 0xfffc)) cpu_raise(c, NM_EXC_GP, 0);
    uint32_t err = sel & 0xfffc;
    nm_desc d;
    if ((sel & 4) || !sys_fetch_desc(c, sel, &d)) cpu_raise(c, NM_EXC_GP, err);
    if (desc_is_seg(&d) || (desc_type(&d) != DT_TSS16_AVAIL && desc_type(&d) != DT_TSS32_AVAIL))
        cpu_raise(c, NM_EXC_GP, err);
    if (!desc_present(&d)) cpu_raise(c, NM_EXC_NP, err);
    /* LTR marks the TSS busy (SDM vol. 2, LTR). */
    d.hi |= 0x200;
    cpu_lin_write8(c, d.addr + 5, (uint8_t)(d.hi >> 8), true);
    sys_seg_from_desc(&c->tr, sel, &d);
}

uint32_t cpu_read_cr(nm_cpu *c, int n)
{
    need_cpl0(c);
    switch (n) {
    case 0: return c->cr0;
    case 2: return c->cr2;
    case 3: return c->cr3;
    case 4:
        if (has_cr4(c)) return c->cr4;
        break;
    default: break;
    }
    cpu_raise_noerr(c, NM_EXC_UD);
}

void cpu_write_cr(nm_cpu *c, int n, uint32_t v)
{
    need_cpl0(c);
    switch (n) {
    case 0: {
        /* Reserved CR0 bits are ignored; PG without PE and NW without CD
         * are #GP(0) (SDM vol. 3A, 2.5; MOV CR in vol. 2). */
        bool i486 = cpu_isa486(c);
        uint32_t valid = NM_CR0_PE | NM_CR0_MP | NM_CR0_EM | NM_CR0_TS | NM_CR0_ET | NM_CR0_PG;
        if (i486) valid |= NM_CR0_NE | NM_CR0_WP | NM_CR0_AM | NM_CR0_NW | NM_CR0_CD;
        v &= valid;
        /* ET: hardwired on the 486 and later; a 386's is software's (it says
         * 287 or 387), but nothing else here reads it. */
        if (c->model->family >= NM_CPU_486) v |= NM_CR0_ET;
        if ((v & NM_CR0_PG) && !(v & NM_CR0_PE)) cpu_raise(c, NM_EXC_GP, 0);
        if ((v & NM_CR0_NW) && !(v & NM_CR0_CD)) cpu_raise(c, NM_EXC_GP, 0);
        uint32_t changed = c->cr0 ^ v;
        c->cr0 = v;
        if (changed & (NM_CR0_PG | NM_CR0_PE | NM_CR0_WP)) cpu_tlb_flush_all(c);
        cpu_update_mode(c);
        return;
    }
    case 2: c->cr2 = v; return;
    case 3:
        c->cr3 = v & (cpu_isa486(c) ? 0xfffff018u : 0xfffff000u);
        cpu_tlb_flush_all(c);
        return;
    case 4:
        if (!has_cr4(c)) break;
        if (v & ~cr4_valid_bits(c)) cpu_raise(c, NM_EXC_GP, 0);
        if ((c->cr4 ^ v) & NM_CR4_PSE) cpu_tlb_flush_all(c);
        c->cr4 = v;
        return;
    default: break;
    }
    cpu_raise_noerr(c, NM_EXC_UD);
}

/* DR4/DR5 alias DR6/DR7 unless CR4.DE (SDM vol. 3A, 17.2.2). */
static int dr_index(nm_cpu *c, int n)
{
    if (n == 4 || n == 5) {
        if (c->cr4 & NM_CR4_DE) cpu_raise_noerr(c, NM_EXC_UD);
        n += 2;
    }
    return n & 7;
}

uint32_t cpu_read_dr(nm_cpu *c, int n)
{
    need_cpl0(c);
    n = dr_index(c, n);
    cpu_debug_access_check(c);
    return c->dr[n];
}

void cpu_write_dr(nm_cpu *c, int n, uint32_t v)
{
    need_cpl0(c);
    n = dr_index(c, n);
    cpu_debug_access_check(c);
    if (n == 6) v = (v & 0xe00fu) | 0xffff0ff0u; /* reserved bits read as 1 */
    if (n == 7) v = (v & ~0xd800u) | 0x400u;
    c->dr[n] = v;
    if (n != 6) cpu_debug_update(c);
}

void cpu_clts(nm_cpu *c)
{
    need_cpl0(c);
    c->cr0 &= ~NM_CR0_TS;
}

void cpu_cpuid(nm_cpu *c)
{
    const nm_cpu_model *m = c->model;
    if (!m->has_cpuid) cpu_raise_noerr(c, NM_EXC_UD);
    uint32_t leaf = c->gpr[NM_EAX];
    /* Max basic leaf 1; higher leaves return the highest basic leaf's data
     * (the Intel rule for leaves above the maximum). */
    if (leaf == 0) {
        c->gpr[NM_EAX] = 1;
        c->gpr[NM_EBX] = 0x756e6547; /* "Genu" */
        c->gpr[NM_EDX] = 0x49656e69; /* "ineI" */
        c->gpr[NM_ECX] = 0x6c65746e; /* "ntel" */
        return;
    }
    c->gpr[NM_EAX] = m->cpuid_signature;
    c->gpr[NM_EBX] = 0;
    c->gpr[NM_ECX] = 0;
    c->gpr[NM_EDX] = m->cpuid_features;
}

/* MSRs of the P5 (SDM vol. 4, table "MSRs in the Pentium Processor"). */
#define MSR_P5_MC_ADDR 0x0
#define MSR_P5_MC_TYPE 0x1
#define MSR_TSC        0x10

static void need_msr(nm_cpu *c)
{
    if (!(c->model->cpuid_features & NM_CPUID_MSR)) cpu_raise_noerr(c, NM_EXC_UD);
    need_cpl0(c);
}

void cpu_rdmsr(nm_cpu *c)
{
    need_msr(c);
    uint64_t v;
    switch (c->gpr[NM_ECX]) {
    case MSR_P5_MC_ADDR: v = c->msr_misc[0]; break;
    case MSR_P5_MC_TYPE: v = c->msr_misc[1]; break;
    case MSR_TSC: v = c->clock->cycles + c->tsc_offset; break;
    /* An MSR the part lacks: #GP(0), as the P5 does (Linux probes some,
     * e.g. 0x3a and 0x140, with rdmsr_safe): not worth a warning. */
    default: nm_debug(CPU, "rdmsr: no MSR 0x%x: #GP", c->gpr[NM_ECX]); cpu_raise(c, NM_EXC_GP, 0);
    }
    c->gpr[NM_EAX] = (uint32_t)v;
    c->gpr[NM_EDX] = (uint32_t)(v >> 32);
}

void cpu_wrmsr(nm_cpu *c)
{
    need_msr(c);
    uint64_t v = ((uint64_t)c->gpr[NM_EDX] << 32) | c->gpr[NM_EAX];
    switch (c->gpr[NM_ECX]) {
    case MSR_P5_MC_ADDR: c->msr_misc[0] = v; break;
    case MSR_P5_MC_TYPE: c->msr_misc[1] = v; break;
    case MSR_TSC: c->tsc_offset = v - c->clock->cycles; break;
    default: nm_debug(CPU, "wrmsr: no MSR 0x%x: #GP", c->gpr[NM_ECX]); cpu_raise(c, NM_EXC_GP, 0);
    }
}

uint64_t cpu_rdtsc_value(nm_cpu *c)
{
    if (!(c->model->cpuid_features & NM_CPUID_TSC)) cpu_raise_noerr(c, NM_EXC_UD);
    if ((c->cr4 & NM_CR4_TSD) && c->pe && c->cpl > 0) cpu_raise(c, NM_EXC_GP, 0);
    return c->clock->cycles + c->tsc_offset;
}

void cpu_invlpg(nm_cpu *c, uint32_t lin)
{
    need_cpl0(c);
    c->invlpg_lin = lin; /* for the cost models' TLBs */
    cpu_tlb_flush_page(c, lin);
}
