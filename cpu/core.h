/* Inline fast paths shared by the core's files: registers, lazy flags,
 * effective addresses, segmented and linear memory access through the
 * software TLB.  The slow paths live in access.c and flags.c. */
#ifndef NICEMU_CPU_CORE_H
#define NICEMU_CPU_CORE_H

#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/decode.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ---------------------------------------------------------------- flags */

/* Lazy flags: lf_op = kind * 4 + size index (0: 8 bit, 1: 16, 2: 32). */
/* LF_SHIFT: SHL/SHR/SAR left CF and OF (and AF clear) in eflags; ZF, SF and
 * PF come from lf_res. */
enum { LF_NONE = 0, LF_ADD, LF_ADC, LF_SUB, LF_SBB, LF_LOGIC, LF_INC, LF_DEC, LF_SHIFT };
#define LF(kind, szi) ((uint32_t)(kind)*4u + (uint32_t)(szi))

static inline unsigned szi_of(unsigned size)
{
    return size == 1 ? 0 : size == 2 ? 1 : 2;
}
static inline uint32_t szi_mask(unsigned szi)
{
    return szi == 0 ? 0xffu : szi == 1 ? 0xffffu : 0xffffffffu;
}
static inline uint32_t szi_sign(unsigned szi)
{
    return 1u << ((8u << szi) - 1);
}
static inline uint32_t size_mask(unsigned size)
{
    return size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
}

static inline void lf_set(nm_cpu *c, unsigned kind, unsigned szi, uint32_t a, uint32_t b,
                          uint32_t res)
{
    c->lf_op = LF(kind, szi);
    c->lf_a = a;
    c->lf_b = b;
    c->lf_res = res;
}

/* A logic operation (AND, OR, XOR, TEST): CF, OF and AF are clear and
 * nothing reads lf_a or lf_b (flags.c), so they are not stored. */
static inline void lf_set_logic(nm_cpu *c, unsigned szi, uint32_t res)
{
    c->lf_op = LF(LF_LOGIC, szi);
    c->lf_res = res;
}

bool flags_of(const nm_cpu *c);
bool flags_af(const nm_cpu *c);
bool flags_pf(const nm_cpu *c);
/* Evaluates condition code 0..15 (Jcc/SETcc low nibble). */
bool flags_cond(const nm_cpu *c, unsigned cc);
/* Writes the six arithmetic flags eagerly (shifts, multiplies, BCD). */
static inline void flags_set_arith(nm_cpu *c, uint32_t arith)
{
    c->eflags = (c->eflags & ~NM_FLAGS_ARITH) | (arith & NM_FLAGS_ARITH);
    c->lf_op = LF_NONE;
}
static inline bool flags_zf(const nm_cpu *c)
{
    return c->lf_op == LF_NONE ? (c->eflags & NM_FLAG_ZF) != 0 : c->lf_res == 0;
}
static inline bool flags_sf(const nm_cpu *c)
{
    return c->lf_op == LF_NONE ? (c->eflags & NM_FLAG_SF) != 0
                               : (c->lf_res & szi_sign(c->lf_op & 3)) != 0;
}
static inline bool flags_cf(const nm_cpu *c)
{
    uint32_t a = c->lf_a, b = c->lf_b, r = c->lf_res;
    switch (c->lf_op >> 2) {
    case LF_NONE:
    case LF_SHIFT: return c->eflags & NM_FLAG_CF;
    case LF_ADD: return r < a;
    case LF_ADC: return c->lf_carry_in ? r <= a : r < a;
    case LF_SUB: return a < b;
    case LF_SBB: return c->lf_carry_in ? a <= b : a < b;
    case LF_INC:
    case LF_DEC: return c->lf_carry_in != 0;
    default: return false; /* logic ops clear CF */
    }
}

/* flags_cond (flags.c) with the frequent cases inline: the specialised
 * Jcc and SETcc handlers pass a constant cc.  After CMP/SUB the operands
 * are compared, after a logic operation CF and OF are clear. */
