/* Snapshot files (snapshot.h, docs/snapshots.md). */
#include "emu/snapshot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "cpu/cpu.h"
#include "cpu/timing/timing.h"
#include "emu/core/snapshot.h"
#include "emu/measure.h"
#include "emu/outfile.h"

/* The file header (little-endian):
 *   0  magic "NICEMU-SNAPSHOT\0"
 *  16  u32 format version
 *  20  u32 identity length
 *  24  u64 state length (uncompressed)
 *  32  u64 state length (compressed)
 *  40  u32 CRC-32 of the identity and the compressed state
 *  44  u32 CRC-32 of bytes 0..43
 *  48  identity (text), then the compressed state */
#define MAGIC          "NICEMU-SNAPSHOT"
#define FORMAT_VERSION 1u
#define HEADER_BYTES   48u
/* A state larger than this is not one we wrote (RAM is at most 2 GB). */
#define MAX_STATE_BYTES (3ull << 30)

typedef struct snap_state {
    char *identity; /* of this run's configuration */
    bool saved;
} snap_state;

static snap_state *state_of(nm_machine *m)
{
    if (!m->app_snapshot) m->app_snapshot = g_new0(snap_state, 1);
    return m->app_snapshot;
}

void nm_snapshot_free(nm_machine *m)
{
    snap_state *st = m->app_snapshot;
    if (!st) return;
    g_free(st->identity);
    g_free(st);
    m->app_snapshot = NULL;
}

/* ------------------------------------------------------------ the parts */

/* The clock, the machine's own lines and counters, the run loop's event. */
static void visit_machine(nm_machine *m, nm_snap *s, uint64_t *max_ns_saved)
{
    if (!nm_snap_begin(s, "machine", 1)) return;
    nm_clock *c = &m->clock;
    uint64_t hz_num = c->hz_num, hz_den = c->hz_den;
    nm_snap_u64(s, "clock.hz_num", &hz_num);
    nm_snap_u64(s, "clock.hz_den", &hz_den);
    nm_snap_check(s, hz_num == c->hz_num && hz_den == c->hz_den, "clock.hz_num");
    nm_snap_u64(s, "clock.cycles", &c->cycles);
    nm_snap_u64(s, "clock.next_seq", &c->next_seq);
    nm_snap_u64(s, "clock.events_fired", &c->events_fired);
    nm_snap_u64(s, "clock.bus_wait_cycles", &c->bus_wait_cycles);
    nm_snap_bool(s, "intr", &m->intr);
    nm_snap_bool(s, "a20", &m->a20);
    nm_snap_u64(s, "console_tx_bytes", &m->console_tx_bytes);
    nm_snap_u64(s, "console_tx_ns", &m->console_tx_ns);
    nm_snap_u64(s, "snapshot_points", &m->snapshot_points);
    nm_snap_u32(s, "irq.levels", &m->irq.levels);
    nm_snap_u64s(s, "irq.raised_count", m->irq.raised_count, NM_IRQ_LINES);
    nm_snap_u64(s, "mem.unmapped_reads", &m->mem->unmapped_reads);
    nm_snap_u64(s, "mem.unmapped_writes", &m->mem->unmapped_writes);
    nm_snap_u64(s, "mem.rom_writes", &m->mem->rom_writes);
    nm_snap_u64(s, "mem.dma_refused", &m->mem->dma_refused);
    nm_snap_u64(s, "io.unclaimed_reads", &m->io->unclaimed_reads);
    nm_snap_u64(s, "io.unclaimed_writes", &m->io->unclaimed_writes);
    /* The max-virtual-time event with the limit it was armed for: a
     * restored run with another limit arms its own (emu/run.c). */
    uint64_t max_ns = m->cfg->max_virtual_ns;
    nm_snap_u64(s, "max_virtual_ns", &max_ns);
    nm_snap_timer(s, "max_time", &m->max_time);
    nm_snap_end(s);
    *max_ns_saved = max_ns;
}

/* RAM without its zero pages (a bitmap of the others, then their bytes),
 * and the contents of every ROM region (the boot ROM's parameter block is
 * written at load time). */
