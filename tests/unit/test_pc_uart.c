/* The 16550A, as the Linux 8250 driver sees it: probe sequences, transmit
 * at the programmed baud rate on virtual time, FIFOs, IIR priorities, the
 * THRE interrupt rules, receive trigger and timeout, loopback, OUT2 gating. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/machine.h"

/* outb/inb here take a UART register, not a port. */
#define PC_FIXTURE_OWN_PORT_IO
#include "pc_fixture.h"

#define COM1 0x3f8
#define RBR  0
#define IER  1
#define IIR  2
#define FCR  2
#define LCR  3
#define MCR  4
#define LSR  5
#define MSR  6
#define SCR  7

/* A bare PC with one 16550A at COM1, its output nowhere; f->dev is the UART. */
static void setup(pc_fixture *f, gconstpointer data)
{
    pc_setup(f, data);
    f->dev = pc_add_device(f, &nm_uart_class, "uart,file=none");
}

static void outb(pc_fixture *f, unsigned reg, uint8_t v)
{
    nm_io_write(f->m->io, COM1 + reg, v, 1);
}
static uint8_t inb(pc_fixture *f, unsigned reg)
{
    return (uint8_t)nm_io_read(f->m->io, COM1 + reg, 1);
}
static bool irq4(pc_fixture *f)
{
    return nm_irq_level(&f->m->irq, 4);
}

static void advance_ns(pc_fixture *f, uint64_t ns)
{
    f->m->clock.cycles = nm_clock_cycles_from_ns(&f->m->clock, nm_clock_now_ns(&f->m->clock) + ns);
    nm_clock_run_due(&f->m->clock);
}

/* 8N1 at divisor d: 10 bits x 16 x d / 1.8432 MHz. */
static uint64_t char_ns(unsigned divisor)
{
    return (10ull * 16 * divisor * 1000000000 + 1843199) / 1843200;
}

static void set_baud_divisor(pc_fixture *f, unsigned divisor)
{
    outb(f, LCR, 0x83);
    outb(f, RBR, (uint8_t)divisor);
    outb(f, IER, (uint8_t)(divisor >> 8));
    outb(f, LCR, 0x03);
}

static void test_reset_state_and_probe(pc_fixture *f, gconstpointer data)
{
    (void)data;
    g_assert_cmpuint(inb(f, LSR), ==, 0x60);
    g_assert_cmpuint(inb(f, IIR), ==, 0x01);
    /* autoconfig(): IER holds only its low nibble. */
    outb(f, IER, 0x00);
    g_assert_cmpuint(inb(f, IER) & 0x0f, ==, 0);
    outb(f, IER, 0x0f);
    g_assert_cmpuint(inb(f, IER), ==, 0x0f);
    outb(f, IER, 0xff);
    g_assert_cmpuint(inb(f, IER), ==, 0x0f); /* no UUE bit: not an XScale */
    outb(f, IER, 0x00);
    outb(f, SCR, 0xa5);
    g_assert_cmpuint(inb(f, SCR), ==, 0xa5);
    /* Loopback check: MCR = LOOP|OUT2|RTS gives MSR high nibble 0x90. */
    outb(f, MCR, 0x1a);
    g_assert_cmpuint(inb(f, MSR) & 0xf0, ==, 0x90);
    outb(f, MCR, 0x00);
    /* FIFO detection: IIR bits 7-6 = 11 (16550A), bit 5 clear (not 750). */
    outb(f, FCR, 0xe7);
    g_assert_cmpuint(inb(f, IIR) >> 5, ==, 6);
    outb(f, LCR, 0xbf);
    g_assert_cmpuint(inb(f, IIR), !=, 0); /* no EFR behind IIR */
    outb(f, LCR, 0x03);
    outb(f, FCR, 0x00);
    g_assert_cmpuint(inb(f, IIR) & 0xc0, ==, 0);
    /* Divisor latch reads back. */
    set_baud_divisor(f, 0x1234);
    outb(f, LCR, 0x83);
    g_assert_cmpuint(inb(f, RBR), ==, 0x34);
    g_assert_cmpuint(inb(f, IER), ==, 0x12);
    outb(f, LCR, 0x03);
}

