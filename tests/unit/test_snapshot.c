/* The snapshot field lists (emu/core/snapshot.h): values round-trip through
 * one visitor; a field added in a later section version keeps its default
 * when an older file is loaded; a newer file, a missing, unknown or retyped
 * field, a damaged body are refused with a message naming section and
 * field; timers are saved by their owners and the queue is rebuilt in
 * (due, seq) order; a pending timer nobody saves makes the save fail.
 *
 * Then whole machines: tests/baremetal/snapshot.c (paging, the PIT and the
 * RTC interrupting, the UART transmitting) saved at its snapshot point and
 * restored gives the report, byte for byte, of the run that saved it and
 * of a run that never saved; a damaged, truncated, other-version file or
 * one made from other inputs is refused with one message. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "devices/pc/pc.h"
#include "emu/core/snapshot.h"
#include "emu/pc.h"
#include "emu/run.h"
#include "emu/snapshot.h"

#ifndef NICEMU_BAREMETAL_DIR
#define NICEMU_BAREMETAL_DIR "tests/baremetal"
#endif

/* A part as it was in version 1 and as it is in version 2 (one more field,
 * with a default the freshly built part has). */
typedef struct part {
    uint8_t a8;
    uint16_t a16;
    uint32_t a32, words[3];
    uint64_t a64;
    int32_t neg;
    bool flag;
    uint8_t blob[5];
    uint8_t *var;
    size_t var_len;
    char *str, *none;
    GString *text;
    uint32_t added; /* version 2 */
    uint32_t ch[2];
} part;

static void visit(part *p, nm_snap *s, uint32_t version)
{
    if (!nm_snap_begin(s, "part", version)) return;
    nm_snap_u8(s, "a8", &p->a8);
    nm_snap_u16(s, "a16", &p->a16);
    nm_snap_u32(s, "a32", &p->a32);
    nm_snap_u64(s, "a64", &p->a64);
    nm_snap_i32(s, "neg", &p->neg);
    nm_snap_bool(s, "flag", &p->flag);
    nm_snap_bytes(s, "blob", p->blob, sizeof p->blob);
    nm_snap_u32s(s, "words", p->words, 3);
    nm_snap_var(s, "var", &p->var, &p->var_len, 64);
    nm_snap_string(s, "str", &p->str);
    nm_snap_string(s, "none", &p->none);
    nm_snap_gstring(s, "text", p->text);
    for (unsigned i = 0; i < 2; i++) {
        nm_snap_push(s, "ch%u", i);
        nm_snap_u32(s, "count", &p->ch[i]);
        nm_snap_pop(s);
    }
    if (version >= 2) {
        nm_snap_since(s, 2);
        nm_snap_u32(s, "added", &p->added);
    }
    nm_snap_end(s);
}

static void part_init(part *p)
{
    memset(p, 0, sizeof *p);
    p->text = g_string_new(NULL);
    p->added = 77; /* the default a fresh part has */
}

static void part_clear(part *p)
{
    g_free(p->var);
    g_free(p->str);
    g_free(p->none);
    g_string_free(p->text, TRUE);
}

static GByteArray *save(part *p, uint32_t version)
{
    nm_snap *s = nm_snap_writer_new(NULL);
    visit(p, s, version);
    GByteArray *b = nm_snap_writer_finish(s);
    g_assert_null(nm_snap_error(s));
    nm_snap_free(s);
    g_assert_nonnull(b);
    return b;
}

/* Loads `b` with the visitor of `version`; returns the error (or NULL). */
static char *load(GByteArray *b, part *p, uint32_t version)
{
    nm_clock c;
    nm_clock_init(&c, 1000000, 1);
    GError *err = NULL;
    nm_snap *s = nm_snap_reader_new(b->data, b->len, &c, &err);
    if (!s) {
        char *msg = g_strdup(err->message);
        g_error_free(err);
        return msg;
    }
    nm_snap_reader_clear_queue(s);
    visit(p, s, version);
    char *msg = nm_snap_reader_finish(s) ? NULL : g_strdup(nm_snap_error(s));
    nm_snap_free(s);
    return msg;
}

