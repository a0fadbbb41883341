#include "emu/config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cpu/models.h"
#include "cpu/timing/boards.h"
#include "devices/registry.h"
#include "emu/core/device.h"
#include "emu/core/log.h"
#include "emu/outfile.h"

#define DEFAULT_RAM (32u << 20)
/* 2023-01-01 00:00:00 UTC: a fixed epoch, so RTC reads are reproducible. */
#define DEFAULT_RTC_EPOCH 1672531200u

nm_config *nm_config_new(void)
{
    nm_config *c = g_new0(nm_config, 1);
    c->cpu = g_strdup("486dx2-66");
    c->ram_bytes = DEFAULT_RAM;
    c->post_port = -1;
    c->rtc_epoch = DEFAULT_RTC_EPOCH;
    c->devices = g_ptr_array_new();
    return c;
}

void nm_config_free(nm_config *c)
{
    if (!c) return;
    g_free(c->cpu);
    g_free(c->fpu);
    g_free(c->kernel);
    g_free(c->initrd);
    g_free(c->append);
    g_free(c->rom);
    g_free(c->elf);
    g_free(c->serial);
    g_free(c->report_json);
    g_free(c->debug);
    g_free(c->cost_model);
    g_free(c->cost_from);
    g_free(c->mem_wait_states);
    g_free(c->dram_timing);
    g_free(c->board);
    g_free(c->l2);
    g_free(c->trace_range);
    g_free(c->trace_window);
    g_free(c->profile_from);
    g_free(c->profile_stack_region);
    g_free(c->profile_callers);
    g_free(c->profile_dist);
    g_free(c->symbols);
    g_free(c->system_map);
    g_free(c->measure_nic);
    g_free(c->display);
    g_free(c->screenshot);
    g_free(c->vga_dump);
    g_free(c->save_state);
    g_free(c->restore);
    g_free(c->mailbox);
    for (guint i = 0; i < c->devices->len; i++)
        nm_devcfg_free(c->devices->pdata[i]);
    g_ptr_array_free(c->devices, TRUE);
    g_free(c);
}

/* ---- the [machine] keys, one table for key-file and command line ------ */

typedef enum {
    KEY_STRING,
    KEY_CPU,
    KEY_MHZ,
    KEY_RAM,
    KEY_COUNT,
    KEY_TIME,
    KEY_BOOL,
    KEY_PORT,
    KEY_RANGE,
    KEY_WINDOW,
    KEY_DISPLAY,
    KEY_FPU,
    KEY_IRQ_LIST,
    KEY_LIST /* repeatable: each value appended, comma-separated */
} key_kind;

typedef struct {
    const char *name;
    key_kind kind;
    size_t offset;
    const char *arg_description; /* for --help */
    const char *help;
    /* Not part of the machine a snapshot holds (nm_config_identity): where
     * output goes, bounds, observers, the snapshot keys themselves. */
    bool run_only;
} machine_key;

