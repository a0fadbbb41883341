/* The x87 differential test, emulator side: replays the records x87gen
 * wrote on the host through nicemu's interpreter (FRSTOR the input image,
 * the instruction, FNSAVE, as on the host) and compares the control,
 * status and tag words, every non-empty register, the memory window and
 * EAX.  Only the instruction and operand pointers (a 64-bit host's are not
 * a 32-bit machine's) are left out, and the transcendentals' results may
 * differ by X87_ULP_BOUND units in the last place (then their C1 too).
 *
 *   NICEMU_X87_RECORDS=records.bin test_x87diff [-p /x87/arith] [--verbose]
 *
 * One g_test case per template: /x87/<group>/<name>. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "diff_machine.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "x87_table.h"

#define HANDLERS   DIFF_HANDLERS
#define IMG_IN     0x00010000u
#define IMG_OUT    0x00011000u
#define MEMWIN     0x00012000u
#define STACK      DIFF_STACK
#define CODE       0x00100000u
#define MAX_REPORT 6

static const x87_tmpl *table;
static unsigned ntable;
static x87_record *records;
static uint32_t nrecords;
static uint32_t *first, *count;
static const char *model_name = "486dx2-66";

static nm_machine *mach;
static nm_cpu *cpu;

static diff_machine dm;

static void machine_setup(void)
{
    diff_machine_setup(&dm, model_name, true);
    mach = dm.mach;
    cpu = dm.cpu;
}

typedef struct {
    bool fault;
    unsigned vector;
    uint32_t eax;
    uint8_t img[108];
    uint8_t mem[X87_MEM];
} emu_out;

static void emu_run(const x87_record *r, emu_out *o)
{
    uint8_t code[16];
    unsigned n = 0;
    code[n++] = 0xdd; /* frstor [esi] */
    code[n++] = 0x26;
    memcpy(code + n, r->code, r->len);
    n += r->len;
    code[n++] = 0xdd; /* fnsave [edi] */
    code[n++] = 0x37;
    nm_mem_dma_write(mach->mem, CODE, code, n);
    nm_mem_dma_write(mach->mem, IMG_IN, r->in, 108);
    nm_mem_dma_write(mach->mem, MEMWIN, r->mem_in, X87_MEM);
    nm_cpu_set_reg(cpu, NM_EAX, r->eax_in);
    nm_cpu_set_reg(cpu, NM_EBX, MEMWIN);
    nm_cpu_set_reg(cpu, NM_ESI, IMG_IN);
    nm_cpu_set_reg(cpu, NM_EDI, IMG_OUT);
    nm_cpu_set_reg(cpu, NM_ESP, STACK);
    nm_cpu_set_eflags(cpu, 0x2u);
    nm_cpu_set_eip(cpu, CODE);
    mach->stop_requested = 0;
    bool done = diff_run_to(cpu, CODE + n, 8);
    uint32_t eip = nm_cpu_get_eip(cpu);
    o->fault = !done;
    o->vector = eip >= HANDLERS && eip < HANDLERS + 32 * 16 ? (eip - HANDLERS) / 16 : 99;
    o->eax = nm_cpu_get_reg(cpu, NM_EAX);
    nm_mem_dma_read(mach->mem, IMG_OUT, o->img, 108);
    nm_mem_dma_read(mach->mem, MEMWIN, o->mem, X87_MEM);
}

static uint16_t w16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Distance in units of the last place between two finite extended values
 * of the same sign (the 80-bit patterns are monotonic in magnitude). */
