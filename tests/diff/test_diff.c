/* Differential test, emulator side: replays every record a reference CPU
 * wrote (diffgen on the host or under qemu-i386, diffgen64 in long mode)
 * through nicemu's interpreter and compares all eight GPRs, the memory
 * window, EIP and the *defined* arithmetic flags (plus DF).  What the SDM
 * leaves undefined is masked per instruction: see diff_undefined() and
 * README.md.  Host #DE cases must raise vector 0 in the emulator, at the
 * faulting instruction, with the registers untouched.
 *
 *   NICEMU_DIFF_RECORDS=a.bin[:b.bin...] test_diff [-p /diff/alu] [--verbose]
 *
 * The files together must hold every case of every template once (diffgen64's
 * long-mode cases and a 32-bit reference's others, say); with
 * NICEMU_DIFF_PARTIAL=1 cases no file holds are reported and left out, and
 * a run in which no template had a case exits 77 (skipped).
 *
 * One g_test case per template: /diff/<group>/<name>.  The first case of a
 * group prints which references ran the group's cases. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "diff_machine.h"
#include "diff_table.h"
#include "emu/config.h"
#include "emu/machine.h"

/* Emulator memory layout (all in the default 32 MB of RAM). */
#define HANDLERS   DIFF_HANDLERS
#define STACK      DIFF_STACK
#define CODE       0x00100000u
#define MAX_REPORT 8

#define ARITH    (NM_FLAG_CF | NM_FLAG_PF | NM_FLAG_AF | NM_FLAG_ZF | NM_FLAG_SF | NM_FLAG_OF)
#define COMPARED (ARITH | NM_FLAG_DF)

#define MAX_FILES 4

static const diff_insn *table;
static unsigned ntable;
static diff_record *records; /* every file's, in (template, case) order */
static uint8_t *rec_file;    /* which file each record came from */
static uint32_t nrecords;
static uint32_t *first, *count; /* per template */
static uint32_t file_seed, file_percent;
static diff_header headers[MAX_FILES];
static unsigned nfiles;
static bool partial;
static unsigned templates_run, templates_skipped;

static nm_machine *mach;
static nm_cpu *cpu;

static uint32_t mem_in32(const diff_record *r, unsigned size)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint32_t)r->mem_in[8 + i] << (8 * i);
    return v;
}

static void flag_names(GString *s, uint32_t f)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } n[] = {{NM_FLAG_OF, "OF"}, {NM_FLAG_DF, "DF"}, {NM_FLAG_SF, "SF"}, {NM_FLAG_ZF, "ZF"},
             {NM_FLAG_AF, "AF"}, {NM_FLAG_PF, "PF"}, {NM_FLAG_CF, "CF"}};
    bool any = false;
    for (size_t i = 0; i < G_N_ELEMENTS(n); i++)
        if (f & n[i].bit) {
            g_string_append_printf(s, "%s%s", any ? " " : "", n[i].name);
            any = true;
        }
    if (!any) g_string_append(s, "-");
}

/* ------------------------------------------------------ the machine */

static diff_machine dm;

static void machine_setup(void)
{
    diff_machine_setup(&dm, NULL, false);
    mach = dm.mach;
    cpu = dm.cpu;
}

/* ---------------------------------------------------------- one case */

typedef struct {
    bool exception;
    unsigned vector;
    uint32_t regs[8], eflags, eip, pushed_eip;
    uint8_t mem[DIFF_WIN];
} emu_out;

static void emu_run(const diff_record *r, emu_out *o)
{
    nm_mem_dma_write(mach->mem, CODE, r->code, r->len);
    nm_mem_dma_write(mach->mem, DIFF_WIN_BASE, r->mem_in, DIFF_WIN);
    for (int i = 0; i < 8; i++)
        nm_cpu_set_reg(cpu, i, i == NM_ESP ? STACK : r->in_regs[i]);
    nm_cpu_set_eflags(cpu, (r->in_flags & ~NM_FLAG_IF) | 0x2u);
    nm_cpu_set_eip(cpu, CODE);
    mach->stop_requested = 0;

    bool done = diff_run_to(cpu, CODE + r->len, 4);
    o->eip = nm_cpu_get_eip(cpu);
    o->exception = !done && o->eip >= HANDLERS && o->eip < HANDLERS + 32 * 16;
    o->vector = o->exception ? (o->eip - HANDLERS) / 16 : 0;
    for (int i = 0; i < 8; i++)
        o->regs[i] = nm_cpu_get_reg(cpu, i);
    o->eflags = nm_cpu_get_eflags(cpu);
    o->pushed_eip = 0;
    if (o->exception) {
        uint32_t esp = o->regs[NM_ESP];
        if (esp < STACK && esp >= 0x1000) memcpy(&o->pushed_eip, mach->ram->host + esp, 4);
    }
    nm_mem_dma_read(mach->mem, DIFF_WIN_BASE, o->mem, DIFF_WIN);
}

