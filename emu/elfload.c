/* ELF32 program headers (System V ABI, i386 supplement): only PT_LOAD
 * segments matter.  The file is untrusted input: every offset and size is
 * checked before it is used. */
#include "emu/elfload.h"

#include <string.h>

#include "cpu/cpu.h"
#include "emu/config.h"
#include "emu/core/log.h"
#include "emu/machine.h"
#include "emu/outfile.h"

#define EI_NIDENT   16
#define ELFCLASS32  1
#define ELFDATA2LSB 1
#define ET_EXEC     2
#define EM_386      3
#define PT_LOAD     1
#define EHDR_SIZE   52
#define PHDR_SIZE   32

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static bool fail(GError **err, const char *name, const char *what)
{
    g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE,
                "%s: not a loadable ELF32 i386 "
                "executable: %s",
                name, what);
    return false;
}

typedef struct {
    uint32_t offset, paddr, filesz, memsz;
} load_seg;

bool nm_elf_load_buffer(nm_machine *m, const char *name, const uint8_t *data, size_t len,
                        uint32_t *entry, GError **err)
{
    if (len < EHDR_SIZE || memcmp(data,
                                  "\x7f"
                                  "ELF",
                                  4))
        return fail(err, name, "bad magic");
    if (data[4] != ELFCLASS32) return fail(err, name, "not 32-bit (ELFCLASS32)");
    if (data[5] != ELFDATA2LSB) return fail(err, name, "not little-endian");
    if (rd16(data + 16) != ET_EXEC) return fail(err, name, "not an executable (ET_EXEC)");
    if (rd16(data + 18) != EM_386) return fail(err, name, "machine is not i386");
    uint32_t phoff = rd32(data + 28);
    uint16_t phentsize = rd16(data + 42), phnum = rd16(data + 44);
    if (phnum == 0) return fail(err, name, "no program headers");
    if (phentsize != PHDR_SIZE) return fail(err, name, "bad program header size");
    if (phoff > len || (uint64_t)phnum * PHDR_SIZE > len - phoff)
        return fail(err, name, "program headers beyond the end of the file");

    const nm_mem_region *ram = m->ram;
    uint64_t ram_end = ram ? (uint64_t)ram->base + ram->size : 0;
    load_seg *segs = g_new0(load_seg, phnum);
    unsigned nseg = 0;
    bool ok = true;
    for (unsigned i = 0; i < phnum && ok; i++) {
        const uint8_t *ph = data + phoff + (size_t)i * PHDR_SIZE;
        if (rd32(ph) != PT_LOAD) continue;
        load_seg s = {rd32(ph + 4), rd32(ph + 12), rd32(ph + 16), rd32(ph + 20)};
        if (s.filesz > s.memsz)
            ok = fail(err, name, "segment file size above its memory size");
        else if (s.offset > len || s.filesz > len - s.offset)
            ok = fail(err, name, "segment beyond the end of the file");
        else if (!ram || s.paddr < ram->base || (uint64_t)s.paddr + s.memsz > ram_end) {
            g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE,
                        "%s: segment at 0x%x..0x%llx does not fit in RAM (0x%x..0x%llx)", name,
                        s.paddr, (unsigned long long)s.paddr + s.memsz, ram ? ram->base : 0,
                        (unsigned long long)ram_end);
            ok = false;
        } else {
            segs[nseg++] = s;
        }
    }
    uint32_t e = rd32(data + 24);
    if (ok && !nseg) ok = fail(err, name, "no PT_LOAD segment");
    if (ok && (e < ram->base || e >= ram_end)) ok = fail(err, name, "entry point outside RAM");
    if (ok) {
        /* Everything checked: now copy (and clear the .bss part). */
        for (unsigned i = 0; i < nseg; i++) {
            load_seg *s = &segs[i];
            uint32_t off = s->paddr - ram->base;
            memcpy(ram->host + off, data + s->offset, s->filesz);
            memset(ram->host + off + s->filesz, 0, s->memsz - s->filesz);
            nm_info(LOADER, "%s: loaded 0x%x bytes at 0x%x (+0x%x zero)", name, s->filesz, s->paddr,
                    s->memsz - s->filesz);
        }
        *entry = e;
    }
    g_free(segs);
    return ok;
}

bool nm_elf_load(nm_machine *m, const char *path, uint32_t *entry, GError **err)
{
    gchar *data = NULL;
    gsize len = 0;
    GError *ferr = NULL;
    if (!nm_input_file_check("elf", path, err)) return false;
    if (!g_file_get_contents(path, &data, &len, &ferr)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: %s", path, ferr->message);
        g_error_free(ferr);
        return false;
    }
    bool ok = nm_elf_load_buffer(m, path, (const uint8_t *)data, len, entry, err);
    g_free(data);
    return ok;
}

bool nm_elf_boot(nm_machine *m, nm_cpu *cpu, const char *path, uint32_t stack_top, GError **err)
{
    uint32_t entry;
    if (!nm_elf_load(m, path, &entry, err)) return false;
    nm_cpu_enter_flat32(cpu, entry, stack_top);
    return true;
}
