/* The page walk: 32-bit paging with 4 KB pages and, on the Pentium with
 * CR4.PSE, 4 MB pages (SDM vol. 3A, 4.3 and 4.6-4.8). */
#include "cpu/system.h"

#define PTE_P  0x001u
#define PTE_RW 0x002u
#define PTE_US 0x004u
#define PTE_A  0x020u
#define PTE_D  0x040u
#define PDE_PS 0x080u

static uint32_t phys_read32(nm_cpu *c, uint32_t pa)
{
    pa &= c->a20_mask;
    c->fast_exit |= NM_FAST_EXIT; /* the tables may be anywhere, MMIO included */
    cpu_run_sync(c);
    if (c->hooks.mem) c->hooks.mem(c->hooks.opaque, pa, pa, 4, NM_MEM_SYSTEM | NM_MEM_PAGEWALK);
    return nm_mem_read(c->mem, pa, 4);
}

static void phys_write32(nm_cpu *c, uint32_t pa, uint32_t v)
{
    pa &= c->a20_mask;
    c->fast_exit |= NM_FAST_EXIT;
    cpu_run_sync(c);
    if (c->hooks.mem)
        c->hooks.mem(c->hooks.opaque, pa, pa, 4, NM_MEM_SYSTEM | NM_MEM_PAGEWALK | NM_MEM_WRITE);
    nm_mem_write(c->mem, pa, v, 4);
}

_Noreturn static void page_fault(nm_cpu *c, uint32_t lin, uint32_t err)
{
    /* SDM vol. 3A, 4.7: CR2 gets the linear address; the error code says
     * P (protection vs not present), W/R and U/S.  I/D is not reported
     * before PAE/NX. */
    c->cr2 = lin;
    cpu_raise(c, NM_EXC_PF, err);
}

uint32_t cpu_page_walk(nm_cpu *c, uint32_t lin, unsigned access, bool *writable, bool *user)
{
    bool is_write = access & NM_ACC_WRITE;
    bool is_user = access & NM_ACC_USER;
    uint32_t err = (is_write ? 2u : 0u) | (is_user ? 4u : 0u);

    uint32_t pde_addr = (c->cr3 & 0xfffff000u) | ((lin >> 20) & 0xffcu);
    uint32_t pde = phys_read32(c, pde_addr);
    if (!(pde & PTE_P)) page_fault(c, lin, err);

    bool big = (pde & PDE_PS) && (c->cr4 & NM_CR4_PSE);
    uint32_t pte_addr = 0, pte = 0, rights;
    if (big) {
        rights = pde;
    } else {
        pte_addr = (pde & 0xfffff000u) | ((lin >> 10) & 0xffcu);
        pte = phys_read32(c, pte_addr);
        if (!(pte & PTE_P)) page_fault(c, lin, err);
        rights = pde & pte; /* SDM vol. 3A, 4.6: both levels must allow it */
    }

    /* Protection (SDM vol. 3A, 4.6.1): user accesses need U/S=1 at both
     * levels and R/W=1 to write; supervisor writes to read-only pages fault
     * only when CR0.WP=1. */
    bool rw = rights & PTE_RW, us = rights & PTE_US;
    if (is_user && !us) page_fault(c, lin, err | 1);
    if (is_write && !rw && (is_user || (c->cr0 & NM_CR0_WP))) page_fault(c, lin, err | 1);

    /* Accessed and dirty bits, written back only when they change. */
    if (big) {
        uint32_t want = pde | PTE_A | (is_write ? PTE_D : 0);
        if (want != pde) phys_write32(c, pde_addr, pde = want);
    } else {
        if (!(pde & PTE_A)) phys_write32(c, pde_addr, pde | PTE_A);
        uint32_t want = pte | PTE_A | (is_write ? PTE_D : 0);
        if (want != pte) phys_write32(c, pte_addr, pte = want);
    }

    /* What the TLB may cache: writes skip the walk only if the page is
     * writable at every privilege (so WP=0 supervisor writes to read-only
     * pages always walk) and already dirty. */
    bool dirty = big ? (pde & PTE_D) : (pte & PTE_D);
    *writable = rw && dirty;
    *user = us;
    uint32_t phys =
        big ? (pde & 0xffc00000u) | (lin & 0x003fffffu) : (pte & 0xfffff000u) | (lin & 0xfffu);
    return phys & c->a20_mask;
}
