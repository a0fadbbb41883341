/* Shared by the NIC unit tests that talk to the built-in peer (10.0.0.1)
 * through a NIC model: an ARP request the guest would send, and the peer's
 * counters. */
#ifndef NICEMU_TEST_NIC_PEER_FIXTURE_H
#define NICEMU_TEST_NIC_PEER_FIXTURE_H

#include <glib.h>
#include <string.h>

#include "devices/netdev/netdev.h"
#include "emu/machine.h"

/* An ARP request from 10.0.0.2 at `mac` for the peer 10.0.0.1, as the
 * driver hands it to the NIC: 42 bytes, no FCS (the NIC appends it). */
static inline size_t arp_request_to_peer(uint8_t *f, const uint8_t mac[6])
{
    static const uint8_t tail[] = {0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01};
    memset(f, 0xff, 6);
    memcpy(f + 6, mac, 6);
    memcpy(f + 12, tail, sizeof tail);
    memcpy(f + 22, mac, 6);
    memcpy(f + 28, (uint8_t[]){10, 0, 0, 2}, 4);
    memset(f + 32, 0, 6);
    memcpy(f + 38, (uint8_t[]){10, 0, 0, 1}, 4);
    return 42;
}

/* The counters of the machine's first peer backend. */
static inline const nm_net_peer_stats *peer_stats(nm_machine *m)
{
    const nm_net_peer_stats *p = nm_net_peer_find(m, 0);
    g_assert_nonnull(p);
    return p;
}

#endif
