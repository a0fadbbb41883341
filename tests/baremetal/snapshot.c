/* For the snapshot test (tests/unit/test_snapshot.c): a machine with state
 * everywhere at the snapshot point.  Paging on, the PIT ticking at 1 kHz
 * into the PIC, the RTC's periodic interrupt on, the UART transmitting;
 * then the snapshot point (the marker port), then a workload whose result
 * depends on all of it: ticks counted by two interrupt handlers, PIT and
 * TSC readings, RTC registers, the UART's status as characters leave. */
#include "bm.h"

__asm__(".text\n"
        ".globl irq0_stub\n"
        "irq0_stub:\n"
        "   pushl %eax\n"
        "   incl ticks\n"
        "   movb $0x20, %al\n"
        "   outb %al, $0x20\n"
        "   popl %eax\n"
        "   iret\n"
        ".globl irq8_stub\n"
        "irq8_stub:\n"
        "   pushl %eax\n"
        "   incl rtc_ticks\n"
        "   movb $0x0c, %al\n" /* read register C: the RTC drops its request */
        "   outb %al, $0x70\n"
        "   inb $0x71, %al\n"
        "   movb $0x20, %al\n"
        "   outb %al, $0xa0\n"
        "   outb %al, $0x20\n"
        "   popl %eax\n"
        "   iret\n");
void irq0_stub(void);
void irq8_stub(void);
volatile uint32_t ticks, rtc_ticks;

static inline void outl(uint16_t port, uint32_t v)
{
    __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port));
}

static uint32_t page_dir[1024] __attribute__((aligned(4096)));
static uint32_t page_table[4][1024] __attribute__((aligned(4096)));

static uint32_t rdtsc_low(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return lo ^ hi;
}

static uint8_t cmos(uint8_t reg)
{
    outb(0x70, reg);
    return inb(0x71);
}

static uint32_t mix(uint32_t h, uint32_t v)
{
    return (h ^ v) * 16777619u;
}

void test_main(void)
{
    /* Identity-mapped paging over the first 16 MB. */
    for (unsigned t = 0; t < 4; t++) {
        for (unsigned i = 0; i < 1024; i++)
            page_table[t][i] = (t * 1024 + i) * 4096u | 3;
        page_dir[t] = (uint32_t)page_table[t] | 3;
    }
    write_cr3((uint32_t)page_dir);
    write_cr0(read_cr0() | 0x80000000u);

    /* PIC: vectors 0x20/0x28, IRQ 0 and the cascade and IRQ 8 open. */
    outb(0x20, 0x11), outb(0x21, 0x20), outb(0x21, 0x04), outb(0x21, 0x01);
    outb(0xa0, 0x11), outb(0xa1, 0x28), outb(0xa1, 0x02), outb(0xa1, 0x01);
    outb(0x21, 0xfa), outb(0xa1, 0xfe);
    gate_set(idt, 0x20, SEL_KCODE, (uint32_t)irq0_stub, 0x8e, 0);
    gate_set(idt, 0x28, SEL_KCODE, (uint32_t)irq8_stub, 0x8e, 0);
    /* PIT channel 0, mode 2, 1193 clocks (1 kHz). */
    outb(0x43, 0x34), outb(0x40, 1193 & 0xff), outb(0x40, 1193 >> 8);
    /* RTC periodic interrupt at 1024 Hz (rate 6). */
    outb(0x70, 0x0a), outb(0x71, 0x26);
    outb(0x70, 0x0b), outb(0x71, (uint8_t)(cmos(0x0b) | 0x40));
    /* UART at 115200 baud, FIFOs on. */
    outb(0x3fb, 0x80), outb(0x3f8, 1), outb(0x3f9, 0), outb(0x3fb, 0x03), outb(0x3fa, 0x07);
    __asm__ volatile("sti");
    while (ticks < 5)
        __asm__ volatile("hlt");
    for (const char *p = "booted\n"; *p; p++)
        outb(0x3f8, (uint8_t)*p);

    /* The x87 with state across the point: three values on the stack, the
     * rounding control up, a masked precision flag standing. */
    static const uint16_t cw_up = 0x0b7f;
    __asm__ volatile("fninit; fldcw %0; fldpi; fld1; fldl2e" ::"m"(cw_up));

    outl(0x600, 0x50414e53u); /* the snapshot point */

    static const int32_t thousand = 1000;
    volatile int32_t fpu_result = 0;
    volatile uint16_t fpu_sw = 0;
    __asm__ volatile("faddp; fmulp; fimull %2; fistpl %0; fnstsw %1"
                     : "=m"(fpu_result), "=m"(fpu_sw)
                     : "m"(thousand));
    check_eq("snapshot_fpu_result", (uint32_t)fpu_result, 7674); /* pi (1 + log2 e) 1000, up */
    check_eq("snapshot_fpu_sw", fpu_sw & 0x3fff, 0x0220); /* TOP 0 again, C1 (rounded up), PE */

    /* Time at once, before a HLT could hide a clock off by one. */
    uint32_t h = mix(2166136261u, rdtsc_low());
    for (unsigned i = 0; i < 40; i++) {
        __asm__ volatile("hlt");
        outb(0x43, 0x00); /* latch channel 0 */
        uint32_t pit = inb(0x40);
        pit |= (uint32_t)inb(0x40) << 8;
        h = mix(h, pit);
        h = mix(h, rdtsc_low());
        h = mix(h, ticks);
        h = mix(h, rtc_ticks);
        h = mix(h, cmos(0x00));
        h = mix(h, inb(0x3fd)); /* LSR: THRE/TEMT as characters leave */
        outb(0x3f8, (uint8_t)('a' + i % 26));
    }
    __asm__ volatile("cli");
    puts_("ticks ");
    puthex(ticks);
    puts_(" rtc ");
    puthex(rtc_ticks);
    puts_(" hash ");
    puthex(h);
    puts_("\n");
    check("snapshot_workload", ticks >= 10 && rtc_ticks > 20);
}
