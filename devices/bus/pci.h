/* The PCI bus: a host bridge answering configuration mechanism #1 at
 * 0xCF8/0xCFC (PCI Local Bus spec 2.1, 3.7.4.1), bus 0 only, and the
 * interface a PCI device uses: a 256-byte configuration space with
 * per-byte write masks, up to six BARs the guest places, INTx routed to the
 * PIC, and bus-master DMA checked against the command register.
 *
 * There is no PCI BIOS: Linux probes with conf1 directly (pci=direct,
 * CONFIG_PCI_GODIRECT) and assigns BARs itself, so every BAR comes out of
 * reset unassigned (0) and decoding off.  What a BIOS would otherwise leave
 * behind for the OS - the Interrupt Line register holding the PIC input the
 * device's pin is wired to - the host fills in at reset.
 *
 * A device embeds an nm_pci_device in its state:
 *
 *     nm_pci_device_init(&s->pci, "e1000", 0x8086, 0x100e, 0x02, 0x020000, 1);
 *     nm_pci_device_set_bar_mem(&s->pci, 0, 0x20000, false, &mmio_ops, s, NULL, err);
 *     nm_pci_device_set_bar_io(&s->pci, 1, 8, &io_ops, s, NULL, err);
 *     nm_pci_register(nm_pci_host_find(m), &s->pci, -1, err);
 *     ...
 *     nm_pci_set_irq(&s->pci, true);          (INTx, level)
 *     nm_pci_dma_read(&s->pci, addr, buf, n);  (bus master)
 *     ...
 *     nm_pci_unregister(&s->pci);              (in destroy) */
#ifndef NICEMU_PCI_H
#define NICEMU_PCI_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/core/device.h"
#include "emu/core/ioport.h"
#include "emu/core/memmap.h"

typedef struct nm_pci_host nm_pci_host;
typedef struct nm_pci_device nm_pci_device;

/* Configuration header offsets (type 0 header, PCI 2.1, 6.1). */
enum {
    NM_PCI_VENDOR_ID = 0x00,
    NM_PCI_DEVICE_ID = 0x02,
    NM_PCI_COMMAND = 0x04,
    NM_PCI_STATUS = 0x06,
    NM_PCI_REVISION = 0x08,
    NM_PCI_CLASS_PROG = 0x09, /* class code: prog-if 0x09, subclass 0x0A, base 0x0B */
    NM_PCI_CACHE_LINE = 0x0c,
    NM_PCI_LATENCY = 0x0d,
    NM_PCI_HEADER_TYPE = 0x0e,
    NM_PCI_BIST = 0x0f,
    NM_PCI_BAR0 = 0x10, /* BARn at 0x10 + 4n, n < 6 */
    NM_PCI_CARDBUS_CIS = 0x28,
    NM_PCI_SUBSYS_VENDOR = 0x2c,
    NM_PCI_SUBSYS_ID = 0x2e,
    NM_PCI_ROM_BAR = 0x30,
    NM_PCI_CAP_PTR = 0x34,
    NM_PCI_INT_LINE = 0x3c,
    NM_PCI_INT_PIN = 0x3d,
    NM_PCI_MIN_GNT = 0x3e,
    NM_PCI_MAX_LAT = 0x3f,
};

/* Command register bits (PCI 2.1, 6.2.2). */
#define NM_PCI_CMD_IO     0x0001u
#define NM_PCI_CMD_MEM    0x0002u
#define NM_PCI_CMD_MASTER 0x0004u
#define NM_PCI_CMD_PARITY 0x0040u
#define NM_PCI_CMD_SERR   0x0100u
/* Status register bits (6.2.3). */
#define NM_PCI_STATUS_CAP_LIST         0x0010u
#define NM_PCI_STATUS_DEVSEL_MEDIUM    0x0200u
#define NM_PCI_STATUS_RCV_MASTER_ABORT 0x2000u

#define NM_PCI_BARS            6
#define NM_PCI_DEVFN(slot, fn) ((uint8_t)(((slot) << 3) | (fn)))

typedef enum { NM_PCI_BAR_NONE = 0, NM_PCI_BAR_MEM32, NM_PCI_BAR_IO } nm_pci_bar_type;