static inline __attribute__((always_inline)) bool flags_cond_fast(const nm_cpu *c, unsigned cc)
{
    const unsigned k = cc >> 1, inv = cc & 1;
    if (k == 2) return flags_zf(c) ^ inv;
    if (k == 4) return flags_sf(c) ^ inv;
    if (k == 1 || k == 3 || k == 6 || k == 7) {
        const uint32_t op = c->lf_op;
        bool r;
        if ((op >> 2) == LF_SUB) {
            uint32_t a = c->lf_a, b = c->lf_b;
            unsigned sh = 32 - (8u << (op & 3));
            int32_t sa = (int32_t)(a << sh), sb = (int32_t)(b << sh);
            r = k == 1 ? a < b : k == 3 ? a <= b : k == 6 ? sa < sb : sa <= sb;
            return r ^ inv;
        }
        if ((op >> 2) == LF_LOGIC) {
            uint32_t res = c->lf_res;
            bool sf = (res & szi_sign(op & 3)) != 0;
            r = k == 1 ? false : k == 3 ? res == 0 : k == 6 ? sf : (res == 0 || sf);
            return r ^ inv;
        }
    }
    return flags_cond(c, cc);
}

/* flags_cf with the cases INC/DEC meet most (after INC/DEC, SUB/CMP, a
 * logic operation) tested before the general dispatch. */
static inline bool flags_cf_fast(const nm_cpu *c)
{
    const uint32_t k = c->lf_op >> 2;
    if (k == LF_DEC || k == LF_INC) return c->lf_carry_in != 0;
    if (k == LF_SUB) return c->lf_a < c->lf_b;
    if (k == LF_LOGIC) return false;
    return flags_cf(c);
}

static inline uint32_t parity_flag(uint32_t v)
{
    return (__builtin_popcount(v & 0xff) & 1) ? 0 : NM_FLAG_PF;
}
/* SF, ZF and PF of a result (for the eager paths). */
static inline uint32_t szp_flags(uint32_t res, unsigned szi)
{
    res &= szi_mask(szi);
    return (res == 0 ? NM_FLAG_ZF : 0) | ((res & szi_sign(szi)) ? NM_FLAG_SF : 0) |
           parity_flag(res);
}

/* ------------------------------------------------------------ registers */

static inline uint32_t reg8(const nm_cpu *c, unsigned r)
{
    return r < 4 ? c->gpr[r] & 0xff : (c->gpr[r - 4] >> 8) & 0xff;
}
static inline void set_reg8(nm_cpu *c, unsigned r, uint32_t v)
{
    if (r < 4)
        c->gpr[r] = (c->gpr[r] & ~0xffu) | (v & 0xff);
    else
        c->gpr[r - 4] = (c->gpr[r - 4] & ~0xff00u) | (v & 0xff) << 8;
}
static inline uint32_t reg_get(const nm_cpu *c, unsigned r, unsigned size)
{
    if (size == 4) return c->gpr[r];
    if (size == 2) return c->gpr[r] & 0xffff;
    return reg8(c, r);
}
static inline void reg_set(nm_cpu *c, unsigned r, unsigned size, uint32_t v)
{
    if (size == 4)
        c->gpr[r] = v;
    else if (size == 2)
        c->gpr[r] = (c->gpr[r] & 0xffff0000u) | (v & 0xffff);
    else
        set_reg8(c, r, v);
}

/* ---------------------------------------------------- effective address */

static inline uint32_t insn_ea(nm_cpu *c, const nm_insn *i)
{
    uint32_t a = i->disp;
    if (i->base != NM_REG_NONE) a += c->gpr[i->base];
    if (i->index != NM_REG_NONE) a += c->gpr[i->index] << i->scale;
    if (!i->addr32) a &= 0xffff;
    c->last_ea = a;
    return a;
}

/* The frequent 32-bit form, picked by the decoder for the specialised
 * handlers (exec_specialise): a base register and a displacement. */
static inline uint32_t insn_ea_b32(nm_cpu *c, const nm_insn *i)
{
    uint32_t a = c->gpr[i->base] + i->disp;
    c->last_ea = a;
    return a;
}
/* And with an index register. */
static inline uint32_t insn_ea_bi32(nm_cpu *c, const nm_insn *i)
{
    uint32_t a = c->gpr[i->base] + (c->gpr[i->index] << i->scale) + i->disp;
    c->last_ea = a;
    return a;
}

/* ------------------------------------------------------- linear access */

