/* PCI host bridge and bus 0: configuration mechanism #1, BAR placement,
 * INTx routing and bus-master DMA.  See pci.h for the device interface.
 *
 * The host bridge at 00:00.0 identifies as an Intel 82441FX PMC (440FX,
 * 8086:1237 rev 02, class 06/00/00): Linux knows it and has nothing to
 * quirk on it beyond a harmless flag.  Only its identity is modelled - not
 * its DRAM, PAM or SMRAM registers, which read as 0 and ignore writes.
 * Linux's pci_sanity_check() (arch/x86/pci/direct.c) accepts conf1 when a
 * function on bus 0 has class "host bridge" or vendor Intel; this one has
 * both. */
#include "devices/bus/pci.h"

#include <string.h>

#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define CONF_ADDR_PORT 0xcf8
#define CONF_ENABLE    0x80000000u
/* CONFIG_ADDRESS: bits 30:24 reserved and bits 1:0 read as 0 (3.7.4.1). */
#define CONF_ADDR_MASK 0x80fffffcu
/* Memory BARs may not land in the top 128 KB: the boot ROM alias. */
#define HIGH_ROM_BASE 0xfffe0000u

struct nm_pci_host {
    nm_machine *m;
    nm_io_claim *claim;
    uint32_t config_address;
    uint8_t reset_control; /* port 0xCF9, the PIIX-style Reset Control Register */
    nm_pci_device *dev[256];
    nm_pci_device bridge;
    uint8_t pirq_irq[4];
    unsigned pirq_asserted[4]; /* how many functions drive each PIRQ high */
    uint64_t config_reads, config_writes;
};

/* ---- configuration space ---- */

