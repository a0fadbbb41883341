/* slirp — user-mode networking through libslirp, for interactive use.
 *
 * libslirp's timers run on the machine's virtual clock (clock_get_ns,
 * timer_new/timer_mod/timer_free below); its host sockets are polled between
 * CPU slices by a machine poller.  What comes from the host is not
 * reproducible, and attaching says so.
 *
 * Pacing.  A halted guest waiting for host traffic would otherwise let the
 * virtual clock race from event to event at full host speed (100 % CPU, and
 * guest timeouts expiring long before the host answers).  So while slirp is
 * attached, virtual time is not allowed to run ahead of host time:
 *   - a pacing timer fires every PACE_NS of virtual time, so a halted CPU
 *     never skips more than that at once, and the run loop always has an
 *     event pending (it never ends as "halted with no event pending");
 *   - the poller, run after each slice, sleeps in g_poll on slirp's sockets
 *     until host time has caught up with virtual time (at most MAX_SLEEP_MS
 *     per call), and wakes at once when a socket is ready.
 * If the emulator is slower than real time, the reference is moved so that
 * debt does not accumulate (virtual time never rushes to catch up). */
#include <arpa/inet.h>
#include <libslirp.h>
#include <string.h>

#include "devices/netdev/netdev_internal.h"
#include "emu/core/log.h"
#include "emu/core/snapshot.h"

#define PACE_NS          1000000ull /* 1 ms of virtual time */
#define POLL_INTERVAL_NS 1000000ull
#define MAX_SLEEP_MS     10
#define MAX_BEHIND_US    100000 /* re-anchor when host time leads by more */

typedef struct slirp_backend slirp_backend;

typedef struct slirp_timer {
    slirp_backend *s;
    nm_timer timer;
    SlirpTimerCb cb;
    void *cb_opaque;
} slirp_timer;

struct slirp_backend {
    nm_machine *m;
    nm_net_endpoint ep;
    char *name;
    Slirp *slirp;
    GPtrArray *timers; /* slirp_timer* */
    GArray *pollfds;   /* GPollFD */
    nm_timer pace;
    int64_t anchor_host_us;
    uint64_t anchor_virt_ns;
    uint64_t last_poll_ns;
    bool polled_once;
    uint64_t rx_frames, rx_bad_crc, rx_runts, tx_frames, polls, sleeps_ms, guest_errors;
};

nm_net_endpoint *nm_net_slirp_endpoint(void *opaque)
{
    return &((slirp_backend *)opaque)->ep;
}

/* ---- libslirp callbacks ----------------------------------------------------- */

static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
    slirp_backend *s = opaque;
    if (len > NM_NET_MAX_WIRE_FRAME - NM_ETH_FCS_BYTES) return -1;
    size_t n =
        len < NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES ? NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES : len;
    uint8_t *f = g_malloc0(n + NM_ETH_FCS_BYTES);
    memcpy(f, buf, len);
    nm_eth_put_fcs(f, n);
    s->tx_frames++;
    nm_net_send(&s->ep, f, n + NM_ETH_FCS_BYTES);
    g_free(f);
    return (ssize_t)len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
    slirp_backend *s = opaque;
    s->guest_errors++;
    nm_dev_warn(SLIRP, s, "%s: guest error: %s", s->name, msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
    slirp_backend *s = opaque;
    return (int64_t)nm_clock_now_ns(&s->m->clock);
}

static void slirp_timer_fire(void *opaque, uint64_t late)
{
    (void)late;
    slirp_timer *t = opaque;
    t->cb(t->cb_opaque);
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
    slirp_backend *s = opaque;
    slirp_timer *t = g_new0(slirp_timer, 1);
    t->s = s;
    t->cb = cb;
    t->cb_opaque = cb_opaque;
    nm_timer_init(&t->timer, slirp_timer_fire, t, "slirp");
    g_ptr_array_add(s->timers, t);
    return t;
}

static void cb_timer_free(void *timer, void *opaque)
{
    slirp_backend *s = opaque;
    slirp_timer *t = timer;
    nm_timer_cancel(&s->m->clock, &t->timer);
    g_ptr_array_remove_fast(s->timers, t);
    g_free(t);
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
    slirp_backend *s = opaque;
    slirp_timer *t = timer;
    uint64_t at = expire_ms > 0 ? (uint64_t)expire_ms * 1000000ull : 0;
    nm_timer_at_ns(&s->m->clock, &t->timer, at);
}

