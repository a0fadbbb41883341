/* libFuzzer target: the 8390 NICs (devices/net/dp8390.c behind ne2000.c and
 * wd8013.c).  The input is a program: port reads and writes (any size) at
 * the board's 32 ports, WD8013 shared-memory accesses anywhere in the ISA
 * memory space (the guest may move the window), frames arriving from the
 * wire, virtual time advancing, and board/machine resets.  The first byte
 * picks the board and the CPU clock.
 *
 * Checked beyond what the sanitizers see: the interrupt line the board
 * drives follows the 8390's INT output (and, on the WD8013, the IRQ its
 * registers select, every other line it could use low); the core never
 * stores more frames than arrived or looped back; frames it puts on the
 * wire have a sane length; its write-only registers read back (page 2)
 * within their documented widths; the event queue stays consistent and
 * never storms.  docs/fuzzing.md. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "devices/net/dp8390.h"
#include "devices/netdev/netdev.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "fuzz_common.h"

#define NE_IO   0x300u
#define NE_IRQ  9u
#define WD_IO   0x280u
#define WD_MEM  0xd0000u
#define RAM     (1u << 20)
#define MAX_LEN 4096u /* libFuzzer -max_len the corpus is made for */

static const uint8_t NIC_MAC[6] = {0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc};
static const uint8_t WD_IRQS[8] = {9, 3, 5, 7, 10, 11, 15, 4}; /* wd8013.c irq_map */

typedef struct fz8390 {
    nm_config *cfg;
    nm_machine *m;
    nm_dp8390 *nic;
    bool wd;
    uint16_t io;
    nm_net_endpoint ep;
    uint64_t frames_sent; /* by us, towards the NIC */
    uint64_t frames_seen; /* from the NIC */
} fz8390;

static void wire_receive(void *opaque, const uint8_t *frame, size_t len)
{
    fz8390 *f = opaque;
    FZ_CHECK(len > 0 && len <= NM_NET_MAX_WIRE_FRAME, "the NIC put a %zu-byte frame on the wire",
             len);
    fz_read_frame(frame, len);
    f->frames_seen++;
}

static void outp(fz8390 *f, uint16_t port, uint32_t v, unsigned size)
{
    nm_io_write(f->m->io, port, v, size);
}
static uint32_t inp(fz8390 *f, uint16_t port, unsigned size)
{
    return nm_io_read(f->m->io, port, size);
}

static bool setup(fz8390 *f, uint8_t how)
{
    static const char *const cpus[4] = {"486dx2-66", "386dx-40", "pentium-100", "486dx-33"};
    GError *err = NULL;
    memset(f, 0, sizeof *f);
    f->wd = how & 1;
    f->io = (uint16_t)(f->wd ? WD_IO : NE_IO);
    f->cfg = nm_config_new();
    g_free(f->cfg->cpu);
    f->cfg->cpu = g_strdup(cpus[(how >> 1) & 3]);
    f->cfg->ram_bytes = RAM;
    const char *spec = f->wd ? "wd8013,io=0x280,irq=10,mem=0xd0000,mac=52:54:00:aa:bb:cc,net=hub:fz"
                             : "ne2000,io=0x300,irq=9,mac=52:54:00:aa:bb:cc,net=hub:fz";
    if (!nm_config_add_device_spec(f->cfg, "--nic", spec, &err)) goto fail;
    f->m = nm_machine_new(f->cfg, &err);
    if (!f->m) goto fail;
    for (guint i = 0; i < f->m->devices->len; i++) {
        nm_device_instance *inst = f->m->devices->pdata[i];
        if (!strcmp(inst->cls->name, "ne2000")) f->nic = nm_ne2000_nic(inst->state);
        if (!strcmp(inst->cls->name, "wd8013")) f->nic = nm_wd8013_nic(inst->state);
    }
    FZ_CHECK(f->nic, "no 8390 in the machine");
    f->ep.name = "fuzz-station";
    f->ep.opaque = f;
    f->ep.receive = wire_receive;
    if (!nm_net_attach(f->m, &f->ep, "hub:fz", 10000000, NULL, "fuzz", &err)) goto fail;
    return true;
fail:
    fz_fail("fixture: %s", err ? err->message : "?");
}

