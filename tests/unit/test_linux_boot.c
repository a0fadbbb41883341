/* Linux boot protocol loader and boot ROM: header checks, placement of the
 * kernel, command line, initrds and setup_data, the E820 map, the ROM
 * mapping, and a run from the reset vector into a fake kernel. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "cpu/cpu.h"
#include "devices/pc/pc.h"
#include "emu/linux_boot.h"
#include "emu/machine.h"
#include "emu/rom_image.h"
#include "firmware/rom_params.h"

#define MB (1u << 20)

typedef struct fixture {
    nm_config *cfg;
    nm_machine *m;
    char *dir;
} fixture;

static void setup_ram(fixture *fx, uint32_t ram)
{
    GError *err = NULL;
    fx->cfg = nm_config_new();
    fx->cfg->ram_bytes = ram;
    fx->m = nm_machine_new(fx->cfg, &err);
    g_assert_no_error(err);
    fx->dir = g_dir_make_tmp("nicemu-linux-boot-XXXXXX", &err);
    g_assert_no_error(err);
}

static void setup(fixture *fx, gconstpointer data)
{
    setup_ram(fx, data ? GPOINTER_TO_UINT(data) : 32 * MB);
}

static void teardown(fixture *fx, gconstpointer data)
{
    (void)data;
    GDir *d = g_dir_open(fx->dir, 0, NULL);
    for (const char *n; d && (n = g_dir_read_name(d));) {
        char *p = g_build_filename(fx->dir, n, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d) g_dir_close(d);
    g_rmdir(fx->dir);
    g_free(fx->dir);
    nm_machine_free(fx->m);
    nm_config_free(fx->cfg);
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}

/* A minimal bzImage: boot sector + one setup sector holding a 2.15-style
 * header, then the "protected-mode kernel" `code`. */
typedef struct fake_opts {
    uint16_t version;
    uint8_t loadflags;
    uint8_t setup_sects;
    uint32_t init_size;
    uint32_t cmdline_size;
    uint32_t initrd_addr_max;
} fake_opts;

static GByteArray *fake_bzimage(const fake_opts *o, const uint8_t *code, size_t code_len)
{
    size_t setup_len = 1024;
    GByteArray *a = g_byte_array_new();
    g_byte_array_set_size(a, (guint)(setup_len + code_len));
    uint8_t *p = a->data;
    memset(p, 0, setup_len);
    p[0x1f1] = o->setup_sects ? o->setup_sects : 1;
    put16(p + 0x1fe, 0xaa55);
    p[0x200] = 0xeb;
    p[0x201] = 0x6a; /* header ends at 0x26c, like 6.1's */
    memcpy(p + 0x202, "HdrS", 4);
    put16(p + 0x206, o->version ? o->version : 0x020f);
    p[0x211] = o->loadflags;
    put32(p + 0x214, 0x100000);
    put32(p + 0x22c, o->initrd_addr_max ? o->initrd_addr_max : 0x7fffffff);
    put32(p + 0x230, 0x1000); /* kernel_alignment */
    p[0x234] = 0;             /* not relocatable: runs at pref_address */
    put32(p + 0x238, o->cmdline_size ? o->cmdline_size : 2048);
    put32(p + 0x258, 0x100000); /* pref_address */
    put32(p + 0x260, o->init_size ? o->init_size : 0x10000);
    memcpy(p + setup_len, code, code_len);
    return a;
}

static const uint8_t nop_code[16] = {0x90};

static nm_linux_boot *open_fake(fixture *fx, const fake_opts *o, GError **err)
{
    GByteArray *img = fake_bzimage(o, nop_code, sizeof nop_code);
    nm_linux_boot *lb = nm_linux_boot_open_data(fx->m, "fake.bzImage", img->data, img->len, err);
    g_byte_array_free(img, TRUE);
    return lb;
}

static char *write_file(fixture *fx, const char *name, const void *data, size_t len)
{
    char *p = g_build_filename(fx->dir, name, NULL);
    GError *err = NULL;
    g_assert_true(g_file_set_contents(p, data, (gssize)len, &err));
    return p;
}

static uint32_t rd(fixture *fx, uint32_t addr, unsigned size)
{
    return nm_mem_read(fx->m->mem, addr, size);
}

