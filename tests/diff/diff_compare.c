/* diff_compare: checks that two references agree on every case both ran.
 *
 *   diff_compare [--defined] [-v] SUBSET.bin FULL.bin
 *
 * Every record of SUBSET must have a record of the same (template, case)
 * in FULL, both files written for the same table, seed and scale.  By
 * default the two records must be byte-identical (diffgen64 against the
 * 32-bit diffgen on one host: one CPU, so undefined flags and results
 * agree too).  --defined compares the inputs byte for byte but of the
 * outputs only what the SDM defines (diff_undefined), as test_diff does:
 * for a reference that is another implementation (qemu-i386 against the
 * host).  Exit 0 when all agree, 1 on a difference, 2 on bad usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_table.h"

#define MAX_REPORT 8
#define COMPARED   (DIFF_ARITH | 0x400u) /* and DF */

static const char *const regn[8] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};

/* The inputs: everything generated before the instruction ran. */
static int same_inputs(const diff_record *a, const diff_record *b)
{
    return a->tmpl == b->tmpl && a->idx == b->idx && a->len == b->len &&
           !memcmp(a->code, b->code, sizeof a->code) &&
           !memcmp(a->in_regs, b->in_regs, sizeof a->in_regs) && a->in_flags == b->in_flags &&
           !memcmp(a->mem_in, b->mem_in, sizeof a->mem_in);
}

/* NULL if the defined outputs agree, else what differs. */
static const char *defined_differs(const diff_insn *t, const diff_record *a, const diff_record *b,
                                   uint32_t *undef_only)
{
    if (a->status != b->status) return "#DE";
    if (a->status == DIFF_ST_DE) return NULL;
    diff_undef u = diff_undefined(t, a);
    for (int i = 0; i < 8; i++) {
        uint32_t d = a->out_regs[i] ^ b->out_regs[i];
        if (i == u.reg) d &= ~u.mask;
        if (d) return regn[i];
    }
    if (!u.mem && memcmp(a->mem_out, b->mem_out, DIFF_WIN)) return "memory";
    if ((a->out_flags ^ b->out_flags) & COMPARED & ~u.flags) return "flags";
    *undef_only += memcmp(a, b, sizeof *a) != 0;
    return NULL;
}

static void print_pair(const diff_insn *t, const diff_record *a, const diff_header *ha,
                       const diff_record *b, const diff_header *hb, const char *what)
{
    fprintf(stderr, "DIFFERENT %s, case %u [", t->name, a->idx);
    for (unsigned i = 0; i < a->len; i++)
        fprintf(stderr, "%s%02x", i ? " " : "", a->code[i]);
    fprintf(stderr, "]: %s\n", what);
    const diff_record *r[2] = {a, b};
    const diff_header *h[2] = {ha, hb};
    for (int k = 0; k < 2; k++) {
        fprintf(stderr, "  %-9s in eflags=%08x", h[k]->reference, r[k]->in_flags);
        for (int i = 0; i < 8; i++)
            if (i != 4) fprintf(stderr, " %s=%08x", regn[i], r[k]->in_regs[i]);
        fprintf(stderr, "\n  %-9s out%s eflags=%08x", "", r[k]->status ? " #DE" : "",
                r[k]->out_flags);
        for (int i = 0; i < 8; i++)
            if (i != 4) fprintf(stderr, " %s=%08x", regn[i], r[k]->out_regs[i]);
        fprintf(stderr, " mem:");
        for (int i = 0; i < DIFF_WIN; i++)
            fprintf(stderr, "%02x", r[k]->mem_out[i]);
        fprintf(stderr, "\n");
    }
}

int main(int argc, char **argv)
{
    int defined = 0, verbose = 0;
    const char *path[2] = {NULL, NULL};
    int np = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--defined"))
            defined = 1;
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (np < 2 && argv[i][0] != '-')
            path[np++] = argv[i];
        else
            np = 3;
    }
    if (np != 2) {
        fprintf(stderr, "usage: diff_compare [--defined] [-v] SUBSET.bin FULL.bin\n");
        return 2;
    }
    diff_header h[2];
    diff_record *rec[2];
    char err[256];
    for (int k = 0; k < 2; k++)
        if (diff_read_file(path[k], &h[k], &rec[k], err, sizeof err)) {
            fprintf(stderr, "diff_compare: %s\n", err);
            return 1;
        }
    if (h[0].seed != h[1].seed || h[0].percent != h[1].percent) {
        fprintf(stderr, "diff_compare: %s (seed %u, %u%%) and %s (seed %u, %u%%) ran other cases\n",
                path[0], h[0].seed, h[0].percent, path[1], h[1].seed, h[1].percent);
        return 1;
    }
    if (h[0].records == 0) {
        fprintf(stderr, "diff_compare: %s holds no case: nothing to compare\n", path[0]);
        return 1;
    }
    const diff_insn *table;
    unsigned ntable = diff_table_build(&table);
    uint32_t *undef_only = calloc(ntable, sizeof *undef_only);
    uint32_t *compared = calloc(ntable, sizeof *compared);
    if (!undef_only || !compared) return 1;

    /* Both files are in (template, case) order: one walk. */
    unsigned long bad = 0, missing = 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < h[0].records; i++) {
        const diff_record *a = &rec[0][i];
        while (j < h[1].records &&
               (rec[1][j].tmpl < a->tmpl || (rec[1][j].tmpl == a->tmpl && rec[1][j].idx < a->idx)))
            j++;
        const diff_insn *t = &table[a->tmpl];
        if (j == h[1].records || rec[1][j].tmpl != a->tmpl || rec[1][j].idx != a->idx) {
            if (missing++ < MAX_REPORT)
                fprintf(stderr, "diff_compare: %s, case %u is in %s, not in %s\n", t->name, a->idx,
                        path[0], path[1]);
            continue;
        }
        const diff_record *b = &rec[1][j];
        compared[a->tmpl]++;
        const char *what;
        if (!same_inputs(a, b))
            what = "inputs (not the same case)";
        else if (defined)
            what = defined_differs(t, a, b, &undef_only[a->tmpl]);
        else
            what = memcmp(a, b, sizeof *a) ? "outputs" : NULL;
        if (what && bad++ < MAX_REPORT) print_pair(t, a, &h[0], b, &h[1], what);
    }
    if (verbose)
        for (unsigned k = 0; k < ntable; k++) {
            if (!compared[k]) continue;
            printf("# %s: %u cases compared", table[k].name, compared[k]);
            if (defined) printf(", %u differ only in what is undefined", undef_only[k]);
            printf("\n");
        }
    unsigned long undef_total = 0;
    for (unsigned k = 0; k < ntable; k++)
        undef_total += undef_only[k];
    printf("diff_compare: %u cases of %s (%s) against %s (%s)%s: %lu differ, %lu missing",
           h[0].records, h[0].reference, h[0].cpu, h[1].reference, h[1].cpu,
           defined ? ", defined outputs" : ", byte for byte", bad, missing);
    if (defined) printf("; %lu differ only in what the SDM leaves undefined", undef_total);
    printf("; %lu cases of %s not in %s\n", (unsigned long)h[1].records - (h[0].records - missing),
           path[1], path[0]);
    free(undef_only);
    free(compared);
    free(rec[0]);
    free(rec[1]);
    return bad || missing ? 1 : 0;
}
