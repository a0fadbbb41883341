/* The ISA (AT) bus timing model.  Where every figure comes from:
 * docs/isa-bus.md.  In short: a bus cycle is 2 BCLK plus wait states; the
 * AT's default ready logic inserts 4 wait states into an 8-bit cycle (6 BCLK)
 * and 1 into a 16-bit cycle (3 BCLK); NOWS# from the card shortens a 16-bit
 * memory cycle to 0 wait states and an 8-bit one to 1.  BCLK is 8.33 MHz by
 * default.  A word access to an 8-bit card is run as two 8-bit cycles (the
 * card does not assert IOCS16#/MEMCS16#), a dword as two 16-bit cycles. */
#include "devices/bus/isa.h"

#include <glib.h>

#include "emu/core/device.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

enum { KIND_IO = 0, KIND_MEM = 1 };

/* One claim, I/O or memory: the card's callbacks behind the bus's own. */
typedef struct isa_claim {
    nm_isa_bus *bus; /* NULL once the bus is gone (the owner still frees it) */
    int kind;
    unsigned width; /* 8 or 16 */
    bool nows;
    char *name;
    uint32_t (*read)(void *opaque, uint32_t offset, unsigned size);
    void (*write)(void *opaque, uint32_t offset, uint32_t value, unsigned size);
    void *opaque;
    nm_io_claim *io;
    nm_mem_region *region;
    nm_bus_cost cost; /* handed to the port/memory map */
    uint64_t cycles;  /* bus cycles run */
} isa_claim;

struct nm_isa_io {
    isa_claim c;
};
struct nm_isa_mem {
    isa_claim c;
};

struct nm_isa_bus {
    nm_machine *m;
    uint64_t hz_num, hz_den;    /* BCLK */
    unsigned ws[2][2][2];       /* [kind][width16][nows]: wait states */
    uint64_t cpu_num, cpu_den;  /* the CPU clock the costs were computed at */
    uint32_t clocks[2][2][2];   /* [kind][width16][nows]: CPU clocks per bus cycle */
    GPtrArray *claims;          /* isa_claim* */
    nm_bus_cost io8_shared;     /* for claims made outside this API (port 0x80) */
    uint64_t shared_cycles;     /* bus cycles on io8_shared before the last retime */
    uint64_t shared_charged_at; /* io8_shared.cycles_charged at the last retime */
    nm_isa_stats retired;       /* counters of released claims */
};

extern const nm_device_class nm_isa_class;

/* ---- timing -------------------------------------------------------------- */

/* CPU clocks for one bus cycle of `bclk` bus clocks (rounded up: the CPU
 * samples READY on its own clock edges). */
static uint32_t bclk_to_cpu(const nm_isa_bus *b, unsigned bclk)
{
    unsigned __int128 num = (unsigned __int128)bclk * 1000000000u * b->hz_den;
    uint64_t ns = (uint64_t)((num + b->hz_num - 1) / b->hz_num);
    uint64_t cyc = nm_clock_duration_cycles(&b->m->clock, ns);
    return cyc > UINT32_MAX / 8 ? UINT32_MAX / 8 : (uint32_t)cyc;
}

static void fill_cost(const nm_isa_bus *b, isa_claim *c)
{
    uint32_t one = b->clocks[c->kind][c->width == 16][c->nows];
    c->cost.cycles[0] = 0;
    c->cost.cycles[3] = 0;
    if (c->width == 16) {
        c->cost.cycles[1] = one;
        c->cost.cycles[2] = one;
        c->cost.cycles[4] = 2 * one;
    } else {
        c->cost.cycles[1] = one;
        c->cost.cycles[2] = 2 * one;
        c->cost.cycles[4] = 4 * one;
    }
}

void nm_isa_retime(nm_isa_bus *b)
{
    const nm_clock *clk = &b->m->clock;
    /* Settle the shared counter at the old rate before the rate changes. */
    uint32_t old8 = b->io8_shared.cycles[1];
    if (old8) b->shared_cycles += (b->io8_shared.cycles_charged - b->shared_charged_at) / old8;
    b->shared_charged_at = b->io8_shared.cycles_charged;

    b->cpu_num = clk->hz_num;
    b->cpu_den = clk->hz_den;
    for (int k = 0; k < 2; k++)
        for (int w = 0; w < 2; w++)
            for (int n = 0; n < 2; n++)
                b->clocks[k][w][n] = bclk_to_cpu(b, 2 + b->ws[k][w][n]);
    isa_claim shared = {.kind = KIND_IO, .width = 8};
    fill_cost(b, &shared);
    for (int i = 0; i < 5; i++)
        b->io8_shared.cycles[i] = shared.cost.cycles[i];
    for (guint i = 0; i < b->claims->len; i++)
        fill_cost(b, b->claims->pdata[i]);
}