static void test_transmit_timing(pc_fixture *f, gconstpointer data)
{
    (void)data;
    set_baud_divisor(f, 12); /* 9600 baud */
    outb(f, RBR, 'h');
    /* The byte went to the shift register: THR empty, transmitter busy. */
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x20);
    size_t len;
    g_assert_cmpstr(nm_uart_text(f->dev, &len), ==, "h");
    advance_ns(f, char_ns(12) - 1000);
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x20);
    advance_ns(f, 1000);
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x60);
    g_assert_cmpuint(char_ns(12), ==, 1041667);
    /* Non-FIFO mode: a second byte waits in THR behind the first. */
    outb(f, RBR, 'i');
    outb(f, RBR, '!');
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x00);
    outb(f, RBR, '?'); /* THR full: lost */
    advance_ns(f, char_ns(12));
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x20);
    advance_ns(f, char_ns(12));
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x60);
    g_assert_cmpstr(nm_uart_text(f->dev, NULL), ==, "hi!");
}

static void test_fifo_fill_and_drain(pc_fixture *f, gconstpointer data)
{
    (void)data;
    set_baud_divisor(f, 1);
    outb(f, FCR, 0x07);
    for (unsigned i = 0; i < 17; i++)
        outb(f, RBR, (uint8_t)('a' + i));
    /* One shifting, sixteen queued. */
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x00);
    outb(f, RBR, 'X'); /* FIFO full: lost */
    g_assert_cmpstr(nm_uart_text(f->dev, NULL), ==, "abcdefghijklmnopq");
    advance_ns(f, 16 * char_ns(1));
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x20); /* the last one shifting */
    advance_ns(f, char_ns(1));
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x60);
    /* Clearing the transmit FIFO empties THR at once. */
    for (unsigned i = 0; i < 5; i++)
        outb(f, RBR, 'z');
    outb(f, FCR, 0x05);
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x20);

    /* Receive FIFO: 16 bytes, then overrun. */
    uint8_t bytes[20];
    for (unsigned i = 0; i < 20; i++)
        bytes[i] = (uint8_t)i;
    g_assert_cmpuint(nm_uart_receive(f->dev, bytes, 20), ==, 16);
    uint8_t lsr = inb(f, LSR);
    g_assert_cmpuint(lsr & 0x03, ==, 0x03);      /* DR, OE */
    g_assert_cmpuint(inb(f, LSR) & 0x02, ==, 0); /* OE cleared by reading */
    for (unsigned i = 0; i < 16; i++)
        g_assert_cmpuint(inb(f, RBR), ==, i);
    g_assert_cmpuint(inb(f, LSR) & 0x01, ==, 0);
}

static void test_thre_interrupt(pc_fixture *f, gconstpointer data)
{
    (void)data;
    set_baud_divisor(f, 1);
    outb(f, FCR, 0x07);
    outb(f, MCR, 0x0b); /* DTR, RTS, OUT2 */
    g_assert_false(irq4(f));
    outb(f, IER, 0x02);
    g_assert_true(irq4(f));
    g_assert_cmpuint(inb(f, IIR), ==, 0xc2);
    /* Reading IIR with THRE the source cleared it. */
    g_assert_false(irq4(f));
    g_assert_cmpuint(inb(f, IIR), ==, 0xc1);
    /* serial8250_do_startup's THRE test: IER 0 then THRI again re-asserts. */
    outb(f, IER, 0x00);
    outb(f, IER, 0x02);
    g_assert_cmpuint(inb(f, IIR), ==, 0xc2);
    outb(f, IER, 0x00);
    /* Transmitting: THRE interrupt when the FIFO empties, not before. */
    outb(f, IER, 0x02);
    g_assert_true(irq4(f));
    for (unsigned i = 0; i < 4; i++)
        outb(f, RBR, 'x');
    g_assert_false(irq4(f)); /* writing THR cleared it; 3 still queued */
    advance_ns(f, 2 * char_ns(1));
    g_assert_false(irq4(f));
    advance_ns(f, char_ns(1)); /* the last byte moves to the shift register */
    g_assert_true(irq4(f));
    g_assert_cmpuint(inb(f, LSR) & 0x60, ==, 0x20);
    /* OUT2 gates the line on a PC. */
    outb(f, MCR, 0x03);
    g_assert_false(irq4(f));
    outb(f, MCR, 0x0b);
    g_assert_true(irq4(f));
    outb(f, IER, 0x00);
    g_assert_false(irq4(f));
}

