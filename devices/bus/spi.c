/* The SPI bus: chip selects, byte exchanges, devices.  spi.h; docs/spi.md. */
#include "devices/bus/spi.h"

#include <string.h>

#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

typedef struct spi_slot {
    const nm_spi_device_ops *ops;
    void *opaque;
    char *name;
    uint64_t max_hz;
} spi_slot;

struct nm_spi_bus {
    nm_machine *m;
    char *name;
    unsigned chip_selects;
    uint64_t sclk_hz;
    uint32_t cs; /* asserted lines */
    spi_slot slot[NM_SPI_MAX_CS];
    nm_spi_stats st;
};

uint64_t nm_spi_bytes_ns(uint64_t sclk_hz, uint64_t bytes)
{
    if (!sclk_hz) return 0;
    unsigned __int128 num = (unsigned __int128)bytes * 8u * 1000000000u;
    return (uint64_t)((num + sclk_hz - 1) / sclk_hz);
}

static void check_speed(nm_spi_bus *b, spi_slot *s)
{
    if (s->ops && s->max_hz && b->sclk_hz > s->max_hz)
        nm_dev_warn(SPI, s,
                    "%s: SCLK %" G_GUINT64_FORMAT " Hz exceeds what %s accepts (%" G_GUINT64_FORMAT
                    " Hz): the part would not sample reliably",
                    b->name, b->sclk_hz, s->name, s->max_hz);
}

nm_spi_bus *nm_spi_bus_new(nm_machine *m, const char *name, unsigned chip_selects, uint64_t sclk_hz,
                           GError **err)
{
    if (chip_selects < 1 || chip_selects > NM_SPI_MAX_CS || !sclk_hz) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: an SPI bus needs 1..%u chip selects and a non-zero SCLK", name,
                    NM_SPI_MAX_CS);
        return NULL;
    }
    nm_devcfg *cfg = g_new0(nm_devcfg, 1);
    cfg->origin = g_strdup(name);
    /* Its own report section beside the controller's ("dev0.spi"), as a
     * NIC's link and peer have; nm_spi_bus_find still takes the
     * controller's name. */
    cfg->name = g_strdup_printf("%s.spi", name);
    cfg->model = g_strdup(nm_spi_bus_class.name);
    cfg->keys = g_ptr_array_new_with_free_func(g_free);
    cfg->values = g_ptr_array_new_with_free_func(g_free);
    nm_spi_bus *b = nm_machine_add_device(m, &nm_spi_bus_class, cfg, err);
    nm_devcfg_free(cfg);
    if (!b) return NULL;
    b->name = g_strdup(name);
    b->chip_selects = chip_selects;
    b->sclk_hz = sclk_hz;
    return b;
}

nm_spi_bus *nm_spi_bus_find(nm_machine *m, const char *name)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls != &nm_spi_bus_class) continue;
        nm_spi_bus *b = inst->state;
        if (!name || (b->name && !strcmp(b->name, name))) return b;
    }
    return NULL;
}

const char *nm_spi_bus_name(const nm_spi_bus *b)
{
    return b->name;
}

bool nm_spi_bus_attach(nm_spi_bus *b, unsigned cs, const char *name, uint64_t max_hz,
                       const nm_spi_device_ops *ops, void *opaque, GError **err)
{
    if (cs >= b->chip_selects) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: cs: %u is not a chip select of %s (it has %u: 0..%u)", name, cs, b->name,
                    b->chip_selects, b->chip_selects - 1);
        return false;
    }
    spi_slot *s = &b->slot[cs];
    if (s->ops) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: cs: chip select %u of %s is already taken by %s", name, cs, b->name,
                    s->name);
        return false;
    }
    s->ops = ops;
    s->opaque = opaque;
    s->name = g_strdup(name);
    s->max_hz = max_hz;
    check_speed(b, s);
    return true;
}

void nm_spi_bus_detach(nm_spi_bus *b, unsigned cs)
{
    if (!b || cs >= NM_SPI_MAX_CS) return;
    spi_slot *s = &b->slot[cs];
    g_free(s->name);
    memset(s, 0, sizeof *s);
}

