/* nicemu-init: PID 1 of the nicemu guest.
 *
 * Mounts the pseudo file systems, prints the boot banner, configures the
 * network interface from `nicemu.ip=ADDR/PREFIX` (and `nicemu.gw=`), runs the
 * workload(s) named by `nicemu.run=W1[+W2...][,arg,...]` on the kernel command
 * line (default `boot`) and hands the exit status to the emulator through the
 * exit port (outb to 0xf4), falling back to a power-off.
 *
 * Between configuring the network and choosing the workload it passes the
 * snapshot point (docs/snapshots.md) and reads the host's mailbox: a
 * command there replaces the command line's nicemu.run=, so a run restored
 * from a snapshot taken here can run any workload.
 *
 * Every network workload brackets its measured part with the measurement
 * window (32-bit writes of 1 and 0 to port 0x600, devices/pc/marker.h) and
 * prints one result line `nicemu-NAME: ...`. Times are CLOCK_MONOTONIC, i.e.
 * virtual time.
 */
#include "lib/net.h"

#define EXIT_PORT 0xf4 /* also QEMU's `-device isa-debug-exit,iobase=0xf4` */
#define MAX_ARGS 32
#define MAX_SEQ 8

static const char tag[] = "nicemu-init";

/* ---- arguments ------------------------------------------------------------
 * Workloads get the comma-separated arguments after the name(s). Key lookups
 * try `WORKLOAD.key` first, then `key`, so one command line can give a
 * sequence different values (`ping+ttcp,...,port=5001,udp.port=9`); the last
 * occurrence wins. */

static const char *arg_get(int argc, char **argv, const char *wname, const char *key)
{
	const char *plain = NULL, *scoped = NULL;
	size_t wl = strlen(wname), kl = strlen(key);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strncmp(a, wname, wl) && a[wl] == '.' && !strncmp(a + wl + 1, key, kl) &&
		    a[wl + 1 + kl] == '=')
			scoped = a + wl + 2 + kl;
		else if (!strncmp(a, key, kl) && a[kl] == '=')
			plain = a + kl + 1;
	}
	return scoped ? scoped : plain;
}

/* A numeric argument with a default; prints an error and returns -1 if bad. */
static int arg_u32(int argc, char **argv, const char *w, const char *key, u32 def,
		   u32 min, u32 max, u32 *out)
{
	const char *v = arg_get(argc, argv, w, key);
	*out = def;
	if (!v)
		return 0;
	if (parse_u32(v, out) < 0 || *out < min || *out > max) {
		dprintf(2, "nicemu-%s: error: bad %s=%s (accepted: %u..%u)\n", w, key, v, min, max);
		return -1;
	}
	return 0;
}

static int arg_dst(int argc, char **argv, const char *w, u32 *addr)
{
	const char *v = arg_get(argc, argv, w, "dst");
	if (!v || parse_ipv4(v, addr) < 0) {
		dprintf(2, "nicemu-%s: error: %s dst=%s (an IPv4 address, e.g. dst=10.0.0.1)\n",
			w, v ? "bad" : "missing", v ? v : "");
		return -1;
	}
	return 0;
}

static int arg_duration(int argc, char **argv, const char *w, const char *key, u64 def, u64 *out)
{
	const char *v = arg_get(argc, argv, w, key);
	*out = def;
	if (v && parse_duration_ns(v, out) < 0) {
		dprintf(2, "nicemu-%s: error: bad %s=%s (e.g. 2, 0.5, 250ms, 100us)\n", w, key, v);
		return -1;
	}
	return 0;
}

static void set_sockaddr(struct sockaddr_in *sin, u32 addr, u32 port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((u16)port);
	sin->sin_addr = addr;
}

static u8 buffer[65536];

/* ---- workloads ------------------------------------------------------------
 * A workload gets the arguments (argv[0] is the workload list) and returns
 * the exit status to report. To add one, write the function and add a row
 * to `workloads`, with the keys it accepts. */

static int run_boot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("%s: run=boot ok\n", tag);
	return 0;
}

/* ping: ICMP echo over a raw socket, one request at a time. */
static int run_ping(int argc, char **argv)
{
	static const char w[] = "ping";
	struct sockaddr_in to;
	u32 dst, count, size, sent = 0, received = 0;
	u64 interval, timeout, rtt_min = ~(u64)0, rtt_max = 0, rtt_sum = 0, start;
	char a[16], s1[24], s2[24], s3[24];
	int fd;

	if (arg_dst(argc, argv, w, &dst) < 0 || arg_u32(argc, argv, w, "count", 10, 1, 1000000, &count) < 0 ||
	    arg_u32(argc, argv, w, "size", 56, 0, 1472, &size) < 0 ||
	    arg_duration(argc, argv, w, "interval", 1000000000u, &interval) < 0 ||
	    arg_duration(argc, argv, w, "timeout", 1000000000u, &timeout) < 0)
		return 2;
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0) {
		dprintf(2, "nicemu-ping: error: raw socket: error %d\n", -fd);
		return 1;
	}
	set_sockaddr(&to, dst, 0);
	printf("nicemu-ping: %s, %u requests of %u data bytes\n", fmt_ipv4(a, dst), count, size);

	window_open();
	start = now_ns();
	for (u32 seq = 1; seq <= count; seq++) {
		u8 *icmp = buffer;
		u64 t_send, deadline;
		u16 c;
		int got = 0;
		ssize_t r;

		memset(icmp, 0, 8);
		icmp[0] = 8; /* echo request */
		icmp[4] = 0x4e, icmp[5] = 0x4d; /* identifier "NM" */
		icmp[6] = (u8)(seq >> 8), icmp[7] = (u8)seq;
		for (u32 i = 0; i < size; i++)
			icmp[8 + i] = (u8)(i + seq);
		c = inet_csum(icmp, 8 + size);
		memcpy(icmp + 2, &c, 2);
		t_send = now_ns();
		r = sendto(fd, icmp, 8 + size, 0, &to, sizeof(to));
		if (r < 0) {
			dprintf(2, "nicemu-ping: sendto: error %d\n", (int)-r);
			break;
		}
		sent++;
		deadline = t_send + timeout;
		while (!got) {
			struct pollfd pfd = { fd, POLLIN, 0 };
			u64 now = now_ns();
			u8 *reply = buffer + 2048;
			u32 ihl;
			if (now >= deadline)
				break;
			/* poll() counts in ms (jiffies, really): round up. */
			if (poll(&pfd, 1, (int)divmod_u64_u32(deadline - now + 999999u, 1000000u, NULL)) <= 0)
				continue;
			r = recvfrom(fd, reply, 2048, 0, NULL, NULL);
			now = now_ns();
			if (r < 28)
				continue;
			ihl = (reply[0] & 15) * 4u;
			if ((u32)r < ihl + 8 || reply[ihl] != 0 || reply[ihl + 4] != 0x4e ||
			    reply[ihl + 5] != 0x4d || reply[ihl + 6] != (u8)(seq >> 8) ||
			    reply[ihl + 7] != (u8)seq || (u32)r != ihl + 8 + size ||
			    memcmp(reply + ihl + 8, icmp + 8, size))
				continue; /* not our reply (or a corrupted one) */
			got = 1;
			received++;
			now -= t_send;
			rtt_sum += now;
			if (now < rtt_min)
				rtt_min = now;
			if (now > rtt_max)
				rtt_max = now;
		}
		if (seq < count)
			sleep_until_ns(t_send + interval);
	}
	window_close();
	close(fd);
	{
		u32 loss = sent ? (sent - received) * 100u / sent : 100;
		char t[24];
		printf("nicemu-ping: %u packets transmitted, %u received, %u%% packet loss, time %s ms\n",
		       sent, received, loss, fmt_fixed(t, sizeof(t), now_ns() - start, 6, 3));
		if (received)
			printf("nicemu-ping: rtt min/avg/max = %s/%s/%s ms\n",
			       fmt_fixed(s1, sizeof(s1), rtt_min, 6, 3),
			       fmt_fixed(s2, sizeof(s2), divmod_u64_u32(rtt_sum, received, NULL), 6, 3),
			       fmt_fixed(s3, sizeof(s3), rtt_max, 6, 3));
	}
	return received ? 0 : 1; /* as ping(8): success if any reply came */
}

/* ---- per-interval lines (interval=) --------------------------------------
 * Like nuttcp -i: for each interval of the run, what the sender put into its
 * socket (MB = 2^20 bytes, Mbit/s = 10^6 bit/s) and, for udp when the peer
 * reports it, what the receiver got.  The counts are kept in memory and the
 * lines printed after the window closes, so no console output falls inside
 * the measurement. */

#define MAX_INTERVALS 1000

