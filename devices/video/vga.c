/* A VGA adapter on the ISA bus, in colour text mode (docs/display.md).
 *
 * Modelled: the 32 KB text window at 0xB8000 (character/attribute pairs, as
 * the CPU sees them in odd/even mode), the CRT controller (0x3D4/0x3D5), the
 * sequencer (0x3C4/0x3C5), the graphics controller (0x3CE/0x3CF), the
 * attribute controller with its index/data flip-flop (0x3C0/0x3C1), the
 * miscellaneous output register (0x3C2 write, 0x3CC read), the DAC
 * (0x3C6-0x3C9) and input status 1 (0x3DA) whose display-enable and
 * vertical-retrace bits follow the CRTC timing registers on the virtual
 * clock.  Register facts are from the IBM VGA Technical Reference (Personal
 * System/2 Hardware Interface Technical Reference, "Video Subsystem"), cited
 * as "VGA TR" with the register name.
 *
 * Not modelled: graphics modes, planar memory and the font RAM in plane 2
 * (the window is always the text buffer; a font the guest loads is not
 * used), the 0x3Bx monochrome ports, memory map select other than
 * 0xB8000-0xBFFFF, split screen, smooth scrolling and horizontal blanking
 * registers (display enable is taken as the active area: CRTC 01h and 12h).
 *
 * The board creates it with the registers a VGA BIOS leaves for mode 03h
 * (80x25 text, 9x16 cells, 720x400 at 70 Hz); there is no video BIOS. */
#include "devices/video/vga.h"

#include <glib.h>
#include <string.h>

#include "devices/bus/isa.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define CRTC_COUNT 25
#define SEQ_COUNT  5
#define GC_COUNT   9
#define ATTR_COUNT 21
#define DAC_COUNT  256

/* One register of a register file: its name and the bits that hold what is
 * written (the others read 0; VGA TR, each register's bit table). */
typedef struct vga_reg {
    const char *name;
    uint8_t writable;
} vga_reg;

/* CRT controller (VGA TR, "CRT Controller Registers"). */
static const vga_reg crtc_regs[CRTC_COUNT] = {
    [0x00] = {"horizontal total", 0xff},
    [0x01] = {"horizontal display enable end", 0xff},
    [0x02] = {"start horizontal blanking", 0xff},
    [0x03] = {"end horizontal blanking", 0xff},
    [0x04] = {"start horizontal retrace", 0xff},
    [0x05] = {"end horizontal retrace", 0xff},
    [0x06] = {"vertical total", 0xff},
    [0x07] = {"overflow", 0xff},
    [0x08] = {"preset row scan", 0x7f},
    [0x09] = {"maximum scan line", 0xff},
    [0x0a] = {"cursor start", 0x3f},
    [0x0b] = {"cursor end", 0x7f},
    [0x0c] = {"start address high", 0xff},
    [0x0d] = {"start address low", 0xff},
    [0x0e] = {"cursor location high", 0xff},
    [0x0f] = {"cursor location low", 0xff},
    [0x10] = {"vertical retrace start", 0xff},
    [0x11] = {"vertical retrace end", 0xff},
    [0x12] = {"vertical display enable end", 0xff},
    [0x13] = {"offset", 0xff},
    [0x14] = {"underline location", 0x7f},
    [0x15] = {"start vertical blanking", 0xff},
    [0x16] = {"end vertical blanking", 0xff},
    [0x17] = {"CRT mode control", 0xef},
    [0x18] = {"line compare", 0xff},
};

/* Sequencer (VGA TR, "Sequencer Registers"). */
static const vga_reg seq_regs[SEQ_COUNT] = {
    [0] = {"reset", 0x03},       [1] = {"clocking mode", 0x3d},
    [2] = {"map mask", 0x0f},    [3] = {"character map select", 0x3f},
    [4] = {"memory mode", 0x0e},
};

