/* libFuzzer target: the PC board devices (devices/pc/: the 8259A pair and
 * ELCR, the 8254 and port 0x61, the 16550A, the MC146818 RTC, port 0x92,
 * the FPU error latch (port 0xF0, IRQ 13), the i8042, the POST and exit
 * ports) and the PCI host bridge's
 * configuration mechanism #1 at 0xCF8/0xCFC (devices/bus/pci.c), with an
 * e1000 on the bus so configuration cycles reach a real function.  The input
 * is a program: port writes and reads of any size on the ports those devices
 * claim (and anywhere in the 64 K space), the CPU's interrupt-acknowledge
 * cycle when INTR is up, bytes arriving on the serial line, virtual time
 * advancing, and machine resets.
 *
 * Checked beyond the sanitizers: the event queue stays consistent and never
 * storms (a PIT or UART timer re-arming itself without delay); at the
 * end, the RTC's status registers C and D read back with the bits the
 * datasheet fixes at 0 clear and VRT set.  docs/fuzzing.md. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "devices/bus/pci.h"
#include "devices/net/e1000.h"
#include "devices/pc/pc.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "fuzz_common.h"

#define MAX_LEN 4096u

/* The ports the board devices claim (the fuzzer picks by index). */
static const uint16_t PORTS[] = {
    0x20,  0x21,  0xa0,  0xa1,  0x4d0, 0x4d1,                      /* PIC, ELCR */
    0x40,  0x41,  0x42,  0x43,  0x61,                              /* PIT, port 0x61 */
    0x3f8, 0x3f9, 0x3fa, 0x3fb, 0x3fc, 0x3fd, 0x3fe, 0x3ff,        /* COM1 */
    0x70,  0x71,                                                   /* RTC */
    0x92,  0x60,  0x64,                                            /* port 92, i8042 */
    0x80,  0xcf8, 0xcf9, 0xcfa, 0xcfb, 0xcfc, 0xcfd, 0xcfe, 0xcff, /* POST, PCI */
    0xf0,                                                          /* the FPU error latch */
};
#define NPORTS (sizeof PORTS / sizeof PORTS[0])

typedef struct fzpc {
    nm_config *cfg;
    nm_machine *m;
    void *uart;
    uint64_t acks;
} fzpc;

static void *add(fzpc *f, const nm_device_class *cls, const char *spec)
{
    GError *err = NULL;
    nm_devcfg *d = NULL;
    if (spec && !(d = nm_devcfg_parse("fuzz", spec, &err))) fz_fail("fixture: %s", err->message);
    void *dev = nm_machine_add_device(f->m, cls, d, &err);
    if (d) nm_devcfg_free(d);
    if (!dev) fz_fail("fixture: %s: %s", cls->name, err->message);
    return dev;
}

static void setup(fzpc *f, uint8_t how)
{
    static const char *const cpus[4] = {"486dx2-66", "386dx-40", "pentium-100", "486dx-33"};
    GError *err = NULL;
    memset(f, 0, sizeof *f);
    f->cfg = nm_config_new();
    g_free(f->cfg->cpu);
    f->cfg->cpu = g_strdup(cpus[how & 3]);
    f->cfg->ram_bytes = 1u << 20;
    f->m = nm_machine_new(f->cfg, &err);
    if (!f->m) fz_fail("fixture: %s", err->message);
    /* As the board (emu/pc.c) builds them, in its order; the exit port is
     * the one that ends a run, which here just records the request. */
    add(f, &nm_pic_class, NULL);
    add(f, &nm_pit_class, NULL);
    f->uart = add(f, &nm_uart_class, (how & 4) ? "uart,file=none,tx=fast" : "uart,file=none");
    add(f, &nm_rtc_class, NULL);
    add(f, &nm_port92_class, NULL);
    add(f, &nm_fpuerr_class, NULL);
    add(f, &nm_i8042_class, NULL);
    add(f, &nm_postcode_class, NULL);
    add(f, &nm_exitport_class, NULL);
    add(f, &nm_pci_host_class, NULL);
    add(f, &nm_e1000_class, NULL);
}

