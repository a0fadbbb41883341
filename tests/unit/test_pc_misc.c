/* Port 0x92, the i8042, the exit port, the POST code port, the registry,
 * and the PC devices together on one machine (PIT -> PIC -> vector, the
 * i8042's AUX loopback -> IRQ 12 through the slave, as Linux tests it). */
#include <glib.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/machine.h"

#include "pc_fixture.h"

static void test_port92(pc_fixture *f, gconstpointer data)
{
    (void)data;
    pc_add_device(f, &nm_port92_class, NULL);
    g_assert_true(f->m->a20);
    g_assert_cmphex(inb(f, 0x92), ==, 0x02);
    outb(f, 0x92, 0x00);
    g_assert_false(f->m->a20);
    g_assert_cmphex(inb(f, 0x92), ==, 0x00);
    /* Linux boot code enable_a20_fast: set bit 1, clear bit 0. */
    uint8_t v = inb(f, 0x92);
    outb(f, 0x92, (uint8_t)((v | 0x02) & ~0x01));
    g_assert_true(f->m->a20);
    g_assert_false(f->m->stop_requested);
    outb(f, 0x92, 0x03); /* bit 0 rising: reset */
    g_assert_true(f->m->stop_requested);
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_RESET);
    g_assert_cmpstr(f->m->stop_detail, ==, "reset via port 0x92");
}

/* Linux i8042_command(): wait for !IBF, write command, wait OBF, read. */
static int kbc_command(pc_fixture *f, uint8_t cmd, int param)
{
    g_assert_cmphex(inb(f, 0x64) & 0x02, ==, 0);
    outb(f, 0x64, cmd);
    if (param >= 0) outb(f, 0x60, (uint8_t)param);
    if (!(inb(f, 0x64) & 0x01)) return -1;
    return inb(f, 0x60);
}

static void test_i8042(pc_fixture *f, gconstpointer data)
{
    (void)data;
    pc_add_device(f, &nm_i8042_class, NULL);
    g_assert_cmphex(inb(f, 0x64), ==, 0x14); /* SYS, not inhibited, empty */
    g_assert_cmpint(kbc_command(f, 0xaa, -1), ==, 0x55);
    g_assert_cmpint(kbc_command(f, 0xab, -1), ==, 0x00);
    g_assert_cmpint(kbc_command(f, 0xa9, -1), ==, 0x00);
    /* Command byte read/write, as i8042_controller_init does. */
    int ctr = kbc_command(f, 0x20, -1);
    g_assert_cmpint(ctr, ==, 0x47);
    g_assert_cmpint(kbc_command(f, 0x60, 0x74), ==, -1);
    g_assert_cmpint(kbc_command(f, 0x20, -1), ==, 0x74);
    kbc_command(f, 0xa8, -1); /* enable AUX: clears bit 5 */
    kbc_command(f, 0xae, -1); /* enable KBD: clears bit 4 */
    g_assert_cmpint(kbc_command(f, 0x20, -1), ==, 0x44);
    kbc_command(f, 0xa7, -1);
    kbc_command(f, 0xad, -1);
    g_assert_cmpint(kbc_command(f, 0x20, -1), ==, 0x74);
    /* AUX loopback returns the byte as mouse data. */
    outb(f, 0x64, 0xd3);
    outb(f, 0x60, 0x5a);
    g_assert_cmphex(inb(f, 0x64) & 0x21, ==, 0x21);
    g_assert_cmphex(inb(f, 0x60), ==, 0x5a);
    /* The keyboard: reset gives ACK then BAT passed, without the timeout bit. */
    outb(f, 0x60, 0xff);
    g_assert_cmphex(inb(f, 0x64) & 0x61, ==, 0x01);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    g_assert_cmphex(inb(f, 0x60), ==, 0xaa);
    outb(f, 0x64, 0xd4); /* to the (absent) mouse */
    outb(f, 0x60, 0xf2);
    g_assert_cmphex(inb(f, 0x64) & 0x61, ==, 0x61);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfe);
    g_assert_cmphex(inb(f, 0x64) & 0x01, ==, 0);
    /* Output port: A20 through 0xD1, read back with 0xD0. */
    g_assert_cmphex(kbc_command(f, 0xd0, -1) & 0x03, ==, 0x03);
    kbc_command(f, 0xd1, 0xdd);
    g_assert_false(f->m->a20);
    g_assert_cmphex(kbc_command(f, 0xd0, -1) & 0x03, ==, 0x01);
    kbc_command(f, 0xd1, 0xdf);
    g_assert_true(f->m->a20);
    g_assert_false(f->m->stop_requested);
    /* Linux machine_real_restart / kb reboot: 0xFE to 0x64. */
    outb(f, 0x64, 0xfe);
    g_assert_true(f->m->stop_requested);
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_RESET);
    g_assert_cmpstr(f->m->stop_detail, ==, "reset via keyboard controller");
}

