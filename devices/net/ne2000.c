/* Novell NE2000 (ISA, 16-bit): a DP8390 whose buffer memory the host reaches
 * only through the remote DMA data port.
 *
 *   base+0x00..0x0F  the 8390's registers        (8-bit ISA cycles)
 *   base+0x10..0x17  remote DMA data port        (16-bit: IOCS16#)
 *   base+0x18..0x1F  reset port: a read resets   (8-bit)
 *
 * NIC local memory: 0x0000..0x001F station address PROM (mirrored up to
 * 0x3FFF), 0x4000..0x7FFF 16 KB of buffer RAM (pages 0x40..0x7F); A15 is
 * not decoded, so 0x8000..0xFFFF mirrors 0x0000..0x7FFF.  The PROM holds 16
 * bytes (MAC, zeros, 0x57 0x57 at 14/15) with each byte on both byte lanes,
 * which is why Linux's ne.c probe reads 32 equal pairs and 'WW' at 28..31.
 * docs/ne2000.md. */
#include <glib.h>
#include <string.h>

#include "devices/bus/isa.h"
#include "devices/net/dp8390.h"
#include "emu/core/device.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define NE_RAM_BASE 0x4000u
#define NE_RAM_SIZE 0x4000u

typedef struct ne2000 {
    nm_machine *m;
    char *name;
    nm_dp8390 *nic;
    nm_isa_io *io_regs, *io_data, *io_reset;
    unsigned irq;
    uint16_t base;
    uint8_t mac[6];
    uint8_t prom[32];
    uint8_t ram[NE_RAM_SIZE];
    uint64_t resets;
} ne2000;

static uint8_t ne_mem_read(void *opaque, uint16_t addr)
{
    ne2000 *s = opaque;
    addr &= 0x7fff;
    if (addr < NE_RAM_BASE) return s->prom[addr & 0x1f];
    return s->ram[addr - NE_RAM_BASE];
}

static void ne_mem_write(void *opaque, uint16_t addr, uint8_t value)
{
    ne2000 *s = opaque;
    addr &= 0x7fff;
    if (addr < NE_RAM_BASE) {
        nm_debug(NE2000, "%s: remote write 0x%02x to PROM address 0x%04x ignored", s->name, value,
                 addr);
        return;
    }
    s->ram[addr - NE_RAM_BASE] = value;
}

static void ne_irq(void *opaque, bool level)
{
    ne2000 *s = opaque;
    nm_irq_set(&s->m->irq, s->irq, level);
}

/* 8390 registers: an 8-bit card part, the ISA layer hands us bytes. */
static uint32_t ne_reg_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    ne2000 *s = opaque;
    return nm_dp8390_read(s->nic, offset);
}

static void ne_reg_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    ne2000 *s = opaque;
    nm_dp8390_write(s->nic, offset, (uint8_t)value);
}

static uint32_t ne_data_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    ne2000 *s = opaque;
    return nm_dp8390_dma_read(s->nic, size);
}

static void ne_data_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    ne2000 *s = opaque;
    nm_dp8390_dma_write(s->nic, value, size);
}

static void ne_board_reset(ne2000 *s)
{
    s->resets++;
    nm_dp8390_reset(s->nic);
}

static uint32_t ne_reset_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    ne2000 *s = opaque;
    /* A read of the reset port pulses the 8390's RESET: ISR.RST reads 1. */
    nm_debug(NE2000, "%s: board reset", s->name);
    ne_board_reset(s);
    return 0;
}

static void ne_reset_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)opaque;
    (void)offset;
    (void)value;
    (void)size;
    /* Drivers write back what they read; the pulse already happened. */
}

static const nm_io_ops ne_reg_ops = {ne_reg_read, ne_reg_write, NULL};
static const nm_io_ops ne_data_ops = {ne_data_read, ne_data_write, NULL};
static const nm_io_ops ne_reset_ops = {ne_reset_read, ne_reset_write, NULL};

static void ne_destroy(void *opaque);