static const char *const regn[8] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};

static void report(const diff_insn *t, const diff_record *r, const emu_out *o, const diff_undef *u,
                   const char *what)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "MISMATCH %s [", t->name);
    for (unsigned i = 0; i < r->len; i++)
        g_string_append_printf(s, "%s%02x", i ? " " : "", r->code[i]);
    g_string_append_printf(s, "]: %s\n  in:  eflags=%08x", what, r->in_flags);
    for (int i = 0; i < 8; i++)
        if (i != NM_ESP) g_string_append_printf(s, " %s=%08x", regn[i], r->in_regs[i]);
    if (t->mem) g_string_append_printf(s, " [mem]=%08x", mem_in32(r, 4));
    g_string_append_printf(s, "\n  %s:%s eflags=%08x", headers[rec_file[r - records]].reference,
                           r->status == DIFF_ST_DE ? " #DE" : "", r->out_flags);
    for (int i = 0; i < 8; i++)
        if (i != NM_ESP) g_string_append_printf(s, " %s=%08x", regn[i], r->out_regs[i]);
    if (t->mem)
        g_string_append_printf(s, " [mem]=%08x",
                               r->mem_out[8] | (uint32_t)r->mem_out[9] << 8 |
                                   (uint32_t)r->mem_out[10] << 16 | (uint32_t)r->mem_out[11] << 24);
    g_string_append_printf(s, "\n  emu: eflags=%08x", o->eflags);
    for (int i = 0; i < 8; i++)
        if (i != NM_ESP) g_string_append_printf(s, " %s=%08x", regn[i], o->regs[i]);
    if (t->mem)
        g_string_append_printf(s, " [mem]=%08x",
                               o->mem[8] | (uint32_t)o->mem[9] << 8 | (uint32_t)o->mem[10] << 16 |
                                   (uint32_t)o->mem[11] << 24);
    g_string_append_printf(s, " esp=%08x eip=%08x", o->regs[NM_ESP], o->eip);
    if (o->exception) g_string_append_printf(s, " (exception %u)", o->vector);
    g_string_append(s, "\n  flags differing (defined): ");
    flag_names(s, (r->out_flags ^ o->eflags) & COMPARED & ~u->flags);
    g_string_append(s, "; undefined here: ");
    flag_names(s, u->flags);
    if (u->reg >= 0)
        g_string_append_printf(s, "; dest %s bits %08x undefined", regn[u->reg], u->mask);
    fprintf(stderr, "%s\n", s->str);
    g_string_free(s, TRUE);
}

/* Returns NULL if the case matches, else what differs. */
static const char *check(const diff_insn *t, const diff_record *r, const emu_out *o,
                         const diff_undef *u, char *buf, size_t len)
{
    if (r->status == DIFF_ST_DE) {
        if (!o->exception) return "the reference raised #DE, the emulator did not";
        if (o->vector != NM_EXC_DE) {
            snprintf(buf, len, "the reference raised #DE, the emulator vector %u", o->vector);
            return buf;
        }
        if (o->pushed_eip != CODE) {
            snprintf(buf, len, "#DE pushed EIP %08x, not the faulting instruction %08x",
                     o->pushed_eip, CODE);
            return buf;
        }
        for (int i = 0; i < 8; i++)
            if (i != NM_ESP && o->regs[i] != r->in_regs[i]) {
                snprintf(buf, len, "#DE changed %s", regn[i]);
                return buf;
            }
        if (memcmp(o->mem, r->mem_in, DIFF_WIN)) return "#DE changed memory";
        return NULL;
    }
    if (o->exception) {
        snprintf(buf, len, "emulator raised exception %u", o->vector);
        return buf;
    }
    if (o->eip != CODE + r->len) return "EIP";
    for (int i = 0; i < 8; i++) {
        uint32_t exp = i == NM_ESP ? STACK : r->out_regs[i];
        uint32_t diff = exp ^ o->regs[i];
        if (i == u->reg) diff &= ~u->mask;
        if (diff) {
            snprintf(buf, len, "%s", regn[i]);
            return buf;
        }
    }
    if (!u->mem && memcmp(o->mem, r->mem_out, DIFF_WIN)) return "memory";
    if ((r->out_flags ^ o->eflags) & COMPARED & ~u->flags) return "flags";
    (void)t;
    return NULL;
}

/* Per file, how many of the given templates' cases it holds; and the cases
 * no file holds. */
