/* National Semiconductor 16550A UART (COM1: io=0x3f8, irq=4 by default).
 *
 * Transmitter timing: a 16-byte FIFO (1-byte THR with FIFOs off) feeding
 * the shift register.  A byte moves to the idle shift register at once and
 * takes one character time to leave: (start + data + parity + stop bits) x
 * 16 x divisor / 1.8432 MHz of virtual time, so the guest sees THRE and
 * TEMT as on the real chip at the baud rate it programmed.  `tx=fast`
 * makes every character take 1 us instead (for runs where the console is
 * noise, not the subject).  A byte reaches the host (and the text kept for
 * nm_uart_text) when the guest writes it, so nothing is lost when the run
 * stops with bytes still in the FIFO.
 *
 * The IRQ line is the chip's INTR gated by MCR OUT2, as PC serial cards
 * wire it; in loopback mode OUT2 is internal and the line stays low. */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/core/log.h"
#include "emu/core/machine.h"
#include "emu/core/snapshot.h"

#define FIFO_SIZE     16
#define UART_CLOCK_HZ 1843200u
#define FAST_CHAR_NS  1000u

/* Register offsets (NS16550A datasheet, Table II). */
enum { REG_DATA, REG_IER, REG_IIR_FCR, REG_LCR, REG_MCR, REG_LSR, REG_MSR, REG_SCR };

#define IER_RX_DATA      0x01
#define IER_THRE         0x02
#define IER_LINE_STATUS  0x04
#define IER_MODEM_STATUS 0x08

#define IIR_NO_INT        0x01
#define IIR_MODEM_STATUS  0x00
#define IIR_THRE          0x02
#define IIR_RX_DATA       0x04
#define IIR_LINE_STATUS   0x06
#define IIR_CHAR_TIMEOUT  0x0c
#define IIR_FIFOS_ENABLED 0xc0

#define FCR_ENABLE   0x01
#define FCR_CLEAR_RX 0x02
#define FCR_CLEAR_TX 0x04

#define LCR_DLAB 0x80

#define MCR_DTR  0x01
#define MCR_RTS  0x02
#define MCR_OUT1 0x04
#define MCR_OUT2 0x08
#define MCR_LOOP 0x10

#define LSR_DR     0x01
#define LSR_OE     0x02
#define LSR_PE     0x04
#define LSR_FE     0x08
#define LSR_BI     0x10
#define LSR_THRE   0x20
#define LSR_TEMT   0x40
#define LSR_ERRORS (LSR_OE | LSR_PE | LSR_FE | LSR_BI)

/* Modem inputs when not in loopback: a console cable with CTS, DSR and DCD
 * asserted and no ring. */
#define MSR_CTS            0x10
#define MSR_DSR            0x20
#define MSR_RI             0x40
#define MSR_DCD            0x80
#define MSR_LINES_EXTERNAL (MSR_CTS | MSR_DSR | MSR_DCD)

typedef struct byte_fifo {
    uint8_t data[FIFO_SIZE];
    unsigned head, count;
} byte_fifo;

typedef struct uart {
    nm_machine *machine;
    size_t line_start; /* where the line being printed starts in `text` */
    nm_io_claim *claim;
    unsigned irq;
    bool tx_fast;
    FILE *out;
    bool close_out;
    GString *text;

    uint8_t ier, lcr, mcr, scr, fcr_trigger_bits;
    uint16_t divisor;
    bool fifo_enabled;
    uint8_t lsr_errors; /* OE/PE/FE/BI, cleared by reading LSR */
    uint8_t rbr_last;   /* what RBR reads when the receiver is empty */
    uint8_t msr;        /* lines (high nibble) and deltas (low nibble) */
    byte_fifo rx, tx;
    bool tsr_busy;        /* a character is in the shift register */
    uint64_t tx_end_ns;   /* when it has left */
    uint8_t tsr_byte;     /* (looped back to the receiver in loopback mode) */
    bool thre_interrupt;  /* THRE interrupt pending (cleared by IIR read/THR write) */
    bool timeout_pending; /* character timeout interrupt (FIFO mode) */
    bool irq_level;
    nm_timer tx_timer, rx_timeout_timer;

    uint64_t bytes_out, bytes_in, overruns, tx_dropped;
} uart;

