/* libFuzzer target: the Micrel KSZ8851SNL (devices/net/ks8851.c) behind an
 * SPI bus whose master is the harness (the bus alone: any byte stream and
 * chip-select pattern a controller could put on the wire reaches the chip).
 * The input is a program: register commands (any register, byte enables,
 * read or write, 0-4 data bytes, the chip select released or kept),
 * TXQ/RXQ FIFO commands with up to 4 KB of data, raw byte streams with the
 * chip select toggled anywhere (commands cut mid-byte-count), frames from
 * the wire at 100 Mbit/s (to the chip's MAC, broadcast, any length up to
 * 9000 bytes, with or without a good FCS), virtual time, SCLK changes and
 * resets.
 *
 * Invariants: the PIC line follows the chip's INTRN; frames on the wire
 * have a sane length and were counted as sent; frames received and the
 * SPI transaction count never exceed what the harness caused.
 * docs/fuzzing.md. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "devices/bus/spi.h"
#include "devices/net/ks8851.h"
#include "devices/netdev/netdev.h"
#include "devices/netdev/netdev_internal.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "fuzz_common.h"

#define MAX_LEN      8192u
#define IRQ          7u
#define KS_MAX_COUNT 2000u /* the largest TXQ byte count it takes (ks8851.c MAX_FRAME) */

static const uint8_t NIC_MAC[6] = {0x02, 0x45, 0x31, 0x30, 0x30, 0x30};

typedef struct fzk {
    nm_config *cfg;
    nm_machine *m;
    nm_spi_bus *bus;
    void *ks;
    nm_net_endpoint ep;
    uint64_t wire_frames, frames_in, selects;
} fzk;

static fzk F;

static void wire_receive(void *opaque, const uint8_t *frame, size_t len)
{
    (void)opaque;
    /* The TXQ takes byte counts 1..2000; TXCR.TXPE pads to 60 and TXCR.TXCRC
     * adds the FCS, and with both off a frame goes out as written, a runt
     * of one byte too (as the 8390 sends a short TBCR).  Nothing else. */
    FZ_CHECK(len >= 1 && len <= KS_MAX_COUNT + NM_ETH_FCS_BYTES,
             "the KS8851 put a %zu-byte frame on the wire", len);
    F.wire_frames++;
    fz_read_frame(frame, len);
}

static void setup(uint8_t how)
{
    static const char *const cpus[4] = {"486dx2-66", "pentium-100", "386dx-40", "pentium-133"};
    static const uint32_t sclks[4] = {25000000, 40000000, 12500000, 50000000};
    GError *err = NULL;
    memset(&F, 0, sizeof F);
    F.cfg = nm_config_new();
    g_free(F.cfg->cpu);
    F.cfg->cpu = g_strdup(cpus[how & 3]);
    F.cfg->ram_bytes = 1u << 20;
    F.m = nm_machine_new(F.cfg, &err);
    if (!F.m) fz_fail("fixture: %s", err->message);
    F.bus = nm_spi_bus_new(F.m, "spi0", 2, sclks[how >> 2 & 3], &err);
    if (!F.bus) fz_fail("fixture: %s", err->message);
    nm_devcfg *d = nm_net_devcfg_new("fuzz ks8851", "ks8851");
    nm_net_devcfg_put(d, "spi", "spi0");
    nm_net_devcfg_put(d, "cs", (how & 0x10) ? "1" : "0");
    nm_net_devcfg_put(d, "irq", "7");
    nm_net_devcfg_put(d, "mac", "02:45:31:30:30:30");
    nm_net_devcfg_put(d, "eeprom", (how & 0x20) ? "1" : "0");
    nm_net_devcfg_put(d, "net", "hub:fz");
    F.ks = nm_machine_add_device(F.m, &nm_ks8851_class, d, &err);
    nm_devcfg_free(d);
    if (!F.ks) fz_fail("fixture: %s", err->message);
    F.ep.name = "fuzz-station";
    F.ep.receive = wire_receive;
    if (!nm_net_attach(F.m, &F.ep, "hub:fz", 100000000, NULL, "fuzz", &err))
        fz_fail("fixture: %s", err->message);
}

static void cs(bool on)
{
    uint32_t before = nm_spi_bus_cs(F.bus);
    nm_spi_bus_set_cs(F.bus, on ? 3u : 0u); /* both lines: the chip's is one of them */
    if (on && !before) F.selects++;
}