#define FIELD(f) offsetof(nm_config, f)
#define RUN_ONLY true
static const machine_key machine_keys[] = {
    {"cpu", KEY_CPU, FIELD(cpu), "NAME", "CPU model (\"help\" lists them); default 486dx2-66",
     false},
    {"ram", KEY_RAM, FIELD(ram_bytes), "SIZE", "RAM size, e.g. 32M (1M to 2G); default 32M", false},
    {"mhz", KEY_MHZ, FIELD(cpu_mhz), "N",
     "a hypothetical core clock for the CPU model, in whole MHz (1 to 10000), its bus ratio "
     "kept: the bus and the board's memory scale with it, ISA, PCI, the wire and the devices "
     "do not (docs/cpu.md); reported as overridden",
     false},
    {"fpu", KEY_FPU, FIELD(fpu), "387|none",
     "a 386 model's coprocessor: an Intel387 DX or none (the default); the 486DX and Pentium "
     "models have theirs on chip, the 486SX none (docs/cpu.md)",
     false},
    {"kernel", KEY_STRING, FIELD(kernel), "FILE", "Linux bzImage to boot", RUN_ONLY},
    {"initrd", KEY_STRING, FIELD(initrd), "FILE[,FILE...]", "initramfs archive(s)", RUN_ONLY},
    {"append", KEY_STRING, FIELD(append), "TEXT", "kernel command line", false},
    {"rom", KEY_STRING, FIELD(rom), "FILE", "boot a raw ROM image instead of Linux", RUN_ONLY},
    {"elf", KEY_STRING, FIELD(elf), "FILE",
     "run a bare-metal ELF32 program (entered in flat 32-bit protected mode)", RUN_ONLY},
    {"serial", KEY_STRING, FIELD(serial), "FILE",
     "where the serial console (COM1) goes: stdout, none or a file; default stdout", RUN_ONLY},
    {"post-port", KEY_PORT, FIELD(post_port), "PORT", "also record POST codes written here", false},
    {"max-instructions", KEY_COUNT, FIELD(max_instructions), "N", "stop after N instructions",
     RUN_ONLY},
    {"max-virtual-time", KEY_TIME, FIELD(max_virtual_ns), "TIME",
     "stop at this virtual time (e.g. 10s, 500ms)", RUN_ONLY},
    {"report-json", KEY_STRING, FIELD(report_json), "FILE", "write the run report as JSON",
     RUN_ONLY},
    {"debug", KEY_STRING, FIELD(debug), "LIST", "log subsystems (\"help\" lists them)", RUN_ONLY},
    {"trace-range", KEY_RANGE, FIELD(trace_range), "LO-HI",
     "-d exec: only instructions at linear addresses LO..HI", RUN_ONLY},
    {"trace-window", KEY_WINDOW, FIELD(trace_window), "START,COUNT",
     "-d exec: only instructions number START..START+COUNT-1", RUN_ONLY},
    {"share-irq", KEY_IRQ_LIST, FIELD(share_irqs), "IRQ[,IRQ...]",
     "let two devices drive these IRQ lines (refused otherwise: ISA interrupts are not shared)",
     false},
    {"strict-isa", KEY_BOOL, FIELD(strict_isa), NULL, "386 models: #UD on 486-only instructions",
     false},
    {"no-poll-fast-forward", KEY_BOOL, FIELD(no_poll_fast_forward), NULL,
     "run every iteration of a guest's device poll loop (by default a loop proven to repeat "
     "itself exactly is done at once: docs/cpu.md)",
     RUN_ONLY},
    {"rtc-epoch", KEY_COUNT, FIELD(rtc_epoch), "SECONDS", "RTC start time, seconds since 1970",
     false},
    {"cost-model", KEY_STRING, FIELD(cost_model), "MODEL",
     "CPU cost model: auto (the CPU's family), none, 386, 486, pentium; default auto", false},
    {"cost-from", KEY_STRING, FIELD(cost_from), "WHEN",
     "when the cost model runs: boot, or marker (only inside the guest's measurement window, "
     "port 0x600); default marker",
     false},
    {"mem-wait-states", KEY_STRING, FIELD(mem_wait_states), "N",
     "386: wait states per DRAM bus cycle (default 2 at 33/40 MHz, 1 at 25 MHz)", false},
    {"dram-timing", KEY_STRING, FIELD(dram_timing), "F-B-B-B[/S]",
     "486/Pentium: DRAM burst timing (page hit) in bus clocks, overriding the board's (S: "
     "single transfer, default F)",
     false},
    {"board", KEY_STRING, FIELD(board), "NAME",
     "the motherboard class under the CPU: its L2, DRAM and write path as data "
     "(docs/boards.md); --board help lists them; default: the CPU model's own",
     false},
    {"l2", KEY_STRING, FIELD(l2), "SIZE|none",
     "486/Pentium: the board's external (second-level) cache size, overriding the board's "
     "(direct-mapped; its policy is the board's)",
     false},
    {"profile", KEY_BOOL, FIELD(profile), NULL,
     "print the profile (clocks per guest function) at the end of the run", RUN_ONLY},
    {"profile-top", KEY_COUNT, FIELD(profile_top), "N",
     "functions in the profile table and report (implies --profile); default 20", RUN_ONLY},
    {"profile-from", KEY_STRING, FIELD(profile_from), "WHEN",
     "what the profile covers: marker (the measurement window) or boot; default marker", RUN_ONLY},
    {"profile-stack-region", KEY_STRING, FIELD(profile_stack_region), "SIZE",
     "the guest's kernel stack size and alignment (one shadow call stack per task); 0: one "
     "shadow stack; default 8K (Linux i386)",
     RUN_ONLY},
    {"profile-callers", KEY_LIST, FIELD(profile_callers), "FN[,FN...]",
     "print each caller and callee of these guest functions, with calls and inclusive clocks, "
     "and their per-call distribution (repeatable; implies --profile)",
     RUN_ONLY},
    {"profile-dist", KEY_LIST, FIELD(profile_dist), "FN[,FN...]",
     "the per-call distribution of inclusive clocks for these guest functions too (the NIC's "
     "driver functions always have one; repeatable; implies --profile)",
     RUN_ONLY},
    {"symbols", KEY_STRING, FIELD(symbols), "FILE[@ADDR],...",
     "ELF files whose function symbols the profiler uses (ADDR: where the file's first "
     "segment is loaded)",
     RUN_ONLY},
    {"system-map", KEY_STRING, FIELD(system_map), "FILE",
     "the guest kernel's System.map; default: System.map beside --kernel", RUN_ONLY},
    {"measure-nic", KEY_STRING, FIELD(measure_nic), "NAME",
     "the NIC whose frames are the packets (device name like nic0, or model); default the "
     "first NIC",
     RUN_ONLY},
    {"display", KEY_DISPLAY, FIELD(display), "none|sdl",
     "sdl: a window showing the VGA text console and live counters (docs/display.md); "
     "default none",
     RUN_ONLY},
    {"screenshot", KEY_STRING, FIELD(screenshot), "FILE.png",
     "with --display sdl: write the window as a PNG at the end of the run", RUN_ONLY},
    {"vga-dump", KEY_STRING, FIELD(vga_dump), "FILE",
     "write the VGA text buffer as the screen shows it (cells in hex) at the end of the run",
     RUN_ONLY},
    {"save-state", KEY_STRING, FIELD(save_state), "FILE",
     "save the machine to FILE when the guest reaches its snapshot point (init: after it "
     "configured the network, before the workload; docs/snapshots.md)",
     RUN_ONLY},
    {"save-state-exit", KEY_BOOL, FIELD(save_state_exit), NULL,
     "with --save-state: end the run (status 0) once the state is saved", RUN_ONLY},
    {"restore", KEY_STRING, FIELD(restore), "FILE",
     "start from a machine saved with --save-state (same kernel, initrd and machine "
     "options), bit-identically to the run that saved it",
     RUN_ONLY},
    {"mailbox", KEY_STRING, FIELD(mailbox), "TEXT",
     "what the guest's mailbox (port 0x604) holds: init runs it as its workload "
     "(nicemu.run= syntax) after the snapshot point, instead of the command line's",
     RUN_ONLY},
};

