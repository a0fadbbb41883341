/* National DP8390 NIC core.  References: National Semiconductor "DP8390D/
 * NS32490D NIC Network Interface Controller" datasheet (register section,
 * "Receive Buffer Ring", "Remote DMA", "Loopback Diagnostics", "Tally
 * Counters"), and how Linux's lib8390.c / ne.c / wd.c drive it.
 * docs/dp8390.md lists what is modelled and what is not. */
#include "devices/net/dp8390.h"

#include <glib.h>
#include <string.h>

#include "devices/netdev/netdev.h"
#include "emu/core/clock.h"
#include "emu/core/log.h"
#include "emu/core/snapshot.h"
#include "emu/core/machine.h"

#define WIRE_BPS  10000000u /* 10BASE-T / 10BASE2 */
#define MAX_FRAME 1518      /* with FCS: longer is a giant (sent anyway, logged) */

enum { DMA_IDLE = 0, DMA_READ, DMA_WRITE, DMA_SEND };

struct nm_dp8390 {
    nm_machine *m;
    char *name;
    nm_dp8390_board board;
    nm_net_endpoint ep;
    nm_net_link *link;

    /* Registers (datasheet section 7). */
    uint8_t cr;  /* PS, RD as written; STA/STP/TXP are derived from state */
    uint8_t isr; /* bits 0..6; RST (bit 7) is derived */
    uint8_t imr, dcr, tcr, rcr, tsr, rsr, ncr;
    uint8_t pstart, pstop, bnry, curr, tpsr;
    uint16_t tbcr;
    uint16_t rsar; /* the current remote DMA address (CRDA) */
    uint16_t rbcr;
    uint16_t clda; /* current local DMA address */
    uint8_t par[6], mar[8];
    uint8_t cntr[3]; /* tally: frame alignment, CRC, missed */
    uint8_t rnpp, lnpp;
    uint16_t addr_counter;

    bool stopped;      /* in the reset state (STP) */
    bool rst_overflow; /* ISR.RST held by a ring overflow */
    bool rx_disabled;  /* local DMA off after an overflow until a software reset */
    int dma;
    bool tx_busy;
    nm_timer tx_timer;
    uint8_t *loop_frame; /* frame to deliver to ourselves when the TX ends */
    size_t loop_len;
    bool irq_level;
    nm_dp8390_stats st;
};

/* ---- helpers ------------------------------------------------------------- */

static void update_irq(nm_dp8390 *d)
{
    bool level = (d->isr & d->imr & 0x7f) != 0;
    if (level == d->irq_level) return;
    d->irq_level = level;
    if (d->board.irq) d->board.irq(d->board.opaque, level);
}

static uint8_t mem_rd(nm_dp8390 *d, uint32_t addr)
{
    return d->board.mem_read(d->board.opaque, (uint16_t)addr);
}

static void mem_wr(nm_dp8390 *d, uint32_t addr, uint8_t v)
{
    d->board.mem_write(d->board.opaque, (uint16_t)addr, v);
}

/* Tally counters: 8 bits, cleared when read, CNT when bit 7 of any is set;
 * they stop at 192 (C0h) so a slow driver cannot see them wrap. */
static void count_tally(nm_dp8390 *d, int which)
{
    if (d->cntr[which] < 0xc0) d->cntr[which]++;
    if (d->cntr[which] & 0x80) d->isr |= NM_DP_ISR_CNT;
}

/* The ring's next page: the local DMA wraps from PSTOP to PSTART. */
static uint8_t next_page(const nm_dp8390 *d, uint8_t p)
{
    p = (uint8_t)(p + 1);
    return p == d->pstop ? d->pstart : p;
}

unsigned nm_dp8390_mcast_index(const uint8_t addr[6])
{
    /* nm_eth_crc32 is the reflected, complemented FCS; the chip's CRC
     * register (MSB first, not complemented) is its bit reverse, so its top
     * 6 bits are the low 6 bits of ~FCS, reversed. */
    uint32_t r = ~nm_eth_crc32(addr, 6) & 0x3f;
    unsigned idx = 0;
    for (int i = 0; i < 6; i++)
        idx |= ((r >> i) & 1) << (5 - i);
    return idx;
}

