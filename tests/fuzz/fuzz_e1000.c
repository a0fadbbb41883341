/* libFuzzer target: the Intel 82540EM (devices/net/e1000.c) on PCI.  The
 * input is a program: register writes and reads through the memory BAR
 * (any size and offset) and the I/O BAR (IOADDR/IODATA), guest RAM
 * contents (descriptor rings, packet buffers) written from the input,
 * frames arriving from the wire at 1 Gbit/s, virtual time advancing so the
 * transmit engine, the delay timers and ITR run, PCI configuration
 * accesses through 0xCF8/0xCFC (the guest may move or disable the BARs and
 * bus mastering), and resets.
 *
 * Guest RAM is 1 MB at 0; right above it lie two guard regions: a ROM
 * filled with a pattern (checked unchanged at the end) and an MMIO window
 * that fails the input if anything but the harness touches it.  Every DMA
 * write into RAM is watched (nm_memmap's write watch on every RAM page):
 * it must lie inside RAM, and only happen while the function is a bus
 * master.  The PCI interrupt line must follow the function's INTA.
 * docs/fuzzing.md. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "devices/net/e1000.h"
#include "devices/netdev/netdev.h"
#include "devices/netdev/netdev_internal.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "fuzz_common.h"

#define RAM        (1u << 20)
#define GUARD_ROM  RAM
#define GUARD_MMIO (RAM + 0x10000u)
#define GUARD_SIZE 0x10000u
#define BAR0       0xf0000000u
#define BAR1       0xc000u
#define MAX_LEN    8192u

static const uint8_t NIC_MAC[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

typedef struct fze {
    nm_config *cfg;
    nm_machine *m;
    void *dev;
    nm_pci_device *pci;
    unsigned irq;
    nm_mem_region *guard_rom;
    bool harness; /* the access in progress is the harness's own */
    nm_net_endpoint ep;
    uint64_t dma_writes;
} fze;

static fze F;

static uint32_t guard_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)opaque;
    FZ_CHECK(F.harness, "guard MMIO above RAM read (+0x%x, %u bytes) by a device", offset, size);
    return 0xffffffffu;
}

static void guard_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)opaque;
    FZ_CHECK(F.harness, "guard MMIO above RAM written (+0x%x, %u bytes, 0x%x) by a device", offset,
             size, value);
}

static const nm_mmio_ops guard_ops = {guard_read, guard_write};

/* Every write into RAM that does not come from the harness: a DMA. */
static void ram_watch(void *opaque, uint32_t paddr, unsigned len)
{
    (void)opaque;
    if (F.harness) return;
    F.dma_writes++;
    FZ_CHECK(len > 0 && (uint64_t)paddr + len <= RAM, "DMA write of %u bytes at 0x%08x: not in RAM",
             len, paddr);
    FZ_CHECK(nm_pci_command(F.pci) & NM_PCI_CMD_MASTER,
             "DMA write of %u bytes at 0x%08x with bus mastering disabled", len, paddr);
}

static void wire_receive(void *opaque, const uint8_t *frame, size_t len)
{
    (void)opaque;
    FZ_CHECK(len > 0 && len <= NM_NET_MAX_WIRE_FRAME, "the e1000 put a %zu-byte frame on the wire",
             len);
    fz_read_frame(frame, len);
}

