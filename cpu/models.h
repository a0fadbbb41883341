/* The CPU models by name: clock, bus clock, and what CPUID says.  The ISA
 * executed is the same on every model, but for a few results the manuals
 * leave open (docs/cpu.md "Model corner cases"); the cost model comes from
 * `family`. */
#ifndef NICEMU_CPU_MODELS_H
#define NICEMU_CPU_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { NM_CPU_386 = 3, NM_CPU_486 = 4, NM_CPU_PENTIUM = 5 } nm_cpu_family;

/* CPUID.1:EDX feature bits (Intel SDM vol. 2A, CPUID, table "Feature
 * Information Returned in the EDX Register"). */
#define NM_CPUID_FPU (1u << 0)
#define NM_CPUID_VME (1u << 1)
#define NM_CPUID_DE  (1u << 2)
#define NM_CPUID_PSE (1u << 3)
#define NM_CPUID_TSC (1u << 4)
#define NM_CPUID_MSR (1u << 5)
#define NM_CPUID_MCE (1u << 7)
#define NM_CPUID_CX8 (1u << 8)

/* Which x87 a model has; NONE: the ESC opcodes do nothing (cpu/fpu.c). */
typedef enum {
    NM_FPU_NONE = 0,
    NM_FPU_387,     /* an Intel387 DX beside a 386: errors through the PC's IRQ 13 */
    NM_FPU_486,     /* on chip: CR0.NE, FERR# asserted at the error */
    NM_FPU_PENTIUM, /* on chip: FERR# asserted at the next waiting FP instruction */
} nm_fpu_kind;

typedef struct nm_cpu_model {
    const char *name;
    const char *description;
    nm_cpu_family family;
    /* Core and external bus clocks as exact fractions of Hz. */
    uint64_t hz_num, hz_den;
    uint64_t bus_hz_num, bus_hz_den;
    bool has_cpuid;
    uint32_t cpuid_signature; /* CPUID.1:EAX: stepping | model<<4 | family<<8 */
    uint32_t cpuid_features;  /* CPUID.1:EDX (FPU with an on-chip x87) */
    uint32_t reset_edx;       /* EDX after RESET: the same signature on all parts */
    nm_fpu_kind fpu;          /* the x87 (a 386's 387 comes from the configuration) */
} nm_cpu_model;

const nm_cpu_model *nm_cpu_model_find(const char *name);
const nm_cpu_model *nm_cpu_model_list(size_t *count);
/* Comma-separated names (static storage), for error messages. */
const char *nm_cpu_model_names(void);

/* --mhz: a hypothetical clock for a model.  *out becomes `base` with the
 * core clock at exactly `mhz` MHz and the bus clock scaled by the same
 * factor (the core/bus ratio kept: a Pentium-100 at 400 MHz has a 266 2/3
 * MHz bus), so the board's memory timings, which are in bus clocks, scale
 * with it; the ISA and PCI buses, the wire and every device timed in ns
 * keep their real rates (docs/cpu.md "A hypothetical clock").  False if
 * `mhz` is outside NM_CPU_MHZ_MIN..NM_CPU_MHZ_MAX. */
#define NM_CPU_MHZ_MIN 1
#define NM_CPU_MHZ_MAX 10000
bool nm_cpu_model_at_mhz(const nm_cpu_model *base, uint32_t mhz, nm_cpu_model *out);
/* True for a copy whose clock differs from the table model's. */
bool nm_cpu_model_overridden(const nm_cpu_model *m);
/* The table's model of that name: `m` itself, or the one whose clock a
 * copy made by nm_cpu_model_at_mhz overrides. */
const nm_cpu_model *nm_cpu_model_nominal(const nm_cpu_model *m);
/* The core clock in MHz. */
double nm_cpu_model_mhz(const nm_cpu_model *m);
/* "pentium-100", or "pentium-100 @ 400 MHz (overridden)". */
void nm_cpu_model_label(const nm_cpu_model *m, char *buf, size_t size);

#endif