static void test_iir_priorities_and_rx(pc_fixture *f, gconstpointer data)
{
    (void)data;
    set_baud_divisor(f, 1);
    outb(f, FCR, 0x47); /* trigger level 4 */
    outb(f, MCR, 0x08);
    outb(f, IER, 0x0f);
    g_assert_cmpuint(inb(f, IIR), ==, 0xc2); /* THRE */
    uint8_t three[3] = {1, 2, 3};
    nm_uart_receive(f->dev, three, 3);
    /* Below the trigger level: no RDA yet, THRE already cleared. */
    g_assert_cmpuint(inb(f, IIR), ==, 0xc1);
    g_assert_false(irq4(f));
    /* Four character times of silence: character timeout. */
    advance_ns(f, 4 * char_ns(1) - 100);
    g_assert_cmpuint(inb(f, IIR), ==, 0xc1);
    advance_ns(f, 100);
    g_assert_cmpuint(inb(f, IIR), ==, 0xcc);
    g_assert_true(irq4(f));
    g_assert_cmpuint(inb(f, RBR), ==, 1); /* reading clears the timeout */
    g_assert_cmpuint(inb(f, IIR), ==, 0xc1);
    uint8_t more[2] = {4, 5};
    nm_uart_receive(f->dev, more, 2);
    g_assert_cmpuint(inb(f, IIR), ==, 0xc4); /* 4 bytes: trigger reached */
    /* Line status outranks received data. */
    uint8_t lots[16] = {0};
    nm_uart_receive(f->dev, lots, 16);
    g_assert_cmpuint(inb(f, IIR), ==, 0xc6);
    g_assert_cmpuint(inb(f, LSR) & 0x03, ==, 0x03);
    g_assert_cmpuint(inb(f, IIR), ==, 0xc4);
    outb(f, FCR, 0x43); /* clear RX FIFO */
    g_assert_cmpuint(inb(f, LSR) & 0x01, ==, 0);
    /* Modem status: lowest priority, cleared by reading MSR. */
    outb(f, MCR, 0x18); /* loopback: the line is now held low */
    g_assert_false(irq4(f));
    g_assert_cmpuint(inb(f, IIR), ==, 0xc0);
    g_assert_cmpuint(inb(f, MSR) & 0x0f, !=, 0);
    g_assert_cmpuint(inb(f, IIR), ==, 0xc1);
}

static void test_loopback(pc_fixture *f, gconstpointer data)
{
    (void)data;
    set_baud_divisor(f, 3);
    outb(f, FCR, 0x07);
    outb(f, MCR, 0x10);
    outb(f, RBR, 0x42);
    outb(f, RBR, 0x43);
    g_assert_cmpuint(inb(f, LSR) & 0x01, ==, 0);
    advance_ns(f, char_ns(3));
    g_assert_cmpuint(inb(f, LSR) & 0x01, ==, 0x01);
    g_assert_cmpuint(inb(f, RBR), ==, 0x42);
    advance_ns(f, char_ns(3));
    g_assert_cmpuint(inb(f, RBR), ==, 0x43);
    /* Nothing went to the host. */
    size_t len;
    nm_uart_text(f->dev, &len);
    g_assert_cmpuint(len, ==, 0);
    /* Modem lines loop: DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD. */
    outb(f, MCR, 0x1f);
    g_assert_cmpuint(inb(f, MSR) & 0xf0, ==, 0xf0);
    outb(f, MCR, 0x00);
    g_assert_cmpuint(inb(f, MSR) & 0xf0, ==, 0xb0); /* cable: CTS, DSR, DCD */
}