/* Graphics controller (VGA TR, "Graphics Controller Registers"). */
static const vga_reg gc_regs[GC_COUNT] = {
    [0] = {"set/reset", 0x0f},     [1] = {"enable set/reset", 0x0f}, [2] = {"color compare", 0x0f},
    [3] = {"data rotate", 0x1f},   [4] = {"read map select", 0x03},  [5] = {"graphics mode", 0x7b},
    [6] = {"miscellaneous", 0x0f}, [7] = {"color don't care", 0x0f}, [8] = {"bit mask", 0xff},
};

/* Attribute controller (VGA TR, "Attribute Controller Registers"): 16
 * palette registers, then mode control, overscan, colour plane enable,
 * horizontal PEL panning, colour select. */
static const vga_reg attr_regs[ATTR_COUNT] = {
    [0x00] = {"palette 0", 0x3f},          [0x01] = {"palette 1", 0x3f},
    [0x02] = {"palette 2", 0x3f},          [0x03] = {"palette 3", 0x3f},
    [0x04] = {"palette 4", 0x3f},          [0x05] = {"palette 5", 0x3f},
    [0x06] = {"palette 6", 0x3f},          [0x07] = {"palette 7", 0x3f},
    [0x08] = {"palette 8", 0x3f},          [0x09] = {"palette 9", 0x3f},
    [0x0a] = {"palette 10", 0x3f},         [0x0b] = {"palette 11", 0x3f},
    [0x0c] = {"palette 12", 0x3f},         [0x0d] = {"palette 13", 0x3f},
    [0x0e] = {"palette 14", 0x3f},         [0x0f] = {"palette 15", 0x3f},
    [0x10] = {"mode control", 0xef},       [0x11] = {"overscan color", 0xff},
    [0x12] = {"color plane enable", 0x3f}, [0x13] = {"horizontal PEL panning", 0x0f},
    [0x14] = {"color select", 0x0f},
};

/* Mode 03h as a VGA BIOS programs it (VGA TR, "BIOS video mode tables":
 * mode 3+, 720x400, 9x16 cell, 28.322 MHz dot clock). */
static const uint8_t mode3_crtc[CRTC_COUNT] = {
    0x5f, 0x4f, 0x50, 0x82, 0x55, 0x81, 0xbf, 0x1f, 0x00, 0x4f, 0x0d, 0x0e, 0x00,
    0x00, 0x00, 0x00, 0x9c, 0x8e, 0x8f, 0x28, 0x1f, 0x96, 0xb9, 0xa3, 0xff,
};
static const uint8_t mode3_seq[SEQ_COUNT] = {0x03, 0x00, 0x03, 0x00, 0x02};
static const uint8_t mode3_gc[GC_COUNT] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x0e, 0x00, 0xff};
static const uint8_t mode3_attr[ATTR_COUNT] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x14, 0x07, 0x38, 0x39, 0x3a,
    0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x0c, 0x00, 0x0f, 0x08, 0x00,
};
#define MODE3_MISC 0x67

/* Dot clocks selected by misc output bits 3:2 (VGA TR, "Miscellaneous
 * Output Register"): 0 = 25.175 MHz, 1 = 28.322 MHz; 2 and 3 select an
 * external clock, taken here as 25.175 MHz. */
static const uint64_t dot_clock_hz[4] = {25175000, 28322000, 25175000, 25175000};

/* Bits of input status 1 (VGA TR, "Input Status Register 1"). */
#define STATUS1_DISPLAY_OFF 0x01 /* horizontal or vertical blanking */
#define STATUS1_VRETRACE    0x08

#define CRTC_PROTECT 0x80 /* CRTC 11h bit 7: registers 0-7 write-protected */

typedef struct vga {
    nm_machine *machine;
    nm_isa_mem *mem;
    nm_isa_io *io_3c0, *io_3d4, *io_3da;
    uint8_t text[NM_VGA_TEXT_SIZE];
    uint8_t crtc[CRTC_COUNT], crtc_index;
    uint8_t seq[SEQ_COUNT], seq_index;
    uint8_t gc[GC_COUNT], gc_index;
    uint8_t attr[ATTR_COUNT], attr_index; /* attr_index bit 5: palette address source */
    bool attr_flip;                       /* next 0x3C0 write is data */
    uint8_t misc, feature, subsys_enable;
    uint8_t dac[DAC_COUNT][3]; /* 6-bit red, green, blue */
    uint8_t dac_mask, dac_write, dac_read, dac_step, dac_state;
    uint8_t dac_latch[3];
    uint64_t text_reads, text_writes, reg_writes, status_reads, ignored;
} vga;

