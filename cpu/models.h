/* The CPU models by name: clock, bus clock, and what CPUID says.  The ISA
 * executed is the same on every model; the cost model comes from `family`. */
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

typedef struct nm_cpu_model {
    const char *name;
    const char *description;
    nm_cpu_family family;
    /* Core and external bus clocks as exact fractions of Hz. */
    uint64_t hz_num, hz_den;
    uint64_t bus_hz_num, bus_hz_den;
    bool has_cpuid;
    uint32_t cpuid_signature; /* CPUID.1:EAX: stepping | model<<4 | family<<8 */
    uint32_t cpuid_features;  /* CPUID.1:EDX, without FPU: we have no x87 yet */
    uint32_t reset_edx;       /* EDX after RESET: the same signature on all parts */
} nm_cpu_model;

const nm_cpu_model *nm_cpu_model_find(const char *name);
const nm_cpu_model *nm_cpu_model_list(size_t *count);
/* Comma-separated names (static storage), for error messages. */
const char *nm_cpu_model_names(void);

#endif