/* What Linux's atkbd sends (atkbd_probe, atkbd_activate), then keys from
 * the host: set-1 bytes on IRQ 1, in order, one per interrupt. */
static void test_i8042_keyboard(pc_fixture *f, gconstpointer data)
{
    (void)data;
    void *k = pc_add_device(f, &nm_i8042_class, NULL);
    outb(f, 0x60, 0xf2); /* identify: translated MF2 id */
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    g_assert_cmphex(inb(f, 0x60), ==, 0xab);
    g_assert_cmphex(inb(f, 0x60), ==, 0x41);
    g_assert_cmpint(kbc_command(f, 0x60, 0x05), ==, -1); /* translation off */
    outb(f, 0x60, 0xf2);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    g_assert_cmphex(inb(f, 0x60), ==, 0xab);
    g_assert_cmphex(inb(f, 0x60), ==, 0x83);
    g_assert_cmpint(kbc_command(f, 0x60, 0x47), ==, -1);
    outb(f, 0x60, 0xed); /* LEDs: ACK, argument: ACK */
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    outb(f, 0x60, 0x02);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    outb(f, 0x60, 0xf0); /* scancode set query */
    outb(f, 0x60, 0x00);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    g_assert_cmphex(inb(f, 0x60), ==, 0x02);
    outb(f, 0x60, 0xee);
    g_assert_cmphex(inb(f, 0x60), ==, 0xee);
    outb(f, 0x60, 0xfe); /* resend: the last byte again */
    g_assert_cmphex(inb(f, 0x60), ==, 0xee);
    g_assert_cmphex(inb(f, 0x64) & 0x01, ==, 0);

    /* Keys: 'a' make and break.  IRQ 1 goes up with each byte and drops
     * when it is read. */
    g_assert_false(nm_irq_level(&f->m->irq, 1));
    const uint8_t a[] = {0x1e, 0x9e};
    g_assert_cmpuint(nm_i8042_keys(k, a, 2), ==, 2);
    g_assert_true(nm_irq_level(&f->m->irq, 1));
    g_assert_cmphex(inb(f, 0x60), ==, 0x1e);
    g_assert_true(nm_irq_level(&f->m->irq, 1));
    g_assert_cmphex(inb(f, 0x60), ==, 0x9e);
    g_assert_false(nm_irq_level(&f->m->irq, 1));
    /* Disabled keyboard (F5): keys are dropped and counted. */
    outb(f, 0x60, 0xf5);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    g_assert_cmpuint(nm_i8042_keys(k, a, 2), ==, 0);
    g_assert_cmphex(inb(f, 0x64) & 0x01, ==, 0);
    outb(f, 0x60, 0xf4);
    g_assert_cmphex(inb(f, 0x60), ==, 0xfa);
    /* More than the 16-byte queue holds: the rest are dropped. */
    uint8_t many[20];
    memset(many, 0x1e, sizeof many);
    g_assert_cmpuint(nm_i8042_keys(k, many, sizeof many), ==, 16);
}

static void test_i8042_output_port_reset(pc_fixture *f, gconstpointer data)
{
    (void)data;
    pc_add_device(f, &nm_i8042_class, NULL);
    outb(f, 0x64, 0xd1);
    outb(f, 0x60, 0x02); /* bit 0 low: system reset */
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_RESET);
}

static void test_exit_port(pc_fixture *f, gconstpointer data)
{
    (void)data;
    pc_add_device(f, &nm_exitport_class, NULL);
    g_assert_false(f->m->stop_requested);
    nm_io_write(f->m->io, 0xf4, 0x12345642, 4);
    g_assert_true(f->m->stop_requested);
    g_assert_cmpint(f->m->stop_reason, ==, NM_STOP_EXIT_PORT);
    g_assert_cmpint(f->m->exit_status, ==, 0x42);
}

