#include "cpu/models.h"

#include <glib.h>
#include <string.h>

#define MHZ(x) (uint64_t)(x) * 1000000u, 1u
/* Clocks derived from the 66 2/3 and 33 1/3 MHz bus crystals are exact thirds. */
#define MHZ_THIRDS(x) (uint64_t)(x) * 1000000u, 3u

/* Signatures: Intel AP-485 "Intel Processor Identification and the CPUID
 * Instruction", table of family/model values.  The x87: on chip in the
 * 486DX parts and the Pentiums (CPUID.1:EDX bit 0; CR0.ET hardwired),
 * none in the 486SX; a 386 has one when the configuration adds a 387
 * (`fpu`, emu/machine.c). */
#define P5_FEATURES                                                                                \
    (NM_CPUID_FPU | NM_CPUID_VME | NM_CPUID_DE | NM_CPUID_PSE | NM_CPUID_TSC | NM_CPUID_MSR |      \
     NM_CPUID_MCE | NM_CPUID_CX8)
static const nm_cpu_model models[] = {
    {"386dx-25", "Intel 386DX, 25 MHz", NM_CPU_386, MHZ(25), MHZ(25), false, 0, 0, 0x0308,
     NM_FPU_NONE},
    {"386dx-33", "Intel 386DX, 33 MHz", NM_CPU_386, MHZ(33), MHZ(33), false, 0, 0, 0x0308,
     NM_FPU_NONE},
    {"386dx-40", "Intel 386DX-40 (AMD Am386DX-40 class), 40 MHz", NM_CPU_386, MHZ(40), MHZ(40),
     false, 0, 0, 0x0308, NM_FPU_NONE},
    /* Intel486 SX: family 4 model 2, no FPU (AP-485); an SL-enhanced part
     * with CPUID, like the 486dx-33 below. */
    {"486sx-25", "Intel486 SX, 25 MHz, no FPU", NM_CPU_486, MHZ(25), MHZ(25), true, 0x0420,
     NM_CPUID_VME, 0x0420, NM_FPU_NONE},
    /* Intel486 DX: family 4 model 1; DX2: model 3; DX4: model 8. CPUID exists
     * on the SL-enhanced and later parts, which report VME. */
    {"486dx-33", "Intel486 DX, 33 MHz", NM_CPU_486, MHZ(33), MHZ(33), true, 0x0415,
     NM_CPUID_FPU | NM_CPUID_VME, 0x0415, NM_FPU_486},
    {"486dx2-66", "Intel486 DX2, 66 MHz core on a 33 MHz bus", NM_CPU_486, MHZ_THIRDS(200),
     MHZ_THIRDS(100), true, 0x0435, NM_CPUID_FPU | NM_CPUID_VME, 0x0435, NM_FPU_486},
    {"486dx4-100", "IntelDX4, 100 MHz core on a 33 MHz bus", NM_CPU_486, MHZ(100), MHZ_THIRDS(100),
     true, 0x0480, NM_CPUID_FPU | NM_CPUID_VME, 0x0480, NM_FPU_486},
    /* Pentium P5 (60/66): family 5 model 1; P54C (75-200): model 2.  Features
     * FPU VME DE PSE TSC MSR MCE CX8; the on-chip APIC of the P54C is
     * reported only when enabled, and we have none. */
    {"pentium-60", "Pentium (P5), 60 MHz, 60 MHz bus", NM_CPU_PENTIUM, MHZ(60), MHZ(60), true,
     0x0513, P5_FEATURES, 0x0513, NM_FPU_PENTIUM},
    {"pentium-66", "Pentium (P5), 66 MHz, 66 MHz bus", NM_CPU_PENTIUM, MHZ_THIRDS(200),
     MHZ_THIRDS(200), true, 0x0513, P5_FEATURES, 0x0513, NM_FPU_PENTIUM},
    {"pentium-100", "Pentium (P54C), 100 MHz core on a 66 MHz bus", NM_CPU_PENTIUM, MHZ(100),
     MHZ_THIRDS(200), true, 0x0525, P5_FEATURES, 0x0525, NM_FPU_PENTIUM},
    {"pentium-133", "Pentium (P54C), 133 MHz core on a 66 MHz bus", NM_CPU_PENTIUM, MHZ_THIRDS(400),
     MHZ_THIRDS(200), true, 0x052c, P5_FEATURES, 0x052c, NM_FPU_PENTIUM},
};

const nm_cpu_model *nm_cpu_model_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++)
        if (!g_ascii_strcasecmp(models[i].name, name)) return &models[i];
    return NULL;
}

const nm_cpu_model *nm_cpu_model_list(size_t *count)
{
    *count = G_N_ELEMENTS(models);
    return models;
}

const char *nm_cpu_model_names(void)
{
    static char names[256];
    if (!names[0]) {
        for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
            if (i) g_strlcat(names, ", ", sizeof names);
            g_strlcat(names, models[i].name, sizeof names);
        }
    }
    return names;
}

static uint64_t gcd_u128(unsigned __int128 a, unsigned __int128 b)
{
    while (b) {
        unsigned __int128 t = a % b;
        a = b;
        b = t;
    }
    return (uint64_t)a;
}

bool nm_cpu_model_at_mhz(const nm_cpu_model *base, uint32_t mhz, nm_cpu_model *out)
{
    if (mhz < NM_CPU_MHZ_MIN || mhz > NM_CPU_MHZ_MAX) return false;
    base = nm_cpu_model_nominal(base);
    *out = *base;
    out->hz_num = (uint64_t)mhz * 1000000u;
    out->hz_den = 1;
    /* bus = core * (base bus / base core), reduced: at most 1e10 * 2e8 * 3
     * before the reduction, inside 128 bits. */
    unsigned __int128 num = (unsigned __int128)out->hz_num * base->bus_hz_num * base->hz_den;
    unsigned __int128 den = (unsigned __int128)base->bus_hz_den * base->hz_num;
    uint64_t g = gcd_u128(num, den);
    out->bus_hz_num = (uint64_t)(num / g);
    out->bus_hz_den = (uint64_t)(den / g);
    return true;
}

const nm_cpu_model *nm_cpu_model_nominal(const nm_cpu_model *m)
{
    const nm_cpu_model *t = nm_cpu_model_find(m->name);
    return t ? t : m;
}

bool nm_cpu_model_overridden(const nm_cpu_model *m)
{
    const nm_cpu_model *t = nm_cpu_model_nominal(m);
    return t->hz_num * m->hz_den != m->hz_num * t->hz_den;
}

double nm_cpu_model_mhz(const nm_cpu_model *m)
{
    return (double)m->hz_num / (double)m->hz_den / 1e6;
}

void nm_cpu_model_label(const nm_cpu_model *m, char *buf, size_t size)
{
    if (!nm_cpu_model_overridden(m))
        g_strlcpy(buf, m->name, size);
    else
        g_snprintf(buf, size, "%s @ %g MHz (overridden)", m->name, nm_cpu_model_mhz(m));
}
