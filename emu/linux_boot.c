/* Linux boot protocol loader, 32-bit entry.  Facts and offsets from
 * Documentation/x86/boot.rst ("BOOT" below) and zero-page.rst / the uapi
 * bootparam.h of Linux 6.1. */
#include "emu/linux_boot.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "emu/core/log.h"
#include "emu/machine.h"
#include "emu/rom_image.h"
#include "devices/video/vga.h"

/* struct boot_params offsets (zero-page.rst). */
#define BP_SIZE 0x1000
/* struct screen_info (uapi screen_info.h): orig_video_mode, _cols, _lines,
 * _isVGA, _points. */
#define BP_VIDEO_MODE   0x06
#define BP_VIDEO_COLS   0x07
#define BP_VIDEO_LINES  0x0e
#define BP_VIDEO_IS_VGA 0x0f
#define BP_VIDEO_POINTS 0x10
#define BP_ALT_MEM_K    0x1e0
#define BP_E820_ENTRIES 0x1e8
#define BP_HDR          0x1f1 /* setup header: same offset in the file */
#define BP_HDR_END      0x290 /* the header area ends where edd_mbr_sig_buffer starts */
#define BP_E820_TABLE   0x2d0
#define BP_E820_MAX     128

/* Setup header fields (BOOT "The Real-Mode Kernel Header"). */
#define HDR_SETUP_SECTS      0x1f1
#define HDR_SYSSIZE          0x1f4
#define HDR_JUMP             0x200
#define HDR_MAGIC            0x202
#define HDR_VERSION          0x206
#define HDR_TYPE_OF_LOADER   0x210
#define HDR_LOADFLAGS        0x211
#define HDR_CODE32_START     0x214
#define HDR_RAMDISK_IMAGE    0x218
#define HDR_RAMDISK_SIZE     0x21c
#define HDR_CMD_LINE_PTR     0x228
#define HDR_INITRD_ADDR_MAX  0x22c
#define HDR_KERNEL_ALIGNMENT 0x230
#define HDR_RELOCATABLE      0x234
#define HDR_CMDLINE_SIZE     0x238
#define HDR_HARDWARE_SUBARCH 0x23c
#define HDR_SETUP_DATA       0x250
#define HDR_PREF_ADDRESS     0x258
#define HDR_INIT_SIZE        0x260
#define HDR_END_2_10         0x264 /* a 2.10 header reaches init_size */

#define LOADED_HIGH  0x01
#define MIN_PROTOCOL 0x020a

struct nm_linux_boot {
    nm_machine *m;
    char *name;
    uint64_t ram_end;
    uint8_t bp[BP_SIZE];
    uint8_t *kernel; /* the protected-mode part */
    size_t kernel_len;
    uint64_t kernel_end; /* first byte past what the kernel needs to boot */
    uint32_t cmdline_max;
    char *cmdline;
    GByteArray *initrd;
    GByteArray *setup_data; /* the nodes as they will sit at SETUP_DATA_ADDR */
    size_t last_node;       /* offset of the last node (valid if setup_data->len) */
    uint32_t initrd_addr, entry;
    bool finished;
};

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p)
{
    return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}
static void wr16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void wr32(uint8_t *p, uint32_t v)
{
    wr16(p, v);
    wr16(p + 2, v >> 16);
}
static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

