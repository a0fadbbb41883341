/* Shared by the 8390 board tests (test_ne2000.c, test_wd8013.c): the one
 * machine a test works on at a time, `m`, built from `cfg` with a chosen
 * CPU, RAM size and --nic board spec, its teardown, and byte port I/O on
 * it. */
#ifndef NICEMU_TESTS_NIC8390_FIXTURE_H
#define NICEMU_TESTS_NIC8390_FIXTURE_H

#include <glib.h>

#include "emu/config.h"
#include "emu/machine.h"

static nm_config *cfg;
static nm_machine *m;

/* A machine on `cpu` with `ram_bytes` of RAM and the board `spec`. */
static inline void nic8390_setup(const char *cpu, uint64_t ram_bytes, const char *spec)
{
    GError *err = NULL;
    cfg = nm_config_new();
    g_free(cfg->cpu);
    cfg->cpu = g_strdup(cpu);
    cfg->ram_bytes = ram_bytes;
    g_assert_true(nm_config_add_device_spec(cfg, "--nic", spec, &err));
    m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
}

static inline void nic8390_teardown(void)
{
    nm_machine_free(m);
    nm_config_free(cfg);
}

static inline void outb(uint16_t p, uint8_t v)
{
    nm_io_write(m->io, p, v, 1);
}
static inline uint8_t inb(uint16_t p)
{
    return (uint8_t)nm_io_read(m->io, p, 1);
}

#endif