static void assert_error(GError **err, const char *text)
{
    g_assert_nonnull(*err);
    if (!strstr((*err)->message, text)) g_error("message '%s' lacks '%s'", (*err)->message, text);
    g_assert_null(strchr((*err)->message, '\n'));
    g_clear_error(err);
}

static void test_bad_files(fixture *fx, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    /* Not a bzImage at all. */
    uint8_t junk[2048];
    memset(junk, 0x41, sizeof junk);
    g_assert_null(nm_linux_boot_open_data(fx->m, "junk", junk, sizeof junk, &err));
    assert_error(&err, "junk: not a bzImage (no HdrS header)");
    g_assert_null(nm_linux_boot_open_data(fx->m, "tiny", junk, 10, &err));
    assert_error(&err, "tiny: not a bzImage (no HdrS header)");
    char *path = write_file(fx, "junk.bin", junk, sizeof junk);
    g_assert_null(nm_linux_boot_open(fx->m, path, &err));
    assert_error(&err, "junk.bin: not a bzImage (no HdrS header)");
    g_free(path);
    char *missing = g_build_filename(fx->dir, "missing", NULL);
    g_assert_false(nm_linux_boot_load(fx->m, missing, NULL, NULL, &err));
    assert_error(&err, "missing");
    g_free(missing);
    g_assert_null(nm_linux_boot_open(fx->m, fx->dir, &err)); /* a directory */
    assert_error(&err, "not a regular file");

    /* Too old. */
    fake_opts o = {.version = 0x0209, .loadflags = 1};
    g_assert_null(open_fake(fx, &o, &err));
    assert_error(&err, "fake.bzImage: boot protocol 2.09 is too old (need 2.10)");
    o.version = 0x0202;
    g_assert_null(open_fake(fx, &o, &err));
    assert_error(&err, "boot protocol 2.02 is too old (need 2.10)");
    /* zImage: not loadable high. */
    o = (fake_opts){.loadflags = 0};
    g_assert_null(open_fake(fx, &o, &err));
    assert_error(&err, "fake.bzImage: not loadable high");
    /* setup_sects past the end of the file. */
    o = (fake_opts){.loadflags = 1, .setup_sects = 60};
    g_assert_null(open_fake(fx, &o, &err));
    assert_error(&err, "truncated");
    /* A header claiming to end past the file. */
    GByteArray *img = fake_bzimage(&(fake_opts){.loadflags = 1}, nop_code, 0);
    img->data[0x201] = 0x40; /* ends at 0x242: before init_size */
    g_assert_null(nm_linux_boot_open_data(fx->m, "short", img->data, img->len, &err));
    assert_error(&err, "short: truncated setup header");
    g_byte_array_free(img, TRUE);
    /* Shorter than syssize says: the file lost its tail. */
    img = fake_bzimage(&(fake_opts){.loadflags = 1}, nop_code, sizeof nop_code);
    put32(img->data + 0x1f4, 2); /* 32 bytes of kernel; the file has 16 */
    g_assert_null(nm_linux_boot_open_data(fx->m, "cut", img->data, img->len, &err));
    assert_error(&err, "cut: truncated: the header's syssize says 32 bytes");
    put32(img->data + 0x1f4, 1); /* exactly what is there */
    nm_linux_boot *whole = nm_linux_boot_open_data(fx->m, "whole", img->data, img->len, &err);
    g_assert_no_error(err);
    nm_linux_boot_free(whole);
    g_byte_array_free(img, TRUE);
    /* Needs more RAM to decompress than there is. */
    o = (fake_opts){.loadflags = 1, .init_size = 40 * MB};
    g_assert_null(open_fake(fx, &o, &err));
    assert_error(&err, "init_size");
}

