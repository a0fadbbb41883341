/* The CPU core: decoder, instruction semantics, real mode and flat 32-bit
 * protected mode, REP strings, exceptions through the real-mode IVT,
 * self-modifying code, interrupts, HLT, TF, model-dependent #UD, and a
 * speed figure for a simple loop. */
#include <glib.h>
#include <string.h>
#include <time.h>

#include "cpu/cpu.h"
#include "cpu/cpu_internal.h"
#include "cpu/decode.h"
#include "emu/config.h"
#include "emu/core/log.h"
#include "emu/machine.h"

#define CODE16   0x7c00u
#define HANDLERS 0x8000u /* real-mode handler for vector v at HANDLERS + 16*v */
#define MARK     0x600u  /* handlers write their vector here (+1: so 0 is "none") */
#define CODE32   0x100000u

typedef struct {
    nm_config *cfg;
    nm_machine *m;
    nm_cpu *c;
    uint8_t *ram;
} fx;

static void fx_init(fx *f, const char *model, bool strict)
{
    f->cfg = nm_config_new();
    g_free(f->cfg->cpu);
    f->cfg->cpu = g_strdup(model);
    f->cfg->strict_isa = strict;
    f->m = nm_machine_new(f->cfg, NULL);
    g_assert_nonnull(f->m);
    f->c = nm_cpu_new(f->m);
    f->ram = f->m->ram->host;
    /* Reset vector: JMP FAR 0000:7C00. */
    nm_mem_region *rom = nm_memmap_add_rom(f->m->mem, "rom", 0xffff0000u, 0x10000);
    static const uint8_t jmp[] = {0xea, 0x00, 0x7c, 0x00, 0x00};
    nm_mem_region_load(rom, 0xfff0, jmp, sizeof jmp);
    /* Every real-mode vector: MOV BYTE [MARK], v+1 ; HLT. */
    for (unsigned v = 0; v < 32; v++) {
        uint8_t *h = f->ram + HANDLERS + 16 * v;
        h[0] = 0xc6, h[1] = 0x06, h[2] = MARK & 0xff, h[3] = MARK >> 8, h[4] = (uint8_t)(v + 1);
        h[5] = 0xf4;
        uint32_t ent = 4 * v, off = HANDLERS + 16 * v;
        f->ram[ent] = off & 0xff, f->ram[ent + 1] = (uint8_t)(off >> 8);
        f->ram[ent + 2] = f->ram[ent + 3] = 0;
    }
    nm_cpu_reset(f->c);
}

static void fx_free(fx *f)
{
    nm_cpu_free(f->c);
    nm_machine_free(f->m);
    nm_config_free(f->cfg);
}

static void load(fx *f, uint32_t at, const void *code, size_t n)
{
    memcpy(f->ram + at, code, n);
}

/* Real mode from the reset vector; runs until HLT (IF=0 stops the machine). */
static void run_real(fx *f, const void *code, size_t n)
{
    load(f, CODE16, code, n);
    nm_cpu_run(f->c, 1000000);
}

static void run_flat(fx *f, const void *code, size_t n)
{
    load(f, CODE32, code, n);
    nm_cpu_enter_flat32(f->c, CODE32, 0x90000);
    nm_cpu_run(f->c, 1000000);
}

static uint32_t reg(fx *f, int r)
{
    return nm_cpu_get_reg(f->c, r);
}
static unsigned mark(fx *f)
{
    return f->ram[MARK];
}
static uint16_t rd16(fx *f, uint32_t a)
{
    return (uint16_t)(f->ram[a] | f->ram[a + 1] << 8);
}
static uint32_t rd32(fx *f, uint32_t a)
{
    return rd16(f, a) | (uint32_t)rd16(f, a + 2) << 16;
}

static void test_real_basic(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {
        0xb8, 0x34, 0x12,                   /* mov ax,0x1234 */
        0x05, 0x0f, 0x0f,                   /* add ax,0x0f0f  -> 0x2143 */
        0xbb, 0xff, 0xff,                   /* mov bx,0xffff */
        0x43,                               /* inc bx  -> 0, ZF, CF kept */
        0x9c,                               /* pushf */
        0x59,                               /* pop cx */
        0x66, 0xba, 0x78, 0x56, 0x34, 0x12, /* mov edx,0x12345678 */
        0x66, 0xc1, 0xc2, 0x08,             /* rol edx,8 -> 0x34567812 */
        0xbe, 0x00, 0x05,                   /* mov si,0x500 */
        0x89, 0x04,                         /* mov [si],ax */
        0x8b, 0x3c,                         /* mov di,[si] */
        0xf4,
    };
    run_real(&f, code, sizeof code);
    g_assert_cmpint(f.m->stop_reason, ==, NM_STOP_HALT);
    g_assert_cmphex(reg(&f, NM_EAX) & 0xffff, ==, 0x2143);
    g_assert_cmphex(reg(&f, NM_EBX) & 0xffff, ==, 0);
    g_assert_cmphex(reg(&f, NM_ECX) & 0x8d5, ==, 0x54); /* ZF PF AF, not CF/OF/SF */
    g_assert_cmphex(reg(&f, NM_EDX), ==, 0x34567812);
    g_assert_cmphex(reg(&f, NM_EDI) & 0xffff, ==, 0x2143);
    g_assert_cmphex(rd16(&f, 0x500), ==, 0x2143);
    fx_free(&f);
}

