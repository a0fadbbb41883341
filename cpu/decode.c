/* The decoder: prefixes, one- and two-byte opcode maps of the 486 and
 * Pentium, ModRM/SIB in 16- and 32-bit addressing (SDM vol. 2, chapter 2
 * and appendix A).  It turns bytes into an nm_insn with a handler; the
 * interpreter never looks at instruction bytes again. */
#include "cpu/decode.h"

#include "cpu/exec.h"

uint32_t access_fetch_byte(nm_cpu *c, uint32_t lin);

static const struct {
    const char *name;
    unsigned flags;
} opcode_info[NM_OP_COUNT] = {
#define NM_OPCODE(id, nm, fl) [NM_OP_##id] = {nm, fl},
#include "cpu/opcodes.def"
#undef NM_OPCODE
};

/* The instructions that change only general registers, arithmetic flags,
 * DF, EIP (near transfers) and memory through the core's access functions:
 * after one of them, whatever the uncosted run loop checks (INTR, the
 * interrupt shadow, TF, the mode and fetch page, events, a stop) can have
 * changed only through a slow memory access, which sets cpu->fast_exit.
 * Every other instruction gets NM_SYNC_CHECK. */
static const bool op_pure[NM_OP_COUNT] = {
#define P(id) [NM_OP_##id] = true
    P(ADD),   P(OR),    P(ADC),  P(SBB),           P(AND),       P(SUB),    P(XOR),   P(CMP),
    P(TEST),  P(INC),   P(DEC),  P(NEG),           P(NOT),       P(MOV),    P(MOVSX), P(MOVZX),
    P(LEA),   P(XCHG),  P(XADD), P(CMPXCHG),       P(CMPXCHG8B), P(BSWAP),  P(CBW),   P(CWD),
    P(LAHF),  P(SAHF),  P(XLAT), P(PUSH),          P(POP),       P(PUSHA),  P(POPA),  P(PUSHF),
    P(ENTER), P(LEAVE), P(ROL),  P(ROR),           P(RCL),       P(RCR),    P(SHL),   P(SHR),
    P(SAR),   P(SHLD),  P(SHRD), P(MUL),           P(IMUL),      P(IMUL2),  P(IMUL3), P(DIV),
    P(IDIV),  P(DAA),   P(DAS),  P(AAA),           P(AAS),       P(AAM),    P(AAD),   P(SALC),
    P(BT),    P(BTS),   P(BTR),  P(BTC),           P(BSF),       P(BSR),    P(SETCC), P(JCC),
    P(JMP),   P(CALL),  P(RET),  P(LOOP),          P(LOOPE),     P(LOOPNE), P(JCXZ),  P(BOUND),
    P(MOVS),  P(CMPS),  P(SCAS), P(LODS),          P(STOS),      P(NOP),    P(CLC),   P(STC),
    P(CMC),   P(CLD),   P(STD),  P(MOV_FROM_SREG), P(PUSH_SREG),
#undef P
};

const char *nm_opcode_name(unsigned op)
{
    return op < NM_OP_COUNT ? opcode_info[op].name : "?";
}
unsigned nm_opcode_flags(unsigned op)
{
    return op < NM_OP_COUNT ? opcode_info[op].flags : 0;
}

typedef struct {
    nm_cpu *c;
    uint32_t lin;
    unsigned pos;
    const uint8_t *host; /* first page's bytes from lin (NULL: fetch through memmap) */
    unsigned page_left;  /* bytes of the first page from lin */
    bool cacheable;
    int seg_override; /* -1: none */
} dctx;

static uint32_t fetch8(dctx *d)
{
    /* SDM vol. 3A, 6.15: an instruction longer than 15 bytes raises #GP(0). */
    if (d->pos >= 15) cpu_raise(d->c, NM_EXC_GP, 0);
    unsigned p = d->pos++;
    if (p < d->page_left && d->host) return d->host[p];
    if (p >= d->page_left) d->cacheable = false;
    return access_fetch_byte(d->c, d->lin + p);
}
static uint32_t fetch16(dctx *d)
{
    uint32_t lo = fetch8(d);
    return lo | fetch8(d) << 8;
}
static uint32_t fetch32(dctx *d)
{
    uint32_t lo = fetch16(d);
    return lo | fetch16(d) << 16;
}
static uint32_t fetch_imm(dctx *d, unsigned size)
{
    return size == 1 ? fetch8(d) : size == 2 ? fetch16(d) : fetch32(d);
}
/* An 8-bit immediate sign-extended to the operand size. */
static uint32_t fetch_simm8(dctx *d, unsigned size)
{
    return (uint32_t)(int32_t)(int8_t)fetch8(d) & size_mask(size);
}