static void cb_register_poll_fd(int fd, void *opaque)
{
    (void)fd;
    (void)opaque;
}

static void cb_unregister_poll_fd(int fd, void *opaque)
{
    (void)fd;
    (void)opaque;
}

static void cb_notify(void *opaque)
{
    (void)opaque;
}

static const SlirpCb slirp_callbacks = {
    .send_packet = cb_send_packet,
    .guest_error = cb_guest_error,
    .clock_get_ns = cb_clock_get_ns,
    .timer_new = cb_timer_new,
    .timer_free = cb_timer_free,
    .timer_mod = cb_timer_mod,
    .register_poll_fd = cb_register_poll_fd,
    .unregister_poll_fd = cb_unregister_poll_fd,
    .notify = cb_notify,
};

/* ---- the guest side ---------------------------------------------------------- */

static void slirp_receive(void *opaque, const uint8_t *frame, size_t len)
{
    slirp_backend *s = opaque;
    s->rx_frames++;
    if (len < NM_ETH_MIN_FRAME) {
        s->rx_runts++;
        return;
    }
    if (!nm_eth_fcs_ok(frame, len)) {
        s->rx_bad_crc++;
        return;
    }
    if (len - NM_ETH_FCS_BYTES > (size_t)G_MAXINT) return;
    slirp_input(s->slirp, frame, (int)(len - NM_ETH_FCS_BYTES));
}

/* ---- host sockets, between CPU slices ----------------------------------------- */

static int add_poll(int fd, int events, void *opaque)
{
    slirp_backend *s = opaque;
    GPollFD pfd = {.fd = fd};
    if (events & SLIRP_POLL_IN) pfd.events |= G_IO_IN;
    if (events & SLIRP_POLL_OUT) pfd.events |= G_IO_OUT;
    if (events & SLIRP_POLL_PRI) pfd.events |= G_IO_PRI;
    if (events & SLIRP_POLL_ERR) pfd.events |= G_IO_ERR;
    if (events & SLIRP_POLL_HUP) pfd.events |= G_IO_HUP;
    g_array_append_val(s->pollfds, pfd);
    return (int)s->pollfds->len - 1;
}

static int get_revents(int idx, void *opaque)
{
    slirp_backend *s = opaque;
    if (idx < 0 || (guint)idx >= s->pollfds->len) return 0;
    gushort r = g_array_index(s->pollfds, GPollFD, idx).revents;
    int events = 0;
    if (r & G_IO_IN) events |= SLIRP_POLL_IN;
    if (r & G_IO_OUT) events |= SLIRP_POLL_OUT;
    if (r & G_IO_PRI) events |= SLIRP_POLL_PRI;
    if (r & G_IO_ERR) events |= SLIRP_POLL_ERR;
    if (r & G_IO_HUP) events |= SLIRP_POLL_HUP;
    return events;
}

static void slirp_poller(void *opaque)
{
    slirp_backend *s = opaque;
    uint64_t virt = nm_clock_now_ns(&s->m->clock);
    int64_t host = g_get_monotonic_time();
    if (!s->polled_once) {
        s->polled_once = true;
        s->anchor_host_us = host;
        s->anchor_virt_ns = virt;
    }
    int64_t ahead_us = (int64_t)((virt - s->anchor_virt_ns) / 1000) - (host - s->anchor_host_us);
    if (ahead_us < -MAX_BEHIND_US) {
        s->anchor_host_us = host;
        s->anchor_virt_ns = virt;
        ahead_us = 0;
    }
    int timeout_ms = 0;
    if (ahead_us >= 1000) {
        timeout_ms = (int)MIN(ahead_us / 1000, MAX_SLEEP_MS);
    } else if (virt - s->last_poll_ns < POLL_INTERVAL_NS && s->polls) {
        return; /* polled recently: keep slices cheap */
    }
    s->last_poll_ns = virt;
    s->polls++;
    g_array_set_size(s->pollfds, 0);
    uint32_t slirp_timeout = UINT32_MAX;
    slirp_pollfds_fill(s->slirp, &slirp_timeout, add_poll, s);
    int rc = g_poll((GPollFD *)(void *)s->pollfds->data, s->pollfds->len, timeout_ms);
    if (timeout_ms && rc == 0) s->sleeps_ms += (uint64_t)timeout_ms;
    slirp_pollfds_poll(s->slirp, rc < 0, get_revents, s);
}