typedef struct nm_pci_bar {
    nm_pci_bar_type type;
    uint32_t size; /* power of two */
    bool prefetchable;
    /* What the BAR decodes to: MMIO region (created disabled at
     * registration) or I/O callbacks (claimed while decoded). */
    const nm_mmio_ops *mmio_ops;
    const nm_io_ops *io_ops;
    void *opaque;
    nm_bus_cost *cost;
    /* Host-managed mapping state. */
    char *name;
    nm_mem_region *region;
    nm_io_claim *claim;
    bool mapped;
    uint32_t mapped_base;
} nm_pci_bar;

struct nm_pci_device {
    /* Filled by nm_pci_device_init and the device before registration. */
    const char *name;
    uint8_t config[256];
    uint8_t wmask[256];   /* bits the guest may write */
    uint8_t w1cmask[256]; /* bits a guest 1 clears (status error bits) */
    nm_pci_bar bar[NM_PCI_BARS];
    /* Told after each guest configuration write (offset, size, value as
     * written); the stored bytes are already updated.  May be NULL. */
    void (*config_write)(void *opaque, nm_pci_device *d, uint8_t offset, unsigned size,
                         uint32_t value);
    void *opaque;

    /* Host-managed. */
    nm_pci_host *host;
    int devfn; /* -1 until registered */
    uint8_t reset_config[256];
    bool irq_level;
    uint64_t dma_bytes_read, dma_bytes_written, dma_refused;
};

/* ---- the host bridge ---- */

/* The device class "pci-host" (devices/registry.c): claims 0xCF8-0xCFF and
 * puts the host bridge at 00:00.0.  The board creates it with
 * nm_machine_add_device(m, &nm_pci_host_class, NULL, err) before any PCI
 * device, and programs the PIC's ELCR with nm_pci_host_irq_mask(). */
extern const nm_device_class nm_pci_host_class;

/* The machine's PCI host (NULL if it has none). */
nm_pci_host *nm_pci_host_find(nm_machine *m);

/* INTx routing, fixed like a motherboard's traces: slot S pin P (1 = INTA)
 * drives PIRQ (S - 1 + P - 1) mod 4 - the usual rotation, so the first slot's
 * INTA is PIRQ A - and PIRQ A..D are wired to PIC inputs 11, 5, 14, 15.
 * These avoid the ISA NIC defaults (NE2000 irq 9, WD8013 irq 10), COM1/COM2
 * (4, 3), the PIT/RTC/cascade (0, 8, 2); 14 and 15 are free because the
 * machine has no IDE.  They are level-triggered: the board sets their ELCR
 * bits (nm_pci_host_irq_mask) and keeps ISA devices off them. */
#define NM_PCI_PIRQ_IRQS                                                                           \
    {                                                                                              \
        11, 5, 14, 15                                                                              \
    }
unsigned nm_pci_host_pirq_irq(const nm_pci_host *h, unsigned pirq);
/* PIC inputs used by PCI (bit n = IRQ n): level-triggered, ELCR set. */
uint16_t nm_pci_host_irq_mask(const nm_pci_host *h);
/* The PIC input a slot's pin drives (0: pin 0 means no interrupt). */
unsigned nm_pci_route_irq(const nm_pci_host *h, unsigned slot, unsigned pin);

/* The function at devfn (NULL: absent). */
nm_pci_device *nm_pci_host_device(nm_pci_host *h, uint8_t devfn);

/* ---- the device side ---- */

/* Clears `d` and fills the header: IDs, revision, 24-bit class code,
 * interrupt pin (0 none, 1..4 INTA..INTD), header type 0, status DEVSEL
 * medium; write masks for command, cache line, latency, interrupt line. */
void nm_pci_device_init(nm_pci_device *d, const char *name, uint16_t vendor, uint16_t device,
                        uint8_t revision, uint32_t class_code, uint8_t int_pin);

/* Declare BAR n.  size: a power of two, memory >= 16 bytes, I/O 4..256
 * bytes (PCI 2.1, 6.2.5.1).  The callbacks see offsets into the BAR. */
bool nm_pci_device_set_bar_mem(nm_pci_device *d, unsigned n, uint32_t size, bool prefetchable,
                               const nm_mmio_ops *ops, void *opaque, nm_bus_cost *cost,
                               GError **err);
bool nm_pci_device_set_bar_io(nm_pci_device *d, unsigned n, uint32_t size, const nm_io_ops *ops,
                              void *opaque, nm_bus_cost *cost, GError **err);

/* Puts the function on bus 0 at devfn (-1: function 0 of the first free
 * slot from 1).  A function other than 0 needs function 0 of its slot
 * registered first (which then reports a multi-function header). */
