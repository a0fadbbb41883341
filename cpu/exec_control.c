/* Stack and control transfer: PUSH/POP (all forms), PUSHA/POPA, PUSHF/POPF,
 * ENTER/LEAVE, Jcc/JMP/CALL/RET near and far, INT n/INT3/INTO/ICEBP/IRET,
 * LOOP/JCXZ, BOUND (SDM vol. 2).  Far transfers and interrupts go to the
 * system half; everything here reads memory before it changes a register,
 * so a fault leaves the state of the instruction's start (ESP is restored
 * by the run loop). */
#include "cpu/exec.h"

NM_FALLBACK void h_push_E(nm_cpu *c, const nm_insn *i)
{
    push(c, rm_read(c, i, i->opsize), i->opsize);
}
NM_FALLBACK void h_push_I(nm_cpu *c, const nm_insn *i)
{
    push(c, i->imm, i->opsize);
}

static void esp_add(nm_cpu *c, uint32_t n)
{
    if (c->stack32)
        c->gpr[NM_ESP] += n;
    else
        c->gpr[NM_ESP] = (c->gpr[NM_ESP] & 0xffff0000u) | ((c->gpr[NM_ESP] + n) & 0xffff);
}

NM_FALLBACK void h_pop_E(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t v = stack_peek(c, 0, sz);
    /* The destination address is computed with the incremented ESP
     * (SDM vol. 2B, POP). */
    esp_add(c, sz);
    rm_write(c, i, sz, v);
}

void h_push_sreg(nm_cpu *c, const nm_insn *i)
{
    uint16_t sel = c->seg[i->reg].selector;
    if (i->opsize == 4 && c->model->family < NM_CPU_PENTIUM) {
        /* The 386 and 486 store a 32-bit push of a segment register as a
         * 16-bit move into the low half of the new slot, leaving the upper
         * half as it was (checked on both by test386.asm's author; the SDM,
         * vol. 2B PUSH, allows it).  ESP still moves by 4; the move's
         * checks are a word's.  The Pentium pushes the selector
         * zero-extended (docs/cpu.md "Stack corner cases"). */
        uint32_t esp = c->gpr[NM_ESP];
        if (c->stack32) {
            mem_write(c, NM_SS, esp - 4, sel, 2);
            c->gpr[NM_ESP] = esp - 4;
        } else {
            uint32_t sp = (esp - 4) & 0xffff;
            mem_write(c, NM_SS, sp, sel, 2);
            c->gpr[NM_ESP] = (esp & 0xffff0000u) | sp;
        }
        return;
    }
    push(c, sel, i->opsize);
}

void h_pop_sreg(nm_cpu *c, const nm_insn *i)
{
    uint32_t v = stack_peek(c, 0, i->opsize);
    /* ESP moves by the stack size in force at the pop, not the size of an
     * SS the pop loads (SDM vol. 2B, POP: the increment uses the
     * StackAddrSize of the pop itself). */
    bool stack32 = c->stack32;
    cpu_load_sreg(c, i->reg, (uint16_t)v);
    if (stack32)
        c->gpr[NM_ESP] += i->opsize;
    else
        c->gpr[NM_ESP] = (c->gpr[NM_ESP] & 0xffff0000u) | ((c->gpr[NM_ESP] + i->opsize) & 0xffff);
    if (i->reg == NM_SS) { /* POP SS: no interrupt before the next instruction */
        c->inhibit_irq = true;
        c->inhibit_fresh = true;
    }
}

void h_pusha(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t old_esp = c->gpr[NM_ESP];
    for (unsigned r = 0; r < 8; r++)
        push(c, r == NM_ESP ? old_esp : c->gpr[r], sz);
}

void h_popa(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t v[8];
    for (unsigned k = 0; k < 8; k++)
        v[7 - k] = stack_peek(c, k * sz, sz);
    for (unsigned r = 0; r < 8; r++)
        if (r != NM_ESP) reg_set(c, r, sz, v[r]);
    esp_add(c, 8 * sz);
    /* The 386's POPAD with a 16-bit stack loads the ESP slot's dword into
     * ESP and then only SP moves on, so ESP's upper half is the popped
     * one's (measured by test386.asm's author; the 386 and 486 manuals say
     * the slot is discarded, which the 486 and Pentium do). */
    if (sz == 4 && !c->stack32 && cpu_is386(c))
        c->gpr[NM_ESP] = (v[NM_ESP] & 0xffff0000u) | (c->gpr[NM_ESP] & 0xffff);
}

