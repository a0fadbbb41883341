/* The built-in peer host: ARP, ICMP echo, UDP discard/echo, the TCP
 * receiver (handshake, data, ACK numbers, delayed ACK, out of order, FIN,
 * RST), the error counters, hostile frames, and its exact timing on a
 * 10 Mbit/s wire with a 10 us processing delay. */
#include "test_netdev_util.h"

#define MBIT10 10000000ull

typedef struct fixture {
    nm_config *cfg;
    nm_machine *m;
    test_nic nic;
    nm_net_link *link;
} fixture;

static void fx_init(fixture *fx, const char *spec)
{
    fx->m = test_machine(&fx->cfg);
    test_nic_init(&fx->nic, fx->m, "nic0");
    GError *err = NULL;
    fx->link = nm_net_attach(fx->m, &fx->nic.ep, spec, MBIT10, NULL, "test", &err);
    g_assert_no_error(err);
    g_assert_nonnull(fx->link);
}

static void fx_free(fixture *fx)
{
    g_array_free(fx->nic.rx, TRUE);
    nm_machine_free(fx->m);
    nm_config_free(fx->cfg);
}

static const nm_net_peer_stats *stats(fixture *fx)
{
    return nm_net_peer_find(fx->m, 0);
}

static void send_frame(fixture *fx, const uint8_t *f, size_t len)
{
    nm_net_send(&fx->nic.ep, f, len);
}

static void test_arp(void)
{
    fixture fx;
    fx_init(&fx, "peer");
    uint8_t f[128];
    size_t len = build_arp_request(f, PEER_IP);
    g_assert_cmpuint(len, ==, 64);
    /* 64 bytes at 10 Mbit/s: (8 + 64 + 12) * 8 * 100 ns on the wire. */
    g_assert_cmpuint(nm_net_send(&fx.nic.ep, f, len), ==, 67200);
    advance_ns(fx.m, 1000000);
    g_assert_cmpuint(fx.nic.rx->len, ==, 1);
    rx_frame *r = test_nic_frame(&fx.nic, 0);
    /* Request's last bit at 57.6 us, 10 us to answer, 57.6 us back. */
    g_assert_cmpuint(r->ns, ==, 57600 + 10000 + 57600);
    g_assert_cmpuint(r->len, ==, 64);
    g_assert_true(nm_eth_fcs_ok(r->data, r->len));
    g_assert_cmpmem(r->data, 6, nic_mac, 6);
    g_assert_cmpmem(r->data + 6, 6, peer_mac, 6);
    g_assert_cmphex(get16(r->data + 12), ==, 0x0806);
    const uint8_t *a = r->data + 14;
    g_assert_cmpuint(get16(a + 6), ==, 2);
    g_assert_cmpmem(a + 8, 6, peer_mac, 6);
    g_assert_cmphex(get32(a + 14), ==, PEER_IP);
    g_assert_cmpmem(a + 18, 6, nic_mac, 6);
    g_assert_cmphex(get32(a + 24), ==, NIC_IP);
    for (int i = 42; i < 60; i++)
        g_assert_cmpuint(r->data[i], ==, 0); /* padding */
    /* Not our address: no answer. */
    len = build_arp_request(f, 0x0a000009);
    send_frame(&fx, f, len);
    advance_ns(fx.m, 1000000);
    g_assert_cmpuint(fx.nic.rx->len, ==, 1);
    g_assert_cmpuint(stats(&fx)->arp_requests, ==, 1);
    g_assert_cmpuint(stats(&fx)->arp_replies, ==, 1);
    g_assert_cmpuint(stats(&fx)->arp_other, ==, 1);
    fx_free(&fx);
}

static void test_ping(void)
{
    fixture fx;
    fx_init(&fx, "peer");
    uint8_t f[2048];
    size_t len = build_ping(f, 0x1234, 7, 56);
    send_frame(&fx, f, len);
    advance_ns(fx.m, 1000000);
    g_assert_cmpuint(fx.nic.rx->len, ==, 1);
    rx_frame *r = test_nic_frame(&fx.nic, 0);
    g_assert_cmpuint(r->len, ==, len);
    const uint8_t *ip = check_ip_frame(r, 1);
    const uint8_t *icmp = ip + 20;
    g_assert_cmpuint(get16(ip + 2), ==, 20 + 8 + 56);
    g_assert_cmpuint(icmp[0], ==, 0);
    g_assert_cmphex(inet_csum(0, icmp, 8 + 56), ==, 0);
    g_assert_cmphex(get16(icmp + 4), ==, 0x1234);
    g_assert_cmpuint(get16(icmp + 6), ==, 7);
    for (int i = 0; i < 56; i++)
        g_assert_cmpuint(icmp[8 + i], ==, i);
    /* A full-size ping (1472 bytes of data: a 1518-byte frame). */
    len = build_ping(f, 1, 2, 1472);
    g_assert_cmpuint(len, ==, 1518);
    send_frame(&fx, f, len);
    advance_ns(fx.m, 10000000);
    g_assert_cmpuint(fx.nic.rx->len, ==, 2);
    check_ip_frame(test_nic_frame(&fx.nic, 1), 1);
    g_assert_cmpuint(stats(&fx)->icmp_echo_replies, ==, 2);
    fx_free(&fx);
}