static gboolean fail(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean fail(GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error_literal(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, msg);
    g_free(msg);
    return FALSE;
}

unsigned nm_linux_e820(uint64_t ram_bytes, nm_e820_entry *out, unsigned max)
{
    const nm_e820_entry all[] = {
        {0, MIN(ram_bytes, 0x9fc00u), NM_E820_RAM},
        /* The EBDA's usual place: nothing there, but Linux looks (ebda.c). */
        {0x9fc00, 0x400, NM_E820_RESERVED},
        {0xf0000, 0x10000, NM_E820_RESERVED}, /* the boot ROM */
        {0x100000, ram_bytes > 0x100000 ? ram_bytes - 0x100000 : 0, NM_E820_RAM},
        {0xffff0000u, 0x10000, NM_E820_RESERVED}, /* its alias below 4 GB */
    };
    unsigned n = 0;
    for (unsigned i = 0; i < G_N_ELEMENTS(all) && n < max; i++)
        if (all[i].size) out[n++] = all[i];
    return n;
}

static bool read_file(const char *path, uint64_t limit, const char *what, uint8_t **data,
                      size_t *len, GError **err)
{
    struct stat st;
    if (stat(path, &st) != 0) return fail(err, "%s: %s", path, g_strerror(errno));
    if (!S_ISREG(st.st_mode)) return fail(err, "%s: not a regular file", path);
    if ((uint64_t)st.st_size > limit)
        return fail(err, "%s: %s of %lld bytes cannot fit in %llu MB of RAM", path, what,
                    (long long)st.st_size, (unsigned long long)(limit >> 20));
    GError *e = NULL;
    gchar *buf;
    gsize n;
    if (!g_file_get_contents(path, &buf, &n, &e)) {
        fail(err, "%s", e->message);
        g_error_free(e);
        return false;
    }
    *data = (uint8_t *)buf;
    *len = n;
    return true;
}

nm_linux_boot *nm_linux_boot_open_data(nm_machine *m, const char *name, const uint8_t *data,
                                       size_t len, GError **err)
{
    uint64_t ram_end = m->ram ? m->ram->size : 0;
    if (ram_end < NM_LINUX_LOAD_ADDR) {
        fail(err, "%s: a Linux kernel needs at least 1 MB of RAM", name);
        return NULL;
    }
    if (len < HDR_MAGIC + 4 || memcmp(data + HDR_MAGIC, "HdrS", 4) != 0) {
        fail(err, "%s: not a bzImage (no HdrS header)", name);
        return NULL;
    }
    if (len < HDR_VERSION + 2) {
        fail(err, "%s: truncated setup header", name);
        return NULL;
    }
    unsigned version = data[HDR_VERSION] | data[HDR_VERSION + 1] << 8;
    /* Protocol versions print as major.minor with the minor in decimal:
     * 0x020f is 2.15. */
    if (version < MIN_PROTOCOL) {
        fail(err, "%s: boot protocol %u.%02u is too old (need 2.10)", name, version >> 8,
             version & 0xff);
        return NULL;
    }
    /* The header ends at 0x202 + the jump's displacement byte (BOOT "32-bit
     * Boot Protocol"); a 2.10 header reaches init_size. */
    size_t hdr_end = HDR_MAGIC + (size_t)data[HDR_JUMP + 1];
    if (hdr_end < HDR_END_2_10 || hdr_end > len) {
        fail(err, "%s: truncated setup header (it ends at 0x%zx)", name, hdr_end);
        return NULL;
    }
    if (!(data[HDR_LOADFLAGS] & LOADED_HIGH)) {
        fail(err, "%s: not loadable high (LOADED_HIGH clear: a zImage, not a bzImage)", name);
        return NULL;
    }
    /* setup_sects 0 means 4 (BOOT note 1); the 32-bit kernel follows the
     * boot sector and the setup sectors. */
    size_t setup_sects = data[HDR_SETUP_SECTS] ? data[HDR_SETUP_SECTS] : 4;
    size_t setup_len = (setup_sects + 1) * 512;
    if (setup_len >= len) {
        fail(err, "%s: truncated: the setup code (%zu bytes) leaves no kernel in %zu bytes", name,
             setup_len, len);
        return NULL;
    }
    /* syssize: the protected-mode code in 16-byte paragraphs (BOOT, protocol
     * 2.04+); arch/x86/boot/tools/build.c pads the file to exactly that, so a
     * shorter file lost its tail (and would boot into garbage). */
    uint64_t sys_bytes = (uint64_t)rd32(data + HDR_SYSSIZE) * 16;
    if (sys_bytes > len - setup_len) {
        fail(err,
             "%s: truncated: the header's syssize says %llu bytes of kernel after the setup "
             "code, the file has %zu (%llu bytes missing)",
             name, (unsigned long long)sys_bytes, len - setup_len,
             (unsigned long long)(sys_bytes - (len - setup_len)));
        return NULL;
    }
    nm_linux_boot *lb = g_new0(nm_linux_boot, 1);
    lb->m = m;
    lb->name = g_strdup(name);
    lb->ram_end = ram_end;
    lb->initrd = g_byte_array_new();
    lb->setup_data = g_byte_array_new();
    /* The zero page starts all zero; the setup header is copied from the
     * image (BOOT "32-bit Boot Protocol").  That leaves the sentinel at
     * 0x1EF zero, so the kernel trusts the rest. */
    memcpy(lb->bp + BP_HDR, data + BP_HDR, MIN(hdr_end, (size_t)BP_HDR_END) - BP_HDR);
    lb->kernel_len = len - setup_len;
    lb->kernel = g_memdup2(data + setup_len, lb->kernel_len);

    const uint8_t *bp = lb->bp;
    uint64_t load_end = (uint64_t)NM_LINUX_LOAD_ADDR + lb->kernel_len;
    if (load_end > ram_end) {
        fail(err, "%s: the kernel (%zu bytes at 0x%x) does not fit in %llu MB of RAM", name,
             lb->kernel_len, NM_LINUX_LOAD_ADDR, (unsigned long long)(ram_end >> 20));
        nm_linux_boot_free(lb);
        return NULL;
    }
    /* Where it will decompress (BOOT init_size): a relocatable kernel runs
     * at the load address aligned up to kernel_alignment, but the 32-bit
     * decompressor never goes below LOAD_PHYSICAL_ADDR, which it publishes
     * as pref_address (arch/x86/boot/compressed/head_32.S). */
    uint64_t align = rd32(bp + HDR_KERNEL_ALIGNMENT), pref = rd64(bp + HDR_PREF_ADDRESS);
    if (align == 0 || (align & (align - 1))) align = 1;
    uint64_t runtime =
        bp[HDR_RELOCATABLE] ? MAX((NM_LINUX_LOAD_ADDR + align - 1) & ~(align - 1), pref) : pref;
    if (runtime == 0) runtime = NM_LINUX_LOAD_ADDR;
    uint64_t init_end = runtime + rd32(bp + HDR_INIT_SIZE);
    if (init_end > ram_end) {
        fail(err,
             "%s: the kernel needs RAM up to 0x%llx to decompress (init_size), but RAM "
             "ends at 0x%llx: give it %llu MB or more",
             name, (unsigned long long)init_end, (unsigned long long)ram_end,
             (unsigned long long)((init_end + (1u << 20) - 1) >> 20));
        nm_linux_boot_free(lb);
        return NULL;
    }
    lb->kernel_end = MAX(load_end, init_end);
    /* cmdline_size excludes the NUL (BOOT cmdline_size); our area caps it. */
    lb->cmdline_max =
        MIN(rd32(bp + HDR_CMDLINE_SIZE), NM_LINUX_CMDLINE_END - NM_LINUX_CMDLINE_ADDR - 1);
    lb->cmdline = g_strdup("");
    nm_info(LOADER, "%s: boot protocol %u.%02u, %zu-byte kernel, runs at 0x%llx..0x%llx", name,
            version >> 8, version & 0xff, lb->kernel_len, (unsigned long long)runtime,
            (unsigned long long)init_end);
    return lb;
}

nm_linux_boot *nm_linux_boot_open(nm_machine *m, const char *path, GError **err)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (!read_file(path, m->ram ? m->ram->size : 0, "kernel", &data, &len, err)) return NULL;
    nm_linux_boot *lb = nm_linux_boot_open_data(m, path, data, len, err);
    g_free(data);
    return lb;
}

