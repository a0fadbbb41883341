/* nicemu guest programs: raw i386 Linux system calls through `int $0x80`.
 * No libc: Debian's i386 libc uses CMOV, which the 486/Pentium lacks. */
#ifndef NICEMU_SYS_H
#define NICEMU_SYS_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int s32;
typedef long long s64;
typedef unsigned int size_t;
typedef int ssize_t;

#define NULL ((void *)0)

/* i386 syscall numbers (arch/x86/entry/syscalls/syscall_32.tbl). */
#define SYS_exit 1
#define SYS_read 3
#define SYS_write 4
#define SYS_open 5
#define SYS_close 6
#define SYS_execve 11
#define SYS_chdir 12
#define SYS_mknod 14
#define SYS_getpid 20
#define SYS_mount 21
#define SYS_pause 29
#define SYS_mkdir 39
#define SYS_dup2 63
#define SYS_reboot 88
#define SYS_ioperm 101
#define SYS_iopl 110
#define SYS_ioctl 54
#define SYS_uname 122
#define SYS_wait4 114
#define SYS_vfork 190
#define SYS_exit_group 252
#define SYS_finit_module 350
#define SYS_clock_gettime64 403
#define SYS_clock_nanosleep_time64 407

/* errno values we test for. */
#define EBADF 9
#define EBUSY 16
#define EEXIST 17

#define O_RDONLY 0
#define O_WRONLY 1
#define O_RDWR 2
#define O_NOCTTY 0400

#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1

#define LINUX_REBOOT_MAGIC1 0xfee1dead
#define LINUX_REBOOT_MAGIC2 672274793
#define LINUX_REBOOT_CMD_POWER_OFF 0x4321fedc

/* Return values in -4095..-1 are -errno, as from the kernel. The "memory"
 * clobber keeps the compiler from caching buffers across a call. */
static inline long sys0(long n)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "0"(n) : "memory");
	return r;
}
static inline long sys1(long n, long a)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "0"(n), "b"(a) : "memory");
	return r;
}
static inline long sys2(long n, long a, long b)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "0"(n), "b"(a), "c"(b) : "memory");
	return r;
}
static inline long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r)
			 : "0"(n), "b"(a), "c"(b), "d"(c) : "memory");
	return r;
}
static inline long sys4(long n, long a, long b, long c, long d)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r)
			 : "0"(n), "b"(a), "c"(b), "d"(c), "S"(d) : "memory");
	return r;
}
static inline long sys5(long n, long a, long b, long c, long d, long e)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r)
			 : "0"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
			 : "memory");
	return r;
}
/* Six arguments need %ebp, which inline asm cannot name: see start.S. */
long sys6(long n, long a, long b, long c, long d, long e, long f);

struct utsname {
	char sysname[65], nodename[65], release[65], version[65],
		machine[65], domainname[65];
};
struct timespec64 {
	s64 tv_sec;
	s64 tv_nsec;
};

static inline ssize_t write(int fd, const void *p, size_t n) { return sys3(SYS_write, fd, (long)p, n); }
static inline ssize_t read(int fd, void *p, size_t n) { return sys3(SYS_read, fd, (long)p, n); }
static inline int open(const char *path, int flags, int mode) { return sys3(SYS_open, (long)path, flags, mode); }
static inline int close(int fd) { return sys1(SYS_close, fd); }
static inline int dup2(int a, int b) { return sys2(SYS_dup2, a, b); }
static inline int mkdir(const char *p, int mode) { return sys2(SYS_mkdir, (long)p, mode); }
static inline int mount(const char *src, const char *dst, const char *type,
			unsigned long flags, const void *data)
{
	return sys5(SYS_mount, (long)src, (long)dst, (long)type, flags, (long)data);
}
static inline int uname(struct utsname *u) { return sys1(SYS_uname, (long)u); }
static inline int ioperm(unsigned long from, unsigned long num, int on) { return sys3(SYS_ioperm, from, num, on); }
static inline int iopl(int level) { return sys1(SYS_iopl, level); }
/* TCSBRK with a non-zero argument is tcdrain(): wait until the tty has
 * sent everything (the serial console drains at its baud rate). */
#define TCSBRK 0x5409
static inline int tcdrain(int fd) { return sys3(SYS_ioctl, fd, TCSBRK, 1); }
static inline int reboot(unsigned int cmd)
{
	return sys4(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, cmd, 0);
}
static inline int pause(void) { return sys0(SYS_pause); }
/* Loads the kernel module in file `fd` with parameters `params` ("a=1 b=2"). */
static inline int finit_module(int fd, const char *params, int flags)
{
	return sys3(SYS_finit_module, fd, (long)params, flags);
}
static inline int getpid(void) { return sys0(SYS_getpid); }
static inline int clock_gettime(int clk, struct timespec64 *ts) { return sys2(SYS_clock_gettime64, clk, (long)ts); }
static inline __attribute__((noreturn)) void exit(int status)
{
	for (;;)
		sys1(SYS_exit_group, status);
}

static inline void outb(u8 v, u16 port) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port)); }
static inline u8 inb(u16 port)
{
	u8 v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

#endif
