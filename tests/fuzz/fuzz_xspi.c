/* libFuzzer target: the Xilinx AXI Quad SPI controller on PCI
 * (devices/bus/xilinx_spi.c) driving an SPI bus (devices/bus/spi.c) with a
 * recording device on chip select 0 and a KSZ8851SNL (devices/net/ks8851.c)
 * on chip select 1.  The input is a program: register writes and reads of
 * any size at any offset of the BAR (DTR/DRR FIFOs, SSR, CR with manual or
 * automatic slave select, master inhibit, FIFO resets, loopback, CPOL/CPHA,
 * SRR, the interrupt registers), virtual time so bursts run at SCLK, PCI
 * configuration writes (the BAR moves, memory decoding switches off),
 * frames from the wire for the KS8851, and resets; first byte: the CPU,
 * the FIFO depth (1, 16, 256) and the SCLK.
 *
 * Invariants: the PCI interrupt line follows the function's INTA; the
 * recording device is clocked only while selected and told select/release
 * alternately; the bus carried no byte the controller did not shift;
 * the FIFO occupancy registers stay below the depth; the KS8851's line
 * follows its INTRN.  docs/fuzzing.md. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "devices/bus/spi.h"
#include "devices/bus/xilinx_spi.h"
#include "devices/net/ks8851.h"
#include "devices/netdev/netdev.h"
#include "devices/netdev/netdev_internal.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "fuzz_common.h"

#define MAX_LEN 8192u
#define BAR0    0xf0000000u
#define KS_IRQ  7u

static const uint8_t NIC_MAC[6] = {0x02, 0x45, 0x31, 0x30, 0x30, 0x30};

typedef struct fzx {
    nm_config *cfg;
    nm_machine *m;
    void *xspi, *ks;
    nm_pci_device *pci;
    nm_spi_bus *bus;
    unsigned irq, depth;
    nm_net_endpoint ep;
    bool selected;
    uint8_t shift;
    uint64_t selects, releases;
} fzx;

static fzx F;

static void rec_select(void *opaque, bool sel)
{
    (void)opaque;
    FZ_CHECK(sel != F.selected, "the device on CS 0 told select(%d) twice", sel);
    F.selected = sel;
    if (sel)
        F.selects++;
    else
        F.releases++;
}

static uint8_t rec_exchange(void *opaque, uint8_t mosi)
{
    (void)opaque;
    FZ_CHECK(F.selected, "the device on CS 0 clocked while not selected");
    uint8_t out = (uint8_t)~F.shift;
    F.shift = mosi;
    return out;
}

static const nm_spi_device_ops rec_ops = {rec_select, rec_exchange};

static void wire_receive(void *opaque, const uint8_t *frame, size_t len)
{
    (void)opaque;
    /* The KS8851's TXQ byte counts are 1..2000, padded and given an FCS
     * only when TXCR says so (fuzz_ks8851.c). */
    FZ_CHECK(len >= 1 && len <= 2000u + NM_ETH_FCS_BYTES, "a %zu-byte frame on the wire", len);
    fz_read_frame(frame, len);
}

static void setup(uint8_t how)
{
    static const char *const cpus[4] = {"486dx2-66", "pentium-100", "386dx-40", "pentium-133"};
    static const unsigned depths[4] = {16, 1, 256, 16};
    static const char *const sclks[4] = {"25000000", "40000000", "1000000", "100000000"};
    GError *err = NULL;
    memset(&F, 0, sizeof F);
    F.cfg = nm_config_new();
    g_free(F.cfg->cpu);
    F.cfg->cpu = g_strdup(cpus[how & 3]);
    F.cfg->ram_bytes = 1u << 20;
    F.m = nm_machine_new(F.cfg, &err);
    if (!F.m) fz_fail("fixture: %s", err->message);
    if (!nm_machine_add_device(F.m, &nm_pci_host_class, NULL, &err))
        fz_fail("fixture: %s", err->message);
    F.depth = depths[how >> 2 & 3];
    nm_devcfg *d = nm_net_devcfg_new("fuzz xilinx-spi", "xilinx-spi");
    g_autofree char *fifo = g_strdup_printf("%u", F.depth);
    nm_net_devcfg_put(d, "fifo", fifo);
    nm_net_devcfg_put(d, "sclk", sclks[how >> 4 & 3]);
    nm_net_devcfg_put(d, "chip_selects", "2");
    g_free(d->name);
    d->name = g_strdup("spi0");
    F.xspi = nm_machine_add_device(F.m, &nm_xilinx_spi_class, d, &err);
    nm_devcfg_free(d);
    if (!F.xspi) fz_fail("fixture: %s", err->message);
    F.bus = nm_xilinx_spi_bus(F.xspi);
    if (!nm_spi_bus_attach(F.bus, 0, "recorder", 0, &rec_ops, NULL, &err))
        fz_fail("fixture: %s", err->message);
    d = nm_net_devcfg_new("fuzz ks8851", "ks8851");
    nm_net_devcfg_put(d, "spi", "spi0");
    nm_net_devcfg_put(d, "cs", "1");
    nm_net_devcfg_put(d, "irq", "7");
    nm_net_devcfg_put(d, "mac", "02:45:31:30:30:30");
    nm_net_devcfg_put(d, "net", "hub:fz");
    F.ks = nm_machine_add_device(F.m, &nm_ks8851_class, d, &err);
    nm_devcfg_free(d);
    if (!F.ks) fz_fail("fixture: %s", err->message);
    F.ep.name = "fuzz-station";
    F.ep.receive = wire_receive;
    if (!nm_net_attach(F.m, &F.ep, "hub:fz", 100000000, NULL, "fuzz", &err))
        fz_fail("fixture: %s", err->message);
    nm_pci_host *h = nm_pci_host_find(F.m);
    F.pci = nm_pci_host_device(h, NM_PCI_DEVFN(1, 0));
    FZ_CHECK(F.pci, "no controller at 00:01.0");
    F.irq = nm_pci_route_irq(h, 1, 1);
    nm_pci_config_write(F.pci, NM_PCI_BAR0, BAR0, 4);
    nm_pci_config_write(F.pci, NM_PCI_COMMAND, NM_PCI_CMD_MEM, 2);
}

