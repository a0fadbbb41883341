/* The bare-metal test runtime: output on the debug console (port 0xE9),
 * GDT/IDT/TSS set-up, exception capture and ring-3 excursions. */
#ifndef BM_H
#define BM_H

#include <stdint.h>

/* GDT selectors. */
#define SEL_KCODE    0x08
#define SEL_KDATA    0x10
#define SEL_UCODE    0x1b
#define SEL_UDATA    0x23
#define SEL_TSS      0x28
#define SEL_DFTSS    0x30
#define SEL_TSS2     0x38
#define SEL_SLOT_A   0x40
#define SEL_SLOT_B   0x48
#define SEL_CGATE    0x53 /* call gate, DPL 3, to ring 0 */
#define SEL_SMALLTSS 0x68
#define GDT_ENTRIES  16

struct tss {
    uint16_t link, r0;
    uint32_t esp0;
    uint16_t ss0, r1;
    uint32_t esp1;
    uint16_t ss1, r2;
    uint32_t esp2;
    uint16_t ss2, r3;
    uint32_t cr3, eip, eflags, eax, ecx, edx, ebx, esp, ebp, esi, edi;
    uint16_t es, r4, cs, r5, ss, r6, ds, r7, fs, r8, gs, r9, ldt, r10, trap, iomap;
    uint8_t iobitmap[8192 + 1];
} __attribute__((packed));

/* What exc_common pushes (see stubs.S). */
struct frame {
    uint32_t edi, esi, ebp, esp_, ebx, edx, ecx, eax;
    uint32_t es, ds;
    uint32_t vector, err, eip, cs, eflags, esp, ss; /* esp/ss only from ring 3 */
};

extern uint64_t gdt[GDT_ENTRIES];
extern uint64_t idt[256];
extern struct tss main_tss;
extern volatile uint32_t last_vector, last_err, last_cr2, last_eip, last_cs;
extern volatile uint32_t exc_count;
/* EBP and (from ring 3) ESP of the code the last exception stopped. */
extern volatile uint32_t last_frame_esp, last_frame_ebp;
extern void (*volatile user_fn)(void);
extern volatile uint32_t user_ds_seen, user_es_seen;
extern uint8_t kstack[8192], user_stack[8192];
extern volatile uint32_t cg_esp, cg_cs, cg_frame[6];
extern volatile uint32_t isr80_cs, isr80_ss, isr80_esp, isr80_frame_at;

static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port));
}
static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint32_t read_cr0(void)
{
    uint32_t v;
    __asm__ volatile("mov %%cr0,%0" : "=r"(v));
    return v;
}
static inline void write_cr0(uint32_t v)
{
    __asm__ volatile("mov %0,%%cr0" ::"r"(v) : "memory");
}
static inline uint32_t read_cr3(void)
{
    uint32_t v;
    __asm__ volatile("mov %%cr3,%0" : "=r"(v));
    return v;
}
static inline void write_cr3(uint32_t v)
{
    __asm__ volatile("mov %0,%%cr3" ::"r"(v) : "memory");
}
static inline uint32_t read_cr4(void)
{
    uint32_t v;
    __asm__ volatile("mov %%cr4,%0" : "=r"(v));
    return v;
}
static inline void write_cr4(uint32_t v)
{
    __asm__ volatile("mov %0,%%cr4" ::"r"(v) : "memory");
}
static inline void invlpg(const volatile void *p)
{
    __asm__ volatile("invlpg (%0)" ::"r"(p) : "memory");
}

void puts_(const char *s);
void puthex(uint32_t v);
void check(const char *name, int ok);
void check_eq(const char *name, uint32_t got, uint32_t want);
void finish(void) __attribute__((noreturn));

void gdt_set(uint16_t sel, uint32_t base, uint32_t limit, uint8_t access, uint8_t flags);
void gate_set(uint64_t *table, unsigned idx, uint16_t sel, uint32_t off, uint8_t attr,
              uint8_t params);
void tss_set(uint16_t sel, struct tss *t, uint32_t limit);
/* Flat GDT, IDT with the exception stubs, main TSS loaded in TR. */
void sys_init(void);

/* Runs fn; returns -1 if it returns normally, else the vector of the
 * exception that ended it (last_err etc. hold the details). */
int catch_call(void (*fn)(void));
/* Runs fn at CPL 3 (IRET to ring 3); it ends with INT 0x81 (returns 0x81)
 * or with the exception that stopped it. */
int run_user(void (*fn)(void));

/* Asserts that fn raised `vec` with error code `err`. */
void expect_exc(const char *name, void (*fn)(void), int vec, uint32_t err);

/* Defined by each test program. */
void test_main(void);

#endif
