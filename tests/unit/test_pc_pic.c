/* The 8259A pair, driven through its ports as Linux drives it: init
 * sequence, priorities, masking, EOI variants, auto-EOI, level mode via the
 * ELCR, cascade through the slave, spurious IRQ 7, poll mode, rotation. */
#include <glib.h>

#include "devices/pc/pc.h"
#include "emu/machine.h"

#include "pc_fixture.h"

#define MASTER_CMD  0x20
#define MASTER_DATA 0x21
#define SLAVE_CMD   0xa0
#define SLAVE_DATA  0xa1

/* A bare PC with the PIC pair. */
static void setup(pc_fixture *f, gconstpointer data)
{
    pc_setup(f, data);
    pc_add_device(f, &nm_pic_class, NULL);
}

static uint8_t inta(pc_fixture *f)
{
    return f->m->intc.acknowledge(f->m->intc.opaque);
}
static void irq(pc_fixture *f, unsigned line, bool level)
{
    nm_irq_set(&f->m->irq, line, level);
}
static void pulse(pc_fixture *f, unsigned line)
{
    irq(f, line, true);
    irq(f, line, false);
}

/* Linux init_8259A(auto_eoi) with vectors 0x30/0x38, then all unmasked. */
static void init_like_linux(pc_fixture *f, bool auto_eoi)
{
    outb(f, MASTER_DATA, 0xff);
    outb(f, SLAVE_DATA, 0xff);
    outb(f, MASTER_CMD, 0x11);
    outb(f, MASTER_DATA, 0x30);
    outb(f, MASTER_DATA, 1u << 2);
    outb(f, MASTER_DATA, auto_eoi ? 0x03 : 0x01);
    outb(f, SLAVE_CMD, 0x11);
    outb(f, SLAVE_DATA, 0x38);
    outb(f, SLAVE_DATA, 2);
    outb(f, SLAVE_DATA, 0x01);
    outb(f, MASTER_DATA, 0x00);
    outb(f, SLAVE_DATA, 0x00);
}

static uint8_t read_isr(pc_fixture *f, uint16_t cmd)
{
    outb(f, cmd, 0x0b);
    uint8_t v = inb(f, cmd);
    outb(f, cmd, 0x0a);
    return v;
}

static void test_wiring_and_probe(pc_fixture *f, gconstpointer data)
{
    (void)data;
    g_assert_nonnull(f->m->intc.acknowledge);
    /* After reset everything is masked: no INTR even with a request. */
    pulse(f, 3);
    g_assert_false(f->m->intr);
    /* Linux probe_8259A: the mask register reads back. */
    outb(f, MASTER_DATA, 0xff);
    outb(f, MASTER_DATA, 0xa5);
    g_assert_cmpuint(inb(f, MASTER_DATA), ==, 0xa5);
    init_like_linux(f, false);
    g_assert_cmpuint(inb(f, MASTER_DATA), ==, 0x00);
    g_assert_cmpuint(inb(f, SLAVE_DATA), ==, 0x00);
    /* ICW1 reset the edge sense: the old request is gone. */
    g_assert_false(f->m->intr);
}

static void test_priorities(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    pulse(f, 5);
    pulse(f, 3);
    pulse(f, 1);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inb(f, MASTER_CMD), ==, 0x2a); /* IRR */
    g_assert_cmpuint(inta(f), ==, 0x31);
    /* IRQ 1 in service blocks the lower priorities. */
    g_assert_false(f->m->intr);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x02);
    /* A higher priority request nests. */
    pulse(f, 0);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x30);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x03);
    outb(f, MASTER_CMD, 0x20); /* non-specific EOI: clears IRQ 0 */
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x02);
    g_assert_false(f->m->intr);
    outb(f, MASTER_CMD, 0x20);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x33);
    outb(f, MASTER_CMD, 0x20);
    g_assert_cmpuint(inta(f), ==, 0x35);
    outb(f, MASTER_CMD, 0x20);
    g_assert_false(f->m->intr);
    g_assert_cmpuint(inb(f, MASTER_CMD), ==, 0x00);
}

static void test_masking(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    outb(f, MASTER_DATA, 0x10); /* mask IRQ 4 */
    pulse(f, 4);
    g_assert_false(f->m->intr);
    g_assert_cmpuint(inb(f, MASTER_CMD), ==, 0x10); /* requested, masked */
    outb(f, MASTER_DATA, 0x00);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x34);
    outb(f, MASTER_CMD, 0x64); /* specific EOI for 4 */
    /* Masking the cascade masks the whole slave. */
    outb(f, MASTER_DATA, 0x04);
    pulse(f, 14);
    g_assert_false(f->m->intr);
    outb(f, MASTER_DATA, 0x00);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x3e);
}