static void test_udp(void)
{
    fixture fx;
    fx_init(&fx, "peer,echo-port=7");
    uint8_t f[2048], data[1000];
    for (int i = 0; i < 1000; i++)
        data[i] = (uint8_t)(i * 7);
    send_frame(&fx, f, build_udp(f, 4000, 9, data, 10));
    send_frame(&fx, f, build_udp(f, 4000, 9, data, 100));
    send_frame(&fx, f, build_udp(f, 4000, 5001, data, 1000));
    advance_ns(fx.m, 5000000);
    g_assert_cmpuint(fx.nic.rx->len, ==, 0); /* discarded */
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 3);
    g_assert_cmpuint(stats(&fx)->udp_bytes, ==, 1110);
    g_assert_cmpuint(nm_net_peer_udp_port_bytes(fx.m, 0, 9), ==, 110);
    g_assert_cmpuint(nm_net_peer_udp_port_bytes(fx.m, 0, 5001), ==, 1000);

    /* Echo port: the datagram comes back with the ports swapped. */
    size_t len = build_udp(f, 4000, 7, data, 33);
    send_frame(&fx, f, len);
    advance_ns(fx.m, 5000000);
    g_assert_cmpuint(fx.nic.rx->len, ==, 1);
    rx_frame *r = test_nic_frame(&fx.nic, 0);
    const uint8_t *u = check_ip_frame(r, 17) + 20;
    g_assert_cmpuint(get16(u), ==, 7);
    g_assert_cmpuint(get16(u + 2), ==, 4000);
    g_assert_cmpuint(get16(u + 4), ==, 8 + 33);
    g_assert_cmphex(inet_csum(pseudo(PEER_IP, NIC_IP, 17, 41), u, 41), ==, 0);
    g_assert_cmpmem(u + 8, 33, data, 33);
    g_assert_cmpuint(stats(&fx)->udp_echoed, ==, 1);
    fx_free(&fx);
}

/* Sends a TCP segment and returns the replies that arrived within 5 ms. */
static guint tcp_exchange(fixture *fx, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
                          const uint8_t *data, size_t len)
{
    uint8_t f[2048];
    guint before = fx->nic.rx->len;
    send_frame(fx, f, build_tcp(f, 40000, dport, seq, ack, flags, data, len));
    advance_ns(fx->m, 5000000);
    return fx->nic.rx->len - before;
}

typedef struct tcp_seen {
    uint32_t seq, ack;
    uint8_t flags;
    uint16_t window;
    size_t hlen;
    const uint8_t *t;
} tcp_seen;

static tcp_seen last_tcp(fixture *fx)
{
    rx_frame *r = test_nic_frame(&fx->nic, fx->nic.rx->len - 1);
    const uint8_t *ip = check_ip_frame(r, 6);
    size_t tl = get16(ip + 2) - 20u;
    const uint8_t *t = ip + 20;
    g_assert_cmphex(inet_csum(pseudo(PEER_IP, NIC_IP, 6, tl), t, tl), ==, 0);
    g_assert_cmpuint(get16(t + 2), ==, 40000);
    return (tcp_seen){
        get32(t + 4), get32(t + 8), t[13], get16(t + 14), (size_t)(t[12] >> 4) * 4, t};
}

enum { FIN = 1, SYN = 2, RST = 4, PSH = 8, ACK = 16 };

