/* `nicemu sweep SPEC` (sweep.h, docs/sweeps.md).
 *
 * The C part reads and checks the spec, expands the matrix, hashes each
 * cell's inputs, writes the job list, runs GNU parallel on it and gathers the
 * reports into the table.  Each job is one shell line: xargs reads the cell's
 * arguments (one a line, cells/ID.args) and runs nicemu with them; the report
 * is renamed to cells/ID.json only when nicemu succeeded, so a present
 * cells/ID.json is always a finished cell. */
#include "emu/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/models.h"
#include "emu/compare.h"
#include "emu/config.h"

#define MAX_CELLS       100000
#define DEFAULT_RETRIES 2 /* parallel --retries: attempts per cell */
/* The real-mode header's magic "HdrS" (Linux Documentation/x86/boot.rst,
 * "The Real-Mode Kernel Header", offset 0x202), as emu/linux_boot.c checks. */
#define BZIMAGE_MAGIC_OFFSET 0x202

/* ---------------------------------------------------------- the spec */

typedef struct axis {
    char *name;        /* "kernel", "cpu", "board" or "WORKLOAD.key" */
    GPtrArray *values; /* as shown in the table (kernel: the label) */
    GPtrArray *paths;  /* kernel only: the files */
} axis;

typedef struct spec {
    char *path, *dir;
    GPtrArray *axes; /* axis*, in the order of the file */
    char *initrd, *run, *append;
    GPtrArray *options; /* fixed nicemu arguments */
    GPtrArray *metrics; /* report= names */
    int row_axis, col_axis;
    unsigned jobs;
    bool jobs_given;
    unsigned retries;
    char *hosts;    /* --sshloginfile */
    bool installed; /* remote=installed: hosts have nicemu and the files */
    /* snapshot=yes (or --snapshot): the workload goes in the guest's mailbox
     * and cells that differ only in it restore one saved boot
     * (docs/snapshots.md). */
    bool snapshot;
} spec;

/* Keys of [sweep] that are not axes. */
static const char *const sweep_keys[] = {"kernel",  "cpu",    "board",  "initrd",  "run",
                                         "append",  "report", "rows",   "columns", "jobs",
                                         "retries", "hosts",  "remote", "snapshot"};
/* nicemu options the sweep sets itself, so [options] may not. */
static const char *const own_options[] = {"kernel",          "initrd", "cpu",     "append",
                                          "report-json",     "board",  "mailbox", "save-state",
                                          "save-state-exit", "restore"};

/* A figure from a cell's report. */
typedef struct metric {
    const char *name, *help;
    const char *table_format; /* digits worth showing in the text table */
    const char *data_format;  /* and in the CSV and JSON */
    bool (*get)(GHashTable *rep, double *out);
} metric;

static double num(GHashTable *rep, const char *key, bool *have)
{
    const char *v = g_hash_table_lookup(rep, key);
    if (!v) {
        *have = false;
        return 0;
    }
    return g_ascii_strtod(v, NULL);
}

/* Busy clocks: the measurement window minus its idle (HLT) time, as compare. */
static double busy_clocks(GHashTable *rep, bool *have)
{
    return g_hash_table_lookup(rep, "packets/busy_clocks") ? num(rep, "packets/busy_clocks", have)
                                                           : num(rep, "window/clocks", have);
}

static double frames(GHashTable *rep, bool *have)
{
    return num(rep, "packets/tx_frames", have) + num(rep, "packets/rx_frames", have);
}

static bool get_clocks_per_packet(GHashTable *rep, double *out)
{
    bool have = true;
    double f = frames(rep, &have), c = busy_clocks(rep, &have);
    *out = f > 0 ? c / f : 0;
    return have && f > 0;
}

static bool get_insns_per_packet(GHashTable *rep, double *out)
{
    bool have = true;
    double f = frames(rep, &have), i = num(rep, "window/instructions", &have);
    *out = f > 0 ? i / f : 0;
    return have && f > 0;
}

static bool get_busy_clocks(GHashTable *rep, double *out)
{
    bool have = true;
    *out = busy_clocks(rep, &have);
    return have;
}

static bool get_window_clocks(GHashTable *rep, double *out)
{
    bool have = true;
    *out = num(rep, "window/clocks", &have);
    return have;
}

static bool get_frames(GHashTable *rep, double *out)
{
    bool have = true;
    *out = frames(rep, &have);
    return have;
}

static bool get_bus_wait_share(GHashTable *rep, double *out)
{
    bool have = true;
    *out = num(rep, "packets/bus_wait_share", &have);
    return have;
}

/* Payload the peer received over the window's virtual time (1 KB = 1000
 * bytes, as the guest's ttcp prints it). */
static bool get_kbytes_per_s(GHashTable *rep, double *out)
{
    bool have = true;
    double bytes = num(rep, "dev0.peer/tcp_bytes", &have),
           ns = num(rep, "window/virtual_ns", &have);
    *out = ns > 0 ? bytes / ns * 1e6 : 0;
    return have && ns > 0;
}

static const metric metrics[] = {
    {"clocks_per_packet", "busy CPU clocks in the window per frame", "%.1f", "%.3f",
     get_clocks_per_packet},
    {"instructions_per_packet", "instructions in the window per frame", "%.1f", "%.3f",
     get_insns_per_packet},
    {"busy_clocks", "window clocks minus idle (HLT) clocks", "%.0f", "%.0f", get_busy_clocks},
    {"window_clocks", "clocks in the measurement window", "%.0f", "%.0f", get_window_clocks},
    {"frames", "frames the NIC moved in the window", "%.0f", "%.0f", get_frames},
    {"bus_wait_share", "share of window clocks in bus wait states", "%.4f", "%.5f",
     get_bus_wait_share},
    {"kbytes_per_s", "TCP payload the peer received per virtual second (KB = 1000 B)", "%.2f",
     "%.3f", get_kbytes_per_s},
};

static const metric *metric_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++)
        if (!strcmp(metrics[i].name, name)) return &metrics[i];
    return NULL;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i])) return true;
    return false;
}

static void axis_free(axis *a)
{
    g_free(a->name);
    g_ptr_array_free(a->values, TRUE);
    if (a->paths) g_ptr_array_free(a->paths, TRUE);
    g_free(a);
}

static void spec_free(spec *s)
{
    g_free(s->path);
    g_free(s->dir);
    g_ptr_array_free(s->axes, TRUE);
    g_free(s->initrd);
    g_free(s->run);
    g_free(s->append);
    g_ptr_array_free(s->options, TRUE);
    g_ptr_array_free(s->metrics, TRUE);
    g_free(s->hosts);
}

/* A path of the spec: relative to the spec file's directory. */
static char *spec_path(const spec *s, const char *p)
{
    return g_canonicalize_filename(p, s->dir);
}

static int axis_index(const spec *s, const char *name)
{
    for (guint i = 0; i < s->axes->len; i++)
        if (!strcmp(((axis *)s->axes->pdata[i])->name, name)) return (int)i;
    return -1;
}

static char *accepted_metrics(void)
{
    GString *o = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++)
        g_string_append_printf(o, "%s%s", i ? ", " : "", metrics[i].name);
    g_string_append(o, ", or SECTION/KEY of the report");
    return g_string_free(o, FALSE);
}

/* A bzImage?  Checked up front, not after the sweep has started. */
static bool is_bzimage(const char *path)
{
    char hdr[BZIMAGE_MAGIC_OFFSET + 4];
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    bool ok = fread(hdr, 1, sizeof hdr, f) == sizeof hdr &&
              !memcmp(hdr + BZIMAGE_MAGIC_OFFSET, "HdrS", 4);
    fclose(f);
    return ok;
}

