/* pcap files, through libpcap.
 *
 * Capture (capture=FILE on a NIC): the link writes every frame of both
 * directions when its last bit arrives, stamped with that virtual time in
 * nanoseconds, without its FCS (link type EN10MB, nanosecond pcap).  The
 * dumper is flushed after each frame, so a run stopped by a signal or a
 * crash still leaves a readable file; two identical runs write identical
 * bytes (nothing from the host goes in).
 *
 * pcap-in:FILE: frames from a pcap file are sent to the NIC so that they
 * keep their recorded spacing: frame i's last bit arrives at
 *   start + wire(frame 0) + (ts_i - ts_0)
 * i.e. the first frame goes on the wire at `start` (default 0).  A frame that
 * would overlap the one before it waits for the wire.  The FCS is computed
 * and appended (pcap frames have none).  Frames from the NIC are counted and
 * discarded. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "devices/netdev/netdev_internal.h"
#include "emu/core/log.h"
#include "emu/core/snapshot.h"

#define NS_PER_SECOND 1000000000ull
#define SNAPLEN       65535

/* ---- capture writer ----------------------------------------------------- */

struct nm_pcap_writer {
    pcap_t *dead;
    pcap_dumper_t *dump;
};

nm_pcap_writer *nm_pcap_writer_open(const char *path, GError **err)
{
    pcap_t *dead =
        pcap_open_dead_with_tstamp_precision(DLT_EN10MB, SNAPLEN, PCAP_TSTAMP_PRECISION_NANO);
    if (!dead) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "libpcap: cannot open a writer");
        return NULL;
    }
    pcap_dumper_t *dump = pcap_dump_open(dead, path);
    if (!dump) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "cannot write '%s': %s", path,
                    pcap_geterr(dead));
        pcap_close(dead);
        return NULL;
    }
    nm_pcap_writer *w = g_new0(nm_pcap_writer, 1);
    w->dead = dead;
    w->dump = dump;
    return w;
}

bool nm_pcap_writer_write(nm_pcap_writer *w, uint64_t ns, const uint8_t *frame, size_t len,
                          const char **why)
{
    size_t n = len > NM_ETH_FCS_BYTES ? len - NM_ETH_FCS_BYTES : 0;
    struct pcap_pkthdr h;
    memset(&h, 0, sizeof h);
    h.ts.tv_sec = (time_t)(ns / NS_PER_SECOND);
    /* With nanosecond precision libpcap reads tv_usec as nanoseconds. */
    h.ts.tv_usec = (suseconds_t)(ns % NS_PER_SECOND);
    h.len = (bpf_u_int32)n;
    h.caplen = (bpf_u_int32)(n > SNAPLEN ? SNAPLEN : n);
    /* pcap_dump reports nothing; the stdio stream under it and the flush do. */
    FILE *f = pcap_dump_file(w->dump);
    errno = 0;
    pcap_dump((u_char *)w->dump, &h, frame);
    if (pcap_dump_flush(w->dump) != 0 || ferror(f)) {
        *why = g_strerror(errno ? errno : EIO);
        return false;
    }
    return true;
}

/* The capture so far, for a snapshot: the file as written (flushed after
 * every frame), read back from `path`. */
bool nm_pcap_writer_contents(nm_pcap_writer *w, const char *path, uint8_t **data, size_t *len,
                             GError **err)
{
    if (pcap_dump_flush(w->dump) != 0) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot flush '%s'", path);
        return false;
    }
    if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                    "'%s' is not a regular file: its frames so far cannot be read back", path);
        return false;
    }
    gchar *text = NULL;
    gsize n = 0;
    if (!g_file_get_contents(path, &text, &n, err)) return false;
    *data = (uint8_t *)text;
    *len = n;
    return true;
}

/* A restored run's capture: the file header as a fresh writer writes it,
 * then the records the saved run had written, then what comes. */
bool nm_pcap_writer_restart(nm_pcap_writer *w, const char *path, const uint8_t *data, size_t len,
                            GError **err)
{
    /* The global header is the writer's own (the same for every capture). */
    if (len < 24 || memcmp(data, "\x4d\x3c\xb2\xa1", 4)) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "the saved capture of '%s' is damaged",
                    path);
        return false;
    }
    pcap_dump_close(w->dump);
    w->dump = pcap_dump_open(w->dead, path); /* NULL on failure: close skips it */
    if (!w->dump) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write '%s': %s", path,
                    pcap_geterr(w->dead));
        return false;
    }
    FILE *f = pcap_dump_file(w->dump);
    if (fwrite(data + 24, 1, len - 24, f) != len - 24 || pcap_dump_flush(w->dump) != 0) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write '%s'", path);
        return false;
    }
    return true;
}

void nm_pcap_writer_close(nm_pcap_writer *w)
{
    if (!w) return;
    if (w->dump) pcap_dump_close(w->dump); /* flushes */
    pcap_close(w->dead);
    g_free(w);
}