/* ---- remote DMA ---------------------------------------------------------- */

static void rdma_complete(nm_dp8390 *d)
{
    if (d->dma == DMA_SEND) d->bnry = d->rnpp; /* "Send Packet": BNRY advances */
    d->dma = DMA_IDLE;
    d->isr |= NM_DP_ISR_RDC;
    update_irq(d);
}

/* Advance the remote address; the remote DMA wraps at PSTOP like the ring
 * (datasheet "Send Packet Command"; drivers rely on it for ring reads). */
static void rdma_advance(nm_dp8390 *d, unsigned n)
{
    uint32_t stop = (uint32_t)d->pstop << 8, old = d->rsar, a = old + n;
    if (stop && old < stop && a >= stop) a = ((uint32_t)d->pstart << 8) + (a - stop);
    d->rsar = (uint16_t)a;
    d->rbcr = d->rbcr > n ? (uint16_t)(d->rbcr - n) : 0;
}

static bool rdma_active(nm_dp8390 *d, bool write)
{
    if (write ? d->dma == DMA_WRITE : (d->dma == DMA_READ || d->dma == DMA_SEND)) return true;
    nm_debug(DP8390, "%s: data port %s with no remote %s DMA running", d->name,
             write ? "write" : "read", write ? "write" : "read");
    return false;
}

uint32_t nm_dp8390_dma_read(nm_dp8390 *d, unsigned size)
{
    uint32_t v = 0;
    if (d->dcr & NM_DP_DCR_WTS) {
        for (unsigned i = 0; i < size; i += 2) {
            uint32_t w = 0xffff;
            if (rdma_active(d, false)) {
                uint8_t lo = mem_rd(d, d->rsar), hi = mem_rd(d, d->rsar + 1u);
                w = (d->dcr & NM_DP_DCR_BOS) ? (uint32_t)lo << 8 | hi : (uint32_t)hi << 8 | lo;
                rdma_advance(d, 2);
                if (!d->rbcr) rdma_complete(d);
            }
            v |= w << (8 * i);
        }
    } else {
        for (unsigned i = 0; i < size; i++) {
            uint32_t b = 0xff;
            if (rdma_active(d, false)) {
                b = mem_rd(d, d->rsar);
                rdma_advance(d, 1);
                if (!d->rbcr) rdma_complete(d);
            }
            v |= b << (8 * i);
        }
    }
    return size >= 4 ? v : v & ((1u << (8 * size)) - 1);
}

void nm_dp8390_dma_write(nm_dp8390 *d, uint32_t value, unsigned size)
{
    if (d->dcr & NM_DP_DCR_WTS) {
        for (unsigned i = 0; i < size; i += 2) {
            if (!rdma_active(d, true)) continue;
            uint8_t lo = (uint8_t)(value >> (8 * i)), hi = (uint8_t)(value >> (8 * i + 8));
            if (size == 1) hi = 0; /* a byte-wide host write still moves a word */
            if (d->dcr & NM_DP_DCR_BOS) {
                uint8_t t = lo;
                lo = hi;
                hi = t;
            }
            mem_wr(d, d->rsar, lo);
            mem_wr(d, d->rsar + 1u, hi);
            rdma_advance(d, 2);
            if (!d->rbcr) rdma_complete(d);
        }
    } else {
        for (unsigned i = 0; i < size; i++) {
            if (!rdma_active(d, true)) continue;
            mem_wr(d, d->rsar, (uint8_t)(value >> (8 * i)));
            rdma_advance(d, 1);
            if (!d->rbcr) rdma_complete(d);
        }
    }
}