static inline void check_clock(nm_isa_bus *b)
{
    const nm_clock *clk = &b->m->clock;
    if (__builtin_expect(clk->hz_num != b->cpu_num || clk->hz_den != b->cpu_den, 0)) {
        nm_debug(ISA, "CPU clock changed: recomputing ISA cycle costs");
        nm_isa_retime(b);
    }
}

/* ---- the bus cycles ------------------------------------------------------ */

/* A 16-bit card at an odd offset gets byte cycles: charge the cycle the
 * size-indexed cost did not include. */
static void charge_extra(isa_claim *c, unsigned cycles_run, unsigned size)
{
    uint32_t one = c->cost.cycles[1];
    uint64_t want = (uint64_t)one * cycles_run;
    uint64_t paid = c->cost.cycles[size > 4 ? 4 : size];
    if (want > paid && c->bus) {
        c->cost.cycles_charged += want - paid;
        nm_clock_charge_bus(&c->bus->m->clock, want - paid);
    }
}

static uint32_t claim_read(void *opaque, uint32_t offset, unsigned size)
{
    isa_claim *c = opaque;
    if (c->bus) check_clock(c->bus);
    uint32_t v = 0;
    if (c->width == 16 && !(offset & 1) && size >= 2) {
        for (unsigned i = 0; i < size; i += 2) {
            v |= (c->read(c->opaque, offset + i, 2) & 0xffff) << (8 * i);
            c->cycles++;
        }
        return v;
    }
    for (unsigned i = 0; i < size; i++) {
        v |= (c->read(c->opaque, offset + i, 1) & 0xff) << (8 * i);
        c->cycles++;
    }
    if (c->width == 16 && size > 1) charge_extra(c, size, size);
    return v;
}

static void claim_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    isa_claim *c = opaque;
    if (c->bus) check_clock(c->bus);
    if (c->width == 16 && !(offset & 1) && size >= 2) {
        for (unsigned i = 0; i < size; i += 2) {
            c->write(c->opaque, offset + i, (value >> (8 * i)) & 0xffff, 2);
            c->cycles++;
        }
        return;
    }
    for (unsigned i = 0; i < size; i++) {
        c->write(c->opaque, offset + i, (value >> (8 * i)) & 0xff, 1);
        c->cycles++;
    }
    if (c->width == 16 && size > 1) charge_extra(c, size, size);
}

static const nm_io_ops claim_io_ops = {claim_read, claim_write, NULL};
static const nm_mmio_ops claim_mmio_ops = {claim_read, claim_write};

/* ---- the bus object ------------------------------------------------------ */

nm_isa_bus *nm_isa_bus_get(nm_machine *m, GError **err)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls == &nm_isa_class) return inst->state;
    }
    return nm_machine_add_device(m, &nm_isa_class, NULL, err);
}

static bool check_width(unsigned width, const char *name, GError **err)
{
    if (width == 8 || width == 16) return true;
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                "%s: ISA bus width must be 8 or 16, not %u", name, width);
    return false;
}

static void claim_init(nm_isa_bus *b, isa_claim *c, int kind, unsigned width, const char *name,
                       void *opaque)
{
    c->bus = b;
    c->kind = kind;
    c->width = width;
    c->name = g_strdup(name);
    c->opaque = opaque;
    c->cost.name = c->name;
    fill_cost(b, c);
    g_ptr_array_add(b->claims, c);
}

static void claim_retire(isa_claim *c)
{
    if (!c->bus) return;
    c->bus->retired.wait_clocks += c->cost.cycles_charged;
    if (c->kind == KIND_IO)
        c->bus->retired.io_cycles += c->cycles;
    else
        c->bus->retired.mem_cycles += c->cycles;
    g_ptr_array_remove(c->bus->claims, c);
}

