/* The contract between the emulator's loaders and the boot ROM: where the
 * ROM finds what to start (see firmware/README.md).  Included from C and
 * from the ROM's assembly, so only #defines. */
#ifndef NICEMU_ROM_PARAMS_H
#define NICEMU_ROM_PARAMS_H

/* The parameter block lives in low RAM, in the page Linux never uses. */
#define NM_ROM_PARAM_ADDR    0x00000500
#define NM_ROM_PARAM_MAGIC   0x50424d4e /* "NMBP" little-endian */
#define NM_ROM_PARAM_VERSION 1

/* Offsets of its 32-bit little-endian fields. */
#define NM_ROM_PARAM_OFF_MAGIC   0  /* NM_ROM_PARAM_MAGIC */
#define NM_ROM_PARAM_OFF_VERSION 4  /* NM_ROM_PARAM_VERSION */
#define NM_ROM_PARAM_OFF_ENTRY   8  /* EIP of the 32-bit entry point */
#define NM_ROM_PARAM_OFF_ESI     12 /* ESI at entry (Linux: boot_params address) */
#define NM_ROM_PARAM_OFF_ESP     16 /* ESP at entry; 0 = the ROM's own stack */
#define NM_ROM_PARAM_OFF_FLAGS   20 /* reserved, 0 */
#define NM_ROM_PARAM_SIZE        24

/* The ROM's stack top in low RAM (real mode SS:SP = 0:7000, then ESP). */
#define NM_ROM_STACK_TOP 0x00007000

/* Flat segments of the ROM's GDT: the Linux 32-bit boot protocol's
 * __BOOT_CS and __BOOT_DS (Documentation/x86/boot.rst). */
#define NM_ROM_BOOT_CS 0x10
#define NM_ROM_BOOT_DS 0x18

/* Where the ROM is mapped: its last byte at 1 MB - 1 and at 4 GB - 1. */
#define NM_ROM_SIZE      0x10000
#define NM_ROM_LOW_BASE  0x000f0000
#define NM_ROM_MAX_IMAGE 0x20000

#endif
