/* Western Digital / SMC WD8013EP (ISA, 16-bit, 83C584 interface chip): a
 * DP8390 whose 16 KB buffer RAM is shared memory in ISA memory space.
 *
 *   base+0x00 MSR   memory select: RST (0x80), MENB (0x40), SA18..SA13
 *   base+0x01 ICR   interface configuration: 16BIT (0x01, read-only 1 in a
 *                   16-bit slot), IR2 (0x04)
 *   base+0x02 IAR, base+0x03 EAR (stored)
 *   base+0x04 IRR   interrupt request: IEN (0x80), IR1/IR0 (0x40/0x20), 0WS
 *   base+0x05 LAAR  MEM16EN (0x80), LAN16EN (0x40), 0WS16 (0x20), LA23..LA19
 *   base+0x08..0x0D station address, 0x0E board id (0x27 WD8013EP: soft
 *                   configuration), 0x0F checksum (bytes 8..15 sum to 0xFF)
 *   base+0x10..0x1F the 8390
 * Register names and bits: the BSD if_edreg.h "WD80x3 series ASIC" section;
 * how Linux's wd.c probe reads them: docs/wd8013.md. */
#include <glib.h>
#include <string.h>

#include "devices/bus/isa.h"
#include "devices/net/dp8390.h"
#include "emu/core/device.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define WD_RAM_SIZE 0x4000u
#define WD_BOARD_ID 0x27 /* WD8013EP: soft config (0x20) | type 7 */

enum {
    MSR_RST = 0x80,
    MSR_MENB = 0x40,
    MSR_ADDR = 0x3f,
    ICR_16BIT = 0x01,
    ICR_IR2 = 0x04,
    ICR_STORED = 0x0e,
    IRR_IEN = 0x80,
    IRR_IR = 0x60,
    IRR_0WS = 0x01,
    LAAR_M16EN = 0x80,
    LAAR_L16EN = 0x40,
    LAAR_0WS16 = 0x20,
    LAAR_ADDR = 0x1f,
};

/* IR2 IR1 IR0 -> IRQ (if_edreg.h; Linux wd.c's irqmap). */
static const uint8_t irq_map[8] = {9, 3, 5, 7, 10, 11, 15, 4};

typedef struct wd8013 {
    nm_machine *m;
    char *name;
    nm_dp8390 *nic;
    nm_isa_io *io_asic, *io_nic;
    nm_isa_mem *window;
    uint16_t base;
    uint32_t mem_cfg; /* configured shared-memory base */
    uint8_t msr, icr, iar, ear, irr, laar;
    uint8_t rom[8]; /* station address, board id, checksum */
    unsigned irq_line;
    bool nic_irq;
    uint8_t ram[WD_RAM_SIZE];
    uint64_t resets;
} wd8013;

static unsigned wd_irq_from_regs(const wd8013 *s)
{
    unsigned code = ((s->irr & IRR_IR) >> 5) | ((s->icr & ICR_IR2) ? 4 : 0);
    return irq_map[code];
}

static void wd_update_irq(wd8013 *s)
{
    /* Software-configured IRQ: the line follows ICR.IR2 / IRR.IR1..0. */
    unsigned line = wd_irq_from_regs(s);
    bool level = s->nic_irq && (s->irr & IRR_IEN);
    if (line != s->irq_line) {
        nm_irq_set(&s->m->irq, s->irq_line, false);
        s->irq_line = line;
    }
    nm_irq_set(&s->m->irq, s->irq_line, level);
}

static void wd_nic_irq(void *opaque, bool level)
{
    wd8013 *s = opaque;
    s->nic_irq = level;
    wd_update_irq(s);
}

/* The 8390's local bus sees the 16 KB RAM mirrored in its 64 K space. */
static uint8_t wd_local_read(void *opaque, uint16_t addr)
{
    wd8013 *s = opaque;
    return s->ram[addr & (WD_RAM_SIZE - 1)];
}

