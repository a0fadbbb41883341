/* A device's configuration as its create() sees it (a key-file section or
 * one --nic/--device argument, parsed by the application: emu/config.c),
 * the checked accessors for its keys and the value parsers they share.
 * Machine core: includes nothing above emu/core/ (emu/core/README.md). */
#ifndef NICEMU_CORE_DEVCFG_H
#define NICEMU_CORE_DEVCFG_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

/* Errors in the configuration (a device's keys included): exit status 2. */
#define NM_CONFIG_ERROR (nm_config_error_quark())
GQuark nm_config_error_quark(void);
enum { NM_CONFIG_ERROR_FILE, NM_CONFIG_ERROR_KEY, NM_CONFIG_ERROR_VALUE };

/* One device: a key-file section or one --nic/--device argument. */
typedef struct nm_devcfg {
    char *origin; /* "machine.ini [nic0]" or "--nic ne2000,…": for messages */
    char *name;   /* section name ("nic0"), or "nicN" numbered from the CLI */
    char *model;
    GPtrArray *keys, *values; /* in the order written */
} nm_devcfg;

void nm_devcfg_free(nm_devcfg *d);

/* Device key access for a device's create function: each checks and reports
 * "origin: key: bad value 'x' (accepted: …)". */
const char *nm_devcfg_get(const nm_devcfg *d, const char *key);
bool nm_devcfg_u32(const nm_devcfg *d, const char *key, uint32_t def, uint32_t min, uint32_t max,
                   uint32_t *out, GError **err);
bool nm_devcfg_mac(const nm_devcfg *d, const char *key, const uint8_t def[6], uint8_t out[6],
                   GError **err);

/* Sets "origin: key: bad value 'v' (accepted: what)" (v escaped) and
 * returns false. */
bool nm_config_bad_value(GError **err, const char *origin, const char *key, const char *value,
                         const char *accepted);

/* Parsers shared with the device code and the tests. */
bool nm_parse_u64(const char *s, uint64_t *out);                       /* decimal or 0x hex */
bool nm_parse_size(const char *s, uint64_t *out);                      /* 64M, 512K, 1G, bytes */
bool nm_parse_duration_ns(const char *s, uint64_t *out);               /* 10s, 5ms, 20us, 100ns */
bool nm_parse_pair(const char *s, char sep, uint64_t *a, uint64_t *b); /* "A-B", "A,B" */

#endif
