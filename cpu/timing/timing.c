/* The cost-model registry and the per-machine timing state: which model
 * listens on the CPU hooks, and the instances kept for the report. */
#include "cpu/timing/timing.h"

#include <glib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "cpu/timing/boards.h"
#include "emu/core/machine.h"

extern const nm_cost_model_class nm_cost_model_386;     /* cpu/timing/i386.c */
extern const nm_cost_model_class nm_cost_model_486;     /* cpu/timing/i486.c */
extern const nm_cost_model_class nm_cost_model_pentium; /* cpu/timing/pentium.c */

/* "none": one clock per instruction, no hooks. */
static const nm_cost_model_class cost_model_none = {
    .name = "none",
    .description = "one clock per instruction (no cost model)",
};

static const nm_cost_model_class *const classes[] = {
    &cost_model_none,
    &nm_cost_model_386,
    &nm_cost_model_486,
    &nm_cost_model_pentium,
};

const nm_cost_model_class *nm_cost_model_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(classes); i++)
        if (!g_ascii_strcasecmp(classes[i]->name, name)) return classes[i];
    return NULL;
}

const nm_cost_model_class *nm_cost_model_for_cpu(const nm_cpu_model *model)
{
    switch (model->family) {
    case NM_CPU_386: return &nm_cost_model_386;
    case NM_CPU_486: return &nm_cost_model_486;
    case NM_CPU_PENTIUM: return &nm_cost_model_pentium;
    }
    return &cost_model_none;
}

const char *nm_cost_model_names(void)
{
    return "auto, none, 386, 486, pentium";
}

/* ---------------------------------------------------------- per machine */

#define MAX_INSTANCES G_N_ELEMENTS(classes)

struct nm_timing {
    nm_machine *m;
    nm_timing_params params;
    const nm_cost_model_class *current; /* NULL: none */
    struct {
        const nm_cost_model_class *cls;
        void *state;
    } inst[MAX_INSTANCES];
    uint64_t switches;
    /* The installed model's hooks and state, and the observer. */
    nm_cpu_hooks model_hooks;
    void *model_state;
    nm_timing_observer obs;
    bool have_obs;
    int obs_cpl; /* CPL at the start of the instruction the observer sees next */
};

/* Bus-master DMA (emu/memmap.c): every model instance snoops its caches. */
static void dma_snoop(void *opaque, uint32_t phys, size_t len, bool write)
{
    nm_timing *t = opaque;
    uint32_t n = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    for (size_t k = 0; k < MAX_INSTANCES; k++)
        if (t->inst[k].state && t->inst[k].cls->snoop)
            t->inst[k].cls->snoop(t->inst[k].state, phys, n, write);
}

nm_timing *nm_timing_new(nm_machine *m, const nm_timing_params *params)
{
    nm_timing *t = g_new0(nm_timing, 1);
    t->m = m;
    if (params)
        t->params = *params;
    else
        nm_timing_default_params(m->model, &t->params);
    if (m->mem) nm_memmap_set_dma_snoop(m->mem, dma_snoop, t);
    return t;
}

void nm_timing_free(nm_timing *t)
{
    if (!t) return;
    if ((t->current || t->have_obs) && t->m->cpu) nm_cpu_set_hooks(t->m->cpu, NULL);
    if (t->m->mem && t->m->mem->dma_snoop_opaque == t)
        nm_memmap_set_dma_snoop(t->m->mem, NULL, NULL);
    for (size_t k = 0; k < MAX_INSTANCES; k++)
        if (t->inst[k].state && t->inst[k].cls->destroy) t->inst[k].cls->destroy(t->inst[k].state);
    g_free(t);
}

static void *instance_of(nm_timing *t, const nm_cost_model_class *cls)
{
    for (size_t k = 0; k < MAX_INSTANCES; k++)
        if (t->inst[k].cls == cls) return t->inst[k].state;
    if (!cls->create || !t->m->cpu) return NULL;
    void *st = cls->create(t->m->cpu, t->m->model, &t->params);
    if (!st) return NULL;
    for (size_t k = 0; k < MAX_INSTANCES; k++) {
        if (!t->inst[k].cls) {
            t->inst[k].cls = cls;
            t->inst[k].state = st;
            return st;
        }
    }
    cls->destroy(st); /* not reached: one slot per class */
    return NULL;
}

/* ---- chaining: the model, then the observer ---- */

