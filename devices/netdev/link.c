/* The wire between a NIC and whatever is at the other end: a full-duplex
 * point-to-point Ethernet link with a bit rate.  Each direction serializes
 * its frames one after the other (preamble + frame + inter-frame gap, IEEE
 * 802.3 clause 4), so a frame sent while the wire is busy waits; the far end
 * receives each frame when its last bit arrives (no propagation delay).
 * Everything happens on the machine's virtual clock, in scheduling order.
 *
 * Also here: capture at the seam, and nm_net_attach (the `net=` spec
 * parser that creates the backend it names, from the table in backends.c;
 * the FCS and wire time are in eth.c). */
#include <string.h>

#include "devices/netdev/netdev_internal.h"
#include "emu/core/log.h"
#include "emu/core/snapshot.h"

/* ---- the link ----------------------------------------------------------- */

typedef struct link_frame {
    uint64_t arrive_ns; /* last bit at the far end */
    size_t len;
    uint8_t data[];
} link_frame;

typedef struct link_dir {
    nm_net_link *link;
    nm_net_endpoint *to;
    GQueue frames;    /* link_frame*, in arrival order */
    uint64_t free_ns; /* when the wire is free again (after the gap) */
    nm_timer timer;   /* delivery of the head frame */
    nm_net_dir_stats st;
} link_dir;

struct nm_net_link {
    nm_machine *m;
    char *name;
    uint64_t bps;
    nm_net_endpoint *end[2]; /* [0] the NIC (or hub port), [1] the far end */
    link_dir dir[2];         /* dir[i] carries frames sent by end[i] */
    nm_pcap_writer *cap;
    char *capture_path;
    bool capture_failed; /* a write failed: closed, the run stopped */
};

static void link_deliver(void *opaque, uint64_t late)
{
    (void)late;
    link_dir *d = opaque;
    nm_net_link *l = d->link;
    link_frame *f = g_queue_pop_head(&d->frames);
    if (!f) return;
    d->st.frames++;
    d->st.bytes += f->len;
    const char *why;
    if (l->cap && !nm_pcap_writer_write(l->cap, f->arrive_ns, f->data, f->len, &why)) {
        /* A lost frame in a capture is a wrong capture: the run ends with
         * reason "error" (exit status 1), the file closed (docs/netdev.md). */
        g_autofree char *detail =
            g_strdup_printf("%s: capture: cannot write '%s': %s", l->name, l->capture_path, why);
        nm_machine_request_stop(l->m, NM_STOP_ERROR, 0, detail);
        nm_pcap_writer_close(l->cap);
        l->cap = NULL;
        l->capture_failed = true;
    }
    /* Re-arm before the receiver runs: it may send on this direction too. */
    link_frame *next = g_queue_peek_head(&d->frames);
    if (next) nm_timer_at_ns(&l->m->clock, &d->timer, next->arrive_ns);
    if (d->to && d->to->receive) d->to->receive(d->to->opaque, f->data, f->len);
    g_free(f);
}

uint64_t nm_net_send(nm_net_endpoint *from, const uint8_t *frame, size_t len)
{
    nm_net_link *l = from ? from->link : NULL;
    if (!l) return 0;
    link_dir *d = &l->dir[from == l->end[0] ? 0 : 1];
    uint64_t now = nm_clock_now_ns(&l->m->clock);
    uint64_t start = d->free_ns > now ? d->free_ns : now;
    if (!frame || len == 0 || len > NM_NET_MAX_WIRE_FRAME ||
        g_queue_get_length(&d->frames) >= NM_NET_QUEUE_FRAMES) {
        d->st.drops++;
        nm_debug(NET, "%s: dropped a frame of %zu bytes", l->name, len);
        return start;
    }
    link_frame *f = g_malloc(sizeof *f + len);
    f->arrive_ns = start + nm_net_frame_ns(l->bps, len); /* l->bps > 0 (link_create) */
    f->len = len;
    memcpy(f->data, frame, len);
    d->free_ns = start + nm_net_wire_ns(l->bps, len);
    d->st.busy_ns += d->free_ns - start;
    g_queue_push_tail(&d->frames, f);
    if (g_queue_get_length(&d->frames) > d->st.max_queue)
        d->st.max_queue = g_queue_get_length(&d->frames);
    if (!nm_timer_pending(&d->timer)) nm_timer_at_ns(&l->m->clock, &d->timer, f->arrive_ns);
    return d->free_ns;
}

