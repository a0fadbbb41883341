/* peer — a small deterministic host at the far end of the wire.
 *
 * It lives on the virtual clock only: every answer leaves a fixed processing
 * delay (delay=, default 10us) after the frame that caused it arrived, so a
 * run with a peer is exactly reproducible.  What it does:
 *   ARP (RFC 826): answers requests for its IP.
 *   ICMP (RFC 792): answers echo requests.
 *   UDP (RFC 768): counts and discards datagrams (per port); echoes them on
 *     echo-port (default 7, 0 = none).
 *   TCP (RFC 793): a receiver on tcp-ports (default 5001, ttcp's): SYN ->
 *     SYN-ACK with an MSS option and a fixed window (no scaling); in-order
 *     data is accepted and ACKed (each segment, or with delayed-ack=1 every
 *     second segment or ack-delay, default 40ms, after the first unACKed
 *     one); out-of-order segments are dropped with a duplicate ACK; FIN ->
 *     ACK+FIN; a RST for closed ports and stray segments.  The application
 *     reads at once, so the window never shrinks.
 * Every frame is checked: runts (< 64 bytes with FCS), oversize (> 1518),
 * FCS, IP header checksum and lengths, ICMP/UDP/TCP checksums (with the
 * pseudo-header).  IPv4 fragments are reassembled (bounded; see "IPv4
 * reassembly" below) and the datagram handled as if it came whole; unknown
 * protocols are counted and dropped.  UDP datagrams of the guest's udp
 * workload ("nmud" sequence headers) are counted per stream and interval,
 * and its "nmue" end marker is answered with what arrived ("UDP streams").
 * Replies go to the Ethernet source of the frame they answer (no ARP cache),
 * padded to 60 bytes plus a correct FCS. */
#include <string.h>

#include "devices/netdev/netdev_internal.h"
#include "emu/core/log.h"
#include "emu/core/snapshot.h"

#define PEER_MAX_CONNS        32
#define PEER_MAX_PORTS        16
#define PEER_MAX_UDP_PORTS    64
#define PEER_MAX_CONN_RECORDS 1024
#define PEER_BUF              1600
/* Reassembly bounds: datagrams held at once and payload bytes held in all.
 * The timeout is Linux's default net.ipv4.ipfrag_time (30 s; RFC 791 leaves
 * it to the implementation). */
#define PEER_FRAG_DATAGRAMS  8
#define PEER_FRAG_BYTES      (256u * 1024)
#define PEER_FRAG_TIMEOUT_NS 30000000000ull
#define PEER_IP_MAX_PAYLOAD  (65535u - IP_HLEN_MIN)
/* UDP streams (the udp workload's sequence headers). */
#define PEER_MAX_STREAMS   8
#define PEER_MAX_INTERVALS 1000
/* Intervals in one "nmur" answer: it must fit one frame (16 + 4n <= 1472). */
#define PEER_REPLY_INTERVALS 364

enum { ETH_HLEN = 14, IP_HLEN = 20, TCP_HLEN = 20, UDP_HLEN = 8 };
enum { IP_HLEN_MIN = 20 };
enum { ETHERTYPE_IPV4 = 0x0800, ETHERTYPE_ARP = 0x0806 };
enum { PROTO_ICMP = 1, PROTO_TCP = 6, PROTO_UDP = 17 };
enum { TH_FIN = 0x01, TH_SYN = 0x02, TH_RST = 0x04, TH_PSH = 0x08, TH_ACK = 0x10 };
enum { TCP_CLOSED, TCP_SYN_RCVD, TCP_ESTABLISHED, TCP_LAST_ACK };

typedef struct peer peer;

typedef struct tcp_conn {
    peer *p;
    int state;
    uint8_t remote_mac[6];
    uint32_t remote_ip;
    uint16_t remote_port, local_port;
    uint32_t iss, snd_nxt, irs, rcv_nxt;
    unsigned unacked; /* in-order segments not yet ACKed (delayed ACK) */
    uint64_t id;
    guint record; /* index in peer.records, or G_MAXUINT */
    nm_timer delack;
} tcp_conn;

typedef struct conn_record {
    uint16_t local_port, remote_port;
    uint32_t remote_ip;
    uint64_t bytes;
} conn_record;

typedef struct udp_port_count {
    uint16_t port;
    uint64_t datagrams, bytes;
} udp_port_count;

/* One datagram being reassembled: its key (RFC 791: source, destination,
 * protocol, identification), the payload so far, which 8-byte units of it
 * have come (fragment offsets count in 8 bytes), and its length once the
 * last fragment (MF clear) has said it. */
typedef struct frag_entry {
    bool used;
    uint32_t src, dst;
    uint16_t id;
    uint8_t proto;
    uint8_t src_mac[6];
    uint64_t first_ns; /* the first fragment's arrival: the timeout runs from it */
    uint32_t have;     /* payload bytes held */
    uint32_t total;    /* payload length, 0 until the last fragment came */
    uint8_t *data;     /* PEER_IP_MAX_PAYLOAD bytes */
    uint8_t units[(PEER_IP_MAX_PAYLOAD + 63) / 64];
} frag_entry;

/* What arrived of one udp-workload stream (source address and port, our
 * port), per the sender's interval index; and what the end marker said
 * was sent. */
typedef struct udp_stream {
    uint32_t src_ip;
    uint16_t sport, dport;
    uint64_t received, bytes, reordered;
    uint32_t next_seq;     /* highest sequence number seen + 1 */
    uint32_t n_intervals;  /* highest interval index seen + 1 */
    uint64_t out_of_range; /* datagrams with an interval index past the table */
    bool ended;
    uint32_t sent, sent_intervals;
    uint32_t *rx, *sent_per; /* PEER_MAX_INTERVALS each */
    uint64_t *rx_bytes;
} udp_stream;

typedef struct out_frame {
    uint64_t at_ns;
    size_t len;
    uint8_t data[];
} out_frame;

struct peer {
    nm_machine *m;
    nm_net_endpoint ep;
    char *name;
    uint8_t mac[6];
    uint32_t ip;
    int prefix;
    uint32_t echo_port; /* 0: none */
    uint16_t tcp_ports[PEER_MAX_PORTS];
    unsigned n_tcp_ports;
    bool delayed_ack;
    uint64_t ack_delay_ns, delay_ns;
    uint32_t window, mss;
    uint16_t ip_id;
    GQueue out; /* out_frame*, in time order (one fixed delay) */
    nm_timer out_timer;
    tcp_conn conns[PEER_MAX_CONNS];
    uint64_t next_conn_id;
    GArray *records; /* conn_record, first PEER_MAX_CONN_RECORDS connections */
    udp_port_count udp_ports[PEER_MAX_UDP_PORTS];
    unsigned n_udp_ports;
    uint64_t udp_other_ports_datagrams, udp_other_ports_bytes;
    frag_entry frags[PEER_FRAG_DATAGRAMS];
    uint64_t frag_bytes; /* payload held in frags */
    udp_stream streams[PEER_MAX_STREAMS];
    unsigned n_streams;
    nm_net_peer_stats st;
};

static const uint8_t default_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t broadcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

nm_net_endpoint *nm_net_peer_endpoint(void *opaque)
{
    return &((peer *)opaque)->ep;
}

/* ---- bytes and checksums (RFC 1071) -------------------------------------- */