static void tally(unsigned from, unsigned to, uint32_t *per_file, uint32_t *missing)
{
    memset(per_file, 0, MAX_FILES * sizeof *per_file);
    *missing = 0;
    for (unsigned i = from; i < to; i++) {
        for (uint32_t k = 0; k < count[i]; k++)
            per_file[rec_file[first[i] + k]]++;
        *missing += diff_case_count(&table[i], file_percent) - count[i];
    }
}

static void print_sources(GString *s, const uint32_t *per_file, uint32_t missing)
{
    bool any = false;
    for (unsigned f = 0; f < nfiles; f++) {
        if (!per_file[f]) continue;
        g_string_append_printf(s, "%s%s (%s) %u cases", any ? ", " : "", headers[f].reference,
                               headers[f].cpu, per_file[f]);
        any = true;
    }
    if (missing)
        g_string_append_printf(s, "%s%u cases without a reference", any ? ", " : "", missing);
}

/* The first case of a group says who ran the group's cases. */
static void print_group(unsigned tid)
{
    static const char *printed;
    const char *g = table[tid].group;
    if (printed && !strcmp(printed, g)) return;
    printed = g;
    unsigned from = tid, to = tid;
    while (from > 0 && !strcmp(table[from - 1].group, g))
        from--;
    while (to < ntable && !strcmp(table[to].group, g))
        to++;
    uint32_t per_file[MAX_FILES], missing;
    tally(from, to, per_file, &missing);
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "# diff/%s: %u templates; reference: ", g, to - from);
    print_sources(s, per_file, missing);
    printf("%s\n", s->str);
    fflush(stdout); /* before a mismatch report on stderr */
    g_string_free(s, TRUE);
}

static void test_template(gconstpointer data)
{
    unsigned tid = GPOINTER_TO_UINT(data);
    const diff_insn *t = &table[tid];
    print_group(tid);
    uint32_t expected = diff_case_count(t, file_percent);
    if (!count[tid]) {
        templates_skipped++;
        g_test_skip("no reference ran this template's cases");
        return;
    }
    templates_run++;
    if (!cpu) machine_setup();
    unsigned bad = 0, de = 0, undef_differs = 0, dest_differs = 0;
    for (uint32_t k = 0; k < count[tid]; k++) {
        const diff_record *r = &records[first[tid] + k];
        emu_out o;
        emu_run(r, &o);
        diff_undef u = diff_undefined(t, r);
        char buf[96];
        const char *what = check(t, r, &o, &u, buf, sizeof buf);
        if (r->status == DIFF_ST_DE)
            de++;
        else if (!what) {
            bool dest = u.reg >= 0 && ((r->out_regs[u.reg] ^ o.regs[u.reg]) & u.mask);
            undef_differs += ((r->out_flags ^ o.eflags) & u.flags) || dest;
            dest_differs += dest;
        }
        if (what) {
            if (bad < MAX_REPORT) report(t, r, &o, &u, what);
            bad++;
        }
    }
    if (g_test_verbose()) {
        uint32_t per_file[MAX_FILES], missing;
        tally(tid, tid + 1, per_file, &missing);
        GString *s = g_string_new(NULL);
        print_sources(s, per_file, missing);
        printf("# %s: %u cases (%u #DE), %u mismatches, %u differ from the reference only in "
               "what is undefined (%u in an undefined destination); %s\n",
               t->name, count[tid], de, bad, undef_differs, dest_differs, s->str);
        g_string_free(s, TRUE);
    } else if (count[tid] < expected) {
        printf("# %s: %u of %u cases have no reference\n", t->name, expected - count[tid],
               expected);
    }
    if (bad) {
        fprintf(stderr, "%s: %u of %u cases differ (seed %u)\n", t->name, bad, count[tid],
                file_seed);
        g_test_fail();
    }
}

/* ---------------------------------------------------------- the files */

static diff_record *file_recs[MAX_FILES];

typedef struct {
    uint32_t file, i;
} rec_ref;

static int by_case(const void *a, const void *b)
{
    const rec_ref *p = a, *q = b;
    const diff_record *x = &file_recs[p->file][p->i], *y = &file_recs[q->file][q->i];
    if (x->tmpl != y->tmpl) return x->tmpl < y->tmpl ? -1 : 1;
    if (x->idx != y->idx) return x->idx < y->idx ? -1 : 1;
    return p->file < q->file ? -1 : p->file > q->file;
}

