/* Between the link (link.c) and the backends in devices/netdev/: not for NICs.
 * Each backend is a device class whose create() reads its options from an
 * nm_devcfg that nm_net_attach builds from the spec, and which exposes the
 * endpoint at its end of the wire. */
#ifndef NICEMU_NETDEV_INTERNAL_H
#define NICEMU_NETDEV_INTERNAL_H

#include "devices/netdev/netdev.h"
#include "emu/core/device.h"
#include "emu/core/machine.h"

extern const nm_device_class nm_net_link_class;
extern const nm_device_class nm_net_peer_class;
extern const nm_device_class nm_net_slirp_class;
extern const nm_device_class nm_net_pcap_in_class;
extern const nm_device_class nm_net_hub_class;

nm_net_endpoint *nm_net_peer_endpoint(void *peer);
nm_net_endpoint *nm_net_slirp_endpoint(void *slirp);
nm_net_endpoint *nm_net_pcap_in_endpoint(void *pcap_in);

/* The backends a `net=` spec names (backends.c, in the order messages list
 * them).  A point-to-point backend (peer, slirp, pcap-in) is a device whose
 * endpoint is the far end of the NIC's link; a segment (the hub) attaches
 * each NIC itself, on a port with a link of its own. */
typedef struct nm_net_backend {
    const char *kind; /* "peer", "pcap-in": what the spec starts with */
    const char *form; /* for messages: "pcap-in:FILE" */
    const nm_device_class *cls;
    const char *arg_key; /* KIND:ARG puts ARG under this key ("file"); NULL: no ARG */
    nm_net_endpoint *(*endpoint)(void *state); /* point-to-point backends */
    /* Segments: attach `nic` for the whole spec ("hub:NAME+..."). */
    nm_net_link *(*attach)(nm_machine *m, nm_net_endpoint *nic, const char *spec, uint64_t bps,
                           const char *capture, const char *origin, GError **err);
} nm_net_backend;

/* NULL-terminated. */
const nm_net_backend *const *nm_net_backend_list(void);
/* "peer, slirp, pcap-in:FILE[, hub:NAME]" (free it): the accepted forms. */
char *nm_net_backend_forms(bool with_segments);

/* A parsed point-to-point spec: the backend and its device configuration. */
typedef struct nm_net_backend_spec {
    const nm_net_backend *be;
    char *arg; /* the ARG of KIND:ARG */
    nm_devcfg *cfg;
} nm_net_backend_spec;
/* Parses "KIND[:ARG][,key=value...]", checking keys against the class;
 * a segment's spec is refused here (it parses its own). */
bool nm_net_backend_spec_parse(const char *spec, const char *origin, const char *inst_name,
                               nm_net_backend_spec *b, GError **err);
void nm_net_backend_spec_clear(nm_net_backend_spec *b);

/* A link instance ("nic0.link") added to the machine. */
nm_net_link *nm_net_link_new(nm_machine *m, const char *name, uint64_t bps, const char *capture,
                             const char *origin, GError **err);
/* Joins the two endpoints through a link instance (already created). */
void nm_net_link_connect(nm_net_link *l, nm_net_endpoint *nic, nm_net_endpoint *far);
const char *nm_net_link_capture_path(const nm_net_link *l);
uint64_t nm_net_link_bps(const nm_net_link *l);
/* Preamble + frame (no gap) at `bps`: from first bit sent to last bit in
 * (eth.c, with nm_net_wire_ns and the FCS). */
uint64_t nm_net_frame_ns(uint64_t bps, size_t len);

/* The hub: a new port endpoint for each attachment.  `backend_key` (may be
 * NULL) names a backend spec already on the hub, to attach it only once. */
nm_net_endpoint *nm_net_hub_new_port(void *hub, const char *port_name);
bool nm_net_hub_has_backend(void *hub, const char *backend_spec);
void nm_net_hub_add_backend(void *hub, const char *backend_spec);
const char *nm_net_hub_name(void *hub);
/* The `hub:NAME[+BACKEND]` backend's attach (hub.c). */
nm_net_link *nm_net_hub_attach(nm_machine *m, nm_net_endpoint *nic, const char *spec, uint64_t bps,
                               const char *capture, const char *origin, GError **err);

/* Capture writer (pcap.c): frames without their FCS, nanosecond stamps. */
typedef struct nm_pcap_writer nm_pcap_writer;
nm_pcap_writer *nm_pcap_writer_open(const char *path, GError **err);
/* False when the frame could not be written (disk full, a device that
 * refuses it): *why is then set to the reason (static storage). */
bool nm_pcap_writer_write(nm_pcap_writer *w, uint64_t ns, const uint8_t *frame, size_t len,
                          const char **why);
void nm_pcap_writer_close(nm_pcap_writer *w);
/* Snapshots: the capture file so far (a regular file, read back; g_free
 * it), and a restored run's capture started with it. */
bool nm_pcap_writer_contents(nm_pcap_writer *w, const char *path, uint8_t **data, size_t *len,
                             GError **err);
bool nm_pcap_writer_restart(nm_pcap_writer *w, const char *path, const uint8_t *data, size_t len,
                            GError **err);

/* A backend's options: a devcfg made from "key=value" words (backends.c). */
nm_devcfg *nm_net_devcfg_new(const char *origin, const char *name);
void nm_net_devcfg_put(nm_devcfg *d, const char *key, const char *value);
/* "origin: key: bad value 'v' (accepted: what)" */
bool nm_net_bad_value(GError **err, const char *origin, const char *key, const char *value,
                      const char *accepted);
/* A duration key ("10us", "40ms"). */
bool nm_net_devcfg_duration(const nm_devcfg *d, const char *key, uint64_t def, uint64_t *out,
                            GError **err);
/* An IPv4 address key (dotted quad, host order in *out), optional "/len"
 * (eth.c). */
bool nm_net_parse_ipv4(const char *s, uint32_t *out, int *prefix_len);

#endif