_Noreturn static void ud(dctx *d)
{
    cpu_raise(d->c, NM_EXC_UD, 0);
}

static void modrm(dctx *d, nm_insn *i)
{
    uint32_t b = fetch8(d);
    i->mod = b >> 6;
    i->reg = (b >> 3) & 7;
    i->rm = b & 7;
    i->base = i->index = NM_REG_NONE;
    i->scale = 0;
    i->disp = 0;
    if (i->mod == 3) return;
    bool ss = false;
    if (!i->addr32) {
        static const uint8_t base16[8] = {NM_EBX, NM_EBX, NM_EBP, NM_EBP,
                                          NM_ESI, NM_EDI, NM_EBP, NM_EBX};
        static const uint8_t index16[8] = {NM_ESI,      NM_EDI,      NM_ESI,      NM_EDI,
                                           NM_REG_NONE, NM_REG_NONE, NM_REG_NONE, NM_REG_NONE};
        if (i->mod == 0 && i->rm == 6) {
            i->disp = fetch16(d);
        } else {
            i->base = base16[i->rm];
            i->index = index16[i->rm];
            ss = i->base == NM_EBP;
            if (i->mod == 1)
                i->disp = (uint32_t)(int32_t)(int8_t)fetch8(d);
            else if (i->mod == 2)
                i->disp = fetch16(d);
        }
    } else {
        unsigned rm = i->rm;
        if (rm == 4) {
            uint32_t sib = fetch8(d);
            unsigned idx = (sib >> 3) & 7, base = sib & 7;
            i->scale = sib >> 6;
            if (idx != 4) i->index = (uint8_t)idx;
            if (base == 5 && i->mod == 0) {
                i->disp = fetch32(d);
            } else {
                i->base = (uint8_t)base;
                ss = base == NM_ESP || base == NM_EBP;
            }
            /* Index 100 is "none" (SDM vol. 2A, table 2-3), but the 386
             * applies a non-zero scale to the base instead (measured by
             * test386.asm's author; the 486 and Pentium follow the table). */
            if (idx == 4 && i->scale && i->base != NM_REG_NONE && cpu_is386(d->c)) {
                i->index = i->base;
                i->base = NM_REG_NONE;
            }
        } else if (rm == 5 && i->mod == 0) {
            i->disp = fetch32(d);
        } else {
            i->base = (uint8_t)rm;
            ss = rm == NM_EBP;
        }
        if (i->mod == 1)
            i->disp += (uint32_t)(int32_t)(int8_t)fetch8(d);
        else if (i->mod == 2)
            i->disp += fetch32(d);
    }
    i->seg = d->seg_override >= 0 ? (uint8_t)d->seg_override : ss ? NM_SS : NM_DS;
}

static uint8_t ekind(const nm_insn *i)
{
    return i->mod == 3 ? NM_OPK_REG : NM_OPK_MEM;
}

/* A register operand encoded in the opcode: looks like ModRM mod=3. */
static void reg_in_opcode(nm_insn *i, unsigned r)
{
    i->mod = 3;
    i->rm = (uint8_t)r;
    i->reg = (uint8_t)r;
    i->dst = NM_OPK_REG;
}

#define SET(id, h) (i->op = NM_OP_##id, i->fn = (h))
#define NEED_MEM()                                                                                 \
    do {                                                                                           \
        if (i->mod == 3) ud(d);                                                                    \
    } while (0)