static void fill(part *p)
{
    p->a8 = 0xab;
    p->a16 = 0xbeef;
    p->a32 = 0xdeadbeef;
    p->a64 = 0x0123456789abcdefull;
    p->neg = -5;
    p->flag = true;
    memcpy(p->blob, "hello", 5);
    p->words[0] = 1, p->words[1] = 2, p->words[2] = 0xffffffffu;
    p->var_len = 3;
    p->var = g_memdup2("xyz", 3);
    p->str = g_strdup("a string");
    g_string_assign(p->text, "console\ntext");
    p->ch[0] = 10, p->ch[1] = 20;
    p->added = 5;
}

static void test_round_trip(void)
{
    part a, b;
    part_init(&a);
    part_init(&b);
    fill(&a);
    GByteArray *bytes = save(&a, 2);
    g_assert_null(load(bytes, &b, 2));
    g_assert_cmpuint(b.a8, ==, 0xab);
    g_assert_cmpuint(b.a16, ==, 0xbeef);
    g_assert_cmpuint(b.a32, ==, 0xdeadbeef);
    g_assert_cmpuint(b.a64, ==, 0x0123456789abcdefull);
    g_assert_cmpint(b.neg, ==, -5);
    g_assert_true(b.flag);
    g_assert_cmpmem(b.blob, 5, "hello", 5);
    g_assert_cmpuint(b.words[2], ==, 0xffffffffu);
    g_assert_cmpmem(b.var, b.var_len, "xyz", 3);
    g_assert_cmpstr(b.str, ==, "a string");
    g_assert_null(b.none);
    g_assert_cmpstr(b.text->str, ==, "console\ntext");
    g_assert_cmpuint(b.ch[0], ==, 10);
    g_assert_cmpuint(b.ch[1], ==, 20);
    g_assert_cmpuint(b.added, ==, 5);
    g_byte_array_free(bytes, TRUE);
    part_clear(&a);
    part_clear(&b);
}

/* A version-1 file read by the version-2 part: the new field keeps the
 * fresh part's default, everything else loads. */
static void test_old_file_loads(void)
{
    part a, b;
    part_init(&a);
    part_init(&b);
    fill(&a);
    GByteArray *bytes = save(&a, 1);
    g_assert_null(load(bytes, &b, 2));
    g_assert_cmpuint(b.a32, ==, 0xdeadbeef);
    g_assert_cmpuint(b.added, ==, 77);
    g_byte_array_free(bytes, TRUE);
    part_clear(&a);
    part_clear(&b);
}

static void expect_error(GByteArray *bytes, uint32_t version, const char *needle)
{
    part b;
    part_init(&b);
    char *msg = load(bytes, &b, version);
    if (!msg || !strstr(msg, needle))
        g_error("expected an error with '%s', got '%s'", needle, msg ? msg : "(none)");
    g_free(msg);
    part_clear(&b);
}

/* A version-2 file read by the version-1 part: refused, naming both. */
static void test_newer_file_refused(void)
{
    part a;
    part_init(&a);
    fill(&a);
    GByteArray *bytes = save(&a, 2);
    expect_error(bytes, 1, "section 'part' is version 2, this nicemu reads up to version 1");
    g_byte_array_free(bytes, TRUE);
    part_clear(&a);
}

/* Writers that differ from the reader without a version change. */
static GByteArray *save_custom(void (*fn)(nm_snap *s))
{
    nm_snap *s = nm_snap_writer_new(NULL);
    fn(s);
    GByteArray *b = nm_snap_writer_finish(s);
    nm_snap_free(s);
    return b;
}

static void write_all_but_a32(nm_snap *s)
{
    part p;
    part_init(&p);
    fill(&p);
    nm_snap_begin(s, "part", 1);
    nm_snap_u8(s, "a8", &p.a8);
    nm_snap_end(s);
    part_clear(&p);
}

static void write_extra(nm_snap *s)
{
    part p;
    part_init(&p);
    fill(&p);
    visit(&p, s, 1);
    nm_snap_begin(s, "other", 1);
    nm_snap_end(s);
    part_clear(&p);
}