static inline uint16_t rd16(const uint8_t *b)
{
    return (uint16_t)(b[0] << 8 | b[1]);
}
static inline uint32_t rd32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}
static inline void wr16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}
static inline void wr32(uint8_t *b, uint32_t v)
{
    wr16(b, (uint16_t)(v >> 16));
    wr16(b + 2, (uint16_t)v);
}

static uint64_t csum_add(uint64_t sum, const uint8_t *b, size_t n)
{
    size_t i = 0;
    for (; i + 1 < n; i += 2)
        sum += rd16(b + i);
    if (i < n) sum += (uint64_t)b[i] << 8;
    return sum;
}

static uint16_t csum_fold(uint64_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static uint64_t pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, size_t len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

/* ---- output: fixed processing delay, then the wire ----------------------- */

static void peer_out_fire(void *opaque, uint64_t late)
{
    (void)late;
    peer *p = opaque;
    uint64_t now = nm_clock_now_ns(&p->m->clock);
    out_frame *f;
    while ((f = g_queue_peek_head(&p->out)) && f->at_ns <= now) {
        g_queue_pop_head(&p->out);
        p->st.tx_frames++;
        p->st.tx_bytes += f->len;
        nm_net_send(&p->ep, f->data, f->len);
        g_free(f);
    }
    if (f) nm_timer_at_ns(&p->m->clock, &p->out_timer, f->at_ns);
}

/* `frame` holds `len` bytes (no FCS) in a buffer of PEER_BUF: pad, FCS,
 * queue for now + delay. */
static void peer_emit(peer *p, uint8_t *frame, size_t len)
{
    if (len < NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES) {
        memset(frame + len, 0, NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES - len);
        len = NM_ETH_MIN_FRAME - NM_ETH_FCS_BYTES;
    }
    nm_eth_put_fcs(frame, len);
    len += NM_ETH_FCS_BYTES;
    out_frame *f = g_malloc(sizeof *f + len);
    f->at_ns = nm_clock_now_ns(&p->m->clock) + p->delay_ns;
    f->len = len;
    memcpy(f->data, frame, len);
    g_queue_push_tail(&p->out, f);
    if (!nm_timer_pending(&p->out_timer)) nm_timer_at_ns(&p->m->clock, &p->out_timer, f->at_ns);
}

static void put_eth(peer *p, uint8_t *b, const uint8_t dst[6], uint16_t type)
{
    memcpy(b, dst, 6);
    memcpy(b + 6, p->mac, 6);
    wr16(b + 12, type);
}

/* Ethernet + IPv4 header for `payload_len` bytes; returns the payload. */
static uint8_t *put_ip(peer *p, uint8_t *b, const uint8_t dst_mac[6], uint32_t dst_ip,
                       uint8_t proto, size_t payload_len)
{
    put_eth(p, b, dst_mac, ETHERTYPE_IPV4);
    uint8_t *ip = b + ETH_HLEN;
    ip[0] = 0x45;
    ip[1] = 0;
    wr16(ip + 2, (uint16_t)(IP_HLEN + payload_len));
    wr16(ip + 4, p->ip_id++);
    wr16(ip + 6, 0x4000); /* DF */
    ip[8] = 64;
    ip[9] = proto;
    wr16(ip + 10, 0);
    wr32(ip + 12, p->ip);
    wr32(ip + 16, dst_ip);
    wr16(ip + 10, csum_fold(csum_add(0, ip, IP_HLEN)));
    return ip + IP_HLEN;
}

/* ---- ARP ------------------------------------------------------------------ */

static void peer_arp(peer *p, const uint8_t *f, size_t n)
{
    const uint8_t *a = f + ETH_HLEN;
    if (n < ETH_HLEN + 28 || rd16(a) != 1 || rd16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 ||
        a[5] != 4 || rd16(a + 6) != 1 || rd32(a + 24) != p->ip) {
        p->st.arp_other++;
        return;
    }
    p->st.arp_requests++;
    uint8_t b[PEER_BUF];
    put_eth(p, b, f + 6, ETHERTYPE_ARP);
    uint8_t *r = b + ETH_HLEN;
    wr16(r, 1);
    wr16(r + 2, ETHERTYPE_IPV4);
    r[4] = 6;
    r[5] = 4;
    wr16(r + 6, 2);
    memcpy(r + 8, p->mac, 6);
    wr32(r + 14, p->ip);
    memcpy(r + 18, a + 8, 6);  /* the requester's hardware address */
    memcpy(r + 24, a + 14, 4); /* and protocol address */
    p->st.arp_replies++;
    peer_emit(p, b, ETH_HLEN + 28);
}

/* ---- ICMP ----------------------------------------------------------------- */

static void peer_icmp(peer *p, const uint8_t *src_mac, uint32_t src_ip, const uint8_t *d,
                      size_t len)
{
    if (len < 8 || csum_fold(csum_add(0, d, len)) != 0) {
        p->st.icmp_bad_checksum++;
        return;
    }
    if (d[0] != 8 || d[1] != 0) {
        p->st.icmp_other++;
        return;
    }
    p->st.icmp_echo_requests++;
    uint8_t b[PEER_BUF];
    uint8_t *r = put_ip(p, b, src_mac, src_ip, PROTO_ICMP, len);
    memcpy(r, d, len);
    r[0] = 0; /* echo reply */
    wr16(r + 2, 0);
    wr16(r + 2, csum_fold(csum_add(0, r, len)));
    p->st.icmp_echo_replies++;
    peer_emit(p, b, ETH_HLEN + IP_HLEN + len);
}

/* ---- UDP streams ---------------------------------------------------------
 * The guest's udp workload starts each datagram of 12 bytes or more with
 * "nmud", a sequence number and the sender's interval index (big-endian
 * 32-bit), and ends a run with one "nmue" datagram: the number sent, the
 * number of intervals n and n counts sent per interval.  The peer counts
 * what arrived per interval and answers the end marker with "nmur", the
 * number received, the number lost, m <= PEER_REPLY_INTERVALS and m counts
 * received per interval, from its port to the sender's: the receiver side
 * of nuttcp's per-interval lines. */

static udp_stream *udp_stream_find(peer *p, uint32_t src_ip, uint16_t sport, uint16_t dport,
                                   bool create)
{
    for (unsigned i = p->n_streams; i-- > 0;) {
        udp_stream *st = &p->streams[i];
        if (st->src_ip == src_ip && st->sport == sport && st->dport == dport)
            return st->ended && create ? NULL : st;
    }
    if (!create) return NULL;
    if (p->n_streams == PEER_MAX_STREAMS) {
        p->st.udp_stream_table_full++;
        return NULL;
    }
    udp_stream *st = &p->streams[p->n_streams++];
    memset(st, 0, sizeof *st);
    st->src_ip = src_ip;
    st->sport = sport;
    st->dport = dport;
    st->rx = g_new0(uint32_t, PEER_MAX_INTERVALS);
    st->sent_per = g_new0(uint32_t, PEER_MAX_INTERVALS);
    st->rx_bytes = g_new0(uint64_t, PEER_MAX_INTERVALS);
    p->st.udp_streams++;
    return st;
}

static void udp_stream_answer(peer *p, const udp_stream *st, const uint8_t *dst_mac)
{
    uint32_t m =
        st->sent_intervals < PEER_REPLY_INTERVALS ? st->sent_intervals : PEER_REPLY_INTERVALS;
    size_t plen = 16 + 4 * (size_t)m, ulen = UDP_HLEN + plen;
    uint8_t b[PEER_BUF];
    uint8_t *u = put_ip(p, b, dst_mac, st->src_ip, PROTO_UDP, ulen);
    wr16(u, st->dport);
    wr16(u + 2, st->sport);
    wr16(u + 4, (uint16_t)ulen);
    wr16(u + 6, 0);
    uint8_t *d = u + UDP_HLEN;
    memcpy(d, "nmur", 4);
    uint32_t rx = st->received > UINT32_MAX ? UINT32_MAX : (uint32_t)st->received;
    wr32(d + 4, rx);
    wr32(d + 8, st->sent > rx ? st->sent - rx : 0);
    wr32(d + 12, m);
    for (uint32_t k = 0; k < m; k++)
        wr32(d + 16 + 4 * k, st->rx[k]);
    uint16_t sum = csum_fold(csum_add(pseudo_sum(p->ip, st->src_ip, PROTO_UDP, ulen), u, ulen));
    wr16(u + 6, sum ? sum : 0xffff);
    peer_emit(p, b, ETH_HLEN + IP_HLEN + ulen);
}

/* Counts a datagram of a stream; true if it was an end marker (answered,
 * not data). */
static bool udp_stream_datagram(peer *p, const uint8_t *src_mac, uint32_t src_ip, uint16_t sport,
                                uint16_t dport, const uint8_t *d, size_t len)
{
    if (len >= 12 && !memcmp(d, "nmud", 4)) {
        uint32_t seq = rd32(d + 4), k = rd32(d + 8);
        udp_stream *st = udp_stream_find(p, src_ip, sport, dport, true);
        if (!st) return false;
        st->received++;
        st->bytes += len;
        if (seq < st->next_seq)
            st->reordered++;
        else
            st->next_seq = seq + 1 ? seq + 1 : seq;
        if (k < PEER_MAX_INTERVALS) {
            st->rx[k]++;
            st->rx_bytes[k] += len;
            if (k + 1 > st->n_intervals) st->n_intervals = k + 1;
        } else {
            st->out_of_range++;
        }
        return false;
    }
    if (len < 12 || memcmp(d, "nmue", 4)) return false;
    uint32_t sent = rd32(d + 4), n = rd32(d + 8);
    if (n == 0 || n > PEER_MAX_INTERVALS || len != 12 + 4 * (size_t)n) {
        p->st.udp_stream_bad++;
        nm_dev_warn(PEER, p,
                    "%s: UDP end marker from port %u with %u intervals in %zu bytes: ignored",
                    p->name, sport, n, len);
        return true;
    }
    udp_stream *st = udp_stream_find(p, src_ip, sport, dport, false);
    if (!st) st = udp_stream_find(p, src_ip, sport, dport, true); /* nothing arrived */
    if (!st) return true;
    if (!st->ended) {
        st->ended = true;
        st->sent = sent;
        st->sent_intervals = n;
        for (uint32_t k = 0; k < n; k++)
            st->sent_per[k] = rd32(d + 12 + 4 * k);
        p->st.udp_stream_ends++;
    }
    udp_stream_answer(p, st, src_mac);
    return true;
}

static void udp_streams_report(peer *p, nm_report *r)
{
    char key[80];
    for (unsigned i = 0; i < p->n_streams; i++) {
        udp_stream *st = &p->streams[i];
#define STREAM_KEY(fmt, ...) (g_snprintf(key, sizeof key, "udp_stream%u_" fmt, i, __VA_ARGS__), key)
        nm_report_u64(r, STREAM_KEY("%s", "port"), st->dport);
        nm_report_u64(r, STREAM_KEY("%s", "source_port"), st->sport);
        nm_report_u64(r, STREAM_KEY("%s", "received"), st->received);
        nm_report_u64(r, STREAM_KEY("%s", "bytes"), st->bytes);
        nm_report_u64(r, STREAM_KEY("%s", "reordered"), st->reordered);
        /* Lost: by the end marker's count, else by the highest sequence
         * number seen (a tail lost after it is not known then). */
        uint64_t expected = st->ended ? st->sent : st->next_seq;
        nm_report_str(r, STREAM_KEY("%s", "lost_from"), st->ended ? "end-marker" : "sequence");
        if (st->ended) nm_report_u64(r, STREAM_KEY("%s", "sent"), st->sent);
        nm_report_u64(r, STREAM_KEY("%s", "lost"),
                      expected > st->received ? expected - st->received : 0);
        uint32_t n = st->ended && st->sent_intervals > st->n_intervals ? st->sent_intervals
                                                                       : st->n_intervals;
        nm_report_u64(r, STREAM_KEY("%s", "intervals"), n);
        if (st->out_of_range)
            nm_report_u64(r, STREAM_KEY("%s", "interval_out_of_range"), st->out_of_range);
        for (uint32_t k = 0; k < n; k++) {
            nm_report_u64(r, STREAM_KEY("interval%u_received", k + 1), st->rx[k]);
            nm_report_u64(r, STREAM_KEY("interval%u_bytes", k + 1), st->rx_bytes[k]);
            if (st->ended) {
                nm_report_u64(r, STREAM_KEY("interval%u_sent", k + 1), st->sent_per[k]);
                nm_report_u64(r, STREAM_KEY("interval%u_lost", k + 1),
                              st->sent_per[k] > st->rx[k] ? st->sent_per[k] - st->rx[k] : 0);
            }
        }
#undef STREAM_KEY
    }
}

static void udp_streams_free(peer *p)
{
    for (unsigned i = 0; i < p->n_streams; i++) {
        g_free(p->streams[i].rx);
        g_free(p->streams[i].sent_per);
        g_free(p->streams[i].rx_bytes);
    }
}

/* ---- UDP ------------------------------------------------------------------ */

static void count_udp_port(peer *p, uint16_t port, uint64_t bytes)
{
    for (unsigned i = 0; i < p->n_udp_ports; i++) {
        if (p->udp_ports[i].port == port) {
            p->udp_ports[i].datagrams++;
            p->udp_ports[i].bytes += bytes;
            return;
        }
    }
    if (p->n_udp_ports < PEER_MAX_UDP_PORTS) {
        p->udp_ports[p->n_udp_ports++] = (udp_port_count){port, 1, bytes};
    } else {
        p->udp_other_ports_datagrams++;
        p->udp_other_ports_bytes += bytes;
    }
}

static void peer_udp(peer *p, const uint8_t *src_mac, uint32_t src_ip, const uint8_t *u, size_t len)
{
    uint16_t ulen = len >= UDP_HLEN ? rd16(u + 4) : 0;
    if (len < UDP_HLEN || ulen < UDP_HLEN || ulen > len) {
        p->st.udp_bad_header++;
        return;
    }
    if (rd16(u + 6) != 0 &&
        csum_fold(csum_add(pseudo_sum(src_ip, p->ip, PROTO_UDP, ulen), u, ulen)) != 0) {
        p->st.udp_bad_checksum++;
        return;
    }
    uint16_t sport = rd16(u), dport = rd16(u + 2);
    if (udp_stream_datagram(p, src_mac, src_ip, sport, dport, u + UDP_HLEN, ulen - UDP_HLEN))
        return; /* an end marker: not data */
    p->st.udp_datagrams++;
    p->st.udp_bytes += ulen - UDP_HLEN;
    count_udp_port(p, dport, ulen - UDP_HLEN);
    if (!p->echo_port || dport != p->echo_port) return;
    if (ETH_HLEN + IP_HLEN + (size_t)ulen + NM_ETH_FCS_BYTES > PEER_BUF) {
        p->st.udp_echo_too_big++; /* a reassembled datagram: one frame cannot carry it back */
        return;
    }
    uint8_t b[PEER_BUF];
    uint8_t *r = put_ip(p, b, src_mac, src_ip, PROTO_UDP, ulen);
    memcpy(r, u, ulen);
    wr16(r, dport);
    wr16(r + 2, sport);
    wr16(r + 6, 0);
    uint16_t sum = csum_fold(csum_add(pseudo_sum(p->ip, src_ip, PROTO_UDP, ulen), r, ulen));
    wr16(r + 6, sum ? sum : 0xffff);
    p->st.udp_echoed++;
    peer_emit(p, b, ETH_HLEN + IP_HLEN + ulen);
}

/* ---- TCP ------------------------------------------------------------------ */

static void tcp_output(peer *p, const uint8_t *dst_mac, uint32_t dst_ip, uint16_t sport,
                       uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags, bool mss_option)
{
    size_t hlen = TCP_HLEN + (mss_option ? 4 : 0);
    uint8_t b[PEER_BUF];
    uint8_t *t = put_ip(p, b, dst_mac, dst_ip, PROTO_TCP, hlen);
    memset(t, 0, hlen);
    wr16(t, sport);
    wr16(t + 2, dport);
    wr32(t + 4, seq);
    wr32(t + 8, (flags & TH_ACK) ? ack : 0);
    t[12] = (uint8_t)((hlen / 4) << 4);
    t[13] = flags;
    wr16(t + 14, (flags & TH_RST) ? 0 : (uint16_t)p->window);
    if (mss_option) {
        t[20] = 2; /* MSS, RFC 793 section 3.1 */
        t[21] = 4;
        wr16(t + 22, (uint16_t)p->mss);
    }
    wr16(t + 16, csum_fold(csum_add(pseudo_sum(p->ip, dst_ip, PROTO_TCP, hlen), t, hlen)));
    if (flags & TH_RST) p->st.tcp_resets_sent++;
    peer_emit(p, b, ETH_HLEN + IP_HLEN + hlen);
}

static void conn_send(tcp_conn *c, uint8_t flags, uint32_t seq, bool mss_option)
{
    tcp_output(c->p, c->remote_mac, c->remote_ip, c->local_port, c->remote_port, seq, c->rcv_nxt,
               flags, mss_option);
}

static void conn_ack_now(tcp_conn *c)
{
    c->unacked = 0;
    nm_timer_cancel(&c->p->m->clock, &c->delack);
    c->p->st.tcp_acks_sent++;
    conn_send(c, TH_ACK, c->snd_nxt, false);
}

static void conn_delack_fire(void *opaque, uint64_t late)
{
    (void)late;
    tcp_conn *c = opaque;
    if (c->state != TCP_ESTABLISHED || !c->unacked) return;
    c->p->st.tcp_delayed_acks++;
    conn_ack_now(c);
}

static void conn_close(tcp_conn *c)
{
    nm_timer_cancel(&c->p->m->clock, &c->delack);
    c->state = TCP_CLOSED;
}

static tcp_conn *conn_find(peer *p, uint32_t ip, uint16_t rport, uint16_t lport)
{
    for (int i = 0; i < PEER_MAX_CONNS; i++) {
        tcp_conn *c = &p->conns[i];
        if (c->state != TCP_CLOSED && c->remote_ip == ip && c->remote_port == rport &&
            c->local_port == lport)
            return c;
    }
    return NULL;
}

/* A free slot, or the oldest one waiting for the last ACK of a close. */
static tcp_conn *conn_alloc(peer *p)
{
    tcp_conn *oldest = NULL;
    for (int i = 0; i < PEER_MAX_CONNS; i++) {
        tcp_conn *c = &p->conns[i];
        if (c->state == TCP_CLOSED) return c;
        if (c->state == TCP_LAST_ACK && (!oldest || c->id < oldest->id)) oldest = c;
    }
    if (oldest) conn_close(oldest);
    return oldest;
}

static bool port_listening(const peer *p, uint16_t port)
{
    for (unsigned i = 0; i < p->n_tcp_ports; i++)
        if (p->tcp_ports[i] == port) return true;
    return false;
}

/* RFC 793, "If the state is CLOSED": answer anything but a RST with a RST. */
static void tcp_reset_for(peer *p, const uint8_t *src_mac, uint32_t src_ip, const uint8_t *t,
                          uint32_t seg_len)
{
    uint8_t flags = t[13];
    if (flags & TH_RST) return;
    if (flags & TH_ACK)
        tcp_output(p, src_mac, src_ip, rd16(t + 2), rd16(t), rd32(t + 8), 0, TH_RST, false);
    else
        tcp_output(p, src_mac, src_ip, rd16(t + 2), rd16(t), 0, rd32(t + 4) + seg_len,
                   TH_RST | TH_ACK, false);
}

static void conn_open(peer *p, tcp_conn *c, const uint8_t *src_mac, uint32_t src_ip, uint16_t sport,
                      uint16_t dport, uint32_t seq)
{
    nm_timer_cancel(&p->m->clock, &c->delack);
    c->state = TCP_SYN_RCVD;
    memcpy(c->remote_mac, src_mac, 6);
    c->remote_ip = src_ip;
    c->remote_port = sport;
    c->local_port = dport;
    c->id = p->next_conn_id++;
    /* A fixed, per-connection initial sequence number: reproducible. */
    c->iss = 0x10000000u + (uint32_t)c->id * 0x01000000u;
    c->snd_nxt = c->iss + 1;
    c->irs = seq;
    c->rcv_nxt = seq + 1;
    c->unacked = 0;
    c->record = G_MAXUINT;
    if (p->records->len < PEER_MAX_CONN_RECORDS) {
        conn_record r = {dport, sport, src_ip, 0};
        g_array_append_val(p->records, r);
        c->record = p->records->len - 1;
    }
    p->st.tcp_connections++;
    conn_send(c, TH_SYN | TH_ACK, c->iss, true);
}

/* Data and FIN of an established connection. */
static void conn_data(peer *p, tcp_conn *c, uint32_t seq, const uint8_t *data, size_t dlen,
                      bool fin)
{
    (void)data; /* the application reads and discards */
    uint32_t seg_len = (uint32_t)dlen + (fin ? 1 : 0);
    if (seg_len == 0) return;        /* a pure ACK or window update */
    uint32_t off = c->rcv_nxt - seq; /* already received at the front */
    if ((int32_t)off < 0) {          /* starts beyond rcv_nxt: a hole */
        p->st.tcp_out_of_order++;
        conn_ack_now(c);
        return;
    }
    if (off >= seg_len) { /* all old: a retransmission */
        p->st.tcp_duplicates++;
        conn_ack_now(c);
        return;
    }
    size_t fresh = dlen > off ? dlen - off : 0;
    if (fresh > p->window) {
        p->st.tcp_beyond_window++;
        fresh = p->window;
        fin = false; /* the FIN lies beyond the window */
    }
    c->rcv_nxt += (uint32_t)fresh;
    p->st.tcp_bytes += fresh;
    if (c->record != G_MAXUINT) g_array_index(p->records, conn_record, c->record).bytes += fresh;
    if (fin) {
        c->rcv_nxt++;
        c->unacked = 0;
        nm_timer_cancel(&p->m->clock, &c->delack);
        p->st.tcp_acks_sent++;
        conn_send(c, TH_FIN | TH_ACK, c->snd_nxt, false);
        c->snd_nxt++;
        c->state = TCP_LAST_ACK;
        return;
    }
    if (off > 0) p->st.tcp_duplicates++; /* partly old */
    if (!p->delayed_ack || off > 0 || ++c->unacked >= 2) {
        conn_ack_now(c);
    } else if (!nm_timer_pending(&c->delack)) {
        nm_timer_after_ns(&p->m->clock, &c->delack, p->ack_delay_ns);
    }
}

static void peer_tcp(peer *p, const uint8_t *src_mac, uint32_t src_ip, const uint8_t *t, size_t len)
{
    size_t doff = len >= TCP_HLEN ? (size_t)(t[12] >> 4) * 4 : 0;
    if (len < TCP_HLEN || doff < TCP_HLEN || doff > len) {
        p->st.tcp_bad_header++;
        return;
    }
    if (csum_fold(csum_add(pseudo_sum(src_ip, p->ip, PROTO_TCP, len), t, len)) != 0) {
        p->st.tcp_bad_checksum++;
        return;
    }
    p->st.tcp_segments++;
    uint16_t sport = rd16(t), dport = rd16(t + 2);
    uint32_t seq = rd32(t + 4), ack = rd32(t + 8);
    uint8_t flags = t[13];
    const uint8_t *data = t + doff;
    size_t dlen = len - doff;
    uint32_t seg_len = (uint32_t)dlen + !!(flags & TH_SYN) + !!(flags & TH_FIN);

    tcp_conn *c = conn_find(p, src_ip, sport, dport);
    if (c && (flags & TH_SYN) && c->state == TCP_LAST_ACK && seq != c->irs) {
        conn_close(c); /* a new connection on the same ports */
        c = NULL;
    }
    if (!c) {
        if (flags & TH_RST) return;
        if (port_listening(p, dport) && (flags & (TH_SYN | TH_ACK | TH_FIN)) == TH_SYN) {
            c = conn_alloc(p);
            if (!c) {
                p->st.tcp_table_full++;
                return;
            }
            c->p = p;
            conn_open(p, c, src_mac, src_ip, sport, dport, seq);
            return;
        }
        tcp_reset_for(p, src_mac, src_ip, t, seg_len);
        return;
    }
    if (flags & TH_RST) {
        /* Acceptable only in the window (RFC 793 "reset processing"). */
        if ((uint32_t)(seq - c->rcv_nxt) < (p->window ? p->window : 1)) {
            p->st.tcp_resets_received++;
            conn_close(c);
        }
        return;
    }
    if (flags & TH_SYN) {
        if (c->state == TCP_SYN_RCVD && seq == c->irs)
            conn_send(c, TH_SYN | TH_ACK, c->iss, true); /* our SYN-ACK was lost */
        else
            conn_ack_now(c); /* a SYN in a synchronized state: answer with an ACK */
        return;
    }
    if (!(flags & TH_ACK)) return; /* every segment after the SYN carries an ACK */
    switch (c->state) {
    case TCP_SYN_RCVD:
        if (ack != c->snd_nxt) {
            tcp_reset_for(p, src_mac, src_ip, t, seg_len);
            return;
        }
        c->state = TCP_ESTABLISHED;
        conn_data(p, c, seq, data, dlen, flags & TH_FIN);
        break;
    case TCP_ESTABLISHED: conn_data(p, c, seq, data, dlen, flags & TH_FIN); break;
    case TCP_LAST_ACK:
        if (ack == c->snd_nxt && dlen == 0 && !(flags & TH_FIN)) {
            p->st.tcp_closed++;
            conn_close(c);
        } else if (flags & TH_FIN) {
            /* Our FIN+ACK was lost: say it again. */
            p->st.tcp_duplicates++;
            p->st.tcp_acks_sent++;
            conn_send(c, TH_FIN | TH_ACK, c->snd_nxt - 1, false);
        }
        break;
    default: break;
    }
}

/* ---- IPv4 reassembly (RFC 791 section 3.2, "Fragmentation and Reassembly")
 * At most PEER_FRAG_DATAGRAMS datagrams and PEER_FRAG_BYTES of payload are
 * held; a new datagram past either evicts the oldest.  A datagram not
 * complete PEER_FRAG_TIMEOUT_NS after its first fragment is dropped (looked
 * at when fragments arrive: virtual time only).  A fragment that overlaps
 * what has come drops the whole datagram, as Linux does since 4.19
 * (net/ipv4/ip_fragment.c); so does one past the 65535-byte limit, a
 * non-last fragment whose length is not a multiple of 8, or a second,
 * different end.  Every case is counted (ip_frag_*). */

static void frag_drop(peer *p, frag_entry *e)
{
    p->frag_bytes -= e->have;
    g_free(e->data);
    memset(e, 0, sizeof *e);
}

static void frag_expire(peer *p, uint64_t now)
{
    for (int i = 0; i < PEER_FRAG_DATAGRAMS; i++) {
        frag_entry *e = &p->frags[i];
        if (e->used && now - e->first_ns >= PEER_FRAG_TIMEOUT_NS) {
            p->st.ip_frag_timeouts++;
            frag_drop(p, e);
        }
    }
}

static frag_entry *frag_oldest(peer *p, const frag_entry *keep)
{
    frag_entry *old = NULL;
    for (int i = 0; i < PEER_FRAG_DATAGRAMS; i++) {
        frag_entry *e = &p->frags[i];
        if (e->used && e != keep && (!old || e->first_ns < old->first_ns)) old = e;
    }
    return old;
}

static frag_entry *frag_lookup(peer *p, uint32_t src, uint32_t dst, uint16_t id, uint8_t proto,
                               uint64_t now)
{
    frag_entry *free_slot = NULL;
    for (int i = 0; i < PEER_FRAG_DATAGRAMS; i++) {
        frag_entry *e = &p->frags[i];
        if (e->used && e->src == src && e->dst == dst && e->id == id && e->proto == proto) return e;
        if (!e->used && !free_slot) free_slot = e;
    }
    if (!free_slot) {
        free_slot = frag_oldest(p, NULL);
        p->st.ip_frag_evicted++;
        nm_dev_warn(PEER, p, "%s: reassembly table full (%d datagrams): dropped the oldest",
                    p->name, PEER_FRAG_DATAGRAMS);
        frag_drop(p, free_slot);
    }
    frag_entry *e = free_slot;
    e->used = true;
    e->src = src;
    e->dst = dst;
    e->id = id;
    e->proto = proto;
    e->first_ns = now;
    e->data = g_malloc(PEER_IP_MAX_PAYLOAD);
    return e;
}

static bool frag_units_any(const frag_entry *e, uint32_t from, uint32_t to)
{
    for (uint32_t u = from; u < to; u++)
        if (e->units[u / 8] & (1u << (u % 8))) return true;
    return false;
}

static void frag_bad(peer *p, frag_entry *e, uint64_t *counter, const char *why)
{
    (*counter)++;
    nm_dev_warn(PEER, p, "%s: IPv4 fragment of datagram id %u: %s: datagram dropped", p->name,
                e->id, why);
    frag_drop(p, e);
}

/* One fragment (header at `ip`, `ihl` bytes of header, `total` bytes in
 * all, already checked against the frame); delivers the datagram when it
 * is complete. */
static void peer_ipv4_fragment(peer *p, const uint8_t *src_mac, const uint8_t *ip, size_t ihl,
                               size_t total)
{
    uint64_t now = nm_clock_now_ns(&p->m->clock);
    frag_expire(p, now);
    uint16_t field = rd16(ip + 6);
    bool more = field & 0x2000;
    uint32_t off = (uint32_t)(field & 0x1fff) * 8, len = (uint32_t)(total - ihl);
    frag_entry *e = frag_lookup(p, rd32(ip + 12), rd32(ip + 16), rd16(ip + 4), ip[9], now);
    if (len == 0 || (more && len % 8)) {
        frag_bad(p, e, &p->st.ip_frag_bad, more && len ? "not a multiple of 8 bytes" : "empty");
        return;
    }
    if (off + len > PEER_IP_MAX_PAYLOAD) {
        frag_bad(p, e, &p->st.ip_frag_too_big, "past 65535 bytes");
        return;
    }
    uint32_t end = off + len;
    if ((!more && e->total && e->total != end) ||
        (!more && e->have && frag_units_any(e, (end + 7) / 8, PEER_IP_MAX_PAYLOAD / 8 + 1)) ||
        (more && e->total && end > e->total)) {
        frag_bad(p, e, &p->st.ip_frag_bad, "a second, different end");
        return;
    }
    if (frag_units_any(e, off / 8, (end + 7) / 8)) {
        frag_bad(p, e, &p->st.ip_frag_overlaps, "overlaps what came before");
        return;
    }
    /* Room: evict the oldest others while the bytes would exceed the bound. */
    while (p->frag_bytes + len > PEER_FRAG_BYTES) {
        frag_entry *old = frag_oldest(p, e);
        if (!old) break;
        p->st.ip_frag_evicted++;
        frag_drop(p, old);
    }
    if (p->frag_bytes + len > PEER_FRAG_BYTES) {
        frag_bad(p, e, &p->st.ip_frag_too_big, "more than the reassembly buffer holds");
        return;
    }
    memcpy(e->data + off, ip + ihl, len);
    for (uint32_t u = off / 8; u < (end + 7) / 8; u++)
        e->units[u / 8] |= (uint8_t)(1u << (u % 8));
    e->have += len;
    p->frag_bytes += len;
    memcpy(e->src_mac, src_mac, 6);
    if (!more) e->total = end;
    if (!e->total || e->have != e->total) return;
    /* Complete (no overlaps, so `have` bytes cover 0..total). */
    p->st.ip_reassembled++;
    uint8_t *data = e->data;
    uint32_t src = e->src, dlen = e->total;
    uint8_t proto = e->proto, mac[6];
    memcpy(mac, e->src_mac, 6);
    e->data = NULL;
    p->frag_bytes -= e->have;
    memset(e, 0, sizeof *e);
    switch (proto) {
    case PROTO_UDP: peer_udp(p, mac, src, data, dlen); break;
    case PROTO_TCP: peer_tcp(p, mac, src, data, dlen); break;
    case PROTO_ICMP:
        /* An echo reply must fit one frame: the peer does not fragment. */
        if (ETH_HLEN + IP_HLEN + dlen + NM_ETH_FCS_BYTES <= PEER_BUF)
            peer_icmp(p, mac, src, data, dlen);
        else
            p->st.ip_reassembled_other++;
        break;
    default: p->st.ip_reassembled_other++; break;
    }
    g_free(data);
}

static void frag_free_all(peer *p)
{
    for (int i = 0; i < PEER_FRAG_DATAGRAMS; i++)
        if (p->frags[i].used) frag_drop(p, &p->frags[i]);
}

/* ---- IPv4 and the frame --------------------------------------------------- */

static void peer_ipv4(peer *p, const uint8_t *f, size_t n)
{
    const uint8_t *ip = f + ETH_HLEN;
    size_t avail = n - ETH_HLEN;
    size_t ihl = avail >= IP_HLEN ? (size_t)(ip[0] & 15) * 4 : 0;
    size_t total = avail >= IP_HLEN ? rd16(ip + 2) : 0;
    if (avail < IP_HLEN || (ip[0] >> 4) != 4 || ihl < IP_HLEN || ihl > avail || total < ihl ||
        total > avail) {
        p->st.ip_bad_header++;
        return;
    }
    if (csum_fold(csum_add(0, ip, ihl)) != 0) {
        p->st.ip_bad_checksum++;
        return;
    }
    p->st.ip_packets++;
    if (rd32(ip + 16) != p->ip) {
        p->st.ip_not_for_us++;
        return;
    }
    if (rd16(ip + 6) & 0x3fff) { /* MF set or a fragment offset */
        p->st.ip_fragments++;
        peer_ipv4_fragment(p, f + 6, ip, ihl, total);
        return;
    }
    uint32_t src = rd32(ip + 12);
    const uint8_t *payload = ip + ihl; /* after any options */
    size_t len = total - ihl;
    switch (ip[9]) {
    case PROTO_ICMP: peer_icmp(p, f + 6, src, payload, len); break;
    case PROTO_UDP: peer_udp(p, f + 6, src, payload, len); break;
    case PROTO_TCP: peer_tcp(p, f + 6, src, payload, len); break;
    default: p->st.ip_unknown_protocol++; break;
    }
}

static void peer_receive(void *opaque, const uint8_t *f, size_t len)
{
    peer *p = opaque;
    p->st.rx_frames++;
    p->st.rx_bytes += len;
    if (len < NM_ETH_MIN_FRAME) {
        p->st.runts++;
        return;
    }
    if (len > NM_ETH_MAX_FRAME) {
        p->st.oversize++;
        return;
    }
    if (!nm_eth_fcs_ok(f, len)) {
        p->st.bad_crc++;
        return;
    }
    size_t n = len - NM_ETH_FCS_BYTES;
    if (memcmp(f, p->mac, 6) && memcmp(f, broadcast_mac, 6)) {
        p->st.not_for_us++;
        return;
    }
    switch (rd16(f + 12)) {
    case ETHERTYPE_ARP: peer_arp(p, f, n); break;
    case ETHERTYPE_IPV4: peer_ipv4(p, f, n); break;
    default: p->st.unknown_ethertype++; break;
    }
}

/* ---- device --------------------------------------------------------------- */

static bool parse_ports(peer *p, const nm_devcfg *cfg, GError **err)
{
    const char *s = nm_devcfg_get(cfg, "tcp-ports");
    if (!s) {
        p->tcp_ports[0] = 5001;
        p->n_tcp_ports = 1;
        return true;
    }
    if (!strcmp(s, "none")) return true;
    g_auto(GStrv) words = g_strsplit(s, ":", -1);
    for (gchar **w = words; *w; w++) {
        uint64_t v;
        if (!nm_parse_u64(*w, &v) || v == 0 || v > 65535 || p->n_tcp_ports >= PEER_MAX_PORTS)
            return nm_net_bad_value(err, cfg->origin, "tcp-ports", s,
                                    "none, or up to 16 ports from 1 to 65535 separated by ':'");
        p->tcp_ports[p->n_tcp_ports++] = (uint16_t)v;
    }
    return true;
}

static void peer_destroy(void *opaque);

static void *peer_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    peer *p = g_new0(peer, 1);
    p->m = m;
    p->name = g_strdup(cfg->name ? cfg->name : "peer");
    p->ep.name = p->name;
    p->ep.opaque = p;
    p->ep.receive = peer_receive;
    g_queue_init(&p->out);
    nm_timer_init(&p->out_timer, peer_out_fire, p, "peer-out");
    p->records = g_array_new(FALSE, FALSE, sizeof(conn_record));
    for (int i = 0; i < PEER_MAX_CONNS; i++) {
        p->conns[i].p = p;
        nm_timer_init(&p->conns[i].delack, conn_delack_fire, &p->conns[i], "peer-delack");
    }
    const char *ip = nm_devcfg_get(cfg, "ip");
    uint32_t delayed = 0, echo = 7, window = 65535, mss = 1460;
    bool ok = true;
    p->prefix = 24;
    if (ip && !nm_net_parse_ipv4(ip, &p->ip, &p->prefix)) {
        ok = nm_net_bad_value(err, cfg->origin, "ip", ip, "an IPv4 address, e.g. 10.0.0.1/24");
    } else if (!ip) {
        p->ip = 0x0a000001; /* 10.0.0.1 */
    }
    ok = ok && nm_devcfg_mac(cfg, "mac", default_mac, p->mac, err) &&
         nm_devcfg_u32(cfg, "echo-port", 7, 0, 65535, &echo, err) &&
         nm_devcfg_u32(cfg, "delayed-ack", 0, 0, 1, &delayed, err) &&
         nm_net_devcfg_duration(cfg, "ack-delay", 40000000, &p->ack_delay_ns, err) &&
         nm_net_devcfg_duration(cfg, "delay", 10000, &p->delay_ns, err) &&
         nm_devcfg_u32(cfg, "window", 65535, 1, 65535, &window, err) &&
         nm_devcfg_u32(cfg, "mss", 1460, 64, 65495, &mss, err) && parse_ports(p, cfg, err);
    if (!ok) {
        peer_destroy(p);
        return NULL;
    }
    p->echo_port = echo;
    p->delayed_ack = delayed;
    p->window = window;
    p->mss = mss;
    return p;
}

