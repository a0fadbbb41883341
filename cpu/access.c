/* Memory access: segment checks (SDM vol. 3A, 5.3 limit checking, 5.4 type
 * checking), then the software TLB, which maps a linear page to its physical
 * page and, for RAM, a host pointer.  The inline fast paths are in core.h;
 * this file fills the TLB and does everything the fast path does not:
 * MMIO, ROM, page-crossing accesses, code pages (self-modifying code), the
 * alignment check and the memory hook.
 *
 * Fast tags (tag_read, tag_write, tag_user, tag_user_write) are set only for
 * host-pointer pages and never while a memory hook listens, so with a hook
 * every access comes here and is reported: an access the fast tags would
 * have let through without the hook (the hook_* tags) is done and reported
 * at the top of access_read_slow / access_write_slow, the others by the
 * general path. */
#include "cpu/core.h"

#include "emu/core/log.h"

static bool align_check_on(const nm_cpu *c)
{
    return (c->cr0 & NM_CR0_AM) && (c->eflags & NM_FLAG_AC) && cpu_isa486(c);
}

static void tlb_invalidate_entry(nm_tlb_entry *e)
{
    e->tag_read = e->tag_write = e->tag_user = e->tag_user_write = NM_TLB_INVALID;
    e->hook_read = e->hook_write = e->hook_user = e->hook_user_write = NM_TLB_INVALID;
    e->tag_valid = NM_TLB_INVALID;
}

void cpu_tlb_flush_all(nm_cpu *c)
{
    for (unsigned k = 0; k < NM_TLB_ENTRIES; k++)
        tlb_invalidate_entry(&c->tlb[k]);
    c->fetch_lin = 1;
}

/* Whether the fast tags may let accesses past the hook path: not while a
 * memory hook listens or a poll loop is recorded (poll.c). */
static bool fast_tags_on(const nm_cpu *c)
{
    return !(c->have_hooks && c->hooks.mem) && !c->poll.recording;
}

/* An entry's fast tags: its hook tags, or none. */
static void set_fast_tags(nm_tlb_entry *e, bool on)
{
    if (on) {
        e->tag_read = e->hook_read;
        e->tag_user = e->hook_user;
        e->tag_write = e->hook_write;
        e->tag_user_write = e->hook_user_write;
    } else {
        e->tag_read = e->tag_user = e->tag_write = e->tag_user_write = NM_TLB_INVALID;
    }
}

void cpu_tlb_fast_tags(nm_cpu *c, bool on)
{
    on = on && fast_tags_on(c);
    for (unsigned k = 0; k < NM_TLB_ENTRIES; k++) {
        nm_tlb_entry *e = &c->tlb[k];
        set_fast_tags(e, on && e->tag_valid != NM_TLB_INVALID);
    }
}

void cpu_tlb_flush_page(nm_cpu *c, uint32_t lin)
{
    nm_tlb_entry *e = tlb_entry(c, lin);
    if (e->tag_valid == (lin & ~0xfffu)) tlb_invalidate_entry(e);
    if (c->fetch_lin == (lin & ~0xfffu)) c->fetch_lin = 1;
}

void access_code_page_watched(nm_cpu *c, uint32_t phys_page)
{
    for (unsigned k = 0; k < NM_TLB_ENTRIES; k++) {
        nm_tlb_entry *e = &c->tlb[k];
        if (e->tag_valid != NM_TLB_INVALID && e->phys_page == phys_page)
            e->tag_write = e->tag_user_write = e->hook_write = e->hook_user_write = NM_TLB_INVALID;
    }
}

/* The TLB entry for `lin` allowing access `acc` (NM_ACC_*), walking the
 * page tables on a miss (which may raise #PF). */