static const machine_key *find_machine_key(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(machine_keys); i++)
        if (!strcmp(machine_keys[i].name, name)) return &machine_keys[i];
    return NULL;
}

static char *machine_key_names(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(machine_keys); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", machine_keys[i].name);
    return g_string_free(s, FALSE);
}

bool nm_config_set(nm_config *c, const char *origin, const char *key, const char *value,
                   GError **err)
{
    const machine_key *k = find_machine_key(key);
    if (!k) {
        g_autofree char *names = machine_key_names();
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                    "%s: unknown key '%s' (accepted: %s)", origin, key, names);
        return false;
    }
    void *field = (char *)c + k->offset;
    uint64_t v;
    switch (k->kind) {
    case KEY_STRING:
        g_free(*(char **)field);
        *(char **)field = g_strdup(value);
        return true;
    case KEY_LIST: {
        char *old = *(char **)field;
        if (!*value)
            return nm_config_bad_value(err, origin, key, value, "one or more names, e.g. a,b");
        *(char **)field = old ? g_strconcat(old, ",", value, NULL) : g_strdup(value);
        g_free(old);
        return true;
    }
    case KEY_CPU:
        if (!nm_cpu_model_find(value))
            return nm_config_bad_value(err, origin, key, value, nm_cpu_model_names());
        g_free(*(char **)field);
        *(char **)field = g_strdup(value);
        return true;
    case KEY_MHZ: /* NM_CPU_MHZ_MIN..NM_CPU_MHZ_MAX, no leading zero or sign */
        if (!nm_parse_u64(value, &v) || v < NM_CPU_MHZ_MIN || v > NM_CPU_MHZ_MAX || value[0] == '0')
            return nm_config_bad_value(err, origin, key, value,
                                       "a whole number of MHz from 1 to 10000, e.g. 400");
        *(uint32_t *)field = (uint32_t)v;
        return true;
    case KEY_RAM:
        if (!nm_parse_size(value, &v) || v < (1u << 20) || v > (2048ull << 20) || v % 4096)
            return nm_config_bad_value(err, origin, key, value,
                                       "a size from 1M to 2G in whole 4K pages, e.g. 32M");
        *(uint64_t *)field = v;
        return true;
    case KEY_COUNT:
        if (!nm_parse_u64(value, &v))
            return nm_config_bad_value(err, origin, key, value, "a non-negative integer");
        *(uint64_t *)field = v;
        return true;
    case KEY_TIME:
        if (!nm_parse_duration_ns(value, &v))
            return nm_config_bad_value(err, origin, key, value,
                                       "a duration with a unit: s, ms, us or ns, e.g. 10s");
        *(uint64_t *)field = v;
        return true;
    case KEY_BOOL:
        if (!strcmp(value, "true") || !strcmp(value, "1") || !strcmp(value, "yes"))
            *(bool *)field = true;
        else if (!strcmp(value, "false") || !strcmp(value, "0") || !strcmp(value, "no"))
            *(bool *)field = false;
        else
            return nm_config_bad_value(err, origin, key, value, "true, false");
        return true;
    case KEY_RANGE:
    case KEY_WINDOW: {
        uint64_t a, b;
        if (!nm_parse_pair(value, k->kind == KEY_RANGE ? '-' : ',', &a, &b) ||
            (k->kind == KEY_RANGE && (a > b || b > 0xffffffffu)))
            return nm_config_bad_value(err, origin, key, value,
                                       k->kind == KEY_RANGE
                                           ? "LO-HI, linear addresses, e.g. 0xc1000000-0xc1001000"
                                           : "START,COUNT, e.g. 1000000,500");
        g_free(*(char **)field);
        *(char **)field = g_strdup(value);
        return true;
    }
    case KEY_FPU:
        if (strcmp(value, "387") && strcmp(value, "none"))
            return nm_config_bad_value(err, origin, key, value, "387, none");
        g_free(*(char **)field);
        *(char **)field = g_strdup(value);
        return true;
    case KEY_DISPLAY:
        if (strcmp(value, "none") && strcmp(value, "sdl"))
            return nm_config_bad_value(err, origin, key, value, "none, sdl");
        g_free(*(char **)field);
        *(char **)field = strcmp(value, "none") ? g_strdup(value) : NULL;
        return true;
    case KEY_IRQ_LIST: {
        uint32_t mask = 0;
        g_auto(GStrv) words = g_strsplit(value, ",", -1);
        for (char **w = words; *w; w++) {
            if (!nm_parse_u64(*w, &v) || v > 15)
                return nm_config_bad_value(err, origin, key, value, "IRQ numbers 0-15, e.g. 4,9");
            mask |= 1u << v;
        }
        if (!mask)
            return nm_config_bad_value(err, origin, key, value, "IRQ numbers 0-15, e.g. 4,9");
        *(uint32_t *)field = mask;
        return true;
    }
    case KEY_PORT:
        if (!nm_parse_u64(value, &v) || v > 0xffff)
            return nm_config_bad_value(err, origin, key, value, "an I/O port from 0 to 0xffff");
        *(int *)field = (int)v;
        return true;
    }
    return false;
}