/* ---- pcap-in ------------------------------------------------------------ */

typedef struct pcap_in {
    nm_machine *machine;
    nm_net_endpoint ep;
    char *path;
    pcap_t *in;
    uint64_t start_ns;
    bool have_first;
    int64_t first_ts, last_ts;
    uint64_t first_wire_ns;
    /* The frame waiting for its time, with room for the FCS. */
    uint8_t *frame;
    size_t frame_len;
    bool pending;
    nm_timer timer;
    uint64_t sent, sent_bytes, truncated, cut, bad_stamps, received, received_bytes;
    bool done;
} pcap_in;

nm_net_endpoint *nm_net_pcap_in_endpoint(void *opaque)
{
    return &((pcap_in *)opaque)->ep;
}

static void pcap_in_discard(void *opaque, const uint8_t *frame, size_t len)
{
    (void)frame;
    pcap_in *p = opaque;
    p->received++;
    p->received_bytes += len;
}

/* A record's time in ns.  The file's fields are signed 32-bit (libpcap
 * passes them on): a negative second is before 1970 and simply earlier; a
 * sub-second field outside 0..999999999 (ns, asked for at open) is not a
 * time at all, so the frame keeps the stamp of the one before it.  Clamped
 * to +-2^62 ns (146 years) so differences never overflow. */
static int64_t stamp_ns(pcap_in *p, const struct pcap_pkthdr *h)
{
    const int64_t limit = INT64_C(1) << 62;
    int64_t sec = (int64_t)h->ts.tv_sec, frac = (int64_t)h->ts.tv_usec;
    if (frac < 0 || frac >= (int64_t)NS_PER_SECOND) {
        p->bad_stamps++;
        nm_dev_warn(PCAP, p, "%s: frame %" G_GUINT64_FORMAT ": sub-second field %lld is not a time",
                    p->path, p->sent + 1, (long long)frac);
        return p->have_first ? p->last_ts : 0;
    }
    int64_t ts;
    if (sec > limit / (int64_t)NS_PER_SECOND)
        ts = limit;
    else if (sec < -limit / (int64_t)NS_PER_SECOND)
        ts = -limit;
    else
        ts = sec * (int64_t)NS_PER_SECOND + frac;
    return ts;
}

/* Reads the next frame and schedules it; at the end of the file, stops. */
static void pcap_in_next(pcap_in *p)
{
    struct pcap_pkthdr *h;
    const u_char *data;
    int rc = pcap_next_ex(p->in, &h, &data);
    if (rc != 1) {
        if (rc == PCAP_ERROR) nm_dev_warn(PCAP, p, "%s: %s", p->path, pcap_geterr(p->in));
        p->done = true;
        return;
    }
    size_t n = h->caplen;
    if (h->caplen < h->len) p->truncated++;
    if (n > NM_NET_MAX_WIRE_FRAME - NM_ETH_FCS_BYTES) {
        /* Longer than a frame our wire carries: sent cut, and counted. */
        n = NM_NET_MAX_WIRE_FRAME - NM_ETH_FCS_BYTES;
        p->cut++;
        nm_dev_warn(PCAP, p, "%s: frame %" G_GUINT64_FORMAT " of %u bytes cut to %zu", p->path,
                    p->sent + 1, h->caplen, n);
    }
    memcpy(p->frame, data, n);
    nm_eth_put_fcs(p->frame, n);
    p->frame_len = n + NM_ETH_FCS_BYTES;

    int64_t ts = stamp_ns(p, h);
    /* From the first bit of the preamble to the last bit of the frame. */
    uint64_t wire = p->ep.link ? nm_net_frame_ns(nm_net_link_bps(p->ep.link), p->frame_len) : 0;
    if (!p->have_first) {
        p->have_first = true;
        p->first_ts = ts;
        p->first_wire_ns = wire;
    }
    p->last_ts = ts;
    /* Stamped before the first: at once.  Both lie within +-2^62 ns, so the
     * difference cannot overflow. */
    uint64_t rel = ts >= p->first_ts ? (uint64_t)(ts - p->first_ts) : 0;
    uint64_t arrive = p->start_ns + p->first_wire_ns + rel;
    uint64_t send_at = arrive > wire ? arrive - wire : 0;
    uint64_t now = nm_clock_now_ns(&p->machine->clock);
    p->pending = true;
    nm_timer_at_ns(&p->machine->clock, &p->timer, send_at > now ? send_at : now);
}

static void pcap_in_fire(void *opaque, uint64_t late)
{
    (void)late;
    pcap_in *p = opaque;
    if (!p->pending) return;
    p->pending = false;
    nm_net_send(&p->ep, p->frame, p->frame_len);
    p->sent++;
    p->sent_bytes += p->frame_len;
    pcap_in_next(p);
}

/* The first frame is read once the link exists (its bit rate sets times). */
static void pcap_in_begin(void *opaque, uint64_t late)
{
    (void)late;
    pcap_in *p = opaque;
    nm_timer_init(&p->timer, pcap_in_fire, p, "pcap-in");
    pcap_in_next(p);
}