static uint64_t ulp_distance(const uint8_t *a, const uint8_t *b)
{
    uint16_t ea = w16(a + 8), eb = w16(b + 8);
    if ((ea ^ eb) & 0x8000) return UINT64_MAX;
    if ((ea & 0x7fff) == 0x7fff || (eb & 0x7fff) == 0x7fff) return UINT64_MAX;
    uint64_t ma, mb;
    memcpy(&ma, a, 8);
    memcpy(&mb, b, 8);
    /* as one number: exponent * 2^63 + the significand's fraction */
    unsigned __int128 ka = (unsigned __int128)(ea & 0x7fff) << 63 | (ma & ~(1ull << 63));
    unsigned __int128 kb = (unsigned __int128)(eb & 0x7fff) << 63 | (mb & ~(1ull << 63));
    if ((ea & 0x7fff) == 0) ka = ma; /* denormals */
    if ((eb & 0x7fff) == 0) kb = mb;
    unsigned __int128 d = ka > kb ? ka - kb : kb - ka;
    return d > UINT64_MAX ? UINT64_MAX : (uint64_t)d;
}

static void hex(GString *s, const uint8_t *p, unsigned n)
{
    for (unsigned i = n; i-- > 0;)
        g_string_append_printf(s, "%02x", p[i]);
}

static void dump_img(GString *s, const char *who, const uint8_t *img)
{
    g_string_append_printf(s, "  %s: cw=%04x sw=%04x tw=%04x", who, w16(img), w16(img + 4),
                           w16(img + 8));
    for (unsigned i = 0; i < 8; i++) {
        g_string_append_printf(s, " st%u=", i);
        hex(s, img + 28 + 10 * i, 10);
    }
    g_string_append(s, "\n");
}

/* Which memory bytes the template's result is compared on. */
static bool mem_byte_compared(const x87_tmpl *t, unsigned b)
{
    switch (t->mem) {
    case X87_M_ENV28: return b < 12;
    case X87_M_ENV14: return b < 6;
    case X87_M_SAVE: return b < 12 || (b >= 28 && b < 108);
    default: return true;
    }
}

static uint64_t ulp_max_seen;
static unsigned within_bound; /* cases of the template running that differ within the bound */

/* Compares one case; returns a description of the first difference, or NULL. */
static char *compare(const x87_tmpl *t, const x87_record *r, const emu_out *o)
{
    if (o->fault) return g_strdup_printf("the emulator faulted (vector %u)", o->vector);
    const uint8_t *h = r->out, *e = o->img;
    uint16_t hsw = w16(h + 4), esw = w16(e + 4);
    uint16_t htw = w16(h + 8), etw = w16(e + 8);
    if (w16(h) != w16(e)) return g_strdup("control word");
    if (htw != etw) return g_strdup("tag word");
    unsigned top = (hsw >> 11) & 7;
    bool trans_differs = false;
    for (unsigned i = 0; i < 8; i++) {
        unsigned p = (top + i) & 7;
        if (((htw >> (2 * p)) & 3) == 3) continue;
        const uint8_t *a = h + 28 + 10 * i, *b = e + 28 + 10 * i;
        if (!memcmp(a, b, 10)) continue;
        if (t->flags & X87_F_TRANS) {
            uint64_t d = ulp_distance(a, b);
            if (d <= X87_ULP_BOUND) {
                if (d > ulp_max_seen) ulp_max_seen = d;
                trans_differs = true;
                continue;
            }
        }
        return g_strdup_printf("st%u", i);
    }
    uint16_t swmask = 0xffff;
    /* C1 of a transcendental: the direction it was rounded in from each
     * implementation's own inexact value, which is no architectural fact */
    if (trans_differs) within_bound++;
    /* and PE: this host's F2XM1 flags PE for -1 and +1, where the result
     * is exact (and is one ulp off at +1) */
    if (t->flags & X87_F_TRANS) swmask &= (uint16_t)~0x0220;
    if ((t->flags & X87_F_PREM) && (hsw & 0x0400)) swmask &= (uint16_t)~0x4300; /* partial */
    if ((hsw ^ esw) & swmask) return g_strdup_printf("status word (%04x)", (hsw ^ esw) & swmask);
    for (unsigned b = 0; b < X87_MEM; b++)
        if (mem_byte_compared(t, b) && r->mem_out[b] != o->mem[b])
            return g_strdup_printf("memory byte %u", b);
    if (r->eax_out != o->eax) return g_strdup("eax");
    return NULL;
}

