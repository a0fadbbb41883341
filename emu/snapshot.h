/* Snapshot files (docs/snapshots.md): --save-state FILE saves the whole
 * machine when the guest reaches its snapshot point (the marker port's
 * NM_MARKER_SNAPSHOT, written by init after it configured the network);
 * --restore FILE starts a run from there, bit-identically to the run that
 * saved it.
 *
 * The file: a header (magic, format version, lengths, CRC-32s), the
 * identity (what the machine was built from: the machine keys, the devices,
 * the hashes of the kernel, initrd, ROM and ELF files; nm_config_identity),
 * then the state, zlib-compressed: one section per part (emu/core/
 * snapshot.h), RAM without its zero pages. */
#ifndef NICEMU_SNAPSHOT_H
#define NICEMU_SNAPSHOT_H

#include <glib.h>
#include <stdbool.h>

#include "emu/config.h"
#include "emu/core/machine.h"

/* The snapshot keys of a configuration, before the machine is built: the
 * files, and what can never be saved (cost-from=boot: a cost model's caches;
 * profile-from=boot: the profiler's counters).  One error, exit status 2. */
bool nm_snapshot_check_config(const nm_config *cfg, GError **err);

/* Sets the machine up for --save-state / --restore (after nm_pc_new):
 * --save-state: the identity, and a trial save in memory, so that a machine
 * that cannot be saved (net=slirp, a device without snapshot support) is
 * refused before the run; --restore: loads FILE into the machine (the
 * damaged, truncated, other-version file, or one made from other inputs, is
 * refused with one message).  Errors are "save-state: ..." or
 * "restore: FILE: ...". */
bool nm_snapshot_setup(nm_machine *m, GError **err);

/* The run loop, at the snapshot point: saves if --save-state asks for it
 * (once), and ends the run with --save-state-exit.  A save that fails ends
 * the run with reason "error" (exit status 1). */
void nm_snapshot_at_point(nm_machine *m);

/* After the run: whether --save-state saved (false and *err if it was asked
 * for and the guest never reached the snapshot point). */
bool nm_snapshot_finish(nm_machine *m, GError **err);

/* Frees what nm_snapshot_setup kept with the machine (nm_machine_free). */
void nm_snapshot_free(nm_machine *m);

/* The whole state to or from memory (tests): the body before compression. */
GByteArray *nm_snapshot_save_body(nm_machine *m, GError **err);
bool nm_snapshot_load_body(nm_machine *m, const uint8_t *body, size_t len, GError **err);

/* Files (tests and tools). */
bool nm_snapshot_write_file(nm_machine *m, const char *path, const char *identity, GError **err);
bool nm_snapshot_read_file(nm_machine *m, const char *path, const char *identity, GError **err);
/* The identity of a configuration (nm_config_identity plus the input files'
 * SHA-256); NULL and *err if an input cannot be read. */
char *nm_snapshot_identity(const nm_config *cfg, GError **err);

#endif