/* Reads and checks the spec; on error *msg says what and where. */
static bool spec_load(spec *s, const char *path, char **msg)
{
    memset(s, 0, sizeof *s);
    s->path = g_strdup(path);
    g_autofree char *rel_dir = g_path_get_dirname(path);
    s->dir = g_canonicalize_filename(rel_dir, NULL); /* the jobs run in another directory */
    s->axes = g_ptr_array_new_with_free_func((GDestroyNotify)axis_free);
    s->options = g_ptr_array_new_with_free_func(g_free);
    s->metrics = g_ptr_array_new_with_free_func(g_free);
    s->jobs = g_get_num_processors();
    s->retries = DEFAULT_RETRIES;
    g_autoptr(GKeyFile) kf = g_key_file_new();
    GError *e = NULL;
    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e)) {
        *msg = g_strdup_printf("%s: cannot read the sweep spec: %s", path, e->message);
        g_error_free(e);
        return false;
    }
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                                     \
        *msg = g_strdup_printf("%s %s", path, what_);                                              \
        return false;                                                                              \
    } while (0)
    g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
    for (char **g = groups; *g; g++)
        if (strcmp(*g, "sweep") && strcmp(*g, "options"))
            FAIL("[%s]: unknown section (accepted: [sweep], [options])", *g);
    if (!g_key_file_has_group(kf, "sweep")) FAIL("has no [sweep] section");

    g_auto(GStrv) keys = g_key_file_get_keys(kf, "sweep", NULL, NULL);
    for (char **k = keys; *k; k++) {
        g_autofree char *raw = g_key_file_get_string(kf, "sweep", *k, NULL);
        if (!raw) FAIL("[sweep]: %s: cannot read the value", *k);
        char *val = g_strstrip(raw);
        bool is_axis =
            !strcmp(*k, "kernel") || !strcmp(*k, "cpu") || !strcmp(*k, "board") || strchr(*k, '.');
        if (!is_axis && !in_list(*k, sweep_keys, G_N_ELEMENTS(sweep_keys))) {
            g_autofree char *acc = g_strjoinv(", ", (char **)sweep_keys);
            FAIL("[sweep]: unknown key '%s' (accepted: %s, or WORKLOAD.KEY of nicemu.run)", *k,
                 acc);
        }
        if (!*val) FAIL("[sweep]: %s: empty value", *k);
        if (strchr(val, '\n')) FAIL("[sweep]: %s: value has a line break", *k);
        if (is_axis) {
            if (strchr(*k, '.') && (*k[0] == '.' || (*k)[strlen(*k) - 1] == '.'))
                FAIL("[sweep]: '%s': an axis of nicemu.run is WORKLOAD.KEY (ttcp.buflen)", *k);
            axis *a = g_new0(axis, 1);
            a->name = g_strdup(*k);
            a->values = g_ptr_array_new_with_free_func(g_free);
            g_ptr_array_add(s->axes, a);
            g_auto(GStrv) vals = g_strsplit(val, ",", -1);
            for (char **v = vals; *v; v++) {
                char *item = g_strstrip(*v);
                if (!*item) FAIL("[sweep]: %s: empty item in '%s'", *k, val);
                if (strpbrk(item, "'\"\t"))
                    FAIL("[sweep]: %s: '%s': quotes and tabs are not accepted in values", *k, item);
                char *label = g_strdup(item);
                if (!strcmp(*k, "kernel")) {
                    /* LABEL:PATH, or PATH (labelled by its directory's name) */
                    char *colon = strchr(item, ':');
                    g_autofree char *file = NULL;
                    if (colon && colon > item && !memchr(item, '/', (size_t)(colon - item))) {
                        g_free(label);
                        label = g_strndup(item, (size_t)(colon - item));
                        file = spec_path(s, colon + 1);
                    } else {
                        file = spec_path(s, item);
                        g_free(label);
                        g_autofree char *d = g_path_get_dirname(file);
                        label = g_path_get_basename(d);
                    }
                    if (!g_file_test(file, G_FILE_TEST_IS_REGULAR)) {
                        g_free(label);
                        FAIL("[sweep]: kernel: %s: no such file", file);
                    }
                    if (!is_bzimage(file)) {
                        g_free(label);
                        FAIL("[sweep]: kernel: %s: not a bzImage (no HdrS header)", file);
                    }
                    if (!a->paths) a->paths = g_ptr_array_new_with_free_func(g_free);
                    g_ptr_array_add(a->paths, g_steal_pointer(&file));
                } else if (!strcmp(*k, "cpu") && !nm_cpu_model_find(item)) {
                    g_free(label);
                    FAIL("[sweep]: cpu: unknown CPU model '%s' (accepted: %s)", item,
                         nm_cpu_model_names());
                } else if (strchr(item, ' ') && strchr(*k, '.')) {
                    g_free(label);
                    FAIL("[sweep]: %s: '%s' has a space (the kernel command line would split it)",
                         *k, item);
                }
                for (guint i = 0; i < a->values->len; i++)
                    if (!strcmp(a->values->pdata[i], label)) {
                        g_autofree char *l = label;
                        FAIL("[sweep]: %s: '%s' given twice", *k, l);
                    }
                g_ptr_array_add(a->values, label);
            }
            continue;
        }
        if (!strcmp(*k, "initrd")) {
            s->initrd = spec_path(s, val);
            if (!g_file_test(s->initrd, G_FILE_TEST_IS_REGULAR))
                FAIL("[sweep]: initrd: %s: no such file", s->initrd);
        } else if (!strcmp(*k, "run"))
            s->run = g_strdup(val);
        else if (!strcmp(*k, "append"))
            s->append = g_strdup(val);
        else if (!strcmp(*k, "report")) {
            g_auto(GStrv) names = g_strsplit(val, ",", -1);
            for (char **n = names; *n; n++) {
                char *name = g_strstrip(*n);
                if (!metric_find(name) && !(strchr(name, '/') && name[0] != '/')) {
                    g_autofree char *acc = accepted_metrics();
                    FAIL("[sweep]: report: unknown figure '%s' (accepted: %s)", name, acc);
                }
                g_ptr_array_add(s->metrics, g_strdup(name));
            }
        } else if (!strcmp(*k, "jobs") || !strcmp(*k, "retries")) {
            char *end;
            unsigned long v = strtoul(val, &end, 10);
            bool jobs = !strcmp(*k, "jobs");
            if (*end || v > 1000 || (jobs && v == 0))
                FAIL("[sweep]: %s: bad value '%s' (accepted: %s)", *k, val,
                     jobs ? "1 to 1000" : "0 to 1000");
            if (jobs) {
                s->jobs = (unsigned)v;
                s->jobs_given = true;
            } else
                s->retries = (unsigned)v;
        } else if (!strcmp(*k, "hosts")) {
            s->hosts = spec_path(s, val);
            if (!g_file_test(s->hosts, G_FILE_TEST_IS_REGULAR))
                FAIL("[sweep]: hosts: %s: no such file", s->hosts);
        } else if (!strcmp(*k, "snapshot")) {
            if (!strcmp(val, "yes") || !strcmp(val, "true") || !strcmp(val, "1"))
                s->snapshot = true;
            else if (strcmp(val, "no") && strcmp(val, "false") && strcmp(val, "0"))
                FAIL("[sweep]: snapshot: bad value '%s' (accepted: yes, no)", val);
        } else if (!strcmp(*k, "remote")) {
            if (strcmp(val, "transfer") && strcmp(val, "installed"))
                FAIL("[sweep]: remote: bad value '%s' (accepted: transfer, installed)", val);
            s->installed = !strcmp(val, "installed");
        }
    }
    if (axis_index(s, "kernel") < 0) FAIL("[sweep]: kernel= is missing (the kernels to run)");
    if (axis_index(s, "cpu") < 0) FAIL("[sweep]: cpu= is missing (the CPU models to run)");
    if (!s->metrics->len) g_ptr_array_add(s->metrics, g_strdup("clocks_per_packet"));

    /* Axes of nicemu.run need a run= whose workloads they name. */
    g_auto(GStrv) workloads = NULL;
    if (s->run) {
        g_autofree char *names = g_strndup(s->run, strcspn(s->run, ","));
        workloads = g_strsplit(names, "+", -1);
    }
    for (guint i = 0; i < s->axes->len; i++) {
        const char *name = ((axis *)s->axes->pdata[i])->name;
        const char *dot = strchr(name, '.');
        if (!dot) continue;
        if (!s->run) FAIL("[sweep]: axis %s needs run= (the nicemu.run workload)", name);
        g_autofree char *w = g_strndup(name, (size_t)(dot - name));
        if (!g_strv_contains((const char *const *)workloads, w))
            FAIL("[sweep]: axis %s: workload '%s' is not in run=%s", name, w, s->run);
    }
    if (s->append && strstr(s->append, "nicemu.run=") && s->run)
        FAIL("[sweep]: append has nicemu.run= and run= is given too (keep it in run=)");
    if (s->snapshot && !s->run)
        FAIL("[sweep]: snapshot=yes needs run= (the workload the guest reads from its mailbox)");

    /* Table layout: columns default to the kernels, rows to the first
     * workload axis (else the CPU models). */
    g_autofree char *rows = g_key_file_get_string(kf, "sweep", "rows", NULL);
    g_autofree char *cols = g_key_file_get_string(kf, "sweep", "columns", NULL);
    s->col_axis = axis_index(s, cols ? g_strstrip(cols) : "kernel");
    if (s->col_axis < 0) FAIL("[sweep]: columns: '%s' is not an axis", cols);
    if (rows) {
        s->row_axis = axis_index(s, g_strstrip(rows));
        if (s->row_axis < 0) FAIL("[sweep]: rows: '%s' is not an axis", rows);
    } else {
        s->row_axis = -1;
        for (guint i = 0; i < s->axes->len && s->row_axis < 0; i++)
            if (strchr(((axis *)s->axes->pdata[i])->name, '.') ||
                !strcmp(((axis *)s->axes->pdata[i])->name, "board"))
                s->row_axis = (int)i;
        if (s->row_axis < 0) s->row_axis = axis_index(s, "cpu");
    }
    if (s->row_axis == s->col_axis) FAIL("[sweep]: rows and columns are the same axis");

    /* [options]: long options without "--"; nic= and device= take a list
     * (separated by ';') for several devices; an empty value is a flag. */
    g_auto(GStrv) okeys = g_key_file_get_keys(kf, "options", NULL, NULL);
    for (char **k = okeys; okeys && *k; k++) {
        if (in_list(*k, own_options, G_N_ELEMENTS(own_options)))
            FAIL("[options]: %s is set by the sweep (give it in [sweep])", *k);
        g_auto(GStrv) vals = g_key_file_get_string_list(kf, "options", *k, NULL, NULL);
        bool multi = !strcmp(*k, "nic") || !strcmp(*k, "device");
        g_autofree char *whole = g_key_file_get_string(kf, "options", *k, NULL);
        if (strchr(whole, '\n')) FAIL("[options]: %s: value has a line break", *k);
        if (multi) {
            for (char **v = vals; *v; v++) {
                g_ptr_array_add(s->options, g_strdup_printf("--%s", *k));
                g_ptr_array_add(s->options, g_strdup(g_strstrip(*v)));
            }
        } else {
            g_ptr_array_add(s->options, g_strdup_printf("--%s", *k));
            if (*g_strstrip(whole)) g_ptr_array_add(s->options, g_strdup(whole));
        }
    }
    return true;