static void test_real_de_ivt(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {
        0xbc, 0x00, 0x70, /* mov sp,0x7000 */
        0x31, 0xdb,       /* xor bx,bx */
        0xb8, 0x05, 0x00, /* mov ax,5 */
        0xf6, 0xf3,       /* div bl  (at 7C08) */
        0xf4,
    };
    run_real(&f, code, sizeof code);
    g_assert_cmpuint(mark(&f), ==, NM_EXC_DE + 1);
    /* The fault pushed FLAGS, CS, IP of the DIV itself. */
    g_assert_cmphex(reg(&f, NM_ESP) & 0xffff, ==, 0x6ffa);
    g_assert_cmphex(rd16(&f, 0x6ffa), ==, 0x7c08);
    g_assert_cmphex(rd16(&f, 0x6ffc), ==, 0);
    g_assert_cmphex(reg(&f, NM_EAX) & 0xffff, ==, 5);
    fx_free(&f);
}

/* Runs `code` in real mode and expects exception `vector` at the last
 * instruction, which starts `last` bytes into the code. */
static void expect_vector_at(const char *model, bool strict, const uint8_t *code, size_t n,
                             unsigned vector, unsigned last)
{
    fx f;
    fx_init(&f, model, strict);
    static const uint8_t sp[] = {0xbc, 0x00, 0x70}; /* mov sp,0x7000 */
    load(&f, CODE16, sp, sizeof sp);
    load(&f, CODE16 + 3, code, n);
    nm_cpu_run(f.c, 100000);
    g_assert_cmpuint(mark(&f), ==, vector + 1);
    g_assert_cmphex(rd16(&f, 0x6ffa), ==, CODE16 + 3 + last); /* faults point at the instruction */
    fx_free(&f);
}

static void expect_vector(const char *model, bool strict, const uint8_t *code, size_t n,
                          unsigned vector)
{
    expect_vector_at(model, strict, code, n, vector, 0);
}

static void test_exceptions(void)
{
    /* LOCK on a register destination and on a non-lockable instruction. */
    expect_vector("486dx2-66", false, (const uint8_t[]){0xf0, 0x01, 0xc0}, 3, NM_EXC_UD);
    expect_vector("486dx2-66", false, (const uint8_t[]){0xf0, 0x8b, 0x07}, 3, NM_EXC_UD);
    /* 16 prefixes: longer than 15 bytes. */
    uint8_t longi[17];
    memset(longi, 0x66, 16);
    longi[16] = 0x90;
    expect_vector("486dx2-66", false, longi, sizeof longi, NM_EXC_GP);
    /* Undefined opcodes and UD2. */
    expect_vector("486dx2-66", false, (const uint8_t[]){0x0f, 0xff}, 2, NM_EXC_UD);
    expect_vector("486dx2-66", false, (const uint8_t[]){0x0f, 0x0b}, 2, NM_EXC_UD);
    expect_vector("486dx2-66", false, (const uint8_t[]){0x8e, 0xc8}, 2, NM_EXC_UD); /* mov cs,ax */
    /* A word at offset 0xFFFF runs past the real-mode limit: #GP(0). */
    expect_vector_at("486dx2-66", false, (const uint8_t[]){0xbb, 0xff, 0xff, 0x8b, 0x07}, 5,
                     NM_EXC_GP, 3);
    /* AAM 0 divides by zero. */
    expect_vector("486dx2-66", false, (const uint8_t[]){0xd4, 0x00}, 2, NM_EXC_DE);
    /* BOUND out of range. */
    expect_vector_at("486dx2-66", false,
                     (const uint8_t[]){0xc7, 0x06, 0x00, 0x05, 0x10, 0x00, /* [500]=16 */
                                       0xc7, 0x06, 0x02, 0x05, 0x20, 0x00, /* [502]=32 */
                                       0xb8, 0x40, 0x00, 0x62, 0x06, 0x00, 0x05},
                     19, NM_EXC_BR, 15);
    /* Model checks: CPUID on the 386, RDTSC on the 486, BSWAP on a strict 386. */
    expect_vector("386dx-40", false, (const uint8_t[]){0x0f, 0xa2}, 2, NM_EXC_UD);
    expect_vector("486dx2-66", false, (const uint8_t[]){0x0f, 0x31}, 2, NM_EXC_UD);
    expect_vector("386dx-40", true, (const uint8_t[]){0x0f, 0xc8}, 2, NM_EXC_UD);
    /* ESC with CR0.EM set: #NM. */
    expect_vector_at(
        "486dx2-66", false,
        (const uint8_t[]){0x0f, 0x20, 0xc0, 0x66, 0x83, 0xc8, 0x04, 0x0f, 0x22, 0xc0, 0xdb, 0xe3},
        12, NM_EXC_NM, 10);
}

static void test_model_isa(void)
{
    /* On a non-strict 386, BSWAP runs; the Pentium has CPUID/RDTSC. */
    fx f;
    fx_init(&f, "386dx-40", false);
    static const uint8_t code[] = {0x66, 0xb8, 0x11, 0x22, 0x33, 0x44, 0x66, 0x0f, 0xc8, 0xf4};
    run_real(&f, code, sizeof code);
    g_assert_cmphex(reg(&f, NM_EAX), ==, 0x11223344 == 0 ? 0 : 0x11223344u);
    fx_free(&f);
    fx_init(&f, "386dx-40", false);
    static const uint8_t c2[] = {0x66, 0xb8, 0x44, 0x33, 0x22, 0x11, 0x66, 0x0f, 0xc8, 0xf4};
    run_real(&f, c2, sizeof c2);
    g_assert_cmphex(reg(&f, NM_EAX), ==, 0x44332211u);
    fx_free(&f);
}