static uint32_t get_le(const uint8_t *p, unsigned size)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static void put_le(uint8_t *p, uint32_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_mask(uint8_t *mask, unsigned offset, uint32_t v, unsigned size)
{
    put_le(mask + offset, v, size);
}

uint32_t nm_pci_bar_address(const nm_pci_device *d, unsigned n)
{
    if (n >= NM_PCI_BARS) return 0;
    uint32_t v = get_le(d->config + NM_PCI_BAR0 + 4 * n, 4);
    return d->bar[n].type == NM_PCI_BAR_IO ? v & 0xfffcu : v & 0xfffffff0u;
}

static bool mem_bar_placement_ok(const nm_pci_host *h, uint32_t base, uint32_t size)
{
    uint64_t end = (uint64_t)base + size;
    /* The host bridge forwards to PCI only what is not RAM (the 440FX
     * decodes DRAM below its top-of-memory first), and the ROM alias
     * below 4 GB belongs to the ISA side.  A BAR there is not decoded, which
     * also keeps the CPU's cached RAM page pointers valid. */
    return base >= h->m->ram->size && end <= HIGH_ROM_BASE;
}

static void bar_unmap(nm_pci_host *h, nm_pci_bar *b)
{
    if (!b->mapped) return;
    if (b->type == NM_PCI_BAR_MEM32) {
        nm_mem_region_set_enabled(h->m->mem, b->region, false);
    } else {
        nm_ioport_release(h->m->io, b->claim);
        b->claim = NULL;
    }
    b->mapped = false;
    nm_debug(PCI, "%s unmapped", b->name);
}

/* Map or unmap every BAR after a write to the command register or a BAR:
 * a BAR decodes when its space is enabled in Command and it holds a
 * non-zero address (0 = unassigned: nothing without a BIOS sets it). */
static void update_mappings(nm_pci_device *d)
{
    nm_pci_host *h = d->host;
    if (!h) return;
    uint16_t cmd = nm_pci_command(d);
    for (unsigned n = 0; n < NM_PCI_BARS; n++) {
        nm_pci_bar *b = &d->bar[n];
        if (b->type == NM_PCI_BAR_NONE) continue;
        uint32_t base = nm_pci_bar_address(d, n);
        bool is_mem = b->type == NM_PCI_BAR_MEM32;
        bool want = base != 0 && (cmd & (is_mem ? NM_PCI_CMD_MEM : NM_PCI_CMD_IO));
        if (want && is_mem && !mem_bar_placement_ok(h, base, b->size)) {
            nm_dev_warn(PCI, b, "%s at 0x%08x (+0x%x) overlaps RAM or the boot ROM: not decoded",
                        b->name, base, b->size);
            want = false;
        }
        if (b->mapped && (!want || b->mapped_base != base)) bar_unmap(h, b);
        if (!want || b->mapped) continue;
        if (is_mem) {
            nm_mem_region_move(h->m->mem, b->region, base);
            nm_mem_region_set_enabled(h->m->mem, b->region, true);
        } else {
            b->claim = nm_ioport_claim(h->m->io, (uint16_t)base, b->size, b->io_ops, b->opaque,
                                       b->name, b->cost);
            if (!b->claim) {
                const nm_io_claim *o = NULL;
                for (uint32_t p = base; p < base + b->size && !o; p++)
                    o = nm_ioport_owner(h->m->io, (uint16_t)p);
                nm_dev_warn(PCI, b, "%s at port 0x%04x collides with %s: not decoded", b->name,
                            base, o ? o->name : "?");
                continue;
            }
        }
        b->mapped = true;
        b->mapped_base = base;
        nm_debug(PCI, "%s mapped at 0x%08x (+0x%x)", b->name, base, b->size);
    }
}

uint32_t nm_pci_config_read(nm_pci_device *d, uint8_t offset, unsigned size)
{
    if (size != 1 && size != 2 && size != 4) return 0xffffffffu;
    if ((unsigned)offset + size > 256) size = 256u - offset; /* never past the array */
    return get_le(d->config + offset, size);
}

void nm_pci_config_write(nm_pci_device *d, uint8_t offset, uint32_t value, unsigned size)
{
    if (size != 1 && size != 2 && size != 4) return;
    if ((unsigned)offset + size > 256) size = 256u - offset;
    for (unsigned i = 0; i < size; i++) {
        unsigned r = offset + i;
        uint8_t v = (uint8_t)(value >> (8 * i));
        uint8_t nv = (uint8_t)((d->config[r] & ~d->wmask[r]) | (v & d->wmask[r]));
        nv &= (uint8_t) ~(v & d->w1cmask[r]);
        d->config[r] = nv;
    }
    /* Command (0x04) or a BAR (0x10-0x27) touched: re-decode. */
    unsigned last = offset + size - 1u;
    if ((offset <= NM_PCI_COMMAND + 1 && last >= NM_PCI_COMMAND) ||
        (offset < NM_PCI_BAR0 + 4 * NM_PCI_BARS && last >= NM_PCI_BAR0))
        update_mappings(d);
    if (d->config_write) d->config_write(d->opaque, d, offset, size, value);
}

/* ---- the device side ---- */

void nm_pci_device_init(nm_pci_device *d, const char *name, uint16_t vendor, uint16_t device,
                        uint8_t revision, uint32_t class_code, uint8_t int_pin)
{
    memset(d, 0, sizeof *d);
    d->name = name;
    d->devfn = -1;
    put_le(d->config + NM_PCI_VENDOR_ID, vendor, 2);
    put_le(d->config + NM_PCI_DEVICE_ID, device, 2);
    d->config[NM_PCI_REVISION] = revision;
    put_le(d->config + NM_PCI_CLASS_PROG, class_code & 0xffffffu, 3);
    put_le(d->config + NM_PCI_STATUS, NM_PCI_STATUS_DEVSEL_MEDIUM, 2);
    d->config[NM_PCI_INT_PIN] = int_pin <= 4 ? int_pin : 0;
    put_mask(d->wmask, NM_PCI_COMMAND,
             NM_PCI_CMD_IO | NM_PCI_CMD_MEM | NM_PCI_CMD_MASTER | NM_PCI_CMD_PARITY |
                 NM_PCI_CMD_SERR,
             2);
    /* Status bit 8 and 11-15 are "write 1 to clear" (6.2.3). */
    put_mask(d->w1cmask, NM_PCI_STATUS, 0xf900, 2);
    d->wmask[NM_PCI_CACHE_LINE] = 0xff;
    d->wmask[NM_PCI_LATENCY] = 0xff;
    d->wmask[NM_PCI_INT_LINE] = 0xff; /* scratch for software (6.2.4) */
}

static bool bar_check(nm_pci_device *d, unsigned n, uint32_t size, uint32_t min, uint32_t max,
                      GError **err)
{
    if (n >= NM_PCI_BARS || d->bar[n].type != NM_PCI_BAR_NONE || d->devfn >= 0 || size < min ||
        size > max || (size & (size - 1))) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: PCI BAR %u of 0x%x bytes is not possible", d->name, n, size);
        return false;
    }
    return true;
}

