#include "emu/core/log.h"

#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

uint8_t nm_log_levels[NM_SUB_COUNT];
static FILE *log_file;

static const char *const subsystem_names[NM_SUB_COUNT] = {
#define NM_LOG_NAME(id, name) [NM_SUB_##id] = name,
    NM_LOG_SUBSYSTEMS(NM_LOG_NAME)
#undef NM_LOG_NAME
};

static const char *const level_names[] = {"off", "error", "warn", "info", "debug", "trace"};

const char *nm_log_subsystem_name(nm_log_subsystem sub)
{
    return sub < NM_SUB_COUNT ? subsystem_names[sub] : "?";
}

const char *nm_log_subsystem_list(void)
{
    static char list[512];
    if (!list[0]) {
        for (int i = 0; i < NM_SUB_COUNT; i++) {
            if (i) g_strlcat(list, ",", sizeof list);
            g_strlcat(list, subsystem_names[i], sizeof list);
        }
    }
    return list;
}

void nm_log_reset(void)
{
    for (int i = 0; i < NM_SUB_COUNT; i++)
        nm_log_levels[i] = NM_LOG_WARN;
    /* The instruction trace is opt-in only: it is not a "warning" channel. */
    nm_log_levels[NM_SUB_EXEC] = NM_LOG_OFF;
}

void nm_log_set_file(void *file)
{
    log_file = file;
}

static int find_level(const char *word)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(level_names); i++)
        if (!strcmp(word, level_names[i])) return (int)i;
    return -1;
}

bool nm_log_parse(const char *spec, char **bad)
{
    gchar **words = g_strsplit(spec, ",", -1);
    bool ok = true;
    for (gchar **w = words; *w && ok; w++) {
        if (!**w) continue;
        int level = NM_LOG_DEBUG;
        char *eq = strchr(*w, '=');
        if (eq) {
            *eq = '\0';
            level = find_level(eq + 1);
            if (level < 0) {
                *bad = g_strdup(eq + 1);
                ok = false;
                break;
            }
        }
        if (!strcmp(*w, "all")) {
            for (int i = 0; i < NM_SUB_COUNT; i++)
                if (i != NM_SUB_EXEC) nm_log_levels[i] = (uint8_t)level;
            continue;
        }
        int found = -1;
        for (int i = 0; i < NM_SUB_COUNT; i++)
            if (!strcmp(*w, subsystem_names[i])) found = i;
        if (found < 0) {
            *bad = g_strdup(*w);
            ok = false;
        } else {
            nm_log_levels[found] = (uint8_t)level;
        }
    }
    g_strfreev(words);
    return ok;
}

/* ---- rate limiting ------------------------------------------------------ */

typedef struct limit_cause {
    nm_log_subsystem sub;
    nm_log_level lvl;
    const char *fmt; /* the call site's format string */
    const void *dev; /* compared, never printed: order is first appearance */
    uint64_t count;
    char *first; /* the first line, for the closing count */
} limit_cause;

static GHashTable *limit_index; /* limit_cause* -> itself */
static GPtrArray *limit_order;  /* limit_cause*, in order of appearance */
static uint64_t limit_suppressed;

static guint cause_hash(gconstpointer p)
{
    const limit_cause *c = p;
    return g_direct_hash(c->fmt) ^ g_direct_hash(c->dev) ^ (guint)c->sub * 31u;
}

static gboolean cause_equal(gconstpointer a, gconstpointer b)
{
    const limit_cause *x = a, *y = b;
    return x->sub == y->sub && x->lvl == y->lvl && x->fmt == y->fmt && x->dev == y->dev;
}

static void cause_free(gpointer p)
{
    limit_cause *c = p;
    g_free(c->first);
    g_free(c);
}

static void emit_line(nm_log_subsystem sub, nm_log_level lvl, const char *text, const char *tail)
{
    FILE *out = log_file ? log_file : stderr;
    fprintf(out, "[%s] %s%s%s%s\n", nm_log_subsystem_name(sub),
            lvl <= NM_LOG_WARN ? level_names[lvl] : "", lvl <= NM_LOG_WARN ? ": " : "", text, tail);
}

static void emit_v(nm_log_subsystem sub, nm_log_level lvl, const void *dev, const char *fmt,
                   va_list ap)
{
    if (lvl > NM_LOG_WARN) {
        g_autofree char *text = g_strdup_vprintf(fmt, ap);
        emit_line(sub, lvl, text, "");
        return;
    }
    if (!limit_index) {
        limit_index = g_hash_table_new(cause_hash, cause_equal);
        limit_order = g_ptr_array_new_with_free_func(cause_free);
    }
    limit_cause key = {.sub = sub, .lvl = lvl, .fmt = fmt, .dev = dev};
    limit_cause *c = g_hash_table_lookup(limit_index, &key);
    if (!c) {
        c = g_memdup2(&key, sizeof key);
        g_hash_table_add(limit_index, c);
        g_ptr_array_add(limit_order, c);
    }
    if (++c->count > NM_LOG_LIMIT_FIRST) {
        limit_suppressed++;
        return;
    }
    g_autofree char *text = g_strdup_vprintf(fmt, ap);
    if (c->count == 1) c->first = g_strdup(text);
    emit_line(sub, lvl, text,
              c->count == NM_LOG_LIMIT_FIRST ? " [more like this are counted, not shown]" : "");
}

void nm_log_emit(nm_log_subsystem sub, nm_log_level lvl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit_v(sub, lvl, NULL, fmt, ap);
    va_end(ap);
}

void nm_log_emit_dev(nm_log_subsystem sub, nm_log_level lvl, const void *dev, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit_v(sub, lvl, dev, fmt, ap);
    va_end(ap);
}

void nm_log_limit_flush(void)
{
    if (!limit_order) return;
    for (guint i = 0; i < limit_order->len; i++) {
        const limit_cause *c = limit_order->pdata[i];
        if (c->count <= NM_LOG_LIMIT_FIRST) continue;
        g_autofree char *text =
            g_strdup_printf("%" G_GUINT64_FORMAT " more like \"%s\" not shown",
                            c->count - NM_LOG_LIMIT_FIRST, c->first ? c->first : c->fmt);
        emit_line(c->sub, c->lvl, text, "");
    }
    g_hash_table_remove_all(limit_index);
    g_ptr_array_set_size(limit_order, 0);
}

uint64_t nm_log_limit_suppressed(void)
{
    return limit_suppressed;
}

__attribute__((constructor)) static void log_defaults(void)
{
    nm_log_reset();
}

char *nm_escape_for_message(const char *text)
{
    GString *o = g_string_new(NULL);
    const char *p = text;
    while (*p) {
        gunichar c = g_utf8_get_char_validated(p, -1);
        if (c == (gunichar)-1 || c == (gunichar)-2 || c < 0x20 || (c >= 0x7f && c < 0xa0)) {
            g_string_append_printf(o, "\\x%02x", (unsigned char)*p);
            p++;
            continue;
        }
        const char *next = g_utf8_next_char(p);
        g_string_append_len(o, p, next - p);
        p = next;
    }
    return g_string_free(o, FALSE);
}
