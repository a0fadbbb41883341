/* The CPU system half called directly: CPUID, MSRs, control registers and
 * the page walk, with their exceptions caught at a local landing pad. */
#include <glib.h>
#include <setjmp.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "emu/config.h"
#include "emu/machine.h"

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    jmp_buf jb;
} fixture;

static void fx_init(fixture *f, const char *cpu)
{
    GError *err = NULL;
    f->cfg = nm_config_new();
    g_assert_true(nm_config_set(f->cfg, "test", "cpu", cpu, &err));
    f->m = nm_machine_new(f->cfg, &err);
    g_assert_no_error(err);
    f->c = nm_cpu_new(f->m);
    nm_cpu_enter_flat32(f->c, 0x1000, 0x8000);
}

static void fx_free(fixture *f)
{
    f->c->fault_jmp = NULL;
    nm_cpu_free(f->c);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

/* Runs `body`; returns -1 or the vector it raised (error in pending_error). */
#define CATCH(f, body)                                                                             \
    ({                                                                                             \
        volatile int v_ = -1;                                                                      \
        (f)->c->fault_jmp = &(f)->jb;                                                              \
        if (setjmp((f)->jb))                                                                       \
            v_ = (f)->c->pending_vector;                                                           \
        else {                                                                                     \
            body;                                                                                  \
        }                                                                                          \
        (f)->c->fault_jmp = NULL;                                                                  \
        v_;                                                                                        \
    })

static void test_cpuid(void)
{
    fixture f;
    fx_init(&f, "386dx-40");
    f.c->gpr[NM_EAX] = 0;
    g_assert_cmpint(CATCH(&f, cpu_cpuid(f.c)), ==, NM_EXC_UD);
    fx_free(&f);

    fx_init(&f, "pentium-100");
    f.c->gpr[NM_EAX] = 0;
    g_assert_cmpint(CATCH(&f, cpu_cpuid(f.c)), ==, -1);
    g_assert_cmphex(f.c->gpr[NM_EAX], ==, 1);
    char vendor[13] = {0};
    memcpy(vendor, &f.c->gpr[NM_EBX], 4);
    memcpy(vendor + 4, &f.c->gpr[NM_EDX], 4);
    memcpy(vendor + 8, &f.c->gpr[NM_ECX], 4);
    g_assert_cmpstr(vendor, ==, "GenuineIntel");
    f.c->gpr[NM_EAX] = 1;
    cpu_cpuid(f.c);
    g_assert_cmphex(f.c->gpr[NM_EAX], ==, 0x525);
    g_assert_cmphex(f.c->gpr[NM_EDX], ==, f.c->model->cpuid_features);
    g_assert_cmphex(f.c->gpr[NM_EBX], ==, 0);
    f.c->gpr[NM_EAX] = 7; /* above the maximum: the highest basic leaf */
    cpu_cpuid(f.c);
    g_assert_cmphex(f.c->gpr[NM_EAX], ==, 0x525);
    fx_free(&f);
}

static void test_msr_tsc(void)
{
    fixture f;
    fx_init(&f, "pentium-60");
    f.m->clock.cycles = 1000;
    f.c->gpr[NM_ECX] = 0x10;
    f.c->gpr[NM_EDX] = 0;
    f.c->gpr[NM_EAX] = 5000;
    g_assert_cmpint(CATCH(&f, cpu_wrmsr(f.c)), ==, -1);
    f.m->clock.cycles = 1100;
    g_assert_cmpint(CATCH(&f, cpu_rdmsr(f.c)), ==, -1);
    g_assert_cmphex(f.c->gpr[NM_EAX], ==, 5100);
    g_assert_cmpuint(cpu_rdtsc_value(f.c), ==, 5100);
    f.c->gpr[NM_ECX] = 0x1234;
    g_assert_cmpint(CATCH(&f, cpu_rdmsr(f.c)), ==, NM_EXC_GP);
    g_assert_cmpint(CATCH(&f, cpu_wrmsr(f.c)), ==, NM_EXC_GP);
    /* The MSRs Linux 6.1 probes with rdmsr_safe while booting (feature
     * control 0x3a, misc features 0x140): the P5 has neither, #GP(0). */
    f.c->gpr[NM_ECX] = 0x3a;
    g_assert_cmpint(CATCH(&f, cpu_rdmsr(f.c)), ==, NM_EXC_GP);
    f.c->gpr[NM_ECX] = 0x140;
    g_assert_cmpint(CATCH(&f, cpu_rdmsr(f.c)), ==, NM_EXC_GP);
    f.c->gpr[NM_ECX] = 1; /* P5_MC_TYPE */
    g_assert_cmpint(CATCH(&f, cpu_rdmsr(f.c)), ==, -1);
    /* CR4.TSD: RDTSC faults outside ring 0. */
    cpu_write_cr(f.c, 4, NM_CR4_TSD);
    f.c->cpl = 3;
    g_assert_cmpint(CATCH(&f, cpu_rdtsc_value(f.c)), ==, NM_EXC_GP);
    g_assert_cmpint(CATCH(&f, cpu_rdmsr(f.c)), ==, NM_EXC_GP);
    fx_free(&f);

    fx_init(&f, "486dx2-66");
    f.c->gpr[NM_ECX] = 0x10;
    g_assert_cmpint(CATCH(&f, cpu_rdmsr(f.c)), ==, NM_EXC_UD);
    fx_free(&f);
}

static void test_control_registers(void)
{
    fixture f;
    fx_init(&f, "386dx-25");
    g_assert_cmpint(CATCH(&f, cpu_write_cr(f.c, 4, 0)), ==, NM_EXC_UD);
    g_assert_cmpint(CATCH(&f, cpu_read_cr(f.c, 4)), ==, NM_EXC_UD);
    fx_free(&f);

    fx_init(&f, "486dx-33");
    /* Reset has the cache off; the flat entry (the ELF loader's) turns it on. */
    g_assert_cmphex(f.c->cr0, ==, NM_CR0_PE | NM_CR0_ET);
    g_assert_cmpint(CATCH(&f, cpu_write_cr(f.c, 4, NM_CR4_VME)), ==, -1);
    g_assert_cmpint(CATCH(&f, cpu_write_cr(f.c, 4, NM_CR4_PSE)), ==, NM_EXC_GP);
    g_assert_cmpint(CATCH(&f, cpu_write_cr(f.c, 0, NM_CR0_PG)), ==, NM_EXC_GP);
    g_assert_cmpint(CATCH(&f, cpu_write_cr(f.c, 0, NM_CR0_PE | NM_CR0_NW)), ==, NM_EXC_GP);
    g_assert_cmpint(CATCH(&f, cpu_write_cr(f.c, 1, 0)), ==, NM_EXC_UD);
    cpu_write_cr(f.c, 0, NM_CR0_PE | NM_CR0_WP);
    g_assert_cmphex(f.c->cr0, ==, NM_CR0_PE | NM_CR0_WP | NM_CR0_ET);
    /* DR4/DR5 alias DR6/DR7 without CR4.DE. */
    cpu_write_dr(f.c, 7, 0x1);
    g_assert_cmphex(cpu_read_dr(f.c, 5), ==, 0x401);
    fx_free(&f);

    fx_init(&f, "pentium-100");
    cpu_write_cr(f.c, 4, NM_CR4_DE | NM_CR4_PSE);
    g_assert_cmpint(CATCH(&f, cpu_read_dr(f.c, 4)), ==, NM_EXC_UD);
    g_assert_cmpint(CATCH(&f, cpu_write_cr(f.c, 4, 0x20 /* PAE */)), ==, NM_EXC_GP);
    f.c->cpl = 3;
    g_assert_cmpint(CATCH(&f, cpu_read_cr(f.c, 0)), ==, NM_EXC_GP);
    g_assert_cmpint(CATCH(&f, cpu_clts(f.c)), ==, NM_EXC_GP);
    fx_free(&f);
}

static uint32_t rd(fixture *f, uint32_t pa)
{
    return nm_mem_read(f->m->mem, pa, 4);
}
static void wr(fixture *f, uint32_t pa, uint32_t v)
{
    nm_mem_write(f->m->mem, pa, v, 4);
}

static void test_page_walk(void)
{
    fixture f;
    fx_init(&f, "pentium-100");
    nm_cpu *c = f.c;
    /* PD at 0x10000, PT at 0x11000: linear 0x400000+ -> PD[1]. */
    wr(&f, 0x10000 + 4, 0x11000 | 7);
    wr(&f, 0x11000 + 5 * 4, 0x55000 | 7);           /* 0x405000: user RW */
    wr(&f, 0x11000 + 6 * 4, 0x66000 | 1);           /* 0x406000: supervisor RO */
    wr(&f, 0x11000 + 7 * 4, 0x77000 | 0);           /* 0x407000: not present */
    wr(&f, 0x10000 + 8 * 4, 0x01800000 | 0x80 | 3); /* 0x2000000: 4 MB, supervisor */
    c->cr3 = 0x10000;
    c->cr0 |= NM_CR0_PG;
    cpu_update_mode(c);
    bool w, u;
    volatile uint32_t pa = 0;

    g_assert_cmpint(CATCH(&f, pa = cpu_page_walk(c, 0x405123, NM_ACC_READ, &w, &u)), ==, -1);
    g_assert_cmphex(pa, ==, 0x55123);
    g_assert_false(w); /* not dirty yet */
    g_assert_true(u);
    g_assert_cmphex(rd(&f, 0x11000 + 5 * 4), ==, 0x55000 | 7 | 0x20);
    g_assert_cmphex(rd(&f, 0x10004) & 0x20, ==, 0x20);
    g_assert_cmpint(CATCH(&f, pa = cpu_page_walk(c, 0x405124, NM_ACC_WRITE | NM_ACC_USER, &w, &u)),
                    ==, -1);
    g_assert_true(w);
    g_assert_cmphex(rd(&f, 0x11000 + 5 * 4), ==, 0x55000 | 7 | 0x60);

    /* Not present: error 0 (supervisor read), CR2. */
    g_assert_cmpint(CATCH(&f, cpu_page_walk(c, 0x407abc, NM_ACC_READ, &w, &u)), ==, NM_EXC_PF);
    g_assert_cmphex(c->pending_error, ==, 0);
    g_assert_cmphex(c->cr2, ==, 0x407abc);
    g_assert_cmpint(CATCH(&f, cpu_page_walk(c, 0x407abc, NM_ACC_WRITE | NM_ACC_USER, &w, &u)), ==,
                    NM_EXC_PF);
    g_assert_cmphex(c->pending_error, ==, 6);
    /* Supervisor page from user: P=1, U/S=1. */
    g_assert_cmpint(CATCH(&f, cpu_page_walk(c, 0x406000, NM_ACC_USER, &w, &u)), ==, NM_EXC_PF);
    g_assert_cmphex(c->pending_error, ==, 5);
    /* Read-only: supervisor write allowed with WP=0 (D set, not cached
     * writable), faults with WP=1. */
    g_assert_cmpint(CATCH(&f, cpu_page_walk(c, 0x406000, NM_ACC_WRITE, &w, &u)), ==, -1);
    g_assert_false(w);
    g_assert_cmphex(rd(&f, 0x11000 + 6 * 4) & 0x60, ==, 0x60);
    c->cr0 |= NM_CR0_WP;
    g_assert_cmpint(CATCH(&f, cpu_page_walk(c, 0x406000, NM_ACC_WRITE, &w, &u)), ==, NM_EXC_PF);
    g_assert_cmphex(c->pending_error, ==, 3);

    /* 4 MB page: only with CR4.PSE. */
    /* PS ignored: 0x1800000 is taken as a page table (all zero: not present). */
    g_assert_cmpint(CATCH(&f, cpu_page_walk(c, 0x2012345, NM_ACC_WRITE, &w, &u)), ==, NM_EXC_PF);
    c->cr4 |= NM_CR4_PSE;
    g_assert_cmpint(CATCH(&f, pa = cpu_page_walk(c, 0x2012345, NM_ACC_WRITE, &w, &u)), ==, -1);
    g_assert_cmphex(pa, ==, 0x1812345);
    g_assert_true(w);
    g_assert_false(u);
    g_assert_cmphex(rd(&f, 0x10000 + 8 * 4) & 0x60, ==, 0x60);
    fx_free(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cpu_sys/cpuid", test_cpuid);
    g_test_add_func("/cpu_sys/msr_tsc", test_msr_tsc);
    g_test_add_func("/cpu_sys/control_registers", test_control_registers);
    g_test_add_func("/cpu_sys/page_walk", test_page_walk);
    return g_test_run();
}