static nm_tlb_entry *tlb_translate(nm_cpu *c, uint32_t lin, unsigned acc)
{
    uint32_t page = lin & ~0xfffu;
    nm_tlb_entry *e = tlb_entry(c, lin);
    bool user = acc & NM_ACC_USER, write = acc & NM_ACC_WRITE;
    if (e->tag_valid == page) {
        uint32_t p = e->perm;
        uint32_t need =
            write ? (NM_TLBP_DIRTY | (user ? NM_TLBP_UW : NM_TLBP_SW)) : (user ? NM_TLBP_UR : 0);
        if ((p & need) == need) return e;
    }
    uint32_t phys, perm;
    if (unlikely(c->poll.recording)) c->poll.bad = true; /* a TLB fill: not a steady loop */
    if (c->paging) {
        bool writable = false, upage = false;
        phys = cpu_page_walk(c, lin, acc, &writable, &upage);
        /* The walk says writable only when the page is writable at every
         * privilege that may use it and already dirty (mmu.c). */
        perm = (user || upage) ? NM_TLBP_UR : 0;
        if (writable) perm |= NM_TLBP_SW | NM_TLBP_DIRTY | ((user || upage) ? NM_TLBP_UW : 0);
    } else {
        phys = lin;
        perm = NM_TLBP_SW | NM_TLBP_UR | NM_TLBP_UW | NM_TLBP_DIRTY;
    }
    phys = (phys & c->a20_mask) & ~0xfffu;
    uint8_t *host = nm_memmap_page_ptr(c->mem, phys, false);
    if (host && nm_memmap_page_ptr(c->mem, phys, true)) perm |= NM_TLBP_RAM;
    bool watched = nm_memmap_page_is_watched(c->mem, phys);
    bool fast = !(c->dr_data_mask && cpu_debug_page(c, page));
    bool ac = align_check_on(c);
    e->tag_valid = page;
    e->phys_page = phys;
    e->host = host;
    e->perm = perm;
    e->hook_read = fast && host ? page : NM_TLB_INVALID;
    e->hook_user = fast && host && (perm & NM_TLBP_UR) && !ac ? page : NM_TLB_INVALID;
    bool w = fast && (perm & NM_TLBP_RAM) && (perm & NM_TLBP_DIRTY) && !watched;
    e->hook_write = w && (perm & NM_TLBP_SW) ? page : NM_TLB_INVALID;
    e->hook_user_write = w && (perm & NM_TLBP_UW) && !ac ? page : NM_TLB_INVALID;
    set_fast_tags(e, fast_tags_on(c));
    return e;
}

/* tlb_translate with its hit test inline (the memory hook's accesses all
 * come this way). */
static inline nm_tlb_entry *tlb_lookup(nm_cpu *c, uint32_t lin, unsigned acc)
{
    nm_tlb_entry *e = tlb_entry(c, lin);
    if (likely(e->tag_valid == (lin & ~0xfffu))) {
        bool user = acc & NM_ACC_USER, write = acc & NM_ACC_WRITE;
        uint32_t need =
            write ? (NM_TLBP_DIRTY | (user ? NM_TLBP_UW : NM_TLBP_SW)) : (user ? NM_TLBP_UR : 0);
        if ((e->perm & need) == need) return e;
    }
    return tlb_translate(c, lin, acc);
}

void cpu_probe_write(nm_cpu *c, int seg, uint32_t off, unsigned size)
{
    uint32_t lin = seg_lin(c, seg, off, size, true);
    bool user = c->cpl == 3;
    (void)tlb_translate(c, lin, NM_ACC_WRITE | (user ? NM_ACC_USER : 0));
    if ((lin & 0xfff) > 0x1000 - size)
        (void)tlb_translate(c, (lin | 0xfff) + 1, NM_ACC_WRITE | (user ? NM_ACC_USER : 0));
}

uint32_t access_fetch_translate(nm_cpu *c, uint32_t lin)
{
    nm_tlb_entry *e = tlb_lookup(c, lin, NM_ACC_FETCH | (c->cpl == 3 ? NM_ACC_USER : 0));
    return e->phys_page;
}

/* Host-memory copies of up to 4 bytes (little-endian host); 1, 2 and 4
 * with a constant size, so that no memcpy call is made. */
static inline uint32_t host_load(const uint8_t *p, unsigned size)
{
    uint32_t v = 0;
    if (size == 4)
        memcpy(&v, p, 4);
    else if (size == 2)
        memcpy(&v, p, 2);
    else if (size == 1)
        v = *p;
    else
        memcpy(&v, p, size);
    return v;
}
static inline void host_store(uint8_t *p, uint32_t v, unsigned size)
{
    if (size == 4)
        memcpy(p, &v, 4);
    else if (size == 2)
        memcpy(p, &v, 2);
    else if (size == 1)
        *p = (uint8_t)v;
    else
        memcpy(p, &v, size);
}

static uint32_t entry_read(nm_cpu *c, const nm_tlb_entry *e, uint32_t off, unsigned size)
{
    if (e->host) return host_load(e->host + off, size);
    cpu_run_sync(c);
    return nm_mem_read(c->mem, e->phys_page | off, size);
}

static void entry_write(nm_cpu *c, const nm_tlb_entry *e, uint32_t off, uint32_t v, unsigned size)
{
    uint32_t phys = e->phys_page | off;
    if (e->perm & NM_TLBP_RAM) {
        host_store(e->host + off, v, size);
        if (nm_memmap_page_is_watched(c->mem, phys)) icache_invalidate(c, phys, size);
    } else {
        cpu_run_sync(c);
        nm_mem_write(c->mem, phys, v, size); /* ROM, MMIO, partial pages (watch via memmap) */
    }
}