/* Without an x87 (the 486SX) an ESC opcode does nothing: FNSTSW and
 * FNSTCW store nothing, which is how an FPU probe finds none. */
static void test_esc_stores_nothing(void)
{
    fx f;
    fx_init(&f, "486sx-25", false);
    static const uint8_t code[] = {
        0xc7, 0x05, 0x00, 0x20, 0x00, 0x00, 0x5a, 0x5a, 0x00, 0x00, /* mov dword [0x2000],0x5a5a */
        0xdb, 0xe3,                                                 /* fninit */
        0xdd, 0x3d, 0x00, 0x20, 0x00, 0x00,                         /* fnstsw [0x2000] */
        0xd9, 0x3d, 0x00, 0x20, 0x00, 0x00,                         /* fnstcw [0x2000] */
        0x9b,                                                       /* fwait */
        0xf4,
    };
    run_flat(&f, code, sizeof code);
    g_assert_cmpint(f.m->stop_reason, ==, NM_STOP_HALT);
    g_assert_cmphex(rd32(&f, 0x2000), ==, 0x5a5a);
    fx_free(&f);
}

/* With one (the 486DX2) the same code stores the status word after
 * FNINIT (0) and then the control word (037FH). */
static void test_esc_fpu_stores(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {
        0xc7, 0x05, 0x00, 0x20, 0x00, 0x00, 0x5a, 0x5a, 0x00, 0x00, /* mov dword [0x2000],0x5a5a */
        0xc7, 0x05, 0x04, 0x20, 0x00, 0x00, 0x5a, 0x5a, 0x00, 0x00, /* mov dword [0x2004],0x5a5a */
        0xdb, 0xe3,                                                 /* fninit */
        0xdd, 0x3d, 0x00, 0x20, 0x00, 0x00,                         /* fnstsw [0x2000] */
        0xd9, 0x3d, 0x04, 0x20, 0x00, 0x00,                         /* fnstcw [0x2004] */
        0x9b,                                                       /* fwait */
        0xf4,
    };
    run_flat(&f, code, sizeof code);
    g_assert_cmpint(f.m->stop_reason, ==, NM_STOP_HALT);
    g_assert_cmphex(rd32(&f, 0x2000), ==, 0x0000);
    g_assert_cmphex(rd32(&f, 0x2004), ==, 0x037f);
    fx_free(&f);
}

static void test_flat_loop(void)
{
    fx f;
    fx_init(&f, "pentium-100", false);
    static const uint8_t code[] = {
        0xb9, 0xe8, 0x03, 0x00, 0x00, /* mov ecx,1000 */
        0x31, 0xc0,                   /* xor eax,eax */
        0x01, 0xc8,                   /* l: add eax,ecx */
        0xe2, 0xfc,                   /* loop l */
        0x6a, 0xff,                   /* push -1 */
        0x5b,                         /* pop ebx */
        0x0f, 0xaf, 0xc3,             /* imul eax,ebx */
        0x99,                         /* cdq */
        0xf4,
    };
    run_flat(&f, code, sizeof code);
    g_assert_cmphex(reg(&f, NM_EAX), ==, (uint32_t)-500500);
    g_assert_cmphex(reg(&f, NM_EDX), ==, 0xffffffffu);
    g_assert_cmphex(reg(&f, NM_ESP), ==, 0x90000);
    fx_free(&f);
}

/* ROL/ROR write CF and OF only: ZF, SF, PF and AF are those of the
 * operation before (the specialised rotates keep that operation's lazy
 * state instead of working the flags out).  Expected flags from C. */
static uint32_t szpa(uint32_t r, uint32_t a, uint32_t b)
{
    return (r == 0 ? NM_FLAG_ZF : 0) | ((r >> 31) ? NM_FLAG_SF : 0) |
           ((__builtin_popcount(r & 0xff) & 1) ? 0 : NM_FLAG_PF) |
           (((a ^ b ^ r) & 0x10) ? NM_FLAG_AF : 0);
}

static void test_rotate_keeps_flags(void)
{
    static const uint32_t vals[][3] = {
        {0x0000000fu, 0x00000001u, 5},  {0x7fffffffu, 0x00000001u, 31},
        {0x80000000u, 0x80000000u, 1},  {0x12345678u, 0xedcba988u, 7},
        {0x00000000u, 0x00000000u, 12}, {0xffffff00u, 0x00000100u, 3},
    };
    /* The operation before: ADD, SUB, XOR, INC, SHL by 1 (r/m32 forms). */
    static const uint8_t ops[][2] = {
        {0x01, 0xd8}, {0x29, 0xd8}, {0x31, 0xd8}, {0x40, 0x90}, {0xd1, 0xe0}};
    for (unsigned v = 0; v < G_N_ELEMENTS(vals); v++) {
        for (unsigned o = 0; o < G_N_ELEMENTS(ops); o++) {
            for (int right = 0; right < 2; right++) {
                uint32_t a = vals[v][0], b = vals[v][1], k = vals[v][2];
                fx f;
                fx_init(&f, "486dx2-66", false);
                uint8_t code[] = {
                    0xb8,
                    (uint8_t)a,
                    (uint8_t)(a >> 8),
                    (uint8_t)(a >> 16),
                    (uint8_t)(a >> 24),
                    0xbb,
                    (uint8_t)b,
                    (uint8_t)(b >> 8),
                    (uint8_t)(b >> 16),
                    (uint8_t)(b >> 24),
                    0xb9,
                    (uint8_t)b,
                    (uint8_t)(b >> 8),
                    (uint8_t)(b >> 16),
                    (uint8_t)(b >> 24),
                    ops[o][0],
                    ops[o][1], /* op eax,ebx */
                    0xc1,
                    (uint8_t)(right ? 0xc9 : 0xc1),
                    (uint8_t)k, /* rol/ror ecx,k */
                    0x9c,
                    0x5a,
                    0xf4, /* pushfd ; pop edx ; hlt */
                };
                run_flat(&f, code, sizeof code);
                uint32_t r, want;
                switch (o) {
                case 0: r = a + b, want = szpa(r, a, b); break;
                case 1: r = a - b, want = szpa(r, a, b); break;
                case 2: r = a ^ b, want = szpa(r, a, b) & ~NM_FLAG_AF; break;
                case 3: r = a + 1, want = szpa(r, a, 1); break;
                default: r = a << 1, want = szpa(r, 0, r) & ~NM_FLAG_AF; break; /* SHL: AF clear */
                }
                uint32_t rot = right ? (b >> k) | (b << (32 - k)) : (b << k) | (b >> (32 - k));
                uint32_t cf = right ? rot >> 31 : rot & 1;
                uint32_t of = right ? cf ^ ((rot >> 30) & 1) : (rot >> 31) ^ cf;
                want |= (cf ? NM_FLAG_CF : 0) | (of ? NM_FLAG_OF : 0);
                g_assert_cmphex(reg(&f, NM_ECX), ==, rot);
                g_assert_cmphex(reg(&f, NM_EDX) & NM_FLAGS_ARITH, ==, want);
                fx_free(&f);
            }
        }
    }
}

