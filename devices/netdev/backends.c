/* The backends a `net=` spec may name, in the order messages list them (the
 * netdev counterpart of devices/registry.c): link.c finds a backend here and
 * names none itself.  Also the backends' option helpers (a devcfg built from
 * the spec's key=value words). */
#include <string.h>

#include "devices/netdev/netdev_internal.h"

static const nm_net_backend peer_backend = {
    .kind = "peer",
    .form = "peer",
    .cls = &nm_net_peer_class,
    .endpoint = nm_net_peer_endpoint,
};

static const nm_net_backend slirp_backend = {
    .kind = "slirp",
    .form = "slirp",
    .cls = &nm_net_slirp_class,
    .endpoint = nm_net_slirp_endpoint,
};

static const nm_net_backend pcap_in_backend = {
    .kind = "pcap-in",
    .form = "pcap-in:FILE",
    .cls = &nm_net_pcap_in_class,
    .arg_key = "file",
    .endpoint = nm_net_pcap_in_endpoint,
};

static const nm_net_backend hub_backend = {
    .kind = "hub",
    .form = "hub:NAME",
    .cls = &nm_net_hub_class,
    .attach = nm_net_hub_attach,
};

static const nm_net_backend *const backends[] = {
    &peer_backend, &slirp_backend, &pcap_in_backend, &hub_backend, NULL,
};

const nm_net_backend *const *nm_net_backend_list(void)
{
    return backends;
}

char *nm_net_backend_forms(bool with_segments)
{
    GString *s = g_string_new(NULL);
    for (const nm_net_backend *const *p = backends; *p; p++)
        if (with_segments || !(*p)->attach)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*p)->form);
    return g_string_free(s, FALSE);
}

/* ---- backend options ----------------------------------------------------- */

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
