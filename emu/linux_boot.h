/* Linux boot protocol loader (Documentation/x86/boot.rst), 32-bit entry:
 * the protected-mode kernel of a bzImage goes to 0x100000, the zero page
 * (struct boot_params) with the setup header, command line, initrd, E820
 * map and setup_data chain is built in RAM, and the boot ROM's parameter
 * block says "jump to code32_start with ESI = boot_params".  The CPU itself
 * starts at the reset vector in our ROM, like real hardware.
 *
 * Low memory (firmware/README.md has the whole map):
 *   0x00500  the ROM parameter block
 *   0x10000  boot_params (4 KB)
 *   0x11000  the command line (up to cmdline_size + NUL, below 0x20000)
 *   0x20000  setup_data entries, up to 0x9F000
 *
 * Either one call:
 *     nm_linux_boot_load(m, cfg->kernel, cfg->initrd, cfg->append, err)
 * or the steps (for extra setup_data, e.g. a device tree):
 *     lb = nm_linux_boot_open(m, path, err);
 *     nm_linux_boot_set_cmdline(lb, cmdline, err);
 *     nm_linux_boot_add_initrd(lb, path, err);             (0..n times)
 *     nm_linux_boot_add_setup_data(lb, NM_SETUP_DTB, dtb, len, err);
 *     nm_linux_boot_finish(lb, err);                       (writes RAM)
 *     nm_linux_boot_free(lb); */
#ifndef NICEMU_LINUX_BOOT_H
#define NICEMU_LINUX_BOOT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nm_machine nm_machine;
typedef struct nm_linux_boot nm_linux_boot;

#define NM_LINUX_LOAD_ADDR        0x00100000u
#define NM_LINUX_BOOT_PARAMS_ADDR 0x00010000u
#define NM_LINUX_CMDLINE_ADDR     0x00011000u
#define NM_LINUX_CMDLINE_END      0x00020000u
#define NM_LINUX_SETUP_DATA_ADDR  0x00020000u
#define NM_LINUX_SETUP_DATA_END   0x0009f000u

/* setup_data types (arch/x86/include/uapi/asm/bootparam.h). */
enum { NM_SETUP_E820_EXT = 1, NM_SETUP_DTB = 2, NM_SETUP_PCI = 3, NM_SETUP_RNG_SEED = 9 };

/* E820 types and the map for a RAM size (boot_params.e820_table). */
enum { NM_E820_RAM = 1, NM_E820_RESERVED = 2 };
typedef struct nm_e820_entry {
    uint64_t addr, size;
    uint32_t type;
} nm_e820_entry;
/* Fills at most `max` entries; returns how many.  0..0x9FC00 RAM, EBDA
 * reserved to 0xA0000, the ROM at 0xF0000 reserved, 1 MB..RAM end RAM,
 * the ROM alias below 4 GB reserved.  Everything else between RAM end and
 * 0xFFFF0000 is a hole, where Linux puts PCI BARs. */
unsigned nm_linux_e820(uint64_t ram_bytes, nm_e820_entry *out, unsigned max);

/* Reads and checks a bzImage: "HdrS", protocol 2.10 or later, loadable
 * high, sizes that fit this machine's RAM. */
nm_linux_boot *nm_linux_boot_open(nm_machine *m, const char *path, GError **err);
/* The same from memory (tests); `name` is used in messages. */
nm_linux_boot *nm_linux_boot_open_data(nm_machine *m, const char *name, const uint8_t *data,
                                       size_t len, GError **err);
bool nm_linux_boot_set_cmdline(nm_linux_boot *lb, const char *cmdline, GError **err);
/* Initrds are concatenated in the order added, each padded to 4 bytes
 * (cpio alignment; the kernel skips the zero padding between archives). */
bool nm_linux_boot_add_initrd(nm_linux_boot *lb, const char *path, GError **err);
bool nm_linux_boot_add_initrd_data(nm_linux_boot *lb, const char *name, const void *data,
                                   size_t len, GError **err);
/* Appends a setup_data node (linked from boot_params.hdr.setup_data, in
 * the order added). */
bool nm_linux_boot_add_setup_data(nm_linux_boot *lb, uint32_t type, const void *data, uint32_t len,
                                  GError **err);
/* Places everything in RAM and writes the ROM parameter block. */
bool nm_linux_boot_finish(nm_linux_boot *lb, GError **err);
void nm_linux_boot_free(nm_linux_boot *lb);

/* Where things went (valid after finish; for tests and the run summary). */
uint32_t nm_linux_boot_initrd_addr(const nm_linux_boot *lb);
uint32_t nm_linux_boot_initrd_size(const nm_linux_boot *lb);
uint32_t nm_linux_boot_entry(const nm_linux_boot *lb);

/* All steps: kernel, initrds as "FILE[,FILE...]" (NULL: none), command
 * line (NULL: empty). */
bool nm_linux_boot_load(nm_machine *m, const char *kernel, const char *initrds, const char *cmdline,
                        GError **err);

#endif