static void write_unknown_field(nm_snap *s)
{
    part p;
    part_init(&p);
    fill(&p);
    /* version 2's field under version 1: a build that forgot to raise it */
    nm_snap_begin(s, "part", 1);
    nm_snap_u8(s, "a8", &p.a8);
    nm_snap_u16(s, "a16", &p.a16);
    nm_snap_u32(s, "a32", &p.a32);
    nm_snap_u64(s, "a64", &p.a64);
    nm_snap_i32(s, "neg", &p.neg);
    nm_snap_bool(s, "flag", &p.flag);
    nm_snap_bytes(s, "blob", p.blob, sizeof p.blob);
    nm_snap_u32s(s, "words", p.words, 3);
    nm_snap_var(s, "var", &p.var, &p.var_len, 64);
    nm_snap_string(s, "str", &p.str);
    nm_snap_string(s, "none", &p.none);
    nm_snap_gstring(s, "text", p.text);
    nm_snap_u32(s, "ch0.count", &p.ch[0]);
    nm_snap_u32(s, "ch1.count", &p.ch[1]);
    nm_snap_u32(s, "surprise", &p.added);
    nm_snap_end(s);
    part_clear(&p);
}

static void write_retyped(nm_snap *s)
{
    part p;
    part_init(&p);
    fill(&p);
    nm_snap_begin(s, "part", 1);
    uint64_t wide = 1;
    nm_snap_u64(s, "a8", &wide); /* was a u8 */
    nm_snap_end(s);
    part_clear(&p);
}

static void test_mismatches_refused(void)
{
    GByteArray *b = save_custom(write_all_but_a32);
    expect_error(b, 1, "section 'part' (version 1) lacks field 'a16'");
    g_byte_array_free(b, TRUE);
    b = save_custom(write_extra);
    expect_error(b, 1, "a section 'other' no part of this machine reads");
    g_byte_array_free(b, TRUE);
    b = save_custom(write_unknown_field);
    expect_error(b, 1, "has a field 'surprise' this nicemu does not know");
    g_byte_array_free(b, TRUE);
    b = save_custom(write_retyped);
    expect_error(b, 1, "field 'a8' is a u64, this nicemu expects a u8");
    g_byte_array_free(b, TRUE);
    /* no section at all */
    GByteArray *empty = g_byte_array_new();
    expect_error(empty, 1, "no section 'part'");
    g_byte_array_free(empty, TRUE);
}

/* Every cut of a good body, and every single-byte change of its headers,
 * is refused or loads to something, never crashes; cuts are refused. */
static void test_damage_refused(void)
{
    part a;
    part_init(&a);
    fill(&a);
    GByteArray *bytes = save(&a, 2);
    for (guint cut = 1; cut < bytes->len; cut++) {
        GByteArray *t = g_byte_array_new();
        g_byte_array_append(t, bytes->data, cut);
        part b;
        part_init(&b);
        char *msg = load(t, &b, 2);
        g_assert_nonnull(msg);
        g_free(msg);
        part_clear(&b);
        g_byte_array_free(t, TRUE);
    }
    for (guint i = 0; i < bytes->len; i++) {
        GByteArray *t = g_byte_array_new();
        g_byte_array_append(t, bytes->data, bytes->len);
        t->data[i] ^= 0x5a;
        part b;
        part_init(&b);
        g_free(load(t, &b, 2));
        part_clear(&b);
        g_byte_array_free(t, TRUE);
    }
    g_byte_array_free(bytes, TRUE);
    part_clear(&a);
}

/* Loaded values a part checks itself. */
static void test_check(void)
{
    nm_snap *s = nm_snap_writer_new(NULL);
    nm_snap_begin(s, "x", 1);
    uint32_t head = 99;
    nm_snap_u32(s, "head", &head);
    nm_snap_end(s);
    GByteArray *b = nm_snap_writer_finish(s);
    nm_snap_free(s);
    GError *err = NULL;
    s = nm_snap_reader_new(b->data, b->len, NULL, &err);
    g_assert_nonnull(s);
    nm_snap_begin(s, "x", 1);
    head = 0;
    nm_snap_u32(s, "head", &head);
    g_assert_false(nm_snap_check(s, head < 16, "head"));
    nm_snap_end(s);
    g_assert_cmpstr(nm_snap_error(s), ==, "section 'x': field 'head': bad value");
    nm_snap_free(s);
    g_byte_array_free(b, TRUE);
}

/* ---- timers ---- */

static void no_fn(void *opaque, uint64_t late)
{
    (void)late;
    g_string_append(opaque, "x");
}

