/* Board presets (cpu/timing/boards.c, docs/boards.md): the memory system
 * under the CPU as data, one real motherboard class each. */
#ifndef NICEMU_CPU_TIMING_BOARDS_H
#define NICEMU_CPU_TIMING_BOARDS_H

#include <stdbool.h>
#include <stddef.h>

#include "cpu/models.h"
#include "cpu/timing/timing.h"

typedef struct nm_board_preset {
    const char *name;
    const char *description;
    const char *default_for; /* comma-separated CPU model names */
    /* 386 boards: wait states per bus cycle (-1: the 386 model's formula);
     * 0 for 486/Pentium boards, which use `t`. */
    int wait_states;
    nm_board_timing t;
} nm_board_preset;

const nm_board_preset *nm_board_preset_find(const char *name);
const nm_board_preset *nm_board_preset_list(size_t *count);
/* The preset a CPU model runs on unless the configuration names one. */
const nm_board_preset *nm_board_preset_default(const nm_cpu_model *model);
const char *nm_board_preset_names(void);
/* Whether the preset is a board for this CPU's family. */
bool nm_board_preset_fits(const nm_board_preset *b, const nm_cpu_model *model);
/* Sets the parameters the preset decides. */
void nm_board_preset_apply(const nm_board_preset *b, nm_timing_params *p);

#endif
