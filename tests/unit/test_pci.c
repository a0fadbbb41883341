/* PCI host: configuration mechanism #1 through the ports, masks, BARs,
 * INTx routing and sharing, bus-master DMA. */
#include <glib.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "emu/machine.h"

typedef struct fixture {
    nm_config *cfg;
    nm_machine *m;
    nm_pci_host *h;
} fixture;

/* A fake function: a 4 KB memory BAR, a 16-port I/O BAR, INTA. */
typedef struct fakedev {
    nm_pci_device pci;
    unsigned mmio_reads, mmio_writes, io_reads;
    uint32_t last_offset, last_value;
    unsigned cfg_writes;
} fakedev;

static uint32_t fake_mmio_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    fakedev *f = opaque;
    f->mmio_reads++;
    f->last_offset = offset;
    return 0xabcd0000u | offset;
}

static void fake_mmio_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    fakedev *f = opaque;
    f->mmio_writes++;
    f->last_offset = offset;
    f->last_value = value;
}

static uint32_t fake_io_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    fakedev *f = opaque;
    f->io_reads++;
    return 0x50 + offset;
}

static void fake_io_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)opaque, (void)offset, (void)value, (void)size;
}

static void fake_cfg_write(void *opaque, nm_pci_device *d, uint8_t offset, unsigned size,
                           uint32_t value)
{
    (void)d, (void)offset, (void)size, (void)value;
    ((fakedev *)opaque)->cfg_writes++;
}

static const nm_mmio_ops fake_mmio = {fake_mmio_read, fake_mmio_write};
static const nm_io_ops fake_io = {fake_io_read, fake_io_write, NULL};

static void fake_init(fakedev *f, const char *name, uint8_t pin)
{
    memset(f, 0, sizeof *f);
    nm_pci_device_init(&f->pci, name, 0x1234, 0x5678, 0x01, 0x020000, pin);
    g_assert_true(nm_pci_device_set_bar_mem(&f->pci, 0, 0x1000, false, &fake_mmio, f, NULL, NULL));
    g_assert_true(nm_pci_device_set_bar_io(&f->pci, 1, 16, &fake_io, f, NULL, NULL));
    f->pci.config_write = fake_cfg_write;
    f->pci.opaque = f;
}

static void setup(fixture *fx, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    fx->cfg = nm_config_new();
    fx->cfg->ram_bytes = 16u << 20;
    fx->m = nm_machine_new(fx->cfg, &err);
    g_assert_no_error(err);
    fx->h = nm_machine_add_device(fx->m, &nm_pci_host_class, NULL, &err);
    g_assert_no_error(err);
    g_assert_true(nm_pci_host_find(fx->m) == fx->h);
}

static void teardown(fixture *fx, gconstpointer data)
{
    (void)data;
    nm_machine_free(fx->m);
    nm_config_free(fx->cfg);
}

static uint32_t addr(unsigned bus, unsigned slot, unsigned fn, unsigned reg)
{
    return 0x80000000u | bus << 16 | slot << 11 | fn << 8 | (reg & 0xfc);
}

/* What Linux's pci_conf1_read does. */
static uint32_t cfg_read(fixture *fx, unsigned slot, unsigned reg, unsigned size)
{
    nm_io_write(fx->m->io, 0xcf8, addr(0, slot, 0, reg), 4);
    return nm_io_read(fx->m->io, (uint16_t)(0xcfc + (reg & 3)), size);
}

static void cfg_write(fixture *fx, unsigned slot, unsigned reg, uint32_t v, unsigned size)
{
    nm_io_write(fx->m->io, 0xcf8, addr(0, slot, 0, reg), 4);
    nm_io_write(fx->m->io, (uint16_t)(0xcfc + (reg & 3)), v, size);
}

