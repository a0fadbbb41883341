#include "emu/core/irq.h"

#include "emu/core/devcfg.h"
#include "emu/core/log.h"

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

bool nm_irq_claim(nm_irq_bus *b, unsigned line, const char *origin, const char *who, GError **err)
{
    if (line >= NM_IRQ_LINES) return true; /* the device's range check reports it */
    if (b->owner[line][0] && !(b->share_ok >> line & 1)) {
        g_set_error(err, NM_CONFIG_ERROR, NM_CONFIG_ERROR_VALUE,
                    "%s: irq: IRQ %u is already used by %s (ISA interrupts cannot be shared; "
                    "give share-irq=%u if the devices really share it)",
                    origin, line, b->owner[line], line);
        return false;
    }
    if (!b->owner[line][0]) g_strlcpy(b->owner[line], who, sizeof b->owner[line]);
    return true;
}