/* An access reported: appended to the listener's access log when it keeps
 * one (nm_cpu_hooks.mem_log) and has room, else given to its mem hook. */
static inline void mem_hook(nm_cpu *c, uint32_t lin, uint32_t phys, unsigned size, unsigned flags)
{
    if (!c->have_hooks) return;
    if (!(flags & NM_MEM_PAGEWALK) && hook_log_room(c, 1)) {
        hook_log(c, lin, phys, size, flags);
        return;
    }
    if (c->hooks.mem) c->hooks.mem(c->hooks.opaque, lin, phys, size, flags);
}

static uint32_t __attribute__((noinline))
read_slow(nm_cpu *c, uint32_t lin, unsigned size, bool user, unsigned hflags)
{
    uint32_t off = lin & 0xfff;
    c->fast_exit |= NM_FAST_EXIT; /* a device, a breakpoint or the page tables may see it */
    if (unlikely(c->poll.recording)) c->poll.bad = true;
    unsigned acc = (user ? NM_ACC_USER : 0) | ((hflags & NM_MEM_CODE) ? NM_ACC_FETCH : 0);
    if (user && size > 1 && (lin & (size - 1)) && align_check_on(c) && !(hflags & NM_MEM_CODE))
        cpu_raise(c, NM_EXC_AC, 0); /* SDM vol. 3A, 6.15 interrupt 17 */
    if (unlikely(c->dr_data_mask) && !(hflags & NM_MEM_CODE)) cpu_debug_data(c, lin, size, false);
    if (off + size <= 0x1000) {
        nm_tlb_entry *e = tlb_lookup(c, lin, acc);
        uint32_t v = entry_read(c, e, off, size);
        mem_hook(c, lin, e->phys_page | off, size, hflags);
        return v;
    }
    /* Crosses a page: translate both (either may fault), then read bytes. */
    unsigned n1 = 0x1000 - off;
    nm_tlb_entry e1 = *tlb_translate(c, lin, acc);
    nm_tlb_entry e2 = *tlb_translate(c, lin + n1, acc);
    uint32_t v = 0;
    for (unsigned k = 0; k < size; k++) {
        uint32_t b = k < n1 ? entry_read(c, &e1, off + k, 1) : entry_read(c, &e2, k - n1, 1);
        v |= b << (8 * k);
    }
    mem_hook(c, lin, e1.phys_page | off, n1, hflags);
    mem_hook(c, lin + n1, e2.phys_page, size - n1, hflags);
    return v;
}

static void __attribute__((noinline))
write_slow(nm_cpu *c, uint32_t lin, uint32_t v, unsigned size, bool user, unsigned hflags)
{
    uint32_t off = lin & 0xfff;
    c->fast_exit |= NM_FAST_EXIT;
    if (unlikely(c->poll.recording)) c->poll.bad = true;
    unsigned acc = NM_ACC_WRITE | (user ? NM_ACC_USER : 0);
    if (user && size > 1 && (lin & (size - 1)) && align_check_on(c)) cpu_raise(c, NM_EXC_AC, 0);
    if (unlikely(c->dr_data_mask)) cpu_debug_data(c, lin, size, true);
    if (off + size <= 0x1000) {
        nm_tlb_entry *e = tlb_lookup(c, lin, acc);
        entry_write(c, e, off, v, size);
        mem_hook(c, lin, e->phys_page | off, size, hflags | NM_MEM_WRITE);
        return;
    }
    unsigned n1 = 0x1000 - off;
    nm_tlb_entry e1 = *tlb_translate(c, lin, acc);
    nm_tlb_entry e2 = *tlb_translate(c, lin + n1, acc);
    /* Both pages are writable: nothing faults from here on. */
    for (unsigned k = 0; k < size; k++) {
        uint32_t b = (v >> (8 * k)) & 0xff;
        if (k < n1)
            entry_write(c, &e1, off + k, b, 1);
        else
            entry_write(c, &e2, k - n1, b, 1);
    }
    mem_hook(c, lin, e1.phys_page | off, n1, hflags | NM_MEM_WRITE);
    mem_hook(c, lin + n1, e2.phys_page, size - n1, hflags | NM_MEM_WRITE);
}

/* Without a listener the hook paths below are taken only while a poll
 * loop is recorded (its fast tags dropped: poll.c): the access done as
 * there, and logged (a write with the bytes it replaces). */
