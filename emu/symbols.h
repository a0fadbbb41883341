/* Symbol tables for the profiler: function address ranges from a Linux
 * System.map or from an ELF file's symbol table (libelf), looked up by
 * binary search.  A table is built (add/load), then finished (sorted,
 * aliases merged, ends fixed) and read-only from then on. */
#ifndef NICEMU_SYMBOLS_H
#define NICEMU_SYMBOLS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct nm_symbol {
    uint32_t start, end; /* [start, end) */
    const char *name;
} nm_symbol;

typedef struct nm_symtab nm_symtab;

/* `label` names the table in reports ("vmlinux", the program's file name). */
nm_symtab *nm_symtab_new(const char *label);
void nm_symtab_free(nm_symtab *t);
const char *nm_symtab_label(const nm_symtab *t);

/* size 0: the function runs to the next symbol.  `global`: preferred over a
 * local alias at the same address. */
void nm_symtab_add(nm_symtab *t, uint32_t start, uint32_t size, const char *name, bool global);
/* Text symbols (types T t W w) of a System.map ("c1000000 T _text").  One
 * error naming the file and line on a malformed file. */
bool nm_symtab_load_system_map(nm_symtab *t, const char *path, GError **err);
/* STT_FUNC symbols of an ELF32/ELF64 file.  `load_address` (has_load:
 * given) is where the file's lowest PT_LOAD segment sits in the guest; the
 * symbols move with it.  Records the entry point (moved too). */
bool nm_symtab_load_elf(nm_symtab *t, const char *path, bool has_load, uint32_t load_address,
                        GError **err);
/* Sorts, merges aliases, clips each symbol at the next one's start and gives
 * symbols of size 0 the range up to the next symbol. */
void nm_symtab_finish(nm_symtab *t);

size_t nm_symtab_count(const nm_symtab *t);
const nm_symbol *nm_symtab_get(const nm_symtab *t, size_t index);
/* The ELF entry point (0: none). */
uint32_t nm_symtab_entry(const nm_symtab *t);
/* The address range the table covers: [lo, hi). */
void nm_symtab_bounds(const nm_symtab *t, uint32_t *lo, uint32_t *hi);

/* The symbol holding `addr`, or NULL.  lo and hi (may be NULL) get the range
 * around addr where the answer stays the same (the symbol's, or the gap's),
 * so a caller can skip lookups while the address stays inside. */
const nm_symbol *nm_symtab_lookup(const nm_symtab *t, uint32_t addr, uint32_t *lo, uint32_t *hi);
/* "FILE" or "FILE@ADDR" (a --symbols item). */
bool nm_symbols_parse_spec(const char *spec, char **file, bool *has_load, uint32_t *load_address);

#endif
