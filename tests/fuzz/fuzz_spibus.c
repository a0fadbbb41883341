/* libFuzzer target: the SPI bus (devices/bus/spi.c) on its own, the harness
 * its master.  The input is a program: chip-select masks over all 32 lines
 * (a bus of 1..32 lines, six recording devices at fuzzed chip selects, the
 * rest empty), bytes exchanged with any lines asserted, SCLK changes
 * (including ones faster than a device accepts) and resets.
 *
 * The harness keeps its own model of the bus and checks every step against
 * it: a device sees select(true)/select(false) alternately and exactly when
 * its line changes, released lines first; it exchanges bytes only while
 * selected; MISO is the AND of the selected devices' outputs (0xFF when none
 * drives it); the bus counters (bytes, bytes_unselected, selects,
 * contentions) equal the model's.  docs/fuzzing.md. */
#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "devices/bus/spi.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "fuzz_common.h"

#define MAX_LEN  8192u
#define N_DEVICE 6

typedef struct recorder {
    unsigned cs;
    bool attached, selected;
    uint8_t shift; /* answers each byte with a function of the one before */
    uint64_t selects, deselects, bytes;
} recorder;

typedef struct fzs {
    nm_config *cfg;
    nm_machine *m;
    nm_spi_bus *bus;
    unsigned lines;
    recorder dev[N_DEVICE];
    uint32_t cs_model;
    nm_spi_stats model;
    int order_phase; /* within one set_cs: 0 releases may come, 1 only selects */
} fzs;

static fzs F;

static void rec_select(void *opaque, bool sel)
{
    recorder *r = opaque;
    FZ_CHECK(sel != r->selected, "device at cs %u told select(%d) twice", r->cs, sel);
    bool line = F.cs_model >> r->cs & 1;
    FZ_CHECK(sel == line, "device at cs %u told select(%d) but its line is %d", r->cs, sel, line);
    if (sel)
        F.order_phase = 1;
    else
        FZ_CHECK(F.order_phase == 0, "cs %u released after another line was asserted", r->cs);
    r->selected = sel;
    if (sel)
        r->selects++;
    else
        r->deselects++;
}

static uint8_t rec_exchange(void *opaque, uint8_t mosi)
{
    recorder *r = opaque;
    FZ_CHECK(r->selected, "device at cs %u clocked a byte while not selected", r->cs);
    r->bytes++;
    uint8_t out = (uint8_t)(r->shift ^ (uint8_t)(0x11u * (r->cs + 1)));
    r->shift = mosi;
    return out;
}

static const nm_spi_device_ops rec_ops = {rec_select, rec_exchange};

static void setup(fz_in *in)
{
    GError *err = NULL;
    memset(&F, 0, sizeof F);
    F.cfg = nm_config_new();
    F.cfg->ram_bytes = 1u << 20;
    F.m = nm_machine_new(F.cfg, &err);
    if (!F.m) fz_fail("fixture: %s", err->message);
    F.lines = 1u + fz_u8(in) % NM_SPI_MAX_CS;
    uint64_t sclk = 100000u + fz_u32(in) % 100000000u;
    F.bus = nm_spi_bus_new(F.m, "spi0", F.lines, sclk, &err);
    if (!F.bus) fz_fail("fixture: %s", err->message);
    for (unsigned i = 0; i < N_DEVICE; i++) {
        recorder *r = &F.dev[i];
        uint8_t b = fz_u8(in);
        r->cs = b % NM_SPI_MAX_CS;
        /* Another device's line, or one past the bus: refused, and so no
         * device for this recorder. */
        r->attached = nm_spi_bus_attach(F.bus, r->cs, "recorder", (b & 0x80) ? 1000000u : 0,
                                        &rec_ops, r, &err);
        if (!r->attached) {
            bool taken = false;
            for (unsigned j = 0; j < i; j++)
                taken |= F.dev[j].attached && F.dev[j].cs == r->cs;
            FZ_CHECK(taken || r->cs >= F.lines, "attach at cs %u of %u refused: %s", r->cs, F.lines,
                     err->message);
            g_clear_error(&err);
        }
    }
}

