#include "emu/core/ioport.h"

#include <glib.h>

#include "emu/core/hosttable.h"
#include "emu/core/log.h"

nm_ioport_map *nm_ioport_new(nm_clock *clock)
{
    /* 512 KB of claim pointers, few of them used (hosttable.h). */
    nm_ioport_map *m = nm_host_table_new(sizeof *m);
    m->clock = clock;
    return m;
}

void nm_ioport_free(nm_ioport_map *m)
{
    if (!m) return;
    /* Claims are freed by their owners' release; free leftovers once each. */
    for (nm_io_claim *c = m->claims, *next; c; c = next) {
        next = c->next;
        g_free(c);
    }
    nm_host_table_free(m, sizeof *m);
}

nm_io_claim *nm_ioport_claim(nm_ioport_map *m, uint16_t base, uint32_t count, const nm_io_ops *ops,
                             void *opaque, const char *name, nm_bus_cost *cost)
{
    if (count == 0 || (uint32_t)base + count > 65536) return NULL;
    for (uint32_t p = base; p < base + count; p++)
        if (m->port_claim[p]) return NULL;
    nm_io_claim *c = g_new0(nm_io_claim, 1);
    *c = (nm_io_claim){
        .name = name, .base = base, .count = count, .ops = ops, .opaque = opaque, .cost = cost};
    c->next = m->claims;
    if (m->claims) m->claims->prev = c;
    m->claims = c;
    for (uint32_t p = base; p < base + count; p++)
        m->port_claim[p] = c;
    return c;
}

void nm_ioport_release(nm_ioport_map *m, nm_io_claim *claim)
{
    if (!claim) return;
    for (uint32_t p = claim->base; p < claim->base + claim->count; p++)
        if (m->port_claim[p] == claim) m->port_claim[p] = NULL;
    if (claim->prev)
        claim->prev->next = claim->next;
    else
        m->claims = claim->next;
    if (claim->next) claim->next->prev = claim->prev;
    g_free(claim);
}

const nm_io_claim *nm_ioport_owner(const nm_ioport_map *m, uint16_t port)
{
    return m->port_claim[port];
}

static uint32_t size_mask(unsigned size)
{
    return size >= 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
}

/* The claim that holds all of port..port+size-1, or NULL. */
static nm_io_claim *whole_claim(const nm_ioport_map *m, uint16_t port, unsigned size)
{
    nm_io_claim *c = m->port_claim[port];
    if (c && (uint32_t)port + size <= (uint32_t)c->base + c->count) return c;
    return NULL;
}

uint32_t nm_io_read(nm_ioport_map *m, uint16_t port, unsigned size)
{
    nm_io_claim *c = whole_claim(m, port, size);
    if (c) {
        nm_bus_cost_charge(c->cost, m->clock, size);
        return c->ops->read(c->opaque, port - c->base, size) & size_mask(size);
    }
    if (size == 1) {
        m->unclaimed_reads++;
        nm_debug(IO, "inb from unclaimed port 0x%04x", port);
        return 0xff;
    }
    uint32_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= nm_io_read(m, (uint16_t)(port + i), 1) << (8 * i);
    return v;
}

bool nm_io_read_repeatable(const nm_ioport_map *m, uint16_t port, unsigned size)
{
    const nm_io_claim *c = whole_claim(m, port, size);
    return c && !c->cost && c->ops->repeatable &&
           c->ops->repeatable(c->opaque, port - c->base, size);
}

void nm_io_write(nm_ioport_map *m, uint16_t port, uint32_t value, unsigned size)
{
    nm_io_claim *c = whole_claim(m, port, size);
    if (c) {
        nm_bus_cost_charge(c->cost, m->clock, size);
        c->ops->write(c->opaque, port - c->base, value & size_mask(size), size);
        return;
    }
    if (size == 1) {
        m->unclaimed_writes++;
        nm_debug(IO, "outb 0x%02x to unclaimed port 0x%04x dropped", value & 0xff, port);
        return;
    }
    for (unsigned i = 0; i < size; i++)
        nm_io_write(m, (uint16_t)(port + i), (value >> (8 * i)) & 0xff, 1);
}