/* ---- FIFOs ------------------------------------------------------------ */

static bool fifo_push(byte_fifo *f, uint8_t b)
{
    if (f->count == FIFO_SIZE) return false;
    f->data[(f->head + f->count++) % FIFO_SIZE] = b;
    return true;
}

static uint8_t fifo_pop(byte_fifo *f)
{
    uint8_t b = f->data[f->head];
    f->head = (f->head + 1) % FIFO_SIZE;
    f->count--;
    return b;
}

static void fifo_clear(byte_fifo *f)
{
    f->head = f->count = 0;
}

static unsigned fifo_capacity(const uart *u)
{
    return u->fifo_enabled ? FIFO_SIZE : 1;
}

/* RCVR trigger levels 1, 4, 8, 14 (FCR bits 7-6). */
static unsigned rx_trigger_level(const uart *u)
{
    static const unsigned levels[] = {1, 4, 8, 14};
    return u->fifo_enabled ? levels[u->fcr_trigger_bits] : 1;
}

/* ---- timing ----------------------------------------------------------- */

/* One character on the line, in ns: 1 start bit, 5-8 data bits, optional
 * parity, 1 or 2 stop bits (1.5 with 5 data bits), each bit 16 clocks of
 * the baud generator (datasheet, "Programmable Baud Generator"). */
static uint64_t char_time_ns(const uart *u)
{
    if (u->tx_fast) return FAST_CHAR_NS;
    unsigned data_bits = 5 + (u->lcr & 3);
    unsigned half_bits = 2 * (1 + data_bits + ((u->lcr >> 3) & 1));
    if (u->lcr & 0x04)
        half_bits += data_bits == 5 ? 3 : 4;
    else
        half_bits += 2;
    uint64_t divisor = u->divisor ? u->divisor : 65536;
    uint64_t num = (uint64_t)half_bits * divisor * 16 * 1000000000ull;
    uint64_t den = 2ull * UART_CLOCK_HZ;
    return (num + den - 1) / den;
}

/* ---- interrupts ------------------------------------------------------- */

/* The highest-priority pending interrupt (datasheet Table IV), as IIR
 * bits 3-0. */
static uint8_t pending_interrupt(const uart *u)
{
    if ((u->ier & IER_LINE_STATUS) && u->lsr_errors) return IIR_LINE_STATUS;
    if (u->ier & IER_RX_DATA) {
        if (u->rx.count >= rx_trigger_level(u)) return IIR_RX_DATA;
        if (u->timeout_pending && u->rx.count) return IIR_CHAR_TIMEOUT;
    }
    if ((u->ier & IER_THRE) && u->thre_interrupt) return IIR_THRE;
    if ((u->ier & IER_MODEM_STATUS) && (u->msr & 0x0f)) return IIR_MODEM_STATUS;
    return IIR_NO_INT;
}

static void uart_update_irq(uart *u)
{
    bool level = pending_interrupt(u) != IIR_NO_INT && (u->mcr & MCR_OUT2) && !(u->mcr & MCR_LOOP);
    if (level == u->irq_level) return;
    u->irq_level = level;
    nm_irq_set(&u->machine->irq, u->irq, level);
}

/* ---- transmitter ------------------------------------------------------ */

static void rx_push(uart *u, uint8_t b);

/* Loads the shift register from the FIFO.  Back-to-back characters are
 * timed from the previous one's end (not from when its event ran), so the
 * line rate is exact. */
static void tx_start_next(uart *u, bool back_to_back)
{
    if (u->tsr_busy || !u->tx.count) return;
    u->tsr_byte = fifo_pop(&u->tx);
    u->tsr_busy = true;
    if (!u->tx.count) u->thre_interrupt = true; /* THR/FIFO just emptied */
    uint64_t start = back_to_back ? u->tx_end_ns : nm_clock_now_ns(&u->machine->clock);
    uint64_t char_ns = char_time_ns(u);
    u->tx_end_ns = start + char_ns;
    /* Serial output the measurement window reports (a console line in a
     * window is a measurement error worth a warning, emu/machine.h). */
    u->machine->console_tx_bytes++;
    u->machine->console_tx_ns += char_ns;
    nm_timer_at_ns(&u->machine->clock, &u->tx_timer, u->tx_end_ns);
}