bool nm_pci_device_set_bar_mem(nm_pci_device *d, unsigned n, uint32_t size, bool prefetchable,
                               const nm_mmio_ops *ops, void *opaque, nm_bus_cost *cost,
                               GError **err)
{
    if (!bar_check(d, n, size, 16, 0x80000000u, err)) return false;
    nm_pci_bar *b = &d->bar[n];
    b->type = NM_PCI_BAR_MEM32;
    b->size = size;
    b->prefetchable = prefetchable;
    b->mmio_ops = ops;
    b->opaque = opaque;
    b->cost = cost;
    /* Bit 0 = 0 memory, bits 2:1 = 00 anywhere in 32 bits, bit 3 prefetch;
     * the address bits below the size read as 0 (6.2.5.1). */
    put_le(d->config + NM_PCI_BAR0 + 4 * n, prefetchable ? 0x8 : 0, 4);
    put_mask(d->wmask, NM_PCI_BAR0 + 4 * n, ~(size - 1) & 0xfffffff0u, 4);
    return true;
}

bool nm_pci_device_set_bar_io(nm_pci_device *d, unsigned n, uint32_t size, const nm_io_ops *ops,
                              void *opaque, nm_bus_cost *cost, GError **err)
{
    if (!bar_check(d, n, size, 4, 256, err)) return false;
    nm_pci_bar *b = &d->bar[n];
    b->type = NM_PCI_BAR_IO;
    b->size = size;
    b->io_ops = ops;
    b->opaque = opaque;
    b->cost = cost;
    /* Bit 0 = 1 I/O.  x86 has 16-bit ports: bits 31:16 are hardwired 0, which
     * Linux accepts (it masks I/O BARs with IO_SPACE_LIMIT). */
    put_le(d->config + NM_PCI_BAR0 + 4 * n, 0x1, 4);
    put_mask(d->wmask, NM_PCI_BAR0 + 4 * n, ~(size - 1) & 0xfffcu, 4);
    return true;
}

/* Back to the power-on state (RST#): the configuration as registered,
 * Interrupt Line holding the routed PIC input, nothing decoded. */
static void device_reset(nm_pci_device *d)
{
    nm_pci_host *h = d->host;
    for (unsigned n = 0; n < NM_PCI_BARS; n++)
        bar_unmap(h, &d->bar[n]);
    memcpy(d->config, d->reset_config, sizeof d->config);
    unsigned slot = (unsigned)d->devfn >> 3;
    d->config[NM_PCI_INT_LINE] = (uint8_t)nm_pci_route_irq(h, slot, d->config[NM_PCI_INT_PIN]);
}