static void test_strings(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    for (unsigned k = 0; k < 5000; k++)
        f.ram[0x10000 + k] = (uint8_t)(k * 7);
    static const uint8_t code[] = {
        0xfc,                                     /* cld */
        0xbe, 0x00, 0x00, 0x01, 0x00,             /* mov esi,0x10000 */
        0xbf, 0x00, 0x00, 0x02, 0x00,             /* mov edi,0x20000 */
        0xb9, 0x88, 0x13, 0x00, 0x00,             /* mov ecx,5000 */
        0xf3, 0xa4,                               /* rep movsb (several steps) */
        0xfd,                                     /* std */
        0xbe, 0xfc, 0x0f, 0x01, 0x00,             /* mov esi,0x10ffc */
        0xbf, 0xfc, 0x0f, 0x03, 0x00,             /* mov edi,0x30ffc */
        0xb9, 0x00, 0x04, 0x00, 0x00,             /* mov ecx,1024 */
        0xf3, 0xa5,                               /* rep movsd (backwards) */
        0xfc, 0xbf, 0x00, 0x00, 0x04, 0x00,       /* mov edi,0x40000 */
        0xb8, 0xab, 0xab, 0xab, 0xab,             /* mov eax,0xabababab */
        0xb9, 0xd0, 0x07, 0x00, 0x00,             /* mov ecx,2000 */
        0x66, 0xf3, 0xab,                         /* rep stosw */
        0xbe, 0x00, 0x00, 0x01, 0x00,             /* mov esi,0x10000 */
        0xbf, 0x00, 0x00, 0x02, 0x00,             /* mov edi,0x20000 */
        0xb9, 0x88, 0x13, 0x00, 0x00,             /* mov ecx,5000 */
        0xc6, 0x05, 0x34, 0x0d, 0x02, 0x00, 0x00, /* mov byte [0x20d34],0 (differs at 3380) */
        0xf3, 0xa6,                               /* repe cmpsb */
        0x89, 0xca,                               /* mov edx,ecx */
        0xbf, 0x00, 0x00, 0x01, 0x00,             /* mov edi,0x10000 */
        0xb0, 0x15,                               /* mov al,0x15 (=3*7) */
        0xb9, 0x10, 0x00, 0x00, 0x00,             /* mov ecx,16 */
        0xf2, 0xae,                               /* repne scasb */
        0xf4,
    };
    uint64_t before = nm_cpu_instructions(f.c);
    run_flat(&f, code, sizeof code);
    g_assert_cmpint(f.m->stop_reason, ==, NM_STOP_HALT);
    /* 26 instructions: each REP string counts once, however many
     * 1024-iteration steps it took (5000 MOVSB: 5 steps). */
    g_assert_cmpuint(nm_cpu_instructions(f.c) - before, ==, 26);
    g_assert_cmpmem(f.ram + 0x20000, 3380, f.ram + 0x10000, 3380);
    g_assert_cmpmem(f.ram + 0x20000 + 3381, 5000 - 3381, f.ram + 0x10000 + 3381, 5000 - 3381);
    g_assert_cmpmem(f.ram + 0x30000, 4096, f.ram + 0x10000, 4096);
    for (unsigned k = 0; k < 4000; k++)
        g_assert_cmpuint(f.ram[0x40000 + k], ==, 0xab);
    g_assert_cmpuint(f.ram[0x40000 + 4000], ==, 0);
    g_assert_cmphex(reg(&f, NM_EDX), ==, 5000 - 3381); /* stopped after the mismatch */
    g_assert_cmphex(reg(&f, NM_EDI), ==, 0x10004);     /* found at index 3 */
    g_assert_cmphex(reg(&f, NM_ECX), ==, 12);
    fx_free(&f);
}

