/* The A20 mask (the chipset's A20M# input): applied to every physical
 * address the CPU forms, after paging. */
#include "cpu/cpu_internal.h"

void nm_cpu_set_a20(nm_cpu *c, bool enabled)
{
    c->a20_mask = enabled ? 0xffffffffu : ~(1u << 20);
    cpu_tlb_flush_all(c);
}
