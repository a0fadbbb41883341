/* Shared by test_pc_pic.c, test_pc_pit.c, test_pc_misc.c, test_pc_uart.c
 * and tests/diff/test_de.c: a g_test fixture holding a bare machine from
 * the default configuration (no devices, no CPU), its set-up and teardown,
 * helpers to add a device or a CPU to it, and byte port I/O on it.  A
 * file's own setup calls pc_setup, then adds what it tests; pc_teardown
 * frees all of it.  A file with port helpers of its own (by UART register,
 * say) defines PC_FIXTURE_OWN_PORT_IO before including this. */
#ifndef NICEMU_TESTS_PC_FIXTURE_H
#define NICEMU_TESTS_PC_FIXTURE_H

#include <glib.h>

#include "cpu/cpu.h"
#include "emu/config.h"
#include "emu/machine.h"

typedef struct pc_fixture {
    nm_config *cfg;
    nm_machine *m;
    void *dev;   /* the device under test, where the file's setup keeps it */
    nm_cpu *cpu; /* set by pc_add_cpu, else NULL */
} pc_fixture;

/* The machine, from nm_config_new()'s defaults. */
static inline void pc_setup(pc_fixture *f, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    f->cfg = nm_config_new();
    f->m = nm_machine_new(f->cfg, &err);
    g_assert_no_error(err);
}

static inline void pc_teardown(pc_fixture *f, gconstpointer data)
{
    (void)data;
    nm_cpu_free(f->cpu);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

/* Adds a `cls` device, configured by `spec` (as for --device) or, when
 * `spec` is NULL, with no configuration at all; returns its state. */
static inline void *pc_add_device(pc_fixture *f, const nm_device_class *cls, const char *spec)
{
    GError *err = NULL;
    nm_devcfg *d = NULL;
    if (spec) {
        d = nm_devcfg_parse("test", spec, &err);
        g_assert_no_error(err);
    }
    void *dev = nm_machine_add_device(f->m, cls, d, &err);
    g_assert_no_error(err);
    g_assert_nonnull(dev);
    if (d) nm_devcfg_free(d);
    return dev;
}

/* A CPU out of reset, made the machine's CPU unless it already has one. */
static inline nm_cpu *pc_add_cpu(pc_fixture *f)
{
    f->cpu = nm_cpu_new(f->m);
    if (!f->m->cpu) f->m->cpu = f->cpu;
    nm_cpu_reset(f->cpu);
    return f->cpu;
}

#ifndef PC_FIXTURE_OWN_PORT_IO
static inline void outb(pc_fixture *f, uint16_t port, uint8_t v)
{
    nm_io_write(f->m->io, port, v, 1);
}
static inline uint8_t inb(pc_fixture *f, uint16_t port)
{
    return (uint8_t)nm_io_read(f->m->io, port, 1);
}
#endif

#endif