static void visit_memory(nm_machine *m, nm_snap *s)
{
    if (!nm_snap_begin(s, "memory", 1)) return;
    nm_mem_region *ram = m->ram;
    uint64_t size = ram->size;
    nm_snap_u64(s, "ram.size", &size);
    if (!nm_snap_check(s, size == ram->size, "ram.size")) return;
    size_t pages = ram->size / NM_PAGE_SIZE;
    size_t map_len = (pages + 7) / 8;
    if (nm_snap_saving(s)) {
        static const uint8_t zero[NM_PAGE_SIZE];
        uint8_t *map = g_malloc0(map_len);
        GByteArray *data = g_byte_array_new();
        for (size_t p = 0; p < pages; p++) {
            const uint8_t *page = ram->host + p * NM_PAGE_SIZE;
            if (!memcmp(page, zero, NM_PAGE_SIZE)) continue;
            map[p / 8] |= (uint8_t)(1u << (p % 8));
            g_byte_array_append(data, page, NM_PAGE_SIZE);
        }
        size_t dlen = data->len;
        nm_snap_var(s, "ram.pages", &map, &map_len, map_len);
        nm_snap_var(s, "ram.data", &data->data, &dlen, dlen);
        g_free(map);
        g_byte_array_free(data, TRUE);
    } else {
        uint8_t *map = NULL, *data = NULL;
        size_t got_map = 0, dlen = 0;
        nm_snap_var(s, "ram.pages", &map, &got_map, map_len);
        nm_snap_var(s, "ram.data", &data, &dlen, ram->size);
        if (!nm_snap_failed(s) && nm_snap_check(s, got_map == map_len, "ram.pages")) {
            size_t used = 0;
            for (size_t p = 0; p < pages; p++)
                used += (map[p / 8] >> (p % 8)) & 1;
            if (nm_snap_check(s, used * NM_PAGE_SIZE == dlen, "ram.data")) {
                const uint8_t *src = data;
                for (size_t p = 0; p < pages; p++) {
                    uint8_t *page = ram->host + p * NM_PAGE_SIZE;
                    if ((map[p / 8] >> (p % 8)) & 1) {
                        memcpy(page, src, NM_PAGE_SIZE);
                        src += NM_PAGE_SIZE;
                    } else {
                        memset(page, 0, NM_PAGE_SIZE);
                    }
                }
            }
        }
        g_free(map);
        g_free(data);
    }
    unsigned n = 0;
    for (nm_mem_region *r = m->mem->regions; r; r = r->next) {
        if (r->kind != NM_REGION_ROM || !r->owns_host) continue;
        nm_snap_push(s, "rom%u", n++);
        nm_snap_bytes(s, "contents", r->host, r->size);
        nm_snap_pop(s);
    }
    uint32_t roms = n;
    nm_snap_u32(s, "roms", &roms);
    nm_snap_check(s, roms == n, "roms");
    nm_snap_end(s);
}

static void visit_devices(nm_machine *m, nm_snap *s)
{
    for (guint i = 0; i < m->devices->len && !nm_snap_failed(s); i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (!inst->cls->snapshot) {
            nm_snap_fail(s, "the device %s (%s) cannot be saved", inst->name, inst->cls->name);
            return;
        }
        if (!nm_snap_begin(s, inst->name, inst->cls->snapshot_version)) return;
        /* Another device under this name is another machine. */
        nm_snap_same_string(s, "model", inst->cls->name);
        inst->cls->snapshot(inst->state, s);
        nm_snap_end(s);
    }
}

static void visit(nm_machine *m, nm_snap *s, uint64_t *max_ns_saved)
{
    visit_machine(m, s, max_ns_saved);
    visit_memory(m, s);
    if (!nm_snap_failed(s)) nm_cpu_snapshot(m->cpu, s);
    visit_devices(m, s);
    nm_measure *ms = nm_measure_of(m);
    if (ms && !nm_snap_failed(s)) nm_measure_snapshot(ms, s);
}

GByteArray *nm_snapshot_save_body(nm_machine *m, GError **err)
{
    nm_snap *s = nm_snap_writer_new(&m->clock);
    uint64_t max_ns;
    visit(m, s, &max_ns);
    GByteArray *body = nm_snap_writer_finish(s);
    if (!body) g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s", nm_snap_error(s));
    nm_snap_free(s);
    return body;
}