static uint32_t __attribute__((noinline, cold))
poll_read(nm_cpu *c, const nm_tlb_entry *e, uint32_t lin, unsigned size, bool user)
{
    if (size != 1 && size != 2 && size != 4) return read_slow(c, lin, size, user, 0);
    uint32_t off = lin & 0xfff;
    if (c->poll.recording)
        cpu_poll_record_access(c, e->phys_page | off, e->host + off, size, false);
    return host_load(e->host + off, size);
}
static void __attribute__((noinline, cold))
poll_write(nm_cpu *c, const nm_tlb_entry *e, uint32_t lin, uint32_t v, unsigned size, bool user)
{
    if (size != 1 && size != 2 && size != 4) {
        write_slow(c, lin, v, size, user, 0);
        return;
    }
    uint32_t off = lin & 0xfff;
    if (c->poll.recording) cpu_poll_record_access(c, e->phys_page | off, e->host + off, size, true);
    host_store(e->host + off, v, size);
}

/* The inline fast path missed.  With a memory hook, a RAM access the fast
 * tags would have let through without it is done here as read_slow /
 * write_slow would (no alignment check or data breakpoint applies, the
 * page does not cross, the TLB entry hits) and reported the same way.  Like
 * the inline fast path it leaves fast_exit alone: a RAM access changes
 * nothing the run loops check, and a memory hook changes no CPU or machine
 * state (docs/cpu.md). */
uint32_t access_read_slow(nm_cpu *c, uint32_t lin, unsigned size, bool user)
{
    nm_tlb_entry *e = tlb_entry(c, lin);
    uint32_t tag = user ? e->hook_user : e->hook_read;
    if (likely(tag == ((lin + (size - 1)) & ~0xfffu))) {
        if (unlikely(!c->have_hooks)) return poll_read(c, e, lin, size, user);
        uint32_t off = lin & 0xfff;
        const uint8_t *p = e->host + off;
        uint32_t v;
        if (size == 4) {
            memcpy(&v, p, 4);
        } else if (size == 2) {
            uint16_t x;
            memcpy(&x, p, 2);
            v = x;
        } else if (size == 1) {
            v = *p;
        } else {
            return read_slow(c, lin, size, user, 0);
        }
        mem_hook(c, lin, e->phys_page | off, size, 0);
        return v;
    }
    return read_slow(c, lin, size, user, 0);
}

void access_write_slow(nm_cpu *c, uint32_t lin, uint32_t v, unsigned size, bool user)
{
    nm_tlb_entry *e = tlb_entry(c, lin);
    uint32_t tag = user ? e->hook_user_write : e->hook_write;
    if (likely(tag == ((lin + (size - 1)) & ~0xfffu))) {
        if (unlikely(!c->have_hooks)) {
            poll_write(c, e, lin, v, size, user);
            return;
        }
        uint32_t off = lin & 0xfff;
        uint8_t *p = e->host + off;
        if (size == 4) {
            memcpy(p, &v, 4);
        } else if (size == 2) {
            uint16_t x = (uint16_t)v;
            memcpy(p, &x, 2);
        } else if (size == 1) {
            *p = (uint8_t)v;
        } else {
            write_slow(c, lin, v, size, user, 0);
            return;
        }
        mem_hook(c, lin, e->phys_page | off, size, NM_MEM_WRITE);
        return;
    }
    write_slow(c, lin, v, size, user, 0);
}

/* The hook's calls for a RAM access a specialised handler's fast half makes
 * through a host pointer (core.h, mem_access_ptr), as access_read_slow and
 * access_write_slow would make them for it: a read-modify-write's read,
 * then the write.  (Made before the caller's store: a memory hook sees
 * addresses, not values.) */
void access_hook_report(nm_cpu *c, uint32_t lin, uint32_t phys, unsigned size, bool rmw)
{
    if (rmw) mem_hook(c, lin, phys, size, 0);
    mem_hook(c, lin, phys, size, NM_MEM_WRITE);
}

/* Code bytes for the decoder: reported as code accesses. */
uint32_t access_fetch_byte(nm_cpu *c, uint32_t lin)
{
    return read_slow(c, lin, 1, c->cpl == 3, NM_MEM_CODE);
}

_Noreturn static void seg_fault(nm_cpu *c, int seg)
{
    cpu_raise(c, seg == NM_SS ? NM_EXC_SS : NM_EXC_GP, 0);
}