struct intervals {
	u64 ns;				/* the interval's length; 0: none */
	u32 n;				/* intervals in the run */
	u64 bytes[MAX_INTERVALS];
	u32 datagrams[MAX_INTERVALS];
	u32 received[MAX_INTERVALS];	/* the peer's figure (udp) */
	int have_received;
};

static struct intervals iv;

static int intervals_setup(int argc, char **argv, const char *w, u64 run_ns)
{
	if (arg_duration(argc, argv, w, "interval", 0, &iv.ns) < 0)
		return -1;
	memset(iv.bytes, 0, sizeof(iv.bytes));
	memset(iv.datagrams, 0, sizeof(iv.datagrams));
	memset(iv.received, 0, sizeof(iv.received));
	iv.have_received = 0;
	iv.n = 0;
	if (!iv.ns)
		return 0;
	if (iv.ns < 1000000u || (run_ns && div_u64(run_ns + iv.ns - 1, iv.ns) > MAX_INTERVALS)) {
		dprintf(2, "nicemu-%s: error: bad interval= (at least 1ms, at most %u intervals in the run)\n",
			w, MAX_INTERVALS);
		return -1;
	}
	return 0;
}

/* The interval `t` (ns since the start) falls in; counts it as used. */
static u32 interval_of(u64 t)
{
	u64 k = div_u64(t, iv.ns);
	if (k >= MAX_INTERVALS)
		k = MAX_INTERVALS - 1;
	if ((u32)k + 1 > iv.n)
		iv.n = (u32)k + 1;
	return (u32)k;
}

/* "a.bbbb MB, c.dddd Mbit/s" for `bytes` over `ns`. */
static void fmt_volume(char *mb, char *mbit, size_t size, u64 bytes, u64 ns)
{
	fmt_fixed(mb, size, div_u64(bytes * 10000u, 1048576u), 4, 4);
	fmt_fixed(mbit, size, ns ? div_u64(div_u64(bytes * 8u * 1000000000u, ns), 100u) : 0, 4, 4);
}

static void print_interval_line(const char *w, const char *label, u64 from, u64 to, u64 bytes,
				int udp, u32 datagrams, int have_rx, u32 received)
{
	char t0[24], t1[24], mb[24], mbit[24], loss[24];
	fmt_volume(mb, mbit, sizeof(mb), bytes, to - from);
	printf("nicemu-%s: %s: %s-%s s, %s MB, %s Mbit/s", w, label, fmt_fixed(t0, sizeof(t0), from, 9, 3),
	       fmt_fixed(t1, sizeof(t1), to, 9, 3), mb, mbit);
	if (udp) {
		printf(", %u datagrams", datagrams);
		if (have_rx) {
			u32 drop = received < datagrams ? datagrams - received : 0;
			fmt_fixed(loss, sizeof(loss), datagrams ? div_u64((u64)drop * 10000u, datagrams) : 0, 2, 2);
			printf(", %u / %u drop/pkt, %s %%loss", drop, datagrams, loss);
		} else
			printf(", receiver: no report");
	}
	printf("\n");
}

static void print_intervals(const char *w, int udp, u64 run_ns)
{
	char label[24];
	for (u32 k = 0; k < iv.n; k++) {
		u64 from = (u64)k * iv.ns, to = from + iv.ns;
		if (to > run_ns)
			to = run_ns > from ? run_ns : from + 1;
		snprintf(label, sizeof(label), "interval %u", k + 1);
		print_interval_line(w, label, from, to, iv.bytes[k], udp, iv.datagrams[k], iv.have_received,
				    iv.received[k]);
	}
}

/* ttcp -t: one TCP connection, nbuf writes of buflen bytes. Byte n of the
 * stream is (n mod buflen) & 0xff. After the last write: shutdown(SHUT_WR),
 * read until the far end closes (so every byte and the FIN are ACKed), close. */
static int run_ttcp(int argc, char **argv)
{
	static const char w[] = "ttcp";
	struct sockaddr_in to;
	u32 dst, port, buflen, nbuf, nodelay;
	u64 t0, t1, bytes = 0, ns;
	char a[16], secs[24], rate[24];
	int fd, r;

	if (arg_dst(argc, argv, w, &dst) < 0 || arg_u32(argc, argv, w, "port", 5001, 1, 65535, &port) < 0 ||
	    arg_u32(argc, argv, w, "buflen", 1024, 1, sizeof(buffer), &buflen) < 0 ||
	    arg_u32(argc, argv, w, "nbuf", 2000, 1, 0x7fffffff, &nbuf) < 0 ||
	    arg_u32(argc, argv, w, "nodelay", 0, 0, 1, &nodelay) < 0 ||
	    intervals_setup(argc, argv, w, 0) < 0)
		return 2;
	for (u32 i = 0; i < buflen; i++)
		buffer[i] = (u8)i;
	fd = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (fd < 0) {
		dprintf(2, "nicemu-ttcp: error: socket: error %d\n", -fd);
		return 1;
	}
	if (nodelay) {
		int one = 1;
		sys5(SYS_setsockopt, fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, (long)&one, sizeof(one));
	}
	set_sockaddr(&to, dst, port);
	printf("nicemu-ttcp: %s:%u, %u writes of %u bytes%s\n", fmt_ipv4(a, dst), port, nbuf, buflen,
	       nodelay ? ", TCP_NODELAY" : "");
	r = connect(fd, &to, sizeof(to));
	if (r < 0) {
		dprintf(2, "nicemu-ttcp: error: connect: error %d\n", -r);
		close(fd);
		return 1;
	}

	window_open();
	t0 = now_ns();
	for (u32 i = 0; i < nbuf; i++) {
		if ((r = write_all(fd, buffer, buflen)) < 0)
			break;
		bytes += buflen;
		if (iv.ns)
			iv.bytes[interval_of(now_ns() - t0)] += buflen;
	}
	if (r >= 0 && (r = shutdown(fd, SHUT_WR)) == 0) {
		ssize_t n;
		while ((n = read(fd, buffer + buflen, 2048)) > 0)
			; /* the far end sends nothing; wait for its FIN */
		r = (int)n;
	}
	close(fd);
	t1 = now_ns();
	window_close();

	if (r < 0) {
		dprintf(2, "nicemu-ttcp: error: after %llu bytes: error %d\n", bytes, -r);
		return 1;
	}
	ns = t1 - t0 ? t1 - t0 : 1;
	/* KB/s with one decimal, 1 KB = 1000 bytes: bytes/s / 100 (truncated). */
	printf("nicemu-ttcp: sent %llu bytes in %s s (%s KB/s)\n", bytes,
	       fmt_fixed(secs, sizeof(secs), ns, 9, 3),
	       fmt_fixed(rate, sizeof(rate), divmod_u64_u32(div_u64(bytes * 1000000000u, ns), 100u, NULL), 1, 1));
	if (iv.ns) {
		print_intervals(w, 0, ns);
		print_interval_line(w, "total", 0, ns, bytes, 0, 0, 0, 0);
	}
	return 0;
}

/* udp: datagrams of `size` bytes at a fixed offered rate for `seconds` of
 * time (a sender that falls behind stops at the end all the same), each
 * sent at its absolute deadline t0 + k * interval (clock_nanosleep with
 * TIMER_ABSTIME: a late datagram does not delay the next deadline).  Then
 * the socket's queue drains (SIOCOUTQ: bytes the driver has not freed yet)
 * before the window closes, so what is reported has left.
 *
 * A datagram of 12 bytes or more starts with "nmud", its sequence number
 * and its interval (big-endian 32-bit): the peer counts what arrived per
 * interval.  After the run one "nmue" datagram carries the number sent in
 * each interval; the peer answers with an "nmur" datagram of what it
 * received in each (docs/netdev.md), which gives the receiver-side
 * drop/pkt and %loss columns. */

#define SIOCOUTQ 0x5411 /* TIOCOUTQ: for UDP, the send buffer bytes in use */
#define UDP_HDR_BYTES 12

static void put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24), p[1] = (u8)(v >> 16), p[2] = (u8)(v >> 8), p[3] = (u8)v;
}

static u32 get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/* The end marker and the peer's answer; 0 if the peer answered. */
static int udp_receiver_report(int fd, u32 sent, u32 *received)
{
	static u8 msg[UDP_HDR_BYTES + 4 * MAX_INTERVALS], reply[2048];
	u32 n = iv.n ? iv.n : 1;
	memcpy(msg, "nmue", 4);
	put_be32(msg + 4, sent);
	put_be32(msg + 8, n);
	for (u32 k = 0; k < n; k++)
		put_be32(msg + 12 + 4 * k, iv.ns ? iv.datagrams[k] : sent);
	if (write(fd, msg, UDP_HDR_BYTES + 4 * n) < 0)
		return -1;
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t r;
		if (poll(&pfd, 1, 500) <= 0)
			return -1; /* no answer: a peer that does not report */
		r = recvfrom(fd, reply, sizeof(reply), 0, NULL, NULL);
		if (r < 16 || memcmp(reply, "nmur", 4))
			continue;
		*received = get_be32(reply + 4);
		u32 m = get_be32(reply + 12);
		if (m > (u32)(r - 16) / 4)
			m = (u32)(r - 16) / 4;
		for (u32 k = 0; k < m && k < MAX_INTERVALS; k++)
			iv.received[k] = get_be32(reply + 16 + 4 * k);
		iv.have_received = m >= iv.n;
		return 0;
	}
}

