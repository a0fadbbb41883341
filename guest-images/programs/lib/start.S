/* Process entry and the 6-argument system call, for nicemu guest programs. */
	.text
	.globl _start
	.type _start, @function
_start:
	xorl %ebp, %ebp		/* mark the outermost frame */
	movl %esp, %eax		/* -> argc, argv[], NULL, envp[], NULL */
	andl $-16, %esp		/* the i386 ABI wants 16-byte alignment at calls */
	subl $12, %esp
	pushl %eax
	call nicemu_start	/* never returns */
	hlt

	/* long sys6(n, a, b, c, d, e, f): %ebp is the 6th argument register. */
	.globl sys6
	.type sys6, @function
sys6:
	pushl %ebp
	pushl %edi
	pushl %esi
	pushl %ebx
	movl 20(%esp), %eax
	movl 24(%esp), %ebx
	movl 28(%esp), %ecx
	movl 32(%esp), %edx
	movl 36(%esp), %esi
	movl 40(%esp), %edi
	movl 44(%esp), %ebp
	int $0x80
	popl %ebx
	popl %esi
	popl %edi
	popl %ebp
	ret

	.section .note.GNU-stack, "", @progbits