/* ---- the snapshot identity --------------------------------------------- */

static gint str_order(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *nm_config_identity(const nm_config *c)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(machine_keys); i++) {
        const machine_key *k = &machine_keys[i];
        if (k->run_only) continue;
        const void *field = (const char *)c + k->offset;
        g_string_append_printf(s, "%s=", k->name);
        switch (k->kind) {
        case KEY_STRING:
        case KEY_LIST:
        case KEY_CPU:
        case KEY_RANGE:
        case KEY_WINDOW:
        case KEY_FPU:
        case KEY_DISPLAY: {
            const char *v = *(char *const *)field;
            g_string_append(s, v ? v : "");
            break;
        }
        case KEY_MHZ:
        case KEY_IRQ_LIST: g_string_append_printf(s, "%u", *(const uint32_t *)field); break;
        case KEY_RAM:
        case KEY_COUNT:
        case KEY_TIME:
            g_string_append_printf(s, "%" G_GUINT64_FORMAT, *(const uint64_t *)field);
            break;
        case KEY_BOOL: g_string_append(s, *(const bool *)field ? "true" : "false"); break;
        case KEY_PORT: g_string_append_printf(s, "%d", *(const int *)field); break;
        }
        g_string_append_c(s, '\n');
    }
    for (guint i = 0; i < c->devices->len; i++) {
        const nm_devcfg *d = c->devices->pdata[i];
        GPtrArray *kv = g_ptr_array_new_with_free_func(g_free);
        for (guint j = 0; j < d->keys->len; j++) {
            const char *key = d->keys->pdata[j];
            /* Output files: where they go is the run's business, that a
             * capture is there is the machine's (its frames so far are in
             * the snapshot). */
            if (!strcmp(key, "file")) continue;
            g_ptr_array_add(kv, !strcmp(key, "capture")
                                    ? g_strdup(key)
                                    : g_strdup_printf("%s=%s", key, (char *)d->values->pdata[j]));
        }
        g_ptr_array_sort(kv, str_order);
        g_string_append_printf(s, "device %s=%s", d->name ? d->name : "?",
                               d->model ? d->model : "?");
        for (guint j = 0; j < kv->len; j++)
            g_string_append_printf(s, ",%s", (char *)kv->pdata[j]);
        g_string_append_c(s, '\n');
        g_ptr_array_free(kv, TRUE);
    }
    return g_string_free(s, FALSE);
}