static int run_udp(int argc, char **argv)
{
	static const char w[] = "udp";
	struct sockaddr_in to;
	u32 dst, port, size, rate = 0, pps = 0, q, rem, acc = 0, div, errors = 0, sent = 0, received = 0;
	u64 dur, t0, t1, t_stop, deadline, end, num, bytes = 0, elapsed;
	char a[16], s1[24];
	const char *v;
	int fd, r, outq = 0, peer_report;

	if (arg_dst(argc, argv, w, &dst) < 0 || arg_u32(argc, argv, w, "port", 9, 1, 65535, &port) < 0 ||
	    arg_u32(argc, argv, w, "size", 512, 0, 65507, &size) < 0 ||
	    arg_duration(argc, argv, w, "seconds", 1000000000u, &dur) < 0 ||
	    intervals_setup(argc, argv, w, 0) < 0)
		return 2;
	if (iv.ns && div_u64(dur + iv.ns - 1, iv.ns) > MAX_INTERVALS) {
		dprintf(2, "nicemu-udp: error: interval= gives more than %u intervals in seconds=\n", MAX_INTERVALS);
		return 2;
	}
	if ((v = arg_get(argc, argv, w, "rate")) && parse_rate(v, &rate) < 0) {
		dprintf(2, "nicemu-udp: error: bad rate=%s (payload bit/s, e.g. 1000000, 500k, 2M)\n", v);
		return 2;
	}
	if ((v = arg_get(argc, argv, w, "pps")) && parse_rate(v, &pps) < 0) {
		dprintf(2, "nicemu-udp: error: bad pps=%s (datagrams per second)\n", v);
		return 2;
	}
	if (!rate && !pps)
		rate = 1000000;
	if (rate && pps) {
		dprintf(2, "nicemu-udp: error: give rate= or pps=, not both\n");
		return 2;
	}
	if (rate && size == 0) {
		dprintf(2, "nicemu-udp: error: rate= needs size > 0 (use pps=)\n");
		return 2;
	}
	/* interval = num / div ns, kept exact with a remainder accumulator. */
	num = pps ? 1000000000u : (u64)size * 8u * 1000000000u;
	div = pps ? pps : rate;
	q = (u32)divmod_u64_u32(num, div, &rem);

	fd = socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	if (fd < 0) {
		dprintf(2, "nicemu-udp: error: socket: error %d\n", -fd);
		return 1;
	}
	set_sockaddr(&to, dst, port);
	if ((r = connect(fd, &to, sizeof(to))) < 0) {
		dprintf(2, "nicemu-udp: error: connect: error %d\n", -r);
		close(fd);
		return 1;
	}
	for (u32 i = 0; i < size; i++)
		buffer[i] = (u8)i;
	if (size >= UDP_HDR_BYTES)
		memcpy(buffer, "nmud", 4);
	printf("nicemu-udp: %s:%u, %u-byte datagrams, offered %u %s for %s s\n", fmt_ipv4(a, dst), port,
	       size, div, rate ? "bit/s" : "datagrams/s", fmt_fixed(s1, sizeof(s1), dur, 9, 3));
	tcdrain(1); /* our line out before the window opens */

	window_open();
	t0 = deadline = now_ns();
	end = t0 + dur;
	while (deadline < end) {
		u64 t = now_ns();
		u32 k = 0;
		if (t >= end)
			break; /* behind: the time is up all the same */
		if (t < deadline)
			sleep_until_ns(deadline), t = now_ns();
		if (iv.ns)
			k = interval_of(t - t0);
		if (size >= UDP_HDR_BYTES) {
			put_be32(buffer + 4, sent);
			put_be32(buffer + 8, k);
		}
		r = (int)write(fd, buffer, size);
		if (r < 0)
			errors++; /* ENOBUFS etc.: not sent */
		else {
			sent++, bytes += (u32)r;
			if (iv.ns)
				iv.datagrams[k]++, iv.bytes[k] += (u32)r;
		}
		deadline += q;
		acc += rem;
		if (acc >= div)
			acc -= div, deadline++;
	}
	t_stop = now_ns();
	/* Drain: until the driver has freed every datagram (at most 2 s). */
	for (int i = 0; i < 2000; i++) {
		if (ioctl(fd, SIOCOUTQ, &outq) < 0 || outq == 0)
			break;
		sleep_until_ns(now_ns() + 1000000u);
	}
	t1 = now_ns();
	window_close();
	if (outq) {
		dprintf(2, "nicemu-udp: error: %d bytes still queued in the socket 2 s after the run\n", outq);
		close(fd);
		return 1;
	}
	peer_report = size >= UDP_HDR_BYTES ? udp_receiver_report(fd, sent, &received) : -1;
	close(fd);

	/* Achieved: payload bits over the run time (to the end of the drain),
	 * which is the configured duration unless the sender fell behind. */
	elapsed = t1 - t0 > dur ? t1 - t0 : dur;
	{
		char s2[24], s3[24];
		printf("nicemu-udp: sent %u datagrams (%llu bytes) in %s s, %u send errors; "
		       "offered %llu bit/s, achieved %llu bit/s (%llu datagrams/s); drained in %s s\n",
		       sent, bytes, fmt_fixed(s2, sizeof(s2), elapsed, 9, 3), errors,
		       rate ? (u64)rate : (u64)div * size * 8u,
		       div_u64(bytes * 8u * 1000000000u, elapsed),
		       div_u64((u64)sent * 1000000000u, elapsed),
		       fmt_fixed(s3, sizeof(s3), t1 - t_stop, 9, 6));
	}
	if (iv.ns)
		print_intervals(w, 1, elapsed);
	print_interval_line(w, "total", 0, elapsed, bytes, 1, sent, peer_report == 0, received);
	return 0;
}

/* Text scanning for /proc and /sys files: the text after `needle` in `s`
 * (NULL if absent or s is NULL), and a decimal number at `s` (NULL if none). */
static const char *text_after(const char *s, const char *needle)
{
	size_t n = strlen(needle);
	for (; s && *s; s++)
		if (!strncmp(s, needle, n))
			return s + n;
	return NULL;
}

static const char *text_u64(const char *s, u64 *v)
{
	*v = 0;
	if (!s || *s < '0' || *s > '9')
		return NULL;
	while (*s >= '0' && *s <= '9')
		*v = *v * 10 + (u64)(*s++ - '0');
	return s;
}

/* One command, newline-terminated: pgctrl drops the last character. */
static int pktgen_write(const char *path, const char *cmd)
{
	char line[128];
	int fd = open(path, O_WRONLY, 0), r, n;
	if (fd < 0) {
		dprintf(2, "nicemu-pktgen: error: cannot open %s: error %d\n", path, -fd);
		return -1;
	}
	n = snprintf(line, sizeof(line), "%s\n", cmd);
	r = (int)write(fd, line, (size_t)n);
	close(fd);
	if (r < 0) {
		dprintf(2, "nicemu-pktgen: error: %s: '%s' refused: error %d\n", path, cmd, -r);
		return -1;
	}
	return 0;
}

static int parse_mac(const char *s, u8 mac[6])
{
	for (int i = 0; i < 6; i++) {
		u32 v = 0;
		for (int k = 0; k < 2; k++, s++) {
			u32 d = *s >= '0' && *s <= '9'   ? (u32)(*s - '0')
				: *s >= 'a' && *s <= 'f' ? (u32)(*s - 'a' + 10)
				: *s >= 'A' && *s <= 'F' ? (u32)(*s - 'A' + 10)
							 : 16;
			if (d > 15)
				return -1;
			v = v << 4 | d;
		}
		mac[i] = (u8)v;
		if (i < 5 && *s++ != ':')
			return -1;
	}
	return *s ? -1 : 0;
}

/* The hardware address of `dst` from /proc/net/arp, after one echo request
 * made the kernel resolve it. */