static void tx_done(void *opaque, uint64_t late_cycles)
{
    (void)late_cycles;
    uart *u = opaque;
    u->tsr_busy = false;
    if (u->mcr & MCR_LOOP) rx_push(u, u->tsr_byte);
    tx_start_next(u, true);
    uart_update_irq(u);
}

/* What Linux's panic() prints first (kernel/panic.c, 6.1).  A panicked
 * kernel never ends the run itself (it spins or waits for a reboot that the
 * command line may never ask for), so its console line ends it. */
static const char PANIC_TEXT[] = "Kernel panic - not syncing";

static void check_panic_line(uart *u)
{
    const char *line = u->text->str + u->line_start;
    const char *at = strstr(line, PANIC_TEXT);
    if (!at) return;
    g_autofree char *detail = g_strndup(at, strcspn(at, "\r\n"));
    nm_machine_request_stop(u->machine, NM_STOP_PANIC, 0, detail);
}

static void host_output(uart *u, uint8_t b)
{
    g_string_append_c(u->text, (char)b);
    u->bytes_out++;
    if (b == '\n') {
        check_panic_line(u);
        u->line_start = u->text->len;
    }
    if (u->out) {
        fputc(b, u->out);
        if (b == '\n') fflush(u->out);
    }
}

static void thr_write(uart *u, uint8_t b)
{
    u->thre_interrupt = false;
    if (u->tx.count >= fifo_capacity(u)) {
        /* THR full: the chip overwrites; we drop the byte and count it. */
        u->tx_dropped++;
        nm_debug(UART, "transmit FIFO full, byte 0x%02x dropped", b);
    } else {
        fifo_push(&u->tx, b);
        if (!(u->mcr & MCR_LOOP)) host_output(u, b);
    }
    tx_start_next(u, false);
    uart_update_irq(u);
}

/* ---- receiver --------------------------------------------------------- */

static void rx_restart_timeout(uart *u)
{
    /* Character timeout: data below the trigger level and no activity for
     * four character times (datasheet, "FIFO Interrupt Mode Operation"). */
    u->timeout_pending = false;
    if (u->fifo_enabled && u->rx.count)
        nm_timer_after_ns(&u->machine->clock, &u->rx_timeout_timer, 4 * char_time_ns(u));
    else
        nm_timer_cancel(&u->machine->clock, &u->rx_timeout_timer);
}

static void rx_timeout(void *opaque, uint64_t late_cycles)
{
    (void)late_cycles;
    uart *u = opaque;
    if (u->rx.count) u->timeout_pending = true;
    uart_update_irq(u);
}

static void rx_push(uart *u, uint8_t b)
{
    if (u->rx.count >= fifo_capacity(u)) {
        /* Overrun: the FIFO keeps its bytes and the new one is lost (with
         * FIFOs off the new byte would replace RBR; either way one byte is
         * lost and OE is set). */
        if (!u->fifo_enabled) u->rx.data[u->rx.head] = b;
        u->lsr_errors |= LSR_OE;
        u->overruns++;
    } else {
        fifo_push(&u->rx, b);
        u->bytes_in++;
    }
    rx_restart_timeout(u);
}

size_t nm_uart_receive(void *dev, const uint8_t *bytes, size_t len)
{
    uart *u = dev;
    size_t accepted = 0;
    for (size_t i = 0; i < len; i++) {
        if (u->rx.count < fifo_capacity(u)) accepted++;
        rx_push(u, bytes[i]);
    }
    uart_update_irq(u);
    return accepted;
}

/* ---- registers -------------------------------------------------------- */

static uint8_t msr_lines(const uart *u)
{
    if (!(u->mcr & MCR_LOOP)) return MSR_LINES_EXTERNAL;
    /* Loopback: RTS->CTS, DTR->DSR, OUT1->RI, OUT2->DCD. */
    uint8_t v = 0;
    if (u->mcr & MCR_RTS) v |= MSR_CTS;
    if (u->mcr & MCR_DTR) v |= MSR_DSR;
    if (u->mcr & MCR_OUT1) v |= MSR_RI;
    if (u->mcr & MCR_OUT2) v |= MSR_DCD;
    return v;
}

/* New modem input levels: set the delta bits (TERI only on RI's trailing
 * edge). */
