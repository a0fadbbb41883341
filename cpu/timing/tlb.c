/* The hardware TLB tag model (tlb.h explains the organisation). */
#include "cpu/timing/tlb.h"

#include <string.h>

#include "cpu/cpu_internal.h"
#include "emu/core/memmap.h"

#define TAG_VALID 1u

static bool part_init(nm_tlb_part *p, uint32_t entries, uint32_t shift)
{
    memset(p, 0, sizeof *p);
    if (!entries) return true;
    uint32_t sets = entries / NM_TLB_WAYS;
    if (entries % NM_TLB_WAYS || sets > NM_TLB_MAX_SETS || (sets & (sets - 1))) return false;
    p->sets = sets;
    p->shift = shift;
    return true;
}

bool nm_tlb_init(nm_tlb *t, const nm_tlb_config *cfg)
{
    nm_tlb n = {.cfg = *cfg};
    if (!cfg->entries || !part_init(&n.small, cfg->entries, 12) ||
        !part_init(&n.big, cfg->big_entries, 22))
        return false;
    *t = n;
    return true;
}

/* The 486 tree (cache.h): L0/L1 set B0, L2/L3 clear it; L0 sets B1, L1
 * clears it; L2 sets B2, L3 clears it. */
static void touch(nm_tlb_part *p, uint32_t set, uint32_t way)
{
    p->set_mru[set] = p->tag[set][way];
    uint8_t b = p->plru[set];
    switch (way) {
    case 0: b |= 1u | 2u; break;
    case 1: b = (uint8_t)((b | 1u) & ~2u); break;
    case 2: b = (uint8_t)((b & ~1u) | 4u); break;
    default: b &= (uint8_t) ~(1u | 4u); break;
    }
    p->plru[set] = b;
}

/* An invalid way first (lowest numbered), else the tree's choice. */
static uint32_t victim(const nm_tlb_part *p, uint32_t set)
{
    for (uint32_t w = 0; w < NM_TLB_WAYS; w++)
        if (!(p->tag[set][w] & TAG_VALID)) return w;
    uint8_t b = p->plru[set];
    if (!(b & 1u)) return (b & 2u) ? 1 : 0;
    return (b & 4u) ? 3 : 2;
}

static inline uint32_t page_of(const nm_tlb_part *p, uint32_t lin)
{
    return (lin >> p->shift) << p->shift;
}

static inline uint32_t set_of(const nm_tlb_part *p, uint32_t lin)
{
    return (lin >> p->shift) & (p->sets - 1);
}

static int find(const nm_tlb_part *p, uint32_t lin)
{
    if (!p->sets) return -1;
    uint32_t set = set_of(p, lin), want = page_of(p, lin) | TAG_VALID;
    for (uint32_t w = 0; w < NM_TLB_WAYS; w++)
        if (p->tag[set][w] == want) return (int)w;
    return -1;
}

/* A hit on a present translation: replacement state and count (both
 * lookups below). */
static inline bool lookup_present(nm_tlb *t, uint32_t lin)
{
    int w = find(&t->small, lin);
    if (w >= 0) {
        touch(&t->small, set_of(&t->small, lin), (uint32_t)w);
        t->mru = (lin & 0xfffff000u) | TAG_VALID;
        t->stats.hits++;
        return true;
    }
    w = find(&t->big, lin);
    if (w >= 0) {
        touch(&t->big, set_of(&t->big, lin), (uint32_t)w);
        t->stats.hits++;
        return true;
    }
    return false;
}

bool nm_tlb_lookup_if_present(nm_tlb *t, uint32_t lin)
{
    return lookup_present(t, lin);
}

bool nm_tlb_lookup_slow(nm_tlb *t, uint32_t lin)
{
    if (lookup_present(t, lin)) return true;
    t->stats.misses++;
    return false;
}

void nm_tlb_fill(nm_tlb *t, uint32_t lin, bool big)
{
    nm_tlb_part *p = big && t->big.sets ? &t->big : &t->small;
    uint32_t set = set_of(p, lin);
    if (find(p, lin) >= 0) return;
    uint32_t w = victim(p, set);
    p->tag[set][w] = page_of(p, lin) | TAG_VALID;
    touch(p, set, w);
    if (p == &t->small) t->mru = (lin & 0xfffff000u) | TAG_VALID;
}

static void part_clear(nm_tlb_part *p)
{
    memset(p->tag, 0, sizeof p->tag);
    memset(p->plru, 0, sizeof p->plru);
    memset(p->set_mru, 0, sizeof p->set_mru);
}

void nm_tlb_flush(nm_tlb *t)
{
    part_clear(&t->small);
    part_clear(&t->big);
    t->mru = 0;
    t->stats.flushes++;
}

void nm_tlb_flush_page(nm_tlb *t, uint32_t lin)
{
    nm_tlb_part *parts[2] = {&t->small, &t->big};
    for (unsigned k = 0; k < 2; k++) {
        int w = find(parts[k], lin);
        if (w >= 0) {
            uint32_t set = set_of(parts[k], lin);
            if (parts[k]->set_mru[set] == parts[k]->tag[set][w]) parts[k]->set_mru[set] = 0;
            parts[k]->tag[set][w] = 0;
        }
    }
    t->mru = 0;
    t->stats.page_flushes++;
}

unsigned nm_tlb_walk_addrs(const nm_cpu *c, uint32_t lin, uint32_t addr[2], bool *big)
{
    *big = false;
    if (!c->paging) return 0;
    /* SDM vol. 3A, 4.3: CR3 bits 31:12 and linear bits 31:22 give the PDE;
     * its bits 31:12 and linear bits 21:12 the PTE (as cpu/mmu.c). */
    addr[0] = ((c->cr3 & 0xfffff000u) | ((lin >> 20) & 0xffcu)) & c->a20_mask;
    const uint8_t *p = nm_memmap_page_ptr(c->mem, addr[0], false);
    if (!p) return 1;
    p += addr[0] & 0xfffu;
    uint32_t pde =
        (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (!(pde & 1u)) return 1;
    if ((pde & 0x80u) && (c->cr4 & NM_CR4_PSE)) {
        *big = true;
        return 1;
    }
    addr[1] = ((pde & 0xfffff000u) | ((lin >> 10) & 0xffcu)) & c->a20_mask;
    return 2;
}