static uint32_t bar0(void)
{
    return nm_pci_bar_address(F.pci, 0);
}

static void check(void)
{
    FZ_CHECK(nm_irq_level(&F.m->irq, F.irq) == F.pci->irq_level,
             "PCI IRQ %u is %d but the controller's INTA is %d", F.irq,
             nm_irq_level(&F.m->irq, F.irq), F.pci->irq_level);
    FZ_CHECK(nm_irq_level(&F.m->irq, KS_IRQ) == nm_ks8851_irq_asserted(F.ks),
             "IRQ %u is %d but the KS8851's INTRN is %d", KS_IRQ, nm_irq_level(&F.m->irq, KS_IRQ),
             nm_ks8851_irq_asserted(F.ks));
    FZ_CHECK(F.selects - F.releases == (uint64_t)F.selected, "%llu selects, %llu releases",
             (unsigned long long)F.selects, (unsigned long long)F.releases);
    FZ_CHECK(F.selected == (nm_spi_bus_cs(F.bus) & 1), "CS 0 is %d, the device thinks %d",
             nm_spi_bus_cs(F.bus) & 1, F.selected);
    nm_spi_stats bs;
    nm_spi_bus_stats(F.bus, &bs);
    const nm_xspi_stats *xs = nm_xilinx_spi_stats(F.xspi);
    /* Equal but for loopback (CR.LOOP: the byte never reaches the bus). */
    FZ_CHECK(bs.bytes <= xs->bytes, "the controller shifted %llu bytes, the bus carried %llu",
             (unsigned long long)xs->bytes, (unsigned long long)bs.bytes);
}

/* The occupancy registers (PG153: occupancy - 1, valid while not empty). */
static void check_fifos(void)
{
    /* Only where the BAR decodes (not over RAM, the boot ROM or at 0). */
    uint32_t base = bar0();
    if (!(nm_pci_command(F.pci) & NM_PCI_CMD_MEM) || base < 0x100000u || base >= 0xfff00000u)
        return;
    uint32_t tx = nm_mem_read(F.m->mem, base + NM_XSPI_TXOCY, 4);
    uint32_t rx = nm_mem_read(F.m->mem, base + NM_XSPI_RXOCY, 4);
    FZ_CHECK(tx < F.depth && rx < F.depth, "FIFO occupancy TX %u RX %u with depth %u", tx, rx,
             F.depth);
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
        switch (op % 9) {
        case 0: { /* one of the documented registers, dword */
            static const uint8_t regs[] = {NM_XSPI_DGIER, NM_XSPI_IPISR, NM_XSPI_IPIER, NM_XSPI_SRR,
                                           NM_XSPI_CR,    NM_XSPI_SR,    NM_XSPI_DTR,   NM_XSPI_DRR,
                                           NM_XSPI_SSR,   NM_XSPI_TXOCY, NM_XSPI_RXOCY};
            uint8_t r = fz_u8(&in);
            nm_mem_write(F.m->mem, bar0() + regs[r % sizeof regs], fz_u32(&in), 4);
            break;
        }
        case 1: {
            uint8_t r = fz_u8(&in);
            (void)nm_mem_read(F.m->mem, bar0() + ((r & 0x1f) << 2) + 0x1c, 4);
            break;
        }
        case 2: { /* any size at any offset of the BAR */
            uint8_t s = fz_u8(&in);
            uint32_t off = fz_u16(&in) % NM_XSPI_BAR_SIZE;
            nm_mem_write(F.m->mem, bar0() + off, fz_u32(&in), fz_size(s));
            break;
        }
        case 3: {
            uint8_t s = fz_u8(&in);
            (void)nm_mem_read(F.m->mem, bar0() + fz_u16(&in) % NM_XSPI_BAR_SIZE, fz_size(s));
            break;
        }
        case 4: { /* a burst into DTR: up to 32 bytes */
            unsigned n = 1u + (fz_u8(&in) & 31);
            for (unsigned i = 0; i < n; i++)
                nm_mem_write(F.m->mem, bar0() + NM_XSPI_DTR, fz_u8(&in), 4);
            break;
        }
        case 5: fz_run_ns(c, ((uint64_t)fz_u16(&in) + 1) * 64); break;
        case 6: { /* configuration write: BAR, command */
            uint8_t a = fz_u8(&in), reg = fz_u8(&in);
            nm_pci_config_write(F.pci, reg & 0xfc, fz_u32(&in), fz_size(a));
            break;
        }
        case 7: fz_wire_frame(&in, &F.ep, NIC_MAC, 1600, 2100); break;
        case 8: nm_machine_reset(F.m); break;
        }
        fz_settle(c);
        check();
        check_fifos();
    }
    fz_run_ns(c, 10u * 1000 * 1000);
    check();
    uint64_t counts[2] = {F.selects, F.releases};
    fz_digest(F.m, counts, sizeof counts);
    nm_machine_free(F.m);
    nm_config_free(F.cfg);
    return 0;
}