bool nm_pci_register(nm_pci_host *h, nm_pci_device *d, int devfn, GError **err)
{
    if (!h) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE, "%s: this machine has no PCI bus",
                    d->name);
        return false;
    }
    if (devfn < 0) {
        for (unsigned slot = 1; slot < 32 && devfn < 0; slot++)
            if (!h->dev[NM_PCI_DEVFN(slot, 0)]) devfn = NM_PCI_DEVFN(slot, 0);
        if (devfn < 0) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "%s: no free PCI slot (all 31 are taken)", d->name);
            return false;
        }
    }
    if (devfn > 255 || h->dev[devfn]) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE, "%s: PCI address 00:%02x.%x is %s",
                    d->name, (devfn >> 3) & 0x1f, devfn & 7,
                    devfn > 255 ? "not on bus 0" : "taken");
        return false;
    }
    nm_pci_device *fn0 = h->dev[devfn & ~7];
    if ((devfn & 7) && !fn0) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: PCI function 00:%02x.%x needs function 0 of its slot first", d->name,
                    devfn >> 3, devfn & 7);
        return false;
    }
    if (fn0) { /* Header Type bit 7: the slot is multi-function (6.2.1). */
        fn0->config[NM_PCI_HEADER_TYPE] |= 0x80;
        fn0->reset_config[NM_PCI_HEADER_TYPE] |= 0x80;
    }
    d->host = h;
    d->devfn = devfn;
    for (unsigned n = 0; n < NM_PCI_BARS; n++) {
        nm_pci_bar *b = &d->bar[n];
        if (b->type == NM_PCI_BAR_NONE) continue;
        b->name = g_strdup_printf("%s.bar%u", d->name, n);
        if (b->type == NM_PCI_BAR_MEM32) {
            b->region =
                nm_memmap_add_mmio(h->m->mem, b->name, 0, b->size, b->mmio_ops, b->opaque, b->cost);
            nm_mem_region_set_enabled(h->m->mem, b->region, false);
        }
    }
    memcpy(d->reset_config, d->config, sizeof d->config);
    h->dev[devfn] = d;
    device_reset(d);
    nm_debug(PCI, "%s at 00:%02x.%x, INT%c -> IRQ %u", d->name, devfn >> 3, devfn & 7,
             d->config[NM_PCI_INT_PIN] ? 'A' + d->config[NM_PCI_INT_PIN] - 1 : '-',
             d->config[NM_PCI_INT_LINE]);
    return true;
}

void nm_pci_unregister(nm_pci_device *d)
{
    nm_pci_host *h = d->host;
    if (!h) return;
    nm_pci_set_irq(d, false);
    for (unsigned n = 0; n < NM_PCI_BARS; n++) {
        nm_pci_bar *b = &d->bar[n];
        bar_unmap(h, b);
        if (b->region) nm_memmap_remove(h->m->mem, b->region);
        b->region = NULL;
        g_free(b->name);
        b->name = NULL;
    }
    h->dev[d->devfn] = NULL;
    d->host = NULL;
    d->devfn = -1;
}

/* ---- interrupts ---- */

unsigned nm_pci_host_pirq_irq(const nm_pci_host *h, unsigned pirq)
{
    return pirq < 4 ? h->pirq_irq[pirq] : 0;
}

uint16_t nm_pci_host_irq_mask(const nm_pci_host *h)
{
    uint16_t mask = 0;
    for (unsigned i = 0; i < 4; i++)
        mask |= (uint16_t)(1u << h->pirq_irq[i]);
    return mask;
}

static unsigned pirq_of(unsigned slot, unsigned pin)
{
    return (slot + pin - 2) & 3;
}

unsigned nm_pci_route_irq(const nm_pci_host *h, unsigned slot, unsigned pin)
{
    if (pin < 1 || pin > 4) return 0;
    return h->pirq_irq[pirq_of(slot, pin)];
}

void nm_pci_set_irq(nm_pci_device *d, bool level)
{
    nm_pci_host *h = d->host;
    unsigned pin = d->config[NM_PCI_INT_PIN];
    if (!h || pin < 1 || pin > 4 || d->irq_level == level) return;
    d->irq_level = level;
    unsigned p = pirq_of((unsigned)d->devfn >> 3, pin);
    if (level)
        h->pirq_asserted[p]++;
    else
        h->pirq_asserted[p]--;
    nm_irq_set(&h->m->irq, h->pirq_irq[p], h->pirq_asserted[p] > 0);
}

/* ---- bus-master DMA ---- */

static bool dma_refuse(nm_pci_device *d, const char *what, uint32_t addr, size_t len,
                       const char *why)
{
    d->dma_refused++;
    /* The cycle found no target: the master sees a master abort (6.2.3). */
    d->config[NM_PCI_STATUS + 1] |= NM_PCI_STATUS_RCV_MASTER_ABORT >> 8;
    nm_dev_warn(PCI, d, "%s: DMA %s of %zu bytes at 0x%08x refused: %s", d->name, what, len, addr,
                why);
    return false;
}

bool nm_pci_dma_read(nm_pci_device *d, uint32_t addr, void *buf, size_t len)
{
    if (!d->host) return false;
    if (!(nm_pci_command(d) & NM_PCI_CMD_MASTER))
        return dma_refuse(d, "read", addr, len, "bus master disabled");
    if (!nm_mem_dma_read(d->host->m->mem, addr, buf, len))
        return dma_refuse(d, "read", addr, len, "not all RAM");
    d->dma_bytes_read += len;
    return true;
}