static void pace_fire(void *opaque, uint64_t late)
{
    (void)late;
    slirp_backend *s = opaque;
    uint64_t now = nm_clock_now_ns(&s->m->clock);
    nm_timer_at_ns(&s->m->clock, &s->pace, (now / PACE_NS + 1) * PACE_NS);
}

/* ---- configuration ------------------------------------------------------------- */

static struct in_addr in_addr_of(uint32_t host_order)
{
    struct in_addr a = {.s_addr = htonl(host_order)};
    return a;
}

/* tcp:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT (udp: likewise). */
static bool add_hostfwd(slirp_backend *s, const nm_devcfg *cfg, const char *spec, GError **err)
{
    static const char accepted[] = "tcp|udp:[HOSTADDR]:HOSTPORT-[GUESTADDR]:GUESTPORT, e.g. "
                                   "tcp:127.0.0.1:5555-10.0.2.15:5001";
    g_auto(GStrv) halves = g_strsplit(spec, "-", 2);
    int is_udp;
    if (g_str_has_prefix(spec, "tcp:")) {
        is_udp = 0;
    } else if (g_str_has_prefix(spec, "udp:")) {
        is_udp = 1;
    } else {
        return nm_net_bad_value(err, cfg->origin, "hostfwd", spec, accepted);
    }
    if (!halves[0] || !halves[1])
        return nm_net_bad_value(err, cfg->origin, "hostfwd", spec, accepted);
    const char *host = halves[0] + 4, *guest = halves[1];
    const char *hc = strrchr(host, ':'), *gc = strrchr(guest, ':');
    if (!hc || !gc) return nm_net_bad_value(err, cfg->origin, "hostfwd", spec, accepted);
    g_autofree char *haddr = g_strndup(host, (gsize)(hc - host));
    g_autofree char *gaddr = g_strndup(guest, (gsize)(gc - guest));
    uint32_t ha = 0, ga = 0;
    uint64_t hp, gp;
    if ((*haddr && !nm_net_parse_ipv4(haddr, &ha, NULL)) ||
        (*gaddr && !nm_net_parse_ipv4(gaddr, &ga, NULL)) || !nm_parse_u64(hc + 1, &hp) ||
        hp > 65535 || !nm_parse_u64(gc + 1, &gp) || gp == 0 || gp > 65535)
        return nm_net_bad_value(err, cfg->origin, "hostfwd", spec, accepted);
    if (slirp_add_hostfwd(s->slirp, is_udp, in_addr_of(ha), (int)hp, in_addr_of(ga), (int)gp) < 0) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: hostfwd: cannot forward '%s' (host port in use?)", cfg->origin, spec);
        return false;
    }
    return true;
}

static bool ip_key(const nm_devcfg *cfg, const char *key, const char *def, uint32_t *out,
                   int *prefix, GError **err)
{
    const char *v = nm_devcfg_get(cfg, key);
    if (!nm_net_parse_ipv4(v ? v : def, out, prefix))
        return nm_net_bad_value(err, cfg->origin, key, v,
                                prefix ? "an IPv4 network, e.g. 10.0.2.0/24"
                                       : "an IPv4 address, e.g. 10.0.2.2");
    return true;
}

static void slirp_destroy(void *opaque);