bool nm_snapshot_load_body(nm_machine *m, const uint8_t *body, size_t len, GError **err)
{
    nm_snap *s = nm_snap_reader_new(body, len, &m->clock, err);
    if (!s) return false;
    nm_snap_reader_clear_queue(s);
    uint64_t max_ns = 0;
    visit(m, s, &max_ns);
    bool ok = nm_snap_reader_finish(s);
    if (!ok) g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s", nm_snap_error(s));
    nm_snap_free(s);
    if (!ok) return false;
    /* Restored with another max-virtual-time: the run loop arms that one. */
    if (max_ns != m->cfg->max_virtual_ns) nm_timer_cancel(&m->clock, &m->max_time);
    /* Mappings may have moved (PCI BARs): the CPU's translations and the
     * pages watched for decoded code start afresh, as its caches did. */
    memset(m->mem->page_watched, 0, NM_PAGE_COUNT);
    nm_cpu_flush_translations(m->cpu);
    return true;
}

/* ------------------------------------------------------------ identity */

static char *file_sha256(const char *path, GError **err)
{
    gchar *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, err)) return NULL;
    char *hex = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, len);
    g_free(data);
    return hex;
}

char *nm_snapshot_identity(const nm_config *cfg, GError **err)
{
    GString *s = g_string_new(NULL);
    g_autofree char *conf = nm_config_identity(cfg);
    const char *files[][2] = {
        {"kernel", cfg->kernel}, {"initrd", cfg->initrd}, {"rom", cfg->rom}, {"elf", cfg->elf}};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        g_string_append_printf(s, "%s=", files[i][0]);
        if (files[i][1] && *files[i][1]) {
            g_auto(GStrv) paths = g_strsplit(files[i][1], ",", -1);
            for (char **p = paths; *p; p++) {
                char *hex = file_sha256(*p, err);
                if (!hex) {
                    g_string_free(s, TRUE);
                    return NULL;
                }
                g_string_append_printf(s, "%ssha256:%s", p == paths ? "" : ",", hex);
                g_free(hex);
            }
        }
        g_string_append_c(s, '\n');
    }
    g_string_append(s, conf);
    return g_string_free(s, FALSE);
}

/* The first line where two identities differ, as a message part. */
static char *identity_difference(const char *saved, const char *ours)
{
    g_auto(GStrv) a = g_strsplit(saved, "\n", -1);
    g_auto(GStrv) b = g_strsplit(ours, "\n", -1);
    for (guint i = 0; a[i] || b[i]; i++) {
        const char *x = a[i] ? a[i] : "", *y = b[i] ? b[i] : "";
        if (!strcmp(x, y)) continue;
        const char *eq = strchr(*x ? x : y, '=');
        g_autofree char *key =
            eq ? g_strndup(*x ? x : y, (gsize)(eq - (*x ? x : y))) : g_strdup("?");
        const char *xv = strchr(x, '=') ? strchr(x, '=') + 1 : "(none)";
        const char *yv = strchr(y, '=') ? strchr(y, '=') + 1 : "(none)";
        if (!strcmp(key, "kernel") || !strcmp(key, "initrd") || !strcmp(key, "rom") ||
            !strcmp(key, "elf"))
            return g_strdup_printf("it was made with another %s (%s), this run's is %s", key,
                                   *xv ? xv : "none", *yv ? yv : "none");
        if (!*x || !*y || !g_str_has_prefix(x, key) || !g_str_has_prefix(y, key))
            return g_strdup_printf("it was made with another set of devices ('%s' against this "
                                   "run's '%s')",
                                   *x ? x : "none", *y ? y : "none");
        return g_strdup_printf("it was made with %s='%s', this run has '%s'", key, xv, yv);
    }
    return g_strdup("the identities differ");
}

/* ---------------------------------------------------------------- files */

static void put32(uint8_t *p, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

bool nm_snapshot_write_file(nm_machine *m, const char *path, const char *identity, GError **err)
{
    GByteArray *body = nm_snapshot_save_body(m, err);
    if (!body) return false;
    size_t id_len = strlen(identity);
    uLongf zlen = compressBound(body->len);
    uint8_t *file = g_malloc(HEADER_BYTES + id_len + zlen);
    /* Level 1: RAM compresses about as well at a fraction of the time. */
    int zr = compress2(file + HEADER_BYTES + id_len, &zlen, body->data, body->len, 1);
    if (zr != Z_OK) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_FAILED, "zlib: compress failed (%d)", zr);
        g_free(file);
        g_byte_array_free(body, TRUE);
        return false;
    }
    memcpy(file, MAGIC, 16);
    put32(file + 16, FORMAT_VERSION);
    put32(file + 20, (uint32_t)id_len);
    put64(file + 24, body->len);
    put64(file + 32, zlen);
    memcpy(file + HEADER_BYTES, identity, id_len);
    uLong crc = crc32(0, file + HEADER_BYTES, (uInt)id_len);
    crc = crc32_z(crc, file + HEADER_BYTES + id_len, zlen);
    put32(file + 40, (uint32_t)crc);
    put32(file + 44, (uint32_t)crc32(0, file, 44));
    g_byte_array_free(body, TRUE);
    bool ok = nm_output_file_write("save-state", path, (const char *)file,
                                   HEADER_BYTES + id_len + zlen, err);
    g_free(file);
    return ok;
}