static void setup(uint8_t how)
{
    static const char *const cpus[4] = {"486dx2-66", "pentium-100", "386dx-40", "pentium-133"};
    GError *err = NULL;
    memset(&F, 0, sizeof F);
    F.cfg = nm_config_new();
    g_free(F.cfg->cpu);
    F.cfg->cpu = g_strdup(cpus[how & 3]);
    F.cfg->ram_bytes = RAM;
    F.m = nm_machine_new(F.cfg, &err);
    if (!F.m) fz_fail("fixture: %s", err->message);
    F.guard_rom = nm_memmap_add_rom(F.m->mem, "guard-rom", GUARD_ROM, GUARD_SIZE);
    memset(F.guard_rom->host, 0xa5, GUARD_SIZE);
    nm_memmap_add_mmio(F.m->mem, "guard-mmio", GUARD_MMIO, GUARD_SIZE, &guard_ops, NULL, NULL);
    for (uint32_t a = 0; a < RAM; a += NM_PAGE_SIZE)
        nm_memmap_watch_page(F.m->mem, a);
    nm_memmap_set_write_watch(F.m->mem, ram_watch, NULL);
    if (!nm_machine_add_device(F.m, &nm_pci_host_class, NULL, &err))
        fz_fail("fixture: %s", err->message);
    nm_devcfg *d = nm_net_devcfg_new("fuzz e1000", "e1000");
    nm_net_devcfg_put(d, "mac", "52:54:00:12:34:56");
    nm_net_devcfg_put(d, "net", "hub:fz");
    F.dev = nm_machine_add_device(F.m, &nm_e1000_class, d, &err);
    nm_devcfg_free(d);
    if (!F.dev) fz_fail("fixture: %s", err->message);
    nm_pci_host *h = nm_pci_host_find(F.m);
    F.pci = nm_pci_host_device(h, NM_PCI_DEVFN(1, 0));
    FZ_CHECK(F.pci, "no e1000 at 00:01.0");
    F.irq = nm_pci_route_irq(h, 1, 1);
    F.ep.name = "fuzz-station";
    F.ep.receive = wire_receive;
    if (!nm_net_attach(F.m, &F.ep, "hub:fz", 1000000000, NULL, "fuzz", &err))
        fz_fail("fixture: %s", err->message);
    /* As a driver leaves it after probe; the program may change all of it. */
    nm_pci_config_write(F.pci, NM_PCI_BAR0, BAR0, 4);
    nm_pci_config_write(F.pci, NM_PCI_BAR0 + 4, BAR1, 4);
    nm_pci_config_write(F.pci, NM_PCI_COMMAND, NM_PCI_CMD_IO | NM_PCI_CMD_MEM | NM_PCI_CMD_MASTER,
                        2);
}

static void teardown(void)
{
    nm_machine_free(F.m);
    nm_config_free(F.cfg);
}

/* The BARs where the guest put them now. */
static uint32_t bar0(void)
{
    return nm_pci_bar_address(F.pci, 0);
}
static uint16_t bar1(void)
{
    return (uint16_t)nm_pci_bar_address(F.pci, 1);
}

static void mmio_wr(uint32_t off, uint32_t v, unsigned size)
{
    F.harness = true;
    nm_mem_write(F.m->mem, bar0() + off, v, size);
    F.harness = false;
}
static uint32_t mmio_rd(uint32_t off, unsigned size)
{
    F.harness = true;
    uint32_t v = nm_mem_read(F.m->mem, bar0() + off, size);
    F.harness = false;
    return v;
}

static void check(void)
{
    FZ_CHECK(nm_irq_level(&F.m->irq, F.irq) == F.pci->irq_level,
             "PCI IRQ %u is %d but the e1000's INTA is %d", F.irq, nm_irq_level(&F.m->irq, F.irq),
             F.pci->irq_level);
}

static void check_end(void)
{
    /* memcmp, not a loop of 64 K compares the fuzzer's coverage hooks
     * would each see (that was 40 % of an execution). */
    static uint8_t pattern[GUARD_SIZE];
    if (pattern[0] != 0xa5) memset(pattern, 0xa5, sizeof pattern);
    if (memcmp(F.guard_rom->host, pattern, GUARD_SIZE))
        for (uint32_t i = 0; i < GUARD_SIZE; i++)
            FZ_CHECK(F.guard_rom->host[i] == 0xa5, "guard ROM above RAM changed at +0x%x", i);
    const nm_e1000_stats *st = nm_e1000_get_stats(F.dev);
    /* Everything stored came through a descriptor. */
    FZ_CHECK(st->rx_frames <= st->rx_descriptors, "%llu frames stored in %llu descriptors",
             (unsigned long long)st->rx_frames, (unsigned long long)st->rx_descriptors);
    check();
}

/* A frame from the wire: up to 2 KB, or 20,000 bytes long (fz_wire_frame). */
static void frame_op(fz_in *in)
{
    fz_wire_frame(in, &F.ep, NIC_MAC, 2048, 20000);
}

/* Rings as a driver sets them up: TX at 0x10000, RX at 0x20000 with 2 KB
 * buffers from 0x30000, `n` descriptors each (8..64), RX tail n-1. */
