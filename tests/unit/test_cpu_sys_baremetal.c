/* Runs the bare-metal programs of tests/baremetal/ (built by CMake into
 * NICEMU_BAREMETAL_DIR) on several CPU models and checks their PASS/FAIL
 * lines on the debug console. */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "emu/config.h"
#include "emu/core/device.h"
#include "emu/elfload.h"
#include "emu/machine.h"

#ifndef NICEMU_BAREMETAL_DIR
#define NICEMU_BAREMETAL_DIR "tests/baremetal"
#endif

extern const nm_device_class nm_debugcon_class;
const char *nm_debugcon_text(void *opaque);

typedef struct {
    const char *program;
    const char *cpu;
    const char *must_contain; /* one line every run of it must print, or NULL */
    bool triple_fault;        /* must end in a triple fault (reset request) */
    bool strict_isa;          /* --strict-isa (a 386 model: #UD on 486-only instructions) */
} bm_case;

static char *program_path(const char *program)
{
    const char *dir = g_getenv("NICEMU_BAREMETAL_DIR");
    return g_strdup_printf("%s/%s.elf", dir ? dir : NICEMU_BAREMETAL_DIR, program);
}

/* For the poll test: run with --no-poll-fast-forward, and what the last
 * run counted. */
static bool no_poll_fast_forward, with_uart;
static uint64_t last_instructions, last_cycles, last_poll_skips;

/* Runs one program to its final HLT; returns the debug console text. */
static char *run_program(const char *program, const char *cpu_name, bool strict_isa,
                         nm_stop_reason *why)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    g_assert_true(nm_config_set(cfg, "test", "cpu", cpu_name, &err));
    g_assert_no_error(err);
    if (no_poll_fast_forward) {
        g_assert_true(nm_config_set(cfg, "test", "no-poll-fast-forward", "true", &err));
        g_assert_no_error(err);
    }
    if (strict_isa) {
        g_assert_true(nm_config_set(cfg, "test", "strict-isa", "true", &err));
        g_assert_no_error(err);
    }
    g_assert_true(nm_config_add_device_spec(cfg, "--device", "debugcon,file=none", &err));
    if (with_uart) {
        g_assert_true(
            nm_config_add_device_spec(cfg, "--device", "uart,io=0x3f8,irq=4,file=none", &err));
        g_assert_no_error(err);
    }
    nm_machine *m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    g_assert_nonnull(m);
    g_assert_cmpuint(m->devices->len, ==, with_uart ? 2 : 1);
    void *con = ((nm_device_instance *)m->devices->pdata[0])->state;
    nm_cpu *cpu = nm_cpu_new(m);
    if (!m->cpu) m->cpu = cpu;
    nm_cpu_reset(cpu);
    char *path = program_path(program);
    if (!nm_elf_boot(m, cpu, path, 0x90000, &err)) g_error("%s", err->message);

    for (int i = 0; i < 2000 && !m->stop_requested; i++) {
        nm_cpu_run(cpu, 100000);
        /* the UART's line timing: its events (the others have none) */
        if (with_uart) nm_clock_run_due(&m->clock);
        if (nm_cpu_halted(cpu) && !(nm_cpu_get_eflags(cpu) & NM_FLAG_IF)) break;
    }
    *why = m->stop_requested ? m->stop_reason : NM_STOP_HALT;
    char *text = g_strdup(nm_debugcon_text(con));
    last_instructions = nm_cpu_instructions(cpu);
    last_cycles = m->clock.cycles;
    last_poll_skips = nm_cpu_poll_skips(cpu);
    if ((!strstr(text, "DONE\n") || strstr(text, "FAIL")) && *why != NM_STOP_RESET) {
        g_test_message("%s on %s:\n%s", program, cpu_name, text);
        nm_cpu_dump_state(cpu, stderr);
    }
    g_free(path);
    if (m->cpu == cpu) m->cpu = NULL;
    nm_cpu_free(cpu);
    nm_machine_free(m);
    nm_config_free(cfg);
    return text;
}