/* ---- devices ---------------------------------------------------------- */

static nm_devcfg *devcfg_new(const char *origin, const char *name)
{
    nm_devcfg *d = g_new0(nm_devcfg, 1);
    d->origin = g_strdup(origin);
    d->name = g_strdup(name);
    d->keys = g_ptr_array_new_with_free_func(g_free);
    d->values = g_ptr_array_new_with_free_func(g_free);
    return d;
}

static char *class_key_names(const nm_device_class *cls)
{
    GString *s = g_string_new("model");
    for (const char *const *k = cls->keys; k && *k; k++)
        g_string_append_printf(s, ", %s", *k);
    return g_string_free(s, FALSE);
}

/* Checks the model and every key against the class. */
static bool devcfg_check(const nm_devcfg *d, GError **err)
{
    if (!d->model) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                    "%s: missing key 'model' (accepted: %s)", d->origin, nm_device_class_names());
        return false;
    }
    const nm_device_class *cls = nm_device_class_find(d->model);
    if (!cls)
        return nm_config_bad_value(err, d->origin, "model", d->model, nm_device_class_names());
    for (guint i = 0; i < d->keys->len; i++) {
        const char *key = d->keys->pdata[i];
        bool known = false;
        for (const char *const *k = cls->keys; k && *k && !known; k++)
            known = !strcmp(*k, key);
        if (!known) {
            g_autofree char *names = class_key_names(cls);
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                        "%s: unknown key '%s' for model %s (accepted: %s)", d->origin, key,
                        d->model, names);
            return false;
        }
        for (guint j = 0; j < i; j++) {
            if (!strcmp(d->keys->pdata[j], key)) {
                g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY, "%s: key '%s' given twice",
                            d->origin, key);
                return false;
            }
        }
    }
    return true;
}