static void test_tcp(void)
{
    fixture fx;
    fx_init(&fx, "peer");
    uint8_t data[1460];
    memset(data, 'x', sizeof data);
    const uint32_t isn = 1000;

    /* Handshake. */
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn, 0, SYN, NULL, 0), ==, 1);
    tcp_seen s = last_tcp(&fx);
    g_assert_cmphex(s.flags, ==, SYN | ACK);
    g_assert_cmpuint(s.ack, ==, isn + 1);
    g_assert_cmpuint(s.window, ==, 65535);
    g_assert_cmpuint(s.hlen, ==, 24);
    g_assert_cmpuint(s.t[20], ==, 2); /* MSS option */
    g_assert_cmpuint(s.t[21], ==, 4);
    g_assert_cmpuint(get16(s.t + 22), ==, 1460);
    uint32_t peer_isn = s.seq;
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 1, peer_isn + 1, ACK, NULL, 0), ==, 0);

    /* Data, every segment ACKed. */
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 1, peer_isn + 1, ACK | PSH, data, 100), ==, 1);
    s = last_tcp(&fx);
    g_assert_cmphex(s.flags, ==, ACK);
    g_assert_cmpuint(s.seq, ==, peer_isn + 1);
    g_assert_cmpuint(s.ack, ==, isn + 101);
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 101, peer_isn + 1, ACK, data, 1460), ==, 1);
    g_assert_cmpuint(last_tcp(&fx).ack, ==, isn + 1561);

    /* Out of order (a hole): dropped, duplicate ACK. */
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 3021, peer_isn + 1, ACK, data, 500), ==, 1);
    g_assert_cmpuint(last_tcp(&fx).ack, ==, isn + 1561);
    /* A retransmission of old data: duplicate ACK. */
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 101, peer_isn + 1, ACK, data, 1460), ==, 1);
    g_assert_cmpuint(last_tcp(&fx).ack, ==, isn + 1561);
    /* Partly old: the new part is taken. */
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 1061, peer_isn + 1, ACK, data, 1000), ==, 1);
    g_assert_cmpuint(last_tcp(&fx).ack, ==, isn + 2061);

    /* FIN: ACK + FIN in one segment, then the last ACK closes. */
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 2061, peer_isn + 1, ACK | FIN, data, 10), ==, 1);
    s = last_tcp(&fx);
    g_assert_cmphex(s.flags, ==, FIN | ACK);
    g_assert_cmpuint(s.ack, ==, isn + 2072);
    g_assert_cmpuint(s.seq, ==, peer_isn + 1);
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 2072, peer_isn + 2, ACK, NULL, 0), ==, 0);

    const nm_net_peer_stats *st = stats(&fx);
    g_assert_cmpuint(st->tcp_bytes, ==, 2070);
    g_assert_cmpuint(st->tcp_connections, ==, 1);
    g_assert_cmpuint(st->tcp_closed, ==, 1);
    g_assert_cmpuint(st->tcp_out_of_order, ==, 1);
    g_assert_cmpuint(st->tcp_duplicates, ==, 2);

    /* After the close, a stray segment gets a RST (seq = its ACK). */
    g_assert_cmpuint(tcp_exchange(&fx, 5001, isn + 2072, peer_isn + 2, ACK, data, 5), ==, 1);
    s = last_tcp(&fx);
    g_assert_cmphex(s.flags, ==, RST);
    g_assert_cmpuint(s.seq, ==, peer_isn + 2);
    /* A SYN to a closed port: RST+ACK acknowledging the SYN. */
    g_assert_cmpuint(tcp_exchange(&fx, 80, 5555, 0, SYN, NULL, 0), ==, 1);
    s = last_tcp(&fx);
    g_assert_cmphex(s.flags, ==, RST | ACK);
    g_assert_cmpuint(s.seq, ==, 0);
    g_assert_cmpuint(s.ack, ==, 5556);
    /* A RST is never answered. */
    g_assert_cmpuint(tcp_exchange(&fx, 80, 5555, 0, RST, NULL, 0), ==, 0);
    g_assert_cmpuint(stats(&fx)->tcp_resets_sent, ==, 2);

    /* The report lists the connection with its bytes. */
    nm_report *r = nm_report_new();
    nm_machine_report(fx.m, r);
    char *json = nm_report_json(r);
    g_assert_nonnull(strstr(json, "\"tcp_conn0_bytes\": 2070"));
    g_assert_nonnull(strstr(json, "\"tcp_bytes\": 2070"));
    g_free(json);
    nm_report_free(r);
    fx_free(&fx);
}

static void test_delayed_ack(void)
{
    fixture fx;
    fx_init(&fx, "peer,delayed-ack=1,tcp-ports=5001:6000");
    uint8_t data[512] = {0};
    const uint32_t isn = 77;
    tcp_exchange(&fx, 6000, isn, 0, SYN, NULL, 0);
    uint32_t peer_isn = last_tcp(&fx).seq;
    tcp_exchange(&fx, 6000, isn + 1, peer_isn + 1, ACK, NULL, 0);
    guint n = fx.nic.rx->len;
    /* One segment: no ACK yet... */
    g_assert_cmpuint(tcp_exchange(&fx, 6000, isn + 1, peer_isn + 1, ACK, data, 512), ==, 0);
    /* ...the second one is ACKed at once, both together. */
    g_assert_cmpuint(tcp_exchange(&fx, 6000, isn + 513, peer_isn + 1, ACK, data, 512), ==, 1);
    g_assert_cmpuint(last_tcp(&fx).ack, ==, isn + 1025);
    /* A lone segment is ACKed 40 ms after it arrived (+ the processing delay). */
    uint64_t sent = nm_clock_now_ns(&fx.m->clock);
    g_assert_cmpuint(tcp_exchange(&fx, 6000, isn + 1025, peer_isn + 1, ACK, data, 100), ==, 0);
    advance_ns(fx.m, 33000000); /* 38 ms after sending */
    g_assert_cmpuint(fx.nic.rx->len, ==, n + 1);
    advance_ns(fx.m, 3000000);
    g_assert_cmpuint(fx.nic.rx->len, ==, n + 2);
    rx_frame *r = test_nic_frame(&fx.nic, fx.nic.rx->len - 1);
    /* The segment's last bit: preamble + 158 bytes at 800 ns a byte. */
    uint64_t arrive = sent + (8ull + 14 + 20 + 20 + 100 + 4) * 800;
    g_assert_cmpuint(r->ns, ==, arrive + 40000000 + 10000 + 57600);
    g_assert_cmpuint(last_tcp(&fx).ack, ==, isn + 1125);
    g_assert_cmpuint(stats(&fx)->tcp_delayed_acks, ==, 1);
    g_assert_cmpuint(stats(&fx)->tcp_acks_sent, ==, 2);
    fx_free(&fx);
}

