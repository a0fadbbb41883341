/* The machine both differential replayers run their records on: a flat
 * 32-bit protected-mode guest with a GDT (0x08 code, 0x10 data) and an
 * IDT whose 32 exception gates lead to `jmp $` stubs, set up by LGDT/LIDT
 * executed in the emulator itself. */
#ifndef NICEMU_TESTS_DIFF_MACHINE_H
#define NICEMU_TESTS_DIFF_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/cpu.h"
#include "emu/config.h"
#include "emu/machine.h"

/* The guest's layout (physical = linear). */
#define DIFF_GDT_ADDR 0x00001000u
#define DIFF_IDT_ADDR 0x00002000u
#define DIFF_HANDLERS 0x00003000u /* 32 stubs of 16 bytes: `jmp $` */
#define DIFF_SETUP    0x00004000u
#define DIFF_PSEUDO   0x00005000u /* GDTR's pseudo-descriptor, IDTR's at +8 */
#define DIFF_STACK    0x00080000u

typedef struct {
    nm_config *cfg;
    nm_machine *mach;
    nm_cpu *cpu;
} diff_machine;

/* Builds the machine for CPU model `model` (NULL: the configuration's
 * default); with `x87_ne`, CR0.NE and MP are set too (an unmasked x87
 * exception is then #MF, never IRQ 13). */
void diff_machine_setup(diff_machine *m, const char *model, bool x87_ne);
void diff_machine_free(diff_machine *m);

/* Steps the CPU until EIP is `end` (true), an exception stub is reached
 * or `max_steps` instructions ran (false). */
bool diff_run_to(nm_cpu *cpu, uint32_t end, unsigned max_steps);

#endif
