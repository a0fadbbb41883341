/* The bare-metal ELF loader: an ELF32 i386 executable's PT_LOAD segments go
 * into RAM at their physical addresses, and the CPU starts at the entry point
 * in flat 32-bit protected mode (like a Multiboot loader). */
#ifndef NICEMU_ELFLOAD_H
#define NICEMU_ELFLOAD_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct nm_machine nm_machine;
typedef struct nm_cpu nm_cpu;

/* Loads `path` into the machine's RAM.  Every segment must lie inside RAM;
 * a bad file gets one clear error (NM_CONFIG_ERROR_FILE) and nothing is
 * left half-loaded.  *entry receives the entry point. */
bool nm_elf_load(nm_machine *m, const char *path, uint32_t *entry, GError **err);

/* Same from a buffer (`name` is for messages). */
bool nm_elf_load_buffer(nm_machine *m, const char *name, const uint8_t *data, size_t len,
                        uint32_t *entry, GError **err);

/* nm_elf_load, then nm_cpu_enter_flat32(cpu, entry, stack_top). */
bool nm_elf_boot(nm_machine *m, nm_cpu *cpu, const char *path, uint32_t stack_top, GError **err);

#endif
