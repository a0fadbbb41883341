/* The VGA text adapter (devices/video/vga.c): the text window and its ISA
 * memory-cycle cost, the CRTC registers (cursor, start address, write
 * protection), the attribute controller's flip-flop and the DAC, input
 * status 1 from virtual time, the text dump, and the display's renderer
 * drawing a cell with the VGA font. */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "devices/video/vga.h"
#include "emu/display.h"
#include "emu/machine.h"
#include "vga_font_8x16.h"

#include "pc_fixture.h"

static void vga_setup(pc_fixture *f, gconstpointer data)
{
    pc_setup(f, data);
    f->dev = pc_add_device(f, &nm_vga_class, NULL);
}

/* The default CPU is the 486DX2-66: an ISA cycle of 3 BCLK (16-bit memory,
 * 1 wait state) is 360 ns = 24 CPU clocks, 6 BCLK (8-bit I/O) 720 ns = 48
 * (docs/isa-bus.md). */
#define MEM16_CLOCKS 24u
#define IO8_CLOCKS   48u

static void test_text_buffer(pc_fixture *f, gconstpointer data)
{
    (void)data;
    g_assert_cmphex(nm_vga_cell(f->dev, 0), ==, 0x0720); /* cleared: grey blank */
    uint64_t c0 = f->m->clock.cycles;
    nm_mem_write(f->m->mem, NM_VGA_TEXT_BASE, 0x1f41, 2); /* 'A' white on blue */
    g_assert_cmpuint(f->m->clock.cycles - c0, ==, MEM16_CLOCKS);
    nm_mem_write(f->m->mem, NM_VGA_TEXT_BASE + 2, 0x07620742, 4); /* two cells: two cycles */
    g_assert_cmpuint(f->m->clock.cycles - c0, ==, 3 * MEM16_CLOCKS);
    nm_mem_write(f->m->mem, NM_VGA_TEXT_BASE + 6, 0x43, 1);
    g_assert_cmpuint(f->m->clock.cycles - c0, ==, 4 * MEM16_CLOCKS);
    g_assert_cmphex(nm_vga_cell(f->dev, 0), ==, 0x1f41);
    g_assert_cmphex(nm_vga_cell(f->dev, 1), ==, 0x0742);
    g_assert_cmphex(nm_vga_cell(f->dev, 2), ==, 0x0762);
    g_assert_cmphex(nm_vga_cell(f->dev, 3), ==, 0x0743);
    g_assert_cmphex(nm_mem_read(f->m->mem, NM_VGA_TEXT_BASE, 2), ==, 0x1f41);
    g_assert_cmphex(nm_mem_read(f->m->mem, NM_VGA_TEXT_BASE + 1, 1), ==, 0x1f);
    g_assert_cmpuint(f->m->clock.cycles - c0, ==, 6 * MEM16_CLOCKS);
    g_assert_cmpuint(f->m->clock.bus_wait_cycles, ==, 6 * MEM16_CLOCKS);
    /* The last cell of the 32 KB window, and the cell index wrapping there. */
    nm_mem_write(f->m->mem, NM_VGA_TEXT_BASE + NM_VGA_TEXT_SIZE - 2, 0x4e5a, 2);
    g_assert_cmphex(nm_vga_cell(f->dev, NM_VGA_TEXT_SIZE / 2 - 1), ==, 0x4e5a);
    g_assert_cmphex(nm_vga_cell(f->dev, NM_VGA_TEXT_SIZE - 1), ==, 0x4e5a);
    /* Below and above the window: not the VGA's. */
    nm_mem_write(f->m->mem, NM_VGA_TEXT_BASE - 2, 0xffff, 2);
    nm_mem_write(f->m->mem, NM_VGA_TEXT_BASE + NM_VGA_TEXT_SIZE, 0xffff, 2);
    g_assert_cmphex(nm_vga_cell(f->dev, 0), ==, 0x1f41);
    g_assert_cmphex(nm_vga_cell(f->dev, NM_VGA_TEXT_SIZE / 2 - 1), ==, 0x4e5a);
}

