/* The wire: CRC-32, serialization times, queueing and drops, the hub, pcap
 * capture (exact nanosecond stamps, byte-identical runs) and pcap-in replay
 * times. */
#include <glib/gstdio.h>
#include <pcap/pcap.h>

#include "test_netdev_util.h"

#define MBIT10 10000000ull

static void test_crc32(void)
{
    /* The CRC-32 check value (IEEE 802.3 / ITU-T V.42 parameters). */
    g_assert_cmphex(nm_eth_crc32((const uint8_t *)"123456789", 9), ==, 0xCBF43926u);
    g_assert_cmphex(nm_eth_crc32(NULL, 0), ==, 0);
    uint8_t f[64] = {1, 2, 3};
    nm_eth_put_fcs(f, 60);
    g_assert_true(nm_eth_fcs_ok(f, 64));
    /* The residue property: CRC over data + FCS is the constant 0x2144DF1C. */
    g_assert_cmphex(nm_eth_crc32(f, 64), ==, 0x2144DF1Cu);
    f[10] ^= 0x80;
    g_assert_false(nm_eth_fcs_ok(f, 64));
    g_assert_false(nm_eth_fcs_ok(f, 3));
}

static void test_wire_time(void)
{
    g_assert_cmpuint(nm_net_wire_ns(MBIT10, 64), ==, 67200);
    g_assert_cmpuint(nm_net_wire_ns(MBIT10, 1518), ==, (8 + 1518 + 12) * 800);
    g_assert_cmpuint(nm_net_wire_ns(1000000000ull, 64), ==, 672);
    g_assert_cmpuint(nm_net_wire_ns(100000000ull, 1518), ==, (8 + 1518 + 12) * 80);
    /* Rounded up to whole ns: 84 bytes at 3 Mbit/s = 224000 ns exactly;
     * at 7 Mbit/s 96000 ns exactly; 85 bytes at 7 Mbit/s = 97142.86 -> 97143. */
    g_assert_cmpuint(nm_net_wire_ns(7000000ull, 65), ==, 97143);
}

typedef struct hub_fx {
    nm_config *cfg;
    nm_machine *m;
    test_nic nic[3];
} hub_fx;

static void hub_fx_init(hub_fx *fx, unsigned n, const char *spec)
{
    fx->m = test_machine(&fx->cfg);
    static const char *const names[] = {"a", "b", "c"};
    for (unsigned i = 0; i < n; i++) {
        test_nic_init(&fx->nic[i], fx->m, names[i]);
        GError *err = NULL;
        g_assert_nonnull(nm_net_attach(fx->m, &fx->nic[i].ep, spec, MBIT10, NULL, names[i], &err));
        g_assert_no_error(err);
    }
}

static void hub_fx_free(hub_fx *fx, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        g_array_free(fx->nic[i].rx, TRUE);
    nm_machine_free(fx->m);
    nm_config_free(fx->cfg);
}

static void test_hub_and_queueing(void)
{
    hub_fx fx;
    hub_fx_init(&fx, 3, "hub:lan");
    uint8_t f[128];
    size_t len = build_arp_request(f, 0x0a000063);
    /* a and b send at once: c's link carries both, the second waits. */
    g_assert_cmpuint(nm_net_send(&fx.nic[0].ep, f, len), ==, 67200);
    g_assert_cmpuint(nm_net_send(&fx.nic[1].ep, f, len), ==, 67200);
    /* a sends twice more: its own wire is busy, so these queue. */
    g_assert_cmpuint(nm_net_send(&fx.nic[0].ep, f, len), ==, 134400);
    g_assert_cmpuint(nm_net_send(&fx.nic[0].ep, f, len), ==, 201600);
    advance_ns(fx.m, 2000000);
    test_nic *c = &fx.nic[2];
    g_assert_cmpuint(c->rx->len, ==, 4);
    g_assert_cmpuint(test_nic_frame(c, 0)->ns, ==, 57600 + 57600);
    g_assert_cmpuint(test_nic_frame(c, 1)->ns, ==, 57600 + 67200 + 57600); /* waited */
    g_assert_cmpuint(test_nic_frame(c, 2)->ns, ==, 57600 + 2 * 67200 + 57600);
    g_assert_cmpuint(test_nic_frame(c, 3)->ns, ==, 57600 + 3 * 67200 + 57600);
    g_assert_cmpmem(test_nic_frame(c, 0)->data, 64, f, 64);
    /* The sender hears nothing of its own; b hears a's three. */
    g_assert_cmpuint(fx.nic[0].rx->len, ==, 1);
    g_assert_cmpuint(fx.nic[1].rx->len, ==, 3);
    const nm_net_dir_stats *st = nm_net_link_stats(fx.nic[2].ep.link, NM_NET_TO_NIC);
    g_assert_cmpuint(st->frames, ==, 4);
    g_assert_cmpuint(st->bytes, ==, 256);
    g_assert_cmpuint(st->max_queue, ==, 2);
    g_assert_cmpuint(st->busy_ns, ==, 4 * 67200);

    /* A bounded queue: beyond NM_NET_QUEUE_FRAMES, frames are dropped. */
    uint64_t now = nm_clock_now_ns(&fx.m->clock);
    for (int i = 0; i < NM_NET_QUEUE_FRAMES + 10; i++)
        nm_net_send(&fx.nic[0].ep, f, len);
    st = nm_net_link_stats(fx.nic[0].ep.link, NM_NET_FROM_NIC);
    g_assert_cmpuint(st->drops, ==, 10);
    g_assert_cmpuint(nm_net_send(&fx.nic[0].ep, f, len), ==, now + NM_NET_QUEUE_FRAMES * 67200ull);
    /* Empty and oversized frames are dropped too. */
    nm_net_send(&fx.nic[1].ep, f, 0);
    uint8_t *big = g_malloc0(NM_NET_MAX_WIRE_FRAME + 1);
    nm_net_send(&fx.nic[1].ep, big, NM_NET_MAX_WIRE_FRAME + 1);
    g_free(big);
    g_assert_cmpuint(nm_net_link_stats(fx.nic[1].ep.link, NM_NET_FROM_NIC)->drops, ==, 2);
    hub_fx_free(&fx, 3);
}

