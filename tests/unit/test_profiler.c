/* The profiler's parts: symbol tables (System.map, ELF), address lookup,
 * the shadow call stacks (nested calls, interrupts, a mismatched RET; per
 * task: switches, IRQ stacks, user mode), and attribution totals equal to
 * the clock's advance exactly. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu/decode.h"
#include "emu/compare.h"
#include "emu/profiler.h"
#include "emu/symbols.h"

static const char system_map[] = "01000000 A phys_startup_32\n"
                                 "c1000000 T _text\n"
                                 "c1000000 T startup_32\n"
                                 "c1000100 t ei_interrupt\n"
                                 "c1000200 T __ei_start_xmit\n"
                                 "c1000280 W weak_fn\n"
                                 "c1000300 D some_data\n"
                                 "c1000400 T _etext\n";

static char *write_temp(const char *text)
{
    char *path = NULL;
    int fd = g_file_open_tmp("nicemu-symbols-XXXXXX", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    close(fd);
    return path;
}

static void test_system_map(void)
{
    g_autofree char *path = write_temp(system_map);
    nm_symtab *t = nm_symtab_new("vmlinux");
    GError *err = NULL;
    g_assert_true(nm_symtab_load_system_map(t, path, &err));
    /* startup_32 and _text alias: the one without a leading underscore wins;
     * data and absolute symbols are left out. */
    g_assert_cmpuint(nm_symtab_count(t), ==, 5);
    uint32_t lo, hi;
    const nm_symbol *s = nm_symtab_lookup(t, 0xc1000050, &lo, &hi);
    g_assert_nonnull(s);
    g_assert_cmpstr(s->name, ==, "startup_32");
    g_assert_cmphex(lo, ==, 0xc1000000);
    g_assert_cmphex(hi, ==, 0xc1000100);
    g_assert_cmpstr(nm_symtab_lookup(t, 0xc1000100, NULL, NULL)->name, ==, "ei_interrupt");
    g_assert_cmpstr(nm_symtab_lookup(t, 0xc10001ff, NULL, NULL)->name, ==, "ei_interrupt");
    g_assert_cmpstr(nm_symtab_lookup(t, 0xc1000200, NULL, NULL)->name, ==, "__ei_start_xmit");
    /* weak_fn runs to _etext (the data symbol between is not text). */
    g_assert_cmpstr(nm_symtab_lookup(t, 0xc10003ff, NULL, NULL)->name, ==, "weak_fn");
    g_assert_null(nm_symtab_lookup(t, 0xbfffffff, &lo, &hi));
    g_assert_cmphex(lo, ==, 0);
    g_assert_cmphex(hi, ==, 0xc1000000);
    nm_symtab_free(t);
    g_unlink(path);

    /* A malformed file: one error naming the line. */
    g_autofree char *bad = write_temp("c1000000 T ok\nthis is not a map\n");
    t = nm_symtab_new("vmlinux");
    g_assert_false(nm_symtab_load_system_map(t, bad, &err));
    g_assert_nonnull(strstr(err->message, ":2:"));
    g_clear_error(&err);
    g_assert_false(nm_symtab_load_system_map(t, "/nonexistent/System.map", &err));
    g_clear_error(&err);
    nm_symtab_free(t);
    g_unlink(bad);
}

static void test_elf(void)
{
    nm_symtab *t = nm_symtab_new("profprog");
    GError *err = NULL;
    g_assert_true(nm_symtab_load_elf(t, NICEMU_PROFPROG_ELF, false, 0, &err));
    g_assert_no_error(err);
    g_assert_cmpuint(nm_symtab_count(t), ==, 4); /* _start h g f */
    g_assert_cmphex(nm_symtab_entry(t), ==, 0x100000);
    const nm_symbol *s = nm_symtab_lookup(t, 0x100000, NULL, NULL);
    g_assert_cmpstr(s->name, ==, "_start");
    const nm_symbol *f = NULL;
    for (size_t i = 0; i < nm_symtab_count(t); i++)
        if (!strcmp(nm_symtab_get(t, i)->name, "f")) f = nm_symtab_get(t, i);
    g_assert_nonnull(f);
    g_assert_cmpuint(f->end - f->start, ==, 5 + 1 + 2 + 1); /* mov imm32, dec, jnz rel8, ret */
    uint32_t f_start = f->start;
    nm_symtab_free(t);

    /* Moved: the symbols follow the load address. */
    uint32_t moved[2];
    for (int k = 0; k < 2; k++) {
        t = nm_symtab_new("profprog");
        g_assert_true(
            nm_symtab_load_elf(t, NICEMU_PROFPROG_ELF, true, 0x400000 + 0x1000u * k, &err));
        moved[k] = nm_symtab_entry(t);
        nm_symtab_free(t);
    }
    g_assert_cmphex(moved[1] - moved[0], ==, 0x1000);
    g_assert_cmphex(moved[0], >=, 0x400000);
    (void)f_start;

    t = nm_symtab_new("x");
    g_assert_false(nm_symtab_load_elf(t, "/nonexistent.elf", false, 0, &err));
    g_clear_error(&err);
    nm_symtab_free(t);

    char *file;
    bool has;
    uint32_t at;
    g_assert_true(nm_symbols_parse_spec("prog.elf@0x8048000", &file, &has, &at));
    g_assert_cmpstr(file, ==, "prog.elf");
    g_assert_true(has);
    g_assert_cmphex(at, ==, 0x8048000);
    g_free(file);
    g_assert_false(nm_symbols_parse_spec("prog.elf@zz", &file, &has, &at));
}

/* ---- the shadow stack, fed by hand ---- */

typedef struct feed {
    nm_clock clock;
    nm_profiler *p;
    const nm_timing_observer *obs;
} feed;

