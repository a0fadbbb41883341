/* Entry, exception stubs, fault recovery and ring-3 entry for the
 * bare-metal tests. */
    .section .text.start, "ax"
    .globl _start
_start:
    cli
    mov $boot_stack_top, %esp
    call bm_main
1:  cli
    hlt
    jmp 1b

    .text
/* Exception stubs: vectors with an error code push none of their own. */
.macro EXC n, haserr
    .globl exc\n
exc\n:
    .if \haserr == 0
    pushl $0
    .endif
    pushl $\n
    jmp exc_common
.endm
    EXC 0,0
    EXC 1,0
    EXC 2,0
    EXC 3,0
    EXC 4,0
    EXC 5,0
    EXC 6,0
    EXC 7,0
    EXC 8,1
    EXC 9,0
    EXC 10,1
    EXC 11,1
    EXC 12,1
    EXC 13,1
    EXC 14,1
    EXC 15,0
    EXC 16,0
    EXC 17,1
    EXC 18,0
    EXC 19,0
    EXC 0x81,0

exc_common:
    push %ds
    push %es
    pusha
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    push %esp
    call exc_c
    add $4, %esp
    popa
    pop %es
    pop %ds
    add $8, %esp
    iret

/* INT 0x80 from ring 3: C sees the frame and may change EAX. */
    .globl isr80
isr80:
    pushl $0
    pushl $0x80
    push %ds
    push %es
    pusha
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    push %esp
    call isr80_c
    add $4, %esp
    popa
    pop %es
    pop %ds
    add $8, %esp
    iret

/* int catch_call(void (*fn)(void)) */
    .globl catch_call
catch_call:
    push %ebp
    push %ebx
    push %esi
    push %edi
    mov %esp, recover_esp
    movl $1, catch_active
    call *20(%esp)
    movl $0, catch_active
    mov $-1, %eax
catch_out:
    pop %edi
    pop %esi
    pop %ebx
    pop %ebp
    ret

/* Called by exc_c: abandon the faulting code, return from catch_call. */
    .globl catch_recover
catch_recover:
    movl $0, catch_active
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %fs
    mov %ax, %gs
    mov %ax, %ss
    mov recover_esp, %esp
    mov last_vector, %eax
    jmp catch_out

/* Ring-3 excursion: DS/ES hold the ring-0 data segment, which IRET to an
 * outer level must null. */
    .globl enter_user
enter_user:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    pushl $0x23
    pushl $user_stack+8192
    pushfl
    andl $~0x200, (%esp)
    pushl $0x1b
    pushl $user_entry
    iret
user_entry:
    mov %ds, %eax
    mov %es, %ebx
    mov $0x23, %ecx
    mov %ecx, %ds
    mov %ecx, %es
    mov %eax, user_ds_seen
    mov %ebx, user_es_seen
    call *user_fn
    int $0x81
1:  jmp 1b

/* Call gate targets (ring 0), reached from ring 3 with two parameters. */
    .globl cg_target
cg_target:
    mov %esp, cg_esp
    mov 0(%esp), %eax
    mov %eax, cg_frame
    mov 4(%esp), %eax
    mov %eax, cg_frame+4
    mov 8(%esp), %eax
    mov %eax, cg_frame+8
    mov 12(%esp), %eax
    mov %eax, cg_frame+12
    mov 16(%esp), %eax
    mov %eax, cg_frame+16
    mov 20(%esp), %eax
    mov %eax, cg_frame+20
    mov %cs, %eax
    mov %eax, cg_cs
    mov $0x777, %eax
    lret $8


    .bss
    .balign 16
    .space 16384
    .globl boot_stack_top
boot_stack_top:
    .section .note.GNU-stack,"",@progbits