static void rdma_command(nm_dp8390 *d, uint8_t rd)
{
    switch (rd) {
    case NM_DP_CR_RD_READ:
    case NM_DP_CR_RD_WRITE:
        d->dma = rd == NM_DP_CR_RD_READ ? DMA_READ : DMA_WRITE;
        /* A zero byte count completes at once (Linux's IRQ autoprobe relies
         * on this RDC). */
        if (!d->rbcr) rdma_complete(d);
        break;
    case NM_DP_CR_RD_SEND: {
        /* Load RSAR from BNRY and RBCR from the packet header there. */
        d->rsar = (uint16_t)(d->bnry << 8);
        d->rnpp = mem_rd(d, d->rsar + 1u);
        d->rbcr = (uint16_t)(mem_rd(d, d->rsar + 2u) | mem_rd(d, d->rsar + 3u) << 8);
        d->dma = DMA_SEND;
        if (!d->rbcr) rdma_complete(d);
        break;
    }
    case 0:
        nm_debug(DP8390, "%s: CR RD2..0 = 000 is not allowed; treated as abort", d->name);
        d->dma = DMA_IDLE;
        break;
    default: /* RD2: abort/complete remote DMA */ d->dma = DMA_IDLE; break;
    }
}

/* ---- receive ------------------------------------------------------------- */

static void rx_missed(nm_dp8390 *d, uint8_t status)
{
    d->st.missed++;
    count_tally(d, 2);
    d->rsr = status | NM_DP_RSR_MPA;
    d->isr |= NM_DP_ISR_RXE;
}

static void receive_frame(nm_dp8390 *d, const uint8_t *frame, size_t len, bool loopback)
{
    if (d->stopped || (!loopback && (d->tcr & NM_DP_TCR_LB))) {
        d->st.rx_ignored++; /* receiver off, or off the wire in loopback */
        return;
    }
    if (len < NM_ETH_MIN_FRAME) {
        d->st.rx_runts++;
        /* RCR.AR: accept runts; otherwise they are rejected silently. */
        if (!(d->rcr & NM_DP_RCR_AR) || len < 6) {
            d->st.rx_ignored++;
            return;
        }
    }
    /* Address recognition (datasheet "Address Matching"). */
    bool group = frame[0] & 1, ok;
    if (group) {
        static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        if (!memcmp(frame, bcast, 6)) {
            ok = d->rcr & NM_DP_RCR_AB;
        } else {
            unsigned idx = nm_dp8390_mcast_index(frame);
            ok = (d->rcr & NM_DP_RCR_AM) && (d->mar[idx >> 3] >> (idx & 7) & 1);
        }
    } else {
        ok = (d->rcr & NM_DP_RCR_PRO) || !memcmp(frame, d->par, 6);
    }
    if (!ok) {
        d->st.rx_ignored++;
        return;
    }
    uint8_t status = group ? NM_DP_RSR_PHY : 0;
    bool crc_ok = len >= 4;
    if (crc_ok) {
        const uint8_t *f = frame + len - 4;
        uint32_t fcs =
            (uint32_t)f[0] | (uint32_t)f[1] << 8 | (uint32_t)f[2] << 16 | (uint32_t)f[3] << 24;
        crc_ok = nm_eth_crc32(frame, len - 4) == fcs;
    }
    if (!crc_ok) {
        status |= NM_DP_RSR_CRC;
        d->st.crc_errors++;
        count_tally(d, 1);
        d->isr |= NM_DP_ISR_RXE;
        if (!(d->rcr & NM_DP_RCR_SEP)) {
            d->rsr = status;
            update_irq(d);
            return;
        }
    }
    if (d->rcr & NM_DP_RCR_MON) { /* monitor: checked and counted, not stored */
        rx_missed(d, status | NM_DP_RSR_DIS);
        update_irq(d);
        return;
    }
    if (d->rx_disabled) { /* after an overflow, until a software reset */
        rx_missed(d, status);
        update_irq(d);
        return;
    }
    if (d->pstart >= d->pstop)
        nm_dev_warn(DP8390, d, "%s: receive ring PSTART 0x%02x / PSTOP 0x%02x is empty or inverted",
                    d->name, d->pstart, d->pstop);
    size_t total = len + 4;
    if (total > 0xffff) total = 0xffff; /* the header's count is 16 bits */
    unsigned pages = (unsigned)((total + 255) / 256);
    /* Overflow: the local DMA would reach BNRY (datasheet "Buffer Ring
     * Overflow").  The frame is dropped and the ring left intact. */
    uint8_t p = d->curr;
    for (unsigned i = 0; i < pages; i++) {
        p = next_page(d, p);
        if (p == d->bnry) {
            d->isr |= NM_DP_ISR_OVW;
            d->rst_overflow = true;
            d->rx_disabled = true;
            d->st.overflows++;
            d->st.missed++;
            count_tally(d, 2);
            d->rsr = status | NM_DP_RSR_MPA;
            nm_debug(DP8390, "%s: receive ring overflow (CURR 0x%02x BNRY 0x%02x, %u pages)",
                     d->name, d->curr, d->bnry, pages);
            update_irq(d);
            return;
        }
    }
    uint8_t next = p;
    if (crc_ok) status |= NM_DP_RSR_PRX;
    /* The 4-byte header, then the frame, page by page. */
    uint8_t page = d->curr;
    unsigned off = 0;
    uint8_t hdr[4] = {status, next, (uint8_t)total, (uint8_t)(total >> 8)};
    for (size_t i = 0; i < total; i++) {
        mem_wr(d, (uint32_t)page << 8 | off, i < 4 ? hdr[i] : frame[i - 4]);
        if (++off == 256) {
            off = 0;
            page = next_page(d, page);
        }
    }
    d->clda = (uint16_t)((uint32_t)page << 8 | off);
    d->lnpp = next;
    d->curr = next;
    d->rsr = status;
    d->st.rx_frames++;
    d->st.rx_bytes += len;
    d->isr |= crc_ok ? NM_DP_ISR_PRX : NM_DP_ISR_RXE;
    update_irq(d);
}