static void xfer(uint8_t b)
{
    (void)nm_spi_bus_exchange(F.bus, b);
}

static void check(void)
{
    FZ_CHECK(nm_irq_level(&F.m->irq, IRQ) == nm_ks8851_irq_asserted(F.ks),
             "IRQ %u is %d but INTRN is %d", IRQ, nm_irq_level(&F.m->irq, IRQ),
             nm_ks8851_irq_asserted(F.ks));
    const nm_ks8851_stats *st = nm_ks8851_get_stats(F.ks);
    FZ_CHECK(st->spi_transactions <= F.selects, "%llu SPI transactions from %llu selects",
             (unsigned long long)st->spi_transactions, (unsigned long long)F.selects);
    FZ_CHECK(st->rx_frames <= F.frames_in, "%llu frames received of %llu sent to it",
             (unsigned long long)st->rx_frames, (unsigned long long)F.frames_in);
    FZ_CHECK(F.wire_frames <= st->tx_frames, "%llu frames on the wire, %llu sent",
             (unsigned long long)F.wire_frames, (unsigned long long)st->tx_frames);
}

/* A register command: opcode (read 00 / write 01), byte enables, register
 * (datasheet "SPI Interface": two command bytes), then data. */
static void reg_op(fz_in *in)
{
    uint8_t a = fz_u8(in), reg = fz_u8(in);
    unsigned be = (a & 0x10) ? (a & 0xf) : (reg & 2 ? 0xc : 0x3);
    unsigned op = (a & 0x20) ? 0x40 : 0x00;
    uint16_t w = (uint16_t)((be << 2) | ((unsigned)reg << 10) | (reg >> 6) | op);
    cs(true);
    xfer((uint8_t)w);
    xfer((uint8_t)(w >> 8));
    unsigned n = (a >> 6) + 1u;
    if (a & 0x80 && a & 0x40) n = 0; /* cut after the command */
    for (unsigned i = 0; i < n; i++)
        xfer(fz_u8(in));
    if (!(fz_u8(in) & 1)) cs(false);
}

/* A FIFO command (RXQ read 10 / TXQ write 11) and up to 4 KB of data. */
static void fifo_op(fz_in *in)
{
    uint8_t a = fz_u8(in);
    size_t n = fz_u16(in) % 4096u;
    cs(true);
    xfer((a & 1) ? 0xc0 : 0x80);
    uint8_t *buf = g_malloc(n + 1);
    fz_bytes(in, buf, n);
    if (a & 2 && n >= 4) { /* a TXQ header: control word, byte count */
        buf[2] = (uint8_t)(n - 4);
        buf[3] = (uint8_t)((n - 4) >> 8);
    }
    for (size_t i = 0; i < n; i++)
        xfer(buf[i]);
    g_free(buf);
    if (!(a & 4)) cs(false);
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
        switch (op % 8) {
        case 0: reg_op(&in); break;
        case 1: fifo_op(&in); break;
        case 2: { /* raw bytes, the chip select toggled by bit 7 of each */
            unsigned n = 1u + (fz_u8(&in) & 31);
            for (unsigned i = 0; i < n; i++) {
                uint8_t b = fz_u8(&in);
                if (b & 0x80) cs(!nm_spi_bus_cs(F.bus));
                xfer(b);
            }
            break;
        }
        case 3: cs(false); break;
        case 4:
            F.frames_in++;
            fz_wire_frame(&in, &F.ep, NIC_MAC, 1600, 9000);
            break;
        case 5: fz_run_ns(c, ((uint64_t)fz_u16(&in) + 1) * 256); break;
        case 6: nm_spi_bus_set_sclk(F.bus, 100000u + fz_u32(&in) % 80000000u); break;
        case 7: nm_machine_reset(F.m); break;
        }
        fz_settle(c);
        check();
    }
    cs(false);
    fz_run_ns(c, 20u * 1000 * 1000); /* frames in flight land */
    check();
    uint64_t counts[3] = {F.wire_frames, F.frames_in, F.selects};
    fz_digest(F.m, counts, sizeof counts);
    nm_machine_free(F.m);
    nm_config_free(F.cfg);
    return 0;
}
