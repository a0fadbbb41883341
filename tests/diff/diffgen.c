/* diffgen, diffgen64: run the templates of diff_table.c natively on
 * seeded edge-case and random operands and write one record per case.
 * One source, two builds:
 *
 *   diffgen    32-bit (cc -m32): runs every template, on the host or under
 *              qemu-i386 where the host cannot execute 32-bit programs;
 *   diffgen64  64-bit: runs, in long mode, every case whose instructions
 *              exist there, re-encoded where long mode reads the 32-bit
 *              bytes differently (long_form below); the record keeps the
 *              32-bit encoding, which is what the emulator runs.
 *
 *   diffgen SEED OUTFILE [PERCENT] [-v] [-r REFERENCE] [-c all|long|legacy]
 *
 * PERCENT scales the case count of every template (default 100).  -c picks
 * the cases written: all (diffgen's default), long (those diffgen64 runs:
 * its default and only choice) or legacy (the others: what a 32-bit
 * reference adds to diffgen64's).  -r names the reference in the file's
 * header (host-32 or host-64 by default; qemu-i386 when run under it).  The
 * output depends only on SEED, PERCENT and the table: each template draws
 * from its own splitmix64 stream seeded by (SEED, template index), and a
 * case is generated whether or not it is run, so both builds write
 * byte-identical records for the cases both run.
 *
 * Each case is executed by a small code buffer built around the instruction
 * bytes: save the host registers, load EFLAGS (POPF) and the seven GPRs
 * other than ESP, run the instruction, store the GPRs and EFLAGS (PUSHF),
 * restore.  A #DE (SIGFPE) is recorded as such; any other signal is a bug
 * in the table and stops the run. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "diff_table.h"

#if defined(__i386__)
#define HOST_REFERENCE DIFF_REF_HOST32
#elif defined(__x86_64__)
#define HOST_REFERENCE DIFF_REF_HOST64
#else
#error "diffgen runs x86 instructions natively: build it for x86 (-m32) or x86-64"
#endif

/* ---- PRNG: splitmix64 ---- */
static uint64_t rng_state;

static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rnd32(void)
{
    return (uint32_t)(rnd64() >> 32);
}
static uint32_t rnd(uint32_t n)
{
    return (uint32_t)(rnd64() % n);
}

static uint32_t size_mask(unsigned size)
{
    return size == 1 ? 0xffu : size == 2 ? 0xffffu : 0xffffffffu;
}

/* An operand value of `size` bytes, biased to the edges. */
static uint32_t edge_value(unsigned size)
{
    static const uint32_t e32[] = {0,          1,          2,          3,          0x7f,
                                   0x80,       0xff,       0x100,      0x7fff,     0x8000,
                                   0xffff,     0x10000,    0x7fffffff, 0x80000000, 0x80000001,
                                   0xfffffffe, 0xffffffff, 0x55555555, 0xaaaaaaaa, 0x0f0f0f0f};
    uint32_t m = size_mask(size);
    uint32_t top = (m >> 1) + 1; /* the sign bit */
    switch (rnd(10)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return m;       /* -1 */
    case 3: return top - 1; /* max positive */
    case 4: return top;     /* min negative */
    case 5: return top + 1;
    case 6: return rnd(16); /* small */
    case 7: return (0u - rnd(16)) & m;
    case 8: return e32[rnd(sizeof e32 / sizeof e32[0])] & m;
    default: return (top - 8 + rnd(16)) & m; /* around the sign boundary */
    }
}

/* A register value: random, or random upper bits around an edge operand. */
static uint32_t reg_value(unsigned size)
{
    uint32_t r = rnd32();
    switch (rnd(8)) {
    case 0:
    case 1:
    case 2: return r;
    case 3:
    case 4: return (r & ~size_mask(size)) | edge_value(size);
    case 5:
        if (size == 1) return (r & ~0xff00u) | edge_value(1) << 8; /* AH..BH */
        return edge_value(4);
    case 6: return edge_value(4);
    default: return rnd(2) ? rnd(32) : 0u - rnd(32);
    }
}