static int arp_lookup(u32 dst, u8 mac[6])
{
	static char buf[4096];
	struct sockaddr_in to;
	u8 icmp[8] = { 8, 0, 0, 0, 0x4e, 0x4d, 0, 1 };
	char a[16];
	u16 c = inet_csum(icmp, 8);
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (fd < 0)
		return -1;
	memcpy(icmp + 2, &c, 2);
	set_sockaddr(&to, dst, 0);
	sendto(fd, icmp, 8, 0, &to, sizeof(to));
	{
		struct pollfd pfd = { fd, POLLIN, 0 };
		if (poll(&pfd, 1, 1000) > 0)
			recvfrom(fd, buffer, 2048, 0, NULL, NULL);
	}
	close(fd);
	if (read_file("/proc/net/arp", buf, sizeof(buf)) < 0)
		return -1;
	fmt_ipv4(a, dst);
	for (char *p = buf; *p;) {
		char *e = p;
		while (*e && *e != '\n')
			e++;
		size_t al = strlen(a);
		if (!strncmp(p, a, al) && p[al] == ' ') {
			/* IP address, HW type, Flags, HW address, Mask, Device */
			char *q = p + al;
			for (int field = 0; field < 3; field++) {
				while (q < e && *q == ' ')
					q++;
				if (field < 2)
					while (q < e && *q != ' ')
						q++;
			}
			if (e - q >= 17) {
				char m[18];
				memcpy(m, q, 17);
				m[17] = 0;
				return parse_mac(m, mac) == 0 && (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) ? 0 : -1;
			}
		}
		p = *e ? e + 1 : e;
	}
	return -1;
}

static int run_pktgen(int argc, char **argv)
{
	static const char w[] = "pktgen";
	static const char thread[] = "/proc/net/pktgen/kpktgend_0", ctrl[] = "/proc/net/pktgen/pgctrl";
	static char dev[64], cmd[96], result[4096];
	const char *ifname = "eth0", *v;
	u32 dst, size, count, clone, port;
	u8 mac[6];
	char a[16];
	int r;

	if (arg_dst(argc, argv, w, &dst) < 0 || arg_u32(argc, argv, w, "size", 60, 60, 1514, &size) < 0 ||
	    arg_u32(argc, argv, w, "count", 10000, 1, 100000000, &count) < 0 ||
	    arg_u32(argc, argv, w, "clone_skb", 0, 0, 100000000, &clone) < 0 ||
	    arg_u32(argc, argv, w, "port", 9, 1, 65535, &port) < 0)
		return 2;
	if ((v = arg_get(argc, argv, w, "dst_mac")) && parse_mac(v, mac) < 0) {
		dprintf(2, "nicemu-pktgen: error: bad dst_mac=%s (e.g. 02:00:00:00:00:01)\n", v);
		return 2;
	}
	if (!v && arp_lookup(dst, mac) < 0) {
		dprintf(2, "nicemu-pktgen: error: no ARP entry for %s (give dst_mac=)\n", fmt_ipv4(a, dst));
		return 1;
	}
	snprintf(dev, sizeof(dev), "/proc/net/pktgen/%s", ifname);
	if (pktgen_write(thread, "rem_device_all") < 0)
		return 1;
	snprintf(cmd, sizeof(cmd), "add_device %s", ifname);
	if (pktgen_write(thread, cmd) < 0)
		return 1;
	{
		const char *fmts[] = { "count %u", "clone_skb %u", "pkt_size %u", "udp_dst_min %u",
				       "udp_dst_max %u" };
		u32 vals[] = { count, clone, size, port, port };
		for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
			snprintf(cmd, sizeof(cmd), fmts[i], vals[i]);
			if (pktgen_write(dev, cmd) < 0)
				return 1;
		}
	}
	snprintf(cmd, sizeof(cmd), "dst %s", fmt_ipv4(a, dst));
	if (pktgen_write(dev, "delay 0") < 0 || pktgen_write(dev, cmd) < 0)
		return 1;
	snprintf(cmd, sizeof(cmd), "dst_mac %02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
	if (pktgen_write(dev, cmd) < 0)
		return 1;
	printf("nicemu-pktgen: %s -> %s (%s), %u frames of %u bytes, clone_skb %u\n", ifname, a,
	       cmd + 8, count, size, clone);
	tcdrain(1); /* our line out before the window opens */

	window_open();
	r = pktgen_write(ctrl, "start");
	window_close();
	if (r < 0)
		return 1;

	if (read_file(dev, result, sizeof(result)) < 0) {
		dprintf(2, "nicemu-pktgen: error: cannot read %s\n", dev);
		return 1;
	}
	{
		/* pktgen's show_results (net/core/pktgen.c):
		 * "Result: OK: U(cC+dD) usec, N (Sbyte,Ffrags)\n  Ppps MMb/sec (Bbps) errors: E" */
		const char *res = text_after(result, "Result: "), *p;
		u64 usec = 0, sent = 0, sz = 0, pps = 0, mbps = 0, bps = 0, errors = 0, speed = 0;
		static char line[256];
		if (!res || strncmp(res, "OK: ", 4)) {
			dprintf(2, "nicemu-pktgen: error: pktgen says: %s\n", res ? res : "(no result)");
			return 1;
		}
		p = text_u64(text_after(res, "OK: "), &usec);
		p = text_u64(text_after(p, "usec, "), &sent);
		p = text_u64(text_after(p, "("), &sz);
		p = text_after(p, "\n");
		while (p && *p == ' ')
			p++;
		p = text_u64(p, &pps);
		p = text_u64(text_after(p, "pps "), &mbps);
		p = text_u64(text_after(p, "Mb/sec ("), &bps);
		p = text_u64(text_after(p, "errors: "), &errors);
		if (!p) {
			dprintf(2, "nicemu-pktgen: error: cannot parse pktgen's result: %s\n", res);
			return 1;
		}
		/* pktgen's own two lines, as one */
		strlcpy(line, res, sizeof(line));
		for (char *c = line; *c; c++)
			if (*c == '\n')
				*c = ' ';
		printf("nicemu-pktgen: pktgen: %s\n", line);
		printf("nicemu-pktgen: sent %llu frames of %llu bytes in %llu us: %llu pps, %llu Mb/s "
		       "(%llu bit/s), errors %llu\n",
		       sent, sz, usec, pps, mbps, bps, errors);
		/* The wire's limit where the driver reports its speed: a frame takes
		 * size + FCS + preamble/SFD + inter-frame gap byte times
		 * (IEEE 802.3 clause 4). */
		snprintf(line, sizeof(line), "/sys/class/net/%s/speed", ifname);
		if (read_file(line, result, sizeof(result)) >= 0 && text_u64(result, &speed) && speed &&
		    speed <= 100000)
			printf("nicemu-pktgen: wire limit %llu pps at %llu Mbit/s (%llu-byte frames on the wire)\n",
			       div_u64(speed * 1000000u, (sz + 4 + 8 + 12) * 8), speed, sz + 4 + 8 + 12);
		if (sent != count || errors)
			return 1;
	}
	return 0;
}

/* exec: fork + execve a program (argv[1]) with the remaining arguments, wait
 * for it, report its status. The window covers the child's whole life. */
static int run_exec(int argc, char **argv)
{
	static char *envp[] = { "PATH=/bin", "HOME=/root", "TERM=dumb", NULL };
	int pid, status = 0, r;
	u64 t0, t1;
	char secs[24];

	if (argc < 2 || argv[1][0] != '/') {
		dprintf(2, "nicemu-exec: error: usage: nicemu.run=exec,/path/prog[,arg...]\n");
		return 2;
	}
	window_open();
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		r = execve(argv[1], argv + 1, envp);
		dprintf(2, "nicemu-exec: error: execve %s: error %d\n", argv[1], -r);
		exit(127);
	}
	if (pid > 0)
		while ((r = wait4(pid, &status, 0, NULL)) == -EINTR)
			;
	t1 = now_ns();
	window_close();
	if (pid < 0) {
		dprintf(2, "nicemu-exec: error: fork: error %d\n", -pid);
		return 1;
	}
	fmt_fixed(secs, sizeof(secs), t1 - t0, 9, 3);
	if ((status & 0x7f) == 0) {
		printf("nicemu-exec: %s exited with status %d in %s s\n", argv[1], (status >> 8) & 0xff, secs);
		return (status >> 8) & 0xff;
	}
	printf("nicemu-exec: %s killed by signal %d in %s s\n", argv[1], status & 0x7f, secs);
	return 128 + (status & 0x7f);
}

/* csum: the brief's copy-and-checksum question (csum_partial_copy against
 * memcpy + csum_partial).  Each round copies one `size`-byte packet out of a
 * `span`-byte source area (the next packet each round, so a span larger than
 * the data cache makes the source come from memory, as a received packet
 * does) and computes its Internet checksum (RFC 1071): mode=fused reads each
 * word once, stores it and adds it; mode=separate copies with REP MOVSL (the
 * i386 memcpy), then reads the copy again to add it up.  Both print the same sum. */
static u16 csum_fold(u64 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)sum;
}

static u64 csum_add_tail(u64 sum, const u8 *p, u32 n)
{
	if (n & 2) {
		sum += (u32)p[0] | (u32)p[1] << 8;
		p += 2;
	}
	if (n & 1)
		sum += p[0];
	return sum;
}