void h_pushf(nm_cpu *c, const nm_insn *i)
{
    if (c->vm86 && iopl(c) < 3) cpu_raise(c, NM_EXC_GP, 0);
    /* VM and RF are pushed clear (SDM vol. 2B, PUSHF). */
    push(c, cpu_get_eflags(c) & ~(NM_FLAG_VM | NM_FLAG_RF), i->opsize);
}

void h_popf(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    if (c->vm86 && iopl(c) < 3) cpu_raise(c, NM_EXC_GP, 0);
    uint32_t v = stack_peek(c, 0, sz);
    /* SDM vol. 2B, POPF: IOPL changes only at CPL 0, IF only when CPL <=
     * IOPL, VM/RF/VIF/VIP never. */
    uint32_t mask = NM_FLAGS_ARITH | NM_FLAG_TF | NM_FLAG_DF | NM_FLAG_NT | NM_FLAG_AC | NM_FLAG_ID;
    if (c->cpl == 0 && !c->vm86)
        mask |= NM_FLAG_IOPL | NM_FLAG_IF;
    else if (c->cpl <= (int)iopl(c))
        mask |= NM_FLAG_IF;
    if (sz == 2) mask &= 0xffff;
    esp_add(c, sz);
    cpu_set_eflags(c, v, mask);
    c->lf_op = LF_NONE;
}

void h_enter(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize, level = i->imm2 & 31;
    push(c, c->gpr[NM_EBP], sz);
    uint32_t frame = c->gpr[NM_ESP];
    if (level) {
        uint32_t bp = c->gpr[NM_EBP];
        for (unsigned k = 1; k < level; k++) {
            bp = c->stack32 ? bp - sz : (bp & 0xffff0000u) | ((bp - sz) & 0xffff);
            push(c, mem_read(c, NM_SS, c->stack32 ? bp : bp & 0xffff, sz), sz);
        }
        push(c, frame, sz);
    }
    uint32_t esp = c->stack32
                       ? c->gpr[NM_ESP] - i->imm
                       : (c->gpr[NM_ESP] & 0xffff0000u) | ((c->gpr[NM_ESP] - i->imm) & 0xffff);
    /* The final stack pointer must be writable before anything changes:
     * #SS beyond the limit, #PF where a write there would fault (SDM
     * vol. 2A, ENTER, protected-mode exceptions). */
    cpu_probe_write(c, NM_SS, c->stack32 ? esp : esp & 0xffff, 1);
    reg_set(c, NM_EBP, sz, frame);
    c->gpr[NM_ESP] = esp;
}

void h_leave(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t sp = c->stack32 ? c->gpr[NM_EBP] : c->gpr[NM_EBP] & 0xffff;
    uint32_t v = mem_read(c, NM_SS, sp, sz);
    if (c->stack32)
        c->gpr[NM_ESP] = sp + sz;
    else
        c->gpr[NM_ESP] = (c->gpr[NM_ESP] & 0xffff0000u) | ((sp + sz) & 0xffff);
    reg_set(c, NM_EBP, sz, v);
}

void h_jcc(nm_cpu *c, const nm_insn *i)
{
    unsigned cc = i->cond;
    bool t = (cc >> 1) == 2 ? flags_zf(c) ^ (cc & 1) : flags_cond(c, cc);
    if (t) jump_to(c, c->eip + i->disp, i->opsize);
}

void h_jmp_rel(nm_cpu *c, const nm_insn *i)
{
    jump_to(c, c->eip + i->disp, i->opsize);
}
void h_jmp_E(nm_cpu *c, const nm_insn *i)
{
    jump_to(c, rm_read(c, i, i->opsize), i->opsize);
}
void h_jmp_far(nm_cpu *c, const nm_insn *i)
{
    cpu_jmp_far(c, (uint16_t)i->imm2, i->imm);
}

static void far_ptr(nm_cpu *c, const nm_insn *i, uint16_t *sel, uint32_t *off)
{
    uint32_t ea = insn_ea(c, i);
    *off = mem_read(c, i->seg, ea, i->opsize);
    uint32_t ea2 = ea + i->opsize;
    if (!i->addr32) ea2 &= 0xffff;
    *sel = (uint16_t)mem_read(c, i->seg, ea2, 2);
}

void h_jmp_far_M(nm_cpu *c, const nm_insn *i)
{
    uint16_t sel;
    uint32_t off;
    far_ptr(c, i, &sel, &off);
    cpu_jmp_far(c, sel, off);
}