static uint32_t chain_insn(void *opaque, nm_cpu *cpu, const nm_insn *insn)
{
    nm_timing *t = opaque;
    uint32_t cost = t->model_hooks.insn ? t->model_hooks.insn(t->model_state, cpu, insn) : 1;
    const nm_segment *cs = &cpu->seg[NM_CS];
    nm_timing_insn_info info = {
        .eip = cs->base + cpu->insn_eip,
        .next = cs->base + cpu->eip,
        .cr3 = cpu->cr3,
        .cpl = (uint8_t)(t->obs_cpl < 0 ? cpu->cpl : t->obs_cpl),
        .cpl_next = (uint8_t)cpu->cpl,
        .esp = cpu->insn_esp,
        .esp_next = cpu->gpr[NM_ESP],
        .retired = cpu_insn_retired(cpu, insn),
    };
    t->obs_cpl = cpu->cpl;
    t->obs.insn(t->obs.opaque, insn, &info, cost);
    return cost;
}

static void chain_mem(void *opaque, uint32_t linear, uint32_t physical, unsigned size,
                      unsigned flags)
{
    nm_timing *t = opaque;
    t->model_hooks.mem(t->model_state, linear, physical, size, flags);
}

static void chain_io(void *opaque, uint16_t port, unsigned size, bool write)
{
    nm_timing *t = opaque;
    t->model_hooks.io(t->model_state, port, size, write);
}

static void chain_branch(void *opaque, uint32_t from_eip, uint32_t to_eip, bool taken)
{
    nm_timing *t = opaque;
    t->model_hooks.branch(t->model_state, from_eip, to_eip, taken);
}

static void chain_interrupt(void *opaque, unsigned vector, unsigned kind, uint32_t from_eip)
{
    nm_timing *t = opaque;
    if (t->model_hooks.interrupt) t->model_hooks.interrupt(t->model_state, vector, kind, from_eip);
    if (t->obs.interrupt) t->obs.interrupt(t->obs.opaque, vector, kind, from_eip);
    /* An external interrupt or an exception changes the privilege level
     * between insn calls: the next instruction (the handler's first) runs at
     * the level the delivery chooses, still unknown here.  INT n reports
     * from inside the instruction: its insn call follows. */
    if (kind != NM_INT_SOFTWARE && kind != NM_INT_SOFTWARE_ICEBP) t->obs_cpl = -1;
}

/* Installs the hooks for the current model and observer. */
static void install(nm_timing *t)
{
    nm_cpu *cpu = t->m->cpu;
    if (!cpu) return;
    if (!t->have_obs) {
        if (!t->current) {
            nm_cpu_set_hooks(cpu, NULL);
            return;
        }
        nm_cpu_hooks h = t->model_hooks;
        h.opaque = t->model_state;
        nm_cpu_set_hooks(cpu, &h);
        return;
    }
    t->obs_cpl = cpu->cpl;
    nm_cpu_hooks h = {
        .opaque = t,
        .insn = chain_insn,
        .mem = t->model_hooks.mem ? chain_mem : NULL,
        .io = t->model_hooks.io ? chain_io : NULL,
        .branch = t->model_hooks.branch ? chain_branch : NULL,
        .interrupt = chain_interrupt,
        .mem_ignores_code = t->model_hooks.mem_ignores_code,
    };
    nm_cpu_set_hooks(cpu, &h);
}

void nm_timing_set_observer(nm_timing *t, const nm_timing_observer *obs)
{
    t->have_obs = obs && obs->insn;
    t->obs = t->have_obs ? *obs : (nm_timing_observer){0};
    install(t);
}

void nm_timing_select(nm_timing *t, const nm_cost_model_class *cls)
{
    if (cls == &cost_model_none || (cls && !cls->hooks.insn)) cls = NULL;
    if (cls == t->current) return;
    nm_cpu *cpu = t->m->cpu;
    if (!cls) {
        t->current = NULL;
        t->model_hooks = (nm_cpu_hooks){0};
        t->model_state = NULL;
        install(t);
        t->switches++;
        return;
    }
    bool existed = false;
    for (size_t k = 0; k < MAX_INSTANCES; k++)
        existed |= t->inst[k].cls == cls;
    void *st = instance_of(t, cls);
    if (st && existed && cls->resume) cls->resume(st, cpu);
    if (!st) {
        g_warning("cost model %s cannot run CPU %s: staying with %s", cls->name, t->m->model->name,
                  t->current ? t->current->name : "none");
        return;
    }
    t->model_hooks = cls->hooks;
    t->model_state = st;
    t->current = cls;
    install(t);
    t->switches++;
}

const nm_cost_model_class *nm_timing_current(const nm_timing *t)
{
    return t->current;
}
const nm_timing_params *nm_timing_get_params(const nm_timing *t)
{
    return &t->params;
}

const char *nm_timing_board(const nm_timing *t)
{
    return t && t->params.board ? t->params.board : NULL;
}

