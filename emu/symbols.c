/* Symbol tables (symbols.h). */
#include "emu/symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "emu/config.h"
#include "emu/outfile.h"

typedef struct raw_symbol {
    uint32_t start, size;
    const char *name;
    bool global;
} raw_symbol;

struct nm_symtab {
    char *label;
    GStringChunk *names;
    GArray *raw;  /* raw_symbol, while building */
    GArray *syms; /* nm_symbol, sorted, after finish */
    uint32_t entry;
};

nm_symtab *nm_symtab_new(const char *label)
{
    nm_symtab *t = g_new0(nm_symtab, 1);
    t->label = g_strdup(label ? label : "");
    t->names = g_string_chunk_new(4096);
    t->raw = g_array_new(FALSE, FALSE, sizeof(raw_symbol));
    t->syms = g_array_new(FALSE, FALSE, sizeof(nm_symbol));
    return t;
}

void nm_symtab_free(nm_symtab *t)
{
    if (!t) return;
    g_free(t->label);
    g_string_chunk_free(t->names);
    g_array_free(t->raw, TRUE);
    g_array_free(t->syms, TRUE);
    g_free(t);
}

const char *nm_symtab_label(const nm_symtab *t)
{
    return t->label;
}
size_t nm_symtab_count(const nm_symtab *t)
{
    return t->syms->len;
}
const nm_symbol *nm_symtab_get(const nm_symtab *t, size_t index)
{
    return index < t->syms->len ? &g_array_index(t->syms, nm_symbol, index) : NULL;
}
uint32_t nm_symtab_entry(const nm_symtab *t)
{
    return t->entry;
}

void nm_symtab_bounds(const nm_symtab *t, uint32_t *lo, uint32_t *hi)
{
    if (!t->syms->len) {
        *lo = *hi = 0;
        return;
    }
    *lo = g_array_index(t->syms, nm_symbol, 0).start;
    *hi = g_array_index(t->syms, nm_symbol, t->syms->len - 1).end;
}

void nm_symtab_add(nm_symtab *t, uint32_t start, uint32_t size, const char *name, bool global)
{
    raw_symbol r = {start, size, g_string_chunk_insert_const(t->names, name), global};
    g_array_append_val(t->raw, r);
}

static unsigned leading_underscores(const char *s)
{
    unsigned n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* Address order; at one address the preferred alias first: global, fewer
 * leading underscores, the larger size, then by name (deterministic). */
static gint raw_cmp(gconstpointer pa, gconstpointer pb)
{
    const raw_symbol *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->global != b->global) return a->global ? -1 : 1;
    unsigned ua = leading_underscores(a->name), ub = leading_underscores(b->name);
    if (ua != ub) return ua < ub ? -1 : 1;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return strcmp(a->name, b->name);
}

void nm_symtab_finish(nm_symtab *t)
{
    g_array_sort(t->raw, raw_cmp);
    g_array_set_size(t->syms, 0);
    for (guint i = 0; i < t->raw->len; i++) {
        const raw_symbol *r = &g_array_index(t->raw, raw_symbol, i);
        if (i && g_array_index(t->raw, raw_symbol, i - 1).start == r->start) continue; /* alias */
        /* The next symbol at a different address clips this one. */
        uint32_t next = 0;
        bool has_next = false;
        for (guint j = i + 1; j < t->raw->len; j++) {
            const raw_symbol *q = &g_array_index(t->raw, raw_symbol, j);
            if (q->start != r->start) {
                next = q->start;
                has_next = true;
                break;
            }
        }
        uint64_t end;
        if (r->size)
            end = (uint64_t)r->start + r->size;
        else
            end = has_next ? next : (uint64_t)r->start + 1; /* the last one: one byte */
        if (has_next && end > next) end = next;
        if (end > UINT32_MAX) end = UINT32_MAX;
        nm_symbol s = {r->start, (uint32_t)end, r->name};
        g_array_append_val(t->syms, s);
    }
    g_array_set_size(t->raw, 0);
}

const nm_symbol *nm_symtab_lookup(const nm_symtab *t, uint32_t addr, uint32_t *lo, uint32_t *hi)
{
    const nm_symbol *s = (const nm_symbol *)(const void *)t->syms->data;
    size_t n = t->syms->len;
    /* The last symbol starting at or below addr. */
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (s[mid].start <= addr)
            a = mid + 1;
        else
            b = mid;
    }
    uint32_t gap_lo = 0, gap_hi = n ? UINT32_MAX : UINT32_MAX;
    if (a > 0) {
        const nm_symbol *c = &s[a - 1];
        if (addr < c->end) {
            if (lo) *lo = c->start;
            if (hi) *hi = c->end;
            return c;
        }
        gap_lo = c->end;
    }
    if (a < n) gap_hi = s[a].start;
    if (lo) *lo = gap_lo;
    if (hi) *hi = gap_hi;
    return NULL;
}