static bool load(const char *list)
{
    gchar **paths = g_strsplit(list, ":", -1);
    bool ok = false;
    uint64_t total = 0;
    for (nfiles = 0; paths[nfiles]; nfiles++) {
        if (nfiles == MAX_FILES) {
            fprintf(stderr, "test_diff: more than %u record files\n", MAX_FILES);
            goto out;
        }
        char err[256];
        diff_header *h = &headers[nfiles];
        if (diff_read_file(paths[nfiles], h, &file_recs[nfiles], err, sizeof err)) {
            fprintf(stderr, "test_diff: %s\n", err);
            goto out;
        }
        if (nfiles && (h->seed != headers[0].seed || h->percent != headers[0].percent)) {
            fprintf(stderr,
                    "test_diff: %s (seed %u, %u%%) and %s (seed %u, %u%%) ran other "
                    "cases\n",
                    paths[nfiles], h->seed, h->percent, paths[0], headers[0].seed,
                    headers[0].percent);
            goto out;
        }
        total += h->records;
    }
    if (!nfiles) goto out;
    file_seed = headers[0].seed;
    file_percent = headers[0].percent;
    if (total > UINT32_MAX) goto out;

    /* All files' records, sorted by (template, case). */
    nrecords = (uint32_t)total;
    rec_ref *order = g_new(rec_ref, nrecords + 1);
    uint32_t n = 0;
    for (unsigned f = 0; f < nfiles; f++)
        for (uint32_t i = 0; i < headers[f].records; i++)
            order[n++] = (rec_ref){f, i};
    qsort(order, nrecords, sizeof *order, by_case);
    records = g_new(diff_record, nrecords + 1);
    rec_file = g_new(uint8_t, nrecords + 1);
    for (uint32_t i = 0; i < nrecords; i++) {
        records[i] = file_recs[order[i].file][order[i].i];
        rec_file[i] = (uint8_t)order[i].file;
    }
    g_free(order);

    first = g_new0(uint32_t, ntable);
    count = g_new0(uint32_t, ntable);
    for (uint32_t i = 0; i < nrecords; i++) {
        const diff_record *r = &records[i];
        if (i && r->tmpl == records[i - 1].tmpl && r->idx == records[i - 1].idx) {
            fprintf(stderr, "test_diff: case %u of %s is in %s and in %s\n", r->idx,
                    table[r->tmpl].name, paths[rec_file[i - 1]], paths[rec_file[i]]);
            goto out;
        }
        if (!count[r->tmpl]) first[r->tmpl] = i;
        count[r->tmpl]++;
    }
    uint32_t per_file[MAX_FILES], missing;
    tally(0, ntable, per_file, &missing);
    if (missing && !partial) {
        for (unsigned i = 0; i < ntable; i++)
            if (count[i] < diff_case_count(&table[i], file_percent)) {
                fprintf(stderr,
                        "test_diff: %u cases (%s first) are in none of the record files, "
                        "which hold: %s cases",
                        missing, table[i].name, headers[0].cases);
                for (unsigned f = 1; f < nfiles; f++)
                    fprintf(stderr, " + %s", headers[f].cases);
                fprintf(stderr, " (NICEMU_DIFF_PARTIAL=1 runs what is there)\n");
                break;
            }
        goto out;
    }
    GString *s = g_string_new(NULL);
    print_sources(s, per_file, missing);
    printf("# differential records: %s, seed %u, %u%%, %u cases of %u templates: %s\n", list,
           file_seed, file_percent, nrecords, ntable, s->str);
    g_string_free(s, TRUE);
    ok = true;
out:
    for (unsigned f = 0; f < MAX_FILES; f++) {
        free(file_recs[f]);
        file_recs[f] = NULL;
    }
    g_strfreev(paths);
    return ok;
}

static char *test_path(const diff_insn *t)
{
    GString *s = g_string_new("/diff/");
    g_string_append_printf(s, "%s/", t->group);
    for (const char *p = t->name; *p; p++) {
        if (*p == '/') continue; /* r/m8 -> rm8 */
        g_string_append_c(s, *p == ' ' ? '_' : *p);
    }
    return g_string_free(s, FALSE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    ntable = diff_table_build(&table);
    const char *path = g_getenv("NICEMU_DIFF_RECORDS");
    if (!path && argc > 1) path = argv[1];
    if (!path) {
        fprintf(stderr, "test_diff: set NICEMU_DIFF_RECORDS to the file(s) diffgen wrote\n");
        return 2;
    }
    partial = !g_strcmp0(g_getenv("NICEMU_DIFF_PARTIAL"), "1");
    if (!load(path)) return 1;
    for (unsigned i = 0; i < ntable; i++) {
        char *p = test_path(&table[i]);
        g_test_add_data_func(p, GUINT_TO_POINTER(i), test_template);
        g_free(p);
    }
    int rc = g_test_run();
    diff_machine_free(&dm);
    g_free(records);
    g_free(rec_file);
    g_free(first);
    g_free(count);
    /* Nothing ran: every selected template lacked a reference. */
    if (rc == 0 && !templates_run && templates_skipped) return 77;
    return rc;
}