static u16 csum_copy_fused(u8 *dst, const u8 *src, u32 len)
{
	const u32 *s = (const u32 *)src;
	u32 *d = (u32 *)dst;
	u64 sum = 0;
	for (u32 i = 0; i < len / 4; i++) {
		u32 w = s[i];
		d[i] = w;
		sum += w;
	}
	memcpy(dst + (len & ~3u), src + (len & ~3u), len & 3);
	return csum_fold(csum_add_tail(sum, src + (len & ~3u), len & 3));
}

/* A copy as the i386 kernel's memcpy does it: REP MOVSL, then the tail. */
static void copy_words(void *dst, const void *src, u32 len)
{
	u32 d0, d1, d2;
	__asm__ volatile("rep movsl"
			 : "=&c"(d0), "=&D"(d1), "=&S"(d2)
			 : "0"(len / 4), "1"(dst), "2"(src)
			 : "memory");
	memcpy((u8 *)dst + (len & ~3u), (const u8 *)src + (len & ~3u), len & 3);
}

static u16 csum_plain(const u8 *p, u32 len)
{
	const u32 *w = (const u32 *)p;
	u64 sum = 0;
	for (u32 i = 0; i < len / 4; i++)
		sum += w[i];
	return csum_fold(csum_add_tail(sum, p + (len & ~3u), len & 3));
}

/* impl=asm: the loops as Linux's i386 checksum routines run them (the
 * 486/Pentium version of arch/x86/lib/checksum_32.S: csum_partial and
 * csum_partial_copy_generic), written here in the same shape: 32 bytes an
 * iteration, a load and an ADC per dword (fused: two loads, two ADCs and
 * two stores per 8 bytes, interleaved for the Pentium's pairing), the carry
 * chain kept across the unrolled block by INC-free loop control (LEA and
 * DEC leave CF alone) and folded in at the end; then the remaining dwords
 * one at a time.  The sum is the one's complement sum of 32-bit words, as
 * the kernel's; csum_fold makes the 16-bit checksum (the same value as the
 * C loops' 64-bit accumulation folds to).  Lengths are whole dwords here. */
static u32 asm_csum(const u8 *p, u32 len)
{
	u32 sum = 0, blocks = len / 32, words = (len & 31) / 4, t;
	__asm__ volatile("testl %[n], %[n]\n\t" /* CF = 0 */
			 "jz 2f\n"
			 "1:\n\t"
			 ".irp off, 0, 4, 8, 12, 16, 20, 24, 28\n\t"
			 "movl \\off(%[p]), %[t]\n\t"
			 "adcl %[t], %[s]\n\t"
			 ".endr\n\t"
			 "leal 32(%[p]), %[p]\n\t"
			 "decl %[n]\n\t"
			 "jnz 1b\n\t"
			 "adcl $0, %[s]\n"
			 "2:\n\t"
			 "testl %[w], %[w]\n\t" /* CF = 0 */
			 "jz 4f\n"
			 "3:\n\t"
			 "adcl (%[p]), %[s]\n\t"
			 "leal 4(%[p]), %[p]\n\t"
			 "decl %[w]\n\t"
			 "jnz 3b\n\t"
			 "adcl $0, %[s]\n"
			 "4:"
			 : [s] "+r"(sum), [p] "+r"(p), [n] "+r"(blocks), [w] "+r"(words), [t] "=&r"(t)
			 :
			 : "memory", "cc");
	return sum;
}

static u32 asm_csum_copy(u8 *dst, const u8 *src, u32 len)
{
	u32 sum = 0, blocks = len / 32, words = (len & 31) / 4, a, b;
	__asm__ volatile("testl %[n], %[n]\n\t" /* CF = 0 */
			 "jz 2f\n"
			 "1:\n\t"
			 ".irp off, 0, 8, 16, 24\n\t"
			 "movl \\off(%[src]), %[a]\n\t"
			 "movl \\off+4(%[src]), %[b]\n\t"
			 "adcl %[a], %[s]\n\t"
			 "movl %[a], \\off(%[dst])\n\t"
			 "adcl %[b], %[s]\n\t"
			 "movl %[b], \\off+4(%[dst])\n\t"
			 ".endr\n\t"
			 "leal 32(%[src]), %[src]\n\t"
			 "leal 32(%[dst]), %[dst]\n\t"
			 "decl %[n]\n\t"
			 "jnz 1b\n\t"
			 "adcl $0, %[s]\n"
			 "2:\n\t"
			 "testl %[w], %[w]\n\t"
			 "jz 4f\n"
			 "3:\n\t"
			 "movl (%[src]), %[a]\n\t"
			 "adcl %[a], %[s]\n\t"
			 "movl %[a], (%[dst])\n\t"
			 "leal 4(%[src]), %[src]\n\t"
			 "leal 4(%[dst]), %[dst]\n\t"
			 "decl %[w]\n\t"
			 "jnz 3b\n\t"
			 "adcl $0, %[s]\n"
			 "4:"
			 : [s] "+r"(sum), [src] "+r"(src), [dst] "+r"(dst), [n] "+r"(blocks),
			   [w] "+r"(words), [a] "=&r"(a), [b] "=&r"(b)
			 :
			 : "memory", "cc");
	return sum;
}

/* size=imix: the packet lengths of the "simple IMIX", IP packets of 40, 576
 * and 1500 bytes in the ratio 7:4:1, in this fixed order (mean 354 bytes). */
static const u16 imix_lengths[12] = { 40, 576, 40, 40, 576, 40, 1500, 40, 576, 40, 40, 576 };

static int run_csum(int argc, char **argv)
{
	static const char w[] = "csum";
	static u8 src_area[256 * 1024], dst_pkt[2048];
	const char *mode = arg_get(argc, argv, w, "mode");
	const char *impl = arg_get(argc, argv, w, "impl");
	const char *dst_arg = arg_get(argc, argv, w, "dstcache");
	const char *size_arg = arg_get(argc, argv, w, "size");
	u32 size, count, span, off = 0, total = 0;
	int fused, imix = size_arg && !strcmp(size_arg, "imix"), in_asm = 1;
	u64 start;
	char t[24];

	if (!mode || !strcmp(mode, "fused")) {
		mode = "fused";
		fused = 1;
	} else if (!strcmp(mode, "separate"))
		fused = 0;
	else {
		dprintf(2, "nicemu-csum: error: mode=%s: use fused or separate\n", mode);
		return 2;
	}
	if (!dst_arg)
		dst_arg = "warm";
	else if (strcmp(dst_arg, "warm") && strcmp(dst_arg, "cold")) {
		dprintf(2, "nicemu-csum: error: dstcache=%s: use warm or cold\n", dst_arg);
		return 2;
	}
	if (!impl || !strcmp(impl, "asm"))
		impl = "asm";
	else if (!strcmp(impl, "c"))
		in_asm = 0;
	else {
		dprintf(2, "nicemu-csum: error: impl=%s: use asm or c\n", impl);
		return 2;
	}
	if (imix)
		size = 1500; /* the longest */
	else if (arg_u32(argc, argv, w, "size", 1500, 1, sizeof(dst_pkt), &size) < 0)
		return 2;
	if (arg_u32(argc, argv, w, "count", 1000, 1, 100000000, &count) < 0 ||
	    arg_u32(argc, argv, w, "span", 65536, 4096, sizeof(src_area), &span) < 0)
		return 2;
	for (u32 i = 0; i < span; i++)
		src_area[i] = (u8)(i * 7 + (i >> 8));
	size = (size + 3) & ~3u; /* whole words: the packets stay aligned */
	if (imix)
		printf("nicemu-csum: mode=%s impl=%s dstcache=%s, %u rounds of imix (40/576/1500 bytes, 7:4:1) from a %u-byte area\n",
		       mode, impl, dst_arg, count, span);
	else
		printf("nicemu-csum: mode=%s impl=%s dstcache=%s, %u rounds of %u bytes from a %u-byte area\n",
		       mode, impl, dst_arg, count, size, span);
	window_open();
	/* dstcache=warm: the destination has been read before, as a reused
	 * buffer has (a PIO driver reads the packet it sends out of it): its
	 * lines are in the caches that allocate on reads.  Read here, inside the
	 * window, so that the cost model's caches see it (they start empty when
	 * the window opens).  dstcache=cold: it has only been written (zeroed by
	 * the kernel), never read.  The loop itself is between user markers 2
	 * and 3 (the study times it from them). */
	if (!strcmp(dst_arg, "warm")) {
		volatile const u32 *d = (volatile const u32 *)dst_pkt;
		for (u32 i = 0; i < sizeof(dst_pkt) / 4; i++)
			(void)d[i];
	}
	window_mark(2);
	start = now_ns();
	for (u32 r = 0; r < count; r++) {
		const u8 *pkt = src_area + off;
		u16 c;
		if (imix)
			size = imix_lengths[r % 12];
		if (in_asm && fused) {
			c = csum_fold(asm_csum_copy(dst_pkt, pkt, size));
		} else if (in_asm) {
			copy_words(dst_pkt, pkt, size);
			c = csum_fold(asm_csum(dst_pkt, size));
		} else if (fused) {
			c = csum_copy_fused(dst_pkt, pkt, size);
		} else {
			copy_words(dst_pkt, pkt, size);
			c = csum_plain(dst_pkt, size);
		}
		total += c;
		off += size;
		if (off + (imix ? 1500u : size) > span) /* room for the longest next packet */
			off = 0;
	}
	window_mark(3);
	window_close();
	printf("nicemu-csum: mode=%s sum %08x in %s s\n", mode, total,
	       fmt_fixed(t, sizeof(t), now_ns() - start, 9, 6));
	return 0;
}