bool nm_linux_boot_set_cmdline(nm_linux_boot *lb, const char *cmdline, GError **err)
{
    size_t n = cmdline ? strlen(cmdline) : 0;
    if (n > lb->cmdline_max)
        return fail(err, "the kernel command line is %zu bytes; %s accepts at most %u", n, lb->name,
                    lb->cmdline_max);
    g_free(lb->cmdline);
    lb->cmdline = g_strdup(cmdline ? cmdline : "");
    return true;
}

bool nm_linux_boot_add_initrd_data(nm_linux_boot *lb, const char *name, const void *data,
                                   size_t len, GError **err)
{
    if (len > lb->ram_end || lb->initrd->len + (uint64_t)len + 3 > lb->ram_end)
        return fail(err, "%s: initrd of %zu bytes cannot fit in %llu MB of RAM", name, len,
                    (unsigned long long)(lb->ram_end >> 20));
    static const uint8_t zeros[4];
    /* Pad the previous archive to a multiple of 4: a cpio "newc" header
     * must start 4-aligned, and init/initramfs.c skips the zeros. */
    g_byte_array_append(lb->initrd, zeros, (4 - lb->initrd->len % 4) % 4);
    g_byte_array_append(lb->initrd, data, (guint)len);
    return true;
}

bool nm_linux_boot_add_initrd(nm_linux_boot *lb, const char *path, GError **err)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (!read_file(path, lb->ram_end, "initrd", &data, &len, err)) return false;
    bool ok = nm_linux_boot_add_initrd_data(lb, path, data, len, err);
    g_free(data);
    return ok;
}

