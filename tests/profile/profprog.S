/* A bare-metal profiler workload with a known call pattern (tests/profile):
 * _start opens the measurement window (port 0x600), calls h three times and
 * g once, closes the window and ends through the exit port.  h calls g and
 * f, g calls f twice, f loops ten times.  Instructions in the window:
 *   f: 22 per call (mov, 10 x dec/jnz, ret), 11 calls          self 242
 *   g: 3 per call, 4 calls, inclusive 3 + 2*22 = 47           self 12, incl 188
 *   h: 4 per call, 3 calls, inclusive 4 + 47 + 22 = 73         self 12, incl 219
 *   _start: the opening OUT, four CALLs, MOV, MOV, REP STOSB (3000 bytes:
 *   three 1024-iteration steps, still one instruction), the MOV before the
 *   closing OUT: 9
 *   total 275.  Written in assembly so the counts do not depend on gcc. */
    .text
    .globl _start
    .type _start, @function
_start:
    mov $0x9f000, %esp
    mov $0x600, %dx
    mov $1, %al
    out %al, %dx            /* window opens: this OUT is inside */
    call h
    call h
    call h
    call g
    mov $0x10000, %edi
    mov $3000, %ecx
    rep stosb
    mov $0, %al
    out %al, %dx            /* window closes: this OUT is outside */
    mov $0, %al
    out %al, $0xf4          /* exit port: status 0 */
1:  hlt
    jmp 1b
    .size _start, . - _start

    .globl h
    .type h, @function
h:
    call g
    nop
    call f
    ret
    .size h, . - h

    .globl g
    .type g, @function
g:
    call f
    call f
    ret
    .size g, . - g

    .globl f
    .type f, @function
f:
    mov $10, %ecx
2:  dec %ecx
    jnz 2b
    ret
    .size f, . - f