/* TLB permission bits (nm_tlb_entry.perm). */
#define NM_TLBP_SW     1u  /* supervisor writes allowed */
#define NM_TLBP_UR     2u  /* user reads allowed */
#define NM_TLBP_UW     4u  /* user writes allowed */
#define NM_TLBP_DIRTY  8u  /* D already set (a write walk was done) */
#define NM_TLBP_RAM    16u /* host pointer may be written */
#define NM_TLB_INVALID 1u  /* never equals a page-aligned tag */

uint32_t access_read_slow(nm_cpu *c, uint32_t lin, unsigned size, bool user);
void access_write_slow(nm_cpu *c, uint32_t lin, uint32_t v, unsigned size, bool user);
void access_hook_report(nm_cpu *c, uint32_t lin, uint32_t phys, unsigned size, bool rmw);
uint32_t seg_check_slow(nm_cpu *c, int seg, uint32_t off, unsigned size, bool write);
/* Faults (#GP/#SS, #PF) as a write of `size` bytes at seg:off would, without
 * writing: the checks instructions make of an address they write later. */
void cpu_probe_write(nm_cpu *c, int seg, uint32_t off, unsigned size);

static inline nm_tlb_entry *tlb_entry(nm_cpu *c, uint32_t lin)
{
    return &c->tlb[(lin >> 12) & (NM_TLB_ENTRIES - 1)];
}

static inline uint32_t lin_read(nm_cpu *c, uint32_t lin, unsigned size)
{
    nm_tlb_entry *e = tlb_entry(c, lin);
    bool user = c->cpl == 3;
    uint32_t tag = user ? e->tag_user : e->tag_read;
    /* The page of the access's last byte: the entry's page only when it
     * does not cross (the next page's tag never sits in this slot). */
    if (likely(tag == ((lin + (size - 1)) & ~0xfffu))) {
        const uint8_t *p = e->host + (lin & 0xfff);
        if (size == 4) {
            uint32_t v;
            memcpy(&v, p, 4);
            return v;
        }
        if (size == 2) {
            uint16_t v;
            memcpy(&v, p, 2);
            return v;
        }
        return *p;
    }
    return access_read_slow(c, lin, size, user);
}

static inline void lin_write(nm_cpu *c, uint32_t lin, uint32_t v, unsigned size)
{
    nm_tlb_entry *e = tlb_entry(c, lin);
    bool user = c->cpl == 3;
    uint32_t tag = user ? e->tag_user_write : e->tag_write;
    if (likely(tag == ((lin + (size - 1)) & ~0xfffu))) {
        uint8_t *p = e->host + (lin & 0xfff);
        if (size == 4) {
            uint32_t x = v;
            memcpy(p, &x, 4);
        } else if (size == 2) {
            uint16_t x = (uint16_t)v;
            memcpy(p, &x, 2);
        } else
            *p = (uint8_t)v;
        return;
    }
    access_write_slow(c, lin, v, size, user);
}

/* ---------------------------------------------------- segmented access */

/* Fast test of a data access: present data segment (readable; writable and
 * expand-up for writes), offset within the limit.  Everything else (code
 * segments, expand-down, real-mode leftovers, faults) goes to the slow path. */
static inline uint32_t seg_lin(nm_cpu *c, int seg, uint32_t off, unsigned size, bool write)
{
    const nm_segment *s = &c->seg[seg];
    uint16_t mask = write ? 0x9e : 0x9c, want = write ? 0x92 : 0x90;
    /* off <= limit and limit - off >= size - 1, in one 64-bit compare. */
    if (likely((s->flags & mask) == want && (uint64_t)off + (size - 1) <= s->limit))
        return s->base + off;
    return seg_check_slow(c, seg, off, size, write);
}

static inline uint32_t mem_read(nm_cpu *c, int seg, uint32_t off, unsigned size)
{
    return lin_read(c, seg_lin(c, seg, off, size, false), size);
}
static inline void mem_write(nm_cpu *c, int seg, uint32_t off, uint32_t v, unsigned size)
{
    lin_write(c, seg_lin(c, seg, off, size, true), v, size);
}