static void test_real_strings_16(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {
        0xb8, 0x00, 0x10, 0x8e, 0xc0, /* mov ax,0x1000 ; mov es,ax */
        0xbf, 0xfe, 0xff,             /* mov di,0xfffe */
        0xb9, 0x03, 0x00,             /* mov cx,3 */
        0xb0, 0x77,                   /* mov al,0x77 */
        0xf3, 0xaa,                   /* rep stosb: DI wraps at 64 KB */
        0xf4,
    };
    run_real(&f, code, sizeof code);
    g_assert_cmpuint(f.ram[0x1fffe], ==, 0x77);
    g_assert_cmpuint(f.ram[0x1ffff], ==, 0x77);
    g_assert_cmpuint(f.ram[0x10000], ==, 0x77);
    g_assert_cmphex(reg(&f, NM_EDI), ==, 1);
    fx_free(&f);
}

static void test_smc(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    /* The store rewrites the immediate of the very next instruction; then a
     * loop runs an instruction twice, patched in between. */
    static const uint8_t code[] = {
        0xc6, 0x05, 0x08, 0x00, 0x10, 0x00, 0x42, /* mov byte [0x100008],0x42 */
        0xb0, 0x00,                               /* 0x100007: mov al,0 */
        0x31, 0xdb,                               /* xor ebx,ebx */
        0xb9, 0x02, 0x00, 0x00, 0x00,             /* mov ecx,2 */
        0x83, 0xc3, 0x01,                         /* 0x100010: add ebx,1 */
        0xc6, 0x05, 0x12, 0x00, 0x10, 0x00, 0x10, /* mov byte [0x100012],16 */
        0xe2, 0xf4,                               /* loop 0x100010 */
        0xf4,
    };
    run_flat(&f, code, sizeof code);
    g_assert_cmphex(reg(&f, NM_EAX) & 0xff, ==, 0x42);
    g_assert_cmphex(reg(&f, NM_EBX), ==, 17);
    fx_free(&f);
}

static uint8_t ack_vector(void *opaque)
{
    nm_machine *m = opaque;
    m->intr = false;
    return 0x08;
}

static void test_interrupt_and_hlt(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    f.m->intc.acknowledge = ack_vector;
    f.m->intc.opaque = f.m;
    static const uint8_t code[] = {
        0xbc, 0x00, 0x70, /* mov sp,0x7000 */
        0xfb,             /* sti */
        0xf4,             /* hlt (7C04) */
        0xeb, 0xfe,
    };
    load(&f, CODE16, code, sizeof code);
    /* Halted with IF=1 and an event due: the clock jumps to the deadline. */
    f.m->clock.deadline = 1000;
    nm_cpu_run(f.c, 100);
    g_assert_true(nm_cpu_halted(f.c));
    g_assert_cmpuint(f.m->clock.cycles, ==, 1000);
    g_assert_false(f.m->stop_requested);
    /* The interrupt wakes it: handler for vector 8 runs, return IP after HLT. */
    f.m->clock.deadline = UINT64_MAX;
    f.m->intr = true;
    nm_cpu_run(f.c, 100);
    g_assert_cmpuint(mark(&f), ==, 8 + 1);
    g_assert_cmphex(rd16(&f, 0x6ffa), ==, 0x7c05);
    fx_free(&f);
}

static void test_sti_shadow_and_tf(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    f.m->intc.acknowledge = ack_vector;
    f.m->intc.opaque = f.m;
    f.m->intr = true;
    static const uint8_t code[] = {
        0xbc, 0x00, 0x70, /* mov sp,0x7000 */
        0xfb,             /* sti */
        0x40,             /* inc ax: runs before the interrupt (STI shadow) */
        0x40,             /* not reached before the interrupt */
        0xf4,
    };
    run_real(&f, code, sizeof code);
    g_assert_cmpuint(mark(&f), ==, 9);
    g_assert_cmphex(rd16(&f, 0x6ffa), ==, 0x7c05);
    g_assert_cmphex(reg(&f, NM_EAX) & 0xffff, ==, 1);
    fx_free(&f);

    fx_init(&f, "486dx2-66", false);
    static const uint8_t tf[] = {
        0xbc, 0x00, 0x70,             /* mov sp,0x7000 */
        0x9c, 0x58,                   /* pushf ; pop ax */
        0x0d, 0x00, 0x01, 0x50, 0x9d, /* or ax,0x100 ; push ax ; popf (7C09) */
        0x90,                         /* nop (7C0A): trap after it */
        0x90, 0xf4,
    };
    run_real(&f, tf, sizeof tf);
    g_assert_cmpuint(mark(&f), ==, NM_EXC_DB + 1);
    g_assert_cmphex(rd16(&f, 0x6ffa), ==, 0x7c0b);
    fx_free(&f);
}

static void test_single_step_api(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {0x66, 0x01, 0xd8, 0x66, 0x01, 0xd8}; /* add eax,ebx x2 */
    load(&f, CODE16, code, sizeof code);
    nm_cpu_run(f.c, 1); /* the JMP FAR at the reset vector */
    nm_cpu_set_reg(f.c, NM_EAX, 0xffffffffu);
    nm_cpu_set_reg(f.c, NM_EBX, 1);
    g_assert_cmpuint(nm_cpu_run(f.c, 1), ==, 1);
    g_assert_cmphex(reg(&f, NM_EAX), ==, 0);
    uint32_t fl = nm_cpu_get_eflags(f.c);
    g_assert_true(fl & NM_FLAG_CF);
    g_assert_true(fl & NM_FLAG_ZF);
    g_assert_true(fl & NM_FLAG_AF);
    g_assert_false(fl & NM_FLAG_OF);
    g_assert_cmphex(nm_cpu_get_eip(f.c), ==, CODE16 + 3);
    nm_cpu_set_eflags(f.c, 2);
    nm_cpu_run(f.c, 1);
    g_assert_cmphex(reg(&f, NM_EAX), ==, 1);
    g_assert_cmphex(nm_cpu_get_eflags(f.c) & NM_FLAGS_ARITH, ==, 0);
    fx_free(&f);
}