static bool file_error(GError **err, const char *path, const char *what)
{
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: %s", path, what);
    return false;
}

bool nm_symtab_load_system_map(nm_symtab *t, const char *path, GError **err)
{
    gchar *text = NULL;
    gsize len = 0;
    GError *e = NULL;
    if (!nm_input_file_check("system-map", path, err)) return false;
    if (!g_file_get_contents(path, &text, &len, &e)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "system map: %s", e->message);
        g_error_free(e);
        return false;
    }
    unsigned line_no = 0, added = 0;
    bool ok = true;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line_no++;
        char *addr_end;
        errno = 0;
        unsigned long long addr = strtoull(line, &addr_end, 16);
        if (errno || addr_end == line || addr > UINT32_MAX || *addr_end != ' ' || !addr_end[1] ||
            addr_end[2] != ' ' || !addr_end[3]) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE,
                        "%s:%u: not a System.map line (want 'ADDRESS TYPE NAME')", path, line_no);
            ok = false;
            break;
        }
        char type = addr_end[1];
        const char *name = addr_end + 3;
        if (type != 'T' && type != 't' && type != 'W' && type != 'w') continue;
        nm_symtab_add(t, (uint32_t)addr, 0, name, type == 'T' || type == 'W');
        added++;
    }
    g_free(text);
    if (ok && !added) return file_error(err, path, "no text symbols (not a System.map?)");
    if (ok) nm_symtab_finish(t);
    return ok;
}

bool nm_symtab_load_elf(nm_symtab *t, const char *path, bool has_load, uint32_t load_address,
                        GError **err)
{
    if (elf_version(EV_CURRENT) == EV_NONE) return file_error(err, path, "libelf unusable");
    if (!nm_input_file_check("symbols", path, err)) return false;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "symbols: %s: %s", path,
                    g_strerror(errno));
        return false;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    bool ok = false;
    GElf_Ehdr eh;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        file_error(err, path, "not an ELF file");
        goto out;
    }
    /* The bias: where the lowest PT_LOAD segment goes, minus its address. */
    int64_t bias = 0;
    if (has_load) {
        size_t nph = 0;
        elf_getphdrnum(elf, &nph);
        uint64_t lowest = UINT64_MAX;
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lowest)
                lowest = ph.p_vaddr;
        }
        if (lowest == UINT64_MAX) lowest = 0;
        bias = (int64_t)load_address - (int64_t)lowest;
    }
    unsigned added = 0;
    for (int pass = 0; pass < 2 && !added; pass++) {
        /* .symtab first; .dynsym if the file is stripped. */
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn))) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh)) continue;
            if (sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) || !sh.sh_entsize) continue;
            Elf_Data *data = elf_getdata(scn, NULL);
            if (!data) continue;
            size_t n = sh.sh_size / sh.sh_entsize;
            for (size_t i = 0; i < n; i++) {
                GElf_Sym sym;
                if (!gelf_getsym(data, (int)i, &sym)) continue;
                if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF) continue;
                const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
                if (!name || !*name) continue;
                int64_t a = (int64_t)sym.st_value + bias;
                if (a < 0 || a > UINT32_MAX) continue;
                uint64_t size = sym.st_size > UINT32_MAX ? UINT32_MAX : sym.st_size;
                nm_symtab_add(t, (uint32_t)a, (uint32_t)size, name,
                              GELF_ST_BIND(sym.st_info) != STB_LOCAL);
                added++;
            }
        }
    }
    if (!added) {
        file_error(err, path, "no function symbols (stripped?)");
        goto out;
    }
    int64_t entry = (int64_t)eh.e_entry + bias;
    t->entry = entry > 0 && entry <= UINT32_MAX ? (uint32_t)entry : 0;
    nm_symtab_finish(t);
    ok = true;
out:
    if (elf) elf_end(elf);
    close(fd);
    return ok;
}

bool nm_symbols_parse_spec(const char *spec, char **file, bool *has_load, uint32_t *load_address)
{
    const char *at = strrchr(spec, '@');
    *has_load = false;
    *load_address = 0;
    if (!at) {
        *file = g_strdup(spec);
        return *spec != 0;
    }
    uint64_t v;
    if (at == spec || !nm_parse_u64(at + 1, &v) || v > UINT32_MAX) return false;
    *file = g_strndup(spec, (gsize)(at - spec));
    *has_load = true;
    *load_address = (uint32_t)v;
    return true;
}
