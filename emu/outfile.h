/* Files the user names: inputs must be regular files (a FIFO or a device
 * would block or never end), outputs are checked before a run starts (a
 * long run's results are never lost to a typo) and written without ever
 * replacing what the path names when it is not a regular file. */
#ifndef NICEMU_OUTFILE_H
#define NICEMU_OUTFILE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* `path` exists and is a regular file (after symlinks).  The message is
 * "OPTION: PATH: reason" (`option` like "--elf" or "config"). */
bool nm_input_file_check(const char *option, const char *path, GError **err);

/* `path` can be written: an existing file or device we may write, or a new
 * name in a directory we may write.  "OPTION: cannot write 'PATH': reason". */
bool nm_output_file_check(const char *option, const char *path, GError **err);

/* Writes `len` bytes to `path`.  A regular file (or a new name) is replaced
 * atomically: a temporary file renamed over it.  Anything else the path
 * names (a symlink, /dev/stdout, a FIFO, a device) is written through, never
 * replaced.  Every write error is reported. */
bool nm_output_file_write(const char *option, const char *path, const char *data, size_t len,
                          GError **err);

#endif