static void run_case(gconstpointer data)
{
    const bm_case *tc = data;
    char *path = program_path(tc->program);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_free(path);
        g_test_fail_printf("%s not built (tests/baremetal/CMakeLists.txt)", tc->program);
        return;
    }
    g_free(path);
    nm_stop_reason why;
    char *text = run_program(tc->program, tc->cpu, tc->strict_isa, &why);
    if (g_test_verbose()) g_test_message("%s on %s:\n%s", tc->program, tc->cpu, text);
    if (tc->triple_fault) {
        g_assert_cmpint(why, ==, NM_STOP_RESET);
        g_assert_null(strstr(text, "FAIL"));
        g_assert_nonnull(strstr(text, tc->must_contain));
        g_free(text);
        return;
    }
    if (strstr(text, "FAIL") || !strstr(text, "DONE\n"))
        fprintf(stderr, "---- %s on %s ----\n%s\n----\n", tc->program, tc->cpu, text);
    g_assert_null(strstr(text, "FAIL"));
    g_assert_nonnull(strstr(text, "DONE\n"));
    g_assert_cmpint(why, !=, NM_STOP_RESET);
    if (tc->must_contain) g_assert_nonnull(strstr(text, tc->must_contain));
    g_free(text);
}

static const bm_case cases[] = {
    {"pmode", "486dx2-66", "PASS ss_not_present_ss\n", false, false},
    {"pmode", "pentium-100", "PASS jmp_short_tss_ts\n", false, false},
    {"ring3", "486dx2-66", "PASS callgate_param1\n", false, false},
    {"ring3", "pentium-60", "PASS int80_on_esp0_stack\n", false, false},
    {"taskdf", "486dx2-66", "PASS df_task_ran\n", false, false},
    {"taskdf", "pentium-100", "PASS task2_back_link\n", false, false},
    {"paging", "486dx2-66", "SKIP pse_4mb", false, false},
    {"paging", "pentium-100", "PASS pse_pde_dirty\n", false, false},
    {"smc", "486dx2-66", "PASS smc_same_block\n", false, false},
    {"smc", "pentium-100", "PASS smc_after_store\n", false, false},
    {"triple", "486dx2-66", "triple fault next\n", true, false},
    {"debugreg", "486dx2-66", "PASS rep_ecx_left\n", false, false},
    {"debugreg", "pentium-100", "PASS exec_count\n", false, false},
    {"v86", "486dx2-66", "PASS v86_monitor_flags_back\n", false, false},
    {"v86", "pentium-100", "PASS v86_int3_iopl0\n", false, false},
    {"v86", "386dx-33", "PASS v86_io_bitmap_iopl3\n", false, true},
    {"gate16", "486dx2-66", "PASS tss16_gp_error_word\n", false, false},
    {"gate16", "pentium-100", "PASS cg16_frame_params\n", false, false},
    {"gate16", "386dx-33", "PASS intgate16_r3_flags_sp\n", false, true},
    {"stackseg", "486dx2-66", "PASS enter_user_page_ok_esp\n", false, false},
    {"stackseg", "pentium-100", "PASS enter_user_page_ok_esp\n", false, false},
    {"stackseg", "386dx-33", "PASS enter_user_page_ok_esp\n", false, true},
    {"quirks", "386dx-40", "PASS family_386\n", false, false},
    {"quirks", "486dx2-66", "PASS family_486\n", false, false},
    {"quirks", "pentium-100", "PASS family_586\n", false, false},
};

/* tests/baremetal/poll.c: the UART's LSR polled as Linux's console does;
 * the loop fast-forwarded (cpu/poll.c) gives the same output, instructions
 * and clocks as every iteration run, and the loop whose countdown a CMP
 * also reads is run out where the CMP leaves it. */
static void test_poll_fast_forward(void)
{
    nm_stop_reason why;
    with_uart = true;
    no_poll_fast_forward = true;
    char *slow = run_program("poll", "486dx2-66", false, &why);
    const uint64_t insns = last_instructions, cycles = last_cycles;
    g_assert_cmpuint(last_poll_skips, ==, 0);
    no_poll_fast_forward = false;
    char *fast = run_program("poll", "486dx2-66", false, &why);
    if (strstr(fast, "FAIL") || !strstr(fast, "DONE\n")) fprintf(stderr, "%s\n", fast);
    g_assert_null(strstr(fast, "FAIL"));
    g_assert_nonnull(strstr(fast, "PASS poll_limit\n"));
    g_assert_cmpstr(fast, ==, slow);
    g_assert_cmpuint(last_instructions, ==, insns);
    g_assert_cmpuint(last_cycles, ==, cycles);
    g_assert_cmpuint(last_poll_skips, >, 0);
    with_uart = false;
    g_free(slow);
    g_free(fast);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cpu_sys/baremetal/poll/fast-forward", test_poll_fast_forward);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *name = g_strdup_printf("/cpu_sys/baremetal/%s/%s%s", cases[i].program, cases[i].cpu,
                                     cases[i].strict_isa ? "-strict" : "");
        g_test_add_data_func(name, &cases[i], run_case);
        g_free(name);
    }
    return g_test_run();
}