static void test_enter_leave_pusha(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {
        0xbd, 0x00, 0x00, 0x08, 0x00,                               /* mov ebp,0x80000 */
        0xc7, 0x05, 0xfc, 0xff, 0x07, 0x00, 0x11, 0x11, 0x11, 0x11, /* [0x7fffc]=0x11111111 */
        0xc7, 0x05, 0xf8, 0xff, 0x07, 0x00, 0x22, 0x22, 0x22, 0x22, /* [0x7fff8]=0x22222222 */
        0x60,                                                       /* pusha */
        0x61,                                                       /* popa */
        0xc8, 0x10, 0x00, 0x03,                                     /* enter 16,3 */
        0x89, 0xe1,                                                 /* mov ecx,esp */
        0x89, 0xea,                                                 /* mov edx,ebp */
        0xc9,                                                       /* leave */
        0xf4,
    };
    run_flat(&f, code, sizeof code);
    uint32_t frame = 0x90000 - 4;
    g_assert_cmphex(reg(&f, NM_EDX), ==, frame);
    g_assert_cmphex(reg(&f, NM_ECX), ==, frame - 12 - 16);
    g_assert_cmphex(rd32(&f, frame), ==, 0x80000);        /* old EBP */
    g_assert_cmphex(rd32(&f, frame - 4), ==, 0x11111111); /* [ebp-4] */
    g_assert_cmphex(rd32(&f, frame - 8), ==, 0x22222222); /* [ebp-8] */
    g_assert_cmphex(rd32(&f, frame - 12), ==, frame);     /* frame pointer */
    g_assert_cmphex(reg(&f, NM_EBP), ==, 0x80000);
    g_assert_cmphex(reg(&f, NM_ESP), ==, 0x90000);
    fx_free(&f);
}

static void test_bt_mem_offset(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {
        0xbb, 0x00, 0x10, 0x00, 0x00, /* mov ebx,0x1000 */
        0xb8, 0x43, 0x00, 0x00, 0x00, /* mov eax,67 */
        0x0f, 0xab, 0x03,             /* bts [ebx],eax: bit 3 of dword 0x1008 */
        0xb8, 0xff, 0xff, 0xff, 0xff, /* mov eax,-1 */
        0x0f, 0xab, 0x03,             /* bts [ebx],eax: bit 31 of 0xffc */
        0x0f, 0xa3, 0x03,             /* bt [ebx],eax: CF=1 */
        0x0f, 0x92, 0xc1,             /* setc cl */
        0x0f, 0xbc, 0x13,             /* bsf edx,[ebx] -> ZF (0) */
        0xf4,
    };
    run_flat(&f, code, sizeof code);
    g_assert_cmphex(rd32(&f, 0x1008), ==, 8);
    g_assert_cmphex(rd32(&f, 0xffc), ==, 0x80000000u);
    g_assert_cmphex(reg(&f, NM_ECX) & 0xff, ==, 1);
    fx_free(&f);
}

static void test_cmpxchg_xadd_cpuid(void)
{
    fx f;
    fx_init(&f, "pentium-100", false);
    static const uint8_t code[] = {
        0xc7, 0x05, 0x00, 0x30, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, /* [0x3000]=5 */
        0xb8, 0x05, 0x00, 0x00, 0x00,                               /* mov eax,5 */
        0xb9, 0x09, 0x00, 0x00, 0x00,                               /* mov ecx,9 */
        0xf0, 0x0f, 0xb1, 0x0d, 0x00, 0x30, 0x00, 0x00,             /* lock cmpxchg [0x3000],ecx */
        0xba, 0x01, 0x00, 0x00, 0x00,                               /* mov edx,1 */
        0xf0, 0x0f, 0xc1, 0x15, 0x00, 0x30, 0x00, 0x00, /* lock xadd [0x3000],edx -> edx=9 */
        0x89, 0xd6,                                     /* mov esi,edx */
        0xb8, 0x01, 0x00, 0x00, 0x00,                   /* mov eax,1 */
        0x0f, 0xa2,                                     /* cpuid */
        0x0f, 0x31,                                     /* rdtsc */
        0xf4,
    };
    run_flat(&f, code, sizeof code);
    g_assert_cmphex(rd32(&f, 0x3000), ==, 10);
    g_assert_cmphex(reg(&f, NM_ESI), ==, 9);
    g_assert_cmpuint(f.m->stop_reason, ==, NM_STOP_HALT);
    fx_free(&f);
}

typedef struct {
    unsigned insns, branches, taken, data_writes, code;
    uint16_t last_op;
    uint32_t last_ea;
} hook_counts;

static uint32_t on_insn(void *opaque, nm_cpu *cpu, const nm_insn *insn)
{
    (void)cpu;
    hook_counts *h = opaque;
    h->insns++;
    h->last_op = insn->op;
    if (insn->dst == NM_OPK_MEM) h->last_ea = insn->ea;
    return 3;
}
static void on_mem(void *opaque, uint32_t lin, uint32_t phys, unsigned size, unsigned flags)
{
    (void)lin, (void)phys, (void)size;
    hook_counts *h = opaque;
    if (flags & NM_MEM_CODE)
        h->code++;
    else if (flags & NM_MEM_WRITE)
        h->data_writes++;
}
static void on_branch(void *opaque, uint32_t from, uint32_t to, bool taken)
{
    (void)from, (void)to;
    hook_counts *h = opaque;
    h->branches++;
    h->taken += taken;
}

