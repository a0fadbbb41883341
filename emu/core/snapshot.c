/* Machine snapshots: the field-list body (snapshot.h).
 *
 * The body is a sequence of sections; all numbers little-endian:
 *   section: 'S', name (u16 length + bytes), version u32, field count u32,
 *            then its fields
 *   field:   name (u16 length + bytes), type u8, length u64, data
 * A reader indexes it once (section name -> fields by name), checking every
 * length against what is left, so a damaged body is refused before any
 * part reads from it. */
#include "emu/core/snapshot.h"

#include <stdio.h>
#include <string.h>

enum {
    T_U8 = 1,
    T_U16,
    T_U32,
    T_U64,
    T_I32,
    T_I64,
    T_BOOL,
    T_BYTES,
    T_U16S,
    T_U32S,
    T_U64S,
    T_VAR,
    T_STR,
    T_TIMER,
};

#define NAME_MAX_LEN 200u

typedef struct field_ref {
    uint8_t type;
    const uint8_t *data;
    uint64_t len;
    bool used;
} field_ref;

typedef struct section_ref {
    uint32_t version;
    GHashTable *fields; /* name -> field_ref* */
    bool used;
} section_ref;

typedef struct loaded_timer {
    nm_timer *t;
    uint64_t due, seq;
} loaded_timer;

struct nm_snap {
    bool saving;
    nm_clock *clock;
    char *error;
    /* the section being visited */
    char section[NAME_MAX_LEN + 1];
    uint32_t version; /* the file's, loading; the part's, saving */
    uint32_t since;   /* the next field's first version (0: always there) */
    char prefix[NAME_MAX_LEN + 1];
    size_t prefix_len;
    bool in_section;
    /* saving */
    GByteArray *out;
    size_t count_at; /* where the open section's field count is */
    uint32_t count;
    GHashTable *saved_timers; /* nm_timer* set */
    /* loading */
    GHashTable *sections; /* name -> section_ref* */
    section_ref *cur;
    GArray *timers; /* loaded_timer */
    GArray *after;  /* after_load */
};

typedef struct after_load {
    void (*fn)(void *opaque);
    void *opaque;
} after_load;

/* ---------------------------------------------------------------- errors */

void nm_snap_fail(nm_snap *s, const char *fmt, ...)
{
    if (s->error) return;
    va_list ap;
    va_start(ap, fmt);
    s->error = g_strdup_vprintf(fmt, ap);
    va_end(ap);
}

const char *nm_snap_error(const nm_snap *s)
{
    return s->error;
}

bool nm_snap_saving(const nm_snap *s)
{
    return s->saving;
}

/* "section: prefix.name" into buf. */
static const char *full_name(const nm_snap *s, const char *name, char *buf, size_t cap)
{
    g_snprintf(buf, cap, "%s%s", s->prefix, name);
    return buf;
}

bool nm_snap_check(nm_snap *s, bool ok, const char *field)
{
    if (s->saving || ok || s->error) return ok || s->saving;
    char n[2 * NAME_MAX_LEN];
    nm_snap_fail(s, "section '%s': field '%s': bad value", s->section,
                 full_name(s, field, n, sizeof n));
    return false;
}

/* ------------------------------------------------------- little-endian */

static void put_u8(GByteArray *b, uint8_t v)
{
    g_byte_array_append(b, &v, 1);
}
static void put_le(GByteArray *b, uint64_t v, unsigned n)
{
    uint8_t x[8];
    for (unsigned i = 0; i < n; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    g_byte_array_append(b, x, n);
}
static uint64_t get_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}
static void put_name(GByteArray *b, const char *name)
{
    size_t n = strlen(name);
    put_le(b, n, 2);
    g_byte_array_append(b, (const uint8_t *)name, (guint)n);
}

/* ------------------------------------------------------------ lifecycle */

nm_snap *nm_snap_writer_new(nm_clock *clock)
{
    nm_snap *s = g_new0(nm_snap, 1);
    s->saving = true;
    s->clock = clock;
    s->out = g_byte_array_new();
    s->saved_timers = g_hash_table_new(g_direct_hash, g_direct_equal);
    return s;
}

static void section_ref_free(gpointer p)
{
    section_ref *r = p;
    g_hash_table_destroy(r->fields);
    g_free(r);
}

