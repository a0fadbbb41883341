/* The network seam.  A NIC owns one endpoint; `net=` names the backend at the
 * other end of its wire (peer, slirp, pcap-in:FILE, hub:NAME).  The wire is
 * modelled here, once, for every NIC: a full-duplex point-to-point link with
 * a bit rate, so serialization time, transmit completion and arrival times
 * are the same for every device and every backend.  Capture (capture=FILE)
 * happens at this seam too.
 *
 * Frames on the wire carry their 4-byte FCS at the end, as the NIC put it
 * there (or did not, with CRC inhibit): receivers check it and count bad
 * CRCs and runts.  Capture files get the frame without the FCS (link type
 * Ethernet).  docs/netdev.md has the spec syntax of every backend. */
#ifndef NICEMU_NETDEV_H
#define NICEMU_NETDEV_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nm_machine nm_machine;
typedef struct nm_net_link nm_net_link;
typedef struct nm_net_endpoint nm_net_endpoint;

/* Ethernet framing on the wire (IEEE 802.3 clause 4): 8 bytes of preamble
 * and SFD before each frame, 12 byte times of inter-frame gap after it. */
#define NM_ETH_PREAMBLE_BYTES 8
#define NM_ETH_IFG_BYTES      12
#define NM_ETH_FCS_BYTES      4
#define NM_ETH_MIN_FRAME      64 /* with FCS: shorter is a runt */
#define NM_ETH_MAX_FRAME      1518
/* The longest frame the wire carries at all (a NIC's 16-bit length plus
 * FCS); longer ones are dropped and counted. */
#define NM_NET_MAX_WIRE_FRAME (65535 + NM_ETH_FCS_BYTES)
/* Frames one direction of a link holds (in flight + waiting for the wire);
 * one more is dropped and counted as a queue drop. */
#define NM_NET_QUEUE_FRAMES 1024

struct nm_net_endpoint {
    const char *name;
    void *opaque;
    /* A frame has completely arrived (virtual time = now).  `len` includes
     * the FCS.  The endpoint copies what it keeps.  It may call
     * nm_net_send from here. */
    void (*receive)(void *opaque, const uint8_t *frame, size_t len);
    nm_net_link *link; /* set when attached */
};

/* Builds the backend named by `spec` ("peer", "peer,ip=…", "slirp",
 * "pcap-in:FILE", "hub:NAME", "hub:NAME+peer,…") and links `nic` to it at
 * `bits_per_second`.  `capture_path` (may be NULL) writes that link's
 * traffic to a pcap file.  Errors name `origin` (the NIC's configuration)
 * and the accepted forms.  The backend and the link are device instances
 * of the machine: reported and freed with it (after the NIC, which is
 * added later). */
nm_net_link *nm_net_attach(nm_machine *m, nm_net_endpoint *nic, const char *spec,
                           uint64_t bits_per_second, const char *capture_path, const char *origin,
                           GError **err);

/* Puts a frame on the wire from `from` (len includes the FCS).  If the wire
 * is busy in that direction the frame waits its turn.  Returns the virtual
 * time (ns) at which its last bit will have left, plus the inter-frame gap:
 * the NIC signals transmit-complete then.  The far end receives the frame at
 * the time its last bit arrives.  An empty or oversized frame or a full
 * queue: the frame is dropped (counted) and the time returned is when the
 * wire would have been free.  An unattached endpoint: dropped, returns 0. */
uint64_t nm_net_send(nm_net_endpoint *from, const uint8_t *frame, size_t len);

/* The virtual time one frame of `len` bytes (with FCS) occupies the wire,
 * preamble and inter-frame gap included (rounded up to whole ns). */
uint64_t nm_net_wire_ns(uint64_t bits_per_second, size_t len);

/* IEEE 802.3 CRC-32 (the FCS), as transmitted: append its 4 bytes
 * little-endian. */
uint32_t nm_eth_crc32(const uint8_t *data, size_t len);
/* Appends the FCS of frame[0..len) at frame[len..len+4). */
void nm_eth_put_fcs(uint8_t *frame, size_t len);
/* True if the last 4 bytes of frame[0..len) are the FCS of the rest. */
bool nm_eth_fcs_ok(const uint8_t *frame, size_t len);

/* ---- Inspection: for tests and tools; NICs need none of this ---------- */

/* One direction of a link. */
typedef struct nm_net_dir_stats {
    uint64_t frames;    /* delivered to the far end */
    uint64_t bytes;     /* of those, FCS included */
    uint64_t drops;     /* queue full, oversize, empty */
    uint64_t busy_ns;   /* wire occupied: preamble + frame + gap */
    uint64_t max_queue; /* most frames held at once */
} nm_net_dir_stats;

enum { NM_NET_FROM_NIC = 0, NM_NET_TO_NIC = 1 };
const nm_net_dir_stats *nm_net_link_stats(const nm_net_link *l, int direction);
/* The machine's links in creation order (index from 0; NULL past the
 * last), each with the device name of its NIC (or hub port) and its bit
 * rate: for observers such as the display window. */
const nm_net_link *nm_net_link_at(nm_machine *m, unsigned index, const char **nic_name,
                                  uint64_t *bits_per_second);

/* The built-in peer's counters (the report keys are the field names), one
 * line per protocol; clang-format reflows such X-lists differently each run. */
// clang-format off
#define NM_NET_PEER_COUNTERS(X) \
    X(rx_frames) X(rx_bytes) X(tx_frames) X(tx_bytes) \
    X(runts) X(oversize) X(bad_crc) X(not_for_us) \
    X(unknown_ethertype) \
    X(arp_requests) X(arp_replies) X(arp_other) \
    X(ip_packets) X(ip_bad_header) X(ip_bad_checksum) X(ip_not_for_us) \
    X(ip_fragments) X(ip_unknown_protocol) \
    X(icmp_bad_checksum) X(icmp_echo_requests) X(icmp_echo_replies) X(icmp_other) \
    X(udp_bad_header) X(udp_bad_checksum) X(udp_datagrams) X(udp_bytes) \
    X(udp_echoed) \
    X(tcp_bad_header) X(tcp_bad_checksum) X(tcp_segments) X(tcp_bytes) \
    X(tcp_connections) X(tcp_closed) X(tcp_resets_received) X(tcp_resets_sent) \
    X(tcp_acks_sent) X(tcp_delayed_acks) X(tcp_out_of_order) X(tcp_duplicates) \
    X(tcp_beyond_window) X(tcp_table_full) \
    X(ip_reassembled) X(ip_frag_bad) X(ip_frag_overlaps) X(ip_frag_too_big) \
    X(ip_frag_evicted) X(ip_frag_timeouts) X(ip_reassembled_other) \
    X(udp_echo_too_big) \
    X(udp_streams) X(udp_stream_ends) X(udp_stream_bad) X(udp_stream_table_full)
// clang-format on

typedef struct nm_net_peer_stats {
#define NM_NET_PEER_FIELD(name) uint64_t name;
    NM_NET_PEER_COUNTERS(NM_NET_PEER_FIELD)
#undef NM_NET_PEER_FIELD
} nm_net_peer_stats;

/* The `index`-th peer of the machine (creation order), or NULL. */
const nm_net_peer_stats *nm_net_peer_find(nm_machine *m, unsigned index);
/* Bytes received on the peer's UDP `port` (discarded or echoed). */
uint64_t nm_net_peer_udp_port_bytes(nm_machine *m, unsigned index, uint16_t port);

#endif
