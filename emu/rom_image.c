#include "emu/rom_image.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "emu/core/log.h"
#include "emu/machine.h"
#include "firmware/rom_params.h"

bool nm_rom_install_image(nm_machine *m, const uint8_t *data, size_t len, GError **err)
{
    if (len == 0 || len > NM_ROM_MAX_IMAGE) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "ROM image is %zu bytes (must be 1 byte to 128 KB)", len);
        return false;
    }
    /* The reset vector is the image's last 16 bytes at 0xFFFFFFF0 (SDM vol.
     * 3A, 9.1.4); real-mode code far-jumps into the copy below 1 MB. */
    uint32_t low = (uint32_t)(0x100000u - len), high = (uint32_t)(0u - (uint32_t)len);
    nm_mem_region *r = nm_memmap_add_rom(m->mem, "rom", low, (uint32_t)len);
    nm_mem_region *alias = r ? nm_memmap_add_alias_rom(m->mem, "rom-high", high, r) : NULL;
    if (!r || !alias || !nm_mem_region_load(r, 0, data, len)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "cannot map a %zu-byte ROM at 0x%05x and 0x%08x", len, low, high);
        return false;
    }
    nm_info(LOADER, "ROM: %zu bytes at 0x%05x and 0x%08x", len, low, high);
    return true;
}

bool nm_boot_rom_install(nm_machine *m, GError **err)
{
    size_t len;
    const uint8_t *rom = nm_boot_rom(&len);
    return nm_rom_install_image(m, rom, len, err);
}

bool nm_rom_install_file(nm_machine *m, const char *path, GError **err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: %s", path, g_strerror(errno));
        return false;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0 || st.st_size > NM_ROM_MAX_IMAGE) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE,
                    "%s: not a ROM image (must be a file of 1 byte to 128 KB)", path);
        return false;
    }
    gchar *data;
    gsize len;
    GError *e = NULL;
    if (!g_file_get_contents(path, &data, &len, &e)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s", e->message);
        g_error_free(e);
        return false;
    }
    bool ok = nm_rom_install_image(m, (const uint8_t *)data, len, &e);
    if (!ok) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_FILE, "%s: %s", path, e->message);
        g_error_free(e);
    }
    g_free(data);
    return ok;
}

bool nm_boot_rom_set_entry(nm_machine *m, uint32_t entry, uint32_t esi, uint32_t esp, GError **err)
{
    const uint32_t words[NM_ROM_PARAM_SIZE / 4] = {
        [NM_ROM_PARAM_OFF_MAGIC / 4] = NM_ROM_PARAM_MAGIC,
        [NM_ROM_PARAM_OFF_VERSION / 4] = NM_ROM_PARAM_VERSION,
        [NM_ROM_PARAM_OFF_ENTRY / 4] = entry,
        [NM_ROM_PARAM_OFF_ESI / 4] = esi,
        [NM_ROM_PARAM_OFF_ESP / 4] = esp,
        [NM_ROM_PARAM_OFF_FLAGS / 4] = 0,
    };
    uint8_t block[NM_ROM_PARAM_SIZE];
    for (unsigned i = 0; i < NM_ROM_PARAM_SIZE; i++)
        block[i] = (uint8_t)(words[i / 4] >> (8 * (i % 4)));
    if (!m->ram || !nm_mem_region_load(m->ram, NM_ROM_PARAM_ADDR, block, sizeof block)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "no RAM at 0x%x for the boot ROM's parameter block", NM_ROM_PARAM_ADDR);
        return false;
    }
    return true;
}