#define RESTORE_FAIL(...)                                                                          \
    do {                                                                                           \
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, __VA_ARGS__);                      \
        goto out;                                                                                  \
    } while (0)

bool nm_snapshot_read_file(nm_machine *m, const char *path, const char *identity, GError **err)
{
    gchar *file = NULL;
    gsize len = 0;
    uint8_t *body = NULL;
    char *saved_id = NULL;
    bool ok = false;
    GError *local = NULL;
    if (!nm_input_file_check("restore", path, err)) return false;
    if (!g_file_get_contents(path, &file, &len, &local)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "restore: %s", local->message);
        g_error_free(local);
        return false;
    }
    const uint8_t *f = (const uint8_t *)file;
    if (len < 16 || memcmp(f, MAGIC, 16))
        RESTORE_FAIL("restore: %s: not a nicemu snapshot (no NICEMU-SNAPSHOT header)", path);
    if (len < HEADER_BYTES)
        RESTORE_FAIL("restore: %s: the file is truncated (%zu bytes, the header alone is %u)", path,
                     (size_t)len, HEADER_BYTES);
    if (get32(f + 16) != FORMAT_VERSION)
        RESTORE_FAIL("restore: %s: snapshot format version %u, this nicemu reads version %u (made "
                     "by %s nicemu: take the snapshot again)",
                     path, get32(f + 16), FORMAT_VERSION,
                     get32(f + 16) > FORMAT_VERSION ? "a newer" : "an older");
    if (get32(f + 44) != (uint32_t)crc32(0, f, 44))
        RESTORE_FAIL("restore: %s: the file is damaged (header checksum)", path);
    uint64_t id_len = get32(f + 20), raw_len = get64(f + 24), zlen = get64(f + 32);
    uint64_t want = HEADER_BYTES + id_len + zlen;
    if (zlen > MAX_STATE_BYTES || raw_len > MAX_STATE_BYTES)
        RESTORE_FAIL("restore: %s: the file is damaged (impossible lengths)", path);
    if (len < want)
        RESTORE_FAIL("restore: %s: the file is truncated (%zu of %" G_GUINT64_FORMAT " bytes)",
                     path, (size_t)len, want);
    if (len > want)
        RESTORE_FAIL(
            "restore: %s: the file is damaged (%zu bytes after the state's %" G_GUINT64_FORMAT ")",
            path, (size_t)(len - want), want);
    uLong crc = crc32(0, f + HEADER_BYTES, (uInt)id_len);
    crc = crc32_z(crc, f + HEADER_BYTES + id_len, (size_t)zlen);
    if ((uint32_t)crc != get32(f + 40))
        RESTORE_FAIL("restore: %s: the file is damaged (checksum)", path);
    saved_id = g_strndup((const char *)f + HEADER_BYTES, (gsize)id_len);
    if (strcmp(saved_id, identity)) {
        g_autofree char *why = identity_difference(saved_id, identity);
        RESTORE_FAIL("restore: %s: %s", path, why);
    }
    body = g_malloc(raw_len ? raw_len : 1);
    uLongf got = (uLongf)raw_len;
    int zr = uncompress(body, &got, f + HEADER_BYTES + id_len, (uLong)zlen);
    if (zr != Z_OK || got != raw_len)
        RESTORE_FAIL("restore: %s: the file is damaged (the state does not decompress)", path);
    if (!nm_snapshot_load_body(m, body, raw_len, &local)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "restore: %s: %s", path,
                    local->message);
        g_error_free(local);
        goto out;
    }
    ok = true;
out:
    g_free(saved_id);
    g_free(body);
    g_free(file);
    return ok;
}

/* ------------------------------------------------------------ the run */