static void endpoint_receive(void *opaque, const uint8_t *frame, size_t len)
{
    receive_frame(opaque, frame, len, false);
}

/* ---- transmit ------------------------------------------------------------ */

static void tx_done(void *opaque, uint64_t late)
{
    (void)late;
    nm_dp8390 *d = opaque;
    d->tx_busy = false;
    if (d->loop_frame) {
        receive_frame(d, d->loop_frame, d->loop_len, true);
        g_free(d->loop_frame);
        d->loop_frame = NULL;
    }
    d->tsr = NM_DP_TSR_PTX;
    d->ncr = 0;
    d->isr |= NM_DP_ISR_PTX;
    update_irq(d);
}

static void start_tx(nm_dp8390 *d)
{
    if (d->tx_busy) {
        nm_debug(DP8390, "%s: TXP while a transmission is in progress: ignored", d->name);
        return;
    }
    size_t len = d->tbcr;
    bool fcs = !(d->tcr & NM_DP_TCR_CRC);
    size_t total = len + (fcs ? 4 : 0);
    uint8_t *buf = g_malloc(total ? total : 1);
    /* The local DMA reads TBCR bytes from TPSR, wrapping in the 64 K local
     * address space (the transmit buffer does not wrap at PSTOP). */
    uint32_t base = (uint32_t)d->tpsr << 8;
    for (size_t i = 0; i < len; i++)
        buf[i] = mem_rd(d, base + i);
    d->clda = (uint16_t)(base + len);
    if (fcs) {
        uint32_t crc = nm_eth_crc32(buf, len);
        for (int i = 0; i < 4; i++)
            buf[len + i] = (uint8_t)(crc >> (8 * i));
    }
    /* The 8390 does not pad: a short TBCR goes on the wire as a runt. */
    if (total < NM_ETH_MIN_FRAME) d->st.tx_runts++;
    if (total > MAX_FRAME)
        nm_dev_warn(DP8390, d,
                    "%s: transmitting a %zu-byte frame (TBCR 0x%04x): longer than Ethernet allows",
                    d->name, total, d->tbcr);
    d->st.tx_frames++;
    d->st.tx_bytes += total;

    unsigned lb = (d->tcr & NM_DP_TCR_LB) >> 1;
    nm_clock *clk = &d->m->clock;
    uint64_t done;
    if (lb == 0 || lb == 3) {
        if (d->link)
            done = nm_net_send(&d->ep, buf, total);
        else
            done = nm_clock_now_ns(clk) + nm_net_wire_ns(WIRE_BPS, total);
    } else {
        done = nm_clock_now_ns(clk) + nm_net_wire_ns(WIRE_BPS, total);
    }
    if (lb != 0) { /* loopback: our own receiver gets it */
        d->loop_frame = buf;
        d->loop_len = total;
    } else {
        g_free(buf);
    }
    d->tx_busy = true;
    nm_timer_at_ns(clk, &d->tx_timer, done);
}