static void msr_set_lines(uart *u, uint8_t lines)
{
    uint8_t old = u->msr & 0xf0, changed = old ^ lines;
    uint8_t deltas = u->msr & 0x0f;
    if (changed & MSR_CTS) deltas |= 0x01;
    if (changed & MSR_DSR) deltas |= 0x02;
    if ((changed & MSR_RI) && !(lines & MSR_RI)) deltas |= 0x04;
    if (changed & MSR_DCD) deltas |= 0x08;
    u->msr = lines | deltas;
}

static uint8_t lsr_value(const uart *u)
{
    uint8_t v = u->lsr_errors;
    if (u->rx.count) v |= LSR_DR;
    if (!u->tx.count) v |= LSR_THRE;
    if (!u->tx.count && !u->tsr_busy) v |= LSR_TEMT;
    return v;
}

static uint32_t uart_read(void *opaque, uint32_t offset, unsigned size)
{
    (void)size;
    uart *u = opaque;
    uint8_t v = 0;
    switch (offset) {
    case REG_DATA:
        if (u->lcr & LCR_DLAB) return u->divisor & 0xff;
        if (u->rx.count) {
            v = u->rbr_last = fifo_pop(&u->rx);
            rx_restart_timeout(u);
        } else {
            v = u->rbr_last; /* the last byte received, again */
        }
        break;
    case REG_IER:
        if (u->lcr & LCR_DLAB) return u->divisor >> 8;
        return u->ier;
    case REG_IIR_FCR:
        v = pending_interrupt(u);
        /* Reading IIR when THRE is the source clears it (Table IV). */
        if (v == IIR_THRE) u->thre_interrupt = false;
        if (u->fifo_enabled) v |= IIR_FIFOS_ENABLED;
        break;
    case REG_LCR: return u->lcr;
    case REG_MCR: return u->mcr;
    case REG_LSR:
        v = lsr_value(u);
        u->lsr_errors = 0;
        break;
    case REG_MSR:
        v = u->msr;
        u->msr &= 0xf0;
        break;
    default: return u->scr;
    }
    uart_update_irq(u);
    return v;
}

static void fcr_write(uart *u, uint8_t v)
{
    bool enable = v & FCR_ENABLE;
    bool had_tx = u->tx.count;
    if (enable != u->fifo_enabled) {
        /* Changing FCR0 clears both FIFOs. */
        fifo_clear(&u->rx);
        fifo_clear(&u->tx);
        u->fifo_enabled = enable;
    }
    if (!enable) {
        if (had_tx && !u->tx.count) u->thre_interrupt = true;
        return; /* the other bits need FCR0 set */
    }
    if (v & FCR_CLEAR_RX) fifo_clear(&u->rx);
    if (v & FCR_CLEAR_TX) fifo_clear(&u->tx);
    u->fcr_trigger_bits = v >> 6;
    if (v & 0x08) nm_debug(UART, "FCR DMA mode 1 selected (no DMA here)");
    /* THR emptied by the clear: THRE interrupt as for any emptying. */
    if (had_tx && !u->tx.count) u->thre_interrupt = true;
}

static void uart_write(void *opaque, uint32_t offset, uint32_t value, unsigned size)
{
    (void)size;
    uart *u = opaque;
    uint8_t v = (uint8_t)value;
    switch (offset) {
    case REG_DATA:
        if (u->lcr & LCR_DLAB)
            u->divisor = (u->divisor & 0xff00) | v;
        else
            thr_write(u, v);
        break;
    case REG_IER:
        if (u->lcr & LCR_DLAB) {
            u->divisor = (uint16_t)((u->divisor & 0x00ff) | v << 8);
        } else {
            uint8_t changed = (u->ier ^ v) & 0x0f;
            u->ier = v & 0x0f;
            /* Enabling ETBEI with the THR empty raises the THRE interrupt
             * (the 8250 driver's "THRE test" depends on it). */
            if (changed & IER_THRE) u->thre_interrupt = (u->ier & IER_THRE) && !u->tx.count;
        }
        break;
    case REG_IIR_FCR:
        fcr_write(u, v);
        rx_restart_timeout(u);
        break;
    case REG_LCR: u->lcr = v; break;
    case REG_MCR:
        u->mcr = v & 0x1f;
        msr_set_lines(u, msr_lines(u));
        break;
    case REG_LSR: nm_debug(UART, "write 0x%02x to LSR ignored", v); break;
    case REG_MSR: nm_debug(UART, "write 0x%02x to MSR ignored", v); break;
    default: u->scr = v; break;
    }
    uart_update_irq(u);
}

