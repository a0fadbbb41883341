/* Configuration: key-files, device specs, every error with its message, the
 * device interface (two instances coexist), logging specs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "emu/config.h"
#include "cpu/timing/timing.h"
#include "emu/core/log.h"
#include "emu/machine.h"

extern const nm_device_class nm_debugcon_class;
const char *nm_debugcon_text(void *opaque);

static char *write_temp(const char *name, const char *text)
{
    char *dir = g_dir_make_tmp("nicemu-config-XXXXXX", NULL);
    char *path = g_build_filename(dir, name, NULL);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    g_free(dir);
    return path;
}

static void remove_temp(char *path)
{
    char *dir = g_path_get_dirname(path);
    g_unlink(path);
    g_rmdir(dir);
    g_free(dir);
    g_free(path);
}

/* Loads `text` as a key-file and returns the error message (NULL if none). */
static char *load_error(const char *text)
{
    char *path = write_temp("machine.ini", text);
    nm_config *c = nm_config_new();
    GError *err = NULL;
    bool ok = nm_config_load_file(c, path, &err);
    char *msg = NULL;
    if (!ok) {
        /* Replace the temp path by a fixed name so messages can be compared. */
        GString *s = g_string_new(err->message);
        g_string_replace(s, path, "machine.ini", 0);
        msg = g_string_free(s, FALSE);
        g_error_free(err);
    }
    nm_config_free(c);
    remove_temp(path);
    return msg;
}

static void test_keyfile_ok(void)
{
    char *path = write_temp("m.ini", "[machine]\ncpu=pentium-100\nram=64M\n"
                                     "max-virtual-time=250ms\nappend=console=ttyS0 quiet\n"
                                     "[con0]\nmodel=debugcon\nio=0xe9\nfile=none\n"
                                     "[con1]\nmodel=debugcon\nio=0x402\nfile=none\n");
    nm_config *c = nm_config_new();
    GError *err = NULL;
    g_assert_true(nm_config_load_file(c, path, &err));
    g_assert_no_error(err);
    g_assert_cmpstr(c->cpu, ==, "pentium-100");
    g_assert_cmpuint(c->ram_bytes, ==, 64u << 20);
    g_assert_cmpuint(c->max_virtual_ns, ==, 250000000u);
    g_assert_cmpstr(c->append, ==, "console=ttyS0 quiet");
    g_assert_cmpuint(c->devices->len, ==, 2);
    const nm_devcfg *d = c->devices->pdata[1];
    g_assert_cmpstr(d->name, ==, "con1");
    g_assert_cmpstr(d->model, ==, "debugcon");
    g_assert_cmpstr(nm_devcfg_get(d, "io"), ==, "0x402");

    /* Two instances of one device class coexist in one machine. */
    nm_machine *m = nm_machine_new(c, &err);
    g_assert_no_error(err);
    g_assert_nonnull(m);
    g_assert_cmpuint(m->devices->len, ==, 2);
    g_assert_cmpuint(m->clock.hz_num, ==, 100000000u);
    nm_io_write(m->io, 0xe9, 'A', 1);
    nm_io_write(m->io, 0x402, 'B', 1);
    nm_io_write(m->io, 0x402, 'C', 1);
    nm_device_instance *i0 = m->devices->pdata[0], *i1 = m->devices->pdata[1];
    g_assert_cmpstr(nm_debugcon_text(i0->state), ==, "A");
    g_assert_cmpstr(nm_debugcon_text(i1->state), ==, "BC");
    g_assert_cmphex(nm_io_read(m->io, 0x402, 1), ==, 0xe9);
    nm_report *r = nm_report_new();
    nm_machine_report(m, r);
    char *json = nm_report_json(r);
    g_assert_nonnull(strstr(json, "\"con1\": {\n    \"model\": \"debugcon\",\n    \"bytes\": 2}"));
    g_free(json);
    nm_report_free(r);
    nm_machine_free(m);
    nm_config_free(c);
    remove_temp(path);
}

