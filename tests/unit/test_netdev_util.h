/* Shared by the netdev tests: a machine with one test endpoint (a "NIC"
 * that records what it receives and when), virtual time stepped event by
 * event, and builders for hand-made frames. */
#ifndef NICEMU_TEST_NETDEV_UTIL_H
#define NICEMU_TEST_NETDEV_UTIL_H

#include <glib.h>
#include <string.h>

#include "devices/netdev/netdev.h"
#include "emu/machine.h"

typedef struct rx_frame {
    uint64_t ns;
    size_t len;
    uint8_t data[2048];
} rx_frame;

typedef struct test_nic {
    nm_net_endpoint ep;
    nm_machine *m;
    GArray *rx; /* rx_frame */
} test_nic;

static inline void test_nic_receive(void *opaque, const uint8_t *frame, size_t len)
{
    test_nic *n = opaque;
    rx_frame f = {.ns = nm_clock_now_ns(&n->m->clock), .len = len};
    g_assert_cmpuint(len, <=, sizeof f.data);
    memcpy(f.data, frame, len);
    g_array_append_val(n->rx, f);
}

static inline void test_nic_init(test_nic *n, nm_machine *m, const char *name)
{
    memset(n, 0, sizeof *n);
    n->m = m;
    n->ep.name = name;
    n->ep.opaque = n;
    n->ep.receive = test_nic_receive;
    n->rx = g_array_new(FALSE, TRUE, sizeof(rx_frame));
}

static inline rx_frame *test_nic_frame(test_nic *n, guint i)
{
    g_assert_cmpuint(i, <, n->rx->len);
    return &g_array_index(n->rx, rx_frame, i);
}

/* A machine at 100 MHz (10 ns per cycle: wire times are exact). */
static inline nm_machine *test_machine(nm_config **cfg_out)
{
    nm_config *cfg = nm_config_new();
    g_free(cfg->cpu);
    cfg->cpu = g_strdup("pentium-100");
    GError *err = NULL;
    nm_machine *m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    *cfg_out = cfg;
    return m;
}

/* Runs every event up to now + ns, each at its own time. */
static inline void advance_ns(nm_machine *m, uint64_t ns)
{
    uint64_t target = nm_clock_cycles_from_ns(&m->clock, nm_clock_now_ns(&m->clock) + ns);
    while (m->clock.deadline <= target) {
        if (m->clock.cycles < m->clock.deadline) m->clock.cycles = m->clock.deadline;
        nm_clock_run_due(&m->clock);
    }
    m->clock.cycles = target;
    nm_clock_run_due(&m->clock);
}

/* ---- frame builders ------------------------------------------------------ */

static const uint8_t nic_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t peer_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
#define NIC_IP  0x0a000002u /* 10.0.0.2 */
#define PEER_IP 0x0a000001u /* 10.0.0.1 */

static inline uint16_t get16(const uint8_t *b)
{
    return (uint16_t)(b[0] << 8 | b[1]);
}
static inline uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}
static inline void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}
static inline void put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)(v >> 16));
    put16(b + 2, (uint16_t)v);
}

