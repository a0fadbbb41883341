/* The guest profiler (profiler.h). */
#include "emu/profiler.h"

#include <string.h>

#include "cpu/decode.h"
#include "emu/core/log.h"
#include "emu/machine.h"
#include "emu/measure.h"
#include "emu/outfile.h"

#define MAX_TABLES  64
#define STACK_MAX   1024 /* frames per shadow stack */
#define CTX_MAX     128  /* shadow stacks kept: tasks, IRQ stacks, address spaces */
#define CHAIN_MAX   8    /* stacks running nested in one another */
#define CR3_SLOTS   64
#define DEFAULT_TOP 20

/* Shadow-stack keys: a kernel stack region's base, or an address space. */
#define KEY_USER ((uint64_t)1 << 32)
#define KEY_NONE UINT64_MAX

/* Pseudo-functions, ids 0.. */
enum { FN_IDLE, FN_KERNEL_UNKNOWN, FN_USER_UNKNOWN, FN_PSEUDO_COUNT };
static const char *const pseudo_names[FN_PSEUDO_COUNT] = {"(idle)", "(kernel: no symbol)",
                                                          "(user: no symbol)"};

typedef struct fn_stats {
    uint64_t self_clocks, self_insns, self_bus;
    uint64_t incl_clocks, incl_insns;
    uint64_t calls;
    /* Hardware interrupts that landed while it was open (outermost frame,
     * like incl_clocks) and their clocks; incl_clocks less those. */
    uint64_t irqs_inside, irq_clocks_inside, incl_no_irq;
    uint32_t active; /* frames of this function on the shadow stack */
    uint32_t dist;   /* 1 + its index in dists (0: no per-call distribution) */
} fn_stats;

/* CALL; an exception or INT n; a hardware interrupt (whose time the frames
 * below it leave out of their no-irq figures). */
enum { FRAME_CALL, FRAME_INT, FRAME_IRQ };

/* Callers that are not functions: what opened an interrupt frame. */
#define CALLER_IRQ  (-2) /* a hardware interrupt */
#define CALLER_TRAP (-3) /* an exception or INT n */

typedef struct frame {
    uint32_t ret;    /* linear return address */
    uint32_t target; /* CALL: the callee's address (resolved lazily) */
    int32_t fn;      /* -1: not known yet */
    int32_t caller;  /* the function that CALLed, or CALLER_IRQ/CALLER_TRAP */
    uint32_t arc;    /* 1 + its caller->callee arc's index (0: none yet) */
    uint8_t kind;
    uint32_t irqs;                /* hardware interrupts that landed above it */
    uint64_t irq_clocks;          /* and their clocks (their frames' lengths) */
    uint64_t at_clocks, at_insns; /* its stack's own time (ctx_now) when it opened */
} frame;

/* One caller -> callee edge of the call graph: the calls along it and the
 * callee's inclusive clocks on those calls (each frame its own length). */
typedef struct arc {
    uint64_t key; /* caller (as uint32) << 32 | callee */
    int32_t caller, callee;
    uint64_t calls, incl_clocks, incl_no_irq;
} arc;

/* A per-call distribution: exact count, min, max and sum; a histogram
 * exact below DIST_EXACT and in eighths of an octave above (bucket width
 * at most 1/8 of its lower edge), from which the log2 histogram and the
 * median and p90 (to bucket resolution) come.  Fixed size: 4 KB. */
#define DIST_EXACT   16
#define DIST_SUB     8 /* sub-buckets per octave */
#define DIST_BUCKETS (DIST_EXACT + (64 - 4) * DIST_SUB)
typedef struct dist {
    uint64_t n, min, max, sum;
    uint64_t bucket[DIST_BUCKETS];
} dist;

#define ARCS_MAX (1u << 20) /* distinct call-graph edges kept */

typedef struct ctx_ref {
    uint16_t slot;
    uint32_t gen;
} ctx_ref;

/* One shadow stack: a task's kernel stack, an IRQ stack, or an address
 * space's user mode (docs/profiler.md, "Per-task shadow stacks"). */
typedef struct ctx {
    uint64_t key; /* KEY_NONE: free slot */
    uint32_t gen; /* bumped when the slot is reused (saved chains hold it) */
    frame *frames;
    unsigned depth, cap;
    uint64_t stamp; /* last run: the least recent is evicted */
    bool running;   /* in the chain: its frames count and are in fn_stats.active */
    bool nested;    /* entered on top of the chain below it, not resumed */
    unsigned entry_depth;
    uint64_t enter_clocks, enter_insns; /* when it was nested */
    uint64_t park_clocks, park_insns;   /* when it stopped running */
    /* Time it was parked: its frames' inclusive time leaves it out. */
    uint64_t off_clocks, off_insns;
    /* The chain it switched away from (bottom first, itself last). */
    unsigned n_saved;
    ctx_ref saved[CHAIN_MAX];
} ctx;

typedef struct table {
    nm_symtab *tab;
    bool kernel;
    uint32_t base; /* id of its first symbol */
    uint32_t count;
} table;

typedef struct nic_ref {
    const char *model, *name;
    const nm_device_class *cls; /* its frames() counts the packets */
    void *state;
} nic_ref;

struct nm_profiler {
    nm_machine *m;
    nm_clock *clock;
    table tables[MAX_TABLES];
    unsigned n_tables;
    fn_stats *fn;
    uint32_t n_fn;

    /* ---- hot state ---- */
    bool active;
    uint32_t cur_lo, cur_span; /* the current function's (or gap's) range */
    int32_t cur_fn;
    uint8_t cur_cpl;
    uint32_t cur_cr3;
    uint64_t last_end, last_bus; /* clock and bus-wait counter after the last instruction */
    bool prev_hlt;
    uint64_t tot_clocks, tot_insns;
    /* Shadow stacks: the chain that runs (bottom first; the top takes
     * CALLs) and the parked ones. */
    uint32_t region;  /* kernel stack size and alignment; 0: one stack */
    uint64_t cur_key; /* the top's key */
    ctx *run;         /* the chain's top: CALLs push there */
    ctx ctxs[CTX_MAX];
    unsigned n_ctx; /* slots used so far */
    uint16_t chain[CHAIN_MAX];
    unsigned chain_len;
    uint64_t stamp;
    bool call_pending;
    int int_pending; /* 2: the INT n's own insn call comes first; 1: next insn is the handler */
    uint32_t int_ret;
    nm_profile_stack_stats ss;
    struct {
        uint32_t cr3;
        int32_t table;
    } cr3map[CR3_SLOTS];
    unsigned cr3_used, cr3_next;
    uint64_t windows;
    uint8_t int_kind; /* FRAME_INT or FRAME_IRQ: the pending interrupt's frame */
    /* The call graph: edges in first-seen order, found by key. */
    GPtrArray *arcs; /* arc* */
    GHashTable *arc_index;
    uint64_t arcs_dropped; /* calls along edges past ARCS_MAX */
    GArray *dists;         /* dist, indexed by fn_stats.dist - 1 */
    GArray *watched;       /* uint32_t fn ids named by --profile-callers */

    nm_timing_observer obs;

    /* ---- machine level ---- */
    bool observing; /* profiling requested */
    bool from_boot;
    bool print;
    unsigned top;
    void *marker;
    nic_ref nic;
    bool window_open;
    uint64_t nic_tx0, nic_rx0, nic_tx, nic_rx; /* frames: at window open, and in windows */
};

/* ======================================================= symbols */

static void ensure_alloc(nm_profiler *p)
{
    if (p->fn) return;
    uint32_t n = FN_PSEUDO_COUNT;
    for (unsigned k = 0; k < p->n_tables; k++) {
        p->tables[k].base = n;
        p->tables[k].count = (uint32_t)nm_symtab_count(p->tables[k].tab);
        n += p->tables[k].count;
    }
    p->n_fn = n;
    p->fn = g_new0(fn_stats, n);
}

void nm_profiler_add_symbols(nm_profiler *p, nm_symtab *t, bool kernel)
{
    if (p->fn || p->n_tables >= MAX_TABLES) {
        g_warning("profiler: symbol table %s ignored (too many, or profiling started)",
                  nm_symtab_label(t));
        nm_symtab_free(t);
        return;
    }
    p->tables[p->n_tables++] = (table){.tab = t, .kernel = kernel};
}

static const char *fn_name(const nm_profiler *p, uint32_t id, const char **where)
{
    if (id < FN_PSEUDO_COUNT) {
        if (where) *where = "";
        return pseudo_names[id];
    }
    for (unsigned k = 0; k < p->n_tables; k++) {
        const table *t = &p->tables[k];
        if (id >= t->base && id < t->base + t->count) {
            if (where) *where = nm_symtab_label(t->tab);
            return nm_symtab_get(t->tab, id - t->base)->name;
        }
    }
    if (where) *where = "";
    return "?";
}

static int32_t cr3_table(nm_profiler *p, uint32_t cr3)
{
    for (unsigned k = 0; k < p->cr3_used; k++)
        if (p->cr3map[k].cr3 == cr3) return p->cr3map[k].table;
    return -1;
}

static void cr3_bind(nm_profiler *p, uint32_t cr3, int32_t table)
{
    for (unsigned k = 0; k < p->cr3_used; k++) {
        if (p->cr3map[k].cr3 == cr3) {
            p->cr3map[k].table = table;
            return;
        }
    }
    unsigned slot = p->cr3_used < CR3_SLOTS ? p->cr3_used++ : (p->cr3_next++ % CR3_SLOTS);
    p->cr3map[slot].cr3 = cr3;
    p->cr3map[slot].table = table;
}

