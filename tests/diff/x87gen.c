/* The x87 differential test, host side: runs every template's cases on the
 * host's x87 (a 64-bit process: the x87 works in long mode, and the
 * templates' bytes mean the same there, [EBX] being [RBX]) and writes what
 * it did.  Each case: FRSTOR the input image, the instruction with RBX at
 * the memory window, FNSAVE (no-wait: a pending unmasked exception is
 * recorded, never delivered).
 *
 *   x87gen SEED OUT.bin [PERCENT] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "x87_table.h"

#if !defined(__x86_64__)
int main(void)
{
    fprintf(stderr, "x87gen: needs an x86-64 host\n");
    return 2;
}
#else

/* x87_run(code, in_image, mem, out_image, eax): RDI RSI RDX RCX R8. */
void x87_run(const void *code, const void *in, void *mem, void *out, uint32_t *eax);
__asm__(".text\n"
        ".globl x87_run\n"
        "x87_run:\n"
        "  push %rbx\n"
        "  push %rcx\n"
        "  push %r8\n"
        "  mov %rdx, %rbx\n"
        "  mov (%r8), %eax\n"
        "  frstor (%rsi)\n"
        "  call *%rdi\n"
        "  pop %r8\n"
        "  pop %rcx\n"
        "  fnsave (%rcx)\n"
        "  mov %eax, (%r8)\n"
        "  pop %rbx\n"
        "  ret\n");

static const char *current;
static void on_signal(int sig)
{
    fprintf(stderr, "x87gen: signal %d in template %s\n", sig, current ? current : "?");
    _exit(3);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: x87gen SEED OUT.bin [PERCENT]\n");
        return 2;
    }
    uint32_t seed = (uint32_t)strtoul(argv[1], NULL, 0);
    unsigned percent = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 100;
    signal(SIGFPE, on_signal);
    signal(SIGSEGV, on_signal);
    signal(SIGILL, on_signal);
    uint8_t *code =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        perror("x87gen: mmap");
        return 1;
    }
    unsigned nt;
    const x87_tmpl *t = x87_table(&nt);
    FILE *f = fopen(argv[2], "wb");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    x87_header h = {X87_MAGIC, X87_VERSION, seed, percent, nt, 0, x87_table_hash()};
    fwrite(&h, sizeof h, 1, f);
    static uint8_t mem[X87_MEM] __attribute__((aligned(16)));
    static uint8_t out[108] __attribute__((aligned(16)));
    uint32_t total = 0;
    for (unsigned ti = 0; ti < nt; ti++) {
        current = t[ti].name;
        unsigned n = (unsigned)((uint64_t)t[ti].count * percent / 100);
        if (n == 0) n = 1;
        for (unsigned k = 0; k < n; k++) {
            x87_record r;
            x87_make_case(&t[ti], ti, seed, k, &r);
            memcpy(code, r.code, r.len);
            code[r.len] = 0xc3; /* ret */
            memcpy(mem, r.mem_in, X87_MEM);
            uint32_t eax = r.eax_in;
            x87_run(code, r.in, mem, out, &eax);
            r.eax_out = eax;
            memcpy(r.out, out, 108);
            memcpy(r.mem_out, mem, X87_MEM);
            fwrite(&r, sizeof r, 1, f);
            total++;
        }
    }
    h.nrec = total;
    fseek(f, 0, SEEK_SET);
    fwrite(&h, sizeof h, 1, f);
    if (fclose(f)) {
        perror(argv[2]);
        return 1;
    }
    printf("x87gen: %u templates, %u cases\n", nt, total);
    return 0;
}
#endif
