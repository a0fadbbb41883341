/* Board presets: one real motherboard class of the period each, as data
 * (docs/boards.md).  A preset sets the memory-system parameters of the cost
 * models (timing.h nm_timing_params); the single keys (dram-timing, l2,
 * mem-wait-states) still override it.  Every figure carries its source at
 * the line; [L] marks a figure derived from part timings or period practice
 * rather than read in a chipset datasheet (docs/boards.md says which).
 *
 * Timings are bus clocks: a 486DX2-66 has a 33 MHz bus (30 ns a clock), a
 * Pentium-60 a 60 MHz one, a Pentium-100/133 66 MHz. */
#include "cpu/timing/boards.h"

#include <glib.h>
#include <string.h>

/* 70 ns fast-page-mode DRAM (e.g. 1M x 4 parts, Micron MT4C4001J class data
 * sheets: tRAC 70, tAA 35, tCAC 20, tPC 40, tRP 50 ns) on a 33 MHz 486 bus:
 * a page hit's first transfer is the column access plus the chipset's
 * decode (about 3 + 1 clocks), each further one a page cycle (40 ns: 2
 * clocks); a page miss adds the precharge and the row access (50 + 35 ns:
 * 3 clocks) [L].  The DRAM page is a row of one 32-bit bank of 1M-deep parts:
 * 1024 columns x 4 bytes = 4 KB. */
#define FPM70_486_FIRST  4
#define FPM70_486_BURST  2
#define FPM70_486_SINGLE 4
#define FPM70_486_MISS   3
#define DRAM_PAGE_486    4096u
/* DRAM refresh on every PC board: a refresh request every 15.0857 us (the
 * AT's PIT channel 1, 18 counts of 1.19318 MHz; IBM AT Technical
 * Reference), each holding the DRAM for one random-access cycle of its
 * parts (tRC: 130 ns for 70 ns FPM, 110 ns for 60 ns parts, Micron
 * MT4C4001J class data sheets) [L: the chipsets' refresh cycle lengths were
 * not found; a hidden CAS-before-RAS refresh takes one tRC]. */
#define REFRESH_70NS .refresh_ns = 15086, .refresh_busy_ns = 130
#define REFRESH_60NS .refresh_ns = 15086, .refresh_busy_ns = 110

/* The 486 boards' DRAM fields, in a preset's timing. */
#define FPM70_486                                                                                  \
    .dram_first = FPM70_486_FIRST, .dram_burst = FPM70_486_BURST, .dram_single = FPM70_486_SINGLE, \
    .dram_miss = FPM70_486_MISS, .dram_page_bytes = DRAM_PAGE_486, REFRESH_70NS

/* The 486 boards' 256 KB L2 (two banks): 2-1-1-1 reads, 2-clock write hits
 * (sources at 486-wt256 and 486-wb256 below); the policy is the preset's. */
#define L2_486_256K .l2_size = 256u << 10, .l2_first = 2, .l2_burst = 1, .l2_write = 2

/* The 430FX boards' EDO DRAM and posted writes (sources at p54c-430fx-pb). */
#define EDO60_430FX                                                                                \
    .dram_first = 7, .dram_burst = 2, .dram_single = 7, .dram_miss = 5, .dram_page_bytes = 8192u,  \
    .posted = 4, .posted_accept = 3, .victim_posted = true, REFRESH_60NS