/* Looks `eip` up in table k, narrowing [*lo, *hi) to where the answer holds. */
static bool try_table(nm_profiler *p, unsigned k, uint32_t eip, uint32_t *lo, uint32_t *hi,
                      int32_t *fn)
{
    const table *t = &p->tables[k];
    uint32_t a, b;
    const nm_symbol *s = nm_symtab_lookup(t->tab, eip, &a, &b);
    if (a > *lo) *lo = a;
    if (b < *hi) *hi = b;
    if (!s) return false;
    *fn = (int32_t)(t->base + (uint32_t)(s - nm_symtab_get(t->tab, 0)));
    return true;
}

/* The function at `eip` for this privilege level and address space; sets
 * the current range so the next instructions skip the lookup. */
static void resolve(nm_profiler *p, uint32_t eip, uint8_t cpl, uint32_t cr3)
{
    uint32_t lo = 0, hi = UINT32_MAX;
    int32_t fn = -1;
    bool user = cpl == 3;
    if (!user) {
        for (unsigned pass = 0; pass < 2 && fn < 0; pass++)
            for (unsigned k = 0; k < p->n_tables && fn < 0; k++)
                if (p->tables[k].kernel == (pass == 0)) try_table(p, k, eip, &lo, &hi, &fn);
    } else {
        /* A program starts at its entry point: that binds the address space
         * to it (fork children inherit nothing: first table that knows). */
        for (unsigned k = 0; k < p->n_tables; k++) {
            uint32_t entry = nm_symtab_entry(p->tables[k].tab);
            if (!p->tables[k].kernel && entry && entry == eip) {
                cr3_bind(p, cr3, (int32_t)k);
                break;
            }
        }
        int32_t pref = cr3_table(p, cr3);
        if (pref >= 0) try_table(p, (unsigned)pref, eip, &lo, &hi, &fn);
        for (unsigned k = 0; k < p->n_tables && fn < 0; k++)
            if (!p->tables[k].kernel && (int32_t)k != pref) try_table(p, k, eip, &lo, &hi, &fn);
    }
    if (fn < 0) fn = user ? FN_USER_UNKNOWN : FN_KERNEL_UNKNOWN;
    p->cur_fn = fn;
    p->cur_lo = lo;
    p->cur_span = hi - lo;
    p->cur_cpl = cpl;
    p->cur_cr3 = cr3;
}

/* ======================================================= shadow stacks */

/* The stack an instruction runs on: in user mode its address space; in
 * kernel mode the `region`-aligned block ESP is in (a task's kernel stack,
 * an IRQ stack).  ESP-1: an empty stack's ESP is its block's end (Linux
 * loads the IRQ stack's top, then CALLs). */
static inline uint64_t ctx_key(const nm_profiler *p, uint8_t cpl, uint32_t cr3, uint32_t esp)
{
    if (!p->region) return 0;
    if (cpl == 3) return KEY_USER | cr3;
    return (esp - 1u) & ~(p->region - 1u);
}

/* A stack's own time: the clock less the time it was parked; frozen while
 * it is parked. */
static void ctx_now(const nm_profiler *p, const ctx *c, uint64_t *clocks, uint64_t *insns)
{
    *clocks = (c->running ? p->tot_clocks : c->park_clocks) - c->off_clocks;
    *insns = (c->running ? p->tot_insns : c->park_insns) - c->off_insns;
}

/* The caller -> callee edge (created at its first call). */
static uint32_t arc_of(nm_profiler *p, int32_t caller, int32_t callee)
{
    uint64_t key = (uint64_t)(uint32_t)caller << 32 | (uint32_t)callee;
    gpointer v = g_hash_table_lookup(p->arc_index, &key);
    if (v) return GPOINTER_TO_UINT(v);
    if (p->arcs->len >= ARCS_MAX) return 0;
    arc *a = g_new0(arc, 1);
    *a = (arc){.key = key, .caller = caller, .callee = callee};
    g_ptr_array_add(p->arcs, a);
    g_hash_table_insert(p->arc_index, &a->key, GUINT_TO_POINTER(p->arcs->len));
    return p->arcs->len;
}

static void frame_enter(nm_profiler *p, frame *f, int32_t fn)
{
    f->fn = fn;
    fn_stats *s = &p->fn[fn];
    s->calls++;
    s->active++;
    f->arc = arc_of(p, f->caller, fn);
    if (f->arc)
        ((arc *)p->arcs->pdata[f->arc - 1])->calls++;
    else
        p->arcs_dropped++;
}

/* Histogram bucket of a value, and the lowest value of a bucket. */
static unsigned dist_bucket(uint64_t v)
{
    if (v < DIST_EXACT) return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* 2^e <= v; e >= 4 */
    return DIST_EXACT + (e - 4) * DIST_SUB + (unsigned)((v >> (e - 3)) & (DIST_SUB - 1));
}

static uint64_t dist_bucket_low(unsigned b)
{
    if (b < DIST_EXACT) return b;
    unsigned e = 4 + (b - DIST_EXACT) / DIST_SUB, sub = (b - DIST_EXACT) % DIST_SUB;
    return (uint64_t)(DIST_SUB + sub) << (e - 3);
}

static void dist_add(dist *d, uint64_t v)
{
    if (!d->n || v < d->min) d->min = v;
    if (v > d->max) d->max = v;
    d->n++;
    d->sum += v;
    d->bucket[dist_bucket(v)]++;
}

/* A hardware interrupt's frame closed after `clocks` (its stack's time):
 * the frames open below it when it landed leave those clocks out — down to
 * the next interrupt frame below, which passes them on (inside its own
 * length) when it closes.  Below the stack it was on: the running chain's
 * stacks under it (the system call below an interrupted kernel function). */
static void irq_closed(nm_profiler *p, ctx *c, uint64_t clocks)
{
    for (unsigned j = c->depth; j-- > 0;) {
        frame *g = &c->frames[j];
        g->irqs++;
        g->irq_clocks += clocks;
        if (g->kind == FRAME_IRQ) return;
    }
    if (!c->running) return;
    unsigned i = 0;
    while (i < p->chain_len && &p->ctxs[p->chain[i]] != c)
        i++;
    if (i == p->chain_len) return;
    while (i-- > 0) {
        ctx *b = &p->ctxs[p->chain[i]];
        for (unsigned j = b->depth; j-- > 0;) {
            frame *g = &b->frames[j];
            g->irqs++;
            g->irq_clocks += clocks;
            if (g->kind == FRAME_IRQ) return;
        }
    }
}

static void pop_one(nm_profiler *p, ctx *c)
{
    frame *f = &c->frames[--c->depth];
    uint64_t clocks, insns;
    ctx_now(p, c, &clocks, &insns);
    uint64_t len = clocks - f->at_clocks;
    uint64_t irq = f->irq_clocks < len ? f->irq_clocks : len;
    if (f->kind == FRAME_IRQ) irq_closed(p, c, len);
    if (f->fn < 0) return;
    fn_stats *s = &p->fn[f->fn];
    if (f->arc) {
        arc *a = p->arcs->pdata[f->arc - 1];
        a->incl_clocks += len;
        a->incl_no_irq += len - irq;
    }
    if (s->dist) dist_add(&g_array_index(p->dists, dist, s->dist - 1), len - irq);
    if (--s->active == 0) {
        s->incl_clocks += len;
        s->incl_insns += insns - f->at_insns;
        s->incl_no_irq += len - irq;
        s->irqs_inside += f->irqs;
        s->irq_clocks_inside += irq;
    }
}

static frame *push(nm_profiler *p, ctx *c, uint32_t ret, uint8_t kind)
{
    if (c->depth == STACK_MAX) {
        /* Drop the oldest frame: it keeps no inclusive time. */
        p->ss.overflows++;
        frame *old = &c->frames[0];
        if (old->fn >= 0 && c->running) p->fn[old->fn].active--;
        memmove(&c->frames[0], &c->frames[1], sizeof(frame) * (STACK_MAX - 1));
        c->depth--;
    }
    if (c->depth == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->frames = g_renew(frame, c->frames, c->cap);
    }
    frame *f = &c->frames[c->depth++];
    *f = (frame){.ret = ret, .fn = -1, .kind = kind, .caller = -1};
    ctx_now(p, c, &f->at_clocks, &f->at_insns);
    if (c->depth > p->ss.max_depth) p->ss.max_depth = c->depth;
    return f;
}

/* A stack joins the running chain: the time it was parked leaves its
 * frames' inclusive time. */
static void activate(nm_profiler *p, uint16_t slot)
{
    ctx *c = &p->ctxs[slot];
    c->running = true;
    c->stamp = ++p->stamp;
    c->off_clocks += p->tot_clocks - c->park_clocks;
    c->off_insns += p->tot_insns - c->park_insns;
    for (unsigned k = 0; k < c->depth; k++)
        if (c->frames[k].fn >= 0) p->fn[c->frames[k].fn].active++;
    p->chain[p->chain_len++] = slot;
    p->run = c;
}

/* It leaves the chain (parked since `clocks`). */
static void deactivate(nm_profiler *p, ctx *c, uint64_t clocks, uint64_t insns)
{
    for (unsigned k = 0; k < c->depth; k++)
        if (c->frames[k].fn >= 0) p->fn[c->frames[k].fn].active--;
    c->running = false;
    c->nested = false;
    c->park_clocks = clocks;
    c->park_insns = insns;
}

/* Parks the chain; `save`: remembered by its top, which gets it back when
 * it runs again (a task's user part, entry stack and kernel stack). */