static void feed_init(feed *f)
{
    memset(&f->clock, 0, sizeof f->clock);
    f->p = nm_profiler_new_bare(&f->clock);
    nm_symtab *t = nm_symtab_new("k");
    nm_symtab_add(t, 0x1000, 0x100, "main", true);
    nm_symtab_add(t, 0x2000, 0x100, "a", true);
    nm_symtab_add(t, 0x3000, 0x100, "b", true);
    nm_symtab_add(t, 0x4000, 0x100, "irq", true);
    nm_symtab_add(t, 0x5000, 0x100, "sw", true);
    nm_symtab_add(t, 0x6000, 0x100, "c", true);
    nm_symtab_finish(t);
    nm_profiler_add_symbols(f->p, t, true);
    f->obs = nm_profiler_observer(f->p);
}

/* One instruction at eip (op, length 1), then `next`, costing `clocks`
 * plus `bus` wait cycles charged while it ran. */
static void step(feed *f, uint32_t eip, unsigned op, uint32_t next, uint32_t clocks, uint32_t bus)
{
    nm_insn i = {0};
    i.op = (uint16_t)op;
    i.len = op == NM_OP_CALL ? 5 : 1;
    nm_clock_charge_bus(&f->clock, bus);
    nm_timing_insn_info info = {.eip = eip, .next = next, .cpl = 0, .cpl_next = 0, .retired = true};
    f->obs->insn(f->obs->opaque, &i, &info, clocks);
    f->clock.cycles += clocks;
}

static void entry(feed *f, const char *name, nm_profile_entry *e)
{
    g_assert_true(nm_profiler_get(f->p, name, e));
}

/* Where an instruction runs: privilege level, address space and ESP before
 * and after it. */
typedef struct at {
    uint8_t cpl, cpl_next;
    uint32_t cr3, esp, esp_next;
} at;

static void step_at(feed *f, uint32_t eip, unsigned op, uint32_t next, uint32_t clocks, at w)
{
    nm_insn i = {0};
    i.op = (uint16_t)op;
    i.len = op == NM_OP_CALL ? 5 : 1;
    nm_timing_insn_info info = {.eip = eip,
                                .next = next,
                                .cr3 = w.cr3,
                                .cpl = w.cpl,
                                .cpl_next = w.cpl_next,
                                .esp = w.esp,
                                .esp_next = w.esp_next,
                                .retired = true};
    f->obs->insn(f->obs->opaque, &i, &info, clocks);
    f->clock.cycles += clocks;
}

/* Kernel mode on the stack at `esp` (moving to `esp_next`). */
static at kern(uint32_t esp, uint32_t esp_next)
{
    return (at){.esp = esp, .esp_next = esp_next};
}

static at in_user(uint32_t cr3)
{
    const uint32_t esp = 0xbffff000;
    return (at){.cpl = 3, .cpl_next = 3, .cr3 = cr3, .esp = esp, .esp_next = esp};
}

static at in_kernel(uint32_t cr3, uint32_t esp, uint32_t esp_next)
{
    return (at){.cr3 = cr3, .esp = esp, .esp_next = esp_next};
}

static void assert_incl(feed *f, const char *name, uint64_t self, uint64_t incl, uint64_t calls)
{
    nm_profile_entry e;
    entry(f, name, &e);
    if (e.self_clocks != self || e.incl_clocks != incl || e.calls != calls)
        g_error("%s: self/incl/calls %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                ", want %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                name, e.self_clocks, e.incl_clocks, e.calls, self, incl, calls);
}

/* Two tasks on their own kernel stacks (8K-aligned: A at 0x10000, B at
 * 0x20000) switching like Linux's __switch_to_asm: save ESP, load the
 * other's, RET on the other stack.  Instruction k costs k clocks.  B was
 * never seen before: its first RET finds nothing, which shows it is a task
 * resumed rather than a stack nested on A's. */
static void task_switch_run(feed *f)
{
    nm_profiler_start(f->p);
    const uint32_t a = 0x11f00, b = 0x21f00;
    step_at(f, 0x1000, NM_OP_CALL, 0x2000, 1, kern(a, a - 4));     /* main -> a */
    step_at(f, 0x2000, NM_OP_CALL, 0x5000, 2, kern(a - 4, a - 8)); /* a -> sw */
    step_at(f, 0x5000, NM_OP_MOV, 0x5001, 3, kern(a - 8, a - 8));  /* save A's ESP */
    step_at(f, 0x5001, NM_OP_MOV, 0x5002, 4, kern(a - 8, b - 4));  /* load B's */
    step_at(f, 0x5002, NM_OP_RET, 0x3010, 5, kern(b - 4, b));      /* into b */
    step_at(f, 0x3010, NM_OP_MOV, 0x3011, 6, kern(b, b));          /* b */
    step_at(f, 0x3011, NM_OP_CALL, 0x6000, 7, kern(b, b - 4));     /* b -> c */
    step_at(f, 0x6000, NM_OP_CALL, 0x5000, 8, kern(b - 4, b - 8)); /* c -> sw */
    step_at(f, 0x5000, NM_OP_MOV, 0x5001, 9, kern(b - 8, b - 8));  /* save B's ESP */
    step_at(f, 0x5001, NM_OP_MOV, 0x5002, 10, kern(b - 8, a - 8)); /* load A's */
    step_at(f, 0x5002, NM_OP_RET, 0x2005, 11, kern(a - 8, a - 4)); /* back into a */
    step_at(f, 0x2005, NM_OP_RET, 0x1005, 12, kern(a - 4, a));     /* back into main */
    step_at(f, 0x1005, NM_OP_MOV, 0x1006, 13, kern(a, a));
    nm_profiler_stop(f->p);
}