/* With a memory hook that logs into the listener's array (nm_mem_log: the
 * cost models) and room there for `n` more records, the specialised
 * handlers' fast halves below do an access the hook tags let through as
 * access_read_slow / access_write_slow would (their first case) and log it
 * the same way: the same records in the same order as the general handler's
 * accesses, without it.  With no room, or a listener without a log (the 386
 * and 486 models), access_read_slow and access_hook_report make the hook's
 * calls instead. */
static inline __attribute__((always_inline)) bool hook_log_room(const nm_cpu *c, unsigned n)
{
    /* (a log implies a listener: nm_cpu_set_hooks) */
    return c->mem_log.rec && *c->mem_log.n + n <= c->mem_log.cap;
}
/* (also mem_hook's, in cpu/access.c) */
static inline __attribute__((always_inline)) void hook_log(nm_cpu *c, uint32_t lin, uint32_t phys,
                                                           unsigned size, unsigned flags)
{
    const uint16_t n = *c->mem_log.n;
    c->mem_log.rec[n] = (nm_mem_record){phys, lin, (uint8_t)size, (uint8_t)flags};
    *c->mem_log.n = (uint16_t)(n + 1);
}

/* Where the log stands, and taking back what a fast half logged since: for
 * a handler whose fast half can still give up after its access succeeded
 * (its general handler then does the access again). */
static inline __attribute__((always_inline)) uint16_t hook_log_mark(const nm_cpu *c)
{
    return c->mem_log.rec ? *c->mem_log.n : 0;
}
static inline __attribute__((always_inline)) void hook_log_undo(nm_cpu *c, uint16_t mark)
{
    if (c->mem_log.rec) *c->mem_log.n = mark;
}

/* The fast halves' segment test: a present data segment, expand-up (for a
 * write, writable too), the access within its limit (the access byte's P,
 * S, code, E and W bits); then *lin, its linear address. */
static inline __attribute__((always_inline)) bool
fast_seg_lin(const nm_cpu *c, int seg, uint32_t off, uint32_t size, const bool write, uint32_t *lin)
{
    const nm_segment *s = &c->seg[seg];
    const uint8_t mask = write ? 0x9e : 0x9c, want = write ? 0x92 : 0x90;
    if (unlikely((s->flags & mask) != want || (uint64_t)off + (size - 1) > s->limit)) return false;
    *lin = s->base + off;
    return true;
}

/* The fast halves of mem_read and mem_write for the specialised handlers:
 * the access done when the segment test and a fast TLB tag let it through
 * (a RAM page, no listener, no breakpoint, no watched code), else nothing
 * done and false: the caller then runs its general handler, which does the
 * whole instruction again (so the fast half must come before any change). */
/* `by_call`: with no room in a log (or no log), the access is done by
 * access_read_slow and reported by the hook's call: not for a fast half that
 * may still give up after it (a call cannot be taken back). */
static inline __attribute__((always_inline)) bool
mem_read_fast_as(nm_cpu *c, int seg, uint32_t off, unsigned size, uint32_t *v, const bool by_call)
{
    uint32_t lin;
    if (!fast_seg_lin(c, seg, off, size, false, &lin)) return false;
    const nm_tlb_entry *e = tlb_entry(c, lin);
    const uint8_t *host = e->host;
    const uint32_t page = (lin + (size - 1)) & ~0xfffu;
    uint32_t tag = c->cpl == 3 ? e->tag_user : e->tag_read;
    if (unlikely(tag != page)) {
        if ((c->cpl == 3 ? e->hook_user : e->hook_read) != page) return false;
        if (!hook_log_room(c, 1)) {
            if (!by_call) return false;
            *v = access_read_slow(c, lin, size, c->cpl == 3); /* (its first case) */
            return true;
        }
        hook_log(c, lin, e->phys_page | (lin & 0xfff), size, 0);
    }
    const uint8_t *p = host + (lin & 0xfff);
    if (size == 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        *v = x;
    } else if (size == 2) {
        uint16_t x;
        memcpy(&x, p, 2);
        *v = x;
    } else {
        *v = *p;
    }
    return true;
}
static inline __attribute__((always_inline)) bool mem_read_fast(nm_cpu *c, int seg, uint32_t off,
                                                                unsigned size, uint32_t *v)
{
    return mem_read_fast_as(c, seg, off, size, v, true);
}
/* The host address a read of `size` at seg:off may come from, or NULL
 * (mem_read_fast's tests; size may be more than 4, within one page). */