/* ---- input status 1 from virtual time -------------------------------- */

/* The frame as the CRTC registers describe it (VGA TR: horizontal total =
 * CR00 + 5 characters, display end = CR01 + 1; vertical total = 10-bit CR06
 * + 2, display end = CR12 + 1, retrace start = CR10, overflow bits in CR07;
 * retrace ends when the line counter's low 4 bits equal CR11 bits 3:0). */
typedef struct vga_timing {
    uint64_t dot_hz;
    unsigned char_width, htotal, hdisplay; /* dots, characters */
    unsigned vtotal, vdisplay, vretrace_start, vretrace_lines;
} vga_timing;

static void vga_timing_get(const vga *v, vga_timing *t)
{
    const uint8_t *c = v->crtc, ov = c[0x07];
    t->dot_hz = dot_clock_hz[(v->misc >> 2) & 3];
    if (v->seq[1] & 0x08) t->dot_hz /= 2; /* clocking mode: dot clock / 2 */
    t->char_width = (v->seq[1] & 0x01) ? 8 : 9;
    t->htotal = c[0x00] + 5u;
    t->hdisplay = c[0x01] + 1u;
    t->vtotal = (c[0x06] | (ov & 0x01) << 8 | (ov & 0x20) << 4) + 2u;
    t->vdisplay = (c[0x12] | (ov & 0x02) << 7 | (ov & 0x40) << 3) + 1u;
    t->vretrace_start = c[0x10] | (ov & 0x04) << 6 | (ov & 0x80) << 2;
    unsigned len = (c[0x11] - t->vretrace_start) & 0x0f;
    t->vretrace_lines = len ? len : 16;
}

uint8_t nm_vga_status1_at(void *dev, uint64_t ns)
{
    vga *v = dev;
    vga_timing t;
    vga_timing_get(v, &t);
    uint64_t line_dots = (uint64_t)t.htotal * t.char_width;
    uint64_t frame_dots = line_dots * t.vtotal;
    /* Dots since time 0, exact: the raster starts at the top-left at 0. */
    uint64_t dots = (uint64_t)((unsigned __int128)ns * t.dot_hz / 1000000000u);
    uint64_t in_frame = dots % frame_dots;
    unsigned line = (unsigned)(in_frame / line_dots);
    unsigned column = (unsigned)(in_frame % line_dots) / t.char_width;
    uint8_t s = 0;
    if (line >= t.vdisplay || column >= t.hdisplay) s |= STATUS1_DISPLAY_OFF;
    if (line >= t.vretrace_start && line < t.vretrace_start + t.vretrace_lines)
        s |= STATUS1_VRETRACE;
    return s;
}

/* ---- the text window ------------------------------------------------- */

static uint32_t vga_mem_read(void *opaque, uint32_t offset, unsigned size)
{
    vga *v = opaque;
    v->text_reads++;
    uint32_t value = 0;
    for (unsigned i = 0; i < size; i++)
        value |= (uint32_t)v->text[(offset + i) % NM_VGA_TEXT_SIZE] << (8 * i);
    return value;
}

static void vga_mem_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    vga *v = opaque;
    v->text_writes++;
    for (unsigned i = 0; i < size; i++)
        v->text[(offset + i) % NM_VGA_TEXT_SIZE] = (uint8_t)(value >> (8 * i));
}

static const nm_mmio_ops vga_mem_ops = {vga_mem_read, vga_mem_write};

/* ---- register files -------------------------------------------------- */