/* ---- building one case ---- */
static unsigned modrm_reg(const diff_record *r, const diff_insn *t)
{
    return (r->code[t->modrm] >> 3) & 7;
}
static unsigned modrm_rm(const diff_record *r, const diff_insn *t)
{
    return r->code[t->modrm] & 7;
}

static unsigned pick_reg(int byte_reg)
{
    for (;;) {
        unsigned v = rnd(8);
        if (byte_reg || v != 4) return v;
    }
}

static uint32_t mem_get(const diff_record *r, unsigned size)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint32_t)r->mem_in[8 + i] << (8 * i);
    return v;
}

static void mem_set(diff_record *r, unsigned size, uint32_t v)
{
    for (unsigned i = 0; i < size; i++)
        r->mem_in[8 + i] = (uint8_t)(v >> (8 * i));
}

/* The r/m operand of a case (register or memory). */
static uint32_t rm_get(const diff_record *r, const diff_insn *t)
{
    if (t->mem) return mem_get(r, t->size);
    return diff_get_op(r->in_regs, t->rm_byte ? 1 : t->size, modrm_rm(r, t));
}

static void rm_set(diff_record *r, const diff_insn *t, uint32_t v)
{
    if (t->mem)
        mem_set(r, t->size, v);
    else
        diff_set_op(r->in_regs, t->rm_byte ? 1 : t->size, modrm_rm(r, t), v);
}

/* LEA: a random memory form after the opcode at t->modrm. */
static void gen_lea(diff_record *r, const diff_insn *t)
{
    int a16 = t->bytes[0] == 0x67;
    unsigned n = (unsigned)t->modrm;
    unsigned mod = rnd(3), reg = pick_reg(0), rm = rnd(8);
    r->code[n++] = (uint8_t)(mod << 6 | reg << 3 | rm);
    unsigned disp = mod == 1 ? 1 : mod == 2 ? (a16 ? 2 : 4) : 0;
    if (a16) {
        if (mod == 0 && rm == 6) disp = 2;
    } else {
        if (rm == 4) {
            uint8_t sib = (uint8_t)rnd(256);
            if ((sib & 7) == 4) sib ^= 1; /* no ESP base: the host's ESP differs */
            r->code[n++] = sib;
            if (mod == 0 && (sib & 7) == 5) disp = 4;
        } else if (mod == 0 && rm == 5) {
            disp = 4;
        }
    }
    uint32_t d = disp == 1 ? (uint32_t)(int32_t)(int8_t)edge_value(1) : edge_value(disp);
    if (disp == 0) d = 0;
    for (unsigned i = 0; i < disp; i++)
        r->code[n++] = (uint8_t)(d >> (8 * i));
    r->len = (uint8_t)n;
}