static void test_keyfile_errors(void)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"[machine]\nrma=32M\n",
         "machine.ini [machine]: unknown key 'rma' (accepted: cpu, ram, mhz, fpu, kernel, initrd, "
         "append, rom, elf, serial, post-port, max-instructions, max-virtual-time, report-json, "
         "debug, trace-range, trace-window, share-irq, strict-isa, no-poll-fast-forward, "
         "rtc-epoch, cost-model, "
         "cost-from, mem-wait-states, dram-timing, board, l2, profile, profile-top, "
         "profile-from, profile-stack-region, profile-callers, profile-dist, symbols, "
         "system-map, measure-nic, display, screenshot, vga-dump, save-state, save-state-exit, "
         "restore, mailbox)"},
        {"[machine]\ncpu=z80\n",
         "machine.ini [machine]: cpu: bad value 'z80' (accepted: 386dx-25, 386dx-33, 386dx-40, "
         "486sx-25, 486dx-33, 486dx2-66, 486dx4-100, pentium-60, pentium-66, pentium-100, "
         "pentium-133)"},
        {"[machine]\nram=lots\n",
         "machine.ini [machine]: ram: bad value 'lots' (accepted: a size from 1M to 2G in whole 4K "
         "pages, e.g. 32M)"},
        {"[machine]\nram=4G\n",
         "machine.ini [machine]: ram: bad value '4G' (accepted: a size from 1M to 2G in whole 4K "
         "pages, e.g. 32M)"},
        {"[machine]\nmax-virtual-time=10\n",
         "machine.ini [machine]: max-virtual-time: bad value '10' (accepted: a duration with a "
         "unit: s, ms, us or ns, e.g. 10s)"},
        {"[machine]\nmax-instructions=-5\n",
         "machine.ini [machine]: max-instructions: bad value '-5' (accepted: a non-negative "
         "integer)"},
        {"[machine]\nstrict-isa=maybe\n",
         "machine.ini [machine]: strict-isa: bad value 'maybe' (accepted: true, false)"},
        {"[machine]\ndisplay=x11\n",
         "machine.ini [machine]: display: bad value 'x11' (accepted: none, sdl)"},
        {"[machine]\npost-port=0x10000\n",
         "machine.ini [machine]: post-port: bad value '0x10000' (accepted: an I/O port from 0 to "
         "0xffff)"},
        {"[nic0]\nio=0x300\n", "machine.ini [nic0]: missing key 'model' (accepted: *"},
        {"[nic0]\nmodel=3c509\n", "machine.ini [nic0]: model: bad value '3c509' (accepted: *"},
        {"[con]\nmodel=debugcon\nirq=5\n",
         "machine.ini [con]: unknown key 'irq' for model debugcon (accepted: model, io, file)"},
        {"this is not a key-file\n", NULL /* GKeyFile's own message, checked below */},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *msg = load_error(cases[i].text);
        g_assert_nonnull(msg);
        const char *want = cases[i].message;
        if (want && g_str_has_suffix(want, "*")) {
            /* The list of accepted models grows with the project: check the
             * form and that a known model is listed. */
            g_autofree char *prefix = g_strndup(want, strlen(want) - 1);
            g_assert_true(g_str_has_prefix(msg, prefix));
            g_assert_nonnull(strstr(msg, "debugcon"));
        } else if (want)
            g_assert_cmpstr(msg, ==, want);
        else
            g_assert_true(g_str_has_prefix(msg, "machine.ini: cannot read configuration: "));
        g_free(msg);
    }
}

static void test_missing_file(void)
{
    nm_config *c = nm_config_new();
    GError *err = NULL;
    g_assert_false(nm_config_load_file(c, "/nonexistent/missing.ini", &err));
    g_assert_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE);
    g_assert_cmpstr(err->message, ==,
                    "/nonexistent/missing.ini: cannot read configuration: No such file or "
                    "directory");
    g_error_free(err);
    nm_config_free(c);
}

