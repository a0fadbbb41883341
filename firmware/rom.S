/* nicemu boot ROM: from the reset vector to a 32-bit entry point.
 *
 * The CPU starts at F000:FFF0 with CS base 0xFFFF0000 (SDM vol. 3A, 9.1.4),
 * i.e. in the copy of this ROM just below 4 GB.  We far-jump into the copy
 * below 1 MB, open A20, switch to flat 32-bit protected mode with the GDT
 * the Linux 32-bit boot protocol asks for (__BOOT_CS = 0x10, __BOOT_DS =
 * 0x18, Documentation/x86/boot.rst "32-bit Boot Protocol"), read the
 * parameter block a loader left in low RAM (firmware/rom_params.h) and jump
 * to its entry point with ESI as given, EBX = EDI = EBP = 0 and interrupts
 * off.  No BIOS services: Linux started this way asks for none.
 *
 * The image is linked at offset 0: 16-bit code addresses it through
 * CS = DS = 0xF000, 32-bit code through its flat address 0xF0000 + offset. */
#include "rom_params.h"

#define ROM_FLAT(sym) (NM_ROM_LOW_BASE + (sym))
#define POST_PORT 0x80
#define DEBUG_PORT 0xe9

	.section .text, "ax"
	.code16
	.globl	rom_start
rom_start:
	cli
	cld
	movb	$0x01, %al		/* POST 01: ROM entered */
	outb	%al, $POST_PORT
	xorw	%ax, %ax
	movw	%ax, %ss
	movw	$NM_ROM_STACK_TOP, %sp
	movw	$0xf000, %ax
	movw	%ax, %ds

	/* A20 through System Control Port A (0x92) bit 1.  Bit 0 is the fast
	 * reset: keep it 0. */
	inb	$0x92, %al
	orb	$0x02, %al
	andb	$0xfe, %al
	outb	%al, $0x92

	movb	$0x02, %al		/* POST 02: entering protected mode */
	outb	%al, $POST_PORT
	/* 32-bit operand size: the GDT base is a full 32-bit address. */
	lgdtl	gdt_desc
	movl	%cr0, %eax
	orl	$1, %eax		/* CR0.PE; paging stays off */
	/* Caches on, as a BIOS leaves them: RESET sets CD and NW (SDM vol. 3A,
	 * table 9-1); the kernel expects a cached machine. */
	andl	$0x9fffffff, %eax	/* clear CR0.CD (bit 30), CR0.NW (bit 29) */
	movl	%eax, %cr0
	/* The far jump loads CS from the new GDT (SDM vol. 3A, 9.9.1). */
	ljmpl	$NM_ROM_BOOT_CS, $ROM_FLAT(pm32)

	.code32
pm32:
	movl	$NM_ROM_BOOT_DS, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	movl	$NM_ROM_STACK_TOP, %esp

	movl	$NM_ROM_PARAM_ADDR, %edx
	cmpl	$NM_ROM_PARAM_MAGIC, NM_ROM_PARAM_OFF_MAGIC(%edx)
	jne	no_boot
	cmpl	$NM_ROM_PARAM_VERSION, NM_ROM_PARAM_OFF_VERSION(%edx)
	jne	no_boot

	movb	$0x03, %al		/* POST 03: jumping to the loaded entry */
	outb	%al, $POST_PORT
	movl	NM_ROM_PARAM_OFF_ESP(%edx), %eax
	testl	%eax, %eax
	jz	1f
	movl	%eax, %esp
1:	movl	NM_ROM_PARAM_OFF_ENTRY(%edx), %eax
	movl	NM_ROM_PARAM_OFF_ESI(%edx), %esi
	xorl	%ebx, %ebx
	xorl	%edi, %edi
	xorl	%ebp, %ebp
	xorl	%ecx, %ecx
	xorl	%edx, %edx
	jmp	*%eax

	/* Nothing to start: say so on the debug port, then halt for good. */
no_boot:
	movb	$0xee, %al		/* POST EE: no parameter block */
	outb	%al, $POST_PORT
	movl	$ROM_FLAT(no_boot_msg), %esi
2:	lodsb
	testb	%al, %al
	jz	3f
	outb	%al, $DEBUG_PORT
	jmp	2b
3:	cli
	hlt
	jmp	3b

no_boot_msg:
	.asciz	"nicemu ROM: nothing to boot (no kernel loaded)\n"

	/* GDT: null, an unused slot (0x08), then flat 4 GB ring-0 code and
	 * data: base 0, limit 0xFFFFF with G = 1, D/B = 1 (SDM vol. 3A, 3.4.5). */
	.balign	8, 0
gdt:
	.quad	0
	.quad	0
	.quad	0x00cf9b000000ffff	/* 0x10: code, execute/read, accessed */
	.quad	0x00cf93000000ffff	/* 0x18: data, read/write, accessed */
gdt_end:
gdt_desc:
	.word	gdt_end - gdt - 1
	.long	ROM_FLAT(gdt)

	/* The reset vector: the last 16 bytes of the ROM. */
	.section .reset, "ax"
	.code16
reset_vector:
	ljmpw	$0xf000, $rom_start
	.ascii	"nicemu"