/* LSR, read again at once, reads the same and changes nothing (its error
 * bits, which a read clears, are clear): its other bits move only with the
 * transmitter's and receiver's events and the guest's writes. */
static bool uart_repeatable(void *opaque, uint32_t offset, unsigned size)
{
    const uart *u = opaque;
    return offset == REG_LSR && size == 1 && u->lsr_errors == 0;
}

static const nm_io_ops uart_ops = {uart_read, uart_write, uart_repeatable};

/* Master reset (datasheet Table III): IER, FCR, LCR, MCR cleared, LSR =
 * THRE|TEMT, MSR deltas cleared.  The divisor and scratch are not reset;
 * they start as a BIOS leaves COM1 (115200 baud). */
static void uart_reset(void *opaque)
{
    uart *u = opaque;
    nm_clock *clock = &u->machine->clock;
    nm_timer_cancel(clock, &u->tx_timer);
    nm_timer_cancel(clock, &u->rx_timeout_timer);
    u->ier = u->lcr = u->mcr = u->fcr_trigger_bits = 0;
    u->fifo_enabled = false;
    u->lsr_errors = 0;
    fifo_clear(&u->rx);
    fifo_clear(&u->tx);
    u->tsr_busy = false;
    u->thre_interrupt = false;
    u->timeout_pending = false;
    u->msr = MSR_LINES_EXTERNAL;
    uart_update_irq(u);
}

static void uart_destroy(void *opaque);

static void *uart_create(nm_machine *m, const nm_devcfg *cfg, GError **err)
{
    uint32_t port = 0x3f8, irq = 4;
    if (cfg && !nm_devcfg_u32(cfg, "io", 0x3f8, 0, 0xfff8, &port, err)) return NULL;
    if (cfg && !nm_devcfg_u32(cfg, "irq", 4, 0, 15, &irq, err)) return NULL;
    const char *file = cfg ? nm_devcfg_get(cfg, "file") : NULL;
    const char *tx = cfg ? nm_devcfg_get(cfg, "tx") : NULL;
    const char *origin = cfg ? cfg->origin : "uart";
    if (tx && g_strcmp0(tx, "baud") && g_strcmp0(tx, "fast")) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: tx: bad value '%s' (accepted: baud, fast)", origin, tx);
        return NULL;
    }
    g_autofree char *who = g_strdup_printf("uart@0x%x (COM%s)", port,
                                           port == 0x3f8   ? "1"
                                           : port == 0x2f8 ? "2"
                                                           : "?");
    if (!nm_irq_claim(&m->irq, irq, origin, who, err)) return NULL;
    uart *u = g_new0(uart, 1);
    u->machine = m;
    u->irq = irq;
    u->tx_fast = !g_strcmp0(tx, "fast");
    u->divisor = 1;
    u->text = g_string_new(NULL);
    nm_timer_init(&u->tx_timer, tx_done, u, "uart-tx");
    nm_timer_init(&u->rx_timeout_timer, rx_timeout, u, "uart-rx-timeout");
    if (!file || !g_strcmp0(file, "stdout")) {
        u->out = stdout;
    } else if (!g_strcmp0(file, "none")) {
        u->out = NULL;
    } else {
        u->out = fopen(file, "w");
        if (!u->out) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE,
                        "%s: file: cannot write '%s': %s", origin, file, g_strerror(errno));
            uart_destroy(u);
            return NULL;
        }
        u->close_out = true;
    }
    u->claim = nm_ioport_claim(m->io, (uint16_t)port, 8, &uart_ops, u, "uart", NULL);
    if (!u->claim) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: io: ports 0x%x-0x%x overlap ports already taken", origin, port, port + 7);
        uart_destroy(u);
        return NULL;
    }
    uart_reset(u);
    return u;
}

static void uart_destroy(void *opaque)
{
    uart *u = opaque;
    nm_clock *clock = &u->machine->clock;
    nm_timer_cancel(clock, &u->tx_timer);
    nm_timer_cancel(clock, &u->rx_timeout_timer);
    if (u->claim) {
        if (u->irq_level) nm_irq_lower(&u->machine->irq, u->irq);
        nm_ioport_release(u->machine->io, u->claim);
    }
    if (u->out) fflush(u->out);
    if (u->close_out) fclose(u->out);
    g_string_free(u->text, TRUE);
    g_free(u);
}