static void test_initrd_too_large(fixture *fx, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    nm_linux_boot *lb = open_fake(fx, &(fake_opts){.loadflags = 1}, &err);
    g_assert_no_error(err);
    size_t big = 31 * MB;
    uint8_t *blob = g_malloc0(big);
    g_assert_true(nm_linux_boot_add_initrd_data(lb, "big.cpio", blob, big, &err));
    g_assert_false(nm_linux_boot_finish(lb, &err));
    char *want = g_strdup_printf("initrd (%zu bytes) does not fit in RAM below 0x2000000", big);
    assert_error(&err, want);
    g_free(want);
    nm_linux_boot_free(lb);
    /* Also when initrd_addr_max is what limits it. */
    lb = open_fake(fx, &(fake_opts){.loadflags = 1, .initrd_addr_max = 0x3fffff}, &err);
    g_assert_true(nm_linux_boot_add_initrd_data(lb, "mid.cpio", blob, 4 * MB, &err));
    g_assert_false(nm_linux_boot_finish(lb, &err));
    assert_error(&err, "does not fit in RAM below 0x400000");
    nm_linux_boot_free(lb);
    /* Bigger than RAM: refused when added. */
    lb = open_fake(fx, &(fake_opts){.loadflags = 1}, &err);
    g_assert_true(nm_linux_boot_add_initrd_data(lb, "a", blob, 20 * MB, &err));
    g_assert_false(nm_linux_boot_add_initrd_data(lb, "b", blob, 20 * MB, &err));
    assert_error(&err, "cannot fit");
    nm_linux_boot_free(lb);
    g_free(blob);
}

static void check_e820(uint64_t ram, const nm_e820_entry *e, unsigned n)
{
    g_assert_cmpuint(n, ==, 5);
    g_assert_cmphex(e[0].addr, ==, 0);
    g_assert_cmphex(e[0].size, ==, 0x9fc00);
    g_assert_cmpuint(e[0].type, ==, NM_E820_RAM);
    g_assert_cmphex(e[1].addr, ==, 0x9fc00);
    g_assert_cmphex(e[1].addr + e[1].size, ==, 0xa0000);
    g_assert_cmpuint(e[1].type, ==, NM_E820_RESERVED);
    g_assert_cmphex(e[2].addr, ==, 0xf0000);
    g_assert_cmphex(e[2].addr + e[2].size, ==, 0x100000);
    g_assert_cmpuint(e[2].type, ==, NM_E820_RESERVED);
    g_assert_cmphex(e[3].addr, ==, 0x100000);
    g_assert_cmphex(e[3].addr + e[3].size, ==, ram);
    g_assert_cmpuint(e[3].type, ==, NM_E820_RAM);
    g_assert_cmphex(e[4].addr, ==, 0xffff0000u);
    g_assert_cmphex(e[4].addr + e[4].size, ==, 0x100000000ull);
    g_assert_cmpuint(e[4].type, ==, NM_E820_RESERVED);
}

static void test_e820(fixture *fx, gconstpointer data)
{
    (void)data;
    const uint64_t sizes[] = {2 * MB, 16 * MB, 32 * MB, 256 * MB, 2048ull * MB};
    for (unsigned i = 0; i < G_N_ELEMENTS(sizes); i++) {
        nm_e820_entry e[8];
        check_e820(sizes[i], e, nm_linux_e820(sizes[i], e, 8));
    }
    nm_e820_entry e[8];
    g_assert_cmpuint(nm_linux_e820(1 * MB, e, 8), ==, 4); /* nothing above 1 MB */
    g_assert_cmpuint(nm_linux_e820(32 * MB, e, 2), ==, 2);

    /* The table in boot_params matches the RAM. */
    GError *err = NULL;
    nm_linux_boot *lb = open_fake(fx, &(fake_opts){.loadflags = 1}, &err);
    g_assert_no_error(err);
    g_assert_true(nm_linux_boot_finish(lb, &err));
    nm_linux_boot_free(lb);
    uint32_t bp = NM_LINUX_BOOT_PARAMS_ADDR;
    unsigned n = rd(fx, bp + 0x1e8, 1);
    nm_e820_entry got[8];
    for (unsigned i = 0; i < n && i < 8; i++) {
        uint32_t a = bp + 0x2d0 + 20 * i;
        got[i].addr = rd(fx, a, 4) | (uint64_t)rd(fx, a + 4, 4) << 32;
        got[i].size = rd(fx, a + 8, 4) | (uint64_t)rd(fx, a + 12, 4) << 32;
        got[i].type = rd(fx, a + 16, 4);
    }
    check_e820(32 * MB, got, n);
}

