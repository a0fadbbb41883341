/* The profiler's parts: symbol tables (System.map, ELF), address lookup,
 * the shadow call stack (nested calls, interrupts, a mismatched RET), and
 * attribution totals equal to the clock's advance exactly. */
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
    nm_timing_insn_info info = {.eip = eip, .next = next, .cpl = 0, .cpl_next = 0};
    f->obs->insn(f->obs->opaque, &i, &info, clocks);
    f->clock.cycles += clocks;
}

static void entry(feed *f, const char *name, nm_profile_entry *e)
{
    g_assert_true(nm_profiler_get(f->p, name, e));
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
    g_test_add_func("/profiler/function-sets", test_function_sets);
    g_test_add_func("/profiler/json-parse", test_json_parse);
    return g_test_run();
}