bool nm_pci_dma_write(nm_pci_device *d, uint32_t addr, const void *buf, size_t len)
{
    if (!d->host) return false;
    if (!(nm_pci_command(d) & NM_PCI_CMD_MASTER))
        return dma_refuse(d, "write", addr, len, "bus master disabled");
    if (!nm_mem_dma_write(d->host->m->mem, addr, buf, len))
        return dma_refuse(d, "write", addr, len, "not all RAM");
    d->dma_bytes_written += len;
    return true;
}

/* ---- configuration mechanism #1 ---- */

nm_pci_device *nm_pci_host_device(nm_pci_host *h, uint8_t devfn)
{
    return h->dev[devfn];
}

/* The function CONFIG_ADDRESS selects, or NULL (disabled, other bus, absent). */
static nm_pci_device *selected(nm_pci_host *h)
{
    uint32_t a = h->config_address;
    if (!(a & CONF_ENABLE) || ((a >> 16) & 0xff) != 0) return NULL;
    return h->dev[(a >> 8) & 0xff];
}

static uint32_t conf_read(nm_pci_host *h, unsigned offset, unsigned size);
static void conf_write(nm_pci_host *h, unsigned offset, uint32_t value, unsigned size);

/* One byte of 0xCF8-0xCFB accessed as a byte or word: not CONFIG_ADDRESS,
 * which only a doubleword access reaches (3.7.4.1).  0xCF9 is the Reset
 * Control Register of the PIIX south bridges: writing bit 2 resets the
 * system (Linux uses it for reboot=pci). */
static uint32_t low_byte_read(nm_pci_host *h, unsigned port)
{
    return port == 0xcf9 ? h->reset_control : 0xff;
}

static void low_byte_write(nm_pci_host *h, unsigned port, uint8_t v)
{
    if (port != 0xcf9) return;
    h->reset_control = v & 0x0a; /* bits 1 (hard reset) and 3 (full reset) stick */
    if (v & 0x04) nm_machine_request_stop(h->m, NM_STOP_RESET, 0, "reset through port 0xCF9");
}

static uint32_t conf_read(nm_pci_host *h, unsigned offset, unsigned size)
{
    if (offset == 0 && size == 4) return h->config_address;
    if (offset >= 4 && offset + size <= 8) {
        nm_pci_device *d = selected(h);
        h->config_reads++;
        if (!d) return 0xffffffffu; /* master abort: all ones (3.7.4.1) */
        return nm_pci_config_read(d, (uint8_t)((h->config_address & 0xfc) + (offset - 4)), size);
    }
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++) {
        unsigned o = offset + i;
        uint32_t b = o < 4 ? low_byte_read(h, CONF_ADDR_PORT + o) : conf_read(h, o, 1);
        v |= (b & 0xff) << (8 * i);
    }
    return v;
}

static void conf_write(nm_pci_host *h, unsigned offset, uint32_t value, unsigned size)
{
    if (offset == 0 && size == 4) {
        h->config_address = value & CONF_ADDR_MASK;
        return;
    }
    if (offset >= 4 && offset + size <= 8) {
        nm_pci_device *d = selected(h);
        h->config_writes++;
        if (d)
            nm_pci_config_write(d, (uint8_t)((h->config_address & 0xfc) + (offset - 4)), value,
                                size);
        return;
    }
    for (unsigned i = 0; i < size; i++) {
        unsigned o = offset + i;
        uint8_t b = (uint8_t)(value >> (8 * i));
        if (o < 4)
            low_byte_write(h, CONF_ADDR_PORT + o, b);
        else
            conf_write(h, o, b, 1);
    }
}

static uint32_t host_io_read(void *opaque, uint32_t offset, unsigned size)
{
    return conf_read(opaque, offset, size);
}

static void host_io_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    conf_write(opaque, offset, value, size);
}

static const nm_io_ops host_io_ops = {host_io_read, host_io_write, NULL};

/* ---- the device class ---- */

static void pci_host_destroy(void *opaque);