static void devcfg_put(nm_devcfg *d, const char *key, const char *value)
{
    if (!strcmp(key, "model")) {
        g_free(d->model);
        d->model = g_strdup(value);
        return;
    }
    g_ptr_array_add(d->keys, g_strdup(key));
    g_ptr_array_add(d->values, g_strdup(value));
}

static bool class_accepts(const nm_device_class *cls, const char *key)
{
    for (const char *const *k = cls && cls->keys ? cls->keys : NULL; k && *k; k++)
        if (!strcmp(*k, key)) return true;
    return false;
}

/* "MODEL,key=value,...".  The backend named by net= has options of its own
 * ("net=peer,ip=10.0.0.9/24"): words after net= that the device does not
 * accept belong to the net= value. */
static nm_devcfg *devcfg_from_spec(const char *origin, const char *name, const char *spec,
                                   GError **err)
{
    nm_devcfg *d = devcfg_new(origin, name);
    gchar **parts = g_strsplit(spec, ",", -1);
    const nm_device_class *cls = parts[0] ? nm_device_class_find(parts[0]) : NULL;
    GString *net = NULL; /* the net= value while it may still grow */
    bool ok = true;
    for (gchar **p = parts; *p && ok; p++) {
        char *eq = strchr(*p, '=');
        if (p == parts && !eq) {
            devcfg_put(d, "model", *p);
            continue;
        }
        if (net) {
            g_autofree char *key = eq ? g_strndup(*p, (gsize)(eq - *p)) : NULL;
            if (!key || !class_accepts(cls, key)) {
                g_string_append_printf(net, ",%s", *p);
                continue;
            }
        }
        if (!eq || eq == *p) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                        "%s: '%s' is not key=value (form: MODEL,key=value,...)", origin, *p);
            ok = false;
        } else if (!strncmp(*p, "net=", 4)) {
            net = g_string_new(eq + 1);
        } else {
            *eq = '\0';
            devcfg_put(d, *p, eq + 1);
        }
    }
    g_strfreev(parts);
    if (net) {
        devcfg_put(d, "net", net->str);
        g_string_free(net, TRUE);
    }
    if (!ok || !devcfg_check(d, err)) {
        nm_devcfg_free(d);
        return NULL;
    }
    return d;
}

nm_devcfg *nm_devcfg_parse(const char *origin, const char *spec, GError **err)
{
    return devcfg_from_spec(origin, NULL, spec, err);
}

bool nm_config_add_device_spec(nm_config *c, const char *option, const char *spec, GError **err)
{
    g_autofree char *origin = g_strdup_printf("%s %s", option, spec);
    g_autofree char *name = g_strdup_printf("dev%u", c->devices->len);
    nm_devcfg *d = devcfg_from_spec(origin, name, spec, err);
    if (!d) return false;
    g_ptr_array_add(c->devices, d);
    return true;
}

/* GKeyFile merges a section written twice; two [machine] (or two [nic0])
 * sections are a mistake to report, with both lines. */
static bool check_sections_once(const char *path, GError **err)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) return true; /* GLib read it just now */
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; lines[i]; i++) {
        char *l = g_strstrip(lines[i]);
        size_t n = strlen(l);
        if (n < 2 || l[0] != '[' || l[n - 1] != ']') continue;
        g_autofree char *name = g_strndup(l + 1, n - 2);
        gpointer first = g_hash_table_lookup(seen, name);
        if (first) {
            g_autofree char *shown = nm_escape_for_message(name);
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                        "%s: section [%s] appears twice (lines %u and %u)", path, shown,
                        GPOINTER_TO_UINT(first), i + 1);
            return false;
        }
        g_hash_table_insert(seen, g_steal_pointer(&name), GUINT_TO_POINTER(i + 1));
    }
    return true;
}