static void claim_stats(const isa_claim *c, nm_isa_stats *sum)
{
    if (c->kind == KIND_IO)
        sum->io_cycles += c->cycles;
    else
        sum->mem_cycles += c->cycles;
    sum->wait_clocks += c->cost.cycles_charged;
}

nm_isa_io *nm_isa_claim_io(nm_machine *m, uint16_t base, uint32_t count, const nm_io_ops *ops,
                           void *opaque, const char *name, unsigned width, GError **err)
{
    if (!check_width(width, name, err)) return NULL;
    nm_isa_bus *b = nm_isa_bus_get(m, err);
    if (!b) return NULL;
    check_clock(b);
    nm_isa_io *io = g_new0(nm_isa_io, 1);
    claim_init(b, &io->c, KIND_IO, width, name, opaque);
    io->c.read = ops->read;
    io->c.write = ops->write;
    io->c.io = nm_ioport_claim(m->io, base, count, &claim_io_ops, &io->c, io->c.name, &io->c.cost);
    if (!io->c.io) {
        const nm_io_claim *owner = NULL;
        for (uint32_t p = base; p < (uint32_t)base + count && p < 65536 && !owner; p++)
            owner = nm_ioport_owner(m->io, (uint16_t)p);
        if (owner)
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "%s: ports 0x%x-0x%x: already taken by %s", name, base, base + count - 1,
                        owner->name);
        else
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "%s: ports 0x%x+%u: outside the 64 K port space", name, base, count);
        claim_retire(&io->c);
        g_free(io->c.name);
        g_free(io);
        return NULL;
    }
    return io;
}

void nm_isa_release_io(nm_isa_io *io)
{
    if (!io) return;
    if (io->c.bus) {
        nm_ioport_release(io->c.bus->m->io, io->c.io);
        claim_retire(&io->c);
    }
    g_free(io->c.name);
    g_free(io);
}

void nm_isa_io_stats(const nm_isa_io *io, nm_isa_stats *sum)
{
    if (io) claim_stats(&io->c, sum);
}

nm_isa_mem *nm_isa_map_memory(nm_machine *m, uint32_t base, uint32_t size, const nm_mmio_ops *ops,
                              void *opaque, const char *name, unsigned width, GError **err)
{
    if (!check_width(width, name, err)) return NULL;
    /* The AT bus has 24 address lines (LA23..LA17, SA19..SA0). */
    if (size == 0 || base >= (1u << 24) || size > (1u << 24) - base) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: memory window 0x%x+0x%x is outside the 16 MB ISA address space", name,
                    base, size);
        return NULL;
    }
    nm_isa_bus *b = nm_isa_bus_get(m, err);
    if (!b) return NULL;
    /* Two cards configured onto the same addresses would both answer (a
     * conflict on the bus, not a configuration anyone means).  Where a
     * guest later moves a window is the guest's business. */
    for (guint i = 0; i < b->claims->len; i++) {
        const isa_claim *o = b->claims->pdata[i];
        if (o->kind != KIND_MEM || !o->region) continue;
        uint32_t ob = o->region->base, os = o->region->size;
        if (base < ob + os && ob < base + size) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "memory window 0x%x-0x%x overlaps %s at 0x%x-0x%x", base, base + size - 1,
                        o->name, ob, ob + os - 1);
            return NULL;
        }
    }
    check_clock(b);
    nm_isa_mem *w = g_new0(nm_isa_mem, 1);
    claim_init(b, &w->c, KIND_MEM, width, name, opaque);
    w->c.read = ops->read;
    w->c.write = ops->write;
    w->c.region =
        nm_memmap_add_mmio(m->mem, w->c.name, base, size, &claim_mmio_ops, &w->c, &w->c.cost);
    if (!w->c.region) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: cannot map memory window 0x%x+0x%x", name, base, size);
        claim_retire(&w->c);
        g_free(w->c.name);
        g_free(w);
        return NULL;
    }
    nm_mem_region_set_enabled(m->mem, w->c.region, false);
    return w;
}

void nm_isa_unmap_memory(nm_isa_mem *w)
{
    if (!w) return;
    if (w->c.bus) {
        nm_memmap_remove(w->c.bus->m->mem, w->c.region);
        claim_retire(&w->c);
    }
    g_free(w->c.name);
    g_free(w);
}