static void call_near(nm_cpu *c, uint32_t target, unsigned sz)
{
    if (sz != 4) target &= 0xffff;
    if (target > c->seg[NM_CS].limit) cpu_raise(c, NM_EXC_GP, 0);
    push(c, c->eip, sz);
    c->eip = target;
}

NM_FALLBACK void h_call_rel(nm_cpu *c, const nm_insn *i)
{
    call_near(c, c->eip + i->disp, i->opsize);
}
NM_FALLBACK void h_call_E(nm_cpu *c, const nm_insn *i)
{
    call_near(c, rm_read(c, i, i->opsize), i->opsize);
}
void h_call_far(nm_cpu *c, const nm_insn *i)
{
    cpu_call_far(c, (uint16_t)i->imm2, i->imm, i->opsize == 4);
}
void h_call_far_M(nm_cpu *c, const nm_insn *i)
{
    uint16_t sel;
    uint32_t off;
    far_ptr(c, i, &sel, &off);
    cpu_call_far(c, sel, off, i->opsize == 4);
}

NM_FALLBACK void h_ret(nm_cpu *c, const nm_insn *i)
{
    uint32_t target = pop(c, i->opsize);
    if (i->imm) esp_add(c, i->imm);
    jump_to(c, target, i->opsize);
}

void h_ret_far(nm_cpu *c, const nm_insn *i)
{
    cpu_ret_far(c, i->opsize == 4, (uint16_t)i->imm);
}
void h_iret(nm_cpu *c, const nm_insn *i)
{
    cpu_iret(c, i->opsize == 4);
}

void h_int(nm_cpu *c, const nm_insn *i)
{
    /* INT n (CD ib, also CD 03) in virtual-8086 mode is IOPL-sensitive:
     * #GP(0) with IOPL < 3 (SDM vol. 3A, 20.2.7 and 20.3.3; no VME).  INT3
     * (CC) and INTO are not: "the virtual-8086 mode IOPL checks do not
     * occur" (SDM vol. 2, INT n/INTO/INT3), they go through the IDT. */
    if (c->vm86 && iopl(c) < 3) cpu_raise(c, NM_EXC_GP, 0);
    cpu_interrupt(c, i->imm & 0xff, NM_INT_SOFTWARE, false, 0, c->eip);
}
void h_int3(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    cpu_interrupt(c, NM_EXC_BP, NM_INT_SOFTWARE, false, 0, c->eip);
}
void h_into(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    if (flags_of(c)) cpu_interrupt(c, NM_EXC_OF, NM_INT_SOFTWARE, false, 0, c->eip);
}
void h_icebp(nm_cpu *c, const nm_insn *i)
{
    (void)i;
    cpu_interrupt(c, NM_EXC_DB, NM_INT_SOFTWARE_ICEBP, false, 0, c->eip);
}

/* LOOP*: the count register is CX or ECX by address size. */
static bool loop_dec(nm_cpu *c, const nm_insn *i)
{
    if (i->addr32) return --c->gpr[NM_ECX] != 0;
    uint32_t cx = (c->gpr[NM_ECX] - 1) & 0xffff;
    c->gpr[NM_ECX] = (c->gpr[NM_ECX] & 0xffff0000u) | cx;
    return cx != 0;
}
void h_loop(nm_cpu *c, const nm_insn *i)
{
    if (loop_dec(c, i)) jump_to(c, c->eip + i->disp, i->opsize);
}
void h_loope(nm_cpu *c, const nm_insn *i)
{
    if (loop_dec(c, i) && flags_zf(c)) jump_to(c, c->eip + i->disp, i->opsize);
}
void h_loopne(nm_cpu *c, const nm_insn *i)
{
    if (loop_dec(c, i) && !flags_zf(c)) jump_to(c, c->eip + i->disp, i->opsize);
}
void h_jcxz(nm_cpu *c, const nm_insn *i)
{
    uint32_t n = i->addr32 ? c->gpr[NM_ECX] : c->gpr[NM_ECX] & 0xffff;
    if (n == 0) jump_to(c, c->eip + i->disp, i->opsize);
}