void nm_timing_report(nm_timing *t, nm_report *r)
{
    nm_report_section(r, "timing");
    nm_report_str(r, "cost_model", t->current ? t->current->name : "none");
    nm_report_str(r, "board", t->params.board ? t->params.board : "none");
    nm_report_u64(r, "model_switches", t->switches);
    nm_report_u64(r, "mem_wait_states", t->params.mem_wait_states);
    char dram[64];
    g_snprintf(dram, sizeof dram, "%u-%u-%u-%u/%u", t->params.dram_first_clocks,
               t->params.dram_burst_clocks, t->params.dram_burst_clocks,
               t->params.dram_burst_clocks, t->params.dram_single_clocks);
    nm_report_str(r, "dram_timing", dram);
    nm_report_u64(r, "l2_size", t->params.l2_size);
    static const char *const policies[] = {"write-back", "write-back-always-dirty",
                                           "write-through"};
    nm_report_str(r, "l2_policy", policies[t->params.l2_policy]);
    nm_report_u64(r, "dram_page_miss_clocks", t->params.dram_miss_clocks);
    nm_report_u64(r, "dram_page_bytes", t->params.dram_page_bytes);
    nm_report_u64(r, "posted_writes", t->params.posted_writes);
    nm_report_u64(r, "victims_posted", t->params.victim_posted);
    nm_report_u64(r, "refresh_ns", t->params.refresh_ns);
    nm_report_u64(r, "refresh_busy_ns", t->params.refresh_busy_ns);
    if (t->m->model->family == NM_CPU_386 && t->params.dram_page_bytes) {
        char ws[48]; /* page hit read / write, row closed, page miss */
        g_snprintf(ws, sizeof ws, "%u/%u/%u/%u", t->params.ws_page_read, t->params.ws_page_write,
                   t->params.ws_row_closed, t->params.ws_page_miss);
        nm_report_str(r, "dram_wait_states", ws);
    }
    for (size_t k = 0; k < MAX_INSTANCES; k++) {
        if (!t->inst[k].cls || !t->inst[k].cls->report) continue;
        char name[64];
        g_snprintf(name, sizeof name, "cost-model-%s", t->inst[k].cls->name);
        nm_report_section(r, name);
        t->inst[k].cls->report(t->inst[k].state, r);
    }
}

/* ------------------------------------------------------- configuration */

/* Wait states of a 2-clock bus cycle that must last `ns`: ceil(ns / T) - 2. */
static unsigned ws_for_ns(const nm_cpu_model *m, uint64_t ns)
{
    uint64_t den = 1000000000ull * m->hz_den;
    uint64_t clocks = (ns * m->hz_num + den - 1) / den;
    return clocks > 2 ? (unsigned)(clocks - 2) : 0;
}

void nm_timing_default_params(const nm_cpu_model *model, nm_timing_params *p)
{
    *p = (nm_timing_params){0};
    /* 386 boards without external cache: a 100 ns DRAM cycle (70 ns page
     * DRAM plus buffers) against a 2-clock bus cycle, W = ceil(100/T) - 2:
     * 1 at 25 MHz, 2 at 33 and 40 MHz (docs/cost-models.md). */
    /* At the model's own clock: with --mhz the board's memory scales with
     * the bus (cpu/models.h), the 386's bus being its core clock. */
    const nm_cpu_model *nominal = nm_cpu_model_nominal(model);
    uint64_t ns_x_hz = 100ull * nominal->hz_num; /* 100 ns * f */
    uint64_t clocks =
        (ns_x_hz + 1000000000ull * nominal->hz_den - 1) / (1000000000ull * nominal->hz_den);
    p->mem_wait_states = clocks > 2 ? (unsigned)(clocks - 2) : 0;
    /* With page-mode DRAM (a 386 board preset's rows), the same 30 ns of
     * decode and buffers on top of what the DRAM needs for each kind of
     * cycle, 70 ns FPM parts (Micron MT4C4001J class: tPC 40, tRAC 70, tRP
     * 50 ns): a page hit tPC, a closed row tRAC (= the formula above), a
     * page miss tRP + tRAC; a write one wait state more ("Add one additional
     * wait-state to these times for write accesses", Intel386 DX Hardware
     * Reference Manual, table 6-2) [L: a 386DX chipset's own table was not
     * found; the C&T 82C836's page-mode figures at 25 MHz (0 / 1 / 1 / 3)
     * are of the same shape].  At 40 MHz: 1, 2, 2, 4. */
    p->ws_page_read = ws_for_ns(nominal, 40 + 30);
    p->ws_page_write = p->ws_page_read + 1;
    p->ws_row_closed = ws_for_ns(nominal, 70 + 30);
    p->ws_page_miss = ws_for_ns(nominal, 50 + 70 + 30);
    if (model->family >= NM_CPU_PENTIUM) {
        /* Fast-page DRAM on a 60/66 MHz Pentium board (430FX class): 7-3-3-3
         * burst, 7 clocks for a single transfer. */
        p->dram_first_clocks = 7;
        p->dram_burst_clocks = 3;
        p->dram_single_clocks = 7;
        /* 256 KB of pipeline-burst L2 (docs/cost-models.md, "board"). */
        p->l2_size = 256u << 10;
    } else if (model->family >= NM_CPU_486) {
        /* Page-mode DRAM on a 33 MHz 486 board: 5-2-2-2 burst line fill, 5
         * clocks for a single read or write (Intel's minimum is 2-1-1-1). */
        p->dram_first_clocks = 5;
        p->dram_burst_clocks = 2;
        p->dram_single_clocks = 5;
        /* 256 KB of external write-back cache, the usual 486DX-33 / DX2-66
         * board (docs/cost-models.md, "board"). */
        p->l2_size = 256u << 10;
    } else {
        p->dram_first_clocks = 5;
        p->dram_burst_clocks = 2;
        p->dram_single_clocks = 5;
    }
}