static void decode_0f(dctx *d, nm_insn *i, unsigned osz)
{
    nm_cpu *c = d->c;
    unsigned b = fetch8(d);
    i->opcode = (uint8_t)b;
    i->prefixes |= NM_PFX_0F;
    switch (b) {
    case 0x00: /* group 6 */
        modrm(d, i);
        i->opsize = 2;
        i->dst = ekind(i);
        switch (i->reg) {
        case 0:
            SET(SLDT, h_sldt);
            i->opsize = (uint8_t)osz;
            break;
        case 1:
            SET(STR, h_str);
            i->opsize = (uint8_t)osz;
            break;
        case 2: SET(LLDT, h_lldt); break;
        case 3: SET(LTR, h_ltr); break;
        case 4: SET(VERR, h_verr); break;
        case 5: SET(VERW, h_verw); break;
        default: ud(d);
        }
        return;
    case 0x01: /* group 7 */
        modrm(d, i);
        i->dst = ekind(i);
        switch (i->reg) {
        case 0:
            NEED_MEM();
            SET(SGDT, h_sgdt);
            break;
        case 1:
            NEED_MEM();
            SET(SIDT, h_sidt);
            break;
        case 2:
            NEED_MEM();
            SET(LGDT, h_lgdt);
            break;
        case 3:
            NEED_MEM();
            SET(LIDT, h_lidt);
            break;
        case 4:
            SET(SMSW, h_smsw);
            if (i->mod != 3) i->opsize = 2;
            break;
        case 6:
            SET(LMSW, h_lmsw);
            i->opsize = 2;
            break;
        case 7:
            NEED_MEM();
            SET(INVLPG, h_invlpg);
            break;
        default: ud(d);
        }
        return;
    case 0x02:
        modrm(d, i);
        SET(LAR, h_lar);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0x03:
        modrm(d, i);
        SET(LSL, h_lsl);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0x06: SET(CLTS, h_clts); return;
    case 0x08: SET(INVD, h_invd); return;
    case 0x09: SET(WBINVD, h_wbinvd); return;
    case 0x0b: SET(UD2, h_ud); return;
    case 0x20:
    case 0x21:
    case 0x22:
    case 0x23:
        /* MOV to/from CRn/DRn: always 32-bit, mod is ignored (SDM vol. 2B). */
        modrm(d, i);
        i->mod = 3;
        i->opsize = 4;
        i->dst = i->src = NM_OPK_REG;
        if (b == 0x20)
            SET(MOV_FROM_CR, h_mov_from_cr);
        else if (b == 0x22)
            SET(MOV_TO_CR, h_mov_to_cr);
        else if (b == 0x21)
            SET(MOV_FROM_DR, h_mov_from_dr);
        else
            SET(MOV_TO_DR, h_mov_to_dr);
        if ((b == 0x20 || b == 0x22) && (i->reg == 1 || i->reg > 4)) ud(d);
        /* CR4 exists on the Pentium and on the 486s with CPUID (SL-enhanced: VME). */
        if ((b == 0x20 || b == 0x22) && i->reg == 4 && c->model->family < NM_CPU_PENTIUM &&
            !c->model->has_cpuid)
            ud(d);
        return;
    case 0x30: SET(WRMSR, h_wrmsr); return;
    case 0x31: SET(RDTSC, h_rdtsc); return;
    case 0x32: SET(RDMSR, h_rdmsr); return;
    case 0xa2:
        SET(CPUID, h_cpuid);
        if (!c->model->has_cpuid) ud(d);
        return;
    case 0xa0:
    case 0xa8:
        SET(PUSH_SREG, h_push_sreg);
        i->reg = b == 0xa0 ? NM_FS : NM_GS;
        i->src = NM_OPK_REG;
        return;
    case 0xa1:
    case 0xa9:
        SET(POP_SREG, h_pop_sreg);
        i->reg = b == 0xa1 ? NM_FS : NM_GS;
        i->dst = NM_OPK_REG;
        return;
    case 0xa3:
    case 0xab:
    case 0xb3:
    case 0xbb:
        modrm(d, i);
        i->cond = (uint8_t)((b >> 3) & 3); /* 0 BT, 1 BTS, 2 BTR, 3 BTC */
        i->op = (uint16_t)(NM_OP_BT + i->cond);
        i->fn = h_bt_G;
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0xba:
        modrm(d, i);
        if (i->reg < 4) ud(d);
        i->cond = (uint8_t)(i->reg - 4);
        i->op = (uint16_t)(NM_OP_BT + i->cond);
        i->fn = h_bt_I;
        i->imm = fetch8(d);
        i->dst = ekind(i);
        i->src = NM_OPK_IMM;
        return;
    case 0xa4:
    case 0xa5:
    case 0xac:
    case 0xad:
        modrm(d, i);
        if (b < 0xa8)
            SET(SHLD, h_shld);
        else
            SET(SHRD, h_shrd);
        i->dst = ekind(i);
        if (b & 1)
            i->src = NM_OPK_CL;
        else {
            i->src = NM_OPK_IMM;
            i->imm = fetch8(d);
        }
        return;
    case 0xaf:
        modrm(d, i);
        SET(IMUL2, h_imul2);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0xb0:
    case 0xb1:
        modrm(d, i);
        if (b == 0xb0) i->opsize = 1;
        SET(CMPXCHG, h_cmpxchg);
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0xc0:
    case 0xc1:
        modrm(d, i);
        if (b == 0xc0) i->opsize = 1;
        SET(XADD, h_xadd);
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0xb2:
    case 0xb4:
    case 0xb5:
        modrm(d, i);
        NEED_MEM();
        i->fn = h_load_far_ptr;
        i->cond = b == 0xb2 ? NM_SS : b == 0xb4 ? NM_FS : NM_GS;
        i->op = b == 0xb2 ? NM_OP_LSS : b == 0xb4 ? NM_OP_LFS : NM_OP_LGS;
        i->dst = NM_OPK_REG;
        i->src = NM_OPK_MEM;
        return;
    case 0xb6:
    case 0xb7:
    case 0xbe:
    case 0xbf:
        modrm(d, i);
        if (b & 8) {
            SET(MOVSX, (b & 1) ? h_movsx16 : h_movsx8);
        } else {
            SET(MOVZX, (b & 1) ? h_movzx16 : h_movzx8);
        }
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0xbc:
        modrm(d, i);
        SET(BSF, h_bsf);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0xbd:
        modrm(d, i);
        SET(BSR, h_bsr);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0xc7:
        modrm(d, i);
        if (i->reg != 1 || i->mod == 3) ud(d);
        SET(CMPXCHG8B, h_cmpxchg8b);
        i->dst = NM_OPK_MEM;
        return;
    default: break;
    }
    if (b >= 0x80 && b <= 0x8f) {
        SET(JCC, h_jcc);
        i->cond = b & 15;
        i->disp = osz == 4 ? fetch32(d) : (uint32_t)(int32_t)(int16_t)fetch16(d);
        i->src = NM_OPK_IMM;
        return;
    }
    if (b >= 0x90 && b <= 0x9f) {
        modrm(d, i);
        SET(SETCC, h_setcc);
        i->cond = b & 15;
        i->opsize = 1;
        i->dst = ekind(i);
        return;
    }
    if (b >= 0xc8 && b <= 0xcf) {
        SET(BSWAP, h_bswap);
        reg_in_opcode(i, b & 7);
        return;
    }
    ud(d);
}