static void reg_write(vga *v, const char *file, const vga_reg *regs, unsigned count,
                      uint8_t *values, unsigned index, uint8_t value)
{
    v->reg_writes++;
    if (index >= count) {
        v->ignored++;
        nm_debug(VGA, "%s index 0x%02x (no such register) <- 0x%02x ignored", file, index, value);
        return;
    }
    values[index] = value & regs[index].writable;
    nm_trace(VGA, "%s %s <- 0x%02x", file, regs[index].name, value);
}

static uint8_t reg_read(const uint8_t *values, unsigned count, unsigned index)
{
    return index < count ? values[index] : 0xff;
}

static void crtc_write(vga *v, uint8_t value)
{
    unsigned i = v->crtc_index;
    if (i < 8 && (v->crtc[0x11] & CRTC_PROTECT)) {
        /* VGA TR, CR11 bit 7: CR00-CR07 are protected, except the line
         * compare bit (bit 4) of the overflow register. */
        if (i == 0x07)
            value = (uint8_t)((v->crtc[0x07] & ~0x10) | (value & 0x10));
        else {
            v->ignored++;
            return;
        }
    }
    reg_write(v, "crtc", crtc_regs, CRTC_COUNT, v->crtc, i, value);
}

static void attr_write(vga *v, uint8_t value)
{
    if (!v->attr_flip) {
        v->attr_index = value & 0x3f; /* bits 4:0 index, bit 5 palette address source */
    } else {
        reg_write(v, "attribute", attr_regs, ATTR_COUNT, v->attr, v->attr_index & 0x1f, value);
    }
    v->attr_flip = !v->attr_flip;
}

static void dac_data_write(vga *v, uint8_t value)
{
    v->dac_latch[v->dac_step++] = value & 0x3f;
    if (v->dac_step == 3) {
        memcpy(v->dac[v->dac_write], v->dac_latch, 3);
        v->dac_write++;
        v->dac_step = 0;
    }
}

static uint8_t dac_data_read(vga *v)
{
    uint8_t value = v->dac[v->dac_read][v->dac_step++];
    if (v->dac_step == 3) {
        v->dac_read++;
        v->dac_step = 0;
    }
    return value;
}

/* Ports 0x3C0-0x3CF. */
static uint32_t vga_3c0_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    vga *v = opaque;
    switch (offset) {
    case 0x0: return v->attr_index;
    case 0x1: return reg_read(v->attr, ATTR_COUNT, v->attr_index & 0x1f);
    case 0x2: return 0x00; /* input status 0: no CRT interrupt, switch sense 0 */
    case 0x3: return v->subsys_enable;
    case 0x4: return v->seq_index;
    case 0x5: return reg_read(v->seq, SEQ_COUNT, v->seq_index);
    case 0x6: return v->dac_mask;
    case 0x7: return v->dac_state; /* DAC state: 0 write mode, 3 read mode */
    case 0x8: return v->dac_write;
    case 0x9: return dac_data_read(v);
    case 0xa: return v->feature;
    case 0xc: return v->misc;
    case 0xe: return v->gc_index;
    case 0xf: return reg_read(v->gc, GC_COUNT, v->gc_index);
    default: return 0xff;
    }
}

static void vga_3c0_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    vga *v = opaque;
    uint8_t b = (uint8_t)value;
    switch (offset) {
    case 0x0: attr_write(v, b); break;
    case 0x2: v->misc = b; break;
    case 0x3: v->subsys_enable = b & 0x01; break;
    case 0x4: v->seq_index = b; break;
    case 0x5: reg_write(v, "sequencer", seq_regs, SEQ_COUNT, v->seq, v->seq_index, b); break;
    case 0x6: v->dac_mask = b; break;
    case 0x7:
        v->dac_read = b;
        v->dac_step = 0;
        v->dac_state = 3;
        break;
    case 0x8:
        v->dac_write = b;
        v->dac_step = 0;
        v->dac_state = 0;
        break;
    case 0x9: dac_data_write(v, b); break;
    case 0xe: v->gc_index = b; break;
    case 0xf:
        reg_write(v, "graphics", gc_regs, GC_COUNT, v->gc, v->gc_index, b);
        if (v->gc_index == 6 && ((b >> 2) & 3) != 3)
            nm_debug(VGA, "memory map select %u: not modelled, the window stays at 0xB8000",
                     (b >> 2) & 3);
        break;
    default: v->ignored++; break;
    }
}