static void gen_case(diff_record *r, const diff_insn *t, unsigned tid, unsigned idx)
{
    memset(r, 0, sizeof *r);
    r->tmpl = (uint16_t)tid;
    r->idx = idx;
    r->len = t->len;
    memcpy(r->code, t->bytes, t->len);

    /* Encoding. */
    switch (t->mmode) {
    case M_REGREG:
        r->code[t->modrm] = (uint8_t)(0xc0 | pick_reg(t->reg_byte) << 3 | pick_reg(t->rm_byte));
        break;
    case M_RM:
        r->code[t->modrm] = (uint8_t)((r->code[t->modrm] & 0xf8) | pick_reg(t->rm_byte));
        break;
    case M_REG:
        r->code[t->modrm] = (uint8_t)((r->code[t->modrm] & 0xc7) | pick_reg(t->reg_byte) << 3);
        break;
    case M_OPREG:
        r->code[t->modrm] = (uint8_t)((r->code[t->modrm] & 0xf8) | pick_reg(t->rm_byte));
        break;
    case M_LEA: gen_lea(r, t); break;
    default: break;
    }
    if (t->imm >= 0) {
        uint32_t v = edge_value(t->immsize);
        if (rnd(3) == 0) v = rnd32() & size_mask(t->immsize);
        for (unsigned i = 0; i < t->immsize; i++)
            r->code[t->imm + i] = (uint8_t)(v >> (8 * i));
    }

    /* Operands. */
    for (unsigned i = 0; i < 8; i++)
        r->in_regs[i] = reg_value(t->size);
    r->in_regs[4] = 0; /* ESP: not loaded */
    for (unsigned i = 0; i < DIFF_WIN; i++)
        r->mem_in[i] = (uint8_t)rnd(256);
    if (t->mem) mem_set(r, t->size, reg_value(t->size));
    r->in_flags = 0x202u | (rnd32() & 0x8d5u); /* IF, bit 1, random OF SF ZF AF PF CF */

    switch (t->gen) {
    case G_COUNT: {
        unsigned c = idx % 72;
        uint32_t count = c < 64 ? c : 64 + rnd(192);
        if (t->count == CNT_CL)
            r->in_regs[1] = (r->in_regs[1] & ~0xffu) | count;
        else
            r->code[t->imm] = (uint8_t)count;
        break;
    }
    case G_DIV: {
        unsigned s = t->size;
        uint32_t lo = diff_get_op(r->in_regs, s, 0); /* AL, AX or EAX */
        uint32_t sign = (lo >> (s * 8 - 1)) & 1 ? size_mask(s) : 0;
        uint32_t hi;
        switch (rnd(5)) {
        case 0: hi = 0; break;
        case 1:
        case 2: hi = sign; break;
        case 3: hi = rnd(4); break;
        default: hi = reg_value(s) & size_mask(s); break; /* mostly faults */
        }
        if (s == 1)
            diff_set_op(r->in_regs, 1, 4, hi); /* AH */
        else
            diff_set_op(r->in_regs, s, 2, hi); /* DX / EDX */
        break;
    }
    case G_BCD: {
        unsigned i = idx % 2048;
        r->in_regs[0] = (r->in_regs[0] & ~0xffu) | (i & 0xff);
        r->in_flags = (r->in_flags & ~0x11u) | ((i >> 8) & 1) | (((i >> 9) & 1) << 4);
        if (i & 1024) r->in_regs[0] = (r->in_regs[0] & ~0xff00u) | edge_value(1) << 8;
        if (t->imm >= 0) r->code[t->imm] = (uint8_t)(rnd(2) ? 10 : rnd(256));
        break;
    }
    case G_BITSCAN: {
        unsigned bits = t->size * 8;
        uint32_t v;
        switch (rnd(10)) {
        case 0: v = 0; break;
        case 1:
        case 2:
        case 3: v = 1u << rnd(bits); break;
        default: v = rnd32() & rnd32() & rnd32(); break;
        }
        rm_set(r, t, v & size_mask(t->size));
        break;
    }
    case G_BTMEM: {
        uint32_t off = (uint32_t)((int32_t)rnd(128) - 64);
        diff_set_op(r->in_regs, t->size, modrm_reg(r, t), off & size_mask(t->size));
        break;
    }
    case G_CMPXCHG:
        if (rnd(2)) diff_set_op(r->in_regs, t->size, 0, rm_get(r, t));
        break;
    case G_COUNTREG: {
        static const uint32_t ecx[] = {0, 1, 2, 0x10000, 0x10001, 0xffffffff, 0xffff};
        r->in_regs[1] = rnd(2) ? ecx[rnd(7)] : rnd32();
        break;
    }
    default: break;
    }

    if (t->chain) {
        /* No second instruction that reads a flag the prefix left undefined. */
        uint32_t undef = diff_undefined_first(t, r).flags;
        unsigned k;
        const diff_second *s2;
        for (;;) {
            k = rnd(diff_nseconds);
            s2 = &diff_seconds[k];
            memcpy(r->code + r->len, s2->bytes, s2->len);
            if (s2->cc_at >= 0) r->code[r->len + s2->cc_at] |= (uint8_t)rnd(16);
            if (!(diff_second_reads(s2, r->code + r->len) & undef)) break;
        }
        r->len = (uint8_t)(r->len + s2->len);
        r->code[DIFF_CHAIN_SLOT] = (uint8_t)k;
    }
}

/* ---- the long-mode encoding ---- */

