/* nicemu: parse the configuration, build the PC, run it, report. */
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/pc/pc.h"
#include "emu/compare.h"
#include "devices/video/vga.h"
#include "emu/config.h"
#include "emu/display.h"
#include "emu/measure.h"
#include "emu/outfile.h"
#include "emu/pc.h"
#include "emu/profiler.h"
#include "emu/run.h"
#include "emu/snapshot.h"
#include "emu/sweep.h"

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

/* A measurement window the guest printed in: the serial console's
 * characters cost the CPU their transmit time (Linux's console polls with
 * interrupts off), and at 9600 baud timer ticks are lost. */
static void warn_console_in_window(nm_machine *m, FILE *out)
{
    void *mk = nm_measure_of(m);
    if (!mk) return;
    nm_measure_window w;
    nm_measure_window_totals(mk, &w);
    if (!w.console_bytes) return;
    fprintf(out,
            "nicemu: warning: the guest wrote %" G_GUINT64_FORMAT
            " bytes to the serial port inside the measurement window: %" G_GUINT64_FORMAT
            " clocks of transmit time (%.1f%% of the window's clocks); boot with quiet and "
            "console=ttyS0,115200, print after the window closes\n",
            w.console_bytes, w.console_clocks,
            w.clocks ? 100.0 * (double)w.console_clocks / (double)w.clocks : 0.0);
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

/* --vga-dump: the text buffer as the screen shows it (devices/video/vga.h). */
static bool write_vga_dump(nm_machine *m, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "nicemu: error: vga-dump: %s: %s\n", path, g_strerror(errno));
        return false;
    }
    nm_vga_dump(nm_vga_of(m), f);
    if (fclose(f) != 0) {
        fprintf(stderr, "nicemu: error: vga-dump: %s: write failed\n", path);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    /* Subcommands: several runs gathered into one table (emu/compare.c). */
    if (argc > 1 && (!strcmp(argv[1], "compare") || !strcmp(argv[1], "ab")))
        return nm_compare_main(argc - 1, argv + 1);
    /* A matrix of runs through GNU parallel (emu/sweep.c). */
    if (argc > 1 && !strcmp(argv[1], "sweep")) return nm_sweep_main(argc - 1, argv + 1);
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
    if ((cfg->report_json && !nm_output_file_check("report-json", cfg->report_json, &err)) ||
        !nm_snapshot_check_config(cfg, &err)) {
        nm_config_free(cfg);
        return config_error(err);
    }
    nm_pc_devices devs;
    nm_machine *m = nm_pc_new(cfg, &devs, &err);
    if (!m) {
        nm_config_free(cfg);
        return config_error(err);
    }
    /* --restore loads the saved machine now; --save-state tries a save. */
    if (!nm_snapshot_setup(m, &err)) {
        nm_machine_free(m);
        nm_config_free(cfg);
        return config_error(err);
    }
    nm_profiler *prof = nm_profiler_new(m, &err);
    if (!prof) {
        nm_machine_free(m);
        nm_config_free(cfg);
        return config_error(err);
    }
    nm_display *display = nm_display_new(m, prof, &err);
    if (!display && err) {
        nm_profiler_free(prof);
        nm_machine_free(m);
        nm_config_free(cfg);
        return config_error(err);
    }
    g_autofree char *dump_dir = cfg->vga_dump ? g_path_get_dirname(cfg->vga_dump) : NULL;
    if (cfg->vga_dump && (!nm_vga_of(m) || access(dump_dir, W_OK) != 0)) {
        fprintf(stderr, "nicemu: error: vga-dump: %s\n",
                nm_vga_of(m) ? "its directory is missing or not writable"
                             : "the machine has no VGA");
        nm_display_free(display);
        nm_profiler_free(prof);
        nm_machine_free(m);
        nm_config_free(cfg);
        return 2;
    }
    nm_run_result r = nm_machine_run(m);
    nm_profiler_finish(prof);
    int status = nm_run_exit_status(&r);
    if (!nm_snapshot_finish(m, &err)) {
        fprintf(stderr, "nicemu: error: %s\n", err->message);
        g_clear_error(&err);
        status = 2;
    }
    if (!nm_display_finish(display, &err)) {
        fprintf(stderr, "nicemu: error: %s\n", err->message);
        g_clear_error(&err);
        status = 2;
    }
    if (cfg->vga_dump && !write_vga_dump(m, cfg->vga_dump)) status = 2;
    fflush(stdout);
    nm_run_print_summary(m, &r, stderr);
    print_network_report(m, stderr);
    warn_console_in_window(m, stderr);
    nm_profiler_print(prof, stderr);
    if (cfg->rom) print_rom_summary(&devs);
    if (cfg->report_json && !write_report(m, prof, &r, cfg->report_json, &err)) {
        fprintf(stderr, "nicemu: error: %s\n", err->message);
        g_error_free(err);
        status = 2;
    }
    nm_display_free(display);
    nm_profiler_free(prof);
    nm_machine_free(m);
    nm_config_free(cfg);
    return status;
}