/* ---- registers ----------------------------------------------------------- */

static uint8_t read_cr(const nm_dp8390 *d)
{
    uint8_t v = d->cr & (NM_DP_CR_PS_MASK | NM_DP_CR_RD_MASK);
    v |= d->stopped ? NM_DP_CR_STP : NM_DP_CR_STA;
    if (d->tx_busy) v |= NM_DP_CR_TXP;
    return v;
}

static void write_cr(nm_dp8390 *d, uint8_t v)
{
    d->cr = v & (NM_DP_CR_PS_MASK | NM_DP_CR_RD_MASK);
    if (v & NM_DP_CR_STP) {
        /* Software reset: off line; a frame being sent still completes. */
        if (!d->stopped) nm_debug(DP8390, "%s: stopped", d->name);
        d->stopped = true;
        d->rx_disabled = false;
    } else if (v & NM_DP_CR_STA) {
        d->stopped = false;
    }
    if (v & NM_DP_CR_TXP) {
        if (d->stopped)
            nm_debug(DP8390, "%s: TXP while stopped: ignored", d->name);
        else
            start_tx(d);
    }
    rdma_command(d, v & NM_DP_CR_RD_MASK);
    update_irq(d);
}

uint8_t nm_dp8390_read(nm_dp8390 *d, unsigned reg)
{
    reg &= 0x0f;
    if (reg == 0) return read_cr(d);
    switch (d->cr >> 6) {
    case 0:
        switch (reg) {
        case 0x01: return (uint8_t)d->clda;
        case 0x02: return (uint8_t)(d->clda >> 8);
        case 0x03: return d->bnry;
        case 0x04: return d->tsr;
        case 0x05: return d->ncr;
        case 0x06: return 0; /* FIFO: not modelled */
        case 0x07: return d->isr | ((d->stopped || d->rst_overflow) ? NM_DP_ISR_RST : 0);
        case 0x08: return (uint8_t)d->rsar;
        case 0x09: return (uint8_t)(d->rsar >> 8);
        case 0x0c: return d->rsr;
        case 0x0d:
        case 0x0e:
        case 0x0f: { /* tally counters clear when read */
            uint8_t v = d->cntr[reg - 0x0d];
            d->cntr[reg - 0x0d] = 0;
            return v;
        }
        default: return 0xff; /* 0x0a, 0x0b reserved */
        }
    case 1:
        if (reg <= 6) return d->par[reg - 1];
        if (reg == 7) return d->curr;
        return d->mar[reg - 8];
    case 2: /* page 2: the page-0 write-only registers read back */
        switch (reg) {
        case 0x01: return d->pstart;
        case 0x02: return d->pstop;
        case 0x03: return d->rnpp;
        case 0x04: return d->tpsr;
        case 0x05: return d->lnpp;
        case 0x06: return (uint8_t)(d->addr_counter >> 8);
        case 0x07: return (uint8_t)d->addr_counter;
        case 0x0c: return d->rcr;
        case 0x0d: return d->tcr;
        case 0x0e: return d->dcr;
        case 0x0f: return d->imr;
        default: return 0xff;
        }
    default: nm_debug(DP8390, "%s: read of page 3 register 0x%x", d->name, reg); return 0xff;
    }
}