/* One instruction (n bytes at in; a memory ModRM at index mem_modrm, -1
 * none) as 64-bit mode must be given it to do what the bytes do in 32-bit
 * code, written to out; returns its length, or -1 when 64-bit mode has no
 * such instruction.  SDM vol. 2, the "64-bit mode" column of each page and
 * 2.2.1 (REX prefixes), 2.2.1.6 (RIP-relative addressing). */
static int long_insn(const uint8_t *in, unsigned n, int mem_modrm, uint8_t *out)
{
    unsigned i = 0, o = 0;
    int a16 = 0;
    while (i < n && (in[i] == 0x66 || in[i] == 0x67)) {
        a16 |= in[i] == 0x67;
        out[o++] = in[i++];
    }
    if (i == n) return -1;
    uint8_t op = in[i];
    switch (op) {
    case 0x27: /* DAA DAS AAA AAS AAM AAD: "Invalid in 64-bit mode" */
    case 0x2f:
    case 0x37:
    case 0x3f:
    case 0xd4:
    case 0xd5: return -1;
    case 0x8d: /* LEA: 67h selects 32-bit addressing there, not 16-bit */
        if (a16) return -1;
        break;
    case 0xe0: /* LOOPNE LOOPE LOOP JECXZ: the counter follows the address size */
    case 0xe1:
    case 0xe2:
    case 0xe3:
        if (a16) return -1; /* CX: no 16-bit address size in 64-bit mode */
        out[o++] = 0x67;    /* ECX, not RCX */
        break;
    default: break;
    }
    if (op >= 0x40 && op <= 0x4f) {
        /* INC/DEC r16/r32 (40+r, 48+r) are REX prefixes: FF /0, FF /1. */
        out[o++] = 0xff;
        out[o++] = (uint8_t)(0xc0 | (op & 0x08) | (op & 7));
        i++;
    }
    for (; i < n; i++) {
        if ((int)i == mem_modrm && (in[i] & 0xc7) == 0x05) {
            /* mod=00 rm=101 is RIP-relative: [disp32] as SIB with no base
             * and no index (SIB 25h); the window lies below 2^31. */
            out[o++] = (uint8_t)((in[i] & 0xf8) | 4);
            out[o++] = 0x25;
            continue;
        }
        out[o++] = in[i];
    }
    return (int)o;
}

/* A case's bytes for 64-bit mode (the template's instruction, then the
 * chain's second one), or -1 when long mode cannot run the case. */
static int long_form(const diff_insn *t, const diff_record *r, uint8_t *out)
{
    unsigned n2 = t->chain ? diff_seconds[r->code[DIFF_CHAIN_SLOT]].len : 0;
    unsigned n1 = r->len - n2;
    int mem = t->mem || t->mmode == M_LEA ? t->modrm : -1;
    int a = long_insn(r->code, n1, mem, out);
    if (a < 0 || !n2) return a;
    int b = long_insn(r->code + n1, n2, -1, out + a);
    return b < 0 ? -1 : a + b;
}

/* ---- native execution ---- */

/* What the harness reads and writes, at addresses a disp32 can name.  The
 * inputs and flags are 64-bit for long mode (the 32-bit harness uses the
 * low halves): the registers' upper halves hold UPPER_HALF, so a case that
 * long mode would run with 64-bit semantics (RCX as LOOP's counter, say)
 * gives another result than the 32-bit build and the agreement test sees it. */
#define UPPER_HALF(i) (0xa5a5a5a5u ^ (i) << 4)

typedef struct {
    uint64_t in[8];
    uint32_t out[8];
    uint64_t in_flags, out_flags;
    uint64_t saved_sp;
} harness_io;

static harness_io *io;
static uint8_t *codebuf;
static uint8_t *window; /* DIFF_WIN_BASE in the host address space */
static sigjmp_buf fault_jb;

#if defined(__x86_64__)
/* The page of harness_io: below 2^31 (a sign-extended disp32 reaches it),
 * just under the data page. */
#define IO_PAGE (DIFF_DATA_PAGE - 0x1000u)
#endif

static void on_signal(int sig)
{
    siglongjmp(fault_jb, sig);
}