/* Ports 0x3D4-0x3D5: a word OUT to 0x3D4 arrives as index then data. */
static uint32_t vga_3d4_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    vga *v = opaque;
    return offset ? reg_read(v->crtc, CRTC_COUNT, v->crtc_index) : v->crtc_index;
}

static void vga_3d4_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    vga *v = opaque;
    if (offset)
        crtc_write(v, (uint8_t)value);
    else
        v->crtc_index = (uint8_t)value;
}

/* Port 0x3DA: input status 1 (read; resets the attribute flip-flop, VGA TR
 * "Attribute Address Register"), feature control (write). */
static uint32_t vga_3da_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)offset;
    (void)size;
    vga *v = opaque;
    v->status_reads++;
    v->attr_flip = false;
    return nm_vga_status1_at(v, nm_clock_now_ns(&v->machine->clock));
}

static void vga_3da_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)offset;
    (void)size;
    vga *v = opaque;
    v->feature = (uint8_t)value & 0x03;
}

static const nm_io_ops vga_3c0_ops = {vga_3c0_read, vga_3c0_write, NULL};
static const nm_io_ops vga_3d4_ops = {vga_3d4_read, vga_3d4_write, NULL};
static const nm_io_ops vga_3da_ops = {vga_3da_read, vga_3da_write, NULL};

/* ---- the screen as the CRTC scans it ------------------------------- */

void nm_vga_screen_get(void *dev, nm_vga_screen *s)
{
    vga *v = dev;
    vga_timing t;
    vga_timing_get(v, &t);
    *s = (nm_vga_screen){0};
    s->char_width = t.char_width;
    s->char_height = (v->crtc[0x09] & 0x1f) + 1u;
    s->cols = t.hdisplay;
    s->rows = t.vdisplay / s->char_height;
    if (s->rows == 0) s->rows = 1;
    s->start = (unsigned)(v->crtc[0x0c] << 8 | v->crtc[0x0d]);
    s->cursor = (unsigned)(v->crtc[0x0e] << 8 | v->crtc[0x0f]);
    s->cursor_start = v->crtc[0x0a] & 0x1f;
    s->cursor_end = v->crtc[0x0b] & 0x1f;
    s->cursor_on = !(v->crtc[0x0a] & 0x20);
    uint8_t mode = v->attr[0x10];
    s->blink = mode & 0x08;
    s->line_graphics = mode & 0x04;
    for (unsigned i = 0; i < 16; i++) {
        /* VGA TR, mode control bit 7 and colour select: which DAC entry an
         * attribute colour names. */
        unsigned idx = (mode & 0x80) ? (v->attr[i] & 0x0f) | (v->attr[0x14] & 0x0f) << 4
                                     : (v->attr[i] & 0x3f) | (v->attr[0x14] & 0x0c) << 4;
        const uint8_t *rgb = v->dac[idx & v->dac_mask];
        uint32_t c = 0;
        for (int k = 0; k < 3; k++)
            c = c << 8 | (uint32_t)(rgb[k] * 255u / 63u); /* 6-bit DAC to 8 bits */
        s->palette[i] = c;
    }
}

uint16_t nm_vga_cell(void *dev, unsigned index)
{
    vga *v = dev;
    unsigned at = (index * 2u) % NM_VGA_TEXT_SIZE;
    return (uint16_t)(v->text[at] | v->text[at + 1] << 8);
}

