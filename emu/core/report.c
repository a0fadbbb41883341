#include "emu/core/report.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

typedef enum { VALUE_U64, VALUE_STR, VALUE_DOUBLE } value_kind;

typedef struct {
    char *section;
    char *key;
    value_kind kind;
    uint64_t u;
    double d;
    char *s;
} report_value;

struct nm_report {
    GPtrArray *values; /* report_value*, in insertion order */
    char *section;
};

static void value_free(gpointer p)
{
    report_value *v = p;
    g_free(v->section);
    g_free(v->key);
    g_free(v->s);
    g_free(v);
}

nm_report *nm_report_new(void)
{
    nm_report *r = g_new0(nm_report, 1);
    r->values = g_ptr_array_new_with_free_func(value_free);
    r->section = g_strdup("run");
    return r;
}

void nm_report_free(nm_report *r)
{
    if (!r) return;
    g_ptr_array_free(r->values, TRUE);
    g_free(r->section);
    g_free(r);
}

void nm_report_section(nm_report *r, const char *name)
{
    g_free(r->section);
    r->section = g_strdup(name);
}

static report_value *add(nm_report *r, const char *key, value_kind kind)
{
    report_value *v = g_new0(report_value, 1);
    v->section = g_strdup(r->section);
    v->key = g_strdup(key);
    v->kind = kind;
    g_ptr_array_add(r->values, v);
    return v;
}

void nm_report_u64(nm_report *r, const char *key, uint64_t value)
{
    add(r, key, VALUE_U64)->u = value;
}
void nm_report_str(nm_report *r, const char *key, const char *value)
{
    add(r, key, VALUE_STR)->s = g_strdup(value ? value : "");
}
void nm_report_double(nm_report *r, const char *key, double value)
{
    add(r, key, VALUE_DOUBLE)->d = value;
}

static bool section_matches(const char *section, const char *name)
{
    if (!name) return true;
    size_t n = strlen(name);
    return !strncmp(section, name, n) && (section[n] == '\0' || section[n] == '.');
}

void nm_report_print(const nm_report *r, FILE *out)
{
    nm_report_print_sections(r, NULL, out);
}

void nm_report_print_sections(const nm_report *r, const char *name, FILE *out)
{
    const char *section = NULL;
    for (guint i = 0; i < r->values->len; i++) {
        const report_value *v = r->values->pdata[i];
        if (!section_matches(v->section, name)) continue;
        if (!section || g_strcmp0(section, v->section)) {
            section = v->section;
            fprintf(out, "%s:\n", section);
        }
        switch (v->kind) {
        case VALUE_U64: fprintf(out, "  %-28s %" PRIu64 "\n", v->key, v->u); break;
        case VALUE_STR: fprintf(out, "  %-28s %s\n", v->key, v->s); break;
        case VALUE_DOUBLE: fprintf(out, "  %-28s %.6g\n", v->key, v->d); break;
        }
    }
}

static void json_string(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_printf(out, "\\%c", *p);
        else if (*p < 0x20)
            g_string_append_printf(out, "\\u%04x", *p);
        else
            g_string_append_c(out, (char)*p);
    }
    g_string_append_c(out, '"');
}

char *nm_report_json(const nm_report *r)
{
    GString *out = g_string_new("{");
    const char *section = NULL;
    for (guint i = 0; i < r->values->len; i++) {
        const report_value *v = r->values->pdata[i];
        if (!section || g_strcmp0(section, v->section)) {
            if (section) g_string_append(out, "},");
            section = v->section;
            g_string_append(out, "\n  ");
            json_string(out, section);
            g_string_append(out, ": {");
        } else {
            g_string_append_c(out, ',');
        }
        g_string_append(out, "\n    ");
        json_string(out, v->key);
        g_string_append(out, ": ");
        switch (v->kind) {
        case VALUE_U64: g_string_append_printf(out, "%" PRIu64, v->u); break;
        case VALUE_STR: json_string(out, v->s); break;
        case VALUE_DOUBLE: {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            g_string_append(out, g_ascii_dtostr(buf, sizeof buf, v->d));
            break;
        }
        }
    }
    if (section) g_string_append(out, "}");
    g_string_append(out, "\n}\n");
    return g_string_free(out, FALSE);
}