/* ---- fpbench ----------------------------------------------------------------
 * A Whetstone-style floating-point loop (the modules of Curnow and Wichmann's
 * 1976 benchmark, written here anew): simple variables, array elements,
 * calls with FP arguments, trigonometry, sqrt/exp/log, each pass `loops`
 * times inside the measurement window.  Plain C doubles compiled for the
 * 486 give x87 code; the transcendentals are the x87's own instructions
 * (inline asm: no libm here).  On a CPU without an FPU (the 486SX) the
 * kernel's math emulator runs it.  Prints a checksum of the results: the
 * same on every model with an x87 (its results are exact to the bit). */

static double x87_sin(double x)
{
	__asm__("fsin" : "+t"(x));
	return x;
}
static double x87_cos(double x)
{
	__asm__("fcos" : "+t"(x));
	return x;
}
static double x87_atan(double x) /* atan(x / 1) */
{
	double r;
	__asm__("fld1\n\tfpatan" : "=t"(r) : "0"(x));
	return r;
}
static double x87_sqrt(double x)
{
	__asm__("fsqrt" : "+t"(x));
	return x;
}
static double x87_log(double x) /* ln x = ln 2 * log2 x */
{
	double r;
	__asm__("fldln2\n\tfxch\n\tfyl2x" : "=t"(r) : "0"(x));
	return r;
}
static double x87_exp(double x) /* e^x = 2^(x log2 e): 2^frac by F2XM1, the rest by FSCALE */
{
	double r;
	__asm__("fldl2e\n\t"
		"fmulp\n\t"        /* y = x log2 e */
		"fld %%st(0)\n\t"
		"frndint\n\t"      /* n */
		"fsub %%st(0), %%st(1)\n\t" /* y - n, n */
		"fxch\n\t"
		"f2xm1\n\t"
		"fld1\n\t"
		"faddp\n\t"        /* 2^(y - n), n */
		"fscale\n\t"
		"fstp %%st(1)"
		: "=t"(r)
		: "0"(x));
	return r;
}

static volatile double fp_e1[4];

static void fp_pa(volatile double *e, double t, double t2)
{
	for (int j = 0; j < 6; j++) {
		e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
		e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
		e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
		e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
	}
}

static void fp_p3(double x, double y, double *z, double t, double t2)
{
	x = t * (x + y);
	y = t * (x + y);
	*z = (x + y) / t2;
}

static u32 fp_bits(double v) /* a result as an integer for the checksum */
{
	if (v < 0)
		v = -v;
	while (v >= 1e6)
		v /= 1e3;
	return (u32)(v * 1e3);
}

static int run_fpbench(int argc, char **argv)
{
	static const char w[] = "fpbench";
	u32 loops, sum = 0;
	char t_s[24];
	if (arg_u32(argc, argv, w, "loops", 10, 1, 1000000, &loops) < 0)
		return 2;
	const double t = 0.499975, t1 = 0.50025, t2 = 2.0;
	printf("nicemu-fpbench: %u loops of the Whetstone-style modules\n", loops);
	window_open();
	u64 start = now_ns();
	double x1 = 1.0, x2 = -1.0, x3 = -1.0, x4 = -1.0, x, y, z = 0;
	for (u32 l = 0; l < loops; l++) {
		/* simple variables */
		for (int i = 0; i < 120; i++) {
			x1 = (x1 + x2 + x3 - x4) * t;
			x2 = (x1 + x2 - x3 + x4) * t;
			x3 = (x1 - x2 + x3 + x4) * t;
			x4 = (-x1 + x2 + x3 + x4) * t;
		}
		/* array elements, and a procedure on the array */
		fp_e1[0] = 1.0, fp_e1[1] = fp_e1[2] = fp_e1[3] = -1.0;
		for (int i = 0; i < 140; i++) {
			fp_e1[0] = (fp_e1[0] + fp_e1[1] + fp_e1[2] - fp_e1[3]) * t;
			fp_e1[1] = (fp_e1[0] + fp_e1[1] - fp_e1[2] + fp_e1[3]) * t;
			fp_e1[2] = (fp_e1[0] - fp_e1[1] + fp_e1[2] + fp_e1[3]) * t;
			fp_e1[3] = (-fp_e1[0] + fp_e1[1] + fp_e1[2] + fp_e1[3]) * t;
		}
		for (int i = 0; i < 12; i++)
			fp_pa(fp_e1, t, t2);
		/* trigonometry */
		x = y = 0.5;
		for (int i = 0; i < 32; i++) {
			x = t * x87_atan(t2 * x87_sin(x) * x87_cos(x) /
					 (x87_cos(x + y) + x87_cos(x - y) - 1.0));
			y = t * x87_atan(t2 * x87_sin(y) * x87_cos(y) /
					 (x87_cos(x + y) + x87_cos(x - y) - 1.0));
		}
		/* procedure calls */
		x = y = z = 1.0;
		for (int i = 0; i < 100; i++)
			fp_p3(x, y, &z, t, t2);
		/* standard functions */
		x = 0.75;
		for (int i = 0; i < 30; i++)
			x = x87_sqrt(x87_exp(x87_log(x) / t1));
		sum = sum * 31 + fp_bits(x1) + fp_bits(x4) + fp_bits(fp_e1[3]) + fp_bits(y) + fp_bits(z) +
		      fp_bits(x);
	}
	u64 ns = now_ns() - start;
	window_close();
	printf("nicemu-fpbench: checksum %08x in %s s\n", sum, fmt_fixed(t_s, sizeof(t_s), ns, 9, 6));
	return 0;
}

/* ---- timebase --------------------------------------------------------------
 * For `seconds=` of CLOCK_MONOTONIC time inside the window the program spins
 * in user space (interrupts on), then prints what the guest's clocks saw
 * between the two ends: timer interrupts (IRQ 0 in /proc/interrupts: the
 * jiffies of this periodic-tick kernel), the PIT (channel 0's latched count
 * with those ticks), CLOCK_MONOTONIC, and the TSC where the CPU has one.
 * The emulator's window gives the virtual time they should all match.
 * `kmsg=N` writes N lines to /dev/kmsg inside the window at a level the
 * console prints even with `quiet`: kernel console output while measuring
 * (the kernel passes at most 10 such lines per 5 s: printk.devkmsg). */

#define PIT_HZ 1193182u

static u32 irq0_count(void)
{
	static char buf[2048];
	if (read_file("/proc/interrupts", buf, sizeof(buf)) < 0)
		return 0;
	const char *p = buf;
	while (*p) {
		while (*p == ' ')
			p++;
		if (p[0] == '0' && p[1] == ':') {
			u32 v = 0;
			p += 2;
			while (*p == ' ')
				p++;
			while (*p >= '0' && *p <= '9')
				v = v * 10 + (u32)(*p++ - '0');
			return v;
		}
		while (*p && *p != '\n')
			p++;
		if (*p)
			p++;
	}
	return 0;
}

/* Channel 0's count and the tick count it belongs to, re-read if a tick
 * came in between (the tick's handler may read the PIT itself; Linux 6.1
 * gives user space no CLI to keep it out).  Reading /proc/interrupts takes
 * the kernel a while (milliseconds on a 386), so user markers bracket the
 * sample for the emulator: `mark` at each attempt, `mark + 1` after the
 * one that was kept. */
static int pit_sample(u32 *ticks, u32 *count, u32 mark)
{
	u32 a = 0, lo, hi;
	/* On a slow CPU reading /proc/interrupts twice can take longer than a
	 * tick: give up after a few tries and say so (the jiffies figure is
	 * still good; the PIT's sub-tick position is not). */
	for (int tries = 0; tries < 8; tries++) {
		window_mark(mark);
		a = irq0_count();
		outb(0x00, 0x43); /* latch channel 0 */
		lo = inb(0x40);
		hi = inb(0x40);
		u32 b = irq0_count();
		if (a == b) {
			window_mark(mark + 1);
			*ticks = a;
			*count = lo | hi << 8;
			return 0;
		}
	}
	window_mark(mark + 1);
	*ticks = a;
	*count = lo | hi << 8;
	return -1;
}