const nm_net_dir_stats *nm_net_link_stats(const nm_net_link *l, int direction)
{
    return &l->dir[direction == NM_NET_TO_NIC ? 1 : 0].st;
}

const char *nm_net_link_capture_path(const nm_net_link *l)
{
    return l->capture_path;
}

uint64_t nm_net_link_bps(const nm_net_link *l)
{
    return l->bps;
}

void nm_net_link_connect(nm_net_link *l, nm_net_endpoint *nic, nm_net_endpoint *far)
{
    l->end[0] = nic;
    l->end[1] = far;
    l->dir[0].to = far;
    l->dir[1].to = nic;
    nic->link = l;
    far->link = l;
}

static void *link_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint64_t bps = 0;
    const char *s = nm_devcfg_get(cfg, "bps");
    if (!s || !nm_parse_u64(s, &bps) || bps == 0) {
        nm_net_bad_value(err, cfg->origin, "bps", s ? s : "", "a bit rate above 0");
        return NULL;
    }
    const char *capture = nm_devcfg_get(cfg, "capture");
    if (capture) {
        for (guint i = 0; i < m->devices->len; i++) {
            nm_device_instance *inst = m->devices->pdata[i];
            const char *other =
                inst->cls == &nm_net_link_class ? nm_net_link_capture_path(inst->state) : NULL;
            if (other && !strcmp(other, capture)) {
                g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                            "%s: capture: '%s' is already written by %s", cfg->origin, capture,
                            inst->name);
                return NULL;
            }
        }
    }
    nm_net_link *l = g_new0(nm_net_link, 1);
    l->m = m;
    l->name = g_strdup(cfg->name);
    l->bps = bps;
    for (int i = 0; i < 2; i++) {
        l->dir[i].link = l;
        g_queue_init(&l->dir[i].frames);
        nm_timer_init(&l->dir[i].timer, link_deliver, &l->dir[i], i ? "net-rx" : "net-tx");
    }
    if (capture) {
        l->cap = nm_pcap_writer_open(capture, err);
        if (!l->cap) {
            g_prefix_error(err, "%s: capture: ", cfg->origin);
            g_free(l->name);
            g_free(l);
            return NULL;
        }
        l->capture_path = g_strdup(capture);
    }
    return l;
}

static void link_destroy(void *opaque)
{
    nm_net_link *l = opaque;
    for (int i = 0; i < 2; i++) {
        nm_timer_cancel(&l->m->clock, &l->dir[i].timer);
        g_queue_clear_full(&l->dir[i].frames, g_free);
    }
    /* The far end lives in a backend created before this link (so freed
     * after it): it must not send on a freed link.  The NIC is gone already. */
    if (l->end[1] && l->end[1]->link == l) l->end[1]->link = NULL;
    if (l->cap) nm_pcap_writer_close(l->cap);
    g_free(l->capture_path);
    g_free(l->name);
    g_free(l);
}