static void *slirp_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t net, host, dhcp, dns, restrict_ = 0;
    int prefix = 24;
    if (!ip_key(cfg, "net", "10.0.2.0/24", &net, &prefix, err) ||
        !ip_key(cfg, "host", "10.0.2.2", &host, NULL, err) ||
        !ip_key(cfg, "dhcp-start", "10.0.2.15", &dhcp, NULL, err) ||
        !ip_key(cfg, "dns", "10.0.2.3", &dns, NULL, err) ||
        !nm_devcfg_u32(cfg, "restrict", 0, 0, 1, &restrict_, err))
        return NULL;
    if (prefix < 8 || prefix > 30) {
        nm_net_bad_value(err, cfg->origin, "net", nm_devcfg_get(cfg, "net"),
                         "an IPv4 network with a prefix from /8 to /30, e.g. 10.0.2.0/24");
        return NULL;
    }
    uint32_t mask = prefix ? 0xffffffffu << (32 - prefix) : 0;

    slirp_backend *s = g_new0(slirp_backend, 1);
    s->m = m;
    s->name = g_strdup(cfg->name ? cfg->name : "slirp");
    s->ep.name = s->name;
    s->ep.opaque = s;
    s->ep.receive = slirp_receive;
    s->timers = g_ptr_array_new();
    s->pollfds = g_array_new(FALSE, FALSE, sizeof(GPollFD));

    SlirpConfig sc = {
        .version = 3,
        .restricted = (int)restrict_,
        .in_enabled = true,
        .vnetwork = in_addr_of(net & mask),
        .vnetmask = in_addr_of(mask),
        .vhost = in_addr_of(host),
        .vdhcp_start = in_addr_of(dhcp),
        .vnameserver = in_addr_of(dns),
        .if_mtu = 1500,
        .if_mru = 1500,
    };
    s->slirp = slirp_new(&sc, &slirp_callbacks, s);
    if (!s->slirp) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: libslirp refused this configuration", cfg->origin);
        slirp_destroy(s);
        return NULL;
    }
    for (guint i = 0; i < cfg->keys->len; i++) {
        if (strcmp(cfg->keys->pdata[i], "hostfwd")) continue;
        if (!add_hostfwd(s, cfg, cfg->values->pdata[i], err)) {
            slirp_destroy(s);
            return NULL;
        }
    }
    nm_timer_init(&s->pace, pace_fire, s, "slirp-pace");
    nm_timer_at_ns(&m->clock, &s->pace, (nm_clock_now_ns(&m->clock) / PACE_NS + 1) * PACE_NS);
    nm_machine_add_poller(m, slirp_poller, s);
    /* Principle 2: host time enters here, and the user must know. */
    nm_warn(SLIRP, "slirp: traffic depends on the host: runs are not reproducible");
    return s;
}

static void slirp_destroy(void *opaque)
{
    slirp_backend *s = opaque;
    nm_timer_cancel(&s->m->clock, &s->pace);
    if (s->slirp) slirp_cleanup(s->slirp);
    for (guint i = 0; i < s->timers->len; i++) {
        slirp_timer *t = s->timers->pdata[i];
        nm_timer_cancel(&s->m->clock, &t->timer);
        g_free(t);
    }
    g_ptr_array_free(s->timers, TRUE);
    g_array_free(s->pollfds, TRUE);
    g_free(s->name);
    g_free(s);
}

static void slirp_report(void *opaque, nm_report *r)
{
    slirp_backend *s = opaque;
    nm_report_str(r, "reproducible", "no (host traffic)");
    nm_report_u64(r, "rx_frames", s->rx_frames);
    nm_report_u64(r, "rx_bad_crc", s->rx_bad_crc);
    nm_report_u64(r, "rx_runts", s->rx_runts);
    nm_report_u64(r, "tx_frames", s->tx_frames);
    nm_report_u64(r, "host_polls", s->polls);
    nm_report_u64(r, "paced_sleep_ms", s->sleeps_ms);
    nm_report_u64(r, "guest_errors", s->guest_errors);
}

/* libslirp's connections live in the host's sockets and its own memory:
 * nothing a file can hold.  A machine with slirp is refused. */
static void slirp_snapshot(void *opaque, nm_snap *s)
{
    slirp_backend *b = opaque;
    nm_snap_fail(s,
                 "%s: net=slirp cannot be saved (its state is the host's sockets and libslirp's "
                 "own); use net=peer",
                 b->name);
}

static const char *const slirp_keys[] = {"net",     "host",     "dhcp-start", "dns",
                                         "hostfwd", "restrict", NULL};

const nm_device_class nm_net_slirp_class = {
    .name = "slirp",
    .help = "user-mode networking through libslirp (not reproducible)",
    .keys = slirp_keys,
    .create = slirp_create,
    .destroy = slirp_destroy,
    .report = slirp_report,
    .snapshot = slirp_snapshot,
    .snapshot_version = 1,
};
