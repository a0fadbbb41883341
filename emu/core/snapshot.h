/* Machine snapshots: the state of every part as versioned lists of named
 * fields (docs/snapshots.md).
 *
 * A part (a device, the CPU, a netdev backend, the machine) saves and loads
 * with one visitor function: it opens its section with nm_snap_begin, names
 * each field with a typed call (nm_snap_u32(s, "imr", &chip->imr)) and
 * closes it with nm_snap_end.  Saving, the calls append; loading, they look
 * the field up by name and copy it back.  So one function serves both
 * directions and cannot get out of step with itself.
 *
 * Versioning: a section carries the version its visitor passes to
 * nm_snap_begin.  A field added later is introduced by nm_snap_since(s, N)
 * (and the version raised to N): a file from before N has no such field and
 * the field keeps the value the freshly built machine gave it; a file of
 * version >= N must have it.  A file whose section is newer than this build
 * knows, a field it lacks, a field this build does not know, or a field of
 * another type is refused with one message naming section and field.
 *
 * Host pointers are never saved: a part saves indices, counts, contents.
 * Pending timers are saved by their owners (nm_snap_timer: pending, due
 * cycle, scheduling order); saving checks that every timer in the queue was
 * saved by someone, loading rebuilds the queue from them in (due, seq)
 * order. */
#ifndef NICEMU_CORE_SNAPSHOT_H
#define NICEMU_CORE_SNAPSHOT_H

#include <glib.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/core/clock.h"

typedef struct nm_snap nm_snap;

/* A writer: the body grows as parts visit it. */
nm_snap *nm_snap_writer_new(nm_clock *clock);
/* A reader over a body (kept by the caller while the reader lives); the
 * body's structure is checked here (NULL and *err on damage). */
nm_snap *nm_snap_reader_new(const uint8_t *body, size_t len, nm_clock *clock, GError **err);
void nm_snap_free(nm_snap *s);

bool nm_snap_saving(const nm_snap *s);
/* The first failure (NULL: none).  Every call after a failure does nothing. */
const char *nm_snap_error(const nm_snap *s);
static inline bool nm_snap_failed(const nm_snap *s)
{
    return nm_snap_error(s) != NULL;
}
/* A part refuses (saving: "slirp cannot be saved") or finds a loaded value
 * impossible.  The first failure wins. */
void nm_snap_fail(nm_snap *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Loading: fails with "SECTION: FIELD: bad value" unless `ok`.  For the
 * indices and counts a part uses to reach into its arrays. */
bool nm_snap_check(nm_snap *s, bool ok, const char *field);

/* Sections.  nm_snap_begin returns false (and fails) when a loaded file has
 * no such section or a newer version of it. */
bool nm_snap_begin(nm_snap *s, const char *section, uint32_t version);
/* Loading: every field of the section in the file must have been read. */
void nm_snap_end(nm_snap *s);
/* Loading: whether the file has this section (parts that may be absent). */
bool nm_snap_has_section(const nm_snap *s, const char *section);
/* The version of the section being visited (the file's when loading). */
uint32_t nm_snap_version(const nm_snap *s);
/* The next field appeared in section version `version`. */
void nm_snap_since(nm_snap *s, uint32_t version);
/* Field names under a prefix ("ch0.", "conn3."): push with a format, pop. */
void nm_snap_push(nm_snap *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void nm_snap_pop(nm_snap *s);

/* Fields.  Loading, the value is written only when the field is found. */
void nm_snap_u8(nm_snap *s, const char *name, uint8_t *v);
void nm_snap_u16(nm_snap *s, const char *name, uint16_t *v);
void nm_snap_u32(nm_snap *s, const char *name, uint32_t *v);
void nm_snap_u64(nm_snap *s, const char *name, uint64_t *v);
void nm_snap_i32(nm_snap *s, const char *name, int32_t *v);
void nm_snap_i64(nm_snap *s, const char *name, int64_t *v);
void nm_snap_bool(nm_snap *s, const char *name, bool *v);
/* An unsigned of the host's `unsigned` (saved as 32 bits). */
void nm_snap_uint(nm_snap *s, const char *name, unsigned *v);
/* A size_t (saved as 64 bits). */
void nm_snap_size(nm_snap *s, const char *name, size_t *v);
/* Fixed-size data: the length in the file must be the same. */
void nm_snap_bytes(nm_snap *s, const char *name, void *p, size_t len);
void nm_snap_u16s(nm_snap *s, const char *name, uint16_t *p, size_t count);
void nm_snap_u32s(nm_snap *s, const char *name, uint32_t *p, size_t count);
void nm_snap_u64s(nm_snap *s, const char *name, uint64_t *p, size_t count);
/* Variable-size data of at most `max` bytes: loading replaces *p with a
 * g_malloc'd copy (NULL for none) and sets *len. */
void nm_snap_var(nm_snap *s, const char *name, uint8_t **p, size_t *len, size_t max);
/* Loading copies the saved data into `buf` of `cap` bytes and sets *len
 * (more than `cap` bytes is a failure). */
void nm_snap_var_into(nm_snap *s, const char *name, void *buf, size_t cap, size_t *len);
/* A string (NULL allowed); loading replaces *str (g_free / g_strdup). */
void nm_snap_string(nm_snap *s, const char *name, char **str);
/* A string this machine has too (a model, a name): saving writes `value`,
 * loading fails unless the file's is the same. */
void nm_snap_same_string(nm_snap *s, const char *name, const char *value);
/* A GString's contents. */
void nm_snap_gstring(nm_snap *s, const char *name, GString *str);
/* A timer of the part: pending, due cycle, scheduling order.  The function,
 * opaque and name stay those of the machine being loaded into. */
void nm_snap_timer(nm_snap *s, const char *name, nm_timer *t);

/* Loading: `fn(opaque)` once every part has loaded and the queue is rebuilt,
 * only if nothing failed (output a part writes again: the console, a
 * capture file).  In the order registered. */
void nm_snap_after_load(nm_snap *s, void (*fn)(void *opaque), void *opaque);

/* Saving: the body so far (the caller takes it); fails, returning NULL,
 * if a pending timer was not saved by any part. */
GByteArray *nm_snap_writer_finish(nm_snap *s);
/* Loading: empties the clock's queue before the parts load their timers. */
void nm_snap_reader_clear_queue(nm_snap *s);
/* Loading: sections no part read are an error (a part this build lacks);
 * then the queue is rebuilt from the loaded timers.  False on failure. */
bool nm_snap_reader_finish(nm_snap *s);

#endif
