/* Two tasks on their own stacks and a call on a third stack, for the
 * per-task shadow stacks (tests/profile/check-tasks).
 *
 * Task A runs on 0x80000..0x82000, task B on 0x84000..0x86000 (8K blocks,
 * like Linux i386 kernel stacks).  sw switches like Linux's __switch_to_asm:
 * save ESP, load the other task's, RET on the other stack.  B starts from a
 * stack holding only b_entry's address (like a new task's first switch).
 * a3 calls work_i on 0x88000..0x8a000 like Linux's call_on_stack (IRQ
 * stacks): ESP := that stack's top, CALL, ESP := back.
 *
 *   _start: a1, a1                 a1: a2                    a3: work_i on its stack
 *   a2: a3, work_a, sw (to B), work_a
 *   b_entry: loop { b1 }           b1: work_b, sw (to A), work_b
 *
 * Run: A a1 a2 ... sw -> B b_entry b1 ... sw -> A ... a1 returns, a1 again,
 * a2 ... sw -> B (back in b1) ... b1 returns, b1 again ... sw -> A ... a1
 * returns; the window closes with B inside its second b1.
 *
 * Instructions (self / inclusive, per task: a task's frames do not count
 * while the other runs; a frame still open at the end counts what it ran):
 *   work_i  8 a call, 2 calls                                   16 / 16
 *   work_a 12 a call, 4 calls                                   48 / 48
 *   work_b 16 a call, 3 calls                                   48 / 48
 *   a3      5 a call (+ work_i)                                 10 / 26
 *   sw      mov, mov (switching out), ret (on the new stack):
 *           4 switches: 12; frames: 3 + 3 + 3 + 2 (B's last, open), B's
 *           first RET runs in no frame                          12 / 11
 *   a2      7 a call: 7 + 13 + 24 + 3 = 47 a call               14 / 94
 *   a1      2 a call: 2 + 47                                     4 / 98
 *   b1      first call 6 + 32 + 3, second (open) 4 + 16 + 2     10 / 63
 *   b_entry call b1, jmp, call b1                                3 / 0
 *   _start  the opening OUT, 2 calls, 2 MOVs before the closing OUT  5 / 0
 *   total 170.  One shadow stack for both tasks gets a1, a2, b1 and sw
 * wrong: A's frames stay open while B runs.  Assembly, so the counts do not
 * depend on gcc. */
    .set save_a, 0x7f000        /* where each task's ESP is kept while it waits */
    .set save_b, 0x7f004
    .text
    .globl _start
    .type _start, @function
_start:
    mov $0x82000, %esp
    movl $b_entry, 0x85ffc      /* B's stack: where its first switch returns */
    movl $0x85ffc, save_b
    mov $0x600, %dx
    mov $1, %al
    out %al, %dx                /* window opens: this OUT is inside */
    call a1
    call a1
    mov $0x600, %dx             /* (sw took EDX) */
    mov $0, %al
    out %al, %dx                /* window closes: this OUT is outside */
    mov $0, %al
    out %al, $0xf4              /* exit port: status 0 */
1:  hlt
    jmp 1b
    .size _start, . - _start

    .type a1, @function
a1:
    call a2
    ret
    .size a1, . - a1

    .type a2, @function
a2:
    call a3
    call work_a
    mov $save_a, %eax
    mov $save_b, %edx
    call sw
    call work_a
    ret
    .size a2, . - a2

    .type a3, @function
a3:
    mov %esp, %ebx
    mov $0x8a000, %esp          /* the top of 0x88000..0x8a000 */
    call work_i
    mov %ebx, %esp
    ret
    .size a3, . - a3

    /* Save ESP at (%eax), load it from (%edx), return on that stack. */
    .type sw, @function
sw:
    mov %esp, (%eax)
    mov (%edx), %esp
    ret
    .size sw, . - sw

    .type b_entry, @function
b_entry:
    call b1
    jmp b_entry
    .size b_entry, . - b_entry

    .type b1, @function
b1:
    call work_b
    mov $save_b, %eax
    mov $save_a, %edx
    call sw
    call work_b
    ret
    .size b1, . - b1

    .type work_a, @function
work_a:
    mov $5, %ecx
2:  dec %ecx
    jnz 2b
    ret
    .size work_a, . - work_a

    .type work_b, @function
work_b:
    mov $7, %ecx
3:  dec %ecx
    jnz 3b
    ret
    .size work_b, . - work_b

    .type work_i, @function
work_i:
    mov $3, %ecx
4:  dec %ecx
    jnz 4b
    ret
    .size work_i, . - work_i