static const nm_board_preset presets[] = {
    {
        .name = "386-nocache",
        .description = "386DX board without external cache, page-mode DRAM (AMI/OPTi/C&T "
                       "386DX-25..40 class)",
        .default_for = "386dx-25,386dx-33,386dx-40",
        /* The 386 model's wait states: W = ceil(100 ns / T) - 2 per bus
         * cycle (timing.c; 70 ns DRAM plus buffers = about 100 ns a cycle):
         * 2 at 40 MHz.  Abrash, Black Book ch. 11: 386 boards insert "from 0
         * to about 5 wait states". */
        .wait_states = -1, /* the formula */
        /* Page-mode DRAM: the wait states of a cycle by the row's state
         * (timing.c ws_page_*: at 40 MHz 1 on a page hit, 2 a write hit or
         * a closed row, 4 a page miss); rows of 4 KB (a 32-bit bank of 1M x
         * 1 parts: 1024 columns x 4 bytes) [L]; the AT's refresh closes the
         * row every 15.0857 us (REFRESH_70NS). */
        .t = {.dram_page_bytes = 4096u, REFRESH_70NS},
    },
    {
        .name = "386-cache64k",
        .description = "386DX board with 64 KB external write-through cache (Intel386 HRM "
                       "example design: direct-mapped, 4-byte lines, buffered writes), page-mode "
                       "DRAM",
        .default_for = "",
        /* Intel386 DX Hardware Reference Manual 7.6: 64 KB direct-mapped,
         * 4-byte lines, buffered write-through (our research read it); read
         * hits 0 wait states, misses the DRAM's W (the formula, as
         * 386-nocache). */
        .wait_states = -1,
        /* The 386 model's own cache (i386.c) is always write-through; the
         * field names it so that the report says what is modelled. */
        .t = {.l2_size = 64u << 10,
              .l2_policy = NM_L2_WRITE_THROUGH,
              .dram_page_bytes = 4096u, /* page mode as 386-nocache */
              REFRESH_70NS},
    },
    {
        .name = "486-nol2",
        .description = "486DX2-66 on an ISA/VLB board without L2 (SiS 471 / UMC 491 class "
                       "with the cache SRAMs not fitted), 70 ns FPM DRAM",
        .default_for = "",
        .t = {.l2_size = 0,
              FPM70_486,
              /* No posted CPU-to-DRAM writes on the low-end 486 chipsets [L]:
               * each write-through store is a DRAM single write. */
              .posted = 0},
    },
    {
        .name = "486-wt256",
        .description = "486DX2-66 on a VLB board with 256 KB write-through L2 (2 banks), 70 ns "
                       "FPM DRAM",
        .default_for = "",
        /* 256 KB direct-mapped, 16-byte lines, 2 banks: reads 2-1-1-1 ("many
         * motherboards can achieve 2-1-1-1 if the cache SRAMs are fast
         * enough and there are 2 banks", EMIS motherboard FAQ); write
         * through: every write also goes to DRAM; UMC 8881 offers 2T/3T cache
         * write cycles (86Box register notes, as read by our research). */
        .t = {L2_486_256K, .l2_policy = NM_L2_WRITE_THROUGH, FPM70_486},
    },
    {
        .name = "486-wb256",
        .description = "486DX2-66 on a VLB board with 256 KB write-back L2 and a dirty tag "
                       "(UMC 8881 / SiS 496 class), 70 ns FPM DRAM",
        .default_for = "486sx-25,486dx-33,486dx2-66,486dx4-100",
        /* As 486-wt256, write-back with the dirty bit in the tag RAM (UMC
         * 8881, SiS 496: VOGONS "diagnose poor memory performance on 486
         * boards"); write hits 2 clocks (OPTi 82C497 data book: 0 wait state
         * write hits, i.e. the 486's 2-clock minimum cycle). */
        .t = {L2_486_256K, .l2_policy = NM_L2_WRITE_BACK, FPM70_486},
    },
    {
        .name = "486-wb256-ad",
        .description = "as 486-wb256 without a dirty tag: write-back \"always dirty\" (every "
                       "replaced L2 line is written back)",
        .default_for = "",
        /* The third 486 L2 mode (VOGONS, ibid.: older chipsets without a
         * dirty-bit SRAM, "write-back assuming always dirty"). */
        .t = {L2_486_256K, .l2_policy = NM_L2_WRITE_BACK_ALWAYS_DIRTY, FPM70_486},
    },
    {
        .name = "p5-430lx",
        .description = "Pentium-60/66 on an Intel 430LX (Mercury, 82434LX PCMC + 82433LX LBX) "
                       "board: 256 KB asynchronous write-back L2, 70 ns FPM DRAM, CPU-to-memory "
                       "posting on",
        .default_for = "pentium-60,pentium-66",
        /* L2: async SRAM reads 3-2-2-2, writes 4-2-2-2 (the PCMC's SRAM-type
         * field, "3-2-2-2/4-2-2-2", as FreeBSD's pcisupport.c decodes the
         * 82434LX registers; a single write hit: the burst's 4-clock lead).
         * Victims: "the PCMC transfers the modified cache lines to main
         * memory via a write buffer in the LBX ... before writing the last
         * modified line ... updates the first and second level caches with
         * the new line" (82434LX data sheet 290479-004, p.15).  Posting:
         * "CPU-to-memory posted write buffer ... a queue 4 Qwords deep"
         * (82433LX data sheet 290478, 3.1.1), enabled by the BIOS (PCMC
         * register 53h bit 0); accepted in 3 clocks [L: the P5's 2-clock
         * minimum bus cycle and the LBX's latch].  DRAM: 70 ns FPM bursts
         * X-4-4-4 (the PCMC's DRAM timing field, FreeBSD's decode: "X-4-4-4
         * (70ns)").  The lead-off X (11) and a single write's DRAM time (10)
         * are not in the reachable data-sheet pages: calibrated on lmbench's
         * Mem read and Mem write of a real EISA/PCI Pentium-66 (points lm7-rd,
         * lm7-wr, tests/hardware/points.tsv: 39 clocks a 32-byte line, 10.3 a
         * posted 32-bit store).  Page miss +5 (tRP 50 + tRCD 20 ns at 60/66
         * MHz) [L]; 64-bit bank of 1M-deep parts: 8 KB rows. */
        .t = {.l2_size = 256u << 10,
              .l2_policy = NM_L2_WRITE_BACK,
              .l2_first = 3,
              .l2_burst = 2,
              .l2_write = 4,
              .dram_first = 11,
              .dram_burst = 4,
              .dram_single = 10,
              .dram_miss = 5,
              .dram_page_bytes = 8192u,
              .posted = 4,
              .posted_accept = 3,
              .victim_posted = true,
              REFRESH_70NS},
    },
    {
        .name = "p54c-430fx-pb",
        .description = "Pentium-75..133 on an Intel 430FX (Triton) board: 256 KB pipeline-burst "
                       "write-back L2, 60 ns EDO DRAM",
        .default_for = "pentium-100,pentium-133",
        /* 82437FX: pipeline-burst SRAM 3-1-1-1 reads and writes (our
         * research: the 430FX/HX/TX data sheets give 3-1-1-1); EDO "(7 to
         * 12)-2-2-2" (dependency-injection.com on the 82437FX): page hit 7,
         * page miss 12 (+5); single 7.  CPU-to-DRAM posted writes: 4 qwords
         * [L: the 430HX has 8, its data sheet; the FX half of that; the
         * 430LX's LBX also has 4], accepted in 3 clocks (the L2 write time)
         * [L].  L2 victims through that buffer after the fill [L: as the
         * 82434LX does (p5-430lx), and the 430TX data sheet posts a snooped
         * modified line "to the DRAM Posted Write buffers"].  The FX's DRAM
         * burst rates as FreeBSD's pcisupport.c decodes its DRAMT register:
         * EDO reads x-2-2-2, FPM x-3-3-3, writes down to x-2-2-2. */
        .t = {.l2_size = 256u << 10,
              .l2_policy = NM_L2_WRITE_BACK,
              .l2_first = 3,
              .l2_burst = 1,
              .l2_write = 3,
              EDO60_430FX},
    },
    {
        .name = "p54c-430fx-async",
        .description = "as p54c-430fx-pb with asynchronous SRAM: L2 reads 3-2-2-2, writes 4",
        .default_for = "",
        /* "Burst writes with standard SRAMs are only performed at a
         * pedestrian 4-3-3-3", reads 3-2-2-2 (dependency-injection.com, the
         * 82437FX's async SRAM timing); a single write: the 4-clock lead. */
        .t = {.l2_size = 256u << 10,
              .l2_policy = NM_L2_WRITE_BACK,
              .l2_first = 3,
              .l2_burst = 2,
              .l2_write = 4,
              EDO60_430FX},
    },
};