#undef FAIL
}

/* ---------------------------------------------------------- cells */

typedef struct cell {
    guint *value;         /* index into each axis' values */
    char *id;             /* hash of every input */
    const char *kernel;   /* file */
    char *system_map;     /* beside the kernel, or NULL */
    GPtrArray *args;      /* nicemu arguments but --kernel/--initrd/--report-json */
    char *boot_id;        /* snapshot=yes: the saved boot it restores */
    GPtrArray *boot_args; /* and that boot's arguments (the cell's but the mailbox) */
    bool cached, ok;
    bool finished;      /* --resume: its job left cells/ID.json (not in the cache yet) */
    GHashTable *report; /* section/key -> text */
} cell;

static const char *cell_value(const spec *s, const cell *c, int ax)
{
    return ((axis *)s->axes->pdata[ax])->values->pdata[c->value[ax]];
}

static char *cell_name(const spec *s, const cell *c)
{
    GString *o = g_string_new(NULL);
    for (guint a = 0; a < s->axes->len; a++)
        g_string_append_printf(o, "%s%s=%s", a ? " " : "", ((axis *)s->axes->pdata[a])->name,
                               cell_value(s, c, (int)a));
    return g_string_free(o, FALSE);
}

/* sha256 of a file's contents (memoised: kernels repeat across cells). */
static char *file_hash(GHashTable *memo, const char *path)
{
    const char *known = g_hash_table_lookup(memo, path);
    if (known) return g_strdup(known);
    g_autoptr(GMappedFile) mf = g_mapped_file_new(path, FALSE, NULL);
    if (!mf) return NULL;
    char *h = g_compute_checksum_for_data(G_CHECKSUM_SHA256,
                                          (const guchar *)g_mapped_file_get_contents(mf),
                                          g_mapped_file_get_length(mf));
    g_hash_table_insert(memo, g_strdup(path), g_strdup(h));
    return h;
}

/* The cell's nicemu arguments, the run parameters added to the workload:
 * on the kernel command line, or with snapshot=yes in the mailbox (then
 * `boot_args` gets the arguments without it, those of the saved boot). */
static GPtrArray *cell_args(const spec *s, const cell *c, GPtrArray **boot_args)
{
    GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
    GString *append = g_string_new(s->append ? s->append : "");
    GString *work = g_string_new(NULL);
    if (s->run) {
        g_string_append(work, s->run);
        for (guint a = 0; a < s->axes->len; a++)
            if (strchr(((axis *)s->axes->pdata[a])->name, '.'))
                g_string_append_printf(work, ",%s=%s", ((axis *)s->axes->pdata[a])->name,
                                       cell_value(s, c, (int)a));
        if (!s->snapshot)
            g_string_append_printf(append, "%snicemu.run=%s", append->len ? " " : "", work->str);
    }
    g_ptr_array_add(args, g_strdup("--cpu"));
    g_ptr_array_add(args, g_strdup(cell_value(s, c, axis_index(s, "cpu"))));
    int board = axis_index(s, "board");
    if (board >= 0) {
        g_ptr_array_add(args, g_strdup("--board"));
        g_ptr_array_add(args, g_strdup(cell_value(s, c, board)));
    }
    if (append->len) {
        g_ptr_array_add(args, g_strdup("--append"));
        g_ptr_array_add(args, g_strdup(append->str));
    }
    g_string_free(append, TRUE);
    for (guint i = 0; i < s->options->len; i++)
        g_ptr_array_add(args, g_strdup(s->options->pdata[i]));
    *boot_args = NULL;
    if (s->snapshot) {
        *boot_args = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < args->len; i++)
            g_ptr_array_add(*boot_args, g_strdup(args->pdata[i]));
        g_ptr_array_add(args, g_strdup("--mailbox"));
        g_ptr_array_add(args, g_strdup(work->str));
    }
    g_string_free(work, TRUE);
    return args;
}

/* Would nicemu accept these arguments?  Checked for every cell before
 * anything runs, with nicemu's own option parser. */
static bool cell_check(const spec *s, const cell *c, char **msg)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "nicemu");
    g_ptr_array_add(argv, "--kernel");
    g_ptr_array_add(argv, (char *)c->kernel);
    if (s->initrd) {
        g_ptr_array_add(argv, "--initrd");
        g_ptr_array_add(argv, s->initrd);
    }
    for (guint i = 0; i < c->args->len; i++)
        g_ptr_array_add(argv, c->args->pdata[i]);
    g_ptr_array_add(argv, NULL);
    char **copy = g_strdupv((char **)argv->pdata);
    char **parse = g_memdup2(copy, sizeof(char *) * (argv->len));
    int argc = (int)argv->len - 1;
    nm_config *cfg = nm_config_new();
    GError *e = NULL;
    bool exit_now = false;
    bool ok = nm_config_parse_args(cfg, &argc, &parse, &exit_now, &e);
    if (!ok) {
        *msg = g_strdup_printf("%s: the options of a cell: %s", s->path, e->message);
        g_error_free(e);
    } else if (exit_now) {
        *msg = g_strdup_printf("%s: [options] asks for a help listing, not a run", s->path);
        ok = false;
    }
    nm_config_free(cfg);
    g_free(parse);
    g_strfreev(copy);
    g_ptr_array_free(argv, TRUE);
    return ok;
}

static cell *cells_expand(const spec *s, const char *exe, guint *n_out, char **msg)
{
    guint n = 1;
    for (guint a = 0; a < s->axes->len; a++) {
        n *= ((axis *)s->axes->pdata[a])->values->len;
        if (n > MAX_CELLS) {
            *msg = g_strdup_printf("%s: more than %d cells", s->path, MAX_CELLS);
            return NULL;
        }
    }
    GHashTable *memo = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_autofree char *exe_hash = file_hash(memo, exe);
    g_autofree char *initrd_hash = s->initrd ? file_hash(memo, s->initrd) : g_strdup("-");
    cell *cells = g_new0(cell, n);
    int kax = axis_index(s, "kernel");
    bool ok = exe_hash && initrd_hash;
    if (!ok) *msg = g_strdup_printf("cannot read %s", exe_hash ? s->initrd : exe);
    for (guint i = 0; i < n && ok; i++) {
        cell *c = &cells[i];
        c->value = g_new0(guint, s->axes->len);
        guint rest = i; /* the last axis varies fastest */
        for (int a = (int)s->axes->len - 1; a >= 0; a--) {
            guint len = ((axis *)s->axes->pdata[a])->values->len;
            c->value[a] = rest % len;
            rest /= len;
        }
        c->kernel = ((axis *)s->axes->pdata[kax])->paths->pdata[c->value[kax]];
        g_autofree char *kdir = g_path_get_dirname(c->kernel);
        c->system_map = g_build_filename(kdir, "System.map", NULL);
        if (!g_file_test(c->system_map, G_FILE_TEST_IS_REGULAR))
            g_clear_pointer(&c->system_map, g_free);
        c->args = cell_args(s, c, &c->boot_args);
        g_autofree char *kh = file_hash(memo, c->kernel);
        g_autofree char *mh = c->system_map ? file_hash(memo, c->system_map) : g_strdup("-");
        if (!kh || !mh) {
            *msg = g_strdup_printf("cannot read %s", kh ? c->system_map : c->kernel);
            ok = false;
            break;
        }
        if (c->boot_args) {
            /* The boot: everything it is made from (not the System.map). */
            GString *in = g_string_new("nicemu sweep boot 1\n");
            g_string_append_printf(in, "nicemu %s\nkernel %s\ninitrd %s\n", exe_hash, kh,
                                   initrd_hash);
            for (guint k = 0; k < c->boot_args->len; k++)
                g_string_append_printf(in, "arg %s\n", (char *)c->boot_args->pdata[k]);
            char *full = g_compute_checksum_for_string(G_CHECKSUM_SHA256, in->str, -1);
            c->boot_id = g_strndup(full, 24);
            g_free(full);
            g_string_free(in, TRUE);
            g_ptr_array_add(c->args, g_strdup("--restore"));
            g_ptr_array_add(c->args, g_strdup_printf("boots/%s.state", c->boot_id));
        }
        if (!cell_check(s, c, msg)) {
            ok = false;
            break;
        }
        GString *in = g_string_new("nicemu sweep cell 1\n");
        g_string_append_printf(in, "nicemu %s\nkernel %s\nsystem.map %s\ninitrd %s\n", exe_hash, kh,
                               mh, initrd_hash);
        for (guint k = 0; k < c->args->len; k++)
            g_string_append_printf(in, "arg %s\n", (char *)c->args->pdata[k]);
        char *full = g_compute_checksum_for_string(G_CHECKSUM_SHA256, in->str, -1);
        c->id = g_strndup(full, 24);
        g_free(full);
        g_string_free(in, TRUE);
    }
    g_hash_table_destroy(memo);
    if (!ok) {
        for (guint i = 0; i < n; i++) {
            g_free(cells[i].value);
            g_free(cells[i].system_map);
            g_free(cells[i].id);
            g_free(cells[i].boot_id);
            if (cells[i].args) g_ptr_array_free(cells[i].args, TRUE);
            if (cells[i].boot_args) g_ptr_array_free(cells[i].boot_args, TRUE);
        }
        g_free(cells);
        return NULL;
    }
    *n_out = n;
    return cells;
}