static void test_host_bridge(fixture *fx, gconstpointer data)
{
    (void)data;
    /* pci_check_type1(): byte write to 0xCFB, then CONFIG_ADDRESS reads back. */
    nm_io_write(fx->m->io, 0xcfb, 0x01, 1);
    nm_io_write(fx->m->io, 0xcf8, 0x80000000u, 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcf8, 4), ==, 0x80000000u);
    /* Reserved and low bits of CONFIG_ADDRESS read 0. */
    nm_io_write(fx->m->io, 0xcf8, 0xffffffffu, 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcf8, 4), ==, 0x80fffffcu);
    /* Byte/word accesses to 0xCF8 are not CONFIG_ADDRESS. */
    nm_io_write(fx->m->io, 0xcf8, 0x12, 1);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcf8, 4), ==, 0x80fffffcu);
    /* (0xCF9 is the reset control register, reading 0.) */
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcf8, 2), ==, 0x00ff);

    g_assert_cmphex(cfg_read(fx, 0, 0x00, 4), ==, 0x12378086u);
    g_assert_cmphex(cfg_read(fx, 0, 0x00, 2), ==, 0x8086);
    g_assert_cmphex(cfg_read(fx, 0, 0x02, 2), ==, 0x1237);
    g_assert_cmphex(cfg_read(fx, 0, 0x01, 1), ==, 0x80);
    g_assert_cmphex(cfg_read(fx, 0, 0x03, 1), ==, 0x12);
    /* pci_sanity_check(): class word at 0x0A is "host bridge". */
    g_assert_cmphex(cfg_read(fx, 0, 0x0a, 2), ==, 0x0600);
    g_assert_cmphex(cfg_read(fx, 0, 0x08, 4), ==, 0x06000002u);
    g_assert_cmphex(cfg_read(fx, 0, 0x0e, 1), ==, 0x00);
    /* Word at 0xCFE reads bytes 2-3 of the dword. */
    nm_io_write(fx->m->io, 0xcf8, addr(0, 0, 0, 0), 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcfe, 2), ==, 0x1237);
    /* A dword at 0xCFD straddles the data port: split into bytes, the last
     * byte (0xD00) is not ours. */
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcfd, 4), ==, 0xff123780u);
}

static void test_absent(fixture *fx, gconstpointer data)
{
    (void)data;
    g_assert_cmphex(cfg_read(fx, 1, 0x00, 4), ==, 0xffffffffu);
    g_assert_cmphex(cfg_read(fx, 31, 0x00, 2), ==, 0xffff);
    g_assert_cmphex(cfg_read(fx, 7, 0x0b, 1), ==, 0xff);
    /* Other buses: nothing there. */
    nm_io_write(fx->m->io, 0xcf8, addr(1, 0, 0, 0), 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcfc, 4), ==, 0xffffffffu);
    /* Function 1 of the bridge: absent. */
    nm_io_write(fx->m->io, 0xcf8, addr(0, 0, 1, 0), 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcfc, 4), ==, 0xffffffffu);
    /* Enable bit clear: no configuration cycle. */
    nm_io_write(fx->m->io, 0xcf8, 0x00000000u, 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcfc, 4), ==, 0xffffffffu);
    nm_io_write(fx->m->io, 0xcfc, 0, 4); /* dropped, no crash */
    /* Writes to absent functions are dropped. */
    cfg_write(fx, 3, 0x04, 0xffff, 2);
    g_assert_cmphex(cfg_read(fx, 3, 0x04, 2), ==, 0xffff);
}

