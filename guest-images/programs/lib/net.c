/* nicemu guest programs: time, the measurement window, addresses and
 * interface configuration (see net.h). */
#include "net.h"

u64 now_ns(void)
{
	struct timespec64 ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (u64)ts.tv_sec * 1000000000u + (u64)ts.tv_nsec;
}

void sleep_until_ns(u64 t)
{
	struct timespec64 ts;
	u32 rem;
	ts.tv_sec = (s64)divmod_u64_u32(t, 1000000000u, &rem);
	ts.tv_nsec = rem;
	while (clock_nanosleep_abs(CLOCK_MONOTONIC, &ts) == -EINTR)
		;
}

u64 div_u64(u64 n, u64 d)
{
	u64 q = 0, r = 0;
	if (!(d >> 32))
		return divmod_u64_u32(n, (u32)d, NULL);
	for (int i = 63; i >= 0; i--) {
		r = (r << 1) | ((n >> i) & 1);
		if (r >= d) {
			r -= d;
			q |= (u64)1 << i;
		}
	}
	return q;
}

char *fmt_fixed(char *buf, size_t size, u64 v, unsigned scale_digits, unsigned decimals)
{
	u32 scale = 1, drop = 1, frac;
	u64 ip;
	for (unsigned i = 0; i < scale_digits; i++)
		scale *= 10;
	for (unsigned i = decimals; i < scale_digits; i++)
		drop *= 10;
	ip = divmod_u64_u32(v, scale, &frac);
	frac /= drop; /* truncated, not rounded: the same figure every run */
	if (decimals) {
		char f[10];
		for (int i = (int)decimals - 1; i >= 0; i--, frac /= 10)
			f[i] = (char)('0' + frac % 10);
		f[decimals] = 0;
		snprintf(buf, size, "%llu.%s", ip, f);
	} else
		snprintf(buf, size, "%llu", ip);
	return buf;
}

static inline void outl(u32 v, u16 port) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port)); }

static int marker_ok = -1;

void window_init(void)
{
	if (marker_ok < 0)
		marker_ok = ioperm(MARKER_PORT, 8, 1) == 0; /* the marker and the mailbox */
}

static void marker_write(u32 v)
{
	window_init();
	if (marker_ok)
		outl(v, MARKER_PORT);
}

/* The console's output drains before the window opens: a line the workload
 * printed just before would otherwise still be on the serial line, its
 * interrupts inside the measurement (and flagged by the emulator). */
void window_open(void)
{
	tcdrain(1);
	marker_write(1);
}
void window_close(void) { marker_write(0); }
void window_mark(u32 value) { marker_write(value); }

void snapshot_point(void)
{
	tcdrain(1); /* nothing half-printed in the snapshot */
	marker_write(SNAPSHOT_MARK);
}

int mailbox_read(char *buf, size_t size)
{
	u8 status;
	u32 len;
	window_init();
	if (!marker_ok || size == 0)
		return -1;
	status = inb(MAILBOX_PORT);
	/* No device reads 0xFF: only bits 0-1 are defined. */
	if ((status & ~3u) || !(status & 1))
		return -1;
	len = inb(MAILBOX_PORT + 2) | (u32)inb(MAILBOX_PORT + 3) << 8;
	if (len == 0 || len >= size)
		return -1;
	outb(1, MAILBOX_PORT); /* rewind */
	for (u32 i = 0; i < len; i++)
		buf[i] = (char)inb(MAILBOX_PORT + 1);
	buf[len] = 0;
	return (int)len;
}

int parse_ipv4(const char *s, u32 *addr)
{
	u32 a = 0;
	for (int i = 0; i < 4; i++) {
		u32 v = 0;
		int digits = 0;
		while (*s >= '0' && *s <= '9' && digits < 4)
			v = v * 10 + (u32)(*s++ - '0'), digits++;
		if (!digits || v > 255)
			return -1;
		a = (a << 8) | v;
		if (i < 3 && *s++ != '.')
			return -1;
	}
	if (*s)
		return -1;
	*addr = htonl(a);
	return 0;
}

int parse_ipv4_prefix(const char *s, u32 *addr, u32 *prefix)
{
	char tmp[32];
	char *slash;
	if (strlcpy(tmp, s, sizeof(tmp)) >= sizeof(tmp))
		return -1;
	*prefix = 24;
	slash = strchr(tmp, '/');
	if (slash) {
		*slash = 0;
		if (parse_u32(slash + 1, prefix) < 0 || *prefix > 32)
			return -1;
	}
	return parse_ipv4(tmp, addr);
}