/* ---------------------------------------------------------- files */

static bool write_file(const char *path, const char *text)
{
    GError *e = NULL;
    if (!g_file_set_contents(path, text, -1, &e)) {
        fprintf(stderr, "nicemu sweep: error: %s\n", e->message);
        g_error_free(e);
        return false;
    }
    return true;
}

static char *cache_dir(void)
{
    const char *root = g_getenv("NICEMU_CACHE");
    if (root && *root) return g_build_filename(root, "sweep", NULL);
    return g_build_filename(g_get_user_cache_dir(), "nicemu", "sweep", NULL);
}

/* A path with "/./" before its last component: parallel --transferfile
 * puts what follows "/./" in the remote job's directory. */
static char *transfer_path(const char *path)
{
    g_autofree char *d = g_path_get_dirname(path);
    g_autofree char *b = g_path_get_basename(path);
    return g_strdup_printf("%s/./%s", d, b);
}

/* The job's shell line, for parallel (with its {N} columns) or literal: a
 * cell's run, or (boot) the run that saves the boot its cells restore. */
static char *job_line(const spec *s, const char *nicemu, const char *kernel, const char *initrd,
                      const char *id, bool boot)
{
    GString *o = g_string_new(NULL);
    const char *dir = boot ? "boots" : "cells";
    g_string_append_printf(o, "xargs -d '\\n' -a %s/%s.args %s --kernel %s", dir, id, nicemu,
                           kernel);
    if (s->initrd) g_string_append_printf(o, " --initrd %s", initrd);
    if (boot)
        g_string_append_printf(o,
                               " --save-state boots/%s.part.state --save-state-exit "
                               ">boots/%s.log 2>&1 && mv boots/%s.part.state boots/%s.state",
                               id, id, id, id);
    else
        g_string_append_printf(o,
                               " --report-json cells/%s.part.json >cells/%s.log 2>&1 && "
                               "mv cells/%s.part.json cells/%s.json",
                               id, id, id, id);
    return g_string_free(o, FALSE);
}

/* ---------------------------------------------------------- running */

typedef struct progress {
    guint total, cached, failed, done;
    gint64 start;
    guint done_at_start;
    char *joblog;
    const char *what;   /* "cell" or "boot" */
    bool quiet;         /* --quiet: no progress lines */
    GHashTable *names;  /* job ID -> what it runs ("kernel=stock cpu=..."), or NULL */
    char *plog;         /* parallel's output: a start line per job */
    gint64 plog_off;    /* read up to here */
    GHashTable *seen;   /* job IDs started */
    char *last;         /* the last one started: its name */
    GPtrArray *started; /* "cell 3/8: NAME" lines not printed yet */
    guint shown;        /* done + 1000 x failed when last printed (G_MAXUINT: never) */
} progress;

#define START_MARK "nicemu-sweep-start "

/* Counts the joblog's finished cells (a retried cell's last line wins). */
static void progress_read(progress *p)
{
    gchar *text = NULL;
    if (!g_file_get_contents(p->joblog, &text, NULL, NULL)) return;
    GHashTable *seqs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_free(text);
    for (char **l = lines; *l; l++) {
        g_auto(GStrv) f = g_strsplit(*l, "\t", 9);
        if (g_strv_length(f) < 8 || !strcmp(f[0], "Seq")) continue;
        bool ok = !strcmp(f[6], "0") && !strcmp(f[7], "0");
        g_hash_table_replace(seqs, g_strdup(f[0]), GINT_TO_POINTER(ok ? 1 : 2));
    }
    guint done = 0, failed = 0;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, seqs);
    while (g_hash_table_iter_next(&it, &k, &v))
        GPOINTER_TO_INT(v) == 1 ? done++ : failed++;
    g_hash_table_destroy(seqs);
    p->done = done;
    p->failed = failed;
    /* The jobs started: each job line begins by printing its ID, and
     * parallel passes it on at once (--line-buffer), from ssh hosts too. */
    FILE *f = p->plog ? fopen(p->plog, "r") : NULL;
    if (!f) return;
    char line[512];
    if (fseek(f, (long)p->plog_off, SEEK_SET) == 0)
        while (fgets(line, sizeof line, f)) {
            size_t len = strlen(line);
            if (!len || line[len - 1] != '\n') break; /* a line still being written */
            p->plog_off += (gint64)len;
            if (strncmp(line, START_MARK, strlen(START_MARK))) continue;
            line[len - 1] = 0;
            const char *id = line + strlen(START_MARK);
            if (g_hash_table_contains(p->seen, id)) continue; /* a retry */
            g_hash_table_add(p->seen, g_strdup(id));
            const char *name = p->names ? g_hash_table_lookup(p->names, id) : NULL;
            g_free(p->last);
            p->last = g_strdup(name ? name : id);
            g_ptr_array_add(p->started, g_strdup_printf("%s %u/%u: %s", p->what,
                                                        p->cached + g_hash_table_size(p->seen),
                                                        p->total, p->last));
        }
    fclose(f);
}

/* Which cell of how many is running, and how many are done: on a terminal
 * one line rewritten in place, else a line as each starts and as the
 * count of those done changes. */
static void progress_print(progress *p)
{
    bool tty = isatty(2), news = p->started->len > 0;
    guint key = p->done + p->failed * 1000;
    if (p->quiet || (key == p->shown && !news)) return;
    guint started = p->cached + g_hash_table_size(p->seen);
    for (guint i = 0; !tty && i < p->started->len; i++)
        fprintf(stderr, "nicemu sweep: %s\n", (char *)p->started->pdata[i]);
    g_ptr_array_set_size(p->started, 0);
    if (!tty && key == p->shown) return;
    p->shown = key;
    guint done = p->cached + p->done;
    double elapsed = (double)(g_get_monotonic_time() - p->start) / 1e6;
    guint ran = p->done > p->done_at_start ? p->done - p->done_at_start : 0;
    guint left = p->total > done + p->failed ? p->total - done - p->failed : 0;
    char eta[32] = "?";
    if (ran && left) {
        double sec = elapsed / ran * left;
        g_snprintf(eta, sizeof eta, "%d:%02d", (int)sec / 60, (int)sec % 60);
    } else if (!left)
        g_strlcpy(eta, "0:00", sizeof eta);
    if (tty && p->last)
        fprintf(stderr,
                "\r\033[Knicemu sweep: %s %u/%u: %s; %u/%u %ss done (%u from the cache), "
                "%u failed, ETA %s",
                p->what, started, p->total, p->last, done, p->total, p->what, p->cached, p->failed,
                eta);
    else
        fprintf(stderr, "%snicemu sweep: %u/%u %ss done (%u from the cache), %u failed, ETA %s%s",
                tty ? "\r\033[K" : "", done, p->total, p->what, p->cached, p->failed, eta,
                tty ? "" : "\n");
    fflush(stderr);
}

/* Runs GNU parallel over jobs.tsv (boot: boots.tsv) in `out`; returns its
 * exit status. */
static int run_parallel(const spec *s, const char *out, const char *joblog, progress *p, bool boot)
{
    g_autofree char *tsv = g_build_filename(out, boot ? "boots.tsv" : "jobs.tsv", NULL);
    g_autofree char *plog = g_build_filename(out, "parallel.log", NULL);
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
#define ARG(x) g_ptr_array_add(argv, g_strdup(x))
    ARG("parallel");
    ARG("--will-cite");
    ARG("--colsep");
    ARG("\t");
    ARG("--joblog");
    ARG(joblog);
    /* Skips the cells that finished, reruns those that failed or were cut. */
    ARG("--resume-failed");
    ARG("--retries");
    g_ptr_array_add(argv, g_strdup_printf("%u", s->retries ? s->retries : 1));
    /* Output as it comes: the jobs' start lines (progress_read). */
    ARG("--line-buffer");
    if (!s->hosts || s->jobs_given) {
        ARG("-j");
        g_ptr_array_add(argv, g_strdup_printf("%u", s->jobs));
    }
    g_autofree char *cmd = NULL;
    if (s->hosts) {
        ARG("--sshloginfile");
        ARG(s->hosts);
        /* Each job in its own directory on the host, removed afterwards. */
        ARG("--workdir");
        ARG("...");
        ARG("--cleanup");
        ARG("--transferfile");
        ARG(boot ? "boots/{1}.args" : "cells/{1}.args");
        if (!s->installed)
            for (int col = 2; col <= 5; col++) {
                ARG("--transferfile");
                g_ptr_array_add(argv, g_strdup_printf("{%d}", col));
            }
        if (s->snapshot && !boot) { /* the saved boot the cell restores */
            ARG("--transferfile");
            ARG("{6}");
        }
        ARG("--return");
        ARG(boot ? "boots/{1}.state" : "cells/{1}.json");
        ARG("--return");
        ARG(boot ? "boots/{1}.log" : "cells/{1}.log");
        cmd = s->installed ? job_line(s, "nicemu", "{2}", "{3}", "{1}", boot)
                           : job_line(s, "./{4/}", "{2/}", "{3/}", "{1}", boot);
    } else
        cmd = job_line(s, "{4}", "{2}", "{3}", "{1}", boot);
    g_ptr_array_add(argv, g_strdup_printf("echo " START_MARK "{1}; %s", cmd));
    ARG("::::");
    ARG(tsv);
    g_ptr_array_add(argv, NULL);
#undef ARG
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(out) < 0) _exit(127);
        int fd = open(plog, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) {
            dup2(nul, 0);
            close(nul);
        }
        execvp("parallel", (char **)argv->pdata);
        fprintf(stderr, "nicemu sweep: error: cannot run parallel: %s\n", g_strerror(errno));
        _exit(127);
    }
    g_ptr_array_free(argv, TRUE);
    if (pid < 0) return -1;
    p->plog = g_strdup(plog);
    p->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    p->started = g_ptr_array_new_with_free_func(g_free);
    p->shown = G_MAXUINT;
    GStatBuf st0;
    p->plog_off = g_stat(plog, &st0) == 0 ? (gint64)st0.st_size : 0; /* earlier runs' lines */
    progress_read(p);
    p->done_at_start = p->done;
    int status = -1;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        progress_read(p);
        progress_print(p);
        if (r == pid) {
            status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            break;
        }
        if (r < 0 && errno != EINTR) break;
        g_usleep(300 * 1000);
    }
    if (isatty(2) && !p->quiet) fputc('\n', stderr);
    g_clear_pointer(&p->plog, g_free);
    g_clear_pointer(&p->seen, g_hash_table_destroy);
    g_clear_pointer(&p->last, g_free);
    g_clear_pointer(&p->started, g_ptr_array_unref);
    return status;
}