static void test_stack_task_switch(void)
{
    feed f;
    feed_init(&f);
    task_switch_run(&f);
    /* a ran steps 2-4 and 11-12: B's time in between is not a's. */
    assert_incl(&f, "a", 2 + 12, 2 + 3 + 4 + 11 + 12, 1);
    /* Each task's sw frame: its own MOVs and the RET when it runs again; B's
     * is closed at the end with the time B ran.  B's first RET (step 5) is in
     * no frame. */
    assert_incl(&f, "sw", 3 + 4 + 5 + 9 + 10 + 11, (3 + 4 + 11) + (9 + 10), 2);
    assert_incl(&f, "c", 8, 8 + 9 + 10, 1);
    assert_incl(&f, "b", 6 + 7, 0, 0);
    assert_incl(&f, "main", 1 + 13, 0, 0);
    uint64_t clocks, insns;
    nm_profiler_totals(f.p, &clocks, &insns);
    g_assert_cmpuint(clocks, ==, 91);
    nm_profile_stack_stats ss;
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.resyncs, ==, 1);
    g_assert_cmpuint(ss.unwound, ==, 0);
    g_assert_cmpuint(ss.contexts, ==, 2);
    g_assert_cmpuint(ss.nested, ==, 1);   /* B, until its first RET */
    g_assert_cmpuint(ss.switches, ==, 2); /* A -> B found at that RET, B -> A */
    g_assert_cmpuint(ss.depth, ==, 0);
    nm_profiler_free(f.p);

    /* One shadow stack (region 0): A's RET at step 11 unwinds B's frames
     * and a gets B's time. */
    feed_init(&f);
    nm_profiler_set_stack_region(f.p, 0);
    task_switch_run(&f);
    assert_incl(&f, "a", 2 + 12, 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11 + 12, 1);
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.unwound, ==, 2);
    g_assert_cmpuint(ss.contexts, ==, 1);
    nm_profiler_free(f.p);
}

/* An interrupt from kernel mode whose handler moves to an IRQ stack (Linux
 * i386 call_on_stack: ESP := the IRQ stack's top, CALL, ESP := back): the
 * IRQ stack's frames nest in the interrupted task's, so its inclusive time
 * counts for the interrupted functions.  Then a stack that grows across an
 * 8K boundary: one logical stack. */
static void test_stack_irq_stack(void)
{
    feed f;
    feed_init(&f);
    nm_profiler_start(f.p);
    const uint32_t t = 0x11f00, irqtop = 0x32000;
    step_at(&f, 0x1000, NM_OP_CALL, 0x2000, 1, kern(t, t - 4)); /* main -> a */
    step_at(&f, 0x2000, NM_OP_MOV, 0x2001, 2, kern(t - 4, t - 4));
    f.obs->interrupt(f.obs->opaque, 0x20, NM_INT_EXTERNAL, 0x2001);
    step_at(&f, 0x4000, NM_OP_PUSH, 0x4001, 3, kern(t - 16, t - 20));
    step_at(&f, 0x4001, NM_OP_XCHG, 0x4002, 4, kern(t - 20, irqtop));     /* to the IRQ stack */
    step_at(&f, 0x4002, NM_OP_CALL, 0x3000, 5, kern(irqtop, irqtop - 4)); /* irq -> b */
    step_at(&f, 0x3000, NM_OP_RET, 0x4007, 6, kern(irqtop - 4, irqtop));
    step_at(&f, 0x4007, NM_OP_MOV, 0x4008, 7, kern(irqtop, t - 20)); /* back */
    step_at(&f, 0x4008, NM_OP_IRET, 0x2001, 8, kern(t - 20, t - 4));
    step_at(&f, 0x2001, NM_OP_RET, 0x1005, 9, kern(t - 4, t));
    /* main's stack grows below its block (0x10000) and back. */
    const uint32_t edge = 0x10004;
    step_at(&f, 0x1005, NM_OP_SUB, 0x1006, 10, kern(t, edge));
    step_at(&f, 0x1006, NM_OP_CALL, 0x6000, 11, kern(edge, edge - 4)); /* main -> c */
    step_at(&f, 0x6000, NM_OP_CALL, 0x3000, 12, kern(edge - 4, edge - 8));
    step_at(&f, 0x3000, NM_OP_RET, 0x6005, 13, kern(edge - 8, edge - 4)); /* b */
    step_at(&f, 0x6005, NM_OP_RET, 0x100b, 14, kern(edge - 4, edge));
    step_at(&f, 0x100b, NM_OP_ADD, 0x100c, 15, kern(edge, t));
    nm_profiler_stop(f.p);

    assert_incl(&f, "irq", 3 + 4 + 5 + 7 + 8, 3 + 4 + 5 + 6 + 7 + 8, 1);
    assert_incl(&f, "b", 6 + 13, 6 + 13, 2);
    assert_incl(&f, "a", 2 + 9, 2 + (3 + 4 + 5 + 6 + 7 + 8) + 9, 1);
    assert_incl(&f, "c", 12 + 14, 12 + 13 + 14, 1);
    nm_profile_stack_stats ss;
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.resyncs, ==, 0);
    g_assert_cmpuint(ss.switches, ==, 0);
    g_assert_cmpuint(ss.nested, ==, 2); /* the IRQ stack; the block below main's */
    g_assert_cmpuint(ss.contexts, ==, 3);
    nm_profiler_free(f.p);
}

/* User mode: two processes (CR3 0x1000 and 0x2000) entering the kernel with
 * INT 0x80 through an entry stack (Linux 6.1 i386: the CPU loads TSS.sp0, a
 * per-CPU stack; the entry code moves to the task's stack) and a task switch
 * between their kernel stacks T1 and T2.  The INT frame goes on the user
 * stack it interrupted; IRET to user pops it there. */