static void link_report_dir(nm_report *r, const char *prefix, const nm_net_dir_stats *st)
{
    char key[64];
#define LINK_KEY(field)                                                                            \
    do {                                                                                           \
        g_snprintf(key, sizeof key, "%s_%s", prefix, #field);                                      \
        nm_report_u64(r, key, st->field);                                                          \
    } while (0)
    LINK_KEY(frames);
    LINK_KEY(bytes);
    LINK_KEY(drops);
    LINK_KEY(busy_ns);
    LINK_KEY(max_queue);
#undef LINK_KEY
}

static void link_report(void *opaque, nm_report *r)
{
    nm_net_link *l = opaque;
    nm_report_str(r, "from", l->end[0] ? l->end[0]->name : "?");
    nm_report_str(r, "to", l->end[1] ? l->end[1]->name : "?");
    nm_report_u64(r, "bits_per_second", l->bps);
    /* tx: from the NIC (or hub port) to the far end; rx: back. */
    link_report_dir(r, "tx", &l->dir[0].st);
    link_report_dir(r, "rx", &l->dir[1].st);
    if (l->capture_path) nm_report_str(r, "capture", l->capture_path);
    if (l->capture_path) nm_report_u64(r, "capture_failed", l->capture_failed);
}

const nm_net_link *nm_net_link_at(nm_machine *m, unsigned index, const char **nic_name,
                                  uint64_t *bits_per_second)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls != &nm_net_link_class || index--) continue;
        const nm_net_link *l = inst->state;
        if (nic_name) *nic_name = l->end[0] ? l->end[0]->name : "?";
        if (bits_per_second) *bits_per_second = l->bps;
        return l;
    }
    return NULL;
}

/* The wire: each direction's frames in flight (arrival time, bytes), when
 * it is free, its delivery event and counters; and the capture so far, so
 * a restored run's capture file is the uninterrupted run's. */
static void link_snapshot(void *opaque, nm_snap *s)
{
    nm_net_link *l = opaque;
    for (int i = 0; i < 2; i++) {
        link_dir *d = &l->dir[i];
        nm_snap_push(s, "%s", i ? "rx" : "tx");
        uint32_t n = g_queue_get_length(&d->frames);
        nm_snap_u32(s, "frames", &n);
        if (!nm_snap_check(s, n <= NM_NET_QUEUE_FRAMES, "frames")) return;
        if (!nm_snap_saving(s)) g_queue_clear_full(&d->frames, g_free);
        for (uint32_t j = 0; j < n && !nm_snap_failed(s); j++) {
            nm_snap_push(s, "frame%u", j);
            if (nm_snap_saving(s)) {
                link_frame *f = g_queue_peek_nth(&d->frames, j);
                uint8_t *data = f->data;
                nm_snap_u64(s, "arrive_ns", &f->arrive_ns);
                nm_snap_var(s, "data", &data, &f->len, f->len);
            } else {
                uint64_t at = 0;
                uint8_t *data = NULL;
                size_t len = 0;
                nm_snap_u64(s, "arrive_ns", &at);
                nm_snap_var(s, "data", &data, &len, NM_NET_MAX_WIRE_FRAME);
                if (!nm_snap_failed(s)) {
                    link_frame *f = g_malloc(sizeof *f + len);
                    f->arrive_ns = at;
                    f->len = len;
                    if (len) memcpy(f->data, data, len);
                    g_queue_push_tail(&d->frames, f);
                }
                g_free(data);
            }
            nm_snap_pop(s);
        }
        nm_snap_u64(s, "free_ns", &d->free_ns);
        nm_snap_timer(s, "timer", &d->timer);
        nm_snap_u64(s, "st.frames", &d->st.frames);
        nm_snap_u64(s, "st.bytes", &d->st.bytes);
        nm_snap_u64(s, "st.drops", &d->st.drops);
        nm_snap_u64(s, "st.busy_ns", &d->st.busy_ns);
        nm_snap_u64(s, "st.max_queue", &d->st.max_queue);
        nm_snap_pop(s);
    }
    bool capture = l->capture_path != NULL;
    nm_snap_bool(s, "capture", &capture);
    if (!nm_snap_check(s, capture == (l->capture_path != NULL), "capture")) return;
    nm_snap_bool(s, "capture_failed", &l->capture_failed);
    if (!capture) return;
    uint8_t *data = NULL;
    size_t len = 0;
    GError *err = NULL;
    if (nm_snap_saving(s)) {
        if (!l->cap) {
            nm_snap_fail(s, "%s: the capture '%s' failed earlier", l->name, l->capture_path);
            return;
        }
        if (!nm_pcap_writer_contents(l->cap, l->capture_path, &data, &len, &err)) {
            nm_snap_fail(s, "%s: capture: %s", l->name, err->message);
            g_error_free(err);
            return;
        }
        nm_snap_var(s, "capture_data", &data, &len, len);
    } else {
        nm_snap_var(s, "capture_data", &data, &len, (size_t)1 << 31);
        if (!nm_snap_failed(s) && l->cap &&
            !nm_pcap_writer_restart(l->cap, l->capture_path, data, len, &err)) {
            nm_snap_fail(s, "%s: capture: %s", l->name, err->message);
            g_error_free(err);
        }
    }
    g_free(data);
}