static void decode_main(dctx *d, nm_insn *i)
{
    nm_cpu *c = d->c;
    bool code32 = c->code32;
    unsigned b;
    /* Prefixes (SDM vol. 2A, 2.1.1); any number, in any order. */
    for (;;) {
        b = fetch8(d);
        switch (b) {
        case 0x26: d->seg_override = NM_ES; continue;
        case 0x2e: d->seg_override = NM_CS; continue;
        case 0x36: d->seg_override = NM_SS; continue;
        case 0x3e: d->seg_override = NM_DS; continue;
        case 0x64: d->seg_override = NM_FS; continue;
        case 0x65: d->seg_override = NM_GS; continue;
        case 0x66: i->prefixes |= NM_PFX_OPSIZE; continue;
        case 0x67: i->prefixes |= NM_PFX_ADSIZE; continue;
        case 0xf0: i->prefixes |= NM_PFX_LOCK; continue;
        case 0xf2: i->prefixes = (uint8_t)((i->prefixes & ~NM_PFX_REP) | NM_PFX_REPNE); continue;
        case 0xf3: i->prefixes = (uint8_t)((i->prefixes & ~NM_PFX_REPNE) | NM_PFX_REP); continue;
        default: break;
        }
        break;
    }
    if (d->seg_override >= 0) i->prefixes |= NM_PFX_SEG;
    unsigned osz = (code32 != !!(i->prefixes & NM_PFX_OPSIZE)) ? 4 : 2;
    i->addr32 = code32 != !!(i->prefixes & NM_PFX_ADSIZE);
    i->opsize = (uint8_t)osz;
    i->seg = d->seg_override >= 0 ? (uint8_t)d->seg_override : NM_DS;
    i->opcode = (uint8_t)b;
    i->base = i->index = NM_REG_NONE;

    if (b < 0x40 && (b & 7) < 6) { /* the eight ALU operations */
        unsigned op = b >> 3;
        i->op = (uint16_t)(NM_OP_ADD + op);
        if (!(b & 1)) i->opsize = 1;
        switch (b & 7) {
        case 0:
        case 1:
            modrm(d, i);
            i->fn = h_alu_EG[op];
            i->dst = ekind(i);
            i->src = NM_OPK_REG;
            break;
        case 2:
        case 3:
            modrm(d, i);
            i->fn = h_alu_GE[op];
            i->dst = NM_OPK_REG;
            i->src = ekind(i);
            break;
        default:
            reg_in_opcode(i, NM_EAX);
            i->fn = h_alu_EI[op];
            i->imm = fetch_imm(d, i->opsize);
            i->src = NM_OPK_IMM;
            break;
        }
        return;
    }
    if (b >= 0x40 && b <= 0x4f) {
        reg_in_opcode(i, b & 7);
        if (b < 0x48)
            SET(INC, h_inc);
        else
            SET(DEC, h_dec);
        return;
    }
    if (b >= 0x50 && b <= 0x57) {
        reg_in_opcode(i, b & 7);
        SET(PUSH, h_push_E);
        i->src = NM_OPK_REG;
        i->dst = 0;
        return;
    }
    if (b >= 0x58 && b <= 0x5f) {
        reg_in_opcode(i, b & 7);
        SET(POP, h_pop_E);
        return;
    }
    if (b >= 0x70 && b <= 0x7f) {
        SET(JCC, h_jcc);
        i->cond = b & 15;
        i->disp = (uint32_t)(int32_t)(int8_t)fetch8(d);
        i->src = NM_OPK_IMM;
        return;
    }
    if (b >= 0x91 && b <= 0x97) {
        reg_in_opcode(i, b & 7);
        i->reg = NM_EAX;
        SET(XCHG, h_xchg);
        i->src = NM_OPK_REG;
        return;
    }
    if (b >= 0xb0 && b <= 0xbf) {
        reg_in_opcode(i, b & 7);
        if (b < 0xb8) i->opsize = 1;
        SET(MOV, h_mov_EI);
        i->imm = fetch_imm(d, i->opsize);
        i->src = NM_OPK_IMM;
        return;
    }
    if (b >= 0xd8 && b <= 0xdf) { /* x87 escape (cpu/fpu.c) */
        modrm(d, i);
        i->opcode = (uint8_t)b;
        i->dst = ekind(i);
        fpu_decode(i);
        return;
    }

    switch (b) {
    case 0x06:
    case 0x0e:
    case 0x16:
    case 0x1e:
        SET(PUSH_SREG, h_push_sreg);
        i->reg = (uint8_t)(b >> 3);
        i->src = NM_OPK_REG;
        return;
    case 0x07:
    case 0x17:
    case 0x1f:
        SET(POP_SREG, h_pop_sreg);
        i->reg = (uint8_t)(b >> 3);
        i->dst = NM_OPK_REG;
        return;
    case 0x0f: decode_0f(d, i, osz); return;
    case 0x27: SET(DAA, h_daa); return;
    case 0x2f: SET(DAS, h_das); return;
    case 0x37: SET(AAA, h_aaa); return;
    case 0x3f: SET(AAS, h_aas); return;
    case 0x60: SET(PUSHA, h_pusha); return;
    case 0x61: SET(POPA, h_popa); return;
    case 0x62:
        modrm(d, i);
        NEED_MEM();
        SET(BOUND, h_bound);
        i->dst = NM_OPK_REG;
        i->src = NM_OPK_MEM;
        return;
    case 0x63:
        modrm(d, i);
        SET(ARPL, h_arpl);
        i->opsize = 2;
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0x68:
        SET(PUSH, h_push_I);
        i->imm = fetch_imm(d, osz);
        i->src = NM_OPK_IMM;
        return;
    case 0x6a:
        SET(PUSH, h_push_I);
        i->imm = fetch_simm8(d, osz);
        i->src = NM_OPK_IMM;
        return;
    case 0x69:
    case 0x6b:
        modrm(d, i);
        SET(IMUL3, h_imul3);
        i->imm = b == 0x69 ? fetch_imm(d, osz) : fetch_simm8(d, osz);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0x6c:
    case 0x6d:
        SET(INS, h_ins);
        if (b == 0x6c) i->opsize = 1;
        i->src = NM_OPK_CL;
        i->dst = NM_OPK_MEM;
        return;
    case 0x6e:
    case 0x6f:
        SET(OUTS, h_outs);
        if (b == 0x6e) i->opsize = 1;
        i->dst = NM_OPK_CL;
        i->src = NM_OPK_MEM;
        return;
    case 0x80:
    case 0x81:
    case 0x82:
    case 0x83:
        modrm(d, i);
        if (!(b & 1)) i->opsize = 1;
        i->op = (uint16_t)(NM_OP_ADD + i->reg);
        i->fn = h_alu_EI[i->reg];
        i->imm = b == 0x83 ? fetch_simm8(d, osz) : fetch_imm(d, i->opsize);
        i->dst = ekind(i);
        i->src = NM_OPK_IMM;
        return;
    case 0x84:
    case 0x85:
        modrm(d, i);
        if (b == 0x84) i->opsize = 1;
        SET(TEST, h_test_EG);
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0xa8:
    case 0xa9:
        reg_in_opcode(i, NM_EAX);
        if (b == 0xa8) i->opsize = 1;
        SET(TEST, h_test_EI);
        i->imm = fetch_imm(d, i->opsize);
        i->src = NM_OPK_IMM;
        return;
    case 0x86:
    case 0x87:
        modrm(d, i);
        if (b == 0x86) i->opsize = 1;
        SET(XCHG, h_xchg);
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0x88:
    case 0x89:
        modrm(d, i);
        if (b == 0x88) i->opsize = 1;
        SET(MOV, h_mov_EG);
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0x8a:
    case 0x8b:
        modrm(d, i);
        if (b == 0x8a) i->opsize = 1;
        SET(MOV, h_mov_GE);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0x8c:
        modrm(d, i);
        if (i->reg > NM_GS) ud(d);
        /* To memory always 16 bits; to a register, the operand size. */
        if (i->mod != 3) i->opsize = 2;
        SET(MOV_FROM_SREG, h_mov_from_sreg);
        i->dst = ekind(i);
        i->src = NM_OPK_REG;
        return;
    case 0x8e:
        modrm(d, i);
        if (i->reg > NM_GS || i->reg == NM_CS) ud(d);
        i->opsize = 2;
        SET(MOV_TO_SREG, h_mov_to_sreg);
        i->dst = NM_OPK_REG;
        i->src = ekind(i);
        return;
    case 0x8d:
        modrm(d, i);
        NEED_MEM();
        SET(LEA, h_lea);
        i->dst = NM_OPK_REG;
        i->src = NM_OPK_MEM;
        return;
    case 0x8f:
        modrm(d, i);
        if (i->reg) ud(d);
        SET(POP, h_pop_E);
        i->dst = ekind(i);
        return;
    case 0x90: SET(NOP, h_nop); return;
    case 0x98: SET(CBW, h_cbw); return;
    case 0x99: SET(CWD, h_cwd); return;
    case 0x9a:
    case 0xea:
        if (b == 0x9a)
            SET(CALL_FAR, h_call_far);
        else
            SET(JMP_FAR, h_jmp_far);
        i->imm = fetch_imm(d, osz);
        i->imm2 = fetch16(d);
        i->src = NM_OPK_IMM;
        return;
    case 0x9b: SET(WAIT, h_wait); return;
    case 0x9c: SET(PUSHF, h_pushf); return;
    case 0x9d: SET(POPF, h_popf); return;
    case 0x9e: SET(SAHF, h_sahf); return;
    case 0x9f: SET(LAHF, h_lahf); return;
    case 0xa0:
    case 0xa1:
    case 0xa2:
    case 0xa3:
        /* MOV with a direct offset (moffs): a ModRM-less memory operand. */
        i->mod = 0;
        i->reg = NM_EAX;
        i->disp = i->addr32 ? fetch32(d) : fetch16(d);
        if (!(b & 1)) i->opsize = 1;
        SET(MOV, b < 0xa2 ? h_mov_GE : h_mov_EG);
        i->dst = b < 0xa2 ? NM_OPK_REG : NM_OPK_MEM;
        i->src = b < 0xa2 ? NM_OPK_MEM : NM_OPK_REG;
        return;
    case 0xa4:
    case 0xa5: SET(MOVS, h_movs); break;
    case 0xa6:
    case 0xa7: SET(CMPS, h_cmps); break;
    case 0xaa:
    case 0xab: SET(STOS, h_stos); break;
    case 0xac:
    case 0xad: SET(LODS, h_lods); break;
    case 0xae:
    case 0xaf: SET(SCAS, h_scas); break;
    case 0xc0:
    case 0xc1:
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3:
        modrm(d, i);
        if (!(b & 1)) i->opsize = 1;
        i->cond = i->reg == 6 ? 4 : i->reg; /* SAL (/6) is SHL */
        i->op = (uint16_t)(NM_OP_ROL + i->cond);
        i->fn = h_shift;
        i->dst = ekind(i);
        if (b < 0xd0) {
            i->src = NM_OPK_IMM;
            i->imm = fetch8(d);
        } else if (b < 0xd2) {
            i->src = NM_OPK_ONE;
            i->imm = 1;
        } else
            i->src = NM_OPK_CL;
        return;
    case 0xc2:
        SET(RET, h_ret);
        i->imm = fetch16(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xc3: SET(RET, h_ret); return;
    case 0xca:
        SET(RET_FAR, h_ret_far);
        i->imm = fetch16(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xcb: SET(RET_FAR, h_ret_far); return;
    case 0xc4:
    case 0xc5:
        modrm(d, i);
        NEED_MEM();
        i->fn = h_load_far_ptr;
        i->cond = b == 0xc4 ? NM_ES : NM_DS;
        i->op = b == 0xc4 ? NM_OP_LES : NM_OP_LDS;
        i->dst = NM_OPK_REG;
        i->src = NM_OPK_MEM;
        return;
    case 0xc6:
    case 0xc7:
        modrm(d, i);
        if (i->reg) ud(d);
        if (b == 0xc6) i->opsize = 1;
        SET(MOV, h_mov_EI);
        i->imm = fetch_imm(d, i->opsize);
        i->dst = ekind(i);
        i->src = NM_OPK_IMM;
        return;
    case 0xc8:
        SET(ENTER, h_enter);
        i->imm = fetch16(d);
        i->imm2 = fetch8(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xc9: SET(LEAVE, h_leave); return;
    case 0xcc: SET(INT3, h_int3); return;
    case 0xcd:
        SET(INT, h_int);
        i->imm = fetch8(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xce: SET(INTO, h_into); return;
    case 0xcf: SET(IRET, h_iret); return;
    case 0xd4:
        SET(AAM, h_aam);
        i->imm = fetch8(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xd5:
        SET(AAD, h_aad);
        i->imm = fetch8(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xd6: SET(SALC, h_salc); return;
    case 0xd7:
        SET(XLAT, h_xlat);
        i->src = NM_OPK_MEM;
        return;
    case 0xe0: SET(LOOPNE, h_loopne); goto rel8;
    case 0xe1: SET(LOOPE, h_loope); goto rel8;
    case 0xe2: SET(LOOP, h_loop); goto rel8;
    case 0xe3: SET(JCXZ, h_jcxz); goto rel8;
    case 0xeb:
        SET(JMP, h_jmp_rel);
        goto rel8;
    rel8:
        i->disp = (uint32_t)(int32_t)(int8_t)fetch8(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xe8:
    case 0xe9:
        if (b == 0xe8)
            SET(CALL, h_call_rel);
        else
            SET(JMP, h_jmp_rel);
        i->disp = osz == 4 ? fetch32(d) : (uint32_t)(int32_t)(int16_t)fetch16(d);
        i->src = NM_OPK_IMM;
        return;
    case 0xe4:
    case 0xe5:
    case 0xe6:
    case 0xe7:
        if (!(b & 1)) i->opsize = 1;
        if (b < 0xe6) {
            SET(IN, h_in);
            i->dst = NM_OPK_REG;
            i->src = NM_OPK_IMM;
        } else {
            SET(OUT, h_out);
            i->dst = NM_OPK_IMM;
            i->src = NM_OPK_REG;
        }
        i->imm = fetch8(d);
        return;
    case 0xec:
    case 0xed:
    case 0xee:
    case 0xef:
        if (!(b & 1)) i->opsize = 1;
        if (b < 0xee) {
            SET(IN, h_in);
            i->dst = NM_OPK_REG;
            i->src = NM_OPK_CL;
        } else {
            SET(OUT, h_out);
            i->dst = NM_OPK_CL;
            i->src = NM_OPK_REG;
        }
        return;
    case 0xf1: SET(ICEBP, h_icebp); return;
    case 0xf4: SET(HLT, h_hlt); return;
    case 0xf5: SET(CMC, h_cmc); return;
    case 0xf6:
    case 0xf7:
        modrm(d, i);
        if (b == 0xf6) i->opsize = 1;
        i->dst = ekind(i);
        switch (i->reg) {
        case 0:
        case 1:
            SET(TEST, h_test_EI);
            i->imm = fetch_imm(d, i->opsize);
            i->src = NM_OPK_IMM;
            break;
        case 2: SET(NOT, h_not); break;
        case 3: SET(NEG, h_neg); break;
        case 4: SET(MUL, h_mul); break;
        case 5: SET(IMUL, h_imul1); break;
        case 6: SET(DIV, h_div); break;
        default: SET(IDIV, h_idiv); break;
        }
        return;
    case 0xf8: SET(CLC, h_clc); return;
    case 0xf9: SET(STC, h_stc); return;
    case 0xfa: SET(CLI, h_cli); return;
    case 0xfb: SET(STI, h_sti); return;
    case 0xfc: SET(CLD, h_cld); return;
    case 0xfd: SET(STD, h_std); return;
    case 0xfe:
        modrm(d, i);
        i->opsize = 1;
        i->dst = ekind(i);
        if (i->reg == 0)
            SET(INC, h_inc);
        else if (i->reg == 1)
            SET(DEC, h_dec);
        else
            ud(d);
        return;
    case 0xff:
        modrm(d, i);
        i->dst = ekind(i);
        switch (i->reg) {
        case 0: SET(INC, h_inc); break;
        case 1: SET(DEC, h_dec); break;
        case 2:
            SET(CALL, h_call_E);
            i->src = i->dst;
            i->dst = 0;
            break;
        case 3:
            NEED_MEM();
            SET(CALL_FAR, h_call_far_M);
            i->src = i->dst;
            i->dst = 0;
            break;
        case 4:
            SET(JMP, h_jmp_E);
            i->src = i->dst;
            i->dst = 0;
            break;
        case 5:
            NEED_MEM();
            SET(JMP_FAR, h_jmp_far_M);
            i->src = i->dst;
            i->dst = 0;
            break;
        case 6:
            SET(PUSH, h_push_E);
            i->src = i->dst;
            i->dst = 0;
            break;
        default: ud(d);
        }
        return;
    default: ud(d); /* 0x26.. prefixes never get here; what is left is undefined */
    }
    /* String instructions (A4-AF). */
    if (!(b & 1)) i->opsize = 1;
    i->dst = NM_OPK_MEM;
    i->src = NM_OPK_MEM;
}

/* nm_insn.sync (decode.h).  Of the pure instructions, END goes to the
 * control transfers (they read and move EIP), the string instructions (a
 * REP one restarts itself from its EIP) and the three that may fault after
 * they moved ESP: POP to memory (ESP moves before the store), PUSHA and
 * ENTER (several pushes).  Every other pure handler reads or writes all its
 * memory before it writes a register, and never reads EIP. */
static uint8_t sync_of(const nm_insn *i)
{
    if (!op_pure[i->op]) return NM_SYNC_END | NM_SYNC_CHECK;
    if ((i->opflags & (NM_OPF_BRANCH | NM_OPF_STRING)) || i->op == NM_OP_PUSHA ||
        i->op == NM_OP_ENTER || (i->op == NM_OP_POP && i->dst == NM_OPK_MEM))
        return NM_SYNC_END;
    return 0;
}

void nm_decode(nm_cpu *c, uint32_t lin, nm_insn *i, bool *cacheable)
{
    dctx d = {.c = c, .lin = lin, .seg_override = -1, .cacheable = true};
    uint32_t off = lin & 0xfff;
    d.page_left = 0x1000 - off;
    uint32_t phys = access_fetch_translate(c, lin);
    const uint8_t *host = nm_memmap_page_ptr(c->mem, phys, false);
    d.host = host ? host + off : NULL;
    if (!host) d.cacheable = false;
    memset(i, 0, sizeof *i);
    decode_main(&d, i);
    i->len = (uint8_t)d.pos;

    unsigned fl = opcode_info[i->op].flags;
    i->opflags = (uint8_t)fl;
    /* LOCK only on the listed read-modify-write instructions with a memory
     * destination (SDM vol. 2A, LOCK). */
    if ((i->prefixes & NM_PFX_LOCK) && (!(fl & NM_OPF_LOCK) || i->mod == 3 || i->dst != NM_OPK_MEM))
        cpu_raise(c, NM_EXC_UD, 0);
    if ((fl & NM_OPF_I586) && c->model->family < NM_CPU_PENTIUM) cpu_raise(c, NM_EXC_UD, 0);
    if ((fl & NM_OPF_I486) && c->model->family < NM_CPU_486 && c->strict_isa)
        cpu_raise(c, NM_EXC_UD, 0);
    i->fn = exec_specialise(i);
    i->sync = sync_of(i);
    *cacheable = d.cacheable;
}