static void peer_destroy(void *opaque)
{
    peer *p = opaque;
    nm_timer_cancel(&p->m->clock, &p->out_timer);
    for (int i = 0; i < PEER_MAX_CONNS; i++)
        nm_timer_cancel(&p->m->clock, &p->conns[i].delack);
    g_queue_clear_full(&p->out, g_free);
    frag_free_all(p);
    udp_streams_free(p);
    g_array_free(p->records, TRUE);
    g_free(p->name);
    g_free(p);
}

static void peer_report(void *opaque, nm_report *r)
{
    peer *p = opaque;
    char text[32], key[64];
    g_snprintf(text, sizeof text, "%u.%u.%u.%u/%d", p->ip >> 24, (p->ip >> 16) & 255,
               (p->ip >> 8) & 255, p->ip & 255, p->prefix);
    nm_report_str(r, "ip", text);
    g_snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", p->mac[0], p->mac[1], p->mac[2],
               p->mac[3], p->mac[4], p->mac[5]);
    nm_report_str(r, "mac", text);
#define PEER_REPORT(name) nm_report_u64(r, #name, p->st.name);
    NM_NET_PEER_COUNTERS(PEER_REPORT)
#undef PEER_REPORT
    for (unsigned i = 0; i < p->n_udp_ports; i++) {
        g_snprintf(key, sizeof key, "udp_port_%u_datagrams", p->udp_ports[i].port);
        nm_report_u64(r, key, p->udp_ports[i].datagrams);
        g_snprintf(key, sizeof key, "udp_port_%u_bytes", p->udp_ports[i].port);
        nm_report_u64(r, key, p->udp_ports[i].bytes);
    }
    if (p->udp_other_ports_datagrams) {
        nm_report_u64(r, "udp_other_ports_datagrams", p->udp_other_ports_datagrams);
        nm_report_u64(r, "udp_other_ports_bytes", p->udp_other_ports_bytes);
    }
    unsigned held = 0;
    for (int i = 0; i < PEER_FRAG_DATAGRAMS; i++)
        held += p->frags[i].used;
    nm_report_u64(r, "ip_frag_incomplete", held); /* still in reassembly at the end */
    udp_streams_report(p, r);
    for (guint i = 0; i < p->records->len; i++) {
        conn_record *c = &g_array_index(p->records, conn_record, i);
        g_snprintf(key, sizeof key, "tcp_conn%u_ports", i);
        g_snprintf(text, sizeof text, "%u->%u", c->remote_port, c->local_port);
        nm_report_str(r, key, text);
        g_snprintf(key, sizeof key, "tcp_conn%u_bytes", i);
        nm_report_u64(r, key, c->bytes);
    }
}