static void test_stack_user(void)
{
    feed f;
    feed_init(&f);
    nm_symtab *u = nm_symtab_new("prog");
    nm_symtab_add(u, 0x8000, 0x100, "umain", true);
    nm_symtab_add(u, 0x8100, 0x100, "uf", true);
    nm_symtab_finish(u);
    nm_profiler_add_symbols(f.p, u, false);
    nm_profiler_start(f.p);
    const uint32_t p1 = 0x1000, p2 = 0x2000, ue = 0xbffff000, e = 0x41fe0, t1 = 0x11f00,
                   t2 = 0x21f00;
    /* P2 makes a system call. */
    f.obs->interrupt(f.obs->opaque, 0x80, NM_INT_SOFTWARE, 0x8102);
    step_at(&f, 0x8100, NM_OP_INT, 0x4000, 1,
            (at){.cpl = 3, .cr3 = p2, .esp = ue, .esp_next = e});    /* uf */
    step_at(&f, 0x4000, NM_OP_MOV, 0x4001, 2, in_kernel(p2, e, t2)); /* entry stack -> T2 */
    step_at(&f, 0x4001, NM_OP_CALL, 0x2000, 3, in_kernel(p2, t2, t2 - 4));
    step_at(&f, 0x2000, NM_OP_CALL, 0x5000, 4, in_kernel(p2, t2 - 4, t2 - 8));
    step_at(&f, 0x5000, NM_OP_MOV, 0x5001, 5, in_kernel(p2, t2 - 8, t1 - 8)); /* switch to T1 */
    /* T1 (not seen before) returns to user mode: P1. */
    step_at(&f, 0x5001, NM_OP_RET, 0x6005, 6, in_kernel(p2, t1 - 8, t1 - 4));
    step_at(&f, 0x6005, NM_OP_MOV, 0x6006, 7, in_kernel(p1, t1 - 4, e));
    step_at(&f, 0x4010, NM_OP_IRET, 0x8005, 8,
            (at){.cpl = 0, .cpl_next = 3, .cr3 = p1, .esp = e, .esp_next = ue});
    /* P1 makes a system call and T1 switches back to T2. */
    f.obs->interrupt(f.obs->opaque, 0x80, NM_INT_SOFTWARE, 0x8007);
    step_at(&f, 0x8005, NM_OP_INT, 0x4000, 9,
            (at){.cpl = 3, .cr3 = p1, .esp = ue, .esp_next = e}); /* umain */
    step_at(&f, 0x4000, NM_OP_MOV, 0x4001, 10, in_kernel(p1, e, t1));
    step_at(&f, 0x4001, NM_OP_CALL, 0x6000, 11, in_kernel(p1, t1, t1 - 4));
    step_at(&f, 0x6000, NM_OP_CALL, 0x5000, 12, in_kernel(p1, t1 - 4, t1 - 8));
    step_at(&f, 0x5000, NM_OP_MOV, 0x5001, 13, in_kernel(p1, t1 - 8, t2 - 8)); /* switch to T2 */
    step_at(&f, 0x5001, NM_OP_RET, 0x2005, 14, in_kernel(p2, t2 - 8, t2 - 4));
    step_at(&f, 0x2005, NM_OP_RET, 0x4006, 15, in_kernel(p2, t2 - 4, t2));
    step_at(&f, 0x4006, NM_OP_MOV, 0x4007, 16, in_kernel(p2, t2, e)); /* T2 -> entry stack */
    step_at(&f, 0x4007, NM_OP_IRET, 0x8102, 17,
            (at){.cpl = 0, .cpl_next = 3, .cr3 = p2, .esp = e, .esp_next = ue});
    step_at(&f, 0x8102, NM_OP_MOV, 0x8103, 18, in_user(p2));
    nm_profiler_stop(f.p);

    /* P2's system call: steps 2-5 and 14-17; P1's: 10-13, still open. */
    assert_incl(&f, "irq", 2 + 3 + 8 + 10 + 11 + 16 + 17, (2 + 3 + 4 + 5 + 14 + 15 + 16 + 17) + 46,
                2);
    assert_incl(&f, "a", 4 + 15, 4 + 5 + 14 + 15, 1);
    assert_incl(&f, "sw", 5 + 6 + 13 + 14, (5 + 14) + 13, 2);
    assert_incl(&f, "c", 7 + 12, 12 + 13, 1);
    assert_incl(&f, "uf", 1 + 18, 0, 0);
    assert_incl(&f, "umain", 9, 0, 0);
    nm_profile_stack_stats ss;
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.resyncs, ==, 2); /* T1's first RET; the IRET into P1 */
    g_assert_cmpuint(ss.switches, ==, 3);
    g_assert_cmpuint(ss.contexts, ==, 5); /* P2, the entry stack, T2, T1, P1 */
    uint64_t clocks, insns;
    nm_profiler_totals(f.p, &clocks, &insns);
    g_assert_cmpuint(clocks, ==, 171);
    nm_profiler_free(f.p);
}

/* More stacks than the profiler keeps: the least recently run go, the
 * attribution stays exact, and two runs agree. */
static void test_stack_evict(void)
{
    uint64_t incl[2];
    for (int run = 0; run < 2; run++) {
        feed f;
        feed_init(&f);
        nm_profiler_start(f.p);
        uint32_t esp = 0x10000 + 0x1f00;
        for (unsigned k = 0; k < 300; k++) {
            /* A call on one of 200 stacks, then a move to the next. */
            uint32_t next = 0x10000 + 0x2000 * ((k + 1) % 200) + 0x1f00;
            step_at(&f, 0x1000, NM_OP_CALL, 0x2000, 1, kern(esp, esp - 4));
            step_at(&f, 0x2000, NM_OP_MOV, 0x2001, 2, kern(esp - 4, next));
            esp = next;
        }
        nm_profiler_stop(f.p);
        nm_profile_stack_stats ss;
        nm_profiler_stack_stats(f.p, &ss);
        g_assert_cmpuint(ss.contexts, ==, 301); /* and the last move's */
        g_assert_cmpuint(ss.evictions, ==, 301 - 128);
        g_assert_cmpuint(ss.depth, ==, 0);
        uint64_t clocks, insns;
        nm_profiler_totals(f.p, &clocks, &insns);
        g_assert_cmpuint(clocks, ==, 300 * 3);
        nm_profile_entry e;
        entry(&f, "a", &e);
        g_assert_cmpuint(e.calls, ==, 300);
        incl[run] = e.incl_clocks;
        nm_profiler_free(f.p);
    }
    g_assert_cmpuint(incl[0], ==, incl[1]);
}