static void test_specific_eoi(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    pulse(f, 6);
    g_assert_cmpuint(inta(f), ==, 0x36);
    pulse(f, 2 + 1); /* IRQ 3: higher than 6, nests */
    g_assert_cmpuint(inta(f), ==, 0x33);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x48);
    outb(f, MASTER_CMD, 0x66); /* specific EOI for 6, the lower one */
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x08);
    outb(f, MASTER_CMD, 0x63);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x00);
    /* EOI with nothing in service is harmless. */
    outb(f, MASTER_CMD, 0x20);
    outb(f, MASTER_CMD, 0x67);
    g_assert_false(f->m->intr);
}

static void test_auto_eoi(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, true);
    pulse(f, 3);
    g_assert_cmpuint(inta(f), ==, 0x33);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x00);
    /* No EOI needed for the next, lower-priority one. */
    pulse(f, 7);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x37);
}

static void test_edge_needs_new_edge(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    irq(f, 4, true); /* held high */
    g_assert_cmpuint(inta(f), ==, 0x34);
    outb(f, MASTER_CMD, 0x20);
    g_assert_false(f->m->intr); /* no new edge */
    irq(f, 4, false);
    irq(f, 4, true);
    g_assert_true(f->m->intr);
    /* An edge request survives the line dropping before INTA. */
    irq(f, 4, false);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x34);
}

static void test_level_elcr(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    /* IRQ 0, 1, 2 (master) and 8, 13 (slave) cannot be level. */
    outb(f, 0x4d0, 0xff);
    outb(f, 0x4d1, 0xff);
    g_assert_cmpuint(inb(f, 0x4d0), ==, 0xf8);
    g_assert_cmpuint(inb(f, 0x4d1), ==, 0xde);
    outb(f, 0x4d0, 0x00);
    outb(f, 0x4d1, 0x04); /* IRQ 10 level */
    g_assert_cmpuint(inb(f, 0x4d1), ==, 0x04);

    irq(f, 10, true);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x3a);
    g_assert_cmpuint(read_isr(f, SLAVE_CMD), ==, 0x04);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x04);
    /* EOI while the line is still high: the request is still there. */
    outb(f, SLAVE_CMD, 0x20);
    outb(f, MASTER_CMD, 0x20);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x3a);
    outb(f, SLAVE_CMD, 0x62);
    outb(f, MASTER_CMD, 0x62);
    /* The device deasserts: IRR follows the line. */
    irq(f, 10, false);
    g_assert_false(f->m->intr);
    outb(f, SLAVE_CMD, 0x0a);
    g_assert_cmpuint(inb(f, SLAVE_CMD), ==, 0x00);
}

static void test_cascade(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    pulse(f, 12);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inb(f, MASTER_CMD), ==, 0x04); /* cascade request */
    g_assert_cmpuint(inta(f), ==, 0x3c);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x04);
    g_assert_cmpuint(read_isr(f, SLAVE_CMD), ==, 0x10);
    /* IRQ 3 is lower priority than the cascade (IR2) in service. */
    pulse(f, 3);
    g_assert_false(f->m->intr);
    /* Slave IRQ 9 is higher than 12 on the slave, but the master's IR2 in
     * service blocks it (fully nested, not special fully nested). */
    pulse(f, 9);
    g_assert_false(f->m->intr);
    /* Linux: specific EOI to the slave, then to the master for IR2. */
    outb(f, SLAVE_CMD, 0x64);
    outb(f, MASTER_CMD, 0x62);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x39);
    outb(f, SLAVE_CMD, 0x61);
    outb(f, MASTER_CMD, 0x62);
    g_assert_cmpuint(inta(f), ==, 0x33);
    /* ISA IRQ 2 arrives as IRQ 9. */
    outb(f, MASTER_CMD, 0x63);
    pulse(f, 2);
    g_assert_cmpuint(inta(f), ==, 0x39);
}

static void test_spurious_irq7(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    outb(f, 0x4d0, 0x20); /* IRQ 5 level */
    irq(f, 5, true);
    g_assert_true(f->m->intr);
    irq(f, 5, false); /* gone before the CPU acknowledges */
    g_assert_false(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x37);
    /* Linux i8259A_irq_real(7) reads ISR: not in service, so spurious. */
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x00);
    /* The same on the slave gives IRQ 7 too (the cascade request went with
     * the slave's); a slave acknowledge with nothing pending gives 15. */
    outb(f, 0x4d1, 0x08); /* IRQ 11 level */
    irq(f, 11, true);
    irq(f, 11, false);
    g_assert_cmpuint(inta(f), ==, 0x37);
}

