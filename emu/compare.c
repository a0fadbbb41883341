/* `nicemu compare` / `nicemu ab` (compare.h). */
#include "emu/compare.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/models.h"
#include "cpu/timing/boards.h"
#include "emu/outfile.h"

#define DEFAULT_TOP 3
#define PROFILE_TOP 10

/* ---------------------------------------------------------- JSON reading */

typedef struct jp {
    const char *s;
} jp;

static void ws(jp *j)
{
    while (*j->s == ' ' || *j->s == '\n' || *j->s == '\t' || *j->s == '\r')
        j->s++;
}

static char *jstring(jp *j)
{
    ws(j);
    if (*j->s != '"') return NULL;
    j->s++;
    GString *out = g_string_new(NULL);
    while (*j->s && *j->s != '"') {
        if (*j->s == '\\') {
            j->s++;
            if (*j->s == 'u' && g_ascii_isxdigit(j->s[1]) && g_ascii_isxdigit(j->s[2]) &&
                g_ascii_isxdigit(j->s[3]) && g_ascii_isxdigit(j->s[4])) {
                char hex[5] = {j->s[1], j->s[2], j->s[3], j->s[4], 0};
                g_string_append_unichar(out, (gunichar)strtoul(hex, NULL, 16));
                j->s += 5;
                continue;
            }
            if (!*j->s) break;
            char c = *j->s;
            g_string_append_c(out, c == 'n' ? '\n' : c == 't' ? '\t' : c);
            j->s++;
            continue;
        }
        g_string_append_c(out, *j->s++);
    }
    if (*j->s != '"') {
        g_string_free(out, TRUE);
        return NULL;
    }
    j->s++;
    return g_string_free(out, FALSE);
}

static char *jscalar(jp *j)
{
    ws(j);
    if (*j->s == '"') return jstring(j);
    const char *start = j->s;
    while (*j->s && *j->s != ',' && *j->s != '}' && *j->s != ' ' && *j->s != '\n')
        j->s++;
    if (j->s == start) return NULL;
    return g_strndup(start, (gsize)(j->s - start));
}

static bool expect(jp *j, char c)
{
    ws(j);
    if (*j->s != c) return false;
    j->s++;
    return true;
}

GHashTable *nm_report_json_parse(const char *text)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    jp j = {text};
    if (!expect(&j, '{')) goto bad;
    ws(&j);
    if (*j.s == '}') return h;
    for (;;) {
        g_autofree char *section = jstring(&j);
        if (!section || !expect(&j, ':') || !expect(&j, '{')) goto bad;
        ws(&j);
        if (*j.s != '}') {
            for (;;) {
                char *key = jstring(&j);
                if (!key || !expect(&j, ':')) {
                    g_free(key);
                    goto bad;
                }
                char *val = jscalar(&j);
                if (!val) {
                    g_free(key);
                    goto bad;
                }
                g_hash_table_replace(h, g_strdup_printf("%s/%s", section, key), val);
                g_free(key);
                ws(&j);
                if (*j.s == ',') {
                    j.s++;
                    continue;
                }
                break;
            }
        }
        if (!expect(&j, '}')) goto bad;
        ws(&j);
        if (*j.s == ',') {
            j.s++;
            continue;
        }
        break;
    }
    if (!expect(&j, '}')) goto bad;
    return h;
bad:
    g_hash_table_destroy(h);
    return NULL;
}

/* ---------------------------------------------------------- runs */

typedef struct top_fn {
    char *name;
    uint64_t clocks;
} top_fn;

typedef struct run {
    const char *cpu;    /* the row's label: the CPU model, or model/board */
    const char *work;   /* --run: the workload (in the guest's mailbox), else NULL */
    char *state;        /* --snapshot: the state to restore (a boot run: to save) */
    bool boot;          /* --snapshot: the run that boots and saves */
    struct run *booted; /* --snapshot: the boot run this run restores */
    const char *model;  /* the CPU model */
    const char *board;  /* --board for this run, NULL: the model's default */
    const char *kernel; /* ab: the variant's kernel (NULL: --kernel, passed on) */
    const char *initrd; /* ab: the variant's initramfs (NULL: --initrd, passed on) */
    char variant;       /* 'A', 'B', or 0 */
    char *json, *log;
    pid_t pid;
    int status; /* exit status, -1 not run / killed */
    bool ok;    /* report read */
    double mhz;
    char *label; /* --mhz: "pentium-100 @ 400 MHz (overridden)", from the report */
    uint64_t clocks, insns, bus, frames, tx, rx, windows, idle;
    uint64_t console_bytes, console_clocks, window_clocks; /* serial output in the window */
    top_fn top[PROFILE_TOP];
    unsigned n_top;
} run;

static uint64_t get_u64(GHashTable *h, const char *key)
{
    const char *v = g_hash_table_lookup(h, key);
    return v ? g_ascii_strtoull(v, NULL, 10) : 0;
}

