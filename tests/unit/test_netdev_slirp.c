/* slirp: attaching works, timers run on the virtual clock, and libslirp's
 * DHCP server answers a DISCOVER with an OFFER for 10.0.2.15.  No host
 * traffic is involved, so this much is deterministic. */
#include "test_netdev_util.h"

#define MBIT10 10000000ull

static size_t build_dhcp_discover(uint8_t *f, uint32_t xid)
{
    eth_header(f, bcast_mac, nic_mac, 0x0800);
    uint8_t *ip = f + 14;
    uint8_t *udp = ip + 20;
    uint8_t *b = udp + 8; /* BOOTP, RFC 2131 */
    size_t blen = 240 + 4 + 3 + 1;
    memset(ip, 0, 20 + 8 + blen);
    b[0] = 1; /* BOOTREQUEST */
    b[1] = 1; /* Ethernet */
    b[2] = 6;
    put32(b + 4, xid);
    memcpy(b + 28, nic_mac, 6);
    put32(b + 236, 0x63825363); /* magic cookie */
    uint8_t *o = b + 240;
    *o++ = 53; /* message type: DISCOVER */
    *o++ = 1;
    *o++ = 1;
    *o++ = 55; /* parameter request list: netmask, router, DNS */
    *o++ = 3;
    *o++ = 1;
    *o++ = 3;
    *o++ = 6;
    *o++ = 255;
    put16(udp, 68);
    put16(udp + 2, 67);
    put16(udp + 4, (uint16_t)(8 + blen));
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + 8 + blen));
    ip[8] = 64;
    ip[9] = 17;
    put32(ip + 12, 0);
    put32(ip + 16, 0xffffffff);
    put16(ip + 10, inet_csum(0, ip, 20));
    uint16_t s = inet_csum(pseudo(0, 0xffffffff, 17, 8 + blen), udp, 8 + blen);
    put16(udp + 6, s ? s : 0xffff);
    return finish_frame(f, 14 + 20 + 8 + blen);
}

static void test_dhcp(void)
{
    nm_config *cfg;
    nm_machine *m = test_machine(&cfg);
    test_nic nic;
    test_nic_init(&nic, m, "nic0");
    GError *err = NULL;
    g_assert_nonnull(nm_net_attach(m, &nic.ep, "slirp", MBIT10, NULL, "test", &err));
    g_assert_no_error(err);
    /* The pacing timer keeps an event pending: a halted CPU waiting for the
     * host is never "halted with nothing pending". */
    g_assert_cmpuint(m->clock.deadline, !=, UINT64_MAX);
    g_assert_cmpuint(m->pollers->len, ==, 1);

    uint8_t f[600];
    size_t len = build_dhcp_discover(f, 0x12345678);
    nm_net_send(&nic.ep, f, len);
    for (int i = 0; i < 20 && nic.rx->len == 0; i++) {
        advance_ns(m, 1000000);
        nm_machine_run_pollers(m);
    }
    g_assert_cmpuint(nic.rx->len, >=, 1);
    rx_frame *r = test_nic_frame(&nic, 0);
    g_assert_true(nm_eth_fcs_ok(r->data, r->len));
    g_assert_cmphex(get16(r->data + 12), ==, 0x0800);
    const uint8_t *ip = r->data + 14;
    g_assert_cmpuint(ip[9], ==, 17);
    g_assert_cmphex(inet_csum(0, ip, 20), ==, 0);
    const uint8_t *udp = ip + (ip[0] & 15) * 4;
    g_assert_cmpuint(get16(udp), ==, 67);
    g_assert_cmpuint(get16(udp + 2), ==, 68);
    const uint8_t *b = udp + 8;
    g_assert_cmpuint(b[0], ==, 2); /* BOOTREPLY */
    g_assert_cmphex(get32(b + 4), ==, 0x12345678);
    g_assert_cmphex(get32(b + 16), ==, 0x0a00020f); /* yiaddr 10.0.2.15 */
    /* Option 53 = 2 (OFFER) is among the options. */
    const uint8_t *o = b + 240, *end = r->data + r->len - 4;
    bool offer = false;
    while (o + 2 <= end && *o != 255) {
        if (*o == 0) {
            o++;
            continue;
        }
        if (o[0] == 53 && o[1] == 1 && o + 3 <= end) offer = o[2] == 2;
        o += 2 + o[1];
    }
    g_assert_true(offer);

    /* Pacing: with virtual time 30 ms ahead of host time, the poller sleeps
     * (at most 10 ms a call) instead of letting the guest race ahead. */
    gint64 t0 = g_get_monotonic_time();
    advance_ns(m, 30000000);
    for (int i = 0; i < 3; i++)
        nm_machine_run_pollers(m);
    g_assert_cmpint(g_get_monotonic_time() - t0, >=, 15000);

    nm_machine_free(m);
    nm_config_free(cfg);
    g_array_free(nic.rx, TRUE);
}

static void test_slirp_errors(void)
{
    nm_config *cfg;
    nm_machine *m = test_machine(&cfg);
    test_nic nic;
    test_nic_init(&nic, m, "nic0");
    GError *err = NULL;
    g_assert_null(nm_net_attach(m, &nic.ep, "slirp,hostfwd=tcp:5555", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "N: net slirp: hostfwd: bad value 'tcp:5555'"));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "slirp,net=10.0.2.0/31", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "net: bad value '10.0.2.0/31'"));
    g_clear_error(&err);
    /* A forward to an ephemeral host port on loopback is accepted. */
    g_assert_nonnull(nm_net_attach(m, &nic.ep, "slirp,hostfwd=tcp:127.0.0.1:0-10.0.2.15:5001",
                                   MBIT10, NULL, "N", &err));
    g_assert_no_error(err);
    nm_machine_free(m);
    nm_config_free(cfg);
    g_array_free(nic.rx, TRUE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/netdev/slirp/dhcp", test_dhcp);
    g_test_add_func("/netdev/slirp/errors", test_slirp_errors);
    return g_test_run();
}
