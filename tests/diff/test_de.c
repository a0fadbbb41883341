/* #DE (vector 0) in real mode: DIV by zero, quotients too large for the
 * destination (DIV and IDIV, 8/16/32-bit, including 0x80000000:00000000 /
 * -1), AAM 0.  The CPU starts from RESET, a ROM at the reset vector jumps to
 * 0000:1000, and the IVT entry for vector 0 points at a `jmp $` at
 * 0000:2000.  #DE is a fault: the pushed IP is the dividing instruction's,
 * and the registers it would write are untouched.  (The differential test
 * checks #DE in 32-bit protected mode for every case the host faulted on.) */
#include <glib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "emu/config.h"
#include "emu/machine.h"
#include "tests/unit/pc_fixture.h"

#define CODE    0x1000u
#define HANDLER 0x2000u
#define SP0     0x8000u

/* A bare PC, a ROM at the reset vector, the IVT and the trap stubs, and a
 * CPU out of reset. */
static void setup(pc_fixture *f, gconstpointer data)
{
    pc_setup(f, data);
    nm_mem_region *rom = nm_memmap_add_rom(f->m->mem, "rom", 0xffff0000u, 0x10000);
    g_assert_nonnull(rom);
    const uint8_t reset[5] = {0xea, CODE & 0xff, CODE >> 8, 0x00, 0x00}; /* jmp 0000:1000 */
    g_assert_true(nm_mem_region_load(rom, 0xfff0, reset, sizeof reset));
    uint8_t *ram = f->m->ram->host;
    const uint8_t ivt0[4] = {HANDLER & 0xff, HANDLER >> 8, 0, 0};
    memcpy(ram, ivt0, 4);
    /* Every other vector to a different trap, so a wrong vector shows. */
    for (unsigned v = 1; v < 32; v++) {
        uint16_t off = (uint16_t)(HANDLER + 0x10 * v);
        ram[v * 4] = off & 0xff;
        ram[v * 4 + 1] = off >> 8;
        ram[v * 4 + 2] = ram[v * 4 + 3] = 0;
    }
    for (unsigned v = 0; v < 32; v++) {
        ram[HANDLER + 0x10 * v] = 0xeb; /* jmp $ */
        ram[HANDLER + 0x10 * v + 1] = 0xfe;
    }
    pc_add_cpu(f);
}

/* Runs `code` (which starts with `mov sp,0x8000`) from the reset vector
 * until CS:IP reaches a trap stub or `len` bytes are done.  Returns the
 * vector taken, or -1 when the code completed. */
static int run_code(pc_fixture *f, const uint8_t *code, size_t len, uint16_t *pushed)
{
    nm_mem_dma_write(f->m->mem, CODE, code, len);
    for (int i = 0; i < 64; i++) {
        uint32_t lin = nm_cpu_get_segment(f->cpu, NM_CS)->base + nm_cpu_get_eip(f->cpu);
        if (lin == CODE + len) return -1;
        if (lin >= HANDLER && lin < HANDLER + 0x10 * 32) {
            uint32_t sp = nm_cpu_get_reg(f->cpu, NM_ESP) & 0xffff;
            g_assert_cmphex(sp, ==, SP0 - 6);
            for (int k = 0; k < 3; k++)
                pushed[k] = (uint16_t)nm_mem_read(f->m->mem, sp + 2u * (unsigned)k, 2);
            return (int)((lin - HANDLER) / 0x10);
        }
        nm_cpu_run(f->cpu, 1);
    }
    g_assert_not_reached();
    return -2;
}

/* `prologue` sets the registers; the faulting instruction follows it. */
static void expect_de(pc_fixture *f, const uint8_t *prologue, size_t plen, const uint8_t *insn,
                      size_t ilen, uint32_t eax, uint32_t edx)
{
    uint8_t code[64];
    const uint8_t sp[3] = {0xbc, SP0 & 0xff, SP0 >> 8}; /* mov sp,0x8000 */
    memcpy(code, sp, 3);
    memcpy(code + 3, prologue, plen);
    memcpy(code + 3 + plen, insn, ilen);
    uint16_t pushed[3] = {0, 0, 0};
    int v = run_code(f, code, 3 + plen + ilen, pushed);
    g_assert_cmpint(v, ==, NM_EXC_DE);
    g_assert_cmphex(pushed[0], ==, CODE + 3 + plen); /* IP of the faulting instruction */
    g_assert_cmphex(pushed[1], ==, 0);               /* CS */
    g_assert_cmphex(nm_cpu_get_segment(f->cpu, NM_CS)->selector, ==, 0);
    g_assert_cmphex(nm_cpu_get_eip(f->cpu), ==, HANDLER);
    g_assert_cmphex(nm_cpu_get_reg(f->cpu, NM_EAX), ==, eax);
    g_assert_cmphex(nm_cpu_get_reg(f->cpu, NM_EDX), ==, edx);
}

/* mov eax,imm32 / mov edx,imm32 / mov ecx,imm32 / mov ebx,imm32 (o32). */
#define MOV32(op, v)                                                                               \
    0x66, (op), (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24)