void nm_spi_bus_set_cs(nm_spi_bus *b, uint32_t asserted)
{
    uint32_t mask = b->chip_selects >= 32 ? 0xffffffffu : (1u << b->chip_selects) - 1u;
    asserted &= mask;
    uint32_t changed = asserted ^ b->cs;
    if (!changed) return;
    uint32_t old = b->cs;
    b->cs = asserted;
    /* Releases first, so a device never sees two transactions overlap. */
    for (unsigned i = 0; i < b->chip_selects; i++) {
        spi_slot *s = &b->slot[i];
        if ((changed >> i & 1) && (old >> i & 1) && s->ops) s->ops->select(s->opaque, false);
    }
    for (unsigned i = 0; i < b->chip_selects; i++) {
        spi_slot *s = &b->slot[i];
        if ((changed >> i & 1) && (asserted >> i & 1)) {
            b->st.selects++;
            if (s->ops) s->ops->select(s->opaque, true);
        }
    }
}

uint32_t nm_spi_bus_cs(const nm_spi_bus *b)
{
    return b->cs;
}

uint8_t nm_spi_bus_exchange(nm_spi_bus *b, uint8_t mosi)
{
    b->st.bytes++;
    uint8_t miso = 0xff;
    unsigned drivers = 0;
    for (unsigned i = 0; i < b->chip_selects; i++) {
        spi_slot *s = &b->slot[i];
        if (!(b->cs >> i & 1)) continue;
        if (!s->ops) continue;
        miso &= s->ops->exchange(s->opaque, mosi);
        drivers++;
    }
    if (!b->cs) b->st.bytes_unselected++;
    if (drivers > 1) {
        if (!b->st.contentions)
            nm_dev_warn(SPI, b, "%s: %u devices selected at once: MISO contention", b->name,
                        drivers);
        b->st.contentions++;
    }
    return miso;
}

uint64_t nm_spi_bus_sclk(const nm_spi_bus *b)
{
    return b->sclk_hz;
}

void nm_spi_bus_set_sclk(nm_spi_bus *b, uint64_t sclk_hz)
{
    if (!sclk_hz) return;
    b->sclk_hz = sclk_hz;
    for (unsigned i = 0; i < b->chip_selects; i++)
        check_speed(b, &b->slot[i]);
}

void nm_spi_bus_stats(const nm_spi_bus *b, nm_spi_stats *out)
{
    *out = b->st;
}

/* ---- the device class ---- */

static void *bus_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    (void)cfg;
    (void)err;
    nm_spi_bus *b = g_new0(nm_spi_bus, 1);
    b->m = m;
    return b;
}

static void bus_destroy(void *opaque)
{
    nm_spi_bus *b = opaque;
    for (unsigned i = 0; i < NM_SPI_MAX_CS; i++)
        g_free(b->slot[i].name);
    g_free(b->name);
    g_free(b);
}

static void bus_reset(void *opaque)
{
    nm_spi_bus *b = opaque;
    /* RST# releases every chip select (the controller's reset does too). */
    nm_spi_bus_set_cs(b, 0);
}

static void bus_report(void *opaque, nm_report *r)
{
    nm_spi_bus *b = opaque;
    nm_report_u64(r, "sclk_hz", b->sclk_hz);
    nm_report_u64(r, "byte_ns", nm_spi_bytes_ns(b->sclk_hz, 1));
    nm_report_u64(r, "bytes", b->st.bytes);
    nm_report_u64(r, "bytes_unselected", b->st.bytes_unselected);
    nm_report_u64(r, "selects", b->st.selects);
    nm_report_u64(r, "contentions", b->st.contentions);
}

static void bus_snapshot(void *opaque, nm_snap *s)
{
    nm_spi_bus *b = opaque;
    nm_snap_u32(s, "cs", &b->cs);
    nm_snap_u64(s, "st.bytes", &b->st.bytes);
    nm_snap_u64(s, "st.bytes_unselected", &b->st.bytes_unselected);
    nm_snap_u64(s, "st.selects", &b->st.selects);
    nm_snap_u64(s, "st.contentions", &b->st.contentions);
}

const nm_device_class nm_spi_bus_class = {
    .name = "spi-bus",
    .help = "an SPI bus (created by its controller)",
    .keys = (const char *const[]){NULL},
    .create = bus_create,
    .reset = bus_reset,
    .destroy = bus_destroy,
    .report = bus_report,
    .snapshot = bus_snapshot,
    .snapshot_version = 1,
};