bool nm_linux_boot_add_setup_data(nm_linux_boot *lb, uint32_t type, const void *data, uint32_t len,
                                  GError **err)
{
    /* struct setup_data { u64 next; u32 type; u32 len; u8 data[]; } (BOOT
     * setup_data), each node 8-aligned for its u64. */
    size_t old = lb->setup_data->len;
    size_t at = (old + 7) & ~(size_t)7;
    size_t room = NM_LINUX_SETUP_DATA_END - NM_LINUX_SETUP_DATA_ADDR;
    if (at + 16 + (uint64_t)len > room)
        return fail(err,
                    "setup_data (type %u, %u bytes) does not fit in the %zu bytes left "
                    "below 0x%x",
                    type, len, at + 16 <= room ? room - at - 16 : 0, NM_LINUX_SETUP_DATA_END);
    g_byte_array_set_size(lb->setup_data, (guint)(at + 16 + len));
    uint8_t *base = lb->setup_data->data;
    memset(base + old, 0, at + 16 - old); /* alignment padding and the header */
    wr32(base + at + 8, type);
    wr32(base + at + 12, len);
    if (len) memcpy(base + at + 16, data, len);
    /* Linked in the order added: the previous node points here. */
    if (old) wr64(base + lb->last_node, NM_LINUX_SETUP_DATA_ADDR + at);
    lb->last_node = at;
    return true;
}

static bool load(nm_linux_boot *lb, uint32_t addr, const void *data, size_t len, GError **err)
{
    if (len && !nm_mem_region_load(lb->m->ram, addr, data, len))
        return fail(err, "%s: cannot write %zu bytes at 0x%08x: not RAM", lb->name, len, addr);
    return true;
}

