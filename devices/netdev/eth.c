/* Ethernet and IP helpers shared by the link and the backends: the FCS
 * (CRC-32), the time a frame takes on the wire, IPv4 address parsing.
 * Pure functions of their arguments (netdev_internal.h, netdev.h). */
#include <stdio.h>

#include "devices/netdev/netdev_internal.h"

#define NS_PER_SECOND 1000000000ull

/* ---- CRC-32 (IEEE 802.3 clause 3.2.9: reflected, polynomial 0x04C11DB7
 * reversed = 0xEDB88320, preset and final complement 0xFFFFFFFF) ---------- */

static uint32_t crc_table[256];

static gpointer crc_table_init(gpointer unused)
{
    (void)unused;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    return NULL;
}

uint32_t nm_eth_crc32(const uint8_t *data, size_t len)
{
    /* The table is a constant of the algorithm, computed once per process:
     * not machine state. */
    static GOnce once = G_ONCE_INIT;
    g_once(&once, crc_table_init, NULL);
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++)
        c = crc_table[(c ^ data[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

void nm_eth_put_fcs(uint8_t *frame, size_t len)
{
    uint32_t fcs = nm_eth_crc32(frame, len);
    for (int i = 0; i < 4; i++)
        frame[len + i] = (uint8_t)(fcs >> (8 * i));
}

bool nm_eth_fcs_ok(const uint8_t *frame, size_t len)
{
    if (len < NM_ETH_FCS_BYTES) return false;
    size_t n = len - NM_ETH_FCS_BYTES;
    uint32_t fcs = (uint32_t)frame[n] | (uint32_t)frame[n + 1] << 8 | (uint32_t)frame[n + 2] << 16 |
                   (uint32_t)frame[n + 3] << 24;
    return nm_eth_crc32(frame, n) == fcs;
}

/* ---- wire time ---------------------------------------------------------- */

/* Time `bytes` take at `bps`, rounded up to a whole ns. */
static uint64_t bytes_ns(uint64_t bps, uint64_t bytes)
{
    unsigned __int128 num = (unsigned __int128)bytes * 8u * NS_PER_SECOND;
    return (uint64_t)((num + bps - 1) / bps);
}

uint64_t nm_net_wire_ns(uint64_t bits_per_second, size_t len)
{
    if (!bits_per_second) return 0;
    return bytes_ns(bits_per_second, NM_ETH_PREAMBLE_BYTES + (uint64_t)len + NM_ETH_IFG_BYTES);
}

uint64_t nm_net_frame_ns(uint64_t bps, size_t len)
{
    if (!bps) return 0;
    return bytes_ns(bps, NM_ETH_PREAMBLE_BYTES + (uint64_t)len);
}

/* ---- IPv4 addresses ----------------------------------------------------- */

bool nm_net_parse_ipv4(const char *s, uint32_t *out, int *prefix_len)
{
    unsigned a[4], len = 32;
    int n = 0;
    if (!s || sscanf(s, "%3u.%3u.%3u.%3u%n", &a[0], &a[1], &a[2], &a[3], &n) != 4) return false;
    const char *rest = s + n;
    if (*rest == '/') {
        if (!prefix_len) return false;
        uint64_t v;
        if (!nm_parse_u64(rest + 1, &v) || v > 32) return false;
        len = (unsigned)v;
    } else if (*rest) {
        return false;
    }
    for (int i = 0; i < 4; i++) {
        if (a[i] > 255) return false;
        if (i == 0 && !g_ascii_isdigit(s[0])) return false;
    }
    *out = a[0] << 24 | a[1] << 16 | a[2] << 8 | a[3];
    if (prefix_len) *prefix_len = (int)len;
    return true;
}