void nm_vga_dump(void *dev, FILE *out)
{
    nm_vga_screen s;
    nm_vga_screen_get(dev, &s);
    fprintf(out, "nicemu-vga-text 1\ncols %u\nrows %u\ncell %ux%u\nstart %u\n", s.cols, s.rows,
            s.char_width, s.char_height, s.start);
    fprintf(out, "cursor %u %s %u %u\n", s.cursor, s.cursor_on ? "on" : "off", s.cursor_start,
            s.cursor_end);
    fprintf(out, "blink %d\nline-graphics %d\npalette", s.blink, s.line_graphics);
    for (int i = 0; i < 16; i++)
        fprintf(out, " %06x", s.palette[i]);
    fputc('\n', out);
    for (unsigned r = 0; r < s.rows; r++) {
        for (unsigned c = 0; c < s.cols; c++)
            fprintf(out, "%s%04x", c ? " " : "", nm_vga_cell(dev, s.start + r * s.cols + c));
        fputc('\n', out);
    }
}

/* ---- the device ------------------------------------------------------ */

/* The first 64 DAC entries as a VGA BIOS loads them for the 16-colour text
 * modes: the EGA's rgbRGB colours (bits 2:0 add 2/3 of full scale to red,
 * green, blue; bits 5:3 add 1/3), 6 bits per component (VGA TR, "Video DAC
 * palette", default colour values). */
static void dac_default(vga *v)
{
    memset(v->dac, 0, sizeof v->dac);
    for (unsigned i = 0; i < 64; i++) {
        v->dac[i][0] = (uint8_t)(0x2a * ((i >> 2) & 1) + 0x15 * ((i >> 5) & 1));
        v->dac[i][1] = (uint8_t)(0x2a * ((i >> 1) & 1) + 0x15 * ((i >> 4) & 1));
        v->dac[i][2] = (uint8_t)(0x2a * (i & 1) + 0x15 * ((i >> 3) & 1));
    }
}

static void vga_reset(void *opaque)
{
    vga *v = opaque;
    memcpy(v->crtc, mode3_crtc, sizeof v->crtc);
    memcpy(v->seq, mode3_seq, sizeof v->seq);
    memcpy(v->gc, mode3_gc, sizeof v->gc);
    memcpy(v->attr, mode3_attr, sizeof v->attr);
    v->misc = MODE3_MISC;
    v->crtc_index = v->seq_index = v->gc_index = 0;
    v->attr_index = 0x20; /* palette address source set: the screen is on */
    v->attr_flip = false;
    v->feature = 0;
    v->subsys_enable = 1;
    dac_default(v);
    v->dac_mask = 0xff;
    v->dac_write = v->dac_read = v->dac_step = v->dac_state = 0;
    /* A BIOS clears the screen to light grey on black. */
    for (unsigned i = 0; i < NM_VGA_TEXT_SIZE; i += 2) {
        v->text[i] = ' ';
        v->text[i + 1] = 0x07;
    }
}

static void vga_destroy(void *opaque);

/* The ISA card: 16-bit memory (MEMCS16#; no NOWS#, so 1 wait state: 3 BCLK
 * per cycle, docs/isa-bus.md), byte-wide I/O (4 wait states). */
#define VGA_MEM_WIDTH 16
#define VGA_IO_WIDTH  8

static void *vga_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    const char *origin = cfg ? cfg->origin : "vga";
    vga *v = g_new0(vga, 1);
    v->machine = m;
    if (!(v->mem = nm_isa_map_memory(m, NM_VGA_TEXT_BASE, NM_VGA_TEXT_SIZE, &vga_mem_ops, v, "vga",
                                     VGA_MEM_WIDTH, err)) ||
        !(v->io_3c0 = nm_isa_claim_io(m, 0x3c0, 16, &vga_3c0_ops, v, "vga", VGA_IO_WIDTH, err)) ||
        !(v->io_3d4 = nm_isa_claim_io(m, 0x3d4, 2, &vga_3d4_ops, v, "vga", VGA_IO_WIDTH, err)) ||
        !(v->io_3da = nm_isa_claim_io(m, 0x3da, 1, &vga_3da_ops, v, "vga", VGA_IO_WIDTH, err))) {
        g_prefix_error(err, "%s: ", origin);
        vga_destroy(v);
        return NULL;
    }
    nm_isa_mem_set_enabled(v->mem, true); /* the bus maps windows disabled */
    vga_reset(v);
    return v;
}