/* Bounds-checked reading of the body. */
typedef struct cursor {
    const uint8_t *p;
    size_t left;
} cursor;

static bool take(cursor *c, size_t n, const uint8_t **out)
{
    if (c->left < n) return false;
    *out = c->p;
    c->p += n;
    c->left -= n;
    return true;
}
static bool take_le(cursor *c, unsigned n, uint64_t *v)
{
    const uint8_t *p;
    if (!take(c, n, &p)) return false;
    *v = get_le(p, n);
    return true;
}
static bool take_name(cursor *c, char **name)
{
    uint64_t n;
    const uint8_t *p;
    if (!take_le(c, 2, &n) || n == 0 || n > NAME_MAX_LEN || !take(c, (size_t)n, &p)) return false;
    if (memchr(p, 0, (size_t)n)) return false;
    *name = g_strndup((const char *)p, (gsize)n);
    return true;
}

nm_snap *nm_snap_reader_new(const uint8_t *body, size_t len, nm_clock *clock, GError **err)
{
    nm_snap *s = g_new0(nm_snap, 1);
    s->clock = clock;
    s->sections = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, section_ref_free);
    s->timers = g_array_new(FALSE, FALSE, sizeof(loaded_timer));
    s->after = g_array_new(FALSE, FALSE, sizeof(after_load));
    cursor c = {body, len};
    const char *why = NULL;
    char *bad_name = NULL;
    while (c.left && !why) {
        const uint8_t *tag;
        char *sname = NULL;
        uint64_t version, count;
        if (!take(&c, 1, &tag) || *tag != 'S' || !take_name(&c, &sname) ||
            !take_le(&c, 4, &version) || !take_le(&c, 4, &count)) {
            g_free(sname);
            why = "a section header is damaged";
            break;
        }
        if (g_hash_table_contains(s->sections, sname)) {
            bad_name = sname;
            why = "a section appears twice";
            break;
        }
        section_ref *sec = g_new0(section_ref, 1);
        sec->version = (uint32_t)version;
        sec->fields = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        g_hash_table_insert(s->sections, sname, sec);
        for (uint64_t i = 0; i < count && !why; i++) {
            char *fname = NULL;
            const uint8_t *type, *data;
            uint64_t flen;
            if (!take_name(&c, &fname) || !take(&c, 1, &type) || !take_le(&c, 8, &flen) ||
                flen > c.left || !take(&c, (size_t)flen, &data)) {
                g_free(fname);
                bad_name = g_strdup(sname);
                why = "a field is damaged or cut short";
                break;
            }
            if (g_hash_table_contains(sec->fields, fname)) {
                bad_name = g_strdup_printf("%s: %s", sname, fname);
                g_free(fname);
                why = "a field appears twice";
                break;
            }
            field_ref *f = g_new0(field_ref, 1);
            f->type = *type;
            f->data = data;
            f->len = flen;
            g_hash_table_insert(sec->fields, fname, f);
        }
    }
    if (why) {
        g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "the state is damaged: %s%s%s%s", why,
                    bad_name ? " (" : "", bad_name ? bad_name : "", bad_name ? ")" : "");
        g_free(bad_name);
        nm_snap_free(s);
        return NULL;
    }
    return s;
}

void nm_snap_free(nm_snap *s)
{
    if (!s) return;
    if (s->out) g_byte_array_free(s->out, TRUE);
    if (s->saved_timers) g_hash_table_destroy(s->saved_timers);
    if (s->sections) g_hash_table_destroy(s->sections);
    if (s->timers) g_array_free(s->timers, TRUE);
    if (s->after) g_array_free(s->after, TRUE);
    g_free(s->error);
    g_free(s);
}

/* ------------------------------------------------------------- sections */

