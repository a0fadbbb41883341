/* The VGA adapter in colour text mode (devices/video/vga.c, docs/display.md):
 * its class, and the read-only view of the screen the display window, the
 * end-of-run text dump and the tests use.  Nothing here changes the device. */
#ifndef NICEMU_DEVICES_VIDEO_VGA_H
#define NICEMU_DEVICES_VIDEO_VGA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "emu/core/device.h"

typedef struct nm_machine nm_machine;

extern const nm_device_class nm_vga_class;

#define NM_VGA_TEXT_BASE 0xb8000u /* colour text window (memory map select 3) */
#define NM_VGA_TEXT_SIZE 0x8000u  /* 32 KB: 16 K character/attribute pairs */

/* What the CRT controller scans out, from its registers (IBM VGA Technical
 * Reference, CRTC registers 01h, 09h, 0Ah-0Fh, 12h, overflow 07h). */
typedef struct nm_vga_screen {
    unsigned cols, rows;   /* character cells */
    unsigned char_height;  /* scan lines per row (maximum scan line + 1) */
    unsigned char_width;   /* 8 or 9 dots (sequencer clocking mode bit 0) */
    unsigned start;        /* start address, in cells (CRTC 0Ch/0Dh) */
    unsigned cursor;       /* cursor location, in cells (CRTC 0Eh/0Fh) */
    unsigned cursor_start; /* first and last cursor scan line (0Ah/0Bh) */
    unsigned cursor_end;
    bool cursor_on;       /* 0Ah bit 5 clear */
    bool blink;           /* attribute mode control bit 3: bit 7 blinks */
    bool line_graphics;   /* mode control bit 2: C0h-DFh repeat dot 8 */
    uint32_t palette[16]; /* 0xRRGGBB per attribute colour (via the DAC) */
} nm_vga_screen;

/* The current screen geometry and colours. */
void nm_vga_screen_get(void *dev, nm_vga_screen *out);
/* The cell (character, attribute) at `index` cells from the start address,
 * wrapping inside the 32 KB window as the CRTC's address counter does. */
uint16_t nm_vga_cell(void *dev, unsigned index);
/* The text buffer as the screen shows it, for tests: a header line per
 * field, then one line of hex cells per row (docs/display.md). */
void nm_vga_dump(void *dev, FILE *out);

/* Input status 1 (port 3DAh) at a virtual time, without the side effect
 * of a port read (it resets the attribute flip-flop): for the tests. */
uint8_t nm_vga_status1_at(void *dev, uint64_t ns);

/* The VGA of a machine (NULL: none). */
void *nm_vga_of(nm_machine *m);

#endif
