/* The bare-metal test runtime (see bm.h). */
#include "bm.h"

uint64_t gdt[GDT_ENTRIES] __attribute__((aligned(8)));
uint64_t idt[256] __attribute__((aligned(8)));
struct tss main_tss __attribute__((aligned(16)));
volatile uint32_t last_vector, last_err, last_cr2, last_eip, last_cs, exc_count;
volatile uint32_t last_frame_esp, last_frame_ebp;
volatile uint32_t catch_active, recover_esp;
void (*volatile user_fn)(void);
volatile uint32_t user_ds_seen, user_es_seen;
volatile uint32_t cg_esp, cg_cs, cg_frame[6];
static unsigned fails;

uint8_t kstack[8192] __attribute__((aligned(16)));
uint8_t user_stack[8192] __attribute__((aligned(16)));
#define KSTACK_TOP ((uint32_t)(kstack + sizeof kstack))

void puts_(const char *s)
{
    while (*s)
        outb(0xe9, (uint8_t)*s++);
}

void puthex(uint32_t v)
{
    puts_("0x");
    for (int i = 28; i >= 0; i -= 4)
        outb(0xe9, (uint8_t) "0123456789abcdef"[(v >> i) & 15]);
}

void check(const char *name, int ok)
{
    puts_(ok ? "PASS " : "FAIL ");
    puts_(name);
    puts_("\n");
    if (!ok) fails++;
}

void check_eq(const char *name, uint32_t got, uint32_t want)
{
    if (got == want) {
        check(name, 1);
        return;
    }
    fails++;
    puts_("FAIL ");
    puts_(name);
    puts_(": got ");
    puthex(got);
    puts_(" want ");
    puthex(want);
    puts_("\n");
}

void finish(void)
{
    puts_(fails ? "DONE with failures\n" : "DONE\n");
    for (;;)
        __asm__ volatile("cli; hlt");
}

void gdt_set(uint16_t sel, uint32_t base, uint32_t limit, uint8_t access, uint8_t flags)
{
    uint64_t d = (limit & 0xffff) | ((uint64_t)(base & 0xffffff) << 16) | ((uint64_t)access << 40) |
                 ((uint64_t)((limit >> 16) & 0xf) << 48) | ((uint64_t)(flags & 0xf0) << 48) |
                 ((uint64_t)(base >> 24) << 56);
    gdt[sel >> 3] = d;
}

void gate_set(uint64_t *table, unsigned idx, uint16_t sel, uint32_t off, uint8_t attr,
              uint8_t params)
{
    table[idx] = (off & 0xffff) | ((uint64_t)sel << 16) | ((uint64_t)params << 32) |
                 ((uint64_t)attr << 40) | ((uint64_t)(off >> 16) << 48);
}

void tss_set(uint16_t sel, struct tss *t, uint32_t limit)
{
    gdt_set(sel, (uint32_t)t, limit, 0x89, 0x00); /* 32-bit TSS, available */
}

extern char exc0[], exc1[], exc2[], exc3[], exc4[], exc5[], exc6[], exc7[], exc8[], exc9[], exc10[],
    exc11[], exc12[], exc13[], exc14[], exc15[], exc16[], exc17[], exc18[], exc19[], exc0x81[],
    isr80[], cg_target[], catch_recover[], enter_user[];
static char *const exc_stubs[20] = {exc0,  exc1,  exc2,  exc3,  exc4,  exc5,  exc6,
                                    exc7,  exc8,  exc9,  exc10, exc11, exc12, exc13,
                                    exc14, exc15, exc16, exc17, exc18, exc19};

void exc_c(struct frame *f)
{
    last_vector = f->vector;
    last_err = f->err;
    last_eip = f->eip;
    last_cs = f->cs;
    last_frame_ebp = f->ebp;
    last_frame_esp = (f->cs & 3) ? f->esp : 0;
    exc_count++;
    if (f->vector == 14) __asm__ volatile("mov %%cr2,%0" : "=r"(last_cr2));
    if (catch_active) {
        ((void (*)(void))catch_recover)();
    }
    puts_("FAIL unexpected exception ");
    puthex(f->vector);
    puts_(" err ");
    puthex(f->err);
    puts_(" at ");
    puthex(f->cs);
    puts_(":");
    puthex(f->eip);
    puts_("\n");
    finish();
}