static void uart_report(void *opaque, nm_report *r)
{
    uart *u = opaque;
    nm_report_u64(r, "bytes_out", u->bytes_out);
    nm_report_u64(r, "bytes_in", u->bytes_in);
    nm_report_u64(r, "rx_overruns", u->overruns);
    nm_report_u64(r, "tx_dropped", u->tx_dropped);
}

const char *nm_uart_text(void *dev, size_t *len)
{
    uart *u = dev;
    if (len) *len = u->text->len;
    return u->text->str;
}

static void fifo_snapshot(nm_snap *s, const char *name, byte_fifo *f)
{
    nm_snap_push(s, "%s", name);
    nm_snap_bytes(s, "data", f->data, FIFO_SIZE);
    nm_snap_uint(s, "head", &f->head);
    nm_snap_uint(s, "count", &f->count);
    nm_snap_check(s, f->head < FIFO_SIZE && f->count <= FIFO_SIZE, "head");
    nm_snap_pop(s);
}

static void uart_replay(void *opaque)
{
    uart *u = opaque;
    fwrite(u->text->str, 1, u->text->len, u->out);
    fflush(u->out);
}

/* The console text so far is part of the state: a restored run writes it
 * out again, so its console is the uninterrupted run's, byte for byte
 * (docs/snapshots.md). */
static void uart_snapshot(void *opaque, nm_snap *s)
{
    uart *u = opaque;
    nm_snap_gstring(s, "text", u->text);
    nm_snap_size(s, "line_start", &u->line_start);
    nm_snap_check(s, u->line_start <= u->text->len, "line_start");
    nm_snap_u8(s, "ier", &u->ier);
    nm_snap_u8(s, "lcr", &u->lcr);
    nm_snap_u8(s, "mcr", &u->mcr);
    nm_snap_u8(s, "scr", &u->scr);
    nm_snap_u8(s, "fcr_trigger_bits", &u->fcr_trigger_bits);
    nm_snap_u16(s, "divisor", &u->divisor);
    nm_snap_bool(s, "fifo_enabled", &u->fifo_enabled);
    nm_snap_u8(s, "lsr_errors", &u->lsr_errors);
    nm_snap_u8(s, "rbr_last", &u->rbr_last);
    nm_snap_u8(s, "msr", &u->msr);
    fifo_snapshot(s, "rx", &u->rx);
    fifo_snapshot(s, "tx", &u->tx);
    nm_snap_bool(s, "tsr_busy", &u->tsr_busy);
    nm_snap_u64(s, "tx_end_ns", &u->tx_end_ns);
    nm_snap_u8(s, "tsr_byte", &u->tsr_byte);
    nm_snap_bool(s, "thre_interrupt", &u->thre_interrupt);
    nm_snap_bool(s, "timeout_pending", &u->timeout_pending);
    nm_snap_bool(s, "irq_level", &u->irq_level);
    nm_snap_timer(s, "tx_timer", &u->tx_timer);
    nm_snap_timer(s, "rx_timeout_timer", &u->rx_timeout_timer);
    nm_snap_u64(s, "bytes_out", &u->bytes_out);
    nm_snap_u64(s, "bytes_in", &u->bytes_in);
    nm_snap_u64(s, "overruns", &u->overruns);
    nm_snap_u64(s, "tx_dropped", &u->tx_dropped);
    if (nm_snap_saving(s)) {
        if (u->out) fflush(u->out);
    } else if (u->out && u->text->len) {
        nm_snap_after_load(s, uart_replay, u);
    }
}

static const char *const uart_keys[] = {"io", "irq", "file", "tx", NULL};

const nm_device_class nm_uart_class = {
    .name = "uart",
    .help = "16550A serial port (io=0x3f8, irq=4, file=stdout|none|PATH, tx=baud|fast)",
    .keys = uart_keys,
    .create = uart_create,
    .reset = uart_reset,
    .destroy = uart_destroy,
    .report = uart_report,
    .snapshot = uart_snapshot,
    .snapshot_version = 1,
};