static void test_crtc(pc_fixture *f, gconstpointer data)
{
    (void)data;
    nm_vga_screen s;
    nm_vga_screen_get(f->dev, &s);
    /* Mode 03h as the BIOS leaves it. */
    g_assert_cmpuint(s.cols, ==, 80);
    g_assert_cmpuint(s.rows, ==, 25);
    g_assert_cmpuint(s.char_width, ==, 9);
    g_assert_cmpuint(s.char_height, ==, 16);
    g_assert_cmpuint(s.cursor_start, ==, 13);
    g_assert_cmpuint(s.cursor_end, ==, 14);
    g_assert_true(s.cursor_on);
    g_assert_cmpuint(s.start, ==, 0);

    /* The cursor location as vgacon writes it: index, data, index, data. */
    uint64_t c0 = f->m->clock.cycles;
    outb(f, 0x3d4, 0x0e);
    outb(f, 0x3d5, 0x07);
    outb(f, 0x3d4, 0x0f);
    outb(f, 0x3d5, 0xd0);
    g_assert_cmpuint(f->m->clock.cycles - c0, ==, 4 * IO8_CLOCKS);
    nm_vga_screen_get(f->dev, &s);
    g_assert_cmpuint(s.cursor, ==, 0x7d0);
    g_assert_cmphex(inb(f, 0x3d5), ==, 0xd0);
    /* A word OUT to 0x3D4 is index then data (two byte cycles). */
    c0 = f->m->clock.cycles;
    nm_io_write(f->m->io, 0x3d4, 0x200a, 2); /* cursor start: off */
    g_assert_cmpuint(f->m->clock.cycles - c0, ==, 2 * IO8_CLOCKS);
    nm_io_write(f->m->io, 0x3d4, 0x120c, 2);
    nm_io_write(f->m->io, 0x3d4, 0x340d, 2);
    nm_vga_screen_get(f->dev, &s);
    g_assert_false(s.cursor_on);
    g_assert_cmpuint(s.start, ==, 0x1234);
    /* Cursor start keeps bits 5:0 (VGA TR). */
    nm_io_write(f->m->io, 0x3d4, 0xff0a, 2);
    g_assert_cmphex(inb(f, 0x3d5), ==, 0x3f);
    /* CR11 bit 7 protects CR00-CR07. */
    nm_io_write(f->m->io, 0x3d4, 0x8e | 0x80 << 8 | 0x11, 2);
    nm_io_write(f->m->io, 0x3d4, 0x2701, 2);
    nm_vga_screen_get(f->dev, &s);
    g_assert_cmpuint(s.cols, ==, 80);
    nm_io_write(f->m->io, 0x3d4, 0x0e11, 2);
    nm_io_write(f->m->io, 0x3d4, 0x2701, 2); /* 40 columns */
    nm_vga_screen_get(f->dev, &s);
    g_assert_cmpuint(s.cols, ==, 40);
    /* Out of range index: ignored, reads 0xFF. */
    outb(f, 0x3d4, 0x40);
    outb(f, 0x3d5, 0x12);
    g_assert_cmphex(inb(f, 0x3d5), ==, 0xff);
}

/* Attribute controller: vgacon's palette normalisation (read 0x3DA to
 * reset the flip-flop, then index, data), and the DAC. */
static void test_attribute_dac(pc_fixture *f, gconstpointer data)
{
    (void)data;
    nm_vga_screen s;
    nm_vga_screen_get(f->dev, &s);
    g_assert_cmphex(s.palette[0], ==, 0x000000);
    g_assert_cmphex(s.palette[1], ==, 0x0000aa);
    g_assert_cmphex(s.palette[6], ==, 0xaa5500); /* brown: DAC 14h */
    g_assert_cmphex(s.palette[15], ==, 0xffffff);
    inb(f, 0x3da);
    outb(f, 0x3c0, 0x01);
    outb(f, 0x3c0, 0x04); /* colour 1 -> DAC 4 (red) */
    g_assert_cmphex(inb(f, 0x3c1), ==, 0x04);
    outb(f, 0x3c0, 0x01); /* flip-flop is back at index: this is an index */
    inb(f, 0x3da);        /* and this resets it anyway */
    outb(f, 0x3c0, 0x20);
    nm_vga_screen_get(f->dev, &s);
    g_assert_cmphex(s.palette[1], ==, 0xaa0000);
    outb(f, 0x3c8, 0x04); /* DAC 4 <- 63, 32, 0 */
    outb(f, 0x3c9, 63);
    outb(f, 0x3c9, 32);
    outb(f, 0x3c9, 0xff); /* 6 bits kept */
    nm_vga_screen_get(f->dev, &s);
    g_assert_cmphex(s.palette[1], ==, 0xff81ff);
    outb(f, 0x3c7, 0x04);
    g_assert_cmphex(inb(f, 0x3c9), ==, 63);
    g_assert_cmphex(inb(f, 0x3c9), ==, 32);
    g_assert_cmphex(inb(f, 0x3c9), ==, 63);
    g_assert_cmphex(inb(f, 0x3c8), ==, 0x05);
}