static void test_hub_with_peer(void)
{
    hub_fx fx;
    hub_fx_init(&fx, 2, "hub:lan+peer");
    g_assert_nonnull(nm_net_peer_find(fx.m, 0));
    g_assert_null(nm_net_peer_find(fx.m, 1)); /* one peer, however many say so */
    uint8_t f[128];
    size_t len = build_arp_request(f, PEER_IP);
    nm_net_send(&fx.nic[0].ep, f, len);
    advance_ns(fx.m, 2000000);
    /* b hears the request, then the reply (the hub floods); a the reply. */
    g_assert_cmpuint(fx.nic[1].rx->len, ==, 2);
    g_assert_cmpuint(test_nic_frame(&fx.nic[1], 0)->ns, ==, 2 * 57600);
    uint64_t reply_at = 2 * 57600 + 10000 + 2 * 57600;
    g_assert_cmpuint(test_nic_frame(&fx.nic[1], 1)->ns, ==, reply_at);
    g_assert_cmpuint(fx.nic[0].rx->len, ==, 1);
    g_assert_cmpuint(test_nic_frame(&fx.nic[0], 0)->ns, ==, reply_at);
    g_assert_cmphex(get16(test_nic_frame(&fx.nic[0], 0)->data + 12), ==, 0x0806);
    g_assert_cmpuint(nm_net_peer_find(fx.m, 0)->arp_replies, ==, 1);
    hub_fx_free(&fx, 2);
}

/* One run: ARP and a ping with capture on; returns the capture's bytes. */
static GBytes *capture_run(const char *path)
{
    nm_config *cfg;
    nm_machine *m = test_machine(&cfg);
    test_nic nic;
    test_nic_init(&nic, m, "nic0");
    GError *err = NULL;
    g_assert_nonnull(nm_net_attach(m, &nic.ep, "peer", MBIT10, path, "test", &err));
    g_assert_no_error(err);
    /* The same file twice is refused. */
    test_nic other;
    test_nic_init(&other, m, "nic1");
    g_assert_null(nm_net_attach(m, &other.ep, "peer", MBIT10, path, "nic1", &err));
    g_assert_nonnull(strstr(err->message, "is already written by nic0.link"));
    g_clear_error(&err);
    uint8_t f[256];
    nm_net_send(&nic.ep, f, build_arp_request(f, PEER_IP));
    advance_ns(m, 1000000);
    nm_net_send(&nic.ep, f, build_ping(f, 9, 1, 100));
    advance_ns(m, 1000000);
    /* Flushed per frame: readable before the machine is freed. */
    gchar *contents;
    gsize size;
    g_assert_true(g_file_get_contents(path, &contents, &size, NULL));
    g_assert_cmpuint(size, ==, 24 + 4 * 16 + 60 + 60 + 142 + 142);
    g_free(contents);
    nm_machine_free(m);
    nm_config_free(cfg);
    g_array_free(nic.rx, TRUE);
    g_array_free(other.rx, TRUE);
    g_assert_true(g_file_get_contents(path, &contents, &size, NULL));
    return g_bytes_new_take(contents, size);
}