uint32_t seg_check_slow(nm_cpu *c, int seg, uint32_t off, unsigned size, bool write)
{
    const nm_segment *s = &c->seg[seg];
    uint16_t f = s->flags;
    bool pm = c->pe && !c->vm86;
    if (pm) {
        /* A null selector leaves an unusable register (SDM 3A, 3.4.2). */
        if (!(f & NM_SEGF_P) || !(f & NM_SEGF_S)) seg_fault(c, seg);
        if ((s->selector & 0xfffc) == 0 && seg != NM_CS && seg != NM_SS) seg_fault(c, seg);
        if (f & 0x8) { /* code: never writable, readable if R */
            if (write || !(f & 0x2)) seg_fault(c, seg);
        } else if (write && !(f & 0x2)) {
            seg_fault(c, seg);
        }
    }
    uint32_t last = off + (size - 1);
    if (pm && !(f & 0x8) && (f & 0x4)) {
        /* Expand-down: valid offsets are limit+1 .. 0xFFFF or 0xFFFFFFFF. */
        uint32_t upper = (f & NM_SEGF_DB) ? 0xffffffffu : 0xffffu;
        if (off <= s->limit || last > upper || last < off) seg_fault(c, seg);
    } else {
        if (off > s->limit || s->limit - off < size - 1) seg_fault(c, seg);
    }
    return s->base + off;
}

/* ---------------------------------------------------------- the API */

uint8_t cpu_read8(nm_cpu *c, int seg, uint32_t offset)
{
    return (uint8_t)mem_read(c, seg, offset, 1);
}
uint16_t cpu_read16(nm_cpu *c, int seg, uint32_t offset)
{
    return (uint16_t)mem_read(c, seg, offset, 2);
}
uint32_t cpu_read32(nm_cpu *c, int seg, uint32_t offset)
{
    return mem_read(c, seg, offset, 4);
}
void cpu_write8(nm_cpu *c, int seg, uint32_t offset, uint8_t value)
{
    mem_write(c, seg, offset, value, 1);
}
void cpu_write16(nm_cpu *c, int seg, uint32_t offset, uint16_t value)
{
    mem_write(c, seg, offset, value, 2);
}
void cpu_write32(nm_cpu *c, int seg, uint32_t offset, uint32_t value)
{
    mem_write(c, seg, offset, value, 4);
}

static uint32_t lin_read_sys(nm_cpu *c, uint32_t lin, unsigned size, bool system)
{
    if (!system) return lin_read(c, lin, size);
    nm_tlb_entry *e = tlb_entry(c, lin);
    if (e->tag_read == (lin & ~0xfffu) && (lin & 0xfff) <= 0x1000 - size)
        return entry_read(c, e, lin & 0xfff, size);
    return read_slow(c, lin, size, false, NM_MEM_SYSTEM);
}

static void lin_write_sys(nm_cpu *c, uint32_t lin, uint32_t v, unsigned size, bool system)
{
    if (!system) {
        lin_write(c, lin, v, size);
        return;
    }
    nm_tlb_entry *e = tlb_entry(c, lin);
    if (e->tag_write == (lin & ~0xfffu) && (lin & 0xfff) <= 0x1000 - size) {
        memcpy(e->host + (lin & 0xfff), &v, size);
        return;
    }
    write_slow(c, lin, v, size, false, NM_MEM_SYSTEM);
}

uint8_t cpu_lin_read8(nm_cpu *c, uint32_t lin, bool system)
{
    return (uint8_t)lin_read_sys(c, lin, 1, system);
}
uint16_t cpu_lin_read16(nm_cpu *c, uint32_t lin, bool system)
{
    return (uint16_t)lin_read_sys(c, lin, 2, system);
}
uint32_t cpu_lin_read32(nm_cpu *c, uint32_t lin, bool system)
{
    return lin_read_sys(c, lin, 4, system);
}
void cpu_lin_write8(nm_cpu *c, uint32_t lin, uint8_t value, bool system)
{
    lin_write_sys(c, lin, value, 1, system);
}
void cpu_lin_write16(nm_cpu *c, uint32_t lin, uint16_t value, bool system)
{
    lin_write_sys(c, lin, value, 2, system);
}
void cpu_lin_write32(nm_cpu *c, uint32_t lin, uint32_t value, bool system)
{
    lin_write_sys(c, lin, value, 4, system);
}

void cpu_push16(nm_cpu *c, uint16_t v)
{
    push(c, v, 2);
}
void cpu_push32(nm_cpu *c, uint32_t v)
{
    push(c, v, 4);
}
uint16_t cpu_pop16(nm_cpu *c)
{
    return (uint16_t)pop(c, 2);
}
uint32_t cpu_pop32(nm_cpu *c)
{
    return pop(c, 4);
}