bool nm_config_load_file(nm_config *c, const char *path, GError **err)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    GError *local = NULL;
    /* A FIFO or a device would block or never end: refuse it as --kernel does. */
    GStatBuf st;
    if (g_stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE,
                    "%s: cannot read configuration: not a regular file", path);
        return false;
    }
    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local)) {
        /* GLib quotes the offending line: a binary file's bytes are escaped. */
        g_autofree char *msg = nm_escape_for_message(local->message);
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: cannot read configuration: %s",
                    path, msg);
        g_error_free(local);
        return false;
    }
    if (!check_sections_once(path, err)) return false;
    gsize ngroups;
    g_auto(GStrv) groups = g_key_file_get_groups(kf, &ngroups);
    for (gsize g = 0; g < ngroups; g++) {
        gsize nkeys;
        g_auto(GStrv) keys = g_key_file_get_keys(kf, groups[g], &nkeys, NULL);
        g_autofree char *origin = g_strdup_printf("%s [%s]", path, groups[g]);
        bool is_machine = !strcmp(groups[g], "machine");
        nm_devcfg *d = is_machine ? NULL : devcfg_new(origin, groups[g]);
        for (gsize k = 0; k < nkeys; k++) {
            g_autofree char *value = g_key_file_get_string(kf, groups[g], keys[k], NULL);
            if (!value) value = g_strdup("");
            if (is_machine) {
                if (!nm_config_set(c, origin, keys[k], value, err)) return false;
            } else {
                devcfg_put(d, keys[k], value);
            }
        }
        if (d) {
            if (!devcfg_check(d, err)) {
                nm_devcfg_free(d);
                return false;
            }
            g_ptr_array_add(c->devices, d);
        }
    }
    return true;
}

/* ---- command line -------------------------------------------------------- */

typedef struct {
    GPtrArray *keys, *values; /* [machine] keys in command-line order */
    GPtrArray *device_specs;  /* "--nic", spec pairs */
    char *config_file;
    bool list_cpus, list_boards;
    bool list_debug;
} cli_state;

static gboolean on_machine_option(const gchar *option, const gchar *value, gpointer data,
                                  GError **err)
{
    (void)err;
    cli_state *st = data;
    const char *name = option + 2; /* "--ram" */
    if (!strcmp(option, "-d")) name = "debug";
    if (!strcmp(name, "cpu") && !strcmp(value, "help")) {
        st->list_cpus = true;
        return TRUE;
    }
    if (!strcmp(name, "board") && !strcmp(value, "help")) {
        st->list_boards = true;
        return TRUE;
    }
    if (!strcmp(name, "debug") && !strcmp(value, "help")) {
        st->list_debug = true;
        return TRUE;
    }
    g_ptr_array_add(st->keys, g_strdup(name));
    g_ptr_array_add(st->values, g_strdup(value ? value : "true"));
    return TRUE;
}

static gboolean on_device_option(const gchar *option, const gchar *value, gpointer data,
                                 GError **err)
{
    (void)err;
    cli_state *st = data;
    g_ptr_array_add(st->device_specs, g_strdup(option));
    g_ptr_array_add(st->device_specs, g_strdup(value));
    return TRUE;
}

static gboolean on_config_option(const gchar *option, const gchar *value, gpointer data,
                                 GError **err)
{
    (void)option;
    (void)err;
    cli_state *st = data;
    g_free(st->config_file);
    st->config_file = g_strdup(value);
    return TRUE;
}