static void test_hooks(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    hook_counts h = {0};
    nm_cpu_hooks hooks = {.opaque = &h, .insn = on_insn, .mem = on_mem, .branch = on_branch};
    static const uint8_t code[] = {
        0xb9, 0x03, 0x00, 0x00, 0x00,       /* mov ecx,3 */
        0x89, 0x0d, 0x00, 0x20, 0x00, 0x00, /* l: mov [0x2000],ecx */
        0xe2, 0xf8,                         /* loop l */
        0xf4,
    };
    load(&f, CODE32, code, sizeof code);
    nm_cpu_enter_flat32(f.c, CODE32, 0x90000);
    nm_cpu_set_hooks(f.c, &hooks);
    uint64_t c0 = f.m->clock.cycles;
    nm_cpu_run(f.c, 100);
    g_assert_cmpuint(h.insns, ==, 8);
    g_assert_cmpuint(f.m->clock.cycles - c0, ==, 24); /* the insn hook's cost */
    g_assert_cmpuint(h.data_writes, ==, 3);           /* no TLB fast path while listening */
    g_assert_cmpuint(h.code, ==, 8);
    g_assert_cmpuint(h.branches, ==, 3);
    g_assert_cmpuint(h.taken, ==, 2);
    g_assert_cmpuint(h.last_ea, ==, 0x2000);
    g_assert_cmpstr(nm_opcode_name(h.last_op), ==, "hlt");
    fx_free(&f);
}

/* The data accesses a listener is told of, in order, whether it takes them
 * in a log (nm_cpu_hooks.mem_log) with room, in a log that overflows into
 * its call, or by the call alone: the specialised handlers' fast halves
 * (core.h, hook_log) must report what the general handlers would, once. */
typedef struct {
    nm_mem_record log[16];
    uint16_t n, cap;
    bool use_log;
    nm_mem_record seen[64];
    unsigned nseen;
} access_listener;

static void listener_drain(access_listener *l)
{
    for (unsigned k = 0; k < l->n; k++)
        if (!(l->log[k].flags & NM_MEM_CODE) && l->nseen < G_N_ELEMENTS(l->seen))
            l->seen[l->nseen++] = l->log[k];
    l->n = 0;
}
static uint32_t listener_insn(void *opaque, nm_cpu *cpu, const nm_insn *insn)
{
    (void)cpu, (void)insn;
    listener_drain(opaque);
    return 1;
}
static void listener_mem(void *opaque, uint32_t lin, uint32_t phys, unsigned size, unsigned flags)
{
    access_listener *l = opaque;
    listener_drain(l); /* (what the log holds came first) */
    if (!(flags & NM_MEM_CODE) && l->nseen < G_N_ELEMENTS(l->seen))
        l->seen[l->nseen++] = (nm_mem_record){phys, lin, (uint8_t)size, (uint8_t)flags};
}
static nm_mem_log listener_log(void *opaque)
{
    access_listener *l = opaque;
    return l->use_log ? (nm_mem_log){l->log, &l->n, l->cap} : (nm_mem_log){0};
}

/* Runs code at CODE32 (EBX = 0x2000, the call target at [0x2000]) with the
 * listener, a 32-bit stack or a 16-bit one, and checks what it was told
 * against `want` (address, size, write). */
static void check_accesses(const uint8_t *code, size_t n, bool stack16, uint16_t cap, bool use_log,
                           const uint32_t (*want)[3], unsigned nwant)
{
    fx f;
    fx_init(&f, "pentium-100", false);
    load(&f, CODE32, code, n);
    const uint32_t target = CODE32 + (uint32_t)n - 1; /* the RET at the end */
    memcpy(f.ram + 0x2000, &target, 4);
    memcpy(f.ram + 0x2004, &(uint32_t){7}, 4);
    nm_cpu_enter_flat32(f.c, CODE32, 0x9000);
    if (stack16) {
        f.c->seg[NM_SS].flags &= (uint16_t)~NM_SEGF_DB;
        f.c->stack32 = false;
    }
    access_listener l = {.cap = cap, .use_log = use_log};
    nm_cpu_hooks hooks = {
        .opaque = &l, .insn = listener_insn, .mem = listener_mem, .mem_log = listener_log};
    nm_cpu_set_hooks(f.c, &hooks);
    nm_cpu_run(f.c, 100);
    listener_drain(&l);
    g_assert_cmpuint(f.m->stop_reason, ==, NM_STOP_HALT);
    g_assert_cmpuint(l.nseen, ==, nwant);
    for (unsigned k = 0; k < nwant; k++) {
        g_assert_cmphex(l.seen[k].lin, ==, want[k][0]);
        g_assert_cmphex(l.seen[k].phys, ==, want[k][0]);
        g_assert_cmpuint(l.seen[k].size, ==, want[k][1]);
        g_assert_cmpuint(l.seen[k].flags, ==, want[k][2] ? NM_MEM_WRITE : 0);
    }
    fx_free(&f);
}