static void park_chain(nm_profiler *p, bool save)
{
    if (save && p->chain_len) {
        ctx *t = p->run;
        t->n_saved = p->chain_len;
        for (unsigned i = 0; i < p->chain_len; i++)
            t->saved[i] = (ctx_ref){p->chain[i], p->ctxs[p->chain[i]].gen};
    }
    for (unsigned i = 0; i < p->chain_len; i++)
        deactivate(p, &p->ctxs[p->chain[i]], p->tot_clocks, p->tot_insns);
    p->chain_len = 0;
    p->run = NULL;
}

static uint16_t new_ctx(nm_profiler *p, uint64_t key)
{
    uint16_t slot;
    if (p->n_ctx < CTX_MAX) {
        slot = (uint16_t)p->n_ctx++;
    } else {
        /* The least recently run parked stack (stamps are unique). */
        slot = UINT16_MAX;
        for (unsigned k = 0; k < p->n_ctx; k++)
            if (!p->ctxs[k].running &&
                (slot == UINT16_MAX || p->ctxs[k].stamp < p->ctxs[slot].stamp))
                slot = (uint16_t)k;
        p->ss.evictions++;
    }
    ctx *c = &p->ctxs[slot];
    uint32_t gen = c->gen + 1;
    frame *frames = c->frames;
    unsigned cap = c->cap;
    *c = (ctx){.key = key,
               .gen = gen,
               .frames = frames,
               .cap = cap,
               .park_clocks = p->tot_clocks,
               .park_insns = p->tot_insns};
    p->ss.contexts++;
    return slot;
}

/* ESP (or the address space) moved to the stack `key`:
 * - a stack in the running chain: back from the stacks nested on it (an
 *   IRQ stack's handler returned, the kernel returned to user mode);
 * - a stack that switched away (it has a saved chain): a task switch — the
 *   chain parks and that task's chain runs again;
 * - user mode outside the chain: the chain ends there;
 * - otherwise a stack nested on the chain (an IRQ stack, the entry stack,
 *   a task's kernel stack entered from user mode) — or a task not seen
 *   before, which pop_to finds out at its first return (unnest). */
static void switch_to(nm_profiler *p, uint64_t key)
{
    p->cur_key = key;
    int slot = -1;
    for (unsigned k = 0; k < p->n_ctx; k++) {
        if (p->ctxs[k].key == key) {
            slot = (int)k;
            break;
        }
    }
    if (slot >= 0 && p->ctxs[slot].running) {
        while (p->chain[p->chain_len - 1] != slot)
            deactivate(p, &p->ctxs[p->chain[--p->chain_len]], p->tot_clocks, p->tot_insns);
        p->run = &p->ctxs[slot];
        return;
    }
    if (slot < 0) slot = new_ctx(p, key);
    ctx *z = &p->ctxs[slot];
    bool user = (key & KEY_USER) != 0;
    if (user || z->n_saved || !p->chain_len) {
        if (p->chain_len) p->ss.switches++;
        park_chain(p, !user);
        unsigned n = user ? 0 : z->n_saved;
        z->n_saved = 0;
        for (unsigned i = 0; i + 1 < n; i++) {
            ctx_ref r = z->saved[i];
            if (r.slot < p->n_ctx && p->ctxs[r.slot].gen == r.gen && !p->ctxs[r.slot].running &&
                r.slot != slot)
                activate(p, r.slot);
        }
        activate(p, (uint16_t)slot);
        return;
    }
    if (p->chain_len == CHAIN_MAX) {
        /* Too deep: the bottom stack parks. */
        deactivate(p, &p->ctxs[p->chain[0]], p->tot_clocks, p->tot_insns);
        memmove(&p->chain[0], &p->chain[1], sizeof p->chain[0] * (CHAIN_MAX - 1));
        p->chain_len--;
    }
    p->ss.nested++;
    z->nested = true;
    z->entry_depth = z->depth;
    z->enter_clocks = p->tot_clocks;
    z->enter_insns = p->tot_insns;
    activate(p, (uint16_t)slot);
}

/* The top stack, nested when it was entered, returns below where it was
 * entered: it is a task that ran before the window (Linux: the first switch
 * to it).  The stacks below it have been parked since it was entered. */
static void unnest(nm_profiler *p)
{
    ctx *c = p->run;
    unsigned below = p->chain_len - 1;
    ctx *under = &p->ctxs[p->chain[below - 1]];
    under->n_saved = below;
    for (unsigned i = 0; i < below; i++) {
        ctx *b = &p->ctxs[p->chain[i]];
        under->saved[i] = (ctx_ref){p->chain[i], b->gen};
        deactivate(p, b, c->enter_clocks, c->enter_insns);
    }
    p->chain[0] = p->chain[below];
    p->chain_len = 1;
    c->nested = false;
    p->ss.switches++;
}

/* A RET or IRET to `to` on stack c: pops to the frame it returns from. */
static void pop_to(nm_profiler *p, ctx *c, uint32_t to, bool ret)
{
    int k = (int)c->depth - 1;
    while (k >= 0 && c->frames[k].ret != to)
        k--;
    /* Returning from below where a nested stack was entered: a task. */
    if (ret && c->nested && c == p->run && p->chain_len > 1 &&
        (k < 0 ? c->depth == c->entry_depth : (unsigned)k < c->entry_depth))
        unnest(p);
    if (k < 0) {
        p->ss.resyncs++;
        return;
    }
    p->ss.unwound += c->depth - (unsigned)k - 1;
    while ((int)c->depth > k)
        pop_one(p, c);
}

/* Closes every open frame (end of a window) and forgets the stacks. */
static void close_stacks(nm_profiler *p)
{
    /* The running chain, top first: inner frames before outer ones. */
    for (unsigned i = p->chain_len; i-- > 0;) {
        ctx *c = &p->ctxs[p->chain[i]];
        while (c->depth)
            pop_one(p, c);
    }
    /* Parked stacks, each on its own, up to when it stopped running. */
    for (unsigned k = 0; k < p->n_ctx; k++) {
        ctx *c = &p->ctxs[k];
        if (c->running) continue;
        for (unsigned j = 0; j < c->depth; j++)
            if (c->frames[j].fn >= 0) p->fn[c->frames[j].fn].active++;
        while (c->depth)
            pop_one(p, c);
    }
    for (unsigned k = 0; k < p->n_ctx; k++) {
        p->ctxs[k].key = KEY_NONE;
        p->ctxs[k].running = false;
    }
    p->n_ctx = 0;
    p->chain_len = 0;
    p->run = NULL;
    p->cur_key = KEY_NONE;
}

/* ======================================================= observer */

static void obs_insn(void *opaque, const nm_insn *insn, const nm_timing_insn_info *info,
                     uint32_t clocks)
{
    nm_profiler *p = opaque;
    if (!p->active) return;
    uint32_t eip = info->eip;
    if (eip - p->cur_lo >= p->cur_span || info->cpl != p->cur_cpl ||
        (info->cpl == 3 && info->cr3 != p->cur_cr3))
        resolve(p, eip, info->cpl, info->cr3);
    int32_t fn = p->cur_fn;
    const nm_clock *clk = p->clock;
    uint64_t now = clk->cycles + clocks;
    uint64_t d = now - p->last_end;
    uint64_t bus = clk->bus_wait_cycles - p->last_bus;
    if (p->prev_hlt && d > (uint64_t)clocks + bus) {
        /* Idle since the HLT: before the handler's frame opens. */
        uint64_t idle = d - clocks - bus;
        p->fn[FN_IDLE].self_clocks += idle;
        p->tot_clocks += idle;
        d -= idle;
    }
    /* The first instruction of an interrupt handler or of a callee.  The
     * interrupt's frame goes on the stack it interrupted; the handler's may
     * be another (the stack an instruction starts on differs from where the
     * last one left ESP only after an interrupt or exception). */
    if (p->int_pending == 1 || !p->run) {
        uint64_t key = ctx_key(p, info->cpl, info->cr3, info->esp);
        if (!p->run) switch_to(p, key);
        if (p->int_pending == 1) {
            frame *f = push(p, p->run, p->int_ret, p->int_kind);
            f->caller = p->int_kind == FRAME_IRQ ? CALLER_IRQ : CALLER_TRAP;
            frame_enter(p, f, fn);
            p->int_pending = 0;
        }
        if (key != p->cur_key) switch_to(p, key);
    } else if (p->call_pending) {
        frame_enter(p, &p->run->frames[p->run->depth - 1], fn);
        p->call_pending = false;
    }
    p->tot_clocks += d;
    fn_stats *s = &p->fn[fn];
    s->self_clocks += d;
    s->self_insns += info->retired;
    s->self_bus += bus;
    p->tot_insns += info->retired;
    p->last_end = now;
    p->last_bus = clk->bus_wait_cycles;
    p->prev_hlt = insn->op == NM_OP_HLT;

    /* The stack after it; INT n: at the handler's first instruction. */
    uint64_t key =
        p->int_pending == 2 ? p->cur_key : ctx_key(p, info->cpl_next, info->cr3, info->esp_next);
    switch (insn->op) {
    case NM_OP_CALL:
    case NM_OP_CALL_FAR: {
        /* The frame goes where the return address went. */
        if (key != p->cur_key) switch_to(p, key);
        frame *f = push(p, p->run, eip + insn->len, FRAME_CALL);
        f->target = info->next;
        f->caller = fn;
        p->call_pending = true;
        break;
    }
    case NM_OP_RET:
    case NM_OP_RET_FAR:
        /* Popped from where the return address was. */
        pop_to(p, p->run, info->next, true);
        if (key != p->cur_key) switch_to(p, key);
        break;
    case NM_OP_IRET:
        /* Back on the stack the interrupt came from, which has its frame. */
        if (key != p->cur_key) switch_to(p, key);
        pop_to(p, p->run, info->next, false);
        break;
    default:
        if (key != p->cur_key) switch_to(p, key);
        break;
    }
    if (p->int_pending == 2) p->int_pending = 1;
}