static uint32_t addr(const void *p)
{
    return (uint32_t)(uintptr_t)p;
}

/* ModRM (and in 64-bit mode SIB) + disp32 naming the absolute address a,
 * with `reg` in the reg field. */
static uint8_t *absolute(uint8_t *p, unsigned reg, const void *a)
{
#if defined(__x86_64__)
    *p++ = (uint8_t)(reg << 3 | 4); /* mod=00 rm=100: SIB */
    *p++ = 0x25;                    /* no index, no base: disp32 */
#else
    *p++ = (uint8_t)(reg << 3 | 5); /* mod=00 rm=101: disp32 */
#endif
    uint32_t v = addr(a);
    memcpy(p, &v, 4);
    return p + 4;
}

static void build_wrapper(const uint8_t *code, unsigned len)
{
    uint8_t *p = codebuf;
#if defined(__x86_64__)
    *p++ = 0x53; /* push rbx */
    *p++ = 0x55; /* push rbp: the other callee-saved registers are not touched */
    *p++ = 0x9c; /* pushfq */
    *p++ = 0x48; /* mov [saved_sp], rsp */
    *p++ = 0x89;
    p = absolute(p, 4, &io->saved_sp);
#else
    *p++ = 0x60;                    /* pushad */
    *p++ = 0x9c;                    /* pushfd */
    *p++ = 0x89;                    /* mov [saved_sp], esp */
    p = absolute(p, 4, &io->saved_sp);
#endif
    *p++ = 0xff; /* push [in_flags] (dword / qword) */
    p = absolute(p, 6, &io->in_flags);
    *p++ = 0x9d; /* popfd / popfq */
    for (unsigned i = 0; i < 8; i++) {
        if (i == 4) continue;
#if defined(__x86_64__)
        *p++ = 0x48; /* mov r64, [in+i] */
#endif
        *p++ = 0x8b; /* mov r32, [in+i] */
        p = absolute(p, i, &io->in[i]);
    }
    memcpy(p, code, len);
    p += len;
    for (unsigned i = 0; i < 8; i++) {
        *p++ = 0x89; /* mov [out+i], r32 */
        p = absolute(p, i, &io->out[i]);
    }
    *p++ = 0x9c; /* pushfd / pushfq */
    *p++ = 0x8f; /* pop [out_flags] */
    p = absolute(p, 0, &io->out_flags);
#if defined(__x86_64__)
    *p++ = 0x48; /* mov rsp, [saved_sp] */
    *p++ = 0x8b;
    p = absolute(p, 4, &io->saved_sp);
    *p++ = 0x9d; /* popfq */
    *p++ = 0x5d; /* pop rbp */
    *p++ = 0x5b; /* pop rbx */
#else
    *p++ = 0x8b; /* mov esp, [saved_sp] */
    p = absolute(p, 4, &io->saved_sp);
    *p++ = 0x9d; /* popfd */
    *p++ = 0x61; /* popad */
#endif
    *p++ = 0xc3; /* ret */
}

/* Runs `code` (the case's instructions as this mode needs them) on the
 * case's inputs; returns 0, or the signal that stopped the instruction. */
static int run_native(diff_record *r, const uint8_t *code, unsigned len)
{
    build_wrapper(code, len);
    for (unsigned i = 0; i < 8; i++)
        io->in[i] = (uint64_t)UPPER_HALF(i) << 32 | r->in_regs[i];
    io->in_flags = r->in_flags;
    memcpy(window, r->mem_in, DIFF_WIN);
    void (*fn)(void);
    void *vp = codebuf;
    memcpy(&fn, &vp, sizeof fn);
    int sig = sigsetjmp(fault_jb, 1);
    if (sig == 0) fn();
    if (sig) {
        memcpy(r->out_regs, r->in_regs, sizeof r->out_regs);
        r->out_flags = r->in_flags;
        memcpy(r->mem_out, r->mem_in, DIFF_WIN);
        return sig;
    }
    memcpy(r->out_regs, io->out, sizeof r->out_regs);
    r->out_regs[4] = 0; /* the host's ESP: not part of the result */
    r->out_flags = (uint32_t)io->out_flags;
    memcpy(r->mem_out, window, DIFF_WIN);
    return 0;
}