/* ---------------------------------------------------------- the table */

typedef struct figure {
    bool have;
    double value;
    const char *raw;    /* SECTION/KEY figures: the report's text */
    const metric *kind; /* the others */
} figure;

static figure cell_figure(const cell *c, const char *name)
{
    figure f = {0};
    if (!c->ok) return f;
    const metric *m = metric_find(name);
    if (m) {
        f.kind = m;
        f.have = m->get(c->report, &f.value);
        return f;
    }
    f.raw = g_hash_table_lookup(c->report, name);
    f.have = f.raw != NULL;
    if (f.have) f.value = g_ascii_strtod(f.raw, NULL);
    return f;
}

static void figure_text(GString *o, figure f, bool table)
{
    if (!f.have)
        g_string_append(o, table ? "-" : "");
    else if (f.raw && table && strpbrk(f.raw, ".eE") &&
             (g_ascii_isdigit(f.raw[0]) || f.raw[0] == '-'))
        g_string_append_printf(o, "%.1f", f.value); /* a report's double: the table's digits */
    else if (f.raw)
        g_string_append(o, f.raw);
    else
        g_string_append_printf(o, table ? f.kind->table_format : f.kind->data_format, f.value);
}

static void csv_field(GString *o, const char *s)
{
    bool quote = strpbrk(s, ",\"\n") != NULL;
    if (quote) g_string_append_c(o, '"');
    for (; *s; s++) {
        if (*s == '"') g_string_append_c(o, '"');
        g_string_append_c(o, *s);
    }
    if (quote) g_string_append_c(o, '"');
}

static void json_str(GString *o, const char *s)
{
    g_string_append_c(o, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') g_string_append_c(o, '\\');
        if ((unsigned char)*s < 0x20)
            g_string_append_printf(o, "\\u%04x", *s);
        else
            g_string_append_c(o, *s);
    }
    g_string_append_c(o, '"');
}

static void write_csv_json(const spec *s, const cell *cells, guint n, GString *csv, GString *js)
{
    for (guint a = 0; a < s->axes->len; a++) {
        csv_field(csv, ((axis *)s->axes->pdata[a])->name);
        g_string_append_c(csv, ',');
    }
    for (guint m = 0; m < s->metrics->len; m++) {
        csv_field(csv, s->metrics->pdata[m]);
        g_string_append_c(csv, ',');
    }
    g_string_append(csv, "status,cell\n");
    g_string_append(js, "{\n  \"spec\": ");
    json_str(js, s->path);
    g_string_append(js, ",\n  \"axes\": [");
    for (guint a = 0; a < s->axes->len; a++) {
        if (a) g_string_append(js, ", ");
        json_str(js, ((axis *)s->axes->pdata[a])->name);
    }
    g_string_append(js, "],\n  \"report\": [");
    for (guint m = 0; m < s->metrics->len; m++) {
        if (m) g_string_append(js, ", ");
        json_str(js, s->metrics->pdata[m]);
    }
    g_string_append(js, "],\n  \"rows\": [");
    for (guint i = 0; i < n; i++) {
        const cell *c = &cells[i];
        g_string_append(js, i ? ",\n    {" : "\n    {");
        for (guint a = 0; a < s->axes->len; a++) {
            csv_field(csv, cell_value(s, c, (int)a));
            g_string_append_c(csv, ',');
            json_str(js, ((axis *)s->axes->pdata[a])->name);
            g_string_append(js, ": ");
            json_str(js, cell_value(s, c, (int)a));
            g_string_append(js, ", ");
        }
        for (guint m = 0; m < s->metrics->len; m++) {
            figure f = cell_figure(c, s->metrics->pdata[m]);
            figure_text(csv, f, false);
            g_string_append_c(csv, ',');
            json_str(js, s->metrics->pdata[m]);
            g_string_append(js, ": ");
            if (!f.have)
                g_string_append(js, "null");
            else if (f.raw && !g_ascii_isdigit(f.raw[0]) && f.raw[0] != '-')
                json_str(js, f.raw);
            else
                figure_text(js, f, false);
            g_string_append(js, ", ");
        }
        g_string_append_printf(csv, "%s,%s\n", c->ok ? "ok" : "failed", c->id);
        g_string_append_printf(js, "\"status\": \"%s\", \"cell\": \"%s\"}", c->ok ? "ok" : "failed",
                               c->id);
    }
    g_string_append(js, "\n  ]\n}\n");
}

/* Panels: every combination of the axes that are neither rows nor columns.
 * A cell's panel number, in the order of the file's axes. */
static guint panel_of(const spec *s, const cell *c, guint *n_panels)
{
    guint p = 0, n = 1;
    for (guint a = 0; a < s->axes->len; a++) {
        if ((int)a == s->row_axis || (int)a == s->col_axis) continue;
        guint len = ((axis *)s->axes->pdata[a])->values->len;
        p = p * len + c->value[a];
        n *= len;
    }
    if (n_panels) *n_panels = n;
    return p;
}

static char *panel_title(const spec *s, const cell *c)
{
    GString *o = g_string_new(NULL);
    for (guint a = 0; a < s->axes->len; a++) {
        if ((int)a == s->row_axis || (int)a == s->col_axis) continue;
        g_string_append_printf(o, "%s%s=%s", o->len ? " " : "", ((axis *)s->axes->pdata[a])->name,
                               cell_value(s, c, (int)a));
    }
    return g_string_free(o, FALSE);
}

/* The cell of a panel at (row, column). */
static const cell *cell_at(const spec *s, const cell *cells, guint n, guint panel, guint row,
                           guint col)
{
    for (guint i = 0; i < n; i++)
        if (panel_of(s, &cells[i], NULL) == panel && cells[i].value[s->row_axis] == row &&
            cells[i].value[s->col_axis] == col)
            return &cells[i];
    return NULL;
}

/* The seeds' style: per figure and panel, rows x columns. */
static void write_table(const spec *s, const cell *cells, guint n, GString *tab)
{
    const axis *ra = s->axes->pdata[s->row_axis], *ca = s->axes->pdata[s->col_axis];
    guint n_panels;
    panel_of(s, &cells[0], &n_panels);
    int w0 = (int)strlen(ra->name);
    for (guint r = 0; r < ra->values->len; r++)
        w0 = MAX(w0, (int)strlen(ra->values->pdata[r]));
    for (guint m = 0; m < s->metrics->len; m++)
        for (guint p = 0; p < n_panels; p++) {
            const cell *first = NULL;
            for (guint i = 0; i < n && !first; i++)
                if (panel_of(s, &cells[i], NULL) == p) first = &cells[i];
            g_autofree char *title = panel_title(s, first);
            if (tab->len) g_string_append_c(tab, '\n');
            g_string_append_printf(tab, "%s%s%s\n", (char *)s->metrics->pdata[m],
                                   *title ? ", " : "", title);
            g_string_append_printf(tab, "%-*s", w0, ra->name);
            for (guint c = 0; c < ca->values->len; c++)
                g_string_append_printf(tab, " %14s", (char *)ca->values->pdata[c]);
            g_string_append_c(tab, '\n');
            for (guint r = 0; r < ra->values->len; r++) {
                g_string_append_printf(tab, "%-*s", w0, (char *)ra->values->pdata[r]);
                for (guint c = 0; c < ca->values->len; c++) {
                    GString *v = g_string_new(NULL);
                    const cell *x = cell_at(s, cells, n, p, r, c);
                    figure_text(v, x ? cell_figure(x, s->metrics->pdata[m]) : (figure){0}, true);
                    g_string_append_printf(tab, " %14s", v->str);
                    g_string_free(v, TRUE);
                }
                g_string_append_c(tab, '\n');
            }
        }
}

/* gnuplot: one panel per combination of the other axes (the CPU models),
 * the rows axis along x, one line per column value (the kernels). */