static void obs_interrupt(void *opaque, unsigned vector, unsigned kind, uint32_t from_eip)
{
    (void)vector;
    nm_profiler *p = opaque;
    if (!p->active) return;
    /* External (INTR, NMI): the hardware interrupts whose time the
     * interrupted functions' no-irq figures leave out. */
    p->int_kind = kind == NM_INT_EXTERNAL ? FRAME_IRQ : FRAME_INT;
    if (p->call_pending) {
        /* Interrupted before the callee's first instruction. */
        frame *f = &p->run->frames[p->run->depth - 1];
        resolve(p, f->target, p->cur_cpl, p->cur_cr3);
        frame_enter(p, f, p->cur_fn);
        p->call_pending = false;
    }
    p->int_pending = (kind == NM_INT_SOFTWARE || kind == NM_INT_SOFTWARE_ICEBP) ? 2 : 1;
    p->int_ret = from_eip;
}

/* ======================================================= control */

nm_profiler *nm_profiler_new_bare(nm_clock *clock)
{
    nm_profiler *p = g_new0(nm_profiler, 1);
    p->clock = clock;
    p->cur_fn = FN_KERNEL_UNKNOWN;
    p->top = DEFAULT_TOP;
    p->region = NM_PROFILER_STACK_REGION;
    p->cur_key = KEY_NONE;
    p->obs = (nm_timing_observer){.opaque = p, .insn = obs_insn, .interrupt = obs_interrupt};
    p->arcs = g_ptr_array_new_with_free_func(g_free);
    p->arc_index = g_hash_table_new(g_int64_hash, g_int64_equal);
    p->dists = g_array_new(FALSE, TRUE, sizeof(dist));
    p->watched = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return p;
}

const nm_timing_observer *nm_profiler_observer(nm_profiler *p)
{
    return &p->obs;
}

void nm_profiler_start(nm_profiler *p)
{
    if (p->active) return;
    ensure_alloc(p);
    p->active = true;
    p->windows++;
    p->last_end = p->clock->cycles;
    p->last_bus = p->clock->bus_wait_cycles;
    p->cur_span = 0; /* look the first instruction up */
    p->cur_fn = FN_KERNEL_UNKNOWN;
    p->prev_hlt = false;
    p->n_ctx = 0;
    p->chain_len = 0;
    p->run = NULL;
    p->cur_key = KEY_NONE;
    p->call_pending = false;
    p->int_pending = 0;
}

void nm_profiler_stop(nm_profiler *p)
{
    if (!p->active) return;
    /* Time since the last instruction ended (the closing OUT's bus time, or
     * idle after a HLT). */
    uint64_t d = p->clock->cycles - p->last_end;
    uint64_t bus = p->clock->bus_wait_cycles - p->last_bus;
    p->tot_clocks += d;
    if (p->prev_hlt && d > bus) {
        p->fn[FN_IDLE].self_clocks += d - bus;
        d = bus;
    }
    p->fn[p->cur_fn].self_clocks += d;
    p->fn[p->cur_fn].self_bus += bus;
    if (p->call_pending) p->call_pending = false; /* its frame has fn -1 */
    close_stacks(p);
    p->int_pending = 0;
    p->active = false;
}

void nm_profiler_totals(nm_profiler *p, uint64_t *clocks, uint64_t *insns)
{
    *clocks = p->tot_clocks;
    *insns = p->tot_insns;
}

void nm_profiler_stack_stats(nm_profiler *p, nm_profile_stack_stats *out)
{
    *out = p->ss;
    out->depth = 0;
    for (unsigned k = 0; k < p->n_ctx; k++)
        out->depth += p->ctxs[k].depth;
}

void nm_profiler_set_stack_region(nm_profiler *p, uint32_t bytes)
{
    p->region = bytes;
}

static void fill_entry(const nm_profiler *p, uint32_t id, nm_profile_entry *out)
{
    const fn_stats *s = &p->fn[id];
    out->name = fn_name(p, id, &out->where);
    out->self_clocks = s->self_clocks;
    out->self_insns = s->self_insns;
    out->self_bus = s->self_bus;
    out->incl_clocks = s->incl_clocks;
    out->incl_insns = s->incl_insns;
    out->calls = s->calls;
    out->incl_no_irq = s->incl_no_irq;
    out->irqs_inside = s->irqs_inside;
    out->irq_clocks_inside = s->irq_clocks_inside;
}

/* The first function of that name seen in the profile; -1: none. */
static int32_t seen_fn(const nm_profiler *p, const char *name)
{
    if (!p->fn) return -1;
    for (uint32_t id = 0; id < p->n_fn; id++) {
        if (!p->fn[id].self_insns && !p->fn[id].calls && !p->fn[id].self_clocks) continue;
        if (!strcmp(fn_name(p, id, NULL), name)) return (int32_t)id;
    }
    return -1;
}

bool nm_profiler_get(nm_profiler *p, const char *name, nm_profile_entry *out)
{
    int32_t id = seen_fn(p, name);
    if (id < 0) return false;
    fill_entry(p, (uint32_t)id, out);
    return true;
}

/* ---- watched functions: call graph and distributions ---- */

bool nm_profiler_watch(nm_profiler *p, const char *name, bool callers)
{
    ensure_alloc(p);
    bool found = false;
    for (unsigned k = 0; k < p->n_tables; k++) {
        const table *t = &p->tables[k];
        for (uint32_t j = 0; j < t->count; j++) {
            if (strcmp(nm_symtab_get(t->tab, j)->name, name)) continue;
            uint32_t id = t->base + j;
            found = true;
            if (!p->fn[id].dist) {
                g_array_set_size(p->dists, p->dists->len + 1);
                p->fn[id].dist = p->dists->len;
            }
            if (!callers) continue;
            bool have = false;
            for (guint w = 0; w < p->watched->len; w++)
                have = have || g_array_index(p->watched, uint32_t, w) == id;
            if (!have) g_array_append_val(p->watched, id);
        }
    }
    return found;
}

static const char *arc_end_name(const nm_profiler *p, int32_t id)
{
    if (id == CALLER_IRQ) return "(hardware interrupt)";
    if (id == CALLER_TRAP) return "(exception or INT n)";
    if (id < 0) return "(unknown)";
    return fn_name(p, (uint32_t)id, NULL);
}

static gint arc_name_cmp(gconstpointer pa, gconstpointer pb)
{
    return strcmp(((const nm_profile_arc *)pa)->name, ((const nm_profile_arc *)pb)->name);
}

static gint arc_calls_cmp(gconstpointer pa, gconstpointer pb)
{
    const nm_profile_arc *a = pa, *b = pb;
    if (a->calls != b->calls) return a->calls > b->calls ? -1 : 1;
    if (a->incl_clocks != b->incl_clocks) return a->incl_clocks > b->incl_clocks ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The callers (or callees) of function `id`, the edges of one name merged
 * (static functions of the same name), most calls first. */
static GArray *arcs_of(const nm_profiler *p, uint32_t id, bool callers)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(nm_profile_arc));
    for (guint k = 0; k < p->arcs->len; k++) {
        const arc *e = p->arcs->pdata[k];
        if ((callers ? e->callee : e->caller) != (int32_t)id) continue;
        nm_profile_arc r = {arc_end_name(p, callers ? e->caller : e->callee), e->calls,
                            e->incl_clocks, e->incl_no_irq};
        g_array_append_val(a, r);
    }
    g_array_sort(a, arc_name_cmp);
    guint out = 0;
    for (guint k = 0; k < a->len; k++) {
        nm_profile_arc *r = &g_array_index(a, nm_profile_arc, k);
        nm_profile_arc *last = out ? &g_array_index(a, nm_profile_arc, out - 1) : NULL;
        if (last && !strcmp(last->name, r->name)) {
            last->calls += r->calls;
            last->incl_clocks += r->incl_clocks;
            last->incl_no_irq += r->incl_no_irq;
        } else {
            g_array_index(a, nm_profile_arc, out++) = *r;
        }
    }
    g_array_set_size(a, out);
    g_array_sort(a, arc_calls_cmp);
    return a;
}

unsigned nm_profiler_arcs(nm_profiler *p, const char *name, bool callers, nm_profile_arc *out,
                          unsigned max)
{
    int32_t id = seen_fn(p, name);
    if (id < 0) return 0;
    GArray *a = arcs_of(p, (uint32_t)id, callers);
    unsigned n = a->len;
    for (unsigned k = 0; k < n && k < max; k++)
        out[k] = g_array_index(a, nm_profile_arc, k);
    g_array_free(a, TRUE);
    return n;
}

/* The value of nearest rank `rank` (1-based): the lower edge of the bucket
 * holding it, within [min, max]. */
static uint64_t dist_rank(const dist *d, uint64_t rank)
{
    uint64_t seen = 0;
    for (unsigned b = 0; b < DIST_BUCKETS; b++) {
        seen += d->bucket[b];
        if (seen >= rank) {
            uint64_t v = dist_bucket_low(b);
            return v < d->min ? d->min : v > d->max ? d->max : v;
        }
    }
    return d->max;
}