static __attribute__((noinline)) u64 timebase_rdtsc(void)
{
	u32 lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (u64)hi << 32 | lo;
}

static int cpu_has_tsc(void)
{
	static char buf[2048];
	if (read_file("/proc/cpuinfo", buf, sizeof(buf)) < 0)
		return 0;
	for (const char *p = buf; *p; p++)
		if (!strncmp(p, " tsc", 4) && (p[4] == ' ' || p[4] == '\n'))
			return 1;
	return 0;
}

static int run_timebase(int argc, char **argv)
{
	static const char w[] = "timebase";
	u64 seconds_ns, t0, t1, tsc0 = 0, tsc1 = 0;
	u32 kmsg, latch, ticks0, ticks1, c0, c1;
	char a[24], b[24], line[96];
	int tsc = cpu_has_tsc(), fd = -1;

	if (arg_duration(argc, argv, w, "seconds", 5000000000ull, &seconds_ns) < 0 ||
	    arg_u32(argc, argv, w, "kmsg", 0, 0, 1000, &kmsg) < 0)
		return 2;
	if (ioperm(0x40, 4, 1) < 0) {
		dprintf(2, "nicemu-timebase: error: ioperm(0x40) failed\n");
		return 1;
	}
	if (kmsg && (fd = open("/dev/kmsg", O_WRONLY, 0)) < 0) {
		dprintf(2, "nicemu-timebase: error: cannot open /dev/kmsg\n");
		return 1;
	}
	/* The interval the kernel programmed (its LATCH: reload value). */
	latch = (PIT_HZ + 125) / 250;
	printf("nicemu-timebase: %s s, tsc %s, kmsg lines %u\n",
	       fmt_fixed(a, sizeof(a), seconds_ns, 9, 3), tsc ? "yes" : "no", kmsg);
	tcdrain(1); /* our own line out before the window opens */
	window_open();
	int ambiguous = pit_sample(&ticks0, &c0, 0x10) < 0;
	window_mark(2); /* the emulator's time of the interval's start... */
	t0 = now_ns();
	if (tsc)
		tsc0 = timebase_rdtsc();
	for (u32 k = 0; k < kmsg; k++) {
		int n = snprintf(line, sizeof(line),
				 "<2>nicemu-timebase: console line %u inside the measurement window\n", k);
		write_all(fd, line, (size_t)n);
	}
	while (now_ns() - t0 < seconds_ns)
		;
	if (tsc)
		tsc1 = timebase_rdtsc();
	t1 = now_ns();
	window_mark(3); /* ...and of its end */
	ambiguous |= pit_sample(&ticks1, &c1, 0x12) < 0;
	window_close();
	if (fd >= 0)
		close(fd);
	{
		/* PIT clocks: whole ticks, plus how far the down-counter moved. */
		u64 pit_clocks = (u64)(ticks1 - ticks0) * latch + c0 - c1;
		u32 rem;
		u64 pit_ns = divmod_u64_u32(pit_clocks * 1000000ull, PIT_HZ, &rem) * 1000ull;
		printf("nicemu-timebase: monotonic_ns=%llu ticks=%u tick_ns=4000000 pit_ns=%llu tsc=%llu%s\n",
		       (unsigned long long)(t1 - t0), ticks1 - ticks0, (unsigned long long)pit_ns,
		       (unsigned long long)(tsc1 - tsc0), ambiguous ? " pit_ambiguous" : "");
		printf("nicemu-timebase: monotonic %s s, jiffies %s s, pit %s s\n",
		       fmt_fixed(a, sizeof(a), t1 - t0, 9, 6),
		       fmt_fixed(b, sizeof(b), (u64)(ticks1 - ticks0) * 4000000ull, 9, 6),
		       fmt_fixed(line, sizeof(line), pit_ns, 9, 6));
	}
	return 0;
}

struct workload {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *keys; /* space-separated; NULL: positional arguments */
	const char *help;
};

static const struct workload workloads[] = {
	{ "boot", run_boot, "", "print a line and exit 0 (boot test)" },
	{ "ping", run_ping, "dst count size interval timeout",
	  "ICMP echo: dst=, count=10, size=56, interval=1s, timeout=1s" },
	{ "ttcp", run_ttcp, "dst port buflen nbuf nodelay interval",
	  "TCP sender: dst=, port=5001, buflen=1024, nbuf=2000, nodelay=0, interval=0 (per-interval lines)" },
	{ "udp", run_udp, "dst port size rate pps seconds interval",
	  "UDP at a fixed rate for a time: dst=, port=9, size=512, rate=1000000 (payload bit/s) or pps=N, "
	  "seconds=1, interval=0 (per-interval lines)" },
	{ "pktgen", run_pktgen, "dst dst_mac size count clone_skb port",
	  "kernel packet generator on eth0: dst=, size=60 (frame without FCS), count=10000, clone_skb=0, port=9" },
	{ "csum", run_csum, "mode impl dstcache size count span",
	  "copy and checksum: mode=fused|separate, size=1500 (or imix), count=1000, span=65536" },
	{ "fpbench", run_fpbench, "loops",
	  "a Whetstone-style floating-point loop: loops=10 (x87 code; the kernel emulates it without an FPU)" },
	{ "timebase", run_timebase, "seconds kmsg",
	  "the guest's clocks over a busy window: seconds=5, kmsg=0 (console lines inside it)" },
	{ "exec", run_exec, NULL, "exec,/path/prog[,arg...]: run a program, report its status" },
};

#define N_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

static const struct workload *find_workload(const char *name, size_t len)
{
	for (unsigned i = 0; i < N_WORKLOADS; i++)
		if (strlen(workloads[i].name) == len && !strncmp(workloads[i].name, name, len))
			return &workloads[i];
	return NULL;
}

static int has_key(const char *keys, const char *key, size_t len)
{
	const char *p = keys;
	while (*p) {
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		if ((size_t)(e - p) == len && !strncmp(p, key, len))
			return 1;
		p = *e ? e + 1 : e;
	}
	return 0;
}

static void list_workloads(void)
{
	dprintf(2, "%s: workloads (nicemu.run=W1[+W2...][,key=value...]):\n", tag);
	for (unsigned i = 0; i < N_WORKLOADS; i++)
		dprintf(2, "  %-5s %s\n", workloads[i].name, workloads[i].help);
}

/* Runs "w1+w2+..." with the shared arguments; the first non-zero status
 * stops the sequence. */
static int run_sequence(int argc, char **argv)
{
	const struct workload *seq[MAX_SEQ];
	int n = 0;
	char *p = argv[0];

	while (*p) {
		char *e = p;
		while (*e && *e != '+')
			e++;
		if (n == MAX_SEQ || !(seq[n] = find_workload(p, (size_t)(e - p)))) {
			char name[32];
			strlcpy(name, p, (size_t)(e - p) + 1 < sizeof(name) ? (size_t)(e - p) + 1 : sizeof(name));
			dprintf(2, "%s: error: unknown workload '%s'\n", tag, name);
			list_workloads();
			return 1;
		}
		n++;
		p = *e ? e + 1 : e;
	}
	if (n == 0) {
		dprintf(2, "%s: error: empty nicemu.run=\n", tag);
		return 1;
	}
	/* Positional arguments only for a lone exec; keys must be known. */
	for (int i = 0; i < n; i++)
		if (!seq[i]->keys && n > 1) {
			dprintf(2, "%s: error: %s cannot be part of a sequence\n", tag, seq[i]->name);
			return 1;
		}
	if (seq[0]->keys)
		for (int i = 1; i < argc; i++) {
			const char *k = argv[i], *eq = strchr(k, '=');
			int ok = 0;
			if (!eq) {
				dprintf(2, "%s: error: argument '%s' is not key=value\n", tag, k);
				return 1;
			}
			for (int j = 0; j < n && !ok; j++) {
				size_t wl = strlen(seq[j]->name);
				if (!strncmp(k, seq[j]->name, wl) && k[wl] == '.')
					ok = has_key(seq[j]->keys, k + wl + 1, (size_t)(eq - k - wl - 1));
				else
					ok = has_key(seq[j]->keys, k, (size_t)(eq - k));
			}
			if (!ok) {
				dprintf(2, "%s: error: unknown argument '%s'\n", tag, k);
				list_workloads();
				return 1;
			}
		}
	for (int i = 0; i < n; i++) {
		int status = seq[i]->run(argc, argv);
		if (status)
			return status;
	}
	return 0;
}

/* ---- boot plumbing ------------------------------------------------------- */