static bool write_plot(const spec *s, const cell *cells, guint n, const char *out, const char *png)
{
    const axis *ra = s->axes->pdata[s->row_axis], *ca = s->axes->pdata[s->col_axis];
    const char *fig = s->metrics->pdata[0];
    guint n_panels;
    panel_of(s, &cells[0], &n_panels);
    g_autofree char *dat = g_build_filename(out, "plot.dat", NULL);
    g_autofree char *gp = g_build_filename(out, "plot.gp", NULL);
    GString *d = g_string_new(NULL), *g = g_string_new(NULL);
    guint cols = MIN(n_panels, 3), rows = (n_panels + cols - 1) / cols;
    g_string_append_printf(g,
                           "set terminal png size %u,%u noenhanced\nset output '%s'\n"
                           "set multiplot layout %u,%u title 'nicemu sweep: %s'\n"
                           "set grid\nset key below\nset xlabel '%s'\nset ylabel '%s'\n"
                           "set xrange [-0.3:%g]\nset datafile missing '-'\n",
                           420 * cols, 380 * rows + 30, png, rows, cols, fig, ra->name, fig,
                           ra->values->len - 0.7);
    for (guint p = 0; p < n_panels; p++) {
        const cell *first = NULL;
        for (guint i = 0; i < n && !first; i++)
            if (panel_of(s, &cells[i], NULL) == p) first = &cells[i];
        g_autofree char *title = panel_title(s, first);
        for (guint r = 0; r < ra->values->len; r++) {
            g_string_append_printf(d, "\"%s\"", (char *)ra->values->pdata[r]);
            for (guint c = 0; c < ca->values->len; c++) {
                const cell *x = cell_at(s, cells, n, p, r, c);
                figure f = x ? cell_figure(x, fig) : (figure){0};
                if (f.have)
                    g_string_append_printf(d, " %.3f", f.value);
                else
                    g_string_append(d, " -");
            }
            g_string_append_c(d, '\n');
        }
        g_string_append(d, "\n\n");
        g_string_append_printf(g, "set title '%s'\nplot", title);
        for (guint c = 0; c < ca->values->len; c++)
            g_string_append_printf(
                g, "%s '%s' index %u using 0:%u%s with linespoints lw 2 title '%s'", c ? "," : "",
                dat, p, c + 2, c ? "" : ":xtic(1)", (char *)ca->values->pdata[c]);
        g_string_append_c(g, '\n');
    }
    g_string_append(g, "unset multiplot\n");
    bool ok = write_file(dat, d->str) && write_file(gp, g->str);
    g_string_free(d, TRUE);
    g_string_free(g, TRUE);
    if (!ok) return false;
    gint status = 0;
    GError *e = NULL;
    char *argv[] = {"gnuplot", gp, NULL};
    if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, &status, &e) ||
        !g_spawn_check_wait_status(status, NULL)) {
        fprintf(stderr, "nicemu sweep: error: gnuplot failed%s%s\n", e ? ": " : "",
                e ? e->message : "");
        if (e) g_error_free(e);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------- main */

static void print_help(void)
{
    printf(
        "Usage: nicemu sweep SPEC [--out DIR] [--jobs N] [--sshloginfile FILE] [--retries N]\n"
        "                         [--dry-run | --collect | --resume] [--quiet]\n"
        "Runs every cell of the matrix in the key-file SPEC ([sweep] axes and settings,\n"
        "[options] fixed nicemu options) through GNU parallel and prints one table\n"
        "(docs/sweeps.md).  Cells already in the cache (${NICEMU_CACHE:-~/.cache/nicemu}/sweep)\n"
        "are not run again.\n"
        "  --out DIR            where the job list, logs and tables go (default SPEC.sweep)\n"
        "  --jobs N             cells at a time (per host with --sshloginfile)\n"
        "  --sshloginfile FILE  run on these hosts (GNU parallel's format)\n"
        "  --retries N          attempts per cell (default %d)\n"
        "  --snapshot           boot each kernel, CPU, board and option set once, save it at\n"
        "                       the guest's snapshot point, and restore it for each of its\n"
        "                       cells, the workload in the guest's mailbox (as snapshot=yes;\n"
        "                       docs/snapshots.md)\n"
        "  --dry-run            print the job list (one shell line per cell to run), write\n"
        "                       the Slurm array script, run nothing\n"
        "  --collect            gather results the jobs left in DIR/cells (after Slurm)\n"
        "  --resume             as --dry-run, but the cells whose jobs finished in DIR/cells\n"
        "                       are not listed: the Slurm array of the cells still to run\n"
        "                       (after tasks were cancelled, timed out or failed)\n"
        "  --quiet              no progress on stderr (which cell of how many is running,\n"
        "                       the cells done): only errors and the last line\n"
        "Figures for report=:",
        DEFAULT_RETRIES);
    for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++)
        printf("%s\n  %-24s %s", i ? "" : "", metrics[i].name, metrics[i].help);
    printf("\n  SECTION/KEY              any value of nicemu's --report-json\n");
}

static int usage_error(const char *msg)
{
    fprintf(stderr, "nicemu sweep: error: %s\n", msg);
    return 2;
}

/* Slurm refuses an array index of MaxArraySize or more (slurm.conf(5); its
 * default is 1001, so the default largest index is 1000). */
#define SLURM_DEFAULT_MAX_ARRAY_INDEX 1000

/* sweep.sbatch: one array task per line of the job list `list` (a file named
 * by its contents' hash, which no later run rewrites with other contents:
 * the tasks of an array read it when they start, maybe hours after the
 * submission, and a rerun or --resume may meanwhile write another list). */
static void write_sbatch(const char *out, const char *spec_path, guint n_jobs, const char *list)
{
    g_autofree char *path = g_build_filename(out, "sweep.sbatch", NULL);
    g_autofree char *q = g_shell_quote(out);
    g_autofree char *qlist = g_shell_quote(list);
    g_autofree char *big =
        n_jobs > SLURM_DEFAULT_MAX_ARRAY_INDEX
            ? g_strdup_printf(
                  "# %u tasks: more than Slurm's default MaxArraySize allows; submit "
                  "them in parts,\n"
                  "#   sbatch --array=1-%u %s/sweep.sbatch\n"
                  "#   sbatch --array=1-%u --export=ALL,NICEMU_SWEEP_OFFSET=%u "
                  "%s/sweep.sbatch\n"
                  "# and so on (task N runs line N + NICEMU_SWEEP_OFFSET).\n",
                  n_jobs, SLURM_DEFAULT_MAX_ARRAY_INDEX, out,
                  MIN(n_jobs - SLURM_DEFAULT_MAX_ARRAY_INDEX, SLURM_DEFAULT_MAX_ARRAY_INDEX),
                  SLURM_DEFAULT_MAX_ARRAY_INDEX, out)
            : g_strdup("");
    g_autofree char *text = g_strdup_printf(
        "#!/bin/bash\n"
        "# A Slurm job array written by nicemu sweep: the %u cells of %s to run,\n"
        "# task N running line N of %s.  Every node must see this directory,\n"
        "# the nicemu binary, the kernels and the initramfs at the paths that list\n"
        "# names (a shared file system; docs/sweeps.md).  Submit it with\n"
        "#   sbatch [--partition=P] [--account=A] [--time=LIMIT-PER-CELL] %s/sweep.sbatch\n"
        "# then gather the results with: nicemu sweep SPEC --out %s --collect\n"
        "# and after cancelled, timed-out or failed tasks write the array of the cells\n"
        "# still to run with: nicemu sweep SPEC --out %s --resume\n"
        "%s"
        "#SBATCH --job-name=nicemu-sweep\n"
        "#SBATCH --array=1-%u\n"
        "#SBATCH --ntasks=1\n"
        "#SBATCH --cpus-per-task=1\n"
        "#SBATCH --output=%s/cells/slurm-%%A_%%a.out\n"
        "set -eu\n"
        "cd %s || { echo \"nicemu sweep: $(hostname) does not see \"%s\" (a shared file "
        "system is needed)\" >&2; exit 1; }\n"
        "task=$((SLURM_ARRAY_TASK_ID + ${NICEMU_SWEEP_OFFSET:-0}))\n"
        "line=$(sed -n \"${task}p\" %s)\n"
        "[ -n \"$line\" ] || { echo \"nicemu sweep: %s has no line $task (%u cells)\" >&2; exit "
        "1; }\n"
        "echo \"nicemu sweep: task $task on $(hostname): $line\"\n"
        "eval \"$line\"\n",
        n_jobs, spec_path, list, out, out, out, big, n_jobs ? n_jobs : 1, out, q, q, qlist, list,
        n_jobs);
    write_file(path, text);
}

/* The subcommand's own options. */
typedef struct cli {
    const char *spec_file, *out, *hosts;
    bool dry_run, collect, resume, snapshot, quiet;
    long jobs, retries; /* -1: not given */
} cli;

