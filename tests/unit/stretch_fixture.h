/* What the cost models' stretch tests share (test_timing_486.c,
 * test_timing_pentium.c): the loops they run, what a run leaves and a
 * timer's firing, compared bytewise with stretches on and off. */
#ifndef NICEMU_TESTS_STRETCH_FIXTURE_H
#define NICEMU_TESTS_STRETCH_FIXTURE_H

#include <stdint.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"

/* Register instructions (AGI through an index and a base, shifts, IMUL,
 * 0F and 66 prefixes, SETcc) broken by a store to 0x200000, EBX the seed,
 * ECX the count; no HLT. */
static const uint8_t stretch_loop[] = {
    0x89, 0xd8,                   /* L: mov eax,ebx */
    0xc1, 0xe0, 0x0d,             /* shl eax,13 */
    0x31, 0xc3,                   /* xor ebx,eax */
    0x8d, 0x74, 0x5e, 0x01,       /* lea esi,[esi+ebx*2+1] (AGI: index) */
    0x8d, 0x7e, 0x08,             /* lea edi,[esi+8] (AGI: base) */
    0x89, 0xda,                   /* mov edx,ebx */
    0xc1, 0xea, 0x11,             /* shr edx,17 */
    0x6b, 0xfb, 0x03,             /* imul edi,ebx,3 */
    0x0f, 0xb6, 0xc3,             /* movzx eax,bl */
    0x66, 0x01, 0xd0,             /* add ax,dx */
    0xa3, 0x00, 0x00, 0x20, 0x00, /* mov [0x200000],eax */
    0x0f, 0x92, 0xc0,             /* setc al */
    0xf7, 0xda,                   /* neg edx */
    0x31, 0xd3,                   /* xor ebx,edx */
    0x01, 0xf0,                   /* add eax,esi */
    0x49,                         /* dec ecx */
    0x75, 0xd3,                   /* jnz L */
};

/* The recode tests' loop, written over at +2 (SHL EAX,13) and +7 (MOV
 * EDX,EBX); no HLT. */
static const uint8_t stretch_recode_loop[] = {
    0x89, 0xd8,       /* L: mov eax,ebx */
    0xc1, 0xe0, 0x0d, /* shl eax,13 */
    0x31, 0xc3,       /* xor ebx,eax */
    0x89, 0xda,       /* mov edx,ebx */
    0xc1, 0xea, 0x11, /* shr edx,17 */
    0x31, 0xd3,       /* xor ebx,edx */
    0x49,             /* dec ecx */
    0x75, 0xef,       /* jnz L */
};

/* What a run leaves: clocks, instructions, EIP, the registers. */
typedef struct {
    uint64_t cycles, insns;
    uint32_t eip, gpr[8], zero; /* (no padding: compared bytewise) */
} after_run;

static inline after_run after_of(const nm_cpu *c)
{
    after_run a = {.cycles = c->clock->cycles, .insns = c->instructions, .eip = c->eip};
    for (int r = NM_EAX; r <= NM_EDI; r++)
        a.gpr[r] = nm_cpu_get_reg(c, r);
    return a;
}

/* A timer's firing: the instructions done and the clocks then (c: the
 * CPU while it is pending, NULL after, for the comparison). */
typedef struct {
    const nm_cpu *c;
    uint64_t insns, cycles, late;
} fired;

static inline void on_fire(void *opaque, uint64_t late)
{
    fired *w = opaque;
    w->insns = w->c->instructions;
    w->cycles = w->c->clock->cycles;
    w->late = late;
}

#endif
