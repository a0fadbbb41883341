/* Paging: #PF with CR2 and error codes (not present, write to read-only
 * with CR0.WP in ring 0, user access to a supervisor page), A/D bits,
 * INVLPG, CR3 reload, and 4 MB pages (CR4.PSE, Pentium only). */
#include "bm.h"

static uint32_t pd[1024] __attribute__((aligned(4096)));
static uint32_t pt[2][1024] __attribute__((aligned(4096)));
static volatile uint8_t tp[4][4096] __attribute__((aligned(4096)));
static volatile uint32_t sink, marker = 0x4d4d4d4d;

#define P  1u
#define RW 2u
#define US 4u
#define A  0x20u
#define D  0x40u
#define PS 0x80u

static uint32_t *pte_of(const volatile void *p)
{
    uint32_t a = (uint32_t)p;
    return &pt[a >> 22][(a >> 12) & 1023];
}

static volatile uint32_t *target;
static void do_read(void)
{
    sink = *target;
}
static void do_write(void)
{
    *target = 0x1234;
}

static void expect_pf(const char *name, void (*fn)(void), volatile void *addr, uint32_t err,
                      int user)
{
    target = (volatile uint32_t *)addr;
    last_cr2 = 0;
    int v = user ? run_user(fn) : catch_call(fn);
    check_eq(name, (uint32_t)v, 14);
    puts_("  ");
    check_eq(name, last_err, err);
    puts_("  ");
    check_eq(name, last_cr2, (uint32_t)addr);
}

void test_main(void)
{
    for (unsigned i = 0; i < 2; i++) {
        pd[i] = (uint32_t)pt[i] | P | RW | US;
        for (unsigned j = 0; j < 1024; j++)
            pt[i][j] = ((i * 1024 + j) << 12) | P | RW | US;
    }
    write_cr3((uint32_t)pd);
    write_cr0(read_cr0() | 0x80000000u);
    check("paging_on", 1);

    tp[0][16] = 1;
    *pte_of(tp[0]) &= ~P;
    invlpg(tp[0]);
    expect_pf("pf_read_not_present", do_read, &tp[0][16], 0, 0);
    expect_pf("pf_write_not_present", do_write, &tp[0][32], 2, 0);
    expect_pf("pf_user_not_present", do_read, &tp[0][48], 4, 1);
    *pte_of(tp[0]) |= P;
    invlpg(tp[0]);

    /* Read-only page: ring 0 writes fault only with CR0.WP. */
    *pte_of(tp[1]) &= ~RW;
    invlpg(tp[1]);
    write_cr0(read_cr0() & ~0x10000u);
    target = (volatile uint32_t *)&tp[1][8];
    check_eq("ro_write_wp0_ok", (uint32_t)catch_call(do_write), (uint32_t)-1);
    check_eq("ro_write_wp0_value", tp[1][8], 0x34);
    write_cr0(read_cr0() | 0x10000u);
    expect_pf("pf_ro_write_wp1", do_write, &tp[1][12], 3, 0);
    expect_pf("pf_ro_write_user", do_write, &tp[1][12], 7, 1);
    write_cr0(read_cr0() & ~0x10000u);

    /* Supervisor page: user reads and writes fault with P=1 U=1. */
    *pte_of(tp[2]) &= ~US;
    invlpg(tp[2]);
    expect_pf("pf_user_read_supervisor", do_read, &tp[2][4], 5, 1);
    expect_pf("pf_user_write_supervisor", do_write, &tp[2][4], 7, 1);
    target = (volatile uint32_t *)&tp[2][4];
    check_eq("supervisor_read_ok", (uint32_t)catch_call(do_read), (uint32_t)-1);
    /* U/S cleared in the PDE only (4-8 MB, nothing else lives there). */
    *pte_of(tp[2]) |= US;
    pd[1] &= ~US;
    write_cr3((uint32_t)pd);
    expect_pf("pf_user_pde_supervisor", do_read, (void *)0x500010, 5, 1);
    pd[1] |= US;
    write_cr3((uint32_t)pd);

    /* Accessed and dirty bits. */
    uint32_t *pte = pte_of(tp[3]);
    *pte &= ~(A | D);
    pd[(uint32_t)tp[3] >> 22] &= ~A;
    write_cr3((uint32_t)pd);
    sink = tp[3][0];
    check("pte_accessed_on_read", *pte & A);
    check("pte_not_dirty_on_read", !(*pte & D));
    check("pde_accessed", pd[(uint32_t)tp[3] >> 22] & A);
    tp[3][0] = 5;
    check("pte_dirty_on_write", *pte & D);

    /* INVLPG: remap tp[3] onto tp[0]'s frame. */
    tp[0][100] = 0xaa;
    tp[3][100] = 0xbb;
    uint32_t old = *pte;
    *pte = (old & 0xfffu) | ((uint32_t)tp[0] & ~0xfffu);
    invlpg(tp[3]);
    check_eq("invlpg_new_mapping", tp[3][100], 0xaa);
    *pte = old;
    write_cr3((uint32_t)pd);
    check_eq("cr3_reload_flushes", tp[3][100], 0xbb);

    /* 4 MB pages (CPUID.1:EDX.PSE). */
    uint32_t a = 1, b, c, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "=c"(c), "=d"(d));
    if (!(d & 8)) {
        puts_("SKIP pse_4mb (no PSE)\n");
    } else {
        write_cr4(read_cr4() | 0x10u);
        pd[2] = 0 | PS | P | RW; /* linear 8 MB..12 MB -> physical 0..4 MB */
        write_cr3((uint32_t)pd);
        volatile uint32_t *alias = (volatile uint32_t *)(0x800000u + (uint32_t)&marker);
        check_eq("pse_4mb_read", *alias, 0x4d4d4d4d);
        check("pse_pde_accessed", pd[2] & A);
        check("pse_pde_not_dirty", !(pd[2] & D));
        *alias = 0x12121212;
        check_eq("pse_4mb_write", marker, 0x12121212);
        check("pse_pde_dirty", pd[2] & D);
        pd[2] = 0;
        invlpg(alias);
        expect_pf("pf_pse_unmapped", do_read, (void *)alias, 0, 0);
        write_cr4(read_cr4() & ~0x10u);
    }
    write_cr0(read_cr0() & ~0x80000000u);
    check("paging_off", 1);
}