/* Returns -1 to go on, else the exit status (--help, a usage error). */
static int cli_parse(cli *o, int argc, char **argv)
{
    *o = (cli){.jobs = -1, .retries = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_help();
            return 0;
        }
        if (!strcmp(a, "--dry-run") || !strcmp(a, "--collect") || !strcmp(a, "--resume")) {
            *(!strcmp(a, "--dry-run")   ? &o->dry_run
              : !strcmp(a, "--collect") ? &o->collect
                                        : &o->resume) = true;
            continue;
        }
        if (!strcmp(a, "--snapshot")) {
            o->snapshot = true;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            o->quiet = true;
            continue;
        }
        if (a[0] != '-') {
            if (o->spec_file) {
                g_autofree char *msg =
                    g_strdup_printf("one SPEC only ('%s' and '%s')", o->spec_file, a);
                return usage_error(msg);
            }
            o->spec_file = a;
            continue;
        }
        const char *eq = strchr(a, '=');
        g_autofree char *name = eq ? g_strndup(a, (gsize)(eq - a)) : g_strdup(a);
        static const char *const valued[] = {"--out", "--jobs", "--sshloginfile", "--retries"};
        if (!in_list(name, valued, G_N_ELEMENTS(valued))) {
            g_autofree char *msg = g_strdup_printf(
                "unknown option %s (accepted: --out, --jobs, --sshloginfile, --retries, "
                "--snapshot, --dry-run, --collect, --resume, --quiet, --help)",
                name);
            return usage_error(msg);
        }
        const char *val = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (!val) {
            g_autofree char *msg = g_strdup_printf("%s needs a value", name);
            return usage_error(msg);
        }
        if (!strcmp(name, "--out"))
            o->out = val;
        else if (!strcmp(name, "--sshloginfile"))
            o->hosts = val;
        else {
            char *end;
            long v = strtol(val, &end, 10);
            bool jobs = !strcmp(name, "--jobs");
            if (*end || !*val || v < (jobs ? 1 : 0) || v > 1000) {
                g_autofree char *msg = g_strdup_printf("%s: bad value '%s'", name, val);
                return usage_error(msg);
            }
            *(jobs ? &o->jobs : &o->retries) = v;
        }
    }
    if (!o->spec_file) return usage_error("give the sweep spec: nicemu sweep SPEC (see --help)");
    if (o->dry_run + o->collect + o->resume > 1)
        return usage_error("--dry-run, --collect and --resume exclude each other");
    return -1;
}

/* The command line overrides the spec. */
static bool cli_apply(const cli *o, spec *s, char **msg)
{
    if (o->jobs > 0) {
        s->jobs = (unsigned)o->jobs;
        s->jobs_given = true;
    }
    if (o->retries >= 0) s->retries = (unsigned)o->retries;
    if (o->snapshot) {
        if (!s->run) {
            *msg = g_strdup_printf("--snapshot: %s has no run= (the workload the guest reads "
                                   "from its mailbox)",
                                   s->path);
            return false;
        }
        s->snapshot = true;
    }
    if (o->hosts) {
        if (!g_file_test(o->hosts, G_FILE_TEST_IS_REGULAR)) {
            *msg = g_strdup_printf("--sshloginfile: %s: no such file", o->hosts);
            return false;
        }
        /* parallel runs in the output directory: the name must survive the chdir */
        g_free(s->hosts);
        s->hosts = g_canonicalize_filename(o->hosts, NULL);
    }
    return true;
}

static void cells_free(cell *cells, guint n)
{
    for (guint i = 0; i < n; i++) {
        g_free(cells[i].value);
        g_free(cells[i].id);
        g_free(cells[i].system_map);
        g_ptr_array_free(cells[i].args, TRUE);
        g_free(cells[i].boot_id);
        if (cells[i].boot_args) g_ptr_array_free(cells[i].boot_args, TRUE);
        if (cells[i].report) g_hash_table_destroy(cells[i].report);
    }
    g_free(cells);
}

/* Marks the cached cells, writes every cell's arguments and the job list of
 * the others: jobs.tsv (parallel's input: ID, kernel, initrd, nicemu,
 * System.map, and with snapshot=yes the saved boot; "/./" paths when they
 * are to be transferred), jobs.sh (one self-contained shell line per job),
 * the same lines as jobs-HASH.sh for the Slurm array, and sweep.sbatch.
 * With snapshot=yes also the boots those cells need and are not in
 * DIR/boots yet: boots.tsv and boots.sh, to run first.  `finished_done`
 * (--resume): a cell whose job left cells/ID.json is not a job either.
 * Without `lists` (--collect) only the arguments are written: the job
 * lists stay those of the run being collected.  *list_hash identifies the
 * list. */
static bool write_jobs(const spec *s, cell *cells, guint n, const char *exe, const char *out,
                       const char *cache, bool finished_done, bool lists, guint *n_jobs,
                       guint *n_boots, char **list_hash)
{
    GString *tsv = g_string_new(NULL), *sh = g_string_new(NULL);
    GString *btsv = g_string_new(NULL), *bsh = g_string_new(NULL);
    g_autoptr(GHashTable) boots_seen = g_hash_table_new(g_str_hash, g_str_equal);
    *n_boots = 0;
    g_autofree char *qexe = g_shell_quote(exe);
    g_autofree char *qout = g_shell_quote(out);
    g_autofree char *qinitrd = s->initrd ? g_shell_quote(s->initrd) : g_strdup("");
    bool transfer = s->hosts && !s->installed;
    bool ok = true;
    *n_jobs = 0;
    for (guint i = 0; i < n && ok; i++) {
        cell *c = &cells[i];
        g_autofree char *cached = g_strdup_printf("%s/%s.json", cache, c->id);
        c->cached = g_file_test(cached, G_FILE_TEST_IS_REGULAR);
        g_autofree char *args_path = g_strdup_printf("%s/cells/%s.args", out, c->id);
        GString *args = g_string_new(NULL);
        for (guint k = 0; k < c->args->len; k++)
            g_string_append_printf(args, "%s\n", (char *)c->args->pdata[k]);
        ok = write_file(args_path, args->str);
        g_string_free(args, TRUE);
        if (c->cached) continue;
        g_autofree char *fresh = g_strdup_printf("%s/cells/%s.json", out, c->id);
        c->finished = finished_done && g_file_test(fresh, G_FILE_TEST_IS_REGULAR);
        if (c->finished) continue;
        (*n_jobs)++;
        g_autofree char *k = transfer ? transfer_path(c->kernel) : g_strdup(c->kernel);
        g_autofree char *ini = !s->initrd ? g_strdup("-")
                               : transfer ? transfer_path(s->initrd)
                                          : g_strdup(s->initrd);
        g_autofree char *bin = transfer ? transfer_path(exe) : g_strdup(exe);
        /* Column 5: System.map for the profiler's names on the host (the
         * kernel again when there is none: a harmless second transfer). */
        const char *map_file = c->system_map ? c->system_map : c->kernel;
        g_autofree char *map = transfer ? transfer_path(map_file) : g_strdup(map_file);
        g_autofree char *state = c->boot_id ? g_strdup_printf("boots/%s.state", c->boot_id) : NULL;
        g_string_append_printf(tsv, "%s\t%s\t%s\t%s\t%s%s%s\n", c->id, k, ini, bin, map,
                               state ? "\t" : "", state ? state : "");
        g_autofree char *qk = g_shell_quote(c->kernel);
        g_autofree char *line = job_line(s, qexe, qk, qinitrd, c->id, false);
        g_string_append_printf(sh, "cd %s && %s\n", qout, line);
        if (!c->boot_id || g_hash_table_contains(boots_seen, c->boot_id)) continue;
        g_hash_table_add(boots_seen, c->boot_id);
        g_autofree char *have = g_strdup_printf("%s/%s", out, state);
        if (g_file_test(have, G_FILE_TEST_IS_REGULAR)) continue; /* saved by an earlier run */
        g_autofree char *bargs_path = g_strdup_printf("%s/boots/%s.args", out, c->boot_id);
        GString *bargs = g_string_new(NULL);
        for (guint j = 0; j < c->boot_args->len; j++)
            g_string_append_printf(bargs, "%s\n", (char *)c->boot_args->pdata[j]);
        ok = ok && write_file(bargs_path, bargs->str);
        g_string_free(bargs, TRUE);
        (*n_boots)++;
        g_string_append_printf(btsv, "%s\t%s\t%s\t%s\t%s\n", c->boot_id, k, ini, bin, map);
        g_autofree char *bline = job_line(s, qexe, qk, qinitrd, c->boot_id, true);
        g_string_append_printf(bsh, "cd %s && %s\n", qout, bline);
    }
    g_autofree char *tsv_path = g_build_filename(out, "jobs.tsv", NULL);
    g_autofree char *sh_path = g_build_filename(out, "jobs.sh", NULL);
    g_autofree char *sh_hash = g_compute_checksum_for_string(G_CHECKSUM_SHA256, sh->str, -1);
    g_autofree char *list_name = g_strdup_printf("jobs-%.12s.sh", sh_hash);
    g_autofree char *list_path = g_build_filename(out, list_name, NULL);
    if (lists) {
        ok = ok && write_file(tsv_path, tsv->str) && write_file(sh_path, sh->str) &&
             write_file(list_path, sh->str);
        if (s->snapshot) {
            g_autofree char *btsv_path = g_build_filename(out, "boots.tsv", NULL);
            g_autofree char *bsh_path = g_build_filename(out, "boots.sh", NULL);
            ok = ok && write_file(btsv_path, btsv->str) && write_file(bsh_path, bsh->str);
        }
        write_sbatch(out, s->path, *n_jobs, list_name);
    }
    *list_hash = g_compute_checksum_for_string(G_CHECKSUM_SHA256, tsv->str, -1);
    g_string_free(tsv, TRUE);
    g_string_free(sh, TRUE);
    g_string_free(btsv, TRUE);
    g_string_free(bsh, TRUE);
    return ok;
}

/* Each cell's report: from the cache, or from its job (then into the
 * cache).  Returns the number of cells without one, each named on stderr. */