static bool read_run(run *r)
{
    gchar *text = NULL;
    if (!g_file_get_contents(r->json, &text, NULL, NULL)) return false;
    GHashTable *h = nm_report_json_parse(text);
    g_free(text);
    if (!h) return false;
    r->windows = get_u64(h, "window/windows");
    /* A clock override (--mhz among the options passed on): the run's own
     * clock, and a row label that says so. */
    const char *label = g_hash_table_lookup(h, "machine/cpu_label");
    const char *mhz = g_hash_table_lookup(h, "machine/cpu_mhz");
    if (label && mhz && !strcmp(g_hash_table_lookup(h, "machine/cpu_clock") ?: "", "overridden")) {
        g_free(r->label);
        r->label = g_strdup_printf("%s%s%s", label, r->board ? "/" : "", r->board ? r->board : "");
        r->cpu = r->label;
        r->mhz = g_ascii_strtod(mhz, NULL);
    }
    /* Busy clocks: the window minus its idle (HLT) time. */
    r->clocks = g_hash_table_lookup(h, "packets/busy_clocks") ? get_u64(h, "packets/busy_clocks")
                                                              : get_u64(h, "window/clocks");
    r->idle = get_u64(h, "packets/idle_clocks");
    r->insns = get_u64(h, "window/instructions");
    r->window_clocks = get_u64(h, "window/clocks");
    r->console_bytes = get_u64(h, "window/console_bytes");
    r->console_clocks = get_u64(h, "window/console_clocks");
    r->bus = get_u64(h, "window/bus_wait_cycles");
    r->tx = get_u64(h, "packets/tx_frames");
    r->rx = get_u64(h, "packets/rx_frames");
    r->frames = r->tx + r->rx;
    r->n_top = 0;
    for (unsigned i = 1; i <= PROFILE_TOP; i++) {
        char key[64];
        g_snprintf(key, sizeof key, "profile/self_%u", i);
        const char *name = g_hash_table_lookup(h, key);
        if (!name) break;
        if (!strcmp(name, "(idle)")) continue; /* not CPU work */
        g_snprintf(key, sizeof key, "profile/self_%u_self_clocks", i);
        r->top[r->n_top].name = g_strdup(name);
        r->top[r->n_top].clocks = get_u64(h, key);
        r->n_top++;
    }
    g_hash_table_destroy(h);
    return true;
}

static char *self_exe(void)
{
    char *p = g_file_read_link("/proc/self/exe", NULL);
    return p ? p : g_strdup("nicemu");
}

static pid_t start_run(const char *exe, GPtrArray *pass, run *r)
{
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, (char *)exe);
    for (guint i = 0; i < pass->len; i++)
        g_ptr_array_add(args, pass->pdata[i]);
    if (r->kernel) {
        g_ptr_array_add(args, "--kernel");
        g_ptr_array_add(args, (char *)r->kernel);
    }
    if (r->initrd) {
        g_ptr_array_add(args, "--initrd");
        g_ptr_array_add(args, (char *)r->initrd);
    }
    g_ptr_array_add(args, "--cpu");
    g_ptr_array_add(args, (char *)r->model);
    if (r->board) {
        g_ptr_array_add(args, "--board");
        g_ptr_array_add(args, (char *)r->board);
    }
    if (r->boot) {
        /* Boots to the guest's snapshot point, saves there and ends. */
        g_ptr_array_add(args, "--save-state");
        g_ptr_array_add(args, r->state);
        g_ptr_array_add(args, "--save-state-exit");
    } else {
        if (r->state) {
            g_ptr_array_add(args, "--restore");
            g_ptr_array_add(args, r->state);
        }
        if (r->work) {
            g_ptr_array_add(args, "--mailbox");
            g_ptr_array_add(args, (char *)r->work);
        }
        g_ptr_array_add(args, "--profile-top");
        g_ptr_array_add(args, G_STRINGIFY(PROFILE_TOP));
        g_ptr_array_add(args, "--report-json");
        g_ptr_array_add(args, r->json);
    }
    g_ptr_array_add(args, NULL);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
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
        execv(exe, (char **)args->pdata);
        fprintf(stderr, "nicemu: error: cannot run %s: %s\n", exe, g_strerror(errno));
        _exit(127);
    }
    g_ptr_array_free(args, TRUE);
    return pid;
}

char *nm_run_log_reason(const char *log, const char *needle)
{
    gchar *text = NULL;
    if (!g_file_get_contents(log, &text, NULL, NULL)) return g_strdup("(no log)");
    char *found = NULL;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_free(text);
    for (char **l = lines; *l && !found; l++)
        if (strstr(*l, needle)) found = g_strdup(*l);
    /* else nicemu's own summary, the last "run ended" line (a guest line
     * saying so comes before it) */
    const char *summary = NULL;
    for (char **l = lines; *l && !found; l++)
        if (strstr(*l, "run ended")) summary = *l;
    if (!found && summary) found = g_strdup(summary);
    return found ? found : g_strdup("(no error line in the log)");
}

/* ---------------------------------------------------------- output */

typedef struct figures {
    bool per_packet;
    double clocks, insns, cpi, us, pps, bus_share;
} figures;

static void figures_of(const run *r, bool per_packet, figures *f)
{
    double div = per_packet ? (double)r->frames : 1.0;
    f->per_packet = per_packet;
    f->clocks = (double)r->clocks / div;
    f->insns = (double)r->insns / div;
    f->cpi = r->insns ? (double)r->clocks / (double)r->insns : 0.0;
    f->us = f->clocks / r->mhz;
    f->pps = f->clocks > 0 ? r->mhz * 1e6 / f->clocks : 0.0;
    f->bus_share = r->clocks ? (double)r->bus / (double)r->clocks : 0.0;
}

static char *top_text(const run *r, unsigned top)
{
    GString *s = g_string_new(NULL);
    for (unsigned i = 0; i < r->n_top && i < top; i++)
        g_string_append_printf(s, "%s%s %.1f%%", i ? ", " : "", r->top[i].name,
                               r->clocks ? 100.0 * (double)r->top[i].clocks / (double)r->clocks
                                         : 0.0);
    return g_string_free(s, FALSE);
}