bool nm_snap_begin(nm_snap *s, const char *section, uint32_t version)
{
    if (s->error) return false;
    if (s->in_section) {
        nm_snap_fail(s, "section '%s' opened inside section '%s' (an emulator bug)", section,
                     s->section);
        return false;
    }
    if (strlen(section) == 0 || strlen(section) > NAME_MAX_LEN) {
        nm_snap_fail(s, "bad section name '%s' (an emulator bug)", section);
        return false;
    }
    g_strlcpy(s->section, section, sizeof s->section);
    s->prefix[0] = 0;
    s->prefix_len = 0;
    s->since = 0;
    if (s->saving) {
        s->version = version;
        put_u8(s->out, 'S');
        put_name(s->out, section);
        put_le(s->out, version, 4);
        s->count_at = s->out->len;
        put_le(s->out, 0, 4);
        s->count = 0;
        s->in_section = true;
        return true;
    }
    section_ref *sec = g_hash_table_lookup(s->sections, section);
    if (!sec) {
        nm_snap_fail(s,
                     "it has no section '%s' (a part this machine has and the saved one had "
                     "not)",
                     section);
        return false;
    }
    if (sec->used) {
        nm_snap_fail(s, "section '%s' read twice (an emulator bug)", section);
        return false;
    }
    if (sec->version > version) {
        nm_snap_fail(s,
                     "section '%s' is version %u, this nicemu reads up to version %u (a newer "
                     "nicemu made it)",
                     section, sec->version, version);
        return false;
    }
    sec->used = true;
    s->cur = sec;
    s->version = sec->version;
    s->in_section = true;
    return true;
}

bool nm_snap_has_section(const nm_snap *s, const char *section)
{
    return !s->saving && s->sections && g_hash_table_contains(s->sections, section);
}

uint32_t nm_snap_version(const nm_snap *s)
{
    return s->version;
}

void nm_snap_since(nm_snap *s, uint32_t version)
{
    s->since = version;
}

void nm_snap_end(nm_snap *s)
{
    if (!s->in_section) return;
    s->in_section = false;
    if (s->error) return;
    if (s->saving) {
        for (unsigned i = 0; i < 4; i++)
            s->out->data[s->count_at + i] = (uint8_t)(s->count >> (8 * i));
        return;
    }
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, s->cur->fields);
    while (g_hash_table_iter_next(&it, &key, &val)) {
        if (((field_ref *)val)->used) continue;
        nm_snap_fail(s,
                     "section '%s' has a field '%s' this nicemu does not know (a newer or "
                     "another nicemu made it)",
                     s->section, (const char *)key);
        return;
    }
}

void nm_snap_push(nm_snap *s, const char *fmt, ...)
{
    char part[NAME_MAX_LEN];
    va_list ap;
    va_start(ap, fmt);
    g_vsnprintf(part, sizeof part, fmt, ap);
    va_end(ap);
    size_t n = strlen(part);
    if (s->prefix_len + n + 1 > NAME_MAX_LEN) {
        nm_snap_fail(s, "field prefix too long in section '%s' (an emulator bug)", s->section);
        return;
    }
    memcpy(s->prefix + s->prefix_len, part, n);
    s->prefix_len += n;
    s->prefix[s->prefix_len++] = '.';
    s->prefix[s->prefix_len] = 0;
}

void nm_snap_pop(nm_snap *s)
{
    if (!s->prefix_len) return;
    size_t i = s->prefix_len - 1; /* the trailing '.' */
    while (i > 0 && s->prefix[i - 1] != '.')
        i--;
    s->prefix_len = i;
    s->prefix[i] = 0;
}

/* --------------------------------------------------------------- fields */

static const char *type_name(uint8_t t)
{
    static const char *const names[] = {"?",     "u8",    "u16",  "u32",    "u64",
                                        "i32",   "i64",   "bool", "bytes",  "u16[]",
                                        "u32[]", "u64[]", "var",  "string", "timer"};
    return t < G_N_ELEMENTS(names) ? names[t] : "?";
}

/* Saving: appends the field's header (the data follows). */
static bool put_field(nm_snap *s, const char *name, uint8_t type, uint64_t len)
{
    if (s->error) return false;
    if (!s->in_section) {
        nm_snap_fail(s, "field '%s' outside a section (an emulator bug)", name);
        return false;
    }
    char n[2 * NAME_MAX_LEN];
    full_name(s, name, n, sizeof n);
    if (strlen(n) > NAME_MAX_LEN) {
        nm_snap_fail(s, "field name '%s' too long (an emulator bug)", n);
        return false;
    }
    put_name(s->out, n);
    put_u8(s->out, type);
    put_le(s->out, len, 8);
    s->count++;
    s->since = 0;
    return true;
}

