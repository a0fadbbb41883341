/* The wire between a NIC and whatever is at the other end: a full-duplex
 * point-to-point Ethernet link with a bit rate.  Each direction serializes
 * its frames one after the other (preamble + frame + inter-frame gap, IEEE
 * 802.3 clause 4), so a frame sent while the wire is busy waits; the far end
 * receives each frame when its last bit arrives (no propagation delay).
 * Everything happens on the machine's virtual clock, in scheduling order.
 *
 * Also here: nm_net_attach (the `net=` spec parser that creates backends),
 * the FCS (CRC-32) and capture at the seam. */
#include <string.h>

#include "devices/netdev/netdev_internal.h"
#include "emu/log.h"

#define NS_PER_SECOND 1000000000ull

/* ---- CRC-32 (IEEE 802.3 clause 3.2.9: reflected, polynomial 0x04C11DB7
 * reversed = 0xEDB88320, preset and final complement 0xFFFFFFFF) ---------- */

static uint32_t crc_table[256];

static gpointer crc_table_init(gpointer unused)
{
    (void)unused;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    return NULL;
}

uint32_t nm_eth_crc32(const uint8_t *data, size_t len)
{
    /* The table is a constant of the algorithm, computed once per process:
     * not machine state. */
    static GOnce once = G_ONCE_INIT;
    g_once(&once, crc_table_init, NULL);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = crc_table[(c ^ data[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

void nm_eth_put_fcs(uint8_t *frame, size_t len)
{
    uint32_t fcs = nm_eth_crc32(frame, len);
    for (int i = 0; i < 4; i++)
        frame[len + i] = (uint8_t)(fcs >> (8 * i));
}

bool nm_eth_fcs_ok(const uint8_t *frame, size_t len)
{
    if (len < NM_ETH_FCS_BYTES) return false;
    size_t n = len - NM_ETH_FCS_BYTES;
    uint32_t fcs = (uint32_t)frame[n] | (uint32_t)frame[n + 1] << 8 | (uint32_t)frame[n + 2] << 16 |
                   (uint32_t)frame[n + 3] << 24;
    return nm_eth_crc32(frame, n) == fcs;
}

/* ---- wire time ---------------------------------------------------------- */

/* Time `bytes` take at `bps`, rounded up to a whole ns. */
static uint64_t bytes_ns(uint64_t bps, uint64_t bytes)
{
    unsigned __int128 num = (unsigned __int128)bytes * 8u * NS_PER_SECOND;
    return (uint64_t)((num + bps - 1) / bps);
}

uint64_t nm_net_wire_ns(uint64_t bits_per_second, size_t len)
{
    if (!bits_per_second) return 0;
    return bytes_ns(bits_per_second, NM_ETH_PREAMBLE_BYTES + (uint64_t)len + NM_ETH_IFG_BYTES);
}

uint64_t nm_net_frame_ns(uint64_t bps, size_t len)
{
    if (!bps) return 0;
    return bytes_ns(bps, NM_ETH_PREAMBLE_BYTES + (uint64_t)len);
}

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
    uint64_t on_wire = NM_ETH_PREAMBLE_BYTES + (uint64_t)len;
    link_frame *f = g_malloc(sizeof *f + len);
    f->arrive_ns = start + bytes_ns(l->bps, on_wire);
    f->len = len;
    memcpy(f->data, frame, len);
    d->free_ns = start + bytes_ns(l->bps, on_wire + NM_ETH_IFG_BYTES);
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

static const char *const link_keys[] = {"bps", "capture", NULL};

const nm_device_class nm_net_link_class = {
    .name = "net-link",
    .help = "a full-duplex Ethernet wire between a NIC and a network backend",
    .keys = link_keys,
    .create = link_create,
    .destroy = link_destroy,
    .report = link_report,
};

/* ---- spec parsing and attach -------------------------------------------- */

#define NET_ACCEPTED "peer, slirp, pcap-in:FILE, hub:NAME"

bool nm_net_bad_value(GError **err, const char *origin, const char *key, const char *value,
                      const char *accepted)
{
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                "%s: %s: bad value '%s' (accepted: %s)", origin, key, value, accepted);
    return false;
}

nm_devcfg *nm_net_devcfg_new(const char *origin, const char *name)
{
    nm_devcfg *d = g_new0(nm_devcfg, 1);
    d->origin = g_strdup(origin);
    d->name = g_strdup(name);
    d->keys = g_ptr_array_new_with_free_func(g_free);
    d->values = g_ptr_array_new_with_free_func(g_free);
    return d;
}

void nm_net_devcfg_put(nm_devcfg *d, const char *key, const char *value)
{
    g_ptr_array_add(d->keys, g_strdup(key));
    g_ptr_array_add(d->values, g_strdup(value));
}

bool nm_net_devcfg_duration(const nm_devcfg *d, const char *key, uint64_t def, uint64_t *out,
                            GError **err)
{
    const char *s = nm_devcfg_get(d, key);
    if (!s) {
        *out = def;
        return true;
    }
    if (!nm_parse_duration_ns(s, out))
        return nm_net_bad_value(err, d->origin, key, s,
                                "a duration with a unit: s, ms, us or ns, e.g. 10us");
    return true;
}

bool nm_net_parse_ipv4(const char *s, uint32_t *out, int *prefix_len)
{
    unsigned a[4], len = 32;
    int n = 0;
    if (!s || sscanf(s, "%3u.%3u.%3u.%3u%n", &a[0], &a[1], &a[2], &a[3], &n) != 4) return false;
    const char *rest = s + n;
    if (*rest == '/') {
        if (!prefix_len) return false;
        uint64_t v;
        if (!nm_parse_u64(rest + 1, &v) || v > 32) return false;
        len = (unsigned)v;
    } else if (*rest) {
        return false;
    }
    for (int i = 0; i < 4; i++) {
        if (a[i] > 255) return false;
        if (i == 0 && !g_ascii_isdigit(s[0])) return false;
    }
    *out = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
    if (prefix_len) *prefix_len = (int)len;
    return true;
}

static char *class_keys(const nm_device_class *cls)
{
    GString *s = g_string_new(NULL);
    for (const char *const *k = cls->keys; k && *k; k++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", *k);
    if (!s->len) g_string_append(s, "none");
    return g_string_free(s, FALSE);
}

/* "peer,ip=10.0.0.1,mac=…": the backend kind, its argument after ':' (a
 * file or a hub name) and the options, checked against the class's keys. */
typedef struct backend_spec {
    const nm_device_class *cls;
    char *arg;         /* pcap-in:FILE, hub:NAME */
    char *hub_backend; /* hub:NAME+BACKEND...: the rest after '+' */
    nm_devcfg *cfg;
} backend_spec;

static void backend_spec_clear(backend_spec *b)
{
    g_clear_pointer(&b->arg, g_free);
    g_clear_pointer(&b->hub_backend, g_free);
    g_clear_pointer(&b->cfg, nm_devcfg_free);
}

static bool parse_backend_spec(const char *spec, const char *origin, const char *inst_name,
                               backend_spec *b, GError **err)
{
    *b = (backend_spec){0};
    if (!spec) spec = "";
    const char *comma = strchr(spec, ',');
    g_autofree char *head = comma ? g_strndup(spec, (gsize)(comma - spec)) : g_strdup(spec);
    const char *opts = comma ? comma + 1 : NULL;
    const char *kind_name = head;
    if (!strcmp(head, "peer")) {
        b->cls = &nm_net_peer_class;
    } else if (!strcmp(head, "slirp")) {
        b->cls = &nm_net_slirp_class;
    } else if (g_str_has_prefix(head, "pcap-in:") && head[8]) {
        b->cls = &nm_net_pcap_in_class;
        b->arg = g_strdup(head + 8);
        kind_name = "pcap-in";
    } else if (g_str_has_prefix(spec, "hub:")) {
        /* hub:NAME or hub:NAME+BACKEND[,backend options] */
        const char *name = spec + 4;
        size_t n = strcspn(name, "+,");
        if (n == 0) return nm_net_bad_value(err, origin, "net", spec, NET_ACCEPTED);
        for (size_t i = 0; i < n; i++)
            if (!g_ascii_isalnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
                return nm_net_bad_value(err, origin, "net", spec,
                                        "hub:NAME with NAME of letters, digits, '-', '_', '.'");
        b->cls = &nm_net_hub_class;
        b->arg = g_strndup(name, n);
        if (name[n] == '+') {
            b->hub_backend = g_strdup(name + n + 1);
        } else if (name[n] == ',') {
            return nm_net_bad_value(err, origin, "net", spec,
                                    "hub:NAME or hub:NAME+BACKEND (a hub has no options)");
        }
        b->cfg = nm_net_devcfg_new(origin, inst_name);
        return true;
    } else {
        return nm_net_bad_value(err, origin, "net", spec, NET_ACCEPTED);
    }

    g_autofree char *cfg_origin = g_strdup_printf("%s: net %s", origin, kind_name);
    b->cfg = nm_net_devcfg_new(cfg_origin, inst_name);
    b->cfg->model = g_strdup(b->cls->name);
    if (b->cls == &nm_net_pcap_in_class) nm_net_devcfg_put(b->cfg, "file", b->arg);
    if (!opts) return true;
    g_auto(GStrv) words = g_strsplit(opts, ",", -1);
    for (gchar **w = words; *w; w++) {
        char *eq = strchr(*w, '=');
        if (!eq || eq == *w) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "%s: '%s' is not key=value (form: %s,key=value,...)", cfg_origin, *w,
                        kind_name);
            backend_spec_clear(b);
            return false;
        }
        *eq = '\0';
        bool known = false;
        for (const char *const *k = b->cls->keys; k && *k && !known; k++)
            known = !strcmp(*k, *w);
        if (!known) {
            g_autofree char *names = class_keys(b->cls);
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                        "%s: unknown key '%s' (accepted: %s)", cfg_origin, *w, names);
            backend_spec_clear(b);
            return false;
        }
        /* Only hostfwd may repeat. */
        if (strcmp(*w, "hostfwd") && nm_devcfg_get(b->cfg, *w)) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY, "%s: key '%s' given twice",
                        cfg_origin, *w);
            backend_spec_clear(b);
            return false;
        }
        nm_net_devcfg_put(b->cfg, *w, eq + 1);
    }
    return true;
}