static void csv_field(GString *o, const char *s)
{
    g_string_append_c(o, '"');
    for (; *s; s++) {
        if (*s == '"') g_string_append_c(o, '"');
        g_string_append_c(o, *s);
    }
    g_string_append_c(o, '"');
}

static void json_str(GString *o, const char *s)
{
    g_string_append_c(o, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') g_string_append_c(o, '\\');
        g_string_append_c(o, *s);
    }
    g_string_append_c(o, '"');
}

static bool write_file(const char *option, const char *path, const char *text)
{
    GError *e = NULL;
    if (!nm_output_file_write(option, path, text, strlen(text), &e)) {
        fprintf(stderr, "nicemu: error: %s\n", e->message);
        g_error_free(e);
        return false;
    }
    return true;
}

static bool plot(const char *png, const char *dir, bool ab, bool per_packet, run *runs,
                 unsigned n_cpu)
{
    g_autofree char *dat = g_build_filename(dir, "plot.dat", NULL);
    g_autofree char *gp = g_build_filename(dir, "plot.gp", NULL);
    GString *d = g_string_new(NULL);
    for (unsigned c = 0; c < n_cpu; c++) {
        figures fa, fb;
        figures_of(&runs[c], per_packet, &fa);
        g_string_append_printf(d, "\"%s%s%s\" %.3f", runs[c].cpu, runs[c].work ? " " : "",
                               runs[c].work ? runs[c].work : "", fa.clocks);
        if (ab) {
            figures_of(&runs[n_cpu + c], per_packet, &fb);
            g_string_append_printf(d, " %.3f", fb.clocks);
        }
        g_string_append_c(d, '\n');
    }
    bool ok = write_file("--plot", dat, d->str);
    g_string_free(d, TRUE);
    if (!ok) return false;
    const char *ylabel = per_packet ? "clocks per packet" : "clocks in the measurement window";
    g_autofree char *script = g_strdup_printf(
        "set terminal png size 900,540\nset output '%s'\nset style data histograms\n"
        "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
        "set ylabel '%s'\nset yrange [0:*]\nset grid ytics\nset key top right\n"
        "set title 'nicemu %s'\n"
        "plot '%s' using 2:xtic(1) title '%s'%s\n",
        png, ylabel, ab ? "ab: A vs B" : "compare", dat, ab ? "A" : "clocks",
        ab ? ", '' using 3 title 'B'" : "");
    if (!write_file("--plot", gp, script)) return false;
    gint status = 0;
    GError *e = NULL;
    char *argv[] = {"gnuplot", gp, NULL};
    if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, &status, &e) ||
        !g_spawn_check_wait_status(status, NULL)) {
        fprintf(stderr, "nicemu: error: gnuplot failed%s%s\n", e ? ": " : "", e ? e->message : "");
        if (e) g_error_free(e);
        return false;
    }
    return true;
}

/* The head of a row of the text table: the CPU (and board) label, then
 * with --run the workload. */
static void row_head(GString *tab, const char *cpu, const char *work, int wwidth)
{
    g_string_append_printf(tab, "%-13s ", cpu);
    if (wwidth) g_string_append_printf(tab, "%-*s ", wwidth, work ? work : "");
}

/* Runs `n` runs (those with status -1; -2 means "not to run"), `jobs` at
 * a time; sets each one's exit status. */
static void run_all(const char *exe, GPtrArray *pass, run *list, unsigned n, unsigned jobs)
{
    unsigned next = 0, running = 0;
    while (next < n || running) {
        while (next < n && running < jobs) {
            if (list[next].status == -1) {
                list[next].pid = start_run(exe, pass, &list[next]);
                if (list[next].pid > 0) running++;
            }
            next++;
        }
        if (!running) break;
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (unsigned k = 0; k < n; k++) {
            if (list[k].pid != pid || list[k].status != -1) continue;
            list[k].status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            list[k].pid = 0;
            running--;
        }
    }
}

/* ---------------------------------------------------------- main */

static int usage_error(const char *cmd, const char *msg)
{
    fprintf(stderr, "nicemu %s: error: %s\n", cmd, msg);
    return 2;
}

static void print_help(const char *cmd, bool ab)
{
    printf("Usage: nicemu %s --cpu CPU[,CPU...] %s[options] [nicemu options...]\n", cmd,
           ab ? "{--kernel-a FILE --kernel-b FILE | --initrd-a FILE --initrd-b FILE} " : "");
    printf("Runs the same workload on each CPU model%s in parallel child processes and\n"
           "prints one table.  Every other option goes to each run unchanged.\n"
           "  --cpu LIST        CPU models, comma-separated (nicemu --cpu help lists them)\n"
           "  --board LIST      board presets, comma-separated: a row per CPU and board\n"
           "                    (nicemu --board help; default: each CPU model's own)\n"
           "  --run W           a workload (nicemu.run= syntax) put in the guest's mailbox,\n"
           "                    repeatable: a row per CPU, board and workload\n"
           "  --snapshot        with --run: boot each variant, CPU and board once, save at the\n"
           "                    guest's snapshot point, restore for every workload (the same\n"
           "                    figures, less wall time; docs/snapshots.md)\n"
           "%s"
           "  --json FILE       write the table as JSON\n"
           "  --csv FILE        write the table as CSV\n"
           "  --plot FILE.png   draw it with gnuplot\n"
           "  --top N           functions shown per row (default %d, at most %d)\n"
           "  --jobs N          runs at a time (default: the host's processors)\n"
           "  --keep DIR        keep each run's report and log in DIR\n",
           ab ? ", A and B," : "",
           ab ? "  --kernel-a FILE   kernel A (System.map beside it names its functions)\n"
                "  --kernel-b FILE   kernel B\n"
                "  --initrd-a FILE   initramfs A (e.g. a driver variant as modules,\n"
                "                    guest-images/8390/image; the kernel: --kernel FILE)\n"
                "  --initrd-b FILE   initramfs B\n"
              : "",
           DEFAULT_TOP, PROFILE_TOP);
}