static void test_boot_params(fixture *fx, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    static const uint8_t code[] = {0xfa, 0xf4, 0xeb, 0xfd, 'k', 'e', 'r', 'n'};
    GByteArray *img =
        fake_bzimage(&(fake_opts){.loadflags = 1, .cmdline_size = 64}, code, sizeof code);
    nm_linux_boot *lb = nm_linux_boot_open_data(fx->m, "k", img->data, img->len, &err);
    g_assert_no_error(err);
    /* Command line longer than cmdline_size: refused. */
    char longline[80];
    memset(longline, 'x', sizeof longline - 1);
    longline[sizeof longline - 1] = 0;
    g_assert_false(nm_linux_boot_set_cmdline(lb, longline, &err));
    assert_error(&err, "at most 64");
    g_assert_true(nm_linux_boot_set_cmdline(lb, "console=ttyS0 quiet", &err));
    uint8_t initrd[1000];
    for (unsigned i = 0; i < sizeof initrd; i++)
        initrd[i] = (uint8_t)(i + 1);
    g_assert_true(nm_linux_boot_add_initrd_data(lb, "i", initrd, sizeof initrd, &err));
    static const char dtb[] = "\xd0\x0d\xfe\xed fake dtb";
    static const uint8_t rng[5] = {1, 2, 3, 4, 5};
    g_assert_true(nm_linux_boot_add_setup_data(lb, NM_SETUP_DTB, dtb, sizeof dtb, &err));
    g_assert_true(nm_linux_boot_add_setup_data(lb, NM_SETUP_RNG_SEED, rng, sizeof rng, &err));
    g_assert_true(nm_linux_boot_add_setup_data(lb, 0x1234, NULL, 0, &err));
    /* More than the low area holds: refused. */
    uint8_t *huge = g_malloc0(600 * 1024);
    g_assert_false(nm_linux_boot_add_setup_data(lb, NM_SETUP_DTB, huge, 600 * 1024, &err));
    assert_error(&err, "does not fit");
    g_free(huge);
    g_assert_true(nm_linux_boot_finish(lb, &err));
    g_assert_no_error(err);
    g_assert_cmphex(nm_linux_boot_entry(lb), ==, 0x100000);
    g_assert_false(nm_linux_boot_finish(lb, &err)); /* once */
    g_clear_error(&err);

    uint32_t bp = NM_LINUX_BOOT_PARAMS_ADDR;
    /* The setup header was copied: magic, version, our changes. */
    g_assert_cmphex(rd(fx, bp + 0x202, 4), ==, 0x53726448u);
    g_assert_cmphex(rd(fx, bp + 0x206, 2), ==, 0x020f);
    g_assert_cmphex(rd(fx, bp + 0x1fe, 2), ==, 0xaa55);
    g_assert_cmphex(rd(fx, bp + 0x210, 1), ==, 0xff);     /* type_of_loader */
    g_assert_cmphex(rd(fx, bp + 0x211, 1) & 1, ==, 1);    /* LOADED_HIGH */
    g_assert_cmphex(rd(fx, bp + 0x214, 4), ==, 0x100000); /* code32_start */
    g_assert_cmphex(rd(fx, bp + 0x1ef, 1), ==, 0);        /* sentinel clean */
    g_assert_cmphex(rd(fx, bp + 0x0000, 4), ==, 0);       /* nothing outside the header */
    /* The kernel at 1 MB. */
    g_assert_cmphex(rd(fx, 0x100000, 4), ==, 0xfdebf4fau);
    g_assert_cmphex(rd(fx, 0x100004, 4), ==, 0x6e72656bu);
    /* Command line. */
    uint32_t cl = rd(fx, bp + 0x228, 4);
    g_assert_cmphex(cl, ==, NM_LINUX_CMDLINE_ADDR);
    char got[32];
    for (unsigned i = 0; i < sizeof got; i++)
        got[i] = (char)rd(fx, cl + i, 1);
    g_assert_cmpstr(got, ==, "console=ttyS0 quiet");
    /* initrd: page aligned, as high as RAM allows. */
    uint32_t ri = rd(fx, bp + 0x218, 4), rs = rd(fx, bp + 0x21c, 4);
    g_assert_cmpuint(rs, ==, sizeof initrd);
    g_assert_cmphex(ri & 0xfff, ==, 0);
    g_assert_cmphex(ri, ==, (32 * MB - sizeof initrd) & ~0xfffu);
    g_assert_cmphex(ri, ==, nm_linux_boot_initrd_addr(lb));
    for (unsigned i = 0; i < sizeof initrd; i++)
        g_assert_cmpuint(rd(fx, ri + i, 1), ==, initrd[i]);
    /* setup_data chain, in order. */
    uint32_t node = rd(fx, bp + 0x250, 4);
    g_assert_cmphex(rd(fx, bp + 0x254, 4), ==, 0);
    g_assert_cmphex(node, ==, NM_LINUX_SETUP_DATA_ADDR);
    g_assert_cmpuint(rd(fx, node + 8, 4), ==, NM_SETUP_DTB);
    g_assert_cmpuint(rd(fx, node + 12, 4), ==, sizeof dtb);
    for (unsigned i = 0; i < sizeof dtb; i++)
        g_assert_cmpuint(rd(fx, node + 16 + i, 1), ==, (uint8_t)dtb[i]);
    uint32_t next = rd(fx, node, 4);
    g_assert_cmphex(next & 7, ==, 0);
    g_assert_cmphex(next, >=, node + 16 + sizeof dtb);
    node = next;
    g_assert_cmpuint(rd(fx, node + 8, 4), ==, NM_SETUP_RNG_SEED);
    g_assert_cmpuint(rd(fx, node + 12, 4), ==, 5);
    g_assert_cmpuint(rd(fx, node + 16 + 4, 1), ==, 5);
    node = rd(fx, node, 4);
    g_assert_cmpuint(rd(fx, node + 8, 4), ==, 0x1234);
    g_assert_cmpuint(rd(fx, node + 12, 4), ==, 0);
    g_assert_cmphex(rd(fx, node, 4) | rd(fx, node + 4, 4), ==, 0); /* end of the list */
    /* The ROM parameter block. */
    uint32_t pb = NM_ROM_PARAM_ADDR;
    g_assert_cmphex(rd(fx, pb + NM_ROM_PARAM_OFF_MAGIC, 4), ==, NM_ROM_PARAM_MAGIC);
    g_assert_cmphex(rd(fx, pb + NM_ROM_PARAM_OFF_VERSION, 4), ==, NM_ROM_PARAM_VERSION);
    g_assert_cmphex(rd(fx, pb + NM_ROM_PARAM_OFF_ENTRY, 4), ==, 0x100000);
    g_assert_cmphex(rd(fx, pb + NM_ROM_PARAM_OFF_ESI, 4), ==, NM_LINUX_BOOT_PARAMS_ADDR);
    nm_linux_boot_free(lb);
    g_byte_array_free(img, TRUE);
}