static void test_bad_frames(void)
{
    fixture fx;
    fx_init(&fx, "peer");
    uint8_t f[2048];
    size_t len;
    /* A runt: 40 bytes with FCS. */
    len = build_arp_request(f, PEER_IP);
    nm_eth_put_fcs(f, 36);
    send_frame(&fx, f, 40);
    /* A bad FCS. */
    len = build_ping(f, 1, 1, 20);
    f[len - 1] ^= 0x55;
    send_frame(&fx, f, len);
    /* A bad IP header checksum (FCS made right again). */
    len = build_ping(f, 1, 1, 20);
    f[14 + 10] ^= 1;
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    /* Bad ICMP, UDP and TCP checksums. */
    len = build_ping(f, 1, 1, 20);
    f[14 + 20 + 9] ^= 1;
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    uint8_t d[16] = {1, 2, 3};
    len = build_udp(f, 1, 9, d, 16);
    f[14 + 20 + 8] ^= 1;
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    len = build_tcp(f, 1, 5001, 1, 0, SYN, NULL, 0);
    f[14 + 20 + 4] ^= 1;
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    /* A fragment, an unknown protocol, an unknown ethertype, another MAC. */
    len = build_ping(f, 1, 1, 20);
    put16(f + 14 + 6, 0x2000); /* MF */
    put16(f + 14 + 10, 0);
    put16(f + 14 + 10, inet_csum(0, f + 14, 20));
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    len = build_ping(f, 1, 1, 20);
    f[14 + 9] = 99;
    put16(f + 14 + 10, 0);
    put16(f + 14 + 10, inet_csum(0, f + 14, 20));
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    len = build_ping(f, 1, 1, 20);
    put16(f + 12, 0x86dd);
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    len = build_ping(f, 1, 1, 20);
    f[5] = 0x99;
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    /* IP options are skipped: a ping with a 4-byte NOP option is answered. */
    len = build_ping(f, 1, 1, 20);
    memmove(f + 14 + 24, f + 14 + 20, 28);
    f[14] = 0x46;
    memset(f + 14 + 20, 1, 4);
    put16(f + 14 + 2, 24 + 28);
    put16(f + 14 + 10, 0);
    put16(f + 14 + 10, inet_csum(0, f + 14, 24));
    len = finish_frame(f, 14 + 24 + 28);
    send_frame(&fx, f, len);
    /* A total length beyond the frame. */
    len = build_ping(f, 1, 1, 20);
    put16(f + 14 + 2, 1400);
    put16(f + 14 + 10, 0);
    put16(f + 14 + 10, inet_csum(0, f + 14, 20));
    nm_eth_put_fcs(f, len - 4);
    send_frame(&fx, f, len);
    advance_ns(fx.m, 10000000);

    const nm_net_peer_stats *st = stats(&fx);
    g_assert_cmpuint(st->runts, ==, 1);
    g_assert_cmpuint(st->bad_crc, ==, 1);
    g_assert_cmpuint(st->ip_bad_checksum, ==, 1);
    g_assert_cmpuint(st->icmp_bad_checksum, ==, 1);
    g_assert_cmpuint(st->udp_bad_checksum, ==, 1);
    g_assert_cmpuint(st->tcp_bad_checksum, ==, 1);
    g_assert_cmpuint(st->ip_fragments, ==, 1);
    g_assert_cmpuint(st->ip_unknown_protocol, ==, 1);
    g_assert_cmpuint(st->unknown_ethertype, ==, 1);
    g_assert_cmpuint(st->not_for_us, ==, 1);
    g_assert_cmpuint(st->ip_bad_header, ==, 1);
    g_assert_cmpuint(st->icmp_echo_replies, ==, 1);
    g_assert_cmpuint(fx.nic.rx->len, ==, 1);
    check_ip_frame(test_nic_frame(&fx.nic, 0), 1);
    fx_free(&fx);
}

/* Anything a guest can send: random lengths and bytes, some with a valid
 * FCS and plausible headers.  Nothing may crash or read past the frame
 * (run under ASan in CI). */