void nm_dp8390_write(nm_dp8390 *d, unsigned reg, uint8_t v)
{
    reg &= 0x0f;
    if (reg == 0) {
        write_cr(d, v);
        return;
    }
    switch (d->cr >> 6) {
    case 0:
        switch (reg) {
        case 0x01: d->pstart = v; break;
        case 0x02: d->pstop = v; break;
        case 0x03:
            /* Removing packets from the ring clears an overflow's RST. */
            if (v != d->bnry) d->rst_overflow = false;
            d->bnry = v;
            break;
        case 0x04: d->tpsr = v; break;
        case 0x05: d->tbcr = (uint16_t)((d->tbcr & 0xff00) | v); break;
        case 0x06: d->tbcr = (uint16_t)((d->tbcr & 0x00ff) | v << 8); break;
        case 0x07:
            d->isr &= (uint8_t) ~(v & 0x7f);
            break; /* write 1 to clear; RST is not writable */
        case 0x08: d->rsar = (uint16_t)((d->rsar & 0xff00) | v); break;
        case 0x09: d->rsar = (uint16_t)((d->rsar & 0x00ff) | v << 8); break;
        case 0x0a: d->rbcr = (uint16_t)((d->rbcr & 0xff00) | v); break;
        case 0x0b: d->rbcr = (uint16_t)((d->rbcr & 0x00ff) | v << 8); break;
        case 0x0c: d->rcr = v & 0x3f; break;
        case 0x0d: d->tcr = v & 0x1f; break;
        case 0x0e: d->dcr = v & 0x7f; break;
        case 0x0f: d->imr = v & 0x7f; break;
        }
        break;
    case 1:
        if (reg <= 6)
            d->par[reg - 1] = v;
        else if (reg == 7)
            d->curr = v;
        else
            d->mar[reg - 8] = v;
        break;
    case 2: /* for diagnostics only, says the datasheet */
        switch (reg) {
        case 0x01: d->clda = (uint16_t)((d->clda & 0xff00) | v); break;
        case 0x02: d->clda = (uint16_t)((d->clda & 0x00ff) | v << 8); break;
        case 0x03: d->rnpp = v; break;
        case 0x05: d->lnpp = v; break;
        case 0x06: d->addr_counter = (uint16_t)((d->addr_counter & 0x00ff) | v << 8); break;
        case 0x07: d->addr_counter = (uint16_t)((d->addr_counter & 0xff00) | v); break;
        default:
            nm_debug(DP8390, "%s: write 0x%02x to reserved page 2 register 0x%x", d->name, v, reg);
        }
        break;
    default:
        nm_debug(DP8390, "%s: write 0x%02x to page 3 register 0x%x ignored", d->name, v, reg);
        break;
    }
    update_irq(d);
}

/* ---- life cycle ---------------------------------------------------------- */

void nm_dp8390_reset(nm_dp8390 *d)
{
    /* RESET pin: CR = STP + abort DMA, ISR.RST, interrupts masked, internal
     * loopback (datasheet "Reset Conditions"). */
    nm_timer_cancel(&d->m->clock, &d->tx_timer);
    g_free(d->loop_frame);
    d->loop_frame = NULL;
    d->tx_busy = false;
    d->cr = NM_DP_CR_RD_ABORT;
    d->stopped = true;
    d->rst_overflow = false;
    d->rx_disabled = false;
    d->isr = 0;
    d->imr = 0;
    d->dcr = 0;
    d->tcr = 0x02;
    d->rcr = 0;
    d->tsr = d->rsr = d->ncr = 0;
    d->dma = DMA_IDLE;
    memset(d->cntr, 0, sizeof d->cntr);
    update_irq(d);
}

nm_dp8390 *nm_dp8390_new(nm_machine *m, const char *name, const nm_dp8390_board *board)
{
    nm_dp8390 *d = g_new0(nm_dp8390, 1);
    d->m = m;
    d->name = g_strdup(name);
    d->board = *board;
    d->ep.name = d->name;
    d->ep.opaque = d;
    d->ep.receive = endpoint_receive;
    nm_timer_init(&d->tx_timer, tx_done, d, "dp8390-tx");
    nm_dp8390_reset(d);
    return d;
}

bool nm_dp8390_attach(nm_dp8390 *d, const char *net, const char *capture, const char *origin,
                      GError **err)
{
    d->link = nm_net_attach(d->m, &d->ep, net, WIRE_BPS, capture, origin, err);
    return d->link != NULL;
}

nm_net_endpoint *nm_dp8390_endpoint(nm_dp8390 *d)
{
    return &d->ep;
}

void nm_dp8390_free(nm_dp8390 *d)
{
    if (!d) return;
    nm_timer_cancel(&d->m->clock, &d->tx_timer);
    g_free(d->loop_frame);
    g_free(d->name);
    g_free(d);
}

bool nm_dp8390_irq_level(const nm_dp8390 *d)
{
    return d->irq_level;
}

const nm_dp8390_stats *nm_dp8390_get_stats(const nm_dp8390 *d)
{
    return &d->st;
}