static void wd_local_write(void *opaque, uint16_t addr, uint8_t value)
{
    wd8013 *s = opaque;
    s->ram[addr & (WD_RAM_SIZE - 1)] = value;
}

/* The shared-memory window, as the ISA bus hands it to us (size 1, or 2 when
 * MEM16EN makes it a 16-bit window). */
static uint32_t wd_window_read(void *opaque, uint32_t offset, unsigned size)
{
    wd8013 *s = opaque;
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint32_t)s->ram[(offset + i) & (WD_RAM_SIZE - 1)] << (8 * i);
    return v;
}

static void wd_window_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    wd8013 *s = opaque;
    for (unsigned i = 0; i < size; i++)
        s->ram[(offset + i) & (WD_RAM_SIZE - 1)] = (uint8_t)(value >> (8 * i));
}

static const nm_mmio_ops wd_window_ops = {wd_window_read, wd_window_write};

static void wd_update_window(wd8013 *s)
{
    uint32_t base = (uint32_t)(s->msr & MSR_ADDR) << 13 | (uint32_t)(s->laar & LAAR_ADDR) << 19;
    if (base != nm_isa_mem_base(s->window)) {
        if (base < 0xa0000 && (s->msr & MSR_MENB))
            nm_dev_warn(WD8013, s, "%s: shared memory moved to 0x%05x, over conventional memory",
                        s->name, base);
        nm_isa_mem_move(s->window, base);
    }
    if (base < 0xa0000 && (s->msr & MSR_MENB) && !nm_isa_mem_enabled(s->window))
        nm_dev_warn(WD8013, s, "%s: shared memory enabled at 0x%05x, over conventional memory",
                    s->name, base);
    bool wide = s->laar & LAAR_M16EN;
    nm_isa_mem_set_timing(s->window, wide ? 16 : 8,
                          wide ? (s->laar & LAAR_0WS16) != 0 : (s->irr & IRR_0WS) != 0);
    nm_isa_mem_set_enabled(s->window, (s->msr & MSR_MENB) != 0);
}

static void wd_board_reset(wd8013 *s)
{
    /* Power-up / RST: the 83C584 recalls its configuration from the EEPROM
     * (our configuration keys); memory disabled, 8-bit, interrupts off. */
    s->resets++;
    s->msr = (uint8_t)((s->mem_cfg >> 13) & MSR_ADDR);
    s->laar = (uint8_t)((s->mem_cfg >> 19) & LAAR_ADDR);
    s->iar = s->ear = 0;
    unsigned code = 0;
    for (unsigned i = 0; i < 8; i++)
        if (irq_map[i] == s->irq_line) code = i;
    s->icr = (uint8_t)((code & 4) ? ICR_IR2 : 0);
    s->irr = (uint8_t)((code & 3) << 5);
    nm_dp8390_reset(s->nic);
    wd_update_window(s);
    wd_update_irq(s);
}

static uint32_t wd_asic_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    wd8013 *s = opaque;
    switch (offset) {
    case 0: return s->msr;
    case 1: return s->icr | ICR_16BIT;
    case 2: return s->iar;
    case 3: return s->ear;
    case 4: return s->irr;
    case 5: return s->laar;
    case 6:
    case 7: return 0x00;
    default: return s->rom[offset - 8];
    }
}

static void wd_asic_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    wd8013 *s = opaque;
    uint8_t v = (uint8_t)value;
    switch (offset) {
    case 0:
        if (v & MSR_RST) {
            nm_debug(WD8013, "%s: board reset", s->name);
            s->resets++;
            nm_dp8390_reset(s->nic);
        }
        s->msr = v & (MSR_RST | MSR_MENB | MSR_ADDR);
        wd_update_window(s);
        break;
    case 1:
        /* 16BIT is read-only; RLA/RX7/RIO/STO (EEPROM recall/store) finish
         * at once and read back 0. */
        if (v & 0xf0) nm_debug(WD8013, "%s: EEPROM command 0x%02x ignored", s->name, v & 0xf0);
        s->icr = v & ICR_STORED;
        wd_update_irq(s);
        break;
    case 2: s->iar = v; break;
    case 3: s->ear = v; break;
    case 4:
        s->irr = v;
        wd_update_window(s); /* 0WS */
        wd_update_irq(s);
        break;
    case 5:
        s->laar = v;
        wd_update_window(s);
        break;
    default:
        nm_debug(WD8013, "%s: write 0x%02x to read-only register 0x%x ignored", s->name, v, offset);
    }
}