static void test_hostile_frames(void)
{
    fixture fx;
    fx_init(&fx, "peer,echo-port=9,tcp-ports=1:2:3");
    GRand *rnd = g_rand_new_with_seed(1234);
    uint8_t f[2048];
    for (int i = 0; i < 20000; i++) {
        size_t len = (size_t)g_rand_int_range(rnd, 0, 1600);
        for (size_t k = 0; k < len; k++)
            f[k] = (uint8_t)g_rand_int(rnd);
        if (len >= 64 && (i & 1)) {
            memcpy(f, peer_mac, 6);
            put16(f + 12, (i & 2) ? 0x0800 : 0x0806);
            if (i & 4) {
                f[14] = 0x45;
                f[14 + 9] = (uint8_t)((i >> 3) % 3 == 0 ? 6 : (i >> 3) % 3 == 1 ? 17 : 1);
                put16(f + 14 + 2, (uint16_t)(len - 18 - (size_t)g_rand_int_range(rnd, 0, 30)));
                put16(f + 14 + 6, 0);
                put32(f + 14 + 16, PEER_IP);
                put16(f + 14 + 10, 0);
                put16(f + 14 + 10, inet_csum(0, f + 14, 20));
            }
            nm_eth_put_fcs(f, len - 4);
        }
        /* Exact-size heap copies so ASan sees any overread. */
        uint8_t *copy = g_memdup2(f, len ? len : 1);
        nm_net_send(&fx.nic.ep, len ? copy : NULL, len);
        g_free(copy);
        if (i % 64 == 0) advance_ns(fx.m, 20000000);
    }
    advance_ns(fx.m, 1000000000);
    g_rand_free(rnd);
    fx_free(&fx);
}

/* ---- IPv4 reassembly and UDP streams ------------------------------------ */

/* UDP header + data (`len` bytes) into d; returns the IP payload length. */
static size_t udp_dgram(uint8_t *d, uint16_t sport, uint16_t dport, const uint8_t *data, size_t len)
{
    put16(d, sport);
    put16(d + 2, dport);
    put16(d + 4, (uint16_t)(8 + len));
    put16(d + 6, 0);
    memcpy(d + 8, data, len);
    uint16_t sum = inet_csum(pseudo(NIC_IP, PEER_IP, 17, 8 + len), d, 8 + len);
    put16(d + 6, sum ? sum : 0xffff);
    return 8 + len;
}

/* The fragment payload[off .. off+len) of IP datagram `id`. */
static size_t build_fragment(uint8_t *f, uint16_t id, uint8_t proto, const uint8_t *payload,
                             size_t off, size_t len, bool more)
{
    eth_header(f, peer_mac, nic_mac, 0x0800);
    uint8_t *ip = f + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + len));
    put16(ip + 4, id);
    put16(ip + 6, (uint16_t)((more ? 0x2000 : 0) | (off / 8)));
    ip[8] = 64;
    ip[9] = proto;
    put32(ip + 12, NIC_IP);
    put32(ip + 16, PEER_IP);
    put16(ip + 10, inet_csum(0, ip, 20));
    memcpy(ip + 20, payload + off, len);
    return finish_frame(f, 14 + 20 + len);
}

static uint8_t big[65536 + 2048], data8k[8192]; /* room past 64 KB for the too-big case */

/* An 8000-byte UDP datagram (8008 bytes of IP payload) as Linux cuts it
 * for a 1500-byte MTU: 1480-byte pieces. */
static size_t frag_8k(uint16_t dport)
{
    for (size_t i = 0; i < 8000; i++)
        data8k[i] = (uint8_t)(i * 13 + 1);
    return udp_dgram(big, 40000, dport, data8k, 8000);
}

static void send_piece(fixture *fx, uint16_t id, size_t total, size_t k)
{
    uint8_t f[1600];
    size_t off = k * 1480, len = total - off < 1480 ? total - off : 1480;
    send_frame(fx, f, build_fragment(f, id, 17, big, off, len, off + len < total));
}