static void *pci_host_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    nm_pci_host *h = g_new0(nm_pci_host, 1);
    static const uint8_t irqs[4] = NM_PCI_PIRQ_IRQS;
    h->m = m;
    memcpy(h->pirq_irq, irqs, sizeof irqs);
    h->claim = nm_ioport_claim(m->io, CONF_ADDR_PORT, 8, &host_io_ops, h, "pci-host", NULL);
    if (!h->claim) {
        const nm_io_claim *o = NULL;
        for (uint16_t p = CONF_ADDR_PORT; p < CONF_ADDR_PORT + 8 && !o; p++)
            o = nm_ioport_owner(m->io, p);
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: ports 0xcf8-0xcff are already taken by %s", cfg ? cfg->origin : "pci-host",
                    o ? o->name : "?");
        g_free(h);
        return NULL;
    }
    /* 82441FX: command reads "memory + bus master" (always on), status
     * DEVSEL medium (82441FX datasheet, 3.2.3/3.2.4). */
    nm_pci_device_init(&h->bridge, "host-bridge", 0x8086, 0x1237, 0x02, 0x060000, 0);
    put_le(h->bridge.config + NM_PCI_COMMAND, NM_PCI_CMD_MEM | NM_PCI_CMD_MASTER, 2);
    put_mask(h->bridge.wmask, NM_PCI_COMMAND, 0, 2);
    h->bridge.wmask[NM_PCI_INT_LINE] = 0;
    if (!nm_pci_register(h, &h->bridge, NM_PCI_DEVFN(0, 0), err)) {
        pci_host_destroy(h);
        return NULL;
    }
    return h;
}

static void pci_host_reset(void *opaque)
{
    nm_pci_host *h = opaque;
    h->config_address = 0;
    h->reset_control = 0;
    for (unsigned i = 0; i < 256; i++)
        if (h->dev[i]) device_reset(h->dev[i]);
}

static void pci_host_destroy(void *opaque)
{
    nm_pci_host *h = opaque;
    /* Devices unregister in their own destroy (created after us, destroyed
     * before us); whatever is left is detached. */
    for (unsigned i = 0; i < 256; i++)
        if (h->dev[i]) nm_pci_unregister(h->dev[i]);
    if (h->claim) nm_ioport_release(h->m->io, h->claim);
    g_free(h);
}

static void pci_host_report(void *opaque, nm_report *r)
{
    nm_pci_host *h = opaque;
    nm_report_u64(r, "config_reads", h->config_reads);
    nm_report_u64(r, "config_writes", h->config_writes);
    uint64_t refused = 0;
    for (unsigned i = 0; i < 256; i++)
        if (h->dev[i]) refused += h->dev[i]->dma_refused;
    nm_report_u64(r, "dma_refused", refused);
}

nm_pci_host *nm_pci_host_find(nm_machine *m)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls == &nm_pci_host_class) return inst->state;
    }
    return NULL;
}

/* The host's registers and every function's configuration space (by
 * device/function number, checked by name); loading decodes the BARs
 * again from what the guest programmed. */
static void pci_host_snapshot(void *opaque, nm_snap *s)
{
    nm_pci_host *h = opaque;
    nm_snap_u32(s, "config_address", &h->config_address);
    nm_snap_u8(s, "reset_control", &h->reset_control);
    nm_snap_bytes(s, "pirq_irq", h->pirq_irq, 4);
    nm_snap_uint(s, "pirq_asserted0", &h->pirq_asserted[0]);
    nm_snap_uint(s, "pirq_asserted1", &h->pirq_asserted[1]);
    nm_snap_uint(s, "pirq_asserted2", &h->pirq_asserted[2]);
    nm_snap_uint(s, "pirq_asserted3", &h->pirq_asserted[3]);
    nm_snap_u64(s, "config_reads", &h->config_reads);
    nm_snap_u64(s, "config_writes", &h->config_writes);
    uint32_t present[8] = {0};
    for (unsigned fn = 0; fn < 256; fn++)
        if (h->dev[fn]) present[fn / 32] |= 1u << (fn % 32);
    uint32_t saved[8];
    memcpy(saved, present, sizeof saved);
    nm_snap_u32s(s, "functions", saved, 8);
    if (!nm_snap_check(s, !memcmp(saved, present, sizeof saved), "functions")) return;
    for (unsigned fn = 0; fn < 256; fn++) {
        nm_pci_device *d = h->dev[fn];
        if (!d) continue;
        nm_snap_push(s, "fn%02x", fn);
        nm_snap_bytes(s, "config", d->config, sizeof d->config);
        nm_snap_bool(s, "irq_level", &d->irq_level);
        nm_snap_u64(s, "dma_bytes_read", &d->dma_bytes_read);
        nm_snap_u64(s, "dma_bytes_written", &d->dma_bytes_written);
        nm_snap_u64(s, "dma_refused", &d->dma_refused);
        nm_snap_pop(s);
        if (!nm_snap_saving(s) && !nm_snap_failed(s)) {
            for (unsigned n = 0; n < NM_PCI_BARS; n++)
                bar_unmap(h, &d->bar[n]);
            update_mappings(d);
        }
    }
}