char *fmt_ipv4(char *buf, u32 addr)
{
	u32 a = ntohl(addr);
	snprintf(buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
	return buf;
}

int parse_duration_ns(const char *s, u64 *ns)
{
	u64 ip = 0, frac = 0, fscale = 1, unit = 1000000000u;
	int digits = 0;
	for (; *s >= '0' && *s <= '9'; s++, digits++)
		ip = ip * 10 + (u32)(*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++)
			if (fscale < 1000000000u)
				frac = frac * 10 + (u32)(*s - '0'), fscale *= 10;
	if (!digits || ip > 1000000u)
		return -1;
	if (!strcmp(s, "ms"))
		unit = 1000000u;
	else if (!strcmp(s, "us"))
		unit = 1000u;
	else if (!strcmp(s, "ns"))
		unit = 1;
	else if (*s && strcmp(s, "s"))
		return -1;
	*ns = ip * unit + div_u64(frac * unit, fscale);
	return 0;
}

int parse_rate(const char *s, u32 *out)
{
	char tmp[24];
	size_t n = strlcpy(tmp, s, sizeof(tmp));
	u32 mult = 1, v;
	if (n == 0 || n >= sizeof(tmp))
		return -1;
	if (tmp[n - 1] == 'k' || tmp[n - 1] == 'K')
		mult = 1000, tmp[n - 1] = 0;
	else if (tmp[n - 1] == 'M')
		mult = 1000000, tmp[n - 1] = 0;
	if (parse_u32(tmp, &v) < 0 || v == 0 || v > 0xffffffffu / mult)
		return -1;
	*out = v * mult;
	return 0;
}

u16 inet_csum(const void *p, size_t n)
{
	const u8 *b = p;
	u32 sum = 0;
	for (; n > 1; n -= 2, b += 2)
		sum += (u32)b[0] << 8 | b[1];
	if (n)
		sum += (u32)b[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((u16)~sum);
}

static void set_sin(struct sockaddr *sa, u32 addr)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)sa;
	memset(sa, 0, sizeof(*sa));
	sin->sin_family = AF_INET;
	sin->sin_addr = addr;
}

int ifconfig(const char *ifname, u32 addr, u32 prefix, u32 gw)
{
	struct ifreq ifr;
	char a[16], g[16];
	u8 *mac;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), r;
	u32 mask = prefix ? htonl(0xffffffffu << (32 - prefix)) : 0;
	if (fd < 0)
		return fd;
	memset(&ifr, 0, sizeof(ifr));
	strlcpy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name));
	if ((r = ioctl(fd, SIOCGIFHWADDR, &ifr)) < 0)
		goto out; /* no such interface */
	mac = (u8 *)ifr.u.addr.sa_data;
	printf("nicemu-net: %s hwaddr %02x:%02x:%02x:%02x:%02x:%02x\n", ifname,
	       mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
	set_sin(&ifr.u.addr, addr);
	if ((r = ioctl(fd, SIOCSIFADDR, &ifr)) < 0)
		goto out;
	set_sin(&ifr.u.addr, mask);
	if ((r = ioctl(fd, SIOCSIFNETMASK, &ifr)) < 0)
		goto out;
	if ((r = ioctl(fd, SIOCGIFFLAGS, &ifr)) < 0)
		goto out;
	ifr.u.flags |= IFF_UP | IFF_RUNNING;
	if ((r = ioctl(fd, SIOCSIFFLAGS, &ifr)) < 0)
		goto out;
	/* A NIC whose driver reports its link from a watchdog (e1000) has no
	 * carrier yet: until the kernel says RUNNING its queue drops what is
	 * sent.  Wait for it (10 ms steps, at most 5 s); the ISA 8390 drivers
	 * are RUNNING at once. */
	for (int i = 0; i < 500; i++) {
		if ((r = ioctl(fd, SIOCGIFFLAGS, &ifr)) < 0)
			goto out;
		if (ifr.u.flags & IFF_RUNNING)
			break;
		sleep_until_ns(now_ns() + 10000000u);
	}
	if (gw) {
		struct rtentry rt;
		memset(&rt, 0, sizeof(rt));
		set_sin(&rt.rt_dst, 0);
		set_sin(&rt.rt_genmask, 0);
		set_sin(&rt.rt_gateway, gw);
		rt.rt_flags = RTF_UP | RTF_GATEWAY;
		rt.rt_dev = (char *)ifname;
		if ((r = ioctl(fd, SIOCADDRT, &rt)) < 0)
			goto out;
	}
	printf("nicemu-net: %s inet %s/%u%s%s up\n", ifname, fmt_ipv4(a, addr), prefix,
	       gw ? " gw " : "", gw ? fmt_ipv4(g, gw) : "");
	r = 0;
out:
	close(fd);
	return r;
}