static void test_reassembly(void)
{
    fixture fx;
    fx_init(&fx, "peer,echo-port=7");
    size_t total = frag_8k(9), pieces = (total + 1479) / 1480;
    g_assert_cmpuint(pieces, ==, 6);
    /* In order. */
    for (size_t k = 0; k < pieces; k++)
        send_piece(&fx, 100, total, k);
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_fragments, ==, 6);
    g_assert_cmpuint(stats(&fx)->ip_reassembled, ==, 1);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 1);
    g_assert_cmpuint(stats(&fx)->udp_bytes, ==, 8000);
    g_assert_cmpuint(stats(&fx)->udp_bad_checksum, ==, 0);
    /* Out of order: last first, then the middle ones backwards, then 0. */
    for (size_t k = pieces; k-- > 0;)
        send_piece(&fx, 101, total, k);
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_reassembled, ==, 2);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 2);
    g_assert_cmpuint(nm_net_peer_udp_port_bytes(fx.m, 0, 9), ==, 16000);
    /* The same id again later is a new datagram (the first one finished). */
    for (size_t k = 0; k < pieces; k++)
        send_piece(&fx, 100, total, k);
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 3);
    /* A corrupted byte in one piece: reassembled, then the UDP checksum fails. */
    {
        uint8_t f[1600];
        size_t len = build_fragment(f, 102, 17, big, 1480, 1480, true);
        f[14 + 20 + 100] ^= 1;
        nm_eth_put_fcs(f, len - 4);
        send_piece(&fx, 102, total, 0);
        send_frame(&fx, f, len);
        for (size_t k = 2; k < pieces; k++)
            send_piece(&fx, 102, total, k);
        advance_ns(fx.m, 20000000);
        g_assert_cmpuint(stats(&fx)->ip_reassembled, ==, 4);
        g_assert_cmpuint(stats(&fx)->udp_bad_checksum, ==, 1);
        g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 3);
    }
    /* To the echo port: counted, but too big to echo in one frame. */
    total = frag_8k(7);
    for (size_t k = 0; k < pieces; k++)
        send_piece(&fx, 103, total, k);
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 4);
    g_assert_cmpuint(stats(&fx)->udp_echo_too_big, ==, 1);
    g_assert_cmpuint(fx.nic.rx->len, ==, 0);
    /* A small fragmented echo (two pieces of one 1000-byte datagram) comes back whole. */
    {
        uint8_t f[1600];
        size_t t = udp_dgram(big, 40000, 7, data8k, 992);
        send_frame(&fx, f, build_fragment(f, 104, 17, big, 504, t - 504, false));
        send_frame(&fx, f, build_fragment(f, 104, 17, big, 0, 504, true));
        advance_ns(fx.m, 20000000);
        g_assert_cmpuint(fx.nic.rx->len, ==, 1);
        const uint8_t *u = check_ip_frame(test_nic_frame(&fx.nic, 0), 17) + 20;
        g_assert_cmpuint(get16(u + 4), ==, 8 + 992);
        g_assert_cmpmem(u + 8, 992, data8k, 992);
    }
    g_assert_cmpuint(stats(&fx)->ip_frag_bad + stats(&fx)->ip_frag_overlaps, ==, 0);
    fx_free(&fx);
}

static void test_reassembly_bad(void)
{
    fixture fx;
    fx_init(&fx, "peer");
    size_t total = frag_8k(9);
    uint8_t f[1600];
    /* Overlap: piece 0, then bytes 1472.. (8 bytes into piece 0's end): the
     * datagram is dropped; what follows starts a new one that never ends. */
    send_piece(&fx, 200, total, 0);
    send_frame(&fx, f, build_fragment(f, 200, 17, big, 1472, 1480, true));
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_frag_overlaps, ==, 1);
    for (size_t k = 1; k < 6; k++)
        send_piece(&fx, 200, total, k);
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_reassembled, ==, 0);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 0);
    /* The same piece twice is an overlap too. */
    send_piece(&fx, 201, total, 0);
    send_piece(&fx, 201, total, 0);
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_frag_overlaps, ==, 2);
    /* A non-last piece not a multiple of 8 bytes; an empty one. */
    send_frame(&fx, f, build_fragment(f, 202, 17, big, 0, 1001, true));
    send_frame(&fx, f, build_fragment(f, 203, 17, big, 0, 0, true));
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_frag_bad, ==, 2);
    /* Past 65535 bytes: offset 8189 * 8 + 1480. */
    send_frame(&fx, f, build_fragment(f, 204, 17, big, 8189 * 8, 1000, false));
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_frag_too_big, ==, 1);
    /* Two different ends. */
    send_frame(&fx, f, build_fragment(f, 205, 17, big, 1480, 100, false));
    send_frame(&fx, f, build_fragment(f, 205, 17, big, 2960, 100, false));
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_frag_bad, ==, 3);
    advance_ns(fx.m, 20000000);

    fx_free(&fx);

    /* Timeout: 30 s after the first piece the datagram is gone. */
    fx_init(&fx, "peer");
    total = frag_8k(9);
    send_piece(&fx, 400, total, 0);
    advance_ns(fx.m, 29000000000ull);
    for (size_t k = 1; k < 5; k++)
        send_piece(&fx, 400, total, k);
    advance_ns(fx.m, 2000000000ull); /* now 31 s after the first */
    send_piece(&fx, 400, total, 5);
    advance_ns(fx.m, 10000000);
    g_assert_cmpuint(stats(&fx)->ip_frag_timeouts, ==, 1);
    g_assert_cmpuint(stats(&fx)->ip_reassembled, ==, 0);
    /* Just inside the timeout it completes. */
    send_piece(&fx, 401, total, 0);
    advance_ns(fx.m, 29000000000ull);
    for (size_t k = 1; k < 6; k++)
        send_piece(&fx, 401, total, k);
    advance_ns(fx.m, 10000000);
    g_assert_cmpuint(stats(&fx)->ip_reassembled, ==, 1);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 1);
    fx_free(&fx);
}