static void test_read_only(fixture *fx, gconstpointer data)
{
    (void)data;
    fakedev f;
    fake_init(&f, "fake", 1);
    GError *err = NULL;
    g_assert_true(nm_pci_register(fx->h, &f.pci, NM_PCI_DEVFN(2, 0), &err));
    g_assert_no_error(err);
    cfg_write(fx, 2, 0x00, 0xffffffffu, 4);
    cfg_write(fx, 2, 0x08, 0xffffffffu, 4);
    cfg_write(fx, 2, 0x0e, 0xff, 1);
    cfg_write(fx, 2, 0x2c, 0xffffffffu, 4);
    cfg_write(fx, 2, 0x30, 0xffffffffu, 4);
    cfg_write(fx, 2, 0x3d, 0x04, 1);
    cfg_write(fx, 2, 0xfc, 0xffffffffu, 4);
    g_assert_cmphex(cfg_read(fx, 2, 0x00, 4), ==, 0x56781234u);
    g_assert_cmphex(cfg_read(fx, 2, 0x08, 4), ==, 0x02000001u);
    g_assert_cmphex(cfg_read(fx, 2, 0x0e, 1), ==, 0x00);
    g_assert_cmphex(cfg_read(fx, 2, 0x2c, 4), ==, 0);
    g_assert_cmphex(cfg_read(fx, 2, 0x30, 4), ==, 0); /* no expansion ROM */
    g_assert_cmphex(cfg_read(fx, 2, 0x3d, 1), ==, 1); /* INTA, read-only */
    g_assert_cmphex(cfg_read(fx, 2, 0xfc, 4), ==, 0);
    /* Command: only the implemented bits stick. */
    cfg_write(fx, 2, 0x04, 0xffff, 2);
    g_assert_cmphex(cfg_read(fx, 2, 0x04, 2), ==, 0x0147);
    cfg_write(fx, 2, 0x04, 0, 2);
    /* Status: DEVSEL medium is read-only; error bits are write-1-to-clear. */
    f.pci.config[NM_PCI_STATUS + 1] |= 0x30;
    cfg_write(fx, 2, 0x06, 0x1000, 2);
    g_assert_cmphex(cfg_read(fx, 2, 0x06, 2), ==, 0x2200);
    /* Latency timer and cache line size are writable. */
    cfg_write(fx, 2, 0x0c, 0x4008, 2);
    g_assert_cmphex(cfg_read(fx, 2, 0x0c, 2), ==, 0x4008);
    g_assert_cmpuint(f.cfg_writes, >, 0);
    /* The host bridge's command register is fixed. */
    cfg_write(fx, 0, 0x04, 0, 2);
    g_assert_cmphex(cfg_read(fx, 0, 0x04, 2), ==, 0x0006);
    nm_pci_unregister(&f.pci);
    g_assert_cmphex(cfg_read(fx, 2, 0x00, 4), ==, 0xffffffffu);
}

static void test_bar_sizing(fixture *fx, gconstpointer data)
{
    (void)data;
    fakedev f;
    fake_init(&f, "fake", 1);
    g_assert_true(nm_pci_device_set_bar_mem(&f.pci, 2, 0x20000, true, &fake_mmio, &f, NULL, NULL));
    g_assert_true(nm_pci_register(fx->h, &f.pci, -1, NULL));
    g_assert_cmpint(f.pci.devfn, ==, NM_PCI_DEVFN(1, 0));
    /* Unassigned out of reset. */
    g_assert_cmphex(cfg_read(fx, 1, 0x10, 4), ==, 0);
    g_assert_cmphex(cfg_read(fx, 1, 0x14, 4), ==, 0x1);
    g_assert_cmphex(cfg_read(fx, 1, 0x18, 4), ==, 0x8);
    /* Linux's __pci_read_base: write all-ones, read the mask back. */
    cfg_write(fx, 1, 0x10, 0xffffffffu, 4);
    g_assert_cmphex(cfg_read(fx, 1, 0x10, 4), ==, 0xfffff000u);
    cfg_write(fx, 1, 0x14, 0xffffffffu, 4);
    g_assert_cmphex(cfg_read(fx, 1, 0x14, 4), ==, 0x0000fff1u);
    cfg_write(fx, 1, 0x18, 0xffffffffu, 4);
    g_assert_cmphex(cfg_read(fx, 1, 0x18, 4), ==, 0xfffe0008u);
    /* Unused BARs stay 0. */
    cfg_write(fx, 1, 0x1c, 0xffffffffu, 4);
    g_assert_cmphex(cfg_read(fx, 1, 0x1c, 4), ==, 0);
    /* Byte-wise writes land in the right bytes. */
    cfg_write(fx, 1, 0x10, 0, 4);
    cfg_write(fx, 1, 0x13, 0xe1, 1);
    cfg_write(fx, 1, 0x11, 0x23, 1);
    g_assert_cmphex(cfg_read(fx, 1, 0x10, 4), ==, 0xe1002000u);
    g_assert_cmphex(cfg_read(fx, 1, 0x12, 2), ==, 0xe100);
    g_assert_cmphex(nm_pci_bar_address(&f.pci, 0), ==, 0xe1002000u);
    /* Impossible BARs are refused at declaration. */
    fakedev g;
    fake_init(&g, "bad", 1);
    GError *err = NULL;
    g_assert_false(nm_pci_device_set_bar_mem(&g.pci, 3, 0x1800, false, &fake_mmio, &g, NULL, &err));
    g_assert_nonnull(err);
    g_clear_error(&err);
    g_assert_false(nm_pci_device_set_bar_io(&g.pci, 3, 512, &fake_io, &g, NULL, &err));
    g_clear_error(&err);
    g_assert_false(nm_pci_device_set_bar_io(&g.pci, 0, 16, &fake_io, &g, NULL, &err));
    g_clear_error(&err);
    g_assert_false(nm_pci_device_set_bar_io(&g.pci, 6, 16, &fake_io, &g, NULL, &err));
    g_clear_error(&err);
    nm_pci_unregister(&f.pci);
}