const nm_net_peer_stats *nm_net_peer_find(nm_machine *m, unsigned index)
{
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        if (inst->cls != &nm_net_peer_class) continue;
        if (index-- == 0) return &((peer *)inst->state)->st;
    }
    return NULL;
}

uint64_t nm_net_peer_udp_port_bytes(nm_machine *m, unsigned index, uint16_t port)
{
    const nm_net_peer_stats *st = nm_net_peer_find(m, index);
    if (!st) return 0;
    const peer *p = (const peer *)((const char *)st - offsetof(peer, st));
    for (unsigned i = 0; i < p->n_udp_ports; i++)
        if (p->udp_ports[i].port == port) return p->udp_ports[i].bytes;
    return 0;
}

/* The peer's whole protocol state: its answers waiting for their time, the
 * TCP connections and their records, UDP counts, the IP fragments held,
 * the UDP streams with their intervals, the counters.  Its options come
 * from the configuration. */
static void peer_snapshot(void *opaque, nm_snap *s)
{
    peer *p = opaque;
    nm_snap_u16(s, "ip_id", &p->ip_id);
    uint32_t n = g_queue_get_length(&p->out);
    nm_snap_u32(s, "out", &n);
    if (!nm_snap_check(s, n <= 65536, "out")) return;
    if (!nm_snap_saving(s)) g_queue_clear_full(&p->out, g_free);
    for (uint32_t j = 0; j < n && !nm_snap_failed(s); j++) {
        nm_snap_push(s, "out%u", j);
        if (nm_snap_saving(s)) {
            out_frame *f = g_queue_peek_nth(&p->out, j);
            uint8_t *data = f->data;
            nm_snap_u64(s, "at_ns", &f->at_ns);
            nm_snap_var(s, "data", &data, &f->len, f->len);
        } else {
            uint64_t at = 0;
            uint8_t *data = NULL;
            size_t len = 0;
            nm_snap_u64(s, "at_ns", &at);
            nm_snap_var(s, "data", &data, &len, NM_NET_MAX_WIRE_FRAME);
            if (!nm_snap_failed(s)) {
                out_frame *f = g_malloc(sizeof *f + len);
                f->at_ns = at;
                f->len = len;
                if (len) memcpy(f->data, data, len);
                g_queue_push_tail(&p->out, f);
            }
            g_free(data);
        }
        nm_snap_pop(s);
    }
    nm_snap_timer(s, "out_timer", &p->out_timer);

    uint32_t records = p->records->len;
    nm_snap_u32(s, "records", &records);
    if (!nm_snap_check(s, records <= PEER_MAX_CONN_RECORDS, "records")) return;
    if (!nm_snap_saving(s)) g_array_set_size(p->records, records);
    for (uint32_t j = 0; j < records; j++) {
        conn_record *r = &g_array_index(p->records, conn_record, j);
        nm_snap_push(s, "record%u", j);
        nm_snap_u16(s, "local_port", &r->local_port);
        nm_snap_u16(s, "remote_port", &r->remote_port);
        nm_snap_u32(s, "remote_ip", &r->remote_ip);
        nm_snap_u64(s, "bytes", &r->bytes);
        nm_snap_pop(s);
    }
    for (unsigned j = 0; j < PEER_MAX_CONNS; j++) {
        tcp_conn *c = &p->conns[j];
        nm_snap_push(s, "conn%u", j);
        int32_t state = c->state;
        nm_snap_i32(s, "state", &state);
        if (nm_snap_check(s, state >= TCP_CLOSED && state <= TCP_LAST_ACK, "state"))
            c->state = state;
        nm_snap_bytes(s, "remote_mac", c->remote_mac, 6);
        nm_snap_u32(s, "remote_ip", &c->remote_ip);
        nm_snap_u16(s, "remote_port", &c->remote_port);
        nm_snap_u16(s, "local_port", &c->local_port);
        nm_snap_u32(s, "iss", &c->iss);
        nm_snap_u32(s, "snd_nxt", &c->snd_nxt);
        nm_snap_u32(s, "irs", &c->irs);
        nm_snap_u32(s, "rcv_nxt", &c->rcv_nxt);
        nm_snap_uint(s, "unacked", &c->unacked);
        nm_snap_u64(s, "id", &c->id);
        nm_snap_uint(s, "record", &c->record);
        nm_snap_check(
            s, c->state == TCP_CLOSED || c->record == G_MAXUINT || c->record < p->records->len,
            "record");
        nm_snap_timer(s, "delack", &c->delack);
        nm_snap_pop(s);
    }
    nm_snap_u64(s, "next_conn_id", &p->next_conn_id);

    for (unsigned j = 0; j < PEER_MAX_UDP_PORTS; j++) {
        nm_snap_push(s, "udp_port%u", j);
        nm_snap_u16(s, "port", &p->udp_ports[j].port);
        nm_snap_u64(s, "datagrams", &p->udp_ports[j].datagrams);
        nm_snap_u64(s, "bytes", &p->udp_ports[j].bytes);
        nm_snap_pop(s);
    }
    nm_snap_uint(s, "n_udp_ports", &p->n_udp_ports);
    nm_snap_check(s, p->n_udp_ports <= PEER_MAX_UDP_PORTS, "n_udp_ports");
    nm_snap_u64(s, "udp_other_ports_datagrams", &p->udp_other_ports_datagrams);
    nm_snap_u64(s, "udp_other_ports_bytes", &p->udp_other_ports_bytes);

    for (unsigned j = 0; j < PEER_FRAG_DATAGRAMS; j++) {
        frag_entry *e = &p->frags[j];
        nm_snap_push(s, "frag%u", j);
        nm_snap_bool(s, "used", &e->used);
        nm_snap_u32(s, "src", &e->src);
        nm_snap_u32(s, "dst", &e->dst);
        nm_snap_u16(s, "id", &e->id);
        nm_snap_u8(s, "proto", &e->proto);
        nm_snap_bytes(s, "src_mac", e->src_mac, 6);
        nm_snap_u64(s, "first_ns", &e->first_ns);
        nm_snap_u32(s, "have", &e->have);
        nm_snap_u32(s, "total", &e->total);
        nm_snap_bytes(s, "units", e->units, sizeof e->units);
        nm_snap_check(s, e->have <= PEER_IP_MAX_PAYLOAD && e->total <= PEER_IP_MAX_PAYLOAD, "have");
        bool data = e->data != NULL;
        nm_snap_bool(s, "has_data", &data);
        if (!nm_snap_saving(s) && !nm_snap_failed(s)) {
            if (data && !e->data) e->data = g_malloc(PEER_IP_MAX_PAYLOAD);
            if (!data) g_clear_pointer(&e->data, g_free);
        }
        if (data && !nm_snap_failed(s)) nm_snap_bytes(s, "data", e->data, PEER_IP_MAX_PAYLOAD);
        nm_snap_pop(s);
    }
    nm_snap_u64(s, "frag_bytes", &p->frag_bytes);

    unsigned streams = p->n_streams;
    nm_snap_uint(s, "n_streams", &streams);
    if (!nm_snap_check(s, streams <= PEER_MAX_STREAMS, "n_streams")) return;
    if (!nm_snap_saving(s)) {
        udp_streams_free(p);
        for (unsigned j = 0; j < streams; j++) {
            udp_stream *st = &p->streams[j];
            memset(st, 0, sizeof *st);
            st->rx = g_new0(uint32_t, PEER_MAX_INTERVALS);
            st->sent_per = g_new0(uint32_t, PEER_MAX_INTERVALS);
            st->rx_bytes = g_new0(uint64_t, PEER_MAX_INTERVALS);
        }
        p->n_streams = streams;
    }
    for (unsigned j = 0; j < p->n_streams; j++) {
        udp_stream *st = &p->streams[j];
        nm_snap_push(s, "stream%u", j);
        nm_snap_u32(s, "src_ip", &st->src_ip);
        nm_snap_u16(s, "sport", &st->sport);
        nm_snap_u16(s, "dport", &st->dport);
        nm_snap_u64(s, "received", &st->received);
        nm_snap_u64(s, "bytes", &st->bytes);
        nm_snap_u64(s, "reordered", &st->reordered);
        nm_snap_u32(s, "next_seq", &st->next_seq);
        nm_snap_u32(s, "n_intervals", &st->n_intervals);
        nm_snap_u64(s, "out_of_range", &st->out_of_range);
        nm_snap_bool(s, "ended", &st->ended);
        nm_snap_u32(s, "sent", &st->sent);
        nm_snap_u32(s, "sent_intervals", &st->sent_intervals);
        nm_snap_check(
            s, st->n_intervals <= PEER_MAX_INTERVALS && st->sent_intervals <= PEER_MAX_INTERVALS,
            "n_intervals");
        nm_snap_u32s(s, "rx", st->rx, PEER_MAX_INTERVALS);
        nm_snap_u32s(s, "sent_per", st->sent_per, PEER_MAX_INTERVALS);
        nm_snap_u64s(s, "rx_bytes", st->rx_bytes, PEER_MAX_INTERVALS);
        nm_snap_pop(s);
    }
#define PEER_SNAP_FIELD(name) nm_snap_u64(s, "st." #name, &p->st.name);
    NM_NET_PEER_COUNTERS(PEER_SNAP_FIELD)
#undef PEER_SNAP_FIELD
}

static const char *const peer_keys[] = {"ip",          "mac",       "echo-port", "tcp-ports",
                                        "delayed-ack", "ack-delay", "delay",     "window",
                                        "mss",         NULL};

const nm_device_class nm_net_peer_class = {
    .name = "peer",
    .help = "a deterministic host on the virtual clock: ARP, ping, UDP sink/echo, TCP receiver",
    .keys = peer_keys,
    .create = peer_create,
    .destroy = peer_destroy,
    .report = peer_report,
    .snapshot = peer_snapshot,
    .snapshot_version = 1,
};