static void test_exit_port_configured(void)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    g_assert_true(nm_config_add_device_spec(cfg, "--device", "exitport,io=0x501", &err));
    g_assert_no_error(err);
    nm_machine *m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    nm_io_write(m->io, 0xf4, 1, 1);
    g_assert_false(m->stop_requested);
    nm_io_write(m->io, 0x501, 3, 2);
    g_assert_cmpint(m->exit_status, ==, 3);
    nm_machine_free(m);
    nm_config_free(cfg);
}

static void test_postcode(pc_fixture *f, gconstpointer data)
{
    (void)data;
    nm_machine_free(f->m);
    GError *err = NULL;
    f->cfg->post_port = 0x190;
    f->m = nm_machine_new(f->cfg, &err);
    g_assert_no_error(err);
    void *post = pc_add_device(f, &nm_postcode_class, NULL);
    g_assert_cmphex(inb(f, 0x80), ==, 0xff);
    outb(f, 0x80, 0x01);
    outb(f, 0x190, 0x02);
    outb(f, 0x80, 0x55);
    g_assert_cmphex(inb(f, 0x80), ==, 0x55);
    /* Each access is an 8-bit ISA I/O cycle: 6 BCLK at 8 1/3 MHz = 720 ns,
     * 48 clocks of the default 486DX2-66 (docs/isa-bus.md). */
    uint64_t before = f->m->clock.cycles, wait_before = f->m->clock.bus_wait_cycles;
    outb(f, 0x80, 0x55);
    g_assert_cmpuint(f->m->clock.cycles - before, ==, 48);
    g_assert_cmpuint(f->m->clock.bus_wait_cycles - wait_before, ==, 48);
    size_t count;
    const uint8_t *codes = nm_postcode_codes(post, &count);
    g_assert_cmpuint(count, ==, 4);
    g_assert_cmpmem(codes, 4, "\x01\x02\x55\x55", 4);
    /* Linux's I/O delay writes: counted, kept only up to the limit. */
    for (unsigned i = 0; i < NM_POSTCODE_KEPT + 10; i++)
        outb(f, 0x80, 0);
    nm_postcode_codes(post, &count);
    g_assert_cmpuint(count, ==, NM_POSTCODE_KEPT);
    g_assert_cmpuint(nm_postcode_total(post), ==, NM_POSTCODE_KEPT + 14);
}

static void test_registry(void)
{
    static const char *const names[] = {"pic",    "pit",   "uart",     "rtc",
                                        "port92", "i8042", "postcode", "exitport"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        const nm_device_class *cls = nm_device_class_find(names[i]);
        g_assert_nonnull(cls);
        g_assert_cmpstr(cls->name, ==, names[i]);
        g_assert_nonnull(cls->create);
        g_assert_nonnull(cls->destroy);
        g_assert_nonnull(strstr(nm_device_class_names(), names[i]));
    }
}

/* The whole PC platform in one machine, twice (no shared state), and a
 * reset of all devices. */
static void build_board(nm_machine *m, void **pic_out)
{
    const nm_device_class *classes[] = {&nm_pic_class,      &nm_pit_class,     &nm_uart_class,
                                        &nm_rtc_class,      &nm_port92_class,  &nm_i8042_class,
                                        &nm_postcode_class, &nm_exitport_class};
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(classes); i++) {
        nm_devcfg *d = NULL;
        if (classes[i] == &nm_uart_class) d = nm_devcfg_parse("test", "uart,file=none", &err);
        void *dev = nm_machine_add_device(m, classes[i], d, &err);
        g_assert_no_error(err);
        if (i == 0) *pic_out = dev;
        if (d) nm_devcfg_free(d);
    }
}

static void init_pics(nm_machine *m)
{
    static const uint8_t seq[][2] = {{0x20, 0x11}, {0x21, 0x30}, {0x21, 0x04}, {0x21, 0x01},
                                     {0xa0, 0x11}, {0xa1, 0x38}, {0xa1, 0x02}, {0xa1, 0x01},
                                     {0x21, 0x00}, {0xa1, 0x00}};
    for (size_t i = 0; i < G_N_ELEMENTS(seq); i++)
        nm_io_write(m->io, seq[i][0], seq[i][1], 1);
}