static void test_poll(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    outb(f, MASTER_CMD, 0x0c); /* OCW3 poll */
    g_assert_cmpuint(inb(f, MASTER_CMD), ==, 0x00);
    pulse(f, 6);
    outb(f, MASTER_CMD, 0x0c);
    g_assert_cmpuint(inb(f, MASTER_CMD), ==, 0x86);
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x40);
    g_assert_false(f->m->intr);
    outb(f, MASTER_CMD, 0x20);
}

static void test_rotation_and_special_mask(pc_fixture *f, gconstpointer data)
{
    (void)data;
    init_like_linux(f, false);
    outb(f, MASTER_CMD, 0xc4); /* set priority: IR4 lowest, IR5 highest */
    pulse(f, 3);
    pulse(f, 6);
    g_assert_cmpuint(inta(f), ==, 0x36);
    outb(f, MASTER_CMD, 0xa0); /* rotate on non-specific EOI: 6 lowest now */
    g_assert_cmpuint(inta(f), ==, 0x33);
    outb(f, MASTER_CMD, 0xe3); /* rotate on specific EOI 3 */
    g_assert_cmpuint(read_isr(f, MASTER_CMD), ==, 0x00);
    outb(f, MASTER_CMD, 0xc7); /* back to IR0 highest */

    /* Special mask mode: masking the in-service level lets lower ones in. */
    pulse(f, 1);
    g_assert_cmpuint(inta(f), ==, 0x31);
    pulse(f, 5);
    g_assert_false(f->m->intr);
    outb(f, MASTER_CMD, 0x68); /* OCW3: ESMM|SMM */
    outb(f, MASTER_DATA, 0x02);
    g_assert_true(f->m->intr);
    g_assert_cmpuint(inta(f), ==, 0x35);
    outb(f, MASTER_CMD, 0x48); /* leave special mask mode */
}

static void test_hostile_writes(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* Every value on every port, in any order: nothing breaks. */
    for (unsigned v = 0; v < 256; v++) {
        outb(f, MASTER_CMD, (uint8_t)v);
        outb(f, MASTER_DATA, (uint8_t)(v * 7));
        outb(f, SLAVE_CMD, (uint8_t)(v ^ 0x5a));
        outb(f, SLAVE_DATA, (uint8_t)(v * 13));
        outb(f, 0x4d0, (uint8_t)v);
        pulse(f, v % 16);
        if (f->m->intr) inta(f);
        inb(f, MASTER_CMD);
        inb(f, SLAVE_DATA);
    }
    init_like_linux(f, false);
    outb(f, 0x4d0, 0);
    outb(f, 0x4d1, 0);
    pulse(f, 1);
    g_assert_cmpuint(inta(f), ==, 0x31);
}

static void test_two_machines(void)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    nm_machine *a = nm_machine_new(cfg, &err), *b = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    g_assert_nonnull(nm_machine_add_device(a, &nm_pic_class, NULL, &err));
    g_assert_nonnull(nm_machine_add_device(b, &nm_pic_class, NULL, &err));
    /* A second pair in the same machine is refused with a message. */
    g_assert_null(nm_machine_add_device(a, &nm_pic_class, NULL, &err));
    g_assert_nonnull(err);
    g_clear_error(&err);
    nm_io_write(a->io, MASTER_DATA, 0x00, 1);
    nm_irq_raise(&a->irq, 1);
    g_assert_true(a->intr);
    g_assert_false(b->intr);
    nm_machine_free(a);
    nm_machine_free(b);
    nm_config_free(cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add("/pc/pic/" path, pc_fixture, NULL, setup, fn, pc_teardown)
    ADD("wiring-and-probe", test_wiring_and_probe);
    ADD("priorities", test_priorities);
    ADD("masking", test_masking);
    ADD("specific-eoi", test_specific_eoi);
    ADD("auto-eoi", test_auto_eoi);
    ADD("edge-needs-new-edge", test_edge_needs_new_edge);
    ADD("level-elcr", test_level_elcr);
    ADD("cascade", test_cascade);
    ADD("spurious-irq7", test_spurious_irq7);
    ADD("poll", test_poll);
    ADD("rotation-and-special-mask", test_rotation_and_special_mask);
    ADD("hostile-writes", test_hostile_writes);
#undef ADD
    g_test_add_func("/pc/pic/two-machines", test_two_machines);
    return g_test_run();
}