static void test_bar_relocation(fixture *fx, gconstpointer data)
{
    (void)data;
    fakedev f;
    fake_init(&f, "fake", 1);
    g_assert_true(nm_pci_register(fx->h, &f.pci, NM_PCI_DEVFN(3, 0), NULL));
    nm_memmap *mem = fx->m->mem;

    cfg_write(fx, 3, 0x10, 0xe0000000u, 4);
    /* Memory space disabled: nothing answers. */
    g_assert_cmphex(nm_mem_read(mem, 0xe0000010u, 4), ==, 0xffffffffu);
    g_assert_cmpuint(f.mmio_reads, ==, 0);
    cfg_write(fx, 3, 0x04, NM_PCI_CMD_MEM, 2);
    g_assert_cmphex(nm_mem_read(mem, 0xe0000010u, 4), ==, 0xabcd0010u);
    g_assert_cmpuint(f.mmio_reads, ==, 1);
    nm_mem_write(mem, 0xe0000ffcu, 0x77, 4);
    g_assert_cmpuint(f.mmio_writes, ==, 1);
    g_assert_cmphex(f.last_offset, ==, 0xffc);

    /* Move it: the old address is dead, the new one answers. */
    cfg_write(fx, 3, 0x10, 0xe0100000u, 4);
    g_assert_cmphex(nm_mem_read(mem, 0xe0000010u, 4), ==, 0xffffffffu);
    g_assert_cmpuint(f.mmio_reads, ==, 1);
    g_assert_cmphex(nm_mem_read(mem, 0xe0100020u, 4), ==, 0xabcd0020u);
    g_assert_cmpuint(f.mmio_reads, ==, 2);

    /* Disable memory decoding: gone. */
    cfg_write(fx, 3, 0x04, 0, 2);
    g_assert_cmphex(nm_mem_read(mem, 0xe0100020u, 4), ==, 0xffffffffu);
    g_assert_cmpuint(f.mmio_reads, ==, 2);

    /* Over RAM or the high ROM: not decoded, RAM stays RAM. */
    nm_mem_write(mem, 0x00200000u, 0x11223344u, 4);
    cfg_write(fx, 3, 0x10, 0x00200000u, 4);
    cfg_write(fx, 3, 0x04, NM_PCI_CMD_MEM, 2);
    g_assert_cmphex(nm_mem_read(mem, 0x00200000u, 4), ==, 0x11223344u);
    g_assert_nonnull(nm_memmap_page_ptr(mem, 0x00200000u, true));
    cfg_write(fx, 3, 0x10, 0xfffff000u, 4);
    g_assert_cmpuint(f.mmio_reads, ==, 2);
    /* Back to a good place. */
    cfg_write(fx, 3, 0x10, 0xf0000000u, 4);
    g_assert_cmphex(nm_mem_read(mem, 0xf0000004u, 4), ==, 0xabcd0004u);

    /* I/O BAR: decoded with Command.IO only. */
    cfg_write(fx, 3, 0x14, 0xc000, 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xc004, 1), ==, 0xff);
    g_assert_cmpuint(f.io_reads, ==, 0);
    cfg_write(fx, 3, 0x04, NM_PCI_CMD_IO, 2);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xc004, 1), ==, 0x54);
    g_assert_cmphex(nm_mem_read(mem, 0xf0000004u, 4), ==, 0xffffffffu); /* memory now off */
    cfg_write(fx, 3, 0x14, 0xc100, 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xc004, 1), ==, 0xff);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xc10f, 1), ==, 0x5f);
    g_assert_cmpuint(f.io_reads, ==, 2);
    /* Over the configuration ports: refused, no crash, config still works. */
    cfg_write(fx, 3, 0x14, 0x0cf0, 4);
    g_assert_cmphex(cfg_read(fx, 3, 0x14, 4), ==, 0x0cf1);
    g_assert_cmphex(cfg_read(fx, 0, 0x00, 4), ==, 0x12378086u);

    /* Reset: unassigned and off again. */
    nm_machine_reset(fx->m);
    g_assert_cmphex(cfg_read(fx, 3, 0x10, 4), ==, 0);
    g_assert_cmphex(cfg_read(fx, 3, 0x04, 2), ==, 0);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcf0, 1), ==, 0xff);
    nm_pci_unregister(&f.pci);
}