static inline uint16_t inet_csum(uint64_t sum, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += get16(b + i);
    if (n & 1) sum += (uint64_t)b[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static inline uint64_t pseudo(uint32_t src, uint32_t dst, uint8_t proto, size_t len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

/* Pads to 60, appends the FCS; returns the length with FCS. */
static inline size_t finish_frame(uint8_t *f, size_t len)
{
    if (len < 60) {
        memset(f + len, 0, 60 - len);
        len = 60;
    }
    nm_eth_put_fcs(f, len);
    return len + 4;
}

static inline void eth_header(uint8_t *f, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    put16(f + 12, type);
}

static inline size_t build_arp_request(uint8_t *f, uint32_t target_ip)
{
    eth_header(f, bcast_mac, nic_mac, 0x0806);
    uint8_t *a = f + 14;
    put16(a, 1);
    put16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, 1);
    memcpy(a + 8, nic_mac, 6);
    put32(a + 14, NIC_IP);
    memset(a + 18, 0, 6);
    put32(a + 24, target_ip);
    return finish_frame(f, 14 + 28);
}

/* IPv4 header (no options) at f+14 for `payload` bytes; returns the payload. */
static inline uint8_t *ip_header(uint8_t *f, uint8_t proto, size_t payload, uint16_t id)
{
    eth_header(f, peer_mac, nic_mac, 0x0800);
    uint8_t *ip = f + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + payload));
    put16(ip + 4, id);
    ip[8] = 64;
    ip[9] = proto;
    put32(ip + 12, NIC_IP);
    put32(ip + 16, PEER_IP);
    put16(ip + 10, inet_csum(0, ip, 20));
    return ip + 20;
}

static inline size_t build_ping(uint8_t *f, uint16_t id, uint16_t seq, size_t data_len)
{
    uint8_t *icmp = ip_header(f, 1, 8 + data_len, 1);
    icmp[0] = 8;
    icmp[1] = 0;
    put16(icmp + 2, 0);
    put16(icmp + 4, id);
    put16(icmp + 6, seq);
    for (size_t i = 0; i < data_len; i++)
        icmp[8 + i] = (uint8_t)i;
    put16(icmp + 2, inet_csum(0, icmp, 8 + data_len));
    return finish_frame(f, 14 + 20 + 8 + data_len);
}

static inline size_t build_udp(uint8_t *f, uint16_t sport, uint16_t dport, const uint8_t *data,
                               size_t len)
{
    uint8_t *u = ip_header(f, 17, 8 + len, 2);
    put16(u, sport);
    put16(u + 2, dport);
    put16(u + 4, (uint16_t)(8 + len));
    put16(u + 6, 0);
    memcpy(u + 8, data, len);
    uint16_t s = inet_csum(pseudo(NIC_IP, PEER_IP, 17, 8 + len), u, 8 + len);
    put16(u + 6, s ? s : 0xffff);
    return finish_frame(f, 14 + 20 + 8 + len);
}

static inline size_t build_tcp(uint8_t *f, uint16_t sport, uint16_t dport, uint32_t seq,
                               uint32_t ack, uint8_t flags, const uint8_t *data, size_t len)
{
    uint8_t *t = ip_header(f, 6, 20 + len, 3);
    memset(t, 0, 20);
    put16(t, sport);
    put16(t + 2, dport);
    put32(t + 4, seq);
    put32(t + 8, ack);
    t[12] = 5 << 4;
    t[13] = flags;
    put16(t + 14, 8192);
    if (len) memcpy(t + 20, data, len);
    put16(t + 16, inet_csum(pseudo(NIC_IP, PEER_IP, 6, 20 + len), t, 20 + len));
    return finish_frame(f, 14 + 20 + 20 + len);
}

/* Checks a received IPv4 frame's FCS and IP header checksum; returns the
 * IP header. */
static inline const uint8_t *check_ip_frame(const rx_frame *r, uint8_t proto)
{
    g_assert_cmpuint(r->len, >=, 64);
    g_assert_true(nm_eth_fcs_ok(r->data, r->len));
    g_assert_cmpmem(r->data, 6, nic_mac, 6);
    g_assert_cmpmem(r->data + 6, 6, peer_mac, 6);
    g_assert_cmphex(get16(r->data + 12), ==, 0x0800);
    const uint8_t *ip = r->data + 14;
    g_assert_cmphex(ip[0], ==, 0x45);
    g_assert_cmphex(inet_csum(0, ip, 20), ==, 0);
    g_assert_cmpuint(ip[9], ==, proto);
    g_assert_cmphex(get32(ip + 12), ==, PEER_IP);
    g_assert_cmphex(get32(ip + 16), ==, NIC_IP);
    return ip;
}

#endif