void nm_isa_mem_set_enabled(nm_isa_mem *w, bool enabled)
{
    if (w->c.bus) nm_mem_region_set_enabled(w->c.bus->m->mem, w->c.region, enabled);
}

bool nm_isa_mem_enabled(const nm_isa_mem *w)
{
    return w->c.region && w->c.region->enabled;
}

uint32_t nm_isa_mem_base(const nm_isa_mem *w)
{
    return w->c.region ? w->c.region->base : 0;
}

void nm_isa_mem_move(nm_isa_mem *w, uint32_t base)
{
    if (!w->c.bus || base == w->c.region->base) return;
    if (base >= (1u << 24) || w->c.region->size > (1u << 24) - base) {
        nm_dev_warn(ISA, w, "%s: window cannot move to 0x%x (past 16 MB)", w->c.name, base);
        return;
    }
    nm_mem_region_move(w->c.bus->m->mem, w->c.region, base);
}

void nm_isa_mem_set_timing(nm_isa_mem *w, unsigned width, bool nows)
{
    if (width != 8 && width != 16) return;
    w->c.width = width;
    w->c.nows = nows;
    if (w->c.bus) {
        check_clock(w->c.bus);
        fill_cost(w->c.bus, &w->c);
    }
}

void nm_isa_mem_stats(const nm_isa_mem *w, nm_isa_stats *sum)
{
    if (w) claim_stats(&w->c, sum);
}

nm_bus_cost *nm_isa_io8_cost(nm_machine *m)
{
    nm_isa_bus *b = nm_isa_bus_get(m, NULL);
    if (!b) return NULL;
    check_clock(b);
    return &b->io8_shared;
}

void nm_isa_bus_clock(const nm_isa_bus *b, uint64_t *hz_num, uint64_t *hz_den)
{
    *hz_num = b->hz_num;
    *hz_den = b->hz_den;
}

uint32_t nm_isa_cycle_clocks(const nm_isa_bus *b, bool io, unsigned width, bool nows)
{
    return b->clocks[io ? KIND_IO : KIND_MEM][width == 16][nows ? 1 : 0];
}

void nm_isa_bus_stats(const nm_isa_bus *b, nm_isa_stats *sum)
{
    *sum = b->retired;
    for (guint i = 0; i < b->claims->len; i++)
        claim_stats(b->claims->pdata[i], sum);
    uint32_t one = b->io8_shared.cycles[1];
    sum->io_cycles += b->shared_cycles;
    if (one) sum->io_cycles += (b->io8_shared.cycles_charged - b->shared_charged_at) / one;
    sum->wait_clocks += b->io8_shared.cycles_charged;
}

/* ---- device class -------------------------------------------------------- */

static void *isa_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls == &nm_isa_class) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "%s: the machine already has an ISA bus (configure it once, before "
                        "the cards on it)",
                        cfg ? cfg->origin : "isa");
            return NULL;
        }
    }
    uint32_t clock = 0, io8 = 4, io16 = 1, mem8 = 4, mem16 = 1;
    if (cfg && (!nm_devcfg_u32(cfg, "clock", 0, 4000000, 16000000, &clock, err) ||
                !nm_devcfg_u32(cfg, "io8_ws", 4, 0, 32, &io8, err) ||
                !nm_devcfg_u32(cfg, "io16_ws", 1, 0, 32, &io16, err) ||
                !nm_devcfg_u32(cfg, "mem8_ws", 4, 0, 32, &mem8, err) ||
                !nm_devcfg_u32(cfg, "mem16_ws", 1, 0, 32, &mem16, err)))
        return NULL;
    nm_isa_bus *b = g_new0(nm_isa_bus, 1);
    b->m = m;
    if (clock) {
        b->hz_num = clock;
        b->hz_den = 1;
    } else {
        b->hz_num = 25000000; /* 8 1/3 MHz: the 25 MHz crystal / 3 (docs/isa-bus.md) */
        b->hz_den = 3;
    }
    b->ws[KIND_IO][0][0] = b->ws[KIND_IO][0][1] = io8;
    /* NOWS# cannot shorten a 16-bit I/O cycle (docs/isa-bus.md). */
    b->ws[KIND_IO][1][0] = b->ws[KIND_IO][1][1] = io16;
    b->ws[KIND_MEM][0][0] = mem8;
    b->ws[KIND_MEM][0][1] = mem8 < 1 ? mem8 : 1;
    b->ws[KIND_MEM][1][0] = mem16;
    b->ws[KIND_MEM][1][1] = 0;
    b->claims = g_ptr_array_new();
    b->io8_shared.name = "isa-io8";
    nm_isa_retime(b);
    return b;
}

