/* Device configurations: their keys and the value parsers (devcfg.h). */
#include "emu/core/devcfg.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/core/log.h"

G_DEFINE_QUARK(nicemu - config - error - quark, nm_config_error)

void nm_devcfg_free(nm_devcfg *d)
{
    g_free(d->origin);
    g_free(d->name);
    g_free(d->model);
    g_ptr_array_free(d->keys, TRUE);
    g_ptr_array_free(d->values, TRUE);
    g_free(d);
}

bool nm_config_bad_value(GError **err, const char *origin, const char *key, const char *value,
                         const char *accepted)
{
    g_autofree char *shown = nm_escape_for_message(value);
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                "%s: %s: bad value '%s' (accepted: %s)", origin, key, shown, accepted);
    return false;
}

/* ---- value parsers ---------------------------------------------------- */

bool nm_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+') return false;
    char *end;
    errno = 0;
    guint64 v = g_ascii_strtoull(s, &end, 0);
    if (errno || *end) return false;
    *out = v;
    return true;
}

bool nm_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s || !g_ascii_isdigit(*s)) return false;
    char *end;
    errno = 0;
    guint64 v = g_ascii_strtoull(s, &end, 10);
    if (errno) return false;
    unsigned shift = 0;
    if (*end) {
        switch (g_ascii_toupper(*end)) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        default: return false;
        }
        end++;
        if (g_ascii_toupper(*end) == 'B') end++;
        if (*end) return false;
    }
    if (v > (UINT64_MAX >> shift)) return false;
    *out = v << shift;
    return true;
}

bool nm_parse_pair(const char *s, char sep, uint64_t *a, uint64_t *b)
{
    const char *mid = s ? strchr(s, sep) : NULL;
    if (!mid) return false;
    g_autofree char *first = g_strndup(s, (gsize)(mid - s));
    return nm_parse_u64(first, a) && nm_parse_u64(mid + 1, b);
}

bool nm_parse_duration_ns(const char *s, uint64_t *out)
{
    if (!s || !*s || !g_ascii_isdigit(*s)) return false;
    char *end;
    errno = 0;
    guint64 v = g_ascii_strtoull(s, &end, 10);
    if (errno) return false;
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
        if (!strcmp(end, units[i].unit)) {
            if (v > UINT64_MAX / units[i].ns) return false;
            *out = v * units[i].ns;
            return true;
        }
    }
    return false;
}

/* ---- device key helpers ------------------------------------------------ */

const char *nm_devcfg_get(const nm_devcfg *d, const char *key)
{
    for (guint i = 0; i < d->keys->len; i++)
        if (!strcmp(d->keys->pdata[i], key)) return d->values->pdata[i];
    return NULL;
}

bool nm_devcfg_u32(const nm_devcfg *d, const char *key, uint32_t def, uint32_t min, uint32_t max,
                   uint32_t *out, GError **err)
{
    const char *s = nm_devcfg_get(d, key);
    uint64_t v;
    if (!s) {
        *out = def;
        return true;
    }
    if (!nm_parse_u64(s, &v) || v < min || v > max) {
        g_autofree char *range =
            g_strdup_printf("an integer from %u (0x%x) to %u (0x%x)", min, min, max, max);
        return nm_config_bad_value(err, d->origin, key, s, range);
    }
    *out = (uint32_t)v;
    return true;
}

bool nm_devcfg_mac(const nm_devcfg *d, const char *key, const uint8_t def[6], uint8_t out[6],
                   GError **err)
{
    const char *s = nm_devcfg_get(d, key);
    if (!s) {
        memcpy(out, def, 6);
        return true;
    }
    unsigned b[6];
    char tail;
    if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) !=
            6 ||
        strlen(s) != 17 || (b[0] & 1) || !(b[0] | b[1] | b[2] | b[3] | b[4] | b[5]))
        /* Multicast (I/G bit, IEEE 802-2014 8.2) and all-zero addresses are
         * no station's: frames to them would be filtered or dropped. */
        return nm_config_bad_value(err, d->origin, key, s,
                                   "a unicast MAC address, not all zero, like 52:54:00:12:34:56");
    for (int i = 0; i < 6; i++)
        out[i] = (uint8_t)b[i];
    return true;
}
