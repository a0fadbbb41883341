/* hub:NAME — several NICs and backends on one segment.  Each attachment is a
 * port with its own full-duplex link; a frame that arrives on a port is sent
 * on every other port's link (flooding, store and forward: a switch without
 * learning rather than a half-duplex repeater, so there are no collisions).
 * Ports forward in the order they were attached, so delivery is
 * deterministic.  The first `net=hub:NAME` creates the hub. */
#include <string.h>

#include "devices/netdev/netdev_internal.h"
#include "emu/core/snapshot.h"

typedef struct hub_port {
    struct hub *hub;
    nm_net_endpoint ep;
    char *name;
    uint64_t frames_in;
} hub_port;

typedef struct hub {
    nm_machine *machine;
    char *name;
    GPtrArray *ports;    /* hub_port*, in attach order */
    GPtrArray *backends; /* backend specs already on the hub */
    uint64_t frames, forwarded;
} hub;

static void hub_receive(void *opaque, const uint8_t *frame, size_t len)
{
    hub_port *in = opaque;
    hub *h = in->hub;
    in->frames_in++;
    h->frames++;
    for (guint i = 0; i < h->ports->len; i++) {
        hub_port *out = h->ports->pdata[i];
        if (out == in) continue;
        nm_net_send(&out->ep, frame, len);
        h->forwarded++;
    }
}

nm_net_endpoint *nm_net_hub_new_port(void *opaque, const char *port_name)
{
    hub *h = opaque;
    hub_port *p = g_new0(hub_port, 1);
    p->hub = h;
    p->name = g_strdup_printf("hub:%s port %u (%s)", h->name, h->ports->len, port_name);
    p->ep.name = p->name;
    p->ep.opaque = p;
    p->ep.receive = hub_receive;
    g_ptr_array_add(h->ports, p);
    return &p->ep;
}

bool nm_net_hub_has_backend(void *opaque, const char *spec)
{
    hub *h = opaque;
    for (guint i = 0; i < h->backends->len; i++)
        if (!strcmp(h->backends->pdata[i], spec)) return true;
    return false;
}

void nm_net_hub_add_backend(void *opaque, const char *spec)
{
    hub *h = opaque;
    g_ptr_array_add(h->backends, g_strdup(spec));
}

const char *nm_net_hub_name(void *opaque)
{
    return ((hub *)opaque)->name;
}

static void *hub_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    (void)err;
    hub *h = g_new0(hub, 1);
    h->machine = m;
    h->name = g_strdup(nm_devcfg_get(cfg, "name"));
    h->ports = g_ptr_array_new();
    h->backends = g_ptr_array_new_with_free_func(g_free);
    return h;
}

static void hub_destroy(void *opaque)
{
    hub *h = opaque;
    for (guint i = 0; i < h->ports->len; i++) {
        hub_port *p = h->ports->pdata[i];
        g_free(p->name);
        g_free(p);
    }
    g_ptr_array_free(h->ports, TRUE);
    g_ptr_array_free(h->backends, TRUE);
    g_free(h->name);
    g_free(h);
}

static void hub_report(void *opaque, nm_report *r)
{
    hub *h = opaque;
    nm_report_u64(r, "ports", h->ports->len);
    nm_report_u64(r, "frames", h->frames);
    nm_report_u64(r, "forwarded", h->forwarded);
    for (guint i = 0; i < h->ports->len; i++) {
        hub_port *p = h->ports->pdata[i];
        char key[32];
        g_snprintf(key, sizeof key, "port%u_frames_in", i);
        nm_report_u64(r, key, p->frames_in);
    }
}

static void hub_snapshot(void *opaque, nm_snap *s)
{
    hub *h = opaque;
    uint32_t n = h->ports->len;
    nm_snap_u32(s, "ports", &n);
    if (!nm_snap_check(s, n == h->ports->len, "ports")) return;
    for (guint i = 0; i < h->ports->len; i++) {
        hub_port *p = h->ports->pdata[i];
        nm_snap_push(s, "port%u", i);
        nm_snap_u64(s, "frames_in", &p->frames_in);
        nm_snap_pop(s);
    }
    nm_snap_u64(s, "frames", &h->frames);
    nm_snap_u64(s, "forwarded", &h->forwarded);
}