static void rings_macro(fz_in *in)
{
    unsigned n = 8u * (1u + (fz_u8(in) & 7));
    uint32_t rctl = fz_u32(in), tctl = fz_u32(in);
    F.harness = true;
    for (unsigned i = 0; i < n; i++) {
        uint8_t *d = F.m->ram->host + 0x20000 + 16 * i;
        memset(d, 0, 16);
        uint32_t buf = 0x30000 + 2048 * i;
        memcpy(d, &buf, 4);
    }
    F.harness = false;
    mmio_wr(0x3800, 0x10000, 4);
    mmio_wr(0x3804, 0, 4);
    mmio_wr(0x3808, n * 16, 4);
    mmio_wr(0x3810, 0, 4);
    mmio_wr(0x3818, 0, 4);
    mmio_wr(0x2800, 0x20000, 4);
    mmio_wr(0x2804, 0, 4);
    mmio_wr(0x2808, n * 16, 4);
    mmio_wr(0x2810, 0, 4);
    mmio_wr(0x2818, n - 1, 4);
    mmio_wr(0x00d0, 0x9d, 4); /* IMS: what Linux enables */
    mmio_wr(0x0100, rctl | 2, 4);
    mmio_wr(0x0400, tctl | 2, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_LEN) return -1;
    fz_in in = {data, size};
    setup(fz_u8(&in));
    nm_clock *c = &F.m->clock;
    while (fz_more(&in)) {
        uint8_t op = fz_u8(&in);
        switch (op % 13) {
        case 0: { /* a register, dword */
            uint32_t off = ((uint32_t)fz_u16(&in) << 2) & 0x1fffc;
            mmio_wr(off, fz_u32(&in), 4);
            break;
        }
        case 1: mmio_rd(((uint32_t)fz_u16(&in) << 2) & 0x1fffc, 4); break;
        case 2: { /* any size at any offset */
            uint8_t s = fz_u8(&in);
            uint32_t off = fz_u32(&in) & 0x1ffff;
            mmio_wr(off, fz_u32(&in), fz_size(s));
            break;
        }
        case 3: {
            uint8_t s = fz_u8(&in);
            mmio_rd(fz_u32(&in) & 0x1ffff, fz_size(s));
            break;
        }
        case 4: { /* I/O BAR */
            uint8_t a = fz_u8(&in);
            F.harness = true;
            nm_io_write(F.m->io, (uint16_t)(bar1() + (a & 7)), fz_u32(&in), fz_size(a >> 3));
            F.harness = false;
            break;
        }
        case 5: {
            uint8_t a = fz_u8(&in);
            F.harness = true;
            nm_io_read(F.m->io, (uint16_t)(bar1() + (a & 7)), fz_size(a >> 3));
            F.harness = false;
            break;
        }
        case 6: { /* guest RAM: descriptors and buffers */
            uint32_t at = fz_u32(&in) % RAM;
            size_t n = fz_u8(&in) + 1u;
            if (n > RAM - at) n = RAM - at;
            fz_bytes(&in, F.m->ram->host + at, n);
            break;
        }
        case 7: frame_op(&in); break;
        case 8: fz_run_ns(c, ((uint64_t)fz_u16(&in) + 1) * 1024); break;
        case 9: { /* configuration write through 0xCF8/0xCFC */
            uint8_t a = fz_u8(&in), reg = fz_u8(&in);
            uint8_t devfn = (a & 0x80) ? fz_u8(&in) : NM_PCI_DEVFN(1, 0);
            F.harness = true;
            nm_io_write(F.m->io, 0xcf8, 0x80000000u | (uint32_t)devfn << 8 | (reg & 0xfcu), 4);
            nm_io_write(F.m->io, (uint16_t)(0xcfc + (reg & 3)), fz_u32(&in), fz_size(a));
            F.harness = false;
            break;
        }
        case 10: {
            uint8_t a = fz_u8(&in), reg = fz_u8(&in);
            F.harness = true;
            nm_io_write(F.m->io, 0xcf8, 0x80000000u | 1u << 11 | (reg & 0xfcu), 4);
            nm_io_read(F.m->io, (uint16_t)(0xcfc + (reg & 3)), fz_size(a));
            F.harness = false;
            break;
        }
        case 11: nm_machine_reset(F.m); break;
        case 12: rings_macro(&in); break;
        }
        fz_settle(c);
        check();
    }
    fz_run_ns(c, 50u * 1000 * 1000); /* what is in flight lands, timers expire */
    check_end();
    fz_digest(F.m, &F.dma_writes, sizeof F.dma_writes);
    teardown();
    return 0;
}
