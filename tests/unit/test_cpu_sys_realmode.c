/* Real mode through the run loop: INT n through the IVT and IRET, far CALL
 * and RETF, far JMP; and the bare-metal ELF loader's checks. */
#include <glib.h>
#include <string.h>

#include "cpu/cpu_internal.h"
#include "emu/config.h"
#include "emu/elfload.h"
#include "emu/machine.h"

static void put(nm_machine *m, uint32_t pa, const uint8_t *b, size_t n)
{
    g_assert_true(nm_mem_region_load(m->ram, pa, b, n));
}

static void test_real_mode_transfers(void)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    nm_machine *m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    nm_cpu *c = nm_cpu_new(m);
    /* 0000:1000: int 10h; call far 0200:0010; jmp far 0000:1100 */
    static const uint8_t main_code[] = {0xcd, 0x10, 0x9a, 0x10, 0x00, 0x00,
                                        0x02, 0xea, 0x00, 0x11, 0x00, 0x00};
    static const uint8_t after[] = {0x9c, 0x58, 0xf4};         /* 1100: pushf; pop ax; hlt */
    static const uint8_t handler[] = {0xbb, 0x34, 0x12, 0xcf}; /* 2000: mov bx,1234h; iret */
    static const uint8_t far_fn[] = {0xb9, 0x78, 0x56, 0xcb};  /* 2010: mov cx,5678h; retf */
    static const uint8_t ivt10[] = {0x00, 0x20, 0x00, 0x00};   /* vector 10h -> 0000:2000 */
    put(m, 0x1000, main_code, sizeof main_code);
    put(m, 0x1100, after, sizeof after);
    put(m, 0x2000, handler, sizeof handler);
    put(m, 0x2010, far_fn, sizeof far_fn);
    put(m, 0x40, ivt10, sizeof ivt10);
    c->seg[NM_CS].selector = 0;
    c->seg[NM_CS].base = 0;
    c->eip = 0x1000;
    c->gpr[NM_ESP] = 0x8000;
    cpu_set_eflags(c, NM_FLAG_CF | 2, 0xffffffffu);
    cpu_update_mode(c);
    for (int k = 0; k < 100 && !m->stop_requested && !c->halted; k++)
        nm_cpu_run(c, 1);
    g_assert_true(c->halted);
    g_assert_cmphex(c->gpr[NM_EBX] & 0xffff, ==, 0x1234);
    g_assert_cmphex(c->gpr[NM_ECX] & 0xffff, ==, 0x5678);
    g_assert_cmphex(c->gpr[NM_ESP], ==, 0x8000);
    g_assert_cmphex(c->eip, ==, 0x1103);
    g_assert_cmphex(c->seg[NM_CS].base, ==, 0);
    g_assert_cmphex(c->gpr[NM_EAX] & 1, ==, 1); /* CF survived INT/IRET */
    /* The IRET frame: FLAGS, CS, IP at 0x7ffa.. (IP = 0x1002). */
    g_assert_cmphex(nm_mem_read(m->mem, 0x7ffa, 2), ==, 0x1002);
    nm_cpu_free(c);
    nm_machine_free(m);
    nm_config_free(cfg);
}

static void test_elf_loader_errors(void)
{
    GError *err = NULL;
    nm_config *cfg = nm_config_new();
    nm_machine *m = nm_machine_new(cfg, &err);
    g_assert_no_error(err);
    uint32_t entry = 0;

    uint8_t bad[64] = "not an elf";
    g_assert_false(nm_elf_load_buffer(m, "bad", bad, sizeof bad, &entry, &err));
    g_assert_nonnull(strstr(err->message, "bad magic"));
    g_clear_error(&err);
    g_assert_false(nm_elf_load_buffer(m, "short",
                                      (const uint8_t *)"\x7f"
                                                       "ELF",
                                      4, &entry, &err));
    g_clear_error(&err);

    /* A minimal ELF32 with one PT_LOAD. */
    uint8_t elf[52 + 32 + 8];
    memset(elf, 0, sizeof elf);
    memcpy(elf,
           "\x7f"
           "ELF\x01\x01\x01",
           7);
    elf[16] = 2; /* ET_EXEC */
    elf[18] = 3; /* EM_386 */
    uint32_t e_entry = 0x100000, phoff = 52;
    memcpy(elf + 24, &e_entry, 4);
    memcpy(elf + 28, &phoff, 4);
    elf[42] = 32; /* phentsize */
    elf[44] = 1;  /* phnum */
    uint32_t ph[8] = {1, 84, 0x100000, 0x100000, 8, 16, 7, 4};
    memcpy(elf + 52, ph, sizeof ph);
    memcpy(elf + 84, "\x90\x90\xf4\xf4\x01\x02\x03\x04", 8);
    g_assert_true(nm_elf_load_buffer(m, "ok", elf, sizeof elf, &entry, &err));
    g_assert_no_error(err);
    g_assert_cmphex(entry, ==, 0x100000);
    g_assert_cmphex(nm_mem_read(m->mem, 0x100000, 4), ==, 0xf4f49090);
    g_assert_cmphex(nm_mem_read(m->mem, 0x10000c, 4), ==, 0);

    /* Segment beyond RAM (32 MB). */
    ph[3] = 0x7fff0000;
    memcpy(elf + 52, ph, sizeof ph);
    g_assert_false(nm_elf_load_buffer(m, "far", elf, sizeof elf, &entry, &err));
    g_assert_nonnull(strstr(err->message, "does not fit in RAM"));
    g_clear_error(&err);
    /* File data beyond the end of the file. */
    ph[3] = 0x100000;
    ph[4] = 0x1000;
    ph[5] = 0x1000;
    memcpy(elf + 52, ph, sizeof ph);
    g_assert_false(nm_elf_load_buffer(m, "trunc", elf, sizeof elf, &entry, &err));
    g_assert_nonnull(strstr(err->message, "beyond the end"));
    g_clear_error(&err);
    g_assert_false(nm_elf_load(m, "/nonexistent/file.elf", &entry, &err));
    g_assert_nonnull(err);
    g_clear_error(&err);

    nm_machine_free(m);
    nm_config_free(cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/cpu_sys/real_mode_transfers", test_real_mode_transfers);
    g_test_add_func("/cpu_sys/elf_loader_errors", test_elf_loader_errors);
    return g_test_run();
}
