/* A 64 KB raw ROM for the --rom path: real-mode code from the reset vector
 * that prints on the debug console (port 0xE9), writes POST codes to port
 * 0x80 and to the port given with --post-port (0x2F8 in the test), and ends
 * with cli; hlt.  The image maps at F0000-FFFFF and FFFF0000-FFFFFFFF. */
	.code16
	.text
	.globl	_start
_start:
	cli
	movw	$0xf000, %ax
	movw	%ax, %ds
	movb	$0x11, %al
	outb	%al, $0x80
	movw	$message, %si
1:	lodsb
	testb	%al, %al
	jz	2f
	outb	%al, $0xe9
	jmp	1b
2:	movb	$0x22, %al
	outb	%al, $0x80
	movw	$0x2f8, %dx
	movb	$0x33, %al
	outb	%al, %dx
	hlt
	jmp	2b
message:
	.asciz	"test ROM: hello from F000\n"

	.org	0xfff0
reset_vector:
	ljmp	$0xf000, $_start
	.org	0x10000