static uint32_t line_mask(void)
{
    return F.lines >= 32 ? 0xffffffffu : (1u << F.lines) - 1u;
}

static void set_cs(uint32_t mask)
{
    uint32_t now = mask & line_mask();
    for (unsigned i = 0; i < F.lines; i++)
        if ((now >> i & 1) && !(F.cs_model >> i & 1)) F.model.selects++;
    F.cs_model = now;
    F.order_phase = 0;
    nm_spi_bus_set_cs(F.bus, mask);
    FZ_CHECK(nm_spi_bus_cs(F.bus) == now, "bus CS 0x%x, model 0x%x", nm_spi_bus_cs(F.bus), now);
}

static void exchange(uint8_t mosi)
{
    uint8_t want = 0xff;
    unsigned drivers = 0;
    for (unsigned i = 0; i < N_DEVICE; i++) {
        recorder *r = &F.dev[i];
        if (!r->attached || !(F.cs_model >> r->cs & 1)) continue;
        want &= (uint8_t)(r->shift ^ (uint8_t)(0x11u * (r->cs + 1)));
        drivers++;
    }
    F.model.bytes++;
    if (!F.cs_model) F.model.bytes_unselected++;
    if (drivers > 1) F.model.contentions++;
    uint8_t got = nm_spi_bus_exchange(F.bus, mosi);
    FZ_CHECK(got == want, "MISO 0x%02x, want 0x%02x (%u drivers)", got, want, drivers);
}

static void check(void)
{
    nm_spi_stats st;
    nm_spi_bus_stats(F.bus, &st);
    FZ_CHECK(!memcmp(&st, &F.model, sizeof st),
             "bus counters bytes %llu/%llu unselected %llu/%llu selects %llu/%llu contentions "
             "%llu/%llu (bus/model)",
             (unsigned long long)st.bytes, (unsigned long long)F.model.bytes,
             (unsigned long long)st.bytes_unselected, (unsigned long long)F.model.bytes_unselected,
             (unsigned long long)st.selects, (unsigned long long)F.model.selects,
             (unsigned long long)st.contentions, (unsigned long long)F.model.contentions);
    for (unsigned i = 0; i < N_DEVICE; i++) {
        const recorder *r = &F.dev[i];
        if (!r->attached) continue;
        FZ_CHECK(r->selected == (F.cs_model >> r->cs & 1), "device at cs %u selected %d, line %d",
                 r->cs, r->selected, F.cs_model >> r->cs & 1);
        FZ_CHECK(r->selects - r->deselects == (uint64_t)r->selected,
                 "device at cs %u: %llu selects, %llu releases", r->cs,
                 (unsigned long long)r->selects, (unsigned long long)r->deselects);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_LEN) return -1;
    fz_in in = {data, size};
    setup(&in);
    while (fz_more(&in)) {
        uint8_t op = fz_u8(&in);
        switch (op % 6) {
        case 0: set_cs(fz_u32(&in)); break;
        case 1: set_cs(1u << (fz_u8(&in) & 31)); break; /* one line, as controllers do */
        case 2: exchange(fz_u8(&in)); break;
        case 3: { /* a burst: up to 64 bytes */
            unsigned n = 1u + (fz_u8(&in) & 63);
            for (unsigned i = 0; i < n; i++)
                exchange(fz_u8(&in));
            break;
        }
        case 4: nm_spi_bus_set_sclk(F.bus, fz_u32(&in)); break; /* 0 is ignored */
        case 5:                                                 /* RST#: every line released */
            F.cs_model = 0;
            F.order_phase = 0;
            nm_machine_reset(F.m);
            break;
        }
        check();
    }
    check();
    uint64_t counts[3 * N_DEVICE + 1];
    for (unsigned i = 0; i < N_DEVICE; i++) {
        counts[3 * i] = F.dev[i].selects;
        counts[3 * i + 1] = F.dev[i].deselects;
        counts[3 * i + 2] = F.dev[i].bytes;
    }
    counts[3 * N_DEVICE] = F.cs_model;
    fz_digest(F.m, counts, sizeof counts);
    nm_machine_free(F.m);
    nm_config_free(F.cfg);
    return 0;
}
