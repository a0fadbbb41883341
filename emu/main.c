/* nicemu: parse the configuration, build the PC, run it, report. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/pc/pc.h"
#include "emu/compare.h"
#include "emu/config.h"
#include "emu/outfile.h"
#include "emu/pc.h"
#include "emu/profiler.h"
#include "emu/run.h"

static int config_error(GError *err)
{
    fprintf(stderr, "nicemu: error: %s\n", err->message);
    g_error_free(err);
    return 2;
}

/* With --rom: what a CPU test ROM reported, on port 0xE9 and as POST codes. */
static void print_rom_summary(const nm_pc_devices *devs)
{
    size_t count;
    const uint8_t *codes = nm_postcode_codes(devs->postcode, &count);
    fprintf(stderr,
            "nicemu: POST codes (%" G_GUINT64_FORMAT "):", nm_postcode_total(devs->postcode));
    for (size_t i = 0; i < count && i < 256; i++)
        fprintf(stderr, " %02x", codes[i]);
    fprintf(stderr, "%s\n", count > 256 ? " ..." : "");
}

/* The network part of the report as text: each NIC (a device that takes a
 * net= key) and its backend and link, then the buses' wait time. */
static void print_network_report(nm_machine *m, FILE *out)
{
    nm_report *rep = NULL;
    for (guint i = 0; i < m->devices->len; i++) {
        nm_device_instance *inst = m->devices->pdata[i];
        bool is_nic = false;
        for (const char *const *k = inst->cls->keys; k && *k; k++)
            is_nic |= !strcmp(*k, "net");
        if (!is_nic) continue;
        if (!rep) {
            rep = nm_report_new();
            nm_machine_report(m, rep);
        }
        nm_report_print_sections(rep, inst->name, out);
    }
    if (rep) nm_report_print_sections(rep, "isa", out);
    nm_report_free(rep);
    fprintf(out, "nicemu: bus wait: %" G_GUINT64_FORMAT " CPU clocks (%.2f%% of the run)\n",
            m->clock.bus_wait_cycles,
            m->clock.cycles ? 100.0 * (double)m->clock.bus_wait_cycles / (double)m->clock.cycles
                            : 0.0);
}

static bool write_report(nm_machine *m, nm_profiler *prof, const nm_run_result *r, const char *path,
                         GError **err)
{
    nm_report *rep = nm_report_new();
    nm_run_report(m, r, rep);
    nm_machine_report(m, rep);
    nm_profiler_report(prof, rep);
    char *json = nm_report_json(rep);
    bool ok = nm_output_file_write("report-json", path, json, strlen(json), err);
    g_free(json);
    nm_report_free(rep);
    return ok;
}

int main(int argc, char **argv)
{
    /* Subcommands: several runs gathered into one table (emu/compare.c). */
    if (argc > 1 && (!strcmp(argv[1], "compare") || !strcmp(argv[1], "ab")))
        return nm_compare_main(argc - 1, argv + 1);
    nm_config *cfg = nm_config_new();
    GError *err = NULL;
    bool exit_now;
    if (!nm_config_parse_args(cfg, &argc, &argv, &exit_now, &err)) {
        nm_config_free(cfg);
        return config_error(err);
    }
    if (exit_now) {
        nm_config_free(cfg);
        return 0;
    }
    /* Every output is checked before the run: a long run's report is not
     * lost to a typo (capture and serial files are opened with the machine). */
    if (cfg->report_json && !nm_output_file_check("report-json", cfg->report_json, &err)) {
        nm_config_free(cfg);
        return config_error(err);
    }
    nm_pc_devices devs;
    nm_machine *m = nm_pc_new(cfg, &devs, &err);
    if (!m) {
        nm_config_free(cfg);
        return config_error(err);
    }
    nm_profiler *prof = nm_profiler_new(m, &err);
    if (!prof) {
        nm_machine_free(m);
        nm_config_free(cfg);
        return config_error(err);
    }
    nm_run_result r = nm_machine_run(m);
    nm_profiler_finish(prof);
    fflush(stdout);
    nm_run_print_summary(m, &r, stderr);
    print_network_report(m, stderr);
    nm_profiler_print(prof, stderr);
    if (cfg->rom) print_rom_summary(&devs);
    int status = nm_run_exit_status(&r);
    if (cfg->report_json && !write_report(m, prof, &r, cfg->report_json, &err)) {
        fprintf(stderr, "nicemu: error: %s\n", err->message);
        g_error_free(err);
        status = 2;
    }
    nm_profiler_free(prof);
    nm_machine_free(m);
    nm_config_free(cfg);
    return status;
}
