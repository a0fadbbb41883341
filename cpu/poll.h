/* Fast-forward of a guest polling a device register (poll.c): state kept
 * in the CPU.  Internal to the CPU core. */
#ifndef NICEMU_CPU_POLL_H
#define NICEMU_CPU_POLL_H

#include <stdbool.h>
#include <stdint.h>

/* The longest iteration recorded (instructions, memory accesses). */
#define NM_POLL_MAX_INSNS    256
#define NM_POLL_MAX_ACCESSES 96

/* The machine state at the end of a repeatable read (the instruction
 * done): what two polls must share to be the same point of a loop. */
typedef struct nm_poll_point {
    uint32_t gpr[8], eflags, eip, insn_eip;
    uint16_t port;
    uint8_t size;
    uint32_t value;
    uint64_t cycles, instructions, steps;
} nm_poll_point;

typedef struct nm_poll_insn {
    uint32_t eip;
    uint16_t op;
    uint8_t opsize, dst, cond, sync, len;
} nm_poll_insn;

typedef struct nm_poll_access {
    uint32_t phys;
    uint16_t insn; /* index in insns */
    uint8_t size, write;
    uint8_t old[4]; /* a write: the bytes it replaced */
} nm_poll_access;

typedef struct nm_poll {
    bool enabled;           /* --poll-fast-forward (default on) */
    bool io_seen;           /* the instruction just run read a repeatable register */
    bool io_other;          /* it did other I/O */
    bool recording;         /* an iteration is being recorded (step by step) */
    bool bad;               /* the recorded iteration cannot be fast-forwarded */
    uint8_t have;           /* 0: no last point; 1: `last` holds one */
    uint32_t backoff, wait; /* polls not recorded after a failed proof */
    nm_poll_point last;
    nm_poll_point seen; /* the read just done: port, size, value */
    uint64_t rec_deadline;
    uint32_t n_insns, n_accesses;
    nm_poll_insn insns[NM_POLL_MAX_INSNS];
    nm_poll_access accesses[NM_POLL_MAX_ACCESSES];
    uint64_t skips; /* loops fast-forwarded (nm_cpu_poll_skips) */
} nm_poll;

#endif