static void test_output_file_and_keys(void)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    nm_machine *m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    g_autofree char *dir = g_dir_make_tmp("nicemu-uart-XXXXXX", &err);
    g_assert_no_error(err);
    g_autofree char *path = g_build_filename(dir, "com2.txt", NULL);
    g_autofree char *spec = g_strdup_printf("uart,io=0x2f8,irq=3,file=%s,tx=fast", path);
    nm_devcfg *d = nm_devcfg_parse("test", spec, &err);
    g_assert_no_error(err);
    void *com2 = nm_machine_add_device(m, &nm_uart_class, d, &err);
    g_assert_no_error(err);
    nm_devcfg_free(d);
    /* A second UART coexists at its own port. */
    d = nm_devcfg_parse("test", "uart,file=none", &err);
    void *com1 = nm_machine_add_device(m, &nm_uart_class, d, &err);
    g_assert_no_error(err);
    nm_devcfg_free(d);
    nm_io_write(m->io, 0x2f8 + FCR, 0x07, 1);
    for (const char *s = "ok\n"; *s; s++)
        nm_io_write(m->io, 0x2f8, (uint8_t)*s, 1);
    nm_io_write(m->io, 0x3f8, 'x', 1);
    g_assert_cmpstr(nm_uart_text(com2, NULL), ==, "ok\n");
    g_assert_cmpstr(nm_uart_text(com1, NULL), ==, "x");
    /* tx=fast: a character takes 1 us whatever the divisor. */
    m->clock.cycles = nm_clock_cycles_from_ns(&m->clock, 3000);
    nm_clock_run_due(&m->clock);
    g_assert_cmpuint(nm_io_read(m->io, 0x2f8 + LSR, 1) & 0x40, ==, 0x40);
    g_assert_cmpuint(nm_io_read(m->io, 0x3f8 + LSR, 1) & 0x40, ==, 0x00);
    nm_machine_free(m);
    g_autofree char *contents = NULL;
    g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
    g_assert_cmpstr(contents, ==, "ok\n");
    g_unlink(path);
    g_rmdir(dir);
    /* Bad values get one clear error. */
    m = nm_machine_new(cfg, &err);
    d = nm_devcfg_parse("test", "uart,tx=slow", &err);
    g_assert_null(nm_machine_add_device(m, &nm_uart_class, d, &err));
    g_assert_nonnull(strstr(err->message, "tx"));
    g_clear_error(&err);
    nm_devcfg_free(d);
    nm_machine_free(m);
    nm_config_free(cfg);
}

static void test_hostile_writes(pc_fixture *f, gconstpointer data)
{
    (void)data;
    for (unsigned v = 0; v < 512; v++) {
        outb(f, v % 8, (uint8_t)(v * 37));
        inb(f, (v + 3) % 8);
        advance_ns(f, 50000);
    }
    outb(f, LCR, 0x03);
    outb(f, MCR, 0x00);
    set_baud_divisor(f, 0); /* divisor 0: slowest, not a division by zero */
    outb(f, RBR, 'q');
    advance_ns(f, 1000000000);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add("/pc/uart/" path, pc_fixture, NULL, setup, fn, pc_teardown)
    ADD("reset-state-and-probe", test_reset_state_and_probe);
    ADD("transmit-timing", test_transmit_timing);
    ADD("fifo-fill-and-drain", test_fifo_fill_and_drain);
    ADD("thre-interrupt", test_thre_interrupt);
    ADD("iir-priorities-and-rx", test_iir_priorities_and_rx);
    ADD("loopback", test_loopback);
    ADD("hostile-writes", test_hostile_writes);
#undef ADD
    g_test_add_func("/pc/uart/output-file-and-keys", test_output_file_and_keys);
    return g_test_run();
}