static guint gather_results(const spec *s, cell *cells, guint n, const char *out, const char *cache)
{
    guint n_failed = 0;
    for (guint i = 0; i < n; i++) {
        cell *c = &cells[i];
        g_autofree char *cached = g_strdup_printf("%s/%s.json", cache, c->id);
        g_autofree char *fresh = g_strdup_printf("%s/cells/%s.json", out, c->id);
        gchar *text = NULL;
        if (!g_file_get_contents(c->cached ? cached : fresh, &text, NULL, NULL)) text = NULL;
        c->report = text ? nm_report_json_parse(text) : NULL;
        c->ok = c->report != NULL;
        if (c->ok && !c->cached) write_file(cached, text);
        g_free(text);
        if (!c->ok) {
            g_autofree char *name = cell_name(s, c);
            g_autofree char *state =
                c->boot_id ? g_strdup_printf("%s/boots/%s.state", out, c->boot_id) : NULL;
            bool no_boot = state && !g_file_test(state, G_FILE_TEST_IS_REGULAR);
            g_autofree char *log = no_boot ? g_strdup_printf("%s/boots/%s.log", out, c->boot_id)
                                           : g_strdup_printf("%s/cells/%s.log", out, c->id);
            g_autofree char *why = nm_run_log_reason(log, "error:");
            fprintf(stderr, "nicemu sweep: error: cell %s failed%s: %s (log: %s)\n", name,
                    no_boot ? " (its boot was not saved)" : "", why, log);
            n_failed++;
        }
    }
    return n_failed;
}

/* The table on stdout and table.txt, results.csv, results.json, plot.png. */
static bool write_results(const spec *s, const cell *cells, guint n, guint n_failed,
                          const char *out)
{
    GString *csv = g_string_new(NULL), *js = g_string_new(NULL), *tab = g_string_new(NULL);
    write_csv_json(s, cells, n, csv, js);
    write_table(s, cells, n, tab);
    fputs(tab->str, stdout);
    fflush(stdout);
    g_autofree char *csv_path = g_build_filename(out, "results.csv", NULL);
    g_autofree char *js_path = g_build_filename(out, "results.json", NULL);
    g_autofree char *tab_path = g_build_filename(out, "table.txt", NULL);
    g_autofree char *png = g_build_filename(out, "plot.png", NULL);
    bool ok = write_file(csv_path, csv->str) && write_file(js_path, js->str) &&
              write_file(tab_path, tab->str);
    if (!g_find_program_in_path("gnuplot"))
        fprintf(stderr, "nicemu sweep: no plot: gnuplot is not installed (scripts/setup)\n");
    else if (n_failed < n && !write_plot(s, cells, n, out, png))
        ok = false;
    g_string_free(csv, TRUE);
    g_string_free(js, TRUE);
    g_string_free(tab, TRUE);
    return ok;
}

/* Where the jobs and tables go: --out, or SPEC without .ini plus .sweep. */
static char *out_dir(const cli *o)
{
    if (o->out) return g_canonicalize_filename(o->out, NULL);
    g_autofree char *base = g_strdup(o->spec_file);
    if (g_str_has_suffix(base, ".ini")) base[strlen(base) - 4] = 0;
    g_autofree char *dir = g_strdup_printf("%s.sweep", base);
    return g_canonicalize_filename(dir, NULL);
}

/* Everything up to running a job is checked first: a usage error (exit 2)
 * never leaves a half-started sweep. */
int nm_sweep_main(int argc, char **argv)
{
    cli o;
    int rc = cli_parse(&o, argc, argv);
    if (rc >= 0) return rc;
    spec s;
    char *msg = NULL;
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    guint n = 0;
    cell *cells = NULL;
    if (!exe)
        msg = g_strdup("cannot find the nicemu binary (/proc/self/exe)");
    else if (spec_load(&s, o.spec_file, &msg) && cli_apply(&o, &s, &msg))
        cells = cells_expand(&s, exe, &n, &msg);
    if (!cells) {
        rc = usage_error(msg);
        g_free(msg);
        if (exe) spec_free(&s);
        return rc;
    }

    g_autofree char *out = out_dir(&o);
    g_autofree char *cells_dir = g_build_filename(out, "cells", NULL);
    g_autofree char *boots_dir = g_build_filename(out, "boots", NULL);
    g_autofree char *cache = cache_dir();
    bool list_only = o.dry_run || o.resume; /* the job list and the Slurm script */
    bool need_parallel = !list_only && !o.collect;
    if (g_mkdir_with_parents(cells_dir, 0755) || g_mkdir_with_parents(cache, 0755) ||
        (s.snapshot && g_mkdir_with_parents(boots_dir, 0755)))
        msg = g_strdup_printf("cannot create %s or %s: %s", cells_dir, cache, g_strerror(errno));
    else if (need_parallel && !g_find_program_in_path("parallel"))
        msg = g_strdup("GNU parallel is not installed (scripts/setup installs parallel)");
    else if (need_parallel && s.hosts && !s.installed && !g_find_program_in_path("rsync"))
        msg = g_strdup("--sshloginfile with remote=transfer needs rsync (scripts/setup)");
    if (msg) {
        rc = usage_error(msg);
        g_free(msg);
        cells_free(cells, n);
        spec_free(&s);
        return rc;
    }

    guint n_jobs, n_boots;
    g_autofree char *list_hash = NULL;
    rc = write_jobs(&s, cells, n, exe, out, cache, o.resume, !o.collect, &n_jobs, &n_boots,
                    &list_hash)
             ? 0
             : 1;
    if (list_only) {
        g_autofree char *sh_path = g_build_filename(out, "jobs.sh", NULL);
        g_autofree char *bsh_path = g_build_filename(out, "boots.sh", NULL);
        gchar *sh = NULL;
        if (s.snapshot && g_file_get_contents(bsh_path, &sh, NULL, NULL)) fputs(sh, stdout);
        g_free(sh);
        sh = NULL;
        if (g_file_get_contents(sh_path, &sh, NULL, NULL)) fputs(sh, stdout);
        g_free(sh);
        if (s.snapshot)
            fprintf(stderr,
                    "nicemu sweep: snapshot=yes: %u boots to save first (boots.sh, "
                    "before jobs.sh and the Slurm array)\n",
                    n_boots);
        guint n_finished = 0;
        for (guint i = 0; i < n; i++)
            n_finished += cells[i].finished;
        g_autofree char *finished =
            o.resume ? g_strdup_printf(" %u finished in %s/cells,", n_finished, out) : g_strdup("");
        fprintf(stderr,
                "nicemu sweep: %u cells, %u in the cache,%s %u to run (Slurm: %s/sweep.sbatch)\n",
                n, n - n_jobs - n_finished, finished, n_jobs, out);
        cells_free(cells, n);
        spec_free(&s);
        return rc;
    }

    /* One joblog per job list: a rerun of the same list resumes it. */
    g_autofree char *joblog_name = g_strdup_printf("joblog-%.12s", list_hash);
    g_autofree char *joblog = g_build_filename(out, joblog_name, NULL);
    gint64 wall0 = g_get_monotonic_time();
    /* What each job runs, for the progress lines: a cell's axis values; a
     * boot's, of the first cell that restores it. */
    g_autoptr(GHashTable) names = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    for (guint i = 0; i < n; i++) {
        g_hash_table_replace(names, cells[i].id, cell_name(&s, &cells[i]));
        if (cells[i].boot_id && !g_hash_table_contains(names, cells[i].boot_id))
            g_hash_table_replace(
                names, cells[i].boot_id,
                g_strdup_printf("for %s", (char *)g_hash_table_lookup(names, cells[i].id)));
    }
    progress p = {.total = n,
                  .cached = n - n_jobs,
                  .start = wall0,
                  .joblog = joblog,
                  .what = "cell",
                  .quiet = o.quiet,
                  .names = names};
    if (n_boots && n_jobs && need_parallel) {
        /* The saved boots first: their cells restore them. */
        g_autofree char *bjoblog = g_strdup_printf("%s/joblog-boots-%.12s", out, list_hash);
        progress bp = {.total = n_boots,
                       .start = wall0,
                       .joblog = bjoblog,
                       .what = "boot",
                       .quiet = o.quiet,
                       .names = names};
        if (!o.quiet) fprintf(stderr, "nicemu sweep: saving %u boots (snapshot=yes)\n", n_boots);
        int st = run_parallel(&s, out, bjoblog, &bp, true);
        if (st != 0)
            fprintf(stderr,
                    "nicemu sweep: parallel ended with status %d saving the boots (logs: "
                    "%s/boots/*.log)\n",
                    st, out);
    }
    if (n_jobs && need_parallel) {
        int st = run_parallel(&s, out, joblog, &p, false);
        if (st != 0)
            fprintf(stderr,
                    "nicemu sweep: parallel ended with status %d (its log: %s/parallel.log)\n", st,
                    out);
    }

    guint n_failed = gather_results(&s, cells, n, out, cache), n_ran = 0;
    for (guint i = 0; i < n; i++)
        n_ran += cells[i].ok && !cells[i].cached;
    if (!write_results(&s, cells, n, n_failed, out) || n_failed) rc = 1;
    fprintf(stderr,
            "nicemu sweep: %u cells: %u from the cache, %u run, %u failed; wall %.1f s; "
            "results in %s\n",
            n, n - n_jobs, n_ran, n_failed, (double)(g_get_monotonic_time() - wall0) / 1e6, out);
    cells_free(cells, n);
    spec_free(&s);
    return rc;
}