/* Exact eviction: with 8 slots, datagrams 0..7 started, then 8: 0 goes. */
static void test_reassembly_evict_exact(void)
{
    fixture fx;
    fx_init(&fx, "peer");
    size_t total = frag_8k(9);
    for (uint16_t id = 0; id < 9; id++)
        send_piece(&fx, 500 + id, total, 0);
    advance_ns(fx.m, 20000000);
    g_assert_cmpuint(stats(&fx)->ip_frag_evicted, ==, 1);
    /* 501..508 are held: finish them; 500 is not. */
    for (uint16_t id = 1; id < 9; id++)
        for (size_t k = 1; k < 6; k++)
            send_piece(&fx, 500 + id, total, k);
    advance_ns(fx.m, 100000000);
    g_assert_cmpuint(stats(&fx)->ip_reassembled, ==, 8);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 8);
    fx_free(&fx);
}

static void test_reassembly_hostile(void)
{
    fixture fx;
    fx_init(&fx, "peer,echo-port=7");
    GRand *rnd = g_rand_new_with_seed(16);
    for (size_t i = 0; i < 65536; i++)
        big[i] = (uint8_t)g_rand_int(rnd);
    uint8_t f[1600];
    for (int i = 0; i < 20000; i++) {
        uint16_t id = (uint16_t)g_rand_int_range(rnd, 0, 12);
        uint8_t proto = (uint8_t)(i % 3 == 0 ? 17 : i % 3 == 1 ? 6 : 1);
        size_t off = (size_t)g_rand_int_range(rnd, 0, 8192) * 8 % 65536;
        size_t len = (size_t)g_rand_int_range(rnd, 0, 1481);
        if (off + len > 65535) off = 0;
        size_t n = build_fragment(f, id, proto, big, off, len, g_rand_boolean(rnd));
        uint8_t *copy = g_memdup2(f, n);
        nm_net_send(&fx.nic.ep, copy, n);
        g_free(copy);
        if (i % 64 == 0) advance_ns(fx.m, 20000000);
    }
    advance_ns(fx.m, 1000000000);
    g_rand_free(rnd);
    fx_free(&fx);
}

/* The udp workload's stream: sequence headers, the end marker and the
 * answer. */
static size_t stream_datagram(uint8_t *f, uint32_t seq, uint32_t interval, size_t len)
{
    uint8_t d[1472];
    memset(d, 0x5a, sizeof d);
    memcpy(d, "nmud", 4);
    put32(d + 4, seq);
    put32(d + 8, interval);
    return build_udp(f, 40001, 9, d, len);
}

static void test_udp_stream(void)
{
    fixture fx;
    fx_init(&fx, "peer");
    uint8_t f[2048];
    /* Interval 0: seq 0-9, 3 and 4 lost; interval 1: seq 10-19, 19 lost;
     * interval 2: seq 20-24 all there. */
    for (uint32_t seq = 0; seq < 25; seq++) {
        if (seq == 3 || seq == 4 || seq == 19) continue;
        send_frame(&fx, f, stream_datagram(f, seq, seq / 10, 100));
    }
    advance_ns(fx.m, 100000000);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 22);
    g_assert_cmpuint(stats(&fx)->udp_streams, ==, 1);
    g_assert_cmpuint(fx.nic.rx->len, ==, 0);
    /* The end marker: 25 sent, 3 intervals of 10, 10, 5. */
    uint8_t e[24];
    memcpy(e, "nmue", 4);
    put32(e + 4, 25);
    put32(e + 8, 3);
    put32(e + 12, 10);
    put32(e + 16, 10);
    put32(e + 20, 5);
    send_frame(&fx, f, build_udp(f, 40001, 9, e, 24));
    advance_ns(fx.m, 100000000);
    g_assert_cmpuint(stats(&fx)->udp_datagrams, ==, 22); /* not data */
    g_assert_cmpuint(stats(&fx)->udp_stream_ends, ==, 1);
    g_assert_cmpuint(fx.nic.rx->len, ==, 1);
    const uint8_t *u = check_ip_frame(test_nic_frame(&fx.nic, 0), 17) + 20;
    g_assert_cmpuint(get16(u), ==, 9);
    g_assert_cmpuint(get16(u + 2), ==, 40001);
    g_assert_cmpuint(get16(u + 4), ==, 8 + 16 + 12);
    g_assert_cmphex(inet_csum(pseudo(PEER_IP, NIC_IP, 17, 36), u, 36), ==, 0);
    const uint8_t *d = u + 8;
    g_assert_cmpmem(d, 4, "nmur", 4);
    g_assert_cmpuint(get32(d + 4), ==, 22);
    g_assert_cmpuint(get32(d + 8), ==, 3);
    g_assert_cmpuint(get32(d + 12), ==, 3);
    g_assert_cmpuint(get32(d + 16), ==, 8);
    g_assert_cmpuint(get32(d + 20), ==, 9);
    g_assert_cmpuint(get32(d + 24), ==, 5);
    /* A bad end marker (3 intervals claimed, 2 given) is ignored, logged. */
    send_frame(&fx, f, build_udp(f, 40002, 9, e, 20));
    advance_ns(fx.m, 100000000);
    g_assert_cmpuint(stats(&fx)->udp_stream_bad, ==, 1);
    g_assert_cmpuint(fx.nic.rx->len, ==, 1);
    /* The report's per-interval figures. */
    nm_report *r = nm_report_new();
    nm_machine_report(fx.m, r);
    g_autofree char *json = nm_report_json(r);
    g_assert_nonnull(strstr(json, "\"udp_stream0_received\": 22"));
    g_assert_nonnull(strstr(json, "\"udp_stream0_lost\": 3"));
    g_assert_nonnull(strstr(json, "\"udp_stream0_interval1_lost\": 2"));
    g_assert_nonnull(strstr(json, "\"udp_stream0_interval2_received\": 9"));
    g_assert_nonnull(strstr(json, "\"udp_stream0_interval3_bytes\": 500"));
    nm_report_free(r);
    fx_free(&fx);
}