/* Loading: the field, checked for type and (when `len` is not 0) length;
 * NULL when absent in a file older than the field (value kept) or on
 * failure. */
static field_ref *get_field(nm_snap *s, const char *name, uint8_t type, uint64_t len)
{
    uint32_t since = s->since;
    s->since = 0;
    if (s->error) return NULL;
    if (!s->in_section) {
        nm_snap_fail(s, "field '%s' outside a section (an emulator bug)", name);
        return NULL;
    }
    char n[2 * NAME_MAX_LEN];
    full_name(s, name, n, sizeof n);
    field_ref *f = g_hash_table_lookup(s->cur->fields, n);
    if (!f) {
        if (since && s->version < since) return NULL; /* older file: the default stays */
        nm_snap_fail(s, "section '%s' (version %u) lacks field '%s'", s->section, s->version, n);
        return NULL;
    }
    if (f->used) {
        nm_snap_fail(s, "section '%s': field '%s' read twice (an emulator bug)", s->section, n);
        return NULL;
    }
    f->used = true;
    if (f->type != type) {
        nm_snap_fail(s, "section '%s': field '%s' is a %s, this nicemu expects a %s", s->section, n,
                     type_name(f->type), type_name(type));
        return NULL;
    }
    if (len && f->len != len) {
        nm_snap_fail(s,
                     "section '%s': field '%s' has %" G_GUINT64_FORMAT
                     " bytes, this nicemu expects %" G_GUINT64_FORMAT,
                     s->section, n, f->len, len);
        return NULL;
    }
    return f;
}

static void scalar(nm_snap *s, const char *name, uint8_t type, unsigned bytes, uint64_t *v)
{
    if (s->saving) {
        if (put_field(s, name, type, bytes)) put_le(s->out, *v, bytes);
        return;
    }
    field_ref *f = get_field(s, name, type, bytes);
    if (f) *v = get_le(f->data, bytes);
}

void nm_snap_u8(nm_snap *s, const char *name, uint8_t *v)
{
    uint64_t x = *v;
    scalar(s, name, T_U8, 1, &x);
    *v = (uint8_t)x;
}
void nm_snap_u16(nm_snap *s, const char *name, uint16_t *v)
{
    uint64_t x = *v;
    scalar(s, name, T_U16, 2, &x);
    *v = (uint16_t)x;
}
void nm_snap_u32(nm_snap *s, const char *name, uint32_t *v)
{
    uint64_t x = *v;
    scalar(s, name, T_U32, 4, &x);
    *v = (uint32_t)x;
}
void nm_snap_u64(nm_snap *s, const char *name, uint64_t *v)
{
    scalar(s, name, T_U64, 8, v);
}
void nm_snap_i32(nm_snap *s, const char *name, int32_t *v)
{
    uint64_t x = (uint32_t)*v;
    scalar(s, name, T_I32, 4, &x);
    *v = (int32_t)(uint32_t)x;
}
void nm_snap_i64(nm_snap *s, const char *name, int64_t *v)
{
    uint64_t x = (uint64_t)*v;
    scalar(s, name, T_I64, 8, &x);
    *v = (int64_t)x;
}
void nm_snap_bool(nm_snap *s, const char *name, bool *v)
{
    uint64_t x = *v;
    scalar(s, name, T_BOOL, 1, &x);
    if (!s->saving && !s->error) nm_snap_check(s, x <= 1, name);
    *v = x != 0;
}
void nm_snap_uint(nm_snap *s, const char *name, unsigned *v)
{
    uint64_t x = *v;
    scalar(s, name, T_U32, 4, &x);
    *v = (unsigned)x;
}
void nm_snap_size(nm_snap *s, const char *name, size_t *v)
{
    uint64_t x = *v;
    scalar(s, name, T_U64, 8, &x);
    *v = (size_t)x;
}

void nm_snap_bytes(nm_snap *s, const char *name, void *p, size_t len)
{
    if (s->saving) {
        if (put_field(s, name, T_BYTES, len)) g_byte_array_append(s->out, p, (guint)len);
        return;
    }
    field_ref *f = get_field(s, name, T_BYTES, len ? len : 0);
    if (f && f->len == len)
        memcpy(p, f->data, len);
    else if (f)
        nm_snap_check(s, false, name);
}

