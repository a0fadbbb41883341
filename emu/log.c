#include "emu/log.h"

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

void nm_log_emit(nm_log_subsystem sub, nm_log_level lvl, const char *fmt, ...)
{
    FILE *out = log_file ? log_file : stderr;
    va_list ap;
    va_start(ap, fmt);
    fprintf(out, "[%s] %s%s", nm_log_subsystem_name(sub),
            lvl <= NM_LOG_WARN ? level_names[lvl] : "", lvl <= NM_LOG_WARN ? ": " : "");
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
}

__attribute__((constructor)) static void log_defaults(void)
{
    nm_log_reset();
}