static void test_stack_nested(void)
{
    feed f;
    feed_init(&f);
    f.clock.cycles = 1000;
    nm_profiler_start(f.p);
    step(&f, 0x1000, NM_OP_MOV, 0x1001, 2, 0);
    step(&f, 0x1001, NM_OP_CALL, 0x2000, 3, 0); /* main -> a */
    step(&f, 0x2000, NM_OP_MOV, 0x2001, 4, 0);
    step(&f, 0x2001, NM_OP_CALL, 0x3000, 3, 0); /* a -> b */
    step(&f, 0x3000, NM_OP_IN, 0x3001, 5, 7);   /* b: an IN with 7 bus wait cycles */
    step(&f, 0x3001, NM_OP_RET, 0x2006, 5, 0);  /* back to a */
    step(&f, 0x2006, NM_OP_RET, 0x1006, 5, 0);  /* back to main */
    step(&f, 0x1006, NM_OP_MOV, 0x1007, 1, 0);
    nm_clock_charge_bus(&f.clock, 3); /* the closing OUT's bus time */
    nm_profiler_stop(f.p);

    nm_profile_entry e;
    entry(&f, "b", &e);
    g_assert_cmpuint(e.self_clocks, ==, 5 + 7 + 5);
    g_assert_cmpuint(e.self_bus, ==, 7);
    g_assert_cmpuint(e.incl_clocks, ==, 17);
    g_assert_cmpuint(e.calls, ==, 1);
    entry(&f, "a", &e);
    g_assert_cmpuint(e.self_insns, ==, 3);
    g_assert_cmpuint(e.self_clocks, ==, 4 + 3 + 5);
    g_assert_cmpuint(e.incl_clocks, ==, 12 + 17);
    g_assert_cmpuint(e.incl_insns, ==, 5);
    entry(&f, "main", &e);
    g_assert_cmpuint(e.self_clocks, ==, 2 + 3 + 1 + 3);
    uint64_t clocks, insns;
    nm_profiler_totals(f.p, &clocks, &insns);
    g_assert_cmpuint(clocks, ==, f.clock.cycles - 1000); /* exactly the clock's advance */
    g_assert_cmpuint(insns, ==, 8);
    nm_profile_stack_stats ss;
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.resyncs, ==, 0);
    g_assert_cmpuint(ss.max_depth, ==, 2);
    nm_profiler_free(f.p);
}

static void test_stack_interrupt(void)
{
    feed f;
    feed_init(&f);
    nm_profiler_start(f.p);
    step(&f, 0x1000, NM_OP_CALL, 0x2000, 3, 0); /* main -> a */
    step(&f, 0x2000, NM_OP_HLT, 0x2001, 2, 0);
    /* Idle until an interrupt: the clock jumps; then the handler runs. */
    f.clock.cycles += 500;
    f.obs->interrupt(f.obs->opaque, 0x20, NM_INT_EXTERNAL, 0x2001);
    step(&f, 0x4000, NM_OP_PUSH, 0x4001, 10, 0); /* irq's first instruction */
    step(&f, 0x4001, NM_OP_CALL, 0x3000, 3, 0);  /* irq -> b */
    step(&f, 0x3000, NM_OP_RET, 0x4006, 5, 0);
    step(&f, 0x4006, NM_OP_IRET, 0x2001, 8, 0); /* back into a */
    step(&f, 0x2001, NM_OP_RET, 0x1005, 5, 0);
    /* A software interrupt: the INT's own insn call comes after the hook. */
    f.obs->interrupt(f.obs->opaque, 0x80, NM_INT_SOFTWARE, 0x1007);
    step(&f, 0x1005, NM_OP_INT, 0x4000, 20, 0);
    step(&f, 0x4000, NM_OP_IRET, 0x1007, 8, 0);
    step(&f, 0x1007, NM_OP_MOV, 0x1008, 1, 0);
    nm_profiler_stop(f.p);

    nm_profile_entry e;
    entry(&f, "(idle)", &e);
    g_assert_cmpuint(e.self_clocks, ==, 500);
    entry(&f, "irq", &e);
    g_assert_cmpuint(e.calls, ==, 2);
    g_assert_cmpuint(e.self_clocks, ==, 10 + 3 + 8 + 8);
    g_assert_cmpuint(e.incl_clocks, ==, 10 + 3 + 5 + 8 + 8);
    entry(&f, "a", &e);
    /* a's inclusive time holds the interrupt that hit it (and the idle time). */
    g_assert_cmpuint(e.incl_clocks, ==, 2 + 500 + 26 + 5);
    entry(&f, "main", &e);
    g_assert_cmpuint(e.self_clocks, ==, 3 + 20 + 1);
    uint64_t clocks, insns;
    nm_profiler_totals(f.p, &clocks, &insns);
    g_assert_cmpuint(clocks, ==, f.clock.cycles);
    nm_profile_stack_stats ss;
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.resyncs, ==, 0);
    g_assert_cmpuint(ss.depth, ==, 0);
    nm_profiler_free(f.p);
}

static void test_stack_mismatch(void)
{
    feed f;
    feed_init(&f);
    nm_profiler_start(f.p);
    step(&f, 0x1000, NM_OP_CALL, 0x2000, 3, 0); /* main -> a, returns to 0x1005 */
    step(&f, 0x2000, NM_OP_CALL, 0x3000, 3, 0); /* a -> b, returns to 0x2005 */
    step(&f, 0x3000, NM_OP_RET, 0x1005, 5, 0);  /* b returns straight to main */
    step(&f, 0x1005, NM_OP_RET, 0x9999, 5, 0);  /* a RET no frame knows */
    step(&f, 0x1006, NM_OP_MOV, 0x1007, 1, 0);
    nm_profiler_stop(f.p);
    nm_profile_stack_stats ss;
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.unwound, ==, 1);
    g_assert_cmpuint(ss.resyncs, ==, 1);
    nm_profile_entry e;
    entry(&f, "a", &e);
    g_assert_cmpuint(e.incl_clocks, ==, 3 + 5);
    entry(&f, "b", &e);
    g_assert_cmpuint(e.incl_clocks, ==, 5);
    uint64_t clocks, insns;
    nm_profiler_totals(f.p, &clocks, &insns);
    g_assert_cmpuint(clocks, ==, f.clock.cycles);
    nm_profiler_free(f.p);
}

