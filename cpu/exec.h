/* The instruction handlers: one per instruction (or small family), the
 * decoder stores a pointer to one in each nm_insn.  Sizes, operand kinds and
 * group sub-operations come from the decoded fields. */
#ifndef NICEMU_CPU_EXEC_H
#define NICEMU_CPU_EXEC_H

#include "cpu/core.h"

#define H(name) void name(nm_cpu *c, const nm_insn *i)

/* On a general handler that a specialised one falls back to: kept out of
 * line, so that the specialised one stays a leaf with a tail call. */
#define NM_FALLBACK __attribute__((noinline))

/* exec_alu.c: the eight ALU operations in three forms (index = opcode>>3 /
 * group sub-op), TEST, INC/DEC/NEG/NOT, moves, exchanges. */
extern const nm_handler h_alu_EG[8], h_alu_GE[8], h_alu_EI[8];
H(h_test_EG);
H(h_test_EI);
H(h_inc);
H(h_dec);
H(h_neg);
H(h_not);
H(h_mov_EG);
H(h_mov_GE);
H(h_mov_EI);
H(h_movzx8);
H(h_movzx16);
H(h_movsx8);
H(h_movsx16);
H(h_lea);
H(h_xchg);
H(h_xadd);
H(h_cmpxchg);
H(h_cmpxchg8b);
H(h_bswap);
H(h_cbw);
H(h_cwd);
H(h_lahf);
H(h_sahf);
H(h_xlat);
H(h_salc);
H(h_nop);
/* The decoder's last step: the handler specialised for the decoded form
 * when there is one (same semantics; sizes, operand kinds and the
 * addressing form folded at compile time); exec_alu.c asks the other
 * files for theirs (NULL: none). */
nm_handler exec_specialise(const nm_insn *i);
nm_handler exec_control_specialise(const nm_insn *i);
nm_handler exec_shift_specialise(const nm_insn *i);

/* exec_shift.c */
H(h_shift);
H(h_shift_d);
H(h_shld);
H(h_shrd);

/* exec_muldiv.c */
H(h_mul);
H(h_imul1);
H(h_div);
H(h_idiv);
H(h_imul2);
H(h_imul3);

/* exec_bcd.c */
H(h_daa);
H(h_das);
H(h_aaa);
H(h_aas);
H(h_aam);
H(h_aad);

/* exec_bit.c */
H(h_bt_G);
H(h_bt_I);
H(h_bsf);
H(h_bsr);
H(h_setcc);

/* exec_string.c */
H(h_movs);
H(h_cmps);
H(h_scas);
H(h_lods);
H(h_stos);
H(h_ins);
H(h_outs);

/* exec_control.c: stack and control transfer */
H(h_push_E);
H(h_push_I);
H(h_pop_E);
H(h_push_sreg);
H(h_pop_sreg);
H(h_pusha);
H(h_popa);
H(h_pushf);
H(h_popf);
H(h_enter);
H(h_leave);
H(h_jcc);
H(h_jmp_rel);
H(h_jmp_E);
H(h_jmp_far);
H(h_jmp_far_M);
H(h_call_rel);
H(h_call_E);
H(h_call_far);
H(h_call_far_M);
H(h_ret);
H(h_ret_far);
H(h_iret);
H(h_int);
H(h_int3);
H(h_into);
H(h_icebp);
H(h_loop);
H(h_loope);
H(h_loopne);
H(h_jcxz);
H(h_bound);

/* exec_misc.c: segment loads, I/O, flags, processor control, system */
H(h_mov_to_sreg);
H(h_mov_from_sreg);
H(h_load_far_ptr);
H(h_in);
H(h_out);
H(h_hlt);
H(h_cli);
H(h_sti);
H(h_clc);
H(h_stc);
H(h_cmc);
H(h_cld);
H(h_std);
H(h_wait);
/* cpu/fpu.c: every D8-DF instruction, and their decoding (the ID and the
 * memory operand's size from the opcode byte and ModRM). */
H(h_fpu);
void fpu_decode(nm_insn *i);
H(h_ud);
H(h_sldt);
H(h_str);
H(h_lldt);
H(h_ltr);
H(h_verr);
H(h_verw);
H(h_sgdt);
H(h_sidt);
H(h_lgdt);
H(h_lidt);
H(h_smsw);
H(h_lmsw);
H(h_invlpg);
H(h_lar);
H(h_lsl);
H(h_arpl);
H(h_clts);
H(h_invd);
H(h_wbinvd);
H(h_cpuid);
H(h_rdtsc);
H(h_rdmsr);
H(h_wrmsr);
H(h_mov_to_cr);
H(h_mov_from_cr);
H(h_mov_to_dr);
H(h_mov_from_dr);

#undef H
#endif