static void test_hook_accesses(void)
{
    static const uint8_t code[] = {
        0xbb, 0x00, 0x20, 0x00, 0x00, /* mov ebx,0x2000 */
        0x8b, 0x43, 0x04,             /* mov eax,[ebx+4] */
        0x89, 0x43, 0x08,             /* mov [ebx+8],eax */
        0x01, 0x43, 0x08,             /* add [ebx+8],eax */
        0x83, 0x7b, 0x08, 0x05,       /* cmp dword [ebx+8],5 */
        0xff, 0x43, 0x0c,             /* inc dword [ebx+12] */
        0x89, 0x44, 0x24, 0xfc,       /* mov [esp-4],eax (the stack page in the TLB) */
        0x50,                         /* push eax */
        0x59,                         /* pop ecx */
        0xff, 0x13,                   /* call [ebx] */
        0xf4,                         /* hlt */
        0xc3,                         /* ret (the call's target) */
    };
    static const uint32_t want[][3] = {
        {0x2004, 4, 0}, {0x2008, 4, 1}, {0x2008, 4, 0}, {0x2008, 4, 1}, {0x2008, 4, 0},
        {0x200c, 4, 0}, {0x200c, 4, 1}, {0x8ffc, 4, 1}, {0x8ffc, 4, 1}, {0x8ffc, 4, 0},
        {0x2000, 4, 0}, {0x8ffc, 4, 1}, {0x8ffc, 4, 0},
    };
    /* A log with room, one that overflows at once, none */
    check_accesses(code, sizeof code, false, 16, true, want, G_N_ELEMENTS(want));
    check_accesses(code, sizeof code, false, 1, true, want, G_N_ELEMENTS(want));
    check_accesses(code, sizeof code, false, 0, false, want, G_N_ELEMENTS(want));
    /* With a 16-bit stack CALL [ebx]'s fast half gives up after its read:
     * the general handler reads again, and the read is told once. */
    static const uint8_t call16[] = {
        0xbb, 0x00, 0x20, 0x00, 0x00, /* mov ebx,0x2000 */
        0x8b, 0x03,                   /* mov eax,[ebx] (its page in the TLB) */
        0xff, 0x13,                   /* call [ebx] */
        0xf4,                         /* hlt */
        0xc3,                         /* ret */
    };
    static const uint32_t want16[][3] = {
        {0x2000, 4, 0}, {0x2000, 4, 0}, {0x8ffc, 4, 1}, {0x8ffc, 4, 0}};
    check_accesses(call16, sizeof call16, true, 16, true, want16, G_N_ELEMENTS(want16));
    check_accesses(call16, sizeof call16, true, 0, false, want16, G_N_ELEMENTS(want16));
}

/* Guest MIPS on a simple loop (printed, not asserted). */
static void test_speed(void)
{
    fx f;
    fx_init(&f, "486dx2-66", false);
    static const uint8_t code[] = {
        0xb9, 0x00, 0x2d, 0x31, 0x01,       /* mov ecx,20000000 */
        0x31, 0xc0,                         /* xor eax,eax */
        0x01, 0xc8,                         /* l: add eax,ecx */
        0x89, 0x05, 0x00, 0x20, 0x00, 0x00, /* mov [0x2000],eax */
        0x49,                               /* dec ecx */
        0x75, 0xf5,                         /* jnz l */
        0xf4,
    };
    load(&f, CODE32, code, sizeof code);
    nm_cpu_enter_flat32(f.c, CODE32, 0x90000);
    /* Process CPU time: the figure stays meaningful on a loaded machine. */
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    uint64_t n = nm_cpu_run(f.c, 0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    gint64 t0 = (gint64)a.tv_sec * 1000000 + a.tv_nsec / 1000;
    gint64 t1 = (gint64)b.tv_sec * 1000000 + b.tv_nsec / 1000;
    g_assert_cmpuint(n, ==, 80000003);
    g_test_message("%.1f million instructions/s (%" G_GUINT64_FORMAT " in %.3f s)",
                   (double)n / (double)(t1 - t0), n, (double)(t1 - t0) / 1e6);
    g_printerr("# cpu speed: %.1f MIPS\n", (double)n / (double)(t1 - t0));
    fx_free(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (g_getenv("NICEMU_TEST_LOG")) {
        char *bad = NULL;
        nm_log_parse(g_getenv("NICEMU_TEST_LOG"), &bad);
        g_free(bad);
    }
    g_test_add_func("/cpu/core/real-basic", test_real_basic);
    g_test_add_func("/cpu/core/real-de-ivt", test_real_de_ivt);
    g_test_add_func("/cpu/core/exceptions", test_exceptions);
    g_test_add_func("/cpu/core/model-isa", test_model_isa);
    g_test_add_func("/cpu/core/esc-stores-nothing", test_esc_stores_nothing);
    g_test_add_func("/cpu/core/esc-fpu-stores", test_esc_fpu_stores);
    g_test_add_func("/cpu/core/flat-loop", test_flat_loop);
    g_test_add_func("/cpu/core/rotate-keeps-flags", test_rotate_keeps_flags);
    g_test_add_func("/cpu/core/strings", test_strings);
    g_test_add_func("/cpu/core/real-strings-16", test_real_strings_16);
    g_test_add_func("/cpu/core/smc", test_smc);
    g_test_add_func("/cpu/core/interrupt-hlt", test_interrupt_and_hlt);
    g_test_add_func("/cpu/core/sti-shadow-tf", test_sti_shadow_and_tf);
    g_test_add_func("/cpu/core/single-step-api", test_single_step_api);
    g_test_add_func("/cpu/core/enter-leave-pusha", test_enter_leave_pusha);
    g_test_add_func("/cpu/core/bt-mem-offset", test_bt_mem_offset);
    g_test_add_func("/cpu/core/cmpxchg-xadd-cpuid", test_cmpxchg_xadd_cpuid);
    g_test_add_func("/cpu/core/hooks", test_hooks);
    g_test_add_func("/cpu/core/hook-accesses", test_hook_accesses);
    g_test_add_func("/cpu/core/speed", test_speed);
    return g_test_run();
}
