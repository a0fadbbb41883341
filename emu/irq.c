#include "emu/irq.h"

#include "emu/log.h"

void nm_irq_init(nm_irq_bus *b)
{
    *b = (nm_irq_bus){0};
}

void nm_irq_set_listener(nm_irq_bus *b, nm_irq_listener_fn fn, void *opaque)
{
    b->listener = fn;
    b->listener_opaque = opaque;
}

void nm_irq_set(nm_irq_bus *b, unsigned line, bool level)
{
    if (line >= NM_IRQ_LINES) {
        nm_warn(IRQ, "IRQ line %u does not exist", line);
        return;
    }
    uint32_t bit = 1u << line;
    if (!!(b->levels & bit) == level) return;
    if (level) {
        b->levels |= bit;
        b->raised_count[line]++;
    } else {
        b->levels &= ~bit;
    }
    nm_trace(IRQ, "line %u -> %d", line, level);
    if (b->listener) b->listener(b->listener_opaque, line, level);
}