static bool bad(GError **err, const char *key, const char *value, const char *accepted)
{
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE, "%s: bad value '%s' (accepted: %s)",
                key, value, accepted);
    return false;
}

/* "F-B-B-B" or "F-B-B-B/S" (bus clocks, each 1..63). */
static bool parse_dram(const char *s, nm_timing_params *p)
{
    unsigned v[5] = {0};
    unsigned n = 0;
    const char *q = s;
    while (n < 5) {
        if (!g_ascii_isdigit(*q)) return false;
        char *end;
        guint64 x = g_ascii_strtoull(q, &end, 10);
        if (x == 0 || x > 63) return false;
        v[n++] = (unsigned)x;
        q = end;
        if (!*q) break;
        if (n < 4 && *q == '-')
            q++;
        else if (n == 4 && *q == '/')
            q++;
        else
            return false;
    }
    if (*q || n < 4) return false;
    if (v[1] != v[2] || v[2] != v[3]) return false; /* one burst rate */
    p->dram_first_clocks = v[0];
    p->dram_burst_clocks = v[1];
    p->dram_single_clocks = n == 5 ? v[4] : v[0];
    return true;
}

bool nm_timing_from_config(const nm_cost_config *cfg, const nm_cpu_model *model,
                           const nm_cost_model_class **cls, nm_cost_from *from, nm_timing_params *p,
                           GError **err)
{
    nm_timing_default_params(model, p);
    const nm_board_preset *board = NULL;
    if (cfg->board) {
        board = nm_board_preset_find(cfg->board);
        if (!board) return bad(err, "board", cfg->board, nm_board_preset_names());
        if (!nm_board_preset_fits(board, model)) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "board: '%s' is not a board for the %s (see --board help)", cfg->board,
                        model->name);
            return false;
        }
    } else {
        board = nm_board_preset_default(model);
    }
    if (board) nm_board_preset_apply(board, p);
    const char *name = cfg->cost_model ? cfg->cost_model : "auto";
    if (!strcmp(name, "auto")) {
        *cls = nm_cost_model_for_cpu(model);
    } else {
        *cls = nm_cost_model_find(name);
        if (!*cls) return bad(err, "cost-model", name, nm_cost_model_names());
    }
    if (*cls == &cost_model_none) *cls = NULL;
    const char *f = cfg->cost_from ? cfg->cost_from : "marker";
    if (!strcmp(f, "marker"))
        *from = NM_COST_FROM_MARKER;
    else if (!strcmp(f, "boot"))
        *from = NM_COST_FROM_BOOT;
    else
        return bad(err, "cost-from", f, "boot, marker");
    if (cfg->mem_wait_states) {
        uint64_t v;
        if (!nm_parse_u64(cfg->mem_wait_states, &v) || v > 31)
            return bad(err, "mem-wait-states", cfg->mem_wait_states, "an integer from 0 to 31");
        p->mem_wait_states = (unsigned)v;
        /* A fixed figure per cycle: no page mode on a 386 board. */
        if (model->family == NM_CPU_386) p->dram_page_bytes = 0;
    }
    if (cfg->dram_timing && !parse_dram(cfg->dram_timing, p))
        return bad(err, "dram-timing", cfg->dram_timing,
                   "bus clocks first-burst-burst-burst[/single], 1 to 63, e.g. 5-2-2-2 or "
                   "5-2-2-2/3");
    if (cfg->l2) {
        uint64_t v = 0;
        if (strcmp(cfg->l2, "none") != 0) {
            if (!nm_parse_size(cfg->l2, &v) || v < (16u << 10) || v > (4u << 20) || (v & (v - 1)))
                return bad(err, "l2", cfg->l2, "none, or a power of two from 16K to 4M, e.g. 256K");
        }
        p->l2_size = (unsigned)v;
    }
    return true;
}