static void test_timers(void)
{
    nm_clock c;
    nm_clock_init(&c, 1000000000, 1);
    GString *log = g_string_new(NULL);
    nm_timer t[4];
    for (int i = 0; i < 4; i++)
        nm_timer_init(&t[i], no_fn, log, "t");
    nm_timer_at_cycle(&c, &t[2], 50);
    nm_timer_at_cycle(&c, &t[0], 50); /* tie: after t[2] */
    nm_timer_at_cycle(&c, &t[1], 20);
    /* t[3] idle */
    nm_snap *s = nm_snap_writer_new(&c);
    nm_snap_begin(s, "timers", 1);
    for (int i = 0; i < 4; i++) {
        char n[8];
        g_snprintf(n, sizeof n, "t%d", i);
        nm_snap_timer(s, n, &t[i]);
    }
    nm_snap_u64(s, "next_seq", &c.next_seq);
    nm_snap_end(s);
    GByteArray *b = nm_snap_writer_finish(s);
    g_assert_nonnull(b);
    nm_snap_free(s);

    /* A fresh clock with other timers pending: all replaced. */
    nm_clock d;
    nm_clock_init(&d, 1000000000, 1);
    nm_timer u[4];
    for (int i = 0; i < 4; i++)
        nm_timer_init(&u[i], no_fn, log, "u");
    nm_timer_at_cycle(&d, &u[3], 5);
    GError *err = NULL;
    s = nm_snap_reader_new(b->data, b->len, &d, &err);
    g_assert_nonnull(s);
    nm_snap_reader_clear_queue(s);
    nm_snap_begin(s, "timers", 1);
    for (int i = 0; i < 4; i++) {
        char n[8];
        g_snprintf(n, sizeof n, "t%d", i);
        nm_snap_timer(s, n, &u[i]);
    }
    nm_snap_u64(s, "next_seq", &d.next_seq);
    nm_snap_end(s);
    g_assert_true(nm_snap_reader_finish(s));
    nm_snap_free(s);
    g_assert_true(d.head == &u[1]);
    g_assert_true(u[1].next == &u[2]);
    g_assert_true(u[2].next == &u[0]);
    g_assert_null(u[0].next);
    g_assert_false(u[3].pending);
    g_assert_cmpuint(d.deadline, ==, 20);
    g_assert_cmpuint(d.next_seq, ==, c.next_seq);
    d.cycles = 100;
    g_assert_cmpuint(nm_clock_run_due(&d), ==, 3);
    g_byte_array_free(b, TRUE);

    /* A pending timer no part saves: the save is refused. */
    s = nm_snap_writer_new(&c);
    nm_snap_begin(s, "timers", 1);
    nm_snap_timer(s, "t1", &t[1]);
    nm_snap_end(s);
    g_assert_null(nm_snap_writer_finish(s));
    g_assert_nonnull(strstr(nm_snap_error(s), "an event of 't' is pending and no part saves it"));
    nm_snap_free(s);
    g_string_free(log, TRUE);
}

/* ---- whole machines ---- */

typedef struct machine_run {
    char *report;  /* the JSON report without the host's wall time */
    char *console; /* what the program printed on the debug console */
    char *error;   /* nm_snapshot_setup's message, or NULL */
} machine_run;

static char *program(const char *name)
{
    const char *dir = g_getenv("NICEMU_BAREMETAL_DIR");
    return g_strdup_printf("%s/%s.elf", dir ? dir : NICEMU_BAREMETAL_DIR, name);
}