static void test_device_values(void)
{
    nm_config *c = nm_config_new();
    GError *err = NULL;
    /* Bad value: reported when the device is created, naming the option. */
    g_assert_true(nm_config_add_device_spec(c, "--device", "debugcon,io=0x1ffff", &err));
    nm_machine *m = nm_machine_new(c, &err);
    g_assert_null(m);
    g_assert_cmpstr(err->message, ==,
                    "--device debugcon,io=0x1ffff: io: bad value '0x1ffff' (accepted: an integer "
                    "from 0 (0x0) to 65535 (0xffff))");
    g_clear_error(&err);
    nm_config_free(c);

    /* Two devices on one port: the second names the first. */
    c = nm_config_new();
    g_assert_true(nm_config_add_device_spec(c, "--device", "debugcon,file=none", &err));
    g_assert_true(nm_config_add_device_spec(c, "--device", "debugcon,file=none", &err));
    m = nm_machine_new(c, &err);
    g_assert_null(m);
    g_assert_cmpstr(err->message, ==,
                    "--device debugcon,file=none: io: port 0xe9 is already taken by debugcon");
    g_clear_error(&err);
    nm_config_free(c);

    c = nm_config_new();
    g_assert_false(nm_config_add_device_spec(c, "--nic", "debugcon,io", &err));
    g_assert_cmpstr(err->message, ==,
                    "--nic debugcon,io: 'io' is not key=value (form: MODEL,key=value,...)");
    g_clear_error(&err);
    g_assert_false(nm_config_add_device_spec(c, "--nic", "debugcon,io=1,io=2", &err));
    g_assert_cmpstr(err->message, ==, "--nic debugcon,io=1,io=2: key 'io' given twice");
    g_clear_error(&err);

    /* The backend's own options follow net= on the command line; the NIC's
     * keys may still come after them. */
    g_assert_true(nm_config_add_device_spec(
        c, "--nic", "ne2000,io=0x300,net=peer,ip=10.0.0.9/24,delayed-ack=1,capture=t.pcap,irq=5",
        &err));
    g_assert_no_error(err);
    const nm_devcfg *d = c->devices->pdata[0];
    g_assert_cmpstr(nm_devcfg_get(d, "net"), ==, "peer,ip=10.0.0.9/24,delayed-ack=1");
    g_assert_cmpstr(nm_devcfg_get(d, "capture"), ==, "t.pcap");
    g_assert_cmpstr(nm_devcfg_get(d, "irq"), ==, "5");
    nm_config_free(c);
}

static void test_parsers(void)
{
    uint64_t v;
    g_assert_true(nm_parse_size("32M", &v) && v == 32u << 20);
    g_assert_true(nm_parse_size("512k", &v) && v == 512u << 10);
    g_assert_true(nm_parse_size("1GB", &v) && v == 1u << 30);
    g_assert_true(nm_parse_size("4096", &v) && v == 4096);
    g_assert_false(nm_parse_size("32Q", &v));
    g_assert_false(nm_parse_size("", &v));
    g_assert_false(nm_parse_size("99999999999999999999G", &v));
    g_assert_true(nm_parse_duration_ns("10s", &v) && v == 10000000000ull);
    g_assert_true(nm_parse_duration_ns("5ms", &v) && v == 5000000);
    g_assert_true(nm_parse_duration_ns("20us", &v) && v == 20000);
    g_assert_true(nm_parse_duration_ns("7ns", &v) && v == 7);
    g_assert_false(nm_parse_duration_ns("7", &v));
    g_assert_false(nm_parse_duration_ns("7 s", &v));
    g_assert_true(nm_parse_u64("0x300", &v) && v == 0x300);
    g_assert_false(nm_parse_u64("-1", &v));
    g_assert_false(nm_parse_u64("12abc", &v));
}

static void test_log_spec(void)
{
    char *bad = NULL;
    g_assert_true(nm_log_parse("cpu,ne2000=trace", &bad));
    g_assert_true(nm_log_enabled(CPU, NM_LOG_DEBUG));
    g_assert_false(nm_log_enabled(CPU, NM_LOG_TRACE));
    g_assert_true(nm_log_enabled(NE2000, NM_LOG_TRACE));
    g_assert_false(nm_log_enabled(PIC, NM_LOG_DEBUG));
    g_assert_true(nm_log_enabled(PIC, NM_LOG_WARN));
    g_assert_false(nm_log_parse("cpu,bogus", &bad));
    g_assert_cmpstr(bad, ==, "bogus");
    g_free(bad);
    g_assert_false(nm_log_parse("cpu=loud", &bad));
    g_assert_cmpstr(bad, ==, "loud");
    g_free(bad);
    nm_log_reset();
    g_assert_false(nm_log_enabled(CPU, NM_LOG_DEBUG));
    g_assert_false(nm_log_enabled(EXEC, NM_LOG_ERROR));
}

/* --mhz: the key's values, and the model it makes: core at exactly N MHz,
 * bus scaled by the same factor (exact fractions), the 386's DRAM wait
 * states those of the nominal clock, and the label. */