static void test_multiple_initrds(fixture *fx, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    GByteArray *img = fake_bzimage(&(fake_opts){.loadflags = 1}, nop_code, sizeof nop_code);
    char *kernel = write_file(fx, "bzImage", img->data, img->len);
    g_byte_array_free(img, TRUE);
    char *a = write_file(fx, "a.cpio", "AAAAA", 5);
    char *b = write_file(fx, "b.cpio", "BBBB", 4);
    char *c = write_file(fx, "c.cpio", "CCCCCCC", 7);
    char *list = g_strjoin(",", a, b, c, NULL);
    g_assert_true(nm_linux_boot_load(fx->m, kernel, list, NULL, &err));
    g_assert_no_error(err);
    uint32_t bp = NM_LINUX_BOOT_PARAMS_ADDR;
    uint32_t ri = rd(fx, bp + 0x218, 4), rs = rd(fx, bp + 0x21c, 4);
    /* Back to back, each archive starting 4-aligned: 5+3 pad, 4, 7. */
    g_assert_cmpuint(rs, ==, 8 + 4 + 7);
    g_assert_cmphex(ri & 0xfff, ==, 0);
    static const char want[] = "AAAAA\0\0\0BBBBCCCCCCC";
    for (unsigned i = 0; i < rs; i++)
        g_assert_cmpuint(rd(fx, ri + i, 1), ==, (uint8_t)want[i]);
    /* Empty command line: points at an empty string. */
    g_assert_cmpuint(rd(fx, rd(fx, bp + 0x228, 4), 1), ==, 0);
    /* A missing initrd among them: a clear error naming it. */
    char *bad = g_strjoin(",", a, "/nonexistent/initrd.cpio", NULL);
    g_assert_false(nm_linux_boot_load(fx->m, kernel, bad, NULL, &err));
    assert_error(&err, "/nonexistent/initrd.cpio");
    g_free(bad);
    g_free(list);
    g_free(a);
    g_free(b);
    g_free(c);
    g_free(kernel);
}