static void isa_destroy(void *opaque)
{
    nm_isa_bus *b = opaque;
    /* Owners normally release first (they were created after the bus).  If
     * not, unhook their claims from the maps and leave the records to them. */
    for (guint i = 0; i < b->claims->len; i++) {
        isa_claim *c = b->claims->pdata[i];
        if (c->io) nm_ioport_release(b->m->io, c->io);
        if (c->region) nm_memmap_remove(b->m->mem, c->region);
        c->io = NULL;
        c->region = NULL;
        c->bus = NULL;
    }
    g_ptr_array_free(b->claims, TRUE);
    g_free(b);
}

static void isa_report(void *opaque, nm_report *r)
{
    nm_isa_bus *b = opaque;
    nm_isa_stats s;
    nm_isa_bus_stats(b, &s);
    nm_report_double(r, "bclk_mhz", (double)b->hz_num / (double)b->hz_den / 1e6);
    nm_report_u64(r, "io8_cycle_clocks", b->clocks[KIND_IO][0][0]);
    nm_report_u64(r, "io16_cycle_clocks", b->clocks[KIND_IO][1][0]);
    nm_report_u64(r, "mem8_cycle_clocks", b->clocks[KIND_MEM][0][0]);
    nm_report_u64(r, "mem16_cycle_clocks", b->clocks[KIND_MEM][1][0]);
    nm_report_u64(r, "io_cycles", s.io_cycles);
    nm_report_u64(r, "mem_cycles", s.mem_cycles);
    nm_report_u64(r, "wait_clocks", s.wait_clocks);
}

/* The bus's counters: each claim's (in creation order, checked by name),
 * the shared 8-bit claim's, those of released claims; and whether each
 * memory window is decoded (a card enables its own). */
static void isa_snapshot(void *opaque, nm_snap *s)
{
    nm_isa_bus *b = opaque;
    uint32_t n = b->claims->len;
    nm_snap_u32(s, "claims", &n);
    if (!nm_snap_check(s, n == b->claims->len, "claims")) return;
    for (guint i = 0; i < b->claims->len; i++) {
        isa_claim *c = b->claims->pdata[i];
        nm_snap_push(s, "claim%u", i);
        nm_snap_same_string(s, "name", c->name);
        nm_snap_u64(s, "cycles", &c->cycles);
        nm_snap_u64(s, "accesses", &c->cost.accesses);
        nm_snap_u64(s, "cycles_charged", &c->cost.cycles_charged);
        bool enabled = c->region && c->region->enabled;
        nm_snap_bool(s, "enabled", &enabled);
        if (!nm_snap_saving(s) && !nm_snap_failed(s) && c->region && c->region->enabled != enabled)
            nm_mem_region_set_enabled(b->m->mem, c->region, enabled);
        nm_snap_pop(s);
    }
    nm_snap_u64(s, "shared.accesses", &b->io8_shared.accesses);
    nm_snap_u64(s, "shared.cycles_charged", &b->io8_shared.cycles_charged);
    nm_snap_u64(s, "shared_cycles", &b->shared_cycles);
    nm_snap_u64(s, "shared_charged_at", &b->shared_charged_at);
    nm_snap_u64(s, "retired.io_cycles", &b->retired.io_cycles);
    nm_snap_u64(s, "retired.mem_cycles", &b->retired.mem_cycles);
    nm_snap_u64(s, "retired.wait_clocks", &b->retired.wait_clocks);
}

static const char *const isa_keys[] = {"clock", "io8_ws", "io16_ws", "mem8_ws", "mem16_ws", NULL};

const nm_device_class nm_isa_class = {
    .name = "isa",
    .help = "ISA (AT) bus timing: clock=HZ (default 8333333), io8_ws=4, io16_ws=1, mem8_ws=4, "
            "mem16_ws=1 (wait states beyond the 2-BCLK cycle)",
    .keys = isa_keys,
    .create = isa_create,
    .destroy = isa_destroy,
    .report = isa_report,
    .snapshot = isa_snapshot,
    .snapshot_version = 1,
};