static void dist_fill(const dist *d, nm_profile_dist *out)
{
    *out = (nm_profile_dist){.calls = d->n, .min = d->min, .max = d->max, .sum = d->sum};
    if (!d->n) return;
    out->median = dist_rank(d, (d->n + 1) / 2);
    out->p90 = dist_rank(d, (d->n * 9 + 9) / 10);
    for (unsigned b = 0; b < DIST_BUCKETS; b++) {
        uint64_t low = dist_bucket_low(b);
        unsigned k = low ? 64u - (unsigned)__builtin_clzll(low) : 0; /* [2^(k-1), 2^k) */
        out->log2[k] += d->bucket[b];
    }
}

bool nm_profiler_dist(nm_profiler *p, const char *name, nm_profile_dist *out)
{
    int32_t id = seen_fn(p, name);
    if (id < 0 || !p->fn[id].dist) return false;
    dist_fill(&g_array_index(p->dists, dist, p->fn[id].dist - 1), out);
    return true;
}

/* ======================================================= function sets */

/* The per-packet report's function sets: each NIC model's driver, and the
 * network stack's hot path.  Shell globs (g_pattern_match_simple). */
static const struct {
    const char *set, *glob;
} function_sets[] = {
    /* drivers/net/ethernet/8390/lib8390.c (8390.c wraps it as ei_*) */
    {"8390", "ei_*"},
    {"8390", "__ei_*"},
    {"8390", "NS8390*"},
    {"8390", "eip_*"},
    {"8390", "__NS8390*"},
    /* ne.c */
    {"ne", "ne_*"},
    /* wd.c */
    {"wd", "wd_*"},
    /* e1000 */
    {"e1000", "e1000_*"},
    /* ks8851 */
    {"ks8851", "ks8851_*"},
    {"ks8851", "ks_*"},
    /* the SPI controller's driver (spi-xilinx) and the SPI core the KS8851
     * driver's register and FIFO accesses go through */
    {"spi", "xilinx_spi_*"},
    {"spi", "xspi_*"},
    {"spi", "spi_*"},
    {"spi", "__spi_*"},
    /* the network stack's hot path */
    {"stack", "dev_queue_xmit"},
    {"stack", "__dev_queue_xmit"},
    {"stack", "dev_hard_start_xmit"},
    {"stack", "sch_direct_xmit"},
    {"stack", "__qdisc_run"},
    {"stack", "pfifo_fast_*"},
    {"stack", "validate_xmit_skb*"},
    {"stack", "netif_rx*"},
    {"stack", "__netif_rx"},
    {"stack", "__netif_receive_skb*"},
    {"stack", "netif_receive_skb*"},
    {"stack", "process_backlog"},
    {"stack", "net_rx_action"},
    {"stack", "net_tx_action"},
    {"stack", "eth_type_trans"},
    {"stack", "ip_rcv*"},
    {"stack", "ip_local_deliver*"},
    {"stack", "ip_output"},
    {"stack", "ip_finish_output*"},
    {"stack", "__ip_finish_output"},
    {"stack", "ip_queue_xmit"},
    {"stack", "__ip_queue_xmit"},
    {"stack", "ip_local_out"},
    {"stack", "__ip_local_out"},
    {"stack", "ip_send_skb"},
    {"stack", "ip_make_skb"},
    {"stack", "__ip_make_skb"},
    {"stack", "ip_append_data"},
    {"stack", "__ip_append_data"},
    {"stack", "neigh_resolve_output"},
    {"stack", "tcp_v4_rcv"},
    {"stack", "tcp_v4_do_rcv"},
    {"stack", "tcp_rcv_established"},
    {"stack", "tcp_ack"},
    {"stack", "tcp_sendmsg*"},
    {"stack", "tcp_transmit_skb"},
    {"stack", "__tcp_transmit_skb"},
    {"stack", "tcp_write_xmit"},
    {"stack", "__tcp_push_pending_frames"},
    {"stack", "tcp_v4_send_check"},
    {"stack", "udp_sendmsg"},
    {"stack", "udp_send_skb"},
    {"stack", "udp_rcv"},
    {"stack", "__udp4_lib_rcv"},
    {"stack", "udp_queue_rcv_skb"},
    {"stack", "udp_unicast_rcv_skb"},
    {"stack", "udp_recvmsg"},
    {"stack", "icmp_rcv"},
    {"stack", "icmp_echo"},
    {"stack", "icmp_reply"},
    {"stack", "arp_rcv"},
    {"stack", "arp_process"},
    {"stack", "skb_*"},
    {"stack", "__skb_*"},
    {"stack", "kfree_skb*"},
    {"stack", "consume_skb"},
    {"stack", "__alloc_skb"},
    {"stack", "__netdev_alloc_skb"},
    {"stack", "__napi_alloc_skb"},
    {"stack", "csum_partial*"},
    {"stack", "csum_and_copy*"},
    {"stack", "ip_compute_csum"},
};

/* Which sets count as "the driver" for each NIC model. */
static const struct {
    const char *model;
    const char *sets[2];
} nic_drivers[] = {
    {"ne2000", {"8390", "ne"}},
    {"wd8013", {"8390", "wd"}},
    {"e1000", {"e1000", NULL}},
    {"ks8851", {"ks8851", "spi"}},
};

const char *nm_profiler_function_set(const char *name)
{
    for (size_t k = 0; k < G_N_ELEMENTS(function_sets); k++)
        if (g_pattern_match_simple(function_sets[k].glob, name)) return function_sets[k].set;
    return NULL;
}

static bool set_is_driver(const char *nic_model, const char *set)
{
    if (!nic_model || !set) return false;
    for (size_t k = 0; k < G_N_ELEMENTS(nic_drivers); k++) {
        if (strcmp(nic_drivers[k].model, nic_model)) continue;
        for (int j = 0; j < 2; j++)
            if (nic_drivers[k].sets[j] && !strcmp(nic_drivers[k].sets[j], set)) return true;
    }
    return false;
}

/* ======================================================= machine level */

static bool nic_frames(const nic_ref *n, uint64_t *tx, uint64_t *rx)
{
    *tx = *rx = 0;
    if (!n->state || !n->cls->frames) return false;
    n->cls->frames(n->state, tx, rx);
    return true;
}

static void on_window(void *opaque, bool open)
{
    nm_profiler *p = opaque;
    uint64_t tx, rx;
    nic_frames(&p->nic, &tx, &rx);
    if (open) {
        p->window_open = true;
        p->nic_tx0 = tx;
        p->nic_rx0 = rx;
        if (p->observing && !p->from_boot) {
            nm_profiler_start(p);
            nm_timing_set_observer(p->m->timing, &p->obs);
        }
    } else {
        p->window_open = false;
        p->nic_tx += tx - p->nic_tx0;
        p->nic_rx += rx - p->nic_rx0;
        if (p->observing && !p->from_boot) {
            nm_profiler_stop(p);
            nm_timing_set_observer(p->m->timing, NULL);
        }
    }
}

static nm_symtab *load_elf_table(const char *path, bool has_load, uint32_t load, GError **err)
{
    g_autofree char *base = g_path_get_basename(path);
    nm_symtab *t = nm_symtab_new(base);
    if (!nm_symtab_load_elf(t, path, has_load, load, err)) {
        nm_symtab_free(t);
        return NULL;
    }
    return t;
}

static gint str_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The guest programs the image build leaves beside an initramfs (bin/). */
static void load_initrd_programs(nm_profiler *p, const char *initrd_list)
{
    g_auto(GStrv) items = g_strsplit(initrd_list, ",", -1);
    for (char **it = items; *it; it++) {
        g_autofree char *dir = g_path_get_dirname(*it);
        g_autofree char *bin = g_build_filename(dir, "bin", NULL);
        GDir *d = g_dir_open(bin, 0, NULL);
        if (!d) continue;
        GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
        const char *n;
        while ((n = g_dir_read_name(d)))
            g_ptr_array_add(names, g_strdup(n));
        g_dir_close(d);
        g_ptr_array_sort(names, str_cmp);
        for (guint i = 0; i < names->len; i++) {
            g_autofree char *path = g_build_filename(bin, names->pdata[i], NULL);
            nm_symtab *t = load_elf_table(path, false, 0, NULL);
            if (t) nm_profiler_add_symbols(p, t, false);
        }
        g_ptr_array_free(names, TRUE);
    }
}

static bool load_symbols(nm_profiler *p, const nm_config *cfg, GError **err)
{
    /* The kernel. */
    if (cfg->system_map) {
        nm_symtab *t = nm_symtab_new("vmlinux");
        if (!nm_symtab_load_system_map(t, cfg->system_map, err)) {
            nm_symtab_free(t);
            return false;
        }
        nm_profiler_add_symbols(p, t, true);
    } else if (cfg->kernel) {
        g_autofree char *dir = g_path_get_dirname(cfg->kernel);
        g_autofree char *map = g_build_filename(dir, "System.map", NULL);
        g_autofree char *vmlinux = g_build_filename(dir, "vmlinux", NULL);
        nm_symtab *t = nm_symtab_new("vmlinux");
        if (g_file_test(map, G_FILE_TEST_IS_REGULAR)) {
            if (!nm_symtab_load_system_map(t, map, err)) {
                nm_symtab_free(t);
                return false;
            }
            nm_profiler_add_symbols(p, t, true);
        } else if (g_file_test(vmlinux, G_FILE_TEST_IS_REGULAR)) {
            if (!nm_symtab_load_elf(t, vmlinux, false, 0, err)) {
                nm_symtab_free(t);
                return false;
            }
            nm_profiler_add_symbols(p, t, true);
        } else {
            nm_symtab_free(t);
            fprintf(stderr,
                    "nicemu: warning: no System.map or vmlinux beside %s: kernel functions "
                    "are not named (give --system-map FILE)\n",
                    cfg->kernel);
        }
    }
    /* --symbols, then the bare-metal ELF itself, then the image's programs. */
    if (cfg->symbols) {
        g_auto(GStrv) items = g_strsplit(cfg->symbols, ",", -1);
        for (char **it = items; *it; it++) {
            char *file;
            bool has_load;
            uint32_t load;
            if (!nm_symbols_parse_spec(*it, &file, &has_load, &load)) {
                g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                            "symbols: bad item '%s' (accepted: FILE or FILE@ADDRESS)", *it);
                return false;
            }
            nm_symtab *t = load_elf_table(file, has_load, load, err);
            g_free(file);
            if (!t) return false;
            nm_profiler_add_symbols(p, t, false);
        }
    }
    if (cfg->elf && !cfg->symbols) {
        nm_symtab *t = load_elf_table(cfg->elf, false, 0, NULL);
        if (t) nm_profiler_add_symbols(p, t, false);
    }
    if (cfg->initrd) load_initrd_programs(p, cfg->initrd);
    return true;
}