bool nm_linux_boot_finish(nm_linux_boot *lb, GError **err)
{
    if (lb->finished) return fail(err, "%s: already loaded", lb->name);
    uint8_t *bp = lb->bp;
    uint64_t initrd_len = lb->initrd->len;
    if (initrd_len) {
        /* As high as allowed: below initrd_addr_max (the highest byte it may
         * occupy, BOOT) and RAM end, 4 KB aligned, above the kernel. */
        uint64_t limit = MIN((uint64_t)rd32(bp + HDR_INITRD_ADDR_MAX) + 1, lb->ram_end);
        uint64_t start = initrd_len <= limit ? (limit - initrd_len) & ~(uint64_t)0xfff : 0;
        if (initrd_len > limit || start < lb->kernel_end)
            return fail(err,
                        "initrd (%llu bytes) does not fit in RAM below 0x%llx (the kernel "
                        "needs up to 0x%llx)",
                        (unsigned long long)initrd_len, (unsigned long long)limit,
                        (unsigned long long)lb->kernel_end);
        lb->initrd_addr = (uint32_t)start;
    }
    bp[HDR_TYPE_OF_LOADER] = 0xff; /* no assigned loader ID (BOOT type_of_loader) */
    /* CAN_USE_HEAP/heap_end_ptr concern the real-mode setup code, which the
     * 32-bit entry skips. */
    wr32(bp + HDR_CODE32_START, NM_LINUX_LOAD_ADDR);
    wr32(bp + HDR_RAMDISK_IMAGE, lb->initrd_addr);
    wr32(bp + HDR_RAMDISK_SIZE, (uint32_t)initrd_len);
    wr32(bp + HDR_CMD_LINE_PTR, NM_LINUX_CMDLINE_ADDR);
    wr32(bp + HDR_HARDWARE_SUBARCH, 0); /* X86_SUBARCH_PC */
    wr64(bp + HDR_SETUP_DATA, lb->setup_data->len ? NM_LINUX_SETUP_DATA_ADDR : 0);

    /* struct screen_info at offset 0 (zero-page.rst): what a VGA BIOS left
     * in mode 03h, which vgacon needs to take the VGA (vgacon_startup:
     * lines and columns non-zero, isVGA set, ega_bx low byte not 0x10).
     * The cursor starts at the top left of the cleared screen. */
    if (nm_vga_of(lb->m)) {
        bp[BP_VIDEO_MODE] = 0x03;
        bp[BP_VIDEO_COLS] = 80;
        bp[BP_VIDEO_LINES] = 25;
        bp[BP_VIDEO_IS_VGA] = 1;
        wr16(bp + BP_VIDEO_POINTS, 16);
    }

    nm_e820_entry e820[BP_E820_MAX];
    unsigned n = nm_linux_e820(lb->ram_end, e820, BP_E820_MAX);
    bp[BP_E820_ENTRIES] = (uint8_t)n;
    for (unsigned i = 0; i < n; i++) {
        uint8_t *e = bp + BP_E820_TABLE + 20 * i; /* struct boot_e820_entry, packed */
        wr64(e, e820[i].addr);
        wr64(e + 8, e820[i].size);
        wr32(e + 16, e820[i].type);
    }
    /* Extended memory above 1 MB in KB, for anything that ignores E820. */
    wr32(bp + BP_ALT_MEM_K, (uint32_t)((lb->ram_end - 0x100000) >> 10));

    if (!load(lb, NM_LINUX_LOAD_ADDR, lb->kernel, lb->kernel_len, err) ||
        !load(lb, lb->initrd_addr, lb->initrd->data, initrd_len, err) ||
        !load(lb, NM_LINUX_CMDLINE_ADDR, lb->cmdline, strlen(lb->cmdline) + 1, err) ||
        !load(lb, NM_LINUX_SETUP_DATA_ADDR, lb->setup_data->data, lb->setup_data->len, err) ||
        !load(lb, NM_LINUX_BOOT_PARAMS_ADDR, bp, BP_SIZE, err))
        return false;
    lb->entry = NM_LINUX_LOAD_ADDR;
    if (!nm_boot_rom_set_entry(lb->m, lb->entry, NM_LINUX_BOOT_PARAMS_ADDR, 0, err)) return false;
    lb->finished = true;
    nm_info(LOADER, "%s: entry 0x%x, boot_params 0x%x, initrd %llu bytes at 0x%x, cmdline \"%s\"",
            lb->name, lb->entry, NM_LINUX_BOOT_PARAMS_ADDR, (unsigned long long)initrd_len,
            lb->initrd_addr, lb->cmdline);
    return true;
}

void nm_linux_boot_free(nm_linux_boot *lb)
{
    if (!lb) return;
    g_free(lb->name);
    g_free(lb->kernel);
    g_free(lb->cmdline);
    g_byte_array_free(lb->initrd, TRUE);
    g_byte_array_free(lb->setup_data, TRUE);
    g_free(lb);
}

uint32_t nm_linux_boot_initrd_addr(const nm_linux_boot *lb)
{
    return lb->initrd_addr;
}
uint32_t nm_linux_boot_initrd_size(const nm_linux_boot *lb)
{
    return lb->initrd->len;
}
uint32_t nm_linux_boot_entry(const nm_linux_boot *lb)
{
    return lb->entry;
}

bool nm_linux_boot_load(nm_machine *m, const char *kernel, const char *initrds, const char *cmdline,
                        GError **err)
{
    nm_linux_boot *lb = nm_linux_boot_open(m, kernel, err);
    if (!lb) return false;
    bool ok = nm_linux_boot_set_cmdline(lb, cmdline, err);
    if (ok && initrds && *initrds) {
        char **paths = g_strsplit(initrds, ",", -1);
        for (char **p = paths; ok && *p; p++)
            if (!**p)
                ok =
                    fail(err, "initrd: an empty file name in '%s' (form: FILE[,FILE...])", initrds);
        for (char **p = paths; ok && *p; p++)
            ok = nm_linux_boot_add_initrd(lb, *p, err);
        g_strfreev(paths);
    }
    ok = ok && nm_linux_boot_finish(lb, err);
    nm_linux_boot_free(lb);
    return ok;
}