static void test_rom_install(fixture *fx, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    size_t len;
    const uint8_t *rom = nm_boot_rom(&len);
    g_assert_cmpuint(len, ==, NM_ROM_SIZE);
    g_assert_cmphex(rom[0xfff0], ==, 0xea); /* JMP FAR at the reset vector */
    g_assert_true(nm_boot_rom_install(fx->m, &err));
    g_assert_no_error(err);
    /* Visible at both places, read-only. */
    g_assert_cmphex(rd(fx, 0xfffffff0u, 1), ==, 0xea);
    g_assert_cmphex(rd(fx, 0xffff0u, 4), ==, rd(fx, 0xfffffff0u, 4));
    g_assert_cmphex(rd(fx, 0xf0000u, 4), ==, rd(fx, 0xffff0000u, 4));
    nm_mem_write(fx->m->mem, 0xffff0u, 0, 4);
    g_assert_cmphex(rd(fx, 0xffff0u, 1), ==, 0xea);
    /* RAM below the ROM is still RAM. */
    nm_mem_write(fx->m->mem, 0xeffff, 0x5a, 1);
    g_assert_cmphex(rd(fx, 0xeffff, 1), ==, 0x5a);

    /* Arbitrary images (--rom): sizes checked, mapped at the top. */
    uint8_t small[4096];
    memset(small, 0x11, sizeof small);
    small[4095] = 0x99;
    g_assert_false(nm_rom_install_image(fx->m, small, 0, &err));
    assert_error(&err, "must be 1 byte to 128 KB");
    g_assert_false(nm_rom_install_image(fx->m, small, 128 * 1024 + 1, &err));
    assert_error(&err, "must be 1 byte to 128 KB");
    char *path = write_file(fx, "rom.bin", small, sizeof small);
    g_assert_true(nm_rom_install_file(fx->m, path, &err));
    g_assert_cmphex(rd(fx, 0xfffff, 1), ==, 0x99); /* the later mapping covers ours */
    g_assert_cmphex(rd(fx, 0xffffffffu, 1), ==, 0x99);
    g_assert_cmphex(rd(fx, 0xff000, 1), ==, 0x11);
    g_free(path);
    char *empty = write_file(fx, "empty.bin", "", 0);
    g_assert_false(nm_rom_install_file(fx->m, empty, &err));
    assert_error(&err, "empty.bin: not a ROM image");
    g_free(empty);
}

/* From the reset vector through our ROM into a "kernel" that writes 'K',
 * then type_of_loader and the first command-line byte it finds through
 * ESI, to the debug console, then halts. */