static void test_spec_errors(void)
{
    nm_config *cfg;
    nm_machine *m = test_machine(&cfg);
    test_nic nic;
    test_nic_init(&nic, m, "nic0");
    GError *err = NULL;
    const char *origin = "--nic ne2000,net=pear";
    g_assert_null(nm_net_attach(m, &nic.ep, "pear", MBIT10, NULL, origin, &err));
    g_assert_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE);
    g_assert_cmpstr(err->message, ==,
                    "--nic ne2000,net=pear: net: bad value 'pear' (accepted: peer, slirp, "
                    "pcap-in:FILE, hub:NAME)");
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "peer,colour=red", MBIT10, NULL, "N", &err));
    g_assert_cmpstr(err->message, ==,
                    "N: net peer: unknown key 'colour' (accepted: ip, mac, echo-port, "
                    "tcp-ports, delayed-ack, ack-delay, delay, window, mss)");
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "peer,ip=10.0.0.300", MBIT10, NULL, "N", &err));
    g_assert_cmpstr(err->message, ==,
                    "N: net peer: ip: bad value '10.0.0.300' (accepted: an IPv4 address, e.g. "
                    "10.0.0.1/24)");
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "peer,delay=5", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "delay: bad value '5'"));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "peer,mac=01:00:00:00:00:01", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "mac: bad value"));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "peer,echo-port", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "'echo-port' is not key=value"));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "hub:", MBIT10, NULL, "N", &err));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "hub:lan,x=1", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "a hub has no options"));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "hub:lan+hub:wan", MBIT10, NULL, "N", &err));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "hub:lan+peer,bogus=1", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "unknown key 'bogus'"));
    g_clear_error(&err);
    g_assert_null(
        nm_net_attach(m, &nic.ep, "pcap-in:/nonexistent/x.pcap", MBIT10, NULL, "N", &err));
    g_assert_nonnull(strstr(err->message, "N: net pcap-in: cannot read '/nonexistent/x.pcap'"));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "", MBIT10, NULL, "N", &err));
    g_clear_error(&err);
    g_assert_null(nm_net_attach(m, &nic.ep, "peer", MBIT10, "/nonexistent/dir/c.pcap", "N", &err));
    g_assert_nonnull(strstr(err->message, "N: capture: cannot write '/nonexistent/dir/c.pcap'"));
    g_clear_error(&err);
    /* The custom address and MAC are used. */
    g_assert_nonnull(nm_net_attach(m, &nic.ep, "peer,ip=192.168.1.1/24,mac=02:11:22:33:44:55",
                                   MBIT10, NULL, "N", &err));
    g_assert_no_error(err);
    g_array_free(nic.rx, TRUE);
    nm_machine_free(m);
    nm_config_free(cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/netdev/peer/arp", test_arp);
    g_test_add_func("/netdev/peer/ping", test_ping);
    g_test_add_func("/netdev/peer/udp", test_udp);
    g_test_add_func("/netdev/peer/tcp", test_tcp);
    g_test_add_func("/netdev/peer/delayed-ack", test_delayed_ack);
    g_test_add_func("/netdev/peer/bad-frames", test_bad_frames);
    g_test_add_func("/netdev/peer/hostile-frames", test_hostile_frames);
    g_test_add_func("/netdev/peer/spec-errors", test_spec_errors);
    g_test_add_func("/netdev/peer/reassembly", test_reassembly);
    g_test_add_func("/netdev/peer/reassembly-bad", test_reassembly_bad);
    g_test_add_func("/netdev/peer/reassembly-evict", test_reassembly_evict_exact);
    g_test_add_func("/netdev/peer/reassembly-hostile", test_reassembly_hostile);
    g_test_add_func("/netdev/peer/udp-stream", test_udp_stream);
    return g_test_run();
}
