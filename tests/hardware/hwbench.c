/* Kernels that reproduce published measurements of real 386/486/Pentium
 * machines (tests/hardware/points.tsv, docs/boards.md): each ELF runs one
 * kernel (KERNEL_*, chosen at build time) with the measured part inside the
 * measurement window (port 0x600), so the window's clocks are what the real
 * machine's timer measured.  Entered in flat 32-bit protected mode with the
 * caches on by the ELF loader (emu/elfload.c); ends through the exit port.
 * The loops are written here from the instruction sequences the sources
 * publish (noted at each kernel); buffers are in RAM the run has not
 * touched unless a kernel warms them first. */
#include <stdint.h>

/* One kernel per ELF: the others are unused in it. */
#pragma GCC diagnostic ignored "-Wunused-function"

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port));
}
static inline void window(uint32_t v)
{
    __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"((uint16_t)0x600) : "memory");
}

#define MB (1024u * 1024u)
/* Large areas start at 4 MB (never touched by the loader or the stack). */
#define AREA ((uint8_t *)(4u * MB))
static uint8_t buf4k[4096] __attribute__((aligned(4096)));
static uint8_t buf4k_b[4096] __attribute__((aligned(4096)));

static void warm_read(const void *p, uint32_t n)
{
    const volatile uint32_t *w = p;
    for (uint32_t i = 0; i < n / 4; i += 4)
        (void)w[i];
}

/* CERBERUS bench_memory (tests/captures of a real 386DX-40 and 486DX2-66,
 * 2026): Watcom 8086 code on a 4096-byte buffer, one pass, not warmed:
 * memset = REP STOSW, memcpy = REP MOVSW, read = REP LODSB.  Here with an
 * operand-size prefix (16-bit operands in 32-bit code). */