void h_bound(nm_cpu *c, const nm_insn *i)
{
    unsigned sz = i->opsize;
    uint32_t ea = insn_ea(c, i);
    uint32_t ea2 = ea + sz;
    if (!i->addr32) ea2 &= 0xffff;
    int32_t lo, hi, v;
    if (sz == 2) {
        lo = (int16_t)mem_read(c, i->seg, ea, 2);
        hi = (int16_t)mem_read(c, i->seg, ea2, 2);
        v = (int16_t)c->gpr[i->reg];
    } else {
        lo = (int32_t)mem_read(c, i->seg, ea, 4);
        hi = (int32_t)mem_read(c, i->seg, ea2, 4);
        v = (int32_t)c->gpr[i->reg];
    }
    if (v < lo || v > hi) cpu_raise(c, NM_EXC_BR, 0);
}

/* ---- specialised forms (exec_specialise): 32-bit operands ---- */

static inline void jump32(nm_cpu *c, uint32_t target)
{
    if (unlikely(target > c->seg[NM_CS].limit)) cpu_raise(c, NM_EXC_GP, 0);
    c->eip = target;
}

#define JCC32(cc)                                                                                  \
    static void h_jcc32_##cc(nm_cpu *c, const nm_insn *i)                                          \
    {                                                                                              \
        if (flags_cond_fast(c, cc)) jump32(c, c->eip + i->disp);                                   \
    }
JCC32(0)
JCC32(1)
JCC32(2)
JCC32(3)
JCC32(4)
JCC32(5)
JCC32(6)
JCC32(7)
JCC32(8)
JCC32(9)
JCC32(10)
JCC32(11)
JCC32(12)
JCC32(13)
JCC32(14)
JCC32(15)
static const nm_handler h_jcc32[16] = {
    h_jcc32_0, h_jcc32_1, h_jcc32_2,  h_jcc32_3,  h_jcc32_4,  h_jcc32_5,  h_jcc32_6,  h_jcc32_7,
    h_jcc32_8, h_jcc32_9, h_jcc32_10, h_jcc32_11, h_jcc32_12, h_jcc32_13, h_jcc32_14, h_jcc32_15,
};

static void h_jmp_rel32(nm_cpu *c, const nm_insn *i)
{
    jump32(c, c->eip + i->disp);
}
static void h_jmp_r32(nm_cpu *c, const nm_insn *i)
{
    jump32(c, c->gpr[i->rm]);
}

/* CALL with a 32-bit stack whose push takes the fast path: call_near's
 * steps; false (nothing done) otherwise. */
static inline bool call32_fast(nm_cpu *c, uint32_t target)
{
    if (unlikely(target > c->seg[NM_CS].limit || !c->stack32)) return false;
    uint32_t esp = c->gpr[NM_ESP] - 4;
    uint8_t *p = mem_access_ptr(c, NM_SS, esp, 4, false);
    if (unlikely(p == NULL)) return false;
    host_put(p, c->eip, 4);
    c->gpr[NM_ESP] = esp;
    c->eip = target;
    return true;
}
static void h_call_rel32(nm_cpu *c, const nm_insn *i)
{
    if (unlikely(!call32_fast(c, c->eip + i->disp))) h_call_rel(c, i);
}
static void h_call_r32(nm_cpu *c, const nm_insn *i)
{
    if (unlikely(!call32_fast(c, c->gpr[i->rm]))) h_call_E(c, i);
}
static void h_call_M32(nm_cpu *c, const nm_insn *i)
{
    uint32_t target;
    const uint16_t mark = hook_log_mark(c);
    if (unlikely(!mem_read_fast_as(c, i->seg, insn_ea(c, i), 4, &target, false) ||
                 !call32_fast(c, target))) {
        hook_log_undo(c, mark); /* (the target's read, done again there) */
        h_call_E(c, i);
    }
}
/* Through a base register and a displacement (a function pointer in a
 * structure). */
static void h_call_mb32(nm_cpu *c, const nm_insn *i)
{
    uint32_t target;
    const uint16_t mark = hook_log_mark(c);
    if (unlikely(!mem_read_fast_as(c, i->seg, insn_ea_b32(c, i), 4, &target, false) ||
                 !call32_fast(c, target))) {
        hook_log_undo(c, mark);
        h_call_E(c, i);
    }
}
static void h_ret32(nm_cpu *c, const nm_insn *i)
{
    uint32_t esp = c->gpr[NM_ESP], target;
    const uint16_t mark = hook_log_mark(c);
    if (likely(c->stack32 && mem_read_fast_as(c, NM_SS, esp, 4, &target, false) &&
               target <= c->seg[NM_CS].limit)) {
        c->gpr[NM_ESP] = esp + 4;
        c->eip = target;
    } else {
        hook_log_undo(c, mark); /* (the return address's read, done again there) */
        h_ret(c, i);
    }
}
/* PUSH and POP with a 32-bit stack: the fast half, else the general
 * handler. */