static void test_interrupts(fixture *fx, gconstpointer data)
{
    (void)data;
    fakedev a, b, c;
    fake_init(&a, "a", 1); /* slot 1 INTA -> PIRQ A */
    fake_init(&b, "b", 1); /* slot 5 INTA -> PIRQ A: shares with a */
    fake_init(&c, "c", 2); /* slot 1 fn 1 INTB -> PIRQ B */
    g_assert_true(nm_pci_register(fx->h, &a.pci, NM_PCI_DEVFN(1, 0), NULL));
    g_assert_true(nm_pci_register(fx->h, &b.pci, NM_PCI_DEVFN(5, 0), NULL));
    g_assert_true(nm_pci_register(fx->h, &c.pci, NM_PCI_DEVFN(1, 1), NULL));
    /* Function 0 now says multi-function. */
    g_assert_cmphex(cfg_read(fx, 1, 0x0e, 1), ==, 0x80);
    nm_io_write(fx->m->io, 0xcf8, addr(0, 1, 1, 0), 4);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcfc, 4), ==, 0x56781234u);

    unsigned irq_a = nm_pci_host_pirq_irq(fx->h, 0), irq_b = nm_pci_host_pirq_irq(fx->h, 1);
    g_assert_cmpuint(irq_a, ==, 11);
    g_assert_cmpuint(irq_b, ==, 5);
    g_assert_cmpuint(nm_pci_route_irq(fx->h, 2, 1), ==, 5);  /* slot 2 INTA: PIRQ B */
    g_assert_cmpuint(nm_pci_route_irq(fx->h, 3, 1), ==, 14); /* slot 3 INTA: PIRQ C */
    g_assert_cmpuint(nm_pci_route_irq(fx->h, 4, 1), ==, 15); /* slot 4 INTA: PIRQ D */
    g_assert_cmpuint(nm_pci_route_irq(fx->h, 4, 2), ==, 11); /* slot 4 INTB: PIRQ A */
    g_assert_cmphex(nm_pci_host_irq_mask(fx->h), ==,
                    (1u << 11) | (1u << 5) | (1u << 14) | (1u << 15));
    /* Interrupt Line comes out of reset holding the routed IRQ, as a BIOS
     * would have left it; it is writable scratch and does not re-route. */
    g_assert_cmpuint(cfg_read(fx, 1, 0x3c, 1), ==, irq_a);
    g_assert_cmpuint(cfg_read(fx, 5, 0x3c, 1), ==, irq_a);
    g_assert_cmpuint(c.pci.config[NM_PCI_INT_LINE], ==, irq_b);
    g_assert_cmphex(cfg_read(fx, 1, 0x3c, 2), ==, 0x0100 | irq_a);
    cfg_write(fx, 1, 0x3c, 0x0203, 2);
    g_assert_cmphex(cfg_read(fx, 1, 0x3c, 2), ==, 0x0103);
    g_assert_cmpuint(nm_pci_route_irq(fx->h, 1, 1), ==, irq_a);
    g_assert_cmpuint(nm_pci_route_irq(fx->h, 1, 0), ==, 0);

    nm_irq_bus *irq = &fx->m->irq;
    g_assert_false(nm_irq_level(irq, irq_a));
    nm_pci_set_irq(&a.pci, true);
    g_assert_true(nm_irq_level(irq, irq_a));
    nm_pci_set_irq(&b.pci, true);
    nm_pci_set_irq(&a.pci, true); /* repeated: no double count */
    nm_pci_set_irq(&a.pci, false);
    g_assert_true(nm_irq_level(irq, irq_a)); /* b still asserts */
    g_assert_false(nm_irq_level(irq, irq_b));
    nm_pci_set_irq(&c.pci, true);
    g_assert_true(nm_irq_level(irq, irq_b));
    nm_pci_set_irq(&b.pci, false);
    g_assert_false(nm_irq_level(irq, irq_a));
    g_assert_true(nm_irq_level(irq, irq_b));
    /* Removing an asserting function drops its share. */
    nm_pci_unregister(&c.pci);
    g_assert_false(nm_irq_level(irq, irq_b));
    nm_pci_unregister(&b.pci);
    nm_pci_unregister(&a.pci);
}