static void print_record(FILE *f, const diff_insn *t, const diff_record *r)
{
    fprintf(f, "%-28s", t->name);
    for (unsigned i = 0; i < r->len; i++)
        fprintf(f, " %02x", r->code[i]);
    fprintf(f, "%s\n  in  fl=%08x", r->status ? "  [#DE]" : "", r->in_flags);
    for (unsigned i = 0; i < 8; i++)
        fprintf(f, " %08x", r->in_regs[i]);
    fprintf(f, "\n  out fl=%08x", r->out_flags);
    for (unsigned i = 0; i < 8; i++)
        fprintf(f, " %08x", r->out_regs[i]);
    if (t->mem)
        fprintf(f, "\n  mem %08x -> %08x", mem_get(r, 4),
                r->mem_out[8] | (uint32_t)r->mem_out[9] << 8 | (uint32_t)r->mem_out[10] << 16 |
                    (uint32_t)r->mem_out[11] << 24);
    fprintf(f, "\n");
}

/* The CPUID brand string (leaves 80000002h..80000004h), "" if there is none. */
static void cpu_brand(char out[48])
{
    unsigned a, b, c, d;
    memset(out, 0, 48);
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000004u) return;
    for (unsigned i = 0; i < 3; i++) {
        unsigned v[4];
        __get_cpuid(0x80000002u + i, &v[0], &v[1], &v[2], &v[3]);
        memcpy(out + 16 * i, v, 16);
    }
    out[47] = 0;
    size_t n = strlen(out); /* trailing blanks */
    while (n && out[n - 1] == ' ')
        out[--n] = 0;
    size_t k = strspn(out, " "); /* leading blanks */
    memmove(out, out + k, n - k + 1);
}

static int usage(void)
{
    fprintf(stderr,
            "usage: diffgen SEED OUTFILE [PERCENT] [-v] [-r REFERENCE] [-c all|long|legacy]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int verbose = 0;
    const char *pos[3] = {NULL, NULL, NULL};
    int npos = 0;
    const char *reference = HOST_REFERENCE;
#if defined(__x86_64__)
    const char *which = DIFF_CASES_LONG;
#else
    const char *which = DIFF_CASES_ALL;
#endif
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose = 1;
        } else if (!strcmp(argv[i], "-r") || !strcmp(argv[i], "-c")) {
            if (i + 1 == argc) return usage();
            if (argv[i][1] == 'r')
                reference = argv[++i];
            else
                which = argv[++i];
        } else if (npos < 3) {
            pos[npos++] = argv[i];
        } else {
            return usage();
        }
    }
    if (npos < 2) return usage();
    char *end;
    unsigned long seed = strtoul(pos[0], &end, 0);
    if (*end || seed > 0xffffffffu) {
        fprintf(stderr, "diffgen: bad seed '%s'\n", pos[0]);
        return 2;
    }
    unsigned long percent = 100;
    if (pos[2]) {
        percent = strtoul(pos[2], &end, 0);
        if (*end || percent == 0 || percent > 10000) {
            fprintf(stderr, "diffgen: bad percent '%s'\n", pos[2]);
            return 2;
        }
    }
    if (strcmp(reference, DIFF_REF_HOST32) && strcmp(reference, DIFF_REF_HOST64) &&
        strcmp(reference, DIFF_REF_QEMU)) {
        fprintf(stderr, "diffgen: bad reference '%s' (host-32, host-64 or qemu-i386)\n", reference);
        return 2;
    }
    int run_long = !strcmp(which, DIFF_CASES_LONG), run_legacy = !strcmp(which, DIFF_CASES_LEGACY);
    if (!run_long && !run_legacy && strcmp(which, DIFF_CASES_ALL)) {
        fprintf(stderr, "diffgen: bad case set '%s' (all, long or legacy)\n", which);
        return 2;
    }