/* Mode 03h timing: 28.322 MHz dots, 100 characters of 9 dots per line,
 * 449 lines per frame, display lines 0-399, vertical retrace lines 412-413
 * (CR10 = 19Ch, CR11 bits 3:0 = 14). */
static uint64_t ns_at_dot(uint64_t dot)
{
    return (dot * 1000000000u + 28322000u - 1) / 28322000u; /* first ns at or past it */
}

static void test_retrace(pc_fixture *f, gconstpointer data)
{
    (void)data;
    const uint64_t line = 900, frame = 900 * 449;
    g_assert_cmphex(nm_vga_status1_at(f->dev, 0), ==, 0x00);
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(80 * 9)), ==, 0x01); /* h blank */
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(79 * 9 + 8)), ==, 0x00);
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(400 * line)), ==, 0x01); /* v blank */
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(412 * line) - 1), ==, 0x01);
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(412 * line)), ==, 0x09);
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(414 * line) - 1), ==, 0x09);
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(414 * line)), ==, 0x01);
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(frame)), ==, 0x00); /* next frame */
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(100 * frame + 413 * line)), ==, 0x09);

    /* Through the port: the machine's virtual time decides. */
    nm_clock *clk = &f->m->clock;
    clk->cycles = nm_clock_cycles_from_ns(clk, ns_at_dot(3 * frame + 412 * line) + 100);
    g_assert_cmphex(inb(f, 0x3da) & 0x09, ==, 0x09);
    clk->cycles = nm_clock_cycles_from_ns(clk, ns_at_dot(4 * frame + 10 * line) + 100);
    g_assert_cmphex(inb(f, 0x3da) & 0x09, ==, 0x00);

    /* The 25.175 MHz clock (misc bits 3:2 = 0) stretches the frame. */
    outb(f, 0x3c2, 0x63);
    g_assert_cmphex(inb(f, 0x3cc), ==, 0x63);
    uint64_t ns = (412 * line * 1000000000u + 25175000u - 1) / 25175000u;
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns), ==, 0x09);
    g_assert_cmphex(nm_vga_status1_at(f->dev, ns_at_dot(412 * line)), ==, 0x00); /* line 366 */
}

static void test_dump_and_render(pc_fixture *f, gconstpointer data)
{
    (void)data;
    nm_mem_write(f->m->mem, NM_VGA_TEXT_BASE + 2 * 81, 0x1e41, 2); /* row 1, col 1: 'A' */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    nm_vga_dump(f->dev, out);
    fclose(out);
    g_assert_true(g_str_has_prefix(text, "nicemu-vga-text 1\ncols 80\nrows 25\ncell 9x16\n"));
    g_assert_nonnull(strstr(text, "\n0720 1e41 0720"));
    free(text);

    enum { W = 720, H = 400 };
    uint32_t *px = g_new0(uint32_t, W * H);
    g_assert_true(nm_display_render_text(f->dev, px, W, W, H));
    nm_vga_screen s;
    nm_vga_screen_get(f->dev, &s);
    for (unsigned y = 0; y < 16; y++) {
        for (unsigned x = 0; x < 9; x++) {
            bool on = x < 8 && (nm_vga_font_8x16[0x41][y] & (0x80 >> x));
            uint32_t want = on ? s.palette[0xe] : s.palette[0x1];
            g_assert_cmphex(px[(16 + y) * W + 9 + x], ==, want);
        }
    }
    /* The cursor (0,0 after reset): scan lines 13-14 in the cell's colour. */
    g_assert_cmphex(px[13 * W + 4], ==, s.palette[7]);
    g_assert_cmphex(px[12 * W + 4], ==, s.palette[0]);
    g_assert_false(nm_display_render_text(f->dev, px, W, W - 1, H)); /* too small */
    g_free(px);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add("/vga/" path, pc_fixture, NULL, vga_setup, fn, pc_teardown)
    ADD("text-buffer", test_text_buffer);
    ADD("crtc", test_crtc);
    ADD("attribute-dac", test_attribute_dac);
    ADD("retrace", test_retrace);
    ADD("dump-and-render", test_dump_and_render);
#undef ADD
    return g_test_run();
}