bool nm_pci_register(nm_pci_host *h, nm_pci_device *d, int devfn, GError **err);
/* Unmaps the BARs, drops the interrupt and removes the function. */
void nm_pci_unregister(nm_pci_device *d);

/* INTx level.  Functions sharing a PIRQ are OR-ed: the PIC input is high
 * while any of them asserts. */
void nm_pci_set_irq(nm_pci_device *d, bool level);

/* Bus-master DMA into RAM.  Refused (nothing copied, false returned,
 * logged, Status "received master abort" set) when Bus Master Enable is
 * clear or the range is not all RAM. */
bool nm_pci_dma_read(nm_pci_device *d, uint32_t addr, void *buf, size_t len);
bool nm_pci_dma_write(nm_pci_device *d, uint32_t addr, const void *buf, size_t len);

/* Direct configuration access (the board, tests): same masks and effects
 * as a guest access through 0xCFC. */
uint32_t nm_pci_config_read(nm_pci_device *d, uint8_t offset, unsigned size);
void nm_pci_config_write(nm_pci_device *d, uint8_t offset, uint32_t value, unsigned size);

static inline uint16_t nm_pci_command(const nm_pci_device *d)
{
    return (uint16_t)(d->config[NM_PCI_COMMAND] | d->config[NM_PCI_COMMAND + 1] << 8);
}
/* The base address the guest programmed into BAR n (type bits removed). */
uint32_t nm_pci_bar_address(const nm_pci_device *d, unsigned n);

/* ---- bus timing of the CPU's accesses to a device (target accesses) ---- */

/* The PCI clock: 33 1/3 MHz, 30 ns a clock (PCI 2.1, 4.2.3.1 and 7.6.4.1:
 * Tcyc 30 ns minimum). */
#define NM_PCI_CLOCK_NS 30u
/* Defaults, in PCI clocks, of what one CPU access to a device BAR costs the
 * CPU (docs/pci.md "Bus timing" derives them):
 *   read (non-posted): the host bridge claims the CPU cycle and starts a PCI
 *     read (1), address phase (1), medium DEVSEL decode (2), the target's
 *     initial wait states before TRDY# (4, within the 16-clock limit of
 *     3.5.1.1), the data phase (1) and the bridge returning the data to
 *     the CPU (1): 10 clocks, 300 ns;
 *   write (posted): the bridge accepts the data into its posting buffer
 *     (1 synchronisation + 1 address + 1 data) and the CPU goes on while the
 *     PCI write runs: 3 clocks, 90 ns. */
#define NM_PCI_READ_CLOCKS  10u
#define NM_PCI_WRITE_CLOCKS 3u

/* One device's BAR timing: hand `cost` to its BARs (the memory/port map
 * charges it before the device sees any access: the posted-write cost),
 * and call nm_pci_bus_timing_read() first thing in each BAR read callback:
 * it charges what a read costs on top.  Costs follow the CPU clock (a model
 * swap mid-run changes them at the next access). */
typedef struct nm_pci_bus_timing {
    nm_bus_cost cost;
    nm_clock *clock;
    unsigned read_clocks, write_clocks; /* PCI clocks */
    uint32_t read_extra;                /* CPU cycles a read adds to cost */
    uint64_t cpu_num, cpu_den;          /* the CPU clock the costs are for */
    uint64_t reads, writes;
} nm_pci_bus_timing;

void nm_pci_bus_timing_init(nm_pci_bus_timing *t, nm_clock *clock, const char *name,
                            unsigned read_clocks, unsigned write_clocks);
/* Charges a read's extra wait and counts it (call from the read callback). */
void nm_pci_bus_timing_read(nm_pci_bus_timing *t);
/* Counts a write (its cost was charged by the map); rechecks the clock. */
void nm_pci_bus_timing_write(nm_pci_bus_timing *t);
/* CPU clocks charged so far for accesses through this timing. */
static inline uint64_t nm_pci_bus_timing_wait_clocks(const nm_pci_bus_timing *t)
{
    return t->cost.cycles_charged;
}
/* Virtual time (ns) a bus-master burst of `bytes` occupies the bus: an
 * address phase and 32 bits per data clock, plus arbitration and turnaround
 * (4 clocks) - for devices that pace their DMA; the CPU is not charged. */
uint64_t nm_pci_dma_burst_ns(size_t bytes);

/* A device's bus-timing counters in its snapshot section (emu/core/snapshot.h). */
typedef struct nm_snap nm_snap;
void nm_pci_bus_timing_snapshot(nm_pci_bus_timing *t, nm_snap *s);

#endif
