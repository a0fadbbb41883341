/* Kernels that reproduce published measurements of real 386/486/Pentium
 * machines (tests/hardware/points.tsv, docs/boards.md): each ELF runs one
 * kernel (KERNEL_*, chosen at build time) with the measured part inside the
 * measurement window (port 0x600), so the window's clocks are what the real
 * machine's timer measured.  Entered in flat 32-bit protected mode with the
 * caches on by the ELF loader (emu/elfload.c); ends through the exit port.
 * The loops are written here from the instruction sequences the sources
 * publish (noted at each kernel), or call the sources' own routines
 * (GNU MP's and OpenSSL's, from Debian's source packages: gmp/README.md,
 * openssl/README.md; assembled unchanged); buffers are in RAM the run has not touched unless a
 * kernel warms them first.
 *
 * run-fidelity tells a kernel what to do through the mailbox (ports
 * 0x604-0x607, devices/pc/mailbox.c): "n=N reps=R skip=S", the operand
 * size and the calls in the window for the kernels measured the way GNU
 * MP's speed program measures (two sizes, the difference), and skip=1 for
 * the run whose window is empty (the same program up to the window and
 * after it: the per-cause breakdown of the window is the difference of the
 * two runs' model reports). */
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

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

/* The mailbox's text, "n=N reps=R skip=S" (any order, each optional). */
static struct {
    uint32_t n, reps, skip;
} run;
#define MAILBOX_STATUS 0x604
#define MAILBOX_DATA   0x605
static void read_mailbox(void)
{
    uint8_t st = inb(MAILBOX_STATUS);
    if ((st & 0xfc) || !(st & 1)) return; /* no mailbox, or empty */
    char key[8];
    uint32_t klen = 0, *field = 0;
    for (int i = 0; i < 64; i++) {
        uint8_t c = inb(MAILBOX_DATA);
        if (!c) break;
        if (c == ' ') {
            klen = 0;
            field = 0;
        } else if (c == '=') {
            key[klen < sizeof key ? klen : sizeof key - 1] = 0;
            field = key[0] == 'n' && !key[1]                          ? &run.n
                    : key[0] == 'r' && key[1] == 'e' && key[2] == 'p' ? &run.reps
                    : key[0] == 's' && key[1] == 'k'                  ? &run.skip
                                                                      : 0;
        } else if (field && c >= '0' && c <= '9') {
            *field = *field * 10 + (uint32_t)(c - '0');
        } else if (!field && klen < sizeof key - 1) {
            key[klen++] = (char)c;
        }
    }
}

/* The measured part of a kernel: inside the window, or (skip=1) not run,
 * the window opened and closed around nothing. */
#define MEASURED(...)                                                                              \
    do {                                                                                           \
        if (run.skip) {                                                                            \
            window(1);                                                                             \
            window(0);                                                                             \
        } else {                                                                                   \
            window(1);                                                                             \
            __VA_ARGS__;                                                                           \
            window(0);                                                                             \
        }                                                                                          \
    } while (0)

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
    MEASURED(__asm__ volatile("rep stosw" : "+D"(d), "+c"(n) : "a"(0) : "memory"));
}
static void k_memcpy16(void)
{
    void *d = buf4k, *s = buf4k_b;
    uint32_t n = 2048;
    MEASURED(__asm__ volatile("rep movsw" : "+D"(d), "+S"(s), "+c"(n) : : "memory"));
}
static void k_lodsb(void)
{
    const void *s = buf4k;
    uint32_t n = 4096;
    MEASURED(__asm__ volatile("rep lodsb" : "+S"(s), "+c"(n) : : "eax", "memory"));
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
        MEASURED(sink = call);                                                                     \
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
    MEASURED(sink = lm_frd_pass());
}
static void k_lm_wr(void)
{
    lm_bzero();
    lm_fwr_pass();
    MEASURED(lm_fwr_pass());
}
static void k_lm_bcopy(void)
{
    lm_bzero();
    lm_bcopy_pass();
    MEASURED(lm_bcopy_pass());
}

/* Linux 2.4's delay loop (arch/i386/lib/delay.c, no TSC): jmp; .align 16;
 * jmp; .align 16; decl; jns back.  BogoMIPS = loops per second / 500000. */
#define DELAY_LOOPS 1000000u
static void k_delay(void)
{
    uint32_t n = DELAY_LOOPS;
    MEASURED(__asm__ volatile("jmp 1f\n .align 16\n1: jmp 2f\n .align 16\n2: decl %0\n jns 2b"
                              : "+a"(n)::"cc"));
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
    MEASURED(muls());
}

/* Linux 1.x's delay loop (include/linux/delay.h, 1993-95; the same in 2.0's
 * include/asm-i386/delay.h): ".align 2,0x90\n1:\tdecl %0\n\tjns 1b", the
 * loop the BogoMips mini-HOWTO's ratios (1995) were measured with.  Those
 * kernels were a.out, where GAS's ".align 2" is 2^2 = 4 bytes (the GAS
 * manual, ".align": the i386 a.out form counts low-order zero bits): written
 * here as .p2align 2, so the loop's three bytes are in one dword.  Timed
 * directly over DELAY_LOOPS loops, as calibrate_delay's last doubling
 * does over a second or more of jiffies (its result is loops/s to within
 * 1/HZ; the timer interrupt's own time is not in it here). */
static void k_delay12(void)
{
    uint32_t n = DELAY_LOOPS;
    MEASURED(__asm__ volatile(".p2align 2,0x90\n1: decl %0\n jns 1b" : "+a"(n)::"cc"));
}