static void words(nm_snap *s, const char *name, uint8_t type, void *p, size_t count, unsigned w)
{
    if (s->saving) {
        if (!put_field(s, name, type, (uint64_t)count * w)) return;
        for (size_t i = 0; i < count; i++) {
            uint64_t v = w == 2   ? ((uint16_t *)p)[i]
                         : w == 4 ? ((uint32_t *)p)[i]
                                  : ((uint64_t *)p)[i];
            put_le(s->out, v, w);
        }
        return;
    }
    field_ref *f = get_field(s, name, type, 0);
    if (!f) return;
    if (f->len != (uint64_t)count * w) {
        nm_snap_fail(s,
                     "section '%s': field '%s%s' has %" G_GUINT64_FORMAT
                     " entries, this nicemu expects %zu",
                     s->section, s->prefix, name, f->len / w, count);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        uint64_t v = get_le(f->data + i * w, w);
        if (w == 2)
            ((uint16_t *)p)[i] = (uint16_t)v;
        else if (w == 4)
            ((uint32_t *)p)[i] = (uint32_t)v;
        else
            ((uint64_t *)p)[i] = v;
    }
}

void nm_snap_u16s(nm_snap *s, const char *name, uint16_t *p, size_t count)
{
    words(s, name, T_U16S, p, count, 2);
}
void nm_snap_u32s(nm_snap *s, const char *name, uint32_t *p, size_t count)
{
    words(s, name, T_U32S, p, count, 4);
}
void nm_snap_u64s(nm_snap *s, const char *name, uint64_t *p, size_t count)
{
    words(s, name, T_U64S, p, count, 8);
}

void nm_snap_var(nm_snap *s, const char *name, uint8_t **p, size_t *len, size_t max)
{
    if (s->saving) {
        if (put_field(s, name, T_VAR, *len) && *len) g_byte_array_append(s->out, *p, (guint)*len);
        return;
    }
    field_ref *f = get_field(s, name, T_VAR, 0);
    if (!f) return;
    if (!nm_snap_check(s, f->len <= max, name)) return;
    g_free(*p);
    *p = f->len ? g_memdup2(f->data, (gsize)f->len) : NULL;
    *len = (size_t)f->len;
}

void nm_snap_var_into(nm_snap *s, const char *name, void *buf, size_t cap, size_t *len)
{
    if (s->saving) {
        if (put_field(s, name, T_VAR, *len) && *len) g_byte_array_append(s->out, buf, (guint)*len);
        return;
    }
    field_ref *f = get_field(s, name, T_VAR, 0);
    if (!f || !nm_snap_check(s, f->len <= cap, name)) return;
    if (f->len) memcpy(buf, f->data, (size_t)f->len);
    *len = (size_t)f->len;
}

void nm_snap_string(nm_snap *s, const char *name, char **str)
{
    if (s->saving) {
        /* A leading byte tells NULL (0) from a string (1). */
        size_t n = *str ? strlen(*str) : 0;
        if (!put_field(s, name, T_STR, n + 1)) return;
        put_u8(s->out, *str ? 1 : 0);
        if (n) g_byte_array_append(s->out, (const uint8_t *)*str, (guint)n);
        return;
    }
    field_ref *f = get_field(s, name, T_STR, 0);
    if (!f || !nm_snap_check(s, f->len >= 1 && f->data[0] <= 1, name)) return;
    if (!nm_snap_check(s, !memchr(f->data + 1, 0, (size_t)f->len - 1), name)) return;
    g_free(*str);
    *str = f->data[0] ? g_strndup((const char *)f->data + 1, (gsize)f->len - 1) : NULL;
    if (!f->data[0] && f->len != 1) nm_snap_check(s, false, name);
}

void nm_snap_same_string(nm_snap *s, const char *name, const char *value)
{
    char *v = s->saving ? (char *)value : NULL;
    nm_snap_string(s, name, &v);
    if (s->saving || s->error) return;
    if (!v || strcmp(v, value)) {
        char n[2 * NAME_MAX_LEN];
        nm_snap_fail(s, "section '%s': field '%s' is '%s', this machine's is '%s'", s->section,
                     full_name(s, name, n, sizeof n), v ? v : "(none)", value);
    }
    g_free(v);
}