static void test_div16_by_zero(pc_fixture *f, gconstpointer data)
{
    (void)data;
    const uint8_t pro[] = {MOV32(0xb8, 0x12345678u), MOV32(0xba, 0u), MOV32(0xbb, 0xffff0000u)};
    const uint8_t insn[] = {0xf7, 0xf3}; /* div bx */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 0x12345678u, 0);
}

static void test_div32_by_zero(pc_fixture *f, gconstpointer data)
{
    (void)data;
    const uint8_t pro[] = {MOV32(0xb8, 7u), MOV32(0xba, 0u), MOV32(0xb9, 0u)};
    const uint8_t insn[] = {0x66, 0xf7, 0xf1}; /* div ecx */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 7, 0);
}

static void test_div8_overflow(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* AX=0x1000 / BL=0x10 = 0x100: does not fit in AL. */
    const uint8_t pro[] = {MOV32(0xb8, 0x1000u), MOV32(0xba, 0x5555u), MOV32(0xbb, 0x10u)};
    const uint8_t insn[] = {0xf6, 0xf3}; /* div bl */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 0x1000, 0x5555);
}

static void test_idiv32_overflow(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* EDX:EAX = 0x80000000:00000000 (-2^63) / -1: +2^63 does not fit. */
    const uint8_t pro[] = {MOV32(0xb8, 0u), MOV32(0xba, 0x80000000u), MOV32(0xb9, 0xffffffffu)};
    const uint8_t insn[] = {0x66, 0xf7, 0xf9}; /* idiv ecx */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 0, 0x80000000u);
}

static void test_idiv32_min_by_minus1(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* EDX:EAX = -2^31 (sign-extended) / -1 = +2^31: one past INT32_MAX. */
    const uint8_t pro[] = {MOV32(0xb8, 0x80000000u), MOV32(0xba, 0xffffffffu),
                           MOV32(0xb9, 0xffffffffu)};
    const uint8_t insn[] = {0x66, 0xf7, 0xf9}; /* idiv ecx */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 0x80000000u, 0xffffffffu);
}

static void test_idiv16_overflow(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* DX:AX = 0x0001:0000 (65536) / 1: does not fit in AX (signed). */
    const uint8_t pro[] = {MOV32(0xb8, 0xabcd0000u), MOV32(0xba, 0x00000001u), MOV32(0xbb, 1u)};
    const uint8_t insn[] = {0xf7, 0xfb}; /* idiv bx */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 0xabcd0000u, 1);
}

static void test_idiv8_overflow(pc_fixture *f, gconstpointer data)
{
    (void)data;
    /* AX = -32768 / -1 = 32768: does not fit in AL. */
    const uint8_t pro[] = {MOV32(0xb8, 0x8000u), MOV32(0xba, 0u), MOV32(0xbb, 0xffu)};
    const uint8_t insn[] = {0xf6, 0xfb}; /* idiv bl */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 0x8000, 0);
}

static void test_aam_zero(pc_fixture *f, gconstpointer data)
{
    (void)data;
    const uint8_t pro[] = {MOV32(0xb8, 0x1234u), MOV32(0xba, 0u)};
    const uint8_t insn[] = {0xd4, 0x00}; /* aam 0 */
    expect_de(f, pro, sizeof pro, insn, sizeof insn, 0x1234, 0);
}

/* And no #DE where the quotient fits: -128 in AL, 0xFFFFFFFF in EAX. */
static void test_no_fault_at_the_edge(pc_fixture *f, gconstpointer data)
{
    (void)data;
    const uint8_t code[] = {0xbc,
                            SP0 & 0xff,
                            SP0 >> 8,
                            MOV32(0xb8, 0xff80u),
                            MOV32(0xbb, 1u),
                            0xf6,
                            0xfb, /* idiv bl: -128/1 */
                            0x89,
                            0xc6, /* mov si,ax */
                            MOV32(0xb8, 0xffffffffu),
                            MOV32(0xba, 0u),
                            MOV32(0xb9, 1u),
                            0x66,
                            0xf7,
                            0xf1}; /* div ecx: 0xffffffff / 1 */
    uint16_t pushed[3];
    g_assert_cmpint(run_code(f, code, sizeof code, pushed), ==, -1);
    g_assert_cmphex(nm_cpu_get_reg(f->cpu, NM_ESI) & 0xffff, ==, 0x0080); /* AL=-128, AH=0 */
    g_assert_cmphex(nm_cpu_get_reg(f->cpu, NM_EAX), ==, 0xffffffffu);
    g_assert_cmphex(nm_cpu_get_reg(f->cpu, NM_EDX), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(name, fn) g_test_add("/de/" name, pc_fixture, NULL, setup, fn, pc_teardown)
    ADD("div16-by-zero", test_div16_by_zero);
    ADD("div32-by-zero", test_div32_by_zero);
    ADD("div8-overflow", test_div8_overflow);
    ADD("idiv32-overflow", test_idiv32_overflow);
    ADD("idiv32-min-by-minus1", test_idiv32_min_by_minus1);
    ADD("idiv16-overflow", test_idiv16_overflow);
    ADD("idiv8-overflow", test_idiv8_overflow);
    ADD("aam-zero", test_aam_zero);
    ADD("no-fault-at-the-edge", test_no_fault_at_the_edge);
    return g_test_run();
}