static void test_mhz(void)
{
    nm_config *c = nm_config_new();
    GError *err = NULL;
    g_assert_true(nm_config_set(c, "t", "mhz", "400", &err));
    g_assert_cmpuint(c->cpu_mhz, ==, 400);
    g_assert_true(nm_config_set(c, "t", "mhz", "10000", &err));
    g_assert_true(nm_config_set(c, "t", "mhz", "1", &err));
    const char *bad[] = {"0", "10001", "-1", "1.5", "x", "", "0x10", "040", "99999999999999999999"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_assert_false(nm_config_set(c, "t", "mhz", bad[i], &err));
        g_assert_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE);
        g_assert_nonnull(strstr(err->message, "a whole number of MHz from 1 to 10000"));
        g_clear_error(&err);
    }
    g_assert_cmpuint(c->cpu_mhz, ==, 1);
    nm_config_free(c);

    nm_cpu_model m;
    const nm_cpu_model *p100 = nm_cpu_model_find("pentium-100");
    g_assert_true(nm_cpu_model_at_mhz(p100, 400, &m));
    g_assert_cmpuint(m.hz_num, ==, 400000000u);
    g_assert_cmpuint(m.hz_den, ==, 1);
    g_assert_cmpuint(m.bus_hz_num, ==, 800000000u); /* 266 2/3 MHz: x1.5 kept */
    g_assert_cmpuint(m.bus_hz_den, ==, 3);
    g_assert_true(nm_cpu_model_overridden(&m));
    g_assert_true(nm_cpu_model_nominal(&m) == p100);
    char label[96];
    nm_cpu_model_label(&m, label, sizeof label);
    g_assert_cmpstr(label, ==, "pentium-100 @ 400 MHz (overridden)");
    nm_cpu_model_label(p100, label, sizeof label);
    g_assert_cmpstr(label, ==, "pentium-100");
    g_assert_false(nm_cpu_model_overridden(p100));
    /* The model's own clock is no override. */
    g_assert_true(nm_cpu_model_at_mhz(p100, 100, &m));
    g_assert_false(nm_cpu_model_overridden(&m));
    /* 486DX2-66 at 200: a 100 MHz bus (x2); the highest clock stays exact. */
    g_assert_true(nm_cpu_model_at_mhz(nm_cpu_model_find("486dx2-66"), 200, &m));
    g_assert_cmpuint(m.bus_hz_num / m.bus_hz_den, ==, 100000000u);
    g_assert_cmpuint(m.bus_hz_num % m.bus_hz_den, ==, 0);
    g_assert_true(nm_cpu_model_at_mhz(nm_cpu_model_find("pentium-133"), 10000, &m));
    g_assert_cmpuint(m.bus_hz_num, ==, 5000000000ull); /* 133 1/3 : 66 2/3 = 2 */
    g_assert_cmpuint(m.bus_hz_den, ==, 1);
    g_assert_false(nm_cpu_model_at_mhz(p100, 0, &m));
    g_assert_false(nm_cpu_model_at_mhz(p100, 10001, &m));
    /* 386DX-33 at 400 MHz: the board's wait states stay 2 (100 ns DRAM at
     * the nominal 33 MHz), not 38. */
    g_assert_true(nm_cpu_model_at_mhz(nm_cpu_model_find("386dx-33"), 400, &m));
    nm_timing_params tp;
    nm_timing_default_params(&m, &tp);
    g_assert_cmpuint(tp.mem_wait_states, ==, 2);

    /* A machine built with --mhz runs its clock at that rate. */
    c = nm_config_new();
    g_free(c->cpu);
    c->cpu = g_strdup("pentium-100");
    c->cpu_mhz = 250;
    nm_machine *mach = nm_machine_new(c, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(mach->clock.hz_num / mach->clock.hz_den, ==, 250000000u);
    g_assert_cmpuint(nm_clock_cycles_from_ns(&mach->clock, 1000), ==, 250);
    g_assert_cmpstr(mach->model->name, ==, "pentium-100");
    nm_machine_free(mach);
    nm_config_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/config/keyfile-ok", test_keyfile_ok);
    g_test_add_func("/config/keyfile-errors", test_keyfile_errors);
    g_test_add_func("/config/missing-file", test_missing_file);
    g_test_add_func("/config/device-values", test_device_values);
    g_test_add_func("/config/parsers", test_parsers);
    g_test_add_func("/config/log-spec", test_log_spec);
    g_test_add_func("/config/mhz", test_mhz);
    return g_test_run();
}