const nm_device_class nm_net_hub_class = {
    .name = "hub",
    .help = "an Ethernet segment joining NICs and backends (net=hub:NAME)",
    .create = hub_create,
    .destroy = hub_destroy,
    .report = hub_report,
    .snapshot = hub_snapshot,
    .snapshot_version = 1,
};

/* ---- attaching to a hub (the `hub:` backend, backends.c) ----------------- */

static void *find_hub(nm_machine *m, const char *name)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls == &nm_net_hub_class && !strcmp(nm_net_hub_name(inst->state), name))
            return inst->state;
    }
    return NULL;
}

nm_net_link *nm_net_hub_attach(nm_machine *m, nm_net_endpoint *nic, const char *spec, uint64_t bps,
                               const char *capture, const char *origin, GError **err)
{
    /* hub:NAME or hub:NAME+BACKEND[,backend options] */
    const char *name = spec + 4;
    size_t n = strcspn(name, "+,");
    const char *bad = NULL;
    g_autofree char *forms = nm_net_backend_forms(true);
    if (n == 0) bad = forms;
    for (size_t i = 0; i < n && !bad; i++)
        if (!g_ascii_isalnum(name[i]) && name[i] != '-' && name[i] != '_' && name[i] != '.')
            bad = "hub:NAME with NAME of letters, digits, '-', '_', '.'";
    if (!bad && name[n] == ',') bad = "hub:NAME or hub:NAME+BACKEND (a hub has no options)";
    if (bad) {
        nm_net_bad_value(err, origin, "net", spec, bad);
        return NULL;
    }
    g_autofree char *hub_id = g_strndup(name, n);
    const char *hub_backend = name[n] == '+' ? name + n + 1 : NULL;

    void *hub = find_hub(m, hub_id);
    if (!hub) {
        g_autofree char *hub_name = g_strdup_printf("hub:%s", hub_id);
        nm_devcfg *cfg = nm_net_devcfg_new(origin, hub_name);
        nm_net_devcfg_put(cfg, "name", hub_id);
        hub = nm_machine_add_device(m, &nm_net_hub_class, cfg, err);
        nm_devcfg_free(cfg);
        if (!hub) return NULL;
    }
    g_autofree char *link_name = g_strdup_printf("%s.link", nic->name);
    nm_net_link *l = nm_net_link_new(m, link_name, bps, capture, origin, err);
    if (!l) return NULL;
    nm_net_link_connect(l, nic, nm_net_hub_new_port(hub, nic->name));

    /* hub:NAME+BACKEND: that backend joins the hub once, on its own port. */
    if (hub_backend && !nm_net_hub_has_backend(hub, hub_backend)) {
        if (g_str_has_prefix(hub_backend, "hub:")) {
            g_autofree char *forms = nm_net_backend_forms(false);
            g_autofree char *accepted = g_strdup_printf("%s after hub:NAME+", forms);
            nm_net_bad_value(err, origin, "net", hub_backend, accepted);
            return NULL;
        }
        g_autofree char *bname =
            g_strdup_printf("hub:%s.%.*s", hub_id, (int)strcspn(hub_backend, ",:"), hub_backend);
        nm_net_backend_spec inner;
        if (!nm_net_backend_spec_parse(hub_backend, origin, bname, &inner, err)) {
            nm_net_backend_spec_clear(&inner);
            return NULL;
        }
        void *state = nm_machine_add_device(m, inner.be->cls, inner.cfg, err);
        if (!state) {
            nm_net_backend_spec_clear(&inner);
            return NULL;
        }
        nm_net_endpoint *ep = inner.be->endpoint(state);
        g_autofree char *blink_name = g_strdup_printf("%s.link", bname);
        nm_net_link *bl = nm_net_link_new(m, blink_name, bps, NULL, origin, err);
        nm_net_backend_spec_clear(&inner);
        if (!bl) return NULL;
        nm_net_link_connect(bl, nm_net_hub_new_port(hub, bname), ep);
        nm_net_hub_add_backend(hub, hub_backend);
    }
    return l;
}