static inline __attribute__((always_inline)) const uint8_t *
mem_read_ptr(nm_cpu *c, int seg, uint32_t off, uint32_t size)
{
    uint32_t lin;
    if (!fast_seg_lin(c, seg, off, size, false, &lin)) return NULL;
    const nm_tlb_entry *e = tlb_entry(c, lin);
    uint32_t tag = c->cpl == 3 ? e->tag_user : e->tag_read;
    if (unlikely(tag != ((lin + (size - 1)) & ~0xfffu))) return NULL;
    return e->host + (lin & 0xfff);
}
/* The host address a write of `size` at seg:off may go to, or NULL (the
 * fast tags only: a block of a string's iterations). */
static inline __attribute__((always_inline)) uint8_t *mem_write_ptr(nm_cpu *c, int seg,
                                                                    uint32_t off, unsigned size)
{
    uint32_t lin;
    if (!fast_seg_lin(c, seg, off, size, true, &lin)) return NULL;
    const nm_tlb_entry *e = tlb_entry(c, lin);
    uint32_t tag = c->cpl == 3 ? e->tag_user_write : e->tag_write;
    if (unlikely(tag != ((lin + (size - 1)) & ~0xfffu))) return NULL;
    return e->host + (lin & 0xfff);
}
/* The same for one access of 1, 2 or 4 bytes that the caller makes through
 * the pointer: a store (`rmw` false), or a read and a write of the same
 * bytes (a read-modify-write instruction), logged as such with a memory
 * hook (hook_log_room).  (A hook write tag implies its read tag: tlb_translate.) */