bool nm_snapshot_check_config(const nm_config *cfg, GError **err)
{
    if (cfg->save_state_exit && !cfg->save_state) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                    "save-state-exit: needs --save-state FILE");
        return false;
    }
    if (cfg->save_state && cfg->restore) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                    "save-state: cannot be used with --restore (the snapshot point is behind a "
                    "restored run)");
        return false;
    }
    if (!cfg->save_state && !cfg->restore) return true;
    const char *what = cfg->save_state ? "save-state" : "restore";
    if (cfg->cost_from && !strcmp(cfg->cost_from, "boot")) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: not with cost-from=boot: a cost model's caches, TLBs and write buffers "
                    "are not saved (snapshots are taken in the uncosted boot phase; "
                    "docs/snapshots.md)",
                    what);
        return false;
    }
    if (cfg->profile_from && !strcmp(cfg->profile_from, "boot")) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: not with profile-from=boot: the profiler's counters are not saved", what);
        return false;
    }
    /* slirp's state is the host's sockets: refused before the machine is
     * built (its own warning would come first otherwise). */
    for (guint i = 0; cfg->save_state && i < cfg->devices->len; i++) {
        const nm_devcfg *d = cfg->devices->pdata[i];
        const char *net = nm_devcfg_get(d, "net");
        if (net && (g_str_has_prefix(net, "slirp") || strstr(net, "+slirp"))) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "save-state: %s: net=slirp cannot be saved (its state is the host's "
                        "sockets and libslirp's own); use net=peer",
                        d->origin);
            return false;
        }
    }
    if (cfg->save_state && !nm_output_file_check("save-state", cfg->save_state, err)) return false;
    if (cfg->restore && !nm_input_file_check("restore", cfg->restore, err)) return false;
    return true;
}

bool nm_snapshot_setup(nm_machine *m, GError **err)
{
    const nm_config *cfg = m->cfg;
    if (!cfg->save_state && !cfg->restore) return true;
    snap_state *st = state_of(m);
    GError *local = NULL;
    st->identity = nm_snapshot_identity(cfg, &local);
    if (!st->identity) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: %s",
                    cfg->save_state ? "save-state" : "restore", local->message);
        g_error_free(local);
        return false;
    }
    if (cfg->restore) return nm_snapshot_read_file(m, cfg->restore, st->identity, err);
    /* A trial save: what cannot be saved is refused now, not after the boot. */
    GByteArray *body = nm_snapshot_save_body(m, &local);
    if (!body) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "save-state: this machine cannot be saved: %s", local->message);
        g_error_free(local);
        return false;
    }
    g_byte_array_free(body, TRUE);
    return true;
}

void nm_snapshot_at_point(nm_machine *m)
{
    const nm_config *cfg = m->cfg;
    snap_state *st = m->app_snapshot;
    if (!cfg->save_state || !st || st->saved) return;
    GError *err = NULL;
    gint64 t0 = g_get_monotonic_time(); /* host time: for the message only */
    if (!nm_snapshot_write_file(m, cfg->save_state, st->identity, &err)) {
        g_autofree char *detail = g_strdup_printf("save-state: %s", err->message);
        g_error_free(err);
        nm_machine_request_stop(m, NM_STOP_ERROR, 0, detail);
        return;
    }
    st->saved = true;
    GStatBuf sb;
    double kb = g_stat(cfg->save_state, &sb) == 0 ? (double)sb.st_size / 1024.0 : 0.0;
    fprintf(stderr,
            "nicemu: state saved to %s at the snapshot point (%" G_GUINT64_FORMAT
            " instructions, %" G_GUINT64_FORMAT " clocks, virtual time %.9f s; %.0f KB in %.3f s "
            "of wall time)\n",
            cfg->save_state, nm_cpu_instructions(m->cpu), m->clock.cycles,
            (double)nm_clock_now_ns(&m->clock) / 1e9, kb,
            (double)(g_get_monotonic_time() - t0) / 1e6);
    if (cfg->save_state_exit) {
        g_autofree char *detail = g_strdup_printf("state saved to %s", cfg->save_state);
        nm_machine_request_stop(m, NM_STOP_SAVED, 0, detail);
    }
}

bool nm_snapshot_finish(nm_machine *m, GError **err)
{
    const nm_config *cfg = m->cfg;
    snap_state *st = m->app_snapshot;
    if (!cfg->save_state || (st && st->saved)) return true;
    if (m->stop_reason == NM_STOP_ERROR) return true; /* said already */
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                "save-state: nothing saved: the guest never reached its snapshot point (init "
                "writes it to port 0x600 after configuring the network; an initramfs from before "
                "snapshots has none)");
    return false;
}