static const char *const link_keys[] = {"bps", "capture", NULL};

const nm_device_class nm_net_link_class = {
    .name = "net-link",
    .help = "a full-duplex Ethernet wire between a NIC and a network backend",
    .keys = link_keys,
    .create = link_create,
    .destroy = link_destroy,
    .report = link_report,
    .snapshot = link_snapshot,
    .snapshot_version = 1,
};

/* ---- spec parsing and attach -------------------------------------------- */

static char *class_keys(const nm_device_class *cls)
{
    GString *s = g_string_new(NULL);
    for (const char *const *k = cls->keys; k && *k; k++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", *k);
    if (!s->len) g_string_append(s, "none");
    return g_string_free(s, FALSE);
}

void nm_net_backend_spec_clear(nm_net_backend_spec *b)
{
    g_clear_pointer(&b->arg, g_free);
    g_clear_pointer(&b->cfg, nm_devcfg_free);
}

/* The backend a spec names: "KIND[,options]", "KIND:ARG[,options]" or, for
 * a segment, "KIND:..." (the segment parses the rest). */
static const nm_net_backend *backend_of(const char *spec, const char *head)
{
    for (const nm_net_backend *const *p = nm_net_backend_list(); *p; p++) {
        const nm_net_backend *be = *p;
        size_t k = strlen(be->kind);
        if (be->attach) {
            if (!strncmp(spec, be->kind, k) && spec[k] == ':') return be;
        } else if (be->arg_key) {
            if (!strncmp(head, be->kind, k) && head[k] == ':' && head[k + 1]) return be;
        } else if (!strcmp(head, be->kind)) {
            return be;
        }
    }
    return NULL;
}

/* The spec up to its first comma (the backend and its argument). */
static char *spec_head(const char *spec)
{
    const char *comma = strchr(spec, ',');
    return comma ? g_strndup(spec, (gsize)(comma - spec)) : g_strdup(spec);
}

bool nm_net_backend_spec_parse(const char *spec, const char *origin, const char *inst_name,
                               nm_net_backend_spec *b, GError **err)
{
    *b = (nm_net_backend_spec){0};
    if (!spec) spec = "";
    const char *comma = strchr(spec, ',');
    g_autofree char *head = spec_head(spec);
    const char *opts = comma ? comma + 1 : NULL;
    b->be = backend_of(spec, head);
    if (!b->be || b->be->attach) {
        g_autofree char *forms = nm_net_backend_forms(true);
        return nm_net_bad_value(err, origin, "net", spec, forms);
    }
    const char *kind_name = b->be->kind;
    if (b->be->arg_key) b->arg = g_strdup(head + strlen(kind_name) + 1);

    g_autofree char *cfg_origin = g_strdup_printf("%s: net %s", origin, kind_name);
    b->cfg = nm_net_devcfg_new(cfg_origin, inst_name);
    b->cfg->model = g_strdup(b->be->cls->name);
    if (b->be->arg_key) nm_net_devcfg_put(b->cfg, b->be->arg_key, b->arg);
    if (!opts) return true;
    g_auto(GStrv) words = g_strsplit(opts, ",", -1);
    for (gchar **w = words; *w; w++) {
        char *eq = strchr(*w, '=');
        if (!eq || eq == *w) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "%s: '%s' is not key=value (form: %s,key=value,...)", cfg_origin, *w,
                        kind_name);
            nm_net_backend_spec_clear(b);
            return false;
        }
        *eq = '\0';
        bool known = false;
        for (const char *const *k = b->be->cls->keys; k && *k && !known; k++)
            known = !strcmp(*k, *w);
        if (!known) {
            g_autofree char *names = class_keys(b->be->cls);
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                        "%s: unknown key '%s' (accepted: %s)", cfg_origin, *w, names);
            nm_net_backend_spec_clear(b);
            return false;
        }
        /* Only hostfwd may repeat. */
        if (strcmp(*w, "hostfwd") && nm_devcfg_get(b->cfg, *w)) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY, "%s: key '%s' given twice",
                        cfg_origin, *w);
            nm_net_backend_spec_clear(b);
            return false;
        }
        nm_net_devcfg_put(b->cfg, *w, eq + 1);
    }
    return true;
}