static void *pcap_in_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    const char *path = nm_devcfg_get(cfg, "file");
    uint64_t start;
    if (!nm_net_devcfg_duration(cfg, "start", 0, &start, err)) return NULL;
    char errbuf[PCAP_ERRBUF_SIZE] = "";
    pcap_t *in = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    if (!in) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: cannot read '%s': %s",
                    cfg->origin, path, errbuf);
        return NULL;
    }
    if (pcap_datalink(in) != DLT_EN10MB) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE,
                    "%s: '%s' has link type %s; only Ethernet (EN10MB) frames can be replayed",
                    cfg->origin, path, pcap_datalink_val_to_name(pcap_datalink(in)));
        pcap_close(in);
        return NULL;
    }
    pcap_in *p = g_new0(pcap_in, 1);
    p->machine = m;
    p->path = g_strdup(path);
    p->in = in;
    p->start_ns = start;
    p->frame = g_malloc(NM_NET_MAX_WIRE_FRAME);
    p->ep.name = "pcap-in";
    p->ep.opaque = p;
    p->ep.receive = pcap_in_discard;
    /* Begin at `start` at the latest, once the link is connected (it is,
     * right after this returns). */
    nm_timer_init(&p->timer, pcap_in_begin, p, "pcap-in");
    nm_timer_at_ns(&m->clock, &p->timer, 0);
    return p;
}

static void pcap_in_destroy(void *opaque)
{
    pcap_in *p = opaque;
    nm_timer_cancel(&p->machine->clock, &p->timer);
    pcap_close(p->in);
    g_free(p->frame);
    g_free(p->path);
    g_free(p);
}

static void pcap_in_report(void *opaque, nm_report *r)
{
    pcap_in *p = opaque;
    nm_report_str(r, "file", p->path);
    nm_report_u64(r, "frames_sent", p->sent);
    nm_report_u64(r, "bytes_sent", p->sent_bytes);
    nm_report_u64(r, "frames_truncated", p->truncated);
    nm_report_u64(r, "frames_cut", p->cut);
    nm_report_u64(r, "bad_timestamps", p->bad_stamps);
    nm_report_u64(r, "frames_discarded", p->received);
    nm_report_u64(r, "bytes_discarded", p->received_bytes);
    nm_report_u64(r, "finished", p->done);
}

/* Where the replay is: records read so far (a restored run reads the file
 * again up to there), the frame waiting for its time, the counters. */
static void pcap_in_snapshot(void *opaque, nm_snap *s)
{
    pcap_in *p = opaque;
    bool begun = p->timer.fn == pcap_in_fire;
    nm_snap_bool(s, "begun", &begun);
    if (!nm_snap_saving(s) && begun) nm_timer_init(&p->timer, pcap_in_fire, p, "pcap-in");
    uint64_t read = p->sent + (p->pending ? 1 : 0);
    nm_snap_u64(s, "records_read", &read);
    nm_snap_bool(s, "have_first", &p->have_first);
    nm_snap_i64(s, "first_ts", &p->first_ts);
    nm_snap_i64(s, "last_ts", &p->last_ts);
    nm_snap_u64(s, "first_wire_ns", &p->first_wire_ns);
    nm_snap_var_into(s, "frame", p->frame, NM_NET_MAX_WIRE_FRAME, &p->frame_len);
    nm_snap_bool(s, "pending", &p->pending);
    nm_snap_timer(s, "timer", &p->timer);
    nm_snap_u64(s, "sent", &p->sent);
    nm_snap_u64(s, "sent_bytes", &p->sent_bytes);
    nm_snap_u64(s, "truncated", &p->truncated);
    nm_snap_u64(s, "cut", &p->cut);
    nm_snap_u64(s, "bad_stamps", &p->bad_stamps);
    nm_snap_u64(s, "received", &p->received);
    nm_snap_u64(s, "received_bytes", &p->received_bytes);
    nm_snap_bool(s, "done", &p->done);
    if (nm_snap_saving(s) || nm_snap_failed(s)) return;
    /* The file is the configured one (the identity names it): skip what was
     * read. */
    for (uint64_t k = 0; k < read; k++) {
        struct pcap_pkthdr *h;
        const u_char *data;
        if (pcap_next_ex(p->in, &h, &data) != 1) {
            nm_snap_fail(s, "pcap-in: %s has fewer frames than the saved run had read", p->path);
            return;
        }
    }
}

static const char *const pcap_in_keys[] = {"start", NULL};

const nm_device_class nm_net_pcap_in_class = {
    .name = "pcap-in",
    .help = "replays a pcap file to the NIC (net=pcap-in:FILE[,start=TIME])",
    .keys = pcap_in_keys,
    .create = pcap_in_create,
    .destroy = pcap_in_destroy,
    .report = pcap_in_report,
    .snapshot = pcap_in_snapshot,
    .snapshot_version = 1,
};
