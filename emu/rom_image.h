/* The boot ROM: our own (firmware/, built into the binary) or a user's
 * raw image (--rom), mapped so it ends at 1 MB and at 4 GB; and the
 * parameter block through which a loader tells our ROM where to go. */
#ifndef NICEMU_ROM_IMAGE_H
#define NICEMU_ROM_IMAGE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nm_machine nm_machine;

/* Our ROM's bytes (generated at build time from firmware/rom.S). */
const uint8_t *nm_boot_rom(size_t *len);

/* Maps `len` bytes (1 byte to 128 KB) as ROM ending at 0xFFFFF and, as an
 * alias of the same bytes, at 0xFFFFFFFF.  The ROM covers the RAM beneath
 * it below 1 MB.  Call once, after nm_machine_new. */
bool nm_rom_install_image(nm_machine *m, const uint8_t *data, size_t len, GError **err);
/* nm_rom_install_image with our ROM. */
bool nm_boot_rom_install(nm_machine *m, GError **err);
/* Reads a raw ROM file (--rom) and installs it.  Errors name the file. */
bool nm_rom_install_file(nm_machine *m, const char *path, GError **err);

/* Writes the parameter block (firmware/rom_params.h) into RAM: our ROM
 * enters 32-bit flat protected mode and jumps to `entry` with ESI = `esi`
 * (ESP = `esp`, or its own stack if 0), EBX = EDI = EBP = 0, IF = 0. */
bool nm_boot_rom_set_entry(nm_machine *m, uint32_t entry, uint32_t esi, uint32_t esp, GError **err);

#endif