bool nm_config_parse_args(nm_config *c, int *argc, char ***argv, bool *exit_now, GError **err)
{
    cli_state st = {.keys = g_ptr_array_new_with_free_func(g_free),
                    .values = g_ptr_array_new_with_free_func(g_free),
                    .device_specs = g_ptr_array_new_with_free_func(g_free)};
    *exit_now = false;

    /* Option entries generated from the key table (plus --config and --nic). */
    GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    GOptionEntry config_entry = {"config",
                                 'c',
                                 0,
                                 G_OPTION_ARG_CALLBACK,
                                 (gpointer)on_config_option,
                                 "Machine description key-file ([machine], one section per device)",
                                 "FILE"};
    g_array_append_val(entries, config_entry);
    for (size_t i = 0; i < G_N_ELEMENTS(machine_keys); i++) {
        const machine_key *k = &machine_keys[i];
        GOptionEntry e = {k->name,
                          0,
                          k->kind == KEY_BOOL ? G_OPTION_FLAG_NO_ARG : 0,
                          G_OPTION_ARG_CALLBACK,
                          (gpointer)on_machine_option,
                          k->help,
                          k->arg_description};
        if (!strcmp(k->name, "debug")) e.short_name = 'd';
        g_array_append_val(entries, e);
    }
    GOptionEntry nic_entry = {"nic",
                              0,
                              0,
                              G_OPTION_ARG_CALLBACK,
                              (gpointer)on_device_option,
                              "Add a NIC (repeatable), e.g. ne2000,io=0x300,irq=9,net=peer",
                              "MODEL[,key=value...]"};
    GOptionEntry dev_entry = {"device",
                              0,
                              0,
                              G_OPTION_ARG_CALLBACK,
                              (gpointer)on_device_option,
                              "Add any other device (repeatable)",
                              "MODEL[,key=value...]"};
    g_array_append_val(entries, nic_entry);
    g_array_append_val(entries, dev_entry);

    GOptionContext *ctx = g_option_context_new("- cycle-counted x86 PC emulator for NIC drivers");
    GOptionGroup *group =
        g_option_group_new("nicemu", "nicemu options", "nicemu options", &st, NULL);
    g_option_group_add_entries(group, (GOptionEntry *)(void *)entries->data);
    g_option_context_set_main_group(ctx, group);
    g_option_context_set_description(
        ctx, "A key-file ([machine] keys are the long options above without \"--\") is read "
             "first;\ncommand-line options override it.  Device models: see --nic help.\n");

    bool ok = g_option_context_parse(ctx, argc, argv, err);
    if (ok && st.list_cpus) {
        size_t n;
        const nm_cpu_model *m = nm_cpu_model_list(&n);
        for (size_t i = 0; i < n; i++) {
            const nm_board_preset *b = nm_board_preset_default(&m[i]);
            printf("%-12s %s (board %s)\n", m[i].name, m[i].description, b ? b->name : "-");
        }
        *exit_now = true;
    } else if (ok && st.list_boards) {
        size_t n;
        const nm_board_preset *b = nm_board_preset_list(&n);
        for (size_t i = 0; i < n; i++)
            printf("%-17s %s%s%s\n", b[i].name, b[i].description,
                   b[i].default_for[0] ? "; default for " : "", b[i].default_for);
        *exit_now = true;
    } else if (ok && st.list_debug) {
        printf("subsystems: all,%s\nform: -d cpu,ne2000=trace (levels: "
               "off,error,warn,info,debug,trace)\n",
               nm_log_subsystem_list());
        *exit_now = true;
    } else if (ok) {
        if (*argc > 1) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_KEY,
                        "command line: unexpected argument '%s' (see --help)", (*argv)[1]);
            ok = false;
        }
        if (ok && st.config_file) ok = nm_config_load_file(c, st.config_file, err);
        for (guint i = 0; ok && i < st.keys->len; i++)
            ok = nm_config_set(c, "command line", st.keys->pdata[i], st.values->pdata[i], err);
        for (guint i = 0; ok && i < st.device_specs->len; i += 2) {
            const char *opt = st.device_specs->pdata[i], *spec = st.device_specs->pdata[i + 1];
            if (!strcmp(spec, "help")) {
                for (const nm_device_class *const *cls = nm_device_class_list(); *cls; cls++) {
                    g_autofree char *keys = class_key_names(*cls);
                    printf("%-10s %s\n           keys: %s\n", (*cls)->name, (*cls)->help, keys);
                }
                *exit_now = true;
                break;
            }
            ok = nm_config_add_device_spec(c, opt, spec, err);
        }
        if (ok && c->debug) {
            char *bad = NULL;
            if (!nm_log_parse(c->debug, &bad)) {
                g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                            "debug: unknown subsystem or level '%s' (accepted: all,%s; levels "
                            "off,error,warn,info,debug,trace)",
                            bad, nm_log_subsystem_list());
                g_free(bad);
                ok = false;
            }
        }
    }
    g_option_context_free(ctx);
    g_array_free(entries, TRUE);
    g_ptr_array_free(st.keys, TRUE);
    g_ptr_array_free(st.values, TRUE);
    g_ptr_array_free(st.device_specs, TRUE);
    g_free(st.config_file);
    return ok;
}