static void test_rom_boots_kernel(fixture *fx, gconstpointer data)
{
    (void)data;
    static const uint8_t code[] = {
        0xb0, 'K',                          /* mov al, 'K' */
        0xe6, 0xe9,                         /* out 0xe9, al */
        0x8a, 0x86, 0x10, 0x02, 0x00, 0x00, /* mov al, [esi+0x210] */
        0xe6, 0xe9,                         /* out 0xe9, al */
        0x8b, 0x9e, 0x28, 0x02, 0x00, 0x00, /* mov ebx, [esi+0x228] */
        0x8a, 0x03,                         /* mov al, [ebx] */
        0xe6, 0xe9,                         /* out 0xe9, al */
        0x8c, 0xc8,                         /* mov eax, cs */
        0x8c, 0xd9,                         /* mov ecx, ds */
        0x8c, 0xd2,                         /* mov edx, ss */
        0x31, 0xdb,                         /* xor ebx, ebx */
        0xf4,                               /* hlt (IF is clear) */
    };
    GError *err = NULL;
    nm_devcfg *dc = nm_devcfg_parse("test", "debugcon,file=none", &err);
    g_assert_no_error(err);
    void *con = nm_machine_add_device(fx->m, &nm_debugcon_class, dc, &err);
    g_assert_no_error(err);
    g_assert_true(nm_boot_rom_install(fx->m, &err));
    GByteArray *img = fake_bzimage(&(fake_opts){.loadflags = 1}, code, sizeof code);
    nm_linux_boot *lb = nm_linux_boot_open_data(fx->m, "k", img->data, img->len, &err);
    g_assert_no_error(err);
    g_assert_true(nm_linux_boot_set_cmdline(lb, "root=/dev/ram0", &err));
    g_assert_true(nm_linux_boot_finish(lb, &err));
    nm_linux_boot_free(lb);
    g_byte_array_free(img, TRUE);

    nm_cpu *cpu = nm_cpu_new(fx->m);
    g_assert_true(fx->m->cpu == cpu);
    nm_cpu_reset(cpu);
    g_assert_cmphex(nm_cpu_get_eip(cpu), ==, 0xfff0);
    for (int i = 0; i < 100 && !fx->m->stop_requested; i++)
        nm_cpu_run(cpu, 10000);
    g_assert_true(fx->m->stop_requested);
    g_assert_cmpint(fx->m->stop_reason, ==, NM_STOP_HALT);
    g_assert_cmpstr(nm_debugcon_text(con), ==, "K\xffr");
    /* The Linux 32-bit entry state (boot.rst "32-bit Boot Protocol"). */
    g_assert_cmphex(nm_cpu_get_reg(cpu, NM_EAX) & 0xffff, ==, NM_ROM_BOOT_CS);
    g_assert_cmphex(nm_cpu_get_reg(cpu, NM_ECX) & 0xffff, ==, NM_ROM_BOOT_DS);
    g_assert_cmphex(nm_cpu_get_reg(cpu, NM_EDX) & 0xffff, ==, NM_ROM_BOOT_DS);
    g_assert_cmphex(nm_cpu_get_reg(cpu, NM_ESI), ==, NM_LINUX_BOOT_PARAMS_ADDR);
    g_assert_cmphex(nm_cpu_get_reg(cpu, NM_EDI), ==, 0);
    g_assert_cmphex(nm_cpu_get_reg(cpu, NM_EBP), ==, 0);
    g_assert_cmphex(nm_cpu_get_eflags(cpu) & NM_FLAG_IF, ==, 0);
    const nm_segment *cs = nm_cpu_get_segment(cpu, NM_CS);
    g_assert_cmphex(cs->base, ==, 0);
    g_assert_cmphex(cs->limit, ==, 0xffffffffu);
    g_assert_true(cs->flags & NM_SEGF_DB);
    g_assert_cmphex(nm_cpu_get_segment(cpu, NM_ES)->selector, ==, NM_ROM_BOOT_DS);
    g_assert_cmphex(nm_cpu_get_segment(cpu, NM_SS)->limit, ==, 0xffffffffu);
    g_assert_cmphex(nm_cpu_get_eip(cpu), ==, 0x100000 + sizeof code);
    nm_devcfg_free(dc);
}

/* With no kernel loaded the ROM says so and halts. */
static void test_rom_without_kernel(fixture *fx, gconstpointer data)
{
    (void)data;
    GError *err = NULL;
    nm_devcfg *dc = nm_devcfg_parse("test", "debugcon,file=none", &err);
    void *con = nm_machine_add_device(fx->m, &nm_debugcon_class, dc, &err);
    g_assert_no_error(err);
    g_assert_true(nm_boot_rom_install(fx->m, &err));
    nm_cpu *cpu = nm_cpu_new(fx->m);
    for (int i = 0; i < 100 && !fx->m->stop_requested; i++)
        nm_cpu_run(cpu, 10000);
    g_assert_cmpint(fx->m->stop_reason, ==, NM_STOP_HALT);
    g_assert_nonnull(strstr(nm_debugcon_text(con), "nothing to boot"));
    nm_devcfg_free(dc);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define T(name, fn) g_test_add("/linux-boot/" name, fixture, NULL, setup, fn, teardown)
    T("bad-files", test_bad_files);
    T("initrd-too-large", test_initrd_too_large);
    T("e820", test_e820);
    T("boot-params", test_boot_params);
    T("multiple-initrds", test_multiple_initrds);
    T("rom-install", test_rom_install);
    T("rom-boots-kernel", test_rom_boots_kernel);
    T("rom-without-kernel", test_rom_without_kernel);
#undef T
    return g_test_run();
}