static void teardown(fzpc *f)
{
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

/* The CPU's interrupt-acknowledge cycle, when INTR is up. */
static void inta(fzpc *f)
{
    if (!f->m->intr || !f->m->intc.acknowledge) return;
    f->m->intc.acknowledge(f->m->intc.opaque);
    f->acks++;
}

static void check_end(fzpc *f)
{
    nm_ioport_map *io = f->m->io;
    /* MC146818: register C bits 3-0 and register D bits 6-0 read 0, D.VRT
     * (bit 7) reads 1 while the battery is good. */
    nm_io_write(io, 0x70, 0x0c, 1);
    uint8_t c = (uint8_t)nm_io_read(io, 0x71, 1);
    nm_io_write(io, 0x70, 0x0d, 1);
    uint8_t d = (uint8_t)nm_io_read(io, 0x71, 1);
    FZ_CHECK((c & 0x0f) == 0, "RTC register C reads 0x%02x: bits 3-0 must be 0", c);
    FZ_CHECK(d == 0x80, "RTC register D reads 0x%02x: must be VRT alone", d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_LEN) return -1;
    fz_in in = {data, size};
    fzpc f;
    setup(&f, fz_u8(&in));
    nm_clock *c = &f.m->clock;
    while (fz_more(&in)) {
        uint8_t op = fz_u8(&in);
        switch (op % 9) {
        case 0: { /* OUT byte to a board port */
            uint16_t port = PORTS[fz_u8(&in) % NPORTS];
            nm_io_write(f.m->io, port, fz_u8(&in), 1);
            break;
        }
        case 1: nm_io_read(f.m->io, PORTS[fz_u8(&in) % NPORTS], 1); break;
        case 2: { /* OUT of any size (PCI's dword ports, split accesses) */
            uint8_t a = fz_u8(&in);
            uint16_t port = PORTS[fz_u8(&in) % NPORTS];
            nm_io_write(f.m->io, port, fz_u32(&in), fz_size(a));
            break;
        }
        case 3: {
            uint8_t a = fz_u8(&in);
            nm_io_read(f.m->io, PORTS[fz_u8(&in) % NPORTS], fz_size(a));
            break;
        }
        case 4: { /* a PCI configuration dword: address, then data */
            uint32_t addr = fz_u32(&in);
            uint8_t a = fz_u8(&in);
            nm_io_write(f.m->io, 0xcf8, addr, 4);
            if (a & 1)
                nm_io_write(f.m->io, (uint16_t)(0xcfc + ((a >> 1) & 3)), fz_u32(&in),
                            fz_size(a >> 3));
            else
                nm_io_read(f.m->io, (uint16_t)(0xcfc + ((a >> 1) & 3)), fz_size(a >> 3));
            break;
        }
        case 5: inta(&f); break;
        case 6: fz_run_ns(c, ((uint64_t)fz_u16(&in) + 1) * 1024); break;
        case 7: { /* bytes on the serial line */
            uint8_t b[16];
            size_t n = (fz_u8(&in) & 15) + 1u;
            fz_bytes(&in, b, n);
            nm_uart_receive(f.uart, b, n);
            break;
        }
        case 8: { /* anywhere in the port space, or a machine reset */
            uint16_t port = fz_u16(&in);
            uint8_t a = fz_u8(&in);
            if (a == 0xff)
                nm_machine_reset(f.m);
            else if (a & 1)
                nm_io_write(f.m->io, port, fz_u32(&in), fz_size(a >> 1));
            else
                nm_io_read(f.m->io, port, fz_size(a >> 1));
            break;
        }
        }
        fz_settle(c);
    }
    fz_run_ns(c, 10u * 1000 * 1000);
    inta(&f);
    check_end(&f);
    fz_digest(f.m, &f.acks, sizeof f.acks);
    teardown(&f);
    return 0;
}