/* Runs snapshot.elf (or `elf`) with the given extra [machine] keys. */
static machine_run run_machine(const char *elf, const char *const *keys)
{
    machine_run out = {0};
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    g_autofree char *path = program(elf ? elf : "snapshot");
    g_assert_true(nm_config_set(cfg, "test", "elf", path, &err));
    g_assert_true(nm_config_set(cfg, "test", "serial", "none", &err));
    /* A Pentium: the program reads the TSC. */
    g_assert_true(nm_config_set(cfg, "test", "cpu", "pentium-100", &err));
    for (const char *const *k = keys; k && *k; k += 2)
        g_assert_true(nm_config_set(cfg, "test", k[0], k[1], &err));
    g_assert_no_error(err);
    g_assert_true(nm_snapshot_check_config(cfg, &err));
    nm_machine *m = nm_pc_new(cfg, NULL, &err);
    g_assert_no_error(err);
    if (!nm_snapshot_setup(m, &err)) {
        out.error = g_strdup(err->message);
        g_error_free(err);
    } else {
        nm_run_result r = nm_machine_run(m);
        g_assert_true(nm_snapshot_finish(m, &err));
        g_assert_cmpint(r.reason, ==, NM_STOP_HALT);
        nm_report *rep = nm_report_new();
        nm_run_report(m, &r, rep);
        nm_machine_report(m, rep);
        char *json = nm_report_json(rep);
        nm_report_free(rep);
        GString *kept = g_string_new(NULL);
        g_auto(GStrv) lines = g_strsplit(json, "\n", -1);
        for (char **l = lines; *l; l++)
            if (!strstr(*l, "wall_seconds")) g_string_append_printf(kept, "%s\n", *l);
        g_free(json);
        out.report = g_string_free(kept, FALSE);
        for (guint i = 0; i < m->devices->len; i++) {
            nm_device_instance *inst = m->devices->pdata[i];
            if (inst->cls == &nm_debugcon_class)
                out.console = g_strdup(nm_debugcon_text(inst->state));
        }
        g_assert_nonnull(out.console);
    }
    nm_machine_free(m);
    nm_config_free(cfg);
    return out;
}

static void machine_run_clear(machine_run *r)
{
    g_free(r->report);
    g_free(r->console);
    g_free(r->error);
}

static char *temp_path(const char *name)
{
    return g_build_filename(g_get_tmp_dir(), name, NULL);
}

static void test_machine_round_trip(void)
{
    g_autofree char *file = temp_path("nicemu-test-snapshot.state");
    g_autofree char *path = program("snapshot");
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("snapshot.elf not built");
        return;
    }
    machine_run plain = run_machine(NULL, NULL);
    const char *save[] = {"save-state", file, NULL};
    machine_run saved = run_machine(NULL, save);
    const char *restore[] = {"restore", file, NULL};
    machine_run restored = run_machine(NULL, restore);
    g_assert_null(saved.error);
    g_assert_null(restored.error);
    g_assert_nonnull(strstr(plain.report, "\"snapshot_points\": 1"));
    /* Saving changes nothing, restoring continues exactly. */
    g_assert_cmpstr(saved.report, ==, plain.report);
    g_assert_cmpstr(restored.report, ==, plain.report);
    g_assert_nonnull(strstr(plain.console, "PASS snapshot_workload"));
    g_assert_cmpstr(saved.console, ==, plain.console);
    g_assert_cmpstr(restored.console, ==, plain.console);

    /* Another max-virtual-time: the restored run arms its own. */
    const char *restore_later[] = {"restore", file, "max-virtual-time", "100s", NULL};
    machine_run later = run_machine(NULL, restore_later);
    g_assert_null(later.error);
    g_assert_cmpstr(later.report, ==, plain.report);
    g_assert_cmpstr(later.console, ==, plain.console);
    machine_run_clear(&later);

    machine_run_clear(&plain);
    machine_run_clear(&saved);
    machine_run_clear(&restored);
    g_unlink(file);
}

/* Writes `data` of `len` to `path`. */
static void put_file(const char *path, const void *data, size_t len)
{
    GError *err = NULL;
    g_assert_true(g_file_set_contents(path, data, (gssize)len, &err));
    g_assert_no_error(err);
}

static void expect_refused(const char *const *keys, const char *needle)
{
    machine_run r = run_machine(NULL, keys);
    if (!r.error || !strstr(r.error, needle))
        g_error("expected a restore error with '%s', got '%s'", needle,
                r.error ? r.error : "(none)");
    g_assert_null(r.report);
    machine_run_clear(&r);
}

