/* Large zeroed host buffers: guest RAM and ROM, the memory map's per-page
 * arrays, the port map.  Anonymous mappings, so a page costs host memory
 * only once it is written, and allocating or freeing one costs a system
 * call or two whatever its size (a freed mapping is kept for the next
 * buffer of its size, its pages handed back to the host).  Each sits
 * between two inaccessible guard pages, its end against the upper one, so
 * a run past the end faults at once, and one before the start too when the
 * size is a whole number of pages, as guest RAM is.  The sanitizers do not
 * see these buffers (their heap's redzones, shadow and quarantine made a
 * fresh machine cost milliseconds under ASan; docs/fuzzing.md): the guard
 * pages stand in for the redzones. */
#ifndef NICEMU_HOSTTABLE_H
#define NICEMU_HOSTTABLE_H

#include <stddef.h>

/* `size` zero bytes; aborts (as g_malloc does) when the host has no memory
 * or address space. */
void *nm_host_table_new(size_t size);
/* Frees a buffer of `size` bytes from nm_host_table_new (NULL: nothing). */
void nm_host_table_free(void *table, size_t size);

#endif