const nm_board_preset *nm_board_preset_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
        if (!g_ascii_strcasecmp(presets[i].name, name)) return &presets[i];
    return NULL;
}

const nm_board_preset *nm_board_preset_list(size_t *count)
{
    *count = G_N_ELEMENTS(presets);
    return presets;
}

const nm_board_preset *nm_board_preset_default(const nm_cpu_model *model)
{
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++) {
        const char *p = presets[i].default_for;
        size_t n = strlen(model->name);
        while (p && *p) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len == n && !g_ascii_strncasecmp(p, model->name, n)) return &presets[i];
            p = e ? e + 1 : NULL;
        }
    }
    return NULL;
}

const char *nm_board_preset_names(void)
{
    static char buf[512];
    if (!buf[0]) {
        for (size_t i = 0; i < G_N_ELEMENTS(presets); i++) {
            if (i) g_strlcat(buf, ", ", sizeof buf);
            g_strlcat(buf, presets[i].name, sizeof buf);
        }
    }
    return buf;
}

bool nm_board_preset_fits(const nm_board_preset *b, const nm_cpu_model *model)
{
    bool is386 = b->wait_states != 0;
    if (model->family == NM_CPU_386) return is386;
    if (is386) return false;
    bool p5 = !strncmp(b->name, "p5", 2);
    return (model->family == NM_CPU_PENTIUM) == p5;
}

void nm_board_preset_apply(const nm_board_preset *b, nm_timing_params *p)
{
    p->board = b->name;
    if (b->wait_states > 0) p->mem_wait_states = (unsigned)b->wait_states;
    if (b->wait_states) { /* a 386 board: wait states, page mode, an optional cache */
        p->l2_size = b->t.l2_size;
        p->dram_page_bytes = b->t.dram_page_bytes;
        p->refresh_ns = b->t.refresh_ns;
        p->refresh_busy_ns = b->t.refresh_busy_ns;
        return;
    }
    p->l2_size = b->t.l2_size;
    p->l2_policy = b->t.l2_policy;
    p->l2_first = b->t.l2_first;
    p->l2_burst = b->t.l2_burst;
    p->l2_write = b->t.l2_write;
    p->dram_first_clocks = b->t.dram_first;
    p->dram_burst_clocks = b->t.dram_burst;
    p->dram_single_clocks = b->t.dram_single;
    p->dram_miss_clocks = b->t.dram_miss;
    p->dram_page_bytes = b->t.dram_page_bytes;
    p->posted_writes = b->t.posted;
    p->posted_accept = b->t.posted_accept;
    p->victim_posted = b->t.victim_posted;
    p->refresh_ns = b->t.refresh_ns;
    p->refresh_busy_ns = b->t.refresh_busy_ns;
}
