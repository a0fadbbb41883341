/* The instruction templates of the differential tests.  Built by code, in a
 * fixed order, so the generator and the test agree on every id.
 *
 * An encoding is written as hex bytes plus placeholders:
 *   RR   ModRM mod=11, reg and rm random          (M_REGREG)
 *   Rn   ModRM mod=11, reg=/n, rm random          (M_RM)
 *   MR   ModRM mod=00 rm=101 reg random + disp32 = DIFF_DATA   (M_REG)
 *   Mn   ModRM mod=00 rm=101 reg=/n + disp32 = DIFF_DATA
 *   +r   the previous (opcode) byte gets a random register in bits 2:0
 *   ib iw id   a random immediate of 1, 2, 4 bytes
 *   cb   an imm8 shift count (G_COUNT: 0..63 cycled, sometimes bigger)
 *   LEA  a random memory ModRM (+SIB, displacement): the rest of the insn
 * 16/32-bit register fields never name ESP/SP (the harness's stack). */
#include "diff_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TEMPLATES 600

static diff_insn table[MAX_TEMPLATES];
static unsigned ntable;

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static void put32(diff_insn *t, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        t->bytes[t->len++] = (uint8_t)(v >> (8 * i));
}

static diff_insn *T(const char *group, unsigned size, diff_fclass fc, unsigned cases,
                    const char *enc, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static diff_insn *T(const char *group, unsigned size, diff_fclass fc, unsigned cases,
                    const char *enc, const char *fmt, ...)
{
    if (ntable >= MAX_TEMPLATES) {
        fprintf(stderr, "diff_table: too many templates\n");
        abort();
    }
    diff_insn *t = &table[ntable++];
    memset(t, 0, sizeof *t);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    snprintf(t->group, sizeof t->group, "%s", group);
    t->size = (uint8_t)size;
    t->fclass = (uint8_t)fc;
    t->cases = cases;
    t->modrm = -1;
    t->imm = -1;
    t->reg_byte = t->rm_byte = size == 1;

    const char *p = enc;
    while (*p) {
        if (*p == ' ') {
            p++;
            continue;
        }
        char a = p[0], b = p[1];
        if (a == 'R' && b == 'R') {
            t->modrm = (int8_t)t->len;
            t->mmode = M_REGREG;
            t->bytes[t->len++] = 0xc0;
        } else if (a == 'R' && b >= '0' && b <= '7') {
            t->modrm = (int8_t)t->len;
            t->mmode = M_RM;
            t->bytes[t->len++] = (uint8_t)(0xc0 | (b - '0') << 3);
        } else if (a == 'M' && (b == 'R' || (b >= '0' && b <= '7'))) {
            t->modrm = (int8_t)t->len;
            t->mmode = b == 'R' ? M_REG : M_NONE;
            t->mem = 1;
            t->bytes[t->len++] = (uint8_t)(0x05 | (b == 'R' ? 0 : (b - '0') << 3));
            put32(t, DIFF_DATA);
        } else if (a == '+' && b == 'r') {
            t->modrm = (int8_t)(t->len - 1);
            t->mmode = M_OPREG;
        } else if ((a == 'i' || a == 'c') && (b == 'b' || b == 'w' || b == 'd')) {
            t->imm = (int8_t)t->len;
            t->immsize = b == 'b' ? 1 : b == 'w' ? 2 : 4;
            if (a == 'c') {
                t->count = CNT_IMM;
                t->gen = G_COUNT;
            }
            for (unsigned i = 0; i < t->immsize; i++)
                t->bytes[t->len++] = 0;
        } else if (a == 'L' && b == 'E' && p[2] == 'A') {
            t->mmode = M_LEA;
            t->modrm = (int8_t)t->len;
            p++;
        } else if (hexval(a) >= 0 && hexval(b) >= 0) {
            t->bytes[t->len++] = (uint8_t)(hexval(a) << 4 | hexval(b));
        } else {
            fprintf(stderr, "diff_table: bad encoding '%s' for %s\n", enc, t->name);
            abort();
        }
        p += 2;
    }
    return t;
}

static const char *const cc_names[16] = {"o", "no", "b", "nb", "z", "nz", "be", "nbe",
                                         "s", "ns", "p", "np", "l", "nl", "le", "nle"};

static void build(void)
{
    char enc[64];
    /* ---- ALU: ADD OR ADC SBB AND SUB XOR CMP ---- */
    static const char *const alu[8] = {"add", "or", "adc", "sbb", "and", "sub", "xor", "cmp"};
    for (unsigned i = 0; i < 8; i++) {
        diff_fclass fc = (i == 1 || i == 4 || i == 6) ? FC_LOGIC : FC_DEFINED;
        const char *n = alu[i];
        unsigned op = i * 8;
        snprintf(enc, sizeof enc, "%02x RR", op);
        T("alu", 1, fc, 3000, enc, "%s r/m8,r8", n);
        snprintf(enc, sizeof enc, "66 %02x RR", op + 1);
        T("alu", 2, fc, 3000, enc, "%s r/m16,r16", n);
        snprintf(enc, sizeof enc, "%02x RR", op + 1);
        T("alu", 4, fc, 3000, enc, "%s r/m32,r32", n);
        snprintf(enc, sizeof enc, "%02x RR", op + 2);
        T("alu", 1, fc, 500, enc, "%s r8,r/m8", n);
        snprintf(enc, sizeof enc, "66 %02x RR", op + 3);
        T("alu", 2, fc, 500, enc, "%s r16,r/m16", n);
        snprintf(enc, sizeof enc, "%02x RR", op + 3);
        T("alu", 4, fc, 500, enc, "%s r32,r/m32", n);
        snprintf(enc, sizeof enc, "%02x ib", op + 4);
        T("alu", 1, fc, 500, enc, "%s al,imm8", n);
        snprintf(enc, sizeof enc, "66 %02x iw", op + 5);
        T("alu", 2, fc, 500, enc, "%s ax,imm16", n);
        snprintf(enc, sizeof enc, "%02x id", op + 5);
        T("alu", 4, fc, 500, enc, "%s eax,imm32", n);
        snprintf(enc, sizeof enc, "80 R%u ib", i);
        T("alu", 1, fc, 500, enc, "%s r/m8,imm8", n);
        snprintf(enc, sizeof enc, "66 81 R%u iw", i);
        T("alu", 2, fc, 500, enc, "%s r/m16,imm16", n);
        snprintf(enc, sizeof enc, "81 R%u id", i);
        T("alu", 4, fc, 500, enc, "%s r/m32,imm32", n);
        snprintf(enc, sizeof enc, "66 83 R%u ib", i);
        T("alu", 2, fc, 500, enc, "%s r/m16,imm8", n);
        snprintf(enc, sizeof enc, "83 R%u ib", i);
        T("alu", 4, fc, 500, enc, "%s r/m32,imm8", n);
        snprintf(enc, sizeof enc, "%02x MR", op);
        T("alu", 1, fc, 500, enc, "%s m8,r8", n);
        snprintf(enc, sizeof enc, "66 %02x MR", op + 1);
        T("alu", 2, fc, 500, enc, "%s m16,r16", n);
        snprintf(enc, sizeof enc, "%02x MR", op + 1);
        T("alu", 4, fc, 500, enc, "%s m32,r32", n);
        snprintf(enc, sizeof enc, "%02x MR", op + 3);
        T("alu", 4, fc, 500, enc, "%s r32,m32", n);
        snprintf(enc, sizeof enc, "83 M%u ib", i);
        T("alu", 4, fc, 500, enc, "%s m32,imm8", n);
    }
    T("alu", 1, FC_LOGIC, 2000, "84 RR", "test r/m8,r8");
    T("alu", 2, FC_LOGIC, 2000, "66 85 RR", "test r/m16,r16");
    T("alu", 4, FC_LOGIC, 2000, "85 RR", "test r/m32,r32");
    T("alu", 1, FC_LOGIC, 500, "a8 ib", "test al,imm8");
    T("alu", 2, FC_LOGIC, 500, "66 a9 iw", "test ax,imm16");
    T("alu", 4, FC_LOGIC, 500, "a9 id", "test eax,imm32");
    T("alu", 1, FC_LOGIC, 500, "f6 R0 ib", "test r/m8,imm8");
    T("alu", 2, FC_LOGIC, 500, "66 f7 R0 iw", "test r/m16,imm16");
    T("alu", 4, FC_LOGIC, 500, "f7 R0 id", "test r/m32,imm32");
    T("alu", 4, FC_LOGIC, 500, "85 MR", "test m32,r32");

    /* ---- INC DEC NEG NOT ---- */
    T("alu", 1, FC_DEFINED, 2000, "fe R0", "inc r/m8");
    T("alu", 2, FC_DEFINED, 2000, "66 ff R0", "inc r/m16");
    T("alu", 4, FC_DEFINED, 2000, "ff R0", "inc r/m32");
    T("alu", 2, FC_DEFINED, 500, "66 40 +r", "inc r16 (40+r)");
    T("alu", 4, FC_DEFINED, 500, "40 +r", "inc r32 (40+r)");
    T("alu", 4, FC_DEFINED, 500, "ff M0", "inc m32");
    T("alu", 1, FC_DEFINED, 2000, "fe R1", "dec r/m8");
    T("alu", 2, FC_DEFINED, 2000, "66 ff R1", "dec r/m16");
    T("alu", 4, FC_DEFINED, 2000, "ff R1", "dec r/m32");
    T("alu", 2, FC_DEFINED, 500, "66 48 +r", "dec r16 (48+r)");
    T("alu", 4, FC_DEFINED, 500, "48 +r", "dec r32 (48+r)");
    T("alu", 1, FC_DEFINED, 500, "fe M1", "dec m8");
    T("alu", 1, FC_DEFINED, 2000, "f6 R3", "neg r/m8");
    T("alu", 2, FC_DEFINED, 2000, "66 f7 R3", "neg r/m16");
    T("alu", 4, FC_DEFINED, 2000, "f7 R3", "neg r/m32");
    T("alu", 4, FC_DEFINED, 500, "f7 M3", "neg m32");
    T("alu", 1, FC_DEFINED, 1000, "f6 R2", "not r/m8");
    T("alu", 2, FC_DEFINED, 1000, "66 f7 R2", "not r/m16");
    T("alu", 4, FC_DEFINED, 1000, "f7 R2", "not r/m32");
    T("alu", 2, FC_DEFINED, 500, "66 f7 M2", "not m16");

    /* ---- shifts and rotates: by 1, by CL, by imm8 ---- */
    static const char *const sh[8] = {"rol", "ror", "rcl", "rcr", "shl", "shr", NULL, "sar"};
    for (unsigned n = 0; n < 8; n++) {
        if (!sh[n]) continue; /* /6 (SAL alias) is not documented */
        diff_fclass fc = n < 4 ? FC_ROT : n == 7 ? FC_SAR : FC_SHIFT;
        static const unsigned szs[3] = {1, 2, 4};
        for (unsigned k = 0; k < 3; k++) {
            unsigned s = szs[k];
            const char *pre = s == 2 ? "66 " : "";
            unsigned ob = s == 1 ? 0 : 1;
            diff_insn *t;
            snprintf(enc, sizeof enc, "%s%02x R%u", pre, 0xd0 + ob, n);
            t = T("shift", s, fc, 1000, enc, "%s r/m%u,1", sh[n], s * 8);
            t->count = CNT_ONE;
            snprintf(enc, sizeof enc, "%s%02x R%u", pre, 0xd2 + ob, n);
            t = T("shift", s, fc, 4096, enc, "%s r/m%u,cl", sh[n], s * 8);
            t->count = CNT_CL;
            t->gen = G_COUNT;
            snprintf(enc, sizeof enc, "%s%02x R%u cb", pre, 0xc0 + ob, n);
            t = T("shift", s, fc, 4096, enc, "%s r/m%u,imm8", sh[n], s * 8);
        }
        diff_insn *t;
        snprintf(enc, sizeof enc, "d3 M%u", n);
        t = T("shift", 4, fc, 1024, enc, "%s m32,cl", sh[n]);
        t->count = CNT_CL;
        t->gen = G_COUNT;
        snprintf(enc, sizeof enc, "c0 M%u cb", n);
        T("shift", 1, fc, 1024, enc, "%s m8,imm8", sh[n]);
    }
    /* shl_shr marks the SHL/SHR templates (CF undefined for count >= bits). */
    for (unsigned i = 0; i < ntable; i++)
        if (!strncmp(table[i].name, "shl ", 4) || !strncmp(table[i].name, "shr ", 4))
            table[i].shl_shr = 1;

    /* ---- SHLD / SHRD ---- */
    static const char *const shd[2] = {"shld", "shrd"};
    for (unsigned i = 0; i < 2; i++) {
        unsigned op = i ? 0xac : 0xa4;
        diff_insn *t;
        snprintf(enc, sizeof enc, "66 0f %02x RR cb", op);
        T("shld", 2, FC_SHD, 4096, enc, "%s r/m16,r16,imm8", shd[i]);
        snprintf(enc, sizeof enc, "0f %02x RR cb", op);
        T("shld", 4, FC_SHD, 4096, enc, "%s r/m32,r32,imm8", shd[i]);
        snprintf(enc, sizeof enc, "66 0f %02x RR", op + 1);
        t = T("shld", 2, FC_SHD, 4096, enc, "%s r/m16,r16,cl", shd[i]);
        t->count = CNT_CL;
        t->gen = G_COUNT;
        snprintf(enc, sizeof enc, "0f %02x RR", op + 1);
        t = T("shld", 4, FC_SHD, 4096, enc, "%s r/m32,r32,cl", shd[i]);
        t->count = CNT_CL;
        t->gen = G_COUNT;
        snprintf(enc, sizeof enc, "0f %02x MR", op + 1);
        t = T("shld", 4, FC_SHD, 1024, enc, "%s m32,r32,cl", shd[i]);
        t->count = CNT_CL;
        t->gen = G_COUNT;
    }

    /* ---- MUL IMUL DIV IDIV ---- */
    static const char *const md[4] = {"mul", "imul", "div", "idiv"};
    for (unsigned i = 0; i < 4; i++) {
        diff_fclass fc = i < 2 ? FC_MUL : FC_DIV;
        diff_gen g = i < 2 ? G_GENERIC : G_DIV;
        diff_insn *t;
        snprintf(enc, sizeof enc, "f6 R%u", 4 + i);
        t = T("muldiv", 1, fc, 3000, enc, "%s r/m8", md[i]);
        t->gen = g;
        snprintf(enc, sizeof enc, "66 f7 R%u", 4 + i);
        t = T("muldiv", 2, fc, 3000, enc, "%s r/m16", md[i]);
        t->gen = g;
        snprintf(enc, sizeof enc, "f7 R%u", 4 + i);
        t = T("muldiv", 4, fc, 3000, enc, "%s r/m32", md[i]);
        t->gen = g;
        snprintf(enc, sizeof enc, "f7 M%u", 4 + i);
        t = T("muldiv", 4, fc, 500, enc, "%s m32", md[i]);
        t->gen = g;
    }
    T("muldiv", 2, FC_MUL, 2000, "66 0f af RR", "imul r16,r/m16");
    T("muldiv", 4, FC_MUL, 2000, "0f af RR", "imul r32,r/m32");
    T("muldiv", 4, FC_MUL, 500, "0f af MR", "imul r32,m32");
    T("muldiv", 2, FC_MUL, 1000, "66 6b RR ib", "imul r16,r/m16,imm8");
    T("muldiv", 4, FC_MUL, 1000, "6b RR ib", "imul r32,r/m32,imm8");
    T("muldiv", 2, FC_MUL, 1000, "66 69 RR iw", "imul r16,r/m16,imm16");
    T("muldiv", 4, FC_MUL, 1000, "69 RR id", "imul r32,r/m32,imm32");

    /* ---- BCD ---- */
    diff_insn *t;
    t = T("bcd", 1, FC_DAA, 2048, "27", "daa");
    t->gen = G_BCD;
    t = T("bcd", 1, FC_DAA, 2048, "2f", "das");
    t->gen = G_BCD;
    t = T("bcd", 1, FC_AAA, 2048, "37", "aaa");
    t->gen = G_BCD;
    t = T("bcd", 1, FC_AAA, 2048, "3f", "aas");
    t->gen = G_BCD;
    t = T("bcd", 1, FC_AAM, 2048, "d4 0a", "aam");
    t->gen = G_BCD;
    t = T("bcd", 1, FC_AAM, 2048, "d5 0a", "aad");
    t->gen = G_BCD;
    t = T("bcd", 1, FC_AAM, 2048, "d4 ib", "aam imm8");
    t->gen = G_BCD;
    t = T("bcd", 1, FC_AAM, 2048, "d5 ib", "aad imm8");
    t->gen = G_BCD;

    /* ---- bit test / scan ---- */
    static const char *const bt[4] = {"bt", "bts", "btr", "btc"};
    for (unsigned i = 0; i < 4; i++) {
        unsigned op = 0xa3 + 8 * i;
        snprintf(enc, sizeof enc, "66 0f %02x RR", op);
        T("bit", 2, FC_BT, 2000, enc, "%s r/m16,r16", bt[i]);
        snprintf(enc, sizeof enc, "0f %02x RR", op);
        T("bit", 4, FC_BT, 2000, enc, "%s r/m32,r32", bt[i]);
        snprintf(enc, sizeof enc, "66 0f ba R%u ib", 4 + i);
        T("bit", 2, FC_BT, 1000, enc, "%s r/m16,imm8", bt[i]);
        snprintf(enc, sizeof enc, "0f ba R%u ib", 4 + i);
        T("bit", 4, FC_BT, 1000, enc, "%s r/m32,imm8", bt[i]);
        snprintf(enc, sizeof enc, "0f %02x MR", op);
        t = T("bit", 4, FC_BT, 1000, enc, "%s m32,r32", bt[i]);
        t->gen = G_BTMEM;
        snprintf(enc, sizeof enc, "66 0f %02x MR", op);
        t = T("bit", 2, FC_BT, 1000, enc, "%s m16,r16", bt[i]);
        t->gen = G_BTMEM;
        snprintf(enc, sizeof enc, "0f ba M%u ib", 4 + i);
        T("bit", 4, FC_BT, 500, enc, "%s m32,imm8", bt[i]);
    }
    static const char *const bs[2] = {"bsf", "bsr"};
    for (unsigned i = 0; i < 2; i++) {
        unsigned op = 0xbc + i;
        snprintf(enc, sizeof enc, "66 0f %02x RR", op);
        t = T("bit", 2, FC_BSX, 2000, enc, "%s r16,r/m16", bs[i]);
        t->gen = G_BITSCAN;
        snprintf(enc, sizeof enc, "0f %02x RR", op);
        t = T("bit", 4, FC_BSX, 2000, enc, "%s r32,r/m32", bs[i]);
        t->gen = G_BITSCAN;
        snprintf(enc, sizeof enc, "0f %02x MR", op);
        t = T("bit", 4, FC_BSX, 500, enc, "%s r32,m32", bs[i]);
        t->gen = G_BITSCAN;
    }
    for (unsigned i = 0; i < ntable; i++)
        if (table[i].fclass == FC_BSX) table[i].rm_src = 1;

    /* ---- BSWAP CMPXCHG XADD ---- */
    T("atomic", 4, FC_DEFINED, 1000, "0f c8 +r", "bswap r32");
    t = T("atomic", 1, FC_DEFINED, 2000, "0f b0 RR", "cmpxchg r/m8,r8");
    t->gen = G_CMPXCHG;
    t = T("atomic", 2, FC_DEFINED, 2000, "66 0f b1 RR", "cmpxchg r/m16,r16");
    t->gen = G_CMPXCHG;
    t = T("atomic", 4, FC_DEFINED, 2000, "0f b1 RR", "cmpxchg r/m32,r32");
    t->gen = G_CMPXCHG;
    t = T("atomic", 4, FC_DEFINED, 1000, "0f b1 MR", "cmpxchg m32,r32");
    t->gen = G_CMPXCHG;
    t = T("atomic", 1, FC_DEFINED, 500, "0f b0 MR", "cmpxchg m8,r8");
    t->gen = G_CMPXCHG;
    T("atomic", 1, FC_DEFINED, 2000, "0f c0 RR", "xadd r/m8,r8");
    T("atomic", 2, FC_DEFINED, 2000, "66 0f c1 RR", "xadd r/m16,r16");
    T("atomic", 4, FC_DEFINED, 2000, "0f c1 RR", "xadd r/m32,r32");
    T("atomic", 4, FC_DEFINED, 500, "0f c1 MR", "xadd m32,r32");

    /* ---- flags, conversions, moves, exchanges, conditions ---- */
    T("misc", 1, FC_DEFINED, 500, "9f", "lahf");
    T("misc", 1, FC_DEFINED, 500, "9e", "sahf");
    T("misc", 4, FC_DEFINED, 100, "f5", "cmc");
    T("misc", 4, FC_DEFINED, 100, "f8", "clc");
    T("misc", 4, FC_DEFINED, 100, "f9", "stc");
    T("misc", 4, FC_DEFINED, 100, "fc", "cld");
    T("misc", 4, FC_DEFINED, 100, "fd", "std");
    T("misc", 2, FC_DEFINED, 500, "66 98", "cbw");
    T("misc", 4, FC_DEFINED, 500, "98", "cwde");
    T("misc", 2, FC_DEFINED, 500, "66 99", "cwd");
    T("misc", 4, FC_DEFINED, 500, "99", "cdq");
    T("misc", 1, FC_DEFINED, 500, "86 RR", "xchg r/m8,r8");
    T("misc", 2, FC_DEFINED, 500, "66 87 RR", "xchg r/m16,r16");
    T("misc", 4, FC_DEFINED, 500, "87 RR", "xchg r/m32,r32");
    T("misc", 2, FC_DEFINED, 200, "66 90 +r", "xchg ax,r16");
    T("misc", 4, FC_DEFINED, 200, "90 +r", "xchg eax,r32");
    T("misc", 4, FC_DEFINED, 300, "87 MR", "xchg m32,r32");
    t = T("misc", 4, FC_DEFINED, 500, "0f b6 RR", "movzx r32,r/m8");
    t->reg_byte = 0;
    t->rm_byte = 1;
    t = T("misc", 2, FC_DEFINED, 500, "66 0f b6 RR", "movzx r16,r/m8");
    t->reg_byte = 0;
    t->rm_byte = 1;
    T("misc", 4, FC_DEFINED, 500, "0f b7 RR", "movzx r32,r/m16");
    t = T("misc", 4, FC_DEFINED, 500, "0f be RR", "movsx r32,r/m8");
    t->reg_byte = 0;
    t->rm_byte = 1;
    t = T("misc", 2, FC_DEFINED, 500, "66 0f be RR", "movsx r16,r/m8");
    t->reg_byte = 0;
    t->rm_byte = 1;
    T("misc", 4, FC_DEFINED, 500, "0f bf RR", "movsx r32,r/m16");
    T("misc", 4, FC_DEFINED, 300, "0f be MR", "movsx r32,m8");
    T("misc", 1, FC_DEFINED, 300, "88 RR", "mov r/m8,r8");
    T("misc", 2, FC_DEFINED, 300, "66 8b RR", "mov r16,r/m16");
    T("misc", 4, FC_DEFINED, 300, "89 RR", "mov r/m32,r32");
    T("misc", 1, FC_DEFINED, 300, "b0 +r ib", "mov r8,imm8");
    T("misc", 4, FC_DEFINED, 300, "b8 +r id", "mov r32,imm32");
    T("misc", 4, FC_DEFINED, 1000, "8d LEA", "lea r32,m (32-bit addressing)");
    T("misc", 2, FC_DEFINED, 1000, "66 8d LEA", "lea r16,m (32-bit addressing)");
    T("misc", 4, FC_DEFINED, 1000, "67 8d LEA", "lea r32,m (16-bit addressing)");
    for (unsigned cc = 0; cc < 16; cc++) {
        snprintf(enc, sizeof enc, "0f %02x R0", 0x90 + cc);
        T("cond", 1, FC_DEFINED, 300, enc, "set%s r/m8", cc_names[cc]);
    }
    /* A taken jump skips `lea edi,[edi+1]` (8d 7f 01), which has no flags. */
    for (unsigned cc = 0; cc < 16; cc++) {
        snprintf(enc, sizeof enc, "%02x 03 8d 7f 01", 0x70 + cc);
        T("cond", 4, FC_DEFINED, 200, enc, "j%s rel8", cc_names[cc]);
        snprintf(enc, sizeof enc, "0f %02x 03 00 00 00 8d 7f 01", 0x80 + cc);
        T("cond", 4, FC_DEFINED, 200, enc, "j%s rel32", cc_names[cc]);
    }
    t = T("cond", 4, FC_DEFINED, 300, "e3 03 8d 7f 01", "jecxz rel8");
    t->gen = G_COUNTREG;
    t = T("cond", 4, FC_DEFINED, 300, "67 e3 03 8d 7f 01", "jcxz rel8 (a16)");
    t->gen = G_COUNTREG;
    t = T("cond", 4, FC_DEFINED, 300, "e2 03 8d 7f 01", "loop rel8");
    t->gen = G_COUNTREG;
    t = T("cond", 4, FC_DEFINED, 300, "67 e2 03 8d 7f 01", "loop rel8 (a16, cx)");
    t->gen = G_COUNTREG;
    t = T("cond", 4, FC_DEFINED, 300, "e1 03 8d 7f 01", "loope rel8");
    t->gen = G_COUNTREG;
    t = T("cond", 4, FC_DEFINED, 300, "e0 03 8d 7f 01", "loopne rel8");
    t->gen = G_COUNTREG;

    /* ---- lazy-flags chains: a flag-setting instruction, then a reader ---- */
    static const struct {
        const char *enc, *name;
        unsigned size;
        diff_fclass fc;
        diff_count cnt;
    } pre[] = {
        {"01 RR", "add r/m32,r32", 4, FC_DEFINED, CNT_NONE},
        {"00 RR", "add r/m8,r8", 1, FC_DEFINED, CNT_NONE},
        {"11 RR", "adc r/m32,r32", 4, FC_DEFINED, CNT_NONE},
        {"66 29 RR", "sub r/m16,r16", 2, FC_DEFINED, CNT_NONE},
        {"29 RR", "sub r/m32,r32", 4, FC_DEFINED, CNT_NONE},
        {"18 RR", "sbb r/m8,r8", 1, FC_DEFINED, CNT_NONE},
        {"39 RR", "cmp r/m32,r32", 4, FC_DEFINED, CNT_NONE},
        {"38 RR", "cmp r/m8,r8", 1, FC_DEFINED, CNT_NONE},
        {"21 RR", "and r/m32,r32", 4, FC_LOGIC, CNT_NONE},
        {"08 RR", "or r/m8,r8", 1, FC_LOGIC, CNT_NONE},
        {"66 31 RR", "xor r/m16,r16", 2, FC_LOGIC, CNT_NONE},
        {"85 RR", "test r/m32,r32", 4, FC_LOGIC, CNT_NONE},
        {"40 +r", "inc r32", 4, FC_DEFINED, CNT_NONE},
        {"fe R1", "dec r/m8", 1, FC_DEFINED, CNT_NONE},
        {"f7 R3", "neg r/m32", 4, FC_DEFINED, CNT_NONE},
        {"66 f7 R3", "neg r/m16", 2, FC_DEFINED, CNT_NONE},
        {"d3 R4", "shl r/m32,cl", 4, FC_SHIFT, CNT_CL},
        {"d2 R5", "shr r/m8,cl", 1, FC_SHIFT, CNT_CL},
        {"66 d3 R7", "sar r/m16,cl", 2, FC_SAR, CNT_CL},
        {"d3 R0", "rol r/m32,cl", 4, FC_ROT, CNT_CL},
        {"d1 R3", "rcr r/m32,1", 4, FC_ROT, CNT_ONE},
        {"0f af RR", "imul r32,r/m32", 4, FC_MUL, CNT_NONE},
        {"f6 R4", "mul r/m8", 1, FC_MUL, CNT_NONE},
        {"0f a3 RR", "bt r/m32,r32", 4, FC_BT, CNT_NONE},
        {"0f a5 RR", "shld r/m32,r32,cl", 4, FC_SHD, CNT_CL},
    };
    for (unsigned i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        t = T("chain", pre[i].size, pre[i].fc, 3000, pre[i].enc, "%s; then *", pre[i].name);
        t->chain = 1;
        t->count = (uint8_t)pre[i].cnt;
        if (pre[i].cnt == CNT_CL) t->gen = G_COUNT;
        if (pre[i].fc == FC_SHIFT) t->shl_shr = 1;
    }
}

#define A DIFF_ARITH
const diff_second diff_seconds[] = {
    {"inc ecx", 1, {0x41}, -1, A & ~DIFF_CF, 0, 0},
    {"dec ecx", 1, {0x49}, -1, A & ~DIFF_CF, 0, 0},
    {"inc cl", 2, {0xfe, 0xc1}, -1, A & ~DIFF_CF, 0, 0},
    {"dec dx", 2, {0x66, 0x4a}, -1, A & ~DIFF_CF, 0, 0},
    {"adc ecx,edx", 2, {0x11, 0xd1}, -1, A, 0, DIFF_CF},
    {"sbb cl,dl", 2, {0x18, 0xd1}, -1, A, 0, DIFF_CF},
    {"rcl ecx,1", 2, {0xd1, 0xd1}, -1, DIFF_CF | DIFF_OF, 0, DIFF_CF},
    {"rcr cx,1", 3, {0x66, 0xd1, 0xd9}, -1, DIFF_CF | DIFF_OF, 0, DIFF_CF},
    {"rol ecx,1", 2, {0xd1, 0xc1}, -1, DIFF_CF | DIFF_OF, 0, 0},
    {"ror dl,1", 2, {0xd0, 0xca}, -1, DIFF_CF | DIFF_OF, 0, 0},
    {"shl ecx,0", 3, {0xc1, 0xe1, 0x00}, -1, 0, 0, 0},
    {"shrd ecx,edx,0", 4, {0x0f, 0xac, 0xd1, 0x00}, -1, 0, 0, 0},
    {"setcc cl", 3, {0x0f, 0x90, 0xc1}, 1, 0, 0, 0},
    {"jcc rel8 over lea edi,[edi+1]", 5, {0x70, 0x03, 0x8d, 0x7f, 0x01}, 0, 0, 0, 0},
    {"loope over lea", 5, {0xe1, 0x03, 0x8d, 0x7f, 0x01}, -1, 0, 0, DIFF_ZF},
    {"lahf", 1, {0x9f}, -1, 0, 0, A & ~DIFF_OF},
    {"sahf", 1, {0x9e}, -1, A & ~DIFF_OF, 0, 0},
    {"cmc", 1, {0xf5}, -1, DIFF_CF, 0, DIFF_CF},
    {"bt ecx,edx", 3, {0x0f, 0xa3, 0xd1}, -1, DIFF_CF, DIFF_OF | DIFF_SF | DIFF_AF | DIFF_PF, 0},
    {"daa", 1, {0x27}, -1, A & ~DIFF_OF, DIFF_OF, DIFF_AF | DIFF_CF},
    {"aas",
     1,
     {0x3f},
     -1,
     DIFF_AF | DIFF_CF,
     DIFF_OF | DIFF_SF | DIFF_ZF | DIFF_PF,
     DIFF_AF | DIFF_CF},
};
#undef A
const unsigned diff_nseconds = sizeof diff_seconds / sizeof diff_seconds[0];

unsigned diff_table_build(const diff_insn **out)
{
    if (!ntable) build();
    *out = table;
    return ntable;
}

uint32_t diff_table_hash(void)
{
    const diff_insn *t;
    unsigned n = diff_table_build(&t);
    uint32_t h = 2166136261u;
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *p = (const uint8_t *)&t[i];
        for (size_t k = 0; k < sizeof t[i]; k++)
            h = (h ^ p[k]) * 16777619u;
    }
    return h;
}