static void test_board(void)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    nm_machine *a = nm_machine_new(cfg, &err), *b = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    void *pic_a, *pic_b;
    build_board(a, &pic_a);
    build_board(b, &pic_b);
    init_pics(a);
    init_pics(b);

    /* PIT channel 0 periodic at 1 kHz on machine a only. */
    nm_io_write(a->io, 0x43, 0x34, 1);
    nm_io_write(a->io, 0x40, 1193 & 0xff, 1);
    nm_io_write(a->io, 0x40, 1193 >> 8, 1);
    a->clock.cycles = nm_clock_cycles_from_ns(&a->clock, 1100000);
    nm_clock_run_due(&a->clock);
    g_assert_true(a->intr);
    g_assert_cmphex(a->intc.acknowledge(a->intc.opaque), ==, 0x30);
    nm_io_write(a->io, 0x20, 0x20, 1);
    g_assert_false(b->intr);

    /* Linux i8042_check_aux IRQ test: AUX interrupts on, loop 0xa5, IRQ 12
     * arrives through the slave as vector 0x3c. */
    nm_io_write(a->io, 0x64, 0x60, 1);
    nm_io_write(a->io, 0x60, 0x46, 1); /* AUX int on, KBD int off */
    nm_io_write(a->io, 0x64, 0xd3, 1);
    nm_io_write(a->io, 0x60, 0xa5, 1);
    g_assert_true(a->intr);
    g_assert_cmphex(a->intc.acknowledge(a->intc.opaque), ==, 0x3c);
    g_assert_cmphex(nm_io_read(a->io, 0x64, 1) & 0x21, ==, 0x21);
    g_assert_cmphex(nm_io_read(a->io, 0x60, 1), ==, 0xa5);
    nm_io_write(a->io, 0xa0, 0x64, 1);
    nm_io_write(a->io, 0x20, 0x62, 1);

    /* UART THRE interrupt on IRQ 4 -> vector 0x34. */
    nm_io_write(a->io, 0x3fc, 0x08, 1);
    nm_io_write(a->io, 0x3f9, 0x02, 1);
    g_assert_true(a->intr);
    g_assert_cmphex(a->intc.acknowledge(a->intc.opaque), ==, 0x34);
    g_assert_cmphex(nm_io_read(a->io, 0x3fa, 1), ==, 0x02);
    nm_io_write(a->io, 0x20, 0x20, 1);

    /* RTC update interrupt on IRQ 8 -> vector 0x38. */
    nm_io_write(a->io, 0x70, 0x0b, 1);
    nm_io_write(a->io, 0x71, 0x12, 1);
    nm_io_write(a->io, 0x43, 0x30, 1); /* PIT quiet */
    a->clock.cycles = nm_clock_cycles_from_ns(&a->clock, 1000000000);
    nm_clock_run_due(&a->clock);
    g_assert_true(a->intr);
    g_assert_cmphex(a->intc.acknowledge(a->intc.opaque), ==, 0x38);

    /* Reset of every device, then the same again works. */
    nm_machine_reset(a);
    g_assert_false(a->intr);
    init_pics(a);
    nm_io_write(a->io, 0x60, 0x00, 1); /* unknown keyboard command: resend, IRQ 1 */
    g_assert_cmphex(a->intc.acknowledge(a->intc.opaque), ==, 0x31);

    nm_report *r = nm_report_new();
    nm_machine_report(a, r);
    char *json = nm_report_json(r);
    g_assert_nonnull(strstr(json, "irq0_ticks"));
    g_assert_nonnull(strstr(json, "irq1_delivered"));
    g_free(json);
    nm_report_free(r);
    nm_machine_free(a);
    nm_machine_free(b);
    nm_config_free(cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add("/pc/misc/" path, pc_fixture, NULL, pc_setup, fn, pc_teardown)
    ADD("port92", test_port92);
    ADD("i8042", test_i8042);
    ADD("i8042-keyboard", test_i8042_keyboard);
    ADD("i8042-output-port-reset", test_i8042_output_port_reset);
    ADD("exit-port", test_exit_port);
    ADD("postcode", test_postcode);
#undef ADD
    g_test_add_func("/pc/misc/exit-port-configured", test_exit_port_configured);
    g_test_add_func("/pc/misc/registry", test_registry);
    g_test_add_func("/pc/misc/board", test_board);
    return g_test_run();
}