static void test_dma(fixture *fx, gconstpointer data)
{
    (void)data;
    fakedev f;
    fake_init(&f, "fake", 1);
    g_assert_true(nm_pci_register(fx->h, &f.pci, NM_PCI_DEVFN(4, 0), NULL));
    uint8_t buf[64], back[64];
    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7);

    /* Bus master off: refused, status says master abort. */
    g_assert_false(nm_pci_dma_write(&f.pci, 0x1000, buf, sizeof buf));
    g_assert_cmpuint(f.pci.dma_refused, ==, 1);
    g_assert_cmphex(cfg_read(fx, 4, 0x06, 2) & NM_PCI_STATUS_RCV_MASTER_ABORT, !=, 0);
    cfg_write(fx, 4, 0x06, NM_PCI_STATUS_RCV_MASTER_ABORT, 2);
    g_assert_cmphex(cfg_read(fx, 4, 0x06, 2) & NM_PCI_STATUS_RCV_MASTER_ABORT, ==, 0);
    g_assert_cmphex(nm_mem_read(fx->m->mem, 0x1000, 4), ==, 0);

    cfg_write(fx, 4, 0x04, NM_PCI_CMD_MASTER, 2);
    g_assert_true(nm_pci_dma_write(&f.pci, 0x1000, buf, sizeof buf));
    g_assert_true(nm_pci_dma_read(&f.pci, 0x1000, back, sizeof back));
    g_assert_cmpmem(buf, sizeof buf, back, sizeof back);
    g_assert_cmphex(nm_mem_read(fx->m->mem, 0x1004, 1), ==, 28);

    /* Past the end of RAM, into MMIO, or wrapping past 4 GB: refused whole. */
    uint32_t ram_end = (uint32_t)fx->cfg->ram_bytes;
    memset(back, 0x5a, sizeof back);
    g_assert_false(nm_pci_dma_write(&f.pci, ram_end - 16, buf, sizeof buf));
    g_assert_false(nm_pci_dma_read(&f.pci, ram_end - 16, back, sizeof back));
    g_assert_cmphex(back[0], ==, 0x5a);
    g_assert_cmphex(nm_mem_read(fx->m->mem, ram_end - 16, 4), ==, 0);
    g_assert_false(nm_pci_dma_read(&f.pci, 0xfffffff0u, back, sizeof back));
    cfg_write(fx, 4, 0x10, 0xe0000000u, 4);
    cfg_write(fx, 4, 0x04, NM_PCI_CMD_MASTER | NM_PCI_CMD_MEM, 2);
    g_assert_false(nm_pci_dma_read(&f.pci, 0xe0000000u, back, 4)); /* peer MMIO: no */
    g_assert_cmpuint(f.mmio_reads, ==, 0);
    g_assert_cmpuint(f.pci.dma_refused, ==, 5);
    /* Bus master off again after all that: refused. */
    cfg_write(fx, 4, 0x04, 0, 2);
    g_assert_false(nm_pci_dma_read(&f.pci, 0x1000, back, 4));
    nm_pci_unregister(&f.pci);
}