static void h_push_r32(nm_cpu *c, const nm_insn *i)
{
    uint32_t esp = c->gpr[NM_ESP] - 4;
    uint8_t *p = c->stack32 ? mem_access_ptr(c, NM_SS, esp, 4, false) : NULL;
    if (likely(p != NULL)) {
        host_put(p, c->gpr[i->rm], 4);
        c->gpr[NM_ESP] = esp;
    } else {
        h_push_E(c, i);
    }
}
static void h_push_i32(nm_cpu *c, const nm_insn *i)
{
    uint32_t esp = c->gpr[NM_ESP] - 4;
    uint8_t *p = c->stack32 ? mem_access_ptr(c, NM_SS, esp, 4, false) : NULL;
    if (likely(p != NULL)) {
        host_put(p, i->imm, 4);
        c->gpr[NM_ESP] = esp;
    } else {
        h_push_I(c, i);
    }
}
static void h_pop_r32(nm_cpu *c, const nm_insn *i)
{
    uint32_t esp = c->gpr[NM_ESP], v;
    if (likely(c->stack32 && mem_read_fast(c, NM_SS, esp, 4, &v))) {
        c->gpr[NM_ESP] = esp + 4;
        c->gpr[i->rm] = v;
    } else {
        h_pop_E(c, i);
    }
}

/* Inside a run of the uncosted loop (ic_entry.run_fn), where EIP is not
 * kept: the condition only, and a jump noted for the loop, which moves EIP
 * to the target (cpu.c). */
#define JCC32_RUN(cc)                                                                              \
    static void h_jcc32_run_##cc(nm_cpu *c, const nm_insn *i)                                      \
    {                                                                                              \
        (void)i;                                                                                   \
        if (flags_cond_fast(c, cc)) c->fast_exit |= NM_FAST_TAKEN;                                 \
    }
JCC32_RUN(0)
JCC32_RUN(1)
JCC32_RUN(2)
JCC32_RUN(3)
JCC32_RUN(4)
JCC32_RUN(5)
JCC32_RUN(6)
JCC32_RUN(7)
JCC32_RUN(8)
JCC32_RUN(9)
JCC32_RUN(10)
JCC32_RUN(11)
JCC32_RUN(12)
JCC32_RUN(13)
JCC32_RUN(14)
JCC32_RUN(15)
static const nm_handler h_jcc32_run[16] = {
    h_jcc32_run_0,  h_jcc32_run_1,  h_jcc32_run_2,  h_jcc32_run_3,  h_jcc32_run_4,  h_jcc32_run_5,
    h_jcc32_run_6,  h_jcc32_run_7,  h_jcc32_run_8,  h_jcc32_run_9,  h_jcc32_run_10, h_jcc32_run_11,
    h_jcc32_run_12, h_jcc32_run_13, h_jcc32_run_14, h_jcc32_run_15,
};

nm_handler exec_run_handler(const nm_insn *i, bool code32)
{
    if (!i->sync) return i->fn;
    /* A forward one only: a backward Jcc mostly closes a loop and jumps,
     * and a jump inside a run costs more than one at its end.  (In 32-bit
     * code the target is EIP after it plus the displacement, unmasked, as
     * h_jcc32 computes it.) */
    if (code32 && i->op == NM_OP_JCC && i->fn == h_jcc32[i->cond & 15] && (int32_t)i->disp >= 0)
        return h_jcc32_run[i->cond & 15];
    return NULL;
}

nm_handler exec_control_specialise(const nm_insn *i)
{
    if (i->opsize != 4) return NULL;
    if (i->fn == h_jcc) return h_jcc32[i->cond & 15];
    if (i->fn == h_jmp_rel) return h_jmp_rel32;
    if (i->fn == h_call_rel) return h_call_rel32;
    if (i->fn == h_ret && i->imm == 0) return h_ret32;
    if (i->fn == h_call_E) {
        if (i->mod == 3) return h_call_r32;
        bool b = i->addr32 && i->base != NM_REG_NONE && i->index == NM_REG_NONE;
        return b ? h_call_mb32 : h_call_M32;
    }
    if (i->fn == h_jmp_E && i->mod == 3) return h_jmp_r32;
    if (i->fn == h_push_E && i->mod == 3) return h_push_r32;
    if (i->fn == h_push_I) return h_push_i32;
    if (i->fn == h_pop_E && i->mod == 3) return h_pop_r32;
    return NULL;
}