static uint32_t wd_nic_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    wd8013 *s = opaque;
    return nm_dp8390_read(s->nic, offset);
}

static void wd_nic_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    wd8013 *s = opaque;
    nm_dp8390_write(s->nic, offset, (uint8_t)value);
}

static const nm_io_ops wd_asic_ops = {wd_asic_read, wd_asic_write, NULL};
static const nm_io_ops wd_nic_ops = {wd_nic_read, wd_nic_write, NULL};

static void wd_destroy(void *opaque);

static void *wd_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t io = 0x280, irq = 10, mem = 0xd0000;
    const char *origin = cfg ? cfg->origin : "wd8013";
    if (cfg && (!nm_devcfg_u32(cfg, "io", 0x280, 0x200, 0x3e0, &io, err) ||
                !nm_devcfg_u32(cfg, "irq", 10, 2, 15, &irq, err) ||
                !nm_devcfg_u32(cfg, "mem", 0xd0000, 0x80000, 0xfc000, &mem, err)))
        return NULL;
    if (io & 0x1f) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: 0x%x is not a multiple of 0x20 (the card decodes 32 ports)", origin,
                    io);
        return NULL;
    }
    if (mem & 0x3fff) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: mem: 0x%x is not on a 16 KB boundary", origin, mem);
        return NULL;
    }
    if (irq == 2) irq = 9;
    bool irq_ok = false;
    for (int i = 0; i < 8; i++)
        irq_ok |= irq_map[i] == irq;
    if (!irq_ok) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: irq: bad value '%u' (accepted: 2/9, 3, 4, 5, 7, 10, 11, 15)", origin, irq);
        return NULL;
    }
    const uint8_t defmac[6] = {0x00, 0x00, 0xc0, 0x57, (uint8_t)(io >> 8), (uint8_t)io};
    g_autofree char *who = g_strdup_printf("wd8013@0x%x", io);
    if (!nm_irq_claim(&m->irq, irq, origin, who, err)) return NULL;
    wd8013 *s = g_new0(wd8013, 1);
    s->m = m;
    s->base = (uint16_t)io;
    s->irq_line = irq;
    s->mem_cfg = mem;
    s->name = g_strdup_printf("wd8013@0x%x", io);
    uint8_t mac[6];
    if (cfg && !nm_devcfg_mac(cfg, "mac", defmac, mac, err)) goto fail;
    if (!cfg) memcpy(mac, defmac, 6);
    memcpy(s->rom, mac, 6);
    s->rom[6] = WD_BOARD_ID;
    unsigned sum = 0;
    for (int i = 0; i < 7; i++)
        sum += s->rom[i];
    s->rom[7] = (uint8_t)(0xff - (sum & 0xff)); /* bytes 8..15 sum to 0xFF */

    nm_dp8390_board board = {s, wd_local_read, wd_local_write, wd_nic_irq};
    /* The endpoint (and the netdev instances named after it) use the
     * configuration's name, so the report sections line up. */
    s->nic = nm_dp8390_new(m, cfg && cfg->name ? cfg->name : s->name, &board);
    s->io_asic = nm_isa_claim_io(m, s->base, 0x10, &wd_asic_ops, s, s->name, 8, err);
    if (!s->io_asic) goto fail;
    s->io_nic = nm_isa_claim_io(m, s->base + 0x10, 0x10, &wd_nic_ops, s, "wd8013-8390", 8, err);
    if (!s->io_nic) goto fail;
    s->window = nm_isa_map_memory(m, mem, WD_RAM_SIZE, &wd_window_ops, s, "wd8013-shmem", 8, err);
    if (!s->window) {
        g_prefix_error(err, "%s: mem: ", origin);
        goto fail;
    }
    wd_board_reset(s);
    s->resets = 0;

    const char *net = cfg ? nm_devcfg_get(cfg, "net") : NULL;
    const char *capture = cfg ? nm_devcfg_get(cfg, "capture") : NULL;
    if (net && !nm_dp8390_attach(s->nic, net, capture, origin, err)) goto fail;
    if (!net && capture)
        nm_dev_warn(WD8013, s,
                    "%s: capture= without net=: the cable is unplugged, nothing to capture",
                    s->name);
    return s;