static void test_recursion(void)
{
    feed f;
    feed_init(&f);
    nm_profiler_start(f.p);
    step(&f, 0x1000, NM_OP_CALL, 0x2000, 1, 0);
    step(&f, 0x2000, NM_OP_CALL, 0x2000, 1, 0); /* a calls itself */
    step(&f, 0x2000, NM_OP_MOV, 0x2001, 1, 0);
    step(&f, 0x2001, NM_OP_RET, 0x2005, 1, 0);
    step(&f, 0x2005, NM_OP_RET, 0x1005, 1, 0);
    nm_profiler_stop(f.p);
    nm_profile_entry e;
    entry(&f, "a", &e);
    g_assert_cmpuint(e.calls, ==, 2);
    g_assert_cmpuint(e.incl_clocks, ==, 4); /* the outer frame only */
    nm_profiler_free(f.p);
}

/* ---- call graph, interrupts excluded, per-call distributions ---- */

static void assert_arc(const nm_profile_arc *a, const char *name, uint64_t calls, uint64_t incl,
                       uint64_t no_irq)
{
    if (strcmp(a->name, name) || a->calls != calls || a->incl_clocks != incl ||
        a->incl_no_irq != no_irq)
        g_error("arc %s %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                ", want %s %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                a->name, a->calls, a->incl_clocks, a->incl_no_irq, name, calls, incl, no_irq);
}

/* main calls a twice and b once, a calls b each time, and a hardware
 * interrupt's handler calls b: b's callers (a 2, main 1, irq 1) add up to
 * its 4 calls, each edge with the clocks of its own calls. */
static void test_callgraph(void)
{
    feed f;
    feed_init(&f);
    nm_profiler_start(f.p);
    for (int k = 0; k < 2; k++) {
        step(&f, 0x1000, NM_OP_CALL, 0x2000, 1, 0); /* main -> a */
        step(&f, 0x2000, NM_OP_CALL, 0x3000, 2, 0); /* a -> b */
        step(&f, 0x3000, NM_OP_MOV, 0x3001, 10, 0);
        step(&f, 0x3001, NM_OP_RET, 0x2005, 3, 0);
        step(&f, 0x2005, NM_OP_RET, 0x1005, 4, 0);
    }
    step(&f, 0x1005, NM_OP_CALL, 0x3000, 1, 0); /* main -> b */
    step(&f, 0x3000, NM_OP_RET, 0x100a, 7, 0);
    f.obs->interrupt(f.obs->opaque, 0x20, NM_INT_EXTERNAL, 0x100a);
    step(&f, 0x4000, NM_OP_CALL, 0x3000, 5, 0); /* irq -> b */
    step(&f, 0x3000, NM_OP_RET, 0x4005, 6, 0);
    step(&f, 0x4005, NM_OP_IRET, 0x100a, 8, 0);
    step(&f, 0x100a, NM_OP_MOV, 0x100b, 1, 0);
    nm_profiler_stop(f.p);

    nm_profile_arc a[8];
    g_assert_cmpuint(nm_profiler_arcs(f.p, "b", true, a, 8), ==, 3);
    assert_arc(&a[0], "a", 2, 2 * (10 + 3), 2 * (10 + 3));
    assert_arc(&a[1], "main", 1, 7, 7); /* equal calls: more clocks first */
    assert_arc(&a[2], "irq", 1, 6, 6);
    nm_profile_entry e;
    entry(&f, "b", &e);
    g_assert_cmpuint(e.calls, ==, a[0].calls + a[1].calls + a[2].calls);
    g_assert_cmpuint(nm_profiler_arcs(f.p, "main", false, a, 8), ==, 2);
    assert_arc(&a[0], "a", 2, 2 * (2 + 13 + 4), 2 * (2 + 13 + 4));
    assert_arc(&a[1], "b", 1, 7, 7);
    g_assert_cmpuint(nm_profiler_arcs(f.p, "irq", true, a, 8), ==, 1);
    assert_arc(&a[0], "(hardware interrupt)", 1, 5 + 6 + 8, 5 + 6 + 8);
    /* Only `max` stored, all counted. */
    g_assert_cmpuint(nm_profiler_arcs(f.p, "b", true, a, 1), ==, 3);
    g_assert_cmpuint(nm_profiler_arcs(f.p, "nosuch", true, a, 8), ==, 0);
    nm_profiler_free(f.p);
}

/* A hardware interrupt inside a, with a second one nested in its handler,
 * and an INT n inside a (not a hardware interrupt: stays in): a and main
 * leave the outer interrupt's clocks (the inner's among them) out once; the
 * outer handler leaves the inner's out. */