#if defined(__x86_64__)
    if (!run_long) {
        fprintf(stderr,
                "diffgen64: runs the long-mode cases only (-c long); '%s' needs the "
                "32-bit diffgen\n",
                which);
        return 2;
    }
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000001u, &a, &b, &c, &d) || !(c & 1)) {
        /* CPUID.80000001H:ECX.LAHF-SAHF[bit 0]: LAHF/SAHF exist in 64-bit mode */
        fprintf(stderr, "diffgen64: this CPU has no LAHF/SAHF in 64-bit mode\n");
        return 1;
    }
#endif

    codebuf =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *want = (void *)(uintptr_t)DIFF_DATA_PAGE;
    void *data = mmap(want, 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (codebuf == MAP_FAILED || data != want) {
        fprintf(stderr, "diffgen: cannot map the code buffer or the data page at 0x%08x: %s\n",
                DIFF_DATA_PAGE, strerror(errno));
        return 1;
    }
    window = (uint8_t *)data + (DIFF_WIN_BASE - DIFF_DATA_PAGE);
#if defined(__x86_64__)
    void *want_io = (void *)(uintptr_t)IO_PAGE;
    void *io_page = mmap(want_io, 4096, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (io_page != want_io) {
        fprintf(stderr, "diffgen64: cannot map the harness page at 0x%08x: %s\n", IO_PAGE,
                strerror(errno));
        return 1;
    }
    io = io_page;
#else
    static harness_io io_static;
    io = &io_static;
#endif

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGFPE, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGTRAP, &sa, NULL);

    FILE *out = fopen(pos[1], "wb");
    if (!out) {
        fprintf(stderr, "diffgen: %s: %s\n", pos[1], strerror(errno));
        return 1;
    }
    const diff_insn *table;
    unsigned n = diff_table_build(&table);
    diff_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, DIFF_MAGIC, 8);
    h.seed = (uint32_t)seed;
    h.percent = (uint32_t)percent;
    h.templates = n;
    h.table_hash = diff_table_hash();
    h.record_size = sizeof(diff_record);
    snprintf(h.reference, sizeof h.reference, "%s", reference);
    snprintf(h.cases, sizeof h.cases, "%s", which);
    cpu_brand(h.cpu);
    fwrite(&h, sizeof h, 1, out); /* rewritten with the count at the end */

    unsigned long total = 0, faults = 0, left = 0;
    for (unsigned tid = 0; tid < n; tid++) {
        const diff_insn *t = &table[tid];
        rng_state = (uint64_t)seed * 0x100000001b3ull ^ ((uint64_t)tid << 32) ^ 0x6e69636575ull;
        unsigned cases = diff_case_count(t, (uint32_t)percent);
        for (unsigned i = 0; i < cases; i++) {
            diff_record r;
            gen_case(&r, t, tid, i);
            uint8_t lcode[40];
            int llen = long_form(t, &r, lcode);
            if ((run_long && llen < 0) || (run_legacy && llen >= 0)) {
                left++;
                continue;
            }
#if defined(__x86_64__)
            int sig = run_native(&r, lcode, (unsigned)llen);
#else
            int sig = run_native(&r, r.code, r.len);
#endif
            if (sig == SIGFPE) {
                r.status = DIFF_ST_DE;
                faults++;
            } else if (sig) {
                fprintf(stderr, "diffgen: signal %d on the host running:\n", sig);
                print_record(stderr, t, &r);
                return 1;
            }
            if (verbose && i < 4) print_record(stdout, t, &r);
            if (fwrite(&r, sizeof r, 1, out) != 1) {
                fprintf(stderr, "diffgen: %s: write failed\n", pos[1]);
                return 1;
            }
            total++;
        }
    }
    h.records = (uint32_t)total;
    if (fseek(out, 0, SEEK_SET) != 0 || fwrite(&h, sizeof h, 1, out) != 1 || fclose(out) != 0) {
        fprintf(stderr, "diffgen: %s: write failed\n", pos[1]);
        return 1;
    }
    printf("diffgen: %s (%s), seed %lu, %u templates, %s cases: %lu (%lu raised #DE), %lu left "
           "to the other build -> %s\n",
           reference, h.cpu[0] ? h.cpu : "no CPUID brand", seed, n, which, total, faults, left,
           pos[1]);
    return 0;
}