/* --profile-callers and --profile-dist names (each must name a symbol),
 * and the NIC's driver functions: their per-call distributions. */
static bool watch_functions(nm_profiler *p, const nm_config *cfg, GError **err)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *list = pass == 0 ? cfg->profile_callers : cfg->profile_dist;
        if (!list) continue;
        g_auto(GStrv) names = g_strsplit(list, ",", -1);
        for (char **n = names; *n; n++) {
            g_strstrip(*n);
            if (!**n || !nm_profiler_watch(p, *n, pass == 0)) {
                g_autofree char *shown = nm_escape_for_message(*n);
                g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                            "%s: no function named '%s' in the symbol tables (%u loaded; names "
                            "as in System.map, e.g. pskb_expand_head)",
                            pass == 0 ? "profile-callers" : "profile-dist", shown, p->n_tables);
                return false;
            }
        }
    }
    if (!p->nic.model) return true;
    ensure_alloc(p);
    /* Only names a driver glob matches get the full set lookup (the first
     * matching set decides, as in the report). */
    for (unsigned k = 0; k < p->n_tables; k++) {
        const table *t = &p->tables[k];
        if (!t->kernel) continue;
        for (uint32_t j = 0; j < t->count; j++) {
            const char *name = nm_symtab_get(t->tab, j)->name;
            bool maybe = false;
            for (size_t g = 0; g < G_N_ELEMENTS(function_sets) && !maybe; g++)
                maybe = set_is_driver(p->nic.model, function_sets[g].set) &&
                        g_pattern_match_simple(function_sets[g].glob, name);
            if (!maybe || !set_is_driver(p->nic.model, nm_profiler_function_set(name))) continue;
            fn_stats *s = &p->fn[t->base + j];
            if (!s->dist) {
                g_array_set_size(p->dists, p->dists->len + 1);
                s->dist = p->dists->len;
            }
        }
    }
    return true;
}

static bool find_nic(nm_profiler *p, const char *want, GError **err)
{
    for (guint n = 0; n < p->m->devices->len; n++) {
        nm_device_instance *inst = p->m->devices->pdata[n];
        bool match =
            want ? (!strcmp(inst->name ? inst->name : "", want) || !strcmp(inst->cls->name, want))
                 : inst->cls->frames != NULL;
        if (match) {
            p->nic = (nic_ref){inst->cls->name, inst->name ? inst->name : inst->cls->name,
                               inst->cls, inst->state};
            return true;
        }
    }
    if (want) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "measure-nic: no device named '%s' (give a NIC's name like nic0, or its "
                    "model)",
                    want);
        return false;
    }
    return true;
}

nm_profiler *nm_profiler_new(nm_machine *m, GError **err)
{
    const nm_config *cfg = m->cfg;
    nm_profiler *p = nm_profiler_new_bare(&m->clock);
    p->m = m;
    p->print = cfg->profile || cfg->profile_top || cfg->profile_callers || cfg->profile_dist;
    if (cfg->profile_top) p->top = cfg->profile_top > 10000 ? 10000 : (unsigned)cfg->profile_top;
    p->observing = p->print || cfg->symbols || cfg->system_map || cfg->profile_from;
    if (cfg->profile_from) {
        if (!strcmp(cfg->profile_from, "boot"))
            p->from_boot = true;
        else if (strcmp(cfg->profile_from, "marker")) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "profile-from: bad value '%s' (accepted: boot, marker)", cfg->profile_from);
            goto fail;
        }
    }
    if (cfg->profile_stack_region) {
        uint64_t v;
        if (!nm_parse_size(cfg->profile_stack_region, &v) ||
            (v && (v < 1024 || v > (1u << 30) || (v & (v - 1))))) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "profile-stack-region: bad value '%s' (accepted: 0, or a power of two "
                        "from 1K to 1G, e.g. 8K)",
                        cfg->profile_stack_region);
            goto fail;
        }
        p->region = (uint32_t)v;
    }
    if (!find_nic(p, cfg->measure_nic, err)) goto fail;
    if (p->observing && !load_symbols(p, cfg, err)) goto fail;
    if (p->observing && !watch_functions(p, cfg, err)) goto fail;
    p->marker = nm_measure_of(m);
    if (p->marker) nm_measure_on_window(p->marker, on_window, p);
    if (p->observing && p->from_boot && m->timing) {
        nm_profiler_start(p);
        nm_timing_set_observer(m->timing, &p->obs);
    }
    return p;
fail:
    nm_profiler_free(p);
    return NULL;
}

void nm_profiler_finish(nm_profiler *p)
{
    if (p->window_open) {
        uint64_t tx, rx;
        nic_frames(&p->nic, &tx, &rx);
        p->nic_tx += tx - p->nic_tx0;
        p->nic_rx += rx - p->nic_rx0;
        p->nic_tx0 = tx;
        p->nic_rx0 = rx;
    }
    if (p->active) {
        nm_profiler_stop(p);
        if (p->m && p->m->timing) nm_timing_set_observer(p->m->timing, NULL);
    }
}

void nm_profiler_free(nm_profiler *p)
{
    if (!p) return;
    if (p->active && p->m && p->m->timing) nm_timing_set_observer(p->m->timing, NULL);
    for (unsigned k = 0; k < p->n_tables; k++)
        nm_symtab_free(p->tables[k].tab);
    for (unsigned k = 0; k < CTX_MAX; k++)
        g_free(p->ctxs[k].frames);
    g_free(p->fn);
    g_hash_table_destroy(p->arc_index);
    g_ptr_array_free(p->arcs, TRUE);
    g_array_free(p->dists, TRUE);
    g_array_free(p->watched, TRUE);
    g_free(p);
}

/* ======================================================= report */

typedef struct ranked {
    uint32_t id;
    uint64_t key;
    const char *name;
} ranked;

static gint ranked_cmp(gconstpointer pa, gconstpointer pb)
{
    const ranked *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Functions seen, sorted by self (incl: inclusive) clocks. */
static GArray *rank(const nm_profiler *p, bool incl)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(ranked));
    for (uint32_t id = 0; p->fn && id < p->n_fn; id++) {
        const fn_stats *s = &p->fn[id];
        if (!s->self_insns && !s->calls && !s->self_clocks) continue;
        ranked r = {id, incl ? s->incl_clocks : s->self_clocks, fn_name(p, id, NULL)};
        g_array_append_val(a, r);
    }
    g_array_sort(a, ranked_cmp);
    return a;
}

typedef struct packet_figures {
    nm_measure_window w;
    uint64_t tx, rx, frames;
} packet_figures;

static void packets(nm_profiler *p, packet_figures *f)
{
    *f = (packet_figures){0};
    if (p->marker) nm_measure_window_totals(p->marker, &f->w);
    f->tx = p->nic_tx;
    f->rx = p->nic_rx;
    if (p->window_open) {
        uint64_t tx, rx;
        nic_frames(&p->nic, &tx, &rx);
        f->tx += tx - p->nic_tx0;
        f->rx += rx - p->nic_rx0;
    }
    f->frames = f->tx + f->rx;
}

bool nm_profiler_packets_so_far(nm_profiler *p, uint64_t *frames, uint64_t *clocks)
{
    packet_figures pf;
    packets(p, &pf);
    *frames = pf.frames;
    *clocks = pf.w.clocks;
    return p->nic.state != NULL;
}

unsigned nm_profiler_top(nm_profiler *p, unsigned n, const char **names, uint64_t *clocks)
{
    if (!p->observing) return 0;
    GArray *a = rank(p, false);
    unsigned k = 0;
    for (; k < n && k < a->len; k++) {
        const ranked *r = &g_array_index(a, ranked, k);
        names[k] = r->name;
        clocks[k] = r->key;
    }
    g_array_free(a, TRUE);
    return k;
}

/* "profile-callers": per --profile-callers function, its totals and each
 * caller and callee edge. */