static void test_irq_excluded(void)
{
    feed f;
    feed_init(&f);
    nm_profiler_start(f.p);
    step(&f, 0x1000, NM_OP_CALL, 0x2000, 1, 0); /* main -> a */
    step(&f, 0x2000, NM_OP_MOV, 0x2001, 2, 0);
    f.obs->interrupt(f.obs->opaque, 0x20, NM_INT_EXTERNAL, 0x2001);
    step(&f, 0x4000, NM_OP_PUSH, 0x4001, 10, 0); /* irq */
    step(&f, 0x4001, NM_OP_CALL, 0x3000, 3, 0);  /* irq -> b */
    f.obs->interrupt(f.obs->opaque, 0x21, NM_INT_EXTERNAL, 0x3000);
    step(&f, 0x4000, NM_OP_PUSH, 0x4001, 20, 0); /* irq again, nested in b */
    step(&f, 0x4001, NM_OP_IRET, 0x3000, 30, 0);
    step(&f, 0x3000, NM_OP_RET, 0x4006, 5, 0); /* b */
    step(&f, 0x4006, NM_OP_IRET, 0x2001, 8, 0);
    step(&f, 0x2001, NM_OP_MOV, 0x2002, 4, 0);
    f.obs->interrupt(f.obs->opaque, 0x80, NM_INT_SOFTWARE, 0x2003);
    step(&f, 0x2002, NM_OP_INT, 0x5000, 6, 0);
    step(&f, 0x5000, NM_OP_IRET, 0x2003, 7, 0); /* sw */
    step(&f, 0x2003, NM_OP_RET, 0x1005, 9, 0);
    step(&f, 0x1005, NM_OP_MOV, 0x1006, 1, 0);
    nm_profiler_stop(f.p);

    const uint64_t inner = 20 + 30, outer = 10 + 3 + inner + 5 + 8;
    nm_profile_entry e;
    entry(&f, "a", &e);
    g_assert_cmpuint(e.incl_clocks, ==, 2 + outer + 4 + 6 + 7 + 9);
    g_assert_cmpuint(e.incl_no_irq, ==, 2 + 4 + 6 + 7 + 9);
    g_assert_cmpuint(e.irqs_inside, ==, 1);
    g_assert_cmpuint(e.irq_clocks_inside, ==, outer);
    entry(&f, "main", &e); /* no frame: opened before the window */
    g_assert_cmpuint(e.incl_clocks, ==, 0);
    entry(&f, "b", &e);
    g_assert_cmpuint(e.incl_clocks, ==, inner + 5);
    g_assert_cmpuint(e.incl_no_irq, ==, 5);
    g_assert_cmpuint(e.irqs_inside, ==, 1);
    /* irq: its outer frame holds the inner one (recursion: outermost only). */
    entry(&f, "irq", &e);
    g_assert_cmpuint(e.calls, ==, 2);
    g_assert_cmpuint(e.incl_clocks, ==, outer);
    g_assert_cmpuint(e.incl_no_irq, ==, outer - inner);
    g_assert_cmpuint(e.irq_clocks_inside, ==, inner);
    entry(&f, "sw", &e);
    g_assert_cmpuint(e.irqs_inside, ==, 0);
    g_assert_cmpuint(e.incl_no_irq, ==, e.incl_clocks);
    /* The edges carry the same split. */
    nm_profile_arc arc[4];
    g_assert_cmpuint(nm_profiler_arcs(f.p, "a", true, arc, 4), ==, 1);
    assert_arc(&arc[0], "main", 1, 2 + outer + 4 + 6 + 7 + 9, 2 + 4 + 6 + 7 + 9);
    g_assert_cmpuint(nm_profiler_arcs(f.p, "sw", true, arc, 4), ==, 1);
    assert_arc(&arc[0], "(exception or INT n)", 1, 7, 7);
    uint64_t clocks, insns;
    nm_profiler_totals(f.p, &clocks, &insns);
    g_assert_cmpuint(clocks, ==, f.clock.cycles); /* self times unchanged: still exact */
    nm_profiler_free(f.p);
}

/* A hardware interrupt in a kernel function called from a system call: the
 * system call's frame (on the process's user stack, below the kernel
 * stack) leaves it out too. */
static void test_irq_excluded_below(void)
{
    feed f;
    feed_init(&f);
    nm_symtab *u = nm_symtab_new("prog");
    nm_symtab_add(u, 0x8000, 0x100, "umain", true);
    nm_symtab_finish(u);
    nm_profiler_add_symbols(f.p, u, false);
    nm_profiler_start(f.p);
    const uint32_t cr3 = 0x1000, ue = 0xbffff000, t = 0x11f00;
    f.obs->interrupt(f.obs->opaque, 0x80, NM_INT_SOFTWARE, 0x8002);
    step_at(&f, 0x8000, NM_OP_INT, 0x5000, 1, (at){.cpl = 3, .cr3 = cr3, .esp = ue, .esp_next = t});
    step_at(&f, 0x5000, NM_OP_CALL, 0x2000, 2, in_kernel(cr3, t, t - 4)); /* sw -> a */
    f.obs->interrupt(f.obs->opaque, 0x20, NM_INT_EXTERNAL, 0x2000);
    step_at(&f, 0x4000, NM_OP_PUSH, 0x4001, 30, in_kernel(cr3, t - 16, t - 20)); /* irq */
    step_at(&f, 0x4001, NM_OP_IRET, 0x2000, 40, in_kernel(cr3, t - 20, t - 4));
    step_at(&f, 0x2000, NM_OP_RET, 0x5005, 3, in_kernel(cr3, t - 4, t));
    step_at(&f, 0x5005, NM_OP_IRET, 0x8002, 4,
            (at){.cpl = 0, .cpl_next = 3, .cr3 = cr3, .esp = t, .esp_next = ue});
    step_at(&f, 0x8002, NM_OP_MOV, 0x8003, 5, in_user(cr3));
    nm_profiler_stop(f.p);
    nm_profile_entry e;
    entry(&f, "sw", &e);
    g_assert_cmpuint(e.incl_clocks, ==, 2 + 70 + 3 + 4);
    g_assert_cmpuint(e.incl_no_irq, ==, 2 + 3 + 4);
    g_assert_cmpuint(e.irqs_inside, ==, 1);
    g_assert_cmpuint(e.irq_clocks_inside, ==, 70);
    entry(&f, "a", &e);
    g_assert_cmpuint(e.incl_no_irq, ==, 3);
    nm_profile_stack_stats ss;
    nm_profiler_stack_stats(f.p, &ss);
    g_assert_cmpuint(ss.resyncs, ==, 0);
    nm_profiler_free(f.p);
}

/* Ten calls of a of known lengths (one with an interrupt inside, left
 * out): exact count, min, max and mean; median and p90 at the lower edge
 * of their 1/8-octave buckets; the log2 histogram. */