static inline __attribute__((always_inline)) uint8_t *
mem_access_ptr(nm_cpu *c, int seg, uint32_t off, unsigned size, const bool rmw)
{
    uint32_t lin;
    if (!fast_seg_lin(c, seg, off, size, true, &lin)) return NULL;
    const nm_tlb_entry *e = tlb_entry(c, lin);
    const uint32_t page = (lin + (size - 1)) & ~0xfffu;
    uint32_t tag = c->cpl == 3 ? e->tag_user_write : e->tag_write;
    if (unlikely(tag != page)) {
        if ((c->cpl == 3 ? e->hook_user_write : e->hook_write) != page || !c->have_hooks)
            return NULL;
        const uint32_t phys = e->phys_page | (lin & 0xfff);
        if (hook_log_room(c, rmw ? 2u : 1u)) {
            if (rmw) hook_log(c, lin, phys, size, 0);
            hook_log(c, lin, phys, size, NM_MEM_WRITE);
        } else {
            access_hook_report(c, lin, phys, size, rmw);
        }
    }
    return e->host + (lin & 0xfff);
}
static inline void host_put(uint8_t *p, uint32_t v, unsigned size)
{
    if (size == 4) {
        memcpy(p, &v, 4);
    } else if (size == 2) {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
    } else {
        *p = (uint8_t)v;
    }
}
static inline uint32_t host_get(const uint8_t *p, unsigned size)
{
    if (size == 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    if (size == 2) {
        uint16_t x;
        memcpy(&x, p, 2);
        return x;
    }
    return *p;
}

/* r/m operand of a decoded instruction. */
static inline uint32_t rm_read(nm_cpu *c, const nm_insn *i, unsigned size)
{
    if (i->mod == 3) return reg_get(c, i->rm, size);
    return mem_read(c, i->seg, insn_ea(c, i), size);
}
static inline void rm_write(nm_cpu *c, const nm_insn *i, unsigned size, uint32_t v)
{
    if (i->mod == 3)
        reg_set(c, i->rm, size, v);
    else
        mem_write(c, i->seg, insn_ea(c, i), v, size);
}

/* ---------------------------------------------------------------- stack */

static inline __attribute__((always_inline)) void push(nm_cpu *c, uint32_t v, unsigned size)
{
    uint32_t esp = c->gpr[NM_ESP];
    if (c->stack32) {
        mem_write(c, NM_SS, esp - size, v, size);
        c->gpr[NM_ESP] = esp - size;
    } else {
        uint32_t sp = (esp - size) & 0xffff;
        mem_write(c, NM_SS, sp, v, size);
        c->gpr[NM_ESP] = (esp & 0xffff0000u) | sp;
    }
}
static inline __attribute__((always_inline)) uint32_t pop(nm_cpu *c, unsigned size)
{
    uint32_t esp = c->gpr[NM_ESP], v;
    if (c->stack32) {
        v = mem_read(c, NM_SS, esp, size);
        c->gpr[NM_ESP] = esp + size;
    } else {
        v = mem_read(c, NM_SS, esp & 0xffff, size);
        c->gpr[NM_ESP] = (esp & 0xffff0000u) | ((esp + size) & 0xffff);
    }
    return v;
}
/* Reads the value `pop` would return, without moving the stack pointer. */
static inline uint32_t stack_peek(nm_cpu *c, uint32_t depth, unsigned size)
{
    uint32_t esp = c->gpr[NM_ESP] + depth;
    return mem_read(c, NM_SS, c->stack32 ? esp : esp & 0xffff, size);
}

/* ------------------------------------------------------------ branches */

void core_branch_hook(nm_cpu *c, uint32_t to, bool taken);
static inline void jump_to(nm_cpu *c, uint32_t target, unsigned opsize)
{
    if (opsize != 4) target &= 0xffff;
    if (unlikely(target > c->seg[NM_CS].limit)) cpu_raise(c, NM_EXC_GP, 0);
    c->eip = target;
}

/* ------------------------------------------------------ icache (icache.c) */

void *icache_new(void);
void icache_free(void *ic);
/* 2^bits entries from now on (IC_BITS_MIN..IC_BITS; else false, nothing
 * changed), the cache emptied. */
bool icache_set_bits(nm_cpu *c, unsigned bits);
/* The cache: direct-mapped by physical address (icache.c explains), of
 * 2^IC_BITS entries, or of fewer (icache.size: nm_cpu_set_icache_bits). */
#define IC_BITS     20
#define IC_SIZE     (1u << IC_BITS)
#define IC_BITS_MIN 12 /* (a multiple of the page: e + len stays in the page's run) */
/* Entries past icache.size: the scratch entry and padding, so that `e + len`
 * (the sequential successor) is always inside the array. */
#define IC_PAD 32
/* Entries a bit of icache.used stands for: the chunks flush looks at. */
#define IC_CHUNK_BITS 12
typedef struct ic_entry {
    uint64_t tag; /* 0: empty; else 1<<40 | phys<<1 | code32 */
    nm_insn insn;
    /* The entry of the next sequential instruction, `this + len`, when it
     * starts in the same page (its tag is then tag + (len << 1)), else
     * NULL: the run loops follow it without a lookup. */
    const struct ic_entry *seq;
    /* The handler the uncosted loop calls for this instruction inside a run
     * (before a run's last one); NULL: it ends every run it is in.  Mostly
     * insn.fn: those with no nm_insn.sync; also a 32-bit Jcc in 32-bit code,
     * with a handler that only notes a jump (NM_FAST_TAKEN, cpu.c). */
    nm_handler run_fn;
    /* The run that starts here (cpu.c): this instruction and the run_n - 1
     * cached ones that follow it in the page, every one but the last with
     * a run_fn.  Valid while run_gen is the page's generation (icache.gen);
     * run_n 0: not worked out. */
    uint32_t run_gen;
    uint16_t run_n;
    /* The run is `DEC r32 ; JNZ` back to it (icache_run): the uncosted loop
     * may do its iterations but the last at once (cpu.c). */
    bool run_dec_loop;
} ic_entry;
/* Page generations, by physical page number modulo IC_GEN_SIZE (pages that
 * share a slot only cost each other a run worked out again). */
#define IC_GEN_BITS 16
#define IC_GEN_SIZE (1u << IC_GEN_BITS)
/* The longest run (bounds a run's work between two looks at fast_exit's
 * companions: the budget is applied to the run as a whole). */
#define IC_RUN_MAX 64
typedef struct icache {
    ic_entry e[IC_SIZE + IC_PAD]; /* e[size]: the last uncacheable instruction */
    uint32_t size, mask;          /* entries in use (a power of two), size - 1 */
    /* Per chunk of 2^IC_CHUNK_BITS entries: whether one of them was
     * decoded into since the last flush (a flush clears only those: the
     * array's untouched pages stay untouched). */
    uint8_t used[IC_SIZE >> IC_CHUNK_BITS];
    /* Bumped whenever an entry of the page is decoded, replaced or
     * invalidated: the runs worked out in the page are then stale. */
    uint32_t gen[IC_GEN_SIZE];
    uint64_t decodes, invalidations;
} icache;
static inline uint32_t *ic_gen(icache *ic, uint32_t phys)
{
    return &ic->gen[(phys >> 12) & (IC_GEN_SIZE - 1)];
}
static inline uint64_t ic_tag(uint32_t phys, bool code32)
{
    return (1ull << 40) | (uint64_t)phys << 1 | (code32 ? 1 : 0);
}
/* The cached entry of the instruction after e in its page, or NULL (the
 * page ends, or it is not decoded: its slot holds another tag). */
static inline const ic_entry *ic_successor(const ic_entry *e)
{
    const ic_entry *n = e->seq;
    return n && n->tag == e->tag + ((uint64_t)e->insn.len << 1) ? n : NULL;
}
const ic_entry *icache_miss(nm_cpu *c, ic_entry *e, uint32_t lin, uint32_t phys, uint64_t tag);
/* ic_entry.run_fn for a decoded instruction (exec_control.c). */
nm_handler exec_run_handler(const nm_insn *i, bool code32);
/* Works out the run that starts at cached entry e (of page generation gen). */
unsigned icache_run(ic_entry *e, uint32_t gen);

uint32_t access_fetch_translate(nm_cpu *c, uint32_t lin);
/* The physical page of a code fetch at `lin`: the TLB entry when it holds
 * the page with the rights a fetch needs (tlb_lookup's hit test), else
 * the full translation (which may walk and fault). */
static inline uint32_t fetch_phys_page(nm_cpu *c, uint32_t lin)
{
    const nm_tlb_entry *e = tlb_entry(c, lin);
    if (likely(e->tag_valid == (lin & ~0xfffu) && (c->cpl != 3 || (e->perm & NM_TLBP_UR))))
        return e->phys_page;
    return access_fetch_translate(c, lin);
}
/* Returns the cache entry of the decoded instruction at the current CS:EIP. */
static inline const ic_entry *icache_fetch_entry(nm_cpu *c)
{
    icache *ic = c->icache;
    uint32_t lin = c->seg[NM_CS].base + c->eip;
    if (unlikely((lin & ~0xfffu) != c->fetch_lin)) {
        c->fetch_phys = fetch_phys_page(c, lin);
        c->fetch_lin = lin & ~0xfffu;
    }
    uint32_t phys = c->fetch_phys | (lin & 0xfff);
    ic_entry *e = &ic->e[phys & ic->mask];
    uint64_t tag = ic_tag(phys, c->code32);
    if (likely(e->tag == tag)) return e;
    return icache_miss(c, e, lin, phys, tag);
}
static inline const nm_insn *icache_fetch(nm_cpu *c)
{
    return &icache_fetch_entry(c)->insn;
}
/* A write to physical [paddr, paddr+len) in a watched page. */
void icache_invalidate(nm_cpu *c, uint32_t paddr, unsigned len);
void icache_flush(nm_cpu *c);
/* A page that now holds decoded code: its writes must take the slow path. */
void access_code_page_watched(nm_cpu *c, uint32_t phys_page);

/* --------------------------------------------------------- misc helpers */

static inline unsigned iopl(const nm_cpu *c)
{
    return (c->eflags >> 12) & 3;
}
/* CPL 0 check for privileged instructions (real mode is CPL 0). */
static inline void require_cpl0(nm_cpu *c)
{
    if (c->cpl != 0) cpu_raise(c, NM_EXC_GP, 0);
}
void io_check(nm_cpu *c, uint16_t port, unsigned size);
uint32_t io_in(nm_cpu *c, uint16_t port, unsigned size);
void io_out(nm_cpu *c, uint16_t port, uint32_t v, unsigned size);

/* Trace (trace.c). */
void trace_init(nm_cpu *c);
void trace_free(nm_cpu *c);
void trace_insn(nm_cpu *c, const nm_insn *i);
bool trace_active(nm_cpu *c);

#endif