static void mount_fs(const char *type, const char *dir)
{
	int r;
	mkdir(dir, 0755); /* may exist already: fine */
	r = mount(type, dir, type, 0, NULL);
	if (r < 0 && r != -EBUSY) /* EBUSY: already mounted (DEVTMPFS_MOUNT) */
		dprintf(2, "%s: warning: mount %s on %s: error %d\n", tag, type, dir, -r);
}

/* The kernel opens /dev/console as fds 0-2 for init if the initramfs has the
 * node; if that failed, try again now that devtmpfs is mounted. */
static void ensure_console(void)
{
	int fd;
	if (write(1, "", 0) != -EBADF)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY, 0);
	if (fd < 0)
		return; /* nowhere to print; the exit port still works */
	for (int i = 0; i < 3; i++)
		if (fd != i)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

/* Finds `KEY=VALUE` (key given with its '=') in the command line, split into
 * NUL-terminated tokens by split_cmdline; the last one wins, as the kernel
 * does for its own parameters. */
static char *cmdline_tok[256];
static int cmdline_ntok;

static void split_cmdline(char *p)
{
	while (*p && cmdline_ntok < 256) {
		while (*p == ' ' || *p == '\n' || *p == '\t')
			p++;
		if (!*p)
			break;
		cmdline_tok[cmdline_ntok++] = p;
		while (*p && *p != ' ' && *p != '\n' && *p != '\t')
			p++;
		if (*p)
			*p++ = 0;
	}
}

static char *find_param(const char *key)
{
	char *found = NULL;
	size_t n = strlen(key);
	for (int i = 0; i < cmdline_ntok; i++)
		if (!strncmp(cmdline_tok[i], key, n))
			found = cmdline_tok[i] + n;
	return found;
}

/* Splits "name,a,b" in place into argv; returns argc. */
static int split_args(char *s, char **argv, int max)
{
	int argc = 0;
	argv[argc++] = s;
	for (; *s && argc < max; s++)
		if (*s == ',') {
			*s = 0;
			argv[argc++] = s + 1;
		}
	argv[argc] = NULL;
	return argc;
}

/* nicemu.insmod=/path.ko[,param=value...]: loads a kernel module (a variant
 * image's board glue, guest-images/board/) before the network is configured.
 * Repeatable; the modules load in command-line order. */
static int load_modules(void)
{
	static const char key[] = "nicemu.insmod=";
	for (int i = 0; i < cmdline_ntok; i++) {
		char spec[512], params[512] = "", *argv[MAX_ARGS + 1];
		int argc, fd, r;
		size_t n = 0;
		if (strncmp(cmdline_tok[i], key, sizeof(key) - 1))
			continue;
		strlcpy(spec, cmdline_tok[i] + sizeof(key) - 1, sizeof(spec));
		argc = split_args(spec, argv, MAX_ARGS);
		for (int a = 1; a < argc && n + 1 < sizeof(params); a++)
			n += (size_t)snprintf(params + n, sizeof(params) - n, "%s%s", a > 1 ? " " : "", argv[a]);
		tcdrain(1); /* our lines out before the kernel's probe messages */
		fd = open(argv[0], O_RDONLY, 0);
		if (fd < 0) {
			dprintf(2, "%s: error: nicemu.insmod: cannot open %s: error %d\n", tag, argv[0], -fd);
			return -1;
		}
		r = finit_module(fd, params, 0);
		close(fd);
		if (r < 0) {
			dprintf(2, "%s: error: nicemu.insmod: loading %s: error %d\n", tag, argv[0], -r);
			return -1;
		}
		printf("%s: loaded %s%s%s\n", tag, argv[0], params[0] ? " " : "", params);
	}
	return 0;
}

/* nicemu.cat=/path[,/path...] (repeatable): after the workloads, prints each
 * file's text as "nicemu-cat: /path: TEXT" (newlines as " | "), e.g. a
 * module's load address (/sys/module/NAME/sections/.text) or the figures an
 * instrumented driver keeps in /sys/module/NAME/parameters/. An unreadable
 * file prints its error and does not change the exit status. */
static void show_files(void)
{
	static const char key[] = "nicemu.cat=";
	for (int i = 0; i < cmdline_ntok; i++) {
		char spec[512], text[1024], line[3 * 1024], *argv[MAX_ARGS + 1];
		int argc, n;
		if (strncmp(cmdline_tok[i], key, sizeof(key) - 1))
			continue;
		strlcpy(spec, cmdline_tok[i] + sizeof(key) - 1, sizeof(spec));
		argc = split_args(spec, argv, MAX_ARGS);
		for (int a = 0; a < argc; a++) {
			n = read_file(argv[a], text, sizeof(text));
			if (n < 0) {
				printf("nicemu-cat: %s: error %d\n", argv[a], -n);
				continue;
			}
			while (n > 0 && text[n - 1] == '\n')
				text[--n] = 0;
			size_t o = 0;
			for (int k = 0; k < n && o + 4 < sizeof(line); k++) {
				if (text[k] == '\n') {
					memcpy(line + o, " | ", 3);
					o += 3;
				} else {
					line[o++] = text[k];
				}
			}
			line[o] = 0;
			printf("nicemu-cat: %s: %s\n", argv[a], line);
		}
	}
}

/* nicemu.ip=ADDR/PREFIX [nicemu.gw=ADDR] [nicemu.if=eth0]. */
static int configure_net(void)
{
	char *ip = find_param("nicemu.ip="), *gw = find_param("nicemu.gw="),
	     *ifname = find_param("nicemu.if=");
	u32 addr, prefix, gaddr = 0;
	int r;
	if (!ip)
		return 0;
	if (!ifname || !*ifname)
		ifname = "eth0";
	if (parse_ipv4_prefix(ip, &addr, &prefix) < 0) {
		dprintf(2, "%s: error: bad nicemu.ip=%s (e.g. 10.0.0.2/24)\n", tag, ip);
		return -1;
	}
	if (gw && parse_ipv4(gw, &gaddr) < 0) {
		dprintf(2, "%s: error: bad nicemu.gw=%s (e.g. 10.0.0.1)\n", tag, gw);
		return -1;
	}
	r = ifconfig(ifname, addr, prefix, gaddr);
	if (r < 0) {
		dprintf(2, "%s: error: configuring %s: error %d%s\n", tag, ifname, -r,
			r == -19 ? " (no such device: did the driver probe? ether=IRQ,IO,eth0)" : "");
		return -1;
	}
	return 0;
}

/* Reports `status` to the emulator and stops the machine. Never returns:
 * PID 1 exiting would panic the kernel. */
static __attribute__((noreturn)) void finish(int status)
{
	int r;
	printf("%s: exit %d\n", tag, status);
	/* The exit port ends the run at once: let the console finish first. */
	tcdrain(1);
	r = ioperm(EXIT_PORT, 4, 1);
	if (r < 0)
		r = iopl(3);
	if (r == 0)
		outb((u8)status, EXIT_PORT); /* nicemu stops here with `status` */
	else
		dprintf(2, "%s: no I/O port access (error %d)\n", tag, -r);
	/* Not under nicemu/QEMU: power off, or halt forever. */
	r = reboot(LINUX_REBOOT_CMD_POWER_OFF);
	dprintf(2, "%s: power off failed (error %d); halting\n", tag, -r);
	for (;;)
		pause();
}

int main(int argc, char **argv, char **envp)
{
	static char cmdline[4096], mailbox[4096];
	struct utsname u;
	char *run, *wargv[MAX_ARGS + 1];
	int wargc;
	(void)argc;
	(void)argv;
	(void)envp;

	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	mount_fs("devtmpfs", "/dev");
	ensure_console();

	if (uname(&u) < 0)
		strlcpy(u.release, "?", sizeof(u.release)), strlcpy(u.sysname, "Linux", sizeof(u.sysname));
	printf("%s: booted %s %s\n", tag, u.sysname, u.release);

	if (read_file("/proc/cmdline", cmdline, sizeof(cmdline)) < 0)
		cmdline[0] = 0;
	split_cmdline(cmdline);

	/* Port access for the measurement window now, so the ioperm() system
	 * call does not fall inside the first window. */
	window_init();
	if (load_modules() < 0 || configure_net() < 0)
		finish(1);

	/* The snapshot point (docs/snapshots.md): booted, the network up, the
	 * workload not yet chosen.  nicemu --save-state saves the machine here;
	 * a run restored from it continues here, and the mailbox says what to
	 * run (the command line's nicemu.run= when it is empty). */
	snapshot_point();
	if (mailbox_read(mailbox, sizeof(mailbox)) > 0) {
		run = mailbox;
		printf("%s: workload from the mailbox: %s\n", tag, run);
	} else {
		run = find_param("nicemu.run=");
	}
	if (!run || !*run)
		run = "boot";
	wargc = split_args(run, wargv, MAX_ARGS);
	{
		int status = run_sequence(wargc, wargv);
		show_files();
		finish(status);
	}
}