static void test_errors(fixture *fx, gconstpointer data)
{
    (void)data;
    fakedev f, g;
    fake_init(&f, "f", 1);
    fake_init(&g, "g", 1);
    GError *err = NULL;
    g_assert_false(nm_pci_register(fx->h, &f.pci, NM_PCI_DEVFN(0, 0), &err));
    g_assert_nonnull(strstr(err->message, "taken"));
    g_clear_error(&err);
    g_assert_false(nm_pci_register(fx->h, &f.pci, NM_PCI_DEVFN(6, 2), &err));
    g_assert_nonnull(strstr(err->message, "function 0"));
    g_clear_error(&err);
    g_assert_false(nm_pci_register(NULL, &f.pci, -1, &err));
    g_clear_error(&err);
    /* A second host would collide on the ports. */
    g_assert_null(nm_machine_add_device(fx->m, &nm_pci_host_class, NULL, &err));
    g_assert_nonnull(strstr(err->message, "0xcf8"));
    g_clear_error(&err);
    /* Hostile configuration writes of every size at every offset. */
    g_assert_true(nm_pci_register(fx->h, &f.pci, -1, NULL));
    for (unsigned reg = 0; reg < 256; reg++)
        for (unsigned size = 1; size <= 4; size <<= 1) {
            cfg_write(fx, 1, reg, 0xffffffffu, size);
            (void)cfg_read(fx, 1, reg, size);
            g_assert_cmpuint(nm_pci_config_read(&f.pci, (uint8_t)reg, size), !=, 0x12345678u);
        }
    nm_pci_config_write(&f.pci, 0xfe, 0xffffffffu, 4); /* clipped at 256 */
    (void)nm_pci_config_read(&f.pci, 0xff, 4);
    g_assert_cmphex(cfg_read(fx, 1, 0x00, 4), ==, 0x56781234u);
    nm_pci_unregister(&f.pci);
    /* Port 0xCF9 bit 2: reset. */
    nm_io_write(fx->m->io, 0xcf9, 0x02, 1);
    g_assert_false(fx->m->stop_requested);
    g_assert_cmphex(nm_io_read(fx->m->io, 0xcf9, 1), ==, 0x02);
    nm_io_write(fx->m->io, 0xcf9, 0x06, 1);
    g_assert_true(fx->m->stop_requested);
    g_assert_cmpint(fx->m->stop_reason, ==, NM_STOP_RESET);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define T(name, fn) g_test_add("/pci/" name, fixture, NULL, setup, fn, teardown)
    T("host-bridge", test_host_bridge);
    T("absent", test_absent);
    T("read-only", test_read_only);
    T("bar-sizing", test_bar_sizing);
    T("bar-relocation", test_bar_relocation);
    T("interrupts", test_interrupts);
    T("dma", test_dma);
    T("errors", test_errors);
#undef T
    return g_test_run();
}
