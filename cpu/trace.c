/* -d exec: one line per instruction with the instruction count, CS:EIP and
 * linear address, the bytes, capstone's disassembly and the registers. */
#include "cpu/trace.h"

#include <capstone/capstone.h>
#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>

#include "cpu/core.h"
#include "emu/core/devcfg.h"
#include "emu/core/log.h"

typedef struct tracer {
    csh cs16, cs32;
    bool cs_ok;
    uint32_t lo, hi;
    uint64_t win_start, win_end;
} tracer;

static bool parse_u64_pair(const char *s, char sep, uint64_t *a, uint64_t *b)
{
    const char *p = strchr(s, sep);
    if (!p) return false;
    char *first = g_strndup(s, (gsize)(p - s));
    bool ok = nm_parse_u64(first, a) && nm_parse_u64(p + 1, b);
    g_free(first);
    return ok;
}

void trace_init(nm_cpu *c)
{
    tracer *t = g_new0(tracer, 1);
    t->hi = 0xffffffffu;
    t->win_end = UINT64_MAX;
    t->cs_ok = cs_open(CS_ARCH_X86, CS_MODE_16, &t->cs16) == CS_ERR_OK &&
               cs_open(CS_ARCH_X86, CS_MODE_32, &t->cs32) == CS_ERR_OK;
    const char *r = getenv("NICEMU_TRACE_RANGE");
    uint64_t a, b;
    if (r && parse_u64_pair(r, '-', &a, &b) && a <= b && b <= 0xffffffffu) {
        t->lo = (uint32_t)a;
        t->hi = (uint32_t)b;
    } else if (r) {
        nm_warn(EXEC, "NICEMU_TRACE_RANGE: bad value '%s' (want lo-hi)", r);
    }
    const char *w = getenv("NICEMU_TRACE_WINDOW");
    if (w && parse_u64_pair(w, ',', &a, &b)) {
        t->win_start = a;
        t->win_end = b > UINT64_MAX - a ? UINT64_MAX : a + b;
    } else if (w) {
        nm_warn(EXEC, "NICEMU_TRACE_WINDOW: bad value '%s' (want start,count)", w);
    }
    c->tracer = t;
}

void trace_free(nm_cpu *c)
{
    tracer *t = c->tracer;
    if (!t) return;
    if (t->cs_ok) {
        cs_close(&t->cs16);
        cs_close(&t->cs32);
    }
    g_free(t);
    c->tracer = NULL;
}

void nm_cpu_trace_set_range(nm_cpu *c, uint32_t lo, uint32_t hi)
{
    tracer *t = c->tracer;
    t->lo = lo;
    t->hi = hi;
}

void nm_cpu_trace_set_window(nm_cpu *c, uint64_t start, uint64_t count)
{
    tracer *t = c->tracer;
    t->win_start = start;
    t->win_end = count > UINT64_MAX - start ? UINT64_MAX : start + count;
}

bool trace_active(nm_cpu *c)
{
    return c->tracer != NULL;
}

void trace_insn(nm_cpu *c, const nm_insn *i)
{
    tracer *t = c->tracer;
    uint32_t lin = c->seg[NM_CS].base + c->eip;
    if (c->instructions < t->win_start || c->instructions >= t->win_end) return;
    if (lin < t->lo || lin > t->hi) return;
    /* The bytes, from RAM/ROM only (never touch MMIO from a trace). */
    uint8_t bytes[16];
    unsigned n = 0;
    uint32_t phys = c->fetch_phys | (lin & 0xfff);
    const uint8_t *page = nm_memmap_page_ptr(c->mem, phys, false);
    if (page)
        for (; n < i->len && (lin & 0xfff) + n < 0x1000; n++)
            bytes[n] = page[(lin & 0xfff) + n];
    char hex[48] = "";
    for (unsigned k = 0; k < n; k++)
        g_snprintf(hex + 3 * k, sizeof hex - 3 * k, "%02x ", bytes[k]);
    char dis[96] = "?";
    if (t->cs_ok && n == i->len) {
        cs_insn *insn = NULL;
        size_t cnt = cs_disasm(c->code32 ? t->cs32 : t->cs16, bytes, n, c->eip, 1, &insn);
        if (cnt) g_snprintf(dis, sizeof dis, "%s %s", insn[0].mnemonic, insn[0].op_str);
        if (insn) cs_free(insn, cnt);
    } else if (n != i->len) {
        g_snprintf(dis, sizeof dis, "(%s)", nm_opcode_name(i->op));
    }
    uint32_t f = cpu_get_eflags(c);
    nm_log(EXEC, NM_LOG_DEBUG,
           "%" PRIu64 " %04x:%08x (%08x) %-30s %-32s EAX=%08x EBX=%08x ECX=%08x EDX=%08x "
           "ESI=%08x EDI=%08x EBP=%08x ESP=%08x FL=%08x",
           c->instructions, c->seg[NM_CS].selector, c->eip, lin, hex, dis, c->gpr[NM_EAX],
           c->gpr[NM_EBX], c->gpr[NM_ECX], c->gpr[NM_EDX], c->gpr[NM_ESI], c->gpr[NM_EDI],
           c->gpr[NM_EBP], c->gpr[NM_ESP], f);
}