/* ------------------------------------------------------------------------
 * The undefined flags, from the Intel SDM vol. 2 instruction pages ("Flags
 * Affected"); README.md has the table with the pages. */

uint16_t diff_cc_reads(unsigned cc)
{
    static const uint16_t r[8] = {DIFF_OF, DIFF_CF, DIFF_ZF,           DIFF_CF | DIFF_ZF,
                                  DIFF_SF, DIFF_PF, DIFF_SF | DIFF_OF, DIFF_ZF | DIFF_SF | DIFF_OF};
    return r[(cc >> 1) & 7];
}

uint16_t diff_second_reads(const diff_second *s2, const uint8_t *bytes)
{
    if (s2->cc_at >= 0) return diff_cc_reads(bytes[s2->cc_at] & 15);
    return s2->reads;
}

static unsigned case_count(const diff_insn *t, const diff_record *r)
{
    switch (t->count) {
    case CNT_CL: return r->in_regs[1] & 0xff;
    case CNT_IMM: return r->code[t->imm];
    case CNT_ONE: return 1;
    default: return 0;
    }
}

static uint32_t mem_operand(const diff_record *r, unsigned size)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint32_t)r->mem_in[8 + i] << (8 * i);
    return v;
}

static void undef_dest(diff_undef *u, const diff_insn *t, unsigned regno)
{
    unsigned reg;
    diff_op_mask(t->size, regno, &reg, &u->mask);
    u->reg = (int)reg;
}