static void test_distribution(void)
{
    static const uint32_t lengths[] = {1000, 5, 100, 20000, 1000, 100, 1000, 5000, 100, 1000};
    feed f;
    feed_init(&f);
    g_assert_true(nm_profiler_watch(f.p, "a", false));
    g_assert_false(nm_profiler_watch(f.p, "nosuch", true));
    nm_profiler_start(f.p);
    for (size_t k = 0; k < G_N_ELEMENTS(lengths); k++) {
        step(&f, 0x1000, NM_OP_CALL, 0x2000, 1, 0);
        step(&f, 0x2000, NM_OP_MOV, 0x2001, lengths[k] - 1, 0);
        if (k == 3) { /* 500 clocks of interrupt, not in the call's figure */
            f.obs->interrupt(f.obs->opaque, 0x20, NM_INT_EXTERNAL, 0x2001);
            step(&f, 0x4000, NM_OP_PUSH, 0x4001, 200, 0);
            step(&f, 0x4001, NM_OP_IRET, 0x2001, 300, 0);
        }
        step(&f, 0x2001, NM_OP_RET, 0x1005, 1, 0);
    }
    nm_profiler_stop(f.p);
    nm_profile_dist d;
    g_assert_true(nm_profiler_dist(f.p, "a", &d));
    g_assert_cmpuint(d.calls, ==, 10);
    g_assert_cmpuint(d.min, ==, 5);
    g_assert_cmpuint(d.max, ==, 20000);
    g_assert_cmpuint(d.sum, ==, 4 * 1000 + 5 + 3 * 100 + 20000 + 5000);
    /* Sorted: 5 100 100 100 1000 1000 1000 1000 5000 20000; nearest rank
     * 5 (median) is 1000, in [960, 1024); rank 9 (p90) is 5000, in
     * [4608, 5120). */
    g_assert_cmpuint(d.median, ==, 960);
    g_assert_cmpuint(d.p90, ==, 4608);
    for (unsigned k = 0; k < G_N_ELEMENTS(d.log2); k++) {
        uint64_t want = k == 3 ? 1 : k == 7 ? 3 : k == 10 ? 4 : k == 13 ? 1 : k == 15 ? 1 : 0;
        if (d.log2[k] != want) g_error("log2[%u] = %" G_GUINT64_FORMAT, k, d.log2[k]);
    }
    /* Not watched: no distribution. */
    g_assert_false(nm_profiler_dist(f.p, "main", &d));
    nm_profiler_free(f.p);

    /* Small values are exact; a single value is its own median. */
    feed_init(&f);
    g_assert_true(nm_profiler_watch(f.p, "b", true));
    nm_profiler_start(f.p);
    for (int k = 0; k < 3; k++) {
        step(&f, 0x1000, NM_OP_CALL, 0x3000, 1, 0);
        step(&f, 0x3000, NM_OP_MOV, 0x3001, 12, 0);
        step(&f, 0x3001, NM_OP_RET, 0x1005, 1, 0);
    }
    nm_profiler_stop(f.p);
    g_assert_true(nm_profiler_dist(f.p, "b", &d));
    g_assert_cmpuint(d.calls, ==, 3);
    g_assert_cmpuint(d.median, ==, 13);
    g_assert_cmpuint(d.p90, ==, 13);
    g_assert_cmpuint(d.log2[4], ==, 3); /* [8, 16) */
    nm_profiler_free(f.p);
}

static void test_function_sets(void)
{
    g_assert_cmpstr(nm_profiler_function_set("ei_interrupt"), ==, "8390");
    g_assert_cmpstr(nm_profiler_function_set("__ei_start_xmit"), ==, "8390");
    g_assert_cmpstr(nm_profiler_function_set("ne_block_output"), ==, "ne");
    g_assert_cmpstr(nm_profiler_function_set("wd_block_input"), ==, "wd");
    g_assert_cmpstr(nm_profiler_function_set("e1000_xmit_frame"), ==, "e1000");
    g_assert_cmpstr(nm_profiler_function_set("__dev_queue_xmit"), ==, "stack");
    g_assert_cmpstr(nm_profiler_function_set("csum_partial_copy_generic"), ==, "stack");
    g_assert_null(nm_profiler_function_set("schedule"));
}

static void test_json_parse(void)
{
    GHashTable *h = nm_report_json_parse(
        "{\n  \"run\": {\n    \"end\": \"exit-port\",\n    \"cycles\": 123},\n  \"window\": {"
        "\n    \"cpi\": 1.5, \"name\": \"a\\\"b\"}\n}\n");
    g_assert_nonnull(h);
    g_assert_cmpstr(g_hash_table_lookup(h, "run/end"), ==, "exit-port");
    g_assert_cmpstr(g_hash_table_lookup(h, "run/cycles"), ==, "123");
    g_assert_cmpstr(g_hash_table_lookup(h, "window/cpi"), ==, "1.5");
    g_assert_cmpstr(g_hash_table_lookup(h, "window/name"), ==, "a\"b");
    g_hash_table_destroy(h);
    g_assert_null(nm_report_json_parse("{\"run\": {\"x\": }"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/profiler/system-map", test_system_map);
    g_test_add_func("/profiler/elf", test_elf);
    g_test_add_func("/profiler/stack-nested", test_stack_nested);
    g_test_add_func("/profiler/stack-interrupt", test_stack_interrupt);
    g_test_add_func("/profiler/stack-mismatch", test_stack_mismatch);
    g_test_add_func("/profiler/recursion", test_recursion);
    g_test_add_func("/profiler/stack-task-switch", test_stack_task_switch);
    g_test_add_func("/profiler/stack-irq-stack", test_stack_irq_stack);
    g_test_add_func("/profiler/stack-user", test_stack_user);
    g_test_add_func("/profiler/stack-evict", test_stack_evict);
    g_test_add_func("/profiler/callgraph", test_callgraph);
    g_test_add_func("/profiler/irq-excluded", test_irq_excluded);
    g_test_add_func("/profiler/irq-excluded-below", test_irq_excluded_below);
    g_test_add_func("/profiler/distribution", test_distribution);
    g_test_add_func("/profiler/function-sets", test_function_sets);
    g_test_add_func("/profiler/json-parse", test_json_parse);
    return g_test_run();
}