static void test_machine_refusals(void)
{
    g_autofree char *path = program("snapshot");
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("snapshot.elf not built");
        return;
    }
    g_autofree char *good = temp_path("nicemu-test-snapshot-good.state");
    g_autofree char *bad = temp_path("nicemu-test-snapshot-bad.state");
    const char *save[] = {"save-state", good, NULL};
    machine_run saved = run_machine(NULL, save);
    g_assert_null(saved.error);
    machine_run_clear(&saved);
    gchar *data;
    gsize len;
    g_assert_true(g_file_get_contents(good, &data, &len, NULL));
    const char *restore_bad[] = {"restore", bad, NULL};

    /* One byte changed in the state, then in the header. */
    data[len - 100] ^= 0x40;
    put_file(bad, data, len);
    expect_refused(restore_bad, "the file is damaged (checksum)");
    data[len - 100] ^= 0x40;
    data[30] ^= 1;
    put_file(bad, data, len);
    expect_refused(restore_bad, "the file is damaged (header checksum)");
    data[30] ^= 1;
    /* Cut short, and cut to less than a header. */
    put_file(bad, data, len - 1);
    expect_refused(restore_bad, "the file is truncated");
    put_file(bad, data, 20);
    expect_refused(restore_bad, "the file is truncated");
    /* Another format version. */
    data[16] = 99;
    put_file(bad, data, len);
    expect_refused(restore_bad, "snapshot format version 99, this nicemu reads version 1");
    /* Not a snapshot at all. */
    put_file(bad, "hello, world\n", 13);
    expect_refused(restore_bad, "not a nicemu snapshot");
    g_free(data);

    /* Made from other inputs: the machine keys, the program. */
    const char *other_epoch[] = {"restore", good, "rtc-epoch", "1000", NULL};
    expect_refused(other_epoch, "it was made with rtc-epoch='1672531200', this run has '1000'");
    const char *other_cpu[] = {"restore", good, "cpu", "pentium-60", NULL};
    expect_refused(other_cpu, "it was made with cpu='pentium-100', this run has 'pentium-60'");
    const char *other_ram[] = {"restore", good, "ram", "16M", NULL};
    expect_refused(other_ram, "it was made with ram=");
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    g_autofree char *pmode = program("pmode");
    g_assert_true(nm_config_set(cfg, "test", "elf", pmode, &err));
    g_assert_true(nm_config_set(cfg, "test", "cpu", "pentium-100", &err));
    g_assert_true(nm_config_set(cfg, "test", "restore", good, &err));
    nm_machine *m = nm_pc_new(cfg, NULL, &err);
    g_assert_no_error(err);
    g_assert_false(nm_snapshot_setup(m, &err));
    g_assert_nonnull(strstr(err->message, "it was made with another elf (sha256:"));
    g_clear_error(&err);
    nm_machine_free(m);
    nm_config_free(cfg);
    g_unlink(good);
    g_unlink(bad);
}

/* A save that cannot be made is refused before the run. */
static void test_machine_unsaveable(void)
{
    g_autofree char *path = program("snapshot");
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("snapshot.elf not built");
        return;
    }
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    g_assert_true(nm_config_set(cfg, "test", "cost-from", "boot", &err));
    g_assert_true(nm_config_set(cfg, "test", "save-state", "/tmp/x.state", &err));
    g_assert_false(nm_snapshot_check_config(cfg, &err));
    g_assert_nonnull(strstr(err->message, "save-state: not with cost-from=boot"));
    g_clear_error(&err);
    nm_config_free(cfg);

    cfg = nm_config_new();
    g_assert_true(nm_config_set(cfg, "test", "elf", path, &err));
    g_assert_true(nm_config_set(cfg, "test", "save-state", "/tmp/x.state", &err));
    g_assert_true(nm_config_add_device_spec(cfg, "--nic", "ne2000,net=slirp", &err));
    nm_machine *m = nm_pc_new(cfg, NULL, &err);
    g_assert_no_error(err);
    g_assert_false(nm_snapshot_setup(m, &err));
    g_assert_nonnull(strstr(err->message, "net=slirp cannot be saved"));
    g_clear_error(&err);
    nm_machine_free(m);
    nm_config_free(cfg);
}

/* The CPU's section, version 2 (the x87): its FPU state goes through a
 * save and a load whole, and a version-1 section (from before the x87) is
 * refused with one message. */
static nm_machine *cpu_machine(nm_config **cfg_out)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    nm_machine *m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    if (!m->cpu) m->cpu = nm_cpu_new(m);
    *cfg_out = cfg;
    return m;
}

