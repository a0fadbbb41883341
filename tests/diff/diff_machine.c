/* The differential replayers' machine: see diff_machine.h. */
#include "diff_machine.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

static void put_desc(uint8_t *p, uint32_t lo, uint32_t hi)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(lo >> (8 * i));
        p[4 + i] = (uint8_t)(hi >> (8 * i));
    }
}

bool diff_run_to(nm_cpu *cpu, uint32_t end, unsigned max_steps)
{
    for (unsigned i = 0; i < max_steps; i++) {
        uint32_t eip = nm_cpu_get_eip(cpu);
        if (eip == end) return true;
        if (eip >= DIFF_HANDLERS && eip < DIFF_HANDLERS + 32 * 16) return false;
        nm_cpu_run(cpu, 1);
    }
    return nm_cpu_get_eip(cpu) == end;
}

void diff_machine_setup(diff_machine *m, const char *model, bool x87_ne)
{
    GError *err = NULL;
    m->cfg = nm_config_new();
    if (model) {
        g_free(m->cfg->cpu);
        m->cfg->cpu = g_strdup(model);
    }
    m->mach = nm_machine_new(m->cfg, &err);
    g_assert_no_error(err);
    m->cpu = nm_cpu_new(m->mach);
    if (!m->mach->cpu) m->mach->cpu = m->cpu;
    nm_cpu_reset(m->cpu);

    uint8_t *ram = m->mach->ram->host;
    put_desc(ram + DIFF_GDT_ADDR, 0, 0);
    put_desc(ram + DIFF_GDT_ADDR + 8, 0x0000ffffu, 0x00cf9a00u);  /* flat code */
    put_desc(ram + DIFF_GDT_ADDR + 16, 0x0000ffffu, 0x00cf9200u); /* flat data */
    for (uint32_t v = 0; v < 32; v++) {
        uint32_t h = DIFF_HANDLERS + v * 16;
        put_desc(ram + DIFF_IDT_ADDR + v * 8, (0x08u << 16) | (h & 0xffff),
                 (h & 0xffff0000u) | 0x8e00u); /* 32-bit interrupt gate */
        ram[h] = 0xeb;                         /* jmp $ */
        ram[h + 1] = 0xfe;
    }
    const uint32_t gdt = DIFF_GDT_ADDR, idt = DIFF_IDT_ADDR, pseudo = DIFF_PSEUDO;
    /* clang-format off */
    const uint8_t pd[14] = {
        23,         0, gdt & 0xff, gdt >> 8 & 0xff, gdt >> 16 & 0xff, 0, 0, 0,
        32 * 8 - 1, 0, idt & 0xff, idt >> 8 & 0xff, idt >> 16 & 0xff, 0};
    memcpy(ram + pseudo, pd, sizeof pd);
    uint8_t setup[32] = {
        0x0f, 0x01, 0x15, pseudo & 0xff, pseudo >> 8 & 0xff, pseudo >> 16 & 0xff, 0, /* lgdt */
        0x0f, 0x01, 0x1d, (pseudo + 8) & 0xff, (pseudo + 8) >> 8 & 0xff,
        (pseudo + 8) >> 16 & 0xff, 0,                                                /* lidt */
    };
    unsigned n = 14;
    if (x87_ne) {
        static const uint8_t ne[] = {
            0x0f, 0x20, 0xc0, /* mov eax, cr0 */
            0x83, 0xc8, 0x22, /* or eax, NE | MP */
            0x0f, 0x22, 0xc0, /* mov cr0, eax */
        };
        memcpy(setup + n, ne, sizeof ne);
        n += sizeof ne;
    }
    /* clang-format on */
    nm_mem_dma_write(m->mach->mem, DIFF_SETUP, setup, n);
    nm_cpu_enter_flat32(m->cpu, DIFF_SETUP, DIFF_STACK);
    if (!diff_run_to(m->cpu, DIFF_SETUP + n, 8)) {
        nm_cpu_dump_state(m->cpu, stderr);
        g_error("diff: LGDT/LIDT setup did not complete (EIP %08x)", nm_cpu_get_eip(m->cpu));
    }
}

void diff_machine_free(diff_machine *m)
{
    if (m->cpu) nm_cpu_free(m->cpu);
    if (m->mach) nm_machine_free(m->mach);
    nm_config_free(m->cfg);
    *m = (diff_machine){0};
}