static void report_callgraph(const nm_profiler *p, nm_report *r)
{
    if (!p->watched->len) return;
    nm_report_section(r, "profile-callers");
    for (guint w = 0; w < p->watched->len; w++) {
        uint32_t id = g_array_index(p->watched, uint32_t, w);
        nm_profile_entry e;
        fill_entry(p, id, &e);
        char key[256];
#define PUT(fmt, value, ...)                                                                       \
    do {                                                                                           \
        g_snprintf(key, sizeof key, fmt, __VA_ARGS__);                                             \
        nm_report_u64(r, key, value);                                                              \
    } while (0)
        PUT("%s.calls", e.calls, e.name);
        PUT("%s.incl_clocks", e.incl_clocks, e.name);
        PUT("%s.incl_clocks_no_irq", e.incl_no_irq, e.name);
        PUT("%s.irqs_inside", e.irqs_inside, e.name);
        PUT("%s.irq_clocks_inside", e.irq_clocks_inside, e.name);
        for (int pass = 0; pass < 2; pass++) {
            const char *dir = pass == 0 ? "caller" : "callee";
            GArray *a = arcs_of(p, id, pass == 0);
            for (guint k = 0; k < a->len; k++) {
                const nm_profile_arc *c = &g_array_index(a, nm_profile_arc, k);
                PUT("%s.%s.%s.calls", c->calls, e.name, dir, c->name);
                PUT("%s.%s.%s.incl_clocks", c->incl_clocks, e.name, dir, c->name);
                PUT("%s.%s.%s.incl_clocks_no_irq", c->incl_no_irq, e.name, dir, c->name);
            }
            g_array_free(a, TRUE);
        }
#undef PUT
    }
}

/* "profile-distributions": per function with a distribution that was
 * called, ranked by self clocks. */
static void report_dists(const nm_profiler *p, nm_report *r)
{
    GArray *a = rank(p, false);
    bool any = false;
    for (guint i = 0; i < a->len; i++) {
        uint32_t id = g_array_index(a, ranked, i).id;
        if (!p->fn[id].dist) continue;
        nm_profile_dist d;
        dist_fill(&g_array_index(p->dists, dist, p->fn[id].dist - 1), &d);
        if (!d.calls) continue;
        if (!any) nm_report_section(r, "profile-distributions");
        any = true;
        const char *name = fn_name(p, id, NULL);
        char key[256];
        g_snprintf(key, sizeof key, "%s.calls", name);
        nm_report_u64(r, key, d.calls);
        g_snprintf(key, sizeof key, "%s.min_clocks", name);
        nm_report_u64(r, key, d.min);
        g_snprintf(key, sizeof key, "%s.median_clocks", name);
        nm_report_u64(r, key, d.median);
        g_snprintf(key, sizeof key, "%s.p90_clocks", name);
        nm_report_u64(r, key, d.p90);
        g_snprintf(key, sizeof key, "%s.max_clocks", name);
        nm_report_u64(r, key, d.max);
        g_snprintf(key, sizeof key, "%s.mean_clocks", name);
        nm_report_double(r, key, (double)d.sum / (double)d.calls);
        for (unsigned k = 0; k < G_N_ELEMENTS(d.log2); k++) {
            if (!d.log2[k]) continue;
            g_snprintf(key, sizeof key, "%s.hist_%" G_GUINT64_FORMAT, name,
                       k ? (uint64_t)1 << (k - 1) : 0);
            nm_report_u64(r, key, d.log2[k]);
        }
    }
    g_array_free(a, TRUE);
}

void nm_profiler_report(nm_profiler *p, nm_report *r)
{
    packet_figures pf;
    packets(p, &pf);
    nm_report_section(r, "packets");
    nm_report_str(r, "nic", p->nic.name ? p->nic.name : "");
    nm_report_str(r, "nic_model", p->nic.model ? p->nic.model : "");
    nm_report_u64(r, "tx_frames", pf.tx);
    nm_report_u64(r, "rx_frames", pf.rx);
    nm_report_u64(r, "frames", pf.frames);
    nm_report_u64(r, "window_clocks", pf.w.clocks);
    nm_report_u64(r, "window_instructions", pf.w.instructions);
    nm_report_u64(r, "window_bus_wait_cycles", pf.w.bus_wait_cycles);
    nm_report_double(r, "bus_wait_share",
                     pf.w.clocks ? (double)pf.w.bus_wait_cycles / (double)pf.w.clocks : 0.0);
    /* Idle (HLT) time is in the window's clocks; the busy part is what the
     * CPU spent (profiled runs only: the observer sees the HLTs). */
    uint64_t idle = p->observing && !p->from_boot && p->fn ? p->fn[FN_IDLE].self_clocks : 0;
    nm_report_u64(r, "idle_clocks", idle);
    nm_report_u64(r, "busy_clocks", pf.w.clocks - (idle < pf.w.clocks ? idle : pf.w.clocks));
    if (pf.frames) {
        nm_report_double(r, "busy_clocks_per_frame",
                         (double)(pf.w.clocks - (idle < pf.w.clocks ? idle : pf.w.clocks)) /
                             (double)pf.frames);
        nm_report_double(r, "clocks_per_frame", (double)pf.w.clocks / (double)pf.frames);
        nm_report_double(r, "instructions_per_frame",
                         (double)pf.w.instructions / (double)pf.frames);
        if (pf.tx) nm_report_double(r, "clocks_per_tx_frame", (double)pf.w.clocks / (double)pf.tx);
        if (pf.rx) nm_report_double(r, "clocks_per_rx_frame", (double)pf.w.clocks / (double)pf.rx);
    }
    if (!p->observing || !p->windows) return;

    nm_report_section(r, "profile");
    nm_report_str(r, "scope", p->from_boot ? "boot" : "window");
    nm_report_u64(r, "windows", p->windows);
    nm_report_u64(r, "clocks", p->tot_clocks);
    nm_report_u64(r, "instructions", p->tot_insns);
    nm_report_u64(r, "stack_max_depth", p->ss.max_depth);
    nm_report_u64(r, "stack_resyncs", p->ss.resyncs);
    nm_report_u64(r, "stack_unwound", p->ss.unwound);
    nm_report_u64(r, "stack_overflows", p->ss.overflows);
    nm_report_u64(r, "stack_region", p->region);
    nm_report_u64(r, "stack_contexts", p->ss.contexts);
    nm_report_u64(r, "stack_switches", p->ss.switches);
    nm_report_u64(r, "stack_nested", p->ss.nested);
    nm_report_u64(r, "stack_evictions", p->ss.evictions);
    GString *tabs = g_string_new(NULL);
    for (unsigned k = 0; k < p->n_tables; k++)
        g_string_append_printf(tabs, "%s%s(%u)", k ? "," : "", nm_symtab_label(p->tables[k].tab),
                               p->tables[k].count);
    nm_report_str(r, "symbol_tables", tabs->str);
    g_string_free(tabs, TRUE);
    nm_report_u64(r, "callgraph_arcs", p->arcs->len);
    nm_report_u64(r, "callgraph_calls_dropped", p->arcs_dropped);
    for (int pass = 0; pass < 2; pass++) {
        GArray *a = rank(p, pass == 1);
        const char *pre = pass ? "incl" : "self";
        for (guint i = 0; i < a->len && i < p->top; i++) {
            nm_profile_entry e;
            fill_entry(p, g_array_index(a, ranked, i).id, &e);
            if (pass && !e.incl_clocks) break;
            char key[64];
            g_snprintf(key, sizeof key, "%s_%u", pre, i + 1);
            nm_report_str(r, key, e.name);
#define KEY(suffix, value)                                                                         \
    do {                                                                                           \
        g_snprintf(key, sizeof key, "%s_%u_%s", pre, i + 1, suffix);                               \
        nm_report_u64(r, key, value);                                                              \
    } while (0)
            g_snprintf(key, sizeof key, "%s_%u_where", pre, i + 1);
            nm_report_str(r, key, e.where);
            KEY("self_clocks", e.self_clocks);
            KEY("self_instructions", e.self_insns);
            KEY("self_bus_wait", e.self_bus);
            KEY("incl_clocks", e.incl_clocks);
            KEY("incl_instructions", e.incl_insns);
            KEY("calls", e.calls);
            KEY("incl_clocks_no_irq", e.incl_no_irq);
            KEY("irqs_inside", e.irqs_inside);
            KEY("irq_clocks_inside", e.irq_clocks_inside);
#undef KEY
        }
        g_array_free(a, TRUE);
    }

    /* Per program (symbol table). */
    nm_report_section(r, "profile-programs");
    uint64_t kc = 0, ki = 0;
    for (uint32_t id = 0; id < FN_PSEUDO_COUNT; id++) {
        char key[64];
        g_snprintf(key, sizeof key, "%s_clocks", pseudo_names[id]);
        nm_report_u64(r, key, p->fn[id].self_clocks);
        g_snprintf(key, sizeof key, "%s_instructions", pseudo_names[id]);
        nm_report_u64(r, key, p->fn[id].self_insns);
    }
    for (unsigned k = 0; k < p->n_tables; k++) {
        const table *t = &p->tables[k];
        kc = ki = 0;
        for (uint32_t j = 0; j < t->count; j++) {
            kc += p->fn[t->base + j].self_clocks;
            ki += p->fn[t->base + j].self_insns;
        }
        char key[96];
        g_snprintf(key, sizeof key, "%s_clocks", nm_symtab_label(t->tab));
        nm_report_u64(r, key, kc);
        g_snprintf(key, sizeof key, "%s_instructions", nm_symtab_label(t->tab));
        nm_report_u64(r, key, ki);
    }

    report_callgraph(p, r);
    report_dists(p, r);

    /* Per packet, per driver and stack function. */
    if (!pf.frames || p->from_boot) return;
    nm_report_section(r, "packets-functions");
    GArray *a = rank(p, false);
    uint64_t drv = 0, stack = 0;
    for (guint i = 0; i < a->len; i++) {
        nm_profile_entry e;
        fill_entry(p, g_array_index(a, ranked, i).id, &e);
        const char *set = nm_profiler_function_set(e.name);
        if (!set) continue;
        bool driver = set_is_driver(p->nic.model, set);
        if (!driver && strcmp(set, "stack")) continue;
        if (driver)
            drv += e.self_clocks;
        else
            stack += e.self_clocks;
        char key[160];
        g_snprintf(key, sizeof key, "%s.%s.self_clocks_per_frame", driver ? "driver" : "stack",
                   e.name);
        nm_report_double(r, key, (double)e.self_clocks / (double)pf.frames);
        g_snprintf(key, sizeof key, "%s.%s.incl_clocks_per_frame", driver ? "driver" : "stack",
                   e.name);
        nm_report_double(r, key, (double)e.incl_clocks / (double)pf.frames);
        g_snprintf(key, sizeof key, "%s.%s.calls", driver ? "driver" : "stack", e.name);
        nm_report_u64(r, key, e.calls);
        /* Clocks per call of one handler: what a driver patch to it changes. */
        g_snprintf(key, sizeof key, "%s.%s.incl_clocks_per_call", driver ? "driver" : "stack",
                   e.name);
        nm_report_double(r, key, e.calls ? (double)e.incl_clocks / (double)e.calls : 0.0);
        /* The same without the hardware interrupts that landed inside. */
        g_snprintf(key, sizeof key, "%s.%s.incl_clocks_per_call_no_irq",
                   driver ? "driver" : "stack", e.name);
        nm_report_double(r, key, e.calls ? (double)e.incl_no_irq / (double)e.calls : 0.0);
        g_snprintf(key, sizeof key, "%s.%s.irqs_inside", driver ? "driver" : "stack", e.name);
        nm_report_u64(r, key, e.irqs_inside);
        g_snprintf(key, sizeof key, "%s.%s.irq_clocks_inside", driver ? "driver" : "stack", e.name);
        nm_report_u64(r, key, e.irq_clocks_inside);
    }
    g_array_free(a, TRUE);
    nm_report_double(r, "driver_self_clocks_per_frame", (double)drv / (double)pf.frames);
    nm_report_double(r, "stack_self_clocks_per_frame", (double)stack / (double)pf.frames);
}