static void vga_destroy(void *opaque)
{
    vga *v = opaque;
    if (v->mem) nm_isa_unmap_memory(v->mem);
    if (v->io_3c0) nm_isa_release_io(v->io_3c0);
    if (v->io_3d4) nm_isa_release_io(v->io_3d4);
    if (v->io_3da) nm_isa_release_io(v->io_3da);
    g_free(v);
}

static void vga_report(void *opaque, nm_report *r)
{
    vga *v = opaque;
    nm_isa_stats st = {0};
    nm_isa_mem_stats(v->mem, &st);
    nm_isa_io_stats(v->io_3c0, &st);
    nm_isa_io_stats(v->io_3d4, &st);
    nm_isa_io_stats(v->io_3da, &st);
    nm_report_u64(r, "text_reads", v->text_reads);
    nm_report_u64(r, "text_writes", v->text_writes);
    nm_report_u64(r, "register_writes", v->reg_writes);
    nm_report_u64(r, "status_reads", v->status_reads);
    nm_report_u64(r, "ignored_writes", v->ignored);
    nm_report_u64(r, "isa_io_cycles", st.io_cycles);
    nm_report_u64(r, "isa_mem_cycles", st.mem_cycles);
    nm_report_u64(r, "isa_wait_clocks", st.wait_clocks);
}

void *nm_vga_of(nm_machine *m)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls == &nm_vga_class) return inst->state;
    }
    return NULL;
}

static void vga_snapshot(void *opaque, nm_snap *s)
{
    vga *v = opaque;
    nm_snap_bytes(s, "text", v->text, NM_VGA_TEXT_SIZE);
    nm_snap_bytes(s, "crtc", v->crtc, CRTC_COUNT);
    nm_snap_u8(s, "crtc_index", &v->crtc_index);
    nm_snap_bytes(s, "seq", v->seq, SEQ_COUNT);
    nm_snap_u8(s, "seq_index", &v->seq_index);
    nm_snap_bytes(s, "gc", v->gc, GC_COUNT);
    nm_snap_u8(s, "gc_index", &v->gc_index);
    nm_snap_bytes(s, "attr", v->attr, ATTR_COUNT);
    nm_snap_u8(s, "attr_index", &v->attr_index);
    nm_snap_bool(s, "attr_flip", &v->attr_flip);
    nm_snap_u8(s, "misc", &v->misc);
    nm_snap_u8(s, "feature", &v->feature);
    nm_snap_u8(s, "subsys_enable", &v->subsys_enable);
    nm_snap_bytes(s, "dac", v->dac, sizeof v->dac);
    nm_snap_u8(s, "dac_mask", &v->dac_mask);
    nm_snap_u8(s, "dac_write", &v->dac_write);
    nm_snap_u8(s, "dac_read", &v->dac_read);
    nm_snap_u8(s, "dac_step", &v->dac_step);
    nm_snap_u8(s, "dac_state", &v->dac_state);
    nm_snap_bytes(s, "dac_latch", v->dac_latch, 3);
    nm_snap_check(s, v->dac_step < 3, "dac_step");
    nm_snap_u64(s, "text_reads", &v->text_reads);
    nm_snap_u64(s, "text_writes", &v->text_writes);
    nm_snap_u64(s, "reg_writes", &v->reg_writes);
    nm_snap_u64(s, "status_reads", &v->status_reads);
    nm_snap_u64(s, "ignored", &v->ignored);
}

static const char *const vga_keys[] = {NULL};

const nm_device_class nm_vga_class = {
    .name = "vga",
    .help = "VGA adapter in colour text mode (0xB8000, 0x3C0-0x3CF, 0x3D4/0x3D5, 0x3DA) on ISA",
    .keys = vga_keys,
    .create = vga_create,
    .reset = vga_reset,
    .destroy = vga_destroy,
    .report = vga_report,
    .snapshot = vga_snapshot,
    .snapshot_version = 1,
};
