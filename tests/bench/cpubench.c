/* A fixed bare-metal CPU workload for `scripts/bench cpu`: integer loops,
 * memory copies and calls, about 100 million instructions.  Built a second
 * time with -DCPUBENCH_SMALL (about 3 million instructions, the same three
 * parts) for the callgrind figures, which run some 50 times slower.  It prints a
 * checksum on the debug console so a wrong result cannot pass as fast, and
 * ends the run through the exit port.  Entered in flat 32-bit protected mode
 * by the ELF loader (emu/elfload.c). */
#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port));
}

static void puts_e9(const char *s)
{
    while (*s)
        outb(0xe9, (uint8_t)*s++);
}

static void put_hex(uint32_t v)
{
    for (int i = 28; i >= 0; i -= 4)
        outb(0xe9, (uint8_t) "0123456789abcdef"[(v >> i) & 15]);
}

#ifdef CPUBENCH_SMALL
#define INTEGER_ROUNDS 100000u
#define COPY_ROUNDS    3u
#define FIB_N          20u
#else
#define INTEGER_ROUNDS 4000000u
#define COPY_ROUNDS    60u
#define FIB_N          25u
#endif

static uint8_t src[65536], dst[65536];

/* Integer loop: a xorshift generator folded into a checksum. */
static uint32_t integer_loop(uint32_t n)
{
    uint32_t x = 2463534242u, sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        sum += (x & 0xff) * 3 + (x >> 24);
    }
    return sum;
}

/* Memory copies: byte loop and rep movsd. */
static uint32_t copy_loop(uint32_t rounds)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    for (uint32_t r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < sizeof src; i++)
            dst[i] = src[i] ^ (uint8_t)r;
        uint32_t count = sizeof src / 4;
        void *d = dst, *s = src;
        __asm__ volatile("rep movsl" : "+D"(d), "+S"(s), "+c"(count) : : "memory");
        sum += dst[r & 0xffff];
    }
    return sum;
}

/* Calls: naive recursion. */
static uint32_t fib(uint32_t n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

void bench_main(void)
{
    uint32_t a = integer_loop(INTEGER_ROUNDS);
    uint32_t b = copy_loop(COPY_ROUNDS);
    uint32_t c = fib(FIB_N);
    puts_e9("cpubench: ");
    put_hex(a);
    outb(0xe9, ' ');
    put_hex(b);
    outb(0xe9, ' ');
    put_hex(c);
    outb(0xe9, '\n');
    outb(0xf4, 0); /* exit port: the run ends with status 0 */
    for (;;)
        __asm__ volatile("cli; hlt");
}

__asm__(".globl _start\n_start:\n mov $0x9f000, %esp\n call bench_main\n1: hlt\n jmp 1b\n");