void nm_dp8390_report(const nm_dp8390 *d, nm_report *r)
{
    nm_report_u64(r, "tx_frames", d->st.tx_frames);
    nm_report_u64(r, "tx_bytes", d->st.tx_bytes);
    nm_report_u64(r, "rx_frames", d->st.rx_frames);
    nm_report_u64(r, "rx_bytes", d->st.rx_bytes);
    nm_report_u64(r, "rx_missed", d->st.missed);
    nm_report_u64(r, "rx_runts", d->st.rx_runts);
    nm_report_u64(r, "tx_runts", d->st.tx_runts);
    nm_report_u64(r, "rx_crc_errors", d->st.crc_errors);
    nm_report_u64(r, "rx_overflows", d->st.overflows);
    nm_report_u64(r, "rx_ignored", d->st.rx_ignored);
}

void nm_dp8390_snapshot(nm_dp8390 *d, nm_snap *s)
{
    nm_snap_push(s, "dp8390");
    nm_snap_u8(s, "cr", &d->cr);
    nm_snap_u8(s, "isr", &d->isr);
    nm_snap_u8(s, "imr", &d->imr);
    nm_snap_u8(s, "dcr", &d->dcr);
    nm_snap_u8(s, "tcr", &d->tcr);
    nm_snap_u8(s, "rcr", &d->rcr);
    nm_snap_u8(s, "tsr", &d->tsr);
    nm_snap_u8(s, "rsr", &d->rsr);
    nm_snap_u8(s, "ncr", &d->ncr);
    nm_snap_u8(s, "pstart", &d->pstart);
    nm_snap_u8(s, "pstop", &d->pstop);
    nm_snap_u8(s, "bnry", &d->bnry);
    nm_snap_u8(s, "curr", &d->curr);
    nm_snap_u8(s, "tpsr", &d->tpsr);
    nm_snap_u16(s, "tbcr", &d->tbcr);
    nm_snap_u16(s, "rsar", &d->rsar);
    nm_snap_u16(s, "rbcr", &d->rbcr);
    nm_snap_u16(s, "clda", &d->clda);
    nm_snap_bytes(s, "par", d->par, 6);
    nm_snap_bytes(s, "mar", d->mar, 8);
    nm_snap_bytes(s, "cntr", d->cntr, 3);
    nm_snap_u8(s, "rnpp", &d->rnpp);
    nm_snap_u8(s, "lnpp", &d->lnpp);
    nm_snap_u16(s, "addr_counter", &d->addr_counter);
    nm_snap_bool(s, "stopped", &d->stopped);
    nm_snap_bool(s, "rst_overflow", &d->rst_overflow);
    nm_snap_bool(s, "rx_disabled", &d->rx_disabled);
    int32_t dma = d->dma;
    nm_snap_i32(s, "dma", &dma);
    if (nm_snap_check(s, dma >= DMA_IDLE && dma <= DMA_SEND, "dma")) d->dma = dma;
    nm_snap_bool(s, "tx_busy", &d->tx_busy);
    nm_snap_timer(s, "tx_timer", &d->tx_timer);
    nm_snap_var(s, "loop_frame", &d->loop_frame, &d->loop_len, NM_NET_MAX_WIRE_FRAME);
    nm_snap_bool(s, "irq_level", &d->irq_level);
    nm_snap_u64(s, "st.tx_frames", &d->st.tx_frames);
    nm_snap_u64(s, "st.tx_bytes", &d->st.tx_bytes);
    nm_snap_u64(s, "st.rx_frames", &d->st.rx_frames);
    nm_snap_u64(s, "st.rx_bytes", &d->st.rx_bytes);
    nm_snap_u64(s, "st.missed", &d->st.missed);
    nm_snap_u64(s, "st.rx_runts", &d->st.rx_runts);
    nm_snap_u64(s, "st.tx_runts", &d->st.tx_runts);
    nm_snap_u64(s, "st.crc_errors", &d->st.crc_errors);
    nm_snap_u64(s, "st.overflows", &d->st.overflows);
    nm_snap_u64(s, "st.rx_ignored", &d->st.rx_ignored);
    nm_snap_pop(s);
}