void nm_snap_gstring(nm_snap *s, const char *name, GString *str)
{
    if (s->saving) {
        if (put_field(s, name, T_VAR, str->len) && str->len)
            g_byte_array_append(s->out, (const uint8_t *)str->str, (guint)str->len);
        return;
    }
    field_ref *f = get_field(s, name, T_VAR, 0);
    if (!f) return;
    g_string_truncate(str, 0);
    g_string_append_len(str, (const char *)f->data, (gssize)f->len);
}

void nm_snap_timer(nm_snap *s, const char *name, nm_timer *t)
{
    if (s->saving) {
        if (!put_field(s, name, T_TIMER, 17)) return;
        put_u8(s->out, t->pending ? 1 : 0);
        put_le(s->out, t->pending ? t->due : 0, 8);
        put_le(s->out, t->pending ? t->seq : 0, 8);
        g_hash_table_add(s->saved_timers, t);
        return;
    }
    field_ref *f = get_field(s, name, T_TIMER, 17);
    if (!f || !nm_snap_check(s, f->data[0] <= 1, name)) return;
    t->pending = false;
    t->next = NULL;
    if (!f->data[0]) return;
    loaded_timer lt = {t, get_le(f->data + 1, 8), get_le(f->data + 9, 8)};
    g_array_append_val(s->timers, lt);
}

/* ------------------------------------------------------------- finishing */

void nm_snap_after_load(nm_snap *s, void (*fn)(void *opaque), void *opaque)
{
    if (s->saving || s->error) return;
    after_load a = {fn, opaque};
    g_array_append_val(s->after, a);
}

GByteArray *nm_snap_writer_finish(nm_snap *s)
{
    if (s->error) return NULL;
    for (nm_timer *t = s->clock ? s->clock->head : NULL; t; t = t->next) {
        if (g_hash_table_contains(s->saved_timers, t)) continue;
        nm_snap_fail(s, "an event of '%s' is pending and no part saves it",
                     t->name ? t->name : "(unnamed)");
        return NULL;
    }
    GByteArray *b = s->out;
    s->out = NULL;
    return b;
}

void nm_snap_reader_clear_queue(nm_snap *s)
{
    nm_clock *c = s->clock;
    while (c->head) {
        nm_timer *t = c->head;
        c->head = t->next;
        t->next = NULL;
        t->pending = false;
    }
    c->deadline = UINT64_MAX;
}

static gint timer_order(gconstpointer a, gconstpointer b)
{
    const loaded_timer *x = a, *y = b;
    if (x->due != y->due) return x->due < y->due ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return 0;
}

bool nm_snap_reader_finish(nm_snap *s)
{
    if (s->error) return false;
    GHashTableIter it;
    gpointer key, val;
    g_hash_table_iter_init(&it, s->sections);
    while (g_hash_table_iter_next(&it, &key, &val)) {
        if (((section_ref *)val)->used) continue;
        nm_snap_fail(s,
                     "it has a section '%s' no part of this machine reads (the saved machine "
                     "had a part this one lacks)",
                     (const char *)key);
        return false;
    }
    nm_clock *c = s->clock;
    g_array_sort(s->timers, timer_order);
    nm_timer **tail = &c->head;
    for (guint i = 0; i < s->timers->len; i++) {
        loaded_timer *lt = &g_array_index(s->timers, loaded_timer, i);
        if (lt->t->pending || lt->seq >= c->next_seq ||
            (i && !timer_order(lt, &g_array_index(s->timers, loaded_timer, i - 1)))) {
            nm_snap_fail(s, "the event queue is inconsistent (timer '%s')",
                         lt->t->name ? lt->t->name : "(unnamed)");
            nm_snap_reader_clear_queue(s);
            return false;
        }
        lt->t->due = lt->due;
        lt->t->seq = lt->seq;
        lt->t->pending = true;
        lt->t->next = NULL;
        *tail = lt->t;
        tail = &lt->t->next;
    }
    c->deadline = c->head ? c->head->due : UINT64_MAX;
    for (guint i = 0; i < s->after->len; i++) {
        after_load *a = &g_array_index(s->after, after_load, i);
        a->fn(a->opaque);
    }
    return true;
}