static void print_tables(nm_profiler *p, FILE *out)
{
    packet_figures pf;
    packets(p, &pf);
    if (!p->windows) {
        fprintf(out, "profile: nothing profiled (the guest never opened the measurement window; "
                     "--profile-from boot profiles the whole run)\n");
        return;
    }
    double tot = p->tot_clocks ? (double)p->tot_clocks : 1.0;
    fprintf(out,
            "profile (%s): %" G_GUINT64_FORMAT " clocks, %" G_GUINT64_FORMAT
            " instructions, CPI %.3f\n",
            p->from_boot ? "whole run" : "measurement window", p->tot_clocks, p->tot_insns,
            p->tot_insns ? (double)p->tot_clocks / (double)p->tot_insns : 0.0);
    bool per_frame = pf.frames && !p->from_boot;
    fprintf(out, "%14s %6s %12s %14s %6s %10s%s  %s\n", "self clocks", "%", "self insns",
            "incl clocks", "%", "calls", per_frame ? "   clk/frame" : "", "function");
    GArray *a = rank(p, false);
    for (guint i = 0; i < a->len && i < p->top; i++) {
        nm_profile_entry e;
        fill_entry(p, g_array_index(a, ranked, i).id, &e);
        fprintf(out,
                "%14" G_GUINT64_FORMAT " %5.1f%% %12" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT
                " %5.1f%% %10" G_GUINT64_FORMAT,
                e.self_clocks, 100.0 * (double)e.self_clocks / tot, e.self_insns, e.incl_clocks,
                100.0 * (double)e.incl_clocks / tot, e.calls);
        if (per_frame) fprintf(out, " %11.1f", (double)e.self_clocks / (double)pf.frames);
        fprintf(out, "  %s%s%s%s\n", e.name, *e.where ? " [" : "", e.where, *e.where ? "]" : "");
    }
    g_array_free(a, TRUE);
    if (p->ss.resyncs || p->ss.overflows || p->ss.switches)
        fprintf(out,
                "  (shadow stack: %" G_GUINT64_FORMAT " unmatched returns, %" G_GUINT64_FORMAT
                " overflows; %" G_GUINT64_FORMAT " stacks, %" G_GUINT64_FORMAT " task switches)\n",
                p->ss.resyncs, p->ss.overflows, p->ss.contexts, p->ss.switches);
    if (!p->nic.name) return;
    fprintf(out,
            "packets (%s, %s): %" G_GUINT64_FORMAT " sent, %" G_GUINT64_FORMAT
            " received in the window",
            p->nic.name, p->nic.model, pf.tx, pf.rx);
    if (pf.frames)
        fprintf(out, "; %.1f clocks, %.1f instructions per frame; bus wait %.1f%%",
                (double)pf.w.clocks / (double)pf.frames,
                (double)pf.w.instructions / (double)pf.frames,
                pf.w.clocks ? 100.0 * (double)pf.w.bus_wait_cycles / (double)pf.w.clocks : 0.0);
    fputc('\n', out);
    if (!per_frame) return;
    a = rank(p, false);
    unsigned shown = 0;
    for (guint i = 0; i < a->len; i++) {
        nm_profile_entry e;
        fill_entry(p, g_array_index(a, ranked, i).id, &e);
        const char *set = nm_profiler_function_set(e.name);
        if (!set || !set_is_driver(p->nic.model, set)) continue;
        if (!shown++)
            fprintf(out, "%14s %14s %10s %14s %14s %8s %12s  %s\n", "self clk/frame",
                    "incl clk/frame", "calls", "incl clk/call", "no-irq clk/call", "irqs in",
                    "irq clocks", "driver function");
        fprintf(out,
                "%14.1f %14.1f %10" G_GUINT64_FORMAT " %14.1f %15.1f %8" G_GUINT64_FORMAT
                " %12" G_GUINT64_FORMAT "  %s\n",
                (double)e.self_clocks / (double)pf.frames,
                (double)e.incl_clocks / (double)pf.frames, e.calls,
                e.calls ? (double)e.incl_clocks / (double)e.calls : 0.0,
                e.calls ? (double)e.incl_no_irq / (double)e.calls : 0.0, e.irqs_inside,
                e.irq_clocks_inside, e.name);
    }
    g_array_free(a, TRUE);
}

/* Per-call distributions: one line of figures and one of the log2
 * histogram per function. */
static void print_dists(const nm_profiler *p, FILE *out)
{
    GArray *a = rank(p, false);
    unsigned shown = 0;
    for (guint i = 0; i < a->len; i++) {
        uint32_t id = g_array_index(a, ranked, i).id;
        if (!p->fn[id].dist) continue;
        nm_profile_dist d;
        dist_fill(&g_array_index(p->dists, dist, p->fn[id].dist - 1), &d);
        if (!d.calls) continue;
        if (!shown++)
            fprintf(out,
                    "per-call inclusive clocks, hardware interrupts excluded (median, p90: lower "
                    "edge of a 1/8-octave bucket)\n%10s %10s %10s %10s %10s  %s\n",
                    "calls", "min", "median", "p90", "max", "function");
        fprintf(out,
                "%10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                " %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT "  %s\n",
                d.calls, d.min, d.median, d.p90, d.max, fn_name(p, id, NULL));
        fprintf(out, "%10s", "");
        for (unsigned k = 0; k < G_N_ELEMENTS(d.log2); k++) {
            if (!d.log2[k]) continue;
            if (!k)
                fprintf(out, " [0]:%" G_GUINT64_FORMAT, d.log2[k]);
            else
                fprintf(out, " [%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "):%" G_GUINT64_FORMAT,
                        (uint64_t)1 << (k - 1), k < 64 ? (uint64_t)1 << k : UINT64_MAX, d.log2[k]);
        }
        fputc('\n', out);
    }
    g_array_free(a, TRUE);
}

/* gprof-style: a --profile-callers function, its callers above, its
 * callees below. */
static void print_callgraph(const nm_profiler *p, FILE *out)
{
    for (guint w = 0; w < p->watched->len; w++) {
        uint32_t id = g_array_index(p->watched, uint32_t, w);
        nm_profile_entry e;
        fill_entry(p, id, &e);
        fprintf(out,
                "callers and callees of %s%s%s%s: %" G_GUINT64_FORMAT
                " calls, incl %" G_GUINT64_FORMAT " clocks (%.1f a call), %" G_GUINT64_FORMAT
                " without interrupts (%.1f a call); hardware interrupts inside: %" G_GUINT64_FORMAT
                ", clocks %" G_GUINT64_FORMAT "\n",
                e.name, *e.where ? " [" : "", e.where, *e.where ? "]" : "", e.calls, e.incl_clocks,
                e.calls ? (double)e.incl_clocks / (double)e.calls : 0.0, e.incl_no_irq,
                e.calls ? (double)e.incl_no_irq / (double)e.calls : 0.0, e.irqs_inside,
                e.irq_clocks_inside);
        for (int pass = 0; pass < 2; pass++) {
            GArray *a = arcs_of(p, id, pass == 0);
            fprintf(out, "%12s %14s %14s  %s\n", "calls", "incl clocks", "no-irq clocks",
                    pass == 0 ? "caller" : "callee");
            for (guint k = 0; k < a->len; k++) {
                const nm_profile_arc *c = &g_array_index(a, nm_profile_arc, k);
                fprintf(out,
                        "%12" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT
                        "  %s\n",
                        c->calls, c->incl_clocks, c->incl_no_irq, c->name);
            }
            if (!a->len) fprintf(out, "%12s  (none)\n", "");
            g_array_free(a, TRUE);
        }
    }
}

void nm_profiler_print(nm_profiler *p, FILE *out)
{
    if (!p->print) return;
    print_tables(p, out);
    if (!p->windows) return;
    print_dists(p, out);
    print_callgraph(p, out);
}
