/* Interrupt request lines.  A device sets a numbered line's level; one
 * listener (the interrupt controller) is told of every change. */
#ifndef NICEMU_IRQ_H
#define NICEMU_IRQ_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define NM_IRQ_LINES 32

typedef void (*nm_irq_listener_fn)(void *opaque, unsigned line, bool level);

typedef struct nm_irq_bus {
    uint32_t levels;
    nm_irq_listener_fn listener;
    void *listener_opaque;
    uint64_t raised_count[NM_IRQ_LINES]; /* low->high transitions, for the report */
    /* Lines whose device holds a level until it is serviced (not a pulse):
     * the board programs them level-triggered (the PC's ELCR, emu/pc.c). */
    uint32_t level_lines;
    /* Who drives each line, for the one-owner check (nm_irq_claim), and the
     * lines the user allows to be shared ([machine] share-irq). */
    char owner[NM_IRQ_LINES][48];
    uint32_t share_ok;
} nm_irq_bus;

void nm_irq_init(nm_irq_bus *b);
void nm_irq_set_listener(nm_irq_bus *b, nm_irq_listener_fn fn, void *opaque);
/* Only changes of level reach the listener.  Lines past NM_IRQ_LINES are
 * ignored (a configuration check refuses them earlier). */
void nm_irq_set(nm_irq_bus *b, unsigned line, bool level);
/* A device driving `line` claims it when it is created.  ISA interrupts are
 * edge-triggered and each line is driven by one card (two drivers on one
 * line fight: ISA spec; the PC/AT's 8259 sees one edge for two requests),
 * so a second claim is an error naming both, unless the line is in
 * share_ok.  `origin` and `who` are for the message. */
bool nm_irq_claim(nm_irq_bus *b, unsigned line, const char *origin, const char *who, GError **err);
/* A device that drives `line` as a level interrupt says so when it is
 * created, before the board sets the trigger modes. */
static inline void nm_irq_declare_level(nm_irq_bus *b, unsigned line)
{
    if (line < NM_IRQ_LINES) b->level_lines |= 1u << line;
}
static inline void nm_irq_raise(nm_irq_bus *b, unsigned line)
{
    nm_irq_set(b, line, true);
}
static inline void nm_irq_lower(nm_irq_bus *b, unsigned line)
{
    nm_irq_set(b, line, false);
}
static inline bool nm_irq_level(const nm_irq_bus *b, unsigned line)
{
    return line < NM_IRQ_LINES && (b->levels >> line) & 1;
}

#endif