static void teardown(fz8390 *f)
{
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

/* The interrupt line(s) the board drives follow the 8390's INT output. */
static void check_irq(fz8390 *f)
{
    bool nic = nm_dp8390_irq_level(f->nic);
    if (!f->wd) {
        FZ_CHECK(nm_irq_level(&f->m->irq, NE_IRQ) == nic,
                 "NE2000 IRQ %u is %d but the 8390's INT is %d", NE_IRQ,
                 nm_irq_level(&f->m->irq, NE_IRQ), nic);
        return;
    }
    /* ICR.IR2 and IRR.IR1..0 select the line, IRR.IEN gates it (these two
     * reads have no side effects). */
    uint8_t icr = (uint8_t)inp(f, WD_IO + 1, 1), irr = (uint8_t)inp(f, WD_IO + 4, 1);
    unsigned line = WD_IRQS[((irr >> 5) & 3) | ((icr & 0x04) ? 4 : 0)];
    bool want = nic && (irr & 0x80);
    for (unsigned i = 0; i < 8; i++) {
        unsigned l = WD_IRQS[i];
        bool level = nm_irq_level(&f->m->irq, l);
        FZ_CHECK(level == (l == line ? want : false),
                 "WD8013 IRQ %u is %d (selected line %u, INT %d, IEN %d)", l, level, line, nic,
                 (irr & 0x80) != 0);
    }
}

static void check_counts(fz8390 *f)
{
    const nm_dp8390_stats *st = nm_dp8390_get_stats(f->nic);
    /* Every stored frame arrived from the wire or was looped back. */
    FZ_CHECK(st->rx_frames <= f->frames_sent + st->tx_frames,
             "8390 stored %llu frames; %llu arrived, %llu sent (loopback)",
             (unsigned long long)st->rx_frames, (unsigned long long)f->frames_sent,
             (unsigned long long)st->tx_frames);
    FZ_CHECK(f->frames_seen <= st->tx_frames, "%llu frames on the wire, the 8390 sent %llu",
             (unsigned long long)f->frames_seen, (unsigned long long)st->tx_frames);
}

/* End of the program: the write-only registers read back through page 2
 * within the widths the datasheet gives them. */
static void check_registers(fz8390 *f)
{
    uint16_t nic = (uint16_t)(f->wd ? WD_IO + 0x10 : NE_IO);
    uint8_t cr = (uint8_t)inp(f, nic, 1);
    FZ_CHECK(((cr & 0x03) == 0x01) || ((cr & 0x03) == 0x02),
             "CR 0x%02x: not exactly one of STP/STA", cr);
    /* Page 2, remote DMA aborted, STP/STA as they are (no TXP). */
    outp(f, nic, 0xa0 | (cr & 0x03), 1);
    uint8_t rcr = (uint8_t)inp(f, nic + 0x0c, 1), tcr = (uint8_t)inp(f, nic + 0x0d, 1);
    uint8_t dcr = (uint8_t)inp(f, nic + 0x0e, 1), imr = (uint8_t)inp(f, nic + 0x0f, 1);
    FZ_CHECK(rcr <= 0x3f && tcr <= 0x1f && dcr <= 0x7f && imr <= 0x7f,
             "page 2 readback out of range: RCR 0x%02x TCR 0x%02x DCR 0x%02x IMR 0x%02x", rcr, tcr,
             dcr, imr);
    outp(f, nic, 0x20 | (cr & 0x03), 1);
    check_irq(f);
}

/* Linux's NS8390_init with the fuzzer's choices, then start. */
static void init_macro(fz8390 *f, fz_in *in)
{
    uint16_t nic = (uint16_t)(f->wd ? WD_IO + 0x10 : NE_IO);
    uint8_t dcr = fz_u8(in), pstart = fz_u8(in), pstop = fz_u8(in), rcr = fz_u8(in),
            imr = fz_u8(in);
    if (f->wd) {
        outp(f, WD_IO + 5, 0x40 | 0x80 | 0x01, 1);          /* LAAR: 16-bit */
        outp(f, WD_IO, 0x40 | ((WD_MEM >> 13) & 0x3f), 1);  /* MSR: memory on */
        outp(f, WD_IO + 4, inp(f, WD_IO + 4, 1) | 0x80, 1); /* IRR.IEN */
    }
    outp(f, nic, 0x21, 1);
    outp(f, nic + 0x0e, dcr, 1);
    outp(f, nic + 0x0a, 0, 1);
    outp(f, nic + 0x0b, 0, 1);
    outp(f, nic + 0x0c, 0x20, 1);
    outp(f, nic + 0x0d, 0x02, 1);
    outp(f, nic + 0x04, pstart, 1);
    outp(f, nic + 0x01, pstart, 1);
    outp(f, nic + 0x03, (uint8_t)(pstop - 1), 1);
    outp(f, nic + 0x02, pstop, 1);
    outp(f, nic + 0x07, 0xff, 1);
    outp(f, nic + 0x0f, 0, 1);
    outp(f, nic, 0x61, 1);
    for (int i = 0; i < 6; i++)
        outp(f, nic + 1 + i, NIC_MAC[i], 1);
    for (int i = 0; i < 8; i++)
        outp(f, nic + 8 + i, 0xff, 1);
    outp(f, nic + 7, pstart, 1);
    outp(f, nic, 0x22, 1);
    outp(f, nic + 0x07, 0xff, 1);
    outp(f, nic + 0x0f, imr, 1);
    outp(f, nic + 0x0d, 0, 1);
    outp(f, nic + 0x0c, rcr, 1);
}

/* A frame from the wire: up to 1600 bytes, or any 16-bit length
 * (fz_wire_frame). */
static void frame_op(fz8390 *f, fz_in *in)
{
    fz_wire_frame(in, &f->ep, NIC_MAC, 1600, 65536);
    f->frames_sent++;
}

static void mem_addr(fz8390 *f, fz_in *in, uint32_t *addr, unsigned *size)
{
    (void)f;
    uint8_t sel = fz_u8(in);
    *size = fz_size(sel >> 1);
    /* Mostly the configured window, sometimes anywhere below 16 MB (the
     * guest can move the window with MSR/LAAR). */
    *addr = (sel & 1) ? WD_MEM + (fz_u16(in) & 0x3fff) : fz_u32(in) & 0xffffff;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_LEN) return -1;
    fz_in in = {data, size};
    fz8390 f;
    setup(&f, fz_u8(&in));
    nm_clock *c = &f.m->clock;
    while (fz_more(&in)) {
        uint8_t op = fz_u8(&in);
        switch (op % 13) {
        case 0: { /* OUT byte */
            uint16_t port = (uint16_t)(f.io + (fz_u8(&in) & 0x1f));
            outp(&f, port, fz_u8(&in), 1);
            break;
        }
        case 1: inp(&f, (uint16_t)(f.io + (fz_u8(&in) & 0x1f)), 1); break;
        case 2: { /* OUT of any size (16-bit data port, split accesses) */
            uint8_t a = fz_u8(&in);
            outp(&f, (uint16_t)(f.io + (a & 0x1f)), fz_u32(&in), fz_size(a >> 5));
            break;
        }
        case 3: {
            uint8_t a = fz_u8(&in);
            inp(&f, (uint16_t)(f.io + (a & 0x1f)), fz_size(a >> 5));
            break;
        }
        case 4: { /* REP OUTSW to the data port / a block into shared memory */
            unsigned n = fz_u8(&in) + 1u;
            uint16_t off = fz_u16(&in);
            for (unsigned i = 0; i < n && fz_more(&in); i++) {
                uint16_t w = fz_u16(&in);
                if (f.wd)
                    nm_mem_write(f.m->mem, WD_MEM + ((off + 2 * i) & 0x3fff), w, 2);
                else
                    outp(&f, (uint16_t)(NE_IO + 0x10), w, 2);
            }
            break;
        }
        case 5: { /* REP INSW */
            unsigned n = (fz_u8(&in) + 1u) * 4;
            uint16_t off = fz_u16(&in);
            for (unsigned i = 0; i < n; i++) {
                if (f.wd)
                    nm_mem_read(f.m->mem, WD_MEM + ((off + 2 * i) & 0x3fff), 2);
                else
                    inp(&f, (uint16_t)(NE_IO + 0x10), 2);
            }
            break;
        }
        case 6: frame_op(&f, &in); break;
        case 7: fz_run_ns(c, ((uint64_t)fz_u16(&in) + 1) * 256); break;
        case 8: {
            uint32_t addr;
            unsigned sz;
            mem_addr(&f, &in, &addr, &sz);
            nm_mem_write(f.m->mem, addr, fz_u32(&in), sz);
            break;
        }
        case 9: {
            uint32_t addr;
            unsigned sz;
            mem_addr(&f, &in, &addr, &sz);
            nm_mem_read(f.m->mem, addr, sz);
            break;
        }
        case 10: init_macro(&f, &in); break;
        case 11: nm_machine_reset(f.m); break;
        case 12: { /* transmit: TPSR, TBCR, CR = STA|TXP|abort DMA */
            uint16_t nic = (uint16_t)(f.wd ? WD_IO + 0x10 : NE_IO);
            uint8_t tpsr = fz_u8(&in);
            uint16_t tbcr = fz_u16(&in);
            outp(&f, nic, 0x22, 1);
            outp(&f, nic + 4, tpsr, 1);
            outp(&f, nic + 5, tbcr & 0xff, 1);
            outp(&f, nic + 6, tbcr >> 8, 1);
            outp(&f, nic, 0x26, 1);
            break;
        }
        }
        fz_settle(c);
        check_irq(&f);
        check_counts(&f);
    }
    /* Let what is in flight land, then look at the registers. */
    fz_run_ns(c, 20u * 1000 * 1000);
    check_counts(&f);
    check_registers(&f);
    uint64_t counts[2] = {f.frames_sent, f.frames_seen};
    fz_digest(f.m, counts, sizeof counts);
    teardown(&f);
    return 0;
}