int nm_compare_main(int argc, char **argv)
{
    const char *cmd = argv[0];
    bool ab = !strcmp(cmd, "ab");
    const char *boards = NULL;
    const char *cpus = NULL, *json = NULL, *csv = NULL, *png = NULL, *ka = NULL, *kb = NULL,
               *ia = NULL, *ib = NULL, *keep = NULL;
    bool pass_kernel = false, pass_initrd = false; /* given once, for both variants */
    unsigned top = DEFAULT_TOP, jobs = g_get_num_processors();
    GPtrArray *pass = g_ptr_array_new();
    g_autoptr(GPtrArray) works = g_ptr_array_new();
    bool snapshot = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        g_autofree char *name =
            eq && a[0] == '-' && a[1] == '-' ? g_strndup(a, (gsize)(eq - a)) : g_strdup(a);
        static const char *const own[] = {"--cpu",      "--json",  "--csv",  "--plot",
                                          "--top",      "--jobs",  "--keep", "--kernel-a",
                                          "--kernel-b", "--board", "--run"};
        static const char *const own_ab[] = {"--initrd-a", "--initrd-b"};
        bool mine = false;
        for (size_t k = 0; k < G_N_ELEMENTS(own); k++)
            mine |= !strcmp(name, own[k]);
        for (size_t k = 0; ab && k < G_N_ELEMENTS(own_ab); k++)
            mine |= !strcmp(name, own_ab[k]);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_help(cmd, ab);
            g_ptr_array_free(pass, TRUE);
            return 0;
        }
        if (!strcmp(a, "--snapshot")) {
            snapshot = true;
            continue;
        }
        if (!mine) {
            if (!strcmp(name, "--report-json")) {
                g_ptr_array_free(pass, TRUE);
                return usage_error(cmd, "--report-json is set per run (use --json FILE)");
            }
            pass_kernel |= !strcmp(name, "--kernel");
            pass_initrd |= !strcmp(name, "--initrd");
            static const char *const set_per_run[] = {"--mailbox", "--save-state",
                                                      "--save-state-exit", "--restore"};
            for (size_t k = 0; k < G_N_ELEMENTS(set_per_run); k++)
                if (!strcmp(name, set_per_run[k])) {
                    g_autofree char *msg = g_strdup_printf(
                        "%s is set per run (use --run W and --snapshot)", set_per_run[k]);
                    g_ptr_array_free(pass, TRUE);
                    return usage_error(cmd, msg);
                }
            g_ptr_array_add(pass, argv[i]);
            continue;
        }
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else {
            g_autofree char *msg = g_strdup_printf("%s needs a value", name);
            g_ptr_array_free(pass, TRUE);
            return usage_error(cmd, msg);
        }
        if (!strcmp(name, "--cpu"))
            cpus = val;
        else if (!strcmp(name, "--board"))
            boards = val;
        else if (!strcmp(name, "--json"))
            json = val;
        else if (!strcmp(name, "--csv"))
            csv = val;
        else if (!strcmp(name, "--plot"))
            png = val;
        else if (!strcmp(name, "--kernel-a"))
            ka = val;
        else if (!strcmp(name, "--kernel-b"))
            kb = val;
        else if (!strcmp(name, "--initrd-a"))
            ia = val;
        else if (!strcmp(name, "--initrd-b"))
            ib = val;
        else if (!strcmp(name, "--keep"))
            keep = val;
        else if (!strcmp(name, "--run")) {
            if (!*val) {
                g_ptr_array_free(pass, TRUE);
                return usage_error(cmd, "--run: an empty workload");
            }
            g_ptr_array_add(works, (char *)val);
        } else {
            char *end;
            unsigned long v = strtoul(val, &end, 10);
            if (*end || !*val || v == 0 || v > 1000 ||
                (!strcmp(name, "--top") && v > PROFILE_TOP)) {
                g_autofree char *msg = g_strdup_printf("%s: bad value '%s'", name, val);
                g_ptr_array_free(pass, TRUE);
                return usage_error(cmd, msg);
            }
            if (!strcmp(name, "--top"))
                top = (unsigned)v;
            else
                jobs = (unsigned)v;
        }
    }
    int rc = 0;
    if (snapshot && !works->len) {
        g_ptr_array_free(pass, TRUE);
        return usage_error(cmd, "--snapshot needs the workloads as --run W (the guest reads "
                                "each from its mailbox after the snapshot point)");
    }
    if (!cpus || !*cpus) {
        g_ptr_array_free(pass, TRUE);
        return usage_error(cmd, "give the CPU models: --cpu 386dx-40,486dx2-66,pentium-100");
    }
    g_auto(GStrv) cpu_list = g_strsplit(cpus, ",", -1);
    unsigned n_cpu = g_strv_length(cpu_list);
    for (unsigned c = 0; c < n_cpu; c++) {
        if (!nm_cpu_model_find(cpu_list[c])) {
            g_autofree char *msg = g_strdup_printf("--cpu: unknown CPU model '%s' (accepted: %s)",
                                                   cpu_list[c], nm_cpu_model_names());
            g_ptr_array_free(pass, TRUE);
            return usage_error(cmd, msg);
        }
        for (unsigned d = 0; d < c; d++)
            if (!strcmp(cpu_list[c], cpu_list[d])) {
                g_autofree char *msg = g_strdup_printf("--cpu: '%s' given twice", cpu_list[c]);
                g_ptr_array_free(pass, TRUE);
                return usage_error(cmd, msg);
            }
    }
    g_auto(GStrv) board_list = boards ? g_strsplit(boards, ",", -1) : NULL;
    unsigned n_board = board_list ? g_strv_length(board_list) : 1;
    for (unsigned b = 0; board_list && b < n_board; b++) {
        const nm_board_preset *bp = nm_board_preset_find(board_list[b]);
        g_autofree char *msg = NULL;
        if (!bp)
            msg = g_strdup_printf("--board: unknown board '%s' (accepted: %s)", board_list[b],
                                  nm_board_preset_names());
        for (unsigned c = 0; bp && !msg && c < n_cpu; c++)
            if (!nm_board_preset_fits(bp, nm_cpu_model_find(cpu_list[c])))
                msg = g_strdup_printf("--board: '%s' is not a board for the %s", board_list[b],
                                      cpu_list[c]);
        if (msg) {
            g_ptr_array_free(pass, TRUE);
            return usage_error(cmd, msg);
        }
    }
    /* The rows: every CPU on every board (with every workload of --run). */
    unsigned n_work = works->len ? works->len : 1;
    unsigned n_row = n_cpu * n_board * n_work;
    unsigned n_boot_rows = n_cpu * n_board;
    char **labels = g_new0(char *, n_boot_rows + 1);
    for (unsigned k = 0; k < n_boot_rows; k++)
        labels[k] = board_list
                        ? g_strdup_printf("%s/%s", cpu_list[k / n_board], board_list[k % n_board])
                        : g_strdup(cpu_list[k]);
    /* The workload column's width. */
    int wwidth = 0;
    for (guint w = 0; w < works->len; w++)
        wwidth = MAX(wwidth, (int)strlen(works->pdata[w]));
    if (ab) {
        /* The variants differ in their kernels, their initramfs images, or
         * both; what they share is given once and passed on. */
        const char *missing = (ka || kb || !(ia || ib)) && !ka ? "--kernel-a FILE is missing"
                              : ka && !kb                      ? "--kernel-b FILE is missing"
                              : ia && !ib                      ? "--initrd-b FILE is missing"
                              : ib && !ia                      ? "--initrd-a FILE is missing"
                              : ka && pass_kernel ? "give --kernel-a and --kernel-b, not --kernel"
                              : ia && pass_initrd ? "give --initrd-a and --initrd-b, not --initrd"
                              : !ka && !pass_kernel
                                  ? "--initrd-a/--initrd-b need the kernel: --kernel FILE"
                                  : NULL;
        if (missing) {
            g_ptr_array_free(pass, TRUE);
            return usage_error(cmd, missing);
        }
        const char *files[4] = {ka, kb, ia, ib};
        static const char *const opts[4] = {"--kernel-a", "--kernel-b", "--initrd-a", "--initrd-b"};
        for (int k = 0; k < 4; k++)
            if (files[k] && !g_file_test(files[k], G_FILE_TEST_IS_REGULAR)) {
                g_autofree char *msg = g_strdup_printf("%s: %s: no such file", opts[k], files[k]);
                g_ptr_array_free(pass, TRUE);
                return usage_error(cmd, msg);
            }
    }
    /* The outputs, before the runs: a typo must not cost the whole table. */
    const char *outputs[3][2] = {{"--json", json}, {"--csv", csv}, {"--plot", png}};
    for (int o = 0; o < 3; o++) {
        GError *e = NULL;
        if (outputs[o][1] && !nm_output_file_check(outputs[o][0], outputs[o][1], &e)) {
            g_autofree char *msg = g_strdup(e->message);
            g_error_free(e);
            g_ptr_array_free(pass, TRUE);
            return usage_error(cmd, msg);
        }
    }
    if (png && !g_find_program_in_path("gnuplot")) {
        g_ptr_array_free(pass, TRUE);
        return usage_error(cmd, "--plot needs gnuplot (scripts/setup installs gnuplot-nox)");
    }

    g_autofree char *dir = NULL;
    if (keep) {
        if (g_mkdir_with_parents(keep, 0755)) {
            g_autofree char *msg = g_strdup_printf("--keep: cannot create %s", keep);
            g_ptr_array_free(pass, TRUE);
            return usage_error(cmd, msg);
        }
        dir = g_strdup(keep);
    } else {
        dir = g_dir_make_tmp("nicemu-compare-XXXXXX", NULL);
        if (!dir) {
            g_ptr_array_free(pass, TRUE);
            return usage_error(cmd, "cannot create a temporary directory");
        }
    }
    unsigned n_runs = n_row * (ab ? 2 : 1);
    run *runs = g_new0(run, n_runs);
    /* --snapshot: one boot per kernel, CPU and board, saved for its rows. */
    unsigned n_boots = snapshot ? n_boot_rows * (ab ? 2 : 1) : 0;
    run *boots = g_new0(run, n_boots ? n_boots : 1);
    for (unsigned k = 0; k < n_boots; k++) {
        run *b = &boots[k];
        unsigned c = k % n_boot_rows;
        b->boot = true;
        b->cpu = labels[c];
        b->model = cpu_list[c / n_board];
        b->board = board_list ? board_list[c % n_board] : NULL;
        b->variant = ab ? (k < n_boot_rows ? 'A' : 'B') : 0;
        b->kernel = ab ? (k < n_boot_rows ? ka : kb) : NULL;
        b->initrd = ab ? (k < n_boot_rows ? ia : ib) : NULL;
        g_autofree char *stem = ab ? g_strdup_printf("boot-%c-%s", b->variant, b->cpu)
                                   : g_strdup_printf("boot-%s", b->cpu);
        g_strdelimit(stem, "/", '@');
        g_autofree char *sn = g_strdup_printf("%s.state", stem);
        g_autofree char *ln = g_strdup_printf("%s.log", stem);
        b->state = g_build_filename(dir, sn, NULL);
        b->log = g_build_filename(dir, ln, NULL);
        b->status = -1;
    }
    for (unsigned k = 0; k < n_runs; k++) {
        run *r = &runs[k];
        unsigned row = k % n_row, c = row / n_work, w = row % n_work;
        r->cpu = labels[c];
        r->work = works->len ? works->pdata[w] : NULL;
        r->model = cpu_list[c / n_board];
        r->board = board_list ? board_list[c % n_board] : NULL;
        r->variant = ab ? (k < n_row ? 'A' : 'B') : 0;
        r->kernel = ab ? (k < n_row ? ka : kb) : NULL;
        r->initrd = ab ? (k < n_row ? ia : ib) : NULL;
        if (snapshot) {
            r->booted = &boots[(k < n_row ? 0 : n_boot_rows) + c];
            r->state = g_strdup(r->booted->state);
        }
        const nm_cpu_model *m = nm_cpu_model_find(r->model);
        r->mhz = (double)m->hz_num / (double)m->hz_den / 1e6;
        g_autofree char *stem =
            ab ? g_strdup_printf("%c-%s", r->variant, r->cpu) : g_strdup(r->cpu);
        g_strdelimit(stem, "/", '@'); /* a file name */
        g_autofree char *wn = works->len ? g_strdup_printf("-w%u", w + 1) : g_strdup("");
        g_autofree char *jn = g_strdup_printf("%s%s.json", stem, wn);
        g_autofree char *ln = g_strdup_printf("%s%s.log", stem, wn);
        r->json = g_build_filename(dir, jn, NULL);
        r->log = g_build_filename(dir, ln, NULL);
        r->status = -1;
    }

    /* Run them, `jobs` at a time: the boots first. */
    g_autofree char *exe = self_exe();
    gint64 wall0 = g_get_monotonic_time();
    if (n_boots) run_all(exe, pass, boots, n_boots, jobs);
    unsigned n_boots_failed = 0;
    for (unsigned k = 0; k < n_boots; k++) {
        run *b = &boots[k];
        if (b->status == 0) continue;
        g_autofree char *why = nm_run_log_reason(b->log, "error");
        fprintf(stderr, "nicemu %s: error: boot %s%s failed (exit status %d): %s (log: %s)\n", cmd,
                ab ? (b->variant == 'A' ? "A " : "B ") : "", b->cpu, b->status, why, b->log);
        n_boots_failed++;
    }
    for (unsigned k = 0; k < n_runs; k++)
        if (runs[k].booted && runs[k].booted->status != 0) runs[k].status = -2; /* not run */
    run_all(exe, pass, runs, n_runs, jobs);
    double wall = (double)(g_get_monotonic_time() - wall0) / 1e6;

    bool usage_failed = false;
    for (unsigned k = 0; k < n_boots; k++)
        if (boots[k].status == 2) usage_failed = true;
    if (n_boots_failed) rc = 1;
    for (unsigned k = 0; k < n_runs; k++) {
        run *r = &runs[k];
        if (r->status == 0) r->ok = read_run(r);
        if (!r->ok && r->status != -2) {
            g_autofree char *why = nm_run_log_reason(r->log, "error");
            fprintf(stderr,
                    "nicemu %s: error: run %s%s%s%s failed (exit status %d): %s (log: %s)\n", cmd,
                    ab ? (r->variant == 'A' ? "A " : "B ") : "", r->cpu, r->work ? " " : "",
                    r->work ? r->work : "", r->status, why, r->log);
            if (r->status == 2) usage_failed = true;
            rc = 1;
        }
    }
    if (usage_failed) rc = 2;

    /* Per packet when every run moved frames. */
    bool per_packet = true;
    for (unsigned k = 0; k < n_runs; k++)
        per_packet &= runs[k].ok && runs[k].frames > 0;

    GString *tab = g_string_new(NULL), *js = g_string_new(NULL), *cs = g_string_new(NULL);
    const char *unit = per_packet ? "packet" : "window";
    g_string_append_printf(js, "{\n  \"command\": \"%s\",\n  \"unit\": \"%s\",\n  \"rows\": [", cmd,
                           unit);
    if (!ab) {
        row_head(tab, "cpu", "workload", wwidth);
        if (per_packet)
            g_string_append_printf(tab, "%7s %8s %12s %10s %7s %10s %10s %7s  %s\n", "MHz",
                                   "frames", "clk/packet", "insn/pkt", "CPI", "us/packet",
                                   "packets/s", "bus", "top functions (share of clocks)");
        else
            g_string_append_printf(tab, "%7s %14s %14s %7s %12s %7s  %s\n", "MHz", "window clocks",
                                   "instructions", "CPI", "window us", "bus",
                                   "top functions (share of clocks)");
        if (wwidth) g_string_append(cs, "workload,");
        g_string_append(cs, per_packet ? "cpu,mhz,frames,tx_frames,rx_frames,clocks_per_packet,"
                                         "instructions_per_packet,cpi,us_per_packet,packets_per_s,"
                                         "bus_wait_share,top_functions\n"
                                       : "cpu,mhz,window_clocks,window_instructions,cpi,window_us,"
                                         "bus_wait_share,top_functions\n");
        for (unsigned c = 0; c < n_row; c++) {
            run *r = &runs[c];
            row_head(tab, r->cpu, r->work, wwidth);
            if (!r->ok) {
                g_string_append_printf(tab, "%7.2f  (%s failed: %s)\n", r->mhz,
                                       r->status == -2 ? "boot" : "run",
                                       r->status == -2 ? r->booted->log : r->log);
                continue;
            }
            if (wwidth) {
                csv_field(cs, r->work);
                g_string_append_c(cs, ',');
            }
            figures f;
            figures_of(r, per_packet, &f);
            g_autofree char *topt = top_text(r, top);
            if (per_packet) {
                g_string_append_printf(tab,
                                       "%7.2f %8" G_GUINT64_FORMAT
                                       " %12.1f %10.1f %7.3f %10.2f %10.0f %6.1f%%  %s\n",
                                       r->mhz, r->frames, f.clocks, f.insns, f.cpi, f.us, f.pps,
                                       100.0 * f.bus_share, topt);
                g_string_append_printf(cs,
                                       "%s,%.3f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                       ",%" G_GUINT64_FORMAT ",%.3f,%.3f,%.4f,%.4f,%.1f,%.5f,",
                                       r->cpu, r->mhz, r->frames, r->tx, r->rx, f.clocks, f.insns,
                                       f.cpi, f.us, f.pps, f.bus_share);
            } else {
                g_string_append_printf(tab,
                                       "%7.2f %14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT
                                       " %7.3f %12.2f %6.1f%%  %s\n",
                                       r->mhz, r->clocks, r->insns, f.cpi, f.us,
                                       100.0 * f.bus_share, topt);
                g_string_append_printf(
                    cs, "%s,%.3f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.4f,%.4f,%.5f,",
                    r->cpu, r->mhz, r->clocks, r->insns, f.cpi, f.us, f.bus_share);
            }
            csv_field(cs, topt);
            g_string_append_c(cs, '\n');
            g_string_append_printf(js, "%s\n    {\"cpu\": ", c ? "," : "");
            json_str(js, r->cpu);
            if (r->work) {
                g_string_append(js, ", \"workload\": ");
                json_str(js, r->work);
            }
            g_string_append_printf(
                js,
                ", \"mhz\": %.3f, \"frames\": %" G_GUINT64_FORMAT
                ", \"tx_frames\": %" G_GUINT64_FORMAT ", \"rx_frames\": %" G_GUINT64_FORMAT
                ", \"window_clocks\": %" G_GUINT64_FORMAT
                ", \"window_instructions\": %" G_GUINT64_FORMAT
                ", \"bus_wait_cycles\": %" G_GUINT64_FORMAT
                ", \"cpi\": %.4f, \"bus_wait_share\": %.5f",
                r->mhz, r->frames, r->tx, r->rx, r->clocks, r->insns, r->bus, f.cpi, f.bus_share);
            if (per_packet)
                g_string_append_printf(
                    js,
                    ", \"clocks_per_packet\": %.3f, \"instructions_per_packet\": "
                    "%.3f, \"us_per_packet\": %.4f, \"packets_per_s\": %.1f",
                    f.clocks, f.insns, f.us, f.pps);
            g_string_append(js, ", \"top_functions\": [");
            for (unsigned t = 0; t < r->n_top && t < top; t++) {
                g_string_append_printf(js, "%s{\"name\": ", t ? ", " : "");
                json_str(js, r->top[t].name);
                g_string_append_printf(js, ", \"self_clocks\": %" G_GUINT64_FORMAT "}",
                                       r->top[t].clocks);
            }
            g_string_append(js, "]}");
        }
    } else {
        const char *u = per_packet ? "clk/packet" : "clocks";
        row_head(tab, "cpu", "workload", wwidth);
        g_string_append_printf(tab, "%13s A %13s B %12s %8s %10s %10s  %s\n", u, u, "B-A", "B-A %",
                               "insn A", "insn B", "top functions (B)");
        if (wwidth) g_string_append(cs, "workload,");
        g_string_append(cs, per_packet ? "cpu,mhz,a_clocks_per_packet,b_clocks_per_packet,delta,"
                                         "delta_percent,a_instructions_per_packet,"
                                         "b_instructions_per_packet,a_frames,b_frames\n"
                                       : "cpu,mhz,a_window_clocks,b_window_clocks,delta,"
                                         "delta_percent,a_instructions,b_instructions,a_frames,"
                                         "b_frames\n");
        for (unsigned c = 0; c < n_row; c++) {
            run *a = &runs[c], *b = &runs[n_row + c];
            row_head(tab, a->cpu, a->work, wwidth);
            if (!a->ok || !b->ok) {
                const run *bad = !a->ok ? a : b;
                g_string_append_printf(tab, " (%s failed: %s)\n",
                                       bad->status == -2 ? "boot" : "run",
                                       bad->status == -2 ? bad->booted->log : bad->log);
                continue;
            }
            if (wwidth) {
                csv_field(cs, a->work);
                g_string_append_c(cs, ',');
            }
            figures fa, fb;
            figures_of(a, per_packet, &fa);
            figures_of(b, per_packet, &fb);
            double delta = fb.clocks - fa.clocks;
            double pct = fa.clocks ? 100.0 * delta / fa.clocks : 0.0;
            g_autofree char *topt = top_text(b, top);
            g_string_append_printf(tab, "%15.1f %15.1f %+12.1f %+7.2f%% %10.1f %10.1f  %s\n",
                                   fa.clocks, fb.clocks, delta, pct, fa.insns, fb.insns, topt);
            g_string_append_printf(cs,
                                   "%s,%.3f,%.3f,%.3f,%.3f,%.4f,%.3f,%.3f,%" G_GUINT64_FORMAT
                                   ",%" G_GUINT64_FORMAT "\n",
                                   a->cpu, a->mhz, fa.clocks, fb.clocks, delta, pct, fa.insns,
                                   fb.insns, a->frames, b->frames);
            g_string_append_printf(js, "%s\n    {\"cpu\": ", c ? "," : "");
            json_str(js, a->cpu);
            if (a->work) {
                g_string_append(js, ", \"workload\": ");
                json_str(js, a->work);
            }
            g_string_append_printf(
                js,
                ", \"mhz\": %.3f, \"a_clocks\": %.3f, \"b_clocks\": %.3f, "
                "\"delta\": %.3f, \"delta_percent\": %.4f, \"a_instructions\": "
                "%.3f, \"b_instructions\": %.3f, \"a_frames\": %" G_GUINT64_FORMAT
                ", \"b_frames\": %" G_GUINT64_FORMAT "}",
                a->mhz, fa.clocks, fb.clocks, delta, pct, fa.insns, fb.insns, a->frames, b->frames);
        }
    }
    g_string_append(js, "\n  ]");
    /* Runs whose window holds serial output: the figures include it. */
    bool console_header = false;
    for (unsigned k = 0; k < n_runs; k++) {
        run *r = &runs[k];
        if (!r->ok || !r->console_bytes) continue;
        double share =
            r->window_clocks ? 100.0 * (double)r->console_clocks / (double)r->window_clocks : 0.0;
        g_string_append_printf(tab,
                               "warning: run %s%s%s%s wrote %" G_GUINT64_FORMAT
                               " bytes to the serial console inside the window: %" G_GUINT64_FORMAT
                               " clocks of transmit time (%.1f%% of the window); boot with quiet "
                               "and console=ttyS0,115200\n",
                               ab ? (r->variant == 'A' ? "A " : "B ") : "", r->cpu,
                               r->work ? " " : "", r->work ? r->work : "", r->console_bytes,
                               r->console_clocks, share);
        g_string_append_printf(
            js, "%s\n    {\"cpu\": ", console_header ? "," : ",\n  \"console_in_window\": [");
        console_header = true;
        json_str(js, r->cpu);
        g_string_append_printf(js,
                               ", \"variant\": \"%s\", \"console_bytes\": %" G_GUINT64_FORMAT
                               ", \"console_clocks\": %" G_GUINT64_FORMAT "}",
                               ab ? (r->variant == 'A' ? "A" : "B") : "", r->console_bytes,
                               r->console_clocks);
    }
    if (console_header) g_string_append(js, "\n  ]");
    g_string_append(js, "\n}\n");
    if (!per_packet)
        g_string_append(tab, "(no frames moved in every run's measurement window: figures are "
                             "for the whole window)\n");
    fputs(tab->str, stdout);
    fflush(stdout);
    g_autofree char *from =
        n_boots ? g_strdup_printf(" from %u snapshot%s", n_boots, n_boots == 1 ? "" : "s")
                : g_strdup("");
    fprintf(stderr, "nicemu %s: %u runs%s, wall %.1f s%s%s\n", cmd, n_runs, from, wall,
            keep ? ", reports and logs in " : "", keep ? keep : "");
    if (json && !write_file("--json", json, js->str)) rc = rc ? rc : 1;
    if (csv && !write_file("--csv", csv, cs->str)) rc = rc ? rc : 1;
    if (png && !plot(png, dir, ab, per_packet, runs, n_row)) rc = rc ? rc : 1;
    g_string_free(tab, TRUE);
    g_string_free(js, TRUE);
    g_string_free(cs, TRUE);

    bool all_ok = rc == 0;
    for (unsigned k = 0; k < n_boots; k++) {
        if (!keep) g_unlink(boots[k].state);
        if (!keep && all_ok) g_unlink(boots[k].log);
        g_free(boots[k].state);
        g_free(boots[k].log);
    }
    g_free(boots);
    for (unsigned k = 0; k < n_runs; k++) {
        g_free(runs[k].state);
        if (!keep && runs[k].ok) {
            g_unlink(runs[k].json);
            g_unlink(runs[k].log);
        }
        for (unsigned t = 0; t < runs[k].n_top; t++)
            g_free(runs[k].top[t].name);
        g_free(runs[k].json);
        g_free(runs[k].log);
        g_free(runs[k].label);
    }
    if (!keep) {
        g_autofree char *dat = g_build_filename(dir, "plot.dat", NULL);
        g_autofree char *gp = g_build_filename(dir, "plot.gp", NULL);
        g_unlink(dat);
        g_unlink(gp);
        if (rc == 0) g_rmdir(dir);
    }
    g_free(runs);
    g_strfreev(labels);
    g_ptr_array_free(pass, TRUE);
    return rc;
}