static void test_capture(void)
{
    g_autofree char *dir = g_dir_make_tmp("nicemu-netdev-XXXXXX", NULL);
    g_autofree char *p1 = g_build_filename(dir, "a.pcap", NULL);
    g_autofree char *p2 = g_build_filename(dir, "b.pcap", NULL);
    GBytes *b1 = capture_run(p1), *b2 = capture_run(p2);
    g_assert_true(g_bytes_equal(b1, b2));

    char errbuf[PCAP_ERRBUF_SIZE];
    pcap_t *in = pcap_open_offline_with_tstamp_precision(p1, PCAP_TSTAMP_PRECISION_NANO, errbuf);
    g_assert_nonnull(in);
    g_assert_cmpint(pcap_datalink(in), ==, DLT_EN10MB);
    /* Last-bit times: request 57.6 us; reply 10 us + 57.6 us later; the ping
     * (146 bytes with FCS) sent at 1 ms; its echo the same size. */
    const uint64_t want_ns[] = {57600, 125200, 1000000 + 154 * 800,
                                1000000 + 154 * 800 + 10000 + 154 * 800};
    const unsigned want_len[] = {60, 60, 142, 142};
    struct pcap_pkthdr *h;
    const u_char *data;
    for (int i = 0; i < 4; i++) {
        g_assert_cmpint(pcap_next_ex(in, &h, &data), ==, 1);
        uint64_t ns = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
        g_assert_cmpuint(ns, ==, want_ns[i]);
        g_assert_cmpuint(h->len, ==, want_len[i]);
        g_assert_cmpuint(h->caplen, ==, want_len[i]);
        g_assert_cmpmem(data, 6, i % 2 ? nic_mac : (i ? peer_mac : bcast_mac), 6);
    }
    g_assert_cmpint(pcap_next_ex(in, &h, &data), ==, PCAP_ERROR_BREAK);
    pcap_close(in);
    g_bytes_unref(b1);
    g_bytes_unref(b2);
    g_unlink(p1);
    g_unlink(p2);
    g_rmdir(dir);
}

static void dump_frame(pcap_dumper_t *d, uint64_t ns, const uint8_t *f, size_t len)
{
    struct pcap_pkthdr h = {.caplen = (bpf_u_int32)len, .len = (bpf_u_int32)len};
    h.ts.tv_sec = (time_t)(ns / 1000000000ull);
    h.ts.tv_usec = (suseconds_t)(ns % 1000000000ull);
    pcap_dump((u_char *)d, &h, f);
}

static void test_pcap_in(void)
{
    g_autofree char *dir = g_dir_make_tmp("nicemu-netdev-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "in.pcap", NULL);
    pcap_t *dead =
        pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
    pcap_dumper_t *d = pcap_dump_open(dead, path);
    g_assert_nonnull(d);
    uint8_t f[256];
    memset(f, 0xab, sizeof f);
    memcpy(f, nic_mac, 6);
    const uint64_t t0 = 10 * 1000000000ull + 5;
    dump_frame(d, t0, f, 60);
    dump_frame(d, t0 + 1000000, f, 100);
    dump_frame(d, t0 + 1000000, f, 60); /* same time: must wait for the wire */
    dump_frame(d, t0 - 5, f, 60);       /* earlier than the first: at once */
    pcap_dump_close(d);
    pcap_close(dead);

    nm_config *cfg;
    nm_machine *m = test_machine(&cfg);
    test_nic nic;
    test_nic_init(&nic, m, "nic0");
    GError *err = NULL;
    g_autofree char *spec = g_strdup_printf("pcap-in:%s,start=1ms", path);
    g_assert_nonnull(nm_net_attach(m, &nic.ep, spec, MBIT10, NULL, "test", &err));
    g_assert_no_error(err);
    nm_net_send(&nic.ep, f, 64); /* counted and discarded */
    advance_ns(m, 10000000);
    g_assert_cmpuint(nic.rx->len, ==, 4);
    uint64_t a0 = 1000000 + 72 * 800;
    g_assert_cmpuint(test_nic_frame(&nic, 0)->ns, ==, a0);
    g_assert_cmpuint(test_nic_frame(&nic, 1)->ns, ==, a0 + 1000000);
    /* Frame 1 went on the wire at a0 + 1 ms - 112 * 800 and held it for
     * 124 byte times; frame 2 followed. */
    uint64_t f1_start = a0 + 1000000 - 112 * 800;
    g_assert_cmpuint(test_nic_frame(&nic, 2)->ns, ==, f1_start + 124 * 800 + 72 * 800);
    g_assert_cmpuint(test_nic_frame(&nic, 3)->ns, ==, f1_start + 124 * 800 + 84 * 800 + 72 * 800);
    const unsigned want_len[] = {64, 104, 64, 64};
    for (int i = 0; i < 4; i++) {
        rx_frame *r = test_nic_frame(&nic, (guint)i);
        g_assert_cmpuint(r->len, ==, want_len[i]);
        g_assert_true(nm_eth_fcs_ok(r->data, r->len));
    }
    nm_report *rep = nm_report_new();
    nm_machine_report(m, rep);
    char *json = nm_report_json(rep);
    g_assert_nonnull(strstr(json, "\"frames_sent\": 4"));
    g_assert_nonnull(strstr(json, "\"frames_discarded\": 1"));
    g_free(json);
    nm_report_free(rep);
    nm_machine_free(m);
    nm_config_free(cfg);
    g_array_free(nic.rx, TRUE);
    g_unlink(path);
    g_rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/netdev/link/crc32", test_crc32);
    g_test_add_func("/netdev/link/wire-time", test_wire_time);
    g_test_add_func("/netdev/link/hub-and-queueing", test_hub_and_queueing);
    g_test_add_func("/netdev/link/hub-with-peer", test_hub_with_peer);
    g_test_add_func("/netdev/link/capture", test_capture);
    g_test_add_func("/netdev/link/pcap-in", test_pcap_in);
    return g_test_run();
}