static void *ne_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t io = 0x300, irq = 9;
    if (cfg && (!nm_devcfg_u32(cfg, "io", 0x300, 0x100, 0x3e0, &io, err) ||
                !nm_devcfg_u32(cfg, "irq", 9, 2, 15, &irq, err)))
        return NULL;
    if (io & 0x1f) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: 0x%x is not a multiple of 0x20 (the card decodes 32 ports)",
                    cfg ? cfg->origin : "ne2000", io);
        return NULL;
    }
    if (irq == 2) irq = 9; /* IRQ 2 on the 8-bit bus is IRQ 9 on the AT */
    const uint8_t defmac[6] = {0x52, 0x54, 0x00, 0x4e, (uint8_t)(io >> 8), (uint8_t)io};
    g_autofree char *who = g_strdup_printf("ne2000@0x%x", io);
    if (!nm_irq_claim(&m->irq, irq, cfg ? cfg->origin : "ne2000", who, err)) return NULL;
    ne2000 *s = g_new0(ne2000, 1);
    s->m = m;
    s->base = (uint16_t)io;
    s->irq = irq;
    s->name = g_strdup_printf("ne2000@0x%x", io);
    if (cfg && !nm_devcfg_mac(cfg, "mac", defmac, s->mac, err)) goto fail;
    if (!cfg) memcpy(s->mac, defmac, 6);
    /* PROM: MAC, 8 zero bytes, 'W' 'W'; each byte on both lanes. */
    uint8_t rom16[16] = {0};
    memcpy(rom16, s->mac, 6);
    rom16[14] = rom16[15] = 0x57;
    for (int i = 0; i < 16; i++)
        s->prom[2 * i] = s->prom[2 * i + 1] = rom16[i];

    nm_dp8390_board board = {s, ne_mem_read, ne_mem_write, ne_irq};
    /* The endpoint (and the netdev instances named after it) use the
     * configuration's name, so the report sections line up. */
    s->nic = nm_dp8390_new(m, cfg && cfg->name ? cfg->name : s->name, &board);

    s->io_regs = nm_isa_claim_io(m, s->base, 0x10, &ne_reg_ops, s, s->name, 8, err);
    if (!s->io_regs) goto fail;
    s->io_data = nm_isa_claim_io(m, s->base + 0x10, 8, &ne_data_ops, s, "ne2000-data", 16, err);
    if (!s->io_data) goto fail;
    s->io_reset = nm_isa_claim_io(m, s->base + 0x18, 8, &ne_reset_ops, s, "ne2000-reset", 8, err);
    if (!s->io_reset) goto fail;

    const char *net = cfg ? nm_devcfg_get(cfg, "net") : NULL;
    const char *capture = cfg ? nm_devcfg_get(cfg, "capture") : NULL;
    if (net && !nm_dp8390_attach(s->nic, net, capture, cfg->origin, err)) goto fail;
    if (!net && capture)
        nm_dev_warn(NE2000, s,
                    "%s: capture= without net=: the cable is unplugged, nothing to capture",
                    s->name);
    return s;
fail:
    ne_destroy(s);
    return NULL;
}

static void ne_destroy(void *opaque)
{
    ne2000 *s = opaque;
    nm_isa_release_io(s->io_regs);
    nm_isa_release_io(s->io_data);
    nm_isa_release_io(s->io_reset);
    nm_dp8390_free(s->nic);
    g_free(s->name);
    g_free(s);
}

static void ne_reset(void *opaque)
{
    ne_board_reset(opaque);
}

static void ne_report(void *opaque, nm_report *r)
{
    ne2000 *s = opaque;
    nm_dp8390_report(s->nic, r);
    nm_isa_stats st = {0};
    nm_isa_io_stats(s->io_regs, &st);
    nm_isa_io_stats(s->io_data, &st);
    nm_isa_io_stats(s->io_reset, &st);
    nm_report_u64(r, "isa_io_cycles", st.io_cycles);
    nm_report_u64(r, "isa_wait_clocks", st.wait_clocks);
    nm_report_u64(r, "board_resets", s->resets);
}

/* For tests: the 8390 inside. */
nm_dp8390 *nm_ne2000_nic(void *dev)
{
    return ((ne2000 *)dev)->nic;
}

static void ne_frames(const void *opaque, uint64_t *tx, uint64_t *rx)
{
    const nm_dp8390_stats *st = nm_dp8390_get_stats(((const ne2000 *)opaque)->nic);
    *tx = st->tx_frames;
    *rx = st->rx_frames;
}

static void ne2000_snapshot(void *opaque, nm_snap *s)
{
    ne2000 *n = opaque;
    nm_snap_bytes(s, "prom", n->prom, sizeof n->prom);
    nm_snap_bytes(s, "ram", n->ram, sizeof n->ram);
    nm_snap_u64(s, "resets", &n->resets);
    nm_dp8390_snapshot(n->nic, s);
}

static const char *const ne_keys[] = {"io", "irq", "mac", "net", "capture", NULL};

const nm_device_class nm_ne2000_class = {
    .name = "ne2000",
    .help = "Novell NE2000 ISA NIC (DP8390, 16 KB): io=0x300, irq=9, mac=, net=, capture=FILE",
    .keys = ne_keys,
    .create = ne_create,
    .reset = ne_reset,
    .destroy = ne_destroy,
    .report = ne_report,
    .frames = ne_frames,
    .snapshot = ne2000_snapshot,
    .snapshot_version = 1,
};