diff_undef diff_undefined_first(const diff_insn *t, const diff_record *r)
{
    diff_undef u = {0, -1, 0, 0};
    unsigned bits = t->size * 8u;
    unsigned m = case_count(t, r) & 31; /* the masked count: COUNT AND 1FH */
    unsigned rm = t->modrm >= 0 ? r->code[t->modrm] & 7u : 0;
    unsigned reg = t->modrm >= 0 ? (r->code[t->modrm] >> 3) & 7u : 0;
    switch ((diff_fclass)t->fclass) {
    case FC_DEFINED: break;
    case FC_LOGIC: u.flags = DIFF_AF; break;
    case FC_SHIFT:
    case FC_SAR:
        if (m == 0) break; /* "If the count is 0, the flags are not affected" */
        u.flags = DIFF_AF;
        if (m != 1) u.flags |= DIFF_OF;
        if (t->fclass == FC_SHIFT && t->shl_shr && m >= bits) u.flags |= DIFF_CF;
        break;
    case FC_ROT:
        if (m > 1) u.flags = DIFF_OF;
        break;
    case FC_SHD:
        if (m == 0) break;
        if (m > bits) { /* "the result (destination) and flags are undefined" */
            u.flags = DIFF_ARITH;
            if (t->mem)
                u.mem = 1;
            else
                undef_dest(&u, t, rm);
            break;
        }
        u.flags = DIFF_AF | (m != 1 ? DIFF_OF : 0);
        break;
    case FC_MUL: u.flags = DIFF_SF | DIFF_ZF | DIFF_AF | DIFF_PF; break;
    case FC_DIV: u.flags = DIFF_ARITH; break;
    case FC_BT: u.flags = DIFF_OF | DIFF_SF | DIFF_AF | DIFF_PF; break;
    case FC_BSX: {
        u.flags = DIFF_ARITH & ~DIFF_ZF;
        uint32_t src = t->mem ? mem_operand(r, t->size) : diff_get_op(r->in_regs, t->size, rm);
        if (src == 0) undef_dest(&u, t, reg); /* "the content of the destination is undefined" */
        break;
    }
    case FC_AAA: u.flags = DIFF_OF | DIFF_SF | DIFF_ZF | DIFF_PF; break;
    case FC_AAM: u.flags = DIFF_OF | DIFF_AF | DIFF_CF; break;
    case FC_DAA: u.flags = DIFF_OF; break;
    }
    return u;
}