static nm_net_endpoint *backend_endpoint(const nm_device_class *cls, void *state)
{
    if (cls == &nm_net_peer_class) return nm_net_peer_endpoint(state);
    if (cls == &nm_net_slirp_class) return nm_net_slirp_endpoint(state);
    if (cls == &nm_net_pcap_in_class) return nm_net_pcap_in_endpoint(state);
    return NULL;
}

static nm_net_link *new_link(nm_machine *m, const char *name, uint64_t bps, const char *capture,
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

static void *find_hub(nm_machine *m, const char *name)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls == &nm_net_hub_class && !strcmp(nm_net_hub_name(inst->state), name))
            return inst->state;
    }
    return NULL;
}

static nm_net_link *attach_hub(nm_machine *m, nm_net_endpoint *nic, backend_spec *b, uint64_t bps,
                               const char *capture, const char *origin, GError **err)
{
    void *hub = find_hub(m, b->arg);
    if (!hub) {
        g_autofree char *hub_name = g_strdup_printf("hub:%s", b->arg);
        nm_net_devcfg_put(b->cfg, "name", b->arg);
        g_free(b->cfg->name);
        b->cfg->name = g_strdup(hub_name);
        hub = nm_machine_add_device(m, &nm_net_hub_class, b->cfg, err);
        if (!hub) return NULL;
    }
    g_autofree char *link_name = g_strdup_printf("%s.link", nic->name);
    nm_net_link *l = new_link(m, link_name, bps, capture, origin, err);
    if (!l) return NULL;
    nm_net_link_connect(l, nic, nm_net_hub_new_port(hub, nic->name));

    /* hub:NAME+BACKEND: that backend joins the hub once, on its own port. */
    if (b->hub_backend && !nm_net_hub_has_backend(hub, b->hub_backend)) {
        if (g_str_has_prefix(b->hub_backend, "hub:")) {
            nm_net_bad_value(err, origin, "net", b->hub_backend,
                             "peer, slirp, pcap-in:FILE after hub:NAME+");
            return NULL;
        }
        g_autofree char *bname = g_strdup_printf(
            "hub:%s.%.*s", b->arg, (int)strcspn(b->hub_backend, ",:"), b->hub_backend);
        backend_spec inner;
        if (!parse_backend_spec(b->hub_backend, origin, bname, &inner, err)) {
            backend_spec_clear(&inner);
            return NULL;
        }
        void *state = nm_machine_add_device(m, inner.cls, inner.cfg, err);
        if (!state) {
            backend_spec_clear(&inner);
            return NULL;
        }
        nm_net_endpoint *ep = backend_endpoint(inner.cls, state);
        g_autofree char *blink_name = g_strdup_printf("%s.link", bname);
        nm_net_link *bl = new_link(m, blink_name, bps, NULL, origin, err);
        backend_spec_clear(&inner);
        if (!bl) return NULL;
        nm_net_link_connect(bl, nm_net_hub_new_port(hub, bname), ep);
        nm_net_hub_add_backend(hub, b->hub_backend);
    }
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
    g_autofree char *inst_name = NULL;
    backend_spec b;
    if (spec && (g_str_has_prefix(spec, "pcap-in:")))
        inst_name = g_strdup_printf("%s.pcap-in", nic_name);
    else
        inst_name = g_strdup_printf("%s.%s", nic_name, spec && *spec ? spec : "net");
    if (strchr(inst_name, ',')) *strchr(inst_name, ',') = '\0';
    if (!parse_backend_spec(spec, origin, inst_name, &b, err)) {
        backend_spec_clear(&b);
        return NULL;
    }

    nm_net_link *l = NULL;
    if (b.cls == &nm_net_hub_class) {
        l = attach_hub(m, nic, &b, bits_per_second, capture_path, origin, err);
    } else {
        /* The backend first, then the link: freed in reverse, the link goes
         * before the endpoint it points at. */
        void *state = nm_machine_add_device(m, b.cls, b.cfg, err);
        if (state) {
            g_autofree char *link_name = g_strdup_printf("%s.link", nic_name);
            l = new_link(m, link_name, bits_per_second, capture_path, origin, err);
            if (l) nm_net_link_connect(l, nic, backend_endpoint(b.cls, state));
        }
    }
    backend_spec_clear(&b);
    return l;
}