nm_net_link *nm_net_link_new(nm_machine *m, const char *name, uint64_t bps, const char *capture,
                             const char *origin, GError **err)
{
    nm_devcfg *cfg = nm_net_devcfg_new(origin, name);
    g_autofree char *rate = g_strdup_printf("%" G_GUINT64_FORMAT, bps);
    nm_net_devcfg_put(cfg, "bps", rate);
    if (capture) nm_net_devcfg_put(cfg, "capture", capture);
    nm_net_link *l = nm_machine_add_device(m, &nm_net_link_class, cfg, err);
    nm_devcfg_free(cfg);
    return l;
}

nm_net_link *nm_net_attach(nm_machine *m, nm_net_endpoint *nic, const char *spec,
                           uint64_t bits_per_second, const char *capture_path, const char *origin,
                           GError **err)
{
    if (!origin) origin = nic && nic->name ? nic->name : "net";
    if (!bits_per_second) {
        nm_net_bad_value(err, origin, "bit rate", "0", "a bit rate above 0");
        return NULL;
    }
    const char *nic_name = nic->name ? nic->name : "nic";
    /* A segment (hub:NAME) attaches the NIC itself, to a port of its own. */
    g_autofree char *head = spec_head(spec ? spec : "");
    const nm_net_backend *be = backend_of(spec ? spec : "", head);
    if (be && be->attach)
        return be->attach(m, nic, spec, bits_per_second, capture_path, origin, err);

    /* The instance: "nic0.peer", "nic0.pcap-in" (without its argument). */
    g_autofree char *inst_name = NULL;
    if (be && be->arg_key)
        inst_name = g_strdup_printf("%s.%s", nic_name, be->kind);
    else
        inst_name = g_strdup_printf("%s.%s", nic_name, spec && *spec ? spec : "net");
    if (strchr(inst_name, ',')) *strchr(inst_name, ',') = '\0';
    nm_net_backend_spec b;
    if (!nm_net_backend_spec_parse(spec, origin, inst_name, &b, err)) {
        nm_net_backend_spec_clear(&b);
        return NULL;
    }

    /* The backend first, then the link: freed in reverse, the link goes
     * before the endpoint it points at. */
    nm_net_link *l = NULL;
    void *state = nm_machine_add_device(m, b.be->cls, b.cfg, err);
    if (state) {
        g_autofree char *link_name = g_strdup_printf("%s.link", nic_name);
        l = nm_net_link_new(m, link_name, bits_per_second, capture_path, origin, err);
        if (l) nm_net_link_connect(l, nic, b.be->endpoint(state));
    }
    nm_net_backend_spec_clear(&b);
    return l;
}
