/* Task switches: CALL to a TSS and IRET back through the back link (NT),
 * busy bits, CR0.TS; a double fault (#NP while delivering #GP) handled by a
 * task gate, whose task returns with IRET. */
#include "bm.h"

static struct tss df_tss __attribute__((aligned(16)));
static struct tss t2_tss __attribute__((aligned(16)));
static uint8_t df_stack[4096] __attribute__((aligned(16)));
static uint8_t t2_stack[4096] __attribute__((aligned(16)));
volatile uint32_t df_runs, df_err, df_link, df_main_type, df_eflags, df_own_type;
volatile uint32_t t2_runs, t2_link, t2_eflags, t2_main_type, t2_own_type;
volatile uint32_t t2_eax_in, main_eax_after;

static unsigned desc_type(uint16_t sel)
{
    return (unsigned)(gdt[sel >> 3] >> 40) & 0xf;
}

/* Runs in the #DF task: the error code is on its stack. */
void df_c(uint32_t err)
{
    df_runs++;
    df_err = err;
    df_link = df_tss.link;
    df_main_type = desc_type(SEL_TSS);
    df_own_type = desc_type(SEL_DFTSS);
    uint32_t fl;
    __asm__ volatile("pushfl; popl %0" : "=r"(fl));
    df_eflags = fl;
    /* Resume the interrupted task past the fault. */
    extern char df_resume[];
    main_tss.eip = (uint32_t)df_resume;
}

void t2_c(void)
{
    t2_runs++;
    t2_link = t2_tss.link;
    t2_main_type = desc_type(SEL_TSS);
    t2_own_type = desc_type(SEL_TSS2);
    uint32_t fl;
    __asm__ volatile("pushfl; popl %0" : "=r"(fl));
    t2_eflags = fl;
}

__asm__(".text\n"
        "df_entry:\n"
        "   call df_c\n" /* the error code is df_c's argument */
        "   add $4, %esp\n"
        "   iret\n"
        "   jmp df_entry\n"
        "t2_entry:\n"
        "   mov %eax, t2_eax_in\n"
        "   call t2_c\n"
        "   iret\n"
        "   jmp t2_entry\n"
        /* int trigger_df(void): 1 if the #DF task resumed us. */
        "trigger_df:\n"
        "   mov $0x400, %ax\n"
        "   mov %ax, %ds\n"
        "   xor %eax, %eax\n"
        "   ret\n"
        ".globl df_resume\n"
        "df_resume:\n"
        "   mov $0x10, %ax\n"
        "   mov %ax, %ds\n"
        "   mov $1, %eax\n"
        "   ret\n");
extern char df_entry[], t2_entry[];
int trigger_df(void);

static void init_task(struct tss *t, void *entry, uint8_t *stack, unsigned size)
{
    t->eip = (uint32_t)entry;
    t->esp = (uint32_t)(stack + size);
    t->eflags = 2;
    t->cs = SEL_KCODE;
    t->ss = t->ds = t->es = t->fs = t->gs = SEL_KDATA;
    t->cr3 = read_cr3();
    t->iomap = 104;
}

static void call_task2(void)
{
    uint32_t a = 0x5a5a;
    __asm__ volatile("lcall $0x38, $0" : "+a"(a)::"memory", "ecx", "edx", "ebx", "esi", "edi");
    main_eax_after = a;
}

void test_main(void)
{
    init_task(&t2_tss, t2_entry, t2_stack, sizeof t2_stack);
    t2_tss.eax = 0x600d;
    tss_set(SEL_TSS2, &t2_tss, 103);
    write_cr0(read_cr0() & ~8u);
    check_eq("call_tss_returns", (uint32_t)catch_call(call_task2), (uint32_t)-1);
    check_eq("task2_ran", t2_runs, 1);
    check_eq("task2_eax_from_tss", t2_eax_in, 0x600d);
    check_eq("main_eax_restored", main_eax_after, 0x5a5a);
    check_eq("task2_back_link", t2_link, SEL_TSS);
    check("task2_nt_set", t2_eflags & 0x4000);
    check_eq("task2_old_busy", t2_main_type, 0xb);
    check_eq("task2_own_busy", t2_own_type, 0xb);
    check_eq("task2_not_busy_after_iret", desc_type(SEL_TSS2), 0x9);
    check_eq("main_still_busy", desc_type(SEL_TSS), 0xb);
    check("cr0_ts_set_by_switch", read_cr0() & 8u);
    __asm__ volatile("clts");
    check("clts", !(read_cr0() & 8u));
    uint32_t fl;
    __asm__ volatile("pushfl; popl %0" : "=r"(fl));
    check("main_nt_clear", !(fl & 0x4000));
    /* Again: the task resumes after its IRET. */
    catch_call(call_task2);
    check_eq("task2_second_call", t2_runs, 2);

    /* #DF through a task gate: IDT[13] not present, then a #GP. */
    init_task(&df_tss, df_entry, df_stack, sizeof df_stack);
    tss_set(SEL_DFTSS, &df_tss, 103);
    gate_set(idt, 8, SEL_DFTSS, 0, 0x85, 0); /* task gate */
    uint64_t gp_gate = idt[13];
    idt[13] &= ~(1ull << 47);
    int r = trigger_df();
    idt[13] = gp_gate;
    check_eq("df_task_resumed", (uint32_t)r, 1);
    check_eq("df_task_ran", df_runs, 1);
    check_eq("df_error_code", df_err, 0);
    check_eq("df_back_link", df_link, SEL_TSS);
    check_eq("df_old_task_busy", df_main_type, 0xb);
    check_eq("df_own_busy", df_own_type, 0xb);
    check("df_nt_set", df_eflags & 0x4000);
    check_eq("df_tss_free_after", desc_type(SEL_DFTSS), 0x9);
    idt[13] &= ~(1ull << 47);
    r = trigger_df();
    idt[13] = gp_gate;
    check_eq("df_second_time", (uint32_t)r + df_runs, 1 + 2);
}