static void test_cpu_fpu_state(void)
{
    nm_config *cfg_a, *cfg_b;
    nm_machine *a = cpu_machine(&cfg_a), *b = cpu_machine(&cfg_b);
    nm_fpu *f = &a->cpu->fpu;
    for (int k = 0; k < 8; k++) {
        f->r[k] = (nm_f80){0x8000000000000000ull | (uint64_t)k << 40, (uint16_t)(0x3fff + k)};
        f->tag[k] = (uint8_t)(k & 3);
    }
    f->cw = 0x0b72;
    f->sw = 0xb8a1;
    f->fip = 0x12345678;
    f->fdp = 0x9abcdef0;
    f->fcs = 0x08;
    f->fds = 0x10;
    f->fop = 0x5d9;
    f->ferr = true;
    nm_snap *w = nm_snap_writer_new(NULL);
    nm_cpu_snapshot(a->cpu, w);
    GByteArray *body = nm_snap_writer_finish(w);
    g_assert_null(nm_snap_error(w));
    nm_snap_free(w);
    GError *err = NULL;
    nm_snap *r = nm_snap_reader_new(body->data, body->len, &b->clock, &err);
    g_assert_no_error(err);
    nm_snap_reader_clear_queue(r);
    nm_cpu_snapshot(b->cpu, r);
    g_assert_true(nm_snap_reader_finish(r));
    nm_snap_free(r);
    g_byte_array_unref(body);
    const nm_fpu *g = &b->cpu->fpu;
    for (int k = 0; k < 8; k++) {
        g_assert_cmphex(g->r[k].m, ==, f->r[k].m);
        g_assert_cmphex(g->r[k].se, ==, f->r[k].se);
        g_assert_cmpuint(g->tag[k], ==, f->tag[k]);
    }
    g_assert_cmphex(g->cw, ==, f->cw);
    g_assert_cmphex(g->sw, ==, f->sw);
    g_assert_cmphex(g->fip, ==, f->fip);
    g_assert_cmphex(g->fdp, ==, f->fdp);
    g_assert_cmphex(g->fcs, ==, f->fcs);
    g_assert_cmphex(g->fds, ==, f->fds);
    g_assert_cmphex(g->fop, ==, f->fop);
    g_assert_true(g->ferr);
    g_assert_true(b->ferr); /* the machine's view of FERR# with it */
    nm_machine_free(a);
    nm_machine_free(b);
    nm_config_free(cfg_a);
    nm_config_free(cfg_b);
}

static void test_cpu_v1_refused(void)
{
    nm_config *cfg;
    nm_machine *m = cpu_machine(&cfg);
    nm_snap *w = nm_snap_writer_new(NULL);
    g_assert_true(nm_snap_begin(w, "cpu", 1));
    nm_snap_same_string(w, "model", m->model->name);
    nm_snap_end(w);
    GByteArray *body = nm_snap_writer_finish(w);
    nm_snap_free(w);
    GError *err = NULL;
    nm_snap *r = nm_snap_reader_new(body->data, body->len, &m->clock, &err);
    g_assert_no_error(err);
    nm_snap_reader_clear_queue(r);
    nm_cpu_snapshot(m->cpu, r);
    g_assert_false(nm_snap_reader_finish(r));
    const char *msg = nm_snap_error(r);
    g_assert_nonnull(msg);
    g_assert_nonnull(strstr(msg, "cpu: section version 1 is from before the x87"));
    g_assert_null(strchr(msg, '\n'));
    nm_snap_free(r);
    g_byte_array_unref(body);
    nm_machine_free(m);
    nm_config_free(cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/snapshot/round-trip", test_round_trip);
    g_test_add_func("/snapshot/old-file-loads", test_old_file_loads);
    g_test_add_func("/snapshot/newer-file-refused", test_newer_file_refused);
    g_test_add_func("/snapshot/mismatches-refused", test_mismatches_refused);
    g_test_add_func("/snapshot/damage-refused", test_damage_refused);
    g_test_add_func("/snapshot/check", test_check);
    g_test_add_func("/snapshot/timers", test_timers);
    g_test_add_func("/snapshot/machine/round-trip", test_machine_round_trip);
    g_test_add_func("/snapshot/cpu/fpu-state", test_cpu_fpu_state);
    g_test_add_func("/snapshot/cpu/v1-refused", test_cpu_v1_refused);
    g_test_add_func("/snapshot/machine/refusals", test_machine_refusals);
    g_test_add_func("/snapshot/machine/unsaveable", test_machine_unsaveable);
    return g_test_run();
}
