/* The snapshot field lists (emu/core/snapshot.h): values round-trip through
 * one visitor; a field added in a later section version keeps its default
 * when an older file is loaded; a newer file, a missing, unknown or retyped
 * field, a damaged body are refused with a message naming section and
 * field; timers are saved by their owners and the queue is rebuilt in
 * (due, seq) order; a pending timer nobody saves makes the save fail. */
#include <glib.h>
#include <string.h>

#include "emu/core/snapshot.h"

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
    return g_test_run();
}