fail:
    wd_destroy(s);
    return NULL;
}

static void wd_destroy(void *opaque)
{
    wd8013 *s = opaque;
    if (s->nic) nm_irq_set(&s->m->irq, s->irq_line, false);
    nm_isa_unmap_memory(s->window);
    nm_isa_release_io(s->io_asic);
    nm_isa_release_io(s->io_nic);
    nm_dp8390_free(s->nic);
    g_free(s->name);
    g_free(s);
}

static void wd_reset(void *opaque)
{
    wd_board_reset(opaque);
}

static void wd_report(void *opaque, nm_report *r)
{
    wd8013 *s = opaque;
    nm_dp8390_report(s->nic, r);
    nm_isa_stats st = {0};
    nm_isa_io_stats(s->io_asic, &st);
    nm_isa_io_stats(s->io_nic, &st);
    nm_isa_mem_stats(s->window, &st);
    nm_report_u64(r, "isa_io_cycles", st.io_cycles);
    nm_report_u64(r, "isa_mem_cycles", st.mem_cycles);
    nm_report_u64(r, "isa_wait_clocks", st.wait_clocks);
    nm_report_u64(r, "board_resets", s->resets);
}

nm_dp8390 *nm_wd8013_nic(void *dev)
{
    return ((wd8013 *)dev)->nic;
}

static void wd_frames(const void *opaque, uint64_t *tx, uint64_t *rx)
{
    const nm_dp8390_stats *st = nm_dp8390_get_stats(((const wd8013 *)opaque)->nic);
    *tx = st->tx_frames;
    *rx = st->rx_frames;
}

static void wd8013_snapshot(void *opaque, nm_snap *s)
{
    wd8013 *w = opaque;
    nm_snap_u8(s, "msr", &w->msr);
    nm_snap_u8(s, "icr", &w->icr);
    nm_snap_u8(s, "iar", &w->iar);
    nm_snap_u8(s, "ear", &w->ear);
    nm_snap_u8(s, "irr", &w->irr);
    nm_snap_u8(s, "laar", &w->laar);
    nm_snap_bytes(s, "rom", w->rom, sizeof w->rom);
    nm_snap_bool(s, "nic_irq", &w->nic_irq);
    nm_snap_bytes(s, "ram", w->ram, sizeof w->ram);
    nm_snap_u64(s, "resets", &w->resets);
    nm_dp8390_snapshot(w->nic, s);
    /* The shared memory where the registers put it. */
    if (!nm_snap_saving(s) && !nm_snap_failed(s)) wd_update_window(w);
}

static const char *const wd_keys[] = {"io", "irq", "mem", "mac", "net", "capture", NULL};

const nm_device_class nm_wd8013_class = {
    .name = "wd8013",
    .help = "WD8013EP ISA NIC (DP8390, 16 KB shared memory): io=0x280, irq=10, mem=0xd0000, "
            "mac=, net=, capture=FILE",
    .keys = wd_keys,
    .create = wd_create,
    .reset = wd_reset,
    .destroy = wd_destroy,
    .report = wd_report,
    .frames = wd_frames,
    .snapshot = wd8013_snapshot,
    .snapshot_version = 1,
};
