/* The decoded-instruction cache: direct-mapped by physical address (low
 * bits index, full address + CS.D as the tag), so a lookup is one compare
 * and a hit costs no hashing or allocation.  Pages we decode from are
 * watched: the TLB keeps no fast write entry for them, and every write that
 * reaches one (CPU store, DMA) invalidates the entries that may start in the
 * bytes written, so self-modifying code -- even the very next instruction --
 * is decoded again.  Instructions crossing a page or fetched from MMIO are
 * decoded every time and never cached. */
#include "cpu/core.h"

#include <glib.h>

void *icache_new(void)
{
    icache *ic = g_new0(icache, 1); /* (zero pages: touched only when used) */
    ic->size = IC_SIZE;
    ic->mask = IC_SIZE - 1;
    return ic;
}

/* Empties entries [from, to). */
static void flush_range(icache *ic, uint32_t from, uint32_t to)
{
    for (uint32_t k = from; k < to; k++) {
        ic->e[k].tag = 0;
        ic->e[k].run_n = 0;
        ic->e[k].seq = NULL;
        ic->e[k].run_fn = NULL;
    }
}

bool icache_set_bits(nm_cpu *c, unsigned bits)
{
    icache *ic = c->icache;
    if (bits < IC_BITS_MIN || bits > IC_BITS) return false;
    icache_flush(c); /* (the used chunks, the scratch entry and the padding) */
    ic->size = 1u << bits;
    ic->mask = ic->size - 1;
    return true;
}
void icache_free(void *ic)
{
    g_free(ic);
}

void icache_flush(nm_cpu *c)
{
    icache *ic = c->icache;
    for (uint32_t k = 0; k < (ic->size >> IC_CHUNK_BITS); k++) {
        if (!ic->used[k]) continue;
        flush_range(ic, k << IC_CHUNK_BITS, (k + 1) << IC_CHUNK_BITS);
        ic->used[k] = 0;
    }
    flush_range(ic, ic->size, ic->size + IC_PAD);
    /* Slots emptied here are decoded again without a generation moved on
     * (icache_miss): every page's is moved now, so that what was worked
     * out from the old entries (runs, a cost model's stretches) is stale. */
    for (unsigned k = 0; k < IC_GEN_SIZE; k++)
        ic->gen[k]++;
}

/* The page of a valid tag. */
static inline uint32_t tag_phys(uint64_t tag)
{
    return (uint32_t)(tag >> 1);
}

unsigned icache_run(ic_entry *e, uint32_t gen)
{
    unsigned n = 1;
    const ic_entry *cur = e;
    /* Through the successors while they are cached (a run never decodes:
     * decoding can fault or walk the page tables) and the instruction
     * before them has no sync. */
    bool keep = true;
    while (cur->run_fn && n < IC_RUN_MAX) {
        const ic_entry *next = cur->seq;
        if (!next) break; /* the page ends */
        if (next->tag != cur->tag + ((uint64_t)cur->insn.len << 1)) {
            /* Not decoded yet: it will be when the run has run, so this run
             * is worked out again next time (decoding into an empty slot
             * moves no generation on), unless it stops at a Jcc, whose
             * other way may be the only one taken. */
            keep = cur->insn.op == NM_OP_JCC;
            break;
        }
        cur = next;
        n++;
    }
    e->run_n = (uint16_t)n;
    e->run_gen = keep ? gen : gen - 1;
    /* The busy-wait of Linux's delay_loop (arch/x86/lib/delay.c): DEC of
     * a 32-bit register, then JNZ with a 32-bit operand size to the DEC. */
    const nm_insn *a = &e->insn, *b = n >= 2 ? &e->seq->insn : NULL;
    e->run_dec_loop = b && a->op == NM_OP_DEC && a->opsize == 4 && a->mod == 3 &&
                      b->op == NM_OP_JCC && b->cond == 5 && b->opsize == 4 &&
                      b->disp == (uint32_t)0 - a->len - b->len;
    return n;
}

const ic_entry *icache_miss(nm_cpu *c, ic_entry *e, uint32_t lin, uint32_t phys, uint64_t tag)
{
    icache *ic = c->icache;
    nm_insn tmp;
    bool cacheable;
    nm_decode(c, lin, &tmp, &cacheable);
    ic->decodes++;
    if (!cacheable) {
        ic_entry *s = &ic->e[ic->size];
        s->insn = tmp;
        s->tag = 0;
        s->seq = NULL;
        s->run_fn = NULL;
        return s;
    }
    if (!nm_memmap_page_is_watched(c->mem, phys)) {
        nm_memmap_watch_page(c->mem, phys);
        access_code_page_watched(c, phys & ~0xfffu);
    }
    /* The runs of the page of the instruction replaced go stale.  No run
     * of this page can hold the slot (it held no instruction of this
     * page), so its runs stay (icache_run does not keep a run that stops
     * for want of a decoded successor). */
    if (e->tag) (*ic_gen(ic, tag_phys(e->tag)))++;
    ic->used[(uint32_t)(e - ic->e) >> IC_CHUNK_BITS] = 1;
    e->insn = tmp;
    e->tag = tag;
    e->run_n = 0;
    /* Same page: the successor's entry is e + len (the size is a multiple
     * of the page size, so the index does not wrap). */
    e->seq = (phys & 0xfff) + tmp.len < 0x1000 ? e + tmp.len : NULL;
    e->run_fn = exec_run_handler(&e->insn, tag & 1);
    return e;
}

void icache_invalidate(nm_cpu *c, uint32_t paddr, unsigned len)
{
    icache *ic = c->icache;
    /* An instruction is at most 15 bytes: those starting up to 14 bytes
     * before the write may include written bytes. */
    uint32_t start = paddr - 14;
    uint64_t n = (uint64_t)len + 14;
    if (n >= ic->size) { /* a big write: test every entry against the range */
        for (uint32_t k = 0; k < ic->size; k++) {
            if (!ic->used[k >> IC_CHUNK_BITS]) { /* (none decoded into since the flush) */
                k |= (1u << IC_CHUNK_BITS) - 1;
                continue;
            }
            ic_entry *e = &ic->e[k];
            if (e->tag && (uint32_t)(e->tag >> 1) - start < n) {
                (*ic_gen(ic, tag_phys(e->tag)))++;
                e->tag = 0;
                ic->invalidations++;
            }
        }
        return;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t a = start + k;
        ic_entry *e = &ic->e[a & ic->mask];
        if (e->tag && (uint32_t)(e->tag >> 1) == a) {
            (*ic_gen(ic, a))++;
            e->tag = 0;
            ic->invalidations++;
        }
    }
}

/* The memmap's write-watch callback: DMA and other writes that bypass the
 * CPU's store path. */
void icache_watch_cb(void *opaque, uint32_t paddr, unsigned len)
{
    icache_invalidate(opaque, paddr, len);
}