diff_undef diff_undefined(const diff_insn *t, const diff_record *r)
{
    diff_undef u = diff_undefined_first(t, r);
    if (!t->chain) return u;
    const diff_second *s2 = &diff_seconds[r->code[DIFF_CHAIN_SLOT] % diff_nseconds];
    uint32_t kept = DIFF_ARITH & ~s2->writes & ~s2->undef;
    u.flags = s2->undef | (u.flags & kept);
    return u;
}

/* ------------------------------------------------------------------------
 * Reading a record file. */

static int field_ok(const char *s, size_t n)
{
    return memchr(s, 0, n) != NULL && s[0] != 0;
}

int diff_read_file(const char *path, diff_header *h, diff_record **recs, char *err, size_t errlen)
{
    *recs = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    const diff_insn *t;
    unsigned n = diff_table_build(&t);
    if (fread(h, sizeof *h, 1, f) != 1 || memcmp(h->magic, DIFF_MAGIC, 8) ||
        h->record_size != sizeof(diff_record) || !field_ok(h->reference, sizeof h->reference) ||
        !field_ok(h->cases, sizeof h->cases) || !memchr(h->cpu, 0, sizeof h->cpu)) {
        snprintf(err, errlen, "%s is not a diffgen record file of this version", path);
        fclose(f);
        return -1;
    }
    if (h->templates != n || h->table_hash != diff_table_hash()) {
        snprintf(err, errlen, "%s was written for another template table: rerun the generator",
                 path);
        fclose(f);
        return -1;
    }
    uint64_t total = 0;
    for (unsigned i = 0; i < n && h->percent >= 1 && h->percent <= 10000; i++)
        total += diff_case_count(&t[i], h->percent);
    if (h->records > total) {
        snprintf(err, errlen, "%s: bad scale (%u%%) or record count (%u)", path, h->percent,
                 h->records);
        fclose(f);
        return -1;
    }
    diff_record *r = malloc((size_t)h->records * sizeof *r + 1);
    if (!r || fread(r, sizeof *r, h->records, f) != h->records || fgetc(f) != EOF) {
        snprintf(err, errlen, "%s is truncated or has trailing bytes", path);
        free(r);
        fclose(f);
        return -1;
    }
    fclose(f);
    for (uint32_t i = 0; i < h->records; i++) {
        const diff_record *p = &r[i];
        if (p->tmpl >= n || p->len == 0 || p->len > 16 ||
            p->idx >= diff_case_count(&t[p->tmpl], h->percent) ||
            (i &&
             (p->tmpl < r[i - 1].tmpl || (p->tmpl == r[i - 1].tmpl && p->idx <= r[i - 1].idx)))) {
            snprintf(err, errlen, "%s: record %u is corrupt or out of order", path, i);
            free(r);
            return -1;
        }
    }
    *recs = r;
    return 0;
}