static void test_template(gconstpointer data)
{
    unsigned ti = GPOINTER_TO_UINT(data);
    const x87_tmpl *t = &table[ti];
    unsigned bad = 0;
    within_bound = 0;
    for (uint32_t k = 0; k < count[ti]; k++) {
        const x87_record *r = &records[first[ti] + k];
        emu_out o;
        emu_run(r, &o);
        char *why = compare(t, r, &o);
        if (!why) continue;
        if (bad++ < MAX_REPORT) {
            GString *s = g_string_new(NULL);
            g_string_append_printf(s, "MISMATCH %s [", t->name);
            for (unsigned b = 0; b < r->len; b++)
                g_string_append_printf(s, "%s%02x", b ? " " : "", r->code[b]);
            g_string_append_printf(s, "] case %u: %s\n", k, why);
            dump_img(s, "in  ", r->in);
            g_string_append(s, "  mem in:  ");
            hex(s, r->mem_in, 16);
            g_string_append_printf(s, "  eax %08x\n", r->eax_in);
            dump_img(s, "host", r->out);
            dump_img(s, "emu ", o.img);
            g_string_append(s, "  mem host: ");
            hex(s, r->mem_out, 16);
            g_string_append(s, "\n  mem emu:  ");
            hex(s, o.mem, 16);
            g_string_append_printf(s, "\n  eax host %08x emu %08x\n", r->eax_out, o.eax);
            g_printerr("%s", s->str);
            g_string_free(s, TRUE);
        }
        g_free(why);
    }
    if (bad) {
        g_printerr("%s: %u of %u cases differ\n", t->name, bad, count[ti]);
        g_test_fail();
    }
    if (g_test_verbose() && (t->flags & X87_F_TRANS))
        g_printerr("%s: %u of %u cases differ within the bound; the largest difference so "
                   "far %" G_GUINT64_FORMAT " ulp\n",
                   t->name, within_bound, count[ti], ulp_max_seen);
}

static void load_records(const char *path)
{
    gchar *buf;
    gsize len;
    GError *err = NULL;
    if (!g_file_get_contents(path, &buf, &len, &err)) g_error("x87diff: %s", err->message);
    x87_header h;
    if (len < sizeof h) g_error("x87diff: %s: too short", path);
    memcpy(&h, buf, sizeof h);
    if (h.magic != X87_MAGIC || h.version != X87_VERSION || h.ntmpl != ntable ||
        h.table_hash != x87_table_hash())
        g_error("x87diff: %s was written for another table (run x87gen again)", path);
    if (len != sizeof h + (gsize)h.nrec * sizeof(x87_record))
        g_error("x87diff: %s: truncated", path);
    nrecords = h.nrec;
    records = g_new(x87_record, nrecords);
    memcpy(records, buf + sizeof h, (size_t)nrecords * sizeof(x87_record));
    g_free(buf);
    first = g_new0(uint32_t, ntable);
    count = g_new0(uint32_t, ntable);
    for (uint32_t i = 0; i < nrecords; i++) {
        unsigned ti = records[i].tmpl;
        if (ti >= ntable) g_error("x87diff: bad template index");
        if (!count[ti]) first[ti] = i;
        count[ti]++;
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();
    const char *path = g_getenv("NICEMU_X87_RECORDS");
    if (!path) {
        g_printerr("x87diff: set NICEMU_X87_RECORDS to x87gen's file\n");
        return 2;
    }
    const char *m = g_getenv("NICEMU_X87_CPU");
    if (m) model_name = m;
    table = x87_table(&ntable);
    load_records(path);
    machine_setup();
    for (unsigned i = 0; i < ntable; i++) {
        gchar *name = g_strdup_printf("/x87/%s/%s", table[i].group, table[i].name);
        g_test_add_data_func(name, GUINT_TO_POINTER(i), test_template);
        g_free(name);
    }
    int rc = g_test_run();
    diff_machine_free(&dm);
    return rc;
}