volatile uint32_t isr80_cs, isr80_ss, isr80_esp, isr80_frame_at;
void isr80_c(struct frame *f)
{
    isr80_cs = f->cs;
    isr80_ss = f->ss;
    isr80_esp = f->esp;
    isr80_frame_at = (uint32_t)f;
    f->eax = 0x1234;
}

int run_user(void (*fn)(void))
{
    user_fn = fn;
    return catch_call((void (*)(void))enter_user);
}

void expect_exc(const char *name, void (*fn)(void), int vec, uint32_t err)
{
    int v = catch_call(fn);
    if (v == vec && last_err == err) {
        check(name, 1);
        return;
    }
    fails++;
    puts_("FAIL ");
    puts_(name);
    puts_(": vector ");
    puthex((uint32_t)v);
    puts_(" err ");
    puthex(last_err);
    puts_(" want ");
    puthex((uint32_t)vec);
    puts_(" err ");
    puthex(err);
    puts_("\n");
}

void sys_init(void)
{
    gdt_set(SEL_KCODE, 0, 0xfffff, 0x9b, 0xc0);
    gdt_set(SEL_KDATA, 0, 0xfffff, 0x93, 0xc0);
    gdt_set(SEL_UCODE, 0, 0xfffff, 0xfb, 0xc0);
    gdt_set(SEL_UDATA, 0, 0xfffff, 0xf3, 0xc0);
    gate_set(gdt, SEL_CGATE >> 3, SEL_KCODE, (uint32_t)cg_target, 0xec, 2); /* 386 call gate */

    /* Main TSS: ring-0 stack, I/O bitmap allowing only port 0xE9. */
    main_tss.ss0 = SEL_KDATA;
    main_tss.esp0 = KSTACK_TOP;
    main_tss.iomap = 104;
    for (unsigned i = 0; i < sizeof main_tss.iobitmap; i++)
        main_tss.iobitmap[i] = 0xff;
    main_tss.iobitmap[0xe9 / 8] &= (uint8_t) ~(1u << (0xe9 & 7));
    tss_set(SEL_TSS, &main_tss, sizeof main_tss - 1);

    for (unsigned v = 0; v < 20; v++)
        gate_set(idt, v, SEL_KCODE, (uint32_t)exc_stubs[v], 0x8e, 0);
    gate_set(idt, 0x80, SEL_KCODE, (uint32_t)isr80, 0xee, 0);   /* DPL 3 interrupt gate */
    gate_set(idt, 0x81, SEL_KCODE, (uint32_t)exc0x81, 0xef, 0); /* DPL 3 trap gate */
    gate_set(idt, 0x82, SEL_KCODE, (uint32_t)isr80, 0x6e, 0);   /* DPL 3, not present */
    gate_set(idt, 0x83, SEL_KCODE, (uint32_t)isr80, 0x8e, 0);   /* DPL 0 */

    struct __attribute__((packed)) {
        uint16_t limit;
        uint32_t base;
    } gdtr = {sizeof gdt - 1, (uint32_t)gdt}, idtr = {sizeof idt - 1, (uint32_t)idt};
    __asm__ volatile("lgdt %0; lidt %1" ::"m"(gdtr), "m"(idtr));
    __asm__ volatile("ljmp $0x08, $1f\n1:\n"
                     "mov $0x10, %%ax; mov %%ax, %%ds; mov %%ax, %%es; mov %%ax, %%fs;"
                     "mov %%ax, %%gs; mov %%ax, %%ss" ::
                         : "eax", "memory");
    __asm__ volatile("ltr %w0" ::"r"(SEL_TSS));
}

void bm_main(void)
{
    sys_init();
    puts_("bare-metal test start\n");
    test_main();
    finish();
}
