/* The display window (--display sdl, docs/display.md): the VGA text
 * console rendered with the 8x16 VGA font, the cursor, and a status strip
 * of live counters.  An observer at the application layer, not a device:
 * it reads the VGA's text buffer and the machine's counters between CPU
 * slices (a run-loop poller) every 20 ms of virtual time, and presents at
 * most every 20 ms of host time; it never schedules an event or changes
 * what the guest sees.  Its only inputs to the guest are the keys typed
 * into the window (to the i8042 keyboard), and closing the window ends the
 * run as SIGINT does. */
#ifndef NICEMU_DISPLAY_H
#define NICEMU_DISPLAY_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "emu/machine.h"
#include "emu/profiler.h"

typedef struct nm_display nm_display;

/* From the configuration (display, screenshot).  Returns NULL with *err
 * unset when the display is "none"; NULL and one clear error when the
 * window cannot be opened or the screenshot path cannot be written. */
nm_display *nm_display_new(nm_machine *m, nm_profiler *prof, GError **err);
/* At the end of the run: the last refresh, and the --screenshot PNG. */
bool nm_display_finish(nm_display *d, GError **err);
void nm_display_free(nm_display *d);

/* Rendering without a window (the tests): the text area of the VGA `vga`
 * into `pixels` (0xRRGGBB, `stride` pixels per row), which must hold
 * cols*char_width x rows*char_height pixels; returns false if the screen's
 * geometry exceeds `max_w` x `max_h`. */
bool nm_display_render_text(void *vga, uint32_t *pixels, unsigned stride, unsigned max_w,
                            unsigned max_h);

/* Writes 0xRRGGBB pixels as an 8-bit RGB PNG (libpng). */
bool nm_png_write(const char *path, const uint32_t *pixels, unsigned w, unsigned h, unsigned stride,
                  GError **err);

#endif