/* GNU MP 6.2.1's x86 routines (gmp/README.md: Debian's source package, the
 * m4 expansion of GMP's build, assembled as it is and linked with the kernel
 * that calls them), measured as GMP's tune/speed measures the c/l figures
 * in their comments (tune/README, "./speed -s 16-64 -t 16 -C -D"): each
 * operand in its own 64-byte-aligned block (speed.h CACHE_LINE_SIZE 64) of
 * random limbs, all of them read into the cache first (speed_cache_fill),
 * then the routine called reps times back to back (SPEED_ROUTINE_*'s "do
 * call; while (--i != 0)", written the same here), at two sizes: the point is the difference of
 * the two windows per limb (per crossproduct N*N for the basecase
 * multiplies, -E; per triangular product N(N+1)/2 for the square, -F), so
 * the call and loop overheads fall out as they do in speed's -D.  The same
 * loop run twice before the window warms the code and trains the branch
 * predictor, as speed's earlier measurements of the same call do.
 * The operands sit 1 KB apart in one 4 KB block: no two share a cache set. */
typedef uint32_t mp_limb_t;
typedef int32_t mp_size_t;
mp_limb_t __gmpn_add_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
mp_limb_t __gmpn_mul_1(mp_limb_t *, const mp_limb_t *, mp_size_t, mp_limb_t);
mp_limb_t __gmpn_addmul_1(mp_limb_t *, const mp_limb_t *, mp_size_t, mp_limb_t);
void __gmpn_com(mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_copyi(mp_limb_t *, const mp_limb_t *, mp_size_t);
mp_limb_t __gmpn_lshift(mp_limb_t *, const mp_limb_t *, mp_size_t, unsigned);
void __gmpn_and_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
uint32_t __gmpn_popcount(const mp_limb_t *, mp_size_t);
uint32_t __gmpn_hamdist(const mp_limb_t *, const mp_limb_t *, mp_size_t);
mp_limb_t __gmpn_mod_34lsub1(const mp_limb_t *, mp_size_t);
mp_limb_t __gmpn_modexact_1_odd(const mp_limb_t *, mp_size_t, mp_limb_t);
void __gmpn_divexact_1(mp_limb_t *, const mp_limb_t *, mp_size_t, mp_limb_t);
void __gmpn_mul_basecase(mp_limb_t *, const mp_limb_t *, mp_size_t, const mp_limb_t *, mp_size_t);
void __gmpn_sqr_basecase(mp_limb_t *, const mp_limb_t *, mp_size_t);
mp_limb_t __gmpn_mul_2(mp_limb_t *, const mp_limb_t *, mp_size_t, const mp_limb_t *);
mp_limb_t __gmpn_divrem_1(mp_limb_t *, mp_size_t, const mp_limb_t *, mp_size_t, mp_limb_t);
mp_limb_t __gmpn_sub_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
mp_limb_t __gmpn_submul_1(mp_limb_t *, const mp_limb_t *, mp_size_t, mp_limb_t);
void __gmpn_ior_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_xor_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_andn_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_iorn_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_nand_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_nior_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_xnor_n(mp_limb_t *, const mp_limb_t *, const mp_limb_t *, mp_size_t);
void __gmpn_copyd(mp_limb_t *, const mp_limb_t *, mp_size_t);
mp_limb_t __gmpn_rshift(mp_limb_t *, const mp_limb_t *, mp_size_t, unsigned);
mp_limb_t __gmpn_bdiv_q_1(mp_limb_t *, const mp_limb_t *, mp_size_t, mp_limb_t);

/* The inverses mod 2^8 of the odd bytes (GMP's binvert_limb_table, which
 * mode1o, dive_1 and bdiv_q_1 read; GMP builds it in C, mp_minv_tab.c): computed. */
unsigned char __gmp_binvert_limb_table[128];
static void gmp_binvert_table(void)
{
    for (uint32_t i = 0; i < 128; i++) {
        uint32_t a = 2 * i + 1, inv = a; /* a*a = 1 mod 8: 3 bits */
        for (int k = 0; k < 3; k++)
            inv = inv * (2 - a * inv); /* Newton: the bits double */
        __gmp_binvert_limb_table[i] = (unsigned char)inv;
    }
}

#define GMP_SLOT 256u /* limbs: 1 KB */
static mp_limb_t gmp_area[4 * GMP_SLOT] __attribute__((aligned(4096)));
#define GMP_XP (gmp_area)                /* slot 0 */
#define GMP_YP (gmp_area + GMP_SLOT)     /* slot 1 */
#define GMP_WP (gmp_area + 2 * GMP_SLOT) /* slots 2 and 3 */
static uint32_t gmp_seed = 0x2545f491u;
static mp_limb_t gmp_random(void)
{
    gmp_seed ^= gmp_seed << 13; /* xorshift32 */
    gmp_seed ^= gmp_seed >> 17;
    gmp_seed ^= gmp_seed << 5;
    return gmp_seed;
}
static void gmp_setup(void)
{
    gmp_binvert_table();
    for (uint32_t i = 0; i < 2 * GMP_SLOT; i++)
        gmp_area[i] = gmp_random();
    warm_read(gmp_area, sizeof gmp_area);
}
/* The mailbox's size, 1 to a slot (a product's 2n limbs fit the result's two). */
static uint32_t gmp_size(void)
{
    return run.n < 1 ? 1 : run.n > GMP_SLOT ? GMP_SLOT : run.n;
}
/* The multipliers and divisors: random limbs of the kind each routine takes. */
#define GMP_V    0x9e3779b1u /* mul_1, addmul_1, submul_1 */
#define GMP_ODD  0x6b43a9b5u /* modexact_1_odd, divexact_1, bdiv_q_1: odd */
#define GMP_DIV  0xb2f4e1d3u /* divrem_1: normalized (high bit set) */
#define GMP_EVEN 0xd687536au /* divexact_1, bdiv_q_1 even: GMP_ODD * 2 (one bit to strip) */
#define GMP_KERNEL(name, call)                                                                     \
    static __attribute__((noinline)) void name##_reps(mp_size_t n, uint32_t reps)                  \
    {                                                                                              \
        do                                                                                         \
            sink = (uint32_t)(call);                                                               \
        while (--reps != 0);                                                                       \
    }                                                                                              \
    static void name(void)                                                                         \
    {                                                                                              \
        mp_size_t n = (mp_size_t)gmp_size();                                                       \
        gmp_setup();                                                                               \
        name##_reps(n, 2);                                                                         \
        MEASURED(name##_reps(n, run.reps ? run.reps : 1));                                         \
    }
#define VOID_CALL(c) ((c), 0u)
GMP_KERNEL(k_gmp_add_n, __gmpn_add_n(GMP_WP, GMP_XP, GMP_YP, n))
GMP_KERNEL(k_gmp_mul_1, __gmpn_mul_1(GMP_WP, GMP_XP, n, GMP_V))
GMP_KERNEL(k_gmp_addmul_1, __gmpn_addmul_1(GMP_WP, GMP_XP, n, GMP_V))
GMP_KERNEL(k_gmp_com, VOID_CALL(__gmpn_com(GMP_WP, GMP_XP, n)))
GMP_KERNEL(k_gmp_copyi, VOID_CALL(__gmpn_copyi(GMP_WP, GMP_XP, n)))
GMP_KERNEL(k_gmp_lshift, __gmpn_lshift(GMP_WP, GMP_XP, n, 7)) /* not 1: GMP's special case */
GMP_KERNEL(k_gmp_and_n, VOID_CALL(__gmpn_and_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_popcount, __gmpn_popcount(GMP_XP, n))
GMP_KERNEL(k_gmp_hamdist, __gmpn_hamdist(GMP_XP, GMP_YP, n))
GMP_KERNEL(k_gmp_mod_34lsub1, __gmpn_mod_34lsub1(GMP_XP, n))
GMP_KERNEL(k_gmp_mode1o, __gmpn_modexact_1_odd(GMP_XP, n, GMP_ODD))
GMP_KERNEL(k_gmp_dive_1, VOID_CALL(__gmpn_divexact_1(GMP_WP, GMP_XP, n, GMP_ODD)))
GMP_KERNEL(k_gmp_mul_basecase, VOID_CALL(__gmpn_mul_basecase(GMP_WP, GMP_XP, n, GMP_YP, n)))
GMP_KERNEL(k_gmp_sqr_basecase, VOID_CALL(__gmpn_sqr_basecase(GMP_WP, GMP_XP, n)))
GMP_KERNEL(k_gmp_mul_2, __gmpn_mul_2(GMP_WP, GMP_XP, n, GMP_YP))
GMP_KERNEL(k_gmp_divrem_1, __gmpn_divrem_1(GMP_WP, 0, GMP_XP, n, GMP_DIV))
GMP_KERNEL(k_gmp_sub_n, __gmpn_sub_n(GMP_WP, GMP_XP, GMP_YP, n))
GMP_KERNEL(k_gmp_submul_1, __gmpn_submul_1(GMP_WP, GMP_XP, n, GMP_V))
GMP_KERNEL(k_gmp_ior_n, VOID_CALL(__gmpn_ior_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_xor_n, VOID_CALL(__gmpn_xor_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_andn_n, VOID_CALL(__gmpn_andn_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_iorn_n, VOID_CALL(__gmpn_iorn_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_nand_n, VOID_CALL(__gmpn_nand_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_nior_n, VOID_CALL(__gmpn_nior_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_xnor_n, VOID_CALL(__gmpn_xnor_n(GMP_WP, GMP_XP, GMP_YP, n)))
GMP_KERNEL(k_gmp_copyd, VOID_CALL(__gmpn_copyd(GMP_WP, GMP_XP, n)))
GMP_KERNEL(k_gmp_rshift, __gmpn_rshift(GMP_WP, GMP_XP, n, 7)) /* not 1: GMP's special case */
/* The shift by 1 (pentium/README: "1.875 special shift by 1 bit"): the
 * separate operands (WP is 2 KB above XP) take lshift's and rshift's
 * L(special) ADC loop. */
GMP_KERNEL(k_gmp_lshift1, __gmpn_lshift(GMP_WP, GMP_XP, n, 1))
GMP_KERNEL(k_gmp_rshift1, __gmpn_rshift(GMP_WP, GMP_XP, n, 1))
/* An even divisor: the pentium code strips its twos and SHRDs each limb. */
GMP_KERNEL(k_gmp_dive_1e, VOID_CALL(__gmpn_divexact_1(GMP_WP, GMP_XP, n, GMP_EVEN)))
GMP_KERNEL(k_gmp_bdiv_q_1, __gmpn_bdiv_q_1(GMP_WP, GMP_XP, n, GMP_ODD))
GMP_KERNEL(k_gmp_bdiv_q_1e, __gmpn_bdiv_q_1(GMP_WP, GMP_XP, n, GMP_EVEN))

/* OpenSSL 3.0's x86 perlasm routines (openssl/README.md: Debian's openssl
 * source package, each .pl run by perl as OpenSSL's build runs it, the
 * output assembled unchanged and linked with the kernel that calls it),
 * measured against the cycles per byte their headers give for the
 * Pentium.  OpenSSL's startup (crypto/cpuid.c OPENSSL_cpuid_setup) is
 * done as OpenSSL does it: its own OPENSSL_ia32_cpuid (x86cpuid.pl) fills
 * OPENSSL_ia32cap_P from CPUID, and the routines choose their code path
 * from it (on a Pentium without MMX: the integer ALU code).  The figures
 * are "cycles per processed byte" out of a long buffer (openssl speed);
 * here GMP's speed -C -D way: one call over N bytes, reps calls back to
 * back, at two sizes, the difference per byte, the input in the L1 (read
 * once before; the same calls twice before the window). */
void OPENSSL_cpuid_setup(void);
#ifdef HW_OPENSSL /* only in the kernels linked with x86cpuid.S */
uint32_t OPENSSL_ia32cap_P[4];
uint64_t OPENSSL_ia32_cpuid(uint32_t *);
void OPENSSL_cpuid_setup(void)
{
    uint64_t vec = OPENSSL_ia32_cpuid(OPENSSL_ia32cap_P);
    OPENSSL_ia32cap_P[0] = (uint32_t)vec | (1u << 10); /* as cpuid.c does */
    OPENSSL_ia32cap_P[1] = (uint32_t)(vec >> 32);
}
#endif
void sha1_block_data_order(void *ctx, const void *in, uint32_t blocks);
void sha256_block_data_order(void *ctx, const void *in, uint32_t blocks);
void sha512_block_data_order(void *ctx, const void *in, uint32_t blocks);
void ChaCha20_ctr32(uint8_t *out, const uint8_t *in, uint32_t len, const uint32_t key[8],
                    const uint32_t counter[4]);
int poly1305_init(void *ctx, const uint8_t key[16], void *func[2]);
void poly1305_blocks(void *ctx, const uint8_t *in, uint32_t len, uint32_t padbit);
void gcm_ghash_4bit_x86(uint64_t xi[2], const void *htable, const uint8_t *in, uint32_t len);
void RC4_set_key(void *key, int len, const uint8_t *data);
void RC4(void *key, uint32_t len, const uint8_t *in, uint8_t *out);
int AES_set_encrypt_key(const uint8_t *user_key, int bits, void *key);
void AES_encrypt(const uint8_t *in, uint8_t *out, const void *key);
#define OSSL_MAX 4096u
static uint8_t ossl_in[OSSL_MAX] __attribute__((aligned(64)));
static uint8_t ossl_out[OSSL_MAX] __attribute__((aligned(64)));
/* A context for any of them (AES's key schedule 244 bytes, RC4's 1 KB + 8,
 * poly1305's and the GHASH table 256): 64-byte aligned. */
static uint32_t ossl_ctx[320] __attribute__((aligned(64)));
static uint32_t ossl_key[8] __attribute__((aligned(16)));
static uint32_t ossl_counter[4] __attribute__((aligned(16)));
static uint64_t ossl_xi[2] __attribute__((aligned(16)));
static void ossl_setup(void)
{
    OPENSSL_cpuid_setup();
    for (uint32_t i = 0; i < OSSL_MAX / 4; i++)
        ((uint32_t *)ossl_in)[i] = gmp_random();
    for (uint32_t i = 0; i < 8; i++)
        ossl_key[i] = gmp_random();
    warm_read(ossl_in, sizeof ossl_in);
}
/* The mailbox's size in bytes, 64 to OSSL_MAX. */
static uint32_t ossl_size(void)
{
    return run.n < 64 ? 64 : run.n > OSSL_MAX ? OSSL_MAX : run.n;
}
#define OSSL_KERNEL(name, init, call)                                                              \
    static __attribute__((noinline)) void name##_reps(uint32_t len, uint32_t reps)                 \
    {                                                                                              \
        do                                                                                         \
            call;                                                                                  \
        while (--reps != 0);                                                                       \
    }                                                                                              \
    static void name(void)                                                                         \
    {                                                                                              \
        uint32_t len = ossl_size();                                                                \
        ossl_setup();                                                                              \
        init;                                                                                      \
        name##_reps(len, 2);                                                                       \
        MEASURED(name##_reps(len, run.reps ? run.reps : 1));                                       \
    }
/* The hash states start as anything (the timing does not depend on them). */
OSSL_KERNEL(k_ossl_sha1, (void)0, sha1_block_data_order(ossl_ctx, ossl_in, len / 64))
OSSL_KERNEL(k_ossl_sha256, (void)0, sha256_block_data_order(ossl_ctx, ossl_in, len / 64))
OSSL_KERNEL(k_ossl_sha512, (void)0, sha512_block_data_order(ossl_ctx, ossl_in, len / 128))
OSSL_KERNEL(k_ossl_chacha, (void)0, ChaCha20_ctr32(ossl_out, ossl_in, len, ossl_key, ossl_counter))
static void *ossl_poly_func[2];
OSSL_KERNEL(k_ossl_poly1305, poly1305_init(ossl_ctx, (const uint8_t *)ossl_key, ossl_poly_func),
            poly1305_blocks(ossl_ctx, ossl_in, len, 1))
/* GHASH's 4-bit table (gcm128.c gcm_init_4bit makes it from the key):
 * random here; the routine's time does not depend on its values. */
OSSL_KERNEL(k_ossl_ghash, for (uint32_t i = 0; i < 64; i++) ossl_ctx[i] = gmp_random(),
            gcm_ghash_4bit_x86(ossl_xi, ossl_ctx, ossl_in, len))
OSSL_KERNEL(k_ossl_rc4, RC4_set_key(ossl_ctx, 16, (const uint8_t *)ossl_key),
            RC4(ossl_ctx, len, ossl_in, ossl_out))
/* AES-128 ECB: AES_encrypt (AES_decrypt) on each 16-byte block in turn,
 * with a 128-bit key schedule from AES_set_encrypt_key
 * (AES_set_decrypt_key). */
int AES_set_decrypt_key(const uint8_t *user_key, int bits, void *key);
void AES_decrypt(const uint8_t *in, uint8_t *out, const void *key);
OSSL_KERNEL(k_ossl_aes128, AES_set_encrypt_key((const uint8_t *)ossl_key, 128, ossl_ctx),
            for (uint32_t o = 0; o < len; o += 16) AES_encrypt(ossl_in + o, ossl_out + o, ossl_ctx))
OSSL_KERNEL(k_ossl_aes128d, AES_set_decrypt_key((const uint8_t *)ossl_key, 128, ossl_ctx),
            for (uint32_t o = 0; o < len; o += 16) AES_decrypt(ossl_in + o, ossl_out + o, ossl_ctx))
/* AES-128 CBC encrypt of the whole buffer in one AES_cbc_encrypt, in
 * place as openssl speed encrypts its buffer: from 512 bytes a call (a
 * multiple of 16, no hyper-threading) its fast code, the 2 KB tables. */
void AES_cbc_encrypt(const uint8_t *in, uint8_t *out, uint32_t len, const void *key, uint8_t *ivec,
                     int enc);
static uint8_t ossl_iv[16] __attribute__((aligned(16)));
OSSL_KERNEL(k_ossl_aes128cbc, AES_set_encrypt_key((const uint8_t *)ossl_key, 128, ossl_ctx),
            AES_cbc_encrypt(ossl_in, ossl_in, len, ossl_ctx, ossl_iv, 1))

/* GNU MP 6.2.1 mpn/x86/pentium/README, "P54 SHLDL": "back to back
 * repetitions of the following [shldl(%cl,%eax,%ebx); xorl %edx,%edx;
 * xorl %esi,%esi] run at 5 cycles, as expected, but repetitions of the
 * following [the same with xorl %edi,%edi; xorl %ebp,%ebp] run at 7 cycles
 * ... Three xorls run at 7 cycles too".  The README's sequences, our own
 * harness: the README does not say how they were repeated, so each group is
 * repeated 500 times unrolled (no loop branch; 5.5 KB of code at
 * most, inside the 8 KB code cache), the block run once before the window
 * so that it is cached (as k_mul), %cl = 7 (GMP's shifts take any count). */
#define SHLD_BLOCK(name, xors)                                                                     \
    void name(void);                                                                               \
    __asm__(".text\n.p2align 5\n" #name ":\n pushl %ebx\n pushl %esi\n pushl %edi\n"               \
            " pushl %ebp\n movl $7, %ecx\n .p2align 5\n .rept 500\n shldl %cl, %eax, %ebx\n" xors  \
            " .endr\n popl %ebp\n popl %edi\n popl %esi\n popl %ebx\n ret\n")
SHLD_BLOCK(shld_x2, " xorl %edx, %edx\n xorl %esi, %esi\n");
SHLD_BLOCK(shld_x3, " xorl %edx, %edx\n xorl %esi, %esi\n xorl %edi, %edi\n");
SHLD_BLOCK(shld_x4, " xorl %edx, %edx\n xorl %esi, %esi\n xorl %edi, %edi\n xorl %ebp, %ebp\n");
static void k_shld2x(void)
{
    shld_x2();
    MEASURED(shld_x2());
}
static void k_shld3x(void)
{
    shld_x3();
    MEASURED(shld_x3());
}
static void k_shld4x(void)
{
    shld_x4();
    MEASURED(shld_x4());
}

/* Abrash, Graphics Programming Black Book ch. 12 ("Pushing the 486"): code
 * he timed with the Zen timer on 486s in real mode ("Generally, I'll be
 * discussing optimization for real mode"; he found the address pipeline's
 * penalties in real mode larger than in 32-bit protected mode), so these
 * run in real mode: rm_call (below) leaves protected mode through a 16-bit
 * code segment, runs one test of the .rm16 section (linked at 0x10000, CS
 * 0x1000; data at DS = ES = 0x2000, the stack at 0x3000:FFFC) and comes
 * back.  Each test runs its code twice, the window around the second pass
 * (Listings 12.1/12.2: "run the test code twice to make sure it's cached");
 * the code is GAS's encoding of the listings' instructions (MOV DL,CL is
 * 88 CA here where MASM writes 8A D1: the same 1-clock MOV).  Interrupts
 * are off, as in the Zen timer's timed interval.  The window's OUTs are in
 * real mode too (66 EF). */
static const uint64_t hw_gdt[] __attribute__((aligned(8))) = {
    0,
    0x00cf9b000000ffffull, /* 0x08: code, flat, 32-bit */
    0x00cf93000000ffffull, /* 0x10: data, flat, 32-bit */
    0x00009b010000ffffull, /* 0x18: code, base 0x10000, limit 64 KB, 16-bit */
    0x000093000000ffffull, /* 0x20: data, base 0, limit 64 KB, 16-bit */
};
static struct __attribute__((packed)) {
    uint16_t limit;
    uint32_t base;
} hw_gdtr = {sizeof hw_gdt - 1, 0};
/* Runs the real-mode test at offset `test` of the .rm16 section; measure 0
 * opens and closes the window around nothing (skip=1). */
void rm_call(uint32_t test, uint32_t measure);
__asm__(".text\n"
        ".globl rm_call\n"
        "rm_call:\n"
        " pushal\n"
        " movl %esp, rm_saved_esp\n"
        " movl 36(%esp), %edi\n"
        " movl 40(%esp), %esi\n"
        " ljmp $0x18, $(rm_pm16 - rm_base)\n"
        "rm_back32:\n"
        " movw $0x10, %ax\n"
        " movw %ax, %ds\n movw %ax, %es\n movw %ax, %ss\n movw %ax, %fs\n movw %ax, %gs\n"
        " movl rm_saved_esp, %esp\n"
        " popal\n"
        " ret\n"
        ".data\n.p2align 2\nrm_saved_esp: .long 0\n"
        ".section .rm16, \"ax\"\n"
        ".code16\n"
        "rm_base:\n"
        "rm_pm16:\n" /* 16-bit protected mode: 64 KB segments, then PE off */
        " movw $0x20, %ax\n"
        " movw %ax, %ds\n movw %ax, %es\n movw %ax, %ss\n movw %ax, %fs\n movw %ax, %gs\n"
        " movl %cr0, %eax\n"
        " andb $0xfe, %al\n"
        " movl %eax, %cr0\n"
        " ljmp $0x1000, $(rm_real - rm_base)\n"
        "rm_real:\n"
        " movw $0x2000, %ax\n movw %ax, %ds\n movw %ax, %es\n"
        " movw $0x3000, %ax\n movw %ax, %ss\n movw $0xfffc, %sp\n"
        " call *%di\n"
        " movl %cr0, %eax\n"
        " orb $1, %al\n"
        " movl %eax, %cr0\n"
        " ljmpl $0x08, $rm_back32\n"
        ".code32\n"
        ".text\n");
/* The window from real mode, and a test's two passes: RM_LISTING(name,
 * setup, code) assembles name_body (code, then RET) and the test `name`,
 * which runs `setup` and then calls name_body twice, the window around the
 * second call when %si (measure, kept across the first) is set. */
#define RM_WINDOW(v) " movl $" #v ", %eax\n movw $0x600, %dx\n outl %eax, %dx\n"
#define RM_LISTING(name, setup, code)                                                              \
    __asm__(".section .rm16, \"ax\"\n.code16\n" #name "_body:\n" code " ret\n" #name ":\n" setup   \
            " pushw %si\n call " #name "_body\n popw %si\n testw %si, %si\n jz 1f\n" RM_WINDOW(    \
                1) " call " #name "_body\n" RM_WINDOW(0) " ret\n1:\n" RM_WINDOW(1)                 \
                RM_WINDOW(0) " ret\n.code32\n.text\n")
#define RM_KERNEL(kname, test)                                                                     \
    extern char test[], rm_base[];                                                                 \
    static void kname(void)                                                                        \
    {                                                                                              \
        hw_gdtr.base = (uint32_t)hw_gdt;                                                           \
        __asm__ volatile("lgdt %0\n ljmp $0x08, $1f\n1:" ::"m"(hw_gdtr));                          \
        rm_call((uint32_t)(test - rm_base), !run.skip);                                            \
    }

/* Listings 12.1 and 12.2 (sub bx,bx; 1000 repetitions): "Listing 12.1 ran
 * in 120 us on a 33 MHz 486, or 4 cycles per repetition ... Listing 12.2
 * ran in 90 us, or 3 cycles"; 12.2 with 2000 repetitions ("making the test
 * code larger than 8K"): 224 us, "3.7 cycles per repetition". */
RM_LISTING(rm_ab121, " subw %bx, %bx\n",
           ".rept 1000\n movb %cl, %dl\n nop\n movw (%bx), %ax\n .endr\n");
RM_LISTING(rm_ab122, " subw %bx, %bx\n",
           ".rept 1000\n nop\n movb %cl, %dl\n movw (%bx), %ax\n .endr\n");
RM_LISTING(rm_ab122x2, " subw %bx, %bx\n",
           ".rept 2000\n nop\n movb %cl, %dl\n movw (%bx), %ax\n .endr\n");
RM_KERNEL(k_ab121, rm_ab121)
RM_KERNEL(k_ab122, rm_ab122)
RM_KERNEL(k_ab122x2, rm_ab122x2)

/* The same chapter's loops (1000 iterations over DS:1000h, each loop top
 * 16-byte aligned): the sum with base+index addressing "executes in eight
 * cycles per loop ... [SI] addressing runs one cycle faster, at seven";
 * "the postdecrement loop shown above [the [SI] loop] is 2 full cycles
 * faster than the preincrement loop" (9); MOV BX,OFFSET MemVar then
 * MOV AX,[BX] with 0, 1 or 2 instructions between "loses two cycles",
 * "loses only one cycle", "loses no cycles at all" (INC DX, DEC CX, JNZ:
 * 9, 8 and 7 cycles a loop). */
#define RM_LOOP(body) " movw $1000, %cx\n .p2align 4\n2:\n" body " decw %cx\n jnz 2b\n"
RM_LISTING(rm_sumbxsi, " movw $0x1000, %bx\n",
           " xorw %si, %si\n" RM_LOOP(" addw (%bx,%si), %ax\n addw $2, %si\n"));
RM_LISTING(rm_sumsi, " movw $0x1000, %bx\n",
           " xorw %si, %si\n addw %bx, %si\n" RM_LOOP(
               " addw (%si), %ax\n addw $2, %si\n") " subw %bx, %si\n");
RM_LISTING(rm_preinc, "", " movw $0x1000, %si\n" RM_LOOP(" addw $2, %si\n addw (%si), %ax\n"));
RM_LISTING(rm_agi2, "", RM_LOOP(" movw $0x1000, %bx\n movw (%bx), %ax\n incw %dx\n"));
RM_LISTING(rm_agi1, "", RM_LOOP(" movw $0x1000, %bx\n incw %dx\n movw (%bx), %ax\n"));
RM_LISTING(rm_agi0, "",
           " movw $1000, %cx\n .p2align 4\n2:\n movw $0x1000, %bx\n incw %dx\n decw %cx\n"
           " movw (%bx), %ax\n jnz 2b\n");
RM_KERNEL(k_ab12sumbxsi, rm_sumbxsi)
RM_KERNEL(k_ab12sumsi, rm_sumsi)
RM_KERNEL(k_ab12preinc, rm_preinc)
RM_KERNEL(k_ab12agi2, rm_agi2)
RM_KERNEL(k_ab12agi1, rm_agi1)
RM_KERNEL(k_ab12agi0, rm_agi0)

/* Real-mode tests that need data in DS (0x2000, linear 0x20000) first:
 * `setup` (protected mode, flat) writes it before the test runs. */
#define RM_DS ((uint8_t *)0x20000)
#define RM_KERNEL_DATA(kname, test, setup)                                                         \
    extern char test[], rm_base[];                                                                 \
    static void kname(void)                                                                        \
    {                                                                                              \
        setup();                                                                                   \
        hw_gdtr.base = (uint32_t)hw_gdt;                                                           \
        __asm__ volatile("lgdt %0\n ljmp $0x08, $1f\n1:" ::"m"(hw_gdtr));                          \
        rm_call((uint32_t)(test - rm_base), !run.skip);                                            \
    }

/* Abrash, Graphics Programming Black Book ch. 7 ("Local Optimization"):
 * Listing 7.1's SearchMaxLength (LODSB, CMP AL,AH, JZ, AND AL,AL, JZ,
 * LOOP) "performs a search of the sample string for a period ('.') in
 * 170 us on a 20 MHz cached 386"; with the LOOP replaced by DEC CX/JNZ,
 * 168 us; Listing 7.2 (the same four instructions unrolled four times, the
 * first pass entered through a word table in the data segment), 121 us.
 * The sample string is the listings' (133 bytes with its 0; the period is
 * byte 132), at DS:0100h; the jump table at DS:0200h; the timed part is
 * the call with its three register loads (AH = '.', CX = the length, SI =
 * the string), as the listings' Start makes it.  The functions are word
 * aligned (their place in Abrash's code segment, after Start, is not
 * given). */
static const char ab7_sample[] = "This is a sample string of a long enough length "
                                 "so that raw searching speed can outweigh any "
                                 "extra set-up time that may be required.";
extern char rm_s72_e1[], rm_s72_e2[], rm_s72_e3[], rm_s72_e4[];
static void ab7_data(void)
{
    for (uint32_t i = 0; i < sizeof ab7_sample; i++) /* with its 0 */
        RM_DS[0x100 + i] = (uint8_t)ab7_sample[i];
    uint16_t *t = (uint16_t *)(RM_DS + 0x200);
    t[0] = (uint16_t)(rm_s72_e4 - rm_base);
    t[1] = (uint16_t)(rm_s72_e1 - rm_base);
    t[2] = (uint16_t)(rm_s72_e2 - rm_base);
    t[3] = (uint16_t)(rm_s72_e3 - rm_base);
}
#define AB7_SEARCH(fn) " movb $0x2e, %ah\n movw $133, %cx\n movw $0x100, %si\n call " fn "\n"
#define AB7_STEP(next) " lodsb\n cmpb %ah, %al\n jz 8f\n andb %al, %al\n jz " next "\n"
/* clang-format off */
__asm__(
    ".section .rm16, \"ax\"\n.code16\n"
    /* Listing 7.1 */
    ".p2align 1\nrm_s71:\n cld\n"
    "1:" AB7_STEP("7f")
    " loop 1b\n"
    "7: clc\n ret\n"
    "8: decw %si\n stc\n ret\n"
    /* Listing 7.1 with DEC CX/JNZ for the LOOP */
    ".p2align 1\nrm_s71d:\n cld\n"
    "1:" AB7_STEP("7f")
    " decw %cx\n jnz 1b\n"
    "7: clc\n ret\n"
    "8: decw %si\n stc\n ret\n"
    /* Listing 7.2 */
    ".p2align 1\nrm_s72:\n cld\n"
    " movw %cx, %bx\n addw $3, %cx\n shrw $1, %cx\n shrw $1, %cx\n"
    " andw $3, %bx\n shlw $1, %bx\n jmp *0x200(%bx)\n"
    "rm_s72_e4:\n" AB7_STEP("7f")
    "rm_s72_e3:\n" AB7_STEP("7f")
    "rm_s72_e2:\n" AB7_STEP("7f")
    "rm_s72_e1:\n" AB7_STEP("7f")
    " loop rm_s72_e4\n"
    "7: clc\n ret\n"
    "8: decw %si\n stc\n ret\n"
    ".code32\n.text\n");
/* clang-format on */
RM_LISTING(rm_ab71, "", AB7_SEARCH("rm_s71"));
RM_LISTING(rm_ab71d, "", AB7_SEARCH("rm_s71d"));
RM_LISTING(rm_ab72, "", AB7_SEARCH("rm_s72"));
RM_KERNEL_DATA(k_ab71, rm_ab71, ab7_data)
RM_KERNEL_DATA(k_ab71d, rm_ab71d, ab7_data)
RM_KERNEL_DATA(k_ab72, rm_ab72, ab7_data)

/* Abrash, Black Book ch. 8, Table 8.1 ("Execution Times of
 * FindIDAverage", on a 20 MHz 386): the assembly versions, Listing 8.3
 * (CMP [DI],AX / JNZ / INC BX / ADD DX,[DI+2] / ADD DI,4 / LOOP) 265 us,
 * 8.4 (SCASW, unrolled eight times, entered through a table in the code
 * segment) 212 us and 8.6 (the IDs and values in two arrays: REPNZ SCASW)
 * 100 us, over the test data of Listings 8.1 and 8.5: five blocks of 10,
 * 20, 30, 40 and 50 entries, entry j of block i ID j and value
 * i*1000+j.  Here the blocks are laid one after another from DS:0400h
 * (malloc's places are not known; each is word aligned), and the ID
 * searched for is AB8_ID: the one Abrash typed at the prompt is not given
 * (an ID below 10 matches once in every block, one of 50 or more never).
 * The timed part is the C call, FindIDAverage(ID, BlockPointer): two
 * pushes, the call and the stack's release. */
#define AB8_ID 5
static void ab8_data(int two_arrays)
{
    uint16_t at = 0x400, *w;
    for (uint16_t i = 1; i < 6; i++) {
        uint16_t n = (uint16_t)(i * 10), next = (uint16_t)(at + 4 + 4 * n);
        w = (uint16_t *)(RM_DS + at);
        w[0] = i < 5 ? next : 0; /* NextBlock */
        w[1] = n;                /* BlockCount */
        for (uint16_t j = 0; j < n; j++) {
            if (two_arrays) {
                w[2 + j] = j;
                w[2 + n + j] = (uint16_t)(i * 1000 + j);
            } else {
                w[2 + 2 * j] = j;
                w[3 + 2 * j] = (uint16_t)(i * 1000 + j);
            }
        }
        at = next;
    }
}
static void ab8_data1(void)
{
    ab8_data(0);
}
static void ab8_data2(void)
{
    ab8_data(1);
}
#define AB8_STR(x)  #x
#define AB8_XSTR(x) AB8_STR(x)
#define AB8_CALL(fn)                                                                               \
    " movw $0x400, %ax\n pushw %ax\n movw $" AB8_XSTR(AB8_ID) ", %ax\n pushw %ax\n call " fn       \
                                                              "\n addw $4, %sp\n"
#define AB8_END                                                                                    \
    " movw (%si), %si\n andw %si, %si\n jnz 2b\n subw %ax, %ax\n andw %bx, %bx\n jz 9f\n"          \
    " xchgw %dx, %ax\n divw %bx\n9: popw %si\n popw %di\n popw %bp\n ret\n"
#define AB8_IBL " scasw\n jnz 1f\n incw %bx\n addw (%di), %dx\n1: addw $2, %di\n"
__asm__(".section .rm16, \"ax\"\n.code16\n"
        /* Listing 8.3 */
        ".p2align 1\nrm_fia83:\n pushw %bp\n movw %sp, %bp\n pushw %di\n pushw %si\n"
        " subw %dx, %dx\n movw %dx, %bx\n movw 6(%bp), %si\n movw 4(%bp), %ax\n"
        "2: leaw 4(%si), %di\n movw 2(%si), %cx\n jcxz 3f\n"
        "4: cmpw %ax, (%di)\n jnz 5f\n incw %bx\n addw 2(%di), %dx\n5: addw $4, %di\n loop 4b\n"
        "3:" AB8_END
        /* Listing 8.4 */
        ".p2align 1\nrm_fia84:\n pushw %bp\n movw %sp, %bp\n pushw %di\n pushw %si\n"
        " movw %ds, %di\n movw %di, %es\n cld\n"
        " subw %dx, %dx\n movw %dx, %bx\n movw 6(%bp), %si\n movw 4(%bp), %ax\n"
        "2: leaw 4(%si), %di\n movw 2(%si), %cx\n jcxz 3f\n movw %cx, %bp\n addw $7, %cx\n"
        " shrw $1, %cx\n shrw $1, %cx\n shrw $1, %cx\n andw $7, %bp\n shlw $1, %bp\n"
        " jmp *%cs:(rm_fia84_t - rm_base)(%bp)\n"
        ".p2align 1\nrm_fia84_t: .word rm_fia84_8 - rm_base, rm_fia84_1 - rm_base,"
        " rm_fia84_2 - rm_base, rm_fia84_3 - rm_base, rm_fia84_4 - rm_base, rm_fia84_5 - rm_base,"
        " rm_fia84_6 - rm_base, rm_fia84_7 - rm_base\n"
        ".p2align 1\n"
        "6:\nrm_fia84_8:" AB8_IBL "rm_fia84_7:" AB8_IBL "rm_fia84_6:" AB8_IBL "rm_fia84_5:" AB8_IBL
        "rm_fia84_4:" AB8_IBL "rm_fia84_3:" AB8_IBL "rm_fia84_2:" AB8_IBL "rm_fia84_1:" AB8_IBL
        " loop 6b\n"
        "3:" AB8_END
        /* Listing 8.6 */
        ".p2align 1\nrm_fia86:\n pushw %bp\n movw %sp, %bp\n pushw %di\n pushw %si\n"
        " movw %ds, %di\n movw %di, %es\n cld\n movw 6(%bp), %si\n movw 4(%bp), %ax\n"
        " subw %dx, %dx\n movw %dx, %bp\n"
        "2: movw 2(%si), %cx\n jcxz 3f\n movw %cx, %bx\n shlw $1, %bx\n leaw 4(%si), %di\n"
        "4: repnz scasw\n jnz 3f\n incw %bp\n addw -2(%bx,%di), %dx\n andw %cx, %cx\n jnz 4b\n"
        "3: movw (%si), %si\n andw %si, %si\n jnz 2b\n subw %ax, %ax\n andw %bp, %bp\n jz 9f\n"
        " xchgw %dx, %ax\n divw %bp\n9: popw %si\n popw %di\n popw %bp\n ret\n"
        ".code32\n.text\n");
RM_LISTING(rm_ab83, "", AB8_CALL("rm_fia83"));
RM_LISTING(rm_ab84, "", AB8_CALL("rm_fia84"));
RM_LISTING(rm_ab86, "", AB8_CALL("rm_fia86"));
RM_KERNEL_DATA(k_ab83, rm_ab83, ab8_data1)
RM_KERNEL_DATA(k_ab84, rm_ab84, ab8_data1)
RM_KERNEL_DATA(k_ab86, rm_ab86, ab8_data2)

void hw_main(void)
{
    read_mailbox();
    KERNEL();
    outb(0xf4, 0); /* exit port: status 0 */
}

__asm__(".globl _start\n_start:\n mov $0x9f000, %esp\n call hw_main\n1: hlt\n jmp 1b\n");