const nm_device_class nm_pci_host_class = {
    .name = "pci-host",
    .help = "PCI bus 0 with an 82441FX host bridge (conf1 at 0xcf8); the PC board adds it",
    .keys = (const char *const[]){NULL},
    .create = pci_host_create,
    .reset = pci_host_reset,
    .destroy = pci_host_destroy,
    .report = pci_host_report,
    .snapshot = pci_host_snapshot,
    .snapshot_version = 1,
};

/* ---- bus timing of target accesses (docs/pci.md "Bus timing") ---- */

static void bus_timing_retime(nm_pci_bus_timing *t)
{
    uint64_t rd = nm_clock_duration_cycles(t->clock, (uint64_t)t->read_clocks * NM_PCI_CLOCK_NS);
    uint64_t wr = nm_clock_duration_cycles(t->clock, (uint64_t)t->write_clocks * NM_PCI_CLOCK_NS);
    if (wr > UINT32_MAX / 4) wr = UINT32_MAX / 4;
    if (rd > UINT32_MAX / 4) rd = UINT32_MAX / 4;
    /* Sub-dword accesses run one PCI transaction with byte enables, the
     * same length as a dword one. */
    t->cost.cycles[0] = t->cost.cycles[3] = 0;
    t->cost.cycles[1] = t->cost.cycles[2] = t->cost.cycles[4] = (uint32_t)wr;
    t->read_extra = rd > wr ? (uint32_t)(rd - wr) : 0;
    t->cpu_num = t->clock->hz_num;
    t->cpu_den = t->clock->hz_den;
}

static inline void bus_timing_check_clock(nm_pci_bus_timing *t)
{
    if (t->clock->hz_num != t->cpu_num || t->clock->hz_den != t->cpu_den) bus_timing_retime(t);
}

void nm_pci_bus_timing_init(nm_pci_bus_timing *t, nm_clock *clock, const char *name,
                            unsigned read_clocks, unsigned write_clocks)
{
    memset(t, 0, sizeof *t);
    t->clock = clock;
    t->cost.name = name;
    t->read_clocks = read_clocks;
    t->write_clocks = write_clocks;
    bus_timing_retime(t);
}

void nm_pci_bus_timing_read(nm_pci_bus_timing *t)
{
    bus_timing_check_clock(t);
    t->reads++;
    if (!t->read_extra) return;
    t->cost.cycles_charged += t->read_extra;
    nm_clock_charge_bus(t->clock, t->read_extra);
}

void nm_pci_bus_timing_write(nm_pci_bus_timing *t)
{
    bus_timing_check_clock(t);
    t->writes++;
}

uint64_t nm_pci_dma_burst_ns(size_t bytes)
{
    return ((uint64_t)(bytes + 3) / 4 + 4) * NM_PCI_CLOCK_NS;
}

void nm_pci_bus_timing_snapshot(nm_pci_bus_timing *t, nm_snap *s)
{
    nm_snap_u64(s, "pci.accesses", &t->cost.accesses);
    nm_snap_u64(s, "pci.cycles_charged", &t->cost.cycles_charged);
    nm_snap_u64(s, "pci.reads", &t->reads);
    nm_snap_u64(s, "pci.writes", &t->writes);
}
