/* nicemu guest programs: sockets, interface configuration, time and the
 * measurement-window port, on raw i386 system calls (no libc). */
#ifndef NICEMU_NET_H
#define NICEMU_NET_H

#include "nlib.h"

/* i386 system calls (arch/x86/entry/syscalls/syscall_32.tbl). Linux 6.1 has
 * direct socket calls, so no socketcall multiplexer. */
#define SYS_fork 2
#define SYS_poll 168
#define SYS_socket 359
#define SYS_bind 361
#define SYS_connect 362
#define SYS_setsockopt 366
#define SYS_sendto 369
#define SYS_recvfrom 371
#define SYS_shutdown 373

#define AF_INET 2
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define IPPROTO_ICMP 1
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SHUT_WR 1
#define POLLIN 1
#define TIMER_ABSTIME 1

#define EINTR 4
#define EAGAIN 11
#define ENOBUFS 105

/* Socket ioctls (include/uapi/linux/sockios.h). */
#define SIOCADDRT 0x890B
#define SIOCGIFFLAGS 0x8913
#define SIOCSIFFLAGS 0x8914
#define SIOCSIFADDR 0x8916
#define SIOCSIFNETMASK 0x891c
#define SIOCGIFHWADDR 0x8927
#define IFF_UP 0x1
#define IFF_RUNNING 0x40
#define RTF_UP 0x1
#define RTF_GATEWAY 0x2

struct sockaddr {
	u16 sa_family;
	char sa_data[14];
};
struct sockaddr_in {
	u16 sin_family;
	u16 sin_port; /* network order */
	u32 sin_addr; /* network order */
	u8 sin_zero[8];
};
struct ifreq {
	char ifr_name[16];
	union {
		struct sockaddr addr;
		short flags;
		u8 pad[16];
	} u;
};
/* struct rtentry for i386 (include/uapi/linux/route.h). */
struct rtentry {
	unsigned long rt_pad1;
	struct sockaddr rt_dst, rt_gateway, rt_genmask;
	unsigned short rt_flags;
	short rt_pad2;
	unsigned long rt_pad3;
	void *rt_pad4;
	short rt_metric;
	char *rt_dev;
	unsigned long rt_mtu, rt_window;
	unsigned short rt_irtt;
};
struct pollfd {
	int fd;
	short events, revents;
};

static inline u16 htons(u16 v) { return (u16)((v << 8) | (v >> 8)); }
static inline u16 ntohs(u16 v) { return htons(v); }
static inline u32 htonl(u32 v)
{
	return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}
static inline u32 ntohl(u32 v) { return htonl(v); }

static inline int socket(int dom, int type, int proto) { return sys3(SYS_socket, dom, type, proto); }
static inline int bind(int fd, const void *a, int len) { return sys3(SYS_bind, fd, (long)a, len); }
static inline int connect(int fd, const void *a, int len) { return sys3(SYS_connect, fd, (long)a, len); }
static inline int shutdown(int fd, int how) { return sys2(SYS_shutdown, fd, how); }
static inline ssize_t sendto(int fd, const void *p, size_t n, int flags, const void *a, int alen)
{
	return sys6(SYS_sendto, fd, (long)p, n, flags, (long)a, alen);
}
static inline ssize_t recvfrom(int fd, void *p, size_t n, int flags, void *a, int *alen)
{
	return sys6(SYS_recvfrom, fd, (long)p, n, flags, (long)a, (long)alen);
}
static inline int ioctl(int fd, unsigned long req, void *arg) { return sys3(SYS_ioctl, fd, req, (long)arg); }
static inline int poll(struct pollfd *p, unsigned n, int timeout_ms) { return sys3(SYS_poll, (long)p, n, timeout_ms); }
static inline int fork(void) { return sys0(SYS_fork); }
static inline int execve(const char *path, char *const argv[], char *const envp[])
{
	return sys3(SYS_execve, (long)path, (long)argv, (long)envp);
}
static inline int wait4(int pid, int *status, int options, void *ru)
{
	return sys4(SYS_wait4, pid, (long)status, options, (long)ru);
}
static inline int clock_nanosleep_abs(int clk, const struct timespec64 *t)
{
	return sys4(SYS_clock_nanosleep_time64, clk, TIMER_ABSTIME, (long)t, 0);
}

/* ---- time -------------------------------------------------------------- */

/* CLOCK_MONOTONIC in ns: the guest's view of virtual time. */
u64 now_ns(void);
/* Sleeps until CLOCK_MONOTONIC reaches `t` ns (absolute; retried on EINTR). */
void sleep_until_ns(u64 t);
/* 64-by-64 division (no libgcc). */
u64 div_u64(u64 n, u64 d);
/* Formats `v / 10^decimals` with that many decimals: fmt_fixed(buf, 1754123, 6, 3) = "1.754". */
char *fmt_fixed(char *buf, size_t size, u64 v, unsigned scale_digits, unsigned decimals);

/* ---- the measurement window (devices/pc/marker.h: 32-bit writes to 0x600) */
#define MARKER_PORT 0x600
/* Gets port access (ioperm) once, outside any window. */
void window_init(void);
void window_open(void);
void window_close(void);
/* A user marker (any value but 0 and 1): the emulator keeps its virtual time. */
void window_mark(u32 value);

/* ---- snapshots (docs/snapshots.md) ----------------------------------------
 * The snapshot point: the console drained, then 'SNAP' to the marker port;
 * nicemu --save-state saves the machine there.  The mailbox (0x604-0x607,
 * devices/pc/mailbox.c) holds what the host wants run next: mailbox_read
 * copies it into buf (NUL-terminated) and returns its length, or -1 when
 * there is no mailbox or nothing in it. */
#define SNAPSHOT_MARK 0x50414e53u
#define MAILBOX_PORT  0x604
void snapshot_point(void);
int mailbox_read(char *buf, size_t size);

/* ---- addresses and arguments ------------------------------------------ */

/* "10.0.0.2" -> network-order address; returns 0 on success. */
int parse_ipv4(const char *s, u32 *addr);
/* "10.0.0.2/24" -> address and prefix length (default 24 without "/"). */
int parse_ipv4_prefix(const char *s, u32 *addr, u32 *prefix);
/* Prints a network-order address into buf (16 bytes). */
char *fmt_ipv4(char *buf, u32 addr);
/* "2", "0.5", "1500ms", "20us" -> ns; returns 0 on success. */
int parse_duration_ns(const char *s, u64 *ns);
/* "1000000", "10k", "2M" (decimal multipliers) -> value; returns 0 on success. */
int parse_rate(const char *s, u32 *out);

/* One's-complement Internet checksum (RFC 1071). */
u16 inet_csum(const void *p, size_t n);

/* Configures `ifname`: address/prefix, IFF_UP, and a default route through
 * gw (0 = none). Prints "nicemu-net: eth0 MAC ADDR/PREFIX up". Returns 0 or
 * -errno. */
int ifconfig(const char *ifname, u32 addr, u32 prefix, u32 gw);

#endif