static void k_memset16(void)
{
    void *d = buf4k;
    uint32_t n = 2048;
    window(1);
    __asm__ volatile("rep stosw" : "+D"(d), "+c"(n) : "a"(0) : "memory");
    window(0);
}
static void k_memcpy16(void)
{
    void *d = buf4k, *s = buf4k_b;
    uint32_t n = 2048;
    window(1);
    __asm__ volatile("rep movsw" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    window(0);
}
static void k_lodsb(void)
{
    const void *s = buf4k;
    uint32_t n = 4096;
    window(1);
    __asm__ volatile("rep lodsb" : "+S"(s), "+c"(n) : : "eax", "memory");
    window(0);
}

/* Abrash, Graphics Programming Black Book ch. 21, listings 21.1-21.5: the
 * TCP/IP checksum inner loops, over a 4 KB L1-resident buffer (2048 words;
 * read once before the window).  The loop bodies are the listings'
 * instruction sequences. */
#define CK_WORDS 2048u
static __attribute__((noinline)) uint32_t ck_211(const void *p, uint32_t words, int adc32)
{
    uint32_t a = 0;
    if (adc32)
        __asm__ volatile("1: addw (%%esi), %%ax\n adcl $0, %%eax\n addl $2, %%esi\n decl %%ecx\n "
                         "jnz 1b"
                         : "+a"(a), "+S"(p), "+c"(words)::"memory", "cc");
    else
        __asm__ volatile("1: addw (%%esi), %%ax\n adcw $0, %%ax\n addl $2, %%esi\n decl %%ecx\n "
                         "jnz 1b"
                         : "+a"(a), "+S"(p), "+c"(words)::"memory", "cc");
    return a;
}
static __attribute__((noinline)) uint32_t ck_212(const void *p, uint32_t words)
{
    uint32_t a = 0, d = *(const uint16_t *)p;
    p = (const uint8_t *)p + 2;
    words--;
    __asm__ volatile("1: addb %%dl, %%al\n movb (%%esi), %%dl\n adcb %%dh, %%ah\n movb 1(%%esi), "
                     "%%dh\n adcl $0, %%eax\n addl $2, %%esi\n decl %%ecx\n jnz 1b"
                     : "+a"(a), "+d"(d), "+S"(p), "+c"(words)::"memory", "cc");
    return a + d;
}
static __attribute__((noinline)) uint32_t ck_213(const void *p, uint32_t words)
{
    uint32_t a = 0, d = *(const uint16_t *)p, b = ((const uint8_t *)p)[2];
    uint32_t n = words / 2 - 1;
    __asm__ volatile("1: movb 3(%%esi), %%bh\n addl $4, %%esi\n shll $16, %%ebx\n orl %%edx, "
                     "%%ebx\n movb (%%esi), %%dl\n addl %%ebx, %%eax\n movb 2(%%esi), %%bl\n adcl "
                     "$0, %%eax\n movb 1(%%esi), %%dh\n decl %%ecx\n jnz 1b"
                     : "+a"(a), "+d"(d), "+b"(b), "+S"(p), "+c"(n)::"memory", "cc");
    return a;
}
static __attribute__((noinline)) uint32_t ck_214(const void *p, uint32_t words)
{
    uint32_t a = 0, d = *(const uint32_t *)p;
    uint32_t n = words / 2 - 1;
    p = (const uint8_t *)p + 4;
    __asm__ volatile("1: addl %%edx, %%eax\n movl (%%esi), %%edx\n adcl $0, %%eax\n addl $4, "
                     "%%esi\n decl %%ecx\n jnz 1b"
                     : "+a"(a), "+d"(d), "+S"(p), "+c"(n)::"memory", "cc");
    return a + d;
}
static __attribute__((noinline)) uint32_t ck_215(const void *p, uint32_t words)
{
    uint32_t a = 0, d = ((const uint32_t *)p)[0], b = ((const uint32_t *)p)[1];
    uint32_t n = words / 4 - 1;
    p = (const uint8_t *)p + 8;
    __asm__ volatile("1: addl %%edx, %%eax\n movl (%%esi), %%edx\n adcl %%ebx, %%eax\n movl "
                     "4(%%esi), %%ebx\n adcl $0, %%eax\n addl $8, %%esi\n decl %%ecx\n jnz 1b"
                     : "+a"(a), "+d"(d), "+b"(b), "+S"(p), "+c"(n)::"memory", "cc");
    return a + d + b;
}
static volatile uint32_t sink;
#define CK_KERNEL(name, call)                                                                      \
    static void name(void)                                                                         \
    {                                                                                              \
        for (uint32_t i = 0; i < sizeof buf4k; i++)                                                \
            buf4k[i] = (uint8_t)(i * 7 + 3);                                                       \
        warm_read(buf4k, sizeof buf4k);                                                            \
        sink = call; /* once more: code and buffer cached, branches learned */                     \
        window(1);                                                                                 \
        sink = call;                                                                               \
        window(0);                                                                                 \
    }
CK_KERNEL(k_ck211, ck_211(buf4k, CK_WORDS, 0))
CK_KERNEL(k_ck211e, ck_211(buf4k, CK_WORDS, 1))
CK_KERNEL(k_ck212, ck_212(buf4k, CK_WORDS))
CK_KERNEL(k_ck213, ck_213(buf4k, CK_WORDS))
CK_KERNEL(k_ck214, ck_214(buf4k, CK_WORDS))
CK_KERNEL(k_ck215, ck_215(buf4k, CK_WORDS))

/* lmbench 3's summary columns "Mem read", "Mem write" and "Bcopy (libc)"
 * (scripts/lmbench + scripts/getsummary: the "Memory read bandwidth" and
 * "Memory write bandwidth" series are bw_mem frd and fwr, every 32-bit word
 * of the buffer; "Bcopy (libc)" is bw_mem bcopy over half the size) at the
 * series' largest size, far beyond the 256 KB L2.  bw_mem.c: the buffer is
 * bzero'ed first, then the loop runs over it repeatedly (the timed pass
 * follows an untimed one here); frd sums 128 words per 512-byte chunk
 * (sum += p[0] + ... + p[127]), fwr stores them (p[0] = ... = p[127] = 1),
 * written here as the 128 loads/stores a compiler makes of them; bcopy is
 * i386 glibc's memmove, REP MOVSL, between two page-aligned buffers.
 * Bandwidth in 10^6 bytes a second (bw_mem.c: #define MB (1000. * 1000.)). */
#define LM_BYTES (4u * MB)
static void lm_bzero(void)
{
    void *d = AREA;
    uint32_t n = LM_BYTES / 4;
    __asm__ volatile("rep stosl" : "+D"(d), "+c"(n) : "a"(0) : "memory");
}
static __attribute__((noinline)) uint32_t lm_frd_pass(void)
{
    const uint8_t *p = AREA, *last = AREA + LM_BYTES - 512;
    uint32_t sum = 0, t;
    for (; p <= last; p += 512)
        __asm__ volatile("movl (%2), %1\n .set lmr_i, 4\n .rept 127\n addl lmr_i(%2), %1\n"
                         " .set lmr_i, lmr_i + 4\n .endr\n addl %1, %0"
                         : "+r"(sum), "=&r"(t)
                         : "r"(p)
                         : "memory", "cc");
    return sum;
}
static __attribute__((noinline)) void lm_fwr_pass(void)
{
    uint8_t *p = AREA, *last = AREA + LM_BYTES - 512;
    for (; p <= last; p += 512)
        __asm__ volatile(".set lmw_i, 0\n .rept 128\n movl $1, lmw_i(%0)\n .set lmw_i, lmw_i + 4\n"
                         " .endr" ::"r"(p)
                         : "memory");
}
static __attribute__((noinline)) void lm_bcopy_pass(void)
{
    void *d = AREA + LM_BYTES / 2, *s = AREA;
    uint32_t n = LM_BYTES / 2 / 4;
    __asm__ volatile("cld\n rep movsl" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}
static void k_lm_rd(void)
{
    lm_bzero();
    sink = lm_frd_pass();
    window(1);
    sink = lm_frd_pass();
    window(0);
}
static void k_lm_wr(void)
{
    lm_bzero();
    lm_fwr_pass();
    window(1);
    lm_fwr_pass();
    window(0);
}
static void k_lm_bcopy(void)
{
    lm_bzero();
    lm_bcopy_pass();
    window(1);
    lm_bcopy_pass();
    window(0);
}

/* Linux 2.4's delay loop (arch/i386/lib/delay.c, no TSC): jmp; .align 16;
 * jmp; .align 16; decl; jns back.  BogoMIPS = loops per second / 500000. */
#define DELAY_LOOPS 1000000u
static void k_delay(void)
{
    uint32_t n = DELAY_LOOPS;
    window(1);
    __asm__ volatile("jmp 1f\n .align 16\n1: jmp 2f\n .align 16\n2: decl %0\n jns 2b"
                     : "+a"(n)::"cc");
    window(0);
}

/* MUL r32 back to back (GMP's pentium/README: "Intel documentation says a
 * mul instruction is 10 cycles, but it measures 9"): 1000 MULs, run once
 * before the window so that their code is cached, as in GMP's loops (one
 * copy of the block: called twice, the window around the second call). */
static __attribute__((noinline)) void muls(void)
{
    uint32_t a = 3, d, b = 5;
    __asm__ volatile(".rept 1000\n mull %2\n .endr" : "+a"(a), "=&d"(d) : "r"(b) : "cc");
    sink = a + d;
}
static void k_mul(void)
{
    muls();
    window(1);
    muls();
    window(0);
}

void hw_main(void)
{
    KERNEL();
    outb(0xf4, 0); /* exit port: status 0 */
}

__asm__(".globl _start\n_start:\n mov $0x9f000, %esp\n call hw_main\n1: hlt\n jmp 1b\n");
